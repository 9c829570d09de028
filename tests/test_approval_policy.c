/*
 * test_approval_policy.c - apply's approval policy (src/approval_policy.c):
 * where the number comes from and the words when it is not one, which runs
 * it refuses before anything is locked, and whether a plan's approvals
 * meet it, with the commit trailers of those that count.
 */
#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "approval_policy.h"
#include "plan.h"

static void test_the_flag_wins_over_the_environment(void **state)
{
	struct approval_policy ap = {.required_arg = "2", .dir_arg = "keys"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(approval_policy_resolve(&ap, "5", "other", &err), 0);
	assert_int_equal(ap.required, 2);
	assert_string_equal(ap.source, "--require-approvals 2");
	assert_string_equal(ap.dir, "keys");
	approval_policy_release(&ap);
}

static void test_the_environment_stands_in_for_the_flags(void **state)
{
	struct approval_policy ap = {0};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(approval_policy_resolve(&ap, "1", "trusted", &err), 0);
	assert_int_equal(ap.required, 1);
	assert_string_equal(ap.source, "KILN_REQUIRE_APPROVALS=1");
	assert_string_equal(ap.dir, "trusted");
	approval_policy_release(&ap);
	/* Set but empty is unset. */
	ap = (struct approval_policy){0};
	assert_int_equal(approval_policy_resolve(&ap, "", "", &err), 0);
	assert_int_equal(ap.required, 0);
	assert_null(ap.dir);
	assert_null(ap.source);
}

static void test_a_number_out_of_range_is_named_with_where_it_came_from(void **state)
{
	struct approval_policy ap = {.required_arg = "two"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(approval_policy_resolve(&ap, NULL, NULL, &err), -1);
	assert_string_equal(err.msg, "--require-approvals 'two' is not a number from 0 to 100");
	assert_string_equal(err.hint, "give the number of approvals a plan needs, such as 2");
	ap = (struct approval_policy){0};
	assert_int_equal(approval_policy_resolve(&ap, "101", NULL, &err), -1);
	assert_string_equal(err.msg, "KILN_REQUIRE_APPROVALS '101' is not a number from 0 to 100");
	approval_policy_release(&ap);
}

static void test_a_spec_is_refused_where_approvals_are_required(void **state)
{
	struct approval_policy ap = {.required = 1, .source = "KILN_REQUIRE_APPROVALS=1"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(approval_policy_admit(&ap, "kiln.yaml", false, true, &err),
			 APPROVAL_REFUSED_RUN);
	assert_string_equal(err.msg, "approvals are required (KILN_REQUIRE_APPROVALS=1), and "
				     "kiln.yaml is a spec, which carries none; nothing was changed");
	assert_string_equal(err.hint, "save the plan for review: kiln plan --destroy kiln.yaml "
				      "--out destroy.kiln, have it approved (kiln approve "
				      "destroy.kiln --key KEY), then kiln apply destroy.kiln");
	/* Before the keys are looked at: the spec is the first thing wrong. */
	assert_null(ap.dir);
}

static void test_required_approvals_need_trusted_keys_and_keys_a_number(void **state)
{
	struct approval_policy ap = {.required = 1, .source = "--require-approvals 1"};
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(approval_policy_admit(&ap, "p.kiln", true, false, &err),
			 APPROVAL_REFUSED_FLAGS);
	assert_string_equal(err.msg, "approvals are required (--require-approvals 1), but no "
				     "trusted keys are given");
	ap = (struct approval_policy){.dir_arg = "trusted", .dir = "trusted"};
	assert_int_equal(approval_policy_admit(&ap, "p.kiln", true, false, &err),
			 APPROVAL_REFUSED_FLAGS);
	assert_string_equal(err.msg, "--trusted-keys is used only with --require-approvals N");
	assert_string_equal(err.hint,
			    "give the number of approvals required, such as --require-approvals 1");
	/* No policy: anything goes on. */
	ap = (struct approval_policy){0};
	assert_int_equal(approval_policy_admit(&ap, "kiln.yaml", false, false, &err), 0);
}

/* A plan with one change: enough for a signature. */
static json_t *plan_new(void)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s, s:s, s:{s:[s], s:{s:i}, s:{s:i}}}], "
			 "s:{s:i, s:s}}",
			 "format_version", PLAN_FORMAT_VERSION, "kiln_version", KILN_VERSION,
			 "resource_changes", "address", "sim_node_group.trainers", "type",
			 "sim_node_group", "name", "trainers", "change", "actions", "update",
			 "before", "count", 2, "after", "count", 3, "kiln", "plan_version",
			 PLAN_VERSION, "cluster", "demo");
}

