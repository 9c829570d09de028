/*
 * sim_int.h - internals shared by the sim provider's files; nothing outside
 * providers/sim/ includes this.
 *
 *   sim.c        knobs, the context, call accounting (latency, faults), the provider
 *   sim_store.c  the directory: locking, ids, documents, index markers, tokens,
 *                address entries, usage
 *   sim_ops.c    list/read/create/update/delete/wait, the same for every type
 *   sim_types.c  the type table: attributes, policies, computed attributes
 *   sim_nodes.c  node groups: capacity, zones, gangs, instance ids
 *   sim_expand.c spec -> desired resources
 *   sim_iam.c    the actions each operation needs
 */
#ifndef KILN_SIM_INT_H
#define KILN_SIM_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#include "catalog_aws.h"
#include "provider.h"

#define SIM_NTYPES 9
#define SIM_ID_HEX 17 /* hex digits after the prefix, as AWS ids have */
#define SIM_ID_MAX 32 /* "prefix-" + 17 hex digits + NUL, with room */
#define SIM_ACCOUNT "000000000000"
#define SIM_DEFAULT_REGION "sim-local-1"

/* One KILN_SIM_CAPACITY entry: nodes per zone of one GPU model. */
struct sim_cap {
	char *model;
	long nodes;
};

/*
 * One type's durations under a timing profile (KILN_SIM_PROFILE), in
 * milliseconds, already scaled by KILN_SIM_TIME_SCALE: how long its create
 * call takes to answer, how long it then stays pending (and again after a
 * change), and how long it stays deleting.
 */
struct sim_timing {
	const char *type;
	long create_ms;
	long ready_ms;
	long delete_ms;
};

struct prov_ctx {
	char *dir;    /* KILN_SIM_DIR, or .kiln/sim */
	char *region; /* the spec's provider.region */
	char **zones; /* the spec's zones, or region + "a" */
	size_t nzones;
	long latency_ms; /* KILN_SIM_LATENCY_MS */
	long ready_ms;	 /* KILN_SIM_READY_MS */
	long health_ms;	 /* KILN_SIM_HEALTH_MS, or the profile's when unset */
	/* KILN_SIM_PROFILE's durations per type (SIM_NTYPES of them), or NULL: READY_MS */
	struct sim_timing *timing;
	double time_scale;    /* KILN_SIM_TIME_SCALE */
	long page_size;	      /* KILN_SIM_PAGE_SIZE */
	double fail_rate;     /* KILN_SIM_FAIL_RATE */
	struct sim_cap *caps; /* KILN_SIM_CAPACITY */
	size_t ncaps;
	atomic_ulong calls;   /* API calls made through this context */
	_Atomic uint64_t rng; /* splitmix64 state: one atomic add per draw */
};

/* What the fault knob decided for one call. */
enum sim_fault {
	SIM_FAULT_NONE,
	SIM_FAULT_BEFORE, /* fail without doing anything */
	SIM_FAULT_AFTER,  /* do the work, then lose the response (create only) */
};

/* A resource type's own behaviour beside the generic operations in sim_ops.c. */
struct sim_kind {
	const char *type;   /* "sim_node_group" */
	const char *prefix; /* "ng": ids are ng-0123456789abcdef0 */
	bool delayed;	    /* creating, changing and deleting take KILN_SIM_READY_MS */
	const struct prov_attr *attrs;
	size_t nattrs;
	/* Check inputs, fill computed attributes, take capacity; nothing is written yet. */
	int (*created)(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
		       struct kiln_error *err);
	/* The changed inputs are already in doc's attrs (before holds the old ones). */
	int (*updated)(struct prov_ctx *ctx, json_t *doc, const json_t *before,
		       const char *const *changed, size_t n, struct kiln_error *err);
	/* The resource is going for good: give back what it held. */
	int (*removed)(struct prov_ctx *ctx, json_t *doc, struct kiln_error *err);
};

extern const struct sim_kind sim_kinds[SIM_NTYPES];

/* sim_capacity.c: a Capacity Block's window, as the sim sells it. */
struct sim_block {
	int64_t start, end; /* unix seconds */
	long hours, count;
	double fee, gpu_hours;
	const char *zone; /* borrowed from the attrs */
};
int sim_block_window(const json_t *attrs, int64_t now, struct sim_block *b);
const char *sim_block_state(int64_t start, int64_t end, int64_t now);
/* "ZONE, START to END, $FEE up front ($X/GPU-hour; simulated)": caller frees. */
char *sim_block_line(const struct sim_block *b);
int sim_block_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
		      struct kiln_error *err);
/* PROV_OK when group's block is active now; else an error saying when it is. */
int sim_block_check(struct prov_ctx *ctx, const struct prov_scope *scope, const char *group,
		    struct kiln_error *err);
