/*
 * cmd_report.c - `kiln report`: what every cluster lifetime in the state
 * repository cost, from the ledger its commits carry (report.c), as text,
 * JSON, CSV or one HTML page. Reads the state repository only.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_store.h"
#include "cmds.h"
#include "jsonw.h"
#include "report.h"
#include "report_render.h"
#include "timefmt.h"

enum {
	OPT_SINCE = 1,
	OPT_BY,
	OPT_FORMAT,
};

static const struct cli_option options[] = {
    CMD_OPT_STATE,
    {"since", 0, true, OPT_SINCE, "DATE",
     "count only what burned from DATE on (2027-01-31 or RFC 3339)"},
    {"by", 0, true, OPT_BY, "KEY",
     "group by workspace (default), cluster or tag:KEY; run: each run's cost, and idle"},
    {"format", 0, true, OPT_FORMAT, "FORMAT", "text (default), json, csv or html"},
};

const struct cmd_info cmd_report_info = {
    .name = "report",
    .usage = "[--since DATE] [--by workspace|cluster|run|tag:KEY] [--format text|json|csv|html]",
    .summary = "what each cluster lifetime cost: hours, GPU-hours, cost, useful GPU-hours",
    .description = "Read every workspace branch of the state repository, archived ones included,\n"
		   "and list each cluster lifetime (from the apply that created its first\n"
		   "resource to the destroy that left none, or to now): start, end, hours,\n"
		   "GPU-hours and cost, the integral of the hourly burn each commit recorded\n"
		   "(Kiln-Burn, see kiln-state(1)) plus the upfront fees recorded. Where GPU\n"
		   "utilization was recorded: useful GPU-hours (GPU-hours times the mean\n"
		   "utilization) and the cost per useful GPU-hour. History from before the\n"
		   "ledger is reported with its cost unknown, never $0. Subtotals by workspace,\n"
		   "cluster or a spec tag, and a total.\n\n"
		   "--format html writes one self-contained page for a FinOps review (nothing\n"
		   "fetched): the tables, where the money went (compute, storage, up-front\n"
		   "fees, retained and orphaned storage, idle GPU-hours and their cost), and\n"
		   "charts of the burn against the budget, the cost by kind, GPU utilization\n"
		   "per group and the cost over time. KILN_NOW (RFC 3339) sets the clock, for\n"
		   "tests. Nothing is changed and no lock is taken.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-report(1), kiln-state(1), kiln-status(1)",
};

/*
 * Each malformed ledger commit, on standard error: the report is written,
 * with the figures they touch unknown, and the exit status says it is
 * incomplete, so an auditor never takes a silent wrong total.
 */
static int ledger_errors_report(const struct cli *cli, const json_t *bad)
{
	const json_t *v;
	size_t i;

	fflush(stdout);
	json_array_foreach(bad, i, v)
	    fprintf(stderr, "%s: %s: error: %s\n", cli->prog, cli->cmd, json_string_value(v));
	if (!json_array_size(bad))
		return KILN_EXIT_OK;
	fprintf(stderr,
		"%s: %s: the report is incomplete: %zu malformed ledger commit%s not counted, so "
		"the cost of %s lifetime%s unknown\n",
		cli->prog, cli->cmd, json_array_size(bad), json_array_size(bad) == 1 ? " is" : "s are",
		json_array_size(bad) == 1 ? "its" : "their", json_array_size(bad) == 1 ? " is" : "s are");
	return KILN_EXIT_ERROR;
}

int cmd_report_costs(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct report_options o = {.by = "workspace"};
	struct kiln_error err = {0};
	struct cli_parser p;
	struct store *s = NULL;
	const char *format = "text";
	json_t *doc = NULL;
	int opt, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_report_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		int h;

		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if ((h = cmd_store_flags_handle(&flags, cli, opt, p.optarg)) < 0)
			goto out;
		if (h)
			continue;
		if (opt == OPT_SINCE) {
			if (report_since_parse(p.optarg, &o.since, &err) < 0) {
				cmd_report(cli, &err);
				goto out;
			}
			o.has_since = true;
		} else if (opt == OPT_BY) {
			if (report_by_check(p.optarg, &err) < 0) {
				cmd_report(cli, &err);
				goto out;
			}
			o.by = p.optarg;
		} else if (opt == OPT_FORMAT) {
			format = p.optarg;
			if (strcmp(format, "text") && strcmp(format, "json") &&
			    strcmp(format, "csv") && strcmp(format, "html")) {
				cli_error(cli, "use text, json, csv or html",
					  "unknown --format '%s'", format);
				goto out;
			}
		}
	}
	if (p.optind < argc) {
		cli_error(cli, "it reads every workspace of the state repository (--state)",
			  "takes no arguments, got '%s'", argv[p.optind]);
		goto out;
	}
	if (timefmt_now(&o.now, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (cmd_store_flags_open(&flags, cli, false, &s, NULL) < 0)
		goto out;
	if (report_build(s, &o, &doc, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (strcmp(format, "json") == 0) {
		jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		putchar('\n');
	} else if (strcmp(format, "csv") == 0) {
		report_render_csv(stdout, doc);
	} else if (strcmp(format, "html") == 0) {
		report_render_html(stdout, doc);
	} else {
		report_render_text(stdout, doc);
	}
	ret = ledger_errors_report(cli, json_object_get(doc, "ledger_errors"));
out:
	json_decref(doc);
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
