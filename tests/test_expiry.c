/*
 * test_expiry.c - the TTL rules (expiry.c), the shared clock (timefmt_now,
 * KILN_NOW), RFC 3339 times, and the expiry member of the state document.
 */
#include "testutil.h"

#include "expiry.h"
#include "state.h"

#define T0 1795910400 /* 2026-11-29T00:00:00Z */

static int64_t at(const char *s)
{
	int64_t t = -1;

	assert_int_equal(timefmt_time_parse_rfc3339(s, &t), 0);
	return t;
}

static void test_rfc3339_parses_utc_and_offsets(void **state)
{
	(void)state;
	assert_int_equal(at("2026-11-29T00:00:00Z"), T0);
	assert_int_equal(at("2026-11-29T02:00:00+02:00"), T0);
	assert_int_equal(at("2026-11-28T22:30:00-01:30"), T0);
	assert_int_equal(at("2026-11-29T00:00:00.999Z"), T0);
}

static void test_rfc3339_refuses_what_is_not_a_time(void **state)
{
	int64_t t = 7;

	(void)state;
	assert_int_equal(timefmt_time_parse_rfc3339("2026-11-29", &t), -1);
	assert_int_equal(timefmt_time_parse_rfc3339("2026-11-29T00:00:00", &t), -1);
	assert_int_equal(timefmt_time_parse_rfc3339("2026-11-29T00:00:00+0200", &t), -1);
	assert_int_equal(timefmt_time_parse_rfc3339("2026-11-29T00:00:00+ab:cd", &t), -1);
	assert_int_equal(timefmt_time_parse_rfc3339("tomorrow", &t), -1);
	assert_int_equal(t, 7);
}

static void test_rfc3339_format_round_trips(void **state)
{
	char buf[21];

	(void)state;
	assert_string_equal(timefmt_time_format_rfc3339(T0 + 3661, buf), "2026-11-29T01:01:01Z");
	assert_int_equal(at(buf), T0 + 3661);
}

static void test_util_now_reads_kiln_now(void **state)
{
	struct kiln_error err = {0};
	int64_t t = 0;

	(void)state;
	setenv("KILN_NOW", "2026-11-29T02:00:00+02:00", 1);
	assert_int_equal(timefmt_now(&t, &err), 0);
	assert_int_equal(t, T0);
	unsetenv("KILN_NOW");
	assert_int_equal(timefmt_now(&t, &err), 0);
	assert_true(t > T0 - 86400 * 365);
}

static void test_util_now_names_a_bad_kiln_now_and_the_fix(void **state)
{
	struct kiln_error err = {0};
	int64_t t = 0;

	(void)state;
	setenv("KILN_NOW", "2026-11-29 00:00", 1);
	assert_int_equal(timefmt_now(&t, &err), -1);
	unsetenv("KILN_NOW");
	assert_string_equal(err.msg, "KILN_NOW '2026-11-29 00:00' is not an RFC 3339 time");
	assert_string_equal(err.hint, "write it like 2027-01-31T12:00:00Z, or unset it");
}

static void test_first_apply_sets_expiry_from_now(void **state)
{
	json_t *x;

	(void)state;
	x = expiry_at_apply(NULL, 8 * 3600, false, T0, "Ann <ann@x>", "kiln.yaml");
	assert_non_null(x);
	assert_string_equal(json_string_value(json_object_get(x, "expires")),
			    "2026-11-29T08:00:00Z");
	assert_string_equal(json_string_value(json_object_get(x, "set_at")),
			    "2026-11-29T00:00:00Z");
	assert_string_equal(json_string_value(json_object_get(x, "set_by")), "Ann <ann@x>");
	assert_string_equal(json_string_value(json_object_get(x, "set_how")), "spec ttl");
	assert_string_equal(json_string_value(json_object_get(x, "spec")), "kiln.yaml");
	assert_int_equal(json_integer_value(json_object_get(x, "ttl_seconds")), 8 * 3600);
	json_decref(x);
}

