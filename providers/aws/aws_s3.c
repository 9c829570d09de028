/*
 * aws_s3.c - object stores as S3 buckets: a deterministic, DNS-safe name
 * from cluster, workspace and store ("kiln-CLUSTER-WS-STORE", shortened
 * with a hash past 63 characters), versioning, default encryption, the
 * public access block, a lifecycle rule for expire_noncurrent_after, tags.
 *
 * S3 has no tag filter and CreateBucket takes no tags, so list asks
 * ListBuckets for our name prefix and confirms each by its tags; a bucket
 * created by a killed apply before it was tagged is still found by its
 * name. deletion: retain is a tag (kiln:deletion) the engine reads back.
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_DELETION "kiln:deletion"
#define DAY (24 * 3600)

static int s3(struct prov_ctx *ctx, const char *method, const char *bucket, const char *query,
	      const char *body, const char *action, json_t **out, struct kiln_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char md5[32] = "";
	struct aws_rest r = {
	    .method = method,
	    .bucket = bucket,
	    .path = "/",
	    .query = query,
	    .body = body,
	    .content_type = body ? "application/xml" : NULL,
	    .action = action,
	};

	/* S3 insists on Content-MD5 for some configuration PUTs (lifecycle, public access). */
	if (body) {
		EVP_Digest(body, strlen(body), md, &mdlen, EVP_md5(), NULL);
		EVP_EncodeBlock((unsigned char *)md5, md, (int)mdlen);
		r.content_md5 = md5;
	}
	return aws_rest_call(ctx, AWS_S3, &r, out, err);
}

static char *bucket_prefix(const struct prov_scope *scope)
{
	char *full = aws_name(scope, "", 1000);

	return full;
}

/* The store's name in a bucket name of this scope, or NULL. */
static const char *store_of(const char *bucket, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(bucket, prefix, n) == 0 && bucket[n] ? bucket + n : NULL;
}

static void tag_xml(struct strbuf *sb, const char *k, const char *v)
{
	sb_adds(sb, "<Tag><Key>");
	sb_add_xml(sb, k);
	sb_adds(sb, "</Key><Value>");
	sb_add_xml(sb, v);
	sb_adds(sb, "</Value></Tag>");
}

/* A bucket's tags ({} when it has none: S3 answers NoSuchTagSet). */
static int get_tags(struct prov_ctx *ctx, const char *bucket, json_t **out, struct kiln_error *err)
{
	json_t *doc = NULL;
	int rc = s3(ctx, "GET", bucket, "tagging", NULL, "GetBucketTagging", &doc, err);

	*out = NULL;
	if (rc == PROV_ERROR && strstr(err->msg, "NoSuchTagSet")) {
		*out = json_object();
		return PROV_OK;
	}
	if (rc != PROV_OK)
		return rc;
	*out = awsxml_tags(doc, "TagSet");
	json_decref(doc);
	return PROV_OK;
}

static int put_tags(struct prov_ctx *ctx, const char *bucket, const json_t *tags,
		    struct kiln_error *err)
{
	struct strbuf sb = {0};
	const char *k;
	const json_t *v;
	int rc;

	sb_adds(&sb, "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>");
	json_object_foreach_const(tags, k, v) tag_xml(&sb, k, json_string_value(v));
	sb_adds(&sb, "</TagSet></Tagging>");
	rc = s3(ctx, "PUT", bucket, "tagging", sb.buf, "PutBucketTagging", NULL, err);
	sb_release(&sb);
	return rc;
}

static int put_versioning(struct prov_ctx *ctx, const char *bucket, bool on, struct kiln_error *err)
{
	char *body = xasprintf("<VersioningConfiguration "
			       "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Status>%s</"
			       "Status></VersioningConfiguration>",
			       on ? "Enabled" : "Suspended");
	int rc = s3(ctx, "PUT", bucket, "versioning", body, "PutBucketVersioning", NULL, err);

	free(body);
	return rc;
}

static int put_lifecycle(struct prov_ctx *ctx, const char *bucket, long long secs,
			 struct kiln_error *err)
{
	char *body;
	int rc;

