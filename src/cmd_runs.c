/*
 * cmd_runs.c - `kiln run [GROUP] (--sbatch FILE | -- COMMAND...)`, `kiln
 * run show ID`, `kiln run cancel ID` and `kiln runs` (issue 27): parse,
 * call one operation of runop.h, render the records of runrec.h.
 *
 * (cmd_run.c is not this command: it holds the flags plan, apply and the
 * other spec-reading commands share.)
 */
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "cmd_run.h"
#include "cmds.h"
#include "jsonw.h"
#include "runop.h"
#include "str.h"
#include "timefmt.h"

enum {
	OPT_NAME = 1,
	OPT_SBATCH,
	OPT_ALLOW_DIRTY,
	OPT_JSON,
	OPT_DATA,
};

static const struct cli_option start_options[] = {
    RUN_OPT_SPEC,
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_VAR,
    {"name", 0, true, OPT_NAME, "NAME", "what to call the run (default: the program's name)"},
    {"sbatch", 0, true, OPT_SBATCH, "FILE",
     "submit this batch script through the Slurm controller (scheduler: slurm)"},
    {"data", 0, true, OPT_DATA, "STORE[/PREFIX]",
     "an object store the run reads: its listing's manifest digest is recorded (repeatable)"},
    {"allow-dirty", 0, false, OPT_ALLOW_DIRTY, NULL,
     "record a run whose code has uncommitted changes (with a digest of the diff)"},
    {"json", 0, false, OPT_JSON, NULL, "print the run (show, and what run recorded) as JSON"},
};

static const char *const run_subs[] = {"show", "cancel", NULL};

const struct cmd_info cmd_run_info = {
    .name = "run",
    .usage = "[GROUP] [--name NAME] (--sbatch FILE | -- COMMAND [ARGS...])  |  show ID  |  "
	     "cancel ID",
    .summary = "start a training run on a group, recorded with its lineage",
    .description =
	"Record a training run in the state repository (the workspace's runs ref,\n"
	"refs/kiln/runs/WORKSPACE) with its lineage, then start it:\n"
	"  the code     the git commit of the directory kiln runs in; a tree with\n"
	"               uncommitted changes is refused unless --allow-dirty, which\n"
	"               records a digest of the diff\n"
	"  the data     for each --data STORE[/PREFIX], a digest over the keys, sizes\n"
	"               and ETags the store lists under the prefix\n"
	"  the cluster  the spec's digest, the state commit, the image, the instance\n"
	"               types, the node count and the spec's workload: block\n"
	"  who and when the author (as a state commit's) and the time\n"
	"With scheduler: slurm, --sbatch FILE (or the command, wrapped) is submitted\n"
	"through the controller node over kiln's ssh path and the job id recorded.\n"
	"Without a scheduler the command is started on every node of GROUP (the\n"
	"first group with GPUs by default) with KILN_RUN_ID, KILN_NODES,\n"
	"KILN_NODE_RANK and KILN_MASTER_ADDR set, as torchrun and mpirun use them.\n"
	"No argument, script or environment value is recorded, only digests.\n\n"
	"  show ID    the run with its lineage\n"
	"  cancel ID  scancel its job, or end what kiln started on the nodes\n\n"
	"On sim the run is simulated: it lasts KILN_SIM_RUN_SECONDS (default 3600)\n"
	"and reports KILN_SIM_RUN_TOKENS_PER_S tokens a second, and says so.",
    .options = start_options,
    .noptions = ARRAY_SIZE(start_options),
    .see_also = "kiln-run(1), kiln-runs(1), kiln-exec(1)",
    .subcommands = run_subs,
};

static const struct cli_option runs_options[] = {
    RUN_OPT_SPEC,
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    {"json", 0, false, OPT_JSON, NULL, "print {\"runs\": [RUN...]} as JSON"},
};

const struct cmd_info cmd_runs_info = {
    .name = "runs",
    .usage = "[--json] [OPTIONS]",
    .summary = "list the workspace's training runs",
    .description = "List the runs kiln run recorded in the workspace, oldest first: id, name,\n"
		   "state, nodes, started, ended, exit status and tokens (\"no data\" when the\n"
		   "run reported none). A record changed by hand in the state repository is\n"
		   "marked EDITED and never trusted for money. A run started without a\n"
		   "scheduler is first read on its nodes (one ssh exchange a node, for all\n"
		   "its runs): once every rank has ended it is recorded completed, or failed\n"
		   "with the worst exit status of its ranks. KILN_NOW sets the clock.",
    .options = runs_options,
    .noptions = ARRAY_SIZE(runs_options),
    .see_also = "kiln-runs(1), kiln-run(1)",
};

