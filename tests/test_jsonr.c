/*
 * test_jsonr.c - jsonr_loadb decodes what json_loadb decodes into the same
 * values (types, key order, every bit of a real), and on anything it
 * refuses, returns json_loadb's own error.
 */
#include "testutil.h"
#include "testjson.h"

#include "jsonr.h"
#include "jsonw.h"

/* Set where a valid document may be handed on: nesting past jsonr's own limit. */
static bool may_hand_on;

/* Both readers agree on text under flags: equal values, or the same error. */
static void assert_same_load(const char *text, size_t len, size_t flags)
{
	json_error_t je1, je2;
	unsigned long before = jsonr_fallbacks();
	json_t *want = json_loadb(text, len, flags, &je1);
	json_t *got = jsonr_loadb(text, len, flags, &je2);

	/* Valid input is read by jsonr itself, never handed on; invalid input always is. */
	if (want && !may_hand_on && jsonr_fallbacks() != before)
		fail_msg("jsonr handed a valid document to jansson: %.*s", (int)len, text);
	if (!want && jsonr_fallbacks() != before + 1)
		fail_msg("jsonr did not hand a malformed document to jansson: %.*s", (int)len,
			 text);
	if (!want) {
		if (got)
			fail_msg("jansson refused (%s) what jsonr accepted: %.*s", je1.text,
				 (int)len, text);
		assert_string_equal(je1.text, je2.text);
		assert_int_equal(je1.line, je2.line);
		assert_int_equal(je1.column, je2.column);
		assert_int_equal(je1.position, je2.position);
		return;
	}
	if (!got)
		fail_msg("jsonr refused what jansson accepted: %.*s", (int)len, text);
	if (!json_equal(want, got))
		fail_msg("different values for: %.*s", (int)len, text);
	{
		/* Key order and the exact reals too: json_equal checks neither. */
		char *a = jsonw_dumps(want, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17), NULL);
		char *b = jsonw_dumps(got, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17), NULL);

		assert_non_null(a);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	json_decref(want);
	json_decref(got);
}

static void same(const char *text, size_t flags)
{
	assert_same_load(text, strlen(text), flags);
}

static void test_valid_documents_decode_as_jansson_decodes_them(void **state)
{
	static const char *const docs[] = {
	    "{}",
	    "[]",
	    " \t\r\n{ \"a\" : 1 , \"b\":[true,false,null] } \n",
	    "{\"z\":1,\"a\":2,\"m\":{\"y\":[],\"b\":{}}}",
	    "[0, -0, 1, -1, 9223372036854775807, -9223372036854775808]",
	    "[0.0, -0.0, 0.1, 1e3, 1E-3, 2.5e+10, -1.25e-7, 1e-400, 123456789.123456789]",
	    "[\"\", \"plain\", \"caf\xc3\xa9\", \"\xf0\x9f\x9a\x80\", \"\xe2\x80\xa8\"]",
	    "[\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\", \"\\u00e9\\u20AC\", \"\\ud83d\\ude80\"]",
	    "{\"k\\u00e9y\": \"v\", \"\\n\": 1, \"long\\u0041\\u0042\": [\"\\u0041xyz\\u0042\"]}",
	    "[[[[[[[[[[1]]]]]]]]]]",
	    "{\"a\":1,\"a\":2}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		same(docs[i], 0);
		same(docs[i], JSON_DECODE_ANY);
	}
	same("\"a string\"", JSON_DECODE_ANY);
	same("42", JSON_DECODE_ANY);
	same(" 4.5 ", JSON_DECODE_ANY);
	same("true", JSON_DECODE_ANY);
	same("[\"\\u0000x\"]", JSON_ALLOW_NUL);
}

static void test_malformed_documents_get_janssons_error(void **state)
{
	static const char *const bad[] = {
	    "",
	    "   ",
	    "{",
	    "[1,]",
	    "{\"a\":1,}",
	    "{\"a\" 1}",
	    "{a:1}",
	    "[01]",
	    "[-]",
	    "[1.]",
	    "[1e]",
	    "[.5]",
	    "[+1]",
	    "[1] x",
	    "[tru]",
	    "[nul]",
	    "[\"unterminated]",
	    "[\"tab\there\"]",
	    "[\"\\x\"]",
	    "[\"\\u12\"]",
	    "[\"\\ud83d\"]",
	    "[\"\\ud83dx\"]",
	    "[\"\\ude80\"]",
	    "[\"\\u0000\"]",
	    "{\"\\u0000\":1}",
	    "[\"\xc3\"]",
	    "[\"\xed\xa0\x80\"]",
	    "[\xc3\xa9]",
	    "[99999999999999999999]",
	    "[-99999999999999999999]",
	    "[1e400]",
	    "\"a string\"",
	    "42",
	    "[1]\n[2]",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		same(bad[i], 0);
	same("[1,2]\0", 0);
	assert_same_load("[1,2]\0", 6, 0);
	assert_same_load("[\"a\0b\"]", 7, 0);
}

static void test_duplicate_keys_are_refused_only_when_asked(void **state)
{
	(void)state;
	same("{\"a\":1,\"b\":{\"c\":1,\"c\":2}}", JSON_REJECT_DUPLICATES);
	same("{\"a\":1,\"b\":{\"c\":1,\"c\":2}}", 0);
	same("{\"a\":1,\"\\u0061\":2}", JSON_REJECT_DUPLICATES);
}

static void test_nesting_past_janssons_limit_gets_its_error(void **state)
{
	char buf[2 * 2100 + 1];
	int depths[] = {1999, 2000, 2001, 2047, 2048, 2049, 2100}, i, d;

	(void)state;
	for (i = 0; i < (int)(sizeof(depths) / sizeof(depths[0])); i++) {
		d = depths[i];
		memset(buf, '[', (size_t)d);
		memset(buf + d, ']', (size_t)d);
		may_hand_on = d > 2000;
		assert_same_load(buf, (size_t)(2 * d), 0);
	}
	may_hand_on = false;
}

static uint64_t rng = 2463534242ULL;

static void test_random_documents_round_trip_as_through_jansson(void **state)
{
	static const size_t dump_flags[] = {JSON_COMPACT, JSON_INDENT(2) | JSON_SORT_KEYS,
					    JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH,
					    JSON_INDENT(1) | JSON_REAL_PRECISION(17)};
	int i;

	(void)state;
	for (i = 0; i < 400; i++) {
		json_t *v = json_pack("{s:o, s:o}", "doc", test_random_json(&rng, 0), "more",
				      test_random_json(&rng, 1));
		char *text = json_dumps(v, dump_flags[i % 4]);
		size_t len = strlen(text);

		assert_same_load(text, len, JSON_REJECT_DUPLICATES);
		/* Every prefix is malformed: both must refuse it, with the same error. */
		assert_same_load(text, (size_t)test_rand(&rng, (unsigned)len),
				 JSON_REJECT_DUPLICATES);
		free(text);
		json_decref(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_documents_decode_as_jansson_decodes_them),
	    cmocka_unit_test(test_malformed_documents_get_janssons_error),
	    cmocka_unit_test(test_duplicate_keys_are_refused_only_when_asked),
	    cmocka_unit_test(test_nesting_past_janssons_limit_gets_its_error),
	    cmocka_unit_test(test_random_documents_round_trip_as_through_jansson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
