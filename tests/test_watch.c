/*
 * test_watch.c - kiln status --watch's pure parts (src/watch.c): the
 * changes between two status documents, one line each, walked by name,
 * what moves with the clock left out; and the interval after --watch.
 */
#include "testutil.h"

#include "watch.h"

static json_t *doc(const char *text)
{
	json_error_t e;
	json_t *d = json_loads(text, 0, &e);

	assert_non_null(d);
	return d;
}

static void test_changes_name_each_changed_leaf_by_its_path(void **state)
{
	json_t *b =
	    doc("{\"nodes\": 2, \"groups\": [{\"name\": \"trainers\", \"state\": \"running\"},"
		" {\"name\": \"login\", \"state\": \"running\"}]}");
	json_t *a = doc("{\"nodes\": 3, \"groups\": [{\"name\": \"login\", \"state\": \"running\"},"
			" {\"name\": \"trainers\", \"state\": \"stopped\"}]}");
	struct strbuf sb = {0};

	(void)state;
	assert_int_equal(watch_changes(b, a, &sb), 2);
	assert_string_equal(sb.buf,
			    "nodes: 2 -> 3\ngroups[trainers].state: \"running\" -> \"stopped\"\n");
	sb_release(&sb);
	json_decref(a);
	json_decref(b);
}

static void test_changes_say_what_came_and_what_went(void **state)
{
	json_t *b = doc("{\"groups\": [{\"name\": \"a\", \"n\": 1}], \"old\": true}");
	json_t *a = doc("{\"groups\": [{\"name\": \"b\", \"n\": 1}], \"new\": null}");
	struct strbuf sb = {0};

	(void)state;
	assert_int_equal(watch_changes(b, a, &sb), 4);
	assert_string_equal(sb.buf, "groups[b]: {\"name\":\"b\",\"n\":1}\n"
				    "groups[a]: {\"name\":\"a\",\"n\":1} -> gone\n"
				    "new: null\nold: true -> gone\n");
	sb_release(&sb);
	json_decref(a);
	json_decref(b);
}

static void test_changes_leave_out_what_moves_with_the_clock(void **state)
{
	json_t *b = doc("{\"up_seconds\": 5, \"cost_so_far\": 1.5, \"left_seconds\": 9, \"x\": 1}");
	json_t *a = doc("{\"up_seconds\": 6, \"cost_so_far\": 1.6, \"left_seconds\": 8, \"x\": 1}");
	struct strbuf sb = {0};

	(void)state;
	assert_int_equal(watch_changes(b, a, &sb), 0);
	assert_null(sb.buf);
	json_decref(a);
	json_decref(b);
}

static void test_interval_takes_seconds_or_a_duration_in_bounds(void **state)
{
	int64_t s = 0;

	(void)state;
	assert_int_equal(watch_interval(NULL, &s), 0);
	assert_int_equal(s, WATCH_DEFAULT_SECONDS);
	assert_int_equal(watch_interval("2", &s), 0);
	assert_int_equal(s, 2);
	assert_int_equal(watch_interval("1m", &s), 0);
	assert_int_equal(s, 60);
	assert_int_equal(watch_interval("0", &s), -1);
	assert_int_equal(watch_interval("0s", &s), -1);
	assert_int_equal(watch_interval("2d", &s), -1);
	assert_int_equal(watch_interval("soon", &s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_changes_name_each_changed_leaf_by_its_path),
	    cmocka_unit_test(test_changes_say_what_came_and_what_went),
	    cmocka_unit_test(test_changes_leave_out_what_moves_with_the_clock),
	    cmocka_unit_test(test_interval_takes_seconds_or_a_duration_in_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
