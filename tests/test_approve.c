/*
 * test_approve.c - approvals of a saved plan: signing and verifying, keys
 * that are refused and why, the trusted keys directory, and approvals kept
 * in a plan file outside its digest.
 *
 * Every key is made here, in a fresh directory, so nothing depends on keys
 * checked into the repository.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "approve.h"
#include "plan.h"

#define T0 "2026-11-30T05:40:00Z"
#define T1 "2026-11-30T06:00:00Z"

struct fx {
	char dir[64];
	struct approve_key *alice, *bob;
	struct approve_keyring ring;
	struct approval_report rep;
	json_t *plan, *a1, *a2, *list;
	char *path;
	struct kiln_error err;
};

static char *fx_path(struct fx *f, const char *name)
{
	free(f->path);
	f->path = xasprintf("%s/%s", f->dir, name);
	return f->path;
}

/* A plan with one change: enough for plan.c's shape check and for a signature. */
static json_t *plan_new(int count)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s, s:s, s:{s:[s], s:{s:i}, s:{s:i}}}], "
			 "s:{s:i, s:s}}",
			 "format_version", PLAN_FORMAT_VERSION, "kiln_version", KILN_VERSION,
			 "resource_changes", "address", "sim_node_group.trainers", "type",
			 "sim_node_group", "name", "trainers", "change", "actions", "update",
			 "before", "count", 2, "after", "count", count, "kiln", "plan_version",
			 PLAN_VERSION, "cluster", "démo");
}

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	struct kiln_error err = {0};
	char *a, *b;

	strcpy(f->dir, "/tmp/kiln-test-approve-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	a = xasprintf("%s/alice", f->dir);
	b = xasprintf("%s/bob", f->dir);
	if (approve_key_generate(&f->alice, a, &err) < 0 ||
	    approve_key_generate(&f->bob, b, &err) < 0) {
		print_error("%s\n", err.msg);
		free(a);
		free(b);
		return -1;
	}
	free(a);
	free(b);
	f->plan = plan_new(4);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int rc = util_remove_tree(f->dir);

	approve_key_free(f->alice);
	approve_key_free(f->bob);
	approve_keyring_release(&f->ring);
	approve_report_release(&f->rep);
	json_decref(f->plan);
	json_decref(f->a1);
	json_decref(f->a2);
	json_decref(f->list);
	free(f->path);
	free(f);
	return rc;
}