struct run_cmd {
	struct run_flags f;
	struct runop_request q;
	bool json;
	const char *sub; /* "show", "cancel", or NULL */
	const char *id;
	const char *spec;
	const char **data; /* --data, for q.data */
	size_t capdata;
	struct op_run r;
};

static char *when(int64_t t)
{
	char buf[21];

	return xstrdup(t ? timefmt_time_format_rfc3339(t, buf) : "-");
}

static char *tokens_text(double tokens)
{
	if (tokens < 0)
		return xstrdup("no data");
	if (tokens >= 1e9)
		return xasprintf("%.2fB", tokens / 1e9);
	if (tokens >= 1e6)
		return xasprintf("%.2fM", tokens / 1e6);
	return xasprintf("%.0f", tokens);
}

static void print_text_value(const char *label, const char *value)
{
	char *v = str_for_terminal(value ? value : "-", 200);

	printf("  %-14s %s\n", label, v);
	free(v);
}

static void show_text(const struct runrec *r)
{
	char *s = when(r->started), *e = when(r->ended), *c = when(r->created),
	     *t = tokens_text(r->tokens), *exit_s = r->has_exit ? xasprintf("%d", r->exit_status)
							      : xstrdup("-");
	char *nodes = xasprintf("%d (%d GPUs%s%s)", r->nodes, r->gpus, r->gpu_model ? " " : "",
				r->gpu_model ? r->gpu_model : "");
	const struct runrec_lineage *l = &r->lineage;

	printf("Run %s: %s\n", r->id, r->name ? r->name : "-");
	if (r->edited)
		printf("  EDITED: %s; its figures are not trusted for money\n", r->edited_why);
	if (r->simulated)
		printf("  (simulated: the %s provider runs no machines)\n",
		       r->provider ? r->provider : "-");
	print_text_value("state", runrec_state_name(r->state));
	print_text_value("cluster", r->cluster);
	print_text_value("workspace", r->workspace);
	print_text_value("group", r->group);
	print_text_value("nodes", nodes);
	print_text_value("scheduler", r->scheduler);
	print_text_value("job id", r->job_id);
	print_text_value("recorded", c);
	print_text_value("started", s);
	print_text_value("ended", e);
	print_text_value("exit status", exit_s);
	print_text_value("tokens", t);
	print_text_value("author", r->author);
	printf("Lineage:\n");
	print_text_value("code", l->code_commit ? l->code_commit : "(not a git repository)");
	if (l->dirty)
		print_text_value("dirty", l->diff_digest);
	for (size_t i = 0; i < l->ndata; i++) {
		char *d = xasprintf("%s/%s: %llu objects, %llu bytes, %s", l->data[i].store,
				    l->data[i].prefix, (unsigned long long)l->data[i].objects,
				    (unsigned long long)l->data[i].bytes,
				    l->data[i].manifest_digest);

		print_text_value("data", d);
		free(d);
	}
	print_text_value("spec", l->spec_digest);
	print_text_value("state commit", l->state_commit);
	print_text_value("image", l->image);
	for (size_t i = 0; i < l->ntypes; i++)
		print_text_value("instance type", l->instance_types[i]);
	{
		char *entry = xasprintf("%s %s (%d args, %s)", r->entry.kind ? r->entry.kind : "-",
					r->entry.name ? r->entry.name : "-", r->entry.nargs,
					r->entry.digest ? r->entry.digest : "-");

		print_text_value("entry", entry);
		free(entry);
	}
	if (l->workload) {
		char *w = jsonw_dumps(l->workload, JSON_COMPACT | JSON_SORT_KEYS, NULL);

		print_text_value("workload", w);
		free(w);
	}
	free(s);
	free(e);
	free(c);
	free(t);
	free(exit_s);
	free(nodes);
}

