/*
 * test_retry.c - the retry arithmetic of retry.c on a test's clock and
 * dice: full-jitter backoff, one deadline per logical call (nested calls
 * share it), the engine's retries stopping at it, and the adaptive send
 * rate (multiplicative decrease on throttling, additive increase after,
 * the token bucket's waits).
 */
#include "testutil.h"

#include "engine.h"
#include "retry.h"

/* A clock that moves only when slept on, and dice that always roll u. */
struct fake {
	long now;
	long slept; /* in all */
	int sleeps;
	double u;
};

static long fake_now(void *arg)
{
	return ((struct fake *)arg)->now;
}

static void fake_sleep(void *arg, long ms)
{
	struct fake *f = arg;

	f->now += ms;
	f->slept += ms;
	f->sleeps++;
}

static double fake_uniform(void *arg)
{
	return ((struct fake *)arg)->u;
}

static struct fake fake;
static const struct retry_clock fake_clock = {fake_now, fake_sleep, fake_uniform, &fake};

static int setup(void **state)
{
	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.now = 1000000;
	setenv("KILN_CALL_DEADLINE_MS", "10000", 1);
	unsetenv("KILN_RETRY_MAX");
	unsetenv("KILN_RETRY_BASE_MS");
	return 0;
}

/* Backoff. */

static void test_backoff_is_zero_when_the_dice_roll_zero(void **state)
{
	(void)state;
	assert_int_equal(retry_backoff_ms(3, 100, 5000, 0.0), 0);
}

static void test_backoff_doubles_with_each_attempt_up_to_the_roll(void **state)
{
	double top = 0.9999999;

	(void)state;
	assert_int_equal(retry_backoff_ms(0, 100, 5000, top), 100);
	assert_int_equal(retry_backoff_ms(1, 100, 5000, top), 200);
	assert_int_equal(retry_backoff_ms(3, 100, 5000, top), 800);
}

static void test_backoff_is_a_share_of_the_window_the_dice_choose(void **state)
{
	(void)state;
	/* window [0, 400]: half of its 401 milliseconds */
	assert_int_equal(retry_backoff_ms(2, 100, 5000, 0.5), 200);
}

static void test_backoff_stops_growing_at_the_cap(void **state)
{
	(void)state;
	assert_int_equal(retry_backoff_ms(6, 100, 5000, 0.9999999), 5000);
	assert_int_equal(retry_backoff_ms(1000, 100, 5000, 0.9999999), 5000);
}

static void test_backoff_ignores_dice_out_of_range(void **state)
{
	(void)state;
	assert_int_equal(retry_backoff_ms(2, 100, 5000, 1.5), 0);
	assert_int_equal(retry_backoff_ms(2, 100, 5000, -0.5), 0);
}

/* The deadline of a logical call. */

static void test_a_call_has_the_deadline_kiln_call_deadline_ms_gives(void **state)
{
	struct retry_call c;

	(void)state;
	retry_call_begin(&c, &fake_clock);
	assert_int_equal(retry_call_left_ms(&c), 10000);
	fake.now += 4000;
	assert_int_equal(retry_call_left_ms(&c), 6000);
	assert_int_equal(retry_call_elapsed_ms(&c), 4000);
	fake.now += 7000;
	assert_int_equal(retry_call_left_ms(&c), 0);
	retry_call_end(&c);
	assert_null(retry_call_current());
}

static void test_a_sleep_past_the_deadline_is_refused_without_sleeping(void **state)
{
	struct retry_call c;

	(void)state;
	retry_call_begin(&c, &fake_clock);
	fake.now += 9500;
	assert_false(retry_call_sleep(&c, 600));
	assert_int_equal(fake.slept, 0);
	assert_true(retry_call_sleep(&c, 500));
	assert_int_equal(fake.slept, 500);
	retry_call_end(&c);
}

static void test_a_nested_call_shares_the_outer_deadline(void **state)
{
	struct retry_call outer, inner;

	(void)state;
	retry_call_begin(&outer, &fake_clock);
	fake.now += 3000;
	retry_call_begin(&inner, NULL);
	assert_int_equal(retry_call_left_ms(&inner), 7000);
	assert_ptr_equal(retry_call_current(), &outer);
	retry_call_end(&inner);
	assert_ptr_equal(retry_call_current(), &outer);
	retry_call_end(&outer);
	assert_null(retry_call_current());
}

static void test_a_zero_deadline_leaves_no_time_to_retry(void **state)
{
	struct retry_call c;

	(void)state;
	setenv("KILN_CALL_DEADLINE_MS", "0", 1);
	retry_call_begin(&c, &fake_clock);
	assert_true(retry_call_sleep(&c, 0));
	assert_false(retry_call_sleep(&c, 1));
	retry_call_end(&c);
}

