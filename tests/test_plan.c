/*
 * test_plan.c - the plan document read back: renderings against golden
 * files, the digest, plan files and the checks on them.
 *
 * The plans here are built by hand, so these tests hold the renderings to
 * plan.h's contract rather than to whatever diff.c happens to produce.
 * Golden files live in tests/golden/plan/ (tests run from the repository
 * root); KILN_UPDATE_GOLDEN=1 rewrites them from the current output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan.h"

#define GOLDEN_DIR "tests/golden/plan/"
#define SPEC_DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define COMMIT "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"

struct fx {
	char dir[64];
	json_t *plan;
	char *text;
	char *path;
	char *want;  /* an expected message */
	char *other; /* another path or digest */
	char *more;
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/kiln-test-plan-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	f->path = xasprintf("%s/cluster.plan", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	int rc = util_remove_tree(f->dir);

	json_decref(f->plan);
	free(f->text);
	free(f->path);
	free(f->want);
	free(f->other);
	free(f->more);
	free(f);
	return rc;
}

#define plan_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* ---- building plans by hand ---- */

/* A plan with no resources: the kiln part as plan.h has it. */
static json_t *plan_new(const char *provider, bool simulated, const char *commit)
{
	return json_pack(
	    "{s:s, s:s, s:[], s:[], s:b, s:{s:i, s:s, s:s, s:s, s:s, s:b, "
	    "s:{s:s, s:s}, s:{s:s?, s:i, s:s?}, s:b, s:b, s:[], s:[], "
	    "s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i}, s:b, s:[], s:[]}}",
	    "format_version", PLAN_FORMAT_VERSION, "kiln_version", KILN_VERSION, "resource_changes",
	    "resource_drift", "errored", 0, "kiln", "plan_version", PLAN_VERSION, "created",
	    "2026-11-30T01:02:03Z", "cluster", "quickstart", "workspace", "default", "provider",
	    provider, "simulated", simulated, "spec", "file", "examples/quickstart.yaml", "digest",
	    SPEC_DIGEST, "state", "commit", commit, "serial", commit ? 3 : 0, "lineage",
	    commit ? "6f1c2a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f" : NULL, "destroy", 0, "refresh", 1,
	    "targets", "replace", "summary", "create", 0, "update", 0, "replace", 0, "delete", 0,
	    "adopt", 0, "drift", 0, "no_op", 0, "changes", 0, "notes", "warnings");
}

/* One CHANGE; actions is "no-op", "create", "update", "replace" or "delete". */
static json_t *change_new(const char *type, const char *name, const char *actions, json_t *before,
			  json_t *after)
{
	char *address = xasprintf("%s.%s", type, name);
	json_t *list = strcmp(actions, "replace") == 0 ? json_pack("[ss]", "delete", "create")
						       : json_pack("[s]", actions);
	json_t *rc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:o, s:o?, s:o?, s:{}, s:b, s:b}, "
			       "s:{s:n, s:[], s:[]}}",
			       "address", address, "mode", "managed", "type", type, "name", name,
			       "provider_name", "sim", "change", "actions", list, "before", before,
			       "after", after, "after_unknown", "before_sensitive", 0,
			       "after_sensitive", 0, "kiln", "id", "deps", "attributes");

	free(address);
	return rc;
}

static void set_change(json_t *rc, const char *key, json_t *value)
{
	json_object_set_new(json_object_get(rc, "change"), key, value);
}

static void set_kiln(json_t *rc, const char *key, json_t *value)
{
	json_object_set_new(json_object_get(rc, "kiln"), key, value);
}

/* One kiln.attributes entry; policy and why may be NULL. */
static void add_attr(json_t *rc, const char *name, json_t *before, json_t *after,
		     const char *policy, const char *why, bool sensitive)
{
	json_t *a = json_pack("{s:s, s:o, s:o, s:b}", "name", name, "before", before, "after",
			      after, "sensitive", sensitive);

	if (policy)
		json_object_set_new(a, "policy", json_string(policy));
	if (why)
		json_object_set_new(a, "why", json_string(why));
	json_array_append_new(json_object_get(json_object_get(rc, "kiln"), "attributes"), a);
}

static void set_summary(json_t *plan, const char *key, json_int_t n)
{
	json_object_set_new(json_object_get(json_object_get(plan, "kiln"), "summary"), key,
			    json_integer(n));
}

static void add_note(json_t *plan, const char *list, const char *text)
{
	json_array_append_new(json_object_get(json_object_get(plan, "kiln"), list),
			      json_string(text));
}

/*
 * Every kind of change: create (with computed and sensitive attributes),
 * update with live and stop policies, replace (forced and requested),
 * delete (gone from the spec, duplicate), adopt, adopt with an update, a
 * retained store released from state, drift (changed and deleted), notes
 * and warnings. Sensitive values are left in on purpose: a renderer must
 * not print them even when a document carries them.
 */
static json_t *sample_plan(void)
{
	json_t *plan = plan_new("sim", true, COMMIT);
	json_t *changes = json_object_get(plan, "resource_changes");
	json_t *drift = json_object_get(plan, "resource_drift");
	json_t *rc;

	rc = change_new("sim_bucket", "data", "no-op", json_pack("{s:s}", "name", "qs-data"),
			json_pack("{s:s}", "name", "qs-data"));
	set_change(rc, "importing", json_pack("{s:s}", "id", "bkt-0123"));
	set_kiln(rc, "id", json_string("bkt-0123"));
	json_array_append_new(changes, rc);

	rc =
	    change_new("sim_bucket", "data", "delete", json_pack("{s:s}", "name", "qs-data"), NULL);
	json_object_set_new(rc, "deposed", json_string("bkt-0999"));
	json_object_set_new(rc, "action_reason", json_string("delete_because_duplicate"));
	set_kiln(rc, "id", json_string("bkt-0999"));
	json_array_append_new(changes, rc);

	rc =
	    change_new("sim_bucket", "keep", "delete", json_pack("{s:s}", "name", "qs-keep"), NULL);
	json_object_set_new(rc, "action_reason", json_string("delete_because_no_resource_config"));
	set_kiln(rc, "id", json_string("bkt-0042"));
	set_kiln(rc, "retain", json_true());
	set_kiln(rc, "reason",
		 json_string("release from state; retained, not deleted (deletion: retain)"));
	json_array_append_new(changes, rc);

	rc = change_new("sim_bucket", "old", "delete", json_pack("{s:s}", "name", "qs-old"), NULL);
	json_object_set_new(rc, "action_reason", json_string("delete_because_no_resource_config"));
	set_kiln(rc, "id", json_string("bkt-0007"));
	json_array_append_new(changes, rc);

	rc = change_new("sim_bucket", "shared", "update",
			json_pack("{s:s, s:b}", "name", "qs-shared", "versioning", 0),
			json_pack("{s:s, s:b}", "name", "qs-shared", "versioning", 1));
	set_change(rc, "importing", json_pack("{s:s}", "id", "bkt-0456"));
	set_kiln(rc, "id", json_string("bkt-0456"));
	set_kiln(rc, "reason",
		 json_string("adopt bkt-0456: tagged for this workspace, missing from the state"));
	add_attr(rc, "versioning", json_false(), json_true(), "live", NULL, false);
	json_array_append_new(changes, rc);

	rc = change_new("sim_iam_role", "trainer", "replace",
			json_pack("{s:s}", "name", "qs-trainer"),
			json_pack("{s:s}", "name", "qs-trainer"));
	json_object_set_new(rc, "action_reason", json_string("replace_by_request"));
	set_kiln(rc, "id", json_string("role-77"));
	json_array_append_new(changes, rc);

	rc = change_new("sim_lustre", "scratch", "replace",
			json_pack("{s:i, s:i}", "capacity_gb", 1200, "throughput_per_tib", 125),
			json_pack("{s:i, s:i}", "capacity_gb", 1200, "throughput_per_tib", 250));
	json_object_set_new(rc, "action_reason", json_string("replace_because_cannot_update"));
	set_change(rc, "replace_paths", json_pack("[[s]]", "throughput_per_tib"));
	set_kiln(rc, "id", json_string("fs-0abc"));
	add_attr(rc, "throughput_per_tib", json_integer(125), json_integer(250), "replace",
		 "the file system's throughput is fixed when it is created", false);
	json_array_append_new(changes, rc);

	rc = change_new("sim_network", "main", "create", NULL,
			json_pack("{s:s, s:s, s:n, s:{s:s}, s:[s,s]}", "cidr", "10.42.0.0/16",
				  "fabric", "ena", "id", "tags", "kiln:cluster", "quickstart",
				  "zones", "sim-1a", "sim-1b"));
	set_change(rc, "after_unknown", json_pack("{s:b, s:b}", "id", 1, "arn", 1));
	json_array_append_new(changes, rc);

	rc = change_new("sim_nfs", "home", "create", NULL,
			json_pack("{s:s, s:s, s:f}", "admin_password", "hunter2", "mount", "/home",
				  "price_per_gb_hour", 0.0001));
	set_change(rc, "after_sensitive", json_pack("{s:b}", "admin_password", 1));
	set_kiln(rc, "reason", json_string("in the spec, not live"));
	json_array_append_new(changes, rc);

	rc = change_new("sim_node_group", "login", "no-op", json_pack("{s:i}", "count", 1),
			json_pack("{s:i}", "count", 1));
	set_kiln(rc, "id", json_string("ng-1"));
	json_array_append_new(changes, rc);

	rc = change_new(
	    "sim_node_group", "trainers", "update",
	    json_pack("{s:i, s:s, s:s, s:{s:s}}", "count", 2, "instance_type", "g6.xlarge",
		      "bootstrap_token", "tok-old-secret", "labels", "team", "research"),
	    json_pack("{s:i, s:s, s:s, s:{s:s}}", "count", 4, "instance_type", "p5.48xlarge",
		      "bootstrap_token", "tok-new-secret", "labels", "team", "ml"));
	set_change(rc, "before_sensitive", json_pack("{s:b}", "bootstrap_token", 1));
	set_change(rc, "after_sensitive", json_pack("{s:b}", "bootstrap_token", 1));
	set_kiln(rc, "id", json_string("ng-2"));
	add_attr(rc, "bootstrap_token", json_string("tok-old-secret"),
		 json_string("tok-new-secret"), "live", NULL, true);
	add_attr(rc, "count", json_integer(2), json_integer(4), "live", NULL, false);
	add_attr(rc, "instance_type", json_string("g6.xlarge"), json_string("p5.48xlarge"), "stop",
		 "an instance stops to change its type", false);
	add_attr(rc, "labels", json_pack("{s:s}", "team", "research"),
		 json_pack("{s:s}", "team", "ml"), "live", NULL, false);
	json_array_append_new(changes, rc);

	rc =
	    change_new("sim_bucket", "logs", "delete", json_pack("{s:s}", "name", "qs-logs"), NULL);
	set_kiln(rc, "id", json_string("bkt-0011"));
	json_array_append_new(drift, rc);

	rc = change_new("sim_node_group", "trainers", "update", json_pack("{s:i}", "count", 2),
			json_pack("{s:i}", "count", 3));
	set_kiln(rc, "id", json_string("ng-2"));
	add_attr(rc, "count", json_integer(2), json_integer(3), NULL, NULL, false);
	json_array_append_new(drift, rc);

	set_summary(plan, "create", 2);
	set_summary(plan, "update", 2);
	set_summary(plan, "replace", 2);
	set_summary(plan, "delete", 2);
	set_summary(plan, "adopt", 2);
	set_summary(plan, "drift", 2);
	set_summary(plan, "no_op", 2);
	json_object_set_new(json_object_get(plan, "kiln"), "changes", json_true());
	add_note(plan, "notes",
		 "sim_node_group.trainers: instance_type: p5.48xlarge is the cheapest type with "
		 "8\xc3\x97 H100 in sim-1a");
	add_note(plan, "notes",
		 "sim_bucket.keep: deletion: retain keeps the bucket and its "
		 "objects; kiln forgets it");
	add_note(plan, "warnings",
		 "sim_node_group.trainers: changing instance_type stops 2 "
		 "running nodes | <b>not</b> a rolling change");
	return plan;
}

