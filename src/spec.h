/*
 * spec.h - the cluster spec (format 1) as typed C structures.
 *
 * spec.c turns a YAML file into these structures, checking the shape of every
 * value (unknown keys, types, enums, durations, CIDRs, names) and substituting
 * ${var.NAME}. Checks that relate one part of the spec to another (references,
 * fabric against zones, tier rules) live in validate.c. Every section keeps
 * the YAML node it came from, so later stages can point at FILE:LINE:COL.
 */
#ifndef KILN_SPEC_H
#define KILN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "workload.h"
#include "ydoc.h"

/* The largest spec file kiln reads. */
#define SPEC_MAX_BYTES (1024 * 1024)
#define SPEC_MAX_COUNT 10000
#define SPEC_MAX_NAME 32
/*
 * Clouds allow 50 tags a resource; kiln's own take the rest: at most twelve
 * on an instance (cluster, workspace, address, expires, lineage, owner, and
 * the provider's zones, gang, disk, role, user-data, and the health report
 * the node puts on itself).
 */
#define SPEC_MAX_USER_TAGS 38

enum spec_fabric {
	FABRIC_NONE,
	FABRIC_ENA,
	FABRIC_EFA,
};

enum spec_market {
	MARKET_ON_DEMAND,
	MARKET_SPOT,
};

/* Where a node group's capacity comes from (compute.GROUP.capacity). */
enum spec_capacity_kind {
	CAPACITY_ON_DEMAND, /* the default: launch on demand */
	CAPACITY_SPOT,
	CAPACITY_RESERVATION,	    /* a targeted On-Demand Capacity Reservation */
	CAPACITY_RESERVATION_GROUP, /* a resource group of reservations */
	CAPACITY_BLOCK,		    /* find and buy a Capacity Block */
};

/* The most instances one Capacity Block holds (EC2 user guide, Capacity Blocks). */
#define SPEC_BLOCK_MAX_COUNT 64

struct spec_capacity {
	enum spec_capacity_kind kind;
	char *reservation;	   /* cr-... or the resource group's ARN */
	bool spot_fallback;	   /* spot: {fallback: on-demand} */
	int64_t block_duration;	   /* seconds, whole days */
	int64_t block_start_after; /* unix seconds; 0 = as soon as possible */
	double max_upfront_usd;
	const struct ynode *node;  /* the capacity: value; NULL when not written */
	const struct ynode *block; /* the block: map */
};

enum spec_tier {
	TIER_OBJECT,
	TIER_LUSTRE,
	TIER_NFS,
	TIER_LOCAL, /* the nodes' instance-store NVMe: no cloud resource */
};

enum spec_deletion {
	DELETION_RETAIN,
	DELETION_DELETE,
};

enum spec_scheduler_type {
	SCHEDULER_NONE,
	SCHEDULER_SLURM,
};

/* A name used to refer to another part of the spec, with where it was written. */
struct spec_ref {
	char *name;
	const struct ynode *node;
};

struct spec_kv {
	char *key;
	char *value;
	const struct ynode *node;
};

struct spec_var {
	char *name;
	char *value;
	const struct ynode *node; /* NULL when the value came only from --var */
	bool from_cli;
	bool used;
};

struct spec_ingress {
	int port_from;
	int port_to;
	char *protocol; /* "tcp" or "udp" */
	char *from;	/* CIDR */
	char *description;
	const struct ynode *node;
};

/*
 * One entry of a bootstrap: list (top level, or a group's): a shell command
 * (a string, or {run: CMD}) or a file kiln writes ({file, content, mode}).
 */
enum spec_step_kind {
	STEP_RUN,
	STEP_FILE,
};

struct spec_step {
	enum spec_step_kind kind;
	char *run;     /* STEP_RUN: the command, run by bash */
	char *path;    /* STEP_FILE: an absolute path */
	char *content; /* STEP_FILE */
	char *mode;    /* STEP_FILE: octal, "0644" when not given */
	const struct ynode *node;
};

/* health.gpu: what a node runs over its GPUs at the end of boot, besides counting them. */
enum spec_health_gpu {
	HEALTH_GPU_QUICK, /* a short diagnostic (dcgmi diag -r 1, else nvidia-smi's query) */
	HEALTH_GPU_NONE,  /* count them only */
};

