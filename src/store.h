/*
 * store.h - the git repository that holds kiln's state (libgit2).
 *
 * One branch per workspace, refs/heads/<workspace>, whose commits each hold
 * one file, state.json; one lock ref per workspace, refs/kiln/locks/<ws>.
 * The store knows git, not the meaning of state: it writes blobs, trees and
 * commits without a work tree, and moves refs only by compare-and-swap, so a
 * moved head is reported, never overwritten.
 *
 * A local path is used directly (a bare repository, created if absent). A URL
 * (file://, ssh://, https://, user@host:path) is mirrored into a bare cache
 * under .kiln/cache/ and every ref change is pushed without force, so the
 * remote decides between concurrent writers.
 */
#ifndef KILN_STORE_H
#define KILN_STORE_H

#include <git2.h>
#include <stdbool.h>

#include "util.h"

#define STORE_DEFAULT_PATH ".kiln/state.git"
#define STORE_STATE_FILE "state.json"

struct store;

/* Result codes besides 0 and -1 for the compare-and-swap operations. */
enum {
	STORE_EXISTS = 1, /* create: the ref is already there */
	STORE_MOVED = 2,  /* update/delete: the ref is not where the caller expected */
};

/* location NULL: $KILN_STATE, else .kiln/state.git. Creates a missing local repository. */
int store_open(struct store **out, const char *location, struct kiln_error *err);
/* The same for commands that only read: a missing local repository is an error. */
int store_open_existing(struct store **out, const char *location, struct kiln_error *err);
void store_free(struct store *s);
/* Where the state is, for messages: a URL without its credentials. */
const char *store_location(const struct store *s);
/* What store_open() needs to open the same store again (a URL with its credentials). */
const char *store_source(const struct store *s);
/* A URL with any user:password@ replaced by ***@. Caller frees. */
char *store_redact_url(const char *url);
bool store_is_remote(const struct store *s);
git_repository *store_repo(struct store *s);

/* Bring the cache up to date with the remote (no-op for a local store). */
int store_sync(struct store *s, struct kiln_error *err);

/* 0 found (*oid set), 1 absent, -1 error. */
int store_ref_read(struct store *s, const char *ref, git_oid *oid, struct kiln_error *err);
/* The same, asking the remote itself rather than the cache (local: store_ref_read). */
int store_ref_read_fresh(struct store *s, const char *ref, git_oid *oid, struct kiln_error *err);
/* Create a ref that must not exist: 0, STORE_EXISTS or -1. */
int store_ref_create(struct store *s, const char *ref, const git_oid *oid, struct kiln_error *err);
/* Move a ref from expected to oid: 0, STORE_MOVED or -1. */
int store_ref_update(struct store *s, const char *ref, const git_oid *expected, const git_oid *oid,
		     struct kiln_error *err);
/* Delete a ref that must still be expected: 0, STORE_MOVED (or gone) or -1. */
int store_ref_delete(struct store *s, const char *ref, const git_oid *expected,
		     struct kiln_error *err);
/* Names after prefix of every ref under it ("refs/heads/"), sorted; free with store_names_free. */
int store_ref_list(struct store *s, const char *prefix, char ***names, size_t *n,
		   struct kiln_error *err);
void store_names_free(char **names, size_t n);

/*
 * Write a commit holding one file (name, content) with the given parent (NULL
 * for none) and message, author from store_signature(). Does not move any ref.
 */
int store_commit_file(struct store *s, const git_oid *parent, const char *name, const char *content,
		      size_t len, const char *message, git_oid *out, struct kiln_error *err);
/* The content of a file in a commit; caller frees. */
int store_read_file(struct store *s, const git_oid *commit, const char *name, char **out,
		    size_t *len, struct kiln_error *err);

/*
 * Who is writing: KILN_AUTHOR ("Name <email>"), else git config user.name and
 * user.email, else the CI's actor (GITHUB_ACTOR, GITLAB_USER_LOGIN, ...), else
 * user@host. Caller frees.
 */
int store_signature(struct store *s, git_signature **out, struct kiln_error *err);

/* The short form of an oid (7 hex digits) into buf[8]. */
const char *store_short(const git_oid *oid, char buf[8]);
/*
 * Whether the repository holds the object whose full hex id is hex: a plan's
 * state commit that is not there was made with another state repository.
 * Only the object's presence is looked at, never its content.
 */
bool store_has_object(struct store *s, const char *hex);
/* Resolve a commit-ish (full or abbreviated id, ref name) to an oid. */
int store_resolve(struct store *s, const char *spec, git_oid *out, struct kiln_error *err);

/* Ref names for a workspace. */
char *store_branch_ref(const char *workspace);
char *store_lock_ref(const char *workspace);
/* Workspace names: 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
bool store_workspace_name_ok(const char *name);

/*
 * A damaged object was met since the store was opened (a loose object that
 * is truncated, does not inflate or does not hash to its name): fill err
 * with the object, its file and the repair, and return true. Every failed
 * read of the repository asks this first.
 */
bool store_damaged(struct store *s, struct kiln_error *err);
/*
 * The same after reading the object id of the given kind failed with rc; a
 * missing object (GIT_ENOTFOUND: a truncated or removed pack) is damage too.
 */
bool store_object_error(struct store *s, int rc, const char *kind, const git_oid *id,
			struct kiln_error *err);

/* Last libgit2 error message, for kiln_error texts. */
const char *store_git_error(void);

#endif
