/*
 * sim_metrics.c - what sim's nodes and stores "did": simulated utilization
 * from two knobs, so that kiln status and kiln reap's idle policy can be
 * shown and tested without an account (kiln-sim(7)). Makes no API call and
 * counts none. Everything it answers is simulated, and says so.
 *
 *   KILN_SIM_GPU_UTIL    P[,P...]: the GPU utilization (percent) of each node of
 *                        every node group, in launch order, the list repeated
 *                        when a group has more nodes; unset: no GPU metrics
 *                        (as a node without the CloudWatch agent)
 *   KILN_SIM_LUSTRE_LOAD the read throughput of every Lustre store, in percent of
 *                        what the spec provisioned; unset: 0
 */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "jsonc.h"

/* "90,85,3": a new array of numbers, or NULL with err. */
static json_t *percent_list(const char *name, const char *v, struct kiln_error *err)
{
	json_t *arr = json_array();
	const char *p = v;

	while (*p) {
		char *end;
		double d = strtod(p, &end);

		/* !(0 <= d <= 100) refuses nan and inf too: reap must not act on them. */
		if (end == p || !(d >= 0 && d <= 100) || (*end && *end != ',')) {
			json_decref(arr);
			kiln_error_set(err, "%s '%s' is not a list of percentages (sim)", name, v);
			kiln_error_hint(err,
					"write it like 90,85,3: one per node, in launch order, "
					"each 0 to 100");
			return NULL;
		}
		json_array_append_new(arr, json_real(d));
		p = *end ? end + 1 : end;
	}
	if (!json_array_size(arr)) {
		json_decref(arr);
		kiln_error_set(err, "%s is empty (sim)", name);
		kiln_error_hint(err, "write it like 90,85,3, or unset it for no GPU metrics");
		return NULL;
	}
	return arr;
}

static json_t *group_metrics(const json_t *attrs, const json_t *util)
{
	const json_t *ids = json_object_get(attrs, "instance_ids"), *id;
	json_t *nodes = json_array();
	size_t i;

	json_array_foreach(ids, i, id)
	{
		json_t *u = util ? json_array_get(util, i % json_array_size(util)) : NULL;

		json_array_append_new(nodes, json_pack("{s:O, s:O?, s:O?, s:n, s:n, s:n}", "id", id,
						       "gpu_util", u, "gpu_util_max", u,
						       "gpu_memory", "net_in", "net_out"));
	}
	return json_pack("{s:o, s:o}", "nodes", nodes, "agent",
			 util ? json_null()
			      : json_string("sim publishes no GPU metrics unless KILN_SIM_GPU_UTIL "
					    "is set (kiln-sim(7))"));
}

int sim_metrics(struct prov_ctx *ctx, const json_t *resources, int64_t start, int64_t end,
		int period, json_t **out, struct kiln_error *err)
{
	const char *gv = getenv("KILN_SIM_GPU_UTIL"), *lv = getenv("KILN_SIM_LUSTRE_LOAD");
	json_t *util = NULL, *load = NULL, *groups, *stores, *res;
	const char *addr;

	(void)ctx;
	(void)start;
	(void)end;
	(void)period;
	*out = NULL;
	if (gv && *gv && !(util = percent_list("KILN_SIM_GPU_UTIL", gv, err)))
		return -1;
	if (lv && *lv &&
	    (!(load = percent_list("KILN_SIM_LUSTRE_LOAD", lv, err)) ||
	     json_array_size(load) != 1)) {
		if (load)
			kiln_error_set(err, "KILN_SIM_LUSTRE_LOAD '%s' is not one percentage (sim)",
				       lv);
		json_decref(util);
		json_decref(load);
		return -1;
	}
	groups = json_object();
	stores = json_object();
	json_object_foreach_const(resources, addr, res)
	{
		const char *type = json_string_value(json_object_get(res, "type"));
		const json_t *attrs = json_object_get(res, "attrs");

		if (!type || !json_is_object(attrs))
			continue;
		if (strcmp(type, "sim_node_group") == 0) {
			const struct catalog_type *t = catalog_find(
			    &catalog_aws,
			    json_string_value(json_object_get(attrs, "instance_type")));

			/* A type without GPUs has no GPU utilization to simulate. */
			if (!t || t->gpus > 0)
				json_object_set_new(groups, addr, group_metrics(attrs, util));
		} else if (strcmp(type, "sim_lustre") == 0) {
			/* MB/s per TiB of capacity, as FSx for Lustre provisions it. */
			double prov =
			    (double)json_integer_value(
				json_object_get(attrs, "throughput_per_tib")) *
			    (double)json_integer_value(json_object_get(attrs, "capacity_gb")) /
			    1024.0;
			double pct = load ? json_real_value(json_array_get(load, 0)) : 0;

			json_object_set_new(stores, addr,
					    json_pack("{s:f, s:f, s:f}", "read_mbps",
						      prov * pct / 100, "write_mbps", 0.0,
						      "provisioned_mbps", prov));
		}
	}
	json_decref(util);
	json_decref(load);
	*out = json_pack("{s:o, s:o, s:b}", "groups", groups, "stores", stores, "simulated", true);
	return 0;
}
