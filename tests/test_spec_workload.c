/*
 * test_spec_workload.c - a spec's workload: block: what it loads, every bad
 * value with its exact message and position (the words of kiln size), the
 * counts and types validation derives from it, the plan's kiln.workload
 * (a group's run, the Lustre checkpoint check, kiln.cost.run) and the audit
 * rules KILN-WORK-001 to 003 over it.
 *
 * Figures are checked against kiln size's own (tests/e2e/size.sh): 70B on
 * 2T tokens is 6 × 70e9 × 2e12 = 8.4e23 FLOPs; an H100 at MFU 0.40 of
 * 989.4 TFLOPS does 395.76e12 a second, so the run is 589,583 GPU-hours;
 * on 16 × 8 = 128 GPUs that is 4606 hours, 191.9 days; within 30 days
 * (720 hours) it needs 589583 / 720 / 8 = 102.4, so 103 nodes. A
 * checkpoint is 14 bytes × 70e9 = 980 GB (912.7 GiB); 2400 GiB at 125
 * MB/s/TiB writes 2400 / 1024 × 125 = 293.0 MB/s, 3345 s for it, and 5
 * minutes need 980e9 / 300 = 3266.7 MB/s.
 */
#include "testutil.h"

#include "audit.h"
#include "catalog_aws.h"
#include "plan.h"
#include "provider.h"
#include "validate.h"
#include "workload_spec.h"

#define HEAD                                                                                       \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: sim}\n"                                                                  \
	"network: {fabric: efa}\n"

/* Line 5 on: the workload under test. */
#define WORK_70B                                                                                   \
	"workload:\n"                                                                              \
	"  params: 70B\n"                                                                          \
	"  tokens: 2T\n"                                                                           \
	"  deadline: 30d\n"

static void load_bad(struct fx *f, const char *yaml)
{
	assert_failed_with_errors(&f->d, fx_load(f, yaml));
}

/* Load as kiln validate does, derivations included; must succeed. */
static void load_valid(struct fx *f, const char *yaml)
{
	if (validate_load_buffer(&f->spec, TEST_FILE, yaml, strlen(yaml), NULL, &f->d) != 0) {
		diags_dump(&f->d);
		fail_msg("the spec does not validate");
	}
}

static void test_every_field_loads(void **state)
{
	struct fx *f = *state;
	const struct workload *w;

	assert_int_equal(fx_load(f, HEAD "workload:\n"
					 "  kind: finetune\n"
					 "  params: 47B\n"
					 "  active_params: 13B\n"
					 "  tokens: 300B\n"
					 "  precision: fp8\n"
					 "  method: lora\n"
					 "  seq_len: 8192\n"
					 "  deadline: 7d\n"
					 "  mfu: 0.35\n"
					 "  checkpoint: {every: 2h, write_within: 5m}\n"
					 "  dataset: {size: 20TiB}\n"
					 "compute: {t: {instance_type: p5.48xlarge, count: 2}}\n"),
			 0);
	assert_no_diags(&f->d);
	assert_true(f->spec->workload.set);
	w = &f->spec->workload.w;
	assert_int_equal(w->kind, WORKLOAD_FINETUNE);
	assert_true(w->params == 47e9 && w->active_params == 13e9 && w->tokens == 300e9);
	assert_int_equal(w->precision, WORKLOAD_FP8);
	assert_int_equal(w->method, WORKLOAD_LORA);
	assert_int_equal(w->seq_len, 8192);
	assert_int_equal(w->deadline_s, 7 * 86400);
	assert_true(w->mfu == 0.35);
	assert_int_equal(f->spec->workload.checkpoint_every, 7200);
	assert_int_equal(w->write_within_s, 300);
	assert_true(w->dataset_bytes == 20.0 * 1099511627776.0);
	assert_true(f->spec->groups[0].count_set);
}

static void test_defaults_are_kiln_sizes(void **state)
{
	struct fx *f = *state;
	const struct workload *w;

	assert_int_equal(fx_load(f, HEAD WORK_70B), 0);
	w = &f->spec->workload.w;
	assert_int_equal(w->kind, WORKLOAD_PRETRAIN);
	assert_int_equal(w->precision, WORKLOAD_BF16);
	assert_int_equal(w->method, WORKLOAD_FULL);
	assert_int_equal(w->seq_len, 0);
	assert_true(w->mfu == 0 && w->active_params == 0 && w->write_within_s == 0);
}

