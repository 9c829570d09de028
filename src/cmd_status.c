/*
 * cmd_status.c - `kiln status`: the live cluster of a workspace, its node
 * groups and nodes, its storage, what it has cost since it came up, and the
 * time left before its TTL ends.
 *
 * Made from a plan (cmd_run_plan_spec; no lock): the refresh reads what is
 * live, and the plan's cost section prices what runs now (hourly_before).
 * Cost so far is the running lifetime's cost from the ledger, computed by
 * report_workspace, the walk `kiln report` makes: every resize and every
 * up-front purchase counted, the same figure to the cent at one instant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "apply.h"
#include "cmd_run.h"
#include "cmds.h"
#include "str.h"
#include "cost.h"
#include "expiry.h"
#include "health.h"
#include "plan.h"
#include "report.h"
#include "runop.h"
#include "scheduler.h"
#include "state.h"
#include "jsonw.h"
#include "timefmt.h"
#include "utilization.h"
#include "watch.h"
#include "signals.h"
#include "strbuf.h"
#include <unistd.h>

enum { OPT_WINDOW = 1, OPT_NO_SSH, OPT_WATCH };

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    RUN_OPT_REFRESH,
    {"json", 0, false, OPT_RUN_JSON, NULL, "print the status as one JSON document"},
    {"window", 0, true, OPT_WINDOW, "DURATION",
     "measure GPU utilization and storage throughput over the last DURATION (default 15m)"},
    {"no-ssh", 0, false, OPT_NO_SSH, NULL,
     "do not ask the Slurm controller over ssh; count joined nodes from their health reports"},
    /* No getopt argument: take_watch takes the optional INTERVAL out before. */
    {"watch", 0, false, OPT_WATCH, "[INTERVAL]",
     "read it again every INTERVAL (default 5s) until interrupted"},
};

const struct cmd_info cmd_status_info = {
    .name = "status",
    .usage = "[SPEC] [-w WS] [--watch [INTERVAL]] [OPTIONS]",
    .summary = "show the live cluster: groups, nodes, storage, cost so far, time left",
    .description = "Read the workspace's state, refresh it from the cloud (unless\n"
		   "--refresh=false), and show each node group with its running nodes (one line\n"
		   "each: address, zone, state, and the health the node reported with the\n"
		   "reason, or not reported), each store, the cost per hour of what runs now,\n"
		   "the cost so far (from the cost ledger in the state history, every resize\n"
		   "and up-front purchase counted: the figure kiln report gives the running\n"
		   "lifetime at the same instant, to the cent), and the time left before its\n"
		   "TTL ends. Changes a plan would make are\n"
		   "counted. Nothing is changed and no lock is taken.\n\n"
		   "With scheduler: slurm, the Slurm controller's group, and per partition how\n"
		   "many nodes joined, asked from slurmctld itself: sinfo runs on the controller\n"
		   "node over the ssh kiln ssh uses (batch mode, a 5 s connect timeout, 15 s in\n"
		   "all, no prompt, a jump's ssh included), giving joined, idle, allocated and\n"
		   "down; a node slurmctld does not hear from (down*, as one that left in a\n"
		   "shrink) is not joined but not responding. When the controller cannot be\n"
		   "asked (deleted outside kiln, unreachable), or with --no-ssh, the count comes\n"
		   "from the nodes' health reports (healthy: slurmd started), the line says\n"
		   "why, and the hint follows the node groups.\n\n"
		   "Utilization, over the last --window: per node group the GPU utilization\n"
		   "(mean, lowest and highest node) and GPU memory, per Lustre store its\n"
		   "throughput against what the spec provisioned, and a diagnosis with the\n"
		   "figures behind it: busy, idle, imbalanced, storage-bound (with the fix and\n"
		   "its cost) or no data (the agent is missing or its metrics are not\n"
		   "arriving). On sim, KILN_SIM_GPU_UTIL and KILN_SIM_LUSTRE_LOAD simulate it\n"
		   "(kiln-sim(7)).\n\n"
		   "--watch [INTERVAL] refreshes the status every INTERVAL (seconds, or a\n"
		   "duration as 30s or 1m; default 5s) until ^C, which ends it with status 0.\n"
		   "On a terminal each status is drawn over the last; otherwise the first is\n"
		   "printed whole and then one line per change (PATH: OLD -> NEW, what moves\n"
		   "with the clock alone left out); with --json, one JSON document a line, each\n"
		   "time the status changed.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-status(1), kiln-up(1), kiln-ttl(1)",
};

/*
 * A group's nodes as the refresh found them (the recorded ones with
 * --refresh=false) and their health: "members" and "health" beside the
 * group's counts.
 */