static void test_later_apply_keeps_the_expiry(void **state)
{
	json_t *first, *later;

	(void)state;
	first = expiry_at_apply(NULL, 3600, false, T0, "Ann", "a.yaml");
	later = expiry_at_apply(first, 3600, false, T0 + 1800, "Bob", "b.yaml");
	assert_string_equal(json_string_value(json_object_get(later, "expires")),
			    "2026-11-29T01:00:00Z");
	assert_string_equal(json_string_value(json_object_get(later, "set_by")), "Ann");
	/* The spec path follows the last apply: reap destroys with it. */
	assert_string_equal(json_string_value(json_object_get(later, "spec")), "b.yaml");
	json_decref(first);
	json_decref(later);
}

static void test_flag_or_changed_ttl_resets_from_now(void **state)
{
	json_t *first, *flag, *changed;

	(void)state;
	first = expiry_at_apply(NULL, 3600, false, T0, "Ann", NULL);
	flag = expiry_at_apply(first, 3600, true, T0 + 1800, "Bob", NULL);
	assert_string_equal(json_string_value(json_object_get(flag, "expires")),
			    "2026-11-29T01:30:00Z");
	assert_string_equal(json_string_value(json_object_get(flag, "set_how")), "--ttl");
	assert_string_equal(json_string_value(json_object_get(flag, "set_by")), "Bob");
	changed = expiry_at_apply(first, 7200, false, T0 + 1800, "Cy", NULL);
	assert_string_equal(json_string_value(json_object_get(changed, "expires")),
			    "2026-11-29T02:30:00Z");
	json_decref(first);
	json_decref(flag);
	json_decref(changed);
}

static void test_no_ttl_removes_the_expiry(void **state)
{
	json_t *first;

	(void)state;
	first = expiry_at_apply(NULL, 3600, false, T0, "Ann", NULL);
	assert_null(expiry_at_apply(first, 0, false, T0, "Ann", NULL));
	json_decref(first);
}

static void test_extend_pushes_out_from_the_expiry_or_from_now(void **state)
{
	struct kiln_error err = {0};
	json_t *first, *ext, *late;

	(void)state;
	first = expiry_at_apply(NULL, 3600, false, T0, "Ann", "k.yaml");
	json_object_set_new(first, "spec_text", json_string("kiln: 1\n"));
	ext = expiry_extend(first, 4 * 3600, T0 + 600, "Bob", "default", &err);
	assert_string_equal(json_string_value(json_object_get(ext, "expires")),
			    "2026-11-29T05:00:00Z");
	assert_string_equal(json_string_value(json_object_get(ext, "set_how")), "ttl extend");
	assert_string_equal(json_string_value(json_object_get(ext, "set_by")), "Bob");
	assert_string_equal(json_string_value(json_object_get(ext, "spec")), "k.yaml");
	/* The spec's copy stays with it: reap may need it after the extension. */
	assert_string_equal(json_string_value(json_object_get(ext, "spec_text")), "kiln: 1\n");
	/* Already past: the extension counts from now, never less than asked. */
	late = expiry_extend(first, 3600, T0 + 3 * 3600, "Bob", "default", &err);
	assert_string_equal(json_string_value(json_object_get(late, "expires")),
			    "2026-11-29T04:00:00Z");
	json_decref(first);
	json_decref(ext);
	json_decref(late);
}

static void test_extend_without_expiry_names_the_fix(void **state)
{
	struct kiln_error err = {0};

	(void)state;
	assert_null(expiry_extend(NULL, 3600, T0, "Bob", "dev", &err));
	assert_string_equal(err.msg, "workspace 'dev' has no TTL to extend");
	assert_string_equal(err.hint,
			    "set one with `kiln apply --ttl DURATION` or `ttl:` in the spec");
}

static json_t *state_with(int64_t ttl, int64_t now, bool resources)
{
	json_t *s = state_new("c", "default", "sim");

	if (ttl)
		json_object_set_new(s, "expiry", expiry_at_apply(NULL, ttl, false, now, "A", "k"));
	if (resources)
		json_object_set_new(
		    state_resources(s), "sim_network.main",
		    json_pack("{s:s, s:s, s:{}}", "type", "sim_network", "id", "vpc-1", "attrs"));
	return s;
}

