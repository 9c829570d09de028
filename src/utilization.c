/*
 * utilization.c - GPU utilization, storage throughput and their diagnosis;
 * see utilization.h.
 *
 * The diagnosis of a node group, first that holds:
 *   no data        no node reported GPU utilization (the agent is missing,
 *                  or its metrics are not arriving)
 *   storage-bound  mean GPU utilization under UTIL_BUSY while a Lustre store
 *                  of the workspace runs at UTIL_SATURATED or more of the
 *                  throughput the spec provisioned; the fix names the
 *                  throughput to raise to and what it costs
 *   idle           every node under the idle threshold (the spec's idle:
 *                  gpu_below, else 10%)
 *   imbalanced     some nodes at UTIL_BUSY or more, others under the threshold
 *   busy           otherwise
 */
#include "utilization.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "jsonc.h"
#include "state.h"
#include "timefmt.h"
#include "util.h"

int utilization_window_check(int64_t window, struct kiln_error *err)
{
	char *d;

	if (window >= SPEC_METRIC_PERIOD)
		return 0;
	d = timefmt_duration_format(window);
	kiln_error_set(err,
		       "--window %s is shorter than the metric period (1m): utilization is "
		       "sampled once a minute",
		       d);
	kiln_error_hint(err, "write 1m or more; the default is 15m");
	free(d);
	return -1;
}

const struct spec_idle *utilization_idle_policy(const struct spec *spec, const char *address)
{
	const char *name = address ? strchr(address, '.') : NULL;
	size_t i;

	for (i = 0; spec && name && i < spec->ngroups; i++)
		if (strcmp(spec->groups[i].name, name + 1) == 0 && spec->groups[i].idle.set)
			return &spec->groups[i].idle;
	return spec && spec->idle.set ? &spec->idle : NULL;
}

json_t *utilization_idle_groups(const struct engine *e, const json_t *state)
{
	const char *grp = e->prov->part_type ? e->prov->part_type(PART_GROUP) : NULL;
	json_t *out = json_object();
	const json_t *res;
	const char *addr;

	state_foreach_resource(state, addr, res)
	{
		const char *type = state_resource_type(res);

		if (grp && type && strcmp(type, grp) == 0 && utilization_idle_policy(e->spec, addr))
			json_object_set_new(out, addr, jsonc_share(res));
	}
	return out;
}

static double r1(double v)
{
	return round(v * 10.0) / 10.0;
}

static json_t *num(bool known, double v)
{
	return known ? json_real(r1(v)) : json_null();
}

/* The mean of key over the nodes that report it; *n of them. */
static double node_mean(const json_t *nodes, const char *key, size_t *n)
{
	const json_t *node, *v;
	double sum = 0;
	size_t i;

	*n = 0;
	json_array_foreach(nodes, i, node) if (json_is_number(v = json_object_get(node, key)))
	{
		sum += json_number_value(v);
		(*n)++;
	}
	return *n ? sum / (double)*n : 0;
}

/* The Lustre store running nearest its provisioned throughput; its load in *load. */
static const char *busiest_store(const json_t *stores, double *load, const json_t **st)
{
	const char *addr, *best = NULL;
	const json_t *s;

	*load = 0;
	json_object_foreach_const(stores, addr, s)
	{
		double prov = json_number_value(json_object_get(s, "provisioned_mbps"));
		double used = json_number_value(json_object_get(s, "read_mbps")) +
			      json_number_value(json_object_get(s, "write_mbps"));

		if (prov > 0 && 100 * used / prov >= *load) {
			*load = 100 * used / prov;
			best = addr;
			*st = s;
		}
	}
	return best;
}

