/*
 * test_runcost.c - a run's share of its lifetime's cost: by its GPUs,
 * scaled when runs overlap, an edited record left to idle, the upfront fee
 * spread; and the invariant: the runs' costs and idle add up to the
 * lifetime's cost, to the cent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "runcost.h"

#define H 3600
#define B (100 * H) /* a start: 0 is a run that never started */

static struct runrec run(int64_t start, int64_t end, int gpus)
{
	struct runrec r;

	memset(&r, 0, sizeof(r));
	r.started = start;
	r.ended = end;
	r.gpus = gpus;
	return r;
}

static void a_run_on_half_the_gpus_takes_half_the_burn_while_it_runs(void **state)
{
	struct runcost_stretch st[] = {{0, 10 * H, 100, 16}};
	struct runrec r[] = {run(H, 3 * H, 8)};
	struct runcost_share sh[1];

	(void)state;
	runcost_split(st, 1, 0, 10, r, 1, 10 * H, sh);
	assert_true(sh[0].counted);
	assert_true(fabs(sh[0].cost - 100.0) < 1e-9); /* 2h x $100 x 8/16 */
	assert_true(fabs(sh[0].gpu_hours - 16.0) < 1e-9);
}

static void overlapping_runs_that_claim_more_than_every_gpu_are_scaled_to_the_whole(void **state)
{
	struct runcost_stretch st[] = {{B, B + 4 * H, 100, 16}};
	struct runrec r[] = {run(B, B + 4 * H, 16), run(B + 2 * H, B + 4 * H, 16)};
	struct runcost_share sh[2];

	(void)state;
	runcost_split(st, 1, 0, 4, r, 2, B + 4 * H, sh);
	assert_true(fabs(sh[0].cost - 300.0) < 1e-9); /* 2h alone, 2h at half */
	assert_true(fabs(sh[1].cost - 100.0) < 1e-9);
	assert_true(fabs(sh[0].cost + sh[1].cost - 400.0) < 1e-9); /* no idle: never negative */
}

static void an_edited_record_takes_nothing_and_its_time_is_idle(void **state)
{
	struct runcost_stretch st[] = {{B, B + 2 * H, 100, 8}};
	struct runrec r[] = {run(B, B + 2 * H, 8)};
	struct runcost_share sh[1];

	(void)state;
	r[0].edited = true;
	runcost_split(st, 1, 0, 2, r, 1, B + 2 * H, sh);
	assert_false(sh[0].counted);
	assert_true(sh[0].cost == 0);
}

static void the_upfront_fee_is_spread_over_the_lifetime_s_hours(void **state)
{
	struct runcost_stretch st[] = {{B, B + 10 * H, 0, 8}};
	struct runrec r[] = {run(B, B + 5 * H, 8)};
	struct runcost_share sh[1];

	(void)state;
	runcost_split(st, 1, 1000, 10, r, 1, B + 10 * H, sh);
	assert_true(fabs(sh[0].cost - 500.0) < 1e-9);
}

static void runs_and_idle_add_up_to_the_lifetime_to_the_cent(void **state)
{
	/* Burns that change mid-run, a run still going, odd seconds. */
	struct runcost_stretch st[] = {{0, 7001, 196.6838, 16}, {7001, 20003, 98.3419, 8},
				       {20003, 30011, 211.17, 24}};
	struct runrec r[] = {run(13, 9000, 8), run(8000, 0, 8), run(15000, 25000, 16)};
	struct runcost_share sh[3];
	double lifetime = 0, runs = 0, idle, total;
	int64_t now = 30011;

	(void)state;
	for (size_t k = 0; k < 3; k++)
		lifetime += st[k].burn * (double)(st[k].b - st[k].a) / 3600.0;
	lifetime += 123.456; /* an upfront fee */
	total = runcost_cents(lifetime);
	runcost_split(st, 3, 123.456, 30011.0 / 3600.0, r, 3, now, sh);
	for (size_t i = 0; i < 3; i++)
		runs += runcost_cents(sh[i].cost);
	idle = runcost_cents(total - runs);
	assert_true(idle >= 0);
	assert_true(fabs(runcost_cents(runs + idle) - total) < 0.005);
	assert_true(sh[1].hours > 0); /* the run still going runs until now */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_run_on_half_the_gpus_takes_half_the_burn_while_it_runs),
	    cmocka_unit_test(
		overlapping_runs_that_claim_more_than_every_gpu_are_scaled_to_the_whole),
	    cmocka_unit_test(an_edited_record_takes_nothing_and_its_time_is_idle),
	    cmocka_unit_test(the_upfront_fee_is_spread_over_the_lifetime_s_hours),
	    cmocka_unit_test(runs_and_idle_add_up_to_the_lifetime_to_the_cent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
