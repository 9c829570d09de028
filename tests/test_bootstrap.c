/*
 * test_bootstrap.c - the boot configuration: the spec's bootstrap:, health:
 * and local stores (shape and messages), and the user data generator
 * (providers/bootstrap.c): what a document holds, placeholders, the size
 * limit. The documents are checked by cloud-init and shellcheck, and their
 * script run, in tests/e2e/boot.sh.
 */
#include "testutil.h"

#include "bootstrap.h"
#include "catalog_aws.h"
#include "crypt.h"
#include "expand.h"

#define HEAD                                                                                       \
	"kiln: 1\n"                                                                                \
	"cluster: t\n"                                                                             \
	"provider: {name: sim}\n"

/* A fabric cluster with all three tiers, steps at both levels, a login group. */
static const char cluster[] =
    "kiln: 1\n"
    "cluster: t\n"
    "provider: {name: sim}\n"
    "network: {cidr: 10.0.0.0/16, fabric: efa}\n"
    "bootstrap:\n"
    "  - echo first\n"
    "compute:\n"
    "  trainers:\n"
    "    gpu: H100:8\n"
    "    count: 2\n"
    "    role: trainer\n"
    "    bootstrap:\n"
    "      - {file: /etc/team.conf, content: \"x=1\\n\", mode: \"0600\"}\n"
    "      - {run: \"echo second\"}\n"
    "  login:\n"
    "    instance_type: m7i.xlarge\n"
    "    role: login\n"
    "    health: {gpu: none}\n"
    "storage:\n"
    "  scratch: {tier: lustre, capacity_gb: 1200, mount: /fsx}\n"
    "  home: {tier: nfs, mount: /home}\n"
    "  nvme: {tier: local, mount: /scratch, groups: [trainers]}\n"
    "iam:\n"
    "  roles:\n"
    "    trainer: {write: [scratch, home]}\n"
    "    login: {read: [home]}\n";

static void source_placeholder(const struct spec *spec, const struct spec_store *s, bool zoned,
			       char **source, char **find, char **why)
{
	char *key = xasprintf("%s:%s", spec_tier_name(s->tier), s->name);

	(void)spec;
	if (zoned && s->tier == TIER_LUSTRE) {
		*find = xstrdup("echo found@tcp:/x");
	} else {
		*source = bootstrap_placeholder(key);
		*why = xstrdup("a test source");
	}
	free(key);
}

static const struct boot_cloud cloud = {"printf '%s\\n' \"$1\" >/tmp/report", source_placeholder};

/* The document of group name in spec (caller frees). */
static char *doc_of(const struct spec *spec, const char *name, bool zoned, char **note)
{
	const struct spec_group *g = spec_group_find(spec, name);
	const struct catalog_type *t;
	struct kiln_error err = {{0}, {0}};
	char *why = NULL, *doc;
	int efa;

	assert_non_null(g);
	assert_int_equal(expand_group_type("", &catalog_aws, spec, g, &t, &why, &err), 0);
	free(why);
	efa = spec->network.fabric == FABRIC_EFA && t->efa ? t->efa_interfaces : 0;
	doc = bootstrap_group_document(spec, g, name, t, efa, &cloud, zoned, note, &err);
	assert_non_null(doc);
	return doc;
}

static void assert_has(const char *doc, const char *part)
{
	if (!strstr(doc, part))
		fail_msg("document lacks: %s\n---\n%s", part, doc);
}

static void assert_lacks(const char *doc, const char *part)
{
	if (strstr(doc, part))
		fail_msg("document has: %s", part);
}

/* The document of group name with cloud c (caller frees). */
static char *doc_with(const struct spec *spec, const char *name, const struct boot_cloud *c)
{
	const struct spec_group *g = spec_group_find(spec, name);
	const struct catalog_type *t;
	struct kiln_error err = {{0}, {0}};
	char *why = NULL, *doc;

	assert_int_equal(expand_group_type("", &catalog_aws, spec, g, &t, &why, &err), 0);
	free(why);
	doc = bootstrap_group_document(spec, g, name, t, 0, c, false, NULL, &err);
	assert_non_null(doc);
	return doc;
}

