/*
 * test_diff.c - diff rules and update policies over a fake provider: create,
 * no-op, update (live and stop), replace (forced, requested, through a
 * dependency), delete, adopt, drift, duplicates, retained stores, sensitive
 * values, --target and --destroy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "state.h"

static const struct prov_attr thing_attrs[] = {
    {"size", POLICY_LIVE, false, "resized in place"},
    {"zone", POLICY_REPLACE, false, "a thing cannot move"},
    {"mode", POLICY_STOP, false, "the thing restarts"},
    {"secret", POLICY_LIVE, true, NULL},
    {"deletion", POLICY_LIVE, false, NULL},
};

static const struct prov_type fake_types[] = {
    {.name = "t_thing", .attrs = thing_attrs, .nattrs = ARRAY_SIZE(thing_attrs)},
};

static const struct provider fake = {
    .name = "fake",
    .simulated = true,
    .types = fake_types,
    .ntypes = ARRAY_SIZE(fake_types),
};

struct fx {
	struct engine e;
	struct spec spec;
	json_t *state;
	json_t *live;
	json_t *plan;
	struct kiln_error err;
};

static int setup(void **st)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	f->spec.cluster = "demo";
	f->e.spec = &f->spec;
	f->e.prov = &fake;
	f->e.workspace = "default";
	f->e.spec_digest = "sha256:00";
	f->e.desired = json_object();
	f->state = state_new("demo", "default", "fake");
	f->live = json_object();
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	json_decref(f->e.desired);
	json_decref(f->state);
	json_decref(f->live);
	json_decref(f->plan);
	free(f);
	return 0;
}

static void want(struct fx *f, const char *name, const char *attrs, const char *deps)
{
	char *addr = xasprintf("t_thing.%s", name);

	json_object_set_new(f->e.desired, addr,
			    json_pack("{s:s, s:s, s:o, s:o}", "type", "t_thing", "name", name,
				      "attrs", json_loads(attrs, 0, NULL), "deps",
				      json_loads(deps ? deps : "[]", 0, NULL)));
	free(addr);
}

static void record(struct fx *f, const char *name, const char *id, const char *attrs)
{
	char *addr = xasprintf("t_thing.%s", name);

	json_object_set_new(state_resources(f->state), addr,
			    json_pack("{s:s, s:s, s:o, s:[], s:[]}", "type", "t_thing", "id", id,
				      "attrs", json_loads(attrs, 0, NULL), "deps", "sensitive"));
	free(addr);
}

static void live(struct fx *f, const char *name, const char *id, const char *attrs)
{
	char *addr = xasprintf("t_thing.%s", name);
	json_t *arr = json_object_get(f->live, addr);

	if (!arr) {
		arr = json_array();
		json_object_set_new(f->live, addr, arr);
	}
	json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:o}", "type", "t_thing", "id",
					     id, "address", addr, "status", "ready", "attrs",
					     json_loads(attrs, 0, NULL)));
	free(addr);
}

/* Set for one plan_with: destroy --include-retained. */
static const char *const *include_retained;
static size_t ninclude;

static int plan_with(struct fx *f, bool destroy, const char *const *targets, size_t nt,
		     const char *const *replace, size_t nr)
{
	struct diff_input in = {
	    .include_retained = include_retained,
	    .ninclude = ninclude,
	    .engine = &f->e,
	    .state = f->state,
	    .state_commit = "0123456789abcdef0123456789abcdef01234567",
	    .live = f->live,
	    .destroy = destroy,
	    .targets = targets,
	    .ntargets = nt,
	    .replace = replace,
	    .nreplace = nr,
	    .spec_file = "t.yaml",
	};

	json_decref(f->plan);
	f->plan = NULL;
	return diff_plan(&in, &f->plan, &f->err);
}

static void make_plan(struct fx *f)
{
	if (plan_with(f, false, NULL, 0, NULL, 0) != 0)
		fail_msg("diff_plan: %s", f->err.msg);
}

