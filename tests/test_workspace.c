/*
 * test_workspace.c - a workspace over the store: its head, the checked
 * state.json, the lock, and commits made by compare-and-swap on the head.
 *
 * Every test runs in a fresh temporary directory holding a local state
 * repository, removed at the end. Two store handles on it stand for two
 * processes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "lock.h"
#include "state.h"
#include "store.h"
#include "workspace.h"

#define WS "default"
#define BRANCH "refs/heads/" WS
#define LOCK_REF "refs/kiln/locks/" WS
#define STALE_ID "0badc0de-0000-4000-8000-000000000001"
#define MAX_WS 4

struct fx {
	char dir[64];
	char cwd[PATH_MAX];
	char *path; /* the state repository */
	struct store *s;
	struct store *other; /* a second handle: another process */
	struct workspace *w[MAX_WS];
	json_t *doc;
	char *text;
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {{0}};

	*state = f;
	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	unsetenv("KILN_STATE");
	unsetenv("KILN_WORKSPACE");
	unsetenv("KILN_STATE_KEY");
	unsetenv("KILN_LOCK_LEASE");
	unsetenv("KILN_LOCK_RENEW");
	unsetenv("KILN_TEST_LOCK_HOLD");
	strcpy(f->dir, "/tmp/kiln-test-workspace-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0)
		return -1;
	f->path = xasprintf("%s/state.git", f->dir);
	if (store_open(&f->s, f->path, &err) < 0 || store_open(&f->other, f->path, &err) < 0) {
		print_error("store_open: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int i, rc = 0;

	for (i = 0; i < MAX_WS; i++)
		workspace_close(f->w[i], NULL);
	json_decref(f->doc);
	free(f->text);
	store_free(f->other);
	store_free(f->s);
	if (f->dir[0] != '/' || chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f->path);
	free(f);
	return rc;
}

#define ws_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("expected \"%s\" in: %s", part, text);
}

/* Open workspace WS through store s into the fixture's slot i. */
static struct workspace *open_ws(struct fx *f, int i, struct store *s)
{
	struct kiln_error err = {{0}};

	if (workspace_open(&f->w[i], s, WS, &err) < 0)
		fail_msg("workspace_open: %s", err.msg);
	return f->w[i];
}

static void lock_ws(struct workspace *w, int64_t timeout)
{
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", timeout};

	if (workspace_lock(w, &opts, &err) < 0)
		fail_msg("workspace_lock: %s", err.msg);
}

/* Commit doc (or a new document when NULL) as the next state of w. */
static void commit(struct workspace *w, json_t *doc, const char *summary)
{
	struct kiln_error err = {{0}};
	json_t *fresh = doc ? NULL : state_new(NULL, WS, "sim");
	int rc = workspace_commit(w, doc ? doc : fresh, false, summary, NULL, 0, &err);

	json_decref(fresh);
	if (rc < 0)
		fail_msg("workspace_commit: %s", err.msg);
}

static git_oid branch_head(struct store *s)
{
	struct kiln_error err = {{0}};
	git_oid oid;

	if (store_ref_read(s, BRANCH, &oid, &err) != 0)
		fail_msg("no branch %s: %s", BRANCH, err.msg);
	return oid;
}

static void assert_oid_equal(const git_oid *got, const git_oid *want)
{
	char a[8], b[8];

	if (!git_oid_equal(got, want))
		fail_msg("expected commit %s, found %s", store_short(want, a), store_short(got, b));
}

/* The message of a commit; caller frees. */
static char *commit_message(struct store *s, const git_oid *oid)
{
	git_commit *c = NULL;
	char *msg;

	if (git_commit_lookup(&c, store_repo(s), oid) != 0)
		fail_msg("no commit: %s", store_git_error());
	msg = xstrdup(git_commit_message(c));
	git_commit_free(c);
	return msg;
}

/* Point the branch at a new commit holding this state.json text (no parent). */
static git_oid plant_state(struct store *s, const char *text)
{
	struct kiln_error err = {{0}};
	git_oid oid;

	if (store_commit_file(s, NULL, STORE_STATE_FILE, text, strlen(text), "by hand", &oid,
			      &err) < 0 ||
	    store_ref_create(s, BRANCH, &oid, &err) != 0)
		fail_msg("planting state: %s", err.msg);
	return oid;
}

/* A lock whose holder died ten minutes ago; its lease ran out five minutes ago. */
static git_oid plant_stale_lock(struct store *s)
{
	struct kiln_error err = {{0}};
	int64_t now = (int64_t)time(NULL);
	char c[32], e[32];
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "id", STALE_ID, "holder",
			      "ghost@ci-runner-7", "pid", (json_int_t)4242, "operation", "apply",
			      "workspace", WS, "created", timefmt_time_format_rfc3339(now - 600, c),
			      "expires", timefmt_time_format_rfc3339(now - 300, e));
	char *body = json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2));
	git_oid oid;
	int rc;

	json_decref(o);
	rc = store_commit_file(s, NULL, NULL, "", 0, body, &oid, &err);
	free(body);
	if (rc < 0 || store_ref_create(s, LOCK_REF, &oid, &err) != 0)
		fail_msg("planting a lock: %s", err.msg);
	return oid;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ---- opening ---- */

