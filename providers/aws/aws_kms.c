/*
 * aws_kms.c - scheduler.kms_key on aws: the customer managed KMS key the
 * munge key's SecureString is encrypted with instead of the account's
 * aws/ssm key, whose key policy lets every principal of the account decrypt
 * through SSM. What it owns: the key's accepted forms (checked at validate
 * time), and the one IAM statement that lets a principal use it through
 * SSM only, written and read back.
 *
 * The forms (KeyId of PutParameter, "AWS KMS keys" and "Aliases in AWS
 * KMS" in the KMS Developer Guide): a key ARN
 * arn:aws:kms:REGION:ACCOUNT:key/ID, an alias ARN
 * arn:aws:kms:REGION:ACCOUNT:alias/NAME, or alias/NAME in the cluster's
 * region. SSM encrypts with a key of its own region, and the aws/ aliases
 * are AWS managed keys (the default, whose policy no one can narrow).
 *
 * The statement ("kms:ViaService" and "kms:ResourceAliases" in "AWS KMS
 * condition keys", KMS Developer Guide; "How Parameter Store uses AWS
 * KMS", Systems Manager User Guide: a SecureString needs kms:Decrypt to be
 * read, kms:Encrypt to be written with a customer managed key): the action
 * on exactly that key, only when SSM of the cluster's region calls KMS for
 * the principal (kms:ViaService = ssm.REGION.amazonaws.com). A key ARN is
 * the Resource; an alias names no key ARN before it is resolved, so its
 * Resource is the region's (and, for an alias ARN, the account's) keys and
 * kms:ResourceAliases narrows it to the key the alias points at.
 */
#include "aws_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define KMS_ARN "arn:aws:kms:"
#define ALIAS_MAX 256

/* The parts of a kms_key: region ("" for a bare alias), account, and key/ID or alias/NAME. */
struct kms_ref {
	char region[32];
	char account[16];
	const char *resource; /* "key/..." or "alias/...", in the string given */
};

static bool alias_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n + 6 > ALIAS_MAX)
		return false;
	for (; *name; name++)
		if (!isalnum((unsigned char)*name) && !strchr("/_-", *name))
			return false;
	return true;
}

/* A key id: a UUID, or a multi-Region key's mrk- and 32 hex digits. */
static bool key_id_ok(const char *id)
{
	size_t n;

	if (strncmp(id, "mrk-", 4) == 0)
		id += 4;
	n = strlen(id);
	if (n == 0 || n > 36)
		return false;
	for (; *id; id++)
		if (!isxdigit((unsigned char)*id) && *id != '-')
			return false;
	return true;
}

/* key in one of its forms into r; false when it is none of them. */
static bool kms_parse(const char *key, struct kms_ref *r)
{
	const char *p = key, *colon;
	size_t n;

	memset(r, 0, sizeof(*r));
	if (strncmp(key, KMS_ARN, strlen(KMS_ARN)) == 0) {
		p += strlen(KMS_ARN);
		if (!(colon = strchr(p, ':')) || (n = (size_t)(colon - p)) == 0 ||
		    n >= sizeof(r->region))
			return false;
		memcpy(r->region, p, n);
		p = colon + 1;
		if (!(colon = strchr(p, ':')) || colon - p != 12)
			return false;
		memcpy(r->account, p, 12);
		for (n = 0; n < 12; n++)
			if (!isdigit((unsigned char)r->account[n]))
				return false;
		p = colon + 1;
	}
	r->resource = p;
	if (strncmp(p, "alias/", 6) == 0)
		return alias_name_ok(p + 6);
	/* A key ARN; a bare key id names no region or account to scope a policy to. */
	return r->region[0] && strncmp(p, "key/", 4) == 0 && key_id_ok(p + 4);
}

