/*
 * test_slurm.c - scheduler: slurm: the spec's checks (controller, partitions,
 * defaults, sim) with their exact messages, and the generator
 * (providers/slurm.c): slurm.conf, gres.conf and the boot scripts. That the
 * files work is tests/e2e/slurm.sh's, with the real daemons.
 */
#include "testutil.h"

#include "catalog_aws.h"
#include "slurm.h"

#define AWS                                                                                        \
	"kiln: 1\n"                                                                                \
	"cluster: c\n"                                                                             \
	"provider: {name: aws, region: us-east-1, zone: us-east-1a}\n"                             \
	"vars: {i: ami-0123456789abcdef0}\n"

/* Line 5 on: a controller and two partitions, evals the default. */
#define CLUSTER                                                                                    \
	AWS "scheduler: {type: slurm, controller: login}\n"                                        \
	    "compute:\n"                                                                           \
	    "  trainers: {gpu: H100:8, count: 16, image: \"${var.i}\", role: r}\n"                 \
	    "  evals: {gpu: L4:1, count: 2, image: \"${var.i}\", partition: eval, default: "       \
	    "true, role: r}\n"                                                                     \
	    "  cpu: {instance_type: m7i.xlarge, count: 3, image: \"${var.i}\", role: r}\n"         \
	    "  login: {instance_type: m7i.xlarge, image: \"${var.i}\", role: r}\n"                 \
	    "iam: {roles: {r: {}}}\n"

static const struct slurm_fetch fetch = {
    .command = "aws ssm get-parameter --name %s --with-decryption",
    .munge_key = "/kiln/c/default/slurm/munge-key",
    .slurm_conf = "/kiln/c/default/slurm/slurm.conf",
    .gres_conf = "/kiln/c/default/slurm/gres.conf",
};

static void assert_has(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("no '%s' in:\n%s", part, text);
}

/* The spec's checks. */

static void test_controller_group_of_two_nodes_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d, fx_validate(f, AWS "scheduler: {type: slurm, controller: login}\n"
				      "compute:\n"
				      "  g: {gpu: H100:8, image: \"${var.i}\", role: r}\n"
				      "  login: {instance_type: m7i.xlarge, count: 2, "
				      "image: \"${var.i}\"}\n"));
	assert_error(&f->d, 5, 38,
		     "scheduler.controller: group 'login' has count 2; the Slurm controller is a "
		     "single node");
	assert_hint(&f->d, 5, 38,
		    "set count: 1 on compute.login, or name a one-node group (a public login "
		    "group is the usual choice)");
}

/* A spec of CLUSTER's groups whose scheduler line (5) names kms_key: KEY. */
static int validate_kms(struct fx *f, const char *key)
{
	char *text =
	    xasprintf(AWS "scheduler: {type: slurm, controller: login, kms_key: %s}\n"
			  "compute:\n"
			  "  g: {gpu: H100:8, image: \"${var.i}\", role: r}\n"
			  "  login: {instance_type: m7i.xlarge, image: \"${var.i}\", role: r}\n"
			  "iam: {roles: {r: {}}}\n",
		      key);
	int got = fx_validate(f, text);

	free(text);
	return got;
}

static void test_a_kms_key_in_each_accepted_form_validates(void **state)
{
	struct fx *f = *state;
	static const char *const keys[] = {
	    "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
	    "arn:aws:kms:us-east-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab",
	    "arn:aws:kms:us-east-1:123456789012:alias/kiln/munge", "alias/kiln-munge"};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		diags_release(&f->d);
		memset(&f->d, 0, sizeof(f->d));
		spec_free(f->spec);
		f->spec = NULL;
		validate_kms(f, keys[i]);
		assert_no_errors(&f->d);
	}
}

static void test_a_kms_key_of_no_accepted_form_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, validate_kms(f, "1234abcd-12ab-34cd-56ef-1234567890ab"));
	assert_error(
	    &f->d, 5, 54,
	    "scheduler.kms_key '1234abcd-12ab-34cd-56ef-1234567890ab' is not a KMS key ARN "
	    "or alias");
	assert_hint(
	    &f->d, 5, 54,
	    "write arn:aws:kms:REGION:ACCOUNT:key/ID, arn:aws:kms:REGION:ACCOUNT:alias/NAME "
	    "or alias/NAME");
}

