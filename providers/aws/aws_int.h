/*
 * aws_int.h - internals shared by the aws provider's files; nothing outside
 * providers/aws/ includes this.
 *
 *   aws.c         the context (credentials, region, endpoints), the provider table
 *   aws_call.c    one API call: query (EC2, IAM), JSON (FSx, EFS) and REST-XML (S3),
 *                 signed, retried, its errors mapped to enum prov_status
 *   aws_expand.c  spec -> desired resources
 *   aws_net.c     VPC, subnets, internet gateway, security group, placement group
 *   aws_nodes.c   instance groups (RunInstances gangs)
 *   aws_zones.c   the one zone a workspace's nodes and zone-bound storage live in
 *   aws_s3.c      buckets
 *   aws_iam.c     roles with their instance profile and inline policy; the actions
 *                 each operation needs (iam_actions)
 *   aws_types.c   the type table: attributes and policies
 *   aws_spec.c    aws's rules on a spec (region, zone and AMI names)
 *
 * Every resource kiln creates carries the kiln:cluster, kiln:workspace and
 * kiln:address tags in the create call, and list finds them by those tags.
 */
#ifndef KILN_AWS_INT_H
#define KILN_AWS_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <jansson.h>

#include "aws/creds.h"
#include "aws/aws_rate.h"
#include "aws/sigv4.h"
#include "catalog_aws.h"
#include "jsonc.h"
#include "provider.h"
#include "retry.h"

/*
 * The CloudWatch namespace of the nodes' GPU metrics: the agent publishes
 * there (aws_expand.c), the role may put metrics there only (aws_policy.c),
 * kiln status reads them from there (aws_metrics.c).
 */
#define AWS_GPU_METRICS_NAMESPACE "CWAgent"

#define AWS_EC2_VERSION "2016-11-15"
#define AWS_IAM_VERSION "2010-05-08"
#define AWS_CW_VERSION "2010-08-01"

enum aws_service {
	AWS_EC2,
	AWS_S3,
	AWS_IAM,
	AWS_FSX,
	AWS_EFS,
	AWS_STS,
	AWS_SSM,
	AWS_CW, /* CloudWatch: metrics for kiln status and reap's idle policy */
	AWS_RG, /* Resource Groups: the members of a capacity reservation group */
	AWS_CE, /* Cost Explorer: what was billed, for kiln report --actual */
	AWS_NSERVICES,
};

struct aws_endpoint {
	char *base;  /* "https://ec2.us-east-1.amazonaws.com" or an override */
	char *host;  /* the Host header: "ec2.us-east-1.amazonaws.com", "127.0.0.1:5000" */
	bool custom; /* from AWS_ENDPOINT_URL*: S3 is addressed path-style */
};

struct prov_ctx {
	struct aws_creds creds;
	char *region;
	char **zones; /* the spec's zones, in order of preference */
	size_t nzones;
	struct aws_endpoint ep[AWS_NSERVICES];
	atomic_ulong calls; /* HTTP requests made, retries included */
	/* Each service's adaptive send rate, as botocore keeps one per client (retry.h). */
	struct retry_rate *rate[AWS_NSERVICES];
	/* EC2's documented token buckets, kept on the client (aws_rate.h). */
	struct aws_rate ec2_rate;
	bool have_creds;    /* else creds_err says why, at the first call */
	pthread_mutex_t mu; /* guards images, efa, efs_arns, account, zoned and seen */
	json_t *images;	    /* image id -> root device name, as DescribeImages said */
	json_t *efa;	    /* instance type -> maximum EFA interfaces, as EC2 said */
	json_t *offers;	    /* a Capacity Block's ask -> the fee of the offering pre-flight chose */
	/* Listings several types' lists share within one refresh (aws_shared_listing). */
	pthread_mutex_t share_mu;
	pthread_cond_t share_cond;
	struct aws_share *shares;
	json_t *efs_arns;     /* "CLUSTER/WS/STORE" -> EFS file system ARN, as EFS said */
	char *account;	      /* the credentials' account, from an ARN IAM gave (NULL: unknown) */
	json_t *zoned;	      /* "CLUSTER/WS" -> the zone its nodes launched in (aws_zones.c) */
	bool zone_bound;      /* the spec has zone-bound storage (lustre, nfs): set by expand */
	bool capacity_blocks; /* the spec buys Capacity Blocks: set by expand */
	bool ssm_parameters;  /* the spec has SSM parameters (a scheduler): set by expand */
	/*
	 * scheduler.kms_key as policies name it and the spec's region (kiln
	 * iam-policy's kms:Encrypt): set by expand. A bare alias/NAME is
	 * kms_scoped, its alias ARN in the caller's account (owned).
	 */
	const char *kms_key, *kms_region;
	char *kms_scoped;
	json_t *seen; /* "CLUSTER/WS" -> {"aws_fsx_lustre": n, ...} as refresh listed them */
	/*
	 * The account's kiln- bucket names as this context's last ListBuckets
	 * answered them (name -> true), whatever their tags; NULL before one.
	 */
	json_t *buckets;
	struct kiln_error creds_err;
};

