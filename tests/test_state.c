/*
 * test_state.c - the state document: shape, checks, canonical text, sealing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypt.h"
#include "state.h"

#define WHERE "state.json"
#define KEY_A "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

/* A valid document around a resources object. */
#define DOC(resources)                                                                             \
	"{\"format_version\": 1, \"cluster\": null, \"workspace\": \"default\", "                  \
	"\"provider\": \"sim\", \"serial\": 3, \"lineage\": \"l-1\", \"resources\": " resources    \
	"}"
/* A valid document with one resource whose body is given. */
#define DOC_RES(body) DOC("{\"aws_db.main\": " body "}")

#define DB_MAIN                                                                                    \
	DOC_RES("{\"type\": \"aws_db\", \"id\": \"db-1\", \"attrs\": {\"username\": \"admin\", "   \
		"\"password\": \"hunter2\", \"port\": 5432, \"token\": null}, \"deps\": "          \
		"[\"aws_vpc.main\"], \"sensitive\": [\"password\", \"token\"]}")

static json_t *parse_ok(const char *text)
{
	struct kiln_error err = {{0}};
	json_t *doc = NULL;

	if (state_parse(&doc, text, strlen(text), WHERE, &err) < 0)
		fail_msg("parse: %s", err.msg);
	return doc;
}

static void assert_parse_error_impl(const char *text, const char *message, const char *hint,
				    const char *file, int line)
{
	struct kiln_error err = {{0}};
	json_t *doc = NULL;

	if (state_parse(&doc, text, strlen(text), WHERE, &err) == 0) {
		json_decref(doc);
		print_error("parsed, expected: %s\n", message);
		_fail(file, line);
	}
	assert_null(doc);
	if (strcmp(err.msg, message) != 0 || (hint && strcmp(err.hint, hint) != 0)) {
		print_error("expected: %s\n     got: %s\n", message, err.msg);
		if (hint)
			print_error("expected hint: %s\n     got hint: %s\n", hint, err.hint);
		_fail(file, line);
	}
}

#define assert_parse_error(text, message)                                                          \
	assert_parse_error_impl((text), (message), NULL, __FILE__, __LINE__)
#define assert_parse_error_hint(text, message, hint)                                               \
	assert_parse_error_impl((text), (message), (hint), __FILE__, __LINE__)

static void key_a(struct crypt_key *k)
{
	struct kiln_error err = {{0}};

	if (crypt_key_from_base64(k, KEY_A, &err) != 1)
		fail_msg("key: %s", err.msg);
}

static json_t *attr(const json_t *doc, const char *address, const char *name)
{
	return json_object_get(
	    json_object_get(json_object_get(state_resources(doc), address), "attrs"), name);
}

/* DB_MAIN with its sensitive attributes sealed under KEY_A. */
static json_t *sealed_db_main(const struct crypt_key *k)
{
	struct kiln_error err = {{0}};
	json_t *doc = parse_ok(DB_MAIN);

	if (state_seal(doc, k, false, &err) != 1)
		fail_msg("seal: %s", err.msg);
	return doc;
}

/* ---- state_new ---- */

static void test_new_state_has_every_key_and_serial_zero(void **state)
{
	json_t *doc = state_new("prod", "default", NULL);

	(void)state;
	assert_int_equal(json_object_size(doc), 7);
	assert_int_equal(json_integer_value(json_object_get(doc, "format_version")),
			 STATE_FORMAT_VERSION);
	assert_string_equal(state_cluster(doc), "prod");
	assert_string_equal(json_string_value(json_object_get(doc, "workspace")), "default");
	assert_true(json_is_null(json_object_get(doc, "provider")));
	assert_int_equal(state_serial(doc), 0);
	assert_true(json_is_object(state_resources(doc)));
	assert_int_equal(state_resource_count(doc), 0);
	assert_int_equal(state_check(doc, "new", NULL), 0);
	json_decref(doc);
}

static void test_new_state_without_cluster_stores_null(void **state)
{
	json_t *doc = state_new(NULL, "default", "sim");

	(void)state;
	assert_true(json_is_null(json_object_get(doc, "cluster")));
	assert_null(state_cluster(doc));
	json_decref(doc);
}

