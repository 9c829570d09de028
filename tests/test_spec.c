/*
 * test_spec.c - the spec loader: YAML to typed structures, defaults, variable
 * substitution, and the message (and position) of every shape error.
 */
#include "testutil.h"
#include "strbuf.h"

/* Three lines every small spec starts with; the section under test is line 4 on. */
#define HEAD                                                                                       \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: sim}\n"

/* A spec with every section, each set away from its default. */
static const char full_spec[] =
    "kiln: 1\n"
    "cluster: llm-pretrain\n"
    "provider:\n"
    "  name: aws\n"
    "  region: us-east-1\n"
    "  zone: [us-east-1a, us-east-1b]\n"
    "  endpoint: https://ec2.example.test\n"
    "ttl: 72h\n"
    "budget: {max_hourly_usd: 1500.5}\n"
    "tags: {team: research, project: pretrain}\n"
    "vars:\n"
    "  image: ami-0123456789abcdef0\n"
    "network:\n"
    "  cidr: 10.42.0.0/16\n"
    "  fabric: efa\n"
    "  ingress:\n"
    "    - {port: 22, from: 203.0.113.0/24, description: office VPN}\n"
    "    - {port: 8000-8100, from: 0.0.0.0/0, protocol: udp}\n"
    "compute:\n"
    "  trainers:\n"
    "    gpu: h100:8\n"
    "    count: 16\n"
    "    gang: true\n"
    "    market: spot\n"
    "    image: ${var.image}\n"
    "    disk: {size_gb: 1024, type: io2, encrypted: false, allow_unencrypted: true}\n"
    "    role: trainer\n"
    "  login:\n"
    "    instance_type: m7i.xlarge\n"
    "    image: ami-0123456789abcdef0\n"
    "    role: login\n"
    "    public: true\n"
    "storage:\n"
    "  datasets: {tier: object, versioning: true, deletion: delete, "
    "expire_noncurrent_after: 30d}\n"
    "  scratch: {tier: lustre, capacity_gb: 4800, throughput_per_tib: 500, import: datasets, "
    "mount: /fsx}\n"
    "  fast: {tier: lustre, capacity_gb: 1200}\n"
    "  home: {tier: nfs}\n"
    "  open: {tier: object, encrypted: false, allow_unencrypted: true}\n"
    "iam:\n"
    "  roles:\n"
    "    trainer: {read: [datasets, home], write: [scratch]}\n"
    "    login: {write: [home]}\n";

/* Load a spec that must load with no diagnostic at all. */
static const struct spec *load_clean(struct fx *f, const char *yaml)
{
	int ret = fx_load(f, yaml);

	assert_no_diags(&f->d);
	assert_int_equal(ret, 0);
	assert_non_null(f->spec);
	return f->spec;
}

/* Load a spec that must fail; the diagnostics are in f->d. */
static void load_bad(struct fx *f, const char *yaml)
{
	assert_failed_with_errors(&f->d, fx_load(f, yaml));
}

/* Load exactly len bytes (which may hold NULs) that must be refused before parsing. */
static void load_bytes_refused(struct fx *f, const char *buf, size_t len)
{
	assert_int_equal(spec_load_buffer(&f->spec, TEST_FILE, buf, len, NULL, &f->d), -1);
	assert_null(f->spec);
	assert_int_equal(f->d.errors, 1);
}

/* The names index (spec_index.c). */

/* Every name resolves through the index as a scan of the arrays resolves it. */
static void test_the_index_finds_what_a_scan_finds(void **state)
{
	struct fx *f = *state;
	struct strbuf y = {0};
	const struct spec *s;
	size_t i;

	sb_adds(&y, "kiln: 1\ncluster: c\nprovider: {name: sim}\nnetwork: {cidr: 10.0.0.0/16}\n"
		    "compute:\n");
	for (i = 0; i < 300; i++)
		sb_addf(&y, "  g%zu: {gpu: L4:1, role: r%zu}\n", i, i % 7);
	sb_adds(&y, "storage:\n");
	for (i = 0; i < 300; i++)
		sb_addf(&y, "  s%zu: {tier: object}\n", i);
	sb_adds(&y, "iam:\n  roles:\n");
	for (i = 0; i < 7; i++)
		sb_addf(&y, "    r%zu: {read: [s%zu]}\n", i, i);
	s = load_clean(f, y.buf);
	sb_release(&y);
	assert_true(spec_index_fresh(s));
	for (i = 0; i < s->ngroups; i++)
		assert_ptr_equal(spec_group_find(s, s->groups[i].name), &s->groups[i]);
	for (i = 0; i < s->nstores; i++)
		assert_ptr_equal(spec_store_find(s, s->stores[i].name), &s->stores[i]);
	for (i = 0; i < s->nroles; i++)
		assert_ptr_equal(spec_role_find(s, s->roles[i].name), &s->roles[i]);
	assert_null(spec_group_find(s, "s1"));
	assert_null(spec_store_find(s, "g1"));
	assert_null(spec_role_find(s, "g1"));
	assert_null(spec_group_find(s, ""));
}

/* A group pushed after loading makes the index stale; the finders scan again. */
static void test_a_stale_index_is_never_read(void **state)
{
	struct fx *f = *state;
	struct spec *s;
	struct spec_group *g;

	load_clean(f, full_spec);
	s = f->spec;
	assert_true(spec_index_fresh(s));
	g = ARRAY_PUSH(s->groups, s->ngroups, s->groups_cap);
	memset(g, 0, sizeof(*g));
	g->name = xstrdup("late");
	assert_false(spec_index_fresh(s));
	assert_ptr_equal(spec_group_find(s, "late"), g);
	assert_ptr_equal(spec_group_find(s, "trainers"), &s->groups[0]);
	spec_index_build(s);
	assert_true(spec_index_fresh(s));
	assert_ptr_equal(spec_group_find(s, "late"), g);
}

/* The full spec. */

static void test_full_spec_loads_without_diagnostics(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_validate(f, full_spec), 0);
	assert_no_diags(&f->d);
}

static void test_full_spec_top_level_values(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);

	assert_int_equal(s->format, 1);
	assert_string_equal(s->cluster, "llm-pretrain");
	assert_int_equal(s->ttl, 72 * 3600);
	assert_true(s->max_hourly_usd == 1500.5);
	assert_int_equal(s->ntags, 2);
	assert_string_equal(s->tags[0].key, "team");
	assert_string_equal(s->tags[0].value, "research");
	assert_string_equal(s->tags[1].key, "project");
	assert_string_equal(s->tags[1].value, "pretrain");
	assert_int_equal(s->nvars, 1);
	assert_string_equal(s->vars[0].name, "image");
	assert_true(s->vars[0].used);
	assert_int_equal(s->broken, 0);
}

static void test_full_spec_provider(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);

	assert_string_equal(s->provider.name, "aws");
	assert_string_equal(s->provider.region, "us-east-1");
	assert_string_equal(s->provider.endpoint, "https://ec2.example.test");
	assert_int_equal(s->provider.nzones, 2);
	assert_string_equal(s->provider.zones[0].name, "us-east-1a");
	assert_string_equal(s->provider.zones[1].name, "us-east-1b");
	assert_int_equal(s->provider.zones[1].node->line, 6);
	assert_int_equal(s->provider.zones[1].node->col, 22);
}

static void test_full_spec_network(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_ingress *in = s->network.ingress;

	assert_string_equal(s->network.cidr, "10.42.0.0/16");
	assert_int_equal(s->network.fabric, FABRIC_EFA);
	assert_int_equal(s->network.ningress, 2);
	assert_int_equal(in[0].port_from, 22);
	assert_int_equal(in[0].port_to, 22);
	assert_string_equal(in[0].protocol, "tcp");
	assert_string_equal(in[0].from, "203.0.113.0/24");
	assert_string_equal(in[0].description, "office VPN");
	assert_int_equal(in[1].port_from, 8000);
	assert_int_equal(in[1].port_to, 8100);
	assert_string_equal(in[1].protocol, "udp");
	assert_string_equal(in[1].from, "0.0.0.0/0");
	assert_null(in[1].description);
}

