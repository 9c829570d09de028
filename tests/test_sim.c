/*
 * test_sim.c - the embedded sim provider: a simulated cloud in a temporary
 * directory. Round trips by id and by scope, paging, idempotency tokens,
 * capacity (gangs, zone fallback, partial groups), delays, injected faults,
 * hostile files, threads, drift, and expansion of specs into resources.
 *
 * Every test gets a fresh directory (KILN_SIM_DIR) and a clean environment;
 * the knobs a test needs are set before it opens its context.
 */
#include "testutil.h"

#include <pthread.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "jsonc.h"
#include "provider.h"
#include "sim/sim.h"
#include "sim/sim_int.h"

static const char *const knobs[] = {
    "KILN_SIM_DIR",	 "KILN_SIM_LATENCY_MS", "KILN_SIM_FAIL_RATE", "KILN_SIM_SEED",
    "KILN_SIM_CAPACITY", "KILN_SIM_READY_MS",	"KILN_SIM_PAGE_SIZE", "KILN_SIM_HEALTH_MS",
    "KILN_SIM_PROFILE",	 "KILN_SIM_TIME_SCALE",
};

struct sfx {
	char dir[64];
	struct prov_ctx *ctx;
	struct spec *spec;
	struct diags d;
	json_t *json; /* whatever the test last built, released by the teardown */
	json_t *live; /* the same, a second one */
};

static int sfx_setup(void **state)
{
	struct sfx *f = xcalloc(1, sizeof(*f));
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		unsetenv(knobs[i]);
	strcpy(f->dir, "/tmp/kiln-test-sim-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	setenv("KILN_SIM_DIR", f->dir, 1);
	setenv("KILN_SIM_READY_MS", "0", 1);
	*state = f;
	return 0;
}

static int sfx_teardown(void **state)
{
	struct sfx *f = *state;
	size_t i;
	int rc = util_remove_tree(f->dir) == 0 ? 0 : -1;

	provider_sim.close(f->ctx);
	spec_free(f->spec);
	diags_release(&f->d);
	json_decref(f->json);
	json_decref(f->live);
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		unsetenv(knobs[i]);
	free(f);
	return rc;
}

#define sim_test(fn) cmocka_unit_test_setup_teardown(fn, sfx_setup, sfx_teardown)

/* (Re)open the context with the knobs as they are now. */
static void sim_open(struct sfx *f)
{
	struct kiln_error err = {{0}, {0}};

	provider_sim.close(f->ctx);
	f->ctx = NULL;
	if (provider_sim.open(&f->ctx, f->spec, &err) != PROV_OK)
		fail_msg("open: %s", err.msg);
}

/* Open the sim again with another KILN_SIM_CAPACITY. */
static void sim_close_open(struct sfx *f, const char *capacity)
{
	setenv("KILN_SIM_CAPACITY", capacity, 1);
	sim_open(f);
}

static const struct prov_type *type_of(const char *name)
{
	const struct prov_type *t = provider_type(&provider_sim, name);

	if (!t)
		fail_msg("sim has no type %s", name);
	return t;
}

static const struct prov_scope scope_a = {"demo", "default", NULL};
static const struct prov_scope scope_b = {"demo", "other", NULL};

static int create(struct sfx *f, const struct prov_scope *scope, const char *type, const char *name,
		  json_t *attrs, const char *token, json_t **out, struct kiln_error *err)
{
	char *addr = xasprintf("%s.%s", type, name);
	struct prov_create op = {addr, name, attrs, token};
	int rc = type_of(type)->create(f->ctx, scope, &op, out, err);

	free(addr);
	json_decref(attrs);
	return rc;
}

/* Create and insist that it works; the new live object's id, which the caller frees. */
static char *create_ok(struct sfx *f, const struct prov_scope *scope, const char *type,
		       const char *name, json_t *attrs)
{
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;
	char *id;

	if (create(f, scope, type, name, attrs, NULL, &live, &err) != PROV_OK)
		fail_msg("create %s.%s: %s", type, name, err.msg);
	id = xstrdup(json_string_value(json_object_get(live, "id")));
	json_decref(live);
	return id;
}

static json_t *bucket_attrs(void)
{
	return json_pack("{s:b, s:i, s:b, s:s}", "versioning", 1, "expire_noncurrent_after", 0,
			 "encrypted", 1, "deletion", "retain");
}

/* A node group; zones is a comma-separated list. */
static json_t *group_attrs(const char *type, int count, bool gang, const char *zones)
{
	json_t *z = json_array();
	char *copy = xstrdup(zones), *save = NULL, *tok;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		json_array_append_new(z, json_string(tok));
	free(copy);
	return json_pack("{s:s, s:i, s:b, s:s, s:n, s:o, s:i, s:s, s:n, s:b, s:b, s:n}",
			 "instance_type", type, "count", count, "gang", gang, "market", "on-demand",
			 "image", "zones", z, "disk_size_gb", 200, "disk_type", "gp3", "role",
			 "public", 0, "efa", 0, "placement_group");
}

static int read_id(struct sfx *f, const char *type, const char *id, json_t **out,
		   struct kiln_error *err)
{
	return type_of(type)->read(f->ctx, id, out, err);
}

/* Every page of a list, concatenated; *pages counts the calls. */
static json_t *list_all(struct sfx *f, const struct prov_scope *scope, const char *type, int *pages)
{
	struct kiln_error err = {{0}, {0}};
	json_t *all = json_array(), *page;
	char *token = NULL, *next = NULL;
	int n = 0;

	do {
		if (type_of(type)->list(f->ctx, scope, token, &page, &next, &err) != PROV_OK)
			fail_msg("list %s: %s", type, err.msg);
		json_array_extend(all, page);
		json_decref(page);
		free(token);
		token = next;
		n++;
	} while (token);
	if (pages)
		*pages = n;
	return all;
}

static size_t list_count(struct sfx *f, const struct prov_scope *scope, const char *type)
{
	json_t *all = list_all(f, scope, type, NULL);
	size_t n = json_array_size(all);

	json_decref(all);
	return n;
}

static long long attr_int(const json_t *live, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(live, "attrs"), key));
}

static const char *attr_str(const json_t *live, const char *key)
{
	return json_string_value(json_object_get(json_object_get(live, "attrs"), key));
}

static char *file_text(const char *path)
{
	struct kiln_error err = {{0}, {0}};
	char *buf = NULL;
	size_t len;

	if (util_file_read_all(path, 1 << 20, &buf, &len, &err) < 0)
		return xstrdup("(absent)");
	return buf;
}

static char *doc_path(struct sfx *f, const char *id)
{
	return xasprintf("%s/r/%s.json", f->dir, id);
}

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* --- round trips, scope, paging, tokens --- */

static void test_a_created_resource_reads_back_with_its_tags(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct prov_scope scope = {"demo", "default", json_pack("{s:s}", "team", "research")};
	json_t *live = NULL, *again = NULL, *tags;
	char *id;

	sim_open(f);
	assert_int_equal(create(f, &scope, "sim_bucket", "data", bucket_attrs(), NULL, &live, &err),
			 PROV_OK);
	json_decref(scope.user_tags);
	id = xstrdup(json_string_value(json_object_get(live, "id")));
	assert_true(str_starts_with(id, "bkt-") && strlen(id) == 4 + 17);
	assert_string_equal(json_string_value(json_object_get(live, "address")), "sim_bucket.data");
	assert_string_equal(json_string_value(json_object_get(live, "status")), "ready");
	assert_null(json_object_get(live, "sim"));
	tags = json_object_get(live, "tags");
	assert_string_equal(json_string_value(json_object_get(tags, "kiln:cluster")), "demo");
	assert_string_equal(json_string_value(json_object_get(tags, "kiln:workspace")), "default");
	assert_string_equal(json_string_value(json_object_get(tags, "kiln:address")),
			    "sim_bucket.data");
	assert_string_equal(json_string_value(json_object_get(tags, "team")), "research");
	assert_true(str_starts_with(attr_str(live, "bucket"), "demo-data-"));
	assert_int_equal(read_id(f, "sim_bucket", id, &again, &err), PROV_OK);
	assert_true(json_equal(live, again));
	json_decref(again);
	json_decref(live);
	free(id);
}

/* A create names its state (kiln:lineage) and who made it (kiln:owner); claim retags only those. */
static void test_a_create_tags_its_lineage_and_claim_retags_nothing_else(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct prov_scope mine = {"demo", "default", json_pack("{s:s}", "team", "research")};
	struct prov_scope theirs = {"demo", "default", NULL};
	json_t *live = NULL, *claimed = NULL, *tags;

	mine.lineage = "aaaaaaaa-0000-4000-8000-000000000001";
	mine.owner = "Alice alice@example.com host:/a/.kiln/state.git";
	theirs.lineage = "bbbbbbbb-0000-4000-8000-000000000002";
	sim_open(f);
	assert_int_equal(create(f, &mine, "sim_bucket", "data", bucket_attrs(), NULL, &live, &err),
			 PROV_OK);
	json_decref(mine.user_tags);
	tags = json_object_get(live, "tags");
	assert_string_equal(json_string_value(json_object_get(tags, "kiln:lineage")), mine.lineage);
	assert_string_equal(json_string_value(json_object_get(tags, "kiln:owner")), mine.owner);
	assert_string_equal(provider_live_lineage(live), mine.lineage);
	assert_int_equal(provider_sim.claim(f->ctx, &theirs, "sim_bucket",
					    json_string_value(json_object_get(live, "id")),
					    &claimed, &err),
			 PROV_OK);
	tags = json_object_get(claimed, "tags");
	assert_string_equal(provider_live_lineage(claimed), theirs.lineage);
	/* No owner in the claiming scope: the old one is not left to mislead. */
	assert_null(json_object_get(tags, "kiln:owner"));
	assert_string_equal(json_string_value(json_object_get(tags, "team")), "research");
	assert_string_equal(json_string_value(json_object_get(tags, "kiln:address")),
			    "sim_bucket.data");
	assert_true(json_equal(json_object_get(live, "attrs"), json_object_get(claimed, "attrs")));
	json_decref(claimed);
	assert_int_equal(provider_sim.claim(f->ctx, &theirs, "sim_nothing", "x", &claimed, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "sim: no resource type sim_nothing");
	json_decref(claimed);
	json_decref(live);
}

/* What every cloud's tag values accept, at most 256 characters. */
static void test_a_tag_value_keeps_only_what_every_cloud_accepts(void **unused)
{
	char *v = provider_tag_value("Ann <ann@x.org> h:/p a,b|c\n\xc3\xa9");
	char long_in[400];

	(void)unused;
	assert_string_equal(v, "Ann _ann@x.org_ h:/p a_b_c___");
	free(v);
	memset(long_in, 'a', sizeof(long_in) - 1);
	long_in[sizeof(long_in) - 1] = '\0';
	v = provider_tag_value(long_in);
	assert_int_equal(strlen(v), 256);
	free(v);
	v = provider_tag_value(NULL);
	assert_string_equal(v, "");
	free(v);
}

static void test_list_returns_only_the_resources_of_its_scope_and_type(void **state)
{
	struct sfx *f = *state;
	struct prov_scope other_cluster = {"elsewhere", "default", NULL};
	json_t *in_a;
	char *a, *b;

	sim_open(f);
	a = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	b = create_ok(f, &scope_b, "sim_bucket", "data", bucket_attrs());
	free(create_ok(f, &scope_a, "sim_role", "trainer", json_pack("{s:s}", "service", "ec2")));
	in_a = list_all(f, &scope_a, "sim_bucket", NULL);
	assert_int_equal(json_array_size(in_a), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(in_a, 0), "id")), a);
	json_decref(in_a);
	in_a = list_all(f, &scope_b, "sim_bucket", NULL);
	assert_string_equal(json_string_value(json_object_get(json_array_get(in_a, 0), "id")), b);
	json_decref(in_a);
	assert_int_equal(list_count(f, &scope_b, "sim_role"), 0);
	assert_int_equal(list_count(f, &other_cluster, "sim_bucket"), 0);
	free(a);
	free(b);
}

