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

#include "bootstrap.h"
#include "expand.h"

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
	case TIER_LOCAL:
	case TIER_OBJECT:
		break;
	}
	return "sim_bucket";
}

/*
 * The sim's file systems have simulated names, under the reserved .invalid
 * domain so that no real node could ever mount one by mistake.
 */
static void sim_boot_source(const struct spec *spec, const struct spec_store *s, bool zoned,
			    char **source, char **find, char **why)
{
	(void)zoned;
	(void)find;
	if (s->tier == TIER_LUSTRE)
		*source =
		    xasprintf("%s.lustre.%s.sim.invalid@tcp:/%s", s->name, spec->cluster, s->name);
	else
		*source = xasprintf("%s.nfs.%s.sim.invalid:/", s->name, spec->cluster);
	*why = xstrdup("simulated: the sim's name for it");
}

/*
 * The sim's nodes boot nothing: the report a real node would tag goes to a
 * file, and its tags are read from files (/var/lib/kiln/tags/KEY), so that
 * the TTL timer's script runs in the boot sandbox as on aws.
 */
static const struct boot_cloud sim_boot = {
    .report = "printf '%s\\n' \"$1\" >/var/lib/kiln/health",
    .source = sim_boot_source,
    .read_tag = "[ -d /var/lib/kiln/tags ] || return 1\n"
		"\t[ -f \"/var/lib/kiln/tags/$1\" ] || return 3\n"
		"\tcat \"/var/lib/kiln/tags/$1\"",
};

/* A group's Capacity Block, with the window the sim would sell it for now in its notes. */
static void expand_block(json_t *all, const struct spec_group *g, const char *type,
			 const json_t *zones)
{
	json_t *b =
	    expand_capacity_block(all, "sim_capacity_block", g, type, json_deep_copy(zones));
	struct kiln_error err = {0};
	struct sim_block w;
	int64_t now;

	if (timefmt_now(&now, &err) == 0 &&
	    sim_block_window(json_object_get(b, "attrs"), now, &w) == 0) {
		char *line = sim_block_line(&w);

		expand_why(b, "duration_hours", xasprintf("buys the block on offer now: %s", line));
		free(line);
	}
}

void sim_boot_check(const struct spec *spec, struct diags *d)
{
	bootstrap_check_spec(&catalog_aws, spec, &sim_boot, false, d);
}

/* fs: the spec's file systems (lustre, nfs), which every group mounts. */
static int expand_group(json_t *all, const struct spec *spec, const struct spec_group *g,
			const struct spec_store *const *fs, size_t nfs, struct kiln_error *err)
{
	bool fabric_efa = spec->network.fabric == FABRIC_EFA, efa;
	const struct catalog_type *t = NULL;
	char *resolved = NULL;
	json_t *r, *zones;
	size_t i;

	if (expand_group_type("sim: ", &catalog_aws, spec, g, &t, &resolved, err) < 0)
		return PROV_ERROR;
	zones = json_array();
	efa = fabric_efa && t->efa;
	for (i = 0; i < spec->provider.nzones; i++)
		json_array_append_new(zones, json_string(spec->provider.zones[i].name));
	if (spec->provider.nzones == 0)
		json_array_append_new(zones, json_sprintf("%sa", spec->provider.region
								     ? spec->provider.region
								     : SIM_DEFAULT_REGION));
	r = expand_resource(all, "sim_node_group", g->name);
	expand_group_attrs(r, g, t->name, zones, expand_str(g->disk.type), efa, efa);
	expand_access_attrs(r, spec);
	json_object_set_new(r, "sensitive", json_pack("[s]", "join_token"));
	if (resolved)
		expand_why(r, "instance_type", resolved);
	if (fabric_efa && !efa)
		expand_why(
		    r, "efa",
		    xasprintf("%s has no EFA: this group reaches the fabric's network over ENA "
			      "and stays out of the placement group",
			      t->name));
	expand_dep(r, "sim_network", "main");
	if (efa)
		expand_dep(r, "sim_placement_group", "fabric");
	if (g->role.name && spec_role_find(spec, g->role.name)) {
		expand_dep(r, "sim_role", g->role.name);
		expand_dep(r, "sim_role_policy", g->role.name);
	}
	for (i = 0; i < nfs; i++)
		if (bootstrap_mounts_store(spec, g, fs[i]))
			expand_dep(r, store_type(fs[i]->tier), fs[i]->name);
	{
		char *addr = xasprintf("sim_node_group.%s", g->name);
		int rc =
		    bootstrap_group_attrs(r, "sim: ", spec, g, addr, t, efa, &sim_boot, false, err);

		free(addr);
		if (rc < 0)
			return PROV_ERROR;
	}
	if (g->capacity.kind == CAPACITY_BLOCK) {
		expand_block(all, g, t->name, zones);
		expand_dep(r, "sim_capacity_block", g->name);
	}
	return PROV_OK;
}

