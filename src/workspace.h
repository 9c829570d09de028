/*
 * workspace.h - one workspace's state: its branch head, its state.json, its
 * lock, and the one way to record a change (a commit on top of the head this
 * run started from).
 *
 * Every command that changes state goes: workspace_open, workspace_lock
 * (which re-reads the head, since it may have moved while we waited),
 * change the document, workspace_commit, workspace_free (which unlocks).
 */
#ifndef KILN_WORKSPACE_H
#define KILN_WORKSPACE_H

#include <jansson.h>

#include "lock.h"
#include "store.h"

#define WORKSPACE_DEFAULT "default"
/* What store_workspace_name_ok() accepts, for hints. */
#define WORKSPACE_NAME_RULE                                                                        \
	"use 1 to 64 of letters, digits, '.', '_' and '-', not starting with '.' or '-', and "     \
	"neither HEAD nor only hex digits"

struct workspace {
	struct store *store;
	char *name;
	char *branch;
	bool exists;   /* the branch exists */
	git_oid head;  /* valid when exists */
	json_t *state; /* the head's state.json, parsed and checked (its provider's types
			  too); NULL when !exists */
	struct lock *lock;
	char *archive; /* after workspace_delete_branch: the ref that keeps its history */
};

/* The workspace a command means: name (from -w), else $KILN_WORKSPACE, else "default". */
const char *workspace_name(const char *name);
/* name NULL: as workspace_name(). Reads the head (after a sync for remotes). */
int workspace_open(struct workspace **out, struct store *s, const char *name,
		   struct kiln_error *err);
/* Error unless the workspace exists (names the store and how to list workspaces). */
int workspace_require(const struct workspace *w, struct kiln_error *err);
/* That error for a workspace not opened: its name and the store it is missing from. */
void workspace_missing(const struct store *s, const char *name, struct kiln_error *err);
int workspace_lock(struct workspace *w, const struct lock_options *opts, struct kiln_error *err);
/*
 * Record state as the next commit: canonical JSON, serial set to the head's
 * plus one unless keep_serial, message = summary, a blank line, then trailers
 * (Kiln-Serial, Kiln-Lineage, Kiln-Version, the lock takeover if any, extra).
 * Compare-and-swap on the head read by open/lock: a moved head is an error
 * naming both commits.
 */
int workspace_commit(struct workspace *w, json_t *state, bool keep_serial, const char *summary,
		     const char *const *extra, size_t nextra, struct kiln_error *err);
/*
 * Create the workspace, which must not exist yet, with an empty state: one
 * commit whose message is summary (`kiln workspace new`, `kiln init`).
 */
int workspace_create(struct workspace *w, const char *summary, struct kiln_error *err);
/*
 * Delete the branch (compare-and-swap on the head), first pointing
 * refs/kiln/archive/<ws>/<time> at its head so the history stays.
 */
int workspace_delete_branch(struct workspace *w, struct kiln_error *err);
/* Unlock (if locked) and free. Returns -1 when the unlock failed. */
int workspace_close(struct workspace *w, struct kiln_error *err);

/* "cluster/workspace" for summaries. Caller frees. */
char *workspace_label(const struct workspace *w, const json_t *state);

#endif