static int parse(struct run_cmd *c, struct cli_parser *p, struct cli *cli, int argc, char **argv,
		 int *ret)
{
	int i, opt, nargs = argc;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			nargs = i;
			c->q.command = argv + i + 1;
			c->q.ncommand = argc - i - 1;
			break;
		}
	*ret = KILN_EXIT_ERROR;
	cli_parser_init(p, cli, &cmd_run_info, nargs, argv);
	while ((opt = cli_next(p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			*ret = p->exit_code;
			return -1;
		}
		if (opt == OPT_NAME)
			c->q.name = p->optarg;
		else if (opt == OPT_SBATCH)
			c->q.sbatch = p->optarg;
		else if (opt == OPT_DATA)
			*ARRAY_PUSH(c->data, c->q.ndata, c->capdata) = p->optarg;
		else if (opt == OPT_ALLOW_DIRTY)
			c->q.allow_dirty = true;
		else if (opt == OPT_JSON)
			c->json = true;
		else if (cmd_run_flags_handle(&c->f, cli, opt, p->optarg) < 0)
			return -1;
	}
	for (i = p->optind; i < nargs; i++) {
		const char *a = argv[i];

		if (i == p->optind && (strcmp(a, "show") == 0 || strcmp(a, "cancel") == 0)) {
			c->sub = a;
		} else if (c->sub && !c->id) {
			c->id = a;
		} else if (!c->sub && (str_ends_with(a, ".yaml") || str_ends_with(a, ".yml")) &&
			   !c->f.spec) {
			c->f.spec = a;
		} else if (!c->sub && !c->q.group) {
			c->q.group = a;
		} else {
			cli_error(cli, c->sub ? "give one run id" : "name one group",
				  "too many operands: '%s'", a);
			return -1;
		}
	}
	if (c->sub && !c->id) {
		cli_error(cli, "kiln runs lists the run ids", "%s takes a run id", c->sub);
		return -1;
	}
	if (c->sub && c->id && !runrec_id_ok(c->id)) {
		char *shown = str_for_terminal(c->id, 40);

		cli_error(cli, "a run id is r- and 8 hex digits; kiln runs lists them",
			  "'%s' is not a run id", shown);
		free(shown);
		return -1;
	}
	if (!c->sub && !c->q.sbatch && c->q.ncommand == 0) {
		cli_error(cli,
			  "for example: kiln run trainers -- torchrun train.py, or kiln run "
			  "--sbatch train.sbatch",
			  "nothing to run: give --sbatch FILE or -- COMMAND");
		return -1;
	}
	if (c->q.sbatch && c->q.ncommand) {
		cli_error(cli, "give one of them", "--sbatch and -- COMMAND both given");
		return -1;
	}
	return 0;
}

static int open_spec(struct run_cmd *c, struct cli *cli)
{
	const char *spec = c->f.spec;

	if (!spec && !(spec = cmd_run_spec_operand(cli, NULL, 0, NULL, 0)))
		return -1;
	if (cmd_run_open(&c->r, cli, &c->f, spec) < 0)
		return -1;
	return cmd_run_need_cluster(cli, &c->r);
}

static void print_json_run(const struct runrec *r)
{
	json_t *j = runrec_json(r, false);

	cmd_run_print_json(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
}

/*
 * Read back the end of l's runs kiln started without a scheduler (runop_reap,
 * over ssh) and l again after; what could not be read is a warning, and
 * the runs are listed as recorded.
 */
static int read_ends(struct cli *cli, struct run_flags *f, struct store *s, int64_t now,
		     struct runrec_list *l, struct kiln_error *err)
{
	struct op_run r = {0};
	struct kiln_error why = {0};
	const char *spec = f->spec;

	if (!runop_needs_reap(l))
		return 0;
	f->refresh = false;
	if (!spec && !(spec = cmd_run_spec_operand(cli, NULL, 0, NULL, 0))) {
		fprintf(stderr, "kiln %s: warning: the end of the running runs was not read\n",
			cli->cmd);
		return 0;
	}
	if (cmd_run_open(&r, cli, f, spec) < 0) {
		operation_close(&r);
		fprintf(stderr, "kiln %s: warning: the end of the running runs was not read\n",
			cli->cmd);
		return 0;
	}
	if (runop_reap(&r, getenv(ACCESS_ENDPOINT_ENV), &why) < 0)
		fprintf(stderr, "kiln %s: warning: the end of the running runs was not read: %s\n",
			cli->cmd, why.msg);
	operation_close(&r);
	runrec_list_release(l);
	if (store_sync(s, err) < 0)
		return -1;
	return runop_list(s, workspace_name(f->store.workspace), now, l, err);
}

static int show(struct run_cmd *c, struct cli *cli)
{
	struct store *s = NULL;
	struct runrec_list l = {0};
	struct runrec *r;
	struct kiln_error err = {0};
	int64_t now;
	int ret = KILN_EXIT_ERROR;

	if (cmd_store_flags_open(&c->f.store, cli, false, &s, NULL) < 0)
		goto out;
	if (timefmt_now(&now, &err) < 0 ||
	    runop_list(s, workspace_name(c->f.store.workspace), now, &l, &err) < 0 ||
	    read_ends(cli, &c->f, s, now, &l, &err) < 0 || !(r = runrec_find(&l, c->id, &err))) {
		cmd_report(cli, &err);
		goto out;
	}
	if (c->json)
		print_json_run(r);
	else
		show_text(r);
	ret = KILN_EXIT_OK;
out:
	runrec_list_release(&l);
	store_free(s);
	return ret;
}

int cmd_run(int argc, char **argv, struct cli *cli)
{
	struct run_cmd c = {0};
	struct cli_parser p;
	struct runrec rec = {0};
	struct kiln_error err = {0};
	int ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&c.f);
	c.f.refresh = false;
	if (parse(&c, &p, cli, argc, argv, &ret) < 0)
		goto out;
	if (c.sub && strcmp(c.sub, "show") == 0) {
		ret = show(&c, cli);
		goto out;
	}
	if (open_spec(&c, cli) < 0)
		goto out;
	c.q.endpoint = getenv(ACCESS_ENDPOINT_ENV);
	c.q.data = c.data;
	c.q.code_dir = ".";
	if (c.sub ? runop_cancel(&c.r, c.id, c.q.endpoint, &rec, &err) < 0
		  : runop_start(&c.r, &c.q, &rec, &err) < 0) {
		if (rec.id[0] && !c.sub)
			fprintf(stderr, "kiln run: run %s is recorded as %s\n", rec.id,
				runrec_state_name(rec.state));
		cmd_report(cli, &err);
		goto out;
	}
	if (c.json) {
		print_json_run(&rec);
	} else if (c.sub) {
		printf("Run %s cancelled%s.\n", rec.id, rec.simulated ? " (simulated)" : "");
	} else {
		printf("Run %s (%s) recorded and %s on %s: %d node%s, %d GPUs.\n", rec.id, rec.name,
		       rec.job_id ? "submitted" : "started", rec.group, rec.nodes,
		       rec.nodes == 1 ? "" : "s", rec.gpus);
		if (rec.job_id)
			printf("Slurm job %s; kiln run show %s follows it.\n", rec.job_id, rec.id);
		if (rec.simulated) {
			char *d = timefmt_duration_format(rec.model_seconds);

			printf("(simulated: the %s provider runs no machines; the run ends after "
			       "%s)\n",
			       rec.provider, d);
			free(d);
		}
	}
	ret = KILN_EXIT_OK;
out:
	runrec_release(&rec);
	free(c.data);
	operation_close(&c.r);
	cmd_run_flags_release(&c.f);
	cli_parser_release(&p);
	return ret;
}