void sim_block_cost(const json_t *attrs, json_t *components, json_t *unpriced);
/* The provider's preflight: each block's offering, for the plan (provider.h). */
int sim_preflight(struct prov_ctx *ctx, const json_t *creates, json_t *warnings, json_t *offers,
		  struct kiln_error *err);
extern const struct prov_type sim_types[SIM_NTYPES];

/* sim.c */
enum sim_fault sim_call(struct prov_ctx *ctx, bool create);
int sim_retry(struct kiln_error *err);
const struct sim_kind *sim_kind_find(const char *type);
/* How long a resource of kind k stays pending after a create or change, in ms. */
long sim_ready_ms(const struct prov_ctx *ctx, const struct sim_kind *k);
/* How long it stays deleting after a delete, in ms. */
long sim_delete_ms(const struct prov_ctx *ctx, const struct sim_kind *k);
/* How long its create call takes to answer (0 without a profile), in ms. */
long sim_create_ms(const struct prov_ctx *ctx, const struct sim_kind *k);
/* Sleep ms milliseconds (0 or less: not at all), holding no lock. */
void sim_sleep_ms(long ms);

/* sim_store.c: a lock held around every change to the directory. */
struct sim_lock {
	int fd;
};
int sim_lock(struct prov_ctx *ctx, struct sim_lock *lk, struct kiln_error *err);
void sim_unlock(struct sim_lock *lk);

long long sim_now_ms(void);
/* n random lower-case hex digits and a NUL, from the system's generator. */
void sim_random_hex(char *out, size_t n);
void sim_new_id(const char *prefix, char out[SIM_ID_MAX]);
bool sim_id_ok(const char *id, const char *prefix);

/* The document of id: 0, PROV_NOTFOUND, or PROV_ERROR naming the file. */
int sim_doc_load(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t **out,
		 struct kiln_error *err);
int sim_doc_save(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err);
/*
 * A new resource's index records, before its document is saved: the marker,
 * its token and its address entry, one file ("ID\n") under three names.
 */
int sim_doc_index(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err);
/* Remove the document and its index records (the kind's removed() is the caller's). */
int sim_doc_forget(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err);
/* The live form the engine sees: type, id, address, status, attrs, tags. */
json_t *sim_doc_live(const json_t *doc);
const char *sim_doc_str(const json_t *doc, const char *section, const char *key);

/* Whether one scope and type has a marker for id. */
bool sim_index_has(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		   const char *type, const char *id);
/*
 * A document of a scope whose index marker is missing: the sim never leaves
 * one so (a create makes the marker before anyone learns the id, a delete
 * removes the document first), so it is a damaged directory, and an error
 * naming the document, the missing marker and the fix. PROV_OK otherwise.
 */
int sim_doc_check_indexed(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err);
/* The ids marked in one scope and type, sorted; *ids is NULL-terminated. */
int sim_index_ids(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		  const struct sim_kind *k, char ***ids, size_t *n, struct kiln_error *err);
/*
 * The same, less those that an address entry other than except's names (the
 * entry and the marker are one inode, where the file system's readdir shows
 * inodes reliably): the only documents that may have the address except while
 * its entry does not lead to them, unless their tags were edited by hand.
 */
int sim_index_unnamed(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		      const struct sim_kind *k, const char *except, char ***ids, size_t *n,
		      struct kiln_error *err);
/*
 * One page of them: the first limit ids after the token after (NULL: from the
 * start), sorted; *more when ids follow the page.
 */
int sim_index_page(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		   const struct sim_kind *k, const char *after, size_t limit, char ***ids,
		   size_t *n, bool *more, struct kiln_error *err);
void sim_ids_free(char **ids);
/* Every id of a kind, any scope or none, sorted (kiln sprawl). */
int sim_all_ids(struct prov_ctx *ctx, const struct sim_kind *k, char ***ids, size_t *n,
		struct kiln_error *err);

/* 0 and the id a token created, or PROV_NOTFOUND. */
int sim_token_find(struct prov_ctx *ctx, const char *token, char id[SIM_ID_MAX]);
/* 0 and the id the address entry of a scope names (maybe stale), or PROV_NOTFOUND. */
int sim_address_find(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		     const char *address, char id[SIM_ID_MAX]);
/*
 * With the lock held, best effort: make the address entry of a resource found
 * by a scan (replace: even over an entry naming another id).
 */
void sim_address_repair(struct prov_ctx *ctx, const char *cluster, const char *workspace,
			const char *type, const char *id, const char *address, bool replace);

