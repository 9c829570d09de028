/*
 * aws_iam.c - spec roles as IAM roles. The policy text a role's intent
 * compiles to is aws_policy.c's; the policy kiln itself needs,
 * aws_kiln_policy.c's.
 *
 * A role is three IAM objects that live and die together: the role (EC2
 * may assume it) under the path /kiln/CLUSTER/WORKSPACE/, its inline policy
 * "kiln" compiled from the role's intent, and an instance profile of the
 * same name holding it. The policy names exact ARNs and the fewest actions:
 * reading a bucket is s3:GetObject on its objects and s3:ListBucket on the
 * bucket; writing adds s3:PutObject and s3:AbortMultipartUpload. Reading an
 * nfs store (EFS) is elasticfilesystem:ClientMount on its file system;
 * writing adds elasticfilesystem:ClientWrite (the mount-level actions EFS
 * checks when a client mounts with IAM). A lustre store grants nothing:
 * Lustre clients mount without IAM, and fsx:DescribeFileSystems cannot be
 * scoped to one file system. No "*" action and no "*" resource, ever, from
 * the stores; the role's allow: statements follow them as written (the one
 * place a "*" can come from, reviewed in the plan and flagged by the audit).
 *
 * An EFS file system's ARN is known once it exists: a create takes it from
 * the recorded file system (the role depends on it), an update and the plan
 * from what refresh saw (aws_efs_arn); before then the plan writes it as
 * "(known after apply: aws_efs.NAME)". Its statement carries the store's
 * name in its Sid, so a policy reads back to the names without a lookup.
 *
 * list is one ListRoles by path; the role's store names and allow entries
 * are read back from its policy, so a policy edited outside kiln shows as
 * drift.
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"
#include "expand.h"
#include "jsonw.h"

#include <stdlib.h>
#include <string.h>

#define POLICY_NAME "kiln"
#define TRUST_EC2                                                                                  \
	"{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{"         \
	"\"Service\":\"ec2.amazonaws.com\"},\"Action\":\"sts:AssumeRole\"}]}"

static char *role_path(const struct prov_scope *scope)
{
	return xasprintf("/kiln/%s/%s/", scope->cluster, scope->workspace);
}

/* The policy document of a role ("" when it has none); URL-decoded. */
static int get_policy(struct prov_ctx *ctx, const char *role, char **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp;
	const char *enc;
	int rc;

	*out = NULL;
	aws_param(&p, "RoleName", role);
	aws_param(&p, "PolicyName", POLICY_NAME);
	rc = aws_query(ctx, AWS_IAM, "GetRolePolicy", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_NOTFOUND) {
		*out = xstrdup("");
		return PROV_OK;
	}
	if (rc != PROV_OK)
		return rc;
	enc = awsxml_str(resp, "GetRolePolicyResult.PolicyDocument");
	*out = aws_uri_decode(enc ? enc : "");
	json_decref(resp);
	return PROV_OK;
}

/*
 * Description: "kiln C/W: ADDRESS", and " (state lineage L)" when the scope
 * has one. ListRoles answers no tags (IAM's listing operations leave them
 * out), so the lineage a refresh must see without a call per role is here
 * too; UpdateRole changes it in place (kiln state takeover).
 */
#define LINEAGE_MARK " (state lineage "

static void role_description(struct aws_params *p, const struct prov_scope *scope,
			     const char *address)
{
	if (scope->lineage)
		aws_paramf(p, "Description", "kiln %s/%s: %s" LINEAGE_MARK "%s)", scope->cluster,
			   scope->workspace, address, scope->lineage);
	else
		aws_paramf(p, "Description", "kiln %s/%s: %s", scope->cluster, scope->workspace,
			   address);
}

/* The lineage a role's Description names, as its kiln:lineage tag when it has none. */
static void lineage_of_description(json_t *role, json_t *tags)
{
	const char *d = awsxml_str(role, "Description"), *at, *end;

	at = d ? strstr(d, LINEAGE_MARK) : NULL;
	if (!at || json_object_get(tags, PROV_TAG_LINEAGE))
		return;
	at += strlen(LINEAGE_MARK);
	end = strchr(at, ')');
	if (end && end > at)
		json_object_set_new(tags, PROV_TAG_LINEAGE, json_stringn(at, (size_t)(end - at)));
}