static void group_nodes(const struct op_run *r, const char *addr, const json_t *res,
			const json_t *attrs, json_t *g)
{
	const json_t *found = json_array_get(json_object_get(r->live, addr), 0);
	const json_t *a = found ? json_object_get(found, "attrs") : attrs;
	const json_t *nodes = json_object_get(a, "nodes");
	json_t *h = health_group(addr, state_resource_id(res), a);

	json_object_set_new(g, "members",
			    json_is_array(nodes) ? json_deep_copy(nodes) : json_array());
	json_object_del(h, "group");
	json_object_del(h, "address");
	json_object_del(h, "id");
	json_object_del(h, "nodes");
	json_object_set_new(g, "health", h);
}

/*
 * scheduler: slurm: the controller group says so; a partition's group how
 * many of its running nodes joined. A node's boot reports it unhealthy when
 * its scheduler part failed (providers/bootstrap.c), so a healthy node has
 * started its slurmd: "joined" is that count, from the nodes' own reports.
 */
static void group_scheduler(const struct spec *spec, const char *name, json_t *g)
{
	const struct spec_group *sg = spec ? spec_group_find(spec, name) : NULL;
	const char *part;

	if (!sg || spec->scheduler.type != SCHEDULER_SLURM)
		return;
	if (spec->scheduler.controller.name && strcmp(spec->scheduler.controller.name, name) == 0) {
		json_object_set_new(g, "slurm", json_pack("{s:s}", "role", "controller"));
		return;
	}
	part = spec_group_partition(spec, sg);
	if (!part)
		return;
	json_object_set_new(g, "slurm",
			    json_pack("{s:s, s:s, s:b, s:O?, s:O?}", "role", "partition",
				      "partition", part, "default",
				      spec_default_partition(spec) == sg, "joined",
				      json_object_get(json_object_get(g, "health"), "healthy"),
				      "nodes", json_object_get(g, "nodes")));
}

/*
 * The resources hosts are read from: each recorded one as the refresh found
 * it; one the refresh did not find is left out (its recorded address may be
 * someone else's now), and *gone is its address when it is the controller's
 * group. The recorded ones only with --refresh=false.
 */
static json_t *refreshed(const struct op_run *r, const char *controller, const char **gone)
{
	json_t *out = json_object();
	const json_t *res;
	const char *addr, *dot;

	*gone = NULL;
	state_foreach_resource(r->state, addr, res)
	{
		const json_t *found = json_array_get(json_object_get(r->live, addr), 0);

		if (found || !r->live)
			json_object_set_new(out, addr, jsonc_share(found ? found : res));
		else if ((dot = strchr(addr, '.')) && strcmp(dot + 1, controller) == 0 &&
			 state_resource_attr(res, "instance_ids"))
			*gone = addr;
	}
	return out;
}

/*
 * scheduler: slurm: each partition's counts from slurmctld itself when the
 * controller answers over ssh (ask), else the health count already there,
 * and why. doc's "scheduler" says which: {"type", "source": "controller",
 * "controller": NODE} or {"type", "source": "health", "asked", "reason", "hint"}.
 */
static void status_scheduler(const struct op_run *r, bool ask, json_t *doc)
{
	static const char *const count_keys[] = {"joined", "idle",  "allocated",
						 "down",   "other", "not_responding"};
	struct kiln_error err = {0};
	json_t *counts = NULL, *resources, *g, *sc;
	char *node = NULL;
	size_t i;

	if (!r->e->spec || r->e->spec->scheduler.type != SCHEDULER_SLURM)
		return;
	if (ask) {
		const char *gone;

		resources = refreshed(r, r->e->spec->scheduler.controller.name ?: "", &gone);
		if (gone) {
			kiln_error_set(
			    &err, "controller deleted outside kiln: the refresh did not find %s",
			    gone);
			kiln_error_hint(&err, "kiln up makes it again (kiln plan shows it)");
		} else {
			scheduler_ask_controller(r->e, resources, getenv(ACCESS_ENDPOINT_ENV),
						 &counts, &node, &err);
		}
		json_decref(resources);
	} else {
		kiln_error_set(&err, "--no-ssh");
	}
	if (counts) {
		sc = json_pack("{s:s, s:s, s:s}", "type", "slurm", "source", "controller",
			       "controller", node);
	} else {
		sc = json_pack("{s:s, s:s, s:b, s:s}", "type", "slurm", "source", "health", "asked",
			       ask, "reason", err.msg);
		if (err.hint[0])
			json_object_set_new(sc, "hint", json_string(err.hint));
	}
	json_object_set_new(doc, "scheduler", sc);
	json_array_foreach(json_object_get(doc, "groups"), i, g)
	{
		json_t *sl = json_object_get(g, "slurm");
		const json_t *c;

		if (!json_is_string(json_object_get(sl, "partition")))
			continue;
		json_object_set_new(sl, "source", json_string(counts ? "controller" : "health"));
		if (!counts)
			continue;
		c = json_object_get(counts, json_string_value(json_object_get(sl, "partition")));
		for (size_t k = 0; k < ARRAY_SIZE(count_keys); k++)
			json_object_set_new(
			    sl, count_keys[k],
			    json_integer(json_integer_value(json_object_get(c, count_keys[k]))));
	}
	json_decref(counts);
	free(node);
}

