/*
 * cmd_log.c - `kiln log` (the history of a workspace: who changed what and
 * when) and `kiln show COMMIT` (one change, with its state diff). The state
 * repository is plain git, so `git log` there shows the same commits.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "approve.h"
#include "cmd_store.h"
#include "plan.h"
#include "cmds.h"
#include "lock.h"
#include "jsonw.h"
#include "pager.h"

enum {
	OPT_JSON = 1,
	OPT_COUNT,
	OPT_PATCH,
	OPT_TRUSTED_KEYS,
	OPT_APPROVALS,
	OPT_NO_PAGER,
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
    {"approvals", 0, false, OPT_APPROVALS, NULL,
     "PLANFILE: print only its approvals and whether each verifies"},
    {"trusted-keys", 0, true, OPT_TRUSTED_KEYS, "DIR",
     "PLANFILE: also check approvals against the *.pub keys in DIR (KILN_TRUSTED_KEYS)"},
    {"no-pager", 0, false, OPT_NO_PAGER, NULL,
     "PLANFILE: never page the plan (on a terminal it goes through PAGER, as kiln plan's)"},
};

const struct cmd_info cmd_show_info = {
    .name = "show",
    .usage = "COMMIT [--json] [--state URL|PATH] | PLANFILE [--json] [--approvals] "
	     "[--trusted-keys DIR]",
    .summary = "show one state commit: who, when, why, and the state diff",
    .description = "Show a commit of the state repository (a full or abbreviated id from\n"
		   "`kiln log`, or a workspace name for its head): author, date, the whole\n"
		   "message with its trailers, and the diff of state.json against its parent.\n\n"
		   "Given a plan file saved by `kiln plan --out`, render that plan (checking\n"
		   "that it is intact) as plan printed it, or as JSON with --json, followed by\n"
		   "its approvals (`kiln approve`) and whether each verifies over the plan;\n"
		   "with --trusted-keys DIR, also whether its key is trusted. --approvals\n"
		   "prints the approvals alone (as JSON with --json). On a terminal the plan\n"
		   "goes through a pager as kiln plan's does (--no-pager: never).",
    .options = show_options,
    .noptions = sizeof(show_options) / sizeof(show_options[0]),
    .see_also = "kiln-show(1), kiln-log(1), kiln-approve(1)",
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

/*
 * The patch a commit made to the state, as text (*out, caller frees). A commit,
 * tree or blob that cannot be read fails it: a patch with a part missing would
 * read as a change that was never made.
 */
static int commit_patch(struct store *s, git_commit *c, char **out, struct kiln_error *err)
{
	git_commit *parent = NULL;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	struct strbuf sb = {0};
	int rc = -1;

	*out = NULL;
	if ((git_commit_parentcount(c) > 0 &&
	     (git_commit_parent(&parent, c, 0) != 0 || git_commit_tree(&a, parent) != 0)) ||
	    git_commit_tree(&b, c) != 0 ||
	    git_diff_tree_to_tree(&diff, store_repo(s), a, b, NULL) != 0 ||
	    git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, print_line, &sb) != 0) {
		char sh[8];

		if (!store_damaged(s, err))
			kiln_error_set(err, "cannot read the change of commit %s in %s: %s",
				       store_short(git_commit_id(c), sh), store_location(s),
				       store_git_error());
		free(sb_detach(&sb));
		goto out;
	}
	*out = sb_detach(&sb);
	rc = 0;
out:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	git_commit_free(parent);
	return rc;
}

static int commit_json(struct store *s, git_commit *c, bool patch, json_t **out,
		       struct kiln_error *err)
{
	const git_signature *a = git_commit_author(c);
	char id[GIT_OID_HEXSZ + 1], when[32];
	json_t *o;

	git_oid_tostr(id, sizeof(id), git_commit_id(c));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", id, "author", a->name, "email",
		      a->email, "date", timefmt_time_format_rfc3339((int64_t)a->when.time, when),
		      "summary", git_commit_summary(c) ? git_commit_summary(c) : "", "message",
		      git_commit_message(c));
	if (patch) {
		char *p;

		if (commit_patch(s, c, &p, err) < 0) {
			json_decref(o);
			return -1;
		}
		json_object_set_new(o, "patch", json_string(p));
		free(p);
	}
	*out = o;
	return 0;
}

/*
 * Walk the history from head, newest first, at most max commits (-1: all):
 * each printed as a line (and its patch), or appended to arr with json.
 * Unsorted: libgit2 sorts (topologically or by time) only after reading
 * every commit, so -n 20 would cost the whole history; a state's history is
 * one line of commits (each has one parent), which the unsorted walk
 * follows parent by parent, newest first, reading only what it prints.
 */
