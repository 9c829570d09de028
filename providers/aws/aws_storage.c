/*
 * aws_storage.c - the file tiers: lustre as FSx for Lustre (PERSISTENT_2)
 * with its S3 import as a data repository association, and nfs as EFS
 * with a mount target; the file system and the mount target in the subnet
 * of the zone the nodes are in (aws_storage_zone).
 *
 *   aws_fsx_lustre.STORE   CreateFileSystem (ClientRequestToken), AVAILABLE when ready
 *   aws_fsx_import.STORE   CreateDataRepositoryAssociation from the object store it imports
 *   aws_efs.STORE          CreateFileSystem (CreationToken, encrypted)
 *   aws_efs_mount_target.STORE   CreateMountTarget (no tags: EFS has none for it;
 *                          found through its file system's)
 *
 * Both are reached over the network (the security group admits all traffic
 * from itself); an EFS file system's ARN is remembered for the roles whose
 * policy names it (aws_iam.c). deletion: retain and
 * the mount path ride in kiln:deletion and kiln:mount tags.
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"
#include "jsonw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FSX_TARGET "AWSSimbaAPIService_v20180301."
#define EFS_API "/2015-02-01"
#define TAG_DELETION "kiln:deletion"
#define TAG_MOUNT "kiln:mount"

static int fsx(struct prov_ctx *ctx, const char *action, json_t *body, json_t **out,
	       struct kiln_error *err)
{
	char *target = xasprintf(FSX_TARGET "%s", action);
	int rc = aws_json(ctx, AWS_FSX, target, action, body, out, err);

	free(target);
	json_decref(body);
	return rc;
}

/* [{Key, Value}] of the scope's tags, the address and extra (stolen; may be NULL). */
static json_t *tag_list(const struct prov_scope *scope, const char *address, json_t *extra)
{
	json_t *map = aws_scope_tags(scope, address, extra), *tags = json_array(), *v;
	const char *k;

	json_object_foreach(map, k, v)
	    json_array_append_new(tags, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(map);
	json_decref(extra);
	return tags;
}

/* {k: v} from [{Key, Value}]. */
static json_t *tag_map(json_t *list)
{
	json_t *out = json_object(), *t;
	size_t i;

	json_array_foreach(list, i, t)
	{
		const char *k = json_string_value(json_object_get(t, "Key"));
		const char *v = json_string_value(json_object_get(t, "Value"));

		if (k)
			json_object_set_new(out, k, json_string(v ? v : ""));
	}
	return out;
}

static bool in_scope(json_t *tags, const struct prov_scope *scope)
{
	const char *c = json_string_value(json_object_get(tags, PROV_TAG_CLUSTER));
	const char *w = json_string_value(json_object_get(tags, PROV_TAG_WORKSPACE));

	if (!scope->cluster) /* every scope: whatever carries both tags */
		return c && w;
	return c && w && strcmp(c, scope->cluster) == 0 && strcmp(w, scope->workspace) == 0;
}

static const char *tag_or(json_t *tags, const char *key, const char *def)
{
	const char *v = json_string_value(json_object_get(tags, key));

	return v ? v : def;
}

/* A token of at most 63 characters (FSx's limit) from the engine's. */
static char *short_token(const char *token)
{
	return xstrndup(token, 63);
}

/* --- FSx for Lustre ------------------------------------------------------------ */

static json_t *lustre_live(json_t *fs)
{
	const char *id = json_string_value(json_object_get(fs, "FileSystemId"));
	const char *life = json_string_value(json_object_get(fs, "Lifecycle"));
	json_t *tags = tag_map(json_object_get(fs, "Tags")), *lc;
	const char *status = "ready";

	if (!id) {
		json_decref(tags);
		return NULL;
	}
	if (life && (strcmp(life, "CREATING") == 0 || strcmp(life, "UPDATING") == 0))
		status = "pending";
	else if (life && strcmp(life, "DELETING") == 0)
		status = "deleting";
	lc = json_object_get(fs, "LustreConfiguration");
	return aws_live("aws_fsx_lustre", id, status,
			json_pack("{s:O?, s:O?, s:b, s:s, s:s?, s:O?, s:O?, s:O?, s:s?}",
				  "capacity_gb", json_object_get(fs, "StorageCapacity"),
				  "throughput_per_tib",
				  json_object_get(lc, "PerUnitStorageThroughput"), "encrypted", 1,
				  "deletion", tag_or(tags, TAG_DELETION, "delete"), "mount",
				  json_string_value(json_object_get(tags, TAG_MOUNT)), "dns_name",
				  json_object_get(fs, "DNSName"), "mount_name",
				  json_object_get(lc, "MountName"), "arn",
				  json_object_get(fs, "ResourceARN"), "lifecycle", life),
			tags);
}

/*
 * Every page of an FSx Describe* call (req: its members, e.g. ids or
 * filters, may be NULL), each item of list_key turned into a live form by
 * live (NULL skips it), appended to *out (a new array when NULL).
 */
static int fsx_describe_all(struct prov_ctx *ctx, const char *action, const json_t *req,
			    const char *list_key, json_t *(*live)(json_t *item), json_t **out,
			    struct kiln_error *err)
{
	char *token = NULL;
	int rc = PROV_OK;

	if (!*out)
		*out = json_array();
	do {
		json_t *body = req ? json_deep_copy(req) : json_object(), *resp, *item;
		size_t i;

		if (token)
			json_object_set_new(body, "NextToken", json_string(token));
		free(token);
		token = NULL;
		rc = fsx(ctx, action, body, &resp, err);
		if (rc != PROV_OK)
			break;
		json_array_foreach(json_object_get(resp, list_key), i, item)
		{
			json_t *v = live(item);

			if (v)
				json_array_append_new(*out, v);
		}
		/* An empty token is the last page too (some servers send one). */
		if (json_string_length(json_object_get(resp, "NextToken")) > 0)
			token = xstrdup(json_string_value(json_object_get(resp, "NextToken")));
		json_decref(resp);
	} while (token);
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/* Lustre file systems only (the account may have others). */
static json_t *lustre_item(json_t *fs)
{
	const char *type = json_string_value(json_object_get(fs, "FileSystemType"));

	return type && strcmp(type, "LUSTRE") == 0 ? lustre_live(fs) : NULL;
}

static int lustre_describe(struct prov_ctx *ctx, json_t *ids, json_t **out, struct kiln_error *err)
{
	json_t *req = ids ? json_pack("{s:O}", "FileSystemIds", ids) : NULL;
	int rc;

	*out = NULL;
	rc =
	    fsx_describe_all(ctx, "DescribeFileSystems", req, "FileSystems", lustre_item, out, err);
	json_decref(req);
	return rc;
}

/*
 * One wait poll from a listing of every resource of a type: gone when it
 * is not listed, ready when its status is, failed when failed() says so.
 */
static void wait_from(json_t *all, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		      bool (*failed)(json_t *live, struct kiln_error *err))
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		json_t *found = NULL, *v;

		json_array_foreach(all, j,
				   v) if (strcmp(json_string_value(json_object_get(v, "id")),
						 ids[i].id) == 0) found = v;
		ids[i].state = WAIT_PENDING;
		if (what == WAIT_GONE) {
			if (!found)
				ids[i].state = WAIT_DONE;
		} else if (found && failed && failed(found, &ids[i].err)) {
			ids[i].state = WAIT_FAILED;
		} else if (found && strcmp(json_string_value(json_object_get(found, "status")),
					   "ready") == 0) {
			ids[i].state = WAIT_DONE;
			ids[i].live = json_incref(found);
		}
	}
}

