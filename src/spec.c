/*
 * spec.c - YAML tree to typed spec; see spec.h.
 *
 * Each section has a loader that checks its keys against the keys it knows,
 * reads every value through one typed getter (which substitutes ${var.NAME}
 * and names the dotted path in its errors) and keeps going after an error, so
 * one run reports every problem. Cross-section rules are validate.c's.
 */
#include "spec.h"
#include "spec_load.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


const char *const spec_top_keys[] = {
    "kiln",    "cluster", "provider", "ttl", "ttl_grace", "budget", "idle",	    "tags",	 "vars",
    "network", "compute", "storage",  "iam", "waive",  "bootstrap", "scheduler", "access",
    "workload"};
const char *const spec_provider_keys[] = {"name", "region", "zone", "endpoint"};
const char *const spec_budget_keys[] = {"max_hourly_usd", "max_upfront_usd"};
const char *const spec_network_keys[] = {"cidr", "fabric", "ingress"};
const char *const spec_ingress_keys[] = {"port", "from", "protocol", "description"};

static void load_vars(struct loader *ld, const struct ynode *vars)
{
	struct spec *spec = ld->spec;
	size_t i;

	if (vars && spec_expect_map(ld, vars, "vars")) {
		for (i = 0; i < vars->n; i++) {
			const struct ynode *k = vars->keys[i], *v = vars->vals[i];
			struct spec_var *var;

			if (!spec_var_name_ok(k->value, k->len)) {
				spec_err(ld, k,
					 "variable name '%s' must be letters, digits and '_', "
					 "not starting with a digit",
					 k->value);
				continue;
			}
			if (v->kind != YNODE_SCALAR) {
				spec_err(ld, v, "vars.%s must be a single value, got %s", k->value,
					 ydoc_describe(v));
				continue;
			}
			var = ARRAY_PUSH(spec->vars, spec->nvars, spec->vars_cap);
			memset(var, 0, sizeof(*var));
			var->name = xstrdup(k->value);
			/* `image:` with no value declares a variable that --var must set. */
			var->value = ydoc_is_null(v) ? NULL : xstrdup(v->value);
			var->node = v;
		}
	}
	if (!ld->opts)
		return;
	for (i = 0; i < ld->opts->nvars; i++) {
		const struct spec_var_override *o = &ld->opts->vars[i];
		struct spec_var *var = spec_var_find(spec, o->name, strlen(o->name));

		if (!var) {
			var = ARRAY_PUSH(spec->vars, spec->nvars, spec->vars_cap);
			memset(var, 0, sizeof(*var));
			var->name = xstrdup(o->name);
		} else {
			free(var->value);
		}
		var->value = xstrdup(o->value);
		var->from_cli = true;
	}
}

/* The provider named name among those the caller handed the loader, or NULL. */
static const struct spec_provider *provider_named(const struct loader *ld, const char *name)
{
	size_t i;

	for (i = 0; name && ld->opts && i < ld->opts->nproviders; i++)
		if (strcmp(ld->opts->providers[i].name, name) == 0)
			return &ld->opts->providers[i];
	return NULL;
}

/* The first simulated provider's name, for the hint of a spec that names none. */
static const char *provider_to_try(const struct loader *ld)
{
	size_t i;

	for (i = 0; ld->opts && i < ld->opts->nproviders; i++)
		if (ld->opts->providers[i].simulated)
			return ld->opts->providers[i].name;
	return NULL;
}

