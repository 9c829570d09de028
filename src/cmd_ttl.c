/*
 * cmd_ttl.c - `kiln ttl show` and `kiln ttl extend DURATION`: read and push
 * out a workspace's expiry (expiry.h). An extension is a state change like
 * any other: under the workspace lock, one commit naming who made it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "cmd_store.h"
#include "cmds.h"
#include "expiry.h"
#include "expiry_tag.h"
#include "state.h"
#include "workspace.h"
#include "jsonw.h"

enum {
	OPT_JSON = 1,
	OPT_SPEC,
};

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    {"json", 0, false, OPT_JSON, NULL, "print the expiry as JSON"},
    {"spec", 0, true, OPT_SPEC, "FILE",
     "extend: the spec that opens the cloud to retag the nodes (default: the one the apply "
     "recorded, else ./kiln.yaml)"},
};

static const char *const ttl_subs[] = {"show", "extend", NULL};

const struct cmd_info cmd_ttl_info = {
    .name = "ttl",
    .usage = "show | extend DURATION  [OPTIONS]",
    .summary = "show a workspace's expiry, or push it out",
    .description = "  show             when the workspace expires, who set it and how\n"
		   "  extend DURATION  push the expiry DURATION past the current one (past now\n"
		   "                   when it has already passed), as one commit under the lock\n"
		   "                   that records who did it, then put the new expiry on the\n"
		   "                   nodes' kiln:expires tag: each node powers itself off\n"
		   "                   past that tag plus the spec's ttl_grace (default 15m)\n\n"
		   "The expiry comes from the spec's ttl or apply --ttl (kiln-apply(1)); `kiln\n"
		   "reap` destroys the workspace once it has passed. KILN_NOW (RFC 3339) sets\n"
		   "the clock, for tests.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-ttl(1), kiln-reap(1), kiln-apply(1)",
    .subcommands = ttl_subs,
};

static void show(const struct workspace *w, const json_t *x, int64_t now, bool json)
{
	int64_t t = 0;
	bool has = expiry_time(x, &t);
	char *left = expiry_left_format(t - now);
	char *window = expiry_window_sentence(w->state);

	if (json) {
		json_t *doc = json_pack("{s:s, s:O?}", "workspace", w->name, "expiry", x);

		if (has)
			json_object_set_new(doc, "left_seconds", json_integer(t - now));
		jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	} else if (!has && window) {
		printf("Workspace '%s' has no TTL, but %s.\n", w->name, window);
	} else if (!has) {
		printf("Workspace '%s' has no TTL: it lives until `kiln destroy`.\n", w->name);
	} else {
		printf("Workspace '%s' expires %s (%s%s%s).\n", w->name,
		       json_string_value(json_object_get(x, "expires")), t > now ? "in " : "", left,
		       t > now ? "" : " ago: the next `kiln reap` destroys it");
		printf("Set by %s at %s (%s).\n", json_string_value(json_object_get(x, "set_by")),
		       json_string_value(json_object_get(x, "set_at")),
		       json_string_value(json_object_get(x, "set_how")) ?: "spec ttl");
	}
	free(window);
	free(left);
}

/*
 * The nodes read their expiry from their own kiln:expires tag (the node
 * TTL): put the committed one there, through the cloud the spec opens.
 */
static int retag(struct cli *cli, const struct workspace *w, const json_t *state,
		 const char *spec_flag)
{
	const char *spec = spec_flag, *recorded = state_policy_spec(state, STATE_POLICY_EXPIRY);
	struct kiln_error err = {0};
	struct run_flags f;
	struct engine *e;
	size_t n = 0;
	int rc;

	if (!state_resource_count(state))
		return 0;
	if (!spec)
		spec = recorded && access(recorded, R_OK) == 0 ? recorded : "kiln.yaml";
	cmd_run_flags_init(&f);
	f.store.workspace = w->name;
	e = cmd_run_engine_only(cli, spec, &f);
	if (!e) {
		kiln_error_set(&err,
			       "the expiry is committed, but the nodes' kiln:expires tag is still "
			       "the old one: %s did not open",
			       spec);
		kiln_error_hint(&err, "run kiln ttl extend again with --spec FILE naming the "
				      "workspace's spec: until then its nodes power themselves off "
				      "at the old expiry plus the grace");
		cmd_report(cli, &err);
		f.store = (struct store_flags){0};
		cmd_run_flags_release(&f);
		return -1;
	}
	rc = expiry_tag_nodes(e, state, state_expires(state), &n, &err);
	if (rc < 0)
		cmd_report(cli, &err);
	else
		printf("The nodes' kiln:expires tag says %s (%zu resource%s asked).\n",
		       state_expires(state), n, n == 1 ? "" : "s");
	engine_free(e);
	f.store = (struct store_flags){0};
	cmd_run_flags_release(&f);
	return rc;
}

