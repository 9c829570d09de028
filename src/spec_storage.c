/*
 * spec_storage.c - the storage and iam sections: stores by tier with the keys
 * each tier takes, and roles as read/write intent over stores plus the
 * allow: statements a role holds beyond them, checked for shape only (the
 * provider compiles them; an ARN of another cloud is not the loader's call).
 */
#include "spec.h"
#include "spec_load.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


const char *const spec_iam_keys[] = {"roles"};
const char *const spec_role_keys[] = {"read", "write", "allow"};
const char *const spec_allow_keys[] = {"actions", "resources", "sid"};

const struct spec_store_key spec_store_keys[] = {
    {"tier", 15},
    {"deletion", 7},
    {"versioning", 1 << TIER_OBJECT},
    {"expire_noncurrent_after", 1 << TIER_OBJECT},
    {"capacity_gb", 1 << TIER_LUSTRE},
    {"throughput_per_tib", 1 << TIER_LUSTRE},
    {"import", 1 << TIER_LUSTRE},
    {"mount", (1 << TIER_LUSTRE) | (1 << TIER_NFS) | (1 << TIER_LOCAL)},
    {"groups", 1 << TIER_LOCAL},
    {"encrypted", (1 << TIER_OBJECT) | (1 << TIER_NFS)},
    {"allow_unencrypted", (1 << TIER_OBJECT) | (1 << TIER_NFS)},
};

static bool mount_ok(struct loader *ld, const struct ynode *n, const char *path, const char *m)
{
	static const char *const system[] = {"/bin",   "/boot", "/dev",	 "/etc", "/lib",
					     "/lib64", "/proc", "/root", "/run", "/sbin",
					     "/sys",   "/usr",	"/var",	 "/tmp"};
	const char *p;
	size_t i;

	if (m[0] != '/' || strlen(m) < 2 || strlen(m) > 255 || str_ends_with(m, "/") ||
	    strstr(m, "//") || strstr(m, "/../") || str_ends_with(m, "/..") || strstr(m, "/./") ||
	    str_ends_with(m, "/.")) {
		struct diag *dg = spec_err(ld, n, "%s: '%s' is not a clean absolute path", path, m);

		diag_hint(dg, "write a path like /fsx or /home, without '..' or a trailing '/'");
		return false;
	}
	for (p = m; *p; p++) {
		if (!(isalnum((unsigned char)*p) || strchr("/._-", *p))) {
			spec_err(ld, n,
				 "%s: '%s' contains '%c'; use letters, digits, '.', '_', '-'", path,
				 m, *p);
			return false;
		}
	}
	for (i = 0; i < ARRAY_SIZE(system); i++) {
		size_t l = strlen(system[i]);

		if (strncmp(m, system[i], l) == 0 && (m[l] == '\0' || m[l] == '/')) {
			spec_err(ld, n, "%s: '%s' would hide the system directory %s", path, m,
				 system[i]);
			return false;
		}
	}
	return true;
}

