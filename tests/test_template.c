/*
 * test_template.c - the templates compiled into kiln for `kiln init`: every
 * one the README promises is there, names are unique and sorted, the
 * summary is the file's first comment line, the provider is the spec's own,
 * and each loads and validates without a diagnostic, with a TTL and a budget.
 */
#include "testutil.h"

#include "template.h"

static const char *const promised[] = {"finetune", "inference", "llm-pretrain", "sim-demo",
				       "slurm-pretrain"};

static void test_every_promised_template_is_present(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(template_count, ARRAY_SIZE(promised));
	for (i = 0; i < ARRAY_SIZE(promised); i++) {
		const struct template_entry *t = template_find(promised[i]);

		assert_non_null(t);
		assert_string_equal(t->name, promised[i]);
	}
	assert_null(template_find("nosuch"));
	assert_null(template_find(""));
}

static void test_names_are_unique_sorted_and_plain(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < template_count; i++) {
		const char *n = template_table[i].name;

		assert_true(n[0] != '\0');
		for (k = 0; n[k]; k++)
			assert_true((n[k] >= 'a' && n[k] <= 'z') || (n[k] >= '0' && n[k] <= '9') ||
				    n[k] == '-');
		if (i > 0)
			assert_true(strcmp(template_table[i - 1].name, n) < 0);
		for (k = 0; k < i; k++)
			assert_string_not_equal(template_table[k].name, n);
	}
}

static void test_summary_is_the_first_comment_line(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < template_count; i++) {
		const struct template_entry *t = &template_table[i];
		char *first = xasprintf("# %s\n", t->summary);

		assert_int_equal(strlen(t->text), t->len);
		assert_true(strlen(t->summary) > 10);
		assert_true(strlen(t->summary) <= 100);
		assert_null(strchr(t->summary, '\n'));
		assert_true(str_starts_with(t->text, first));
		free(first);
	}
}

static void test_each_loads_and_validates_cleanly(void **state)
{
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < template_count; i++) {
		const struct template_entry *t = &template_table[i];
		struct spec_options opts = {0};
		char *file = xasprintf("templates/%s.yaml", t->name);
		int ret;

		opts.providers = providers_for_spec(&opts.nproviders);
		ret = spec_load_buffer(&f->spec, file, t->text, t->len, &opts, &f->d);
		if (ret == 0)
			ret = validate_spec(f->spec, &f->d);
		if (f->d.n)
			printf("template %s:\n", t->name);
		assert_no_diags(&f->d);
		assert_int_equal(ret, 0);
		assert_non_null(f->spec);
		/* The table's provider is the spec's, and the cluster is named after the template.
		 */
		assert_string_equal(f->spec->provider.name, t->provider);
		assert_string_equal(f->spec->cluster, t->name);
		/* A template never starts an unbounded bill. */
		assert_true(f->spec->ttl > 0);
		assert_true(f->spec->max_hourly_usd > 0);
		/* What a user must fill in is a variable with a default. */
		if (strcmp(t->provider, "aws") == 0) {
			assert_non_null(strstr(t->text, "image: ${var.image}"));
			assert_non_null(strstr(t->text, "\n  image: ami-"));
		}
		spec_free(f->spec);
		f->spec = NULL;
		diags_release(&f->d);
		memset(&f->d, 0, sizeof(f->d));
		free(file);
	}
}

static void test_defaults(void **state)
{
	(void)state;
	assert_string_equal(template_default(NULL)->name, "sim-demo");
	assert_string_equal(template_default("sim")->name, "sim-demo");
	assert_string_equal(template_default("aws")->name, "finetune");
	assert_string_equal(template_default("aws")->provider, "aws");
	assert_string_equal(template_default("sim")->provider, "sim");
	assert_null(template_default("gcp"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_every_promised_template_is_present),
	    kiln_test(test_names_are_unique_sorted_and_plain),
	    kiln_test(test_summary_is_the_first_comment_line),
	    kiln_test(test_each_loads_and_validates_cleanly),
	    kiln_test(test_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
