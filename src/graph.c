/*
 * graph.c - see graph.h. Each node keeps both directions of its edges (what
 * it depends on, and what depends on it), so walks either way, Kahn's
 * algorithm and the ranks need no reverse index built per call. A cycle is
 * found by walking dependencies among the nodes Kahn could not place.
 */
#include "graph.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct node {
	char *address;
	size_t *deps;	      /* indexes of what this node depends on, in the order linked */
	unsigned char *kinds; /* enum graph_edge of each of deps, NULL while all are ready */
	size_t capkinds;
	size_t ndeps;
	size_t capdeps;
	size_t *users; /* indexes of what depends on this node, in the order linked */
	size_t nusers;
	size_t capusers;
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
		free(g->nodes[i].kinds);
		free(g->nodes[i].users);
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

size_t graph_add_node(struct graph *g, const char *label)
{
	struct node *nd = ARRAY_PUSH(g->nodes, g->n, g->cap);

	memset(nd, 0, sizeof(*nd));
	nd->address = xstrdup(label);
	return g->n - 1;
}

size_t graph_add(struct graph *g, const char *address)
{
	size_t i = graph_find(g, address);

	if (i != NONE)
		return i;
	if ((g->n + 1) * 2 > g->nslots)
		rehash(g);
	i = graph_add_node(g, address);
	*slot_for(g, address) = i + 1;
	return i;
}

size_t graph_size(const struct graph *g)
{
	return g->n;
}

const char *graph_address(const struct graph *g, size_t index)
{
	return g->nodes[index].address;
}

void graph_link_kind(struct graph *g, size_t node, size_t dependency, enum graph_edge kind)
{
	struct node *nd = &g->nodes[node], *dep = &g->nodes[dependency];
	size_t i;

	/* A node depends on few, while many may depend on one: look on the short side. */
	for (i = 0; i < nd->ndeps; i++)
		if (nd->deps[i] == dependency)
			break;
	if (i == nd->ndeps) {
		*ARRAY_PUSH(nd->deps, nd->ndeps, nd->capdeps) = dependency;
		*ARRAY_PUSH(dep->users, dep->nusers, dep->capusers) = node;
	} else if (kind == GRAPH_EDGE_CREATED || !nd->kinds) {
		return; /* linked before, and ready wins: nothing changes */
	}
	if (kind == GRAPH_EDGE_READY && !nd->kinds)
		return;
	/* kinds grows with deps, zeroed: every edge linked before it was made is ready. */
	{
		size_t old = nd->capkinds;

		kiln_array_grow((void **)&nd->kinds, &nd->capkinds, nd->ndeps, 1);
		memset(nd->kinds + old, 0, nd->capkinds - old);
	}
	nd->kinds[i] = (unsigned char)kind;
}

void graph_link(struct graph *g, size_t node, size_t dependency)
{
	graph_link_kind(g, node, dependency, GRAPH_EDGE_READY);
}

enum graph_edge graph_edge_kind(const struct graph *g, size_t node, size_t dependency)
{
	const struct node *nd = &g->nodes[node];
	size_t i;

	for (i = 0; nd->kinds && i < nd->ndeps; i++)
		if (nd->deps[i] == dependency)
			return (enum graph_edge)nd->kinds[i];
	return GRAPH_EDGE_READY;
}

const size_t *graph_deps(const struct graph *g, size_t index, size_t *n)
{
	*n = g->nodes[index].ndeps;
	return g->nodes[index].deps;
}

const size_t *graph_users(const struct graph *g, size_t index, size_t *n)
{
	*n = g->nodes[index].nusers;
	return g->nodes[index].users;
}

int graph_depend(struct graph *g, const char *node, const char *dependency, struct kiln_error *err)
{
	size_t a = graph_find(g, node), b = graph_find(g, dependency);

	if (a == NONE) {
		kiln_error_set(err, "%s is not a resource of this graph", node);
		return -1;
	}
	if (b == NONE) {
		kiln_error_set(err, "%s depends on %s, which is not defined", node, dependency);
		return -1;
	}
	graph_link(g, a, b);
	return 0;
}

/* qsort_r's argument: a pointer to the graph pointer, so the graph stays const. */
static int by_address(const void *a, const void *b, void *arg)
{
	const struct graph *g = *(const struct graph **)arg;

	return strcmp(g->nodes[*(const size_t *)a].address, g->nodes[*(const size_t *)b].address);
}

/* A cycle among the unplaced nodes (left[i] > 0), as "a -> b -> ... -> a". */
static char *cycle_text(const struct graph *g, const size_t *left)
{
	size_t *seen =
	    xcalloc(g->n, sizeof(*seen)); /* step at which a node was visited, 0 = never */
	size_t *path = xcalloc(g->n + 1, sizeof(*path));
	size_t start = NONE, cur, step = 0, i, first;
	struct strbuf sb = {0};

	/* The smallest unplaced address, so the report is the same every time. */
	for (i = 0; i < g->n; i++)
		if (left[i] &&
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

			if (left[d] && (next == NONE ||
					strcmp(g->nodes[d].address, g->nodes[next].address) < 0))
				next = d;
		}
		cur = next;
	}
	first = seen[cur] - 1;
	for (i = first; i < step; i++)
		sb_addf(&sb, "%s -> ", g->nodes[path[i]].address);
	sb_adds(&sb, g->nodes[cur].address);
	free(path);
	free(seen);
	return sb_detach(&sb);
}

