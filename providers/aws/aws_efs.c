/*
 * aws_efs.c - the nfs tier as EFS with a mount target.
 *
 *   aws_efs.STORE                CreateFileSystem (CreationToken, encrypted)
 *   aws_efs_mount_target.STORE   CreateMountTarget (no tags: EFS has none for it;
 *                                found through its file system's)
 *
 * The mount target is made in the subnet of the zone the nodes are in
 * (aws_storage_zone); a file system's ARN is remembered for the roles whose
 * policy names it (aws_iam.c); deletion: retain and the mount path ride in
 * kiln:deletion and kiln:mount tags (aws_storage.c).
 */
#include "aws_storage.h"

#include "aws/awsxml.h"
#include "jsonw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EFS_API "/2015-02-01"

/* --- EFS ------------------------------------------------------------------------------- */

static int efs(struct prov_ctx *ctx, const char *method, const char *path, const char *query,
	       json_t *body, const char *action, json_t **out, struct kiln_error *err)
{
	char *text = body ? jsonw_dumps(body, JSON_COMPACT, NULL) : NULL;
	struct aws_rest r = {
	    .method = method,
	    .path = path,
	    .query = query,
	    .body = text,
	    .content_type = text ? "application/json" : NULL,
	    .action = action,
	};
	int rc = aws_rest_call(ctx, AWS_EFS, &r, out, err);

	free(text);
	json_decref(body);
	return rc;
}

static json_t *efs_live(json_t *fs)
{
	const char *id = json_string_value(json_object_get(fs, "FileSystemId"));
	const char *life = json_string_value(json_object_get(fs, "LifeCycleState"));
	json_t *tags = aws_storage_tag_map(json_object_get(fs, "Tags"));
	const char *status = "ready";

	if (!id || (life && strcmp(life, "deleted") == 0)) {
		json_decref(tags);
		return NULL;
	}
	if (life && (strcmp(life, "creating") == 0 || strcmp(life, "updating") == 0))
		status = "pending";
	else if (life && strcmp(life, "deleting") == 0)
		status = "deleting";
	return aws_live("aws_efs", id, status,
			json_pack("{s:b, s:s, s:s?, s:O?, s:s?}", "encrypted",
				  json_is_true(json_object_get(fs, "Encrypted")), "deletion",
				  aws_storage_tag_or(tags, TAG_DELETION, "delete"), "mount",
				  json_string_value(json_object_get(tags, TAG_MOUNT)), "arn",
				  json_object_get(fs, "FileSystemArn"), "lifecycle", life),
			tags);
}

static int efs_describe(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	char *marker = NULL;
	int rc = PROV_OK;

	*out = json_array();
	do {
		char *q = id	   ? xasprintf("FileSystemId=%s", id)
			  : marker ? xasprintf("Marker=%s", marker)
				   : xstrdup("");
		json_t *resp, *fs;
		size_t i;

		free(marker);
		marker = NULL;
		rc = efs(ctx, "GET", EFS_API "/file-systems", q, NULL, "DescribeFileSystems", &resp,
			 err);
		free(q);
		if (rc != PROV_OK)
			break;
		json_array_foreach(json_object_get(resp, "FileSystems"), i, fs)
		{
			json_t *live = efs_live(fs);

			/* A role's policy names the file system by its ARN. */
			if (live)
				aws_efs_remember(ctx, live);
			if (live)
				json_array_append_new(*out, live);
		}
		/* By id there is one answer; an empty marker is the last page too. */
		if (!id && json_string_length(json_object_get(resp, "NextMarker")) > 0)
			marker = aws_uri_encode(
			    json_string_value(json_object_get(resp, "NextMarker")), false);
		json_decref(resp);
	} while (marker);
	if (rc == PROV_NOTFOUND && id) {
		json_decref(*out);
		*out = json_array();
		return PROV_OK;
	}
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int aws_efs_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		 json_t **out, char **next, struct kiln_error *err)
{
	(void)page;
	*next = NULL;
	return aws_storage_listing(ctx, "efs", scope, efs_describe, out, err);
}

