/*
 * sim_types.c - the sim's resource types: their inputs with update policies,
 * their id prefixes, and the computed attributes each one gets when it is
 * created (ids, ARNs, DNS names, the role policy document). Node groups,
 * which need capacity, are in sim_nodes.c.
 *
 * The engine diffs the inputs listed here and obeys their policy; every
 * other live attribute is computed and only recorded.
 */
#include "sim_int.h"
#include "jsonw.h"
#include "jsonc.h"

#include <stdlib.h>
#include <string.h>

enum {
	K_NETWORK,
	K_PLACEMENT,
	K_NODES,
	K_BUCKET,
	K_LUSTRE,
	K_NFS,
	K_ROLE,
	K_POLICY,
	K_BLOCK,
};

static const char *const retain_why = "kiln's own rule, what destroy does with the data";

static const struct prov_attr network_attrs[] = {
    {"cidr", POLICY_REPLACE, false, "a VPC's address range is fixed when it is created"},
    {"fabric", POLICY_REPLACE, false, "network interfaces are chosen when the network is built"},
    {"ingress", POLICY_LIVE, false, "security group rules change in place"},
    {"region", POLICY_REPLACE, false, "a network lives in one region"},
};

static const struct prov_attr placement_attrs[] = {
    {"strategy", POLICY_REPLACE, false, "a placement group's strategy is fixed at creation"},
};

static const struct prov_attr nodes_attrs[] = {
    {"instance_type", POLICY_STOP, false, "the nodes stop, change type and start again"},
    {"count", POLICY_LIVE, false, "nodes are added or removed in place"},
    {"gang", POLICY_LIVE, false, "it only decides how later capacity requests are placed"},
    {"market", POLICY_REPLACE, false, "a node is bought on-demand or spot when it launches"},
    {"image", POLICY_REPLACE, false, "nodes boot their image once; a new image is new nodes"},
    {"zones", POLICY_REPLACE, false, "nodes cannot move between zones"},
    {"disk_size_gb", POLICY_LIVE, false, "volumes grow in place (they never shrink)"},
    {"disk_type", POLICY_LIVE, false, "volume types change in place"},
    {"role", POLICY_LIVE, false, "the instance profile is swapped in place"},
    {"public", POLICY_REPLACE, false, "a public address is given to a node at launch"},
    {"efa", POLICY_REPLACE, false, "EFA interfaces are attached at launch"},
    {"placement_group", POLICY_REPLACE, false, "nodes join a placement group at launch"},
    {"capacity", POLICY_REPLACE, false,
     "as on EC2: a node goes into a reservation, a Capacity Block or the spot market only when "
     "it is launched, so the group is launched again into its new capacity"},
    {"capacity_reservation", POLICY_REPLACE, false,
     "as on EC2: a node goes into a reservation only when it is launched, so the group is "
     "launched again into the new reservation"},
    {"spot_fallback", POLICY_LIVE, false, "it only decides how later launches are made"},
    {"key_pair", POLICY_REPLACE, false, "a node is given its key pair at launch"},
    {"user_data", POLICY_REPLACE, false,
     "as on EC2: user data runs once, at a node's first boot, so new user data is new nodes"},
};

static const struct prov_attr bucket_attrs[] = {
    {"versioning", POLICY_LIVE, false, "versioning is switched in place"},
    {"expire_noncurrent_after", POLICY_LIVE, false, "lifecycle rules change in place"},
    {"encrypted", POLICY_REPLACE, false, "default encryption is set when the bucket is made"},
    {"deletion", POLICY_LIVE, false, retain_why},
};

static const struct prov_attr lustre_attrs[] = {
    {"capacity_gb", POLICY_LIVE, false, "Lustre storage grows in place (it never shrinks)"},
    {"throughput_per_tib", POLICY_REPLACE, false, "the deployment type is fixed at creation"},
    {"import", POLICY_REPLACE, false, "the data repository is linked at creation"},
    {"mount", POLICY_LIVE, false, "only where the nodes mount it"},
    {"encrypted", POLICY_REPLACE, false, "encryption at rest is fixed at creation"},
    {"deletion", POLICY_LIVE, false, retain_why},
};

static const struct prov_attr nfs_attrs[] = {
    {"mount", POLICY_LIVE, false, "only where the nodes mount it"},
    {"encrypted", POLICY_REPLACE, false, "encryption at rest is fixed at creation"},
    {"deletion", POLICY_LIVE, false, retain_why},
};

