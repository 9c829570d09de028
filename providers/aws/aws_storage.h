/*
 * aws_storage.h - what the file tiers share (aws_fsx.c for lustre, aws_efs.c
 * for nfs), implemented in aws_storage.c. Private to the aws provider.
 */
#ifndef KILN_AWS_STORAGE_H
#define KILN_AWS_STORAGE_H

#include "aws_ec2.h"

/* kiln's own tags on a store: deletion: retain, and where nodes mount it. */
#define TAG_DELETION "kiln:deletion"
#define TAG_MOUNT "kiln:mount"

/* [{Key, Value}] of the scope's tags, the address and extra (stolen; may be NULL). */
json_t *aws_storage_tag_list(const struct prov_scope *scope, const char *address, json_t *extra);
/* {k: v} from [{Key, Value}]. */
json_t *aws_storage_tag_map(json_t *list);
/* The tags name scope's cluster and workspace (every scope: they carry both). */
bool aws_storage_in_scope(json_t *tags, const struct prov_scope *scope);
/* The tag's value, or def. */
const char *aws_storage_tag_or(json_t *tags, const char *key, const char *def);
/* A token of at most 63 characters (FSx's limit) from the engine's; caller frees. */
char *aws_storage_token(const char *token);
/*
 * One wait poll from a listing of every resource of a type: gone when it
 * is not listed, ready when its status is, failed when failed() says so.
 */
void aws_storage_wait_from(json_t *all, enum prov_wait_for what, struct prov_wait *ids, size_t n,
			   bool (*failed)(json_t *live, struct kiln_error *err));
/* The items of all (stolen) tagged for scope; a new array. */
json_t *aws_storage_scoped(json_t *all, const struct prov_scope *scope);
/* One page (the only one) of a type's listing: what of all (stolen) is the scope's. */
int aws_storage_list_scoped(int rc, json_t *all, const struct prov_scope *scope, json_t **out,
			    char **next);
/* Every file system of a type (id NULL), or the one with id (none: an empty array). */
typedef int (*aws_storage_describe_fn)(struct prov_ctx *ctx, const char *id, json_t **out,
				       struct kiln_error *err);
/*
 * The scope's file systems that describe lists: one listing shared
 * (aws_shared_listing, under key) by the two types that need it, the file
 * systems and what hangs on them (EFS mount targets, FSx imports).
 */
int aws_storage_listing(struct prov_ctx *ctx, const char *key, const struct prov_scope *scope,
			aws_storage_describe_fn describe, json_t **out, struct kiln_error *err);
/* kiln:deletion and kiln:mount of a store's attrs. */
json_t *aws_storage_tags(json_t *attrs);
/* PROV_ERROR: address needs what, which the state does not record. */
int aws_storage_missing(const char *address, const char *what, struct kiln_error *err);
/*
 * The subnet zone-bound storage is made in: the one of the zone the nodes
 * are in (aws_zones.c), so a capacity fallback never leaves it behind.
 */
int aws_storage_subnet(struct prov_ctx *ctx, const struct prov_scope *scope, const json_t *deps,
		       const char **subnet, struct kiln_error *err);
/* [{Key, Value}] of a takeover's tags (kiln:lineage, kiln:owner). */
json_t *aws_storage_claim_tags(const struct prov_scope *scope);

#endif