static int log_walk(struct store *s, const git_oid *head, long max, bool json, bool patch,
		    json_t *arr, struct kiln_error *err)
{
	git_revwalk *walk = NULL;
	git_oid oid;
	long n = 0;
	int rc = 0, ret = -1; /* 0 when the walk cannot start: no object to name */

	if (git_revwalk_new(&walk, store_repo(s)) != 0 ||
	    (rc = git_revwalk_push(walk, head)) != 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_NONE) != 0) {
		if (!store_object_error(s, rc, "commit", head, err))
			kiln_error_set(err, "cannot walk the history: %s", store_git_error());
		goto out;
	}
	while ((max < 0 || n < max) && (rc = git_revwalk_next(&oid, walk)) != GIT_ITEROVER) {
		git_commit *c = NULL;
		json_t *o;
		bool stepped = rc == 0; /* a failed step of the walk names no commit */

		if (rc != 0 || (rc = git_commit_lookup(&c, store_repo(s), &oid)) != 0) {
			if (!store_object_error(s, rc, "commit", stepped ? &oid : NULL, err))
				kiln_error_set(err, "cannot walk the history: %s",
					       store_git_error());
			goto out;
		}
		n++;
		if (json) {
			if (commit_json(s, c, patch, &o, err) < 0) {
				git_commit_free(c);
				goto out;
			}
			json_array_append_new(arr, o);
		} else {
			const git_signature *a = git_commit_author(c);
			char when[32], sh[8];

			printf("%s  %-20s %s  %s\n",
			       timefmt_time_format_rfc3339((int64_t)a->when.time, when), a->name,
			       git_commit_summary(c) ? git_commit_summary(c) : "",
			       store_short(&oid, sh));
			if (patch) {
				char *d;

				if (commit_patch(s, c, &d, err) < 0) {
					git_commit_free(c);
					goto out;
				}
				printf("%s\n", d);
				free(d);
			}
		}
		git_commit_free(c);
	}
	ret = 0;
out:
	git_revwalk_free(walk);
	return ret;
}