static const struct prov_attr role_attrs[] = {
    {"service", POLICY_REPLACE, false, "a role's trust policy names its service at creation"},
};

static const struct prov_attr block_attrs[] = {
    {"instance_type", POLICY_REPLACE, false, "a Capacity Block is bought for one instance type"},
    {"count", POLICY_REPLACE, false, "a Capacity Block holds the instances it was bought for"},
    {"duration_hours", POLICY_REPLACE, false, "a Capacity Block's window is fixed when bought"},
    {"start_after", POLICY_LIVE, false, "it only decided which block was bought"},
    {"max_upfront_usd", POLICY_LIVE, false, "it only decided which block was bought"},
    {"zones", POLICY_LIVE, false, "it only decided which block was bought"},
};

static const struct prov_attr policy_attrs[] = {
    {"read", POLICY_LIVE, false, "a policy document is rewritten in place"},
    {"write", POLICY_LIVE, false, "a policy document is rewritten in place"},
    {"nfs_read", POLICY_LIVE, false, "a policy document is rewritten in place"},
    {"nfs_write", POLICY_LIVE, false, "a policy document is rewritten in place"},
    {"allow", POLICY_LIVE, false, "a policy document is rewritten in place"},
};

/* --- computed attributes --- */

/* NAME of the resource's address TYPE.NAME. */
static const char *doc_name(const json_t *doc)
{
	const char *addr = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
	const char *dot = addr ? strchr(addr, '.') : NULL;

	return dot ? dot + 1 : "unnamed";
}

static const char *doc_id(const json_t *doc)
{
	return sim_doc_str(doc, NULL, "id");
}

static void set_str(json_t *doc, const char *key, char *value)
{
	json_object_set_new(json_object_get(doc, "attrs"), key, json_string(value));
	free(value);
}

static int network_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
			   struct kiln_error *err)
{
	json_t *subnets = json_array();
	char id[SIM_ID_MAX];
	size_t i;

	(void)scope;
	(void)err;
	for (i = 0; i < ctx->nzones; i++) {
		sim_new_id("subnet", id);
		json_array_append_new(subnets, json_string(id));
	}
	json_object_set_new(json_object_get(doc, "attrs"), "subnet_ids", subnets);
	sim_new_id("sg", id);
	set_str(doc, "security_group_id", xstrdup(id));
	set_str(doc, "vpc_id", xstrdup(doc_id(doc)));
	return PROV_OK;
}

static int placement_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
			     struct kiln_error *err)
{
	(void)ctx;
	(void)err;
	set_str(doc, "group_name", xasprintf("%s-%s", scope->cluster, doc_name(doc)));
	return PROV_OK;
}

static int bucket_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
			  struct kiln_error *err)
{
	/* Bucket names are global: the id's digits keep two workspaces apart. */
	char *bucket =
	    xasprintf("%s-%s-%.8s", scope->cluster, doc_name(doc), strchr(doc_id(doc), '-') + 1);

	(void)ctx;
	(void)err;
	set_str(doc, "arn", xasprintf("arn:sim:s3:::%s", bucket));
	set_str(doc, "bucket", bucket);
	return PROV_OK;
}

static int lustre_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
			  struct kiln_error *err)
{
	char mount_name[9];

	(void)scope;
	(void)err;
	sim_random_hex(mount_name, 8);
	set_str(
	    doc, "arn",
	    xasprintf("arn:sim:fsx:%s:%s:file-system/%s", ctx->region, SIM_ACCOUNT, doc_id(doc)));
	set_str(doc, "dns_name", xasprintf("%s.fsx.%s.sim.invalid", doc_id(doc), ctx->region));
	set_str(doc, "mount_name", xstrdup(mount_name));
	return PROV_OK;
}

/* Lustre grows in place and never shrinks, as FSx does. */
static int lustre_updated(struct prov_ctx *ctx, json_t *doc, const json_t *before,
			  const char *const *changed, size_t n, struct kiln_error *err)
{
	const json_t *was = json_object_get(before, "capacity_gb");
	const json_t *now = json_object_get(json_object_get(doc, "attrs"), "capacity_gb");

	(void)ctx;
	(void)changed;
	(void)n;
	if (json_is_integer(was) && json_is_integer(now) &&
	    json_integer_value(now) < json_integer_value(was)) {
		kiln_error_set(
		    err,
		    "sim: InvalidParameterValue (simulated): a Lustre file system cannot "
		    "shrink (capacity_gb %lld -> %lld)",
		    (long long)json_integer_value(was), (long long)json_integer_value(now));
		return PROV_ERROR;
	}
	return PROV_OK;
}

