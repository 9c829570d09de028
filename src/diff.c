/*
 * diff.c - see diff.h. Two passes: classify every address on its own, then
 * widen what depends on a replacement and narrow to --target, then write the
 * plan document.
 */
#include "diff.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypt.h"
#include "graph.h"
#include "graph_plan.h"
#include "jsonc.h"
#include "plan.h"
#include "state.h"

enum act {
	ACT_NOOP,
	ACT_CREATE,
	ACT_UPDATE,
	ACT_REPLACE,
	ACT_DELETE,
};

enum drift {
	DRIFT_NONE,
	DRIFT_CHANGED,
	DRIFT_DELETED,
};

struct entry {
	const char *addr;
	const struct prov_type *t;
	json_t *d;	 /* desired, borrowed */
	json_t *r;	 /* recorded, borrowed */
	json_t *live;	 /* the live object this address is, borrowed (NULL: none) */
	json_t *lives;	 /* every live object with this address, borrowed */
	json_t *changed; /* names of inputs that differ live -> desired */
	enum act act;
	bool importing;
	bool retain;
	bool in_scope;
	const char *why_code; /* action_reason */
	char *reason;
	enum drift drift;
	json_t *drift_changed;
};

struct differ {
	const struct diff_input *in;
	struct engine *e;
	struct entry *v;
	size_t n;
	/* Node i is v[i]: its edges are deps_of(), what it uses now. */
	struct graph *uses;
	/* The same and what it used as recorded: what deleting a node takes along. */
	struct graph *used;
	json_t *warnings;
	json_t *notes;
};

bool diff_retained(const json_t *attrs)
{
	const char *s = json_string_value(json_object_get(attrs, "deletion"));

	return s && strcmp(s, "retain") == 0;
}

json_t *diff_changed_inputs(const struct prov_type *t, const json_t *before, const json_t *after)
{
	json_t *out = json_array(), *a, *b;
	size_t i;

	for (i = 0; i < t->nattrs; i++) {
		b = json_object_get(before, t->attrs[i].name);
		a = json_object_get(after, t->attrs[i].name);
		if (!json_equal(a ? a : json_null(), b ? b : json_null()))
			json_array_append_new(out, json_string(t->attrs[i].name));
	}
	return out;
}

/* The names a resource lists as secret (computed ones such as generated tokens). */
static __thread const json_t *listed_sensitive;

static bool attr_sensitive(const struct prov_type *t, const char *name, const json_t *v)
{
	const struct prov_attr *a = provider_type_attr(t, name);
	size_t i;
	json_t *n;

	if ((a && a->sensitive) || crypt_is_sealed(v))
		return true;
	json_array_foreach(listed_sensitive, i,
			   n) if (strcmp(json_string_value(n), name) == 0) return true;
	return false;
}

/* Whether any attribute of attrs is sensitive and set: checks the few names that can be. */
static bool holds_secret(const struct prov_type *t, const json_t *attrs)
{
	const char *k;
	json_t *v, *n;
	size_t i;

	for (i = 0; i < t->nattrs; i++) {
		v = t->attrs[i].sensitive ? json_object_get(attrs, t->attrs[i].name) : NULL;
		if (v && !json_is_null(v))
			return true;
	}
	json_array_foreach(listed_sensitive, i, n)
	{
		v = json_object_get(attrs, json_string_value(n));
		if (v && !json_is_null(v))
			return true;
	}
	json_object_foreach_const(attrs, k, v)
	{
		if (json_is_object(v) && crypt_is_sealed(v))
			return true;
	}
	return false;
}

/* A copy with sensitive values as null, and the *_sensitive map (or false). */
static json_t *masked(const struct prov_type *t, const json_t *attrs, json_t **sens)
{
	json_t *out, *v;
	const char *k;

	*sens = json_false();
	if (!attrs)
		return json_null();
	/* Most resources hold no secret: share their attributes instead of copying them. */
	if (!holds_secret(t, attrs))
		return jsonc_share(attrs);
	out = json_object();
	json_object_foreach_const(attrs, k, v)
	{
		if (attr_sensitive(t, k, v) && !json_is_null(v)) {
			if (json_is_false(*sens))
				*sens = json_object();
			json_object_set_new(*sens, k, json_true());
			json_object_set_new(out, k, json_null());
		} else {
			json_object_set(out, k, v);
		}
	}
	return out;
}

static json_t *attrs_of(const json_t *obj)
{
	return obj ? json_object_get(obj, "attrs") : NULL;
}

static const char *id_of(const json_t *obj)
{
	return obj ? json_string_value(json_object_get(obj, "id")) : NULL;
}

