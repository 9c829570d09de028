/*
 * test_validate.c - the cross-section rules: references between groups,
 * roles and stores, the aws provider's requirements, fabric against zones,
 * encryption, mounts, the advisory warnings, and that one broken section does
 * not cascade into false problems elsewhere.
 */
#include "testutil.h"

/* Three lines every small sim spec starts with; the rest is line 4 on. */
#define SIM                                                                                        \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: sim}\n"

/* The same on aws; a group there needs an image. */
#define AWS                                                                                        \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: aws, region: us-east-1}\n"

#define AMI "ami-0123456789abcdef0"

/* Validate a spec that must pass without any diagnostic. */
static void valid_clean(struct fx *f, const char *yaml)
{
	int ret = fx_validate(f, yaml);

	assert_no_diags(&f->d);
	assert_int_equal(ret, 0);
}

/* Validate a spec that must produce at least one error. */
static void invalid(struct fx *f, const char *yaml)
{
	assert_failed_with_errors(&f->d, fx_validate(f, yaml));
}

/* Validate a spec that may warn but must not produce an error. */
static void valid(struct fx *f, const char *yaml)
{
	int ret = fx_validate(f, yaml);

	assert_no_errors(&f->d);
	assert_int_equal(ret, 0);
}

/* References. */

static void test_undefined_role_suggests_the_closest_role(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "compute:\n"
		       "  g: {gpu: \"A100:8\", role: trainr}\n"
		       "iam:\n"
		       "  roles:\n"
		       "    trainer: {}\n");
	assert_error(&f->d, 5, 28, "compute.g.role: role 'trainr' is not defined");
	assert_hint(&f->d, 5, 28, "did you mean 'trainer'?");
}

static void test_undefined_role_with_nothing_close_says_where_to_define_it(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "compute:\n"
		       "  g: {gpu: \"A100:8\", role: login}\n");
	assert_error(&f->d, 5, 28, "compute.g.role: role 'login' is not defined");
	assert_hint(&f->d, 5, 28, "define it under iam.roles");
}

static void test_undefined_store_in_role_read_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  checkpoints: {tier: object}\n"
		       "iam:\n"
		       "  roles:\n"
		       "    r: {read: [chekpoints]}\n");
	assert_error(&f->d, 8, 16, "iam.roles.r.read: store 'chekpoints' is not defined");
	assert_hint(&f->d, 8, 16, "did you mean 'checkpoints'?");
}

static void test_undefined_store_in_role_write_says_where_to_define_it(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  checkpoints: {tier: object}\n"
		       "iam:\n"
		       "  roles:\n"
		       "    r: {write: [nowhere]}\n");
	assert_error(&f->d, 8, 17, "iam.roles.r.write: store 'nowhere' is not defined");
	assert_hint(&f->d, 8, 17, "define it under storage:");
}

static void test_store_listed_twice_in_a_role_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "storage:\n"
		     "  data: {tier: object}\n"
		     "iam:\n"
		     "  roles:\n"
		     "    r: {read: [data, data]}\n"
		     "compute:\n"
		     "  g: {gpu: \"A100:8\", role: r}\n");
	assert_warning(&f->d, 8, 22, "iam.roles.r lists store 'data' twice");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_import_of_an_undefined_store_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  scratch: {tier: lustre, capacity_gb: 1200, import: dataset}\n"
		       "  datasets: {tier: object}\n");
	assert_error(&f->d, 5, 54, "storage.scratch.import: store 'dataset' is not defined");
	assert_hint(&f->d, 5, 54, "did you mean 'datasets'?");
}

static void test_import_of_a_lustre_store_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  fast: {tier: lustre, capacity_gb: 1200}\n"
		       "  scratch: {tier: lustre, capacity_gb: 1200, import: fast}\n");
	assert_error(&f->d, 6, 54,
		     "storage.scratch.import: 'fast' is a lustre store; imports come from an "
		     "object store");
	assert_hint(&f->d, 6, 54, "import from a store with tier: object");
}

