/*
 * report.h - `kiln report`'s figures: every cluster lifetime the state
 * repository remembers (every workspace branch, archived ones included),
 * costed from the ledger its commits carry (ledger.h).
 *
 * A lifetime runs from the commit that gave a workspace its first resource
 * to the commit that left it none (its destroy), or to now. Its cost is the
 * integral of the recorded burn between commits plus the upfront fees its
 * commits recorded; a stretch after a commit that recorded no burn (history
 * from before the ledger, a state edit) makes the lifetime's cost and
 * GPU-hours unknown, never $0. Useful GPU-hours are GPU-hours times the mean
 * GPU utilization, over the stretches where utilization was recorded.
 */
#ifndef KILN_REPORT_H
#define KILN_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "store.h"

struct report_options {
	int64_t now;	/* the clock (KILN_NOW) */
	bool has_since; /* count only what burned from since on */
	int64_t since;
	const char *by; /* "workspace", "cluster" or "tag:KEY" */
};

/* 0 when by is a grouping report_build knows; else -1 with err naming the keys. */
int report_by_check(const char *by, struct kiln_error *err);
/* --since: RFC 3339 or YYYY-MM-DD (midnight UTC). -1 with err when neither. */
int report_since_parse(const char *s, int64_t *out, struct kiln_error *err);

/*
 * The report document (kiln-report(1), JSON OUTPUT): "lifetimes", "groups",
 * "total", each lifetime with its cost series, utilization stretches and
 * "stretches" (burn, its compute and storage shares, budget, GPUs and
 * utilization between two commits, for the HTML page's charts), and the
 * FinOps figures: cost by kind, idle GPU-hours, retained and orphaned
 * storage (ledger.h's Kiln-Burn-Compute, -Storage, Kiln-Budget, Kiln-Retained).
 */
int report_build(struct store *s, const struct report_options *o, json_t **out,
		 struct kiln_error *err);

/*
 * The running lifetime of workspace ws at now, costed exactly as
 * report_build costs it (the same walk of the same ledger): `kiln status`'s
 * cost so far, so the two agree to the cent at one instant whatever the
 * resizes and up-front purchases between. *out: the lifetime object of
 * kiln-report(1)'s JSON ("start", "cost", "cost_known", "upfront",
 * "hours", "gpu_hours"...) with "burn" and "gpus", what burns after its
 * last commit (null when not recorded), or NULL when the workspace has no branch or
 * holds nothing now.
 */
int report_workspace(struct store *s, const char *ws, int64_t now, json_t **out,
		     struct kiln_error *err);

#endif
