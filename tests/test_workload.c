/*
 * test_workload.c - sizing a cluster from a workload (src/workload.c) over
 * the shipped catalog: hand-computed cases, properties, the refusal at the
 * memory boundary, every bad input's message, and kiln's one default MFU
 * table against published training runs.
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
#include "workload.h"

#define GIB 1073741824.0

/* Within rel of want, relatively. */
static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > fabs(want) * rel)
		fail_msg("got %.10g, want %.10g (within %g)", got, want, rel);
}

static struct workload pretrain(double params, double tokens)
{
	struct workload w;

	memset(&w, 0, sizeof(w));
	w.params = params;
	w.tokens = tokens;
	return w;
}

static struct workload finetune(double params, enum workload_method m)
{
	struct workload w = pretrain(params, 1e9);

	w.kind = WORKLOAD_FINETUNE;
	w.method = m;
	return w;
}

/* --- hand-computed cases ----------------------------------------------------- */

static void dense_training_is_six_n_d(void **state)
{
	struct workload w = pretrain(70e9, 2e12);

	(void)state;
	/* 6 × 70e9 × 2e12 = 8.4e23 */
	assert_near(workload_flops(&w), 8.4e23, 1e-12);
}

static void a_mixture_of_experts_spends_its_active_parameters(void **state)
{
	struct workload w = pretrain(47e9, 1e12);

	(void)state;
	w.active_params = 13e9;
	/* 6 × 13e9 × 1e12 = 7.8e22; its state is still every expert's: 16 × 47e9 */
	assert_near(workload_flops(&w), 7.8e22, 1e-12);
	assert_near(workload_state_bytes(&w), 16 * 47e9, 1e-12);
}

static void lora_is_four_n_d(void **state)
{
	struct workload w = finetune(7e9, WORKLOAD_LORA);

	(void)state;
	/* 4 × 7e9 × 1e9 = 2.8e19: no weight gradient of the frozen 7B */
	assert_near(workload_flops(&w), 2.8e19, 1e-12);
}

static void memory_of_a_70b_model_by_hand(void **state)
{
	struct workload w = pretrain(70e9, 2e12);

	(void)state;
	/*
	 * Shape: h = cbrt(128 × 70e9 / 12) = 9072.12, L = h / 128 = 70.876.
	 * Activations at 4096 tokens: (2L + 34) × 4096 × h = 6.5308e9 bytes
	 * = 6.08 GiB. State: 16 × 70e9 = 1.12e12 bytes. On 8 GPUs:
	 * 1.12e12 / 8 + 6.5308e9 = 1.4653e11 bytes = 136.47 GiB.
	 * An 80 GiB GPU leaves 64 GiB; 64 GiB - 6.5308e9 = 6.2189e10 bytes of
	 * room, 1.12e12 / 6.2189e10 = 18.01: 19 GPUs.
	 */
	assert_near(workload_activation_bytes(&w), 6.5308385e9, 1e-6);
	assert_near(workload_per_gpu_bytes(&w, 8) / GIB, 136.4675, 1e-5);
	assert_int_equal(workload_fit_gpus(&w, 80), 19);
	assert_false(workload_fits(&w, 18, 80));
	assert_true(workload_fits(&w, 19, 80));
	/* A checkpoint: 14 × 70e9 = 9.8e11 bytes */
	assert_near(workload_checkpoint_bytes(&w), 9.8e11, 1e-12);
}

static void lora_memory_of_a_70b_model_by_hand(void **state)
{
	struct workload w = finetune(70e9, WORKLOAD_LORA);

	(void)state;
	/*
	 * Adapters: 18 × 16 × h × L = 288 × 9072.12 × 70.876 = 1.8518e8.
	 * State: 2 × 70e9 + 16 × 1.8518e8 = 1.42963e11 bytes; on 8 GPUs
	 * 1.7870e10 + 6.5308e9 = 2.4401e10 bytes = 22.73 GiB; fits from 3 GPUs
	 * (1.42963e11 / 6.2189e10 = 2.3).
	 */
	assert_near(workload_state_bytes(&w), 1.42962923e11, 1e-6);
	assert_near(workload_per_gpu_bytes(&w, 8) / GIB, 22.7254, 1e-4);
	assert_int_equal(workload_fit_gpus(&w, 80), 3);
}

