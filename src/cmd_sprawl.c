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
 *
 * This file parses the flags, renders the report and what lands, and picks
 * the exit code; reading, pricing, choosing, asking and the adoption or
 * deletion are one operation, sprawl_op_run (sprawl_op.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "cmd_store.h"
#include "cmds.h"
#include "cost.h"
#include "jsonw.h"
#include "sprawl_op.h"

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

/* The report, and with --destroy the orphans kept and why, as text (with --json: nothing yet). */
static void ui_report(void *arg, const json_t *rep, const json_t *kept)
{
	const struct flags *f = arg;
	const json_t *o;
	size_t i;

	if (f->json)
		return;
	print_report(rep);
	json_array_foreach(kept, i, o)
	    printf("keeping %s/%s %s (%s): %s\n", jstr(o, "cluster"), jstr(o, "workspace"),
		   jstr(o, "address"), jstr(o, "id"), jstr(o, "keep"));
}

static void ui_refuse(void *arg, const struct kiln_error *err)
{
	const struct flags *f = arg;

	cli_error(f->cli, err->hint[0] ? err->hint : NULL, "%s", err->msg);
}

static bool ui_ask(void *arg, const char *question)
{
	(void)arg;
	return cmd_run_confirm(question);
}

static void ui_started(void *arg)
{
	const struct flags *f = arg;

	if (!f->json)
		putchar('\n');
}

/* The report with what was done (--json), or the lines that end the text. */
static void ui_done(void *arg, const json_t *rep, bool ran)
{
	const struct flags *f = arg;
	const json_t *o;
	size_t i;

	if (f->json) {
		print_json(rep);
		return;
	}
	if (f->adopt) {
		json_array_foreach(json_object_get(rep, "skipped"), i, o)
		    printf("not adopted %s/%s %s (%s): %s\n", jstr(o, "cluster"),
			   jstr(o, "workspace"), jstr(o, "address") ? jstr(o, "address") : "-",
			   jstr(o, "id"), jstr(o, "reason"));
		printf("\nsprawl: %zu adopted, %zu failed, %zu not adopted\n",
		       json_array_size(json_object_get(rep, "adopted")),
		       json_array_size(json_object_get(rep, "failed")),
		       json_array_size(json_object_get(rep, "skipped")));
	} else if (f->destroy && !ran) {
		printf("\nNo orphans to delete.\n");
	} else if (f->destroy) {
		printf("\nsprawl: %zu deleted, %zu failed, %zu kept\n",
		       json_array_size(json_object_get(rep, "destroyed")),
		       json_array_size(json_object_get(rep, "failed")),
		       json_array_size(json_object_get(rep, "kept")));
	}
}

int cmd_sprawl(int argc, char **argv, struct cli *cli)
{
	struct flags f = {.cli = cli, .parallelism = 32};
	const struct sprawl_ui ui = {
	    .base = {&f, report_error, NULL},
	    .report = ui_report,
	    .refuse = ui_refuse,
	    .ask = ui_ask,
	    .started = ui_started,
	    .result = print_result,
	    .commit = print_commit,
	    .done = ui_done,
	};
	struct sprawl_op_options o;
	struct cli_parser p;
	int ret = KILN_EXIT_ERROR;

	if (parse(&f, &p, cli, argc, argv, &ret) < 0)
		goto out;
	o = (struct sprawl_op_options){
	    .run = {f.store.state, f.region, f.store.lock_timeout, f.parallelism},
	    .provider = f.provider,
	    .mode = f.adopt	? SPRAWL_OP_ADOPT
		    : f.destroy ? SPRAWL_OP_DESTROY
				: SPRAWL_OP_REPORT,
	    .include_stores = f.include_stores,
	    .auto_approve = f.auto_approve,
	    .can_ask = isatty(STDIN_FILENO),
	};
	ret = sprawl_op_run(&o, &ui) == 0 ? KILN_EXIT_OK : KILN_EXIT_ERROR;
out:
	cli_parser_release(&p);
	return ret;
}
