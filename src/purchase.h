/*
 * purchase.h - the purchase rule of apply: capacity paid up front (a
 * Capacity Block), which cannot be undone, is bought only when the plan
 * that shows it is applied with approvals that count, or with
 * --allow-purchase; and only as a refreshed plan showed it, offering and
 * fee: a plan made with --refresh=false read no offering.
 *
 * A rule over plain inputs: nothing here prints, exits or calls a cloud.
 */
#ifndef KILN_PURCHASE_H
#define KILN_PURCHASE_H

#include <stdbool.h>

#include "base.h"

/* What the rule needs to know of a plan and of how it is applied. */
struct purchase_ask {
	const char *address;	/* the change that buys (plan.h), NULL when none does */
	bool offering;		/* that change shows the offering it read (kiln.offering) */
	bool refresh_off;	/* the plan shown was made with --refresh=false */
	double upfront;		/* what the plan buys up front (its cost's "upfront") */
	bool allowed;		/* --allow-purchase, or the plan's approvals count */
	const char *spec_path;	/* the spec, for the fix */
};

/*
 * 0 when the plan buys nothing, or may buy what it shows; else -1 with err
 * (why, nothing changed; the fix as its hint, on a line of its own).
 * Keyed on what the plan creates, not on a fee, which a plan made without
 * a refresh does not know.
 */
int purchase_check(const struct purchase_ask *p, struct kiln_error *err);

#endif
