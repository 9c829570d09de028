/*
 * cmd_audit.c - `kiln audit [SPEC|PLANFILE]`: the policy findings of a spec
 * (planned the way `kiln plan` plans it: no lock, nothing created) or of a
 * saved plan, as text, JSON or SARIF. Exits 3 when an unwaived error-level
 * finding remains, so CI can gate on it.
 */
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "cmd_run.h"
#include "cmds.h"
#include "plan.h"
#include "jsonw.h"

enum {
	OPT_AUDIT_FORMAT = 990,
	OPT_AUDIT_JSON,
};

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    RUN_OPT_REFRESH,
    {"format", 'f', true, OPT_AUDIT_FORMAT, "text|json|sarif",
     "text (default), JSON ({findings, findings_summary}) or SARIF 2.1.0"},
    {"json", 0, false, OPT_AUDIT_JSON, NULL,
     "the same as --format json (--json is JSON output on every command)"},
};

const struct cmd_info cmd_audit_info = {
    .name = "audit",
    .usage = "[SPEC|PLANFILE] [OPTIONS]",
    .summary = "policy findings over a spec or a saved plan",
    .description = "Check a spec, planned the way `kiln plan` plans it (live state refreshed, no\n"
		   "lock taken, nothing created), or a plan saved by `kiln plan --out`, against\n"
		   "kiln's rules: encryption at rest, the S3 public access block, versioning of\n"
		   "checkpoint stores, IMDSv2, IAM wildcards, iam:PassRole on *, admin-equivalent\n"
		   "roles, ingress open to the world, GPU groups without a TTL or budget, and the\n"
		   "budget itself. Each finding names its rule (kiln-rules(7)), the resource, the\n"
		   "spec's FILE:LINE:COL, the fix, and the Checkov and Trivy checks that find the\n"
		   "same thing. The spec's `waive:` list accepts findings for a reason, until a\n"
		   "date; a waived finding is still listed, and does not count as an error.\n\n"
		   "Exits 0 when no unwaived error-level finding remains, 3 when one does (apply\n"
		   "refuses such a plan), 1 on any other error. --format sarif prints a SARIF\n"
		   "2.1.0 log for code-scanning UIs.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-rules(7), kiln-plan(1), kiln-spec(5)",
};

enum audit_format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_SARIF,
};

/*
 * A saved plan: its findings when it carries them; else (a plan made
 * before plans carried findings) audited now against its spec, which must
 * be the one the plan was made from.
 */
static json_t *audit_plan_file(struct cli *cli, struct run_flags *f, const char *path)
{
	struct kiln_error err = {0};
	struct engine *e = NULL;
	struct plan_view v = {0};
	json_t *plan = NULL;
	const char *spec, *digest, *ws;

	if (plan_file_read(&plan, path, &err) < 0) {
		cmd_report(cli, &err);
		return NULL;
	}
	spec = json_string_value(json_object_get(plan_kiln(plan, "spec"), "file"));
	digest = json_string_value(json_object_get(plan_kiln(plan, "spec"), "digest"));
	ws = json_string_value(plan_kiln(plan, "workspace"));
	if (ws && cmd_store_flags_plan_workspace(&f->store, cli, path, ws) < 0)
		goto fail;
	if (json_is_array(plan_kiln(plan, "findings")))
		return plan;
	f->store.workspace = ws;
	e = spec ? cmd_run_engine_only(cli, spec, f) : NULL;
	if (!e)
		goto fail;
	if (!digest || strcmp(digest, e->spec_digest) != 0) {
		cli_error(cli,
			  "audit the spec itself, or make a new plan with kiln plan --out FILE",
			  "%s has changed since %s was made from it, and the plan carries no "
			  "findings of its own",
			  spec, path);
		goto fail;
	}
	if (plan_view_build(&v, plan, &err) < 0 ||
	    audit_plan(e->spec, e->prov, plan, &v, &err) < 0) {
		cmd_report(cli, &err);
		goto fail;
	}
	plan_view_release(&v);
	engine_free(e);
	return plan;
fail:
	plan_view_release(&v);
	engine_free(e);
	json_decref(plan);
	return NULL;
}

static json_t *audit_spec(struct cli *cli, struct run_flags *f, const char *spec)
{
	struct op_run r = {.plan_only = true};
	json_t *plan = NULL;

	/* The plan carries its findings: operation_plan audits every plan it makes. */
	if (cmd_run_plan_spec(&r, cli, f, spec) == 0)
		plan = json_incref(r.plan);

	operation_close(&r);
	return plan;
}

static void print_text(const struct cli *cli, const json_t *plan, const char *operand)
{
	size_t errors = audit_errors(plan);

	if (!json_array_size(plan_kiln(plan, "findings"))) {
		printf("No findings: %s passes every rule in kiln-rules(7).\n", operand);
		return;
	}
	audit_render_text(stdout, plan, cli->color_out);
	if (errors)
		printf("%zu unwaived error-level finding%s: kiln apply refuses this plan until %s "
		       "fixed or waived.\n",
		       errors, errors == 1 ? "" : "s", errors == 1 ? "it is" : "they are");
}

/* The SARIF log, its paths relative to the repository holding the spec the plan is of. */
static void print_sarif(const json_t *plan, const char *operand)
{
	const char *spec = json_string_value(json_object_get(plan_kiln(plan, "spec"), "file"));
	char *root = audit_source_root(spec ? spec : operand);
	json_t *out = audit_sarif(plan, root);

	jsonw_dumpf(out, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(out);
	free(root);
}

int cmd_audit(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	enum audit_format format = FORMAT_TEXT;
	const char *operand;
	json_t *plan = NULL, *out;
	int c, ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_audit_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_AUDIT_FORMAT) {
			if (strcmp(p.optarg, "text") == 0) {
				format = FORMAT_TEXT;
			} else if (strcmp(p.optarg, "json") == 0) {
				format = FORMAT_JSON;
			} else if (strcmp(p.optarg, "sarif") == 0) {
				format = FORMAT_SARIF;
			} else {
				cli_error(cli, "use --format text, json or sarif",
					  "--format '%s' is not text, json or sarif", p.optarg);
				goto out;
			}
			continue;
		}
		if (c == OPT_AUDIT_JSON) {
			format = FORMAT_JSON;
			continue;
		}
		if (cmd_run_flags_handle(&f, cli, c, p.optarg) < 0)
			goto out;
	}
	operand = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!operand)
		goto out;
	if (plan_file_is(operand) && !f.refresh) {
		cli_error(cli, "it was fixed when the plan was made",
			  "--refresh cannot be used with a plan file");
		goto out;
	}
	plan = plan_file_is(operand) ? audit_plan_file(cli, &f, operand)
				     : audit_spec(cli, &f, operand);
	if (!plan)
		goto out;
	switch (format) {
	case FORMAT_TEXT:
		print_text(cli, plan, operand);
		break;
	case FORMAT_JSON:
		out = json_pack("{s:O?, s:O?}", "findings", plan_kiln(plan, "findings"),
				"findings_summary", plan_kiln(plan, "findings_summary"));
		jsonw_dumpf(out, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		fputc('\n', stdout);
		json_decref(out);
		break;
	case FORMAT_SARIF:
		print_sarif(plan, operand);
		break;
	}
	ret = audit_errors(plan) ? KILN_EXIT_FINDINGS : KILN_EXIT_OK;
out:
	json_decref(plan);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
