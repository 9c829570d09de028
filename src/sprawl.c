/*
 * sprawl.c - orphans, their cost and their destroy plan (see sprawl.h).
 */
#include "sprawl.h"

#include <stdlib.h>
#include <string.h>

#include "state.h"

static const char *tag(const json_t *live, const char *key)
{
	return json_string_value(json_object_get(json_object_get(live, "tags"), key));
}

/* Every recorded id, over all workspaces: {"ID": true}. */
static json_t *recorded_ids(const json_t *recorded)
{
	json_t *ids = json_object(), *doc, *r;
	const char *ws, *addr;

	json_object_foreach((json_t *)recorded, ws, doc)
	{
		json_object_foreach(state_resources(doc), addr, r)
		{
			const char *id = json_string_value(json_object_get(r, "id"));

			if (id)
				json_object_set_new(ids, id, json_true());
		}
	}
	return ids;
}

/* Why no workspace holds a live resource of cluster c, workspace w, address addr. */
static char *reason(const json_t *recorded, const char *c, const char *w, const char *addr)
{
	json_t *doc = json_object_get(recorded, w), *r;
	const char *held, *rid;

	if (!doc)
		return xasprintf("workspace '%s' does not exist in the state repository", w);
	held = state_cluster(doc);
	if (held && strcmp(held, c) != 0)
		return xasprintf("workspace '%s' holds cluster '%s', not '%s'", w, held, c);
	r = addr ? json_object_get(state_resources(doc), addr) : NULL;
	rid = json_string_value(json_object_get(r, "id"));
	if (rid)
		return xasprintf("workspace '%s' records %s as %s: this one is a duplicate", w,
				 addr, rid);
	return xasprintf("workspace '%s' does not record it", w);
}

static int orphan_cmp(const void *a, const void *b)
{
	static const char *const keys[] = {"cluster", "workspace", "address", "id"};
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	size_t i;
	int c;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *p = json_string_value(json_object_get(x, keys[i]));
		const char *q = json_string_value(json_object_get(y, keys[i]));

		c = strcmp(p ? p : "", q ? q : "");
		if (c)
			return c;
	}
	return 0;
}

json_t *sprawl_orphans(const json_t *live, const json_t *recorded, const json_t *known,
		       size_t *foreign)
{
	json_t *ids = recorded_ids(recorded), *out = json_array(), *l;
	size_t i;

	if (foreign)
		*foreign = 0;
	json_array_foreach((json_t *)live, i, l)
	{
		const char *id = json_string_value(json_object_get(l, "id"));
		const char *status = json_string_value(json_object_get(l, "status"));
		const char *c = tag(l, PROV_TAG_CLUSTER), *w = tag(l, PROV_TAG_WORKSPACE);
		const char *addr = json_string_value(json_object_get(l, "address"));
		char *why;

		if (!id || !c || !w || json_object_get(ids, id))
			continue;
		if (status && strcmp(status, "deleting") == 0)
			continue;
		if (prov_live_lineage(l) && !json_object_get(known, prov_live_lineage(l))) {
			if (foreign)
				(*foreign)++;
			continue;
		}
		if (!addr)
			addr = tag(l, PROV_TAG_ADDRESS);
		why = reason(recorded, c, w, addr);
		json_array_append_new(
		    out,
		    json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:s?, s:s, s:s?, s:O}", "cluster", c,
			      "workspace", w, "address", addr, "type",
			      json_string_value(json_object_get(l, "type")), "id", id, "status",
			      status, "reason", why, "lineage", prov_live_lineage(l), "attrs",
			      json_object_get(l, "attrs") ? json_object_get(l, "attrs")
							  : json_null()));
		free(why);
	}
	json_decref(ids);
	/* Sorted: the same listing prints the same way. */
	prov_json_sort(out, orphan_cmp);
	return out;
}

double sprawl_hourly(const struct provider *prov, struct prov_ctx *ctx, const char *type,
		     const json_t *attrs, json_t *unpriced)
{
	json_t *comps = json_array(), *c;
	double sum = 0;
	size_t i;

	if (prov->cost && type)
		prov->cost(ctx, type, attrs, comps, unpriced);
	json_array_foreach(comps, i, c) sum += json_number_value(json_object_get(c, "hourly"));
	json_decref(comps);
	return sum;
}

