/*
 * test_store.c - the state repository: opening, commits, compare-and-swap refs,
 * names, and a file:// remote mirrored into a per-machine cache.
 *
 * Every test runs in a fresh temporary directory (also the working directory,
 * since a remote's cache lives under .kiln/cache/ there), removed at the end.
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
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

#define MAX_STORES 4

struct fx {
	char dir[64];
	char cwd[PATH_MAX];
	struct store *stores[MAX_STORES];
	git_repository *remote;
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	unsetenv("KILN_STATE");
	unsetenv("KILN_WORKSPACE");
	unsetenv("KILN_STATE_KEY");
	strcpy(f->dir, "/tmp/kiln-test-store-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int i, rc = 0;

	for (i = MAX_STORES - 1; i >= 0; i--)
		store_free(f->stores[i]);
	git_repository_free(f->remote);
	if (chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f);
	return rc;
}

#define store_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* A path inside the test's directory; caller frees. */
static char *path_in(const struct fx *f, const char *name)
{
	return xasprintf("%s/%s", f->dir, name);
}

/* Open location into the fixture's slot i (freed by the teardown). */
static struct store *open_at(struct fx *f, int i, const char *location)
{
	struct kiln_error err = {{0}};

	if (store_open(&f->stores[i], location, &err) < 0)
		fail_msg("store_open %s: %s", location, err.msg);
	return f->stores[i];
}

/* The local store state.git in the test's directory, in slot 0. */
static struct store *open_local(struct fx *f)
{
	char *p = path_in(f, "state.git");
	struct store *s = open_at(f, 0, p);

	free(p);
	return s;
}

static git_oid commit_text(struct store *s, const git_oid *parent, const char *content,
			   const char *message)
{
	struct kiln_error err = {{0}};
	git_oid oid;

	if (store_commit_file(s, parent, STORE_STATE_FILE, content, strlen(content), message, &oid,
			      &err) < 0)
		fail_msg("store_commit_file: %s", err.msg);
	return oid;
}

static void create_ref(struct store *s, const char *ref, const git_oid *oid)
{
	struct kiln_error err = {{0}};
	int rc = store_ref_create(s, ref, oid, &err);

	if (rc != 0)
		fail_msg("store_ref_create %s: %d %s", ref, rc, err.msg);
}

static void assert_ref_is(struct store *s, const char *ref, const git_oid *want)
{
	struct kiln_error err = {{0}};
	git_oid got;
	int rc = store_ref_read(s, ref, &got, &err);
	char a[8], b[8];

	if (rc != 0)
		fail_msg("%s: expected %s, store_ref_read gave %d %s", ref, store_short(want, a),
			 rc, err.msg);
	if (!git_oid_equal(&got, want))
		fail_msg("%s: expected %s, found %s", ref, store_short(want, a),
			 store_short(&got, b));
}

static void assert_ref_absent(struct store *s, const char *ref)
{
	struct kiln_error err = {{0}};
	git_oid got;

	assert_int_equal(store_ref_read(s, ref, &got, &err), 1);
}

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("expected \"%s\" in: %s", part, text);
}

/* ---- opening ---- */

static void test_open_creates_a_bare_repository_at_a_new_path(void **state)
{
	struct fx *f = *state;
	char *p = path_in(f, "nested/dir/state.git");
	struct store *s = open_at(f, 0, p);

	assert_true(git_repository_is_bare(store_repo(s)));
	assert_false(store_is_remote(s));
	assert_string_equal(store_location(s), p);
	free(p);
}

static void test_open_reopens_an_existing_repository(void **state)
{
	struct fx *f = *state;
	char *p = path_in(f, "state.git");
	struct store *s = open_at(f, 0, p);
	git_oid c = commit_text(s, NULL, "{}\n", "first");

	create_ref(s, "refs/heads/default", &c);
	store_free(s);
	f->stores[0] = NULL;
	s = open_at(f, 0, p);
	assert_true(git_repository_is_bare(store_repo(s)));
	assert_ref_is(s, "refs/heads/default", &c);
	free(p);
}

static void test_open_of_a_plain_file_says_it_is_not_a_git_repository(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *p = path_in(f, "plain");
	char *want =
	    xasprintf("the state repository %s cannot be opened as a bare git repository", p);
	struct store *s = (struct store *)1;
	FILE *fp = fopen(p, "w");

	assert_non_null(fp);
	fputs("not a repository\n", fp);
	fclose(fp);
	assert_int_equal(store_open(&s, p, &err), -1);
	assert_null(s);
	assert_contains(err.msg, want);
	/* Never "remove it": the path may hold someone's state. */
	assert_null(strstr(err.hint, "remove"));
	free(want);
	free(p);
}

