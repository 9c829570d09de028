/*
 * aws_kiln_policy.c - the policy kiln itself needs to apply a spec (kiln
 * iam-policy): the actions every type's operations call, each on resources
 * as narrow as the service allows for the scope.
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"
#include "expand.h"
#include "iam.h"
#include "jsonw.h"

#include <stdlib.h>
#include <string.h>

/*
 * How an action is scoped, per resource type it touches, as AWS's Service
 * Authorization Reference lists them (tests/iam-data holds that data, and
 * tests/check-iam-policy.py checks the policy against it):
 *
 *   MADE    a resource the call makes, with kiln's tags in the request:
 *           aws:RequestTag/kiln:cluster and kiln:workspace are the scope's,
 *           and every tag key is kiln's or the spec's (aws:TagKeys)
 *   OURS    a resource kiln made and tagged: aws:ResourceTag/kiln:cluster
 *           and kiln:workspace are the scope's
 *   REGION  a resource kiln does not tag (the VPC's main route table, the
 *           image, the key pair, the interfaces EC2, FSx and EFS make):
 *           any of its type in the spec's region
 *   TAGGING ec2:CreateTags as part of a create (ec2:CreateAction)
 *   ANY     no resource type at all: "*" (each listed in no_resource below)
 */
enum scope_mode { MADE, OURS, REGION, TAGGING, ANY };

struct scoped {
	const char *action, *service, *type;
	enum scope_mode mode;
};

/* The creates that tag what they make (aws_tag_spec); ec2:CreateAction names them. */
static const char *const tagging_creates[] = {
    "CreateVpc",	   "CreateSubnet",	   "CreateSecurityGroup",
    "CreateInternetGateway", "CreatePlacementGroup", "RunInstances",
    "PurchaseCapacityBlock", NULL};

/* The EC2 types kiln tags, for ec2:CreateTags. */
static const char *const tagged_types[] = {"vpc",	     "subnet",	 "security-group",
					   "internet-gateway", "placement-group", "instance",
					   "volume",	     "capacity-reservation", NULL};