static void test_bootstrap_loads_steps_in_order_with_their_kinds(void **state)
{
	struct fx *f = *state;
	const struct spec_group *g;

	assert_int_equal(fx_validate(f, cluster), 0);
	assert_int_equal(f->spec->nbootstrap, 1);
	assert_string_equal(f->spec->bootstrap[0].run, "echo first");
	g = spec_group_find(f->spec, "trainers");
	assert_int_equal(g->nbootstrap, 2);
	assert_int_equal(g->bootstrap[0].kind, STEP_FILE);
	assert_string_equal(g->bootstrap[0].path, "/etc/team.conf");
	assert_string_equal(g->bootstrap[0].mode, "0600");
	assert_int_equal(g->bootstrap[1].kind, STEP_RUN);
	assert_string_equal(g->bootstrap[1].run, "echo second");
	assert_int_equal(g->health_gpu, HEALTH_GPU_QUICK);
	assert_int_equal(spec_group_find(f->spec, "login")->health_gpu, HEALTH_GPU_NONE);
}

static void test_bootstrap_entry_of_the_wrong_type_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, fx_load(f, HEAD "bootstrap:\n"
							 "  - echo ok\n"
							 "  - [a, list]\n"));
	assert_error(&f->d, 6, 5, "bootstrap[1] must be a command or a mapping, got a list");
	assert_hint(&f->d, 6, 5,
		    "write a command as a string, {run: CMD}, or {file: PATH, content: TEXT, "
		    "mode: \"0644\"}");
}

static void test_bootstrap_that_is_not_a_list_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, fx_load(f, HEAD "bootstrap: echo hi\n"));
	assert_error(&f->d, 4, 12, "bootstrap must be a list of steps, got a string");
}

static void test_bootstrap_file_needs_an_absolute_path(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d,
				  fx_load(f, HEAD "bootstrap:\n  - {file: etc/x, content: hi}\n"));
	assert_error(&f->d, 5, 12, "bootstrap[0].file: 'etc/x' is not an absolute path");
}

static void test_health_gpu_must_be_quick_or_none(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, fx_load(f, HEAD "compute:\n"
							 "  g:\n"
							 "    instance_type: p5.48xlarge\n"
							 "    health: {gpu: deep}\n"));
	assert_error(&f->d, 7, 19, "compute.g.health.gpu must be quick or none, got 'deep'");
}

static void test_local_store_on_a_type_without_instance_store_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d,
				  fx_validate(f, HEAD "compute:\n"
						      "  login: {instance_type: m7i.xlarge}\n"
						      "storage:\n"
						      "  nvme: {tier: local, mount: /scratch}\n"));
	assert_error(&f->d, 7, 3,
		     "storage.nvme: compute.login runs on m7i.xlarge, which has no "
		     "instance-store NVMe for a local store");
	assert_hint(&f->d, 7, 3,
		    "list the groups on types with one, like groups: [GROUP]; types with one: "
		    "p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p4d.24xlarge, p4de.24xlarge, "
		    "p3dn.24xlarge and 26 more");
}

static void test_local_store_takes_no_deletion(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d, fx_load(f, HEAD "storage:\n  nvme: {tier: local, deletion: delete}\n"));
	assert_error(&f->d, 5, 23, "storage.nvme.deletion does not apply to a local store");
}

static void test_local_store_is_reached_by_no_role(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d,
				  fx_validate(f, HEAD "compute:\n"
						      "  t: {gpu: H100:8, role: r}\n"
						      "storage:\n"
						      "  nvme: {tier: local}\n"
						      "iam: {roles: {r: {read: [nvme]}}}\n"));
	assert_error(&f->d, 8, 26,
		     "iam.roles.r.read: 'nvme' is a local store, the nodes' own disks, which no "
		     "role reaches");
}

static void test_document_mounts_what_the_role_reaches_with_retries(void **state)
{
	struct fx *f = *state;
	char *doc, *note = NULL;

	assert_int_equal(fx_validate(f, cluster), 0);
	doc = doc_of(f->spec, "trainers", false, &note);
	assert_has(doc, "#cloud-config\n");
	assert_has(doc, "mount_fs 'scratch' '{{kiln:lustre:scratch}}' '/fsx' 'lustre' "
			"'relatime,flock,_netdev,nofail'\n");
	assert_has(doc, "mount_fs 'home' '{{kiln:nfs:home}}' '/home' 'nfs4' "
			"'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,"
			"noresvport,_netdev,nofail'\n");
	assert_has(doc, "local_nvme '/scratch'\n");
	assert_has(doc, "'Amazon EC2 NVMe Instance Storage'");
	assert_string_equal(note, "scratch at /fsx (a test source); home at /home (a test "
				  "source); local NVMe nvme at /scratch (RAID 0 of the instance "
				  "store; its data is lost when a node stops or is replaced)");
	free(note);
	free(doc);
	/* login's role reads home only, and the local store is not on it. */
	doc = doc_of(f->spec, "login", false, NULL);
	assert_has(doc, "mount_fs 'home'");
	assert_lacks(doc, "mount_fs 'scratch'");
	assert_lacks(doc, "local_nvme");
	free(doc);
}

