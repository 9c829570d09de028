/*
 * test_report.c - the cost ledger's trailers (ledger.c) and the figures
 * `kiln report` makes of a state history (report.c).
 *
 * Each test writes a history by hand into a fresh state repository: commits
 * whose state.json holds some resources (or none, after a destroy) and
 * whose messages carry the ledger trailers an apply writes. The expected
 * figures are worked out in the comments beside them.
 */
#include "testutil.h"

#include <limits.h>
#include <unistd.h>

#include <git2.h>

#include "ledger.h"
#include "report.h"
#include "report_render.h"
#include "state.h"
#include "store.h"
#include "timefmt.h"

struct rfx {
	char dir[64];
	char cwd[PATH_MAX];
	struct store *s;
	json_t *doc;
};

static int rfx_setup(void **state)
{
	struct rfx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {0};
	char *path;
	int rc;

	*state = f;
	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	strcpy(f->dir, "/tmp/kiln-test-report-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0)
		return -1;
	path = xasprintf("%s/state.git", f->dir);
	rc = store_open(&f->s, path, &err);
	free(path);
	return rc;
}

static int rfx_teardown(void **state)
{
	struct rfx *f = *state;
	int rc = 0;

	json_decref(f->doc);
	store_free(f->s);
	if (f->dir[0] != '/' || chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f);
	return rc;
}

#define rtest(fn) cmocka_unit_test_setup_teardown(fn, rfx_setup, rfx_teardown)

static int64_t at(const char *s)
{
	int64_t t = -1;

	assert_int_equal(timefmt_time_parse_rfc3339(s, &t), 0);
	return t;
}

/*
 * Commit a state with nres resources on ref (created, or moved from its
 * head) with the summary and the trailers given (one per line).
 */
static void commit(struct rfx *f, const char *ref, int nres, const char *trailers)
{
	struct kiln_error err = {0};
	json_t *st = state_new("train", "w", "sim");
	git_oid head, oid;
	bool has_head = store_ref_read(f->s, ref, &head, &err) == 0;
	char *text, *msg;
	int i;

	for (i = 0; i < nres; i++) {
		char addr[32];

		snprintf(addr, sizeof(addr), "sim_bucket.b%d", i);
		json_object_set_new(state_resources(st), addr,
				    json_pack("{s:s, s:s, s:{}, s:[], s:[]}", "type", "sim_bucket",
					      "id", addr, "attrs", "deps", "sensitive"));
	}
	text = state_canonical(st);
	msg = xasprintf("apply: test\n\n%s\n", trailers);
	assert_int_equal(store_commit_file(f->s, has_head ? &head : NULL, STORE_STATE_FILE, text,
					   strlen(text), msg, &oid, &err),
			 0);
	if (has_head)
		assert_int_equal(store_ref_update(f->s, ref, &head, &oid, &err), 0);
	else
		assert_int_equal(store_ref_create(f->s, ref, &oid, &err), 0);
	free(msg);
	free(text);
	json_decref(st);
}

static const json_t *build(struct rfx *f, const char *now, const char *since, const char *by)
{
	struct report_options o = {.by = by ? by : "workspace"};
	struct kiln_error err = {0};

	o.now = at(now);
	if (since) {
		o.has_since = true;
		o.since = at(since);
	}
	json_decref(f->doc);
	f->doc = NULL;
	if (report_build(f->s, &o, &f->doc, &err) < 0)
		fail_msg("report_build: %s", err.msg);
	return f->doc;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_number(v))
		fail_msg("%s is not a number", k);
	return json_number_value(v);
}

static const json_t *lifetime(const json_t *doc, size_t i)
{
	return json_array_get(json_object_get(doc, "lifetimes"), i);
}

