/*
 * sprawl.c - orphans, their cost, their destroy and adopt plans, and
 * carrying them out through the executor (see sprawl.h).
 */
#include "sprawl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "engine.h"
#include "jsonc.h"
#include "operation.h"
#include "signals.h"
#include "state.h"
#include "strbuf.h"

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *tag(const json_t *live, const char *key)
{
	return json_string_value(json_object_get(json_object_get(live, "tags"), key));
}

/* Every recorded id, over all workspaces: {"ID": true}. */
static json_t *recorded_ids(const json_t *recorded)
{
	json_t *ids = json_object();
	const json_t *doc, *r;
	const char *ws, *addr;

	json_object_foreach_const(recorded, ws, doc)
	{
		state_foreach_resource(doc, addr, r)
		{
			const char *id = state_resource_id(r);

			if (id)
				json_object_set_new(ids, id, json_true());
		}
	}
	return ids;
}

/* Why no workspace holds a live resource of cluster c, workspace w, address addr. */
static char *reason(const json_t *recorded, const char *c, const char *w, const char *addr)
{
	json_t *doc = json_object_get(recorded, w), *r;
	const char *held, *rid;

	if (!doc)
		return xasprintf("workspace '%s' does not exist in the state repository", w);
	held = state_cluster(doc);
	if (held && strcmp(held, c) != 0)
		return xasprintf("workspace '%s' holds cluster '%s', not '%s'", w, held, c);
	r = addr ? json_object_get(state_resources(doc), addr) : NULL;
	rid = json_string_value(json_object_get(r, "id"));
	if (rid)
		return xasprintf("workspace '%s' records %s as %s: this one is a duplicate", w,
				 addr, rid);
	return xasprintf("workspace '%s' does not record it", w);
}

static int orphan_cmp(const void *a, const void *b)
{
	static const char *const keys[] = {"cluster", "workspace", "address", "id"};
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	size_t i;
	int c;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *p = json_string_value(json_object_get(x, keys[i]));
		const char *q = json_string_value(json_object_get(y, keys[i]));

		c = strcmp(p ? p : "", q ? q : "");
		if (c)
			return c;
	}
	return 0;
}

json_t *sprawl_orphans(const json_t *live, const json_t *recorded, const json_t *known,
		       size_t *foreign)
{
	json_t *ids = recorded_ids(recorded), *out = json_array(), *l;
	size_t i;

	if (foreign)
		*foreign = 0;
	json_array_foreach(live, i, l)
	{
		const char *id = json_string_value(json_object_get(l, "id"));
		const char *status = json_string_value(json_object_get(l, "status"));
		const char *c = tag(l, PROV_TAG_CLUSTER), *w = tag(l, PROV_TAG_WORKSPACE);
		const char *addr = provider_live_address(l);
		char *why;

		if (!id || !c || !w || json_object_get(ids, id))
			continue;
		if (status && strcmp(status, "deleting") == 0)
			continue;
		if (provider_live_lineage(l) && !json_object_get(known, provider_live_lineage(l))) {
			if (foreign)
				(*foreign)++;
			continue;
		}
		why = reason(recorded, c, w, addr);
		json_array_append_new(
		    out,
		    json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:s?, s:s, s:s?, s:O}", "cluster", c,
			      "workspace", w, "address", addr, "type",
			      json_string_value(json_object_get(l, "type")), "id", id, "status",
			      status, "reason", why, "lineage", provider_live_lineage(l), "attrs",
			      json_object_get(l, "attrs") ? json_object_get(l, "attrs")
							  : json_null()));
		free(why);
	}
	json_decref(ids);
	/* Sorted: the same listing prints the same way. */
	provider_json_sort(out, orphan_cmp);
	return out;
}

double sprawl_hourly(const struct provider *prov, struct prov_ctx *ctx, const char *type,
		     const json_t *attrs, json_t *unpriced)
{
	json_t *comps = json_array(), *c;
	double sum = 0;
	size_t i;

	if (prov->cost && type)
		prov->cost(ctx, type, attrs, comps, unpriced);
	json_array_foreach(comps, i, c) sum += json_number_value(json_object_get(c, "hourly"));
	json_decref(comps);
	return sum;
}

