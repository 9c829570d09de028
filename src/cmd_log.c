/*
 * cmd_log.c - `kiln log` (the history of a workspace: who changed what and
 * when) and `kiln show COMMIT` (one change, with its state diff). The state
 * repository is plain git, so `git log` there shows the same commits.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_store.h"
#include "plan.h"
#include "cmds.h"
#include "lock.h"

enum {
	OPT_JSON = 1,
	OPT_COUNT,
	OPT_PATCH,
};

static const struct cli_option log_options[] = {
    CMD_OPT_STATE,
    CMD_OPT_WORKSPACE,
    {"max-count", 'n', true, OPT_COUNT, "N", "show at most N commits"},
    {"patch", 'p', false, OPT_PATCH, NULL, "add each commit's state diff"},
    {"json", 0, false, OPT_JSON, NULL, "print a JSON array"},
};

const struct cmd_info cmd_log_info = {
    .name = "log",
    .usage = "[-n N] [-p] [--json] [-w WORKSPACE] [--state URL|PATH]",
    .summary = "the history of a workspace: who changed what, and when",
    .description = "List the commits of a workspace's state branch, newest first: date (UTC),\n"
		   "author, summary and short id. -p adds the diff of state.json each commit\n"
		   "made. Every apply, destroy, import and state edit is one commit.",
    .options = log_options,
    .noptions = sizeof(log_options) / sizeof(log_options[0]),
    .see_also = "kiln-log(1), kiln-show(1)",
};

static const struct cli_option show_options[] = {
    CMD_OPT_STATE,
    {"json", 0, false, OPT_JSON, NULL, "print a JSON object"},
};

const struct cmd_info cmd_show_info = {
    .name = "show",
    .usage = "COMMIT | PLANFILE [--json] [--state URL|PATH]",
    .summary = "show one state commit: who, when, why, and the state diff",
    .description = "Show a commit of the state repository (a full or abbreviated id from\n"
		   "`kiln log`, or a workspace name for its head): author, date, the whole\n"
		   "message with its trailers, and the diff of state.json against its parent.\n\n"
		   "Given a plan file saved by `kiln plan --out`, render that plan (checking\n"
		   "that it is intact) as plan printed it, or as JSON with --json.",
    .options = show_options,
    .noptions = sizeof(show_options) / sizeof(show_options[0]),
    .see_also = "kiln-show(1), kiln-log(1)",
};

static int print_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		      void *payload)
{
	struct strbuf *sb = payload;

	(void)d;
	(void)h;
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		sb_addc(sb, l->origin);
	sb_add(sb, l->content, l->content_len);
	return 0;
}

/* The patch a commit made to the state, as text. */
static char *commit_patch(git_repository *repo, git_commit *c)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	struct strbuf sb = {0};

	if (git_commit_parentcount(c) > 0 && git_commit_parent(&parent, c, 0) == 0)
		git_commit_tree(&a, parent);
	git_commit_tree(&b, c);
	if (git_diff_tree_to_tree(&diff, repo, a, b, NULL) == 0)
		git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, print_line, &sb);
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return sb_detach(&sb);
}

static json_t *commit_json(git_repository *repo, git_commit *c, bool patch)
{
	const git_signature *a = git_commit_author(c);
	char id[GIT_OID_HEXSZ + 1], when[32];
	json_t *o;

	git_oid_tostr(id, sizeof(id), git_commit_id(c));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", id, "author", a->name, "email",
		      a->email, "date", lock_time_format((int64_t)a->when.time, when), "summary",
		      git_commit_summary(c) ? git_commit_summary(c) : "", "message",
		      git_commit_message(c));
	if (patch) {
		char *p = commit_patch(repo, c);

		json_object_set_new(o, "patch", json_string(p));
		free(p);
	}
	return o;
}