static void assert_uuid_v4(const char *s)
{
	size_t i;

	assert_int_equal(strlen(s), 36);
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(s[i], '-');
		else if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			fail_msg("not lowercase hex at %zu: %s", i, s);
	}
	assert_int_equal(s[14], '4');
	assert_non_null(strchr("89ab", s[19]));
}

static void test_new_state_lineage_is_a_uuid_v4_that_differs_between_calls(void **state)
{
	json_t *a = state_new(NULL, "default", NULL), *b = state_new(NULL, "default", NULL);

	(void)state;
	assert_uuid_v4(state_lineage(a));
	assert_uuid_v4(state_lineage(b));
	assert_string_not_equal(state_lineage(a), state_lineage(b));
	json_decref(a);
	json_decref(b);
}

static void test_set_serial_replaces_the_serial(void **state)
{
	json_t *doc = state_new(NULL, "default", NULL);

	(void)state;
	state_set_serial(doc, 42);
	assert_int_equal(state_serial(doc), 42);
	json_decref(doc);
}

/* ---- canonical text ---- */

static void test_canonical_text_sorts_keys_indents_by_two_and_ends_with_newline(void **state)
{
	json_t *doc = json_pack("{s:i, s:{s:f, s:i}}", "z", 1, "a", "y", 0.5, "b", 2);
	char *text = state_canonical(doc);

	(void)state;
	assert_string_equal(text,
			    "{\n  \"a\": {\n    \"b\": 2,\n    \"y\": 0.5\n  },\n  \"z\": 1\n}\n");
	free(text);
	json_decref(doc);
}

static void test_canonical_text_round_trips_byte_identical(void **state)
{
	const char *src =
	    DOC_RES("{\"type\": \"aws_db\", \"id\": null, \"attrs\": {\"zeta\": "
		    "{\"q\": 0.1, \"b\": [3, 1e300, -0.0, 2.5e-8], \"a\": \"\\u00e9\"}, "
		    "\"alpha\": 1.0, \"mid\": true}}");
	json_t *doc = parse_ok(src), *again;
	char *first = state_canonical(doc), *second;

	(void)state;
	again = parse_ok(first);
	second = state_canonical(again);
	assert_string_equal(first, second);
	assert_true(json_equal(doc, again));
	/* A real stays a real: 1.0 is not written as the integer 1. */
	assert_true(json_is_real(attr(again, "aws_db.main", "alpha")));
	free(first);
	free(second);
	json_decref(doc);
	json_decref(again);
}

static void test_unknown_keys_survive_parse_and_canonical_text(void **state)
{
	json_t *doc = parse_ok("{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
			       "\"provider\": null, \"serial\": 0, \"lineage\": \"l\", "
			       "\"resources\": {}, \"outputs\": {\"url\": \"x\"}}");
	char *text = state_canonical(doc);

	(void)state;
	assert_non_null(strstr(text, "\"outputs\": {\n    \"url\": \"x\"\n  }"));
	free(text);
	json_decref(doc);
}

/* ---- parse errors ---- */

static void test_parse_rejects_text_that_is_not_json(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 1,\n  \"serial\": }",
			   WHERE ": not JSON: line 2, column 13: unexpected token near '}'");
}

static void test_parse_rejects_duplicate_keys(void **state)
{
	(void)state;
	assert_parse_error("{\"serial\": 1, \"serial\": 2}",
			   WHERE ": not JSON: line 1, column 22: duplicate object key near "
				 "'\"serial\"'");
}

static void test_parse_rejects_a_document_that_is_not_an_object(void **state)
{
	(void)state;
	assert_parse_error("[1, 2]", WHERE ": not a JSON object (found an array)");
}

static void test_parse_rejects_a_missing_key(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
			   "\"provider\": null, \"serial\": 0, \"resources\": {}}",
			   WHERE ": missing key 'lineage'");
}

static void test_parse_rejects_a_serial_that_is_a_string(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
			   "\"provider\": null, \"serial\": \"3\", \"lineage\": \"l\", "
			   "\"resources\": {}}",
			   WHERE ": wrong type for 'serial': expected an integer, found a string");
}

