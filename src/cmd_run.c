/*
 * cmd_run.c - see cmd_run.h.
 */
#include "cmd_run.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "health.h"
#include "jsonw.h"
#include "log.h"
#include "progress.h"
#include "state.h"
#include "timefmt.h"

void cmd_run_flags_init(struct run_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->refresh = true;
	f->parallelism = 32;
}

int cmd_run_flags_handle(struct run_flags *f, const struct cli *cli, int id, const char *arg)
{
	int rc = cmd_store_flags_handle(&f->store, cli, id, arg);
	struct kiln_error err = {0};

	if (rc != 0)
		return rc;
	switch (id) {
	case OPT_RUN_SPEC:
		f->spec = arg;
		return 1;
	case OPT_RUN_VAR:
		if (spec_vars_add(&f->vars, arg, &err) < 0) {
			cli_error(cli, err.hint, "%s", err.msg);
			return -1;
		}
		return 1;
	case OPT_RUN_TARGET:
		*ARRAY_PUSH(f->targets, f->ntargets, f->captargets) = arg;
		return 1;
	case OPT_RUN_REPLACE:
		*ARRAY_PUSH(f->replace, f->nreplace, f->capreplace) = arg;
		return 1;
	case OPT_RUN_INCLUDE_RETAINED:
		*ARRAY_PUSH(f->include_retained, f->ninclude, f->capinclude) = arg;
		return 1;
	case OPT_RUN_REFRESH:
		if (strcmp(arg, "true") == 0) {
			f->refresh = true;
		} else if (strcmp(arg, "false") == 0) {
			f->refresh = false;
		} else {
			cli_error(cli, "write --refresh=true or --refresh=false",
				  "--refresh '%s' is not true or false", arg);
			return -1;
		}
		return 1;
	case OPT_RUN_JSON:
		f->json = true;
		return 1;
	case OPT_RUN_NO_PAGER:
		f->no_pager = true;
		return 1;
	case OPT_RUN_MARKDOWN:
		f->markdown = true;
		return 1;
	case OPT_RUN_OUT:
		f->out = arg;
		return 1;
	case OPT_RUN_DETAILED:
		f->detailed = true;
		return 1;
	case OPT_RUN_DESTROY:
		f->destroy = true;
		return 1;
	case OPT_RUN_AUTO_APPROVE:
		f->auto_approve = true;
		return 1;
	case OPT_RUN_PARALLELISM:
		return cmd_run_parallelism_parse(cli, arg, &f->parallelism) < 0 ? -1 : 1;
	}
	return 0;
}

int cmd_run_parallelism_parse(const struct cli *cli, const char *arg, int *out)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (*arg == '\0' || *end || n < 1 || n > 1024) {
		cli_error(cli, "use a number from 1 to 1024",
			  "--parallelism '%s' is not a number from 1 to 1024", arg);
		return -1;
	}
	*out = (int)n;
	return 0;
}