static int nfs_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
		       struct kiln_error *err)
{
	(void)scope;
	(void)err;
	set_str(doc, "arn",
		xasprintf("arn:sim:elasticfilesystem:%s:%s:file-system/%s", ctx->region,
			  SIM_ACCOUNT, doc_id(doc)));
	set_str(doc, "dns_name", xasprintf("%s.efs.%s.sim.invalid", doc_id(doc), ctx->region));
	return PROV_OK;
}

static int role_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
			struct kiln_error *err)
{
	char *name =
	    xasprintf("%s-%s-%.8s", scope->cluster, doc_name(doc), strchr(doc_id(doc), '-') + 1);

	(void)ctx;
	(void)err;
	set_str(doc, "arn", xasprintf("arn:sim:iam::%s:role/%s", SIM_ACCOUNT, name));
	set_str(doc, "role_name", name);
	return PROV_OK;
}

/*
 * --- the role policy: exact ARNs of the stores it names, then the role's
 * allow statements as written ---
 */

struct grants {
	json_t *object_read, *object_write, *fs_read, *fs_write; /* arrays of ARNs */
};

/* Which scope and role a policy is compiled for, and how a missing store is taken. */
struct policy_for {
	struct prov_ctx *ctx;
	const char *cluster, *workspace, *role;
	/*
	 * Compiling desired attrs for the plan: stores are looked up without the
	 * lock, and one not made yet is named by the pattern its bucket ARN will
	 * match (arn:sim:s3:::CLUSTER-NAME-*), or an nfs store as "(known after
	 * apply: sim_nfs.NAME)", rather than refused.
	 */
	bool planning;
};

/*
 * The ARN of store name in the policy's scope, and its kind (K_BUCKET,
 * K_LUSTRE, K_NFS); nfs: the name is one of nfs_read or nfs_write.
 */
static int store_arn(const struct policy_for *pf, const char *name, bool nfs, char **arn, int *kind,
		     struct kiln_error *err)
{
	static const int kinds[] = {K_BUCKET, K_LUSTRE, K_NFS};
	size_t i;

	for (i = nfs ? 2 : 0; i < ARRAY_SIZE(kinds); i++) {
		const struct sim_kind *k = &sim_kinds[kinds[i]];
		char *addr = xasprintf("%s.%s", k->type, name);
		json_t *store = NULL;
		int rc;

		if (pf->planning) {
			rc = sim_find_planned(pf->ctx, k, pf->cluster, pf->workspace, addr, &store,
					      err);
		} else {
			rc = sim_find_address(pf->ctx, k, pf->cluster, pf->workspace, addr, &store,
					      err);
		}
		free(addr);
		if (rc == PROV_NOTFOUND)
			continue;
		if (rc != PROV_OK)
			return rc;
		*arn = xstrdup(
		    sim_doc_str(store, "attrs", "arn") ? sim_doc_str(store, "attrs", "arn") : "");
		*kind = kinds[i];
		json_decref(store);
		return PROV_OK;
	}
	/* Not made yet: a bucket by the pattern its ARN will match, a file system as aws says. */
	if (pf->planning) {
		*arn = nfs ? xasprintf("(known after apply: sim_nfs.%s)", name)
			   : xasprintf("arn:sim:s3:::%s-%s-*", pf->cluster, name);
		*kind = nfs ? K_NFS : K_BUCKET;
		return PROV_OK;
	}
	kiln_error_set(err,
		       "sim: NoSuchEntity (simulated): the policy of role '%s' names store '%s', "
		       "which does not exist in %s/%s",
		       pf->role, name, pf->cluster, pf->workspace);
	return PROV_ERROR;
}

