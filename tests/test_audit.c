/*
 * test_audit.c - kiln audit's rules, one test where each fires and one where
 * it does not; waivers (valid, narrowed, no reason, expired, unknown rule,
 * matching nothing); the clock; and the renderings, SARIF's shape included.
 *
 * Plans are built by hand: resource_changes with the attributes a rule
 * reads, and kiln.cost / kiln.iam_delta as the lead's cost.c and iam.c
 * write them, so every rule is tested whether or not a provider can ever
 * produce the insecure value.
 */
#include "testutil.h"

#include "audit.h"
#include "provider.h"

#define NOW "2026-11-30T12:00:00Z"

struct at {
	struct diags d;
	struct spec *spec;
	json_t *plan;
	const struct provider *prov;
};

static int at_setup(void **state)
{
	struct at *t = xcalloc(1, sizeof(*t));

	t->prov = provider_find("sim");
	setenv("KILN_NOW", NOW, 1);
	*state = t;
	return 0;
}

static int at_teardown(void **state)
{
	struct at *t = *state;

	diags_release(&t->d);
	spec_free(t->spec);
	json_decref(t->plan);
	free(t);
	unsetenv("KILN_NOW");
	return 0;
}

#define audit_test(fn) cmocka_unit_test_setup_teardown(fn, at_setup, at_teardown)

#define HEAD                                                                                       \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: sim}\n"

/*
 * Load a valid spec and a plan: changes is a JSON object {address: after}
 * (after null for a delete), kiln the plan's "kiln" object without findings.
 */
static void at_load(struct at *t, const char *yaml, const char *changes, const char *kiln)
{
	json_error_t jerr;
	json_t *ch, *rcs, *after;
	const char *addr;

	if (load_validate(&t->spec, yaml, &t->d) < 0 || t->d.errors) {
		diags_dump(&t->d);
		fail_msg("the spec does not load");
	}
	ch = json_loads(changes ? changes : "{}", 0, &jerr);
	if (!ch)
		fail_msg("changes: %s", jerr.text);
	rcs = json_array();
	json_object_foreach(ch, addr, after)
	{
		const char *dot = strchr(addr, '.');
		char *type = xstrndup(addr, (size_t)(dot - addr));

		json_array_append_new(rcs, json_pack("{s:s, s:s, s:s, s:{s:[s], s:O}}", "address",
						     addr, "type", type, "name", dot + 1, "change",
						     "actions", "create", "after", after));
		free(type);
	}
	json_decref(ch);
	t->plan = json_pack("{s:o, s:o}", "resource_changes", rcs, "kiln",
			    json_loads(kiln ? kiln : "{}", 0, &jerr));
	assert_non_null(t->plan);
}

/* audit_plan over t's plan and its view. */
static int at_audit_plan(struct at *t, struct kiln_error *err)
{
	struct plan_view v;
	int rc;

	assert_int_equal(plan_view_build(&v, t->plan, err), 0);
	rc = audit_plan(t->spec, t->prov, t->plan, &v, err);
	plan_view_release(&v);
	return rc;
}

static void at_audit(struct at *t)
{
	struct kiln_error err = {0};

	assert_int_equal(at_audit_plan(t, &err), 0);
}

static const json_t *findings(const struct at *t)
{
	return json_object_get(json_object_get(t->plan, "kiln"), "findings");
}

static size_t count(const struct at *t, const char *rule)
{
	const json_t *f;
	size_t i, n = 0;

	json_array_foreach(findings(t), i, f) n +=
	    strcmp(json_string_value(json_object_get(f, "rule")), rule) == 0;
	return n;
}

/* The finding of rule with this message, or a failure listing what there was. */
static const json_t *find(const struct at *t, const char *rule, const char *message)
{
	const json_t *f;
	size_t i;

	json_array_foreach(
	    findings(t), i,
	    f) if (strcmp(json_string_value(json_object_get(f, "rule")), rule) == 0 &&
		   (!message || strcmp(json_string_value(json_object_get(f, "message")), message) ==
				    0)) return f;
	json_array_foreach(findings(t), i, f)
	    print_error("  %s: %s\n", json_string_value(json_object_get(f, "rule")),
			json_string_value(json_object_get(f, "message")));
	fail_msg("no %s finding: %s", rule, message ? message : "(any)");
	return NULL;
}

static const char *sget(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* ---- storage ---- */

static void test_s3_001_fires_on_an_unencrypted_object_store(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t,
		HEAD "storage:\n"
		     "  data: {tier: object, encrypted: false, allow_unencrypted: true}\n",
		"{\"sim_bucket.data\": {\"encrypted\": false}}", NULL);
	at_audit(t);
	f = find(t, "KILN-S3-001", "storage.data is not encrypted at rest");
	assert_string_equal(sget(f, "severity"), "error");
	assert_string_equal(sget(f, "address"), "sim_bucket.data");
	assert_string_equal(sget(f, "spec"), "storage.data.encrypted");
	assert_string_equal(sget(f, "file"), "t.yaml");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 5);
	assert_int_equal(json_integer_value(json_object_get(f, "column")), 35);
	assert_string_equal(sget(f, "checkov"), "CKV_AWS_19");
	assert_string_equal(sget(f, "trivy"), "AVD-AWS-0088");
	assert_non_null(strstr(sget(f, "fix"), "encrypted: false"));
}

static void test_s3_001_is_silent_for_a_default_object_store(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  data: {tier: object}\n",
		"{\"sim_bucket.data\": {\"encrypted\": true}}", NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-S3-001"), 0);
	assert_int_equal(json_array_size(findings(t)), 0);
}

static void test_s3_001_reads_the_plans_attribute_over_the_spec(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  data: {tier: object}\n",
		"{\"sim_bucket.data\": {\"encrypted\": false}}", NULL);
	at_audit(t);
	find(t, "KILN-S3-001", "storage.data is not encrypted at rest");
}

static void test_s3_002_fires_when_the_plan_drops_the_public_access_block(void **state)
{
	struct at *t = *state;
	const json_t *f;

	t->prov = provider_find("aws");
	at_load(t,
		"kiln: 1\ncluster: t\nprovider: {name: aws, region: us-east-1, zone: us-east-1a}\n"
		"storage:\n  data: {tier: object}\n",
		"{\"aws_s3_bucket.data\": {\"encrypted\": true, \"block_public_access\": false}}",
		NULL);
	at_audit(t);
	f = find(t, "KILN-S3-002",
		 "storage.data: the plan leaves the bucket without its public access block");
	assert_string_equal(sget(f, "address"), "aws_s3_bucket.data");
	assert_string_equal(sget(f, "checkov"), "CKV2_AWS_6");
	assert_string_equal(sget(f, "trivy"), "AVD-AWS-0094");
}

