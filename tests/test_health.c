/*
 * test_health.c - node health as kiln sums it up (src/health.c): each
 * group's counts and its one line, which groups an apply waits for, and
 * which nodes kiln repair replaces (src/repair.c).
 * The wait itself runs against the sim and moto (tests/e2e/health.sh).
 */
#include "testutil.h"

#include "health.h"
#include "repair.h"
#include "sim/sim.h"

static json_t *node(const char *id, const char *health, const char *reason)
{
	return json_pack("{s:s, s:s?, s:s?}", "id", id, "health", health, "health_reason", reason);
}

static json_t *attrs_of(const char *role, json_t *nodes)
{
	return json_pack("{s:s?, s:o}", "role", role, "nodes", nodes);
}

static void line_is(const json_t *g, const char *waited, const char *want)
{
	char *got = health_line(g, waited);

	assert_string_equal(got, want);
	free(got);
}

static void test_a_group_whose_nodes_all_report_healthy_is_settled_and_good(void **unused)
{
	json_t *a = attrs_of("trainer", json_pack("[o, o]", node("i-1", "healthy", "8/8 GPUs"),
						  node("i-2", "healthy", NULL)));
	json_t *g = health_group("aws_instance_group.trainers", "ig/x", a);

	(void)unused;
	assert_true(health_group_settled(g));
	assert_false(health_group_bad(g));
	line_is(g, "20m", "trainers: 2 of 2 nodes healthy");
	json_decref(g);
	json_decref(a);
}

static void test_an_unhealthy_node_is_named_with_its_reason(void **unused)
{
	json_t *a = attrs_of(
	    "trainer", json_pack("[o, o, o]", node("i-1", "healthy", NULL),
				 node("i-0abc", "unhealthy", "7 of 8 GPUs (nvidia-smi lists 7)"),
				 node("i-3", NULL, NULL)));
	json_t *g = health_group("sim_node_group.trainers", "ng-1", a);

	(void)unused;
	assert_false(health_group_settled(g));
	assert_true(health_group_bad(g));
	line_is(g, "20m",
		"trainers: 1 of 3 nodes healthy, 1 unhealthy: i-0abc (7 of 8 GPUs (nvidia-smi "
		"lists 7)), 1 not reported after 20m: i-3");
	line_is(g, NULL,
		"trainers: 1 of 3 nodes healthy, 1 unhealthy: i-0abc (7 of 8 GPUs (nvidia-smi "
		"lists 7)), 1 not reported yet: i-3");
	json_decref(g);
	json_decref(a);
}

static void test_reported_counts_every_node_that_said_healthy_or_not_over_all_groups(void **unused)
{
	json_t *a = attrs_of("trainer", json_pack("[o, o, o]", node("i-1", "healthy", NULL),
						  node("i-2", "unhealthy", "no GPU"),
						  node("i-3", NULL, NULL)));
	json_t *b = attrs_of("login", json_pack("[o]", node("i-4", NULL, NULL)));
	json_t *groups = json_pack("[o, o]", health_group("sim_node_group.trainers", "ng-1", a),
				   health_group("sim_node_group.login", "ng-2", b));
	size_t nodes = 0;

	(void)unused;
	assert_int_equal(health_reported(groups, &nodes), 2);
	assert_int_equal(nodes, 4);
	json_decref(groups);
	json_decref(a);
	json_decref(b);
}

static void test_a_group_without_a_role_cannot_report_and_is_not_waited_for(void **unused)
{
	json_t *a = attrs_of(NULL, json_pack("[o]", node("i-1", NULL, NULL)));
	json_t *g = health_group("aws_instance_group.login", "ig/x", a);

	(void)unused;
	assert_true(health_group_settled(g));
	assert_false(health_group_bad(g));
	line_is(g, "20m",
		"login: 1 node cannot report its health: the group has no role, so its nodes "
		"have no credentials to tag themselves with their health");
	json_decref(g);
	json_decref(a);
}

static void test_only_groups_created_or_updated_are_waited_for(void **unused)
{
	struct engine e = {.prov = &provider_sim};
	json_t *plan =
	    json_loads("{\"resource_changes\": ["
		       "{\"address\": \"sim_node_group.a\", \"type\": \"sim_node_group\", "
		       "\"change\": {\"actions\": [\"create\"]}},"
		       "{\"address\": \"sim_node_group.b\", \"type\": \"sim_node_group\", "
		       "\"change\": {\"actions\": [\"no-op\"]}},"
		       "{\"address\": \"sim_node_group.c\", \"type\": \"sim_node_group\", "
		       "\"change\": {\"actions\": [\"delete\", \"create\"]}},"
		       "{\"address\": \"sim_node_group.d\", \"type\": \"sim_node_group\", "
		       "\"change\": {\"actions\": [\"delete\"]}},"
		       "{\"address\": \"sim_bucket.e\", \"type\": \"sim_bucket\", "
		       "\"change\": {\"actions\": [\"create\"]}}]}",
		       0, NULL);
	json_t *got = health_touched(&e, plan);
	char *text = json_dumps(got, JSON_COMPACT);

	(void)unused;
	assert_string_equal(text, "[\"sim_node_group.a\",\"sim_node_group.c\"]");
	free(text);
	json_decref(got);
	json_decref(plan);
}