const char *aws_service_id(enum aws_service s); /* "ec2" */

/* Query parameters, built in order: "Action=...&Version=...&K=V". */
struct aws_params {
	struct strbuf sb;
};
void aws_param(struct aws_params *p, const char *key, const char *value);
void aws_paramf(struct aws_params *p, const char *key, const char *fmt, ...) KILN_PRINTF(3, 4);
void aws_params_release(struct aws_params *p);
/* Percent-encode for a query or a path segment (RFC 3986 unreserved kept). */
char *aws_uri_encode(const char *s, bool keep_slash);
/* The reverse, '+' as a space (IAM answers policy documents form-encoded). */
char *aws_uri_decode(const char *s);

/*
 * A Query API call (EC2, IAM): *out (may be NULL) is the parsed response's
 * body element (the content of "<Action>Response"). Returns PROV_OK, or a
 * prov_status with err naming the service, action, code and request id.
 * AccessDenied and UnauthorizedOperation name the IAM action (service:Action).
 */
int aws_query(struct prov_ctx *ctx, enum aws_service svc, const char *action, struct aws_params *p,
	      json_t **out, struct kiln_error *err);
/*
 * The same for a create that takes no idempotency token: only throttling is
 * retried, and PROV_RETRY (a 5xx, a lost connection) means it may have been
 * done: look for it before trying again. Either answers PROV_GAVE_UP when
 * throttling, a 5xx or a lost connection outlasted http.c's retries.
 */
int aws_query_once(struct prov_ctx *ctx, enum aws_service svc, const char *action,
		   struct aws_params *p, json_t **out, struct kiln_error *err);
/*
 * Whether an action cannot be undone once done (PurchaseCapacityBlock):
 * aws_query sends it as aws_query_once does, whoever calls it, so a 5xx or
 * a lost answer never sends it again; the caller looks for what it made.
 */
bool aws_action_irreversible(const char *action);
/*
 * A JSON 1.1 call (FSx, SSM) to the service's target, e.g.
 * "AWSSimbaAPIService_v20180301.CreateFileSystem"; it takes body (NULL: a
 * value the request needed was missing, an error).
 */
int aws_json(struct prov_ctx *ctx, enum aws_service svc, const char *action, json_t *body,
	     json_t **out, struct kiln_error *err);
/*
 * A REST call (S3, EFS). path starts with '/' and is already encoded; for S3
 * bucket is the bucket (NULL for ListBuckets) and addressing follows the
 * endpoint. body may be NULL. A 2xx XML body is parsed into *out (NULL when
 * empty), a JSON body too. iam_action names the permission for denials.
 */
struct aws_rest {
	const char *method;
	const char *bucket;
	const char *path;
	const char *query;
	const char *body;
	const char *content_type;
	const char *content_md5; /* S3 needs it on some PUTs (lifecycle); base64 */
	const char *action;	 /* "PutBucketVersioning" */
};
int aws_rest_call(struct prov_ctx *ctx, enum aws_service svc, const struct aws_rest *r,
		  json_t **out, struct kiln_error *err);

/*
 * The tags every resource kiln makes carries, as {key: value}: the spec's,
 * extra (may be NULL), then kiln:cluster, kiln:workspace and kiln:address.
 */