	if (secs <= 0) {
		rc = s3(ctx, "DELETE", bucket, "lifecycle", NULL, "PutLifecycleConfiguration", NULL,
			err);
		return rc == PROV_NOTFOUND ? PROV_OK : rc;
	}
	body = xasprintf(
	    "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Rule>"
	    "<ID>kiln-expire-noncurrent</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</"
	    "Status><NoncurrentVersionExpiration><NoncurrentDays>%lld</NoncurrentDays></"
	    "NoncurrentVersionExpiration></Rule></LifecycleConfiguration>",
	    (secs + DAY - 1) / DAY);
	rc = s3(ctx, "PUT", bucket, "lifecycle", body, "PutLifecycleConfiguration", NULL, err);
	free(body);
	return rc;
}

#define PAB_XML                                                                                    \
	"<PublicAccessBlockConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"       \
	"<BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>true</IgnorePublicAcls>"         \
	"<BlockPublicPolicy>true</BlockPublicPolicy><RestrictPublicBuckets>true</"                 \
	"RestrictPublicBuckets></PublicAccessBlockConfiguration>"

static int put_public_access_block(struct prov_ctx *ctx, const char *bucket, bool on,
				   struct kiln_error *err)
{
	int rc;

	if (on)
		return s3(ctx, "PUT", bucket, "publicAccessBlock", PAB_XML,
			  "PutBucketPublicAccessBlock", NULL, err);
	rc = s3(ctx, "DELETE", bucket, "publicAccessBlock", NULL, "PutBucketPublicAccessBlock",
		NULL, err);
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

static int put_encryption(struct prov_ctx *ctx, const char *bucket, bool on, struct kiln_error *err)
{
	int rc;

	if (on)
		return s3(ctx, "PUT", bucket, "encryption",
			  "<ServerSideEncryptionConfiguration "
			  "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Rule><"
			  "ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></"
			  "ApplyServerSideEncryptionByDefault></Rule></"
			  "ServerSideEncryptionConfiguration>",
			  "PutEncryptionConfiguration", NULL, err);
	rc = s3(ctx, "DELETE", bucket, "encryption", NULL, "PutEncryptionConfiguration", NULL, err);
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

/* Whether all four public-access blocks are on. */
static int get_public_access_block(struct prov_ctx *ctx, const char *bucket, bool *on,
				   struct kiln_error *err)
{
	static const char *const keys[] = {"BlockPublicAcls", "IgnorePublicAcls",
					   "BlockPublicPolicy", "RestrictPublicBuckets"};
	json_t *doc = NULL;
	size_t i;
	int rc = s3(ctx, "GET", bucket, "publicAccessBlock", NULL, "GetBucketPublicAccessBlock",
		    &doc, err);

	*on = false;
	if (rc == PROV_NOTFOUND ||
	    (rc == PROV_ERROR && strstr(err->msg, "NoSuchPublicAccessBlockConfiguration")))
		return PROV_OK;
	if (rc != PROV_OK)
		return rc;
	*on = true;
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = awsxml_str(doc, keys[i]);

		*on = *on && v && strcmp(v, "true") == 0;
	}
	json_decref(doc);
	return PROV_OK;
}

/* A bucket's live form: tags, versioning, lifecycle, encryption, public access; a call each. */
static int bucket_live(struct prov_ctx *ctx, const char *bucket, json_t **out,
		       struct kiln_error *err)
{
	json_t *doc = NULL, *tags, *rules, *rule;
	const char *status;
	long long expire = 0;
	bool encrypted, blocked = false;
	size_t i;
	int rc;

