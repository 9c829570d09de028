/*
 * test_lock.c - leased workspace locks: taking, refusing, stale leases,
 * takeover, force-unlock, renewal and losing a lock.
 *
 * Every test runs in a fresh temporary directory holding a local state
 * repository, removed at the end. Lease and renewal periods come from
 * KILN_LOCK_LEASE and KILN_LOCK_RENEW, so the renewal tests take seconds.
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
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "lock.h"
#include "store.h"

#define WS "default"
#define LOCK_REF "refs/kiln/locks/" WS
#define STALE_ID "0badc0de-0000-4000-8000-000000000001"

struct fx {
	char dir[64];
	char cwd[PATH_MAX];
	char *path; /* the state repository */
	struct store *s;
	struct store *other;		/* a second handle: another process */
	struct store *remote, *m1, *m2; /* see remote_open */
	struct lock *lock;		/* released before any store is freed */
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {{0}};

	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	unsetenv("KILN_STATE");
	unsetenv("KILN_WORKSPACE");
	unsetenv("KILN_STATE_KEY");
	unsetenv("KILN_LOCK_LEASE");
	unsetenv("KILN_LOCK_RENEW");
	unsetenv("KILN_TEST_LOCK_HOLD");
	strcpy(f->dir, "/tmp/kiln-test-lock-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0) {
		free(f);
		return -1;
	}
	f->path = xasprintf("%s/state.git", f->dir);
	if (store_open(&f->s, f->path, &err) < 0 || store_open(&f->other, f->path, &err) < 0) {
		print_error("store_open: %s\n", err.msg);
		*state = f;
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int rc = 0;

	lock_release(f->lock, NULL);
	store_free(f->m1);
	store_free(f->m2);
	store_free(f->remote);
	store_free(f->other);
	store_free(f->s);
	if (chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f->path);
	free(f);
	return rc;
}

#define lock_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("expected \"%s\" in: %s", part, text);
}

static void acquire(struct fx *f, const char *operation, int64_t timeout)
{
	struct kiln_error err = {{0}};
	struct lock_options opts = {operation, timeout};

	if (lock_acquire(&f->lock, f->s, WS, &opts, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
}

/* Release the fixture's lock, expecting rc. */
static void release(struct fx *f, int want, struct kiln_error *err)
{
	int rc = lock_release(f->lock, err);

	f->lock = NULL;
	if (rc != want)
		fail_msg("lock_release gave %d, expected %d: %s", rc, want, err->msg);
}

static git_oid lock_oid(struct store *s)
{
	struct kiln_error err = {{0}};
	git_oid oid;

	if (store_ref_read(s, LOCK_REF, &oid, &err) != 0)
		fail_msg("no lock ref: %s", err.msg);
	return oid;
}

static void read_lock(struct store *s, struct lock_info *info, git_oid *oid)
{
	struct kiln_error err = {{0}};
	int rc = lock_read(s, WS, info, oid, &err);

	if (rc != 0)
		fail_msg("lock_read gave %d: %s", rc, err.msg);
}

/* A lock commit (no file, the record as its message) that no ref points at yet. */
static git_oid lock_commit(struct store *s, const char *message)
{
	struct kiln_error err = {{0}};
	git_oid oid;

	if (store_commit_file(s, NULL, NULL, "", 0, message, &oid, &err) < 0)
		fail_msg("writing a lock commit: %s", err.msg);
	return oid;
}

/* A lock commit with this message, as the lock ref (which must be absent). */
static git_oid plant_lock_message(struct store *s, const char *message)
{
	struct kiln_error err = {{0}};
	git_oid oid = lock_commit(s, message);

	if (store_ref_create(s, LOCK_REF, &oid, &err) != 0)
		fail_msg("planting a lock: %s", err.msg);
	return oid;
}

/* A lock record as kiln writes it, held by a ghost, created and expiring at these times. */
static char *lock_record(const char *id, int64_t created, int64_t expires)
{
	char c[32], e[32];
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s}", "id", id, "holder",
			      "ghost@ci-runner-7", "pid", (json_int_t)4242, "operation", "apply",
			      "workspace", WS, "created", timefmt_time_format_rfc3339(created, c),
			      "expires", timefmt_time_format_rfc3339(expires, e));
	char *body = json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2));

	json_decref(o);
	return body;
}