static void test_an_aws_managed_kms_key_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, validate_kms(f, "alias/aws/ssm"));
	assert_error(&f->d, 5, 54,
		     "scheduler.kms_key 'alias/aws/ssm' is an AWS managed key, whose policy lets "
		     "every principal of the account decrypt through SSM");
	assert_hint(&f->d, 5, 54, "name a customer managed key, or leave kms_key out for aws/ssm");
}

static void test_a_kms_key_of_another_region_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, validate_kms(f, "arn:aws:kms:eu-west-1:123456789012:key/"
							 "1234abcd-12ab-34cd-56ef-1234567890ab"));
	assert_error(&f->d, 5, 54,
		     "scheduler.kms_key is a key in eu-west-1; the cluster's parameters are in "
		     "us-east-1");
	assert_hint(&f->d, 5, 54,
		    "SSM encrypts with a key of its own region: name a key in us-east-1");
}

static void test_unknown_controller_group_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d, fx_validate(f, AWS "scheduler: {type: slurm, controller: logni}\n"
				      "compute:\n"
				      "  g: {gpu: H100:8, image: \"${var.i}\", role: r}\n"
				      "  login: {instance_type: m7i.xlarge, image: "
				      "\"${var.i}\"}\n"));
	assert_error(&f->d, 5, 38, "scheduler.controller: compute group 'logni' is not defined");
	assert_hint(&f->d, 5, 38, "did you mean 'login'?");
}

static void test_two_default_partitions_are_refused_at_the_second(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d,
	    fx_validate(f, AWS
			"scheduler: {type: slurm, controller: login}\n"
			"compute:\n"
			"  a: {gpu: H100:8, image: \"${var.i}\", default: true, role: r}\n"
			"  b: {gpu: H100:8, image: \"${var.i}\", default: true, role: r}\n"
			"  login: {instance_type: m7i.xlarge, image: \"${var.i}\", role: r}\n"));
	assert_error(&f->d, 8, 39,
		     "compute.b.default: 'a' is already the default partition (compute.a, line 7)");
	assert_hint(&f->d, 8, 39, "keep default: true on one group");
}

static void test_partition_without_a_scheduler_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d,
	    fx_validate(f,
			AWS "compute:\n"
			    "  a: {gpu: H100:8, image: \"${var.i}\", partition: big, role: r}\n"));
	assert_error(&f->d, 6, 39, "compute.a: partition and default need a scheduler");
	assert_hint(&f->d, 6, 39,
		    "add scheduler: {type: slurm, controller: GROUP}, or remove them");
}

static void test_scheduler_on_sim_says_what_sim_simulates(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d, fx_validate(f, "kiln: 1\n"
				  "cluster: c\n"
				  "provider: {name: sim}\n"
				  "scheduler: {type: slurm, controller: login}\n"
				  "compute:\n"
				  "  g: {gpu: H100:8, role: r}\n"
				  "  login: {instance_type: m7i.xlarge, role: r}\n"));
	assert_error(&f->d, 4, 12,
		     "scheduler: sim simulates the cloud's API (instances, networks, stores, "
		     "roles), not the software on the nodes: no node boots, so no Slurm "
		     "controller or slurmd could run");
}

static void test_a_group_without_a_role_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d,
				  fx_validate(f, AWS "scheduler: {type: slurm, controller: login}\n"
						     "compute:\n"
						     "  g: {gpu: H100:8, image: \"${var.i}\"}\n"
						     "  login: {instance_type: m7i.xlarge, image: "
						     "\"${var.i}\", role: r}\n"
						     "iam: {roles: {r: {}}}\n"));
	assert_error(&f->d, 7, 3,
		     "compute.g: the nodes of a Slurm cluster read the munge key with their "
		     "group's role, and this group has none");
	assert_hint(&f->d, 7, 3, "set role: NAME (an iam.roles entry; {} grants nothing more)");
}

static void test_a_slurm_cluster_validates_clean(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_validate(f, CLUSTER), 0);
	assert_no_diags(&f->d);
}

/* The generator. */