void aws_kms_check(const struct spec *spec, struct diags *d)
{
	const struct spec_ref *k = &spec->scheduler.kms_key;
	const char *region = spec->provider.region;
	struct kms_ref r;
	struct diag *dg;

	if (!k->name)
		return;
	if (!kms_parse(k->name, &r)) {
		dg = diags_add(d, DIAG_ERROR, spec->file, k->node->line, k->node->col,
			       "scheduler.kms_key '%s' is not a KMS key ARN or alias", k->name);
		diag_hint(dg, "write arn:aws:kms:REGION:ACCOUNT:key/ID, "
			      "arn:aws:kms:REGION:ACCOUNT:alias/NAME or alias/NAME");
	} else if (strncmp(r.resource, "alias/aws/", 10) == 0)
		diag_hint(diags_add(d, DIAG_ERROR, spec->file, k->node->line, k->node->col,
				    "scheduler.kms_key '%s' is an AWS managed key, whose policy "
				    "lets every principal of the account decrypt through SSM",
				    k->name),
			  "name a customer managed key, or leave kms_key out for aws/ssm");
	else if (r.region[0] && region && strcmp(r.region, region) != 0)
		diag_hint(
		    diags_add(d, DIAG_ERROR, spec->file, k->node->line, k->node->col,
			      "scheduler.kms_key is a key in %s; the cluster's parameters are "
			      "in %s",
			      r.region, region),
		    "SSM encrypts with a key of its own region: name a key in %s", region);
}

json_t *aws_kms_statement(const char *key, const char *region, const char *sid, const char *action)
{
	struct kms_ref r;
	json_t *st, *cond;
	char *res, *via = xasprintf("ssm.%s.amazonaws.com", region);

	if (!kms_parse(key, &r)) {
		free(via);
		return NULL;
	}
	cond = json_pack("{s:{s:s}}", "StringEquals", "kms:ViaService", via);
	if (strncmp(r.resource, "key/", 4) == 0) {
		res = xstrdup(key);
	} else {
		res = xasprintf("%s%s:%s:key/*", KMS_ARN, r.region[0] ? r.region : region,
				r.account[0] ? r.account : "*");
		json_object_set_new(cond, "ForAnyValue:StringEquals",
				    json_pack("{s:s}", "kms:ResourceAliases", r.resource));
	}
	st = json_pack("{s:s, s:s, s:[s], s:s, s:o}", "Sid", sid, "Effect", "Allow", "Action",
		       action, "Resource", res, "Condition", cond);
	free(res);
	free(via);
	return st;
}

char *aws_kms_statement_key(const json_t *s, const char *region, const char *sid,
			    const char *action)
{
	const json_t *cond = json_object_get(s, "Condition");
	const char *res = json_string_value(json_object_get(s, "Resource"));
	const char *alias = json_string_value(json_object_get(
	    json_object_get(cond, "ForAnyValue:StringEquals"), "kms:ResourceAliases"));
	char *key, *rest;
	json_t *again;
	bool same;

	if (!res || !json_is_string(json_object_get(s, "Sid")) ||
	    strcmp(json_string_value(json_object_get(s, "Sid")), sid) != 0)
		return NULL;
	if (!alias) {
		key = xstrdup(res);
	} else if (strncmp(res, KMS_ARN, strlen(KMS_ARN)) == 0 &&
		   (rest = strstr(res + strlen(KMS_ARN), ":*:key/*")) != NULL &&
		   strcmp(rest, ":*:key/*") == 0) {
		key = xstrdup(alias);
	} else if (strncmp(res, KMS_ARN, strlen(KMS_ARN)) == 0 && str_ends_with(res, ":key/*")) {
		key = xasprintf("%.*s%s", (int)(strlen(res) - strlen("key/*")), res, alias);
	} else {
		return NULL;
	}
	/* Only the statement kiln writes for that key, to the letter, reads back. */
	again = aws_kms_statement(key, region, sid, action);
	same = again && json_equal(again, s);
	json_decref(again);
	if (!same) {
		free(key);
		return NULL;
	}
	return key;
}
