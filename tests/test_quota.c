/*
 * test_quota.c - team budgets and quotas (quota.c): the policy file's
 * checks with their exact messages, and quota_check over a state
 * repository written by hand: the use read from the ledger and from the
 * claims, a claim that lapses when its workspace moves on, the second of
 * two claims seeing the first, and a waiver.
 */
#include "testutil.h"

#include <limits.h>
#include <unistd.h>

#include <git2.h>

#include "quota.h"
#include "state.h"
#include "store.h"
#include "timefmt.h"

struct qfx {
	char dir[64];
	char cwd[PATH_MAX];
	struct store *s;
};

static int qfx_setup(void **state)
{
	struct qfx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {0};
	char *path;
	int rc;

	*state = f;
	setenv("KILN_AUTHOR", "Ann Ops <ann@example.com>", 1);
	strcpy(f->dir, "/tmp/kiln-test-quota-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0)
		return -1;
	path = xasprintf("%s/state.git", f->dir);
	rc = store_open(&f->s, path, &err);
	free(path);
	return rc;
}

static int qfx_teardown(void **state)
{
	struct qfx *f = *state;
	int rc = 0;

	store_free(f->s);
	if (f->dir[0] != '/' || chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f);
	return rc;
}

#define qtest(fn) cmocka_unit_test_setup_teardown(fn, qfx_setup, qfx_teardown)

static int64_t at(const char *s)
{
	int64_t t = -1;

	assert_int_equal(timefmt_time_parse_rfc3339(s, &t), 0);
	return t;
}

/* Commit one resource on workspace ws with the ledger trailers given. */
static void commit(struct qfx *f, const char *ws, const char *trailers)
{
	struct kiln_error err = {0};
	json_t *st = state_new("c", ws, "sim");
	char *ref = store_branch_ref(ws), *text, *msg;
	git_oid head, oid;
	bool has_head = store_ref_read(f->s, ref, &head, &err) == 0;

	json_object_set_new(state_resources(st), "sim_bucket.b",
			    json_pack("{s:s, s:s, s:{}, s:[], s:[]}", "type", "sim_bucket", "id",
				      "b", "attrs", "deps", "sensitive"));
	text = state_canonical(st);
	msg = xasprintf("apply: test\n\n%s\n", trailers);
	assert_int_equal(store_commit_file(f->s, has_head ? &head : NULL, STORE_STATE_FILE, text,
					   strlen(text), msg, &oid, &err),
			 0);
	if (has_head)
		assert_int_equal(store_ref_update(f->s, ref, &head, &oid, &err), 0);
	else
		assert_int_equal(store_ref_create(f->s, ref, &oid, &err), 0);
	free(ref);
	free(msg);
	free(text);
	json_decref(st);
}

static void set_policy(struct qfx *f, const char *json)
{
	struct kiln_error err = {0};
	char commit[41];
	FILE *fp = fopen("p.json", "w");

	assert_non_null(fp);
	fputs(json, fp);
	fclose(fp);
	if (quota_policy_set(f->s, "p.json", at("2027-01-31T00:00:00Z"), commit, &err) < 0)
		fail_msg("quota_policy_set: %s", err.msg);
}

static void assert_refused(const char *json, const char *msg, const char *hint)
{
	struct kiln_error err = {0};
	json_t *doc = NULL;

	assert_int_equal(quota_policy_parse("p.json", json, strlen(json), &doc, &err), -1);
	assert_null(doc);
	assert_string_equal(err.msg, msg);
	assert_string_equal(err.hint, hint);
}

static void test_policy_parse_names_each_problem_and_its_fix(void **state)
{
	(void)state;
	assert_refused("[]", "p.json: a policy is a JSON object",
		       "write {\"version\": 1, \"limits\": [...]} (kiln-policy(5))");
	assert_refused("{\"version\": 2, \"limits\": []}", "p.json: \"version\" must be 1",
		       "this kiln reads policy version 1: add \"version\": 1");
	assert_refused("{\"version\": 1, \"limit\": []}", "p.json: unknown key 'limit'",
		       "a policy has \"version\": 1 and \"limits\": [...]");
	assert_refused("{\"version\": 1, \"limits\": {}}",
		       "p.json: \"limits\" must be a list of limits",
		       "write \"limits\": [{\"team\": \"research\", \"max_gpus\": 32}]");
	assert_refused("{\"version\": 1, \"limits\": [{\"team\": \"a\", \"workspace\": \"b\", "
		       "\"max_gpus\": 1}]}",
		       "p.json: limits[0] must name one team or one workspace pattern, not both",
		       "add \"team\": \"NAME\" (the spec tag team) or \"workspace\": \"PATTERN\"");
	assert_refused("{\"version\": 1, \"limits\": [{\"team\": \"a\", \"max_gpus\": 1.5}]}",
		       "p.json: limits[0].max_gpus must be a whole number from 0 up",
		       "write it like \"max_gpus\": 32");
	assert_refused("{\"version\": 1, \"limits\": [{\"team\": \"a\", \"monthly_budget_usd\": "
		       "\"lots\"}]}",
		       "p.json: limits[0].monthly_budget_usd must be a number of USD from 0 up",
		       "write it like \"monthly_budget_usd\": 20000");
	assert_refused("{\"version\": 1, \"limits\": [{\"team\": \"\", \"max_gpus\": 1}]}",
		       "p.json: limits[0].team must be a non-empty string",
		       "name the team as its specs' tags do: \"team\": \"research\"");
	assert_refused("{\"version\": 1, \"limits\": [{\"team\": \"a\", \"max_upfrnt_usd\": 1}]}",
		       "p.json: limits[0] has an unknown key 'max_upfrnt_usd'",
		       "did you mean 'max_upfront_usd'?");
}

static void test_policy_parse_takes_a_valid_policy(void **state)
{
	const char *json = "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"max_gpus\": 32, "
			   "\"monthly_budget_usd\": 20000, \"max_upfront_usd\": 5000}, "
			   "{\"workspace\": \"prod-*\", \"max_gpus\": 0}]}";
	struct kiln_error err = {0};
	json_t *doc = NULL;

	(void)state;
	assert_int_equal(quota_policy_parse("p.json", json, strlen(json), &doc, &err), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "limits")), 2);
	json_decref(doc);
}