static void cluster_of(struct fx *f, struct slurm_cluster *c)
{
	struct kiln_error err = {0};

	assert_int_equal(fx_validate(f, CLUSTER), 0);
	assert_int_equal(slurm_cluster_from_spec(c, f->spec, &catalog_aws, &err), 0);
}

static void test_every_group_but_the_controller_is_a_partition(void **state)
{
	struct slurm_cluster c;

	cluster_of(*state, &c);
	assert_int_equal(c.nparts, 3);
	assert_string_equal(c.parts[0].name, "trainers");
	assert_string_equal(c.parts[1].name, "eval");
	assert_string_equal(c.parts[1].group, "evals");
	assert_true(c.parts[1].is_default);
	assert_false(c.parts[0].is_default);
	assert_int_equal(c.parts[0].gpus, 8);
	assert_string_equal(c.parts[0].gpu, "h100");
	assert_int_equal(c.parts[2].gpus, 0);
	assert_null(c.parts[2].gpu);
	assert_null(slurm_partition_of(&c, "login"));
	slurm_cluster_free(&c);
}

static void test_slurm_conf_is_configless_with_dynamic_node_partitions(void **state)
{
	struct slurm_cluster c;
	char *conf;

	cluster_of(*state, &c);
	conf = slurm_conf(&c);
	assert_has(conf, "\nClusterName=c\n");
	assert_has(conf, "\nSlurmctldParameters=enable_configless\n");
	assert_has(conf, "\nTreeWidth=65533\n");
	assert_has(conf, "\nMaxNodeCount=1024\n");
	assert_has(conf, "\nNodeSet=trainers-nodes Feature=trainers\n"
			 "PartitionName=trainers Nodes=trainers-nodes Default=NO MaxTime=INFINITE "
			 "State=UP OverSubscribe=EXCLUSIVE\n");
	assert_has(conf, "\nNodeSet=evals-nodes Feature=evals\n"
			 "PartitionName=eval Nodes=evals-nodes Default=YES MaxTime=INFINITE "
			 "State=UP OverSubscribe=EXCLUSIVE\n");
	assert_has(conf, "\nPartitionName=cpu Nodes=cpu-nodes Default=NO MaxTime=INFINITE "
			 "State=UP\n");
	/* The controller adds its own name and address at boot. */
	assert_null(strstr(conf, "\nSlurmctldHost="));
	free(conf);
	slurm_cluster_free(&c);
}

static void test_max_node_count_leaves_room_for_twice_the_spec(void **state)
{
	struct slurm_cluster c;
	char *conf;

	cluster_of(*state, &c);
	c.parts[0].count = 1000;
	conf = slurm_conf(&c);
	assert_has(conf, "\nMaxNodeCount=2010\n");
	free(conf);
	slurm_cluster_free(&c);
}

static void test_gres_conf_names_each_gpu_groups_devices(void **state)
{
	struct slurm_cluster c;
	char *gres;

	cluster_of(*state, &c);
	gres = slurm_gres_conf(&c);
	assert_has(gres,
		   "\nAutoDetect=off\n"
		   "NodeName=trainers-[0-255]-[0-255] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n"
		   "NodeName=evals-[0-255]-[0-255] Name=gpu Type=l4 File=/dev/nvidia0\n");
	assert_null(strstr(gres, "cpu-"));
	free(gres);
	slurm_cluster_free(&c);
}

static void test_slurmd_joins_with_its_gres_and_group_feature(void **state)
{
	struct slurm_cluster c;
	char *a, *b;

	cluster_of(*state, &c);
	a = slurm_slurmd_args(&c.parts[0], "10.0.0.5");
	b = slurm_slurmd_args(&c.parts[2], "\"$ctl\"");
	assert_string_equal(
	    a, "-Z --conf-server 10.0.0.5 --conf \"Gres=gpu:h100:8 Feature=trainers\"");
	assert_string_equal(b, "-Z --conf-server \"$ctl\" --conf \"Feature=cpu\"");
	free(a);
	free(b);
	slurm_cluster_free(&c);
}

