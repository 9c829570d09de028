/*
 * aws_capacity.c - where a node group's capacity comes from on EC2; see
 * aws_capacity.h. Every request field is a member of botocore's ec2 service
 * model: RunInstances' CapacityReservationSpecification (its
 * CapacityReservationTarget) and InstanceMarketOptions (MarketType spot or
 * capacity-block), DescribeCapacityReservations, DescribeCapacityBlockOfferings
 * and PurchaseCapacityBlock.
 *
 * A Capacity Block is a resource of its own, aws_capacity_block.GROUP: its
 * create finds the offerings for the group's type, count and duration,
 * takes the earliest (then the cheapest) in the spec's zones that costs no
 * more than max_upfront_usd, and buys it, tagged like every kiln resource.
 * Before buying, it looks for a block of this address by tag: a purchase
 * made by an apply that was killed before it recorded it is found, never
 * bought twice. A block cannot be cancelled: its delete only lets go of it.
 *
 * It owns no instance: launching them stays aws_launch.c's.
 */
#include "aws_capacity.h"

#include "aws/awsxml.h"
#include "log.h"
#include "timefmt.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags a purchased block carries beside the scope's: what it cost, from which offering. */
#define TAG_FEE "kiln:upfront-fee"
#define TAG_OFFERING "kiln:offering"
/* The purchase's own token: what an unclear answer is looked for by. */
#define TAG_PURCHASE "kiln:purchase"

/* ---- reservations ---- */

static const char *group_name(const char *address)
{
	const char *dot = strchr(address, '.');

	return dot ? dot + 1 : address;
}

static int64_t when(json_t *item, const char *key)
{
	const char *s = awsxml_str(item, key);
	int64_t t = 0;

	if (!s || timefmt_time_parse_rfc3339(s, &t) < 0)
		return 0;
	return t;
}

static json_t *cr_live(json_t *item)
{
	const char *id = awsxml_str(item, "capacityReservationId");
	const char *state = awsxml_str(item, "state");
	json_t *tags, *attrs;
	int64_t start = when(item, "startDate"), end = when(item, "endDate");
	char sb[21], eb[21];

	if (!id)
		return NULL;
	tags = aws_ec2_item_tags(item);
	attrs = json_pack("{s:s?, s:i, s:I, s:s?, s:s?, s:s?, s:s?, s:s, s:i, s:s?, s:s?}",
			  "instance_type", awsxml_str(item, "instanceType"), "count",
			  atoi(awsxml_str(item, "totalInstanceCount")
				   ? awsxml_str(item, "totalInstanceCount")
				   : "0"),
			  "duration_hours", (json_int_t)(start && end ? (end - start) / 3600 : 0),
			  "zone", awsxml_str(item, "availabilityZone"), "start",
			  start ? timefmt_time_format_rfc3339(start, sb) : NULL, "end",
			  end ? timefmt_time_format_rfc3339(end, eb) : NULL, "state", state,
			  "reservation_id", id, "available",
			  atoi(awsxml_str(item, "availableInstanceCount")
				   ? awsxml_str(item, "availableInstanceCount")
				   : "0"),
			  "reservation_type", awsxml_str(item, "reservationType"), "upfront_fee",
			  json_string_value(json_object_get(tags, TAG_FEE)));
	/* A block's end ends the cluster (expiry.h); a plain reservation's does not. */
	if (end && awsxml_str(item, "reservationType") &&
	    strcmp(awsxml_str(item, "reservationType"), "capacity-block") == 0)
		json_object_set_new(attrs, "capacity_end", json_string(eb));
	return aws_live("aws_capacity_block", id,
			state && strcmp(state, "payment-pending") == 0 ? "pending" : "ready", attrs,
			tags);
}

static const struct ec2_kind cr_kind = {"aws_capacity_block",
					"DescribeCapacityReservations",
					"capacityReservationSet",
					"CapacityReservationId.1",
					true,
					cr_live};

/* One reservation by id, as its live form: PROV_NOTFOUND when EC2 knows none. */
static int reservation_read(struct prov_ctx *ctx, const char *id, json_t **out,
			    struct kiln_error *err)
{
	return aws_ec2_read(ctx, &cr_kind, id, out, err);
}

int aws_capacity_reservation_read(struct prov_ctx *ctx, const char *id, json_t **out,
				  struct kiln_error *err)
{
	return reservation_read(ctx, id, out, err);
}

static const char *live_attr(const json_t *live, const char *key)
{
	return json_string_value(json_object_get(json_object_get(live, "attrs"), key));
}

/* ---- launches ---- */

/* The fix for a launch into a reservation that has not started. */
#define NOT_ACTIVE_HINT                                                                            \
	"nodes launch into it once it is active: run kiln apply again then, or kiln up --wait"

