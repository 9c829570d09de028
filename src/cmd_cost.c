/*
 * cmd_cost.c - `kiln cost`: what a spec (or a saved plan) costs, component
 * by component, before anything is spent. It plans the way `kiln plan`
 * does (no lock, nothing created) and prints the plan's cost object.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "cmds.h"
#include "cost.h"
#include "plan.h"
#include "jsonw.h"
#include "workload_render.h"

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    RUN_OPT_REFRESH,
    {"json", 0, false, OPT_RUN_JSON, NULL, "print the plan's cost object (kiln-plan-json(5))"},
};

const struct cmd_info cmd_cost_info = {
    .name = "cost",
    .usage = "[SPEC | PLANFILE] [OPTIONS]",
    .summary = "hourly and monthly cost of a spec",
    .description = "Plan the spec as `kiln plan` does (reading live state, taking no lock,\n"
		   "creating nothing), or read PLANFILE from `kiln plan --out`, and print what\n"
		   "the cluster costs once the plan is applied: every cost component (quantity x\n"
		   "unit price from the provider's dated catalog), per hour and per month, the\n"
		   "change from what runs now, and the projection over the spec's ttl. What the\n"
		   "catalog cannot price (storage billed by use) is listed, never counted as $0.\n"
		   "Monthly figures are 730 hours. budget.max_hourly_usd in the spec is checked\n"
		   "by the plan's audit (kiln-rules(7), KILN-COST-001). A spec with a workload:\n"
		   "gets a last line with one training run's time and cost (kiln-spec(5)).",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-cost(1), kiln-plan(1), kiln-plan-json(5)",
};

int cmd_cost(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct op_run r = {.plan_only = true};
	struct kiln_error err = {0};
	const char *spec;
	json_t *plan = NULL;
	int ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	if (cmd_run_flags_parse(&f, &p, cli, &cmd_cost_info, argc, argv, &ret) < 0)
		goto out;
	spec = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!spec)
		goto out;
	if (plan_file_is(spec)) {
		if (plan_file_read(&plan, spec, &err) < 0) {
			cmd_report(cli, &err);
			goto out;
		}
	} else {
		if (cmd_run_plan_spec(&r, cli, &f, spec) < 0)
			goto out;
		plan = json_incref(r.plan);
	}
	if (!plan_cost(plan)) {
		kiln_error_set(&err,
			       "%s holds no cost: it was saved by a kiln older than `kiln cost`; "
			       "make the plan again with `kiln plan --out`",
			       spec);
		cmd_report(cli, &err);
		goto out;
	}
	if (f.json) {
		jsonw_dumpf(plan_cost(plan), stdout,
			    JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
		fputc('\n', stdout);
	} else {
		cost_render_table(stdout, plan, cli->color_out);
		workload_render_run_cost(stdout, plan);
	}
	ret = KILN_EXIT_OK;
out:
	json_decref(plan);
	operation_close(&r);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