static git_oid plant_lock(struct store *s, const char *id, int64_t created, int64_t expires)
{
	char *body = lock_record(id, created, expires);
	git_oid oid = plant_lock_message(s, body);

	free(body);
	return oid;
}

/* A lock whose holder died ten minutes ago; its lease ran out five minutes ago. */
static git_oid plant_stale_lock(struct store *s)
{
	int64_t now = (int64_t)time(NULL);

	return plant_lock(s, STALE_ID, now - 600, now - 300);
}

/* A lock whose holder is alive, renewing it for another two minutes. */
static git_oid plant_live_lock(struct store *s)
{
	int64_t now = (int64_t)time(NULL);

	return plant_lock(s, STALE_ID, now - 10, now + 120);
}

static git_oid parent_of(struct store *s, const git_oid *oid)
{
	git_commit *c = NULL;
	git_oid parent;

	if (git_commit_lookup(&c, store_repo(s), oid) != 0)
		fail_msg("no commit: %s", store_git_error());
	if (git_commit_parentcount(c) != 1) {
		git_commit_free(c);
		fail_msg("a lock commit without exactly one parent");
	}
	git_oid_cpy(&parent, git_commit_parent_id(c, 0));
	git_commit_free(c);
	return parent;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* ---- taking and releasing ---- */

static void test_acquire_of_a_free_workspace_records_the_holder(void **state)
{
	struct fx *f = *state;
	struct lock_info info;
	git_oid oid;

	acquire(f, "state push", 0);
	read_lock(f->other, &info, &oid);
	assert_string_equal(info.id, lock_id(f->lock));
	assert_non_null(strchr(info.holder, '@'));
	assert_string_equal(info.operation, "state push");
	assert_string_equal(info.workspace, WS);
	assert_int_equal(info.pid, (long)getpid());
	assert_int_equal(info.expires - info.created, LOCK_LEASE_DEFAULT);
	assert_false(lock_info_expired(&info));
	assert_null(lock_takeover_note(f->lock));
	lock_info_release(&info);
}

static void test_release_removes_the_lock_ref(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_info info;
	git_oid oid;

	acquire(f, "apply", 0);
	release(f, 0, &err);
	assert_int_equal(lock_read(f->other, WS, &info, &oid, &err), 1);
	assert_int_equal(store_ref_read(f->other, LOCK_REF, &oid, &err), 1);
}

static void test_release_of_null_is_a_no_op(void **state)
{
	(void)state;
	assert_int_equal(lock_release(NULL, NULL), 0);
}

static void test_held_lock_is_refused_naming_holder_operation_and_since(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"destroy", 0};
	struct lock *second = (struct lock *)1;
	struct lock_info info;
	git_oid before, after;
	char since[32];

	acquire(f, "apply", 0);
	read_lock(f->s, &info, &before);
	assert_int_equal(lock_acquire(&second, f->other, WS, &opts, &err), -1);
	assert_null(second);
	assert_contains(err.msg, "workspace 'default' is locked by");
	assert_contains(err.msg, info.holder);
	assert_contains(err.msg, "for 'apply'");
	assert_contains(err.msg, "since");
	assert_contains(err.msg, timefmt_time_format_rfc3339(info.created, since));
	assert_contains(err.msg, info.id);
	assert_contains(err.hint, "--lock-timeout");
	after = lock_oid(f->other);
	assert_true(git_oid_equal(&before, &after));
	lock_info_release(&info);
}

