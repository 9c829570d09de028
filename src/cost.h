/*
 * cost.h - what a plan costs: per resource, the provider's cost components
 * (quantity × unit price from its dated catalog), hourly and monthly totals
 * before and after the plan, and over the spec's TTL. The shape follows
 * Infracost's; man/kiln-plan-json(5) describes the "cost" object.
 */
#ifndef KILN_COST_H
#define KILN_COST_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "plan.h"

struct provider;
struct prov_ctx;
struct spec;

/* What prices a plan: the provider's cost hook and catalog, and the spec's
 * region and TTL. The engine holds all three; cost does not need the rest. */
struct cost_source {
	const struct provider *prov;
	struct prov_ctx *ctx;
	const struct spec *spec;
};

/* Add "cost" to the plan's "kiln" object; v is plan's view (plan.h). */
void cost_plan(const struct cost_source *src, json_t *plan, const struct plan_view *v);

/*
 * The retained stores of live (address -> [live object...], a refresh's)
 * that recorded (the state's resources) no longer holds: a new array of
 * {"address", "id", "hourly", "monthly", "unpriced"}, in the listing's order.
 */
json_t *cost_retained_live(const struct cost_source *src, const json_t *live,
			   const json_t *recorded);

/* "$1,574.13": dollars to the cent, with thousands separators. Caller frees. */
char *cost_money(double usd);
/* "+$440.32/h ($0.00 → $440.32)", or "$0.00/h (no change)". Caller frees. */
char *cost_delta_text(const json_t *cost);

/* The plan's "Cost" section: the change per hour, TTL projection, per resource, unpriced. */
void cost_render_text(FILE *out, const json_t *plan, bool color);
void cost_render_markdown(FILE *out, const json_t *plan);
/* `kiln cost`: every component of the plan's result, one row each. */
void cost_render_table(FILE *out, const json_t *plan, bool color);
/*
 * After a destroy: each store it kept (the plan's cost.retained) with its
 * hourly and monthly cost and the one command that deletes exactly it;
 * nothing when it kept none.
 */
void cost_render_still_billing(FILE *out, const json_t *plan, const char *workspace);

#endif
