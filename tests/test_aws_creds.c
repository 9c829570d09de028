/*
 * test_aws_creds.c - AWS credentials, region and endpoint resolution.
 *
 * Each test runs with HOME pointing at a fresh temporary directory and every
 * AWS_* variable this module reads unset, so nothing from the machine the
 * tests run on (a real ~/.aws, a CI's AWS_REGION) can leak in.
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

#include "aws/creds.h"
#include "util.h"

static const char *const aws_vars[] = {
    "AWS_ACCESS_KEY_ID",    "AWS_SECRET_ACCESS_KEY",	   "AWS_SESSION_TOKEN",
    "AWS_PROFILE",	    "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
    "AWS_REGION",	    "AWS_DEFAULT_REGION",	   "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_S3",	   "AWS_ENDPOINT_URL_IAM",
    "AWS_ENDPOINT_URL_FSX", "AWS_ENDPOINT_URL_EFS",	   "AWS_ENDPOINT_URL_STS",
};

/* Per-test state: the temporary HOME, freed by the teardown even after a failed assertion. */
struct home {
	char *dir;
	char *aws; /* dir/.aws */
	struct aws_creds creds;
	char *region;
};

static int home_setup(void **state)
{
	struct home *h = xcalloc(1, sizeof(*h));
	char tmpl[] = "/tmp/kiln-aws-creds-XXXXXX";
	size_t i;

	if (!mkdtemp(tmpl))
		return -1;
	h->dir = xstrdup(tmpl);
	h->aws = xasprintf("%s/.aws", h->dir);
	if (mkdir(h->aws, 0700) < 0)
		return -1;
	for (i = 0; i < ARRAY_SIZE(aws_vars); i++)
		unsetenv(aws_vars[i]);
	setenv("HOME", h->dir, 1);
	*state = h;
	return 0;
}

static int home_teardown(void **state)
{
	struct home *h = *state;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(aws_vars); i++)
		unsetenv(aws_vars[i]);
	aws_creds_release(&h->creds);
	free(h->region);
	util_remove_tree(h->dir);
	free(h->dir);
	free(h->aws);
	free(h);
	return 0;
}

#define home_test(fn) cmocka_unit_test_setup_teardown(fn, home_setup, home_teardown)

/* Write len bytes to dir/name; returns the malloc'd path. */
static char *write_file_n(const char *dir, const char *name, const char *text, size_t len)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static char *write_file(const char *dir, const char *name, const char *text)
{
	return write_file_n(dir, name, text, strlen(text));
}

static void load_ok(struct home *h)
{
	struct kiln_error err = {{0}};

	if (aws_creds_load(&h->creds, &err) != 0)
		fail_msg("aws_creds_load: %s (hint: %s)", err.msg, err.hint);
}

static void test_env_keys_win_over_the_profile(void **state)
{
	struct home *h = *state;

	free(write_file(h->aws, "credentials",
			"[default]\naws_access_key_id = FILEAK\naws_secret_access_key = FILESK\n"));
	setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
	setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
	load_ok(h);
	assert_string_equal(h->creds.access_key, "ENVAK");
	assert_string_equal(h->creds.secret_key, "ENVSK");
	assert_string_equal(h->creds.session_token, "ENVTOKEN");
	assert_string_equal(h->creds.source, "the environment (AWS_ACCESS_KEY_ID)");
}

static void test_env_keys_without_token_have_no_token(void **state)
{
	struct home *h = *state;

	setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
	load_ok(h);
	assert_null(h->creds.session_token);
}

static void test_only_access_key_in_env_names_the_missing_secret(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
	assert_string_equal(err.hint,
			    "export AWS_SECRET_ACCESS_KEY too, or unset AWS_ACCESS_KEY_ID "
			    "to use a profile from ~/.aws/credentials");
	assert_null(h->creds.access_key);
}

static void test_only_secret_in_env_names_the_missing_access_key(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
}

static void test_empty_env_key_counts_as_unset(void **state)
{
	struct home *h = *state;

	free(write_file(h->aws, "credentials",
			"[default]\naws_access_key_id=FILEAK\naws_secret_access_key=FILESK\n"));
	setenv("AWS_ACCESS_KEY_ID", "", 1);
	load_ok(h);
	assert_string_equal(h->creds.access_key, "FILEAK");
}

