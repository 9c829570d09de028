/*
 * aws_ssm.c - SSM Parameter Store parameters: what a cluster's nodes read at
 * boot with their role instead of finding it in user data (which anyone
 * with ec2:DescribeInstanceAttribute reads).
 *
 *   aws_ssm_parameter.NAME   PutParameter /kiln/CLUSTER/WORKSPACE/LEAF
 *
 * A parameter is either a String whose content kiln writes (slurm.conf: a
 * change is an overwrite in place) or a SecureString whose value kiln
 * generates at create and never reads back (the munge key): the value goes
 * into the create's live form once, where the state seals it, and into SSM
 * encrypted with the account's aws/ssm key, or with scheduler.kms_key
 * (aws_kms.c; tagged kiln:kms-key, as SSM's reads do not answer the key
 * id). Every parameter of a workspace
 * is under one path, so one GetParametersByPath lists them; their kiln tags
 * come from ListTagsForResource (PutParameter tags in the call itself). A
 * spec without parameters (no scheduler) lists none: the parameters its
 * state still records are read by id (engine_refresh reads what a list did
 * not return), so a spec that dropped its scheduler still deletes them.
 */
#include "aws_ec2.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of a generated munge key: mungekey(8)'s default is 1024 bits. */
#define MUNGE_KEY_BYTES 128

static int ssm(struct prov_ctx *ctx, const char *action, json_t *body, json_t **out,
	       struct kiln_error *err)
{
	return aws_json(ctx, AWS_SSM, action, body, out, err);
}

char *aws_ssm_path(const struct prov_scope *scope)
{
	return xasprintf("/kiln/%s/%s", scope->cluster, scope->workspace);
}

char *aws_ssm_name(const struct prov_scope *scope, const char *leaf)
{
	return xasprintf("/kiln/%s/%s/%s", scope->cluster, scope->workspace, leaf);
}

/* The live form of a parameter as GetParametersByPath or GetParameters answers it. */
static json_t *param_live(const json_t *p, json_t *tags)
{
	const char *name = json_string_value(json_object_get(p, "Name"));
	const char *type = json_string_value(json_object_get(p, "Type"));
	const char *gen = json_string_value(json_object_get(tags, AWS_SSM_TAG_GENERATED));
	const char *leaf = json_string_value(json_object_get(tags, AWS_SSM_TAG_LEAF));
	const char *key = json_string_value(json_object_get(tags, AWS_SSM_TAG_KEY));
	json_t *attrs;

	if (!name || !type) {
		json_decref(tags);
		return NULL;
	}
	attrs = json_pack("{s:s, s:s?, s:O?, s:s, s:s?, s:s*}", "kind", type, "leaf", leaf, "arn",
			  json_object_get(p, "ARN"), "name", name, "generated", gen, "key_id", key);
	/* A String's content is what kiln compares; a secret is never read back. */
	if (strcmp(type, "String") == 0)
		json_object_set(attrs, "content", json_object_get(p, "Value"));
	return aws_live("aws_ssm_parameter", name, "ready", attrs, tags);
}

static json_t *tag_map(const json_t *list)
{
	json_t *m = json_object(), *t;
	size_t i;

	json_array_foreach(list, i, t)
	{
		const char *k = json_string_value(json_object_get(t, "Key"));

		if (k)
			json_object_set(m, k, json_object_get(t, "Value"));
	}
	return m;
}