static void seventy_b_on_two_t_tokens_within_thirty_days(void **state)
{
	struct workload w = pretrain(70e9, 2e12);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.deadline_s = 30 * 86400;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), 0);
	/*
	 * H100, bf16: 989.4 TFLOPS × 0.40 = 395.76 TFLOPS a GPU;
	 * 8.4e23 / 3.9576e14 / 3600 = 589,582.9 GPU-hours. Within 720 hours:
	 * 818.9 GPUs, 102.4 nodes of 8: 103 p5.48xlarge, 589,582.9 / 824 =
	 * 715.5 hours = 29.8 days; cost 589,582.9 × 98.32 / 8 = $7,245,974.
	 * A100 (p4d, $32.7726 for 8): 312 × 0.40 = 124.8 TFLOPS, 1,869,658
	 * GPU-hours × 4.0966 = $7,659,195: the runner-up.
	 */
	assert_string_equal(s.best->type->name, "p5.48xlarge");
	assert_int_equal(s.best->nodes, 103);
	assert_near(s.best->gpu_hours, 589582.9, 1e-6);
	assert_near(s.best->hours / 24, 29.81, 1e-3);
	assert_near(s.best->cost_usd, 7245973.99, 1e-8);
	assert_string_equal(s.runner_up->type->name, "p4d.24xlarge");
	assert_near(s.runner_up->cost_usd, 7659194.7, 1e-7);
	/* Fastest: 16,384 H100 at most, 2048 nodes, 589,582.9 / 16,384 = 36 hours. */
	assert_int_equal(s.fastest->gpus, 16384);
	/*
	 * Lustre: 2 × 912.7 GiB + the dataset (2e12 × 4 bytes = 7450.6 GiB)
	 * = 9275.9 GiB: 9600. A checkpoint in 300 s: 9.8e11 / 1e6 / 300 =
	 * 3266.7 MB/s; 9600 / 1024 = 9.375 TiB × 500 = 4687.5 (250 gives
	 * 2343.75): 500.
	 */
	assert_int_equal(s.lustre.capacity_gib, 9600);
	assert_int_equal(s.lustre.throughput_per_tib, 500);
	assert_near(s.lustre.write_mb_per_s, 3266.667, 1e-6);
	workload_sizing_free(&s);
}

static void lustre_grows_when_no_rate_writes_a_checkpoint_in_time(void **state)
{
	struct workload w = pretrain(405e9, 1e9);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.gpu = "H100";
	w.write_within_s = 60;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), 0);
	/*
	 * A checkpoint: 14 × 405e9 = 5.67e12 bytes, within 60 s: 94,500 MB/s.
	 * Two and the dataset (1e9 × 4 bytes): 1.1344e13 bytes = 10,565 GiB:
	 * 12,000 GiB, whose 11.72 TiB write 11,719 MB/s at 1000 a TiB, too
	 * slow. 94,500 / 1000 TiB = 96,768 GiB: 41 × 2400 = 98,400 GiB, 96,094
	 * MB/s at 1000 (48,047 at 500).
	 */
	assert_near(s.lustre.write_mb_per_s, 94500, 1e-9);
	assert_int_equal(s.lustre.capacity_gib, 98400);
	assert_int_equal(s.lustre.throughput_per_tib, 1000);
	workload_sizing_free(&s);
}

/* --- the memory boundary ----------------------------------------------------- */

