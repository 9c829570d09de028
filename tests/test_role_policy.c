/*
 * test_role_policy.c - the aws provider's role policy: a role's intent
 * (read, write, allow) compiled into its inline policy and read back from
 * it, so an unchanged role shows no diff and a policy edited outside kiln
 * shows as drift; EFS stores as mount-level actions on the file system's
 * exact ARN; and what aws expand makes of allow: (normalised, checked
 * against IAM's size limit and AWS's partitions) and of file stores.
 */
#include "testutil.h"

#include "aws/aws.h"
#include "aws/aws_int.h"
#include "expand.h"

static const struct prov_scope scope = {"demo", "default", NULL};

struct rfx {
	struct diags d;
	struct spec *spec;
	struct prov_ctx *ctx;
	json_t *json;
	char *text;
};

static int rfx_setup(void **state)
{
	*state = xcalloc(1, sizeof(struct rfx));
	return 0;
}

static int rfx_teardown(void **state)
{
	struct rfx *f = *state;

	if (f->ctx)
		provider_aws.close(f->ctx);
	spec_free(f->spec);
	diags_release(&f->d);
	json_decref(f->json);
	free(f->text);
	free(f);
	return 0;
}

#define rp_test(fn) cmocka_unit_test_setup_teardown(fn, rfx_setup, rfx_teardown)

static void assert_json_is(const json_t *got, const char *want_text)
{
	json_t *want = json_loads(want_text, 0, NULL);
	char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

	assert_non_null(want);
	if (!json_equal(got, want))
		fail_msg("got %s\nwant %s", g, want_text);
	free(g);
	json_decref(want);
}

/* Compile attrs_text into f->text, the SSM parameters in account (NULL: "*"). */
static void compile_in(struct rfx *f, const char *attrs_text, const char *account)
{
	json_t *attrs = json_loads(attrs_text, 0, NULL);

	assert_non_null(attrs);
	f->text = aws_role_policy_compile(&scope, attrs, NULL, account);
	json_decref(attrs);
}

/* Compile attrs_text; the policy holds the statement want, to the letter. */
static void assert_compiles_with(struct rfx *f, const char *attrs_text, const char *want)
{
	compile_in(f, attrs_text, NULL);
	if (!strstr(f->text, want))
		fail_msg("policy %s\nlacks %s", f->text, want);
}

/* Compile attrs, read them back, and expect exactly them. */
static void assert_round_trip(struct rfx *f, const char *attrs_text)
{
	json_t *attrs = json_loads(attrs_text, 0, NULL);

	assert_non_null(attrs);
	f->text = aws_role_policy_compile(&scope, attrs, NULL, NULL);
	f->json = aws_role_policy_decompile(&scope, f->text);
	if (!json_equal(f->json, attrs)) {
		char *g = json_dumps(f->json, JSON_COMPACT | JSON_SORT_KEYS);

		fail_msg("policy %s\nread back as %s\nwant %s", f->text, g, attrs_text);
	}
	json_decref(attrs);
}

static void test_stores_and_allow_entries_compile_in_order(void **state)
{
	struct rfx *f = *state;
	json_t *attrs = json_loads("{\"read\":[\"data\"],\"write\":[],\"allow\":[{\"actions\":["
				   "\"ecr:GetAuthorizationToken\"],"
				   "\"resources\":[\"*\"],\"sid\":\"Auth\"}]}",
				   0, NULL);

	f->text = aws_role_policy_compile(&scope, attrs, NULL, NULL);
	assert_string_equal(
	    f->text,
	    "{\"Version\":\"2012-10-17\",\"Statement\":["
	    "{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\"],"
	    "\"Resource\":\"arn:aws:s3:::kiln-demo-default-data/*\"},"
	    "{\"Effect\":\"Allow\",\"Action\":[\"s3:ListBucket\"],"
	    "\"Resource\":\"arn:aws:s3:::kiln-demo-default-data\"},"
	    "{\"Sid\":\"Auth\",\"Effect\":\"Allow\",\"Action\":[\"ecr:GetAuthorizationToken\"],"
	    "\"Resource\":[\"*\"]}]}");
	assert_int_equal(aws_policy_size(f->text), strlen(f->text));
	json_decref(attrs);
}

