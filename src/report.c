/*
 * report.c - the figures of `kiln report`; see report.h. Reads the state
 * repository's history (every workspace branch and archive ref), never
 * the cloud, and never prints: report_render.c renders what this builds.
 */
#include "report.h"

#include <git2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "runcost.h"
#include "runrec.h"
#include "workload_spec.h"
#include "state.h"
#include "timefmt.h"
#include "util.h"

#define ARCHIVE_PREFIX "refs/kiln/archive/"

int report_by_check(const char *by, struct kiln_error *err)
{
	if (strcmp(by, "workspace") == 0 || strcmp(by, "cluster") == 0 || strcmp(by, "run") == 0 ||
	    (strncmp(by, "tag:", 4) == 0 && by[4]))
		return 0;
	kiln_error_set(err, "unknown --by key '%s'", by);
	kiln_error_hint(err, "use --by workspace, --by cluster, --by run or --by tag:KEY (a spec "
			     "tag)");
	return -1;
}

int report_since_parse(const char *s, int64_t *out, struct kiln_error *err)
{
	char *t = strlen(s) == 10 ? xasprintf("%sT00:00:00Z", s) : NULL;
	int rc = timefmt_time_parse_rfc3339(t ? t : s, out);

	free(t);
	if (rc == 0)
		return 0;
	kiln_error_set(err, "--since '%s' is not a date", s);
	kiln_error_hint(err, "write it as 2027-01-31 or 2027-01-31T12:00:00Z");
	return -1;
}

static double r4(double v)
{
	return round(v * 10000.0) / 10000.0;
}

/* One commit of a workspace's history, oldest first. */
struct point {
	int64_t time;
	size_t resources;
	char *cluster;
	struct ledger_entry le;
	bool burn_known; /* its own burn, or one a ttl extend carried over */
	double burn;
	long gpus;
};

/* What a lifetime adds up to while its stretches are walked. */
struct sums {
	double hours, gpu_hours, cost, upfront;
	bool unknown;
	double util_gpu_hours, useful_gpu_hours, util_cost;
	double compute, storage; /* of cost: node groups, storage (the rest: other) */
	bool split_unknown;	 /* a stretch whose commit recorded no split */
	double retained, orphaned; /* stores released and kept, billing to now */
};

static void points_release(struct point *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(p[i].cluster);
		ledger_entry_release(&p[i].le);
	}
	free(p);
}

/*
 * A Kiln-Time before its parent's would make the stretch after it span
 * back to it (a million hours): the time is malformed, the commit placed at
 * its parent's time, and its figures not counted.
 */
static void time_after_parent(struct point *p, const struct point *parent)
{
	char t[21], tp[21];

	if (!parent || p->time >= parent->time)
		return;
	if (!p->le.bad)
		p->le.bad = xasprintf("Kiln-Time \"%s\" is before its parent's (%s)",
				      timefmt_time_format_rfc3339(p->time, t),
				      timefmt_time_format_rfc3339(parent->time, tp));
	p->time = parent->time;
	ledger_distrust(&p->le);
}

/*
 * The history behind ref, oldest first, skipping commits already seen
 * under another ref (seen: {oid: true}); each malformed ledger commit
 * named in bad. *out NULL-terminated by n.
 */
static int history(struct store *s, const char *ref, json_t *seen, json_t *bad,
		   struct point **out, size_t *n, struct kiln_error *err)
{
	git_repository *repo = store_repo(s);
	git_revwalk *walk = NULL;
	git_oid head, oid;
	struct point *v = NULL;
	size_t cap = 0;
	int ret = -1;