static void load_provider(struct loader *ld, const struct ynode *root)
{
	struct spec *spec = ld->spec;
	const struct ynode *p = ydoc_get(root, "provider"), *zone;
	const struct spec_provider *prov;
	size_t i, nnames = ld->opts ? ld->opts->nproviders : 0;
	const char **names = xcalloc(nnames + 1, sizeof(*names));
	int which = -1;

	if (!p) {
		struct diag *dg = spec_err(ld, root, "missing required key 'provider'");

		if (provider_to_try(ld))
			diag_hint(dg,
				  "add `provider: {name: %s}` to try kiln without a cloud account",
				  provider_to_try(ld));
		spec->broken |= SPEC_BROKEN_PROVIDER;
		free(names);
		return;
	}
	for (i = 0; i < nnames; i++)
		names[i] = ld->opts->providers[i].name;
	spec->provider.node = p;
	if (!spec_expect_map(ld, p, "provider")) {
		spec->broken |= SPEC_BROKEN_PROVIDER;
		free(names);
		return;
	}
	if (!spec_check_keys(ld, p, "in provider", spec_provider_keys,
			     ARRAY_SIZE(spec_provider_keys)))
		spec->broken |= SPEC_BROKEN_PROVIDER;
	if (spec_get_enum(ld, p, "name", "provider.name", true, names, nnames, &which) == GOT_OK)
		spec->provider.name = xstrdup(names[which]);
	else
		spec->broken |= SPEC_BROKEN_PROVIDER;
	free(names);
	if (spec_get_string(ld, p, "region", "provider.region", false, &spec->provider.region) ==
	    GOT_BAD)
		spec->broken |= SPEC_BROKEN_PROVIDER;
	if (spec_get_string(ld, p, "endpoint", "provider.endpoint", false,
			    &spec->provider.endpoint) == GOT_OK &&
	    !str_starts_with(spec->provider.endpoint, "http://") &&
	    !str_starts_with(spec->provider.endpoint, "https://")) {
		spec_err(ld, ydoc_get(p, "endpoint"),
			 "provider.endpoint must be an http:// or https:// URL, "
			 "got '%s'",
			 spec->provider.endpoint);
		spec->broken |= SPEC_BROKEN_PROVIDER;
	}
	zone = ydoc_get(p, "zone");
	prov = provider_named(ld, spec->provider.name);
	if (prov && prov->defaults)
		prov->defaults(spec, zone != NULL);
	if (!zone)
		return;
	if (zone->kind == YNODE_SCALAR && !ydoc_is_null(zone)) {
		char *z = spec_scalar(ld, zone, "provider.zone");

		if (z) {
			spec->provider.zones = xcalloc(1, sizeof(*spec->provider.zones));
			spec->provider.zones[0].name = z;
			spec->provider.zones[0].node = zone;
			spec->provider.nzones = 1;
		}
		return;
	}
	if (zone->kind != YNODE_SEQ || zone->n == 0) {
		spec_err(ld, zone,
			 "provider.zone must be a zone or a non-empty list of zones, got %s",
			 zone->kind == YNODE_SEQ ? "an empty list" : ydoc_describe(zone));
		spec->broken |= SPEC_BROKEN_PROVIDER;
		return;
	}
	spec->provider.zones = xcalloc(zone->n, sizeof(*spec->provider.zones));
	for (i = 0; i < zone->n; i++) {
		char *z = spec_scalar(ld, zone->vals[i], "provider.zone");
		size_t j;

		if (!z) {
			spec->broken |= SPEC_BROKEN_PROVIDER;
			continue;
		}
		for (j = 0; j < spec->provider.nzones; j++) {
			if (strcmp(spec->provider.zones[j].name, z) == 0) {
				spec_err(ld, zone->vals[i], "provider.zone lists '%s' twice", z);
				break;
			}
		}
		if (j < spec->provider.nzones) {
			free(z);
			continue;
		}
		spec->provider.zones[spec->provider.nzones].name = z;
		spec->provider.zones[spec->provider.nzones++].node = zone->vals[i];
	}
}