static json_t *change(struct fx *f, const char *addr, bool deposed)
{
	json_t *rc;
	size_t i;

	json_array_foreach(json_object_get(f->plan, "resource_changes"), i, rc)
	{
		if (strcmp(json_string_value(json_object_get(rc, "address")), addr) == 0 &&
		    (json_object_get(rc, "deposed") != NULL) == deposed)
			return rc;
	}
	fail_msg("no change for %s", addr);
	return NULL;
}

static char *actions(struct fx *f, const char *addr)
{
	char *s = json_dumps(
	    json_object_get(json_object_get(change(f, addr, false), "change"), "actions"),
	    JSON_COMPACT);
	return s;
}

static void assert_actions(struct fx *f, const char *addr, const char *want_json)
{
	char *got = actions(f, addr);

	assert_string_equal(got, want_json);
	free(got);
}

static json_int_t summary(struct fx *f, const char *key)
{
	return json_integer_value(
	    json_object_get(json_object_get(json_object_get(f->plan, "kiln"), "summary"), key));
}

static const char *reason_code(struct fx *f, const char *addr)
{
	return json_string_value(json_object_get(change(f, addr, false), "action_reason"));
}

static void test_diff_creates_what_is_desired_and_not_live(void **st)
{
	struct fx *f = *st;

	want(f, "a", "{\"size\": 1, \"zone\": \"z1\"}", NULL);
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"create\"]");
	assert_int_equal(summary(f, "create"), 1);
	assert_true(json_is_true(json_object_get(json_object_get(f->plan, "kiln"), "changes")));
}

static void test_diff_is_a_no_op_when_live_matches(void **st)
{
	struct fx *f = *st;

	want(f, "a", "{\"size\": 1, \"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\", \"arn\": \"x\"}");
	live(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\", \"arn\": \"x\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"no-op\"]");
	assert_false(json_is_true(json_object_get(json_object_get(f->plan, "kiln"), "changes")));
	assert_int_equal(summary(f, "no_op"), 1);
}

static void test_diff_updates_a_live_attribute_in_place_with_its_policy(void **st)
{
	struct fx *f = *st;
	json_t *row;

	want(f, "a", "{\"size\": 4, \"zone\": \"z1\", \"mode\": \"fast\"}", NULL);
	record(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\", \"mode\": \"slow\"}");
	live(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\", \"mode\": \"slow\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"update\"]");
	row = json_array_get(
	    json_object_get(json_object_get(change(f, "t_thing.a", false), "kiln"), "attributes"),
	    0);
	assert_string_equal(json_string_value(json_object_get(row, "name")), "size");
	assert_string_equal(json_string_value(json_object_get(row, "policy")), "live");
	assert_int_equal(json_integer_value(json_object_get(row, "before")), 1);
	assert_int_equal(json_integer_value(json_object_get(row, "after")), 4);
	row = json_array_get(
	    json_object_get(json_object_get(change(f, "t_thing.a", false), "kiln"), "attributes"),
	    1);
	assert_string_equal(json_string_value(json_object_get(row, "name")), "mode");
	assert_string_equal(json_string_value(json_object_get(row, "policy")), "stop");
	assert_string_equal(json_string_value(json_object_get(row, "why")), "the thing restarts");
}

static void test_diff_replaces_when_a_force_new_attribute_changes(void **st)
{
	struct fx *f = *st;
	json_t *ch;
	char *paths;

	want(f, "a", "{\"size\": 1, \"zone\": \"z2\"}", NULL);
	record(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"delete\",\"create\"]");
	assert_string_equal(reason_code(f, "t_thing.a"), "replace_because_cannot_update");
	ch = json_object_get(change(f, "t_thing.a", false), "change");
	paths = json_dumps(json_object_get(ch, "replace_paths"), JSON_COMPACT);
	assert_string_equal(paths, "[[\"zone\"]]");
	free(paths);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(change(f, "t_thing.a", false), "kiln"), "reason")),
			    "zone forces replacement");
}