bool sprawl_is_store(const struct provider *prov, const char *type)
{
	static const enum prov_part stores[] = {PART_OBJECT, PART_LUSTRE, PART_NFS};
	size_t i;

	for (i = 0; prov->part_type && type && i < ARRAY_SIZE(stores); i++) {
		const char *t = prov->part_type(stores[i]);

		if (t && strcmp(t, type) == 0)
			return true;
	}
	return false;
}

/* The position of a type in the provider's table (ntypes when unknown). */
static size_t type_rank(const struct provider *prov, const char *type)
{
	size_t i;

	for (i = 0; type && i < prov->ntypes; i++)
		if (strcmp(prov->types[i].name, type) == 0)
			return i;
	return prov->ntypes;
}

json_t *sprawl_adopt_plan(const json_t *orphans, const json_t *state, json_t *skipped)
{
	json_t *changes = json_array(), *count = json_object(), *o, *n;
	const json_t *held = state_resources(state);
	size_t i;

	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));

		if (addr) {
			n = json_object_get(count, addr);
			json_object_set_new(count, addr,
					    json_integer(n ? json_integer_value(n) + 1 : 1));
		}
	}
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *rid =
		    addr ? json_string_value(json_object_get(json_object_get(held, addr), "id"))
			 : NULL;
		char *why = NULL;

		if (!addr)
			why = xstrdup("it carries no kiln:address tag");
		else if (json_object_get(held, addr))
			why = xasprintf("the workspace records %s as %s", addr, rid ? rid : "?");
		else if (json_integer_value(json_object_get(count, addr)) > 1)
			why = xasprintf("%" JSON_INTEGER_FORMAT " live resources carry %s",
					json_integer_value(json_object_get(count, addr)), addr);
		if (why) {
			json_array_append_new(skipped, json_pack("{s:s?, s:s, s:s}", "address",
								 addr, "id", id, "reason", why));
			free(why);
			continue;
		}
		json_array_append_new(changes,
				      json_pack("{s:s, s:O, s:{s:[s], s:{s:s}}, s:{s:s, s:[]}}",
						"address", addr, "type", json_object_get(o, "type"),
						"change", "actions", "no-op", "importing", "id", id,
						"kiln", "id", id, "deps"));
	}
	json_decref(count);
	return json_pack("{s:o}", "resource_changes", changes);
}

json_t *sprawl_destroy_plan(const struct provider *prov, const json_t *orphans)
{
	json_t *changes = json_array(), *seen = json_object(), *names = json_array(), *o;
	size_t i, j;

	/* Each change's address: the orphan's, unless two orphans share it. */
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		json_t *n = json_object_get(seen, addr ? addr : "");

		json_object_set_new(seen, addr ? addr : "",
				    json_integer(n ? json_integer_value(n) + 1 : 1));
	}
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *addr = json_string_value(json_object_get(o, "address"));
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *type = json_string_value(json_object_get(o, "type"));
		char *name;

		if (!addr)
			name = xasprintf("%s.%s", type, id);
		else if (json_integer_value(json_object_get(seen, addr)) > 1)
			name = xasprintf("%s (%s)", addr, id);
		else
			name = xstrdup(addr);
		json_array_append_new(names, json_string(name));
		free(name);
	}
	json_array_foreach((json_t *)orphans, i, o)
	{
		const char *type = json_string_value(json_object_get(o, "type"));
		size_t rank = type_rank(prov, type);
		json_t *deps = json_array(), *p;

		json_array_foreach((json_t *)orphans, j, p)
		{
			if (type_rank(prov, json_string_value(json_object_get(p, "type"))) < rank)
				json_array_append(deps, json_array_get(names, j));
		}
		json_array_append_new(
		    changes, json_pack("{s:O, s:s?, s:{s:[s], s:O?, s:n}, s:{s:O, s:o}}", "address",
				       json_array_get(names, i), "type", type, "change", "actions",
				       "delete", "before", json_object_get(o, "attrs"), "after",
				       "kiln", "id", json_object_get(o, "id"), "deps", deps));
	}
	json_decref(names);
	json_decref(seen);
	return json_pack("{s:o}", "resource_changes", changes);
}
