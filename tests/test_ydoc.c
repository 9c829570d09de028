/*
 * test_ydoc.c - the YAML tree: positions, lookups, merge keys, aliases, and
 * the hostile inputs the builder must refuse with a positioned message.
 */
#include "testutil.h"

#include <time.h>

#include "ydoc.h"

/* Parse yaml that must be accepted without any diagnostic; returns its root. */
static const struct ynode *parse_ok(struct fx *f, const char *yaml)
{
	int ret = ydoc_parse(&f->doc, TEST_FILE, yaml, strlen(yaml), &f->d);

	if (ret != 0 || f->d.n != 0) {
		diags_dump(&f->d);
		fail_msg("ydoc_parse refused a valid document");
	}
	assert_non_null(f->doc);
	return ydoc_root(f->doc);
}

/* Parse yaml that must be refused; its diagnostics are left in f->d. */
static void parse_refused(struct fx *f, const char *yaml)
{
	f->doc = (struct ydoc *)1;
	assert_int_equal(ydoc_parse(&f->doc, TEST_FILE, yaml, strlen(yaml), &f->d), -1);
	assert_null(f->doc);
	assert_true(f->d.errors > 0);
}

/*
 * Parse yaml whatever the outcome: some problems (duplicate keys) are reported
 * while the builder keeps going, so one run shows them all.
 */
static void parse_any(struct fx *f, const char *yaml)
{
	ydoc_parse(&f->doc, TEST_FILE, yaml, strlen(yaml), &f->d);
	assert_true(f->d.errors > 0);
}

/* Positions. */

static void test_positions_of_top_level_keys_and_values_are_one_based(void **state)
{
	const struct ynode *root = parse_ok(*state, "kiln: 1\n"
						    "cluster:   demo\n");

	assert_int_equal(root->kind, YNODE_MAP);
	assert_int_equal(ydoc_key(root, "kiln")->line, 1);
	assert_int_equal(ydoc_key(root, "kiln")->col, 1);
	assert_int_equal(ydoc_get(root, "kiln")->col, 7);
	assert_int_equal(ydoc_key(root, "cluster")->line, 2);
	assert_int_equal(ydoc_get(root, "cluster")->line, 2);
	assert_int_equal(ydoc_get(root, "cluster")->col, 12);
}

static void test_positions_of_nested_nodes_count_indentation(void **state)
{
	const struct ynode *root = parse_ok(*state, "compute:\n"
						    "  trainers:\n"
						    "    gpu: H100:8\n"
						    "    zones: [a, b]\n");
	const struct ynode *trainers = ydoc_get(ydoc_get(root, "compute"), "trainers");
	const struct ynode *zones = ydoc_get(trainers, "zones");

	assert_int_equal(trainers->line, 3);
	assert_int_equal(trainers->col, 5);
	assert_int_equal(ydoc_key(trainers, "gpu")->line, 3);
	assert_int_equal(ydoc_key(trainers, "gpu")->col, 5);
	assert_int_equal(ydoc_get(trainers, "gpu")->col, 10);
	assert_int_equal(zones->kind, YNODE_SEQ);
	assert_int_equal(zones->line, 4);
	assert_int_equal(zones->col, 12);
	assert_int_equal(zones->vals[1]->line, 4);
	assert_int_equal(zones->vals[1]->col, 16);
}

static void test_positions_count_characters_not_bytes(void **state)
{
	/* "é" is two bytes but one column. */
	const struct ynode *root = parse_ok(*state, "tags: {é: x, k: v}\n");

	assert_int_equal(ydoc_key(ydoc_get(root, "tags"), "k")->col, 14);
}

/* Lookups. */

static void test_get_returns_the_value_and_key_returns_the_key(void **state)
{
	const struct ynode *root = parse_ok(*state, "a: 1\n"
						    "b: two\n");

	assert_string_equal(ydoc_get(root, "b")->value, "two");
	assert_int_equal(ydoc_get(root, "b")->len, 3);
	assert_string_equal(ydoc_key(root, "b")->value, "b");
	assert_int_equal(ydoc_key(root, "b")->line, 2);
}

static void test_get_and_key_return_null_for_a_missing_key(void **state)
{
	const struct ynode *root = parse_ok(*state, "a: 1\n");

	assert_null(ydoc_get(root, "b"));
	assert_null(ydoc_key(root, "b"));
}

