/*
 * test_graph.c - the resource DAG: waves in dependency order, stable order
 * inside a wave, cycles named by address, unknown dependencies, DOT output;
 * ranks (critical path first) and walks; and a plan's operations as a graph
 * (graph_plan.c): the order apply runs them in, and the cycle a plan is
 * refused for.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "graph.h"
#include "graph_dot.h"
#include "graph_plan.h"

/* "a b | c | d": the waves, addresses separated by spaces, waves by " | ". */
static char *waves_text(const struct graph *g, struct kiln_error *err, int *rc)
{
	size_t **waves, *nwave, count, i, j;
	struct strbuf sb = {0};

	*rc = graph_waves(g, &waves, &nwave, &count, err);
	for (i = 0; i < count; i++) {
		if (i)
			sb_adds(&sb, " | ");
		for (j = 0; j < nwave[i]; j++)
			sb_addf(&sb, "%s%s", j ? " " : "", graph_address(g, waves[i][j]));
	}
	graph_waves_free(waves, nwave, count);
	return sb_detach(&sb);
}

static void assert_waves(const struct graph *g, const char *want)
{
	struct kiln_error err = {{0}, {0}};
	int rc;
	char *got = waves_text(g, &err, &rc);

	if (rc != 0)
		fail_msg("graph_waves failed: %s", err.msg);
	assert_string_equal(got, want);
	free(got);
}

static struct graph *graph_of(const char *const *nodes, size_t n)
{
	struct graph *g = graph_new();
	size_t i;

	for (i = 0; i < n; i++)
		graph_add(g, nodes[i]);
	return g;
}

static void depend(struct graph *g, const char *a, const char *b)
{
	struct kiln_error err = {{0}, {0}};

	if (graph_depend(g, a, b, &err) != 0)
		fail_msg("graph_depend(%s, %s): %s", a, b, err.msg);
}

static void test_an_empty_graph_has_no_waves(void **state)
{
	struct graph *g = graph_new();

	(void)state;
	assert_waves(g, "");
	graph_free(g);
}

static void test_independent_resources_share_one_wave_in_address_order(void **state)
{
	static const char *const n[] = {"aws_vpc.main", "aws_s3_bucket.data",
					"aws_iam_role.trainer"};
	struct graph *g = graph_of(n, 3);

	(void)state;
	assert_waves(g, "aws_iam_role.trainer aws_s3_bucket.data aws_vpc.main");
	graph_free(g);
}

static void test_dependencies_come_in_earlier_waves(void **state)
{
	static const char *const n[] = {"group.trainers", "subnet.main", "vpc.main", "role.trainer",
					"pg.fabric"};
	struct graph *g = graph_of(n, 5);

	(void)state;
	depend(g, "subnet.main", "vpc.main");
	depend(g, "group.trainers", "subnet.main");
	depend(g, "group.trainers", "role.trainer");
	depend(g, "group.trainers", "pg.fabric");
	assert_waves(g, "pg.fabric role.trainer vpc.main | subnet.main | group.trainers");
	graph_free(g);
}

static void test_a_diamond_waits_for_its_slowest_branch(void **state)
{
	static const char *const n[] = {"d", "b", "c", "a", "c2"};
	struct graph *g = graph_of(n, 5);

	(void)state;
	depend(g, "b", "a");
	depend(g, "c", "a");
	depend(g, "c2", "c");
	depend(g, "d", "b");
	depend(g, "d", "c2");
	assert_waves(g, "a | b c | c2 | d");
	graph_free(g);
}

static void test_adding_a_node_or_an_edge_twice_changes_nothing(void **state)
{
	static const char *const n[] = {"a", "b"};
	struct graph *g = graph_of(n, 2);

	(void)state;
	assert_int_equal(graph_add(g, "a"), 0);
	assert_int_equal(graph_size(g), 2);
	depend(g, "b", "a");
	depend(g, "b", "a");
	assert_waves(g, "a | b");
	graph_free(g);
}

static void test_an_unknown_dependency_is_named(void **state)
{
	static const char *const n[] = {"group.trainers"};
	struct graph *g = graph_of(n, 1);
	struct kiln_error err = {{0}, {0}};

	(void)state;
	assert_int_equal(graph_depend(g, "group.trainers", "role.missing", &err), -1);
	assert_string_equal(err.msg,
			    "group.trainers depends on role.missing, which is not defined");
	assert_int_equal(graph_depend(g, "group.nope", "group.trainers", &err), -1);
	assert_string_equal(err.msg, "group.nope is not a resource of this graph");
	graph_free(g);
}