static void test_a_count_without_a_unit_is_refused_as_kiln_size_refuses_it(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload: {params: 70, tokens: 2T}\n");
	assert_error(&f->d, 5, 20,
		     "workload.params \"70\" has no unit: write K, M, B or T after the number "
		     "(thousand, million, billion, trillion), like 70B");
}

static void test_a_unit_that_is_not_k_m_b_or_t_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload: {params: 70B, tokens: 2P}\n");
	assert_error(&f->d, 5, 33,
		     "workload.tokens \"2P\" has the unit \"P\": the unit is K, M, B or T "
		     "(thousand, million, billion, trillion), like 70B");
}

static void test_zero_and_negative_counts_are_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload: {params: 0B, tokens: -2T}\n");
	assert_error(&f->d, 5, 20,
		     "workload.params \"0B\" is not more than zero: give a count above zero, like "
		     "7B");
	assert_error(&f->d, 5, 32,
		     "workload.tokens \"-2T\" is not more than zero: give a count above zero, "
		     "like 7B");
}

static void test_mfu_outside_zero_to_one_is_refused_zero_included(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload: {params: 70B, tokens: 2T, mfu: 0}\n");
	assert_error(&f->d, 5, 42,
		     "workload.mfu 0 is outside (0, 1]: it is the fraction of the GPU's peak a "
		     "run achieves, like 0.40");
	diags_release(&f->d);
	spec_free(f->spec);
	f->spec = NULL;
	load_bad(f, HEAD "workload: {params: 70B, tokens: 2T, mfu: 1.01}\n");
	assert_diag_counts(&f->d, 1, 0);
	assert_error(&f->d, 5, 42,
		     "workload.mfu 1.01 is outside (0, 1]: it is the fraction of the GPU's peak a "
		     "run achieves, like 0.40");
}

static void test_active_params_above_params_is_refused_at_active_params(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload: {params: 70B, active_params: 80B, tokens: 2T}\n");
	assert_error(&f->d, 5, 40,
		     "workload.active_params 80B is more than params 70B: a mixture of experts "
		     "activates at most all of its parameters; give active_params at most 70B");
}

static void test_lora_to_pretrain_is_refused_at_method(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload: {kind: pretrain, method: lora, params: 70B, tokens: 2T}\n");
	assert_error(&f->d, 5, 36,
		     "workload.method lora with kind pretrain: LoRA adapts a model that is "
		     "already trained; use kind finetune, or method full to pretrain");
}

static void test_params_and_tokens_are_required(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload:\n  kind: pretrain\n");
	assert_error(&f->d, 6, 3, "missing required key 'params' in workload");
	assert_hint(&f->d, 6, 3, "add params: with its unit, like 70B");
	assert_error(&f->d, 6, 3, "missing required key 'tokens' in workload");
	assert_hint(&f->d, 6, 3, "add tokens: with its unit, like 2T");
}

static void test_checkpoint_and_dataset_are_checked(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "workload:\n"
			 "  params: 70B\n"
			 "  tokens: 2T\n"
			 "  deadline: 0s\n"
			 "  checkpoint: {every: 2h, write_within: 3h}\n"
			 "  dataset: {size: 20TB}\n");
	assert_error(&f->d, 8, 13, "workload.deadline must be longer than 0s");
	assert_error(&f->d, 9, 41,
		     "workload.checkpoint.write_within 3h is longer than checkpoint.every 2h: the "
		     "next checkpoint would start before this one is written");
	assert_hint(&f->d, 9, 41, "give write_within at most 2h, like 5m");
	assert_error(&f->d, 10, 19, "workload.dataset.size: '20TB' is not a size");
	assert_hint(&f->d, 10, 19, "write a number and a unit (GiB, TiB or PiB), like 20TiB");
}

static void test_a_group_without_count_gets_the_fewest_nodes_that_meet_the_deadline(void **state)
{
	struct fx *f = *state;
	const struct spec_group *g;

	load_valid(f, HEAD WORK_70B "compute:\n  trainers: {instance_type: p5.48xlarge}\n");
	g = &f->spec->groups[0];
	assert_int_equal(g->count, 103);
	assert_true(g->count_derived && !g->type_derived);
	assert_string_equal(g->derived, "count from the workload: 103 × p5.48xlarge, the fewest "
					"that train it within the 30d deadline (29.8 days)");
}

