/*
 * runcost.h - what a training run cost (issue 27): its share of its
 * cluster lifetime's cost, split from the burn the ledger records.
 *
 * A lifetime is a list of stretches, each at one recorded burn (the whole
 * cluster's cost an hour, nodes and storage) and GPU count. Over each
 * moment of a stretch, a running run takes its GPUs' fraction of the burn;
 * when the runs then running claim more than every GPU, their shares are
 * scaled down to add up to the whole. What no run takes is idle. A
 * lifetime's upfront fee (a Capacity Block's) is spread over its hours the
 * same way. Pure arithmetic: the report (report.c) gives the stretches.
 */
#ifndef KILN_RUNCOST_H
#define KILN_RUNCOST_H

#include <stdbool.h>
#include <stdint.h>

#include "runrec.h"

struct runcost_stretch {
	int64_t a, b; /* [a, b) */
	double burn;  /* USD an hour, the whole cluster */
	long gpus;    /* the cluster's GPUs */
};

struct runcost_share {
	double cost;	    /* USD, upfront share included */
	double gpu_hours;   /* the run's GPUs over its time in the lifetime */
	double hours;	    /* the run's time in the lifetime */
	double share_hours; /* hours x its share of the cluster: what spreads the upfront */
	bool counted;	    /* it ran within the lifetime and its record is trusted */
};

/*
 * Split the stretches' burn over runs (an edited record takes nothing: its
 * time is idle), plus upfront (USD, over hours the lifetime lasted) by each
 * run's share_hours. A run that has not ended runs until now. out has nruns
 * entries.
 */
void runcost_split(const struct runcost_stretch *st, size_t nst, double upfront, double hours,
		   const struct runrec *runs, size_t nruns, int64_t now,
		   struct runcost_share *out);

/* USD rounded to the cent (half away from zero), as the report's sums are. */
double runcost_cents(double usd);

#endif