static json_t *build(const struct op_run *r, int64_t now, const json_t *lifetime)
{
	const json_t *cost = plan_kiln(r->plan, "cost");
	const json_t *x = state_expiry(r->state), *res;
	const char *created = state_created(r->state);
	json_t *doc, *groups = json_array(), *storage = json_array(), *ids;
	double hourly = json_number_value(json_object_get(cost, "hourly_before"));
	const char *addr;
	int64_t t;
	size_t nodes = 0;

	json_t *live = json_object();
	size_t i;

	/* What the refresh found changed or gone outside kiln wins over the record. */
	for (i = 0; i < r->view.ndrift; i++)
		json_object_set_new(live, r->view.drift[i].address,
				    jsonc_share(r->view.drift[i].after));
	state_foreach_resource(r->state, addr, res)
	{
		const json_t *a = state_resource_attrs(res);
		const char *name = strchr(addr, '.') + 1;

		if (json_object_get(live, addr))
			a = json_object_get(live, addr);
		if (json_is_null(a)) {
			/* Deleted outside kiln: for a group, no node running. */
			if (!state_resource_attr(res, "instance_ids"))
				continue;
			json_array_append_new(
			    groups, json_pack("{s:s, s:s, s:n, s:i, s:O?}", "name", name, "address",
					      addr, "instance_type", "nodes", 0, "count",
					      state_resource_attr(res, "count")));
			continue;
		}

		if ((ids = json_object_get(a, "instance_ids")) && json_is_array(ids)) {
			json_t *g =
			    json_pack("{s:s, s:s, s:O?, s:I, s:I}", "name", name, "address", addr,
				      "instance_type", json_object_get(a, "instance_type"), "nodes",
				      (json_int_t)json_array_size(ids), "count",
				      json_integer_value(json_object_get(a, "count")));

			group_nodes(r, addr, res, a, g);
			group_scheduler(r->e->spec, name, g);
			json_array_append_new(groups, g);
			nodes += json_array_size(ids);
		} else if (json_object_get(a, "deletion")) {
			json_array_append_new(
			    storage, json_pack("{s:s, s:s, s:s, s:O?}", "name", name, "address",
					       addr, "type", state_resource_type(res), "deletion",
					       json_object_get(a, "deletion")));
		}
	}
	json_decref(live);
	doc = json_pack("{s:s?, s:s, s:I, s:o, s:o, s:I, s:f, s:s?}", "cluster",
			state_cluster(r->state), "workspace", r->e->workspace, "resources",
			(json_int_t)state_resource_count(r->state), "groups", groups, "storage",
			storage, "nodes", (json_int_t)nodes, "hourly", round(hourly * 1e4) / 1e4,
			"created", created);
	json_object_set_new(doc, "commit", r->head[0] ? json_string(r->head) : json_null());
	/* Up since the lifetime began, its cost from the ledger (null: not all recorded). */
	if (lifetime &&
	    timefmt_time_parse_rfc3339(json_string_value(json_object_get(lifetime, "start")), &t) ==
		0 &&
	    t <= now) {
		json_object_set_new(doc, "up_seconds", json_integer(now - t));
		json_object_set(doc, "since", json_object_get(lifetime, "start"));
		json_object_set(doc, "cost_so_far", json_object_get(lifetime, "cost"));
		json_object_set(doc, "upfront", json_object_get(lifetime, "upfront"));
	}
	if (expiry_time(x, &t)) {
		json_object_set_new(doc, "expires", json_string(state_expires(r->state)));
		json_object_set_new(doc, "left_seconds", json_integer(t - now));
	} else {
		json_object_set_new(doc, "expires", json_null());
	}
	json_object_set_new(doc, "capacity_windows", expiry_windows(r->state, now));
	/* What a teardown kept (issue 29): never billing unnamed. */
	json_object_set_new(doc, "retained", r->retained ? json_incref(r->retained) : json_array());
	json_object_set_new(doc, "pending_changes",
			    json_integer((json_int_t)apply_count_ops(&r->view)));
	return doc;
}

