/*
 * aws_iam.c - spec roles as IAM roles, and the actions kiln itself needs.
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

static void stmt(json_t *stmts, const char *const *actions, const char *resource)
{
	json_t *a = json_array();

	for (; *actions; actions++)
		json_array_append_new(a, json_string(*actions));
	json_array_append_new(stmts, json_pack("{s:s, s:o, s:s}", "Effect", "Allow", "Action", a,
					       "Resource", resource));
}

static const char *const obj_read[] = {"s3:GetObject", NULL};
static const char *const obj_write[] = {"s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload",
					NULL};
static const char *const list_bucket[] = {"s3:ListBucket", NULL};
static const char *const nfs_read[] = {"elasticfilesystem:ClientMount", NULL};
static const char *const nfs_write[] = {"elasticfilesystem:ClientMount",
					"elasticfilesystem:ClientWrite", NULL};

#define NFS_SID_READ "KilnNfsRead"
#define NFS_SID_WRITE "KilnNfsWrite"

/*
 * The Sid of an nfs store's statement: IAM takes [A-Za-z0-9] there, store
 * names are [a-z0-9-], so '-' is written 'X', which no store name holds.
 */
static char *nfs_sid(bool write, const char *name)
{
	char *sid = xasprintf("%s%s", write ? NFS_SID_WRITE : NFS_SID_READ, name), *c;

	for (c = sid; *c; c++)
		if (*c == '-')
			*c = 'X';
	return sid;
}

/* The store name back from an nfs statement's Sid (NULL when it is not one). */
static char *nfs_sid_name(const char *sid, bool *write)
{
	const char *rest = NULL;
	char *name, *c;

	if (sid && strncmp(sid, NFS_SID_WRITE, strlen(NFS_SID_WRITE)) == 0)
		rest = sid + strlen(NFS_SID_WRITE), *write = true;
	else if (sid && strncmp(sid, NFS_SID_READ, strlen(NFS_SID_READ)) == 0)
		rest = sid + strlen(NFS_SID_READ), *write = false;
	if (!rest || !*rest)
		return NULL;
	name = xstrdup(rest);
	for (c = name; *c; c++)
		if (*c == 'X')
			*c = '-';
	return name;
}

char *aws_efs_pending_arn(const char *name)
{
	return xasprintf("(known after apply: aws_efs.%s)", name);
}

/*
 * The inline policy for a role's intent; bucket names come from the scope,
 * file system ARNs from efs ({store: arn}, may be NULL: a store not in it
 * is written as known after apply). The store statements come first, each
 * with one Resource string; then one statement per allow entry, its
 * Resource always a list: that difference is how policy_decompile tells
 * them apart, even when an allow entry names a kiln bucket with the same
 * actions a store statement has.
 */
static char *policy_compile(const struct prov_scope *scope, const json_t *attrs, const json_t *efs)
{
	json_t *doc = json_pack("{s:s, s:[]}", "Version", "2012-10-17", "Statement"), *v;
	json_t *stmts = json_object_get(doc, "Statement");
	size_t i;
	char *out;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		const json_t *names = json_object_get(attrs, pass ? "write" : "read");

		json_array_foreach((json_t *)names, i, v)
		{
			char *bucket = aws_name(scope, json_string_value(v), 63);
			char *arn = xasprintf("arn:aws:s3:::%s", bucket);
			char *objs = xasprintf("arn:aws:s3:::%s/*", bucket);

			stmt(stmts, pass ? obj_write : obj_read, objs);
			stmt(stmts, list_bucket, arn);
			free(objs);
			free(arn);
			free(bucket);
		}
	}
	for (pass = 0; pass < 2; pass++) {
		const json_t *names = json_object_get(attrs, pass ? "nfs_write" : "nfs_read");

		json_array_foreach((json_t *)names, i, v)
		{
			const char *name = json_string_value(v);
			const char *known = json_string_value(json_object_get(efs, name));
			char *arn = known ? xstrdup(known) : aws_efs_pending_arn(name);
			char *sid = nfs_sid(pass, name);

			stmt(stmts, pass ? nfs_write : nfs_read, arn);
			json_object_set_new(json_array_get(stmts, json_array_size(stmts) - 1),
					    "Sid", json_string(sid));
			free(sid);
			free(arn);
		}
	}
	json_array_foreach(json_object_get(attrs, "allow"), i, v)
	{
		json_t *st = json_object();
		const char *sid = json_string_value(json_object_get(v, "sid"));

		if (sid)
			json_object_set_new(st, "Sid", json_string(sid));
		json_object_set_new(st, "Effect", json_string("Allow"));
		json_object_set(st, "Action", json_object_get(v, "actions"));
		json_object_set(st, "Resource", json_object_get(v, "resources"));
		json_array_append_new(stmts, st);
	}
	out = jsonw_dumps(doc, JSON_COMPACT, NULL);
	json_decref(doc);
	return out;
}