static void test_profile_is_read_from_the_credentials_file(void **state)
{
	struct home *h = *state;
	char *path = write_file(h->aws, "credentials",
				"# a comment\n"
				"; another comment\n"
				"[default]\n"
				"aws_access_key_id = DEFAULTAK\n"
				"aws_secret_access_key = DEFAULTSK\n"
				"\n"
				"  [ dev ]  \r\n"
				"\tAWS_ACCESS_KEY_ID\t=\tDEVAK  \r\n"
				"aws_secret_access_key=DEV/SK+with=equals\r\n"
				"aws_session_token = DEVTOKEN\r\n"
				"output = json\r\n"
				"[other]\n"
				"aws_access_key_id = OTHERAK\n");
	char *want = xasprintf("profile 'dev' in %s", path);

	setenv("AWS_PROFILE", "dev", 1);
	load_ok(h);
	assert_string_equal(h->creds.access_key, "DEVAK");
	assert_string_equal(h->creds.secret_key, "DEV/SK+with=equals");
	assert_string_equal(h->creds.session_token, "DEVTOKEN");
	assert_string_equal(h->creds.source, want);
	free(want);
	free(path);
}

static void test_default_profile_is_used_without_aws_profile(void **state)
{
	struct home *h = *state;

	free(write_file(
	    h->aws, "credentials",
	    "[dev]\naws_access_key_id = DEVAK\naws_secret_access_key = DEVSK\n"
	    "[default]\naws_access_key_id = DEFAULTAK\naws_secret_access_key = DEFAULTSK\n"));
	load_ok(h);
	assert_string_equal(h->creds.access_key, "DEFAULTAK");
	assert_null(h->creds.session_token);
}

static void test_shared_credentials_file_variable_replaces_home(void **state)
{
	struct home *h = *state;
	char *path;

	free(write_file(h->aws, "credentials",
			"[default]\naws_access_key_id = HOMEAK\naws_secret_access_key = HOMESK\n"));
	path = write_file(h->dir, "elsewhere",
			  "[default]\naws_access_key_id = VARAK\naws_secret_access_key = VARSK\n");
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	load_ok(h);
	assert_string_equal(h->creds.access_key, "VARAK");
	free(path);
}

static void test_profile_is_read_from_the_config_file_profile_section(void **state)
{
	struct home *h = *state;
	char *path = write_file(h->aws, "config",
				"[x]\n"
				"aws_access_key_id = PLAINSECTIONAK\n"
				"aws_secret_access_key = PLAINSECTIONSK\n"
				"[profile x]\n"
				"region = eu-west-1\n"
				"aws_access_key_id = CONFIGAK\n"
				"aws_secret_access_key = CONFIGSK\n");
	char *want = xasprintf("profile 'x' in %s", path);

	setenv("AWS_PROFILE", "x", 1);
	load_ok(h);
	assert_string_equal(h->creds.access_key, "CONFIGAK");
	assert_string_equal(h->creds.source, want);
	free(want);
	free(path);
}

static void test_credentials_file_wins_over_config_file(void **state)
{
	struct home *h = *state;

	free(write_file(h->aws, "credentials",
			"[default]\naws_access_key_id = CREDAK\naws_secret_access_key = CREDSK\n"));
	free(write_file(h->aws, "config",
			"[default]\naws_access_key_id = CONFAK\naws_secret_access_key = CONFSK\n"));
	load_ok(h);
	assert_string_equal(h->creds.access_key, "CREDAK");
}

static void test_default_profile_in_config_is_plain_default(void **state)
{
	struct home *h = *state;

	free(write_file(h->aws, "config",
			"[default]\nregion = us-west-2\naws_access_key_id = CONFAK\n"
			"aws_secret_access_key = CONFSK\n"));
	load_ok(h);
	assert_string_equal(h->creds.access_key, "CONFAK");
}

static void test_missing_everything_lists_every_place_looked(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};
	char *want = xasprintf("no AWS credentials found; looked in: the environment "
			       "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); profile 'default' in "
			       "%s/credentials (no such file); profile 'default' in %s/config "
			       "(no such file)",
			       h->aws, h->aws);

	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run "
				      "'aws configure' to write ~/.aws/credentials");
	free(want);
}

