/*
 * cmd_sprawl.c - `kiln sprawl`: what runs in the cloud that no workspace
 * records. Lists every resource of every type that carries kiln's scope
 * tags (provider.h: a scope with no cluster and workspace), reads every
 * workspace branch of the state repository, and reports as orphans those
 * whose id no workspace holds (sprawl.c), grouped by the cluster and
 * workspace their tags name; and the GPU instances that carry no kiln tags
 * at all (the provider's list_unmanaged). Each with its hourly cost.
 *
 * --destroy deletes the orphans through the operation (sprawl.c, over
 * operation.h), one run per cluster and workspace under its lock and
 * journal, with a plan whose every change is a delete
 * (sprawl_destroy_plan), so retries, ordering, waiting and interrupts are
 * apply's.
 * Object stores and file systems hold data whose owner cannot be asked:
 * they are kept unless --include-stores.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "cmd_run.h"
#include "cmd_store.h"
#include "cmds.h"
#include "cost.h"
#include "crypt.h"
#include "engine.h"
#include "journal.h"
#include "lock.h"
#include "log.h"
#include "signals.h"
#include "sprawl.h"
#include "state.h"
#include "jsonw.h"

enum {
	OPT_PROVIDER = 1,
	OPT_REGION,
	OPT_JSON,
	OPT_ADOPT,
	OPT_DESTROY,
	OPT_INCLUDE_STORES,
	OPT_AUTO_APPROVE,
};

static const struct cli_option options[] = {
    {"provider", 0, true, OPT_PROVIDER, "aws|sim",
     "the cloud to look in (default: the one the workspaces record, else aws)"},
    {"region", 0, true, OPT_REGION, "REGION",
     "the region to look in (aws: default AWS_REGION; sim: sim-local-1)"},
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    RUN_OPT_PARALLELISM,
    {"json", 0, false, OPT_JSON, NULL, "print the report as JSON"},
    {"destroy", 0, false, OPT_DESTROY, NULL,
     "delete the orphans (stores are kept; see --include-stores)"},
    {"include-stores", 0, false, OPT_INCLUDE_STORES, NULL,
     "with --destroy: delete orphaned buckets and file systems too"},
    {"adopt", 0, false, OPT_ADOPT, NULL,
     "record the orphans in the workspaces their tags name, one commit each"},
    {"auto-approve", 0, false, OPT_AUTO_APPROVE, NULL,
     "do not ask; required for --destroy when standard input is not a terminal"},
};

const struct cmd_info cmd_sprawl_info = {
    .name = "sprawl",
    .usage = "[--provider aws|sim] [--region R] [--state URL] [--json] [--destroy | --adopt]",
    .summary = "find what runs outside kiln's state: orphans and untagged GPU instances",
    .description = "List, with their cost per hour, (1) orphans: live resources carrying kiln's\n"
		   "tags (kiln:cluster, kiln:workspace) whose id no workspace of the state\n"
		   "repository records - a workspace deleted from state, a `kiln state rm`, an\n"
		   "apply that crashed before it committed - grouped by the cluster and\n"
		   "workspace their tags name; and (2) GPU instances with no kiln tags at all.\n"
		   "\n"
		   "--destroy deletes the orphans through the normal executor, one run per\n"
		   "cluster and workspace under its lock and journal, after asking (a\n"
		   "terminal) or with --auto-approve. An interrupt (^C) lets the deletions in\n"
		   "flight finish, records them and starts no other.\n"
		   "Orphaned object stores and file systems are kept unless --include-stores:\n"
		   "their data's owner cannot be asked. Unmanaged GPU instances are only\n"
		   "reported.\n"
		   "\n"
		   "--adopt records each orphan in the workspace its tags name (creating the\n"
		   "workspace when it is missing), as the plan adopts what carries its address\n"
		   "tag, with one commit per workspace; the next plan of that workspace shows\n"
		   "what its spec wants of them.\n"
		   "\n"
		   "Exit status: 0 done, 1 error (or a delete or an adoption failed).",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-sprawl(1), kiln-state(1), kiln-workspace(1)",
};

struct flags {
	struct cli *cli;
	struct store_flags store;
	const char *provider;
	const char *region;
	bool json, adopt, destroy, include_stores, auto_approve;
	int parallelism;
};

/*
 * {"WS": state} for every workspace branch, with the journal this machine
 * keeps of an apply killed before its commit replayed over it (what the next
 * plan recovers is not an orphan); locked: {"WS": "who"} for every workspace
 * whose lock is held (an apply may be creating what no state records yet).
 */