json_t *aws_scope_tags(const struct prov_scope *scope, const char *address, const json_t *extra);
/* Query parameters PREFIX.N.Key and PREFIX.N.Value for each tag ("Tags.member"). */
void aws_tag_params(struct aws_params *p, const char *prefix, const json_t *tags);
/*
 * kiln state takeover (provider.h's claim): the tags a claim sets, kiln:lineage
 * and kiln:owner as the scope has them ({key: value}, new).
 */
json_t *aws_claim_tags(const struct prov_scope *scope);
int aws_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
	      const char *id, json_t **out, struct kiln_error *err);
/* aws_metrics.c: the metrics hook, from CloudWatch's GetMetricData (batched). */
int aws_metrics(struct prov_ctx *ctx, const json_t *resources, int64_t start, int64_t end,
		int period, json_t **out, struct kiln_error *err);
/* EC2's CreateTags of tags ({key: value}) on these resource ids. */
int aws_ec2_put_tags(struct prov_ctx *ctx, const json_t *ids, const json_t *tags,
		     struct kiln_error *err);
/* provider.h's tag_expiry: kiln:expires on an instance group's instances (CreateTags). */
int aws_tag_expiry(struct prov_ctx *ctx, const char *type, const char *id, const json_t *attrs,
		   const char *expires, struct kiln_error *err);
/* EC2's CreateTags of the claim's tags on these resource ids. */
int aws_ec2_claim_tags(struct prov_ctx *ctx, const struct prov_scope *scope, const json_t *ids,
		       struct kiln_error *err);
/* Each service's claim of one resource: its tags set, then read back. */
int aws_ig_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id, json_t **out,
		 struct kiln_error *err);
int aws_bucket_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		     json_t **out, struct kiln_error *err);
int aws_role_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		   json_t **out, struct kiln_error *err);
int aws_fsx_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		  const char *id, json_t **out, struct kiln_error *err);
int aws_efs_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		  const char *id, json_t **out, struct kiln_error *err);
/* EC2 "TagSpecification.N": the scope's tags, the address, and extra (may be NULL). */
void aws_tag_spec(struct aws_params *p, int n, const char *resource_type,
		  const struct prov_scope *scope, const char *address, const json_t *extra);
/* Filter.N: tag:kiln:cluster and tag:kiln:workspace; returns the next N. */
int aws_scope_filters(struct aws_params *p, int n, const struct prov_scope *scope);

/*
 * One listing that several types' lists need (EFS file systems for both
 * file systems and mount targets, say), made once per refresh: the engine
 * lists every type once per refresh, each on a thread of its own. The
 * first of the users listing key for scope makes the call (fetch, given
 * arg: what to list, say); the
 * others wait for it and take its answer, and once all users took it, it
 * is dropped, so the next refresh asks again. *out is a new reference. An
 * answer not taken within a minute is not given out any more: a listing
 * is never older than that. A fetch that is not done yet (PROV_RETRY) is
 * not shared and takes no user's turn (the engine retries that list); the
 * next user tries itself. One whose retries ran out (PROV_GAVE_UP) is
 * shared like an answer: the other users are not sent again.
 */
int aws_shared_listing(struct prov_ctx *ctx, const char *key, int users,
		       const struct prov_scope *scope,
		       int (*fetch)(struct prov_ctx *ctx, const struct prov_scope *scope,
				    const void *arg, json_t **out, struct kiln_error *err),
		       const void *arg, json_t **out, struct kiln_error *err);
void aws_shared_release(struct prov_ctx *ctx);

/* The live form (provider.h) from an id, the kiln tags and attrs (stolen). */
json_t *aws_live(const char *type, const char *id, const char *status, json_t *attrs, json_t *tags);
/*
 * A read by id: the first live form of all (an array rc says was made;
 * stolen), or PROV_NOTFOUND with "aws: WHAT ID does not exist".
 */
int aws_read_one(int rc, json_t *all, const char *what, const char *id, json_t **out,
		 struct kiln_error *err);
/* A recorded dependency's attribute: deps["TYPE.NAME"].attrs[key] as a string, or NULL. */
const char *aws_dep_attr(const json_t *deps, const char *type, const char *name, const char *key);
/* The same for the first dependency of a type. */
const char *aws_dep_attr_any(const json_t *deps, const char *type, const char *key);