static void test_ledger_parse_reads_every_trailer(void **state)
{
	struct ledger_entry le;

	(void)state;
	ledger_parse("apply: 1 created (c/w)\n\nKiln-Serial: 3\nKiln-Operation: reap\n"
		     "Kiln-Time: 2027-01-01T02:00:00Z\n"
		     "Kiln-Burn: 196.6838 USD/h (1 part billed by use, not counted)\n"
		     "Kiln-GPUs: 16\nKiln-Upfront: 1200.50 USD\nKiln-GPU-Util: 41.5\n"
		     "Kiln-Tag: team=research\nKiln-Reap-Reason: idle\n",
		     &le);
	assert_true(le.has_time);
	assert_int_equal(le.time, at("2027-01-01T02:00:00Z"));
	assert_true(le.has_burn);
	assert_true(le.burn == 196.6838);
	assert_int_equal(le.gpus, 16);
	assert_true(le.upfront == 1200.50);
	assert_true(le.has_util);
	assert_true(le.util == 41.5);
	assert_string_equal(json_string_value(json_object_get(le.tags, "team")), "research");
	assert_string_equal(le.operation, "reap");
	assert_string_equal(le.reap_reason, "idle");
	ledger_entry_release(&le);
}

static void test_ledger_parse_needs_a_time_for_a_burn(void **state)
{
	struct ledger_entry le;

	(void)state;
	ledger_parse("apply\n\nKiln-Burn: 10.0000 USD/h\nKiln-GPU-Util: 140\n", &le);
	assert_false(le.has_burn);
	assert_false(le.has_util); /* over 100%: not a utilization */
	ledger_entry_release(&le);
}

/* The complaint ledger_parse makes of a commit whose trailers are base plus extra. */
static void assert_malformed(const char *extra, const char *want)
{
	struct ledger_entry le;
	char *msg = xasprintf("apply: x\n\nKiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 2.0000 "
			      "USD/h\nKiln-GPUs: 8\n%s\n",
			      extra);

	ledger_parse(msg, &le);
	assert_non_null(le.bad);
	assert_string_equal(le.bad, want);
	assert_false(le.has_burn);
	assert_true(le.upfront == 0);
	free(msg);
	ledger_entry_release(&le);
}

static void test_ledger_parse_names_every_malformed_value(void **state)
{
	(void)state;
	assert_malformed("Kiln-Burn: 12abc",
			 "Kiln-Burn \"12abc\" is not a number of USD per hour");
	assert_malformed("Kiln-Burn: nan USD/h", "Kiln-Burn \"nan USD/h\" is not a number of USD per hour");
	assert_malformed("Kiln-Burn: inf USD/h", "Kiln-Burn \"inf USD/h\" is not a number of USD per hour");
	assert_malformed("Kiln-Burn: 1e400 USD/h",
			 "Kiln-Burn \"1e400 USD/h\" is not a number of USD per hour");
	assert_malformed("Kiln-Burn: -1.0000 USD/h",
			 "Kiln-Burn \"-1.0000 USD/h\" is not a number of USD per hour");
	assert_malformed("Kiln-Burn: ", "Kiln-Burn \"\" is not a number of USD per hour");
	assert_malformed("Kiln-GPUs: -3", "Kiln-GPUs \"-3\" is not a whole number of GPUs");
	assert_malformed("Kiln-GPUs: 2.5", "Kiln-GPUs \"2.5\" is not a whole number of GPUs");
	assert_malformed("Kiln-Upfront: 12abc USD", "Kiln-Upfront \"12abc USD\" is not a number of USD");
	assert_malformed("Kiln-GPU-Util: 101", "Kiln-GPU-Util \"101\" is not a percentage from 0 to 100");
	assert_malformed("Kiln-Time: yesterday", "Kiln-Time \"yesterday\" is not an RFC 3339 time");
}

static void test_ledger_parse_takes_what_kiln_writes(void **state)
{
	struct ledger_entry le;

	(void)state;
	ledger_parse("apply: x\n\nKiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 196.6838 USD/h (1 "
		     "part billed by use, not counted)\nKiln-GPUs: 16\nKiln-Upfront: 1200.00 "
		     "USD\nKiln-GPU-Util: 41.5\n",
		     &le);
	assert_null(le.bad);
	assert_true(le.has_burn && le.burn == 196.6838 && le.gpus == 16 && le.upfront == 1200);
	assert_true(le.has_util && le.util == 41.5);
	ledger_entry_release(&le);
}

