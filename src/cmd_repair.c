/*
 * cmd_repair.c - `kiln repair [GROUP...]`: replace just the nodes of the
 * node groups that reported themselves unhealthy. The flags, what is
 * shown, asking and the exit code; the run (lock, refresh, find the nodes,
 * ask, replace, one commit, wait for their health) is repair_op.c's.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "cmds.h"
#include "progress.h"
#include "repair_op.h"
#include "str.h"

enum {
	OPT_SPEC = 990,
	OPT_HEALTH_TIMEOUT,
};

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    RUN_OPT_VAR,
    RUN_OPT_AUTO_APPROVE,
    {"spec", 0, true, OPT_SPEC, "FILE", "the spec (default ./kiln.yaml)"},
    {"health-timeout", 0, true, OPT_HEALTH_TIMEOUT, "DURATION",
     "wait this long for the new nodes to report their health; 0 does not wait (default 20m; "
     "KILN_HEALTH_TIMEOUT)"},
};

const struct cmd_info cmd_repair_info = {
    .name = "repair",
    .usage = "[GROUP...] [--spec FILE] [OPTIONS]",
    .summary = "replace the nodes that reported themselves unhealthy",
    .description = "Take the workspace lock, read the nodes of the node groups named (every group\n"
		   "without a name) and their health, the kiln:health report each node puts on\n"
		   "itself, and replace just the unhealthy ones: as many new nodes are launched\n"
		   "first, all or nothing (a gang's into its placement group), and only then are\n"
		   "the unhealthy ones terminated, so a launch that fails changes nothing. The\n"
		   "plan is shown first; without --auto-approve repair asks on a terminal and\n"
		   "refuses otherwise. One commit records it, with a Kiln-Replaced trailer naming\n"
		   "the replaced ids; then repair waits for the new nodes to report, as apply\n"
		   "does, and exits 4 when one is unhealthy or silent. Nothing unhealthy: it says\n"
		   "so, exits 0 and commits nothing. To replace a whole group, use `kiln apply\n"
		   "--replace ADDRESS`.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-repair(1), kiln-status(1), kiln-apply(1)",
};

static void render_plan(const struct op_run *r, const json_t *targets)
{
	const json_t *t, *b;
	size_t i, j, n = 0;

	printf("kiln repair: %s/%s\n", r->e->spec->cluster, r->ws->name);
	json_array_foreach(targets, i, t)
	{
		const json_t *bad = json_object_get(t, "replace");

		printf("  ~ %s  replace %zu of %" JSON_INTEGER_FORMAT " nodes\n",
		       json_string_value(json_object_get(t, "address")), json_array_size(bad),
		       json_integer_value(json_object_get(t, "nodes")));
		json_array_foreach(bad, j, b)
		{
			const char *why = json_string_value(json_object_get(b, "reason"));
			char *id = str_for_terminal(json_string_value(json_object_get(b, "id")), 0);
			char *shown = str_for_terminal(why ? why : "no reason given", 0);

			printf("      - %s  unhealthy: %s\n", id, shown);
			free(shown);
			free(id);
		}
		n += json_array_size(bad);
	}
	printf("\nRepair: %zu node%s to replace in %zu group%s.\n", n, n == 1 ? "" : "s",
	       json_array_size(targets), json_array_size(targets) == 1 ? "" : "s");
}

static void ids_print(const json_t *ids)
{
	const json_t *v;
	size_t i;

	json_array_foreach(ids, i, v)
	{
		char *shown = str_for_terminal(json_string_value(v), 0);

		printf("%s%s", i ? ", " : "", shown);
		free(shown);
	}
}

/* What the replacements did, on standard output; a failure is said after, as an error. */
static void render_outcome(void *arg, const struct op_run *r, const struct op_repair_outcome *o)
{
	const json_t *d;
	size_t i, n = 0;

	(void)arg;
	json_array_foreach(o->done, i, d)
	{
		printf("%s: replaced ", json_string_value(json_object_get(d, "address")));
		ids_print(json_object_get(d, "replaced"));
		printf(" with ");
		ids_print(json_object_get(d, "added"));
		printf("\n");
		n += json_array_size(json_object_get(d, "replaced"));
	}
	printf("\nRepair %s: %zu node%s replaced in %zu group%s.\n",
	       o->failed ? "incomplete" : "complete", n, n == 1 ? "" : "s",
	       json_array_size(o->done), json_array_size(o->done) == 1 ? "" : "s");
	if (o->commit)
		printf("State: commit %.12s in workspace '%s'.\n", o->commit, r->ws->name);
	fflush(stdout);
}