/* The live form of a role from ListRoles/GetRole's Role element and its policy. */
static int role_live(struct prov_ctx *ctx, json_t *role, const struct prov_scope *scope,
		     json_t **out, struct kiln_error *err)
{
	const char *name = awsxml_str(role, "RoleName");
	char *policy;
	json_t *attrs, *tags = awsxml_tags(role, "Tags");
	int rc;

	*out = NULL;
	rc = get_policy(ctx, name, &policy, err);
	if (rc != PROV_OK) {
		json_decref(tags);
		return rc;
	}
	lineage_of_description(role, tags);
	attrs = aws_role_policy_decompile(scope, policy);
	aws_account_remember(ctx, awsxml_str(role, "Arn"));
	json_object_set_new(attrs, "arn", json_string(awsxml_str(role, "Arn")));
	json_object_set_new(attrs, "profile", json_string(name));
	json_object_set_new(attrs, "path", json_string(awsxml_str(role, "Path")));
	json_object_set_new(attrs, "policy", json_string(policy));
	*out = aws_live("aws_iam_role", name, "ready", attrs, tags);
	free(policy);
	return PROV_OK;
}

/* Cluster and workspace from a role path /kiln/C/W/. */
static bool scope_of_path(const char *path, char **cluster, char **ws)
{
	const char *a, *b;

	if (!path || strncmp(path, "/kiln/", 6) != 0)
		return false;
	a = path + 6;
	b = strchr(a, '/');
	if (!b || b == a || !b[1] || b[strlen(b) - 1] != '/')
		return false;
	*cluster = xstrndup(a, (size_t)(b - a));
	*ws = xstrndup(b + 1, strlen(b + 1) - 1);
	return true;
}

/* The address of a role of this scope from its name "kiln-C-W-ROLE". */
static char *role_address(const struct prov_scope *scope, const char *name)
{
	char *prefix = aws_name(scope, "", 1000), *addr = NULL;
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) == 0 && name[n])
		addr = xasprintf("aws_iam_role.%s", name + n);
	free(prefix);
	return addr;
}

int aws_role_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		  json_t **out, char **next, struct kiln_error *err)
{
	/* Every scope: every role under /kiln/, each read in the scope its path names. */
	char *path = scope->cluster ? role_path(scope) : xstrdup("/kiln/");
	struct aws_params p = {{0}};
	json_t *resp, *roles, *r;
	const char *marker;
	size_t i;
	int rc;

	*out = NULL;
	*next = NULL;
	aws_param(&p, "PathPrefix", path);
	aws_param(&p, "MaxItems", "1000");
	if (page)
		aws_param(&p, "Marker", page);
	rc = aws_query(ctx, AWS_IAM, "ListRoles", &p, &resp, err);
	aws_params_release(&p);
	free(path);
	if (rc != PROV_OK)
		return rc;
	*out = json_array();
	roles = awsxml_list(resp, "ListRolesResult.Roles");
	json_array_foreach(roles, i, r)
	{
		struct prov_scope own = {NULL, NULL, NULL};
		const struct prov_scope *sc = scope;
		char *addr, *oc = NULL, *ow = NULL;
		json_t *live;

		if (!awsxml_str(r, "RoleName"))
			continue;
		if (!scope->cluster) {
			if (!scope_of_path(awsxml_str(r, "Path"), &oc, &ow))
				continue;
			own.cluster = oc;
			own.workspace = ow;
			sc = &own;
		}
		rc = role_live(ctx, r, sc, &live, err);
		if (rc == PROV_OK) {
			/* ListRoles leaves tags out: the name says the address, the path the scope.
			 */
			json_t *tags = json_object_get(live, "tags");

			addr = role_address(sc, awsxml_str(r, "RoleName"));
			if (addr)
				json_object_set_new(live, "address", json_string(addr));
			if (!json_object_get(tags, PROV_TAG_CLUSTER))
				json_object_set_new(tags, PROV_TAG_CLUSTER,
						    json_string(sc->cluster));
			if (!json_object_get(tags, PROV_TAG_WORKSPACE))
				json_object_set_new(tags, PROV_TAG_WORKSPACE,
						    json_string(sc->workspace));
			if (addr && !json_object_get(tags, PROV_TAG_ADDRESS))
				json_object_set_new(tags, PROV_TAG_ADDRESS, json_string(addr));
			free(addr);
		}
		free(oc);
		free(ow);
		if (rc == PROV_NOTFOUND)
			continue;
		if (rc != PROV_OK)
			break;
		json_array_append_new(*out, live);
	}
	marker = awsxml_str(resp, "ListRolesResult.Marker");
	{
		const char *more = awsxml_str(resp, "ListRolesResult.IsTruncated");

		if (rc == PROV_OK && marker && *marker && more && strcmp(more, "true") == 0)
			*next = xstrdup(marker);
	}
	json_decref(roles);
	json_decref(resp);
	if (rc != PROV_OK && rc != PROV_NOTFOUND) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return PROV_OK;
}

