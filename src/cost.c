/*
 * cost.c - the plan's "cost" object; see cost.h. Its renderings are
 * cost_render.c's.
 *
 * Each resource is priced twice through the provider's cost hook: its
 * attributes before the plan (live or recorded) and after it (desired). The
 * totals are sums of those; nothing is priced here, so this file names no
 * cloud and no price. Whatever the provider cannot price is listed under
 * "unpriced" and never counted as $0. A retained store that a plan releases
 * leaves the totals but keeps costing: it is listed under "retained".
 */
#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonc.h"
#include "provider.h"
#include "spec.h"
#include "util.h"

/* The month AWS's calculator and Infracost use. */
#define HOURS_PER_MONTH 730.0

/* To 1/10000 of a dollar: sums of products print without float noise. */
static double r4(double v)
{
	return round(v * 10000.0) / 10000.0;
}

static double hourly_sum(const json_t *components)
{
	const json_t *c;
	double sum = 0;
	size_t i;

	json_array_foreach(components, i, c) sum += json_real_value(json_object_get(c, "hourly"));
	return sum;
}

/* "create", "update", "replace", "delete", "no-op" from a change's action. */
static const char *change_word(enum plan_action a)
{
	static const char *const words[] = {
	    [PLAN_NO_OP] = "no-op",	      [PLAN_CREATE] = "create",
	    [PLAN_UPDATE] = "update",	      [PLAN_DELETE_CREATE] = "replace",
	    [PLAN_CREATE_DELETE] = "replace", [PLAN_DELETE] = "delete",
	};

	return words[a];
}

/* Price attrs (an object, else nothing) into new arrays. */
static double price(const struct cost_source *src, const char *type, const json_t *attrs,
		    json_t **components, json_t **unpriced)
{
	*components = json_array();
	*unpriced = json_array();
	if (json_is_object(attrs))
		src->prov->cost(src->ctx, type, attrs, *components, *unpriced);
	return hourly_sum(*components);
}

/* A store kept on delete (deletion: retain), as diff_retained says; diff.h is above cost. */
static bool retained_store(const json_t *attrs)
{
	const char *s = json_string_value(json_object_get(attrs, "deletion"));

	return s && strcmp(s, "retain") == 0;
}

/* What components charge once, up front (capacity bought for a window). */
static double upfront_sum(const json_t *components)
{
	const json_t *c;
	double sum = 0;
	size_t i;

	json_array_foreach(components, i, c) sum +=
	    json_number_value(json_object_get(c, "upfront"));
	return sum;
}

/* Stamp each entry of from with the address and append it to to. */
static void append_with_address(json_t *to, json_t *from, const char *address, bool monthly)
{
	json_t *c;
	size_t i;

	json_array_foreach(from, i, c)
	{
		json_object_set_new(c, "address", json_string(address));
		if (monthly) {
			double h = json_real_value(json_object_get(c, "hourly"));

			json_object_set_new(c, "hourly", json_real(r4(h)));
			json_object_set_new(c, "monthly", json_real(r4(h * HOURS_PER_MONTH)));
		}
		json_array_append(to, c);
	}
}

