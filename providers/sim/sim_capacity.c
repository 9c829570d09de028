/*
 * sim_capacity.c - Capacity Blocks on the simulated cloud, modelled on
 * EC2's (aws_capacity.c) so the quickstart can show one without an
 * account: sim_capacity_block.GROUP is bought at create, and its group's
 * nodes launch into it only while it is active.
 *
 * The sim's one offering for a block is deterministic: it starts at the
 * first 11:30 UTC at or after max(now, start_after) (EC2's blocks start
 * and end at 11:30 UTC), in the group's first zone, and costs the
 * catalog's on-demand price of its instance-hours, paid up front. Its
 * state follows the clock (KILN_NOW): scheduled before the start, active
 * until the end, expired after.
 */
#include "sim_int.h"

#include "expand.h"
#include "jsonc.h"
#include "timefmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY (24 * 3600)
/* 11:30 UTC, the hour EC2's Capacity Blocks start and end at. */
#define BLOCK_HOUR (11 * 3600 + 30 * 60)

int sim_block_window(const json_t *attrs, int64_t now, struct sim_block *b)
{
	const char *type = json_string_value(json_object_get(attrs, "instance_type"));
	const char *after = json_string_value(json_object_get(attrs, "start_after"));
	const struct catalog_type *t = catalog_find(&catalog_aws, type);
	int64_t from = now, day;

	memset(b, 0, sizeof(*b));
	if (!t)
		return -1;
	if (after && timefmt_time_parse_rfc3339(after, &from) == 0 && from < now)
		from = now;
	day = from - from % DAY;
	b->start = day + BLOCK_HOUR >= from ? day + BLOCK_HOUR : day + DAY + BLOCK_HOUR;
	b->hours = (long)json_integer_value(json_object_get(attrs, "duration_hours"));
	b->end = b->start + (int64_t)b->hours * 3600;
	b->count = (long)json_integer_value(json_object_get(attrs, "count"));
	b->fee = t->on_demand_usd * (double)b->count * (double)b->hours;
	b->gpu_hours = (double)t->gpus * (double)b->count * (double)b->hours;
	b->zone = json_string_value(json_array_get(json_object_get(attrs, "zones"), 0));
	return 0;
}

const char *sim_block_state(int64_t start, int64_t end, int64_t now)
{
	return now < start ? "scheduled" : now < end ? "active" : "expired";
}

char *sim_block_line(const struct sim_block *b)
{
	char s[21], e[21];

	return xasprintf("%s, %s to %s, $%.2f up front ($%.2f/GPU-hour; simulated)",
			 b->zone ? b->zone : "?", timefmt_time_format_rfc3339(b->start, s),
			 timefmt_time_format_rfc3339(b->end, e), b->fee,
			 b->gpu_hours > 0 ? b->fee / b->gpu_hours : 0);
}

/* The purchase: the window now, refused above the ceiling, recorded in the doc. */
int sim_block_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
		      struct kiln_error *err)
{
	json_t *attrs = json_object_get(doc, "attrs");
	double max = json_number_value(json_object_get(attrs, "max_upfront_usd"));
	struct sim_block b;
	int64_t now;
	char s[21], e[21];

	(void)ctx, (void)scope;
	if (timefmt_now(&now, err) < 0)
		return PROV_ERROR;
	if (sim_block_window(attrs, now, &b) < 0) {
		kiln_error_set(err,
			       "sim: InvalidParameterValue (simulated): no Capacity Block of %s",
			       json_string_value(json_object_get(attrs, "instance_type")));
		return PROV_ERROR;
	}
	if (b.fee > max) {
		kiln_error_set(err,
			       "sim: the Capacity Block on offer costs $%.2f up front, more than "
			       "max_upfront_usd $%.2f (simulated)",
			       b.fee, max);
		return PROV_ERROR;
	}
	json_object_set_new(attrs, "reservation_id", json_string(sim_doc_str(doc, NULL, "id")));
	json_object_set_new(attrs, "zone", json_string(b.zone ? b.zone : ""));
	json_object_set_new(attrs, "start", json_string(timefmt_time_format_rfc3339(b.start, s)));
	json_object_set_new(attrs, "end", json_string(timefmt_time_format_rfc3339(b.end, e)));
	json_object_set_new(attrs, "capacity_end", json_string(e));
	json_object_set_new(attrs, "state", json_string(sim_block_state(b.start, b.end, now)));
	json_object_set_new(attrs, "upfront_fee", json_sprintf("%.2f USD", b.fee));
	return PROV_OK;
}