int aws_capacity_launch_init(struct prov_ctx *ctx, struct capacity_target *c, const json_t *a,
			     const json_t *deps, struct kiln_error *err)
{
	const char *kind = json_string_value(json_object_get(a, "capacity"));
	const char *target = json_string_value(json_object_get(a, "capacity_reservation"));
	json_t *live = NULL;
	const char *state;
	int rc;

	c->spot_fallback = json_is_true(json_object_get(a, "spot_fallback"));
	if (kind && strcmp(kind, "reservation-group") == 0) {
		/* EC2 launches a target no member fits on demand: launch where one fits. */
		c->reservation_group = target;
		rc = aws_capacity_group_fit(ctx, c->address, a, NULL, &live, err);
		if (rc == PROV_OK)
			c->reservation_zone =
			    xstrdup(live_attr(live, "zone") ? live_attr(live, "zone") : "");
		state = rc == PROV_OK ? live_attr(live, "state") : NULL;
		/* Not active yet: EC2 would launch the gang on demand instead. */
		if (state && strcmp(state, "active") != 0) {
			kiln_error_set(
			    err, "aws: %s waits for %s of its reservation group, which is %s%s%s",
			    c->address, json_string_value(json_object_get(live, "id")), state,
			    live_attr(live, "start") ? " from " : "",
			    live_attr(live, "start") ? live_attr(live, "start") : "");
			kiln_error_hint(err, NOT_ACTIVE_HINT);
			rc = PROV_ERROR;
		}
		json_decref(live);
		return rc;
	}
	if (!kind || (strcmp(kind, "reservation") != 0 && strcmp(kind, "block") != 0))
		return PROV_OK;
	c->block = strcmp(kind, "block") == 0;
	if (c->block)
		target = aws_dep_attr_any(deps, "aws_capacity_block", "reservation_id");
	if (!target) {
		kiln_error_set(err, "aws: %s needs its Capacity Block, which is not recorded",
			       c->address);
		kiln_error_hint(err, "run plan again: it refreshes what exists");
		return PROV_ERROR;
	}
	c->reservation = target;
	rc = reservation_read(ctx, target, &live, err);
	if (rc == PROV_NOTFOUND) {
		kiln_error_set(err, "aws: %s: capacity reservation %s does not exist in %s",
			       c->address, target, ctx->region);
		kiln_error_hint(err,
				"check compute.%s.capacity.reservation (reservations are "
				"regional)",
				group_name(c->address));
		return PROV_ERROR;
	}
	if (rc != PROV_OK)
		return rc;
	state = live_attr(live, "state");
	c->reservation_zone = xstrdup(live_attr(live, "zone") ? live_attr(live, "zone") : "");
	if (!state || strcmp(state, "active") != 0) {
		const char *start = live_attr(live, "start");

		kiln_error_set(err, "aws: %s waits for %s %s, which is %s%s%s", c->address,
			       c->block ? "its Capacity Block" : "capacity reservation", target,
			       state ? state : "in no state", start ? " from " : "",
			       start ? start : "");
		kiln_error_hint(
		    err, state && strcmp(state, "expired") == 0
			     ? "the reservation is over: remove capacity: from the group, or "
			       "buy another"
			     : NOT_ACTIVE_HINT);
		rc = PROV_ERROR;
	}
	json_decref(live);
	return rc;
}

/*
 * A launch with a target asks for it only (capacity-reservations-only, the
 * one preference EC2 takes beside a target): a gang none of a reservation
 * group's members has room for then fails to launch instead of running on
 * demand, unreserved, without a word ("If capacity isn't available, the
 * instance will fail to launch": CapacityReservationPreference, EC2 API).
 */
void aws_capacity_launch_params(struct aws_params *p, const struct capacity_target *c)
{
	if (c->reservation)
		aws_param(p,
			  "CapacityReservationSpecification.CapacityReservationTarget."
			  "CapacityReservationId",
			  c->reservation);
	else if (c->reservation_group)
		aws_param(p,
			  "CapacityReservationSpecification.CapacityReservationTarget."
			  "CapacityReservationResourceGroupArn",
			  c->reservation_group);
	if (c->reservation || c->reservation_group)
		aws_param(p, "CapacityReservationSpecification.CapacityReservationPreference",
			  "capacity-reservations-only");
	if (c->block) {
		aws_param(p, "InstanceMarketOptions.MarketType", "capacity-block");
	} else if (c->spot && !c->fallback) {
		aws_param(p, "InstanceMarketOptions.MarketType", "spot");
		aws_param(p, "InstanceMarketOptions.SpotOptions.SpotInstanceType", "one-time");
	}
}

int aws_capacity_launch_zone(const struct capacity_target *c, const char *zone,
			     struct kiln_error *err)
{
	if (!c->reservation_zone || !*c->reservation_zone || strcmp(zone, c->reservation_zone) == 0)
		return PROV_OK;
	kiln_error_set(err, "aws: %s: its reservation %s is in %s, not %s", c->address,
		       c->reservation ? c->reservation : c->reservation_group, c->reservation_zone,
		       zone);
	kiln_error_hint(err, "list %s under provider.zone: the group launches there",
			c->reservation_zone);
	return PROV_CAPACITY;
}