static void test_get_returns_null_on_a_list_a_scalar_or_nothing(void **state)
{
	const struct ynode *root = parse_ok(*state, "l: [a]\n"
						    "s: a\n");

	assert_null(ydoc_get(ydoc_get(root, "l"), "a"));
	assert_null(ydoc_get(ydoc_get(root, "s"), "a"));
	assert_null(ydoc_get(NULL, "a"));
	assert_null(ydoc_key(NULL, "a"));
}

static void test_empty_document_has_no_root(void **state)
{
	assert_null(parse_ok(*state, "# nothing here\n"));
}

/* Duplicate keys. */

static void test_duplicate_key_names_where_it_was_first_defined(void **state)
{
	struct fx *f = *state;

	parse_any(f, "kiln: 1\n"
		     "cluster: a\n"
		     "ttl: 1h\n"
		     "cluster: b\n");
	assert_error(&f->d, 4, 1, "duplicate key 'cluster' (first defined at 2:1)");
	assert_hint(&f->d, 4, 1, "remove one of the two; YAML keeps only one of them");
	assert_int_equal(f->d.n, 1);
}

static void test_duplicate_key_in_a_nested_mapping_is_reported_at_the_repeat(void **state)
{
	struct fx *f = *state;

	parse_any(f, "compute:\n"
		     "  a: {gpu: x, count: 2, gpu: y}\n");
	assert_error(&f->d, 2, 25, "duplicate key 'gpu' (first defined at 2:7)");
}

static void test_every_repeat_of_a_key_refers_to_the_first(void **state)
{
	struct fx *f = *state;

	parse_any(f, "a: 1\n"
		     "a: 2\n"
		     "a: 3\n");
	assert_error(&f->d, 2, 1, "duplicate key 'a' (first defined at 1:1)");
	assert_error(&f->d, 3, 1, "duplicate key 'a' (first defined at 1:1)");
	assert_int_equal(f->d.n, 2);
}

static void test_same_key_in_different_mappings_is_not_a_duplicate(void **state)
{
	const struct ynode *root = parse_ok(*state, "a: {name: x}\n"
						    "b: {name: x}\n");

	assert_int_equal(root->n, 2);
}

/* Merge keys. */

static void test_merge_key_copies_the_keys_of_its_mapping(void **state)
{
	const struct ynode *root = parse_ok(*state, "base: &b {count: 2, market: spot}\n"
						    "g: {<<: *b, image: x}\n");
	const struct ynode *g = ydoc_get(root, "g");

	assert_int_equal(g->n, 3);
	assert_string_equal(ydoc_get(g, "count")->value, "2");
	assert_string_equal(ydoc_get(g, "market")->value, "spot");
	assert_null(ydoc_get(g, "<<"));
}

static void test_merge_key_loses_to_keys_written_in_the_mapping(void **state)
{
	/* Written after the merge, and before it: the written key wins both times. */
	const struct ynode *root = parse_ok(*state, "base: &b {count: 2}\n"
						    "g: {<<: *b, count: 5}\n"
						    "h: {count: 7, <<: *b}\n");

	assert_string_equal(ydoc_get(ydoc_get(root, "g"), "count")->value, "5");
	assert_string_equal(ydoc_get(ydoc_get(root, "h"), "count")->value, "7");
	assert_int_equal(ydoc_get(root, "g")->n, 1);
}

static void test_merge_key_list_prefers_earlier_mappings(void **state)
{
	const struct ynode *root = parse_ok(*state, "one: &one {count: 1, market: spot}\n"
						    "two: &two {count: 2, image: x}\n"
						    "g: {<<: [*one, *two]}\n");
	const struct ynode *g = ydoc_get(root, "g");

	assert_string_equal(ydoc_get(g, "count")->value, "1");
	assert_string_equal(ydoc_get(g, "market")->value, "spot");
	assert_string_equal(ydoc_get(g, "image")->value, "x");
	assert_int_equal(g->n, 3);
}

static void test_merge_of_a_scalar_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "g: {<<: text}\n");
	assert_error(&f->d, 1, 5, "the merge key '<<' takes a mapping or a list of mappings");
	assert_hint(&f->d, 1, 5, "merge a mapping, like `<<: *defaults`");
}

static void test_merge_of_a_list_holding_a_scalar_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "m: &m {a: 1}\n"
			 "g: {<<: [*m, plain]}\n");
	assert_error(&f->d, 2, 5, "the merge key '<<' takes a mapping or a list of mappings");
}