static void test_a_cycle_is_reported_with_its_addresses(void **state)
{
	static const char *const n[] = {"x.free", "c.three", "a.one", "b.two"};
	struct graph *g = graph_of(n, 4);
	struct kiln_error err = {{0}, {0}};
	int rc;
	char *got;

	(void)state;
	depend(g, "a.one", "b.two");
	depend(g, "b.two", "c.three");
	depend(g, "c.three", "a.one");
	got = waves_text(g, &err, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(got, "");
	assert_string_equal(err.msg, "the resources depend on each other in a cycle: "
				     "a.one -> b.two -> c.three -> a.one");
	assert_string_equal(err.hint, "break the cycle: one of them must not depend on the next");
	free(got);
	graph_free(g);
}

static void test_a_cycle_behind_a_placed_node_names_only_the_cycle(void **state)
{
	static const char *const n[] = {"a", "m", "n", "z"};
	struct graph *g = graph_of(n, 4);
	struct kiln_error err = {{0}, {0}};
	int rc;
	char *got;

	(void)state;
	depend(g, "m", "a");
	depend(g, "z", "m"); /* z waits on the cycle, but is not part of it */
	depend(g, "m", "n");
	depend(g, "n", "m");
	got = waves_text(g, &err, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(err.msg, "the resources depend on each other in a cycle: m -> n -> m");
	free(got);
	graph_free(g);
}

static void test_a_resource_that_depends_on_itself_is_a_cycle(void **state)
{
	static const char *const n[] = {"vpc.main"};
	struct graph *g = graph_of(n, 1);
	struct kiln_error err = {{0}, {0}};
	int rc;
	char *got;

	(void)state;
	depend(g, "vpc.main", "vpc.main");
	got = waves_text(g, &err, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(err.msg,
			    "the resources depend on each other in a cycle: vpc.main -> vpc.main");
	free(got);
	graph_free(g);
}

static void test_ten_thousand_resources_in_a_chain_make_ten_thousand_waves(void **state)
{
	struct graph *g = graph_new();
	struct kiln_error err = {{0}, {0}};
	size_t **waves, *nwave, count, i;
	char a[32], b[32];

	(void)state;
	for (i = 0; i < 10000; i++) {
		snprintf(a, sizeof(a), "r.%05zu", i);
		graph_add(g, a);
		if (i) {
			snprintf(b, sizeof(b), "r.%05zu", i - 1);
			depend(g, a, b);
		}
	}
	assert_int_equal(graph_waves(g, &waves, &nwave, &count, &err), 0);
	assert_int_equal(count, 10000);
	assert_string_equal(graph_address(g, waves[9999][0]), "r.09999");
	graph_waves_free(waves, nwave, count);
	graph_free(g);
}

static void test_dot_lists_nodes_and_edges_in_order_and_escapes_quotes(void **state)
{
	static const char *const n[] = {"group.trainers", "vpc.main", "odd\"name"};
	struct graph *g = graph_of(n, 3);
	char *dot;

	(void)state;
	depend(g, "group.trainers", "vpc.main");
	depend(g, "group.trainers", "odd\"name");
	dot = graph_dot(g, "llm-pretrain/default");
	assert_string_equal(dot, "digraph \"llm-pretrain/default\" {\n"
				 "  rankdir = \"RL\";\n"
				 "  \"group.trainers\";\n"
				 "  \"odd\\\"name\";\n"
				 "  \"vpc.main\";\n"
				 "  \"group.trainers\" -> \"odd\\\"name\";\n"
				 "  \"group.trainers\" -> \"vpc.main\";\n"
				 "}\n");
	free(dot);
	graph_free(g);
}

static void test_dot_styled_clusters_by_tier_and_draws_a_legend(void **state)
{
	struct graph *g = graph_new();
	struct graph_dot_node nodes[3] = {{0}};
	char *dot;

	(void)state;
	graph_add(g, "net.main");
	graph_add(g, "group.g");
	graph_add(g, "secret.s");
	graph_link_kind(g, graph_find(g, "group.g"), graph_find(g, "net.main"), GRAPH_EDGE_CREATED);
	nodes[graph_find(g, "net.main")].tier = "network";
	nodes[graph_find(g, "group.g")].tier = "compute";
	dot = graph_dot_styled(g, "c", &(struct graph_dot_style){.nodes = nodes});
	assert_string_equal(
	    dot, "digraph \"c\" {\n  rankdir = \"RL\";\n  node [shape = \"box\"];\n"
		 "  subgraph \"cluster_network\" {\n    label = \"network\";\n    \"net.main\";\n  }\n"
		 "  subgraph \"cluster_compute\" {\n    label = \"compute\";\n    \"group.g\";\n  }\n"
		 "  \"secret.s\";\n"
		 "  \"group.g\" -> \"net.main\" [label = \"created\", style = \"dashed\"];\n"
		 "  subgraph \"cluster_legend\" {\n    label = \"legend\";\n    style = \"dashed\";\n"
		 "    node [shape = \"plaintext\"];\n"
		 "    \"legend: A\" [label = \"A\"];\n    \"legend: B\" [label = \"B\"];\n"
		 "    \"legend: C\" [label = \"C\"];\n    \"legend: D\" [label = \"D\"];\n"
		 "    \"legend: A\" -> \"legend: B\" [label = \"A needs B ready\"];\n"
		 "    \"legend: C\" -> \"legend: D\" [label = \"created: C needs D only created\", "
		 "style = \"dashed\"];\n  }\n}\n");
	free(dot);
	graph_free(g);
}

static void test_dot_styled_overlays_a_plans_action_and_cost(void **state)
{
	struct graph *g = graph_new();
	struct graph_dot_node nodes[2] = {{0}};
	char *dot;

	(void)state;
	graph_add(g, "group.g");
	graph_add(g, "odd.\"q\\");
	nodes[0] = (struct graph_dot_node){.action = "update", .has_hourly = true, .hourly = 393.3677};
	nodes[1] = (struct graph_dot_node){.action = "delete", .has_hourly = true, .by_use = true};
	dot = graph_dot_styled(g, "c", &(struct graph_dot_style){.nodes = nodes, .plan = true});
	assert_non_null(strstr(dot, "  \"group.g\" [label = \"group.g\\nupdate, $393.37/h\", style = "
				    "\"filled\", fillcolor = \"#fff2a8\"];\n"));
	/* A quote and a backslash in an address stay inside the label. */
	assert_non_null(strstr(dot, "  \"odd.\\\"q\\\\\" [label = \"odd.\\\"q\\\\\\ndelete, $0.00/h + "
				    "use\", style = \"filled\", fillcolor = \"#fcc5c0\"];\n"));
	assert_non_null(strstr(dot, "    \"legend: replace\" [label = \"replace\", shape = \"box\", "
				    "style = \"filled\", fillcolor = \"#e5c7f5\"];\n"));
	assert_non_null(strstr(dot, "    \"legend: create\" -> \"legend: update\" [style = \"invis\"];\n"));
	free(dot);
	graph_free(g);
}

static void test_a_rank_is_one_more_than_the_largest_rank_waiting_on_it(void **state)
{
	static const char *const n[] = {"role", "bucket", "group", "policy", "lone"};
	struct graph *g = graph_of(n, 5);
	size_t rank[5];

	(void)state;
	depend(g, "policy", "role");
	depend(g, "policy", "bucket");
	depend(g, "group", "policy");
	depend(g, "group", "role");
	graph_ranks(g, rank);
	assert_int_equal(rank[graph_find(g, "role")], 3);
	assert_int_equal(rank[graph_find(g, "bucket")], 3);
	assert_int_equal(rank[graph_find(g, "policy")], 2);
	assert_int_equal(rank[graph_find(g, "group")], 1);
	assert_int_equal(rank[graph_find(g, "lone")], 1);
	graph_free(g);
}

static void test_a_node_on_a_cycle_or_waiting_on_one_keeps_rank_one(void **state)
{
	static const char *const n[] = {"a", "b", "c", "d"};
	struct graph *g = graph_of(n, 4);
	size_t rank[4];

	(void)state;
	depend(g, "a", "b");
	depend(g, "b", "a");
	depend(g, "c", "a"); /* waits on the cycle */
	depend(g, "a", "d"); /* the cycle waits on it: one more than the cycle's 1 */
	graph_ranks(g, rank);
	assert_int_equal(rank[graph_find(g, "a")], 1);
	assert_int_equal(rank[graph_find(g, "b")], 1);
	assert_int_equal(rank[graph_find(g, "c")], 1);
	assert_int_equal(rank[graph_find(g, "d")], 2);
	graph_free(g);
}

static void test_users_and_deps_are_listed_in_the_order_linked(void **state)
{
	static const char *const n[] = {"net", "x", "y"};
	struct graph *g = graph_of(n, 3);
	const size_t *v;
	size_t count;

	(void)state;
	graph_link(g, 2, 0);
	graph_link(g, 1, 0);
	graph_link(g, 1, 0);
	v = graph_users(g, 0, &count);
	assert_int_equal(count, 2);
	assert_int_equal(v[0], 2);
	assert_int_equal(v[1], 1);
	v = graph_deps(g, 1, &count);
	assert_int_equal(count, 1);
	assert_int_equal(v[0], 0);
	graph_free(g);
}

static bool mark(void *arg, size_t i)
{
	char *seen = arg;

	if (seen[i])
		return false;
	seen[i] = 1;
	return true;
}

static void test_a_walk_reaches_what_depends_on_a_node_and_stops_where_told(void **state)
{
	static const char *const n[] = {"net", "group", "policy", "other", "far"};
	struct graph *g = graph_of(n, 5);
	char seen[5] = {0};

	(void)state;
	depend(g, "group", "net");
	depend(g, "policy", "group");
	depend(g, "far", "other");
	depend(g, "other", "policy");
	seen[3] = 1; /* "other" is already seen: the walk goes no further than it */
	graph_walk(g, 0, true, mark, seen);
	assert_memory_equal(seen, ((char[]){1, 1, 1, 1, 0}), 5);
	memset(seen, 0, sizeof(seen));
	graph_walk(g, 2, false, mark, seen);
	assert_memory_equal(seen, ((char[]){1, 1, 1, 0, 0}), 5);
	graph_free(g);
}

static void test_graph_cycle_is_null_without_one_and_names_one_with_it(void **state)
{
	static const char *const n[] = {"a", "b", "c"};
	struct graph *g = graph_of(n, 3);
	char *cycle;

	(void)state;
	depend(g, "b", "a");
	depend(g, "c", "b");
	assert_null(graph_cycle(g));
	depend(g, "a", "c");
	cycle = graph_cycle(g);
	assert_string_equal(cycle, "a -> c -> b -> a");
	free(cycle);
	graph_free(g);
}

static void test_a_chain_of_a_hundred_thousand_ranks_and_walks_without_recursion(void **state)
{
	struct graph *g = graph_new();
	size_t i, n = 100000, *rank = calloc(n, sizeof(*rank));
	char *seen = calloc(n, 1), name[32];

	(void)state;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "r.%06zu", i);
		graph_add(g, name);
		if (i)
			graph_link(g, i, i - 1);
	}
	graph_ranks(g, rank);
	assert_int_equal(rank[0], n);
	graph_walk(g, 0, true, mark, seen);
	assert_int_equal(seen[n - 1], 1);
	assert_null(graph_cycle(g));
	free(seen);
	free(rank);
	graph_free(g);
}

/* The plan document of a JSON text; fails the test when it does not parse. */
static json_t *doc(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, 0, &jerr);

	if (!v)
		fail_msg("bad test JSON: %s", jerr.text);
	return v;
}