static void load_tags(struct loader *ld, const struct ynode *tags)
{
	struct spec *spec = ld->spec;
	size_t i, cap = 0;

	if (!tags || !spec_expect_map(ld, tags, "tags"))
		return;
	if (tags->n > SPEC_MAX_USER_TAGS)
		spec_err(ld, tags,
			 "tags has %zu entries; at most %d are allowed (kiln adds its own)",
			 tags->n, SPEC_MAX_USER_TAGS);
	for (i = 0; i < tags->n; i++) {
		const struct ynode *k = tags->keys[i];
		char *path = xasprintf("tags.%s", k->value);
		char *v;

		/* The cloud's own rules (lengths, characters, its prefix) are the provider's. */
		if (!strncasecmp(k->value, "kiln:", 5))
			diag_hint(spec_err(ld, k,
					   "tag key '%s' uses the reserved prefix kiln: (kiln sets "
					   "those tags itself)",
					   k->value),
				  "name the key without kiln:, like '%s'", k->value + 5);
		if (ydoc_is_null(tags->vals[i])) {
			diag_hint(spec_err(ld, tags->vals[i], "%s has no value", path),
				  "write an empty value as \"\"");
			free(path);
			continue;
		}
		v = spec_scalar(ld, tags->vals[i], path);
		if (v) {
			struct spec_kv *kv = ARRAY_PUSH(spec->tags, spec->ntags, cap);

			kv->key = xstrdup(k->value);
			kv->value = v;
			kv->node = tags->vals[i];
			v = NULL;
		}
		free(v);
		free(path);
	}
}

static void load_ingress(struct loader *ld, const struct ynode *list)
{
	struct spec *spec = ld->spec;
	size_t i, cap = 0;

	if (list->kind != YNODE_SEQ) {
		spec_err(ld, list, "network.ingress must be a list of rules, got %s",
			 ydoc_describe(list));
		spec->broken |= SPEC_BROKEN_NETWORK;
		return;
	}
	for (i = 0; i < list->n; i++) {
		const struct ynode *r = list->vals[i], *port;
		char *path = xasprintf("network.ingress[%zu]", i);
		struct spec_ingress in = {0};
		int proto = 0;
		bool ok = true;

		if (!spec_expect_map(ld, r, path)) {
			free(path);
			spec->broken |= SPEC_BROKEN_NETWORK;
			continue;
		}
		in.node = r;
		ok &= spec_check_keys(ld, r, "in a network.ingress rule", spec_ingress_keys,
				      ARRAY_SIZE(spec_ingress_keys));
		port = ydoc_get(r, "port");
		if (!port) {
			spec_err(ld, r, "missing required key 'port' in %s", path);
			ok = false;
		} else {
			char *ppath = xasprintf("%s.port", path);
			char *s = spec_scalar(ld, port, ppath);
			long a = 0, b = 0;
			char *end;

			if (!s) {
				ok = false;
			} else {
				a = strtol(s, &end, 10);
				b = a;
				if (*end == '-' && end != s)
					b = strtol(end + 1, &end, 10);
				if (end == s || *end || !isdigit((unsigned char)s[0]) ||
				    !isdigit((unsigned char)s[strlen(s) - 1])) {
					struct diag *dg = spec_err(
					    ld, port, "%s must be a port or a range, got '%s'",
					    ppath, s);

					diag_hint(
					    dg, "write a number like 22 or a range like 8000-8100");
					ok = false;
				} else if (a < 1 || b > 65535 || a > b) {
					spec_err(ld, port,
						 "%s: '%s' is outside 1-65535 or reversed", ppath,
						 s);
					ok = false;
				}
			}
			in.port_from = (int)a;
			in.port_to = (int)b;
			free(s);
			free(ppath);
		}
		{
			char *fpath = xasprintf("%s.from", path);

			ok &= spec_get_cidr(ld, r, "from", fpath, true, 0, 32, &in.from) == GOT_OK;
			free(fpath);
		}
		{
			char *ppath = xasprintf("%s.protocol", path);

			ok &= spec_get_enum(ld, r, "protocol", ppath, false, spec_ingress_protocols,
					    ARRAY_SIZE(spec_ingress_protocols), &proto) != GOT_BAD;
			free(ppath);
		}
		in.protocol = xstrdup(spec_ingress_protocols[proto]);
		{
			char *dpath = xasprintf("%s.description", path);

			ok &= spec_get_string(ld, r, "description", dpath, false,
					      &in.description) != GOT_BAD;
			free(dpath);
		}
		(void)ok;
		*ARRAY_PUSH(spec->network.ingress, spec->network.ningress, cap) = in;
		free(path);
	}
}