static void test_list_pages_through_five_resources_two_at_a_time(void **state)
{
	struct sfx *f = *state;
	char *ids[5];
	json_t *all;
	int pages, i, j;
	unsigned long calls;

	setenv("KILN_SIM_PAGE_SIZE", "2", 1);
	sim_open(f);
	for (i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "b%d", i);
		ids[i] = create_ok(f, &scope_a, "sim_bucket", name, bucket_attrs());
	}
	calls = provider_sim.calls(f->ctx);
	all = list_all(f, &scope_a, "sim_bucket", &pages);
	assert_int_equal(pages, 3);
	assert_int_equal(provider_sim.calls(f->ctx) - calls, 3);
	assert_int_equal(json_array_size(all), 5);
	for (i = 0; i < 5; i++) {
		int seen = 0;

		for (j = 0; j < 5; j++)
			seen +=
			    strcmp(json_string_value(json_object_get(json_array_get(all, j), "id")),
				   ids[i]) == 0;
		assert_int_equal(seen, 1);
		free(ids[i]);
	}
	json_decref(all);
}

static void test_a_page_token_that_the_sim_never_gave_is_refused(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *page = NULL;
	char *next = NULL;

	sim_open(f);
	assert_int_equal(type_of("sim_bucket")->list(f->ctx, &scope_a, "../x", &page, &next, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "sim: InvalidParameterValue (simulated): '../x' is not a "
				     "page token this sim gave");
	assert_null(page);
	assert_null(next);
}

static void test_create_with_the_same_token_twice_returns_the_same_resource(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *one = NULL, *two = NULL;

	sim_open(f);
	assert_int_equal(
	    create(f, &scope_a, "sim_bucket", "data", bucket_attrs(), "tok-1", &one, &err),
	    PROV_OK);
	assert_int_equal(
	    create(f, &scope_a, "sim_bucket", "data", bucket_attrs(), "tok-1", &two, &err),
	    PROV_OK);
	assert_string_equal(json_string_value(json_object_get(one, "id")),
			    json_string_value(json_object_get(two, "id")));
	assert_int_equal(list_count(f, &scope_a, "sim_bucket"), 1);
	json_decref(two);
	two = NULL;
	assert_int_equal(
	    create(f, &scope_a, "sim_bucket", "logs", bucket_attrs(), "tok-1", &two, &err),
	    PROV_ERROR);
	assert_null(two);
	{
		char *want = xasprintf("sim: IdempotentParameterMismatch (simulated): the token of "
				       "sim_bucket.logs was already used to create %s",
				       json_string_value(json_object_get(one, "id")));

		assert_string_equal(err.msg, want);
		free(want);
	}
	assert_int_equal(
	    create(f, &scope_b, "sim_bucket", "data", bucket_attrs(), "tok-1", &two, &err),
	    PROV_ERROR);
	assert_true(str_starts_with(err.msg, "sim: IdempotentParameterMismatch (simulated): "));
	assert_int_equal(list_count(f, &scope_b, "sim_bucket"), 0);
	json_decref(one);
}

static void test_a_malformed_id_is_refused_and_an_unknown_one_is_not_found(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;

	sim_open(f);
	assert_int_equal(read_id(f, "sim_bucket", "../../etc/passwd", &live, &err), PROV_ERROR);
	assert_string_equal(err.msg, "sim: InvalidParameterValue (simulated): '../../etc/passwd' "
				     "is not a sim_bucket id (bkt- and 17 hex digits)");
	assert_int_equal(read_id(f, "sim_bucket", "vpc-0123456789abcdef0", &live, &err),
			 PROV_ERROR);
	assert_int_equal(read_id(f, "sim_bucket", "bkt-0123456789abcdef0", &live, &err),
			 PROV_NOTFOUND);
	assert_string_equal(err.msg, "sim: NotFound (simulated): there is no sim_bucket with id "
				     "bkt-0123456789abcdef0");
	assert_int_equal(type_of("sim_bucket")->delete (f->ctx, "bkt-0123456789abcdef0", &err),
			 PROV_NOTFOUND);
	assert_null(live);
}

static void test_an_input_the_type_does_not_have_is_refused(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL, *attrs = bucket_attrs();

	sim_open(f);
	json_object_set_new(attrs, "colour", json_string("blue"));
	assert_int_equal(create(f, &scope_a, "sim_bucket", "data", attrs, NULL, &live, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg,
			    "sim: InvalidParameter (simulated): sim_bucket has no input 'colour'");
	assert_null(live);
}

/* --- capacity --- */

static void test_a_gang_bigger_than_capacity_fails_and_leaves_nothing(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;
	char *usage_path = xasprintf("%s/usage.json", f->dir), *before, *after, *first;

	setenv("KILN_SIM_CAPACITY", "H100=8,A100=16", 1);
	sim_open(f);
	first = create_ok(f, &scope_b, "sim_node_group", "other",
			  group_attrs("p5.48xlarge", 8, true, "sim-1b"));
	before = file_text(usage_path);
	assert_int_equal(create(f, &scope_a, "sim_node_group", "trainers",
				group_attrs("p5.48xlarge", 16, true, "sim-1a,sim-1b"), NULL, &live,
				&err),
			 PROV_CAPACITY);
	assert_string_equal(err.msg, "sim: InsufficientInstanceCapacity (simulated): 16 × "
				     "p5.48xlarge (H100) requested, 8 free in sim-1a, 0 free in "
				     "sim-1b");
	assert_string_equal(err.hint, "a gang is placed whole or not at all: lower count, add a "
				      "zone to provider.zone, or raise KILN_SIM_CAPACITY");
	assert_null(live);
	assert_int_equal(list_count(f, &scope_a, "sim_node_group"), 0);
	after = file_text(usage_path);
	assert_string_equal(after, before);
	free(after);
	free(before);
	free(first);
	free(usage_path);
}

static void test_a_gang_that_does_not_fit_its_first_zone_moves_whole_to_the_next(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;

	setenv("KILN_SIM_CAPACITY", "H100=8", 1);
	sim_open(f);
	free(create_ok(f, &scope_a, "sim_node_group", "first",
		       group_attrs("p5.48xlarge", 6, true, "sim-1a")));
	assert_int_equal(create(f, &scope_a, "sim_node_group", "second",
				group_attrs("p5.48xlarge", 4, true, "sim-1a,sim-1b"), NULL, &live,
				&err),
			 PROV_OK);
	assert_string_equal(attr_str(live, "zone"), "sim-1b");
	assert_int_equal(attr_int(live, "count"), 4);
	assert_int_equal(
	    json_array_size(json_object_get(json_object_get(live, "attrs"), "instance_ids")), 4);
	assert_string_equal(attr_str(live, "gpu_model"), "H100");
	assert_int_equal(attr_int(live, "gpus_per_node"), 8);
	assert_int_equal(strlen(attr_str(live, "join_token")), 64);
	json_decref(live);
}

static void test_a_group_that_is_not_a_gang_gets_the_nodes_that_fit(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;

	setenv("KILN_SIM_CAPACITY", "h100=8", 1);
	sim_open(f);
	free(create_ok(f, &scope_a, "sim_node_group", "first",
		       group_attrs("p5.48xlarge", 6, true, "sim-1a")));
	assert_int_equal(create(f, &scope_a, "sim_node_group", "loose",
				group_attrs("p5.48xlarge", 4, false, "sim-1a"), NULL, &live, &err),
			 PROV_OK);
	assert_int_equal(attr_int(live, "count"), 2);
	json_decref(live);
	live = NULL;
	assert_int_equal(create(f, &scope_a, "sim_node_group", "more",
				group_attrs("p5.48xlarge", 1, false, "sim-1a"), NULL, &live, &err),
			 PROV_CAPACITY);
	assert_string_equal(err.msg, "sim: InsufficientInstanceCapacity (simulated): 1 × "
				     "p5.48xlarge (H100) requested, 0 free in sim-1a");
	assert_string_equal(err.hint, "lower count, or raise KILN_SIM_CAPACITY");
	/* CPU types and models the knob does not name are not limited. */
	free(create_ok(f, &scope_a, "sim_node_group", "login",
		       group_attrs("m7i.xlarge", 50, true, "sim-1a")));
	free(create_ok(f, &scope_a, "sim_node_group", "a100",
		       group_attrs("p4d.24xlarge", 50, true, "sim-1a")));
}

static void test_update_grows_and_shrinks_a_group_within_capacity(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	const struct prov_type *t = type_of("sim_node_group");
	static const char *const count[] = {"count"};
	json_t *live = NULL, *first_ids, *attrs;
	char *id, *usage_path = xasprintf("%s/usage.json", f->dir), *usage;

	setenv("KILN_SIM_CAPACITY", "H100=8", 1);
	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 2, true, "sim-1a"));
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	first_ids = json_deep_copy(json_object_get(json_object_get(live, "attrs"), "instance_ids"));
	json_decref(live);

	attrs = json_pack("{s:i}", "count", 6);
	assert_int_equal(t->update(f->ctx, &scope_a, id, attrs, count, 1, &live, &err), PROV_OK);
	json_decref(attrs);
	assert_int_equal(attr_int(live, "count"), 6);
	{
		json_t *ids = json_object_get(json_object_get(live, "attrs"), "instance_ids");

		assert_int_equal(json_array_size(ids), 6);
		assert_true(json_equal(json_array_get(ids, 0), json_array_get(first_ids, 0)));
		assert_true(json_equal(json_array_get(ids, 1), json_array_get(first_ids, 1)));
	}
	json_decref(live);
	live = NULL;

	attrs = json_pack("{s:i}", "count", 10);
	assert_int_equal(t->update(f->ctx, &scope_a, id, attrs, count, 1, &live, &err),
			 PROV_CAPACITY);
	json_decref(attrs);
	assert_string_equal(err.msg, "sim: InsufficientInstanceCapacity (simulated): 4 more × "
				     "p5.48xlarge (H100) requested, 2 free in sim-1a");
	assert_null(live);
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	assert_int_equal(attr_int(live, "count"), 6);
	json_decref(live);

	attrs = json_pack("{s:i}", "count", 1);
	assert_int_equal(t->update(f->ctx, &scope_a, id, attrs, count, 1, &live, &err), PROV_OK);
	json_decref(attrs);
	assert_int_equal(attr_int(live, "count"), 1);
	json_decref(live);
	usage = file_text(usage_path);
	f->json = json_loads(usage, 0, NULL);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(f->json, "H100"), "sim-1a")), 1);
	free(usage);
	free(usage_path);
	json_decref(first_ids);
	free(id);
}

static const json_t *nodes_of(const json_t *live)
{
	return json_object_get(json_object_get(live, "attrs"), "nodes");
}

static const char *node_str(const json_t *live, size_t i, const char *key)
{
	return json_string_value(json_object_get(json_array_get(nodes_of(live), i), key));
}