/* A first plan on a real cloud: no state yet, one create. */
static json_t *first_plan(void)
{
	json_t *plan = plan_new("aws", false, NULL);
	json_t *rc =
	    change_new("aws_s3_bucket", "checkpoints", "create", NULL,
		       json_pack("{s:s, s:b}", "bucket", "llm-checkpoints", "versioning", 1));

	set_change(rc, "after_unknown", json_pack("{s:b}", "arn", 1));
	json_array_append_new(json_object_get(plan, "resource_changes"), rc);
	set_summary(plan, "create", 1);
	json_object_set_new(json_object_get(plan, "kiln"), "changes", json_true());
	return plan;
}

/* Everything matches: two no-op resources. */
static json_t *quiet_plan(void)
{
	json_t *plan = plan_new("aws", false, COMMIT);
	json_t *changes = json_object_get(plan, "resource_changes");

	json_array_append_new(changes, change_new("aws_s3_bucket", "data", "no-op",
						  json_pack("{s:b}", "versioning", 1),
						  json_pack("{s:b}", "versioning", 1)));
	json_array_append_new(changes, change_new("aws_vpc", "main", "no-op",
						  json_pack("{s:s}", "cidr", "10.0.0.0/16"),
						  json_pack("{s:s}", "cidr", "10.0.0.0/16")));
	set_summary(plan, "no_op", 2);
	return plan;
}

/* ---- rendering to memory, golden files ---- */

static char *render_text(const json_t *plan, bool color)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	plan_render_text(f, plan, color);
	fclose(f);
	return buf;
}

static char *render_markdown(const json_t *plan)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	plan_render_markdown(f, plan);
	fclose(f);
	return buf;
}

/* The lines of s (s is modified); n set. */
static char **split_lines(char *s, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;
	char *p = s, *nl;

	*n = 0;
	while (*p) {
		*ARRAY_PUSH(v, *n, cap) = p;
		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return v;
}

/* Print the edit script from the LCS table: ' ' kept, '-' golden only, '+' output only. */
static void print_edits(char **la, size_t na, char **lb, size_t nb, const unsigned *lcs)
{
	size_t i = 0, j = 0, k, n = 0, cap = 0, last = 0;
	struct edit {
		char op;
		const char *line;
	} *e = NULL;

#define LCS(x, y) lcs[(x) * (nb + 1) + (y)]
	while (i < na || j < nb) {
		struct edit *x = ARRAY_PUSH(e, n, cap);

		if (i < na && j < nb && strcmp(la[i], lb[j]) == 0) {
			*x = (struct edit){' ', la[i]};
			i++, j++;
		} else if (i < na && (j == nb || LCS(i + 1, j) >= LCS(i, j + 1))) {
			*x = (struct edit){'-', la[i++]};
		} else {
			*x = (struct edit){'+', lb[j++]};
		}
	}
#undef LCS
	/* Each change with two kept lines either side; "..." between distant ones. */
	for (k = 0; k < n; k++) {
		bool near = false;
		size_t d;

		for (d = k > 2 ? k - 2 : 0; d < n && d <= k + 2; d++)
			if (e[d].op != ' ')
				near = true;
		if (!near)
			continue;
		if (last && k > last + 1)
			print_error("...\n");
		print_error("%c%s\n", e[k].op, e[k].line);
		last = k;
	}
	free(e);
}

/* A unified-diff-like report of golden (want) against the output (got). */
static void print_diff(const char *path, const char *want, const char *got)
{
	char *a = xstrdup(want), *b = xstrdup(got);
	size_t na, nb, i, j;
	char **la = split_lines(a, &na), **lb = split_lines(b, &nb);
	unsigned *lcs = xcalloc((na + 1) * (nb + 1), sizeof(*lcs));

	/* lcs[i][j]: the longest common subsequence of la[i..] and lb[j..]. */
	for (i = na + 1; i-- > 0;)
		for (j = nb + 1; j-- > 0;)
			if (i == na || j == nb)
				lcs[i * (nb + 1) + j] = 0;
			else if (strcmp(la[i], lb[j]) == 0)
				lcs[i * (nb + 1) + j] = lcs[(i + 1) * (nb + 1) + j + 1] + 1;
			else
				lcs[i * (nb + 1) + j] =
				    lcs[(i + 1) * (nb + 1) + j] > lcs[i * (nb + 1) + j + 1]
					? lcs[(i + 1) * (nb + 1) + j]
					: lcs[i * (nb + 1) + j + 1];
	print_error("--- %s (golden)\n+++ output\n", path);
	print_edits(la, na, lb, nb, lcs);
	if (strlen(want) != strlen(got) && strcmp(want, got) != 0 && na == nb)
		print_error("(or they differ in their final newline)\n");
	free(lcs);
	free(la);
	free(lb);
	free(a);
	free(b);
}

static void assert_golden_impl(const char *name, const char *got, const char *file, int line)
{
	char *path = xasprintf(GOLDEN_DIR "%s", name);
	struct kiln_error err = {{0}};
	char *want = NULL;
	size_t len = 0;
	const char *update = getenv("KILN_UPDATE_GOLDEN");
	bool ok;

	if (update && strcmp(update, "1") == 0) {
		FILE *f = fopen(path, "w");

		ok = f && fputs(got, f) >= 0;
		if (f && fclose(f) != 0)
			ok = false;
		if (!ok)
			print_error("cannot write %s\n", path);
	} else if (util_file_read_all(path, (size_t)1 << 24, &want, &len, &err) < 0) {
		print_error("%s\n(run with KILN_UPDATE_GOLDEN=1 to write it)\n", err.msg);
		ok = false;
	} else if (!(ok = strcmp(want, got) == 0)) {
		print_diff(path, want, got);
		print_error("(run with KILN_UPDATE_GOLDEN=1 to accept the new output)\n");
	}
	free(want);
	free(path);
	if (!ok)
		_fail(file, line);
}

#define assert_golden(name, got) assert_golden_impl((name), (got), __FILE__, __LINE__)

/* ---- renderings ---- */

static void test_sample_document_is_the_golden_sample(void **state)
{
	struct fx *f = *state;
	char *s;

	f->plan = sample_plan();
	plan_values_add(f->plan); /* as kiln writes a plan */
	s = json_dumps(f->plan, JSON_INDENT(2) | JSON_SORT_KEYS);
	f->text = xasprintf("%s\n", s);
	free(s);
	assert_golden("sample.json", f->text);
}

/* ---- Terraform's values representation ---- */

/* The addresses of a root_module's resources, joined by spaces. */
static char *values_addresses(const json_t *module)
{
	struct strbuf sb = {0};
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(module, "root_module"), "resources"), i,
			   r)
	    sb_addf(&sb, "%s%s", i ? " " : "", json_string_value(json_object_get(r, "address")));
	return sb_detach(&sb);
}