static void test_a_pause_sleeps_the_jittered_backoff_on_the_call(void **state)
{
	struct retry_call c;

	(void)state;
	fake.u = 0.5;
	retry_call_begin(&c, &fake_clock);
	assert_true(retry_pause(2, 100, 5000));
	assert_int_equal(fake.slept, 200);
	retry_call_end(&c);
}

static void test_the_engine_stops_retrying_at_the_deadline(void **state)
{
	struct retry_call c;
	int attempt = 0;

	(void)state;
	/* Backoffs of 99% of 1, 2, 4, 8 s... against a 10 s deadline, 1000 attempts allowed. */
	setenv("KILN_RETRY_MAX", "1000", 1);
	setenv("KILN_RETRY_BASE_MS", "1000", 1);
	fake.u = 0.99;
	retry_call_begin(&c, &fake_clock);
	while (engine_retry_wait(attempt))
		attempt++;
	retry_call_end(&c);
	/* 990 + 1980 + 3960 ms slept (6930); the next, 4950 (the 5 s cap), would pass 10 s. */
	assert_int_equal(attempt, 3);
	assert_int_equal(fake.slept, 990 + 1980 + 3960);
	assert_true(fake.slept <= 10000);
}

static void test_the_engine_stops_retrying_after_kiln_retry_max(void **state)
{
	struct retry_call c;
	int attempt = 0;

	(void)state;
	setenv("KILN_RETRY_MAX", "3", 1);
	retry_call_begin(&c, &fake_clock);
	while (engine_retry_wait(attempt))
		attempt++;
	retry_call_end(&c);
	assert_int_equal(attempt, 2); /* 3 attempts in all: 2 waits */
	assert_int_equal(fake.sleeps, 2);
}

/* The adaptive rate: arithmetic. */

static void test_a_throttled_answer_cuts_the_rate_to_seven_tenths(void **state)
{
	(void)state;
	assert_float_equal(retry_rate_decreased(10), 7, 1e-9);
}

static void test_the_rate_never_drops_below_half_a_request_a_second(void **state)
{
	(void)state;
	assert_float_equal(retry_rate_decreased(0.2), RETRY_RATE_MIN, 1e-9);
	assert_float_equal(retry_rate_decreased(0), RETRY_RATE_MIN, 1e-9);
}

static void test_an_answer_not_throttled_adds_half_a_request_a_second(void **state)
{
	(void)state;
	assert_float_equal(retry_rate_increased(7, 10), 7.5, 1e-9);
}

static void test_the_rate_grows_to_twice_what_is_sent_and_never_falls_on_success(void **state)
{
	(void)state;
	assert_float_equal(retry_rate_increased(19.8, 10), 20, 1e-9);
	assert_float_equal(retry_rate_increased(7, 3), 7, 1e-9);
}

/* The adaptive rate: the bucket. */

/* Send n requests evenly over ms milliseconds from fake.now, none throttled. */
static void send_evenly(struct retry_rate *r, int n, long ms)
{
	int i;

	for (i = 0; i < n; i++) {
		fake.now += ms / n;
		fake.now += retry_rate_take(r, fake.now);
		retry_rate_answered(r, fake.now, false);
	}
}

/* A rate that saw 20 sends a second for 2 s, then a throttled answer. */
static struct retry_rate *throttled_at_20_a_second(void)
{
	struct retry_rate *r = retry_rate_new();

	fake.now = 0;
	send_evenly(r, 40, 2000);
	retry_rate_answered(r, fake.now, true);
	return r;
}

static void test_the_rate_does_not_limit_before_the_first_throttle(void **state)
{
	struct retry_rate *r = retry_rate_new();

	(void)state;
	send_evenly(r, 100, 1000);
	assert_float_equal(retry_rate_fill(r), 0, 1e-9);
	assert_int_equal(retry_rate_take(r, fake.now), 0);
	retry_rate_free(r);
}

static void test_a_throttle_limits_to_seven_tenths_of_the_measured_rate(void **state)
{
	struct retry_rate *r = throttled_at_20_a_second();

	(void)state;
	assert_float_equal(retry_rate_fill(r), 0.7 * 20, 0.5);
	retry_rate_free(r);
}

static void test_sends_after_a_throttle_wait_their_turn_for_a_token(void **state)
{
	struct retry_rate *r = throttled_at_20_a_second();
	double fill = retry_rate_fill(r);

	(void)state;
	/* The bucket starts empty: the first waits one token's time, the next two. */
	assert_int_equal(retry_rate_take(r, fake.now), (long)(1000 / fill + 0.999));
	assert_int_equal(retry_rate_take(r, fake.now), (long)(2000 / fill + 0.999));
	/* A send that does not happen gives its token back to the one after it. */
	retry_rate_give_back(r);
	assert_int_equal(retry_rate_take(r, fake.now), (long)(2000 / fill + 0.999));
	retry_rate_free(r);
}

