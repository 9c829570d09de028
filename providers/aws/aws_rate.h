/*
 * aws_rate.h - EC2's documented request and resource token buckets, kept
 * on the client (retry.h's retry_bucket) so kiln waits for a token rather
 * than sending what EC2 would refuse with RequestLimitExceeded, and the
 * size a launch or a termination is split to so that no one request asks
 * for more instances than EC2's bucket holds.
 */
#ifndef KILN_AWS_RATE_H
#define KILN_AWS_RATE_H

#include <stddef.h>

#include "retry.h"

struct retry_bucket;


/* The buckets kiln keeps: one per request category, and the two per-instance ones. */
enum aws_rate_bucket {
	AWS_RATE_NON_MUTATING,
	AWS_RATE_UNFILTERED,
	AWS_RATE_MUTATING,
	AWS_RATE_CREATE_TAGS,
	AWS_RATE_RUN_INSTANCES,
	AWS_RATE_RUN_INSTANCES_INSTANCES,
	AWS_RATE_TERMINATE_INSTANCES_INSTANCES,
	AWS_RATE_NBUCKETS,
};

/* One row of the table: what EC2 documents for a bucket. */
struct aws_rate_row {
	const char *name;    /* "non-mutating" */
	double size;	     /* tokens the bucket holds */
	double refill;	     /* tokens added a second */
	const char *applies; /* to which requests */
};

extern const struct aws_rate_row aws_rate_table[AWS_RATE_NBUCKETS];

struct aws_rate {
	struct retry_bucket *bucket[AWS_RATE_NBUCKETS];
};

/*
 * The buckets, full, refilled at the table's rates times
 * KILN_AWS_RATE_SCALE (default 1: an emulator whose clock runs N times
 * faster, or an account whose limits AWS raised N times).
 */
void aws_rate_init(struct aws_rate *r);
void aws_rate_release(struct aws_rate *r);

/*
 * What an EC2 Query request (action, its form body) spends: its
 * category's bucket, and for RunInstances one token an instance of
 * MaxCount and for TerminateInstances one an InstanceId. Fills out (room
 * for 2) and returns how many.
 */
size_t aws_rate_spend(struct aws_rate *r, const char *action, const char *form,
		      struct retry_spend *out);

/*
 * The most instances one RunInstances may ask for: the instance bucket's
 * size, 1,000, or KILN_AWS_LAUNCH_BUCKET (an account whose bucket AWS
 * set otherwise; the tests, against an emulator with a smaller one).
 */
long aws_rate_launch_chunk(void);
/* The most instances one TerminateInstances may name: its instance bucket's size. */
long aws_rate_terminate_chunk(void);

#endif