static void test_report_a_time_before_its_parent_counts_no_money(void **state)
{
	struct rfx *f = *state;
	const json_t *doc, *bad;

	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 196.6838 USD/h\nKiln-GPUs: 16");
	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 1900-01-01T00:00:00Z\nKiln-Burn: 196.6838 USD/h\nKiln-GPUs: 16");
	doc = build(f, "2027-01-02T00:00:00Z", NULL, NULL);
	bad = json_object_get(doc, "ledger_errors");
	assert_int_equal(json_array_size(bad), 1);
	assert_non_null(strstr(json_string_value(json_array_get(bad, 0)),
			       ": Kiln-Time \"1900-01-01T00:00:00Z\" is before its parent's "
			       "(2027-01-01T00:00:00Z)"));
	assert_true(json_is_null(json_object_get(lifetime(doc, 0), "cost")));
	assert_true(num(lifetime(doc, 0), "hours") == 24.0);
	assert_true(json_is_null(json_object_get(json_object_get(doc, "total"), "cost")));
}

static void test_report_integrates_burn_between_commits(void **state)
{
	struct rfx *f = *state;
	const json_t *doc, *lt;

	/*
	 * Apply 2 nodes at 00:00 (196.6838/h, 16 GPUs), scale to 4 at 02:00
	 * (393.3677/h, 32 GPUs), down to 1 at 05:00 (98.3419/h, 8 GPUs),
	 * destroy at 06:00:
	 *   cost = 2 h × 196.6838 + 3 h × 393.3677 + 1 h × 98.3419
	 *        = 393.3676 + 1180.1031 + 98.3419 = 1671.8126
	 *   GPU-hours = 2 × 16 + 3 × 32 + 1 × 8 = 136
	 */
	commit(f, "refs/heads/w", 3,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 196.6838 USD/h\nKiln-GPUs: 16");
	commit(f, "refs/heads/w", 3,
	       "Kiln-Time: 2027-01-01T02:00:00Z\nKiln-Burn: 393.3677 USD/h\nKiln-GPUs: 32");
	commit(f, "refs/heads/w", 3,
	       "Kiln-Time: 2027-01-01T05:00:00Z\nKiln-Burn: 98.3419 USD/h\nKiln-GPUs: 8");
	commit(f, "refs/heads/w", 0,
	       "Kiln-Operation: destroy\nKiln-Time: 2027-01-01T06:00:00Z\nKiln-Burn: 0.0000 "
	       "USD/h\nKiln-GPUs: 0");
	doc = build(f, "2027-01-02T00:00:00Z", NULL, NULL);
	assert_int_equal(json_array_size(json_object_get(doc, "lifetimes")), 1);
	lt = lifetime(doc, 0);
	assert_string_equal(json_string_value(json_object_get(lt, "start")),
			    "2027-01-01T00:00:00Z");
	assert_string_equal(json_string_value(json_object_get(lt, "end")), "2027-01-01T06:00:00Z");
	assert_true(num(lt, "hours") == 6.0);
	assert_true(num(lt, "gpu_hours") == 136.0);
	assert_true(num(lt, "cost") == 1671.8126);
	assert_true(json_is_null(json_object_get(lt, "useful_gpu_hours")));
	assert_true(num(json_object_get(doc, "total"), "cost") == 1671.8126);
}

static void test_report_counts_a_running_cluster_to_now(void **state)
{
	struct rfx *f = *state;
	const json_t *lt;

	/* 10.5 h at 100/h since 00:00, now 10:30: 1050.00; 8 GPUs × 10.5 h = 84 GPU-hours. */
	commit(f, "refs/heads/w", 2,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 100.0000 USD/h\nKiln-GPUs: 8");
	lt = lifetime(build(f, "2027-01-01T10:30:00Z", NULL, NULL), 0);
	assert_true(json_is_null(json_object_get(lt, "end")));
	assert_true(num(lt, "cost") == 1050.0);
	assert_true(num(lt, "gpu_hours") == 84.0);
}

static void test_report_marks_history_before_the_ledger_unknown(void **state)
{
	struct rfx *f = *state;
	const json_t *doc, *lt;

	/* Commits an older kiln made: no Kiln-Burn. The hours are known, the cost is not. */
	commit(f, "refs/heads/old", 2, "Kiln-Serial: 0");
	commit(f, "refs/heads/old", 0, "Kiln-Serial: 1");
	doc = build(f, "2099-01-01T00:00:00Z", NULL, NULL);
	lt = lifetime(doc, 0);
	assert_non_null(lt);
	assert_true(json_is_null(json_object_get(lt, "cost")));
	assert_true(json_is_null(json_object_get(lt, "gpu_hours")));
	assert_false(json_is_true(json_object_get(lt, "cost_known")));
	assert_true(json_is_null(json_object_get(json_object_get(doc, "total"), "cost")));
}

static void test_report_includes_archived_workspaces(void **state)
{
	struct rfx *f = *state;
	const json_t *doc, *lt;

	/* 3 h at 10/h = 30.00, in a workspace deleted since (its archive ref remains). */
	commit(f, "refs/kiln/archive/gone/20270101T050000Z", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/kiln/archive/gone/20270101T050000Z", 0,
	       "Kiln-Time: 2027-01-01T03:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	doc = build(f, "2027-01-02T00:00:00Z", NULL, NULL);
	lt = lifetime(doc, 0);
	assert_string_equal(json_string_value(json_object_get(lt, "workspace")), "gone");
	assert_true(json_is_true(json_object_get(lt, "archived")));
	assert_true(num(lt, "cost") == 30.0);
}

static void test_report_since_counts_only_what_burned_after(void **state)
{
	struct rfx *f = *state;
	const json_t *doc;

	/* 00:00-04:00 at 10/h and since 02:00: 2 h, 20.00. A lifetime ended before: left out. */
	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/a", 0,
	       "Kiln-Time: 2027-01-01T04:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/b", 1,
	       "Kiln-Time: 2026-12-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/b", 0,
	       "Kiln-Time: 2026-12-01T01:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	doc = build(f, "2027-01-02T00:00:00Z", "2027-01-01T02:00:00Z", NULL);
	assert_int_equal(json_array_size(json_object_get(doc, "lifetimes")), 1);
	assert_true(num(lifetime(doc, 0), "hours") == 2.0);
	assert_true(num(lifetime(doc, 0), "cost") == 20.0);
}

static void test_report_useful_gpu_hours_come_from_recorded_utilization(void **state)
{
	struct rfx *f = *state;
	const json_t *lt;

	/*
	 * 16 GPUs at 200/h for 2 h, then destroyed recording 25% over those
	 * 2 h: 32 GPU-hours, 8 useful; cost 400.00, 400 / 8 = 50.00 per
	 * useful GPU-hour.
	 */
	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 200.0000 USD/h\nKiln-GPUs: 16");
	commit(f, "refs/heads/w", 0,
	       "Kiln-Time: 2027-01-01T02:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-GPU-Util: 25.0");
	lt = lifetime(build(f, "2027-01-02T00:00:00Z", NULL, NULL), 0);
	assert_true(num(lt, "useful_gpu_hours") == 8.0);
	assert_true(num(lt, "mean_gpu_util") == 25.0);
	assert_true(num(lt, "cost_per_useful_gpu_hour") == 50.0);
}

static void test_report_upfront_fees_add_to_the_cost(void **state)
{
	struct rfx *f = *state;

	/* 1 h at 10/h plus a 500.00 upfront fee: 510.00. */
	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Upfront: 500.00 USD");
	commit(f, "refs/heads/w", 0,
	       "Kiln-Time: 2027-01-01T01:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	assert_true(num(lifetime(build(f, "2027-01-02T00:00:00Z", NULL, NULL), 0), "cost") ==
		    510.0);
}

static void test_report_a_ttl_extend_keeps_the_burn(void **state)
{
	struct rfx *f = *state;

	/* ttl extend records no burn of its own and changes nothing that burns: 4 h × 10 = 40. */
	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/w", 1, "Kiln-Operation: ttl extend\nKiln-Time: 2027-01-01T01:00:00Z");
	commit(f, "refs/heads/w", 0,
	       "Kiln-Time: 2027-01-01T04:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	assert_true(num(lifetime(build(f, "2027-01-02T00:00:00Z", NULL, NULL), 0), "cost") == 40.0);
}

/* report_workspace's lifetime, or NULL; owned by the caller. */
static json_t *running(struct rfx *f, const char *ws, const char *now)
{
	struct kiln_error err = {0};
	json_t *lt = NULL;

	if (report_workspace(f->s, ws, at(now), &lt, &err) < 0)
		fail_msg("report_workspace: %s", err.msg);
	return lt;
}

static void test_report_workspace_costs_a_resized_cluster_as_the_report_does(void **state)
{
	struct rfx *f = *state;
	json_t *lt;

	/*
	 * Up at 10/h with a 500.00 block bought, resized to 40/h at 05:00, to
	 * 2.5/h at 07:00; at 10:00: 5 × 10 + 2 × 40 + 3 × 2.5 + 500 = 637.50,
	 * not 10 h at the last burn (25 + 500).
	 */
	commit(f, "refs/heads/w", 2,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 8\n"
	       "Kiln-Upfront: 500.00 USD");
	commit(f, "refs/heads/w", 3,
	       "Kiln-Time: 2027-01-01T05:00:00Z\nKiln-Burn: 40.0000 USD/h\nKiln-GPUs: 32");
	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T07:00:00Z\nKiln-Burn: 2.5000 USD/h\nKiln-GPUs: 2");
	lt = running(f, "w", "2027-01-01T10:00:00Z");
	assert_non_null(lt);
	assert_true(num(lt, "cost") == 637.5);
	assert_true(num(lt, "upfront") == 500.0);
	assert_string_equal(json_string_value(json_object_get(lt, "start")),
			    "2027-01-01T00:00:00Z");
	assert_true(num(lt, "cost") ==
		    num(lifetime(build(f, "2027-01-01T10:00:00Z", NULL, NULL), 0), "cost"));
	assert_null(json_object_get(lt, "_sums"));
	json_decref(lt);
}

static void test_report_workspace_has_no_lifetime_after_a_destroy_or_without_a_branch(void **state)
{
	struct rfx *f = *state;

	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/w", 0,
	       "Kiln-Time: 2027-01-01T01:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	assert_null(running(f, "w", "2027-01-02T00:00:00Z"));
	assert_null(running(f, "nosuch", "2027-01-02T00:00:00Z"));
}

static void test_report_workspace_counts_only_the_running_lifetime(void **state)
{
	struct rfx *f = *state;
	json_t *lt;

	/* A first lifetime (1 h at 10/h) ended; the second runs 2 h at 3/h: 6.00. */
	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/w", 0,
	       "Kiln-Time: 2027-01-01T01:00:00Z\nKiln-Burn: 0.0000 USD/h\nKiln-GPUs: 0");
	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T02:00:00Z\nKiln-Burn: 3.0000 USD/h\nKiln-GPUs: 0");
	lt = running(f, "w", "2027-01-01T04:00:00Z");
	assert_non_null(lt);
	assert_true(num(lt, "cost") == 6.0);
	json_decref(lt);
}

static void test_report_groups_by_tag(void **state)
{
	struct rfx *f = *state;
	const json_t *doc, *groups;

	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 1.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team=nlp");
	commit(f, "refs/heads/b", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 2.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team=nlp");
	commit(f, "refs/heads/c", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 4.0000 USD/h\nKiln-GPUs: 0");
	/* 10 h: nlp = (1 + 2) × 10 = 30.00, untagged 40.00, total 70.00. */
	doc = build(f, "2027-01-01T10:00:00Z", NULL, "tag:team");
	groups = json_object_get(doc, "groups");
	assert_int_equal(json_array_size(groups), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(groups, 0), "key")),
			    "(untagged)");
	assert_true(num(json_array_get(groups, 0), "cost") == 40.0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(groups, 1), "key")),
			    "nlp");
	assert_true(num(json_array_get(groups, 1), "cost") == 30.0);
	assert_true(num(json_object_get(doc, "total"), "cost") == 70.0);
}

/* The CSV of the report f's history makes, grouped by, as one string (caller frees). */
static char *csv_of(struct rfx *f, const char *by)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	report_render_csv(out, build(f, "2027-01-01T10:00:00Z", NULL, by));
	fclose(out);
	return text;
}

