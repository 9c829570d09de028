/*
 * test_runprog.c - a running run's progress: pace, MFU, ETA, the share of
 * the cluster's cost, the warnings, and "no data" kept apart from 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "runprog.h"
#include "util.h"

#define T0 1767225600 /* 2026-01-01T00:00:00Z */

static void fill(struct runrec *r, double rate)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "r-0123abcd");
	r->state = RUNREC_RUNNING;
	r->simulated = true;
	r->started = T0;
	r->gpus = 16;
	r->model_seconds = 86400 * 3;
	r->model_tokens_per_s = rate;
	r->tokens = rate >= 0 ? rate * 3600 : -1;
	r->lineage.workload = json_pack("{s:f, s:f, s:f, s:f, s:s}", "active_params", 8e9, "tokens",
					20e9, "deadline_seconds", 86400.0, "max_hourly_usd", 150.0,
					"precision", "bf16");
}

static void a_run_s_pace_gives_mfu_eta_and_its_share_of_the_cost(void **state)
{
	struct runrec r;
	struct runprog p;

	(void)state;
	fill(&r, 150000);
	/* Half the cluster's 32 GPUs: half its $200 an hour. */
	runprog_compute(&r, T0 + 3600, 200, 32, 989.4, &p);
	assert_int_equal(p.elapsed_s, 3600);
	assert_true(fabs(p.mfu - 6 * 8e9 * 150000 / (16 * 989.4e12)) < 1e-12);
	assert_true(fabs(p.eta_s - (20e9 - 540e6) / 150000) < 1e-6);
	assert_true(p.hourly == 100);
	assert_true(p.cost_so_far == 100);
	assert_true(fabs(p.cost_projected - 100 * (3600 + p.eta_s) / 3600) < 1e-9);
	assert_string_equal(p.warning, "will miss its deadline (2026-01-02T00:00:00Z) by 13h2m14s "
				       "at this pace");
	runprog_release(&p);
	json_decref(r.lineage.workload);
}

static void a_run_over_the_workload_s_budget_is_warned_naming_the_gap(void **state)
{
	struct runrec r;
	struct runprog p;

	(void)state;
	fill(&r, 1e6); /* fast enough for the deadline */
	runprog_compute(&r, T0 + 3600, 200, 16, 989.4, &p);
	assert_string_equal(p.warning,
			    "runs at $200.00 an hour, $50.00 over the workload's budget of $150.00");
	runprog_release(&p);
	json_decref(r.lineage.workload);
}

static void a_run_that_reports_nothing_has_no_data_not_zero(void **state)
{
	struct runrec r;
	struct runprog p;
	json_t *j;

	(void)state;
	fill(&r, -1);
	runprog_compute(&r, T0 + 3600, -1, 16, 989.4, &p);
	assert_true(p.tokens_per_s < 0 && p.mfu < 0 && p.eta_s < 0);
	assert_true(p.cost_so_far < 0 && p.cost_projected < 0);
	assert_null(p.warning);
	j = runprog_json(&r, &p);
	assert_true(json_is_null(json_object_get(j, "tokens_per_second")));
	assert_true(json_is_null(json_object_get(j, "mfu")));
	assert_true(json_is_null(json_object_get(j, "tokens")));
	assert_true(json_is_null(json_object_get(j, "cost_so_far_usd")));
	json_decref(j);
	runprog_release(&p);
	json_decref(r.lineage.workload);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_run_s_pace_gives_mfu_eta_and_its_share_of_the_cost),
	    cmocka_unit_test(a_run_over_the_workload_s_budget_is_warned_naming_the_gap),
	    cmocka_unit_test(a_run_that_reports_nothing_has_no_data_not_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
