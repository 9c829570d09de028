/*
 * aws_launch.h - one RunInstances launch of a node group, shared by
 * aws_nodes.c (the group's create, grow and shrink) and aws_zones.c (which
 * zone a workspace's groups launch in, and moving them there).
 */
#ifndef KILN_AWS_LAUNCH_H
#define KILN_AWS_LAUNCH_H

#include "aws_capacity.h"
#include "aws_int.h"

/* Tags a group's instances carry beside the scope's: what its later launches repeat. */
#define TAG_ZONES "kiln:zones"
#define TAG_GANG "kiln:gang"
#define TAG_DISK "kiln:disk"
/* The digest of the user data the instance was launched with (the input user_data). */
#define TAG_USER_DATA "kiln:user-data"

/* What a launch needs beside the count: from the spec's attrs and the dependencies' ids. */
struct launch {
	const char *address;
	const char *type;
	const char *image;
	char *root_dev;
	long disk_gb;
	const char *disk_type;
	const char *subnet;
	const char *zone;
	const char *sg;
	const char *pg;	     /* placement group name, or NULL */
	const char *profile; /* instance profile name, or NULL */
	const char *role;
	bool efa;
	int efa_interfaces; /* with efa: one per network card, card 0 the primary */
	bool public;
	bool gang;
	char *zones; /* "a,b": the order of preference, kept in a tag */
	/* Capacity (aws_capacity.c): what the launch targets and how it is bought. */
	struct capacity_target cap;
	const char *key_pair; /* KeyName (access.key_pair), or NULL */
	/*
	 * The user data: the document with its placeholders (bootstrap.h),
	 * filled at launch from deps and the scope; or, for a grow, the group's
	 * own as EC2 holds it (base64, owned). NULL: none.
	 */
	const char *user_data_doc;
	const json_t *deps;
	char *user_data_b64;
	const char *user_data_digest; /* the kiln:user-data tag; NULL: none */
};

/*
 * A create's launch from its desired attrs and recorded deps (borrowed:
 * they must outlive l); zone and subnet are set by aws_launch_in.
 * aws_launch_release frees what it holds.
 */
int aws_launch_init(struct prov_ctx *ctx, struct launch *l, const char *address,
		    const json_t *attrs, const json_t *deps, struct kiln_error *err);
void aws_launch_release(struct launch *l);

/*
 * Launch count instances of l in zone (its subnet from deps): the
 * ClientToken is made from token, the zone and count. *ids (may be NULL) is
 * a new array of the instance ids EC2 answered. PROV_CAPACITY when the zone
 * has no capacity for them: nothing was launched.
 */
int aws_launch_in(struct prov_ctx *ctx, struct launch *l, const struct prov_scope *scope,
		  const json_t *deps, const char *zone, long count, const char *token, json_t **ids,
		  struct kiln_error *err);

/* An instance in this state still counts as one of its group's. */
bool aws_launch_alive(const char *state);
/* Every live instance matching filters (all pages of DescribeInstances): a new array. */
int aws_launch_describe(struct prov_ctx *ctx, struct aws_params *filters, json_t **out,
			struct kiln_error *err);
/* Filter.N: the instances that are alive (pending, running, stopping, stopped). */
void aws_launch_state_filter(struct aws_params *p, int n);
/* The root device an image names (BlockDeviceMappings must): *out, caller frees. */
int aws_launch_root_device(struct prov_ctx *ctx, const char *image, char **out,
			   struct kiln_error *err);
/* The EFA interfaces a type takes (one per network card). */
int aws_launch_efa_interfaces(struct prov_ctx *ctx, const char *type, int *out,
			      struct kiln_error *err);
/*
 * RunInstances of count instances of l for scope, its ClientToken made from
 * token, l's zone and token_count; *ids (may be NULL) the launched ids.
 */
int aws_launch_run(struct prov_ctx *ctx, const struct launch *l, const struct prov_scope *scope,
		   long count, const char *token, long token_count, json_t **ids,
		   struct kiln_error *err);
/* The user data EC2 holds for instance id (base64, as launched): *out, caller frees. */
int aws_launch_user_data_of(struct prov_ctx *ctx, const char *id, char **out,
			    struct kiln_error *err);
/* Terminate n of ids from index from; gone already is done. */
int aws_launch_terminate_range(struct prov_ctx *ctx, const json_t *ids, size_t from, size_t n,
			       struct kiln_error *err);
/* Terminate these instances (a JSON array of ids); gone already is done. */
int aws_launch_terminate(struct prov_ctx *ctx, const json_t *ids, struct kiln_error *err);

/* Every live instance of the scope (one DescribeInstances, all pages): a new array. */
int aws_launch_describe_scope(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
			      struct kiln_error *err);

/* aws_zones.c: launch a new group in the workspace's zone, moving what this apply launched. */
int aws_zones_launch(struct prov_ctx *ctx, const struct prov_scope *scope,
		     const struct prov_create *op, struct launch *l, long count,
		     struct kiln_error *err);

#endif