static void test_import_of_an_nfs_store_says_an_nfs_store(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  home: {tier: nfs}\n"
		       "  scratch: {tier: lustre, capacity_gb: 1200, import: home}\n");
	assert_error(&f->d, 6, 54,
		     "storage.scratch.import: 'home' is an nfs store; imports come from an "
		     "object store");
}

static void test_import_of_an_object_store_is_accepted(void **state)
{
	valid_clean(*state, SIM "storage:\n"
				"  data: {tier: object}\n"
				"  scratch: {tier: lustre, capacity_gb: 1200, import: data}\n");
}

/* Store rules. */

static void test_expiry_without_versioning_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  data: {tier: object, expire_noncurrent_after: 30d}\n");
	assert_error(&f->d, 5, 49, "storage.data.expire_noncurrent_after needs versioning: true");
	assert_hint(&f->d, 5, 49, "add versioning: true, or remove expire_noncurrent_after");
}

static void test_unencrypted_disk_without_allow_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "compute:\n"
		       "  g:\n"
		       "    gpu: A100:8\n"
		       "    disk: {encrypted: false}\n");
	assert_error(&f->d, 7, 23,
		     "compute.g.disk.encrypted: false needs allow_unencrypted: true beside it");
	assert_hint(
	    &f->d, 7, 23,
	    "keep encryption at rest, or add allow_unencrypted: true (kiln audit reports it)");
}

static void test_unencrypted_disk_with_allow_is_accepted(void **state)
{
	valid_clean(*state, SIM "compute:\n"
				"  g:\n"
				"    gpu: A100:8\n"
				"    disk: {encrypted: false, allow_unencrypted: true}\n");
}

static void test_allow_unencrypted_on_an_encrypted_disk_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "compute:\n"
		     "  g:\n"
		     "    gpu: A100:8\n"
		     "    disk: {allow_unencrypted: true}\n");
	assert_warning(&f->d, 7, 31,
		       "compute.g.disk.allow_unencrypted has no effect while encryption is on");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_unencrypted_store_without_allow_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  data: {tier: object, encrypted: false}\n");
	assert_error(&f->d, 5, 35,
		     "storage.data.encrypted: false needs allow_unencrypted: true beside it");
}

static void test_unencrypted_store_with_allow_is_accepted(void **state)
{
	valid_clean(*state, SIM "storage:\n"
				"  home: {tier: nfs, encrypted: false, allow_unencrypted: true}\n");
}

static void test_allow_unencrypted_on_an_encrypted_store_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "storage:\n"
		     "  data: {tier: object, allow_unencrypted: true}\n");
	assert_warning(&f->d, 5, 43,
		       "storage.data.allow_unencrypted has no effect while encryption is on");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_two_stores_on_one_mount_point_are_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  a: {tier: nfs, mount: /shared}\n"
		       "  b: {tier: lustre, capacity_gb: 1200, mount: /shared}\n");
	assert_error(&f->d, 6, 47,
		     "storage.b.mount: /shared is already the mount point of store 'a'");
	assert_hint(&f->d, 6, 47, "give each file system its own mount:");
	assert_int_equal(f->d.errors, 1);
}

static void test_mount_on_a_later_stores_default_mount_is_refused(void **state)
{
	/* b mounts at /mnt/b by default; a takes that path first. */
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  a: {tier: nfs, mount: /mnt/b}\n"
		       "  b: {tier: nfs}\n");
	assert_message(&f->d, "is already the mount point of store");
}

static void test_mount_on_an_earlier_stores_default_mount_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  b: {tier: nfs}\n"
		       "  a: {tier: nfs, mount: /mnt/b}\n");
	assert_error(&f->d, 6, 25,
		     "storage.a.mount: /mnt/b is already the mount point of store 'b'");
}

/* The aws provider. */

static void test_aws_group_without_image_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, AWS "compute:\n"
		       "  g:\n"
		       "    instance_type: m7i.xlarge\n");
	assert_error(&f->d, 5, 3, "compute.g needs an image on the aws provider");
	assert_hint(&f->d, 5, 3, "add image: ami-... (an AMI in us-east-1)");
}

static void test_sim_group_without_image_is_accepted(void **state)
{
	valid_clean(*state, SIM "compute:\n"
				"  g:\n"
				"    instance_type: m7i.xlarge\n");
}

