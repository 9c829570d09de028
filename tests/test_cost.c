/*
 * test_cost.c - pricing from the shared catalog and the plan's cost object:
 * hand-computed figures for node groups, root volumes, public addresses and
 * Lustre, spot named as spot, what is not priced listed and never $0, the
 * before/after/TTL totals of a plan, and money formatting.
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
#include "cost.h"
#include "pricing.h"
#include "provider.h"
#include "spec.h"

#define assert_money(want, got) assert_true(fabs((double)(want) - (double)(got)) < 0.00005)

static json_t *group(const char *type, int count, const char *market, int disk_gb, const char *disk,
		     bool public)
{
	return json_pack("{s:s, s:i, s:s, s:i, s:s, s:b}", "instance_type", type, "count", count,
			 "market", market, "disk_size_gb", disk_gb, "disk_type", disk, "public",
			 public);
}

static double sum(const json_t *components)
{
	const json_t *c;
	double s = 0;
	size_t i;

	json_array_foreach(components, i, c) s += json_real_value(json_object_get(c, "hourly"));
	return s;
}

static void test_sixteen_p5_nodes_cost_sixteen_times_the_catalog_price_plus_volumes(void **state)
{
	json_t *g = group("p5.48xlarge", 16, "on-demand", 1024, "gp3", false);
	json_t *comps = json_array(), *unpriced = json_array();
	const json_t *c;

	(void)state;
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_int_equal(json_array_size(comps), 2);
	assert_int_equal(json_array_size(unpriced), 0);
	c = json_array_get(comps, 0);
	assert_string_equal(json_string_value(json_object_get(c, "name")),
			    "Instance usage (p5.48xlarge, on-demand)");
	assert_string_equal(json_string_value(json_object_get(c, "unit")), "instance-hour");
	assert_money(16, json_real_value(json_object_get(c, "quantity")));
	assert_money(98.32, json_real_value(json_object_get(c, "unit_price")));
	assert_money(16 * 98.32, json_real_value(json_object_get(c, "hourly")));
	/* 16 volumes of 1024 GB at $0.08 per GB-month, over 730 hours. */
	c = json_array_get(comps, 1);
	assert_string_equal(json_string_value(json_object_get(c, "unit")), "GB-month");
	assert_money(16 * 1024, json_real_value(json_object_get(c, "quantity")));
	assert_money(16 * 1024 * 0.08 / 730.0, json_real_value(json_object_get(c, "hourly")));
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_spot_is_named_and_priced_at_the_spot_column(void **state)
{
	json_t *g = group("g5.xlarge", 3, "spot", 0, "gp3", false);
	json_t *comps = json_array(), *unpriced = json_array();

	(void)state;
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_int_equal(json_array_size(comps), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(comps, 0), "name")),
			    "Instance usage (g5.xlarge, spot, typical price)");
	assert_money(3 * 0.40, sum(comps));
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_nodes_in_a_capacity_block_cost_nothing_by_the_hour(void **state)
{
	json_t *g = group("p5.48xlarge", 2, "on-demand", 0, "gp3", false);
	json_t *comps = json_array(), *unpriced = json_array();
	const json_t *c;

	(void)state;
	json_object_set_new(g, "capacity", json_string("block"));
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_int_equal(json_array_size(comps), 1);
	c = json_array_get(comps, 0);
	assert_string_equal(
	    json_string_value(json_object_get(c, "name")),
	    "Instance usage (p5.48xlarge, in a Capacity Block: its fee is paid up front)");
	assert_money(0, json_real_value(json_object_get(c, "hourly")));
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_spot_with_fallback_lists_the_on_demand_price_too(void **state)
{
	json_t *g = group("p5.48xlarge", 2, "spot", 0, "gp3", false);
	json_t *comps = json_array(), *unpriced = json_array();
	const json_t *u;

	(void)state;
	json_object_set_new(g, "spot_fallback", json_true());
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_money(2 * 41.30, sum(comps));
	assert_int_equal(json_array_size(unpriced), 1);
	u = json_array_get(unpriced, 0);
	assert_string_equal(json_string_value(json_object_get(u, "name")),
			    "On-demand fallback (p5.48xlarge, 2 × $98.32/h = $196.64/h)");
	assert_string_equal(json_string_value(json_object_get(u, "reason")),
			    "what the group costs if EC2 has no spot capacity and it launches on "
			    "demand instead");
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_a_public_group_pays_for_one_ipv4_address_per_node(void **state)
{
	json_t *g = group("m7i.xlarge", 2, "on-demand", 100, "gp2", true);
	json_t *comps = json_array(), *unpriced = json_array();

	(void)state;
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_int_equal(json_array_size(comps), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(comps, 2), "name")),
			    "Public IPv4 addresses");
	assert_money(2 * 0.2016 + 200 * 0.10 / 730.0 + 2 * 0.005, sum(comps));
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_a_type_the_catalog_lacks_is_listed_not_priced_at_zero(void **state)
{
	json_t *g = group("x9.huge", 4, "on-demand", 0, "gp3", false);
	json_t *comps = json_array(), *unpriced = json_array();

	(void)state;
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_int_equal(json_array_size(comps), 0);
	assert_int_equal(json_array_size(unpriced), 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(unpriced, 0), "reason")),
	    "x9.huge is not in the aws catalog (2026-11-01)");
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_io2_volumes_list_their_iops_as_not_priced(void **state)
{
	json_t *g = group("m7i.large", 1, "on-demand", 500, "io2", false);
	json_t *comps = json_array(), *unpriced = json_array();

	(void)state;
	pricing_group(&catalog_aws, g, comps, unpriced);
	assert_int_equal(json_array_size(comps), 2);
	assert_int_equal(json_array_size(unpriced), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(unpriced, 0), "name")),
			    "Provisioned IOPS (io2)");
	json_decref(g);
	json_decref(comps);
	json_decref(unpriced);
}

