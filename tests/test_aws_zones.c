/*
 * test_aws_zones.c - how aws expand orders a fabric for one zone: with a
 * list of zones every node group follows the one before it, and the
 * zone-bound storage (Lustre, EFS mount targets) is made after all of them
 * without depending on them; with one zone the file systems come first.
 * The moves themselves run against moto (tests/e2e/aws.sh).
 */
#include "testutil.h"

#include "aws/aws.h"
#include "aws/aws_int.h"

struct zfx {
	struct diags d;
	struct spec *spec;
	struct prov_ctx *ctx;
	json_t *all;
};

static int zfx_setup(void **state)
{
	*state = xcalloc(1, sizeof(struct zfx));
	return 0;
}

static int zfx_teardown(void **state)
{
	struct zfx *f = *state;

	if (f->ctx)
		provider_aws.close(f->ctx);
	spec_free(f->spec);
	diags_release(&f->d);
	json_decref(f->all);
	free(f);
	return 0;
}

#define SPEC(zone)                                                                                 \
	"kiln: 1\n"                                                                                \
	"cluster: demo\n"                                                                          \
	"provider: {name: aws, region: us-east-1, zone: " zone "}\n"                               \
	"network: {cidr: 10.0.0.0/16, fabric: efa}\n"                                              \
	"compute:\n"                                                                               \
	"  trainers: {instance_type: p5.48xlarge, count: 2, image: ami-0123456789abcdef0}\n"       \
	"  login: {instance_type: m7i.xlarge, count: 1, image: ami-0123456789abcdef0, role: r}\n"  \
	"storage:\n"                                                                               \
	"  scratch: {tier: lustre, capacity_gb: 1200, mount: /fsx}\n"                              \
	"  home: {tier: nfs, mount: /home}\n"                                                      \
	"iam: {roles: {r: {read: [scratch, home]}}}\n"

static const json_t *expand(struct zfx *f, const char *yaml)
{
	struct kiln_error err = {{0}, {0}};

	if (load_validate(&f->spec, yaml, &f->d) != 0) {
		diags_dump(&f->d);
		fail_msg("the spec does not validate");
	}
	if (provider_aws.open(&f->ctx, f->spec, &err) != 0)
		fail_msg("open: %s", err.msg);
	if (provider_aws.expand(f->ctx, f->spec, &f->all, &err) != PROV_OK)
		fail_msg("expand: %s", err.msg);
	return f->all;
}

/* The JSON text of key ("deps", "after") of address, "null" when it has none. */
static void assert_list(const json_t *all, const char *addr, const char *key, const char *want)
{
	char *got = json_dumps(json_object_get(json_object_get(all, addr), key),
			       JSON_COMPACT | JSON_ENCODE_ANY);

	if (strcmp(got ? got : "null", want) != 0)
		fail_msg("%s %s: got %s, want %s", addr, key, got ? got : "null", want);
	free(got);
}

static void test_with_a_list_of_zones_storage_is_made_after_every_group_not_with_them(void **state)
{
	const json_t *all = expand(*state, SPEC("[us-east-1a, us-east-1b]"));

	/* Ordered after the nodes, but neither replaced with them nor keeping them. */
	assert_list(all, "aws_fsx_lustre.scratch", "after",
		    "[\"aws_instance_group.login\",\"aws_instance_group.trainers\"]");
	assert_list(all, "aws_fsx_lustre.scratch", "deps",
		    "[\"aws_security_group.main\",\"aws_subnet.us-east-1a\","
		    "\"aws_subnet.us-east-1b\"]");
	assert_list(all, "aws_efs_mount_target.home", "after",
		    "[\"aws_instance_group.login\",\"aws_instance_group.trainers\"]");
	/* The file system itself is regional: made whenever. */
	assert_list(all, "aws_efs.home", "after", "null");
	assert_non_null(json_object_get(
	    json_object_get(json_object_get(all, "aws_fsx_lustre.scratch"), "why"), "zone"));
}

