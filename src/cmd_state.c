/*
 * cmd_state.c - `kiln state list|show|rm|pull|push`: read and edit the
 * recorded state of a workspace. Every edit is a commit, made under the
 * workspace lock, on top of the head it read.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "cmd_store.h"
#include "cmds.h"
#include "crypt.h"
#include "state.h"
#include "jsonw.h"
#include "takeover_op.h"

enum {
	OPT_JSON = 1,
	OPT_SHOW_SENSITIVE,
	OPT_ALLOW_PLAINTEXT,
	OPT_SPEC,
	OPT_FROM,
};

static const struct cli_option options[] = {
    CMD_OPT_STATE,
    CMD_OPT_WORKSPACE,
    CMD_OPT_LOCK_TIMEOUT,
    {"json", 0, false, OPT_JSON, NULL, "list and show: print JSON"},
    {"show-sensitive", 0, false, OPT_SHOW_SENSITIVE, NULL,
     "show: decrypt sensitive values (needs KILN_STATE_KEY)"},
    {"allow-plaintext-secrets", 0, false, OPT_ALLOW_PLAINTEXT, NULL,
     "push: store sensitive values unencrypted when no key is set"},
    {"spec", 0, true, OPT_SPEC, "FILE", "takeover: the spec of the cluster (default kiln.yaml)"},
    {"from", 0, true, OPT_FROM, "LINEAGE",
     "takeover: only what this state lineage owns (none: made before lineages)"},
};

static const char *const subs[] = {"list", "show", "rm",       "pull",
				   "push", "rekey", "takeover", NULL};

const struct cmd_info cmd_state_info = {
    .name = "state",
    .usage = "list | show ADDRESS | rm ADDRESS... | pull | push FILE | rekey OLD_KEY_FILE | "
	     "takeover [ADDRESS...]  [OPTIONS]",
    .summary = "list, show, remove, pull and push recorded resources",
    .description = "Read and edit the state recorded for a workspace (a branch of the state\n"
		   "repository holding state.json).\n\n"
		   "  list            the addresses of the recorded resources\n"
		   "  show ADDRESS    one resource; sensitive values as (sensitive)\n"
		   "  rm ADDRESS...   forget resources (the cloud is not touched); one commit\n"
		   "  pull            print state.json as recorded\n"
		   "  push FILE       record FILE as the new state: same lineage and cluster,\n"
		   "                  a higher serial; sensitive values are encrypted\n"
		   "  rekey OLD_KEY_FILE\n"
		   "                  reseal the sensitive values sealed with the key in\n"
		   "                  OLD_KEY_FILE under the state key kiln finds now\n"
		   "                  (KILN_STATE_KEY, KILN_STATE_KEY_FILE, or kiln init's); one\n"
		   "                  commit. Earlier commits keep the old key's envelopes\n"
		   "  takeover [ADDRESS...]\n"
		   "                  move into this workspace's state the resources of its\n"
		   "                  cluster and workspace that another state owns (another\n"
		   "                  lineage), or that no state records and carry no lineage:\n"
		   "                  each is retagged with this state's lineage and recorded;\n"
		   "                  one commit with a Kiln-Takeover trailer per resource.\n"
		   "                  --spec FILE names the cluster's spec, --from LINEAGE\n"
		   "                  takes only that state's (none: the untagged ones)\n\n"
		   "rm, push, rekey and takeover take the workspace lock and commit on top of the head\n"
		   "they read. Every resource kiln creates carries its state's lineage\n"
		   "(kiln:lineage); plan, apply and destroy never change, adopt or delete what\n"
		   "carries another's: takeover is the one way to move it.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-state(1), kiln-log(1), kiln-workspace(1)",
    .subcommands = subs,
};

struct state_cmd {
	struct cli *cli;
	struct store_flags flags;
	bool json;
	bool show_sensitive;
	bool allow_plaintext;
	struct store *store;
	struct workspace *ws;
};

static void print_json(json_t *v)
{
	jsonw_dumpf(v, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	fputc('\n', stdout);
}

static int state_list(struct state_cmd *c)
{
	struct kiln_error err = {0};
	json_t *arr;
	const char *addr;
	const json_t *r;

	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	arr = json_array();
	/* jansson iterates in insertion order; state.json is written with sorted keys. */
	state_foreach_resource(c->ws->state, addr, r)
	{
		if (c->json)
			json_array_append_new(arr, json_pack("{s:s, s:s, s:s?}", "address", addr,
							     "type", state_resource_type(r), "id",
							     state_resource_id(r)));
		else
			printf("%s\n", addr);
	}
	if (c->json)
		print_json(arr);
	json_decref(arr);
	return KILN_EXIT_OK;
}