static const struct scoped scoped[] = {
    {"ec2:CreateVpc", "ec2", "vpc", MADE},
    {"ec2:DeleteVpc", "ec2", "vpc", OURS},
    {"ec2:CreateSubnet", "ec2", "subnet", MADE},
    {"ec2:CreateSubnet", "ec2", "vpc", OURS},
    {"ec2:DeleteSubnet", "ec2", "subnet", OURS},
    {"ec2:CreateSecurityGroup", "ec2", "security-group", MADE},
    {"ec2:CreateSecurityGroup", "ec2", "vpc", OURS},
    {"ec2:AuthorizeSecurityGroupIngress", "ec2", "security-group", OURS},
    {"ec2:RevokeSecurityGroupIngress", "ec2", "security-group", OURS},
    {"ec2:DeleteSecurityGroup", "ec2", "security-group", OURS},
    {"ec2:CreateInternetGateway", "ec2", "internet-gateway", MADE},
    {"ec2:AttachInternetGateway", "ec2", "internet-gateway", OURS},
    {"ec2:AttachInternetGateway", "ec2", "vpc", OURS},
    {"ec2:DetachInternetGateway", "ec2", "internet-gateway", OURS},
    {"ec2:DetachInternetGateway", "ec2", "vpc", OURS},
    {"ec2:DeleteInternetGateway", "ec2", "internet-gateway", OURS},
    /* The VPC's main route table is EC2's, untagged. */
    {"ec2:CreateRoute", "ec2", "route-table", REGION},
    {"ec2:DeleteRoute", "ec2", "route-table", REGION},
    {"ec2:CreatePlacementGroup", "ec2", "placement-group", MADE},
    {"ec2:DeletePlacementGroup", "ec2", "placement-group", OURS},
    /* A launch makes the instance and its volumes tagged, its interfaces untagged. */
    {"ec2:RunInstances", "ec2", "instance", MADE},
    {"ec2:RunInstances", "ec2", "volume", MADE},
    {"ec2:RunInstances", "ec2", "network-interface", REGION},
    {"ec2:RunInstances", "ec2", "subnet", OURS},
    {"ec2:RunInstances", "ec2", "security-group", OURS},
    {"ec2:RunInstances", "ec2", "placement-group", OURS},
    /* The spec's image, key pair and reservation, and the image's snapshots, are not kiln's. */
    {"ec2:RunInstances", "ec2", "image", REGION},
    {"ec2:RunInstances", "ec2", "snapshot", REGION},
    {"ec2:RunInstances", "ec2", "key-pair", REGION},
    {"ec2:RunInstances", "ec2", "capacity-reservation", REGION},
    {"ec2:TerminateInstances", "ec2", "instance", OURS},
    {"ec2:DescribeInstanceAttribute", "ec2", "instance", OURS},
    /* FSx and EFS make and delete their interfaces with kiln's credentials, untagged. */
    {"ec2:CreateNetworkInterface", "ec2", "network-interface", REGION},
    {"ec2:CreateNetworkInterface", "ec2", "subnet", OURS},
    {"ec2:CreateNetworkInterface", "ec2", "security-group", OURS},
    {"ec2:DeleteNetworkInterface", "ec2", "network-interface", REGION},
    {"ec2:PurchaseCapacityBlock", "ec2", "capacity-reservation", MADE},
    {"fsx:CreateFileSystem", "fsx", "file-system", MADE},
    {"fsx:UpdateFileSystem", "fsx", "file-system", OURS},
    {"fsx:DeleteFileSystem", "fsx", "file-system", OURS},
    {"fsx:TagResource", "fsx", "file-system", MADE},
    {"fsx:TagResource", "fsx", "association", MADE},
    {"fsx:CreateDataRepositoryAssociation", "fsx", "file-system", OURS},
    {"fsx:CreateDataRepositoryAssociation", "fsx", "association", MADE},
    {"fsx:DeleteDataRepositoryAssociation", "fsx", "association", OURS},
    {"elasticfilesystem:TagResource", "elasticfilesystem", "file-system", MADE},
    {"elasticfilesystem:DeleteFileSystem", "elasticfilesystem", "file-system", OURS},
    {"elasticfilesystem:CreateMountTarget", "elasticfilesystem", "file-system", OURS},
    {"elasticfilesystem:DeleteMountTarget", "elasticfilesystem", "file-system", OURS},
    {"elasticfilesystem:DescribeMountTargets", "elasticfilesystem", "file-system", OURS},
    {"resource-groups:ListGroupResources", "resource-groups", "group", REGION},
};

/*
 * The actions that keep Resource "*", and why: the reference lists no
 * resource type for them (or only one kiln's call does not name).
 */
static const struct {
	const char *action, *why;
} no_resource[] = {
    {"ec2:Describe*", "EC2's describes take no resource type"},
    {"fsx:DescribeFileSystems", "no resource type"},
    {"fsx:DescribeDataRepositoryAssociations", "no resource type"},
    {"elasticfilesystem:DescribeFileSystems",
     "kiln lists the file systems, naming none (the file-system type is optional)"},
    {"elasticfilesystem:CreateFileSystem",
     "no resource type: only aws:RequestTag and aws:TagKeys scope it"},
    {"iam:ListRoles", "no resource type"},
    {"s3:ListAllMyBuckets", "no resource type"},
    {"cloudwatch:GetMetricData",
     "metrics have no resource type (the optional dataset type is not a metric)"},
    /* kiln report --actual (iam-policy --report-actual): the account's bill. */
    {"ce:GetCostAndUsage", "Cost Explorer's cost queries have no resource type"},
    {"ce:ListCostAllocationTags", "no resource type"},
};

/* Whether action keeps "*" (no_resource); with why, the reason. */
static bool resourceless(const char *action, const char **why)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(no_resource); i++)
		if (iam_pattern_covers(no_resource[i].action, action, false)) {
			if (why)
				*why = no_resource[i].why;
			return true;
		}
	return false;
}