static void test_open_of_a_fresh_store_finds_no_workspace(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);

	assert_false(w->exists);
	assert_null(w->state);
	assert_null(w->lock);
	assert_string_equal(w->name, WS);
	assert_string_equal(w->branch, BRANCH);
}

static void test_require_of_a_missing_workspace_names_the_store_and_the_new_command(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);

	assert_int_equal(workspace_require(w, &err), -1);
	f->text = xasprintf("workspace 'default' does not exist in %s", f->path);
	assert_string_equal(err.msg, f->text);
	assert_contains(err.hint, "kiln workspace new default");
	assert_contains(err.hint, "kiln workspace list");
}

static void test_require_of_an_existing_workspace_succeeds(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);

	commit(w, NULL, "create");
	assert_int_equal(workspace_require(w, &err), 0);
}

static void test_open_without_a_name_uses_kiln_workspace(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	setenv("KILN_WORKSPACE", "ci-1", 1);
	assert_int_equal(workspace_open(&f->w[0], f->s, NULL, &err), 0);
	unsetenv("KILN_WORKSPACE");
	assert_string_equal(f->w[0]->name, "ci-1");
	assert_string_equal(f->w[0]->branch, "refs/heads/ci-1");
}

static void test_open_refuses_a_name_git_cannot_use(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	assert_int_equal(workspace_open(&f->w[0], f->s, "a..b", &err), -1);
	assert_null(f->w[0]);
	assert_string_equal(err.msg, "'a..b' is not a workspace name");
}

/* ---- commits ---- */

static void test_first_commit_creates_the_branch_with_serial_zero(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);
	git_oid head;

	f->doc = state_new(NULL, WS, "sim");
	commit(w, f->doc, "create workspace default");
	assert_true(w->exists);
	head = branch_head(f->other);
	assert_oid_equal(&head, &w->head);
	assert_int_equal(state_serial(f->doc), 0);
	assert_int_equal(state_serial(w->state), 0);
}

static void test_create_makes_an_empty_state_in_one_commit(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);
	struct kiln_error err = {{0}};
	git_commit *c = NULL;
	git_oid head;

	assert_int_equal(workspace_create(w, "init: workspace default, from template t", &err), 0);
	assert_true(w->exists);
	assert_int_equal(state_serial(w->state), 0);
	assert_int_equal(state_resource_count(w->state), 0);
	head = branch_head(f->other);
	assert_oid_equal(&head, &w->head);
	assert_int_equal(git_commit_lookup(&c, store_repo(f->other), &head), 0);
	assert_int_equal(git_commit_parentcount(c), 0);
	assert_string_equal(git_commit_summary(c), "init: workspace default, from template t");
	git_commit_free(c);
}

static void test_create_refuses_an_existing_workspace(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);
	struct kiln_error err = {{0}};
	git_oid before, after;

	assert_int_equal(workspace_create(w, "first", &err), 0);
	before = branch_head(f->other);
	assert_int_equal(workspace_create(w, "second", &err), -1);
	assert_string_equal(err.msg, "workspace 'default' already exists");
	assert_string_equal(err.hint, "`kiln workspace list` shows the workspaces");
	after = branch_head(f->other);
	assert_oid_equal(&before, &after);
}

static void test_second_commit_gets_serial_one_on_top_of_the_first(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);
	git_commit *c = NULL;
	git_oid first, head;

	f->doc = state_new(NULL, WS, "sim");
	commit(w, f->doc, "create");
	first = w->head;
	commit(w, f->doc, "change");
	assert_int_equal(state_serial(w->state), 1);
	head = branch_head(f->other);
	assert_oid_equal(&head, &w->head);
	assert_int_equal(git_commit_lookup(&c, store_repo(f->other), &head), 0);
	assert_int_equal(git_commit_parentcount(c), 1);
	assert_oid_equal(git_commit_parent_id(c, 0), &first);
	git_commit_free(c);
}

