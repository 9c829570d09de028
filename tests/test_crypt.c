/*
 * test_crypt.c - the state key and sealed values.
 *
 * The known-answer values (key id, envelope) were computed with Python's
 * hashlib and cryptography's AESGCM, so they pin the format against an
 * implementation other than the one under test.
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

#include "crypt.h"

/* Bytes 0x00..0x1f, and 32 bytes of 0xff. */
#define KEY_A "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
#define KID_A "9ec204f536a2ff0c"
#define KEY_B "//////////////////////////////////////////8="
#define KID_B "ff2ee7474f778391"
#define AAD "aws_db.main/password"

static void load_key(struct crypt_key *k, const char *b64)
{
	struct kiln_error err = {{0}};

	if (crypt_key_from_base64(k, b64, &err) != 1)
		fail_msg("key %s: %s", b64, err.msg);
}

static json_t *seal(const struct crypt_key *k, const json_t *v, const char *aad)
{
	struct kiln_error err = {{0}};
	json_t *env = crypt_seal(k, v, aad, &err);

	if (!env)
		fail_msg("seal: %s", err.msg);
	return env;
}

/* Replace the first character of a base64 member with another letter. */
static void flip_first_char(json_t *env, const char *member)
{
	char *s = strdup(json_string_value(json_object_get(env, member)));

	s[0] = s[0] == 'A' ? 'B' : 'A';
	json_object_set_new(env, member, json_string(s));
	free(s);
}

static void assert_round_trip(json_t *value)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *env, *back;

	load_key(&k, KEY_A);
	env = seal(&k, value, AAD);
	back = crypt_open(&k, env, AAD, &err);
	if (!back)
		fail_msg("open: %s", err.msg);
	assert_true(json_equal(back, value));
	json_decref(back);
	json_decref(env);
	json_decref(value);
	crypt_key_wipe(&k);
}

static int unset_key_env(void **state)
{
	(void)state;
	unsetenv("KILN_STATE_KEY");
	unsetenv("KILN_STATE_KEY_FILE");
	/* Never the key of whoever runs the tests. */
	setenv("XDG_CONFIG_HOME", "/nonexistent/kiln-test-config", 1);
	return 0;
}