static void test_open_without_a_location_uses_kiln_state(void **state)
{
	struct fx *f = *state;
	char *p = path_in(f, "from-env.git");
	struct store *s;

	setenv("KILN_STATE", p, 1);
	s = open_at(f, 0, NULL);
	unsetenv("KILN_STATE");
	assert_string_equal(store_location(s), p);
	assert_true(git_repository_is_bare(store_repo(s)));
	free(p);
}

/* ---- commits and refs ---- */

static void test_committed_file_reads_back_through_a_created_ref(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	const char *content = "{\n  \"serial\": 0\n}\n";
	git_oid c = commit_text(s, NULL, content, "first"), head;
	char *text = NULL;
	size_t len = 0;

	create_ref(s, "refs/heads/default", &c);
	assert_int_equal(store_ref_read(s, "refs/heads/default", &head, &err), 0);
	assert_true(git_oid_equal(&head, &c));
	assert_int_equal(store_read_file(s, &head, STORE_STATE_FILE, &text, &len, &err), 0);
	assert_int_equal(len, strlen(content));
	assert_string_equal(text, content);
	free(text);
}

static void test_read_file_of_a_missing_name_names_the_commit(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, "{}\n", "first");
	char *text = NULL, sh[8];
	size_t len = 0;

	assert_int_equal(store_read_file(s, &c, "other.json", &text, &len, &err), -1);
	assert_null(text);
	assert_contains(err.msg, store_short(&c, sh));
	assert_contains(err.msg, "has no other.json");
}

static void test_create_of_an_existing_ref_reports_exists_and_keeps_it(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid first = commit_text(s, NULL, "{\"n\": 1}\n", "first");
	git_oid second = commit_text(s, NULL, "{\"n\": 2}\n", "second");

	create_ref(s, "refs/heads/default", &first);
	assert_int_equal(store_ref_create(s, "refs/heads/default", &second, &err), STORE_EXISTS);
	assert_ref_is(s, "refs/heads/default", &first);
}

static void test_update_from_the_expected_value_moves_the_ref(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid first = commit_text(s, NULL, "{\"n\": 1}\n", "first");
	git_oid second = commit_text(s, &first, "{\"n\": 2}\n", "second");

	create_ref(s, "refs/heads/default", &first);
	assert_int_equal(store_ref_update(s, "refs/heads/default", &first, &second, &err), 0);
	assert_ref_is(s, "refs/heads/default", &second);
}

static void test_update_from_a_stale_value_reports_moved_and_keeps_the_ref(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid first = commit_text(s, NULL, "{\"n\": 1}\n", "first");
	git_oid second = commit_text(s, &first, "{\"n\": 2}\n", "second");
	git_oid third = commit_text(s, &first, "{\"n\": 3}\n", "third");

	create_ref(s, "refs/heads/default", &first);
	assert_int_equal(store_ref_update(s, "refs/heads/default", &first, &second, &err), 0);
	/* A second writer that also started from first. */
	assert_int_equal(store_ref_update(s, "refs/heads/default", &first, &third, &err),
			 STORE_MOVED);
	assert_ref_is(s, "refs/heads/default", &second);
}

static void test_update_of_an_absent_ref_reports_moved_and_creates_nothing(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid first = commit_text(s, NULL, "{\"n\": 1}\n", "first");
	git_oid second = commit_text(s, &first, "{\"n\": 2}\n", "second");

	assert_int_equal(store_ref_update(s, "refs/heads/default", &first, &second, &err),
			 STORE_MOVED);
	assert_ref_absent(s, "refs/heads/default");
}

static void test_delete_from_a_stale_value_reports_moved_and_keeps_the_ref(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid first = commit_text(s, NULL, "{\"n\": 1}\n", "first");
	git_oid second = commit_text(s, &first, "{\"n\": 2}\n", "second");

	create_ref(s, "refs/heads/default", &second);
	assert_int_equal(store_ref_delete(s, "refs/heads/default", &first, &err), STORE_MOVED);
	assert_ref_is(s, "refs/heads/default", &second);
}

static void test_delete_from_the_expected_value_removes_the_ref(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid first = commit_text(s, NULL, "{\"n\": 1}\n", "first");

	create_ref(s, "refs/heads/default", &first);
	assert_int_equal(store_ref_delete(s, "refs/heads/default", &first, &err), 0);
	assert_ref_absent(s, "refs/heads/default");
}

