/*
 * bootstrap.h - a node group's user data: one #cloud-config document,
 * generated from the spec, a group and what its provider knows (mount
 * sources, expected GPU and EFA counts, how a node reports its health).
 * Shared by aws and sim like expand.h; pure: no I/O, no cloud calls.
 *
 * The document writes one bash script (write_files, /var/lib/kiln/boot.sh)
 * and runs it once (runcmd); on a fabric group it also writes
 * /etc/profile.d/kiln-efa.sh, and on a GPU group of a cloud with a metrics
 * agent that agent's configuration. The script, in order: assembles the local
 * NVMe store (RAID 0 of the instance-store devices found by model), mounts
 * the file systems (fstab with _netdev,nofail, retried), runs the
 * top-level then the group's bootstrap steps, then counts GPUs and EFA
 * devices and reports "healthy: ..." or "unhealthy: REASON" through the
 * provider's report command (kiln:health, contract 2 of issue 14).
 *
 * Values a provider learns only at create (a file system's DNS name, the
 * workspace) are written as placeholders {{kiln:KEY}}: the plan's digest
 * is taken over the document with them, and bootstrap_fill() puts the values in
 * before the launch.
 */
#ifndef KILN_BOOTSTRAP_H
#define KILN_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "catalog.h"
#include "spec.h"
#include "util.h"

/* EC2's limit on user data, before base64. */
#define BOOT_MAX_BYTES 16384
/* What a placeholder may grow to when filled (a DNS name and a mount name). */
#define BOOT_PLACEHOLDER_MAX 160

/* One file system a group mounts. */
struct boot_mount {
	const char *store;   /* the store's name */
	const char *path;    /* the mount point */
	const char *fstype;  /* "lustre", "nfs4", "efs" */
	const char *options; /* mount options, _netdev and nofail included */
	/*
	 * What fstab's first field is ("DNS@tcp:/NAME", "fs-1.efs.R.amazonaws.com:/",
	 * or a placeholder); NULL when the node finds it at boot with find.
	 */
	const char *source;
	/* With source NULL: a shell command printing the source, retried until it does. */
	const char *find;
	const char *why; /* one line, written as a comment: where the source comes from */
	/*
	 * Used instead when the image has the mount helper alt_helper (NULL:
	 * none): amazon-efs-utils' mount.efs mounts EFS by id, over TLS.
	 */
	const char *alt_source, *alt_fstype, *alt_options, *alt_helper;
};

/*
 * A metrics agent a cloud starts on GPU nodes (issue 17): its configuration
 * written as a file, and started at boot where the image has it; where it
 * has not, the boot log says so and the node is no less healthy.
 */
struct boot_agent {
	const char *name;	 /* "the CloudWatch agent", for the log */
	const char *config_path; /* where the configuration is written */
	const char *config;	 /* its text (a JSON document) */
	/* A POSIX shell test true when the image has the agent. */
	const char *installed;
	const char *start; /* shell that starts it from config_path */
};

struct boot_input {
	const struct spec *spec;
	const struct spec_group *group;
	const char *address;	   /* "aws_instance_group.trainers", for the header */
	const char *instance_type; /* resolved */
	const struct boot_mount *mounts;
	size_t nmounts;
	const char *local_mount; /* the local store's mount point on this group, or NULL */
	const char *local_store; /* its name */
	int gpus;		 /* GPUs the type has (catalog) */
	int efa;		 /* EFA devices kiln attaches; 0 off the fabric */
	bool efa_rdma;		 /* FI_EFA_USE_DEVICE_RDMA=1: the type's EFA has RDMA */
	/*
	 * Shell run last with the report as "$1" (contract 2): aws tags the
	 * instance kiln:health; sim writes a file. Must not be NULL.
	 */
	const char *report;
	/*
	 * The node's part in the cluster's scheduler (issue 19): a POSIX shell
	 * script run after the bootstrap steps, before the health report (a
	 * failure is a health problem); NULL without a scheduler.
	 */
	const char *scheduler;
	/* The GPU metrics agent (a GPU group on a cloud that has one), or NULL. */
	const struct boot_agent *gpu_metrics;
	/*
	 * The node TTL (issue 29): a shell function body printing the value of
	 * the instance tag named "$1", returning 3 when the instance has no such
	 * tag and another non-zero status when it cannot tell (aws: the
	 * instance metadata service's instance tags). NULL: no TTL timer.
	 */
	const char *read_tag;
	int64_t ttl_grace; /* seconds past kiln:expires before the node powers off */
	/* The login user and its keys (s-access, issue 15): none while NULL / 0. */
	const char *login_user;
	const char *const *authorized_keys;
	size_t nkeys;
};