/* A resource_changes entry: ADDRESS, actions JSON, deps JSON. */
#define CHANGE(addr, actions, deps)                                                                \
	"{\"address\": \"" addr "\", \"type\": \"t\", \"name\": \"" addr "\", "                    \
	"\"change\": {\"actions\": " actions "}, "                                                 \
	"\"kiln\": {\"id\": \"id-" addr "\", \"deps\": " deps "}}"

/* The graph of a plan's operations, as "NODE <- WAITS-FOR, ...; ..." over every node. */
static char *order_text(const json_t *plan, const json_t *recorded)
{
	struct kiln_error err = {{0}, {0}};
	struct plan_view v;
	struct plan_op *ops;
	struct strbuf sb = {0};
	struct graph *g;
	size_t i, j, n = 0, nd;
	const size_t *d;

	assert_int_equal(plan_view_build(&v, plan, &err), 0);
	ops = calloc(2 * v.nchanges + 1, sizeof(*ops));
	for (i = 0; i < v.nchanges; i++)
		n += graph_plan_ops(&v.changes[i], recorded, false, &ops[n]);
	g = graph_plan_order(ops, n, recorded);
	for (i = 0; i < graph_size(g); i++) {
		sb_addf(&sb, "%s%s", i ? "; " : "", graph_address(g, i));
		d = graph_deps(g, i, &nd);
		for (j = 0; j < nd; j++)
			sb_addf(&sb, "%s%s", j ? ", " : " <- ", graph_address(g, d[j]));
	}
	graph_free(g);
	free(ops);
	plan_view_release(&v);
	return sb_detach(&sb);
}

