/*
 * test_iam.c - the plan's IAM delta: policy documents reduced to (action,
 * resource) pairs, IAM's wildcards, and each kind of widening a granted
 * pair is flagged with, over a provider whose role_policy hook is this
 * file's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iam.h"

static const char *pair_text(const json_t *pairs, size_t i)
{
	static char buf[256];
	const json_t *p = json_array_get(pairs, i);

	snprintf(buf, sizeof(buf), "%s %s", json_string_value(json_object_get(p, "action")),
		 json_string_value(json_object_get(p, "resource")));
	return buf;
}

static void test_a_policy_becomes_sorted_unique_allow_pairs(void **state)
{
	json_t *pairs =
	    iam_policy_pairs("{\"Version\":\"2012-10-17\",\"Statement\":["
			     "{\"Effect\":\"Allow\",\"Action\":[\"s3:PutObject\",\"s3:GetObject\"],"
			     "\"Resource\":\"arn:aws:s3:::b/*\"},"
			     "{\"Effect\":\"Allow\",\"Action\":\"s3:GetObject\",\"Resource\":["
			     "\"arn:aws:s3:::b/*\"]},"
			     "{\"Effect\":\"Deny\",\"Action\":\"s3:*\",\"Resource\":\"*\"}]}");

	(void)state;
	assert_non_null(pairs);
	assert_int_equal(json_array_size(pairs), 2);
	assert_string_equal(pair_text(pairs, 0), "s3:GetObject arn:aws:s3:::b/*");
	assert_string_equal(pair_text(pairs, 1), "s3:PutObject arn:aws:s3:::b/*");
	json_decref(pairs);
}

static void test_not_action_and_not_resource_count_as_everything(void **state)
{
	json_t *pairs = iam_policy_pairs("{\"Statement\":{\"Effect\":\"Allow\","
					 "\"NotAction\":\"iam:*\",\"NotResource\":\"arn:x\"}}");

	(void)state;
	assert_int_equal(json_array_size(pairs), 1);
	assert_string_equal(pair_text(pairs, 0), "* *");
	json_decref(pairs);
}

static void test_text_that_is_no_policy_gives_null(void **state)
{
	(void)state;
	assert_null(iam_policy_pairs("not json"));
	assert_null(iam_policy_pairs("{\"Version\":\"2012-10-17\"}"));
	assert_null(iam_policy_pairs(NULL));
}

static void test_wildcards_cover_as_iam_matches_them(void **state)
{
	(void)state;
	assert_true(iam_pattern_covers("s3:*", "s3:GetObject", true));
	assert_true(iam_pattern_covers("S3:get*", "s3:GetObject", true));
	assert_false(iam_pattern_covers("s3:Get*", "s3:PutObject", true));
	assert_true(iam_pattern_covers("arn:aws:s3:::kiln-*", "arn:aws:s3:::kiln-a-b", false));
	assert_false(iam_pattern_covers("arn:aws:s3:::KILN-*", "arn:aws:s3:::kiln-a", false));
	assert_true(iam_pattern_covers("arn:aws:s3:::b?", "arn:aws:s3:::b1", false));
	assert_false(iam_pattern_covers("arn:aws:s3:::b?", "arn:aws:s3:::b", false));
	assert_true(iam_pattern_covers("*", "", false));
	assert_true(iam_pattern_covers("a*b*c", "aXXbYYc", false));
	assert_false(iam_pattern_covers("a*b*c", "aXXbYY", false));
}

/* ---- the delta, over a provider whose policies are given per test ---- */

static const char *policy_before, *policy_after;

static char *fake_policy(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
			 const json_t *attrs, bool live)
{
	const char *p = live ? policy_before : policy_after;

	(void)ctx;
	(void)scope;
	(void)attrs;
	if (strcmp(type, "t_role") != 0 || !p)
		return NULL;
	return strdup(p);
}

/* The fake cloud's one action that rewrites a resource policy. */
static const char *fake_note(const char *action)
{
	return iam_pattern_covers(action, "s3:PutBucketPolicy", true) ? "rewrites the policy"
								       : NULL;
}

static const struct provider fake = {
    .name = "fake", .role_policy = fake_policy, .iam_grant_note = fake_note};