static void test_document_runs_steps_top_level_first_in_order(void **state)
{
	struct fx *f = *state;
	char *doc;
	const char *a, *b, *c, *h;

	assert_int_equal(fx_validate(f, cluster), 0);
	doc = doc_of(f->spec, "trainers", false, NULL);
	a = strstr(doc, "echo first");
	b = strstr(doc, "/etc/team.conf");
	c = strstr(doc, "echo second");
	h = strstr(doc, "# Health:");
	assert_non_null(a);
	assert_true(a < b && b < c && c < h);
	assert_has(doc, "      run_step 1 'bootstrap[0]' 'echo first'\n"
			"      put_file 2 'compute.trainers.bootstrap[0]' '/etc/team.conf' 0600\n"
			"      run_step 3 'compute.trainers.bootstrap[1]' 'echo second'\n");
	/* Each step's text is its own encoded file, the number its script uses. */
	assert_has(doc, "  - path: /var/lib/kiln/step-1.sh\n"
			"    permissions: \"0600\"\n"
			"    encoding: b64\n"
			"    content: \"ZWNobyBmaXJzdA==\"\n");
	assert_has(doc, "  - path: /var/lib/kiln/step-2.content\n"
			"    permissions: \"0600\"\n"
			"    encoding: b64\n"
			"    content: \"eD0xCg==\"\n");
	free(doc);
}

static char *scheduler_of(const struct spec *spec, const struct spec_group *g)
{
	(void)spec;
	return strcmp(g->name, "trainers") == 0 ? xstrdup("#!/bin/sh\nslurmd -Z\n") : NULL;
}

static void test_document_runs_the_scheduler_part_after_the_steps_before_health(void **state)
{
	struct fx *f = *state;
	struct boot_cloud with = cloud;
	char *doc, *login;
	const char *c, *sched, *h;

	assert_int_equal(fx_validate(f, cluster), 0);
	with.scheduler = scheduler_of;
	doc = doc_with(f->spec, "trainers", &with);
	assert_has(doc, "      cat >/var/lib/kiln/scheduler.sh <<'KILN_SCHEDULER'\n"
			"      #!/bin/sh\n      slurmd -Z\n      KILN_SCHEDULER\n"
			"      say \"scheduler: /var/lib/kiln/scheduler.sh\"\n"
			"      if ! sh /var/lib/kiln/scheduler.sh; then\n"
			"      \tproblem \"the scheduler did not start (/var/lib/kiln/scheduler.sh "
			"failed)\"\n");
	c = strstr(doc, "echo second");
	sched = strstr(doc, "scheduler.sh <<");
	h = strstr(doc, "# Health:");
	assert_true(c < sched && sched < h);
	login = doc_with(f->spec, "login", &with);
	assert_null(strstr(login, "scheduler.sh"));
	free(login);
	free(doc);
}

static void test_document_sets_the_efa_environment_only_on_the_fabric(void **state)
{
	struct fx *f = *state;
	char *doc;

	assert_int_equal(fx_validate(f, cluster), 0);
	doc = doc_of(f->spec, "trainers", false, NULL);
	assert_has(doc, "  - path: /etc/profile.d/kiln-efa.sh\n");
	assert_has(doc, "      export FI_PROVIDER=efa\n");
	assert_has(doc, "      export FI_EFA_USE_DEVICE_RDMA=1\n");
	assert_has(doc, "efa=32\n");
	assert_has(doc, "gpus=8\n");
	free(doc);
	doc = doc_of(f->spec, "login", false, NULL);
	assert_lacks(doc, "kiln-efa.sh");
	assert_lacks(doc, "fi_info");
	assert_lacks(doc, "nvidia-smi");
	free(doc);
}