static void test_aws_image_that_is_not_an_ami_id_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, AWS "compute:\n"
		       "  g:\n"
		       "    instance_type: m7i.xlarge\n"
		       "    image: ami-123\n");
	assert_error(&f->d, 7, 12, "compute.g.image 'ami-123' is not an AMI id");
	assert_hint(&f->d, 7, 12, "write ami- and 8 or 17 hex digits, like ami-0123456789abcdef0");
}

static void test_aws_image_with_eight_hex_digits_is_accepted(void **state)
{
	valid_clean(*state, AWS "compute:\n"
				"  g:\n"
				"    instance_type: m7i.xlarge\n"
				"    image: ami-0123abcd\n");
}

static void test_aws_image_with_capital_hex_digits_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, AWS "compute:\n"
		       "  g:\n"
		       "    instance_type: m7i.xlarge\n"
		       "    image: ami-0123ABCD\n");
	assert_error(&f->d, 7, 12, "compute.g.image 'ami-0123ABCD' is not an AMI id");
}

static void test_aws_region_that_is_not_a_region_name_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, region: us-east}\n");
	assert_error(&f->d, 3, 31, "provider.region 'us-east' is not an AWS region name");
	assert_hint(&f->d, 3, 31, "write a region like us-east-1 or eu-west-2");
}

static void test_aws_region_with_three_words_is_accepted(void **state)
{
	valid_clean(*state, "kiln: 1\n"
			    "cluster: t\n"
			    "provider: {name: aws, region: us-gov-west-1}\n");
}

static void test_zone_of_another_region_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, region: us-east-1, zone: [us-east-1a, us-west-2a]}\n");
	assert_error(&f->d, 3, 61, "zone 'us-west-2a' is not in region 'us-east-1'");
	assert_hint(&f->d, 3, 61, "a zone is its region and a letter, like us-east-1a");
	assert_int_equal(f->d.errors, 1);
}

static void test_zone_that_is_the_region_itself_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, region: us-east-1, zone: us-east-1}\n");
	assert_error(&f->d, 3, 48, "zone 'us-east-1' is not in region 'us-east-1'");
}

static void test_zone_of_a_region_with_a_longer_number_is_refused(void **state)
{
	/* us-east-11a starts with "us-east-1" but is not that region and a letter. */
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, region: us-east-1, zone: us-east-11a}\n");
	assert_error(&f->d, 3, 48, "zone 'us-east-11a' is not in region 'us-east-1'");
}

static void test_aws_local_zone_of_the_region_is_accepted(void **state)
{
	valid_clean(
	    *state,
	    "kiln: 1\n"
	    "cluster: t\n"
	    "provider: {name: aws, region: us-west-2, zone: [us-west-2a, us-west-2-lax-1a]}\n");
}

static void test_aws_zones_without_a_region_must_share_one_region(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, zone: [us-east-1a, us-west-2b]}\n");
	assert_error(&f->d, 3, 42, "zone 'us-west-2b' is not in region 'us-east-1'");
	assert_int_equal(f->d.errors, 1);
}

static void test_aws_local_zone_listed_first_without_a_region_is_accepted(void **state)
{
	/* us-west-2-lax-1a is a real zone of us-west-2; the region must not be guessed wrong. */
	valid_clean(*state, "kiln: 1\n"
			    "cluster: t\n"
			    "provider: {name: aws, zone: [us-west-2-lax-1a, us-west-2a]}\n");
}

static void test_aws_zone_without_a_region_that_names_no_region_is_refused(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, zone: [useast1a]}\n");
	assert_error(&f->d, 3, 30, "provider.zone 'useast1a' is not an AWS availability zone");
	assert_hint(&f->d, 3, 30, "write a zone like us-east-1a, and set provider.region");
}

/* Fabric against zones. */