int aws_efs_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *all;
	int rc = efs_describe(ctx, id, &all, err);

	return aws_read_one(rc, all, "EFS file system", id, out, err);
}

int aws_efs_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		   const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	char *token = aws_storage_token(op->token);
	json_t *body = json_pack(
	    "{s:s, s:s, s:b, s:s, s:o}", "CreationToken", token, "PerformanceMode",
	    "generalPurpose", "Encrypted", json_is_true(json_object_get(op->attrs, "encrypted")),
	    "ThroughputMode", "elastic", "Tags",
	    aws_storage_tag_list(scope, op->address, aws_storage_tags(op->attrs)));
	json_t *resp = NULL;
	int rc;

	*out = NULL;
	free(token);
	rc = efs(ctx, "POST", EFS_API "/file-systems", NULL, body, "CreateFileSystem", &resp, err);
	/* A retried create: EFS answers 409 with the file system the token made. */
	if (rc == PROV_ERROR && strstr(err->msg, "FileSystemAlreadyExists")) {
		char *tok = aws_storage_token(op->token), *enc = aws_uri_encode(tok, false);
		char *q = xasprintf("CreationToken=%s", enc);
		json_t *found = NULL;

		rc = efs(ctx, "GET", EFS_API "/file-systems", q, NULL, "DescribeFileSystems",
			 &found, err);
		if (rc == PROV_OK)
			resp =
			    json_incref(json_array_get(json_object_get(found, "FileSystems"), 0));
		json_decref(found);
		free(q);
		free(enc);
		free(tok);
		if (rc == PROV_OK && !resp) {
			kiln_error_set(err, "aws: EFS says the file system of this creation token "
					    "exists, but does not list it");
			rc = PROV_RETRY;
		}
	}
	if (rc != PROV_OK)
		return rc;
	*out = efs_live(resp);
	json_decref(resp);
	if (!*out) {
		kiln_error_set(err, "aws: efs CreateFileSystem answered no FileSystemId");
		return PROV_ERROR;
	}
	aws_efs_remember(ctx, *out);
	json_object_set_new(*out, "address", json_string(op->address));
	return PROV_OK;
}

int aws_efs_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		   json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		   struct kiln_error *err)
{
	json_t *extra = aws_storage_tags(attrs), *tags = json_array(), *v;
	char *path = xasprintf(EFS_API "/resource-tags/%s", id);
	const char *k;
	int rc;

	(void)scope;
	(void)changed;
	(void)nchanged;
	json_object_foreach(extra, k, v)
	    json_array_append_new(tags, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(extra);
	rc = efs(ctx, "POST", path, NULL, json_pack("{s:o}", "Tags", tags), "TagResource", NULL,
		 err);
	free(path);
	if (rc == PROV_OK)
		rc = aws_efs_read(ctx, id, out, err);
	return rc;
}

int aws_efs_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	char *path = xasprintf(EFS_API "/file-systems/%s", id);
	int rc = efs(ctx, "DELETE", path, NULL, NULL, "DeleteFileSystem", NULL, err);

	free(path);
	/* Its mount target is still going away: the API says so, and it will not be long. */
	if (rc == PROV_ERROR && strstr(err->msg, "FileSystemInUse"))
		rc = PROV_RETRY;
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int aws_efs_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		 struct kiln_error *err)
{
	json_t *all;
	int rc = efs_describe(ctx, NULL, &all, err);

	if (rc == PROV_OK)
		aws_storage_wait_from(all, what, ids, n, NULL);
	json_decref(all);
	return rc;
}

/* --- EFS mount targets ------------------------------------------------------------------- */

