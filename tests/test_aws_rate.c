/*
 * test_aws_rate.c - EC2's documented token buckets as kiln keeps them
 * (providers/aws/aws_rate.c): which bucket a request spends from and how
 * many tokens, against the table of "Request throttling for the Amazon EC2
 * API" (Amazon EC2 Developer Guide, read 2026-12-06).
 */
#include "testutil.h"

#include "aws/aws_rate.h"
#include "retry.h"

static struct aws_rate rate;

static int setup(void **state)
{
	(void)state;
	unsetenv("KILN_AWS_RATE_SCALE");
	aws_rate_init(&rate);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	aws_rate_release(&rate);
	return 0;
}

static void test_the_table_is_the_documented_one(void **state)
{
	(void)state;
	assert_true(aws_rate_table[AWS_RATE_NON_MUTATING].size == 100 &&
		    aws_rate_table[AWS_RATE_NON_MUTATING].refill == 20);
	assert_true(aws_rate_table[AWS_RATE_UNFILTERED].size == 50 &&
		    aws_rate_table[AWS_RATE_UNFILTERED].refill == 10);
	assert_true(aws_rate_table[AWS_RATE_MUTATING].size == 50 &&
		    aws_rate_table[AWS_RATE_MUTATING].refill == 5);
	assert_true(aws_rate_table[AWS_RATE_CREATE_TAGS].size == 100 &&
		    aws_rate_table[AWS_RATE_CREATE_TAGS].refill == 10);
	assert_true(aws_rate_table[AWS_RATE_RUN_INSTANCES].size == 5 &&
		    aws_rate_table[AWS_RATE_RUN_INSTANCES].refill == 2);
	assert_true(aws_rate_table[AWS_RATE_RUN_INSTANCES_INSTANCES].size == 1000 &&
		    aws_rate_table[AWS_RATE_RUN_INSTANCES_INSTANCES].refill == 2);
	assert_true(aws_rate_table[AWS_RATE_TERMINATE_INSTANCES_INSTANCES].size == 1000 &&
		    aws_rate_table[AWS_RATE_TERMINATE_INSTANCES_INSTANCES].refill == 20);
	assert_int_equal(aws_rate_launch_chunk(), 1000);
	assert_int_equal(aws_rate_terminate_chunk(), 1000);
}

static void test_a_launch_spends_a_request_token_and_one_an_instance(void **state)
{
	struct retry_spend s[2];

	(void)state;
	assert_int_equal(aws_rate_spend(&rate, "RunInstances",
					"Action=RunInstances&MinCount=1000&MaxCount=1000", s),
			 2);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_RUN_INSTANCES]);
	assert_true(s[0].tokens == 1);
	assert_ptr_equal(s[1].bucket, rate.bucket[AWS_RATE_RUN_INSTANCES_INSTANCES]);
	assert_true(s[1].tokens == 1000);
}

static void test_a_termination_spends_one_token_an_instance_named(void **state)
{
	struct retry_spend s[2];

	(void)state;
	assert_int_equal(aws_rate_spend(&rate, "TerminateInstances",
					"InstanceId.1=i-1&InstanceId.2=i-2&InstanceId.3=i-3", s),
			 2);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_MUTATING]);
	assert_ptr_equal(s[1].bucket, rate.bucket[AWS_RATE_TERMINATE_INSTANCES_INSTANCES]);
	assert_true(s[1].tokens == 3);
}

static void test_a_describe_with_a_filter_or_a_page_is_non_mutating(void **state)
{
	struct retry_spend s[2];

	(void)state;
	assert_int_equal(aws_rate_spend(&rate, "DescribeInstances",
					"Filter.1.Name=tag%3Akiln%3Acluster&MaxResults=1000", s),
			 1);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_NON_MUTATING]);
	aws_rate_spend(&rate, "DescribeInstances", "MaxResults=1000", s);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_NON_MUTATING]);
}

static void test_a_describe_with_neither_is_unfiltered(void **state)
{
	struct retry_spend s[2];

	(void)state;
	aws_rate_spend(&rate, "DescribeImages", "Action=DescribeImages&ImageId.1=ami-1", s);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_UNFILTERED]);
}

static void test_create_tags_has_its_bucket_and_the_rest_are_mutating(void **state)
{
	struct retry_spend s[2];

	(void)state;
	aws_rate_spend(&rate, "CreateTags", "ResourceId.1=vpc-1", s);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_CREATE_TAGS]);
	aws_rate_spend(&rate, "CreateVpc", "CidrBlock=10.0.0.0%2F16", s);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_MUTATING]);
	aws_rate_spend(&rate, "GetConsoleOutput", "InstanceId=i-1", s);
	assert_ptr_equal(s[0].bucket, rate.bucket[AWS_RATE_NON_MUTATING]);
}

static void test_kiln_aws_rate_scale_speeds_up_the_refill_not_the_size(void **state)
{
	struct aws_rate fast;

	(void)state;
	setenv("KILN_AWS_RATE_SCALE", "100", 1);
	aws_rate_init(&fast);
	assert_true(retry_bucket_size(fast.bucket[AWS_RATE_RUN_INSTANCES_INSTANCES]) == 1000);
	assert_true(retry_bucket_refill(fast.bucket[AWS_RATE_RUN_INSTANCES_INSTANCES]) == 200);
	assert_int_equal(retry_bucket_take(fast.bucket[AWS_RATE_RUN_INSTANCES_INSTANCES], 1000, 0),
			 0);
	assert_int_equal(retry_bucket_take(fast.bucket[AWS_RATE_RUN_INSTANCES_INSTANCES], 1000, 0),
			 5100);
	aws_rate_release(&fast);
	unsetenv("KILN_AWS_RATE_SCALE");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_the_table_is_the_documented_one),
	    T(test_a_launch_spends_a_request_token_and_one_an_instance),
	    T(test_a_termination_spends_one_token_an_instance_named),
	    T(test_a_describe_with_a_filter_or_a_page_is_non_mutating),
	    T(test_a_describe_with_neither_is_unfiltered),
	    T(test_create_tags_has_its_bucket_and_the_rest_are_mutating),
	    T(test_kiln_aws_rate_scale_speeds_up_the_refill_not_the_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