static void no_such_resource(struct state_cmd *c, const char *addr)
{
	size_t n = state_resource_count(c->ws->state), i = 0;
	const char **names = xcalloc(n + 1, sizeof(*names)), *near, *k;
	const json_t *v;

	state_foreach_resource(c->ws->state, k, v) names[i++] = k;
	near = str_closest(addr, names, n);
	if (near)
		cli_error(c->cli, NULL, "no resource '%s' in workspace '%s'; did you mean '%s'?",
			  addr, c->ws->name, near);
	else
		cli_error(c->cli, "`kiln state list` shows what is recorded",
			  "no resource '%s' in workspace '%s'", addr, c->ws->name);
	free(names);
}

static int state_show(struct state_cmd *c, const char *addr)
{
	struct kiln_error err = {0};
	struct crypt_key key;
	int have_key = 0;
	json_t *view;
	int ret = KILN_EXIT_ERROR;

	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	if (!state_resource(c->ws->state, addr)) {
		no_such_resource(c, addr);
		return KILN_EXIT_ERROR;
	}
	if (c->show_sensitive) {
		have_key = crypt_key_load(&key, &err);
		if (have_key < 0) {
			cmd_report(c->cli, &err);
			return KILN_EXIT_ERROR;
		}
		if (have_key == 0) {
			cli_error(c->cli, "set KILN_STATE_KEY or KILN_STATE_KEY_FILE",
				  "--show-sensitive needs the state key");
			return KILN_EXIT_ERROR;
		}
	}
	view = state_resource_view(c->ws->state, addr, have_key ? &key : NULL, c->show_sensitive,
				   &err);
	if (have_key)
		crypt_key_wipe(&key);
	if (!view) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	if (c->json) {
		print_json(view);
	} else {
		const char *k;
		json_t *v;

		printf("# %s\n", addr);
		json_object_foreach(view, k, v)
		{
			char *s =
			    jsonw_dumps(v, JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_COMPACT, NULL);

			printf("%-10s %s\n", k, s);
			free(s);
		}
	}
	json_decref(view);
	ret = KILN_EXIT_OK;
	return ret;
}

static int state_pull(struct state_cmd *c)
{
	struct kiln_error err = {0};
	char *text;

	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	text = state_canonical(c->ws->state);
	fputs(text, stdout);
	free(text);
	return KILN_EXIT_OK;
}

static int lock_workspace(struct state_cmd *c, const char *operation)
{
	struct lock_options lo = {operation, c->flags.lock_timeout};
	struct kiln_error err = {0};

	if (workspace_lock(c->ws, &lo, &err) < 0) {
		cmd_report(c->cli, &err);
		return -1;
	}
	return 0;
}