static void test_full_spec_compute_group_with_every_key(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_group *g = spec_group_find(s, "trainers");

	assert_int_equal(s->ngroups, 2);
	assert_non_null(g);
	assert_string_equal(g->gpu_model, "H100");
	assert_int_equal(g->gpu_count, 8);
	assert_null(g->instance_type);
	assert_int_equal(g->count, 16);
	assert_true(g->gang);
	assert_true(g->gang_set);
	assert_int_equal(g->market, MARKET_SPOT);
	assert_string_equal(g->image, "ami-0123456789abcdef0");
	assert_int_equal(g->disk.size_gb, 1024);
	assert_string_equal(g->disk.type, "io2");
	assert_false(g->disk.encrypted);
	assert_true(g->disk.allow_unencrypted);
	assert_string_equal(g->role.name, "trainer");
	assert_int_equal(g->role.node->line, 27);
	assert_false(g->public);
}

static void test_full_spec_compute_group_defaults(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_group *g = spec_group_find(s, "login");

	assert_non_null(g);
	assert_string_equal(g->instance_type, "m7i.xlarge");
	assert_null(g->gpu_model);
	assert_int_equal(g->count, 1);
	assert_false(g->gang_set);
	assert_int_equal(g->market, MARKET_ON_DEMAND);
	assert_int_equal(g->disk.size_gb, 200);
	assert_string_equal(g->disk.type, "gp3");
	assert_true(g->disk.encrypted);
	assert_false(g->disk.allow_unencrypted);
	assert_true(g->public);
}

static void test_full_spec_object_stores(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_store *ds = spec_store_find(s, "datasets");
	const struct spec_store *open = spec_store_find(s, "open");

	assert_int_equal(s->nstores, 5);
	assert_int_equal(ds->tier, TIER_OBJECT);
	assert_true(ds->versioning);
	assert_int_equal(ds->deletion, DELETION_DELETE);
	assert_int_equal(ds->expire_noncurrent_after, 30 * 86400);
	assert_true(ds->encrypted);
	assert_null(ds->mount);
	assert_false(open->encrypted);
	assert_true(open->allow_unencrypted);
	assert_int_equal(open->deletion, DELETION_RETAIN);
}

static void test_full_spec_lustre_stores(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_store *scratch = spec_store_find(s, "scratch");
	const struct spec_store *fast = spec_store_find(s, "fast");

	assert_int_equal(scratch->tier, TIER_LUSTRE);
	assert_int_equal(scratch->capacity_gb, 4800);
	assert_int_equal(scratch->throughput_per_tib, 500);
	assert_string_equal(scratch->import.name, "datasets");
	assert_string_equal(scratch->mount, "/fsx");
	assert_int_equal(scratch->deletion, DELETION_RETAIN);
	assert_int_equal(fast->capacity_gb, 1200);
	assert_int_equal(fast->throughput_per_tib, 250);
	assert_null(fast->import.name);
	assert_string_equal(fast->mount, "/mnt/fast");
}

static void test_full_spec_nfs_store_mounts_under_mnt_by_default(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_store *home = spec_store_find(s, "home");

	assert_int_equal(home->tier, TIER_NFS);
	assert_string_equal(home->mount, "/mnt/home");
	assert_true(home->encrypted);
}

static void test_full_spec_roles(void **state)
{
	const struct spec *s = load_clean(*state, full_spec);
	const struct spec_role *trainer = spec_role_find(s, "trainer");
	const struct spec_role *login = spec_role_find(s, "login");

	assert_int_equal(s->nroles, 2);
	assert_int_equal(trainer->nread, 2);
	assert_string_equal(trainer->read[0].name, "datasets");
	assert_string_equal(trainer->read[1].name, "home");
	assert_int_equal(trainer->nwrite, 1);
	assert_string_equal(trainer->write[0].name, "scratch");
	assert_int_equal(login->nread, 0);
	assert_int_equal(login->nwrite, 1);
	assert_null(spec_role_find(s, "nobody"));
}

/* Defaults of a minimal spec. */

static void test_sim_provider_defaults_to_region_sim_1_and_zone_sim_1a(void **state)
{
	const struct spec *s = load_clean(*state, HEAD);

	assert_string_equal(s->provider.name, "sim");
	assert_string_equal(s->provider.region, "sim-1");
	assert_int_equal(s->provider.nzones, 1);
	assert_string_equal(s->provider.zones[0].name, "sim-1a");
}

static void test_sim_zone_follows_a_given_region(void **state)
{
	const struct spec *s = load_clean(*state, "kiln: 1\n"
						  "cluster: t\n"
						  "provider: {name: sim, region: sim-2}\n");

	assert_string_equal(s->provider.zones[0].name, "sim-2a");
}

static void test_network_defaults_to_10_0_0_0_16_without_fabric(void **state)
{
	const struct spec *s = load_clean(*state, HEAD);

	assert_string_equal(s->network.cidr, "10.0.0.0/16");
	assert_int_equal(s->network.fabric, FABRIC_NONE);
	assert_int_equal(s->network.ningress, 0);
	assert_int_equal(s->ttl, 0);
	assert_true(s->max_hourly_usd == 0);
}

static void test_lustre_store_without_mount_mounts_under_mnt(void **state)
{
	const struct spec *s =
	    load_clean(*state, HEAD "storage:\n"
				    "  scratch: {tier: lustre, capacity_gb: 2400}\n");

	assert_string_equal(s->stores[0].mount, "/mnt/scratch");
	assert_int_equal(s->stores[0].throughput_per_tib, 250);
	assert_int_equal(s->stores[0].deletion, DELETION_RETAIN);
}

static void test_role_with_no_value_is_a_role_without_stores(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "iam:\n"
						       "  roles:\n"
						       "    login:\n");

	assert_int_equal(s->nroles, 1);
	assert_int_equal(s->roles[0].nread + s->roles[0].nwrite, 0);
}

/* A role's allow: statements. */

#define ALLOW_HEAD                                                                                 \
	HEAD "iam:\n"                                                                              \
	     "  roles:\n"                                                                          \
	     "    trainer:\n"                                                                      \
	     "      allow:\n"

static void test_allow_statements_load_as_written(void **state)
{
	const struct spec *s = load_clean(
	    *state, HEAD "vars: {repo: train}\n"
			 "iam:\n"
			 "  roles:\n"
			 "    trainer:\n"
			 "      allow:\n"
			 "        - actions: [ecr:GetAuthorizationToken]\n"
			 "          resources: [\"*\"]\n"
			 "        - sid: PullImages\n"
			 "          actions: [ecr:BatchGetImage, \"ecr:Get*\", \"*\"]\n"
			 "          resources:\n"
			 "            - arn:aws:ecr:us-east-1:123456789012:repository/${var.repo}\n"
			 "            - arn:aws:iam::aws:policy/x\n"
			 "            - arn:aws:s3:::b/k:with:colons\n"
			 "            - arn:sim:s3:::*\n");
	const struct spec_role *r = &s->roles[0];

	assert_int_equal(r->nallow, 2);
	assert_int_equal(r->allow[0].nactions, 1);
	assert_string_equal(r->allow[0].actions[0], "ecr:GetAuthorizationToken");
	assert_int_equal(r->allow[0].nresources, 1);
	assert_string_equal(r->allow[0].resources[0], "*");
	assert_null(r->allow[0].sid);
	assert_int_equal(r->allow[0].node->line, 9);
	assert_int_equal(r->allow[0].node->col, 11);
	assert_string_equal(r->allow[1].sid, "PullImages");
	assert_int_equal(r->allow[1].nactions, 3);
	assert_string_equal(r->allow[1].actions[1], "ecr:Get*");
	assert_int_equal(r->allow[1].nresources, 4);
	assert_string_equal(r->allow[1].resources[0],
			    "arn:aws:ecr:us-east-1:123456789012:repository/train");
	assert_string_equal(r->allow[1].resources[2], "arn:aws:s3:::b/k:with:colons");
	assert_int_equal(r->nread + r->nwrite, 0);
}