#define approve_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* A directory holding the given public keys, as NAME.pub; loaded into f->ring. */
static void fx_trust(struct fx *f, const char *names)
{
	char *dir = xasprintf("%s/trusted", f->dir);
	char *list = xstrdup(names), *save = NULL, *name;

	mkdir(dir, 0755);
	for (name = strtok_r(list, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
		char *src = xasprintf("%s/%s.pub", f->dir, name);
		char *dst = xasprintf("%s/%s.pub", dir, name);

		assert_int_equal(link(src, dst), 0);
		free(src);
		free(dst);
	}
	assert_int_equal(approve_keyring_load(&f->ring, dir, &f->err), 0);
	free(list);
	free(dir);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	assert_int_equal(chmod(path, mode), 0);
}

static void verify(struct fx *f, const json_t *approvals, bool trusted)
{
	approve_report_release(&f->rep);
	assert_int_equal(
	    approve_verify(&f->rep, f->plan, approvals, trusted ? &f->ring : NULL, &f->err), 0);
}

/* ---- signing and verifying ---- */

static void test_a_signed_plan_verifies(void **state)
{
	struct fx *f = *state;

	f->a1 = approve_sign(f->alice, f->plan, "Alice <alice@example.com>", T0, &f->err);
	assert_non_null(f->a1);
	assert_string_equal(json_string_value(json_object_get(f->a1, "algorithm")), "ed25519");
	assert_string_equal(json_string_value(json_object_get(f->a1, "key_id")), f->alice->id);
	assert_string_equal(json_string_value(json_object_get(f->a1, "time")), T0);
	f->list = json_pack("[O]", f->a1);
	verify(f, f->list, false);
	assert_int_equal(f->rep.n, 1);
	assert_int_equal(f->rep.valid, 1);
	assert_int_equal(f->rep.v[0].status, APPROVAL_VALID);
	assert_string_equal(f->rep.v[0].signer, "Alice <alice@example.com>");
	assert_null(f->rep.v[0].trusted_by);
}

static void test_key_id_is_the_sha256_of_the_der_public_key(void **state)
{
	struct fx *f = *state;
	unsigned char *der = NULL;
	unsigned char md[32];
	unsigned int len = 0, i;
	char hex[65];
	int n = i2d_PUBKEY(f->alice->pkey, &der);

	assert_true(n > 0);
	EVP_Digest(der, (size_t)n, md, &len, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	assert_string_equal(f->alice->id + 7, hex);
	assert_true(str_starts_with(f->alice->id, "sha256:"));
	OPENSSL_free(der);
}

static void test_a_trusted_key_counts_and_is_named(void **state)
{
	struct fx *f = *state;

	fx_trust(f, "alice");
	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->list = json_pack("[O]", f->a1);
	verify(f, f->list, true);
	assert_int_equal(f->rep.valid, 1);
	assert_string_equal(f->rep.v[0].trusted_by, "alice.pub");
}

static void test_the_wrong_key_is_an_unknown_key(void **state)
{
	struct fx *f = *state;
	char *why;

	fx_trust(f, "alice");
	f->a1 = approve_sign(f->bob, f->plan, "bob", T0, &f->err);
	f->list = json_pack("[O]", f->a1);
	verify(f, f->list, true);
	assert_int_equal(f->rep.valid, 0);
	assert_int_equal(f->rep.v[0].status, APPROVAL_UNKNOWN_KEY);
	why = approve_check_describe(&f->rep.v[0], f->ring.dir);
	assert_true(str_starts_with(why, "unknown key: no *.pub file in /tmp/kiln-test-approve-"));
	assert_true(str_ends_with(why, "/trusted holds it"));
	free(why);
}

static void test_a_plan_changed_after_signing_fails(void **state)
{
	struct fx *f = *state;
	json_t *other = plan_new(5);
	char *why;

	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->list = json_pack("[O]", f->a1);
	json_decref(f->plan);
	f->plan = other;
	verify(f, f->list, false);
	assert_int_equal(f->rep.valid, 0);
	assert_int_equal(f->rep.v[0].status, APPROVAL_BAD_SIGNATURE);
	why = approve_check_describe(&f->rep.v[0], NULL);
	assert_string_equal(why, "bad signature: it does not verify over this plan with its "
				 "signer and time, so the plan or the approval changed after "
				 "signing");
	free(why);
}

static void test_signer_and_time_are_signed(void **state)
{
	struct fx *f = *state;

	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->a2 = json_deep_copy(f->a1);
	json_object_set_new(f->a1, "signer", json_string("mallory"));
	json_object_set_new(f->a2, "time", json_string(T1));
	f->list = json_pack("[O, O]", f->a1, f->a2);
	verify(f, f->list, false);
	assert_int_equal(f->rep.valid, 0);
	assert_int_equal(f->rep.v[0].status, APPROVAL_BAD_SIGNATURE);
	assert_int_equal(f->rep.v[1].status, APPROVAL_BAD_SIGNATURE);
}

static void test_a_signature_with_another_public_key_fails(void **state)
{
	struct fx *f = *state;

	/* Bob signs, and the approval claims Alice's key: the trusted key decides. */
	fx_trust(f, "alice");
	f->a1 = approve_sign(f->bob, f->plan, "alice", T0, &f->err);
	json_object_set_new(f->a1, "key_id", json_string(f->alice->id));
	json_object_set_new(f->a1, "public_key", json_string(f->alice->public_b64));
	f->list = json_pack("[O]", f->a1);
	verify(f, f->list, true);
	assert_int_equal(f->rep.v[0].status, APPROVAL_BAD_SIGNATURE);
	assert_int_equal(f->rep.valid, 0);
}

static void test_a_key_id_that_is_not_the_public_keys_is_malformed(void **state)
{
	struct fx *f = *state;

	f->a1 = approve_sign(f->bob, f->plan, "bob", T0, &f->err);
	json_object_set_new(f->a1, "key_id", json_string(f->alice->id));
	f->list = json_pack("[O]", f->a1);
	verify(f, f->list, false);
	assert_int_equal(f->rep.v[0].status, APPROVAL_MALFORMED);
	assert_string_equal(f->rep.v[0].why, "its key_id is not the SHA-256 of its public_key");
}

/* Each member spoiled in turn, and the message that names it. */
static void test_malformed_approvals_name_the_member(void **state)
{
	static const struct {
		const char *member, *value, *why;
	} cases[] = {
	    {"signature", "not base64!",
	     "its signature is not the base64 of a 64-byte Ed25519 signature"},
	    {"signature", "AAAA", "its signature is not the base64 of a 64-byte Ed25519 signature"},
	    {"algorithm", "rsa", "its algorithm is not \"ed25519\""},
	    {"time", "2026-02-30T00:00:00Z",
	     "its time is not a UTC time such as 2026-11-30T05:40:00Z"},
	    {"time", "2026-11-30 05:40:00",
	     "its time is not a UTC time such as 2026-11-30T05:40:00Z"},
	    {"signer", "alice\nbob",
	     "its signer is not 1 to 200 bytes of UTF-8 without control "
	     "characters"},
	    {"signer", "", "its signer is not 1 to 200 bytes of UTF-8 without control characters"},
	    {"key_id", "sha256:ABC", "its key_id is not \"sha256:\" and 64 hex digits"},
	    {"public_key", "AAAA", "its public_key is not the base64 of an Ed25519 public key"},
	};
	struct fx *f = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		json_t *a = approve_sign(f->alice, f->plan, "alice", T0, &f->err);

		json_object_set_new(a, cases[i].member, json_string(cases[i].value));
		json_decref(f->list);
		f->list = json_pack("[o]", a);
		verify(f, f->list, false);
		if (f->rep.v[0].status != APPROVAL_MALFORMED ||
		    strcmp(f->rep.v[0].why, cases[i].why) != 0)
			fail_msg("%s = %s: got %s (%s), want malformed: %s", cases[i].member,
				 cases[i].value, approve_status_name(f->rep.v[0].status),
				 f->rep.v[0].why, cases[i].why);
	}
	assert_int_equal(f->rep.valid, 0);
}

static void test_the_same_key_counts_once(void **state)
{
	struct fx *f = *state;

	fx_trust(f, "alice bob");
	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->a2 = approve_sign(f->alice, f->plan, "alice again", T1, &f->err);
	f->list = json_pack("[O, O]", f->a1, f->a2);
	verify(f, f->list, true);
	assert_int_equal(f->rep.valid, 1);
	assert_int_equal(f->rep.v[0].status, APPROVAL_VALID);
	assert_int_equal(f->rep.v[1].status, APPROVAL_DUPLICATE);
	assert_int_equal(f->rep.v[1].duplicate_of, 0);
}

static void test_two_trusted_keys_count_twice(void **state)
{
	struct fx *f = *state;

	fx_trust(f, "alice bob");
	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->a2 = approve_sign(f->bob, f->plan, "bob", T1, &f->err);
	f->list = json_pack("[O, O]", f->a1, f->a2);
	verify(f, f->list, true);
	assert_int_equal(f->rep.valid, 2);
}

static void test_approving_again_replaces_the_keys_approval(void **state)
{
	struct fx *f = *state;
	json_t *again, *out;

	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->a2 = approve_sign(f->bob, f->plan, "bob", T0, &f->err);
	f->list = json_pack("[O, O]", f->a1, f->a2);
	again = approve_sign(f->alice, f->plan, "alice", T1, &f->err);
	out = approve_replace(f->list, again);
	assert_int_equal(json_array_size(out), 2);
	assert_ptr_equal(json_array_get(out, 0), f->a2);
	assert_ptr_equal(json_array_get(out, 1), again);
	json_decref(again);
	json_decref(out);
}

static void test_sign_refuses_a_signer_with_a_newline(void **state)
{
	struct fx *f = *state;

	assert_null(approve_sign(f->alice, f->plan, "alice\nT0", T0, &f->err));
	assert_string_equal(f->err.msg, "the signer name must be 1 to 200 bytes of UTF-8 without "
					"control characters");
}

/* ---- keys ---- */

static void test_a_generated_key_loads_back(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL, *pub = NULL;
	struct stat st;

	assert_int_equal(stat(fx_path(f, "alice"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(approve_key_load_private(&k, f->path, &f->err), 0);
	assert_string_equal(k->id, f->alice->id);
	assert_int_equal(stat(fx_path(f, "alice.pub"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(approve_key_load_public(&pub, f->path, &f->err), 0);
	assert_string_equal(pub->id, f->alice->id);
	assert_string_equal(pub->name, "alice.pub");
	approve_key_free(k);
	approve_key_free(pub);
}

static void test_generate_does_not_overwrite_a_key(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL;
	char *want;

	assert_int_equal(approve_key_generate(&k, fx_path(f, "alice"), &f->err), -1);
	want = xasprintf("%s already exists; kiln does not overwrite a key", f->path);
	assert_string_equal(f->err.msg, want);
	free(want);
	assert_null(k);
}

/* Write pkey as a PEM private key to path, mode 0600, optionally encrypted. */
static void write_pkey(const char *path, EVP_PKEY *pkey, bool encrypt)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(PEM_write_PrivateKey(fp, pkey, encrypt ? EVP_aes_256_cbc() : NULL,
					      encrypt ? (unsigned char *)"secret" : NULL,
					      encrypt ? 6 : 0, NULL, NULL),
			 1);
	fclose(fp);
	chmod(path, 0600);
}

static void test_a_key_that_is_not_ed25519_is_refused(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL;
	EVP_PKEY *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	char *want;

	write_pkey(fx_path(f, "ec.pem"), ec, false);
	EVP_PKEY_free(ec);
	assert_int_equal(approve_key_load_private(&k, f->path, &f->err), -1);
	want = xasprintf("signing key %s holds a key of type EC, not Ed25519; kiln approvals are "
			 "Ed25519 signatures",
			 f->path);
	assert_string_equal(f->err.msg, want);
	assert_string_equal(f->err.hint, "make an Ed25519 key with: kiln approve --generate-key "
					 "FILE (or openssl genpkey -algorithm ed25519 -out FILE)");
	free(want);
}

static void test_an_encrypted_key_is_refused_without_a_prompt(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL;
	char *want;

	write_pkey(fx_path(f, "enc.pem"), f->alice->pkey, true);
	assert_int_equal(approve_key_load_private(&k, f->path, &f->err), -1);
	want =
	    xasprintf("signing key %s is encrypted; kiln reads only an unencrypted key", f->path);
	assert_string_equal(f->err.msg, want);
	free(want);
}

static void test_a_key_others_can_read_is_refused(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL;
	char *want;

	chmod(fx_path(f, "alice"), 0640);
	assert_int_equal(approve_key_load_private(&k, f->path, &f->err), -1);
	want = xasprintf("signing key %s may be read by group or others (mode 0640); kiln signs "
			 "only with a key that is private to its owner",
			 f->path);
	assert_string_equal(f->err.msg, want);
	free(want);
	want = xasprintf("chmod 600 %s", f->path);
	assert_string_equal(f->err.hint, want);
	free(want);
}

static void test_a_public_key_is_not_a_signing_key(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL;
	char *want;

	assert_int_equal(approve_key_load_private(&k, fx_path(f, "alice.pub"), &f->err), -1);
	want = xasprintf("signing key %s is a public key; --key takes the private key", f->path);
	assert_string_equal(f->err.msg, want);
	free(want);
}

static void test_a_missing_key_names_the_file_and_how_to_make_one(void **state)
{
	struct fx *f = *state;
	struct approve_key *k = NULL;
	char *want;

	assert_int_equal(approve_key_load_private(&k, fx_path(f, "nope"), &f->err), -1);
	want = xasprintf("cannot read signing key %s: No such file or directory", f->path);
	assert_string_equal(f->err.msg, want);
	assert_true(str_starts_with(f->err.hint, "make an Ed25519 key with:"));
	free(want);
}

/* ---- the trusted keys directory ---- */

static void test_trusted_dir_reads_only_pub_files_and_counts_a_key_once(void **state)
{
	struct fx *f = *state;
	char *dir = xstrdup(fx_path(f, "keys"));
	char *p;

	mkdir(dir, 0755);
	p = xasprintf("%s/README", dir);
	write_text(p, "the approvers' keys\n", 0644);
	free(p);
	p = xasprintf("%s/.hidden.pub", dir);
	write_text(p, "not a key\n", 0644);
	free(p);
	p = xasprintf("%s/alice.pub", dir);
	assert_int_equal(link(fx_path(f, "alice.pub"), p), 0);
	free(p);
	p = xasprintf("%s/alice-copy.pub", dir);
	assert_int_equal(link(fx_path(f, "alice.pub"), p), 0);
	free(p);
	assert_int_equal(approve_keyring_load(&f->ring, dir, &f->err), 0);
	assert_int_equal(f->ring.n, 1);
	/* Sorted by name: alice-copy.pub comes first and holds the key. */
	assert_string_equal(f->ring.keys[0]->name, "alice-copy.pub");
	assert_non_null(approve_keyring_find(&f->ring, f->alice->id));
	assert_null(approve_keyring_find(&f->ring, f->bob->id));
	free(dir);
}

static void test_trusted_dir_refuses_a_pub_file_that_is_not_a_key(void **state)
{
	struct fx *f = *state;
	char *dir = xstrdup(fx_path(f, "keys")), *junk, *want;

	mkdir(dir, 0755);
	junk = xasprintf("%s/junk.pub", dir);
	write_text(junk, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI junk@example\n", 0644);
	assert_int_equal(approve_keyring_load(&f->ring, dir, &f->err), -1);
	want = xasprintf("trusted key %s is not a PEM public key", junk);
	assert_string_equal(f->err.msg, want);
	free(want);
	want = xasprintf("write the public key of a signing key with: openssl pkey -in KEY "
			 "-pubout -out %s",
			 junk);
	assert_string_equal(f->err.hint, want);
	free(want);
	free(junk);
	free(dir);
}

static void test_trusted_dir_refuses_a_private_key(void **state)
{
	struct fx *f = *state;
	char *dir = xstrdup(fx_path(f, "keys")), *p, *want;

	mkdir(dir, 0755);
	p = xasprintf("%s/alice.pub", dir);
	assert_int_equal(link(fx_path(f, "alice"), p), 0);
	assert_int_equal(approve_keyring_load(&f->ring, dir, &f->err), -1);
	want = xasprintf("trusted key %s is a private key; a trusted key is a public key", p);
	assert_string_equal(f->err.msg, want);
	free(want);
	free(p);
	free(dir);
}

static void test_trusted_dir_without_keys_is_an_error(void **state)
{
	struct fx *f = *state;
	char *dir = xstrdup(fx_path(f, "empty")), *want;

	mkdir(dir, 0755);
	assert_int_equal(approve_keyring_load(&f->ring, dir, &f->err), -1);
	want = xasprintf("the trusted keys directory %s holds no key (no *.pub file)", dir);
	assert_string_equal(f->err.msg, want);
	free(want);
	free(dir);
}

static void test_a_missing_trusted_dir_is_named(void **state)
{
	struct fx *f = *state;
	char *want;

	assert_int_equal(approve_keyring_load(&f->ring, fx_path(f, "nope"), &f->err), -1);
	want = xasprintf("cannot read the trusted keys directory %s: No such file or directory",
			 f->path);
	assert_string_equal(f->err.msg, want);
	free(want);
}

/* ---- approvals in a plan file ---- */

static void test_plan_file_keeps_approvals_outside_the_digest(void **state)
{
	struct fx *f = *state;
	json_t *plan = NULL, *approvals = NULL, *file;
	json_error_t jerr;
	char *digest = plan_digest(f->plan);

	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->list = json_pack("[O]", f->a1);
	assert_int_equal(plan_file_write_approvals(fx_path(f, "p.kiln"), f->plan, f->list, &f->err),
			 0);
	file = json_load_file(f->path, 0, &jerr);
	assert_non_null(file);
	assert_string_equal(json_string_value(json_object_get(file, "digest")), digest);
	json_decref(file);
	assert_int_equal(plan_file_read_approvals(&plan, &approvals, f->path, &f->err), 0);
	assert_true(json_equal(approvals, f->list));
	assert_true(json_equal(plan, f->plan));
	verify(f, approvals, false);
	assert_int_equal(f->rep.valid, 1);
	json_decref(plan);
	json_decref(approvals);
	free(digest);
}

static void test_plan_file_without_approvals_reads_an_empty_list(void **state)
{
	struct fx *f = *state;
	json_t *plan = NULL, *approvals = NULL;

	assert_int_equal(plan_file_write(fx_path(f, "p.kiln"), f->plan, &f->err), 0);
	assert_int_equal(plan_file_read_approvals(&plan, &approvals, f->path, &f->err), 0);
	assert_true(json_is_array(approvals));
	assert_int_equal(json_array_size(approvals), 0);
	json_decref(plan);
	json_decref(approvals);
}

/* A plan file with approvals, rewritten by hand with one approval spoiled. */
static void refuse_shape(struct fx *f, const char *member, json_t *value, const char *want_tail)
{
	json_t *file, *plan = NULL;
	json_error_t jerr;
	char *want;

	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->list = json_pack("[O]", f->a1);
	assert_int_equal(plan_file_write_approvals(fx_path(f, "p.kiln"), f->plan, f->list, &f->err),
			 0);
	file = json_load_file(f->path, 0, &jerr);
	if (value)
		json_object_set_new(json_array_get(json_object_get(file, "approvals"), 0), member,
				    value);
	else
		json_object_del(json_array_get(json_object_get(file, "approvals"), 0), member);
	json_dump_file(file, f->path, JSON_INDENT(2));
	json_decref(file);
	assert_int_equal(plan_file_read(&plan, f->path, &f->err), -1);
	assert_null(plan);
	want = xasprintf("%s is not a valid kiln plan file: %s", f->path, want_tail);
	assert_string_equal(f->err.msg, want);
	assert_string_equal(f->err.hint, "approvals are what kiln approve writes; delete the "
					 "faulty one from \"approvals\" (the plan and its digest "
					 "stay as they are) and approve again");
	free(want);
}

static void test_plan_file_refuses_an_approval_with_an_unknown_member(void **state)
{
	refuse_shape(*state, "comment", json_string("lgtm"),
		     "approvals[0] has a member \"comment\" that an approval does not have");
}

static void test_plan_file_refuses_an_approval_without_a_signature(void **state)
{
	refuse_shape(*state, "signature", NULL, "approvals[0] has no \"signature\"");
}

static void test_plan_file_refuses_an_approval_member_that_is_not_a_string(void **state)
{
	refuse_shape(*state, "time", json_integer(1),
		     "approvals[0].time is an integer, not a string");
}

static void test_an_edited_approved_plan_says_its_approvals_do_not_cover_it(void **state)
{
	struct fx *f = *state;
	json_t *plan = NULL;
	char *text = NULL, *at;
	size_t len = 0;
	FILE *fp;

	f->a1 = approve_sign(f->alice, f->plan, "alice", T0, &f->err);
	f->list = json_pack("[O]", f->a1);
	assert_int_equal(plan_file_write_approvals(fx_path(f, "p.kiln"), f->plan, f->list, &f->err),
			 0);
	assert_int_equal(util_file_read_all(f->path, 1 << 20, &text, &len, &f->err), 0);
	at = strstr(text, "\"count\": 4");
	assert_non_null(at);
	at[9] = '5';
	fp = fopen(f->path, "w");
	fwrite(text, 1, len, fp);
	fclose(fp);
	free(text);
	assert_int_equal(plan_file_read(&plan, f->path, &f->err), -1);
	assert_true(strstr(f->err.msg, "has been modified since kiln wrote it") != NULL);
	assert_string_equal(f->err.hint,
			    "a plan file must not be edited, and its approvals are for the plan "
			    "as it was signed; make a new one with kiln plan --out FILE and have "
			    "it approved again");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    approve_test(test_a_signed_plan_verifies),
	    approve_test(test_key_id_is_the_sha256_of_the_der_public_key),
	    approve_test(test_a_trusted_key_counts_and_is_named),
	    approve_test(test_the_wrong_key_is_an_unknown_key),
	    approve_test(test_a_plan_changed_after_signing_fails),
	    approve_test(test_signer_and_time_are_signed),
	    approve_test(test_a_signature_with_another_public_key_fails),
	    approve_test(test_a_key_id_that_is_not_the_public_keys_is_malformed),
	    approve_test(test_malformed_approvals_name_the_member),
	    approve_test(test_the_same_key_counts_once),
	    approve_test(test_two_trusted_keys_count_twice),
	    approve_test(test_approving_again_replaces_the_keys_approval),
	    approve_test(test_sign_refuses_a_signer_with_a_newline),
	    approve_test(test_a_generated_key_loads_back),
	    approve_test(test_generate_does_not_overwrite_a_key),
	    approve_test(test_a_key_that_is_not_ed25519_is_refused),
	    approve_test(test_an_encrypted_key_is_refused_without_a_prompt),
	    approve_test(test_a_key_others_can_read_is_refused),
	    approve_test(test_a_public_key_is_not_a_signing_key),
	    approve_test(test_a_missing_key_names_the_file_and_how_to_make_one),
	    approve_test(test_trusted_dir_reads_only_pub_files_and_counts_a_key_once),
	    approve_test(test_trusted_dir_refuses_a_pub_file_that_is_not_a_key),
	    approve_test(test_trusted_dir_refuses_a_private_key),
	    approve_test(test_trusted_dir_without_keys_is_an_error),
	    approve_test(test_a_missing_trusted_dir_is_named),
	    approve_test(test_plan_file_keeps_approvals_outside_the_digest),
	    approve_test(test_plan_file_without_approvals_reads_an_empty_list),
	    approve_test(test_plan_file_refuses_an_approval_with_an_unknown_member),
	    approve_test(test_plan_file_refuses_an_approval_without_a_signature),
	    approve_test(test_plan_file_refuses_an_approval_member_that_is_not_a_string),
	    approve_test(test_an_edited_approved_plan_says_its_approvals_do_not_cover_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
