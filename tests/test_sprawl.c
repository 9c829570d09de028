/*
 * test_sprawl.c - orphan classification (managed by id in any workspace;
 * the reason a workspace does not hold one), hourly cost through the cost
 * hook, which types are stores, the destroy plan's deps and addresses, and
 * what the adopt plan imports and what it leaves out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_aws.h"
#include "sprawl.h"
#include "state.h"

static json_t *live(const char *type, const char *id, const char *c, const char *w,
		    const char *addr, const char *status)
{
	json_t *tags = json_object();

	if (c)
		json_object_set_new(tags, PROV_TAG_CLUSTER, json_string(c));
	if (w)
		json_object_set_new(tags, PROV_TAG_WORKSPACE, json_string(w));
	if (addr)
		json_object_set_new(tags, PROV_TAG_ADDRESS, json_string(addr));
	return json_pack("{s:s, s:s, s:s?, s:s, s:{s:s, s:i}, s:o}", "type", type, "id", id,
			 "address", addr, "status", status, "attrs", "instance_type", "p5.48xlarge",
			 "count", 2, "tags", tags);
}

static json_t *state_with(const char *cluster, const char *ws, const char *addr, const char *id)
{
	json_t *doc = state_new(cluster, ws, "sim");

	if (addr)
		json_object_set_new(
		    state_resources(doc), addr,
		    json_pack("{s:s, s:s, s:{}}", "type", "sim_network", "id", id, "attrs"));
	return doc;
}

static const char *field(json_t *arr, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(arr, i), key));
}

static void test_sprawl_orphans_are_what_no_workspace_records_by_id(void **unused)
{
	json_t *lives = json_array(), *rec = json_object(), *out;

	(void)unused;
	/* Recorded in default: managed. Recorded in another workspace: still managed. */
	json_array_append_new(
	    lives, live("sim_network", "vpc-1", "demo", "default", "sim_network.main", "ready"));
	json_array_append_new(
	    lives, live("sim_network", "vpc-2", "demo", "gone", "sim_network.main", "ready"));
	/* Duplicate: default records the address as vpc-1. */
	json_array_append_new(
	    lives, live("sim_network", "vpc-3", "demo", "default", "sim_network.main", "ready"));
	/* Not recorded at all. */
	json_array_append_new(lives, live("sim_node_group", "ng-1", "demo", "default",
					  "sim_node_group.gpu", "ready"));
	/* Another cluster's resource in a workspace of the same name. */
	json_array_append_new(
	    lives, live("sim_bucket", "bkt-1", "other", "default", "sim_bucket.data", "ready"));
	/* Going already, and untagged: never orphans. */
	json_array_append_new(lives, live("sim_node_group", "ng-2", "demo", "gone",
					  "sim_node_group.old", "deleting"));
	json_array_append_new(lives, live("sim_node_group", "ng-3", NULL, NULL, NULL, "ready"));
	/* A recorded id in a workspace of its own: vpc-9 is managed wherever it is. */
	json_array_append_new(
	    lives, live("sim_network", "vpc-9", "demo", "moved", "sim_network.main", "ready"));
	json_object_set_new(rec, "default",
			    state_with("demo", "default", "sim_network.main", "vpc-1"));
	json_object_set_new(rec, "other-ws",
			    state_with("demo", "other-ws", "sim_network.x", "vpc-9"));

	out = sprawl_orphans(lives, rec, NULL, NULL);
	assert_int_equal(json_array_size(out), 4);
	/* Sorted by cluster, workspace, address. */
	assert_string_equal(field(out, 1, "id"), "ng-1");
	assert_string_equal(field(out, 1, "reason"), "workspace 'default' does not record it");
	assert_string_equal(field(out, 0, "id"), "vpc-3");
	assert_string_equal(field(out, 0, "reason"),
			    "workspace 'default' records sim_network.main as vpc-1: this one is a "
			    "duplicate");
	assert_string_equal(field(out, 2, "id"), "vpc-2");
	assert_string_equal(field(out, 2, "workspace"), "gone");
	assert_string_equal(field(out, 2, "reason"),
			    "workspace 'gone' does not exist in the state repository");
	assert_string_equal(field(out, 3, "id"), "bkt-1");
	assert_string_equal(field(out, 3, "cluster"), "other");
	assert_string_equal(field(out, 3, "reason"),
			    "workspace 'default' holds cluster 'demo', not 'other'");
	assert_string_equal(field(out, 3, "address"), "sim_bucket.data");
	json_decref(out);

	/* Nothing recorded anywhere: every tagged, not-deleting resource is an orphan. */
	json_object_clear(rec);
	out = sprawl_orphans(lives, rec, NULL, NULL);
	assert_int_equal(json_array_size(out), 6);
	json_decref(out);
	json_decref(lives);
	json_decref(rec);
}