static void test_ref_list_gives_sorted_names_under_the_prefix_only(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, "{}\n", "first");
	char **names = NULL;
	size_t n = 0;

	create_ref(s, "refs/heads/zeta", &c);
	create_ref(s, "refs/heads/alpha", &c);
	create_ref(s, "refs/heads/mid", &c);
	create_ref(s, "refs/kiln/locks/alpha", &c);
	assert_int_equal(store_ref_list(s, "refs/heads/", &names, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "alpha");
	assert_string_equal(names[1], "mid");
	assert_string_equal(names[2], "zeta");
	store_names_free(names, n);
}

static void test_ref_list_of_an_empty_store_is_empty(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	char **names = (char **)1;
	size_t n = 7;

	assert_int_equal(store_ref_list(s, "refs/heads/", &names, &n, &err), 0);
	assert_int_equal(n, 0);
	store_names_free(names, n);
}

/* ---- who, which commit, which names ---- */

static void test_signature_comes_from_kiln_author(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_signature *sig = NULL;

	setenv("KILN_AUTHOR", "Ada Lovelace <ada@example.org>", 1);
	assert_int_equal(store_signature(s, &sig, &err), 0);
	assert_string_equal(sig->name, "Ada Lovelace");
	assert_string_equal(sig->email, "ada@example.org");
	git_signature_free(sig);
}

static void test_commit_is_authored_by_kiln_author(void **state)
{
	struct fx *f = *state;
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, "{}\n", "first");
	git_commit *commit = NULL;

	assert_int_equal(git_commit_lookup(&commit, store_repo(s), &c), 0);
	assert_string_equal(git_commit_author(commit)->name, "Test");
	assert_string_equal(git_commit_author(commit)->email, "test@example.com");
	assert_string_equal(git_commit_message(commit), "first");
	git_commit_free(commit);
}

static void test_resolve_finds_a_commit_by_abbreviated_id(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, "{}\n", "first"), got;
	char sh[8];

	assert_int_equal(store_resolve(s, store_short(&c, sh), &got, &err), 0);
	assert_true(git_oid_equal(&got, &c));
}

static void test_resolve_of_an_unknown_id_names_it_and_the_store(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	char *want = xasprintf("no commit 'deadbee' in %s", store_location(s));
	git_oid got;

	assert_int_equal(store_resolve(s, "deadbee", &got, &err), -1);
	assert_string_equal(err.msg, want);
	assert_contains(err.hint, "kiln log");
	free(want);
}

static void test_workspace_names_accept_letters_digits_dot_underscore_dash(void **state)
{
	char max[65];

	(void)state;
	memset(max, 'x', 64);
	max[64] = '\0';
	assert_true(store_workspace_name_ok("default"));
	assert_true(store_workspace_name_ok("ci-1"));
	assert_true(store_workspace_name_ok("feature.x_y"));
	assert_true(store_workspace_name_ok(max));
}

static void test_workspace_names_reject_git_s_own_names_and_commit_ids(void **state)
{
	(void)state;
	assert_false(store_workspace_name_ok("HEAD"));
	assert_false(store_workspace_name_ok("FETCH_HEAD"));
	assert_false(store_workspace_name_ok("ORIG_HEAD"));
	assert_false(store_workspace_name_ok("beef"));
	assert_false(store_workspace_name_ok("1234567"));
	assert_false(store_workspace_name_ok("DEADBEEF"));
	assert_true(store_workspace_name_ok("abc"));
	assert_true(store_workspace_name_ok("prod-1"));
}

static void test_open_refuses_a_repository_with_a_work_tree(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *p = path_in(f, "worktree");
	git_repository *r = NULL;
	struct store *s = (struct store *)1;

	assert_int_equal(git_repository_init(&r, p, 0), 0);
	git_repository_free(r);
	assert_int_equal(store_open(&s, p, &err), -1);
	assert_null(s);
	assert_contains(err.msg, "has a work tree; kiln keeps state in a bare repository");
	free(p);
}

static void test_redacted_urls_hide_credentials(void **state)
{
	char *a = store_redact_url("https://user:ghp_SECRET@example.com/org/state.git");
	char *b = store_redact_url("ssh://git@example.com/state.git");
	char *c = store_redact_url("file:///srv/state.git");
	char *d = store_redact_url("https://example.com/a@b");

	(void)state;
	assert_string_equal(a, "https://***@example.com/org/state.git");
	assert_string_equal(b, "ssh://***@example.com/state.git");
	assert_string_equal(c, "file:///srv/state.git");
	assert_string_equal(d, "https://example.com/a@b");
	free(a);
	free(b);
	free(c);
	free(d);
}

