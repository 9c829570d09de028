/*
 * plan_values.c - a plan's planned_values and prior_state: its resource
 * changes in Terraform's values representation, for the readers of
 * `terraform show -json` (Checkov's plan reader, OPA and conftest policies),
 * which look for the resources there rather than in resource_changes.
 * Derived from resource_changes alone, so they cannot say anything else;
 * plan_match checks that a plan file's still say the same.
 */
#include "plan.h"

#include "jsonc.h"

#include <stdlib.h>
#include <string.h>

/* The state representation's version Terraform writes in prior_state. */
#define PRIOR_STATE_FORMAT_VERSION "1.0"

/*
 * A resource as Terraform's values representation writes it: its address,
 * mode, type, name and provider from the change, its values (without those
 * not known until apply, as Terraform leaves them out) and which of them are
 * sensitive ({} when none).
 */
static json_t *values_resource(const json_t *rc, const json_t *values, const json_t *sensitive,
			       const json_t *unknown)
{
	json_t *v = jsonc_copy(values);
	const json_t *flag;
	const char *key;

	json_object_foreach_const(unknown, key, flag) if (json_is_true(flag))
	    json_object_del(v, key);
	return json_pack("{s:O, s:O, s:O, s:O, s:O, s:o, s:o}", "address",
			 json_object_get(rc, "address"), "mode", json_object_get(rc, "mode"),
			 "type", json_object_get(rc, "type"), "name", json_object_get(rc, "name"),
			 "provider_name", json_object_get(rc, "provider_name"), "values", v,
			 "sensitive_values",
			 json_is_object(sensitive) ? json_deep_copy(sensitive) : json_object());
}

/* {"root_module": {"resources": resources}}, resources stolen. */
static json_t *root_module(json_t *resources)
{
	return json_pack("{s:{s:o}}", "root_module", "resources", resources);
}

void plan_values_views(const json_t *plan, json_t **planned, json_t **prior)
{
	json_t *after = json_array(), *before = json_array();
	const json_t *rc;
	size_t i;

	json_array_foreach(json_object_get(plan, "resource_changes"), i, rc)
	{
		const json_t *ch = json_object_get(rc, "change");
		const json_t *b = json_object_get(ch, "before"), *a = json_object_get(ch, "after");
		enum plan_action act = plan_action_of(json_object_get(ch, "actions"));

		/* A deposed duplicate is not the object at its address. */
		if (json_is_object(b) && !json_object_get(rc, "deposed"))
			json_array_append_new(
			    before,
			    values_resource(rc, b, json_object_get(ch, "before_sensitive"), NULL));
		/* What is deleted (or released from the state, retained) is not planned. */
		if (json_is_object(a) && act != PLAN_DELETE)
			json_array_append_new(
			    after, values_resource(rc, a, json_object_get(ch, "after_sensitive"),
						   json_object_get(ch, "after_unknown")));
	}
	*planned = root_module(after);
	*prior = json_pack("{s:s, s:o}", "format_version", PRIOR_STATE_FORMAT_VERSION, "values",
			   root_module(before));
}

void plan_values_add(json_t *plan)
{
	json_t *planned, *prior;

	plan_values_views(plan, &planned, &prior);
	json_object_set_new(plan, "planned_values", planned);
	json_object_set_new(plan, "prior_state", prior);
}

int plan_values_check(const json_t *plan, const char *path, struct kiln_error *err)
{
	static const char *const keys[] = {"planned_values", "prior_state"};
	json_t *views[2];
	size_t i;
	int ret = 0;

	plan_values_views(plan, &views[0], &views[1]);
	for (i = 0; i < 2 && ret == 0; i++) {
		const json_t *have = json_object_get(plan, keys[i]);

		/* A plan made before kiln wrote them has neither. */
		if (have && !json_equal(have, views[i])) {
			kiln_error_set(
			    err,
			    "%s does not match the plan its spec and state give now: its "
			    "%s are not what its own resource_changes give",
			    path, keys[i]);
			ret = -1;
		}
	}
	json_decref(views[0]);
	json_decref(views[1]);
	return ret;
}