/* The running runs (runop_status), or why they could not be read. */
static void status_runs(struct op_run *r, int64_t now, json_t *doc)
{
	struct kiln_error err = {0};
	json_t *runs = NULL;

	/* The end of a run started without a scheduler is on its nodes: read it first. */
	if (runop_reap(r, getenv(ACCESS_ENDPOINT_ENV), &err) < 0)
		json_object_set_new(doc, "runs_end_error", json_string(err.msg));
	err = (struct kiln_error){0};
	if (runop_status(r, now, json_number_value(json_object_get(doc, "hourly")), &runs, &err) <
	    0)
		json_object_set_new(doc, "runs_error", json_string(err.msg));
	else
		json_object_set_new(doc, "runs", runs);
}

static char *or_no_data(const json_t *v, const char *fmt, double scale)
{
	return json_is_number(v) ? xasprintf(fmt, json_number_value(v) * scale)
				 : xstrdup("no data");
}

static void print_runs(const json_t *d)
{
	const json_t *run;
	size_t i;

	if (json_is_string(json_object_get(d, "runs_end_error")))
		printf("Runs: their end was not read from the nodes: %s\n",
		       json_string_value(json_object_get(d, "runs_end_error")));
	if (json_is_string(json_object_get(d, "runs_error")))
		printf("Runs: not read: %s\n", json_string_value(json_object_get(d, "runs_error")));
	if (!json_array_size(json_object_get(d, "runs")))
		return;
	printf("Runs:\n");
	json_array_foreach(json_object_get(d, "runs"), i, run)
	{
		char *el = expiry_left_format(json_integer_value(json_object_get(run, "elapsed_seconds")));
		char *rate = or_no_data(json_object_get(run, "tokens_per_second"), "%.0f tokens/s", 1);
		char *mfu = or_no_data(json_object_get(run, "mfu"), "MFU %.2f", 1);
		char *so_far = json_is_number(json_object_get(run, "cost_so_far_usd"))
				   ? cost_money(json_number_value(json_object_get(run, "cost_so_far_usd")))
				   : xstrdup("no data");
		char *proj = json_is_number(json_object_get(run, "projected_cost_usd"))
				 ? cost_money(json_number_value(json_object_get(run, "projected_cost_usd")))
				 : xstrdup("no data");
		const json_t *eta = json_object_get(run, "eta_seconds");
		char *eta_s = json_is_integer(eta) ? expiry_left_format(json_integer_value(eta))
						  : xstrdup("no data");
		char *name = str_for_terminal(json_string_value(json_object_get(run, "name")) ?: "-", 40);

		printf("  %s %s on %s (%" JSON_INTEGER_FORMAT " nodes, %" JSON_INTEGER_FORMAT
		       " GPUs): running %s%s\n",
		       json_string_value(json_object_get(run, "id")), name,
		       json_string_value(json_object_get(run, "group")) ?: "-",
		       json_integer_value(json_object_get(run, "nodes")),
		       json_integer_value(json_object_get(run, "gpus")), el,
		       json_is_true(json_object_get(run, "simulated")) ? " (simulated)" : "");
		printf("    %s, %s, ETA %s", rate, mfu, eta_s);
		if (json_is_string(json_object_get(run, "deadline")))
			printf(" (deadline %s)", json_string_value(json_object_get(run, "deadline")));
		printf("; cost %s so far, %s projected\n", so_far, proj);
		if (json_is_string(json_object_get(run, "edited")))
			printf("    EDITED: %s; its cost is not trusted\n",
			       json_string_value(json_object_get(run, "edited")));
		if (json_is_string(json_object_get(run, "warning")))
			printf("    warning: %s\n", json_string_value(json_object_get(run, "warning")));
		free(el);
		free(rate);
		free(mfu);
		free(so_far);
		free(proj);
		free(eta_s);
		free(name);
	}
}