void aws_capacity_launch_refused(const struct capacity_target *c, int rc, struct kiln_error *err)
{
	char was[sizeof(err->msg)];

	/* EC2's code for it: InvalidCapacityReservationState.PendingActivation. */
	if (rc != PROV_ERROR || !strstr(err->msg, "InvalidCapacityReservationState"))
		return;
	snprintf(was, sizeof(was), "%s",
		 strncmp(err->msg, "aws: ", 5) == 0 ? err->msg + 5 : err->msg);
	kiln_error_set(err, "aws: %s: %s %s is not active yet, and EC2 refused the launch (%s)",
		       c->address, c->block ? "its Capacity Block" : "capacity reservation",
		       c->reservation	      ? c->reservation
		       : c->reservation_group ? c->reservation_group
					      : "?",
		       was);
	kiln_error_hint(err, NOT_ACTIVE_HINT);
}

bool aws_capacity_fall_back(const struct capacity_target *c, int rc, const struct kiln_error *err)
{
	(void)err;
	return rc == PROV_CAPACITY && c->spot && c->spot_fallback && !c->fallback;
}

/* Whether inst is the on-demand stand-in of a spot launch (its ClientToken says so). */
static bool fell_back(json_t *inst)
{
	const char *token = awsxml_str(inst, "clientToken");

	return token &&
	       strncmp(token, CAPACITY_FALLBACK_TOKEN, strlen(CAPACITY_FALLBACK_TOKEN)) == 0;
}

const char *aws_capacity_market(json_t *inst)
{
	const char *life = awsxml_str(inst, "instanceLifecycle");

	if (life && strcmp(life, "spot") == 0)
		return "spot";
	/* The on-demand stand-in of a spot group is still the spot group's. */
	if (fell_back(inst))
		return "spot";
	return "on-demand";
}

/*
 * What EC2 reports of where inst was launched, as the inputs the expander
 * writes (expand_group_capacity): a Capacity Block's instance has the
 * lifecycle capacity-block; a targeted launch keeps its target in
 * capacityReservationSpecification (an instance an open reservation took
 * has only capacityReservationId, and is still on demand). So a group
 * launched before kiln tagged anything reads back as it was launched.
 */
void aws_capacity_live(json_t *inst, const json_t *tags, json_t *attrs)
{
#define TARGET "capacityReservationSpecification.capacityReservationTarget."
	const char *id = awsxml_str(inst, TARGET "capacityReservationId");
	const char *arn = awsxml_str(inst, TARGET "capacityReservationResourceGroupArn");
#undef TARGET
	const char *life = awsxml_str(inst, "instanceLifecycle");
	const char *fb = json_string_value(json_object_get(tags, TAG_SPOT_FALLBACK));

	if (life && strcmp(life, "capacity-block") == 0) {
		json_object_set_new(attrs, "capacity", json_string("block"));
	} else if (id || arn) {
		json_object_set_new(attrs, "capacity",
				    json_string(id ? "reservation" : "reservation-group"));
		json_object_set_new(attrs, "capacity_reservation", json_string(id ? id : arn));
	}
	/*
	 * The tag says what the spec asked last (an update retags it); an
	 * untagged group that fell back says it had a fallback by its token.
	 */
	if (fb ? strcmp(fb, "true") == 0 : fell_back(inst))
		json_object_set_new(attrs, "spot_fallback", json_true());
}

/* ---- Capacity Block offerings ---- */

/* What an aws_capacity_block's attrs ask for. */
struct block_ask {
	const char *type;
	long count;
	long hours;
	const char *start_after; /* RFC 3339, or NULL: as soon as possible */
	double max_usd;
	const json_t *zones;
};

static void block_ask(const json_t *a, struct block_ask *b)
{
	b->type = json_string_value(json_object_get(a, "instance_type"));
	b->count = (long)json_integer_value(json_object_get(a, "count"));
	b->hours = (long)json_integer_value(json_object_get(a, "duration_hours"));
	b->start_after = json_string_value(json_object_get(a, "start_after"));
	b->max_usd = json_number_value(json_object_get(a, "max_upfront_usd"));
	b->zones = json_object_get(a, "zones");
}

/* The key pre-flight remembers an offering under, for the cost hook. */
static char *ask_key(const struct block_ask *b)
{
	return xasprintf("%s/%ld/%ld/%s", b->type ? b->type : "", b->count, b->hours,
			 b->start_after ? b->start_after : "asap");
}

static bool zone_listed(const json_t *zones, const char *zone)
{
	json_t *z;
	size_t i;

	json_array_foreach(zones, i,
			   z) if (zone && json_string_value(z) &&
				  strcmp(json_string_value(z), zone) == 0) return true;
	return false;
}

bool aws_capacity_zone_listed(const json_t *zones, const char *zone)
{
	return zone_listed(zones, zone);
}

