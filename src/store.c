/*
 * store.c - the state repository through libgit2; see store.h.
 *
 * Local refs move with git_reference_create_matching() and
 * git_reference_delete(), which lock the ref file and fail with GIT_EMODIFIED
 * when its value is not the expected one: that is the compare-and-swap every
 * caller relies on. For a remote, the same change is made in the cache and
 * pushed without force; a rejected push re-syncs the cache from the remote so
 * it never keeps a change the remote refused.
 *
 * Every ref change happens under an flock on kiln.lock inside the repository
 * it changes (the local repository, or a file:// remote); see
 * store_cache_lock(). Talking to a remote (fetch, push, ls) is in
 * store_remote.c.
 */
#include "store.h"
#include "store_int.h"

#include "log.h"
#include "odbcheck.h"

#include <errno.h>
#include <limits.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t git_once = PTHREAD_ONCE_INIT;

static void git_init_once(void)
{
	git_libgit2_init();
}

static bool is_url(const char *loc)
{
	const char *colon = strchr(loc, ':'), *slash = strchr(loc, '/');

	if (strstr(loc, "://"))
		return true;
	/* scp-like user@host:path, but not a relative path with a colon in it. */
	return colon && strchr(loc, '@') && (!slash || colon < slash);
}

static int mkdir_p(const char *path, struct kiln_error *err)
{
	char *p = xstrdup(path), *q;
	int ret = 0;

	for (q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			kiln_error_set(err, "cannot create directory %s: %s", p, strerror(errno));
			ret = -1;
			break;
		}
		*q = '/';
	}
	free(p);
	return ret;
}

/* Open the bare repository at path, or create it; its loose objects are checked (odbcheck). */
static int open_or_init(git_repository **repo, struct odbcheck **check, const char *path,
			const char *what, struct kiln_error *err)
{
	struct stat st;

	if (stat(path, &st) == 0) {
		git_repository *r = NULL;

		if (git_repository_open(&r, path) == 0 && !git_repository_is_bare(r)) {
			/* kiln moves branches; a checked-out one would leave the work tree behind.
			 */
			git_repository_free(r);
			kiln_error_set(err,
				       "%s %s has a work tree; kiln keeps state in a bare "
				       "repository",
				       what, path);
			kiln_error_hint(err, "create one with `git init --bare`, and point --state "
					     "or KILN_STATE at it");
			return -1;
		}
		git_repository_free(r);
		if (git_repository_open_bare(repo, path) == 0 && odbcheck_attach(check, *repo) == 0)
			return 0;
		git_repository_free(*repo);
		*repo = NULL;
		kiln_error_set(err, "%s %s cannot be opened as a bare git repository: %s", what,
			       path, store_git_error());
		kiln_error_hint(err, "check that it is one and that kiln may read and write it");
		return -1;
	}
	if (mkdir_p(path, err) < 0)
		return -1;
	/*
	 * Initialise beside it and rename into place: a process killed half way
	 * through leaves a stray temporary directory, never a half-made repository
	 * that every later run would refuse to open.
	 */
	char *tmp = xasprintf("%s.init.%ld", path, (long)getpid());
	int rc = -1;

	util_remove_tree(tmp);
	if (git_repository_init(repo, tmp, 1) != 0) {
		kiln_error_set(err, "cannot create the state repository %s: %s", path,
			       store_git_error());
		goto out;
	}
	git_repository_free(*repo);
	*repo = NULL;
	if (rename(tmp, path) != 0 && errno != EEXIST && errno != ENOTEMPTY) {
		kiln_error_set(err, "cannot create the state repository %s: %s", path,
			       strerror(errno));
		goto out;
	}
	if (git_repository_open_bare(repo, path) != 0 || odbcheck_attach(check, *repo) != 0) {
		kiln_error_set(err, "cannot open the state repository %s: %s", path,
			       store_git_error());
		git_repository_free(*repo);
		*repo = NULL;
		goto out;
	}
	rc = 0;
out:
	util_remove_tree(tmp);
	free(tmp);
	return rc;
}

