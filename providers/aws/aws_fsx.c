/*
 * aws_fsx.c - the lustre tier as FSx for Lustre (PERSISTENT_2), and its S3
 * import as a data repository association.
 *
 *   aws_fsx_lustre.STORE   CreateFileSystem (ClientRequestToken), AVAILABLE when ready
 *   aws_fsx_import.STORE   CreateDataRepositoryAssociation from the object store it imports
 *
 * The file system is made in the subnet of the zone the nodes are in
 * (aws_storage_zone); deletion: retain and the mount path ride in
 * kiln:deletion and kiln:mount tags (aws_storage.c).
 */
#include "aws_storage.h"

#include "aws/awsxml.h"
#include "jsonw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fsx(struct prov_ctx *ctx, const char *action, json_t *body, json_t **out,
	       struct kiln_error *err)
{
	return aws_json(ctx, AWS_FSX, action, body, out, err);
}

/* --- FSx for Lustre ------------------------------------------------------------ */

static json_t *lustre_live(json_t *fs)
{
	const char *id = json_string_value(json_object_get(fs, "FileSystemId"));
	const char *life = json_string_value(json_object_get(fs, "Lifecycle"));
	json_t *tags = aws_storage_tag_map(json_object_get(fs, "Tags")), *lc;
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
				  "deletion", aws_storage_tag_or(tags, TAG_DELETION, "delete"),
				  "mount", json_string_value(json_object_get(tags, TAG_MOUNT)),
				  "dns_name", json_object_get(fs, "DNSName"), "mount_name",
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

static int lustre_describe(struct prov_ctx *ctx, const char *id, json_t **out,
			   struct kiln_error *err)
{
	json_t *req = id ? json_pack("{s:[s]}", "FileSystemIds", id) : NULL;
	int rc;

	*out = NULL;
	rc =
	    fsx_describe_all(ctx, "DescribeFileSystems", req, "FileSystems", lustre_item, out, err);
	json_decref(req);
	return rc;
}

int aws_lustre_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		    json_t **out, char **next, struct kiln_error *err)
{
	int rc;

	(void)page;
	*next = NULL;
	rc = aws_storage_listing(ctx, "fsx", scope, lustre_describe, out, err);
	if (rc == PROV_OK)
		aws_refresh_seen(ctx, scope, "aws_fsx_lustre", json_array_size(*out));
	return rc;
}

int aws_lustre_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *all;
	int rc = lustre_describe(ctx, id, &all, err);

	return aws_read_one(rc, all, "FSx file system", id, out, err);
}

int aws_lustre_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		      const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *subnet = NULL;
	const char *sg = aws_dep_attr(op->deps, "aws_security_group", "main", "id");
	char *token;
	json_t *body, *resp;
	int rc = aws_storage_subnet(ctx, scope, op->deps, &subnet, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	token = aws_storage_token(op->token);
	if (!subnet || !sg) {
		free(token);
		return aws_storage_missing(op->address, "the subnet and the security group", err);
	}
	body = json_pack("{s:s, s:s, s:O, s:s, s:[s], s:[s], s:{s:s, s:O, s:s}, s:o}",
			 "ClientRequestToken", token, "FileSystemType", "LUSTRE", "StorageCapacity",
			 json_object_get(op->attrs, "capacity_gb"), "StorageType", "SSD",
			 "SubnetIds", subnet, "SecurityGroupIds", sg, "LustreConfiguration",
			 "DeploymentType", "PERSISTENT_2", "PerUnitStorageThroughput",
			 json_object_get(op->attrs, "throughput_per_tib"), "DataCompressionType",
			 "NONE", "Tags",
			 aws_storage_tag_list(scope, op->address, aws_storage_tags(op->attrs)));
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
	extra = aws_storage_tags(attrs);
	tags = json_array();
	json_object_foreach(extra, k, v)
	    json_array_append_new(tags, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(extra);
	return fsx(ctx, "TagResource", json_pack("{s:s, s:o}", "ResourceARN", arn, "Tags", tags),
		   NULL, err);
}

int aws_lustre_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
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
				rc = aws_lustre_read(ctx, id, &live, err);
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
		rc = aws_lustre_read(ctx, id, out, err);
	return rc;
}

