/*
 * validate.c - cross-section rules over a loaded spec; see validate.h.
 */
#include "validate.h"

#include "audit.h"
#include "log.h"
#include "provider.h"
#include "workload_spec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct checker {
	const struct spec *spec;
	struct diags *d;
};

static struct diag *at(struct checker *c, enum diag_severity sev, const struct ynode *n,
		       const char *fmt, ...) KILN_PRINTF(4, 5);
static struct diag *at(struct checker *c, enum diag_severity sev, const struct ynode *n,
		       const char *fmt, ...)
{
	va_list ap;
	char *msg;
	struct diag *dg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	dg = diags_add(c->d, sev, c->spec->file, n ? n->line : 1, n ? n->col : 1, "%s", msg);
	free(msg);
	return dg;
}

/* An unknown reference, with the closest existing name as the hint. */
static void unknown_ref(struct checker *c, const struct spec_ref *ref, const char *path,
			const char *what, const char *const *names, size_t n, const char *fix)
{
	struct diag *dg =
	    at(c, DIAG_ERROR, ref->node, "%s: %s '%s' is not defined", path, what, ref->name);
	const char *near = str_closest(ref->name, names, n);

	if (near)
		diag_hint(dg, "did you mean '%s'?", near);
	else
		diag_hint(dg, "%s", fix);
}

static const char **store_names(const struct spec *spec)
{
	const char **v = xcalloc(spec->nstores + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < spec->nstores; i++)
		v[i] = spec->stores[i].name;
	return v;
}

/* Length of the region a zone starts with: letters-...-digits (us-west-2 of us-west-2-lax-1a). */
static size_t region_prefix(const char *z)
{
	const char *p = z;

	for (;;) {
		const char *start = p;

		while (islower((unsigned char)*p))
			p++;
		if (p == start || *p != '-')
			return 0;
		p++;
		if (isdigit((unsigned char)*p)) {
			while (isdigit((unsigned char)*p))
				p++;
			return (size_t)(p - z);
		}
	}
}

/* A zone is its region and a letter (us-east-1a), or a local zone (us-west-2-lax-1a). */
static bool zone_in_region(const char *zone, const char *region)
{
	size_t rl = strlen(region), zl = strlen(zone);

	if (strncmp(zone, region, rl) != 0 || zl <= rl || !islower((unsigned char)zone[zl - 1]))
		return false;
	if (zl == rl + 1)
		return true;
	return zone[rl] == '-' &&
	       strspn(zone + rl + 1, "abcdefghijklmnopqrstuvwxyz0123456789-") == zl - rl - 1;
}

static void check_provider(struct checker *c)
{
	const struct spec *spec = c->spec;
	const struct ynode *p = spec->provider.node;
	const char *region = spec->provider.region;
	const struct provider *prov;
	char *derived = NULL;
	size_t i;

	if (!spec->provider.name)
		return;
	prov = provider_find(spec->provider.name);
	if (region && prov && prov->check_region && !prov->check_region(spec, region, NULL, c->d))
		return;
	/* Without a region (the environment decides at plan time) the zones still name one. */
	if (!region && spec->provider.nzones > 0) {
		const char *z = spec->provider.zones[0].name;

		derived = xstrndup(z, region_prefix(z));
		region = derived;
		if (prov && prov->check_region &&
		    !prov->check_region(spec, region, &spec->provider.zones[0], c->d))
			goto out;
	}
	for (i = 0; region && i < spec->provider.nzones; i++) {
		const struct spec_ref *z = &spec->provider.zones[i];

		if (!zone_in_region(z->name, region))
			diag_hint(at(c, DIAG_ERROR, z->node ? z->node : p,
				     "zone '%s' is not in region '%s'", z->name, region),
				  "a zone is its region and a letter, like %sa", region);
	}
out:
	free(derived);
}

