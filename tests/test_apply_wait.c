/*
 * test_apply_wait.c - the wait rule of apply --wait (src/apply_wait.c):
 * the bound and its words, which window a round waits for and how long it
 * sleeps, a window past the bound, a bound that ran out, and a saved plan
 * whose spec moved on while waiting. The clocks are arguments: no test
 * sleeps.
 */
#include "testutil.h"

#include "apply_wait.h"
#include "timefmt.h"

/* 2026-12-01T00:00:00Z */
#define NOW 1796083200

/* A state with one Capacity Block from start to end (seconds after NOW). */
static json_t *state_with_block(int64_t start, int64_t end)
{
	char s[21], e[21];

	timefmt_time_format_rfc3339(NOW + start, s);
	timefmt_time_format_rfc3339(NOW + end, e);
	return json_pack("{s:{s:{s:s, s:s, s:{s:s, s:s}}}}", "resources",
			 "sim_capacity_block.trainers", "type", "sim_capacity_block", "id", "cb-1",
			 "attrs", "start", s, "capacity_end", e);
}

static void test_the_bound_comes_from_the_flag_else_the_environment(void **state)
{
	struct apply_wait w = {.on = true};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(apply_wait_timeout_parse(&w, NULL, &err), 0);
	assert_int_equal(w.timeout, APPLY_WAIT_TIMEOUT_DEFAULT);
	assert_int_equal(apply_wait_timeout_parse(&w, "30m", &err), 0);
	assert_int_equal(w.timeout, 1800);
	w.arg = "0";
	assert_int_equal(apply_wait_timeout_parse(&w, "30m", &err), 0);
	assert_int_equal(w.timeout, 0);
}

static void test_a_bad_bound_is_named_with_the_fix(void **state)
{
	struct apply_wait w = {.on = true, .arg = "soon"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(apply_wait_timeout_parse(&w, NULL, &err), -1);
	assert_string_equal(err.msg, "--wait-timeout 'soon' is not a duration");
	assert_string_equal(err.hint, "write a duration of at most 182d like 30m, 6h or 2d, or 0 "
				      "to wait until the window ends");
	w.arg = NULL;
	assert_int_equal(apply_wait_timeout_parse(&w, "183d", &err), -1);
	assert_string_equal(err.msg, "KILN_WAIT_TIMEOUT '183d' is longer than 182d, the longest a "
				     "Capacity Block runs");
}

static void test_a_window_to_come_is_waited_for_one_poll_at_a_time(void **state)
{
	struct apply_wait w = {.on = true, .timeout = 3600};
	struct kiln_error err = {0};
	json_t *st = state_with_block(600, 86400), *win = NULL;
	long ms = 0;

	(void)state;
	assert_int_equal(apply_wait_next(&w, st, NOW, 1000, 60000, &win, &ms, &err), 1);
	assert_string_equal(json_string_value(json_object_get(win, "address")),
			    "sim_capacity_block.trainers");
	assert_int_equal(ms, 60000);
	json_decref(win);
	/* 59m30s later on the monotonic clock: only what is left of the bound. */
	assert_int_equal(apply_wait_next(&w, st, NOW, 1000 + 3570000, 60000, &win, &ms, &err),
			 1);
	assert_int_equal(ms, 30000);
	json_decref(win);
	/* Past it: the nodes did not launch in time. */
	assert_int_equal(apply_wait_next(&w, st, NOW, 1000 + 3600000, 60000, &win, &ms, &err),
			 -1);
	assert_null(win);
	assert_string_equal(err.msg, "the nodes did not launch into sim_capacity_block.trainers "
				     "(cb-1, from 2026-12-01T00:10:00Z) within the --wait-timeout "
				     "of 1h");
	assert_string_equal(err.hint, "it is bought and recorded in the state: run kiln apply (or "
				      "kiln up --wait) again once it has started, or give "
				      "--wait-timeout a longer bound");
	json_decref(st);
}

static void test_a_window_starting_past_the_bound_is_not_waited_for(void **state)
{
	struct apply_wait w = {.on = true, .timeout = 3600};
	struct kiln_error err = {0};
	json_t *st = state_with_block(7200, 86400), *win = NULL;
	long ms = 0;

	(void)state;
	assert_int_equal(apply_wait_next(&w, st, NOW, 0, 60000, &win, &ms, &err), -1);
	assert_string_equal(err.msg, "sim_capacity_block.trainers (cb-1) starts at "
				     "2026-12-01T02:00:00Z, after the --wait-timeout of 1h: not "
				     "waiting for it");
	/* 0: until the window ends, however far off it starts. */
	w = (struct apply_wait){.on = true, .timeout = 0};
	assert_int_equal(apply_wait_next(&w, st, NOW, 0, 60000, &win, &ms, &err), 1);
	assert_int_equal(ms, 60000);
	json_decref(win);
	json_decref(st);
}

static void test_nothing_is_waited_for_once_the_window_ended(void **state)
{
	struct apply_wait w = {.on = true, .timeout = 3600};
	struct kiln_error err = {0};
	json_t *st = state_with_block(-7200, -60), *win = NULL;
	long ms = 0;

	(void)state;
	assert_int_equal(apply_wait_next(&w, st, NOW, 0, 60000, &win, &ms, &err), 0);
	assert_null(win);
	/* The bound's clock starts only with a window to wait for. */
	assert_false(w.started);
	json_decref(st);
}

static void test_a_held_plan_stops_the_rounds_when_its_spec_moved_on(void **state)
{
	struct apply_wait w = {.on = true};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(apply_wait_held_check(&w, "sha256:new", "kiln.yaml", &err), 0);
	apply_wait_hold(&w, "plan.kiln", "sha256:0123456789abcdef0123", "kiln.yaml", NULL);
	assert_string_equal(w.held_spec, "kiln.yaml");
	assert_null(w.held_ws);
	assert_int_equal(
	    apply_wait_held_check(&w, "sha256:0123456789abcdef0123", "kiln.yaml", &err), 0);
	assert_int_equal(
	    apply_wait_held_check(&w, "sha256:fedcba9876543210fedc", "kiln.yaml", &err), -1);
	assert_string_equal(err.msg, "kiln.yaml changed while --wait waited: plan.kiln was made "
				     "from sha256:0123456789ab, it is now sha256:fedcba987654; "
				     "--wait applies again only what that plan covered; nothing "
				     "more was changed");
	assert_string_equal(err.hint, "what plan.kiln did is recorded: review the change (kiln "
				      "plan kiln.yaml --out plan.kiln) and apply that plan, with "
				      "--wait");
	apply_wait_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_bound_comes_from_the_flag_else_the_environment),
	    cmocka_unit_test(test_a_bad_bound_is_named_with_the_fix),
	    cmocka_unit_test(test_a_window_to_come_is_waited_for_one_poll_at_a_time),
	    cmocka_unit_test(test_a_window_starting_past_the_bound_is_not_waited_for),
	    cmocka_unit_test(test_nothing_is_waited_for_once_the_window_ended),
	    cmocka_unit_test(test_a_held_plan_stops_the_rounds_when_its_spec_moved_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