/*
 * Kahn's algorithm: order[] gets every node that can be placed, each after
 * all it depends on, wave by wave (a wave is what the previous ones freed,
 * in the order they freed it); left[i] is what i still waits for (0 for a
 * placed node). Returns how many were placed: fewer than g->n on a cycle.
 */
static size_t topo_order(const struct graph *g, size_t *order, size_t *left)
{
	size_t head = 0, tail = 0, i, k;

	for (i = 0; i < g->n; i++) {
		left[i] = g->nodes[i].ndeps;
		if (left[i] == 0)
			order[tail++] = i;
	}
	while (head < tail) {
		const struct node *nd = &g->nodes[order[head++]];

		for (k = 0; k < nd->nusers; k++)
			if (--left[nd->users[k]] == 0)
				order[tail++] = nd->users[k];
	}
	return tail;
}

/* The error for a cycle (text is freed). */
static void cycle_error(char *text, struct kiln_error *err)
{
	kiln_error_set(err, "the resources depend on each other in a cycle: %s", text);
	kiln_error_hint(err, "break the cycle: one of them must not depend on the next");
	free(text);
}

int graph_check(const struct graph *g, struct kiln_error *err)
{
	char *cycle = graph_cycle(g);

	if (!cycle)
		return 0;
	cycle_error(cycle, err);
	return -1;
}

char *graph_cycle(const struct graph *g)
{
	size_t *order = xcalloc(g->n + 1, sizeof(*order)), *left = xcalloc(g->n + 1, sizeof(*left));
	char *text = NULL;

	if (topo_order(g, order, left) < g->n)
		text = cycle_text(g, left);
	free(order);
	free(left);
	return text;
}

void graph_ranks(const struct graph *g, size_t *rank)
{
	size_t *order = xcalloc(g->n + 1, sizeof(*order)), *left = xcalloc(g->n + 1, sizeof(*left));
	size_t tail = topo_order(g, order, left), i, k;

	for (i = 0; i < g->n; i++)
		rank[i] = 1;
	/* Users before what they use: each rank is final when its node is reached. */
	while (tail > 0) {
		const struct node *nd = &g->nodes[order[--tail]];
		size_t *r = &rank[order[tail]];

		for (k = 0; k < nd->nusers; k++)
			if (rank[nd->users[k]] + 1 > *r)
				*r = rank[nd->users[k]] + 1;
	}
	free(order);
	free(left);
}

void graph_walk(const struct graph *g, size_t start, bool to_users,
		bool (*visit)(void *arg, size_t index), void *arg)
{
	size_t *stack = NULL, top = 0, cap = 0, k, n;
	const size_t *next;

	if (!visit(arg, start))
		return;
	*ARRAY_PUSH(stack, top, cap) = start;
	while (top > 0) {
		size_t cur = stack[--top];

		next = to_users ? graph_users(g, cur, &n) : graph_deps(g, cur, &n);
		for (k = 0; k < n; k++)
			if (visit(arg, next[k]))
				*ARRAY_PUSH(stack, top, cap) = next[k];
	}
	free(stack);
}

int graph_waves(const struct graph *g, size_t ***waves, size_t **nwave, size_t *count,
		struct kiln_error *err)
{
	size_t *order = xcalloc(g->n + 1, sizeof(*order)), *left = xcalloc(g->n + 1, sizeof(*left));
	size_t placed = topo_order(g, order, left), *wave = xcalloc(g->n + 1, sizeof(*wave));
	size_t i, k, cap = 0;
	int rc = -1;

	*waves = NULL;
	*nwave = NULL;
	*count = 0;
	if (placed < g->n) {
		cycle_error(cycle_text(g, left), err);
		goto out;
	}
	/* A node's wave is one more than the latest wave of what it depends on. */
	for (i = 0; i < g->n; i++) {
		const struct node *nd = &g->nodes[order[i]];

		for (k = 0; k < nd->ndeps; k++)
			if (wave[nd->deps[k]] + 1 > wave[order[i]])
				wave[order[i]] = wave[nd->deps[k]] + 1;
	}
	for (i = 0; i < g->n; i++)
		if (wave[i] + 1 > *count)
			*count = wave[i] + 1;
	kiln_array_grow((void **)waves, &cap, *count + 1, sizeof(**waves));
	*nwave = xcalloc(*count + 1, sizeof(**nwave));
	for (i = 0; i < g->n; i++)
		(*nwave)[wave[i]]++;
	for (i = 0; i < *count; i++) {
		(*waves)[i] = xcalloc((*nwave)[i] + 1, sizeof(***waves));
		(*nwave)[i] = 0;
	}
	for (i = 0; i < g->n; i++)
		(*waves)[wave[i]][(*nwave)[wave[i]]++] = i;
	for (i = 0; i < *count; i++)
		qsort_r((*waves)[i], (*nwave)[i], sizeof(***waves), by_address, &g);
	rc = 0;
out:
	free(wave);
	free(order);
	free(left);
	return rc;
}

void graph_waves_free(size_t **waves, size_t *nwave, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		free(waves[i]);
	free(waves);
	free(nwave);
}