static void test_ssm_reads_compile_to_get_parameter_on_each_exact_arn(void **state)
{
	struct rfx *f = *state;
	json_t *attrs = json_loads("{\"read\":[],\"write\":[],\"ssm_read\":{\"region\":"
				   "\"us-east-1\",\"leaves\":[\"slurm/munge-key\"]}}",
				   0, NULL);

	f->text = aws_role_policy_compile(&scope, attrs, NULL, NULL);
	assert_string_equal(f->text,
			    "{\"Version\":\"2012-10-17\",\"Statement\":["
			    "{\"Sid\":\"KilnSsmRead\",\"Effect\":\"Allow\",\"Action\":"
			    "[\"ssm:GetParameter\"],\"Resource\":[\"arn:aws:ssm:us-east-1:*:"
			    "parameter/kiln/demo/default/slurm/munge-key\"]}]}");
	json_decref(attrs);
}

/* Issue 33, finding 11: the account kiln read from IAM, not any account. */
static void test_ssm_reads_name_the_known_account(void **state)
{
	struct rfx *f = *state;

	compile_in(f,
		   "{\"read\":[],\"write\":[],\"ssm_read\":{\"region\":\"us-east-1\","
		   "\"leaves\":[\"slurm/munge-key\"],\"find_controller\":false}}",
		   "123456789012");
	assert_string_equal(f->text,
			    "{\"Version\":\"2012-10-17\",\"Statement\":["
			    "{\"Sid\":\"KilnSsmRead\",\"Effect\":\"Allow\",\"Action\":"
			    "[\"ssm:GetParameter\"],\"Resource\":[\"arn:aws:ssm:us-east-1:"
			    "123456789012:parameter/kiln/demo/default/slurm/munge-key\"]}]}");
	/* And it reads back to the same intent as the policy with "*" did. */
	f->json = aws_role_policy_decompile(&scope, f->text);
	assert_json_is(json_object_get(f->json, "ssm_read"),
		       "{\"region\":\"us-east-1\",\"leaves\":[\"slurm/munge-key\"],"
		       "\"find_controller\":false}");
}

static void test_ssm_reads_read_back_beside_stores_and_allow(void **state)
{
	assert_round_trip(
	    *state, "{\"read\":[\"data\"],\"write\":[],\"ssm_read\":{\"region\":"
		    "\"eu-west-1\",\"leaves\":[\"slurm/gres.conf\",\"slurm/"
		    "munge-key\"],\"find_controller\":true},"
		    "\"allow\":[{\"actions\":[\"ssm:GetParameter\"],\"resources\":[\"*\"]}]}");
}


static void test_a_kms_key_arn_is_decrypt_on_exactly_that_key_through_ssm(void **state)
{
	assert_compiles_with(
	    *state,
	    "{\"read\":[],\"write\":[],\"ssm_read\":{\"region\":\"us-east-1\",\"leaves\":["
	    "\"slurm/munge-key\"],\"kms_key\":\"arn:aws:kms:us-east-1:123456789012:key/"
	    "1234abcd-12ab-34cd-56ef-1234567890ab\"}}",
	    "{\"Sid\":\"KilnSlurmKey\",\"Effect\":\"Allow\",\"Action\":[\"kms:Decrypt\"],"
	    "\"Resource\":\"arn:aws:kms:us-east-1:123456789012:key/"
	    "1234abcd-12ab-34cd-56ef-1234567890ab\",\"Condition\":{\"StringEquals\":{"
	    "\"kms:ViaService\":\"ssm.us-east-1.amazonaws.com\"}}}");
}

/*
 * A bare alias reaches the policy as its alias ARN in the caller's account
 * (aws_slurm.c kms_scope): the account's keys only, never '*'.
 */
static void test_a_kms_alias_is_decrypt_on_the_key_it_names_through_ssm(void **state)
{
	assert_compiles_with(
	    *state,
	    "{\"read\":[],\"write\":[],\"ssm_read\":{\"region\":\"eu-west-1\",\"leaves\":["
	    "\"slurm/munge-key\"],\"kms_key\":\"arn:aws:kms:eu-west-1:123456789012:alias/"
	    "kiln-munge\"}}",
	    "{\"Sid\":\"KilnSlurmKey\",\"Effect\":\"Allow\",\"Action\":[\"kms:Decrypt\"],"
	    "\"Resource\":\"arn:aws:kms:eu-west-1:123456789012:key/*\",\"Condition\":{"
	    "\"StringEquals\":{\"kms:ViaService\":\"ssm.eu-west-1.amazonaws.com\"},"
	    "\"ForAnyValue:StringEquals\":{\"kms:ResourceAliases\":\"alias/kiln-munge\"}}}");
}