static void test_lustre_is_priced_by_the_gb_month_at_its_throughput(void **state)
{
	json_t *fs = json_pack("{s:i, s:i}", "capacity_gb", 4800, "throughput_per_tib", 250);
	json_t *odd = json_pack("{s:i, s:i}", "capacity_gb", 1200, "throughput_per_tib", 40);
	json_t *comps = json_array(), *unpriced = json_array();

	(void)state;
	pricing_lustre(&catalog_aws, fs, comps, unpriced);
	assert_money(4800 * 0.21 / 730.0, sum(comps));
	pricing_lustre(&catalog_aws, odd, comps, unpriced);
	assert_int_equal(json_array_size(comps), 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(unpriced, 0), "reason")),
	    "the aws catalog (2026-11-01) has no price for fsx-lustre:persistent2:40");
	json_decref(fs);
	json_decref(odd);
	json_decref(comps);
	json_decref(unpriced);
}

/* ---- the plan's cost object, over a provider whose cost hook is this file's ---- */

static void fake_cost(struct prov_ctx *ctx, const char *type, const json_t *attrs,
		      json_t *components, json_t *unpriced)
{
	(void)ctx;
	if (strcmp(type, "t_group") == 0)
		pricing_group(&catalog_aws, attrs, components, unpriced);
	else if (strcmp(type, "t_bucket") == 0)
		pricing_by_use(unpriced, "Object storage", "GB stored");
}

static const struct catalog *fake_catalog(struct prov_ctx *ctx)
{
	(void)ctx;
	return &catalog_aws;
}

static const struct provider fake = {
    .name = "aws",
    .catalog = fake_catalog,
    .cost = fake_cost,
};

static json_t *change(const char *address, const char *type, json_t *actions, json_t *before,
		      json_t *after, bool retain)
{
	return json_pack("{s:s, s:s, s:s, s:{s:o, s:o, s:o}, s:{s:b}}", "address", address, "type",
			 type, "name", strchr(address, '.') + 1, "change", "actions", actions,
			 "before", before ? before : json_null(), "after",
			 after ? after : json_null(), "kiln", "retain", retain);
}

static json_t *cost_of(json_t *changes, int64_t ttl, bool destroy)
{
	struct spec spec = {.ttl = ttl};
	struct cost_source e = {.spec = &spec, .prov = &fake};
	json_t *plan =
	    json_pack("{s:o, s:{s:b}}", "resource_changes", changes, "kiln", "destroy", destroy);

	struct plan_view v;
	struct kiln_error err = {{0}, {0}};

	spec.provider.region = "us-east-1";
	assert_int_equal(plan_view_build(&v, plan, &err), 0);
	cost_plan(&e, plan, &v);
	plan_view_release(&v);
	return plan;
}

static double cost_num(const json_t *plan, const char *key)
{
	return json_number_value(
	    json_object_get(json_object_get(json_object_get(plan, "kiln"), "cost"), key));
}

static void test_a_plan_totals_before_and_after_with_the_ttl_projection(void **state)
{
	json_t *changes = json_array(), *plan, *cost;

	(void)state;
	/* Growing from 2 to 4 nodes of g5.xlarge without volumes: $2.012 -> $4.024 an hour. */
	json_array_append_new(changes,
			      change("t_group.a", "t_group", json_pack("[s]", "update"),
				     group("g5.xlarge", 2, "on-demand", 0, "gp3", false),
				     group("g5.xlarge", 4, "on-demand", 0, "gp3", false), false));
	json_array_append_new(changes, change("t_bucket.b", "t_bucket", json_pack("[s]", "create"),
					      NULL, json_object(), false));
	json_array_append_new(changes, change("t_net.n", "t_net", json_pack("[s]", "no-op"),
					      json_object(), json_object(), false));
	plan = cost_of(changes, 8 * 3600, false);
	cost = json_object_get(json_object_get(plan, "kiln"), "cost");
	assert_money(2 * 1.006, cost_num(plan, "hourly_before"));
	assert_money(4 * 1.006, cost_num(plan, "hourly_after"));
	assert_money(2 * 1.006, cost_num(plan, "hourly_delta"));
	assert_money(4 * 1.006 * 730, cost_num(plan, "monthly_after"));
	assert_money(8, cost_num(plan, "ttl_hours"));
	assert_money(8 * 4 * 1.006, cost_num(plan, "ttl_projected"));
	assert_int_equal(json_array_size(json_object_get(cost, "unpriced")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(cost, "unpriced"), 0), "address")),
			    "t_bucket.b");
	assert_int_equal(json_integer_value(json_object_get(cost, "free")), 1);
	assert_string_equal(json_string_value(json_object_get(cost, "currency")), "USD");
	json_decref(plan);
}

