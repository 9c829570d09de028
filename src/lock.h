/*
 * lock.h - one writer per workspace: a lock ref with a lease.
 *
 * The lock is refs/kiln/locks/<workspace>, created only if absent (for a
 * remote, pushed without force, so the remote decides who won). It points at
 * a commit whose message is a JSON body: id, holder, pid, operation, created,
 * expires. The holder renews the lease from a thread while it works; a holder
 * that died leaves a lock whose lease runs out, which is then reported as
 * stale and can be taken over (--lock-timeout) or removed (force-unlock).
 * SIGINT and SIGTERM release every held lock before the process exits.
 */
#ifndef KILN_LOCK_H
#define KILN_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"
#include "util.h"

#define LOCK_LEASE_DEFAULT 120 /* seconds; KILN_LOCK_LEASE overrides */
#define LOCK_RENEW_DEFAULT 30  /* seconds; KILN_LOCK_RENEW overrides */

struct lock_info {
	char *id;
	char *holder; /* user@host */
	long pid;
	char *operation;
	char *workspace;
	int64_t created; /* unix seconds */
	int64_t expires;
	/*
	 * The lineage the holder gives a workspace that has no commit yet, or
	 * NULL: what its first apply tags, kept where it outlives a killed one.
	 */
	char *lineage;
};

struct lock_options {
	const char *operation; /* "state push", "apply", ... */
	int64_t timeout;       /* seconds to wait for a held lock; 0 fails at once */
	/*
	 * For a workspace with no commit yet, a fresh lineage to record in the
	 * lock; taking over a stale lock that records one keeps that one instead
	 * (lock_lineage says which), so a first apply killed before its commit
	 * is finished under the lineage its resources carry. NULL otherwise.
	 */
	const char *lineage;
};

struct lock;

/* 0 and the lock, or -1 with err naming the holder, the operation and since when. */
int lock_acquire(struct lock **out, struct store *s, const char *workspace,
		 const struct lock_options *opts, struct kiln_error *err);
/*
 * Release and free; safe with NULL. Returns -1 when the lock could not be
 * removed. A lock already lost is not ours to remove: 0, and lock_verify()
 * is what reports the loss, before a write.
 */
int lock_release(struct lock *l, struct kiln_error *err);
/*
 * Right before a write: the lock ref still points at our lock commit. Catches a
 * force-unlock (or a takeover) that renewal has not noticed yet.
 */
int lock_verify(struct lock *l, struct kiln_error *err);
/*
 * Before a call that cannot be undone: renew the lease now, against the
 * lock's record (a commit whose parent is our lock commit, moved only if
 * the ref still points at ours). -1 with err naming the holder that took
 * it over (or saying it was removed) when it is not ours any more.
 */
int lock_renew_check(struct lock *l, struct kiln_error *err);
/* True when renewal found the lock taken from us (the lease ran out and someone took over). */
bool lock_lost(struct lock *l, struct kiln_error *err);
const char *lock_id(const struct lock *l);
/* The lineage the lock records (lock_options.lineage, or the stale lock's it replaced), or NULL. */
const char *lock_lineage(const struct lock *l);
/* A "Kiln-Lock-Takeover: ..." trailer when this lock replaced a stale one, else NULL. */
const char *lock_takeover_note(const struct lock *l);

/*
 * Hold off SIGINT/SIGTERM handling around a step that must finish once begun
 * (moving a branch); the signal thread waits for it, then releases and exits.
 */
void lock_critical_enter(void);
void lock_critical_leave(void);

/*
 * Release every held lock for a process about to exit; the count released.
 * It enters the critical section and never leaves it: nothing moves a
 * branch after.
 */
int lock_release_all_for_exit(void);

#define LOCK_MALFORMED (-2)

/*
 * The current lock of a workspace: 0 held (*info, *oid set), 1 none, -1 error,
 * LOCK_MALFORMED when the lock ref's commit is not a kiln record (*oid set).
 */
int lock_read(struct store *s, const char *workspace, struct lock_info *info, git_oid *oid,
	      struct kiln_error *err);
void lock_info_release(struct lock_info *info);
bool lock_info_expired(const struct lock_info *info);
/* "user@host (pid 42) for 'state push' since 2026-11-29T21:00:00Z, lock 1a2b..." */
char *lock_info_describe(const struct lock_info *info);

/* Remove a lock by id; a live lease needs force; a malformed one, force and its commit id. */
int lock_force_unlock(struct store *s, const char *workspace, const char *id, bool force,
		      struct kiln_error *err);

#endif