static void test_approvals_count_only_from_trusted_keys_up_to_the_number(void **state)
{
	char dir[] = "/tmp/kiln-test-approval-policy-XXXXXX";
	struct approve_key *alice = NULL, *bob = NULL;
	struct approval_policy ap = {.required = 2, .source = "--require-approvals 2"};
	struct approval_policy_result res = {0};
	struct kiln_error err = {0};
	json_t *plan = plan_new(), *list = json_array();
	char *path, *trusted, *msg, *hint;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/alice", dir);
	assert_int_equal(approve_key_generate(&alice, path, &err), 0);
	free(path);
	path = xasprintf("%s/bob", dir);
	assert_int_equal(approve_key_generate(&bob, path, &err), 0);
	free(path);
	trusted = xasprintf("%s/trusted", dir);
	assert_int_equal(mkdir(trusted, 0755), 0);
	path = xasprintf("%s/alice.pub", trusted);
	{
		char *src = xasprintf("%s/alice.pub", dir);

		assert_int_equal(link(src, path), 0);
		free(src);
	}
	free(path);
	ap.dir = trusted;
	json_array_append_new(list, approve_sign(alice, plan, "alice", "2026-11-30T05:40:00Z", &err));
	json_array_append_new(list, approve_sign(bob, plan, "bob", "2026-11-30T05:41:00Z", &err));

	/* Bob's key is not trusted: one of two. */
	assert_int_equal(approval_policy_check(&ap, plan, list, &res, &err), 1);
	assert_null(res.trailers);
	assert_string_equal(res.rep.v[1].key_id, bob->id);
	assert_int_equal(res.rep.v[1].status, APPROVAL_UNKNOWN_KEY);
	approval_policy_refusal(&ap, "p.kiln", &res.rep, &msg, &hint);
	assert_string_equal(msg, "p.kiln is not approved: 1 valid approval from trusted keys, 2 "
				 "required (--require-approvals 2); nothing was changed");
	path = xasprintf("1 more approval is needed from keys in %s: each approver runs kiln "
			 "approve p.kiln --key KEY",
			 trusted);
	assert_string_equal(hint, path);
	free(path);
	free(msg);
	free(hint);
	approval_policy_result_release(&res);

	/* One is enough when one is asked for: alice's trailer names her. */
	ap.required = 1;
	ap.source = "--require-approvals 1";
	assert_int_equal(approval_policy_check(&ap, plan, list, &res, &err), 0);
	assert_int_equal(json_array_size(res.trailers), 1);
	path = xasprintf("Kiln-Approval: %s 2026-11-30T05:40:00Z alice", alice->id);
	assert_string_equal(json_string_value(json_array_get(res.trailers, 0)), path);
	assert_string_equal(res.rep.v[0].trusted_by, "alice.pub");
	free(path);
	approval_policy_result_release(&res);

	/* None at all. */
	assert_int_equal(approval_policy_check(&ap, plan, NULL, &res, &err), 1);
	approval_policy_refusal(&ap, "p.kiln", &res.rep, &msg, &hint);
	assert_string_equal(msg, "p.kiln is not approved: it has no approvals, 1 from trusted "
				 "keys required (--require-approvals 1); nothing was changed");
	free(msg);
	free(hint);
	approval_policy_result_release(&res);

	approve_key_free(alice);
	approve_key_free(bob);
	json_decref(plan);
	json_decref(list);
	assert_int_equal(util_remove_tree(dir), 0);
	free(trusted);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_flag_wins_over_the_environment),
	    cmocka_unit_test(test_the_environment_stands_in_for_the_flags),
	    cmocka_unit_test(test_a_number_out_of_range_is_named_with_where_it_came_from),
	    cmocka_unit_test(test_a_spec_is_refused_where_approvals_are_required),
	    cmocka_unit_test(test_required_approvals_need_trusted_keys_and_keys_a_number),
	    cmocka_unit_test(test_approvals_count_only_from_trusted_keys_up_to_the_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
