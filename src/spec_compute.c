/*
 * spec_compute.c - the compute section: node groups, their GPUs or instance
 * type, count, market, image, disk and role.
 */
#include "spec.h"
#include "spec_load.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const spec_group_keys[] = {
    "gpu",  "instance_type", "count",	  "gang",   "market",	 "capacity", "image", "disk",
    "role", "public",	     "bootstrap", "health", "partition", "default",  "idle"};
const char *const spec_disk_keys[] = {"size_gb", "type", "encrypted", "allow_unencrypted"};

static bool load_gpu(struct loader *ld, const struct ynode *g, const char *path,
		     struct spec_group *grp)
{
	char *s = NULL, *colon, *end, *p;
	long count;
	bool ok = true;
	struct diag *dg;

	enum got got = spec_get_string(ld, g, "gpu", path, false, &s);

	if (got != GOT_OK)
		return got == GOT_NONE;
	colon = strchr(s, ':');
	for (p = s; colon && p < colon; p++)
		if (!isalnum((unsigned char)*p))
			break;
	if (!colon || colon == s || p != colon) {
		dg = spec_err(ld, ydoc_get(g, "gpu"),
			      "%s must be MODEL:COUNT, like H100:8, got '%s'", path, s);
		diag_hint(dg, "or name the machine with instance_type: instead");
		free(s);
		return false;
	}
	errno = 0;
	count = strtol(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || count < 1 || count > 16) {
		spec_err(ld, ydoc_get(g, "gpu"), "%s: GPU count must be between 1 and 16, got '%s'",
			 path, colon + 1);
		ok = false;
	}
	*colon = '\0';
	for (p = s; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	grp->gpu_model = xstrdup(s);
	grp->gpu_count = (int)count;
	free(s);
	return ok;
}

static bool instance_type_ok(const char *s)
{
	const char *dot = strchr(s, '.');
	const char *p;

	if (!dot || dot == s || !dot[1] || strchr(dot + 1, '.') || strlen(s) > 64)
		return false;
	for (p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' ||
		      *p == '.'))
			return false;
	return true;
}

static bool load_disk(struct loader *ld, const struct ynode *grp_node, const char *gpath,
		      struct spec_disk *disk)
{
	const struct ynode *dn = ydoc_get(grp_node, "disk");
	char *path = xasprintf("%s.disk", gpath), *sub;
	int type = 0;
	bool ok = true;