bool sprawl_is_store(const struct provider *prov, const char *type)
{
	static const enum prov_part stores[] = {PART_OBJECT, PART_LUSTRE, PART_NFS};
	size_t i;

	for (i = 0; prov->part_type && type && i < ARRAY_SIZE(stores); i++) {
		const char *t = prov->part_type(stores[i]);

		if (t && strcmp(t, type) == 0)
			return true;
	}
	return false;
}

/* The position of a type in the provider's table (ntypes when unknown). */
static size_t type_rank(const struct provider *prov, const char *type)
{
	size_t i;

	for (i = 0; type && i < prov->ntypes; i++)
		if (strcmp(prov->types[i].name, type) == 0)
			return i;
	return prov->ntypes;
}

/* A change's name (plan.h): what follows the type in its address. */
static const char *change_name(const char *address)
{
	const char *dot = strchr(address, '.');

	return dot && dot[1] ? dot + 1 : address;
}

json_t *sprawl_adopt_plan(const json_t *orphans, const json_t *state, json_t *skipped)
{
	json_t *changes = json_array(), *count = json_object(), *o, *n;
	const json_t *held = state_resources(state);
	size_t i;

	json_array_foreach(orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));

		if (addr) {
			n = json_object_get(count, addr);
			json_object_set_new(count, addr,
					    json_integer(n ? json_integer_value(n) + 1 : 1));
		}
	}
	json_array_foreach(orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *rid =
		    addr ? json_string_value(json_object_get(json_object_get(held, addr), "id"))
			 : NULL;
		char *why = NULL;

		/* Recorded since it was listed (a replayed journal, a commit): no orphan now. */
		if (addr && id && rid && strcmp(rid, id) == 0)
			continue;
		if (!addr)
			why = xstrdup("it carries no kiln:address tag");
		else if (json_object_get(held, addr))
			why = xasprintf("the workspace records %s as %s", addr, rid ? rid : "?");
		else if (json_integer_value(json_object_get(count, addr)) > 1)
			why = xasprintf("%" JSON_INTEGER_FORMAT " live resources carry %s",
					json_integer_value(json_object_get(count, addr)), addr);
		if (why) {
			json_array_append_new(skipped, json_pack("{s:s?, s:s, s:s}", "address",
								 addr, "id", id, "reason", why));
			free(why);
			continue;
		}
		json_array_append_new(
		    changes,
		    json_pack("{s:s, s:O, s:s, s:{s:[s], s:n, s:n, s:{s:s}}, s:{s:s, s:[]}}",
			      "address", addr, "type", json_object_get(o, "type"), "name",
			      change_name(addr), "change", "actions", "no-op", "before", "after",
			      "importing", "id", id, "kiln", "id", id, "deps"));
	}
	json_decref(count);
	return json_pack("{s:o}", "resource_changes", changes);
}

json_t *sprawl_destroy_plan(const struct provider *prov, const json_t *orphans,
			    const json_t *recorded)
{
	json_t *changes = json_array(), *seen = json_object(), *names = json_array(), *o;
	size_t i, j;

	/* Each change's address: the orphan's, unless two orphans share it. */
	json_array_foreach(orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		json_t *n = json_object_get(seen, addr ? addr : "");

		json_object_set_new(seen, addr ? addr : "",
				    json_integer(n ? json_integer_value(n) + 1 : 1));
	}
	json_array_foreach(orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *type = json_string_value(json_object_get(o, "type"));
		char *name;

		if (!addr)
			name = xasprintf("%s.%s", type, id);
		else if (json_integer_value(json_object_get(seen, addr)) > 1 ||
			 json_object_get(recorded, addr))
			name = xasprintf("%s (%s)", addr, id);
		else
			name = xstrdup(addr);
		json_array_append_new(names, json_string(name));
		free(name);
	}
	json_array_foreach(orphans, i, o)
	{
		const char *type = json_string_value(json_object_get(o, "type"));
		size_t rank = type_rank(prov, type);
		json_t *deps = json_array(), *p;

		json_array_foreach(orphans, j, p)
		{
			if (type_rank(prov, json_string_value(json_object_get(p, "type"))) < rank)
				json_array_append(deps, json_array_get(names, j));
		}
		json_array_append_new(
		    changes,
		    json_pack("{s:O, s:s?, s:s, s:{s:[s], s:O?, s:n}, s:{s:O, s:o}}", "address",
			      json_array_get(names, i), "type", type, "name",
			      change_name(json_string_value(json_array_get(names, i))), "change",
			      "actions", "delete", "before", json_object_get(o, "attrs"), "after",
			      "kiln", "id", json_object_get(o, "id"), "deps", deps));
	}
	json_decref(names);
	json_decref(seen);
	return json_pack("{s:o}", "resource_changes", changes);
}