static void test_a_replace_creates_after_it_deletes_and_after_what_it_uses(void **state)
{
	json_t *plan = doc("{\"resource_changes\": [" CHANGE(
	    "net.main", "[\"delete\", \"create\"]",
	    "[]") ", " CHANGE("group.a", "[\"delete\", \"create\"]",
			      "[\"net.main\"]") ", " CHANGE("role.r", "[\"no-op\"]", "[]") "]}");
	json_t *recorded = doc("{\"net.main\": {\"deps\": []}, "
			       "\"group.a\": {\"deps\": [\"net.main\"]}}");
	char *got = order_text(plan, recorded);

	(void)state;
	assert_string_equal(
	    got, "net.main (replace: delete old) <- group.a (replace: delete old); "
		 "net.main (replace) <- net.main (replace: delete old); "
		 "group.a (replace: delete old); "
		 "group.a (replace) <- group.a (replace: delete old), net.main (replace)");
	free(got);
	json_decref(recorded);
	json_decref(plan);
}

/* graph_plan_check of plan, through its view. */
static int check_plan(const json_t *plan, const json_t *recorded, struct kiln_error *err)
{
	struct plan_view v;
	int rc;

	assert_int_equal(plan_view_build(&v, plan, err), 0);
	rc = graph_plan_check(&v, recorded, err);
	plan_view_release(&v);
	return rc;
}