static void test_parse_rejects_a_cluster_that_is_a_number(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 1, \"cluster\": 7, \"workspace\": \"w\", "
			   "\"provider\": null, \"serial\": 0, \"lineage\": \"l\", "
			   "\"resources\": {}}",
			   WHERE ": wrong type for 'cluster': expected a string or null, found an "
				 "integer");
}

static void test_parse_rejects_resources_that_are_an_array(void **state)
{
	(void)state;
	assert_parse_error(DOC("[]"), WHERE
			   ": wrong type for 'resources': expected an object, found an array");
}

static void test_parse_rejects_a_newer_format_version_with_upgrade_hint(void **state)
{
	(void)state;
	assert_parse_error_hint("{\"format_version\": 2, \"something_new\": []}",
				WHERE ": format_version 2 is newer than this kiln understands (1)",
				"upgrade kiln to a version that reads state format 2");
}

static void test_parse_rejects_format_version_zero(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 0}",
			   WHERE ": format_version 0 is not valid; it must be 1 or more");
}

static void test_parse_rejects_a_negative_serial(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
			   "\"provider\": null, \"serial\": -1, \"lineage\": \"l\", "
			   "\"resources\": {}}",
			   WHERE ": serial is -1; it must be between 0 and 9007199254740991");
}

static void test_parse_rejects_a_serial_that_json_readers_cannot_hold(void **state)
{
	(void)state;
	assert_parse_error(
	    "{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
	    "\"provider\": null, \"serial\": 9007199254740992, \"lineage\": \"l\", "
	    "\"resources\": {}}",
	    WHERE ": serial is 9007199254740992; it must be between 0 and 9007199254740991");
}

static void test_parse_rejects_an_unknown_resource_key_with_a_suggestion(void **state)
{
	struct kiln_error err = {{0}, {0}};
	json_t *doc = NULL;
	const char *text = "{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
			   "\"provider\": null, \"serial\": 1, \"lineage\": \"l\", "
			   "\"resources\": {\"db.main\": {\"type\": \"db\", \"attrs\": "
			   "{\"password\": \"x\"}, \"sensitve\": [\"password\"]}}}";

	(void)state;
	assert_int_equal(state_parse(&doc, text, strlen(text), "t", &err), -1);
	assert_string_equal(err.msg, "t: resource db.main: unknown key 'sensitve'");
	assert_string_equal(err.hint, "did you mean 'sensitive'?");
}

static void test_parse_rejects_an_address_that_is_not_its_type(void **state)
{
	struct kiln_error err = {{0}, {0}};
	json_t *doc = NULL;
	const char *text =
	    "{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
	    "\"provider\": null, \"serial\": 1, \"lineage\": \"l\", "
	    "\"resources\": {\"aws_x.y\": {\"type\": \"aws_other\", \"attrs\": {}}}}";

	(void)state;
	assert_int_equal(state_parse(&doc, text, strlen(text), "t", &err), -1);
	assert_string_equal(err.msg, "t: resource address 'aws_x.y' is not aws_other.NAME");
}

static void test_parse_rejects_an_empty_lineage(void **state)
{
	(void)state;
	assert_parse_error("{\"format_version\": 1, \"cluster\": null, \"workspace\": \"w\", "
			   "\"provider\": null, \"serial\": 0, \"lineage\": \"\", "
			   "\"resources\": {}}",
			   WHERE ": lineage is empty");
}

static void test_parse_rejects_a_resource_that_is_not_an_object(void **state)
{
	(void)state;
	assert_parse_error(DOC_RES("\"db-1\""),
			   WHERE ": resource aws_db.main is not an object (found a string)");
}

static void test_parse_rejects_a_resource_without_type(void **state)
{
	(void)state;
	assert_parse_error(DOC_RES("{\"attrs\": {}}"),
			   WHERE ": resource aws_db.main: missing key 'type'");
}

static void test_parse_rejects_a_resource_without_attrs(void **state)
{
	(void)state;
	assert_parse_error(DOC_RES("{\"type\": \"aws_db\"}"),
			   WHERE ": resource aws_db.main: missing key 'attrs'");
}