/* A list of names at key (store names under a role, group names under a local store). */
static bool load_refs(struct loader *ld, const struct ynode *role, const char *key,
		      const char *path, const char *what, struct spec_ref **out, size_t *n)
{
	const struct ynode *list = ydoc_get(role, key);
	char *sub = xasprintf("%s.%s", path, key);
	bool ok = true;
	size_t i;

	if (!list)
		goto out;
	if (list->kind != YNODE_SEQ) {
		struct diag *dg = spec_err(ld, list, "%s must be a list of %s, got %s", sub, what,
					   ydoc_describe(list));

		if (list->kind == YNODE_SCALAR && !ydoc_is_null(list))
			diag_hint(dg, "write %s: [%s]", key, list->value);
		ok = false;
		goto out;
	}
	*out = xcalloc(list->n, sizeof(**out));
	for (i = 0; i < list->n; i++) {
		char *name = spec_scalar(ld, list->vals[i], sub);

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

void spec_load_store(struct loader *ld, const struct ynode *key, const struct ynode *s)
{
	struct spec *spec = ld->spec;
	struct spec_store *st;
	char *path = xasprintf("storage.%s", key->value), *sub;
	int tier = -1, deletion = DELETION_RETAIN, tput = 1;
	bool ok = true;
	size_t i;
	static const int tput_values[] = {125, 250, 500, 1000};

	ok &= spec_check_name(ld, key, "store");
	if (!spec_expect_map(ld, s, path)) {
		spec->broken |= SPEC_BROKEN_STORAGE;
		free(path);
		return;
	}
	sub = xasprintf("%s.tier", path);
	if (spec_get_enum(ld, s, "tier", sub, true, spec_tier_names, 4, &tier) != GOT_OK) {
		free(sub);
		free(path);
		spec->broken |= SPEC_BROKEN_STORAGE;
		return;
	}
	free(sub);
	st = ARRAY_PUSH(spec->stores, spec->nstores, spec->stores_cap);
	memset(st, 0, sizeof(*st));
	st->name = xstrdup(key->value);
	st->key = key;
	st->node = s;
	st->tier = (enum spec_tier)tier;
	st->encrypted = true;

	/* Keys: unknown ones, and known ones that belong to another tier. */
	for (i = 0; i < s->n; i++) {
		const struct ynode *k = s->keys[i];
		const char *names[ARRAY_SIZE(spec_store_keys)];
		size_t j, found = ARRAY_SIZE(spec_store_keys);

		for (j = 0; j < ARRAY_SIZE(spec_store_keys); j++) {
			names[j] = spec_store_keys[j].key;
			if (strcmp(k->value, spec_store_keys[j].key) == 0)
				found = j;
		}
		if (found == ARRAY_SIZE(spec_store_keys)) {
			char *where = xasprintf("in store '%s'", key->value);

			spec_hint_choices(spec_err(ld, k, "unknown key '%s' %s", k->value, where),
					  k->value, names, ARRAY_SIZE(spec_store_keys));
			free(where);
			ok = false;
		} else if (!(spec_store_keys[found].tiers & (1u << tier))) {
			struct strbuf tiers = {0};
			struct diag *dg;

			for (j = 0; j < 4; j++) {
				if (spec_store_keys[found].tiers & (1u << j)) {
					if (tiers.len)
						sb_adds(&tiers, " and ");
					sb_adds(&tiers, spec_tier_names[j]);
				}
			}
			dg = spec_err(ld, k, "%s.%s does not apply to %s store", path, k->value,
				      spec_tier_with_article((enum spec_tier)tier));
			diag_hint(dg, "%s applies to %s stores", k->value, tiers.buf);
			sb_release(&tiers);
			ok = false;
		}
	}
	/* Scratch is scratch: lustre is deleted with the cluster unless the spec says retain. */
	if (tier == TIER_LUSTRE)
		deletion = DELETION_DELETE;
	st->deletion_set = ydoc_get(s, "deletion") != NULL;
	sub = xasprintf("%s.deletion", path);
	ok &= spec_get_enum(ld, s, "deletion", sub, false, spec_deletion_names, 2, &deletion) !=
	      GOT_BAD;
	st->deletion = (enum spec_deletion)deletion;
	free(sub);
	sub = xasprintf("%s.versioning", path);
	ok &= spec_get_bool(ld, s, "versioning", sub, &st->versioning) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.expire_noncurrent_after", path);
	if (spec_get_duration(ld, s, "expire_noncurrent_after", sub,
			      &st->expire_noncurrent_after) == GOT_BAD) {
		ok = false;
	} else if (ydoc_get(s, "expire_noncurrent_after") &&
		   (st->expire_noncurrent_after < 86400 || st->expire_noncurrent_after % 86400)) {
		struct diag *dg = spec_err(ld, ydoc_get(s, "expire_noncurrent_after"),
					   "%s must be a whole number of days", sub);

		diag_hint(dg, "object lifecycles count in days: write 1d, 30d, 90d");
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.capacity_gb", path);
	if (spec_get_int(ld, s, "capacity_gb", sub, tier == TIER_LUSTRE, 1, 10000000,
			 &st->capacity_gb) == GOT_BAD) {
		ok = false;
	} else if (tier == TIER_LUSTRE && st->capacity_gb != 1200 && st->capacity_gb % 2400) {
		int lo = st->capacity_gb / 2400 * 2400, hi = lo + 2400;
		struct diag *dg =
		    spec_err(ld, ydoc_get(s, "capacity_gb"),
			     "%s must be 1200 or a multiple of 2400, got %d", sub, st->capacity_gb);

		if (lo < 1200)
			lo = 1200;
		diag_hint(dg, "Lustre (PERSISTENT_2) sizes near it: %d or %d", lo, hi);
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.throughput_per_tib", path);
	if (spec_get_enum(ld, s, "throughput_per_tib", sub, false, spec_lustre_throughputs,
			  ARRAY_SIZE(spec_lustre_throughputs), &tput) == GOT_BAD)
		ok = false;
	st->throughput_per_tib = tput_values[tput];
	free(sub);
	sub = xasprintf("%s.import", path);
	if (spec_get_string(ld, s, "import", sub, false, &st->import.name) == GOT_OK)
		st->import.node = ydoc_get(s, "import");
	else if (ydoc_get(s, "import"))
		ok = false;
	free(sub);
	sub = xasprintf("%s.mount", path);
	if (spec_get_string(ld, s, "mount", sub, false, &st->mount) == GOT_OK)
		ok &= mount_ok(ld, ydoc_get(s, "mount"), sub, st->mount);
	else if (ydoc_get(s, "mount"))
		ok = false;
	else if (tier != TIER_OBJECT)
		st->mount = xasprintf("/mnt/%s", key->value);
	free(sub);
	sub = xasprintf("%s.encrypted", path);
	ok &= spec_get_bool(ld, s, "encrypted", sub, &st->encrypted) != GOT_BAD;
	free(sub);
	sub = xasprintf("%s.allow_unencrypted", path);
	ok &= spec_get_bool(ld, s, "allow_unencrypted", sub, &st->allow_unencrypted) != GOT_BAD;
	free(sub);
	if (tier == TIER_LOCAL) {
		st->groups_node = ydoc_get(s, "groups");
		ok &= load_refs(ld, s, "groups", path, "group names", &st->groups, &st->ngroups);
	}
	(void)ok; /* the store is in the spec either way: references to it still resolve */
	free(path);
}

void spec_allow_free(struct spec_allow *allow, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < allow[i].nactions; j++)
			free(allow[i].actions[j]);
		free(allow[i].actions);
		for (j = 0; j < allow[i].nresources; j++)
			free(allow[i].resources[j]);
		free(allow[i].resources);
		free(allow[i].sid);
	}
	free(allow);
}

static bool all_of(const char *s, size_t n, const char *extra, bool lower_only)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(isdigit(c) || (lower_only ? islower(c) : isalpha(c)) || strchr(extra, c)))
			return false;
	}
	return true;
}

