/*
 * test_aws_shared.c - the aws provider's shared listings: the lists of a
 * refresh that need one listing (EFS file systems for file systems and
 * mount targets, a scope's VPCs for what lives in them) make one call for
 * all their users, hand each a copy, and drop it once every user took it,
 * so the next refresh asks again; a call that failed for a while is not
 * shared and takes no user's turn, one whose retries ran out is shared.
 */
#include "testutil.h"

#include <pthread.h>

#include "aws/aws.h"
#include "aws/aws_int.h"
#include "aws/aws_storage.h"

static const struct prov_scope scope = {"demo", "default", NULL, NULL};
static const struct prov_scope other = {"demo", "other", NULL, NULL};

static int fetches;
static int fail_next; /* the status the next fetch fails with; 0: it does not */
static pthread_mutex_t fetch_mu = PTHREAD_MUTEX_INITIALIZER;

/* A listing that counts how often it was made, and says whose it was. */
static int fetch(struct prov_ctx *ctx, const struct prov_scope *s, const void *arg, json_t **out,
		 struct kiln_error *err)
{
	int n;

	(void)ctx;
	(void)arg;
	pthread_mutex_lock(&fetch_mu);
	n = ++fetches;
	pthread_mutex_unlock(&fetch_mu);
	if (fail_next) {
		int rc = fail_next;

		fail_next = 0;
		kiln_error_set(err, "aws: throttled");
		*out = NULL;
		return rc;
	}
	*out = json_pack("[{s:s, s:i}]", "workspace", s->workspace, "fetch", n);
	return PROV_OK;
}

struct sfx {
	struct diags d;
	struct spec *spec;
	struct prov_ctx *ctx;
};

static int sfx_setup(void **state)
{
	struct sfx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {{0}, {0}};

	*state = f;
	fetches = 0;
	fail_next = 0;
	if (load_validate(&f->spec,
			  "kiln: 1\ncluster: demo\nprovider: {name: aws, region: us-east-1}\n",
			  &f->d) != 0) {
		diags_dump(&f->d);
		return -1;
	}
	return provider_aws.open(&f->ctx, f->spec, &err) == 0 ? 0 : -1;
}

static int sfx_teardown(void **state)
{
	struct sfx *f = *state;

	if (f->ctx)
		provider_aws.close(f->ctx);
	spec_free(f->spec);
	diags_release(&f->d);
	free(f);
	return 0;
}

#define shared_test(fn) cmocka_unit_test_setup_teardown(fn, sfx_setup, sfx_teardown)

static void take(struct prov_ctx *ctx, const struct prov_scope *s, int users, int want_fetch)
{
	struct kiln_error err = {{0}, {0}};
	json_t *out = NULL;

	assert_int_equal(aws_shared_listing(ctx, "efs", users, s, fetch, NULL, &out, &err),
			 PROV_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(out, 0), "workspace")),
			    s->workspace);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(out, 0), "fetch")),
			 want_fetch);
	json_decref(out);
}

static void test_a_listing_is_made_once_for_its_users_then_asked_again(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;

	take(ctx, &scope, 2, 1);
	take(ctx, &scope, 2, 1);
	assert_int_equal(fetches, 1);
	/* Both users took it: the next refresh makes it again. */
	take(ctx, &scope, 2, 2);
	take(ctx, &scope, 2, 2);
	assert_int_equal(fetches, 2);
}

static void test_each_scope_has_its_own_listing(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;

	take(ctx, &scope, 2, 1);
	take(ctx, &other, 2, 2);
	take(ctx, &other, 2, 2);
	take(ctx, &scope, 2, 1);
	assert_int_equal(fetches, 2);
}

static void test_a_failed_listing_is_not_shared(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;
	struct kiln_error err = {{0}, {0}};
	json_t *out = NULL;

	fail_next = PROV_RETRY;
	assert_int_equal(aws_shared_listing(ctx, "efs", 2, &scope, fetch, NULL, &out, &err),
			 PROV_RETRY);
	assert_null(out);
	/*
	 * The failed call took no user's turn: the engine retries that list,
	 * and it and the other user share the next answer.
	 */
	take(ctx, &scope, 2, 2);
	take(ctx, &scope, 2, 2);
	take(ctx, &scope, 2, 3);
	take(ctx, &scope, 2, 3);
}