static void test_workspace_names_reject_what_git_or_kiln_cannot_use(void **state)
{
	static const char *const bad[] = {
	    "", ".hidden", "-x", "a..b", "x.lock", "a/b", "a b", "trailing.", "tab\t", "ümlaut",
	};
	char long_name[66];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (store_workspace_name_ok(bad[i]))
			fail_msg("accepted \"%s\"", bad[i]);
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	assert_false(store_workspace_name_ok(long_name));
}

static void test_ref_names_of_a_workspace(void **state)
{
	char *branch = store_branch_ref("ci-1"), *lock = store_lock_ref("ci-1");

	(void)state;
	assert_string_equal(branch, "refs/heads/ci-1");
	assert_string_equal(lock, "refs/kiln/locks/ci-1");
	free(branch);
	free(lock);
}

/*
 * A commit whose tree names state.json as a blob but points it at the empty
 * tree: the blob read fails after the tree read succeeded (written through
 * the object database, since libgit2 refuses to build such a tree).
 */
static git_oid commit_with_bad_blob_entry(struct store *s)
{
	static const char empty_tree[] = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
	git_odb *odb = NULL;
	git_oid target, tree_id, commit_id;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	char raw[64];
	size_t n;

	git_oid_fromstr(&target, empty_tree);
	n = (size_t)snprintf(raw, sizeof(raw), "100644 %s", STORE_STATE_FILE) + 1;
	memcpy(raw + n, target.id, GIT_OID_RAWSZ);
	if (git_repository_odb(&odb, store_repo(s)) != 0 ||
	    git_odb_write(&target, odb, "", 0, GIT_OBJECT_TREE) != 0 ||
	    git_odb_write(&tree_id, odb, raw, n + GIT_OID_RAWSZ, GIT_OBJECT_TREE) != 0 ||
	    git_tree_lookup(&tree, store_repo(s), &tree_id) != 0 ||
	    git_signature_now(&sig, "Test", "test@example.com") != 0 ||
	    git_commit_create_v(&commit_id, store_repo(s), NULL, sig, sig, NULL, "bad entry", tree,
				0) != 0)
		fail_msg("cannot write the commit: %s", store_git_error());
	git_signature_free(sig);
	git_tree_free(tree);
	git_odb_free(odb);
	return commit_id;
}

static void test_read_file_of_an_unreadable_blob_names_the_commit(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_with_bad_blob_entry(s);
	char *text = NULL, sh[8];
	char *want;
	size_t len = 0;

	/* Garbage where the short id belongs, if it was never made. */
	assert_int_equal(store_read_file(s, &c, STORE_STATE_FILE, &text, &len, &err), -1);
	assert_null(text);
	want = xasprintf("cannot read state.json of commit %s in %s: the requested type does "
			 "not match the type in the ODB",
			 store_short(&c, sh), store_location(s));
	assert_string_equal(err.msg, want);
	free(want);
}

/* ---- damaged objects ---- */

/* The loose file of object id in repo; caller frees. */
static char *loose_file(git_repository *repo, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	return xasprintf("%sobjects/%.2s/%s", git_repository_path(repo), hex, hex + 2);
}

/* Cut the loose file of id to size bytes (git writes them read-only). */
static void truncate_object(git_repository *repo, const git_oid *id, off_t size)
{
	char *p = loose_file(repo, id);

	if (chmod(p, 0644) != 0 || truncate(p, size) != 0)
		fail_msg("cannot truncate %s", p);
	free(p);
}

static off_t object_file_size(git_repository *repo, const git_oid *id)
{
	char *p = loose_file(repo, id);
	struct stat st;

	if (stat(p, &st) != 0)
		fail_msg("no loose file %s", p);
	free(p);
	return st.st_size;
}

/* The blob of state.json in commit c. */
static git_oid state_blob(git_repository *repo, const git_oid *c)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_oid id;

	if (git_commit_lookup(&commit, repo, c) != 0 || git_commit_tree(&tree, commit) != 0)
		fail_msg("cannot read the commit: %s", store_git_error());
	git_oid_cpy(&id, git_tree_entry_id(git_tree_entry_byname(tree, STORE_STATE_FILE)));
	git_tree_free(tree);
	git_commit_free(commit);
	return id;
}

/* Close slot 0 and open state.git again: nothing read before is cached. */
static struct store *reopen_local(struct fx *f)
{
	store_free(f->stores[0]);
	f->stores[0] = NULL;
	return open_local(f);
}

/* What the repair hint of a local store says. */
static char *local_hint(struct store *s)
{
	return xasprintf("`git --git-dir=%s fsck` lists every damaged object; restore them from a "
			 "backup or a clone of this repository",
			 store_location(s));
}