int aws_role_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *role;
	char *cluster = NULL, *ws = NULL;
	int rc;

	*out = NULL;
	aws_param(&p, "RoleName", id);
	rc = aws_query(ctx, AWS_IAM, "GetRole", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	role = awsxml_get(resp, "GetRoleResult.Role");
	if (!role || !scope_of_path(awsxml_str(role, "Path"), &cluster, &ws)) {
		json_decref(resp);
		kiln_error_set(err, "aws: role %s is not under a kiln path", id);
		return PROV_NOTFOUND;
	}
	{
		struct prov_scope s = {cluster, ws, NULL};

		rc = role_live(ctx, role, &s, out, err);
	}
	free(cluster);
	free(ws);
	json_decref(resp);
	return rc;
}

static int iam(struct prov_ctx *ctx, const char *action, struct aws_params *p, const char *ok_code,
	       struct kiln_error *err)
{
	int rc = aws_query(ctx, AWS_IAM, action, p, NULL, err);

	aws_params_release(p);
	if (rc == PROV_ERROR && ok_code && strstr(err->msg, ok_code))
		rc = PROV_OK;
	return rc;
}

/* Tags.member.N: the tags a role and its profile are made with. */
static void iam_tags(struct aws_params *p, const struct prov_scope *scope, const char *address)
{
	json_t *tags = aws_scope_tags(scope, address, NULL);

	aws_tag_params(p, "Tags.member", tags);
	json_decref(tags);
}

/*
 * The ARNs of the file systems a role's nfs stores name ({store: arn}): from
 * its recorded dependencies (deps, a create), else from what this context
 * saw of them, else (fetch) from one listing of the scope's file systems.
 * Every store must be found: a policy is never put with an ARN unknown.
 */