static json_t *state_with(json_t *trainers_nodes, json_t *login_nodes)
{
	return json_pack("{s:{s:{s:s, s:s, s:{s:s, s:o}}, s:{s:s, s:s, s:{s:n, s:o}}, "
			 "s:{s:s, s:s, s:{}}}}",
			 "resources", "sim_node_group.trainers", "type", "sim_node_group", "id",
			 "ng-1", "attrs", "role", "trainer", "nodes", trainers_nodes,
			 "sim_node_group.login", "type", "sim_node_group", "id", "ng-2", "attrs",
			 "role", "nodes", login_nodes, "sim_bucket.data", "type", "sim_bucket",
			 "id", "bkt-1", "attrs");
}

static void test_repair_picks_only_the_unhealthy_nodes_of_the_groups_named(void **unused)
{
	struct engine e = {.prov = &provider_sim};
	struct kiln_error err = {{0}, {0}};
	json_t *state = state_with(
	    json_pack("[o, o, o]", node("i-1", "healthy", NULL),
		      node("i-2", "unhealthy", "7 of 8 GPUs"), node("i-3", NULL, NULL)),
	    json_pack("[o]", node("i-4", "unhealthy", "unreadable health report: \"x\"")));
	static const char *const trainers[] = {"trainers"};
	json_t *got;
	char *text;

	(void)unused;
	got = repair_targets(&e, state, NULL, NULL, 0, &err);
	text = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
	/* Every group, in address order; a group that cannot report is still repaired. */
	assert_string_equal(
	    text, "[{\"address\":\"sim_node_group.login\",\"group\":\"login\",\"id\":\"ng-2\","
		  "\"instance_ids\":null,\"nodes\":1,\"replace\":[{\"id\":\"i-4\",\"reason\":"
		  "\"unreadable health report: \\\"x\\\"\"}]},"
		  "{\"address\":\"sim_node_group.trainers\",\"group\":\"trainers\",\"id\":"
		  "\"ng-1\",\"instance_ids\":null,\"nodes\":3,\"replace\":[{\"id\":\"i-2\","
		  "\"reason\":\"7 of 8 GPUs\"}]}]");
	free(text);
	json_decref(got);
	got = repair_targets(&e, state, NULL, trainers, 1, &err);
	assert_int_equal(json_array_size(got), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(got, 0), "group")),
			    "trainers");
	json_decref(got);
	json_decref(state);
}

static void test_repair_of_a_name_that_is_no_group_lists_the_groups(void **unused)
{
	struct engine e = {.prov = &provider_sim};
	struct kiln_error err = {{0}, {0}};
	json_t *state = state_with(json_array(), json_array());
	static const char *const names[] = {"trainers", "data"};

	(void)unused;
	assert_null(repair_targets(&e, state, NULL, names, 2, &err));
	assert_string_equal(err.msg, "'data' is not a node group of this workspace; its node "
				     "groups: login, trainers");
	assert_string_equal(err.hint, "name one of them, or none to repair every group");
	json_decref(state);
}

static void test_repair_reads_the_refreshed_nodes_over_the_recorded_ones(void **unused)
{
	struct engine e = {.prov = &provider_sim};
	struct kiln_error err = {{0}, {0}};
	json_t *state = state_with(json_pack("[o]", node("i-1", "healthy", NULL)), json_array());
	json_t *live =
	    json_pack("{s:[{s:s, s:{s:s, s:[o]}}]}", "sim_node_group.trainers", "id", "ng-1",
		      "attrs", "role", "trainer", "nodes", node("i-1", "unhealthy", "0 of 32 EFA"));
	json_t *got = repair_targets(&e, state, live, NULL, 0, &err);

	(void)unused;
	assert_int_equal(json_array_size(got), 1);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(json_array_get(got, 0), "replace"), 0), "reason")),
	    "0 of 32 EFA");
	json_decref(got);
	json_decref(live);
	json_decref(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_group_whose_nodes_all_report_healthy_is_settled_and_good),
	    cmocka_unit_test(test_an_unhealthy_node_is_named_with_its_reason),
	    cmocka_unit_test(
		test_reported_counts_every_node_that_said_healthy_or_not_over_all_groups),
	    cmocka_unit_test(test_a_group_without_a_role_cannot_report_and_is_not_waited_for),
	    cmocka_unit_test(test_only_groups_created_or_updated_are_waited_for),
	    cmocka_unit_test(test_repair_picks_only_the_unhealthy_nodes_of_the_groups_named),
	    cmocka_unit_test(test_repair_of_a_name_that_is_no_group_lists_the_groups),
	    cmocka_unit_test(test_repair_reads_the_refreshed_nodes_over_the_recorded_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
