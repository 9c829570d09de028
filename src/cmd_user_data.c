/*
 * cmd_user_data.c - `kiln user-data`: the boot document (cloud-init user
 * data) a node group's nodes launch with, as the plan has it: generated from
 * the spec by its provider's expand, with the values known only at launch
 * (a file system's DNS name, the workspace) as {{kiln:KEY}} placeholders.
 * Calls no cloud API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_run.h"
#include "cmds.h"

enum { OPT_GROUP = 1 };

static const struct cli_option options[] = {
    {"group", 'g', true, OPT_GROUP, "NAME", "the compute group (required)"},
    {"digest", 0, false, OPT_RUN_DETAILED, NULL, "print the digest the plan shows instead"},
    CMD_OPT_WORKSPACE,
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
};

const struct cmd_info cmd_user_data_info = {
    .name = "user-data",
    .usage = "--group NAME [SPEC] [--digest] [OPTIONS]",
    .summary = "print the cloud-init user data a node group boots with",
    .description = "Print the #cloud-config document the nodes of compute group NAME launch with,\n"
		   "as `kiln plan` has it (its user_data input is this document's digest, and\n"
		   "`kiln plan --json` holds it as user_data_text): the boot script that\n"
		   "assembles the local NVMe store, mounts the file systems the group's role\n"
		   "reaches, sets the EFA environment, runs the bootstrap steps, starts the\n"
		   "CloudWatch agent on an aws GPU group where the image has it, and reports\n"
		   "the node's health. Values known only at launch are written {{kiln:KEY}}: the\n"
		   "DNS name of a file system (lustre:NAME, nfs:NAME) and the workspace.\n"
		   "With --digest, print the sha256 digest instead. Calls no cloud API.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-user-data(1), kiln-spec(5), kiln-aws(7), kiln-plan(1)",
};

int cmd_user_data(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct run_flags f;
	struct engine *e = NULL;
	const char *spec, *group = NULL, *addr;
	json_t *r, *found = NULL;
	int ret = KILN_EXIT_ERROR, c;

	cmd_run_flags_init(&f);
	cli_parser_init(&p, cli, &cmd_user_data_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_GROUP)
			group = p.optarg;
		else if (cmd_run_flags_handle(&f, cli, c, p.optarg) < 0)
			goto out;
	}
	if (!group) {
		cli_error(cli, "name the group: kiln user-data --group NAME [SPEC]",
			  "--group is required");
		goto out;
	}
	spec = cmd_run_spec_operand(cli, f.spec, argc, argv, p.optind);
	if (!spec)
		goto out;
	e = cmd_run_engine_only(cli, spec, &f);
	if (!e)
		goto out;
	json_object_foreach(e->desired, addr, r)
	{
		const char *name = json_string_value(json_object_get(r, "name"));
		json_t *doc = json_object_get(json_object_get(r, "attrs"), "user_data_text");

		if (doc && name && strcmp(name, group) == 0)
			found = r;
	}
	if (!found) {
		cli_error(cli, "name a group under compute: in the spec",
			  "%s has no compute group '%s'", spec, group);
		goto out;
	}
	fputs(json_string_value(json_object_get(json_object_get(found, "attrs"),
						f.detailed ? "user_data" : "user_data_text")),
	      stdout);
	if (f.detailed)
		putchar('\n');
	ret = KILN_EXIT_OK;
out:
	engine_free(e);
	cmd_run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}