static void test_allow_that_is_not_a_list_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD "        actions: [ecr:GetAuthorizationToken]\n");
	assert_error(&f->d, 8, 9,
		     "iam.roles.trainer.allow must be a list of statements, got a mapping");
	assert_hint(&f->d, 8, 9, "write allow: [{actions: [SERVICE:Action], resources: [ARN]}]");
}

static void test_allow_statement_that_is_not_a_mapping_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD "        - ecr:GetAuthorizationToken\n");
	assert_error(&f->d, 8, 11, "iam.roles.trainer.allow[0] must be a mapping, got a string");
	assert_hint(&f->d, 8, 11, "write {actions: [SERVICE:Action], resources: [ARN]}");
}

static void test_allow_statement_with_an_unknown_key_suggests_the_known_one(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD "        - {actions: [ecr:BatchGetImage], resource: [\"*\"]}\n");
	assert_error(&f->d, 8, 42,
		     "unknown key 'resource' in an allow statement of role 'trainer'");
	assert_hint(&f->d, 8, 42, "did you mean 'resources'?");
	assert_error(&f->d, 8, 11,
		     "missing required key 'resources' in iam.roles.trainer.allow[0]");
}

static void test_allow_statement_without_actions_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD "        - {resources: [\"*\"]}\n");
	assert_error(&f->d, 8, 11, "missing required key 'actions' in iam.roles.trainer.allow[0]");
	assert_hint(&f->d, 8, 11,
		    "list the API actions it allows, like actions: [ecr:GetAuthorizationToken]");
}

static void test_allow_actions_that_are_a_string_or_empty_are_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD "        - {actions: ecr:BatchGetImage, resources: [\"*\"]}\n"
			       "        - {actions: [ecr:BatchGetImage], resources: []}\n");
	assert_error(&f->d, 8, 21,
		     "iam.roles.trainer.allow[0].actions must be a list of actions, got a string");
	assert_hint(&f->d, 8, 21, "write actions: [ecr:BatchGetImage]");
	assert_error(&f->d, 9, 53, "iam.roles.trainer.allow[1].resources is empty");
	assert_hint(&f->d, 9, 53, "list at least one ARN (or \"*\"), or remove the statement");
}

static void test_allow_action_without_a_service_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f,
		 ALLOW_HEAD "        - {actions: [GetObject, \"s3:Get Object\", \"S3:GetObject\"], "
			    "resources: [\"*\"]}\n");
	assert_error(&f->d, 8, 22,
		     "iam.roles.trainer.allow[0].actions[0]: 'GetObject' is not an IAM action");
	assert_hint(&f->d, 8, 22,
		    "write SERVICE:Action (SERVICE of a-z, 0-9 and '-'; Action of letters, digits, "
		    "'*' and '?'), like ecr:GetAuthorizationToken, or \"*\"");
	assert_error(&f->d, 8, 33,
		     "iam.roles.trainer.allow[0].actions[1]: 's3:Get Object' is not an IAM action");
	assert_error(&f->d, 8, 50,
		     "iam.roles.trainer.allow[0].actions[2]: 'S3:GetObject' is not an IAM action");
	assert_int_equal(f->d.errors, 3);
}

static void test_allow_resource_that_is_not_an_arn_names_the_part_at_fault(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD "        - actions: [s3:GetObject]\n"
			       "          resources:\n"
			       "            - bucket/key\n"
			       "            - arn:aws:s3\n"
			       "            - \"arn::s3:::b\"\n"
			       "            - arn:aws:S3:::b\n"
			       "            - arn:aws:ecr:US-EAST-1:1:repository/r\n"
			       "            - arn:aws:ecr:us-east-1:acct:repository/r\n"
			       "            - \"arn:aws:s3:::\"\n"
			       "            - \"arn:aws:s3:::a b\"\n");
	assert_error(&f->d, 10, 15,
		     "iam.roles.trainer.allow[0].resources[0]: 'bucket/key' is not an ARN: it does "
		     "not start with arn:");
	assert_hint(&f->d, 10, 15,
		    "write \"*\" or arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE, like "
		    "arn:aws:ecr:us-east-1:123456789012:repository/train");
	assert_error(&f->d, 11, 15,
		     "iam.roles.trainer.allow[0].resources[1]: 'arn:aws:s3' is not an ARN: it has "
		     "fewer than six ':'-separated parts");
	assert_error(&f->d, 12, 15,
		     "iam.roles.trainer.allow[0].resources[2]: 'arn::s3:::b' is not an ARN: the "
		     "partition must be a-z, 0-9 and '-'");
	assert_error(&f->d, 13, 15,
		     "iam.roles.trainer.allow[0].resources[3]: 'arn:aws:S3:::b' is not an ARN: the "
		     "service must be a-z, 0-9 and '-'");
	assert_error(
	    &f->d, 14, 15,
	    "iam.roles.trainer.allow[0].resources[4]: 'arn:aws:ecr:US-EAST-1:1:repository/r' "
	    "is not an ARN: the region must be a-z, 0-9, '-', '*' and '?'");
	assert_error(&f->d, 15, 15,
		     "iam.roles.trainer.allow[0].resources[5]: "
		     "'arn:aws:ecr:us-east-1:acct:repository/r' is not an ARN: the account must be "
		     "digits, '*' and '?', or aws");
	assert_error(&f->d, 16, 15,
		     "iam.roles.trainer.allow[0].resources[6]: 'arn:aws:s3:::' is not an ARN: the "
		     "resource after the fifth ':' is empty");
	assert_error(
	    &f->d, 17, 15,
	    "iam.roles.trainer.allow[0].resources[7]: 'arn:aws:s3:::a b' is not an ARN: the "
	    "resource holds a space or a character outside ASCII");
	assert_int_equal(f->d.errors, 8);
}

static void test_allow_sid_must_be_alphanumeric_and_unique(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD
		 "        - {sid: Pull, actions: [ecr:BatchGetImage], resources: [\"*\"]}\n"
		 "        - {sid: Pull, actions: [logs:PutLogEvents], resources: [\"*\"]}\n"
		 "        - {sid: pull-logs, actions: [logs:PutLogEvents], resources: [\"*\"]}\n");
	assert_error(&f->d, 9, 17,
		     "iam.roles.trainer.allow[1].sid 'Pull' is also the sid of allow[0]");
	assert_hint(&f->d, 9, 17, "give each statement its own sid");
	assert_error(&f->d, 10, 17,
		     "iam.roles.trainer.allow[2].sid 'pull-logs' must be letters and digits only");
	assert_hint(&f->d, 10, 17, "IAM takes [A-Za-z0-9] in a statement id, like PullImages");
	assert_int_equal(f->d.errors, 2);
}

static void test_allow_resource_with_an_unset_var_is_reported_once(void **state)
{
	struct fx *f = *state;

	load_bad(f, ALLOW_HEAD
		 "        - {actions: [ecr:BatchGetImage], resources: [\"${var.repo}\"]}\n");
	assert_error(&f->d, 8, 55,
		     "iam.roles.trainer.allow[0].resources[0]: variable 'repo' is not set");
	assert_int_equal(f->d.errors, 1);
}

/* Variables. */

