/*
 * test_spec_schema.c - the JSON Schema of a spec is written from the
 * loader's tables: every key the loader takes has a type, the keys and
 * words are the loader's, and a store's keys are allowed by tier as the
 * loader allows them. (That examples validate and invalid specs are refused
 * is checked with a real validator, tests/check-spec-schema.py.)
 */
#include "testutil.h"

#include "spec_load.h"
#include "spec_schema.h"

static json_t *schema_for_test(void)
{
	struct spec_options opts = {0};

	opts.providers = providers_for_spec(&opts.nproviders);
	return spec_schema(&opts);
}

/* The schema of the value at dotted path under the top level's properties. */
static json_t *property(json_t *schema, const char *path)
{
	char *copy = xstrdup(path), *save = NULL, *key;
	json_t *at = schema;

	for (key = strtok_r(copy, ".", &save); key && at; key = strtok_r(NULL, ".", &save)) {
		json_t *anyof = json_object_get(at, "anyOf");
		json_t *first = json_object_get(json_array_get(anyof, 0), "type");

		/* A section that may be empty is anyOf [null, the section]. */
		if (first && strcmp(json_string_value(first), "null") == 0)
			at = json_array_get(anyof, 1);
		if (strcmp(key, "*") == 0)
			at = json_object_get(at, "additionalProperties");
		else
			at = json_object_get(json_object_get(at, "properties"), key);
	}
	free(copy);
	return at;
}

static void test_every_key_the_loader_takes_has_a_type(void **state)
{
	(void)state;
	assert_null(spec_schema_untyped());
}

static void test_top_level_keys_are_the_loaders_and_no_others(void **state)
{
	json_t *s = schema_for_test(), *props = json_object_get(s, "properties");
	size_t i;

	(void)state;
	assert_int_equal(json_object_size(props), ARRAY_SIZE(spec_top_keys));
	for (i = 0; i < ARRAY_SIZE(spec_top_keys); i++)
		assert_non_null(json_object_get(props, spec_top_keys[i]));
	assert_true(json_is_false(json_object_get(s, "additionalProperties")));
	json_decref(s);
}

static void test_enumerations_are_the_loaders_words(void **state)
{
	json_t *s = schema_for_test();
	json_t *fabric = json_object_get(
	    json_array_get(json_object_get(property(s, "network.fabric"), "anyOf"), 0), "enum");
	size_t i;

	(void)state;
	assert_int_equal(json_array_size(fabric), ARRAY_SIZE(spec_fabric_names));
	for (i = 0; i < ARRAY_SIZE(spec_fabric_names); i++)
		assert_string_equal(json_string_value(json_array_get(fabric, i)),
				    spec_fabric_names[i]);
	json_decref(s);
}

static void test_provider_names_are_the_providers_built_in(void **state)
{
	json_t *s = schema_for_test();
	json_t *names = json_object_get(
	    json_array_get(json_object_get(property(s, "provider.name"), "anyOf"), 0), "enum");
	size_t i, n;
	const struct spec_provider *p = providers_for_spec(&n);

	(void)state;
	assert_int_equal(json_array_size(names), n);
	for (i = 0; i < n; i++)
		assert_string_equal(json_string_value(json_array_get(names, i)), p[i].name);
	json_decref(s);
}

/* The names a store of tier may hold, from the schema's if/then rules. */
static json_t *store_names_for(json_t *s, const char *tier)
{
	json_t *rules = json_object_get(property(s, "storage.*"), "allOf"), *rule;
	size_t i;

	json_array_foreach(rules, i, rule)
	{
		json_t *cond = json_object_get(
		    json_object_get(json_object_get(json_object_get(rule, "if"), "properties"),
				    "tier"),
		    "const");

		if (strcmp(json_string_value(cond), tier) == 0)
			return json_object_get(json_object_get(json_object_get(rule, "then"),
							       "propertyNames"),
					       "enum");
	}
	return NULL;
}

static bool holds(json_t *names, const char *name)
{
	json_t *v;
	size_t i;

	json_array_foreach(names, i, v) if (strcmp(json_string_value(v), name) == 0) return true;
	return false;
}

static void test_store_keys_are_allowed_by_tier_as_the_loader_allows_them(void **state)
{
	json_t *s = schema_for_test();
	json_t *lustre = store_names_for(s, "lustre"), *object = store_names_for(s, "object");

	(void)state;
	assert_non_null(lustre);
	assert_non_null(object);
	assert_true(holds(lustre, "capacity_gb"));
	assert_false(holds(lustre, "versioning"));
	assert_true(holds(object, "versioning"));
	assert_false(holds(object, "capacity_gb"));
	assert_true(holds(object, "tier"));
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_key_the_loader_takes_has_a_type),
	    cmocka_unit_test(test_top_level_keys_are_the_loaders_and_no_others),
	    cmocka_unit_test(test_enumerations_are_the_loaders_words),
	    cmocka_unit_test(test_provider_names_are_the_providers_built_in),
	    cmocka_unit_test(test_store_keys_are_allowed_by_tier_as_the_loader_allows_them),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
