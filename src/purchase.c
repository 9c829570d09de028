/*
 * purchase.c - the purchase rule of apply; see purchase.h.
 */
#include "purchase.h"

#include <stdlib.h>

#include "cost.h"

int purchase_check(const struct purchase_ask *p, struct kiln_error *err)
{
	char *m;

	if (!p->address)
		return 0;
	if (p->refresh_off || !p->offering) {
		/* Bought only from a plan that read the live offering it shows. */
		kiln_error_set(err,
			       "this plan buys %s up front (which cannot be undone), but %s; kiln "
			       "buys only from a plan that read the offering and its fee from the "
			       "cloud; nothing was changed",
			       p->address,
			       p->refresh_off ? "it was made with --refresh=false"
					      : "it shows no offering");
		kiln_error_hint(err,
				"plan without --refresh=false (kiln plan %s --out plan.kiln), review "
				"the offering and fee it shows, then apply that plan",
				p->spec_path);
		return -1;
	}
	if (p->allowed)
		return 0;
	m = cost_money(p->upfront);
	kiln_error_set(err,
		       "this plan buys capacity up front (%s, which cannot be undone), and no "
		       "approval covers it; nothing was changed",
		       m);
	kiln_error_hint(err,
			"save the plan (kiln plan %s --out plan.kiln), have it approved and apply it "
			"with --require-approvals N, or pass --allow-purchase",
			p->spec_path);
	free(m);
	return -1;
}
