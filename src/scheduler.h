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

/* The command run on the controller: one line per partition and node state. */
#define SCHED_SINFO_COMMAND "sinfo --noheader --format='%R %D %T'"
/* ssh's ConnectTimeout, and the deadline of the whole exchange, in seconds. */
#define SCHED_CONNECT_TIMEOUT 5
#define SCHED_DEADLINE 15
/* The most of sinfo's output (and of its standard error) kiln reads. */
#define SCHED_OUTPUT_MAX (64 * 1024)

/*
 * sinfo's output (SCHED_SINFO_COMMAND) as counts per partition:
 *   {"PARTITION": {"joined", "idle", "allocated", "down", "other"}}
 * joined is every node the controller lists in the partition (a dynamic
 * node is listed once its slurmd registered); allocated counts allocated,
 * mixed and completing nodes; down counts down, drained, draining, failing
 * and not responding (a '*' after the state) ones. Hostile input is
 * refused, not guessed at: a line that is not "NAME COUNT STATE", a count
 * out of range, too many lines. New object; NULL with err naming the line.
 */
json_t *sched_parse_sinfo(const char *text, size_t len, struct kiln_error *err);

/*
 * Ask the controller: run SCHED_SINFO_COMMAND on the first node of the
 * spec's scheduler.controller group through ssh, with the configuration
 * `kiln ssh-config` gives for resources' nodes (endpoint: as for
 * access_ssh_config). *counts as sched_parse_sinfo, *node the host name
 * asked (caller frees both). -1 with err saying why the controller could
 * not be asked (no node, no address, ssh's own last words, sinfo's exit
 * status, the deadline), which kiln status shows beside the health count.
 */
int sched_ask_controller(struct engine *e, const json_t *resources, const char *endpoint,
			 json_t **counts, char **node, struct kiln_error *err);

#endif
