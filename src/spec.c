/*
 * spec.c - YAML tree to typed spec; see spec.h.
 *
 * Each section has a loader that checks its keys against the keys it knows,
 * reads every value through one typed getter (which substitutes ${var.NAME}
 * and names the dotted path in its errors) and keeps going after an error, so
 * one run reports every problem. Cross-section rules are validate.c's.
 */
#include "spec.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct loader {
	struct spec *spec;
	struct diags *d;
	const struct spec_options *opts;
};

/* Result of a getter: the key was absent, present and good, or present and bad. */
enum got {
	GOT_BAD = -1,
	GOT_NONE = 0,
	GOT_OK = 1,
};

static struct diag *err_at(struct loader *ld, const struct ynode *n, const char *fmt, ...)
	KILN_PRINTF(3, 4);
static struct diag *err_at(struct loader *ld, const struct ynode *n, const char *fmt, ...)
{
	struct diag *dg;
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	dg = diags_add(ld->d, DIAG_ERROR, ld->spec->file, n ? n->line : 1, n ? n->col : 1, "%s",
		       msg);
	free(msg);
	return dg;
}

static const char *const top_keys[] = {"kiln",	  "cluster", "provider", "ttl",	    "budget", "tags",
				       "vars",	  "network", "compute",	 "storage", "iam"};
static const char *const provider_keys[] = {"name", "region", "zone", "endpoint"};
static const char *const budget_keys[] = {"max_hourly_usd"};
static const char *const network_keys[] = {"cidr", "fabric", "ingress"};
static const char *const ingress_keys[] = {"port", "from", "protocol", "description"};
static const char *const group_keys[] = {"gpu",	   "instance_type", "count", "gang", "market",
					 "image",  "disk",	    "role",  "public"};
static const char *const disk_keys[] = {"size_gb", "type", "encrypted", "allow_unencrypted"};
static const char *const iam_keys[] = {"roles"};
static const char *const role_keys[] = {"read", "write"};

/* Storage keys, and the tiers each applies to. */
static const struct {
	const char *key;
	unsigned tiers; /* 1 << enum spec_tier */
} store_keys[] = {
	{"tier", 7},
	{"deletion", 7},
	{"versioning", 1 << TIER_OBJECT},
	{"expire_noncurrent_after", 1 << TIER_OBJECT},
	{"capacity_gb", 1 << TIER_LUSTRE},
	{"throughput_per_tib", 1 << TIER_LUSTRE},
	{"import", 1 << TIER_LUSTRE},
	{"mount", (1 << TIER_LUSTRE) | (1 << TIER_NFS)},
	{"encrypted", (1 << TIER_OBJECT) | (1 << TIER_NFS)},
	{"allow_unencrypted", (1 << TIER_OBJECT) | (1 << TIER_NFS)},
};

static const char *const fabric_names[] = {"none", "ena", "efa"};
static const char *const market_names[] = {"on-demand", "spot"};
static const char *const tier_names[] = {"object", "lustre", "nfs"};
static const char *const deletion_names[] = {"retain", "delete"};

const char *spec_fabric_name(enum spec_fabric f)
{
	return fabric_names[f];
}

const char *spec_tier_name(enum spec_tier t)
{
	return tier_names[t];
}

const char *spec_market_name(enum spec_market m)
{
	return market_names[m];
}

static char *join_names(const char *const *names, size_t n)
{
	struct strbuf sb = {0};
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			sb_adds(&sb, i + 1 == n ? " or " : ", ");
		sb_adds(&sb, names[i]);
	}
	return sb_detach(&sb);
}

/* Hint for a word that should have been one of names: the closest, else the list. */
static void hint_choices(struct diag *dg, const char *word, const char *const *names, size_t n)
{
	const char *near = str_closest(word, names, n);
	char *all;

	if (near) {
		diag_hint(dg, "did you mean '%s'?", near);
		return;
	}
	all = join_names(names, n);
	diag_hint(dg, "expected %s", all);
	free(all);
}

static bool name_in(const char *word, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(word, names[i]) == 0)
			return true;
	return false;
}

/* Unknown keys in a mapping are errors; returns false when there was one. */
static bool check_keys(struct loader *ld, const struct ynode *map, const char *where,
		       const char *const *known, size_t n)
{
	bool ok = true;
	size_t i;

	for (i = 0; i < map->n; i++) {
		const struct ynode *k = map->keys[i];

		if (name_in(k->value, known, n))
			continue;
		hint_choices(err_at(ld, k, "unknown key '%s' %s", k->value, where), k->value, known,
			     n);
		ok = false;
	}
	return ok;
}

static bool expect_map(struct loader *ld, const struct ynode *n, const char *path)
{
	if (n->kind == YNODE_MAP)
		return true;
	err_at(ld, n, "%s must be a mapping, got %s", path, ynode_describe(n));
	return false;
}

static bool var_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

static struct spec_var *var_find(struct spec *spec, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < spec->nvars; i++)
		if (strlen(spec->vars[i].name) == len && memcmp(spec->vars[i].name, name, len) == 0)
			return &spec->vars[i];
	return NULL;
}

/*
 * The text of a scalar with ${var.NAME} substituted ($${ is a literal ${).
 * Returns NULL after reporting when the node is not a scalar or a variable is
 * missing. The column of a variable error points at its "${".
 */