static void a_full_fine_tune_of_70b_on_one_node_is_refused(void **state)
{
	struct workload w = finetune(70e9, WORKLOAD_FULL);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.gpu = "H100";
	w.nodes = 1;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), -1);
	assert_string_equal(
	    err.msg, "no instance type can run this workload: a full fine-tune of 70B needs "
		     "136.5 GiB per GPU on 1 × p5.48xlarge (8 GPUs of 80 GiB, 64.0 GiB usable "
		     "with 20% left free); the smallest that fits is 3 × p5.48xlarge (24 GPUs)");
	workload_sizing_free(&s);
}

static void a_lora_fine_tune_of_70b_fits_on_one_node(void **state)
{
	struct workload w = finetune(70e9, WORKLOAD_LORA);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.gpu = "H100";
	w.nodes = 1;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), 0);
	assert_int_equal(s.best->gpus, 8);
	assert_near(s.best->per_gpu_gib, 22.7254, 1e-4);
	workload_sizing_free(&s);
}

/* --- properties ------------------------------------------------------------- */

static void more_tokens_never_cost_less(void **state)
{
	static const double tokens[] = {1e8, 1e9, 3e10, 3e11, 1e12, 2e12, 5e12, 1.5e13};
	static const int64_t deadlines[] = {0, 30 * 86400, 90 * 86400};
	size_t i, d;

	(void)state;
	for (d = 0; d < 3; d++) {
		double last = 0;

		for (i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
			struct workload w = pretrain(13e9, tokens[i]);
			struct workload_sizing s;
			struct kiln_error err = {0};

			w.deadline_s = deadlines[d];
			assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), 0);
			if (s.best->cost_usd < last)
				fail_msg("%g tokens cost $%.2f, less than $%.2f for fewer",
					 tokens[i], s.best->cost_usd, last);
			last = s.best->cost_usd;
			workload_sizing_free(&s);
		}
	}
}

static void a_higher_mfu_never_needs_more_gpus(void **state)
{
	static const char *const gpus[] = {"H100", "A100", "H200"};
	size_t g;
	int m;

	(void)state;
	for (g = 0; g < 3; g++) {
		int last = 1 << 30;

		for (m = 5; m <= 100; m += 5) {
			struct workload w = pretrain(70e9, 2e12);
			struct workload_sizing s;
			struct kiln_error err = {0};

			w.gpu = gpus[g];
			w.mfu = m / 100.0;
			w.deadline_s = 60 * 86400;
			if (workload_size(&w, &catalog_aws, &s, &err) == 0) {
				if (s.best->gpus > last)
					fail_msg("%s at MFU %.2f needs %d GPUs, more than %d at a "
						 "lower one",
						 gpus[g], w.mfu, s.best->gpus, last);
				last = s.best->gpus;
			}
			workload_sizing_free(&s);
		}
		assert_true(last < 1 << 30);
	}
}

static void a_model_that_fits_on_n_gpus_fits_on_n_plus_one(void **state)
{
	static const double params[] = {350e6, 7e9, 13e9, 70e9, 405e9};
	static const int mems[] = {16, 24, 40, 48, 80, 141};
	size_t p, m;
	int n, method;

	(void)state;
	for (method = 0; method < 2; method++)
		for (p = 0; p < 5; p++)
			for (m = 0; m < 6; m++) {
				struct workload w =
				    finetune(params[p], method ? WORKLOAD_LORA : WORKLOAD_FULL);

				for (n = 1; n < 512; n++)
					if (workload_fits(&w, n, mems[m]) &&
					    !workload_fits(&w, n + 1, mems[m]))
						fail_msg(
						    "%g params fit on %d GPUs of %d GiB, not on %d",
						    params[p], n, mems[m], n + 1);
			}
}

static void every_catalog_gpu_has_a_peak(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < catalog_aws.ntypes; i++) {
		const char *g = catalog_aws.types[i].gpu;

		if (g && !catalog_gpu(&catalog_aws, g))
			fail_msg("%s has no row in the table of peaks", g);
	}
}