/* The resource at address in a root_module. */
static const json_t *values_at(const json_t *module, const char *address)
{
	const json_t *r;
	size_t i;

	json_array_foreach(
	    json_object_get(json_object_get(module, "root_module"), "resources"), i,
	    r) if (strcmp(json_string_value(json_object_get(r, "address")), address) == 0) return r;
	return NULL;
}

/* The sample plan with its planned_values and prior_state, as kiln writes it: one of them. */
static const json_t *sample_values(struct fx *f, const char *key)
{
	f->plan = sample_plan();
	plan_values_add(f->plan);
	return json_object_get(f->plan, key);
}

static void test_planned_values_hold_all_but_the_deletes_without_unknowns(void **state)
{
	struct fx *f = *state;
	const json_t *planned = sample_values(f, "planned_values"), *net, *nfs;

	f->text = values_addresses(planned);
	assert_string_equal(f->text, "sim_bucket.data sim_bucket.shared sim_iam_role.trainer "
				     "sim_lustre.scratch sim_network.main sim_nfs.home "
				     "sim_node_group.login sim_node_group.trainers");
	net = values_at(planned, "sim_network.main");
	assert_string_equal(json_string_value(json_object_get(net, "mode")), "managed");
	assert_string_equal(json_string_value(json_object_get(net, "type")), "sim_network");
	assert_string_equal(json_string_value(json_object_get(net, "name")), "main");
	assert_string_equal(json_string_value(json_object_get(net, "provider_name")), "sim");
	/* id and arn are known only after apply: Terraform leaves them out. */
	assert_null(json_object_get(json_object_get(net, "values"), "id"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(net, "values"), "cidr")),
	    "10.42.0.0/16");
	assert_int_equal(json_object_size(json_object_get(net, "sensitive_values")), 0);
	nfs = values_at(planned, "sim_nfs.home");
	assert_true(json_is_true(
	    json_object_get(json_object_get(nfs, "sensitive_values"), "admin_password")));
}

static void test_prior_state_holds_every_before_but_a_deposed_duplicate(void **state)
{
	struct fx *f = *state;
	const json_t *prior = sample_values(f, "prior_state"), *trainers;

	f->text = values_addresses(json_object_get(prior, "values"));
	assert_string_equal(f->text, "sim_bucket.data sim_bucket.keep sim_bucket.old "
				     "sim_bucket.shared sim_iam_role.trainer sim_lustre.scratch "
				     "sim_node_group.login sim_node_group.trainers");
	assert_string_equal(json_string_value(json_object_get(prior, "format_version")), "1.0");
	trainers = values_at(json_object_get(prior, "values"), "sim_node_group.trainers");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(trainers, "values"), "count")), 2);
	assert_true(json_is_true(
	    json_object_get(json_object_get(trainers, "sensitive_values"), "bootstrap_token")));
}

static void test_values_edited_apart_from_the_changes_are_refused(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {0};
	json_t *r = NULL;
	size_t i;

	f->plan = sample_plan();
	assert_int_equal(plan_values_check(f->plan, "p.kiln", &err), 0);
	plan_values_add(f->plan);
	assert_int_equal(plan_values_check(f->plan, "p.kiln", &err), 0);
	/* The plan is the test's own: edit its trainers' values in place. */
	json_array_foreach(json_object_get(json_object_get(json_object_get(f->plan, "planned_values"),
							   "root_module"),
					   "resources"),
			   i, r) if (strcmp(json_string_value(json_object_get(r, "address")),
					    "sim_node_group.trainers") == 0) break;
	assert_non_null(r);
	json_object_set_new(json_object_get(r, "values"), "count", json_integer(1));
	assert_int_equal(plan_values_check(f->plan, "p.kiln", &err), -1);
	assert_string_equal(err.msg,
			    "p.kiln does not match the plan its spec and state give now: "
			    "its planned_values are not what its own resource_changes give");
}

static void test_text_shows_every_kind_of_change(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = render_text(f->plan, false);
	assert_golden("sample.txt", f->text);
}

static void test_text_in_colour_marks_symbols_and_addresses(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = render_text(f->plan, true);
	assert_golden("sample-color.txt", f->text);
	assert_non_null(strstr(f->text, "\033[35m-/+\033[0m \033[1msim_lustre.scratch\033[0m"));
}

static void test_markdown_is_a_pull_request_comment(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = render_markdown(f->plan);
	assert_golden("sample.md", f->text);
}

static void test_text_of_a_first_plan_has_no_state_yet(void **state)
{
	struct fx *f = *state;

	f->plan = first_plan();
	f->text = render_text(f->plan, false);
	assert_golden("first.txt", f->text);
	assert_non_null(strstr(f->text, "State: none yet (first apply creates the workspace)"));
	assert_null(strstr(f->text, "simulation"));
}

static void test_markdown_of_a_first_plan(void **state)
{
	struct fx *f = *state;

	f->plan = first_plan();
	f->text = render_markdown(f->plan);
	assert_golden("first.md", f->text);
}

static void test_text_without_changes_says_so(void **state)
{
	struct fx *f = *state;

	f->plan = quiet_plan();
	f->text = render_text(f->plan, false);
	assert_golden("no-changes.txt", f->text);
}

static void test_markdown_without_changes_says_so(void **state)
{
	struct fx *f = *state;

	f->plan = quiet_plan();
	f->text = render_markdown(f->plan);
	assert_golden("no-changes.md", f->text);
}

static void test_text_names_destroy_targets_replace_and_no_refresh(void **state)
{
	struct fx *f = *state;
	json_t *kn;

	f->plan = sample_plan();
	kn = json_object_get(f->plan, "kiln");
	json_object_set_new(kn, "destroy", json_true());
	json_object_set_new(kn, "refresh", json_false());
	json_object_set_new(kn, "targets", json_pack("[s, s]", "sim_nfs.home", "sim_role.a"));
	json_object_set_new(kn, "replace", json_pack("[s]", "sim_role.a"));
	f->text = render_text(f->plan, false);
	assert_non_null(strstr(f->text, "\nDestroying (--destroy)\n"
					"Live state not read (--refresh=false): the recorded state "
					"is trusted\n"
					"Only (--target, with what it needs or what needs it): "
					"sim_nfs.home sim_role.a\n"
					"Replacing on request (--replace): sim_role.a\n\n"));
}

static void test_renderings_never_print_a_sensitive_value(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = render_text(f->plan, false);
	f->more = render_markdown(f->plan);
	assert_null(strstr(f->text, "hunter2"));
	assert_null(strstr(f->text, "secret"));
	assert_null(strstr(f->more, "hunter2"));
	assert_null(strstr(f->more, "secret"));
	assert_non_null(strstr(f->text, "bootstrap_token:  (sensitive) \xe2\x86\x92 (sensitive)"));
}

static void test_text_turns_control_characters_into_question_marks(void **state)
{
	struct fx *f = *state;
	json_t *rc = change_new("sim_bucket", "x\033[2J", "create", NULL,
				json_pack("{s:s}", "name", "a\nb\xc2\x9b"));

	f->plan = plan_new("sim", true, COMMIT);
	json_array_append_new(json_object_get(f->plan, "resource_changes"), rc);
	add_note(f->plan, "notes", "bell\a here");
	f->text = render_text(f->plan, false);
	assert_null(strchr(f->text, '\033'));
	assert_null(strchr(f->text, '\a'));
	assert_null(strstr(f->text, "\xc2\x9b"));
	assert_non_null(strstr(f->text, "+ sim_bucket.x?[2J  create"));
	assert_non_null(strstr(f->text, "name:  \"a\\nb?\""));
	assert_non_null(strstr(f->text, "  • bell? here"));
}