static void test_parse_rejects_an_id_that_is_a_number(void **state)
{
	(void)state;
	assert_parse_error(DOC_RES("{\"type\": \"aws_db\", \"id\": 12, \"attrs\": {}}"),
			   WHERE ": resource aws_db.main: wrong type for 'id': expected a string "
				 "or null, found an integer");
}

static void test_parse_rejects_deps_that_are_not_an_array(void **state)
{
	(void)state;
	assert_parse_error(
	    DOC_RES("{\"type\": \"aws_db\", \"attrs\": {}, \"deps\": \"aws_vpc.x\"}"),
	    WHERE ": resource aws_db.main: wrong type for 'deps': expected an array "
		  "of strings, found a string");
}

static void test_parse_rejects_deps_holding_a_number(void **state)
{
	(void)state;
	assert_parse_error(
	    DOC_RES("{\"type\": \"aws_db\", \"attrs\": {}, \"deps\": [\"aws_vpc.x\", 3]}"),
	    WHERE ": resource aws_db.main: wrong type for 'deps[1]': expected a string, found "
		  "an integer");
}

static void test_parse_rejects_sensitive_holding_a_non_string(void **state)
{
	(void)state;
	assert_parse_error(DOC_RES("{\"type\": \"aws_db\", \"attrs\": {\"a\": 1}, \"sensitive\": "
				   "[{\"name\": \"a\"}]}"),
			   WHERE ": resource aws_db.main: wrong type for 'sensitive[0]': expected "
				 "a string, found an object");
}

static void test_parse_rejects_a_sensitive_name_missing_from_attrs(void **state)
{
	(void)state;
	assert_parse_error(DOC_RES("{\"type\": \"aws_db\", \"attrs\": {\"username\": \"admin\"}, "
				   "\"sensitive\": [\"password\"]}"),
			   WHERE ": resource aws_db.main: sensitive attribute 'password' is not in "
				 "attrs");
}

static void test_parse_rejects_a_resource_that_depends_on_itself(void **state)
{
	(void)state;
	assert_parse_error(
	    DOC_RES("{\"type\": \"aws_db\", \"attrs\": {}, \"deps\": [\"aws_vpc.x\", "
		    "\"aws_db.main\"]}"),
	    WHERE ": resource aws_db.main depends on itself (its deps list aws_db.main)");
}

static void test_parse_rejects_resources_that_depend_on_each_other_in_a_loop(void **state)
{
	(void)state;
	assert_parse_error(DOC("{\"r.a\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.b\"]}, "
			       "\"r.b\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.c\"]}, "
			       "\"r.c\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.a\"]}, "
			       "\"r.d\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.a\"]}}"),
			   WHERE
			   ": resources depend on each other in a loop: r.a -> r.b -> r.c -> r.a");
}

static void test_parse_accepts_shared_deps_and_deps_on_unrecorded_addresses(void **state)
{
	json_t *doc;

	(void)state;
	/* A diamond is no loop, and a dep the state does not record is not one either. */
	doc = parse_ok(DOC("{\"r.a\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.b\", "
			   "\"r.c\"]}, "
			   "\"r.b\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.d\"]}, "
			   "\"r.c\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.d\"]}, "
			   "\"r.d\": {\"type\": \"r\", \"attrs\": {}, \"deps\": [\"r.gone\"]}}"));
	json_decref(doc);
}

static void test_a_chain_of_ten_thousand_deps_is_checked_without_recursion(void **state)
{
	struct kiln_error err = {{0}};
	json_t *doc = state_new(NULL, "default", "sim"), *res = state_resources(doc);
	char addr[32], dep[32];
	int i;

	(void)state;
	for (i = 0; i < 10000; i++) {
		snprintf(addr, sizeof(addr), "r.n%d", i);
		snprintf(dep, sizeof(dep), "r.n%d", i + 1);
		json_object_set_new(res, addr,
				    json_pack("{s:s, s:{}, s:[s]}", "type", "r", "attrs", "deps",
					      i < 9999 ? dep : "r.n0"));
	}
	assert_int_equal(state_check(doc, "t", &err), -1);
	assert_true(strstr(err.msg, "t: resources depend on each other in a loop: ") == err.msg);
	json_object_set_new(json_object_get(res, "r.n9999"), "deps", json_array());
	assert_int_equal(state_check(doc, "t", &err), 0);
	json_decref(doc);
}