static void test_document_quick_health_runs_a_diagnostic_and_none_does_not(void **state)
{
	struct fx *f = *state;
	char *doc;

	assert_int_equal(fx_validate(f, HEAD
				     "compute:\n"
				     "  a: {instance_type: p5.48xlarge}\n"
				     "  b: {instance_type: p5.48xlarge, health: {gpu: none}}\n"),
			 0);
	doc = doc_of(f->spec, "a", false, NULL);
	assert_has(doc, "dcgmi diag -r 1");
	free(doc);
	doc = doc_of(f->spec, "b", false, NULL);
	assert_lacks(doc, "dcgmi");
	assert_has(doc, "nvidia-smi --query-gpu=index");
	free(doc);
}

static void test_document_finds_a_file_system_made_after_the_nodes(void **state)
{
	struct fx *f = *state;
	char *doc;

	assert_int_equal(fx_validate(f, cluster), 0);
	doc = doc_of(f->spec, "trainers", true, NULL);
	assert_has(doc, "find_1() {\n      \techo found@tcp:/x\n      }\n");
	assert_has(doc, "find_fs 'scratch' find_1 && mount_fs 'scratch' \"$found\" '/fsx'");
	free(doc);
}

static char *helper_source(const struct spec_store *s)
{
	return xasprintf("id-of-%s:/", s->name);
}

static void test_nfs_mounts_through_a_helper_where_the_image_has_it(void **state)
{
	struct fx *f = *state;
	struct boot_cloud with = cloud;
	const struct spec_group *g;
	const struct catalog_type *t;
	struct kiln_error err = {{0}, {0}};
	char *why = NULL, *doc;

	with.nfs_helper = "mount.efs";
	with.nfs_helper_source = helper_source;
	with.nfs_helper_fstype = "efs";
	with.nfs_helper_options = "tls,_netdev,nofail";
	assert_int_equal(fx_validate(f, cluster), 0);
	g = spec_group_find(f->spec, "login");
	assert_int_equal(expand_group_type("", &catalog_aws, f->spec, g, &t, &why, &err), 0);
	doc = bootstrap_group_document(f->spec, g, "login", t, 0, &with, false, NULL, &err);
	assert_non_null(doc);
	assert_has(doc, "mount_fs 'home' '{{kiln:nfs:home}}' '/home' 'nfs4' "
			"'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,"
			"noresvport,_netdev,nofail' 'id-of-home:/' 'efs' 'tls,_netdev,nofail' "
			"'mount.efs'\n");
	assert_has(doc, "if [ $# -ge 9 ] && command -v \"$9\" >/dev/null 2>&1; then\n");
	free(doc);
}

static const struct boot_agent test_agent = {"the test agent", "/etc/agent/kiln.json",
					     "{\"metrics\": {}}\n", "command -v agentctl",
					     "agentctl start /etc/agent/kiln.json"};

static void test_gpu_metrics_agent_starts_on_gpu_groups_where_the_image_has_it(void **state)
{
	struct fx *f = *state;
	struct boot_cloud with = cloud;
	char *doc, *login, *plain;
	const char *agent, *h;

	with.gpu_metrics = &test_agent;
	assert_int_equal(fx_validate(f, cluster), 0);
	doc = doc_with(f->spec, "trainers", &with);
	assert_has(doc, "  - path: \"/etc/agent/kiln.json\"\n"
			"    permissions: \"0644\"\n"
			"    content: |\n"
			"      {\"metrics\": {}}\n");
	assert_has(doc,
		   "      if command -v agentctl; then\n"
		   "      \tsay \"starting the test agent (/etc/agent/kiln.json)\"\n"
		   "      \tagentctl start /etc/agent/kiln.json || say 'the test agent did not "
		   "start: no GPU metrics'\n"
		   "      else\n"
		   "      \tsay 'the test agent is not installed: no GPU metrics'\n"
		   "      fi\n");
	/* Before the health report, and never a problem(). */
	agent = strstr(doc, "if command -v agentctl");
	h = strstr(doc, "# Health:");
	assert_true(agent && h && agent < h);
	assert_lacks(doc, "problem \"the test agent");
	/* No GPUs, no agent. */
	login = doc_with(f->spec, "login", &with);
	assert_lacks(login, "agent");
	/* A cloud without an agent (sim): the GPU group's document has none. */
	plain = doc_with(f->spec, "trainers", &cloud);
	assert_lacks(plain, "agent");
	free(plain);
	free(login);
	free(doc);
}