	*out = NULL;
	*n = 0;
	if (store_ref_read(s, ref, &head, err) != 0)
		return -1;
	if (git_revwalk_new(&walk, repo) != 0 || git_revwalk_push(walk, &head) != 0 ||
	    git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE) != 0) {
		kiln_error_set(err, "cannot walk the history of %s: %s", ref, store_git_error());
		goto out;
	}
	while (git_revwalk_next(&oid, walk) == 0) {
		char hex[41], *text = NULL;
		git_commit *c = NULL;
		json_t *doc = NULL;
		struct point *p;
		size_t len;

		git_oid_tostr(hex, sizeof(hex), &oid);
		if (json_object_get(seen, hex))
			continue;
		json_object_set_new(seen, hex, json_true());
		if (git_commit_lookup(&c, repo, &oid) != 0) {
			kiln_error_set(err, "cannot read commit %.12s of %s: %s", hex, ref,
				       store_git_error());
			goto out;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			v = xrealloc(v, cap * sizeof(*v));
		}
		p = &v[(*n)++];
		memset(p, 0, sizeof(*p));
		ledger_parse(git_commit_message(c), &p->le);
		p->time = p->le.has_time ? p->le.time : (int64_t)git_commit_time(c);
		git_commit_free(c);
		time_after_parent(p, *n > 1 ? &v[*n - 2] : NULL);
		if (p->le.bad)
			json_array_append_new(bad,
					      json_sprintf("ledger commit %.7s: %s", hex, p->le.bad));
		if (store_read_file(s, &oid, STORE_STATE_FILE, &text, &len, err) < 0 ||
		    state_parse(&doc, text, len, hex, err) < 0) {
			free(text);
			goto out;
		}
		p->resources = state_resource_count(doc);
		p->cluster = state_cluster(doc) ? xstrdup(state_cluster(doc)) : NULL;
		json_decref(doc);
		free(text);
	}
	ret = 0;
out:
	git_revwalk_free(walk);
	if (ret < 0) {
		points_release(v, *n);
		*n = 0;
	} else {
		*out = v;
	}
	return ret;
}

/* Each point's burn: its own, carried over a ttl extend (which changes nothing that burns). */
static void points_burn(struct point *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i].le.has_burn) {
			p[i].burn_known = true;
			p[i].burn = p[i].le.burn;
			p[i].gpus = p[i].le.gpus;
		} else if (i > 0 && p[i - 1].burn_known && p[i].le.operation &&
			   strcmp(p[i].le.operation, "ttl extend") == 0) {
			p[i].burn_known = true;
			p[i].burn = p[i - 1].burn;
			p[i].gpus = p[i - 1].gpus;
			p[i].le.has_split = p[i - 1].le.has_split;
			p[i].le.compute = p[i - 1].le.compute;
			p[i].le.storage = p[i - 1].le.storage;
			p[i].le.has_budget = p[i - 1].le.has_budget;
			p[i].le.budget = p[i - 1].le.budget;
		}
	}
}

static json_t *num_or_null(bool known, double v)
{
	return known ? json_real(r4(v)) : json_null();
}

/*
 * One stretch as the HTML page draws it: its burn and what it is made of,
 * the budget then in force, its GPUs and the utilization recorded (null:
 * none, as for the stretch a running cluster is in now).
 */
static json_t *stretch_json(const struct point *from, int64_t a, int64_t b,
			    const struct ledger_entry *end)
{
	char ta[21], tb[21];

	return json_pack("{s:s, s:s, s:f, s:o, s:o, s:o, s:I, s:o}", "start",
			 timefmt_time_format_rfc3339(a, ta), "end",
			 timefmt_time_format_rfc3339(b, tb), "usd_per_hour", r4(from->burn),
			 "compute_usd_per_hour", num_or_null(from->le.has_split, from->le.compute),
			 "storage_usd_per_hour", num_or_null(from->le.has_split, from->le.storage),
			 "budget_usd_per_hour", num_or_null(from->le.has_budget, from->le.budget),
			 "gpus", (json_int_t)from->gpus, "gpu_util",
			 end && end->has_util ? json_real(end->util) : json_null());
}

/*
 * The stretch [a, b) after point from, clipped to since, added to sums;
 * util: the utilization recorded at the point that ends it (NULL: none).
 */