static void test_held_lock_is_still_ours_after_a_refused_acquire(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"destroy", 0};
	struct lock *second = NULL;

	acquire(f, "apply", 0);
	assert_int_equal(lock_acquire(&second, f->other, WS, &opts, &err), -1);
	assert_false(lock_lost(f->lock, &err));
	release(f, 0, &err);
}

/* ---- stale leases ---- */

static void test_expired_lock_is_reported_as_stale_with_the_force_unlock_hint(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 0};
	struct lock *l = NULL;
	git_oid stale = plant_stale_lock(f->other), now;

	assert_int_equal(lock_acquire(&l, f->s, WS, &opts, &err), -1);
	assert_null(l);
	assert_contains(err.msg, "ghost@ci-runner-7 (pid 4242) for 'apply'");
	assert_contains(err.msg, "lease expired");
	assert_contains(err.msg, "the lock is stale");
	assert_contains(err.hint, "kiln force-unlock " STALE_ID " -w default");
	assert_contains(err.hint, "--lock-timeout");
	now = lock_oid(f->s);
	assert_true(git_oid_equal(&now, &stale));
}

static void test_expired_lock_is_taken_over_when_waiting_is_allowed(void **state)
{
	struct fx *f = *state;
	struct lock_info info;
	git_oid stale = plant_stale_lock(f->other), now, parent;

	acquire(f, "apply", 5);
	assert_non_null(lock_takeover_note(f->lock));
	assert_contains(lock_takeover_note(f->lock), "Kiln-Lock-Takeover: " STALE_ID);
	assert_contains(lock_takeover_note(f->lock), "ghost@ci-runner-7");
	read_lock(f->other, &info, &now);
	assert_string_equal(info.id, lock_id(f->lock));
	/* The takeover builds on the stale lock, so a remote sees a fast-forward. */
	parent = parent_of(f->other, &now);
	assert_true(git_oid_equal(&parent, &stale));
	lock_info_release(&info);
}

/*
 * A first apply records the lineage its resources carry in its lock; one
 * that takes over its dead lock keeps that lineage, not its own candidate.
 */
static void test_takeover_of_a_first_apply_s_lock_keeps_its_lineage(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 5, "11111111-2222-4333-8444-555555555555"};
	struct lock_info info;
	git_oid now;
	int64_t t = (int64_t)time(NULL);
	char *body = lock_record(STALE_ID, t - 600, t - 300);
	json_t *o = json_loads(body, 0, NULL);

	json_object_set_new(o, "lineage", json_string("dead0000-0000-4000-8000-000000000000"));
	free(body);
	body = json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2));
	json_decref(o);
	plant_lock_message(f->other, body);
	free(body);
	if (lock_acquire(&f->lock, f->s, WS, &opts, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
	assert_string_equal(lock_lineage(f->lock), "dead0000-0000-4000-8000-000000000000");
	read_lock(f->other, &info, &now);
	assert_string_equal(info.lineage, "dead0000-0000-4000-8000-000000000000");
	lock_info_release(&info);
}

/* A lock taken where there was none records the candidate it was given. */
static void test_first_apply_s_lock_records_its_lineage(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 0, "11111111-2222-4333-8444-555555555555"};
	struct lock_info info;
	git_oid now;

	if (lock_acquire(&f->lock, f->s, WS, &opts, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
	assert_string_equal(lock_lineage(f->lock), "11111111-2222-4333-8444-555555555555");
	read_lock(f->other, &info, &now);
	assert_string_equal(info.lineage, "11111111-2222-4333-8444-555555555555");
	lock_info_release(&info);
}

static void test_live_lock_is_not_taken_over_while_waiting(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 1};
	struct lock *l = NULL;
	git_oid live = plant_live_lock(f->other), now;

	assert_int_equal(lock_acquire(&l, f->s, WS, &opts, &err), -1);
	assert_null(l);
	assert_contains(err.msg, "is locked by ghost@ci-runner-7");
	now = lock_oid(f->s);
	assert_true(git_oid_equal(&now, &live));
}

static void test_malformed_lock_record_is_named_as_not_kiln_s(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_info info;
	git_oid oid;

	plant_lock_message(f->other, "locked by hand\n");
	assert_int_equal(lock_read(f->s, WS, &info, &oid, &err), LOCK_MALFORMED);
	assert_contains(err.msg, "not a record kiln wrote");
	assert_contains(err.hint, "force-unlock --force");
}

/* STYLE.md: every error names what and where; lock_read knows the workspace. */
static void test_malformed_lock_record_error_names_the_workspace(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_info info;
	git_oid oid;

	plant_lock_message(f->other, "locked by hand\n");
	assert_int_equal(lock_read(f->s, WS, &info, &oid, &err), LOCK_MALFORMED);
	if (!strstr(err.msg, "'" WS "'") && !strstr(err.hint, LOCK_REF))
		fail_msg("neither names workspace '%s':\n  %s\n  hint: %s", WS, err.msg, err.hint);
}

static void test_acquire_over_a_malformed_lock_says_it_is_not_kiln_s(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 0};
	struct lock *l = NULL;
	git_oid planted = plant_lock_message(f->other, "{\"id\": 7}"), now;

	assert_int_equal(lock_acquire(&l, f->s, WS, &opts, &err), -1);
	assert_null(l);
	assert_contains(err.msg, "not a record kiln wrote");
	now = lock_oid(f->s);
	assert_true(git_oid_equal(&now, &planted));
}