static void test_missing_profile_is_told_apart_from_missing_file(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};
	char *want;

	free(write_file(h->aws, "credentials",
			"[default]\naws_access_key_id = A\naws_secret_access_key = B\n"));
	free(write_file(h->aws, "config", "[profile dev]\nregion = us-east-1\n"));
	setenv("AWS_PROFILE", "dev", 1);
	want = xasprintf("no AWS credentials found; looked in: the environment "
			 "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); profile 'dev' in "
			 "%s/credentials (no such profile); profile 'dev' in %s/config "
			 "(no aws_access_key_id)",
			 h->aws, h->aws);
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, "export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run "
				      "'aws configure --profile dev', or set AWS_PROFILE to a "
				      "profile that has keys");
	free(want);
}

static void test_home_unset_is_named_among_the_places(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	unsetenv("HOME");
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg,
			    "no AWS credentials found; looked in: the environment "
			    "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY); ~/.aws/credentials "
			    "(HOME is not set); ~/.aws/config (HOME is not set)");
}

static void test_role_profile_gets_a_hint_to_export_its_keys(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	free(write_file(h->aws, "config",
			"[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\n"
			"source_profile = default\n"));
	setenv("AWS_PROFILE", "admin", 1);
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.hint, "profile 'admin' uses role_arn, which kiln does not resolve; "
				      "export its keys with: eval \"$(aws configure "
				      "export-credentials --profile admin --format env)\"");
}

static void test_profile_with_only_an_access_key_is_an_error(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};
	char *path = write_file(h->aws, "credentials", "[default]\naws_access_key_id = AK\n");
	char *want = xasprintf("profile 'default' in %s has aws_access_key_id but no "
			       "aws_secret_access_key",
			       path);

	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg, want);
	assert_null(h->creds.access_key);
	free(want);
	free(path);
}

static void test_unreadable_credentials_file_is_an_error_naming_it(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};
	char *path = xasprintf("%s/credentials", h->aws);
	char *want = xasprintf("cannot read %s: Is a directory", path);

	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_string_equal(err.msg, want);
	free(want);
	free(path);
}

static void test_hostile_ini_is_survived(void **state)
{
	struct home *h = *state;
	struct strbuf sb = {0};
	size_t i;

	/* Keys before any section belong to none. */
	sb_adds(&sb, "aws_access_key_id = ORPHANAK\naws_secret_access_key = ORPHANSK\n");
	/* A line far longer than any buffer a parser might have, with no '='. */
	for (i = 0; i < 300000; i++)
		sb_addc(&sb, (char)('a' + i % 26));
	sb_adds(&sb, "\n[default]\n");
	/* A huge value that is not a key kiln reads, and a line of bytes. */
	sb_adds(&sb, "output = ");
	for (i = 0; i < 200000; i++)
		sb_addc(&sb, 'x');
	sb_adds(&sb, "\n\xff\xfe\x01\x02 garbage without equals\n");
	sb_add(&sb, "nul\0byte = 1\n", 13);
	sb_adds(&sb, "=value without key\n[\n]\n");
	/* A broken header ends [default]: what follows must not land in it. */
	sb_adds(&sb, "[default\naws_access_key_id = BROKENAK\n");
	sb_adds(&sb, "[default]\naws_access_key_id = GOODAK\n");
	/* Nested settings (the "s3 =" style) are not keys of the profile. */
	sb_adds(&sb, "s3 =\n    aws_secret_access_key = NESTEDSK\n");
	sb_adds(&sb, "aws_secret_access_key = GOODSK\nunknown_key = whatever\n");
	sb_adds(&sb, "[default]"); /* and no newline at the end */
	free(write_file_n(h->aws, "credentials", sb.buf, sb.len));
	sb_release(&sb);
	load_ok(h);
	assert_string_equal(h->creds.access_key, "GOODAK");
	assert_string_equal(h->creds.secret_key, "GOODSK");
}

static void test_nested_setting_is_not_taken_for_a_key(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	free(write_file(
	    h->aws, "credentials",
	    "[default]\naws_access_key_id = AK\ns3 =\n  aws_secret_access_key = NESTED\n"));
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_true(str_ends_with(err.msg, "has aws_access_key_id but no aws_secret_access_key"));
}

static void test_oversized_credentials_file_is_refused(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};
	size_t n = 2 * 1024 * 1024;
	char *big = xmalloc(n), *path;

	memset(big, '#', n);
	path = write_file_n(h->aws, "credentials", big, n);
	free(big);
	assert_int_equal(aws_creds_load(&h->creds, &err), -1);
	assert_non_null(strstr(err.msg, "is larger than"));
	free(path);
}