static char *scalar_text(struct loader *ld, const struct ynode *n, const char *path)
{
	struct strbuf sb = {0};
	const char *p, *end;
	bool bad = false;

	if (n->kind != YNODE_SCALAR) {
		err_at(ld, n, "%s must be a single value, got %s", path, ynode_describe(n));
		return NULL;
	}
	p = n->value;
	end = n->value + n->len;
	while (p < end) {
		const char *dollar = memchr(p, '$', (size_t)(end - p));
		const char *close, *name;
		size_t nlen;
		struct spec_var *v;

		if (!dollar) {
			sb_add(&sb, p, (size_t)(end - p));
			break;
		}
		sb_add(&sb, p, (size_t)(dollar - p));
		if (dollar + 2 < end && dollar[1] == '$' && dollar[2] == '{') {
			sb_adds(&sb, "${");
			p = dollar + 3;
			continue;
		}
		if (dollar + 1 >= end || dollar[1] != '{') {
			sb_addc(&sb, '$');
			p = dollar + 1;
			continue;
		}
		{
			/* Point at the "${" itself when the scalar is on one line. */
			int col = n->col + (int)(dollar - n->value) + (n->quoted ? 1 : 0);
			struct ynode at = *n;
			struct diag *dg;

			if (!memchr(n->value, '\n', n->len))
				at.col = col;
			close = memchr(dollar, '}', (size_t)(end - dollar));
			if (!close) {
				dg = err_at(ld, &at, "%s: unterminated '${' in '%s'", path, n->value);
				diag_hint(dg, "write ${var.NAME}, or $${ for a literal ${");
				bad = true;
				break;
			}
			name = dollar + 2;
			nlen = (size_t)(close - name);
			if (nlen < 4 || memcmp(name, "var.", 4) != 0 || !var_name_ok(name + 4, nlen - 4)) {
				dg = err_at(ld, &at, "%s: unsupported expression '%.*s'", path,
					    (int)(close - dollar + 1), dollar);
				diag_hint(dg, "only ${var.NAME} is substituted; write $${ for a literal ${");
				bad = true;
				p = close + 1;
				continue;
			}
			name += 4;
			nlen -= 4;
			v = var_find(ld->spec, name, nlen);
			if (!v) {
				char *word = xstrndup(name, nlen);
				const char **names = xcalloc(ld->spec->nvars + 1, sizeof(*names));
				const char *near;
				size_t i;

				for (i = 0; i < ld->spec->nvars; i++)
					names[i] = ld->spec->vars[i].name;
				near = str_closest(word, names, ld->spec->nvars);
				dg = err_at(ld, &at, "%s: variable '%s' is not set", path, word);
				if (near)
					diag_hint(dg, "did you mean '%s'?", near);
				else
					diag_hint(dg, "declare it under vars: or pass --var %s=VALUE",
						  word);
				free(names);
				free(word);
				bad = true;
			} else {
				v->used = true;
				sb_adds(&sb, v->value);
			}
			p = close + 1;
		}
	}
	if (bad) {
		sb_release(&sb);
		return NULL;
	}
	return sb_detach(&sb);
}

/* Every getter: GOT_NONE when the key is absent (or null and not required). */
static const struct ynode *lookup(struct loader *ld, const struct ynode *map, const char *key,
				  const char *path, bool required, enum got *g)
{
	const struct ynode *n = ynode_get(map, key);

	*g = GOT_OK;
	if (n && ynode_is_null(n)) {
		struct diag *dg = err_at(ld, n, "%s has no value", path);

		diag_hint(dg, "give it a value, or remove the key");
		*g = GOT_BAD;
		return NULL;
	}
	if (!n) {
		*g = GOT_NONE;
		if (required)
			err_at(ld, map, "missing required key '%s' in %s", key, path);
		if (required)
			*g = GOT_BAD;
	}
	return n;
}

static enum got get_string(struct loader *ld, const struct ynode *map, const char *key,
			   const char *path, bool required, char **out)
{
	enum got g;
	const struct ynode *n = lookup(ld, map, key, path, required, &g);
	char *s;

	if (!n)
		return g;
	s = scalar_text(ld, n, path);
	if (!s)
		return GOT_BAD;
	free(*out);
	*out = s;
	return GOT_OK;
}

static enum got get_int(struct loader *ld, const struct ynode *map, const char *key,
			const char *path, bool required, long min, long max, int *out)
{
	enum got g;
	const struct ynode *n = lookup(ld, map, key, path, required, &g);
	char *s, *end;
	long v;

	if (!n)
		return g;
	s = scalar_text(ld, n, path);
	if (!s)
		return GOT_BAD;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || isspace((unsigned char)*s)) {
		err_at(ld, n, "%s must be a whole number, got '%s'", path, s);
		free(s);
		return GOT_BAD;
	}
	free(s);
	if (v < min || v > max) {
		err_at(ld, n, "%s must be between %ld and %ld, got %ld", path, min, max, v);
		return GOT_BAD;
	}
	*out = (int)v;
	return GOT_OK;
}

static enum got get_number(struct loader *ld, const struct ynode *map, const char *key,
			   const char *path, double *out)
{
	enum got g;
	const struct ynode *n = lookup(ld, map, key, path, false, &g);
	char *s, *end;
	double v;

	if (!n)
		return g;
	s = scalar_text(ld, n, path);
	if (!s)
		return GOT_BAD;
	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || isspace((unsigned char)*s)) {
		err_at(ld, n, "%s must be a number, got '%s'", path, s);
		free(s);
		return GOT_BAD;
	}
	free(s);
	*out = v;
	return GOT_OK;
}

static enum got get_bool(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, bool *out)
{
	enum got g;
	const struct ynode *n = lookup(ld, map, key, path, false, &g);
	char *s;

	if (!n)
		return g;
	s = scalar_text(ld, n, path);
	if (!s)
		return GOT_BAD;
	if (strcmp(s, "true") == 0) {
		*out = true;
	} else if (strcmp(s, "false") == 0) {
		*out = false;
	} else {
		struct diag *dg = err_at(ld, n, "%s must be true or false, got '%s'", path, s);

		if (!strcasecmp(s, "yes") || !strcasecmp(s, "on") || !strcasecmp(s, "no") ||
		    !strcasecmp(s, "off") || !strcasecmp(s, "True") || !strcasecmp(s, "False"))
			diag_hint(dg, "kiln reads only true and false as booleans");
		free(s);
		return GOT_BAD;
	}
	free(s);
	return GOT_OK;
}

static enum got get_enum(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, bool required, const char *const *names, size_t n,
			 int *out)
{
	enum got g;
	const struct ynode *node = lookup(ld, map, key, path, required, &g);
	char *s, *all;
	size_t i;

	if (!node)
		return g;
	s = scalar_text(ld, node, path);
	if (!s)
		return GOT_BAD;
	for (i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (int)i;
			free(s);
			return GOT_OK;
		}
	}
	all = join_names(names, n);
	{
		struct diag *dg = err_at(ld, node, "%s must be %s, got '%s'", path, all, s);
		const char *near = str_closest(s, names, n);

		if (near)
			diag_hint(dg, "did you mean '%s'?", near);
	}
	free(all);
	free(s);
	return GOT_BAD;
}