/* The stretches of one lifetime at a known burn, for the runs' shares (runcost.h). */
struct run_stretches {
	struct runcost_stretch *v;
	size_t n, cap;
};

static void stretch(const struct report_options *o, const struct point *from, int64_t a, int64_t b,
		    const struct ledger_entry *end, struct sums *sm, json_t *series, json_t *utils,
		    json_t *stretches, struct run_stretches *st)
{
	char ta[21], tb[21];
	double h, cost;

	if (o->has_since && a < o->since)
		a = o->since;
	if (from->burn_known && b > a)
		*ARRAY_PUSH(st->v, st->n, st->cap) =
		    (struct runcost_stretch){.a = a, .b = b, .burn = from->burn, .gpus = from->gpus};
	/* Unrecorded burn makes the whole unknown, however short (commits in one second). */
	if (!from->burn_known && b >= a)
		sm->unknown = true;
	if (b <= a)
		return;
	h = (double)(b - a) / 3600.0;
	sm->hours += h;
	if (!from->burn_known)
		return;
	cost = from->burn * h;
	sm->gpu_hours += (double)from->gpus * h;
	sm->cost += cost;
	if (from->le.has_split) {
		sm->compute += from->le.compute * h;
		sm->storage += from->le.storage * h;
	} else {
		sm->split_unknown = true;
	}
	json_array_append_new(stretches, stretch_json(from, a, b, end));
	json_array_append_new(series, json_pack("[s, f]", timefmt_time_format_rfc3339(b, tb),
						r4(sm->cost + sm->upfront)));
	if (end && end->has_util) {
		sm->util_gpu_hours += (double)from->gpus * h;
		sm->useful_gpu_hours += (double)from->gpus * h * end->util / 100.0;
		sm->util_cost += cost;
		json_array_append_new(utils,
				      json_pack("[s, s, f]", timefmt_time_format_rfc3339(a, ta),
						timefmt_time_format_rfc3339(b, tb), end->util));
	}
}

static void set_figures(json_t *o, const struct sums *sm)
{
	bool split = !sm->unknown && !sm->split_unknown;
	double idle = sm->util_gpu_hours - sm->useful_gpu_hours;

	json_object_set_new(o, "hours", json_real(r4(sm->hours)));
	json_object_set_new(o, "gpu_hours", num_or_null(!sm->unknown, sm->gpu_hours));
	json_object_set_new(o, "cost", num_or_null(!sm->unknown, sm->cost + sm->upfront));
	json_object_set_new(o, "upfront", json_real(r4(sm->upfront)));
	json_object_set_new(o, "useful_gpu_hours",
			    num_or_null(sm->util_gpu_hours > 0, sm->useful_gpu_hours));
	json_object_set_new(
	    o, "mean_gpu_util",
	    num_or_null(sm->util_gpu_hours > 0, 100.0 * sm->useful_gpu_hours / sm->util_gpu_hours));
	json_object_set_new(
	    o, "cost_per_useful_gpu_hour",
	    num_or_null(sm->useful_gpu_hours > 0,
			sm->useful_gpu_hours > 0 ? sm->util_cost / sm->useful_gpu_hours : 0));
	/* What the FinOps figures add: the split of the cost, idle GPUs, kept storage. */
	json_object_set_new(o, "compute_cost", num_or_null(split, sm->compute));
	json_object_set_new(o, "storage_cost", num_or_null(split, sm->storage));
	json_object_set_new(o, "other_cost", num_or_null(split, sm->cost - sm->compute - sm->storage));
	json_object_set_new(o, "idle_gpu_hours", num_or_null(sm->util_gpu_hours > 0, idle));
	json_object_set_new(o, "idle_cost",
			    num_or_null(sm->util_gpu_hours > 0,
					sm->util_gpu_hours > 0
					    ? sm->util_cost * idle / sm->util_gpu_hours
					    : 0));
	json_object_set_new(o, "retained_cost", json_real(r4(sm->retained)));
	json_object_set_new(o, "orphaned_cost", json_real(r4(sm->orphaned)));
}

