/*
 * test_providers.c - the provider table (providers/providers.c), from which
 * every list of providers the engine shows is built: its order, its names,
 * the first simulated and the first real cloud, and the hooks each provider
 * owes the engine so that no engine file names a cloud.
 */
#include "testutil.h"

#include "provider.h"
#include "template.h"

static void test_the_table_lists_aws_then_sim(void **state)
{
	(void)state;
	assert_int_equal(provider_count(), 2);
	assert_string_equal(provider_at(0)->name, "aws");
	assert_string_equal(provider_at(1)->name, "sim");
	assert_null(provider_at(2));
	assert_ptr_equal(provider_find("sim"), provider_at(1));
	assert_null(provider_find("gcp"));
	assert_null(provider_find(NULL));
}

static void test_names_join_in_table_order(void **state)
{
	char *s;

	(void)state;
	s = provider_names_join("--provider ", ", ", " or ");
	assert_string_equal(s, "--provider aws or --provider sim");
	free(s);
	s = provider_names_join("", "|", "|");
	assert_string_equal(s, "aws|sim");
	free(s);
}

static void test_first_simulated_is_sim_and_first_cloud_is_aws(void **state)
{
	(void)state;
	assert_string_equal(provider_first(true)->name, "sim");
	assert_string_equal(provider_first(false)->name, "aws");
}

static void test_every_provider_has_what_the_engine_asks_of_it(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < provider_count(); i++) {
		const struct provider *p = provider_at(i);

		/* init's default, sprawl's region, allow: statements, audit's IAM-002. */
		assert_non_null(template_find(p->default_template));
		assert_string_equal(template_default(p->name)->provider, p->name);
		assert_non_null(p->default_region);
		assert_non_null(p->default_region());
		assert_non_null(p->grammar);
		assert_non_null(p->unscopable_actions);
	}
}

static void test_every_type_but_a_secret_has_a_tier_for_kiln_graph(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < provider_count(); i++) {
		const struct provider *p = provider_at(i);

		assert_non_null(p->type_tier);
		for (k = 0; k < p->ntypes; k++) {
			const char *t = p->types[k].name;

			if (strcmp(t, "aws_ssm_parameter") == 0)
				assert_int_equal(p->type_tier(t), PROV_TIER_OTHER);
			else if (p->type_tier(t) == PROV_TIER_OTHER)
				fail_msg("%s has no tier", t);
		}
		/* A spec part's type is in the tier of its part. */
		assert_int_equal(p->type_tier(p->part_type(PART_GROUP)), PROV_TIER_COMPUTE);
		assert_int_equal(p->type_tier(p->part_type(PART_LUSTRE)), PROV_TIER_STORAGE);
		assert_int_equal(p->type_tier(p->part_type(PART_ROLE)), PROV_TIER_IAM);
		assert_int_equal(p->type_tier("no_such_type"), PROV_TIER_OTHER);
	}
}

static void test_the_arn_grammar_is_aws_and_sims(void **state)
{
	const struct spec_grammar *g = provider_find("sim")->grammar;

	(void)state;
	assert_ptr_equal(g, provider_find("aws")->grammar);
	assert_null(g->resource_fault(g->example_resource));
	assert_null(g->resource_fault("*"));
	assert_string_equal(g->resource_fault("arn:aws:s3"),
			    "it has fewer than six ':'-separated parts");
	assert_string_equal(g->resource_fault("arn:aws:s3:::"),
			    "the resource after the fifth ':' is empty");
	assert_true(g->resource_is_any("arn:aws:s3:::*"));
	assert_false(g->resource_is_any("arn:aws:s3:::b/*"));
	assert_false(g->resource_is_any("*x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_the_table_lists_aws_then_sim),
	    kiln_test(test_names_join_in_table_order),
	    kiln_test(test_first_simulated_is_sim_and_first_cloud_is_aws),
	    kiln_test(test_every_provider_has_what_the_engine_asks_of_it),
	    kiln_test(test_every_type_but_a_secret_has_a_tier_for_kiln_graph),
	    kiln_test(test_the_arn_grammar_is_aws_and_sims),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