	*out = NULL;
	rc = get_tags(ctx, bucket, &tags, err);
	if (rc != PROV_OK)
		return rc;
	rc = s3(ctx, "GET", bucket, "versioning", NULL, "GetBucketVersioning", &doc, err);
	if (rc != PROV_OK) {
		json_decref(tags);
		return rc;
	}
	status = awsxml_str(doc, "Status");
	{
		bool on = status && strcmp(status, "Enabled") == 0;

		json_decref(doc);
		rc = s3(ctx, "GET", bucket, "lifecycle", NULL, "GetLifecycleConfiguration", &doc,
			err);
		if (rc == PROV_NOTFOUND ||
		    (rc == PROV_ERROR && strstr(err->msg, "NoSuchLifecycleConfiguration"))) {
			rc = PROV_OK;
			doc = NULL;
		}
		if (rc != PROV_OK) {
			json_decref(tags);
			return rc;
		}
		rules = awsxml_list(doc, "Rule");
		json_array_foreach(rules, i, rule)
		{
			const char *d =
			    awsxml_str(rule, "NoncurrentVersionExpiration.NoncurrentDays");
			const char *st = awsxml_str(rule, "Status");

			if (d && st && strcmp(st, "Enabled") == 0)
				expire = atoll(d) * DAY;
		}
		json_decref(rules);
		json_decref(doc);
		rc = s3(ctx, "GET", bucket, "encryption", NULL, "GetEncryptionConfiguration", &doc,
			err);
		encrypted = rc == PROV_OK;
		if (rc == PROV_NOTFOUND ||
		    (rc == PROV_ERROR &&
		     strstr(err->msg, "ServerSideEncryptionConfigurationNotFoundError")))
			rc = PROV_OK;
		json_decref(doc);
		if (rc == PROV_OK)
			rc = get_public_access_block(ctx, bucket, &blocked, err);
		if (rc != PROV_OK) {
			json_decref(tags);
			return rc;
		}
		*out =
		    aws_live("aws_s3_bucket", bucket, "ready",
			     json_pack("{s:b, s:I, s:b, s:b, s:b, s:s, s:s, s:s}", "versioning", on,
				       "expire_noncurrent_after", (json_int_t)expire, "encrypted",
				       encrypted, "block_public_access", blocked, "tagged",
				       json_object_get(tags, PROV_TAG_ADDRESS) != NULL, "deletion",
				       json_string_value(json_object_get(tags, TAG_DELETION))
					   ? json_string_value(json_object_get(tags, TAG_DELETION))
					   : "delete",
				       "bucket", bucket, "arn", ""),
			     tags);
		json_object_set_new(json_object_get(*out, "attrs"), "arn",
				    json_sprintf("arn:aws:s3:::%s", bucket));
	}
	return PROV_OK;
}

int aws_bucket_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	int rc = bucket_live(ctx, id, out, err);

	if (rc == PROV_ERROR && strstr(err->msg, "NoSuchBucket"))
		rc = PROV_NOTFOUND;
	return rc;
}

static bool tag_is(json_t *tags, const char *key, const char *value)
{
	const char *v = json_string_value(json_object_get(tags, key));

	return v && strcmp(v, value) == 0;
}

/* Keeps the names of the account's kiln- buckets ListBuckets answered (ctx->buckets). */
static void listed_record(struct prov_ctx *ctx, const json_t *buckets)
{
	json_t *names = json_object(), *b;
	size_t i;

	json_array_foreach(buckets, i, b)
	{
		const char *name = awsxml_str(b, "Name");

		if (name && strncmp(name, "kiln-", 5) == 0)
			json_object_set_new(names, name, json_true());
	}
	pthread_mutex_lock(&ctx->mu);
	json_decref(ctx->buckets);
	ctx->buckets = names;
	pthread_mutex_unlock(&ctx->mu);
}

/* Whether this context's ListBuckets answered and did not name the bucket. */
static bool listed_absent(struct prov_ctx *ctx, const char *name)
{
	bool absent;

	pthread_mutex_lock(&ctx->mu);
	absent = ctx->buckets && !json_object_get(ctx->buckets, name);
	pthread_mutex_unlock(&ctx->mu);
	return absent;
}