struct repair_cmd {
	struct cli *cli;
	bool named;		    /* groups were named */
	struct progress_health live; /* the health wait's line on a terminal */
};

static void ui_error(void *arg, const struct kiln_error *err)
{
	const struct repair_cmd *c = arg;

	cmd_report(c->cli, err);
}

static void ui_loaded(void *arg, struct diags *d)
{
	const struct repair_cmd *c = arg;

	cmd_run_loaded(c->cli, d);
}

static void ui_plan(void *arg, const struct op_run *r, const json_t *targets)
{
	const struct repair_cmd *c = arg;

	if (json_array_size(targets) == 0)
		printf("Nothing to repair: no node of %s reported itself unhealthy.\n",
		       c->named ? "the groups named" : "any group");
	else
		render_plan(r, targets);
}

static bool ui_ask(void *arg, const char *question)
{
	(void)arg;
	return cmd_run_confirm(question);
}

static void ui_health_waiting(void *arg, int64_t timeout)
{
	struct repair_cmd *c = arg;

	cmd_run_health_waiting(timeout, false);
	progress_health_init(&c->live, false);
}

static void ui_health_tick(void *arg, size_t reported, size_t nodes, int64_t left_s)
{
	struct repair_cmd *c = arg;

	progress_health_tick(&c->live, reported, nodes, left_s);
}

static void ui_health(void *arg, const json_t *groups, int64_t timeout)
{
	struct repair_cmd *c = arg;

	progress_health_end(&c->live);
	cmd_run_health_show(c->cli, groups, timeout, false);
}

int cmd_repair(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct repair_cmd c = {.cli = cli};
	struct repair_op_options o = {0};
	const struct repair_ui ui = {
	    .base = {&c, ui_error, ui_loaded},
	    .plan = ui_plan,
	    .ask = ui_ask,
	    .done = render_outcome,
	    .health_waiting = ui_health_waiting,
	    .health_tick = ui_health_tick,
	    .health = ui_health,
	};
	const char *spec = NULL, *health_arg = NULL;
	int ret = KILN_EXIT_ERROR, opt;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_repair_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (opt == OPT_SPEC)
			spec = p.optarg;
		else if (opt == OPT_HEALTH_TIMEOUT)
			health_arg = p.optarg;
		else if (cmd_run_flags_handle(&f, cli, opt, p.optarg) < 0)
			goto out;
	}
	if (cmd_run_health_timeout(cli, health_arg, &o.health_timeout) < 0)
		goto out;
	if (!spec && !(spec = cmd_run_spec_operand(cli, NULL, 0, argv, 0)))
		goto out;
	if (!f.auto_approve && !isatty(STDIN_FILENO)) {
		cli_error(cli, "pass --auto-approve",
			  "standard input is not a terminal, so kiln cannot ask for approval; "
			  "nothing was changed");
		goto out;
	}
	if (cmd_run_options(&o.run, cli, &f, spec) < 0)
		goto out;
	o.spec = spec;
	o.groups = (const char *const *)argv + p.optind;
	o.ngroups = (size_t)(argc - p.optind);
	o.auto_approve = f.auto_approve;
	c.named = o.ngroups > 0;
	switch (repair_op_run(&o, &ui)) {
	case REPAIR_OP_OK:
		ret = KILN_EXIT_OK;
		break;
	case REPAIR_OP_UNHEALTHY:
		ret = KILN_EXIT_UNHEALTHY;
		break;
	case REPAIR_OP_FAILED:
		break;
	}
out:
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