static json_t *mt_live(json_t *mt, const char *fs_address, json_t *fs_tags)
{
	const char *id = json_string_value(json_object_get(mt, "MountTargetId"));
	const char *life = json_string_value(json_object_get(mt, "LifeCycleState"));
	const char *status = "ready";
	json_t *tags;
	char *addr;

	if (!id || (life && strcmp(life, "deleted") == 0))
		return NULL;
	if (life && strcmp(life, "creating") == 0)
		status = "pending";
	else if (life && strcmp(life, "deleting") == 0)
		status = "deleting";
	/* No tags of its own: its file system's say whose it is. */
	tags = json_deep_copy(fs_tags);
	addr = xasprintf("aws_efs_mount_target.%s",
			 strchr(fs_address, '.') ? strchr(fs_address, '.') + 1 : fs_address);
	json_object_set_new(tags, PROV_TAG_ADDRESS, json_string(addr));
	free(addr);
	return aws_live("aws_efs_mount_target", id, status,
			json_pack("{s:O?, s:O?, s:O?, s:O?, s:s?}", "file_system_id",
				  json_object_get(mt, "FileSystemId"), "subnet_id",
				  json_object_get(mt, "SubnetId"), "zone",
				  json_object_get(mt, "AvailabilityZoneName"), "ip_address",
				  json_object_get(mt, "IpAddress"), "lifecycle", life),
			tags);
}

static int mt_of(struct prov_ctx *ctx, json_t *fs, json_t *into, struct kiln_error *err)
{
	const char *fs_id = json_string_value(json_object_get(fs, "id"));
	const char *fs_addr = json_string_value(json_object_get(fs, "address"));
	char *q = xasprintf("FileSystemId=%s", fs_id);
	json_t *resp, *mt;
	size_t i;
	int rc =
	    efs(ctx, "GET", EFS_API "/mount-targets", q, NULL, "DescribeMountTargets", &resp, err);

	free(q);
	if (rc == PROV_NOTFOUND)
		return PROV_OK;
	if (rc != PROV_OK)
		return rc;
	json_array_foreach(json_object_get(resp, "MountTargets"), i, mt)
	{
		json_t *live =
		    mt_live(mt, fs_addr ? fs_addr : "aws_efs.?", json_object_get(fs, "tags"));

		if (live)
			json_array_append_new(into, live);
	}
	json_decref(resp);
	return PROV_OK;
}

int aws_mt_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	json_t *fss, *fs;
	size_t i;
	int rc;

	(void)page;
	*next = NULL;
	*out = NULL;
	/* One listing for both types (file systems and mount targets). */
	rc = aws_storage_listing(ctx, "efs", scope, efs_describe, &fss, err);
	if (rc != PROV_OK)
		return rc;
	*out = json_array();
	json_array_foreach(fss, i, fs)
	{
		rc = mt_of(ctx, fs, *out, err);
		if (rc != PROV_OK)
			break;
	}
	json_decref(fss);
	if (rc == PROV_OK)
		aws_refresh_seen(ctx, scope, "aws_efs_mount_target", json_array_size(*out));
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * A mount target by id; with whose, its file system is read too, for the
 * tags that say whose it is (a wait needs only its state and attributes).
 */
static int mt_describe(struct prov_ctx *ctx, const char *id, bool whose, json_t **out,
		       struct kiln_error *err)
{
	char *q = xasprintf("MountTargetId=%s", id);
	json_t *resp, *mt, *fs = NULL;
	int rc =
	    efs(ctx, "GET", EFS_API "/mount-targets", q, NULL, "DescribeMountTargets", &resp, err);

	free(q);
	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	mt = json_array_get(json_object_get(resp, "MountTargets"), 0);
	if (mt && whose)
		rc = aws_efs_read(ctx, json_string_value(json_object_get(mt, "FileSystemId")), &fs,
				  err);
	if (mt && rc == PROV_OK)
		*out = mt_live(mt,
			       json_string_value(json_object_get(fs, "address"))
				   ? json_string_value(json_object_get(fs, "address"))
				   : "aws_efs.?",
			       json_object_get(fs, "tags"));
	json_decref(fs);
	json_decref(resp);
	if (rc == PROV_OK && !*out) {
		kiln_error_set(err, "aws: EFS mount target %s does not exist", id);
		return PROV_NOTFOUND;
	}
	return rc;
}