#define ALLOW(a, r) "{\"Effect\":\"Allow\",\"Action\":\"" a "\",\"Resource\":\"" r "\"}"
#define POLICY(...) "{\"Statement\":[" __VA_ARGS__ "]}"

/* The delta of one role resource between the two policies. */
static json_t *delta(const char *before, const char *after)
{
	struct engine e = {.prov = &fake, .desired = json_object()};
	struct plan_view v;
	struct kiln_error err = {{0}, {0}};
	json_t *plan, *recorded, *out;

	policy_before = before;
	policy_after = after;
	plan = json_pack("{s:[{s:s, s:s, s:s, s:{s:[s], s:o, s:o}}, "
			 "{s:s, s:s, s:s, s:{s:[s], s:{}, s:{}}}], s:{}}",
			 "resource_changes", "address", "t_role.r", "type", "t_role", "name", "r",
			 "change", "actions", "update", "before",
			 before ? json_object() : json_null(), "after",
			 after ? json_object() : json_null(), "address", "t_net.n", "type", "t_net",
			 "name", "n", "change", "actions", "update", "before", "after", "kiln");
	recorded = json_pack("{s:{s:s, s:{}}}", "t_role.r", "type", "t_role", "attrs");
	assert_int_equal(plan_view_build(&v, plan, &err), 0);
	iam_delta_plan(&e, plan, &v, NULL, before ? recorded : NULL);
	plan_view_release(&v);
	out = json_incref(json_object_get(json_object_get(plan, "kiln"), "iam_delta"));
	json_decref(plan);
	json_decref(recorded);
	json_decref(e.desired);
	return out;
}

static const char *granted(const json_t *d, size_t i, const char *key)
{
	return json_string_value(json_object_get(
	    json_array_get(json_object_get(json_array_get(d, 0), "granted"), i), key));
}

static void test_only_role_types_appear_in_the_delta(void **state)
{
	json_t *d = delta(NULL, POLICY(ALLOW("s3:GetObject", "arn:b/*")));

	(void)state;
	assert_int_equal(json_array_size(d), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 0), "address")),
			    "t_role.r");
	assert_string_equal(json_string_value(json_object_get(json_array_get(d, 0), "role")), "r");
	assert_string_equal(granted(d, 0, "widening"), "new role");
	json_decref(d);
}

static void test_an_action_the_role_never_held_is_a_new_action(void **state)
{
	json_t *d =
	    delta(POLICY(ALLOW("s3:GetObject", "arn:b/*")),
		  POLICY(ALLOW("s3:GetObject", "arn:b/*") "," ALLOW("s3:PutObject", "arn:b/*")));

	(void)state;
	assert_int_equal(json_array_size(json_object_get(json_array_get(d, 0), "granted")), 1);
	assert_string_equal(granted(d, 0, "action"), "s3:PutObject");
	assert_string_equal(granted(d, 0, "widening"), "new action");
	assert_int_equal(json_array_size(json_object_get(json_array_get(d, 0), "revoked")), 0);
	assert_int_equal(json_array_size(json_object_get(json_array_get(d, 0), "after")), 2);
	json_decref(d);
}

static void test_a_wildcard_over_a_held_resource_is_a_broader_resource(void **state)
{
	json_t *d = delta(POLICY(ALLOW("s3:GetObject", "arn:aws:s3:::b/*")),
			  POLICY(ALLOW("s3:GetObject", "arn:aws:s3:::*")));

	(void)state;
	assert_string_equal(granted(d, 0, "resource"), "arn:aws:s3:::*");
	assert_string_equal(granted(d, 0, "widening"), "broader resource");
	json_decref(d);
}

static void test_a_held_action_on_another_resource_is_a_new_resource(void **state)
{
	json_t *d = delta(POLICY(ALLOW("s3:GetObject", "arn:aws:s3:::a/*")),
			  POLICY(ALLOW("s3:GetObject", "arn:aws:s3:::b/*")));
	const json_t *revoked = json_object_get(json_array_get(d, 0), "revoked");

	(void)state;
	assert_string_equal(granted(d, 0, "widening"), "new resource");
	assert_int_equal(json_array_size(revoked), 1);
	assert_string_equal(pair_text(revoked, 0), "s3:GetObject arn:aws:s3:::a/*");
	json_decref(d);
}

