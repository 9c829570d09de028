/*
 * test_utilization.c - the diagnosis kiln status shows and reap's idle
 * policy reads (utilization.c), from what a provider's metrics hook
 * answers: busy, idle, imbalanced, storage-bound and no data, each with
 * the figures behind it; the --window check; and which node groups an
 * idle policy covers.
 */
#include "testutil.h"

#include "sim/sim.h"
#include "utilization.h"

/* A metrics document: one group "g.trainers" whose nodes report utils (-1: nothing). */
static json_t *measured(const double *utils, size_t n, double lustre_load)
{
	json_t *nodes = json_array(), *doc;
	size_t i;

	for (i = 0; i < n; i++) {
		char id[32];

		snprintf(id, sizeof(id), "i-%zu", i);
		json_array_append_new(
		    nodes, utils[i] < 0
			       ? json_pack("{s:s, s:n, s:n}", "id", id, "gpu_util", "gpu_util_max")
			       : json_pack("{s:s, s:f, s:f}", "id", id, "gpu_util", utils[i],
					   "gpu_util_max", utils[i]));
	}
	doc = json_pack("{s:{s:{s:o, s:n}}, s:{}}", "groups", "g.trainers", "nodes", nodes, "agent",
			"stores");
	if (lustre_load >= 0)
		json_object_set_new(json_object_get(doc, "stores"), "g.scratch",
				    json_pack("{s:f, s:f, s:f}", "read_mbps", 2.5 * lustre_load,
					      "write_mbps", 0.0, "provisioned_mbps", 250.0));
	return doc;
}

static json_t *diagnose(const double *utils, size_t n, double lustre_load)
{
	json_t *m = measured(utils, n, lustre_load);
	json_t *d = utilization_diagnose(NULL, m, 15 * 60);

	json_decref(m);
	return d;
}

static const char *field(const json_t *d, const char *k)
{
	return json_string_value(
	    json_object_get(json_array_get(json_object_get(d, "groups"), 0), k));
}

static double figure(const json_t *d, const char *k)
{
	return json_number_value(
	    json_object_get(json_array_get(json_object_get(d, "groups"), 0), k));
}

static void test_busy_nodes_are_busy(void **state)
{
	const double u[] = {90, 80};
	json_t *d = diagnose(u, 2, -1);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "busy");
	assert_string_equal(field(d, "why"), "GPU utilization 85.0% (mean) over 2 nodes");
	assert_true(figure(d, "gpu_util_min") == 80 && figure(d, "gpu_util_max") == 90);
	json_decref(d);
}

static void test_every_node_under_the_threshold_is_idle(void **state)
{
	const double u[] = {4, 2, 9.5};
	json_t *d = diagnose(u, 3, -1);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "idle");
	assert_string_equal(field(d, "why"), "every node under 10% GPU utilization for the last "
					     "15m (highest 9.5%, i-2)");
	json_decref(d);
}

static void test_busy_and_idle_nodes_together_are_imbalanced(void **state)
{
	const double u[] = {95, 3};
	json_t *d = diagnose(u, 2, -1);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "imbalanced");
	assert_string_equal(field(d, "why"), "1 of 2 nodes at 50% or more, 1 under 10% (i-0 at "
					     "95.0%, i-1 at 3.0%)");
	assert_string_equal(field(d, "min_node"), "i-1");
	json_decref(d);
}

static void test_low_gpus_beside_a_saturated_lustre_store_are_storage_bound(void **state)
{
	const double u[] = {20, 30};
	json_t *d = diagnose(u, 2, 96);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "storage-bound");
	assert_string_equal(field(d, "why"), "GPU utilization 25.0% (mean) while g.scratch moves "
					     "240.0 of the 250.0 MB/s the spec provisioned (96%)");
	assert_string_equal(field(d, "fix"), "raise storage.scratch.capacity_gb: Lustre "
					     "throughput grows with capacity");
	json_decref(d);
}

static void test_low_gpus_beside_an_idle_store_are_only_idle(void **state)
{
	const double u[] = {2, 3};
	json_t *d = diagnose(u, 2, 10);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "idle");
	json_decref(d);
}

static void test_nodes_without_metrics_are_no_data(void **state)
{
	const double u[] = {-1, -1};
	json_t *d = diagnose(u, 2, -1);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "no data");
	assert_string_equal(field(d, "why"), "no GPU utilization arrived from its 2 nodes in the "
					     "last 15m: is the metrics agent running on them?");
	assert_true(json_is_null(
	    json_object_get(json_array_get(json_object_get(d, "groups"), 0), "gpu_util")));
	json_decref(d);
}

static void test_a_node_without_metrics_makes_the_group_no_data_not_idle(void **state)
{
	const double u[] = {4, -1};
	json_t *d = diagnose(u, 2, -1);

	(void)state;
	assert_string_equal(field(d, "diagnosis"), "no data");
	assert_string_equal(field(d, "why"), "no GPU utilization arrived from 1 of its 2 nodes "
					     "(i-1) in the last 15m: is the metrics agent running "
					     "on them?");
	json_decref(d);
}

static void test_a_window_shorter_than_the_metric_period_is_refused(void **state)
{
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(utilization_window_check(30, &err), -1);
	assert_string_equal(err.msg, "--window 30s is shorter than the metric period (1m): "
				     "utilization is sampled once a minute");
	assert_string_equal(err.hint, "write 1m or more; the default is 15m");
	assert_int_equal(utilization_window_check(60, &err), 0);
}

static void test_only_node_groups_under_an_idle_policy_are_measured(void **state)
{
	struct spec_group groups[] = {
	    {.name = "trainers", .idle = {.set = true, .gpu_below = 5, .for_seconds = 1800}},
	    {.name = "login"},
	};
	struct spec spec = {.groups = groups, .ngroups = 2};
	struct engine e = {.prov = &provider_sim, .spec = &spec};
	json_t *st = json_loads("{\"resources\": {"
				"\"sim_node_group.trainers\": {\"type\": \"sim_node_group\"},"
				"\"sim_node_group.login\": {\"type\": \"sim_node_group\"},"
				"\"sim_bucket.trainers\": {\"type\": \"sim_bucket\"}}}",
				0, NULL);
	json_t *got = utilization_idle_groups(&e, st);

	(void)state;
	assert_int_equal(json_object_size(got), 1);
	assert_non_null(json_object_get(got, "sim_node_group.trainers"));
	json_decref(got);
	/* A spec-wide policy covers every group, and still no store. */
	spec.idle = (struct spec_idle){.set = true, .gpu_below = 10, .for_seconds = 1800};
	got = utilization_idle_groups(&e, st);
	assert_int_equal(json_object_size(got), 2);
	assert_null(json_object_get(got, "sim_bucket.trainers"));
	json_decref(got);
	json_decref(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_busy_nodes_are_busy),
	    cmocka_unit_test(test_every_node_under_the_threshold_is_idle),
	    cmocka_unit_test(test_busy_and_idle_nodes_together_are_imbalanced),
	    cmocka_unit_test(test_low_gpus_beside_a_saturated_lustre_store_are_storage_bound),
	    cmocka_unit_test(test_low_gpus_beside_an_idle_store_are_only_idle),
	    cmocka_unit_test(test_nodes_without_metrics_are_no_data),
	    cmocka_unit_test(test_a_node_without_metrics_makes_the_group_no_data_not_idle),
	    cmocka_unit_test(test_a_window_shorter_than_the_metric_period_is_refused),
	    cmocka_unit_test(test_only_node_groups_under_an_idle_policy_are_measured),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
