/*
 * aws_metrics.c - the metrics hook (provider.h): what the nodes and Lustre
 * file systems of a workspace did, from CloudWatch's GetMetricData.
 *
 * Series, each one query of a GetMetricData call:
 *   per node   CWAgent nvidia_smi_utilization_gpu and
 *              nvidia_smi_utilization_memory (Average, by InstanceId: the
 *              agent's nvidia_gpu section, aggregated by InstanceId), and
 *              AWS/EC2 NetworkIn and NetworkOut (Sum, bytes a period)
 *   per store  AWS/FSx DataReadBytes and DataWriteBytes (Sum, by FileSystemId)
 * GetMetricData takes up to 500 queries a call (botocore's model, and
 * CloudWatch's quotas page), so one call serves 125 nodes: the calls do not
 * grow with the nodes below that, and grow by one per 125 above it; a
 * NextToken page is followed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aws_int.h"
#include "awsxml.h"
#include "timefmt.h"

/* CloudWatch's limit of queries in one GetMetricData call. */
#define CW_MAX_QUERIES 500

struct cw_query {
	char id[32];	       /* "q17": [a-z][a-zA-Z0-9_]* as the API requires */
	const char *ns;	       /* "CWAgent" */
	const char *metric;    /* "nvidia_smi_utilization_gpu" */
	const char *dim;       /* "InstanceId" */
	const char *dim_value; /* "i-..." */
	const char *stat;      /* "Average", "Sum" */
	json_t *target;	       /* the node or store object the figure goes to (borrowed) */
	const char *field;     /* its key there */
	double sum, max;
	size_t n;
};

static void add(struct cw_query **qs, size_t *n, const char *ns, const char *metric,
		const char *dim, const char *value, const char *stat, json_t *target,
		const char *field)
{
	struct cw_query *q;

	*qs = xrealloc(*qs, (*n + 1) * sizeof(**qs));
	q = &(*qs)[*n];
	memset(q, 0, sizeof(*q));
	snprintf(q->id, sizeof(q->id), "q%zu", *n);
	q->ns = ns;
	q->metric = metric;
	q->dim = dim;
	q->dim_value = value;
	q->stat = stat;
	q->target = target;
	q->field = field;
	(*n)++;
}

/* One GetMetricData call (and its NextToken pages) for qs[0..n). */
static int fetch(struct prov_ctx *ctx, struct cw_query *qs, size_t n, int64_t start, int64_t end,
		 int period, struct kiln_error *err)
{
	char *token = NULL, t0[21], t1[21];
	size_t i;
	int rc;

	do {
		struct aws_params p = {{0}};
		json_t *resp = NULL, *results, *r;

		for (i = 0; i < n; i++) {
			char *k = xasprintf("MetricDataQueries.member.%zu", i + 1), *kk;

			aws_paramf(&p, (kk = xasprintf("%s.Id", k)), "%s", qs[i].id);
			free(kk);
			aws_param(&p, (kk = xasprintf("%s.MetricStat.Metric.Namespace", k)),
				  qs[i].ns);
			free(kk);
			aws_param(&p, (kk = xasprintf("%s.MetricStat.Metric.MetricName", k)),
				  qs[i].metric);
			free(kk);
			aws_param(
			    &p,
			    (kk = xasprintf("%s.MetricStat.Metric.Dimensions.member.1.Name", k)),
			    qs[i].dim);
			free(kk);
			aws_param(
			    &p,
			    (kk = xasprintf("%s.MetricStat.Metric.Dimensions.member.1.Value", k)),
			    qs[i].dim_value);
			free(kk);
			aws_paramf(&p, (kk = xasprintf("%s.MetricStat.Period", k)), "%d", period);
			free(kk);
			aws_param(&p, (kk = xasprintf("%s.MetricStat.Stat", k)), qs[i].stat);
			free(kk);
			free(k);
		}
		aws_param(&p, "StartTime", timefmt_time_format_rfc3339(start, t0));
		aws_param(&p, "EndTime", timefmt_time_format_rfc3339(end, t1));
		aws_param(&p, "ScanBy", "TimestampAscending");
		if (token)
			aws_param(&p, "NextToken", token);
		free(token);
		token = NULL;
		rc = aws_query(ctx, AWS_CW, "GetMetricData", &p, &resp, err);
		aws_params_release(&p);
		if (rc != PROV_OK)
			return rc;
		results = awsxml_list(resp, "GetMetricDataResult.MetricDataResults");
		json_array_foreach(results, i, r)
		{
			const char *id = awsxml_str(r, "Id");
			json_t *values = awsxml_list(r, "Values"), *v;
			size_t k, j;

			for (k = 0; id && k < n && strcmp(qs[k].id, id) != 0; k++)
				;
			json_array_foreach(values, j, v)
			{
				double d =
				    json_is_string(v) ? strtod(json_string_value(v), NULL) : NAN;

				if (k == n || !isfinite(d))
					continue;
				qs[k].sum += d;
				qs[k].max = qs[k].n && qs[k].max > d ? qs[k].max : d;
				qs[k].n++;
			}
			json_decref(values);
		}
		json_decref(results);
		if (awsxml_str(resp, "GetMetricDataResult.NextToken"))
			token = xstrdup(awsxml_str(resp, "GetMetricDataResult.NextToken"));
		json_decref(resp);
	} while (token);
	return PROV_OK;
}

