/*
 * expand.c - see expand.h.
 */
#include "expand.h"

#include "provider.h"
#include "jsonw.h"
#include "timefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *expand_resource(json_t *all, const char *type, const char *name)
{
	char *addr = xasprintf("%s.%s", type, name);
	json_t *r =
	    json_pack("{s:s, s:s, s:{}, s:[]}", "type", type, "name", name, "attrs", "deps");

	json_object_set_new(all, addr, r);
	free(addr);
	return r;
}

void expand_attr(json_t *r, const char *key, json_t *value)
{
	json_object_set_new(json_object_get(r, "attrs"), key, value ? value : json_null());
}

json_t *expand_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Add TYPE.NAME to r's list key ("deps", "after") once, making the list when it has none. */
static void add_address(json_t *r, const char *key, const char *type, const char *name)
{
	json_t *deps = json_object_get(r, key);
	char *addr = xasprintf("%s.%s", type, name);
	size_t i;

	if (!deps) {
		deps = json_array();
		json_object_set_new(r, key, deps);
	}
	for (i = 0; i < json_array_size(deps); i++)
		if (strcmp(json_string_value(json_array_get(deps, i)), addr) == 0)
			break;
	if (i == json_array_size(deps))
		json_array_append_new(deps, json_string(addr));
	free(addr);
}

void expand_dep(json_t *r, const char *type, const char *name)
{
	add_address(r, "deps", type, name);
}

void expand_after(json_t *r, const char *type, const char *name)
{
	add_address(r, "after", type, name);
}

void expand_why(json_t *r, const char *key, char *text)
{
	json_t *w = json_object_get(r, "why");

	if (!w) {
		w = json_object();
		json_object_set_new(r, "why", w);
	}
	json_object_set_new(w, key, json_string(text));
	free(text);
}

static int str_qsort(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A sorted, duplicate-free JSON array of strings. */
json_t *expand_sorted_strings(const char **v, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	qsort(v, n, sizeof(*v), str_qsort);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
			json_array_append_new(arr, json_string(v[i]));
	return arr;
}

void expand_sort_deps(json_t *all)
{
	static const char *const keys[] = {"deps", "after"};
	const char *addr;
	json_t *r;
	size_t k;

	json_object_foreach(all, addr, r) for (k = 0; k < 2; k++)
	{
		json_t *deps = json_object_get(r, keys[k]);
		size_t n = json_array_size(deps), i;
		const char **v;

		/* "after" only where expand put one: most resources have none. */
		if (k == 1 && !deps)
			continue;
		v = xcalloc(n + 1, sizeof(*v));
		for (i = 0; i < n; i++)
			v[i] = json_string_value(json_array_get(deps, i));
		json_object_set_new(r, keys[k], expand_sorted_strings(v, n));
		free(v);
	}
}

/* "$98.32", "$1.006", "$0.2016": cents always, more digits only when the price has them. */
static char *usd(double v)
{
	char buf[64];
	size_t n;

	snprintf(buf, sizeof(buf), "%.4f", v);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '0' && buf[n - 3] != '.')
		buf[--n] = '\0';
	return xasprintf("$%s", buf);
}

/* "t.yaml:12:10: " for a group's key, or "" when the spec has no position. */
char *expand_where(const struct spec *spec, const struct ynode *n)
{
	if (!n || !spec->file)
		return xstrdup("");
	return xasprintf("%s:%d:%d: ", spec->file, n->line, n->col);
}

static char *resolution(const struct catalog_type *best, const struct catalog_type *next,
			const struct spec_group *g, bool efa)
{
	bool spot = g->market == MARKET_SPOT;
	char *want = xasprintf("%d× %s%s", g->gpu_count, best->gpu, efa ? " and EFA" : "");
	char *price = usd(catalog_price(best, spot)), *text, *other;

	if (next) {
		char *p2 = usd(catalog_price(next, spot));

		other = xasprintf("runner-up %s at %s/h", next->name, p2);
		free(p2);
	} else {
		other = xasprintf("no other type has %s", want);
	}
	text = xasprintf("cheapest with %s: %s at %s/h %s; %s", want, best->name, price,
			 spot ? "spot" : "on-demand", other);
	free(other);
	free(price);
	free(want);
	return text;
}