/* The executor's events of a sprawl run: each result recorded, then passed on. */
static void on_event(void *arg, const struct apply_event *ev)
{
	struct sprawl_results *d = arg;

	if (ev->kind != APPLY_DONE && ev->kind != APPLY_FAILED)
		return;
	pthread_mutex_lock(&d->mu);
	if (ev->kind == APPLY_DONE)
		json_array_append_new(d->done, json_pack("{s:s, s:s, s:s, s:s?}", "cluster",
							 d->cluster, "workspace", d->workspace,
							 "address", ev->address, "id", ev->id));
	else
		json_array_append_new(d->failed,
				      json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "cluster",
						d->cluster, "workspace", d->workspace, "address",
						ev->address, "id", ev->id, "error", ev->error));
	if (d->on_result)
		d->on_result(d->arg, d->cluster, d->workspace, ev);
	pthread_mutex_unlock(&d->mu);
}

void sprawl_results_init(struct sprawl_results *d)
{
	pthread_mutex_init(&d->mu, NULL);
	d->done = json_array();
	d->failed = json_array();
}

void sprawl_results_release(struct sprawl_results *d)
{
	json_decref(d->done);
	json_decref(d->failed);
	pthread_mutex_destroy(&d->mu);
}

int sprawl_provider_open(const struct provider *prov, const char *region, struct prov_ctx **ctx,
			 struct kiln_error *err)
{
	/* No spec: an account-wide look names only the cloud and the region. */
	struct spec sp = {0};
	int rc;

	/* A spec owns its strings (spec_free frees them); the provider copies what it keeps. */
	sp.provider.name = xstrdup(prov->name);
	sp.provider.region = region ? xstrdup(region) : NULL;
	rc = prov->open(ctx, &sp, err) < 0 ? -1 : 0;
	free(sp.provider.name);
	free(sp.provider.region);
	return rc;
}

void sprawl_provider_close(const struct provider *prov, struct prov_ctx *ctx)
{
	if (ctx)
		prov->close(ctx);
}

const char *sprawl_default_region(const struct provider *prov)
{
	return prov->default_region ? prov->default_region() : NULL;
}

const struct catalog *sprawl_catalog(const struct provider *prov, struct prov_ctx *ctx)
{
	return prov->catalog ? prov->catalog(ctx) : NULL;
}

int sprawl_list_unmanaged(const struct provider *prov, struct prov_ctx *ctx, json_t **out,
			  struct kiln_error *err)
{
	int rc;

	*out = NULL;
	if (!prov->list_unmanaged) {
		*out = json_array();
		return 0;
	}
	ENGINE_CALL(rc, err, prov->list_unmanaged(ctx, out, err));
	return rc == PROV_OK ? 0 : -1;
}

int sprawl_list_tagged(const struct provider *prov, struct prov_ctx *ctx, json_t **out,
		       struct kiln_error *err)
{
	const struct prov_scope any = {NULL, NULL, NULL};
	size_t t;
	int rc = PROV_OK;