static void test_region_from_the_spec_wins(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	setenv("AWS_REGION", "eu-west-1", 1);
	assert_int_equal(aws_region_resolve("us-west-2", &h->region, &err), 0);
	assert_string_equal(h->region, "us-west-2");
}

static void test_region_aws_region_wins_over_aws_default_region(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	setenv("AWS_REGION", "eu-west-1", 1);
	setenv("AWS_DEFAULT_REGION", "eu-west-2", 1);
	assert_int_equal(aws_region_resolve("", &h->region, &err), 0);
	assert_string_equal(h->region, "eu-west-1");
}

static void test_region_aws_default_region_wins_over_the_config_file(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	free(write_file(h->aws, "config", "[default]\nregion = ap-south-1\n"));
	setenv("AWS_DEFAULT_REGION", "eu-west-2", 1);
	assert_int_equal(aws_region_resolve(NULL, &h->region, &err), 0);
	assert_string_equal(h->region, "eu-west-2");
}

static void test_region_comes_from_the_profile_in_the_config_file(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	free(write_file(h->aws, "config",
			"[default]\nregion = ap-south-1\n[profile dev]\nregion = ca-central-1\n"));
	setenv("AWS_PROFILE", "dev", 1);
	assert_int_equal(aws_region_resolve(NULL, &h->region, &err), 0);
	assert_string_equal(h->region, "ca-central-1");
}

static void test_missing_region_lists_every_place_looked(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};
	char *want = xasprintf("no AWS region set; looked in: provider.region in the spec; "
			       "AWS_REGION; AWS_DEFAULT_REGION; profile 'default' in %s/config "
			       "(no such file)",
			       h->aws);

	assert_int_equal(aws_region_resolve(NULL, &h->region, &err), -1);
	assert_string_equal(err.msg, want);
	assert_string_equal(err.hint, "set provider.region in the spec, or export AWS_REGION (for "
				      "example AWS_REGION=us-east-1)");
	assert_null(h->region);
	free(want);
}

static void test_region_that_could_change_a_host_name_is_refused(void **state)
{
	struct home *h = *state;
	struct kiln_error err = {{0}};

	setenv("AWS_REGION", "evil.example/x", 1);
	assert_int_equal(aws_region_resolve(NULL, &h->region, &err), -1);
	assert_string_equal(err.msg, "AWS_REGION: 'evil.example/x' is not an AWS region name");
	assert_null(h->region);
}

static void assert_endpoint(const char *service, const char *region, const char *want,
			    bool want_custom)
{
	bool custom = !want_custom;
	char *url = aws_endpoint(service, region, &custom);

	assert_non_null(url);
	assert_string_equal(url, want);
	assert_int_equal(custom, want_custom);
	free(url);
}

static void test_endpoints_default_to_the_public_ones(void **state)
{
	(void)state;
	assert_endpoint("ec2", "eu-west-1", "https://ec2.eu-west-1.amazonaws.com", false);
	assert_endpoint("s3", "eu-west-1", "https://s3.eu-west-1.amazonaws.com", false);
	assert_endpoint("iam", "eu-west-1", "https://iam.amazonaws.com", false);
	assert_endpoint("fsx", "eu-west-1", "https://fsx.eu-west-1.amazonaws.com", false);
	assert_endpoint("efs", "eu-west-1", "https://elasticfilesystem.eu-west-1.amazonaws.com",
			false);
	assert_endpoint("sts", "eu-west-1", "https://sts.eu-west-1.amazonaws.com", false);
	/* Cost Explorer has one endpoint, in us-east-1, whatever the region. */
	assert_endpoint("ce", "eu-west-1", "https://ce.us-east-1.amazonaws.com", false);
	assert_endpoint("ce", NULL, "https://ce.us-east-1.amazonaws.com", false);
}

static void test_service_endpoint_variable_wins_over_the_general_one(void **state)
{
	(void)state;
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5000/", 1);
	setenv("AWS_ENDPOINT_URL_EC2", "http://localhost:4566//", 1);
	setenv("AWS_ENDPOINT_URL_EFS", "http://efs.local", 1);
	assert_endpoint("ec2", "us-east-1", "http://localhost:4566", true);
	assert_endpoint("efs", "us-east-1", "http://efs.local", true);
	assert_endpoint("s3", "us-east-1", "http://127.0.0.1:5000", true);
	assert_endpoint("iam", "us-east-1", "http://127.0.0.1:5000", true);
	assert_endpoint("fsx", NULL, "http://127.0.0.1:5000", true);
	assert_endpoint("sts", NULL, "http://127.0.0.1:5000", true);
}

