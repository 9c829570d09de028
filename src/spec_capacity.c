/*
 * spec_capacity.c - compute.GROUP.capacity: where a node group's capacity
 * comes from. One of
 *
 *   capacity: on-demand                      (the default)
 *   capacity: spot
 *   capacity: {spot: {fallback: on-demand}}
 *   capacity: {reservation: cr-0123456789abcdef0}
 *   capacity: {reservation_group: arn:aws:resource-groups:REGION:ACCOUNT:group/NAME}
 *   capacity: {block: {duration: 24h, start: asap | after TIME, max_upfront_usd: N}}
 *
 * Shapes only: whether the group's instance type is sold as Capacity Blocks,
 * and what a reservation group's name looks like, are the provider's to say
 * (providers/expand.c), whether the reservation exists and fits is the
 * provider's pre-flight.
 */
#include "spec.h"
#include "spec_load.h"

#include "timefmt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const spec_capacity_keys[] = {"reservation", "reservation_group", "block", "spot"};
const char *const spec_block_keys[] = {"duration", "start", "max_upfront_usd"};
const char *const spec_spot_keys[] = {"fallback"};

#define DAY (24 * 3600)

/*
 * The durations EC2 sells Capacity Blocks for: "1-day increments up to 14
 * days, and 7-day increments up to 182 days" (EC2 user guide, "Find and
 * purchase Capacity Blocks"; the API's CapacityDurationHours says the same).
 */
bool spec_block_duration_ok(int64_t seconds)
{
	int64_t days = seconds / DAY;

	if (seconds <= 0 || seconds % DAY)
		return false;
	return days <= 14 || (days % 7 == 0 && days <= 182);
}

