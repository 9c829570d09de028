/*
 * sprawl.c - orphans, their cost, their destroy and adopt plans, and
 * carrying them out through the executor (see sprawl.h).
 */
#include "sprawl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "engine.h"
#include "operation.h"
#include "state.h"
#include "workspace.h"

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
	json_t *ids = json_object(), *doc, *r;
	const char *ws, *addr;

	json_object_foreach((json_t *)recorded, ws, doc)
	{
		json_object_foreach(state_resources(doc), addr, r)
		{
			const char *id = json_string_value(json_object_get(r, "id"));

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
	json_array_foreach((json_t *)live, i, l)
	{
		const char *id = json_string_value(json_object_get(l, "id"));
		const char *status = json_string_value(json_object_get(l, "status"));
		const char *c = tag(l, PROV_TAG_CLUSTER), *w = tag(l, PROV_TAG_WORKSPACE);
		const char *addr = prov_live_address(l);
		char *why;

		if (!id || !c || !w || json_object_get(ids, id))
			continue;
		if (status && strcmp(status, "deleting") == 0)
			continue;
		if (prov_live_lineage(l) && !json_object_get(known, prov_live_lineage(l))) {
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
			      status, "reason", why, "lineage", prov_live_lineage(l), "attrs",
			      json_object_get(l, "attrs") ? json_object_get(l, "attrs")
							  : json_null()));
		free(why);
	}
	json_decref(ids);
	/* Sorted: the same listing prints the same way. */
	prov_json_sort(out, orphan_cmp);
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

	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));

		if (addr) {
			n = json_object_get(count, addr);
			json_object_set_new(count, addr,
					    json_integer(n ? json_integer_value(n) + 1 : 1));
		}
	}
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *rid =
		    addr ? json_string_value(json_object_get(json_object_get(held, addr), "id"))
			 : NULL;
		char *why = NULL;

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

json_t *sprawl_destroy_plan(const struct provider *prov, const json_t *orphans)
{
	json_t *changes = json_array(), *seen = json_object(), *names = json_array(), *o;
	size_t i, j;

	/* Each change's address: the orphan's, unless two orphans share it. */
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		json_t *n = json_object_get(seen, addr ? addr : "");

		json_object_set_new(seen, addr ? addr : "",
				    json_integer(n ? json_integer_value(n) + 1 : 1));
	}
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *type = json_string_value(json_object_get(o, "type"));
		char *name;

		if (!addr)
			name = xasprintf("%s.%s", type, id);
		else if (json_integer_value(json_object_get(seen, addr)) > 1)
			name = xasprintf("%s (%s)", addr, id);
		else
			name = xstrdup(addr);
		json_array_append_new(names, json_string(name));
		free(name);
	}
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *type = json_string_value(json_object_get(o, "type"));
		size_t rank = type_rank(prov, type);
		json_t *deps = json_array(), *p;

		json_array_foreach((json_t *)orphans, j, p)
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

	sp.provider.name = (char *)prov->name;
	sp.provider.region = (char *)region;
	return prov->open(ctx, &sp, err) < 0 ? -1 : 0;
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
 * One executor run of plan over cluster c and workspace w: an engine with
 * no desired resources (sprawl creates nothing), 8 operations at once.
 */
static int sprawl_run(const struct provider *prov, struct prov_ctx *ctx, const char *c,
		      const char *w, json_t *plan, json_t *state, struct sprawl_results *d,
		      struct apply_result *res)
{
	struct engine e = {0};
	struct apply_options o = {0};
	struct plan_view view;
	struct kiln_error err = {0};
	int rc;

	if (plan_view_build(&view, plan, &err) < 0) {
		/* As the executor reports a plan it cannot run. */
		memset(res, 0, sizeof(*res));
		res->errors =
		    json_pack("[{s:s, s:s, s:s}]", "address", "", "op", "plan", "error", err.msg);
		res->warnings = json_array();
		res->failed = 1;
		return -1;
	}
	e.prov = prov;
	e.ctx = ctx;
	e.scope.cluster = c;
	e.scope.workspace = w;
	e.workspace = (char *)w;
	e.desired = json_object();
	o.engine = &e;
	o.plan = &view;
	o.state = state;
	o.parallelism = 8;
	o.event = on_event;
	o.event_arg = d;
	d->cluster = c;
	d->workspace = w;
	rc = apply_run(&o, res);
	json_decref(e.desired);
	plan_view_release(&view);
	return rc;
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

/* Delete the chosen orphans, one executor run per cluster and workspace. */
int sprawl_destroy(const struct provider *prov, struct prov_ctx *ctx, const json_t *chosen,
		   struct sprawl_results *d)
{
	size_t i = 0, n = json_array_size(chosen);
	int ret = 0;