static void test_a_group_lists_its_nodes_with_simulated_addresses_from_the_network(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	static const char *const count[] = {"count"};
	json_t *live = NULL, *attrs, *ids;
	char *id;
	size_t i;

	sim_open(f);
	free(create_ok(f, &scope_a, "sim_network", "main",
		       json_pack("{s:s, s:b, s:[], s:s}", "cidr", "10.42.0.0/16", "fabric", 0,
				 "ingress", "region", "sim-1")));
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 2, true, "sim-1a"));
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	ids = json_object_get(json_object_get(live, "attrs"), "instance_ids");
	assert_int_equal(json_array_size(nodes_of(live)), 2);
	/* Launched in one call: in the order of their ids, numbered from 0. */
	{
		const char *a = json_string_value(json_array_get(ids, 0));
		const char *b = json_string_value(json_array_get(ids, 1));

		assert_string_equal(node_str(live, 0, "id"), strcmp(a, b) < 0 ? a : b);
		assert_string_equal(node_str(live, 1, "id"), strcmp(a, b) < 0 ? b : a);
	}
	for (i = 0; i < 2; i++) {
		const json_t *n = json_array_get(nodes_of(live), i);

		assert_int_equal(json_integer_value(json_object_get(n, "index")), (json_int_t)i);
		assert_string_equal(node_str(live, i, "zone"), "sim-1a");
		assert_string_equal(node_str(live, i, "state"), "running");
		assert_string_equal(node_str(live, i, "health"), "healthy");
		assert_string_equal(node_str(live, i, "health_reason"), "8/8 GPUs");
		assert_true(json_is_null(json_object_get(n, "public_ip")));
		assert_true(json_is_true(json_object_get(n, "simulated")));
		assert_non_null(node_str(live, i, "launched"));
	}
	/* One launch, one launch time, as EC2 gives one RunInstances' instances. */
	assert_string_equal(node_str(live, 0, "launched"), node_str(live, 1, "launched"));
	/* The first hosts of the network's block, past the four AWS keeps. */
	assert_true((strcmp(node_str(live, 0, "private_ip"), "10.42.0.4") == 0 &&
		     strcmp(node_str(live, 1, "private_ip"), "10.42.0.5") == 0) ||
		    (strcmp(node_str(live, 0, "private_ip"), "10.42.0.5") == 0 &&
		     strcmp(node_str(live, 1, "private_ip"), "10.42.0.4") == 0));
	json_decref(live);
	live = NULL;
	/* Another group of the network never gets an address already given. */
	{
		char *other = create_ok(f, &scope_a, "sim_node_group", "login",
					group_attrs("m7i.xlarge", 1, false, "sim-1a"));

		assert_int_equal(read_id(f, "sim_node_group", other, &live, &err), PROV_OK);
		assert_string_equal(node_str(live, 0, "private_ip"), "10.42.0.6");
		json_decref(live);
		live = NULL;
		free(other);
	}
	/* Grown: the new node comes last with the next address; shrunk: its record goes. */
	attrs = json_pack("{s:i}", "count", 3);
	assert_int_equal(
	    type_of("sim_node_group")->update(f->ctx, &scope_a, id, attrs, count, 1, &live, &err),
	    PROV_OK);
	json_decref(attrs);
	assert_int_equal(json_array_size(nodes_of(live)), 3);
	assert_string_equal(node_str(live, 2, "private_ip"), "10.42.0.7");
	json_decref(live);
	live = NULL;
	attrs = json_pack("{s:i}", "count", 1);
	assert_int_equal(
	    type_of("sim_node_group")->update(f->ctx, &scope_a, id, attrs, count, 1, &live, &err),
	    PROV_OK);
	json_decref(attrs);
	assert_int_equal(json_array_size(nodes_of(live)), 1);
	json_decref(live);
	free(id);
}

static void test_a_node_reports_no_health_until_it_has_booted(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;
	char *id;

	setenv("KILN_SIM_HEALTH_MS", "150", 1);
	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("g5.xlarge", 1, false, "sim-1a"));
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	assert_string_equal(node_str(live, 0, "state"), "running");
	assert_true(json_is_null(json_object_get(json_array_get(nodes_of(live), 0), "health")));
	/* Without a network, an address of 10.0.0.0/16. */
	assert_string_equal(node_str(live, 0, "private_ip"), "10.0.0.4");
	json_decref(live);
	live = NULL;
	sleep_ms(200);
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	assert_string_equal(node_str(live, 0, "health"), "healthy");
	assert_string_equal(node_str(live, 0, "health_reason"), "1/1 GPUs");
	json_decref(live);
	free(id);
}

static void test_replacing_a_node_launches_one_first_and_fails_whole_without_room(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	const struct prov_type *t = type_of("sim_node_group");
	json_t *live = NULL, *ids;
	char *id, *bad, *kept;
	const char *nodes[1];

	setenv("KILN_SIM_CAPACITY", "H100=2", 1);
	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 2, true, "sim-1a"));
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	bad = xstrdup(node_str(live, 0, "id"));
	kept = xstrdup(node_str(live, 1, "id"));
	json_decref(live);
	live = NULL;
	nodes[0] = bad;
	/* No room for the new node beside the two: nothing changes. */
	assert_int_equal(t->replace_nodes(f->ctx, id, nodes, 1, &live, &err), PROV_CAPACITY);
	assert_string_equal(err.msg, "sim: InsufficientInstanceCapacity (simulated): 1 more × "
				     "p5.48xlarge (H100) requested, 0 free in sim-1a");
	assert_null(live);
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	assert_string_equal(node_str(live, 0, "id"), bad);
	assert_int_equal(json_array_size(nodes_of(live)), 2);
	json_decref(live);
	live = NULL;
	/* With room: the bad node goes, the other stays, a new one comes. */
	sim_close_open(f, "H100=3");
	assert_int_equal(t->replace_nodes(f->ctx, id, nodes, 1, &live, &err), PROV_OK);
	ids = json_object_get(json_object_get(live, "attrs"), "instance_ids");
	assert_int_equal(json_array_size(ids), 2);
	assert_string_equal(json_string_value(json_array_get(ids, 0)), kept);
	assert_string_not_equal(json_string_value(json_array_get(ids, 1)), bad);
	assert_string_equal(node_str(live, 1, "private_ip"), "10.0.0.6");
	json_decref(live);
	live = NULL;
	/* An id that is not one of its nodes is refused. */
	assert_int_equal(t->replace_nodes(f->ctx, id, nodes, 1, &live, &err), PROV_ERROR);
	assert_non_null(strstr(err.msg, "is not a node of"));
	free(bad);
	free(kept);
	free(id);
}

static void test_an_update_of_a_replace_attribute_is_refused(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	static const char *const zones[] = {"zones"};
	json_t *live = NULL, *attrs = json_pack("{s:[s]}", "zones", "sim-1b");
	char *id;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 2, true, "sim-1a"));
	assert_int_equal(
	    type_of("sim_node_group")->update(f->ctx, &scope_a, id, attrs, zones, 1, &live, &err),
	    PROV_ERROR);
	assert_string_equal(err.msg, "sim: InvalidParameterCombination (simulated): "
				     "sim_node_group.zones cannot change in place: nodes cannot "
				     "move between zones");
	json_decref(attrs);
	free(id);
}

static void test_volumes_and_lustre_never_shrink_and_efa_needs_a_type_with_it(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	static const char *const disk[] = {"disk_size_gb"}, *const capacity[] = {"capacity_gb"};
	json_t *live = NULL, *attrs = json_pack("{s:i}", "disk_size_gb", 100);
	char *id;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 1, true, "sim-1a"));
	assert_int_equal(
	    type_of("sim_node_group")->update(f->ctx, &scope_a, id, attrs, disk, 1, &live, &err),
	    PROV_ERROR);
	assert_string_equal(err.msg, "sim: InvalidParameterValue (simulated): a volume cannot "
				     "shrink (disk_size_gb 200 -> 100)");
	json_decref(attrs);
	attrs = group_attrs("m7i.xlarge", 1, true, "sim-1a");
	json_object_set_new(attrs, "efa", json_true());
	assert_int_equal(create(f, &scope_a, "sim_node_group", "login", attrs, NULL, &live, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "sim: InvalidParameterCombination (simulated): m7i.xlarge "
				     "does not support EFA");
	assert_null(live);
	free(id);
	id = create_ok(f, &scope_a, "sim_lustre", "scratch",
		       json_pack("{s:i, s:i, s:n, s:s, s:b, s:s}", "capacity_gb", 2400,
				 "throughput_per_tib", 250, "import", "mount", "/fsx", "encrypted",
				 1, "deletion", "delete"));
	attrs = json_pack("{s:i}", "capacity_gb", 1200);
	assert_int_equal(
	    type_of("sim_lustre")->update(f->ctx, &scope_a, id, attrs, capacity, 1, &live, &err),
	    PROV_ERROR);
	assert_string_equal(err.msg, "sim: InvalidParameterValue (simulated): a Lustre file system "
				     "cannot shrink (capacity_gb 2400 -> 1200)");
	json_decref(attrs);
	attrs = json_pack("{s:i}", "capacity_gb", 4800);
	assert_int_equal(
	    type_of("sim_lustre")->update(f->ctx, &scope_a, id, attrs, capacity, 1, &live, &err),
	    PROV_OK);
	assert_int_equal(attr_int(live, "capacity_gb"), 4800);
	assert_true(str_starts_with(attr_str(live, "dns_name"), id));
	json_decref(live);
	json_decref(attrs);
	free(id);
}

static void test_changing_only_the_role_keeps_the_nodes_where_they_are(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	static const char *const role[] = {"role"};
	json_t *live = NULL, *attrs = json_pack("{s:s}", "role", "trainer");
	json_t *ids;
	char *id;

	setenv("KILN_SIM_CAPACITY", "H100=8", 1);
	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 8, true, "sim-1a"));
	assert_int_equal(read_id(f, "sim_node_group", id, &f->live, &err), PROV_OK);
	/* The limit drops below what the group holds; a role change must still work. */
	setenv("KILN_SIM_CAPACITY", "H100=4", 1);
	sim_open(f);
	assert_int_equal(
	    type_of("sim_node_group")->update(f->ctx, &scope_a, id, attrs, role, 1, &live, &err),
	    PROV_OK);
	assert_string_equal(attr_str(live, "role"), "trainer");
	assert_int_equal(attr_int(live, "count"), 8);
	ids = json_object_get(json_object_get(live, "attrs"), "instance_ids");
	assert_true(
	    json_equal(ids, json_object_get(json_object_get(f->live, "attrs"), "instance_ids")));
	json_decref(live);
	json_decref(attrs);
	free(id);
}

/* --- delays, deletes, waits --- */

static void test_a_node_group_is_pending_until_its_delay_has_passed(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct prov_wait w[3];
	json_t *live = NULL;
	char *ids[3];
	unsigned long calls;
	int i;

	setenv("KILN_SIM_READY_MS", "150", 1);
	sim_open(f);
	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "g%d", i);
		assert_int_equal(create(f, &scope_a, "sim_node_group", name,
					group_attrs("g5.xlarge", 1, false, "sim-1a"), NULL, &live,
					&err),
				 PROV_OK);
		assert_string_equal(json_string_value(json_object_get(live, "status")), "pending");
		ids[i] = xstrdup(json_string_value(json_object_get(live, "id")));
		json_decref(live);
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = ids[i];
	}
	calls = provider_sim.calls(f->ctx);
	assert_int_equal(type_of("sim_node_group")->wait(f->ctx, WAIT_READY, w, 3, &err), PROV_OK);
	assert_int_equal(provider_sim.calls(f->ctx) - calls, 1);
	for (i = 0; i < 3; i++) {
		assert_int_equal(w[i].state, WAIT_PENDING);
		assert_null(w[i].live);
	}
	sleep_ms(200);
	assert_int_equal(type_of("sim_node_group")->wait(f->ctx, WAIT_READY, w, 3, &err), PROV_OK);
	for (i = 0; i < 3; i++) {
		assert_int_equal(w[i].state, WAIT_DONE);
		assert_string_equal(json_string_value(json_object_get(w[i].live, "status")),
				    "ready");
		json_decref(w[i].live);
		free(ids[i]);
	}
}

static void test_delete_then_wait_reports_the_group_gone_and_frees_its_nodes(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	const struct prov_type *t = type_of("sim_node_group");
	struct prov_wait w;
	json_t *live = NULL;
	char *id, *usage_path = xasprintf("%s/usage.json", f->dir), *usage;

	setenv("KILN_SIM_CAPACITY", "H100=8", 1);
	setenv("KILN_SIM_READY_MS", "60", 1);
	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 8, true, "sim-1a"));
	assert_int_equal(t->delete (f->ctx, id, &err), PROV_OK);
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	assert_string_equal(json_string_value(json_object_get(live, "status")), "deleting");
	json_decref(live);
	live = NULL;
	memset(&w, 0, sizeof(w));
	w.id = id;
	assert_int_equal(t->wait(f->ctx, WAIT_GONE, &w, 1, &err), PROV_OK);
	assert_int_equal(w.state, WAIT_PENDING);
	sleep_ms(100);
	assert_int_equal(t->wait(f->ctx, WAIT_GONE, &w, 1, &err), PROV_OK);
	assert_int_equal(w.state, WAIT_DONE);
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_NOTFOUND);
	assert_int_equal(list_count(f, &scope_a, "sim_node_group"), 0);
	usage = file_text(usage_path);
	assert_string_equal(usage, "{}\n");
	free(usage);
	free(usage_path);
	free(id);
}