static void test_s3_002_is_silent_with_the_block_on(void **state)
{
	struct at *t = *state;

	t->prov = provider_find("aws");
	at_load(t,
		"kiln: 1\ncluster: t\nprovider: {name: aws, region: us-east-1, zone: us-east-1a}\n"
		"storage:\n  data: {tier: object}\n",
		"{\"aws_s3_bucket.data\": {\"block_public_access\": true}}", NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-S3-002"), 0);
}

static void test_s3_003_fires_on_a_written_store_without_versioning(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t,
		HEAD "storage:\n  ckpt: {tier: object}\n"
		     "iam:\n  roles:\n    trainer: {write: [ckpt]}\n    eval: {write: [ckpt]}\n",
		"{\"sim_bucket.ckpt\": {\"versioning\": false}}", NULL);
	at_audit(t);
	f = find(t, "KILN-S3-003",
		 "storage.ckpt is written by role trainer, eval but keeps no versions: an "
		 "overwritten or deleted object is gone for good");
	assert_string_equal(sget(f, "severity"), "warning");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 5);
}

static void test_s3_003_is_silent_with_versioning_or_for_a_read_only_store(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD "storage:\n  ckpt: {tier: object, versioning: true}\n"
		     "  data: {tier: object}\n"
		     "iam:\n  roles:\n    trainer: {read: [data], write: [ckpt]}\n",
		NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-S3-003"), 0);
}

static void test_fsx_001_fires_on_an_unencrypted_lustre(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  scratch: {tier: lustre, capacity_gb: 1200}\n",
		"{\"sim_lustre.scratch\": {\"encrypted\": false}}", NULL);
	at_audit(t);
	assert_string_equal(
	    sget(find(t, "KILN-FSX-001", "storage.scratch is not encrypted at rest"), "address"),
	    "sim_lustre.scratch");
}

static void test_fsx_001_is_silent_for_an_encrypted_lustre(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  scratch: {tier: lustre, capacity_gb: 1200}\n",
		"{\"sim_lustre.scratch\": {\"encrypted\": true}}", NULL);
	at_audit(t);
	assert_int_equal(json_array_size(findings(t)), 0);
}

static void test_efs_001_fires_on_an_unencrypted_nfs_store(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD "storage:\n  home: {tier: nfs, encrypted: false, allow_unencrypted: true}\n",
		NULL, NULL);
	at_audit(t);
	find(t, "KILN-EFS-001", "storage.home is not encrypted at rest");
}

static void test_efs_001_is_silent_for_a_default_nfs_store(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  home: {tier: nfs}\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-EFS-001"), 0);
}

static void test_enc_001_fires_on_allow_unencrypted_even_with_encryption_on(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  home: {tier: nfs, allow_unencrypted: true}\n", NULL, NULL);
	at_audit(t);
	find(t, "KILN-ENC-001",
	     "storage.home sets allow_unencrypted: true (encryption is still on)");
	assert_int_equal(count(t, "KILN-EFS-001"), 0);
}

static void test_enc_001_is_silent_without_allow_unencrypted(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  home: {tier: nfs}\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-ENC-001"), 0);
}

static void test_store_001_fires_on_deletion_delete(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  data: {tier: object, deletion: delete}\n", NULL, NULL);
	at_audit(t);
	find(t, "KILN-STORE-001",
	     "storage.data has deletion: delete: destroying the cluster deletes the object "
	     "store and its data");
}

static void test_store_001_is_silent_on_retain(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "storage:\n  data: {tier: object, deletion: retain}\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-STORE-001"), 0);
}

static void test_local_001_says_the_data_goes_with_the_node(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD "compute:\n  t: {instance_type: p5.48xlarge}\n"
		     "storage:\n  nvme: {tier: local, mount: /scratch}\n",
		NULL, NULL);
	at_audit(t);
	find(t, "KILN-LOCAL-001",
	     "storage.nvme is the instance store of compute.t: its data is lost when a node "
	     "stops, fails or is replaced");
}

/* The step's text as the spec says it, and whether KILN-BOOT-001 fires on it. */
static void boot_step(struct at *t, const char *step, const char *kind)
{
	char *yaml = xasprintf(HEAD "compute:\n  t:\n    instance_type: m7i.xlarge\n"
				    "    bootstrap:\n      - %s\n",
			       step);

	at_load(t, yaml, NULL, NULL);
	free(yaml);
	at_audit(t);
	if (!kind) {
		assert_int_equal(count(t, "KILN-BOOT-001"), 0);
	} else {
		char *msg =
		    xasprintf("compute.t.bootstrap[0] looks like it holds %s: user data can "
			      "be read back by anyone allowed to describe the node, and is "
			      "kept in the plan",
			      kind);
		const json_t *f = find(t, "KILN-BOOT-001", msg);

		free(msg);
		assert_int_equal(json_integer_value(json_object_get(f, "line")), 8);
	}
}

static void test_boot_001_fires_on_an_access_key_id_and_never_repeats_it(void **state)
{
	struct at *t = *state;
	char *all;

	boot_step(t, "\"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\"", "an access key id");
	all = json_dumps(findings(t), 0);
	assert_null(strstr(all, "AKIAIOSFODNN7EXAMPLE"));
	free(all);
}

static void test_boot_001_fires_on_a_password_and_a_private_key(void **state)
{
	struct at *t = *state;

	boot_step(t, "\"mysql -u root --password=hunter2 -e 'select 1'\"", "a password or token");
	json_decref(t->plan);
	t->plan = NULL;
	spec_free(t->spec);
	t->spec = NULL;
	boot_step(t,
		  "{file: /root/.ssh/id_ed25519, content: \"-----BEGIN OPENSSH PRIVATE "
		  "KEY-----\\nb3Blbg==\\n\", "
		  "mode: \"0600\"}",
		  "a private key");
}

static void test_boot_001_fires_on_a_high_entropy_secret_assignment(void **state)
{
	boot_step(*state,
		  "\"WANDB_API_KEY=8f3a9c2e7b1d4f6a0e5c9b8d7a6f5e4d3c2b1a09 python train.py\"",
		  "a key, secret or token");
}

static void test_boot_001_is_silent_on_secrets_read_at_boot(void **state)
{
	boot_step(*state,
		  "\"WANDB_API_KEY=$(aws ssm get-parameter --name /team/wandb --with-decryption "
		  "--query Parameter.Value --output text) python train.py\"",
		  NULL);
}

static void test_boot_001_is_silent_on_low_entropy_and_plain_commands(void **state)
{
	boot_step(*state, "\"CACHE_KEY=aaaaaaaaaaaaaaaaaaaa pip install -r requirements.txt\"",
		  NULL);
}

/* ---- compute ---- */

#define GPU_GROUP                                                                                  \
	"compute:\n"                                                                               \
	"  trainers: {gpu: H100:8, count: 1}\n"

