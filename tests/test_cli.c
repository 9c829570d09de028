/*
 * test_cli.c - the one spelling of an option across commands (src/cli.c):
 * another tool's spelling is answered with kiln's, only where the command
 * (or every command) takes kiln's.
 */
#include "testutil.h"

#include "cli.h"

enum { O_JSON = 1, O_AUTO, O_OUT };

static const struct cli_option apply_like[] = {
    {"json", 0, false, O_JSON, NULL, ""},
    {"auto-approve", 0, false, O_AUTO, NULL, ""},
};
static const struct cmd_info apply_info = {.name = "apply", .options = apply_like, .noptions = 2};

static const struct cli_option plan_like[] = {
    {"json", 0, false, O_JSON, NULL, ""},
    {"out", 'o', true, O_OUT, "FILE", ""},
};
static const struct cmd_info plan_info = {.name = "plan", .options = plan_like, .noptions = 2};

static const struct cmd_info bare_info = {.name = "schema"};

static void test_other_spelling_names_kilns_option_the_command_takes(void **state)
{
	(void)state;
	assert_string_equal(cli_other_spelling(&apply_info, "--yes"), "--auto-approve");
	assert_string_equal(cli_other_spelling(&apply_info, "-y"), "--auto-approve");
	assert_string_equal(cli_other_spelling(&apply_info, "--format"), "--json");
	assert_string_equal(cli_other_spelling(&apply_info, "--output"), "--json");
	assert_string_equal(cli_other_spelling(&plan_info, "--output"), "--out");
}

static void test_other_spelling_is_null_where_the_command_lacks_kilns_option(void **state)
{
	(void)state;
	assert_null(cli_other_spelling(&plan_info, "--yes"));
	assert_null(cli_other_spelling(&bare_info, "--format"));
	assert_null(cli_other_spelling(&apply_info, "--formt"));
}

static void test_other_spelling_of_a_global_option_holds_on_every_command(void **state)
{
	(void)state;
	assert_string_equal(cli_other_spelling(&bare_info, "--verbose"), "--log-level");
	assert_string_equal(cli_other_spelling(&bare_info, "--no-colour"), "--no-color");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_other_spelling_names_kilns_option_the_command_takes),
	    cmocka_unit_test(test_other_spelling_is_null_where_the_command_lacks_kilns_option),
	    cmocka_unit_test(test_other_spelling_of_a_global_option_holds_on_every_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
