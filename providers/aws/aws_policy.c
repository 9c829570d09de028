/*
 * aws_policy.c - a role's intent compiled to its IAM policy and read back
 * from it: the inline policy "kiln" of each role (aws_iam.c makes the role),
 * exact ARNs and the fewest actions, one statement a store (an nfs store's
 * Sid names it, so the policy reads back to names without a lookup), then
 * the role's allow: statements as written; and the policy a plan shows for
 * a role (role_policy).
 *
 * Every role is a node role (its trust names ec2.amazonaws.com), and with
 * node_health its policy ends with the one statement that lets a node put
 * its health report on itself (issue 14): ec2:CreateTags on an instance
 * only when that instance is the caller (the resource's ARN, aws:ARN,
 * equals ${ec2:SourceInstanceARN}, the ARN of the instance whose role
 * credentials signed the request: "Condition keys for Amazon EC2" and
 * "AWS global condition context keys", Service Authorization Reference)
 * and only for the key kiln:health (ForAllValues:StringEquals on
 * aws:TagKeys, "Controlling access during AWS requests" in the IAM User
 * Guide). Its Resource leaves region and account as wildcards: the
 * condition already confines it to the caller's own instance, which has
 * one of each, and the account is not known before the first call.
 *
 * With gpu_metrics (a role of a group whose type has GPUs, issue 17) one
 * more statement lets the node's CloudWatch agent publish its GPU metrics:
 * cloudwatch:PutMetricData, which has no resource-level permission (its
 * Resource is "*"), narrowed by the cloudwatch:namespace condition key to
 * the agent's namespace ("Amazon CloudWatch condition keys", Service
 * Authorization Reference, and "Using condition keys to limit access to
 * CloudWatch namespaces", CloudWatch User Guide).
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"
#include "expand.h"
#include "jsonw.h"

#include <stdlib.h>
#include <string.h>

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

static const char *const ssm_read[] = {"ssm:GetParameter", NULL};
#define HEALTH_SID "KilnNodeHealth"
#define HEALTH_STATEMENT                                                                           \
	"{\"Sid\":\"" HEALTH_SID "\",\"Effect\":\"Allow\",\"Action\":\"ec2:CreateTags\","          \
	"\"Resource\":\"arn:aws:ec2:*:*:instance/*\",\"Condition\":{\"StringEquals\":"             \
	"{\"aws:ARN\":\"${ec2:SourceInstanceARN}\"},\"ForAllValues:StringEquals\":"                \
	"{\"aws:TagKeys\":[\"kiln:health\"]}}}"

#define GPU_METRICS_SID "KilnGpuMetrics"
#define GPU_METRICS_STATEMENT                                                                      \
	"{\"Sid\":\"" GPU_METRICS_SID "\",\"Effect\":\"Allow\","                                   \
	"\"Action\":\"cloudwatch:PutMetricData\",\"Resource\":\"*\",\"Condition\":"                \
	"{\"StringEquals\":{\"cloudwatch:namespace\":\"" AWS_GPU_METRICS_NAMESPACE "\"}}}"

/* The node-health statement, as policy_compile writes it; new reference. */
static json_t *health_statement(void)
{
	return json_loads(HEALTH_STATEMENT, 0, NULL);
}

/* The GPU-metrics statement, as policy_compile writes it; new reference. */
static json_t *gpu_metrics_statement(void)
{
	return json_loads(GPU_METRICS_STATEMENT, 0, NULL);
}

#define NFS_SID_READ "KilnNfsRead"
/* The statement naming the parameters the role's nodes read at boot (aws_ssm.c). */
#define SSM_SID_READ "KilnSsmRead"
/* The statement letting a Slurm node look its controller up (aws_slurm.c). */
#define SSM_SID_FIND "KilnSlurmFind"
static const char *const find_controller[] = {"ec2:DescribeInstances", NULL};
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

static bool actions_are(const json_t *acts, const char *const *want);

/*
 * "arn:aws:ssm:REGION:ACCOUNT:parameter/kiln/CLUSTER/WORKSPACE/": a
 * parameter's ARN but its leaf; ACCOUNT "*" while it is not known.
 */
static char *ssm_arn_prefix(const struct prov_scope *scope, const char *region,
			    const char *account)
{
	return xasprintf("arn:aws:ssm:%s:%s:parameter/kiln/%s/%s/", region, account ? account : "*",
			 scope->cluster, scope->workspace);
}