static void test_policy_set_commits_it_under_its_author(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	json_t *doc = NULL;
	char commit[41], *who = NULL, *when = NULL;

	assert_int_equal(quota_policy_read(f->s, &doc, commit, &err), 1);
	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"max_gpus\": 32}]}");
	assert_int_equal(quota_policy_read(f->s, &doc, commit, &err), 0);
	assert_int_equal(
	    json_integer_value(json_object_get(json_array_get(json_object_get(doc, "limits"), 0),
					       "max_gpus")),
	    32);
	assert_int_equal(quota_policy_author(f->s, commit, &who, &when, &err), 0);
	assert_string_equal(who, "Ann Ops <ann@example.com>");
	assert_string_equal(when, "2027-01-31T00:00:00Z");
	free(who);
	free(when);
	json_decref(doc);
}

static struct quota_ask ask(const char *ws, long gpus)
{
	return (struct quota_ask){.workspace = ws,
				  .head = "",
				  .team = "ml",
				  .gpus_after = gpus,
				  .burn_after = 10,
				  .now = at("2027-01-31T00:00:00Z")};
}

static void test_check_counts_what_other_workspaces_burn_from_the_ledger(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask a = ask("b", 16);

	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"max_gpus\": 24}]}");
	commit(f, "a", "Kiln-Time: 2027-01-30T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: "
		       "16\nKiln-Tag: team=ml");
	assert_int_equal(quota_check(f->s, &a, false, NULL, &err), 1);
	assert_non_null(strstr(err.msg, "this plan would bring it to 32: 16 in b (this plan), and "
					"in use 16 in a; nothing was changed"));
	/* Another team's workspace is not counted against ml's limit. */
	a.team = "vision";
	memset(&err, 0, sizeof(err));
	assert_int_equal(quota_check(f->s, &a, false, NULL, &err), 0);
}

static void test_check_without_a_policy_passes_and_claims_nothing(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask a = ask("b", 1000);
	git_oid q;

	assert_int_equal(quota_check(f->s, &a, true, NULL, &err), 0);
	assert_int_equal(store_ref_read(f->s, QUOTA_CLAIMS_REF, &q, &err), 1);
}

