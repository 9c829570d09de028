/*
 * cmd_schema.c - `kiln schema`: the JSON Schema of kiln.yaml (spec_schema.c),
 * for editors such as yaml-language-server and for linters. Reads no spec.
 */
#include <stdio.h>

#include "cmds.h"
#include "jsonw.h"
#include "provider.h"
#include "spec.h"
#include "spec_schema.h"

const struct cmd_info cmd_schema_info = {
    .name = "schema",
    .usage = "",
    .summary = "print the JSON Schema of kiln.yaml, for editors",
    .description =
	"Print the JSON Schema (draft-07) of the spec, written from the tables of keys\n"
	"and words `kiln validate` reads it with, so it takes the keys, types and\n"
	"words this kiln takes. `make install` installs it as\n"
	"PREFIX/share/kiln/kiln.schema.json; a spec names it on its first line for\n"
	"yaml-language-server (VS Code's YAML extension, Neovim, Helix...):\n\n"
	"  # yaml-language-server: $schema=/usr/local/share/kiln/kiln.schema.json\n\n"
	"The schema checks each value alone; the rules between sections (a role\n"
	"naming a store, zones, budgets against the plan) are `kiln validate`'s.",
    .options = NULL,
    .noptions = 0,
    .see_also = "kiln-schema(1), kiln-spec(5)",
};

int cmd_schema(int argc, char **argv, struct cli *cli)
{
	struct spec_options opts = {0};
	struct cli_parser p;
	json_t *schema;
	int c, ret = KILN_EXIT_OK;

	cli_parser_init(&p, cli, &cmd_schema_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
	}
	if (p.optind < argc) {
		cli_error(cli, "write it to a file with kiln schema > kiln.schema.json",
			  "takes no operand, got '%s'", argv[p.optind]);
		ret = KILN_EXIT_ERROR;
		goto out;
	}
	opts.providers = providers_for_spec(&opts.nproviders);
	schema = spec_schema(&opts);
	jsonw_dumpf(schema, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(schema);
out:
	cli_parser_release(&p);
	return ret;
}