static void test_ebs_001_fires_on_an_unencrypted_root_disk(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t,
		HEAD "ttl: 8h\ncompute:\n  cpu:\n    instance_type: m7i.xlarge\n"
		     "    disk: {encrypted: false, allow_unencrypted: true}\n",
		NULL, NULL);
	at_audit(t);
	f = find(t, "KILN-EBS-001",
		 "compute.cpu asks for unencrypted root disks (disk.encrypted: false)");
	assert_string_equal(sget(f, "spec"), "compute.cpu.disk.encrypted");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 8);
	assert_true(json_is_null(json_object_get(f, "address")));
	find(t, "KILN-ENC-001", "compute.cpu.disk sets allow_unencrypted: true");
}

static void test_ebs_001_reads_the_plans_attribute_when_there_is_one(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "ttl: 8h\ncompute:\n  cpu: {instance_type: m7i.xlarge}\n",
		"{\"sim_node_group.cpu\": {\"disk_encrypted\": false}}", NULL);
	at_audit(t);
	assert_string_equal(
	    sget(find(t, "KILN-EBS-001",
		      "compute.cpu: the plan leaves the nodes' root disks unencrypted"),
		 "address"),
	    "sim_node_group.cpu");
}

static void test_ebs_001_is_silent_for_a_default_disk(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "compute:\n  cpu: {instance_type: m7i.xlarge}\n",
		"{\"sim_node_group.cpu\": {\"instance_type\": \"m7i.xlarge\", \"count\": 1}}",
		NULL);
	at_audit(t);
	assert_int_equal(json_array_size(findings(t)), 0);
}

static void test_ec2_001_fires_when_a_group_takes_imdsv1(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "compute:\n  cpu: {instance_type: m7i.xlarge}\n",
		"{\"sim_node_group.cpu\": {\"http_tokens\": \"optional\"}}", NULL);
	at_audit(t);
	assert_string_equal(
	    sget(find(t, "KILN-EC2-001",
		      "compute.cpu: the nodes' metadata service takes IMDSv1 (http_tokens "
		      "\"optional\")"),
		 "checkov"),
	    "CKV_AWS_79");
}

static void test_ec2_001_is_silent_when_imdsv2_is_required_or_enforced(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD "compute:\n  cpu: {instance_type: m7i.xlarge}\n"
		     "  web: {instance_type: m7i.xlarge}\n",
		"{\"sim_node_group.cpu\": {\"http_tokens\": \"required\"}, "
		"\"sim_node_group.web\": {}}",
		NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-EC2-001"), 0);
}

static void test_gpu_001_fires_without_ttl_or_budget(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD GPU_GROUP, "{\"sim_node_group.trainers\": {\"count\": 1}}", NULL);
	at_audit(t);
	assert_string_equal(sget(find(t, "KILN-GPU-001",
				      "compute.trainers has GPU nodes, and the spec sets neither "
				      "ttl nor budget.max_hourly_usd"),
				 "address"),
			    "sim_node_group.trainers");
}

static void test_gpu_001_is_silent_with_a_ttl_a_budget_or_no_gpu(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "ttl: 8h\n" GPU_GROUP, NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-GPU-001"), 0);
	spec_free(t->spec);
	json_decref(t->plan);
	at_load(t, HEAD "budget: {max_hourly_usd: 500}\n" GPU_GROUP, NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-GPU-001"), 0);
	spec_free(t->spec);
	json_decref(t->plan);
	at_load(t, HEAD "compute:\n  cpu: {instance_type: m7i.xlarge}\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-GPU-001"), 0);
}

static void test_gpu_001_knows_a_gpu_instance_type(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "compute:\n  t: {instance_type: p5.48xlarge}\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-GPU-001"), 1);
}

static void test_gpu_002_fires_on_several_gpu_nodes_without_efa(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD
		"ttl: 8h\nnetwork: {fabric: ena}\ncompute:\n  trainers: {gpu: H100:8, count: 4}\n",
		"{\"sim_node_group.trainers\": {\"count\": 4, \"efa\": false}}", NULL);
	at_audit(t);
	find(t, "KILN-GPU-002",
	     "compute.trainers: 4 GPU nodes without EFA: collectives run over TCP and "
	     "multi-node scaling suffers");
}

static void test_gpu_002_is_silent_with_efa_or_one_node(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD
		"ttl: 8h\nnetwork: {fabric: efa}\ncompute:\n  trainers: {gpu: H100:8, count: 4}\n"
		"  single: {gpu: H100:8, count: 1}\n",
		"{\"sim_node_group.trainers\": {\"count\": 4, \"efa\": true}, "
		"\"sim_node_group.single\": {\"count\": 1, \"efa\": false}}",
		NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-GPU-002"), 0);
}

/* ---- network ---- */

static void test_net_002_fires_on_ssh_open_to_the_world(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t,
		HEAD "network:\n  ingress:\n    - {port: 22, from: 0.0.0.0/0}\n"
		     "    - {port: 20-30, from: 0.0.0.0/0}\n",
		"{\"sim_network.main\": {\"ingress\": []}}", NULL);
	at_audit(t);
	f = find(t, "KILN-NET-002",
		 "network.ingress[0] admits SSH (port 22) from 0.0.0.0/0, the whole internet");
	assert_string_equal(sget(f, "address"), "sim_network.main");
	assert_string_equal(sget(f, "spec"), "network.ingress[0]");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 6);
	assert_int_equal(json_integer_value(json_object_get(f, "column")), 24);
	assert_string_equal(sget(f, "checkov"), "CKV_AWS_24");
	assert_string_equal(sget(f, "trivy"), "AVD-AWS-0107");
	find(t, "KILN-NET-002",
	     "network.ingress[1] admits SSH (ports 20-30) from 0.0.0.0/0, the whole internet");
	assert_int_equal(count(t, "KILN-NET-001"), 0);
}

