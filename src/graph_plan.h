/*
 * graph_plan.h - a plan's operations and the order they must run in, as a
 * graph (graph.h): what the executor walks, and what the differ checks for
 * a cycle before it hands out a plan, so a plan that could never finish is
 * refused when it is made, not halfway through an apply.
 *
 * Owns the rules of order only; running the operations is apply.c's, and
 * deciding the changes diff.c's. It reads the plan's view (plan.h) and the
 * recorded resources of a state; it calls no provider and changes nothing.
 */
#ifndef KILN_GRAPH_PLAN_H
#define KILN_GRAPH_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "graph.h"
#include "plan.h"
#include "util.h"

enum plan_op_kind {
	PLAN_OP_CREATE,
	PLAN_OP_UPDATE,
	PLAN_OP_ADOPT,
	PLAN_OP_DELETE,
	PLAN_OP_RELEASE,
	PLAN_OP_DELETE_DUP,
};

/* One provider operation a change asks for. Everything is borrowed from the plan's view. */
struct plan_op {
	enum plan_op_kind kind;
	const struct plan_change *change; /* its entry of resource_changes */
	const char *addr;
	/* As apply_event.op says it: "create", "replace: delete old", "read secret"... */
	const char *label;
	const char *id; /* the live id it acts on, or NULL (a create) */
};

/*
 * The operations one entry of resource_changes asks for, in out[], in the
 * order apply starts them: none (a no-op that needs no call), one, or two
 * (a replace: the old one deleted, then the new one created). A no-op is
 * read again (an adopt labelled "read secret") when reread_secrets is set
 * and recorded lacks a secret the live resource holds.
 */
size_t graph_plan_ops(const struct plan_change *change, const json_t *recorded, bool reread_secrets,
		      struct plan_op out[2]);

/*
 * A resource deleted outside kiln that the plan does not want again
 * (resource_drift says delete): forgotten from recorded, before its
 * operations are made and ordered.
 */
void graph_plan_forget_drifted(const struct plan_view *plan, json_t *recorded);

/*
 * The order of ops[0..n): node i is ops[i], labelled "ADDRESS (LABEL)", and
 * depends on what must be done before it. Creates, updates and adoptions
 * come after the creates, updates and adoptions of what they use (the
 * plan's deps and after); deletes come after the deletes of whatever used
 * the resource (recorded deps and the plan's), and updates of a user before
 * the delete of what it stops using; a replace creates after it deletes.
 */
struct graph *graph_plan_order(const struct plan_op *ops, size_t n, const json_t *recorded);

/*
 * 0 when the operations of plan (its view), over the resources state records
 * (state_resources(); NULL for none), can all run; -1 with err naming the
 * operations that wait for each other in a cycle, and the fix.
 */
int graph_plan_check(const struct plan_view *plan, const json_t *recorded, struct kiln_error *err);

#endif