static void test_commit_message_is_the_summary_then_the_kiln_trailers(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);
	git_oid head;

	f->doc = state_new(NULL, WS, "sim");
	commit(w, f->doc, "create");
	commit(w, f->doc, "apply: 2 to add");
	head = branch_head(f->other);
	f->text = commit_message(f->other, &head);
	assert_true(str_starts_with(f->text, "apply: 2 to add\n\n"));
	assert_contains(f->text, "\nKiln-Serial: 1\n");
	assert_contains(f->text, "\nKiln-Lineage: ");
	assert_contains(f->text, state_lineage(f->doc));
	assert_contains(f->text, "\nKiln-Version: " KILN_VERSION "\n");
	assert_null(strstr(f->text, "Kiln-Lock-Takeover"));
}

static void test_extra_trailers_follow_the_kiln_ones(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);
	const char *const extra[] = {"Kiln-Plan: 1a2b3c", "Kiln-Operation: apply"};
	git_oid head;

	/* Kiln-Time is the clock kiln reads (KILN_NOW), for the cost ledger, not git's. */
	setenv("KILN_NOW", "2027-01-01T00:00:00Z", 1);
	f->doc = state_new(NULL, WS, "sim");
	assert_int_equal(workspace_commit(w, f->doc, false, "apply", extra, 2, &err), 0);
	unsetenv("KILN_NOW");
	head = branch_head(f->other);
	f->text = commit_message(f->other, &head);
	assert_contains(f->text, "Kiln-Version: " KILN_VERSION "\nKiln-Time: 2027-01-01T00:00:00Z"
				 "\nKiln-Plan: 1a2b3c\nKiln-Operation: apply\n");
}

static void test_stored_state_is_the_canonical_text_of_the_document(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);
	char *canonical, *stored = NULL;
	size_t len = 0;
	git_oid head;

	f->doc = state_new("prod", WS, "sim");
	json_object_set_new(state_resources(f->doc), "sim_node.a",
			    json_pack("{s:s, s:s, s:{s:i, s:s}}", "type", "sim_node", "id", "n-1",
				      "attrs", "size", 8, "zone", "z1"));
	commit(w, f->doc, "create");
	head = branch_head(f->other);
	assert_int_equal(store_read_file(f->other, &head, STORE_STATE_FILE, &stored, &len, &err),
			 0);
	canonical = state_canonical(f->doc);
	assert_string_equal(stored, canonical);
	assert_int_equal(len, strlen(canonical));
	free(canonical);
	free(stored);
}

static void test_reopening_reads_back_the_committed_state(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s), *again;

	f->doc = state_new("prod", WS, "sim");
	commit(w, f->doc, "create");
	again = open_ws(f, 1, f->other);
	assert_true(again->exists);
	assert_oid_equal(&again->head, &w->head);
	assert_true(json_equal(again->state, f->doc));
}

static void test_reopening_refuses_a_state_whose_resources_are_another_provider_s(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);
	char sh[8], *want;

	f->doc = state_new("prod", WS, "aws");
	json_object_set_new(
	    state_resources(f->doc), "sim_network.main",
	    json_pack("{s:s, s:s, s:{}}", "type", "sim_network", "id", "vpc-1", "attrs"));
	commit(w, f->doc, "create");
	assert_int_equal(workspace_open(&f->w[1], f->other, WS, &err), -1);
	assert_null(f->w[1]);
	want = xasprintf("state.json of workspace '%s' (commit %s): the state names provider "
			 "'aws', but resource sim_network.main is of type sim_network, which "
			 "'aws' does not have",
			 WS, store_short(&w->head, sh));
	assert_string_equal(err.msg, want);
	assert_true(strstr(err.hint, "back at the last good commit (git update-ref)") != NULL);
	free(want);
}

static void test_commit_on_a_moved_head_fails_naming_both_commits(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *setup = open_ws(f, 0, f->s), *a, *b;
	json_t *doc_b;
	git_oid start, head;
	char start_sh[8], a_sh[8];
	int rc;

	commit(setup, NULL, "create");
	start = setup->head;
	a = open_ws(f, 1, f->s);
	b = open_ws(f, 2, f->other);
	commit(a, a->state, "first writer");
	doc_b = json_deep_copy(b->state);
	rc = workspace_commit(b, doc_b, false, "second writer", NULL, 0, &err);
	json_decref(doc_b);
	assert_int_equal(rc, -1);
	assert_contains(err.msg, "workspace 'default' moved while this run worked");
	assert_contains(err.msg, store_short(&a->head, a_sh));
	assert_contains(err.msg, store_short(&start, start_sh));
	assert_contains(err.msg, "nothing was overwritten");
	assert_contains(err.hint, "run the command again");
	head = branch_head(f->s);
	assert_oid_equal(&head, &a->head);
}