static void check_fabric(struct checker *c)
{
	const struct spec *spec = c->spec;
	size_t i;

	/*
	 * A list of zones is an order of preference: a gang group that finds no
	 * capacity is retried whole in the next zone, fabric and all. A group that
	 * is not a gang could be left half in one zone, and EFA never crosses a zone.
	 */
	if (spec->network.fabric != FABRIC_EFA || spec->provider.nzones < 2)
		return;
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];

		if (g->gang_set && !g->gang)
			diag_hint(
			    at(c, DIAG_ERROR, ydoc_get(g->node, "gang"),
			       "compute.%s has gang: false, but fabric: efa with more than one "
			       "zone needs every group to move between zones whole",
			       g->name),
			    "set gang: true, or list a single zone");
	}
}

static void check_unencrypted(struct checker *c, const struct ynode *section, const char *path,
			      bool encrypted, bool allow)
{
	if (!encrypted && !allow)
		diag_hint(at(c, DIAG_ERROR, spec_value_node(section, "encrypted"),
			     "%s.encrypted: false needs allow_unencrypted: true beside it", path),
			  "keep encryption at rest, or add allow_unencrypted: true (kiln audit "
			  "reports it)");
	else if (encrypted && allow)
		at(c, DIAG_WARNING, spec_value_node(section, "allow_unencrypted"),
		   "%s.allow_unencrypted has no effect while encryption is on", path);
}

static void check_groups(struct checker *c)
{
	const struct spec *spec = c->spec;
	const struct provider *prov = provider_find(spec->provider.name);
	const char **roles = xcalloc(spec->nroles + 1, sizeof(*roles));
	bool any_public = false, public_unknown = false;
	size_t i;

	for (i = 0; i < spec->nroles; i++)
		roles[i] = spec->roles[i].name;
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		char *path = xasprintf("compute.%s", g->name);

		any_public |= g->public;
		public_unknown |= g->public_bad;
		if (g->role.name && !(spec->broken & SPEC_BROKEN_IAM) &&
		    !spec_role_find(spec, g->role.name)) {
			char *rpath = xasprintf("%s.role", path);

			unknown_ref(c, &g->role, rpath, "role", roles, spec->nroles,
				    "define it under iam.roles");
			free(rpath);
		}
		if (prov && prov->check_group)
			prov->check_group(spec, g, c->d);
		{
			const struct ynode *disk = ydoc_get(g->node, "disk");
			char *dpath = xasprintf("%s.disk", path);

			if (disk)
				check_unencrypted(c, disk, dpath, g->disk.encrypted,
						  g->disk.allow_unencrypted);
			free(dpath);
		}
		free(path);
	}
	free(roles);
	if (spec->broken & SPEC_BROKEN_NETWORK)
		return;
	for (i = 0; i < spec->ngroups && spec->network.ningress == 0; i++) {
		const struct spec_group *g = &spec->groups[i];

		if (g->public)
			diag_hint(at(c, DIAG_WARNING, ydoc_get(g->node, "public"),
				     "compute.%s is public, but network.ingress admits nothing",
				     g->name),
				  "add a rule like {port: 22, from: 203.0.113.0/24}");
	}
	if (spec->network.ningress > 0 && !any_public && !public_unknown &&
	    !(spec->broken & SPEC_BROKEN_COMPUTE))
		diag_hint(at(c, DIAG_WARNING, ydoc_get(spec->network.node, "ingress"),
			     "network.ingress reaches only groups with public: true, and none is"),
			  "set public: true on the group that should be reachable");
}

/* A local store's groups: each a compute group; only one local store per group. */
static void check_local(struct checker *c, const struct spec_store *s)
{
	const struct spec *spec = c->spec;
	const char **names = xcalloc(spec->ngroups + 1, sizeof(*names));
	char *path = xasprintf("storage.%s.groups", s->name);
	size_t i, j;

	for (i = 0; i < spec->ngroups; i++)
		names[i] = spec->groups[i].name;
	for (i = 0; i < s->ngroups && !(spec->broken & SPEC_BROKEN_COMPUTE); i++)
		if (!spec_group_find(spec, s->groups[i].name))
			unknown_ref(c, &s->groups[i], path, "compute group", names, spec->ngroups,
				    "define it under compute:");
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];

		for (j = 0; j < spec->nstores && &spec->stores[j] != s; j++)
			if (spec_local_on(&spec->stores[j], g) && spec_local_on(s, g)) {
				diag_hint(
				    at(c, DIAG_ERROR, s->key,
				       "storage.%s: compute.%s already has the local store "
				       "'%s'",
				       s->name, g->name, spec->stores[j].name),
				    "a node's instance store makes one local store: list each "
				    "group under one local store's groups:");
				break;
			}
	}
	free(path);
	free(names);
}