/* Keep the items tagged for scope. */
static json_t *scoped(json_t *all, const struct prov_scope *scope)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(all, i, v) if (in_scope(json_object_get(v, "tags"), scope))
	    json_array_append(out, v);
	json_decref(all);
	return out;
}

/* One page (the only one) of a type's listing: what of it is the scope's. */
static int list_scoped(int rc, json_t *all, const struct prov_scope *scope, json_t **out,
		       char **next)
{
	*next = NULL;
	*out = rc == PROV_OK ? scoped(all, scope) : NULL;
	return rc;
}

static int lustre_scoped(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
			 struct kiln_error *err)
{
	json_t *all = NULL;
	char *next = NULL;
	int rc = lustre_describe(ctx, NULL, &all, err);

	return list_scoped(rc, all, scope, out, &next);
}

/* The scope's file systems: one listing for them and for their imports. */
static int lustre_listing(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
			  struct kiln_error *err)
{
	return aws_shared_listing(ctx, "fsx", 2, scope, lustre_scoped, out, err);
}

int lustre_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	int rc;

	(void)page;
	*next = NULL;
	rc = lustre_listing(ctx, scope, out, err);
	if (rc == PROV_OK)
		aws_refresh_seen(ctx, scope, "aws_fsx_lustre", json_array_size(*out));
	return rc;
}