/* "raise storage.NAME.throughput_per_tib from 250 to 500 (+$X/h)": priced by the provider. */
static char *storage_fix(const struct engine *e, const char *addr)
{
	const json_t *res = e ? json_object_get(e->desired, addr) : NULL;
	const json_t *attrs = json_object_get(res, "attrs");
	const char *type = json_string_value(json_object_get(res, "type"));
	json_int_t tp = json_integer_value(json_object_get(attrs, "throughput_per_tib"));
	const char *name = strchr(addr, '.') ? strchr(addr, '.') + 1 : addr;
	json_t *more, *c1, *u1, *c2, *u2, *c;
	double before = 0, after = 0;
	char *m, *out;
	size_t i;

	if (!e || !e->prov->cost || !type || tp <= 0 || tp >= 1000)
		return xasprintf("raise storage.%s.capacity_gb: Lustre throughput grows with "
				 "capacity",
				 name);
	more = json_deep_copy(attrs);
	json_object_set_new(more, "throughput_per_tib", json_integer(tp * 2));
	c1 = json_array();
	u1 = json_array();
	c2 = json_array();
	u2 = json_array();
	e->prov->cost(e->ctx, type, attrs, c1, u1);
	e->prov->cost(e->ctx, type, more, c2, u2);
	json_array_foreach(c1, i, c) before += json_number_value(json_object_get(c, "hourly"));
	json_array_foreach(c2, i, c) after += json_number_value(json_object_get(c, "hourly"));
	m = cost_money(after - before);
	out = xasprintf("raise storage.%s.throughput_per_tib from %" JSON_INTEGER_FORMAT
			" to %" JSON_INTEGER_FORMAT " (+%s an hour), or its capacity_gb",
			name, tp, tp * 2, m);
	free(m);
	json_decref(more);
	json_decref(c1);
	json_decref(u1);
	json_decref(c2);
	json_decref(u2);
	return out;
}

/* The id of the first node that reported no GPU utilization ("-" when none). */
static const char *first_silent(const json_t *nodes)
{
	const json_t *node;
	size_t i;

	json_array_foreach(nodes, i, node) if (!json_is_number(json_object_get(node, "gpu_util")))
	    return json_string_value(json_object_get(node, "id"))
		       ? json_string_value(json_object_get(node, "id"))
		       : "-";
	return "-";
}

static json_t *diagnose_group(const struct engine *e, const char *addr, const json_t *g,
			      const json_t *stores, int64_t window)
{
	const struct spec_idle *idle = utilization_idle_policy(e ? e->spec : NULL, addr);
	const json_t *nodes = json_object_get(g, "nodes"), *node, *v;
	double threshold = idle ? idle->gpu_below : 10, mean, mem, lo = 101, hi = -1, load = 0;
	const char *lo_id = NULL, *hi_id = NULL, *diag, *store;
	const json_t *st = NULL;
	size_t n, nm, i, busy = 0, idle_n = 0;
	char *why = NULL, *fix = NULL, *d = timefmt_duration_format(window);
	json_t *o;

	mean = node_mean(nodes, "gpu_util", &n);
	mem = node_mean(nodes, "gpu_memory", &nm);
	json_array_foreach(nodes, i, node)
	{
		double u, umax;

		if (!json_is_number(v = json_object_get(node, "gpu_util")))
			continue;
		u = json_number_value(v);
		umax = json_is_number(json_object_get(node, "gpu_util_max"))
			   ? json_number_value(json_object_get(node, "gpu_util_max"))
			   : u;
		if (u < lo) {
			lo = u;
			lo_id = json_string_value(json_object_get(node, "id"));
		}
		if (u > hi) {
			hi = u;
			hi_id = json_string_value(json_object_get(node, "id"));
		}
		busy += u >= UTIL_BUSY;
		idle_n += umax < threshold;
	}
	store = busiest_store(stores, &load, &st);
	if (n == 0) {
		diag = "no data";
		v = json_object_get(g, "agent");
		why = json_is_string(v)
			  ? xstrdup(json_string_value(v))
			  : xasprintf("no GPU utilization arrived from its %zu nodes in "
				      "the last %s: is the metrics agent running on them?",
				      json_array_size(nodes), d);
	} else if (n < json_array_size(nodes)) {
		/* A node without data may be the busy one: no verdict, and so no reap. */
		diag = "no data";
		why = xasprintf("no GPU utilization arrived from %zu of its %zu nodes (%s) in the "
				"last %s: is the metrics agent running on them?",
				json_array_size(nodes) - n, json_array_size(nodes),
				first_silent(nodes), d);
	} else if (mean < UTIL_BUSY && store && load >= UTIL_SATURATED) {
		diag = "storage-bound";
		why =
		    xasprintf("GPU utilization %.1f%% (mean) while %s moves %.1f of the %.1f MB/s "
			      "the spec provisioned (%.0f%%)",
			      mean, store,
			      json_number_value(json_object_get(st, "read_mbps")) +
				  json_number_value(json_object_get(st, "write_mbps")),
			      json_number_value(json_object_get(st, "provisioned_mbps")), load);
		fix = storage_fix(e, store);
	} else if (idle_n == n) {
		diag = "idle";
		why = xasprintf("every node under %.0f%% GPU utilization for the last %s (highest "
				"%.1f%%, %s)",
				threshold, d, hi, hi_id ? hi_id : "-");
	} else if (busy && idle_n) {
		diag = "imbalanced";
		why =
		    xasprintf("%zu of %zu nodes at %.0f%% or more, %zu under %.0f%% (%s at %.1f%%, "
			      "%s at %.1f%%)",
			      busy, n, UTIL_BUSY, idle_n, threshold, hi_id ? hi_id : "-", hi,
			      lo_id ? lo_id : "-", lo);
	} else {
		diag = "busy";
		why = xasprintf("GPU utilization %.1f%% (mean) over %zu nodes", mean, n);
	}
	o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:f, s:s, s:s, s:s?}", "address",
		      addr, "name", strchr(addr, '.') ? strchr(addr, '.') + 1 : addr, "nodes",
		      (json_int_t)json_array_size(nodes), "reporting", (json_int_t)n, "gpu_util",
		      num(n > 0, mean), "gpu_util_min", num(n > 0, lo), "gpu_util_max",
		      num(n > 0, hi), "gpu_memory", num(nm > 0, mem), "idle_below", threshold,
		      "diagnosis", diag, "why", why, "fix", fix);
	json_object_set_new(o, "min_node", lo_id ? json_string(lo_id) : json_null());
	json_object_set_new(o, "max_node", hi_id ? json_string(hi_id) : json_null());
	json_object_set_new(o, "per_node", jsonc_share(nodes));
	free(why);
	free(fix);
	free(d);
	return o;
}

