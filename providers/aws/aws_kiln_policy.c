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

/* Where an action may be scoped: the ARN patterns of this scope, or "*" when the API allows none.
 */
static const char *action_resource(const char *action, const char *buckets, const char *roles,
				   const char *profiles, const char *params)
{
	static const char *const any[] = {
	    /* No resource-level permissions in IAM's own reference for these. */
	    "s3:ListAllMyBuckets", "iam:ListRoles", NULL};
	size_t i;

	for (i = 0; any[i]; i++)
		if (strcmp(action, any[i]) == 0)
			return "*";
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
	if (strncmp(action, "iam:", 4) == 0)
		return roles;
	/* EC2 describes take no resource; kiln's creates make their resources. */
	return "*";
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
	const char *res;
	size_t i;

	/* Bucket names are shortened past 63 characters: the pattern keeps what is kept. */
	if (strlen(prefix) > 54)
		prefix[54] = '\0';
	buckets = xasprintf("arn:aws:s3:::%s*", prefix);
	roles = xasprintf("arn:aws:iam::*:role/kiln/%s/%s/*", scope->cluster, scope->workspace);
	profiles = xasprintf("arn:aws:iam::*:instance-profile/kiln/%s/%s/*", scope->cluster,
			     scope->workspace);
	params =
	    xasprintf("arn:aws:ssm:*:*:parameter/kiln/%s/%s", scope->cluster, scope->workspace);
	for (i = 0; i < n; i++) {
		if (strcmp(actions[i], "iam:PassRole") == 0)
			continue;
		/*
		 * iam:AddRoleToInstanceProfile and RemoveRoleFromInstanceProfile are
		 * authorized on the instance profile alone: the Service Authorization
		 * Reference lists no other resource type for them.
		 */
		res = action_resource(actions[i], buckets, roles, profiles, params);
		acts = json_object_get(by_res, res);
		if (!acts) {
			acts = json_array();
			json_object_set_new(by_res, res, acts);
		}
		json_array_append_new(acts, json_string(actions[i]));
	}
	json_object_foreach(by_res, res, acts)
	{
		/* A bucket and its objects; a parameter path and what is under it. */
		bool tree =
		    strncmp(res, "arn:aws:s3", 10) == 0 || strncmp(res, "arn:aws:ssm", 11) == 0;
		json_t *r = tree ? json_pack("[s, s+]", res, res, "/*") : json_string(res);

		json_array_append_new(stmts, json_pack("{s:s, s:O, s:o}", "Effect", "Allow",
						       "Action", acts, "Resource", r));
	}
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
	free(buckets);
	free(roles);
	free(profiles);
	free(params);
	free(prefix);
	return out;
}