static int unknown_type(const struct catalog *cat, const struct spec_group *g,
			struct kiln_error *err)
{
	const char **names = xcalloc(cat->ntypes + 1, sizeof(*names));
	size_t *dist = xcalloc(cat->ntypes + 1, sizeof(*dist));
	size_t i, j, shown = 0;
	struct strbuf close = {0};
	const char *near;

	for (i = 0; i < cat->ntypes; i++) {
		names[i] = cat->types[i].name;
		dist[i] = str_edit_distance(g->instance_type, names[i]);
	}
	/* The three nearest names, nearest first; ties keep the catalog's order. */
	for (shown = 0; shown < 3 && shown < cat->ntypes; shown++) {
		size_t best = cat->ntypes;

		for (j = 0; j < cat->ntypes; j++)
			if (dist[j] != (size_t)-1 && (best == cat->ntypes || dist[j] < dist[best]))
				best = j;
		sb_addf(&close, "%s%s", shown ? ", " : "", names[best]);
		dist[best] = (size_t)-1;
	}
	kiln_error_set(err,
		       "compute.%s.instance_type: '%s' is not in the catalog (%s %s, prices "
		       "of %s); close names: %s",
		       g->name, g->instance_type, cat->provider, cat->region, cat->date, close.buf);
	near = str_closest(g->instance_type, names, cat->ntypes);
	if (near)
		kiln_error_hint(err, "did you mean '%s'?", near);
	else
		kiln_error_hint(err, "name a type the catalog has, or ask for gpu: MODEL:COUNT");
	sb_release(&close);
	free(dist);
	free(names);
	return PROV_ERROR;
}

/* The sorted names of refs of one tier; a lustre one is appended to lustre. */
static json_t *tier_names(const struct spec *spec, const struct spec_ref *refs, size_t n,
			  enum spec_tier tier, struct strbuf *lustre)
{
	const char **v = xcalloc(n + 1, sizeof(*v));
	size_t i, k = 0;
	json_t *arr;

	for (i = 0; i < n; i++) {
		const struct spec_store *s = spec_store_find(spec, refs[i].name);

		if (s && s->tier == tier)
			v[k++] = refs[i].name;
		else if (s && s->tier == TIER_LUSTRE && lustre)
			sb_addf(lustre, "%s%s", lustre->len ? ", " : "", refs[i].name);
	}
	arr = expand_sorted_strings(v, k);
	free(v);
	return arr;
}

void expand_role_policy_attrs(json_t *r, const struct spec *spec, const struct spec_role *role,
			      const char *lustre_why)
{
	json_t *nfs;
	int w;

	for (w = 0; w < 2; w++) {
		const struct spec_ref *refs = w ? role->write : role->read;
		size_t n = w ? role->nwrite : role->nread;
		struct strbuf lustre = {0};

		expand_attr(r, w ? "write" : "read",
			    tier_names(spec, refs, n, TIER_OBJECT, &lustre));
		/* Like allow: no key for a role that mounts no nfs store. */
		nfs = tier_names(spec, refs, n, TIER_NFS, NULL);
		if (json_array_size(nfs))
			expand_attr(r, w ? "nfs_write" : "nfs_read", nfs);
		else
			json_decref(nfs);
		if (lustre.len)
			expand_why(r, w ? "write" : "read",
				   xasprintf("%s: %s", lustre.buf, lustre_why));
		sb_release(&lustre);
	}
	if (role->nallow)
		expand_attr(r, "allow", expand_role_allow(role));
}