static enum got get_duration(struct loader *ld, const struct ynode *map, const char *key,
			     const char *path, int64_t *out)
{
	enum got g;
	const struct ynode *n = lookup(ld, map, key, path, false, &g);
	char *s;

	if (!n)
		return g;
	s = scalar_text(ld, n, path);
	if (!s)
		return GOT_BAD;
	if (duration_parse(s, out) < 0) {
		struct diag *dg = err_at(ld, n, "%s: '%s' is not a duration", path, s);

		diag_hint(dg, "write a number and a unit (s, m, h, d), like 45s, 90m, 72h or 30d");
		free(s);
		return GOT_BAD;
	}
	free(s);
	return GOT_OK;
}

/*
 * A CIDR with a bounded prefix; host bits set is an error that suggests the
 * network address the user probably meant.
 */
static enum got get_cidr(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, bool required, int min_prefix, int max_prefix, char **out)
{
	enum got g;
	const struct ynode *n = lookup(ld, map, key, path, required, &g);
	char *s;
	uint32_t addr;
	int prefix;
	bool host;

	if (!n)
		return g;
	s = scalar_text(ld, n, path);
	if (!s)
		return GOT_BAD;
	if (cidr_parse(s, &addr, &prefix, &host) < 0) {
		struct diag *dg = err_at(ld, n, "%s: '%s' is not an IPv4 CIDR block", path, s);

		diag_hint(dg, "write ADDRESS/PREFIX, like 10.42.0.0/16");
		free(s);
		return GOT_BAD;
	}
	if (host) {
		char *net = cidr_format(addr, prefix);
		struct diag *dg = err_at(ld, n, "%s: '%s' has bits set past its /%d prefix", path,
					 s, prefix);

		diag_hint(dg, "did you mean %s?", net);
		free(net);
		free(s);
		return GOT_BAD;
	}
	if (prefix < min_prefix || prefix > max_prefix) {
		err_at(ld, n, "%s: the prefix of '%s' must be between /%d and /%d", path, s,
		       min_prefix, max_prefix);
		free(s);
		return GOT_BAD;
	}
	free(*out);
	*out = s;
	return GOT_OK;
}

bool spec_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > SPEC_MAX_NAME || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return false;
	return true;
}

static bool check_name(struct loader *ld, const struct ynode *key, const char *what)
{
	if (spec_name_ok(key->value))
		return true;
	err_at(ld, key,
	       "%s name '%s' must be 1 to %d characters of a-z, 0-9 and '-', not starting or "
	       "ending with '-'",
	       what, key->value, SPEC_MAX_NAME);
	return false;
}

static void load_vars(struct loader *ld, const struct ynode *vars)
{
	struct spec *spec = ld->spec;
	size_t i, cap;

	if (vars && expect_map(ld, vars, "vars")) {
		for (i = 0; i < vars->n; i++) {
			const struct ynode *k = vars->keys[i], *v = vars->vals[i];
			struct spec_var *var;

			if (!var_name_ok(k->value, k->len)) {
				err_at(ld, k, "variable name '%s' must be letters, digits and '_', "
					      "not starting with a digit",
				       k->value);
				continue;
			}
			if (v->kind != YNODE_SCALAR || ynode_is_null(v)) {
				err_at(ld, v, "vars.%s must be a single value, got %s", k->value,
				       ynode_describe(v));
				continue;
			}
			cap = spec->nvars;
			var = ARRAY_PUSH(spec->vars, spec->nvars, cap);
			memset(var, 0, sizeof(*var));
			var->name = xstrdup(k->value);
			var->value = xstrdup(v->value);
			var->node = v;
		}
	}
	if (!ld->opts)
		return;
	for (i = 0; i < ld->opts->nvars; i++) {
		const struct spec_var_override *o = &ld->opts->vars[i];
		struct spec_var *var = var_find(spec, o->name, strlen(o->name));

		if (!var) {
			cap = spec->nvars;
			var = ARRAY_PUSH(spec->vars, spec->nvars, cap);
			memset(var, 0, sizeof(*var));
			var->name = xstrdup(o->name);
		} else {
			free(var->value);
		}
		var->value = xstrdup(o->value);
		var->from_cli = true;
	}
}

