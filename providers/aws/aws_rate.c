/*
 * aws_rate.c - see aws_rate.h.
 */
#include "aws_rate.h"

#include "log.h"
#include "retry.h"

#include <stdlib.h>
#include <string.h>

/*
 * EC2's default token buckets, per account and region, as documented in
 * "Request throttling for the Amazon EC2 API", Amazon EC2 Developer Guide
 * (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html),
 * read 2026-12-06. EC2 keeps one request bucket per action, sized by the
 * action's category; kiln keeps one per category, which never sends more
 * than the per-action buckets allow. Unfiltered describes: a Describe*
 * with neither a Filter nor MaxResults (kiln's own lists always page).
 * The same table is tests/moto/kiln_moto.py's EC2_BUCKETS.
 */
const struct aws_rate_row aws_rate_table[AWS_RATE_NBUCKETS] = {
    [AWS_RATE_NON_MUTATING] = {"non-mutating", 100, 20, "Describe*, Get*, List*, Search*"},
    [AWS_RATE_UNFILTERED] = {"unfiltered describes", 50, 10,
			     "Describe* with no Filter and no MaxResults"},
    [AWS_RATE_MUTATING] = {"mutating", 50, 5, "every other action"},
    [AWS_RATE_CREATE_TAGS] = {"CreateTags", 100, 10, "CreateTags"},
    [AWS_RATE_RUN_INSTANCES] = {"RunInstances", 5, 2, "RunInstances requests"},
    [AWS_RATE_RUN_INSTANCES_INSTANCES] = {"RunInstances instances", 1000, 2,
					  "one token per instance RunInstances launches"},
    [AWS_RATE_TERMINATE_INSTANCES_INSTANCES] = {"TerminateInstances instances", 1000, 20,
						"one token per instance TerminateInstances names"},
};

void aws_rate_init(struct aws_rate *r)
{
	long scale = log_env_long("KILN_AWS_RATE_SCALE", 1, 100000);
	size_t i;

	if (scale < 1)
		scale = 1;
	for (i = 0; i < AWS_RATE_NBUCKETS; i++)
		r->bucket[i] = retry_bucket_new(
		    i == AWS_RATE_RUN_INSTANCES_INSTANCES ? (double)aws_rate_launch_chunk()
							  : aws_rate_table[i].size,
		    aws_rate_table[i].refill * (double)scale);
}

void aws_rate_release(struct aws_rate *r)
{
	size_t i;

	for (i = 0; i < AWS_RATE_NBUCKETS; i++) {
		retry_bucket_free(r->bucket[i]);
		r->bucket[i] = NULL;
	}
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* How many keys of form (k=v&k=v) start with prefix. */
static long count_keys(const char *form, const char *prefix)
{
	const char *p = form;
	size_t n = strlen(prefix);
	long count = 0;

	while (p && *p) {
		if (strncmp(p, prefix, n) == 0)
			count++;
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return count;
}

/* Whether form has a key starting with prefix. */
static bool has_key(const char *form, const char *prefix)
{
	return count_keys(form, prefix) > 0;
}

/* The value of key in form, as a number; 0 when it is not there. */
static long key_number(const char *form, const char *key)
{
	const char *p = form;
	size_t n = strlen(key);

	while (p && *p) {
		if (strncmp(p, key, n) == 0 && p[n] == '=')
			return strtol(p + n + 1, NULL, 10);
		p = strchr(p, '&');
		if (p)
			p++;
	}
	return 0;
}

size_t aws_rate_spend(struct aws_rate *r, const char *action, const char *form,
		      struct retry_spend *out)
{
	enum aws_rate_bucket cat = AWS_RATE_MUTATING;
	size_t n = 0;

	if (!form)
		form = "";
	if (strcmp(action, "CreateTags") == 0)
		cat = AWS_RATE_CREATE_TAGS;
	else if (strcmp(action, "RunInstances") == 0)
		cat = AWS_RATE_RUN_INSTANCES;
	else if (starts(action, "Describe") && !has_key(form, "Filter.") &&
		 !has_key(form, "MaxResults="))
		cat = AWS_RATE_UNFILTERED;
	else if (starts(action, "Describe") || starts(action, "Get") || starts(action, "List") ||
		 starts(action, "Search"))
		cat = AWS_RATE_NON_MUTATING;
	out[n].bucket = r->bucket[cat];
	out[n++].tokens = 1;
	if (cat == AWS_RATE_RUN_INSTANCES) {
		out[n].bucket = r->bucket[AWS_RATE_RUN_INSTANCES_INSTANCES];
		out[n++].tokens = (double)key_number(form, "MaxCount");
	} else if (strcmp(action, "TerminateInstances") == 0) {
		out[n].bucket = r->bucket[AWS_RATE_TERMINATE_INSTANCES_INSTANCES];
		out[n++].tokens = (double)count_keys(form, "InstanceId.");
	}
	return n;
}

long aws_rate_launch_chunk(void)
{
	long size = (long)aws_rate_table[AWS_RATE_RUN_INSTANCES_INSTANCES].size;
	long set = log_env_long("KILN_AWS_LAUNCH_BUCKET", size, 1000000);

	return set >= 1 ? set : size;
}

long aws_rate_terminate_chunk(void)
{
	return (long)aws_rate_table[AWS_RATE_TERMINATE_INSTANCES_INSTANCES].size;
}
