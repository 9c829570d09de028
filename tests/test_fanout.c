/*
 * test_fanout.c - one command on many nodes (src/fanout.c): every node's
 * lines handed over whole and prefixed by nothing of fanout's own, exit
 * statuses as a shell gives them, durations, output kept to its limit,
 * and kept output made valid UTF-8 for JSON.
 */
#include "testutil.h"

#include <string.h>
#include <unistd.h>

#include "fanout.h"

static void run_sh(void *ctx, char **argv)
{
	(void)ctx;
	execv("/bin/sh", argv);
}

struct lines {
	struct strbuf out, err;
};

static void collect(void *ctx, const struct fanout_node *n, int stream, const char *text,
		    size_t len)
{
	struct lines *l = ctx;

	sb_addf(stream ? &l->err : &l->out, "%s|%.*s\n", n->name, (int)len, text);
}

static char *sh_argv[3][4] = {
    {"sh", "-c", "echo one; echo two >&2; printf 'no newline'", NULL},
    {"sh", "-c", "echo x; exit 3", NULL},
    {"sh", "-c", "kill -TERM $$", NULL},
};

static void test_fanout_hands_over_each_line_and_the_shells_exit_status(void **state)
{
	struct fanout_node nodes[3] = {
	    {.name = "a", .argv = sh_argv[0]},
	    {.name = "b", .argv = sh_argv[1]},
	    {.name = "c", .argv = sh_argv[2]},
	};
	struct lines l = {0};
	struct fanout_ui ui = {.line = collect, .exec = run_sh, .ctx = &l};

	(void)state;
	fanout_run(nodes, 3, 1, &ui);
	assert_string_equal(l.out.buf, "a|one\na|no newline\nb|x\n");
	assert_string_equal(l.err.buf, "a|two\n");
	assert_int_equal(nodes[0].code, 0);
	assert_int_equal(nodes[1].code, 3);
	assert_int_equal(nodes[2].code, 128 + 15);
	assert_true(nodes[0].seconds >= 0 && nodes[0].seconds < 60);
	fanout_release(nodes, 3);
	sb_release(&l.out);
	sb_release(&l.err);
}

static void test_fanout_skips_a_node_without_argv_and_keeps_its_code(void **state)
{
	struct fanout_node nodes[2] = {
	    {.name = "gone", .argv = NULL, .code = 255},
	    {.name = "b", .argv = sh_argv[1]},
	};
	struct lines l = {0};
	struct fanout_ui ui = {.line = collect, .exec = run_sh, .ctx = &l};

	(void)state;
	fanout_run(nodes, 2, 4, &ui);
	assert_int_equal(nodes[0].code, 255);
	assert_true(nodes[0].seconds == 0);
	assert_int_equal(nodes[1].code, 3);
	assert_string_equal(l.out.buf, "b|x\n");
	fanout_release(nodes, 2);
	sb_release(&l.out);
}

static void test_fanout_keeps_output_to_its_limit_and_says_it_was_cut(void **state)
{
	char *big[] = {"sh", "-c", "head -c 1100000 /dev/zero | tr '\\0' x; echo e >&2", NULL};
	struct fanout_node nodes[1] = {{.name = "a", .argv = big}};
	struct fanout_ui ui = {.exec = run_sh, .keep = true};

	(void)state;
	fanout_run(nodes, 1, 1, &ui);
	assert_int_equal(nodes[0].kept[0].len, FANOUT_KEEP_MAX);
	assert_true(nodes[0].truncated[0]);
	assert_false(nodes[0].truncated[1]);
	assert_string_equal(nodes[0].kept[1].buf, "e\n");
	fanout_release(nodes, 1);
}

static void test_fanout_text_replaces_invalid_utf8_and_nul(void **state)
{
	struct strbuf sb = {0};
	char *t;

	(void)state;
	sb_add(&sb, "ok \xc3\xa9 \xff\x00z", 9);
	t = fanout_text(&sb);
	assert_string_equal(t, "ok \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbdz");
	free(t);
	sb_release(&sb);
	t = fanout_text(&sb);
	assert_string_equal(t, "");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fanout_hands_over_each_line_and_the_shells_exit_status),
	    cmocka_unit_test(test_fanout_skips_a_node_without_argv_and_keeps_its_code),
	    cmocka_unit_test(test_fanout_keeps_output_to_its_limit_and_says_it_was_cut),
	    cmocka_unit_test(test_fanout_text_replaces_invalid_utf8_and_nul),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
