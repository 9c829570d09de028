/*
 * provider.h - the only interface between the engine and a cloud.
 *
 * A provider is a table of resource types plus expand (spec -> desired
 * resources) and a catalog of instance types. The engine never names a
 * provider and a provider never includes engine internals (plan.h, apply.h,
 * store.h, state.h): it sees spec.h, util.h and catalog.h only.
 *
 * Resources travel as jansson objects, the same shape state.json records:
 *
 *   desired (from expand), keyed by address "TYPE.NAME":
 *     {"type": T, "name": N, "attrs": {...}, "deps": [addr...],
 *      "after": [addr...],                         (optional)
 *      "why": {"attr": "why this value"}}          ("why" is optional)
 *   "deps" are what the resource uses: it is made after them, replaced
 *   with them, and a retained store keeps them. "after" only orders the
 *   creates and updates: made after those, using none of them (aws makes
 *   zone-bound storage after the nodes' launch, in the zone they landed in).
 *   The engine adds "created_only": [addr...], the deps and afters this
 *   resource needs only created (the provider's needs table); it needs
 *   every other one ready.
 *
 * Created and ready: a resource is created when its create (or update)
 * call has answered: its id, ARN and every attribute the call returned are
 * known and recorded. It is ready when its wait is done as well (status
 * "ready"). A dependant starts once each dependency holds what it needs:
 * ready unless the provider's needs table says created will do (an IAM
 * policy naming a file system's ARN), so the waits of both run at once.
 *   live (from list, read, create, update, wait):
 *     {"type": T, "id": ID, "address": "T.N" | null, "status": S,
 *      "attrs": {...}, "tags": {"kiln:cluster": .., "kiln:workspace": ..,
 *      "kiln:address": .., user tags...}}
 *     S is "pending" (being created or changed), "ready", "deleting".
 *
 * Attributes listed in a type's attribute table are inputs: the engine diffs
 * them (desired against live, recorded against live) and obeys their update
 * policy. Any other live attribute is computed (ids, ARNs, chosen zone) and
 * is recorded but never diffed.
 *
 * Calls are synchronous and may be made from many threads at once; a
 * provider context must be safe for that. Every call returns one of enum
 * prov_status; the engine retries PROV_RETRY with backoff under the call's
 * deadline and never retries the others. One layer retries a failure
 * (retry.h): a provider that retries its own requests (aws, in http.c)
 * answers PROV_GAVE_UP when those ran out, and PROV_RETRY only for what is
 * not ready yet (eventual consistency).
 */
#ifndef KILN_PROVIDER_H
#define KILN_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "catalog.h"
#include "spec.h"
#include "util.h"

enum prov_status {
	PROV_OK = 0,
	PROV_ERROR = -1,    /* permanent: bad request, denied, conflict */
	PROV_RETRY = -2,    /* not yet: eventual consistency, a simulated 503; safe to repeat */
	PROV_CAPACITY = -3, /* insufficient capacity: nothing was left behind */
	PROV_NOTFOUND = -4, /* the id does not exist (read, update, delete) */
	PROV_GAVE_UP = -5,  /* transient, and the provider's own retries ran out: not repeated */
};

/* Throttled, failing or not ready for a while: a poll that got it polls again later. */
static inline bool prov_status_transient(int rc)
{
	return rc == PROV_RETRY || rc == PROV_GAVE_UP;
}

enum prov_policy {
	POLICY_LIVE,	/* changed in place */
	POLICY_REPLACE, /* forces delete then create */
	POLICY_STOP,	/* changed in place, but the nodes stop and start */
};

struct prov_attr {
	const char *name;
	enum prov_policy policy;
	bool sensitive;
	const char *why; /* why the policy, for the plan: "EC2 cannot move an instance" */
};