static void test_each_kms_key_form_reads_back_as_written(void **state)
{
	struct rfx *f = *state;
	static const char *const keys[] = {
	    "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
	    "arn:aws:kms:us-east-1:123456789012:alias/kiln/munge", "alias/kiln-munge"};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *attrs = xasprintf("{\"read\":[],\"write\":[],\"ssm_read\":{\"region\":"
					"\"us-east-1\",\"leaves\":[\"slurm/munge-key\"],"
					"\"find_controller\":true,\"kms_key\":\"%s\"}}",
					keys[i]);

		assert_round_trip(f, attrs);
		free(f->text);
		json_decref(f->json);
		f->text = NULL;
		f->json = NULL;
		free(attrs);
	}
}

static void test_a_kms_statement_without_its_condition_is_an_allow_entry(void **state)
{
	struct rfx *f = *state;

	f->json = aws_role_policy_decompile(
	    &scope, "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"KilnSsmRead\","
		    "\"Effect\":\"Allow\",\"Action\":[\"ssm:GetParameter\"],\"Resource\":["
		    "\"arn:aws:ssm:us-east-1:*:parameter/kiln/demo/default/slurm/munge-key\"]},"
		    "{\"Sid\":\"KilnSlurmKey\",\"Effect\":\"Allow\",\"Action\":[\"kms:Decrypt\"],"
		    "\"Resource\":\"arn:aws:kms:us-east-1:*:key/*\"}]}");
	assert_null(json_object_get(json_object_get(f->json, "ssm_read"), "kms_key"));
	assert_int_equal(json_array_size(json_object_get(f->json, "allow")), 1);
}

static void test_an_ssm_statement_of_another_workspace_reads_back_as_allow(void **state)
{
	struct rfx *f = *state;

	f->json = aws_role_policy_decompile(
	    &scope, "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"KilnSsmRead\","
		    "\"Effect\":\"Allow\",\"Action\":[\"ssm:GetParameter\"],\"Resource\":["
		    "\"arn:aws:ssm:us-east-1:*:parameter/kiln/demo/other/slurm/munge-key\"]}]}");
	assert_null(json_object_get(f->json, "ssm_read"));
	assert_int_equal(json_array_size(json_object_get(f->json, "allow")), 1);
}

static void test_a_role_without_allow_reads_back_without_the_key(void **state)
{
	assert_round_trip(*state, "{\"read\":[\"data\"],\"write\":[\"ckpt\"]}");
}

static void test_allow_entries_read_back_as_written(void **state)
{
	assert_round_trip(
	    *state, "{\"read\":[\"data\"],\"write\":[\"ckpt\"],\"allow\":["
		    "{\"actions\":[\"ecr:BatchGetImage\",\"ecr:GetDownloadUrlForLayer\"],"
		    "\"resources\":[\"arn:aws:ecr:us-east-1:123456789012:repository/train\"]},"
		    "{\"actions\":[\"ecr:GetAuthorizationToken\"],\"resources\":[\"*\"],\"sid\":"
		    "\"Auth\"}]}");
}

static void test_an_allow_entry_that_looks_like_a_store_grant_stays_an_allow_entry(void **state)
{
	/* The same action and bucket ARN as reading store 'data': told apart by its list form. */
	assert_round_trip(*state, "{\"read\":[],\"write\":[],\"allow\":["
				  "{\"actions\":[\"s3:GetObject\"],"
				  "\"resources\":[\"arn:aws:s3:::kiln-demo-default-data/*\"]},"
				  "{\"actions\":[\"s3:ListBucket\"],"
				  "\"resources\":[\"arn:aws:s3:::kiln-demo-default-data\"]}]}");
}

static void
test_the_node_health_statement_lets_a_node_tag_only_itself_with_only_its_key(void **state)
{
	struct rfx *f = *state;
	json_t *doc, *last;
	char *text;

	assert_round_trip(*state, "{\"read\":[\"data\"],\"write\":[],\"node_health\":true,"
				  "\"allow\":[{\"actions\":[\"ecr:GetAuthorizationToken\"],"
				  "\"resources\":[\"*\"]}]}");
	doc = json_loads(f->text, 0, NULL);
	last = json_array_get(json_object_get(doc, "Statement"), 3);
	text = json_dumps(last, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text,
			    "{\"Action\":\"ec2:CreateTags\",\"Condition\":{"
			    "\"ForAllValues:StringEquals\":{\"aws:TagKeys\":[\"kiln:health\"]},"
			    "\"StringEquals\":{\"aws:ARN\":\"${ec2:SourceInstanceARN}\"}},"
			    "\"Effect\":\"Allow\",\"Resource\":\"arn:aws:ec2:*:*:instance/*\","
			    "\"Sid\":\"KilnNodeHealth\"}");
	free(text);
	json_decref(doc);
}