static int state_rm(struct state_cmd *c, char **addrs, int n)
{
	struct kiln_error err = {0};
	struct strbuf summary = {0};
	json_t *next;
	char *label;
	int i, ret = KILN_EXIT_ERROR;

	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	if (lock_workspace(c, "state rm") < 0)
		return KILN_EXIT_ERROR;
	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	next = json_deep_copy(c->ws->state);
	for (i = 0; i < n; i++) {
		if (!state_resource(next, addrs[i])) {
			no_such_resource(c, addrs[i]);
			goto out;
		}
		json_object_del(state_resources(next), addrs[i]);
	}
	label = workspace_label(c->ws, next);
	if (n > 1)
		sb_addf(&summary, "state rm: %s (+%d more) %s", addrs[0], n - 1, label);
	else
		sb_addf(&summary, "state rm: %s %s", addrs[0], label);
	free(label);
	{
		struct strbuf trailer = {0};
		const char *extra[1];

		sb_adds(&trailer, "Kiln-Removed:");
		for (i = 0; i < n; i++)
			sb_addf(&trailer, " %s", addrs[i]);
		extra[0] = trailer.buf;
		if (workspace_commit(c->ws, next, false, summary.buf, extra, 1, &err) < 0) {
			sb_release(&trailer);
			cmd_report(c->cli, &err);
			goto out;
		}
		sb_release(&trailer);
	}
	for (i = 0; i < n; i++)
		printf("removed %s\n", addrs[i]);
	ret = KILN_EXIT_OK;
out:
	json_decref(next);
	sb_release(&summary);
	return ret;
}

