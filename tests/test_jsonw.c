/*
 * test_jsonw.c - jsonw writes what jansson's json_dumps writes, byte for
 * byte, for every kind of value and every flag kiln passes; and fails where
 * jansson fails.
 */
#include "testutil.h"
#include "testjson.h"

#include "jsonw.h"

static const size_t flag_sets[] = {
    0,
    JSON_COMPACT,
    JSON_INDENT(2),
    JSON_INDENT(2) | JSON_SORT_KEYS,
    JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12),
    JSON_INDENT(2) | JSON_REAL_PRECISION(17),
    JSON_INDENT(2) | JSON_COMPACT,
    JSON_INDENT(31) | JSON_SORT_KEYS,
    JSON_COMPACT | JSON_SORT_KEYS,
    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17),
    JSON_SORT_KEYS | JSON_ESCAPE_SLASH,
    JSON_INDENT(4) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH,
    JSON_ENCODE_ANY | JSON_COMPACT,
    JSON_ENCODE_ANY | JSON_REAL_PRECISION(3),
};

#define NFLAGS (sizeof(flag_sets) / sizeof(flag_sets[0]))

/* jsonw and jansson agree on v under every flag set (both text, or both failure). */
static void assert_same(const json_t *v)
{
	size_t i, len = 0;

	for (i = 0; i < NFLAGS; i++) {
		char *want = json_dumps(v, flag_sets[i]);
		char *got = jsonw_dumps(v, flag_sets[i], &len);

		if (!want) {
			assert_null(got);
			continue;
		}
		if (!got || strcmp(want, got) != 0)
			fail_msg("flags %#zx:\n jansson: %s\n jsonw:   %s", flag_sets[i], want,
				 got ? got : "(failed)");
		assert_int_equal(len, strlen(want));
		free(want);
		free(got);
	}
}

static void test_scalars_match_jansson(void **state)
{
	static const double reals[] = {
	    0.0,  -0.0, 0.1,	  0.8048, 1.0 / 3,	     100.0,   1e13,    1e20,
	    1e-7, 5e-5, -2.5e300, 1e308,  123456789012345.0, 3.14159, 2.5e-320};
	static const json_int_t ints[] = {0,	     1,	       -1, 9, 10, -10, 1234567890123LL,
					  INT64_MAX, INT64_MIN};
	json_t *arr = json_array();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		json_t *r = json_real(reals[i]);

		assert_same(r);
		json_array_append_new(arr, r);
	}
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		json_t *n = json_integer(ints[i]);

		assert_same(n);
		json_array_append_new(arr, n);
	}
	json_array_append_new(arr, json_true());
	json_array_append_new(arr, json_false());
	json_array_append_new(arr, json_null());
	assert_same(json_true());
	assert_same(json_null());
	assert_same(arr);
	json_decref(arr);
}

static void test_strings_are_escaped_as_jansson_escapes_them(void **state)
{
	static const char *const strs[] = {
	    "",
	    "plain",
	    "quote \" and backslash \\",
	    "slash / and </script>",
	    "\b\f\n\r\t and \x01\x1f\x7f",
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \xe2\x80\xa8",
	    "\xef\xbf\xbf\xf4\x8f\xbf\xbf",
	};
	json_t *o = json_object();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		json_t *s = json_string(strs[i]);

		assert_non_null(s);
		assert_same(s);
		json_object_set_new(o, strs[i], s);
	}
	/* An embedded NUL: \u0000. */
	json_object_set_new(o, "nul", json_stringn("a\0b", 3));
	assert_same(json_object_get(o, "nul"));
	assert_same(o);
	json_decref(o);
}

static void test_invalid_utf8_fails_like_jansson(void **state)
{
	static const char *const bad[] = {"\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf5\x80\x80\x80",
					  "ok \xff"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *a = json_array();

		json_array_append_new(a, json_stringn_nocheck(bad[i], strlen(bad[i])));
		assert_null(json_dumps(a, 0));
		assert_null(jsonw_dumps(a, 0, NULL));
		assert_null(jsonw_dumps(a, JSON_INDENT(2) | JSON_SORT_KEYS, NULL));
		json_decref(a);
	}
}

static void test_a_scalar_needs_encode_any(void **state)
{
	json_t *s = json_string("x");
	char *text;

	(void)state;
	assert_null(jsonw_dumps(s, JSON_INDENT(2), NULL));
	text = jsonw_dumps(s, JSON_ENCODE_ANY, NULL);
	assert_string_equal(text, "\"x\"");
	free(text);
	json_decref(s);
}