static int efs_arns(struct prov_ctx *ctx, const struct prov_scope *scope, const json_t *attrs,
		    const json_t *deps, bool fetch, json_t **out, struct kiln_error *err)
{
	bool listed = false;
	int pass, rc = PROV_OK;
	json_t *v;
	size_t i;

	*out = json_object();
	for (pass = 0; pass < 2 && rc == PROV_OK; pass++)
		json_array_foreach(json_object_get(attrs, pass ? "nfs_write" : "nfs_read"), i, v)
		{
			const char *name = json_string_value(v);
			const char *dep = deps ? aws_dep_attr(deps, "aws_efs", name, "arn") : NULL;
			char *arn = dep ? xstrdup(dep) : aws_efs_arn(ctx, scope, name);

			if (!arn && fetch && !listed) {
				json_t *page = NULL;
				char *next = NULL;

				listed = true;
				rc = aws_efs_list(ctx, scope, NULL, &page, &next, err);
				json_decref(page);
				free(next);
				if (rc != PROV_OK)
					break;
				arn = aws_efs_arn(ctx, scope, name);
			}
			if (!arn && fetch) {
				kiln_error_set(
				    err,
				    "aws: the role's policy names aws_efs.%s, whose file "
				    "system does not exist",
				    name);
				kiln_error_hint(err, "run plan again: the file system comes first");
				rc = PROV_ERROR;
				break;
			}
			if (arn)
				json_object_set_new(*out, name, json_string(arn));
			free(arn);
		}
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static int put_policy(struct prov_ctx *ctx, const char *name, const char *doc,
		      struct kiln_error *err)
{
	struct aws_params p = {{0}};

	aws_param(&p, "RoleName", name);
	aws_param(&p, "PolicyName", POLICY_NAME);
	aws_param(&p, "PolicyDocument", doc);
	return iam(ctx, "PutRolePolicy", &p, NULL, err);
}

/* The instance profile of a role, holding it: made, or found made. */
static int ensure_profile(struct prov_ctx *ctx, const char *name, const char *path,
			  const struct prov_scope *scope, const char *address,
			  struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc;

	aws_param(&p, "InstanceProfileName", name);
	aws_param(&p, "Path", path);
	iam_tags(&p, scope, address);
	rc = iam(ctx, "CreateInstanceProfile", &p, "EntityAlreadyExists", err);
	if (rc == PROV_OK) {
		aws_param(&p, "InstanceProfileName", name);
		aws_param(&p, "RoleName", name);
		/* A profile holds one role: LimitExceeded says this one holds it already. */
		rc = iam(ctx, "AddRoleToInstanceProfile", &p, "LimitExceeded", err);
	}
	return rc;
}

int aws_role_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		    const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	char *name = aws_name(scope, op->name, 64), *path = role_path(scope), *policy = NULL;
	struct aws_params p = {{0}};
	json_t *resp = NULL, *efs = NULL;
	bool retried = false;
	int rc;

	*out = NULL;
	/* The file systems first: nothing is made for a policy that cannot be written. */
	rc = efs_arns(ctx, scope, op->attrs, op->deps, true, &efs, err);
	if (rc != PROV_OK) {
		free(name);
		free(path);
		return rc;
	}
	policy = aws_role_policy_compile(scope, op->attrs, efs, NULL);
	aws_param(&p, "RoleName", name);
	aws_param(&p, "Path", path);
	aws_param(&p, "AssumeRolePolicyDocument", TRUST_EC2);
	role_description(&p, scope, op->address);
	iam_tags(&p, scope, op->address);
	rc = aws_query(ctx, AWS_IAM, "CreateRole", &p, &resp, err);
	aws_params_release(&p);
	/* A retried create finds its role there: the name is this scope's alone. */
	if (rc == PROV_ERROR && strstr(err->msg, "EntityAlreadyExists")) {
		json_t *found = NULL;

		/* Ours only under our path: two scopes' names can meet ('_' and '.' become '-'). */
		rc = aws_role_read(ctx, name, &found, err);
		if (rc == PROV_OK && strcmp(json_string_value(json_object_get(
						json_object_get(found, "attrs"), "path"))
						? json_string_value(json_object_get(
						      json_object_get(found, "attrs"), "path"))
						: "",
					    path) != 0) {
			kiln_error_set(err, "aws: role %s exists under another path (%s), not %s",
				       name,
				       json_string_value(json_object_get(
					   json_object_get(found, "attrs"), "path")),
				       path);
			kiln_error_hint(err,
					"role names come from cluster, workspace and role with '_' "
					"and '.' made '-': rename this workspace or the role");
			rc = PROV_ERROR;
		} else if (rc == PROV_NOTFOUND) {
			kiln_error_set(err, "aws: role %s exists but is not under a kiln path",
				       name);
			rc = PROV_ERROR;
		} else if (rc == PROV_OK && scope->lineage && provider_live_lineage(found) &&
			   strcmp(provider_live_lineage(found), scope->lineage) != 0) {
			kiln_error_set(err,
				       "aws: role %s exists, owned by another state (lineage %s)",
				       name, provider_live_lineage(found));
			kiln_error_hint(err, "kiln state takeover moves it into this state");
			rc = PROV_ERROR;
		}
		json_decref(found);
		retried = true;
	}
	/*
	 * The role's ARN (made, or found made) names the account: the policy's
	 * SSM parameter ARNs name it too, rather than any account.
	 */
	if (rc == PROV_OK) {
		char *account;

		if (awsxml_str(resp, "CreateRoleResult.Role.Arn"))
			aws_account_remember(ctx, awsxml_str(resp, "CreateRoleResult.Role.Arn"));
		account = aws_account(ctx);
		free(policy);
		policy = aws_role_policy_compile(scope, op->attrs, efs, account);
		free(account);
	}
	json_decref(efs);
	/*
	 * The policy last: a create killed before it leaves a role whose store
	 * lists read back empty, so the next apply updates it, and the update
	 * makes sure of the instance profile too.
	 */
	if (rc == PROV_OK)
		rc = ensure_profile(ctx, name, path, scope, op->address, err);
	if (rc == PROV_OK)
		rc = put_policy(ctx, name, policy, err);
	/* What was just made is what is there; a role found made is read. */
	if (rc == PROV_OK && !retried && awsxml_str(resp, "CreateRoleResult.Role.Arn")) {
		json_t *tags = aws_scope_tags(scope, op->address, NULL);
		json_t *attrs = json_pack("{s:O, s:O, s:s, s:s, s:s, s:s}", "read",
					  json_object_get(op->attrs, "read"), "write",
					  json_object_get(op->attrs, "write"), "arn",
					  awsxml_str(resp, "CreateRoleResult.Role.Arn"), "profile",
					  name, "path", path, "policy", policy);
		static const char *const optional[] = {"nfs_read", "nfs_write", "allow"};
		size_t i;

		json_object_set_new(
		    attrs, "node_health",
		    json_boolean(json_is_true(json_object_get(op->attrs, "node_health"))));
		if (json_is_true(json_object_get(op->attrs, "gpu_metrics")))
			json_object_set_new(attrs, "gpu_metrics", json_true());
		for (i = 0; i < ARRAY_SIZE(optional); i++)
			if (json_array_size(json_object_get(op->attrs, optional[i])))
				json_object_set(attrs, optional[i],
						json_object_get(op->attrs, optional[i]));
		if (json_object_get(op->attrs, "ssm_read"))
			json_object_set(attrs, "ssm_read", json_object_get(op->attrs, "ssm_read"));
		*out = aws_live("aws_iam_role", name, "ready", attrs, tags);
	} else if (rc == PROV_OK) {
		rc = aws_role_read(ctx, name, out, err);
	}
	json_decref(resp);
	free(policy);
	free(name);
	free(path);
	return rc;
}
int aws_role_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		    json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		    struct kiln_error *err)
{
	char *path = role_path(scope), *addr = role_address(scope, id), *policy = NULL;
	json_t *efs = NULL;
	int rc;

	(void)changed;
	(void)nchanged;
	*out = NULL;
	rc = efs_arns(ctx, scope, attrs, NULL, true, &efs, err);
	if (rc == PROV_OK) {
		/* Refresh read the role: its ARN said the account. */
		char *account = aws_account(ctx);

		policy = aws_role_policy_compile(scope, attrs, efs, account);
		free(account);
	}
	json_decref(efs);
	/* An update may finish a create that was killed before its profile. */
	if (rc == PROV_OK)
		rc = ensure_profile(ctx, id, path, scope, addr ? addr : id, err);
	if (rc == PROV_OK)
		rc = put_policy(ctx, id, policy, err);
	free(policy);
	if (rc == PROV_OK)
		rc = aws_role_read(ctx, id, out, err);
	free(path);
	free(addr);
	return rc;
}

