/*
 * sprawl.h - what is running that no workspace records: live resources that
 * carry kiln's scope tags but whose id no workspace's state holds (orphans),
 * their hourly cost, and the destroy plan that removes them through the
 * normal executor (apply.c); and carrying out the destroy and the adoption
 * (one commit per workspace). The command (cmd_sprawl.c) reads the
 * workspaces, chooses and prints; nothing here prints.
 */
#ifndef KILN_SPRAWL_H
#define KILN_SPRAWL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "apply.h"
#include "provider.h"
#include "store.h"

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
 * deletes a user before what it uses. Addresses held twice, or held in
 * recorded (the workspace's resources, another object), get " (ID)"
 * appended so each change is its own and never touches the record. New
 * reference.
 */
json_t *sprawl_destroy_plan(const struct provider *prov, const json_t *orphans,
			    const json_t *recorded);

/*
 * A plan (only "resource_changes") adopting into state, a workspace's
 * recorded state, the orphans of that workspace (one cluster and
 * workspace): one no-op change with "importing" per orphan, as the plan
 * makes for a live resource that carries its address tag, which the
 * executor reads and records. An orphan state records by its id at its
 * address (a replayed journal) is left out. Any other is left out, with
 * {"address", "id", "reason"} appended to skipped, when it has no address,
 * when state already records its address, or when another orphan carries
 * the same address (which of them is the one is not kiln's guess). New
 * reference.
 */
json_t *sprawl_adopt_plan(const json_t *orphans, const json_t *state, json_t *skipped);

/* Open prov for an account-wide look (no spec: only the region, NULL for its default). */
int sprawl_provider_open(const struct provider *prov, const char *region, struct prov_ctx **ctx,
			 struct kiln_error *err);
/* Close what sprawl_provider_open opened (its credentials wiped); ctx may be NULL. */
void sprawl_provider_close(const struct provider *prov, struct prov_ctx *ctx);
/* The region an account-wide look without --region looks in, or NULL. */
const char *sprawl_default_region(const struct provider *prov);
/* The provider's price catalog (its provider, region and date), or NULL. */
const struct catalog *sprawl_catalog(const struct provider *prov, struct prov_ctx *ctx);
/* Every live resource of every type that carries the scope tags, all pages. */
int sprawl_list_tagged(const struct provider *prov, struct prov_ctx *ctx, json_t **out,
		       struct kiln_error *err);
/* The GPU instances that carry no kiln tags (an empty array when prov cannot list them). */
int sprawl_list_unmanaged(const struct provider *prov, struct prov_ctx *ctx, json_t **out,
			  struct kiln_error *err);
/* Price each item ({"type", "attrs"}) into its "hourly" and "unpriced"; the sum. */
double sprawl_price_all(const struct provider *prov, struct prov_ctx *ctx, json_t *items);

/* What sprawl's destroy and adoption run with. */
struct sprawl_options {
	const char *state;    /* the state repository (--state), NULL for the default */
	const char *region;   /* NULL: the provider's default */
	int64_t lock_timeout; /* seconds to wait for a workspace's held lock */
	int parallelism;      /* provider operations at once */
};

/* What a destroy or an adoption did, resource by resource, and who is told as it goes. */
struct sprawl_results {
	json_t *done;	/* {"cluster", "workspace", "address", "id"} deleted or adopted */
	json_t *failed; /* the same, with "error" */
	/* Each result as it lands, one at a time (the command's lines); may be NULL. */
	void (*on_result)(void *arg, const char *cluster, const char *workspace,
			  const struct apply_event *ev);
	/* An adoption committed in workspace; may be NULL. */
	void (*on_commit)(void *arg, const char *workspace, size_t adopted, const git_oid *commit);
	/* A workspace whose adoption failed, and why; may be NULL. */
	void (*on_error)(void *arg, const struct kiln_error *err);
	void *arg;
	/* Private: the run under way. */
	pthread_mutex_t mu;
	const char *cluster, *workspace;
};

void sprawl_results_init(struct sprawl_results *d);
void sprawl_results_release(struct sprawl_results *d);
/*
 * Delete chosen (orphans), one operation (operation.h) per cluster and
 * workspace: the workspace locked (waiting up to so->lock_timeout), every
 * deletion journaled, and a commit ("sprawl destroy: N deleted") when the
 * workspace exists. An interrupt (signals.h) lets the deletions in flight
 * finish, commits them and starts no further one. -1 when one failed (a
 * workspace that could not be locked: on_error).
 */
int sprawl_destroy(const struct provider *prov, const struct sprawl_options *so,
		   const json_t *chosen, struct sprawl_results *d);
/*
 * Record the orphans in the workspaces their tags name, each through the
 * operation as sprawl_destroy (made when missing), one commit per
 * workspace ("sprawl adopt: N adopted"); what cannot be adopted is
 * appended to skipped, each commit to commits ({"cluster", "workspace",
 * "commit", "adopted"}). -1 when a workspace's adoption failed (on_error).
 */
int sprawl_adopt(const struct provider *prov, const struct sprawl_options *so,
		 const json_t *orphans, struct sprawl_results *d, json_t *skipped, json_t *commits);

#endif