static const char big_state[] = "{\n  \"resources\": {\"sim_bucket.data\": {\"type\": "
				"\"sim_bucket\", \"id\": \"b-1\"}},\n  \"serial\": 1\n}\n";

static void test_a_truncated_blob_fails_at_once_naming_it_and_the_repair(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, big_state, "first"), blob;
	char hex[GIT_OID_HEXSZ + 1], *text = NULL, *want, *hint;
	size_t len = 0;
	off_t size;

	blob = state_blob(store_repo(s), &c);
	size = object_file_size(store_repo(s), &blob) - 4; /* its checksum cut off */
	truncate_object(store_repo(s), &blob, size);
	s = reopen_local(f);
	alarm(20); /* libgit2 1.5.1 alone loops forever here */
	assert_int_equal(store_read_file(s, &c, STORE_STATE_FILE, &text, &len, &err), -1);
	alarm(0);
	git_oid_tostr(hex, sizeof(hex), &blob);
	want = xasprintf("the state repository %s is damaged: blob %s (objects/%.2s/%s) is "
			 "truncated: its file ends after %lld bytes, before the end of its "
			 "compressed content (%zu bytes announced)",
			 store_location(s), hex, hex, hex + 2, (long long)size, strlen(big_state));
	hint = local_hint(s);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, hint);
	assert_null(text);
	free(hint);
	free(want);
}

static void test_a_commit_cut_inside_its_header_is_an_object_of_unknown_kind(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, big_state, "first");
	char hex[GIT_OID_HEXSZ + 1], *text = NULL, *want;
	size_t len = 0;

	truncate_object(store_repo(s), &c, 2); /* the zlib header alone */
	s = reopen_local(f);
	alarm(20);
	assert_int_equal(store_read_file(s, &c, STORE_STATE_FILE, &text, &len, &err), -1);
	alarm(0);
	git_oid_tostr(hex, sizeof(hex), &c);
	want = xasprintf("the state repository %s is damaged: object %s (objects/%.2s/%s) is "
			 "truncated: its file ends after 2 bytes, inside the object header",
			 store_location(s), hex, hex, hex + 2);
	assert_string_equal(err.msg, want);
	free(want);
}

static void test_an_object_whose_content_is_another_s_is_damaged(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid a = commit_text(s, NULL, "{\"a\": 1}\n", "a");
	git_oid b = commit_text(s, NULL, "{\"b\": 2}\n", "b");
	git_oid blob_a = state_blob(store_repo(s), &a), blob_b = state_blob(store_repo(s), &b);
	char *from = loose_file(store_repo(s), &blob_a), *to = loose_file(store_repo(s), &blob_b);
	char hex[GIT_OID_HEXSZ + 1], *text = NULL, *want;
	size_t len = 0;

	if (chmod(to, 0644) != 0 || rename(from, to) != 0)
		fail_msg("cannot move %s over %s", from, to);
	s = reopen_local(f);
	assert_int_equal(store_read_file(s, &b, STORE_STATE_FILE, &text, &len, &err), -1);
	git_oid_tostr(hex, sizeof(hex), &blob_b);
	want = xasprintf("the state repository %s is damaged: blob %s (objects/%.2s/%s) holds "
			 "content whose SHA-1 is not its name",
			 store_location(s), hex, hex, hex + 2);
	assert_string_equal(err.msg, want);
	free(want);
	free(from);
	free(to);
}

static void test_a_missing_commit_is_damage_with_the_repair(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, big_state, "first");
	char hex[GIT_OID_HEXSZ + 1], *p = loose_file(store_repo(s), &c), *text = NULL, *want;
	char *hint;
	size_t len = 0;

	assert_int_equal(unlink(p), 0);
	s = reopen_local(f);
	assert_int_equal(store_read_file(s, &c, STORE_STATE_FILE, &text, &len, &err), -1);
	git_oid_tostr(hex, sizeof(hex), &c);
	want = xasprintf("the state repository %s is damaged: commit %s is missing (no loose "
			 "object, and no pack that matches its index holds it)",
			 store_location(s), hex);
	hint = local_hint(s);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, hint);
	free(hint);
	free(want);
	free(p);
}