/* The bytes cloud-init writes to path: the entry's content, base64-decoded (caller frees). */
static char *written(const char *doc, const char *path)
{
	char *head = xasprintf("  - path: %s\n    permissions: \"0600\"\n    encoding: b64\n"
			       "    content: \"",
			       path);
	const char *at = strstr(doc, head), *end;
	unsigned char *out = NULL;
	size_t n = 0;
	char *text;

	if (!at)
		fail_msg("no encoded entry for %s", path);
	at += strlen(head);
	end = strchr(at, '"');
	assert_int_equal(crypt_base64_decode(&out, &n, at, (size_t)(end - at)), 0);
	text = xstrndup((const char *)out, n);
	free(out);
	free(head);
	return text;
}

/*
 * A CR, ESC, DEL, C1 control, NEL, U+2028 and U+2029 in a file's content
 * (issue 33, finding 3): never in the document's text, where a CR would end
 * the block scalar and start a key of cloud-init's own; written back exactly.
 */
static void test_node_ttl_timer_is_installed_first_with_the_spec_grace(void **state)
{
	struct fx *f = *state;
	struct boot_cloud with = cloud;
	char *doc, *spec = xasprintf("%sttl: 8h\nttl_grace: 20m\n", cluster);
	const char *timer, *local;

	assert_int_equal(fx_validate(f, spec), 0);
	with.read_tag = "cat \"/tags/$1\"";
	doc = doc_with(f->spec, "trainers", &with);
	assert_has(doc, "  - path: /var/lib/kiln/ttl.sh\n    permissions: \"0700\"\n");
	assert_has(doc, "  - path: /etc/systemd/system/kiln-ttl.service\n");
	assert_has(doc, "  - path: /etc/systemd/system/kiln-ttl.timer\n");
	assert_has(doc, "      ExecStart=/bin/bash /var/lib/kiln/ttl.sh\n");
	assert_has(doc, "      OnUnitActiveSec=1min\n");
	assert_has(doc, "      g=1200 log=");
	assert_has(doc, "      read_tag() {\n      \tcat \"/tags/$1\"\n      }\n");
	assert_has(doc, "      \tshutdown -h now \"kiln: expired at $x\"\n");
	/* Before the mounts, which may retry for half an hour. */
	timer = strstr(doc, "systemctl enable --now kiln-ttl.timer");
	local = strstr(doc, "local_nvme '/scratch'");
	assert_non_null(timer);
	assert_non_null(local);
	assert_true(timer < local);
	free(doc);
	free(spec);
}

static void test_node_ttl_grace_defaults_to_15m_and_no_reader_means_no_timer(void **state)
{
	struct fx *f = *state;
	struct boot_cloud with = cloud;
	char *doc;

	assert_int_equal(fx_validate(f, cluster), 0);
	assert_int_equal(f->spec->ttl_grace, 15 * 60);
	with.read_tag = "return 1";
	doc = doc_with(f->spec, "trainers", &with);
	assert_has(doc, "      g=900 log=");
	free(doc);
	doc = doc_with(f->spec, "trainers", &cloud);
	assert_lacks(doc, "kiln-ttl");
	free(doc);
}

static void test_node_ttl_grace_out_of_range_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(&f->d, fx_load(f, HEAD "ttl_grace: 8d\n"));
	assert_error(&f->d, 4, 12, "ttl_grace must be between 1m and 7d, not 8d");
	assert_hint(&f->d, 4, 12,
		    "it is how long past the expiry a node waits for `kiln reap` before it "
		    "powers itself off (checked once a minute); 15m is the default");
}

static void test_file_content_reaches_the_node_encoded_whatever_it_holds(void **state)
{
	struct fx *f = *state;
	const char *hostile = "x\rbootcmd: [[touch, /tmp/INJECTED]]\rzz: |\n"
			      "\x1b[31m \x7f \xc2\x9b \xc2\x85 \xe2\x80\xa8 \xe2\x80\xa9\n";
	char *doc, *got;

	assert_int_equal(fx_validate(f,
				     HEAD "compute:\n"
					  "  a:\n"
					  "    instance_type: m7i.xlarge\n"
					  "    bootstrap:\n"
					  "      - {file: /etc/x, content: \"x\\rbootcmd: [[touch, "
					  "/tmp/INJECTED]]\\rzz: |\\n\\e[31m \\x7f \\x9b \\N \\L "
					  "\\P\\n\"}\n"),
			 0);
	doc = doc_of(f->spec, "a", false, NULL);
	assert_lacks(doc, "bootcmd");
	assert_lacks(doc, "\r");
	assert_lacks(doc, "\x1b");
	assert_lacks(doc, "\xe2\x80\xa8");
	got = written(doc, "/var/lib/kiln/step-1.content");
	assert_string_equal(got, hostile);
	free(got);
	free(doc);
}