static void test_diff_replaces_what_depends_on_a_replacement(void **st)
{
	struct fx *f = *st;

	want(f, "a", "{\"zone\": \"z2\"}", NULL);
	want(f, "b", "{\"zone\": \"z1\"}", "[\"t_thing.a\"]");
	want(f, "c", "{\"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	record(f, "b", "t-2", "{\"zone\": \"z1\"}");
	record(f, "c", "t-3", "{\"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "b", "t-2", "{\"zone\": \"z1\"}");
	live(f, "c", "t-3", "{\"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.b", "[\"delete\",\"create\"]");
	assert_string_equal(reason_code(f, "t_thing.b"), "replace_because_dependency");
	assert_actions(f, "t_thing.c", "[\"no-op\"]");
	assert_int_equal(summary(f, "replace"), 2);
}

static void test_diff_replaces_on_request(void **st)
{
	struct fx *f = *st;
	const char *rep[] = {"t_thing.a"};

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	assert_int_equal(plan_with(f, false, NULL, 0, rep, 1), 0);
	assert_actions(f, "t_thing.a", "[\"delete\",\"create\"]");
	assert_string_equal(reason_code(f, "t_thing.a"), "replace_by_request");
}

static void test_diff_deletes_what_left_the_spec(void **st)
{
	struct fx *f = *st;

	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"delete\"]");
	assert_string_equal(reason_code(f, "t_thing.a"), "delete_because_no_resource_config");
}

static void test_diff_adopts_a_tagged_live_resource_missing_from_state(void **st)
{
	struct fx *f = *st;
	json_t *ch;

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	live(f, "a", "t-9", "{\"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"no-op\"]");
	ch = json_object_get(change(f, "t_thing.a", false), "change");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(ch, "importing"), "id")), "t-9");
	assert_int_equal(summary(f, "adopt"), 1);
	assert_true(json_is_true(json_object_get(json_object_get(f->plan, "kiln"), "changes")));
}

static void test_diff_shows_drift_even_when_the_spec_is_unchanged(void **st)
{
	struct fx *f = *st;
	json_t *d;

	want(f, "a", "{\"size\": 1, \"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"size\": 3, \"zone\": \"z1\"}");
	make_plan(f);
	d = json_array_get(json_object_get(f->plan, "resource_drift"), 0);
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "address")), "t_thing.a");
	assert_int_equal(summary(f, "drift"), 1);
	/* And the plan puts it back. */
	assert_actions(f, "t_thing.a", "[\"update\"]");
}

static void test_diff_recreates_what_was_deleted_outside_kiln(void **st)
{
	struct fx *f = *st;
	json_t *d;
	char *acts;

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	make_plan(f);
	d = json_array_get(json_object_get(f->plan, "resource_drift"), 0);
	acts = json_dumps(json_object_get(json_object_get(d, "change"), "actions"), JSON_COMPACT);
	assert_string_equal(acts, "[\"delete\"]");
	free(acts);
	assert_actions(f, "t_thing.a", "[\"create\"]");
}

