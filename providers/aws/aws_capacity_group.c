/*
 * aws_capacity_group.c - a capacity reservation group (compute.GROUP.capacity:
 * {reservation_group: ARN}) read for the plan and the launch: its members
 * from AWS Resource Groups' ListGroupResources (rest-json, POST
 * /list-group-resources; shapes from botocore's resource-groups model), each
 * read with DescribeCapacityReservations, and the one the group's gang fits
 * in found: its type, one of the spec's zones, a state that takes launches
 * (or will), and room for the whole gang. EC2 launches a group target that
 * no member fits on demand, silently ("Capacity Reservation groups", EC2
 * user guide): the plan fails instead, naming each member's mismatch.
 *
 * It owns no resource: the launch into the group stays aws_capacity.c's.
 */
#include "aws_capacity.h"

#include "jsonw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most members read (a group of reservations is a handful in practice). */
#define GROUP_MAX_MEMBERS 100

static const char *group_of(const char *address)
{
	const char *dot = strchr(address, '.');

	return dot ? dot + 1 : address;
}

static const char *attr(const json_t *live, const char *key)
{
	return json_string_value(json_object_get(json_object_get(live, "attrs"), key));
}

/* The capacity reservation ids among a ListGroupResources answer's resources, into ids. */
static void member_ids(json_t *resp, json_t *ids)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(resp, "Resources"), i, r)
	{
		const char *arn = json_string_value(
		    json_object_get(json_object_get(r, "Identifier"), "ResourceArn"));
		const char *id = arn ? strstr(arn, ":capacity-reservation/") : NULL;

		if (id && json_array_size(ids) < GROUP_MAX_MEMBERS)
			json_array_append_new(ids,
					      json_string(id + strlen(":capacity-reservation/")));
	}
}

/* The ids of the group's capacity reservations (*ids new), following NextToken. */
static int group_members(struct prov_ctx *ctx, const char *g, const char *arn, json_t **ids,
			 struct kiln_error *err)
{
	char *next = NULL;
	int rc;

	*ids = json_array();
	do {
		json_t *body =
		    json_pack("{s:s, s:[{s:s, s:[s]}]}", "Group", arn, "Filters", "Name",
			      "resource-type", "Values", "AWS::EC2::CapacityReservation");
		char *text;
		struct aws_rest r = {.method = "POST",
				     .path = "/list-group-resources",
				     .content_type = "application/json",
				     .action = "ListGroupResources"};
		json_t *resp = NULL;

		if (next)
			json_object_set_new(body, "NextToken", json_string(next));
		text = jsonw_dumps(body, JSON_COMPACT, NULL);
		r.body = text;
		rc = aws_rest_call(ctx, AWS_RG, &r, &resp, err);
		free(text);
		json_decref(body);
		free(next);
		next = NULL;
		if (rc == PROV_NOTFOUND ||
		    (rc == PROV_ERROR && strstr(err->msg, "NotFoundException"))) {
			kiln_error_set(
			    err,
			    "aws: compute.%s.capacity.reservation_group: resource group %s "
			    "does not exist in %s",
			    g, arn, ctx->region);
			kiln_error_hint(err, "check the ARN (aws resource-groups list-groups); "
					     "resource groups are regional");
			rc = PROV_ERROR;
		}
		if (rc == PROV_OK) {
			member_ids(resp, *ids);
			if (json_string_value(json_object_get(resp, "NextToken")))
				next =
				    xstrdup(json_string_value(json_object_get(resp, "NextToken")));
		}
		json_decref(resp);
	} while (rc == PROV_OK && next && json_array_size(*ids) < GROUP_MAX_MEMBERS);
	free(next);
	return rc;
}

/* Why member live does not take the gang, or NULL when it does. */
static char *misfit(const json_t *live, const char *id, const char *type, long count,
		    const json_t *zones, const json_t *held)
{
	const char *st = attr(live, "state"), *rt = attr(live, "instance_type");
	const char *rz = attr(live, "zone");
	const json_t *a = json_object_get(live, "attrs");
	long avail = (long)json_integer_value(json_object_get(a, "available")) +
		     (long)json_integer_value(json_object_get(held, id));
	long total = (long)json_integer_value(json_object_get(a, "count"));

	if (!st || (strcmp(st, "active") != 0 && strcmp(st, "scheduled") != 0 &&
		    strcmp(st, "payment-pending") != 0))
		return xasprintf("%s is %s", id, st ? st : "in no state");
	if (rt && type && strcmp(rt, type) != 0)
		return xasprintf("%s is for %s", id, rt);
	if (rz && !aws_capacity_zone_listed(zones, rz))
		return xasprintf("%s is in %s", id, rz);
	if (strcmp(st, "active") == 0 && avail < count)
		return xasprintf("%s has %ld instances available", id, avail);
	/* Not active yet: what it will hold, all of it free then. */
	if (strcmp(st, "active") != 0 && total < count)
		return xasprintf("%s is %s with room for %ld", id, st, total);
	return NULL;
}