static void expand_network(json_t *all, const struct spec *spec)
{
	json_t *r = expand_resource(all, "sim_network", "main"), *ingress = json_array();
	size_t i;

	for (i = 0; i < spec->network.ningress; i++) {
		const struct spec_ingress *in = &spec->network.ingress[i];

		json_array_append_new(ingress,
				      json_pack("{s:i, s:i, s:s?, s:s?}", "port_from",
						in->port_from, "port_to", in->port_to, "protocol",
						in->protocol, "from", in->from));
	}
	expand_attr(r, "cidr", expand_str(spec->network.cidr));
	expand_attr(r, "fabric", json_string(spec_fabric_name(spec->network.fabric)));
	expand_attr(r, "ingress", ingress);
	expand_attr(
	    r, "region",
	    json_string(spec->provider.region ? spec->provider.region : SIM_DEFAULT_REGION));
	if (spec->network.fabric == FABRIC_EFA) {
		r = expand_resource(all, "sim_placement_group", "fabric");
		expand_attr(r, "strategy", json_string("cluster"));
		expand_dep(r, "sim_network", "main");
	}
}

static void expand_store(json_t *all, const struct spec *spec, const struct spec_store *s)
{
	json_t *r = expand_resource(all, store_type(s->tier), s->name);
	const struct spec_store *src;

	switch (s->tier) {
	case TIER_OBJECT:
		expand_attr(r, "versioning", json_boolean(s->versioning));
		expand_attr(r, "expire_noncurrent_after", json_integer(s->expire_noncurrent_after));
		break;
	case TIER_LUSTRE:
		expand_attr(r, "capacity_gb", json_integer(s->capacity_gb));
		expand_attr(r, "throughput_per_tib", json_integer(s->throughput_per_tib));
		expand_attr(r, "import", expand_str(s->import.name));
		expand_attr(r, "mount", expand_str(s->mount));
		expand_dep(r, "sim_network", "main");
		src = s->import.name ? spec_store_find(spec, s->import.name) : NULL;
		if (src)
			expand_dep(r, store_type(src->tier), src->name);
		break;
	case TIER_NFS:
		expand_attr(r, "mount", expand_str(s->mount));
		expand_dep(r, "sim_network", "main");
		break;
	case TIER_LOCAL:
		break;
	}
	expand_attr(r, "encrypted", json_boolean(s->encrypted));
	expand_deletion(r, s);
}

static void expand_role(json_t *all, const struct spec *spec, const struct spec_role *role)
{
	json_t *r = expand_resource(all, "sim_role", role->name);
	size_t i;

	expand_attr(r, "service", json_string("ec2"));
	r = expand_resource(all, "sim_role_policy", role->name);
	/* The same shape as aws's: buckets, nfs stores apart, lustre nowhere. */
	expand_role_policy_attrs(r, spec, role,
				 "Lustre clients mount over the network (the network's security "
				 "group), not through IAM, so the policy grants nothing for lustre "
				 "stores, as on aws");
	expand_dep(r, "sim_role", role->name);
	for (i = 0; i < role->nread + role->nwrite; i++) {
		const struct spec_ref *ref =
		    i < role->nread ? &role->read[i] : &role->write[i - role->nread];
		const struct spec_store *s = spec_store_find(spec, ref->name);

		if (s && s->tier != TIER_LUSTRE)
			expand_dep(r, store_type(s->tier), s->name);
	}
}

int sim_expand(struct prov_ctx *ctx, const struct spec *spec, json_t **out, struct kiln_error *err)
{
	json_t *all = json_object();
	size_t i, nfs;
	const struct spec_store **fs = expand_file_systems(spec, &nfs);

	(void)ctx;
	*out = NULL;
	if (spec->network.node || spec->ngroups > 0 || nfs > 0)
		expand_network(all, spec);
	for (i = 0; i < spec->ngroups; i++) {
		if (expand_group(all, spec, &spec->groups[i], fs, nfs, err) != PROV_OK) {
			free(fs);
			json_decref(all);
			return PROV_ERROR;
		}
	}
	free(fs);
	for (i = 0; i < spec->nstores; i++)
		if (spec->stores[i].tier != TIER_LOCAL)
			expand_store(all, spec, &spec->stores[i]);
	for (i = 0; i < spec->nroles; i++)
		expand_role(all, spec, &spec->roles[i]);
	expand_sort_deps(all);
	*out = all;
	return PROV_OK;
}
