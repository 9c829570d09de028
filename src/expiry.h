/*
 * expiry.h - a workspace's TTL: when it expires, who set that, and what
 * `kiln reap` decides from it.
 *
 * The expiry lives in the state document, top-level:
 *   "expiry": {"ttl_seconds": 28800, "expires": "2026-11-30T14:00:00Z",
 *              "set_by": "Ann <ann@example.com>", "set_at": "2026-11-30T06:00:00Z",
 *              "set_how": "spec ttl" | "--ttl" | "ttl extend", "spec": "kiln.yaml"}
 * The state is the source of truth; the kiln:expires tag on each resource is
 * the expiry when that resource was created.
 *
 * The rule at apply: the first apply that creates the cluster sets
 * expires = now + ttl; later applies keep it (an apply is not activity that
 * buys time: `kiln ttl extend` is); --ttl, or a spec ttl that differs from
 * the recorded one, sets it again from now; no ttl at all removes it. A
 * destroy that leaves nothing removes it.
 */
#ifndef KILN_EXPIRY_H
#define KILN_EXPIRY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "util.h"

/*
 * The expiry an apply records, given the recorded one (NULL when none),
 * the ttl in seconds (0: none) and whether it came from --ttl. A new
 * reference, or NULL when the workspace has no TTL. spec may be NULL.
 */
json_t *expiry_at_apply(const json_t *recorded, int64_t ttl, bool from_flag, int64_t now,
			const char *author, const char *spec);

/*
 * `kiln ttl extend BY`: BY past the recorded expiry, or past now when it
 * has already passed (an expired cluster gets BY from now, not less). A new
 * reference, or NULL with err when nothing is recorded.
 */
json_t *expiry_extend(const json_t *recorded, int64_t by, int64_t now, const char *author,
		      const char *workspace, struct kiln_error *err);

/* The recorded expiry time: 1 and *t, 0 when none (or unreadable). */
int expiry_time(const json_t *expiry, int64_t *t);

enum reap_decision {
	REAP_NO_TTL,  /* nothing recorded: kept until destroyed */
	REAP_KEEP,    /* not expired yet; *left is the seconds remaining */
	REAP_EMPTY,   /* expired, but nothing left to destroy */
	REAP_DESTROY, /* expired with resources: destroy */
};

/* What reap does with a workspace's state (NULL: no state); *left = expires - now. */
enum reap_decision expiry_reap_decision(const json_t *state, int64_t now, int64_t *left);

/*
 * Capacity bought for a window (a Capacity Block) ends the cluster with it:
 * a resource whose attrs hold "capacity_end" (RFC 3339) is a hard expiry.
 * kiln reap takes the cluster down EXPIRY_WINDOW_MARGIN before the earliest
 * such end: EC2 starts terminating a block's instances 30 minutes before
 * its end (EC2 user guide, "Monitor Capacity Blocks"), and checkpoints need
 * the half hour before that to land.
 */
#define EXPIRY_WINDOW_MARGIN (60 * 60)

/* The earliest capacity_end of the state's resources: 1, *t and its address; 0 when none. */
int expiry_window_end(const json_t *state, int64_t *t, const char **address);
/*
 * The windows, for kiln status: a new array of {"address", "id", "start",
 * "end", "state" (scheduled, active or ended, by the clock), "reap_at",
 * "left_seconds" (to reap_at)}.
 */
json_t *expiry_windows(const json_t *state, int64_t now);
/*
 * For a workspace without a TTL that holds a window: "kiln reap takes it
 * down at TIME, an hour before ADDRESS ends" (new), or NULL without one.
 */
char *expiry_window_sentence(const json_t *state);
/* 0 when the expiry x ends no later than the windows allow, else -1 with err. */
int expiry_within_windows(const json_t *state, const json_t *x, struct kiln_error *err);

/* "3h20m" or "expired 5m ago" style left time: "2h0m", rounded down to minutes. Caller frees. */
char *expiry_left_format(int64_t left);

#endif
