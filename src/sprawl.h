/*
 * sprawl.h - what is running that no workspace records: live resources that
 * carry kiln's scope tags but whose id no workspace's state holds (orphans),
 * their hourly cost, and the destroy plan that removes them through the
 * normal executor (apply.c). Pure logic over jansson values: the command
 * (cmd_sprawl.c) does the listing, the store and the printing.
 */
#ifndef KILN_SPRAWL_H
#define KILN_SPRAWL_H

#include <stdbool.h>

#include <jansson.h>

#include "provider.h"

/*
 * The orphans among live (an array of provider.h live objects from an
 * every-scope listing), given recorded: {"WORKSPACE": state document} for
 * every workspace branch of the state repository. A live resource is
 * managed when any workspace records its id; one that is "deleting" is
 * left out. A new array of
 *   {"cluster", "workspace", "address", "type", "id", "status", "reason",
 *    "lineage" (null before lineages), "attrs"}
 * sorted by cluster, workspace, address and id, where reason says why no
 * workspace holds it (the workspace does not exist, it records another
 * cluster, it records the address as another id, or it does not record it).
 */
/*
 * known: {"LINEAGE": true} of every state this repository holds or held
 * (workspaces, archived ones, first applies' locks). A resource that
 * carries a lineage outside it is another state repository's, not an
 * orphan: it is left out (and counted in *foreign when foreign is not NULL).
 */
json_t *sprawl_orphans(const json_t *live, const json_t *recorded, const json_t *known,
		       size_t *foreign);

/*
 * What one live resource costs per hour by the provider's cost hook (USD);
 * what the catalog cannot price is appended to unpriced ({"name", "reason"}).
 */
double sprawl_hourly(const struct provider *prov, struct prov_ctx *ctx, const char *type,
		     const json_t *attrs, json_t *unpriced);

/* Whether a type holds data (an object store or file system): kept unless asked. */
bool sprawl_is_store(const struct provider *prov, const char *type);

/*
 * A plan (only "resource_changes") deleting exactly these orphans, which
 * must be of one cluster and workspace: one delete per orphan, each with
 * kiln.id, and kiln.deps naming every orphan of a type the provider's table
 * lists earlier (the table lists a type after what it uses), so the executor
 * deletes a user before what it uses. Addresses held twice get " (ID)"
 * appended so each change is its own. New reference.
 */
json_t *sprawl_destroy_plan(const struct provider *prov, const json_t *orphans);

/*
 * A plan (only "resource_changes") adopting into state, a workspace's
 * recorded state, the orphans of that workspace (one cluster and
 * workspace): one no-op change with "importing" per orphan, as the plan
 * makes for a live resource that carries its address tag, which the
 * executor reads and records. An orphan is left out, with
 * {"address", "id", "reason"} appended to skipped, when it has no address,
 * when state already records its address, or when another orphan carries
 * the same address (which of them is the one is not kiln's guess). New
 * reference.
 */
json_t *sprawl_adopt_plan(const json_t *orphans, const json_t *state, json_t *skipped);

#endif