static void load_network(struct loader *ld, const struct ynode *net)
{
	struct spec *spec = ld->spec;
	const struct ynode *ingress;
	int fabric = FABRIC_NONE;

	spec->network.cidr = xstrdup("10.0.0.0/16");
	spec->network.fabric = FABRIC_NONE;
	if (!net)
		return;
	spec->network.node = net;
	if (!spec_expect_map(ld, net, "network")) {
		spec->broken |= SPEC_BROKEN_NETWORK;
		return;
	}
	if (!spec_check_keys(ld, net, "in network", spec_network_keys,
			     ARRAY_SIZE(spec_network_keys)))
		spec->broken |= SPEC_BROKEN_NETWORK;
	/* A VPC is between /16 and /28 on every cloud kiln targets. */
	if (spec_get_cidr(ld, net, "cidr", "network.cidr", false, 16, 28, &spec->network.cidr) ==
	    GOT_BAD)
		spec->broken |= SPEC_BROKEN_NETWORK;
	if (spec_get_enum(ld, net, "fabric", "network.fabric", false, spec_fabric_names, 3,
			  &fabric) == GOT_BAD)
		spec->broken |= SPEC_BROKEN_NETWORK;
	spec->network.fabric = (enum spec_fabric)fabric;
	ingress = ydoc_get(net, "ingress");
	if (ingress)
		load_ingress(ld, ingress);
}

static void
load_section_map(struct loader *ld, const struct ynode *root, const char *name, unsigned broken,
		 void (*each)(struct loader *, const struct ynode *, const struct ynode *))
{
	const struct ynode *sec = ydoc_get(root, name);
	size_t i;

	if (!sec)
		return;
	if (ydoc_is_null(sec))
		return;
	if (!spec_expect_map(ld, sec, name)) {
		ld->spec->broken |= broken;
		return;
	}
	for (i = 0; i < sec->n; i++)
		each(ld, sec->keys[i], sec->vals[i]);
}

/* A top-level section; an empty one (`iam:` with everything commented out) is absent. */
static const struct ynode *section(const struct ynode *root, const char *name)
{
	const struct ynode *n = ydoc_get(root, name);

	return n && ydoc_is_null(n) ? NULL : n;
}

