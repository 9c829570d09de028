/*
 * repair.c - replacing the unhealthy nodes of node groups (kiln repair).
 * The reports are the nodes' own (providers/nodes.c reads them); the
 * replacement is the provider's, launch first and terminate after, so a
 * launch that fails touches nothing; here only what to replace and the
 * record of what was done.
 */
#include "repair.h"
#include "health.h"
#include "jsonc.h"
#include "strbuf.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* "TYPE.NAME" is a node group of this provider. */
static bool is_group(const struct engine *e, const char *address)
{
	const char *type = e->prov->part_type ? e->prov->part_type(PART_GROUP) : NULL;
	size_t n = type ? strlen(type) : 0;

	return type && strncmp(address, type, n) == 0 && address[n] == '.';
}

static bool named(const char *address, const char *const *names, size_t n)
{
	const char *dot = strchr(address, '.');
	size_t i;

	for (i = 0; i < n; i++)
		if (dot && strcmp(dot + 1, names[i]) == 0)
			return true;
	return n == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a),
		      json_string_value(*(json_t *const *)b));
}

/* Every name is a node group of the state; else err lists the ones there are. */
static int names_check(const struct engine *e, const json_t *resources, const char *const *names,
		       size_t n, struct kiln_error *err)
{
	struct strbuf there = {0};
	const char *addr;
	const json_t *res;
	size_t i;

	for (i = 0; i < n; i++) {
		bool found = false;

		json_object_foreach_const(resources, addr, res)
		{
			const char *dot = strchr(addr, '.');

			found |= is_group(e, addr) && dot && strcmp(dot + 1, names[i]) == 0;
		}
		if (found)
			continue;
		{
			json_t *groups = json_array(), *g;
			size_t j;

			json_object_foreach_const(resources, addr, res)
			{
				if (is_group(e, addr))
					json_array_append_new(groups,
							      json_string(strchr(addr, '.') + 1));
			}
			provider_json_sort(groups, by_name);
			json_array_foreach(groups, j, g)
			    sb_addf(&there, "%s%s", j ? ", " : "", json_string_value(g));
			json_decref(groups);
		}
		kiln_error_set(err,
			       "'%s' is not a node group of this workspace; its node groups: %s",
			       names[i], there.len ? there.buf : "(none)");
		kiln_error_hint(err, "name one of them, or none to repair every group");
		sb_release(&there);
		return -1;
	}
	return 0;
}

static int by_address(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "address")),
		      json_string_value(json_object_get(*(json_t *const *)b, "address")));
}

json_t *repair_targets(const struct engine *e, const json_t *state, const json_t *live,
		       const char *const *names, size_t n, struct kiln_error *err)
{
	const json_t *resources = json_object_get(state, "resources"), *res;
	json_t *out;
	const char *addr;

	if (names_check(e, resources, names, n, err) < 0)
		return NULL;
	out = json_array();
	json_object_foreach_const(resources, addr, res)
	{
		const json_t *found = json_array_get(json_object_get(live, addr), 0);
		const json_t *attrs = json_object_get(found ? found : res, "attrs");
		const char *id = json_string_value(json_object_get(found ? found : res, "id"));
		json_t *g, *bad;

		if (!is_group(e, addr) || !named(addr, names, n) || !id)
			continue;
		g = health_group(addr, id, attrs);
		bad = json_object_get(g, "unhealthy");
		if (json_array_size(bad))
			json_array_append_new(
			    out, json_pack("{s:O, s:s, s:s, s:O, s:O, s:O?}", "group",
					   json_object_get(g, "group"), "address", addr, "id", id,
					   "nodes", json_object_get(g, "nodes"), "replace", bad,
					   "instance_ids", json_object_get(attrs, "instance_ids")));
		json_decref(g);
	}
	provider_json_sort(out, by_address);
	return out;
}

/* The group's record with the live object's id and attrs; sensitive values kept. */
static void record(json_t *state, const char *address, const json_t *live)
{
	json_t *res = json_object_get(json_object_get(state, "resources"), address);
	json_t *attrs = json_deep_copy(json_object_get(live, "attrs")), *n;
	const json_t *old = json_object_get(res, "attrs");
	size_t i;

	json_array_foreach(json_object_get(res, "sensitive"), i, n)
	{
		const char *name = json_string_value(n);

		if (name && json_object_get(old, name) && !json_object_get(attrs, name))
			json_object_set(attrs, name, json_object_get(old, name));
	}
	json_object_set(res, "id", json_object_get(live, "id"));
	json_object_set_new(res, "attrs", attrs);
}

int repair_group(struct engine *e, json_t *state, const json_t *target, json_t **added,
		 struct kiln_error *err)
{
	const char *addr = json_string_value(json_object_get(target, "address"));
	const json_t *res = json_object_get(json_object_get(state, "resources"), addr);
	const json_t *bad = json_object_get(target, "replace"), *b;
	json_t *v;
	const struct prov_type *t = engine_type(e, res);
	const char **ids = xcalloc(json_array_size(bad) + 1, sizeof(*ids));
	json_t *before, *live = NULL;
	size_t i, j;
	int rc;

	*added = NULL;
	json_array_foreach(bad, i, b) ids[i] =
	    json_string_value(json_object_get(b, "id"));
	if (!t || !t->replace_nodes) {
		kiln_error_set(err, "%s: its provider cannot replace single nodes", addr);
		kiln_error_hint(err, "replace the whole group: kiln apply --replace %s", addr);
		free(ids);
		return -1;
	}
	ENGINE_CALL(rc, err,
		    t->replace_nodes(e->ctx, json_string_value(json_object_get(res, "id")), ids,
				     json_array_size(bad), &live, err));
	free(ids);
	if (rc != PROV_OK)
		return -1;
	/*
	 * The nodes before are those the state recorded, not those found: a
	 * node a killed repair launched is found (and adopted by the launch's
	 * client token) but was never recorded, and it is the one added.
	 */
	before = json_incref(json_object_get(json_object_get(res, "attrs"), "instance_ids"));
	if (!before)
		before = json_incref(json_object_get(target, "instance_ids"));
	record(state, addr, live);
	/* The new ones: in the group now, and neither there before nor replaced. */
	*added = json_array();
	json_array_foreach(json_object_get(json_object_get(live, "attrs"), "instance_ids"), i, v)
	{
		bool old = false;

		for (j = 0; j < json_array_size(before) && !old; j++)
			old = json_equal(v, json_array_get(before, j));
		if (!old)
			json_array_append(*added, v);
	}
	json_decref(before);
	json_decref(live);
	return 0;
}