int cmd_runs(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct store *s = NULL;
	struct runrec_list l = {0};
	struct kiln_error err = {0};
	bool json = false;
	int64_t now;
	int opt, ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_runs_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (opt == OPT_JSON)
			json = true;
		else if (cmd_run_flags_handle(&f, cli, opt, p.optarg) < 0)
			goto out;
	}
	if (p.optind < argc) {
		cli_error(cli, "kiln run show ID shows one run", "kiln runs takes no operand: '%s'",
			  argv[p.optind]);
		goto out;
	}
	if (cmd_store_flags_open(&f.store, cli, false, &s, NULL) < 0)
		goto out;
	if (timefmt_now(&now, &err) < 0 ||
	    runop_list(s, workspace_name(f.store.workspace), now, &l, &err) < 0 ||
	    read_ends(cli, &f, s, now, &l, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (json) {
		json_t *doc = json_object(), *runs = json_array();

		for (size_t i = 0; i < l.n; i++)
			json_array_append_new(runs, runrec_json(&l.runs[i], false));
		json_object_set_new(doc, "runs", runs);
		cmd_run_print_json(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		json_decref(doc);
	} else if (!l.n) {
		printf("No runs in workspace '%s' yet; kiln run starts one.\n",
		       workspace_name(f.store.workspace));
	} else {
		const char *simulated = NULL;

		printf("%-10s  %-20s  %-9s  %5s  %-20s  %-20s  %4s  %s\n", "ID", "NAME", "STATE",
		       "NODES", "STARTED", "ENDED", "EXIT", "TOKENS");
		for (size_t i = 0; i < l.n; i++) {
			const struct runrec *r = &l.runs[i];
			char *st = when(r->started), *en = when(r->ended), *t = tokens_text(r->tokens),
			     *name = str_for_terminal(r->name ? r->name : "-", 20);
			char ex[16] = "-";

			if (r->has_exit)
				snprintf(ex, sizeof(ex), "%d", r->exit_status);
			printf("%-10s  %-20s  %-9s  %5d  %-20s  %-20s  %4s  %s%s\n", r->id, name,
			       runrec_state_name(r->state), r->nodes, st, en, ex, t,
			       r->edited ? "  EDITED: not trusted for money" : "");
			if (r->simulated && !simulated)
				simulated = r->provider ? r->provider : "-";
			free(st);
			free(en);
			free(t);
			free(name);
		}
		if (simulated)
			printf("(simulated runs: the %s provider runs no machines)\n", simulated);
	}
	ret = KILN_EXIT_OK;
out:
	runrec_list_release(&l);
	store_free(s);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