int aws_bucket_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		    json_t **out, char **next, struct kiln_error *err)
{
	/* Every scope: every kiln- bucket, kept below only when it carries both tags. */
	char *prefix = scope->cluster ? bucket_prefix(scope) : xstrdup("kiln-");
	json_t *doc, *buckets, *b;
	size_t i;
	int rc;

	(void)page;
	*next = NULL;
	*out = NULL;
	rc = s3(ctx, "GET", NULL, NULL, NULL, "ListAllMyBuckets", &doc, err);
	if (rc != PROV_OK) {
		free(prefix);
		return rc;
	}
	*out = json_array();
	buckets = awsxml_list(doc, "Buckets.Bucket");
	/* A listing cut short (ContinuationToken, past 10,000 buckets) proves no absence. */
	if (!awsxml_str(doc, "ContinuationToken"))
		listed_record(ctx, buckets);
	json_array_foreach(buckets, i, b)
	{
		const char *name = awsxml_str(b, "Name");
		json_t *live, *tags;
		const char *addr;

		if (!name || !store_of(name, prefix))
			continue;
		rc = aws_bucket_read(ctx, name, &live, err);
		if (rc == PROV_NOTFOUND)
			continue;
		if (rc != PROV_OK)
			break;
		tags = json_object_get(live, "tags");
		addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));
		/* Ours by its tags; untagged (a killed create), ours by its name. */
		if (!scope->cluster) {
			if (!json_object_get(tags, PROV_TAG_CLUSTER) ||
			    !json_object_get(tags, PROV_TAG_WORKSPACE)) {
				json_decref(live);
				continue;
			}
		} else if (!addr) {
			char *a = xasprintf("aws_s3_bucket.%s", store_of(name, prefix));

			json_object_set_new(live, "address", json_string(a));
			free(a);
		} else if (!tag_is(tags, PROV_TAG_WORKSPACE, scope->workspace) ||
			   !tag_is(tags, PROV_TAG_CLUSTER, scope->cluster)) {
			json_decref(live);
			continue;
		}
		json_array_append_new(*out, live);
	}
	json_decref(buckets);
	json_decref(doc);
	free(prefix);
	if (rc != PROV_OK && rc != PROV_NOTFOUND) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return PROV_OK;
}

/* What a bucket name holds for this scope, before or after a create. */
enum bucket_found {
	BUCKET_NONE,	 /* no such bucket */
	BUCKET_UNTAGGED, /* there, without tags: a killed create of ours, ours by its name */
	BUCKET_OURS,	 /* there, tagged for this scope */
};

/*
 * A bucket of this name may be another workspace's: names are made from
 * cluster and workspace with '_' and '.' turned into '-', so two scopes can
 * meet. One tagged for another scope is never taken over (PROV_ERROR).
 */
static int bucket_probe(struct prov_ctx *ctx, const struct prov_scope *scope, const char *name,
			enum bucket_found *found, struct kiln_error *err)
{
	json_t *tags;
	const char *c, *w;
	int rc = get_tags(ctx, name, &tags, err);

	*found = BUCKET_NONE;
	if (rc == PROV_NOTFOUND)
		return PROV_OK;
	if (rc != PROV_OK)
		return rc;
	*found = BUCKET_OURS;
	c = json_string_value(json_object_get(tags, PROV_TAG_CLUSTER));
	w = json_string_value(json_object_get(tags, PROV_TAG_WORKSPACE));
	if ((c && strcmp(c, scope->cluster) != 0) || (w && strcmp(w, scope->workspace) != 0)) {
		kiln_error_set(
		    err, "aws: bucket %s belongs to cluster '%s' workspace '%s', not to %s/%s",
		    name, c ? c : "?", w ? w : "?", scope->cluster, scope->workspace);
		kiln_error_hint(err, "bucket names come from cluster, workspace and store with '_' "
				     "and '.' made '-': rename this workspace or the store");
		rc = PROV_ERROR;
	} else if (!c || !w) {
		*found = BUCKET_UNTAGGED;
	}
	json_decref(tags);
	return rc;
}

static json_t *bucket_tags(const struct prov_scope *scope, const char *address,
			   const char *deletion)
{
	json_t *extra = json_pack("{s:s}", TAG_DELETION, deletion ? deletion : "delete");
	json_t *tags = aws_scope_tags(scope, address, extra);

	json_decref(extra);
	return tags;
}

/*
 * CreateBucket with the bucket's tags in it (CreateBucketConfiguration.Tags,
 * which needs s3:TagResource), and its region outside us-east-1. *made says
 * whether this call made it.
 */
