/*
 * graph.h - the one dependency graph of the engine: nodes named by address,
 * edges "node depends on dependency", walks both ways, topological waves,
 * ranks (critical path first) and cycles reported by address.
 *
 * Three users build one: `kiln graph` over the expanded spec
 * (engine_graph), the differ over every address of a plan (what a
 * replacement drags along, what --target takes in), and the executor over
 * a plan's operations (graph_plan.c: what waits for what, the same graph
 * the plan is checked against for a cycle before anything is applied).
 *
 * A wave is the set of nodes whose dependencies are all in earlier waves,
 * so the number of waves is the critical path's length in operations. Order
 * inside a wave is by address, so plans and graphs print the same way every
 * time.
 */
#ifndef KILN_GRAPH_H
#define KILN_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct graph;

struct graph *graph_new(void);
void graph_free(struct graph *g);

/* Add a node (again is a no-op); returns its index. */
size_t graph_add(struct graph *g, const char *address);
/*
 * Add a node that graph_find does not look up (an operation: one address
 * may have two), labelled for DOT and cycle reports; returns its index.
 */
size_t graph_add_node(struct graph *g, const char *label);
size_t graph_size(const struct graph *g);
const char *graph_address(const struct graph *g, size_t index);
/* The index of address, or (size_t)-1. */
size_t graph_find(const struct graph *g, const char *address);

/*
 * node depends on dependency (both must have been added): dependency comes
 * first. A repeated edge is a no-op. -1 with err naming both when either is
 * unknown.
 */
int graph_depend(struct graph *g, const char *node, const char *dependency, struct kiln_error *err);
/* The same by index (both in range); a repeated edge is a no-op. */
void graph_link(struct graph *g, size_t node, size_t dependency);

/*
 * What node needs of a dependency before it may start: the dependency
 * ready (its own wait done; every edge unless said otherwise), or only
 * created (its create call answered: its id, ARN and what the call
 * returned are known).
 */
enum graph_edge {
	GRAPH_EDGE_READY = 0,
	GRAPH_EDGE_CREATED = 1,
};
/*
 * graph_link with the edge's kind. Linked twice, ready wins: a node that
 * needs a dependency ready one way needs it ready.
 */
void graph_link_kind(struct graph *g, size_t node, size_t dependency, enum graph_edge kind);
/* The kind of the edge node -> dependency (ready when there is none). */
enum graph_edge graph_edge_kind(const struct graph *g, size_t node, size_t dependency);
/* What a node depends on, and what depends on it, in the order linked: n of them. */
const size_t *graph_deps(const struct graph *g, size_t index, size_t *n);
const size_t *graph_users(const struct graph *g, size_t index, size_t *n);

/*
 * Visit start, then (to_users: what depends on it, else what it depends on)
 * onwards from every node visit returns true for; a node visit returns false
 * for is not gone past. visit decides too whether a node seen twice is
 * walked again (return false for one already seen). No recursion: a chain
 * of any length is fine.
 */
void graph_walk(const struct graph *g, size_t start, bool to_users,
		bool (*visit)(void *arg, size_t index), void *arg);

/*
 * rank[i] (graph_size entries): the nodes on the longest path from i
 * through what depends on it, i included: 1 plus the largest rank of its
 * users. What most waits on ranks highest; a node on a cycle, or waiting on
 * one, keeps 1.
 */
void graph_ranks(const struct graph *g, size_t *rank);

/*
 * NULL when the graph has no cycle; else a cycle as "a -> b -> c -> a" (each
 * depends on the next, starting at the smallest address on a cycle), which
 * the caller frees.
 */
char *graph_cycle(const struct graph *g);
/* 0, or -1 with err naming the cycle as graph_waves does, and the fix. */
int graph_check(const struct graph *g, struct kiln_error *err);

/*
 * The waves: waves[i] holds nwave[i] node indexes. -1 with err naming a
 * cycle as "a -> b -> c -> a" (each depends on the next) when there is one.
 * Free with graph_waves_free().
 */
int graph_waves(const struct graph *g, size_t ***waves, size_t **nwave, size_t *count,
		struct kiln_error *err);
void graph_waves_free(size_t **waves, size_t *nwave, size_t count);

/*
 * Graphviz DOT, one edge per dependency, pointing from a node to what it
 * depends on; an edge that needs the dependency only created is dashed and
 * labelled "created".
 */
char *graph_dot(const struct graph *g, const char *name);

#endif