static void check_stores(struct checker *c)
{
	const struct spec *spec = c->spec;
	const char **names = store_names(spec);
	size_t i, j;

	for (i = 0; i < spec->nstores; i++) {
		const struct spec_store *s = &spec->stores[i];
		char *path = xasprintf("storage.%s", s->name);

		if (s->import.name) {
			const struct spec_store *src = spec_store_find(spec, s->import.name);

			char *ipath = xasprintf("%s.import", path);

			if (!src && (spec->broken & SPEC_BROKEN_STORAGE))
				; /* it may be the store that failed to load */
			else if (!src)
				unknown_ref(c, &s->import, ipath, "store", names, spec->nstores,
					    "define it under storage: with tier: object");
			else if (src->tier != TIER_OBJECT)
				diag_hint(at(c, DIAG_ERROR, s->import.node,
					     "%s.import: '%s' is %s store; imports come from an "
					     "object store",
					     path, src->name, spec_tier_with_article(src->tier)),
					  "import from a store with tier: object");
			free(ipath);
		}
		if (s->expire_noncurrent_after && !s->versioning)
			diag_hint(at(c, DIAG_ERROR, ydoc_get(s->node, "expire_noncurrent_after"),
				     "%s.expire_noncurrent_after needs versioning: true", path),
				  "add versioning: true, or remove expire_noncurrent_after");
		if (s->tier == TIER_LOCAL)
			check_local(c, s);
		else if (s->tier != TIER_LUSTRE)
			check_unencrypted(c, s->node, path, s->encrypted, s->allow_unencrypted);
		for (j = 0; j < i && s->mount; j++) {
			const struct spec_store *o = &spec->stores[j];

			if (o->mount && strcmp(o->mount, s->mount) == 0)
				diag_hint(
				    at(c, DIAG_ERROR, spec_value_node(s->node, "mount"),
				       "%s.mount: %s is already the mount point of store '%s'",
				       path, s->mount, o->name),
				    "give each file system its own mount:");
		}
		free(path);
	}
	free(names);
}

static void check_role_refs(struct checker *c, const struct spec_role *r, const char *key,
			    const struct spec_ref *refs, size_t n, const char **names)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct spec_store *s = spec_store_find(c->spec, refs[i].name);

		if (s && s->tier == TIER_LOCAL)
			diag_hint(
			    at(c, DIAG_ERROR, refs[i].node,
			       "iam.roles.%s.%s: '%s' is a local store, the nodes' own disks, "
			       "which no role reaches",
			       r->name, key, s->name),
			    "remove it here; storage.%s.groups says which groups have it", s->name);
		if (!s) {
			char *path = xasprintf("iam.roles.%s.%s", r->name, key);

			unknown_ref(c, &refs[i], path, "store", names, c->spec->nstores,
				    "define it under storage:");
			free(path);
			continue;
		}
		for (j = 0; j < i; j++)
			if (strcmp(refs[j].name, refs[i].name) == 0)
				at(c, DIAG_WARNING, refs[i].node,
				   "iam.roles.%s lists store '%s' twice", r->name, refs[i].name);
	}
}