int cmd_log(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	struct store *s = NULL;
	struct kiln_error err = {0};
	git_oid head;
	const char *ws;
	char *branch = NULL;
	int rc;
	long max = -1;
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
		h = cmd_store_flags_handle(&flags, cli, opt, p.optarg);
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
	if (cmd_store_flags_open(&flags, cli, false, &s, NULL) < 0)
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
		workspace_missing(s, ws, &err);
		cmd_report(cli, &err);
		goto out;
	}
	if (log_walk(s, &head, max, json, patch, arr, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (json) {
		jsonw_dumpf(arr, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
	}
	ret = KILN_EXIT_OK;
out:
	json_decref(arr);
	free(branch);
	store_free(s);
	cli_parser_release(&p);
	return ret;
}

/* The status of an approval as a JSON value: "valid", "bad_signature", ... */
static const char *status_json(enum approval_status st)
{
	static const char *const names[] = {
	    [APPROVAL_VALID] = "valid",
	    [APPROVAL_MALFORMED] = "malformed",
	    [APPROVAL_BAD_SIGNATURE] = "bad_signature",
	    [APPROVAL_UNKNOWN_KEY] = "unknown_key",
	    [APPROVAL_DUPLICATE] = "duplicate",
	};

	return names[st];
}

static json_t *approvals_json(const char *path, const json_t *plan, const struct approval_report *r,
			      const char *dir)
{
	char *digest = plan_digest(plan);
	json_t *list = json_array(), *o;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct approval_check *c = &r->v[i];
		char *why = approve_check_describe(c, dir);

		json_array_append_new(list,
				      json_pack("{s:s?, s:s?, s:s?, s:s, s:b, s:s?, s:s}", "signer",
						c->signer, "time", c->time, "key_id", c->key_id,
						"status", status_json(c->status), "verifies",
						c->status == APPROVAL_VALID ||
						    c->status == APPROVAL_DUPLICATE ||
						    c->status == APPROVAL_UNKNOWN_KEY,
						"trusted_by", c->trusted_by, "message", why));
		free(why);
	}
	o = json_pack("{s:s, s:s, s:s?, s:i, s:o}", "file", path, "digest", digest ? digest : "",
		      "trusted_keys", dir, "valid", (json_int_t)r->valid, "approvals", list);
	free(digest);
	return o;
}

static void approvals_text(const char *path, const struct approval_report *r, const char *dir)
{
	size_t i;

	if (r->n == 0) {
		printf("Approvals: none (add one with kiln approve %s --key KEY)\n", path);
		return;
	}
	if (dir)
		printf("Approvals: %zu (%zu valid, from distinct keys trusted in %s)\n", r->n,
		       r->valid, dir);
	else
		printf("Approvals: %zu (%zu with a valid signature, from distinct keys; trust not "
		       "checked: give --trusted-keys DIR)\n",
		       r->n, r->valid);
	for (i = 0; i < r->n; i++) {
		const struct approval_check *c = &r->v[i];
		char *why = approve_check_describe(c, dir);

		printf("  %zu. %s at %s, key %s: %s\n", i + 1, c->signer ? c->signer : "?",
		       c->time ? c->time : "?", c->key_id ? c->key_id : "?", why);
		free(why);
	}
}

/*
 * `kiln show PLANFILE`: a saved plan, as plan printed it (or its JSON), and
 * its approvals; with only_approvals, the approvals alone.
 */
static int show_plan_file(struct cli *cli, const char *path, bool json, bool only_approvals,
			  const char *dir, bool no_pager)
{
	struct pager pg = {0};
	const char *pager;
	struct kiln_error err = {0};
	struct approve_keyring ring = {0};
	struct approval_report report = {0};
	json_t *plan = NULL, *approvals = NULL;
	int ret = KILN_EXIT_ERROR;

	if (plan_file_read_approvals(&plan, &approvals, path, &err) < 0 ||
	    (dir && approve_keyring_load(&ring, dir, &err) < 0) ||
	    approve_verify(&report, plan, approvals, dir ? &ring : NULL, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (json) {
		json_t *o =
		    only_approvals ? approvals_json(path, plan, &report, dir) : json_incref(plan);

		jsonw_dumpf(o, stdout,
			    JSON_INDENT(2) |
				(only_approvals ? 0 : JSON_SORT_KEYS | JSON_REAL_PRECISION(12)));
		fputc('\n', stdout);
		json_decref(o);
	} else {
		if (!only_approvals && (pager = pager_command(no_pager)))
			pager_start(&pg, pager);
		if (!only_approvals) {
			plan_render_text(stdout, plan, cli->color_out);
			printf("\n");
		}
		approvals_text(path, &report, dir);
		pager_finish(&pg);
	}
	ret = KILN_EXIT_OK;
out:
	approve_report_release(&report);
	approve_keyring_release(&ring);
	json_decref(approvals);
	json_decref(plan);
	return ret;
}

int cmd_show(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	struct store *s = NULL;
	struct kiln_error err = {0};
	git_commit *c = NULL;
	git_oid oid;
	bool json = false, only_approvals = false, no_pager = false;
	const char *trusted = NULL;
	int rc, opt, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_show_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		int h;

		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		h = cmd_store_flags_handle(&flags, cli, opt, p.optarg);
		if (h < 0)
			goto out;
		if (opt == OPT_JSON)
			json = true;
		if (opt == OPT_APPROVALS)
			only_approvals = true;
		if (opt == OPT_TRUSTED_KEYS)
			trusted = p.optarg;
		if (opt == OPT_NO_PAGER)
			no_pager = true;
	}
	if (argc - p.optind != 1) {
		cli_error(cli, "`kiln log` lists commits", "needs one COMMIT");
		goto out;
	}
	if (plan_file_is(argv[p.optind])) {
		if (!trusted && getenv("KILN_TRUSTED_KEYS") && *getenv("KILN_TRUSTED_KEYS"))
			trusted = getenv("KILN_TRUSTED_KEYS");
		ret = show_plan_file(cli, argv[p.optind], json, only_approvals, trusted, no_pager);
		goto out;
	}
	if (only_approvals || trusted) {
		cli_error(cli, "give the plan file that kiln plan --out wrote",
			  "--approvals and --trusted-keys are for a plan file, and %s is not one",
			  argv[p.optind]);
		goto out;
	}
	if (cmd_store_flags_open(&flags, cli, false, &s, NULL) < 0)
		goto out;
	if (store_resolve(s, argv[p.optind], &oid, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if ((rc = git_commit_lookup(&c, store_repo(s), &oid)) != 0) {
		if (!store_object_error(s, rc, "commit", &oid, &err))
			kiln_error_set(&err, "cannot read commit: %s", store_git_error());
		cmd_report(cli, &err);
		goto out;
	}
	if (json) {
		json_t *o;

		if (commit_json(s, c, true, &o, &err) < 0) {
			cmd_report(cli, &err);
			goto out;
		}
		jsonw_dumpf(o, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(o);
	} else {
		const git_signature *a = git_commit_author(c);
		char id[GIT_OID_HEXSZ + 1], when[32];
		char *d;

		if (commit_patch(s, c, &d, &err) < 0) {
			cmd_report(cli, &err);
			goto out;
		}
		git_oid_tostr(id, sizeof(id), &oid);
		printf("commit %s\nAuthor: %s <%s>\nDate:   %s\n\n%s\n%s", id, a->name, a->email,
		       timefmt_time_format_rfc3339((int64_t)a->when.time, when),
		       git_commit_message(c), d);
		free(d);
	}
	ret = KILN_EXIT_OK;
out:
	git_commit_free(c);
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