static int grant_all(const struct policy_for *pf, const json_t *attrs, const char *key, bool write,
		     bool nfs, struct grants *g, struct kiln_error *err)
{
	const json_t *names = json_object_get(attrs, key);
	size_t i;

	if (json_is_null(names) || !names)
		return PROV_OK;
	if (!json_is_array(names)) {
		kiln_error_set(err,
			       "sim: InvalidParameterValue (simulated): %s must be a list of store "
			       "names",
			       key);
		return PROV_ERROR;
	}
	for (i = 0; i < json_array_size(names); i++) {
		const char *name = json_string_value(json_array_get(names, i));
		char *arn = NULL;
		int kind = K_BUCKET;
		bool bucket;
		json_t *to;

		if (!name) {
			kiln_error_set(err,
				       "sim: InvalidParameterValue (simulated): %s must be a list "
				       "of store names",
				       key);
			return PROV_ERROR;
		}
		if (store_arn(pf, name, nfs, &arn, &kind, err) != PROV_OK)
			return PROV_ERROR;
		/* Lustre clients mount without IAM: nothing to grant, as on aws. */
		if (kind == K_LUSTRE) {
			free(arn);
			continue;
		}
		bucket = kind == K_BUCKET;
		to = bucket ? (write ? g->object_write : g->object_read)
			    : (write ? g->fs_write : g->fs_read);
		json_array_append_new(to, json_string(arn));
		if (bucket) {
			char *objects = xasprintf("%s/*", arn);

			json_array_append_new(to, json_string(objects));
			free(objects);
		}
		free(arn);
	}
	return PROV_OK;
}

static void statement(json_t *stmts, const char *sid, json_t *actions, json_t *resources)
{
	if (json_array_size(resources) > 0)
		json_array_append_new(stmts,
				      json_pack("{s:s, s:s, s:o, s:O}", "Sid", sid, "Effect",
						"Allow", "Action", actions, "Resource", resources));
	else
		json_decref(actions);
}

/* A non-empty array of non-empty strings. */
static bool strings_ok(const json_t *v)
{
	const json_t *x;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return false;
	json_array_foreach(v, i, x)
	{
		if (!json_string_value(x) || !*json_string_value(x))
			return false;
	}
	return true;
}

/*
 * The allow statements, taken verbatim (the sim cannot judge another
 * cloud's ARNs): each {actions, resources, sid?}; IAM's Sid rule applies.
 */
static int grant_allow(const json_t *attrs, json_t *stmts, struct kiln_error *err)
{
	const json_t *allow = json_object_get(attrs, "allow"), *a;
	size_t i;

	if (!allow || json_is_null(allow))
		return PROV_OK;
	if (!json_is_array(allow))
		goto bad;
	json_array_foreach(allow, i, a)
	{
		const json_t *sid = json_object_get(a, "sid");
		json_t *st;

		if (!json_is_object(a) || !strings_ok(json_object_get(a, "actions")) ||
		    !strings_ok(json_object_get(a, "resources")) ||
		    (sid &&
		     (!json_string_value(sid) || !*json_string_value(sid) ||
		      strspn(json_string_value(sid),
			     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") !=
			  strlen(json_string_value(sid)))))
			goto bad;
		st = json_pack("{s:s, s:O, s:O}", "Effect", "Allow", "Action",
			       json_object_get(a, "actions"), "Resource",
			       json_object_get(a, "resources"));
		if (sid)
			json_object_set_new(st, "Sid", jsonc_share(sid));
		json_array_append_new(stmts, st);
	}
	return PROV_OK;
bad:
	kiln_error_set(err, "sim: MalformedPolicyDocument (simulated): allow must be a list of "
			    "{actions: [..], resources: [..], sid?} with non-empty lists and a sid "
			    "of letters and digits");
	return PROV_ERROR;
}

static int policy_text(const struct policy_for *pf, const json_t *attrs, char **out,
		       struct kiln_error *err)
{
	struct grants g = {json_array(), json_array(), json_array(), json_array()};
	json_t *stmts = json_array(), *policy;
	int rc;

	*out = NULL;
	rc = grant_all(pf, attrs, "read", false, false, &g, err);
	if (rc == PROV_OK)
		rc = grant_all(pf, attrs, "write", true, false, &g, err);
	if (rc == PROV_OK)
		rc = grant_all(pf, attrs, "nfs_read", false, true, &g, err);
	if (rc == PROV_OK)
		rc = grant_all(pf, attrs, "nfs_write", true, true, &g, err);
	if (rc != PROV_OK) {
		rc = PROV_ERROR;
		goto out;
	}
	statement(stmts, "ObjectRead", json_pack("[s, s]", "sim:GetObject", "sim:ListBucket"),
		  g.object_read);
	statement(stmts, "ObjectWrite",
		  json_pack("[s, s, s, s]", "sim:DeleteObject", "sim:GetObject", "sim:ListBucket",
			    "sim:PutObject"),
		  g.object_write);
	statement(stmts, "FileSystemRead", json_pack("[s]", "sim:ClientMount"), g.fs_read);
	statement(stmts, "FileSystemWrite",
		  json_pack("[s, s]", "sim:ClientMount", "sim:ClientWrite"), g.fs_write);
	rc = grant_allow(attrs, stmts, err);
	if (rc != PROV_OK)
		goto out;
	policy = json_pack("{s:s, s:O}", "Version", "2012-10-17", "Statement", stmts);
	*out = jsonw_dumps(policy, JSON_COMPACT | JSON_SORT_KEYS, NULL);
	json_decref(policy);
out:
	json_decref(stmts);
	json_decref(g.object_read);
	json_decref(g.object_write);
	json_decref(g.fs_read);
	json_decref(g.fs_write);
	return rc;
}

char *sim_role_policy_compile(struct prov_ctx *ctx, const struct prov_scope *scope,
			      const json_t *attrs)
{
	struct policy_for pf = {ctx, scope->cluster, scope->workspace, "", true};
	struct kiln_error err;
	char *text;

	return policy_text(&pf, attrs, &text, &err) == PROV_OK ? text : NULL;
}

char *sim_role_policy(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      const json_t *attrs, bool live)
{
	const char *held;

	if (strcmp(type, sim_kinds[K_POLICY].type) != 0)
		return NULL;
	if (!live)
		return sim_role_policy_compile(ctx, scope, attrs);
	held = json_string_value(json_object_get(attrs, "policy_document"));
	return held ? xstrdup(held) : NULL;
}

static int policy_document(struct prov_ctx *ctx, json_t *doc, struct kiln_error *err)
{
	struct policy_for pf = {ctx, sim_doc_str(doc, "sim", "cluster"),
				sim_doc_str(doc, "sim", "workspace"), doc_name(doc), false};
	json_t *role = NULL;
	char *role_addr = xasprintf("sim_role.%s", doc_name(doc)), *text;
	const char *arn;
	int rc;

	rc = sim_find_address(ctx, &sim_kinds[K_ROLE], pf.cluster, pf.workspace, role_addr, &role,
			      err);
	if (rc == PROV_OK)
		rc = policy_text(&pf, json_object_get(doc, "attrs"), &text, err);
	if (rc != PROV_OK) {
		rc = PROV_ERROR;
		goto out;
	}
	set_str(doc, "policy_document", text);
	arn = sim_doc_str(role, "attrs", "arn");
	set_str(doc, "role_arn", xstrdup(arn ? arn : ""));
	set_str(doc, "policy_name", xasprintf("%s-%s", pf.cluster, doc_name(doc)));
out:
	json_decref(role);
	free(role_addr);
	return rc;
}

static int policy_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
			  struct kiln_error *err)
{
	(void)scope;
	return policy_document(ctx, doc, err);
}