/* The document (caller frees). Never fails: the size is bootstrap_check_size's. */
char *bootstrap_document(const struct boot_input *in);
/* "sha256:HEX" of a document (caller frees). */
char *bootstrap_digest(const char *doc);
/*
 * The size a document may reach once filled: its length plus what each
 * placeholder may grow by. -1 with err (naming the group at FILE:LINE:COL)
 * when that is over BOOT_MAX_BYTES.
 */
int bootstrap_check_size(const struct spec *spec, const struct spec_group *g, const char *doc,
			 struct kiln_error *err);
/*
 * doc with every {{kiln:KEY}} replaced by values[KEY] (a JSON object of
 * strings); NULL with err naming the first placeholder without a value.
 */
char *bootstrap_fill(const char *doc, const json_t *values, struct kiln_error *err);
/* The placeholder text for KEY: "{{kiln:KEY}}" (caller frees). */
char *bootstrap_placeholder(const char *key);

/* The local store assembled on g (spec_local_on), or NULL. */
const struct spec_store *bootstrap_local_store(const struct spec *spec, const struct spec_group *g);
/*
 * Whether g mounts the file system s: g's role reads or writes it (a
 * store is mounted where the role can reach it).
 */
bool bootstrap_mounts_store(const struct spec *spec, const struct spec_group *g,
			    const struct spec_store *s);
/*
 * The file systems g mounts (bootstrap_mounts_store), in the spec's order, found
 * through g's role rather than by asking of every store; *n of them (caller
 * frees the array).
 */
const struct spec_store **bootstrap_mounted_stores(const struct spec *spec,
						   const struct spec_group *g, size_t *n);

#endif

/*
 * How a cloud fills a group's document: its health report command, and
 * each file system's source (or finder) on a group, for expand.
 */
struct boot_cloud {
	const char *report;
	/*
	 * m->source or m->find (and m->why) for store s, as new strings the
	 * caller frees; zoned: the store is made after the nodes.
	 */
	void (*source)(const struct spec *spec, const struct spec_store *s, bool zoned,
		       char **source, char **find, char **why);
	/*
	 * An nfs store's mount through a helper, when the image has it
	 * (nfs_helper, NULL: none): its source (a new string), type and options.
	 */
	const char *nfs_helper;
	char *(*nfs_helper_source)(const struct spec_store *s);
	const char *nfs_helper_fstype;
	const char *nfs_helper_options;
	/*
	 * Group g's scheduler script (boot_input's scheduler, caller frees), or
	 * NULL; the hook itself is NULL when the cloud runs no scheduler.
	 */
	char *(*scheduler)(const struct spec *spec, const struct spec_group *g);
	/* The agent publishing GPU metrics on a group with GPUs, or NULL (sim: none). */
	const struct boot_agent *gpu_metrics;
	/* boot_input's read_tag: how a node reads its own tags; NULL: no TTL timer. */
	const char *read_tag;
};

/*
 * The document of group g (caller frees) at address, on type t, with efa
 * EFA devices attached (0 off the fabric), or NULL with err when it would
 * not fit EC2's limit. *mounts (may be NULL) is a new plan note naming what
 * the group mounts and how each source is known, NULL when nothing.
 */
char *bootstrap_group_document(const struct spec *spec, const struct spec_group *g,
			       const char *address, const struct catalog_type *t, int efa,
			       const struct boot_cloud *cloud, bool zoned, char **mounts,
			       struct kiln_error *err);
/* The EFA devices a node of type t gets: one per network card on the fabric, else 0. */
int bootstrap_efa_devices(const struct catalog_type *t, bool efa);
/*
 * A node group resource r's user data: the input user_data (the digest), the
 * document as user_data_text (which the create launches with), and the
 * plan's note on what it mounts. -1 with err (prefix, "aws: ", and the
 * group's FILE:LINE:COL before the message) when it would not fit.
 */
int bootstrap_group_attrs(json_t *r, const char *prefix, const struct spec *spec,
			  const struct spec_group *g, const char *address,
			  const struct catalog_type *t, bool efa, const struct boot_cloud *cloud,
			  bool zoned, struct kiln_error *err);
/*
 * The spec's boot rules, at validate time: a local store on a group whose
 * type has no instance store, a document over EC2's limit; errors in d.
 */
void bootstrap_check_spec(const struct catalog *cat, const struct spec *spec,
			  const struct boot_cloud *cloud, bool zoned, struct diags *d);
/* Where the document writes the node TTL's script and its systemd units. */
#define BOOT_TTL_SCRIPT "/var/lib/kiln/ttl.sh"
#define BOOT_TTL_SERVICE "/etc/systemd/system/kiln-ttl.service"
#define BOOT_TTL_TIMER "/etc/systemd/system/kiln-ttl.timer"
/* NFS 4.1 with the options AWS recommends for EFS, and lustre's, both with _netdev,nofail. */
extern const char boot_nfs_options[];
extern const char boot_lustre_options[];