static const char *policy_why(const struct prov_type *t, const char *name)
{
	const struct prov_attr *a = provider_type_attr(t, name);

	return a && a->why ? a->why : "";
}

static int add_addresses(json_t *set, const json_t *map)
{
	const char *k;
	json_t *v;

	json_object_foreach_const(map, k, v) json_object_set_new(set, k, json_true());
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->addr, ((const struct entry *)b)->addr);
}

static bool listed(const char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Choose the live object that is this address: the recorded id, else the first. */
static void pick_live(struct entry *en)
{
	const char *rid = id_of(en->r);
	size_t i;
	json_t *v;

	en->live = NULL;
	json_array_foreach(en->lives, i, v)
	{
		if (rid && id_of(v) && strcmp(rid, id_of(v)) == 0) {
			en->live = v;
			return;
		}
	}
	en->live = json_array_get(en->lives, 0);
}

static int classify(struct differ *df, struct entry *en, struct kiln_error *err)
{
	json_t *la = attrs_of(en->live), *rid;

	/* Drift: the cloud no longer matches what the last apply recorded. */
	if (en->r && df->in->live) {
		rid = json_object_get(en->r, "id");
		if (!en->live || !json_equal(rid, json_object_get(en->live, "id"))) {
			en->drift = DRIFT_DELETED;
		} else {
			en->drift_changed = diff_changed_inputs(en->t, attrs_of(en->r), la);
			if (json_array_size(en->drift_changed))
				en->drift = DRIFT_CHANGED;
		}
	}
	if (en->live &&
	    (!en->r || !json_equal(json_object_get(en->r, "id"), json_object_get(en->live, "id"))))
		en->importing = true;

	if (en->d) {
		if (!en->live) {
			en->act = ACT_CREATE;
			if (en->drift == DRIFT_DELETED)
				en->reason = xstrdup("deleted outside kiln; created again");
			return 0;
		}
		en->changed = diff_changed_inputs(en->t, la, attrs_of(en->d));
		if (listed(df->in->replace, df->in->nreplace, en->addr)) {
			en->act = ACT_REPLACE;
			en->why_code = "replace_by_request";
			en->reason = xstrdup("replaced as asked by --replace");
		} else {
			size_t i;
			json_t *name;

			json_array_foreach(en->changed, i, name)
			{
				const struct prov_attr *a =
				    provider_type_attr(en->t, json_string_value(name));

				if (a && a->policy == POLICY_REPLACE) {
					en->act = ACT_REPLACE;
					en->why_code = "replace_because_cannot_update";
					en->reason = xasprintf("%s forces replacement", a->name);
					break;
				}
			}
			if (en->act == ACT_NOOP && json_array_size(en->changed))
				en->act = ACT_UPDATE;
		}
		if (en->act == ACT_REPLACE &&
		    (diff_retained(la) || diff_retained(attrs_of(en->d)))) {
			kiln_error_set(err, "%s would be replaced (%s), but it is a retained store",
				       en->addr, en->reason);
			kiln_error_hint(
			    err, "replacing it would delete its data; set 'deletion: delete' on "
				 "the store to allow that, or change the spec back");
			return -1;
		}
		return 0;
	}
	/* Not desired. */
	if (!en->live)
		return 0;
	if (diff_retained(la) && listed(df->in->include_retained, df->in->ninclude, en->addr)) {
		/* Asked for by name: deleted, data and all; no other store is touched. */
		en->act = ACT_DELETE;
		en->reason = xstrdup("a retained store, deleted with its data as asked by "
				     "--include-retained");
		en->importing = false;
		return 0;
	}
	if (diff_retained(la)) {
		en->retain = true;
		if (!en->r) {
			/* Ours by its tags but not recorded: leave it, say so. */
			json_array_append_new(
			    df->warnings,
			    json_sprintf(
				"%s (%s) is a retained store tagged for this workspace but "
				"not recorded in its state (an earlier destroy released it); "
				"kiln leaves it alone",
				en->addr, id_of(en->live)));
			en->importing = false;
			return 0;
		}
		en->act = ACT_DELETE;
		en->reason =
		    xstrdup("release from state; retained, not deleted (deletion: retain)");
		return 0;
	}
	en->act = ACT_DELETE;
	if (!df->in->destroy) {
		en->why_code = "delete_because_no_resource_config";
		en->reason =
		    xstrdup(en->r ? "not in the spec"
				  : "tagged for this workspace but in neither the spec nor "
				    "the state (left by an interrupted apply)");
	}
	en->importing = false;
	return 0;
}

static struct entry *find(struct differ *df, const char *addr)
{
	size_t ix = addr ? graph_find(df->uses, addr) : (size_t)-1;

	return ix != (size_t)-1 ? &df->v[ix] : NULL;
}

/*
 * What en depends on: desired deps, else recorded ones, else (live only: an
 * orphan) what the spec would give that address, so deletes still go in order.
 */
static json_t *deps_of(const struct differ *df, const struct entry *en)
{
	if (en->d || en->r)
		return json_object_get(en->d ? en->d : en->r, "deps");
	return json_object_get(json_object_get(df->e->desired, en->addr), "deps");
}

/* What depends on a replacement is replaced with it: it would point at the old one. */
static int widen_replacements(struct differ *df, struct kiln_error *err)
{
	bool again = true;
	size_t i, k, ndeps;
	const size_t *deps;

	while (again) {
		again = false;
		for (i = 0; i < df->n; i++) {
			struct entry *en = &df->v[i];

			if (!en->d || !en->live || en->act == ACT_REPLACE || en->act == ACT_CREATE)
				continue;
			/* With en->d, what it uses is what the spec gives it. */
			deps = graph_deps(df->uses, i, &ndeps);
			for (k = 0; k < ndeps; k++) {
				struct entry *de = &df->v[deps[k]];

				/* A dependency replaced, or deleted outside kiln and created anew.
				 */
				if (de->act != ACT_REPLACE &&
				    !(de->act == ACT_CREATE && de->drift == DRIFT_DELETED))
					continue;
				if (diff_retained(attrs_of(en->live))) {
					kiln_error_set(
					    err,
					    "%s is a retained store, but it depends on %s, "
					    "which is replaced",
					    en->addr, de->addr);
					kiln_error_hint(err,
							"set 'deletion: delete' on the store, or "
							"avoid replacing what it depends on");
					return -1;
				}
				en->act = ACT_REPLACE;
				en->why_code = "replace_because_dependency";
				free(en->reason);
				en->reason =
				    xasprintf("replaced with %s, which it depends on", de->addr);
				again = true;
				break;
			}
		}
	}
	return 0;
}

/*
 * A retained store stays in the cloud, so what it stands in (the network
 * of a file system) cannot be deleted under it: the cloud would refuse.
 * Release that from the state too, and say why.
 */
static void keep_what_retained_stores_use(struct differ *df)
{
	bool again = true;
	size_t i, k, ndeps;
	const size_t *deps;

	while (again) {
		again = false;
		for (i = 0; i < df->n; i++) {
			struct entry *en = &df->v[i];

			if (en->act != ACT_DELETE || !en->retain)
				continue;
			deps = graph_deps(df->uses, i, &ndeps);
			for (k = 0; k < ndeps; k++) {
				struct entry *de = &df->v[deps[k]];

				if (de->act != ACT_DELETE || de->retain || !de->r)
					continue;
				de->retain = true;
				de->why_code = NULL;
				free(de->reason);
				de->reason =
				    xasprintf("release from state; kept, because the retained "
					      "%s still uses it",
					      en->addr);
				again = true;
			}
		}
	}
}

/* graph_walk's visit: bring an entry into scope, and go on past it only if it was out. */
static bool into_scope(void *arg, size_t i)
{
	struct entry *en = &((struct differ *)arg)->v[i];

	if (en->in_scope)
		return false;
	en->in_scope = true;
	return true;
}

/*
 * en and what it uses, or (down: deleting) en and whatever uses or used it,
 * as recorded: those go first. Past an entry already in scope it goes no
 * further.
 */
static void mark_scope(struct differ *df, struct entry *en, bool down)
{
	graph_walk(down ? df->used : df->uses, (size_t)(en - df->v), down, into_scope, df);
}

/* Replacements forced by an in-scope one are in scope too, or they would point at nothing. */
static void widen_scope(struct differ *df)
{
	bool again = true;
	size_t i, k, ndeps;
	const size_t *deps;

	while (again) {
		again = false;
		for (i = 0; i < df->n; i++) {
			struct entry *en = &df->v[i];

			if (en->in_scope || en->act != ACT_REPLACE || !en->why_code ||
			    strcmp(en->why_code, "replace_because_dependency") != 0)
				continue;
			deps = graph_deps(df->uses, i, &ndeps);
			for (k = 0; k < ndeps; k++) {
				struct entry *de = &df->v[deps[k]];

				if (de->in_scope &&
				    (de->act == ACT_REPLACE || de->act == ACT_CREATE)) {
					mark_scope(df, en, false);
					again = true;
					break;
				}
			}
		}
	}
}

/*
 * The differ's graphs over its entries (sorted by address): uses, from
 * deps_of(); and, for --target (where deleting a target takes along what
 * used it), used, with what each recorded as its deps besides.
 */
static void build_graphs(struct differ *df, bool with_used)
{
	size_t i, k, j, w;
	json_t *dep;

	df->uses = graph_new();
	for (i = 0; i < df->n; i++)
		graph_add(df->uses, df->v[i].addr);
	if (with_used) {
		df->used = graph_new();
		for (i = 0; i < df->n; i++)
			graph_add_node(df->used, df->v[i].addr);
	}
	for (i = 0; i < df->n; i++) {
		const json_t *lists[2] = {deps_of(df, &df->v[i]),
					  json_object_get(df->v[i].r, "deps")};

		for (w = 0; w < (with_used ? 2u : 1u); w++)
			json_array_foreach(lists[w], k, dep)
			{
				const char *a = json_string_value(dep);

				j = a ? graph_find(df->uses, a) : (size_t)-1;
				if (j == (size_t)-1)
					continue;
				if (w == 0)
					graph_link(df->uses, i, j);
				if (with_used)
					graph_link(df->used, i, j);
			}
	}
}

static int check_named(struct differ *df, const char *const *v, size_t n, const char *flag,
		       struct kiln_error *err)
{
	const char **cands = xcalloc(df->n + 1, sizeof(*cands));
	const char *close;
	size_t i;
	int rc = 0;

	for (i = 0; i < df->n; i++)
		cands[i] = df->v[i].addr;
	for (i = 0; i < n && rc == 0; i++) {
		if (find(df, v[i]))
			continue;
		kiln_error_set(err, "%s %s: no such resource in the spec, the state or the cloud",
			       flag, v[i]);
		close = str_closest(v[i], cands, df->n);
		if (close)
			kiln_error_hint(err, "did you mean '%s'? 'kiln graph' lists the addresses",
					close);
		else
			kiln_error_hint(
			    err, "'kiln graph' lists the addresses; an address is TYPE.NAME");
		rc = -1;
	}
	free(cands);
	return rc;
}

static const char *const actions_of[] = {
    [ACT_NOOP] = "no-op", [ACT_CREATE] = "create", [ACT_UPDATE] = "update",
    [ACT_REPLACE] = NULL, [ACT_DELETE] = "delete",
};

static json_t *change_skeleton(const struct differ *df, const struct entry *en)
{
	const char *name = strchr(en->addr, '.');

	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "address", en->addr, "mode", "managed",
			 "type", en->t->name, "name", name ? name + 1 : en->addr, "provider_name",
			 df->e->prov->name);
}