static void test_report_csv_writes_formula_like_text_as_text(void **state)
{
	struct rfx *f = *state;
	char *csv;

	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 1.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team==HYPERLINK(\"http://x.example/\",\"y\")");
	commit(f, "refs/heads/b", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 1.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team=+1");
	commit(f, "refs/heads/c", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 1.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team=-2");
	commit(f, "refs/heads/d", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 1.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team=@SUM(A1)");
	commit(f, "refs/heads/e", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 1.0000 USD/h\nKiln-GPUs: 0\n"
	       "Kiln-Tag: team=\tx");
	csv = csv_of(f, "tag:team");
	/* Each hostile cell quoted with a leading '; the figures stay numbers. */
	assert_non_null(strstr(csv, "\"'+1\",b,no,train,"));
	assert_non_null(strstr(csv, "\"'-2\",c,no,train,"));
	assert_non_null(strstr(csv, "\"'=HYPERLINK(\"\"http://x.example/\"\",\"\"y\"\")\",a,no,"));
	assert_non_null(strstr(csv, "\"'@SUM(A1)\",d,no,train,"));
	assert_non_null(strstr(csv, "\"'\tx\",e,no,train,"));
	assert_non_null(
	    strstr(csv, ",2027-01-01T00:00:00Z,,10.0000,0.0000,10.0000,0.0000,,,\r\n"));
	free(csv);
}

static void test_ledger_parse_reads_the_split_budget_and_retained(void **state)
{
	struct ledger_entry le;

	(void)state;
	ledger_parse("apply\n\nKiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 12.0000 USD/h\n"
		     "Kiln-Burn-Compute: 10.0000 USD/h\nKiln-Burn-Storage: 1.5000 USD/h\n"
		     "Kiln-Budget: 20.0000 USD/h\nKiln-Retained: 0.2500 USD/h\n",
		     &le);
	assert_null(le.bad);
	assert_true(le.has_split && le.compute == 10.0 && le.storage == 1.5);
	assert_true(le.has_budget && le.budget == 20.0);
	assert_true(le.retained == 0.25);
	ledger_entry_release(&le);
	ledger_parse("apply\n\nKiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 12.0000 USD/h\n"
		     "Kiln-Budget: lots\n",
		     &le);
	assert_string_equal(le.bad, "Kiln-Budget \"lots\" is not a number of USD per hour");
	assert_false(le.has_budget || le.has_burn);
	ledger_entry_release(&le);
}

/*
 * 2 h at 12/h (10 compute, 1.5 storage, 0.5 other) with 8 GPUs at 25%, then
 * a destroy at 02:00 that kept a store of 0.25/h; now 06:00:
 *   compute 20, storage 3, other 1; GPU-hours 16, useful 4, idle 12 costing
 *   24 × 12 / 16 = 18; retained 4 h × 0.25 = 1.
 */
static void history_with_split(struct rfx *f, const char *ref)
{
	commit(f, ref, 2,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 12.0000 USD/h\nKiln-GPUs: 8\n"
	       "Kiln-Burn-Compute: 10.0000 USD/h\nKiln-Burn-Storage: 1.5000 USD/h\n"
	       "Kiln-Budget: 20.0000 USD/h");
	commit(f, ref, 0,
	       "Kiln-Operation: destroy\nKiln-Time: 2027-01-01T02:00:00Z\nKiln-Burn: 0.0000 "
	       "USD/h\nKiln-GPUs: 0\nKiln-Burn-Compute: 0.0000 USD/h\nKiln-Burn-Storage: 0.0000 "
	       "USD/h\nKiln-GPU-Util: 25.0\nKiln-Retained: 0.2500 USD/h");
}

static void test_report_splits_the_cost_and_counts_idle_and_kept_storage(void **state)
{
	struct rfx *f = *state;
	const json_t *lt, *st;

	history_with_split(f, "refs/heads/w");
	lt = lifetime(build(f, "2027-01-01T06:00:00Z", NULL, NULL), 0);
	assert_true(num(lt, "cost") == 24.0);
	assert_true(num(lt, "compute_cost") == 20.0);
	assert_true(num(lt, "storage_cost") == 3.0);
	assert_true(num(lt, "other_cost") == 1.0);
	assert_true(num(lt, "idle_gpu_hours") == 12.0);
	assert_true(num(lt, "idle_cost") == 18.0);
	assert_true(num(lt, "retained_cost") == 1.0);
	assert_true(num(lt, "orphaned_cost") == 0.0);
	assert_true(num(lt, "retained_usd_per_hour") == 0.25);
	st = json_array_get(json_object_get(lt, "stretches"), 0);
	assert_int_equal(json_array_size(json_object_get(lt, "stretches")), 1);
	assert_string_equal(json_string_value(json_object_get(st, "start")),
			    "2027-01-01T00:00:00Z");
	assert_true(num(st, "usd_per_hour") == 12.0 && num(st, "budget_usd_per_hour") == 20.0);
	assert_true(num(st, "gpus") == 8 && num(st, "gpu_util") == 25.0);
	assert_true(num(json_object_get(f->doc, "total"), "retained_cost") == 1.0);
}

static void test_report_kept_storage_of_a_deleted_workspace_is_orphaned(void **state)
{
	struct rfx *f = *state;
	const json_t *tot;

	history_with_split(f, "refs/kiln/archive/w/20270101T020000Z");
	tot = json_object_get(build(f, "2027-01-01T06:00:00Z", NULL, NULL), "total");
	assert_true(num(tot, "orphaned_cost") == 1.0);
	assert_true(num(tot, "retained_cost") == 0.0);
}

static void test_report_without_a_recorded_split_says_unknown(void **state)
{
	struct rfx *f = *state;
	const json_t *lt, *st;

	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 0");
	lt = lifetime(build(f, "2027-01-01T01:00:00Z", NULL, NULL), 0);
	assert_true(num(lt, "cost") == 10.0);
	assert_true(json_is_null(json_object_get(lt, "compute_cost")));
	assert_true(json_is_null(json_object_get(lt, "idle_gpu_hours")));
	st = json_array_get(json_object_get(lt, "stretches"), 0);
	assert_true(json_is_null(json_object_get(st, "gpu_util")));
	assert_true(json_is_null(json_object_get(st, "budget_usd_per_hour")));
}

/* The HTML page of a report, as a string. */
static char *html_of(const json_t *doc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	report_render_html(m, doc);
	fclose(m);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static void test_report_html_charts_have_axes_titles_and_legends(void **state)
{
	struct rfx *f = *state;
	char *html;

	history_with_split(f, "refs/heads/w");
	html = html_of(build(f, "2027-01-01T06:00:00Z", NULL, NULL));
	/* Four charts, each with both axes, a legend, and titled axes. */
	assert_int_equal(count(html, "<svg "), 4);
	assert_int_equal(count(html, "<g class=\"legend\"><g class=\"legend-entry\">"), 4);
	assert_int_equal(count(html, "class=\"axis axis-x\""), 4);
	assert_int_equal(count(html, "class=\"axis axis-y\""), 4);
	assert_non_null(strstr(html, ">burn (USD per hour)</text>"));
	assert_non_null(strstr(html, ">GPU utilization (%)</text>"));
	assert_non_null(strstr(html, ">cost so far (USD)</text>"));
	/* Ticks a person reads: dates, not RFC 3339. */
	assert_non_null(strstr(html, ">Jan 1 00:00</text>"));
	assert_null(strstr(html, ">2027-01-01T"));
	/* The budget line and its legend, the kinds of cost, the idle band. */
	assert_non_null(strstr(html, "budget (budget.max_hourly_usd of what ran, added up)"));
	assert_non_null(strstr(html, ">retained storage</text>"));
	assert_non_null(strstr(html, ">idle: under 10%</text>"));
	assert_non_null(strstr(html, "id=\"finops-total-idle-cost\">$18.00<"));
	assert_non_null(strstr(html, "id=\"finops-total-retained\">$1.00<"));
	assert_null(strstr(html, "<script"));
	free(html);
}

static void test_report_html_shades_a_running_stretch_with_no_utilization(void **state)
{
	struct rfx *f = *state;
	char *html;

	commit(f, "refs/heads/w", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 8");
	html = html_of(build(f, "2027-01-01T03:00:00Z", NULL, NULL));
	assert_int_equal(count(html, "<rect class=\"unmeasured\""), 1);
	assert_non_null(strstr(html, "w: GPUs running, no utilization recorded</title>"));
	free(html);
}

static void test_report_html_keeps_overlapping_groups_apart(void **state)
{
	struct rfx *f = *state;
	char *html;

	/* a and b run at once, at 90% and 10%: two lines, never one merged bar. */
	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 8");
	commit(f, "refs/heads/a", 1,
	       "Kiln-Time: 2027-01-01T02:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 8\n"
	       "Kiln-GPU-Util: 90.0");
	commit(f, "refs/heads/b", 1,
	       "Kiln-Time: 2027-01-01T00:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 8");
	commit(f, "refs/heads/b", 1,
	       "Kiln-Time: 2027-01-01T02:00:00Z\nKiln-Burn: 10.0000 USD/h\nKiln-GPUs: 8\n"
	       "Kiln-GPU-Util: 10.0");
	html = html_of(build(f, "2027-01-01T02:00:00Z", NULL, NULL));
	{
		const char *u = strstr(html, "id=\"chart-util\"");

		assert_non_null(u);
		assert_non_null(strstr(u, "<title>a</title></polyline>"));
		assert_non_null(strstr(u, "<title>b</title></polyline>"));
		/* And the burn chart adds them up: 20/h together. */
		assert_non_null(strstr(html, ">all together</text>"));
	}
	free(html);
}

static void test_report_refuses_an_unknown_by_key(void **state)
{
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(report_by_check("team", &err), -1);
	assert_string_equal(err.msg, "unknown --by key 'team'");
	assert_string_equal(err.hint,
			    "use --by workspace, --by cluster, --by run or --by tag:KEY (a spec tag)");
	memset(&err, 0, sizeof(err));
	assert_int_equal(report_by_check("tag:", &err), -1);
	assert_int_equal(report_by_check("tag:team", &err), 0);
	assert_int_equal(report_by_check("cluster", &err), 0);
}

static void test_report_since_takes_a_date_or_a_time(void **state)
{
	struct kiln_error err = {0};
	int64_t t;

	(void)state;
	assert_int_equal(report_since_parse("2027-01-31", &t, &err), 0);
	assert_int_equal(t, at("2027-01-31T00:00:00Z"));
	assert_int_equal(report_since_parse("2027-01-31T12:00:00Z", &t, &err), 0);
	assert_int_equal(report_since_parse("last week", &t, &err), -1);
	assert_string_equal(err.msg, "--since 'last week' is not a date");
	assert_int_equal(report_since_parse("2027-13-45", &t, &err), -1);
	assert_string_equal(err.msg, "--since '2027-13-45' is not a date");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ledger_parse_reads_every_trailer),
	    cmocka_unit_test(test_ledger_parse_needs_a_time_for_a_burn),
	    cmocka_unit_test(test_ledger_parse_names_every_malformed_value),
	    cmocka_unit_test(test_ledger_parse_takes_what_kiln_writes),
	    rtest(test_report_a_time_before_its_parent_counts_no_money),
	    rtest(test_report_integrates_burn_between_commits),
	    rtest(test_report_counts_a_running_cluster_to_now),
	    rtest(test_report_marks_history_before_the_ledger_unknown),
	    rtest(test_report_includes_archived_workspaces),
	    rtest(test_report_since_counts_only_what_burned_after),
	    rtest(test_report_useful_gpu_hours_come_from_recorded_utilization),
	    rtest(test_report_upfront_fees_add_to_the_cost),
	    rtest(test_report_a_ttl_extend_keeps_the_burn),
	    rtest(test_report_workspace_costs_a_resized_cluster_as_the_report_does),
	    rtest(test_report_workspace_has_no_lifetime_after_a_destroy_or_without_a_branch),
	    rtest(test_report_workspace_counts_only_the_running_lifetime),
	    rtest(test_report_groups_by_tag),
	    rtest(test_report_csv_writes_formula_like_text_as_text),
	    cmocka_unit_test(test_ledger_parse_reads_the_split_budget_and_retained),
	    rtest(test_report_splits_the_cost_and_counts_idle_and_kept_storage),
	    rtest(test_report_kept_storage_of_a_deleted_workspace_is_orphaned),
	    rtest(test_report_without_a_recorded_split_says_unknown),
	    rtest(test_report_html_charts_have_axes_titles_and_legends),
	    rtest(test_report_html_shades_a_running_stretch_with_no_utilization),
	    rtest(test_report_html_keeps_overlapping_groups_apart),
	    cmocka_unit_test(test_report_refuses_an_unknown_by_key),
	    cmocka_unit_test(test_report_since_takes_a_date_or_a_time),
	};

	git_libgit2_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