static int param_tags(struct prov_ctx *ctx, const char *name, json_t **out, struct kiln_error *err)
{
	json_t *resp;
	int rc = ssm(ctx, "ListTagsForResource",
		     json_pack("{s:s, s:s}", "ResourceType", "Parameter", "ResourceId", name),
		     &resp, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	*out = tag_map(json_object_get(resp, "TagList"));
	json_decref(resp);
	return PROV_OK;
}

/* Live forms of parameters (an SSM answer's "Parameters"), tags read one by one. */
static int params_live(struct prov_ctx *ctx, const json_t *params, json_t *out,
		       struct kiln_error *err)
{
	json_t *p;
	size_t i;

	json_array_foreach(params, i, p)
	{
		const char *name = json_string_value(json_object_get(p, "Name"));
		json_t *tags, *live;
		int rc;

		if (!name)
			continue;
		rc = param_tags(ctx, name, &tags, err);
		if (rc == PROV_NOTFOUND)
			continue; /* deleted between the two calls */
		if (rc != PROV_OK)
			return rc;
		live = param_live(p, tags);
		if (live)
			json_array_append_new(out, live);
	}
	return PROV_OK;
}

int aws_ssmp_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		  json_t **out, char **next, struct kiln_error *err)
{
	char *path;
	json_t *body, *resp;
	int rc;

	*out = NULL;
	*next = NULL;
	/* kiln sprawl (no cluster) lists every workspace's. */
	if (scope->cluster && !ctx->ssm_parameters) {
		*out = json_array();
		return PROV_OK;
	}
	path = scope->cluster ? aws_ssm_path(scope) : xstrdup("/kiln");
	body = json_pack("{s:s, s:b, s:b}", "Path", path, "Recursive", 1, "WithDecryption", 0);
	free(path);
	if (page)
		json_object_set_new(body, "NextToken", json_string(page));
	rc = ssm(ctx, "GetParametersByPath", body, &resp, err);
	if (rc != PROV_OK)
		return rc;
	*out = json_array();
	rc = params_live(ctx, json_object_get(resp, "Parameters"), *out, err);
	if (rc == PROV_OK && json_string_length(json_object_get(resp, "NextToken")) > 0)
		*next = xstrdup(json_string_value(json_object_get(resp, "NextToken")));
	json_decref(resp);
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int aws_ssmp_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *resp, *all = json_array();
	int rc = ssm(ctx, "GetParameters",
		     json_pack("{s:[s], s:b}", "Names", id, "WithDecryption", 0), &resp, err);

	if (rc == PROV_OK) {
		rc = params_live(ctx, json_object_get(resp, "Parameters"), all, err);
		json_decref(resp);
	}
	return aws_read_one(rc, all, "SSM parameter", id, out, err);
}

/* MUNGE_KEY_BYTES random bytes, base64: a munge key (munged reads the decoded bytes). */
static char *munge_key(struct kiln_error *err)
{
	unsigned char raw[MUNGE_KEY_BYTES];
	char *b64 = xmalloc(4 * ((MUNGE_KEY_BYTES + 2) / 3) + 1);

	if (RAND_bytes(raw, sizeof(raw)) != 1) {
		kiln_error_set(err, "aws: OpenSSL could not make a random munge key");
		kiln_error_hint(err, "check the system's entropy source, then apply again");
		free(b64);
		return NULL;
	}
	EVP_EncodeBlock((unsigned char *)b64, raw, sizeof(raw));
	OPENSSL_cleanse(raw, sizeof(raw));
	return b64;
}

