/*
 * store_repo.c - what store.c and store_remote.c both stand on, calling
 * neither: the flocks around every ref change, a dead writer's ref lock
 * removed, a damaged object named with its repair, and libgit2's last error.
 */
#include "store.h"
#include "store_int.h"

#include "log.h"
#include "odbcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Processes on one machine share a cache: each fetch-and-push sequence holds
 * an exclusive flock on it, so one process's fetch (which prunes refs) never
 * runs between another's local ref change and its push.
 *
 * A repository on this machine gets a flock of its own (kiln.lock inside it)
 * for the same span. For a file:// remote: libgit2's local transport lists the
 * refs, then overwrites or deletes them without checking they are unchanged,
 * and fails a fetch whose listed ref vanished meanwhile. For a local
 * repository: git_reference_create() without force checks that the ref is
 * absent before it locks the ref file, so two creators could both "win" the
 * workspace lock. Over ssh and https the git server is the arbiter.
 *
 * The flock also tells a dead writer from a live one: whoever holds it is the
 * only kiln writing refs there, so a REF.lock file found meanwhile was left by
 * a writer that was killed (see store_clear_dead_ref_lock()).
 */
static int flock_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
			;
	return fd;
}

void store_cache_lock(struct store *s)
{
	char *p;

	if (!s->url) {
		p = xasprintf("%s/kiln.lock", s->path);
		s->repo_fd = flock_file(p);
		free(p);
		return;
	}
	if (s->cache_fd < 0) {
		p = xasprintf("%s.lock", s->path);
		s->cache_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		free(p);
	}
	if (s->cache_fd >= 0)
		while (flock(s->cache_fd, LOCK_EX) != 0 && errno == EINTR)
			;
	if (str_starts_with(s->url, "file://")) {
		p = xasprintf("%s/kiln.lock", s->url + strlen("file://"));
		s->repo_fd = flock_file(p);
		free(p);
	}
}

void store_cache_unlock(struct store *s)
{
	if (s->repo_fd >= 0) {
		close(s->repo_fd); /* closing the only descriptor releases its flock */
		s->repo_fd = -1;
	}
	if (s->url && s->cache_fd >= 0)
		flock(s->cache_fd, LOCK_UN);
}

const char *store_git_error(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

void store_busy_pause(void)
{
	struct timespec ts = {0, (5 + rand() % 20) * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * Under the repository's flock (cache_lock), REF.lock in the repository at
 * DIR is no kiln's that is alive: a kiln killed while writing REF left it, and
 * it would block every later change of REF. Remove it once it is
 * DEAD_LOCK_AGE seconds old (a git process that is not kiln, writing that ref
 * right now, holds it for milliseconds). True when it was removed.
 */
#define DEAD_LOCK_AGE 2

bool store_clear_dead_ref_lock(const char *dir, const char *ref)
{
	char *path = xasprintf("%s/%s.lock", dir, ref);
	struct stat st;
	bool removed = lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		       (int64_t)st.st_mtime + DEAD_LOCK_AGE <= (int64_t)time(NULL) &&
		       unlink(path) == 0;

	if (removed)
		log_warn("removed %s, left by a process that died while writing %s", path, ref);
	free(path);
	return removed;
}

/* "the state repository PATH" or "the state cache PATH of URL": what is damaged, and its repair. */
static void damage_set(struct store *s, struct kiln_error *err, const char *what)
{
	if (s->url) {
		kiln_error_set(err, "the state cache %s of %s is damaged: %s", s->path, s->location,
			       what);
		kiln_error_hint(err,
				"remove the cache (rm -rf %s); the next run fetches it again "
				"from %s",
				s->path, s->location);
	} else {
		kiln_error_set(err, "the state repository %s is damaged: %s", s->path, what);
		kiln_error_hint(err,
				"`git --git-dir=%s fsck` lists every damaged object; restore "
				"them from a backup or a clone of this repository",
				s->path);
	}
}

bool store_damaged(struct store *s, struct kiln_error *err)
{
	const char *kind, *file, *why;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid id;
	char *what;

	if (!s || !odbcheck_damage(s->check, &id, &kind, &file, &why))
		return false;
	git_oid_tostr(hex, sizeof(hex), &id);
	what = xasprintf("%s %s (%s) %s", kind, hex, file, why);
	damage_set(s, err, what);
	free(what);
	return true;
}

bool store_object_error(struct store *s, int rc, const char *kind, const git_oid *id,
			struct kiln_error *err)
{
	const git_error *e = git_error_last();
	char hex[GIT_OID_HEXSZ + 1];
	git_odb *odb = NULL;
	char *what;
	bool there;

	if (store_damaged(s, err))
		return true;
	if (!id || rc == 0)
		return false;
	git_oid_tostr(hex, sizeof(hex), id);
	/*
	 * Every loose object went through odbcheck: an object that does not
	 * inflate, or hashes to another name, is in a pack (libgit2 checks only
	 * a pack's length and trailer against its index).
	 */
	if (rc != GIT_ENOTFOUND && e && e->message &&
	    (e->klass == GIT_ERROR_ZLIB || strstr(e->message, "hash mismatch"))) {
		what = xasprintf("%s %s cannot be read from its pack (%s)", kind, hex, e->message);
		damage_set(s, err, what);
		free(what);
		return true;
	}
	if (rc != GIT_ENOTFOUND)
		return false;
	/* libgit2 says "not found" of an object of another kind than asked, too. */
	there = git_repository_odb(&odb, s->repo) != 0 || git_odb_exists(odb, id);
	git_odb_free(odb);
	if (there)
		return false;
	what = xasprintf("%s %s is missing (no loose object, and no pack that matches its "
			 "index holds it)",
			 kind, hex);
	damage_set(s, err, what);
	free(what);
	return true;
}
