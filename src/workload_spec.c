/*
 * workload_spec.c - a spec's workload against its catalog; see
 * workload_spec.h. The arithmetic is workload.c's: this file only asks it
 * the spec's questions (the cluster to recommend, what a group of N nodes
 * of its type takes, how many meet the deadline) and says the answers.
 */
#include "workload_spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "plan.h"
#include "provider.h"
#include "timefmt.h"

#define GIB 1073741824.0

/* The spec's workload as workload_size() takes it, over every type and within the budget. */
static struct workload spec_work(const struct spec *spec)
{
	struct workload w = spec->workload.w;

	w.max_hourly_usd = spec->max_hourly_usd;
	return w;
}

/* The catalog type a group runs on, or NULL (not resolved, or no such type). */
static const struct catalog_type *group_type(const struct spec *spec, const struct catalog *cat,
					     const struct spec_group *g)
{
	const struct catalog_type *t = NULL, *next = NULL;
	struct kiln_error err = {{0}, {0}};

	if (g->instance_type)
		return catalog_find(cat, g->instance_type);
	if (g->gpu_model &&
	    catalog_resolve(cat, g->gpu_model, g->gpu_count, spec->network.fabric == FABRIC_EFA, &t,
			    &next, &err) == 0)
		return t;
	return NULL;
}

/* A GPU group the workload can run on: its type has GPUs. */
static const struct catalog_type *training_type(const struct spec *spec, const struct catalog *cat,
						const struct spec_group *g)
{
	const struct catalog_type *t = group_type(spec, cat, g);

	return t && t->gpu && t->gpus > 0 ? t : NULL;
}

/* Size w on nodes of type t alone (nodes 0: the fewest that meet the deadline). */
static int size_on(const struct workload *base, const struct catalog *cat,
		   const struct catalog_type *t, int nodes, struct workload_sizing *s,
		   struct kiln_error *err)
{
	struct workload w = *base;

	w.instance_type = t->name;
	w.nodes = nodes;
	w.max_hourly_usd = 0; /* the budget is the plan's cost to judge (KILN-COST-001) */
	return workload_size(&w, cat, s, err);
}

/* The value of the workload an error of the whole sizing is about. */
static const struct ynode *sizing_node(const struct spec *spec)
{
	const struct ynode *n = spec->workload.node;

	if (spec->workload.w.deadline_s > 0)
		return spec_value_node(n, "deadline");
	return n;
}

static void derive_type(struct spec_group *g, const struct workload *w,
			const struct workload_sizing *s)
{
	char *why = workload_why(w, s, s->best), *cost = cost_money(s->best->cost_usd);

	g->instance_type = xstrdup(s->best->type->name);
	g->machine_bad = false;
	if (!g->count_set) {
		g->count = s->best->nodes;
		g->count_derived = true;
	}
	g->derived = xasprintf("instance_type %s%s from the workload: %s (%d × %s, %.1f days, %s "
			       "a run)",
			       g->instance_type, g->count_derived ? " and count" : "", why,
			       s->best->nodes, g->instance_type, s->best->hours / 24.0, cost);
	free(why);
	free(cost);
}

static int derive_count(struct spec *spec, const struct catalog *cat, struct spec_group *g,
			const struct catalog_type *t, struct diags *d)
{
	struct workload w = spec_work(spec);
	struct workload_sizing s;
	struct kiln_error err = {{0}, {0}};
	char *deadline;

	if (size_on(&w, cat, t, 0, &s, &err) != 0) {
		diags_add(d, DIAG_ERROR, spec->file, g->key->line, g->key->col,
			  "compute.%s: no count of %s runs the workload: %s", g->name, t->name,
			  err.msg);
		workload_sizing_free(&s);
		return -1;
	}
	g->count = s.best->nodes;
	g->count_derived = true;
	deadline = w.deadline_s > 0 ? timefmt_duration_format(w.deadline_s) : NULL;
	g->derived = deadline
			 ? xasprintf("count from the workload: %d × %s, the fewest that train it "
				     "within the %s deadline (%.1f days)",
				     g->count, t->name, deadline, s.best->hours / 24.0)
			 : xasprintf("count from the workload: %d × %s, the fewest that hold the "
				     "model (%.1f days)",
				     g->count, t->name, s.best->hours / 24.0);
	free(deadline);
	workload_sizing_free(&s);
	return 0;
}

