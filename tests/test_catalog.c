/*
 * test_catalog.c - the shipped AWS catalog and `gpu: MODEL:COUNT` resolution:
 * the cheapest fitting type and its runner-up, EFA as a constraint, and the
 * messages for a model or a count the catalog does not have.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_aws.h"

struct resolved {
	int rc;
	const struct catalog_type *best;
	const struct catalog_type *next;
	struct kiln_error err;
};

static struct resolved resolve(const char *model, int count, bool efa)
{
	struct resolved r;

	memset(&r, 0, sizeof(r));
	r.rc = catalog_resolve(&catalog_aws, model, count, efa, &r.best, &r.next, &r.err);
	return r;
}

static void assert_resolves(const char *model, int count, bool efa, const char *best,
			    const char *next)
{
	struct resolved r = resolve(model, count, efa);

	if (r.rc != 0)
		fail_msg("%s:%d%s did not resolve: %s", model, count, efa ? " with EFA" : "",
			 r.err.msg);
	assert_string_equal(r.best->name, best);
	if (next)
		assert_string_equal(r.next ? r.next->name : "(none)", next);
	else
		assert_null(r.next);
}

static void test_h100_times_eight_resolves_to_the_cheapest_h100_type(void **state)
{
	(void)state;
	/* p5.48xlarge is the only type with eight H100s: there is no runner-up. */
	assert_resolves("H100", 8, false, "p5.48xlarge", NULL);
	assert_resolves("H100", 8, true, "p5.48xlarge", NULL);
}

static void test_the_runner_up_is_the_next_cheapest_type_that_fits(void **state)
{
	(void)state;
	assert_resolves("A100", 8, false, "p4d.24xlarge", "p4de.24xlarge");
	assert_resolves("H200", 8, true, "p5e.48xlarge", "p5en.48xlarge");
	assert_resolves("A10G", 4, false, "g5.12xlarge", "g5.24xlarge");
	assert_resolves("L4", 1, false, "g6.xlarge", "g6.2xlarge");
}

static void test_efa_rules_out_the_types_without_it(void **state)
{
	(void)state;
	assert_resolves("L40S", 1, false, "g6e.xlarge", "g6e.2xlarge");
	assert_resolves("L40S", 1, true, "g6e.8xlarge", "g6e.16xlarge");
	assert_resolves("V100", 8, false, "p3.16xlarge", "p3dn.24xlarge");
	assert_resolves("V100", 8, true, "p3dn.24xlarge", NULL);
}

static void test_a_gpu_model_matches_whatever_its_case(void **state)
{
	(void)state;
	assert_resolves("h100", 8, false, "p5.48xlarge", NULL);
	assert_resolves("l40s", 8, false, "g6e.48xlarge", NULL);
}

static void test_equal_prices_go_to_the_name_that_sorts_first(void **state)
{
	static const struct catalog_type types[] = {
	    {"zz.large", "X1", 2, 16, 8, 32, false, 0, 5.0, 1.0},
	    {"aa.large", "X1", 2, 16, 8, 32, false, 0, 5.0, 1.0},
	    {"mm.large", "X1", 2, 16, 8, 32, false, 0, 4.0, 1.0},
	};
	static const struct catalog cat = {"test", "nowhere-1", "2026-01-01", types, 3};
	const struct catalog_type *best, *next;
	struct kiln_error err = {{0}, {0}};

	(void)state;
	assert_int_equal(catalog_resolve(&cat, "x1", 2, false, &best, &next, &err), 0);
	assert_string_equal(best->name, "mm.large");
	assert_string_equal(next->name, "aa.large");
}

static void test_an_unknown_model_lists_the_models_the_catalog_has(void **state)
{
	struct resolved r = resolve("B300", 8, false);

	(void)state;
	assert_int_equal(r.rc, -1);
	assert_null(r.best);
	assert_string_equal(r.err.msg, "the catalog (aws us-east-1, prices of 2026-11-01) has no "
				       "GPU model 'B300'; it has: A10G, A100, H100, H200, L4, "
				       "L40S, TRN1, V100");
	assert_string_equal(r.err.hint, "write gpu: MODEL:COUNT with one of those models, or name "
					"an instance_type: instead");
}

static void test_an_unknown_model_close_to_a_known_one_gets_a_suggestion(void **state)
{
	struct resolved r = resolve("H10", 8, false);

	(void)state;
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.err.msg, "the catalog (aws us-east-1, prices of 2026-11-01) has no "
				       "GPU model 'H10'; it has: A10G, A100, H100, H200, L4, "
				       "L40S, TRN1, V100");
	assert_string_equal(r.err.hint, "did you mean 'H100'?");
}

static void test_a_count_the_model_does_not_come_in_lists_the_counts_it_has(void **state)
{
	struct resolved r = resolve("l4", 2, false);

	(void)state;
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.err.msg, "the catalog (aws us-east-1, prices of 2026-11-01) has L4 "
				       "with 1, 4 or 8 GPUs per node, not 2");
	assert_string_equal(r.err.hint, "try gpu: L4:4");
	r = resolve("H100", 4, false);
	assert_string_equal(r.err.msg, "the catalog (aws us-east-1, prices of 2026-11-01) has "
				       "H100 only with 8 GPUs per node, not 4");
	assert_string_equal(r.err.hint, "try gpu: H100:8");
	r = resolve("TRN1", 32, false);
	assert_string_equal(r.err.msg, "the catalog (aws us-east-1, prices of 2026-11-01) has "
				       "TRN1 with 1 or 16 GPUs per node, not 32");
	assert_string_equal(r.err.hint, "try gpu: TRN1:16");
}