static void test_a_type_without_delay_is_deleted_at_once(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct prov_wait w;
	json_t *live = NULL;
	char *id, *path;
	struct stat st;

	setenv("KILN_SIM_READY_MS", "1000", 1);
	sim_open(f);
	id = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	path = doc_path(f, id);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(type_of("sim_bucket")->delete (f->ctx, id, &err), PROV_OK);
	assert_int_not_equal(stat(path, &st), 0);
	memset(&w, 0, sizeof(w));
	w.id = id;
	assert_int_equal(type_of("sim_bucket")->wait(f->ctx, WAIT_GONE, &w, 1, &err), PROV_OK);
	assert_int_equal(w.state, WAIT_DONE);
	assert_int_equal(read_id(f, "sim_bucket", id, &live, &err), PROV_NOTFOUND);
	free(path);
	free(id);
}

static void test_waiting_for_a_resource_that_does_not_exist_fails_it_alone(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct prov_wait w[2];
	char *id;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	memset(w, 0, sizeof(w));
	w[0].id = id;
	w[1].id = "bkt-00000000000000000";
	assert_int_equal(type_of("sim_bucket")->wait(f->ctx, WAIT_READY, w, 2, &err), PROV_OK);
	assert_int_equal(w[0].state, WAIT_DONE);
	assert_int_equal(w[1].state, WAIT_FAILED);
	assert_string_equal(w[1].err.msg, "sim: NotFound (simulated): there is no sim_bucket with "
					  "id bkt-00000000000000000");
	json_decref(w[0].live);
	free(id);
}

/* --- faults and latency --- */

static void test_a_fail_rate_of_one_makes_every_call_retryable(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	const char *want = "sim: 503 ServiceUnavailable (simulated transient failure); retry";
	const struct prov_type *t = type_of("sim_bucket");
	struct prov_wait w = {"bkt-00000000000000000", WAIT_DONE, NULL, {{0}, {0}}};
	json_t *out = NULL;
	char *next = NULL;
	int i;

	setenv("KILN_SIM_FAIL_RATE", "1", 1);
	sim_open(f);
	assert_int_equal(t->list(f->ctx, &scope_a, NULL, &out, &next, &err), PROV_RETRY);
	assert_string_equal(err.msg, want);
	assert_int_equal(t->read(f->ctx, "bkt-00000000000000000", &out, &err), PROV_RETRY);
	assert_int_equal(t->delete (f->ctx, "bkt-00000000000000000", &err), PROV_RETRY);
	assert_int_equal(t->wait(f->ctx, WAIT_READY, &w, 1, &err), PROV_RETRY);
	assert_int_equal(w.state, WAIT_PENDING);
	for (i = 0; i < 20; i++) {
		assert_int_equal(
		    create(f, &scope_a, "sim_bucket", "data", bucket_attrs(), NULL, &out, &err),
		    PROV_RETRY);
		assert_string_equal(err.msg, want);
		assert_null(out);
	}
	assert_null(next);
	assert_int_equal(provider_sim.calls(f->ctx), 24);
}

static void test_a_create_whose_response_was_lost_is_not_duplicated_by_its_retry(void **state)
{
	struct sfx *f = *state;
	struct prov_ctx *clean, *faulty;
	char id[32] = "";
	int i, lost = 0, ok = 0;

	sim_open(f); /* an observer without faults */
	clean = f->ctx;
	f->ctx = NULL;
	setenv("KILN_SIM_FAIL_RATE", "0.6", 1);
	setenv("KILN_SIM_SEED", "7", 1);
	sim_open(f);
	faulty = f->ctx;
	for (i = 0; i < 30; i++) {
		struct kiln_error err = {{0}, {0}};
		json_t *live = NULL;
		size_t n;
		int rc;

		f->ctx = faulty;
		rc = create(f, &scope_a, "sim_bucket", "data", bucket_attrs(), "token-1", &live,
			    &err);
		f->ctx = clean;
		n = list_count(f, &scope_a, "sim_bucket");
		assert_true(n <= 1);
		if (rc == PROV_RETRY && n == 1 && !ok && !*id)
			lost++; /* made, but the caller never heard */
		if (rc == PROV_OK) {
			const char *got = json_string_value(json_object_get(live, "id"));

			if (*id)
				assert_string_equal(got, id);
			snprintf(id, sizeof(id), "%s", got);
			ok++;
		}
		json_decref(live);
	}
	f->ctx = faulty;
	provider_sim.close(clean);
	assert_true(lost >= 1);
	assert_true(ok >= 1);
}

static void test_the_same_seed_replays_the_same_faults(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	char a[64], b[64];
	int round, i;
	json_t *out = NULL;

	setenv("KILN_SIM_FAIL_RATE", "0.5", 1);
	setenv("KILN_SIM_SEED", "12345", 1);
	for (round = 0; round < 2; round++) {
		char *s = round ? b : a;

		sim_open(f);
		for (i = 0; i < 63; i++) {
			int rc = read_id(f, "sim_bucket", "bkt-00000000000000000", &out, &err);

			s[i] = rc == PROV_RETRY ? 'F' : '.';
		}
		s[63] = '\0';
	}
	assert_string_equal(a, b);
	assert_non_null(strchr(a, 'F'));
	assert_non_null(strchr(a, '.'));
}

struct reader {
	struct sfx *f;
	const char *id;
	int rc;
};

static void *read_in_thread(void *arg)
{
	struct reader *r = arg;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;

	r->rc = read_id(r->f, "sim_bucket", r->id, &live, &err);
	json_decref(live);
	return NULL;
}

static void test_latency_is_spent_without_holding_a_lock(void **state)
{
	struct sfx *f = *state;
	struct reader r[8];
	pthread_t th[8];
	struct timespec t0, t1;
	long elapsed;
	char *id;
	int i;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	setenv("KILN_SIM_LATENCY_MS", "100", 1);
	sim_open(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 8; i++) {
		r[i] = (struct reader){f, id, -99};
		pthread_create(&th[i], NULL, read_in_thread, &r[i]);
	}
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	elapsed = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	for (i = 0; i < 8; i++)
		assert_int_equal(r[i].rc, PROV_OK);
	/* Eight calls of 100 ms each, overlapping: far less than 800 ms. */
	assert_true(elapsed >= 100);
	if (elapsed > 500)
		fail_msg("8 parallel calls with 100 ms latency took %ld ms", elapsed);
	assert_int_equal(provider_sim.calls(f->ctx), 8);
	free(id);
}

/* --- hostile files, drift --- */

static void test_a_corrupt_resource_file_is_named_in_the_error(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_error_t jerr;
	json_t *live = NULL, *page = NULL;
	char *id, *path, *want, *next = NULL;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	path = doc_path(f, id);
	write_text(path, "{\"type\": \"sim_bucket\", oops");
	assert_null(json_loads("{\"type\": \"sim_bucket\", oops", 0, &jerr));
	assert_int_equal(read_id(f, "sim_bucket", id, &live, &err), PROV_ERROR);
	want = xasprintf("sim: %s is not valid JSON (line %d, column %d: %s)", path, jerr.line,
			 jerr.column, jerr.text);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, "fix the file or remove it; the sim wrote it as JSON");
	free(want);
	assert_int_equal(type_of("sim_bucket")->list(f->ctx, &scope_a, NULL, &page, &next, &err),
			 PROV_ERROR);
	assert_true(strstr(err.msg, path) != NULL);
	assert_null(page);

	write_text(path, "[1, 2]");
	assert_int_equal(read_id(f, "sim_bucket", id, &live, &err), PROV_ERROR);
	want = xasprintf("sim: %s is not a sim resource document: expected a JSON object", path);
	assert_string_equal(err.msg, want);
	free(want);

	write_text(path, "{\"type\": \"sim_bucket\", \"id\": \"bkt-1\", \"status\": \"ready\"}");
	assert_int_equal(read_id(f, "sim_bucket", id, &live, &err), PROV_ERROR);
	want = xasprintf("sim: %s is not a sim resource document: \"id\" is missing or is not the "
			 "file's name",
			 path);
	assert_string_equal(err.msg, want);
	free(want);
	assert_null(live);
	free(path);
	free(id);
}

static void test_a_corrupt_usage_counter_is_named_in_the_error(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	char *path = xasprintf("%s/usage.json", f->dir), *want;
	json_t *live = NULL;

	sim_open(f);
	write_text(path, "{\"H100\": {\"sim-1a\": -3}}");
	assert_int_equal(create(f, &scope_a, "sim_node_group", "g",
				group_attrs("p5.48xlarge", 1, true, "sim-1a"), NULL, &live, &err),
			 PROV_ERROR);
	want = xasprintf("sim: %s is not a GPU usage counter: expected {\"MODEL\": {\"ZONE\": "
			 "NODES}}",
			 path);
	assert_string_equal(err.msg, want);
	assert_int_equal(list_count(f, &scope_a, "sim_node_group"), 0);
	free(want);
	free(path);
}

static void test_a_symbolic_link_in_the_directory_is_not_followed(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;
	char *id, *path, *want;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	path = doc_path(f, id);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(read_id(f, "sim_bucket", id, &live, &err), PROV_ERROR);
	want = xasprintf("sim: cannot read %s: it is a symbolic link", path);
	assert_string_equal(err.msg, want);
	free(want);
	free(path);
	free(id);
}

static void test_a_file_planted_at_a_temporary_name_is_not_written_through(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	static const char *const count[] = {"count"};
	char *victim = xasprintf("%s/victim", f->dir), *text, *id, *doc_tmp;
	char *usage_tmp = xasprintf("%s/usage.json.tmp", f->dir);
	char *usage = xasprintf("%s/usage.json", f->dir);
	json_t *live = NULL, *attrs = json_pack("{s:i}", "count", 2);

	sim_open(f);
	write_text(victim, "keep");
	free(create_ok(f, &scope_a, "sim_node_group", "a",
		       group_attrs("p5.48xlarge", 2, true, "sim-1a")));
	/* The counter's temporary file is a hard link to another file, then a symbolic link. */
	unlink(usage_tmp);
	assert_int_equal(link(victim, usage_tmp), 0);
	id = create_ok(f, &scope_a, "sim_node_group", "b",
		       group_attrs("p5.48xlarge", 1, true, "sim-1a"));
	unlink(usage_tmp);
	assert_int_equal(symlink(victim, usage_tmp), 0);
	/* And so is a document's. */
	doc_tmp = xasprintf("%s/r/%s.json.tmp", f->dir, id);
	assert_int_equal(symlink(victim, doc_tmp), 0);
	assert_int_equal(
	    type_of("sim_node_group")->update(f->ctx, &scope_a, id, attrs, count, 1, &live, &err),
	    PROV_OK);
	assert_int_equal(attr_int(live, "count"), 2);
	text = file_text(victim);
	assert_string_equal(text, "keep");
	free(text);
	text = file_text(usage);
	assert_string_equal(text, "{\n  \"H100\": {\n    \"sim-1a\": 4\n  }\n}\n");
	free(text);
	json_decref(live);
	json_decref(attrs);
	free(doc_tmp);
	free(id);
	free(usage);
	free(usage_tmp);
	free(victim);
}

static void test_an_index_marker_without_its_document_is_skipped(void **state)
{
	struct sfx *f = *state;
	char *dir = xasprintf("%s/idx/demo/default/sim_bucket", f->dir);
	char *marker = xasprintf("%s/bkt-0123456789abcdef0", dir);
	char *junk = xasprintf("%s/not-an-id", dir);

	sim_open(f);
	free(create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs()));
	write_text(marker, "");
	write_text(junk, "");
	assert_int_equal(list_count(f, &scope_a, "sim_bucket"), 1);
	free(junk);
	free(marker);
	free(dir);
}

/* --- the address index --- */