/* The ARN pattern of a resource type in the spec's region, any account and id. */
static char *type_arn(const char *service, const char *type, const char *region)
{
	/* Images and snapshots are named without an account (their owners vary). */
	if (strcmp(type, "image") == 0 || strcmp(type, "snapshot") == 0)
		return xasprintf("arn:aws:%s:%s::%s/*", service, region, type);
	/* An association is named under its file system. */
	if (strcmp(type, "association") == 0)
		return xasprintf("arn:aws:%s:%s:*:%s/*/*", service, region, type);
	return xasprintf("arn:aws:%s:%s:*:%s/*", service, region, type);
}

/* The scope's two tags under prefix (aws:ResourceTag/ or aws:RequestTag/). */
static json_t *scope_tags_condition(const struct prov_scope *scope, const char *prefix)
{
	json_t *c = json_object();
	char *k = xasprintf("%s%s", prefix, PROV_TAG_CLUSTER);

	json_object_set_new(c, k, json_string(scope->cluster));
	free(k);
	k = xasprintf("%s%s", prefix, PROV_TAG_WORKSPACE);
	json_object_set_new(c, k, json_string(scope->workspace));
	free(k);
	return c;
}

/* The keys kiln may tag with: its own (kiln:*) and the spec's tags. */
static json_t *tag_keys(const struct prov_scope *scope)
{
	json_t *keys = json_pack("[s]", "kiln:*"), *v;
	const char *k;

	json_object_foreach(scope->user_tags, k, v) json_array_append_new(keys, json_string(k));
	return keys;
}

static json_t *mode_condition(const struct prov_scope *scope, enum scope_mode mode)
{
	switch (mode) {
	case MADE:
		return json_pack("{s:o, s:{s:o}}", "StringEquals",
				 scope_tags_condition(scope, "aws:RequestTag/"),
				 "ForAllValues:StringLike", "aws:TagKeys", tag_keys(scope));
	case OURS:
		return json_pack("{s:o}", "StringEquals",
				 scope_tags_condition(scope, "aws:ResourceTag/"));
	case TAGGING:
		return json_pack("{s:{s:[]}}", "StringEquals", "ec2:CreateAction");
	default:
		return NULL;
	}
}

static const char *const mode_names[] = {"Made", "Ours", "Region", "Tagging", "Any"};

/* Append action to the statement of (type, mode) in groups, making it. */
static void group_add(json_t *groups, const char *service, const char *type, enum scope_mode mode,
		      const char *action, const struct prov_scope *scope, const char *region)
{
	char *key = xasprintf("%s %s %s", service, type, mode_names[mode]);
	json_t *g = json_object_get(groups, key);

	if (!g) {
		char *arn = type_arn(service, type, region);
		json_t *cond = mode_condition(scope, mode);

		g = json_pack("{s:s, s:[], s:[]}", "Effect", "Allow", "Action", "Resource");
		json_array_append_new(json_object_get(g, "Resource"), json_string(arn));
		if (cond)
			json_object_set_new(g, "Condition", cond);
		json_object_set_new(groups, key, g);
		free(arn);
	}
	json_array_append_new(json_object_get(g, "Action"), json_string(action));
	free(key);
}

/* ec2:CreateTags: on a create's resources, and on kiln's own (claims, updates). */
static void create_tags_groups(json_t *groups, const struct prov_scope *scope, const char *region,
			       const char *const *actions, size_t n)
{
	json_t *g[2], *creates;
	int k;
	size_t i, j;

	for (k = 0; k < 2; k++) {
		g[k] = json_pack("{s:s, s:[s], s:[], s:o}", "Effect", "Allow", "Action",
				 "ec2:CreateTags", "Resource", "Condition",
				 mode_condition(scope, k ? OURS : TAGGING));
		for (i = 0; tagged_types[i]; i++) {
			char *arn = type_arn("ec2", tagged_types[i], region);

			json_array_append_new(json_object_get(g[k], "Resource"), json_string(arn));
			free(arn);
		}
		json_object_set_new(groups, k ? "ec2 tag Ours" : "ec2 tag Tagging", g[k]);
	}
	/* Only the creates this policy allows. */
	creates = json_object_get(json_object_get(json_object_get(g[0], "Condition"),
						  "StringEquals"),
				  "ec2:CreateAction");
	for (i = 0; tagging_creates[i]; i++)
		for (j = 0; j < n; j++)
			if (strncmp(actions[j], "ec2:", 4) == 0 &&
			    strcmp(actions[j] + 4, tagging_creates[i]) == 0)
				json_array_append_new(creates, json_string(tagging_creates[i]));
}

