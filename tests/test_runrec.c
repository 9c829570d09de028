/*
 * test_runrec.c - the run record: its JSON read back field for field, its
 * digest catching a hand edit, the runs ref written by compare-and-swap,
 * an unknown id's message and a simulated run's end.
 *
 * The store tests run in a fresh temporary directory holding a local
 * state repository, removed at the end.
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

#include <jansson.h>

#include "lineage.h"
#include "runrec.h"
#include "store.h"
#include "timefmt.h"
#include "util.h"

struct fx {
	char dir[64];
	char cwd[PATH_MAX];
	struct store *s;
	struct runrec r;
	struct runrec back;
	struct runrec_list l;
	json_t *j;
};

static void fill(struct runrec *r, const char *id)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->name = xstrdup("llama-8b-try3");
	r->workspace = xstrdup("default");
	r->cluster = xstrdup("demo");
	r->provider = xstrdup("sim");
	r->group = xstrdup("trainers");
	r->simulated = true;
	r->scheduler = xstrdup("none");
	r->state = RUNREC_RUNNING;
	r->nodes = 2;
	r->gpus = 16;
	r->gpu_model = xstrdup("H100");
	r->author = xstrdup("Test <test@example.com>");
	r->created = r->started = 1767225600; /* 2026-01-01T00:00:00Z */
	r->entry.kind = xstrdup("command");
	r->entry.name = xstrdup("torchrun");
	r->entry.nargs = 3;
	r->entry.digest = xstrdup("sha256:00");
	r->model_seconds = 3600;
	r->model_tokens_per_s = 1000;
	r->tokens = -1;
	r->lineage.code_commit = xstrdup("0123456789abcdef0123456789abcdef01234567");
	r->lineage.dirty = true;
	r->lineage.diff_digest = xstrdup("sha256:11");
	r->lineage.spec_digest = xstrdup("sha256:22");
	r->lineage.state_commit = xstrdup("89abcdef0123456789abcdef0123456789abcdef");
	r->lineage.nodes = 2;
	r->lineage.instance_types = xcalloc(1, sizeof(char *));
	r->lineage.instance_types[r->lineage.ntypes++] = xstrdup("p5.48xlarge");
	r->lineage.data = xcalloc(1, sizeof(*r->lineage.data));
	r->lineage.data[0].store = xstrdup("datasets");
	r->lineage.data[0].prefix = xstrdup("c4/");
	r->lineage.data[0].objects = 3;
	r->lineage.data[0].bytes = 3000;
	r->lineage.data[0].manifest_digest = xstrdup("sha256:33");
	r->lineage.ndata = 1;
	r->lineage.workload = json_pack("{s:s}", "params", "8B");
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {{0}};
	char *path;

	*state = f;
	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	unsetenv("KILN_STATE");
	strcpy(f->dir, "/tmp/kiln-test-runrec-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0)
		return -1;
	path = xasprintf("%s/state.git", f->dir);
	if (store_open(&f->s, path, &err) < 0) {
		print_error("store_open: %s\n", err.msg);
		free(path);
		return -1;
	}
	free(path);
	fill(&f->r, "r-0123abcd");
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	runrec_release(&f->r);
	runrec_release(&f->back);
	runrec_list_release(&f->l);
	json_decref(f->j);
	store_free(f->s);
	if (chdir(f->cwd) != 0)
		return -1;
	util_remove_tree(f->dir);
	free(f);
	return 0;
}

static void a_record_reads_back_as_written_and_unedited(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *again;

	f->j = runrec_json(&f->r, true);
	assert_int_equal(runrec_from_json(f->j, &f->back, &err), 0);
	assert_false(f->back.edited);
	assert_string_equal(f->back.lineage.code_commit, f->r.lineage.code_commit);
	assert_true(f->back.lineage.dirty);
	assert_string_equal(f->back.lineage.data[0].manifest_digest, "sha256:33");
	assert_int_equal(f->back.lineage.data[0].bytes, 3000);
	assert_string_equal(f->back.lineage.instance_types[0], "p5.48xlarge");
	assert_int_equal(f->back.state, RUNREC_RUNNING);
	assert_int_equal(f->back.started, f->r.started);
	assert_false(f->back.has_exit);
	again = runrec_json(&f->back, true);
	assert_true(json_equal(again, f->j));
	json_decref(again);
}