/* Names: "kiln-CLUSTER-WS-NAME", shortened with a hash when longer than max. */
char *aws_name(const struct prov_scope *scope, const char *name, size_t max);

/* aws_types.c */
#define AWS_NTYPES 14
/* Why a granted action needs a reviewer's eye, or NULL (provider.h; aws_kiln_policy.c). */
const char *aws_iam_grant_note(const char *action);
/* The actions a desired resource needs beyond its type's (provider.h). */
const char *const *aws_iam_resource_actions(const json_t *desired, enum prov_verb verb);
extern const struct prov_type aws_types[AWS_NTYPES];

/* aws_expand.c */
int aws_expand(struct prov_ctx *ctx, const struct spec *spec, json_t **out, struct kiln_error *err);
/* aws_expand.c: the user data rules at validate time (bootstrap.h's bootstrap_check_spec). */
void aws_boot_check(const struct spec *spec, struct diags *d);

/* The root device of an image, remembered from a DescribeImages (NULL when unknown). */
char *aws_image_root(struct prov_ctx *ctx, const char *image);
void aws_image_remember(struct prov_ctx *ctx, const char *image, const char *root_device);
/* An instance type's maximum EFA interfaces, remembered from DescribeInstanceTypes (0: unknown). */
int aws_efa_max(struct prov_ctx *ctx, const char *type);
void aws_efa_remember(struct prov_ctx *ctx, const char *type, int n);

/* An EFS file system's ARN, remembered from a live form EFS gave (its kiln tags say whose). */
void aws_efs_remember(struct prov_ctx *ctx, const json_t *live);
/* The ARN of the scope's nfs store name (malloc'd), or NULL when none was seen. */
char *aws_efs_arn(struct prov_ctx *ctx, const struct prov_scope *scope, const char *name);

/*
 * The account of arn ("arn:aws:iam::123456789012:role/..."), remembered as
 * the credentials' account: kiln reads it from the ARNs IAM gives its roles.
 */
void aws_account_remember(struct prov_ctx *ctx, const char *arn);
/* The credentials' account (malloc'd), or NULL when no ARN has said it yet. */
char *aws_account(struct prov_ctx *ctx);

/*
 * The zone zone-bound storage of the scope is made in (*out, malloc'd):
 * where this apply launched its nodes, else where the workspace's nodes are
 * (one DescribeInstances), else the first zone; with one zone, that zone.
 * A failed look is returned, never guessed past: storage made in the wrong
 * zone would hold data there for good.
 */
int aws_storage_zone(struct prov_ctx *ctx, const struct prov_scope *scope, char **out,
		     struct kiln_error *err);
/*
 * How many resources of a type a listing of one scope found: zone-bound
 * storage (aws_fsx_lustre, aws_efs_mount_target) and the instances of
 * aws_instance_group. When this context's refresh found none, launching
 * nodes needs no look for them (the workspace's lock keeps any other apply
 * from making them meanwhile).
 */
void aws_refresh_seen(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      size_t n);

/*
 * aws_kms.c: scheduler.kms_key. aws_kms_check: its form and region, at
 * validate time. aws_kms_statement: the policy statement allowing action
 * (kms:Decrypt, kms:Encrypt) on that key through SSM of region only, Sid
 * sid; NULL for a key of no accepted form. aws_kms_statement_key: the key
 * back from such a statement (exactly as written), else NULL; caller frees.
 */
void aws_kms_check(const struct spec *spec, struct diags *d);
json_t *aws_kms_statement(const char *key, const char *region, const char *sid, const char *action);
char *aws_kms_statement_key(const json_t *s, const char *region, const char *sid,
			    const char *action);

/*
 * aws_slurm.c: scheduler: slurm's parameters, and each role's ssm_read
 * (expand); sets ctx->ssm_parameters.
 */
int aws_expand_slurm(struct prov_ctx *ctx, json_t *all, const struct spec *spec,
		     struct kiln_error *err);