/* Every offering for b (any zone, from start_after on unless !ranged). */
static int offerings(struct prov_ctx *ctx, const struct block_ask *b, bool ranged, json_t **out,
		     struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp = NULL;
	int rc;

	*out = NULL;
	aws_param(&p, "InstanceType", b->type);
	aws_paramf(&p, "InstanceCount", "%ld", b->count);
	aws_paramf(&p, "CapacityDurationHours", "%ld", b->hours);
	if (ranged && b->start_after)
		aws_param(&p, "StartDateRange", b->start_after);
	rc = aws_query(ctx, AWS_EC2, "DescribeCapacityBlockOfferings", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	*out = awsxml_list(resp, "capacityBlockOfferingSet");
	json_decref(resp);
	return PROV_OK;
}

static int by_start_then_fee(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int64_t sx = when(x, "startDate"), sy = when(y, "startDate");
	double fx = atof(awsxml_str(x, "upfrontFee") ? awsxml_str(x, "upfrontFee") : "0");
	double fy = atof(awsxml_str(y, "upfrontFee") ? awsxml_str(y, "upfrontFee") : "0");

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return fx < fy ? -1 : fx > fy;
}

/* The offerings in the spec's zones, earliest first, then cheapest: a new array. */
static json_t *ranked(json_t *all, const json_t *zones)
{
	json_t *out = json_array(), *o;
	json_t **v;
	size_t i, n = 0;

	v = xcalloc(json_array_size(all) + 1, sizeof(*v));
	json_array_foreach(all, i, o) if (zone_listed(zones, awsxml_str(o, "availabilityZone")))
	    v[n++] = o;
	qsort(v, n, sizeof(*v), by_start_then_fee);
	for (i = 0; i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	return out;
}

static double fee_of(json_t *o)
{
	const char *f = awsxml_str(o, "upfrontFee");

	return f ? atof(f) : 0;
}

/* "us-east-1a, 2026-12-03T11:30:00Z to 2026-12-04T11:30:00Z, $1510.27 up front ($3.93/GPU-hour)" */
static char *offering_line(json_t *o, const struct block_ask *b)
{
	const struct catalog_type *t = catalog_find(&catalog_aws, b->type);
	double fee = fee_of(o), gpu_hours = (double)(t ? t->gpus : 0) * b->count * b->hours;
	char sb[21], eb[21], per[48] = "";

	if (gpu_hours > 0)
		snprintf(per, sizeof(per), " ($%.2f/GPU-hour)", fee / gpu_hours);
	return xasprintf("%s, %s to %s, $%.2f up front%s", awsxml_str(o, "availabilityZone"),
			 timefmt_time_format_rfc3339(when(o, "startDate"), sb),
			 timefmt_time_format_rfc3339(when(o, "endDate"), eb), fee, per);
}

/* The starts of the offerings that exist without the range, for an error. */
static char *nearest_starts(struct prov_ctx *ctx, const struct block_ask *b)
{
	struct kiln_error ignored = {0};
	struct strbuf sb = {0};
	json_t *all = NULL, *r, *o;
	size_t i;

	if (offerings(ctx, b, false, &all, &ignored) != PROV_OK || !all)
		return xstrdup("none");
	r = ranked(all, b->zones);
	json_array_foreach(r, i, o)
	{
		char at[21];

		if (i == 3)
			break;
		sb_addf(&sb, "%s%s in %s", i ? ", " : "",
			timefmt_time_format_rfc3339(when(o, "startDate"), at),
			awsxml_str(o, "availabilityZone"));
	}
	json_decref(r);
	json_decref(all);
	return sb.buf ? sb_detach(&sb) : xstrdup("none");
}

/*
 * The offering a block's create buys: the first of ranked within the
 * ceiling. *out NULL (and err) when there is none.
 */
static int choose(struct prov_ctx *ctx, const char *address, const struct block_ask *b,
		  json_t **chosen, json_t **runner_up, struct kiln_error *err)
{
	json_t *all = NULL, *r;
	int rc;

	*chosen = *runner_up = NULL;
	rc = offerings(ctx, b, true, &all, err);
	if (rc != PROV_OK)
		return rc;
	r = ranked(all, b->zones);
	json_decref(all);
	if (json_array_size(r) == 0) {
		char *near = nearest_starts(ctx, b);

		kiln_error_set(err,
			       "aws: %s: no Capacity Block of %ld × %s for %ldh %s%s in the "
			       "spec's zones; offerings start at: %s",
			       address, b->count, b->type, b->hours,
			       b->start_after ? "after " : "as soon as possible",
			       b->start_after ? b->start_after : "", near);
		kiln_error_hint(err, "move start: to one of those dates, list more zones under "
				     "provider.zone, or change count or duration");
		free(near);
		json_decref(r);
		return PROV_ERROR;
	}
	*chosen = json_incref(json_array_get(r, 0));
	*runner_up = json_incref(json_array_get(r, 1));
	json_decref(r);
	if (fee_of(*chosen) > b->max_usd) {
		char *line = offering_line(*chosen, b);

		kiln_error_set(err,
			       "aws: %s: the Capacity Block on offer (%s) costs more than "
			       "max_upfront_usd $%.2f",
			       address, line, b->max_usd);
		kiln_error_hint(err,
				"raise compute.%s.capacity.block.max_upfront_usd, or ask for "
				"a shorter or later block",
				group_name(address));
		free(line);
		json_decref(*chosen);
		json_decref(*runner_up);
		*chosen = *runner_up = NULL;
		return PROV_ERROR;
	}
	return PROV_OK;
}

/* ---- pre-flight ---- */

/* held: as aws_capacity_preflight_group's, the slots a replace frees before it launches. */
static int preflight_reservation(struct prov_ctx *ctx, const char *address, json_t *a,
				 const json_t *held, json_t *warnings, struct kiln_error *err)
{
	const char *id = json_string_value(json_object_get(a, "capacity_reservation"));
	const char *type = json_string_value(json_object_get(a, "instance_type"));
	long count = (long)json_integer_value(json_object_get(a, "count"));
	const json_t *zones = json_object_get(a, "zones");
	const char *g = group_name(address), *rt, *rz, *st;
	json_t *live = NULL;
	long avail;
	int rc = reservation_read(ctx, id, &live, err);

	if (rc == PROV_NOTFOUND) {
		kiln_error_set(err, "aws: compute.%s.capacity.reservation: %s does not exist in %s",
			       g, id, ctx->region);
		kiln_error_hint(err, "check the id (aws ec2 describe-capacity-reservations); "
				     "reservations are regional");
		return PROV_ERROR;
	}
	if (rc != PROV_OK)
		return rc;
	rt = live_attr(live, "instance_type");
	rz = live_attr(live, "zone");
	st = live_attr(live, "state");
	avail =
	    (long)json_integer_value(json_object_get(json_object_get(live, "attrs"), "available")) +
	    (long)json_integer_value(json_object_get(held, id));
	rc = PROV_ERROR;
	if (!st || (strcmp(st, "active") != 0 && strcmp(st, "scheduled") != 0 &&
		    strcmp(st, "payment-pending") != 0)) {
		kiln_error_set(err, "aws: compute.%s.capacity.reservation: %s is %s", g, id,
			       st ? st : "in no state");
		kiln_error_hint(err, "a reservation that ended takes no launch: remove capacity: "
				     "from the group or name a current reservation");
	} else if (rt && type && strcmp(rt, type) != 0) {
		kiln_error_set(err, "aws: compute.%s.capacity.reservation: %s is for %s, not %s", g,
			       id, rt, type);
		kiln_error_hint(err,
				"set compute.%s.instance_type: %s, or name a reservation for %s", g,
				rt, type);
	} else if (rz && !zone_listed(zones, rz)) {
		kiln_error_set(err,
			       "aws: compute.%s.capacity.reservation: %s is in %s, which is not "
			       "one of the spec's zones",
			       g, id, rz);
		kiln_error_hint(err,
				"set provider.zone: %s (the fabric and the nodes move to the "
				"reservation's zone)",
				rz);
	} else if (strcmp(st, "active") == 0 && avail < count) {
		kiln_error_set(err,
			       "aws: compute.%s.capacity.reservation: %s has %ld instances "
			       "available; the group needs %ld",
			       g, id, avail, count);
		if (avail > 0)
			kiln_error_hint(err,
					"lower compute.%s.count to %ld, or free instances in the "
					"reservation",
					g, avail);
		else
			kiln_error_hint(err,
					"free instances in the reservation, or name one with %ld "
					"available",
					count);
	} else {
		if (strcmp(st, "active") != 0)
			json_array_append_new(
			    warnings,
			    json_sprintf("%s: reservation %s is %s (from %s): the "
					 "nodes launch once it is active",
					 address, id, st,
					 live_attr(live, "start") ? live_attr(live, "start")
								  : "?"));
		rc = PROV_OK;
	}
	json_decref(live);
	return rc;
}

/*
 * What pre-flight chose for b: its fee (the cost hook's) under ask_key, and
 * its id under ask_key#id (the purchase's, which buys that one or none).
 */
static void remember_offer(struct prov_ctx *ctx, const struct block_ask *b, json_t *o)
{
	char *key = ask_key(b), *idkey = xasprintf("%s#id", key);
	const char *id = awsxml_str(o, "capacityBlockOfferingId");

	pthread_mutex_lock(&ctx->mu);
	json_object_set_new(ctx->offers, key, json_real(fee_of(o)));
	if (id)
		json_object_set_new(ctx->offers, idkey, json_string(id));
	pthread_mutex_unlock(&ctx->mu);
	free(idkey);
	free(key);
}

/*
 * The purchase buys the offering the plan showed (and a saved plan was
 * held to), never another one found since: PROV_ERROR when chosen is not it,
 * or when no plan showed one (made without a refresh).
 */
static int offer_as_planned(struct prov_ctx *ctx, const char *address, const struct block_ask *b,
			    json_t *chosen, struct kiln_error *err)
{
	char *key = ask_key(b), *idkey = xasprintf("%s#id", key);
	const char *now = awsxml_str(chosen, "capacityBlockOfferingId");
	char *planned;

	pthread_mutex_lock(&ctx->mu);
	planned = json_string_value(json_object_get(ctx->offers, idkey))
		      ? xstrdup(json_string_value(json_object_get(ctx->offers, idkey)))
		      : NULL;
	pthread_mutex_unlock(&ctx->mu);
	free(idkey);
	free(key);
	if (!planned) {
		kiln_error_set(err,
			       "aws: %s: no plan showed a Capacity Block offering for this block "
			       "(the plan was made without a refresh); nothing was bought",
			       address);
		kiln_error_hint(err, "plan without --refresh=false and review the offering it "
				     "shows: kiln plan");
		return PROV_ERROR;
	}
	if (now && strcmp(planned, now) == 0) {
		free(planned);
		return PROV_OK;
	}
	kiln_error_set(err,
		       "aws: %s: the Capacity Block offering the plan showed (%s) is no longer "
		       "the one on offer (%s is); nothing was bought",
		       address, planned, now ? now : "none");
	kiln_error_hint(err, "plan again and review the offering it shows: kiln plan");
	free(planned);
	return PROV_ERROR;
}

/* An offering as the plan carries it (provider.h, preflight); JSON null for none. */
static json_t *offer_json(json_t *o, const struct block_ask *b)
{
	const struct catalog_type *t = catalog_find(&catalog_aws, b->type);
	double fee, gpu_hours = (double)(t ? t->gpus : 0) * b->count * b->hours;
	int64_t start, end;
	char sb[21], eb[21];

	if (!o)
		return json_null();
	fee = fee_of(o);
	start = when(o, "startDate");
	end = when(o, "endDate");
	return json_pack(
	    "{s:s?, s:s?, s:s, s:i, s:s?, s:s?, s:i, s:f, s:o}", "id",
	    awsxml_str(o, "capacityBlockOfferingId"), "zone", awsxml_str(o, "availabilityZone"),
	    "instance_type", b->type, "count", (int)b->count, "start",
	    start ? timefmt_time_format_rfc3339(start, sb) : NULL, "end",
	    end ? timefmt_time_format_rfc3339(end, eb) : NULL, "duration_hours", (int)b->hours,
	    "upfront_usd", fee, "usd_per_gpu_hour",
	    gpu_hours > 0 ? json_real(round(fee / gpu_hours * 1e4) / 1e4) : json_null());
}

static int preflight_block(struct prov_ctx *ctx, const char *address, json_t *a, json_t *warnings,
			   json_t *offers, struct kiln_error *err)
{
	struct block_ask b;
	json_t *chosen, *runner;
	char *line;
	int rc;

	block_ask(a, &b);
	rc = choose(ctx, address, &b, &chosen, &runner, err);
	if (rc != PROV_OK)
		return rc;
	remember_offer(ctx, &b, chosen);
	json_object_set_new(offers, address,
			    json_pack("{s:o, s:o}", "offering", offer_json(chosen, &b), "runner_up",
				      offer_json(runner, &b)));
	line = offering_line(chosen, &b);
	json_array_append_new(warnings,
			      json_sprintf("%s: buys the Capacity Block %s in %s", address,
					   awsxml_str(chosen, "capacityBlockOfferingId"), line));
	free(line);
	if (runner) {
		line = offering_line(runner, &b);
		json_array_append_new(
		    warnings, json_sprintf("%s: runner-up: %s in %s", address,
					   awsxml_str(runner, "capacityBlockOfferingId"), line));
		free(line);
	}
	json_decref(chosen);
	json_decref(runner);
	return PROV_OK;
}

int aws_capacity_preflight(struct prov_ctx *ctx, const json_t *creates, json_t *warnings,
			   json_t *offers, struct kiln_error *err)
{
	const char *addr;
	const json_t *r;
	int rc = PROV_OK;

	json_object_foreach_const(creates, addr, r)
	{
		const char *type = json_string_value(json_object_get(r, "type"));
		json_t *a = json_object_get(r, "attrs");
		const char *kind = json_string_value(json_object_get(a, "capacity"));
		const json_t *held =
		    json_object_get(json_object_get(r, "replacing"), "reservations_held");

		if (type && strcmp(type, "aws_capacity_block") == 0)
			rc = preflight_block(ctx, addr, a, warnings, offers, err);
		else if (type && strcmp(type, "aws_instance_group") == 0 && kind &&
			 strcmp(kind, "reservation") == 0)
			rc = preflight_reservation(ctx, addr, a, held, warnings, err);
		else if (type && strcmp(type, "aws_instance_group") == 0 && kind &&
			 strcmp(kind, "reservation-group") == 0)
			rc = aws_capacity_preflight_group(ctx, addr, a, held, warnings, err);
		if (rc != PROV_OK)
			break;
	}
	return rc;
}

void aws_capacity_block_cost(struct prov_ctx *ctx, const json_t *attrs, json_t *components,
			     json_t *unpriced)
{
	struct block_ask b;
	char *key;
	json_t *fee;
	const char *paid = json_string_value(json_object_get(attrs, "upfront_fee"));

	/* A block bought already says what it cost; it costs nothing more. */
	if (json_object_get(attrs, "reservation_id")) {
		(void)paid;
		return;
	}
	block_ask(attrs, &b);
	key = ask_key(&b);
	pthread_mutex_lock(&ctx->mu);
	fee = json_incref(json_object_get(ctx->offers, key));
	pthread_mutex_unlock(&ctx->mu);
	free(key);
	if (!fee) {
		json_array_append_new(
		    unpriced,
		    json_pack("{s:s, s:s}", "name", "Capacity Block (up front)", "reason",
			      "EC2 prices a block only in its offerings, read at plan time with "
			      "a refresh"));
		return;
	}
	json_array_append_new(
	    components, json_pack("{s:s, s:s, s:i, s:f, s:f, s:f}", "name",
				  "Capacity Block (paid up front, covers the instances)", "unit",
				  "block", "quantity", 1, "unit_price", json_real_value(fee),
				  "hourly", 0.0, "upfront", json_real_value(fee)));
	json_decref(fee);
}

/* ---- the aws_capacity_block type ---- */

int aws_cb_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	/*
	 * A spec that buys no block asks EC2 nothing (and its policy allows
	 * nothing) here; kiln sprawl (every scope) always asks: a block kiln
	 * bought and no state records is the costliest orphan there is.
	 */
	if (!ctx->capacity_blocks && scope->cluster) {
		*out = json_array();
		*next = NULL;
		return PROV_OK;
	}
	return aws_ec2_list(ctx, &cr_kind, scope, page, out, next, err);
}

int aws_cb_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return reservation_read(ctx, id, out, err);
}