json_t *utilization_diagnose(const struct engine *e, const json_t *measured, int64_t window)
{
	const json_t *stores = json_object_get(measured, "stores"), *g, *s;
	json_t *groups = json_array(), *sl = json_array();
	const char *addr;

	json_object_foreach_const(json_object_get(measured, "groups"), addr, g)
	    json_array_append_new(groups, diagnose_group(e, addr, g, stores, window));
	json_object_foreach_const(stores, addr, s)
	{
		double prov = json_number_value(json_object_get(s, "provisioned_mbps"));
		double used = json_number_value(json_object_get(s, "read_mbps")) +
			      json_number_value(json_object_get(s, "write_mbps"));

		json_array_append_new(
		    sl, json_pack("{s:s, s:o, s:o, s:o, s:o}", "address", addr, "read_mbps",
				  num(true, json_number_value(json_object_get(s, "read_mbps"))),
				  "write_mbps",
				  num(true, json_number_value(json_object_get(s, "write_mbps"))),
				  "provisioned_mbps", num(true, prov), "load",
				  num(prov > 0, prov > 0 ? 100 * used / prov : 0)));
	}
	return json_pack("{s:I, s:b, s:o, s:o}", "window_seconds", (json_int_t)window, "simulated",
			 json_is_true(json_object_get(measured, "simulated")), "groups", groups,
			 "stores", sl);
}

int utilization_measure(const struct engine *e, const json_t *resources, int64_t now,
			int64_t window, json_t **out, struct kiln_error *err)
{
	unsigned long before = e->prov->calls ? e->prov->calls(e->ctx) : 0;
	json_t *m = NULL;

	*out = NULL;
	if (!e->prov->metrics)
		return 0;
	if (e->prov->metrics(e->ctx, resources, now - window, now, SPEC_METRIC_PERIOD, &m, err) < 0)
		return -1;
	*out = utilization_diagnose(e, m, window);
	json_object_set_new(
	    *out, "calls",
	    json_integer((json_int_t)((e->prov->calls ? e->prov->calls(e->ctx) : 0) - before)));
	json_decref(m);
	return 0;
}

int utilization_mean(const struct engine *e, const json_t *resources, int64_t start, int64_t end,
		     double *mean, struct kiln_error *err)
{
	/* A whole number of minutes covering the stretch: one sample a node, its mean. */
	int64_t span = end - start,
		period = (span + SPEC_METRIC_PERIOD - 1) / SPEC_METRIC_PERIOD * SPEC_METRIC_PERIOD;
	const json_t *g, *node, *v;
	const char *addr;
	json_t *m = NULL;
	double sum = 0;
	size_t n = 0, i;

	if (!e->prov->metrics || span < SPEC_METRIC_PERIOD || period > INT32_MAX)
		return 1;
	if (e->prov->metrics(e->ctx, resources, start, end, (int)period, &m, err) < 0)
		return -1;
	json_object_foreach(json_object_get(m, "groups"), addr, g)
	    json_array_foreach(json_object_get(g, "nodes"), i, node)
	{
		if (json_is_number(v = json_object_get(node, "gpu_util"))) {
			sum += json_number_value(v);
			n++;
		}
	}
	json_decref(m);
	if (!n)
		return 1;
	*mean = sum / (double)n;
	return 0;
}