/* The tags every resource carries, in the create call itself. */
#define PROV_TAG_CLUSTER "kiln:cluster"
#define PROV_TAG_WORKSPACE "kiln:workspace"
#define PROV_TAG_ADDRESS "kiln:address"
#define PROV_TAG_EXPIRES "kiln:expires"
/*
 * Which state owns the resource: its lineage (the uuid the workspace's
 * state.json carries), and who made it from where, for people reading it
 * in another state's plan. Refresh treats as its own only what carries its
 * lineage (or, made before lineages, what its state records by id).
 */
#define PROV_TAG_LINEAGE "kiln:lineage"
#define PROV_TAG_OWNER "kiln:owner"

/*
 * Who is asking: list filters on cluster and workspace; create tags with them.
 *
 * For list only, cluster and workspace both NULL mean "every scope": each
 * live resource of the type that carries both the kiln:cluster and the
 * kiln:workspace tag, whatever their values (kiln sprawl), paged like any
 * list; each live object's id and tags name its own cluster and workspace. Create, update and the
 * rest always get a full scope.
 */
struct prov_scope {
	const char *cluster;
	const char *workspace;
	json_t *user_tags; /* {"k": "v"} from the spec's tags, borrowed; may be NULL */
	/*
	 * The workspace's expiry (RFC 3339) when it has a TTL, else NULL: creates
	 * tag it as kiln:expires. The expiry at creation; the state has the current one.
	 */
	const char *expires;
	/*
	 * The owning state's lineage and a readable owner ("NAME EMAIL STATE"),
	 * tagged by creates when set (both NULL for kiln sprawl's every-scope lists).
	 */
	const char *lineage;
	const char *owner;
};

/* One create call. */
struct prov_create {
	const char *address;
	const char *name;
	json_t *attrs;	   /* desired attrs, borrowed */
	const char *token; /* idempotency token: the same token twice creates once */
	/*
	 * The resource's dependencies as recorded: {"TYPE.NAME": {"type", "id",
	 * "attrs"}} (a subnet finds its VPC's id here). Borrowed.
	 */
	const json_t *deps;
	/*
	 * Called immediately before a call that cannot be undone (a purchase):
	 * 0 while the run still holds its workspace (its lock renewed and
	 * checked); -1 with err when it does not, and the call is not made.
	 * NULL: nothing to check.
	 */
	int (*guard)(void *arg, struct kiln_error *err);
	void *guard_arg;
};

enum prov_wait_for {
	WAIT_READY,
	WAIT_GONE,
};

/* What wait reports per id. */
enum prov_wait_state {
	WAIT_PENDING, /* not yet */
	WAIT_DONE,    /* ready (live is set) or gone */
	WAIT_FAILED,  /* will never be ready; err says why */
};

struct prov_wait {
	const char *id;		    /* in */
	enum prov_wait_state state; /* out */
	json_t *live;		    /* out: new reference when ready */
	struct kiln_error err;	    /* out: when failed */
};

struct prov_ctx; /* a provider's own connection state */

struct prov_type {
	const char *name; /* "sim_node_group" */
	const struct prov_attr *attrs;
	size_t nattrs;
	/*
	 * One page of the live resources of this type tagged with the scope's
	 * cluster and workspace: *out is a new array, *next a token for the
	 * next page (caller frees) or NULL after the last.
	 */
	int (*list)(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		    json_t **out, char **next, struct kiln_error *err);
	/* *out is a new live object; PROV_NOTFOUND when the id is gone. */
	int (*read)(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err);
	int (*create)(struct prov_ctx *ctx, const struct prov_scope *scope,
		      const struct prov_create *op, json_t **out, struct kiln_error *err);
	/* Change the attributes named in changed (all with a live or stop policy). */
	int (*update)(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		      json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		      struct kiln_error *err);
	int (*delete)(struct prov_ctx *ctx, const char *id, struct kiln_error *err);
	/* One poll over many ids; the engine calls it again while any is pending. */
	int (*wait)(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		    struct kiln_error *err);
	/*
	 * A node group's: replace the nodes named (instance ids of its `nodes`)
	 * by as many new ones with the group's settings, launched first, all or
	 * nothing (a gang's into its placement group); only when they launched
	 * are the named ones terminated, so a failed launch touches nothing.
	 * *out: the group's live object after. NULL for types without nodes.
	 */
	int (*replace_nodes)(struct prov_ctx *ctx, const char *id, const char *const *nodes,
			     size_t n, json_t **out, struct kiln_error *err);
	/*
	 * Creating one buys something up front that cannot be undone (capacity
	 * for a window): apply buys it only as a refreshed plan showed it, with
	 * approvals or --allow-purchase.
	 */
	bool purchase;
};