/* Blocks that ended or failed are not this address's block any more. */
static bool block_current(const json_t *live)
{
	const char *st = live_attr(live, "state");

	return st && (strcmp(st, "active") == 0 || strcmp(st, "scheduled") == 0 ||
		      strcmp(st, "payment-pending") == 0);
}

/*
 * The current block of this scope whose tag key is value (the address, or
 * one purchase's token): PROV_OK with *out, PROV_NOTFOUND, or an error.
 */
static int block_tagged(struct prov_ctx *ctx, const struct prov_scope *scope, const char *key,
			const char *value, json_t **out, struct kiln_error *err)
{
	json_t *all = NULL, *b;
	size_t i;
	int rc = aws_ec2_find_tagged(ctx, &cr_kind, scope, key, value, &all, err);

	*out = NULL;
	json_array_foreach(all, i, b) if (!*out && block_current(b)) *out = json_incref(b);
	json_decref(all);
	if (rc != PROV_OK)
		return rc;
	return *out ? PROV_OK : PROV_NOTFOUND;
}

/*
 * KILN_TEST_KILL_AT=purchase: the apply kills itself with SIGKILL right
 * after EC2 answered the purchase, before anything recorded it (for the
 * test that a killed apply never buys twice); =replace: repair kills
 * itself once the new nodes launched, before the bad ones are terminated
 * (aws_nodes.c); =chunk: a gang launched in chunks kills itself after its
 * first chunk (aws_launch.c). Documented in kiln-aws(7).
 */