/* ---- force-unlock ---- */

static void test_force_unlock_refuses_a_wrong_id_without_giving_the_right_one(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid stale = plant_stale_lock(f->other), now;

	assert_int_equal(lock_force_unlock(f->s, WS, "not-the-id", true, &err), -1);
	assert_contains(err.msg, "'not-the-id' is not that lock's id");
	assert_contains(err.msg, "ghost@ci-runner-7");
	/* Handing out the id would defeat the check that the lock is the one meant. */
	assert_null(strstr(err.hint, STALE_ID));
	assert_contains(err.hint, "kiln workspace list");
	now = lock_oid(f->s);
	assert_true(git_oid_equal(&now, &stale));
}

static void test_force_unlock_refuses_a_live_lease_without_force(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid live = plant_live_lock(f->other), now;

	assert_int_equal(lock_force_unlock(f->s, WS, STALE_ID, false, &err), -1);
	assert_contains(err.msg, "is live");
	assert_contains(err.msg, "ghost@ci-runner-7");
	assert_contains(err.hint, "--force");
	now = lock_oid(f->s);
	assert_true(git_oid_equal(&now, &live));
}

static void test_force_unlock_with_force_removes_a_live_lease(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid oid;

	plant_live_lock(f->other);
	assert_int_equal(lock_force_unlock(f->s, WS, STALE_ID, true, &err), 0);
	assert_int_equal(store_ref_read(f->s, LOCK_REF, &oid, &err), 1);
}

static void test_force_unlock_removes_a_stale_lock_without_force(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid oid;

	plant_stale_lock(f->other);
	assert_int_equal(lock_force_unlock(f->s, WS, STALE_ID, false, &err), 0);
	assert_int_equal(store_ref_read(f->s, LOCK_REF, &oid, &err), 1);
}

/*
 * The "not one kiln wrote" error's hint promises that force-unlock --force
 * removes such a lock. A malformed record has no lock id, so the id it can be
 * named by is its commit's.
 */
static void test_force_unlock_with_force_removes_a_malformed_lock(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid planted = plant_lock_message(f->other, "locked by hand\n"), oid;
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), &planted);
	if (lock_force_unlock(f->s, WS, hex, true, &err) != 0)
		fail_msg("force-unlock --force %s: %s (hint: %s)", hex, err.msg, err.hint);
	assert_int_equal(store_ref_read(f->s, LOCK_REF, &oid, &err), 1);
}