struct spec_disk {
	int size_gb;
	char *type;
	bool encrypted;
	bool allow_unencrypted;
};

/*
 * idle: {gpu_below: 10%, for: 30m, action: down}, at the top level or in a
 * group: `kiln reap` takes the workspace down once its GPUs have stayed
 * under gpu_below for that long (spec_idle.c).
 */
struct spec_idle {
	bool set;
	double gpu_below;    /* percent, more than 0, at most 100; default 10 */
	int64_t for_seconds; /* at least SPEC_METRIC_PERIOD; default 30m */
	/* action: down, the only one: the workspace is destroyed, as by kiln down */
};

/* Seconds between two utilization samples (the CloudWatch agent's default interval). */
#define SPEC_METRIC_PERIOD 60

struct spec_group {
	char *name;
	const struct ynode *key; /* the group's name in the spec */
	const struct ynode *node;
	char *gpu_model; /* upper case, e.g. "H100"; NULL with instance_type */
	int gpu_count;
	char *instance_type;
	int count;
	bool count_set; /* count: was written; else 1, or the workload's (count_derived) */
	bool count_derived;
	bool type_derived; /* neither gpu nor instance_type: the workload's choice */
	char *derived;	   /* what the workload set and why, for the plan; NULL: nothing */
	bool gang;
	bool gang_set;
	enum spec_market market;
	struct spec_capacity capacity;
	char *image;
	struct spec_disk disk;
	struct spec_ref role; /* name NULL when the group has no role */
	bool public;
	bool public_bad;  /* public: was there but not a boolean */
	bool machine_bad; /* gpu or instance_type was reported (or is the workload's and not
			     derived yet): the catalog is not asked */
	/* scheduler: the group's partition (NULL: the group's name) and default: true */
	char *partition;
	const struct ynode *partition_node; /* NULL when not written */
	bool partition_default;
	const struct ynode *default_node; /* NULL when not written */
	struct spec_step *bootstrap;	  /* run after the top-level steps, in order */
	size_t nbootstrap;
	enum spec_health_gpu health_gpu;
	const struct ynode *health_node; /* the health: mapping, NULL when absent */
	struct spec_idle idle;		 /* the group's own, else the top level's applies */
};

struct spec_store {
	char *name;
	const struct ynode *key;
	const struct ynode *node;
	enum spec_tier tier;
	enum spec_deletion deletion;
	bool versioning;
	int64_t expire_noncurrent_after; /* seconds; 0 = never */
	int capacity_gb;
	int throughput_per_tib;
	struct spec_ref import; /* lustre: the object store it imports from */
	char *mount;
	bool encrypted;
	bool allow_unencrypted;
	/* local: the groups whose nodes assemble it; none listed = every group */
	struct spec_ref *groups;
	size_t ngroups;
	const struct ynode *groups_node; /* NULL when not given */
};

/*
 * One statement of a role's `allow:` escape hatch, kept as written (the
 * provider sorts and compiles it): permissions outside kiln's stores, such as
 * pulling images. Actions are "service:Action" or "*"; resources "*" or ARNs.
 */
struct spec_allow {
	char **actions;
	size_t nactions;
	char **resources;
	size_t nresources;
	char *sid; /* NULL when not given */
	const struct ynode *node;
};

struct spec_role {
	char *name;
	const struct ynode *key;
	const struct ynode *node;
	struct spec_ref *read;
	size_t nread;
	struct spec_ref *write;
	size_t nwrite;
	struct spec_allow *allow;
	size_t nallow;
};

/*
 * An audit waiver (top-level `waive:`): findings of rule (narrowed to one
 * resource address or spec path when address is set) are accepted, for the
 * reason given, until the end of the day until (UTC). Whether a waiver is
 * usable (a reason, a date not past, a known rule) is audit.c's to judge:
 * those are findings, not shape errors.
 */
struct spec_waiver {
	char *rule;
	char *reason;  /* NULL when missing or blank */
	char *until;   /* "YYYY-MM-DD", a real date; NULL when absent */
	char *address; /* NULL: every finding of the rule */
	const struct ynode *node;
};

/*
 * One public key of access.ssh_keys: written inline, or read from a file
 * (relative to the spec) when the spec is loaded. Only public keys: a file
 * holding a private key is refused from its first line, never kept.
 */
