/*
 * cmd_graph.c - `kiln graph`: the spec's resource DAG in Graphviz DOT, the
 * order apply creates in (and destroy deletes in, reversed).
 */
#include <stdlib.h>

#include "cmd_run.h"
#include "cmds.h"
#include "validate.h"

static const struct cli_option options[] = {
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
};

const struct cmd_info cmd_graph_info = {
    .name = "graph",
    .usage = "[SPEC] [OPTIONS]",
    .summary = "print the resource dependency graph (Graphviz DOT)",
    .description = "Expand the spec into resources and print their dependency graph in\n"
		   "Graphviz DOT: one node per address, an edge from each resource to what it\n"
		   "needs; a dashed edge labelled \"created\" needs it only created (its create\n"
		   "call answered), a plain one needs it ready. Render it with\n"
		   "`kiln graph | dot -Tsvg > graph.svg`. Reads no state and calls no cloud API.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-graph(1), kiln-plan(1)",
};

int cmd_graph(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct engine *e = NULL;
	struct kiln_error err = {0};
	struct graph *g = NULL;
	const char *spec;
	char *dot;
	int ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	if (cmd_run_flags_parse(&f, &p, cli, &cmd_graph_info, argc, argv, &ret) < 0)
		goto out;
	spec = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!spec)
		goto out;
	e = cmd_run_engine_only(cli, spec, &f);
	if (!e)
		goto out;
	g = engine_graph(e->desired, &err);
	if (!g) {
		cmd_report(cli, &err);
		goto out;
	}
	dot = graph_dot(g, e->spec->cluster);
	fputs(dot, stdout);
	free(dot);
	ret = KILN_EXIT_OK;
out:
	graph_free(g);
	engine_free(e);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