/*
 * A resource tagged with a lineage no state here holds is another state
 * repository's: never an orphan, so sprawl's --destroy and --adopt never
 * reach it; one of a known lineage (a deleted workspace's) still is.
 */
static void test_sprawl_orphans_leave_out_other_state_repositories(void **unused)
{
	json_t *lives = json_array(), *rec = json_object(), *known = json_object(), *out, *l;
	size_t foreign = 99;

	(void)unused;
	l = live("sim_network", "vpc-1", "demo", "default", "sim_network.main", "ready");
	json_object_set_new(json_object_get(l, "tags"), "kiln:lineage", json_string("theirs"));
	json_array_append_new(lives, l);
	l = live("sim_network", "vpc-2", "demo", "gone", "sim_network.main", "ready");
	json_object_set_new(json_object_get(l, "tags"), "kiln:lineage", json_string("archived"));
	json_array_append_new(lives, l);
	json_array_append_new(
	    lives, live("sim_network", "vpc-3", "demo", "old", "sim_network.main", "ready"));
	json_object_set_new(known, "archived", json_true());

	out = sprawl_orphans(lives, rec, known, &foreign);
	assert_int_equal(foreign, 1);
	assert_int_equal(json_array_size(out), 2);
	assert_string_equal(field(out, 0, "id"), "vpc-2");
	assert_string_equal(field(out, 0, "lineage"), "archived");
	assert_string_equal(field(out, 1, "id"), "vpc-3");
	assert_true(json_is_null(json_object_get(json_array_get(out, 1), "lineage")));
	json_decref(out);
	json_decref(known);
	json_decref(lives);
	json_decref(rec);
}

static void test_sprawl_hourly_uses_the_cost_hook_and_the_catalog(void **unused)
{
	const struct provider *sim = provider_find("sim");
	const struct catalog_type *t = catalog_find(&catalog_aws, "p5.48xlarge");
	json_t *attrs = json_pack("{s:s, s:i, s:s}", "instance_type", "p5.48xlarge", "count", 2,
				  "market", "on-demand");
	json_t *unpriced = json_array();

	(void)unused;
	assert_non_null(t);
	assert_true(fabs(sprawl_hourly(sim, NULL, "sim_node_group", attrs, unpriced) -
			 2 * t->on_demand_usd) < 1e-9);
	assert_int_equal(json_array_size(unpriced), 0);
	/* A bucket is priced by use: nothing per hour, and it says so. */
	assert_true(sprawl_hourly(sim, NULL, "sim_bucket", attrs, unpriced) == 0.0);
	assert_int_equal(json_array_size(unpriced), 1);
	/* An instance type the catalog lacks is unpriced, not free. */
	json_object_set_new(attrs, "instance_type", json_string("x9.nothing"));
	assert_true(sprawl_hourly(sim, NULL, "sim_node_group", attrs, unpriced) == 0.0);
	assert_int_equal(json_array_size(unpriced), 2);
	json_decref(attrs);
	json_decref(unpriced);
}