/* Finding 4: a content without a trailing newline is written without one. */
static void test_file_content_is_written_byte_for_byte(void **state)
{
	struct fx *f = *state;
	char *doc, *a, *b, *c;

	assert_int_equal(fx_validate(f, HEAD "compute:\n"
					     "  a:\n"
					     "    instance_type: m7i.xlarge\n"
					     "    bootstrap:\n"
					     "      - {file: /etc/a, content: \"no newline\"}\n"
					     "      - {file: /etc/b, content: \"one newline\\n\"}\n"
					     "      - {file: /etc/c, content: \"\"}\n"),
			 0);
	doc = doc_of(f->spec, "a", false, NULL);
	a = written(doc, "/var/lib/kiln/step-1.content");
	b = written(doc, "/var/lib/kiln/step-2.content");
	c = written(doc, "/var/lib/kiln/step-3.content");
	assert_string_equal(a, "no newline");
	assert_string_equal(b, "one newline\n");
	assert_string_equal(c, "");
	assert_has(doc, "      \tcat \"/var/lib/kiln/step-$1.content\" >\"$3\"\n");
	free(a);
	free(b);
	free(c);
	free(doc);
}

/* A step's title is cut between UTF-8 characters: the document stays UTF-8. */
static void test_step_title_is_cut_between_characters(void **state)
{
	struct fx *f = *state;
	char *doc;

	/* "echo x" and two-byte characters: byte 57 (0-based) is inside the 26th. */
	assert_int_equal(fx_validate(f, HEAD "compute:\n"
					     "  a:\n"
					     "    instance_type: m7i.xlarge\n"
					     "    bootstrap:\n"
					     "      - echo xéééééééééééééééééééééééééééééé\n"),
			 0);
	doc = doc_of(f->spec, "a", false, NULL);
	assert_int_equal(str_utf8_invalid_offset((const unsigned char *)doc, strlen(doc)),
			 strlen(doc));
	assert_has(doc,
		   "run_step 1 'compute.a.bootstrap[0]' 'echo xééééééééééééééééééééééééé...'\n");
	free(doc);
}

/* What must stay text (a command, a path, a key's comment) is refused with a control in it. */
static void test_step_text_with_a_control_character_is_refused(void **state)
{
	struct fx *f = *state;

	assert_failed_with_errors(
	    &f->d, fx_load(f, HEAD "bootstrap:\n"
				   "  - \"echo x\\rbootcmd: []\"\n"
				   "  - {run: \"printf \\e[2J\"}\n"
				   "  - {run: \"echo \\u2028\"}\n"
				   "  - {file: \"/etc/a\\x9b\", content: x}\n"
				   "  - {file: /etc/b, content: \"\\r\\e\\x7f\\N\"}\n"));
	assert_error(&f->d, 5, 5,
		     "bootstrap[0] holds a carriage return (U+000D) at byte 7; a command must be "
		     "UTF-8 text with no control character but tab and newline");
	assert_hint(&f->d, 5, 5,
		    "remove it; bytes that are not text go "
		    "in a file step's content:, which reaches the node byte for byte");
	assert_error(&f->d, 6, 11,
		     "bootstrap[1].run holds an escape (U+001B) at byte 8; a command must be UTF-8 "
		     "text with no control character but tab and newline");
	assert_error(
	    &f->d, 7, 11,
	    "bootstrap[2].run holds a line separator (U+2028) at byte 6; a command must be "
	    "UTF-8 text with no control character but tab and newline");
	assert_error(&f->d, 8, 12,
		     "bootstrap[3].file holds a C1 control character (U+009B) at byte 7; a path "
		     "must be UTF-8 text with no control character but tab");
	assert_hint(&f->d, 8, 12,
		    "write where the file goes on the node, like /etc/profile.d/team.sh");
	assert_int_equal(f->d.errors, 4);
}