int cmd_run_flags_parse(struct run_flags *f, struct cli_parser *p, struct cli *cli,
			const struct cmd_info *info, int argc, char **argv, int *ret)
{
	int c;

	cli_parser_init(p, cli, info, argc, argv);
	while ((c = cli_next(p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			*ret = p->exit_code;
			return -1;
		}
		if (cmd_run_flags_handle(f, cli, c, p->optarg) < 0)
			return -1;
	}
	return 0;
}

void cmd_run_flags_release(struct run_flags *f)
{
	spec_vars_release(&f->vars);
	free(f->targets);
	free(f->replace);
	free(f->include_retained);
}

struct engine *cmd_run_engine_only(struct cli *cli, const char *spec, const struct run_flags *f)
{
	struct spec_options opts = {f->vars.v, f->vars.n};
	struct kiln_error err = {0};
	struct diags d = {0};
	struct engine *e = NULL;

	if (engine_open(&e, spec, &opts, workspace_name(f->store.workspace), &d, &err) != 0) {
		diags_sort(&d);
		diags_print(&d, stderr, cli->color_err);
		if (err.msg[0])
			cmd_report(cli, &err);
		e = NULL;
	} else {
		diags_print(&d, stderr, cli->color_err);
	}
	diags_release(&d);
	return e;
}

const char *cmd_run_spec_operand(const struct cli *cli, const char *flag, int argc, char **argv,
				 int optind)
{
	if (flag && argc - optind >= 1) {
		cli_error(cli, "give the spec once", "two specs: '%s' and '%s'", flag, argv[optind]);
		return NULL;
	}
	if (flag)
		return flag;
	if (argc - optind > 1) {
		cli_error(cli, "give one spec (or plan file)", "too many operands: '%s' and '%s'",
			  argv[optind], argv[optind + 1]);
		return NULL;
	}
	if (argc - optind == 1)
		return argv[optind];
	if (access("kiln.yaml", F_OK) != 0) {
		cli_error(cli, RUN_NO_SPEC_HINT, "no spec given and ./kiln.yaml does not exist");
		return NULL;
	}
	return "kiln.yaml";
}

static void run_report(void *arg, const struct kiln_error *err)
{
	cmd_report(arg, err);
}

void cmd_run_loaded(void *arg, struct diags *d)
{
	const struct cli *cli = arg;

	diags_sort(d);
	diags_print(d, stderr, cli->color_err);
}

int cmd_run_options(struct op_options *o, const struct cli *cli, const struct run_flags *f,
		    const char *spec_path)
{
	*o = (struct op_options){
	    .vars = {f->vars.v, f->vars.n},
	    .state = f->store.state,
	    .workspace = f->store.workspace,
	    .lock_timeout = f->store.lock_timeout,
	    .targets = f->targets,
	    .ntargets = f->ntargets,
	    .replace = f->replace,
	    .nreplace = f->nreplace,
	    .include_retained = f->include_retained,
	    .ninclude = f->ninclude,
	    .refresh = f->refresh,
	    .destroy = f->destroy,
	};
	if (strcmp(spec_path, "-") != 0)
		return 0;
	cli_error(cli, "write the spec to a file: plans are bound to the file's digest",
		  "%s reads a spec file, not standard input", cli->cmd);
	return -1;
}

/*
 * The options of a run from f, and r's hooks; the spec "-" refused (-1
 * after reporting, r zeroed).
 */
static int run_prepare(struct op_run *r, struct op_options *o, struct cli *cli,
		       const struct run_flags *f, const char *spec_path)
{
	if (cmd_run_options(o, cli, f, spec_path) < 0) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	r->report = run_report;
	r->loaded = cmd_run_loaded;
	r->report_arg = cli;
	return 0;
}

/* An operation's failure: err, or with err empty, the spec not valid (its diagnostics shown). */
static int run_failed(const struct cli *cli, const struct kiln_error *err, const char *spec_path)
{
	if (err->msg[0])
		cmd_report(cli, err);
	else
		fprintf(stderr, "%s: %s: %s is not valid; nothing was planned\n", cli->prog,
			cli->cmd, spec_path);
	return -1;
}

struct op_ui cmd_run_ui(struct cli *cli)
{
	return (struct op_ui){cli, run_report, cmd_run_loaded};
}

int cmd_run_open(struct op_run *r, struct cli *cli, struct run_flags *f, const char *spec_path)
{
	struct op_options o;
	struct op_ui ui = cmd_run_ui(cli);

	if (cmd_run_options(&o, cli, f, spec_path) < 0) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	return operation_open(r, &o, spec_path, false, cli->cmd, &ui);
}

int cmd_run_plan_spec(struct op_run *r, struct cli *cli, struct run_flags *f, const char *spec_path)
{
	struct op_options o;
	struct kiln_error err = {0};

	if (run_prepare(r, &o, cli, f, spec_path) < 0)
		return -1;
	if (operation_plan_spec(r, &o, spec_path, &err) < 0)
		return run_failed(cli, &err, spec_path);
	return 0;
}

void cmd_run_print_json(const json_t *v, size_t flags)
{
	jsonw_dumpf(v, stdout, flags);
	fputc('\n', stdout);
}

void cmd_run_report_failures(const struct cli *cli, const json_t *errors)
{
	size_t i;
	json_t *e;

	json_array_foreach(errors, i, e)
	    fprintf(stderr, "%s: %s: %s: %s failed: %s\n", cli->prog, cli->cmd,
		    json_string_value(json_object_get(e, "address")),
		    json_string_value(json_object_get(e, "op")),
		    json_string_value(json_object_get(e, "error")));
}

bool cmd_run_confirm(const char *question)
{
	char line[64];

	fprintf(stderr, "\n%s Only 'yes' is accepted: ", question);
	fflush(stderr);
	log_stderr_end_line();
	if (!fgets(line, sizeof(line), stdin))
		return false;
	line[strcspn(line, "\r\n")] = '\0';
	return strcmp(line, "yes") == 0;
}

int cmd_run_need_cluster(const struct cli *cli, const struct op_run *r)
{
	/* kiln init makes the workspace with an empty state: no cluster until an apply. */
	if (r->ws && r->ws->exists && state_cluster(r->state))
		return 0;
	cli_error(cli, "bring it up with `kiln up`",
		  "workspace '%s' has no cluster yet: nothing has been applied", r->e->workspace);
	return -1;
}

int cmd_run_health_timeout(const struct cli *cli, const char *arg, int64_t *timeout)
{
	const char *env = getenv("KILN_HEALTH_TIMEOUT");
	const char *text = arg ? arg : env && *env ? env : NULL;

	*timeout = HEALTH_TIMEOUT_DEFAULT;
	if (!text)
		return 0;
	if (strcmp(text, "0") == 0) {
		*timeout = 0;
		return 0;
	}
	if (timefmt_duration_parse(text, timeout) < 0 || *timeout > 86400) {
		cli_error(cli,
			  "write a duration of at most 24h like 20m, 90s or 1h, or 0 not to wait",
			  "%s '%s' is not a duration",
			  arg ? "--health-timeout" : "KILN_HEALTH_TIMEOUT", text);
		return -1;
	}
	return 0;
}

void cmd_run_health_waiting(int64_t timeout, bool json)
{
	char *waited;

	if (json)
		return;
	waited = timefmt_duration_format(timeout);
	printf("Health: waiting up to %s for the nodes to report (--health-timeout).\n", waited);
	fflush(stdout);
	free(waited);
}

int cmd_run_health_show(const struct cli *cli, const json_t *groups, int64_t timeout, bool json)
{
	struct strbuf lines = {0};
	char *waited = timefmt_duration_format(timeout);
	const json_t *g;
	bool bad = false;
	size_t i;

	json_array_foreach(groups, i, g) bad |= health_group_bad(g);
	json_array_foreach(groups, i, g)
	{
		char *line = health_line(g, waited);

		if (!json)
			printf("  %s\n", line);
		sb_addf(&lines, "%s%s", i ? "; " : "", line);
		free(line);
	}
	if (json)
		progress_json_event("health", bad ? "warn" : "info",
				    json_pack("{s:O, s:s, s:b}", "groups", groups, "timeout",
					      waited, "healthy", !bad),
				    "%s", lines.buf ? lines.buf : "");
	sb_release(&lines);
	free(waited);
	if (!bad)
		return KILN_EXIT_OK;
	fflush(stdout);
	fprintf(stderr,
		"%s: %s: the %s is recorded, but not every node is healthy (exit status %d)\n"
		"  hint: `kiln status` shows each node; `kiln repair` replaces the unhealthy "
		"ones\n",
		cli->prog, cli->cmd, strcmp(cli->cmd, "repair") == 0 ? "repair" : "apply",
		KILN_EXIT_UNHEALTHY);
	return KILN_EXIT_UNHEALTHY;
}