static json_t *attribute_rows(const struct entry *en, const json_t *names, const json_t *before,
			      const json_t *after)
{
	json_t *rows = json_array(), *name, *b, *a;
	size_t i;

	json_array_foreach(names, i, name)
	{
		const char *nm = json_string_value(name);
		const struct prov_attr *pa = provider_type_attr(en->t, nm);
		bool sens;

		b = json_object_get(before, nm);
		a = json_object_get(after, nm);
		sens = attr_sensitive(en->t, nm, b) || attr_sensitive(en->t, nm, a);
		json_array_append_new(rows,
				      json_pack("{s:s, s:O, s:O, s:s, s:b, s:s}", "name", nm,
						"before", sens || !b ? json_null() : b, "after",
						sens || !a ? json_null() : a, "policy",
						provider_policy_name(pa ? pa->policy : POLICY_LIVE),
						"sensitive", sens, "why", policy_why(en->t, nm)));
	}
	return rows;
}

static json_t *sensitive_list(const struct entry *en)
{
	json_t *l = json_object_get(en->d, "sensitive");

	return l ? l : json_object_get(en->r, "sensitive");
}

static json_t *emit_change(const struct differ *df, const struct entry *en)
{
	json_t *rc = change_skeleton(df, en), *ch, *bs, *as, *kn, *actions;
	json_t *before_attrs = attrs_of(en->live), *after_attrs = en->d ? attrs_of(en->d) : NULL;
	enum act act = en->in_scope ? en->act : ACT_NOOP;
	size_t i;
	json_t *name;

	listed_sensitive = sensitive_list(en);
	if (act == ACT_DELETE)
		after_attrs = NULL;
	if (act == ACT_NOOP && !en->d)
		after_attrs = before_attrs;
	if (act == ACT_REPLACE)
		actions = json_pack("[ss]", "delete", "create");
	else
		actions = json_pack("[s]", actions_of[act]);
	ch = json_pack("{s:o}", "actions", actions);
	json_object_set_new(ch, "before", masked(en->t, before_attrs, &bs));
	json_object_set_new(ch, "after", masked(en->t, after_attrs, &as));
	json_object_set_new(ch, "after_unknown", json_object());
	json_object_set_new(ch, "before_sensitive", bs);
	json_object_set_new(ch, "after_sensitive", as);
	if (act == ACT_REPLACE) {
		json_t *paths = json_array();

		json_array_foreach(en->changed, i, name)
		{
			const struct prov_attr *a =
			    provider_type_attr(en->t, json_string_value(name));
			if (a && a->policy == POLICY_REPLACE)
				json_array_append_new(paths, json_pack("[O]", name));
		}
		json_object_set_new(ch, "replace_paths", paths);
		/*
		 * What the provider computes (ids, names) is known only after the
		 * create; an input the spec no longer sets (a group's capacity
		 * back to on demand) is known now: unset.
		 */
		json_t *v;
		const char *k;
		json_object_foreach(before_attrs, k, v) if (!json_object_get(after_attrs, k) &&
							    !provider_type_attr(en->t, k))
		    json_object_set_new(json_object_get(ch, "after_unknown"), k, json_true());
	}
	if (en->importing && en->in_scope)
		json_object_set_new(ch, "importing", json_pack("{s:s}", "id", id_of(en->live)));
	json_object_set_new(rc, "change", ch);
	if (act != ACT_NOOP && en->why_code)
		json_object_set_new(rc, "action_reason", json_string(en->why_code));

	kn = json_object();
	json_object_set_new(kn, "id", id_of(en->live) ? json_string(id_of(en->live)) : json_null());
	json_object_set_new(kn, "deps",
			    deps_of(df, en) ? json_incref(deps_of(df, en)) : json_array());
	/* Creation order only (provider.h); not recorded, as nothing uses it. */
	if (en->d && json_object_get(en->d, "after"))
		json_object_set(kn, "after", json_object_get(en->d, "after"));
	/* Of those, what it needs only created (provider.h): it starts when their call answers. */
	if (en->d && json_object_get(en->d, "created_only"))
		json_object_set(kn, "created_only", json_object_get(en->d, "created_only"));
	if (act == ACT_UPDATE || act == ACT_REPLACE)
		json_object_set_new(kn, "attributes",
				    attribute_rows(en, en->changed, before_attrs, after_attrs));
	else
		json_object_set_new(kn, "attributes", json_array());
	if (en->importing && en->in_scope)
		json_object_set_new(
		    kn, "reason",
		    json_sprintf("adopt %s: tagged for this workspace, missing from the state",
				 id_of(en->live)));
	if (en->reason && act != ACT_NOOP)
		json_object_set_new(kn, "reason", json_string(en->reason));
	if (en->retain && act == ACT_DELETE)
		json_object_set_new(kn, "retain", json_true());
	json_object_set_new(rc, "kiln", kn);
	return rc;
}