static void test_net_002_is_silent_for_ssh_from_a_known_range_or_udp(void **state)
{
	struct at *t = *state;

	at_load(t,
		HEAD "network:\n  ingress:\n    - {port: 22, from: 203.0.113.0/24}\n"
		     "    - {port: 22, from: 0.0.0.0/0, protocol: udp}\n",
		NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-NET-002"), 0);
	find(t, "KILN-NET-001",
	     "network.ingress[1] admits port 22 udp from 0.0.0.0/0, the whole internet");
}

/* ---- access ---- */

/* ssh-keygen -t rsa -b 1024 and -t ed25519 (both -C t). */
#define RSA1024                                                                                    \
	"ssh-rsa "                                                                                 \
	"AAAAB3NzaC1yc2EAAAADAQABAAAAgQC51i2oP5jO7ShYA3B3uIb8//cax2SjdFNk8oJg7tHWblsE0ZLn"         \
	"8yaYPuNRsyC5vHkrROyPhxDRNeiqSbnYsqVXwWwxoW7wUr1VfZXVbFaejbETKtCL6668CtcVqF0OkdY7"         \
	"g9JxhXtSaKPHlZIjL0S6u5Ek/iYcARSs8r/okrRO+Q=="                                             \
	" t"
#define ED25519 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMp+IDOhbPVQFnyUw8nUxuixIUxIEHWNIdDSUTQOpd31 t"

static void test_ssh_001_fires_on_a_short_rsa_key_only(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t, HEAD "access:\n  ssh_keys:\n    - " ED25519 "\n    - " RSA1024 "\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-SSH-001"), 1);
	f = find(t, "KILN-SSH-001",
		 "access.ssh_keys[1] (SHA256:S7lsuHPSknZgOcNlxlaM1shQhkAn51aoKikVkxB876Q) is a "
		 "1024-bit RSA key: under 3072 bits");
	assert_string_equal(sget(f, "severity"), "warning");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 7);
	assert_int_equal(json_integer_value(json_object_get(f, "column")), 7);
}

static void test_net_001_fires_on_another_port_open_to_the_world(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "network:\n  ingress:\n    - {port: 443, from: 0.0.0.0/0}\n", NULL, NULL);
	at_audit(t);
	assert_string_equal(
	    sget(find(t, "KILN-NET-001",
		      "network.ingress[0] admits port 443 tcp from 0.0.0.0/0, the whole internet"),
		 "severity"),
	    "warning");
}

static void test_net_001_is_silent_for_a_narrow_range(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "network:\n  ingress:\n    - {port: 443, from: 10.0.0.0/8}\n", NULL, NULL);
	at_audit(t);
	assert_int_equal(json_array_size(findings(t)), 0);
}

static void test_net_003_fires_on_an_undeclared_world_rule_in_the_plan(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "network:\n  ingress:\n    - {port: 443, from: 0.0.0.0/0}\n",
		"{\"sim_network.main\": {\"ingress\": ["
		"{\"port_from\": 443, \"port_to\": 443, \"protocol\": \"tcp\", \"from\": "
		"\"0.0.0.0/0\"},"
		"{\"port_from\": 3389, \"port_to\": 3389, \"protocol\": \"tcp\", \"from\": "
		"\"::/0\"}]}}",
		NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-NET-003"), 1);
	find(t, "KILN-NET-003",
	     "sim_network.main admits port 3389 from ::/0, which network.ingress does not "
	     "declare");
}

static void test_net_003_is_silent_when_every_world_rule_is_declared(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "network:\n  ingress:\n    - {port: 443, from: 0.0.0.0/0}\n",
		"{\"sim_network.main\": {\"ingress\": ["
		"{\"port_from\": 443, \"port_to\": 443, \"protocol\": \"tcp\", \"from\": "
		"\"0.0.0.0/0\"}]}}",
		NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-NET-003"), 0);
}

/* ---- cost ---- */

static void test_cost_001_fires_above_the_budget(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t, HEAD "budget: {max_hourly_usd: 250}\n", NULL,
		"{\"cost\": {\"currency\": \"USD\", \"hourly_after\": 393.28}}");
	at_audit(t);
	f = find(t, "KILN-COST-001",
		 "the plan costs $393.28/h, above budget.max_hourly_usd $250.00/h");
	assert_true(json_is_null(json_object_get(f, "address")));
	assert_string_equal(sget(f, "spec"), "budget.max_hourly_usd");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 4);
	assert_int_equal(audit_errors(t->plan), 1);
}

static void test_cost_001_is_silent_within_budget_or_without_cost(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "budget: {max_hourly_usd: 250}\n", NULL,
		"{\"cost\": {\"hourly_after\": 250.0}}");
	at_audit(t);
	assert_int_equal(count(t, "KILN-COST-001"), 0);
	json_object_del(json_object_get(t->plan, "kiln"), "cost");
	at_audit(t);
	assert_int_equal(count(t, "KILN-COST-001"), 0);
}

static void test_cost_002_fires_when_the_upfront_purchase_is_above_the_budget(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(
	    t, HEAD "budget: {max_upfront_usd: 1000}\n", NULL,
	    "{\"cost\": {\"currency\": \"USD\", \"hourly_after\": 0.04, \"upfront\": 1510.27}}");
	at_audit(t);
	f = find(t, "KILN-COST-002",
		 "the plan buys $1,510.27 up front, above budget.max_upfront_usd $1,000.00");
	assert_string_equal(sget(f, "spec"), "budget.max_upfront_usd");
	assert_int_equal(audit_errors(t->plan), 1);
}

static void test_cost_002_is_silent_within_the_upfront_budget(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "budget: {max_upfront_usd: 2000}\n", NULL,
		"{\"cost\": {\"currency\": \"USD\", \"upfront\": 1510.27}}");
	at_audit(t);
	assert_int_equal(count(t, "KILN-COST-002"), 0);
}

/* ---- IAM ---- */

#define ROLE_SPEC HEAD "storage:\n  b: {tier: object}\niam:\n  roles:\n    trainer: {read: [b]}\n"

static void at_iam(struct at *t, const char *pairs)
{
	char *kiln = xasprintf("{\"iam_delta\": [{\"address\": \"sim_role_policy.trainer\", "
			       "\"role\": \"trainer\", \"granted\": [], \"revoked\": [], "
			       "\"after\": %s}]}",
			       pairs);

	at_load(t, ROLE_SPEC, NULL, kiln);
	free(kiln);
	at_audit(t);
}

static void test_iam_001_fires_on_a_wildcard_action(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_iam(t, "[{\"action\": \"s3:*\", \"resource\": \"arn:aws:s3:::b/*\"}]");
	f = find(t, "KILN-IAM-001",
		 "role trainer is granted wildcard actions: \"s3:*\" on arn:aws:s3:::b/*");
	assert_string_equal(sget(f, "address"), "sim_role_policy.trainer");
	assert_string_equal(sget(f, "spec"), "iam.roles.trainer");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 8);
	assert_int_equal(count(t, "KILN-IAM-002"), 0);
}

static void test_iam_findings_name_three_pairs_and_say_there_are_more(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"s3:Get*\", \"resource\": \"arn:aws:s3:::b/*\"}, "
		  "{\"action\": \"s3:Put*\", \"resource\": \"arn:aws:s3:::b/*\"}, "
		  "{\"action\": \"s3:List*\", \"resource\": \"arn:aws:s3:::b\"}, "
		  "{\"action\": \"s3:Delete*\", \"resource\": \"arn:aws:s3:::b/*\"}]");
	find(t, "KILN-IAM-001",
	     "role trainer is granted wildcard actions: \"s3:Get*\" on arn:aws:s3:::b/*, "
	     "\"s3:Put*\" on arn:aws:s3:::b/*, \"s3:List*\" on arn:aws:s3:::b and more");
	assert_int_equal(count(t, "KILN-IAM-001"), 1);
}

