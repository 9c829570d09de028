/*
 * runrec.h - the run record (issue 27): one training run kiln started, with
 * its lineage, kept in the state repository beside the workspace's state.
 *
 * Every workspace has a runs ref, refs/kiln/runs/<workspace>, whose commits
 * each hold one file, runs.json: {"kiln_runs": 1, "runs": [RECORD...]},
 * oldest first. Recording or changing a run is one commit on top of the
 * ref's head, by compare-and-swap (store.h), so the runs travel with the
 * state to a remote like the workspace's branch and its locks do.
 *
 * Each record carries record_digest, "sha256:HEX" over its canonical JSON
 * without that field, written by kiln. A record whose digest does not match
 * on read was changed by hand: it is kept and shown, marked edited, and its
 * figures are never trusted for money (the report leaves it out of any sum
 * and names it). The digest detects an edit, it does not stop a forgery by
 * someone who recomputes it; the repository's history keeps every version.
 *
 * No secret, token or environment value is recorded: the command is kept
 * as its program's name and a digest of its arguments, an sbatch script as
 * its file name and a digest of its bytes.
 */
#ifndef KILN_RUNREC_H
#define KILN_RUNREC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

#define RUNREC_FILE "runs.json"
/* A run id: "r-" and 8 lower-case hex digits. */
#define RUNREC_ID_PREFIX "r-"

/* Where a run is in its life. */
enum runrec_state {
	RUNREC_SUBMITTED, /* recorded, not yet known to have started */
	RUNREC_RUNNING,
	RUNREC_COMPLETED, /* exit status 0 */
	RUNREC_FAILED,	  /* a non-zero exit status, or it could not be started */
	RUNREC_CANCELLED,
};

/* What a run's data was: one object store prefix as listed when the run was recorded. */
struct runrec_data {
	char *store;	       /* the spec's store name */
	char *prefix;	       /* "" for the whole store */
	uint64_t objects;      /* keys listed */
	uint64_t bytes;	       /* their sizes summed */
	char *manifest_digest; /* "sha256:HEX" over "KEY\tSIZE\tETAG\n" per key, sorted */
};

/* Where the run came from. */
struct runrec_lineage {
	char *code_commit;  /* the cwd's git HEAD (40 hex), NULL outside a repository */
	bool dirty;	    /* the work tree or index differed from HEAD */
	char *diff_digest;  /* "sha256:HEX" of that diff (a patch, untracked files by name and
			       content digest), NULL when clean */
	struct runrec_data *data;
	size_t ndata;
	char *spec_digest;  /* the spec's, as a plan's (engine.h) */
	char *state_commit; /* the workspace head the run was started against */
	char *image;	    /* the group's image, NULL when the spec names none */
	char **instance_types;
	size_t ntypes;
	int nodes;
	json_t *workload; /* the spec's workload: block as validated, or NULL */
};

/* What the run's nodes run. */
struct runrec_entry {
	char *kind;   /* "sbatch" or "command" */
	char *name;   /* the sbatch file's base name, or the program's */
	int nargs;    /* the command's arguments after the program */
	char *digest; /* "sha256:HEX" of the script's bytes, or of the argv (NUL-separated) */
};

struct runrec {
	char id[16];
	char *name;
	char *workspace, *cluster, *provider, *group;
	bool simulated;
	char *scheduler; /* "slurm" or "none" */
	char *job_id;	 /* the scheduler's, NULL without one */
	enum runrec_state state;
	int nodes, gpus;
	char *gpu_model; /* "H100", NULL when the group has none */
	char *author;
	int64_t created, started, ended; /* seconds since the epoch; 0: not yet */
	bool has_exit;
	int exit_status;
	struct runrec_entry entry;
	/* A simulated run's model, from the provider: its length and its pace (<0: none). */
	int64_t model_seconds;
	double model_tokens_per_s;
	/* Tokens the run reported, -1: no data. */
	double tokens;
	struct runrec_lineage lineage;
	/* Set on read: the record's digest did not match (hand-edited), and why. */
	bool edited;
	char *edited_why;
	char *digest; /* as read (kept for an edited record), else NULL */
};

/* The runs of one workspace, as the runs ref's head holds them. */
struct runrec_list {
	struct runrec *runs;
	size_t n, cap;
	git_oid head;
	bool exists; /* the ref exists */
};

const char *runrec_state_name(enum runrec_state s);
/* 0 and *out, or -1 for a word that is no state. */
int runrec_state_parse(const char *word, enum runrec_state *out);
/* Whether s is an end (completed, failed, cancelled). */
bool runrec_state_ended(enum runrec_state s);

/* A fresh id into id[16]: "r-" and 8 hex digits. */
void runrec_new_id(char id[16]);
/* Whether s has the shape of a run id. */
bool runrec_id_ok(const char *s);

void runrec_release(struct runrec *r);
void runrec_list_release(struct runrec_list *l);

/*
 * The record as JSON (the one run object `kiln runs --json`, `kiln run
 * show --json` and `kiln report --by run` print): with record_digest when
 * for_storage, else with "edited" (and "edited_why") instead. New object.
 */
json_t *runrec_json(const struct runrec *r, bool for_storage);
/*
 * A record read back from JSON: every field checked (hostile input), the
 * digest compared (r->edited). -1 with err naming the field for a record
 * kiln cannot read at all.
 */
int runrec_from_json(const json_t *j, struct runrec *r, struct kiln_error *err);
/* "sha256:HEX" over r's canonical JSON without its digest. Caller frees. */
char *runrec_digest(const struct runrec *r);

/* The runs ref of a workspace: refs/kiln/runs/<workspace>. Caller frees. */
char *runrec_ref(const char *workspace);
/* Read the runs of workspace (none when the ref is absent). -1 with err. */
int runrec_load(struct store *s, const char *workspace, struct runrec_list *out,
		struct kiln_error *err);
/*
 * Record r (a new id is added, a known one replaced) as one commit on the
 * runs ref, retrying on a ref another writer moved. summary is the commit's
 * first line. An edited record keeps the digest it was read with, so a
 * change kiln makes never launders a hand edit. -1 with err.
 */
int runrec_save(struct store *s, const char *workspace, const struct runrec *r,
		const char *summary, struct kiln_error *err);
/* The run of l with id, or NULL with err naming the ids there are. Borrowed. */
struct runrec *runrec_find(struct runrec_list *l, const char *id, struct kiln_error *err);

/*
 * A simulated run's state at now: once its model's seconds have passed
 * since it started it has completed (exit 0), its tokens those seconds'
 * worth. Nothing for a run that is not simulated or has ended.
 */
void runrec_settle(struct runrec *r, int64_t now);

#endif
