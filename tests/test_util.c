/*
 * test_util.c - durations, CIDRs, edit distance, UTF-8, strbuf, file reading
 * and size formatting: the pure helpers in util.c.
 */
#include "testutil.h"

#include <errno.h>
#include <unistd.h>

/* Durations. */

static int64_t duration_ok(const char *s)
{
	int64_t v = -1;

	assert_int_equal(timefmt_duration_parse(s, &v), 0);
	return v;
}

static void test_duration_parses_seconds(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("45s"), 45);
}

static void test_duration_parses_minutes(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("90m"), 90 * 60);
}

static void test_duration_parses_hours(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("72h"), 72 * 3600);
}

static void test_duration_parses_days(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("30d"), 30 * 86400);
}

static void test_duration_adds_groups_of_units(void **state)
{
	(void)state;
	assert_int_equal(duration_ok("1h30m"), 5400);
}

static void test_duration_leaves_output_alone_when_malformed(void **state)
{
	int64_t v = 1234;

	(void)state;
	assert_int_equal(timefmt_duration_parse("5x", &v), -1);
	assert_int_equal(v, 1234);
}

static void test_duration_rejects_empty_string(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("", &v), -1);
}

static void test_duration_rejects_missing_unit(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("5", &v), -1);
}

static void test_duration_rejects_missing_number(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("h", &v), -1);
}

static void test_duration_rejects_unknown_unit(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("5x", &v), -1);
}

static void test_duration_rejects_negative(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("-5m", &v), -1);
}

static void test_duration_rejects_fraction(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("1.5h", &v), -1);
}

static void test_duration_rejects_overflowing_number(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("99999999999d", &v), -1);
}

static void test_duration_rejects_more_than_a_hundred_years(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("36500d", &v), 0);
	assert_int_equal(timefmt_duration_parse("36501d", &v), -1);
}

static void test_duration_rejects_sum_above_a_hundred_years(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("36500d1s", &v), -1);
}

static void test_duration_rejects_leading_whitespace(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse(" 5m", &v), -1);
}

static void test_duration_rejects_trailing_whitespace(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("5m ", &v), -1);
}

static void test_duration_rejects_space_between_groups(void **state)
{
	int64_t v;

	(void)state;
	assert_int_equal(timefmt_duration_parse("1h 30m", &v), -1);
}

static void assert_duration_formats(int64_t seconds, const char *want)
{
	char *s = timefmt_duration_format(seconds);

	assert_string_equal(s, want);
	free(s);
}

static void test_duration_format_uses_the_largest_units(void **state)
{
	(void)state;
	assert_duration_formats(5400, "1h30m");
	assert_duration_formats(86400 + 1, "1d1s");
	assert_duration_formats(45, "45s");
}

static void test_duration_format_writes_zero_as_0s(void **state)
{
	(void)state;
	assert_duration_formats(0, "0s");
}

static void test_duration_format_round_trips_through_parse(void **state)
{
	static const int64_t values[] = {1,	59,    60,	     61,
					 3599,	3600,  5400,	     86399,
					 86400, 90061, 30LL * 86400, 100LL * 365 * 86400};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(values); i++) {
		char *s = timefmt_duration_format(values[i]);
		int64_t back = -1;

		assert_int_equal(timefmt_duration_parse(s, &back), 0);
		assert_int_equal(back, values[i]);
		free(s);
	}
}

/* CIDRs. */

static void test_cidr_parses_network_and_prefix(void **state)
{
	uint32_t addr = 0;
	int prefix = -1;
	bool host = true;

	(void)state;
	assert_int_equal(cidr_parse("10.42.0.0/16", &addr, &prefix, &host), 0);
	assert_int_equal(addr, 0x0a2a0000u);
	assert_int_equal(prefix, 16);
	assert_false(host);
}

static void test_cidr_accepts_prefix_0_and_32(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("0.0.0.0/0", &addr, &prefix, &host), 0);
	assert_int_equal(prefix, 0);
	assert_false(host);
	assert_int_equal(cidr_parse("255.255.255.255/32", &addr, &prefix, &host), 0);
	assert_int_equal(addr, 0xffffffffu);
	assert_int_equal(prefix, 32);
	assert_false(host);
}