static void test_efa_asked_where_no_type_of_that_size_has_it_says_so(void **state)
{
	struct resolved r = resolve("V100", 4, true);

	(void)state;
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.err.msg, "the catalog (aws us-east-1, prices of 2026-11-01) has no "
				       "type with 4× V100 and EFA; V100 has EFA only with 8 GPUs "
				       "per node");
	assert_string_equal(r.err.hint,
			    "use network.fabric: ena for this GPU, or a GPU count that has EFA");
}

static void test_catalog_find_knows_exact_names_only(void **state)
{
	const struct catalog_type *t;

	(void)state;
	t = catalog_find(&catalog_aws, "p5.48xlarge");
	assert_non_null(t);
	assert_string_equal(t->gpu, "H100");
	assert_int_equal(t->gpus, 8);
	assert_true(t->efa);
	assert_null(catalog_find(&catalog_aws, "p5.48xl"));
	assert_null(catalog_find(&catalog_aws, "P5.48XLARGE"));
	assert_null(catalog_find(&catalog_aws, NULL));
	t = catalog_find(&catalog_aws, "m7i.xlarge");
	assert_non_null(t);
	assert_null(t->gpu);
	assert_int_equal(t->gpus, 0);
}

static void test_an_efa_type_says_how_many_efa_interfaces_it_takes(void **state)
{
	const struct catalog_type *p5 = catalog_find(&catalog_aws, "p5.48xlarge");
	const struct catalog_type *p4 = catalog_find(&catalog_aws, "p4d.24xlarge");
	const struct catalog_type *m7 = catalog_find(&catalog_aws, "m7i.xlarge");

	(void)state;
	assert_non_null(p5);
	assert_non_null(p4);
	assert_non_null(m7);
	/* One per network card: 32 cards on a p5, 4 on a p4d; none without EFA. */
	assert_int_equal(p5->efa_interfaces, 32);
	assert_int_equal(p4->efa_interfaces, 4);
	assert_int_equal(m7->efa_interfaces, 0);
}

static void test_the_price_is_spot_or_on_demand_by_market(void **state)
{
	const struct catalog_type *t = catalog_find(&catalog_aws, "p5.48xlarge");

	(void)state;
	assert_true(catalog_price(t, false) == 98.32);
	assert_true(catalog_price(t, true) == t->spot_usd);
	assert_true(catalog_price(t, true) < catalog_price(t, false));
}

static void test_the_shipped_catalog_is_dated_and_every_entry_is_sane(void **state)
{
	size_t i, j;

	(void)state;
	assert_string_equal(catalog_aws.provider, "aws");
	assert_string_equal(catalog_aws.region, "us-east-1");
	assert_string_equal(catalog_aws.date, "2026-11-01");
	assert_true(catalog_aws.ntypes > 40);
	for (i = 0; i < catalog_aws.ntypes; i++) {
		const struct catalog_type *t = &catalog_aws.types[i];

		if (!(t->on_demand_usd > 0 && t->spot_usd > 0 && t->spot_usd < t->on_demand_usd))
			fail_msg("%s: prices %.4f on-demand, %.4f spot", t->name, t->on_demand_usd,
				 t->spot_usd);
		if ((t->gpu != NULL) != (t->gpus > 0) || (t->gpu && t->gpu_memory_gib <= 0))
			fail_msg("%s: gpu %s with %d per node", t->name, t->gpu ? t->gpu : "none",
				 t->gpus);
		if (t->vcpus <= 0 || t->memory_gib <= 0)
			fail_msg("%s: %d vCPUs, %d GiB", t->name, t->vcpus, t->memory_gib);
		if (t->efa != (t->efa_interfaces > 0))
			fail_msg("%s: EFA %s with %d EFA interfaces", t->name,
				 t->efa ? "on" : "off", t->efa_interfaces);
		for (j = 0; j < i; j++)
			if (strcmp(t->name, catalog_aws.types[j].name) == 0)
				fail_msg("%s is in the catalog twice", t->name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_h100_times_eight_resolves_to_the_cheapest_h100_type),
	    cmocka_unit_test(test_the_runner_up_is_the_next_cheapest_type_that_fits),
	    cmocka_unit_test(test_efa_rules_out_the_types_without_it),
	    cmocka_unit_test(test_a_gpu_model_matches_whatever_its_case),
	    cmocka_unit_test(test_equal_prices_go_to_the_name_that_sorts_first),
	    cmocka_unit_test(test_an_unknown_model_lists_the_models_the_catalog_has),
	    cmocka_unit_test(test_an_unknown_model_close_to_a_known_one_gets_a_suggestion),
	    cmocka_unit_test(test_a_count_the_model_does_not_come_in_lists_the_counts_it_has),
	    cmocka_unit_test(test_efa_asked_where_no_type_of_that_size_has_it_says_so),
	    cmocka_unit_test(test_catalog_find_knows_exact_names_only),
	    cmocka_unit_test(test_an_efa_type_says_how_many_efa_interfaces_it_takes),
	    cmocka_unit_test(test_the_price_is_spot_or_on_demand_by_market),
	    cmocka_unit_test(test_the_shipped_catalog_is_dated_and_every_entry_is_sane),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