static void test_text_does_not_truncate_long_values(void **state)
{
	struct fx *f = *state;
	char long_value[301];
	json_t *rc;

	memset(long_value, 'v', 300);
	long_value[300] = '\0';
	rc = change_new("sim_bucket", "x", "update", json_pack("{s:s}", "policy", "short"),
			json_pack("{s:s}", "policy", long_value));
	add_attr(rc, "policy", json_string("short"), json_string(long_value), "live", NULL, false);
	f->plan = plan_new("sim", true, COMMIT);
	json_array_append_new(json_object_get(f->plan, "resource_changes"), rc);
	f->text = render_text(f->plan, false);
	assert_non_null(strstr(f->text, long_value));
}

static void test_text_lists_changed_attributes_without_kiln_attributes(void **state)
{
	struct fx *f = *state;
	json_t *rc = change_new("sim_bucket", "x", "update",
				json_pack("{s:i, s:s, s:b}", "a", 1, "same", "s", "gone", 1),
				json_pack("{s:i, s:s, s:b}", "a", 2, "same", "s", "new", 1));

	json_object_del(json_object_get(rc, "kiln"), "attributes");
	f->plan = plan_new("sim", true, COMMIT);
	json_array_append_new(json_object_get(f->plan, "resource_changes"), rc);
	f->text = render_text(f->plan, false);
	assert_non_null(strstr(f->text, "  ~ sim_bucket.x  update in place\n"
					"      a:     1 \xe2\x86\x92 2\n"
					"      gone:  true \xe2\x86\x92 null\n"
					"      new:   null \xe2\x86\x92 true\n\n"));
}

static void test_adoption_reason_follows_the_id_unless_it_names_the_adoption(void **state)
{
	struct fx *f = *state;
	json_t *changes;
	json_t *rc = change_new("sim_bucket", "a", "no-op", json_object(), json_object());

	set_change(rc, "importing", json_pack("{s:s}", "id", "bkt-1"));
	set_kiln(rc, "reason", json_string("left by an interrupted apply"));
	f->plan = plan_new("sim", true, COMMIT);
	changes = json_object_get(f->plan, "resource_changes");
	json_array_append_new(changes, rc);
	rc = change_new("sim_bucket", "b", "replace", json_pack("{s:i}", "size", 1),
			json_pack("{s:i}", "size", 2));
	set_change(rc, "importing", json_pack("{s:s}", "id", "bkt-2"));
	set_kiln(rc, "reason", json_string("size forces replacement"));
	json_array_append_new(changes, rc);
	f->text = render_text(f->plan, false);
	assert_non_null(strstr(f->text, "  <= sim_bucket.a  adopt bkt-1 (left by an interrupted "
					"apply)\n"
					"  <= sim_bucket.b  adopt bkt-2 (tagged live, missing from "
					"state)\n"
					"  -/+ sim_bucket.b  replace: size forces replacement\n"));
}

static void test_markdown_escapes_tables_and_tags(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = render_markdown(f->plan);
	assert_non_null(strstr(f->text, "> **Warning**\n> sim_node_group.trainers: changing "
					"instance_type stops 2 running nodes \\| &lt;b&gt;not"
					"&lt;/b&gt; a rolling change\n"));
	assert_null(strstr(f->text, "<b>"));
}

static void test_markdown_fence_outlasts_backticks_in_values(void **state)
{
	struct fx *f = *state;
	json_t *rc = change_new("sim_bucket", "x", "create", NULL,
				json_pack("{s:s}", "name", "```\n</details>"));

	f->plan = plan_new("sim", true, COMMIT);
	json_array_append_new(json_object_get(f->plan, "resource_changes"), rc);
	f->text = render_markdown(f->plan);
	assert_non_null(strstr(f->text, "````diff\n+ sim_bucket.x  create\n"
					"+     name:  \"```\\n</details>\"\n````\n"));
}

/* ---- the summary line ---- */

static void test_summary_line_counts_every_action(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = plan_summary_line(f->plan);
	assert_string_equal(f->text, "Plan: 2 to create, 2 to update, 2 to replace, 2 to delete, "
				     "2 to adopt, 1 to release from state (retained); 2 drifted.");
}

static void test_summary_line_counts_a_plan_without_its_summary(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	json_object_del(json_object_get(f->plan, "kiln"), "summary");
	f->text = plan_summary_line(f->plan);
	assert_string_equal(f->text, "Plan: 2 to create, 2 to update, 2 to replace, 2 to delete, "
				     "2 to adopt, 1 to release from state (retained); 2 drifted.");
}

static void test_summary_line_without_drift_ends_at_adopt(void **state)
{
	struct fx *f = *state;

	f->plan = first_plan();
	f->text = plan_summary_line(f->plan);
	assert_string_equal(
	    f->text, "Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt.");
}

static void test_summary_line_of_no_changes(void **state)
{
	struct fx *f = *state;

	f->plan = quiet_plan();
	f->text = plan_summary_line(f->plan);
	assert_string_equal(f->text, "No changes.");
}

/* ---- the digest ---- */

static void test_digest_ignores_key_order(void **state)
{
	struct fx *f = *state;
	json_t *b = json_pack("{s:{s:b, s:s}, s:i}", "y", "r", 1, "p", "q", "x", 1);

	f->plan = json_pack("{s:i, s:{s:s, s:b}}", "x", 1, "y", "p", "q", "r", 1);
	f->text = plan_digest(f->plan);
	f->more = plan_digest(b);
	json_decref(b);
	assert_string_equal(f->text, f->more);
}

/* sha256 of {"a":"\u00E9","b":[true,null,0.5]}: compact, sorted, ASCII. */
static void test_digest_is_sha256_of_compact_sorted_ascii_json(void **state)
{
	struct fx *f = *state;

	f->plan = json_pack("{s:[b,n,f], s:s}", "b", 1, 0.5, "a", "\xc3\xa9");
	f->text = plan_digest(f->plan);
	assert_string_equal(f->text,
			    "sha256:"
			    "88bf87dd5e626358b2a30bb15629da5fc60748bead31120b81080927fd03d0fc");
}

static void test_digest_changes_with_any_value(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = plan_digest(f->plan);
	json_object_set_new(json_object_get(json_object_get(f->plan, "kiln"), "state"), "serial",
			    json_integer(4));
	f->more = plan_digest(f->plan);
	assert_string_not_equal(f->text, f->more);
}

/* ---- plan files ---- */

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static char *read_text(const char *path)
{
	struct kiln_error err = {{0}};
	char *buf = NULL;
	size_t len;

	if (util_file_read_all(path, (size_t)1 << 24, &buf, &len, &err) < 0)
		fail_msg("%s", err.msg);
	return buf;
}

/* A plan file whose digest is right for plan, whatever plan's shape. */
static void write_raw_plan_file(const char *path, json_t *plan)
{
	char *digest = plan_digest(plan);
	json_t *file =
	    json_pack("{s:i, s:s, s:O}", "kiln_plan_file", 1, "digest", digest, "plan", plan);

	assert_int_equal(json_dump_file(file, path, JSON_INDENT(2)), 0);
	json_decref(file);
	free(digest);
}

static void assert_read_error_impl(const char *path, const char *message, const char *hint,
				   const char *file, int line)
{
	struct kiln_error err = {{0}};
	json_t *plan = NULL;

	if (plan_file_read(&plan, path, &err) == 0) {
		json_decref(plan);
		print_error("read, expected: %s\n", message);
		_fail(file, line);
	}
	assert_null(plan);
	if (strcmp(err.msg, message) != 0 || (hint && strcmp(err.hint, hint) != 0)) {
		print_error("expected: %s\n     got: %s\n", message, err.msg);
		if (hint)
			print_error("expected hint: %s\n     got hint: %s\n", hint, err.hint);
		_fail(file, line);
	}
}

#define assert_read_error(path, message, hint)                                                     \
	assert_read_error_impl((path), (message), (hint), __FILE__, __LINE__)

static void test_plan_file_round_trip(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *back = NULL;
	struct stat st;
	struct dirent *e;
	DIR *d;
	int entries = 0;

	f->plan = sample_plan();
	if (plan_file_write(f->path, f->plan, &err) < 0)
		fail_msg("write: %s", err.msg);
	if (plan_file_read(&back, f->path, &err) < 0)
		fail_msg("read: %s", err.msg);
	assert_true(json_equal(back, f->plan));
	json_decref(back);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	d = opendir(f->dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			entries++;
	closedir(d);
	assert_int_equal(entries, 1);
}

static void test_plan_file_starts_with_its_marker(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	f->plan = first_plan();
	assert_int_equal(plan_file_write(f->path, f->plan, &err), 0);
	f->text = read_text(f->path);
	assert_true(
	    str_starts_with(f->text, "{\n  \"kiln_plan_file\": 1,\n  \"digest\": \"sha256:"));
}

static void test_plan_file_refuses_a_modified_plan(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *at;

	f->plan = sample_plan();
	assert_int_equal(plan_file_write(f->path, f->plan, &err), 0);
	f->text = read_text(f->path);
	at = strstr(f->text, "\"serial\": 3");
	assert_non_null(at);
	at[strlen("\"serial\": ")] = '4';
	write_text(f->path, f->text);
	/* Neither digest is in the message: the matching one would be pasted back. */
	f->want = xasprintf("%s has been modified since kiln wrote it: its contents do not match "
			    "its digest",
			    f->path);
	assert_read_error(f->path, f->want,
			  "a plan file must not be edited; make a new one with kiln plan --out "
			  "FILE");
}

static void test_plan_file_refuses_a_newer_file_version(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s is a version 2 plan file, written by a kiln newer than this "
		      "one (" KILN_VERSION "), which reads version 1",
		      f->path);

	write_text(f->path, "{\"kiln_plan_file\": 2, \"digest\": \"sha256:00\", \"plan\": {}}\n");
	assert_read_error(f->path, want,
			  "apply it with the kiln that wrote it, or make a new plan with this one "
			  "(kiln plan --out FILE)");
}