/* ---- sealing ---- */

static void test_seal_seals_only_sensitive_attributes(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc, *opened;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	assert_true(crypt_is_sealed(attr(doc, "aws_db.main", "password")));
	assert_string_equal(json_string_value(attr(doc, "aws_db.main", "username")), "admin");
	assert_int_equal(json_integer_value(attr(doc, "aws_db.main", "port")), 5432);
	opened = crypt_open(&k, attr(doc, "aws_db.main", "password"), "aws_db.main/password", &err);
	assert_non_null(opened);
	assert_string_equal(json_string_value(opened), "hunter2");
	json_decref(opened);
	json_decref(doc);
}

static void test_seal_leaves_a_null_sensitive_value_alone(void **state)
{
	struct crypt_key k;
	json_t *doc;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	assert_true(json_is_null(attr(doc, "aws_db.main", "token")));
	json_decref(doc);
}

static void test_seal_a_second_time_seals_nothing(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc, *before;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	before = json_deep_copy(doc);
	assert_int_equal(state_seal(doc, &k, false, &err), 0);
	assert_true(json_equal(doc, before));
	json_decref(before);
	json_decref(doc);
}

/*
 * One key per state: with a value sealed under key A, sealing with key B
 * refuses before it seals anything, so no state holds two keys' values.
 */
static void test_seal_with_another_key_seals_nothing(void **state)
{
	struct crypt_key a, b;
	struct kiln_error err = {{0}};
	json_t *doc, *copy;
	const char *address = NULL, *name = NULL, *kid;
	char *want;

	(void)state;
	key_a(&a);
	assert_int_equal(crypt_key_from_base64(&b, "//////////////////////////////////////////8=",
					       &err),
			 1);
	doc = sealed_db_main(&a);
	copy = json_deep_copy(json_object_get(state_resources(doc), "aws_db.main"));
	json_object_set_new(json_object_get(copy, "attrs"), "password", json_string("plain"));
	json_object_set_new(state_resources(doc), "aws_db.other", copy);

	assert_null(state_sealed_other(doc, a.kid, &address, &name));
	kid = state_sealed_other(doc, b.kid, &address, &name);
	assert_non_null(kid);
	assert_string_equal(kid, a.kid);
	assert_string_equal(address, "aws_db.main");
	assert_string_equal(name, "password");

	assert_int_equal(state_seal(doc, &b, false, &err), -1);
	want = xasprintf("resource aws_db.main attribute 'password' is sealed with key %s, but "
			 "the state key is %s",
			 a.kid, b.kid);
	assert_string_equal(err.msg, want);
	assert_string_equal(json_string_value(attr(doc, "aws_db.other", "password")), "plain");
	free(want);
	json_decref(doc);
}

/* Rekey moves every value from key A to key B, which then opens it; a third key stops it. */
static void test_rekey_reseals_under_the_new_key(void **state)
{
	struct crypt_key a, b, c;
	struct kiln_error err = {{0}};
	json_t *doc, *opened;
	const char *addr = NULL, *name = NULL;

	(void)state;
	key_a(&a);
	assert_int_equal(crypt_key_from_base64(&b, "//////////////////////////////////////////8=",
					       &err),
			 1);
	assert_int_equal(crypt_key_from_base64(&c, "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
					       &err),
			 1);
	doc = sealed_db_main(&a);
	assert_int_equal(state_rekey(doc, &a, &b, &err), 1);
	assert_null(state_sealed_other(doc, b.kid, &addr, &name));
	opened = crypt_open(&b, attr(doc, "aws_db.main", "password"), "aws_db.main/password", &err);
	assert_non_null(opened);
	assert_string_equal(json_string_value(opened), "hunter2");
	json_decref(opened);
	/* Again: already under B, nothing to move. */
	assert_int_equal(state_rekey(doc, &a, &b, &err), 0);
	/* From C to A: the value is under B, a third key. */
	assert_int_equal(state_rekey(doc, &c, &a, &err), -1);
	assert_non_null(strstr(err.msg, "neither the old key"));
	json_decref(doc);
}