static int open_store(struct store **out, const char *location, bool create, struct kiln_error *err)
{
	struct store *s;
	const char *env = getenv("KILN_STATE");
	int rc;

	pthread_once(&git_once, git_init_once);
	*out = NULL;
	if (!location || !*location)
		location = env && *env ? env : STORE_DEFAULT_PATH;
	s = xcalloc(1, sizeof(*s));
	s->cache_fd = -1;
	s->repo_fd = -1;
	s->location = xstrdup(location);
	if (is_url(location)) {
		unsigned char md[SHA256_DIGEST_LENGTH];
		char hex[17];
		int i;

		SHA256((const unsigned char *)location, strlen(location), md);
		for (i = 0; i < 8; i++)
			snprintf(hex + 2 * i, 3, "%02x", md[i]);
		s->url = xstrdup(location);
		/* Everything kiln prints names the remote without its credentials. */
		free(s->location);
		s->location = store_redact_url(location);
		s->path = xasprintf(".kiln/cache/%s.git", hex);
	} else {
		struct stat st;

		s->path = xstrdup(location);
		if (!create && stat(s->path, &st) != 0) {
			kiln_error_set(err, "there is no state repository at %s", s->path);
			kiln_error_hint(err, "`kiln workspace new default` creates one; --state or "
					     "KILN_STATE selects another");
			store_free(s);
			return -1;
		}
	}
	if (s->url && mkdir_p(s->path, err) < 0) {
		store_free(s);
		return -1;
	}
	/* Concurrent first runs must not initialise the same repository at once. */
	if (s->url) {
		struct stat st;
		bool fresh;

		store_cache_lock(s);
		fresh = stat(s->path, &st) != 0;
		rc = open_or_init(&s->repo, &s->check, s->path, "the state cache", err);
		if (rc == 0)
			rc = store_sync_locked(s, err);
		/* A first fetch that failed leaves no empty cache behind. */
		if (rc < 0 && fresh) {
			git_repository_free(s->repo);
			s->repo = NULL;
			s->check = NULL;
			util_remove_tree(s->path);
		}
		store_cache_unlock(s);
	} else {
		/* The parent directory itself is the lock: nothing is left behind. */
		char *parent = xstrdup(s->path), *slash;
		int fd = -1;

		rc = mkdir_p(s->path, err);
		slash = strrchr(parent, '/');
		if (slash && slash != parent)
			*slash = '\0';
		else if (slash)
			parent[1] = '\0';
		else
			strcpy(parent, ".");
		if (rc == 0 && create) {
			fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd >= 0)
				while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
					;
		}
		if (rc == 0)
			rc =
			    open_or_init(&s->repo, &s->check, s->path, "the state repository", err);
		if (fd >= 0)
			close(fd);
		free(parent);
	}
	if (rc < 0) {
		store_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int store_open(struct store **out, const char *location, struct kiln_error *err)
{
	return open_store(out, location, true, err);
}

int store_open_existing(struct store **out, const char *location, struct kiln_error *err)
{
	return open_store(out, location, false, err);
}

void store_free(struct store *s)
{
	if (!s)
		return;
	git_repository_free(s->repo);
	if (s->cache_fd >= 0)
		close(s->cache_fd);
	free(s->location);
	free(s->path);
	free(s->url);
	free(s);
}

const char *store_location(const struct store *s)
{
	return s->location;
}

const char *store_source(const struct store *s)
{
	return s->url ? s->url : s->path;
}

char *store_redact_url(const char *url)
{
	const char *scheme = strstr(url, "://"), *host, *at, *slash;

	if (!scheme)
		return xstrdup(url);
	host = scheme + 3;
	slash = strchr(host, '/');
	at = memchr(host, '@', slash ? (size_t)(slash - host) : strlen(host));
	if (!at)
		return xstrdup(url);
	return xasprintf("%.*s***%s", (int)(host - url), url, at);
}

bool store_is_remote(const struct store *s)
{
	return s->url != NULL;
}

git_repository *store_repo(struct store *s)
{
	return s->repo;
}

/* Wait for a locked ref file in the repository being changed: false once it stayed locked. */
static bool ref_busy_wait(struct store *s, const char *ref, int tries)
{
	if (tries >= BUSY_TRIES)
		return false;
	if (!store_clear_dead_ref_lock(s->path, ref))
		store_busy_pause();
	return true;
}

/*
 * A ref file stayed locked through every try, and the lock file is not a
 * dead kiln's (it keeps being renewed, or cannot be removed): say which file.
 */
static int stale_ref_lock(struct store *s, const char *ref, struct kiln_error *err)
{
	kiln_error_set(err,
		       "%s/%s.lock stayed locked for seconds while kiln held the repository: "
		       "another process is writing %s",
		       s->path, ref, ref);
	kiln_error_hint(err, "if no git process is running on this repository, remove "
			     "that .lock file");
	return -1;
}

int store_ref_read(struct store *s, const char *ref, git_oid *oid, struct kiln_error *err)
{
	int rc = git_reference_name_to_id(oid, s->repo, ref);

	if (rc == GIT_ENOTFOUND)
		return 1;
	if (rc != 0) {
		kiln_error_set(err, "cannot read %s in %s: %s", ref, s->location,
			       store_git_error());
		return -1;
	}
	return 0;
}

static int ref_create_locked(struct store *s, const char *ref, const git_oid *oid,
			     struct kiln_error *err)
{
	git_reference *r = NULL;
	int rc, tries;

	/* The cache may hold a copy of a ref the remote no longer has: the remote decides. */
	for (tries = 0;; tries++) {
		rc = git_reference_create(&r, s->repo, ref, oid, s->url != NULL, "kiln");
		git_reference_free(r);
		r = NULL;
		if (rc != GIT_ELOCKED || !ref_busy_wait(s, ref, tries))
			break;
	}
	if (rc == GIT_EEXISTS)
		return STORE_EXISTS;
	if (rc == GIT_ELOCKED)
		return stale_ref_lock(s, ref, err);
	if (rc != 0) {
		if (!store_damaged(s, err))
			kiln_error_set(err, "cannot create %s in %s: %s", ref, s->location,
				       store_git_error());
		return -1;
	}
	/* Refused: another writer created it first; the caller reads it and decides. */
	return s->url ? store_push_ref(s, ref, true, STORE_EXISTS, err) : 0;
}

int store_ref_create(struct store *s, const char *ref, const git_oid *oid, struct kiln_error *err)
{
	int rc;

	store_cache_lock(s);
	rc = ref_create_locked(s, ref, oid, err);
	store_cache_unlock(s);
	return rc;
}

static int ref_update_locked(struct store *s, const char *ref, const git_oid *expected,
			     const git_oid *oid, struct kiln_error *err)
{
	git_reference *r = NULL;
	int rc, tries;

	if (s->url) {
		git_oid now;

		/*
		 * The remote decides: a push "updates" a missing ref by creating it, so
		 * first check it still holds what we expect (a force-unlocked lock must
		 * stay removed). Under the file:// flock, check and push are one step.
		 */
		rc = store_remote_ref_value(s, ref, &now, err);
		if (rc < 0)
			return -1;
		if (rc == 1 || !git_oid_equal(&now, expected))
			return store_refused(s, STORE_MOVED, err);
	}
	for (tries = 0;; tries++) {
		/* The cache only mirrors the remote: set it, the push below is the swap. */
		if (s->url)
			rc = git_reference_create(&r, s->repo, ref, oid, 1, "kiln");
		else
			rc = git_reference_create_matching(&r, s->repo, ref, oid, 1, expected,
							   "kiln");
		git_reference_free(r);
		r = NULL;
		/* Locked: a writer failing to create it holds the ref file for a moment. */
		if (rc != GIT_ELOCKED || !ref_busy_wait(s, ref, tries))
			break;
	}
	if (rc == GIT_ELOCKED)
		return stale_ref_lock(s, ref, err);
	if (rc == GIT_EMODIFIED || rc == GIT_ENOTFOUND)
		return STORE_MOVED;
	if (rc != 0) {
		if (!store_damaged(s, err))
			kiln_error_set(err, "cannot update %s in %s: %s", ref, s->location,
				       store_git_error());
		return -1;
	}
	return s->url ? store_push_ref(s, ref, true, STORE_MOVED, err) : 0;
}

int store_ref_update(struct store *s, const char *ref, const git_oid *expected, const git_oid *oid,
		     struct kiln_error *err)
{
	int rc;

	store_cache_lock(s);
	rc = ref_update_locked(s, ref, expected, oid, err);
	store_cache_unlock(s);
	return rc;
}

static int ref_delete_locked(struct store *s, const char *ref, const git_oid *expected,
			     struct kiln_error *err)
{
	git_reference *r = NULL;
	int rc, tries;

	if (s->url) {
		git_oid now;

		rc = store_remote_ref_value(s, ref, &now, err);
		if (rc < 0)
			return -1;
		if (rc == 1 || !git_oid_equal(&now, expected))
			return store_refused(s, STORE_MOVED, err);
		rc = store_push_ref(s, ref, false, STORE_MOVED, err);
		if (rc != 0)
			return rc;
	}
	for (tries = 0;; tries++) {
		rc = git_reference_lookup(&r, s->repo, ref);
		if (rc == GIT_ENOTFOUND)
			return s->url ? 0 : STORE_MOVED;
		if (rc == 0 && !git_oid_equal(git_reference_target(r), expected)) {
			git_reference_free(r);
			return s->url ? store_refused(s, 0, err) : STORE_MOVED;
		}
		if (rc == 0)
			rc = git_reference_delete(r);
		git_reference_free(r);
		r = NULL;
		if (rc != GIT_ELOCKED || !ref_busy_wait(s, ref, tries))
			break;
	}
	if (rc == GIT_ELOCKED)
		return stale_ref_lock(s, ref, err);
	if (rc == GIT_EMODIFIED)
		return STORE_MOVED;
	if (rc != 0) {
		kiln_error_set(err, "cannot delete %s in %s: %s", ref, s->location,
			       store_git_error());
		return -1;
	}
	return 0;
}

int store_ref_read_fresh(struct store *s, const char *ref, git_oid *oid, struct kiln_error *err)
{
	int rc;

	if (!s->url)
		return store_ref_read(s, ref, oid, err);
	store_cache_lock(s);
	rc = store_remote_ref_value(s, ref, oid, err);
	store_cache_unlock(s);
	return rc;
}

int store_ref_delete(struct store *s, const char *ref, const git_oid *expected,
		     struct kiln_error *err)
{
	int rc;

	store_cache_lock(s);
	rc = ref_delete_locked(s, ref, expected, err);
	store_cache_unlock(s);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int store_ref_list(struct store *s, const char *prefix, char ***names, size_t *n,
		   struct kiln_error *err)
{
	git_reference_iterator *it = NULL;
	const char *name;
	char *glob = xasprintf("%s*", prefix);
	size_t cap = 0, plen = strlen(prefix);
	int rc;

	*names = NULL;
	*n = 0;
	if (git_reference_iterator_glob_new(&it, s->repo, glob) != 0) {
		kiln_error_set(err, "cannot list %s in %s: %s", prefix, s->location,
			       store_git_error());
		free(glob);
		return -1;
	}
	while ((rc = git_reference_next_name(&name, it)) == 0)
		*ARRAY_PUSH(*names, *n, cap) = xstrdup(name + plen);
	git_reference_iterator_free(it);
	free(glob);
	if (rc != GIT_ITEROVER) {
		kiln_error_set(err, "cannot list %s in %s: %s", prefix, s->location,
			       store_git_error());
		store_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return -1;
	}
	if (*n > 1)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
}

void store_names_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* "Name <email>" or a bare name. */
/* No control characters (a newline would add lines to the commit header) and no <>. */
static bool identity_text_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '<' || *s == '>')
			return false;
	return true;
}