	while (i < n) {
		json_t *first = json_array_get(chosen, i), *group = next_group(chosen, &i), *plan,
		       *st;
		const char *c = jstr(first, "cluster"), *w = jstr(first, "workspace");
		struct apply_result res;

		plan = sprawl_destroy_plan(prov, group);
		st = state_new(c, w, prov->name);
		if (sprawl_run(prov, ctx, c, w, plan, st, d, &res) != 0)
			ret = -1;
		apply_result_release(&res);
		json_decref(st);
		json_decref(plan);
		json_decref(group);
	}
	return ret;
}

/*
 * What --adopt records becomes the workspace's by its lineage too: each
 * orphan that carries another lineage (a deleted workspace's, or none) is
 * retagged with the state's before the executor reads it, and the plan
 * takes the id the claim answers (an aws group's id names its lineage).
 */
static int claim_adopted(struct store *s, const struct provider *prov, struct prov_ctx *ctx,
			 const char *c, const char *w, const json_t *state, const json_t *group,
			 json_t *plan, struct kiln_error *err)
{
	struct prov_scope scope = {c, w, NULL};
	json_t *rc, *o;
	size_t i, j;
	int ret = 0;

	scope.lineage = state_lineage(state);
	scope.owner = op_owner(s);
	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		json_t *kn = json_object_get(rc, "kiln"), *live = NULL;
		const char *id = jstr(kn, "id"), *lineage = NULL;
		int prc;

		json_array_foreach((json_t *)group, j,
				   o) if (id && jstr(o, "id") && strcmp(jstr(o, "id"), id) == 0)
		    lineage = jstr(o, "lineage");
		if (!prov->claim || (lineage && strcmp(lineage, scope.lineage) == 0))
			continue;
		ENGINE_CALL(prc, err, prov->claim(ctx, &scope, jstr(rc, "type"), id, &live, err));
		if (prc != PROV_OK) {
			ret = -1;
			break;
		}
		json_object_set(kn, "id", json_object_get(live, "id"));
		json_object_set(json_object_get(json_object_get(rc, "change"), "importing"), "id",
				json_object_get(live, "id"));
		json_decref(live);
	}
	free((char *)scope.owner);
	return ret;
}

/*
 * Adopt one workspace's orphans: lock it (creating the branch when it is
 * missing), let the executor read and record each one as the plan's
 * adoption does, and commit once. Reports per resource into d.
 */
static int adopt_group(struct store *s, const struct provider *prov, struct prov_ctx *ctx,
		       const json_t *group, struct sprawl_results *d, json_t *skipped,
		       json_t *commits, struct kiln_error *err)
{
	const char *c = jstr(json_array_get(group, 0), "cluster");
	const char *w = jstr(json_array_get(group, 0), "workspace");
	struct lock_options lo = {"sprawl adopt", 0};
	struct workspace *ws = NULL;
	json_t *state = NULL, *plan = NULL, *o;
	struct apply_result res = {0};
	char *summary = NULL;
	size_t i, before;
	int ret = -1;

	if (!store_workspace_name_ok(w)) {
		json_array_foreach((json_t *)group, i, o) json_array_append_new(
		    skipped,
		    json_pack("{s:O, s:O, s:O, s:O, s:s}", "cluster", json_object_get(o, "cluster"),
			      "workspace", json_object_get(o, "workspace"), "address",
			      json_object_get(o, "address"), "id", json_object_get(o, "id"),
			      "reason", "its kiln:workspace tag is not a workspace name"));
		return 0;
	}
	if (workspace_open(&ws, s, w, err) < 0 || workspace_lock(ws, &lo, err) < 0)
		goto out;
	state = ws->exists ? json_deep_copy(ws->state) : state_new(c, w, prov->name);
	if (state_cluster(state) && strcmp(state_cluster(state), c) != 0) {
		kiln_error_set(err, "workspace '%s' holds cluster '%s', not '%s'", w,
			       state_cluster(state), c);
		kiln_error_hint(err, "adopt them by hand, or delete them with --destroy");
		goto out;
	}
	if (!state_cluster(state))
		json_object_set_new(state, "cluster", json_string(c));
	before = json_array_size(skipped);
	plan = sprawl_adopt_plan(group, state, skipped);
	if (claim_adopted(s, prov, ctx, c, w, state, group, plan, err) < 0)
		goto out;
	for (i = before; i < json_array_size(skipped); i++) {
		o = json_array_get(skipped, i);
		json_object_set_new(o, "cluster", json_string(c));
		json_object_set_new(o, "workspace", json_string(w));
	}
	if (json_array_size(json_object_get(plan, "resource_changes")) == 0) {
		ret = 0;
		goto out;
	}
	ret = sprawl_run(prov, ctx, c, w, plan, state, d, &res) == 0 ? 0 : -1;
	if (res.done == 0) {
		if (ret < 0)
			kiln_error_set(err, "nothing of %s/%s could be read to adopt", c, w);
		goto out;
	}
	if (op_seal_secrets(state, err) < 0) {
		ret = -1;
		goto out;
	}
	summary = xasprintf("sprawl adopt: %zu adopted (%s/%s)", res.done, c, w);
	if (workspace_commit(ws, state, false, summary, NULL, 0, err) < 0) {
		ret = -1;
		goto out;
	}
	json_array_append_new(commits, json_pack("{s:s, s:s, s:s, s:I}", "cluster", c, "workspace",
						 w, "commit", git_oid_tostr_s(&ws->head), "adopted",
						 (json_int_t)res.done));
	if (d->on_commit)
		d->on_commit(d->arg, w, res.done, &ws->head);
out:
	if (ret < 0 && !err->msg[0])
		kiln_error_set(err, "adopting into workspace '%s' failed", w);
	apply_result_release(&res);
	json_decref(plan);
	json_decref(state);
	free(summary);
	workspace_close(ws, NULL);
	return ret;
}

/* Adopt the orphans, one commit per workspace. */
int sprawl_adopt(struct store *s, const struct provider *prov, struct prov_ctx *ctx,
		 const json_t *orphans, struct sprawl_results *d, json_t *skipped, json_t *commits)
{
	size_t i = 0, n = json_array_size(orphans);
	int ret = 0;

	while (i < n) {
		json_t *group = next_group(orphans, &i);
		struct kiln_error err = {0};

		if (adopt_group(s, prov, ctx, group, d, skipped, commits, &err) < 0) {
			if (d->on_error)
				d->on_error(d->arg, &err);
			ret = -1;
		}
		json_decref(group);
	}
	return ret;
}