static void test_seal_without_key_refuses_a_plaintext_secret(void **state)
{
	struct kiln_error err = {{0}};
	json_t *doc = parse_ok(DB_MAIN);

	(void)state;
	assert_int_equal(state_seal(doc, NULL, false, &err), -1);
	assert_string_equal(err.msg, "resource aws_db.main has sensitive attribute 'password' and "
				     "no KILN_STATE_KEY is set");
	assert_string_equal(err.hint, "set KILN_STATE_KEY or KILN_STATE_KEY_FILE, or pass "
				      "--allow-plaintext-secrets");
	json_decref(doc);
}

static void test_seal_without_key_keeps_plaintext_when_allowed(void **state)
{
	struct kiln_error err = {{0}};
	json_t *doc = parse_ok(DB_MAIN);

	(void)state;
	assert_int_equal(state_seal(doc, NULL, true, &err), 0);
	assert_string_equal(json_string_value(attr(doc, "aws_db.main", "password")), "hunter2");
	json_decref(doc);
}

static void test_seal_refuses_a_malformed_sensitive_list(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc = parse_ok(DB_MAIN);
	json_t *res = json_object_get(state_resources(doc), "aws_db.main");

	(void)state;
	key_a(&k);
	json_object_set_new(res, "sensitive", json_string("password"));
	assert_int_equal(state_seal(doc, &k, false, &err), -1);
	assert_string_equal(err.msg, "state: resource aws_db.main: wrong type for 'sensitive': "
				     "expected an array of strings, found a string");
	json_decref(doc);
}

/* ---- views ---- */

static void test_view_redacts_sensitive_attributes_and_leaves_the_state_alone(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc, *view;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	view = state_resource_view(doc, "aws_db.main", NULL, false, &err);
	assert_non_null(view);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(view, "attrs"), "password")),
	    "(sensitive)");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(view, "attrs"), "username")),
	    "admin");
	assert_true(crypt_is_sealed(attr(doc, "aws_db.main", "password")));
	json_decref(view);
	json_decref(doc);
}

static void test_view_reveals_sensitive_attributes_with_the_key(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc, *view;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	view = state_resource_view(doc, "aws_db.main", &k, true, &err);
	if (!view)
		fail_msg("view: %s", err.msg);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(view, "attrs"), "password")),
	    "hunter2");
	assert_string_equal(json_string_value(json_object_get(view, "id")), "db-1");
	json_decref(view);
	json_decref(doc);
}

static void test_view_reveal_fails_cleanly_on_a_tampered_value(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc, *env;
	char *ct;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	env = attr(doc, "aws_db.main", "password");
	ct = strdup(json_string_value(json_object_get(env, "ciphertext")));
	ct[0] = ct[0] == 'A' ? 'B' : 'A';
	json_object_set_new(env, "ciphertext", json_string(ct));
	free(ct);
	assert_null(state_resource_view(doc, "aws_db.main", &k, true, &err));
	assert_string_equal(err.msg, "cannot open aws_db.main/password: authentication failed: the "
				     "value was changed or the key is wrong");
	json_decref(doc);
}

static void test_view_reveal_without_key_names_the_sealed_attribute(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *doc;

	(void)state;
	key_a(&k);
	doc = sealed_db_main(&k);
	assert_null(state_resource_view(doc, "aws_db.main", NULL, true, &err));
	assert_string_equal(err.msg, "aws_db.main/password is sealed and no KILN_STATE_KEY is set");
	json_decref(doc);
}

static void test_view_of_an_unknown_address_suggests_the_closest(void **state)
{
	struct kiln_error err = {{0}};
	json_t *doc = parse_ok(DB_MAIN);

	(void)state;
	assert_null(state_resource_view(doc, "aws_db.mian", NULL, false, &err));
	assert_string_equal(err.msg, "no resource aws_db.mian in the state");
	assert_string_equal(err.hint, "did you mean aws_db.main?");
	json_decref(doc);
}

