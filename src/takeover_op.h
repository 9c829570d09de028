/*
 * takeover_op.h - kiln state takeover, run whole: open the spec's run under
 * the workspace's lock (making the state repository and the workspace when
 * missing, as apply does), take over what another state owns that the
 * filter picks and commit it (operation_takeover). It talks to the user only
 * through struct takeover_ui; nothing here prints.
 */
#ifndef KILN_TAKEOVER_OP_H
#define KILN_TAKEOVER_OP_H

#include "operation.h"

struct takeover_ui {
	struct op_ui base; /* arg, error and loaded */
	/*
	 * What was done (res->nothing: every live resource was this state's
	 * already); a failed check, claim or commit is said through base.error.
	 */
	void (*done)(void *arg, const struct op_run *r, const struct op_takeover_result *res);
};

struct takeover_op_options {
	struct op_options run; /* the spec's vars, the state, the workspace, the lock's wait */
	const char *spec;      /* the spec file */
	struct takeover_filter filter;
};

/* Run the takeover o asks for, whole, through ui: 0 done or nothing to do, -1 failed (said). */
int takeover_op_run(const struct takeover_op_options *o, const struct takeover_ui *ui);

#endif