static void test_cidr_rejects_prefix_above_32(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("1.2.3.4/33", &addr, &prefix, &host), -1);
}

static void test_cidr_flags_host_bits_and_clears_them(void **state)
{
	uint32_t addr;
	int prefix;
	bool host = false;

	(void)state;
	assert_int_equal(cidr_parse("10.42.1.7/16", &addr, &prefix, &host), 0);
	assert_true(host);
	assert_int_equal(addr, 0x0a2a0000u);
	assert_int_equal(prefix, 16);
}

static void test_cidr_with_prefix_0_flags_any_address_as_host_bits(void **state)
{
	uint32_t addr;
	int prefix;
	bool host = false;

	(void)state;
	assert_int_equal(cidr_parse("1.0.0.0/0", &addr, &prefix, &host), 0);
	assert_true(host);
	assert_int_equal(addr, 0);
}

static void test_cidr_rejects_leading_zero_octet(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("010.0.0.0/8", &addr, &prefix, &host), -1);
}

static void test_cidr_rejects_leading_zero_prefix(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("10.0.0.0/08", &addr, &prefix, &host), -1);
}

static void test_cidr_rejects_three_octets(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("1.2.3/8", &addr, &prefix, &host), -1);
}

static void test_cidr_rejects_octet_above_255(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("10.256.0.0/16", &addr, &prefix, &host), -1);
}

static void test_cidr_rejects_missing_prefix(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("1.2.3.4", &addr, &prefix, &host), -1);
	assert_int_equal(cidr_parse("1.2.3.4/", &addr, &prefix, &host), -1);
}

static void test_cidr_rejects_trailing_junk(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("10.0.0.0/16x", &addr, &prefix, &host), -1);
	assert_int_equal(cidr_parse("10.0.0.0/16 ", &addr, &prefix, &host), -1);
}

static void test_cidr_rejects_five_octets(void **state)
{
	uint32_t addr;
	int prefix;
	bool host;

	(void)state;
	assert_int_equal(cidr_parse("10.0.0.0.0/16", &addr, &prefix, &host), -1);
}

static void test_cidr_format_writes_dotted_quad_and_prefix(void **state)
{
	char *s = cidr_format(0x0a2a0000u, 16);

	(void)state;
	assert_string_equal(s, "10.42.0.0/16");
	free(s);
}

static void test_cidr_format_clears_host_bits(void **state)
{
	char *s = cidr_format(0xc0a80105u, 24);

	(void)state;
	assert_string_equal(s, "192.168.1.0/24");
	free(s);
}

static void test_cidr_format_handles_prefix_0_and_32(void **state)
{
	char *zero = cidr_format(0xffffffffu, 0);
	char *all = cidr_format(0xffffffffu, 32);

	(void)state;
	assert_string_equal(zero, "0.0.0.0/0");
	assert_string_equal(all, "255.255.255.255/32");
	free(zero);
	free(all);
}

/* Edit distance and suggestions. */

static void test_edit_distance_of_equal_strings_is_zero(void **state)
{
	(void)state;
	assert_int_equal(str_edit_distance("compute", "compute"), 0);
}

static void test_edit_distance_counts_insertions_deletions_and_substitutions(void **state)
{
	(void)state;
	assert_int_equal(str_edit_distance("", "abc"), 3);
	assert_int_equal(str_edit_distance("abc", ""), 3);
	assert_int_equal(str_edit_distance("kitten", "sitting"), 3);
}

static void test_edit_distance_counts_a_transposition_as_one(void **state)
{
	(void)state;
	assert_int_equal(str_edit_distance("ab", "ba"), 1);
	assert_int_equal(str_edit_distance("cluster", "culster"), 1);
}

static void test_closest_finds_a_typo(void **state)
{
	static const char *const cands[] = {"cluster", "compute", "storage"};

	(void)state;
	assert_string_equal(str_closest("comptue", cands, ARRAY_SIZE(cands)), "compute");
}

static void test_closest_refuses_a_far_word(void **state)
{
	static const char *const cands[] = {"cluster", "compute", "storage"};

	(void)state;
	assert_null(str_closest("network", cands, ARRAY_SIZE(cands)));
}