static void a_hand_edited_record_is_named_edited_and_keeps_its_digest(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *saved;

	f->j = runrec_json(&f->r, true);
	json_object_set_new(f->j, "gpus", json_integer(1)); /* a cheaper run, by hand */
	assert_int_equal(runrec_from_json(f->j, &f->back, &err), 0);
	assert_true(f->back.edited);
	assert_non_null(strstr(f->back.edited_why, "is not the digest of what it holds"));
	/* Writing it again does not launder the edit: the old digest stays. */
	saved = runrec_json(&f->back, true);
	assert_string_equal(json_string_value(json_object_get(saved, "record_digest")),
			    json_string_value(json_object_get(f->j, "record_digest")));
	json_decref(saved);
}

static void a_record_without_a_digest_is_edited(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	f->j = runrec_json(&f->r, true);
	json_object_del(f->j, "record_digest");
	assert_int_equal(runrec_from_json(f->j, &f->back, &err), 0);
	assert_true(f->back.edited);
	assert_string_equal(f->back.edited_why, "it has no record_digest");
}

static void a_record_of_the_wrong_shape_is_refused_naming_the_field(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	f->j = runrec_json(&f->r, true);
	json_object_set_new(f->j, "nodes", json_string("two"));
	assert_int_equal(runrec_from_json(f->j, &f->back, &err), -1);
	assert_string_equal(err.msg, "run r-0123abcd: 'nodes' is a string, not an integer");
	json_object_set_new(f->j, "id", json_string("../../x"));
	assert_int_equal(runrec_from_json(f->j, &f->back, &err), -1);
	assert_string_equal(err.msg, "a run's id is not r- and 8 hex digits");
}

static void runs_are_saved_on_the_runs_ref_and_replaced_by_id(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	struct runrec second;
	git_oid oid;

	assert_int_equal(runrec_save(f->s, "default", &f->r, "run r-0123abcd", &err), 0);
	fill(&second, "r-4567cdef");
	assert_int_equal(runrec_save(f->s, "default", &second, "run r-4567cdef", &err), 0);
	f->r.state = RUNREC_CANCELLED;
	f->r.ended = f->r.started + 60;
	assert_int_equal(runrec_save(f->s, "default", &f->r, "cancel r-0123abcd", &err), 0);
	runrec_release(&second);

	assert_int_equal(store_ref_read(f->s, "refs/kiln/runs/default", &oid, &err), 0);
	assert_int_equal(runrec_load(f->s, "default", &f->l, &err), 0);
	assert_int_equal(f->l.n, 2);
	assert_string_equal(f->l.runs[0].id, "r-0123abcd");
	assert_int_equal(f->l.runs[0].state, RUNREC_CANCELLED);
	assert_false(f->l.runs[0].edited);
	assert_string_equal(f->l.runs[1].id, "r-4567cdef");
	/* Another workspace has none. */
	runrec_list_release(&f->l);
	assert_int_equal(runrec_load(f->s, "other", &f->l, &err), 0);
	assert_int_equal(f->l.n, 0);
	assert_false(f->l.exists);
}

static void an_unknown_id_names_the_latest_runs(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	assert_null(runrec_find(&f->l, "r-ffffffff", &err));
	assert_string_equal(err.msg, "no run 'r-ffffffff' in this workspace");
	assert_string_equal(err.hint, "this workspace has no runs yet; kiln run starts one");
	assert_int_equal(runrec_save(f->s, "default", &f->r, "run", &err), 0);
	assert_int_equal(runrec_load(f->s, "default", &f->l, &err), 0);
	assert_null(runrec_find(&f->l, "r-ffffffff", &err));
	assert_string_equal(err.hint, "kiln runs lists them (the latest: r-0123abcd)");
	assert_non_null(runrec_find(&f->l, "r-0123abcd", &err));
}

static void a_simulated_run_completes_after_its_model_s_seconds(void **state)
{
	struct fx *f = *state;

	runrec_settle(&f->r, f->r.started + 600);
	assert_int_equal(f->r.state, RUNREC_RUNNING);
	assert_true(f->r.tokens == 600000.0);
	runrec_settle(&f->r, f->r.started + 7200);
	assert_int_equal(f->r.state, RUNREC_COMPLETED);
	assert_int_equal(f->r.ended, f->r.started + 3600);
	assert_true(f->r.has_exit);
	assert_int_equal(f->r.exit_status, 0);
	assert_true(f->r.tokens == 3600000.0);
}

