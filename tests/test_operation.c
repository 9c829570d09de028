/*
 * test_operation.c - the operations layer (operation.c) on the sim: a run's
 * errors and diagnostics come back to the caller, nothing is printed on
 * standard output, a saved plan of another spec is refused, a destroy
 * stopped under the lock stops there, and an apply of a Capacity Block
 * without a ttl records the spec reap destroys with.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operation.h"
#include "plan.h"

static const char quickstart[] = "kiln: 1\n"
				 "cluster: quickstart\n"
				 "provider:\n"
				 "  name: sim\n"
				 "network:\n"
				 "  cidr: 10.42.0.0/16\n"
				 "  fabric: ena\n"
				 "compute:\n"
				 "  trainers:\n"
				 "    gpu: H100:8\n"
				 "    count: 2\n"
				 "storage:\n"
				 "  checkpoints: {tier: object}\n";

struct fx {
	char dir[64];
	char cwd[PATH_MAX];
	struct op_run r;
	struct diags d;
	int saved_stdout; /* standard output while it is captured, else -1 */
	FILE *captured;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	unsetenv("KILN_STATE");
	unsetenv("KILN_WORKSPACE");
	unsetenv("KILN_STATE_KEY");
	f->saved_stdout = -1;
	strcpy(f->dir, "/tmp/kiln-test-operation-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int rc = 0;

	operation_close(&f->r);
	diags_release(&f->d);
	if (f->captured)
		fclose(f->captured);
	if (chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f);
	return rc;
}

static void write_spec(const char *text)
{
	FILE *fp = fopen("kiln.yaml", "w");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

/* From here to capture_end, whatever goes to standard output lands in a file. */
static void capture_start(struct fx *f)
{
	fflush(stdout);
	f->captured = tmpfile();
	assert_non_null(f->captured);
	f->saved_stdout = dup(STDOUT_FILENO);
	assert_true(f->saved_stdout >= 0);
	assert_true(dup2(fileno(f->captured), STDOUT_FILENO) >= 0);
}

/* What was printed on standard output since capture_start, in bytes. */
static long capture_end(struct fx *f)
{
	fflush(stdout);
	assert_true(dup2(f->saved_stdout, STDOUT_FILENO) >= 0);
	close(f->saved_stdout);
	f->saved_stdout = -1;
	assert_int_equal(fseek(f->captured, 0, SEEK_END), 0);
	return ftell(f->captured);
}

static const struct op_options defaults = {.refresh = true};

static void test_an_invalid_spec_comes_back_as_diagnostics(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};

	write_spec("kiln: 1\ncluster: quickstart\nprovider: {name: sim}\nnetwork: {cidr: nope}\n");
	capture_start(f);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), -1);
	assert_int_equal(capture_end(f), 0);
	/* Not an error of its own: the diagnostics say why, and the caller prints them. */
	assert_string_equal(err.msg, "");
	assert_true(f->d.errors > 0);
}

static void test_a_first_plan_creates_everything_and_prints_nothing(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	json_t *rc;
	size_t i;

	write_spec(quickstart);
	f->r.plan_only = true;
	capture_start(f);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	/* No state repository yet: the plan is made against an empty state. */
	assert_int_equal(operation_open_state(&f->r, false, "plan", &err), 0);
	assert_int_equal(operation_plan(&f->r, &err), 0);
	assert_int_equal(capture_end(f), 0);
	assert_null(f->r.store);
	assert_true(json_array_size(json_object_get(f->r.plan, "resource_changes")) > 0);
	json_array_foreach(json_object_get(f->r.plan, "resource_changes"), i, rc)
	{
		json_t *actions = json_object_get(json_object_get(rc, "change"), "actions");

		assert_string_equal(json_string_value(json_array_get(actions, 0)), "create");
	}
	assert_false(operation_plan_is_empty(&f->r));
}

static void test_a_saved_plan_of_another_spec_is_refused_as_stale(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	json_t *saved = json_pack("{s:{s:{s:s}}}", "kiln", "spec", "digest", "sha256:00");

	write_spec(quickstart);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	assert_int_equal(operation_saved_check(&f->r, saved, "p.kiln", &err), -1);
	json_decref(saved);
	assert_non_null(strstr(err.msg, "p.kiln is stale: the spec kiln.yaml changed since the "
					"plan was made (plan: sha256:00, now: sha256:"));
	assert_string_equal(err.hint,
			    "make and review a new plan: kiln plan kiln.yaml --out p.kiln");
}

static int stop(struct op_run *r, void *arg)
{
	(void)r;
	(*(int *)arg)++;
	return 1;
}

static void test_a_destroy_stopped_under_the_lock_plans_nothing(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	struct op_apply_options ao = {.parallelism = 1};
	struct op_apply_outcome out;
	int asked = 0;

	write_spec(quickstart);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	assert_int_equal(operation_open_state(&f->r, true, "destroy", &err), 0);
	assert_non_null(f->r.ws);
	capture_start(f);
	assert_int_equal(operation_destroy(&f->r, &ao, stop, &asked, &out, &err), OP_STOPPED);
	assert_int_equal(capture_end(f), 0);
	assert_int_equal(asked, 1);
	assert_null(f->r.plan);
	assert_null(out.commit);
	operation_apply_outcome_release(&out);
}

/* r->loaded: the diagnostics' counts, and the hook's argument. */
static void on_loaded(void *arg, struct diags *d)
{
	struct fx *f = arg;

	f->d.errors += d->errors;
	f->d.warnings += d->warnings + 1; /* + 1: the hook ran */
}