int workload_spec_derive(struct spec *spec, const struct catalog *cat, struct diags *d)
{
	struct workload w = spec_work(spec);
	struct workload_sizing s;
	struct kiln_error err = {{0}, {0}};
	int rc = 0;
	size_t i;

	if (!spec->workload.set || !cat || (spec->broken & SPEC_BROKEN_WORKLOAD))
		return 0;
	if (workload_size(&w, cat, &s, &err) != 0) {
		const struct ynode *at = sizing_node(spec);

		diags_add(d, DIAG_ERROR, spec->file, at->line, at->col, "workload: %s", err.msg);
		workload_sizing_free(&s);
		return -1;
	}
	for (i = 0; i < spec->ngroups; i++) {
		struct spec_group *g = &spec->groups[i];
		const struct catalog_type *t;

		if (g->type_derived) {
			derive_type(g, &w, &s);
			continue;
		}
		if (g->count_set || g->machine_bad || !(t = training_type(spec, cat, g)))
			continue;
		if (derive_count(spec, cat, g, t, d) != 0)
			rc = -1;
	}
	workload_sizing_free(&s);
	return rc;
}

/* --- the plan's kiln.workload ------------------------------------------------ */

/* The nodes of t that meet the deadline, or 0 when none does (or there is none). */
static int nodes_for_deadline(const struct workload *w, const struct catalog *cat,
			      const struct catalog_type *t)
{
	struct workload_sizing s;
	struct kiln_error err = {{0}, {0}};
	int n = 0;

	if (w->deadline_s > 0 && size_on(w, cat, t, 0, &s, &err) == 0)
		n = s.best->nodes;
	if (w->deadline_s > 0)
		workload_sizing_free(&s);
	return n;
}

/* What one run takes on a group's nodes. */
static json_t *group_run(const struct spec *spec, const struct catalog *cat,
			 const struct spec_group *g, const struct catalog_type *t)
{
	struct workload w = spec_work(spec);
	struct workload_sizing s;
	struct kiln_error err = {{0}, {0}};
	const struct workload_candidate *c;
	json_t *o;
	int need;

	size_on(&w, cat, t, g->count, &s, &err);
	c = s.ncands ? &s.cands[0] : NULL;
	if (!c || c->skip) {
		o = json_pack("{s:s, s:i, s:b, s:s}", "instance_type", t->name, "nodes", g->count,
			      "fits", false, "reason", c ? c->skip : err.msg);
	} else {
		o = workload_candidate_json(&w, &s, c);
		json_object_del(o, "why");
		json_object_set_new(o, "fits", json_true());
		json_object_set_new(o, "reason", json_null());
	}
	json_object_set_new(o, "group", json_string(g->name));
	json_object_set_new(o, "derived", g->derived ? json_string(g->derived) : json_null());
	need = c && !c->skip && !c->meets_deadline ? nodes_for_deadline(&w, cat, t) : 0;
	json_object_set_new(o, "nodes_for_deadline", need ? json_integer(need) : json_null());
	workload_sizing_free(&s);
	return o;
}

/* Whether a Lustre store writes one checkpoint within write_within, with the figures. */
static json_t *store_check(const struct spec_store *st, const struct workload *w,
			   const struct workload_sizing *s)
{
	int64_t within = w->write_within_s > 0 ? w->write_within_s : WORKLOAD_WRITE_WITHIN_S;
	double mbps = st->capacity_gb / 1024.0 * st->throughput_per_tib;
	double seconds = mbps > 0 ? s->checkpoint_bytes / 1e6 / mbps : INFINITY;
	double need = s->checkpoint_bytes / 1e6 / (double)within;

	return json_pack("{s:s, s:i, s:i, s:f, s:f, s:f, s:I, s:b}", "store", st->name,
			 "capacity_gib", st->capacity_gb, "throughput_per_tib",
			 st->throughput_per_tib, "write_mb_per_s", round(mbps * 10) / 10,
			 "needed_mb_per_s", round(need * 10) / 10, "write_seconds",
			 isfinite(seconds) ? round(seconds) : -1.0, "write_within_seconds",
			 (json_int_t)within, "fast_enough", mbps >= need * (1 - 1e-9));
}

