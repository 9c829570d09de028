/*
 * ledger.c - the cost ledger's trailers: written from a state and its
 * provider's prices, read back from a commit message; see ledger.h.
 *
 * Prices come only through the provider's cost hook and catalog: this file
 * names no cloud and no price.
 */
#include "ledger.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "state.h"
#include "strbuf.h"
#include "timefmt.h"
#include "util.h"

/* What ledger_measure adds up, with the share of the burn each kind of part holds. */
struct measure {
	double burn, compute, storage;
	long gpus;
	size_t by_use;
};

static bool is_part(const struct engine *e, const char *type, enum prov_part part)
{
	const char *t = e->prov->part_type ? e->prov->part_type(part) : NULL;

	return t && strcmp(type, t) == 0;
}

static void measure(const struct engine *e, const json_t *state, struct measure *m)
{
	const char *addr;
	const json_t *res;

	memset(m, 0, sizeof(*m));
	state_foreach_resource(state, addr, res)
	{
		const char *type = state_resource_type(res);
		const json_t *attrs = state_resource_attrs(res);
		json_t *components, *unpriced, *c;
		double hourly = 0;
		size_t i;

		if (!type || !json_is_object(attrs))
			continue;
		if (e->prov->cost) {
			components = json_array();
			unpriced = json_array();
			e->prov->cost(e->ctx, type, attrs, components, unpriced);
			json_array_foreach(components, i, c) hourly +=
			    json_number_value(json_object_get(c, "hourly"));
			m->by_use += json_array_size(unpriced);
			json_decref(components);
			json_decref(unpriced);
		}
		m->burn += hourly;
		if (is_part(e, type, PART_GROUP))
			m->compute += hourly;
		else if (is_part(e, type, PART_OBJECT) || is_part(e, type, PART_LUSTRE) ||
			 is_part(e, type, PART_NFS))
			m->storage += hourly;
		m->gpus += ledger_gpus(e, type, attrs);
	}
	m->burn = round(m->burn * 10000.0) / 10000.0;
}

void ledger_measure(const struct engine *e, const json_t *state, double *burn, long *gpus,
		    size_t *by_use)
{
	struct measure m;

	measure(e, state, &m);
	*burn = m.burn;
	*gpus = m.gpus;
	*by_use = m.by_use;
}

long ledger_gpus(const struct engine *e, const char *type, const json_t *attrs)
{
	const struct catalog *cat = e->prov->catalog ? e->prov->catalog(e->ctx) : NULL;
	const char *group = e->prov->part_type ? e->prov->part_type(PART_GROUP) : NULL;
	const struct catalog_type *t;

	if (!group || !cat || !type || strcmp(type, group) != 0 || !json_is_object(attrs))
		return 0;
	t = catalog_find(cat, json_string_value(json_object_get(attrs, "instance_type")));
	return t ? (long)t->gpus * (long)json_integer_value(json_object_get(attrs, "count")) : 0;
}

void ledger_trailers(const struct engine *e, const json_t *state, double upfront, double util,
		     double retained, json_t *out)
{
	struct measure m;
	const char *k;
	json_t *v;

	measure(e, state, &m);
	if (m.by_use)
		json_array_append_new(
		    out,
		    json_sprintf("Kiln-Burn: %.4f USD/h (%zu part%s billed by use, not counted)",
				 m.burn, m.by_use, m.by_use == 1 ? "" : "s"));
	else
		json_array_append_new(out, json_sprintf("Kiln-Burn: %.4f USD/h", m.burn));
	json_array_append_new(out, json_sprintf("Kiln-GPUs: %ld", m.gpus));
	/* The split kiln report draws; what is neither (a NAT gateway) is the rest of the burn. */
	json_array_append_new(out, json_sprintf("Kiln-Burn-Compute: %.4f USD/h", m.compute));
	json_array_append_new(out, json_sprintf("Kiln-Burn-Storage: %.4f USD/h", m.storage));
	if (e->spec && e->spec->max_hourly_usd > 0)
		json_array_append_new(
		    out, json_sprintf("Kiln-Budget: %.4f USD/h", e->spec->max_hourly_usd));
	if (retained > 0)
		json_array_append_new(out, json_sprintf("Kiln-Retained: %.4f USD/h", retained));
	if (upfront > 0)
		json_array_append_new(out, json_sprintf("Kiln-Upfront: %.2f USD", upfront));
	if (util >= 0)
		json_array_append_new(out, json_sprintf("Kiln-GPU-Util: %.1f", util));
	json_object_foreach(e->user_tags, k, v)
	{
		/* A tag that would break the trailer line is left out of the ledger. */
		if (json_is_string(v) && !strpbrk(k, "=\n") && !strchr(json_string_value(v), '\n'))
			json_array_append_new(
			    out, json_sprintf("Kiln-Tag: %s=%s", k, json_string_value(v)));
	}
}

/* The value of "KEY: value" at line (len bytes) as a new string, or NULL. */
static char *trailer_value(const char *line, size_t len, const char *key)
{
	size_t k = strlen(key);

	if (len < k + 2 || strncmp(line, key, k) != 0 || line[k] != ':' || line[k + 1] != ' ')
		return NULL;
	return xstrndup(line + k + 2, len - k - 2);
}