/* The file systems whose readdir inode numbers sim_store.c trusts. */
static bool inodes_trusted(const char *dir)
{
	struct statfs fs;

	if (statfs(dir, &fs) < 0)
		return false;
	switch ((unsigned long)fs.f_type) {
	case EXT4_SUPER_MAGIC:
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
		return true;
	default:
		return false;
	}
}

/*
 * The policy of role trainer, created or updated to read stores (under key:
 * "read" for buckets, "nfs_read" for nfs stores); its document's text.
 */
static int policy_reads_as(struct sfx *f, const char *id, const char *key, json_t *read,
			   char **policy, json_t **live, struct kiln_error *err)
{
	const char *const changed[] = {key};
	json_t *attrs = json_pack("{s:[], s:[]}", "read", "write");
	int rc;

	json_object_set_new(attrs, key, read);
	*live = NULL;
	if (id)
		rc = type_of("sim_role_policy")
			 ->update(f->ctx, &scope_a, id, attrs, changed, 1, live, err);
	else
		rc = create(f, &scope_a, "sim_role_policy", "trainer", json_incref(attrs), NULL,
			    live, err);
	json_decref(attrs);
	*policy = rc == PROV_OK ? xstrdup(attr_str(*live, "policy_document")) : NULL;
	return rc;
}

static int policy_reads(struct sfx *f, const char *id, json_t *read, char **policy, json_t **live,
			struct kiln_error *err)
{
	return policy_reads_as(f, id, "read", read, policy, live, err);
}

static void assert_policy_reads_as(struct sfx *f, const char *id, const char *key,
				   const char *store, const char *arn)
{
	struct kiln_error err = {{0}, {0}};
	json_t *live;
	char *policy;

	if (policy_reads_as(f, id, key, json_pack("[s]", store), &policy, &live, &err) != PROV_OK)
		fail_msg("policy reading %s: %s", store, err.msg);
	if (!strstr(policy, arn))
		fail_msg("the policy reading %s does not grant %s: %s", store, arn, policy);
	free(policy);
	json_decref(live);
}

static void assert_policy_reads(struct sfx *f, const char *id, const char *store, const char *arn)
{
	assert_policy_reads_as(f, id, "read", store, arn);
}

static void test_the_address_index_finds_a_store_and_falls_back_to_a_scan(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	char *entry = xasprintf("%s/a/demo/default/sim_bucket%%2Edata", f->dir);
	char *other = xasprintf("%s/a/demo/other/sim_bucket%%2Edata", f->dir);
	char *data, *logs, *extra, *elsewhere, *line, *text, *pol, *policy, *arn;
	json_t *live = NULL;

	sim_open(f);
	data = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	logs = create_ok(f, &scope_a, "sim_bucket", "logs", bucket_attrs());
	extra = create_ok(f, &scope_a, "sim_bucket", "extra", bucket_attrs());
	elsewhere = create_ok(f, &scope_b, "sim_bucket", "data", bucket_attrs());
	free(create_ok(f, &scope_a, "sim_role", "trainer", json_pack("{s:s}", "service", "ec2")));
	assert_int_equal(read_id(f, "sim_bucket", data, &f->live, &err), PROV_OK);
	arn = xstrdup(attr_str(f->live, "arn"));

	/* After a create: the entry names the id, one per scope. */
	line = xasprintf("%s\n", data);
	text = file_text(entry);
	assert_string_equal(text, line);
	free(text);
	free(line);
	line = xasprintf("%s\n", elsewhere);
	text = file_text(other);
	assert_string_equal(text, line);
	free(text);
	free(line);
	assert_int_equal(policy_reads(f, NULL, json_pack("[s]", "data"), &policy, &live, &err),
			 PROV_OK);
	assert_non_null(strstr(policy, arn));
	pol = xstrdup(json_string_value(json_object_get(live, "id")));
	json_decref(live);
	free(policy);

	/* With the entry, the other stores are not read: a corrupt one does not matter. */
	text = doc_path(f, logs);
	line = file_text(text);
	write_text(text, "{oops");
	assert_policy_reads(f, pol, "data", arn);
	write_text(text, line);
	free(line);
	free(text);

	/* A missing entry: the scan finds the store and writes the entry again. */
	assert_int_equal(unlink(entry), 0);
	assert_policy_reads(f, pol, "data", arn);
	line = xasprintf("%s\n", data);
	text = file_text(entry);
	assert_string_equal(text, line);
	free(text);

	/* Stale entries: an id that does not exist, another store's id, not an id at all. */
	write_text(entry, "bkt-0123456789abcdef0\n");
	assert_policy_reads(f, pol, "data", arn);
	write_text(entry, logs);
	assert_policy_reads(f, pol, "data", arn);
	write_text(entry, "../../r/whatever\n");
	assert_policy_reads(f, pol, "data", arn);
	text = file_text(entry);
	assert_string_equal(text, line);
	free(text);
	free(line);

	/* After a delete: the entry is gone, and so is the store. */
	assert_int_equal(type_of("sim_bucket")->delete (f->ctx, data, &err), PROV_OK);
	text = file_text(entry);
	assert_string_equal(text, "(absent)");
	free(text);
	assert_int_equal(policy_reads(f, pol, json_pack("[s]", "data"), &policy, &live, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "sim: NoSuchEntity (simulated): the policy of role 'trainer' "
				     "names store 'data', which does not exist in demo/default");
	assert_null(policy);
	/* The other scope's entry is its own. */
	assert_non_null(strstr((text = file_text(other)), elsewhere));
	free(text);

	/*
	 * An older sim's directory: no entries, empty markers. A scan finds the
	 * store, and every store it reads gets its entry.
	 */
	text = xasprintf("%s/a", f->dir);
	assert_int_equal(util_remove_tree(text), 0);
	free(text);
	text = xasprintf("%s/idx/demo/default/sim_bucket/%s", f->dir, logs);
	write_text(text, "");
	free(text);
	text = xasprintf("%s/idx/demo/default/sim_bucket/%s", f->dir, extra);
	write_text(text, "");
	free(text);
	assert_policy_reads(f, pol, "logs", "arn:sim:s3:::demo-logs-");
	line = xasprintf("%s\n", extra);
	text = xasprintf("%s/a/demo/default/sim_bucket%%2Eextra", f->dir);
	policy = file_text(text);
	assert_string_equal(policy, line);
	free(policy);
	free(text);
	free(line);

	/*
	 * Then a store that is not a bucket is found without reading the buckets
	 * (it is first asked for as one): a corrupt bucket beside them does not
	 * matter. Only where readdir's inode numbers are trusted (sim_store.c).
	 */
	free(create_ok(f, &scope_a, "sim_nfs", "home", json_pack("{s:s}", "mount", "/home")));
	if (inodes_trusted(f->dir)) {
		text = doc_path(f, extra);
		write_text(text, "{oops");
		free(text);
	}
	assert_policy_reads_as(f, pol, "nfs_read", "home", "arn:sim:elasticfilesystem:");
	free(extra);
	free(arn);
	free(pol);
	free(elsewhere);
	free(logs);
	free(data);
	free(other);
	free(entry);
}

static void test_read_and_list_report_a_drift_edit_of_the_file(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *doc, *live = NULL, *all;
	char *id, *path;

	sim_open(f);
	id = create_ok(f, &scope_a, "sim_node_group", "trainers",
		       group_attrs("p5.48xlarge", 2, true, "sim-1a"));
	path = doc_path(f, id);
	doc = json_load_file(path, 0, NULL);
	json_object_set_new(json_object_get(doc, "attrs"), "count", json_integer(5));
	assert_int_equal(json_dump_file(doc, path, JSON_INDENT(2)), 0);
	json_decref(doc);
	assert_int_equal(read_id(f, "sim_node_group", id, &live, &err), PROV_OK);
	assert_int_equal(attr_int(live, "count"), 5);
	json_decref(live);
	all = list_all(f, &scope_a, "sim_node_group", NULL);
	assert_int_equal(attr_int(json_array_get(all, 0), "count"), 5);
	json_decref(all);
	free(path);
	free(id);
}

/* --- threads --- */

#define THREADS 8
#define PER_THREAD 15

struct creator {
	struct sfx *f;
	int n;
	char shared_id[32];
	int failures;
};

static void *create_in_thread(void *arg)
{
	struct creator *c = arg;
	int i;

	for (i = 0; i < PER_THREAD + 2; i++) {
		struct kiln_error err = {{0}, {0}};
		char name[32], token[48];
		json_t *live = NULL;
		int rc;

		/* Every thread also retries its first create and uses one shared token. */
		snprintf(name, sizeof(name), "t%d-%d", c->n, i == PER_THREAD ? 0 : i);
		snprintf(token, sizeof(token), "tok-%s", name);
		if (i == PER_THREAD + 1) {
			snprintf(name, sizeof(name), "shared");
			snprintf(token, sizeof(token), "tok-shared");
		}
		rc = create(c->f, &scope_a, "sim_bucket", name, bucket_attrs(), token, &live, &err);
		if (rc != PROV_OK)
			c->failures++;
		else if (i == PER_THREAD + 1)
			snprintf(c->shared_id, sizeof(c->shared_id), "%s",
				 json_string_value(json_object_get(live, "id")));
		json_decref(live);
	}
	return NULL;
}

static void test_concurrent_creates_lose_nothing_and_duplicate_nothing(void **state)
{
	struct sfx *f = *state;
	struct creator c[THREADS];
	pthread_t th[THREADS];
	json_t *all, *seen = json_object();
	size_t i;

	sim_open(f);
	for (i = 0; i < THREADS; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].f = f;
		c[i].n = (int)i;
		pthread_create(&th[i], NULL, create_in_thread, &c[i]);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < THREADS; i++) {
		assert_int_equal(c[i].failures, 0);
		assert_string_equal(c[i].shared_id, c[0].shared_id);
	}
	all = list_all(f, &scope_a, "sim_bucket", NULL);
	assert_int_equal(json_array_size(all), THREADS * PER_THREAD + 1);
	for (i = 0; i < json_array_size(all); i++) {
		const char *addr =
		    json_string_value(json_object_get(json_array_get(all, i), "address"));

		assert_null(json_object_get(seen, addr));
		json_object_set_new(seen, addr, json_true());
	}
	json_decref(seen);
	json_decref(all);
}

#define PROCESSES 4
#define PER_PROCESS 10
#define SHARED 20

/* A child process: its own context, its own creates, and creates every child repeats. */
static int create_in_child(int n)
{
	struct prov_ctx *ctx = NULL;
	struct kiln_error err = {{0}, {0}};
	int i, bad = 0;

	if (provider_sim.open(&ctx, NULL, &err) != PROV_OK)
		return 1;
	for (i = 0; i < PER_PROCESS + SHARED; i++) {
		char name[32], token[48], *addr;
		struct prov_create op;
		json_t *attrs = bucket_attrs(), *live = NULL;

		if (i < PER_PROCESS)
			snprintf(name, sizeof(name), "p%d-%d", n, i);
		else
			snprintf(name, sizeof(name), "shared-%d", i - PER_PROCESS);
		snprintf(token, sizeof(token), "tok-%s", name);
		addr = xasprintf("sim_bucket.%s", name);
		op = (struct prov_create){addr, name, attrs, token};
		bad |= type_of("sim_bucket")->create(ctx, &scope_a, &op, &live, &err) != PROV_OK;
		json_decref(live);
		json_decref(attrs);
		free(addr);
	}
	provider_sim.close(ctx);
	return bad;
}

static void test_concurrent_processes_share_the_directory_safely(void **state)
{
	struct sfx *f = *state;
	pid_t pids[PROCESSES];
	int i, status;

	for (i = 0; i < PROCESSES; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0)
			_exit(create_in_child(i));
	}
	for (i = 0; i < PROCESSES; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	sim_open(f);
	assert_int_equal(list_count(f, &scope_a, "sim_bucket"), PROCESSES * PER_PROCESS + SHARED);
}

/* --- knobs --- */

static void assert_open_fails(struct sfx *f, const char *name, const char *value, const char *want)
{
	struct kiln_error err = {{0}, {0}};
	struct prov_ctx *ctx = NULL;

	setenv(name, value, 1);
	assert_int_equal(provider_sim.open(&ctx, f->spec, &err), PROV_ERROR);
	assert_null(ctx);
	assert_string_equal(err.msg, want);
	unsetenv(name);
}