static void test_a_plan_of_a_spec_is_one_operation_that_shows_its_diagnostics(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};

	write_spec(quickstart);
	f->r.plan_only = true;
	f->r.loaded = on_loaded;
	f->r.report_arg = f;
	capture_start(f);
	assert_int_equal(operation_plan_spec(&f->r, &defaults, "kiln.yaml", &err), 0);
	assert_int_equal(capture_end(f), 0);
	assert_int_equal(f->d.warnings, 1);
	assert_int_equal(f->d.errors, 0);
	/* The hooks and plan_only outlive operation_load's clearing of the run. */
	assert_true(f->r.plan_only);
	assert_ptr_equal(f->r.loaded, on_loaded);
	assert_int_equal(f->r.view.nchanges,
			 json_array_size(json_object_get(f->r.plan, "resource_changes")));
	assert_true(json_is_object(plan_kiln(f->r.plan, "cost")));
	assert_true(json_is_array(plan_kiln(f->r.plan, "findings")));
}

static void test_a_plan_of_an_invalid_spec_fails_with_no_error_of_its_own(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};

	write_spec("kiln: 1\ncluster: quickstart\nprovider: {name: sim}\nnetwork: {cidr: nope}\n");
	f->r.loaded = on_loaded;
	f->r.report_arg = f;
	assert_int_equal(operation_plan_spec(&f->r, &defaults, "kiln.yaml", &err), -1);
	assert_string_equal(err.msg, "");
	assert_true(f->d.errors > 0);
	assert_null(f->r.plan);
}

static void test_a_takeover_with_nothing_foreign_does_nothing(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	struct takeover_filter tf = {NULL, NULL, 0};
	struct op_takeover_result res;

	write_spec(quickstart);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	assert_int_equal(operation_open_state(&f->r, true, "state takeover", &err), 0);
	capture_start(f);
	assert_int_equal(operation_takeover(&f->r, &tf, &res, &err), 0);
	assert_int_equal(capture_end(f), 0);
	assert_true(res.nothing);
	assert_null(res.taken);
	assert_string_equal(res.commit, "");
	assert_false(res.take_failed || res.commit_failed);
	operation_takeover_result_release(&res);
}

static void test_a_takeover_of_an_address_nobody_holds_is_refused(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	const char *addrs[] = {"sim_bucket.nope"};
	struct takeover_filter tf = {NULL, addrs, 1};
	struct op_takeover_result res;

	write_spec(quickstart);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	assert_int_equal(operation_open_state(&f->r, true, "state takeover", &err), 0);
	assert_int_equal(operation_takeover(&f->r, &tf, &res, &err), 0);
	assert_false(res.nothing);
	assert_true(res.take_failed);
	assert_non_null(strstr(res.take_err.msg, "sim_bucket.nope"));
	/* Nothing was taken, so nothing is committed. */
	assert_false(res.commit_failed);
	assert_string_equal(res.commit, "");
	operation_takeover_result_release(&res);
}

static const char block_no_ttl[] =
    "kiln: 1\n"
    "cluster: block\n"
    "provider: {name: sim}\n"
    "network: {cidr: 10.42.0.0/16, fabric: efa}\n"
    "compute:\n"
    "  trainers:\n"
    "    gpu: H100:8\n"
    "    count: 2\n"
    "    capacity:\n"
    "      block: {duration: 24h, start: asap, max_upfront_usd: 6000}\n";

static void test_a_block_without_a_ttl_records_the_spec_reap_destroys_with(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	const json_t *w;

	write_spec(block_no_ttl);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	assert_int_equal(operation_open_state(&f->r, true, "apply", &err), 0);
	assert_int_equal(operation_expiry_prepare(&f->r, 0, &err), 0);
	/* No ttl: no expiry, but the block's end needs the spec to destroy with. */
	assert_null(json_object_get(f->r.state, "expiry"));
	w = json_object_get(f->r.state, "window");
	assert_string_equal(json_string_value(json_object_get(w, "spec")), "kiln.yaml");
	assert_string_equal(json_string_value(json_object_get(w, "spec_text")), block_no_ttl);
}

static void test_a_spec_without_a_block_records_no_window(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};

	write_spec(quickstart);
	assert_int_equal(operation_load(&f->r, &defaults, "kiln.yaml", &f->d, &err), 0);
	assert_int_equal(operation_open_state(&f->r, true, "apply", &err), 0);
	json_object_set_new(f->r.state, "window", json_pack("{s:s}", "spec", "old.yaml"));
	assert_int_equal(operation_expiry_prepare(&f->r, 0, &err), 0);
	assert_null(json_object_get(f->r.state, "window"));
}

#define op_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    op_test(test_an_invalid_spec_comes_back_as_diagnostics),
	    op_test(test_a_plan_of_a_spec_is_one_operation_that_shows_its_diagnostics),
	    op_test(test_a_plan_of_an_invalid_spec_fails_with_no_error_of_its_own),
	    op_test(test_a_takeover_with_nothing_foreign_does_nothing),
	    op_test(test_a_takeover_of_an_address_nobody_holds_is_refused),
	    op_test(test_a_first_plan_creates_everything_and_prints_nothing),
	    op_test(test_a_saved_plan_of_another_spec_is_refused_as_stale),
	    op_test(test_a_destroy_stopped_under_the_lock_plans_nothing),
	    op_test(test_a_block_without_a_ttl_records_the_spec_reap_destroys_with),
	    op_test(test_a_spec_without_a_block_records_no_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
