/*
 * graph_dot.h - a graph (graph.h) in Graphviz DOT, plain (graph_dot) or as
 * `kiln graph` draws it for a reader: nodes clustered by tier, a legend
 * for the two kinds of edge, and optionally a plan's actions and hourly
 * costs over the nodes.
 */
#ifndef KILN_GRAPH_DOT_H
#define KILN_GRAPH_DOT_H

#include <stdbool.h>

#include "graph.h"

/* What the drawing says of one node; every field may be NULL/false. */
struct graph_dot_node {
	const char *tier;   /* "network", "compute", "storage", "iam": its cluster */
	const char *action; /* a plan's: "create", "update", "replace", "delete", "no-op" */
	bool has_hourly;
	double hourly; /* USD per hour after the plan (before it, for a delete) */
	bool by_use;   /* and parts billed by use, which the hourly cost leaves out */
};

struct graph_dot_style {
	const struct graph_dot_node *nodes; /* graph_size() entries, by index; or NULL */
	bool plan; /* the nodes carry a plan's actions: say so in the legend */
};

/*
 * DOT of g as graph_dot writes it, with each node in the cluster of its
 * tier (nodes of none stay outside), a legend cluster for ready and
 * created-only edges, and with style->plan each node filled by its action
 * and labelled with it and its hourly cost. Caller frees.
 */
char *graph_dot_styled(const struct graph *g, const char *name,
		       const struct graph_dot_style *style);

#endif
