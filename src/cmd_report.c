/*
 * cmd_report.c - `kiln report`: what every cluster lifetime in the state
 * repository cost, from the ledger its commits carry (report.c), as text,
 * JSON, CSV or one HTML page. Reads the state repository only.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_store.h"
#include "cmds.h"
#include "jsonc.h"
#include "jsonw.h"
#include "report.h"
#include "provider.h"
#include "report_actual.h"
#include "str.h"
#include "report_render.h"
#include "timefmt.h"

enum {
	OPT_SINCE = 1,
	OPT_BY,
	OPT_FORMAT,
	OPT_ACTUAL,
	OPT_PROVIDER,
	OPT_REGION,
};

static const struct cli_option options[] = {
    CMD_OPT_STATE,
    {"since", 0, true, OPT_SINCE, "DATE",
     "count only what burned from DATE on (2027-01-31 or RFC 3339)"},
    {"by", 0, true, OPT_BY, "KEY",
     "group by workspace (default), cluster or tag:KEY; run: each run's cost, and idle"},
    {"format", 0, true, OPT_FORMAT, "FORMAT", "text (default), json, csv or html"},
    {"actual", 0, false, OPT_ACTUAL, NULL,
     "what the cloud billed per cluster and day beside the estimate, and the variance"},
    {"provider", 0, true, OPT_PROVIDER, "NAME",
     "with --actual: whose bill to read (default: the first real cloud, aws)"},
    {"region", 0, true, OPT_REGION, "REGION",
     "with --actual: the region the credentials are opened in (the bill is account-wide)"},
};

const struct cmd_info cmd_report_info = {
    .name = "report",
    .usage = "[--since DATE] [--by workspace|cluster|run|tag:KEY] [--format text|json|csv|html]\n"
	     "       [--actual [--provider NAME] [--region REGION]] [--format text|json]",
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
		   "tests. Nothing is changed and no lock is taken.\n\n"
		   "--actual reads what the cloud billed (AWS: Cost Explorer, daily, grouped by\n"
		   "the kiln:cluster cost-allocation tag and the service) over the days the\n"
		   "lifetimes cover, and sets it beside the ledger's estimate per cluster and\n"
		   "day, split into compute, storage and other, with the variance (billed minus\n"
		   "estimate). It checks kiln:cluster and kiln:workspace are activated as\n"
		   "cost-allocation tags and says how to activate them when not. It needs the\n"
		   "cloud's credentials and ce:GetCostAndUsage and ce:ListCostAllocationTags\n"
		   "(kiln iam-policy --report-actual).",
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

/* The tags Cost Explorer cannot group by yet, on standard error with how to activate them. */
static void tags_warn(const struct cli *cli, const json_t *billed)
{
	const char *key, *hint = json_string_value(json_object_get(billed, "hint"));
	const json_t *st;

	json_object_foreach_const(json_object_get(billed, "tags"), key, st)
	{
		if (json_is_string(st) && strcmp(json_string_value(st), "Active") == 0)
			continue;
		fprintf(stderr,
			"%s: %s: warning: the tag %s is %s as a cost-allocation tag, so the bill "
			"cannot be grouped by it; %s\n",
			cli->prog, cli->cmd, key,
			json_is_string(st) ? "not activated" : "not yet known (never billed)",
			hint ? hint : "activate it");
	}
}

static void money(double v, bool sign)
{
	printf(sign ? " %+12.2f" : " %12.2f", v);
}