static void test_var_is_substituted_from_vars(void **state)
{
	const struct spec *s =
	    load_clean(*state, HEAD "vars: {img: ami-0123456789abcdef0}\n"
				    "compute:\n"
				    "  g: {gpu: \"A100:8\", image: \"${var.img}\"}\n");

	assert_string_equal(s->groups[0].image, "ami-0123456789abcdef0");
}

static void test_var_is_substituted_inside_a_longer_string(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "vars: {who: ml, n: 2}\n"
						       "tags:\n"
						       "  owner: team-${var.who}-${var.n}\n");

	assert_string_equal(s->tags[0].value, "team-ml-2");
}

static void test_var_override_wins_over_vars(void **state)
{
	static const struct spec_var_override vars[] = {{"img", "ami-00000000"}};
	struct spec_options opts = {vars, 1};
	struct fx *f = *state;

	assert_int_equal(fx_load_opts(f,
				      HEAD "vars: {img: ami-11111111}\n"
					   "compute:\n"
					   "  g: {gpu: \"A100:8\", image: \"${var.img}\"}\n",
				      &opts),
			 0);
	assert_no_diags(&f->d);
	assert_string_equal(f->spec->groups[0].image, "ami-00000000");
}

static void test_var_override_sets_a_variable_vars_does_not_declare(void **state)
{
	static const struct spec_var_override vars[] = {{"img", "ami-00000000"}};
	struct spec_options opts = {vars, 1};
	struct fx *f = *state;

	assert_int_equal(fx_load_opts(f,
				      HEAD "compute:\n"
					   "  g: {gpu: \"A100:8\", image: \"${var.img}\"}\n",
				      &opts),
			 0);
	assert_no_diags(&f->d);
	assert_string_equal(f->spec->groups[0].image, "ami-00000000");
}

static void test_double_dollar_brace_is_a_literal_dollar_brace(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "tags: {note: \"cost $${HOME} $5\"}\n");

	assert_string_equal(s->tags[0].value, "cost ${HOME} $5");
}

static void test_unset_var_is_reported_at_its_dollar_brace(void **state)
{
	struct fx *f = *state;

	/* Line 5: `  owner: team-${var.who}`: the "${" is in column 15. */
	load_bad(f, HEAD "tags:\n"
			 "  owner: team-${var.who}\n");
	assert_error(&f->d, 5, 15, "tags.owner: variable 'who' is not set");
	assert_hint(&f->d, 5, 15, "declare it under vars: or pass --var who=VALUE");
}

static void test_unset_var_in_quotes_is_reported_at_its_dollar_brace(void **state)
{
	struct fx *f = *state;

	/* Line 5: `  owner: "x${var.who}"`: the "${" is in column 12. */
	load_bad(f, HEAD "tags:\n"
			 "  owner: \"x${var.who}\"\n");
	assert_error(&f->d, 5, 12, "tags.owner: variable 'who' is not set");
}

static void test_unset_var_after_an_escape_is_reported_at_its_dollar_brace(void **state)
{
	struct fx *f = *state;

	/* Line 5: `  owner: "\tx${var.who}"`: the escape is two characters wide. */
	load_bad(f, HEAD "tags:\n"
			 "  owner: \"\\tx${var.who}\"\n");
	assert_error(&f->d, 5, 14, "tags.owner: variable 'who' is not set");
}

static void test_unset_var_in_a_folded_plain_scalar_is_not_placed_past_the_line(void **state)
{
	/*
	 * The value spans lines 5 and 6, so no column on line 5 holds the "${":
	 * the error belongs at the "${" on line 6, or at the start of the value.
	 */
	struct fx *f = *state;
	size_t i;

	load_bad(f, HEAD "tags:\n"
			 "  owner: team\n"
			 "    ${var.who}\n");
	for (i = 0; i < f->d.n; i++) {
		if (strcmp(f->d.v[i].message, "tags.owner: variable 'who' is not set") != 0)
			continue;
		if ((f->d.v[i].line == 6 && f->d.v[i].col == 5) ||
		    (f->d.v[i].line == 5 && f->d.v[i].col == 10))
			return;
	}
	diags_dump(&f->d);
	fail_msg("expected the unset variable at 6:5 (its \"${\") or 5:10 (its value)");
}

static void test_unset_var_close_to_a_declared_one_suggests_it(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "vars: {image: x}\n"
			 "tags: {owner: \"${var.imgae}\"}\n");
	assert_error(&f->d, 5, 16, "tags.owner: variable 'imgae' is not set");
	assert_hint(&f->d, 5, 16, "did you mean 'image'?");
}

static void test_unterminated_dollar_brace_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "tags: {owner: \"a${var.x\"}\n");
	assert_error(&f->d, 4, 17, "tags.owner: unterminated '${' in 'a${var.x'");
	assert_hint(&f->d, 4, 17, "write ${var.NAME}, or $${ for a literal ${");
}

static void test_expression_other_than_var_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "tags: {owner: \"${env.USER}\"}\n");
	assert_error(&f->d, 4, 16, "tags.owner: unsupported expression '${env.USER}'");
	assert_hint(&f->d, 4, 16, "only ${var.NAME} is substituted; write $${ for a literal ${");
}

static void test_var_given_on_the_command_line_but_never_used_warns(void **state)
{
	static const struct spec_var_override vars[] = {{"extra", "1"}};
	struct spec_options opts = {vars, 1};
	struct fx *f = *state;

	assert_int_equal(fx_load_opts(f, HEAD, &opts), 0);
	assert_warning(&f->d, 0, 0,
		       "--var extra is not declared under vars: and not used by this spec");
	assert_diag_counts(&f->d, 0, 1);
}

static void test_var_given_on_the_command_line_and_declared_does_not_warn(void **state)
{
	static const struct spec_var_override vars[] = {{"extra", "1"}};
	struct spec_options opts = {vars, 1};
	struct fx *f = *state;

	assert_int_equal(fx_load_opts(f, HEAD "vars: {extra: 0}\n", &opts), 0);
	assert_no_diags(&f->d);
}

static void test_var_name_must_be_an_identifier(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "vars: {1x: a}\n");
	assert_error(
	    &f->d, 4, 8,
	    "variable name '1x' must be letters, digits and '_', not starting with a digit");
}

/* Type errors. */

static void test_int_that_is_not_a_number_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g: {gpu: \"A100:8\", count: many}\n");
	assert_error(&f->d, 5, 29, "compute.g.count must be a whole number, got 'many'");
}

static void test_int_out_of_range_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g: {gpu: \"A100:8\", count: 10001}\n");
	assert_error(&f->d, 5, 29, "compute.g.count must be between 0 and 10000, got 10001");
}

static void test_bool_written_as_yes_is_refused_with_a_hint(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g: {gpu: \"A100:8\", gang: yes}\n");
	assert_error(&f->d, 5, 28, "compute.g.gang must be true or false, got 'yes'");
	assert_hint(&f->d, 5, 28, "kiln reads only true and false as booleans");
}

static void test_enum_typo_is_refused_with_did_you_mean(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g: {gpu: \"A100:8\", market: spto}\n");
	assert_error(&f->d, 5, 30, "compute.g.market must be on-demand or spot, got 'spto'");
	assert_hint(&f->d, 5, 30, "did you mean 'spot'?");
}

static void test_enum_far_from_every_choice_lists_them_without_a_guess(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network: {fabric: infiniband}\n");
	assert_error(&f->d, 4, 19, "network.fabric must be none, ena or efa, got 'infiniband'");
	assert_null(f->d.v[0].hint);
}

static void test_duration_without_unit_is_refused_with_a_hint(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "ttl: 5\n");
	assert_error(&f->d, 4, 6, "ttl: '5' is not a duration");
	assert_hint(&f->d, 4, 6,
		    "write a number and a unit (s, m, h, d), like 45s, 90m, 72h or 30d");
}