static void test_plan_file_refuses_a_version_no_kiln_writes(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s is a version 0 plan file, which no kiln writes; this one "
		      "(" KILN_VERSION ") reads version 1",
		      f->path);

	write_text(f->path, "{\"kiln_plan_file\": 0, \"digest\": \"sha256:00\", \"plan\": {}}\n");
	assert_read_error(f->path, want, NULL);
}

static void test_plan_file_refuses_yaml(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *plan = NULL;
	char *want = f->want = xasprintf("%s is not a kiln plan file: line 1 column ", f->path);

	write_text(f->path, "kiln: 1\ncluster: demo\n");
	assert_int_equal(plan_file_read(&plan, f->path, &err), -1);
	assert_null(plan);
	assert_true(str_starts_with(err.msg, want));
	assert_string_equal(err.hint,
			    "a plan file is what kiln plan --out FILE writes; a spec is YAML");
}

static void test_plan_file_refuses_json_that_is_not_a_plan_file(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s is not a kiln plan file: it has no \"kiln_plan_file\" key", f->path);

	write_text(f->path, "{\"format_version\": \"1.2\"}\n");
	assert_read_error(f->path, want, NULL);
}

static void test_plan_file_refuses_duplicate_keys(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *plan = NULL;

	write_text(f->path, "{\"kiln_plan_file\": 1, \"kiln_plan_file\": 1}\n");
	assert_int_equal(plan_file_read(&plan, f->path, &err), -1);
	assert_non_null(strstr(err.msg, "duplicate object key"));
}

static void test_plan_file_refuses_a_missing_file(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("cannot read %s/none.plan: No such file or directory", f->dir);
	char *path = f->other = xasprintf("%s/none.plan", f->dir);

	assert_read_error(path, want, "give the file that kiln plan --out FILE wrote");
}

static void test_plan_file_refuses_an_unknown_action_list(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s is not a valid kiln plan: resource_changes[4].change.actions is "
		      "[\"update\",\"create\"], which is not an action list kiln knows",
		      f->path);

	f->plan = sample_plan();
	set_change(json_array_get(json_object_get(f->plan, "resource_changes"), 4), "actions",
		   json_pack("[ss]", "update", "create"));
	write_raw_plan_file(f->path, f->plan);
	assert_read_error(f->path, want,
			  "actions are [\"no-op\"], [\"create\"], [\"update\"], [\"delete\", "
			  "\"create\"], [\"create\", \"delete\"] or [\"delete\"]");
}

static void test_plan_file_refuses_a_before_that_is_not_an_object(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s is not a valid kiln plan: resource_drift[1].change.before is a "
		      "string, not an object or null",
		      f->path);

	f->plan = sample_plan();
	set_change(json_array_get(json_object_get(f->plan, "resource_drift"), 1), "before",
		   json_string("count=2"));
	write_raw_plan_file(f->path, f->plan);
	assert_read_error(f->path, want,
			  "it was not made by kiln plan; make a new one with kiln plan --out FILE");
}

static void test_plan_file_refuses_a_change_without_an_address(void **state)
{
	struct fx *f = *state;
	char *want = f->want = xasprintf(
	    "%s is not a valid kiln plan: resource_changes[0].address is missing", f->path);

	f->plan = sample_plan();
	json_object_del(json_array_get(json_object_get(f->plan, "resource_changes"), 0), "address");
	write_raw_plan_file(f->path, f->plan);
	assert_read_error(f->path, want, NULL);
}

static void test_plan_file_refuses_an_unknown_policy(void **state)
{
	struct fx *f = *state;
	json_t *attrs;
	char *want = f->want =
	    xasprintf("%s is not a valid kiln plan: resource_changes[10].kiln."
		      "attributes[1] has policy \"reboot\"; kiln knows live, replace and "
		      "stop",
		      f->path);

	f->plan = sample_plan();
	attrs = json_object_get(
	    json_object_get(json_array_get(json_object_get(f->plan, "resource_changes"), 10),
			    "kiln"),
	    "attributes");
	json_object_set_new(json_array_get(attrs, 1), "policy", json_string("reboot"));
	write_raw_plan_file(f->path, f->plan);
	assert_read_error(f->path, want, NULL);
}

static void test_plan_file_refuses_a_newer_plan_version(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s cannot be read by this kiln: its kiln.plan_version is 2, and "
		      "this kiln (" KILN_VERSION ") reads version 1",
		      f->path);

	f->plan = sample_plan();
	json_object_set_new(json_object_get(f->plan, "kiln"), "plan_version", json_integer(2));
	json_object_set_new(f->plan, "kiln_version", json_string("0.9.0"));
	write_raw_plan_file(f->path, f->plan);
	assert_read_error(f->path, want,
			  "it was made by kiln 0.9.0; apply it with that kiln, or make a new plan "
			  "with this one (kiln plan --out FILE)");
}

static void test_plan_file_refuses_format_version_2(void **state)
{
	struct fx *f = *state;
	char *want = f->want =
	    xasprintf("%s cannot be read by this kiln: its format_version is \"2.0\", and "
		      "this kiln (" KILN_VERSION ") reads 1.x",
		      f->path);

	f->plan = sample_plan();
	json_object_set_new(f->plan, "format_version", json_string("2.0"));
	write_raw_plan_file(f->path, f->plan);
	assert_read_error(f->path, want, NULL);
}

static void test_plan_file_reads_a_later_minor_format_with_new_keys(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *back = NULL;

	f->plan = sample_plan();
	json_object_set_new(f->plan, "format_version", json_string("1.3"));
	json_object_set_new(json_object_get(f->plan, "kiln"), "cost", json_object());
	write_raw_plan_file(f->path, f->plan);
	if (plan_file_read(&back, f->path, &err) < 0)
		fail_msg("read: %s", err.msg);
	json_decref(back);
}

static void test_plan_file_write_refuses_an_invalid_plan(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *want = f->want =
	    xasprintf("cannot write plan file %s: the plan is not valid: resource_changes "
		      "is missing",
		      f->path);
	struct stat st;

	f->plan = sample_plan();
	json_object_del(f->plan, "resource_changes");
	assert_int_equal(plan_file_write(f->path, f->plan, &err), -1);
	assert_string_equal(err.msg, want);
	assert_int_equal(stat(f->path, &st), -1);
}

static void test_plan_file_write_names_a_missing_directory(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *path = f->other = xasprintf("%s/no/such/dir.plan", f->dir);
	char *want = f->want =
	    xasprintf("cannot write plan file %s: No such file or directory", path);

	f->plan = first_plan();
	assert_int_equal(plan_file_write(path, f->plan, &err), -1);
	assert_string_equal(err.msg, want);
}

static void test_plan_file_write_refuses_a_directory(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	char *path = f->other = xasprintf("%s/", f->dir);

	f->want = xasprintf("cannot write plan file %s: it is a directory", path);
	f->more = xasprintf("give the name of a file, such as %s/plan.kiln", f->dir);
	f->plan = first_plan();
	assert_int_equal(plan_file_write(path, f->plan, &err), -1);
	assert_string_equal(err.msg, f->want);
	assert_string_equal(err.hint, f->more);
}

static void test_plan_file_is_true_for_a_plan_file(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};

	f->plan = first_plan();
	assert_int_equal(plan_file_write(f->path, f->plan, &err), 0);
	assert_true(plan_file_is(f->path));
}

static void test_plan_file_is_false_for_a_yaml_spec(void **state)
{
	struct fx *f = *state;

	write_text(f->path, "# {\"kiln_plan_file\": 1}\nkiln: 1\ncluster: demo\n");
	assert_false(plan_file_is(f->path));
}

static void test_plan_file_is_false_for_other_json(void **state)
{
	struct fx *f = *state;

	write_text(f->path, "  {\"kiln\": 1, \"cluster\": \"demo\"}\n");
	assert_false(plan_file_is(f->path));
	write_text(f->path, "  \n{\"kiln_plan_file\": 1}\n");
	assert_true(plan_file_is(f->path));
}

static void test_plan_file_is_false_for_a_missing_file(void **state)
{
	struct fx *f = *state;
	char *path = f->other = xasprintf("%s/none", f->dir);

	assert_false(plan_file_is(path));
	assert_false(plan_file_is("-"));
}

