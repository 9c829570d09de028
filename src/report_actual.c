/*
 * report_actual.c - see report_actual.h.
 */
#include "report_actual.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "jsonc.h"
#include "sprawl.h"
#include "timefmt.h"

#define DAY 86400

static double r4(double v)
{
	return round(v * 10000.0) / 10000.0;
}

static void day_of(int64_t t, char day[11])
{
	char buf[21];

	memcpy(day, timefmt_time_format_rfc3339(t, buf), 10);
	day[10] = '\0';
}

static void add(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, json_real(json_number_value(json_object_get(o, key)) + v));
}

/* Spread one stretch's burn over the UTC days it covers. */
static void stretch_days(json_t *days, const json_t *st)
{
	int64_t a, b;
	const json_t *c = json_object_get(st, "compute_usd_per_hour");
	const json_t *s = json_object_get(st, "storage_usd_per_hour");
	double burn = json_number_value(json_object_get(st, "usd_per_hour"));
	bool split = json_is_number(c) && json_is_number(s);

	if (timefmt_time_parse_rfc3339(json_string_value(json_object_get(st, "start")), &a) < 0 ||
	    timefmt_time_parse_rfc3339(json_string_value(json_object_get(st, "end")), &b) < 0)
		return;
	while (a < b) {
		int64_t next = (a / DAY + 1) * DAY, to = next < b ? next : b;
		double h = (double)(to - a) / 3600.0;
		char day[11];
		json_t *d;

		day_of(a, day);
		if (!(d = json_object_get(days, day))) {
			d = json_pack("{s:f, s:f, s:f, s:b}", "total", 0.0, "compute", 0.0,
				      "storage", 0.0, "split_known", 1);
			json_object_set_new(days, day, d);
		}
		add(d, "total", burn * h);
		if (split) {
			add(d, "compute", json_number_value(c) * h);
			add(d, "storage", json_number_value(s) * h);
		} else {
			json_object_set_new(d, "split_known", json_false());
		}
		a = to;
	}
}

json_t *report_actual_estimate(const json_t *report)
{
	json_t *est = json_object();
	const json_t *lt, *st;
	size_t i, j;

	json_array_foreach(json_object_get(report, "lifetimes"), i, lt)
	{
		const char *cluster = json_string_value(json_object_get(lt, "cluster"));
		json_t *days;

		if (!cluster)
			continue;
		if (!(days = json_object_get(est, cluster))) {
			days = json_object();
			json_object_set_new(est, cluster, days);
		}
		json_array_foreach(json_object_get(lt, "stretches"), j, st)
		    stretch_days(days, st);
	}
	return est;
}

static const char *const kinds[] = {"compute", "storage", "other"};

/* The day row of cluster/date in by (an object keyed "CLUSTER\nDATE"), made when missing. */
static json_t *day_row(json_t *by, const char *cluster, const char *date)
{
	char *key = xasprintf("%s\n%s", cluster, date);
	json_t *d = json_object_get(by, key);
	size_t k;

	if (!d) {
		json_t *ks = json_array();

		for (k = 0; k < ARRAY_SIZE(kinds); k++)
			json_array_append_new(ks, json_pack("{s:s, s:f, s:f, s:o}", "kind",
							     kinds[k], "estimate", 0.0, "billed",
							     0.0, "services", json_object()));
		d = json_pack("{s:s, s:s, s:f, s:f, s:o}", "cluster", cluster, "date", date,
			      "estimate", 0.0, "billed", 0.0, "kinds", ks);
		json_object_set_new(by, key, d);
	}
	free(key);
	return d;
}

static json_t *kind_row(json_t *day, const char *kind)
{
	const json_t *ks = json_object_get(day, "kinds");
	size_t k;

	for (k = 0; k < ARRAY_SIZE(kinds); k++)
		if (strcmp(kinds[k], kind) == 0)
			return json_array_get(ks, k);
	return json_array_get(ks, ARRAY_SIZE(kinds) - 1);
}

static int by_cluster_date(const void *x, const void *y)
{
	const json_t *a = *(const json_t *const *)x, *b = *(const json_t *const *)y;
	int c = strcmp(json_string_value(json_object_get(a, "cluster")),
		       json_string_value(json_object_get(b, "cluster")));

	return c ? c
		 : strcmp(json_string_value(json_object_get(a, "date")),
			  json_string_value(json_object_get(b, "date")));
}