static int create_bucket(struct prov_ctx *ctx, const char *name, const json_t *tags, bool *made,
			 struct kiln_error *err)
{
	struct strbuf sb = {0};
	const char *k;
	json_t *v;
	int rc;

	*made = false;
	sb_adds(&sb,
		"<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
	if (strcmp(ctx->region, "us-east-1") != 0)
		sb_addf(&sb, "<LocationConstraint>%s</LocationConstraint>", ctx->region);
	sb_adds(&sb, "<Tags>");
	json_object_foreach_const(tags, k, v) tag_xml(&sb, k, json_string_value(v));
	sb_adds(&sb, "</Tags></CreateBucketConfiguration>");
	rc = s3(ctx, "PUT", name, NULL, sb.buf, "CreateBucket", NULL, err);
	sb_release(&sb);
	*made = rc == PROV_OK;
	if (rc == PROV_ERROR && strstr(err->msg, "BucketAlreadyExists"))
		kiln_error_hint(err,
				"bucket names are global and '%s' belongs to another account; "
				"rename the store or the cluster",
				name);
	return rc;
}

/*
 * The live form of a bucket whose every input is now as attrs says (tags
 * stolen): a create or update has just set what differed, and the rest
 * already was. Read back, the lifecycle rule says whole days: what a
 * refresh will read is recorded.
 */
static const char *tag_or_delete(const char *deletion)
{
	return deletion ? deletion : "delete";
}

static json_t *bucket_as_set(const char *name, const json_t *a, json_t *tags)
{
	json_int_t secs = json_integer_value(json_object_get(a, "expire_noncurrent_after"));
	json_t *attrs =
	    json_pack("{s:b, s:I, s:b, s:b, s:b, s:s, s:s, s:s+}", "versioning",
		      json_is_true(json_object_get(a, "versioning")), "expire_noncurrent_after",
		      secs > 0 ? (secs + DAY - 1) / DAY * DAY : 0, "encrypted",
		      json_is_true(json_object_get(a, "encrypted")), "block_public_access",
		      json_is_true(json_object_get(a, "block_public_access")), "tagged", 1,
		      "deletion", tag_or_delete(json_string_value(json_object_get(a, "deletion"))),
		      "bucket", name, "arn", "arn:aws:s3:::", name);

	return aws_live("aws_s3_bucket", name, "ready", attrs, tags);
}

/*
 * A new bucket is made with its tags, and S3 gives every new bucket SSE-S3
 * default encryption (since January 2023) and all four public access blocks
 * (since April 2023): when the spec wants exactly those, no call sets them
 * (refresh still reads both, so drift on them shows). A bucket that was
 * there already (a retried or killed create) gets every setting put.
 *
 * us-east-1 answers CreateBucket 200 for a bucket this account already has
 * (and may put the tags on it), so there the name is looked at first,
 * unless this apply's refresh listed the account's buckets and the name was
 * not among them (ListBuckets names every bucket of the account, whatever
 * its tags: a workspace whose name meets this one's is listed too);
 * elsewhere 409 BucketAlreadyOwnedByYou says so, and the name is looked at
 * then.
 */
int aws_bucket_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		      const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	char *name = aws_name(scope, op->name, 63);
	json_t *a = op->attrs, *tags;
	enum bucket_found found = BUCKET_NONE;
	bool made = false;
	int rc = PROV_OK;

