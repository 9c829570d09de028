/*
 * graph.c - see graph.h. Kahn's algorithm level by level; a cycle is found
 * by walking dependencies among the nodes Kahn could not place.
 */
#include "graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct node {
	char *address;
	size_t *deps; /* indexes of what this node depends on */
	size_t ndeps;
	size_t capdeps;
};

struct graph {
	struct node *nodes;
	size_t n;
	size_t cap;
	size_t *slots; /* open addressing: node index + 1, 0 = empty */
	size_t nslots;
};

#define NONE ((size_t)-1)

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static size_t *slot_for(const struct graph *g, const char *address)
{
	size_t mask = g->nslots - 1, i = (size_t)hash(address) & mask;

	while (g->slots[i] && strcmp(g->nodes[g->slots[i] - 1].address, address) != 0)
		i = (i + 1) & mask;
	return &g->slots[i];
}

static void rehash(struct graph *g)
{
	size_t i;

	free(g->slots);
	g->nslots = g->nslots ? g->nslots * 2 : 64;
	g->slots = xcalloc(g->nslots, sizeof(*g->slots));
	for (i = 0; i < g->n; i++)
		*slot_for(g, g->nodes[i].address) = i + 1;
}

struct graph *graph_new(void)
{
	struct graph *g = xcalloc(1, sizeof(*g));

	rehash(g);
	return g;
}

void graph_free(struct graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n; i++) {
		free(g->nodes[i].address);
		free(g->nodes[i].deps);
	}
	free(g->nodes);
	free(g->slots);
	free(g);
}

size_t graph_find(const struct graph *g, const char *address)
{
	size_t s = *slot_for(g, address);

	return s ? s - 1 : NONE;
}

size_t graph_add(struct graph *g, const char *address)
{
	size_t i = graph_find(g, address);
	struct node *nd;

	if (i != NONE)
		return i;
	if ((g->n + 1) * 2 > g->nslots)
		rehash(g);
	nd = ARRAY_PUSH(g->nodes, g->n, g->cap);
	memset(nd, 0, sizeof(*nd));
	nd->address = xstrdup(address);
	*slot_for(g, address) = g->n;
	return g->n - 1;
}

size_t graph_size(const struct graph *g)
{
	return g->n;
}

const char *graph_address(const struct graph *g, size_t index)
{
	return g->nodes[index].address;
}

int graph_depend(struct graph *g, const char *node, const char *dependency, struct kiln_error *err)
{
	size_t a = graph_find(g, node), b = graph_find(g, dependency), i;
	struct node *nd;

	if (a == NONE) {
		kiln_error_set(err, "%s is not a resource of this graph", node);
		return -1;
	}
	if (b == NONE) {
		kiln_error_set(err, "%s depends on %s, which is not defined", node, dependency);
		return -1;
	}
	nd = &g->nodes[a];
	for (i = 0; i < nd->ndeps; i++)
		if (nd->deps[i] == b)
			return 0;
	*ARRAY_PUSH(nd->deps, nd->ndeps, nd->capdeps) = b;
	return 0;
}

static int by_address(const void *a, const void *b, void *arg)
{
	const struct graph *g = arg;

	return strcmp(g->nodes[*(const size_t *)a].address, g->nodes[*(const size_t *)b].address);
}

/* A cycle among the unplaced nodes, as "a -> b -> ... -> a". */
static void report_cycle(const struct graph *g, const size_t *indeg, struct kiln_error *err)
{
	size_t *seen =
	    xcalloc(g->n, sizeof(*seen)); /* step at which a node was visited, 0 = never */
	size_t *path = xcalloc(g->n + 1, sizeof(*path));
	size_t start = NONE, cur, step = 0, i, first;
	struct strbuf sb = {0};

	/* The smallest unplaced address, so the report is the same every time. */
	for (i = 0; i < g->n; i++)
		if (indeg[i] &&
		    (start == NONE || strcmp(g->nodes[i].address, g->nodes[start].address) < 0))
			start = i;
	/*
	 * Every unplaced node depends on an unplaced node, so following such a
	 * dependency from start must come back to a node already on the path.
	 */
	cur = start;
	while (!seen[cur]) {
		size_t next = NONE;

		seen[cur] = ++step;
		path[step - 1] = cur;
		for (i = 0; i < g->nodes[cur].ndeps; i++) {
			size_t d = g->nodes[cur].deps[i];

			if (indeg[d] && (next == NONE ||
					 strcmp(g->nodes[d].address, g->nodes[next].address) < 0))
				next = d;
		}
		cur = next;
	}
	first = seen[cur] - 1;
	for (i = first; i < step; i++)
		sb_addf(&sb, "%s -> ", g->nodes[path[i]].address);
	sb_adds(&sb, g->nodes[cur].address);
	kiln_error_set(err, "the resources depend on each other in a cycle: %s", sb.buf);
	kiln_error_hint(err, "break the cycle: one of them must not depend on the next");
	sb_release(&sb);
	free(path);
	free(seen);
}