static void test_efa_across_zones_refuses_a_group_that_is_not_a_gang(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: sim, zone: [sim-1a, sim-1b]}\n"
		   "network: {fabric: efa}\n"
		   "compute:\n"
		   "  a: {gpu: \"H100:8\", gang: false}\n"
		   "  b: {gpu: \"H100:8\", gang: true}\n");
	assert_error(&f->d, 6, 28,
		     "compute.a has gang: false, but fabric: efa with more than one zone needs "
		     "every group to move between zones whole");
	assert_hint(&f->d, 6, 28, "set gang: true, or list a single zone");
	assert_int_equal(f->d.errors, 1);
}

static void test_efa_across_zones_accepts_groups_that_are_all_gangs(void **state)
{
	valid_clean(*state, "kiln: 1\n"
			    "cluster: t\n"
			    "provider: {name: sim, zone: [sim-1a, sim-1b]}\n"
			    "network: {fabric: efa}\n"
			    "compute:\n"
			    "  a: {gpu: \"H100:8\", gang: true}\n"
			    "  b: {gpu: \"H100:8\", gang: true}\n");
}

static void test_efa_in_one_zone_accepts_a_group_that_is_not_a_gang(void **state)
{
	valid_clean(*state, "kiln: 1\n"
			    "cluster: t\n"
			    "provider: {name: sim, zone: [sim-1a]}\n"
			    "network: {fabric: efa}\n"
			    "compute:\n"
			    "  a: {gpu: \"H100:8\", gang: false}\n");
}

static void test_ena_across_zones_accepts_a_group_that_is_not_a_gang(void **state)
{
	valid_clean(*state, "kiln: 1\n"
			    "cluster: t\n"
			    "provider: {name: sim, zone: [sim-1a, sim-1b]}\n"
			    "network: {fabric: ena}\n"
			    "compute:\n"
			    "  a: {gpu: \"H100:8\", gang: false}\n");
}

/* Advisory warnings. */

static void test_public_group_without_ingress_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "compute:\n"
		     "  g: {gpu: \"A100:8\", public: true}\n");
	assert_warning(&f->d, 5, 30, "compute.g is public, but network.ingress admits nothing");
	assert_hint(&f->d, 5, 30, "add a rule like {port: 22, from: 203.0.113.0/24}");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_ingress_without_a_public_group_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "network:\n"
		     "  ingress:\n"
		     "    - {port: 22, from: 203.0.113.0/24}\n"
		     "compute:\n"
		     "  g: {gpu: \"A100:8\"}\n");
	assert_warning(&f->d, 6, 5,
		       "network.ingress reaches only groups with public: true, and none is");
	assert_hint(&f->d, 6, 5, "set public: true on the group that should be reachable");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_ingress_with_a_public_group_is_quiet(void **state)
{
	valid_clean(*state, SIM "network:\n"
				"  ingress:\n"
				"    - {port: 22, from: 203.0.113.0/24}\n"
				"compute:\n"
				"  g: {gpu: \"A100:8\", public: true}\n");
}

static void test_store_under_both_read_and_write_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "storage:\n"
		     "  data: {tier: object}\n"
		     "iam:\n"
		     "  roles:\n"
		     "    r: {read: [data], write: [data]}\n"
		     "compute:\n"
		     "  g: {gpu: \"A100:8\", role: r}\n");
	assert_warning(&f->d, 8, 16, "iam.roles.r lists 'data' under both read and write");
	assert_hint(&f->d, 8, 16, "write includes read; remove it from read");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_role_used_by_no_group_warns(void **state)
{
	struct fx *f = *state;

	valid(f, SIM "storage:\n"
		     "  data: {tier: object}\n"
		     "iam:\n"
		     "  roles:\n"
		     "    r: {write: [data]}\n");
	assert_warning(&f->d, 8, 5, "role 'r' is used by no compute group");
	assert_hint(&f->d, 8, 5, "set role: r on a group, or remove the role");
	assert_diag_counts(&f->d, 0, 1);
}

/* Broken sections do not cascade. */

static void test_broken_compute_does_not_make_roles_unused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "compute: [trainers]\n"
		       "iam:\n"
		       "  roles:\n"
		       "    r: {}\n");
	assert_error(&f->d, 4, 10, "compute must be a mapping, got a list");
	assert_no_message(&f->d, "is used by no compute group");
	assert_int_equal(f->d.n, 1);
}

