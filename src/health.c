/*
 * health.c - node health: the per-group sums of the nodes' own reports and
 * the bounded wait for them after an apply. The reports are read by the
 * providers (providers/nodes.c); here they are only counted, and polled
 * through the type's wait hook, which reads them with the call it makes
 * anyway (no extra call type).
 */
#include "health.h"
#include "log.h"
#include "jsonc.h"
#include "signals.h"
#include "strbuf.h"
#include "timefmt.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *health_group(const char *address, const char *id, const json_t *attrs)
{
	const json_t *nodes = json_object_get(attrs, "nodes"), *n;
	const json_t *role = json_object_get(attrs, "role");
	const char *dot = strchr(address, '.');
	json_t *bad = json_array(), *silent = json_array();
	bool can = json_is_string(role) && *json_string_value(role);
	size_t i, healthy = 0;

	json_array_foreach(nodes, i, n)
	{
		const char *h = json_string_value(json_object_get(n, "health"));
		const json_t *nid = json_object_get(n, "id");

		if (h && strcmp(h, "healthy") == 0)
			healthy++;
		else if (h)
			json_array_append_new(bad, json_pack("{s:O, s:O}", "id", nid, "reason",
							     json_object_get(n, "health_reason")));
		else
			json_array_append_new(silent, jsonc_share(nid));
	}
	return json_pack("{s:s, s:s, s:s?, s:I, s:I, s:o, s:o, s:b, s:s?}", "group",
			 dot ? dot + 1 : address, "address", address, "id", id, "nodes",
			 (json_int_t)json_array_size(nodes), "healthy", (json_int_t)healthy,
			 "unhealthy", bad, "not_reported", silent, "can_report", can, "why_not",
			 can ? NULL
			     : "the group has no role, so its nodes have no credentials to tag "
			       "themselves with their health");
}

bool health_group_settled(const json_t *g)
{
	return !json_is_true(json_object_get(g, "can_report")) ||
	       json_array_size(json_object_get(g, "not_reported")) == 0;
}

bool health_group_bad(const json_t *g)
{
	return json_array_size(json_object_get(g, "unhealthy")) > 0 ||
	       (json_is_true(json_object_get(g, "can_report")) &&
		json_array_size(json_object_get(g, "not_reported")) > 0);
}

static void ids_add(struct strbuf *sb, const json_t *ids)
{
	const json_t *v;
	size_t i;

	json_array_foreach(ids, i, v) sb_addf(sb, "%s%s", i ? ", " : "", json_string_value(v));
}

char *health_line(const json_t *g, const char *waited)
{
	long n = (long)json_integer_value(json_object_get(g, "nodes"));
	long ok = (long)json_integer_value(json_object_get(g, "healthy"));
	const json_t *bad = json_object_get(g, "unhealthy"), *b;
	const json_t *silent = json_object_get(g, "not_reported");
	struct strbuf sb = {0};
	size_t i;

	sb_addf(&sb, "%s: ", json_string_value(json_object_get(g, "group")));
	if (!json_is_true(json_object_get(g, "can_report")) && json_array_size(bad) == 0) {
		sb_addf(&sb, "%ld node%s cannot report %s health: %s", n, n == 1 ? "" : "s",
			n == 1 ? "its" : "their", json_string_value(json_object_get(g, "why_not")));
		return sb_detach(&sb);
	}
	sb_addf(&sb, "%ld of %ld node%s healthy", ok, n, n == 1 ? "" : "s");
	if (json_array_size(bad)) {
		sb_addf(&sb, ", %zu unhealthy: ", json_array_size(bad));
		json_array_foreach(bad, i, b)
		{
			const char *why = json_string_value(json_object_get(b, "reason"));

			sb_addf(&sb, "%s%s (%s)", i ? ", " : "",
				json_string_value(json_object_get(b, "id")),
				why ? why : "no reason given");
		}
	}
	if (json_array_size(silent) && json_is_true(json_object_get(g, "can_report"))) {
		if (waited)
			sb_addf(&sb, ", %zu not reported after %s: ", json_array_size(silent),
				waited);
		else
			sb_addf(&sb, ", %zu not reported yet: ", json_array_size(silent));
		ids_add(&sb, silent);
	}
	return sb_detach(&sb);
}

json_t *health_touched(const struct engine *e, const json_t *plan)
{
	const char *group_type = e->prov->part_type ? e->prov->part_type(PART_GROUP) : NULL;
	const json_t *rc;
	json_t *out = json_array();
	size_t i;

	if (!group_type)
		return out;
	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		const json_t *acts = json_object_get(json_object_get(rc, "change"), "actions"), *a;
		const char *type = json_string_value(json_object_get(rc, "type"));
		bool grows = false;
		size_t j;

		json_array_foreach(acts, j, a)
		{
			const char *w = json_string_value(a);

			grows |= w && (strcmp(w, "create") == 0 || strcmp(w, "update") == 0);
		}
		if (grows && type && strcmp(type, group_type) == 0)
			json_array_append(out, json_object_get(rc, "address"));
	}
	return out;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep ms, in steps short enough that an interrupt is seen within a tenth of a second. */