static void test_closest_refuses_when_there_are_no_candidates(void **state)
{
	(void)state;
	assert_null(str_closest("compute", NULL, 0));
}

static void test_closest_allows_one_edit_in_a_short_word(void **state)
{
	static const char *const cands[] = {"ena", "efa"};

	(void)state;
	assert_string_equal(str_closest("efx", cands, ARRAY_SIZE(cands)), "efa");
}

static void test_closest_allows_at_most_a_third_of_the_word(void **state)
{
	static const char *const cands[] = {"versioning"};

	(void)state;
	/* Ten letters: three edits are still a typo, four are another word. */
	assert_string_equal(str_closest("vxxxioning", cands, 1), "versioning");
	assert_null(str_closest("vxxxxoning", cands, 1));
}

/* UTF-8. */

static size_t utf8_bad(const char *s)
{
	return str_utf8_invalid_offset((const unsigned char *)s, strlen(s));
}

static void test_utf8_accepts_ascii_and_multibyte(void **state)
{
	/* é (2 bytes), € (3 bytes), 𝄞 (4 bytes), U+10FFFF. */
	const char *s = "a\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e \xf4\x8f\xbf\xbf";

	(void)state;
	assert_int_equal(utf8_bad(s), strlen(s));
}

static void test_utf8_reports_a_sequence_truncated_at_the_end(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("ab\xe2\x82"), 2);
}

static void test_utf8_reports_a_sequence_cut_by_an_ascii_byte(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("ab\xe2\x82x"), 2);
}

static void test_utf8_reports_an_overlong_encoding(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("x\xc0\xaf"), 1);	    /* '/' in two bytes */
	assert_int_equal(utf8_bad("x\xe0\x80\xaf"), 1);	    /* '/' in three bytes */
	assert_int_equal(utf8_bad("x\xf0\x82\x82\xac"), 1); /* '€' in four bytes */
}

static void test_utf8_reports_a_surrogate(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("ok\xed\xa0\x80"), 2);
}

static void test_utf8_reports_a_code_point_above_10ffff(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("ok\xf4\x90\x80\x80"), 2);
}

static void test_utf8_reports_a_lone_continuation_byte(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("abc\x80"), 3);
}

static void test_utf8_reports_bytes_that_never_start_a_sequence(void **state)
{
	(void)state;
	assert_int_equal(utf8_bad("a\xff"), 1);
	assert_int_equal(utf8_bad("a\xf8\x88\x80\x80\x80"), 1);
}

static void test_utf8_reads_only_len_bytes(void **state)
{
	/* The invalid byte lies past len: the first three bytes are valid. */
	const unsigned char s[] = {'a', 0xc3, 0xa9, 0xff};

	(void)state;
	assert_int_equal(str_utf8_invalid_offset(s, 3), 3);
}

/* strbuf. */

static void test_strbuf_appends_bytes_strings_chars_and_formats(void **state)
{
	struct strbuf sb = {0};
	char *s;

	(void)state;
	sb_add(&sb, "abcdef", 3);
	sb_adds(&sb, "-");
	sb_addc(&sb, 'x');
	sb_addf(&sb, "%d/%s", 42, "y");
	assert_int_equal(sb.len, 9);
	s = sb_detach(&sb);
	assert_string_equal(s, "abc-x42/y");
	free(s);
}

static void test_strbuf_stays_nul_terminated_across_growth(void **state)
{
	struct strbuf sb = {0};
	size_t i;

	(void)state;
	for (i = 0; i < 1000; i++)
		sb_addc(&sb, (char)('a' + i % 26));
	assert_int_equal(sb.len, 1000);
	assert_int_equal(strlen(sb.buf), 1000);
	assert_int_equal(sb.buf[999], 'a' + 999 % 26);
	sb_release(&sb);
}

static void test_strbuf_detach_of_an_empty_buffer_is_an_empty_string(void **state)
{
	struct strbuf sb = {0};
	char *s;

	(void)state;
	s = sb_detach(&sb);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
}

