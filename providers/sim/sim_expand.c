/*
 * sim_expand.c - a validated spec as the sim's desired resources.
 *
 *   sim_network.main             when anything needs a network
 *   sim_placement_group.fabric   with fabric: efa
 *   sim_node_group.GROUP         per compute group; GPUs resolved through the catalog
 *   sim_bucket|sim_lustre|sim_nfs.STORE   per store, by tier
 *   sim_role.ROLE, sim_role_policy.ROLE   per IAM role
 *
 * Inputs come straight from the spec's typed sections. Every node group
 * depends on every file system, since file systems are mounted on all groups.
 * Dependencies are sorted, so the same spec always expands to the same JSON.
 */
#include "sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *store_type(enum spec_tier t)
{
	switch (t) {
	case TIER_LUSTRE:
		return "sim_lustre";
	case TIER_NFS:
		return "sim_nfs";
	case TIER_OBJECT:
		break;
	}
	return "sim_bucket";
}

static const char *deletion_name(enum spec_deletion d)
{
	return d == DELETION_DELETE ? "delete" : "retain";
}

static json_t *resource(json_t *all, const char *type, const char *name)
{
	char *addr = xasprintf("%s.%s", type, name);
	json_t *r =
	    json_pack("{s:s, s:s, s:{}, s:[]}", "type", type, "name", name, "attrs", "deps");

	json_object_set_new(all, addr, r);
	free(addr);
	return r;
}

static void attr(json_t *r, const char *key, json_t *value)
{
	json_object_set_new(json_object_get(r, "attrs"), key, value ? value : json_null());
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static void dep(json_t *r, const char *type, const char *name)
{
	json_t *deps = json_object_get(r, "deps");
	char *addr = xasprintf("%s.%s", type, name);
	size_t i;

	for (i = 0; i < json_array_size(deps); i++)
		if (strcmp(json_string_value(json_array_get(deps, i)), addr) == 0)
			break;
	if (i == json_array_size(deps))
		json_array_append_new(deps, json_string(addr));
	free(addr);
}

static void why(json_t *r, const char *key, char *text)
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
static json_t *sorted_strings(const char **v, size_t n)
{
	json_t *arr = json_array();
	size_t i;

	qsort(v, n, sizeof(*v), str_qsort);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(v[i], v[i - 1]) != 0)
			json_array_append_new(arr, json_string(v[i]));
	return arr;
}

