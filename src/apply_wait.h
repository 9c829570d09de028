/*
 * apply_wait.h - the wait rule of apply --wait: when capacity bought for a
 * window (a Capacity Block) has not started, apply again every poll until
 * the nodes launch into it, up to --wait-timeout; after a plan file, only
 * while the spec is the one it was made from, as an edit made while
 * waiting would be applied unreviewed.
 *
 * Rules over plain inputs: the clocks come in as arguments (now on the
 * wall clock, mono_ms on a monotonic one), and nothing here sleeps, prints
 * or exits. Each refusal says how it reads: a bound on one line ("MSG;
 * HINT", cli_error), or a refused round with its hint on a line of its own
 * (cmd_report).
 */
#ifndef KILN_APPLY_WAIT_H
#define KILN_APPLY_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base.h"

/* --wait's default bound: a CI job's usual ceiling (GitHub Actions stops a job at 6 h). */
#define APPLY_WAIT_TIMEOUT_DEFAULT (6 * 3600)
/* The longest bound: the longest a Capacity Block runs. */
#define APPLY_WAIT_TIMEOUT_MAX (182LL * 86400)

struct apply_wait {
	bool on;	    /* --wait (or --wait-timeout) */
	const char *arg;    /* --wait-timeout, or NULL */
	int64_t timeout;    /* seconds; 0: until the window ends */
	bool started;	    /* the first round ended: first_ms and until are set */
	int64_t first_ms;   /* when, on the monotonic clock */
	int64_t until;	    /* then, on the wall clock, plus timeout */
	/*
	 * After a saved plan: the plan file, the spec digest it was made from,
	 * its spec file and workspace, which later rounds keep to; owned.
	 */
	char *held_plan, *held_digest, *held_spec, *held_ws;
};

/*
 * The bound: w->arg, else env (KILN_WAIT_TIMEOUT's value, NULL or "" when
 * unset), else APPLY_WAIT_TIMEOUT_DEFAULT; "0" waits until the window
 * ends. -1 with err (one line) when it is not a duration of at most 182d.
 */
int apply_wait_timeout_parse(struct apply_wait *w, const char *env, struct kiln_error *err);

/*
 * After a round that did not finish: the window (expiry_windows' object)
 * to wait for, the first of state's that has not ended, when it starts
 * within the bound. 1 with *window (a new reference) and *sleep_ms, the
 * poll (poll_ms) or, when less is left of the bound, what is left; 0 when
 * there is none; -1 with err (one line) when it starts past the bound, or
 * the bound ran out. The first call starts the bound's clock.
 */
int apply_wait_next(struct apply_wait *w, const json_t *state, int64_t now, int64_t mono_ms,
		    long poll_ms, json_t **window, long *sleep_ms, struct kiln_error *err);

/*
 * Whether window can still start in time: true, or false with err (one
 * line: it starts past the bound, or the bound ran out by mono_ms).
 */
bool apply_wait_in_bound(struct apply_wait *w, const json_t *window, int64_t now, int64_t mono_ms,
			 struct kiln_error *err);

/*
 * Keep to a saved plan across rounds: its file, the digest of the spec it
 * was made from (NULL: none), its spec file and workspace (either NULL).
 */
void apply_wait_hold(struct apply_wait *w, const char *plan_file, const char *digest,
		     const char *spec, const char *workspace);

/*
 * A later round after a saved plan: 0 while the spec's digest is still
 * the one the plan was made from (or no plan is held); -1 with err (its
 * hint on a line of its own) when spec_path changed while waiting.
 */
int apply_wait_held_check(const struct apply_wait *w, const char *spec_digest,
			  const char *spec_path, struct kiln_error *err);

void apply_wait_release(struct apply_wait *w);

#endif