static void test_iam_001_is_silent_on_named_actions(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"s3:GetObject\", \"resource\": \"arn:aws:s3:::b/*\"}, "
		  "{\"action\": \"s3:ListBucket\", \"resource\": \"arn:aws:s3:::b\"}]");
	assert_int_equal(json_array_size(findings(t)), 0);
}

static void test_iam_002_fires_on_a_star_resource(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"s3:GetObject\", \"resource\": \"*\"}, "
		  "{\"action\": \"s3:PutObject\", \"resource\": \"arn:aws:s3:::*\"}]");
	find(t, "KILN-IAM-002",
	     "role trainer is granted actions on every resource: \"s3:GetObject\" on *, "
	     "\"s3:PutObject\" on arn:aws:s3:::*");
	assert_int_equal(count(t, "KILN-IAM-001"), 0);
}

static void test_iam_002_is_silent_on_a_named_resource(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"s3:GetObject\", \"resource\": \"arn:aws:s3:::b/*\"}]");
	assert_int_equal(count(t, "KILN-IAM-002"), 0);
}

static void test_iam_002_is_silent_on_actions_iam_cannot_scope(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"ecr:GetAuthorizationToken\", \"resource\": \"*\"}, "
		  "{\"action\": \"ec2:DescribeInstances\", \"resource\": \"*\"}]");
	assert_int_equal(count(t, "KILN-IAM-002"), 0);
}

static void test_iam_002_flags_a_pattern_over_unscopable_actions(void **state)
{
	struct at *t = *state;

	/* A pattern may cover scopable actions too. */
	at_iam(t, "[{\"action\": \"ecr:Get*\", \"resource\": \"*\"}]");
	assert_int_equal(count(t, "KILN-IAM-002"), 1);
}

static void test_iam_003_fires_on_passrole_on_star(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_iam(t, "[{\"action\": \"iam:PassRole\", \"resource\": \"*\"}]");
	f = find(t, "KILN-IAM-003", "role trainer may pass any role: \"iam:PassRole\" on *");
	assert_string_equal(sget(f, "checkov"), "CKV_AWS_286");
	/* Reported once, as the escalation it is, not again as a star resource. */
	assert_int_equal(count(t, "KILN-IAM-002"), 0);
}

static void test_iam_003_is_silent_on_passrole_to_a_named_role(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"iam:PassRole\", \"resource\": "
		  "\"arn:aws:iam::123456789012:role/t-default-trainer\"}]");
	assert_int_equal(json_array_size(findings(t)), 0);
}

static void test_iam_004_fires_on_star_star_and_on_iam_star(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"*\", \"resource\": \"*\"}, "
		  "{\"action\": \"iam:*\", \"resource\": \"arn:aws:iam::1:role/x\"}]");
	find(t, "KILN-IAM-004",
	     "role trainer is admin-equivalent: \"*\" on *, \"iam:*\" on arn:aws:iam::1:role/x");
	assert_int_equal(json_array_size(findings(t)), 1);
}

static void test_iam_004_is_silent_on_a_scoped_role(void **state)
{
	struct at *t = *state;

	at_iam(t, "[{\"action\": \"s3:GetObject\", \"resource\": \"arn:aws:s3:::b/*\"}]");
	assert_int_equal(count(t, "KILN-IAM-004"), 0);
}

static void test_iam_rules_skip_a_plan_without_iam_delta(void **state)
{
	struct at *t = *state;

	at_load(t, ROLE_SPEC, NULL, NULL);
	at_audit(t);
	assert_int_equal(json_array_size(findings(t)), 0);
}

/* ---- waivers ---- */

#define SSH_OPEN HEAD "network:\n  ingress:\n    - {port: 22, from: 0.0.0.0/0}\n"

static void test_a_valid_waiver_waives_and_the_error_no_longer_counts(void **state)
{
	struct at *t = *state;
	const json_t *f, *sum;

	at_load(t,
		SSH_OPEN "waive:\n  - {rule: KILN-NET-002, reason: \"bastion, reviewed\", "
			 "until: 2027-01-31}\n",
		NULL, NULL);
	at_audit(t);
	f = find(t, "KILN-NET-002", NULL);
	assert_string_equal(sget(json_object_get(f, "waived"), "reason"), "bastion, reviewed");
	assert_string_equal(sget(json_object_get(f, "waived"), "until"), "2027-01-31");
	assert_int_equal(audit_errors(t->plan), 0);
	sum = json_object_get(json_object_get(t->plan, "kiln"), "findings_summary");
	assert_int_equal(json_integer_value(json_object_get(sum, "error")), 0);
	assert_int_equal(json_integer_value(json_object_get(sum, "waived")), 1);
	assert_int_equal(json_array_size(findings(t)), 1);
}

static void test_a_waiver_holds_through_its_last_day(void **state)
{
	struct at *t = *state;

	setenv("KILN_NOW", "2027-01-31T23:59:59Z", 1);
	at_load(t, SSH_OPEN "waive:\n  - {rule: KILN-NET-002, reason: r, until: 2027-01-31}\n",
		NULL, NULL);
	at_audit(t);
	assert_int_equal(audit_errors(t->plan), 0);
}

static void test_an_expired_waiver_is_a_finding_and_waives_nothing(void **state)
{
	struct at *t = *state;
	const json_t *f;

	setenv("KILN_NOW", "2027-02-01T00:00:00Z", 1);
	at_load(t, SSH_OPEN "waive:\n  - {rule: KILN-NET-002, reason: r, until: 2027-01-31}\n",
		NULL, NULL);
	at_audit(t);
	f = find(t, "KILN-WAIVE-002",
		 "waive[0] (KILN-NET-002) expired on 2027-01-31, so it waives nothing");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 8);
	assert_int_equal(json_integer_value(json_object_get(f, "column")), 44);
	assert_null(json_object_get(find(t, "KILN-NET-002", NULL), "waived"));
	assert_int_equal(audit_errors(t->plan), 2);
}

static void test_the_clock_honours_a_utc_offset(void **state)
{
	struct at *t = *state;

	/* 2027-01-31T23:30-02:00 is 2027-02-01 in UTC: expired. */
	setenv("KILN_NOW", "2027-01-31T23:30:00-02:00", 1);
	at_load(t, SSH_OPEN "waive:\n  - {rule: KILN-NET-002, reason: r, until: 2027-01-31}\n",
		NULL, NULL);
	at_audit(t);
	assert_int_equal(count(t, "KILN-WAIVE-002"), 1);
}

