/*
 * test_spec_capacity.c - compute.GROUP.capacity: every form it takes, the
 * durations EC2 sells Capacity Blocks for, and the exact message of every
 * shape error (and of a block for a type that is not sold as blocks).
 */
#include "testutil.h"

/* A group of two H100 nodes on sim; its capacity: is line 8. */
#define GROUP(count)                                                                               \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: sim}\n"                                                                  \
	"compute:\n"                                                                               \
	"  trainers:\n"                                                                            \
	"    gpu: H100:8\n"                                                                        \
	"    count: " count "\n"

static const struct spec_capacity *capacity_of(struct fx *f, const char *yaml)
{
	int ret = fx_validate(f, yaml);

	assert_no_diags(&f->d);
	assert_int_equal(ret, 0);
	return &f->spec->groups[0].capacity;
}

static void test_capacity_defaults_to_on_demand(void **state)
{
	const struct spec_capacity *c = capacity_of(*state, GROUP("2"));

	assert_int_equal(c->kind, CAPACITY_ON_DEMAND);
	assert_null(c->node);
}

static void test_capacity_spot_is_market_spot(void **state)
{
	struct fx *f = *state;
	const struct spec_capacity *c = capacity_of(f, GROUP("2") "    capacity: spot\n");

	assert_int_equal(c->kind, CAPACITY_SPOT);
	assert_false(c->spot_fallback);
	assert_int_equal(f->spec->groups[0].market, MARKET_SPOT);
}

static void test_capacity_spot_with_fallback_on_demand(void **state)
{
	const struct spec_capacity *c =
	    capacity_of(*state, GROUP("2") "    capacity: {spot: {fallback: on-demand}}\n");

	assert_int_equal(c->kind, CAPACITY_SPOT);
	assert_true(c->spot_fallback);
}

static void test_capacity_reservation_keeps_its_id(void **state)
{
	const struct spec_capacity *c =
	    capacity_of(*state, GROUP("2") "    capacity: {reservation: cr-0123456789abcdef0}\n");

	assert_int_equal(c->kind, CAPACITY_RESERVATION);
	assert_string_equal(c->reservation, "cr-0123456789abcdef0");
}

static void test_capacity_reservation_group_keeps_its_arn(void **state)
{
	const struct spec_capacity *c = capacity_of(
	    *state, GROUP("2") "    capacity: {reservation_group: "
			       "'arn:aws:resource-groups:us-east-1:123456789012:group/gpus'}\n");

	assert_int_equal(c->kind, CAPACITY_RESERVATION_GROUP);
	assert_string_equal(c->reservation,
			    "arn:aws:resource-groups:us-east-1:123456789012:group/gpus");
}

static void test_capacity_block_reads_duration_start_and_ceiling(void **state)
{
	const struct spec_capacity *c = capacity_of(
	    *state, GROUP("2") "    capacity:\n"
			       "      block: {duration: 48h, start: after 2026-12-03T00:00Z, "
			       "max_upfront_usd: 20000.5}\n");

	assert_int_equal(c->kind, CAPACITY_BLOCK);
	assert_int_equal(c->block_duration, 48 * 3600);
	assert_int_equal(c->block_start_after, 1796256000); /* 2026-12-03T00:00:00Z */
	assert_true(c->max_upfront_usd == 20000.5);
}

static void test_capacity_block_starts_asap_by_default(void **state)
{
	const struct spec_capacity *c = capacity_of(
	    *state, GROUP("2") "    capacity: {block: {duration: 7d, max_upfront_usd: 9}}\n");

	assert_int_equal(c->block_start_after, 0);
}

static void test_block_durations_are_days_to_14_then_weeks_to_182(void **state)
{
	(void)state;
	assert_true(spec_block_duration_ok(24 * 3600));
	assert_true(spec_block_duration_ok(14 * 24 * 3600));
	assert_true(spec_block_duration_ok(21 * 24 * 3600));
	assert_true(spec_block_duration_ok(182 * 24 * 3600));
	assert_false(spec_block_duration_ok(0));
	assert_false(spec_block_duration_ok(25 * 3600));
	assert_false(spec_block_duration_ok(15 * 24 * 3600));
	assert_false(spec_block_duration_ok(189 * 24 * 3600));
}

static void bad(struct fx *f, const char *yaml)
{
	assert_failed_with_errors(&f->d, fx_validate(f, yaml));
}

static void test_block_duration_ec2_does_not_sell_is_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {block: {duration: 15d, max_upfront_usd: 5}}\n");
	assert_error(&f->d, 8, 34,
		     "compute.trainers.capacity.block.duration: Capacity Blocks are sold for 1 to "
		     "14 days, then whole weeks up to 182 days; got 15d");
	assert_hint(&f->d, 8, 34, "use whole days (24h, 2d ... 14d) or weeks (21d, 28d ... 182d)");
}