/*
 * ssm_read ({"region", "leaves", "kms_key"?}): ssm:GetParameter on each
 * parameter by its ARN, in the account kiln read from IAM's ARNs (the
 * role's own, which CreateRole answers before the policy is put), '*' only
 * before any is known (the plan of a first apply). With the aws/ssm key a SecureString needs no
 * kms:Decrypt in the policy: that key's policy lets every principal of the
 * account decrypt through SSM. With kms_key, a customer managed key, the
 * role gets kms:Decrypt on that key through SSM (KilnSlurmKey, aws_kms.c).
 */
static void ssm_statement(json_t *stmts, const struct prov_scope *scope, const json_t *read,
			  const char *account)
{
	const char *region = json_string_value(json_object_get(read, "region"));
	json_t *res, *v;
	char *prefix;
	size_t i;

	if (!region || !json_array_size(json_object_get(read, "leaves")))
		return;
	prefix = ssm_arn_prefix(scope, region, account);
	res = json_array();
	json_array_foreach(json_object_get(read, "leaves"), i, v)
	    json_array_append_new(res, json_sprintf("%s%s", prefix, json_string_value(v)));
	json_array_append_new(stmts,
			      json_pack("{s:s, s:s, s:[s], s:o}", "Sid", SSM_SID_READ, "Effect",
					"Allow", "Action", ssm_read[0], "Resource", res));
	/* scheduler.kms_key: decrypting with it, through SSM only (aws_kms.c). */
	if (json_is_string(json_object_get(read, "kms_key"))) {
		json_t *k = aws_kms_statement(json_string_value(json_object_get(read, "kms_key")),
					      region, AWS_KMS_SID, "kms:Decrypt");

		if (k)
			json_array_append_new(stmts, k);
	}
	/* EC2 scopes no Describe call to a resource. */
	if (json_is_true(json_object_get(read, "find_controller")))
		json_array_append_new(stmts, json_pack("{s:s, s:s, s:[s], s:s}", "Sid",
						       SSM_SID_FIND, "Effect", "Allow", "Action",
						       find_controller[0], "Resource", "*"));
	free(prefix);
}

/* Whether s is ssm_statement's KilnSlurmFind statement, as it writes it. */
static bool find_statement(const json_t *s)
{
	const char *sid = json_string_value(json_object_get(s, "Sid"));
	const char *effect = json_string_value(json_object_get(s, "Effect"));
	const char *res = json_string_value(json_object_get(s, "Resource"));

	return sid && strcmp(sid, SSM_SID_FIND) == 0 && json_object_size(s) == 4 && effect &&
	       strcmp(effect, "Allow") == 0 && res && strcmp(res, "*") == 0 &&
	       actions_are(json_object_get(s, "Action"), find_controller);
}

/*
 * The ssm_read attribute back from kiln's statement (as ssm_statement
 * writes it, nothing more), or NULL when s is not that statement.
 */