static void load_root(struct loader *ld, const struct ynode *root)
{
	struct spec *spec = ld->spec;
	const struct ynode *budget;
	int format = 0;
	size_t i;

	if (!root || ydoc_is_null(root)) {
		struct diag *dg =
		    diags_add(ld->d, DIAG_ERROR, spec->file, 1, 1, "the spec is empty");

		diag_hint(dg, "start from a template: kiln init --list shows them");
		spec->broken = ~0u;
		return;
	}
	if (root->kind != YNODE_MAP) {
		struct diag *dg = spec_err(ld, root, "a spec must be a mapping of keys, got %s",
					   ydoc_describe(root));

		diag_hint(dg, "start from a template: kiln init --list shows them");
		spec->broken = ~0u;
		return;
	}
	spec_check_keys(ld, root, "at the top level", spec_top_keys, ARRAY_SIZE(spec_top_keys));
	load_vars(ld, section(root, "vars"));

	switch (spec_get_int(ld, root, "kiln", "kiln", false, 1, 1000000, &format)) {
	case GOT_NONE:
		diag_hint(spec_err(ld, root, "missing required key 'kiln' (the spec format)"),
			  "add `kiln: 1` as the first line");
		break;
	case GOT_OK:
		if (format != KILN_SPEC_FORMAT)
			diag_hint(
			    spec_err(ld, ydoc_get(root, "kiln"),
				     "spec format %d is newer than this kiln reads (format %d)",
				     format, KILN_SPEC_FORMAT),
			    "upgrade kiln to read this spec");
		break;
	case GOT_BAD:
		break;
	}
	spec->format = format;

	if (spec_get_string(ld, root, "cluster", "cluster", true, &spec->cluster) == GOT_OK &&
	    !spec_name_ok(spec->cluster))
		spec_err(ld, ydoc_get(root, "cluster"),
			 "cluster name '%s' must be 1 to %d characters of a-z, 0-9 and '-', not "
			 "starting or ending with '-'",
			 spec->cluster, SPEC_MAX_NAME);
	load_provider(ld, root);
	if (spec_get_duration(ld, root, "ttl", "ttl", &spec->ttl) == GOT_OK) {
		if (spec->ttl == 0)
			spec_err(ld, ydoc_get(root, "ttl"), "ttl must be longer than 0s");
		else if (spec->ttl > 365LL * 86400)
			diag_hint(spec_err(ld, ydoc_get(root, "ttl"), "ttl must be at most 365d"),
				  "remove ttl for a cluster that lives until `kiln destroy`");
	}
	spec->ttl_grace = SPEC_TTL_GRACE_DEFAULT;
	if (spec_get_duration(ld, root, "ttl_grace", "ttl_grace", &spec->ttl_grace) == GOT_OK &&
	    (spec->ttl_grace < SPEC_TTL_GRACE_MIN || spec->ttl_grace > SPEC_TTL_GRACE_MAX)) {
		char *d = timefmt_duration_format(spec->ttl_grace);

		diag_hint(spec_err(ld, ydoc_get(root, "ttl_grace"),
				   "ttl_grace must be between 1m and 7d, not %s", d),
			  "it is how long past the expiry a node waits for `kiln reap` before it "
			  "powers itself off (checked once a minute); 15m is the default");
		free(d);
		spec->ttl_grace = SPEC_TTL_GRACE_DEFAULT;
	}
	budget = section(root, "budget");
	if (budget && spec_expect_map(ld, budget, "budget")) {
		spec_check_keys(ld, budget, "in budget", spec_budget_keys,
				ARRAY_SIZE(spec_budget_keys));
		if (spec_get_number(ld, budget, "max_hourly_usd", "budget.max_hourly_usd",
				    &spec->max_hourly_usd) == GOT_OK &&
		    spec->max_hourly_usd <= 0)
			spec_err(ld, ydoc_get(budget, "max_hourly_usd"),
				 "budget.max_hourly_usd must be more than 0");
		if (spec_get_number(ld, budget, "max_upfront_usd", "budget.max_upfront_usd",
				    &spec->max_upfront_usd) == GOT_OK &&
		    spec->max_upfront_usd <= 0)
			spec_err(ld, ydoc_get(budget, "max_upfront_usd"),
				 "budget.max_upfront_usd must be more than 0");
	}
	spec_load_idle(ld, section(root, "idle"), "idle", &spec->idle);
	load_tags(ld, section(root, "tags"));
	load_network(ld, section(root, "network"));
	/* Before compute: a group may leave its count and machine to the workload. */
	spec_load_workload(ld, section(root, "workload"));
	load_section_map(ld, root, "compute", SPEC_BROKEN_COMPUTE, spec_load_group);
	load_section_map(ld, root, "storage", SPEC_BROKEN_STORAGE, spec_load_store);
	spec_load_iam(ld, section(root, "iam"));
	spec_load_waive(ld, section(root, "waive"));
	spec_load_scheduler(ld, section(root, "scheduler"));
	spec_load_access(ld, section(root, "access"));
	spec_load_bootstrap(ld, section(root, "bootstrap"), "bootstrap", &spec->bootstrap,
			    &spec->nbootstrap);

	for (i = 0; i < spec->nvars; i++) {
		struct spec_var *v = &spec->vars[i];

		if (!v->value)
			diag_hint(spec_err(ld, v->node, "vars.%s has no value", v->name),
				  "give it a default here, or pass --var %s=VALUE", v->name);
		if (v->from_cli && !v->node && !v->used)
			diags_add(ld->d, DIAG_WARNING, spec->file, 0, 0,
				  "--var %s is not declared under vars: and not used by this spec",
				  v->name);
	}
}