/* --- bad input ---------------------------------------------------------------- */

static void assert_count(const char *text, double want)
{
	struct kiln_error err = {0};
	double got = 0;

	if (workload_parse_count("--params", text, &got, &err) != 0)
		fail_msg("%s: %s", text, err.msg);
	assert_near(got, want, 1e-12);
}

static void assert_count_refused(const char *text, const char *msg)
{
	struct kiln_error err = {0};
	double got = 0;

	assert_int_equal(workload_parse_count("workload.params", text, &got, &err), -1);
	assert_string_equal(err.msg, msg);
}

static void counts_take_k_m_b_or_t(void **state)
{
	char *s;

	(void)state;
	assert_count("70B", 70e9);
	assert_count("7.5B", 7.5e9);
	assert_count("350M", 350e6);
	assert_count("2T", 2e12);
	assert_count("300B", 300e9);
	assert_count("1.5K", 1500);
	s = workload_count_format(7.5e9);
	assert_string_equal(s, "7.5B");
	free(s);
	s = workload_count_format(350e6);
	assert_string_equal(s, "350M");
	free(s);
}

static void a_count_without_its_unit_is_refused(void **state)
{
	(void)state;
	assert_count_refused("70",
			     "workload.params \"70\" has no unit: write K, M, B or T after the "
			     "number (thousand, million, billion, trillion), like 70B");
	assert_count_refused("70G",
			     "workload.params \"70G\" has the unit \"G\": the unit is K, M, B "
			     "or T (thousand, million, billion, trillion), like 70B");
	assert_count_refused("70 B",
			     "workload.params \"70 B\" has the unit \" B\": the unit is K, M, "
			     "B or T (thousand, million, billion, trillion), like 70B");
	assert_count_refused("0B",
			     "workload.params \"0B\" is not more than zero: give a count above "
			     "zero, like 7B");
	assert_count_refused("-7B", "workload.params \"-7B\" is not more than zero: give a count "
				    "above zero, like 7B");
	assert_count_refused("B",
			     "workload.params \"B\" is not a count: write a number and a unit, "
			     "like 70B or 350M");
	assert_count_refused("1.2.3B",
			     "workload.params \"1.2.3B\" is not a count: write a number and "
			     "a unit, like 70B or 350M");
}

static void assert_check(const struct workload *w, bool cli, const char *field, const char *msg)
{
	struct kiln_error err = {0};
	const char *got = NULL;

	assert_int_equal(workload_check(w, cli, &got, &err), -1);
	assert_string_equal(got, field);
	assert_string_equal(err.msg, msg);
}

static void the_rules_between_fields(void **state)
{
	struct workload w = pretrain(70e9, 2e12);
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(workload_check(&w, true, NULL, &err), 0);
	w.mfu = 1.5;
	assert_check(&w, true, "mfu",
		     "--mfu 1.5 is outside (0, 1]: it is the fraction of the GPU's peak a run "
		     "achieves, like 0.40");
	assert_check(&w, false, "mfu",
		     "mfu 1.5 is outside (0, 1]: it is the fraction of the GPU's peak a run "
		     "achieves, like 0.40");
	w.mfu = 1;
	assert_int_equal(workload_check(&w, true, NULL, &err), 0);
	assert_int_equal(workload_check_mfu(0, true, &err), -1);
	w.mfu = 0;
	w.active_params = 80e9;
	assert_check(
	    &w, true, "active_params",
	    "--active-params 80B is more than --params 70B: a mixture of experts activates "
	    "at most all of its parameters; give --active-params at most 70B");
	w.active_params = 0;
	w.method = WORKLOAD_LORA;
	assert_check(&w, true, "method",
		     "--method lora with --kind pretrain: LoRA adapts a model that is already "
		     "trained; use --kind finetune, or --method full to pretrain");
	assert_check(&w, false, "method",
		     "method lora with kind pretrain: LoRA adapts a model that is already trained; "
		     "use kind finetune, or method full to pretrain");
}