static void test_sound_objects_read_the_same_through_the_check(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct store *s = open_local(f);
	git_oid c = commit_text(s, NULL, big_state, "first"), got;
	char *text = NULL, sh[8];
	size_t len = 0;

	s = reopen_local(f);
	/* An abbreviated id is checked too (read_prefix), then resolved by libgit2. */
	assert_int_equal(store_resolve(s, store_short(&c, sh), &got, &err), 0);
	assert_true(git_oid_equal(&got, &c));
	assert_int_equal(store_read_file(s, &c, STORE_STATE_FILE, &text, &len, &err), 0);
	assert_int_equal(len, strlen(big_state));
	assert_string_equal(text, big_state);
	free(text);
}

/* ---- a file:// remote ---- */

/* A bare remote.git in the test's directory, and its file:// URL; caller frees the URL. */
static char *make_remote(struct fx *f)
{
	char *p = path_in(f, "remote.git");
	char *url = xasprintf("file://%s", p);

	if (git_repository_init(&f->remote, p, 1) != 0)
		fail_msg("git_repository_init %s: %s", p, store_git_error());
	free(p);
	return url;
}

/* Open url from a directory of its own, as another machine would (its own .kiln/cache). */
static struct store *open_as_machine(struct fx *f, int i, const char *url, const char *machine)
{
	char *dir = path_in(f, machine);
	struct store *s;

	if (mkdir(dir, 0755) != 0 || chdir(dir) != 0)
		fail_msg("cannot make %s", dir);
	s = open_at(f, i, url);
	free(dir);
	return s;
}

static void assert_remote_ref_is(struct fx *f, const char *ref, const git_oid *want)
{
	git_oid got;
	char a[8], b[8];

	if (git_reference_name_to_id(&got, f->remote, ref) != 0)
		fail_msg("the remote has no %s: %s", ref, store_git_error());
	if (!git_oid_equal(&got, want))
		fail_msg("the remote's %s is %s, expected %s", ref, store_short(&got, a),
			 store_short(want, b));
}

static void test_remote_url_is_mirrored_into_a_cache(void **state)
{
	struct fx *f = *state;
	char *url = make_remote(f);
	struct store *s = open_as_machine(f, 0, url, "m1");

	assert_true(store_is_remote(s));
	assert_string_equal(store_location(s), url);
	assert_true(git_repository_is_bare(store_repo(s)));
	assert_non_null(strstr(git_repository_path(store_repo(s)), "/m1/.kiln/cache/"));
	free(url);
}

static void test_remote_ref_create_is_pushed_to_the_remote(void **state)
{
	struct fx *f = *state;
	char *url = make_remote(f);
	struct store *s = open_as_machine(f, 0, url, "m1");
	git_oid c = commit_text(s, NULL, "{\"machine\": 1}\n", "from m1");

	create_ref(s, "refs/heads/default", &c);
	assert_remote_ref_is(f, "refs/heads/default", &c);
	free(url);
}

static void test_remote_create_of_a_ref_another_machine_created_reports_exists(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *url = make_remote(f);
	struct store *m1 = open_as_machine(f, 0, url, "m1");
	/* Opened before m1 creates the ref: its cache does not know about it. */
	struct store *m2 = open_as_machine(f, 1, url, "m2");
	git_oid c1 = commit_text(m1, NULL, "{\"machine\": 1}\n", "from m1");
	git_oid c2 = commit_text(m2, NULL, "{\"machine\": 2}\n", "from m2");

	create_ref(m1, "refs/kiln/locks/default", &c1);
	assert_int_equal(store_ref_create(m2, "refs/kiln/locks/default", &c2, &err), STORE_EXISTS);
	assert_remote_ref_is(f, "refs/kiln/locks/default", &c1);
	/* The cache took back what the remote has, not what m2 tried. */
	assert_ref_is(m2, "refs/kiln/locks/default", &c1);
	free(url);
}

static void test_remote_update_from_a_stale_cache_reports_moved_and_resyncs(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *url = make_remote(f);
	struct store *m1 = open_as_machine(f, 0, url, "m1");
	git_oid c1 = commit_text(m1, NULL, "{\"serial\": 1}\n", "one"), c2, c3;
	struct store *m2;

	create_ref(m1, "refs/heads/default", &c1);
	m2 = open_as_machine(f, 1, url, "m2");
	assert_ref_is(m2, "refs/heads/default", &c1);
	/* m1 moves the branch; m2's cache still says c1. */
	c2 = commit_text(m1, &c1, "{\"serial\": 2}\n", "two from m1");
	assert_int_equal(store_ref_update(m1, "refs/heads/default", &c1, &c2, &err), 0);
	assert_remote_ref_is(f, "refs/heads/default", &c2);
	c3 = commit_text(m2, &c1, "{\"serial\": 2}\n", "two from m2");
	assert_int_equal(store_ref_update(m2, "refs/heads/default", &c1, &c3, &err), STORE_MOVED);
	assert_remote_ref_is(f, "refs/heads/default", &c2);
	assert_ref_is(m2, "refs/heads/default", &c2);
	free(url);
}