static void test_node_script_fetches_the_key_and_starts_slurmd(void **state)
{
	struct slurm_cluster c;
	char *s;

	cluster_of(*state, &c);
	s = slurm_node_script(&c.parts[0], &fetch, "echo 10.0.0.5");
	assert_true(strncmp(s, "#!/bin/sh\n", 10) == 0);
	assert_has(s, "until aws ssm get-parameter --name \"$1\" --with-decryption >\"$2\"; do\n");
	assert_has(s, "\tkiln_fetch /kiln/c/default/slurm/munge-key /etc/munge/.munge.key.b64\n");
	assert_has(s, "kiln_controller() {\n\techo 10.0.0.5\n}\n");
	assert_has(
	    s, "\nuntil ctl=$(kiln_controller) && [ -n \"$ctl\" ] && [ \"$ctl\" != None ]; do\n");
	assert_has(s, "\nname=\"trainers-$(echo \"$addr\" | cut -d. -f3)-$(echo \"$addr\" | cut "
		      "-d. -f4)\"\n");
	/* slurmd runs from the package's unit with kiln's drop-in, now and after a reboot. */
	assert_has(s,
		   "\nkiln_dropin slurmd \"/usr/sbin/slurmd -D -s -N $name -Z --conf-server $ctl "
		   "--conf \\\"Gres=gpu:h100:8 Feature=trainers\\\"\"\n"
		   "kiln_unit slurmd /etc/systemd/system/slurmd.service.d/kiln.conf\n");
	assert_has(s, "\t\tsystemctl enable \"$1.service\"\n");
	assert_has(s, "\t\tsystemctl enable munge.service\n");
	assert_null(strstr(s, "\nslurmd "));
	free(s);
	slurm_cluster_free(&c);
}

static void test_controller_script_adds_its_host_and_syncs_changes(void **state)
{
	struct slurm_cluster c;
	char *s;

	cluster_of(*state, &c);
	s = slurm_controller_script(&c, &fetch);
	assert_has(s, "\t\techo \"SlurmctldHost=$(hostname -s)($addr)\"\n");
	assert_has(s, "\tkiln_fetch /kiln/c/default/slurm/slurm.conf /etc/slurm/.slurm.conf.new\n");
	assert_has(s, "\tkiln_fetch /kiln/c/default/slurm/gres.conf /etc/slurm/.gres.conf.new\n");
	assert_has(s, "scontrol reconfigure");
	assert_has(s, "\nkiln_dropin slurmctld \"/usr/sbin/slurmctld -D -s\"\n"
		      "kiln_unit slurmctld /etc/systemd/system/slurmctld.service.d/kiln.conf\n");
	/* The reconfigure loop is a unit too, running this very script with "sync". */
	assert_has(s, "\nif [ \"${1:-}\" = sync ]; then\n\tkiln_sync\n");
	assert_has(s, "ExecStart=/bin/sh -c \"exec /bin/sh %s sync >>/var/log/slurm/kiln-sync.log "
		      "2>&1\"");
	assert_has(s, "\nkiln_unit kiln-slurm-sync \"$u\"\n");
	assert_null(strstr(s, "\nslurmctld\n"));
	free(s);
	slurm_cluster_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_controller_group_of_two_nodes_is_refused),
	    kiln_test(test_unknown_controller_group_suggests_the_closest),
	    kiln_test(test_a_kms_key_in_each_accepted_form_validates),
	    kiln_test(test_a_kms_key_of_no_accepted_form_is_refused),
	    kiln_test(test_an_aws_managed_kms_key_is_refused),
	    kiln_test(test_a_kms_key_of_another_region_is_refused),
	    kiln_test(test_two_default_partitions_are_refused_at_the_second),
	    kiln_test(test_partition_without_a_scheduler_is_refused),
	    kiln_test(test_scheduler_on_sim_says_what_sim_simulates),
	    kiln_test(test_a_group_without_a_role_is_refused),
	    kiln_test(test_a_slurm_cluster_validates_clean),
	    kiln_test(test_every_group_but_the_controller_is_a_partition),
	    kiln_test(test_slurm_conf_is_configless_with_dynamic_node_partitions),
	    kiln_test(test_max_node_count_leaves_room_for_twice_the_spec),
	    kiln_test(test_gres_conf_names_each_gpu_groups_devices),
	    kiln_test(test_slurmd_joins_with_its_gres_and_group_feature),
	    kiln_test(test_node_script_fetches_the_key_and_starts_slurmd),
	    kiln_test(test_controller_script_adds_its_host_and_syncs_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