void cost_plan(const struct cost_source *src, json_t *plan, const struct plan_view *v)
{
	const struct catalog *cat = src->prov->catalog ? src->prov->catalog(src->ctx) : NULL;
	json_t *resources = json_array(), *components = json_array(), *unpriced = json_array();
	json_t *retained = json_array(), *cost;
	double before = 0, after = 0, upfront = 0;
	bool destroy = plan_is_destroy(plan);
	json_int_t free_count = 0;
	size_t i;

	for (i = 0; i < v->nchanges; i++) {
		const struct plan_change *c = &v->changes[i];
		const char *addr = c->address, *type = c->type;
		json_t *cb, *ub, *ca, *ua;
		double hb, ha;

		if (!src->prov->cost)
			continue;
		/*
		 * A no-op keeps what is there: priced once, from what is live. Its
		 * inputs match the spec's (that is what makes it one), except for a
		 * change --target leaves out, which does not happen either.
		 */
		if (c->action == PLAN_NO_OP) {
			hb = ha = price(src, type, c->before, &cb, &ub);
			ca = json_incref(cb);
			ua = json_incref(ub);
		} else {
			hb = price(src, type, c->before, &cb, &ub);
			ha = price(src, type, c->after, &ca, &ua);
		}
		before += hb;
		after += ha;
		/* Paid when made: a create or a replacement pays, what is there paid already. */
		if (c->action == PLAN_CREATE || c->action == PLAN_DELETE_CREATE ||
		    c->action == PLAN_CREATE_DELETE)
			upfront += upfront_sum(ca);
		/*
		 * Every store a destroy keeps, priced or not: teardown names what
		 * keeps billing (issue 29); unpriced: what the price leaves out
		 * (a bucket's bytes, which kiln cannot see).
		 */
		if (c->retain && json_is_null(c->after))
			json_array_append_new(
			    retained, json_pack("{s:s, s:f, s:f, s:b, s:b}", "address", addr,
						"hourly", r4(hb), "monthly", r4(hb * HOURS_PER_MONTH),
						"unpriced", json_array_size(ub) > 0, "store",
						retained_store(c->before)));
		if (json_array_size(cb) || json_array_size(ca) || json_array_size(ub) ||
		    json_array_size(ua))
			json_array_append_new(
			    resources, json_pack("{s:s, s:s, s:f, s:f}", "address", addr, "change",
						 change_word(c->action), "hourly_before", r4(hb),
						 "hourly_after", r4(ha)));
		else if (json_is_object(c->after))
			free_count++;
		append_with_address(components, ca, addr, true);
		append_with_address(unpriced, ua, addr, false);
		json_decref(cb);
		json_decref(ub);
		json_decref(ca);
		json_decref(ua);
	}
	cost = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:o, s:o, s:o, s:o, s:I}", "currency",
			 "USD", "hourly_before", r4(before), "hourly_after", r4(after),
			 "hourly_delta", r4(after - before), "monthly_before",
			 r4(before * HOURS_PER_MONTH), "monthly_after", r4(after * HOURS_PER_MONTH),
			 "resources", resources, "components", components, "unpriced", unpriced,
			 "retained", retained, "free", free_count);
	/* Only a plan that buys something up front says so: the others read as they did. */
	if (upfront > 0)
		json_object_set_new(cost, "upfront", json_real(r4(upfront)));
	if (cat)
		json_object_set_new(cost, "catalog",
				    json_pack("{s:s, s:s, s:s}", "provider", cat->provider,
					      "region", cat->region, "date", cat->date));
	else
		json_object_set_new(cost, "catalog", json_null());
	json_object_set_new(cost, "provider", json_string(src->prov->name));
	json_object_set_new(cost, "region",
			    src->spec->provider.region ? json_string(src->spec->provider.region)
						     : json_null());
	if (src->spec->ttl > 0 && !destroy) {
		double hours = (double)src->spec->ttl / 3600.0;

		json_object_set_new(cost, "ttl_hours", json_real(r4(hours)));
		json_object_set_new(cost, "ttl_projected", json_real(r4(after * hours)));
	} else {
		json_object_set_new(cost, "ttl_hours", json_null());
		json_object_set_new(cost, "ttl_projected", json_null());
	}
	plan_kiln_set(plan, "cost", cost);
}

/* ---- text ---- */

json_t *cost_retained_live(const struct cost_source *src, const json_t *live,
			   const json_t *recorded)
{
	json_t *out = json_array();
	const char *addr;
	const json_t *objs;

	if (!src->prov->cost)
		return out;
	json_object_foreach_const(live, addr, objs)
	{
		const json_t *o;
		size_t i;

		if (json_object_get(recorded, addr))
			continue;
		json_array_foreach(objs, i, o)
		{
			const json_t *attrs = json_object_get(o, "attrs");
			json_t *c, *u;
			double h;

			if (!retained_store(attrs))
				continue;
			h = price(src, json_string_value(json_object_get(o, "type")), attrs, &c, &u);
			json_array_append_new(
			    out, json_pack("{s:s, s:O?, s:f, s:f, s:b}", "address", addr, "id",
					   json_object_get(o, "id"), "hourly", r4(h), "monthly",
					   r4(h * HOURS_PER_MONTH), "unpriced", json_array_size(u) > 0));
			json_decref(c);
			json_decref(u);
		}
	}
	return out;
}