/* GPU nodes held per model and zone across the whole sim: {"H100": {"sim-1a": 8}}. */
int sim_usage_load(struct prov_ctx *ctx, json_t **out, struct kiln_error *err);
int sim_usage_save(struct prov_ctx *ctx, const json_t *usage, struct kiln_error *err);

/* sim_nodes.c */
int sim_nodes_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
		      struct kiln_error *err);
int sim_nodes_updated(struct prov_ctx *ctx, json_t *doc, const json_t *before,
		      const char *const *changed, size_t n, struct kiln_error *err);
int sim_nodes_removed(struct prov_ctx *ctx, json_t *doc, struct kiln_error *err);
/*
 * Replace the nodes named (with the lock held): as many new ones first,
 * all or none (PROV_CAPACITY, nothing changed), then the named ones go.
 */
int sim_nodes_replaced(struct prov_ctx *ctx, json_t *doc, const char *const *nodes, size_t n,
		       struct kiln_error *err);
int sim_op_replace_nodes(struct prov_ctx *ctx, const struct sim_kind *k, const char *id,
			 const char *const *nodes, size_t n, json_t **out, struct kiln_error *err);
/* A node group's per-node view (nodes.h) from its document, as of now; a new array. */
json_t *sim_nodes_view(const json_t *doc);

/* sim_ops.c: the generic operations, given the type's kind. */
int sim_op_list(struct prov_ctx *ctx, const struct sim_kind *k, const struct prov_scope *scope,
		const char *page, json_t **out, char **next, struct kiln_error *err);
/* sim_node_group resources without kiln tags (provider.h list_unmanaged). */
int sim_list_unmanaged(struct prov_ctx *ctx, json_t **out, struct kiln_error *err);
/* sim_metrics.c: the provider's metrics hook, from KILN_SIM_GPU_UTIL and KILN_SIM_LUSTRE_LOAD. */
int sim_metrics(struct prov_ctx *ctx, const json_t *resources, int64_t start, int64_t end,
		int period, json_t **out, struct kiln_error *err);
int sim_op_read(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t **out,
		struct kiln_error *err);
int sim_op_create(struct prov_ctx *ctx, const struct sim_kind *k, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err);
int sim_op_update(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t *attrs,
		  const char *const *changed, size_t nchanged, json_t **out,
		  struct kiln_error *err);
int sim_op_delete(struct prov_ctx *ctx, const struct sim_kind *k, const char *id,
		  struct kiln_error *err);
/* provider.h's claim: kiln:lineage and kiln:owner set to the scope's. */
/* provider.h's tag_expiry: kiln:expires on a node group's document. */
int sim_tag_expiry(struct prov_ctx *ctx, const char *type, const char *id, const json_t *attrs,
		   const char *expires, struct kiln_error *err);
int sim_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
	      const char *id, json_t **out, struct kiln_error *err);
int sim_op_wait(struct prov_ctx *ctx, const struct sim_kind *k, enum prov_wait_for what,
		struct prov_wait *ids, size_t n, struct kiln_error *err);
/* The live resource of one address in a scope (for references between resources). */
int sim_find_address(struct prov_ctx *ctx, const struct sim_kind *k, const char *cluster,
		     const char *workspace, const char *address, json_t **out,
		     struct kiln_error *err);

/*
 * The same through the address entry alone, reading and never writing (no
 * lock needed): NULL when the entry is missing or stale.
 */
json_t *sim_find_indexed(struct prov_ctx *ctx, const struct sim_kind *k, const char *cluster,
			 const char *workspace, const char *address);

/*
 * For a plan (no lock, nothing written): the live resource of an address
 * as sim_find_address finds it, the entry first, then the scope's unnamed
 * documents, so a missing address entry does not make a store look unmade.
 * PROV_NOTFOUND when there is none, PROV_ERROR when the index cannot be
 * read.
 */
int sim_find_planned(struct prov_ctx *ctx, const struct sim_kind *k, const char *cluster,
		     const char *workspace, const char *address, json_t **out,
		     struct kiln_error *err);

/* sim_types.c: a role policy's document (JSON text) from its attrs read, write, allow. */
char *sim_role_policy_compile(struct prov_ctx *ctx, const struct prov_scope *scope,
			      const json_t *attrs);

/* sim_expand.c, sim_iam.c */
int sim_expand(struct prov_ctx *ctx, const struct spec *spec, json_t **out, struct kiln_error *err);
/* sim_expand.c: the user data rules at validate time (bootstrap.h's bootstrap_check_spec). */
void sim_boot_check(const struct spec *spec, struct diags *d);
const char *const *sim_iam_actions(const char *type, enum prov_verb verb);
/* provider.h's role_policy: a sim_role_policy's document, compiled or held. */
char *sim_role_policy(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      const json_t *attrs, bool live);

#endif