static void load_provider(struct loader *ld, const struct ynode *root)
{
	struct spec *spec = ld->spec;
	const struct ynode *p = ynode_get(root, "provider"), *zone;
	static const char *const names[] = {"aws", "sim"};
	int which = -1;
	size_t i;

	if (!p) {
		struct diag *dg = err_at(ld, root, "missing required key 'provider'");

		diag_hint(dg, "add `provider: {name: sim}` to try kiln without a cloud account");
		spec->broken |= SPEC_BROKEN_PROVIDER;
		return;
	}
	spec->provider.node = p;
	if (!expect_map(ld, p, "provider")) {
		spec->broken |= SPEC_BROKEN_PROVIDER;
		return;
	}
	if (!check_keys(ld, p, "in provider", provider_keys, ARRAY_SIZE(provider_keys)))
		spec->broken |= SPEC_BROKEN_PROVIDER;
	if (get_enum(ld, p, "name", "provider.name", true, names, 2, &which) == GOT_OK)
		spec->provider.name = xstrdup(names[which]);
	else
		spec->broken |= SPEC_BROKEN_PROVIDER;
	if (get_string(ld, p, "region", "provider.region", false, &spec->provider.region) == GOT_BAD)
		spec->broken |= SPEC_BROKEN_PROVIDER;
	if (get_string(ld, p, "endpoint", "provider.endpoint", false, &spec->provider.endpoint) ==
	    GOT_OK &&
	    !str_starts_with(spec->provider.endpoint, "http://") &&
	    !str_starts_with(spec->provider.endpoint, "https://")) {
		err_at(ld, ynode_get(p, "endpoint"), "provider.endpoint must be an http:// or https:// URL, "
						     "got '%s'",
		       spec->provider.endpoint);
		spec->broken |= SPEC_BROKEN_PROVIDER;
	}
	if (spec->provider.name && strcmp(spec->provider.name, "sim") == 0 && !spec->provider.region)
		spec->provider.region = xstrdup("sim-1");
	zone = ynode_get(p, "zone");
	if (!zone) {
		if (spec->provider.name && strcmp(spec->provider.name, "sim") == 0) {
			spec->provider.zones = xcalloc(1, sizeof(*spec->provider.zones));
			spec->provider.zones[0].name = xasprintf("%sa", spec->provider.region);
			spec->provider.nzones = 1;
		}
		return;
	}
	if (zone->kind == YNODE_SCALAR && !ynode_is_null(zone)) {
		char *z = scalar_text(ld, zone, "provider.zone");

		if (z) {
			spec->provider.zones = xcalloc(1, sizeof(*spec->provider.zones));
			spec->provider.zones[0].name = z;
			spec->provider.zones[0].node = zone;
			spec->provider.nzones = 1;
		}
		return;
	}
	if (zone->kind != YNODE_SEQ || zone->n == 0) {
		err_at(ld, zone, "provider.zone must be a zone or a non-empty list of zones, got %s",
		       zone->kind == YNODE_SEQ ? "an empty list" : ynode_describe(zone));
		spec->broken |= SPEC_BROKEN_PROVIDER;
		return;
	}
	spec->provider.zones = xcalloc(zone->n, sizeof(*spec->provider.zones));
	for (i = 0; i < zone->n; i++) {
		char *z = scalar_text(ld, zone->vals[i], "provider.zone");
		size_t j;

		if (!z) {
			spec->broken |= SPEC_BROKEN_PROVIDER;
			continue;
		}
		for (j = 0; j < spec->provider.nzones; j++) {
			if (strcmp(spec->provider.zones[j].name, z) == 0) {
				err_at(ld, zone->vals[i], "provider.zone lists '%s' twice", z);
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

	if (!tags || !expect_map(ld, tags, "tags"))
		return;
	if (tags->n > SPEC_MAX_USER_TAGS)
		err_at(ld, tags, "tags has %zu entries; at most %d are allowed (kiln adds its own)",
		       tags->n, SPEC_MAX_USER_TAGS);
	for (i = 0; i < tags->n; i++) {
		const struct ynode *k = tags->keys[i];
		char *path = xasprintf("tags.%s", k->value);
		char *v;

		if (k->len > 128 || k->len == 0)
			err_at(ld, k, "tag key '%.40s...' must be 1 to 128 characters", k->value);
		else if (!strncasecmp(k->value, "aws:", 4) || !strncmp(k->value, "kiln:", 5))
			err_at(ld, k, "tag key '%s' uses a reserved prefix (aws: and kiln: are not "
				      "yours to set)",
			       k->value);
		v = scalar_text(ld, tags->vals[i], path);
		if (v && strlen(v) > 256) {
			err_at(ld, tags->vals[i], "%s: a tag value must be at most 256 characters", path);
		} else if (v) {
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
	static const char *const protos[] = {"tcp", "udp"};
	size_t i, cap = 0;

	if (list->kind != YNODE_SEQ) {
		err_at(ld, list, "network.ingress must be a list of rules, got %s",
		       ynode_describe(list));
		spec->broken |= SPEC_BROKEN_NETWORK;
		return;
	}
	for (i = 0; i < list->n; i++) {
		const struct ynode *r = list->vals[i], *port;
		char *path = xasprintf("network.ingress[%zu]", i);
		struct spec_ingress in = {0};
		int proto = 0;
		bool ok = true;

		if (!expect_map(ld, r, path)) {
			free(path);
			spec->broken |= SPEC_BROKEN_NETWORK;
			continue;
		}
		in.node = r;
		ok &= check_keys(ld, r, "in a network.ingress rule", ingress_keys,
				 ARRAY_SIZE(ingress_keys));
		port = ynode_get(r, "port");
		if (!port) {
			err_at(ld, r, "missing required key 'port' in %s", path);
			ok = false;
		} else {
			char *ppath = xasprintf("%s.port", path);
			char *s = scalar_text(ld, port, ppath);
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
					struct diag *dg = err_at(ld, port,
								 "%s must be a port or a range, got '%s'",
								 ppath, s);

					diag_hint(dg, "write a number like 22 or a range like 8000-8100");
					ok = false;
				} else if (a < 1 || b > 65535 || a > b) {
					err_at(ld, port, "%s: '%s' is outside 1-65535 or reversed", ppath,
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

			ok &= get_cidr(ld, r, "from", fpath, true, 0, 32, &in.from) == GOT_OK;
			free(fpath);
		}
		{
			char *ppath = xasprintf("%s.protocol", path);

			ok &= get_enum(ld, r, "protocol", ppath, false, protos, 2, &proto) != GOT_BAD;
			free(ppath);
		}
		in.protocol = xstrdup(protos[proto]);
		{
			char *dpath = xasprintf("%s.description", path);

			ok &= get_string(ld, r, "description", dpath, false, &in.description) !=
			      GOT_BAD;
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
	if (!expect_map(ld, net, "network")) {
		spec->broken |= SPEC_BROKEN_NETWORK;
		return;
	}
	if (!check_keys(ld, net, "in network", network_keys, ARRAY_SIZE(network_keys)))
		spec->broken |= SPEC_BROKEN_NETWORK;
	/* A VPC is between /16 and /28 on every cloud kiln targets. */
	if (get_cidr(ld, net, "cidr", "network.cidr", false, 16, 28, &spec->network.cidr) == GOT_BAD)
		spec->broken |= SPEC_BROKEN_NETWORK;
	if (get_enum(ld, net, "fabric", "network.fabric", false, fabric_names, 3, &fabric) == GOT_BAD)
		spec->broken |= SPEC_BROKEN_NETWORK;
	spec->network.fabric = (enum spec_fabric)fabric;
	ingress = ynode_get(net, "ingress");
	if (ingress)
		load_ingress(ld, ingress);
}

static bool load_gpu(struct loader *ld, const struct ynode *g, const char *path,
		     struct spec_group *grp)
{
	char *s = NULL, *colon, *end, *p;
	long count;
	bool ok = true;
	struct diag *dg;

	enum got got = get_string(ld, g, "gpu", path, false, &s);

	if (got != GOT_OK)
		return got == GOT_NONE;
	colon = strchr(s, ':');
	for (p = s; colon && p < colon; p++)
		if (!isalnum((unsigned char)*p))
			break;
	if (!colon || colon == s || p != colon) {
		dg = err_at(ld, ynode_get(g, "gpu"), "%s must be MODEL:COUNT, like H100:8, got '%s'",
			    path, s);
		diag_hint(dg, "or name the machine with instance_type: instead");
		free(s);
		return false;
	}
	errno = 0;
	count = strtol(colon + 1, &end, 10);
	if (!isdigit((unsigned char)colon[1]) || *end || errno || count < 1 || count > 16) {
		err_at(ld, ynode_get(g, "gpu"), "%s: GPU count must be between 1 and 16, got '%s'",
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
	static const char *const types[] = {"gp3", "gp2", "io1", "io2"};
	const struct ynode *dn = ynode_get(grp_node, "disk");
	char *path = xasprintf("%s.disk", gpath), *sub;
	int type = 0;
	bool ok = true;

	disk->size_gb = 200;
	disk->encrypted = true;
	disk->type = xstrdup("gp3");
	if (!dn)
		goto out;
	if (!expect_map(ld, dn, path)) {
		ok = false;
		goto out;
	}
	ok &= check_keys(ld, dn, "in a compute group's disk", disk_keys, ARRAY_SIZE(disk_keys));
	sub = xasprintf("%s.size_gb", path);
	ok &= get_int(ld, dn, "size_gb", sub, false, 8, 65536, &disk->size_gb) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.type", path);
	if (get_enum(ld, dn, "type", sub, false, types, ARRAY_SIZE(types), &type) == GOT_OK) {
		free(disk->type);
		disk->type = xstrdup(types[type]);
	} else if (ynode_get(dn, "type")) {
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.encrypted", path);
	ok &= get_bool(ld, dn, "encrypted", sub, &disk->encrypted) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.allow_unencrypted", path);
	ok &= get_bool(ld, dn, "allow_unencrypted", sub, &disk->allow_unencrypted) != GOT_BAD;
	free(sub);
out:
	free(path);
	return ok;
}

static void load_group(struct loader *ld, const struct ynode *key, const struct ynode *g)
{
	struct spec *spec = ld->spec;
	struct spec_group *grp;
	char *path = xasprintf("compute.%s", key->value), *sub;
	int market = MARKET_ON_DEMAND;
	bool ok = true;
	size_t cap = spec->ngroups;
	char *where;

	ok &= check_name(ld, key, "compute group");
	if (!expect_map(ld, g, path)) {
		spec->broken |= SPEC_BROKEN_COMPUTE;
		free(path);
		return;
	}
	grp = ARRAY_PUSH(spec->groups, spec->ngroups, cap);
	memset(grp, 0, sizeof(*grp));
	grp->name = xstrdup(key->value);
	grp->node = g;
	grp->count = 1;
	where = xasprintf("in compute group '%s'", key->value);
	ok &= check_keys(ld, g, where, group_keys, ARRAY_SIZE(group_keys));
	free(where);

	sub = xasprintf("%s.gpu", path);
	ok &= load_gpu(ld, g, sub, grp);
	free(sub);
	sub = xasprintf("%s.instance_type", path);
	if (get_string(ld, g, "instance_type", sub, false, &grp->instance_type) == GOT_OK &&
	    !instance_type_ok(grp->instance_type)) {
		struct diag *dg = err_at(ld, ynode_get(g, "instance_type"),
					 "%s: '%s' is not an instance type name", sub,
					 grp->instance_type);

		diag_hint(dg, "write FAMILY.SIZE in lower case, like p5.48xlarge");
		ok = false;
	}
	free(sub);
	if (ynode_get(g, "gpu") && ynode_get(g, "instance_type")) {
		struct diag *dg = err_at(ld, ynode_key(g, "instance_type"),
					 "%s sets both gpu and instance_type", path);

		diag_hint(dg, "keep one: gpu picks the cheapest instance type that has those GPUs");
		ok = false;
	} else if (!ynode_get(g, "gpu") && !ynode_get(g, "instance_type")) {
		struct diag *dg = err_at(ld, key, "%s needs gpu or instance_type", path);

		diag_hint(dg, "add gpu: MODEL:COUNT (like H100:8) or instance_type: NAME");
		ok = false;
	}
	sub = xasprintf("%s.count", path);
	ok &= get_int(ld, g, "count", sub, false, 0, SPEC_MAX_COUNT, &grp->count) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.gang", path);
	{
		enum got gg = get_bool(ld, g, "gang", sub, &grp->gang);

		grp->gang_set = gg == GOT_OK;
		ok &= gg != GOT_BAD;
	}
	free(sub);
	sub = xasprintf("%s.market", path);
	ok &= get_enum(ld, g, "market", sub, false, market_names, 2, &market) != GOT_BAD;
	grp->market = (enum spec_market)market;
	free(sub);
	sub = xasprintf("%s.image", path);
	ok &= get_string(ld, g, "image", sub, false, &grp->image) != GOT_BAD;
	free(sub);
	ok &= load_disk(ld, g, path, &grp->disk);
	sub = xasprintf("%s.role", path);
	if (get_string(ld, g, "role", sub, false, &grp->role.name) == GOT_OK)
		grp->role.node = ynode_get(g, "role");
	else if (ynode_get(g, "role"))
		ok = false;
	free(sub);
	sub = xasprintf("%s.public", path);
	ok &= get_bool(ld, g, "public", sub, &grp->public) != GOT_BAD;
	free(sub);
	(void)ok; /* the group is in the spec either way: references to it still resolve */
	free(path);
}

/* Where a store's data appears on the nodes; the system's own trees are refused. */
static bool mount_ok(struct loader *ld, const struct ynode *n, const char *path, const char *m)
{
	static const char *const system[] = {"/bin", "/boot", "/dev", "/etc", "/lib",
					     "/lib64", "/proc", "/root", "/run", "/sbin",
					     "/sys", "/usr", "/var", "/tmp"};
	const char *p;
	size_t i;

	if (m[0] != '/' || strlen(m) < 2 || strlen(m) > 255 || str_ends_with(m, "/") ||
	    strstr(m, "//") || strstr(m, "/../") || str_ends_with(m, "/..") || strstr(m, "/./") ||
	    str_ends_with(m, "/.")) {
		struct diag *dg = err_at(ld, n, "%s: '%s' is not a clean absolute path", path, m);

		diag_hint(dg, "write a path like /fsx or /home, without '..' or a trailing '/'");
		return false;
	}
	for (p = m; *p; p++) {
		if (!(isalnum((unsigned char)*p) || strchr("/._-", *p))) {
			err_at(ld, n, "%s: '%s' contains '%c'; use letters, digits, '.', '_', '-'", path,
			       m, *p);
			return false;
		}
	}
	for (i = 0; i < ARRAY_SIZE(system); i++) {
		size_t l = strlen(system[i]);

		if (strncmp(m, system[i], l) == 0 && (m[l] == '\0' || m[l] == '/')) {
			err_at(ld, n, "%s: '%s' would hide the system directory %s", path, m,
			       system[i]);
			return false;
		}
	}
	return true;
}

static void load_store(struct loader *ld, const struct ynode *key, const struct ynode *s)
{
	struct spec *spec = ld->spec;
	struct spec_store *st;
	char *path = xasprintf("storage.%s", key->value), *sub;
	int tier = -1, deletion = DELETION_RETAIN, tput = 1;
	bool ok = true;
	size_t cap = spec->nstores, i;
	static const char *const tputs[] = {"125", "250", "500", "1000"};
	static const int tput_values[] = {125, 250, 500, 1000};

	ok &= check_name(ld, key, "store");
	if (!expect_map(ld, s, path)) {
		spec->broken |= SPEC_BROKEN_STORAGE;
		free(path);
		return;
	}
	sub = xasprintf("%s.tier", path);
	if (get_enum(ld, s, "tier", sub, true, tier_names, 3, &tier) != GOT_OK) {
		free(sub);
		free(path);
		spec->broken |= SPEC_BROKEN_STORAGE;
		return;
	}
	free(sub);
	st = ARRAY_PUSH(spec->stores, spec->nstores, cap);
	memset(st, 0, sizeof(*st));
	st->name = xstrdup(key->value);
	st->node = s;
	st->tier = (enum spec_tier)tier;
	st->encrypted = true;

	/* Keys: unknown ones, and known ones that belong to another tier. */
	for (i = 0; i < s->n; i++) {
		const struct ynode *k = s->keys[i];
		const char *names[ARRAY_SIZE(store_keys)];
		size_t j, found = ARRAY_SIZE(store_keys);

		for (j = 0; j < ARRAY_SIZE(store_keys); j++) {
			names[j] = store_keys[j].key;
			if (strcmp(k->value, store_keys[j].key) == 0)
				found = j;
		}
		if (found == ARRAY_SIZE(store_keys)) {
			char *where = xasprintf("in store '%s'", key->value);

			hint_choices(err_at(ld, k, "unknown key '%s' %s", k->value, where), k->value,
				     names, ARRAY_SIZE(store_keys));
			free(where);
			ok = false;
		} else if (!(store_keys[found].tiers & (1u << tier))) {
			struct strbuf tiers = {0};
			struct diag *dg;

			for (j = 0; j < 3; j++) {
				if (store_keys[found].tiers & (1u << j)) {
					if (tiers.len)
						sb_adds(&tiers, " and ");
					sb_adds(&tiers, tier_names[j]);
				}
			}
			dg = err_at(ld, k, "%s.%s does not apply to %s store", path, k->value,
				    tier == TIER_OBJECT ? "an object" : tier == TIER_LUSTRE ? "a lustre" : "an nfs");
			diag_hint(dg, "%s applies to %s stores", k->value, tiers.buf);
			sb_release(&tiers);
			ok = false;
		}
	}
	st->deletion = DELETION_RETAIN;
	sub = xasprintf("%s.deletion", path);
	ok &= get_enum(ld, s, "deletion", sub, false, deletion_names, 2, &deletion) != GOT_BAD;
	st->deletion = (enum spec_deletion)deletion;
	free(sub);
	sub = xasprintf("%s.versioning", path);
	ok &= get_bool(ld, s, "versioning", sub, &st->versioning) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.expire_noncurrent_after", path);
	if (get_duration(ld, s, "expire_noncurrent_after", sub, &st->expire_noncurrent_after) ==
	    GOT_BAD) {
		ok = false;
	} else if (ynode_get(s, "expire_noncurrent_after") &&
		   (st->expire_noncurrent_after < 86400 || st->expire_noncurrent_after % 86400)) {
		struct diag *dg = err_at(ld, ynode_get(s, "expire_noncurrent_after"),
					 "%s must be a whole number of days", sub);

		diag_hint(dg, "object lifecycles count in days: write 1d, 30d, 90d");
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.capacity_gb", path);
	if (get_int(ld, s, "capacity_gb", sub, tier == TIER_LUSTRE, 1, 10000000, &st->capacity_gb) ==
	    GOT_BAD) {
		ok = false;
	} else if (tier == TIER_LUSTRE && st->capacity_gb != 1200 && st->capacity_gb % 2400) {
		int lo = st->capacity_gb / 2400 * 2400, hi = lo + 2400;
		struct diag *dg = err_at(ld, ynode_get(s, "capacity_gb"),
					 "%s must be 1200 or a multiple of 2400, got %d", sub,
					 st->capacity_gb);

		if (lo < 1200)
			lo = 1200;
		diag_hint(dg, "Lustre (PERSISTENT_2) sizes near it: %d or %d", lo, hi);
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.throughput_per_tib", path);
	if (get_enum(ld, s, "throughput_per_tib", sub, false, tputs, 4, &tput) == GOT_BAD)
		ok = false;
	st->throughput_per_tib = tput_values[tput];
	free(sub);
	sub = xasprintf("%s.import", path);
	if (get_string(ld, s, "import", sub, false, &st->import.name) == GOT_OK)
		st->import.node = ynode_get(s, "import");
	else if (ynode_get(s, "import"))
		ok = false;
	free(sub);
	sub = xasprintf("%s.mount", path);
	if (get_string(ld, s, "mount", sub, false, &st->mount) == GOT_OK)
		ok &= mount_ok(ld, ynode_get(s, "mount"), sub, st->mount);
	else if (ynode_get(s, "mount"))
		ok = false;
	else if (tier != TIER_OBJECT)
		st->mount = xasprintf("/mnt/%s", key->value);
	free(sub);
	sub = xasprintf("%s.encrypted", path);
	ok &= get_bool(ld, s, "encrypted", sub, &st->encrypted) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.allow_unencrypted", path);
	ok &= get_bool(ld, s, "allow_unencrypted", sub, &st->allow_unencrypted) != GOT_BAD;
	free(sub);
	(void)ok; /* the store is in the spec either way: references to it still resolve */
	free(path);
}

static bool load_refs(struct loader *ld, const struct ynode *role, const char *key,
		      const char *path, struct spec_ref **out, size_t *n)
{
	const struct ynode *list = ynode_get(role, key);
	char *sub = xasprintf("%s.%s", path, key);
	bool ok = true;
	size_t i;

	if (!list)
		goto out;
	if (list->kind != YNODE_SEQ) {
		struct diag *dg = err_at(ld, list, "%s must be a list of store names, got %s", sub,
					 ynode_describe(list));

		if (list->kind == YNODE_SCALAR && !ynode_is_null(list))
			diag_hint(dg, "write %s: [%s]", key, list->value);
		ok = false;
		goto out;
	}
	*out = xcalloc(list->n, sizeof(**out));
	for (i = 0; i < list->n; i++) {
		char *name = scalar_text(ld, list->vals[i], sub);

		if (!name) {
			ok = false;
			continue;
		}
		(*out)[*n].name = name;
		(*out)[(*n)++].node = list->vals[i];
	}
out:
	free(sub);
	return ok;
}

static void load_iam(struct loader *ld, const struct ynode *iam)
{
	struct spec *spec = ld->spec;
	const struct ynode *roles;
	size_t i, cap = 0;

	if (!iam)
		return;
	if (!expect_map(ld, iam, "iam") ||
	    !check_keys(ld, iam, "in iam", iam_keys, ARRAY_SIZE(iam_keys))) {
		spec->broken |= SPEC_BROKEN_IAM;
		if (iam->kind != YNODE_MAP)
			return;
	}
	roles = ynode_get(iam, "roles");
	if (!roles)
		return;
	if (!expect_map(ld, roles, "iam.roles")) {
		spec->broken |= SPEC_BROKEN_IAM;
		return;
	}
	for (i = 0; i < roles->n; i++) {
		const struct ynode *k = roles->keys[i], *r = roles->vals[i];
		char *path = xasprintf("iam.roles.%s", k->value), *where;
		struct spec_role *role;
		bool ok = check_name(ld, k, "role");

		if (r->kind == YNODE_SCALAR && ynode_is_null(r)) {
			/* `login:` with nothing: a role that may touch no store. */
		} else if (!expect_map(ld, r, path)) {
			spec->broken |= SPEC_BROKEN_IAM;
			free(path);
			continue;
		}
		role = ARRAY_PUSH(spec->roles, spec->nroles, cap);
		memset(role, 0, sizeof(*role));
		role->name = xstrdup(k->value);
		role->node = r;
		if (r->kind == YNODE_MAP) {
			where = xasprintf("in role '%s'", k->value);
			ok &= check_keys(ld, r, where, role_keys, ARRAY_SIZE(role_keys));
			free(where);
			ok &= load_refs(ld, r, "read", path, &role->read, &role->nread);
			ok &= load_refs(ld, r, "write", path, &role->write, &role->nwrite);
		}
		(void)ok;
		free(path);
	}
}

static void load_section_map(struct loader *ld, const struct ynode *root, const char *name,
			     unsigned broken,
			     void (*each)(struct loader *, const struct ynode *, const struct ynode *))
{
	const struct ynode *sec = ynode_get(root, name);
	size_t i;

	if (!sec)
		return;
	if (ynode_is_null(sec))
		return;
	if (!expect_map(ld, sec, name)) {
		ld->spec->broken |= broken;
		return;
	}
	for (i = 0; i < sec->n; i++)
		each(ld, sec->keys[i], sec->vals[i]);
}

static void load_root(struct loader *ld, const struct ynode *root)
{
	struct spec *spec = ld->spec;
	const struct ynode *budget;
	int format = 0;
	size_t i;

	if (!root || ynode_is_null(root)) {
		struct diag *dg = diags_add(ld->d, DIAG_ERROR, spec->file, 1, 1, "the spec is empty");

		diag_hint(dg, "start from examples/quickstart.yaml");
		spec->broken = ~0u;
		return;
	}
	if (root->kind != YNODE_MAP) {
		struct diag *dg = err_at(ld, root, "a spec must be a mapping of keys, got %s",
					 ynode_describe(root));

		diag_hint(dg, "start from examples/quickstart.yaml");
		spec->broken = ~0u;
		return;
	}
	check_keys(ld, root, "at the top level", top_keys, ARRAY_SIZE(top_keys));
	load_vars(ld, ynode_get(root, "vars"));

	switch (get_int(ld, root, "kiln", "kiln", false, 1, 1000000, &format)) {
	case GOT_NONE:
		diag_hint(err_at(ld, root, "missing required key 'kiln' (the spec format)"),
			  "add `kiln: 1` as the first line");
		break;
	case GOT_OK:
		if (format != KILN_SPEC_FORMAT)
			diag_hint(err_at(ld, ynode_get(root, "kiln"),
					 "spec format %d is newer than this kiln reads (format %d)",
					 format, KILN_SPEC_FORMAT),
				  "upgrade kiln to read this spec");
		break;
	case GOT_BAD:
		break;
	}
	spec->format = format;

	if (get_string(ld, root, "cluster", "cluster", true, &spec->cluster) == GOT_OK &&
	    !spec_name_ok(spec->cluster))
		err_at(ld, ynode_get(root, "cluster"),
		       "cluster name '%s' must be 1 to %d characters of a-z, 0-9 and '-', not "
		       "starting or ending with '-'",
		       spec->cluster, SPEC_MAX_NAME);
	load_provider(ld, root);
	if (get_duration(ld, root, "ttl", "ttl", &spec->ttl) == GOT_OK) {
		if (spec->ttl == 0)
			err_at(ld, ynode_get(root, "ttl"), "ttl must be longer than 0s");
		else if (spec->ttl > 365LL * 86400)
			diag_hint(err_at(ld, ynode_get(root, "ttl"), "ttl must be at most 365d"),
				  "remove ttl for a cluster that lives until `kiln destroy`");
	}
	budget = ynode_get(root, "budget");
	if (budget && expect_map(ld, budget, "budget")) {
		check_keys(ld, budget, "in budget", budget_keys, ARRAY_SIZE(budget_keys));
		if (get_number(ld, budget, "max_hourly_usd", "budget.max_hourly_usd",
			       &spec->max_hourly_usd) == GOT_OK &&
		    spec->max_hourly_usd <= 0)
			err_at(ld, ynode_get(budget, "max_hourly_usd"),
			       "budget.max_hourly_usd must be more than 0");
	}
	load_tags(ld, ynode_get(root, "tags"));
	load_network(ld, ynode_get(root, "network"));
	load_section_map(ld, root, "compute", SPEC_BROKEN_COMPUTE, load_group);
	load_section_map(ld, root, "storage", SPEC_BROKEN_STORAGE, load_store);
	load_iam(ld, ynode_get(root, "iam"));

	for (i = 0; i < spec->nvars; i++) {
		struct spec_var *v = &spec->vars[i];

		if (v->from_cli && !v->node && !v->used)
			diags_add(ld->d, DIAG_WARNING, spec->file, 0, 0,
				  "--var %s is not declared under vars: and not used by this spec",
				  v->name);
	}
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
	if (len > SPEC_MAX_BYTES) {
		char *lim = size_format(SPEC_MAX_BYTES);

		diags_add(d, DIAG_ERROR, file, 0, 0, "the spec is larger than %s, the most kiln reads",
			  lim);
		free(lim);
		return -1;
	}
	if (has_bom_utf16(u, len)) {
		struct diag *dg = diags_add(d, DIAG_ERROR, file, 1, 1,
					    "the spec is UTF-16; kiln reads UTF-8 only");

		diag_hint(dg, "convert it: iconv -f UTF-16 -t UTF-8");
		return -1;
	}
	bad = utf8_invalid_offset(u, len);
	if (bad < len) {
		size_t i;
		int line = 1, col = 1;
		struct diag *dg;

		for (i = 0; i < bad; i++) {
			if (buf[i] == '\n') {
				line++;
				col = 1;
			} else if ((u[i] & 0xc0) != 0x80) {
				col++;
			}
		}
		dg = diags_add(d, DIAG_ERROR, file, line, col,
			       "the spec is not valid UTF-8 (byte 0x%02x)", u[bad]);
		diag_hint(dg, "save the file as UTF-8");
		return -1;
	}
	if (memchr(buf, '\0', len)) {
		size_t off = (size_t)((const char *)memchr(buf, '\0', len) - buf);
		size_t i;
		int line = 1;

		for (i = 0; i < off; i++)
			line += buf[i] == '\n';
		diags_add(d, DIAG_ERROR, file, line, 1, "the spec contains a NUL byte; is it a text file?");
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
	load_root(&ld, spec->root);
	*out = spec;
	return d->errors > errors ? -1 : 0;
}

int spec_load_file(struct spec **out, const char *path, const struct spec_options *opts,
		   struct diags *d)
{
	struct kiln_error err;
	char *buf = NULL;
	size_t len = 0;
	int ret;
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;

	*out = NULL;
	if (file_read_all(path, SPEC_MAX_BYTES, &buf, &len, &err) < 0) {
		diags_add(d, DIAG_ERROR, name, 0, 0, "%s", err.msg);
		return -1;
	}
	ret = spec_load_buffer(out, name, buf, len, opts, d);
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
		free(g->disk.type);
		free(g->role.name);
	}
	free(spec->groups);
	for (i = 0; i < spec->nstores; i++) {
		free(spec->stores[i].name);
		free(spec->stores[i].import.name);
		free(spec->stores[i].mount);
	}
	free(spec->stores);
	for (i = 0; i < spec->nroles; i++) {
		free(spec->roles[i].name);
		refs_free(spec->roles[i].read, spec->roles[i].nread);
		refs_free(spec->roles[i].write, spec->roles[i].nwrite);
	}
	free(spec->roles);
	free(spec->cluster);
	free(spec->file);
	ydoc_free(spec->doc);
	free(spec);
}

const struct spec_group *spec_group_find(const struct spec *spec, const char *name)
{
	size_t i;

	for (i = 0; i < spec->ngroups; i++)
		if (strcmp(spec->groups[i].name, name) == 0)
			return &spec->groups[i];
	return NULL;
}

const struct spec_store *spec_store_find(const struct spec *spec, const char *name)
{
	size_t i;

	for (i = 0; i < spec->nstores; i++)
		if (strcmp(spec->stores[i].name, name) == 0)
			return &spec->stores[i];
	return NULL;
}

const struct spec_role *spec_role_find(const struct spec *spec, const char *name)
{
	size_t i;

	for (i = 0; i < spec->nroles; i++)
		if (strcmp(spec->roles[i].name, name) == 0)
			return &spec->roles[i];
	return NULL;
}

const struct ynode *spec_value_node(const struct ynode *section, const char *key)
{
	const struct ynode *n = ynode_get(section, key);

	return n ? n : section;
}