static void test_diff_deletes_duplicates_of_an_address(void **st)
{
	struct fx *f = *st;
	json_t *dup;

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	record(f, "a", "t-2", "{\"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "a", "t-2", "{\"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"no-op\"]");
	dup = change(f, "t_thing.a", true);
	assert_string_equal(json_string_value(json_object_get(dup, "deposed")), "t-1");
	assert_string_equal(json_string_value(json_object_get(dup, "action_reason")),
			    "delete_because_duplicate");
}

static void test_diff_releases_a_retained_store_instead_of_deleting_it(void **st)
{
	struct fx *f = *st;
	json_t *kn;

	record(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	assert_int_equal(plan_with(f, true, NULL, 0, NULL, 0), 0);
	assert_actions(f, "t_thing.a", "[\"delete\"]");
	kn = json_object_get(change(f, "t_thing.a", false), "kiln");
	assert_true(json_is_true(json_object_get(kn, "retain")));
}

static void test_diff_deletes_a_retained_store_named_by_include_retained_and_no_other(void **st)
{
	struct fx *f = *st;
	static const char *const inc[] = {"t_thing.a"};
	json_t *kn, *rc;
	size_t i;

	record(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	/* Released by an earlier destroy: live and tagged, not recorded. */
	live(f, "b", "t-2", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	include_retained = inc;
	ninclude = 1;
	assert_int_equal(plan_with(f, true, NULL, 0, NULL, 0), 0);
	include_retained = NULL;
	ninclude = 0;
	assert_actions(f, "t_thing.a", "[\"delete\"]");
	kn = json_object_get(change(f, "t_thing.a", false), "kiln");
	assert_null(json_object_get(kn, "retain"));
	json_array_foreach(json_object_get(f->plan, "resource_changes"), i, rc)
	    assert_string_not_equal(json_string_value(json_object_get(rc, "address")), "t_thing.b");
}

static void test_diff_include_retained_of_a_store_not_retained_is_refused(void **st)
{
	struct fx *f = *st;
	static const char *const inc[] = {"t_thing.a"};
	int rc;

	record(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"delete\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"delete\"}");
	include_retained = inc;
	ninclude = 1;
	rc = plan_with(f, true, NULL, 0, NULL, 0);
	include_retained = NULL;
	ninclude = 0;
	assert_int_equal(rc, -1);
	assert_string_equal(f->err.msg, "--include-retained t_thing.a: it is not a retained store");
	assert_string_equal(f->err.hint, "it names a store kept by deletion: retain; what is not "
					 "retained is deleted by destroy without it");
}

static void test_diff_refuses_to_replace_a_retained_store(void **st)
{
	struct fx *f = *st;

	want(f, "a", "{\"zone\": \"z2\", \"deletion\": \"retain\"}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	assert_int_equal(plan_with(f, false, NULL, 0, NULL, 0), -1);
	assert_string_equal(f->err.msg,
			    "t_thing.a would be replaced (zone forces replacement), but "
			    "it is a retained store");
	assert_string_equal(f->err.hint, "replacing it would delete its data; set 'deletion: "
					 "delete' on the store to allow that, or change the spec "
					 "back");
}

static void test_diff_masks_sensitive_values(void **st)
{
	struct fx *f = *st;
	json_t *ch;

	want(f, "a", "{\"zone\": \"z1\", \"secret\": \"new\"}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\", \"secret\": \"old\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\", \"secret\": \"old\"}");
	make_plan(f);
	ch = json_object_get(change(f, "t_thing.a", false), "change");
	assert_true(json_is_null(json_object_get(json_object_get(ch, "before"), "secret")));
	assert_true(json_is_null(json_object_get(json_object_get(ch, "after"), "secret")));
	assert_true(
	    json_is_true(json_object_get(json_object_get(ch, "after_sensitive"), "secret")));
	char *text = json_dumps(f->plan, 0);
	assert_null(strstr(text, "\"old\""));
	assert_null(strstr(text, "\"new\""));
	free(text);
}

static void test_diff_target_limits_changes_to_it_and_what_it_needs(void **st)
{
	struct fx *f = *st;
	const char *tgt[] = {"t_thing.b"};

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	want(f, "b", "{\"zone\": \"z1\"}", "[\"t_thing.a\"]");
	want(f, "c", "{\"zone\": \"z1\"}", NULL);
	assert_int_equal(plan_with(f, false, tgt, 1, NULL, 0), 0);
	assert_actions(f, "t_thing.a", "[\"create\"]");
	assert_actions(f, "t_thing.b", "[\"create\"]");
	assert_actions(f, "t_thing.c", "[\"no-op\"]");
}

static void test_diff_names_an_unknown_target_with_a_suggestion(void **st)
{
	struct fx *f = *st;
	const char *tgt[] = {"t_thing.alpah"};

	want(f, "alpha", "{\"zone\": \"z1\"}", NULL);
	assert_int_equal(plan_with(f, false, tgt, 1, NULL, 0), -1);
	assert_string_equal(
	    f->err.msg, "--target t_thing.alpah: no such resource in the spec, the state or the "
			"cloud");
	assert_string_equal(f->err.hint,
			    "did you mean 't_thing.alpha'? 'kiln graph' lists the addresses");
}

static void test_diff_destroy_deletes_everything_recorded_or_tagged(void **st)
{
	struct fx *f = *st;

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "orphan", "t-7", "{\"zone\": \"z1\"}");
	assert_int_equal(plan_with(f, true, NULL, 0, NULL, 0), 0);
	assert_actions(f, "t_thing.a", "[\"delete\"]");
	assert_actions(f, "t_thing.orphan", "[\"delete\"]");
	assert_int_equal(summary(f, "delete"), 2);
}

static void test_diff_without_refresh_trusts_the_state(void **st)
{
	struct fx *f = *st;
	struct diff_input in = {.engine = &f->e, .state = f->state, .spec_file = "t.yaml"};

	want(f, "a", "{\"size\": 2, \"zone\": \"z1\"}", NULL);
	record(f, "a", "t-1", "{\"size\": 1, \"zone\": \"z1\"}");
	assert_int_equal(diff_plan(&in, &f->plan, &f->err), 0);
	assert_actions(f, "t_thing.a", "[\"update\"]");
	assert_int_equal(json_array_size(json_object_get(f->plan, "resource_drift")), 0);
	assert_false(json_is_true(json_object_get(json_object_get(f->plan, "kiln"), "refresh")));
}

static void test_diff_refuses_replacements_whose_deletes_wait_on_each_other(void **st)
{
	struct fx *f = *st;

	/* The spec has b use a; the state says a used b: deleting them has no order. */
	want(f, "a", "{\"zone\": \"z2\"}", NULL);
	want(f, "b", "{\"zone\": \"z1\"}", "[\"t_thing.a\"]");
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	record(f, "b", "t-2", "{\"zone\": \"z1\"}");
	json_object_set_new(json_object_get(state_resources(f->state), "t_thing.a"), "deps",
			    json_pack("[s]", "t_thing.b"));
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "b", "t-2", "{\"zone\": \"z1\"}");
	assert_int_equal(plan_with(f, false, NULL, 0, NULL, 0), -1);
	assert_null(f->plan);
	assert_string_equal(f->err.msg,
			    "the plan's operations wait for each other in a cycle (each waits for "
			    "the next): t_thing.a (replace: delete old) -> t_thing.b (replace: "
			    "delete old) -> t_thing.a (replace: delete old)");
	assert_string_equal(
	    f->err.hint, "the deps the state records and the deps the spec gives order them both "
			 "ways; `kiln log -p` shows how the state's deps changed: point the "
			 "workspace back at its last good commit, or change the spec so one no "
			 "longer needs the next");
}

static void test_diff_passes_over_a_dep_that_is_not_an_address(void **st)
{
	struct fx *f = *st;

	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	json_object_set_new(json_object_get(state_resources(f->state), "t_thing.a"), "deps",
			    json_pack("[is]", 7, "t_thing.gone"));
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"delete\"]");
}

static void test_diff_target_being_deleted_takes_its_dependants_along(void **st)
{
	struct fx *f = *st;
	const char *tgt[] = {"t_thing.a"};

	want(f, "b", "{\"zone\": \"z1\", \"size\": 2}", NULL);
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	record(f, "b", "t-2", "{\"zone\": \"z1\", \"size\": 1}");
	json_object_set_new(json_object_get(state_resources(f->state), "t_thing.b"), "deps",
			    json_pack("[s]", "t_thing.a"));
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "b", "t-2", "{\"zone\": \"z1\", \"size\": 1}");
	assert_int_equal(plan_with(f, false, tgt, 1, NULL, 0), 0);
	assert_actions(f, "t_thing.a", "[\"delete\"]");
	assert_actions(f, "t_thing.b", "[\"update\"]");
}

static void test_diff_target_takes_the_replacements_it_forces(void **st)
{
	struct fx *f = *st;
	const char *tgt[] = {"t_thing.a"};
	const char *rep[] = {"t_thing.a"};

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	want(f, "b", "{\"zone\": \"z1\"}", "[\"t_thing.a\"]");
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	record(f, "b", "t-2", "{\"zone\": \"z1\"}");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "b", "t-2", "{\"zone\": \"z1\"}");
	assert_int_equal(plan_with(f, false, tgt, 1, rep, 1), 0);
	assert_actions(f, "t_thing.a", "[\"delete\",\"create\"]");
	assert_actions(f, "t_thing.b", "[\"delete\",\"create\"]");
}

