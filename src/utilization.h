/*
 * utilization.h - how much of what a workspace burns turns into work: GPU
 * utilization per node group, its Lustre stores' throughput against what
 * the spec provisioned, and the diagnosis kiln status shows and kiln reap's
 * idle policy acts on. Measured through the provider's metrics hook; this
 * file names no cloud.
 */
#ifndef KILN_UTILIZATION_H
#define KILN_UTILIZATION_H

#include <stdint.h>

#include <jansson.h>

#include "engine.h"

/* Default --window: 15 minutes. */
#define UTIL_DEFAULT_WINDOW (15 * 60)
/* Under this mean GPU utilization a group counts as starved when its storage is saturated. */
#define UTIL_BUSY 50.0
/* A Lustre store at this share of its provisioned throughput is saturated. */
#define UTIL_SATURATED 80.0

/* 0, or -1 with err when window is shorter than the metric period (the --window message). */
int utilization_window_check(int64_t window, struct kiln_error *err);

/*
 * Measure resources ({address: resource}) over [now - window, now) and
 * diagnose each node group: *out is a new {"window_seconds", "simulated",
 * "calls", "groups": [...], "stores": [...]} (kiln-status(1), JSON), or
 * NULL when the provider cannot measure. -1 with err when a call failed.
 */
int utilization_measure(const struct engine *e, const json_t *resources, int64_t now,
			int64_t window, json_t **out, struct kiln_error *err);

/*
 * The diagnosis alone, from what the provider answered (its metrics hook's
 * document): pure, for tests. e may be NULL (no fix is priced then).
 */
json_t *utilization_diagnose(const struct engine *e, const json_t *measured, int64_t window);

/*
 * The mean GPU utilization of resources' GPU nodes over [start, end), one
 * sample a node spanning the stretch (the ledger's Kiln-GPU-Util): 0 with
 * *mean when any node reported, 1 when none did or the provider cannot
 * measure, -1 with err when a call failed.
 */
int utilization_mean(const struct engine *e, const json_t *resources, int64_t start, int64_t end,
		     double *mean, struct kiln_error *err);

/* The idle policy of the group at address: its own, else the spec's, else NULL. */
const struct spec_idle *utilization_idle_policy(const struct spec *spec, const char *address);
/*
 * The node groups state records that an idle: policy of e's spec covers,
 * address -> resource in a new object: empty when none is, or when e's
 * provider has no node groups. What kiln reap measures, without the
 * command asking the provider which type a node group is.
 */
json_t *utilization_idle_groups(const struct engine *e, const json_t *state);

#endif