char *aws_role_policy_compile(const struct prov_scope *scope, const json_t *attrs,
			      const json_t *efs)
{
	return policy_compile(scope, attrs, efs);
}

size_t aws_policy_size(const char *doc)
{
	size_t n = 0;

	/* IAM counts a policy's characters without its whitespace. */
	for (; *doc; doc++)
		n += !(*doc == ' ' || *doc == '\t' || *doc == '\n' || *doc == '\r');
	return n;
}

/* Whether a JSON array of strings is exactly the NULL-terminated list want. */
static bool actions_are(const json_t *acts, const char *const *want)
{
	size_t i;

	for (i = 0; want[i]; i++)
		if (!json_is_string(json_array_get(acts, i)) ||
		    strcmp(json_string_value(json_array_get(acts, i)), want[i]) != 0)
			return false;
	return json_is_array(acts) && json_array_size(acts) == i;
}

/*
 * One of kiln's store statements (as policy_compile writes them, nothing
 * more): 2 when it grants writing store *name, 1 reading, 0 when it is the
 * ListBucket half (nothing to record), -1 when it is not one.
 */
static int store_statement(const json_t *s, const char *prefix, char **name)
{
	const char *res = json_string_value(json_object_get(s, "Resource"));
	const json_t *acts = json_object_get(s, "Action");
	const char *effect = json_string_value(json_object_get(s, "Effect"));
	size_t n, plen = strlen(prefix);

	*name = NULL;
	if (json_object_size(s) != 3 || !effect || strcmp(effect, "Allow") != 0 || !res ||
	    strncmp(res, "arn:aws:s3:::", 13) != 0)
		return -1;
	res += 13;
	n = strlen(res);
	if (strncmp(res, prefix, plen) != 0 || n <= plen)
		return -1;
	if (n > plen + 2 && strcmp(res + n - 2, "/*") == 0) {
		if (!actions_are(acts, obj_write) && !actions_are(acts, obj_read))
			return -1;
		*name = xstrndup(res + plen, n - 2 - plen);
		return actions_are(acts, obj_write) ? 2 : 1;
	}
	if (strchr(res, '/') || !actions_are(acts, list_bucket))
		return -1;
	return 0;
}

/*
 * One of kiln's nfs statements (as policy_compile writes them, nothing
 * more): the store's name (malloc'd) and whether it grants writing, or NULL.
 */
static char *nfs_statement(const json_t *s, bool *write)
{
	const char *res = json_string_value(json_object_get(s, "Resource"));
	const char *effect = json_string_value(json_object_get(s, "Effect"));
	char *name;

	if (json_object_size(s) != 4 || !effect || strcmp(effect, "Allow") != 0 || !res)
		return NULL;
	name = nfs_sid_name(json_string_value(json_object_get(s, "Sid")), write);
	if (name && !actions_are(json_object_get(s, "Action"), *write ? nfs_write : nfs_read)) {
		free(name);
		name = NULL;
	}
	return name;
}

/* A string or a list of strings as a list (NULL when it is neither). */
static json_t *as_list(const json_t *v)
{
	json_t *x;
	size_t i;

	if (json_is_string(v))
		return json_pack("[O]", v);
	if (!json_is_array(v))
		return NULL;
	json_array_foreach((json_t *)v, i, x)
	{
		if (!json_is_string(x))
			return NULL;
	}
	return json_incref((json_t *)v);
}

/*
 * An allow entry back from a statement that is not a store statement. A
 * statement the spec cannot write (a Deny, a Condition, NotAction) keeps its
 * text under "statement", so it differs from every entry and shows as drift.
 */
static json_t *allow_entry(const json_t *s)
{
	json_t *acts = as_list(json_object_get(s, "Action"));
	json_t *res = as_list(json_object_get(s, "Resource"));
	const char *effect = json_string_value(json_object_get(s, "Effect"));
	json_t *e = json_pack("{s:o, s:o}", "actions", acts ? acts : json_array(), "resources",
			      res ? res : json_array());
	const char *sid = json_string_value(json_object_get(s, "Sid"));
	size_t known = 2 + !!json_object_get(s, "Effect") + !!json_object_get(s, "Sid");

	if (sid)
		json_object_set_new(e, "sid", json_string(sid));
	if (!acts || !res || !effect || strcmp(effect, "Allow") != 0 ||
	    (json_object_get(s, "Sid") && !sid) || json_object_size(s) != known)
		json_object_set(e, "statement", (json_t *)s);
	return e;
}