/* The figures into their nodes and stores: means, the highest sample, rates a second. */
static void settle(struct cw_query *qs, size_t n, int period)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct cw_query *q = &qs[i];
		double mean = q->n ? q->sum / (double)q->n : 0;

		if (!q->n)
			continue;
		if (strcmp(q->stat, "Sum") == 0)
			mean /= period; /* bytes a period -> bytes a second */
		if (strcmp(q->field, "read_mbps") == 0 || strcmp(q->field, "write_mbps") == 0)
			mean /= 1e6;
		json_object_set_new(q->target, q->field, json_real(mean));
		if (strcmp(q->field, "gpu_util") == 0)
			json_object_set_new(q->target, "gpu_util_max", json_real(q->max));
	}
}

int aws_metrics(struct prov_ctx *ctx, const json_t *resources, int64_t start, int64_t end,
		int period, json_t **out, struct kiln_error *err)
{
	json_t *groups = json_object(), *stores = json_object(), *group;
	const json_t *res;
	struct cw_query *qs = NULL;
	const char *addr;
	size_t n = 0, i;
	int rc = PROV_OK;

	*out = NULL;
	json_object_foreach_const(resources, addr, res)
	{
		const char *type = json_string_value(json_object_get(res, "type"));
		const json_t *attrs = json_object_get(res, "attrs"), *id;

		if (!type || !json_is_object(attrs))
			continue;
		if (strcmp(type, "aws_instance_group") == 0) {
			const struct catalog_type *t = catalog_find(
			    &catalog_aws,
			    json_string_value(json_object_get(attrs, "instance_type")));
			json_t *nodes;

			/* A type without GPUs publishes no GPU metrics: nothing to diagnose. */
			if (t && t->gpus == 0)
				continue;
			nodes = json_array();

			json_array_foreach(json_object_get(attrs, "instance_ids"), i, id)
			{
				json_t *node = json_pack("{s:O, s:n, s:n, s:n, s:n, s:n}", "id", id,
							 "gpu_util", "gpu_util_max", "gpu_memory",
							 "net_in", "net_out");
				const char *iid = json_string_value(id);

				json_array_append_new(nodes, node);
				if (!iid)
					continue;
				add(&qs, &n, AWS_GPU_METRICS_NAMESPACE,
				    "nvidia_smi_utilization_gpu", "InstanceId", iid, "Average",
				    node, "gpu_util");
				add(&qs, &n, AWS_GPU_METRICS_NAMESPACE,
				    "nvidia_smi_utilization_memory", "InstanceId", iid, "Average",
				    node, "gpu_memory");
				add(&qs, &n, "AWS/EC2", "NetworkIn", "InstanceId", iid, "Sum", node,
				    "net_in");
				add(&qs, &n, "AWS/EC2", "NetworkOut", "InstanceId", iid, "Sum",
				    node, "net_out");
			}
			json_object_set_new(groups, addr,
					    json_pack("{s:o, s:n}", "nodes", nodes, "agent"));
		} else if (strcmp(type, "aws_fsx_lustre") == 0 &&
			   json_is_string(json_object_get(res, "id"))) {
			/* Provisioned: throughput_per_tib (MB/s per TiB) × capacity in TiB. */
			double prov =
			    (double)json_integer_value(
				json_object_get(attrs, "throughput_per_tib")) *
			    (double)json_integer_value(json_object_get(attrs, "capacity_gb")) /
			    1024.0;
			json_t *st = json_pack("{s:f, s:f, s:f}", "read_mbps", 0.0, "write_mbps",
					       0.0, "provisioned_mbps", prov);

			json_object_set_new(stores, addr, st);
			add(&qs, &n, "AWS/FSx", "DataReadBytes", "FileSystemId",
			    json_string_value(json_object_get(res, "id")), "Sum", st, "read_mbps");
			add(&qs, &n, "AWS/FSx", "DataWriteBytes", "FileSystemId",
			    json_string_value(json_object_get(res, "id")), "Sum", st, "write_mbps");
		}
	}
	for (i = 0; i < n && rc == PROV_OK; i += CW_MAX_QUERIES)
		rc = fetch(ctx, qs + i, n - i < CW_MAX_QUERIES ? n - i : CW_MAX_QUERIES, start, end,
			   period, err);
	if (rc == PROV_OK)
		settle(qs, n, period);
	free(qs);
	if (rc != PROV_OK) {
		json_decref(groups);
		json_decref(stores);
		return -1;
	}
	json_object_foreach(groups, addr, group)
	{
		json_t *node;
		bool any = false;

		json_array_foreach(json_object_get(group, "nodes"), i, node) any |=
		    json_is_number(json_object_get(node, "gpu_util"));
		if (!any && json_array_size(json_object_get(group, "nodes")))
			json_object_set_new(
			    group, "agent",
			    json_string("no CWAgent nvidia_smi_utilization_gpu by InstanceId in "
					"CloudWatch for its nodes: the image has no CloudWatch "
					"agent (a node's /var/log/kiln-boot.log says so), or it "
					"is not publishing"));
	}
	*out = json_pack("{s:o, s:o, s:b}", "groups", groups, "stores", stores, "simulated", false);
	return 0;
}