static void test_a_malformed_knob_fails_open_naming_the_variable_and_its_form(void **state)
{
	struct sfx *f = *state;

	assert_open_fails(f, "KILN_SIM_FAIL_RATE", "2",
			  "sim: KILN_SIM_FAIL_RATE must be a probability from 0 to 1, like 0.05, "
			  "got '2'");
	assert_open_fails(f, "KILN_SIM_LATENCY_MS", "fast",
			  "sim: KILN_SIM_LATENCY_MS must be a whole number of milliseconds from 0 "
			  "to 600000, got 'fast'");
	assert_open_fails(f, "KILN_SIM_READY_MS", "-5",
			  "sim: KILN_SIM_READY_MS must be a whole number of milliseconds from 0 "
			  "to 600000, got '-5'");
	assert_open_fails(
	    f, "KILN_SIM_PAGE_SIZE", "0",
	    "sim: KILN_SIM_PAGE_SIZE must be a whole number from 1 to 10000, got '0'");
	assert_open_fails(f, "KILN_SIM_SEED", "abc",
			  "sim: KILN_SIM_SEED must be a whole number from 0 to "
			  "18446744073709551615, got 'abc'");
	assert_open_fails(f, "KILN_SIM_CAPACITY", "H100",
			  "sim: KILN_SIM_CAPACITY must be MODEL=NODES[,MODEL=NODES...], like "
			  "H100=8,A100=16, got 'H100'");
	assert_open_fails(f, "KILN_SIM_CAPACITY", "H100=8,A100=lots",
			  "sim: KILN_SIM_CAPACITY must be MODEL=NODES[,MODEL=NODES...], like "
			  "H100=8,A100=16, got 'H100=8,A100=lots'");
	assert_open_fails(f, "KILN_SIM_CAPACITY", "B200=4",
			  "sim: KILN_SIM_CAPACITY names GPU model 'B200', which the catalog does "
			  "not have");
	assert_open_fails(f, "KILN_SIM_PROFILE", "gcp",
			  "sim: KILN_SIM_PROFILE must be 'aws' or empty, got 'gcp'");
	assert_open_fails(f, "KILN_SIM_TIME_SCALE", "0",
			  "sim: KILN_SIM_TIME_SCALE must be a number from 0.0001 to 100, like "
			  "0.01, got '0'");
}

static void test_the_aws_profile_times_each_type_scaled_and_leaves_ready_ms_alone(void **state)
{
	struct sfx *f = *state;
	const struct sim_kind *lustre = sim_kind_find("sim_lustre");
	const struct sim_kind *bucket = sim_kind_find("sim_bucket");
	const struct sim_kind *nodes = sim_kind_find("sim_node_group");

	/* Without a profile: KILN_SIM_READY_MS for the delayed types, nothing for the rest. */
	setenv("KILN_SIM_READY_MS", "150", 1);
	sim_open(f);
	assert_int_equal(sim_ready_ms(f->ctx, lustre), 150);
	assert_int_equal(sim_delete_ms(f->ctx, lustre), 150);
	assert_int_equal(sim_ready_ms(f->ctx, bucket), 0);
	assert_int_equal(sim_create_ms(f->ctx, lustre), 0);
	assert_int_equal(f->ctx->health_ms, 0);
	/* FSx for Lustre: ten minutes to AVAILABLE, five to delete, a second to answer. */
	setenv("KILN_SIM_PROFILE", "aws", 1);
	setenv("KILN_SIM_TIME_SCALE", "0.01", 1);
	sim_open(f);
	assert_int_equal(sim_ready_ms(f->ctx, lustre), 6000);
	assert_int_equal(sim_delete_ms(f->ctx, lustre), 3000);
	assert_int_equal(sim_create_ms(f->ctx, lustre), 10);
	assert_int_equal(sim_ready_ms(f->ctx, nodes), 600);
	assert_int_equal(sim_ready_ms(f->ctx, bucket), 0);
	assert_int_equal(f->ctx->health_ms, 1800);
	/* A health delay given outright wins over the profile's. */
	setenv("KILN_SIM_HEALTH_MS", "7", 1);
	sim_open(f);
	assert_int_equal(f->ctx->health_ms, 7);
}

static void test_under_the_profile_a_create_answers_pending_with_its_dns_name(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;

	setenv("KILN_SIM_PROFILE", "aws", 1);
	setenv("KILN_SIM_TIME_SCALE", "0.001", 1);
	sim_open(f);
	assert_int_equal(create(f, &scope_a, "sim_lustre", "scratch",
				json_pack("{s:i, s:i, s:n, s:s, s:b, s:s}", "capacity_gb", 1200,
					  "throughput_per_tib", 125, "import", "mount", "/fsx",
					  "encrypted", 1, "deletion", "delete"),
				NULL, &live, &err),
			 PROV_OK);
	/* Created, not ready: what a dependant that needs only created reads is there. */
	assert_string_equal(json_string_value(json_object_get(live, "status")), "pending");
	assert_non_null(
	    json_string_value(json_object_get(json_object_get(live, "attrs"), "dns_name")));
	json_decref(live);
}

/* --- the provider table --- */

static void test_the_provider_table_finds_sim_and_its_types_and_policies(void **state)
{
	const struct provider *p = provider_find("sim");
	const struct prov_type *t;
	size_t i;
	int v;

	(void)state;
	assert_ptr_equal(p, &provider_sim);
	assert_true(p->simulated);
	assert_null(provider_find("gcp"));
	assert_null(provider_find(NULL));
	assert_int_equal(p->ntypes, 9); /* sim_capacity_block is the ninth */
	t = provider_type(p, "sim_node_group");
	assert_non_null(t);
	assert_null(provider_type(p, "aws_vpc"));
	assert_int_equal(provider_type_attr(t, "count")->policy, POLICY_LIVE);
	assert_int_equal(provider_type_attr(t, "instance_type")->policy, POLICY_STOP);
	assert_int_equal(provider_type_attr(t, "zones")->policy, POLICY_REPLACE);
	assert_null(provider_type_attr(t, "join_token"));
	assert_string_equal(provider_policy_name(POLICY_LIVE), "live");
	assert_string_equal(provider_policy_name(POLICY_REPLACE), "replace");
	assert_string_equal(provider_policy_name(POLICY_STOP), "stop");
	assert_string_equal(p->catalog(NULL)->date, "2026-11-01");
	for (i = 0; i < p->ntypes; i++) {
		size_t j;

		assert_true(str_starts_with(p->types[i].name, "sim_"));
		for (j = 0; j < p->types[i].nattrs; j++)
			assert_true(p->types[i].attrs[j].why && *p->types[i].attrs[j].why);
		for (v = VERB_LIST; v <= VERB_DELETE; v++) {
			const char *const *a = p->iam_actions(p->types[i].name, (enum prov_verb)v);

			assert_non_null(a);
			assert_non_null(a[0]);
			assert_true(str_starts_with(a[0], "sim:"));
		}
	}
	assert_string_equal(p->iam_actions("sim_node_group", VERB_CREATE)[0],
			    "sim:CreateNodeGroup");
	assert_null(p->iam_actions("aws_vpc", VERB_LIST));
}

/* --- expand --- */

static json_t *expand_file(struct sfx *f, const char *path)
{
	struct kiln_error err = {{0}, {0}};
	json_t *out = NULL;

	if (validate_load(&f->spec, path, NULL, &f->d) != 0) {
		diags_dump(&f->d);
		fail_msg("%s does not validate", path);
	}
	sim_open(f);
	if (provider_sim.expand(f->ctx, f->spec, &out, &err) != PROV_OK)
		fail_msg("expand %s: %s", path, err.msg);
	f->json = out;
	return out;
}

static char *keys_of(const json_t *obj)
{
	struct strbuf sb = {0};
	const char **v = xcalloc(json_object_size(obj) + 1, sizeof(*v));
	const char *key;
	const json_t *val;
	size_t n = 0, i, j;

	json_object_foreach_const(obj, key, val)
	{
		for (i = n; i > 0 && strcmp(v[i - 1], key) > 0; i--)
			v[i] = v[i - 1];
		v[i] = key;
		n++;
	}
	for (j = 0; j < n; j++)
		sb_addf(&sb, "%s%s", j ? " " : "", v[j]);
	free(v);
	return sb_detach(&sb);
}

static void assert_deps(const json_t *all, const char *addr, const char *want)
{
	const json_t *deps = json_object_get(json_object_get(all, addr), "deps");
	struct strbuf sb = {0};
	size_t i;

	if (!deps)
		fail_msg("no resource %s", addr);
	for (i = 0; i < json_array_size(deps); i++)
		sb_addf(&sb, "%s%s", i ? " " : "", json_string_value(json_array_get(deps, i)));
	assert_string_equal(sb.buf ? sb.buf : "", want);
	sb_release(&sb);
}

static void test_expand_of_the_quickstart_gives_its_addresses_and_deps(void **state)
{
	struct sfx *f = *state;
	json_t *all = expand_file(f, "examples/quickstart.yaml"), *g;
	char *keys = keys_of(all);

	assert_string_equal(keys, "sim_bucket.checkpoints sim_network.main "
				  "sim_node_group.trainers sim_role.trainer "
				  "sim_role_policy.trainer");
	free(keys);
	assert_deps(all, "sim_network.main", "");
	assert_deps(all, "sim_node_group.trainers",
		    "sim_network.main sim_role.trainer sim_role_policy.trainer");
	assert_deps(all, "sim_role_policy.trainer", "sim_bucket.checkpoints sim_role.trainer");
	g = json_object_get(all, "sim_node_group.trainers");
	assert_string_equal(json_string_value(json_object_get(g, "type")), "sim_node_group");
	assert_string_equal(json_string_value(json_object_get(g, "name")), "trainers");
	assert_string_equal(attr_str(g, "instance_type"), "p5.48xlarge");
	assert_int_equal(attr_int(g, "count"), 2);
	assert_string_equal(attr_str(g, "market"), "on-demand");
	assert_string_equal(attr_str(g, "role"), "trainer");
	assert_true(json_is_false(json_object_get(json_object_get(g, "attrs"), "efa")));
	assert_true(json_is_null(json_object_get(json_object_get(g, "attrs"), "placement_group")));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(g, "why"), "instance_type")),
	    "cheapest with 8× H100: p5.48xlarge at $98.32/h on-demand; no other type has 8× H100");
	assert_string_equal(json_string_value(json_array_get(json_object_get(g, "sensitive"), 0)),
			    "join_token");
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(json_object_get(g, "attrs"), "zones"), 0)),
			    "sim-1a");
	g = json_object_get(all, "sim_bucket.checkpoints");
	assert_int_equal(attr_int(g, "expire_noncurrent_after"), 30 * 86400);
	assert_string_equal(attr_str(g, "deletion"), "retain");
	assert_string_equal(attr_str(json_object_get(all, "sim_network.main"), "fabric"), "ena");
}