static void test_force_unlock_of_an_unlocked_workspace_says_so(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	assert_int_equal(lock_force_unlock(f->s, WS, STALE_ID, true, &err), -1);
	assert_string_equal(err.msg, "workspace 'default' is not locked");
}

/* ---- renewal ---- */

static void test_held_lock_is_renewed_before_its_lease_runs_out(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_info first, later;
	git_oid first_oid, later_oid, walk;
	int steps;

	setenv("KILN_LOCK_LEASE", "3s", 1);
	setenv("KILN_LOCK_RENEW", "1s", 1);
	acquire(f, "apply", 0);
	read_lock(f->other, &first, &first_oid);
	assert_int_equal(first.expires - first.created, 3);
	sleep_ms(4000);
	read_lock(f->other, &later, &later_oid);
	assert_false(git_oid_equal(&later_oid, &first_oid));
	assert_string_equal(later.id, first.id);
	assert_true(later.expires > first.expires);
	assert_false(lock_info_expired(&later));
	/* Each renewal is a commit on top of the last: the first lock is an ancestor. */
	walk = later_oid;
	for (steps = 0; steps < 10 && !git_oid_equal(&walk, &first_oid); steps++)
		walk = parent_of(f->other, &walk);
	assert_true(git_oid_equal(&walk, &first_oid));
	assert_true(steps >= 2);
	assert_false(lock_lost(f->lock, &err));
	lock_info_release(&first);
	lock_info_release(&later);
	release(f, 0, &err);
}

static void test_lock_replaced_behind_its_back_is_lost(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	int64_t now = (int64_t)time(NULL);
	char *record = lock_record("5ca1ab1e-0000-4000-8000-000000000002", now, now + 120);
	git_oid cur, theirs, after;
	int rc = -1, tries;

	setenv("KILN_LOCK_LEASE", "3s", 1);
	setenv("KILN_LOCK_RENEW", "1s", 1);
	acquire(f, "apply", 0);
	theirs = lock_commit(f->other, record);
	free(record);
	/* The renewer may move the ref between our read and our update: retry. */
	for (tries = 0; tries < 10; tries++) {
		cur = lock_oid(f->other);
		rc = store_ref_update(f->other, LOCK_REF, &cur, &theirs, &err);
		if (rc == 0)
			break;
		assert_int_equal(rc, STORE_MOVED);
	}
	assert_int_equal(rc, 0);
	sleep_ms(2500);
	assert_true(lock_lost(f->lock, &err));
	assert_contains(err.msg, "removed or taken over");
	memset(&err, 0, sizeof(err));
	assert_int_equal(lock_verify(f->lock, &err), -1);
	assert_contains(err.msg, "nothing was written");
	/* A lost lock is not ours: releasing it succeeds without touching the new holder's. */
	release(f, 0, &err);
	after = lock_oid(f->other);
	assert_true(git_oid_equal(&after, &theirs));
}

/* Before a purchase: the lease renewed at once, as a commit on our own lock commit. */
static void test_renew_check_of_a_held_lock_renews_it_on_its_own_record(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid before, after, parent;

	acquire(f, "apply", 0);
	before = lock_oid(f->other);
	assert_int_equal(lock_renew_check(f->lock, &err), 0);
	after = lock_oid(f->other);
	assert_false(git_oid_equal(&before, &after));
	parent = parent_of(f->other, &after);
	assert_true(git_oid_equal(&parent, &before));
}