static void test_merge_of_an_aliased_scalar_is_reported_where_it_is_merged(void **state)
{
	/*
	 * The anchor on line 1 is a fine string; the mistake is the merge on
	 * line 3, so that is the line to send the reader to.
	 */
	struct fx *f = *state;

	parse_refused(f, "s: &s text\n"
			 "other: 1\n"
			 "g: {<<: *s}\n");
	assert_diag_on_line(&f->d, 3, "the merge key '<<' takes a mapping or a list of mappings");
}

static void test_quoted_merge_key_is_an_ordinary_key(void **state)
{
	const struct ynode *root = parse_ok(*state, "g: {'<<': x}\n");

	assert_string_equal(ydoc_get(ydoc_get(root, "g"), "<<")->value, "x");
}

/* Aliases. */

static void test_alias_shares_the_anchored_node(void **state)
{
	const struct ynode *root = parse_ok(*state, "a: &x {k: v}\n"
						    "b: *x\n");

	assert_ptr_equal(ydoc_get(root, "a"), ydoc_get(root, "b"));
}

static void test_alias_refers_to_the_latest_anchor_of_that_name(void **state)
{
	const struct ynode *root = parse_ok(*state, "a: &x one\n"
						    "b: &x two\n"
						    "c: *x\n");

	assert_string_equal(ydoc_get(root, "c")->value, "two");
}

static void test_recursive_alias_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "a: &x\n"
			 "  b: *x\n");
	assert_error(&f->d, 2, 6, "YAML alias '*x' refers to a node that contains it");
}

static void test_unknown_alias_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "a: 1\n"
			 "b: *nowhere\n");
	assert_error(&f->d, 2, 4, "YAML alias '*nowhere' names no anchor defined before it");
	assert_hint(&f->d, 2, 4, "define the anchor (&name) before the alias (*name)");
}

static void test_alias_used_before_its_anchor_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "b: *later\n"
			 "a: &later 1\n");
	assert_error(&f->d, 1, 4, "YAML alias '*later' names no anchor defined before it");
}

static void test_billion_laughs_is_refused_quickly(void **state)
{
	struct fx *f = *state;
	parse_refused(f, "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
			 "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
			 "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
			 "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n");
	assert_int_equal(f->d.n, 1);
	assert_string_equal(f->d.v[0].message,
			    "YAML aliases expand this document by more than 100000 nodes; kiln "
			    "refuses documents that expand exponentially");
	assert_string_equal(f->d.v[0].hint, "write the values out, or use fewer nested aliases");
}

/* Written nodes are bounded by the file size; only what aliases add is limited. */
static void test_a_large_document_without_aliases_is_accepted(void **state)
{
	struct fx *f = *state;
	struct strbuf sb = {0};
	struct ydoc *doc = NULL;
	int i;

	sb_adds(&sb, "groups:\n");
	for (i = 0; i < 30000; i++)
		sb_addf(&sb, "  g%d: {count: %d, role: r, public: false}\n", i, i);
	assert_int_equal(ydoc_parse(&doc, "t.yaml", sb.buf, sb.len, &f->d), 0);
	assert_int_equal(f->d.n, 0);
	assert_int_equal(ydoc_get(ydoc_root(doc), "groups")->n, 30000);
	ydoc_free(doc);
	sb_release(&sb);
}

static void test_aliases_that_expand_moderately_are_accepted(void **state)
{
	const struct ynode *root =
	    parse_ok(*state, "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			     "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n");

	assert_int_equal(ydoc_get(root, "c")->n, 10);
}

/* Structure limits. */

static const char *nested_lists(struct fx *f, int depth)
{
	struct strbuf sb = {0};
	int i;

	for (i = 0; i < depth; i++)
		sb_addc(&sb, '[');
	for (i = 0; i < depth; i++)
		sb_addc(&sb, ']');
	sb_addc(&sb, '\n');
	f->text = sb_detach(&sb);
	return f->text;
}

static void test_nesting_of_64_levels_is_accepted(void **state)
{
	struct fx *f = *state;

	assert_int_equal(parse_ok(f, nested_lists(f, YDOC_MAX_DEPTH))->kind, YNODE_SEQ);
}

static void test_nesting_deeper_than_64_levels_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, nested_lists(f, YDOC_MAX_DEPTH + 1));
	assert_error(&f->d, 1, 65, "YAML nesting is deeper than 64 levels");
}