static void test_a_wildcard_action_over_a_held_one_is_a_new_action(void **state)
{
	json_t *d = delta(POLICY(ALLOW("s3:GetObject", "arn:b")), POLICY(ALLOW("s3:*", "arn:b")));

	(void)state;
	assert_string_equal(granted(d, 0, "widening"), "new action");
	json_decref(d);
}

static void test_a_deleted_role_revokes_everything(void **state)
{
	json_t *d = delta(POLICY(ALLOW("s3:GetObject", "arn:b")), NULL);
	const json_t *r = json_array_get(d, 0);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "granted")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "revoked")), 1);
	assert_int_equal(json_array_size(json_object_get(r, "after")), 0);
	json_decref(d);
}

static void test_an_unchanged_policy_grants_and_revokes_nothing(void **state)
{
	json_t *d =
	    delta(POLICY(ALLOW("s3:GetObject", "arn:b")), POLICY(ALLOW("s3:GetObject", "arn:b")));
	const json_t *r = json_array_get(d, 0);

	(void)state;
	assert_int_equal(json_array_size(json_object_get(r, "granted")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "revoked")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "after")), 1);
	json_decref(d);
}

/* The plan's IAM section, as text, for the delta d. */
static char *section_text(json_t *d)
{
	json_t *plan = json_pack("{s:{s:O}}", "kiln", "iam_delta", d);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	iam_render_text(f, plan, false);
	fclose(f);
	json_decref(plan);
	return buf;
}

static void test_the_text_section_lists_grants_with_widening_and_revocations(void **state)
{
	json_t *d = delta(POLICY(ALLOW("s3:GetObject", "arn:a")),
			  POLICY(ALLOW("s3:GetObject", "arn:*") "," ALLOW("iam:PassRole", "*")));
	char *buf = section_text(d);

	(void)state;
	assert_string_equal(buf, "IAM permissions (granted + and revoked -)\n"
				 "  t_role.r (role r): 2 granted, 1 revoked; widens the role\n"
				 "    + iam:PassRole  *      (new action)\n"
				 "    + s3:GetObject  arn:*  (broader resource)\n"
				 "    - s3:GetObject  arn:a\n"
				 "\n");
	free(buf);
	json_decref(d);
}

/* Issue 33, finding 10: the delta says why an escalation path is one. */
static void test_a_grant_that_rewrites_a_resource_policy_says_why(void **state)
{
	json_t *d = delta(POLICY(ALLOW("s3:GetObject", "arn:b/*")),
			  POLICY(ALLOW("s3:GetObject", "arn:b/*") "," ALLOW("s3:Put*", "arn:b")));
	char *buf = section_text(d);

	(void)state;
	assert_string_equal(granted(d, 0, "note"), "rewrites the policy");
	assert_string_equal(buf, "IAM permissions (granted + and revoked -)\n"
				 "  t_role.r (role r): 1 granted, 0 revoked; widens the role\n"
				 "    + s3:Put*  arn:b  (new action)\n"
				 "      ! s3:Put* rewrites the policy\n"
				 "\n");
	free(buf);
	json_decref(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_policy_becomes_sorted_unique_allow_pairs),
	    cmocka_unit_test(test_not_action_and_not_resource_count_as_everything),
	    cmocka_unit_test(test_text_that_is_no_policy_gives_null),
	    cmocka_unit_test(test_wildcards_cover_as_iam_matches_them),
	    cmocka_unit_test(test_only_role_types_appear_in_the_delta),
	    cmocka_unit_test(test_an_action_the_role_never_held_is_a_new_action),
	    cmocka_unit_test(test_a_wildcard_over_a_held_resource_is_a_broader_resource),
	    cmocka_unit_test(test_a_held_action_on_another_resource_is_a_new_resource),
	    cmocka_unit_test(test_a_wildcard_action_over_a_held_one_is_a_new_action),
	    cmocka_unit_test(test_a_deleted_role_revokes_everything),
	    cmocka_unit_test(test_an_unchanged_policy_grants_and_revokes_nothing),
	    cmocka_unit_test(test_the_text_section_lists_grants_with_widening_and_revocations),
	    cmocka_unit_test(test_a_grant_that_rewrites_a_resource_policy_says_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