static json_t *ssm_statement_read(const json_t *s, const struct prov_scope *scope)
{
	const char *effect = json_string_value(json_object_get(s, "Effect"));
	const char *sid = json_string_value(json_object_get(s, "Sid"));
	json_t *res = json_object_get(s, "Resource"), *leaves, *v;
	char *prefix = NULL, *region = NULL, *account = NULL;
	size_t i;

	if (!sid || strcmp(sid, SSM_SID_READ) != 0 || json_object_size(s) != 4 || !effect ||
	    strcmp(effect, "Allow") != 0 || !actions_are(json_object_get(s, "Action"), ssm_read) ||
	    !json_array_size(res))
		return NULL;
	leaves = json_array();
	json_array_foreach(res, i, v)
	{
		const char *arn = json_string_value(v), *rest;

		if (!arn || strncmp(arn, "arn:aws:ssm:", 12) != 0 || !strchr(arn + 12, ':'))
			break;
		if (!region) {
			const char *acct = strchr(arn + 12, ':') + 1;

			region = xstrndup(arn + 12, (size_t)(acct - 1 - arn - 12));
			/* The account as written: "*" or the one the policy was put with. */
			account = xstrndup(acct, strcspn(acct, ":"));
			prefix = ssm_arn_prefix(scope, region, account);
		}
		if (strncmp(arn, prefix, strlen(prefix)) != 0)
			break;
		rest = arn + strlen(prefix);
		json_array_append_new(leaves, json_string(rest));
	}
	if (i != json_array_size(res)) {
		json_decref(leaves);
		leaves = NULL;
	}
	v = leaves ? json_pack("{s:s, s:o, s:b}", "region", region, "leaves", leaves,
			       "find_controller", 0)
		   : NULL;
	free(prefix);
	free(region);
	free(account);
	return v;
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
static char *policy_compile(const struct prov_scope *scope, const json_t *attrs, const json_t *efs,
			    const char *account)
{
	json_t *doc = json_pack("{s:s, s:[]}", "Version", "2012-10-17", "Statement"), *v;
	json_t *stmts = json_object_get(doc, "Statement");
	size_t i;
	char *out;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		const json_t *names = json_object_get(attrs, pass ? "write" : "read");

		json_array_foreach(names, i, v)
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

		json_array_foreach(names, i, v)
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
	ssm_statement(stmts, scope, json_object_get(attrs, "ssm_read"), account);
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
	if (json_is_true(json_object_get(attrs, "node_health")))
		json_array_append_new(stmts, health_statement());
	if (json_is_true(json_object_get(attrs, "gpu_metrics")))
		json_array_append_new(stmts, gpu_metrics_statement());
	out = jsonw_dumps(doc, JSON_COMPACT, NULL);
	json_decref(doc);
	return out;
}

char *aws_role_policy_compile(const struct prov_scope *scope, const json_t *attrs,
			      const json_t *efs, const char *account)
{
	return policy_compile(scope, attrs, efs, account);
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
	json_array_foreach(v, i, x)
	{
		if (!json_is_string(x))
			return NULL;
	}
	return jsonc_share(v);
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
		json_object_set_new(e, "statement", jsonc_share(s));
	return e;
}

/*
 * Store names back from a policy (buckets under read and write, write where
 * s3:PutObject is allowed; file systems under nfs_read and nfs_write), the
 * node-health statement as node_health true, the GPU-metrics statement as
 * gpu_metrics true, and every other statement as an allow entry; {"read",
 * "write", "nfs_read"?, "nfs_write"?, "allow"?, "node_health"?,
 * "gpu_metrics"?}, the optional keys only when not empty, like the desired
 * attrs.
 */
static json_t *policy_decompile(const char *doc_text, const char *prefix,
				const struct prov_scope *scope)
{
	json_t *doc = doc_text ? json_loads(doc_text, 0, NULL) : NULL, *s, *stmts, *raw, *out;
	json_t *nfs[2] = {json_array(), json_array()}, *allow, *ssm = NULL;
	json_t *health = health_statement(), *metrics = gpu_metrics_statement();
	char *kms = NULL;
	bool finds = false;
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
		json_t *read = ssm ? NULL : ssm_statement_read(s, scope);

		if (read) {
			ssm = read;
			continue;
		}
		if (ssm && !finds && find_statement(s)) {
			finds = true;
			continue;
		}
		if (ssm && !kms &&
		    (kms =
			 aws_kms_statement_key(s, json_string_value(json_object_get(ssm, "region")),
					       AWS_KMS_SID, "kms:Decrypt")))
			continue;
		if (json_equal(s, health)) {
			json_object_set_new(out, "node_health", json_true());
			continue;
		}
		if (json_equal(s, metrics)) {
			json_object_set_new(out, "gpu_metrics", json_true());
			continue;
		}
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
	if (ssm) {
		json_object_set_new(ssm, "find_controller", json_boolean(finds));
		if (kms)
			json_object_set_new(ssm, "kms_key", json_string(kms));
		json_object_set_new(out, "ssm_read", ssm);
	}
	free(kms);
	allow = expand_allow_normalize(raw);
	if (json_array_size(allow))
		json_object_set(out, "allow", allow);
	json_decref(allow);
	json_decref(nfs[0]);
	json_decref(nfs[1]);
	json_decref(raw);
	json_decref(stmts);
	json_decref(doc);
	json_decref(health);
	json_decref(metrics);
	return out;
}

json_t *aws_role_policy_decompile(const struct prov_scope *scope, const char *doc)
{
	char *prefix = aws_name(scope, "", 1000);
	json_t *out = policy_decompile(doc, prefix, scope);

	free(prefix);
	return out;
}