static void test_a_waiver_without_reason_is_a_finding_and_waives_nothing(void **state)
{
	struct at *t = *state;

	at_load(t, SSH_OPEN "waive:\n  - {rule: KILN-NET-002, reason: \"  \", until: 2027-01-31}\n",
		NULL, NULL);
	at_audit(t);
	assert_string_equal(
	    sget(find(t, "KILN-WAIVE-001",
		      "waive[0] (KILN-NET-002) gives no reason, so it waives nothing"),
		 "severity"),
	    "error");
	assert_null(json_object_get(find(t, "KILN-NET-002", NULL), "waived"));
}

static void test_a_waiver_of_an_unknown_rule_is_a_finding_naming_the_closest(void **state)
{
	struct at *t = *state;

	at_load(t, SSH_OPEN "waive:\n  - {rule: KILN-NET-02, reason: r}\n", NULL, NULL);
	at_audit(t);
	find(t, "KILN-WAIVE-003",
	     "waive[0] waives rule 'KILN-NET-02', which kiln does not have (did you mean "
	     "KILN-NET-002?)");
	assert_int_equal(count(t, "KILN-WAIVE-004"), 0);
}

static void test_a_waivers_own_rules_cannot_be_waived(void **state)
{
	struct at *t = *state;

	at_load(t, HEAD "waive:\n  - {rule: KILN-WAIVE-001, reason: r}\n", NULL, NULL);
	at_audit(t);
	find(t, "KILN-WAIVE-003",
	     "waive[0] waives KILN-WAIVE-001: a waiver's own findings cannot be waived");
}

static void test_a_waiver_narrowed_to_an_address_waives_only_that_finding(void **state)
{
	struct at *t = *state;
	const json_t *f;
	size_t i, waived = 0;

	at_load(t,
		HEAD
		"network:\n  ingress:\n    - {port: 443, from: 0.0.0.0/0}\n"
		"    - {port: 80, from: 0.0.0.0/0}\n"
		"waive:\n  - {rule: KILN-NET-001, reason: web, address: \"network.ingress[1]\"}\n",
		NULL, NULL);
	at_audit(t);
	json_array_foreach(findings(t), i, f)
	{
		if (json_object_get(f, "waived")) {
			waived++;
			assert_string_equal(sget(f, "spec"), "network.ingress[1]");
			assert_true(
			    json_is_null(json_object_get(json_object_get(f, "waived"), "until")));
		}
	}
	assert_int_equal(waived, 1);
	assert_int_equal(count(t, "KILN-NET-001"), 2);
}

static void test_a_waiver_matching_nothing_is_an_info_finding(void **state)
{
	struct at *t = *state;
	const json_t *f;

	at_load(t, HEAD "waive:\n  - {rule: KILN-S3-001, reason: r, address: storage.gone}\n", NULL,
		NULL);
	at_audit(t);
	f = find(t, "KILN-WAIVE-004", "waive[0] (KILN-S3-001 at storage.gone) matches no finding");
	assert_string_equal(sget(f, "severity"), "info");
	assert_int_equal(audit_errors(t->plan), 0);
}

static void test_a_malformed_kiln_now_is_an_error(void **state)
{
	struct at *t = *state;
	struct kiln_error err = {0};

	setenv("KILN_NOW", "yesterday", 1);
	at_load(t, HEAD, NULL, NULL);
	assert_int_equal(at_audit_plan(t, &err), -1);
	assert_string_equal(err.msg, "KILN_NOW 'yesterday' is not an RFC 3339 time");
}

/* ---- the list itself ---- */

static void test_findings_are_ordered_errors_first_and_auditing_twice_is_the_same(void **state)
{
	struct at *t = *state;
	char *once, *twice;

	at_load(t,
		HEAD "network:\n  ingress:\n    - {port: 443, from: 0.0.0.0/0}\n"
		     "    - {port: 22, from: 0.0.0.0/0}\n",
		NULL, NULL);
	at_audit(t);
	assert_string_equal(sget(json_array_get(findings(t), 0), "rule"), "KILN-NET-002");
	assert_string_equal(sget(json_array_get(findings(t), 1), "rule"), "KILN-NET-001");
	once = json_dumps(findings(t), JSON_SORT_KEYS);
	at_audit(t);
	twice = json_dumps(findings(t), JSON_SORT_KEYS);
	assert_string_equal(twice, once);
	free(once);
	free(twice);
}

static void test_the_catalogue_has_unique_well_formed_rules(void **state)
{
	size_t i, j;

	(void)state;
	assert_true(audit_nrules >= 20);
	for (i = 0; i < audit_nrules; i++) {
		const struct audit_rule *r = &audit_rules[i];

		assert_true(str_starts_with(r->id, "KILN-"));
		assert_true(!strcmp(r->severity, "error") || !strcmp(r->severity, "warning") ||
			    !strcmp(r->severity, "info"));
		assert_true(r->title[0] && r->why[0] && r->fix[0]);
		assert_ptr_equal(audit_rule_find(r->id), r);
		for (j = i + 1; j < audit_nrules; j++)
			assert_string_not_equal(r->id, audit_rules[j].id);
	}
	assert_null(audit_rule_find("KILN-NOPE-001"));
}

/* ---- renderings ---- */

static char *render(const json_t *plan, bool markdown)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (markdown)
		audit_render_markdown(f, plan);
	else
		audit_render_text(f, plan, false);
	fclose(f);
	return buf;
}

static void test_text_lists_each_finding_with_its_fix_and_waiver(void **state)
{
	struct at *t = *state;
	char *out;

	at_load(t,
		HEAD "network:\n  ingress:\n    - {port: 22, from: 0.0.0.0/0}\n"
		     "    - {port: 443, from: 0.0.0.0/0}\n"
		     "waive:\n  - {rule: KILN-NET-001, reason: web, until: 2027-01-31}\n",
		"{\"sim_network.main\": {\"ingress\": []}}", NULL);
	at_audit(t);
	out = render(t->plan, false);
	assert_string_equal(
	    out,
	    "Findings: 1 error, 0 warnings, 0 info, 1 waived\n"
	    "\n"
	    "  error    KILN-NET-002    network.ingress[0] admits SSH (port 22) from 0.0.0.0/0, "
	    "the whole internet\n"
	    "           at t.yaml:6:24 (sim_network.main)\n"
	    "           fix: Set `from` to an office or VPN range, or reach the nodes through a "
	    "login group that only that range can reach.\n"
	    "           same as Checkov CKV_AWS_24, Trivy AVD-AWS-0107\n"
	    "\n"
	    "  waived   KILN-NET-001    network.ingress[1] admits port 443 tcp from 0.0.0.0/0, "
	    "the whole internet\n"
	    "           at t.yaml:7:25 (sim_network.main)\n"
	    "           waived (warning) until 2027-01-31: web\n"
	    "\n");
	free(out);
}

