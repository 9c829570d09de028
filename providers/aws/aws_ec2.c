/*
 * aws_ec2.c - what the EC2 types have in common: listing by the kiln tags
 * page by page, reading by id, and the live form of an item.
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"

#include <stdlib.h>
#include <string.h>

json_t *aws_ec2_item_tags(json_t *item)
{
	return awsxml_tags(item, "tagSet");
}

int aws_ec2_describe(struct prov_ctx *ctx, const struct ec2_kind *k, struct aws_params *p,
		     json_t **out, char **next, struct kiln_error *err)
{
	json_t *resp, *items, *item;
	const char *token;
	size_t i;
	int rc;

	*out = NULL;
	if (next)
		*next = NULL;
	rc = aws_query(ctx, AWS_EC2, k->describe, p, &resp, err);
	if (rc != PROV_OK)
		return rc;
	*out = json_array();
	items = awsxml_list(resp, k->set);
	json_array_foreach(items, i, item)
	{
		json_t *live = k->live(item);

		if (live)
			json_array_append_new(*out, live);
	}
	json_decref(items);
	token = awsxml_str(resp, "nextToken");
	if (next && token && *token)
		*next = xstrdup(token);
	json_decref(resp);
	return PROV_OK;
}

int aws_ec2_list(struct prov_ctx *ctx, const struct ec2_kind *k, const struct prov_scope *scope,
		 const char *page, json_t **out, char **next, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc;

	aws_scope_filters(&p, 1, scope);
	if (k->paged) {
		aws_param(&p, "MaxResults", "1000");
		if (page)
			aws_param(&p, "NextToken", page);
	}
	rc = aws_ec2_describe(ctx, k, &p, out, k->paged ? next : NULL, err);
	if (!k->paged)
		*next = NULL;
	aws_params_release(&p);
	return rc;
}

int aws_ec2_read(struct prov_ctx *ctx, const struct ec2_kind *k, const char *id, json_t **out,
		 struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *arr;
	int rc;

	aws_param(&p, k->id_param, id);
	rc = aws_ec2_describe(ctx, k, &p, &arr, NULL, err);
	aws_params_release(&p);
	return aws_read_one(rc, arr, k->type, id, out, err);
}

int aws_ec2_find_tagged(struct prov_ctx *ctx, const struct ec2_kind *k,
			const struct prov_scope *scope, const char *key, const char *value,
			json_t **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc, n;

	*out = NULL;
	n = aws_scope_filters(&p, 1, scope);
	aws_paramf(&p, "Filter.3.Name", "tag:%s", key);
	aws_param(&p, "Filter.3.Value.1", value);
	(void)n;
	rc = aws_ec2_describe(ctx, k, &p, out, NULL, err);
	aws_params_release(&p);
	return rc;
}

int aws_ec2_find_address(struct prov_ctx *ctx, const struct ec2_kind *k,
			 const struct prov_scope *scope, const char *address, json_t **out,
			 struct kiln_error *err)
{
	json_t *arr;
	int rc = aws_ec2_find_tagged(ctx, k, scope, PROV_TAG_ADDRESS, address, &arr, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return *out ? PROV_OK : PROV_NOTFOUND;
}

/*
 * A create without an idempotency token whose answer was lost may have
 * been done: adopt what carries its address, else say try again.
 */
int aws_ec2_create_lost(struct prov_ctx *ctx, const struct ec2_kind *k,
			const struct prov_scope *scope, const char *address, json_t **out,
			struct kiln_error *err)
{
	struct kiln_error lerr = {{0}, {0}};
	/* One look, which http.c retries; a create must not be sent blind again. */
	int rc = aws_ec2_find_address(ctx, k, scope, address, out, &lerr);

	if (rc == PROV_OK)
		return PROV_OK;
	if (rc == PROV_NOTFOUND)
		return PROV_RETRY; /* not made: err still says why, for when retries run out */
	kiln_error_set(err, "aws: %s may have been created, and kiln could not look: %s", address,
		       lerr.msg);
	kiln_error_hint(err, "run kiln plan: it adopts what carries the address tag");
	return PROV_ERROR;
}

/* Deleted synchronously: gone once delete returned (or the id is unknown). */
int aws_ec2_wait_now(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		     struct kiln_error *err)
{
	size_t i;

	(void)ctx;
	(void)what;
	(void)err;
	for (i = 0; i < n; i++)
		ids[i].state = WAIT_DONE;
	return PROV_OK;
}

/* The id a create answered, or an error naming the action. */
const char *aws_ec2_created_id(json_t *resp, const char *path)
{
	return awsxml_str(resp, path);
}

int aws_ec2_put_tags(struct prov_ctx *ctx, const json_t *ids, const json_t *tags,
		     struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *id;
	size_t i;
	int rc;

	json_array_foreach(ids, i, id)
	{
		char *k = xasprintf("ResourceId.%zu", i + 1);

		aws_param(&p, k, json_string_value(id));
		free(k);
	}
	aws_tag_params(&p, "Tag", tags);
	rc = aws_query(ctx, AWS_EC2, "CreateTags", &p, NULL, err);
	aws_params_release(&p);
	return rc;
}

int aws_ec2_claim_tags(struct prov_ctx *ctx, const struct prov_scope *scope, const json_t *ids,
		       struct kiln_error *err)
{
	json_t *tags = aws_claim_tags(scope);
	int rc = aws_ec2_put_tags(ctx, ids, tags, err);

	json_decref(tags);
	return rc;
}

int aws_tag_expiry(struct prov_ctx *ctx, const char *type, const char *id, const json_t *attrs,
		   const char *expires, struct kiln_error *err)
{
	const json_t *ids = json_object_get(attrs, "instance_ids");
	json_t *tags;
	int rc;

	(void)id;
	/* A group's nodes are its instances: each reads its own tags (InstanceMetadataTags). */
	if (strcmp(type, "aws_instance_group") != 0 || !json_array_size(ids))
		return PROV_OK;
	tags = json_pack("{s:s}", PROV_TAG_EXPIRES, expires);
	rc = aws_ec2_put_tags(ctx, ids, tags, err);
	json_decref(tags);
	return rc;
}