static void test_fill_puts_the_values_in(void **state)
{
	struct kiln_error err = {{0}, {0}};
	json_t *v = json_pack("{s:s, s:s}", "lustre:s", "fs-1.fsx@tcp:/abc", "workspace", "w");
	char *out = bootstrap_fill("a {{kiln:lustre:s}} b {{kiln:workspace}}", v, &err);

	(void)state;
	assert_string_equal(out, "a fs-1.fsx@tcp:/abc b w");
	free(out);
	json_decref(v);
}

static void test_fill_names_a_value_it_lacks(void **state)
{
	struct kiln_error err = {{0}, {0}};
	json_t *v = json_object();

	(void)state;
	assert_null(bootstrap_fill("x {{kiln:nfs:home}}", v, &err));
	assert_string_equal(err.msg, "the user data needs nfs:home, which is not known yet");
	assert_string_equal(err.hint, "run plan again: it refreshes what exists");
	json_decref(v);
}

static void test_digest_is_stable_and_changes_with_the_document(void **state)
{
	char *a = bootstrap_digest("#cloud-config\n"), *b = bootstrap_digest("#cloud-config\n"),
	     *c = bootstrap_digest("#cloud-config\n#x\n");

	(void)state;
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
	assert_int_equal(strlen(a), 7 + 64);
	assert_true(strncmp(a, "sha256:", 7) == 0);
	free(a);
	free(b);
	free(c);
}

static void test_document_over_the_limit_is_refused_at_the_group(void **state)
{
	struct fx *f = *state;
	struct strbuf y = {0};
	int i;

	sb_adds(&y, HEAD "compute:\n  big:\n    instance_type: m7i.xlarge\n    bootstrap:\n");
	for (i = 0; i < 200; i++)
		sb_addf(&y,
			"      - echo 'a long step of the bootstrap, number %03d, padded out to "
			"a hundred bytes'\n",
			i);
	f->text = sb_detach(&y);
	assert_failed_with_errors(&f->d, fx_validate(f, f->text));
	assert_error(&f->d, 5, 3,
		     "compute.big: its user data would be 64422 bytes; EC2 takes at most 16384 "
		     "before base64");
	assert_hint(&f->d, 5, 3,
		    "move long bootstrap steps into a script on the image, or in an object store "
		    "the group's role reads, and run that");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    kiln_test(test_bootstrap_loads_steps_in_order_with_their_kinds),
	    kiln_test(test_bootstrap_entry_of_the_wrong_type_is_refused),
	    kiln_test(test_bootstrap_that_is_not_a_list_is_refused),
	    kiln_test(test_bootstrap_file_needs_an_absolute_path),
	    kiln_test(test_health_gpu_must_be_quick_or_none),
	    kiln_test(test_local_store_on_a_type_without_instance_store_is_refused),
	    kiln_test(test_local_store_takes_no_deletion),
	    kiln_test(test_local_store_is_reached_by_no_role),
	    kiln_test(test_document_mounts_what_the_role_reaches_with_retries),
	    kiln_test(test_document_runs_steps_top_level_first_in_order),
	    kiln_test(test_document_runs_the_scheduler_part_after_the_steps_before_health),
	    kiln_test(test_document_sets_the_efa_environment_only_on_the_fabric),
	    kiln_test(test_document_quick_health_runs_a_diagnostic_and_none_does_not),
	    kiln_test(test_document_finds_a_file_system_made_after_the_nodes),
	    kiln_test(test_nfs_mounts_through_a_helper_where_the_image_has_it),
	    kiln_test(test_gpu_metrics_agent_starts_on_gpu_groups_where_the_image_has_it),
	    kiln_test(test_node_ttl_timer_is_installed_first_with_the_spec_grace),
	    kiln_test(test_node_ttl_grace_defaults_to_15m_and_no_reader_means_no_timer),
	    kiln_test(test_node_ttl_grace_out_of_range_is_refused),
	    kiln_test(test_file_content_reaches_the_node_encoded_whatever_it_holds),
	    kiln_test(test_file_content_is_written_byte_for_byte),
	    kiln_test(test_step_title_is_cut_between_characters),
	    kiln_test(test_step_text_with_a_control_character_is_refused),
	    kiln_test(test_fill_puts_the_values_in),
	    kiln_test(test_fill_names_a_value_it_lacks),
	    kiln_test(test_digest_is_stable_and_changes_with_the_document),
	    kiln_test(test_document_over_the_limit_is_refused_at_the_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