static void test_without_findings_text_is_silent_and_markdown_says_none(void **state)
{
	struct at *t = *state;
	char *out, *want;

	at_load(t, HEAD, NULL, NULL);
	at_audit(t);
	out = render(t->plan, false);
	assert_string_equal(out, "");
	free(out);
	out = render(t->plan, true);
	want = xasprintf("### Findings\n\nNone: no rule of kiln-rules(7) fired (%zu rules).\n\n",
			 audit_nrules);
	assert_string_equal(out, want);
	free(want);
	free(out);
}

static void test_markdown_is_a_table_with_escaped_cells_and_the_fixes(void **state)
{
	struct at *t = *state;
	char *out;

	at_load(t, HEAD "network:\n  ingress:\n    - {port: 22, from: 0.0.0.0/0}\n", NULL, NULL);
	at_audit(t);
	/* A message with a pipe must not break the table. */
	json_object_set_new((json_t *)json_array_get(findings(t), 0), "message",
			    json_string("a | b"));
	out = render(t->plan, true);
	assert_string_equal(
	    out, "### Findings\n"
		 "\n"
		 "**1 error, 0 warnings, 0 info, 0 waived**\n"
		 "\n"
		 "| Severity | Rule | Resource | Where | Finding |\n"
		 "| --- | --- | --- | --- | --- |\n"
		 "| **error** | `KILN-NET-002` |  | `network.ingress[0]` t.yaml:6 | a \\| b |\n"
		 "\n"
		 "<details><summary>How to fix</summary>\n"
		 "\n"
		 "- **KILN-NET-002** `network.ingress[0]`: Set \\`from\\` to an office or VPN "
		 "range, or reach the nodes through a login group that only that range can "
		 "reach. (same as Checkov `CKV_AWS_24`, Trivy `AVD-AWS-0107`)\n"
		 "\n"
		 "</details>\n"
		 "\n");
	free(out);
}

/* ---- SARIF ---- */

static const json_t *path(const json_t *o, const char *a, const char *b)
{
	return json_object_get(json_object_get(o, a), b);
}

static void test_sarif_has_the_required_fields_and_suppressions(void **state)
{
	struct at *t = *state;
	json_t *log;
	const json_t *run, *driver, *res, *rule, *loc;
	size_t i;

	at_load(t,
		HEAD "network:\n  ingress:\n    - {port: 22, from: 0.0.0.0/0}\n"
		     "    - {port: 443, from: 0.0.0.0/0}\n"
		     "waive:\n  - {rule: KILN-NET-001, reason: web, until: 2027-01-31}\n",
		"{\"sim_network.main\": {\"ingress\": []}}", NULL);
	at_audit(t);
	log = audit_sarif(t->plan, NULL);
	assert_string_equal(sget(log, "version"), "2.1.0");
	assert_non_null(sget(log, "$schema"));
	assert_int_equal(json_array_size(json_object_get(log, "runs")), 1);
	run = json_array_get(json_object_get(log, "runs"), 0);
	driver = path(run, "tool", "driver");
	assert_string_equal(sget(driver, "name"), "kiln");
	assert_string_equal(sget(driver, "version"), KILN_VERSION);
	assert_non_null(sget(driver, "informationUri"));
	assert_int_equal(json_array_size(json_object_get(driver, "rules")), audit_nrules);
	json_array_foreach(json_object_get(driver, "rules"), i, rule)
	{
		assert_string_equal(sget(rule, "id"), audit_rules[i].id);
		assert_non_null(sget(json_object_get(rule, "shortDescription"), "text"));
		assert_non_null(sget(json_object_get(rule, "fullDescription"), "text"));
		assert_non_null(sget(json_object_get(rule, "help"), "text"));
		assert_non_null(sget(json_object_get(rule, "defaultConfiguration"), "level"));
		assert_non_null(sget(rule, "name"));
		assert_string_not_equal(sget(rule, "name"), audit_rules[i].id);
	}
	rule = json_array_get(json_object_get(driver, "rules"), 0);
	assert_string_equal(sget(rule, "name"), "AnObjectStoreIsNotEncryptedAtRest");
	assert_string_equal(sget(rule, "helpUri"), "man:kiln-rules(7)#KILN-S3-001");
	assert_int_equal(json_array_size(json_object_get(run, "results")), 2);
	res = json_array_get(json_object_get(run, "results"), 0);
	assert_string_equal(sget(res, "ruleId"), "KILN-NET-002");
	assert_string_equal(sget(res, "level"), "error");
	assert_string_equal(
	    sget(json_array_get(json_object_get(driver, "rules"),
				(size_t)json_integer_value(json_object_get(res, "ruleIndex"))),
		 "id"),
	    "KILN-NET-002");
	assert_non_null(sget(json_object_get(res, "message"), "text"));
	assert_null(json_object_get(res, "suppressions"));
	loc = json_array_get(json_object_get(res, "locations"), 0);
	assert_string_equal(sget(path(loc, "physicalLocation", "artifactLocation"), "uri"),
			    "t.yaml");
	assert_string_equal(sget(path(loc, "physicalLocation", "artifactLocation"), "uriBaseId"),
			    "%SRCROOT%");
	assert_non_null(path(run, "originalUriBaseIds", "%SRCROOT%"));
	assert_int_equal(json_integer_value(
			     json_object_get(path(loc, "physicalLocation", "region"), "startLine")),
			 6);
	assert_int_equal(json_integer_value(json_object_get(path(loc, "physicalLocation", "region"),
							    "startColumn")),
			 24);
	assert_string_equal(
	    sget(json_array_get(json_object_get(loc, "logicalLocations"), 0), "fullyQualifiedName"),
	    "sim_network.main");
	res = json_array_get(json_object_get(run, "results"), 1);
	assert_string_equal(sget(res, "level"), "warning");
	assert_string_equal(sget(json_array_get(json_object_get(res, "suppressions"), 0), "kind"),
			    "external");
	assert_string_equal(
	    sget(json_array_get(json_object_get(res, "suppressions"), 0), "justification"),
	    "web (waived until 2027-01-31)");
	json_decref(log);
}

/* The artifactLocation of the first result of a log of SSH_OPEN, its spec at FILE, over ROOT. */
static json_t *sarif_first_artifact(struct at *t, const char *file, const char *root)
{
	json_t *log, *loc;

	at_load(t, SSH_OPEN, NULL, NULL);
	at_audit(t);
	json_object_set_new((json_t *)json_array_get(findings(t), 0), "file", json_string(file));
	log = audit_sarif(t->plan, root);
	/* The log is this function's own: a reference to its member outlives it. */
	loc = json_object_get(
	    json_object_get(
		json_array_get(
		    json_object_get(
			json_array_get(
			    json_object_get(json_array_get(json_object_get(log, "runs"), 0),
					    "results"),
			    0),
			"locations"),
		    0),
		"physicalLocation"),
	    "artifactLocation");
	json_incref(loc);
	json_decref(log);
	return loc;
}

