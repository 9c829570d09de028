/*
 * test_tags_aws.c - AWS's rule for a tag's characters (the generated table
 * of tag_chars_aws.c) and its lengths, counted in characters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "tags_aws.h"

static void test_letters_numbers_and_separators_of_any_script_are_allowed(void **state)
{
	(void)state;
	assert_true(tags_aws_char_ok('a'));
	assert_true(tags_aws_char_ok('Z'));
	assert_true(tags_aws_char_ok('7'));
	assert_true(tags_aws_char_ok(' '));
	assert_true(tags_aws_char_ok(0xE9));   /* é, Ll */
	assert_true(tags_aws_char_ok(0x65E5)); /* 日, Lo */
	assert_true(tags_aws_char_ok(0xBD));   /* ½, No */
	assert_true(tags_aws_char_ok(0x2162)); /* Ⅲ, Nl */
	assert_true(tags_aws_char_ok(0xA0));   /* no-break space, Zs */
	assert_true(tags_aws_char_ok(0x2028)); /* line separator, Zl */
}

static void test_the_eight_punctuation_marks_are_allowed_and_no_other(void **state)
{
	const char *ok = "_.:/=+-@";
	int c;

	(void)state;
	for (c = 0x21; c < 0x7f; c++) {
		if (isalnum(c))
			continue;
		if (strchr(ok, c))
			assert_true(tags_aws_char_ok((uint32_t)c));
		else if (!tags_aws_char_ok((uint32_t)c))
			continue;
		else
			fail_msg("'%c' is allowed", c);
	}
}

static void test_controls_markup_and_symbols_are_refused(void **state)
{
	(void)state;
	assert_false(tags_aws_char_ok('\n'));
	assert_false(tags_aws_char_ok('\t'));
	assert_false(tags_aws_char_ok('<'));
	assert_false(tags_aws_char_ok('|'));
	assert_false(tags_aws_char_ok('$'));
	assert_false(tags_aws_char_ok(0xAD));	 /* soft hyphen, Cf */
	assert_false(tags_aws_char_ok(0x1F600)); /* an emoji, So */
	assert_false(tags_aws_char_ok(0x10FFFF));
}

static void test_the_table_is_sorted_and_disjoint(void **state)
{
	size_t i;

	(void)state;
	assert_true(tags_aws_nchars > 100);
	for (i = 0; i < tags_aws_nchars; i++) {
		assert_true(tags_aws_chars[i].first <= tags_aws_chars[i].last);
		if (i)
			assert_true(tags_aws_chars[i - 1].last + 1 < tags_aws_chars[i].first);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_letters_numbers_and_separators_of_any_script_are_allowed),
	    cmocka_unit_test(test_the_eight_punctuation_marks_are_allowed_and_no_other),
	    cmocka_unit_test(test_controls_markup_and_symbols_are_refused),
	    cmocka_unit_test(test_the_table_is_sorted_and_disjoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
