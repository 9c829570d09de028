/*
 * test_report_actual.c - kiln report --actual's arithmetic: the ledger's
 * estimate spread over UTC days, billed rows set against it by day and by
 * kind with the services named, the variance billed minus estimate, an
 * unknown split left unknown, untagged costs kept apart, and the window.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "report_actual.h"

static json_t *report_one(const char *start, const char *end, double compute, double storage)
{
	return json_pack("{s:[{s:s, s:s, s:[{s:s, s:s, s:f, s:f, s:f}]}]}", "lifetimes", "cluster",
			 "c1", "start", start, "stretches", "start", start, "end", end,
			 "usd_per_hour", compute + storage, "compute_usd_per_hour", compute,
			 "storage_usd_per_hour", storage);
}

static double num(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void a_stretch_over_midnight_is_split_by_the_hours_in_each_day(void **state)
{
	json_t *r = report_one("2026-12-01T18:00:00Z", "2026-12-02T03:00:00Z", 10.0, 2.0);
	json_t *e = report_actual_estimate(r);
	const json_t *d1 = json_object_get(json_object_get(e, "c1"), "2026-12-01");
	const json_t *d2 = json_object_get(json_object_get(e, "c1"), "2026-12-02");

	(void)state;
	assert_non_null(d1);
	assert_non_null(d2);
	assert_true(fabs(num(d1, "total") - 72.0) < 1e-9);   /* 6 h at $12 */
	assert_true(fabs(num(d1, "compute") - 60.0) < 1e-9); /* 6 h at $10 */
	assert_true(fabs(num(d2, "total") - 36.0) < 1e-9);   /* 3 h at $12 */
	assert_true(fabs(num(d2, "storage") - 6.0) < 1e-9);  /* 3 h at $2 */
	json_decref(e);
	json_decref(r);
}

static json_t *row(const char *cluster, const char *date, const char *service, const char *kind,
		   double amount)
{
	return json_pack("{s:s?, s:s, s:s, s:s, s:f}", "cluster", cluster, "date", date, "service",
			 service, "kind", kind, "amount", amount);
}

static void the_variance_is_billed_minus_estimate_by_day_and_kind_with_services(void **state)
{
	json_t *r = report_one("2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z", 10.0, 1.0);
	json_t *e = report_actual_estimate(r);
	json_t *rows = json_array(), *v;
	const json_t *day, *compute, *storage, *total;

	(void)state;
	json_array_append_new(rows, row("c1", "2026-12-01", "EC2", "compute", 250.0));
	json_array_append_new(rows, row("c1", "2026-12-01", "EBS", "storage", 20.0));
	json_array_append_new(rows, row("c1", "2026-12-01", "S3", "storage", 5.0));
	json_array_append_new(rows, row(NULL, "2026-12-01", "S3", "storage", 3.5));
	v = report_actual_variance(e, rows);
	assert_int_equal(json_array_size(json_object_get(v, "days")), 1);
	day = json_array_get(json_object_get(v, "days"), 0);
	assert_string_equal(json_string_value(json_object_get(day, "date")), "2026-12-01");
	assert_true(fabs(num(day, "estimate") - 264.0) < 1e-9);
	assert_true(fabs(num(day, "billed") - 275.0) < 1e-9);
	assert_true(fabs(num(day, "variance") - 11.0) < 1e-9);
	compute = json_array_get(json_object_get(day, "kinds"), 0);
	storage = json_array_get(json_object_get(day, "kinds"), 1);
	assert_string_equal(json_string_value(json_object_get(compute, "kind")), "compute");
	assert_true(fabs(num(compute, "variance") - 10.0) < 1e-9);
	assert_true(fabs(num(storage, "estimate") - 24.0) < 1e-9);
	assert_true(fabs(num(storage, "variance") - 1.0) < 1e-9);
	assert_true(fabs(num(json_object_get(storage, "services"), "EBS") - 20.0) < 1e-9);
	assert_true(fabs(num(json_object_get(storage, "services"), "S3") - 5.0) < 1e-9);
	assert_true(fabs(num(v, "untagged") - 3.5) < 1e-9);
	total = json_array_get(json_object_get(v, "clusters"), 0);
	assert_true(fabs(num(total, "variance") - 11.0) < 1e-9);
	json_decref(v);
	json_decref(rows);
	json_decref(e);
	json_decref(r);
}

static void a_day_billed_but_not_estimated_is_listed_with_a_zero_estimate(void **state)
{
	json_t *e = json_object(), *rows = json_array(), *v;
	const json_t *day;

	(void)state;
	json_array_append_new(rows, row("gone", "2026-11-30", "EC2", "compute", 7.0));
	v = report_actual_variance(e, rows);
	day = json_array_get(json_object_get(v, "days"), 0);
	assert_string_equal(json_string_value(json_object_get(day, "cluster")), "gone");
	assert_true(fabs(num(day, "estimate")) < 1e-9);
	assert_true(fabs(num(day, "variance") - 7.0) < 1e-9);
	json_decref(v);
	json_decref(rows);
	json_decref(e);
}

static void an_unknown_split_leaves_the_kinds_variance_unknown(void **state)
{
	json_t *r = json_pack("{s:[{s:s, s:s, s:[{s:s, s:s, s:f, s:n, s:n}]}]}", "lifetimes",
			      "cluster", "c1", "start", "2026-12-01T00:00:00Z", "stretches",
			      "start", "2026-12-01T00:00:00Z", "end", "2026-12-01T02:00:00Z",
			      "usd_per_hour", 5.0, "compute_usd_per_hour", "storage_usd_per_hour");
	json_t *e = report_actual_estimate(r), *rows = json_array(), *v;
	const json_t *day, *compute;

	(void)state;
	json_array_append_new(rows, row("c1", "2026-12-01", "EC2", "compute", 9.0));
	v = report_actual_variance(e, rows);
	day = json_array_get(json_object_get(v, "days"), 0);
	compute = json_array_get(json_object_get(day, "kinds"), 0);
	assert_true(fabs(num(day, "variance") + 1.0) < 1e-9);
	assert_true(json_is_null(json_object_get(compute, "estimate")));
	assert_true(json_is_null(json_object_get(compute, "variance")));
	json_decref(v);
	json_decref(rows);
	json_decref(e);
	json_decref(r);
}

static void the_window_runs_from_the_first_lifetime_to_the_day_after_now(void **state)
{
	json_t *r = report_one("2026-11-28T22:00:00Z", "2026-11-29T01:00:00Z", 1.0, 0.0);
	char first[11], last[11];

	(void)state;
	report_actual_window(r, 1796169600 /* 2026-12-02T00:00:00Z */ + 3600, first, last);
	assert_string_equal(first, "2026-11-28");
	assert_string_equal(last, "2026-12-03");
	json_decref(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_stretch_over_midnight_is_split_by_the_hours_in_each_day),
	    cmocka_unit_test(the_variance_is_billed_minus_estimate_by_day_and_kind_with_services),
	    cmocka_unit_test(a_day_billed_but_not_estimated_is_listed_with_a_zero_estimate),
	    cmocka_unit_test(an_unknown_split_leaves_the_kinds_variance_unknown),
	    cmocka_unit_test(the_window_runs_from_the_first_lifetime_to_the_day_after_now),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