static void test_broken_group_does_not_make_its_role_unused(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "compute:\n"
		       "  g: [gpu]\n"
		       "iam:\n"
		       "  roles:\n"
		       "    r: {}\n");
	assert_error(&f->d, 5, 6, "compute.g must be a mapping, got a list");
	assert_int_equal(f->d.n, 1);
}

static void test_broken_compute_does_not_make_ingress_unreachable(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "network:\n"
		       "  ingress:\n"
		       "    - {port: 22, from: 203.0.113.0/24}\n"
		       "compute: [trainers]\n");
	assert_no_message(&f->d, "network.ingress reaches only");
	assert_int_equal(f->d.n, 1);
}

static void test_broken_iam_does_not_make_group_roles_undefined(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "compute:\n"
		       "  g: {gpu: \"A100:8\", role: r}\n"
		       "iam:\n"
		       "  roles:\n"
		       "    r: [data]\n");
	assert_error(&f->d, 8, 8, "iam.roles.r must be a mapping, got a list");
	assert_no_message(&f->d, "is not defined");
	assert_int_equal(f->d.n, 1);
}

static void test_broken_store_does_not_make_role_stores_undefined(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  data: {tier: objcet}\n"
		       "iam:\n"
		       "  roles:\n"
		       "    r: {read: [data]}\n"
		       "compute:\n"
		       "  g: {gpu: \"A100:8\", role: r}\n");
	assert_error(&f->d, 5, 16,
		     "storage.data.tier must be object, lustre, nfs or local, got 'objcet'");
	assert_hint(&f->d, 5, 16, "did you mean 'object'?");
	assert_no_message(&f->d, "is not defined");
	assert_int_equal(f->d.n, 1);
}

static void test_broken_store_does_not_make_imports_of_it_undefined(void **state)
{
	struct fx *f = *state;

	invalid(f, SIM "storage:\n"
		       "  data: {tier: objcet}\n"
		       "  scratch: {tier: lustre, capacity_gb: 1200, import: data}\n");
	assert_no_message(&f->d, "is not defined");
	assert_int_equal(f->d.n, 1);
}

static void test_broken_provider_does_not_demand_an_image(void **state)
{
	struct fx *f = *state;

	invalid(f, "kiln: 1\n"
		   "cluster: t\n"
		   "provider: {name: aws, regoin: us-east-1}\n"
		   "compute:\n"
		   "  g: {instance_type: m7i.xlarge}\n");
	assert_error(&f->d, 3, 23, "unknown key 'regoin' in provider");
	assert_no_message(&f->d, "needs an image");
	assert_int_equal(f->d.n, 1);
}

static void test_image_with_an_unset_variable_does_not_also_need_an_image(void **state)
{
	struct fx *f = *state;

	invalid(f, AWS "compute:\n"
		       "  g: {instance_type: m7i.xlarge, image: \"${var.ami}\"}\n");
	assert_error(&f->d, 5, 42, "compute.g.image: variable 'ami' is not set");
	assert_no_message(&f->d, "needs an image");
	assert_int_equal(f->d.n, 1);
}

static void test_spec_whose_root_is_not_a_mapping_adds_nothing(void **state)
{
	struct fx *f = *state;

	invalid(f, "[a, b]\n");
	assert_int_equal(f->d.n, 1);
	assert_error(&f->d, 1, 1, "a spec must be a mapping of keys, got a list");
}