static void sleep_for(long ms)
{
	while (ms > 0 && !signals_interrupted()) {
		long step = ms < 100 ? ms : 100;
		struct timespec ts = {0, step * 1000000L};

		while (nanosleep(&ts, &ts) != 0)
			;
		ms -= step;
	}
}

/* One poll: the groups not settled yet get their live attrs (when ready) into groups. */
static int poll_once(struct engine *e, const struct prov_type *t, json_t *groups,
		     struct kiln_error *err)
{
	struct prov_wait *w = xcalloc(json_array_size(groups), sizeof(*w));
	size_t i, n = 0, *at = xcalloc(json_array_size(groups), sizeof(*at));
	json_t *g;
	int rc = PROV_OK;

	json_array_foreach(groups, i, g)
	{
		if (health_group_settled(g) || !json_string_value(json_object_get(g, "id")))
			continue;
		w[n].id = json_string_value(json_object_get(g, "id"));
		at[n++] = i;
	}
	if (n)
		ENGINE_CALL(rc, err, t->wait(e->ctx, WAIT_READY, w, n, err));
	for (i = 0; i < n; i++) {
		if (rc == PROV_OK && w[i].state == WAIT_DONE && w[i].live) {
			const json_t *old = json_array_get(groups, at[i]);

			json_array_set_new(
			    groups, at[i],
			    health_group(json_string_value(json_object_get(old, "address")),
					 w[i].id, json_object_get(w[i].live, "attrs")));
		}
		json_decref(w[i].live);
	}
	free(w);
	free(at);
	return rc == PROV_OK ? 0 : -1;
}

size_t health_reported(const json_t *groups, size_t *nodes)
{
	const json_t *g;
	size_t i, reported = 0;

	*nodes = 0;
	json_array_foreach(groups, i, g)
	{
		size_t silent = json_array_size(json_object_get(g, "not_reported"));
		size_t n = (size_t)json_integer_value(json_object_get(g, "nodes"));

		*nodes += n;
		reported += n > silent ? n - silent : 0;
	}
	return reported;
}

/* Tell tick how many nodes of groups reported, of how many, and the seconds left. */
static void tell(const struct health_tick *tick, const json_t *groups, int64_t deadline)
{
	int64_t left = deadline - now_ms();
	size_t nodes, reported;

	if (!tick || !tick->fn)
		return;
	reported = health_reported(groups, &nodes);
	tick->fn(tick->arg, reported, nodes, left > 0 ? (left + 999) / 1000 : 0);
}

int health_wait(struct engine *e, const json_t *state, const json_t *addresses, int64_t timeout_s,
		long poll_ms, const struct health_tick *tick, json_t **out, struct kiln_error *err)
{
	const json_t *resources = json_object_get(state, "resources"), *addr;
	const struct prov_type *t = NULL;
	int64_t start = now_ms(), deadline = start + timeout_s * 1000;
	json_t *groups = json_array();
	size_t i;
	bool settled;

	*out = NULL;
	json_array_foreach(addresses, i, addr)
	{
		const json_t *res = json_object_get(resources, json_string_value(addr));

		if (!res)
			continue;
		t = t ? t : engine_type(e, res);
		json_array_append_new(groups,
				      health_group(json_string_value(addr),
						   json_string_value(json_object_get(res, "id")),
						   json_object_get(res, "attrs")));
	}
	for (;;) {
		if (t && poll_once(e, t, groups, err) < 0) {
			json_decref(groups);
			return -1;
		}
		settled = true;
		json_array_foreach(groups, i, addr) settled &= health_group_settled(addr);
		tell(tick, groups, deadline);
		if (settled || now_ms() >= deadline || signals_interrupted())
			break;
		/* In steps of a second at most, so that a display never stands still longer. */
		for (int64_t next = now_ms() + poll_ms;
		     now_ms() < next && now_ms() < deadline && !signals_interrupted();) {
			int64_t step = next - now_ms();

			step = step < deadline - now_ms() ? step : deadline - now_ms();
			sleep_for(step < 1000 ? (long)step : 1000);
			if (now_ms() < next)
				tell(tick, groups, deadline);
		}
	}
	log_debug("health: waited %.1f s for %zu groups", (double)(now_ms() - start) / 1000,
		  json_array_size(groups));
	*out = groups;
	return 0;
}