	*out = json_array();
	for (t = 0; t < prov->ntypes && rc == PROV_OK; t++) {
		char *page = NULL;

		do {
			json_t *arr = NULL;
			char *next = NULL;

			ENGINE_CALL(rc, err,
				    prov->types[t].list(ctx, &any, page, &arr, &next, err));
			free(page);
			page = next;
			if (rc == PROV_OK)
				json_array_extend(*out, arr);
			json_decref(arr);
		} while (rc == PROV_OK && page);
		free(page);
	}
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

double sprawl_price_all(const struct provider *prov, struct prov_ctx *ctx, json_t *items)
{
	double sum = 0;
	json_t *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		json_t *unpriced = json_array();
		double h = sprawl_hourly(prov, ctx, jstr(it, "type"), json_object_get(it, "attrs"),
					 unpriced);

		json_object_set_new(it, "hourly", json_real(h));
		json_object_set_new(it, "unpriced", unpriced);
		sum += h;
	}
	return sum;
}

/*
 * The orphans are sorted by cluster and workspace: a group is a run of them.
 * The run that starts at *i (a new array); *i moves past it.
 */
static json_t *next_group(const json_t *orphans, size_t *i)
{
	const json_t *first = json_array_get(orphans, *i);
	const char *c = jstr(first, "cluster"), *w = jstr(first, "workspace");
	json_t *group = json_array();

	for (; *i < json_array_size(orphans); (*i)++) {
		json_t *x = json_array_get(orphans, *i);

		if (strcmp(jstr(x, "cluster"), c) != 0 || strcmp(jstr(x, "workspace"), w) != 0)
			break;
		json_array_append(group, x);
	}
	return group;
}

/* "N WHAT[; N failed][; N not done]": what a sprawl commit's summary line counts. */
static char *counts_of(const struct apply_result *res, const char *what)
{
	struct strbuf sb = {0};

	sb_addf(&sb, "%zu %s", res->done, what);
	if (res->failed)
		sb_addf(&sb, "; %zu failed", res->failed);
	if (res->skipped)
		sb_addf(&sb, "; %zu not done", res->skipped);
	return sb_detach(&sb);
}

static char *adopted_counts(const struct apply_result *res)
{
	return counts_of(res, "adopted");
}

static char *deleted_counts(const struct apply_result *res)
{
	return counts_of(res, "deleted");
}

/*
 * The operation over one group's workspace (cluster c, workspace w): an
 * engine whose stand-in spec names only them, the workspace locked (made
 * when missing, waiting up to the lock timeout), its state read with the
 * journal of a run killed before its commit replayed.
 */
static int group_open(struct op_run *r, const struct provider *prov,
		      const struct sprawl_options *so, const char *c, const char *w,
		      const char *operation, char *(*counts)(const struct apply_result *res),
		      struct sprawl_results *d, struct kiln_error *err)
{
	struct op_options o = {
	    .state = so->state, .workspace = w, .lock_timeout = so->lock_timeout};
	struct engine *e;

	memset(r, 0, sizeof(*r));
	r->report = d->on_error;
	r->report_arg = d->arg;
	r->commit_counts = counts;
	if (engine_open_scope(&e, prov, so->region, c, w, err) < 0)
		return -1;
	return operation_open_engine(r, &o, e, operation, err);
}

/*
 * Carry out plan (r owns it) with the operation's executor: every result
 * journaled as it lands, reported into d, then one commit (op) when the
 * workspace's record changed or the cloud did under an existing workspace.
 */
static int group_apply(struct op_run *r, json_t *plan, const char *op,
		       const struct sprawl_options *so, struct sprawl_results *d,
		       struct op_apply_outcome *out, struct kiln_error *err)
{
	struct op_apply_options ao = {
	    .parallelism = so->parallelism, .event = on_event, .event_arg = d};

	r->plan = plan;
	if (plan_view_build(&r->view, r->plan, err) < 0)
		return -1;
	d->cluster = r->e->scope.cluster;
	d->workspace = r->e->workspace;
	return operation_apply(r, op, &ao, out, err);
}