/*
 * A dependant of type `type` that needs a dependency of type `dep_type`
 * only created, not ready: `uses` names what it takes of it (the attributes
 * the create call answered) and why that is enough, for kiln-plan-json(5),
 * `kiln graph` and the man pages. A pair not listed needs the dependency
 * ready, the safe default.
 */
struct prov_need {
	const char *type;
	const char *dep_type;
	const char *uses;
};

/* The API operations a type's verb needs, for iam-policy and the plan's IAM delta. */
enum prov_verb {
	VERB_LIST,
	VERB_READ,
	VERB_CREATE,
	VERB_UPDATE,
	VERB_DELETE,
};

/* The parts of a spec that resources carry, for naming a finding's resource. */
/* The most keys a data manifest lists (list_objects). */
#define PROV_OBJECTS_MAX 1000000

enum prov_part {
	PART_GROUP,  /* compute.NAME: the node group */
	PART_OBJECT, /* storage.NAME, tier object */
	PART_LUSTRE, /* storage.NAME, tier lustre */
	PART_NFS,    /* storage.NAME, tier nfs */
	PART_ROLE,   /* iam.roles.NAME: the resource holding the role's policy */
};

/* What a resource type is part of, as a reader groups a cluster's drawing. */
enum prov_tier {
	PROV_TIER_OTHER = 0,
	PROV_TIER_NETWORK,
	PROV_TIER_COMPUTE,
	PROV_TIER_STORAGE,
	PROV_TIER_IAM,
};

/* A provider's table of its types' tiers, for its type_tier hook. */
struct prov_type_tier {
	const char *type;
	enum prov_tier tier;
};
/* The tier of type in tiers[0..n); PROV_TIER_OTHER when it is not there. */
enum prov_tier provider_tier_find(const struct prov_type_tier *tiers, size_t n, const char *type);