int lustre_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *ids = json_pack("[s]", id), *all;
	int rc = lustre_describe(ctx, ids, &all, err);

	json_decref(ids);
	return aws_read_one(rc, all, "FSx file system", id, out, err);
}

static json_t *store_tags(json_t *attrs)
{
	json_t *extra = json_object();
	const char *mount = json_string_value(json_object_get(attrs, "mount"));

	json_object_set_new(extra, TAG_DELETION, json_string(tag_or(attrs, "deletion", "delete")));
	if (mount)
		json_object_set_new(extra, TAG_MOUNT, json_string(mount));
	return extra;
}

static int missing(const char *address, const char *what, struct kiln_error *err)
{
	kiln_error_set(err, "aws: %s needs %s, which is not recorded", address, what);
	kiln_error_hint(err, "run plan again: it refreshes what exists");
	return PROV_ERROR;
}

/*
 * The subnet zone-bound storage is made in: the one of the zone the nodes
 * are in (aws_zones.c), so a capacity fallback never leaves it behind.
 */
static int storage_subnet(struct prov_ctx *ctx, const struct prov_scope *scope, const json_t *deps,
			  const char **subnet, struct kiln_error *err)
{
	char *zone = NULL;
	int rc = aws_storage_zone(ctx, scope, &zone, err);

	*subnet = rc == PROV_OK ? aws_dep_attr(deps, "aws_subnet", zone, "id") : NULL;
	free(zone);
	return rc;
}

int lustre_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *subnet = NULL;
	const char *sg = aws_dep_attr(op->deps, "aws_security_group", "main", "id");
	char *token;
	json_t *body, *resp;
	int rc = storage_subnet(ctx, scope, op->deps, &subnet, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	token = short_token(op->token);
	if (!subnet || !sg) {
		free(token);
		return missing(op->address, "the subnet and the security group", err);
	}
	body = json_pack("{s:s, s:s, s:O, s:s, s:[s], s:[s], s:{s:s, s:O, s:s}, s:o}",
			 "ClientRequestToken", token, "FileSystemType", "LUSTRE", "StorageCapacity",
			 json_object_get(op->attrs, "capacity_gb"), "StorageType", "SSD",
			 "SubnetIds", subnet, "SecurityGroupIds", sg, "LustreConfiguration",
			 "DeploymentType", "PERSISTENT_2", "PerUnitStorageThroughput",
			 json_object_get(op->attrs, "throughput_per_tib"), "DataCompressionType",
			 "NONE", "Tags", tag_list(scope, op->address, store_tags(op->attrs)));
	free(token);
	rc = fsx(ctx, "CreateFileSystem", body, &resp, err);
	if (rc != PROV_OK)
		return rc;
	*out = lustre_live(json_object_get(resp, "FileSystem"));
	json_decref(resp);
	if (!*out) {
		kiln_error_set(err, "aws: fsx CreateFileSystem answered no FileSystemId");
		return PROV_ERROR;
	}
	json_object_set_new(*out, "address", json_string(op->address));
	if (strcmp(json_string_value(json_object_get(*out, "status")), "ready") != 0)
		json_object_set_new(*out, "status", json_string("pending"));
	return PROV_OK;
}