int aws_mt_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return mt_describe(ctx, id, true, out, err);
}

int aws_mt_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *fs = aws_dep_attr(op->deps, "aws_efs", op->name, "id");
	const char *subnet = NULL;
	const char *sg = aws_dep_attr(op->deps, "aws_security_group", "main", "id");
	json_t *resp = NULL, *fs_tags;
	int rc = aws_storage_subnet(ctx, scope, op->deps, &subnet, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	if (!fs || !subnet || !sg)
		return aws_storage_missing(op->address,
					   "its file system, a subnet and the security group", err);
	rc = efs(ctx, "POST", EFS_API "/mount-targets", NULL,
		 json_pack("{s:s, s:s, s:[s]}", "FileSystemId", fs, "SubnetId", subnet,
			   "SecurityGroups", sg),
		 "CreateMountTarget", &resp, err);
	/* A retried create: the one already there is this one (one per zone). */
	if (rc == PROV_ERROR && strstr(err->msg, "MountTargetConflict")) {
		json_t *all = json_array();
		json_t *f = json_pack("{s:s, s:s}", "id", fs, "address", "aws_efs.x");

		rc = mt_of(ctx, f, all, err);
		json_decref(f);
		if (rc == PROV_OK && json_array_size(all))
			rc = aws_mt_read(
			    ctx, json_string_value(json_object_get(json_array_get(all, 0), "id")),
			    out, err);
		json_decref(all);
		return rc;
	}
	if (rc != PROV_OK)
		return rc;
	/* Its file system's tags are the ones this scope gave it. */
	fs_tags = aws_scope_tags(scope, op->address, NULL);
	*out = mt_live(resp, op->address, fs_tags);
	json_decref(fs_tags);
	json_decref(resp);
	if (rc == PROV_OK && !*out) {
		kiln_error_set(err, "aws: efs CreateMountTarget answered no MountTargetId");
		return PROV_ERROR;
	}
	return rc;
}

int aws_mt_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	char *path = xasprintf(EFS_API "/mount-targets/%s", id);
	int rc = efs(ctx, "DELETE", path, NULL, NULL, "DeleteMountTarget", NULL, err);

	free(path);
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int aws_mt_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *live = NULL;
		int rc = mt_describe(ctx, ids[i].id, false, &live, err);

		ids[i].state = WAIT_PENDING;
		if (rc == PROV_NOTFOUND) {
			if (what == WAIT_GONE)
				ids[i].state = WAIT_DONE;
			continue;
		}
		if (rc != PROV_OK)
			return rc;
		if (what == WAIT_READY &&
		    strcmp(json_string_value(json_object_get(live, "status")), "ready") == 0) {
			ids[i].state = WAIT_DONE;
			ids[i].live = live;
			continue;
		}
		json_decref(live);
	}
	return PROV_OK;
}

/* A file system, or a mount target through its file system (whose tags it shows). */
int aws_efs_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		  const char *id, json_t **out, struct kiln_error *err)
{
	bool mt = strcmp(type, "aws_efs_mount_target") == 0;
	json_t *live = NULL;
	const char *fs = id;
	char *path;
	int rc = PROV_OK;

	*out = NULL;
	if (mt) {
		rc = aws_mt_read(ctx, id, &live, err);
		fs = json_string_value(
		    json_object_get(json_object_get(live, "attrs"), "file_system_id"));
		if (rc == PROV_OK && !fs) {
			kiln_error_set(err, "aws: EFS did not say the file system of %s", id);
			rc = PROV_ERROR;
		}
	}
	if (rc == PROV_OK) {
		path = xasprintf(EFS_API "/resource-tags/%s", fs);
		rc = efs(ctx, "POST", path, NULL,
			 json_pack("{s:o}", "Tags", aws_storage_claim_tags(scope)), "TagResource",
			 NULL, err);
		free(path);
	}
	json_decref(live);
	if (rc != PROV_OK)
		return rc;
	return mt ? aws_mt_read(ctx, id, out, err) : aws_efs_read(ctx, id, out, err);
}