static json_t *emit_drift(const struct differ *df, const struct entry *en)
{
	json_t *rc = change_skeleton(df, en), *ch, *bs, *as, *kn;
	json_t *after = en->drift == DRIFT_DELETED ? NULL : attrs_of(en->live);

	listed_sensitive = sensitive_list(en);
	ch = json_pack("{s:[s]}", "actions", en->drift == DRIFT_DELETED ? "delete" : "update");
	json_object_set_new(ch, "before", masked(en->t, attrs_of(en->r), &bs));
	json_object_set_new(ch, "after", masked(en->t, after, &as));
	json_object_set_new(ch, "after_unknown", json_object());
	json_object_set_new(ch, "before_sensitive", bs);
	json_object_set_new(ch, "after_sensitive", as);
	json_object_set_new(rc, "change", ch);
	kn = json_object();
	json_object_set(kn, "id", json_object_get(en->r, "id"));
	json_object_set_new(kn, "deps",
			    deps_of(df, en) ? json_incref(deps_of(df, en)) : json_array());
	json_object_set_new(kn, "attributes",
			    en->drift == DRIFT_CHANGED
				? attribute_rows(en, en->drift_changed, attrs_of(en->r), after)
				: json_array());
	json_object_set_new(kn, "reason",
			    json_string(en->drift == DRIFT_DELETED ? "deleted outside kiln"
								   : "changed outside kiln"));
	json_object_set_new(rc, "kiln", kn);
	return rc;
}