/* The group key of a lifetime: its workspace, cluster or tag value ("(none)" when untagged). */
static const char *group_key(const char *by, const char *ws, const char *cluster,
			     const json_t *tags)
{
	const char *v;

	if (strcmp(by, "cluster") == 0)
		return cluster ? cluster : "(none)";
	if (strcmp(by, "run") == 0)
		return ws; /* the lifetimes by workspace; the runs are listed beside them */
	if (strncmp(by, "tag:", 4) == 0)
		return (v = json_string_value(json_object_get(tags, by + 4))) ? v : "(untagged)";
	return ws;
}

/*
 * The stores p released and kept (Kiln-Retained) bill on from its time,
 * clipped to since, to now: kiln no longer sees them, so this is what they
 * cost if nobody deleted them. An archived workspace's are orphaned: no
 * workspace is left to own them.
 */
static void retained_add(const struct report_options *o, const struct point *p, bool archived,
			 struct sums *sm, double *rate)
{
	int64_t a = o->has_since && p->time < o->since ? o->since : p->time;
	double cost;

	if (p->le.retained <= 0)
		return;
	*rate += p->le.retained;
	cost = o->now > a ? p->le.retained * (double)(o->now - a) / 3600.0 : 0;
	if (archived)
		sm->orphaned += cost;
	else
		sm->retained += cost;
}

/* kiln report --by run: the runs over every lifetime, what no run used, the whole. */
struct run_sums {
	struct runrec_list l; /* the workspace's runs */
	json_t *runs;	      /* the report's run objects */
	double idle, total;   /* USD, to the cent */
	bool unknown;	      /* a lifetime's cost is unknown: so are idle and total */
};

/* Measured MFU: 6 x active params x tokens over the run's GPU-seconds at peak; -1: no data. */
static double run_mfu(const struct runrec *r, double gpu_hours)
{
	struct kiln_error ignored = {0};
	const struct catalog *cat = r->provider ? workload_catalog(r->provider, &ignored) : NULL;
	const struct catalog_gpu *g = cat && r->gpu_model ? catalog_gpu(cat, r->gpu_model) : NULL;
	const json_t *w = r->lineage.workload;
	const char *prec = json_string_value(json_object_get(w, "precision"));
	double peak = !g ? 0 : prec && strcmp(prec, "fp8") == 0 ? g->fp8_tflops : g->bf16_tflops;
	double params = json_number_value(json_object_get(w, "active_params"));

	if (peak <= 0 || params <= 0 || r->tokens < 0 || gpu_hours <= 0)
		return -1;
	return 6.0 * params * r->tokens / (gpu_hours * 3600.0 * peak * 1e12);
}

static void lifetime_runs(const struct report_options *o, const struct run_stretches *st,
			  const struct sums *sm, const char *ws, struct run_sums *rs)
{
	struct runcost_share *sh = xcalloc(rs->l.n + 1, sizeof(*sh));
	double total = runcost_cents(sm->cost + sm->upfront), used = 0;

	(void)ws;
	runcost_split(st->v, st->n, sm->upfront, sm->hours, rs->l.runs, rs->l.n, o->now, sh);
	for (size_t i = 0; i < rs->l.n; i++) {
		const struct runrec *r = &rs->l.runs[i];
		json_t *j;
		double cost = runcost_cents(sh[i].cost), mfu;

		if (!sh[i].counted && !(r->edited && r->started))
			continue;
		j = runrec_json(r, false);
		mfu = run_mfu(r, sh[i].gpu_hours);
		json_object_set_new(j, "cost_usd",
				    sh[i].counted && !sm->unknown ? json_real(cost) : json_null());
		json_object_set_new(j, "gpu_hours",
				    sh[i].counted ? json_real(r4(sh[i].gpu_hours)) : json_null());
		json_object_set_new(j, "usd_per_million_tokens",
				    sh[i].counted && !sm->unknown && r->tokens > 0
					? json_real(r4(cost / r->tokens * 1e6))
					: json_null());
		json_object_set_new(j, "mfu", mfu >= 0 ? json_real(r4(mfu)) : json_null());
		json_array_append_new(rs->runs, j);
		if (sh[i].counted)
			used += cost;
	}
	if (sm->unknown) {
		rs->unknown = true;
	} else {
		rs->total += total;
		rs->idle += runcost_cents(total - used);
	}
	free(sh);
}