	*out = NULL;
	tags = bucket_tags(scope, op->address, json_string_value(json_object_get(a, "deletion")));
	if (strcmp(ctx->region, "us-east-1") == 0 && !listed_absent(ctx, name)) {
		rc = bucket_probe(ctx, scope, name, &found, err);
		/* Names are global: the look is refused for another account's bucket. */
		if (rc == PROV_ERROR && strstr(err->msg, "AccessDenied"))
			kiln_error_hint(
			    err,
			    "bucket names are global across accounts: %s may be another "
			    "account's (rename this workspace or the store), or kiln's "
			    "credentials lack s3:GetBucketTagging (`kiln iam-policy` "
			    "prints what kiln needs)",
			    name);
		else if (rc == PROV_ERROR && strstr(err->msg, "PermanentRedirect"))
			kiln_error_hint(err,
					"a bucket named %s is in another region: rename this "
					"workspace or the store",
					name);
	}
	if (rc == PROV_OK && found == BUCKET_NONE) {
		rc = create_bucket(ctx, name, tags, &made, err);
		if (rc == PROV_ERROR && strstr(err->msg, "BucketAlreadyOwnedByYou"))
			rc = bucket_probe(ctx, scope, name, &found, err);
	}
	/*
	 * Tags first on a bucket that was there: a create killed after them
	 * leaves a bucket the next refresh adopts (by name, even before them).
	 * Everything after is an attribute refresh reads back, so a half-made
	 * bucket is finished by the next apply as an update.
	 */
	if (rc == PROV_OK && !made)
		rc = put_tags(ctx, name, tags, err);
	if (rc == PROV_OK && !made && json_is_true(json_object_get(a, "block_public_access")))
		rc = put_public_access_block(ctx, name, true, err);
	if (rc == PROV_OK && !made && json_is_true(json_object_get(a, "encrypted")))
		rc = put_encryption(ctx, name, true, err);
	/* A new bucket without them (allow_unencrypted, a public store) has them taken off. */
	if (rc == PROV_OK && made && !json_is_true(json_object_get(a, "block_public_access")))
		rc = put_public_access_block(ctx, name, false, err);
	if (rc == PROV_OK && made && !json_is_true(json_object_get(a, "encrypted")))
		rc = put_encryption(ctx, name, false, err);
	if (rc == PROV_OK && json_is_true(json_object_get(a, "versioning")))
		rc = put_versioning(ctx, name, true, err);
	if (rc == PROV_OK && json_integer_value(json_object_get(a, "expire_noncurrent_after")) > 0)
		rc = put_lifecycle(
		    ctx, name, json_integer_value(json_object_get(a, "expire_noncurrent_after")),
		    err);
	/* What was just set is what is there: no call to read it back. */
	if (rc == PROV_OK) {
		*out = bucket_as_set(name, a, tags);
		tags = NULL;
	}
	json_decref(tags);
	free(name);
	return rc;
}

int aws_bucket_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		      json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		      struct kiln_error *err)
{
	size_t i;
	int rc = PROV_OK;

	*out = NULL;
	for (i = 0; i < nchanged && rc == PROV_OK; i++) {
		if (strcmp(changed[i], "versioning") == 0) {
			rc = put_versioning(
			    ctx, id, json_is_true(json_object_get(attrs, "versioning")), err);
		} else if (strcmp(changed[i], "expire_noncurrent_after") == 0) {
			rc = put_lifecycle(
			    ctx, id,
			    json_integer_value(json_object_get(attrs, "expire_noncurrent_after")),
			    err);
		} else if (strcmp(changed[i], "encrypted") == 0) {
			rc = put_encryption(ctx, id,
					    json_is_true(json_object_get(attrs, "encrypted")), err);
		} else if (strcmp(changed[i], "block_public_access") == 0) {
			rc = put_public_access_block(
			    ctx, id, json_is_true(json_object_get(attrs, "block_public_access")),
			    err);
		} else if (strcmp(changed[i], "deletion") == 0 ||
			   strcmp(changed[i], "tagged") == 0) {
			/*
			 * The whole tag set: kiln's (a bucket a killed create left
			 * untagged gets them here) over whatever else it carries.
			 */
			char *prefix = bucket_prefix(scope), *addr;
			json_t *tags, *mine;

			rc = get_tags(ctx, id, &tags, err);
			if (rc != PROV_OK) {
				free(prefix);
				break;
			}
			addr = xasprintf("aws_s3_bucket.%s",
					 store_of(id, prefix) ? store_of(id, prefix) : id);
			mine = bucket_tags(scope, addr,
					   json_string_value(json_object_get(attrs, "deletion")));
			json_object_update(tags, mine);
			rc = put_tags(ctx, id, tags, err);
			json_decref(mine);
			json_decref(tags);
			free(addr);
			free(prefix);
		} else {
			kiln_error_set(err, "aws: %s cannot change in place", changed[i]);
			rc = PROV_ERROR;
		}
	}
	/* Each input is now the spec's: the changed ones were just set, the others were. */
	if (rc == PROV_OK) {
		char *prefix = bucket_prefix(scope), *addr;

		addr =
		    xasprintf("aws_s3_bucket.%s", store_of(id, prefix) ? store_of(id, prefix) : id);
		*out = bucket_as_set(
		    id, attrs,
		    bucket_tags(scope, addr,
				json_string_value(json_object_get(attrs, "deletion"))));
		free(addr);
		free(prefix);
	}
	return rc;
}