/* Extra live objects carrying this address (a retried create that was not idempotent). */
static void emit_duplicates(struct differ *df, const struct entry *en, json_t *changes,
			    json_t *summary)
{
	size_t i;
	json_t *v, *rc, *bs;

	listed_sensitive = sensitive_list(en);
	json_array_foreach(en->lives, i, v)
	{
		if (v == en->live)
			continue;
		if (diff_retained(attrs_of(v))) {
			json_array_append_new(
			    df->warnings, json_sprintf("%s: %s carries this address too; it is a "
						       "retained store, so kiln leaves it alone",
						       en->addr, id_of(v)));
			continue;
		}
		json_t *before = masked(en->t, attrs_of(v), &bs);

		rc = change_skeleton(df, en);
		json_object_set_new(rc, "deposed", json_string(id_of(v)));
		json_object_set_new(rc, "change",
				    json_pack("{s:[s], s:o, s:n, s:{}, s:o, s:b}", "actions",
					      "delete", "before", before, "after", "after_unknown",
					      "before_sensitive", bs, "after_sensitive", 0));
		json_object_set_new(rc, "action_reason", json_string("delete_because_duplicate"));
		json_object_set_new(
		    rc, "kiln",
		    json_pack("{s:s, s:[], s:[], s:s}", "id", id_of(v), "deps", "attributes",
			      "reason",
			      "a second live resource with this address (a duplicate): deleted"));
		json_array_append_new(changes, rc);
		json_object_set_new(
		    summary, "delete",
		    json_integer(json_integer_value(json_object_get(summary, "delete")) + 1));
	}
}