static void test_example_quickstart_is_valid(void **state)
{
	valid_clean(
	    *state,
	    "kiln: 1\n"
	    "cluster: quickstart\n"
	    "provider:\n"
	    "  name: sim\n"
	    "ttl: 8h\n"
	    "budget: {max_hourly_usd: 100}\n"
	    "tags: {team: getting-started}\n"
	    "network:\n"
	    "  cidr: 10.42.0.0/16\n"
	    "  fabric: ena\n"
	    "compute:\n"
	    "  trainers:\n"
	    "    gpu: H100:8\n"
	    "    count: 2\n"
	    "    role: trainer\n"
	    "storage:\n"
	    "  checkpoints: {tier: object, versioning: true, expire_noncurrent_after: 30d}\n"
	    "iam:\n"
	    "  roles:\n"
	    "    trainer: {write: [checkpoints]}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_undefined_role_suggests_the_closest_role),
	    kiln_test(test_undefined_role_with_nothing_close_says_where_to_define_it),
	    kiln_test(test_undefined_store_in_role_read_suggests_the_closest),
	    kiln_test(test_undefined_store_in_role_write_says_where_to_define_it),
	    kiln_test(test_store_listed_twice_in_a_role_warns),
	    kiln_test(test_import_of_an_undefined_store_suggests_the_closest),
	    kiln_test(test_import_of_a_lustre_store_is_refused),
	    kiln_test(test_import_of_an_nfs_store_says_an_nfs_store),
	    kiln_test(test_import_of_an_object_store_is_accepted),
	    kiln_test(test_expiry_without_versioning_is_refused),
	    kiln_test(test_unencrypted_disk_without_allow_is_refused),
	    kiln_test(test_unencrypted_disk_with_allow_is_accepted),
	    kiln_test(test_allow_unencrypted_on_an_encrypted_disk_warns),
	    kiln_test(test_unencrypted_store_without_allow_is_refused),
	    kiln_test(test_unencrypted_store_with_allow_is_accepted),
	    kiln_test(test_allow_unencrypted_on_an_encrypted_store_warns),
	    kiln_test(test_two_stores_on_one_mount_point_are_refused),
	    kiln_test(test_mount_on_a_later_stores_default_mount_is_refused),
	    kiln_test(test_mount_on_an_earlier_stores_default_mount_is_refused),
	    kiln_test(test_aws_group_without_image_is_refused),
	    kiln_test(test_sim_group_without_image_is_accepted),
	    kiln_test(test_aws_image_that_is_not_an_ami_id_is_refused),
	    kiln_test(test_aws_image_with_eight_hex_digits_is_accepted),
	    kiln_test(test_aws_image_with_capital_hex_digits_is_refused),
	    kiln_test(test_aws_region_that_is_not_a_region_name_is_refused),
	    kiln_test(test_aws_region_with_three_words_is_accepted),
	    kiln_test(test_zone_of_another_region_is_refused),
	    kiln_test(test_zone_that_is_the_region_itself_is_refused),
	    kiln_test(test_zone_of_a_region_with_a_longer_number_is_refused),
	    kiln_test(test_aws_local_zone_of_the_region_is_accepted),
	    kiln_test(test_aws_zones_without_a_region_must_share_one_region),
	    kiln_test(test_aws_local_zone_listed_first_without_a_region_is_accepted),
	    kiln_test(test_aws_zone_without_a_region_that_names_no_region_is_refused),
	    kiln_test(test_efa_across_zones_refuses_a_group_that_is_not_a_gang),
	    kiln_test(test_efa_across_zones_accepts_groups_that_are_all_gangs),
	    kiln_test(test_efa_in_one_zone_accepts_a_group_that_is_not_a_gang),
	    kiln_test(test_ena_across_zones_accepts_a_group_that_is_not_a_gang),
	    kiln_test(test_public_group_without_ingress_warns),
	    kiln_test(test_ingress_without_a_public_group_warns),
	    kiln_test(test_ingress_with_a_public_group_is_quiet),
	    kiln_test(test_store_under_both_read_and_write_warns),
	    kiln_test(test_role_used_by_no_group_warns),
	    kiln_test(test_broken_compute_does_not_make_roles_unused),
	    kiln_test(test_broken_group_does_not_make_its_role_unused),
	    kiln_test(test_broken_compute_does_not_make_ingress_unreachable),
	    kiln_test(test_broken_iam_does_not_make_group_roles_undefined),
	    kiln_test(test_broken_store_does_not_make_role_stores_undefined),
	    kiln_test(test_broken_store_does_not_make_imports_of_it_undefined),
	    kiln_test(test_broken_provider_does_not_demand_an_image),
	    kiln_test(test_image_with_an_unset_variable_does_not_also_need_an_image),
	    kiln_test(test_spec_whose_root_is_not_a_mapping_adds_nothing),
	    kiln_test(test_example_quickstart_is_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