/*
 * graph_plan_check of a plan replacing net.main and group.a, whose spec has
 * the group use the network, over recorded (JSON text, or NULL for none).
 */
static int check_two_replacements(const char *recorded_text, struct kiln_error *err)
{
	json_t *plan = doc("{\"resource_changes\": [" CHANGE(
	    "net.main", "[\"delete\", \"create\"]",
	    "[]") ", " CHANGE("group.a", "[\"delete\", \"create\"]", "[\"net.main\"]") "]}");
	json_t *recorded = recorded_text ? doc(recorded_text) : NULL;
	int rc = check_plan(plan, recorded, err);

	json_decref(recorded);
	json_decref(plan);
	return rc;
}

static void test_a_plan_whose_deletes_wait_on_each_other_is_refused_naming_them(void **state)
{
	struct kiln_error err = {0};

	(void)state;
	/* The state says the network used the group. */
	assert_int_equal(check_two_replacements("{\"net.main\": {\"deps\": [\"group.a\"]}, "
						"\"group.a\": {\"deps\": []}}",
						&err),
			 -1);
	assert_string_equal(err.msg,
			    "the plan's operations wait for each other in a cycle (each "
			    "waits for the next): group.a (replace: delete old) -> "
			    "net.main (replace: delete old) -> group.a (replace: delete old)");
	assert_string_equal(
	    err.hint, "the deps the state records and the deps the spec gives order them "
		      "both ways; `kiln log -p` shows how the state's deps changed: point the "
		      "workspace back at its last good commit, or change the spec so one no "
		      "longer needs the next");
}

static void test_a_plan_with_the_same_deps_both_sides_passes_the_check(void **state)
{
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(check_two_replacements("{\"net.main\": {\"deps\": []}, "
						"\"group.a\": {\"deps\": [\"net.main\"]}}",
						&err),
			 0);
	assert_int_equal(check_two_replacements(NULL, &err), 0);
}

