/*
 * runop.h - the operations of kiln run, kiln runs and kiln run cancel
 * (issue 27): record a training run with its lineage before it starts,
 * start it (sbatch on the Slurm controller, the command on every node of
 * a group, or the simulation on a simulated provider), read the runs with
 * what their end is known to be, and cancel one.
 *
 * The nodes are reached the way kiln exec reaches them: the system's ssh
 * in batch mode with the configuration kiln ssh-config writes, bounded in
 * time and bytes (scheduler.h). Nothing here prints.
 */
#ifndef KILN_RUNOP_H
#define KILN_RUNOP_H

#include "operation.h"
#include "runrec.h"

/* Where a run started without a scheduler keeps its pid, exit status and log, on each node. */
#define RUNOP_NODE_DIR ".kiln-runs"
/* The deadline of one ssh exchange (starting, cancelling), in seconds. */
#define RUNOP_SSH_DEADLINE 30

/* What kiln run was asked. */
struct runop_request {
	const char *group;  /* NULL: the spec's first group with GPUs (else its first) */
	const char *name;   /* NULL: the entry's name */
	const char *sbatch; /* a batch script to submit, or NULL */
	char **command;	    /* the command and its arguments, when not sbatch */
	int ncommand;
	const char *const *data; /* --data STORE[/PREFIX]: the object stores the run reads */
	size_t ndata;
	bool allow_dirty; /* record a dirty tree (with its diff's digest) rather than refuse */
	const char *code_dir; /* where the training code is: "." */
	const char *endpoint; /* every node at one sshd (ACCESS_ENDPOINT_ENV), or NULL */
};

/*
 * Record the run (state submitted) on the workspace's runs ref, then start
 * it and record how that went: running (with its job id under Slurm), or
 * failed with why. r is an open run (operation_load, operation_open_state) of a
 * workspace with nodes. *out is the record as last saved. -1 with err:
 * before anything was recorded (no node, a dirty tree, an unreadable
 * script), or after a start that failed (the record says so too).
 */
int runop_start(struct op_run *r, const struct runop_request *q, struct runrec *out,
		struct kiln_error *err);

/*
 * The runs of workspace, each as it stands at now: a simulated run's end
 * once its time has passed. -1 with err.
 */
int runop_list(struct store *s, const char *workspace, int64_t now, struct runrec_list *out,
	       struct kiln_error *err);

/* Whether l has a run whose end runop_reap reads: running, started without a scheduler. */
bool runop_needs_reap(const struct runrec_list *l);
/*
 * Read back the end of every running run kiln started without a
 * scheduler: one ssh exchange a node of its group for all its runs, listing
 * the ~/.kiln-runs/ID-RANK.exit files the wrapper writes. A run every rank
 * of which has ended is recorded (a commit on the runs ref, as
 * runrec_save) completed or failed, with the worst (highest) exit status
 * of its ranks and the last rank's end time. -1 with err: a node not
 * reached (its runs stay running; what the others said is recorded).
 */
int runop_reap(struct op_run *r, const char *endpoint, struct kiln_error *err);

/*
 * Cancel the run id: scancel its job, or end the processes kiln started on
 * its nodes, then record it cancelled. *out is the record as saved. -1
 * with err: an unknown id, a run already ended, a node that could not be
 * reached.
 */
int runop_cancel(struct op_run *r, const char *id, const char *endpoint, struct runrec *out,
		 struct kiln_error *err);

/*
 * kiln status's runs: each running run's progress (runprog.h) as JSON, in
 * *out (a new array, empty when none runs). cluster_hourly is what the
 * cluster costs an hour now (< 0: unknown). A hand-edited record is shown
 * with its cost unknown: never trusted for money. -1 with err.
 */
int runop_status(struct op_run *r, int64_t now, double cluster_hourly, json_t **out,
		 struct kiln_error *err);

/* A word shell-quoted for sh -c on a node ('...' with ' as '\''). Caller frees. */
char *runop_shell_quote(const char *word);

#endif