static void test_the_node_health_statement_changed_outside_kiln_is_an_allow_entry(void **state)
{
	struct rfx *f = *state;

	/* Widened to every key: not kiln's statement any more, so it shows as drift. */
	f->json = aws_role_policy_decompile(
	    &scope, "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"KilnNodeHealth\","
		    "\"Effect\":\"Allow\",\"Action\":\"ec2:CreateTags\",\"Resource\":"
		    "\"arn:aws:ec2:*:*:instance/*\"}]}");
	assert_json_is(f->json,
		       "{\"read\":[],\"write\":[],\"allow\":[{\"actions\":"
		       "[\"ec2:CreateTags\"],\"resources\":[\"arn:aws:ec2:*:*:instance/*\"],"
		       "\"sid\":\"KilnNodeHealth\"}]}");
}

static void test_the_gpu_metrics_statement_puts_metrics_only_into_the_agents_namespace(void **state)
{
	struct rfx *f = *state;
	json_t *doc, *last;
	char *text;

	assert_round_trip(*state, "{\"read\":[],\"write\":[],\"node_health\":true,"
				  "\"gpu_metrics\":true}");
	doc = json_loads(f->text, 0, NULL);
	assert_int_equal(json_array_size(json_object_get(doc, "Statement")), 2);
	last = json_array_get(json_object_get(doc, "Statement"), 1);
	text = json_dumps(last, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"Action\":\"cloudwatch:PutMetricData\",\"Condition\":{"
				  "\"StringEquals\":{\"cloudwatch:namespace\":\"CWAgent\"}},"
				  "\"Effect\":\"Allow\",\"Resource\":\"*\","
				  "\"Sid\":\"KilnGpuMetrics\"}");
	free(text);
	json_decref(doc);
}

static void test_the_gpu_metrics_statement_without_its_condition_is_an_allow_entry(void **state)
{
	struct rfx *f = *state;

	/* Its namespace condition dropped: any namespace, so not kiln's statement: drift. */
	f->json = aws_role_policy_decompile(
	    &scope, "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"KilnGpuMetrics\","
		    "\"Effect\":\"Allow\",\"Action\":\"cloudwatch:PutMetricData\",\"Resource\":"
		    "\"*\"}]}");
	assert_json_is(f->json, "{\"read\":[],\"write\":[],\"allow\":[{\"actions\":"
				"[\"cloudwatch:PutMetricData\"],\"resources\":[\"*\"],"
				"\"sid\":\"KilnGpuMetrics\"}]}");
}

static void test_a_policy_edited_outside_kiln_reads_back_as_allow_entries(void **state)
{
	struct rfx *f = *state;

	/* One statement, not a list; a string Resource; unsorted, an action twice. */
	f->json = aws_role_policy_decompile(
	    &scope, "{\"Version\":\"2012-10-17\",\"Statement\":{\"Effect\":\"Allow\",\"Action\":"
		    "[\"logs:PutLogEvents\",\"logs:CreateLogStream\",\"logs:PutLogEvents\"],"
		    "\"Resource\":\"arn:aws:logs:us-east-1:123456789012:log-group:train:*\"}}");
	assert_json_is(f->json, "{\"read\":[],\"write\":[],\"allow\":[{\"actions\":"
				"[\"logs:CreateLogStream\",\"logs:PutLogEvents\"],\"resources\":"
				"[\"arn:aws:logs:us-east-1:123456789012:log-group:train:*\"]}]}");
}

static void test_a_statement_the_spec_cannot_write_keeps_its_text(void **state)
{
	struct rfx *f = *state;

	f->json = aws_role_policy_decompile(
	    &scope, "{\"Statement\":["
		    "{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\"],"
		    "\"Resource\":\"arn:aws:s3:::kiln-demo-default-data/*\"},"
		    "{\"Effect\":\"Deny\",\"Action\":\"s3:DeleteObject\",\"Resource\":\"*\"},"
		    "{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\",\"s3:PutObject\"],"
		    "\"Resource\":\"arn:aws:s3:::kiln-demo-default-logs/*\"}]}");
	/* A Deny is not an allow; a store statement with other actions is not kiln's. */
	assert_json_is(f->json,
		       "{\"read\":[\"data\"],\"write\":[],\"allow\":["
		       "{\"actions\":[\"s3:DeleteObject\"],\"resources\":[\"*\"],\"statement\":"
		       "{\"Effect\":\"Deny\",\"Action\":\"s3:DeleteObject\",\"Resource\":\"*\"}},"
		       "{\"actions\":[\"s3:GetObject\",\"s3:PutObject\"],"
		       "\"resources\":[\"arn:aws:s3:::kiln-demo-default-logs/*\"]}]}");
}