static void test_ttl_of_zero_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "ttl: 0s\n");
	assert_error(&f->d, 4, 6, "ttl must be longer than 0s");
}

static void test_ttl_above_a_year_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "ttl: 366d\n");
	assert_error(&f->d, 4, 6, "ttl must be at most 365d");
}

static void test_idle_policy_loads_with_its_defaults(void **state)
{
	struct fx *f = *state;
	const struct spec *spec = load_clean(f, HEAD "idle: {gpu_below: 7.5%}\n");

	assert_true(spec->idle.set);
	assert_true(spec->idle.gpu_below == 7.5);
	assert_int_equal(spec->idle.for_seconds, 30 * 60);
}

static void test_idle_threshold_over_100_percent_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "idle: {gpu_below: 150%}\n");
	assert_error(&f->d, 4, 19, "idle.gpu_below must be at most 100%, not 150%");
}

static void test_idle_window_shorter_than_the_metric_period_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "idle: {for: 30s}\n");
	assert_error(&f->d, 4, 13,
		     "idle.for 30s is shorter than the metric period (1m): utilization is sampled "
		     "once a minute");
	assert_hint(&f->d, 4, 13, "write 1m or more; 30m is usual");
}

static void test_budget_that_is_not_a_number_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "budget: {max_hourly_usd: lots}\n");
	assert_error(&f->d, 4, 26, "budget.max_hourly_usd must be a number, got 'lots'");
}

static void test_budget_in_hex_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "budget: {max_hourly_usd: 0x10}\n");
	assert_error(&f->d, 4, 26, "budget.max_hourly_usd must be a number, got '0x10'");
}

static void test_tag_with_no_value_suggests_an_empty_string(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "tags:\n"
			 "  team:\n");
	assert_error(&f->d, 5, 8, "tags.team has no value");
	assert_hint(&f->d, 5, 8, "write an empty value as \"\"");
}

static void test_tag_key_with_a_reserved_prefix_in_any_case_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "tags:\n"
			 "  Kiln:owner: me\n");
	assert_error(&f->d, 5, 3,
		     "tag key 'Kiln:owner' uses the reserved prefix kiln: (kiln sets those tags "
		     "itself)");
	assert_hint(&f->d, 5, 3, "name the key without kiln:, like 'owner'");
}

static void test_empty_sections_are_ignored(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "network:\n"
						       "compute:\n"
						       "storage:\n"
						       "iam:\n");

	assert_int_equal(s->ngroups + s->nstores + s->nroles, 0);
	assert_int_equal(s->broken, 0);
}

static void test_cidr_with_host_bits_suggests_the_network(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network: {cidr: 10.42.1.0/16}\n");
	assert_error(&f->d, 4, 17, "network.cidr: '10.42.1.0/16' has bits set past its /16 prefix");
	assert_hint(&f->d, 4, 17, "did you mean 10.42.0.0/16?");
}

static void test_cidr_without_prefix_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network: {cidr: 10.42.0.0}\n");
	assert_error(&f->d, 4, 17, "network.cidr: '10.42.0.0' is not an IPv4 CIDR block");
	assert_hint(&f->d, 4, 17, "write ADDRESS/PREFIX, like 10.42.0.0/16");
}

static void test_network_cidr_wider_than_16_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network: {cidr: 10.0.0.0/8}\n");
	assert_error(&f->d, 4, 17,
		     "network.cidr: the prefix of '10.0.0.0/8' must be between /16 and /28");
}

static void test_ingress_port_range_reversed_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network:\n"
			 "  ingress:\n"
			 "    - {port: 8100-8000, from: 0.0.0.0/0}\n");
	assert_error(&f->d, 6, 14,
		     "network.ingress[0].port: '8100-8000' is outside 1-65535 or reversed");
}

static void test_ingress_port_zero_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network:\n"
			 "  ingress:\n"
			 "    - {port: 0, from: 0.0.0.0/0}\n");
	assert_error(&f->d, 6, 14, "network.ingress[0].port: '0' is outside 1-65535 or reversed");
}

static void test_ingress_port_above_65535_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network:\n"
			 "  ingress:\n"
			 "    - {port: 1-65536, from: 0.0.0.0/0}\n");
	assert_error(&f->d, 6, 14,
		     "network.ingress[0].port: '1-65536' is outside 1-65535 or reversed");
}

static void test_ingress_port_that_is_a_name_is_refused_with_a_hint(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network:\n"
			 "  ingress:\n"
			 "    - {port: ssh, from: 0.0.0.0/0}\n");
	assert_error(&f->d, 6, 14, "network.ingress[0].port must be a port or a range, got 'ssh'");
	assert_hint(&f->d, 6, 14, "write a number like 22 or a range like 8000-8100");
}

static void test_ingress_port_with_open_range_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network:\n"
			 "  ingress:\n"
			 "    - {port: 22-, from: 0.0.0.0/0}\n");
	assert_error(&f->d, 6, 14, "network.ingress[0].port must be a port or a range, got '22-'");
}

static void test_ingress_rule_without_from_names_the_rule(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "network:\n"
			 "  ingress:\n"
			 "    - {port: 22}\n");
	assert_error(&f->d, 6, 7, "missing required key 'from' in network.ingress[0]");
}

static void test_required_key_with_no_value_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 1\n"
		    "cluster:\n"
		    "provider: {name: sim}\n");
	assert_error(&f->d, 2, 9, "cluster has no value");
	assert_hint(&f->d, 2, 9, "give it a value");
}

static void test_optional_key_with_no_value_may_be_removed(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "ttl: ~\n");
	assert_error(&f->d, 4, 6, "ttl has no value");
	assert_hint(&f->d, 4, 6, "give it a value, or remove the key");
}

static void test_list_where_a_value_belongs_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 1\n"
		    "cluster: [a, b]\n"
		    "provider: {name: sim}\n");
	assert_error(&f->d, 2, 10, "cluster must be a single value, got a list");
}

static void test_section_that_is_not_a_mapping_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute: [a]\n");
	assert_error(&f->d, 4, 10, "compute must be a mapping, got a list");
	assert_true(f->spec->broken & SPEC_BROKEN_COMPUTE);
}

static void test_group_name_with_capitals_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  Trainers: {gpu: \"A100:8\"}\n");
	assert_error(&f->d, 5, 3,
		     "compute group name 'Trainers' must be 1 to 32 characters of a-z, 0-9 and "
		     "'-', not starting or ending with '-'");
}

/* Missing required keys. */

static void test_missing_cluster_is_refused_naming_the_key(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 1\n"
		    "provider: {name: sim}\n");
	assert_error(&f->d, 1, 1, "missing required key 'cluster'");
}

static void test_missing_provider_name_is_refused_naming_the_section(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 1\n"
		    "cluster: t\n"
		    "provider: {region: x}\n");
	assert_error(&f->d, 3, 11, "missing required key 'name' in provider");
}

static void test_missing_store_tier_is_refused_naming_the_store(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  data: {versioning: true}\n");
	assert_error(&f->d, 5, 9, "missing required key 'tier' in storage.data");
}

static void test_missing_provider_is_refused_with_a_hint(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 1\n"
		    "cluster: t\n");
	assert_error(&f->d, 1, 1, "missing required key 'provider'");
	assert_hint(&f->d, 1, 1, "add `provider: {name: sim}` to try kiln without a cloud account");
}

/* Unknown keys. */

static void test_unknown_top_level_key_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "clustr: x\n");
	assert_error(&f->d, 4, 1, "unknown key 'clustr' at the top level");
	assert_hint(&f->d, 4, 1, "did you mean 'cluster'?");
}

static void test_unknown_group_key_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g: {gpus: \"A100:8\", instance_type: m7i.xlarge}\n");
	assert_error(&f->d, 5, 7, "unknown key 'gpus' in compute group 'g'");
	assert_hint(&f->d, 5, 7, "did you mean 'gpu'?");
}

