/*
 * store_int.h - what store.c, store_remote.c and store_repo.c share, and
 * nothing outside them includes: the store itself, the flocks around every
 * ref change (store_repo.c), and the remote's fetch, ls and push
 * (store_remote.c). It includes no kiln header but base.h, so the three
 * files stand on it without a circle through store.h.
 */
#ifndef KILN_STORE_INT_H
#define KILN_STORE_INT_H

#include <git2.h>

#include "base.h"

struct store {
	git_repository *repo;
	struct odbcheck *check; /* reads loose objects before libgit2 does; owned by repo */
	char *location;		/* what the user gave, or the default */
	char *path;		/* the repository on disk: the location, or the cache for a URL */
	char *url;		/* NULL for a local store */
	int cache_fd;		/* flock on the cache, -1 until first used */
	int repo_fd;		/* flock on the repository whose refs change (local, or a file://
				 * remote) while cache_lock() holds, else -1 */
};

/* Internal result: a ref file was locked by another writer for a moment; try again. */
#define STORE_BUSY 3
#define BUSY_TRIES 200

/* The flocks a ref change holds (see store.c). */
void store_cache_lock(struct store *s);
void store_cache_unlock(struct store *s);
/* A few milliseconds, randomised, before another try at a busy ref file. */
void store_busy_pause(void);
/* Remove DIR/REF.lock left by a kiln that died writing it; true when removed. */
bool store_clear_dead_ref_lock(const char *dir, const char *ref);

/* Fetch the remote into the cache, under store_cache_lock (no-op for a local store). */
int store_sync_locked(struct store *s, struct kiln_error *err);
/* The value of a ref on the remote itself: 0 found, 1 absent, -1 error. */
int store_remote_ref_value(struct store *s, const char *ref, git_oid *oid, struct kiln_error *err);
/* After the remote refused a change, put the cache back to what it has; returns code. */
int store_refused(struct store *s, int code, struct kiln_error *err);
/*
 * Push one ref change to the remote without force: set it to the cache's
 * value (set) or delete it. 0, -1, or, when the remote refused it, the
 * cache re-synced and refused_as.
 */
int store_push_ref(struct store *s, const char *ref, bool set, int refused_as,
		   struct kiln_error *err);

#endif