static void test_racing_first_commits_keep_the_winner(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *a = open_ws(f, 0, f->s), *b = open_ws(f, 1, f->other);
	json_t *doc_b = state_new(NULL, WS, "sim");
	git_oid head;
	char a_sh[8];
	int rc;

	commit(a, NULL, "create from a");
	rc = workspace_commit(b, doc_b, false, "create from b", NULL, 0, &err);
	json_decref(doc_b);
	assert_int_equal(rc, -1);
	assert_contains(err.msg, "moved while this run worked");
	assert_contains(err.msg, store_short(&a->head, a_sh));
	assert_contains(err.msg, "no commit");
	head = branch_head(f->s);
	assert_oid_equal(&head, &a->head);
}

/* ---- a state.json kiln cannot use ---- */

static void assert_open_fails_naming_the_commit(struct fx *f, const char *text, const char *cause)
{
	struct kiln_error err = {{0}};
	git_oid planted = plant_state(f->other, text), head;
	char sh[8];

	assert_int_equal(workspace_open(&f->w[0], f->s, WS, &err), -1);
	assert_null(f->w[0]);
	assert_contains(err.msg, "workspace 'default'");
	assert_contains(err.msg, store_short(&planted, sh));
	assert_contains(err.msg, cause);
	head = branch_head(f->s);
	assert_oid_equal(&head, &planted);
}

static void test_open_of_a_corrupt_state_names_the_workspace_and_commit(void **state)
{
	assert_open_fails_naming_the_commit(*state, "{not json", "not JSON");
}

static void test_open_of_a_newer_format_names_the_workspace_and_commit(void **state)
{
	assert_open_fails_naming_the_commit(
	    *state,
	    "{\"format_version\": 2, \"cluster\": null, \"workspace\": \"default\", "
	    "\"provider\": null, \"serial\": 3, \"lineage\": \"l-1\", \"resources\": {}}",
	    "format_version 2 is newer than this kiln understands");
}

static void test_open_of_a_state_missing_a_key_names_the_workspace_and_commit(void **state)
{
	assert_open_fails_naming_the_commit(
	    *state,
	    "{\"format_version\": 1, \"cluster\": null, \"workspace\": \"default\", "
	    "\"provider\": null, \"serial\": 3, \"resources\": {}}",
	    "missing key 'lineage'");
}

/* ---- the lock ---- */

static void test_lock_rereads_a_head_that_moved_since_open(void **state)
{
	struct fx *f = *state;
	struct workspace *setup = open_ws(f, 0, f->s), *w, *other;

	commit(setup, NULL, "create");
	w = open_ws(f, 1, f->s);
	other = open_ws(f, 2, f->other);
	commit(other, other->state, "moved meanwhile");
	assert_false(git_oid_equal(&w->head, &other->head));
	lock_ws(w, 0);
	assert_oid_equal(&w->head, &other->head);
	assert_int_equal(state_serial(w->state), 1);
}

static void test_commit_after_lock_builds_on_the_moved_head(void **state)
{
	struct fx *f = *state;
	struct workspace *setup = open_ws(f, 0, f->s), *w, *other;
	git_commit *c = NULL;
	git_oid moved, head;

	commit(setup, NULL, "create");
	w = open_ws(f, 1, f->s);
	other = open_ws(f, 2, f->other);
	commit(other, other->state, "moved meanwhile");
	moved = other->head;
	lock_ws(w, 0);
	commit(w, w->state, "under the lock");
	head = branch_head(f->other);
	assert_oid_equal(&head, &w->head);
	assert_int_equal(state_serial(w->state), 2);
	assert_int_equal(git_commit_lookup(&c, store_repo(f->other), &head), 0);
	assert_oid_equal(git_commit_parent_id(c, 0), &moved);
	git_commit_free(c);
}

static void test_close_releases_the_lock(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);
	struct lock_info info;
	git_oid oid;

	lock_ws(w, 0);
	assert_int_equal(lock_read(f->other, WS, &info, &oid, &err), 0);
	lock_info_release(&info);
	f->w[0] = NULL;
	assert_int_equal(workspace_close(w, &err), 0);
	assert_int_equal(lock_read(f->other, WS, &info, &oid, &err), 1);
}