/* A JSON array of strings as a sorted, duplicate-free array (non-strings dropped). */
static json_t *sorted_json_strings(const json_t *arr)
{
	const char **v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
	size_t i, k = 0;
	json_t *x, *out;

	json_array_foreach(arr, i, x)
	{
		if (json_is_string(x))
			v[k++] = json_string_value(x);
	}
	out = expand_sorted_strings(v, k);
	free(v);
	return out;
}

static int cmp_dumped(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *expand_allow_normalize(const json_t *stmts)
{
	size_t i, n = json_array_size(stmts), k = 0;
	char **dumped = xcalloc(n + 1, sizeof(*dumped));
	json_t *st, *out = json_array();

	json_array_foreach(stmts, i, st)
	{
		json_t *norm = json_deep_copy(st);

		if (!json_is_object(norm)) {
			json_decref(norm);
			continue;
		}
		json_object_set_new(norm, "actions",
				    sorted_json_strings(json_object_get(st, "actions")));
		json_object_set_new(norm, "resources",
				    sorted_json_strings(json_object_get(st, "resources")));
		dumped[k++] = jsonw_dumps(norm, JSON_COMPACT | JSON_SORT_KEYS, NULL);
		json_decref(norm);
	}
	qsort(dumped, k, sizeof(*dumped), cmp_dumped);
	for (i = 0; i < k; i++) {
		if (i == 0 || strcmp(dumped[i], dumped[i - 1]) != 0)
			json_array_append_new(out, json_loads(dumped[i], 0, NULL));
	}
	for (i = 0; i < k; i++)
		free(dumped[i]);
	free(dumped);
	return out;
}

json_t *expand_role_allow(const struct spec_role *role)
{
	json_t *raw, *out;
	size_t i, j;

	if (role->nallow == 0)
		return NULL;
	raw = json_array();
	for (i = 0; i < role->nallow; i++) {
		const struct spec_allow *a = &role->allow[i];
		json_t *st = json_pack("{s:[], s:[]}", "actions", "resources");

		for (j = 0; j < a->nactions; j++)
			json_array_append_new(json_object_get(st, "actions"),
					      json_string(a->actions[j]));
		for (j = 0; j < a->nresources; j++)
			json_array_append_new(json_object_get(st, "resources"),
					      json_string(a->resources[j]));
		if (a->sid)
			json_object_set_new(st, "sid", json_string(a->sid));
		json_array_append_new(raw, st);
	}
	out = expand_allow_normalize(raw);
	json_decref(raw);
	return out;
}

/*
 * The catalog type of a group, or -1 with err (no position in it) and *where
 * the node the error is about.
 */
static int group_type(const struct catalog *cat, const struct spec *spec,
		      const struct spec_group *g, const struct catalog_type **t,
		      const struct catalog_type **next, const struct ynode **where,
		      struct kiln_error *err)
{
	struct kiln_error cerr = {{0}, {0}};

	*t = NULL;
	*next = NULL;
	if (!g->gpu_model) {
		*where = ydoc_get(g->node, "instance_type");
		*t = catalog_find(cat, g->instance_type);
		return *t ? 0 : unknown_type(cat, g, err);
	}
	*where = ydoc_get(g->node, "gpu");
	if (catalog_resolve(cat, g->gpu_model, g->gpu_count, spec->network.fabric == FABRIC_EFA, t,
			    next, &cerr) < 0) {
		kiln_error_set(err, "compute.%s.gpu: %s", g->name, cerr.msg);
		snprintf(err->hint, sizeof(err->hint), "%s", cerr.hint);
		return -1;
	}
	return 0;
}

int expand_group_type(const char *prefix, const struct catalog *cat, const struct spec *spec,
		      const struct spec_group *g, const struct catalog_type **t, char **why,
		      struct kiln_error *err)
{
	const struct catalog_type *next = NULL;
	const struct ynode *where = NULL;
	struct kiln_error gerr = {{0}, {0}};

	*why = NULL;
	if (group_type(cat, spec, g, t, &next, &where, &gerr) < 0) {
		char *at = expand_where(spec, where);

		kiln_error_set(err, "%s%s%s", prefix, at, gerr.msg);
		snprintf(err->hint, sizeof(err->hint), "%s", gerr.hint);
		free(at);
		return PROV_ERROR;
	}
	if (g->gpu_model)
		*why = resolution(*t, next, g, spec->network.fabric == FABRIC_EFA);
	return 0;
}

/* arn:PARTITION:resource-groups:REGION:ACCOUNT:group/NAME */
static bool group_arn_ok(const char *s)
{
	const char *p = s;
	int field;

	if (strncmp(p, "arn:", 4) != 0)
		return false;
	p += 4;
	for (field = 0; field < 4; field++) {
		const char *colon = strchr(p, ':');

		if (!colon || (field != 2 && colon == p))
			return false;
		if (field == 1 && strncmp(p, "resource-groups:", 16) != 0)
			return false;
		p = colon + 1;
	}
	return strncmp(p, "group/", 6) == 0 && p[6];
}

/* A reservation_group names a resource group by its ARN. */
static void check_reservation_group(const struct spec *spec, const struct spec_group *g,
				    struct diags *d)
{
	const struct ynode *at;
	struct diag *dg;

	if (g->capacity.kind != CAPACITY_RESERVATION_GROUP || !g->capacity.reservation ||
	    group_arn_ok(g->capacity.reservation))
		return;
	at = ydoc_get(g->capacity.node, "reservation_group");
	dg = diags_add(d, DIAG_ERROR, spec->file, at ? at->line : 1, at ? at->col : 1,
		       "compute.%s.capacity.reservation_group: '%s' is not a resource group ARN",
		       g->name, g->capacity.reservation);
	diag_hint(dg, "write arn:aws:resource-groups:REGION:ACCOUNT:group/NAME");
}

/* A Capacity Block only for a type EC2 sells them for (the catalog's flag). */
static void check_block_type(const struct catalog *cat, const struct spec *spec,
			     const struct spec_group *g, const struct catalog_type *t,
			     struct diags *d)
{
	const struct ynode *where;
	struct strbuf types = {0};
	struct diag *dg;
	size_t i;

	if (g->capacity.kind != CAPACITY_BLOCK || !t || t->capacity_block)
		return;
	for (i = 0; i < cat->ntypes; i++)
		if (cat->types[i].capacity_block)
			sb_addf(&types, "%s%s", types.len ? ", " : "", cat->types[i].name);
	where = ydoc_key(g->capacity.node, "block");
	if (!where)
		where = g->key;
	dg = diags_add(d, DIAG_ERROR, spec->file, where->line, where->col,
		       "compute.%s.capacity.block: %s is not sold as Capacity Blocks", g->name,
		       t->name);
	diag_hint(dg, "Capacity Blocks are sold for %s; or use on-demand, spot or a reservation",
		  types.buf ? types.buf : "no type of this catalog");
	sb_release(&types);
}

void expand_check_groups(const struct catalog *cat, const struct spec *spec, struct diags *d)
{
	size_t i;

	/* A fabric that did not load may be the efa a type is chosen for. */
	if (spec->broken & SPEC_BROKEN_NETWORK)
		return;
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		const struct catalog_type *t, *next;
		const struct ynode *where = NULL;
		struct kiln_error err = {{0}, {0}};
		struct diag *dg;

		check_reservation_group(spec, g, d);
		if (g->machine_bad || (!g->gpu_model && !g->instance_type))
			continue; /* the loader has reported it */
		if (group_type(cat, spec, g, &t, &next, &where, &err) == 0) {
			check_block_type(cat, spec, g, t, d);
			continue;
		}
		if (!where)
			where = g->key;
		dg = diags_add(d, DIAG_ERROR, spec->file, where ? where->line : 1,
			       where ? where->col : 1, "%s", err.msg);
		if (err.hint[0])
			diag_hint(dg, "%s", err.hint);
	}
}