static void test_a_second_claim_sees_the_first(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask x = ask("x", 16), y = ask("y", 16);

	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"max_gpus\": 24}]}");
	assert_int_equal(quota_check(f->s, &x, true, NULL, &err), 0);
	assert_int_equal(quota_check(f->s, &y, true, NULL, &err), 1);
	assert_non_null(strstr(err.msg, "16 in y (this plan), and in use 16 in x"));
}

static void test_a_claim_lapses_once_its_workspace_commits(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask x = ask("x", 16), y = ask("y", 16);

	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"max_gpus\": 24}]}");
	assert_int_equal(quota_check(f->s, &x, true, NULL, &err), 0);
	/* x's apply committed 8 GPUs, not the 16 it claimed: the ledger is the truth now. */
	commit(f, "x", "Kiln-Time: 2027-01-31T00:00:00Z\nKiln-Burn: 5.0000 USD/h\nKiln-GPUs: "
		       "8\nKiln-Tag: team=ml");
	assert_int_equal(quota_check(f->s, &y, true, NULL, &err), 0);
}

static void test_a_waiver_lets_a_plan_past_one_limit_and_is_recorded(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask y = ask("y", 32);
	json_t *w = json_pack("{s:s}", "team=ml:max_gpus", "launch week"), *waived = NULL;

	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"max_gpus\": 24}]}");
	y.waivers = w;
	assert_int_equal(quota_check(f->s, &y, true, &waived, &err), 0);
	assert_int_equal(json_array_size(waived), 1);
	assert_string_equal(json_string_value(json_array_get(waived, 0)),
			    "Kiln-Quota-Waived: team=ml:max_gpus: launch week");
	json_decref(waived);
	json_decref(w);
}

static void test_the_monthly_budget_counts_spend_and_the_burn_to_the_month_end(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask b = ask("b", 0);

	/*
	 * a: 10/h since 2027-01-30T00:00 (24 h spent: 240.00) and 24 h to the
	 * month's end (240.00); b's plan: 10/h for 24 h (240.00): 720.00.
	 */
	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"monthly_budget_usd\": "
		      "700}]}");
	commit(f, "a", "Kiln-Time: 2027-01-30T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: "
		       "0\nKiln-Tag: team=ml");
	assert_int_equal(quota_check(f->s, &b, false, NULL, &err), 1);
	assert_non_null(strstr(err.msg, "this plan would bring 2027-01 to $720.00: $240.00 spent "
					"so far, the rest at the hourly cost of b (this plan), a "
					"($10.00/h) to the month's end; nothing was changed"));
	set_policy(f, "{\"version\": 1, \"limits\": [{\"team\": \"ml\", \"monthly_budget_usd\": "
		      "720}]}");
	memset(&err, 0, sizeof(err));
	assert_int_equal(quota_check(f->s, &b, false, NULL, &err), 0);
}

static void test_the_upfront_limit_names_the_fee(void **state)
{
	struct qfx *f = *state;
	struct kiln_error err = {0};
	struct quota_ask b = ask("blk1", 0);

	set_policy(f, "{\"version\": 1, \"limits\": [{\"workspace\": \"blk*\", "
		      "\"max_upfront_usd\": 1000}]}");
	b.upfront = 4719.36;
	assert_int_equal(quota_check(f->s, &b, false, NULL, &err), 1);
	assert_non_null(strstr(err.msg, "workspaces 'blk*' may buy at most $1,000.00 up front in "
					"one plan (policy limits[0], commit "));
	assert_non_null(strstr(err.msg, "this plan buys $4,719.36 up front in blk1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_policy_parse_names_each_problem_and_its_fix),
	    cmocka_unit_test(test_policy_parse_takes_a_valid_policy),
	    qtest(test_policy_set_commits_it_under_its_author),
	    qtest(test_check_counts_what_other_workspaces_burn_from_the_ledger),
	    qtest(test_check_without_a_policy_passes_and_claims_nothing),
	    qtest(test_a_second_claim_sees_the_first),
	    qtest(test_a_claim_lapses_once_its_workspace_commits),
	    qtest(test_a_waiver_lets_a_plan_past_one_limit_and_is_recorded),
	    qtest(test_the_monthly_budget_counts_spend_and_the_burn_to_the_month_end),
	    qtest(test_the_upfront_limit_names_the_fee),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