static void test_each_service_endpoint_variable_is_read(void **state)
{
	static const char *const ids[] = {"ec2", "s3", "iam", "fsx", "efs", "sts", "ce"};
	static const char *const vars[] = {
	    "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_S3",  "AWS_ENDPOINT_URL_IAM",
	    "AWS_ENDPOINT_URL_FSX", "AWS_ENDPOINT_URL_EFS", "AWS_ENDPOINT_URL_STS",
	    "AWS_ENDPOINT_URL_COST_EXPLORER"};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		char *url = xasprintf("http://%s.test:9000/", ids[i]);
		char *want = xasprintf("http://%s.test:9000", ids[i]);

		setenv(vars[i], url, 1);
		assert_endpoint(ids[i], "us-east-1", want, true);
		unsetenv(vars[i]);
		free(url);
		free(want);
	}
}

static void test_endpoint_is_null_for_unknown_service_or_missing_region(void **state)
{
	bool custom = true;

	(void)state;
	assert_null(aws_endpoint("lambda", "us-east-1", &custom));
	assert_false(custom);
	assert_null(aws_endpoint("ec2", NULL, NULL));
	assert_null(aws_endpoint("ec2", "", NULL));
}

static void test_signing_names_and_iam_region(void **state)
{
	(void)state;
	assert_string_equal(aws_signing_name("ec2"), "ec2");
	assert_string_equal(aws_signing_name("s3"), "s3");
	assert_string_equal(aws_signing_name("iam"), "iam");
	assert_string_equal(aws_signing_name("fsx"), "fsx");
	assert_string_equal(aws_signing_name("efs"), "elasticfilesystem");
	assert_string_equal(aws_signing_name("sts"), "sts");
	assert_null(aws_signing_name("lambda"));
	assert_string_equal(aws_signing_region("iam", "eu-west-1"), "us-east-1");
	assert_string_equal(aws_signing_region("ec2", "eu-west-1"), "eu-west-1");
	assert_string_equal(aws_signing_name("ce"), "ce");
	assert_string_equal(aws_signing_region("ce", "eu-west-1"), "us-east-1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    home_test(test_env_keys_win_over_the_profile),
	    home_test(test_env_keys_without_token_have_no_token),
	    home_test(test_only_access_key_in_env_names_the_missing_secret),
	    home_test(test_only_secret_in_env_names_the_missing_access_key),
	    home_test(test_empty_env_key_counts_as_unset),
	    home_test(test_profile_is_read_from_the_credentials_file),
	    home_test(test_default_profile_is_used_without_aws_profile),
	    home_test(test_shared_credentials_file_variable_replaces_home),
	    home_test(test_profile_is_read_from_the_config_file_profile_section),
	    home_test(test_credentials_file_wins_over_config_file),
	    home_test(test_default_profile_in_config_is_plain_default),
	    home_test(test_missing_everything_lists_every_place_looked),
	    home_test(test_missing_profile_is_told_apart_from_missing_file),
	    home_test(test_home_unset_is_named_among_the_places),
	    home_test(test_role_profile_gets_a_hint_to_export_its_keys),
	    home_test(test_profile_with_only_an_access_key_is_an_error),
	    home_test(test_unreadable_credentials_file_is_an_error_naming_it),
	    home_test(test_hostile_ini_is_survived),
	    home_test(test_nested_setting_is_not_taken_for_a_key),
	    home_test(test_oversized_credentials_file_is_refused),
	    home_test(test_region_from_the_spec_wins),
	    home_test(test_region_aws_region_wins_over_aws_default_region),
	    home_test(test_region_aws_default_region_wins_over_the_config_file),
	    home_test(test_region_comes_from_the_profile_in_the_config_file),
	    home_test(test_missing_region_lists_every_place_looked),
	    home_test(test_region_that_could_change_a_host_name_is_refused),
	    home_test(test_endpoints_default_to_the_public_ones),
	    home_test(test_service_endpoint_variable_wins_over_the_general_one),
	    home_test(test_each_service_endpoint_variable_is_read),
	    home_test(test_endpoint_is_null_for_unknown_service_or_missing_region),
	    home_test(test_signing_names_and_iam_region),
	};

	return cmocka_run_group_tests_name("aws_creds", tests, NULL, NULL);
}