static void test_remote_delete_from_a_stale_value_reports_moved_and_keeps_it(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *url = make_remote(f);
	struct store *m1 = open_as_machine(f, 0, url, "m1");
	git_oid c1 = commit_text(m1, NULL, "{\"lock\": 1}\n", "one"), c2;
	struct store *m2;

	create_ref(m1, "refs/kiln/locks/default", &c1);
	m2 = open_as_machine(f, 1, url, "m2");
	c2 = commit_text(m1, &c1, "{\"lock\": 2}\n", "renewed");
	assert_int_equal(store_ref_update(m1, "refs/kiln/locks/default", &c1, &c2, &err), 0);
	/* m2 still believes the lock is at c1. */
	assert_int_equal(store_ref_delete(m2, "refs/kiln/locks/default", &c1, &err), STORE_MOVED);
	assert_remote_ref_is(f, "refs/kiln/locks/default", &c2);
	assert_ref_is(m2, "refs/kiln/locks/default", &c2);
	free(url);
}

static void test_remote_delete_from_the_expected_value_removes_it_there(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *url = make_remote(f);
	struct store *m1 = open_as_machine(f, 0, url, "m1");
	git_oid c1 = commit_text(m1, NULL, "{\"lock\": 1}\n", "one"), got;

	create_ref(m1, "refs/kiln/locks/default", &c1);
	assert_int_equal(store_ref_delete(m1, "refs/kiln/locks/default", &c1, &err), 0);
	assert_int_equal(git_reference_name_to_id(&got, f->remote, "refs/kiln/locks/default"),
			 GIT_ENOTFOUND);
	assert_ref_absent(m1, "refs/kiln/locks/default");
	free(url);
}

static void test_a_damaged_object_in_the_cache_says_to_remove_the_cache(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *url = make_remote(f);
	struct store *s = open_as_machine(f, 0, url, "m1");
	git_oid c = commit_text(s, NULL, big_state, "from m1"), blob;
	char hex[GIT_OID_HEXSZ + 1], *cache, *want, *hint, *text = NULL;
	size_t len = 0;
	int rc;

	create_ref(s, "refs/heads/default", &c);
	blob = state_blob(store_repo(s), &c);
	truncate_object(store_repo(s), &blob, object_file_size(store_repo(s), &blob) - 4);
	cache = xstrdup(git_repository_path(store_repo(s)));
	cache[strlen(cache) - 1] = '\0'; /* no trailing '/' */
	store_free(s);
	f->stores[0] = NULL;
	alarm(20);
	rc = store_open(&f->stores[0], url, &err);
	if (rc == 0)
		rc = store_read_file(f->stores[0], &c, STORE_STATE_FILE, &text, &len, &err);
	alarm(0);
	assert_int_equal(rc, -1);
	git_oid_tostr(hex, sizeof(hex), &blob);
	want = xasprintf("the state cache .kiln/cache/%s of %s is damaged: blob %s "
			 "(objects/%.2s/%s) is truncated",
			 strrchr(cache, '/') + 1, url, hex, hex, hex + 2);
	hint = xasprintf("remove the cache (rm -rf .kiln/cache/%s); the next run fetches it "
			 "again from %s",
			 strrchr(cache, '/') + 1, url);
	assert_contains(err.msg, want);
	assert_string_equal(err.hint, hint);
	free(hint);
	free(want);
	free(cache);
	free(url);
}

/* A commit of one file written straight into repo (loose objects, as `git push` leaves them). */
static git_oid commit_in(git_repository *repo, const char *content, git_oid *blob)
{
	git_treebuilder *tb = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, c;

	if (git_blob_create_from_buffer(blob, repo, content, strlen(content)) != 0 ||
	    git_treebuilder_new(&tb, repo, NULL) != 0 ||
	    git_treebuilder_insert(NULL, tb, STORE_STATE_FILE, blob, GIT_FILEMODE_BLOB) != 0 ||
	    git_treebuilder_write(&tree_id, tb) != 0 ||
	    git_tree_lookup(&tree, repo, &tree_id) != 0 ||
	    git_signature_now(&sig, "Test", "test@example.com") != 0 ||
	    git_commit_create_v(&c, repo, "refs/heads/default", sig, sig, NULL, "seed", tree, 0) !=
		0)
		fail_msg("cannot write the commit: %s", store_git_error());
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	return c;
}