static void test_unknown_key_far_from_every_key_lists_them(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "budget: {dollars: 5}\n");
	assert_error(&f->d, 4, 10, "unknown key 'dollars' in budget");
	assert_hint(&f->d, 4, 10, "expected max_hourly_usd or max_upfront_usd");
}

/* Stores. */

static void test_store_key_of_another_tier_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  data: {tier: object, capacity_gb: 1200}\n");
	assert_error(&f->d, 5, 24, "storage.data.capacity_gb does not apply to an object store");
	assert_hint(&f->d, 5, 24, "capacity_gb applies to lustre stores");
}

static void test_store_key_of_another_tier_names_every_tier_it_applies_to(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  data: {tier: object, mount: /data}\n");
	assert_error(&f->d, 5, 24, "storage.data.mount does not apply to an object store");
	assert_hint(&f->d, 5, 24, "mount applies to lustre and nfs and local stores");
}

static void test_store_key_of_another_tier_uses_an_before_nfs(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  home: {tier: nfs, versioning: true}\n");
	assert_error(&f->d, 5, 21, "storage.home.versioning does not apply to an nfs store");
	assert_hint(&f->d, 5, 21, "versioning applies to object stores");
}

static void test_unknown_store_key_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  data: {tier: object, versoning: true}\n");
	assert_error(&f->d, 5, 24, "unknown key 'versoning' in store 'data'");
	assert_hint(&f->d, 5, 24, "did you mean 'versioning'?");
}

static void test_lustre_capacity_off_the_steps_suggests_the_nearest(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  scratch: {tier: lustre, capacity_gb: 3000}\n");
	assert_error(&f->d, 5, 40,
		     "storage.scratch.capacity_gb must be 1200 or a multiple of 2400, got 3000");
	assert_hint(&f->d, 5, 40, "Lustre (PERSISTENT_2) sizes near it: 2400 or 4800");
}

static void test_lustre_capacity_below_2400_suggests_1200_or_2400(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  scratch: {tier: lustre, capacity_gb: 1000}\n");
	assert_error(&f->d, 5, 40,
		     "storage.scratch.capacity_gb must be 1200 or a multiple of 2400, got 1000");
	assert_hint(&f->d, 5, 40, "Lustre (PERSISTENT_2) sizes near it: 1200 or 2400");
}

static void test_object_expiry_must_be_whole_days(void **state)
{
	struct fx *f = *state;

	load_bad(f,
		 HEAD "storage:\n"
		      "  data: {tier: object, versioning: true, expire_noncurrent_after: 36h}\n");
	assert_error(&f->d, 5, 67,
		     "storage.data.expire_noncurrent_after must be a whole number of days");
}

static void test_mount_over_a_system_directory_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "storage:\n"
			 "  home: {tier: nfs, mount: /usr/share}\n");
	assert_error(&f->d, 5, 28,
		     "storage.home.mount: '/usr/share' would hide the system directory /usr");
}

/* GPUs and instance types. */

static void test_gpu_model_is_upper_cased(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "compute:\n"
						       "  g:\n"
						       "    gpu: a100:4\n");

	assert_string_equal(s->groups[0].gpu_model, "A100");
	assert_int_equal(s->groups[0].gpu_count, 4);
}

static void test_group_without_gang_is_a_gang_on_a_fabric(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "network: {fabric: ena}\n"
						       "compute:\n"
						       "  g: {gpu: \"H100:8\"}\n");

	assert_true(s->groups[0].gang);
	assert_false(s->groups[0].gang_set);
}

static void test_group_without_gang_is_not_a_gang_without_a_fabric(void **state)
{
	const struct spec *s = load_clean(*state, HEAD "compute:\n"
						       "  g: {gpu: \"H100:8\"}\n");

	assert_false(s->groups[0].gang);
}

static void test_gpu_without_count_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    gpu: H100\n");
	assert_error(&f->d, 6, 10, "compute.g.gpu must be MODEL:COUNT, like H100:8, got 'H100'");
	assert_hint(&f->d, 6, 10, "or name the machine with instance_type: instead");
}

static void test_gpu_model_with_punctuation_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    gpu: H-100:8\n");
	assert_error(&f->d, 6, 10, "compute.g.gpu must be MODEL:COUNT, like H100:8, got 'H-100:8'");
}

static void test_gpu_count_of_zero_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    gpu: H100:0\n");
	assert_error(&f->d, 6, 10, "compute.g.gpu: GPU count must be between 1 and 16, got '0'");
}

static void test_gpu_count_above_16_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    gpu: H100:17\n");
	assert_error(&f->d, 6, 10, "compute.g.gpu: GPU count must be between 1 and 16, got '17'");
}

static void test_gpu_and_instance_type_together_are_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    gpu: H100:8\n"
			 "    instance_type: p5.48xlarge\n");
	assert_error(&f->d, 7, 5, "compute.g sets both gpu and instance_type");
	assert_hint(&f->d, 7, 5,
		    "keep one: gpu picks the cheapest instance type that has those GPUs");
	assert_int_equal(f->d.errors, 1);
}

static void test_group_without_gpu_or_instance_type_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    count: 2\n");
	assert_error(&f->d, 5, 3, "compute.g needs gpu or instance_type");
	assert_hint(&f->d, 5, 3, "add gpu: MODEL:COUNT (like H100:8) or instance_type: NAME");
}

static void test_instance_type_in_capitals_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "compute:\n"
			 "  g:\n"
			 "    instance_type: P5.48xlarge\n");
	assert_error(&f->d, 6, 20,
		     "compute.g.instance_type: 'P5.48xlarge' is not an instance type name");
}

/* Format version and the document as a whole. */

static void test_missing_format_version_is_refused_with_a_hint(void **state)
{
	struct fx *f = *state;

	load_bad(f, "cluster: t\n"
		    "provider: {name: sim}\n");
	assert_error(&f->d, 1, 1, "missing required key 'kiln' (the spec format)");
	assert_hint(&f->d, 1, 1, "add `kiln: 1` as the first line");
}

static void test_future_format_version_is_refused_with_a_hint(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 2\n"
		    "cluster: t\n"
		    "provider: {name: sim}\n");
	assert_error(&f->d, 1, 7, "spec format 2 is newer than this kiln reads (format 1)");
	assert_hint(&f->d, 1, 7, "upgrade kiln to read this spec");
}

static void test_empty_spec_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, "");
	assert_error(&f->d, 1, 1, "the spec is empty");
	assert_hint(&f->d, 1, 1, "start from a template: kiln init --list shows them");
	assert_int_equal(f->d.n, 1);
}

static void test_spec_of_only_comments_is_empty(void **state)
{
	struct fx *f = *state;

	load_bad(f, "# kiln: 1\n"
		    "\n");
	assert_error(&f->d, 1, 1, "the spec is empty");
}

static void test_root_that_is_a_list_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, "- kiln: 1\n");
	assert_error(&f->d, 1, 1, "a spec must be a mapping of keys, got a list");
	assert_int_equal(f->d.n, 1);
}

static void test_root_that_is_a_string_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, "hello\n");
	assert_error(&f->d, 1, 1, "a spec must be a mapping of keys, got a string");
}

static void test_utf16_spec_is_refused_with_a_hint(void **state)
{
	static const char buf[] = "\xff\xfek\0i\0l\0n\0:\0 \0001\0\n\0";
	struct fx *f = *state;

	load_bytes_refused(f, buf, sizeof(buf) - 1);
	assert_error(&f->d, 1, 1, "the spec is UTF-16; kiln reads UTF-8 only");
	assert_hint(&f->d, 1, 1, "convert it: iconv -f UTF-16 -t UTF-8");
}