void aws_test_kill_at(const char *point)
{
	const char *at = getenv("KILN_TEST_KILL_AT");

	if (at && strcmp(at, point) == 0)
		raise(SIGKILL);
}

/*
 * KILN_TEST_STOP_AT=purchase: the apply stops itself (SIGSTOP) after its
 * first look for the block and before the purchase, so a test can let its
 * lease run out, have another apply take over, then continue it.
 */
static void test_stop_at(const char *point)
{
	const char *at = getenv("KILN_TEST_STOP_AT");

	if (at && strcmp(at, point) == 0)
		raise(SIGSTOP);
}

/* A block as its purchase (or the look for it) found it, with what kiln tagged it with. */
static void block_bought(json_t *live, const struct prov_scope *scope, const char *address,
			 const json_t *extra, const char *fee)
{
	json_object_set_new(live, "tags", aws_scope_tags(scope, address, extra));
	json_object_set_new(json_object_get(live, "attrs"), "upfront_fee", json_string(fee));
	json_object_set_new(live, "address", json_string(address));
}

/* How often a purchase whose answer was lost is looked for: a new block may show late. */
#define LOST_LOOKS 5

/*
 * After a purchase whose answer was lost (a 5xx, a timeout, a reset: EC2
 * may have bought the block all the same), the block it made, found by the
 * token it was tagged with (kiln:purchase): PROV_OK with *out; otherwise
 * PROV_ERROR saying the outcome is unknown. Never PROV_RETRY, which would
 * buy again.
 */
