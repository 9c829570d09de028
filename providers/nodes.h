/*
 * nodes.h - a node group's per-node live view, the computed attribute
 * `nodes` every provider's node-group type carries: one object per node,
 * oldest launch first (ties by id), with its place in that order, its
 * zone, addresses, state, launch time and the health it reported about
 * itself (the kiln:health report, read here as hostile input).
 */
#ifndef KILN_PROV_NODES_H
#define KILN_PROV_NODES_H

#include <jansson.h>

/* The longest health report a node may give (the tag value's limit). */
#define PROV_HEALTH_MAX 256

/* The tag a node puts on itself to report its health. */
#define PROV_TAG_HEALTH "kiln:health"

/*
 * One node: {"id", "index": 0, "zone", "private_ip", "public_ip", "state",
 * "launched", "health", "health_reason"}; NULL strings become null, and
 * report (the node's kiln:health value, NULL when it has none) is read
 * by nodes_health. The index is set by nodes_order.
 */
json_t *nodes_new(const char *id, const char *zone, const char *private_ip, const char *public_ip,
		  const char *state, const char *launched, const char *report);
/*
 * A health report -> *health ("healthy", "unhealthy" or NULL when report
 * is NULL) and *reason (malloc'd, or NULL): the text after the first ':'.
 * A report that does not start with "healthy:" or "unhealthy:", is longer
 * than PROV_HEALTH_MAX or is not UTF-8 is "unhealthy" with the reason
 * "unreadable health report: ..." quoting a printable part of it.
 */
void nodes_health(const char *report, const char **health, char **reason);
/* Sort nodes oldest launch first (ties by id; no launch time last) and number them. */
void nodes_order(json_t *nodes);

#endif