int aws_lustre_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
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
int aws_lustre_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		    struct kiln_error *err)
{
	json_t *all;
	int rc = lustre_describe(ctx, NULL, &all, err);

	if (rc == PROV_OK)
		aws_storage_wait_from(all, what, ids, n, lustre_failed);
	json_decref(all);
	return rc;
}

/* --- its import: a data repository association ---------------------------------------- */

static json_t *import_live(json_t *a)
{
	const char *id = json_string_value(json_object_get(a, "AssociationId"));
	const char *life = json_string_value(json_object_get(a, "Lifecycle"));
	const char *repo = json_string_value(json_object_get(a, "DataRepositoryPath"));
	json_t *tags = aws_storage_tag_map(json_object_get(a, "Tags"));
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
int aws_import_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		    json_t **out, char **next, struct kiln_error *err)
{
	json_t *fss = NULL, *all = NULL, *fs;
	size_t i, n;
	int rc;

	(void)page;
	*next = NULL;
	*out = NULL;
	/* One listing for the file systems and their imports. */
	rc = aws_storage_listing(ctx, "fsx", scope, lustre_describe, &fss, err);
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
	return aws_storage_list_scoped(rc, all, scope, out, next);
}

int aws_import_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *ids = json_pack("[s]", id), *all;
	int rc = import_describe(ctx, ids, &all, err);

	json_decref(ids);
	return aws_read_one(rc, all, "data repository association", id, out, err);
}

int aws_import_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		      const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *from = json_string_value(json_object_get(op->attrs, "from"));
	const char *fs = aws_dep_attr(op->deps, "aws_fsx_lustre", op->name, "id");
	const char *bucket = from ? aws_dep_attr(op->deps, "aws_s3_bucket", from, "id") : NULL;
	char *token = aws_storage_token(op->token), *repo;
	json_t *extra = json_object(), *body, *resp;
	int rc;

	*out = NULL;
	if (!fs || !bucket) {
		free(token);
		json_decref(extra);
		return aws_storage_missing(op->address, "its file system and the bucket it imports",
					   err);
	}
	repo = xasprintf("s3://%s/", bucket);
	json_object_set_new(extra, "kiln:from", json_string(from));
	body = json_pack("{s:s, s:s, s:s, s:s, s:b, s:{s:{s:[s,s,s]}}, s:o}", "ClientRequestToken",
			 token, "FileSystemId", fs, "FileSystemPath", "/", "DataRepositoryPath",
			 repo, "BatchImportMetaDataOnCreate", 1, "S3", "AutoImportPolicy", "Events",
			 "NEW", "CHANGED", "DELETED", "Tags",
			 aws_storage_tag_list(scope, op->address, extra));
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

int aws_import_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	/* The files stay in the bucket; only the link goes. */
	int rc = fsx(ctx, "DeleteDataRepositoryAssociation",
		     json_pack("{s:s, s:b}", "AssociationId", id, "DeleteDataInFileSystem", 0),
		     NULL, err);

	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int aws_import_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		    struct kiln_error *err)
{
	json_t *all;
	int rc = import_describe(ctx, NULL, &all, err);

	if (rc == PROV_OK)
		aws_storage_wait_from(all, what, ids, n, NULL);
	json_decref(all);
	return rc;
}

/* A file system or an association: TagResource on its ARN, then read back. */
int aws_fsx_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
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
		 json_pack("{s:s, s:o}", "ResourceARN", arn, "Tags", aws_storage_claim_tags(scope)),
		 NULL, err);
	json_decref(resp);
	if (rc != PROV_OK)
		return rc;
	return fs ? aws_lustre_read(ctx, id, out, err) : aws_import_read(ctx, id, out, err);
}