/* "*", or SERVICE:Action with SERVICE of [a-z0-9-] and Action of [A-Za-z0-9*?]. */
static bool action_ok(const char *a)
{
	const char *colon = strchr(a, ':');

	if (strcmp(a, "*") == 0)
		return true;
	return colon && colon > a && colon[1] && all_of(a, (size_t)(colon - a), "-", true) &&
	       all_of(colon + 1, strlen(colon + 1), "*?", false);
}

/*
 * The grammar an allow: statement follows: its provider's, or, while the
 * spec names none kiln has (or one with no grammar), the table's first, so
 * the statements are still checked in the same run and hints have examples.
 */
/* Any resource is a name: the grammar of a loader handed no provider that has one. */
static const char *no_fault(const char *resource)
{
	(void)resource;
	return NULL;
}

static const struct spec_grammar any_name = {
    .resource_fault = no_fault,
    .resource_form = "RESOURCE",
    .example_action = "SERVICE:Action",
    .example_resource = "RESOURCE",
};

static const struct spec_grammar *grammar_of(const struct loader *ld)
{
	const struct spec_options *o = ld->opts;
	size_t i;

	for (i = 0; o && i < o->nproviders; i++)
		if (ld->spec->provider.name && o->providers[i].grammar &&
		    strcmp(o->providers[i].name, ld->spec->provider.name) == 0)
			return o->providers[i].grammar;
	for (i = 0; o && i < o->nproviders; i++)
		if (o->providers[i].grammar)
			return o->providers[i].grammar;
	return &any_name;
}

