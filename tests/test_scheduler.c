/*
 * test_scheduler.c - sinfo's output as kiln status counts it
 * (src/scheduler.c): outputs of Debian's Slurm 22.05 (sinfo --noheader
 * --format='%R %D %T', as tests/e2e/slurm.sh runs it against the real
 * slurmctld), and hostile ones, refused with the line that is wrong. The
 * ssh round trip runs against a real sshd and slurmctld in tests/e2e/slurm.sh.
 */
#include "testutil.h"

#include "scheduler.h"
#include "strbuf.h"

static json_t *parse(const char *text, struct kiln_error *err)
{
	return sched_parse_sinfo(text, strlen(text), err);
}

/* The partition's counts as "joined idle allocated down other". */
static void counts_are(const json_t *out, const char *part, const char *want)
{
	const json_t *p = json_object_get(out, part);
	char got[128];

	assert_non_null(p);
	snprintf(got, sizeof(got),
		 "%" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT
		 " %" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT,
		 json_integer_value(json_object_get(p, "joined")),
		 json_integer_value(json_object_get(p, "idle")),
		 json_integer_value(json_object_get(p, "allocated")),
		 json_integer_value(json_object_get(p, "down")),
		 json_integer_value(json_object_get(p, "other")));
	assert_string_equal(got, want);
}

static void refused(const char *text, const char *want)
{
	struct kiln_error err = {0};
	json_t *out = parse(text, &err);

	assert_null(out);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, "run sinfo --noheader --format='%R %D %T' on the controller "
				      "(kiln ssh) to see what it answers");
}

static void test_two_idle_dynamic_nodes_have_joined(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("trainers 2 idle\n", &err);

	(void)unused;
	assert_non_null(out);
	assert_int_equal(json_object_size(out), 1);
	counts_are(out, "trainers", "2 2 0 0 0");
	json_decref(out);
}

static void test_states_of_one_partition_add_up(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("trainers 1 allocated\n"
			    "trainers 1 mixed\n"
			    "trainers 3 idle\n"
			    "trainers 1 down*\n"
			    "trainers 1 idle*\n"
			    "trainers 2 drained\n"
			    "trainers 1 reserved\n"
			    "login 1 completing\n",
			    &err);

	(void)unused;
	assert_non_null(out);
	/* Not responding ('*') is down whatever the state; reserved is other. */
	counts_are(out, "trainers", "10 3 2 4 1");
	counts_are(out, "login", "1 0 1 0 0");
	json_decref(out);
}

static void test_power_flags_and_combined_states_are_read(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("gpu 4 idle~\ngpu 2 mixed+drain\ngpu 1 allocated#\n", &err);

	(void)unused;
	assert_non_null(out);
	counts_are(out, "gpu", "7 4 1 2 0");
	json_decref(out);
}

static void test_no_partition_at_all_is_an_empty_answer(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("", &err);

	(void)unused;
	assert_non_null(out);
	assert_int_equal(json_object_size(out), 0);
	json_decref(out);
}

static void test_a_line_that_is_not_three_fields_is_refused(void **unused)
{
	(void)unused;
	refused("trainers 2 idle\ntrainers 2\n", "sinfo's line 2 is not 'PARTITION NODES STATE'");
	refused("trainers 2 idle extra\n", "sinfo's line 1 is not 'PARTITION NODES STATE'");
	refused("sinfo: error: Unable to contact slurm controller (connect failure)\n",
		"sinfo's line 1 is not 'PARTITION NODES STATE'");
}

static void test_hostile_names_counts_and_states_are_refused(void **unused)
{
	char big[200];

	(void)unused;
	refused("tr;ainers 2 idle\n", "sinfo's line 1 is not 'PARTITION NODES STATE'");
	refused("trainers -2 idle\n", "sinfo's line 1 is not 'PARTITION NODES STATE'");
	refused("trainers 2 IDLE\n", "sinfo's line 1 is not 'PARTITION NODES STATE'");
	refused("trainers 2 idle\x1b[31m\n", "sinfo's line 1 is not 'PARTITION NODES STATE'");
	refused("trainers 99999999999 idle\n",
		"sinfo's line 1 counts 99999999999 nodes, more than 1000000");
	memset(big, 'a', sizeof(big));
	memcpy(big + 150, " 1 idle\n", 9);
	refused(big, "sinfo's line 1 is not 'PARTITION NODES STATE'");
}

static void test_output_past_the_bounds_is_refused(void **unused)
{
	struct kiln_error err = {0};
	size_t n = 5000, i;
	struct strbuf sb = {0};
	char *huge;

	(void)unused;
	for (i = 0; i < n; i++)
		sb_add(&sb, "p 1 idle\n", 9);
	refused(sb.buf, "sinfo wrote more than 4096 lines");
	sb_release(&sb);
	huge = xcalloc(SCHED_OUTPUT_MAX + 2, 1);
	memset(huge, '\n', SCHED_OUTPUT_MAX + 1);
	assert_null(sched_parse_sinfo(huge, SCHED_OUTPUT_MAX + 1, &err));
	assert_string_equal(err.msg, "sinfo wrote 65537 bytes, more than the 65536 kiln reads");
	free(huge);
}

static void test_blank_lines_and_crlf_are_tolerated(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("\ntrainers 2 idle\r\n\n", &err);

	(void)unused;
	assert_non_null(out);
	counts_are(out, "trainers", "2 2 0 0 0");
	json_decref(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_idle_dynamic_nodes_have_joined),
	    cmocka_unit_test(test_states_of_one_partition_add_up),
	    cmocka_unit_test(test_power_flags_and_combined_states_are_read),
	    cmocka_unit_test(test_no_partition_at_all_is_an_empty_answer),
	    cmocka_unit_test(test_a_line_that_is_not_three_fields_is_refused),
	    cmocka_unit_test(test_hostile_names_counts_and_states_are_refused),
	    cmocka_unit_test(test_output_past_the_bounds_is_refused),
	    cmocka_unit_test(test_blank_lines_and_crlf_are_tolerated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