static void test_a_gpu_group_without_count_resolves_its_type_first(void **state)
{
	struct fx *f = *state;

	load_valid(f, HEAD WORK_70B "compute:\n  trainers: {gpu: A100:8}\n");
	/* p4d.24xlarge: 312 TFLOPS × 0.40 on 8 GPUs; 8.4e23 / 998.4e12 / 720 h = 324.6 */
	assert_int_equal(f->spec->groups[0].count, 325);
}

static void test_a_group_with_neither_gpu_nor_type_gets_the_recommended_cluster(void **state)
{
	struct fx *f = *state;
	const struct spec_group *g;

	load_valid(f, HEAD WORK_70B "compute:\n  trainers: {gang: true}\n");
	g = &f->spec->groups[0];
	assert_string_equal(g->instance_type, "p5.48xlarge");
	assert_int_equal(g->count, 103);
	assert_true(g->type_derived && g->count_derived);
	assert_string_equal(g->derived,
			    "instance_type p5.48xlarge and count from the workload: the cheapest "
			    "on demand that meets the deadline (103 × p5.48xlarge, 29.8 days, "
			    "$7,245,973.99 a run)");
}

static void test_a_group_with_a_count_and_no_machine_gets_only_the_type(void **state)
{
	struct fx *f = *state;
	const struct spec_group *g;

	load_valid(f, HEAD WORK_70B "compute:\n  trainers: {count: 4}\n");
	g = &f->spec->groups[0];
	assert_string_equal(g->instance_type, "p5.48xlarge");
	assert_int_equal(g->count, 4);
	assert_true(g->type_derived && !g->count_derived);
	assert_string_equal(g->derived,
			    "instance_type p5.48xlarge from the workload: the cheapest "
			    "on demand that meets the deadline (103 × p5.48xlarge, 29.8 "
			    "days, $7,245,973.99 a run)");
}

static void test_a_given_count_and_a_cpu_group_are_left_alone(void **state)
{
	struct fx *f = *state;

	load_valid(f, HEAD WORK_70B "compute:\n"
				    "  trainers: {instance_type: p5.48xlarge, count: 16}\n"
				    "  login: {instance_type: m7i.xlarge}\n");
	assert_int_equal(f->spec->groups[0].count, 16);
	assert_int_equal(f->spec->groups[1].count, 1);
	assert_false(f->spec->groups[0].count_derived || f->spec->groups[1].count_derived);
	assert_null(f->spec->groups[1].derived);
}

static void test_without_a_workload_a_missing_count_is_still_one(void **state)
{
	struct fx *f = *state;

	load_valid(f, HEAD "compute:\n  trainers: {instance_type: p5.48xlarge}\n");
	assert_int_equal(f->spec->groups[0].count, 1);
	assert_false(f->spec->groups[0].count_derived);
	assert_false(f->spec->workload.set);
}

static void test_without_a_workload_a_group_still_needs_a_machine(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n  trainers: {count: 2}\n");
	assert_error(&f->d, 6, 3, "compute.trainers needs gpu or instance_type");
}

static void test_a_deadline_no_cluster_meets_names_the_fastest_at_the_deadline(void **state)
{
	struct fx *f = *state;
	const char *yaml = HEAD "workload: {params: 405B, tokens: 15T, deadline: 1d}\n"
				"compute:\n  trainers: {instance_type: p5.48xlarge}\n";

	assert_int_equal(validate_load_buffer(&f->spec, TEST_FILE, yaml, strlen(yaml), NULL, &f->d),
			 -1);
	assert_error(
	    &f->d, 5, 49,
	    "workload: no cluster in the catalog meets the 1d deadline: the fastest, 2048 "
	    "× p5.48xlarge (16384 H100), takes 65.1 days; give a deadline of at least 66d");
}