/* The group's part in Slurm: the controller, or its partition and how many nodes joined. */
static void print_scheduler(const json_t *d, const json_t *g)
{
	const json_t *sl = json_object_get(g, "slurm"), *sc = json_object_get(d, "scheduler");
	const char *role = json_string_value(json_object_get(sl, "role"));
	const char *source = json_string_value(json_object_get(sc, "source"));

	if (!role)
		return;
	if (strcmp(role, "controller") == 0) {
		printf("    slurm controller (slurmctld)\n");
		return;
	}
	printf("    slurm partition %s%s: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
	       " nodes joined",
	       json_string_value(json_object_get(sl, "partition")),
	       json_is_true(json_object_get(sl, "default")) ? " (default)" : "",
	       json_integer_value(json_object_get(sl, "joined")),
	       json_integer_value(json_object_get(sl, "nodes")));
	if (source && strcmp(source, "controller") == 0) {
		printf(": %" JSON_INTEGER_FORMAT " idle, %" JSON_INTEGER_FORMAT
		       " allocated, %" JSON_INTEGER_FORMAT " down",
		       json_integer_value(json_object_get(sl, "idle")),
		       json_integer_value(json_object_get(sl, "allocated")),
		       json_integer_value(json_object_get(sl, "down")));
		if (json_integer_value(json_object_get(sl, "other")))
			printf(", %" JSON_INTEGER_FORMAT " other",
			       json_integer_value(json_object_get(sl, "other")));
		if (json_integer_value(json_object_get(sl, "not_responding")))
			printf(", %" JSON_INTEGER_FORMAT " not responding",
			       json_integer_value(json_object_get(sl, "not_responding")));
		printf(" (from slurmctld on %s)\n",
		       json_string_value(json_object_get(sc, "controller")));
		return;
	}
	printf(" (from health tags, reported healthy: controller not %s: %s)\n",
	       json_is_true(json_object_get(sc, "asked")) ? "reachable" : "asked",
	       json_string_value(json_object_get(sc, "reason")));
}

static void print_utilization(const json_t *u)
{
	const json_t *g, *st;
	char *w = timefmt_duration_format(json_integer_value(json_object_get(u, "window_seconds")));
	size_t i;

	if (json_is_string(json_object_get(u, "error"))) {
		printf("Utilization: not measured: %s\n",
		       json_string_value(json_object_get(u, "error")));
		free(w);
		return;
	}
	printf("Utilization (last %s%s):\n", w,
	       json_is_true(json_object_get(u, "simulated")) ? ", simulated" : "");
	free(w);
	json_array_foreach(json_object_get(u, "groups"), i, g)
	{
		printf("  %-16s %s: %s", json_string_value(json_object_get(g, "name")),
		       json_string_value(json_object_get(g, "diagnosis")),
		       json_string_value(json_object_get(g, "why")));
		if (json_is_number(json_object_get(g, "gpu_util")))
			printf("; GPU %.1f%% mean, %.1f%% to %.1f%%",
			       json_number_value(json_object_get(g, "gpu_util")),
			       json_number_value(json_object_get(g, "gpu_util_min")),
			       json_number_value(json_object_get(g, "gpu_util_max")));
		if (json_is_number(json_object_get(g, "gpu_memory")))
			printf(", memory %.1f%%",
			       json_number_value(json_object_get(g, "gpu_memory")));
		printf(".\n");
		if (json_is_string(json_object_get(g, "fix")))
			printf("  %-16s fix: %s.\n", "",
			       json_string_value(json_object_get(g, "fix")));
	}
	json_array_foreach(json_object_get(u, "stores"), i, st) printf(
	    "  %-16s Lustre %.1f MB/s read, %.1f MB/s written of %.1f provisioned (%.0f%%).\n",
	    strchr(json_string_value(json_object_get(st, "address")), '.') + 1,
	    json_number_value(json_object_get(st, "read_mbps")),
	    json_number_value(json_object_get(st, "write_mbps")),
	    json_number_value(json_object_get(st, "provisioned_mbps")),
	    json_number_value(json_object_get(st, "load")));
}

/* One line per node: index, id, address, zone, state, and its health with the reason. */
static void print_members(const json_t *g)
{
	const json_t *h = json_object_get(g, "health"), *n;
	bool can = json_is_true(json_object_get(h, "can_report"));
	size_t i;

	if (!can && json_object_get(h, "why_not"))
		printf("    health not reported: %s\n",
		       json_string_value(json_object_get(h, "why_not")));
	json_array_foreach(json_object_get(g, "members"), i, n)
	{
		const char *health = json_string_value(json_object_get(n, "health"));
		const char *why = json_string_value(json_object_get(n, "health_reason"));
		const char *ip = json_string_value(json_object_get(n, "private_ip"));
		char *id = str_for_terminal(json_string_value(json_object_get(n, "id")) ?: "-", 0);
		char *at = str_for_terminal(ip ? ip : "-", 0);
		char *zone =
		    str_for_terminal(json_string_value(json_object_get(n, "zone")) ?: "-", 0);
		char *st =
		    str_for_terminal(json_string_value(json_object_get(n, "state")) ?: "-", 0);
		char *shown = str_for_terminal(why, 0);

		printf("    %" JSON_INTEGER_FORMAT " %s  %s%s  %s  %s  ",
		       json_integer_value(json_object_get(n, "index")), id, at,
		       ip && json_is_true(json_object_get(n, "simulated")) ? " (simulated)" : "",
		       zone, st);
		if (health)
			printf("%s%s%s\n", health, why ? ": " : "", why ? shown : "");
		else
			printf("not reported%s\n", can ? "" : " (cannot report)");
		free(id), free(at), free(zone), free(st), free(shown);
	}
}

