/*
 * expand.h - helpers every provider's expand() uses to turn a validated spec
 * into desired resources: the resource map's shape (provider.h), sorted
 * dependencies, and resolving a compute group's instance type through the
 * shared catalog with the reason the plan prints.
 */
#ifndef KILN_EXPAND_H
#define KILN_EXPAND_H

#include <jansson.h>

#include "catalog.h"
#include "spec.h"
#include "util.h"

/* Add {type, name, attrs: {}, deps: []} at "TYPE.NAME" in all; borrowed. */
json_t *expand_resource(json_t *all, const char *type, const char *name);
/* Set an input attribute (value is stolen; NULL becomes null). */
void expand_attr(json_t *r, const char *key, json_t *value);
/* A JSON string, or null for NULL. */
json_t *expand_str(const char *s);
/*
 * A node group's inputs, as every provider's node-group type has them:
 * instance_type (type), count, gang, market, image, zones (stolen),
 * disk_size_gb, disk_type (stolen: each provider has its own default), role,
 * public, efa, and placement_group "fabric" when in_pg (else null).
 */
/* The group's capacity: attributes (aws_capacity.c and sim_nodes.c read them). */
void expand_group_capacity(json_t *r, const struct spec_group *g);
/*
 * A group's Capacity Block as a resource TYPE.GROUP (zones stolen): the
 * type, count and duration it is bought for, the earliest start, the most
 * it may cost up front and the zones it may be in.
 */
json_t *expand_capacity_block(json_t *all, const char *type, const struct spec_group *g,
			      const char *instance_type, json_t *zones);
void expand_group_attrs(json_t *r, const struct spec_group *g, const char *type, json_t *zones,
			json_t *disk_type, bool efa, bool in_pg);
/*
 * What a node group takes from the spec's access: section: key_pair, only
 * when the spec names one (so groups made before it existed diff equal).
 */
void expand_access_attrs(json_t *r, const struct spec *spec);
/* Depend on "TYPE.NAME" (once). */
void expand_dep(json_t *r, const char *type, const char *name);
/* Be made after "TYPE.NAME" (once) without depending on it (provider.h's "after"). */
void expand_after(json_t *r, const char *type, const char *name);
/* Why an attribute has its value, for the plan (text is stolen). */
void expand_why(json_t *r, const char *key, char *text);
/*
 * A store's deletion attribute ("retain" or "delete") and, where the spec
 * left it to the tier's default, the plan's note saying which and why.
 */
void expand_deletion(json_t *r, const struct spec_store *s);
/* A sorted, duplicate-free array of strings (v is sorted in place). */
json_t *expand_sorted_strings(const char **v, size_t n);
/* Sort every resource's deps, so a spec always expands to the same JSON. */
void expand_sort_deps(json_t *all);
/* "FILE:LINE:COL: " of a node, or "" when there is none. */
char *expand_where(const struct spec *spec, const struct ynode *n);
/*
 * A role's intent as the attrs its policy compiles from, the same on every
 * provider: "read" and "write" name object stores, "nfs_read" and
 * "nfs_write" nfs stores, each sorted and unique, and "allow"; the last
 * three only when not empty. Lustre stores, which no IAM action opens, get
 * a plan note on read or write: "NAMES: " and lustre_why.
 */
void expand_role_policy_attrs(json_t *r, const struct spec *spec, const struct spec_role *role,
			      const char *lustre_why);
/*
 * A role's allow: statements as the attribute "allow" holds them, or NULL
 * when it has none: [{"actions": [..], "resources": [..], "sid"?}], actions
 * and resources sorted and unique, statements sorted by their JSON, so a
 * reorder in the spec is not a change.
 */
json_t *expand_role_allow(const struct spec_role *role);
/*
 * The same normal form of statements read back from a live policy (any
 * other key a statement carries is kept): a new array.
 */
json_t *expand_allow_normalize(const json_t *stmts);
/*
 * Every compute group the catalog cat cannot serve (an unknown GPU model or
 * instance type, a GPU count or EFA no type has): an error in d at its gpu:
 * or instance_type:, with the message and hint expand would fail with.
 */
void expand_check_groups(const struct catalog *cat, const struct spec *spec, struct diags *d);
/*
 * The spec's file systems (lustre and nfs stores), which every node group
 * mounts: a NULL-terminated array the caller frees, *n of them. Found once
 * per expand: a walk of every store for each group was 25 million steps for
 * a spec of 5,000 groups and 5,000 stores.
 */
const struct spec_store **expand_file_systems(const struct spec *spec, size_t *n);
/*
 * The type of cat a compute group runs on: the cheapest with its GPUs (and EFA
 * when the fabric is efa), or its instance_type. *why is the resolution the
 * plan prints for a GPU group (caller frees), else NULL. -1 with err, whose
 * message starts with prefix ("sim: ") and names the spec position.
 */
int expand_group_type(const char *prefix, const struct catalog *cat, const struct spec *spec,
		      const struct spec_group *g, const struct catalog_type **t, char **why,
		      struct kiln_error *err);

#endif