/* The lifetimes in one workspace's history, appended to out (their runs' costs to rs). */
static void lifetimes(const struct report_options *o, const char *ws, bool archived,
		      struct point *p, size_t n, json_t *out, struct run_sums *rs)
{
	size_t i = 0, j;

	while (i < n) {
		struct sums sm = {0};
		struct run_stretches st = {0};
		json_t *series, *utils, *stretches, *lt;
		double retained_rate = 0;
		const json_t *tags = NULL;
		bool ended = false;
		int64_t end;
		char t0[21], t1[21];
		size_t start;

		while (i < n && p[i].resources == 0)
			i++;
		if (i == n)
			break;
		start = i;
		series = json_array();
		utils = json_array();
		stretches = json_array();
		for (j = start; j < n; j++) {
			if (p[j].le.has_burn && json_object_size(p[j].le.tags))
				tags = p[j].le.tags;
			/* A malformed commit's figures are not counted: the whole is unknown. */
			if (p[j].le.bad)
				sm.unknown = true;
			if (!o->has_since || p[j].time >= o->since)
				sm.upfront += p[j].le.upfront;
			retained_add(o, &p[j], archived, &sm, &retained_rate);
			if (j == start && p[j].burn_known)
				json_array_append_new(
				    series,
				    json_pack("[s, f]",
					      timefmt_time_format_rfc3339(
						  o->has_since && p[j].time < o->since ? o->since
										       : p[j].time,
						  t0),
					      r4(sm.upfront)));
			if (j > start)
				stretch(o, &p[j - 1], p[j - 1].time, p[j].time, &p[j].le, &sm,
					series, utils, stretches, &st);
			if (p[j].resources == 0) {
				ended = true;
				break;
			}
		}
		if (!ended)
			stretch(o, &p[j - 1], p[j - 1].time, o->now, NULL, &sm, series, utils,
				stretches, &st);
		end = ended ? p[j].time : o->now;
		i = ended ? j + 1 : n;
		if (o->has_since && end <= o->since && ended) {
			json_decref(series);
			json_decref(utils);
			json_decref(stretches);
			free(st.v);
			continue;
		}
		if (rs)
			lifetime_runs(o, &st, &sm, ws, rs);
		free(st.v);
		lt = json_pack("{s:s, s:b, s:s?, s:s, s:o, s:s?, s:o, s:o}", "workspace", ws,
			       "archived", archived, "cluster", p[start].cluster, "start",
			       timefmt_time_format_rfc3339(p[start].time, t0), "end",
			       ended ? json_string(timefmt_time_format_rfc3339(end, t1))
				     : json_null(),
			       "reap_reason", ended ? p[j].le.reap_reason : NULL, "series", series,
			       "utilization", utils);
		json_object_set_new(lt, "group",
				    json_string(group_key(o->by, ws, p[start].cluster, tags)));
		json_object_set_new(lt, "tags", tags ? json_deep_copy(tags) : json_object());
		json_object_set_new(lt, "stretches", stretches);
		json_object_set_new(lt, "retained_usd_per_hour", json_real(r4(retained_rate)));
		json_object_set_new(lt, "cost_known", json_boolean(!sm.unknown));
		set_figures(lt, &sm);
		/* The raw sums, for the totals; dropped before the document is returned. */
		json_object_set_new(lt, "_sums",
				    json_pack("{s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:f, s:f, s:f, s:b, "
					      "s:f, s:f}",
					      "hours", sm.hours, "gpu_hours", sm.gpu_hours, "cost",
					      sm.cost, "upfront", sm.upfront, "unknown", sm.unknown,
					      "util_gpu_hours", sm.util_gpu_hours, "useful",
					      sm.useful_gpu_hours, "util_cost", sm.util_cost, "compute",
					      sm.compute, "storage", sm.storage, "split_unknown",
					      sm.split_unknown, "retained", sm.retained, "orphaned",
					      sm.orphaned));
		json_array_append_new(out, lt);
	}
}