static void test_a_drifted_away_resource_orders_nothing(void **state)
{
	/* The state's net.main deps would make the cycle, but it was deleted outside kiln. */
	json_t *plan = doc("{\"resource_changes\": [" CHANGE(
	    "group.a", "[\"delete\"]",
	    "[\"net.main\"]") ", " CHANGE("net.main", "[\"delete\"]",
					  "[]") "], "
						"\"resource_drift\": [{\"address\": \"net.main\", "
						"\"type\": \"t\", \"name\": \"main\", "
						"\"change\": {\"actions\": [\"delete\"]}}]}");
	json_t *recorded = doc("{\"net.main\": {\"deps\": [\"group.a\"]}, "
			       "\"group.a\": {\"deps\": []}}");
	struct kiln_error err = {0};

	(void)state;
	assert_int_equal(check_plan(plan, recorded, &err), 0);
	/* The caller's recorded resources are left as they were. */
	assert_non_null(json_object_get(recorded, "net.main"));
	json_decref(recorded);
	json_decref(plan);
}

static void test_engine_graph_refuses_resources_whose_deps_and_after_make_a_cycle(void **state)
{
	/* The group uses the file system, which the provider orders after the group. */
	json_t *resources = doc("{\"group.a\": {\"deps\": [\"fs.scratch\", \"net.main\"]}, "
				"\"fs.scratch\": {\"deps\": [\"net.main\"], "
				"\"after\": [\"group.a\"]}, \"net.main\": {\"deps\": []}}");
	struct kiln_error err = {0};
	struct graph *g;

	(void)state;
	assert_null(engine_graph(resources, &err));
	assert_string_equal(err.msg, "the resources depend on each other in a cycle: "
				     "fs.scratch -> group.a -> fs.scratch");
	assert_string_equal(err.hint, "break the cycle: one of them must not depend on the next");
	json_object_del(json_object_get(resources, "fs.scratch"), "after");
	g = engine_graph(resources, &err);
	assert_non_null(g);
	assert_int_equal(graph_size(g), 3);
	graph_free(g);
	json_decref(resources);
}

static void test_an_edge_linked_created_and_ready_needs_its_dependency_ready(void **state)
{
	struct graph *g = graph_new();
	size_t fs = graph_add(g, "fs.scratch"), pol = graph_add(g, "policy.p"),
	       mt = graph_add(g, "mount.m"), n;

	(void)state;
	graph_link_kind(g, pol, fs, GRAPH_EDGE_CREATED);
	graph_link(g, mt, fs);
	assert_int_equal(graph_edge_kind(g, pol, fs), GRAPH_EDGE_CREATED);
	assert_int_equal(graph_edge_kind(g, mt, fs), GRAPH_EDGE_READY);
	/* Linked again: created again changes nothing, ready wins. */
	graph_link_kind(g, pol, fs, GRAPH_EDGE_CREATED);
	assert_int_equal(graph_edge_kind(g, pol, fs), GRAPH_EDGE_CREATED);
	graph_link_kind(g, mt, fs, GRAPH_EDGE_CREATED);
	assert_int_equal(graph_edge_kind(g, mt, fs), GRAPH_EDGE_READY);
	graph_link(g, pol, fs);
	assert_int_equal(graph_edge_kind(g, pol, fs), GRAPH_EDGE_READY);
	graph_deps(g, pol, &n);
	assert_int_equal(n, 1);
	/* No edge at all is ready too: nothing starts early by default. */
	assert_int_equal(graph_edge_kind(g, fs, pol), GRAPH_EDGE_READY);
	graph_free(g);
}

static void test_dot_dashes_and_labels_an_edge_that_needs_only_created(void **state)
{
	struct graph *g = graph_new();
	char *dot;

	(void)state;
	graph_add(g, "fs.scratch");
	graph_add(g, "policy.p");
	graph_add(g, "mount.m");
	graph_link_kind(g, graph_find(g, "policy.p"), graph_find(g, "fs.scratch"),
			GRAPH_EDGE_CREATED);
	graph_link(g, graph_find(g, "mount.m"), graph_find(g, "fs.scratch"));
	dot = graph_dot(g, "c");
	assert_string_equal(dot, "digraph \"c\" {\n  rankdir = \"RL\";\n  \"fs.scratch\";\n"
				 "  \"mount.m\";\n  \"policy.p\";\n"
				 "  \"mount.m\" -> \"fs.scratch\";\n"
				 "  \"policy.p\" -> \"fs.scratch\" [label = \"created\", style = "
				 "\"dashed\"];\n}\n");
	free(dot);
	graph_free(g);
}