/* Capacity bought for a window: when it starts and ends, and when reap takes the cluster down. */
static void print_windows(const json_t *d)
{
	const json_t *w;
	size_t i;

	json_array_foreach(json_object_get(d, "capacity_windows"), i, w)
	{
		json_int_t left = json_integer_value(json_object_get(w, "left_seconds"));
		char *l = expiry_left_format(left);

		printf("Capacity: %s %s, %s %s to %s; ",
		       json_string_value(json_object_get(w, "address")),
		       json_string_value(json_object_get(w, "id")),
		       json_string_value(json_object_get(w, "state")),
		       json_string_value(json_object_get(w, "start")) ?: "?",
		       json_string_value(json_object_get(w, "end")));
		if (left > 0)
			printf(
			    "kiln reap takes the cluster down at %s (%s left), an hour before it "
			    "ends.\n",
			    json_string_value(json_object_get(w, "reap_at")), l);
		else
			printf("past %s, when kiln reap takes the cluster down.\n",
			       json_string_value(json_object_get(w, "reap_at")));
		free(l);
	}
}

/* The stores a destroy kept, each with its cost and the command that deletes exactly it. */
static void print_retained(const json_t *d)
{
	const json_t *r;
	double hourly = 0;
	size_t i;
	char *h, *m;

	json_array_foreach(json_object_get(d, "retained"), i, r) hourly +=
	    json_number_value(json_object_get(r, "hourly"));
	json_array_foreach(json_object_get(d, "retained"), i, r)
	{
		if (i == 0) {
			h = cost_money(hourly);
			m = cost_money(hourly * 730);
			printf("Retained, still billing (a destroy kept them; not in the state): %s an "
			       "hour, %s a month:\n",
			       h, m);
			free(h);
			free(m);
		}
		h = cost_money(json_number_value(json_object_get(r, "hourly")));
		m = cost_money(json_number_value(json_object_get(r, "monthly")));
		printf("  %s (%s): %s an hour, %s a month%s\n",
		       json_string_value(json_object_get(r, "address")),
		       json_string_value(json_object_get(r, "id")) ?: "-", h, m,
		       json_is_true(json_object_get(r, "unpriced"))
			   ? " and what it stores (not priced: kiln cannot see its size)"
			   : "");
		printf("    delete it, data and all: kiln destroy --include-retained %s%s%s\n",
		       json_string_value(json_object_get(r, "address")),
		       strcmp(json_string_value(json_object_get(d, "workspace")), "default") ? " -w "
											      : "",
		       strcmp(json_string_value(json_object_get(d, "workspace")), "default")
			   ? json_string_value(json_object_get(d, "workspace"))
			   : "");
		free(h);
		free(m);
	}
}