static void a_deadline_nothing_meets_names_the_fastest(void **state)
{
	struct workload w = pretrain(70e9, 2e12);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.deadline_s = 86400;
	/* 589,582.9 GPU-hours on at most 16,384 H100: 35.98 hours, 1.5 days. */
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), -1);
	assert_string_equal(err.msg,
			    "no cluster in the catalog meets the 1d deadline: the fastest, "
			    "2048 × p5.48xlarge (16384 H100), takes 1.5 days; give a "
			    "deadline of at least 2d");
	assert_null(s.best);
	workload_sizing_free(&s);
}

static void a_gpu_the_catalog_lacks_is_named(void **state)
{
	struct workload w = pretrain(7e9, 1e12);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.gpu = "MI300X";
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), -1);
	assert_string_equal(err.msg, "the catalog has no GPU model \"MI300X\": it has H100, H200, "
				     "A100, V100, L40S, L4, A10G, TRN1");
	workload_sizing_free(&s);
}

static void a_gpu_without_a_default_mfu_needs_one_given(void **state)
{
	struct workload w = pretrain(7e9, 1e11);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	w.gpu = "TRN1";
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), -1);
	assert_string_equal(err.msg, "no instance type can run this workload: kiln has no measured "
				     "MFU for TRN1 in bf16: give an mfu to size it");
	workload_sizing_free(&s);
	w.mfu = 0.3;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), 0);
	assert_string_equal(s.best->type->gpu, "TRN1");
	workload_sizing_free(&s);
}

static void a_spec_s_16_nodes_are_checked_against_the_deadline(void **state)
{
	struct workload w = pretrain(70e9, 2e12);
	struct workload_sizing s;
	struct kiln_error err = {0};

	(void)state;
	/*
	 * What a spec stating 16 × p5.48xlarge asks: 589,582.9 GPU-hours on 128
	 * H100 take 4,606 hours, 191.9 days, past a 30-day deadline, which 103
	 * nodes meet (the case above).
	 */
	w.instance_type = "p5.48xlarge";
	w.nodes = 16;
	w.deadline_s = 30 * 86400;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), -1);
	assert_int_equal(s.ncands, 1);
	assert_false(s.cands[0].meets_deadline);
	assert_near(s.cands[0].hours / 24, 191.9, 1e-3);
	workload_sizing_free(&s);
	w.nodes = 0;
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), 0);
	assert_int_equal(s.best->nodes, 103);
	workload_sizing_free(&s);
	w.instance_type = "m7i.large";
	assert_int_equal(workload_size(&w, &catalog_aws, &s, &err), -1);
	assert_string_equal(err.msg, "the catalog has no GPU instance type \"m7i.large\"");
	workload_sizing_free(&s);
}

/* --- published training runs ------------------------------------------------------ */

/*
 * Each run: the parameters and tokens its authors give, the GPU model, and
 * the GPU-hours they report. kiln's estimate uses its one default MFU table
 * (no per-run tuning). Those it misses by more than 25% are listed with the
 * miss, so a change to the table that moves them shows here.
 */
struct published_run {
	const char *name;
	double params, tokens;
	const char *gpu;
	double gpu_hours;
	double miss; /* the known miss, estimate / published - 1; 0: within 25% */
	const char *source;
};