/* A required, non-empty list of strings at key; every item passes check. */
static bool load_strings(struct loader *ld, const struct ynode *st, const char *key,
			 const char *path, const char *what, char ***out, size_t *n)
{
	const struct ynode *list = ydoc_get(st, key);
	const struct spec_grammar *gr = grammar_of(ld);
	char *sub = xasprintf("%s.%s", path, key);
	bool ok = true;
	size_t i;

	if (!list) {
		struct diag *dg = spec_err(ld, st, "missing required key '%s' in %s", key, path);

		if (strcmp(key, "actions") == 0)
			diag_hint(dg, "list the API actions it allows, like actions: [%s]",
				  gr->example_action);
		else
			diag_hint(dg,
				  "list the ARNs it applies to, like resources: [\"%s\"], or "
				  "[\"*\"] for an action that takes no resource",
				  gr->example_resource);
		ok = false;
		goto out;
	}
	if (list->kind != YNODE_SEQ) {
		struct diag *dg = spec_err(ld, list, "%s must be a list of %s, got %s", sub, what,
					   ydoc_describe(list));

		if (list->kind == YNODE_SCALAR && !ydoc_is_null(list))
			diag_hint(dg, "write %s: [%s]", key, list->value);
		ok = false;
		goto out;
	}
	if (list->n == 0) {
		diag_hint(spec_err(ld, list, "%s is empty", sub),
			  strcmp(key, "actions") == 0
			      ? "list at least one action, or remove the statement"
			      : "list at least one ARN (or \"*\"), or remove the statement");
		ok = false;
		goto out;
	}
	*out = xcalloc(list->n, sizeof(**out));
	for (i = 0; i < list->n; i++) {
		const struct ynode *item = list->vals[i];
		char *ipath = xasprintf("%s[%zu]", sub, i);
		char *v = spec_scalar(ld, item, ipath);
		const char *fault = NULL;

		if (v && strcmp(key, "actions") == 0 && !action_ok(v)) {
			diag_hint(spec_err(ld, item, "%s: '%s' is not an IAM action", ipath, v),
				  "write SERVICE:Action (SERVICE of a-z, 0-9 and '-'; Action of "
				  "letters, digits, '*' and '?'), like %s, or \"*\"",
				  gr->example_action);
			free(v);
			v = NULL;
		} else if (v && strcmp(key, "resources") == 0 && (fault = gr->resource_fault(v))) {
			struct diag *dg =
			    spec_err(ld, item, "%s: '%s' is not an ARN: %s", ipath, v, fault);

			diag_hint(dg, "write \"*\" or %s, like %s", gr->resource_form,
				  gr->example_resource);
			free(v);
			v = NULL;
		}
		free(ipath);
		if (!v) {
			ok = false;
			continue;
		}
		(*out)[(*n)++] = v;
	}
out:
	free(sub);
	return ok;
}

/* allow: a list of {actions, resources, sid?} statements, as written. */
static bool load_allow(struct loader *ld, const struct ynode *role, const char *path,
		       struct spec_role *out)
{
	const struct ynode *list = ydoc_get(role, "allow");
	char *sub = xasprintf("%s.allow", path);
	bool ok = true;
	size_t i, j;

