/*
 * repair_op.h - kiln repair, run whole: open the run under the workspace's
 * lock, refresh, find the unhealthy nodes of the groups asked for
 * (repair.h), show them, ask, replace them and commit once (operation_repair),
 * then wait for the new nodes' health. It talks to the user only through
 * struct repair_ui, which the command provides; nothing here prints.
 */
#ifndef KILN_REPAIR_OP_H
#define KILN_REPAIR_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "operation.h"

/* How a repair ended, for the command's exit status. */
enum repair_op_status {
	REPAIR_OP_OK,	    /* done, or nothing to repair */
	REPAIR_OP_FAILED,   /* refused, or something failed: said through ui->base.error */
	REPAIR_OP_UNHEALTHY /* done and committed, but a new node is unhealthy or silent */
};

struct repair_ui {
	struct op_ui base; /* arg, error and loaded */
	/*
	 * The nodes about to be replaced (repair_targets' array), before
	 * anything is asked or changed; an empty array: nothing to repair.
	 */
	void (*plan)(void *arg, const struct op_run *r, const json_t *targets);
	/* question ("Do you want to ...?"): true only when the answer is yes. */
	bool (*ask)(void *arg, const char *question);
	/* What the replacements did; a failure is said after through base.error. */
	void (*done)(void *arg, const struct op_run *r, const struct op_repair_outcome *o);
	/* The wait for the new nodes' health begins, bounded by timeout seconds. */
	void (*health_waiting)(void *arg, int64_t timeout);
	/* While it waits: how many nodes reported, of how many, seconds left (may be NULL). */
	void (*health_tick)(void *arg, size_t reported, size_t nodes, int64_t left_s);
	/* What they reported (health.h's group objects), with the bound waited. */
	void (*health)(void *arg, const json_t *groups, int64_t timeout);
};

struct repair_op_options {
	struct op_options run; /* the spec's vars, the state, the workspace, the lock's wait */
	const char *spec;      /* the spec file */
	const char *const *groups; /* the groups named, or none: every node group */
	size_t ngroups;
	bool auto_approve;	/* do not ask */
	int64_t health_timeout; /* seconds to wait for the new nodes' health; 0: do not */
};

/* Run the repair o asks for, whole, through ui. */
enum repair_op_status repair_op_run(const struct repair_op_options *o, const struct repair_ui *ui);

#endif