static void test_very_deep_nesting_is_refused_without_exhausting_the_stack(void **state)
{
	struct fx *f = *state;

	parse_refused(f, nested_lists(f, 100000));
	assert_error(&f->d, 1, 65, "YAML nesting is deeper than 64 levels");
}

static void test_second_document_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "---\n"
			 "kiln: 1\n"
			 "---\n"
			 "kiln: 1\n");
	assert_error(&f->d, 3, 1, "a spec is one YAML document; this is a second");
	assert_hint(&f->d, 3, 1, "keep one spec per file");
}

static void test_nul_escape_in_a_double_quoted_string_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "kiln: 1\n"
			 "cluster: \"a\\0b\"\n");
	assert_error(&f->d, 2, 10, "a string contains a NUL character");
}

static void test_mapping_as_a_key_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "? {a: 1}\n"
			 ": x\n");
	assert_error(&f->d, 1, 3, "mapping keys must be strings, not a mapping or a list");
	assert_hint(&f->d, 1, 3, "write keys as plain words, like `count:`");
}

static void test_list_as_a_key_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "ok: 1\n"
			 "? [a, b]\n"
			 ": x\n");
	assert_error(&f->d, 2, 3, "mapping keys must be strings, not a mapping or a list");
}

static void test_alias_of_a_mapping_as_a_key_is_refused(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "m: &m {a: 1}\n"
			 "? *m\n"
			 ": x\n");
	assert_error(&f->d, 2, 3, "mapping keys must be strings, not a mapping or a list");
}

/* Syntax errors. */

static void test_syntax_error_says_invalid_yaml_with_its_position(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "kiln: 1\n"
			 "zones: [a, b\n"
			 "cluster: x\n");
	assert_error(&f->d, 3, 8,
		     "invalid YAML: did not find expected ',' or ']' (while parsing a flow "
		     "sequence at 2:8)");
}

static void test_tab_indentation_gets_the_tab_hint(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "provider:\n"
			 "\tname: sim\n");
	assert_int_equal(f->d.n, 1);
	assert_int_equal(f->d.v[0].line, 2);
	assert_int_equal(f->d.v[0].col, 1);
	assert_true(str_starts_with(f->d.v[0].message, "invalid YAML: "));
	assert_string_equal(f->d.v[0].hint,
			    "indent with spaces; YAML does not allow tabs for indentation");
}

static void test_misindented_key_gets_the_indentation_hint(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "provider:\n"
			 "    name: sim\n"
			 "  region: x\n");
	assert_error(&f->d, 3, 3,
		     "invalid YAML: did not find expected key (while parsing a block mapping at "
		     "1:1)");
	assert_hint(&f->d, 3, 3, "check the indentation of this line against the keys above it");
}

static void test_control_character_is_reported_at_its_position(void **state)
{
	struct fx *f = *state;

	parse_refused(f, "kiln: 1\n"
			 "cluster: ab\x01\n");
	assert_error(&f->d, 2, 12, "invalid YAML: control characters are not allowed");
}

/* Scalars. */

static void test_quoted_flag_is_set_on_quoted_and_block_scalars(void **state)
{
	const struct ynode *root = parse_ok(*state, "plain: a\n"
						    "single: 'a'\n"
						    "double: \"a\"\n"
						    "block: |\n"
						    "  a\n"
						    "tagged: !!str 1\n");

	assert_false(ydoc_get(root, "plain")->quoted);
	assert_true(ydoc_get(root, "single")->quoted);
	assert_true(ydoc_get(root, "double")->quoted);
	assert_true(ydoc_get(root, "block")->quoted);
	assert_true(ydoc_get(root, "tagged")->quoted);
}

static void test_null_is_an_empty_tilde_or_null_plain_scalar(void **state)
{
	const struct ynode *root = parse_ok(*state, "empty:\n"
						    "tilde: ~\n"
						    "word: null\n"
						    "upper: NULL\n");

	assert_true(ydoc_is_null(ydoc_get(root, "empty")));
	assert_true(ydoc_is_null(ydoc_get(root, "tilde")));
	assert_true(ydoc_is_null(ydoc_get(root, "word")));
	assert_true(ydoc_is_null(ydoc_get(root, "upper")));
}