static int extend(struct workspace *w, struct store *s, int64_t by, int64_t now,
		  const struct store_flags *sf, struct cli *cli, const char *spec)
{
	struct lock_options lo = {.operation = "ttl extend", .timeout = sf->lock_timeout};
	struct kiln_error err = {0};
	git_signature *sig = NULL;
	json_t *state = NULL, *x = NULL;
	char *author = NULL, *summary = NULL, *trailer = NULL, *d = timefmt_duration_format(by);
	const char *extra[1];
	int ret = KILN_EXIT_ERROR;

	if (workspace_lock(w, &lo, &err) < 0 || workspace_require(w, &err) < 0 ||
	    store_signature(s, &sig, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	author = xasprintf("%s <%s>", sig->name, sig->email);
	x = expiry_extend(state_expiry(w->state), by, now, author, w->name, &err);
	if (x && expiry_within_windows(w->state, x, &err) < 0) {
		json_decref(x);
		x = NULL;
	}
	if (!x) {
		cmd_report(cli, &err);
		goto out;
	}
	state = json_deep_copy(w->state);
	json_object_set(state, "expiry", x);
	summary = xasprintf("ttl extend: +%s, expires %s (%s/%s)", d, state_expires(state),
			    state_cluster(state) ?: "-", w->name);
	trailer = xstrdup("Kiln-Operation: ttl extend");
	extra[0] = trailer;
	if (workspace_commit(w, state, false, summary, extra, 1, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	show(w, x, now, false);
	ret = retag(cli, w, state, spec) < 0 ? KILN_EXIT_ERROR : KILN_EXIT_OK;
out:
	git_signature_free(sig);
	json_decref(state);
	json_decref(x);
	free(author);
	free(summary);
	free(trailer);
	free(d);
	return ret;
}

int cmd_ttl(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct store_flags sf = {0};
	struct kiln_error err = {0};
	struct store *s = NULL;
	struct workspace *w = NULL;
	bool json = false;
	const char *sub, *spec = NULL;
	int64_t now, by = 0;
	int c, nops, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_ttl_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_JSON)
			json = true;
		else if (c == OPT_SPEC)
			spec = p.optarg;
		else if (cmd_store_flags_handle(&sf, cli, c, p.optarg) < 0)
			goto out;
	}
	nops = argc - p.optind;
	sub = nops ? argv[p.optind] : "show";
	if (!((strcmp(sub, "show") == 0 && nops <= 1) ||
	      (strcmp(sub, "extend") == 0 && nops == 2))) {
		if (strcmp(sub, "extend") == 0)
			cli_error(cli, "for example: kiln ttl extend 4h",
				  "extend takes one DURATION");
		else
			cli_error(cli, "use show, or extend DURATION",
				  "'%s' is not a ttl subcommand", sub);
		goto out;
	}
	if (nops == 2 && (timefmt_duration_parse(argv[p.optind + 1], &by) < 0 || by <= 0 ||
			  by > 365LL * 86400)) {
		cli_error(cli, "write it like 4h, 90m or 2d (at most 365d)",
			  "'%s' is not a duration", argv[p.optind + 1]);
		goto out;
	}
	if (timefmt_now(&now, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (cmd_store_flags_open(&sf, cli, false, &s, &w) < 0)
		goto out;
	if (by) {
		ret = extend(w, s, by, now, &sf, cli, spec);
		goto out;
	}
	if (workspace_require(w, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	show(w, state_expiry(w->state), now, json);
	ret = KILN_EXIT_OK;
out:
	if (w && workspace_close(w, &err) < 0) {
		cmd_report(cli, &err);
		ret = KILN_EXIT_ERROR;
	}
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