/*
 * Store names back from a policy (buckets under read and write, write where
 * s3:PutObject is allowed; file systems under nfs_read and nfs_write), and
 * every other statement as an allow entry; {"read", "write", "nfs_read"?,
 * "nfs_write"?, "allow"?}, the optional keys only when not empty, like the
 * desired attrs.
 */
static json_t *policy_decompile(const char *doc_text, const char *prefix)
{
	json_t *doc = doc_text ? json_loads(doc_text, 0, NULL) : NULL, *s, *stmts, *raw, *out;
	json_t *nfs[2] = {json_array(), json_array()}, *allow;
	size_t i;

	out = json_pack("{s:[], s:[]}", "read", "write");
	raw = json_array();
	stmts = json_object_get(doc, "Statement");
	/* A document edited by hand may hold one statement rather than a list. */
	if (json_is_object(stmts))
		stmts = json_pack("[O]", stmts);
	else
		json_incref(stmts);
	json_array_foreach(stmts, i, s)
	{
		char *store;
		bool write = false;
		int kind;

		store = nfs_statement(s, &write);
		if (store) {
			json_array_append_new(nfs[write], json_string(store));
			free(store);
			continue;
		}
		kind = store_statement(s, prefix, &store);
		if (kind < 0)
			json_array_append_new(raw, allow_entry(s));
		else if (kind > 0)
			json_array_append_new(json_object_get(out, kind == 2 ? "write" : "read"),
					      json_string(store));
		free(store);
	}
	for (i = 0; i < 2; i++)
		if (json_array_size(nfs[i]))
			json_object_set(out, i ? "nfs_write" : "nfs_read", nfs[i]);
	allow = pexp_allow_normalize(raw);
	if (json_array_size(allow))
		json_object_set(out, "allow", allow);
	json_decref(allow);
	json_decref(nfs[0]);
	json_decref(nfs[1]);
	json_decref(raw);
	json_decref(stmts);
	json_decref(doc);
	return out;
}

json_t *aws_role_policy_decompile(const struct prov_scope *scope, const char *doc)
{
	char *prefix = aws_name(scope, "", 1000);
	json_t *out = policy_decompile(doc, prefix);

	free(prefix);
	return out;
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
	char *policy, *prefix;
	json_t *attrs, *tags = awsxml_tags(role, "Tags");
	int rc;

	*out = NULL;
	rc = get_policy(ctx, name, &policy, err);
	if (rc != PROV_OK) {
		json_decref(tags);
		return rc;
	}
	lineage_of_description(role, tags);
	prefix = aws_name(scope, "", 1000);
	attrs = policy_decompile(policy, prefix);
	json_object_set_new(attrs, "arn", json_string(awsxml_str(role, "Arn")));
	json_object_set_new(attrs, "profile", json_string(name));
	json_object_set_new(attrs, "path", json_string(awsxml_str(role, "Path")));
	json_object_set_new(attrs, "policy", json_string(policy));
	*out = aws_live("aws_iam_role", name, "ready", attrs, tags);
	free(prefix);
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

int role_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page, json_t **out,
	      char **next, struct kiln_error *err)
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

int role_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
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
				rc = efs_list(ctx, scope, NULL, &page, &next, err);
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

int role_create(struct prov_ctx *ctx, const struct prov_scope *scope, const struct prov_create *op,
		json_t **out, struct kiln_error *err)
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
	policy = aws_role_policy_compile(scope, op->attrs, efs);
	json_decref(efs);
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
		rc = role_read(ctx, name, &found, err);
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
		} else if (rc == PROV_OK && scope->lineage && prov_live_lineage(found) &&
			   strcmp(prov_live_lineage(found), scope->lineage) != 0) {
			kiln_error_set(err,
				       "aws: role %s exists, owned by another state (lineage %s)",
				       name, prov_live_lineage(found));
			kiln_error_hint(err, "kiln state takeover moves it into this state");
			rc = PROV_ERROR;
		}
		json_decref(found);
		retried = true;
	}
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

		for (i = 0; i < ARRAY_SIZE(optional); i++)
			if (json_array_size(json_object_get(op->attrs, optional[i])))
				json_object_set(attrs, optional[i],
						json_object_get(op->attrs, optional[i]));
		*out = aws_live("aws_iam_role", name, "ready", attrs, tags);
	} else if (rc == PROV_OK) {
		rc = role_read(ctx, name, out, err);
	}
	json_decref(resp);
	free(policy);
	free(name);
	free(path);
	return rc;
}
int role_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id, json_t *attrs,
		const char *const *changed, size_t nchanged, json_t **out, struct kiln_error *err)
{
	char *path = role_path(scope), *addr = role_address(scope, id), *policy = NULL;
	json_t *efs = NULL;
	int rc;

	(void)changed;
	(void)nchanged;
	*out = NULL;
	rc = efs_arns(ctx, scope, attrs, NULL, true, &efs, err);
	if (rc == PROV_OK)
		policy = aws_role_policy_compile(scope, attrs, efs);
	json_decref(efs);
	/* An update may finish a create that was killed before its profile. */
	if (rc == PROV_OK)
		rc = ensure_profile(ctx, id, path, scope, addr ? addr : id, err);
	if (rc == PROV_OK)
		rc = put_policy(ctx, id, policy, err);
	free(policy);
	if (rc == PROV_OK)
		rc = role_read(ctx, id, out, err);
	free(path);
	free(addr);
	return rc;
}