static int tag_resource(struct prov_ctx *ctx, const char *arn, json_t *attrs,
			struct kiln_error *err)
{
	json_t *extra, *tags, *v;
	const char *k;

	if (!arn) {
		kiln_error_set(err, "aws: FSx did not say the file system's ARN; cannot tag it");
		return PROV_ERROR;
	}
	extra = store_tags(attrs);
	tags = json_array();
	json_object_foreach(extra, k, v)
	    json_array_append_new(tags, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(extra);
	return fsx(ctx, "TagResource", json_pack("{s:s, s:o}", "ResourceARN", arn, "Tags", tags),
		   NULL, err);
}

int lustre_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		  json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		  struct kiln_error *err)
{
	json_t *live = NULL;
	size_t i;
	int rc = PROV_OK;

	(void)scope; /* its tags were set at creation; TagResource sets kiln's only */
	*out = NULL;
	for (i = 0; i < nchanged && rc == PROV_OK; i++) {
		if (strcmp(changed[i], "capacity_gb") == 0 ||
		    strcmp(changed[i], "throughput_per_tib") == 0) {
			json_t *body = json_pack("{s:s}", "FileSystemId", id);

			if (strcmp(changed[i], "capacity_gb") == 0)
				json_object_set(body, "StorageCapacity",
						json_object_get(attrs, "capacity_gb"));
			else
				json_object_set_new(
				    body, "LustreConfiguration",
				    json_pack("{s:O}", "PerUnitStorageThroughput",
					      json_object_get(attrs, "throughput_per_tib")));
			rc = fsx(ctx, "UpdateFileSystem", body, NULL, err);
		} else if (strcmp(changed[i], "deletion") == 0 ||
			   strcmp(changed[i], "mount") == 0) {
			if (!live)
				rc = lustre_read(ctx, id, &live, err);
			if (rc == PROV_OK)
				rc = tag_resource(ctx,
						  json_string_value(json_object_get(
						      json_object_get(live, "attrs"), "arn")),
						  attrs, err);
		} else {
			kiln_error_set(err, "aws: %s cannot change in place", changed[i]);
			rc = PROV_ERROR;
		}
	}
	json_decref(live);
	if (rc == PROV_OK)
		rc = lustre_read(ctx, id, out, err);
	return rc;
}

int lustre_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	int rc = fsx(ctx, "DeleteFileSystem", json_pack("{s:s}", "FileSystemId", id), NULL, err);

	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

/* A file system FSx gave up on will never be ready. */
static bool lustre_failed(json_t *live, struct kiln_error *err)
{
	const char *life =
	    json_string_value(json_object_get(json_object_get(live, "attrs"), "lifecycle"));

	if (!life || strcmp(life, "FAILED") != 0)
		return false;
	kiln_error_set(err, "aws: FSx file system %s failed to create",
		       json_string_value(json_object_get(live, "id")));
	return true;
}

/* One DescribeFileSystems for every id that waits. */
int lustre_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	json_t *all;
	int rc = lustre_describe(ctx, NULL, &all, err);

	if (rc == PROV_OK)
		wait_from(all, what, ids, n, lustre_failed);
	json_decref(all);
	return rc;
}

/* --- its import: a data repository association ---------------------------------------- */