static int state_push(struct state_cmd *c, const char *file)
{
	struct kiln_error err = {0};
	struct crypt_key key;
	int have_key, ret = KILN_EXIT_ERROR;
	char *text = NULL, *label = NULL, *summary = NULL;
	size_t len = 0;
	json_t *doc = NULL;

	if (util_file_read_all(file, 64 * 1024 * 1024, &text, &len, &err) < 0 ||
	    state_parse(&doc, text, len, file, &err) < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	have_key = crypt_key_load(&key, &err);
	if (have_key < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	if (state_seal(doc, have_key ? &key : NULL, c->allow_plaintext, &err) < 0) {
		if (have_key)
			crypt_key_wipe(&key);
		cmd_report(c->cli, &err);
		goto out;
	}
	if (have_key)
		crypt_key_wipe(&key);
	/* A typo in -w must not start a new workspace with another's history. */
	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	if (lock_workspace(c, "state push") < 0)
		goto out;
	if (workspace_require(c->ws, &err) < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	{
		const json_t *cur = c->ws->state;
		const char *cc = state_cluster(cur), *fc = state_cluster(doc);

		if (strcmp(state_lineage(cur), state_lineage(doc)) != 0) {
			cli_error(c->cli, "pull the workspace's state, edit it and push that",
				  "%s has lineage %s, but workspace '%s' has lineage %s: they are "
				  "different histories",
				  file, state_lineage(doc), c->ws->name, state_lineage(cur));
			goto out;
		}
		if (cc && (!fc || strcmp(cc, fc) != 0)) {
			cli_error(
			    c->cli, NULL,
			    "%s is the state of cluster '%s', but workspace '%s' holds cluster "
			    "'%s'",
			    file, fc ? fc : "(none)", c->ws->name, cc);
			goto out;
		}
		if (state_serial(doc) <= state_serial(cur)) {
			cli_error(
			    c->cli, "pull, edit and push again; or another run changed it first",
			    "%s has serial %lld, but workspace '%s' is already at serial %lld",
			    file, (long long)state_serial(doc), c->ws->name,
			    (long long)state_serial(cur));
			goto out;
		}
	}
	label = workspace_label(c->ws, doc);
	summary = xasprintf("state push: serial %lld %s", (long long)state_serial(doc), label);
	if (workspace_commit(c->ws, doc, true, summary, NULL, 0, &err) < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	printf("pushed serial %lld to workspace '%s'\n", (long long)state_serial(doc), c->ws->name);
	ret = KILN_EXIT_OK;
out:
	free(summary);
	free(label);
	json_decref(doc);
	free(text);
	return ret;
}

/*
 * kiln state rekey: move the state from the key in old_file to the state
 * key in force, under the lock, in one commit; the old key is wiped.
 */
static int state_rekey_run(struct state_cmd *c, const char *old_file)
{
	struct kiln_error err = {0};
	struct crypt_key from, to;
	json_t *next = NULL;
	char *label = NULL, *summary = NULL;
	int have, moved, ret = KILN_EXIT_ERROR;

	if (crypt_key_load_file(&from, old_file, &err) < 0) {
		cmd_report(c->cli, &err);
		return KILN_EXIT_ERROR;
	}
	have = crypt_key_load(&to, &err);
	if (have <= 0) {
		if (have == 0)
			cli_error(c->cli,
				  "set KILN_STATE_KEY or KILN_STATE_KEY_FILE to the new key, or "
				  "make one with kiln init",
				  "rekey needs the new state key, and none is set");
		else
			cmd_report(c->cli, &err);
		crypt_key_wipe(&from);
		return KILN_EXIT_ERROR;
	}
	if (strcmp(from.kid, to.kid) == 0) {
		cli_error(c->cli, "set the state key to the new key, and give the old one's file",
			  "%s holds key %s, the state key already in force: nothing to rekey",
			  old_file, to.kid);
		goto out;
	}
	if (workspace_require(c->ws, &err) < 0 || (lock_workspace(c, "state rekey") < 0) ||
	    workspace_require(c->ws, &err) < 0) {
		if (err.msg[0])
			cmd_report(c->cli, &err);
		goto out;
	}
	next = json_deep_copy(c->ws->state);
	moved = state_rekey(next, &from, &to, &err);
	if (moved < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	if (moved == 0) {
		printf("no value of workspace '%s' is sealed with key %s: nothing to rekey\n",
		       c->ws->name, from.kid);
		ret = KILN_EXIT_OK;
		goto out;
	}
	label = workspace_label(c->ws, next);
	summary = xasprintf("state rekey: %d value%s resealed with key %s, was %s %s", moved,
			    moved == 1 ? "" : "s", to.kid, from.kid, label);
	if (workspace_commit(c->ws, next, false, summary, NULL, 0, &err) < 0) {
		cmd_report(c->cli, &err);
		goto out;
	}
	printf("resealed %d value%s of workspace '%s' with key %s (was %s); the commits before "
	       "this one still need key %s to open\n",
	       moved, moved == 1 ? "" : "s", c->ws->name, to.kid, from.kid, from.kid);
	ret = KILN_EXIT_OK;
out:
	crypt_key_wipe(&from);
	crypt_key_wipe(&to);
	json_decref(next);
	free(label);
	free(summary);
	return ret;
}

/* What kiln state takeover took over, or that there was nothing to take. */
static void takeover_done(void *arg, const struct op_run *r, const struct op_takeover_result *res)
{
	const json_t *t;
	size_t i;

	(void)arg;
	if (res->nothing) {
		printf("Nothing to take over: every live resource of %s/%s is this state's.\n",
		       r->e->spec->cluster, r->e->workspace);
		return;
	}
	if (res->commit_failed || !res->commit[0])
		return;
	json_array_foreach(res->taken, i, t)
	{
		const char *fl = json_string_value(json_object_get(t, "from"));

		printf("took over %s (%s) from %s%s\n",
		       json_string_value(json_object_get(t, "address")),
		       json_string_value(json_object_get(t, "id")),
		       fl ? "state lineage " : "no state (no lineage tag)", fl ? fl : "");
	}
	printf("State: commit %.12s in workspace '%s'.\n", res->commit, r->e->workspace);
}

/*
 * kiln state takeover: one operation (takeover_op_run) over the spec's
 * workspace; then what it took over, or why not.
 */
static int state_takeover(struct state_cmd *c, const char *spec, const char *from,
			  const char *const *addrs, size_t naddrs)
{
	struct takeover_op_options o = {.spec = spec, .filter = {from, addrs, naddrs}};
	struct takeover_ui ui = {.base = cmd_run_ui(c->cli), .done = takeover_done};
	struct run_flags f;
	int ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	f.store = c->flags;
	if (cmd_run_options(&o.run, c->cli, &f, spec) == 0 && takeover_op_run(&o, &ui) == 0)
		ret = KILN_EXIT_OK;
	f.store = (struct store_flags){0};
	cmd_run_flags_release(&f);
	return ret;
}

int cmd_state(int argc, char **argv, struct cli *cli)
{
	const char *spec = NULL, *from = NULL;
	struct state_cmd c = {.cli = cli};
	struct cli_parser p;
	struct kiln_error err = {0};
	const char *sub;
	char **ops;
	int opt, nops, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_state_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		int h;

		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		h = cmd_store_flags_handle(&c.flags, cli, opt, p.optarg);
		if (h < 0)
			goto out;
		if (h)
			continue;
		c.json |= opt == OPT_JSON;
		c.show_sensitive |= opt == OPT_SHOW_SENSITIVE;
		c.allow_plaintext |= opt == OPT_ALLOW_PLAINTEXT;
		if (opt == OPT_SPEC)
			spec = p.optarg;
		if (opt == OPT_FROM)
			from = p.optarg;
	}
	ops = argv + p.optind;
	nops = argc - p.optind;
	if (nops == 0) {
		cli_error(cli, "see 'kiln help state'",
			  "which one: list, show, rm, pull, push, rekey or takeover?");
		goto out;
	}
	sub = ops[0];
	if ((spec || from) && strcmp(sub, "takeover") != 0) {
		cli_error(cli, "see 'kiln help state'", "--%s is for kiln state takeover",
			  spec ? "spec" : "from");
		goto out;
	}
	if (strcmp(sub, "takeover") == 0) {
		if (!spec && access("kiln.yaml", F_OK) != 0) {
			cli_error(cli, "name the cluster's spec with --spec FILE",
				  "no --spec given and ./kiln.yaml does not exist");
			goto out;
		}
		ret = state_takeover(&c, spec ? spec : "kiln.yaml", from,
				     (const char *const *)ops + 1, (size_t)(nops - 1));
		goto out;
	}
	if (!(strcmp(sub, "show") == 0 && nops == 2) && !(strcmp(sub, "rm") == 0 && nops >= 2) &&
	    !((strcmp(sub, "push") == 0 || strcmp(sub, "rekey") == 0) && nops == 2) &&
	    !((strcmp(sub, "list") == 0 || strcmp(sub, "pull") == 0) && nops == 1)) {
		const char *near = str_closest(sub, subs, ARRAY_SIZE(subs) - 1);
		size_t i;
		bool known = false;

		for (i = 0; subs[i]; i++)
			known |= strcmp(sub, subs[i]) == 0;
		if (known)
			cli_error(cli, "see 'kiln help state'", "usage: kiln state %s%s", sub,
				  strcmp(sub, "show") == 0   ? " ADDRESS"
				  : strcmp(sub, "rm") == 0   ? " ADDRESS..."
				  : strcmp(sub, "push") == 0  ? " FILE"
				  : strcmp(sub, "rekey") == 0 ? " OLD_KEY_FILE"
							      : "");
		else if (near)
			cli_error(cli, NULL, "'%s' is not a state command; did you mean '%s'?", sub,
				  near);
		else
			cli_error(cli, "use list, show, rm, pull, push, rekey or takeover",
				  "'%s' is not a state command", sub);
		goto out;
	}
	/* No state command creates a repository or a workspace: `kiln workspace new` does. */
	if (cmd_store_flags_open(&c.flags, cli, false, &c.store, &c.ws) < 0)
		goto out;
	if (strcmp(sub, "list") == 0)
		ret = state_list(&c);
	else if (strcmp(sub, "show") == 0)
		ret = state_show(&c, ops[1]);
	else if (strcmp(sub, "pull") == 0)
		ret = state_pull(&c);
	else if (strcmp(sub, "rm") == 0)
		ret = state_rm(&c, ops + 1, nops - 1);
	else if (strcmp(sub, "rekey") == 0)
		ret = state_rekey_run(&c, ops[1]);
	else
		ret = state_push(&c, ops[1]);
out:
	if (workspace_close(c.ws, &err) < 0) {
		cmd_report(cli, &err);
		ret = KILN_EXIT_ERROR;
	}
	store_free(c.store);
	cli_parser_release(&p);
	return ret;
}
