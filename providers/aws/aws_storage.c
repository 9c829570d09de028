/*
 * aws_storage.c - what the file tiers share (aws_fsx.c, aws_efs.c): their
 * tags as FSx and EFS take them ([{Key, Value}]), kiln's own storage tags
 * (kiln:deletion, kiln:mount), scope filtering of a listing, one wait poll
 * from a listing, and the subnet zone-bound storage is made in; see
 * aws_storage.h.
 */
#include "aws_storage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [{Key, Value}] of the scope's tags, the address and extra (stolen; may be NULL). */
json_t *aws_storage_tag_list(const struct prov_scope *scope, const char *address, json_t *extra)
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
json_t *aws_storage_tag_map(json_t *list)
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

bool aws_storage_in_scope(json_t *tags, const struct prov_scope *scope)
{
	const char *c = json_string_value(json_object_get(tags, PROV_TAG_CLUSTER));
	const char *w = json_string_value(json_object_get(tags, PROV_TAG_WORKSPACE));

	if (!scope->cluster) /* every scope: whatever carries both tags */
		return c && w;
	return c && w && strcmp(c, scope->cluster) == 0 && strcmp(w, scope->workspace) == 0;
}

const char *aws_storage_tag_or(json_t *tags, const char *key, const char *def)
{
	const char *v = json_string_value(json_object_get(tags, key));

	return v ? v : def;
}

/* A token of at most 63 characters (FSx's limit) from the engine's. */
char *aws_storage_token(const char *token)
{
	return xstrndup(token, 63);
}

/*
 * One wait poll from a listing of every resource of a type: gone when it
 * is not listed, ready when its status is, failed when failed() says so.
 */
void aws_storage_wait_from(json_t *all, enum prov_wait_for what, struct prov_wait *ids, size_t n,
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
json_t *aws_storage_scoped(json_t *all, const struct prov_scope *scope)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(all, i, v) if (aws_storage_in_scope(json_object_get(v, "tags"), scope))
	    json_array_append(out, v);
	json_decref(all);
	return out;
}

/* One page (the only one) of a type's listing: what of it is the scope's. */
int aws_storage_list_scoped(int rc, json_t *all, const struct prov_scope *scope, json_t **out,
			    char **next)
{
	*next = NULL;
	*out = rc == PROV_OK ? aws_storage_scoped(all, scope) : NULL;
	return rc;
}

struct storage_describe {
	aws_storage_describe_fn fn;
};

static int storage_scoped(struct prov_ctx *ctx, const struct prov_scope *scope, const void *arg,
			  json_t **out, struct kiln_error *err)
{
	const struct storage_describe *describe = arg;
	json_t *all = NULL;
	int rc = describe->fn(ctx, NULL, &all, err);

	*out = rc == PROV_OK ? aws_storage_scoped(all, scope) : NULL;
	return rc;
}

int aws_storage_listing(struct prov_ctx *ctx, const char *key, const struct prov_scope *scope,
			aws_storage_describe_fn describe, json_t **out, struct kiln_error *err)
{
	struct storage_describe d = {describe};

	return aws_shared_listing(ctx, key, 2, scope, storage_scoped, &d, out, err);
}

json_t *aws_storage_tags(json_t *attrs)
{
	json_t *extra = json_object();
	const char *mount = json_string_value(json_object_get(attrs, "mount"));

	json_object_set_new(extra, TAG_DELETION,
			    json_string(aws_storage_tag_or(attrs, "deletion", "delete")));
	if (mount)
		json_object_set_new(extra, TAG_MOUNT, json_string(mount));
	return extra;
}

int aws_storage_missing(const char *address, const char *what, struct kiln_error *err)
{
	kiln_error_set(err, "aws: %s needs %s, which is not recorded", address, what);
	kiln_error_hint(err, "run plan again: it refreshes what exists");
	return PROV_ERROR;
}

/*
 * The subnet zone-bound storage is made in: the one of the zone the nodes
 * are in (aws_zones.c), so a capacity fallback never leaves it behind.
 */
int aws_storage_subnet(struct prov_ctx *ctx, const struct prov_scope *scope, const json_t *deps,
		       const char **subnet, struct kiln_error *err)
{
	char *zone = NULL;
	int rc = aws_storage_zone(ctx, scope, &zone, err);

	*subnet = rc == PROV_OK ? aws_dep_attr(deps, "aws_subnet", zone, "id") : NULL;
	free(zone);
	return rc;
}

/* [{Key, Value}] of the claim's tags, for FSx and EFS. */
json_t *aws_storage_claim_tags(const struct prov_scope *scope)
{
	json_t *map = aws_claim_tags(scope), *list = json_array(), *v;
	const char *k;

	json_object_foreach(map, k, v)
	    json_array_append_new(list, json_pack("{s:s, s:O}", "Key", k, "Value", v));
	json_decref(map);
	return list;
}