/* Whether it came as a buffer or a file: one message. */
static int too_large(const char *file, struct diags *d)
{
	char *lim = util_size_format(SPEC_MAX_BYTES);

	diags_add(d, DIAG_ERROR, file, 0, 0, "the spec is larger than %s, the most kiln reads",
		  lim);
	free(lim);
	return -1;
}

static bool has_bom_utf16(const unsigned char *b, size_t len)
{
	return len >= 2 && ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff));
}

int spec_load_buffer(struct spec **out, const char *file, const char *buf, size_t len,
		     const struct spec_options *opts, struct diags *d)
{
	struct spec *spec;
	struct loader ld;
	size_t errors = d->errors, bad;
	const unsigned char *u = (const unsigned char *)buf;

	*out = NULL;
	if (len > SPEC_MAX_BYTES)
		return too_large(file, d);
	if (has_bom_utf16(u, len)) {
		struct diag *dg = diags_add(d, DIAG_ERROR, file, 1, 1,
					    "the spec is UTF-16; kiln reads UTF-8 only");

		diag_hint(dg, "convert it: iconv -f UTF-16 -t UTF-8");
		return -1;
	}
	bad = str_utf8_invalid_offset(u, len);
	if (bad < len) {
		int line, col;
		struct diag *dg;

		str_text_position(buf, bad, &line, &col);
		dg = diags_add(d, DIAG_ERROR, file, line, col,
			       "the spec is not valid UTF-8 (byte 0x%02x)", u[bad]);
		diag_hint(dg, "save the file as UTF-8");
		return -1;
	}
	if (memchr(buf, '\0', len)) {
		int line, col;

		str_text_position(buf, (size_t)((const char *)memchr(buf, '\0', len) - buf), &line,
				  &col);
		diags_add(d, DIAG_ERROR, file, line, col,
			  "the spec contains a NUL byte; is it a text file?");
		return -1;
	}
	spec = xcalloc(1, sizeof(*spec));
	spec->file = xstrdup(file);
	if (ydoc_parse(&spec->doc, file, buf, len, d) < 0) {
		spec_free(spec);
		return -1;
	}
	spec->root = ydoc_root(spec->doc);
	ld.spec = spec;
	ld.d = d;
	ld.opts = opts;
	ld.src = buf;
	ld.srclen = len;
	load_root(&ld, spec->root);
	spec_index_build(spec);
	*out = spec;
	return d->errors > errors ? -1 : 0;
}

int spec_read_file(const char *path, char **buf, size_t *len, struct diags *d)
{
	struct kiln_error err = {0};
	const char *name = spec_file_name(path);
	int ret;

	*buf = NULL;
	*len = 0;
	ret = util_file_read_all(path, SPEC_MAX_BYTES, buf, len, &err);
	if (ret == -2)
		return too_large(name, d);
	if (ret < 0) {
		diags_add(d, DIAG_ERROR, name, 0, 0, "%s", err.msg);
		return -1;
	}
	return 0;
}

const char *spec_file_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

int spec_load_file(struct spec **out, const char *path, const struct spec_options *opts,
		   struct diags *d)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	*out = NULL;
	if (spec_read_file(path, &buf, &len, d) < 0)
		return -1;
	ret = spec_load_buffer(out, spec_file_name(path), buf, len, opts, d);
	free(buf);
	return ret;
}

static void refs_free(struct spec_ref *refs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(refs[i].name);
	free(refs);
}