static void print_text(const json_t *d)
{
	const json_t *g, *v;
	size_t i;
	char *m;

	printf("Cluster %s/%s: %" JSON_INTEGER_FORMAT " resources",
	       json_string_value(json_object_get(d, "cluster")) ?: "-",
	       json_string_value(json_object_get(d, "workspace")),
	       json_integer_value(json_object_get(d, "resources")));
	if (json_is_string(json_object_get(d, "commit")))
		printf(" (state commit %.12s)", json_string_value(json_object_get(d, "commit")));
	printf(".\n");
	if (json_array_size(json_object_get(d, "groups")))
		printf("Node groups:\n");
	json_array_foreach(json_object_get(d, "groups"), i, g)
	{
		printf("  %-16s %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
		       " nodes running, %s (%s)\n",
		       json_string_value(json_object_get(g, "name")),
		       json_integer_value(json_object_get(g, "nodes")),
		       json_integer_value(json_object_get(g, "count")),
		       json_string_value(json_object_get(g, "instance_type"))
			   ?: "deleted outside kiln",
		       json_string_value(json_object_get(g, "address")));
		print_scheduler(d, g);
		print_members(g);
	}
	/* Once, after the groups: what to do about the reason the partition lines give. */
	if ((v = json_object_get(json_object_get(d, "scheduler"), "hint")))
		printf("  slurm hint: %s\n", json_string_value(v));
	if (json_array_size(json_object_get(d, "storage")))
		printf("Storage:\n");
	json_array_foreach(json_object_get(d, "storage"), i, g)
	    printf("  %-16s %s, deletion: %s\n", json_string_value(json_object_get(g, "name")),
		   json_string_value(json_object_get(g, "address")),
		   json_string_value(json_object_get(g, "deletion")) ?: "delete");
	m = cost_money(json_number_value(json_object_get(d, "hourly")));
	printf("Cost: %s an hour", m);
	free(m);
	if ((v = json_object_get(d, "cost_so_far"))) {
		char *up = expiry_left_format(json_integer_value(json_object_get(d, "up_seconds")));
		double upfront = json_number_value(json_object_get(d, "upfront"));

		if (json_is_number(v)) {
			m = cost_money(json_number_value(v));
			printf("; %s so far", m);
			free(m);
		} else {
			printf("; cost so far unknown (a commit without the ledger; kiln report "
			       "names it)");
		}
		if (upfront > 0) {
			m = cost_money(upfront);
			printf(" (%s of it up front)", m);
			free(m);
		}
		printf(", up %s since %s", up, json_string_value(json_object_get(d, "since")));
		free(up);
	}
	printf(".\n");
	print_retained(d);
	if (json_is_string(json_object_get(d, "expires"))) {
		json_int_t left = json_integer_value(json_object_get(d, "left_seconds"));
		char *l = expiry_left_format(left);

		if (left > 0)
			printf("Expires: %s (%s left).\n",
			       json_string_value(json_object_get(d, "expires")), l);
		else
			printf("Expired: %s (%s ago); the next `kiln reap` destroys it.\n",
			       json_string_value(json_object_get(d, "expires")), l);
		free(l);
	} else if (json_array_size(json_object_get(d, "capacity_windows"))) {
		printf("Expires: no ttl; the capacity window below ends the cluster.\n");
	} else {
		printf("Expires: never (no ttl).\n");
	}
	print_windows(d);
	if (json_object_get(d, "utilization"))
		print_utilization(json_object_get(d, "utilization"));
	print_runs(d);
	if (json_integer_value(json_object_get(d, "pending_changes")))
		printf("Pending: %" JSON_INTEGER_FORMAT
		       " changes between the spec and what runs; `kiln plan` shows them.\n",
		       json_integer_value(json_object_get(d, "pending_changes")));
}

/*
 * --watch takes an optional INTERVAL as the word after it (or --watch=N),
 * which getopt cannot: take it out of a copy of argv, which the parser
 * reads instead. -1 after reporting a word that is neither a spec, an
 * option nor an interval.
 */
static int take_watch(struct cli *cli, int argc, char **argv, char ***args, int *nargs,
		      int64_t *interval)
{
	char **v = xcalloc((size_t)argc + 1, sizeof(*v));
	const char *word;
	int i, n = 0;

	*interval = 0;
	for (i = 0; i < argc; i++) {
		v[n++] = argv[i];
		if (strcmp(argv[i], "--") == 0) {
			for (i++; i < argc; i++)
				v[n++] = argv[i];
			break;
		}
		if (strcmp(argv[i], "--watch") != 0 && !str_starts_with(argv[i], "--watch="))
			continue;
		v[n - 1] = "--watch";
		word = argv[i][7] == '=' ? argv[i] + 8 : NULL;
		if (!word && i + 1 < argc && argv[i + 1][0] != '-' &&
		    !str_ends_with(argv[i + 1], ".yaml") && !str_ends_with(argv[i + 1], ".yml"))
			word = argv[++i];
		if (watch_interval(word, interval) < 0) {
			cli_error(cli,
				  "give seconds (5) or a duration (30s, 1m), from 1s to 1d; a spec "
				  "ends in .yaml",
				  "--watch '%s' is not an interval", word);
			free(v);
			return -1;
		}
	}
	*args = v;
	*nargs = n;
	return 0;
}

/* The status document, or NULL after reporting: a refresh, and the measures. */
static json_t *status_read(struct op_run *r, struct cli *cli, struct run_flags *f, const char *spec,
			   int64_t window, bool ssh)
{
	struct kiln_error err = {0};
	json_t *doc, *util = NULL, *lifetime = NULL;
	int64_t now;

	if (timefmt_now(&now, &err) < 0) {
		cmd_report(cli, &err);
		return NULL;
	}
	r->keep_live = true;
	if (cmd_run_plan_spec(r, cli, f, spec) < 0 || cmd_run_need_cluster(cli, r) < 0)
		return NULL;
	/* A cluster whose metrics cannot be read (a denied call) still has a status. */
	if (utilization_measure(r->e, state_resources(r->state), now, window, &util, &err) < 0)
		util = json_pack("{s:s, s:s?}", "error", err.msg, "hint",
				 err.hint[0] ? err.hint : NULL);
	if (report_workspace(r->store, r->e->workspace, now, &lifetime, &err) < 0) {
		cmd_report(cli, &err);
		json_decref(util);
		return NULL;
	}
	doc = build(r, now, lifetime);
	json_decref(lifetime);
	status_scheduler(r, ssh, doc);
	status_runs(r, now, doc);
	if (util)
		json_object_set_new(doc, "utilization", util);
	return doc;
}

