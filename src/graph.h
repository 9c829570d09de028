/*
 * graph.h - the resource DAG: addresses, dependencies, topological waves and
 * cycles reported by address.
 *
 * The engine (issue 4) builds one from the expanded spec and walks it:
 * creates wave by wave in dependency order, deletes in reverse. A wave is the
 * set of resources whose dependencies are all in earlier waves, so the number
 * of waves is the critical path's length in operations. Order inside a wave
 * is by address, so plans and graphs print the same way every time.
 */
#ifndef KILN_GRAPH_H
#define KILN_GRAPH_H

#include <stddef.h>

#include "util.h"

struct graph;

struct graph *graph_new(void);
void graph_free(struct graph *g);

/* Add a node (again is a no-op); returns its index. */
size_t graph_add(struct graph *g, const char *address);
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

/*
 * The waves: waves[i] holds nwave[i] node indexes. -1 with err naming a
 * cycle as "a -> b -> c -> a" (each depends on the next) when there is one.
 * Free with graph_waves_free().
 */
int graph_waves(const struct graph *g, size_t ***waves, size_t **nwave, size_t *count,
		struct kiln_error *err);
void graph_waves_free(size_t **waves, size_t *nwave, size_t count);

/* Graphviz DOT, one edge per dependency, pointing from a node to what it depends on. */
char *graph_dot(const struct graph *g, const char *name);

#endif
