/*
 * scheduler.h - what the cluster's scheduler itself says about its nodes:
 * for scheduler: slurm, the controller's own count of each partition's
 * nodes, asked over the ssh path `kiln exec` uses (`sinfo` on the
 * controller node), for kiln status.
 *
 * Nothing here prints or prompts: ssh runs in batch mode with a short
 * connect timeout and the whole exchange has a deadline, so an unreachable
 * controller costs seconds and says why.
 */
#ifndef KILN_SCHEDULER_H
#define KILN_SCHEDULER_H

#include <jansson.h>

#include "engine.h"
#include "strbuf.h"

/* The command run on the controller: one line per partition and node state. */
#define SCHED_SINFO_COMMAND "sinfo --noheader --format='%R %D %T'"
/* ssh's ConnectTimeout, and the deadline of the whole exchange, in seconds. */
#define SCHED_CONNECT_TIMEOUT 5
#define SCHED_DEADLINE 15
/* The most of sinfo's output (and of its standard error) kiln reads. */
#define SCHED_OUTPUT_MAX (64 * 1024)

/*
 * sinfo's output (SCHED_SINFO_COMMAND) as counts per partition:
 *   {"PARTITION": {"joined", "idle", "allocated", "down", "other",
 *                  "not_responding"}}
 * not_responding counts the nodes with a '*' after their state (slurmctld
 * has not heard from them: a dynamic node that left in a shrink stays
 * listed as down*); joined every other node the controller lists in the
 * partition (a dynamic node is listed once its slurmd registered), each in
 * one of: allocated (allocated, mixed and completing), down (down, drained,
 * draining, failing), idle, other. Hostile input is refused, not guessed
 * at: a line that is not "NAME COUNT STATE", a count out of range, too many
 * lines. New object; NULL with err naming the line.
 */
json_t *scheduler_parse_sinfo(const char *text, size_t len, struct kiln_error *err);

/*
 * Ask the controller: run SCHED_SINFO_COMMAND on the first node of the
 * spec's scheduler.controller group through ssh, with the configuration
 * `kiln ssh-config` gives for resources' nodes (endpoint: as for
 * access_ssh_config). *counts as scheduler_parse_sinfo, *node the host name
 * asked (caller frees both). -1 with err saying why the controller could
 * not be asked (no node, no address, ssh's own last words, sinfo's exit
 * status, the deadline), which kiln status shows beside the health count.
 */
int scheduler_ask_controller(struct engine *e, const json_t *resources, const char *endpoint,
			     json_t **counts, char **node, struct kiln_error *err);

/* One bounded run of a command (ssh): what it gave back. */
struct sched_run {
	struct strbuf out, errs;
	int status;	  /* waitpid's */
	bool too_long;	  /* past the deadline (deadline_ms): killed */
	bool too_big;	  /* more than SCHED_OUTPUT_MAX on a stream: killed */
	bool poll_failed; /* poll failed (poll_errno): killed */
	int poll_errno;
	int deadline_ms;
};

/*
 * Run av (standard input /dev/null, in a session of its own: no terminal to
 * prompt on, SSH_ASKPASS_REQUIRE=never) with both streams read into r, at
 * most deadline_ms and SCHED_OUTPUT_MAX a stream. Past either bound, or on a
 * poll error, its process group gets SIGTERM and a second later SIGKILL;
 * it is always waited for. r's buffers are the caller's to release. -1
 * with err only when it cannot be started.
 */
int scheduler_run_bounded(char **av, int deadline_ms, struct sched_run *r, struct kiln_error *err);

/*
 * Why r gave no counts, in err: the deadline, the size bound, a poll error,
 * a signal (named), ssh's own last words (exit 255), sinfo missing (127) or
 * its exit status. 0 when it exited 0. node and group name the controller.
 */
int scheduler_run_verdict(const struct sched_run *r, const char *node, const char *group,
			  struct kiln_error *err);

#endif