int aws_ssmp_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		    const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *kind = json_string_value(json_object_get(op->attrs, "kind"));
	const char *leaf = json_string_value(json_object_get(op->attrs, "leaf"));
	const char *gen = json_string_value(json_object_get(op->attrs, "generated"));
	const char *key = json_string_value(json_object_get(op->attrs, "key_id"));
	char *name, *secret = NULL;
	json_t *extra = json_pack("{s:s?, s:s*}", AWS_SSM_TAG_LEAF, leaf, AWS_SSM_TAG_KEY, key);
	json_t *tags, *list, *v, *body;
	const char *k;
	int rc;

	*out = NULL;
	if (!kind || !leaf) {
		json_decref(extra);
		kiln_error_set(err, "aws: %s has no kind or leaf to make it from", op->address);
		return PROV_ERROR;
	}
	if (gen) {
		if (strcmp(gen, "munge-key") != 0 || (secret = munge_key(err)) == NULL) {
			json_decref(extra);
			if (!secret && strcmp(gen, "munge-key") != 0)
				kiln_error_set(err, "aws: %s: kiln cannot generate '%s'",
					       op->address, gen);
			return PROV_ERROR;
		}
		json_object_set_new(extra, AWS_SSM_TAG_GENERATED, json_string(gen));
	}
	name = aws_ssm_name(scope, leaf);
	tags = aws_scope_tags(scope, op->address, extra);
	json_decref(extra);
	list = json_array();
	json_object_foreach(tags, k, v)
	    json_array_append_new(list, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(tags);
	body = json_pack("{s:s, s:s, s:s, s:s, s:o}", "Name", name, "Type", kind, "Value",
			 secret ? secret : json_string_value(json_object_get(op->attrs, "content")),
			 "Description", "kiln: read by the cluster's nodes at boot", "Tags", list);
	/* The key is recorded in a tag too: SSM's reads do not answer it. */
	if (key)
		json_object_set_new(body, "KeyId", json_string(key));
	/*
	 * PutParameter has no idempotency token: a parameter that exists already
	 * (a create that ran but was not recorded) answers ParameterAlreadyExists,
	 * and the refresh before the next plan adopts it by its tags.
	 */
	rc = ssm(ctx, "PutParameter", body, NULL, err);
	if (rc == PROV_OK)
		rc = aws_ssmp_read(ctx, name, out, err);
	if (rc == PROV_OK && secret)
		json_object_set_new(json_object_get(*out, "attrs"), "value", json_string(secret));
	if (secret) {
		OPENSSL_cleanse(secret, strlen(secret));
		free(secret);
	}
	free(name);
	return rc;
}

int aws_ssmp_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		    json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		    struct kiln_error *err)
{
	size_t i;
	int rc = PROV_OK;

	(void)scope;
	*out = NULL;
	for (i = 0; i < nchanged && rc == PROV_OK; i++) {
		if (strcmp(changed[i], "content") != 0) {
			kiln_error_set(err, "aws: %s cannot change in place", changed[i]);
			return PROV_ERROR;
		}
		/* Overwrite keeps the parameter's tags; its version goes up by one. */
		rc = ssm(ctx, "PutParameter",
			 json_pack("{s:s, s:O, s:s, s:b}", "Name", id, "Value",
				   json_object_get(attrs, "content"), "Type", "String", "Overwrite",
				   1),
			 NULL, err);
	}
	return rc == PROV_OK ? aws_ssmp_read(ctx, id, out, err) : rc;
}

int aws_ssmp_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	int rc = ssm(ctx, "DeleteParameter", json_pack("{s:s}", "Name", id), NULL, err);

	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

/* A parameter is there once PutParameter answered; gone once DeleteParameter did. */
int aws_ssmp_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		  struct kiln_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *live = NULL;
		int rc = aws_ssmp_read(ctx, ids[i].id, &live, err);

		if (rc == PROV_NOTFOUND) {
			ids[i].state = what == WAIT_GONE ? WAIT_DONE : WAIT_PENDING;
			continue;
		}
		if (rc != PROV_OK)
			return rc;
		if (what == WAIT_READY) {
			ids[i].state = WAIT_DONE;
			ids[i].live = live;
		} else {
			ids[i].state = WAIT_PENDING;
			json_decref(live);
		}
	}
	return PROV_OK;
}

int aws_ssmp_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		   json_t **out, struct kiln_error *err)
{
	json_t *tags = aws_claim_tags(scope), *list = json_array(), *v;
	const char *k;
	int rc;

	json_object_foreach(tags, k, v)
	    json_array_append_new(list, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(tags);
	rc = ssm(ctx, "AddTagsToResource",
		 json_pack("{s:s, s:s, s:o}", "ResourceType", "Parameter", "ResourceId", id, "Tags",
			   list),
		 NULL, err);
	return rc == PROV_OK ? aws_ssmp_read(ctx, id, out, err) : rc;
}