const struct spec_store **expand_file_systems(const struct spec *spec, size_t *n)
{
	const struct spec_store **fs = xcalloc(spec->nstores + 1, sizeof(*fs));
	size_t i;

	*n = 0;
	for (i = 0; i < spec->nstores; i++)
		if (spec->stores[i].tier == TIER_LUSTRE || spec->stores[i].tier == TIER_NFS)
			fs[(*n)++] = &spec->stores[i];
	return fs;
}

void expand_access_attrs(json_t *r, const struct spec *spec)
{
	if (spec->access.key_pair)
		expand_attr(r, "key_pair", json_string(spec->access.key_pair));
}

void expand_group_attrs(json_t *r, const struct spec_group *g, const char *type, json_t *zones,
			json_t *disk_type, bool efa, bool in_pg)
{
	expand_attr(r, "instance_type", json_string(type));
	expand_attr(r, "count", json_integer(g->count));
	expand_attr(r, "gang", json_boolean(g->gang));
	expand_attr(r, "market", json_string(spec_market_name(g->market)));
	expand_attr(r, "image", expand_str(g->image));
	expand_attr(r, "zones", zones);
	expand_attr(r, "disk_size_gb", json_integer(g->disk.size_gb));
	expand_attr(r, "disk_type", disk_type);
	expand_attr(r, "role", expand_str(g->role.name));
	expand_attr(r, "public", json_boolean(g->public));
	expand_attr(r, "efa", json_boolean(efa));
	expand_attr(r, "placement_group", in_pg ? json_string("fabric") : json_null());
	expand_group_capacity(r, g);
	if (g->derived)
		expand_why(r, g->type_derived ? "instance_type" : "count", xstrdup(g->derived));
}

