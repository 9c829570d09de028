/*
 * expiry.c - see expiry.h. Pure: the clock and the author come in as
 * arguments, so every decision is testable without a state repository.
 */
#include "expiry.h"
#include "jsonc.h"

#include <inttypes.h>
#include <string.h>

#include "state.h"

static json_t *expiry_new(int64_t ttl, int64_t expires, int64_t now, const char *author,
			  const char *how, const char *spec)
{
	char e[21], n[21];
	json_t *x = json_pack("{s:I, s:s, s:s, s:s, s:s}", "ttl_seconds", (json_int_t)ttl,
			      "expires", timefmt_time_format_rfc3339(expires, e), "set_by",
			      author ? author : "unknown", "set_at",
			      timefmt_time_format_rfc3339(now, n), "set_how", how);

	if (spec)
		json_object_set_new(x, "spec", json_string(spec));
	return x;
}

int expiry_time(const json_t *expiry, int64_t *t)
{
	const char *s = json_string_value(json_object_get(expiry, "expires"));

	return s && timefmt_time_parse_rfc3339(s, t) == 0 ? 1 : 0;
}

json_t *expiry_at_apply(const json_t *recorded, int64_t ttl, bool from_flag, int64_t now,
			const char *author, const char *spec)
{
	int64_t was;

	if (ttl <= 0)
		return NULL;
	if (!from_flag && recorded && expiry_time(recorded, &was) &&
	    json_integer_value(json_object_get(recorded, "ttl_seconds")) == ttl) {
		json_t *kept = json_deep_copy(recorded);

		/* The spec may have moved; reap destroys with the one applied last. */
		if (spec)
			json_object_set_new(kept, "spec", json_string(spec));
		return kept;
	}
	return expiry_new(ttl, now + ttl, now, author, from_flag ? "--ttl" : "spec ttl", spec);
}

json_t *expiry_extend(const json_t *recorded, int64_t by, int64_t now, const char *author,
		      const char *workspace, struct kiln_error *err)
{
	int64_t was;
	json_t *x;
	const json_t *spec;

	if (!recorded || !expiry_time(recorded, &was)) {
		kiln_error_set(err, "workspace '%s' has no TTL to extend", workspace);
		kiln_error_hint(err,
				"set one with `kiln apply --ttl DURATION` or `ttl:` in the spec");
		return NULL;
	}
	x = expiry_new(json_integer_value(json_object_get(recorded, "ttl_seconds")),
		       (was > now ? was : now) + by, now, author, "ttl extend", NULL);
	spec = json_object_get(recorded, "spec");
	if (json_is_string(spec))
		json_object_set_new(x, "spec", jsonc_share(spec));
	spec = json_object_get(recorded, "spec_text");
	if (json_is_string(spec))
		json_object_set_new(x, "spec_text", jsonc_share(spec));
	return x;
}

int expiry_window_end(const json_t *state, int64_t *t, const char **address)
{
	const char *addr;
	const json_t *r;
	int found = 0;

	state_foreach_resource(state, addr, r)
	{
		const char *end = json_string_value(state_resource_attr(r, "capacity_end"));
		int64_t e;

		if (end && timefmt_time_parse_rfc3339(end, &e) == 0 && (!found || e < *t)) {
			*t = e;
			if (address)
				*address = addr;
			found = 1;
		}
	}
	return found;
}

json_t *expiry_windows(const json_t *state, int64_t now)
{
	json_t *out = json_array();
	const json_t *r;
	const char *addr;

	state_foreach_resource(state, addr, r)
	{
		const json_t *a = state_resource_attrs(r);
		const char *start = json_string_value(json_object_get(a, "start"));
		const char *end = json_string_value(json_object_get(a, "capacity_end"));
		int64_t s = 0, e;
		char at[21];

		if (!end || timefmt_time_parse_rfc3339(end, &e) < 0)
			continue;
		if (start && timefmt_time_parse_rfc3339(start, &s) < 0)
			s = 0;
		json_array_append_new(
		    out,
		    json_pack("{s:s, s:O, s:s?, s:s, s:s, s:s, s:I}", "address", addr, "id",
			      json_object_get(r, "id"), "start", start, "end", end, "state",
			      now < s	? "scheduled"
			      : now < e ? "active"
					: "ended",
			      "reap_at", timefmt_time_format_rfc3339(e - EXPIRY_WINDOW_MARGIN, at),
			      "left_seconds", (json_int_t)(e - EXPIRY_WINDOW_MARGIN - now)));
	}
	return out;
}

char *expiry_window_sentence(const json_t *state)
{
	const char *addr = NULL;
	int64_t end;
	char at[21];

	if (!expiry_window_end(state, &end, &addr))
		return NULL;
	return xasprintf("kiln reap takes it down at %s, an hour before %s ends",
			 timefmt_time_format_rfc3339(end - EXPIRY_WINDOW_MARGIN, at), addr);
}

int expiry_within_windows(const json_t *state, const json_t *x, struct kiln_error *err)
{
	const char *addr = NULL;
	int64_t end, t;
	char at[21];

	if (!expiry_window_end(state, &end, &addr) || !expiry_time(x, &t) ||
	    t <= end - EXPIRY_WINDOW_MARGIN)
		return 0;
	kiln_error_set(err,
		       "the TTL cannot go past %s, when kiln reap takes the cluster down: an hour "
		       "before %s ends at %s",
		       timefmt_time_format_rfc3339(end - EXPIRY_WINDOW_MARGIN, at), addr,
		       json_string_value(json_object_get(
			   json_object_get(json_object_get(state_resources(state), addr), "attrs"),
			   "capacity_end")));
	kiln_error_hint(err, "the capacity is bought for its window only: extend by less, or buy "
			     "a later block");
	return -1;
}

enum reap_decision expiry_reap_decision(const json_t *state, int64_t now, int64_t *left)
{
	int64_t t, end;
	bool ttl;

	*left = 0;
	ttl = state && expiry_time(state_expiry(state), &t);
	/* A window's end is a hard expiry, earlier than the TTL or without one. */
	if (state && expiry_window_end(state, &end, NULL) &&
	    (!ttl || end - EXPIRY_WINDOW_MARGIN < t)) {
		t = end - EXPIRY_WINDOW_MARGIN;
		ttl = true;
	}
	if (!ttl)
		return REAP_NO_TTL;
	*left = t - now;
	if (t > now)
		return REAP_KEEP;
	return state_resource_count(state) ? REAP_DESTROY : REAP_EMPTY;
}

char *expiry_left_format(int64_t left)
{
	int64_t a = left < 0 ? -left : left;
	int64_t d = a / 86400, h = a % 86400 / 3600, m = a % 3600 / 60;

	if (d)
		return xasprintf("%" PRId64 "d%" PRId64 "h", d, h);
	if (h)
		return xasprintf("%" PRId64 "h%" PRId64 "m", h, m);
	if (m)
		return xasprintf("%" PRId64 "m", m);
	return xasprintf("%" PRId64 "s", a);
}