static void test_diff_replaces_dependants_of_what_is_created_again(void **st)
{
	struct fx *f = *st;

	want(f, "a", "{\"zone\": \"z1\"}", NULL);
	want(f, "b", "{\"zone\": \"z1\"}", "[\"t_thing.a\"]");
	record(f, "a", "t-1", "{\"zone\": \"z1\"}");
	record(f, "b", "t-2", "{\"zone\": \"z1\"}");
	live(f, "b", "t-2", "{\"zone\": \"z1\"}");
	make_plan(f);
	assert_actions(f, "t_thing.a", "[\"create\"]");
	assert_actions(f, "t_thing.b", "[\"delete\",\"create\"]");
	assert_string_equal(reason_code(f, "t_thing.b"), "replace_because_dependency");
}

static void test_diff_orders_orphan_deletes_by_the_spec_deps(void **st)
{
	struct fx *f = *st;
	json_t *deps;

	want(f, "b", "{\"zone\": \"z1\"}", "[\"t_thing.a\"]");
	live(f, "a", "t-1", "{\"zone\": \"z1\"}");
	live(f, "b", "t-2", "{\"zone\": \"z1\"}");
	assert_int_equal(plan_with(f, true, NULL, 0, NULL, 0), 0);
	deps = json_object_get(json_object_get(change(f, "t_thing.b", false), "kiln"), "deps");
	assert_int_equal(json_array_size(deps), 1);
	assert_string_equal(json_string_value(json_array_get(deps, 0)), "t_thing.a");
}