static void test_keys_sort_by_bytes_then_length(void **state)
{
	json_t *o = json_object();
	static const char *const keys[] = {"b",	  "a",	"ab", "a\x7f", "B", "",	 "aa", "\xc3\xa9",
					   "a b", "a0", "z",  "A",     "_", "~", "a\t"};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(o, keys[i], json_integer((json_int_t)i));
	/* Past 16 keys the sort is qsort rather than insertion: both orders must match. */
	for (i = 0; i < 40; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%zu", (i * 7919) % 40);
		json_object_set_new(o, k, json_integer((json_int_t)i));
	}
	assert_same(o);
	json_decref(o);
}

static uint64_t rng = 88172645463325252ULL;

static void test_random_documents_match_jansson(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 400; i++) {
		json_t *v = json_object();

		json_object_set_new(v, "doc", test_random_json(&rng, 0));
		json_object_set_new(v, "more", test_random_json(&rng, 1));
		assert_same(v);
		json_decref(v);
	}
}

static void test_dumpf_streams_past_its_buffer(void **state)
{
	json_t *arr = json_array();
	char *want, *got = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)state;
	/* Well past the 64 KiB at which the writer flushes, with strings longer than it too. */
	for (i = 0; i < 5000; i++)
		json_array_append_new(arr, json_pack("{s:i, s:s, s:f}", "i", (int)i, "name",
						     "resource-with-a-longish-name", "x", i / 7.0));
	{
		char *big = xmalloc(200000);

		memset(big, 'x', 199999);
		big[199999] = '\0';
		json_array_append_new(arr, json_string(big));
		free(big);
	}
	want = json_dumps(arr, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
	f = open_memstream(&got, &len);
	assert_non_null(f);
	assert_int_equal(
	    jsonw_dumpf(arr, f, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12)), 0);
	fclose(f);
	assert_int_equal(len, strlen(want));
	assert_true(memcmp(want, got, len) == 0);
	free(want);
	free(got);
	json_decref(arr);
}

static void test_a_cycle_fails_instead_of_recursing_forever(void **state)
{
	json_t *a = json_array(), *b = json_array(), *deep = json_array(), *cur = deep;
	int i;

	(void)state;
	json_array_append(a, b);
	json_array_append(b, a);
	assert_null(json_dumps(a, 0));
	assert_null(jsonw_dumps(a, 0, NULL));
	json_array_clear(b);
	json_decref(a);
	json_decref(b);
	/* Deep but finite nesting is written, past the depth where cycles are looked for too. */
	for (i = 0; i < JSONW_CYCLE_CHECK + 500; i++) {
		json_t *next_arr = json_array();

		json_array_append_new(cur, next_arr);
		cur = next_arr;
	}
	assert_same(deep);
	json_decref(deep);
}

static void test_newline_ends_the_text_only_when_asked_and_only_on_success(void **state)
{
	json_t *o = json_pack("{s:i, s:[s]}", "b", 1, "a", "x"), *bad = json_array();
	char *want = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS), *got, *line;
	size_t len = 0;

	(void)state;
	got = jsonw_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS | JSONW_NEWLINE, &len);
	assert_non_null(got);
	line = xasprintf("%s\n", want);
	assert_string_equal(got, line);
	assert_int_equal(len, strlen(line));
	json_array_append_new(bad, json_stringn_nocheck("\xff", 1));
	assert_null(jsonw_dumps(bad, JSONW_NEWLINE, NULL));
	free(want);
	free(got);
	free(line);
	json_decref(o);
	json_decref(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scalars_match_jansson),
	    cmocka_unit_test(test_strings_are_escaped_as_jansson_escapes_them),
	    cmocka_unit_test(test_invalid_utf8_fails_like_jansson),
	    cmocka_unit_test(test_a_scalar_needs_encode_any),
	    cmocka_unit_test(test_keys_sort_by_bytes_then_length),
	    cmocka_unit_test(test_random_documents_match_jansson),
	    cmocka_unit_test(test_dumpf_streams_past_its_buffer),
	    cmocka_unit_test(test_a_cycle_fails_instead_of_recursing_forever),
	    cmocka_unit_test(test_newline_ends_the_text_only_when_asked_and_only_on_success),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