	disk->size_gb = 200;
	disk->encrypted = true;
	disk->type = xstrdup("gp3");
	if (!dn)
		goto out;
	if (!spec_expect_map(ld, dn, path)) {
		ok = false;
		goto out;
	}
	ok &= spec_check_keys(ld, dn, "in a compute group's disk", spec_disk_keys,
			      ARRAY_SIZE(spec_disk_keys));
	sub = xasprintf("%s.size_gb", path);
	ok &= spec_get_int(ld, dn, "size_gb", sub, false, 8, 65536, &disk->size_gb) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.type", path);
	if (spec_get_enum(ld, dn, "type", sub, false, spec_disk_types, ARRAY_SIZE(spec_disk_types),
			  &type) == GOT_OK) {
		free(disk->type);
		disk->type = xstrdup(spec_disk_types[type]);
	} else if (ydoc_get(dn, "type")) {
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.encrypted", path);
	ok &= spec_get_bool(ld, dn, "encrypted", sub, &disk->encrypted) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.allow_unencrypted", path);
	ok &= spec_get_bool(ld, dn, "allow_unencrypted", sub, &disk->allow_unencrypted) != GOT_BAD;
	free(sub);
out:
	free(path);
	return ok;
}

void spec_load_group(struct loader *ld, const struct ynode *key, const struct ynode *g)
{
	struct spec *spec = ld->spec;
	struct spec_group *grp;
	char *path = xasprintf("compute.%s", key->value), *sub;
	int market = MARKET_ON_DEMAND;
	bool ok = true;
	char *where;

	ok &= spec_check_name(ld, key, "compute group");
	if (!spec_expect_map(ld, g, path)) {
		spec->broken |= SPEC_BROKEN_COMPUTE;
		free(path);
		return;
	}
	grp = ARRAY_PUSH(spec->groups, spec->ngroups, spec->groups_cap);
	memset(grp, 0, sizeof(*grp));
	grp->name = xstrdup(key->value);
	grp->key = key;
	grp->node = g;
	grp->count = 1;
	where = xasprintf("in compute group '%s'", key->value);
	ok &= spec_check_keys(ld, g, where, spec_group_keys, ARRAY_SIZE(spec_group_keys));
	free(where);

	sub = xasprintf("%s.idle", path);
	spec_load_idle(ld, ydoc_get(g, "idle"), sub, &grp->idle);
	free(sub);
	sub = xasprintf("%s.gpu", path);
	grp->machine_bad = !load_gpu(ld, g, sub, grp);
	free(sub);
	sub = xasprintf("%s.instance_type", path);
	if (spec_get_string(ld, g, "instance_type", sub, false, &grp->instance_type) == GOT_OK &&
	    !instance_type_ok(grp->instance_type)) {
		struct diag *dg =
		    spec_err(ld, ydoc_get(g, "instance_type"),
			     "%s: '%s' is not an instance type name", sub, grp->instance_type);

		diag_hint(dg, "write FAMILY.SIZE in lower case, like p5.48xlarge");
		grp->machine_bad = true;
	} else if (ydoc_get(g, "instance_type") && !grp->instance_type) {
		grp->machine_bad = true;
	}
	free(sub);
	if (ydoc_get(g, "gpu") && ydoc_get(g, "instance_type")) {
		struct diag *dg = spec_err(ld, ydoc_key(g, "instance_type"),
					   "%s sets both gpu and instance_type", path);

		diag_hint(dg, "keep one: gpu picks the cheapest instance type that has those GPUs");
		grp->machine_bad = true;
	} else if (!ydoc_get(g, "gpu") && !ydoc_get(g, "instance_type") && ld->spec->workload.set) {
		/* validate sizes the workload and names the type (workload_spec_derive); until
		 * then, or when it cannot, the catalog has nothing to be asked about */
		grp->type_derived = true;
		grp->machine_bad = true;
	} else if (!ydoc_get(g, "gpu") && !ydoc_get(g, "instance_type")) {
		struct diag *dg = spec_err(ld, key, "%s needs gpu or instance_type", path);

		diag_hint(dg, "add gpu: MODEL:COUNT (like H100:8) or instance_type: NAME");
		grp->machine_bad = true;
	}
	ok &= !grp->machine_bad;
	sub = xasprintf("%s.count", path);
	{
		enum got gc =
		    spec_get_int(ld, g, "count", sub, false, 0, SPEC_MAX_COUNT, &grp->count);

		grp->count_set = gc == GOT_OK;
		ok &= gc != GOT_BAD;
	}
	free(sub);
	sub = xasprintf("%s.gang", path);
	{
		enum got gg = spec_get_bool(ld, g, "gang", sub, &grp->gang);

		grp->gang_set = gg == GOT_OK;
		/* A fabric means a multi-node job: all nodes or none, unless said otherwise. */
		if (!grp->gang_set)
			grp->gang = ld->spec->network.fabric != FABRIC_NONE;
		ok &= gg != GOT_BAD;
	}
	free(sub);
	sub = xasprintf("%s.market", path);
	ok &= spec_get_enum(ld, g, "market", sub, false, spec_market_names, 2, &market) != GOT_BAD;
	grp->market = (enum spec_market)market;
	free(sub);
	ok &= spec_load_capacity(ld, g, path, grp);
	sub = xasprintf("%s.image", path);
	ok &= spec_get_string(ld, g, "image", sub, false, &grp->image) != GOT_BAD;
	free(sub);
	ok &= load_disk(ld, g, path, &grp->disk);
	sub = xasprintf("%s.role", path);
	if (spec_get_string(ld, g, "role", sub, false, &grp->role.name) == GOT_OK)
		grp->role.node = ydoc_get(g, "role");
	else if (ydoc_get(g, "role"))
		ok = false;
	free(sub);
	sub = xasprintf("%s.public", path);
	grp->public_bad = spec_get_bool(ld, g, "public", sub, &grp->public) == GOT_BAD;
	ok &= !grp->public_bad;
	free(sub);
	ok &= spec_load_group_partition(ld, g, path, grp);
	sub = xasprintf("%s.bootstrap", path);
	spec_load_bootstrap(ld, ydoc_get(g, "bootstrap"), sub, &grp->bootstrap, &grp->nbootstrap);
	free(sub);
	spec_load_health(ld, g, path, grp);
	(void)ok; /* the group is in the spec either way: references to it still resolve */
	free(path);
}

/* Where a store's data appears on the nodes; the system's own trees are refused. */