static int policy_updated(struct prov_ctx *ctx, json_t *doc, const json_t *before,
			  const char *const *changed, size_t n, struct kiln_error *err)
{
	(void)before;
	(void)changed;
	(void)n;
	return policy_document(ctx, doc, err);
}

const struct sim_kind sim_kinds[SIM_NTYPES] = {
    [K_NETWORK] = {"sim_network", "vpc", false, network_attrs, ARRAY_SIZE(network_attrs),
		   network_created, NULL, NULL},
    [K_PLACEMENT] = {"sim_placement_group", "pg", false, placement_attrs,
		     ARRAY_SIZE(placement_attrs), placement_created, NULL, NULL},
    [K_NODES] = {"sim_node_group", "ng", true, nodes_attrs, ARRAY_SIZE(nodes_attrs),
		 sim_nodes_created, sim_nodes_updated, sim_nodes_removed},
    [K_BUCKET] = {"sim_bucket", "bkt", false, bucket_attrs, ARRAY_SIZE(bucket_attrs),
		  bucket_created, NULL, NULL},
    [K_LUSTRE] = {"sim_lustre", "fs", true, lustre_attrs, ARRAY_SIZE(lustre_attrs), lustre_created,
		  lustre_updated, NULL},
    [K_NFS] = {"sim_nfs", "fsn", true, nfs_attrs, ARRAY_SIZE(nfs_attrs), nfs_created, NULL, NULL},
    [K_ROLE] = {"sim_role", "role", false, role_attrs, ARRAY_SIZE(role_attrs), role_created, NULL,
		NULL},
    [K_POLICY] = {"sim_role_policy", "pol", false, policy_attrs, ARRAY_SIZE(policy_attrs),
		  policy_created, policy_updated, NULL},
    [K_BLOCK] = {"sim_capacity_block", "cr", false, block_attrs, ARRAY_SIZE(block_attrs),
		 sim_block_created, NULL, NULL},
};

