/*
 * engine.h - what plan, apply, destroy and graph share: load a spec, open
 * its provider, expand it into desired resources, refresh live state, and
 * call the provider, one logical call at a time, with bounded retries.
 *
 * The engine names no cloud: it finds the provider by the spec's
 * provider.name in the provider table and talks to it through provider.h.
 */
#ifndef KILN_ENGINE_H
#define KILN_ENGINE_H

#include <jansson.h>

#include "diag.h"
#include "graph.h"
#include "provider.h"
#include "retry.h"
#include "spec.h"

struct engine {
	struct spec *spec;
	const struct provider *prov;
	struct prov_ctx *ctx;
	struct prov_scope scope;
	char *workspace;
	json_t *user_tags;
	json_t *desired;   /* address -> desired resource (provider.h) */
	char *spec_digest; /* "sha256:HEX" of the spec file and the --var values */
	char *spec_text;   /* the spec file's bytes, as digested (NUL-terminated) */
	size_t spec_len;
};

/*
 * Validate the spec (problems go to d, printed by the caller), open its
 * provider and expand it. 0, or -1: with d holding errors, or with err.
 */
int engine_open(struct engine **out, const char *spec_path, const struct spec_options *opts,
		const char *workspace, struct diags *d, struct kiln_error *err);
void engine_free(struct engine *e);
/*
 * An engine with no spec file (kiln sprawl, over what another run left):
 * its stand-in spec names only the cluster, the provider and the region
 * (NULL: the provider's default), its scope the cluster and workspace, and
 * it wants no resource. -1 with err when the provider cannot be opened.
 */
int engine_open_scope(struct engine **out, const struct provider *prov, const char *region,
		      const char *cluster, const char *workspace, struct kiln_error *err);

/* "sha256:HEX" over the spec's bytes and the sorted --var overrides. */
char *engine_spec_digest(const char *text, size_t len, const struct spec_options *opts);

/* The provider type of a resource object (desired, recorded or live); NULL if unknown. */
const struct prov_type *engine_type(const struct engine *e, const json_t *resource);

struct refresh_stats {
	unsigned long list_calls;
	unsigned long read_calls;
	size_t live; /* live resources found */
};

/*
 * Live state: every type listed by the workspace's tags, page by page, then
 * each recorded resource the lists did not return read by its id. *live maps
 * address -> [live...] (more than one when duplicates exist), sorted by id.
 * With share, a live resource whose attributes equal its recorded ones holds
 * the recorded object instead of its own copy, freed page by page: for a
 * caller that changes neither (plan), a steady 10,000-resource workspace
 * keeps one copy of its attributes, not two.
 *
 * Only what the workspace owns is live: what carries e->scope.lineage, or,
 * made before lineages, what recorded holds by id. Every other object in
 * the scope (another state's, or an untagged one no state records) is
 * appended to foreign (when not NULL) and is never planned over.
 */
int engine_refresh(struct engine *e, const json_t *recorded, bool share, json_t **live,
		   json_t *foreign, struct refresh_stats *stats, struct kiln_error *err);

/*
 * The DAG of a resource map (desired or recorded): every address, an edge
 * per dep and per "after". NULL with err naming the resources when they
 * depend on each other in a cycle.
 */
struct graph *engine_graph(const json_t *resources, struct kiln_error *err);
/*
 * The tier of the resource at address (TYPE.NAME) as `kiln graph` clusters
 * it: "network", "compute", "storage", "iam", or NULL for none of them.
 */
const char *engine_tier(const struct engine *e, const char *address);
/*
 * Each desired resource's "created_only": the addresses of its deps and afters
 * that the provider's needs table says it needs only created (provider.h);
 * none: no "created_only" key.
 */
void engine_mark_created(const struct provider *prov, json_t *desired);

/*
 * Retries for PROV_RETRY, "not yet" (retry.h says who retries what): up to
 * KILN_RETRY_MAX attempts in all (default 8), exponential backoff from
 * KILN_RETRY_BASE_MS (default 100) with full jitter, capped at 5 s, while
 * the backoff ends before the logical call's deadline. engine_retry_wait
 * returns false when the attempts or the time are used up.
 */
bool engine_retry_wait(int attempt);
/* After the last attempt failed transiently: say so in err. */
void engine_retry_gave_up(int rc, int attempts, struct kiln_error *err);
/*
 * Whether a call of verb on type t is made again after PROV_RETRY: never a
 * create that buys something up front (t->purchase), whose lost answer may
 * hide a purchase made; its provider looks for what it bought instead.
 */
bool engine_call_retried(const struct prov_type *t, enum prov_verb verb);
/*
 * One logical call of a provider hook: its deadline (KILN_CALL_DEADLINE_MS)
 * begins here and holds for every request the provider makes for it.
 * PROV_GAVE_UP, the provider's own retries run out, is not repeated.
 */
#define ENGINE_CALL(rc, err, call)                                                                 \
	do {                                                                                       \
		struct retry_call call_;                                                           \
		int attempt_ = 0;                                                                  \
		retry_call_begin(&call_, NULL);                                                    \
		while (((rc) = (call)) == PROV_RETRY && engine_retry_wait(attempt_++))             \
			;                                                                          \
		engine_retry_gave_up((rc), attempt_, (err));                                       \
		retry_call_end(&call_);                                                            \
	} while (0)

/* A logical call the engine does not retry (a purchase): its deadline bounds the provider's. */
#define ENGINE_CALL_ONCE(rc, call)                                                                 \
	do {                                                                                       \
		struct retry_call call_;                                                           \
		retry_call_begin(&call_, NULL);                                                    \
		(rc) = (call);                                                                     \
		retry_call_end(&call_);                                                            \
	} while (0)

/* attrs reduced to a type's inputs (its attribute table): what diffs compare. */
json_t *engine_inputs(const struct prov_type *t, const json_t *attrs);

#endif