/* A temporary key file holding text; the caller unlinks and frees the path. */
static char *key_file_write(const char *text)
{
	char *path = strdup("/tmp/kiln-test-key-XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_key_id_is_the_sha256_prefix_of_context_and_key(void **state)
{
	struct crypt_key k;

	(void)state;
	load_key(&k, KEY_A);
	assert_string_equal(k.kid, KID_A);
	load_key(&k, KEY_B);
	assert_string_equal(k.kid, KID_B);
}

static void test_seal_then_open_gives_back_a_string(void **state)
{
	(void)state;
	assert_round_trip(json_string("correct horse battery staple"));
}

static void test_seal_then_open_gives_back_numbers(void **state)
{
	(void)state;
	assert_round_trip(json_integer(5432));
	assert_round_trip(json_real(0.1));
}

static void test_seal_then_open_gives_back_an_object(void **state)
{
	(void)state;
	assert_round_trip(
	    json_pack("{s:s, s:i, s:[s, n]}", "user", "admin", "port", 5432, "list", "x"));
}

static void test_envelope_names_algorithm_key_and_carries_the_tag(void **state)
{
	struct crypt_key k;
	json_t *v = json_string("hunter2"), *env;
	const char *ct;

	(void)state;
	load_key(&k, KEY_A);
	env = seal(&k, v, AAD);
	assert_int_equal(json_object_size(env), 4);
	assert_string_equal(json_string_value(json_object_get(env, "kiln_sealed")), "AES-256-GCM");
	assert_string_equal(json_string_value(json_object_get(env, "kid")), KID_A);
	assert_int_equal(strlen(json_string_value(json_object_get(env, "nonce"))), 16);
	/* "\"hunter2\"" is 9 bytes, plus the 16-byte tag: 25 bytes, 36 characters. */
	ct = json_string_value(json_object_get(env, "ciphertext"));
	assert_int_equal(strlen(ct), 36);
	assert_null(strstr(ct, "hunter2"));
	json_decref(env);
	json_decref(v);
}

static void test_open_reads_an_envelope_sealed_by_another_implementation(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	json_t *env, *v;

	(void)state;
	load_key(&k, KEY_A);
	env = json_pack("{s:s, s:s, s:s, s:s}", "kiln_sealed", "AES-256-GCM", "kid", KID_A, "nonce",
			"ZGVmZ2hpamtsbW5v", "ciphertext",
			"MzmuBwqaIfFMBn3S+A0fkzandDipQNECyKPYasGWkXumlHD+clNY+7tfpRRtKr+tgPc=");
	v = crypt_open(&k, env, AAD, &err);
	if (!v)
		fail_msg("open: %s", err.msg);
	assert_string_equal(json_string_value(json_object_get(v, "password")), "hunter2");
	assert_int_equal(json_integer_value(json_object_get(v, "port")), 5432);
	json_decref(v);
	json_decref(env);
}

static void assert_open_fails(json_t *env, const struct crypt_key *k, const char *aad,
			      const char *message)
{
	struct kiln_error err = {{0}};
	json_t *v = crypt_open(k, env, aad, &err);

	if (v) {
		json_decref(v);
		fail_msg("opened, expected: %s", message);
	}
	assert_string_equal(err.msg, message);
}

static void test_flipped_ciphertext_byte_fails_authentication(void **state)
{
	struct crypt_key k;
	json_t *v = json_string("hunter2"), *env;

	(void)state;
	load_key(&k, KEY_A);
	env = seal(&k, v, AAD);
	flip_first_char(env, "ciphertext");
	assert_open_fails(env, &k, AAD,
			  "authentication failed: the value was changed or the key is wrong");
	json_decref(env);
	json_decref(v);
}

static void test_flipped_nonce_fails_authentication(void **state)
{
	struct crypt_key k;
	json_t *v = json_string("hunter2"), *env;

	(void)state;
	load_key(&k, KEY_A);
	env = seal(&k, v, AAD);
	flip_first_char(env, "nonce");
	assert_open_fails(env, &k, AAD,
			  "authentication failed: the value was changed or the key is wrong");
	json_decref(env);
	json_decref(v);
}

static void test_value_moved_to_another_attribute_fails_authentication(void **state)
{
	struct crypt_key k;
	json_t *v = json_string("hunter2"), *env;

	(void)state;
	load_key(&k, KEY_A);
	env = seal(&k, v, AAD);
	assert_open_fails(env, &k, "aws_db.main/username",
			  "authentication failed: the value was changed or the key is wrong");
	json_decref(env);
	json_decref(v);
}

static void test_other_key_fails_naming_both_key_ids(void **state)
{
	struct crypt_key a, b;
	json_t *v = json_string("hunter2"), *env;

	(void)state;
	load_key(&a, KEY_A);
	load_key(&b, KEY_B);
	env = seal(&a, v, AAD);
	assert_open_fails(env, &b, AAD,
			  "sealed with key " KID_A ", but KILN_STATE_KEY is key " KID_B);
	json_decref(env);
	json_decref(v);
}

static void test_envelope_without_nonce_is_reported_as_malformed(void **state)
{
	struct crypt_key k;
	json_t *v = json_string("hunter2"), *env;

	(void)state;
	load_key(&k, KEY_A);
	env = seal(&k, v, AAD);
	json_object_del(env, "nonce");
	assert_open_fails(env, &k, AAD, "sealed value is malformed: missing key 'nonce'");
	json_decref(env);
	json_decref(v);
}

static void test_two_seals_of_one_value_differ(void **state)
{
	struct crypt_key k;
	json_t *v = json_string("hunter2"), *e1, *e2;

	(void)state;
	load_key(&k, KEY_A);
	e1 = seal(&k, v, AAD);
	e2 = seal(&k, v, AAD);
	assert_string_not_equal(json_string_value(json_object_get(e1, "nonce")),
				json_string_value(json_object_get(e2, "nonce")));
	assert_string_not_equal(json_string_value(json_object_get(e1, "ciphertext")),
				json_string_value(json_object_get(e2, "ciphertext")));
	json_decref(e1);
	json_decref(e2);
	json_decref(v);
}

static void test_key_of_31_bytes_is_rejected(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	assert_int_equal(
	    crypt_key_from_base64(&k, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==", &err), -1);
	assert_string_equal(err.msg, "the state key decodes to 31 bytes instead of 32");
	assert_string_equal(err.hint, "create a key with: openssl rand -base64 32");
}

static void test_key_that_is_not_base64_is_rejected(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	assert_int_equal(
	    crypt_key_from_base64(&k, "not a key, just some words that are long!!!!", &err), -1);
	assert_string_equal(err.msg, "the state key is not valid base64");
}

static void test_env_key_of_wrong_length_names_the_variable(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	setenv("KILN_STATE_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 1);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	assert_string_equal(err.msg, "KILN_STATE_KEY decodes to 33 bytes instead of 32");
}

static void test_empty_env_key_is_an_error_not_an_absent_key(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	setenv("KILN_STATE_KEY", "", 1);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	assert_string_equal(err.msg, "KILN_STATE_KEY is empty");
}

static void test_empty_key_file_variable_is_an_error(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	setenv("KILN_STATE_KEY_FILE", "", 1);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	assert_string_equal(err.msg, "KILN_STATE_KEY_FILE is empty");
}

static void test_key_file_is_read_with_its_trailing_newline_trimmed(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *path = key_file_write(KEY_A "\n");

	(void)state;
	setenv("KILN_STATE_KEY_FILE", path, 1);
	assert_int_equal(crypt_key_load(&k, &err), 1);
	assert_string_equal(k.kid, KID_A);
	unlink(path);
	free(path);
}

static void test_bad_key_file_names_the_variable_and_the_file(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *path = key_file_write("AAAA\n"), *want;

	(void)state;
	setenv("KILN_STATE_KEY_FILE", path, 1);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	want = xasprintf("KILN_STATE_KEY_FILE (%s) decodes to 3 bytes instead of 32", path);
	assert_string_equal(err.msg, want);
	free(want);
	unlink(path);
	free(path);
}

static void test_unreadable_key_file_is_reported_with_the_cause(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	setenv("KILN_STATE_KEY_FILE", "/nonexistent/kiln-key", 1);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	assert_string_equal(err.msg, "KILN_STATE_KEY_FILE: cannot read /nonexistent/kiln-key: "
				     "No such file or directory");
}

static void test_env_key_wins_over_key_file(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *path = key_file_write(KEY_A "\n");

	(void)state;
	setenv("KILN_STATE_KEY_FILE", path, 1);
	setenv("KILN_STATE_KEY", KEY_B, 1);
	assert_int_equal(crypt_key_load(&k, &err), 1);
	assert_string_equal(k.kid, KID_B);
	unlink(path);
	free(path);
}

static void test_no_key_configured_loads_nothing(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};

	(void)state;
	assert_int_equal(crypt_key_load(&k, &err), 0);
	assert_string_equal(err.msg, "");
}

static void test_group_readable_key_file_is_refused_as_a_signing_key_is(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *path = key_file_write(KEY_A "\n"), *want;

	(void)state;
	assert_int_equal(chmod(path, 0640), 0);
	setenv("KILN_STATE_KEY_FILE", path, 1);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	want = xasprintf("KILN_STATE_KEY_FILE: state key %s may be read by group or others "
			 "(mode 0640); kiln seals state only with a key that is private to its "
			 "owner",
			 path);
	assert_string_equal(err.msg, want);
	free(want);
	want = xasprintf("chmod 600 %s", path);
	assert_string_equal(err.hint, want);
	free(want);
	unlink(path);
	free(path);
}

/* A fresh XDG_CONFIG_HOME; the caller removes it with config_dir_remove. */
static char *config_dir_new(void)
{
	char *dir = strdup("/tmp/kiln-test-xdg-XXXXXX");

	assert_non_null(mkdtemp(dir));
	setenv("XDG_CONFIG_HOME", dir, 1);
	return dir;
}

static void config_dir_remove(char *dir)
{
	char *key = xasprintf("%s/kiln/state.key", dir), *sub = xasprintf("%s/kiln", dir);

	unlink(key);
	rmdir(sub);
	rmdir(dir);
	free(key);
	free(sub);
	free(dir);
}

/* The default key file made by crypt_key_create_file, then holding KEY_A. */
static void default_key_make_a(const char *path, char kid[CRYPT_KID_LEN + 1])
{
	struct kiln_error err = {{0}};
	FILE *f;

	assert_int_equal(crypt_key_create_file(path, kid, &err), 1);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(KEY_A "\n", f);
	fclose(f);
}

static void test_key_made_by_create_is_private_and_found_without_variables(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *dir = config_dir_new(), *path = crypt_key_default_path(), *want;
	char kid[CRYPT_KID_LEN + 1] = "";
	struct stat st;

	(void)state;
	want = xasprintf("%s/kiln/state.key", dir);
	assert_string_equal(path, want);
	assert_int_equal(crypt_key_create_file(path, kid, &err), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(crypt_key_load(&k, &err), 1);
	assert_string_equal(k.kid, kid);
	crypt_key_wipe(&k);
	free(want);
	free(path);
	config_dir_remove(dir);
}

static void test_create_never_replaces_an_existing_key(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *dir = config_dir_new(), *path = crypt_key_default_path();
	char kid[CRYPT_KID_LEN + 1] = "";

	(void)state;
	default_key_make_a(path, kid);
	assert_int_equal(crypt_key_create_file(path, kid, &err), 0);
	assert_int_equal(crypt_key_load(&k, &err), 1);
	assert_string_equal(k.kid, KID_A);
	free(path);
	config_dir_remove(dir);
}

static void test_variables_win_over_the_default_key_file(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *dir = config_dir_new(), *path = crypt_key_default_path(), *file;
	char kid[CRYPT_KID_LEN + 1] = "";

	(void)state;
	assert_int_equal(crypt_key_create_file(path, kid, &err), 1);
	file = key_file_write(KEY_A "\n");
	setenv("KILN_STATE_KEY_FILE", file, 1);
	assert_int_equal(crypt_key_load(&k, &err), 1);
	assert_string_equal(k.kid, KID_A);
	setenv("KILN_STATE_KEY", KEY_B, 1);
	assert_int_equal(crypt_key_load(&k, &err), 1);
	assert_string_equal(k.kid, KID_B);
	unlink(file);
	free(file);
	free(path);
	config_dir_remove(dir);
}

/*
 * Where a key is, when it is not the one in use: the file KILN_STATE_KEY_FILE
 * names (passed over for KILN_STATE_KEY) and the file kiln init makes
 * (passed over for either variable), with the variables to unset.
 */
static void test_key_find_names_the_file_passed_over(void **state)
{
	char *dir = config_dir_new(), *path = crypt_key_default_path(), *file, *got, *want;
	char kid[CRYPT_KID_LEN + 1] = "";
	const char *unset = NULL, *what = NULL;

	(void)state;
	default_key_make_a(path, kid);

	/* No variable: the default file is the one in use, nothing else to find. */
	assert_null(crypt_key_find(KID_A, &what, &unset));
	got = crypt_key_source();
	want = xasprintf("the state key %s", path);
	assert_string_equal(got, want);
	free(got);
	free(want);

	setenv("KILN_STATE_KEY", KEY_B, 1);
	got = crypt_key_source();
	assert_string_equal(got, "KILN_STATE_KEY");
	free(got);
	assert_null(crypt_key_find(KID_B, &what, &unset));
	got = crypt_key_find(KID_A, &what, &unset);
	assert_string_equal(got, path);
	assert_string_equal(what, "the state key kiln init made");
	assert_string_equal(unset, "KILN_STATE_KEY");
	free(got);

	file = key_file_write(KEY_B "\n");
	setenv("KILN_STATE_KEY_FILE", file, 1);
	got = crypt_key_find(KID_A, &what, &unset);
	assert_string_equal(got, path);
	assert_string_equal(unset, "KILN_STATE_KEY and KILN_STATE_KEY_FILE");
	free(got);

	unsetenv("KILN_STATE_KEY");
	got = crypt_key_source();
	want = xasprintf("KILN_STATE_KEY_FILE (%s)", file);
	assert_string_equal(got, want);
	free(got);
	free(want);
	unset = NULL;
	got = crypt_key_find(KID_A, &what, &unset);
	assert_string_equal(unset, "KILN_STATE_KEY_FILE");
	free(got);

	/* The file KILN_STATE_KEY_FILE names holds the key, KILN_STATE_KEY another. */
	unlink(file);
	free(file);
	file = key_file_write(KEY_A "\n");
	setenv("KILN_STATE_KEY_FILE", file, 1);
	setenv("KILN_STATE_KEY", KEY_B, 1);
	got = crypt_key_find(KID_A, &what, &unset);
	assert_string_equal(got, file);
	assert_string_equal(what, "the file KILN_STATE_KEY_FILE names");
	assert_string_equal(unset, "KILN_STATE_KEY");
	free(got);
	unlink(file);
	free(file);
	free(path);
	config_dir_remove(dir);
}

static void test_default_key_file_readable_by_others_is_refused(void **state)
{
	struct crypt_key k;
	struct kiln_error err = {{0}};
	char *dir = config_dir_new(), *path = crypt_key_default_path(), *want;
	char kid[CRYPT_KID_LEN + 1] = "";

	(void)state;
	assert_int_equal(crypt_key_create_file(path, kid, &err), 1);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(crypt_key_load(&k, &err), -1);
	want = xasprintf("state key %s may be read by group or others (mode 0644); kiln seals "
			 "state only with a key that is private to its owner",
			 path);
	assert_string_equal(err.msg, want);
	free(want);
	free(path);
	config_dir_remove(dir);
}

static void test_wipe_zeroes_the_key(void **state)
{
	static const struct crypt_key zero;
	struct crypt_key k;

	(void)state;
	load_key(&k, KEY_A);
	crypt_key_wipe(&k);
	assert_memory_equal(&k, &zero, sizeof(k));
}

static void test_is_sealed_recognises_envelopes_only(void **state)
{
	json_t *env = json_pack("{s:s}", "kiln_sealed", "AES-256-GCM");
	json_t *plain = json_pack("{s:s}", "password", "hunter2");
	json_t *str = json_string("kiln_sealed");

	(void)state;
	assert_true(crypt_is_sealed(env));
	assert_false(crypt_is_sealed(plain));
	assert_false(crypt_is_sealed(str));
	assert_false(crypt_is_sealed(NULL));
	json_decref(env);
	json_decref(plain);
	json_decref(str);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_id_is_the_sha256_prefix_of_context_and_key),
	    cmocka_unit_test(test_seal_then_open_gives_back_a_string),
	    cmocka_unit_test(test_seal_then_open_gives_back_numbers),
	    cmocka_unit_test(test_seal_then_open_gives_back_an_object),
	    cmocka_unit_test(test_envelope_names_algorithm_key_and_carries_the_tag),
	    cmocka_unit_test(test_open_reads_an_envelope_sealed_by_another_implementation),
	    cmocka_unit_test(test_flipped_ciphertext_byte_fails_authentication),
	    cmocka_unit_test(test_flipped_nonce_fails_authentication),
	    cmocka_unit_test(test_value_moved_to_another_attribute_fails_authentication),
	    cmocka_unit_test(test_other_key_fails_naming_both_key_ids),
	    cmocka_unit_test(test_envelope_without_nonce_is_reported_as_malformed),
	    cmocka_unit_test(test_two_seals_of_one_value_differ),
	    cmocka_unit_test(test_key_of_31_bytes_is_rejected),
	    cmocka_unit_test(test_key_that_is_not_base64_is_rejected),
	    cmocka_unit_test_teardown(test_env_key_of_wrong_length_names_the_variable,
				      unset_key_env),
	    cmocka_unit_test_teardown(test_empty_env_key_is_an_error_not_an_absent_key,
				      unset_key_env),
	    cmocka_unit_test_teardown(test_empty_key_file_variable_is_an_error, unset_key_env),
	    cmocka_unit_test_teardown(test_key_file_is_read_with_its_trailing_newline_trimmed,
				      unset_key_env),
	    cmocka_unit_test_teardown(test_bad_key_file_names_the_variable_and_the_file,
				      unset_key_env),
	    cmocka_unit_test_teardown(test_unreadable_key_file_is_reported_with_the_cause,
				      unset_key_env),
	    cmocka_unit_test_teardown(test_env_key_wins_over_key_file, unset_key_env),
	    cmocka_unit_test_setup(test_no_key_configured_loads_nothing, unset_key_env),
	    cmocka_unit_test_setup_teardown(
		test_group_readable_key_file_is_refused_as_a_signing_key_is, unset_key_env,
		unset_key_env),
	    cmocka_unit_test_setup_teardown(
		test_key_made_by_create_is_private_and_found_without_variables, unset_key_env,
		unset_key_env),
	    cmocka_unit_test_setup_teardown(test_create_never_replaces_an_existing_key,
					    unset_key_env, unset_key_env),
	    cmocka_unit_test_setup_teardown(test_variables_win_over_the_default_key_file,
					    unset_key_env, unset_key_env),
	    cmocka_unit_test_setup_teardown(test_key_find_names_the_file_passed_over, unset_key_env,
					    unset_key_env),
	    cmocka_unit_test_setup_teardown(test_default_key_file_readable_by_others_is_refused,
					    unset_key_env, unset_key_env),
	    cmocka_unit_test(test_wipe_zeroes_the_key),
	    cmocka_unit_test(test_is_sealed_recognises_envelopes_only),
	};

	unset_key_env(NULL);
	return cmocka_run_group_tests_name("crypt", tests, NULL, NULL);
}