/* "Name <email>", or a bare name whose email is fallback_email. */
static int signature_from_spec(git_signature **out, const char *spec, const char *fallback_email)
{
	const char *lt = strchr(spec, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	char *name, *email;
	int rc;

	if (lt && gt && gt > lt + 1) {
		const char *end = lt;

		while (end > spec && end[-1] == ' ')
			end--;
		name = xstrndup(spec, (size_t)(end - spec));
		email = xstrndup(lt + 1, (size_t)(gt - lt - 1));
		if (gt[1] != '\0')
			name[0] = '\0'; /* text after the '>': not this form */
	} else {
		name = xstrdup(spec);
		email = xstrdup(fallback_email);
	}
	rc = *name && identity_text_ok(name) && identity_text_ok(email) && strchr(email, '@')
		 ? git_signature_now(out, name, email)
		 : -1;
	free(name);
	free(email);
	return rc;
}

int store_signature(struct store *s, git_signature **out, struct kiln_error *err)
{
	static const struct {
		const char *login;
		const char *email;
		const char *domain;
	} ci[] = {
	    {"GITHUB_ACTOR", NULL, "users.noreply.github.com"},
	    {"GITLAB_USER_LOGIN", "GITLAB_USER_EMAIL", "users.noreply.gitlab.com"},
	    {"BUILDKITE_BUILD_CREATOR", "BUILDKITE_BUILD_CREATOR_EMAIL", "buildkite.invalid"},
	    {"CIRCLE_USERNAME", NULL, "circleci.invalid"},
	};
	const char *env = getenv("KILN_AUTHOR");
	git_config *cfg = NULL;
	git_buf name = GIT_BUF_INIT, email = GIT_BUF_INIT;
	char host[256] = "localhost";
	struct passwd *pw;
	size_t i;
	int rc;

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	pw = getpwuid(getuid());
	/* An explicit KILN_AUTHOR wins, as GIT_AUTHOR_NAME does over git config. */
	if (env && *env) {
		char *fallback =
		    xasprintf("%s@%s", pw && pw->pw_name ? pw->pw_name : "unknown", host);

		rc = signature_from_spec(out, env, fallback);
		free(fallback);
		if (rc == 0)
			return 0;
		kiln_error_set(err, "KILN_AUTHOR is not an identity kiln can record (a control "
				    "character, or an email without '@')");
		kiln_error_hint(err, "write it as Name <email>, on one line");
		return -1;
	}
	if (git_repository_config_snapshot(&cfg, s->repo) == 0 &&
	    git_config_get_string_buf(&name, cfg, "user.name") == 0 && name.size) {
		char *fallback = NULL;

		/* A name without an email still names the person; the email is user@host. */
		if (git_config_get_string_buf(&email, cfg, "user.email") != 0 || !email.size)
			fallback =
			    xasprintf("%s@%s", pw && pw->pw_name ? pw->pw_name : "unknown", host);
		rc = identity_text_ok(name.ptr) && identity_text_ok(fallback ? fallback : email.ptr)
			 ? git_signature_now(out, name.ptr, fallback ? fallback : email.ptr)
			 : -1;
		free(fallback);
	} else {
		rc = -1;
	}
	git_buf_dispose(&name);
	git_buf_dispose(&email);
	git_config_free(cfg);
	if (rc == 0)
		return 0;
	for (i = 0; i < ARRAY_SIZE(ci); i++) {
		const char *login = getenv(ci[i].login);
		const char *mail = ci[i].email ? getenv(ci[i].email) : NULL;
		char *m;

		if (!login || !*login)
			continue;
		m = mail && *mail ? xstrdup(mail) : xasprintf("%s@%s", login, ci[i].domain);
		rc = identity_text_ok(login) && identity_text_ok(m)
			 ? git_signature_now(out, login, m)
			 : -1;
		free(m);
		if (rc == 0)
			return 0;
	}
	{
		const char *user = pw && pw->pw_name ? pw->pw_name : "unknown";
		char *mail = xasprintf("%s@%s", user, host);

		rc = git_signature_now(out, user, mail);
		free(mail);
	}
	if (rc != 0) {
		kiln_error_set(err, "cannot make a commit signature: %s", store_git_error());
		kiln_error_hint(err, "set KILN_AUTHOR=\"Name <email>\"");
		return -1;
	}
	return 0;
}

int store_commit_file(struct store *s, const git_oid *parent, const char *name, const char *content,
		      size_t len, const char *message, git_oid *out, struct kiln_error *err)
{
	git_oid blob, tree_id;
	git_treebuilder *tb = NULL;
	git_tree *tree = NULL;
	git_commit *pc = NULL;
	git_signature *sig = NULL;
	const git_commit *parents[1];
	char sh[8];
	int rc, ret = -1;

	if (store_signature(s, &sig, err) < 0)
		return -1;
	if (git_blob_create_from_buffer(&blob, s->repo, content, len) != 0 ||
	    git_treebuilder_new(&tb, s->repo, NULL) != 0 ||
	    (name && git_treebuilder_insert(NULL, tb, name, &blob, GIT_FILEMODE_BLOB) != 0) ||
	    git_treebuilder_write(&tree_id, tb) != 0 ||
	    git_tree_lookup(&tree, s->repo, &tree_id) != 0) {
		if (!store_damaged(s, err))
			kiln_error_set(err, "cannot write to %s: %s", s->location,
				       store_git_error());
		goto out;
	}
	if (parent && (rc = git_commit_lookup(&pc, s->repo, parent)) != 0) {
		if (!store_object_error(s, rc, "commit", parent, err))
			kiln_error_set(err, "cannot read commit %s in %s: %s",
				       store_short(parent, sh), s->location, store_git_error());
		goto out;
	}
	parents[0] = pc;
	if (git_commit_create(out, s->repo, NULL, sig, sig, "UTF-8", message, tree, pc ? 1 : 0,
			      parents) != 0) {
		kiln_error_set(err, "cannot write a commit to %s: %s", s->location,
			       store_git_error());
		goto out;
	}
	ret = 0;
out:
	git_commit_free(pc);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	git_signature_free(sig);
	return ret;
}

int store_read_file(struct store *s, const git_oid *commit, const char *name, char **out,
		    size_t *len, struct kiln_error *err)
{
	git_commit *c = NULL;
	git_tree *tree = NULL;
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	char sh[8];
	int rc, ret = -1;

	/* Every message names the commit: its short id is made once, before any of them. */
	store_short(commit, sh);
	if ((rc = git_commit_lookup(&c, s->repo, commit)) != 0 ||
	    (rc = git_commit_tree(&tree, c)) != 0) {
		if (!store_object_error(s, rc, c ? "tree" : "commit",
					c ? git_commit_tree_id(c) : commit, err))
			kiln_error_set(err, "cannot read commit %s in %s: %s", sh, s->location,
				       store_git_error());
		goto out;
	}
	if (git_tree_entry_bypath(&entry, tree, name) != 0 ||
	    git_tree_entry_type(entry) != GIT_OBJECT_BLOB) {
		kiln_error_set(err, "commit %s in %s has no %s", sh, s->location, name);
		goto out;
	}
	if ((rc = git_blob_lookup(&blob, s->repo, git_tree_entry_id(entry))) != 0) {
		if (!store_object_error(s, rc, "blob", git_tree_entry_id(entry), err))
			kiln_error_set(err, "cannot read %s of commit %s in %s: %s", name, sh,
				       s->location, store_git_error());
		goto out;
	}
	*len = (size_t)git_blob_rawsize(blob);
	*out = xstrndup(git_blob_rawcontent(blob), *len);
	ret = 0;
out:
	git_blob_free(blob);
	git_tree_entry_free(entry);
	git_tree_free(tree);
	git_commit_free(c);
	return ret;
}


const char *store_short(const git_oid *oid, char buf[8])
{
	git_oid_tostr(buf, 8, oid);
	return buf;
}

bool store_has_object(struct store *s, const char *hex)
{
	git_odb *odb = NULL;
	git_oid oid;
	bool has;

	if (strlen(hex) != GIT_OID_HEXSZ || git_oid_fromstr(&oid, hex) != 0)
		return false;
	if (git_repository_odb(&odb, s->repo) != 0)
		return true; /* cannot tell: say nothing about another repository */
	has = git_odb_exists(odb, &oid) != 0;
	git_odb_free(odb);
	return has;
}

int store_resolve(struct store *s, const char *spec, git_oid *out, struct kiln_error *err)
{
	git_object *obj = NULL, *peeled = NULL;
	int ret = -1;

	if (git_revparse_single(&obj, s->repo, spec) != 0) {
		git_reference *ref = NULL;
		bool damaged = store_damaged(s, err);

		/* A ref whose commit cannot be found: the repository lost it. */
		if (!damaged && git_reference_dwim(&ref, s->repo, spec) == 0 &&
		    git_reference_target(ref))
			damaged = store_object_error(s, GIT_ENOTFOUND, "commit",
						     git_reference_target(ref), err);
		git_reference_free(ref);
		if (damaged)
			return -1;
		kiln_error_set(err, "no commit '%s' in %s", spec, s->location);
		kiln_error_hint(err, "`kiln log` lists the commits of a workspace");
		return -1;
	}
	if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) != 0) {
		if (store_damaged(s, err))
			goto out;
		kiln_error_set(err, "'%s' in %s is not a commit", spec, s->location);
		goto out;
	}
	git_oid_cpy(out, git_object_id(peeled));
	ret = 0;
out:
	git_object_free(peeled);
	git_object_free(obj);
	return ret;
}

char *store_branch_ref(const char *workspace)
{
	return xasprintf("refs/heads/%s", workspace);
}

char *store_lock_ref(const char *workspace)
{
	return xasprintf("refs/kiln/locks/%s", workspace);
}

bool store_workspace_name_ok(const char *name)
{
	static const char *const reserved[] = {"HEAD", "FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD"};
	size_t i, n = strlen(name);

	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		if (strcmp(name, reserved[i]) == 0)
			return false;
	/* Four or more hex digits could be read as an abbreviated commit id. */
	if (n >= 4 && strspn(name, "0123456789abcdefABCDEF") == n)
		return false;
	if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-' || strstr(name, "..") ||
	    str_ends_with(name, ".lock") || str_ends_with(name, "."))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}