/* The EC2, FSx, EFS and Resource Groups actions, each per resource type it touches. */
static void scoped_statements(json_t *stmts, json_t *any, const struct prov_scope *scope,
			      const char *region, const char *const *actions, size_t n)
{
	json_t *groups = json_object(), *g;
	const char *key;
	size_t i, j;
	bool found;

	for (i = 0; i < n; i++) {
		if (strcmp(actions[i], "ec2:CreateTags") == 0) {
			create_tags_groups(groups, scope, region, actions, n);
			continue;
		}
		for (j = 0, found = false; j < ARRAY_SIZE(scoped); j++)
			if (strcmp(scoped[j].action, actions[i]) == 0) {
				group_add(groups, scoped[j].service, scoped[j].type, scoped[j].mode,
					  actions[i], scope, region);
				found = true;
			}
		/* A resource type's create also carries no tags where it names none. */
		if (!found && resourceless(actions[i], NULL))
			json_array_append_new(any, json_string(actions[i]));
	}
	json_object_foreach(groups, key, g) json_array_append(stmts, g);
	json_decref(groups);
}

/* Whether an action is scoped by scoped_statements (or keeps "*" there). */
static bool scoped_here(const char *action)
{
	size_t j;

	if (strcmp(action, "ec2:CreateTags") == 0 || resourceless(action, NULL))
		return true;
	for (j = 0; j < ARRAY_SIZE(scoped); j++)
		if (strcmp(scoped[j].action, action) == 0)
			return true;
	return false;
}

/* Where an IAM, S3 or SSM action may be scoped: the ARN patterns of this scope. */
static const char *named_resource(const char *action, const char *buckets, const char *roles,
				  const char *profiles, const char *params)
{
	if (strncmp(action, "s3:", 3) == 0)
		return buckets;
	/* The workspace's parameters, and their path (GetParametersByPath). */
	if (strncmp(action, "ssm:", 4) == 0)
		return params;
	/* FSx makes its own role the first time it links a bucket. */
	if (strcmp(action, "iam:CreateServiceLinkedRole") == 0)
		return "arn:aws:iam::*:role/aws-service-role/"
		       "s3.data-source.lustre.fsx.amazonaws.com/*";
	if (strstr(action, "InstanceProfile"))
		return profiles;
	return roles;
}

/*
 * Actions that rewrite who may use a resource (Parliament's
 * RESOURCE_POLICY_PRIVILEGE_ESCALATION): whoever holds one can grant
 * itself what its own policy does not. kiln writes no bucket policy and no
 * ACL, so neither kiln iam-policy nor a store ever grants them; a role's
 * allow: entry can, and the plan's IAM delta says why that matters.
 */
static const struct {
	const char *action, *note;
} grant_notes[] = {
    {"s3:PutBucketPolicy",
     "rewrites the bucket's policy: the role can grant itself, or anyone, every object in the "
     "bucket (a privilege escalation path); kiln writes no bucket policy"},
    {"s3:PutBucketAcl",
     "rewrites the bucket's ACL: the role can grant itself, or anyone, the bucket (a privilege "
     "escalation path); kiln writes no ACL"},
    {"s3:PutObjectAcl",
     "rewrites an object's ACL: the role can grant anyone the object (a privilege escalation "
     "path); kiln writes no ACL"},
};

const char *aws_iam_grant_note(const char *action)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(grant_notes); i++)
		if (iam_pattern_covers(action, grant_notes[i].action, true))
			return grant_notes[i].note;
	return NULL;
}

