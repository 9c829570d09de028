/*
 * ledger.h - the cost ledger: what every apply commit records about the
 * money it leaves burning, and reading it back.
 *
 * Every commit carries Kiln-Time: 2027-01-01T00:00:00Z, the clock (KILN_NOW)
 * when it was made (workspace.c). An apply, destroy, up, down or reap commit
 * also carries, after its other trailers (man/kiln-state.1, "The cost ledger"):
 *
 *   Kiln-Burn: 196.6400 USD/h            the hourly cost of what the state holds after it
 *   Kiln-GPUs: 16                        the GPUs its node groups hold after it
 *   Kiln-Burn-Compute: 196.6200 USD/h    the share of the burn its node groups hold
 *   Kiln-Burn-Storage: 16.4400 USD/h     the share its storage holds (the rest: network...)
 *   Kiln-Budget: 250.0000 USD/h          the spec's budget.max_hourly_usd (only when set)
 *   Kiln-Upfront: 1200.00 USD            one-off fees its changes carried (only when any)
 *   Kiln-Retained: 0.6000 USD/h          stores it released and kept (deletion: retain),
 *                                        billing on outside the state (only when any)
 *   Kiln-GPU-Util: 41.5                  mean GPU utilization (%) over the stretch the
 *                                        commit ends (an apply: since the head's
 *                                        Kiln-Time; reap: over the idle window)
 *   Kiln-Tag: team=research              one per spec tag, for `kiln report --by tag:KEY`
 *
 * The burn counts what the provider's catalog prices; parts billed by use
 * (an object store's requests and bytes) are named after it, never counted
 * as $0. The history alone then gives each workspace's cost: the integral
 * of burn over time between commits (report.c).
 */
#ifndef KILN_LEDGER_H
#define KILN_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "engine.h"

/* What one commit's ledger trailers say. */
struct ledger_entry {
	bool has_time;
	int64_t time;
	bool has_burn; /* a ledger commit: burn and gpus are known */
	double burn;   /* USD per hour after the commit */
	long gpus;
	bool has_split;	/* Kiln-Burn-Compute given: compute and storage are known */
	double compute; /* USD per hour of the burn: node groups */
	double storage; /* and storage */
	bool has_budget;
	double budget;	 /* USD per hour, the spec's budget when the commit was made */
	double retained; /* USD per hour of stores released and kept, 0 when none */
	double upfront;	 /* USD, 0 when none */
	bool has_util;
	double util;	   /* percent, over the segment that ends at this commit */
	json_t *tags;	   /* {KEY: VALUE} from Kiln-Tag, new reference (maybe empty) */
	char *operation;   /* Kiln-Operation, or NULL */
	char *reap_reason; /* Kiln-Reap-Reason, or NULL */
	char *bad;	   /* the first malformed trailer ("Kiln-Burn \"12abc\" is not ..."), or NULL */
};

/* The hourly burn (USD) and GPU count of what state holds, priced by e's provider. */
void ledger_measure(const struct engine *e, const json_t *state, double *burn, long *gpus,
		    size_t *by_use);

/* The GPUs a resource of type with attrs holds (a node group's count × its type's), else 0. */
long ledger_gpus(const struct engine *e, const char *type, const json_t *attrs);

/*
 * Append to out (an array of strings) the ledger trailers of a commit
 * recording state; upfront: one-off fees its changes carried (0:
 * none); util: the mean GPU utilization the commit measured, or < 0
 * when not measured; retained: the hourly cost of the stores the commit
 * released from the state and kept (0: none).
 */
void ledger_trailers(const struct engine *e, const json_t *state, double upfront, double util,
		     double retained, json_t *out);

/*
 * Read the ledger trailers of a commit message into *le (zeroed first).
 * Every value is parsed whole: a malformed one (12abc, -3, nan, inf, 1e400,
 * empty) is named in le->bad, and then none of the commit's figures count.
 */
void ledger_parse(const char *message, struct ledger_entry *le);
/* Drop le's figures when le->bad is set (ledger_parse does; for a bad found later). */
void ledger_distrust(struct ledger_entry *le);
void ledger_entry_release(struct ledger_entry *le);

#endif