static int read_workspaces(struct store *s, json_t **out, json_t *locked, struct kiln_error *err)
{
	char **names;
	size_t n, i;

	*out = NULL;
	if (store_ref_list(s, "refs/heads/", &names, &n, err) < 0)
		return -1;
	*out = json_object();
	for (i = 0; i < n; i++) {
		struct workspace *w = NULL;

		if (!store_workspace_name_ok(names[i]))
			continue;
		if (workspace_open(&w, s, names[i], err) < 0) {
			store_names_free(names, n);
			json_decref(*out);
			*out = NULL;
			return -1;
		}
		if (w->exists && w->state) {
			json_t *st = json_deep_copy(w->state);
			char *path = journal_path(store_location(s), names[i]);
			struct kiln_error jerr = {0};

			if (journal_replay(path, git_oid_tostr_s(&w->head), st, NULL, &jerr) == -1)
				log_warn("%s", jerr.msg);
			free(path);
			json_object_set_new(*out, names[i], st);
		}
		workspace_close(w, NULL);
		{
			struct lock_info info;
			git_oid oid;
			struct kiln_error lerr = {0};

			if (lock_read(s, names[i], &info, &oid, &lerr) == 0) {
				char *who = lock_info_describe(&info);

				/* A lease run out: its holder died, and records nothing more. */
				if (!lock_info_expired(&info))
					json_object_set_new(locked, names[i], json_string(who));
				free(who);
				lock_info_release(&info);
			}
		}
	}
	store_names_free(names, n);
	return 0;
}

/*
 * {"LINEAGE": true} of every state this repository holds or held: each
 * workspace's, each archived workspace's (a deleted workspace's resources
 * are still this repository's orphans), and each lock's (a first apply has
 * no commit yet). Unreadable archives are skipped: a resource they alone
 * would claim is then reported as another state's, which is the safe side.
 */