static const struct published_run runs[] = {
    {"Llama 2 7B", 7e9, 2e12, "A100", 184320, 0,
     "Touvron et al. 2023, \"Llama 2\", table 2 (A100-80GB)"},
    {"Llama 2 70B", 70e9, 2e12, "A100", 1720320, 0,
     "Touvron et al. 2023, \"Llama 2\", table 2 (A100-80GB)"},
    {"BLOOM 176B", 176e9, 366e9, "A100", 1082990, 0,
     "BigScience 2022, \"BLOOM\" (Le Scao et al.), and GENCI's Jean Zay report: 1,082,990 "
     "A100-80GB hours"},
    {"Llama 3.1 405B", 405e9, 15.6e12, "H100", 30.84e6, 0,
     "Meta, Llama 3.1 model card (30.84M H100-80GB hours); 15.6T tokens from Dubey et al. 2024"},
    /* The model card's hours for the smaller Llama 3 models imply MFUs of 15% and 28%. */
    {"Llama 3 8B", 8e9, 15e12, "H100", 1.3e6, -0.611,
     "Meta, Llama 3 model card: 1.3M H100-80GB hours for 15T+ tokens"},
    {"Llama 3 70B", 70e9, 15e12, "H100", 6.4e6, -0.309,
     "Meta, Llama 3 model card: 6.4M H100-80GB hours for 15T+ tokens"},
};

static double estimate(const struct published_run *r)
{
	struct workload w = pretrain(r->params, r->tokens);
	struct workload_sizing s;
	struct kiln_error err = {0};
	double h;

	w.gpu = r->gpu;
	if (workload_size(&w, &catalog_aws, &s, &err) != 0)
		fail_msg("%s: %s", r->name, err.msg);
	h = s.best->gpu_hours;
	workload_sizing_free(&s);
	return h;
}

static void estimates_against_published_runs(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		double est = estimate(&runs[i]), miss = est / runs[i].gpu_hours - 1;

		print_message("%-15s %-5s published %12.0f  kiln %12.0f  %+5.1f%%\n", runs[i].name,
			      runs[i].gpu, runs[i].gpu_hours, est, miss * 100);
		if (runs[i].miss == 0 && fabs(miss) > 0.25)
			fail_msg("%s: kiln's estimate is %+.1f%% off the published %.0f GPU-hours",
				 runs[i].name, miss * 100, runs[i].gpu_hours);
		if (runs[i].miss != 0 && fabs(miss - runs[i].miss) > 0.005)
			fail_msg("%s: the known miss moved from %+.1f%% to %+.1f%%", runs[i].name,
				 runs[i].miss * 100, miss * 100);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(dense_training_is_six_n_d),
	    cmocka_unit_test(a_mixture_of_experts_spends_its_active_parameters),
	    cmocka_unit_test(lora_is_four_n_d),
	    cmocka_unit_test(memory_of_a_70b_model_by_hand),
	    cmocka_unit_test(lora_memory_of_a_70b_model_by_hand),
	    cmocka_unit_test(seventy_b_on_two_t_tokens_within_thirty_days),
	    cmocka_unit_test(lustre_grows_when_no_rate_writes_a_checkpoint_in_time),
	    cmocka_unit_test(a_full_fine_tune_of_70b_on_one_node_is_refused),
	    cmocka_unit_test(a_lora_fine_tune_of_70b_fits_on_one_node),
	    cmocka_unit_test(more_tokens_never_cost_less),
	    cmocka_unit_test(a_higher_mfu_never_needs_more_gpus),
	    cmocka_unit_test(a_model_that_fits_on_n_gpus_fits_on_n_plus_one),
	    cmocka_unit_test(every_catalog_gpu_has_a_peak),
	    cmocka_unit_test(counts_take_k_m_b_or_t),
	    cmocka_unit_test(a_count_without_its_unit_is_refused),
	    cmocka_unit_test(the_rules_between_fields),
	    cmocka_unit_test(a_deadline_nothing_meets_names_the_fastest),
	    cmocka_unit_test(a_gpu_the_catalog_lacks_is_named),
	    cmocka_unit_test(a_gpu_without_a_default_mfu_needs_one_given),
	    cmocka_unit_test(a_spec_s_16_nodes_are_checked_against_the_deadline),
	    cmocka_unit_test(estimates_against_published_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