/* ---- typed readers ---- */

#define POLICIES                                                                                   \
	"{\"format_version\": 1, \"cluster\": null, \"workspace\": \"default\", "                  \
	"\"provider\": \"sim\", \"serial\": 3, \"lineage\": \"l-1\", \"resources\": {\"n.g\": "    \
	"{\"type\": \"n\", \"id\": null, \"attrs\": {\"count\": 2}}}, \"created\": "               \
	"\"2026-11-30T08:00:00Z\", \"expiry\": {\"ttl_seconds\": 3600, \"expires\": "              \
	"\"2026-11-30T09:00:00Z\", \"set_by\": \"a\", \"set_at\": \"2026-11-30T08:00:00Z\", "      \
	"\"set_how\": \"--ttl\", \"spec\": \"x.yaml\", \"spec_text\": \"ttl\"}, \"idle\": "        \
	"{\"spec\": \"i.yaml\"}}"

static void test_typed_readers_read_expiry_created_and_policies(void **state)
{
	json_t *doc = parse_ok(POLICIES);

	(void)state;
	assert_non_null(state_expiry(doc));
	assert_string_equal(state_expires(doc), "2026-11-30T09:00:00Z");
	assert_string_equal(state_created(doc), "2026-11-30T08:00:00Z");
	assert_string_equal(state_expiry_set_by(doc), "a");
	assert_string_equal(state_expiry_set_at(doc), "2026-11-30T08:00:00Z");
	assert_string_equal(state_expiry_set_how(doc), "--ttl");
	assert_string_equal(state_provider(doc), "sim");
	assert_string_equal(state_policy_spec(doc, STATE_POLICY_EXPIRY), "x.yaml");
	assert_string_equal(json_string_value(state_policy_spec_text(doc, STATE_POLICY_EXPIRY)),
			    "ttl");
	assert_string_equal(state_policy_spec(doc, STATE_POLICY_IDLE), "i.yaml");
	assert_null(state_policy_spec_text(doc, STATE_POLICY_IDLE));
	assert_null(state_policy(doc, STATE_POLICY_WINDOW));
	assert_null(state_policy_spec(doc, STATE_POLICY_WINDOW));
	json_decref(doc);
}

static void test_typed_readers_are_null_on_a_state_without_them(void **state)
{
	json_t *doc = parse_ok(DOC("{}"));

	(void)state;
	assert_null(state_expiry(doc));
	assert_null(state_expires(doc));
	assert_null(state_expiry_set_by(doc));
	assert_null(state_expiry_set_how(doc));
	assert_null(state_created(doc));
	assert_null(state_policy(doc, STATE_POLICY_EXPIRY));
	assert_null(state_resource(doc, "aws_db.main"));
	assert_null(state_resource_attr(state_resource(doc, "aws_db.main"), "port"));
	json_decref(doc);
}

