/*
 * slurm.h - what a cluster with `scheduler: slurm` runs: slurm.conf and
 * gres.conf for a configless controller, and the boot steps of the
 * controller and of the compute nodes, generated from the spec. Pure: no
 * I/O, no cloud named; a provider gives the cloud's facts (the catalog, how
 * a node reads a parameter) and delivers the files.
 *
 * Written for Slurm 22.05 (Debian 12's slurm-wlm): configless operation
 * (SlurmctldParameters=enable_configless, slurmd --conf-server) and dynamic
 * normal nodes (slurmd -Z --conf) that join a partition through a NodeSet
 * of their group's feature, so the controller needs no change when a group
 * grows or shrinks.
 */
#ifndef KILN_SLURM_H
#define KILN_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "catalog.h"
#include "spec.h"
#include "util.h"

/* The most nodes the controller takes when the spec asks for fewer (MaxNodeCount). */
#define SLURM_MIN_NODES 1024

/* One partition: the nodes of one compute group. */
struct slurm_partition {
	const char *name;  /* the partition (partition:, else the group's name) */
	const char *group; /* the group: its nodes' feature and the prefix of their names */
	const char *gpu;   /* GPU model in lower case ("h100"), NULL without GPUs */
	int gpus;	   /* GPUs per node, from the catalog; 0 without */
	int count;	   /* nodes the spec asks for */
	bool is_default;
};

struct slurm_cluster {
	char *name;	  /* the spec's cluster */
	char *controller; /* the controller's group */
	struct slurm_partition *parts;
	size_t nparts;
	char *gpu_lower; /* storage for the parts' gpu names */
};

/*
 * How a node reads a parameter the provider stored for it: a shell command
 * in which the words NAME and the value go to standard output, given by the
 * provider (aws: `aws ssm get-parameter ... --with-decryption`).
 */
struct slurm_fetch {
	/* printf format with one %s (the parameter name): a command writing its value */
	const char *command;
	const char *munge_key; /* the munge key's parameter (base64 of the key) */
	const char *slurm_conf;
	const char *gres_conf;
};

/*
 * The Slurm cluster of a spec with a scheduler: one partition per compute
 * group but the controller, in spec order, GPUs from cat. -1 with err when
 * a group's type cannot be resolved (validate reports it first).
 */
int slurm_cluster_from_spec(struct slurm_cluster *out, const struct spec *spec,
			    const struct catalog *cat, struct kiln_error *err);
void slurm_cluster_free(struct slurm_cluster *c);
/* The partition of a group, or NULL (the controller, a group not in c). */
const struct slurm_partition *slurm_partition_of(const struct slurm_cluster *c, const char *group);

/*
 * slurm.conf without its SlurmctldHost line, which the controller adds at
 * boot (its host name and address are not known before). Caller frees.
 */
char *slurm_conf(const struct slurm_cluster *c);
/* gres.conf: each GPU group's devices, by the names its nodes take. Caller frees. */
char *slurm_gres_conf(const struct slurm_cluster *c);
/*
 * The node name of a partition's node, as its boot script sets it, written
 * as a shell expression of $addr (its IPv4 address): GROUP-C-D.
 */
char *slurm_node_name_expr(const struct slurm_partition *p);
/*
 * The slurmd options a compute node starts with: dynamic (-Z), the
 * controller as configuration server, its GPUs as GRES and its group as
 * feature. ctl is a shell word (an address, or "$ctl"). Caller frees.
 */
char *slurm_slurmd_args(const struct slurm_partition *p, const char *ctl);
/*
 * The POSIX shell script (#!/bin/sh) the controller runs at boot: fetch the
 * munge key and both files, add SlurmctldHost, start munged and slurmctld,
 * and a loop that reconfigures when the files' parameters change. Each runs
 * from a systemd unit it enables (the package's, with a drop-in for
 * slurmctld; kiln-slurm-sync.service runs this script with "sync"), so a
 * reboot brings them back; without systemd, the units' ExecStart lines run.
 */
char *slurm_controller_script(const struct slurm_cluster *c, const struct slurm_fetch *f);
/*
 * The POSIX shell script a node of partition p runs at boot: fetch the
 * munge key, find the controller with ctl_find (a shell command printing
 * its address, retried while it prints nothing or "None"), take its node
 * name, start munged and slurmd -Z against the controller: slurmd from the
 * package's unit with a drop-in naming its options, enabled for every boot.
 */
char *slurm_node_script(const struct slurm_partition *p, const struct slurm_fetch *f,
			const char *ctl_find);

#endif