int graph_waves(const struct graph *g, size_t ***waves, size_t **nwave, size_t *count,
		struct kiln_error *err)
{
	/* indeg[i]: dependencies of i not yet placed; rdeps: who depends on i. */
	size_t *indeg = xcalloc(g->n + 1, sizeof(*indeg));
	size_t *rstart = xcalloc(g->n + 1, sizeof(*rstart));
	size_t *rdeps, *fill, *cur = xcalloc(g->n + 1, sizeof(*cur)), ncur = 0;
	size_t placed = 0, i, j, cap = 0;
	size_t total = 0;

	*waves = NULL;
	*nwave = NULL;
	*count = 0;
	for (i = 0; i < g->n; i++) {
		indeg[i] = g->nodes[i].ndeps;
		total += g->nodes[i].ndeps;
		for (j = 0; j < g->nodes[i].ndeps; j++)
			rstart[g->nodes[i].deps[j]]++;
	}
	/* Reverse edges in one array: rdeps[rstart[i] .. rstart[i + 1]) depend on i. */
	for (i = 0, j = 0; i <= g->n; i++) {
		size_t c = rstart[i];

		rstart[i] = j;
		j += c;
	}
	rdeps = xcalloc(total + 1, sizeof(*rdeps));
	fill = xcalloc(g->n + 1, sizeof(*fill));
	for (i = 0; i < g->n; i++)
		for (j = 0; j < g->nodes[i].ndeps; j++) {
			size_t d = g->nodes[i].deps[j];

			rdeps[rstart[d] + fill[d]++] = i;
		}
	for (i = 0; i < g->n; i++)
		if (!indeg[i])
			cur[ncur++] = i;
	while (ncur) {
		size_t *next = xcalloc(g->n + 1, sizeof(*next)), nnext = 0;
		size_t nw = *count;

		qsort_r(cur, ncur, sizeof(*cur), by_address, (void *)g);
		grow_array((void **)waves, &cap, nw + 1, sizeof(**waves));
		*nwave = xrealloc(*nwave, (nw + 1) * sizeof(**nwave));
		(*waves)[nw] = cur;
		(*nwave)[nw] = ncur;
		(*count)++;
		placed += ncur;
		for (i = 0; i < ncur; i++)
			for (j = rstart[cur[i]]; j < rstart[cur[i] + 1]; j++)
				if (--indeg[rdeps[j]] == 0)
					next[nnext++] = rdeps[j];
		cur = next;
		ncur = nnext;
	}
	free(cur);
	free(fill);
	free(rdeps);
	free(rstart);
	if (placed < g->n) {
		report_cycle(g, indeg, err);
		graph_waves_free(*waves, *nwave, *count);
		*waves = NULL;
		*nwave = NULL;
		*count = 0;
		free(indeg);
		return -1;
	}
	free(indeg);
	return 0;
}

void graph_waves_free(size_t **waves, size_t *nwave, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		free(waves[i]);
	free(waves);
	free(nwave);
}

/* A DOT identifier: the address quoted, with quotes and backslashes escaped. */
static void dot_quote(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_addc(sb, '\\');
		sb_addc(sb, *s);
	}
	sb_addc(sb, '"');
}

char *graph_dot(const struct graph *g, const char *name)
{
	struct strbuf sb = {0};
	size_t *order = xcalloc(g->n + 1, sizeof(*order)), i, j;

	for (i = 0; i < g->n; i++)
		order[i] = i;
	qsort_r(order, g->n, sizeof(*order), by_address, (void *)g);
	sb_adds(&sb, "digraph ");
	dot_quote(&sb, name);
	sb_adds(&sb, " {\n  rankdir = \"RL\";\n");
	for (i = 0; i < g->n; i++) {
		sb_adds(&sb, "  ");
		dot_quote(&sb, g->nodes[order[i]].address);
		sb_adds(&sb, ";\n");
	}
	for (i = 0; i < g->n; i++) {
		const struct node *nd = &g->nodes[order[i]];
		size_t *deps = xcalloc(nd->ndeps + 1, sizeof(*deps));

		if (nd->ndeps)
			memcpy(deps, nd->deps, nd->ndeps * sizeof(*deps));
		qsort_r(deps, nd->ndeps, sizeof(*deps), by_address, (void *)g);
		for (j = 0; j < nd->ndeps; j++) {
			sb_adds(&sb, "  ");
			dot_quote(&sb, nd->address);
			sb_adds(&sb, " -> ");
			dot_quote(&sb, g->nodes[deps[j]].address);
			sb_adds(&sb, ";\n");
		}
		free(deps);
	}
	sb_adds(&sb, "}\n");
	free(order);
	return sb_detach(&sb);
}