int aws_role_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc;

	aws_param(&p, "InstanceProfileName", id);
	aws_param(&p, "RoleName", id);
	rc = iam(ctx, "RemoveRoleFromInstanceProfile", &p, NULL, err);
	if (rc == PROV_NOTFOUND || rc == PROV_OK) {
		aws_param(&p, "InstanceProfileName", id);
		rc = iam(ctx, "DeleteInstanceProfile", &p, NULL, err);
	}
	if (rc == PROV_NOTFOUND || rc == PROV_OK) {
		aws_param(&p, "RoleName", id);
		aws_param(&p, "PolicyName", POLICY_NAME);
		rc = iam(ctx, "DeleteRolePolicy", &p, NULL, err);
	}
	if (rc == PROV_NOTFOUND || rc == PROV_OK) {
		aws_param(&p, "RoleName", id);
		rc = iam(ctx, "DeleteRole", &p, NULL, err);
	}
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int aws_role_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		  struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}

/* The role and its instance profile (the same name) both say whose they are. */
char *aws_role_policy(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      const json_t *attrs, bool live)
{
	const char *held;

	if (strcmp(type, "aws_iam_role") != 0)
		return NULL;
	if (!live) {
		/* What refresh saw of the file systems; the rest is known after apply. */
		json_t *efs = NULL;
		char *doc, *account = aws_account(ctx);
		struct kiln_error err;

		efs_arns(ctx, scope, attrs, NULL, false, &efs, &err);
		doc = aws_role_policy_compile(scope, attrs, efs, account);
		json_decref(efs);
		free(account);
		return doc;
	}
	held = json_string_value(json_object_get(attrs, "policy"));
	if (!held)
		return NULL;
	/* A role whose policy was never put (a create killed before it) grants nothing. */
	return xstrdup(*held ? held : "{\"Version\":\"2012-10-17\",\"Statement\":[]}");
}

int aws_role_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		   json_t **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *tags = aws_claim_tags(scope);
	int rc;

	*out = NULL;
	rc = aws_role_read(ctx, id, out, err);
	if (rc == PROV_OK) {
		struct aws_params d = {{0}};
		const char *addr = json_string_value(
		    json_object_get(json_object_get(*out, "tags"), PROV_TAG_ADDRESS));

		aws_param(&d, "RoleName", id);
		role_description(&d, scope, addr ? addr : id);
		rc = iam(ctx, "UpdateRole", &d, NULL, err);
	}
	json_decref(*out);
	*out = NULL;
	aws_param(&p, "RoleName", id);
	aws_tag_params(&p, "Tags.member", tags);
	if (rc == PROV_OK)
		rc = iam(ctx, "TagRole", &p, NULL, err);
	else
		aws_params_release(&p);
	if (rc == PROV_OK) {
		struct aws_params q = {{0}};

		aws_param(&q, "InstanceProfileName", id);
		aws_tag_params(&q, "Tags.member", tags);
		/* A role whose profile a killed create never made has none to tag. */
		rc = iam(ctx, "TagInstanceProfile", &q, "NoSuchEntity", err);
	}
	json_decref(tags);
	return rc == PROV_OK ? aws_role_read(ctx, id, out, err) : rc;
}