/*
 * The member the gang launches into: an active one that fits, else one that
 * fits once active (scheduled, payment-pending), the first listed of each.
 */
int aws_capacity_group_fit(struct prov_ctx *ctx, const char *address, const json_t *attrs,
			   const json_t *held, json_t **fit, struct kiln_error *err)
{
	const char *arn = json_string_value(json_object_get(attrs, "capacity_reservation"));
	const char *type = json_string_value(json_object_get(attrs, "instance_type"));
	long count = (long)json_integer_value(json_object_get(attrs, "count"));
	const json_t *zones = json_object_get(attrs, "zones");
	const char *g = group_of(address);
	struct strbuf why = {0};
	json_t *ids = NULL, *v, *later = NULL;
	size_t i;
	int rc;

	*fit = NULL;
	rc = group_members(ctx, g, arn, &ids, err);
	if (rc == PROV_OK && json_array_size(ids) == 0) {
		kiln_error_set(err,
			       "aws: compute.%s.capacity.reservation_group: %s holds no capacity "
			       "reservation",
			       g, arn);
		kiln_error_hint(err, "add reservations to it (aws resource-groups group-resources "
				     "--group ARN --resource-arns ...), or name another group");
		rc = PROV_ERROR;
	}
	json_array_foreach(ids, i, v)
	{
		const char *id = json_string_value(v);
		json_t *live = NULL;
		char *bad;

		if (rc != PROV_OK || *fit)
			break;
		rc = aws_capacity_reservation_read(ctx, id, &live, err);
		if (rc == PROV_NOTFOUND) {
			sb_addf(&why, "%s%s does not exist", why.len ? "; " : "", id);
			rc = PROV_OK;
			continue;
		}
		if (rc != PROV_OK)
			break;
		bad = misfit(live, id, type, count, zones, held);
		if (bad) {
			sb_addf(&why, "%s%s", why.len ? "; " : "", bad);
			json_decref(live);
		} else if (strcmp(attr(live, "state"), "active") == 0) {
			*fit = live;
		} else if (!later) {
			later = live;
		} else {
			json_decref(live);
		}
		free(bad);
	}
	if (rc == PROV_OK && !*fit)
		*fit = json_incref(later);
	json_decref(later);
	if (rc == PROV_OK && !*fit) {
		kiln_error_set(err,
			       "aws: compute.%s.capacity.reservation_group: no reservation in %s "
			       "takes %ld × %s in the spec's zones: %s",
			       g, arn, count, type ? type : "?", why.buf ? why.buf : "none read");
		kiln_error_hint(err,
				"add a reservation for %ld × %s in one of the spec's zones to the "
				"group, or change compute.%s.instance_type, its count or "
				"provider.zone",
				count, type ? type : "?", g);
		rc = PROV_ERROR;
	}
	sb_release(&why);
	json_decref(ids);
	return rc;
}

int aws_capacity_preflight_group(struct prov_ctx *ctx, const char *address, const json_t *attrs,
				 const json_t *held, json_t *warnings, struct kiln_error *err)
{
	const char *arn = json_string_value(json_object_get(attrs, "capacity_reservation"));
	json_t *fit = NULL;
	const char *st;
	int rc = aws_capacity_group_fit(ctx, address, attrs, held, &fit, err);

	if (rc != PROV_OK)
		return rc;
	st = attr(fit, "state");
	json_array_append_new(
	    warnings,
	    json_sprintf("%s: reservation group %s: the nodes launch into %s (%s in %s%s%s)",
			 address, arn, json_string_value(json_object_get(fit, "id")),
			 attr(fit, "instance_type"), attr(fit, "zone"),
			 st && strcmp(st, "active") != 0 ? ", " : "",
			 st && strcmp(st, "active") != 0 ? st : ""));
	json_decref(fit);
	return PROV_OK;
}