static void sums_add(struct sums *to, const json_t *raw)
{
	to->hours += json_number_value(json_object_get(raw, "hours"));
	to->gpu_hours += json_number_value(json_object_get(raw, "gpu_hours"));
	to->cost += json_number_value(json_object_get(raw, "cost"));
	to->upfront += json_number_value(json_object_get(raw, "upfront"));
	to->unknown |= json_is_true(json_object_get(raw, "unknown"));
	to->util_gpu_hours += json_number_value(json_object_get(raw, "util_gpu_hours"));
	to->useful_gpu_hours += json_number_value(json_object_get(raw, "useful"));
	to->util_cost += json_number_value(json_object_get(raw, "util_cost"));
	to->compute += json_number_value(json_object_get(raw, "compute"));
	to->storage += json_number_value(json_object_get(raw, "storage"));
	to->split_unknown |= json_is_true(json_object_get(raw, "split_unknown"));
	to->retained += json_number_value(json_object_get(raw, "retained"));
	to->orphaned += json_number_value(json_object_get(raw, "orphaned"));
}

static int by_group_then_start(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(json_string_value(json_object_get(x, "group")),
		       json_string_value(json_object_get(y, "group")));

	if (c == 0)
		c = strcmp(json_string_value(json_object_get(x, "start")),
			   json_string_value(json_object_get(y, "start")));
	if (c == 0)
		c = strcmp(json_string_value(json_object_get(x, "workspace")),
			   json_string_value(json_object_get(y, "workspace")));
	return c;
}

/* Sort the lifetimes, and add up each group and the whole. */
static json_t *summarise(const struct report_options *o, json_t *all, json_t *bad)
{
	size_t n = json_array_size(all), i;
	json_t **v = xcalloc(n ? n : 1, sizeof(*v)), *sorted = json_array(), *groups = json_array();
	json_t *doc, *g = NULL, *tot;
	struct sums total = {0}, gs = {0};
	char now[21], since[21];

	for (i = 0; i < n; i++)
		v[i] = json_array_get(all, i);
	qsort(v, n, sizeof(*v), by_group_then_start);
	for (i = 0; i < n; i++) {
		const char *key = json_string_value(json_object_get(v[i], "group"));
		json_t *raw = json_object_get(v[i], "_sums");

		if (!g || strcmp(json_string_value(json_object_get(g, "key")), key) != 0) {
			if (g)
				set_figures(g, &gs);
			memset(&gs, 0, sizeof(gs));
			g = json_pack("{s:s, s:i}", "key", key, "lifetimes", 0);
			json_array_append_new(groups, g);
		}
		json_object_set_new(
		    g, "lifetimes",
		    json_integer(json_integer_value(json_object_get(g, "lifetimes")) + 1));
		sums_add(&gs, raw);
		sums_add(&total, raw);
		json_array_append(sorted, v[i]);
	}
	if (g)
		set_figures(g, &gs);
	json_array_foreach(sorted, i, g) json_object_del(g, "_sums");
	free(v);
	tot = json_pack("{s:I}", "lifetimes", (json_int_t)n);
	set_figures(tot, &total);
	doc = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "currency", "USD", "now",
			timefmt_time_format_rfc3339(o->now, now), "by", o->by, "lifetimes", sorted,
			"groups", groups, "total", tot);
	json_object_set(doc, "ledger_errors", bad);
	json_object_set_new(doc, "since",
			    o->has_since ? json_string(timefmt_time_format_rfc3339(o->since, since))
					 : json_null());
	return doc;
}

