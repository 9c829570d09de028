/*
 * graph_plan.c - see graph_plan.h. The executor used to keep these rules in
 * its own build step, so a cycle among a plan's operations came to light
 * only when an apply stalled on it; the differ now checks the same graph.
 */
#include "graph_plan.h"
#include "jsonc.h"

#include <stdlib.h>
#include <string.h>

/* A no-op whose live secret the state lacks (a replayed journal holds none). */
static bool secret_missing(const json_t *recorded, const struct plan_change *c)
{
	json_t *r = json_object_get(recorded, c->address);
	const json_t *bs = c->before_sensitive, *v, *have;
	const char *k;

	json_object_foreach_const(bs, k, v)
	{
		have = json_object_get(json_object_get(r, "attrs"), k);
		if (json_is_true(v) && (!have || json_is_null(have)))
			return true;
	}
	return false;
}

static size_t one_op(struct plan_op *out, enum plan_op_kind kind, const char *label, const char *id)
{
	out->kind = kind;
	out->label = label;
	out->id = id;
	return 1;
}

size_t graph_plan_ops(const struct plan_change *c, const json_t *recorded, bool reread_secrets,
		      struct plan_op out[2])
{
	const char *id = c->id;
	bool importing = c->importing != NULL;

	out[0].change = out[1].change = c;
	out[0].addr = out[1].addr = c->address;
	if (c->deposed)
		return one_op(&out[0], PLAN_OP_DELETE_DUP, "delete duplicate", c->deposed);
	switch (c->action) {
	case PLAN_NO_OP: {
		bool reread = !importing && id && reread_secrets && secret_missing(recorded, c);

		if (!importing && !reread)
			return 0;
		return one_op(&out[0], PLAN_OP_ADOPT, reread ? "read secret" : "adopt", id);
	}
	case PLAN_CREATE:
		return one_op(&out[0], PLAN_OP_CREATE, "create", NULL);
	case PLAN_UPDATE:
		return one_op(&out[0], PLAN_OP_UPDATE, "update", id);
	case PLAN_DELETE_CREATE:
	case PLAN_CREATE_DELETE:
		one_op(&out[0], PLAN_OP_DELETE, "replace: delete old", id);
		return 1 + one_op(&out[1], PLAN_OP_CREATE, "replace", NULL);
	case PLAN_DELETE:
		break;
	}
	return one_op(&out[0], c->retain ? PLAN_OP_RELEASE : PLAN_OP_DELETE,
		      c->retain ? "release" : "delete", id);
}

/* to waits for from. */
static void edge(struct graph *g, size_t from, size_t to)
{
	if (from != to)
		graph_link(g, to, from);
}

static bool applies(enum plan_op_kind k)
{
	return k == PLAN_OP_CREATE || k == PLAN_OP_UPDATE || k == PLAN_OP_ADOPT;
}

static bool deletes(enum plan_op_kind k)
{
	return k == PLAN_OP_DELETE || k == PLAN_OP_DELETE_DUP || k == PLAN_OP_RELEASE;
}

/* The index an address maps to in ix, or (size_t)-1. */
static size_t index_of(const json_t *ix, const char *address)
{
	const json_t *v = address ? json_object_get(ix, address) : NULL;

	return v ? (size_t)json_integer_value(v) : (size_t)-1;
}

#define NONE ((size_t)-1)

/* Whether the plan's change c needs the resource at dep only created (kiln.created_only). */
static bool needs_created(const struct plan_change *c, const char *dep)
{
	const json_t *a;
	size_t i;

	json_array_foreach(c->created_only, i, a)
	{
		if (strcmp(json_string_value(a), dep) == 0)
			return true;
	}
	return false;
}

/*
 * Creates and updates after what they need, and after what the provider
 * orders first: once it is created where that is all they need, else once
 * it is ready.
 */
static void order_applies(struct graph *g, const struct plan_op *ops, size_t n,
			  const json_t *apply_index)
{
	size_t i, k, key, ix;
	json_t *dep;

	for (i = 0; i < n; i++) {
		if (!applies(ops[i].kind))
			continue;
		for (key = 0; key < 2; key++)
			json_array_foreach(key ? ops[i].change->kiln_after : ops[i].change->deps, k,
					   dep)
			{
				const char *d = json_string_value(dep);

				ix = index_of(apply_index, d);
				if (ix == NONE || ix == i)
					continue;
				graph_link_kind(g, i, ix,
						needs_created(ops[i].change, d) ? GRAPH_EDGE_CREATED
										: GRAPH_EDGE_READY);
			}
	}
}