/* Delete one workspace's orphans under its lock, journaled; 0, or -1 with err. */
static int destroy_group(const struct provider *prov, const struct sprawl_options *so,
			 const json_t *group, struct sprawl_results *d, struct kiln_error *err)
{
	const char *c = jstr(json_array_get(group, 0), "cluster");
	const char *w = jstr(json_array_get(group, 0), "workspace");
	struct op_apply_outcome out = {0};
	struct op_run r;
	int ret = -1;

	if (group_open(&r, prov, so, c, w, "sprawl destroy", deleted_counts, d, err) == 0 &&
	    group_apply(&r, sprawl_destroy_plan(prov, group, state_resources(r.state)),
			"sprawl destroy", so, d, &out, err) == 0)
		ret = out.commit_failed || out.res.failed ? -1 : 0;
	operation_apply_outcome_release(&out);
	operation_close(&r);
	return ret;
}

/*
 * Run each group of orphans (sorted by cluster and workspace) through
 * one, telling on_error of a group that failed; after an interrupt
 * (signals.h) no further group starts.
 */
static int each_group(const json_t *orphans, struct sprawl_results *d,
		      int (*one)(const json_t *group, struct sprawl_results *d, void *arg,
				 struct kiln_error *err),
		      void *arg)
{
	size_t i = 0, n = json_array_size(orphans);
	int ret = 0;

	while (i < n && !signals_interrupted()) {
		json_t *group = next_group(orphans, &i);
		struct kiln_error err = {0};

		if (one(group, d, arg, &err) < 0) {
			if (err.msg[0] && d->on_error)
				d->on_error(d->arg, &err);
			ret = -1;
		}
		json_decref(group);
	}
	return ret;
}

struct group_args {
	const struct provider *prov;
	const struct sprawl_options *so;
	json_t *skipped, *commits;
};

static int destroy_one(const json_t *group, struct sprawl_results *d, void *arg,
		       struct kiln_error *err)
{
	const struct group_args *a = arg;

	return destroy_group(a->prov, a->so, group, d, err);
}

/* Delete the chosen orphans, one operation per cluster and workspace. */
int sprawl_destroy(const struct provider *prov, const struct sprawl_options *so,
		   const json_t *chosen, struct sprawl_results *d)
{
	struct group_args a = {prov, so, NULL, NULL};

	return each_group(chosen, d, destroy_one, &a);
}

/*
 * What --adopt records becomes the workspace's by its lineage too: each
 * orphan that carries another lineage (a deleted workspace's, or none) is
 * retagged with the state's before the executor reads it, and the plan
 * takes the id the claim answers (an aws group's id names its lineage).
 */
static int claim_adopted(struct op_run *r, const json_t *group, json_t *plan,
			 struct kiln_error *err)
{
	const struct provider *prov = r->e->prov;
	struct prov_scope scope = r->e->scope;
	json_t *rc, *o;
	size_t i, j;

	scope.lineage = state_lineage(r->state);
	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		json_t *kn = json_object_get(rc, "kiln"), *live = NULL;
		const char *id = jstr(kn, "id"), *lineage = NULL;
		int prc;

		json_array_foreach(group, j,
				   o) if (id && jstr(o, "id") && strcmp(jstr(o, "id"), id) == 0)
		    lineage = jstr(o, "lineage");
		if (!prov->claim || (lineage && strcmp(lineage, scope.lineage) == 0))
			continue;
		ENGINE_CALL(prc, err,
			    prov->claim(r->e->ctx, &scope, jstr(rc, "type"), id, &live, err));
		if (prc != PROV_OK)
			return -1;
		json_object_set(kn, "id", json_object_get(live, "id"));
		json_object_set(json_object_get(json_object_get(rc, "change"), "importing"), "id",
				json_object_get(live, "id"));
		json_decref(live);
	}
	return 0;
}

/* Each orphan's cluster and workspace into the entries skipped gained from before on. */
static void skipped_name(json_t *skipped, size_t before, const char *c, const char *w)
{
	size_t i;

	for (i = before; i < json_array_size(skipped); i++) {
		json_t *o = json_array_get(skipped, i);

		json_object_set_new(o, "cluster", json_string(c));
		json_object_set_new(o, "workspace", json_string(w));
	}
}