static void test_typed_readers_read_a_resource_by_address(void **state)
{
	json_t *doc = parse_ok(DB_MAIN);
	const json_t *res = state_resource(doc, "aws_db.main"), *r;
	const char *addr;
	size_t n = 0;

	(void)state;
	assert_non_null(res);
	assert_string_equal(state_resource_type(res), "aws_db");
	assert_string_equal(state_resource_id(res), "db-1");
	assert_int_equal(json_object_size(state_resource_attrs(res)), 4);
	assert_int_equal(json_integer_value(state_resource_attr(res, "port")), 5432);
	assert_null(state_resource_attr(res, "absent"));
	state_foreach_resource(doc, addr, r)
	{
		assert_string_equal(addr, "aws_db.main");
		assert_ptr_equal(r, res);
		n++;
	}
	assert_int_equal(n, 1);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_state_has_every_key_and_serial_zero),
	    cmocka_unit_test(test_new_state_without_cluster_stores_null),
	    cmocka_unit_test(test_new_state_lineage_is_a_uuid_v4_that_differs_between_calls),
	    cmocka_unit_test(test_set_serial_replaces_the_serial),
	    cmocka_unit_test(test_canonical_text_sorts_keys_indents_by_two_and_ends_with_newline),
	    cmocka_unit_test(test_canonical_text_round_trips_byte_identical),
	    cmocka_unit_test(test_unknown_keys_survive_parse_and_canonical_text),
	    cmocka_unit_test(test_parse_rejects_text_that_is_not_json),
	    cmocka_unit_test(test_parse_rejects_duplicate_keys),
	    cmocka_unit_test(test_parse_rejects_a_document_that_is_not_an_object),
	    cmocka_unit_test(test_parse_rejects_a_missing_key),
	    cmocka_unit_test(test_parse_rejects_a_serial_that_is_a_string),
	    cmocka_unit_test(test_parse_rejects_a_cluster_that_is_a_number),
	    cmocka_unit_test(test_parse_rejects_resources_that_are_an_array),
	    cmocka_unit_test(test_parse_rejects_a_newer_format_version_with_upgrade_hint),
	    cmocka_unit_test(test_parse_rejects_format_version_zero),
	    cmocka_unit_test(test_parse_rejects_a_negative_serial),
	    cmocka_unit_test(test_parse_rejects_a_serial_that_json_readers_cannot_hold),
	    cmocka_unit_test(test_parse_rejects_an_unknown_resource_key_with_a_suggestion),
	    cmocka_unit_test(test_parse_rejects_an_address_that_is_not_its_type),
	    cmocka_unit_test(test_parse_rejects_an_empty_lineage),
	    cmocka_unit_test(test_parse_rejects_a_resource_that_is_not_an_object),
	    cmocka_unit_test(test_parse_rejects_a_resource_without_type),
	    cmocka_unit_test(test_parse_rejects_a_resource_without_attrs),
	    cmocka_unit_test(test_parse_rejects_an_id_that_is_a_number),
	    cmocka_unit_test(test_parse_rejects_deps_that_are_not_an_array),
	    cmocka_unit_test(test_parse_rejects_deps_holding_a_number),
	    cmocka_unit_test(test_parse_rejects_sensitive_holding_a_non_string),
	    cmocka_unit_test(test_parse_rejects_a_sensitive_name_missing_from_attrs),
	    cmocka_unit_test(test_parse_rejects_a_resource_that_depends_on_itself),
	    cmocka_unit_test(test_parse_rejects_resources_that_depend_on_each_other_in_a_loop),
	    cmocka_unit_test(test_parse_accepts_shared_deps_and_deps_on_unrecorded_addresses),
	    cmocka_unit_test(test_a_chain_of_ten_thousand_deps_is_checked_without_recursion),
	    cmocka_unit_test(test_seal_seals_only_sensitive_attributes),
	    cmocka_unit_test(test_seal_leaves_a_null_sensitive_value_alone),
	    cmocka_unit_test(test_seal_a_second_time_seals_nothing),
	    cmocka_unit_test(test_seal_with_another_key_seals_nothing),
	    cmocka_unit_test(test_rekey_reseals_under_the_new_key),
	    cmocka_unit_test(test_seal_without_key_refuses_a_plaintext_secret),
	    cmocka_unit_test(test_seal_without_key_keeps_plaintext_when_allowed),
	    cmocka_unit_test(test_seal_refuses_a_malformed_sensitive_list),
	    cmocka_unit_test(test_view_redacts_sensitive_attributes_and_leaves_the_state_alone),
	    cmocka_unit_test(test_view_reveals_sensitive_attributes_with_the_key),
	    cmocka_unit_test(test_view_reveal_fails_cleanly_on_a_tampered_value),
	    cmocka_unit_test(test_view_reveal_without_key_names_the_sealed_attribute),
	    cmocka_unit_test(test_view_of_an_unknown_address_suggests_the_closest),
	    cmocka_unit_test(test_typed_readers_read_expiry_created_and_policies),
	    cmocka_unit_test(test_typed_readers_are_null_on_a_state_without_them),
	    cmocka_unit_test(test_typed_readers_read_a_resource_by_address),
	};

	return cmocka_run_group_tests_name("state", tests, NULL, NULL);
}