static void test_takeover_of_a_stale_lock_is_recorded_in_the_next_commit(void **state)
{
	struct fx *f = *state;
	struct workspace *w = open_ws(f, 0, f->s);
	git_oid head;

	plant_stale_lock(f->other);
	lock_ws(w, 5);
	commit(w, NULL, "create");
	head = branch_head(f->other);
	f->text = commit_message(f->other, &head);
	assert_contains(f->text, "\nKiln-Lock-Takeover: " STALE_ID " held by ghost@ci-runner-7");
}

static void test_commit_after_the_lock_was_taken_is_refused(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);
	json_t *doc = state_new(NULL, WS, "sim");
	git_oid theirs, cur, absent;
	int rc = -1, tries;

	setenv("KILN_LOCK_LEASE", "3s", 1);
	setenv("KILN_LOCK_RENEW", "1s", 1);
	lock_ws(w, 0);
	if (store_commit_file(f->other, NULL, NULL, "", 0, "another lock", &theirs, &err) < 0)
		fail_msg("commit: %s", err.msg);
	for (tries = 0; tries < 10 && rc != 0; tries++) {
		if (store_ref_read(f->other, LOCK_REF, &cur, &err) != 0)
			fail_msg("no lock ref");
		rc = store_ref_update(f->other, LOCK_REF, &cur, &theirs, &err);
	}
	assert_int_equal(rc, 0);
	sleep_ms(2500);
	rc = workspace_commit(w, doc, false, "too late", NULL, 0, &err);
	json_decref(doc);
	assert_int_equal(rc, -1);
	assert_contains(err.msg, "removed or taken over");
	assert_int_equal(store_ref_read(f->other, BRANCH, &absent, &err), 1);
}

/* ---- deleting ---- */

static void test_delete_of_a_moved_branch_deletes_nothing(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *setup = open_ws(f, 0, f->s), *w, *other;
	git_oid head;

	commit(setup, NULL, "create");
	w = open_ws(f, 1, f->s);
	other = open_ws(f, 2, f->other);
	commit(other, other->state, "moved meanwhile");
	assert_int_equal(workspace_delete_branch(w, &err), -1);
	assert_contains(err.msg, "moved while deleting it; nothing was deleted");
	head = branch_head(f->s);
	assert_oid_equal(&head, &other->head);
}

static void test_delete_of_the_head_removes_the_branch(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct workspace *w = open_ws(f, 0, f->s);
	git_oid oid;

	commit(w, NULL, "create");
	assert_int_equal(workspace_delete_branch(w, &err), 0);
	assert_false(w->exists);
	assert_int_equal(store_ref_read(f->other, BRANCH, &oid, &err), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    ws_test(test_open_of_a_fresh_store_finds_no_workspace),
	    ws_test(test_require_of_a_missing_workspace_names_the_store_and_the_new_command),
	    ws_test(test_require_of_an_existing_workspace_succeeds),
	    ws_test(test_open_without_a_name_uses_kiln_workspace),
	    ws_test(test_open_refuses_a_name_git_cannot_use),
	    ws_test(test_first_commit_creates_the_branch_with_serial_zero),
	    ws_test(test_create_makes_an_empty_state_in_one_commit),
	    ws_test(test_create_refuses_an_existing_workspace),
	    ws_test(test_second_commit_gets_serial_one_on_top_of_the_first),
	    ws_test(test_commit_message_is_the_summary_then_the_kiln_trailers),
	    ws_test(test_extra_trailers_follow_the_kiln_ones),
	    ws_test(test_stored_state_is_the_canonical_text_of_the_document),
	    ws_test(test_reopening_reads_back_the_committed_state),
	    ws_test(test_reopening_refuses_a_state_whose_resources_are_another_provider_s),
	    ws_test(test_commit_on_a_moved_head_fails_naming_both_commits),
	    ws_test(test_racing_first_commits_keep_the_winner),
	    ws_test(test_open_of_a_corrupt_state_names_the_workspace_and_commit),
	    ws_test(test_open_of_a_newer_format_names_the_workspace_and_commit),
	    ws_test(test_open_of_a_state_missing_a_key_names_the_workspace_and_commit),
	    ws_test(test_lock_rereads_a_head_that_moved_since_open),
	    ws_test(test_commit_after_lock_builds_on_the_moved_head),
	    ws_test(test_close_releases_the_lock),
	    ws_test(test_takeover_of_a_stale_lock_is_recorded_in_the_next_commit),
	    ws_test(test_commit_after_the_lock_was_taken_is_refused),
	    ws_test(test_delete_of_a_moved_branch_deletes_nothing),
	    ws_test(test_delete_of_the_head_removes_the_branch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
