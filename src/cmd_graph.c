/*
 * cmd_graph.c - `kiln graph`: the spec's resource DAG in Graphviz DOT, the
 * order apply creates in (and destroy deletes in, reversed), clustered by
 * tier with a legend; with --plan, the plan's action and hourly cost on
 * each node.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "cmds.h"
#include "graph_dot.h"
#include "plan.h"
#include "validate.h"

enum { OPT_PLAN = 1 };

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    RUN_OPT_REFRESH,
    {"plan", 0, false, OPT_PLAN, NULL,
     "plan as kiln plan does and show each resource's action and hourly cost"},
};

const struct cmd_info cmd_graph_info = {
    .name = "graph",
    .usage = "[SPEC] [--plan] [OPTIONS]",
    .summary = "print the resource dependency graph (Graphviz DOT)",
    .description = "Expand the spec into resources and print their dependency graph in\n"
		   "Graphviz DOT: one node per address, in a cluster per tier (network,\n"
		   "compute, storage, IAM), an edge from each resource to what it needs; a\n"
		   "dashed edge labelled \"created\" needs it only created (its create call\n"
		   "answered), a plain one needs it ready, as the graph's legend says. Render\n"
		   "it with `kiln graph | dot -Tsvg > graph.svg`. Reads no state and calls no\n"
		   "cloud API.\n\n"
		   "--plan plans the spec as `kiln plan` does (reading the workspace's state\n"
		   "and, unless --refresh false, the cloud; no lock, nothing changed) and fills\n"
		   "each node by its action (create, update, replace, delete, no-op), its label\n"
		   "naming the action and the resource's hourly cost after the plan; a resource\n"
		   "the plan deletes is drawn too.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-graph(1), kiln-plan(1), kiln-cost(1)",
};

static const char *action_word(enum plan_action a)
{
	static const char *const words[] = {
	    [PLAN_NO_OP] = "no-op",	      [PLAN_CREATE] = "create",
	    [PLAN_UPDATE] = "update",	      [PLAN_DELETE_CREATE] = "replace",
	    [PLAN_CREATE_DELETE] = "replace", [PLAN_DELETE] = "delete",
	};

	return words[a];
}

/* The resource's hourly cost in the plan's cost object: after it, or before it for a delete. */
static bool hourly_of(const json_t *plan, const char *address, enum plan_action a, double *out)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(plan_cost(plan), "resources"), i, r)
	{
		if (strcmp(json_string_value(json_object_get(r, "address")), address) != 0)
			continue;
		*out = json_number_value(
		    json_object_get(r, a == PLAN_DELETE ? "hourly_before" : "hourly_after"));
		return true;
	}
	return false;
}

/* Whether the plan's cost lists a part of the resource as billed by use (unpriced). */
static bool billed_by_use(const json_t *plan, const char *address)
{
	const json_t *u;
	size_t i;

	json_array_foreach(json_object_get(plan_cost(plan), "unpriced"), i, u)
	{
		if (json_is_string(json_object_get(u, "address")) &&
		    strcmp(json_string_value(json_object_get(u, "address")), address) == 0)
			return true;
	}
	return false;
}

/*
 * What each node of g is drawn as: its tier, and with a plan its action and
 * cost. A resource the plan deletes is added to g first (the spec no longer
 * has it). Caller frees.
 */
static struct graph_dot_node *graph_nodes(const struct engine *e, struct graph *g,
					  const struct op_run *r)
{
	struct graph_dot_node *nodes;
	size_t i, n;

	for (i = 0; r && i < r->view.nchanges; i++)
		if (r->view.changes[i].action == PLAN_DELETE)
			graph_add(g, r->view.changes[i].address);
	n = graph_size(g);
	nodes = xcalloc(n + 1, sizeof(*nodes));
	for (i = 0; i < n; i++)
		nodes[i].tier = engine_tier(e, graph_address(g, i));
	for (i = 0; r && i < r->view.nchanges; i++) {
		const struct plan_change *c = &r->view.changes[i];
		size_t k = graph_find(g, c->address);

		if (k == (size_t)-1)
			continue;
		nodes[k].action = action_word(c->action);
		nodes[k].has_hourly = hourly_of(r->plan, c->address, c->action, &nodes[k].hourly);
		nodes[k].by_use = billed_by_use(r->plan, c->address);
	}
	return nodes;
}

int cmd_graph(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct op_run r = {.plan_only = true};
	struct engine *e = NULL;
	struct kiln_error err = {0};
	struct graph *g = NULL;
	struct graph_dot_node *nodes = NULL;
	const struct engine *drawn;
	bool plan = false;
	const char *spec;
	char *dot;
	int c, ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_graph_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_PLAN)
			plan = true;
		else if (cmd_run_flags_handle(&f, cli, c, p.optarg) < 0)
			goto out;
	}
	spec = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!spec)
		goto out;
	if (plan) {
		if (cmd_run_plan_spec(&r, cli, &f, spec) < 0)
			goto out;
		drawn = r.e;
	} else {
		e = cmd_run_engine_only(cli, spec, &f);
		if (!e)
			goto out;
		drawn = e;
	}
	g = engine_graph(drawn->desired, &err);
	if (!g) {
		cmd_report(cli, &err);
		goto out;
	}
	nodes = graph_nodes(drawn, g, plan ? &r : NULL);
	dot = graph_dot_styled(g, drawn->spec->cluster,
			       &(struct graph_dot_style){.nodes = nodes, .plan = plan});
	fputs(dot, stdout);
	free(dot);
	ret = KILN_EXIT_OK;
out:
	free(nodes);
	graph_free(g);
	engine_free(e);
	operation_close(&r);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