static void test_sprawl_stores_are_buckets_and_file_systems(void **unused)
{
	const struct provider *sim = provider_find("sim"), *aws = provider_find("aws");

	(void)unused;
	assert_true(sprawl_is_store(sim, "sim_bucket"));
	assert_true(sprawl_is_store(sim, "sim_lustre"));
	assert_true(sprawl_is_store(sim, "sim_nfs"));
	assert_false(sprawl_is_store(sim, "sim_node_group"));
	assert_true(sprawl_is_store(aws, "aws_s3_bucket"));
	assert_true(sprawl_is_store(aws, "aws_efs"));
	assert_false(sprawl_is_store(aws, "aws_vpc"));
	assert_false(sprawl_is_store(aws, NULL));
}

static void test_sprawl_destroy_plan_deletes_users_before_what_they_use(void **unused)
{
	const struct provider *sim = provider_find("sim");
	json_t *orphans = json_array(), *plan, *ch, *deps;

	(void)unused;
	json_array_append_new(orphans,
			      json_pack("{s:s, s:s, s:s, s:{}}", "address", "sim_network.main",
					"type", "sim_network", "id", "vpc-1", "attrs"));
	json_array_append_new(orphans,
			      json_pack("{s:s, s:s, s:s, s:{}}", "address", "sim_node_group.gpu",
					"type", "sim_node_group", "id", "ng-1", "attrs"));
	json_array_append_new(orphans,
			      json_pack("{s:s, s:s, s:s, s:{}}", "address", "sim_node_group.gpu",
					"type", "sim_node_group", "id", "ng-2", "attrs"));
	json_array_append_new(orphans, json_pack("{s:n, s:s, s:s, s:{}}", "address", "type",
						 "sim_bucket", "id", "bkt-1", "attrs"));
	plan = sprawl_destroy_plan(sim, orphans, NULL);
	ch = json_object_get(plan, "resource_changes");
	assert_int_equal(json_array_size(ch), 4);
	assert_string_equal(field(ch, 0, "address"), "sim_network.main");
	assert_string_equal(field(ch, 1, "address"), "sim_node_group.gpu (ng-1)");
	assert_string_equal(field(ch, 2, "address"), "sim_node_group.gpu (ng-2)");
	assert_string_equal(field(ch, 3, "address"), "sim_bucket.bkt-1");
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(json_object_get(json_array_get(ch, 1), "change"), "actions"), 0)),
	    "delete");
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_array_get(ch, 2), "kiln"), "id")),
			    "ng-2");
	/* The network is used by everything after it in the table; it uses nothing. */
	deps = json_object_get(json_object_get(json_array_get(ch, 0), "kiln"), "deps");
	assert_int_equal(json_array_size(deps), 0);
	deps = json_object_get(json_object_get(json_array_get(ch, 3), "kiln"), "deps");
	assert_int_equal(json_array_size(deps), 3);
	deps = json_object_get(json_object_get(json_array_get(ch, 1), "kiln"), "deps");
	assert_int_equal(json_array_size(deps), 1);
	assert_string_equal(json_string_value(json_array_get(deps, 0)), "sim_network.main");
	json_decref(plan);
	json_decref(orphans);
}