char *aws_iam_policy(struct prov_ctx *ctx, const struct prov_scope *scope,
		     const char *const *actions, size_t n)
{
	char *prefix = aws_name(scope, "", 1000);
	char *buckets, *roles, *profiles, *params, *out;
	json_t *doc = json_pack("{s:s, s:[]}", "Version", "2012-10-17", "Statement");
	json_t *stmts = json_object_get(doc, "Statement"), *by_res = json_object(), *acts;
	json_t *any = json_array();
	const char *res;
	size_t i;

	/* Bucket names are shortened past 63 characters: the pattern keeps what is kept. */
	if (strlen(prefix) > 54)
		prefix[54] = '\0';
	buckets = xasprintf("arn:aws:s3:::%s*", prefix);
	roles = xasprintf("arn:aws:iam::*:role/kiln/%s/%s/*", scope->cluster, scope->workspace);
	profiles = xasprintf("arn:aws:iam::*:instance-profile/kiln/%s/%s/*", scope->cluster,
			     scope->workspace);
	params = xasprintf("arn:aws:ssm:%s:*:parameter/kiln/%s/%s", ctx->region, scope->cluster,
			   scope->workspace);
	scoped_statements(stmts, any, scope, ctx->region, actions, n);
	for (i = 0; i < n; i++) {
		if (strcmp(actions[i], "iam:PassRole") == 0 || scoped_here(actions[i]))
			continue;
		res = named_resource(actions[i], buckets, roles, profiles, params);
		acts = json_object_get(by_res, res);
		if (!acts) {
			acts = json_array();
			json_object_set_new(by_res, res, acts);
		}
		json_array_append_new(acts, json_string(actions[i]));
	}
	json_object_foreach(by_res, res, acts)
	{
		/* A parameter path and what is under it. */
		json_t *r = strncmp(res, "arn:aws:ssm", 11) == 0 ? json_pack("[s, s+]", res, res, "/*")
								 : json_string(res);

		json_array_append_new(stmts, json_pack("{s:s, s:O, s:o}", "Effect", "Allow",
						       "Action", acts, "Resource", r));
	}
	/* EFS's create names no resource: the request's tags are all that scope it. */
	for (i = 0; i < n; i++)
		if (strcmp(actions[i], "elasticfilesystem:CreateFileSystem") == 0)
			json_array_append_new(
			    stmts, json_pack("{s:s, s:[s], s:s, s:o}", "Effect", "Allow", "Action",
					     actions[i], "Resource", "*", "Condition",
					     mode_condition(scope, MADE)));
	/* What no policy can scope: the reasons are no_resource's. */
	for (i = 0; i < json_array_size(any); i++)
		if (strcmp(json_string_value(json_array_get(any, i)),
			   "elasticfilesystem:CreateFileSystem") == 0)
			json_array_remove(any, i--);
	if (json_array_size(any))
		json_array_append_new(stmts,
				      json_pack("{s:s, s:s, s:O, s:s}", "Sid", "KilnNoResourceType",
						"Effect", "Allow", "Action", any, "Resource", "*"));
	for (i = 0; i < n; i++)
		if (strcmp(actions[i], "iam:PassRole") == 0)
			/* Only this workspace's roles, and only to EC2. */
			json_array_append_new(
			    stmts,
			    json_pack("{s:s, s:[s], s:s, s:{s:{s:s}}}", "Effect", "Allow", "Action",
				      "iam:PassRole", "Resource", roles, "Condition",
				      "StringEquals", "iam:PassedToService", "ec2.amazonaws.com"));
	/* SSM encrypts a SecureString with scheduler.kms_key for kiln (aws_kms.c). */
	for (i = 0; ctx->kms_key && i < n; i++)
		if (strcmp(actions[i], "ssm:PutParameter") == 0) {
			json_t *k = aws_kms_statement(ctx->kms_key, ctx->kms_region, AWS_KMS_SID,
						      "kms:Encrypt");

			if (k)
				json_array_append_new(stmts, k);
			break;
		}
	out = jsonw_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER, NULL);
	json_decref(doc);
	json_decref(by_res);
	json_decref(any);
	free(buckets);
	free(roles);
	free(profiles);
	free(params);
	free(prefix);
	return out;
}