static json_t *import_live(json_t *a)
{
	const char *id = json_string_value(json_object_get(a, "AssociationId"));
	const char *life = json_string_value(json_object_get(a, "Lifecycle"));
	const char *repo = json_string_value(json_object_get(a, "DataRepositoryPath"));
	json_t *tags = tag_map(json_object_get(a, "Tags"));
	const char *status = "ready";

	if (!id) {
		json_decref(tags);
		return NULL;
	}
	if (life && (strcmp(life, "CREATING") == 0 || strcmp(life, "UPDATING") == 0))
		status = "pending";
	else if (life && strcmp(life, "DELETING") == 0)
		status = "deleting";
	return aws_live("aws_fsx_import", id, status,
			json_pack("{s:s?, s:s?, s:O?, s:s?}", "from",
				  json_string_value(json_object_get(tags, "kiln:from")),
				  "repository", repo, "file_system_id",
				  json_object_get(a, "FileSystemId"), "lifecycle", life),
			tags);
}

static int import_describe(struct prov_ctx *ctx, json_t *ids, json_t **out, struct kiln_error *err)
{
	json_t *req = ids ? json_pack("{s:O}", "AssociationIds", ids) : NULL;
	int rc;

	*out = NULL;
	rc = fsx_describe_all(ctx, "DescribeDataRepositoryAssociations", req, "Associations",
			      import_live, out, err);
	json_decref(req);
	return rc;
}

/* FSx takes at most 20 values in one filter. */
#define FSX_FILTER_VALUES 20

/*
 * An association lives on one file system: only the scope's file systems
 * can hold the scope's, so they are asked for by file system (none when the
 * scope has none), never the account's every association.
 */
int import_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	json_t *fss = NULL, *all = NULL, *fs;
	size_t i, n;
	int rc;

	(void)page;
	*next = NULL;
	*out = NULL;
	rc = lustre_listing(ctx, scope, &fss, err);
	n = json_array_size(fss);
	for (i = 0; rc == PROV_OK && i < n; i += FSX_FILTER_VALUES) {
		json_t *values = json_array(), *req;
		size_t j;

		for (j = i; j < n && j < i + FSX_FILTER_VALUES; j++) {
			fs = json_array_get(fss, j);
			json_array_append(values, json_object_get(fs, "id"));
		}
		req = json_pack("{s:[{s:s, s:o}]}", "Filters", "Name", "file-system-id", "Values",
				values);
		rc = fsx_describe_all(ctx, "DescribeDataRepositoryAssociations", req,
				      "Associations", import_live, &all, err);
		json_decref(req);
	}
	json_decref(fss);
	if (rc == PROV_OK && !all)
		all = json_array();
	if (rc != PROV_OK) {
		json_decref(all);
		all = NULL;
	}
	return list_scoped(rc, all, scope, out, next);
}

int import_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *ids = json_pack("[s]", id), *all;
	int rc = import_describe(ctx, ids, &all, err);

	json_decref(ids);
	return aws_read_one(rc, all, "data repository association", id, out, err);
}

int import_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *from = json_string_value(json_object_get(op->attrs, "from"));
	const char *fs = aws_dep_attr(op->deps, "aws_fsx_lustre", op->name, "id");
	const char *bucket = from ? aws_dep_attr(op->deps, "aws_s3_bucket", from, "id") : NULL;
	char *token = short_token(op->token), *repo;
	json_t *extra = json_object(), *body, *resp;
	int rc;

	*out = NULL;
	if (!fs || !bucket) {
		free(token);
		json_decref(extra);
		return missing(op->address, "its file system and the bucket it imports", err);
	}
	repo = xasprintf("s3://%s/", bucket);
	json_object_set_new(extra, "kiln:from", json_string(from));
	body = json_pack("{s:s, s:s, s:s, s:s, s:b, s:{s:{s:[s,s,s]}}, s:o}", "ClientRequestToken",
			 token, "FileSystemId", fs, "FileSystemPath", "/", "DataRepositoryPath",
			 repo, "BatchImportMetaDataOnCreate", 1, "S3", "AutoImportPolicy", "Events",
			 "NEW", "CHANGED", "DELETED", "Tags", tag_list(scope, op->address, extra));
	free(token);
	free(repo);
	rc = fsx(ctx, "CreateDataRepositoryAssociation", body, &resp, err);
	if (rc != PROV_OK)
		return rc;
	*out = import_live(json_object_get(resp, "Association"));
	json_decref(resp);
	if (!*out) {
		kiln_error_set(err, "aws: fsx CreateDataRepositoryAssociation answered no id");
		return PROV_ERROR;
	}
	json_object_set_new(*out, "address", json_string(op->address));
	return PROV_OK;
}