static void check_roles(struct checker *c)
{
	const struct spec *spec = c->spec;
	const char **names = store_names(spec);
	size_t i, j, k;

	for (i = 0; i < spec->nroles; i++) {
		const struct spec_role *r = &spec->roles[i];
		bool used = false;

		if (!(spec->broken & SPEC_BROKEN_STORAGE)) {
			check_role_refs(c, r, "read", r->read, r->nread, names);
			check_role_refs(c, r, "write", r->write, r->nwrite, names);
		}
		for (j = 0; j < r->nwrite; j++)
			for (k = 0; k < r->nread; k++)
				if (strcmp(r->write[j].name, r->read[k].name) == 0)
					diag_hint(
					    at(c, DIAG_WARNING, r->read[k].node,
					       "iam.roles.%s lists '%s' under both read and write",
					       r->name, r->read[k].name),
					    "write includes read; remove it from read");
		for (j = 0; j < spec->ngroups; j++)
			used |= spec->groups[j].role.name &&
				strcmp(spec->groups[j].role.name, r->name) == 0;
		if (!used && !(spec->broken & SPEC_BROKEN_COMPUTE))
			diag_hint(at(c, DIAG_WARNING, r->key,
				     "role '%s' is used by no compute group", r->name),
				  "set role: %s on a group, or remove the role", r->name);
	}
	free(names);
}

/* Where a partition: or default: key sits, for messages: the key, else the group. */
static const struct ynode *partition_at(const struct spec_group *g)
{
	if (g->partition_node)
		return ydoc_key(g->node, "partition");
	return g->default_node ? ydoc_key(g->node, "default") : g->key;
}

/* partition: and default: on groups, which only mean something under a scheduler. */
static void check_partitions(struct checker *c, const struct spec_group *ctl)
{
	const struct spec *spec = c->spec;
	const struct spec_group *dflt = NULL;
	size_t i, j, npart = 0;

	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];

		if (!g->partition_node && !g->default_node)
			continue;
		if (spec->scheduler.type == SCHEDULER_NONE) {
			if (spec->scheduler.node)
				continue; /* scheduler: was there and reported */
			diag_hint(
			    at(c, DIAG_ERROR, partition_at(g),
			       "compute.%s: partition and default need a scheduler", g->name),
			    "add scheduler: {type: slurm, controller: GROUP}, or remove them");
			continue;
		}
		if (g == ctl) {
			diag_hint(at(c, DIAG_ERROR, partition_at(g),
				     "compute.%s: the controller group runs slurmctld and is no "
				     "partition",
				     g->name),
				  "remove partition and default here; every other group is a "
				  "partition");
			continue;
		}
		if (!g->partition_default)
			continue;
		if (dflt) {
			diag_hint(at(c, DIAG_ERROR, ydoc_key(g->node, "default"),
				     "compute.%s.default: '%s' is already the default partition "
				     "(compute.%s, line %d)",
				     g->name, spec_group_partition(spec, dflt), dflt->name,
				     dflt->default_node->line),
				  "keep default: true on one group");
			continue;
		}
		dflt = g;
	}
	if (spec->scheduler.type == SCHEDULER_NONE)
		return;
	for (i = 0; i < spec->ngroups; i++) {
		const char *part = spec_group_partition(spec, &spec->groups[i]);

		if (!part)
			continue;
		npart++;
		for (j = 0; j < i; j++) {
			const char *other = spec_group_partition(spec, &spec->groups[j]);

			if (other && strcmp(other, part) == 0) {
				diag_hint(at(c, DIAG_ERROR, partition_at(&spec->groups[i]),
					     "compute.%s: partition '%s' is already compute.%s's",
					     spec->groups[i].name, part, spec->groups[j].name),
					  "a partition is one group: give each group its own name");
				break;
			}
		}
	}
	/* The munge key reaches a node through its role, never through its user data. */
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];

		if ((g == ctl || spec_group_partition(spec, g)) && !g->role.name)
			diag_hint(at(c, DIAG_ERROR, g->key,
				     "compute.%s: the nodes of a Slurm cluster read the munge key "
				     "with their group's role, and this group has none",
				     g->name),
				  "set role: NAME (an iam.roles entry; {} grants nothing more)");
	}
	if (npart == 0 && ctl)
		diag_hint(at(c, DIAG_ERROR, spec->scheduler.node,
			     "scheduler: no compute group besides the controller '%s' runs jobs",
			     ctl->name),
			  "add a compute group: each group but the controller is a partition");
}