/* cr- and 17 lower-case hex digits, as EC2 writes a reservation id. */
static bool reservation_id_ok(const char *s)
{
	size_t i;

	if (strncmp(s, "cr-", 3) != 0 || strlen(s) != 20)
		return false;
	for (i = 3; s[i]; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* "asap", or "after TIME" with TIME in RFC 3339 (seconds may be left out). */
static bool block_start_parse(const char *s, int64_t *t)
{
	char *full = NULL;
	int rc;

	if (strcmp(s, "asap") == 0) {
		*t = 0;
		return true;
	}
	if (strncmp(s, "after ", 6) != 0)
		return false;
	s += 6;
	rc = timefmt_time_parse_rfc3339(s, t);
	/* 2026-12-03T00:00Z: minutes are precision enough for a start. */
	if (rc < 0 && strlen(s) == 17 && s[10] == 'T' && s[16] == 'Z') {
		full = xasprintf("%.16s:00Z", s);
		rc = timefmt_time_parse_rfc3339(full, t);
		free(full);
	}
	return rc == 0;
}

static bool load_block(struct loader *ld, const struct ynode *bn, const char *path,
		       struct spec_group *grp)
{
	struct spec_capacity *c = &grp->capacity;
	char *sub, *start = NULL;
	bool ok = true;
	struct diag *dg;
	enum got got;

	c->block = bn;
	if (!spec_expect_map(ld, bn, path))
		return false;
	ok &= spec_check_keys(ld, bn, "in a capacity block", spec_block_keys,
			      ARRAY_SIZE(spec_block_keys));
	sub = xasprintf("%s.duration", path);
	got = spec_get_duration(ld, bn, "duration", sub, &c->block_duration);
	if (got == GOT_NONE) {
		dg = spec_err(ld, bn, "%s needs duration", path);
		diag_hint(dg, "say how long you need the nodes, in whole days: like 24h or 7d");
		ok = false;
	} else if (got == GOT_OK && !spec_block_duration_ok(c->block_duration)) {
		char *d = timefmt_duration_format(c->block_duration);

		dg = spec_err(
		    ld, ydoc_get(bn, "duration"),
		    "%s: Capacity Blocks are sold for 1 to 14 days, then whole weeks up to "
		    "182 days; got %s",
		    sub, d);
		diag_hint(dg, "use whole days (24h, 2d ... 14d) or weeks (21d, 28d ... 182d)");
		free(d);
		ok = false;
	}
	ok &= got != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.start", path);
	got = spec_get_string(ld, bn, "start", sub, false, &start);
	if (got == GOT_OK && !block_start_parse(start, &c->block_start_after)) {
		dg = spec_err(ld, ydoc_get(bn, "start"), "%s must be asap or after TIME, got '%s'",
			      sub, start);
		diag_hint(dg, "like start: after 2026-12-03T00:00Z (UTC), or start: asap");
		ok = false;
	}
	ok &= got != GOT_BAD;
	free(start);
	free(sub);
	sub = xasprintf("%s.max_upfront_usd", path);
	got = spec_get_number(ld, bn, "max_upfront_usd", sub, &c->max_upfront_usd);
	if (got == GOT_NONE) {
		dg = spec_err(ld, bn, "%s needs max_upfront_usd", path);
		diag_hint(dg, "a purchase cannot be undone: set the most you will pay up front, in "
			      "US dollars");
		ok = false;
	} else if (got == GOT_OK && c->max_upfront_usd <= 0) {
		spec_err(ld, ydoc_get(bn, "max_upfront_usd"), "%s must be more than 0, got %g", sub,
			 c->max_upfront_usd);
		ok = false;
	}
	ok &= got != GOT_BAD;
	free(sub);
	if (grp->count < 1 || grp->count > SPEC_BLOCK_MAX_COUNT) {
		const struct ynode *cn = ydoc_get(grp->node, "count");

		dg = spec_err(ld, cn ? cn : bn,
			      "compute.%s.count: a Capacity Block holds 1 to %d instances, got %d",
			      grp->name, SPEC_BLOCK_MAX_COUNT, grp->count);
		diag_hint(dg, "the block is bought for exactly count nodes: split a larger "
			      "cluster into groups");
		ok = false;
	}
	return ok;
}

static bool load_spot(struct loader *ld, const struct ynode *sn, const char *path,
		      struct spec_capacity *c)
{
	char *sub;
	int fb = 0;
	bool ok;
	enum got got;

	if (!spec_expect_map(ld, sn, path))
		return false;
	ok =
	    spec_check_keys(ld, sn, "in capacity spot", spec_spot_keys, ARRAY_SIZE(spec_spot_keys));
	sub = xasprintf("%s.fallback", path);
	got = spec_get_enum(ld, sn, "fallback", sub, false, spec_fallback_names,
			    ARRAY_SIZE(spec_fallback_names), &fb);
	c->spot_fallback = got == GOT_OK;
	free(sub);
	return ok && got != GOT_BAD;
}

/* The one key of a capacity map, reported when there are none or more. */
static const struct ynode *capacity_key(struct loader *ld, const struct ynode *cn, const char *path,
					int *which)
{
	const struct ynode *found = NULL;
	size_t i, k;
	struct diag *dg;

	for (i = 0; i < cn->n; i++)
		for (k = 0; k < ARRAY_SIZE(spec_capacity_keys); k++) {
			if (strcmp(cn->keys[i]->value, spec_capacity_keys[k]) != 0)
				continue;
			if (found) {
				dg = spec_err(ld, cn->keys[i], "%s sets both %s and %s", path,
					      spec_capacity_keys[*which], spec_capacity_keys[k]);
				diag_hint(dg,
					  "keep one: a group takes its capacity from one place");
				return NULL;
			}
			found = cn->keys[i];
			*which = (int)k;
		}
	if (!found && cn->n == 0) {
		dg = spec_err(ld, cn, "%s is empty", path);
		diag_hint(dg, "write one of reservation, reservation_group, block or spot");
	}
	return found;
}

bool spec_load_capacity(struct loader *ld, const struct ynode *g, const char *gpath,
			struct spec_group *grp)
{
	struct spec_capacity *c = &grp->capacity;
	const struct ynode *cn = ydoc_get(g, "capacity"), *key;
	char *path, *sub;
	int which = 0, k = 0;
	bool ok = true;
	struct diag *dg;

	memset(c, 0, sizeof(*c));
	if (!cn)
		return true;
	c->node = cn;
	path = xasprintf("%s.capacity", gpath);
	if (ydoc_get(g, "market")) {
		dg = spec_err(ld, ydoc_key(g, "market"), "%s sets both market and capacity", gpath);
		diag_hint(dg, "keep capacity: (capacity: spot is what market: spot says)");
		ok = false;
	}
	if (cn->kind == YNODE_SCALAR) {
		char *word = spec_scalar(ld, cn, path);

		for (k = 0; word && k < (int)ARRAY_SIZE(spec_market_names); k++)
			if (strcmp(word, spec_market_names[k]) == 0)
				break;
		if (!word) {
			ok = false;
		} else if (k == (int)ARRAY_SIZE(spec_market_names)) {
			dg = spec_err(ld, cn,
				      "%s must be on-demand or spot, or a map of reservation, "
				      "reservation_group, block or spot; got '%s'",
				      path, word);
			diag_hint(dg, "like capacity: {reservation: cr-0123456789abcdef0} or "
				      "capacity: {block: {duration: 24h, max_upfront_usd: 20000}}");
			ok = false;
		} else {
			c->kind = k == 1 ? CAPACITY_SPOT : CAPACITY_ON_DEMAND;
			grp->market = k == 1 ? MARKET_SPOT : MARKET_ON_DEMAND;
		}
		free(word);
		goto out;
	}
	if (!spec_expect_map(ld, cn, path)) {
		ok = false;
		goto out;
	}
	ok &= spec_check_keys(ld, cn, "in a group's capacity", spec_capacity_keys,
			      ARRAY_SIZE(spec_capacity_keys));
	key = capacity_key(ld, cn, path, &which);
	if (!key) {
		ok = false;
		goto out;
	}
	sub = xasprintf("%s.%s", path, spec_capacity_keys[which]);
	switch (which) {
	case 0:
	case 1:
		c->kind = which == 0 ? CAPACITY_RESERVATION : CAPACITY_RESERVATION_GROUP;
		if (spec_get_string(ld, cn, key->value, sub, false, &c->reservation) != GOT_OK) {
			ok = false;
		} else if (which == 0 && !reservation_id_ok(c->reservation)) {
			dg = spec_err(ld, ydoc_get(cn, key->value),
				      "%s: '%s' is not a capacity reservation id", sub,
				      c->reservation);
			diag_hint(dg, "write cr- and 17 hex digits, like cr-0123456789abcdef0");
			ok = false;
		}
		break;
	case 2:
		c->kind = CAPACITY_BLOCK;
		ok &= load_block(ld, ydoc_get(cn, "block"), sub, grp);
		break;
	default:
		c->kind = CAPACITY_SPOT;
		grp->market = MARKET_SPOT;
		ok &= load_spot(ld, ydoc_get(cn, "spot"), sub, c);
		break;
	}
	free(sub);
out:
	free(path);
	return ok;
}
