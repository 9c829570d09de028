/*
 * cmd_plan.c - `kiln plan`: what apply would do, as text, JSON or Markdown,
 * optionally saved as a plan file bound to the spec and the state commit.
 * Reads only: takes no lock and creates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "cmds.h"
#include "pager.h"
#include "plan.h"

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    {"out", 'o', true, OPT_RUN_OUT, "FILE",
     "save the plan for `kiln apply FILE` (a file, not a directory)"},
    {"detailed-exitcode", 0, false, OPT_RUN_DETAILED, NULL,
     "exit 0 with no changes, 2 with changes, 1 on error"},
    {"json", 0, false, OPT_RUN_JSON, NULL,
     "print the plan as one JSON document (kiln-plan-json(5))"},
    {"markdown", 0, false, OPT_RUN_MARKDOWN, NULL,
     "print the plan as a pull-request comment (with a table of any Capacity Block offering "
     "it buys and the runner-up)"},
    RUN_OPT_REFRESH,
    RUN_OPT_TARGET,
    RUN_OPT_REPLACE,
    {"destroy", 0, false, OPT_RUN_DESTROY, NULL, "plan to destroy everything in the workspace"},
    RUN_OPT_NO_PAGER,
};

const struct cmd_info cmd_plan_info = {
    .name = "plan",
    .usage = "[SPEC] [OPTIONS]",
    .summary = "show what apply would change, with reasons",
    .description = "Refresh live state through the provider (resources are listed by their\n"
		   "workspace tags, page by page), compare it with the spec and the recorded\n"
		   "state, and print the plan: create (+), update in place (~), replace (-/+),\n"
		   "delete (-) and adopt (<=) a live resource that carries this workspace's tags\n"
		   "but is missing from the state, such as one created by an interrupted apply.\n"
		   "Drift, where live resources differ from the recorded state, is shown even\n"
		   "when the spec did not change. Nothing is created and no lock is taken.\n\n"
		   "SPEC defaults to ./kiln.yaml. --out saves the plan; `kiln apply FILE` applies\n"
		   "exactly that plan, and refuses it once the workspace has moved on, or once\n"
		   "an offering it buys (a Capacity Block: kiln.offering in the JSON) is gone or\n"
		   "costs another fee.\n\n"
		   "On a terminal the text (and --markdown) goes through a pager, as git's does:\n"
		   "KILN_PAGER, else PAGER, else less with LESS=FRX when LESS is unset (a plan\n"
		   "shorter than the screen is printed as it is); never with --no-pager, --json,\n"
		   "in CI (CI=true, KILN_IN_AUTOMATION) or when stdout is not a terminal.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-plan(1), kiln-apply(1), kiln-plan-json(5)",
};

int cmd_plan(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct op_run r = {.plan_only = true};
	struct kiln_error err = {0};
	struct pager pg = {0};
	const char *spec, *pager;
	int ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	if (cmd_run_flags_parse(&f, &p, cli, &cmd_plan_info, argc, argv, &ret) < 0)
		goto out;
	if (f.json && f.markdown) {
		cli_error(cli, "pick one", "--json and --markdown cannot be combined");
		goto out;
	}
	spec = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!spec || cmd_run_plan_spec(&r, cli, &f, spec) < 0)
		goto out;
	if (f.out && plan_file_write(f.out, r.plan, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (!f.json && (pager = pager_command(f.no_pager)))
		pager_start(&pg, pager);
	if (f.json) {
		cmd_run_print_json(r.plan,
				   JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	} else if (f.markdown) {
		plan_render_markdown(stdout, r.plan);
	} else {
		plan_render_text(stdout, r.plan, cli->color_out);
		/* A next step for a person; a CI job runs its own (KILN_IN_AUTOMATION). */
		if (f.out && !cli_in_automation())
			printf("\nSaved the plan to %s; apply exactly this plan with:\n  kiln "
			       "apply %s\n",
			       f.out, f.out);
	}
	pager_finish(&pg);
	/* The team limits an apply of this plan would be held to (kiln-policy(5)). */
	if (!f.destroy && operation_quota_check(&r, &err) != 0) {
		cmd_report(cli, &err);
		goto out;
	}
	ret = KILN_EXIT_OK;
	if (f.detailed && json_is_true(plan_kiln(r.plan, "changes")))
		ret = KILN_EXIT_CHANGES;
out:
	operation_finish(&r);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