static void test_another_scope_s_bucket_is_not_read_back_as_a_store(void **state)
{
	struct rfx *f = *state;

	f->json = aws_role_policy_decompile(
	    &scope, "{\"Statement\":[{\"Effect\":\"Allow\",\"Action\":[\"s3:GetObject\"],"
		    "\"Resource\":\"arn:aws:s3:::kiln-demo-other-data/*\"}]}");
	assert_json_is(f->json, "{\"read\":[],\"write\":[],\"allow\":[{\"actions\":"
				"[\"s3:GetObject\"],\"resources\":"
				"[\"arn:aws:s3:::kiln-demo-other-data/*\"]}]}");
}

static void test_an_empty_or_missing_policy_holds_nothing(void **state)
{
	struct rfx *f = *state;

	f->json = aws_role_policy_decompile(&scope, "");
	assert_json_is(f->json, "{\"read\":[],\"write\":[]}");
}

#define FS_ARN "arn:aws:elasticfilesystem:us-east-1:123456789012:file-system/fs-0123456789abcdef0"

/* Compile attrs with one file system, store, at FS_ARN, and expect want. */
static void assert_compiles_with_fs(struct rfx *f, const char *attrs_text, const char *store,
				    const char *want)
{
	json_t *attrs = json_loads(attrs_text, 0, NULL);
	json_t *efs = json_pack("{s:s}", store, FS_ARN);

	f->text = aws_role_policy_compile(&scope, attrs, efs, NULL);
	assert_string_equal(f->text, want);
	json_decref(attrs);
	json_decref(efs);
}

static void test_an_nfs_read_is_client_mount_on_the_file_system_arn(void **state)
{
	assert_compiles_with_fs(*state, "{\"read\":[],\"write\":[],\"nfs_read\":[\"home\"]}",
				"home",
				"{\"Version\":\"2012-10-17\",\"Statement\":["
				"{\"Effect\":\"Allow\",\"Action\":[\"elasticfilesystem:"
				"ClientMount\"],\"Resource\":\"" FS_ARN "\","
				"\"Sid\":\"KilnNfsReadhome\"}]}");
}

static void test_an_nfs_write_adds_client_write_and_the_sid_spells_dashes_x(void **state)
{
	assert_compiles_with_fs(
	    *state, "{\"read\":[],\"write\":[],\"nfs_write\":[\"shared-home\"]}", "shared-home",
	    "{\"Version\":\"2012-10-17\",\"Statement\":["
	    "{\"Effect\":\"Allow\",\"Action\":[\"elasticfilesystem:"
	    "ClientMount\",\"elasticfilesystem:ClientWrite\"],"
	    "\"Resource\":\"" FS_ARN "\","
	    "\"Sid\":\"KilnNfsWritesharedXhome\"}]}");
}

static void test_a_file_system_not_made_yet_is_known_after_apply(void **state)
{
	struct rfx *f = *state;
	json_t *attrs = json_loads("{\"read\":[],\"write\":[],\"nfs_read\":[\"home\"]}", 0, NULL);

	f->text = aws_role_policy_compile(&scope, attrs, NULL, NULL);
	assert_non_null(strstr(f->text, "\"Resource\":\"(known after apply: aws_efs.home)\""));
	json_decref(attrs);
}

static void test_the_plan_names_a_file_system_refresh_saw_by_its_arn(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *attrs = json_loads("{\"read\":[],\"write\":[],\"nfs_read\":[\"home\"]}", 0, NULL);
	json_t *live = json_pack("{s:s, s:{s:s}, s:{s:s, s:s, s:s}}", "id", "fs-1", "attrs", "arn",
				 FS_ARN, "tags", PROV_TAG_CLUSTER, "demo", PROV_TAG_WORKSPACE,
				 "default", PROV_TAG_ADDRESS, "aws_efs.home");
	json_t *other = json_pack("{s:s, s:{s:s}, s:{s:s, s:s, s:s}}", "id", "fs-2", "attrs", "arn",
				  "arn:aws:elasticfilesystem:us-east-1:1:file-system/fs-2", "tags",
				  PROV_TAG_CLUSTER, "demo", PROV_TAG_WORKSPACE, "other",
				  PROV_TAG_ADDRESS, "aws_efs.home");

	f->spec = NULL;
	if (load_validate(&f->spec,
			  "kiln: 1\ncluster: demo\nprovider: {name: aws, region: us-east-1}\n",
			  &f->d) != 0 ||
	    provider_aws.open(&f->ctx, f->spec, &err) != 0)
		fail_msg("open: %s", err.msg);
	/* Another workspace's file system of the same name is not this one's. */
	aws_efs_remember(f->ctx, other);
	f->text = provider_aws.role_policy(f->ctx, &scope, "aws_iam_role", attrs, false);
	assert_non_null(strstr(f->text, "(known after apply: aws_efs.home)"));
	free(f->text);
	aws_efs_remember(f->ctx, live);
	f->text = provider_aws.role_policy(f->ctx, &scope, "aws_iam_role", attrs, false);
	assert_non_null(strstr(f->text, "\"Resource\":\"" FS_ARN "\""));
	json_decref(attrs);
	json_decref(live);
	json_decref(other);
}