int cmd_log(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	struct store *s = NULL;
	struct kiln_error err;
	git_revwalk *walk = NULL;
	git_oid oid, head;
	const char *ws;
	char *branch = NULL;
	int rc;
	long max = -1, n = 0;
	bool json = false, patch = false;
	json_t *arr = json_array();
	int opt, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_log_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		int h;

		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		h = store_flags_handle(&flags, cli, opt, p.optarg);
		if (h < 0)
			goto out;
		if (h)
			continue;
		if (opt == OPT_JSON)
			json = true;
		if (opt == OPT_PATCH)
			patch = true;
		if (opt == OPT_COUNT) {
			char *end;

			max = strtol(p.optarg, &end, 10);
			if (*end || max < 0 || !*p.optarg) {
				cli_error(cli, NULL, "-n needs a whole number, got '%s'", p.optarg);
				goto out;
			}
		}
	}
	if (p.optind < argc) {
		cli_error(cli, "select the workspace with -w NAME", "takes no arguments, got '%s'",
			  argv[p.optind]);
		goto out;
	}
	if (store_flags_open(&flags, cli, false, &s, NULL) < 0)
		goto out;
	/*
	 * The history only: the head's state.json is not read, so a broken head
	 * still shows how it got broken.
	 */
	ws = workspace_name(flags.workspace);
	branch = store_branch_ref(ws);
	if (!store_workspace_name_ok(ws)) {
		cli_error(cli, WORKSPACE_NAME_RULE, "'%s' is not a workspace name", ws);
		goto out;
	}
	if (store_sync(s, &err) < 0 || (rc = store_ref_read(s, branch, &head, &err)) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (rc == 1) {
		struct workspace missing = {.store = s, .name = (char *)ws};

		workspace_require(&missing, &err);
		cmd_report(cli, &err);
		goto out;
	}
	if (git_revwalk_new(&walk, store_repo(s)) != 0 || git_revwalk_push(walk, &head) != 0) {
		cli_error(cli, NULL, "cannot walk the history: %s", store_git_error());
		goto out;
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	while ((max < 0 || n < max) && git_revwalk_next(&oid, walk) == 0) {
		git_commit *c = NULL;

		if (git_commit_lookup(&c, store_repo(s), &oid) != 0)
			break;
		n++;
		if (json) {
			json_array_append_new(arr, commit_json(store_repo(s), c, patch));
		} else {
			const git_signature *a = git_commit_author(c);
			char when[32], sh[8];

			printf("%s  %-20s %s  %s\n", lock_time_format((int64_t)a->when.time, when),
			       a->name, git_commit_summary(c) ? git_commit_summary(c) : "",
			       store_short(&oid, sh));
			if (patch) {
				char *d = commit_patch(store_repo(s), c);

				printf("%s\n", d);
				free(d);
			}
		}
		git_commit_free(c);
	}
	if (json) {
		json_dumpf(arr, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	}
	ret = KILN_EXIT_OK;
out:
	json_decref(arr);
	git_revwalk_free(walk);
	free(branch);
	store_free(s);
	cli_parser_release(&p);
	return ret;
}

/* `kiln show PLANFILE`: a saved plan, as plan printed it (or its JSON). */
static int show_plan_file(struct cli *cli, const char *path, bool json)
{
	struct kiln_error err = {0};
	json_t *plan;

	if (plan_file_read(&plan, path, &err) < 0) {
		cmd_report(cli, &err);
		return KILN_EXIT_ERROR;
	}
	if (json) {
		json_dumpf(plan, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
		fputc('\n', stdout);
	} else {
		plan_render_text(stdout, plan, cli->color_out);
	}
	json_decref(plan);
	return KILN_EXIT_OK;
}

int cmd_show(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	struct store *s = NULL;
	struct kiln_error err;
	git_commit *c = NULL;
	git_oid oid;
	bool json = false;
	int opt, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_show_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		int h;

		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		h = store_flags_handle(&flags, cli, opt, p.optarg);
		if (h < 0)
			goto out;
		if (opt == OPT_JSON)
			json = true;
	}
	if (argc - p.optind != 1) {
		cli_error(cli, "`kiln log` lists commits", "needs one COMMIT");
		goto out;
	}
	if (plan_file_is(argv[p.optind])) {
		ret = show_plan_file(cli, argv[p.optind], json);
		goto out;
	}
	if (store_flags_open(&flags, cli, false, &s, NULL) < 0)
		goto out;
	if (store_resolve(s, argv[p.optind], &oid, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (git_commit_lookup(&c, store_repo(s), &oid) != 0) {
		cli_error(cli, NULL, "cannot read commit: %s", store_git_error());
		goto out;
	}
	if (json) {
		json_t *o = commit_json(store_repo(s), c, true);

		json_dumpf(o, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(o);
	} else {
		const git_signature *a = git_commit_author(c);
		char id[GIT_OID_HEXSZ + 1], when[32];
		char *d = commit_patch(store_repo(s), c);

		git_oid_tostr(id, sizeof(id), &oid);
		printf("commit %s\nAuthor: %s <%s>\nDate:   %s\n\n%s\n%s", id, a->name, a->email,
		       lock_time_format((int64_t)a->when.time, when), git_commit_message(c), d);
		free(d);
	}
	ret = KILN_EXIT_OK;
out:
	git_commit_free(c);
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