/* Deletes after whatever used the resource has gone or stopped using it. */
static void order_deletes(struct graph *g, const struct plan_op *ops, size_t n,
			  const json_t *recorded, const json_t *apply_index,
			  const json_t *delete_index)
{
	const char *addr;
	json_t *r, *dep;
	size_t i, k, ix;

	json_object_foreach_const(recorded, addr, r)
	{
		size_t user_del = index_of(delete_index, addr);
		size_t user_upd = index_of(apply_index, addr);

		json_array_foreach(json_object_get(r, "deps"), k, dep)
		{
			ix = index_of(delete_index, json_string_value(dep));
			if (ix == NONE)
				continue;
			if (user_del != NONE)
				edge(g, user_del, ix);
			if (user_upd != NONE && ops[user_upd].kind == PLAN_OP_UPDATE)
				edge(g, user_upd, ix);
		}
	}
	/* And by the plan's deps, for what is live but was never recorded (orphans). */
	for (i = 0; i < n; i++) {
		if (!deletes(ops[i].kind))
			continue;
		json_array_foreach(ops[i].change->deps, k, dep)
		{
			ix = index_of(delete_index, json_string_value(dep));
			if (ix != NONE && ix != i)
				edge(g, i, ix);
		}
	}
}

void graph_plan_forget_drifted(const struct plan_view *plan, json_t *recorded)
{
	size_t i;

	for (i = 0; i < plan->ndrift; i++)
		if (plan->drift[i].action == PLAN_DELETE)
			json_object_del(recorded, plan->drift[i].address);
}

struct graph *graph_plan_order(const struct plan_op *ops, size_t n, const json_t *recorded)
{
	struct graph *g = graph_new();
	json_t *apply_index = json_object(), *delete_index = json_object();
	size_t i;

	for (i = 0; i < n; i++) {
		char *label = xasprintf("%s (%s)", ops[i].addr, ops[i].label);

		graph_add_node(g, label);
		free(label);
		if (ops[i].kind == PLAN_OP_DELETE || ops[i].kind == PLAN_OP_RELEASE)
			json_object_set_new(delete_index, ops[i].addr, json_integer((json_int_t)i));
		else if (applies(ops[i].kind))
			json_object_set_new(apply_index, ops[i].addr, json_integer((json_int_t)i));
		/* A replace creates the new one after the old one is gone. */
		if (ops[i].kind == PLAN_OP_CREATE && i > 0 && ops[i - 1].change == ops[i].change)
			edge(g, i - 1, i);
	}
	order_applies(g, ops, n, apply_index);
	order_deletes(g, ops, n, recorded, apply_index, delete_index);
	json_decref(apply_index);
	json_decref(delete_index);
	return g;
}

int graph_plan_check(const struct plan_view *plan, const json_t *recorded, struct kiln_error *err)
{
	json_t *rec = recorded ? jsonc_copy(recorded) : json_object();
	struct plan_op *ops = xcalloc(2 * plan->nchanges + 1, sizeof(*ops));
	struct graph *g;
	size_t i, n = 0;
	char *cycle;
	int ret = 0;

	graph_plan_forget_drifted(plan, rec);
	/* Every secret that could be read again is: the most operations apply can have. */
	for (i = 0; i < plan->nchanges; i++)
		n += graph_plan_ops(&plan->changes[i], rec, true, &ops[n]);
	g = graph_plan_order(ops, n, rec);
	cycle = graph_cycle(g);
	if (cycle) {
		kiln_error_set(err,
			       "the plan's operations wait for each other in a cycle (each waits "
			       "for the next): %s",
			       cycle);
		kiln_error_hint(err, "the deps the state records and the deps the spec gives "
				     "order them both ways; `kiln log -p` shows how the state's "
				     "deps changed: point the workspace back at its last good "
				     "commit, or change the spec so one no longer needs the next");
		ret = -1;
	}
	free(cycle);
	graph_free(g);
	free(ops);
	json_decref(rec);
	return ret;
}