static void test_nfs_stores_read_back_by_name_beside_buckets_and_allow(void **state)
{
	assert_round_trip(*state, "{\"read\":[\"data\"],\"write\":[],\"nfs_read\":[\"home\"],"
				  "\"nfs_write\":[\"my-scratch-2\"],\"allow\":[{\"actions\":[\"ecr:"
				  "GetAuthorizationToken\"],\"resources\":[\"*\"]}]}");
}

static void test_an_nfs_statement_edited_outside_kiln_is_an_allow_entry(void **state)
{
	struct rfx *f = *state;

	/* ClientRootAccess added by hand: no longer kiln's statement, so it shows as drift. */
	f->json = aws_role_policy_decompile(
	    &scope, "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"KilnNfsReadhome\","
		    "\"Effect\":\"Allow\",\"Action\":[\"elasticfilesystem:ClientMount\","
		    "\"elasticfilesystem:ClientRootAccess\"],\"Resource\":\"" FS_ARN "\"}]}");
	assert_null(json_object_get(f->json, "nfs_read"));
	assert_int_equal(json_array_size(json_object_get(f->json, "allow")), 1);
}

/* --- expand --- */

#define AWS_HEAD                                                                                   \
	"kiln: 1\n"                                                                                \
	"cluster: demo\n"                                                                          \
	"provider: {name: aws, region: us-east-1}\n"                                               \
	"storage:\n"                                                                               \
	"  data: {tier: object}\n"                                                                 \
	"iam:\n"                                                                                   \
	"  roles:\n"                                                                               \
	"    trainer:\n"                                                                           \
	"      read: [data]\n"

static int expand(struct rfx *f, const char *yaml, json_t **out, struct kiln_error *err)
{
	if (load_validate(&f->spec, yaml, &f->d) != 0) {
		diags_dump(&f->d);
		fail_msg("the spec does not validate");
	}
	if (provider_aws.open(&f->ctx, f->spec, err) != 0)
		fail_msg("open: %s", err->msg);
	return provider_aws.expand(f->ctx, f->spec, out, err);
}

static const json_t *role_attrs(const json_t *all)
{
	return json_object_get(json_object_get(all, "aws_iam_role.trainer"), "attrs");
}

static void test_expand_sorts_allow_so_a_reorder_is_no_change(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *all = NULL;

	assert_int_equal(
	    expand(f,
		   AWS_HEAD "      allow:\n"
			    "        - {actions: [ecr:GetAuthorizationToken], resources: [\"*\"]}\n"
			    "        - actions: [ecr:GetDownloadUrlForLayer, ecr:BatchGetImage, "
			    "ecr:BatchGetImage]\n"
			    "          resources: [\"arn:aws:ecr:us-east-1:1:repository/b\", "
			    "\"arn:aws:ecr:us-east-1:1:repository/a\"]\n",
		   &all, &err),
	    PROV_OK);
	f->json = all;
	assert_json_is(json_object_get(role_attrs(all), "allow"),
		       "[{\"actions\":[\"ecr:BatchGetImage\",\"ecr:GetDownloadUrlForLayer\"],"
		       "\"resources\":[\"arn:aws:ecr:us-east-1:1:repository/a\","
		       "\"arn:aws:ecr:us-east-1:1:repository/b\"]},"
		       "{\"actions\":[\"ecr:GetAuthorizationToken\"],\"resources\":[\"*\"]}]");
}

static void test_expand_of_a_role_without_allow_has_no_allow_attribute(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *all = NULL;

	assert_int_equal(expand(f, AWS_HEAD, &all, &err), PROV_OK);
	f->json = all;
	assert_null(json_object_get(role_attrs(all), "allow"));
	assert_json_is(json_object_get(role_attrs(all), "read"), "[\"data\"]");
}