static int purchase_lost(struct prov_ctx *ctx, const struct prov_scope *scope,
			 const char *address, const char *token, json_t **out,
			 struct kiln_error *err)
{
	struct kiln_error lerr = {{0}, {0}};
	char why[sizeof(err->msg)];
	int rc = PROV_NOTFOUND, attempt;

	snprintf(why, sizeof(why), "%s", strncmp(err->msg, "aws: ", 5) == 0 ? err->msg + 5 : err->msg);
	/* Looked for again only while not found (a new block may show late), not after a look gave up. */
	for (attempt = 0; attempt < LOST_LOOKS && (rc == PROV_NOTFOUND || rc == PROV_RETRY);
	     attempt++) {
		if (attempt &&
		    !retry_pause(attempt - 1, log_env_long("KILN_RETRY_BASE_MS", 100, 60000), 5000))
			break;
		rc = block_tagged(ctx, scope, TAG_PURCHASE, token, out, &lerr);
	}
	if (rc == PROV_OK) {
		log_warn("%s: the answer to PurchaseCapacityBlock was lost (%s); the block it bought, "
			 "%s, is found by its %s tag and recorded: nothing was bought twice",
			 address, why, json_string_value(json_object_get(*out, "id")), TAG_PURCHASE);
		return PROV_OK;
	}
	kiln_error_set(err,
		       "aws: %s: the answer to PurchaseCapacityBlock was lost (%s), and no block "
		       "tagged %s %s is found%s%s: whether it was bought is unknown; kiln buys "
		       "nothing more in this run",
		       address, why, TAG_PURCHASE, token, rc == PROV_NOTFOUND ? "" : ": ",
		       rc == PROV_NOTFOUND ? "" : lerr.msg);
	kiln_error_hint(err, "wait a few minutes, then run kiln plan: it adopts a block bought for "
			     "this address (kiln sprawl lists one no state records); apply again "
			     "only when neither shows one");
	return PROV_ERROR;
}