int import_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	/* The files stay in the bucket; only the link goes. */
	int rc = fsx(ctx, "DeleteDataRepositoryAssociation",
		     json_pack("{s:s, s:b}", "AssociationId", id, "DeleteDataInFileSystem", 0),
		     NULL, err);

	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int import_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	json_t *all;
	int rc = import_describe(ctx, NULL, &all, err);

	if (rc == PROV_OK)
		wait_from(all, what, ids, n, NULL);
	json_decref(all);
	return rc;
}

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
	json_t *tags = tag_map(json_object_get(fs, "Tags"));
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
				  tag_or(tags, TAG_DELETION, "delete"), "mount",
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

static int efs_scoped(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
		      struct kiln_error *err)
{
	json_t *all = NULL;
	char *next = NULL;
	int rc = efs_describe(ctx, NULL, &all, err);

	return list_scoped(rc, all, scope, out, &next);
}

/* The scope's file systems: one listing for both types (file systems and mount targets). */
static int efs_listing(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
		       struct kiln_error *err)
{
	return aws_shared_listing(ctx, "efs", 2, scope, efs_scoped, out, err);
}

int efs_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page, json_t **out,
	     char **next, struct kiln_error *err)
{
	(void)page;
	*next = NULL;
	return efs_listing(ctx, scope, out, err);
}

int efs_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *all;
	int rc = efs_describe(ctx, id, &all, err);

	return aws_read_one(rc, all, "EFS file system", id, out, err);
}

int efs_create(struct prov_ctx *ctx, const struct prov_scope *scope, const struct prov_create *op,
	       json_t **out, struct kiln_error *err)
{
	char *token = short_token(op->token);
	json_t *body =
	    json_pack("{s:s, s:s, s:b, s:s, s:o}", "CreationToken", token, "PerformanceMode",
		      "generalPurpose", "Encrypted",
		      json_is_true(json_object_get(op->attrs, "encrypted")), "ThroughputMode",
		      "elastic", "Tags", tag_list(scope, op->address, store_tags(op->attrs)));
	json_t *resp = NULL;
	int rc;

	*out = NULL;
	free(token);
	rc = efs(ctx, "POST", EFS_API "/file-systems", NULL, body, "CreateFileSystem", &resp, err);
	/* A retried create: EFS answers 409 with the file system the token made. */
	if (rc == PROV_ERROR && strstr(err->msg, "FileSystemAlreadyExists")) {
		char *tok = short_token(op->token), *enc = aws_uri_encode(tok, false);
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

int efs_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id, json_t *attrs,
	       const char *const *changed, size_t nchanged, json_t **out, struct kiln_error *err)
{
	json_t *extra = store_tags(attrs), *tags = json_array(), *v;
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
		rc = efs_read(ctx, id, out, err);
	return rc;
}

int efs_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	char *path = xasprintf(EFS_API "/file-systems/%s", id);
	int rc = efs(ctx, "DELETE", path, NULL, NULL, "DeleteFileSystem", NULL, err);

	free(path);
	/* Its mount target is still going away: the API says so, and it will not be long. */
	if (rc == PROV_ERROR && strstr(err->msg, "FileSystemInUse"))
		rc = PROV_RETRY;
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int efs_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
	     struct kiln_error *err)
{
	json_t *all;
	int rc = efs_describe(ctx, NULL, &all, err);

	if (rc == PROV_OK)
		wait_from(all, what, ids, n, NULL);
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

int mt_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page, json_t **out,
	    char **next, struct kiln_error *err)
{
	json_t *fss, *fs;
	size_t i;
	int rc;

	(void)page;
	*next = NULL;
	*out = NULL;
	rc = efs_listing(ctx, scope, &fss, err);
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
		rc =
		    efs_read(ctx, json_string_value(json_object_get(mt, "FileSystemId")), &fs, err);
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

int mt_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return mt_describe(ctx, id, true, out, err);
}