void spec_free(struct spec *spec)
{
	size_t i;

	if (!spec)
		return;
	spec_index_free(spec->index);
	for (i = 0; i < spec->nvars; i++) {
		free(spec->vars[i].name);
		free(spec->vars[i].value);
	}
	free(spec->vars);
	for (i = 0; i < spec->ntags; i++) {
		free(spec->tags[i].key);
		free(spec->tags[i].value);
	}
	free(spec->tags);
	free(spec->provider.name);
	free(spec->provider.region);
	free(spec->provider.endpoint);
	refs_free(spec->provider.zones, spec->provider.nzones);
	free(spec->network.cidr);
	for (i = 0; i < spec->network.ningress; i++) {
		free(spec->network.ingress[i].protocol);
		free(spec->network.ingress[i].from);
		free(spec->network.ingress[i].description);
	}
	free(spec->network.ingress);
	for (i = 0; i < spec->ngroups; i++) {
		struct spec_group *g = &spec->groups[i];

		free(g->name);
		free(g->gpu_model);
		free(g->instance_type);
		free(g->image);
		free(g->capacity.reservation);
		free(g->disk.type);
		free(g->role.name);
		free(g->partition);
		free(g->derived);
		spec_steps_free(g->bootstrap, g->nbootstrap);
		free(g->bootstrap);
	}
	free(spec->groups);
	for (i = 0; i < spec->nstores; i++) {
		free(spec->stores[i].name);
		free(spec->stores[i].import.name);
		free(spec->stores[i].mount);
		refs_free(spec->stores[i].groups, spec->stores[i].ngroups);
	}
	free(spec->stores);
	for (i = 0; i < spec->nroles; i++) {
		free(spec->roles[i].name);
		refs_free(spec->roles[i].read, spec->roles[i].nread);
		refs_free(spec->roles[i].write, spec->roles[i].nwrite);
		spec_allow_free(spec->roles[i].allow, spec->roles[i].nallow);
	}
	free(spec->roles);
	for (i = 0; i < spec->nwaivers; i++) {
		free(spec->waivers[i].rule);
		free(spec->waivers[i].reason);
		free(spec->waivers[i].until);
		free(spec->waivers[i].address);
	}
	free(spec->waivers);
	free(spec->scheduler.controller.name);
	free(spec->scheduler.kms_key.name);
	spec_access_free(spec);
	spec_steps_free(spec->bootstrap, spec->nbootstrap);
	free(spec->bootstrap);
	free(spec->cluster);
	free(spec->file);
	ydoc_free(spec->doc);
	free(spec);
}

const struct spec_group *spec_group_find(const struct spec *spec, const char *name)
{
	size_t i;

	if (spec_index_fresh(spec))
		return spec_index_group(spec, name);
	for (i = 0; i < spec->ngroups; i++)
		if (strcmp(spec->groups[i].name, name) == 0)
			return &spec->groups[i];
	return NULL;
}

const struct spec_store *spec_store_find(const struct spec *spec, const char *name)
{
	size_t i;

	if (spec_index_fresh(spec))
		return spec_index_store(spec, name);
	for (i = 0; i < spec->nstores; i++)
		if (strcmp(spec->stores[i].name, name) == 0)
			return &spec->stores[i];
	return NULL;
}

const struct spec_role *spec_role_find(const struct spec *spec, const char *name)
{
	size_t i;

	if (spec_index_fresh(spec))
		return spec_index_role(spec, name);
	for (i = 0; i < spec->nroles; i++)
		if (strcmp(spec->roles[i].name, name) == 0)
			return &spec->roles[i];
	return NULL;
}

bool spec_local_on(const struct spec_store *s, const struct spec_group *g)
{
	size_t i;

	if (s->tier != TIER_LOCAL)
		return false;
	if (!s->groups_node)
		return true;
	for (i = 0; i < s->ngroups; i++)
		if (strcmp(s->groups[i].name, g->name) == 0)
			return true;
	return false;
}

const struct ynode *spec_value_node(const struct ynode *section, const char *key)
{
	const struct ynode *n = ydoc_get(section, key);

	return n ? n : section;
}