/* ---- the JSON Schema ---- */

/*
 * Run tests/check-plan-schema.py on path: its exit status, or -1 when it
 * cannot run. What it printed is shown when the status is not expect.
 */
static int check_schema(const struct fx *f, const char *path, int expect)
{
	char *log = xasprintf("%s/schema.log", f->dir);
	char *cmd = xasprintf("python3 tests/check-plan-schema.py '%s' >'%s' 2>&1", path, log);
	int rc = system(cmd);
	char *out = NULL;
	size_t len;
	struct kiln_error err = {{0}};

	rc = rc == -1 || !WIFEXITED(rc) ? -1 : WEXITSTATUS(rc);
	if (rc != expect && util_file_read_all(log, 1 << 20, &out, &len, &err) == 0)
		print_message("%s", out);
	free(out);
	unlink(log);
	free(cmd);
	free(log);
	return rc;
}

static bool have_jsonschema(void)
{
	return system("python3 -c 'import jsonschema' >/dev/null 2>&1") == 0;
}

static void test_schema_accepts_the_sample_and_a_written_plan_file(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *(*const makers[])(void) = {sample_plan, first_plan, quiet_plan};
	size_t i;

	if (!have_jsonschema())
		skip();
	assert_int_equal(check_schema(f, GOLDEN_DIR "sample.json", 0), 0);
	for (i = 0; i < ARRAY_SIZE(makers); i++) {
		json_decref(f->plan);
		f->plan = makers[i]();
		plan_values_add(f->plan);
		assert_int_equal(plan_file_write(f->path, f->plan, &err), 0);
		assert_int_equal(check_schema(f, f->path, 0), 0);
	}
}

static void test_schema_refuses_an_unknown_action_list(void **state)
{
	struct fx *f = *state;

	if (!have_jsonschema())
		skip();
	f->plan = sample_plan();
	set_change(json_array_get(json_object_get(f->plan, "resource_changes"), 4), "actions",
		   json_pack("[ss]", "update", "create"));
	assert_int_equal(json_dump_file(f->plan, f->path, JSON_INDENT(2)), 0);
	assert_int_equal(check_schema(f, f->path, 1), 1);
}

/* ---- the typed view ---- */

static void test_plan_view_types_every_change_of_both_lists(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct plan_view v;
	const struct plan_change *c;

	f->plan = sample_plan();
	assert_int_equal(plan_view_build(&v, f->plan, &err), 0);
	assert_int_equal(v.nchanges, 11);
	assert_int_equal(v.ndrift, 2);
	/* An adoption: a no-op importing bkt-0123. */
	c = &v.changes[0];
	assert_ptr_equal(c->json, json_array_get(json_object_get(f->plan, "resource_changes"), 0));
	assert_string_equal(c->address, "sim_bucket.data");
	assert_string_equal(c->type, "sim_bucket");
	assert_string_equal(c->name, "data");
	assert_int_equal(c->action, PLAN_NO_OP);
	assert_string_equal(json_string_value(json_object_get(c->importing, "id")), "bkt-0123");
	assert_string_equal(c->id, "bkt-0123");
	assert_null(c->deposed);
	/* The duplicate, deleted. */
	c = &v.changes[1];
	assert_int_equal(c->action, PLAN_DELETE);
	assert_string_equal(c->deposed, "bkt-0999");
	assert_string_equal(c->action_reason, "delete_because_duplicate");
	assert_true(json_is_null(c->after));
	assert_false(c->retain);
	/* A retained store, released. */
	c = &v.changes[2];
	assert_true(c->retain);
	assert_string_equal(c->reason,
			    "release from state; retained, not deleted (deletion: retain)");
	/* A replace, and its attribute rows and replace paths. */
	c = &v.changes[6];
	assert_int_equal(c->action, PLAN_DELETE_CREATE);
	assert_true(plan_action_deletes(c->action) && plan_action_creates(c->action));
	assert_int_equal(json_array_size(c->replace_paths), 1);
	assert_int_equal(json_array_size(c->attributes), 1);
	assert_int_equal(json_integer_value(json_object_get(c->after, "throughput_per_tib")), 250);
	/* A create: no id yet, what is known after apply. */
	c = &v.changes[7];
	assert_int_equal(c->action, PLAN_CREATE);
	assert_false(plan_action_deletes(c->action));
	assert_null(c->id);
	assert_true(json_is_true(json_object_get(c->after_unknown, "arn")));
	/* Drift. */
	assert_string_equal(v.drift[0].address, "sim_bucket.logs");
	assert_int_equal(v.drift[0].action, PLAN_DELETE);
	assert_int_equal(v.drift[1].action, PLAN_UPDATE);
	plan_view_release(&v);
	assert_null(v.changes);
	assert_int_equal(v.nchanges, 0);
}

static void test_plan_view_reads_the_plans_own_fields(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	assert_false(plan_is_destroy(f->plan));
	assert_true(json_is_true(plan_kiln(f->plan, "changes")));
	assert_null(plan_kiln(f->plan, "cost"));
	plan_kiln_set(f->plan, "destroy", json_true());
	assert_true(plan_is_destroy(f->plan));
}

static void test_typed_readers_read_the_plans_workspace_spec_cost_and_findings(void **state)
{
	struct fx *f = *state;
	struct plan_finding pf;
	double usd = -1;

	f->plan = sample_plan();
	assert_string_equal(plan_workspace(f->plan), "default");
	assert_string_equal(plan_spec_file(f->plan), "examples/quickstart.yaml");
	assert_string_equal(plan_spec_digest(f->plan), SPEC_DIGEST);
	assert_true(plan_has_changes(f->plan));
	assert_int_equal(json_integer_value(json_object_get(plan_summary(f->plan), "create")), 2);
	/* No cost and no findings yet: absent, not zero. */
	assert_null(plan_cost(f->plan));
	assert_false(plan_hourly_after(f->plan, &usd));
	assert_true(usd == -1);
	assert_null(plan_findings(f->plan));
	plan_kiln_set(f->plan, "cost",
		      json_pack("{s:f, s:f}", "hourly_before", 1.5, "hourly_after", 4.25));
	plan_kiln_set(f->plan, "findings",
		      json_pack("[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s, s:s, s:{}}]", "rule",
				"KILN-NET-001", "severity", "error", "message", "open to the world",
				"spec", "kiln.yaml:3:5", "rule", "KILN-S3-002", "severity",
				"warning", "message", "no versioning", "address",
				"aws_s3_bucket.data", "spec", "kiln.yaml:9:3", "waived"));
	plan_kiln_set(f->plan, "findings_summary", json_pack("{s:i}", "error", 1));
	assert_true(plan_hourly_before(f->plan, &usd));
	assert_true(usd == 1.5);
	assert_true(plan_hourly_after(f->plan, &usd));
	assert_true(usd == 4.25);
	assert_int_equal(json_array_size(plan_findings(f->plan)), 2);
	assert_non_null(plan_findings_summary(f->plan));
	plan_finding_read(json_array_get(plan_findings(f->plan), 0), &pf);
	assert_string_equal(pf.rule, "KILN-NET-001");
	assert_string_equal(pf.severity, "error");
	assert_string_equal(pf.message, "open to the world");
	assert_null(pf.address);
	assert_string_equal(pf.spec, "kiln.yaml:3:5");
	assert_false(pf.waived);
	plan_finding_read(json_array_get(plan_findings(f->plan), 1), &pf);
	assert_string_equal(pf.address, "aws_s3_bucket.data");
	assert_true(pf.waived);
	/* A member of the wrong type reads as absent. */
	plan_kiln_set(f->plan, "findings", json_string("none"));
	assert_null(plan_findings(f->plan));
}

static void test_plan_view_refuses_a_change_without_an_address(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct plan_view v;

	f->plan = sample_plan();
	json_object_del(json_array_get(json_object_get(f->plan, "resource_changes"), 3), "address");
	assert_int_equal(plan_view_build(&v, f->plan, &err), -1);
	assert_string_equal(err.msg,
			    "the plan is not valid: resource_changes[3].address is missing");
	assert_string_equal(err.hint, "a plan comes from kiln plan and is not edited: make it "
				      "again with kiln plan");
	assert_null(v.changes);
	assert_null(v.drift);
}

static void test_plan_view_refuses_an_unknown_action(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct plan_view v;

	f->plan = sample_plan();
	set_change(json_array_get(json_object_get(f->plan, "resource_drift"), 1), "actions",
		   json_pack("[s]", "reboot"));
	assert_int_equal(plan_view_build(&v, f->plan, &err), -1);
	assert_string_equal(err.msg, "the plan is not valid: resource_drift[1].change.actions is "
				     "[\"reboot\"], which is not an action list kiln knows");
	assert_string_equal(err.hint, "actions are [\"no-op\"], [\"create\"], [\"update\"], "
				      "[\"delete\", \"create\"], [\"create\", \"delete\"] or "
				      "[\"delete\"]");
	assert_null(v.changes);
}

