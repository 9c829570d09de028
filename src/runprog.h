/*
 * runprog.h - how a running run is doing (issue 27), for kiln status: its
 * pace, measured MFU, elapsed time, ETA against its workload's deadline,
 * its cost so far and projected, and a warning naming the gap when it will
 * miss the deadline or run over the workload's budget.
 *
 * Pure arithmetic over a record (runrec.h) and the cluster's figures the
 * caller gives. Anything not known is negative (no data), never 0: a run
 * that reports no progress has no pace, no MFU and no ETA.
 */
#ifndef KILN_RUNPROG_H
#define KILN_RUNPROG_H

#include <jansson.h>

#include "runrec.h"

struct runprog {
	double tokens_per_s; /* < 0: no data */
	double mfu;	     /* 6 x params x tokens/s over the run's GPUs' peak; < 0: no data */
	int64_t elapsed_s;
	double eta_s;	     /* seconds until the workload's tokens are done; < 0: unknown */
	bool has_deadline;
	int64_t deadline_at; /* started + the workload's deadline */
	double hourly;	     /* the run's share of the cluster's hourly cost, by GPUs; < 0 */
	double cost_so_far, cost_projected; /* < 0: unknown */
	char *warning;			    /* NULL, or the gap named */
};

/*
 * r's progress at now. cluster_hourly is what the whole cluster costs an
 * hour (< 0: unknown), cluster_gpus its GPUs: the run's share is its GPUs'
 * fraction. peak_tflops is one of the run's GPUs' dense peak in the
 * workload's precision (<= 0: unknown).
 */
void runprog_compute(const struct runrec *r, int64_t now, double cluster_hourly, int cluster_gpus,
		     double peak_tflops, struct runprog *out);
void runprog_release(struct runprog *p);
/* {"id", "name", "group", "nodes", "gpus", "simulated", "state", "elapsed_seconds",
 * "tokens", "tokens_per_second", "mfu", "eta_seconds", "deadline", "hourly_usd",
 * "cost_so_far_usd", "projected_cost_usd", "warning"}, null for no data. */
json_t *runprog_json(const struct runrec *r, const struct runprog *p);

#endif