/* A run paused past its lease whose lock was taken over learns it before it buys. */
static void test_renew_check_of_a_lock_taken_over_fails_naming_the_new_holder(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	int64_t now = (int64_t)time(NULL);
	char *record = lock_record("5ca1ab1e-0000-4000-8000-000000000003", now, now + 120);
	git_oid cur, theirs, after;

	acquire(f, "apply", 0);
	theirs = lock_commit(f->other, record);
	free(record);
	cur = lock_oid(f->other);
	assert_int_equal(store_ref_update(f->other, LOCK_REF, &cur, &theirs, &err), 0);
	assert_int_equal(lock_renew_check(f->lock, &err), -1);
	assert_contains(err.msg, "the lock on workspace '" WS "' was removed or taken over while "
				 "this run held it: ghost@ci-runner-7 (pid 4242) for 'apply' since ");
	assert_contains(err.msg, ", lock 5ca1ab1e-0000-4000-8000-000000000003 holds it now");
	assert_true(lock_lost(f->lock, NULL));
	after = lock_oid(f->other);
	assert_true(git_oid_equal(&after, &theirs));
	release(f, 0, &err);
}

static void test_lock_removed_behind_its_back_makes_release_fail(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	git_oid cur;

	acquire(f, "apply", 0);
	cur = lock_oid(f->other);
	assert_int_equal(store_ref_delete(f->other, LOCK_REF, &cur, &err), 0);
	release(f, -1, &err);
	assert_contains(err.msg, "no longer ours to release");
}

/* ---- a file:// remote decides ---- */

/*
 * A bare remote.git in the test's directory (a local store creates it), m1
 * opened on its URL from the test's directory, and m2, another machine with
 * its own cache, opened from a directory of its own.
 */
static void remote_open(struct fx *f)
{
	struct kiln_error err = {{0}};
	char *path = xasprintf("%s/remote.git", f->dir);
	char *url = xasprintf("file://%s", path);
	char *m2dir = xasprintf("%s/m2", f->dir);
	int rc;

	rc = store_open(&f->remote, path, &err);
	if (rc == 0 && (mkdir(m2dir, 0755) != 0 || chdir(m2dir) != 0))
		rc = -1;
	if (rc == 0)
		rc = store_open(&f->m2, url, &err);
	/* Back home before m1 opens: its renewer reopens the URL from here. */
	if (chdir(f->dir) != 0)
		rc = -1;
	if (rc == 0)
		rc = store_open(&f->m1, url, &err);
	free(path);
	free(url);
	free(m2dir);
	if (rc < 0)
		fail_msg("opening the remote: %s", err.msg);
}