static void bump(json_t *summary, const char *key)
{
	json_object_set_new(summary, key,
			    json_integer(json_integer_value(json_object_get(summary, key)) + 1));
}

static int cmp_address(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "address"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "address"));
	int c = strcmp(x ? x : "", y ? y : "");

	if (c)
		return c;
	x = json_string_value(json_object_get(*(json_t *const *)a, "id"));
	y = json_string_value(json_object_get(*(json_t *const *)b, "id"));
	return strcmp(x ? x : "", y ? y : "");
}

/*
 * kiln.foreign: what another state owns in this scope, by address:
 * {"address", "type", "id", "lineage" | null, "owner" | null}. A null
 * lineage is a resource made before lineages that no state here records.
 */
static json_t *foreign_list(const json_t *foreign)
{
	json_t *out = json_array(), *item;
	size_t i;

	json_array_foreach(foreign, i, item)
	{
		const json_t *tags = json_object_get(item, "tags");
		const char *owner = json_string_value(json_object_get(tags, PROV_TAG_OWNER));
		const char *lineage = provider_live_lineage(item);
		const char *addr = provider_live_address(item);

		json_array_append_new(
		    out, json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?}", "address", addr, "type",
				   json_string_value(json_object_get(item, "type")), "id",
				   json_string_value(json_object_get(item, "id")), "lineage",
				   lineage, "owner", owner && *owner ? owner : NULL));
	}
	provider_json_sort(out, cmp_address);
	return out;
}

/*
 * A create where another state's resource stands would make a second copy
 * of it (names collide on a real cloud, and two states would each think the
 * cluster theirs): refuse the plan, naming what stands there and the ways out.
 */
static int check_foreign(const json_t *plan, const struct plan_view *v, struct kiln_error *err)
{
	const json_t *foreign = plan_kiln(plan, "foreign"), *f;
	json_t *creates;
	struct strbuf sb = {0};
	size_t i, n = 0;
	const char *lineage = NULL;

	if (!json_array_size(foreign))
		return 0;
	/* The addresses the plan creates, once: a whole foreign cluster is thousands. */
	creates = json_object();
	for (i = 0; i < v->nchanges; i++)
		if (plan_action_creates(v->changes[i].action))
			json_object_set_new(creates, v->changes[i].address, json_true());
	json_array_foreach(foreign, i, f)
	{
		const char *addr = json_string_value(json_object_get(f, "address"));

		if (!addr || !json_object_get(creates, addr))
			continue;
		if (n < 3)
			sb_addf(&sb, "%s%s", n ? ", " : "", addr);
		n++;
		if (!lineage)
			lineage = json_string_value(json_object_get(f, "lineage"));
	}
	json_decref(creates);
	if (!n)
		return 0;
	if (n > 3)
		sb_addf(&sb, " and %zu more", n - 3);
	if (lineage)
		kiln_error_set(err,
			       "%zu resource%s this plan would create already exist%s in cluster "
			       "'%s', workspace '%s', owned by another state (lineage %s): %s",
			       n, n == 1 ? "" : "s", n == 1 ? "s" : "",
			       json_string_value(plan_kiln(plan, "cluster")),
			       json_string_value(plan_kiln(plan, "workspace")), lineage, sb.buf);
	else
		kiln_error_set(err,
			       "%zu resource%s this plan would create already exist%s in cluster "
			       "'%s', workspace '%s', made before kiln tagged its state's lineage "
			       "and recorded by no state here: %s",
			       n, n == 1 ? "" : "s", n == 1 ? "s" : "",
			       json_string_value(plan_kiln(plan, "cluster")),
			       json_string_value(plan_kiln(plan, "workspace")), sb.buf);
	kiln_error_hint(err,
			"kiln never changes, adopts or deletes another state's resources: use the "
			"state that owns them (--state URL, KILN_STATE), or another workspace (-w "
			"NAME) or cluster name; to move them into this state, run kiln state "
			"takeover (see kiln-state(1))");
	sb_release(&sb);
	return -1;
}