static void test_invalid_utf8_is_reported_at_its_line_and_column(void **state)
{
	static const char buf[] = "kiln: 1\n"
				  "cluster: t\xff\n";
	struct fx *f = *state;

	load_bytes_refused(f, buf, sizeof(buf) - 1);
	assert_error(&f->d, 2, 11, "the spec is not valid UTF-8 (byte 0xff)");
	assert_hint(&f->d, 2, 11, "save the file as UTF-8");
}

static void test_invalid_utf8_column_counts_characters(void **state)
{
	static const char buf[] = "kiln: 1\n"
				  "tags: {k: \xc3\xa9\xc3\xa9\xc0\xaf}\n";
	struct fx *f = *state;

	load_bytes_refused(f, buf, sizeof(buf) - 1);
	assert_error(&f->d, 2, 13, "the spec is not valid UTF-8 (byte 0xc0)");
}

static void test_nul_byte_is_reported_at_its_line_and_column(void **state)
{
	static const char buf[] = "kiln: 1\n"
				  "cluster: a\0b\n";
	struct fx *f = *state;

	load_bytes_refused(f, buf, sizeof(buf) - 1);
	assert_error(&f->d, 2, 11, "the spec contains a NUL byte; is it a text file?");
}

/* A spec of exactly size bytes: HEAD padded with a comment line. */
static const char *spec_of_size(struct fx *f, size_t size)
{
	size_t head = strlen(HEAD);

	f->text = xmalloc(size + 1);
	memcpy(f->text, HEAD, head);
	f->text[head] = '#';
	memset(f->text + head + 1, 'x', size - head - 2);
	f->text[size - 1] = '\n';
	f->text[size] = '\0';
	return f->text;
}

static void test_spec_of_exactly_one_mib_is_read(void **state)
{
	struct fx *f = *state;

	assert_int_equal(fx_load(f, spec_of_size(f, SPEC_MAX_BYTES)), 0);
	assert_no_diags(&f->d);
}

static void test_spec_larger_than_one_mib_is_refused(void **state)
{
	struct fx *f = *state;

	load_bytes_refused(f, spec_of_size(f, SPEC_MAX_BYTES + 1), SPEC_MAX_BYTES + 1);
	assert_error(&f->d, 0, 0, "the spec is larger than 1 MiB, the most kiln reads");
}

static void test_spec_load_file_names_a_missing_file(void **state)
{
	struct fx *f = *state;

	assert_int_equal(spec_load_file(&f->spec, "/nonexistent/kiln.yaml", NULL, &f->d), -1);
	assert_null(f->spec);
	assert_error(&f->d, 0, 0, "cannot read /nonexistent/kiln.yaml: No such file or directory");
	assert_string_equal(f->d.v[0].file, "/nonexistent/kiln.yaml");
}

static void test_duplicate_key_fails_the_load(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "ttl: 1h\n"
			 "ttl: 2h\n");
	assert_error(&f->d, 5, 1, "duplicate key 'ttl' (first defined at 4:1)");
	assert_int_equal(f->d.n, 1);
}

static void test_utf8_byte_order_mark_is_accepted(void **state)
{
	const struct spec *s = load_clean(*state, "\xef\xbb\xbf" HEAD);

	assert_string_equal(s->cluster, "t");
}

static void test_crlf_line_endings_keep_positions(void **state)
{
	struct fx *f = *state;

	load_bad(f, "kiln: 1\r\n"
		    "cluster: t\r\n"
		    "provider: {name: sim}\r\n"
		    "ttl: 5\r\n");
	assert_error(&f->d, 4, 6, "ttl: '5' is not a duration");
}

static void test_yaml_error_leaves_no_spec(void **state)
{
	struct fx *f = *state;

	load_bytes_refused(f, "kiln: [1\n", 9);
	assert_true(str_starts_with(f->d.v[0].message, "invalid YAML: "));
}

/* ---- waive ---- */

static void test_waivers_are_loaded_with_their_positions(void **state)
{
	struct fx *f = *state;
	const struct spec *spec;

	spec =
	    load_clean(f, HEAD "waive:\n"
			       "  - {rule: KILN-NET-002, reason: \"bastion\", until: 2027-01-31,\n"
			       "     address: \"network.ingress[0]\"}\n"
			       "  - {rule: KILN-GPU-001}\n");
	assert_int_equal(spec->nwaivers, 2);
	assert_string_equal(spec->waivers[0].rule, "KILN-NET-002");
	assert_string_equal(spec->waivers[0].reason, "bastion");
	assert_string_equal(spec->waivers[0].until, "2027-01-31");
	assert_string_equal(spec->waivers[0].address, "network.ingress[0]");
	assert_int_equal(spec->waivers[0].node->line, 5);
	assert_null(spec->waivers[1].reason);
	assert_null(spec->waivers[1].until);
	assert_null(spec->waivers[1].address);
}

static void test_waive_that_is_not_a_list_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "waive: {rule: KILN-NET-002}\n");
	assert_error(&f->d, 4, 8, "waive must be a list of waivers, got a mapping");
	assert_hint(&f->d, 4, 8,
		    "write waive: [{rule: KILN-NET-002, reason: \"...\", until: 2027-01-31}]");
}

static void test_waiver_that_is_not_a_mapping_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "waive:\n  - KILN-NET-002\n");
	assert_error(&f->d, 5, 5, "waive[0] must be a mapping, got a string");
}

static void test_waiver_without_rule_is_refused(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "waive:\n  - {reason: r}\n");
	assert_error(&f->d, 5, 5, "missing required key 'rule' in waive[0]");
	assert_int_equal(f->spec->nwaivers, 0);
}

static void test_waiver_with_an_unknown_key_suggests_the_closest(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "waive:\n  - {rule: KILN-NET-002, reson: r}\n");
	assert_error(&f->d, 5, 26, "unknown key 'reson' in a waiver");
	assert_hint(&f->d, 5, 26, "did you mean 'reason'?");
}

static void test_waiver_until_must_be_a_real_date(void **state)
{
	struct fx *f = *state;

	load_bad(f, HEAD "waive:\n"
			 "  - {rule: KILN-NET-002, reason: r, until: 2027-02-30}\n"
			 "  - {rule: KILN-NET-002, reason: r, until: 31/01/2027}\n");
	assert_error(&f->d, 5, 44,
		     "waive[0].until must be a date written YYYY-MM-DD, got '2027-02-30'");
	assert_hint(&f->d, 5, 44,
		    "for example until: 2027-01-31 (the waiver holds through that day, UTC)");
	assert_error(&f->d, 6, 44,
		     "waive[1].until must be a date written YYYY-MM-DD, got '31/01/2027'");
}

