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

/* "3h20m" or "expired 5m ago" style left time: "2h0m", rounded down to minutes. Caller frees. */
char *expiry_left_format(int64_t left);

#endif