static void test_throttle_after_throttle_drives_the_rate_to_its_floor(void **state)
{
	struct retry_rate *r = throttled_at_20_a_second();
	int i;

	(void)state;
	for (i = 0; i < 30; i++) {
		fake.now += retry_rate_take(r, fake.now);
		retry_rate_answered(r, fake.now, true);
	}
	assert_float_equal(retry_rate_fill(r), RETRY_RATE_MIN, 1e-9);
	retry_rate_free(r);
}

static void test_the_rate_recovers_with_answers_that_are_not_throttled(void **state)
{
	struct retry_rate *r = throttled_at_20_a_second();
	double low = retry_rate_fill(r);

	(void)state;
	send_evenly(r, 10, 1000);
	assert_true(retry_rate_fill(r) > low);
	retry_rate_free(r);
}

/* The retry quota. */

static void test_a_retry_costs_five_and_one_after_no_answer_ten(void **state)
{
	struct retry_rate *r = retry_rate_new();

	(void)state;
	assert_int_equal(retry_quota_take(r, false), RETRY_QUOTA_COST);
	assert_int_equal(retry_quota_take(r, true), RETRY_QUOTA_TIMEOUT_COST);
	assert_int_equal(retry_quota_left(r), RETRY_QUOTA_MAX - 15);
	retry_rate_free(r);
}

static void test_when_every_call_fails_retries_stop_after_a_hundred(void **state)
{
	struct retry_rate *r = retry_rate_new();
	int n = 0;

	(void)state;
	while (retry_quota_take(r, false))
		n++;
	assert_int_equal(n, RETRY_QUOTA_MAX / RETRY_QUOTA_COST);
	assert_int_equal(retry_quota_take(r, true), 0);
	retry_rate_free(r);
}

static void test_successes_refill_the_quota_up_to_its_maximum(void **state)
{
	struct retry_rate *r = retry_rate_new();
	int i;

	(void)state;
	while (retry_quota_take(r, false))
		;
	retry_quota_put_back(r, RETRY_QUOTA_COST); /* a call that succeeded after a retry */
	retry_quota_put_back(r, 1);		   /* one that needed none */
	assert_int_equal(retry_quota_left(r), RETRY_QUOTA_COST + 1);
	for (i = 0; i < 1000; i++)
		retry_quota_put_back(r, 1);
	assert_int_equal(retry_quota_left(r), RETRY_QUOTA_MAX);
	retry_rate_free(r);
}

/* EC2's documented buckets, kept on the client. */

static void test_a_full_bucket_gives_its_size_at_once_then_waits_for_the_refill(void **state)
{
	struct retry_bucket *b = retry_bucket_new(100, 20);
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(retry_bucket_take(b, 1, 0), 0);
	assert_int_equal(retry_bucket_take(b, 1, 0), 51); /* 50 ms, 2% over */
	retry_bucket_free(b);
}

static void test_a_2000_node_gang_waits_500_s_for_its_second_chunk_of_1000(void **state)
{
	struct retry_bucket *b = retry_bucket_new(1000, 2);

	(void)state;
	assert_int_equal(retry_bucket_take(b, 1000, 0), 0);
	assert_int_equal(retry_bucket_take(b, 1000, 0), 510000);
	retry_bucket_free(b);
}

static void test_waiters_queue_in_the_order_they_asked(void **state)
{
	struct retry_bucket *b = retry_bucket_new(1000, 2);

	(void)state;
	assert_int_equal(retry_bucket_take(b, 1000, 0), 0);
	assert_int_equal(retry_bucket_take(b, 1000, 0), 510000);
	assert_int_equal(retry_bucket_take(b, 1000, 0), 1020000);
	/* Time passed: the third still waits for what the second was promised. */
	assert_int_equal(retry_bucket_take(b, 2, 500000), 511020);
	retry_bucket_free(b);
}

static void test_a_take_above_the_size_waits_as_for_the_size(void **state)
{
	struct retry_bucket *b = retry_bucket_new(1000, 2);

	(void)state;
	assert_int_equal(retry_bucket_take(b, 2000, 0), 0);
	assert_int_equal(retry_bucket_take(b, 1, 0), 510);
	retry_bucket_free(b);
}

static void test_tokens_given_back_are_there_for_the_next(void **state)
{
	struct retry_bucket *b = retry_bucket_new(5, 2);

	(void)state;
	assert_int_equal(retry_bucket_take(b, 5, 0), 0);
	retry_bucket_give_back(b, 5);
	assert_int_equal(retry_bucket_take(b, 5, 0), 0);
	retry_bucket_free(b);
}