static void test_lock_on_a_remote_is_held_there(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 0};
	struct lock_info info;
	git_oid oid;

	remote_open(f);
	if (lock_acquire(&f->lock, f->m1, WS, &opts, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
	read_lock(f->remote, &info, &oid);
	assert_string_equal(info.id, lock_id(f->lock));
	lock_info_release(&info);
}

static void test_lock_on_a_remote_is_refused_to_another_machine(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options op1 = {"apply", 0}, op2 = {"destroy", 0};
	struct lock *second = NULL;

	remote_open(f);
	if (lock_acquire(&f->lock, f->m1, WS, &op1, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
	assert_int_equal(lock_acquire(&second, f->m2, WS, &op2, &err), -1);
	assert_null(second);
	assert_contains(err.msg, "is locked by");
	assert_contains(err.msg, "for 'apply'");
	assert_contains(err.msg, lock_id(f->lock));
}

static void test_renewal_on_a_remote_pushes_the_new_lease(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 0};
	struct lock_info first, later;
	git_oid first_oid, later_oid;

	setenv("KILN_LOCK_LEASE", "3s", 1);
	setenv("KILN_LOCK_RENEW", "1s", 1);
	remote_open(f);
	if (lock_acquire(&f->lock, f->m1, WS, &opts, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
	read_lock(f->remote, &first, &first_oid);
	sleep_ms(3500);
	read_lock(f->remote, &later, &later_oid);
	assert_false(git_oid_equal(&later_oid, &first_oid));
	assert_true(later.expires > first.expires);
	lock_info_release(&first);
	lock_info_release(&later);
	assert_false(lock_lost(f->lock, &err));
	release(f, 0, &err);
	assert_int_equal(store_ref_read(f->remote, LOCK_REF, &later_oid, &err), 1);
}

static void test_release_on_a_remote_removes_the_lock_there(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct lock_options opts = {"apply", 0};
	git_oid oid;

	remote_open(f);
	if (lock_acquire(&f->lock, f->m1, WS, &opts, &err) < 0)
		fail_msg("lock_acquire: %s", err.msg);
	release(f, 0, &err);
	assert_int_equal(store_ref_read(f->remote, LOCK_REF, &oid, &err), 1);
}

/* ---- descriptions ---- */

static void test_time_format_is_iso_8601_utc(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(timefmt_time_format_rfc3339(0, buf), "1970-01-01T00:00:00Z");
	assert_string_equal(timefmt_time_format_rfc3339(1795986000, buf), "2026-11-29T21:00:00Z");
}

static void test_describe_names_holder_pid_operation_since_and_id(void **state)
{
	struct lock_info info = {.id = "abc",
				 .holder = "me@host",
				 .pid = 42,
				 .operation = "state push",
				 .workspace = "default",
				 .created = 1795986000,
				 .expires = 1795986120};
	char *s = lock_info_describe(&info);

	(void)state;
	assert_string_equal(s, "me@host (pid 42) for 'state push' since 2026-11-29T21:00:00Z, "
			       "lock abc");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    lock_test(test_acquire_of_a_free_workspace_records_the_holder),
	    lock_test(test_release_removes_the_lock_ref),
	    cmocka_unit_test(test_release_of_null_is_a_no_op),
	    lock_test(test_held_lock_is_refused_naming_holder_operation_and_since),
	    lock_test(test_held_lock_is_still_ours_after_a_refused_acquire),
	    lock_test(test_expired_lock_is_reported_as_stale_with_the_force_unlock_hint),
	    lock_test(test_expired_lock_is_taken_over_when_waiting_is_allowed),
	    lock_test(test_takeover_of_a_first_apply_s_lock_keeps_its_lineage),
	    lock_test(test_first_apply_s_lock_records_its_lineage),
	    lock_test(test_live_lock_is_not_taken_over_while_waiting),
	    lock_test(test_malformed_lock_record_is_named_as_not_kiln_s),
	    lock_test(test_malformed_lock_record_error_names_the_workspace),
	    lock_test(test_acquire_over_a_malformed_lock_says_it_is_not_kiln_s),
	    lock_test(test_force_unlock_refuses_a_wrong_id_without_giving_the_right_one),
	    lock_test(test_force_unlock_refuses_a_live_lease_without_force),
	    lock_test(test_force_unlock_with_force_removes_a_live_lease),
	    lock_test(test_force_unlock_removes_a_stale_lock_without_force),
	    lock_test(test_force_unlock_with_force_removes_a_malformed_lock),
	    lock_test(test_force_unlock_of_an_unlocked_workspace_says_so),
	    lock_test(test_held_lock_is_renewed_before_its_lease_runs_out),
	    lock_test(test_lock_replaced_behind_its_back_is_lost),
	    lock_test(test_lock_removed_behind_its_back_makes_release_fail),
	    lock_test(test_renew_check_of_a_held_lock_renews_it_on_its_own_record),
	    lock_test(test_renew_check_of_a_lock_taken_over_fails_naming_the_new_holder),
	    lock_test(test_lock_on_a_remote_is_held_there),
	    lock_test(test_lock_on_a_remote_is_refused_to_another_machine),
	    lock_test(test_renewal_on_a_remote_pushes_the_new_lease),
	    lock_test(test_release_on_a_remote_removes_the_lock_there),
	    cmocka_unit_test(test_time_format_is_iso_8601_utc),
	    cmocka_unit_test(test_describe_names_holder_pid_operation_since_and_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