/* scheduler: its controller is one node of a group of the spec. */
static void check_scheduler(struct checker *c)
{
	const struct spec *spec = c->spec;
	const struct spec_ref *ref = &spec->scheduler.controller;
	const struct spec_group *ctl = NULL;

	if (spec->broken & SPEC_BROKEN_COMPUTE)
		return;
	if (spec->scheduler.type != SCHEDULER_NONE && ref->name) {
		ctl = spec_group_find(spec, ref->name);
		if (!ctl) {
			const char **names = xcalloc(spec->ngroups + 1, sizeof(*names));
			size_t i;

			for (i = 0; i < spec->ngroups; i++)
				names[i] = spec->groups[i].name;
			unknown_ref(c, ref, "scheduler.controller", "compute group", names,
				    spec->ngroups, "define it under compute: (a login group)");
			free(names);
		} else if (ctl->count != 1) {
			diag_hint(at(c, DIAG_ERROR, ref->node,
				     "scheduler.controller: group '%s' has count %d; the Slurm "
				     "controller is a single node",
				     ctl->name, ctl->count),
				  "set count: 1 on compute.%s, or name a one-node group (a public "
				  "login group is the usual choice)",
				  ctl->name);
		}
	}
	check_partitions(c, ctl);
}

/* The provider's own rules (tags, its catalog): they live with the provider. */
static void check_cloud(struct checker *c)
{
	const struct provider *p;

	if (c->spec->broken & SPEC_BROKEN_PROVIDER)
		return;
	p = provider_find(c->spec->provider.name);
	if (p && p->check_spec)
		p->check_spec(c->spec, c->d);
}

int validate_spec(const struct spec *spec, struct diags *d)
{
	struct checker c = {spec, d};
	size_t errors = d->errors;

	if (!spec->root || spec->root->kind != YNODE_MAP)
		return d->errors > errors ? -1 : 0;
	check_provider(&c);
	check_fabric(&c);
	check_groups(&c);
	check_stores(&c);
	check_roles(&c);
	check_scheduler(&c);
	check_cloud(&c);
	return d->errors > errors ? -1 : 0;
}

/*
 * What the groups leave to the workload, from the provider's catalog: before
 * the checks, which then see every group whole.
 */
static void derive_from_workload(struct spec *spec, struct diags *d)
{
	const struct provider *p = provider_find(spec->provider.name);

	if (spec->workload.set && p && p->catalog)
		workload_spec_derive(spec, p->catalog(NULL), d);
}

static int load(struct spec **out, const char *path, const char *buf, size_t len,
		const struct spec_options *opts, struct diags *d, bool today)
{
	size_t errors = d->errors;
	struct spec *spec = NULL;
	struct spec_options o = opts ? *opts : (struct spec_options){0};

	*out = NULL;
	o.providers = providers_for_spec(&o.nproviders);
	if (buf)
		spec_load_buffer(&spec, spec_file_name(path), buf, len, &o, d);
	else
		spec_load_file(&spec, path, &o, d);
	if (spec && d->errors == errors)
		derive_from_workload(spec, d);
	if (spec)
		validate_spec(spec, d);
	if (spec && today) {
		struct kiln_error err = {{0}, {0}};

		if (audit_check_waivers(spec, d, &err) < 0)
			diag_hint(diags_add(d, DIAG_ERROR, spec->file, 0, 0, "%s", err.msg), "%s",
				  err.hint);
	}
	if (spec)
		log_debug("%s: %zu groups, %zu stores, %zu roles, %zu errors, %zu warnings",
			  spec->file, spec->ngroups, spec->nstores, spec->nroles,
			  d->errors - errors, d->warnings);
	if (d->errors > errors) {
		spec_free(spec);
		return -1;
	}
	*out = spec;
	return 0;
}

int validate_load(struct spec **out, const char *path, const struct spec_options *opts,
		  struct diags *d)
{
	return load(out, path, NULL, 0, opts, d, false);
}

int validate_load_buffer(struct spec **out, const char *path, const char *buf, size_t len,
			 const struct spec_options *opts, struct diags *d)
{
	return load(out, path, buf, len, opts, d, false);
}

int validate_load_today(struct spec **out, const char *path, const struct spec_options *opts,
			struct diags *d)
{
	return load(out, path, NULL, 0, opts, d, true);
}