struct spec_ssh_key {
	char *line;	   /* "TYPE BASE64 [COMMENT]", as authorized_keys takes it */
	char *type;	   /* "ssh-ed25519", "ssh-rsa"... */
	char *fingerprint; /* "SHA256:..." */
	int bits;
	char *file;	/* the file: as written, NULL for an inline key */
	char *identity; /* the absolute path of the private key beside the .pub file, or NULL */
	const struct ynode *node;
};

/*
 * workload: the training run the cluster is for (spec_workload.c,
 * kiln-spec(5) WORKLOAD). w holds what workload_size() takes; a group that
 * omits its count (or its machine) gets it from the sizing at validation.
 */
struct spec_workload {
	bool set;
	struct workload w;
	int64_t checkpoint_every; /* seconds; 0 when not given */
	const struct ynode *node; /* the workload: mapping */
};

/* Sections whose shape was wrong: cross-checks that rely on them are skipped. */
enum spec_broken {
	SPEC_BROKEN_PROVIDER = 1 << 0,
	SPEC_BROKEN_NETWORK = 1 << 1,
	SPEC_BROKEN_COMPUTE = 1 << 2,
	SPEC_BROKEN_STORAGE = 1 << 3,
	SPEC_BROKEN_IAM = 1 << 4,
	SPEC_BROKEN_WORKLOAD = 1 << 5,
};

struct spec {
	char *file;
	struct ydoc *doc;
	const struct ynode *root;
	unsigned broken; /* enum spec_broken bits */

	int format;
	char *cluster;
	struct {
		char *name; /* "aws" or "sim" */
		char *region;
		struct spec_ref *zones;
		size_t nzones;
		char *endpoint;
		const struct ynode *node;
	} provider;
	int64_t ttl;		/* seconds; 0 = no TTL */
	double max_hourly_usd;	/* 0 = no budget */
	double max_upfront_usd; /* what a plan may buy up front (Capacity Blocks); 0 = no limit */
	struct spec_idle idle;
	struct spec_kv *tags;
	size_t ntags;
	struct spec_var *vars;
	size_t nvars, vars_cap; /* *_cap: how many the loader's array has room for */
	struct {
		char *cidr;
		enum spec_fabric fabric;
		struct spec_ingress *ingress;
		size_t ningress;
		const struct ynode *node;
	} network;
	struct spec_group *groups;
	size_t ngroups, groups_cap;
	/* scheduler: {type: slurm, controller: GROUP, kms_key: KEY} (spec_scheduler.c) */
	struct {
		enum spec_scheduler_type type; /* SCHEDULER_NONE when absent */
		struct spec_ref controller;
		/* The key the provider encrypts the scheduler's secrets with, or NULL. */
		struct spec_ref kms_key;
		const struct ynode *node; /* NULL when absent */
	} scheduler;
	struct spec_store *stores;
	size_t nstores, stores_cap;
	struct spec_role *roles;
	size_t nroles;
	struct {
		struct spec_ssh_key *keys;
		size_t nkeys;
		char *user;		  /* NULL: the image's default user */
		char *key_pair;		  /* NULL: none */
		const struct ynode *node; /* NULL when the spec has no access: */
	} access;
	struct spec_waiver *waivers;
	size_t nwaivers;
	const struct ynode *waive_node; /* the waive: list, NULL when absent */
	struct spec_step *bootstrap;	/* top level: every group runs these first */
	size_t nbootstrap;
	struct spec_workload workload;
	/* Names hashed once loaded (spec_index.c); a cache, never the truth. */
	struct spec_index *index;
};

/* A --var NAME=VALUE from the command line. */
struct spec_var_override {
	const char *name;
	const char *value;
};

/* How a cloud names the resources a role's allow: statements grant actions on. */
struct spec_grammar {
	/* NULL when resource is a name in the grammar, else the part at fault. */
	const char *(*resource_fault)(const char *resource);
	/* Whether resource (other than "*") names every resource there is, as "*" does. */
	bool (*resource_is_any)(const char *resource);
	/* For hints: the grammar's form, and an action and a resource it takes. */
	const char *resource_form;    /* "arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE" */
	const char *example_action;   /* "ecr:GetAuthorizationToken" */
	const char *example_resource; /* "arn:aws:ecr:us-east-1:123456789012:repository/train" */
};