static json_t *known_lineages(struct store *s, const json_t *recorded)
{
	json_t *known = json_object();
	const json_t *st;
	const char *ws;
	char **names;
	size_t n, i;
	struct kiln_error err = {0};

	json_object_foreach_const(recorded, ws, st) if (state_lineage(st))
	    json_object_set_new(known, state_lineage(st), json_true());
	if (store_ref_list(s, "refs/kiln/archive/", &names, &n, &err) == 0) {
		for (i = 0; i < n; i++) {
			char *ref = xasprintf("refs/kiln/archive/%s", names[i]), *text = NULL;
			json_t *doc = NULL;
			git_oid oid;
			size_t len;

			if (store_ref_read(s, ref, &oid, &err) == 0 &&
			    store_read_file(s, &oid, STORE_STATE_FILE, &text, &len, &err) == 0 &&
			    state_parse(&doc, text, len, ref, &err) == 0 && state_lineage(doc))
				json_object_set_new(known, state_lineage(doc), json_true());
			json_decref(doc);
			free(text);
			free(ref);
		}
		store_names_free(names, n);
	}
	if (store_ref_list(s, "refs/kiln/locks/", &names, &n, &err) == 0) {
		for (i = 0; i < n; i++) {
			struct lock_info info;
			git_oid oid;

			if (lock_read(s, names[i], &info, &oid, &err) == 0) {
				if (info.lineage)
					json_object_set_new(known, info.lineage, json_true());
				lock_info_release(&info);
			}
		}
		store_names_free(names, n);
	}
	return known;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static char *hourly_text(const json_t *it)
{
	double h = json_number_value(json_object_get(it, "hourly"));
	char *m, *out;

	if (h == 0 && json_array_size(json_object_get(it, "unpriced")))
		return xstrdup("priced by use");
	if (h == 0)
		return xstrdup("free");
	m = cost_money(h);
	out = xasprintf("%s/hour", m);
	free(m);
	return out;
}

static void print_report(const json_t *rep)
{
	json_t *orphans = json_object_get(rep, "orphans"), *un = json_object_get(rep, "unmanaged");
	json_t *o;
	char *group = NULL, *m;
	size_t i;

	printf("%s%s, region %s; state %s: %zu workspace%s\n", jstr(rep, "provider"),
	       json_is_true(json_object_get(rep, "simulated")) ? " (simulated)" : "",
	       jstr(rep, "region"), jstr(rep, "state"),
	       json_array_size(json_object_get(rep, "workspaces")),
	       json_array_size(json_object_get(rep, "workspaces")) == 1 ? "" : "s");
	m = cost_money(json_number_value(json_object_get(rep, "orphans_hourly")));
	printf("\nOrphans (kiln tags, in no workspace's state): %zu, %s/hour\n",
	       json_array_size(orphans), m);
	free(m);
	if (json_integer_value(json_object_get(rep, "other_states")))
		printf("  (and %" JSON_INTEGER_FORMAT
		       " owned by a state this repository does not hold, by their kiln:lineage: "
		       "not orphans, left alone)\n",
		       json_integer_value(json_object_get(rep, "other_states")));
	json_array_foreach(orphans, i, o)
	{
		char *g = xasprintf("%s/%s", jstr(o, "cluster"), jstr(o, "workspace")), *h;

		/* Sorted by cluster and workspace: a heading where the group changes. */
		if (!group || strcmp(group, g) != 0)
			printf("  %s\n", g);
		free(group);
		group = g;
		h = hourly_text(o);
		printf("    %-36s %-24s %-16s %s\n",
		       jstr(o, "address") ? jstr(o, "address") : jstr(o, "type"), jstr(o, "id"), h,
		       jstr(o, "reason"));
		free(h);
	}
	free(group);
	m = cost_money(json_number_value(json_object_get(rep, "unmanaged_hourly")));
	printf("\nGPU instances without kiln tags: %zu, %s/hour\n", json_array_size(un), m);
	free(m);
	json_array_foreach(un, i, o)
	{
		json_t *a = json_object_get(o, "attrs");
		char *h = hourly_text(o);

		printf("    %-24s %-16s %lld x %-6s %-14s %s\n", jstr(o, "id"),
		       jstr(a, "instance_type"),
		       (long long)json_integer_value(json_object_get(a, "gpus")) *
			   (json_integer_value(json_object_get(a, "count"))
				? json_integer_value(json_object_get(a, "count"))
				: 1),
		       jstr(a, "gpu") ? jstr(a, "gpu") : "GPU",
		       jstr(a, "zone") ? jstr(a, "zone") : "", h);
		free(h);
	}
	m = cost_money(json_number_value(json_object_get(rep, "hourly_total")));
	printf("\nTotal: %s/hour", m);
	free(m);
	m = cost_money(json_number_value(json_object_get(rep, "monthly_total")));
	printf(" (%s/month at 730 hours)\n", m);
	free(m);
}

static bool ask(size_t n)
{
	char *q = xasprintf("Do you want to delete these %zu orphan%s?", n, n == 1 ? "" : "s");
	bool yes = cmd_run_confirm(q);

	free(q);
	return yes;
}

static int parse(struct flags *f, struct cli_parser *p, struct cli *cli, int argc, char **argv,
		 int *ret)
{
	int opt, r;

	cli_parser_init(p, cli, &cmd_sprawl_info, argc, argv);
	while ((opt = cli_next(p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			*ret = p->exit_code;
			return -1;
		}
		r = cmd_store_flags_handle(&f->store, cli, opt, p->optarg);
		if (r < 0)
			return -1;
		if (r > 0)
			continue;
		switch (opt) {
		case OPT_PROVIDER:
			f->provider = p->optarg;
			break;
		case OPT_REGION:
			f->region = p->optarg;
			break;
		case OPT_JSON:
			f->json = true;
			break;
		case OPT_ADOPT:
			f->adopt = true;
			break;
		case OPT_DESTROY:
			f->destroy = true;
			break;
		case OPT_INCLUDE_STORES:
			f->include_stores = true;
			break;
		case OPT_AUTO_APPROVE:
			f->auto_approve = true;
			break;
		case OPT_RUN_PARALLELISM:
			if (cmd_run_parallelism_parse(cli, p->optarg, &f->parallelism) < 0)
				return -1;
			break;
		}
	}
	if (argc - p->optind > 0) {
		cli_error(cli, "kiln sprawl looks at a whole cloud account and takes no spec",
			  "unexpected operand '%s'", argv[p->optind]);
		return -1;
	}
	if (f->adopt && f->destroy) {
		cli_error(cli, "run one, then the other",
			  "--adopt and --destroy cannot be combined");
		return -1;
	}
	if (f->include_stores && !f->destroy) {
		cli_error(cli, "add --destroy", "--include-stores only applies to --destroy");
		return -1;
	}
	if (f->provider && !provider_find(f->provider)) {
		char *names = provider_names_join("--provider ", ", ", " or ");
		char *hint = xasprintf("use %s", names);

		cli_error(cli, hint, "'%s' is not a provider kiln knows", f->provider);
		free(hint);
		free(names);
		return -1;
	}
	return 0;
}

/*
 * Without --provider: the one every workspace of the state repository
 * records, so sprawl next to a sim cluster looks in the sim; otherwise the
 * first real cloud of the provider table.
 */
static const char *recorded_provider(const json_t *recorded)
{
	const char *name = NULL, *ws, *cloud = provider_first(false)->name;
	const json_t *st;

	json_object_foreach_const(recorded, ws, st)
	{
		const char *p = state_provider(st);

		if (!p)
			continue;
		if (name && strcmp(name, p) != 0)
			return cloud;
		name = p;
	}
	return name && provider_find(name) ? name : cloud;
}

/* A deletion or adoption as it lands: a line on standard output, a failure on standard error. */
static void print_result(void *arg, const char *cluster, const char *workspace,
			 const struct apply_event *ev)
{
	const struct flags *f = arg;
	bool adopt = ev->op && strcmp(ev->op, "adopt") == 0;

	if (f->json)
		return;
	if (ev->kind == APPLY_DONE)
		printf("%s %s/%s %s (%s)\n", adopt ? "adopted" : "deleted", cluster, workspace,
		       ev->address, ev->id ? ev->id : "?");
	else
		fprintf(stderr, "kiln sprawl: %s %s/%s %s failed: %s\n",
			adopt ? "adopting" : "deleting", cluster, workspace, ev->address,
			ev->error ? ev->error : "unknown error");
	fflush(stdout);
}

static void print_commit(void *arg, const char *workspace, size_t adopted, const git_oid *commit)
{
	const struct flags *f = arg;
	char buf[8];

	if (!f->json)
		printf("recorded %zu in workspace '%s' (commit %s)\n", adopted, workspace,
		       store_short(commit, buf));
}

static void report_error(void *arg, const struct kiln_error *err)
{
	const struct flags *f = arg;

	cmd_report(f->cli, err);
}

static void print_json(const json_t *rep)
{
	char *text = jsonw_dumps(rep, JSON_INDENT(2) | JSON_SORT_KEYS, NULL);

	puts(text);
	free(text);
}

/*
 * The report: where it looked, the orphans (each marked "locked" when its
 * workspace's lock is held) and the unmanaged GPU instances, priced.
 */
static json_t *build_report(const struct flags *f, struct store *s, const struct provider *prov,
			    struct prov_ctx *ctx, const json_t *recorded, const json_t *locked,
			    json_t *orphans, json_t *un, size_t foreign)
{
	const struct catalog *cat = sprawl_catalog(prov, ctx);
	double oh, uh;
	const char *k;
	json_t *rep, *o;
	const json_t *st;
	size_t i;

	/* A locked workspace may be mid-apply: its orphans may be its next commit. */
	json_array_foreach(orphans, i, o)
	{
		const char *who = jstr(locked, jstr(o, "workspace"));

		json_object_set_new(o, "locked", json_boolean(who != NULL));
		if (who) {
			char *why = xasprintf("%s; the workspace is locked by %s: an apply may "
					      "still record it",
					      jstr(o, "reason"), who);

			json_object_set_new(o, "reason", json_string(why));
			free(why);
		}
	}
	oh = sprawl_price_all(prov, ctx, orphans);
	uh = sprawl_price_all(prov, ctx, un);
	rep = json_pack("{s:s, s:b, s:s?, s:s, s:[], s:s, s:{s:s?, s:s?, s:s?}}", "provider",
			prov->name, "simulated", prov->simulated, "region", f->region, "state",
			store_location(s), "workspaces", "currency", "USD", "catalog", "provider",
			cat ? cat->provider : NULL, "region", cat ? cat->region : NULL, "date",
			cat ? cat->date : NULL);
	if (!f->region)
		json_object_set_new(rep, "region", json_string(sprawl_default_region(prov)));
	json_object_foreach_const(recorded, k, st)
	    json_array_append_new(json_object_get(rep, "workspaces"), json_string(k));
	/* Live attrs may hold secrets (a join token): the report names, never dumps. */
	json_object_set_new(rep, "orphans", json_array());
	json_array_foreach(orphans, i, o)
	{
		json_t *c = json_copy(o);

		json_object_del(c, "attrs");
		json_array_append_new(json_object_get(rep, "orphans"), c);
	}
	json_object_set(rep, "unmanaged", un);
	json_object_set_new(rep, "orphans_hourly", json_real(oh));
	json_object_set_new(rep, "other_states", json_integer((json_int_t)foreign));
	json_object_set_new(rep, "unmanaged_hourly", json_real(uh));
	json_object_set_new(rep, "hourly_total", json_real(oh + uh));
	json_object_set_new(rep, "monthly_total", json_real((oh + uh) * 730));
	return rep;
}

/* What the adoption and the destroy run with, from the flags. */
static struct sprawl_options sprawl_run_options(const struct flags *f)
{
	return (struct sprawl_options){f->store.state, f->region, f->store.lock_timeout,
				       f->parallelism};
}

/*
 * After an interrupt stopped an adoption or a destroy (signals.h): that
 * it was asked for, and where to see the rest. KILN_EXIT_ERROR, else ret.
 */
static int interrupt_report(const struct flags *f, const char *done, int ret)
{
	int sig = signals_interrupted();

	if (!sig)
		return ret;
	cli_error(f->cli, "run `kiln sprawl` to see what remains",
		  "stopped by SIG%s, as asked: what was %s is recorded, and nothing more was "
		  "started",
		  sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", done);
	return KILN_EXIT_ERROR;
}

/* --adopt: the report, then each workspace's adoption and what was not adopted. */
static int run_adopt(const struct flags *f, const struct provider *prov, const json_t *orphans,
		     json_t *rep, struct sprawl_results *d)
{
	struct sprawl_options so = sprawl_run_options(f);
	json_t *skipped = json_array(), *commits = json_array(), *o;
	size_t i;
	int ret;

	if (!f->json) {
		print_report(rep);
		putchar('\n');
	}
	ret = sprawl_adopt(prov, &so, orphans, d, skipped, commits) == 0 &&
		      json_array_size(d->failed) == 0
		  ? KILN_EXIT_OK
		  : KILN_EXIT_ERROR;
	if (f->json) {
		json_object_set(rep, "adopted", d->done);
		json_object_set(rep, "failed", d->failed);
		json_object_set(rep, "skipped", skipped);
		json_object_set(rep, "commits", commits);
		print_json(rep);
	} else {
		json_array_foreach(skipped, i, o)
		    printf("not adopted %s/%s %s (%s): %s\n", jstr(o, "cluster"),
			   jstr(o, "workspace"), jstr(o, "address") ? jstr(o, "address") : "-",
			   jstr(o, "id"), jstr(o, "reason"));
		printf("\nsprawl: %zu adopted, %zu failed, %zu not adopted\n",
		       json_array_size(d->done), json_array_size(d->failed),
		       json_array_size(skipped));
	}
	ret = interrupt_report(f, "adopted", ret);
	json_decref(skipped);
	json_decref(commits);
	return ret;
}

/* Why --destroy keeps orphan o, or NULL when it deletes it. */
static const char *keep_reason(const struct flags *f, const struct provider *prov, const json_t *o)
{
	if (json_is_true(json_object_get(o, "locked")))
		return "its workspace is locked; run again when the lock is released";
	if (!store_workspace_name_ok(jstr(o, "workspace")))
		return "its kiln:workspace tag is not a workspace name, so no lock covers its "
		       "deletion; delete it by hand";
	if (!f->include_stores && sprawl_is_store(prov, jstr(o, "type")))
		return "a store; --include-stores deletes it";
	return NULL;
}

/* --destroy: what goes, what stays, asking first; the orphans deleted. */
static int run_destroy(const struct flags *f, const struct provider *prov, const json_t *orphans,
		       json_t *rep, struct sprawl_results *d)
{
	struct sprawl_options so = sprawl_run_options(f);
	json_t *chosen = json_array(), *kept = json_array(), *o;
	size_t i;
	int ret = KILN_EXIT_ERROR;

	json_array_foreach(orphans, i, o)
	{
		if (keep_reason(f, prov, o))
			json_array_append(kept, o);
		else
			json_array_append(chosen, o);
	}
	if (!f->json) {
		print_report(rep);
		json_array_foreach(kept, i, o)
		    printf("keeping %s/%s %s (%s): %s\n", jstr(o, "cluster"), jstr(o, "workspace"),
			   jstr(o, "address"), jstr(o, "id"), keep_reason(f, prov, o));
	}
	if (json_array_size(chosen) == 0) {
		if (!f->json)
			printf("\nNo orphans to delete.\n");
		ret = KILN_EXIT_OK;
	} else if (!f->auto_approve && !isatty(STDIN_FILENO)) {
		cli_error(f->cli, "review with `kiln sprawl`, then pass --destroy --auto-approve",
			  "standard input is not a terminal, so kiln cannot ask for approval; "
			  "nothing was deleted");
		goto out;
	} else if (!f->auto_approve && !ask(json_array_size(chosen))) {
		fprintf(stderr, "kiln sprawl: not confirmed; nothing was deleted\n");
		goto out;
	} else {
		if (!f->json)
			putchar('\n');
		ret = sprawl_destroy(prov, &so, chosen, d) == 0 ? KILN_EXIT_OK : KILN_EXIT_ERROR;
		if (!f->json)
			printf("\nsprawl: %zu deleted, %zu failed, %zu kept\n",
			       json_array_size(d->done), json_array_size(d->failed),
			       json_array_size(kept));
		ret = interrupt_report(f, "deleted", ret);
	}
	if (f->json) {
		json_object_set(rep, "destroyed", d->done);
		json_object_set(rep, "failed", d->failed);
		json_object_set_new(rep, "kept", json_array());
		json_array_foreach(kept, i, o) json_array_append_new(
		    json_object_get(rep, "kept"),
		    json_pack("{s:O, s:O, s:O, s:O}", "cluster", json_object_get(o, "cluster"),
			      "workspace", json_object_get(o, "workspace"), "address",
			      json_object_get(o, "address"), "id", json_object_get(o, "id")));
		print_json(rep);
	}
out:
	json_decref(chosen);
	json_decref(kept);
	return ret;
}

int cmd_sprawl(int argc, char **argv, struct cli *cli)
{
	struct flags f = {.cli = cli, .parallelism = 32};
	struct cli_parser p;
	struct store *s = NULL;
	struct prov_ctx *ctx = NULL;
	const struct provider *prov = NULL;
	struct kiln_error err = {0};
	json_t *recorded = NULL, *locked = NULL, *live = NULL, *orphans = NULL, *un = NULL,
	       *rep = NULL, *known = NULL;
	struct sprawl_results d = {.on_result = print_result,
				   .on_commit = print_commit,
				   .on_error = report_error,
				   .arg = &f};
	size_t foreign = 0;
	int ret = KILN_EXIT_ERROR;

	sprawl_results_init(&d);
	if (parse(&f, &p, cli, argc, argv, &ret) < 0)
		goto out;
	if (cmd_store_flags_open(&f.store, cli, false, &s, NULL) < 0)
		goto out;
	locked = json_object();
	if (store_sync(s, &err) < 0 || read_workspaces(s, &recorded, locked, &err) < 0)
		goto report;
	if (!f.provider)
		f.provider = recorded_provider(recorded);
	prov = provider_find(f.provider);
	if (sprawl_provider_open(prov, f.region, &ctx, &err) < 0 ||
	    sprawl_list_tagged(prov, ctx, &live, &err) < 0 ||
	    sprawl_list_unmanaged(prov, ctx, &un, &err) < 0)
		goto report;
	known = known_lineages(s, recorded);
	orphans = sprawl_orphans(live, recorded, known, &foreign);
	rep = build_report(&f, s, prov, ctx, recorded, locked, orphans, un, foreign);
	if (f.adopt) {
		ret = run_adopt(&f, prov, orphans, rep, &d);
	} else if (f.destroy) {
		ret = run_destroy(&f, prov, orphans, rep, &d);
	} else {
		if (f.json)
			print_json(rep);
		else
			print_report(rep);
		ret = KILN_EXIT_OK;
	}
	goto out;
report:
	cmd_report(cli, &err);
out:
	sprawl_results_release(&d);
	json_decref(rep);
	json_decref(orphans);
	json_decref(un);
	json_decref(live);
	json_decref(recorded);
	json_decref(known);
	json_decref(locked);
	if (prov)
		sprawl_provider_close(prov, ctx);
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