static void test_reap_decisions(void **state)
{
	json_t *none = state_with(0, T0, true), *live = state_with(3600, T0, true),
	       *empty = state_with(3600, T0, false);
	int64_t left;

	(void)state;
	assert_int_equal(expiry_reap_decision(NULL, T0, &left), REAP_NO_TTL);
	assert_int_equal(expiry_reap_decision(none, T0 + 99999, &left), REAP_NO_TTL);
	assert_int_equal(expiry_reap_decision(live, T0 + 3599, &left), REAP_KEEP);
	assert_int_equal(left, 1);
	/* At the expiry itself, it is due. */
	assert_int_equal(expiry_reap_decision(live, T0 + 3600, &left), REAP_DESTROY);
	assert_int_equal(left, 0);
	assert_int_equal(expiry_reap_decision(live, T0 + 7200, &left), REAP_DESTROY);
	assert_int_equal(left, -3600);
	assert_int_equal(expiry_reap_decision(empty, T0 + 7200, &left), REAP_EMPTY);
	json_decref(none);
	json_decref(live);
	json_decref(empty);
}

/* A state whose Capacity Block ends at end (and a TTL of ttl from T0, 0 for none). */
static json_t *state_with_block(int64_t ttl, int64_t end)
{
	json_t *s = state_with(ttl, T0, true);
	char e[21];

	json_object_set_new(state_resources(s), "sim_capacity_block.trainers",
			    json_pack("{s:s, s:s, s:{s:s, s:s}}", "type", "sim_capacity_block",
				      "id", "cr-1", "attrs", "start", "2026-12-01T11:30:00Z",
				      "capacity_end", timefmt_time_format_rfc3339(end, e)));
	return s;
}

static void test_a_block_end_is_a_hard_expiry_an_hour_early(void **state)
{
	json_t *no_ttl = state_with_block(0, T0 + 10 * 3600);
	json_t *long_ttl = state_with_block(72 * 3600, T0 + 10 * 3600);
	json_t *short_ttl = state_with_block(3600, T0 + 10 * 3600);
	int64_t left;

	(void)state;
	assert_int_equal(expiry_reap_decision(no_ttl, T0 + 9 * 3600 - 1, &left), REAP_KEEP);
	assert_int_equal(left, 1);
	assert_int_equal(expiry_reap_decision(no_ttl, T0 + 9 * 3600, &left), REAP_DESTROY);
	assert_int_equal(expiry_reap_decision(long_ttl, T0 + 9 * 3600, &left), REAP_DESTROY);
	/* A TTL shorter than the block still comes first. */
	assert_int_equal(expiry_reap_decision(short_ttl, T0 + 3600, &left), REAP_DESTROY);
	json_decref(no_ttl);
	json_decref(long_ttl);
	json_decref(short_ttl);
}

static void test_ttl_extend_past_a_block_names_when_reap_comes(void **state)
{
	json_t *s = state_with_block(3600, T0 + 10 * 3600), *x;
	struct kiln_error err = {0};
	char want[21], end[21];

	(void)state;
	x = expiry_extend(json_object_get(s, "expiry"), 3 * 3600, T0, "B", "default", &err);
	assert_int_equal(expiry_within_windows(s, x, &err), 0);
	json_decref(x);
	x = expiry_extend(json_object_get(s, "expiry"), 9 * 3600, T0, "B", "default", &err);
	assert_int_equal(expiry_within_windows(s, x, &err), -1);
	timefmt_time_format_rfc3339(T0 + 9 * 3600, want);
	timefmt_time_format_rfc3339(T0 + 10 * 3600, end);
	{
		char *msg = xasprintf("the TTL cannot go past %s, when kiln reap takes the cluster "
				      "down: an hour before sim_capacity_block.trainers ends at %s",
				      want, end);

		assert_string_equal(err.msg, msg);
		free(msg);
	}
	assert_string_equal(err.hint, "the capacity is bought for its window only: extend by "
				      "less, or buy a later block");
	json_decref(x);
	json_decref(s);
}

static void test_windows_say_their_state_by_the_clock(void **state)
{
	json_t *s = state_with_block(0, T0 + 10 * 3600), *w;

	(void)state;
	w = expiry_windows(s, T0);
	assert_int_equal(json_array_size(w), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(w, 0), "state")),
			    "scheduled");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(w, 0), "left_seconds")),
			 9 * 3600);
	json_decref(w);
	json_decref(s);
}