/* Round every figure, and set variance = billed - estimate (null with an unknown estimate). */
static void finish(json_t *o)
{
	const json_t *e = json_object_get(o, "estimate");
	double b = r4(json_number_value(json_object_get(o, "billed")));

	json_object_set_new(o, "billed", json_real(b));
	if (json_is_number(e)) {
		double ev = r4(json_number_value(e));

		json_object_set_new(o, "estimate", json_real(ev));
		json_object_set_new(o, "variance", json_real(r4(b - ev)));
	} else {
		json_object_set_new(o, "variance", json_null());
	}
}

json_t *report_actual_variance(const json_t *estimate, const json_t *rows)
{
	json_t *by = json_object(), *days = json_array(), *clusters = json_object(), *cl_arr;
	const json_t *dd, *r, *v;
	const char *cluster, *date, *key;
	double untagged = 0;
	size_t i, k;

	json_object_foreach_const(estimate, cluster, dd)
	{
		json_object_foreach_const(dd, date, v)
		{
			json_t *d = day_row(by, cluster, date);
			bool split = json_is_true(json_object_get(v, "split_known"));

			add(d, "estimate", json_number_value(json_object_get(v, "total")));
			add(kind_row(d, "compute"), "estimate",
			    json_number_value(json_object_get(v, "compute")));
			add(kind_row(d, "storage"), "estimate",
			    json_number_value(json_object_get(v, "storage")));
			if (!split) {
				json_object_set_new(kind_row(d, "compute"), "estimate", json_null());
				json_object_set_new(kind_row(d, "storage"), "estimate", json_null());
				json_object_set_new(kind_row(d, "other"), "estimate", json_null());
			}
		}
	}
	json_array_foreach(rows, i, r)
	{
		const char *c = json_string_value(json_object_get(r, "cluster"));
		const char *dt = json_string_value(json_object_get(r, "date"));
		const char *svc = json_string_value(json_object_get(r, "service"));
		const char *kind = json_string_value(json_object_get(r, "kind"));
		double amt = json_number_value(json_object_get(r, "amount"));
		json_t *d, *kr;

		if (!c) {
			untagged += amt;
			continue;
		}
		if (!dt || !svc)
			continue;
		d = day_row(by, c, dt);
		kr = kind_row(d, kind ? kind : "other");
		add(d, "billed", amt);
		add(kr, "billed", amt);
		add(json_object_get(kr, "services"), svc, amt);
	}
	json_object_foreach_const(by, key, v)
	{
		json_t *d = json_deep_copy(v), *t, *kr;

		(void)key;
		json_array_foreach(json_object_get(d, "kinds"), k, kr)
		    finish(kr);
		cluster = json_string_value(json_object_get(d, "cluster"));
		if (!(t = json_object_get(clusters, cluster))) {
			t = json_pack("{s:s, s:f, s:f}", "cluster", cluster, "estimate", 0.0,
				      "billed", 0.0);
			json_object_set_new(clusters, cluster, t);
		}
		add(t, "estimate", json_number_value(json_object_get(d, "estimate")));
		add(t, "billed", json_number_value(json_object_get(d, "billed")));
		finish(d);
		json_array_append_new(days, d);
	}
	json_decref(by);
	provider_json_sort(days, by_cluster_date);
	cl_arr = json_array();
	json_object_foreach_const(clusters, key, v)
	{
		json_t *c = json_deep_copy(v);

		finish(c);
		json_array_append_new(cl_arr, c);
	}
	json_decref(clusters);
	return json_pack("{s:o, s:o, s:f}", "days", days, "clusters", cl_arr, "untagged",
			 r4(untagged));
}

void report_actual_window(const json_t *report, int64_t now, char first[11], char last[11])
{
	int64_t lo = now, t;
	const json_t *lt;
	size_t i;

	json_array_foreach(json_object_get(report, "lifetimes"), i, lt)
	if (timefmt_time_parse_rfc3339(json_string_value(json_object_get(lt, "start")), &t) == 0 && t < lo)
		lo = t;
	day_of(lo, first);
	day_of((now / DAY + 1) * DAY, last);
}

int report_actual_fetch(const struct provider *prov, const char *region, const char *first,
			const char *last, json_t **out, struct kiln_error *err)
{
	struct prov_ctx *ctx = NULL;
	int rc;

	*out = NULL;
	if (!prov->billed) {
		kiln_error_set(err, "the %s provider has no bill to read", prov->name);
		kiln_error_hint(err, "--actual reads a real cloud's billing; drop it for the "
				     "ledger's estimate alone");
		return -1;
	}
	if (sprawl_provider_open(prov, region, &ctx, err) < 0)
		return -1;
	ENGINE_CALL(rc, err, prov->billed(ctx, first, last, out, err));
	sprawl_provider_close(prov, ctx);
	return rc == PROV_OK ? 0 : -1;
}