/*
 * prov_type's functions carry no type, so each type gets six one-line
 * wrappers that pass its kind to the generic operations in sim_ops.c.
 */
#define SIM_OPS(fn, K)                                                                             \
	static int fn##_list(struct prov_ctx *c, const struct prov_scope *s, const char *p,        \
			     json_t **o, char **n, struct kiln_error *e)                           \
	{                                                                                          \
		return sim_op_list(c, &sim_kinds[K], s, p, o, n, e);                               \
	}                                                                                          \
	static int fn##_read(struct prov_ctx *c, const char *id, json_t **o, struct kiln_error *e) \
	{                                                                                          \
		return sim_op_read(c, &sim_kinds[K], id, o, e);                                    \
	}                                                                                          \
	static int fn##_create(struct prov_ctx *c, const struct prov_scope *s,                     \
			       const struct prov_create *op, json_t **o, struct kiln_error *e)     \
	{                                                                                          \
		return sim_op_create(c, &sim_kinds[K], s, op, o, e);                               \
	}                                                                                          \
	static int fn##_update(struct prov_ctx *c, const struct prov_scope *s, const char *id,     \
			       json_t *a, const char *const *ch, size_t n, json_t **o,             \
			       struct kiln_error *e)                                               \
	{                                                                                          \
		(void)s;                                                                           \
		return sim_op_update(c, &sim_kinds[K], id, a, ch, n, o, e);                        \
	}                                                                                          \
	static int fn##_delete(struct prov_ctx *c, const char *id, struct kiln_error *e)           \
	{                                                                                          \
		return sim_op_delete(c, &sim_kinds[K], id, e);                                     \
	}                                                                                          \
	static int fn##_wait(struct prov_ctx *c, enum prov_wait_for w, struct prov_wait *ids,      \
			     size_t n, struct kiln_error *e)                                       \
	{                                                                                          \
		return sim_op_wait(c, &sim_kinds[K], w, ids, n, e);                                \
	}

/* The wrappers' prefix is the type's name. */
/* clang-format off */
#define SIM_TYPE(fn, K, attrs)                                                                     \
	[K] = {#fn, attrs, ARRAY_SIZE(attrs), fn##_list, fn##_read, fn##_create, fn##_update,     \
	       fn##_delete, fn##_wait}
/* clang-format on */

SIM_OPS(sim_network, K_NETWORK)
SIM_OPS(sim_placement_group, K_PLACEMENT)
SIM_OPS(sim_node_group, K_NODES)
SIM_OPS(sim_bucket, K_BUCKET)
SIM_OPS(sim_lustre, K_LUSTRE)
SIM_OPS(sim_nfs, K_NFS)
SIM_OPS(sim_role, K_ROLE)
SIM_OPS(sim_role_policy, K_POLICY)
SIM_OPS(sim_capacity_block, K_BLOCK)

static int sim_node_group_replace(struct prov_ctx *c, const char *id, const char *const *nodes,
				  size_t n, json_t **o, struct kiln_error *e)
{
	return sim_op_replace_nodes(c, &sim_kinds[K_NODES], id, nodes, n, o, e);
}

const struct prov_type sim_types[SIM_NTYPES] = {
    SIM_TYPE(sim_network, K_NETWORK, network_attrs),
    SIM_TYPE(sim_placement_group, K_PLACEMENT, placement_attrs),
    [K_NODES] = {"sim_node_group", nodes_attrs, ARRAY_SIZE(nodes_attrs), sim_node_group_list,
		 sim_node_group_read, sim_node_group_create, sim_node_group_update,
		 sim_node_group_delete, sim_node_group_wait, sim_node_group_replace},
    SIM_TYPE(sim_bucket, K_BUCKET, bucket_attrs),
    SIM_TYPE(sim_lustre, K_LUSTRE, lustre_attrs),
    SIM_TYPE(sim_nfs, K_NFS, nfs_attrs),
    SIM_TYPE(sim_role, K_ROLE, role_attrs),
    SIM_TYPE(sim_role_policy, K_POLICY, policy_attrs),
    [K_BLOCK] = {"sim_capacity_block", block_attrs, ARRAY_SIZE(block_attrs),
		 sim_capacity_block_list, sim_capacity_block_read, sim_capacity_block_create,
		 sim_capacity_block_update, sim_capacity_block_delete, sim_capacity_block_wait,
		 NULL, true},
};