struct provider {
	const char *name; /* "sim", "aws": the spec's provider.name */
	bool simulated;	  /* every output says so */
	const struct prov_type *types;
	size_t ntypes;
	int (*open)(struct prov_ctx **out, const struct spec *spec, struct kiln_error *err);
	void (*close)(struct prov_ctx *ctx);
	/* Desired resources, keyed by address; -1 with err (e.g. a GPU not in the catalog). */
	int (*expand)(struct prov_ctx *ctx, const struct spec *spec, json_t **out,
		      struct kiln_error *err);
	const struct catalog *(*catalog)(struct prov_ctx *ctx);
	/*
	 * The cloud's own rules on a loaded spec, checked by `kiln validate`
	 * (and so before every plan) with no context and no API call: tag keys
	 * and values, the catalog's GPU models and instance types. Each problem
	 * is an error added to d at its node. NULL when the cloud has none.
	 */
	void (*check_spec)(const struct spec *spec, struct diags *d);
	/* NULL-terminated list of actions, e.g. {"ec2:RunInstances", NULL}. */
	const char *const *(*iam_actions)(const char *type, enum prov_verb verb);
	/*
	 * The actions one desired resource ({"type", "attrs", ...}) needs
	 * beyond its type's, when its attrs ask for more (a group that
	 * targets a capacity reservation reads it): NULL-terminated, or NULL.
	 * NULL when no resource ever needs more than its type.
	 */
	const char *const *(*iam_resource_actions)(const json_t *desired, enum prov_verb verb);
	/*
	 * The policy document (JSON text, caller frees) that allows exactly the
	 * sorted, unique actions for this scope, each on resources as narrow as
	 * the cloud allows; NULL when the provider needs no permissions (sim).
	 */
	char *(*iam_policy)(struct prov_ctx *ctx, const struct prov_scope *scope,
			    const char *const *actions, size_t n);
	/*
	 * Why a reviewer must look at a role granted action (an IAM pattern:
	 * "s3:*" covers what it names), for the plan's IAM delta: the action
	 * lets its holder widen its own access (it rewrites a resource
	 * policy); NULL when there is nothing to say, or the hook is NULL.
	 */
	const char *(*iam_grant_note)(const char *action);
	/*
	 * Checks with the cloud before anything is spent, over what a plan
	 * creates (creates and replacements: {address: desired}; a
	 * replacement's also carries "replacing": the live attributes of what
	 * it replaces, which the apply deletes first): warnings
	 * (strings) are added to warnings; PROV_OK, or an error with err that
	 * stops the plan. PROV_RETRY is retried like any call, so warnings are
	 * added only once every call has answered. For a resource whose
	 * create buys something chosen among offerings (a Capacity Block),
	 * offers gets {address: {"offering": OFFER, "runner_up": OFFER or
	 * null}}, OFFER being {"id", "zone", "instance_type", "count", "start",
	 * "end", "duration_hours", "upfront_usd", "usd_per_gpu_hour"}: the plan
	 * carries them in the change (kiln-plan-json(5)). NULL when the
	 * provider has nothing to check.
	 */
	int (*preflight)(struct prov_ctx *ctx, const json_t *creates, json_t *warnings,
			 json_t *offers, struct kiln_error *err);
	/* The type of the resource named NAME that carries a spec part (TYPE.NAME). */
	const char *(*part_type)(enum prov_part part);
	/*
	 * The tier a type belongs to, for `kiln graph`'s clusters: network,
	 * compute, storage or IAM; PROV_TIER_OTHER for what is none of them.
	 * NULL: every type is other.
	 */
	enum prov_tier (*type_tier)(const char *type);
	/*
	 * What one resource of this type costs with these input attributes:
	 * components ({"name", "unit", "quantity", "unit_price", "hourly"}, USD)
	 * appended to components, and whatever the catalog cannot price as
	 * {"name", "reason"} appended to unpriced. Nothing appended: it is free.
	 */
	void (*cost)(struct prov_ctx *ctx, const char *type, const json_t *attrs,
		     json_t *components, json_t *unpriced);
	/*
	 * The policy document (JSON text, caller frees) a resource of this
	 * type grants: its desired attrs compiled (live false), or the policy
	 * its live or recorded attrs hold (live true); an ARN not known
	 * before apply is written as the pattern it will match. NULL when the
	 * type grants nothing, or a live resource holds no policy. Makes no
	 * API call.
	 */
	char *(*role_policy)(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
			     const json_t *attrs, bool live);
	/*
	 * GPU instances that carry no kiln tags (kiln sprawl): *out is a new
	 * array of {"type", "id", "address": null, "status", "attrs", "tags"}
	 * where "type" is the provider type whose cost hook prices attrs
	 * (instance_type, count, market) and attrs also hold "gpu" and "gpus"
	 * from the catalog. NULL when the provider cannot hold such instances.
	 */
	int (*list_unmanaged)(struct prov_ctx *ctx, json_t **out, struct kiln_error *err);
	/*
	 * Take a resource over for the scope's state (kiln state takeover): set
	 * its kiln:lineage and kiln:owner tags to the scope's, touching nothing
	 * else, and answer its live object (*out, new; its id may change when
	 * the id names the lineage). NULL when the provider cannot retag.
	 */
	int (*claim)(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		     const char *id, json_t **out, struct kiln_error *err);
	/*
	 * The node TTL (issue 29): a node powers itself off past the kiln:expires
	 * tag it reads from itself (plus the spec's ttl_grace), so a new expiry
	 * (kiln ttl extend) must reach it. Set kiln:expires to expires (RFC 3339)
	 * on what resource id of type runs (attrs as recorded: a node group's
	 * instance_ids), touching nothing else; PROV_OK doing nothing for a type
	 * without nodes. NULL when the provider's nodes read no tag.
	 */
	int (*tag_expiry)(struct prov_ctx *ctx, const char *type, const char *id,
			  const json_t *attrs, const char *expires, struct kiln_error *err);
	/* How many API calls this context has made (for bench and tests). */
	unsigned long (*calls)(struct prov_ctx *ctx);
	/*
	 * What the cloud billed per kiln cluster (kiln report --actual), days
	 * [first, last) as YYYY-MM-DD (UTC): *out is a new {"tags": {KEY:
	 * "Active" | "Inactive" | null (never seen)} for kiln's cluster and
	 * workspace tags as cost-allocation tags, "hint": what activates them,
	 * "rows": [{"cluster" (null: untagged), "date", "service", "kind"
	 * ("compute", "storage" or "other": the ledger's split it is set against),
	 * "amount" (USD)}]}. NULL when the provider has no bill (sim).
	 */
	int (*billed)(struct prov_ctx *ctx, const char *first, const char *last, json_t **out,
		      struct kiln_error *err);
	/* The actions billed calls (NULL-terminated), for kiln iam-policy --report-actual. */
	const char *const *billed_actions;
	/*
	 * What the nodes and stores did over [start, end), in samples of
	 * period seconds (kiln status, kiln reap's idle policy). resources:
	 * {address: resource} as recorded, attrs live where refreshed. *out is
	 * a new {"groups": {ADDRESS: {"agent": "why no data" or null, "nodes":
	 * [{"id", "gpu_util", "gpu_util_max", "gpu_memory", "net_in",
	 * "net_out"}]}}, "stores": {ADDRESS: {"read_mbps", "write_mbps",
	 * "provisioned_mbps"}}} for the node groups and Lustre stores; a figure
	 * not reported is null (gpu_* in percent, net_* in bytes a second, the
	 * means over the window; gpu_util_max the highest sample); a group whose
	 * type has no GPUs is left out. As few API
	 * calls as the cloud allows, never one per node. NULL when the
	 * provider cannot measure.
	 */
	int (*metrics)(struct prov_ctx *ctx, const json_t *resources, int64_t start, int64_t end,
		       int period, json_t **out, struct kiln_error *err);
	/*
	 * The user an image's nodes are logged in as when access.user names
	 * none (kiln ssh, ssh-config, the plan's note): *user and *why (which
	 * image it is, and whose default that user is; for the plan) new
	 * strings. image may be NULL (the group names none). PROV_OK, or an
	 * error with err. NULL when the cloud has no default user.
	 */
	int (*login_user)(struct prov_ctx *ctx, const char *image, char **user, char **why,
			  struct kiln_error *err);
	/*
	 * A simulated provider's model of a training run (kiln run, issue
	 * 27): how many seconds it lasts and its pace in tokens a second (< 0:
	 * it reports no progress), from the provider's knobs. PROV_OK, or an
	 * error with err naming a knob that is not a number it takes. NULL on
	 * a provider whose runs run on machines.
	 */
	int (*run_model)(struct prov_ctx *ctx, int64_t *seconds, double *tokens_per_s,
			 struct kiln_error *err);
	/*
	 * An object store's keys under prefix, for a run's data manifest (issue
	 * 27): *out a new array of {"key", "size", "etag"}, every page read, as
	 * few calls as the cloud allows (ListObjectsV2's 1,000 keys a call).
	 * id is the store's recorded id. PROV_NOTFOUND when the store is gone;
	 * an error naming the prefix past PROV_OBJECTS_MAX keys. NULL when the
	 * provider has no objects to list.
	 */
	int (*list_objects)(struct prov_ctx *ctx, const char *id, const char *prefix, json_t **out,
			    struct kiln_error *err);