static void test_expand_of_llm_pretrain_on_sim_gives_every_resource_and_dep(void **state)
{
	struct sfx *f = *state;
	json_t *all = expand_file(f, "tests/specs/valid/sim-llm-pretrain.yaml"), *g, *in;
	char *keys = keys_of(all);

	assert_string_equal(keys, "sim_bucket.checkpoints sim_bucket.datasets sim_lustre.scratch "
				  "sim_network.main sim_nfs.home sim_node_group.login "
				  "sim_node_group.trainers sim_placement_group.fabric "
				  "sim_role.login sim_role.trainer sim_role_policy.login "
				  "sim_role_policy.trainer");
	free(keys);
	assert_deps(all, "sim_placement_group.fabric", "sim_network.main");
	assert_deps(all, "sim_node_group.trainers",
		    "sim_lustre.scratch sim_network.main sim_nfs.home sim_placement_group.fabric "
		    "sim_role.trainer sim_role_policy.trainer");
	/* login's role reaches home, not scratch: it mounts home only. */
	assert_deps(all, "sim_node_group.login",
		    "sim_network.main sim_nfs.home sim_role.login sim_role_policy.login");
	assert_deps(all, "sim_lustre.scratch", "sim_bucket.datasets sim_network.main");
	assert_deps(all, "sim_nfs.home", "sim_network.main");
	assert_deps(all, "sim_bucket.datasets", "");
	assert_deps(all, "sim_role.trainer", "");
	/* Lustre grants nothing, so the policy does not wait for it. */
	assert_deps(all, "sim_role_policy.trainer",
		    "sim_bucket.checkpoints sim_bucket.datasets sim_nfs.home sim_role.trainer");
	assert_deps(all, "sim_role_policy.login",
		    "sim_bucket.checkpoints sim_nfs.home sim_role.login");
	g = json_object_get(all, "sim_node_group.trainers");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(g, "why"), "instance_type")),
	    "cheapest with 8× H100 and EFA: p5.48xlarge at $98.32/h on-demand; no other type has "
	    "8× H100 and EFA");
	assert_true(json_is_true(json_object_get(json_object_get(g, "attrs"), "efa")));
	assert_string_equal(attr_str(g, "placement_group"), "fabric");
	assert_int_equal(attr_int(g, "disk_size_gb"), 1024);
	assert_int_equal(json_array_size(json_object_get(json_object_get(g, "attrs"), "zones")), 2);
	g = json_object_get(all, "sim_node_group.login");
	assert_string_equal(attr_str(g, "instance_type"), "m7i.xlarge");
	assert_null(json_object_get(json_object_get(g, "why"), "instance_type"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(g, "why"), "efa")),
			    "m7i.xlarge has no EFA: this group reaches the fabric's network over "
			    "ENA and stays out of the placement group");
	assert_true(json_is_true(json_object_get(json_object_get(g, "attrs"), "public")));
	/* The same shape as aws's: buckets, nfs stores apart, lustre nowhere. */
	g = json_object_get(all, "sim_role_policy.trainer");
	assert_int_equal(json_array_size(json_object_get(json_object_get(g, "attrs"), "read")), 1);
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(json_object_get(g, "attrs"), "read"), 0)),
			    "datasets");
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(json_object_get(g, "attrs"), "nfs_read"), 0)),
			    "home");
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(json_object_get(g, "attrs"), "write"), 0)),
			    "checkpoints");
	assert_int_equal(json_array_size(json_object_get(json_object_get(g, "attrs"), "write")), 1);
	g = json_object_get(all, "sim_lustre.scratch");
	assert_string_equal(attr_str(g, "import"), "datasets");
	assert_int_equal(attr_int(g, "throughput_per_tib"), 250);
	in = json_array_get(
	    json_object_get(json_object_get(json_object_get(all, "sim_network.main"), "attrs"),
			    "ingress"),
	    0);
	assert_int_equal(json_integer_value(json_object_get(in, "port_from")), 22);
	assert_string_equal(json_string_value(json_object_get(in, "from")), "203.0.113.0/24");
	assert_string_equal(json_string_value(json_object_get(in, "protocol")), "tcp");
}

/* Create every desired resource once its deps exist, as the executor would. */
static void create_in_dependency_order(struct sfx *f, const json_t *all, json_t *live)
{
	size_t done = 0, total = json_object_size(all), before;

	do {
		const char *addr;
		const json_t *r;

		before = done;
		json_object_foreach_const(all, addr, r)
		{
			json_t *deps = json_object_get(r, "deps"), *out = NULL;
			struct kiln_error err = {{0}, {0}};
			size_t i;

			if (json_object_get(live, addr))
				continue;
			for (i = 0; i < json_array_size(deps); i++)
				if (!json_object_get(live,
						     json_string_value(json_array_get(deps, i))))
					break;
			if (i < json_array_size(deps))
				continue;
			if (create(f, &scope_a, json_string_value(json_object_get(r, "type")),
				   json_string_value(json_object_get(r, "name")),
				   json_deep_copy(json_object_get(r, "attrs")), addr, &out,
				   &err) != PROV_OK)
				fail_msg("create %s: %s", addr, err.msg);
			json_object_set_new(live, addr, out);
			done++;
		}
	} while (done > before && done < total);
	assert_int_equal(done, total);
}

static void test_every_expanded_resource_can_be_created_in_dependency_order(void **state)
{
	struct sfx *f = *state;
	json_t *all = expand_file(f, "tests/specs/valid/sim-llm-pretrain.yaml");
	json_t *live = f->live = json_object(), *policy, *doc, *stmts;
	const char *bucket_arn, *nfs_arn;
	size_t i;

	create_in_dependency_order(f, all, live);
	policy = json_object_get(live, "sim_role_policy.trainer");
	doc = json_loads(attr_str(policy, "policy_document"), 0, NULL);
	assert_non_null(doc);
	bucket_arn = attr_str(json_object_get(live, "sim_bucket.datasets"), "arn");
	nfs_arn = attr_str(json_object_get(live, "sim_nfs.home"), "arn");
	assert_true(str_starts_with(bucket_arn, "arn:sim:s3:::demo-datasets-"));
	/* Buckets read and written, home mounted; scratch (lustre) grants nothing. */
	stmts = json_object_get(doc, "Statement");
	assert_int_equal(json_array_size(stmts), 3);
	for (i = 0; i < json_array_size(stmts); i++) {
		json_t *s = json_array_get(stmts, i);
		const char *sid = json_string_value(json_object_get(s, "Sid"));
		json_t *res = json_object_get(s, "Resource");

		if (strcmp(sid, "ObjectRead") == 0) {
			assert_string_equal(json_string_value(json_array_get(res, 0)), bucket_arn);
			assert_int_equal(json_array_size(res), 2);
		} else if (strcmp(sid, "FileSystemRead") == 0) {
			assert_string_equal(json_string_value(json_array_get(res, 0)), nfs_arn);
			assert_int_equal(json_array_size(res), 1);
		}
	}
	assert_string_equal(attr_str(policy, "role_arn"),
			    attr_str(json_object_get(live, "sim_role.trainer"), "arn"));
	assert_int_equal(list_count(f, &scope_a, "sim_node_group"), 2);
	assert_int_equal(list_count(f, &scope_a, "sim_role_policy"), 2);
	json_decref(doc);
}

static void test_a_policy_naming_a_store_that_does_not_exist_is_refused(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *live = NULL;

	sim_open(f);
	free(create_ok(f, &scope_a, "sim_role", "trainer", json_pack("{s:s}", "service", "ec2")));
	assert_int_equal(create(f, &scope_a, "sim_role_policy", "trainer",
				json_pack("{s:[], s:[s]}", "read", "write", "ghost"), NULL, &live,
				&err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "sim: NoSuchEntity (simulated): the policy of role 'trainer' "
				     "names store 'ghost', which does not exist in demo/default");
	assert_int_equal(list_count(f, &scope_a, "sim_role_policy"), 0);
}

static int expand_text(struct sfx *f, const char *yaml, struct kiln_error *err)
{
	json_t *out = NULL;
	int rc;

	if (load_validate(&f->spec, yaml, &f->d) != 0) {
		diags_dump(&f->d);
		fail_msg("the spec does not validate");
	}
	sim_open(f);
	rc = provider_sim.expand(f->ctx, f->spec, &out, err);
	f->json = out;
	return rc;
}

/*
 * Expand what only loads: validate refuses a group the catalog lacks (see
 * test_validate_refuses_*), and expand must still refuse it, not crash.
 */
static int expand_unvalidated(struct sfx *f, const char *yaml, struct kiln_error *err)
{
	json_t *out = NULL;
	int rc;

	if (load_spec_opts(&f->spec, yaml, NULL, &f->d) != 0) {
		diags_dump(&f->d);
		fail_msg("the spec does not load");
	}
	sim_open(f);
	rc = provider_sim.expand(f->ctx, f->spec, &out, err);
	f->json = out;
	return rc;
}

static void test_validate_refuses_a_gpu_and_a_type_the_catalog_lacks(void **state)
{
	struct sfx *f = *state;

	assert_int_equal(load_validate(&f->spec,
				       "kiln: 1\n"
				       "cluster: demo\n"
				       "provider: {name: sim}\n"
				       "compute:\n"
				       "  trainers:\n"
				       "    gpu: B300:8\n"
				       "  login:\n"
				       "    instance_type: m7i.xlarg\n",
				       &f->d),
			 -1);
	assert_int_equal(f->d.errors, 2);
	assert_int_equal(f->d.v[0].line, 6);
	assert_int_equal(f->d.v[0].col, 10);
	assert_string_equal(f->d.v[0].message,
			    "compute.trainers.gpu: the catalog (aws us-east-1, prices of "
			    "2026-11-01) has no GPU model 'B300'; it has: A10G, A100, H100, H200, "
			    "L4, L40S, TRN1, V100");
	assert_string_equal(f->d.v[0].hint, "write gpu: MODEL:COUNT with one of those models, "
					    "or name an instance_type: instead");
	assert_int_equal(f->d.v[1].line, 8);
	assert_int_equal(f->d.v[1].col, 20);
	assert_string_equal(f->d.v[1].message,
			    "compute.login.instance_type: 'm7i.xlarg' is not in the catalog (aws "
			    "us-east-1, prices of 2026-11-01); close names: m7i.xlarge, m7i.large, "
			    "m7i.2xlarge");
	assert_string_equal(f->d.v[1].hint, "did you mean 'm7i.xlarge'?");
}

static void test_expand_of_an_unknown_gpu_gives_the_catalog_message(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};

	assert_int_equal(expand_unvalidated(f,
					    "kiln: 1\n"
					    "cluster: demo\n"
					    "provider: {name: sim}\n"
					    "compute:\n"
					    "  trainers:\n"
					    "    gpu: B200:8\n",
					    &err),
			 PROV_ERROR);
	assert_null(f->json);
	assert_string_equal(err.msg, "sim: t.yaml:6:10: compute.trainers.gpu: the catalog (aws "
				     "us-east-1, prices of 2026-11-01) has no GPU model 'B200'; it "
				     "has: A10G, A100, H100, H200, L4, L40S, TRN1, V100");
	assert_string_equal(err.hint, "did you mean 'H200'?");
}

static void test_expand_of_an_unknown_instance_type_lists_close_names(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};

	assert_int_equal(expand_unvalidated(f,
					    "kiln: 1\n"
					    "cluster: demo\n"
					    "provider: {name: sim}\n"
					    "compute:\n"
					    "  login:\n"
					    "    instance_type: m7i.xlarg\n",
					    &err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "sim: t.yaml:6:20: compute.login.instance_type: 'm7i.xlarg' "
				     "is not in the catalog (aws us-east-1, prices of 2026-11-01); "
				     "close names: m7i.xlarge, m7i.large, m7i.2xlarge");
	assert_string_equal(err.hint, "did you mean 'm7i.xlarge'?");
}

static void test_expand_prices_a_spot_group_at_the_spot_price(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *g;

	assert_int_equal(expand_text(f,
				     "kiln: 1\n"
				     "cluster: demo\n"
				     "provider: {name: sim}\n"
				     "compute:\n"
				     "  tuners:\n"
				     "    gpu: A100:8\n"
				     "    market: spot\n",
				     &err),
			 PROV_OK);
	g = json_object_get(f->json, "sim_node_group.tuners");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(g, "why"), "instance_type")),
	    "cheapest with 8× A100: p4d.24xlarge at $13.11/h spot; runner-up p4de.24xlarge at "
	    "$16.39/h");
	assert_string_equal(attr_str(g, "market"), "spot");
	/* No network section, but a group needs one. */
	assert_non_null(json_object_get(f->json, "sim_network.main"));
}