static void test_a_throttled_answer_empties_the_bucket_and_slows_its_refill(void **state)
{
	struct retry_bucket *b = retry_bucket_new(50, 5);

	(void)state;
	retry_bucket_answered(b, 0, true);
	assert_true(retry_bucket_refill(b) > 3.49 && retry_bucket_refill(b) < 3.51);
	assert_int_equal(retry_bucket_take(b, 1, 0), 292); /* 1 / 3.5 a second, 2% over */
	retry_bucket_free(b);
}

static void test_throttling_never_slows_a_bucket_below_a_tenth_of_its_refill(void **state)
{
	struct retry_bucket *b = retry_bucket_new(50, 5);
	int i;

	(void)state;
	for (i = 0; i < 50; i++)
		retry_bucket_answered(b, 0, true);
	assert_true(retry_bucket_refill(b) > 0.49 && retry_bucket_refill(b) < 0.51);
	retry_bucket_free(b);
}

static void test_answers_not_throttled_bring_the_refill_back_to_the_documented_one(void **state)
{
	struct retry_bucket *b = retry_bucket_new(50, 5);
	int i;

	(void)state;
	retry_bucket_answered(b, 0, true);
	retry_bucket_answered(b, 0, false);
	assert_true(retry_bucket_refill(b) > 3.99 && retry_bucket_refill(b) < 4.01);
	for (i = 0; i < 20; i++)
		retry_bucket_answered(b, 0, false);
	assert_true(retry_bucket_refill(b) > 4.99 && retry_bucket_refill(b) < 5.01);
	retry_bucket_free(b);
}

static void test_time_waiting_for_tokens_moves_the_calls_deadline_back(void **state)
{
	struct retry_call outer, inner;

	(void)state;
	retry_call_begin(&outer, &fake_clock);
	retry_call_begin(&inner, &fake_clock);
	fake.now += 500000;
	retry_call_defer(&inner, 500000);
	assert_int_equal(retry_call_left_ms(&inner), 10000);
	assert_int_equal(retry_call_left_ms(&outer), 10000);
	retry_call_end(&inner);
	retry_call_end(&outer);
}

#define T(f) cmocka_unit_test_setup(f, setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_backoff_is_zero_when_the_dice_roll_zero),
	    T(test_backoff_doubles_with_each_attempt_up_to_the_roll),
	    T(test_backoff_is_a_share_of_the_window_the_dice_choose),
	    T(test_backoff_stops_growing_at_the_cap),
	    T(test_backoff_ignores_dice_out_of_range),
	    T(test_a_call_has_the_deadline_kiln_call_deadline_ms_gives),
	    T(test_a_sleep_past_the_deadline_is_refused_without_sleeping),
	    T(test_a_nested_call_shares_the_outer_deadline),
	    T(test_a_zero_deadline_leaves_no_time_to_retry),
	    T(test_a_pause_sleeps_the_jittered_backoff_on_the_call),
	    T(test_the_engine_stops_retrying_at_the_deadline),
	    T(test_the_engine_stops_retrying_after_kiln_retry_max),
	    T(test_a_throttled_answer_cuts_the_rate_to_seven_tenths),
	    T(test_the_rate_never_drops_below_half_a_request_a_second),
	    T(test_an_answer_not_throttled_adds_half_a_request_a_second),
	    T(test_the_rate_grows_to_twice_what_is_sent_and_never_falls_on_success),
	    T(test_the_rate_does_not_limit_before_the_first_throttle),
	    T(test_a_throttle_limits_to_seven_tenths_of_the_measured_rate),
	    T(test_sends_after_a_throttle_wait_their_turn_for_a_token),
	    T(test_throttle_after_throttle_drives_the_rate_to_its_floor),
	    T(test_the_rate_recovers_with_answers_that_are_not_throttled),
	    T(test_a_retry_costs_five_and_one_after_no_answer_ten),
	    T(test_when_every_call_fails_retries_stop_after_a_hundred),
	    T(test_successes_refill_the_quota_up_to_its_maximum),
	    T(test_a_full_bucket_gives_its_size_at_once_then_waits_for_the_refill),
	    T(test_a_2000_node_gang_waits_500_s_for_its_second_chunk_of_1000),
	    T(test_waiters_queue_in_the_order_they_asked),
	    T(test_a_take_above_the_size_waits_as_for_the_size),
	    T(test_tokens_given_back_are_there_for_the_next),
	    T(test_a_throttled_answer_empties_the_bucket_and_slows_its_refill),
	    T(test_throttling_never_slows_a_bucket_below_a_tenth_of_its_refill),
	    T(test_answers_not_throttled_bring_the_refill_back_to_the_documented_one),
	    T(test_time_waiting_for_tokens_moves_the_calls_deadline_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