/*
 * What the loader knows of a provider kiln has. The caller hands the loader
 * the table (validate_load_* fills it with providers_for_spec()), so the
 * spec stands below the providers and includes none of them.
 */
struct spec_provider {
	const char *name;
	bool simulated;
	/* The provider's defaults (region, zone) once provider: is read; NULL: none. */
	void (*defaults)(struct spec *spec, bool zone_given);
	const struct spec_grammar *grammar; /* NULL: the table's first that has one */
};

struct spec_options {
	const struct spec_var_override *vars;
	size_t nvars;
	/* The providers a spec may name, in the order lists show them. */
	const struct spec_provider *providers;
	size_t nproviders;
};

/*
 * Load and shape-check a spec. Problems go to d; the return is 0 when none
 * of them is an error. *out is set whenever the YAML could be read at all, so
 * validate_spec() can add its cross-checks to the same list; free it with
 * spec_free().
 */
int spec_load_file(struct spec **out, const char *path, const struct spec_options *opts,
		   struct diags *d);
int spec_load_buffer(struct spec **out, const char *file, const char *buf, size_t len,
		     const struct spec_options *opts, struct diags *d);
/*
 * The bytes of a spec file ("-": standard input), at most SPEC_MAX_BYTES,
 * NUL-terminated (caller frees *buf); -1 with the problem in d, as
 * spec_load_file() reports it.
 */
int spec_read_file(const char *path, char **buf, size_t *len, struct diags *d);
/* The name messages give a spec file: the path, or "<stdin>" for "-". */
const char *spec_file_name(const char *path);
void spec_free(struct spec *spec);

/*
 * The spec's names hashed (spec_index.c), so that a group, a store or a role
 * is found by name in constant time: a spec of 10,000 groups asks for names
 * hundreds of thousands of times (every role's stores, every group's role).
 *
 * The loader builds the index once it has read every section
 * (spec_index_build). Whoever pushes a group or a store after that makes the
 * index stale, and a stale index is never read: spec_index_fresh() says so
 * and the finders in spec.c scan the arrays as before.
 */
struct spec_index;

/* (Re)builds spec->index from the spec's arrays as they are now. */
void spec_index_build(struct spec *spec);
void spec_index_free(struct spec_index *ix);

/* Whether spec->index describes the spec's arrays as they are now. */
bool spec_index_fresh(const struct spec *spec);

/* By name, through a fresh index (the caller checked spec_index_fresh). */
const struct spec_group *spec_index_group(const struct spec *spec, const char *name);
const struct spec_store *spec_index_store(const struct spec *spec, const char *name);
const struct spec_role *spec_index_role(const struct spec *spec, const char *name);

/* The stores of tier local, in the spec's order; *n of them. */
const struct spec_store *const *spec_index_locals(const struct spec *spec, size_t *n);


const char *spec_fabric_name(enum spec_fabric f);
const char *spec_tier_name(enum spec_tier t);
const char *spec_market_name(enum spec_market m);
/* Whether EC2 sells a Capacity Block this long (seconds): 1-14 days, then weeks to 182. */
bool spec_block_duration_ok(int64_t seconds);
/* "on-demand", "spot", "reservation", "reservation-group", "block". */
const char *spec_capacity_name(enum spec_capacity_kind k);
/* "an object", "a lustre", "an nfs": for messages. */
const char *spec_tier_with_article(enum spec_tier t);

/*
 * The Slurm partition a group's nodes join: its partition:, else its name;
 * NULL for the controller group and when the spec has no scheduler.
 */
const char *spec_group_partition(const struct spec *spec, const struct spec_group *g);
/* The default partition's group: the one with default: true, else the first partition. */
const struct spec_group *spec_default_partition(const struct spec *spec);

const struct spec_group *spec_group_find(const struct spec *spec, const char *name);
const struct spec_store *spec_store_find(const struct spec *spec, const char *name);
const struct spec_role *spec_role_find(const struct spec *spec, const char *name);
/* Whether the local store s is assembled on group g (its groups:, or every group). */
bool spec_local_on(const struct spec_store *s, const struct spec_group *g);

/* Position of a key's value in a section (or of the section), for diagnostics. */
const struct ynode *spec_value_node(const struct ynode *section, const char *key);

/* [a-z0-9-], at most SPEC_MAX_NAME, not starting or ending with '-': DNS- and IAM-safe. */
bool spec_name_ok(const char *s);

#endif
