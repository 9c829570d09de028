/*
 * reap_op.h - kiln reap, run whole: walk every workspace of the state
 * repository, decide for each whether its TTL (or a capacity window) has
 * passed or its GPUs sat idle as its spec's idle: policy says (measured
 * through its provider), and destroy those (operation_destroy, under each one's
 * lock, the expiry checked again there). It talks to the user only through
 * struct reap_ui, which the command provides; nothing here prints.
 *
 * The destroy needs the spec (the provider and its settings come from it):
 * the file recorded in the expiry by the last apply ("spec"), read relative
 * to where reap runs, as the CI job runs from the repository root; or, when
 * that has moved or gone, the copy of its text recorded beside it
 * ("spec_text").
 */
#ifndef KILN_REAP_OP_H
#define KILN_REAP_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "operation.h"

struct reap_ui {
	struct op_ui base; /* arg, error and loaded (of each destroy's run) */
	/*
	 * One workspace's outcome once decided: {"workspace", "outcome" (kept,
	 * reaped, would reap, skipped or failed), and "reason", "expires",
	 * "left_seconds", "window", "idle", "spec", "deleted", "retained",
	 * "resources" as they apply} (kiln-reap(1), --json).
	 */
	void (*workspace)(void *arg, const json_t *outcome);
	/* A destroy's resources that failed ({"address", "op", "error"} each). */
	void (*failures)(void *arg, const json_t *errors);
};

struct reap_op_options {
	const char *state;    /* the state repository, NULL for the default */
	int64_t lock_timeout; /* seconds to wait for a held lock; 0: skip the workspace */
	struct spec_options vars; /* --var, for every destroy */
	bool dry_run;		  /* say what would be reaped; change nothing */
	int64_t now;		  /* the clock (timefmt_now) */
	int parallelism;
};

struct reap_op_result {
	json_t *workspaces; /* every workspace's outcome, in order; a new reference */
	size_t reaped, failed;
	char *location; /* where the state repository is; caller frees */
};

/*
 * Run the reap o asks for, whole, through ui. -1 after saying why when the
 * state repository cannot be read; else 0 with out filled (out->failed
 * counting the workspaces whose destroy or measure failed). Release out
 * with reap_op_result_release.
 */
int reap_op_run(const struct reap_op_options *o, const struct reap_ui *ui,
		struct reap_op_result *out);
void reap_op_result_release(struct reap_op_result *out);

#endif