static void test_a_truncated_object_in_a_file_remote_fails_the_fetch_at_once(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *url = make_remote(f), *dir = path_in(f, "m1"), *want, *hint;
	char hex[GIT_OID_HEXSZ + 1];
	struct store *s = NULL;
	git_oid blob;
	off_t size;

	commit_in(f->remote, big_state, &blob);
	size = object_file_size(f->remote, &blob) - 4;
	truncate_object(f->remote, &blob, size);
	if (mkdir(dir, 0755) != 0 || chdir(dir) != 0)
		fail_msg("cannot make %s", dir);
	alarm(20); /* libgit2's local transport alone loops forever here */
	assert_int_equal(store_open(&s, url, &err), -1);
	alarm(0);
	assert_null(s);
	git_oid_tostr(hex, sizeof(hex), &blob);
	want = xasprintf("the state remote %s is damaged: blob %s (objects/%.2s/%s) is truncated: "
			 "its file ends after %lld bytes, before the end of its compressed content "
			 "(%zu bytes announced)",
			 url, hex, hex, hex + 2, (long long)size, strlen(big_state));
	hint = xasprintf("`git --git-dir=%s fsck` lists every damaged object; restore them from a "
			 "backup, or from a kiln cache of this remote (.kiln/cache/ in another "
			 "checkout)",
			 url + strlen("file://"));
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, hint);
	free(hint);
	free(want);
	free(dir);
	free(url);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    store_test(test_open_creates_a_bare_repository_at_a_new_path),
	    store_test(test_open_reopens_an_existing_repository),
	    store_test(test_open_of_a_plain_file_says_it_is_not_a_git_repository),
	    store_test(test_open_without_a_location_uses_kiln_state),
	    store_test(test_committed_file_reads_back_through_a_created_ref),
	    store_test(test_read_file_of_a_missing_name_names_the_commit),
	    store_test(test_read_file_of_an_unreadable_blob_names_the_commit),
	    store_test(test_a_truncated_blob_fails_at_once_naming_it_and_the_repair),
	    store_test(test_a_commit_cut_inside_its_header_is_an_object_of_unknown_kind),
	    store_test(test_an_object_whose_content_is_another_s_is_damaged),
	    store_test(test_a_missing_commit_is_damage_with_the_repair),
	    store_test(test_sound_objects_read_the_same_through_the_check),
	    store_test(test_create_of_an_existing_ref_reports_exists_and_keeps_it),
	    store_test(test_update_from_the_expected_value_moves_the_ref),
	    store_test(test_update_from_a_stale_value_reports_moved_and_keeps_the_ref),
	    store_test(test_update_of_an_absent_ref_reports_moved_and_creates_nothing),
	    store_test(test_delete_from_a_stale_value_reports_moved_and_keeps_the_ref),
	    store_test(test_delete_from_the_expected_value_removes_the_ref),
	    store_test(test_ref_list_gives_sorted_names_under_the_prefix_only),
	    store_test(test_ref_list_of_an_empty_store_is_empty),
	    store_test(test_signature_comes_from_kiln_author),
	    store_test(test_commit_is_authored_by_kiln_author),
	    store_test(test_resolve_finds_a_commit_by_abbreviated_id),
	    store_test(test_resolve_of_an_unknown_id_names_it_and_the_store),
	    cmocka_unit_test(test_workspace_names_accept_letters_digits_dot_underscore_dash),
	    cmocka_unit_test(test_workspace_names_reject_what_git_or_kiln_cannot_use),
	    cmocka_unit_test(test_workspace_names_reject_git_s_own_names_and_commit_ids),
	    cmocka_unit_test(test_redacted_urls_hide_credentials),
	    store_test(test_open_refuses_a_repository_with_a_work_tree),
	    cmocka_unit_test(test_ref_names_of_a_workspace),
	    store_test(test_remote_url_is_mirrored_into_a_cache),
	    store_test(test_remote_ref_create_is_pushed_to_the_remote),
	    store_test(test_remote_create_of_a_ref_another_machine_created_reports_exists),
	    store_test(test_remote_update_from_a_stale_cache_reports_moved_and_resyncs),
	    store_test(test_remote_delete_from_a_stale_value_reports_moved_and_keeps_it),
	    store_test(test_remote_delete_from_the_expected_value_removes_it_there),
	    store_test(test_a_damaged_object_in_the_cache_says_to_remove_the_cache),
	    store_test(test_a_truncated_object_in_a_file_remote_fails_the_fetch_at_once),
	};
	int failed;

	/* The test's own libgit2 calls (the remote) need the library up, too. */
	git_libgit2_init();
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return failed;
}