static void test_sprawl_adopt_plan_imports_what_the_workspace_can_take(void **unused)
{
	json_t *orphans = json_array(), *skipped = json_array(), *plan, *ch, *c;
	json_t *state = state_with("demo", "default", "sim_network.main", "vpc-1");

	(void)unused;
	/* Recorded address: a duplicate, not adopted. */
	json_array_append_new(orphans, json_pack("{s:s, s:s, s:s}", "address", "sim_network.main",
						 "type", "sim_network", "id", "vpc-2"));
	/* Two live resources with one address: neither is guessed. */
	json_array_append_new(orphans, json_pack("{s:s, s:s, s:s}", "address", "sim_node_group.gpu",
						 "type", "sim_node_group", "id", "ng-1"));
	json_array_append_new(orphans, json_pack("{s:s, s:s, s:s}", "address", "sim_node_group.gpu",
						 "type", "sim_node_group", "id", "ng-2"));
	/* No address tag. */
	json_array_append_new(
	    orphans, json_pack("{s:n, s:s, s:s}", "address", "type", "sim_bucket", "id", "bkt-1"));
	/* Adopted. */
	json_array_append_new(orphans, json_pack("{s:s, s:s, s:s}", "address", "sim_role.trainer",
						 "type", "sim_role", "id", "role-1"));
	plan = sprawl_adopt_plan(orphans, state, skipped);
	ch = json_object_get(plan, "resource_changes");
	assert_int_equal(json_array_size(ch), 1);
	c = json_array_get(ch, 0);
	assert_string_equal(json_string_value(json_object_get(c, "address")), "sim_role.trainer");
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(json_object_get(c, "change"), "actions"), 0)),
			    "no-op");
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(json_object_get(c, "change"), "importing"), "id")),
			    "role-1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(c, "kiln"), "id")),
			    "role-1");
	assert_int_equal(json_array_size(skipped), 4);
	assert_string_equal(field(skipped, 0, "reason"),
			    "the workspace records sim_network.main as vpc-1");
	assert_string_equal(field(skipped, 1, "reason"),
			    "2 live resources carry sim_node_group.gpu");
	assert_string_equal(field(skipped, 2, "id"), "ng-2");
	assert_string_equal(field(skipped, 3, "reason"), "it carries no kiln:address tag");
	json_decref(plan);
	json_decref(orphans);
	json_decref(skipped);
	json_decref(state);
}

/* The record of another object at an orphan's address is never what its delete names. */
static void test_sprawl_destroy_plan_names_an_address_the_workspace_records_by_id(void **unused)
{
	const struct provider *sim = provider_find("sim");
	json_t *state = state_with("demo", "default", "sim_network.main", "vpc-1");
	json_t *orphans = json_array(), *plan, *ch;

	(void)unused;
	json_array_append_new(orphans,
			      json_pack("{s:s, s:s, s:s, s:{}}", "address", "sim_network.main",
					"type", "sim_network", "id", "vpc-2", "attrs"));
	plan = sprawl_destroy_plan(sim, orphans, state_resources(state));
	ch = json_object_get(plan, "resource_changes");
	assert_int_equal(json_array_size(ch), 1);
	assert_string_equal(field(ch, 0, "address"), "sim_network.main (vpc-2)");
	json_decref(plan);
	json_decref(orphans);
	json_decref(state);
}

/* An orphan the state records since it was listed (a replayed journal) is no orphan now. */
static void test_sprawl_adopt_plan_leaves_out_what_the_state_records_by_its_id(void **unused)
{
	json_t *orphans = json_array(), *skipped = json_array(), *plan;
	json_t *state = state_with("demo", "default", "sim_network.main", "vpc-1");

	(void)unused;
	json_array_append_new(orphans, json_pack("{s:s, s:s, s:s}", "address", "sim_network.main",
						 "type", "sim_network", "id", "vpc-1"));
	plan = sprawl_adopt_plan(orphans, state, skipped);
	assert_int_equal(json_array_size(json_object_get(plan, "resource_changes")), 0);
	assert_int_equal(json_array_size(skipped), 0);
	json_decref(plan);
	json_decref(orphans);
	json_decref(skipped);
	json_decref(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test(f)
	    T(test_sprawl_orphans_are_what_no_workspace_records_by_id),
	    T(test_sprawl_orphans_leave_out_other_state_repositories),
	    T(test_sprawl_hourly_uses_the_cost_hook_and_the_catalog),
	    T(test_sprawl_stores_are_buckets_and_file_systems),
	    T(test_sprawl_destroy_plan_deletes_users_before_what_they_use),
	    T(test_sprawl_adopt_plan_imports_what_the_workspace_can_take),
	    T(test_sprawl_destroy_plan_names_an_address_the_workspace_records_by_id),
	    T(test_sprawl_adopt_plan_leaves_out_what_the_state_records_by_its_id),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