/*
 * A plain decimal number at the start of s: digits, at most one '.', no
 * sign, exponent, "nan" or "inf" (what kiln writes, and nothing strtod
 * would read as something else). *end: the first byte after it.
 */
static bool decimal(const char *s, double *out, const char **end)
{
	const char *p = s;
	bool dot = false;

	if (!s || !(*p >= '0' && *p <= '9'))
		return false;
	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++)
		dot |= *p == '.';
	*out = strtod(s, NULL);
	*end = p;
	return isfinite(*out);
}

/* A decimal number followed by exactly unit (or nothing else when unit is ""). */
static bool number_in(const char *s, const char *unit, double *out)
{
	const char *end;

	return decimal(s, out, &end) && strcmp(end, unit) == 0;
}

/* Kiln-Burn: "196.6400 USD/h", maybe followed by " (N parts billed by use, not counted)". */
static bool burn_value(const char *s, double *out)
{
	const char *end;
	size_t n;

	if (!decimal(s, out, &end) || strncmp(end, " USD/h", 6) != 0)
		return false;
	end += 6;
	n = strlen(end);
	return n == 0 || (end[0] == ' ' && end[1] == '(' && end[n - 1] == ')');
}

/* Record the first malformed trailer of le: its field, value and what it should be. */
static void malformed(struct ledger_entry *le, const char *field, const char *value,
		      const char *should)
{
	if (!le->bad)
		le->bad = xasprintf("%s \"%s\" is not %s", field, value, should);
}

void ledger_parse(const char *message, struct ledger_entry *le)
{
	const char *p = message;

	memset(le, 0, sizeof(*le));
	le->tags = json_object();
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *v;
		double d;

		if ((v = trailer_value(p, len, "Kiln-Time"))) {
			le->has_time = timefmt_time_parse_rfc3339(v, &le->time) == 0;
			if (!le->has_time)
				malformed(le, "Kiln-Time", v, "an RFC 3339 time");
		} else if ((v = trailer_value(p, len, "Kiln-Burn"))) {
			le->has_burn = burn_value(v, &le->burn);
			if (!le->has_burn)
				malformed(le, "Kiln-Burn", v, "a number of USD per hour");
		} else if ((v = trailer_value(p, len, "Kiln-GPUs"))) {
			if (number_in(v, "", &d) && d == floor(d) && d <= 1e9)
				le->gpus = (long)d;
			else
				malformed(le, "Kiln-GPUs", v, "a whole number of GPUs");
		} else if ((v = trailer_value(p, len, "Kiln-Upfront"))) {
			if (number_in(v, " USD", &d))
				le->upfront = d;
			else
				malformed(le, "Kiln-Upfront", v, "a number of USD");
		} else if ((v = trailer_value(p, len, "Kiln-GPU-Util"))) {
			le->has_util = number_in(v, "", &le->util) && le->util <= 100;
			if (!le->has_util)
				malformed(le, "Kiln-GPU-Util", v, "a percentage from 0 to 100");
		} else if ((v = trailer_value(p, len, "Kiln-Burn-Compute"))) {
			le->has_split = number_in(v, " USD/h", &le->compute);
			if (!le->has_split)
				malformed(le, "Kiln-Burn-Compute", v, "a number of USD per hour");
		} else if ((v = trailer_value(p, len, "Kiln-Burn-Storage"))) {
			if (!number_in(v, " USD/h", &le->storage))
				malformed(le, "Kiln-Burn-Storage", v, "a number of USD per hour");
		} else if ((v = trailer_value(p, len, "Kiln-Budget"))) {
			le->has_budget = number_in(v, " USD/h", &le->budget);
			if (!le->has_budget)
				malformed(le, "Kiln-Budget", v, "a number of USD per hour");
		} else if ((v = trailer_value(p, len, "Kiln-Retained"))) {
			if (!number_in(v, " USD/h", &le->retained))
				malformed(le, "Kiln-Retained", v, "a number of USD per hour");
		} else if ((v = trailer_value(p, len, "Kiln-Tag"))) {
			char *eq = strchr(v, '=');

			if (eq && eq != v) {
				*eq = '\0';
				json_object_set_new(le->tags, v, json_string(eq + 1));
			}
		} else if ((v = trailer_value(p, len, "Kiln-Operation"))) {
			free(le->operation);
			le->operation = v;
			v = NULL;
		} else if ((v = trailer_value(p, len, "Kiln-Reap-Reason"))) {
			free(le->reap_reason);
			le->reap_reason = v;
			v = NULL;
		}
		free(v);
		p = nl ? nl + 1 : NULL;
	}
	/* A burn without its time cannot be placed on the timeline. */
	if (!le->has_time)
		le->has_burn = false;
	ledger_distrust(le);
}

void ledger_distrust(struct ledger_entry *le)
{
	/* A malformed commit's figures are never money: its burn becomes unknown. */
	if (le->bad) {
		le->has_burn = false;
		le->upfront = 0;
		le->has_util = false;
		le->has_split = false;
		le->has_budget = false;
		le->retained = 0;
	}
}

void ledger_entry_release(struct ledger_entry *le)
{
	json_decref(le->tags);
	free(le->bad);
	free(le->operation);
	free(le->reap_reason);
	memset(le, 0, sizeof(*le));
}