static void test_expand_puts_nfs_stores_apart_and_lustre_nowhere_with_why(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *all = NULL, *role;

	assert_int_equal(expand(f,
				"kiln: 1\n"
				"cluster: demo\n"
				"provider: {name: aws, region: us-east-1}\n"
				"storage:\n"
				"  data: {tier: object}\n"
				"  home: {tier: nfs, mount: /home}\n"
				"  scratch: {tier: lustre, capacity_gb: 1200, mount: /fsx}\n"
				"iam:\n"
				"  roles:\n"
				"    trainer: {read: [data, home], write: [scratch]}\n",
				&all, &err),
			 PROV_OK);
	f->json = all;
	role = json_object_get(all, "aws_iam_role.trainer");
	assert_json_is(json_object_get(role_attrs(all), "read"), "[\"data\"]");
	assert_json_is(json_object_get(role_attrs(all), "write"), "[]");
	assert_json_is(json_object_get(role_attrs(all), "nfs_read"), "[\"home\"]");
	assert_null(json_object_get(role_attrs(all), "nfs_write"));
	/* The policy names the file system's ARN: the role comes after it. */
	assert_json_is(json_object_get(role, "deps"), "[\"aws_efs.home\", \"aws_s3_bucket.data\"]");
	assert_non_null(
	    strstr(json_string_value(json_object_get(json_object_get(role, "why"), "write")),
		   "scratch: Lustre clients mount over the network"));
}

static void test_expand_refuses_a_policy_over_iam_s_limit_naming_role_and_size(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct strbuf sb = {0};
	json_t *all = NULL;
	int i;

	sb_adds(&sb, AWS_HEAD "      allow:\n");
	for (i = 0; i < 100; i++)
		sb_addf(&sb,
			"        - {actions: [ecr:BatchGetImage], resources: "
			"[\"arn:aws:ecr:us-east-1:123456789012:repository/train-%03d\"]}\n",
			i);
	f->text = sb_detach(&sb);
	assert_int_equal(expand(f, f->text, &all, &err), PROV_ERROR);
	assert_null(all);
	assert_string_equal(err.msg, "aws: t.yaml:8:5: iam.roles.trainer: the role's inline policy "
				     "would be up to 12647 characters; IAM allows at most 10240");
	assert_string_equal(err.hint, "merge allow statements that share resources or actions, or "
				      "split the stores between two roles");
}

