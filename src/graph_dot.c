/*
 * graph_dot.c - graphs in Graphviz DOT; see graph_dot.h. Reads a graph
 * only through graph.h, and names no cloud: the tier and action of each
 * node are the caller's.
 */
#include "graph_dot.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util.h"

/* s with DOT's quotes and backslashes escaped, for inside a quoted string. */
static void dot_escape(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_addc(sb, '\\');
		sb_addc(sb, *s);
	}
}

/* A DOT identifier: the address quoted, with quotes and backslashes escaped. */
static void dot_quote(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '"');
	dot_escape(sb, s);
	sb_addc(sb, '"');
}

static int by_address(const void *a, const void *b, void *arg)
{
	const struct graph *g = *(const struct graph **)arg;

	return strcmp(graph_address(g, *(const size_t *)a), graph_address(g, *(const size_t *)b));
}

/* The tiers in the order their clusters are written, and their titles. */
static const struct {
	const char *tier, *label;
} tiers[] = {
    {"network", "network"},
    {"compute", "compute"},
    {"storage", "storage"},
    {"iam", "IAM"},
};

/* A plan's actions, the fill each gets and what the legend says. */
static const struct {
	const char *action, *fill;
} actions[] = {
    {"create", "#c7e9c0"}, {"update", "#fff2a8"}, {"replace", "#e5c7f5"},
    {"delete", "#fcc5c0"}, {"no-op", "#ffffff"},
};

static const char *action_fill(const char *action)
{
	size_t i;

	for (i = 0; action && i < ARRAY_SIZE(actions); i++)
		if (strcmp(actions[i].action, action) == 0)
			return actions[i].fill;
	return NULL;
}

/* One node's line, with its plan overlay when there is one. */
static void node_line(struct strbuf *sb, const struct graph *g, size_t i,
		      const struct graph_dot_style *style, const char *indent)
{
	const struct graph_dot_node *n = style && style->nodes ? &style->nodes[i] : NULL;
	const char *fill = n ? action_fill(n->action) : NULL;

	sb_adds(sb, indent);
	dot_quote(sb, graph_address(g, i));
	if (style && style->plan && n && n->action) {
		/* Two lines: the address, then the action and cost (DOT's \n breaks the line). */
		sb_adds(sb, " [label = \"");
		dot_escape(sb, graph_address(g, i));
		sb_addf(sb, "\\n%s", n->action);
		if (n->has_hourly)
			sb_addf(sb, ", $%.2f/h%s", n->hourly, n->by_use ? " + use" : "");
		sb_addf(sb, "\", style = \"filled\", fillcolor = \"%s\"]", fill ? fill : "#ffffff");
	}
	sb_adds(sb, ";\n");
}

/* The legend: what a plain and a dashed edge mean, and the fills of a plan's actions. */
static void legend(struct strbuf *sb, const struct graph_dot_style *style)
{
	size_t i;

	sb_adds(sb,
		"  subgraph \"cluster_legend\" {\n"
		"    label = \"legend\";\n"
		"    style = \"dashed\";\n"
		"    node [shape = \"plaintext\"];\n"
		"    \"legend: A\" [label = \"A\"];\n"
		"    \"legend: B\" [label = \"B\"];\n"
		"    \"legend: C\" [label = \"C\"];\n"
		"    \"legend: D\" [label = \"D\"];\n"
		"    \"legend: A\" -> \"legend: B\" [label = \"A needs B ready\"];\n"
		"    \"legend: C\" -> \"legend: D\" [label = \"created: C needs D only created\", "
		"style = \"dashed\"];\n");
	/* The actions in a row: each after the one before, by an edge not drawn. */
	for (i = 0; style->plan && i < ARRAY_SIZE(actions); i++) {
		sb_addf(sb,
			"    \"legend: %s\" [label = \"%s\", shape = \"box\", style = \"filled\", "
			"fillcolor = \"%s\"];\n",
			actions[i].action, actions[i].action, actions[i].fill);
		if (i)
			sb_addf(sb, "    \"legend: %s\" -> \"legend: %s\" [style = \"invis\"];\n",
				actions[i - 1].action, actions[i].action);
	}
	sb_adds(sb, "  }\n");
}

char *graph_dot_styled(const struct graph *g, const char *name, const struct graph_dot_style *style)
{
	struct strbuf sb = {0};
	size_t n = graph_size(g), *order = xcalloc(n + 1, sizeof(*order)), i, j, t;
	const struct graph_dot_node *nodes = style ? style->nodes : NULL;

	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_address, &g);
	sb_adds(&sb, "digraph ");
	dot_quote(&sb, name);
	sb_adds(&sb, " {\n  rankdir = \"RL\";\n");
	if (style)
		sb_adds(&sb, "  node [shape = \"box\"];\n");
	/* Each tier's nodes in a cluster of their own, then the nodes of none. */
	for (t = 0; nodes && t < ARRAY_SIZE(tiers); t++) {
		bool open = false;

		for (i = 0; i < n; i++) {
			const char *tier = nodes[order[i]].tier;

			if (!tier || strcmp(tier, tiers[t].tier) != 0)
				continue;
			if (!open)
				sb_addf(&sb, "  subgraph \"cluster_%s\" {\n    label = \"%s\";\n",
					tiers[t].tier, tiers[t].label);
			open = true;
			node_line(&sb, g, order[i], style, "    ");
		}
		if (open)
			sb_adds(&sb, "  }\n");
	}
	for (i = 0; i < n; i++) {
		const char *tier = nodes ? nodes[order[i]].tier : NULL;
		bool clustered = false;

		for (t = 0; tier && t < ARRAY_SIZE(tiers); t++)
			clustered |= strcmp(tier, tiers[t].tier) == 0;
		if (!clustered)
			node_line(&sb, g, order[i], style, "  ");
	}
	for (i = 0; i < n; i++) {
		size_t nd, *deps;
		const size_t *d = graph_deps(g, order[i], &nd);

		deps = xcalloc(nd + 1, sizeof(*deps));
		if (nd)
			memcpy(deps, d, nd * sizeof(*deps));
		qsort_r(deps, nd, sizeof(*deps), by_address, &g);
		for (j = 0; j < nd; j++) {
			sb_adds(&sb, "  ");
			dot_quote(&sb, graph_address(g, order[i]));
			sb_adds(&sb, " -> ");
			dot_quote(&sb, graph_address(g, deps[j]));
			if (graph_edge_kind(g, order[i], deps[j]) == GRAPH_EDGE_CREATED)
				sb_adds(&sb, " [label = \"created\", style = \"dashed\"]");
			sb_adds(&sb, ";\n");
		}
		free(deps);
	}
	if (style)
		legend(&sb, style);
	sb_adds(&sb, "}\n");
	free(order);
	return sb_detach(&sb);
}

char *graph_dot(const struct graph *g, const char *name)
{
	return graph_dot_styled(g, name, NULL);
}
