/*
 * cmd_iam_policy.c - `kiln iam-policy`: the least-privilege policy kiln
 * itself needs to plan, apply and destroy a spec (what pike does for
 * Terraform): every API action the spec's resource types call, each on
 * resources as narrow as the cloud allows.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "cmds.h"
#include "jsonw.h"

enum { OPT_REPORT_ACTUAL = 1 };

static const struct cli_option options[] = {
    CMD_OPT_WORKSPACE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    {"report-actual", 0, false, OPT_REPORT_ACTUAL, NULL,
     "also what kiln report --actual reads the bill with (aws: ce:GetCostAndUsage and "
     "ce:ListCostAllocationTags)"},
};

const struct cmd_info cmd_iam_policy_info = {
    .name = "iam-policy",
    .usage = "[SPEC] [OPTIONS]",
    .summary = "print the minimal IAM policy kiln needs for a spec",
    .description =
	"Print, as a JSON policy document, every permission kiln needs to plan, apply\n"
	"and destroy the spec in the workspace (-w): the list and read calls of refresh\n"
	"for every resource type, and the create, update and delete calls of the types\n"
	"the spec uses. Bucket, role and instance-profile actions are limited to this\n"
	"cluster's and workspace's names, iam:PassRole to its roles and to EC2, EC2,\n"
	"FSx and EFS actions to their resource types in the region and to kiln's tags;\n"
	"only actions with no resource type (EC2 describes, s3:ListAllMyBuckets,\n"
	"iam:ListRoles...) name \"*\". Attach it to the user or role CI runs kiln as.\n"
	"A simulated provider (sim) needs no permission: the policy has no statement.\n"
	"--report-actual adds exactly what kiln report --actual calls to read the bill\n"
	"(aws: ce:GetCostAndUsage and ce:ListCostAllocationTags, which have no resource\n"
	"type, so Resource \"*\"); without it the policy has neither.\n"
	"Calls no cloud API and needs no credentials.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-aws(7), kiln-apply(1)",
};

/*
 * A simulated provider needs no permission. Standard output still gets a
 * valid policy document, with no statement, so that a pipeline into a
 * policy linter or `aws iam create-policy` reads JSON whatever the
 * provider; the reason goes to standard error.
 */
static char *empty_policy(const struct cli *cli, const char *provider)
{
	json_t *doc = json_pack("{s:s, s:[]}", "Version", "2012-10-17", "Statement");
	char *out = jsonw_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER, NULL);

	json_decref(doc);
	fprintf(stderr,
		"%s: %s: the %s provider is simulated and needs no cloud permission; the policy "
		"has no statement\n",
		cli->prog, cli->cmd, provider);
	return out;
}

int cmd_iam_policy(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct engine *e = NULL;
	const char *spec;
	char *doc;
	bool report_actual = false;
	int ret = KILN_EXIT_ERROR, c;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_iam_policy_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_REPORT_ACTUAL)
			report_actual = true;
		else if (cmd_run_flags_handle(&f, cli, c, p.optarg) < 0)
			goto out;
	}
	spec = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!spec)
		goto out;
	e = cmd_run_engine_only(cli, spec, &f);
	if (!e)
		goto out;
	doc = operation_iam_policy(e, report_actual);
	if (!doc)
		doc = empty_policy(cli, e->prov->name);
	puts(doc);
	free(doc);
	ret = KILN_EXIT_OK;
out:
	engine_free(e);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