int report_workspace(struct store *s, const char *ws, int64_t now, json_t **out,
		     struct kiln_error *err)
{
	struct report_options o = {.now = now, .by = "workspace"};
	json_t *seen = json_object(), *all = json_array(), *bad = json_array(), *last;
	char *ref = xasprintf("refs/heads/%s", ws);
	struct point *p = NULL;
	size_t np = 0;
	git_oid head;
	int ret = -1, rc;

	*out = NULL;
	if ((rc = store_ref_read(s, ref, &head, err)) != 0) {
		ret = rc > 0 ? 0 : -1;
		goto out;
	}
	if (history(s, ref, seen, bad, &p, &np, err) < 0)
		goto out;
	points_burn(p, np);
	lifetimes(&o, ws, false, p, np, all, NULL);
	last = json_array_get(all, json_array_size(all) - 1);
	if (last && json_is_null(json_object_get(last, "end"))) {
		json_object_del(last, "_sums");
		/* What burns now, for the quotas (quota.c): null when not recorded. */
		json_object_set_new(last, "burn", num_or_null(p[np - 1].burn_known, p[np - 1].burn));
		json_object_set_new(last, "gpus", p[np - 1].burn_known
						      ? json_integer(p[np - 1].gpus)
						      : json_null());
		*out = json_incref(last);
	}
	ret = 0;
out:
	points_release(p, np);
	free(ref);
	json_decref(all);
	json_decref(bad);
	json_decref(seen);
	return ret;
}

int report_build(struct store *s, const struct report_options *o, json_t **out,
		 struct kiln_error *err)
{
	static const char *const prefixes[] = {"refs/heads/", ARCHIVE_PREFIX};
	json_t *seen = json_object(), *all = json_array(), *bad = json_array();
	bool by_run = strcmp(o->by, "run") == 0;
	struct run_sums rs = {.runs = json_array()};
	size_t k, i;
	int ret = -1;

	*out = NULL;
	if (store_sync(s, err) < 0)
		goto out;
	for (k = 0; k < ARRAY_SIZE(prefixes); k++) {
		char **names;
		size_t n;

		if (store_ref_list(s, prefixes[k], &names, &n, err) < 0)
			goto out;
		for (i = 0; i < n; i++) {
			char *ref = xasprintf("%s%s", prefixes[k], names[i]);
			char *ws = xstrdup(names[i]), *slash;
			struct point *p;
			size_t np;
			int rc;

			/* An archive ref is refs/kiln/archive/WORKSPACE/TIME. */
			if (k == 1 && (slash = strrchr(ws, '/')))
				*slash = '\0';
			rc = history(s, ref, seen, bad, &p, &np, err);
			free(ref);
			if (rc == 0 && by_run)
				rc = runrec_load(s, ws, &rs.l, err);
			if (rc == 0) {
				for (size_t r = 0; r < rs.l.n; r++)
					runrec_settle(&rs.l.runs[r], o->now);
				points_burn(p, np);
				lifetimes(o, ws, k == 1, p, np, all, by_run ? &rs : NULL);
				points_release(p, np);
			}
			runrec_list_release(&rs.l);
			free(ws);
			if (rc < 0) {
				store_names_free(names, n);
				goto out;
			}
		}
		store_names_free(names, n);
	}
	*out = summarise(o, all, bad);
	if (by_run) {
		json_object_set(*out, "runs", rs.runs);
		json_object_set_new(*out, "idle_usd",
				    rs.unknown ? json_null() : json_real(runcost_cents(rs.idle)));
		json_object_set_new(*out, "total_usd",
				    rs.unknown ? json_null() : json_real(runcost_cents(rs.total)));
	}
	ret = 0;
out:
	json_decref(rs.runs);
	json_decref(all);
	json_decref(bad);
	json_decref(seen);
	return ret;
}