static void test_without_a_ttl_or_when_destroying_there_is_no_projection(void **state)
{
	json_t *plan;

	(void)state;
	plan = cost_of(json_array(), 0, false);
	assert_true(json_is_null(json_object_get(
	    json_object_get(json_object_get(plan, "kiln"), "cost"), "ttl_projected")));
	json_decref(plan);
	plan = cost_of(json_array(), 3600, true);
	assert_true(json_is_null(
	    json_object_get(json_object_get(json_object_get(plan, "kiln"), "cost"), "ttl_hours")));
	json_decref(plan);
}

static void test_a_change_targeting_leaves_out_costs_what_is_live_before_and_after(void **state)
{
	json_t *changes = json_array(), *plan;

	(void)state;
	/* --target elsewhere: 2 nodes stay 2 although the spec asks for 6. */
	json_array_append_new(changes,
			      change("t_group.a", "t_group", json_pack("[s]", "no-op"),
				     group("g5.xlarge", 2, "on-demand", 0, "gp3", false),
				     group("g5.xlarge", 6, "on-demand", 0, "gp3", false), false));
	/* A create --target leaves out: nothing before, nothing after. */
	json_array_append_new(changes,
			      change("t_group.b", "t_group", json_pack("[s]", "no-op"), NULL,
				     group("g5.xlarge", 1, "on-demand", 0, "gp3", false), false));
	plan = cost_of(changes, 0, false);
	assert_money(2 * 1.006, cost_num(plan, "hourly_before"));
	assert_money(2 * 1.006, cost_num(plan, "hourly_after"));
	assert_money(0, cost_num(plan, "hourly_delta"));
	json_decref(plan);
}

static void test_a_released_retained_store_is_listed_as_still_costing(void **state)
{
	json_t *changes = json_array(), *plan, *retained;

	(void)state;
	json_array_append_new(changes, change("t_group.keep", "t_group", json_pack("[s]", "delete"),
					      group("m7i.large", 1, "on-demand", 0, "gp3", false),
					      NULL, true));
	plan = cost_of(changes, 0, true);
	retained =
	    json_object_get(json_object_get(json_object_get(plan, "kiln"), "cost"), "retained");
	assert_int_equal(json_array_size(retained), 1);
	assert_money(0.1008,
		     json_real_value(json_object_get(json_array_get(retained, 0), "hourly")));
	assert_money(0, cost_num(plan, "hourly_after"));
	json_decref(plan);
}

static void test_money_has_cents_and_thousands_separators(void **state)
{
	char *m;
	json_t *cost = json_pack("{s:f, s:f, s:f}", "hourly_before", 0.0, "hourly_after", 440.32,
				 "hourly_delta", 440.32);

	(void)state;
	m = cost_money(1150863.1449);
	assert_string_equal(m, "$1,150,863.14");
	free(m);
	m = cost_money(0.004);
	assert_string_equal(m, "$0.00");
	free(m);
	m = cost_money(999.995);
	assert_string_equal(m, "$1,000.00");
	free(m);
	m = cost_delta_text(cost);
	assert_string_equal(m, "+$440.32/h ($0.00 \xe2\x86\x92 $440.32)");
	free(m);
	json_decref(cost);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(
		test_sixteen_p5_nodes_cost_sixteen_times_the_catalog_price_plus_volumes),
	    cmocka_unit_test(test_spot_is_named_and_priced_at_the_spot_column),
	    cmocka_unit_test(test_nodes_in_a_capacity_block_cost_nothing_by_the_hour),
	    cmocka_unit_test(test_spot_with_fallback_lists_the_on_demand_price_too),
	    cmocka_unit_test(test_a_public_group_pays_for_one_ipv4_address_per_node),
	    cmocka_unit_test(test_a_type_the_catalog_lacks_is_listed_not_priced_at_zero),
	    cmocka_unit_test(test_io2_volumes_list_their_iops_as_not_priced),
	    cmocka_unit_test(test_lustre_is_priced_by_the_gb_month_at_its_throughput),
	    cmocka_unit_test(test_a_plan_totals_before_and_after_with_the_ttl_projection),
	    cmocka_unit_test(test_without_a_ttl_or_when_destroying_there_is_no_projection),
	    cmocka_unit_test(
		test_a_change_targeting_leaves_out_costs_what_is_live_before_and_after),
	    cmocka_unit_test(test_a_released_retained_store_is_listed_as_still_costing),
	    cmocka_unit_test(test_money_has_cents_and_thousands_separators),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
