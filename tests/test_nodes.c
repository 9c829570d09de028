/*
 * test_nodes.c - the per-node live view every node group carries
 * (providers/nodes.c): how a node's own health report is read, hostile
 * reports included, and the order nodes are listed in.
 */
#include "testutil.h"

#include "nodes.h"

static void health_is(const char *report, const char *want_health, const char *want_reason)
{
	const char *health;
	char *reason;

	nodes_health(report, &health, &reason);
	if (want_health)
		assert_string_equal(health, want_health);
	else
		assert_null(health);
	if (want_reason)
		assert_string_equal(reason, want_reason);
	else
		assert_null(reason);
	free(reason);
}

static void test_no_report_is_neither_healthy_nor_unhealthy(void **unused)
{
	(void)unused;
	health_is(NULL, NULL, NULL);
}

static void test_a_healthy_report_keeps_what_the_node_counted(void **unused)
{
	(void)unused;
	health_is("healthy: 8/8 GPUs, 32/32 EFA", "healthy", "8/8 GPUs, 32/32 EFA");
	health_is("healthy:", "healthy", NULL);
}

static void test_an_unhealthy_report_gives_its_reason(void **unused)
{
	(void)unused;
	health_is("unhealthy: 7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)", "unhealthy",
		  "7 of 8 GPUs (nvidia-smi lists 7; p5.48xlarge has 8)");
	health_is("unhealthy:  ", "unhealthy", "the node gave no reason");
}

static void test_a_report_that_is_not_healthy_or_unhealthy_is_unreadable(void **unused)
{
	(void)unused;
	health_is("Healthy: 8/8 GPUs", "unhealthy",
		  "unreadable health report: \"Healthy: 8/8 GPUs\"");
	health_is("healthyish: yes", "unhealthy", "unreadable health report: \"healthyish: yes\"");
	health_is("healthy", "unhealthy", "unreadable health report: \"healthy\"");
	health_is("", "unhealthy", "unreadable health report: \"\"");
}

static void test_control_characters_and_quotes_never_reach_the_reason(void **unused)
{
	(void)unused;
	health_is("unhealthy: \x1b[31mred\x1b[0m \"x\"", "unhealthy", "?[31mred?[0m ?x?");
	health_is("ok\n\"rm\"", "unhealthy", "unreadable health report: \"ok??rm?\"");
}

static void test_a_report_too_long_or_not_utf8_is_unreadable_and_cut(void **unused)
{
	char *longer = xcalloc(1, PROV_HEALTH_MAX + 2);

	(void)unused;
	memcpy(longer, "healthy: ", 9);
	memset(longer + 9, 'x', PROV_HEALTH_MAX + 1 - 9);
	health_is(longer, "unhealthy",
		  "unreadable health report: \"healthy: "
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\"");
	free(longer);
	health_is("healthy: \xff\xfe", "unhealthy", "unreadable health report: \"healthy: ??\"");
}

static void test_nodes_are_listed_oldest_first_then_by_id_and_numbered(void **unused)
{
	json_t *nodes = json_array();

	(void)unused;
	json_array_append_new(nodes, nodes_new("i-b", "z", "10.0.0.5", NULL, "running",
					       "2026-01-02T00:00:00Z", NULL));
	json_array_append_new(nodes, nodes_new("i-c", "z", NULL, NULL, "pending", NULL, NULL));
	json_array_append_new(nodes, nodes_new("i-a", "z", "10.0.0.4", "198.51.100.4", "running",
					       "2026-01-02T00:00:00Z", "unhealthy: 7 of 8 GPUs"));
	json_array_append_new(nodes, nodes_new("i-d", "z", "10.0.0.6", NULL, "running",
					       "2026-01-01T00:00:00Z", "healthy: 8/8 GPUs"));
	nodes_order(nodes);
	{
		char *got = json_dumps(nodes, JSON_SORT_KEYS | JSON_COMPACT);

		assert_string_equal(
		    got,
		    "[{\"health\":\"healthy\",\"health_reason\":\"8/8 GPUs\",\"id\":\"i-d\","
		    "\"index\":0,\"launched\":\"2026-01-01T00:00:00Z\",\"private_ip\":\"10.0.0.6\","
		    "\"public_ip\":null,\"state\":\"running\",\"zone\":\"z\"},"
		    "{\"health\":\"unhealthy\",\"health_reason\":\"7 of 8 GPUs\",\"id\":\"i-a\","
		    "\"index\":1,\"launched\":\"2026-01-02T00:00:00Z\",\"private_ip\":\"10.0.0.4\","
		    "\"public_ip\":\"198.51.100.4\",\"state\":\"running\",\"zone\":\"z\"},"
		    "{\"health\":null,\"health_reason\":null,\"id\":\"i-b\",\"index\":2,"
		    "\"launched\":\"2026-01-02T00:00:00Z\",\"private_ip\":\"10.0.0.5\","
		    "\"public_ip\":null,\"state\":\"running\",\"zone\":\"z\"},"
		    "{\"health\":null,\"health_reason\":null,\"id\":\"i-c\",\"index\":3,"
		    "\"launched\":null,\"private_ip\":null,\"public_ip\":null,\"state\":"
		    "\"pending\","
		    "\"zone\":\"z\"}]");
		free(got);
	}
	json_decref(nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_report_is_neither_healthy_nor_unhealthy),
	    cmocka_unit_test(test_a_healthy_report_keeps_what_the_node_counted),
	    cmocka_unit_test(test_an_unhealthy_report_gives_its_reason),
	    cmocka_unit_test(test_a_report_that_is_not_healthy_or_unhealthy_is_unreadable),
	    cmocka_unit_test(test_control_characters_and_quotes_never_reach_the_reason),
	    cmocka_unit_test(test_a_report_too_long_or_not_utf8_is_unreadable_and_cut),
	    cmocka_unit_test(test_nodes_are_listed_oldest_first_then_by_id_and_numbered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
