/*
 * health.h - what kiln knows of its nodes' health: each node group's
 * computed `nodes` (provider.h: every node with the health it reported
 * about itself) summed up per group, and the bounded wait after an apply
 * for the nodes of the groups it launched to report.
 *
 * A group whose nodes cannot report (no role: a node has no credentials
 * to tag itself) is said so and never waited for. Nothing here prints.
 */
#ifndef KILN_HEALTH_H
#define KILN_HEALTH_H

#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "engine.h"

/* The default bound of the wait (--health-timeout): GPU nodes boot slowly. */
#define HEALTH_TIMEOUT_DEFAULT (20 * 60)

/*
 * One group's health from its attrs: {"group", "address", "id", "nodes": N,
 * "healthy": N, "unhealthy": [{"id", "reason"}], "not_reported": [id...],
 * "can_report": bool, "why_not": text|null}. New reference.
 */
json_t *health_group(const char *address, const char *id, const json_t *attrs);
/* Every node has reported (or the group's nodes cannot report). */
bool health_group_settled(const json_t *group);
/* Some node is unhealthy or, when it can report, has not reported. */
bool health_group_bad(const json_t *group);
/*
 * The group's line: "trainers: 16 of 16 nodes healthy", "... 1 unhealthy:
 * i-0abc (7 of 8 GPUs ...)", "... 2 not reported after 20m: i-1, i-2";
 * waited is the wait's length ("20m"), or NULL when nothing was waited for
 * (status). Caller frees.
 */
char *health_line(const json_t *group, const char *waited);

/* The node groups (addresses) a plan creates, updates or replaces, sorted. */
json_t *health_touched(const struct engine *e, const json_t *plan);

/*
 * Poll the groups at addresses (recorded in state) through their type's
 * wait, one call per poll for all of them, every poll_ms, until every
 * node reported, timeout_s passed or a signal interrupted the run
 * (signals.h); tick (may be NULL) hears how it goes. *out: an array
 * of health_group objects, in the order of addresses. -1 with err when a
 * provider call failed after its retries.
 */
/* How many nodes of groups (health_group objects) reported, healthy or not; *nodes: of how many. */
size_t health_reported(const json_t *groups, size_t *nodes);

/*
 * How the wait goes, for a display: after each poll, and every second
 * between two, how many nodes reported (healthy or not) of how many, and
 * the seconds left of the bound.
 */
struct health_tick {
	void (*fn)(void *arg, size_t reported, size_t nodes, int64_t left_s);
	void *arg;
};

int health_wait(struct engine *e, const json_t *state, const json_t *addresses, int64_t timeout_s,
		long poll_ms, const struct health_tick *tick, json_t **out, struct kiln_error *err);

#endif