static void test_a_plan_operation_needs_what_its_change_lists_as_created_only_created(void **state)
{
	json_t *plan =
	    doc("{\"resource_changes\": ["
		"{\"address\": \"fs.a\", \"type\": \"fs\", \"name\": \"a\", "
		"\"change\": {\"actions\": [\"create\"]}, \"kiln\": {\"id\": null, \"deps\": []}}, "
		"{\"address\": \"policy.p\", \"type\": \"policy\", \"name\": \"p\", "
		"\"change\": {\"actions\": [\"create\"]}, \"kiln\": {\"id\": null, "
		"\"deps\": [\"fs.a\"], \"created_only\": [\"fs.a\"]}}, "
		"{\"address\": \"mount.m\", \"type\": \"mount\", \"name\": \"m\", "
		"\"change\": {\"actions\": [\"create\"]}, \"kiln\": {\"id\": null, "
		"\"deps\": [\"fs.a\"]}}]}");
	json_t *recorded = json_object();
	struct kiln_error err = {{0}, {0}};
	struct plan_view v;
	struct plan_op ops[6];
	struct graph *g;
	size_t i, n = 0;

	(void)state;
	assert_int_equal(plan_view_build(&v, plan, &err), 0);
	for (i = 0; i < v.nchanges; i++)
		n += graph_plan_ops(&v.changes[i], recorded, false, &ops[n]);
	g = graph_plan_order(ops, n, recorded);
	assert_int_equal(graph_edge_kind(g, 1, 0), GRAPH_EDGE_CREATED);
	assert_int_equal(graph_edge_kind(g, 2, 0), GRAPH_EDGE_READY);
	graph_free(g);
	plan_view_release(&v);
	json_decref(recorded);
	json_decref(plan);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_an_empty_graph_has_no_waves),
	    cmocka_unit_test(test_independent_resources_share_one_wave_in_address_order),
	    cmocka_unit_test(test_dependencies_come_in_earlier_waves),
	    cmocka_unit_test(test_a_diamond_waits_for_its_slowest_branch),
	    cmocka_unit_test(test_adding_a_node_or_an_edge_twice_changes_nothing),
	    cmocka_unit_test(test_an_unknown_dependency_is_named),
	    cmocka_unit_test(test_a_cycle_is_reported_with_its_addresses),
	    cmocka_unit_test(test_a_cycle_behind_a_placed_node_names_only_the_cycle),
	    cmocka_unit_test(test_a_resource_that_depends_on_itself_is_a_cycle),
	    cmocka_unit_test(test_ten_thousand_resources_in_a_chain_make_ten_thousand_waves),
	    cmocka_unit_test(test_dot_lists_nodes_and_edges_in_order_and_escapes_quotes),
	    cmocka_unit_test(test_dot_styled_clusters_by_tier_and_draws_a_legend),
	    cmocka_unit_test(test_dot_styled_overlays_a_plans_action_and_cost),
	    cmocka_unit_test(test_a_rank_is_one_more_than_the_largest_rank_waiting_on_it),
	    cmocka_unit_test(test_a_node_on_a_cycle_or_waiting_on_one_keeps_rank_one),
	    cmocka_unit_test(test_users_and_deps_are_listed_in_the_order_linked),
	    cmocka_unit_test(test_a_walk_reaches_what_depends_on_a_node_and_stops_where_told),
	    cmocka_unit_test(test_graph_cycle_is_null_without_one_and_names_one_with_it),
	    cmocka_unit_test(test_a_chain_of_a_hundred_thousand_ranks_and_walks_without_recursion),
	    cmocka_unit_test(test_a_replace_creates_after_it_deletes_and_after_what_it_uses),
	    cmocka_unit_test(test_a_plan_whose_deletes_wait_on_each_other_is_refused_naming_them),
	    cmocka_unit_test(test_a_plan_with_the_same_deps_both_sides_passes_the_check),
	    cmocka_unit_test(test_a_drifted_away_resource_orders_nothing),
	    cmocka_unit_test(test_engine_graph_refuses_resources_whose_deps_and_after_make_a_cycle),
	    cmocka_unit_test(test_an_edge_linked_created_and_ready_needs_its_dependency_ready),
	    cmocka_unit_test(test_dot_dashes_and_labels_an_edge_that_needs_only_created),
	    cmocka_unit_test(
		test_a_plan_operation_needs_what_its_change_lists_as_created_only_created),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