	/*
	 * The cloud's rules on a spec and its names, so the engine needs none
	 * of its own. Each may be NULL: the cloud has no such rule.
	 */
	/* The template `kiln init` writes for this provider without --template. */
	const char *default_template;
	/* What to edit in such a spec before a plan, for init's next steps; NULL: nothing. */
	const char *init_edit;
	/*
	 * Fill what the spec leaves to the cloud (sim: its region and zone),
	 * while the spec loads; zone_given says the spec has a provider.zone.
	 */
	void (*defaults)(struct spec *spec, bool zone_given);
	/* The region open() takes when none is given, for reports (kiln sprawl). */
	const char *(*default_region)(void);
	/*
	 * Whether region is one of the cloud's region names, checked by `kiln
	 * validate` before its zones; when not, an error added to d at the
	 * region (or, when zone is set, the region was read off that zone: at
	 * the zone) and false: the zones are not checked against it.
	 */
	bool (*check_region)(const struct spec *spec, const char *region,
			     const struct spec_ref *zone, struct diags *d);
	/* The cloud's rules on one compute group (its image): errors added to d. */
	void (*check_group)(const struct spec *spec, const struct spec_group *g, struct diags *d);
	/* How the spec's allow: statements name resources; NULL: any name. */
	const struct spec_grammar *grammar;
	/*
	 * NULL-terminated patterns (fnmatch, case folded) of actions no policy
	 * can scope to a resource: "*" is their only resource, so audit does
	 * not flag them.
	 */
	const char *const *unscopable_actions;
	/*
	 * The pairs of types whose edge needs only created (struct prov_need),
	 * ended by an entry whose type is NULL; NULL: every edge needs ready.
	 */
	const struct prov_need *needs;
};