static void actual_text(const json_t *var)
{
	const json_t *d, *k, *v;
	const char *svc;
	size_t i, j;

	printf("%-20s %-10s %-8s %12s %12s %12s\n", "CLUSTER", "DAY", "KIND", "ESTIMATE",
	       "BILLED", "VARIANCE");
	json_array_foreach(json_object_get(var, "days"), i, d)
	{
		char *c = str_for_terminal(json_string_value(json_object_get(d, "cluster")), 40);

		printf("%-20s %-10s %-8s", c, json_string_value(json_object_get(d, "date")), "all");
		money(json_number_value(json_object_get(d, "estimate")), false);
		money(json_number_value(json_object_get(d, "billed")), false);
		money(json_number_value(json_object_get(d, "variance")), true);
		putchar('\n');
		free(c);
		json_array_foreach(json_object_get(d, "kinds"), j, k)
		{
			const json_t *e = json_object_get(k, "estimate");

			if (json_number_value(json_object_get(k, "billed")) == 0 &&
			    json_number_value(e) == 0)
				continue;
			printf("%-20s %-10s %-8s", "", "", json_string_value(json_object_get(k, "kind")));
			if (json_is_number(e))
				money(json_number_value(e), false);
			else
				printf(" %12s", "unknown");
			money(json_number_value(json_object_get(k, "billed")), false);
			if (json_is_number(json_object_get(k, "variance")))
				money(json_number_value(json_object_get(k, "variance")), true);
			else
				printf(" %12s", "unknown");
			putchar('\n');
			json_object_foreach_const(json_object_get(k, "services"), svc, v)
			{
				char *sv = str_for_terminal(svc, 80);

				printf("%-20s %-10s %-8s %12s %12.2f  %s\n", "", "", "", "",
				       json_number_value(v), sv);
				free(sv);
			}
		}
	}
	json_array_foreach(json_object_get(var, "clusters"), i, d)
	{
		char *c = str_for_terminal(json_string_value(json_object_get(d, "cluster")), 40);

		printf("%-20s %-10s %-8s", c, "total", "all");
		money(json_number_value(json_object_get(d, "estimate")), false);
		money(json_number_value(json_object_get(d, "billed")), false);
		money(json_number_value(json_object_get(d, "variance")), true);
		putchar('\n');
		free(c);
	}
	if (json_number_value(json_object_get(var, "untagged")) != 0)
		printf("billed without a kiln:cluster tag value: %.2f\n",
		       json_number_value(json_object_get(var, "untagged")));
}

/* --actual: the bill beside the estimate of the report's lifetimes. */
static int actual_report(const struct cli *cli, const char *provider, const char *region,
			 const char *format, const json_t *doc, int64_t now)
{
	const struct provider *prov = provider ? provider_find(provider) : provider_first(false);
	struct kiln_error err = {0};
	json_t *billed = NULL, *est, *var;
	char first[11], last[11];

	if (!prov) {
		char *names = provider_names_join("--provider ", ", ", " or ");

		cli_error(cli, names, "'%s' is not a provider kiln knows", provider);
		free(names);
		return KILN_EXIT_ERROR;
	}
	report_actual_window(doc, now, first, last);
	if (report_actual_fetch(prov, region, first, last, &billed, &err) < 0) {
		cmd_report(cli, &err);
		return KILN_EXIT_ERROR;
	}
	tags_warn(cli, billed);
	est = report_actual_estimate(doc);
	var = report_actual_variance(est, json_object_get(billed, "rows"));
	json_object_set_new(var, "currency", json_string("USD"));
	json_object_set_new(var, "from", json_string(first));
	json_object_set_new(var, "to", json_string(last));
	json_object_set(var, "tags", json_object_get(billed, "tags"));
	if (strcmp(format, "json") == 0) {
		jsonw_dumpf(var, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
		putchar('\n');
	} else {
		printf("billed against the ledger's estimate, USD, %s to %s (exclusive)\n", first,
		       last);
		actual_text(var);
	}
	json_decref(est);
	json_decref(var);
	json_decref(billed);
	return KILN_EXIT_OK;
}

int cmd_report_costs(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct report_options o = {.by = "workspace"};
	struct kiln_error err = {0};
	struct cli_parser p;
	struct store *s = NULL;
	const char *format = "text", *provider = NULL, *region = NULL;
	bool actual = false;
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
		} else if (opt == OPT_ACTUAL) {
			actual = true;
		} else if (opt == OPT_PROVIDER) {
			provider = p.optarg;
		} else if (opt == OPT_REGION) {
			region = p.optarg;
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
	if (!actual && (provider || region)) {
		cli_error(cli, "add --actual", "--%s only applies to --actual",
			  provider ? "provider" : "region");
		goto out;
	}
	if (actual && strcmp(format, "text") && strcmp(format, "json")) {
		cli_error(cli, "use --format text or json", "--actual has no --format %s", format);
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
	if (actual) {
		ret = actual_report(cli, provider, region, format, doc, o.now);
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
