/*
 * aws_billed.c - what AWS billed per kiln cluster, for kiln report
 * --actual: Cost Explorer's GetCostAndUsage (daily, unblended, grouped by
 * the kiln:cluster cost-allocation tag and the SERVICE dimension), and
 * whether kiln's tags are activated as cost-allocation tags
 * (ListCostAllocationTags). Shapes from botocore's ce model (JSON 1.1,
 * target AWSInsightsIndexService, one endpoint in us-east-1).
 *
 * Cost Explorer groups by a tag only once its key is activated in the
 * Billing console (or with UpdateCostAllocationTagsStatus), and only for
 * costs incurred after that; before, every cost lands under the empty
 * value "kiln:cluster$".
 */
#include "aws_int.h"

#include <string.h>

/* The hint kiln report prints when a tag is not active (kiln-report(1)). */
#define BILLED_ACTIVATE_HINT                                                                    \
	"activate them as cost-allocation tags: aws ce update-cost-allocation-tags-status "    \
	"--cost-allocation-tags-status TagKey=kiln:cluster,Status=Active "                      \
	"TagKey=kiln:workspace,Status=Active (or Billing console, Cost allocation tags); "     \
	"costs are grouped by them from then on, not before"

/*
 * Which side of the ledger's split (Kiln-Burn-Compute, -Storage) a service's
 * cost is set against: the names are Cost Explorer's SERVICE dimension
 * values as AWS bills them.
 */
static const struct {
	const char *service;
	const char *kind;
} service_kinds[] = {
    {"Amazon Elastic Compute Cloud - Compute", "compute"},
    {"EC2 - Other", "storage"}, /* EBS volumes and snapshots */
    {"Amazon FSx", "storage"},
    {"Amazon Simple Storage Service", "storage"},
    {"Amazon Elastic File System", "storage"},
};

const char *const aws_billed_actions[] = {"ce:GetCostAndUsage", "ce:ListCostAllocationTags",
					  NULL};

static const char *service_kind(const char *service)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(service_kinds); i++)
		if (strcmp(service_kinds[i].service, service) == 0)
			return service_kinds[i].kind;
	return "other";
}

static int tags_status(struct prov_ctx *ctx, json_t *tags, struct kiln_error *err)
{
	json_t *out = NULL, *v;
	size_t i;
	int rc;

	json_object_set_new(tags, PROV_TAG_CLUSTER, json_null());
	json_object_set_new(tags, PROV_TAG_WORKSPACE, json_null());
	rc = aws_json(ctx, AWS_CE, "ListCostAllocationTags",
		      json_pack("{s:[s, s], s:s}", "TagKeys", PROV_TAG_CLUSTER, PROV_TAG_WORKSPACE,
				"Type", "UserDefined"),
		      &out, err);
	if (rc != PROV_OK)
		return rc;
	json_array_foreach(json_object_get(out, "CostAllocationTags"), i, v)
	{
		const char *key = json_string_value(json_object_get(v, "TagKey"));
		const char *st = json_string_value(json_object_get(v, "Status"));

		if (key && st && json_object_get(tags, key))
			json_object_set_new(tags, key, json_string(st));
	}
	json_decref(out);
	return PROV_OK;
}

/* One group of one day: "kiln:cluster$NAME" and the service, with its amount. */
static void group_row(json_t *rows, const char *date, const json_t *g)
{
	const json_t *keys = json_object_get(g, "Keys");
	const char *tag = json_string_value(json_array_get(keys, 0));
	const char *service = json_string_value(json_array_get(keys, 1));
	const char *amount = json_string_value(json_object_get(
	    json_object_get(json_object_get(g, "Metrics"), "UnblendedCost"), "Amount"));
	const char *dollar = tag ? strchr(tag, '$') : NULL;
	char *end;
	double a;

	if (!service || !amount)
		return;
	a = strtod(amount, &end);
	if (end == amount || *end)
		return;
	json_array_append_new(rows, json_pack("{s:o, s:s, s:s, s:s, s:f}", "cluster",
					      dollar && dollar[1] ? json_string(dollar + 1)
								  : json_null(),
					      "date", date, "service", service, "kind",
					      service_kind(service), "amount", a));
}

int aws_billed(struct prov_ctx *ctx, const char *first, const char *last, json_t **out,
	       struct kiln_error *err)
{
	json_t *doc = json_pack("{s:o, s:s, s:o}", "tags", json_object(), "hint",
				BILLED_ACTIVATE_HINT, "rows", json_array());
	char *token = NULL;
	int rc;

	*out = NULL;
	rc = tags_status(ctx, json_object_get(doc, "tags"), err);
	while (rc == PROV_OK) {
		json_t *req = json_pack(
		    "{s:{s:s, s:s}, s:s, s:[s], s:[{s:s, s:s}, {s:s, s:s}]}", "TimePeriod", "Start",
		    first, "End", last, "Granularity", "DAILY", "Metrics", "UnblendedCost",
		    "GroupBy", "Type", "TAG", "Key", PROV_TAG_CLUSTER, "Type", "DIMENSION", "Key",
		    "SERVICE");
		json_t *ans = NULL, *day, *g;
		size_t i, j;
		const char *next;

		if (token)
			json_object_set_new(req, "NextPageToken", json_string(token));
		rc = aws_json(ctx, AWS_CE, "GetCostAndUsage", req, &ans, err);
		if (rc != PROV_OK)
			break;
		json_array_foreach(json_object_get(ans, "ResultsByTime"), i, day)
		{
			const char *date = json_string_value(
			    json_object_get(json_object_get(day, "TimePeriod"), "Start"));

			if (!date)
				continue;
			json_array_foreach(json_object_get(day, "Groups"), j, g)
			    group_row(json_object_get(doc, "rows"), date, g);
		}
		next = json_string_value(json_object_get(ans, "NextPageToken"));
		free(token);
		token = next && *next ? xstrdup(next) : NULL;
		json_decref(ans);
		if (!token)
			break;
	}
	free(token);
	if (rc != PROV_OK) {
		json_decref(doc);
		return rc;
	}
	*out = doc;
	return PROV_OK;
}
