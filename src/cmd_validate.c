/*
 * cmd_validate.c - `kiln validate [SPEC...]`: every problem in every spec,
 * each as FILE:LINE:COL with a hint where there is a fix.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "cmds.h"
#include "spec_opts.h"
#include "validate.h"
#include "jsonw.h"

enum {
	OPT_VAR = 1,
	OPT_JSON,
	OPT_QUIET,
};

static const struct cli_option options[] = {
    {"var", 0, true, OPT_VAR, "NAME=VALUE", "set a variable, overriding vars: (repeatable)"},
    {"json", 0, false, OPT_JSON, NULL, "print the diagnostics as a JSON array on stdout"},
    {"quiet", 'q', false, OPT_QUIET, NULL, "print nothing for valid specs"},
};

const struct cmd_info cmd_validate_info = {
    .name = "validate",
    .usage = "[OPTIONS] [SPEC...]",
    .summary = "check specs and report every error with FILE:LINE:COL",
    .description =
	"Check each SPEC (default ./kiln.yaml; - reads standard input) against the spec\n"
	"format: unknown keys, wrong types, bad durations and CIDRs, names, references\n"
	"between groups, roles and stores, and the fabric and encryption rules; the\n"
	"provider's own rules (tag keys and values as AWS takes them, GPU models and\n"
	"instance types its catalog has); and, against today's date (KILN_NOW sets it,\n"
	"for tests), the waivers a plan would count as errors (expired, no reason, an\n"
	"unknown rule). Every problem is printed, not only the first, as\n"
	"FILE:LINE:COL: error: MESSAGE with a hint line when there is a fix. A valid\n"
	"spec prints `ok SPEC`. Nothing is sent to any cloud.\n\n"
	"Exit status: 0 when every spec is valid (warnings allowed), 1 otherwise.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-validate(1), kiln-spec(5)",
};

int cmd_validate(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct spec_vars vars = {0};
	struct kiln_error err = {0};
	struct diags all = {0};
	bool json = false, quiet = false;
	int c, ret = KILN_EXIT_OK, i, nspecs;
	char *default_spec[] = {"kiln.yaml"};
	char **specs;

	cli_parser_init(&p, cli, &cmd_validate_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		switch (c) {
		case CLI_EXIT:
			ret = p.exit_code;
			goto out;
		case OPT_VAR:
			if (spec_vars_add(&vars, p.optarg, &err) < 0) {
				cli_error(cli, err.hint, "%s", err.msg);
				ret = KILN_EXIT_ERROR;
				goto out;
			}
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_QUIET:
			quiet = true;
			break;
		}
	}
	specs = argv + p.optind;
	nspecs = argc - p.optind;
	if (nspecs == 0) {
		if (access("kiln.yaml", F_OK) != 0) {
			cli_error(cli, RUN_NO_SPEC_HINT, "no spec given and ./kiln.yaml does not exist");
			ret = KILN_EXIT_ERROR;
			goto out;
		}
		specs = default_spec;
		nspecs = 1;
	}
	for (i = 0; i < nspecs; i++) {
		struct diags d = {0};
		struct spec *spec = NULL;
		struct spec_options opts = {vars.v, vars.n};
		const char *name = strcmp(specs[i], "-") == 0 ? "<stdin>" : specs[i];

		if (validate_load_today(&spec, specs[i], &opts, &d) < 0)
			ret = KILN_EXIT_ERROR;
		diags_sort(&d);
		if (json) {
			size_t k;

			/* Move them into one array for the whole run. */
			for (k = 0; k < d.n; k++)
				*ARRAY_PUSH(all.v, all.n, all.cap) = d.v[k];
			free(d.v);
			memset(&d, 0, sizeof(d));
		} else {
			diags_print(&d, stderr, cli->color_err);
			if (!d.errors && !quiet)
				printf("ok %s\n", name);
		}
		diags_release(&d);
		spec_free(spec);
	}
	if (json) {
		json_t *arr = diags_to_json(&all);

		jsonw_dumpf(arr, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(arr);
	}
out:
	diags_release(&all);
	spec_vars_release(&vars);
	cli_parser_release(&p);
	return ret;
}