	if (!list)
		goto out;
	if (list->kind != YNODE_SEQ) {
		diag_hint(spec_err(ld, list, "%s must be a list of statements, got %s", sub,
				   ydoc_describe(list)),
			  "write allow: [{actions: [SERVICE:Action], resources: [ARN]}]");
		ok = false;
		goto out;
	}
	out->allow = xcalloc(list->n, sizeof(*out->allow));
	for (i = 0; i < list->n; i++) {
		const struct ynode *st = list->vals[i];
		char *spath = xasprintf("%s[%zu]", sub, i), *where, *ssub;
		struct spec_allow *a = &out->allow[out->nallow];

		if (st->kind != YNODE_MAP) {
			diag_hint(spec_err(ld, st, "%s must be a mapping, got %s", spath,
					   ydoc_describe(st)),
				  "write {actions: [SERVICE:Action], resources: [ARN]}");
			ok = false;
			free(spath);
			continue;
		}
		memset(a, 0, sizeof(*a));
		a->node = st;
		where = xasprintf("in an allow statement of role '%s'", out->name);
		ok &= spec_check_keys(ld, st, where, spec_allow_keys, ARRAY_SIZE(spec_allow_keys));
		free(where);
		ok &= load_strings(ld, st, "actions", spath, "actions", &a->actions, &a->nactions);
		ok &=
		    load_strings(ld, st, "resources", spath, "ARNs", &a->resources, &a->nresources);
		ssub = xasprintf("%s.sid", spath);
		if (spec_get_string(ld, st, "sid", ssub, false, &a->sid) == GOT_BAD) {
			ok = false;
		} else if (a->sid && (!*a->sid || !all_of(a->sid, strlen(a->sid), "", false))) {
			diag_hint(spec_err(ld, ydoc_get(st, "sid"),
					   "%s '%s' must be letters and digits only", ssub, a->sid),
				  "IAM takes [A-Za-z0-9] in a statement id, like PullImages");
			ok = false;
		} else if (a->sid) {
			for (j = 0; j < out->nallow; j++) {
				if (out->allow[j].sid && strcmp(out->allow[j].sid, a->sid) == 0) {
					diag_hint(spec_err(ld, ydoc_get(st, "sid"),
							   "%s '%s' is also the sid of allow[%zu]",
							   ssub, a->sid, j),
						  "give each statement its own sid");
					ok = false;
					break;
				}
			}
		}
		free(ssub);
		free(spath);
		out->nallow++;
	}
out:
	free(sub);
	return ok;
}

void spec_load_iam(struct loader *ld, const struct ynode *iam)
{
	struct spec *spec = ld->spec;
	const struct ynode *roles;
	size_t i, cap = 0;

	if (!iam)
		return;
	if (!spec_expect_map(ld, iam, "iam") ||
	    !spec_check_keys(ld, iam, "in iam", spec_iam_keys, ARRAY_SIZE(spec_iam_keys))) {
		spec->broken |= SPEC_BROKEN_IAM;
		if (iam->kind != YNODE_MAP)
			return;
	}
	roles = ydoc_get(iam, "roles");
	if (!roles)
		return;
	if (!spec_expect_map(ld, roles, "iam.roles")) {
		spec->broken |= SPEC_BROKEN_IAM;
		return;
	}
	for (i = 0; i < roles->n; i++) {
		const struct ynode *k = roles->keys[i], *r = roles->vals[i];
		char *path = xasprintf("iam.roles.%s", k->value), *where;
		struct spec_role *role;
		bool ok = spec_check_name(ld, k, "role");

		if (r->kind == YNODE_SCALAR && ydoc_is_null(r)) {
			/* `login:` with nothing: a role that may touch no store. */
		} else if (!spec_expect_map(ld, r, path)) {
			spec->broken |= SPEC_BROKEN_IAM;
			free(path);
			continue;
		}
		role = ARRAY_PUSH(spec->roles, spec->nroles, cap);
		memset(role, 0, sizeof(*role));
		role->name = xstrdup(k->value);
		role->key = k;
		role->node = r;
		if (r->kind == YNODE_MAP) {
			where = xasprintf("in role '%s'", k->value);
			ok &= spec_check_keys(ld, r, where, spec_role_keys,
					      ARRAY_SIZE(spec_role_keys));
			free(where);
			ok &= load_refs(ld, r, "read", path, "store names", &role->read,
					&role->nread);
			ok &= load_refs(ld, r, "write", path, "store names", &role->write,
					&role->nwrite);
			ok &= load_allow(ld, r, path, role);
		}
		(void)ok;
		free(path);
	}
}