static void test_the_window_sentence_names_when_reap_comes(void **state)
{
	json_t *s = state_with_block(0, T0 + 10 * 3600), *none = state_with(3600, T0, true);
	char at[21], *want, *got;

	(void)state;
	timefmt_time_format_rfc3339(T0 + 9 * 3600, at);
	want = xasprintf("kiln reap takes it down at %s, an hour before "
			 "sim_capacity_block.trainers ends",
			 at);
	got = expiry_window_sentence(s);
	assert_string_equal(got, want);
	assert_null(expiry_window_sentence(none));
	free(got);
	free(want);
	json_decref(s);
	json_decref(none);
}

static void test_left_format(void **state)
{
	char *s;

	(void)state;
	s = expiry_left_format(8 * 3600);
	assert_string_equal(s, "8h0m");
	free(s);
	s = expiry_left_format(-(2 * 86400 + 3 * 3600 + 59));
	assert_string_equal(s, "2d3h");
	free(s);
	s = expiry_left_format(125);
	assert_string_equal(s, "2m");
	free(s);
	s = expiry_left_format(9);
	assert_string_equal(s, "9s");
	free(s);
}

static void test_state_accepts_an_expiry_and_checks_it(void **state)
{
	struct kiln_error err = {0};
	json_t *s = state_with(3600, T0, true), *back = NULL;
	char *text = state_canonical(s);

	(void)state;
	assert_int_equal(state_parse(&back, text, strlen(text), "state.json", &err), 0);
	assert_true(json_equal(json_object_get(back, "expiry"), json_object_get(s, "expiry")));
	json_object_set_new(json_object_get(s, "expiry"), "expires", json_string("soon"));
	assert_int_equal(state_check(s, "state.json", &err), -1);
	assert_string_equal(err.msg, "state.json: expiry: expires 'soon' is not an RFC 3339 time");
	json_object_set_new(json_object_get(s, "expiry"), "expires",
			    json_string("2026-11-29T01:00:00Z"));
	json_object_set_new(json_object_get(s, "expiry"), "ttl_seconds", json_integer(0));
	assert_int_equal(state_check(s, "state.json", &err), -1);
	assert_string_equal(err.msg, "state.json: expiry: ttl_seconds must be more than 0");
	json_object_del(json_object_get(s, "expiry"), "ttl_seconds");
	assert_int_equal(state_check(s, "state.json", &err), -1);
	assert_string_equal(err.msg, "state.json: expiry: missing key 'ttl_seconds'");
	json_object_set_new(json_object_get(s, "expiry"), "ttl_seconds", json_integer(3600));
	json_object_set_new(json_object_get(s, "expiry"), "spec_text", json_integer(1));
	assert_int_equal(state_check(s, "state.json", &err), -1);
	assert_string_equal(err.msg, "state.json: expiry: wrong type for 'spec_text': expected a "
				     "string, found an integer");
	json_object_set_new(s, "expiry", json_string("8h"));
	assert_int_equal(state_check(s, "state.json", &err), -1);
	assert_string_equal(err.msg,
			    "state.json: wrong type for 'expiry': expected an object, found a "
			    "string");
	free(text);
	json_decref(back);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc3339_parses_utc_and_offsets),
	    cmocka_unit_test(test_rfc3339_refuses_what_is_not_a_time),
	    cmocka_unit_test(test_rfc3339_format_round_trips),
	    cmocka_unit_test(test_util_now_reads_kiln_now),
	    cmocka_unit_test(test_util_now_names_a_bad_kiln_now_and_the_fix),
	    cmocka_unit_test(test_first_apply_sets_expiry_from_now),
	    cmocka_unit_test(test_later_apply_keeps_the_expiry),
	    cmocka_unit_test(test_flag_or_changed_ttl_resets_from_now),
	    cmocka_unit_test(test_no_ttl_removes_the_expiry),
	    cmocka_unit_test(test_a_block_end_is_a_hard_expiry_an_hour_early),
	    cmocka_unit_test(test_ttl_extend_past_a_block_names_when_reap_comes),
	    cmocka_unit_test(test_windows_say_their_state_by_the_clock),
	    cmocka_unit_test(test_the_window_sentence_names_when_reap_comes),
	    cmocka_unit_test(test_extend_pushes_out_from_the_expiry_or_from_now),
	    cmocka_unit_test(test_extend_without_expiry_names_the_fix),
	    cmocka_unit_test(test_reap_decisions),
	    cmocka_unit_test(test_left_format),
	    cmocka_unit_test(test_state_accepts_an_expiry_and_checks_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
