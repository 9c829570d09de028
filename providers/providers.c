/*
 * providers.c - the provider table: the one place that lists every cloud.
 *
 * Adding a cloud is adding its folder under providers/ and one line here.
 * The lookups below are what the engine uses to reach a provider, a resource
 * type and an attribute's update policy without naming any of them.
 */
#include "provider.h"

#include <ctype.h>
#include <string.h>

#include "aws/aws.h"
#include "sim/sim.h"

/* In the order every list of providers shows them ("aws|sim"). */
static const struct provider *const providers[] = {
    &provider_aws,
    &provider_sim,
};

enum prov_tier provider_tier_find(const struct prov_type_tier *tiers, size_t n, const char *type)
{
	size_t i;

	for (i = 0; type && i < n; i++)
		if (strcmp(tiers[i].type, type) == 0)
			return tiers[i].tier;
	return PROV_TIER_OTHER;
}

const struct provider *provider_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(providers); i++)
		if (strcmp(providers[i]->name, name) == 0)
			return providers[i];
	return NULL;
}

_Static_assert(ARRAY_SIZE(providers) <= PROVIDERS_MAX, "raise PROVIDERS_MAX");

size_t provider_count(void)
{
	return ARRAY_SIZE(providers);
}

const struct provider *provider_at(size_t i)
{
	return i < ARRAY_SIZE(providers) ? providers[i] : NULL;
}

const struct provider *provider_first(bool simulated)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(providers); i++)
		if (providers[i]->simulated == simulated)
			return providers[i];
	return NULL;
}

const struct spec_provider *providers_for_spec(size_t *n)
{
	static struct spec_provider table[ARRAY_SIZE(providers)];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(providers); i++)
		table[i] = (struct spec_provider){providers[i]->name, providers[i]->simulated,
						  providers[i]->defaults, providers[i]->grammar};
	*n = ARRAY_SIZE(providers);
	return table;
}

char *provider_names_join(const char *prefix, const char *sep, const char *last)
{
	struct strbuf sb = {0};
	size_t i, n = ARRAY_SIZE(providers);

	for (i = 0; i < n; i++)
		sb_addf(&sb, "%s%s%s",
			i == 0	     ? ""
			: i + 1 == n ? last
				     : sep,
			prefix, providers[i]->name);
	return sb_detach(&sb);
}

const struct prov_type *provider_type(const struct provider *p, const char *type)
{
	size_t i;

	for (i = 0; p && type && i < p->ntypes; i++)
		if (strcmp(p->types[i].name, type) == 0)
			return &p->types[i];
	return NULL;
}

const struct prov_attr *provider_type_attr(const struct prov_type *t, const char *name)
{
	size_t i;

	for (i = 0; t && name && i < t->nattrs; i++)
		if (strcmp(t->attrs[i].name, name) == 0)
			return &t->attrs[i];
	return NULL;
}

const struct prov_need *provider_need_created(const struct provider *p, const char *type,
					      const char *dep_type)
{
	const struct prov_need *n;

	for (n = p ? p->needs : NULL; n && n->type && type && dep_type; n++)
		if (strcmp(n->type, type) == 0 && strcmp(n->dep_type, dep_type) == 0)
			return n;
	return NULL;
}

const char *provider_policy_name(enum prov_policy p)
{
	switch (p) {
	case POLICY_LIVE:
		return "live";
	case POLICY_REPLACE:
		return "replace";
	case POLICY_STOP:
		return "stop";
	}
	return "unknown";
}

void provider_json_sort(json_t *arr, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(arr), i;
	json_t **v = xcalloc(n + 1, sizeof(*v));

	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp);
	json_array_clear(arr);
	for (i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

json_t *provider_scope_tags(const struct prov_scope *scope, const char *address)
{
	json_t *tags = json_object(), *v;
	const char *k;

	json_object_foreach(scope->user_tags, k, v) json_object_set(tags, k, v);
	json_object_set_new(tags, PROV_TAG_CLUSTER, json_string(scope->cluster));
	json_object_set_new(tags, PROV_TAG_WORKSPACE, json_string(scope->workspace));
	json_object_set_new(tags, PROV_TAG_ADDRESS, json_string(address));
	if (scope->expires)
		json_object_set_new(tags, PROV_TAG_EXPIRES, json_string(scope->expires));
	if (scope->lineage)
		json_object_set_new(tags, PROV_TAG_LINEAGE, json_string(scope->lineage));
	if (scope->owner)
		json_object_set_new(tags, PROV_TAG_OWNER, json_string(scope->owner));
	return tags;
}

const char *provider_live_address(const json_t *live)
{
	const char *a = json_string_value(json_object_get(live, "address"));

	return a ? a
		 : json_string_value(
		       json_object_get(json_object_get(live, "tags"), PROV_TAG_ADDRESS));
}

const char *provider_live_lineage(const json_t *live)
{
	const char *l =
	    json_string_value(json_object_get(json_object_get(live, "tags"), PROV_TAG_LINEAGE));

	return l && *l ? l : NULL;
}

char *provider_tag_value(const char *s)
{
	struct strbuf sb = {0};
	size_t n = 0;

	/* Byte by byte: a multi-byte character becomes one '_' per byte, still under 256. */
	for (; s && *s && n < 256; s++, n++) {
		unsigned char c = (unsigned char)*s;

		sb_addc(&sb, isalnum(c) || strchr(" _.:/=+-@", c) ? (char)c : '_');
	}
	return sb.buf ? sb.buf : xstrdup("");
}
