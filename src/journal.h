/*
 * journal.h - apply's checkpoints: one line per recorded change, on local
 * disk, so an apply killed before its commit loses nothing it learned.
 *
 * .kiln/journal/<workspace>-<store hash>.jsonl; the first line names the
 * state commit the apply started from and the state's lineage (which a first
 * apply, with no commit yet, made up: replay restores it), each later line is
 * {"address": A, "resource": R | null}. The next plan or apply on the same
 * head replays it over the recorded state (a torn last line is ignored); on
 * another head it is stale and dropped. Sensitive values are written as null:
 * the journal never holds a secret. The cloud's tags remain the last word:
 * what the journal missed, refresh adopts.
 */
#ifndef KILN_JOURNAL_H
#define KILN_JOURNAL_H

#include <stdio.h>

#include <jansson.h>

#include "util.h"

struct journal;

/* The journal's path for a store location and workspace. Caller frees. */
char *journal_path(const char *store_location, const char *workspace);

/*
 * Replay the journal at path over state's resources when it was started from
 * head (hex, or NULL for a workspace with no commit yet). Returns the number
 * of changes replayed (0 when there is no journal), -2 when the journal is
 * stale (another head), -1 with err when unreadable. *overlay (optional)
 * receives address -> resource|null of what was replayed.
 */
int journal_replay(const char *path, const char *head, json_t *state, json_t **overlay,
		   struct kiln_error *err);

/* Start a journal (replacing any), carrying over overlay's entries. */
int journal_open(struct journal **out, const char *path, const char *head, const char *lineage,
		 const json_t *overlay, struct kiln_error *err);
/* Append one change; errors are reported once on stderr, not fatal. */
void journal_record(struct journal *j, const char *address, const json_t *resource);
/* Close; remove the file when the apply's commit landed. */
void journal_close(struct journal *j, int remove_it);

#endif