static void test_a_group_left_to_a_bad_workload_gets_only_the_workload_error(void **state)
{
	struct fx *f = *state;
	const char *yaml = HEAD "workload: {params: 70B, tokens: 2T, mfu: 2}\n"
				"compute:\n  trainers: {gang: true}\n";

	assert_int_equal(validate_load_buffer(&f->spec, TEST_FILE, yaml, strlen(yaml), NULL, &f->d),
			 -1);
	assert_diag_counts(&f->d, 1, 0);
	assert_error(&f->d, 5, 42,
		     "workload.mfu 2 is outside (0, 1]: it is the fraction of the GPU's peak a "
		     "run achieves, like 0.40");
}

static void test_a_group_whose_type_cannot_run_the_workload_is_refused_at_the_group(void **state)
{
	struct fx *f = *state;
	const char *yaml = HEAD WORK_70B "compute:\n  trainers: {gpu: V100:8}\n";

	assert_int_equal(validate_load_buffer(&f->spec, TEST_FILE, yaml, strlen(yaml), NULL, &f->d),
			 -1);
	assert_error(&f->d, 10, 3,
		     "compute.trainers: no count of p3dn.24xlarge runs the workload: no instance "
		     "type can run this workload: V100 has no bf16 tensor cores");
}

/* --- kiln.workload and the audit --------------------------------------------- */

static const char spec_16[] = HEAD WORK_70B "  checkpoint: {every: 2h, write_within: 5m}\n"
					    "compute:\n"
					    "  trainers: {instance_type: p5.48xlarge, count: 16}\n"
					    "storage:\n"
					    "  scratch: {tier: lustre, capacity_gb: 2400, "
					    "throughput_per_tib: 125}\n";

/* A plan with only kiln.cost and kiln.workload, audited. */
static json_t *audited(const struct spec *spec)
{
	json_t *plan = json_pack("{s:[], s:{s:{s:f}}}", "resource_changes", "kiln", "cost",
				 "hourly_after", 1.0);
	struct kiln_error err = {0};
	struct plan_view v;

	workload_plan(spec, &catalog_aws, plan);
	assert_int_equal(plan_view_build(&v, plan, &err), 0);
	assert_int_equal(audit_plan(spec, provider_find("sim"), plan, &v, &err), 0);
	plan_view_release(&v);
	return plan;
}

/* The message of the one finding of rule, or NULL. */
static const char *finding(const json_t *plan, const char *rule)
{
	const json_t *f;
	size_t i;

	json_array_foreach(plan_kiln(plan, "findings"), i,
			   f) if (strcmp(json_string_value(json_object_get(f, "rule")), rule) ==
				  0) return json_string_value(json_object_get(f, "message"));
	return NULL;
}

static void test_a_group_short_of_the_deadline_says_how_many_nodes_meet_it(void **state)
{
	struct fx *f = *state;
	json_t *plan, *run;

	load_valid(f, spec_16);
	plan = audited(f->spec);
	run = json_object_get(plan_kiln(plan, "workload"), "run");
	assert_string_equal(json_string_value(json_object_get(run, "group")), "trainers");
	assert_true(json_is_false(json_object_get(run, "meets_deadline")));
	assert_int_equal(json_integer_value(json_object_get(run, "nodes_for_deadline")), 103);
	assert_true(json_real_value(json_object_get(run, "train_days")) == 191.9);
	assert_string_equal(finding(plan, "KILN-WORK-001"),
			    "compute.trainers: 16 × p5.48xlarge finish in 191.9 days, past the "
			    "30-day deadline: 103 nodes meet it");
	json_decref(plan);
}

static void test_a_lustre_too_slow_for_a_checkpoint_is_found_with_the_numbers(void **state)
{
	struct fx *f = *state;
	json_t *plan, *chk;

	load_valid(f, spec_16);
	plan = audited(f->spec);
	chk = json_array_get(json_object_get(plan_kiln(plan, "workload"), "checkpoint_stores"), 0);
	assert_true(json_real_value(json_object_get(chk, "write_mb_per_s")) == 293.0);
	assert_true(json_is_false(json_object_get(chk, "fast_enough")));
	assert_string_equal(
	    finding(plan, "KILN-WORK-002"),
	    "storage.scratch: 2400 GiB at 125 MB/s/TiB writes 293.0 MB/s: a 912.7 "
	    "GiB checkpoint takes 55m45s, past workload.checkpoint.write_within 5m, "
	    "which needs 3266.7 MB/s; 9600 GiB at 500 MB/s/TiB writes it in time");
	json_decref(plan);
}

