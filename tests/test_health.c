/*
 * test_health.c - node health as kiln sums it up (src/health.c): each
 * group's counts and its one line, and which groups an apply waits for.
 * The wait itself runs against the sim and moto (tests/e2e/health.sh).
 */
#include "testutil.h"

#include "health.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_group_whose_nodes_all_report_healthy_is_settled_and_good),
	    cmocka_unit_test(test_an_unhealthy_node_is_named_with_its_reason),
	    cmocka_unit_test(test_a_group_without_a_role_cannot_report_and_is_not_waited_for),
	    cmocka_unit_test(test_only_groups_created_or_updated_are_waited_for),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