int sim_block_check(struct prov_ctx *ctx, const struct prov_scope *scope, const char *group,
		    struct kiln_error *err)
{
	char *addr = xasprintf("sim_capacity_block.%s", group);
	json_t *doc = NULL;
	const char *start, *end;
	int64_t s = 0, e = 0, now;
	int rc = sim_find_address(ctx, sim_kind_find("sim_capacity_block"), scope->cluster,
				  scope->workspace, addr, &doc, err);

	if (rc == PROV_NOTFOUND) {
		kiln_error_set(err, "sim: %s is not bought (simulated)", addr);
		rc = PROV_ERROR;
	}
	free(addr);
	if (rc != PROV_OK)
		return rc;
	start = sim_doc_str(doc, "attrs", "start");
	end = sim_doc_str(doc, "attrs", "end");
	if (timefmt_now(&now, err) < 0 || !start || !end ||
	    timefmt_time_parse_rfc3339(start, &s) < 0 || timefmt_time_parse_rfc3339(end, &e) < 0) {
		rc = PROV_ERROR;
	} else if (now < s || now >= e) {
		kiln_error_set(
		    err,
		    "sim: compute.%s waits for its Capacity Block %s, which is %s from %s "
		    "(simulated)",
		    group, sim_doc_str(doc, NULL, "id"), sim_block_state(s, e, now), start);
		kiln_error_hint(err, now < s
					 ? "nodes launch into it once it is active: run kiln "
					   "apply again then"
					 : "the block is over: buy another, or remove capacity: "
					   "from the group");
		rc = PROV_ERROR;
	}
	json_decref(doc);
	return rc;
}

/*
 * The one offering of a block as the plan carries it (provider.h,
 * preflight): the sim sells one window, so there is no runner-up. Its id
 * names the window, so a later plan that would buy another window says a
 * different id.
 */
int sim_preflight(struct prov_ctx *ctx, const json_t *creates, json_t *warnings, json_t *offers,
		  struct kiln_error *err)
{
	const char *addr;
	json_t *r;
	int64_t now;

	(void)ctx, (void)warnings;
	if (timefmt_now(&now, err) < 0)
		return PROV_ERROR;
	json_object_foreach_const(creates, addr, r)
	{
		json_t *attrs = json_object_get(r, "attrs");
		const char *type = json_string_value(json_object_get(attrs, "instance_type"));
		struct sim_block b;
		char s[21], e[21], id[64];

		if (strcmp(json_string_value(json_object_get(r, "type")) ?: "",
			   "sim_capacity_block") != 0 ||
		    sim_block_window(attrs, now, &b) < 0)
			continue;
		timefmt_time_format_rfc3339(b.start, s);
		timefmt_time_format_rfc3339(b.end, e);
		snprintf(id, sizeof(id), "sim-cbo-%s-%.4s%.2s%.2sT%.2s%.2s-%ldh",
			 b.zone ? b.zone : "none", s, s + 5, s + 8, s + 11, s + 14, b.hours);
		json_object_set_new(
		    offers, addr,
		    json_pack("{s:{s:s, s:s?, s:s?, s:i, s:s, s:s, s:i, s:f, s:f}, s:n}",
			      "offering", "id", id, "zone", b.zone, "instance_type", type, "count",
			      (int)b.count, "start", s, "end", e, "duration_hours", (int)b.hours,
			      "upfront_usd", round(b.fee * 100) / 100, "usd_per_gpu_hour",
			      b.gpu_hours > 0 ? round(b.fee / b.gpu_hours * 1e4) / 1e4 : 0.0,
			      "runner_up"));
	}
	return PROV_OK;
}

void sim_block_cost(const json_t *attrs, json_t *components, json_t *unpriced)
{
	struct sim_block b;
	int64_t now;
	struct kiln_error err = {0};

	(void)unpriced;
	/* Bought already: paid. */
	if (json_object_get(attrs, "reservation_id") || timefmt_now(&now, &err) < 0 ||
	    sim_block_window(attrs, now, &b) < 0)
		return;
	json_array_append_new(
	    components, json_pack("{s:s, s:s, s:i, s:f, s:f, s:f}", "name",
				  "Capacity Block (paid up front, covers the instances; simulated)",
				  "unit", "block", "quantity", 1, "unit_price", b.fee, "hourly",
				  0.0, "upfront", b.fee));
}
