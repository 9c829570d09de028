/*
 * test_jsonc.c - const-correct reading of jansson values (src/jsonc.c):
 * walking an object only read, and sharing or copying such a value, leave
 * the value as it was.
 */
#include "testutil.h"

#include "jsonc.h"

static void test_foreach_const_visits_every_member_in_order(void **state)
{
	json_t *doc = json_pack("{s:i, s:i, s:i}", "a", 1, "b", 2, "c", 3);
	const json_t *ro = doc, *v;
	const char *k;
	char keys[4] = {0};
	json_int_t sum = 0;
	size_t n = 0;

	(void)state;
	json_object_foreach_const(ro, k, v)
	{
		keys[n++] = k[0];
		sum += json_integer_value(v);
	}
	assert_string_equal(keys, "abc");
	assert_int_equal(sum, 6);
	json_decref(doc);
}

static void test_foreach_const_over_nothing_or_an_empty_object_runs_no_body(void **state)
{
	json_t *empty = json_object();
	const json_t *v;
	const char *k;
	size_t n = 0;

	(void)state;
	json_object_foreach_const(empty, k, v) n++;
	json_object_foreach_const((const json_t *)NULL, k, v) n++;
	assert_int_equal(n, 0);
	json_decref(empty);
}

static void test_share_is_one_more_reference_to_the_same_value(void **state)
{
	json_t *v = json_string("x");
	const json_t *ro = v;
	json_t *held = jsonc_share(ro);

	(void)state;
	assert_ptr_equal(held, v);
	assert_int_equal(v->refcount, 2);
	json_decref(held);
	assert_int_equal(v->refcount, 1);
	assert_null(jsonc_share(NULL));
	json_decref(v);
}

static void test_copy_gives_a_new_top_level_and_leaves_the_original_alone(void **state)
{
	json_t *doc = json_pack("{s:i, s:{s:i}}", "a", 1, "b", "c", 2);
	json_t *copy = jsonc_copy(doc);

	(void)state;
	assert_ptr_not_equal(copy, doc);
	json_object_del(copy, "a");
	assert_non_null(json_object_get(doc, "a"));
	assert_ptr_equal(json_object_get(copy, "b"), json_object_get(doc, "b"));
	json_decref(copy);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_foreach_const_visits_every_member_in_order),
	    cmocka_unit_test(test_foreach_const_over_nothing_or_an_empty_object_runs_no_body),
	    cmocka_unit_test(test_share_is_one_more_reference_to_the_same_value),
	    cmocka_unit_test(test_copy_gives_a_new_top_level_and_leaves_the_original_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