static void test_a_listing_that_gave_up_is_shared_not_sent_again(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;
	struct kiln_error err = {{0}, {0}}, err2 = {{0}, {0}};
	json_t *out = NULL;

	fail_next = PROV_GAVE_UP;
	assert_int_equal(aws_shared_listing(ctx, "efs", 2, &scope, fetch, NULL, &out, &err),
			 PROV_GAVE_UP);
	/* http.c's retries ran out: the other user gets that answer, with no call of its own. */
	assert_int_equal(aws_shared_listing(ctx, "efs", 2, &scope, fetch, NULL, &out, &err2),
			 PROV_GAVE_UP);
	assert_null(out);
	assert_string_equal(err2.msg, "aws: throttled");
	assert_int_equal(fetches, 1);
	/* Every user took it: the next refresh asks again. */
	take(ctx, &scope, 2, 2);
}

static void test_each_user_gets_its_own_copy(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;
	struct kiln_error err = {{0}, {0}};
	json_t *a = NULL, *b = NULL;

	assert_int_equal(aws_shared_listing(ctx, "efs", 2, &scope, fetch, NULL, &a, &err), PROV_OK);
	json_object_set_new(json_array_get(a, 0), "workspace", json_string("changed"));
	assert_int_equal(aws_shared_listing(ctx, "efs", 2, &scope, fetch, NULL, &b, &err), PROV_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(b, 0), "workspace")),
			    "default");
	json_decref(a);
	json_decref(b);
}

static int describes;

/* Every file system of a made-up type: one of the scope's, one of another workspace's. */
static int describe(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	(void)ctx;
	(void)err;
	assert_null(id);
	describes++;
	*out = json_pack("[{s:s, s:{s:s, s:s}}, {s:s, s:{s:s, s:s}}]", "id", "fs-1", "tags",
			 PROV_TAG_CLUSTER, "demo", PROV_TAG_WORKSPACE, "default", "id", "fs-2",
			 "tags", PROV_TAG_CLUSTER, "demo", PROV_TAG_WORKSPACE, "other");
	return PROV_OK;
}

static void test_a_storage_listing_keeps_the_scopes_items_for_both_its_types(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;
	struct kiln_error err = {{0}, {0}};
	json_t *a = NULL, *b = NULL;

	describes = 0;
	assert_int_equal(aws_storage_listing(ctx, "test", &scope, describe, &a, &err), PROV_OK);
	assert_int_equal(aws_storage_listing(ctx, "test", &scope, describe, &b, &err), PROV_OK);
	assert_int_equal(describes, 1);
	assert_int_equal(json_array_size(a), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "id")), "fs-1");
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
}

struct racer {
	struct prov_ctx *ctx;
	int fetch;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct kiln_error err = {{0}, {0}};
	json_t *out = NULL;

	if (aws_shared_listing(r->ctx, "vpc", 5, &scope, fetch, NULL, &out, &err) == PROV_OK)
		r->fetch =
		    (int)json_integer_value(json_object_get(json_array_get(out, 0), "fetch"));
	json_decref(out);
	return NULL;
}

static void test_users_on_threads_of_their_own_share_one_call(void **state)
{
	struct prov_ctx *ctx = ((struct sfx *)*state)->ctx;
	struct racer r[5];
	pthread_t th[5];
	int i;

	for (i = 0; i < 5; i++) {
		r[i].ctx = ctx;
		r[i].fetch = 0;
		assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < 5; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].fetch, 1);
	}
	assert_int_equal(fetches, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    shared_test(test_a_listing_is_made_once_for_its_users_then_asked_again),
	    shared_test(test_each_scope_has_its_own_listing),
	    shared_test(test_a_failed_listing_is_not_shared),
	    shared_test(test_a_listing_that_gave_up_is_shared_not_sent_again),
	    shared_test(test_each_user_gets_its_own_copy),
	    shared_test(test_a_storage_listing_keeps_the_scopes_items_for_both_its_types),
	    shared_test(test_users_on_threads_of_their_own_share_one_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