/*
 * One PurchaseCapacityBlock of chosen, tagged with the purchase's token:
 * sent once (aws_query never sends it again), and an unclear answer is
 * looked for, never bought again.
 */
static int purchase(struct prov_ctx *ctx, const struct prov_scope *scope,
		    const struct prov_create *op, json_t *chosen, json_t **out,
		    struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp = NULL, *extra;
	const char *oid = awsxml_str(chosen, "capacityBlockOfferingId");
	char fee[32];
	int rc;

	snprintf(fee, sizeof(fee), "%.2f USD", fee_of(chosen));
	extra = json_pack("{s:s, s:s?, s:s}", TAG_FEE, fee, TAG_OFFERING, oid, TAG_PURCHASE,
			  op->token);
	aws_param(&p, "CapacityBlockOfferingId", oid);
	aws_param(&p, "InstancePlatform", "Linux/UNIX");
	aws_tag_spec(&p, 1, "capacity-reservation", scope, op->address, extra);
	log_info("%s: buying Capacity Block %s (%s)", op->address, oid, fee);
	rc = aws_query(ctx, AWS_EC2, "PurchaseCapacityBlock", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_OK) {
		aws_test_kill_at("purchase");
		*out = cr_live(awsxml_get(resp, "capacityReservation"));
		if (!*out) {
			kiln_error_set(err,
				       "aws: %s: PurchaseCapacityBlock answered no reservation",
				       op->address);
			rc = PROV_RETRY;
		}
	}
	/* A 5xx, a timeout, a reset or an answer without the block: it may have been bought. */
	if (rc == PROV_RETRY)
		rc = purchase_lost(ctx, scope, op->address, op->token, out, err);
	if (rc == PROV_OK)
		block_bought(*out, scope, op->address, extra, fee);
	json_decref(extra);
	json_decref(resp);
	return rc;
}

int aws_cb_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	struct block_ask b;
	json_t *chosen = NULL, *runner = NULL;
	int rc;

	*out = NULL;
	/* Bought before (an apply killed after the purchase): that one, never a second. */
	rc = block_tagged(ctx, scope, PROV_TAG_ADDRESS, op->address, out, err);
	if (rc != PROV_NOTFOUND)
		return rc;
	block_ask(op->attrs, &b);
	rc = choose(ctx, op->address, &b, &chosen, &runner, err);
	json_decref(runner);
	if (rc == PROV_OK)
		rc = offer_as_planned(ctx, op->address, &b, chosen, err);
	test_stop_at("purchase");
	/* Still this run's to buy (its lock), and still not bought: then, at once, buy. */
	if (rc == PROV_OK && op->guard && op->guard(op->guard_arg, err) < 0)
		rc = PROV_ERROR;
	if (rc == PROV_OK) {
		rc = block_tagged(ctx, scope, PROV_TAG_ADDRESS, op->address, out, err);
		if (rc == PROV_NOTFOUND)
			rc = purchase(ctx, scope, op, chosen, out, err);
	}
	json_decref(chosen);
	return rc;
}

int aws_cb_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		  json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		  struct kiln_error *err)
{
	(void)ctx, (void)scope, (void)attrs, (void)changed, (void)nchanged, (void)out;
	kiln_error_set(err, "aws: Capacity Block %s cannot be changed", id);
	return PROV_ERROR;
}

/*
 * EC2 cancels no Capacity Block: deleting one lets go of it. Its instances
 * are gone by then (the group depends on it), and EC2 ends it at its end.
 */
int aws_cb_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	(void)ctx, (void)err;
	log_warn("Capacity Block %s cannot be cancelled: it is no longer kiln's, and EC2 ends "
		 "it at its end date",
		 id);
	return PROV_OK;
}

int aws_cb_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	size_t i;

	if (what == WAIT_GONE)
		return aws_ec2_wait_now(ctx, what, ids, n, err);
	/* A purchase waits for its payment: scheduled or active is done. */
	for (i = 0; i < n; i++) {
		json_t *live = NULL;
		int rc = reservation_read(ctx, ids[i].id, &live, &ids[i].err);

		if (rc == PROV_OK &&
		    strcmp(json_string_value(json_object_get(live, "status")), "pending") != 0) {
			ids[i].state = WAIT_DONE;
			ids[i].live = live;
		} else if (rc == PROV_OK) {
			ids[i].state = WAIT_PENDING;
			json_decref(live);
		} else if (!prov_status_transient(rc)) {
			ids[i].state = WAIT_FAILED;
		}
	}
	return PROV_OK;
}