static void test_more_than_one_node_without_efa_is_found(void **state)
{
	struct fx *f = *state;
	json_t *plan;

	load_valid(f, "kiln: 1\ncluster: t\nprovider: {name: sim}\n" WORK_70B
		      "compute:\n  trainers: {instance_type: p5.48xlarge}\n");
	plan = audited(f->spec);
	assert_string_equal(
	    finding(plan, "KILN-WORK-003"),
	    "the workload trains on 103 × p5.48xlarge and network.fabric is none: "
	    "gradients cross between nodes over TCP, far below the MFU its time and "
	    "cost assume");
	json_decref(plan);
}

static void test_a_cluster_that_meets_the_workload_has_no_work_finding(void **state)
{
	struct fx *f = *state;
	json_t *plan, *run;

	load_valid(f, HEAD WORK_70B "compute:\n  trainers: {instance_type: p5.48xlarge}\n"
				    "storage:\n  scratch: {tier: lustre, capacity_gb: 9600, "
				    "throughput_per_tib: 500}\n");
	plan = audited(f->spec);
	assert_null(finding(plan, "KILN-WORK-001"));
	assert_null(finding(plan, "KILN-WORK-002"));
	assert_null(finding(plan, "KILN-WORK-003"));
	run = json_object_get(plan_kiln(plan, "cost"), "run");
	assert_int_equal(json_integer_value(json_object_get(run, "nodes")), 103);
	assert_true(json_real_value(json_object_get(run, "cost_usd")) == 7245973.99);
	json_decref(plan);
}

static void test_a_spec_without_a_workload_has_no_kiln_workload(void **state)
{
	struct fx *f = *state;
	json_t *plan;

	load_valid(f, HEAD "compute:\n  trainers: {instance_type: p5.48xlarge, count: 2}\n");
	plan = audited(f->spec);
	assert_null(plan_kiln(plan, "workload"));
	assert_null(json_object_get(plan_kiln(plan, "cost"), "run"));
	json_decref(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_every_field_loads),
	    kiln_test(test_defaults_are_kiln_sizes),
	    kiln_test(test_a_count_without_a_unit_is_refused_as_kiln_size_refuses_it),
	    kiln_test(test_a_unit_that_is_not_k_m_b_or_t_is_refused),
	    kiln_test(test_zero_and_negative_counts_are_refused),
	    kiln_test(test_mfu_outside_zero_to_one_is_refused_zero_included),
	    kiln_test(test_active_params_above_params_is_refused_at_active_params),
	    kiln_test(test_lora_to_pretrain_is_refused_at_method),
	    kiln_test(test_params_and_tokens_are_required),
	    kiln_test(test_checkpoint_and_dataset_are_checked),
	    kiln_test(test_a_group_without_count_gets_the_fewest_nodes_that_meet_the_deadline),
	    kiln_test(test_a_gpu_group_without_count_resolves_its_type_first),
	    kiln_test(test_a_group_with_neither_gpu_nor_type_gets_the_recommended_cluster),
	    kiln_test(test_a_group_with_a_count_and_no_machine_gets_only_the_type),
	    kiln_test(test_a_given_count_and_a_cpu_group_are_left_alone),
	    kiln_test(test_without_a_workload_a_missing_count_is_still_one),
	    kiln_test(test_without_a_workload_a_group_still_needs_a_machine),
	    kiln_test(test_a_deadline_no_cluster_meets_names_the_fastest_at_the_deadline),
	    kiln_test(test_a_group_left_to_a_bad_workload_gets_only_the_workload_error),
	    kiln_test(test_a_group_whose_type_cannot_run_the_workload_is_refused_at_the_group),
	    kiln_test(test_a_group_short_of_the_deadline_says_how_many_nodes_meet_it),
	    kiln_test(test_a_lustre_too_slow_for_a_checkpoint_is_found_with_the_numbers),
	    kiln_test(test_more_than_one_node_without_efa_is_found),
	    kiln_test(test_a_cluster_that_meets_the_workload_has_no_work_finding),
	    kiln_test(test_a_spec_without_a_workload_has_no_kiln_workload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