static void test_sarif_makes_a_spec_path_relative_to_its_source_root(void **state)
{
	json_t *loc = sarif_first_artifact(*state, "/srv/my specs/kiln.yaml", "/srv");

	assert_string_equal(sget(loc, "uri"), "my%20specs/kiln.yaml");
	assert_string_equal(sget(loc, "uriBaseId"), "%SRCROOT%");
	json_decref(loc);
}

static void test_sarif_makes_a_spec_path_outside_the_root_a_file_uri(void **state)
{
	json_t *loc = sarif_first_artifact(*state, "/srv/my specs/kiln.yaml", "/elsewhere/");

	assert_string_equal(sget(loc, "uri"), "file:///srv/my%20specs/kiln.yaml");
	assert_null(json_object_get(loc, "uriBaseId"));
	json_decref(loc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    audit_test(test_s3_001_fires_on_an_unencrypted_object_store),
	    audit_test(test_s3_001_is_silent_for_a_default_object_store),
	    audit_test(test_s3_001_reads_the_plans_attribute_over_the_spec),
	    audit_test(test_s3_002_fires_when_the_plan_drops_the_public_access_block),
	    audit_test(test_s3_002_is_silent_with_the_block_on),
	    audit_test(test_s3_003_fires_on_a_written_store_without_versioning),
	    audit_test(test_s3_003_is_silent_with_versioning_or_for_a_read_only_store),
	    audit_test(test_fsx_001_fires_on_an_unencrypted_lustre),
	    audit_test(test_fsx_001_is_silent_for_an_encrypted_lustre),
	    audit_test(test_efs_001_fires_on_an_unencrypted_nfs_store),
	    audit_test(test_efs_001_is_silent_for_a_default_nfs_store),
	    audit_test(test_enc_001_fires_on_allow_unencrypted_even_with_encryption_on),
	    audit_test(test_enc_001_is_silent_without_allow_unencrypted),
	    audit_test(test_store_001_fires_on_deletion_delete),
	    audit_test(test_store_001_is_silent_on_retain),
	    audit_test(test_local_001_says_the_data_goes_with_the_node),
	    audit_test(test_boot_001_fires_on_an_access_key_id_and_never_repeats_it),
	    audit_test(test_boot_001_fires_on_a_password_and_a_private_key),
	    audit_test(test_boot_001_fires_on_a_high_entropy_secret_assignment),
	    audit_test(test_boot_001_is_silent_on_secrets_read_at_boot),
	    audit_test(test_boot_001_is_silent_on_low_entropy_and_plain_commands),
	    audit_test(test_ebs_001_fires_on_an_unencrypted_root_disk),
	    audit_test(test_ebs_001_reads_the_plans_attribute_when_there_is_one),
	    audit_test(test_ebs_001_is_silent_for_a_default_disk),
	    audit_test(test_ec2_001_fires_when_a_group_takes_imdsv1),
	    audit_test(test_ec2_001_is_silent_when_imdsv2_is_required_or_enforced),
	    audit_test(test_gpu_001_fires_without_ttl_or_budget),
	    audit_test(test_gpu_001_is_silent_with_a_ttl_a_budget_or_no_gpu),
	    audit_test(test_gpu_001_knows_a_gpu_instance_type),
	    audit_test(test_gpu_002_fires_on_several_gpu_nodes_without_efa),
	    audit_test(test_gpu_002_is_silent_with_efa_or_one_node),
	    audit_test(test_net_002_fires_on_ssh_open_to_the_world),
	    audit_test(test_net_002_is_silent_for_ssh_from_a_known_range_or_udp),
	    audit_test(test_ssh_001_fires_on_a_short_rsa_key_only),
	    audit_test(test_net_001_fires_on_another_port_open_to_the_world),
	    audit_test(test_net_001_is_silent_for_a_narrow_range),
	    audit_test(test_net_003_fires_on_an_undeclared_world_rule_in_the_plan),
	    audit_test(test_net_003_is_silent_when_every_world_rule_is_declared),
	    audit_test(test_cost_001_fires_above_the_budget),
	    audit_test(test_cost_001_is_silent_within_budget_or_without_cost),
	    audit_test(test_cost_002_fires_when_the_upfront_purchase_is_above_the_budget),
	    audit_test(test_cost_002_is_silent_within_the_upfront_budget),
	    audit_test(test_iam_001_fires_on_a_wildcard_action),
	    audit_test(test_iam_findings_name_three_pairs_and_say_there_are_more),
	    audit_test(test_iam_001_is_silent_on_named_actions),
	    audit_test(test_iam_002_fires_on_a_star_resource),
	    audit_test(test_iam_002_is_silent_on_a_named_resource),
	    audit_test(test_iam_002_is_silent_on_actions_iam_cannot_scope),
	    audit_test(test_iam_002_flags_a_pattern_over_unscopable_actions),
	    audit_test(test_iam_003_fires_on_passrole_on_star),
	    audit_test(test_iam_003_is_silent_on_passrole_to_a_named_role),
	    audit_test(test_iam_004_fires_on_star_star_and_on_iam_star),
	    audit_test(test_iam_004_is_silent_on_a_scoped_role),
	    audit_test(test_iam_rules_skip_a_plan_without_iam_delta),
	    audit_test(test_a_valid_waiver_waives_and_the_error_no_longer_counts),
	    audit_test(test_a_waiver_holds_through_its_last_day),
	    audit_test(test_an_expired_waiver_is_a_finding_and_waives_nothing),
	    audit_test(test_the_clock_honours_a_utc_offset),
	    audit_test(test_a_waiver_without_reason_is_a_finding_and_waives_nothing),
	    audit_test(test_a_waiver_of_an_unknown_rule_is_a_finding_naming_the_closest),
	    audit_test(test_a_waivers_own_rules_cannot_be_waived),
	    audit_test(test_a_waiver_narrowed_to_an_address_waives_only_that_finding),
	    audit_test(test_a_waiver_matching_nothing_is_an_info_finding),
	    audit_test(test_a_malformed_kiln_now_is_an_error),
	    audit_test(test_findings_are_ordered_errors_first_and_auditing_twice_is_the_same),
	    audit_test(test_the_catalogue_has_unique_well_formed_rules),
	    audit_test(test_text_lists_each_finding_with_its_fix_and_waiver),
	    audit_test(test_without_findings_text_is_silent_and_markdown_says_none),
	    audit_test(test_markdown_is_a_table_with_escaped_cells_and_the_fixes),
	    audit_test(test_sarif_has_the_required_fields_and_suppressions),
	    audit_test(test_sarif_makes_a_spec_path_relative_to_its_source_root),
	    audit_test(test_sarif_makes_a_spec_path_outside_the_root_a_file_uri),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