/*
 * Where the group's capacity comes from, only when the spec says: a group
 * that does not keeps the attributes (and the plans) it always had.
 */
void expand_group_capacity(json_t *r, const struct spec_group *g)
{
	const struct spec_capacity *c = &g->capacity;

	if (!c->node || c->kind == CAPACITY_ON_DEMAND)
		return;
	expand_attr(r, "capacity", json_string(spec_capacity_name(c->kind)));
	if (c->reservation)
		expand_attr(r, "capacity_reservation", json_string(c->reservation));
	if (c->spot_fallback)
		expand_attr(r, "spot_fallback", json_true());
}

json_t *expand_capacity_block(json_t *all, const char *type, const struct spec_group *g,
			      const char *instance_type, json_t *zones)
{
	const struct spec_capacity *c = &g->capacity;
	json_t *r = expand_resource(all, type, g->name);
	char at[21];

	expand_attr(r, "instance_type", json_string(instance_type));
	expand_attr(r, "count", json_integer(g->count));
	expand_attr(r, "duration_hours", json_integer(c->block_duration / 3600));
	expand_attr(r, "start_after",
		    c->block_start_after
			? json_string(timefmt_time_format_rfc3339(c->block_start_after, at))
			: json_null());
	expand_attr(r, "max_upfront_usd", json_real(c->max_upfront_usd));
	expand_attr(r, "zones", zones);
	return r;
}

void expand_deletion(json_t *r, const struct spec_store *s)
{
	expand_attr(r, "deletion",
		    json_string(s->deletion == DELETION_DELETE ? "delete" : "retain"));
	if (s->deletion_set)
		return;
	if (s->tier == TIER_LUSTRE)
		expand_why(
		    r, "deletion",
		    xstrdup("lustre is scratch: deleted with the cluster, as the spec gives no "
			    "deletion: (write deletion: retain to keep it; its data reaches an "
			    "object store only through an import the spec declares)"));
	else
		expand_why(
		    r, "deletion",
		    xasprintf("%s stores are retained when the cluster is destroyed, as the "
			      "spec gives no deletion: (kiln down names them and their cost)",
			      spec_tier_name(s->tier)));
}