int aws_bucket_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	int rc = s3(ctx, "DELETE", id, NULL, NULL, "DeleteBucket", NULL, err);

	if (rc == PROV_NOTFOUND)
		return PROV_OK;
	if (rc == PROV_ERROR && strstr(err->msg, "BucketNotEmpty"))
		kiln_error_hint(err,
				"kiln never deletes data: empty bucket %s (every version) "
				"first, or set deletion: retain to keep it",
				id);
	return rc;
}

int aws_bucket_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		    struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}

/* PutBucketTagging replaces the whole set: the bucket's own tags, with the claim's over them. */
int aws_bucket_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		     json_t **out, struct kiln_error *err)
{
	json_t *tags = NULL, *claim;
	int rc = get_tags(ctx, id, &tags, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	claim = aws_claim_tags(scope);
	json_object_update(tags, claim);
	json_decref(claim);
	rc = put_tags(ctx, id, tags, err);
	json_decref(tags);
	return rc == PROV_OK ? aws_bucket_read(ctx, id, out, err) : rc;
}

/* ListObjectsV2 page by page (1,000 keys a call): a run's data manifest (provider.h). */
int aws_s3_list_objects(struct prov_ctx *ctx, const char *id, const char *prefix, json_t **out,
			struct kiln_error *err)
{
	char *token = NULL;
	int rc = PROV_OK;

	*out = json_array();
	do {
		char *p = aws_uri_encode(prefix ? prefix : "", false), *t = NULL, *q;
		json_t *doc = NULL, *items, *it;
		size_t i;

		if (token)
			t = aws_uri_encode(token, false);
		/* In the canonical order: SigV4 signs the query sorted. */
		q = xasprintf("%s%s%slist-type=2&max-keys=1000&prefix=%s", t ? "continuation-token=" : "",
			      t ? t : "", t ? "&" : "", p);
		rc = s3(ctx, "GET", id, q, NULL, "ListObjectsV2", &doc, err);
		free(p);
		free(t);
		free(q);
		free(token);
		token = NULL;
		if (rc != PROV_OK)
			break;
		items = awsxml_list(doc, "Contents");
		json_array_foreach(items, i, it)
		{
			const char *key = awsxml_str(it, "Key"), *size = awsxml_str(it, "Size");
			const char *etag = awsxml_str(it, "ETag");
			char *end = NULL;
			long long n = size ? strtoll(size, &end, 10) : -1;

			if (!key || n < 0 || !end || *end) {
				kiln_error_set(err, "S3 ListObjectsV2 of %s gave an object without a key "
						    "or size",
					       id);
				rc = PROV_ERROR;
				break;
			}
			json_array_append_new(
			    *out, json_pack("{s:s, s:I, s:s%}", "key", key, "size", (json_int_t)n,
					    "etag", etag ? etag : "", etag ? strlen(etag) : 0));
		}
		json_decref(items);
		if (rc == PROV_OK && json_array_size(*out) > PROV_OBJECTS_MAX) {
			kiln_error_set(err, "s3://%s/%s holds more than %d objects", id,
				       prefix ? prefix : "", PROV_OBJECTS_MAX);
			kiln_error_hint(err, "name a narrower prefix: --data STORE/PREFIX");
			rc = PROV_ERROR;
		}
		if (rc == PROV_OK && awsxml_str(doc, "IsTruncated") &&
		    strcmp(awsxml_str(doc, "IsTruncated"), "true") == 0 &&
		    awsxml_str(doc, "NextContinuationToken"))
			token = xstrdup(awsxml_str(doc, "NextContinuationToken"));
		json_decref(doc);
	} while (rc == PROV_OK && token);
	free(token);
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}