static void sort_deps(json_t *all)
{
	const char *addr;
	json_t *r;

	json_object_foreach(all, addr, r)
	{
		json_t *deps = json_object_get(r, "deps");
		size_t n = json_array_size(deps), i;
		const char **v = xcalloc(n + 1, sizeof(*v));

		for (i = 0; i < n; i++)
			v[i] = json_string_value(json_array_get(deps, i));
		json_object_set_new(r, "deps", sorted_strings(v, n));
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
static char *where(const struct spec *spec, const struct ynode *n)
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

static int unknown_type(const struct spec *spec, const struct spec_group *g, struct kiln_error *err)
{
	const struct catalog *cat = &catalog_aws;
	const char **names = xcalloc(cat->ntypes + 1, sizeof(*names));
	size_t *dist = xcalloc(cat->ntypes + 1, sizeof(*dist));
	size_t i, j, shown = 0;
	struct strbuf close = {0};
	const char *near;
	char *at = where(spec, ynode_get(g->node, "instance_type"));

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
		       "sim: %scompute.%s.instance_type: '%s' is not in the catalog (%s %s, prices "
		       "of %s); close names: %s",
		       at, g->name, g->instance_type, cat->provider, cat->region, cat->date,
		       close.buf);
	near = str_closest(g->instance_type, names, cat->ntypes);
	if (near)
		kiln_error_hint(err, "did you mean '%s'?", near);
	else
		kiln_error_hint(err, "name a type the catalog has, or ask for gpu: MODEL:COUNT");
	sb_release(&close);
	free(at);
	free(dist);
	free(names);
	return PROV_ERROR;
}

static int expand_group(json_t *all, const struct spec *spec, const struct spec_group *g,
			struct kiln_error *err)
{
	bool fabric_efa = spec->network.fabric == FABRIC_EFA, efa;
	const struct catalog_type *t = NULL, *next = NULL;
	json_t *r, *zones = json_array();
	size_t i;

	if (g->gpu_model) {
		struct kiln_error cerr = {{0}, {0}};

		if (catalog_resolve(&catalog_aws, g->gpu_model, g->gpu_count, fabric_efa, &t, &next,
				    &cerr) < 0) {
			char *at = where(spec, ynode_get(g->node, "gpu"));

			kiln_error_set(err, "sim: %scompute.%s.gpu: %s", at, g->name, cerr.msg);
			snprintf(err->hint, sizeof(err->hint), "%s", cerr.hint);
			free(at);
			json_decref(zones);
			return PROV_ERROR;
		}
	} else {
		t = catalog_find(&catalog_aws, g->instance_type);
		if (!t) {
			json_decref(zones);
			return unknown_type(spec, g, err);
		}
	}
	efa = fabric_efa && t->efa;
	for (i = 0; i < spec->provider.nzones; i++)
		json_array_append_new(zones, json_string(spec->provider.zones[i].name));
	if (spec->provider.nzones == 0)
		json_array_append_new(zones, json_sprintf("%sa", spec->provider.region
								     ? spec->provider.region
								     : SIM_DEFAULT_REGION));
	r = resource(all, "sim_node_group", g->name);
	attr(r, "instance_type", json_string(t->name));
	attr(r, "count", json_integer(g->count));
	attr(r, "gang", json_boolean(g->gang));
	attr(r, "market", json_string(spec_market_name(g->market)));
	attr(r, "image", str_or_null(g->image));
	attr(r, "zones", zones);
	attr(r, "disk_size_gb", json_integer(g->disk.size_gb));
	attr(r, "disk_type", str_or_null(g->disk.type));
	attr(r, "role", str_or_null(g->role.name));
	attr(r, "public", json_boolean(g->public));
	attr(r, "efa", json_boolean(efa));
	attr(r, "placement_group", efa ? json_string("fabric") : json_null());
	json_object_set_new(r, "sensitive", json_pack("[s]", "join_token"));
	if (g->gpu_model)
		why(r, "instance_type", resolution(t, next, g, fabric_efa));
	if (fabric_efa && !efa)
		why(r, "efa",
		    xasprintf("%s has no EFA: this group reaches the fabric's network over ENA "
			      "and stays out of the placement group",
			      t->name));
	dep(r, "sim_network", "main");
	if (efa)
		dep(r, "sim_placement_group", "fabric");
	if (g->role.name && spec_role_find(spec, g->role.name)) {
		dep(r, "sim_role", g->role.name);
		dep(r, "sim_role_policy", g->role.name);
	}
	for (i = 0; i < spec->nstores; i++)
		if (spec->stores[i].tier != TIER_OBJECT)
			dep(r, store_type(spec->stores[i].tier), spec->stores[i].name);
	return PROV_OK;
}

static void expand_network(json_t *all, const struct spec *spec)
{
	json_t *r = resource(all, "sim_network", "main"), *ingress = json_array();
	size_t i;

	for (i = 0; i < spec->network.ningress; i++) {
		const struct spec_ingress *in = &spec->network.ingress[i];

		json_array_append_new(ingress,
				      json_pack("{s:i, s:i, s:s?, s:s?}", "port_from",
						in->port_from, "port_to", in->port_to, "protocol",
						in->protocol, "from", in->from));
	}
	attr(r, "cidr", str_or_null(spec->network.cidr));
	attr(r, "fabric", json_string(spec_fabric_name(spec->network.fabric)));
	attr(r, "ingress", ingress);
	attr(r, "region",
	     json_string(spec->provider.region ? spec->provider.region : SIM_DEFAULT_REGION));
	if (spec->network.fabric == FABRIC_EFA) {
		r = resource(all, "sim_placement_group", "fabric");
		attr(r, "strategy", json_string("cluster"));
		dep(r, "sim_network", "main");
	}
}

static void expand_store(json_t *all, const struct spec *spec, const struct spec_store *s)
{
	json_t *r = resource(all, store_type(s->tier), s->name);
	const struct spec_store *src;

	switch (s->tier) {
	case TIER_OBJECT:
		attr(r, "versioning", json_boolean(s->versioning));
		attr(r, "expire_noncurrent_after", json_integer(s->expire_noncurrent_after));
		break;
	case TIER_LUSTRE:
		attr(r, "capacity_gb", json_integer(s->capacity_gb));
		attr(r, "throughput_per_tib", json_integer(s->throughput_per_tib));
		attr(r, "import", str_or_null(s->import.name));
		attr(r, "mount", str_or_null(s->mount));
		dep(r, "sim_network", "main");
		src = s->import.name ? spec_store_find(spec, s->import.name) : NULL;
		if (src)
			dep(r, store_type(src->tier), src->name);
		break;
	case TIER_NFS:
		attr(r, "mount", str_or_null(s->mount));
		dep(r, "sim_network", "main");
		break;
	}
	attr(r, "encrypted", json_boolean(s->encrypted));
	attr(r, "deletion", json_string(deletion_name(s->deletion)));
}

static json_t *store_names(const struct spec_ref *refs, size_t n)
{
	const char **v = xcalloc(n + 1, sizeof(*v));
	json_t *arr;
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = refs[i].name;
	arr = sorted_strings(v, n);
	free(v);
	return arr;
}

static void expand_role(json_t *all, const struct spec *spec, const struct spec_role *role)
{
	json_t *r = resource(all, "sim_role", role->name);
	size_t i;

	attr(r, "service", json_string("ec2"));
	r = resource(all, "sim_role_policy", role->name);
	attr(r, "read", store_names(role->read, role->nread));
	attr(r, "write", store_names(role->write, role->nwrite));
	dep(r, "sim_role", role->name);
	for (i = 0; i < role->nread + role->nwrite; i++) {
		const struct spec_ref *ref =
		    i < role->nread ? &role->read[i] : &role->write[i - role->nread];
		const struct spec_store *s = spec_store_find(spec, ref->name);

		if (s)
			dep(r, store_type(s->tier), s->name);
	}
}

int sim_expand(struct prov_ctx *ctx, const struct spec *spec, json_t **out, struct kiln_error *err)
{
	json_t *all = json_object();
	bool network = spec->network.node || spec->ngroups > 0;
	size_t i;

	(void)ctx;
	*out = NULL;
	for (i = 0; i < spec->nstores; i++)
		network |= spec->stores[i].tier != TIER_OBJECT;
	if (network)
		expand_network(all, spec);
	for (i = 0; i < spec->ngroups; i++) {
		if (expand_group(all, spec, &spec->groups[i], err) != PROV_OK) {
			json_decref(all);
			return PROV_ERROR;
		}
	}
	for (i = 0; i < spec->nstores; i++)
		expand_store(all, spec, &spec->stores[i]);
	for (i = 0; i < spec->nroles; i++)
		expand_role(all, spec, &spec->roles[i]);
	sort_deps(all);
	*out = all;
	return PROV_OK;
}