static void test_block_without_max_upfront_is_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {block: {duration: 1d}}\n");
	assert_error(&f->d, 8, 23, "compute.trainers.capacity.block needs max_upfront_usd");
	assert_hint(&f->d, 8, 23,
		    "a purchase cannot be undone: set the most you will pay up front, in US "
		    "dollars");
}

static void test_block_start_must_be_asap_or_after_a_time(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {block: {duration: 1d, start: tomorrow, "
			  "max_upfront_usd: 5}}\n");
	assert_error(&f->d, 8, 45,
		     "compute.trainers.capacity.block.start must be asap or after TIME, got "
		     "'tomorrow'");
}

static void test_block_of_more_than_64_nodes_is_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("65") "    capacity: {block: {duration: 1d, max_upfront_usd: 5}}\n");
	assert_error(&f->d, 7, 12,
		     "compute.trainers.count: a Capacity Block holds 1 to 64 instances, got 65");
}

static void test_block_for_a_type_not_sold_as_blocks_is_refused(void **state)
{
	struct fx *f = *state;

	bad(f, "kiln: 1\ncluster: t\nprovider: {name: sim}\ncompute:\n  trainers:\n"
	       "    instance_type: g6e.xlarge\n    count: 2\n"
	       "    capacity: {block: {duration: 1d, max_upfront_usd: 5}}\n");
	assert_error(&f->d, 8, 16,
		     "compute.trainers.capacity.block: g6e.xlarge is not sold as Capacity Blocks");
	assert_hint(&f->d, 8, 16,
		    "Capacity Blocks are sold for p5.48xlarge, p5e.48xlarge, p5en.48xlarge, "
		    "p4d.24xlarge, trn1.32xlarge; or use on-demand, spot or a reservation");
}

static void test_malformed_reservation_id_is_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {reservation: cr-123}\n");
	assert_error(&f->d, 8, 29,
		     "compute.trainers.capacity.reservation: 'cr-123' is not a capacity "
		     "reservation id");
	assert_hint(&f->d, 8, 29, "write cr- and 17 hex digits, like cr-0123456789abcdef0");
}

static void test_reservation_group_must_be_a_resource_group_arn(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {reservation_group: arn:aws:ec2:x}\n");
	assert_error(&f->d, 8, 35,
		     "compute.trainers.capacity.reservation_group: 'arn:aws:ec2:x' is not a "
		     "resource group ARN");
}

static void test_two_sources_of_capacity_are_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {reservation: cr-0123456789abcdef0, block: {}}\n");
	assert_error(&f->d, 8, 51, "compute.trainers.capacity sets both reservation and block");
	assert_hint(&f->d, 8, 51, "keep one: a group takes its capacity from one place");
}

static void test_unknown_capacity_word_is_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: reserved\n");
	assert_error(&f->d, 8, 15,
		     "compute.trainers.capacity must be on-demand or spot, or a map of "
		     "reservation, reservation_group, block or spot; got 'reserved'");
}

static void test_spot_fallback_is_on_demand_only(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    capacity: {spot: {fallback: spot}}\n");
	assert_error(&f->d, 8, 33,
		     "compute.trainers.capacity.spot.fallback must be on-demand, got 'spot'");
}

static void test_market_and_capacity_together_are_refused(void **state)
{
	struct fx *f = *state;

	bad(f, GROUP("2") "    market: spot\n    capacity: spot\n");
	assert_error(&f->d, 8, 5, "compute.trainers sets both market and capacity");
	assert_hint(&f->d, 8, 5, "keep capacity: (capacity: spot is what market: spot says)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_capacity_defaults_to_on_demand),
	    kiln_test(test_capacity_spot_is_market_spot),
	    kiln_test(test_capacity_spot_with_fallback_on_demand),
	    kiln_test(test_capacity_reservation_keeps_its_id),
	    kiln_test(test_capacity_reservation_group_keeps_its_arn),
	    kiln_test(test_capacity_block_reads_duration_start_and_ceiling),
	    kiln_test(test_capacity_block_starts_asap_by_default),
	    kiln_test(test_block_durations_are_days_to_14_then_weeks_to_182),
	    kiln_test(test_block_duration_ec2_does_not_sell_is_refused),
	    kiln_test(test_block_without_max_upfront_is_refused),
	    kiln_test(test_block_start_must_be_asap_or_after_a_time),
	    kiln_test(test_block_of_more_than_64_nodes_is_refused),
	    kiln_test(test_block_for_a_type_not_sold_as_blocks_is_refused),
	    kiln_test(test_malformed_reservation_id_is_refused),
	    kiln_test(test_reservation_group_must_be_a_resource_group_arn),
	    kiln_test(test_two_sources_of_capacity_are_refused),
	    kiln_test(test_unknown_capacity_word_is_refused),
	    kiln_test(test_spot_fallback_is_on_demand_only),
	    kiln_test(test_market_and_capacity_together_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
