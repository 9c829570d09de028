/*
 * cmd_reap.c - `kiln reap`: destroy every workspace whose TTL has passed.
 *
 * Meant for a scheduled CI job. Each workspace branch of the state
 * repository is read; one past its expiry is destroyed under its lock, as
 * `kiln destroy` does. The expiry is checked again under that lock, so two
 * reaps at once destroy a workspace once: the second finds the lock held
 * (skipped) or the expiry gone (already reaped). The flags, one line per
 * workspace (or the JSON document) and the exit code are this file's; the
 * walk, the decisions and the destroys are one operation, reap_op_run
 * (reap_op.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "cmds.h"
#include "expiry.h"
#include "jsonw.h"
#include "reap_op.h"
#include "timefmt.h"

enum {
	OPT_DRY_RUN = 1,
	OPT_JSON,
	OPT_VAR,
};

static const struct cli_option options[] = {
    {"dry-run", 0, false, OPT_DRY_RUN, NULL, "say what would be reaped; change nothing"},
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    {"var", 0, true, OPT_VAR, "NAME=VALUE",
     "a spec variable the destroy needs (repeatable), as for kiln destroy"},
    {"json", 0, false, OPT_JSON, NULL, "print the outcomes as one JSON document"},
};

const struct cmd_info cmd_reap_info = {
    .name = "reap",
    .usage = "[--dry-run] [--state URL] [OPTIONS]",
    .summary = "destroy workspaces whose TTL has passed or whose GPUs sat idle",
    .description = "Walk every workspace of the state repository and destroy those whose recorded\n"
		   "expiry (the spec's ttl or apply --ttl; see kiln-ttl(1)) has passed, each\n"
		   "through `kiln destroy` with its own lock and one commit. Stores with\n"
		   "`deletion: retain` are kept. The expiry is checked again under the lock: two\n"
		   "reaps at once destroy a workspace once. A workspace whose lock is held is\n"
		   "skipped (--lock-timeout waits that long first).\n\n"
		   "The destroy reads the spec file the last apply recorded, relative to the\n"
		   "current directory: run reap where apply runs (the repository root in CI).\n"
		   "When the file has moved or gone, it destroys with the copy of the spec the\n"
		   "apply recorded in the state.\n"
		   "KILN_REQUIRE_APPROVALS does not hold it back: the TTL was set by an apply\n"
		   "the approval policy governed, and `kiln ttl extend` only moves it later.\n\n"
		   "One line per workspace: kept, reaped, would reap (--dry-run), skipped or\n"
		   "failed. KILN_NOW (RFC 3339) sets the clock, for tests.\n\n"
		   "A workspace whose spec has an idle: policy is also destroyed once the GPUs\n"
		   "of every group under it stayed below gpu_below for its whole `for`, as\n"
		   "measured by the provider; never on missing data, which it says instead.\n"
		   "The commit records Kiln-Reap-Reason: idle (or ttl).\n\n"
		   "Exit status: 0 when nothing failed, 1 otherwise.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-reap(1), kiln-ttl(1), kiln-destroy(1)",
};

static void print_line(const json_t *o)
{
	const char *ws = json_string_value(json_object_get(o, "workspace"));
	const char *outcome = json_string_value(json_object_get(o, "outcome"));
	const char *reason = json_string_value(json_object_get(o, "reason"));
	const char *expires = json_string_value(json_object_get(o, "expires"));
	json_int_t left = json_integer_value(json_object_get(o, "left_seconds"));
	const char *window = json_string_value(json_object_get(o, "window"));
	char *l = expiry_left_format(left);
	char *why = window ? xasprintf(", an hour before %s ends", window) : xstrdup("");

	printf("%s: %s", ws, outcome);
	if (json_is_string(json_object_get(o, "idle")) &&
	    (strcmp(outcome, "reaped") == 0 || strcmp(outcome, "would reap") == 0)) {
		if (strcmp(outcome, "reaped") == 0)
			printf(": %" JSON_INTEGER_FORMAT " deleted, %" JSON_INTEGER_FORMAT
			       " retained (idle: %s)",
			       json_integer_value(json_object_get(o, "deleted")),
			       json_integer_value(json_object_get(o, "retained")),
			       json_string_value(json_object_get(o, "idle")));
		else
			printf(": %" JSON_INTEGER_FORMAT " resources (idle: %s)",
			       json_integer_value(json_object_get(o, "resources")),
			       json_string_value(json_object_get(o, "idle")));
	} else if (strcmp(outcome, "reaped") == 0) {
		printf(": %" JSON_INTEGER_FORMAT " deleted, %" JSON_INTEGER_FORMAT
		       " retained (expired %s ago%s)",
		       json_integer_value(json_object_get(o, "deleted")),
		       json_integer_value(json_object_get(o, "retained")), l, why);
		if (json_is_string(json_object_get(o, "spec")))
			printf(", with %s", json_string_value(json_object_get(o, "spec")));
	} else if (strcmp(outcome, "would reap") == 0)
		printf(": %" JSON_INTEGER_FORMAT " resources (expired %s ago%s)",
		       json_integer_value(json_object_get(o, "resources")), l, why);
	else if (reason)
		printf(": %s", reason);
	else if (expires && left > 0)
		printf(": expires in %s (%s%s)", l, expires, why);
	else if (expires)
		printf(": expired %s ago, nothing left to destroy", l);
	else
		printf(": no ttl");
	putchar('\n');
	fflush(stdout);
	free(l);
	free(why);
}

struct reap_cmd {
	struct cli *cli;
	bool json;
};

static void ui_error(void *arg, const struct kiln_error *err)
{
	const struct reap_cmd *c = arg;

	cmd_report(c->cli, err);
}

static void ui_loaded(void *arg, struct diags *d)
{
	const struct reap_cmd *c = arg;

	cmd_run_loaded(c->cli, d);
}

static void ui_workspace(void *arg, const json_t *outcome)
{
	const struct reap_cmd *c = arg;

	if (!c->json)
		print_line(outcome);
}

static void ui_failures(void *arg, const json_t *errors)
{
	const struct reap_cmd *c = arg;

	cmd_run_report_failures(c->cli, errors);
}

int cmd_reap(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct reap_cmd rc = {.cli = cli};
	const struct reap_ui ui = {
	    .base = {&rc, ui_error, ui_loaded},
	    .workspace = ui_workspace,
	    .failures = ui_failures,
	};
	struct reap_op_options o = {0};
	struct reap_op_result res = {0};
	struct kiln_error err = {0};
	int c, ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_reap_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_DRY_RUN) {
			o.dry_run = true;
		} else if (c == OPT_JSON) {
			rc.json = true;
		} else if (c == OPT_VAR) {
			if (cmd_run_flags_handle(&f, cli, OPT_RUN_VAR, p.optarg) < 0)
				goto out;
		} else if (cmd_store_flags_handle(&f.store, cli, c, p.optarg) < 0) {
			goto out;
		}
	}
	if (p.optind < argc) {
		cli_error(cli, "reap walks every workspace; `kiln destroy -w NAME` takes one",
			  "unexpected operand '%s'", argv[p.optind]);
		goto out;
	}
	if (timefmt_now(&o.now, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	o.state = f.store.state;
	o.lock_timeout = f.store.lock_timeout;
	o.vars = (struct spec_options){f.vars.v, f.vars.n};
	o.parallelism = f.parallelism;
	if (reap_op_run(&o, &ui, &res) < 0)
		goto out;
	if (rc.json) {
		json_t *doc =
		    json_pack("{s:s, s:b, s:O, s:I, s:I}", "now",
			      timefmt_time_format_rfc3339(o.now, (char[21]){0}), "dry_run",
			      o.dry_run, "workspaces", res.workspaces, "reaped",
			      (json_int_t)res.reaped, "failed", (json_int_t)res.failed);

		jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	} else if (json_array_size(res.workspaces) == 0) {
		printf("No workspaces in %s.\n", res.location);
	}
	ret = res.failed ? KILN_EXIT_ERROR : KILN_EXIT_OK;
out:
	reap_op_result_release(&res);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