static void test_with_a_list_of_zones_every_group_is_made_after_the_one_before(void **state)
{
	const json_t *all = expand(*state, SPEC("[us-east-1a, us-east-1b]"));
	const char *why;

	/*
	 * login is no GPU group, outside the placement group, but joins the zone
	 * all the same: made after trainers, without depending on it, so a new
	 * image for trainers does not replace login too.
	 */
	assert_list(all, "aws_instance_group.login", "after", "[\"aws_instance_group.trainers\"]");
	/* It mounts home: the EFS file system (regional) comes first, its mount target after. */
	assert_list(all, "aws_instance_group.login", "deps",
		    "[\"aws_efs.home\",\"aws_iam_role.r\",\"aws_security_group.main\","
		    "\"aws_subnet.us-east-1a\",\"aws_subnet.us-east-1b\"]");
	why = json_string_value(json_object_get(
	    json_object_get(json_object_get(all, "aws_instance_group.trainers"), "why"), "zones"));
	assert_non_null(why);
	assert_non_null(strstr(why, "us-east-1a else us-east-1b"));
}

static void test_with_one_zone_the_file_systems_come_before_the_nodes(void **state)
{
	const json_t *all = expand(*state, SPEC("us-east-1a"));

	assert_list(all, "aws_fsx_lustre.scratch", "after", "null");
	assert_list(all, "aws_fsx_lustre.scratch", "deps",
		    "[\"aws_security_group.main\",\"aws_subnet.us-east-1a\"]");
	/* login's role reaches both: it mounts them; trainers has no role and mounts nothing. */
	assert_list(all, "aws_instance_group.login", "deps",
		    "[\"aws_efs.home\",\"aws_efs_mount_target.home\",\"aws_fsx_lustre.scratch\","
		    "\"aws_iam_role.r\",\"aws_security_group.main\",\"aws_subnet.us-east-1a\"]");
	assert_list(all, "aws_instance_group.trainers", "deps",
		    "[\"aws_placement_group.fabric\",\"aws_security_group.main\","
		    "\"aws_subnet.us-east-1a\"]");
	assert_null(json_object_get(
	    json_object_get(json_object_get(all, "aws_instance_group.trainers"), "why"), "zones"));
}

/* The document of address in all. */
static const char *doc_of(const json_t *all, const char *addr)
{
	return json_string_value(json_object_get(
	    json_object_get(json_object_get(all, addr), "attrs"), "user_data_text"));
}

static void test_with_one_zone_user_data_names_the_file_systems_to_fill_at_launch(void **state)
{
	const json_t *all = expand(*state, SPEC("us-east-1a"));
	const char *doc = doc_of(all, "aws_instance_group.login");

	assert_non_null(doc);
	assert_non_null(
	    strstr(doc, "mount_fs 'scratch' '{{kiln:lustre:scratch}}' '/fsx' 'lustre'"));
	assert_non_null(strstr(doc, "mount_fs 'home' '{{kiln:nfs:home}}' '/home' 'nfs4'"));
	assert_null(strstr(doc, "describe-file-systems"));
}

static void test_with_a_list_of_zones_the_node_finds_its_lustre_at_boot(void **state)
{
	const json_t *all = expand(*state, SPEC("[us-east-1a, us-east-1b]"));
	const char *doc = doc_of(all, "aws_instance_group.login");
	const char *why = json_string_value(json_object_get(
	    json_object_get(json_object_get(all, "aws_instance_group.login"), "why"), "user_data"));

	assert_non_null(doc);
	assert_non_null(strstr(doc, "aws fsx describe-file-systems --region us-east-1"));
	assert_non_null(strstr(doc, "Value=='aws_fsx_lustre.scratch'"));
	assert_non_null(strstr(doc, "Value=='{{kiln:workspace}}'"));
	assert_non_null(strstr(doc, "mount_fs 'home' '{{kiln:nfs:home}}'"));
	assert_non_null(why);
	assert_string_equal(why, "mounts scratch at /fsx (FSx for Lustre made after the nodes, in "
				 "their zone: found at boot by its kiln tags once AVAILABLE); home "
				 "at /home (EFS FILE_SYSTEM.efs.REGION.amazonaws.com, its mount "
				 "target made after the nodes: the mount retries)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(
		test_with_a_list_of_zones_storage_is_made_after_every_group_not_with_them,
		zfx_setup, zfx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_with_a_list_of_zones_every_group_is_made_after_the_one_before, zfx_setup,
		zfx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_with_one_zone_the_file_systems_come_before_the_nodes, zfx_setup, zfx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_with_one_zone_user_data_names_the_file_systems_to_fill_at_launch, zfx_setup,
		zfx_teardown),
	    cmocka_unit_test_setup_teardown(
		test_with_a_list_of_zones_the_node_finds_its_lustre_at_boot, zfx_setup,
		zfx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