static void test_quoted_null_and_empty_string_are_not_null(void **state)
{
	const struct ynode *root = parse_ok(*state, "word: \"null\"\n"
						    "tilde: '~'\n"
						    "empty: \"\"\n"
						    "other: nil\n");

	assert_false(ydoc_is_null(ydoc_get(root, "word")));
	assert_false(ydoc_is_null(ydoc_get(root, "tilde")));
	assert_false(ydoc_is_null(ydoc_get(root, "empty")));
	assert_false(ydoc_is_null(ydoc_get(root, "other")));
}

static void test_collections_are_never_null(void **state)
{
	const struct ynode *root = parse_ok(*state, "m: {}\n"
						    "l: []\n");

	assert_false(ydoc_is_null(ydoc_get(root, "m")));
	assert_false(ydoc_is_null(ydoc_get(root, "l")));
}

static void test_describe_names_each_kind(void **state)
{
	const struct ynode *root = parse_ok(*state, "m: {}\n"
						    "l: []\n"
						    "s: x\n"
						    "n: ~\n");

	assert_string_equal(ydoc_describe(ydoc_get(root, "m")), "a mapping");
	assert_string_equal(ydoc_describe(ydoc_get(root, "l")), "a list");
	assert_string_equal(ydoc_describe(ydoc_get(root, "s")), "a string");
	assert_string_equal(ydoc_describe(ydoc_get(root, "n")), "nothing (null)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_positions_of_top_level_keys_and_values_are_one_based),
	    kiln_test(test_positions_of_nested_nodes_count_indentation),
	    kiln_test(test_positions_count_characters_not_bytes),
	    kiln_test(test_get_returns_the_value_and_key_returns_the_key),
	    kiln_test(test_get_and_key_return_null_for_a_missing_key),
	    kiln_test(test_get_returns_null_on_a_list_a_scalar_or_nothing),
	    kiln_test(test_empty_document_has_no_root),
	    kiln_test(test_duplicate_key_names_where_it_was_first_defined),
	    kiln_test(test_duplicate_key_in_a_nested_mapping_is_reported_at_the_repeat),
	    kiln_test(test_every_repeat_of_a_key_refers_to_the_first),
	    kiln_test(test_same_key_in_different_mappings_is_not_a_duplicate),
	    kiln_test(test_merge_key_copies_the_keys_of_its_mapping),
	    kiln_test(test_merge_key_loses_to_keys_written_in_the_mapping),
	    kiln_test(test_merge_key_list_prefers_earlier_mappings),
	    kiln_test(test_merge_of_a_scalar_is_refused),
	    kiln_test(test_merge_of_a_list_holding_a_scalar_is_refused),
	    kiln_test(test_merge_of_an_aliased_scalar_is_reported_where_it_is_merged),
	    kiln_test(test_quoted_merge_key_is_an_ordinary_key),
	    kiln_test(test_alias_shares_the_anchored_node),
	    kiln_test(test_alias_refers_to_the_latest_anchor_of_that_name),
	    kiln_test(test_recursive_alias_is_refused),
	    kiln_test(test_unknown_alias_is_refused),
	    kiln_test(test_alias_used_before_its_anchor_is_refused),
	    kiln_test(test_billion_laughs_is_refused_quickly),
	    kiln_test(test_aliases_that_expand_moderately_are_accepted),
	    kiln_test(test_a_large_document_without_aliases_is_accepted),
	    kiln_test(test_nesting_of_64_levels_is_accepted),
	    kiln_test(test_nesting_deeper_than_64_levels_is_refused),
	    kiln_test(test_very_deep_nesting_is_refused_without_exhausting_the_stack),
	    kiln_test(test_second_document_is_refused),
	    kiln_test(test_nul_escape_in_a_double_quoted_string_is_refused),
	    kiln_test(test_mapping_as_a_key_is_refused),
	    kiln_test(test_list_as_a_key_is_refused),
	    kiln_test(test_alias_of_a_mapping_as_a_key_is_refused),
	    kiln_test(test_syntax_error_says_invalid_yaml_with_its_position),
	    kiln_test(test_tab_indentation_gets_the_tab_hint),
	    kiln_test(test_misindented_key_gets_the_indentation_hint),
	    kiln_test(test_control_character_is_reported_at_its_position),
	    kiln_test(test_quoted_flag_is_set_on_quoted_and_block_scalars),
	    kiln_test(test_null_is_an_empty_tilde_or_null_plain_scalar),
	    kiln_test(test_quoted_null_and_empty_string_are_not_null),
	    kiln_test(test_collections_are_never_null),
	    kiln_test(test_describe_names_each_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