static void test_expand_refuses_a_resource_outside_aws_partitions(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *all = NULL;

	assert_int_equal(expand(f,
				AWS_HEAD "      allow:\n"
					 "        - {actions: [s3:GetObject], resources: "
					 "[\"arn:aws-cn:s3:::b/*\", \"arn:sim:s3:::b/*\"]}\n",
				&all, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg, "aws: t.yaml:11:11: iam.roles.trainer.allow[0]: "
				     "'arn:sim:s3:::b/*' is not in an AWS partition (arn:aws:, "
				     "arn:aws-cn:, arn:aws-us-gov:...)");
}

static void test_expand_refuses_a_sim_action(void **state)
{
	struct rfx *f = *state;
	struct kiln_error err = {{0}, {0}};
	json_t *all = NULL;

	assert_int_equal(expand(f,
				AWS_HEAD
				"      allow:\n"
				"        - {actions: [sim:GetObject], resources: [\"*\"]}\n",
				&all, &err),
			 PROV_ERROR);
	assert_string_equal(err.msg,
			    "aws: t.yaml:11:11: iam.roles.trainer.allow[0]: "
			    "'sim:GetObject' is an action of the sim provider, not of AWS");
}

/* The statement of kiln's policy that allows action on resource (NULL when none). */
static const json_t *kiln_statement(const json_t *doc, const char *action, const char *resource)
{
	const json_t *st, *v;
	size_t i, j;
	bool act;

	json_array_foreach(json_object_get(doc, "Statement"), i, st)
	{
		act = false;
		json_array_foreach(json_object_get(st, "Action"), j, v) act |=
		    strcmp(json_string_value(v), action) == 0;
		if (!act)
			continue;
		v = json_object_get(st, "Resource");
		if (json_is_string(v) && strcmp(json_string_value(v), resource) == 0)
			return st;
		json_array_foreach(v, j, v) if (strcmp(json_string_value(v), resource) == 0) return st;
	}
	return NULL;
}

/* Issue 33, finding 8: each action on its resource type, in the region, by kiln's tags. */
static void test_kiln_policy_scopes_each_action_to_its_type_and_tags(void **state)
{
	struct rfx *f = *state;
	struct prov_ctx ctx = {.region = "us-east-1"};
	static const char *const actions[] = {"ec2:DescribeVpcs", "ec2:RunInstances",
					      "ec2:TerminateInstances"};
	const json_t *st;

	f->text = aws_iam_policy(&ctx, &scope, actions, 3);
	f->json = json_loads(f->text, 0, NULL);
	assert_non_null(f->json);
	st = kiln_statement(f->json, "ec2:TerminateInstances", "arn:aws:ec2:us-east-1:*:instance/*");
	assert_non_null(st);
	assert_json_is(json_object_get(st, "Condition"),
		       "{\"StringEquals\":{\"aws:ResourceTag/kiln:cluster\":\"demo\","
		       "\"aws:ResourceTag/kiln:workspace\":\"default\"}}");
	st = kiln_statement(f->json, "ec2:RunInstances", "arn:aws:ec2:us-east-1:*:instance/*");
	assert_non_null(st);
	assert_json_is(json_object_get(st, "Condition"),
		       "{\"StringEquals\":{\"aws:RequestTag/kiln:cluster\":\"demo\","
		       "\"aws:RequestTag/kiln:workspace\":\"default\"},"
		       "\"ForAllValues:StringLike\":{\"aws:TagKeys\":[\"kiln:*\"]}}");
	/* The interfaces a launch makes are untagged: their type in the region, no condition. */
	st = kiln_statement(f->json, "ec2:RunInstances",
			    "arn:aws:ec2:us-east-1:*:network-interface/*");
	assert_non_null(st);
	assert_null(json_object_get(st, "Condition"));
	st = kiln_statement(f->json, "ec2:DescribeVpcs", "*");
	assert_non_null(st);
	assert_string_equal(json_string_value(json_object_get(st, "Sid")), "KilnNoResourceType");
	assert_null(kiln_statement(f->json, "ec2:RunInstances", "*"));
	assert_null(kiln_statement(f->json, "ec2:TerminateInstances", "*"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    rp_test(test_ssm_reads_compile_to_get_parameter_on_each_exact_arn),
	    rp_test(test_ssm_reads_name_the_known_account),
	    rp_test(test_kiln_policy_scopes_each_action_to_its_type_and_tags),
	    rp_test(test_ssm_reads_read_back_beside_stores_and_allow),
	    rp_test(test_a_kms_key_arn_is_decrypt_on_exactly_that_key_through_ssm),
	    rp_test(test_a_kms_alias_is_decrypt_on_the_key_it_names_through_ssm),
	    rp_test(test_each_kms_key_form_reads_back_as_written),
	    rp_test(test_a_kms_statement_without_its_condition_is_an_allow_entry),
	    rp_test(test_an_ssm_statement_of_another_workspace_reads_back_as_allow),
	    rp_test(test_stores_and_allow_entries_compile_in_order),
	    rp_test(test_a_role_without_allow_reads_back_without_the_key),
	    rp_test(test_an_nfs_read_is_client_mount_on_the_file_system_arn),
	    rp_test(test_an_nfs_write_adds_client_write_and_the_sid_spells_dashes_x),
	    rp_test(test_a_file_system_not_made_yet_is_known_after_apply),
	    rp_test(test_the_plan_names_a_file_system_refresh_saw_by_its_arn),
	    rp_test(test_nfs_stores_read_back_by_name_beside_buckets_and_allow),
	    rp_test(test_an_nfs_statement_edited_outside_kiln_is_an_allow_entry),
	    rp_test(test_expand_puts_nfs_stores_apart_and_lustre_nowhere_with_why),
	    rp_test(test_allow_entries_read_back_as_written),
	    rp_test(test_an_allow_entry_that_looks_like_a_store_grant_stays_an_allow_entry),
	    rp_test(test_the_node_health_statement_lets_a_node_tag_only_itself_with_only_its_key),
	    rp_test(test_the_node_health_statement_changed_outside_kiln_is_an_allow_entry),
	    rp_test(test_the_gpu_metrics_statement_puts_metrics_only_into_the_agents_namespace),
	    rp_test(test_the_gpu_metrics_statement_without_its_condition_is_an_allow_entry),
	    rp_test(test_a_policy_edited_outside_kiln_reads_back_as_allow_entries),
	    rp_test(test_a_statement_the_spec_cannot_write_keeps_its_text),
	    rp_test(test_another_scope_s_bucket_is_not_read_back_as_a_store),
	    rp_test(test_an_empty_or_missing_policy_holds_nothing),
	    rp_test(test_expand_sorts_allow_so_a_reorder_is_no_change),
	    rp_test(test_expand_of_a_role_without_allow_has_no_allow_attribute),
	    rp_test(test_expand_refuses_a_policy_over_iam_s_limit_naming_role_and_size),
	    rp_test(test_expand_refuses_a_resource_outside_aws_partitions),
	    rp_test(test_expand_refuses_a_sim_action),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