static void an_exit_line_is_read_and_any_other_shape_refused(void **state)
{
	struct runrec_exit x;

	(void)state;
	assert_int_equal(runrec_exit_parse("r-0123abcd-1 3 1796601600", &x), 0);
	assert_string_equal(x.id, "r-0123abcd");
	assert_int_equal(x.rank, 1);
	assert_int_equal(x.status, 3);
	assert_int_equal(x.when, 1796601600);
	assert_int_equal(runrec_exit_parse("r-0123abcd-1 256 1796601600", &x), -1);
	assert_int_equal(runrec_exit_parse("r-0123abcd--1 3 1796601600", &x), -1);
	assert_int_equal(runrec_exit_parse("r-0123abcd-1 -3 1796601600", &x), -1);
	assert_int_equal(runrec_exit_parse("r-0123abcd-1 3 1796601600x", &x), -1);
	assert_int_equal(runrec_exit_parse("r-0123abcd-1 3", &x), -1);
	assert_int_equal(runrec_exit_parse("r-0123ABCD-1 3 1796601600", &x), -1);
	assert_int_equal(runrec_exit_parse("../../etc-1 3 1796601600", &x), -1);
	assert_int_equal(runrec_exit_parse("", &x), -1);
}

static void a_run_ends_when_every_rank_has_with_the_worst_status(void **state)
{
	struct fx *f = *state;
	int exits[2] = {0, -1}, worst = -1;

	f->r.nodes = 2;
	f->r.state = RUNREC_RUNNING;
	assert_false(runrec_end_ranks(&f->r, exits, f->r.started + 60, &worst));
	assert_int_equal(f->r.state, RUNREC_RUNNING);
	assert_false(f->r.has_exit);
	exits[1] = 3;
	assert_true(runrec_end_ranks(&f->r, exits, f->r.started + 90, &worst));
	assert_int_equal(f->r.state, RUNREC_FAILED);
	assert_int_equal(f->r.exit_status, 3);
	assert_int_equal(worst, 1);
	assert_int_equal(f->r.ended, f->r.started + 90);
	exits[1] = 0;
	assert_true(runrec_end_ranks(&f->r, exits, f->r.started + 90, &worst));
	assert_int_equal(f->r.state, RUNREC_COMPLETED);
	assert_int_equal(f->r.exit_status, 0);
	assert_int_equal(worst, 0);
}

static void ids_have_one_shape(void **state)
{
	char id[16];

	(void)state;
	runrec_new_id(id);
	assert_true(runrec_id_ok(id));
	assert_false(runrec_id_ok("r-0123ABCD"));
	assert_false(runrec_id_ok("r-0123abc"));
	assert_false(runrec_id_ok("x-0123abcd"));
}

static void a_manifest_digest_does_not_depend_on_the_listing_s_order(void **state)
{
	struct kiln_error err = {{0}};
	json_t *a = json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}]", "key", "c4/a", "size", 10, "etag",
			      "\"e1\"", "key", "c4/b", "size", 20, "etag", "\"e2\"");
	json_t *b = json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}]", "key", "c4/b", "size", 20, "etag",
			      "\"e2\"", "key", "c4/a", "size", 10, "etag", "\"e1\"");
	json_t *bad = json_pack("[{s:s}]", "key", "c4/a");
	const char *lines = "c4/a\t10\t\"e1\"\nc4/b\t20\t\"e2\"\n";
	uint64_t n, bytes;
	char *da, *db, *want;

	(void)state;
	da = lineage_manifest_digest(a, &n, &bytes, &err);
	db = lineage_manifest_digest(b, &n, &bytes, &err);
	assert_string_equal(da, db);
	assert_int_equal(n, 2);
	assert_int_equal(bytes, 30);
	/* One line a key, sorted: what sha256sum gives for the same text. */
	want = lineage_digest(lines, strlen(lines));
	assert_string_equal(da, want);
	free(want);
	assert_null(lineage_manifest_digest(bad, &n, &bytes, &err));
	assert_string_equal(err.msg, "object 0 of the listing has no key, size or etag");
	free(da);
	free(db);
	json_decref(a);
	json_decref(b);
	json_decref(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(a_record_reads_back_as_written_and_unedited, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(a_hand_edited_record_is_named_edited_and_keeps_its_digest,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(a_record_without_a_digest_is_edited, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_record_of_the_wrong_shape_is_refused_naming_the_field,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(runs_are_saved_on_the_runs_ref_and_replaced_by_id, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(an_unknown_id_names_the_latest_runs, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_simulated_run_completes_after_its_model_s_seconds,
					    setup, teardown),
	    cmocka_unit_test(an_exit_line_is_read_and_any_other_shape_refused),
	    cmocka_unit_test_setup_teardown(a_run_ends_when_every_rank_has_with_the_worst_status,
					    setup, teardown),
	    cmocka_unit_test(ids_have_one_shape),
	    cmocka_unit_test(a_manifest_digest_does_not_depend_on_the_listing_s_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