static json_t *emit_plan(struct differ *df)
{
	const struct diff_input *in = df->in;
	json_t *plan, *changes = json_array(), *drift = json_array(), *summary, *kn, *st;
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	size_t i, k;
	bool any = false, releases = false;
	const char *addr;
	json_t *d, *why;

	summary = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "create", 0, "update", 0,
			    "replace", 0, "delete", 0, "adopt", 0, "drift", 0, "no_op", 0);
	for (i = 0; i < df->n; i++) {
		struct entry *en = &df->v[i];
		enum act act = en->in_scope ? en->act : ACT_NOOP;

		if (en->drift != DRIFT_NONE) {
			json_array_append_new(drift, emit_drift(df, en));
			bump(summary, "drift");
		}
		if (!en->d && !en->live)
			continue; /* only recorded, and gone: the drift says it all */
		if (!en->d && !en->r && act == ACT_NOOP)
			continue; /* a retained orphan: warned about, not ours */
		json_array_append_new(changes, emit_change(df, en));
		if (act == ACT_DELETE && en->retain) {
			releases = true; /* counted in no column: nothing is deleted */
			continue;
		}
		bump(summary, act == ACT_NOOP	   ? "no_op"
			      : act == ACT_CREATE  ? "create"
			      : act == ACT_UPDATE  ? "update"
			      : act == ACT_REPLACE ? "replace"
						   : "delete");
		if (en->importing && en->in_scope)
			bump(summary, "adopt");
		if (en->in_scope)
			emit_duplicates(df, en, changes, summary);
	}
	any = releases;
	json_object_foreach(summary, addr, d) if (strcmp(addr, "no_op") && json_integer_value(d))
	    any = true;

	/* The provider's reasons for values it chose (the catalog pick, for one). */
	if (!in->destroy) {
		json_object_foreach(df->e->desired, addr, d)
		{
			const char *key;
			json_object_foreach(json_object_get(d, "why"), key, why)
			    json_array_append_new(df->notes, json_sprintf("%s: %s: %s", addr, key,
									  json_string_value(why)));
		}
	}
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	st = json_pack("{s:o, s:I, s:o}", "commit",
		       in->state_commit ? json_string(in->state_commit) : json_null(), "serial",
		       (json_int_t)(in->state ? state_serial(in->state) : 0), "lineage",
		       in->state && in->state_commit ? json_string(state_lineage(in->state))
						     : json_null());
	kn = json_pack("{s:i, s:s, s:s, s:s, s:s, s:b, s:{s:s, s:s}, s:o, s:b, s:b}",
		       "plan_version", PLAN_VERSION, "created", ts, "cluster", df->e->spec->cluster,
		       "workspace", df->e->workspace, "provider", df->e->prov->name, "simulated",
		       df->e->prov->simulated, "spec", "file", in->spec_file, "digest",
		       df->e->spec_digest, "state", st, "destroy", in->destroy, "refresh",
		       in->live != NULL);
	json_t *targets = json_array(), *replace = json_array();
	for (k = 0; k < in->ntargets; k++)
		json_array_append_new(targets, json_string(in->targets[k]));
	for (k = 0; k < in->nreplace; k++)
		json_array_append_new(replace, json_string(in->replace[k]));
	json_object_set_new(kn, "targets", targets);
	json_object_set_new(kn, "replace", replace);
	json_object_set_new(kn, "summary", summary);
	json_object_set_new(kn, "changes", json_boolean(any));
	json_object_set(kn, "notes", df->notes);
	json_object_set(kn, "warnings", df->warnings);
	if (json_array_size(in->foreign))
		json_object_set_new(kn, "foreign", foreign_list(in->foreign));
	plan = json_pack("{s:s, s:s, s:o, s:o, s:b, s:o}", "format_version", PLAN_FORMAT_VERSION,
			 "kiln_version", KILN_VERSION, "resource_changes", changes,
			 "resource_drift", drift, "errored", 0, "kiln", kn);
	plan_values_add(plan);
	return plan;
}

