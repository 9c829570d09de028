/*
 * test_aws_capacity.c - how aws_capacity.c turns EC2's refusal of a launch
 * into a reservation that has not started (a Capacity Block bought for a
 * later window) into an error naming the reservation and the fix, and
 * leaves every other refusal alone; and which reads a reservation, or a
 * group of them, adds to kiln's policy. The launches themselves run against
 * moto (tests/e2e/capacity.sh).
 */
#include "testutil.h"

#include "aws/aws_capacity.h"
#include "aws/aws_int.h"

#include <string.h>

static void test_a_launch_into_a_block_not_active_yet_names_it_and_the_fix(void **state)
{
	struct launch l = {.address = "aws_instance_group.trainers",
			   .reservation = "cr-0123456789abcdef0",
			   .block = true};
	struct kiln_error err = {{0}, {0}};

	(void)state;
	kiln_error_set(&err, "aws: ec2 RunInstances: InvalidCapacityReservationState."
			     "PendingActivation: Your Capacity Block is not active yet");
	capacity_launch_refused(&l, PROV_ERROR, &err);
	assert_string_equal(err.msg,
			    "aws: aws_instance_group.trainers: its Capacity Block "
			    "cr-0123456789abcdef0 is not active yet, and EC2 refused the launch "
			    "(ec2 RunInstances: InvalidCapacityReservationState.PendingActivation: "
			    "Your Capacity Block is not active yet)");
	assert_string_equal(err.hint, "nodes launch into it once it is active: run kiln apply "
				      "again then, or kiln up --wait");
}

static void test_other_refusals_of_a_launch_are_left_alone(void **state)
{
	struct launch l = {.address = "aws_instance_group.trainers",
			   .reservation = "cr-0123456789abcdef0",
			   .block = true};
	struct kiln_error err = {{0}, {0}};

	(void)state;
	kiln_error_set(&err, "aws: ec2 RunInstances: ReservationCapacityExceeded: full");
	kiln_error_hint(&err, "as it was");
	capacity_launch_refused(&l, PROV_ERROR, &err);
	assert_string_equal(err.msg, "aws: ec2 RunInstances: ReservationCapacityExceeded: full");
	assert_string_equal(err.hint, "as it was");
	kiln_error_set(&err, "aws: InvalidCapacityReservationState.PendingActivation");
	capacity_launch_refused(&l, PROV_OK, &err);
	assert_string_equal(err.msg, "aws: InvalidCapacityReservationState.PendingActivation");
}

static void test_only_a_reservation_group_needs_the_resource_groups_read(void **state)
{
	json_t *group = json_pack("{s:{s:s}}", "attrs", "capacity", "reservation-group");
	json_t *one = json_pack("{s:{s:s}}", "attrs", "capacity", "reservation");
	const char *const *a;

	(void)state;
	a = aws_iam_resource_actions(group, VERB_CREATE);
	assert_non_null(a);
	assert_string_equal(a[0], "resource-groups:ListGroupResources");
	assert_string_equal(a[1], "ec2:DescribeCapacityReservations");
	assert_null(a[2]);
	a = aws_iam_resource_actions(one, VERB_CREATE);
	assert_string_equal(a[0], "ec2:DescribeCapacityReservations");
	assert_null(a[1]);
	assert_null(aws_iam_resource_actions(group, VERB_DELETE));
	json_decref(group);
	json_decref(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_a_launch_into_a_block_not_active_yet_names_it_and_the_fix),
	    kiln_test(test_other_refusals_of_a_launch_are_left_alone),
	    kiln_test(test_only_a_reservation_group_needs_the_resource_groups_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
