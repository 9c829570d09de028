/*
 * takeover.c - see takeover.h. It retags through the provider's claim hook
 * and writes state resources the way an adoption records them; it never
 * prints and never commits.
 */
#include "takeover.h"
#include "jsonc.h"

#include <string.h>

#include "state.h"

static const char *str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool matches(const json_t *live, const struct takeover_filter *f)
{
	const char *lineage = provider_live_lineage(live), *addr = provider_live_address(live);
	size_t i;

	if (f->from && strcmp(f->from, "none") == 0 ? lineage != NULL
	    : f->from				    ? !lineage || strcmp(lineage, f->from) != 0
						    : false)
		return false;
	if (!f->naddrs)
		return true;
	for (i = 0; i < f->naddrs; i++)
		if (addr && strcmp(addr, f->addrs[i]) == 0)
			return true;
	return false;
}

/* Every check before the first claim: a takeover changes all it was asked to, or nothing. */
static int select_foreign(const json_t *state, const json_t *foreign,
			  const struct takeover_filter *f, json_t *chosen, struct kiln_error *err)
{
	const json_t *held = state_resources(state), *live;
	json_t *seen = json_object();
	size_t i;
	int rc = -1;

	json_array_foreach(foreign, i, live)
	{
		const char *addr = provider_live_address(live), *rid;

		if (!addr || !matches(live, f))
			continue;
		if (json_object_get(seen, addr)) {
			kiln_error_set(err, "two live resources carry %s (%s and %s)", addr,
				       str_of(json_object_get(seen, addr), "id"),
				       str_of(live, "id"));
			kiln_error_hint(err, "take one state's with --from LINEAGE (the plan lists "
					     "each resource's lineage)");
			goto out;
		}
		if (json_object_get(held, addr)) {
			rid = str_of(json_object_get(held, addr), "id");
			kiln_error_set(err, "this state already records %s (as %s)", addr,
				       rid ? rid : "no id");
			kiln_error_hint(err,
					"forget the recorded one first (kiln state rm %s), or "
					"leave %s out",
					addr, addr);
			goto out;
		}
		json_object_set_new(seen, addr, jsonc_share(live));
		json_array_append_new(chosen, jsonc_share(live));
	}
	for (i = 0; i < f->naddrs; i++) {
		if (!json_object_get(seen, f->addrs[i])) {
			kiln_error_set(err, "%s is not a resource another state owns in this scope",
				       f->addrs[i]);
			kiln_error_hint(err,
					"kiln plan lists them under \"Another state's resources "
					"here\"");
			goto out;
		}
	}
	if (!json_array_size(chosen) && f->from) {
		kiln_error_set(err, "no resource of this scope carries lineage %s", f->from);
		kiln_error_hint(err, "kiln plan lists each resource's lineage; \"none\" takes "
				     "those made before lineages");
		goto out;
	}
	rc = 0;
out:
	json_decref(seen);
	return rc;
}

/* The state's record of a claimed resource: as an adoption records it. */
static json_t *record_of(const struct engine *e, const struct prov_type *t, const char *addr,
			 const json_t *live)
{
	const json_t *desired = json_object_get(e->desired, addr);
	json_t *attrs = json_object_get(live, "attrs"), *deps = json_object_get(desired, "deps");
	json_t *sensitive = json_array();
	size_t i;

	for (i = 0; i < t->nattrs; i++)
		if (t->attrs[i].sensitive && json_object_get(attrs, t->attrs[i].name))
			json_array_append_new(sensitive, json_string(t->attrs[i].name));
	return json_pack("{s:s, s:O, s:O, s:O, s:o}", "type", t->name, "id",
			 json_object_get(live, "id"), "attrs", attrs ? attrs : json_object(),
			 "deps", deps ? deps : json_array(), "sensitive", sensitive);
}

int takeover_run(struct engine *e, json_t *state, const json_t *foreign,
		 const struct takeover_filter *f, json_t **taken, struct kiln_error *err)
{
	json_t *chosen = json_array(), *live;
	size_t i;
	int rc = 0;

	*taken = json_array();
	if (!e->prov->claim) {
		kiln_error_set(err,
			       "the %s provider cannot retag resources, so kiln cannot take "
			       "them over",
			       e->prov->name);
		json_decref(chosen);
		return -1;
	}
	if (select_foreign(state, foreign, f, chosen, err) < 0) {
		json_decref(chosen);
		return -1;
	}
	json_array_foreach(chosen, i, live)
	{
		const struct prov_type *t = engine_type(e, live);
		const char *addr = provider_live_address(live), *id = str_of(live, "id");
		json_t *now = NULL;

		if (!t) {
			kiln_error_set(err, "%s: the %s provider has no type %s", addr,
				       e->prov->name, str_of(live, "type"));
			rc = -1;
			break;
		}
		ENGINE_CALL(rc, err, e->prov->claim(e->ctx, &e->scope, t->name, id, &now, err));
		if (rc != PROV_OK) {
			rc = -1;
			break;
		}
		json_object_set_new(state_resources(state), addr, record_of(e, t, addr, now));
		json_array_append_new(
		    *taken, json_pack("{s:s, s:O, s:s, s:s?, s:s?}", "address", addr, "id",
				      json_object_get(now, "id"), "type", t->name, "from",
				      provider_live_lineage(live), "owner",
				      str_of(json_object_get(live, "tags"), PROV_TAG_OWNER)));
		json_decref(now);
	}
	json_decref(chosen);
	return rc;
}