int diff_plan(const struct diff_input *in, json_t **plan, struct kiln_error *err)
{
	struct differ df = {.in = in, .e = in->engine};
	struct plan_view view;
	json_t *addrs = json_object(), *recorded, *none = json_object(), *desired, *live;
	const char *addr;
	json_t *v;
	size_t i;
	int rc = -1;

	*plan = NULL;
	recorded = in->state ? state_resources(in->state) : none;
	desired = in->destroy ? none : in->engine->desired;
	live = in->live;
	add_addresses(addrs, desired);
	add_addresses(addrs, recorded);
	if (live)
		add_addresses(addrs, live);
	df.v = xcalloc(json_object_size(addrs) + 1, sizeof(*df.v));
	df.warnings = json_array();
	df.notes = json_array();
	json_object_foreach(addrs, addr, v)
	{
		struct entry *en = &df.v[df.n];
		json_t *any;

		en->addr = addr;
		en->d = json_object_get(desired, addr);
		en->r = json_object_get(recorded, addr);
		if (live) {
			en->lives = json_incref(json_object_get(live, addr));
		} else if (en->r && json_string_value(json_object_get(en->r, "id"))) {
			/* --refresh=false: believe the state. */
			en->lives = json_pack(
			    "[{s:O, s:O, s:O}]", "type", json_object_get(en->r, "type"), "id",
			    json_object_get(en->r, "id"), "attrs", json_object_get(en->r, "attrs"));
		}
		if (!en->lives)
			en->lives = json_array();
		any = en->d ? en->d : en->r ? en->r : json_array_get(en->lives, 0);
		en->t = engine_type(in->engine, any);
		if (!en->t) {
			json_decref(en->lives);
			if (en->r || en->d) {
				kiln_error_set(err, "%s: the %s provider has no resource type '%s'",
					       addr, in->engine->prov->name,
					       json_string_value(json_object_get(any, "type")));
				kiln_error_hint(err,
						"the state was written for another provider; use "
						"the workspace that spec belongs to");
				goto out;
			}
			continue; /* a tagged live object of a type we do not manage */
		}
		en->in_scope = in->ntargets == 0;
		pick_live(en);
		df.n++;
	}
	qsort(df.v, df.n, sizeof(*df.v), cmp_addr);
	build_graphs(&df, in->ntargets > 0);
	if (check_named(&df, in->targets, in->ntargets, "--target", err) != 0 ||
	    check_named(&df, in->replace, in->nreplace, "--replace", err) != 0 ||
	    check_named(&df, in->include_retained, in->ninclude, "--include-retained", err) != 0)
		goto out;
	for (i = 0; i < in->ninclude; i++) {
		struct entry *en = find(&df, in->include_retained[i]);

		if (!diff_retained(attrs_of(en->live ? en->live : en->r))) {
			kiln_error_set(err, "--include-retained %s: it is not a retained store",
				       en->addr);
			kiln_error_hint(err, "it names a store kept by deletion: retain; what is not "
					     "retained is deleted by destroy without it");
			goto out;
		}
	}
	for (i = 0; i < in->nreplace; i++) {
		struct entry *en = find(&df, in->replace[i]);

		if (!en->d || !en->live) {
			kiln_error_set(
			    err, "--replace %s: %s", en->addr,
			    !en->d ? "it is not in the spec"
				   : "it does not exist yet, so there is nothing to replace");
			goto out;
		}
	}
	for (i = 0; i < df.n; i++)
		if (classify(&df, &df.v[i], err) != 0)
			goto out;
	if (widen_replacements(&df, err) != 0)
		goto out;
	keep_what_retained_stores_use(&df);
	for (i = 0; i < in->ntargets; i++) {
		struct entry *en = find(&df, in->targets[i]);

		/* A target being deleted takes what depends on it along, as destroy does. */
		mark_scope(&df, en, in->destroy || en->act == ACT_DELETE);
	}
	if (in->ntargets)
		widen_scope(&df);
	*plan = emit_plan(&df);
	if (plan_view_build(&view, *plan, err) != 0 || check_foreign(*plan, &view, err) != 0 ||
	    graph_plan_check(&view, recorded, err) != 0) {
		plan_view_release(&view);
		json_decref(*plan);
		*plan = NULL;
		goto out;
	}
	if (in->view)
		*in->view = view;
	else
		plan_view_release(&view);
	rc = 0;
out:
	for (i = 0; i < df.n; i++) {
		json_decref(df.v[i].lives);
		json_decref(df.v[i].changed);
		json_decref(df.v[i].drift_changed);
		free(df.v[i].reason);
	}
	free(df.v);
	graph_free(df.uses);
	graph_free(df.used);
	json_decref(df.warnings);
	json_decref(df.notes);
	json_decref(addrs);
	json_decref(none);
	return rc;
}