/*
 * The adoption plan of one group under its lock, the orphans claimed; NULL
 * with err when the workspace holds another cluster or a claim failed, or
 * with err empty when there is nothing to adopt.
 */
static json_t *adopt_plan(struct op_run *r, const json_t *group, json_t *skipped,
			  struct kiln_error *err)
{
	const char *c = r->e->scope.cluster, *w = r->e->workspace;
	size_t before = json_array_size(skipped);
	json_t *plan;

	if (state_cluster(r->state) && strcmp(state_cluster(r->state), c) != 0) {
		kiln_error_set(err, "workspace '%s' holds cluster '%s', not '%s'", w,
			       state_cluster(r->state), c);
		kiln_error_hint(err, "adopt them by hand, or delete them with --destroy");
		return NULL;
	}
	json_object_set_new(r->state, "cluster", json_string(c));
	plan = sprawl_adopt_plan(group, r->state, skipped);
	skipped_name(skipped, before, c, w);
	if (json_array_size(json_object_get(plan, "resource_changes")) == 0 ||
	    claim_adopted(r, group, plan, err) < 0) {
		json_decref(plan);
		return NULL;
	}
	return plan;
}

/*
 * Adopt one workspace's orphans: lock it (creating the branch when it is
 * missing), let the executor read and record each one as the plan's
 * adoption does, journaled, and commit once. Reports per resource into d.
 */
static int adopt_group(const struct provider *prov, const struct sprawl_options *so,
		       const json_t *group, struct sprawl_results *d, json_t *skipped,
		       json_t *commits, struct kiln_error *err)
{
	const char *c = jstr(json_array_get(group, 0), "cluster");
	const char *w = jstr(json_array_get(group, 0), "workspace");
	struct op_apply_outcome out = {0};
	struct op_run r;
	json_t *plan = NULL, *o;
	size_t i;
	int ret = -1;

	if (!store_workspace_name_ok(w)) {
		json_array_foreach(group, i, o) json_array_append_new(
		    skipped,
		    json_pack("{s:O, s:O, s:O, s:O, s:s}", "cluster", json_object_get(o, "cluster"),
			      "workspace", json_object_get(o, "workspace"), "address",
			      json_object_get(o, "address"), "id", json_object_get(o, "id"),
			      "reason", "its kiln:workspace tag is not a workspace name"));
		return 0;
	}
	if (group_open(&r, prov, so, c, w, "sprawl adopt", adopted_counts, d, err) < 0)
		goto out;
	plan = adopt_plan(&r, group, skipped, err);
	if (!plan) {
		ret = err->msg[0] ? -1 : 0;
		goto out;
	}
	ret = group_apply(&r, plan, "sprawl adopt", so, d, &out, err) == 0 && !out.commit_failed &&
		      !out.res.failed
		  ? 0
		  : -1;
	if (out.res.done == 0 && ret < 0 && !err->msg[0])
		kiln_error_set(err, "nothing of %s/%s could be read to adopt", c, w);
	if (!out.commit)
		goto out;
	json_array_append_new(commits,
			      json_pack("{s:s, s:s, s:s, s:I}", "cluster", c, "workspace", w,
					"commit", out.commit, "adopted", (json_int_t)out.res.done));
	if (d->on_commit)
		d->on_commit(d->arg, w, out.res.done, &r.ws->head);
out:
	if (ret < 0 && !err->msg[0])
		kiln_error_set(err, "adopting into workspace '%s' failed", w);
	operation_apply_outcome_release(&out);
	operation_close(&r);
	return ret;
}

static int adopt_one(const json_t *group, struct sprawl_results *d, void *arg,
		     struct kiln_error *err)
{
	const struct group_args *a = arg;

	return adopt_group(a->prov, a->so, group, d, a->skipped, a->commits, err);
}

/* Adopt the orphans, one commit per workspace. */
int sprawl_adopt(const struct provider *prov, const struct sprawl_options *so,
		 const json_t *orphans, struct sprawl_results *d, json_t *skipped, json_t *commits)
{
	struct group_args a = {prov, so, skipped, commits};

	return each_group(orphans, d, adopt_one, &a);
}