static void test_plan_view_refuses_a_change_with_an_empty_type(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}, {0}};
	struct plan_view v;

	f->plan = sample_plan();
	json_object_set_new(json_array_get(json_object_get(f->plan, "resource_changes"), 0), "type",
			    json_string(""));
	assert_int_equal(plan_view_build(&v, f->plan, &err), -1);
	assert_string_equal(err.msg, "the plan is not valid: resource_changes[0].type is a string, "
				     "not a non-empty string");
}

/* ---- plan_match: a saved plan against the plan made again ---- */

/* The change of address in plan's list (the first, when a duplicate follows). */
static json_t *change_at(json_t *plan, const char *list, const char *address)
{
	json_t *rc;
	size_t i;

	json_array_foreach(json_object_get(plan, list), i, rc)
	{
		if (strcmp(json_string_value(json_object_get(rc, "address")), address) == 0)
			return rc;
	}
	fail_msg("no %s in %s", address, list);
	return NULL;
}

/* f->plan is the plan made again; the file is a copy edited by the test. */
static void assert_match_error(struct fx *f, json_t *file, const char *want)
{
	struct kiln_error err = {{0}};

	assert_int_equal(plan_match(file, f->plan, "p.kiln", &err), -1);
	assert_string_equal(err.msg, want);
	json_decref(file);
}

static void test_plan_match_accepts_other_live_values(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *file, *rc;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	/* What the cloud reads now, not what the plan decides. */
	rc = change_at(file, "resource_changes", "sim_node_group.trainers");
	set_change(rc, "before", json_pack("{s:i}", "count", 3));
	set_kiln(rc, "reason", json_string("another reason"));
	json_object_set_new(
	    json_array_get(json_object_get(json_object_get(rc, "kiln"), "attributes"), 1), "before",
	    json_integer(3));
	set_change(change_at(file, "resource_drift", "sim_node_group.trainers"), "after",
		   json_pack("{s:i}", "count", 5));
	json_object_set_new(json_object_get(file, "kiln"), "created",
			    json_string("2026-12-01T00:00:00Z"));
	assert_int_equal(plan_match(file, f->plan, "p.kiln", &err), 0);
	json_decref(file);
}

static void test_plan_match_refuses_an_action_edited_to_delete(void **state)
{
	struct fx *f = *state;
	json_t *file;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	set_change(change_at(file, "resource_changes", "sim_node_group.login"), "actions",
		   json_pack("[s]", "delete"));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "change of sim_node_group.login, change.actions is [\"delete\"] in the "
			   "file, but [\"no-op\"] now");
}

static void test_plan_match_refuses_an_edited_value_naming_it(void **state)
{
	struct fx *f = *state;
	json_t *file, *after;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	after = json_object_get(
	    json_object_get(change_at(file, "resource_changes", "sim_node_group.trainers"),
			    "change"),
	    "after");
	json_object_set_new(json_object_get(after, "labels"), "team", json_string("ops"));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "change of sim_node_group.trainers, change.after.labels.team is "
			   "\"ops\" in the file, but \"ml\" now");
}

static void test_plan_match_shows_a_value_escaped_to_ascii(void **state)
{
	struct fx *f = *state;
	json_t *file, *after;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	after = json_object_get(
	    json_object_get(change_at(file, "resource_changes", "sim_node_group.trainers"),
			    "change"),
	    "after");
	json_object_set_new(json_object_get(after, "labels"), "team",
			    json_string("\xc3\xa9\x1b[31m"));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "change of sim_node_group.trainers, change.after.labels.team is "
			   "\"\\u00E9\\u001B[31m\" in the file, but \"ml\" now");
}

static void test_plan_match_refuses_another_id_to_delete(void **state)
{
	struct fx *f = *state;
	json_t *file;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	set_kiln(change_at(file, "resource_changes", "sim_bucket.old"), "id",
		 json_string("bkt-other"));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "change of sim_bucket.old, kiln.id is \"bkt-other\" in the file, but "
			   "\"bkt-0007\" now");
}

static void test_plan_match_refuses_an_edited_attribute_policy(void **state)
{
	struct fx *f = *state;
	json_t *file, *rows;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	rows = json_object_get(
	    json_object_get(change_at(file, "resource_changes", "sim_node_group.trainers"), "kiln"),
	    "attributes");
	json_object_set_new(json_array_get(rows, 2), "policy", json_string("live"));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "change of sim_node_group.trainers, kiln.attributes[2].policy is "
			   "\"live\" in the file, but \"stop\" now");
}

static void test_plan_match_refuses_a_change_the_spec_does_not_give(void **state)
{
	struct fx *f = *state;
	json_t *file, *rc;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	rc = change_new("sim_bucket", "victim", "delete", json_pack("{s:s}", "name", "x"), NULL);
	json_array_append_new(json_object_get(file, "resource_changes"), rc);
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: the file "
			   "has the change of sim_bucket.victim, which they do not give");
}

static void test_plan_match_refuses_a_file_that_drops_a_change(void **state)
{
	struct fx *f = *state;
	json_t *file, *changes;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	changes = json_object_get(file, "resource_changes");
	/* The duplicate's delete: the file keeps the adoption of the same address. */
	json_array_remove(changes, 1);
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: the file "
			   "lacks the change of sim_bucket.data (deposed bkt-0999), which they "
			   "give");
}

static void test_plan_match_refuses_edited_drift_actions(void **state)
{
	struct fx *f = *state;
	json_t *file;

	f->plan = sample_plan();
	file = json_deep_copy(f->plan);
	set_change(change_at(file, "resource_drift", "sim_node_group.trainers"), "actions",
		   json_pack("[s]", "delete"));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "drift of sim_node_group.trainers, change.actions is [\"delete\"] in "
			   "the file, but [\"update\"] now");
}

/* ---- offerings: what a purchase buys, in the change and the Markdown ---- */

static json_t *offer(const char *id, const char *zone, const char *start, const char *end,
		     double fee, double per)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:i, s:f, s:f}", "id", id, "zone", zone,
			 "instance_type", "p5.48xlarge", "count", 2, "start", start, "end", end,
			 "duration_hours", 24, "upfront_usd", fee, "usd_per_gpu_hour", per);
}

/* text holds want; print text when it does not. */
static void assert_has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing:\n%s\nin:\n%s", want, text);
}

/* sample_plan with a block bought: its offering and the runner-up in the change. */
static json_t *plan_buying_a_block(bool runner_up)
{
	json_t *plan = sample_plan(), *rc;

	rc = change_new("sim_capacity_block", "trainers", "create", NULL,
			json_pack("{s:s}", "instance_type", "p5.48xlarge"));
	set_kiln(rc, "offering",
		 offer("cb-0a", "us-east-1a", "2026-12-03T11:30:00Z", "2026-12-04T11:30:00Z",
		       1510.27, 3.933));
	set_kiln(rc, "runner_up",
		 runner_up ? offer("cb-0b", "us-east-1b", "2026-12-04T11:30:00Z",
				   "2026-12-05T11:30:00Z", 1440, 3.75)
			   : json_null());
	{
		/* In its place: addresses are sorted. */
		json_t *changes = json_object_get(plan, "resource_changes"), *c;
		size_t i, at = json_array_size(changes);

		json_array_foreach(changes, i, c)
		{
			if (strcmp(json_string_value(json_object_get(c, "address")),
				   "sim_capacity_block.trainers") > 0) {
				at = i;
				break;
			}
		}
		json_array_insert_new(changes, at, rc);
	}
	return plan;
}

static void test_markdown_shows_the_offering_bought_and_the_runner_up_as_a_table(void **state)
{
	struct fx *f = *state;

	f->plan = plan_buying_a_block(true);
	f->text = render_markdown(f->plan);
	assert_has(
	    f->text,
	    "**Capacity Blocks**\n\n| Resource | | Offering | Zone | Instances | Start | End | "
	    "Hours | Up front | Per GPU-hour |\n| --- | --- | --- | --- | --- | --- | --- | ---: | "
	    "---: | ---: |\n| sim_capacity_block.trainers | buys | cb-0a | us-east-1a | 2 × "
	    "p5.48xlarge | 2026-12-03T11:30:00Z | 2026-12-04T11:30:00Z | 24 | $1,510.27 | $3.93 "
	    "|\n| | runner-up | cb-0b | us-east-1b | 2 × p5.48xlarge | 2026-12-04T11:30:00Z | "
	    "2026-12-05T11:30:00Z | 24 | $1,440.00 | $3.75 |\n\n");
}

static void test_markdown_says_when_there_is_no_runner_up(void **state)
{
	struct fx *f = *state;

	f->plan = plan_buying_a_block(false);
	f->text = render_markdown(f->plan);
	assert_has(f->text, "| | runner-up | none | | | | | | | |\n");
}

static void test_markdown_of_a_plan_buying_nothing_has_no_offerings_table(void **state)
{
	struct fx *f = *state;

	f->plan = sample_plan();
	f->text = render_markdown(f->plan);
	assert_null(strstr(f->text, "Capacity Blocks"));
}