static void test_strbuf_detach_leaves_the_buffer_empty_and_reusable(void **state)
{
	struct strbuf sb = {0};
	char *first, *second;

	(void)state;
	sb_adds(&sb, "one");
	first = sb_detach(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	sb_adds(&sb, "two");
	second = sb_detach(&sb);
	assert_string_equal(first, "one");
	assert_string_equal(second, "two");
	free(first);
	free(second);
}

static void test_strbuf_release_empties_the_buffer(void **state)
{
	struct strbuf sb = {0};

	(void)state;
	sb_adds(&sb, "text");
	sb_release(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.cap, 0);
}

static void test_strbuf_addf_formats_longer_than_any_small_buffer(void **state)
{
	struct strbuf sb = {0};
	char big[600];

	(void)state;
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	sb_addf(&sb, "<%s>", big);
	assert_int_equal(sb.len, sizeof(big) + 1);
	assert_int_equal(sb.buf[0], '<');
	assert_int_equal(sb.buf[sb.len - 1], '>');
	sb_release(&sb);
}

/* File reading. */

/* A temporary file holding n bytes of 'k'; the caller unlinks and frees the path. */
static char *temp_file_with(size_t n)
{
	char *path = xstrdup("/tmp/kiln-test-XXXXXX");
	int fd = mkstemp(path);
	char *data = xmalloc(n ? n : 1);
	size_t done = 0;

	assert_true(fd >= 0);
	memset(data, 'k', n);
	while (done < n) {
		ssize_t w = write(fd, data + done, n - done);

		assert_true(w > 0);
		done += (size_t)w;
	}
	close(fd);
	free(data);
	return path;
}

static void test_file_read_all_reads_a_file_at_the_limit(void **state)
{
	char *path = temp_file_with(100000);
	struct kiln_error err = {{0}};
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(util_file_read_all(path, 100000, &buf, &len, &err), 0);
	assert_int_equal(len, 100000);
	assert_int_equal(buf[99999], 'k');
	assert_int_equal(buf[100000], '\0');
	free(buf);
	unlink(path);
	free(path);
}

static void test_file_read_all_refuses_a_file_past_the_limit(void **state)
{
	char *path = temp_file_with(100001);
	struct kiln_error err = {{0}};
	char *buf = NULL, *want;
	size_t len = 0;

	(void)state;
	assert_int_equal(util_file_read_all(path, 100000, &buf, &len, &err), -2);
	assert_null(buf);
	want = xasprintf("%s is larger than 97.7 KiB, the most kiln reads", path);
	assert_string_equal(err.msg, want);
	free(want);
	unlink(path);
	free(path);
}

static void test_file_read_all_reads_an_empty_file(void **state)
{
	char *path = temp_file_with(0);
	struct kiln_error err = {{0}};
	char *buf = NULL;
	size_t len = 99;

	(void)state;
	assert_int_equal(util_file_read_all(path, 10, &buf, &len, &err), 0);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
	unlink(path);
	free(path);
}

static void test_file_read_all_names_a_missing_file_and_the_cause(void **state)
{
	struct kiln_error err = {{0}};
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(util_file_read_all("/nonexistent/kiln/spec.yaml", 10, &buf, &len, &err),
			 -1);
	assert_null(buf);
	assert_string_equal(err.msg,
			    "cannot read /nonexistent/kiln/spec.yaml: No such file or directory");
}

/* UUIDs. */

static void test_uuid_v4_is_lower_case_version_4_with_the_rfc_variant(void **state)
{
	char u[37];
	size_t i;

	(void)state;
	util_uuid_v4(u);
	assert_int_equal(strlen(u), 36);
	for (i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(u[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", u[i]));
	}
	assert_int_equal(u[14], '4');
	assert_non_null(strchr("89ab", u[19]));
}

static void test_uuid_v4_differs_between_calls(void **state)
{
	char a[37], b[37];

	(void)state;
	util_uuid_v4(a);
	util_uuid_v4(b);
	assert_string_not_equal(a, b);
}

/* Sizes. */

static void assert_size_formats(uint64_t bytes, const char *want)
{
	char *s = util_size_format(bytes);

	assert_string_equal(s, want);
	free(s);
}

static void test_size_format_writes_bytes_below_a_kib(void **state)
{
	(void)state;
	assert_size_formats(0, "0 B");
	assert_size_formats(1023, "1023 B");
}

static void test_size_format_writes_whole_units_without_decimals(void **state)
{
	(void)state;
	assert_size_formats(1024, "1 KiB");
	assert_size_formats(1024 * 1024, "1 MiB");
	assert_size_formats(3ULL << 30, "3 GiB");
}

static void test_size_format_writes_one_decimal_otherwise(void **state)
{
	(void)state;
	assert_size_formats(1536, "1.5 KiB");
	assert_size_formats(3 * 1024 * 1024 / 2, "1.5 MiB");
}

static void test_size_format_stops_at_tib(void **state)
{
	(void)state;
	assert_size_formats(2048ULL << 40, "2048 TiB");
}

static void assert_for_terminal(const char *in, size_t max, const char *want)
{
	char *got = str_for_terminal(in, max);

	assert_string_equal(got, want);
	free(got);
}

static void test_str_for_terminal_turns_every_control_into_a_question_mark(void **state)
{
	(void)state;
	/* C0 (ESC, BEL, CR, LF, tab), DEL, raw C1 bytes and C1 in UTF-8. */
	assert_for_terminal("a\033[2Jb\007c\rd\ne\tf\177g", 0, "a?[2Jb?c?d?e?f?g");
	assert_for_terminal("x\x9by", 0, "x?y");
	assert_for_terminal("x\xc2\x9b[31my\xc2\x85", 0, "x?[31my?");
	/* Bidi controls: U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C. */
	assert_for_terminal("team\xe2\x80\xae" "evil", 0, "team?evil");
	assert_for_terminal("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0, "????");
	assert_for_terminal("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", 0, "????");
	assert_for_terminal("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", 0, "???");
	/* Bytes that are not UTF-8: a stray continuation, an overlong form, a cut sequence. */
	assert_for_terminal("a\x80" "b\xc0\xafz\xe2\x80", 0, "a?b??z??");
	assert_for_terminal(NULL, 0, "");
}

static void test_str_for_terminal_keeps_text_and_cuts_at_a_character(void **state)
{
	(void)state;
	assert_for_terminal("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5 (ok)", 0,
			    "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5 (ok)");
	assert_for_terminal("abcdef", 3, "abc...");
	assert_for_terminal("ab\xc3\xa9z", 3, "ab\xc3\xa9...");
	assert_for_terminal("abc", 3, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_duration_parses_seconds),
	    cmocka_unit_test(test_duration_parses_minutes),
	    cmocka_unit_test(test_duration_parses_hours),
	    cmocka_unit_test(test_duration_parses_days),
	    cmocka_unit_test(test_duration_adds_groups_of_units),
	    cmocka_unit_test(test_duration_leaves_output_alone_when_malformed),
	    cmocka_unit_test(test_duration_rejects_empty_string),
	    cmocka_unit_test(test_duration_rejects_missing_unit),
	    cmocka_unit_test(test_duration_rejects_missing_number),
	    cmocka_unit_test(test_duration_rejects_unknown_unit),
	    cmocka_unit_test(test_duration_rejects_negative),
	    cmocka_unit_test(test_duration_rejects_fraction),
	    cmocka_unit_test(test_duration_rejects_overflowing_number),
	    cmocka_unit_test(test_duration_rejects_more_than_a_hundred_years),
	    cmocka_unit_test(test_duration_rejects_sum_above_a_hundred_years),
	    cmocka_unit_test(test_duration_rejects_leading_whitespace),
	    cmocka_unit_test(test_duration_rejects_trailing_whitespace),
	    cmocka_unit_test(test_duration_rejects_space_between_groups),
	    cmocka_unit_test(test_duration_format_uses_the_largest_units),
	    cmocka_unit_test(test_duration_format_writes_zero_as_0s),
	    cmocka_unit_test(test_duration_format_round_trips_through_parse),
	    cmocka_unit_test(test_cidr_parses_network_and_prefix),
	    cmocka_unit_test(test_cidr_accepts_prefix_0_and_32),
	    cmocka_unit_test(test_cidr_rejects_prefix_above_32),
	    cmocka_unit_test(test_cidr_flags_host_bits_and_clears_them),
	    cmocka_unit_test(test_cidr_with_prefix_0_flags_any_address_as_host_bits),
	    cmocka_unit_test(test_cidr_rejects_leading_zero_octet),
	    cmocka_unit_test(test_cidr_rejects_leading_zero_prefix),
	    cmocka_unit_test(test_cidr_rejects_three_octets),
	    cmocka_unit_test(test_cidr_rejects_octet_above_255),
	    cmocka_unit_test(test_cidr_rejects_missing_prefix),
	    cmocka_unit_test(test_cidr_rejects_trailing_junk),
	    cmocka_unit_test(test_cidr_rejects_five_octets),
	    cmocka_unit_test(test_cidr_format_writes_dotted_quad_and_prefix),
	    cmocka_unit_test(test_cidr_format_clears_host_bits),
	    cmocka_unit_test(test_cidr_format_handles_prefix_0_and_32),
	    cmocka_unit_test(test_edit_distance_of_equal_strings_is_zero),
	    cmocka_unit_test(test_edit_distance_counts_insertions_deletions_and_substitutions),
	    cmocka_unit_test(test_edit_distance_counts_a_transposition_as_one),
	    cmocka_unit_test(test_closest_finds_a_typo),
	    cmocka_unit_test(test_closest_refuses_a_far_word),
	    cmocka_unit_test(test_closest_refuses_when_there_are_no_candidates),
	    cmocka_unit_test(test_closest_allows_one_edit_in_a_short_word),
	    cmocka_unit_test(test_closest_allows_at_most_a_third_of_the_word),
	    cmocka_unit_test(test_utf8_accepts_ascii_and_multibyte),
	    cmocka_unit_test(test_str_for_terminal_turns_every_control_into_a_question_mark),
	    cmocka_unit_test(test_str_for_terminal_keeps_text_and_cuts_at_a_character),
	    cmocka_unit_test(test_utf8_reports_a_sequence_truncated_at_the_end),
	    cmocka_unit_test(test_utf8_reports_a_sequence_cut_by_an_ascii_byte),
	    cmocka_unit_test(test_utf8_reports_an_overlong_encoding),
	    cmocka_unit_test(test_utf8_reports_a_surrogate),
	    cmocka_unit_test(test_utf8_reports_a_code_point_above_10ffff),
	    cmocka_unit_test(test_utf8_reports_a_lone_continuation_byte),
	    cmocka_unit_test(test_utf8_reports_bytes_that_never_start_a_sequence),
	    cmocka_unit_test(test_utf8_reads_only_len_bytes),
	    cmocka_unit_test(test_strbuf_appends_bytes_strings_chars_and_formats),
	    cmocka_unit_test(test_strbuf_stays_nul_terminated_across_growth),
	    cmocka_unit_test(test_strbuf_detach_of_an_empty_buffer_is_an_empty_string),
	    cmocka_unit_test(test_strbuf_detach_leaves_the_buffer_empty_and_reusable),
	    cmocka_unit_test(test_strbuf_release_empties_the_buffer),
	    cmocka_unit_test(test_strbuf_addf_formats_longer_than_any_small_buffer),
	    cmocka_unit_test(test_file_read_all_reads_a_file_at_the_limit),
	    cmocka_unit_test(test_file_read_all_refuses_a_file_past_the_limit),
	    cmocka_unit_test(test_file_read_all_reads_an_empty_file),
	    cmocka_unit_test(test_file_read_all_names_a_missing_file_and_the_cause),
	    cmocka_unit_test(test_uuid_v4_is_lower_case_version_4_with_the_rfc_variant),
	    cmocka_unit_test(test_uuid_v4_differs_between_calls),
	    cmocka_unit_test(test_size_format_writes_bytes_below_a_kib),
	    cmocka_unit_test(test_size_format_writes_whole_units_without_decimals),
	    cmocka_unit_test(test_size_format_writes_one_decimal_otherwise),
	    cmocka_unit_test(test_size_format_stops_at_tib),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