struct slurm_cluster;
/*
 * The boot script of group's nodes (the controller's, or a partition's
 * nodes', which find the controller with ctl_find), reading the
 * scope's parameters with the AWS CLI and the node's role; NULL for a group
 * that is neither. Caller frees.
 */
char *aws_slurm_boot_script(const struct slurm_cluster *c, const char *group,
			    const struct prov_scope *scope, const char *region,
			    const char *ctl_find);
/* boot_cloud's scheduler hook: group g's script, with the workspace a placeholder. */
char *aws_slurm_group_script(const struct spec *spec, const struct spec_group *g);
/* aws_ssm.c: a workspace's parameters live under /kiln/CLUSTER/WORKSPACE (malloc'd). */
char *aws_ssm_path(const struct prov_scope *scope);
char *aws_ssm_name(const struct prov_scope *scope, const char *leaf);
/* The tags that say what a parameter is: its leaf, and what kiln generated into it. */
#define AWS_SSM_TAG_LEAF "kiln:leaf"
#define AWS_SSM_TAG_GENERATED "kiln:generated"
/* The KMS key kiln asked SSM to encrypt a SecureString with (scheduler.kms_key). */
#define AWS_SSM_TAG_KEY "kiln:kms-key"
/* The Sid of a role's (and kiln's own) statement on scheduler.kms_key. */
#define AWS_KMS_SID "KilnSlurmKey"
int aws_ssmp_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		   json_t **out, struct kiln_error *err);
/* aws_preflight.c */
int aws_preflight(struct prov_ctx *ctx, const json_t *creates, json_t *warnings, json_t *offers,
		  struct kiln_error *err);

/* aws_access.c: provider.h's login_user, from the AMI's name and description. */
int aws_login_user(struct prov_ctx *ctx, const char *image, char **user, char **why,
		   struct kiln_error *err);

/* aws_iam.c */
const char *const *aws_iam_actions(const char *type, enum prov_verb verb);
char *aws_iam_policy(struct prov_ctx *ctx, const struct prov_scope *scope,
		     const char *const *actions, size_t n);
/* provider.h's role_policy: an aws_iam_role's inline policy, compiled or held. */
char *aws_role_policy(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      const json_t *attrs, bool live);
/*
 * The role's inline policy (JSON text, caller frees) from its attrs: read,
 * write, nfs_read, nfs_write, allow; efs ({store: ARN}, may be NULL) says
 * where the file systems are, the others written as aws_efs_pending_arn;
 * account (may be NULL: "*") is the account the SSM parameters' ARNs name.
 */
char *aws_role_policy_compile(const struct prov_scope *scope, const json_t *attrs,
			      const json_t *efs, const char *account);
/* "(known after apply: aws_efs.NAME)": a file system's ARN before it exists. */
char *aws_efs_pending_arn(const char *name);
/* GPU instances without kiln tags (aws_nodes.c), for kiln sprawl. */
int aws_list_unmanaged(struct prov_ctx *ctx, json_t **out, struct kiln_error *err);
/* The provider's billed hook (aws_billed.c, Cost Explorer), and the actions it calls. */
extern const char *const aws_billed_actions[];
int aws_billed(struct prov_ctx *ctx, const char *first, const char *last, json_t **out,
	       struct kiln_error *err);
/* provider.h's list_objects: ListObjectsV2 of a bucket under a prefix, every page. */
int aws_s3_list_objects(struct prov_ctx *ctx, const char *id, const char *prefix, json_t **out,
			struct kiln_error *err);
/*
 * The attrs a role's policy holds: {"read", "write", and "nfs_read",
 * "nfs_write", "allow" when not empty}; new object.
 */
json_t *aws_role_policy_decompile(const struct prov_scope *scope, const char *doc);
/* A policy's size as IAM counts it (whitespace left out). */
size_t aws_policy_size(const char *doc);
/* IAM's limit on the inline policies of one role, in characters. */
#define AWS_ROLE_POLICY_MAX 10240

/* aws_spec.c: the provider table's check_region, check_group and default_region. */
bool aws_check_region(const struct spec *spec, const char *region, const struct spec_ref *zone,
		      struct diags *d);
void aws_check_group(const struct spec *spec, const struct spec_group *g, struct diags *d);
const char *aws_default_region(void);

#endif