/* A role policy's allow statements follow its store statements, as written. */
static void test_a_role_policy_holds_its_allow_statements_verbatim(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *attrs = json_loads(
	    "{\"read\":[\"data\"],\"write\":[],\"allow\":["
	    "{\"actions\":[\"ecr:BatchGetImage\"],"
	    "\"resources\":[\"arn:aws:ecr:us-east-1:123456789012:repository/train\"]},"
	    "{\"actions\":[\"sim:DescribeNodeGroups\"],\"resources\":[\"*\"],\"sid\":\"Nodes\"}]}",
	    0, NULL);
	json_t *live = NULL;
	char *data, *bucket_arn, *want, *planned;

	sim_open(f);
	data = create_ok(f, &scope_a, "sim_bucket", "data", bucket_attrs());
	free(create_ok(f, &scope_a, "sim_role", "trainer", json_pack("{s:s}", "service", "ec2")));
	assert_int_equal(read_id(f, "sim_bucket", data, &f->live, &err), PROV_OK);
	bucket_arn = xstrdup(attr_str(f->live, "arn"));
	assert_int_equal(create(f, &scope_a, "sim_role_policy", "trainer", json_incref(attrs), NULL,
				&live, &err),
			 PROV_OK);
	want = xasprintf(
	    "{\"Statement\":[{\"Action\":[\"sim:GetObject\",\"sim:ListBucket\"],\"Effect\":"
	    "\"Allow\",\"Resource\":[\"%s\",\"%s/*\"],\"Sid\":\"ObjectRead\"},"
	    "{\"Action\":[\"ecr:BatchGetImage\"],\"Effect\":\"Allow\",\"Resource\":"
	    "[\"arn:aws:ecr:us-east-1:123456789012:repository/train\"]},"
	    "{\"Action\":[\"sim:DescribeNodeGroups\"],\"Effect\":\"Allow\",\"Resource\":[\"*\"],"
	    "\"Sid\":\"Nodes\"}],\"Version\":\"2012-10-17\"}",
	    bucket_arn, bucket_arn);
	assert_string_equal(attr_str(live, "policy_document"), want);
	/* The attrs read back as given: no change on the next plan. */
	assert_true(json_equal(json_object_get(json_object_get(live, "attrs"), "allow"),
			       json_object_get(attrs, "allow")));
	/* Compiled for the plan, the same document; a store not made yet is a pattern. */
	planned = sim_role_policy_compile(f->ctx, &scope_a, attrs);
	assert_string_equal(planned, want);
	free(planned);
	json_object_set_new(attrs, "write", json_pack("[s]", "ckpt"));
	planned = sim_role_policy_compile(f->ctx, &scope_a, attrs);
	assert_non_null(strstr(planned, "\"Resource\":[\"arn:sim:s3:::demo-ckpt-*\","
					"\"arn:sim:s3:::demo-ckpt-*/*\"],\"Sid\":\"ObjectWrite\""));
	free(planned);
	json_decref(live);
	free(want);
	free(bucket_arn);
	free(data);
	json_decref(attrs);
}

static void test_an_nfs_store_is_mounted_and_a_lustre_store_grants_nothing(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *attrs =
	    json_loads("{\"read\":[],\"write\":[\"scratch\"],\"nfs_write\":[\"home\"]}", 0, NULL);
	json_t *live = NULL;
	char *home, *want, *planned;

	sim_open(f);
	/* Planned before the stores exist: the file system is known after apply. */
	json_object_set_new(attrs, "write", json_array());
	planned = sim_role_policy_compile(f->ctx, &scope_a, attrs);
	json_object_set_new(attrs, "write", json_pack("[s]", "scratch"));
	assert_string_equal(planned, "{\"Statement\":[{\"Action\":[\"sim:ClientMount\","
				     "\"sim:ClientWrite\"],\"Effect\":\"Allow\",\"Resource\":["
				     "\"(known after apply: sim_nfs.home)\"],\"Sid\":"
				     "\"FileSystemWrite\"}],\"Version\":\"2012-10-17\"}");
	free(planned);
	free(create_ok(f, &scope_a, "sim_lustre", "scratch",
		       json_pack("{s:i}", "capacity_gb", 1200)));
	home = create_ok(f, &scope_a, "sim_nfs", "home", json_pack("{s:s}", "mount", "/home"));
	free(create_ok(f, &scope_a, "sim_role", "trainer", json_pack("{s:s}", "service", "ec2")));
	assert_int_equal(read_id(f, "sim_nfs", home, &f->live, &err), PROV_OK);
	assert_int_equal(create(f, &scope_a, "sim_role_policy", "trainer", json_incref(attrs), NULL,
				&live, &err),
			 PROV_OK);
	/* The lustre store written to adds nothing: Lustre clients mount without IAM. */
	want = xasprintf("{\"Statement\":[{\"Action\":[\"sim:ClientMount\",\"sim:ClientWrite\"],"
			 "\"Effect\":\"Allow\",\"Resource\":[\"%s\"],\"Sid\":"
			 "\"FileSystemWrite\"}],\"Version\":\"2012-10-17\"}",
			 attr_str(f->live, "arn"));
	assert_string_equal(attr_str(live, "policy_document"), want);
	planned = sim_role_policy_compile(f->ctx, &scope_a, attrs);
	assert_string_equal(planned, want);
	free(planned);
	free(want);
	free(home);
	json_decref(live);
	json_decref(attrs);
}

static void test_a_malformed_allow_statement_is_refused_by_the_sim(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	static const char *const bad[] = {
	    "{\"allow\":{\"actions\":[\"a:B\"],\"resources\":[\"*\"]}}",
	    "{\"allow\":[{\"actions\":[],\"resources\":[\"*\"]}]}",
	    "{\"allow\":[{\"actions\":[\"a:B\"]}]}",
	    "{\"allow\":[{\"actions\":[\"a:B\"],\"resources\":[\"*\"],\"sid\":\"no-dash\"}]}",
	};
	json_t *live = NULL;
	size_t i;

	sim_open(f);
	free(create_ok(f, &scope_a, "sim_role", "trainer", json_pack("{s:s}", "service", "ec2")));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(create(f, &scope_a, "sim_role_policy", "trainer",
					json_loads(bad[i], 0, NULL), NULL, &live, &err),
				 PROV_ERROR);
		assert_string_equal(
		    err.msg, "sim: MalformedPolicyDocument (simulated): allow must be a list "
			     "of {actions: [..], resources: [..], sid?} with non-empty lists "
			     "and a sid of letters and digits");
		assert_null(live);
	}
	assert_int_equal(list_count(f, &scope_a, "sim_role_policy"), 0);
}

static void test_expand_puts_a_role_s_allow_in_its_policy_sorted(void **state)
{
	struct sfx *f = *state;
	struct kiln_error err = {{0}, {0}};

	assert_int_equal(
	    expand_text(
		f,
		"kiln: 1\n"
		"cluster: t\n"
		"provider: {name: sim}\n"
		"compute:\n"
		"  g: {instance_type: m7i.xlarge, role: trainer}\n"
		"iam:\n"
		"  roles:\n"
		"    trainer:\n"
		"      allow:\n"
		"        - {actions: [sim:B, sim:A, sim:B], resources: [\"arn:x:y:::z\", \"*\"]}\n"
		"        - {sid: First, actions: [sim:C], resources: [\"*\"]}\n"
		"    login:\n",
		&err),
	    PROV_OK);
	{
		const json_t *t = json_object_get(
		    json_object_get(json_object_get(f->json, "sim_role_policy.trainer"), "attrs"),
		    "allow");
		const json_t *l = json_object_get(
		    json_object_get(json_object_get(f->json, "sim_role_policy.login"), "attrs"),
		    "allow");
		char *text = json_dumps(t, JSON_COMPACT | JSON_SORT_KEYS);

		assert_string_equal(text, "[{\"actions\":[\"sim:A\",\"sim:B\"],\"resources\":"
					  "[\"*\",\"arn:x:y:::z\"]},{\"actions\":[\"sim:C\"],"
					  "\"resources\":[\"*\"],\"sid\":\"First\"}]");
		free(text);
		assert_null(l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    sim_test(test_a_created_resource_reads_back_with_its_tags),
	    sim_test(test_a_create_tags_its_lineage_and_claim_retags_nothing_else),
	    cmocka_unit_test(test_a_tag_value_keeps_only_what_every_cloud_accepts),
	    sim_test(test_list_returns_only_the_resources_of_its_scope_and_type),
	    sim_test(test_list_pages_through_five_resources_two_at_a_time),
	    sim_test(test_a_page_token_that_the_sim_never_gave_is_refused),
	    sim_test(test_create_with_the_same_token_twice_returns_the_same_resource),
	    sim_test(test_a_malformed_id_is_refused_and_an_unknown_one_is_not_found),
	    sim_test(test_an_input_the_type_does_not_have_is_refused),
	    sim_test(test_a_gang_bigger_than_capacity_fails_and_leaves_nothing),
	    sim_test(test_a_gang_that_does_not_fit_its_first_zone_moves_whole_to_the_next),
	    sim_test(test_a_group_that_is_not_a_gang_gets_the_nodes_that_fit),
	    sim_test(test_update_grows_and_shrinks_a_group_within_capacity),
	    sim_test(test_an_update_of_a_replace_attribute_is_refused),
	    sim_test(test_volumes_and_lustre_never_shrink_and_efa_needs_a_type_with_it),
	    sim_test(test_changing_only_the_role_keeps_the_nodes_where_they_are),
	    sim_test(test_a_node_group_is_pending_until_its_delay_has_passed),
	    sim_test(test_a_group_lists_its_nodes_with_simulated_addresses_from_the_network),
	    sim_test(test_a_node_reports_no_health_until_it_has_booted),
	    sim_test(test_replacing_a_node_launches_one_first_and_fails_whole_without_room),
	    sim_test(test_delete_then_wait_reports_the_group_gone_and_frees_its_nodes),
	    sim_test(test_a_type_without_delay_is_deleted_at_once),
	    sim_test(test_waiting_for_a_resource_that_does_not_exist_fails_it_alone),
	    sim_test(test_a_fail_rate_of_one_makes_every_call_retryable),
	    sim_test(test_a_create_whose_response_was_lost_is_not_duplicated_by_its_retry),
	    sim_test(test_the_same_seed_replays_the_same_faults),
	    sim_test(test_latency_is_spent_without_holding_a_lock),
	    sim_test(test_a_corrupt_resource_file_is_named_in_the_error),
	    sim_test(test_a_corrupt_usage_counter_is_named_in_the_error),
	    sim_test(test_a_symbolic_link_in_the_directory_is_not_followed),
	    sim_test(test_a_file_planted_at_a_temporary_name_is_not_written_through),
	    sim_test(test_an_index_marker_without_its_document_is_skipped),
	    sim_test(test_the_address_index_finds_a_store_and_falls_back_to_a_scan),
	    sim_test(test_read_and_list_report_a_drift_edit_of_the_file),
	    sim_test(test_concurrent_creates_lose_nothing_and_duplicate_nothing),
	    sim_test(test_concurrent_processes_share_the_directory_safely),
	    sim_test(test_a_malformed_knob_fails_open_naming_the_variable_and_its_form),
	    sim_test(test_the_aws_profile_times_each_type_scaled_and_leaves_ready_ms_alone),
	    sim_test(test_under_the_profile_a_create_answers_pending_with_its_dns_name),
	    sim_test(test_the_provider_table_finds_sim_and_its_types_and_policies),
	    sim_test(test_expand_of_the_quickstart_gives_its_addresses_and_deps),
	    sim_test(test_expand_of_llm_pretrain_on_sim_gives_every_resource_and_dep),
	    sim_test(test_every_expanded_resource_can_be_created_in_dependency_order),
	    sim_test(test_a_policy_naming_a_store_that_does_not_exist_is_refused),
	    sim_test(test_validate_refuses_a_gpu_and_a_type_the_catalog_lacks),
	    sim_test(test_expand_of_an_unknown_gpu_gives_the_catalog_message),
	    sim_test(test_expand_of_an_unknown_instance_type_lists_close_names),
	    sim_test(test_expand_prices_a_spot_group_at_the_spot_price),
	    sim_test(test_a_role_policy_holds_its_allow_statements_verbatim),
	    sim_test(test_a_malformed_allow_statement_is_refused_by_the_sim),
	    sim_test(test_an_nfs_store_is_mounted_and_a_lustre_store_grants_nothing),
	    sim_test(test_expand_puts_a_role_s_allow_in_its_policy_sorted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
