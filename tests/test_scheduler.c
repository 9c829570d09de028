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

#include <signal.h>
#include <sys/wait.h>

static json_t *parse(const char *text, struct kiln_error *err)
{
	return scheduler_parse_sinfo(text, strlen(text), err);
}

/* The partition's counts as "joined idle allocated down other not_responding". */
static void counts_are(const json_t *out, const char *part, const char *want)
{
	const json_t *p = json_object_get(out, part);
	char got[128];

	assert_non_null(p);
	snprintf(got, sizeof(got),
		 "%" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT
		 " %" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT " %" JSON_INTEGER_FORMAT,
		 json_integer_value(json_object_get(p, "joined")),
		 json_integer_value(json_object_get(p, "idle")),
		 json_integer_value(json_object_get(p, "allocated")),
		 json_integer_value(json_object_get(p, "down")),
		 json_integer_value(json_object_get(p, "other")),
		 json_integer_value(json_object_get(p, "not_responding")));
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
	counts_are(out, "trainers", "2 2 0 0 0 0");
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
	/* Not responding ('*') has not joined, whatever the state; reserved is other. */
	counts_are(out, "trainers", "8 3 2 2 1 2");
	counts_are(out, "login", "1 0 1 0 0 0");
	json_decref(out);
}

static void test_power_flags_and_combined_states_are_read(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("gpu 4 idle~\ngpu 2 mixed+drain\ngpu 1 allocated#\n", &err);

	(void)unused;
	assert_non_null(out);
	counts_are(out, "gpu", "7 4 1 2 0 0");
	json_decref(out);
}

/*
 * After a shrink from 16 to 8, the 8 dynamic nodes that left stay listed,
 * down and not responding ('*'), until they are deleted: 8 joined, not 16.
 */
static void test_nodes_that_left_in_a_shrink_have_not_joined(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("trainers 8 idle\ntrainers 8 down*\n", &err);

	(void)unused;
	assert_non_null(out);
	counts_are(out, "trainers", "8 8 0 0 0 8");
	json_decref(out);
}

/* sh -c SCRIPT run within deadline_ms; r's verdict in err. */
static void run_sh(char *script, int deadline_ms, struct sched_run *r, struct kiln_error *err)
{
	char *av[] = {"sh", "-c", script, NULL};
	struct kiln_error none = {0};

	assert_int_equal(scheduler_run_bounded(av, deadline_ms, r, &none), 0);
	assert_int_equal(scheduler_run_verdict(r, "ctl-0", "ctl", err), -1);
	sb_release(&r->out);
	sb_release(&r->errs);
}

static void test_a_command_that_never_ends_is_killed_at_the_deadline(void **unused)
{
	struct sched_run r = {0};
	struct kiln_error err = {0};

	(void)unused;
	run_sh("echo started; sleep 30", 300, &r, &err);
	assert_true(r.too_long);
	assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGTERM);
	assert_string_equal(err.msg, "sinfo on ctl-0 did not answer within 300 ms");
	assert_string_equal(err.hint,
			    "check that slurmctld runs there (kiln ssh, then scontrol ping)");
}

static void test_one_that_closes_its_streams_and_ignores_sigterm_is_killed(void **unused)
{
	struct sched_run r = {0};
	struct kiln_error err = {0};

	(void)unused;
	/* No end of file to wait for, and SIGTERM ignored: SIGKILL a second later. */
	run_sh("trap '' TERM; exec >/dev/null 2>&1; sleep 30", 300, &r, &err);
	assert_true(r.too_long);
	assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
	assert_string_equal(err.msg, "sinfo on ctl-0 did not answer within 300 ms");
}

static void test_output_over_64_kib_is_refused_and_the_command_killed(void **unused)
{
	struct sched_run r = {0};
	struct kiln_error err = {0};

	(void)unused;
	/*
	 * More than 64 KiB, then still running: killed, whatever the machine's
	 * load (a bare `yes` may die of SIGPIPE, and its shell exit, before the
	 * kill: a race this test once lost in CI).
	 */
	run_sh("yes sinfo | head -c 70000; sleep 30", 10000, &r, &err);
	assert_true(r.too_big);
	assert_false(r.too_long);
	assert_true(WIFSIGNALED(r.status));
	assert_string_equal(err.msg, "sinfo on ctl-0 wrote more than 65536 bytes");
}

static void test_a_signal_death_is_named(void **unused)
{
	struct sched_run r = {0};
	struct kiln_error err = {0};

	(void)unused;
	run_sh("kill -SEGV $$", 10000, &r, &err);
	assert_false(r.too_long);
	assert_string_equal(err.msg, "ssh to ctl-0 was killed by signal 11 (Segmentation fault)");
	assert_string_equal(err.hint, "kiln ssh ctl shows what ssh does; --no-ssh skips asking");
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
	assert_null(scheduler_parse_sinfo(huge, SCHED_OUTPUT_MAX + 1, &err));
	assert_string_equal(err.msg, "sinfo wrote 65537 bytes, more than the 65536 kiln reads");
	free(huge);
}

static void test_blank_lines_and_crlf_are_tolerated(void **unused)
{
	struct kiln_error err = {0};
	json_t *out = parse("\ntrainers 2 idle\r\n\n", &err);

	(void)unused;
	assert_non_null(out);
	counts_are(out, "trainers", "2 2 0 0 0 0");
	json_decref(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_idle_dynamic_nodes_have_joined),
	    cmocka_unit_test(test_states_of_one_partition_add_up),
	    cmocka_unit_test(test_power_flags_and_combined_states_are_read),
	    cmocka_unit_test(test_nodes_that_left_in_a_shrink_have_not_joined),
	    cmocka_unit_test(test_no_partition_at_all_is_an_empty_answer),
	    cmocka_unit_test(test_a_command_that_never_ends_is_killed_at_the_deadline),
	    cmocka_unit_test(test_one_that_closes_its_streams_and_ignores_sigterm_is_killed),
	    cmocka_unit_test(test_output_over_64_kib_is_refused_and_the_command_killed),
	    cmocka_unit_test(test_a_signal_death_is_named),
	    cmocka_unit_test(test_a_line_that_is_not_three_fields_is_refused),
	    cmocka_unit_test(test_hostile_names_counts_and_states_are_refused),
	    cmocka_unit_test(test_output_past_the_bounds_is_refused),
	    cmocka_unit_test(test_blank_lines_and_crlf_are_tolerated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