/*
 * The tags a create puts on a resource at address: the scope's user tags,
 * then kiln:cluster, kiln:workspace, kiln:address, and kiln:expires,
 * kiln:lineage and kiln:owner when the scope has them. New object.
 */
json_t *provider_scope_tags(const struct prov_scope *scope, const char *address);
/* A live object's address, else its kiln:address tag; NULL when it has neither. */
const char *provider_live_address(const json_t *live);
/* A live object's kiln:lineage tag, or NULL (made before lineages, or not by kiln). */
const char *provider_live_lineage(const json_t *live);
/*
 * A tag value made of what every cloud kiln tags accepts (letters, digits,
 * spaces and _.:/=+-@), at most 256 characters: others become '_'. Caller frees.
 */
char *provider_tag_value(const char *s);

/* The provider table (providers/providers.c) holds at most this many. */
#define PROVIDERS_MAX 16

/* The provider table (providers/providers.c); NULL when name is unknown. */
const struct provider *provider_find(const char *name);
/* How many providers the table holds, and each in the table's order. */
size_t provider_count(void);
const struct provider *provider_at(size_t i);
/* The first provider of the table that is (or is not) simulated. */
const struct provider *provider_first(bool simulated);
/* What the spec loader knows of each provider, in the table's order (spec_options). */
const struct spec_provider *providers_for_spec(size_t *n);
/*
 * The providers' names in the table's order, each after prefix, joined by
 * sep and the last by last: ("--provider ", ", ", " or ") gives
 * "--provider aws or --provider sim". Caller frees.
 */
char *provider_names_join(const char *prefix, const char *sep, const char *last);
const struct prov_type *provider_type(const struct provider *p, const char *type);
const struct prov_attr *provider_type_attr(const struct prov_type *t, const char *name);
const char *provider_policy_name(enum prov_policy p);
/* The entry of p's needs table for (type, dep_type), or NULL: it needs the dependency ready. */
const struct prov_need *provider_need_created(const struct provider *p, const char *type,
					      const char *dep_type);
/*
 * Sort a JSON array in place; cmp gets (json_t *const *) pointers. For the
 * engine and the providers alike (live resources, listings, rules).
 */
void provider_json_sort(json_t *arr, int (*cmp)(const void *, const void *));

#endif