int mt_create(struct prov_ctx *ctx, const struct prov_scope *scope, const struct prov_create *op,
	      json_t **out, struct kiln_error *err)
{
	const char *fs = aws_dep_attr(op->deps, "aws_efs", op->name, "id");
	const char *subnet = NULL;
	const char *sg = aws_dep_attr(op->deps, "aws_security_group", "main", "id");
	json_t *resp = NULL, *fs_tags;
	int rc = storage_subnet(ctx, scope, op->deps, &subnet, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	if (!fs || !subnet || !sg)
		return missing(op->address, "its file system, a subnet and the security group",
			       err);
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
			rc = mt_read(
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

int mt_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	char *path = xasprintf(EFS_API "/mount-targets/%s", id);
	int rc = efs(ctx, "DELETE", path, NULL, NULL, "DeleteMountTarget", NULL, err);

	free(path);
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int mt_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
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

/* [{Key, Value}] of the claim's tags, for FSx and EFS. */
static json_t *claim_tag_list(const struct prov_scope *scope)
{
	json_t *map = aws_claim_tags(scope), *list = json_array(), *v;
	const char *k;

	json_object_foreach(map, k, v)
	    json_array_append_new(list, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(map);
	return list;
}

/* A file system or an association: TagResource on its ARN, then read back. */
int fsx_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
	      const char *id, json_t **out, struct kiln_error *err)
{
	bool fs = strcmp(type, "aws_fsx_lustre") == 0;
	json_t *resp = NULL;
	const char *arn;
	int rc;

	*out = NULL;
	rc = fs ? fsx(ctx, "DescribeFileSystems", json_pack("{s:[s]}", "FileSystemIds", id), &resp,
		      err)
		: fsx(ctx, "DescribeDataRepositoryAssociations",
		      json_pack("{s:[s]}", "AssociationIds", id), &resp, err);
	if (rc != PROV_OK)
		return rc;
	arn = json_string_value(json_object_get(
	    json_array_get(json_object_get(resp, fs ? "FileSystems" : "Associations"), 0),
	    "ResourceARN"));
	if (!arn) {
		kiln_error_set(err, "aws: FSx did not say the ARN of %s; cannot tag it", id);
		json_decref(resp);
		return PROV_ERROR;
	}
	rc = fsx(ctx, "TagResource",
		 json_pack("{s:s, s:o}", "ResourceARN", arn, "Tags", claim_tag_list(scope)), NULL,
		 err);
	json_decref(resp);
	if (rc != PROV_OK)
		return rc;
	return fs ? lustre_read(ctx, id, out, err) : import_read(ctx, id, out, err);
}

/* A file system, or a mount target through its file system (whose tags it shows). */
int efs_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
	      const char *id, json_t **out, struct kiln_error *err)
{
	bool mt = strcmp(type, "aws_efs_mount_target") == 0;
	json_t *live = NULL;
	const char *fs = id;
	char *path;
	int rc = PROV_OK;

	*out = NULL;
	if (mt) {
		rc = mt_read(ctx, id, &live, err);
		fs = json_string_value(
		    json_object_get(json_object_get(live, "attrs"), "file_system_id"));
		if (rc == PROV_OK && !fs) {
			kiln_error_set(err, "aws: EFS did not say the file system of %s", id);
			rc = PROV_ERROR;
		}
	}
	if (rc == PROV_OK) {
		path = xasprintf(EFS_API "/resource-tags/%s", fs);
		rc = efs(ctx, "POST", path, NULL, json_pack("{s:o}", "Tags", claim_tag_list(scope)),
			 "TagResource", NULL, err);
		free(path);
	}
	json_decref(live);
	if (rc != PROV_OK)
		return rc;
	return mt ? mt_read(ctx, id, out, err) : efs_read(ctx, id, out, err);
}
