/*
 * test_purchase.c - the purchase rule of apply (src/purchase.c): capacity
 * paid up front is bought only as a refreshed plan showed its offering,
 * and only with approvals that count or --allow-purchase; the words of
 * each refusal.
 */
#include "testutil.h"

#include "purchase.h"

static void test_a_plan_that_buys_nothing_goes_on(void **state)
{
	struct purchase_ask ask = {.refresh_off = true, .spec_path = "kiln.yaml"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(purchase_check(&ask, &err), 0);
	assert_string_equal(err.msg, "");
}

static void test_a_purchase_without_approval_or_the_flag_is_refused(void **state)
{
	struct purchase_ask ask = {.address = "sim_capacity_block.trainers",
				   .offering = true,
				   .upfront = 1234.5,
				   .spec_path = "kiln.yaml"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(purchase_check(&ask, &err), -1);
	assert_string_equal(err.msg, "this plan buys capacity up front ($1,234.50, which cannot be "
				     "undone), and no approval covers it; nothing was changed");
	assert_string_equal(err.hint, "save the plan (kiln plan kiln.yaml --out plan.kiln), have it "
				      "approved and apply it with --require-approvals N, or pass "
				      "--allow-purchase");
	ask.allowed = true;
	assert_int_equal(purchase_check(&ask, &err), 0);
}

static void test_a_plan_that_read_no_offering_never_buys(void **state)
{
	struct purchase_ask ask = {.address = "sim_capacity_block.trainers",
				   .offering = true,
				   .refresh_off = true,
				   .allowed = true,
				   .spec_path = "kiln.yaml"};
	struct kiln_error err = {0};

	(void)state;
	/* Not even with --allow-purchase: the fee it would pay was never read. */
	assert_int_equal(purchase_check(&ask, &err), -1);
	assert_string_equal(err.msg, "this plan buys sim_capacity_block.trainers up front (which "
				     "cannot be undone), but it was made with --refresh=false; kiln "
				     "buys only from a plan that read the offering and its fee from "
				     "the cloud; nothing was changed");
	assert_string_equal(err.hint, "plan without --refresh=false (kiln plan kiln.yaml --out "
				      "plan.kiln), review the offering and fee it shows, then apply "
				      "that plan");
	ask.refresh_off = false;
	ask.offering = false;
	assert_int_equal(purchase_check(&ask, &err), -1);
	assert_non_null(strstr(err.msg, "but it shows no offering;"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_plan_that_buys_nothing_goes_on),
	    cmocka_unit_test(test_a_purchase_without_approval_or_the_flag_is_refused),
	    cmocka_unit_test(test_a_plan_that_read_no_offering_never_buys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