static void test_waiver_until_on_a_leap_day_is_accepted(void **state)
{
	struct fx *f = *state;

	load_clean(f, HEAD "waive:\n  - {rule: KILN-NET-002, reason: r, until: 2028-02-29}\n");
	assert_string_equal(f->spec->waivers[0].until, "2028-02-29");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_full_spec_loads_without_diagnostics),
	    kiln_test(test_full_spec_top_level_values),
	    kiln_test(test_full_spec_provider),
	    kiln_test(test_full_spec_network),
	    kiln_test(test_full_spec_compute_group_with_every_key),
	    kiln_test(test_full_spec_compute_group_defaults),
	    kiln_test(test_full_spec_object_stores),
	    kiln_test(test_full_spec_lustre_stores),
	    kiln_test(test_full_spec_nfs_store_mounts_under_mnt_by_default),
	    kiln_test(test_full_spec_roles),
	    kiln_test(test_sim_provider_defaults_to_region_sim_1_and_zone_sim_1a),
	    kiln_test(test_sim_zone_follows_a_given_region),
	    kiln_test(test_network_defaults_to_10_0_0_0_16_without_fabric),
	    kiln_test(test_lustre_store_without_mount_mounts_under_mnt),
	    kiln_test(test_role_with_no_value_is_a_role_without_stores),
	    kiln_test(test_allow_statements_load_as_written),
	    kiln_test(test_allow_that_is_not_a_list_is_refused),
	    kiln_test(test_allow_statement_that_is_not_a_mapping_is_refused),
	    kiln_test(test_allow_statement_with_an_unknown_key_suggests_the_known_one),
	    kiln_test(test_allow_statement_without_actions_is_refused),
	    kiln_test(test_allow_actions_that_are_a_string_or_empty_are_refused),
	    kiln_test(test_allow_action_without_a_service_is_refused),
	    kiln_test(test_allow_resource_that_is_not_an_arn_names_the_part_at_fault),
	    kiln_test(test_allow_sid_must_be_alphanumeric_and_unique),
	    kiln_test(test_allow_resource_with_an_unset_var_is_reported_once),
	    kiln_test(test_var_is_substituted_from_vars),
	    kiln_test(test_var_is_substituted_inside_a_longer_string),
	    kiln_test(test_var_override_wins_over_vars),
	    kiln_test(test_var_override_sets_a_variable_vars_does_not_declare),
	    kiln_test(test_double_dollar_brace_is_a_literal_dollar_brace),
	    kiln_test(test_unset_var_is_reported_at_its_dollar_brace),
	    kiln_test(test_unset_var_in_quotes_is_reported_at_its_dollar_brace),
	    kiln_test(test_unset_var_after_an_escape_is_reported_at_its_dollar_brace),
	    kiln_test(test_unset_var_in_a_folded_plain_scalar_is_not_placed_past_the_line),
	    kiln_test(test_unset_var_close_to_a_declared_one_suggests_it),
	    kiln_test(test_unterminated_dollar_brace_is_refused),
	    kiln_test(test_expression_other_than_var_is_refused),
	    kiln_test(test_var_given_on_the_command_line_but_never_used_warns),
	    kiln_test(test_var_given_on_the_command_line_and_declared_does_not_warn),
	    kiln_test(test_var_name_must_be_an_identifier),
	    kiln_test(test_int_that_is_not_a_number_is_refused),
	    kiln_test(test_int_out_of_range_is_refused),
	    kiln_test(test_bool_written_as_yes_is_refused_with_a_hint),
	    kiln_test(test_enum_typo_is_refused_with_did_you_mean),
	    kiln_test(test_enum_far_from_every_choice_lists_them_without_a_guess),
	    kiln_test(test_duration_without_unit_is_refused_with_a_hint),
	    kiln_test(test_ttl_of_zero_is_refused),
	    kiln_test(test_ttl_above_a_year_is_refused),
	    kiln_test(test_idle_policy_loads_with_its_defaults),
	    kiln_test(test_idle_threshold_over_100_percent_is_refused),
	    kiln_test(test_idle_window_shorter_than_the_metric_period_is_refused),
	    kiln_test(test_budget_that_is_not_a_number_is_refused),
	    kiln_test(test_budget_in_hex_is_refused),
	    kiln_test(test_tag_with_no_value_suggests_an_empty_string),
	    kiln_test(test_tag_key_with_a_reserved_prefix_in_any_case_is_refused),
	    kiln_test(test_empty_sections_are_ignored),
	    kiln_test(test_cidr_with_host_bits_suggests_the_network),
	    kiln_test(test_cidr_without_prefix_is_refused),
	    kiln_test(test_network_cidr_wider_than_16_is_refused),
	    kiln_test(test_ingress_port_range_reversed_is_refused),
	    kiln_test(test_ingress_port_zero_is_refused),
	    kiln_test(test_ingress_port_above_65535_is_refused),
	    kiln_test(test_ingress_port_that_is_a_name_is_refused_with_a_hint),
	    kiln_test(test_ingress_port_with_open_range_is_refused),
	    kiln_test(test_ingress_rule_without_from_names_the_rule),
	    kiln_test(test_required_key_with_no_value_is_refused),
	    kiln_test(test_optional_key_with_no_value_may_be_removed),
	    kiln_test(test_list_where_a_value_belongs_is_refused),
	    kiln_test(test_section_that_is_not_a_mapping_is_refused),
	    kiln_test(test_group_name_with_capitals_is_refused),
	    kiln_test(test_missing_cluster_is_refused_naming_the_key),
	    kiln_test(test_missing_provider_name_is_refused_naming_the_section),
	    kiln_test(test_missing_store_tier_is_refused_naming_the_store),
	    kiln_test(test_missing_provider_is_refused_with_a_hint),
	    kiln_test(test_unknown_top_level_key_suggests_the_closest),
	    kiln_test(test_unknown_group_key_suggests_the_closest),
	    kiln_test(test_unknown_key_far_from_every_key_lists_them),
	    kiln_test(test_store_key_of_another_tier_is_refused),
	    kiln_test(test_store_key_of_another_tier_names_every_tier_it_applies_to),
	    kiln_test(test_store_key_of_another_tier_uses_an_before_nfs),
	    kiln_test(test_unknown_store_key_suggests_the_closest),
	    kiln_test(test_lustre_capacity_off_the_steps_suggests_the_nearest),
	    kiln_test(test_lustre_capacity_below_2400_suggests_1200_or_2400),
	    kiln_test(test_object_expiry_must_be_whole_days),
	    kiln_test(test_mount_over_a_system_directory_is_refused),
	    kiln_test(test_gpu_model_is_upper_cased),
	    kiln_test(test_group_without_gang_is_a_gang_on_a_fabric),
	    kiln_test(test_group_without_gang_is_not_a_gang_without_a_fabric),
	    kiln_test(test_gpu_without_count_is_refused),
	    kiln_test(test_gpu_model_with_punctuation_is_refused),
	    kiln_test(test_gpu_count_of_zero_is_refused),
	    kiln_test(test_gpu_count_above_16_is_refused),
	    kiln_test(test_gpu_and_instance_type_together_are_refused),
	    kiln_test(test_group_without_gpu_or_instance_type_is_refused),
	    kiln_test(test_instance_type_in_capitals_is_refused),
	    kiln_test(test_missing_format_version_is_refused_with_a_hint),
	    kiln_test(test_future_format_version_is_refused_with_a_hint),
	    kiln_test(test_empty_spec_is_refused),
	    kiln_test(test_spec_of_only_comments_is_empty),
	    kiln_test(test_root_that_is_a_list_is_refused),
	    kiln_test(test_root_that_is_a_string_is_refused),
	    kiln_test(test_utf16_spec_is_refused_with_a_hint),
	    kiln_test(test_invalid_utf8_is_reported_at_its_line_and_column),
	    kiln_test(test_invalid_utf8_column_counts_characters),
	    kiln_test(test_nul_byte_is_reported_at_its_line_and_column),
	    kiln_test(test_spec_of_exactly_one_mib_is_read),
	    kiln_test(test_spec_larger_than_one_mib_is_refused),
	    kiln_test(test_spec_load_file_names_a_missing_file),
	    kiln_test(test_duplicate_key_fails_the_load),
	    kiln_test(test_utf8_byte_order_mark_is_accepted),
	    kiln_test(test_crlf_line_endings_keep_positions),
	    kiln_test(test_yaml_error_leaves_no_spec),
	    kiln_test(test_waivers_are_loaded_with_their_positions),
	    kiln_test(test_waive_that_is_not_a_list_is_refused),
	    kiln_test(test_waiver_that_is_not_a_mapping_is_refused),
	    kiln_test(test_waiver_without_rule_is_refused),
	    kiln_test(test_waiver_with_an_unknown_key_suggests_the_closest),
	    kiln_test(test_waiver_until_must_be_a_real_date),
	    kiln_test(test_waiver_until_on_a_leap_day_is_accepted),
	    kiln_test(test_the_index_finds_what_a_scan_finds),
	    kiln_test(test_a_stale_index_is_never_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