static void test_schema_accepts_offerings_and_refuses_one_without_its_fee(void **state)
{
	struct fx *f = *state;
	json_t *o;

	if (!have_jsonschema())
		skip();
	f->plan = plan_buying_a_block(true);
	plan_values_add(f->plan);
	assert_int_equal(json_dump_file(f->plan, f->path, JSON_INDENT(2)), 0);
	assert_int_equal(check_schema(f, f->path, 0), 0);
	json_decref(f->plan);
	f->plan = plan_buying_a_block(false);
	plan_values_add(f->plan);
	assert_int_equal(json_dump_file(f->plan, f->path, JSON_INDENT(2)), 0);
	assert_int_equal(check_schema(f, f->path, 0), 0);
	o = json_object_get(
	    json_object_get(change_at(f->plan, "resource_changes", "sim_capacity_block.trainers"),
			    "kiln"),
	    "offering");
	json_object_del(o, "upfront_usd");
	assert_int_equal(json_dump_file(f->plan, f->path, JSON_INDENT(2)), 0);
	assert_int_equal(check_schema(f, f->path, 1), 1);
}

static void test_plan_match_refuses_an_offering_whose_fee_changed(void **state)
{
	struct fx *f = *state;
	json_t *file;

	f->plan = plan_buying_a_block(true);
	file = json_deep_copy(f->plan);
	json_object_set_new(
	    json_object_get(
		json_object_get(change_at(file, "resource_changes", "sim_capacity_block.trainers"),
				"kiln"),
		"offering"),
	    "upfront_usd", json_real(1400));
	assert_match_error(f, file,
			   "p.kiln does not match the plan its spec and state give now: in the "
			   "change of sim_capacity_block.trainers, kiln.offering.upfront_usd is "
			   "1400.0 in the file, but 1510.27 now");
}

/* The runner-up is what the plan would not buy: it may change. */
static void test_plan_match_accepts_another_runner_up(void **state)
{
	struct fx *f = *state;
	struct kiln_error err = {{0}};
	json_t *file;

	f->plan = plan_buying_a_block(true);
	file = json_deep_copy(f->plan);
	set_kiln(change_at(file, "resource_changes", "sim_capacity_block.trainers"), "runner_up",
		 json_null());
	assert_int_equal(plan_match(file, f->plan, "p.kiln", &err), 0);
	json_decref(file);
}

static void test_a_plan_file_is_used_only_in_its_workspace(void **state)
{
	struct kiln_error err = {0};

	(void)state;
	/* Neither -w nor KILN_WORKSPACE: its own workspace is taken. */
	assert_int_equal(plan_file_workspace_check("p.kiln", "dev", NULL, NULL, &err), 0);
	/* A plan naming no workspace is stale against every state commit anyway. */
	assert_int_equal(plan_file_workspace_check("p.kiln", NULL, "prod", "qa", &err), 0);
	assert_int_equal(plan_file_workspace_check("p.kiln", "dev", "dev", "qa", &err), 0);
	assert_int_equal(plan_file_workspace_check("p.kiln", "dev", "prod", NULL, &err), -1);
	assert_string_equal(err.msg, "p.kiln was made for workspace 'dev', not 'prod'");
	assert_string_equal(err.hint, "drop -w, or make a plan for that workspace");
	err = (struct kiln_error){0};
	assert_int_equal(plan_file_workspace_check("p.kiln", "dev", NULL, "qa", &err), -1);
	assert_string_equal(err.msg, "p.kiln was made for workspace 'dev', not 'qa' (KILN_WORKSPACE)");
	assert_string_equal(err.hint, "unset KILN_WORKSPACE, or make a plan for that workspace");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    plan_test(test_sample_document_is_the_golden_sample),
	    plan_test(test_typed_readers_read_the_plans_workspace_spec_cost_and_findings),
	    plan_test(test_text_shows_every_kind_of_change),
	    plan_test(test_text_in_colour_marks_symbols_and_addresses),
	    plan_test(test_markdown_is_a_pull_request_comment),
	    plan_test(test_text_of_a_first_plan_has_no_state_yet),
	    plan_test(test_markdown_of_a_first_plan),
	    plan_test(test_text_without_changes_says_so),
	    plan_test(test_markdown_without_changes_says_so),
	    plan_test(test_renderings_never_print_a_sensitive_value),
	    plan_test(test_text_names_destroy_targets_replace_and_no_refresh),
	    plan_test(test_text_turns_control_characters_into_question_marks),
	    plan_test(test_text_does_not_truncate_long_values),
	    plan_test(test_text_lists_changed_attributes_without_kiln_attributes),
	    plan_test(test_adoption_reason_follows_the_id_unless_it_names_the_adoption),
	    plan_test(test_markdown_escapes_tables_and_tags),
	    plan_test(test_markdown_fence_outlasts_backticks_in_values),
	    plan_test(test_summary_line_counts_every_action),
	    plan_test(test_summary_line_counts_a_plan_without_its_summary),
	    plan_test(test_summary_line_without_drift_ends_at_adopt),
	    plan_test(test_summary_line_of_no_changes),
	    plan_test(test_digest_ignores_key_order),
	    plan_test(test_digest_is_sha256_of_compact_sorted_ascii_json),
	    plan_test(test_digest_changes_with_any_value),
	    plan_test(test_plan_file_round_trip),
	    plan_test(test_plan_file_starts_with_its_marker),
	    plan_test(test_plan_file_refuses_a_modified_plan),
	    plan_test(test_plan_file_refuses_a_newer_file_version),
	    plan_test(test_plan_file_refuses_a_version_no_kiln_writes),
	    plan_test(test_plan_file_refuses_yaml),
	    plan_test(test_plan_file_refuses_json_that_is_not_a_plan_file),
	    plan_test(test_plan_file_refuses_duplicate_keys),
	    plan_test(test_plan_file_refuses_a_missing_file),
	    plan_test(test_plan_file_refuses_an_unknown_action_list),
	    plan_test(test_plan_file_refuses_a_before_that_is_not_an_object),
	    plan_test(test_plan_file_refuses_a_change_without_an_address),
	    plan_test(test_plan_file_refuses_an_unknown_policy),
	    plan_test(test_plan_file_refuses_a_newer_plan_version),
	    plan_test(test_plan_file_refuses_format_version_2),
	    plan_test(test_plan_file_reads_a_later_minor_format_with_new_keys),
	    plan_test(test_plan_file_write_refuses_an_invalid_plan),
	    plan_test(test_plan_file_write_names_a_missing_directory),
	    plan_test(test_plan_file_write_refuses_a_directory),
	    plan_test(test_plan_file_is_true_for_a_plan_file),
	    plan_test(test_plan_file_is_false_for_a_yaml_spec),
	    plan_test(test_plan_file_is_false_for_other_json),
	    plan_test(test_plan_file_is_false_for_a_missing_file),
	    plan_test(test_schema_accepts_the_sample_and_a_written_plan_file),
	    plan_test(test_schema_refuses_an_unknown_action_list),
	    plan_test(test_plan_match_accepts_other_live_values),
	    plan_test(test_plan_match_refuses_an_action_edited_to_delete),
	    plan_test(test_plan_match_refuses_an_edited_value_naming_it),
	    plan_test(test_plan_match_shows_a_value_escaped_to_ascii),
	    plan_test(test_plan_match_refuses_another_id_to_delete),
	    plan_test(test_plan_match_refuses_an_edited_attribute_policy),
	    plan_test(test_plan_match_refuses_a_change_the_spec_does_not_give),
	    plan_test(test_plan_match_refuses_a_file_that_drops_a_change),
	    plan_test(test_plan_match_refuses_edited_drift_actions),
	    plan_test(test_markdown_shows_the_offering_bought_and_the_runner_up_as_a_table),
	    plan_test(test_markdown_says_when_there_is_no_runner_up),
	    plan_test(test_markdown_of_a_plan_buying_nothing_has_no_offerings_table),
	    plan_test(test_schema_accepts_offerings_and_refuses_one_without_its_fee),
	    plan_test(test_plan_match_refuses_an_offering_whose_fee_changed),
	    plan_test(test_plan_match_accepts_another_runner_up),
	    plan_test(test_planned_values_hold_all_but_the_deletes_without_unknowns),
	    plan_test(test_prior_state_holds_every_before_but_a_deposed_duplicate),
	    plan_test(test_values_edited_apart_from_the_changes_are_refused),
	    plan_test(test_plan_view_types_every_change_of_both_lists),
	    plan_test(test_plan_view_reads_the_plans_own_fields),
	    plan_test(test_plan_view_refuses_a_change_without_an_address),
	    plan_test(test_plan_view_refuses_an_unknown_action),
	    plan_test(test_plan_view_refuses_a_change_with_an_empty_type),
	    cmocka_unit_test(test_a_plan_file_is_used_only_in_its_workspace),
	};

	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