json_t *workload_spec_json(const struct spec *spec, const struct catalog *cat)
{
	struct workload w = spec_work(spec);
	struct workload_sizing s;
	struct kiln_error err = {{0}, {0}};
	json_t *o, *groups, *stores, *run = NULL;
	json_int_t most = -1;
	size_t i;

	if (!spec->workload.set || !cat)
		return NULL;
	groups = json_array();
	stores = json_array();
	workload_size(&w, cat, &s, &err);
	o = workload_json(&w, cat, &s);
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		const struct catalog_type *t = training_type(spec, cat, g);
		json_t *r;

		if (!t || g->count < 1)
			continue;
		r = group_run(spec, cat, g, t);
		json_array_append_new(groups, r);
		/* The run is the group with the most GPUs: the one that trains. */
		if ((json_int_t)g->count * t->gpus > most) {
			most = (json_int_t)g->count * t->gpus;
			run = r;
		}
	}
	for (i = 0; i < spec->nstores; i++)
		if (spec->stores[i].tier == TIER_LUSTRE)
			json_array_append_new(stores, store_check(&spec->stores[i], &w, &s));
	json_object_set_new(o, "kind",
			    json_string(w.kind == WORKLOAD_PRETRAIN ? "pretrain" : "finetune"));
	json_object_set_new(o, "precision",
			    json_string(w.precision == WORKLOAD_FP8 ? "fp8" : "bf16"));
	json_object_set_new(o, "method", json_string(w.method == WORKLOAD_LORA ? "lora" : "full"));
	json_object_set_new(o, "groups", groups);
	json_object_set_new(o, "run", run ? json_incref(run) : json_null());
	json_object_set_new(o, "checkpoint_stores", stores);
	json_object_set_new(o, "checkpoint_every_seconds",
			    spec->workload.checkpoint_every > 0
				? json_integer(spec->workload.checkpoint_every)
				: json_null());
	workload_sizing_free(&s);
	return o;
}

void workload_plan(const struct spec *spec, const struct catalog *cat, json_t *plan)
{
	json_t *o;

	json_t *cost = plan_kiln_edit(plan, "cost"), *run;

	if (plan_is_destroy(plan) || !(o = workload_spec_json(spec, cat)))
		return;
	run = json_object_get(o, "run");
	/* kiln cost shows one run's cost beside the hourly one. */
	if (json_is_object(cost) && json_is_object(run) &&
	    json_is_true(json_object_get(run, "fits")))
		json_object_set_new(cost, "run",
				    json_pack("{s:O, s:O, s:O, s:O, s:O, s:O}", "group",
					      json_object_get(run, "group"), "instance_type",
					      json_object_get(run, "instance_type"), "nodes",
					      json_object_get(run, "nodes"), "train_days",
					      json_object_get(run, "train_days"), "cost_usd",
					      json_object_get(run, "cost_usd"),
					      "usd_per_million_tokens",
					      json_object_get(run, "usd_per_million_tokens")));
	plan_kiln_set(plan, "workload", o);
}

const struct catalog *workload_catalog(const char *provider, struct kiln_error *err)
{
	const struct provider *p = provider ? provider_find(provider) : provider_first(false);
	char *names;

	if (p && p->catalog)
		return p->catalog(NULL);
	if (p) {
		kiln_error_set(err, "--provider \"%s\" has no catalog to size on", provider);
		return NULL;
	}
	names = provider_names_join("", ", ", " or ");
	kiln_error_set(err, "--provider \"%s\" is not a provider: use %s", provider, names);
	free(names);
	return NULL;
}