int role_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
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

int role_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
	      struct kiln_error *err)
{
	return ec2_wait_now(ctx, what, ids, n, err);
}

/* Where an action may be scoped: the ARN patterns of this scope, or "*" when the API allows none.
 */
static const char *action_resource(const char *action, const char *buckets, const char *roles,
				   const char *profiles)
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

char *aws_iam_policy(struct prov_ctx *ctx, const struct prov_scope *scope,
		     const char *const *actions, size_t n)
{
	char *prefix = aws_name(scope, "", 1000);
	char *buckets, *roles, *profiles, *out;
	json_t *doc = json_pack("{s:s, s:[]}", "Version", "2012-10-17", "Statement");
	json_t *stmts = json_object_get(doc, "Statement"), *by_res = json_object(), *acts;
	const char *res;
	size_t i;

	(void)ctx;
	/* Bucket names are shortened past 63 characters: the pattern keeps what is kept. */
	if (strlen(prefix) > 54)
		prefix[54] = '\0';
	buckets = xasprintf("arn:aws:s3:::%s*", prefix);
	roles = xasprintf("arn:aws:iam::*:role/kiln/%s/%s/*", scope->cluster, scope->workspace);
	profiles = xasprintf("arn:aws:iam::*:instance-profile/kiln/%s/%s/*", scope->cluster,
			     scope->workspace);
	for (i = 0; i < n; i++) {
		if (strcmp(actions[i], "iam:PassRole") == 0)
			continue;
		res = action_resource(actions[i], buckets, roles, profiles);
		/* Putting a role in a profile (or taking it out) touches both. */
		if (strstr(actions[i], "RoleToInstanceProfile") ||
		    strstr(actions[i], "RoleFromInstanceProfile")) {
			acts = json_object_get(by_res, roles);
			if (!acts) {
				acts = json_array();
				json_object_set_new(by_res, roles, acts);
			}
			json_array_append_new(acts, json_string(actions[i]));
		}
		acts = json_object_get(by_res, res);
		if (!acts) {
			acts = json_array();
			json_object_set_new(by_res, res, acts);
		}
		json_array_append_new(acts, json_string(actions[i]));
	}
	json_object_foreach(by_res, res, acts)
	{
		json_t *r = strcmp(res, "*") == 0 || strncmp(res, "arn:aws:s3", 10) != 0
				? json_string(res)
				: json_pack("[s, s+]", res, res, "/*");

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
	out = jsonw_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER, NULL);
	json_decref(doc);
	json_decref(by_res);
	free(buckets);
	free(roles);
	free(profiles);
	free(prefix);
	return out;
}

char *aws_role_policy(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      const json_t *attrs, bool live)
{
	const char *held;

	if (strcmp(type, "aws_iam_role") != 0)
		return NULL;
	if (!live) {
		/* What refresh saw of the file systems; the rest is known after apply. */
		json_t *efs = NULL;
		char *doc;
		struct kiln_error err;

		efs_arns(ctx, scope, attrs, NULL, false, &efs, &err);
		doc = aws_role_policy_compile(scope, attrs, efs);
		json_decref(efs);
		return doc;
	}
	held = json_string_value(json_object_get(attrs, "policy"));
	if (!held)
		return NULL;
	/* A role whose policy was never put (a create killed before it) grants nothing. */
	return xstrdup(*held ? held : "{\"Version\":\"2012-10-17\",\"Statement\":[]}");
}

/* The role and its instance profile (the same name) both say whose they are. */
int role_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id, json_t **out,
	       struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *tags = aws_claim_tags(scope);
	int rc;

	*out = NULL;
	rc = role_read(ctx, id, out, err);
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
	return rc == PROV_OK ? role_read(ctx, id, out, err) : rc;
}