static void test_diff_keeps_what_a_retained_store_stands_in(void **st)
{
	struct fx *f = *st;
	json_t *kn;

	record(f, "net", "t-1", "{\"zone\": \"z1\"}");
	record(f, "fs", "t-2", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	json_object_set_new(json_object_get(state_resources(f->state), "t_thing.fs"), "deps",
			    json_pack("[s]", "t_thing.net"));
	live(f, "net", "t-1", "{\"zone\": \"z1\"}");
	live(f, "fs", "t-2", "{\"zone\": \"z1\", \"deletion\": \"retain\"}");
	assert_int_equal(plan_with(f, true, NULL, 0, NULL, 0), 0);
	kn = json_object_get(change(f, "t_thing.net", false), "kiln");
	assert_true(json_is_true(json_object_get(kn, "retain")));
	assert_string_equal(
	    json_string_value(json_object_get(kn, "reason")),
	    "release from state; kept, because the retained t_thing.fs still uses it");
	assert_int_equal(summary(f, "delete"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	    T(test_diff_creates_what_is_desired_and_not_live),
	    T(test_diff_is_a_no_op_when_live_matches),
	    T(test_diff_updates_a_live_attribute_in_place_with_its_policy),
	    T(test_diff_replaces_when_a_force_new_attribute_changes),
	    T(test_diff_replaces_what_depends_on_a_replacement),
	    T(test_diff_replaces_on_request),
	    T(test_diff_deletes_what_left_the_spec),
	    T(test_diff_adopts_a_tagged_live_resource_missing_from_state),
	    T(test_diff_shows_drift_even_when_the_spec_is_unchanged),
	    T(test_diff_recreates_what_was_deleted_outside_kiln),
	    T(test_diff_deletes_duplicates_of_an_address),
	    T(test_diff_releases_a_retained_store_instead_of_deleting_it),
	    T(test_diff_deletes_a_retained_store_named_by_include_retained_and_no_other),
	    T(test_diff_include_retained_of_a_store_not_retained_is_refused),
	    T(test_diff_refuses_to_replace_a_retained_store),
	    T(test_diff_masks_sensitive_values),
	    T(test_diff_target_limits_changes_to_it_and_what_it_needs),
	    T(test_diff_names_an_unknown_target_with_a_suggestion),
	    T(test_diff_destroy_deletes_everything_recorded_or_tagged),
	    T(test_diff_without_refresh_trusts_the_state),
	    T(test_diff_target_being_deleted_takes_its_dependants_along),
	    T(test_diff_refuses_replacements_whose_deletes_wait_on_each_other),
	    T(test_diff_passes_over_a_dep_that_is_not_an_address),
	    T(test_diff_target_takes_the_replacements_it_forces),
	    T(test_diff_replaces_dependants_of_what_is_created_again),
	    T(test_diff_orders_orphan_deletes_by_the_spec_deps),
	    T(test_diff_keeps_what_a_retained_store_stands_in),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