static void print_doc(const json_t *doc, bool json, bool compact)
{
	if (!json) {
		print_text(doc);
	} else if (compact) {
		jsonw_dumpf(doc, stdout, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
		putchar('\n');
	} else {
		jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
		putchar('\n');
	}
	fflush(stdout);
}

/*
 * --watch: the status again every interval until a signal (signals.c owns
 * them: the first is only recorded, and read here). A terminal gets each
 * status over the last (the screen cleared), anything else the first whole
 * and then a line per change, or with --json a document each time one came.
 */
static int status_watch(struct cli *cli, struct run_flags *f, const char *spec, int64_t window,
			bool ssh, int64_t interval)
{
	const char *term = getenv("TERM");
	bool tty = isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0) && !f->json;
	json_t *last = NULL, *doc;
	char stamp[32];
	int ret = KILN_EXIT_OK;

	signals_stop_quietly();
	do {
		struct op_run r = {0};

		doc = status_read(&r, cli, f, spec, window, ssh);
		operation_close(&r);
		if (!doc) {
			ret = signals_interrupted() ? KILN_EXIT_OK : KILN_EXIT_ERROR;
			break;
		}
		{
			struct kiln_error err = {0};
			int64_t t = 0;

			timefmt_now(&t, &err); /* status_read saw it is well formed */
			timefmt_time_format_rfc3339(t, stamp);
		}
		if (tty) {
			/* Home and clear: the last status goes, this one takes its place. */
			printf("\033[H\033[2J");
			printf("kiln status every %llds, at %s (^C stops)\n\n", (long long)interval,
			       stamp);
			print_text(doc);
			fflush(stdout);
		} else if (!last || f->json) {
			struct strbuf sb = {0};

			if (!last || watch_changes(last, doc, &sb) > 0)
				print_doc(doc, f->json, true);
			sb_release(&sb);
		} else {
			struct strbuf sb = {0};
			const char *line = NULL, *nl;

			watch_changes(last, doc, &sb);
			for (line = sb.buf; line && *line; line = nl + 1) {
				nl = strchr(line, '\n');
				printf("%s %.*s\n", stamp, (int)(nl - line), line);
			}
			sb_release(&sb);
			fflush(stdout);
		}
		json_decref(last);
		last = doc;
	} while (watch_pause(interval));
	json_decref(last);
	return ret;
}

int cmd_status(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct op_run r = {0};
	struct kiln_error err = {0};
	const char *spec;
	int64_t window = UTIL_DEFAULT_WINDOW, interval;
	int c, ret = KILN_EXIT_ERROR, nargs;
	bool ssh = true, watch = false;
	char **args = NULL;
	json_t *doc;

	cmd_run_flags_init(&f);
	if (take_watch(cli, argc, argv, &args, &nargs, &interval) < 0) {
		cmd_run_flags_release(&f);
		return KILN_EXIT_ERROR;
	}
	cli_parser_init(&p, cli, &cmd_status_info, nargs, args);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_NO_SSH) {
			ssh = false;
		} else if (c == OPT_WATCH) {
			watch = true;
		} else if (c == OPT_WINDOW) {
			if (timefmt_duration_parse(p.optarg, &window) < 0) {
				cli_error(cli, "write it like 15m, 1h or 90s",
					  "--window '%s' is not a duration", p.optarg);
				goto out;
			}
			if (utilization_window_check(window, &err) < 0) {
				cmd_report(cli, &err);
				goto out;
			}
		} else if (cmd_run_flags_handle(&f, cli, c, p.optarg) < 0) {
			goto out;
		}
	}
	spec = cmd_run_spec_operand(cli, f.spec, nargs, args, p.optind);
	if (!spec)
		goto out;
	if (watch) {
		ret = status_watch(cli, &f, spec, window, ssh, interval);
		goto out;
	}
	doc = status_read(&r, cli, &f, spec, window, ssh);
	if (!doc)
		goto out;
	print_doc(doc, f.json, false);
	json_decref(doc);
	ret = KILN_EXIT_OK;
out:
	operation_close(&r);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	free(args);
	return ret;
}
