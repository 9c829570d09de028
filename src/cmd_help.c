/*
 * cmd_help.c - `kiln help [COMMAND]`, the same text as `kiln COMMAND --help`.
 */
#include <stdio.h>

#include "cmds.h"
#include "util.h"

const struct cmd_info cmd_help_info = {
    .name = "help",
    .usage = "[COMMAND]",
    .summary = "show help for kiln or for one command",
    .description = "Without COMMAND, list the commands and the global options; with it,\n"
		   "print that command's usage and options (as `kiln COMMAND --help` does).",
    .options = NULL,
    .noptions = 0,
    .see_also = "kiln(1)",
};

int cmd_help(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	const struct cmd_info *info;
	int c, ret = KILN_EXIT_OK;

	cli_parser_init(&p, cli, &cmd_help_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
	}
	if (p.optind >= argc) {
		main_print_help(stdout);
		goto out;
	}
	if (argc - p.optind > 1) {
		cli_error(cli, NULL, "takes one command name, got %d", argc - p.optind);
		ret = KILN_EXIT_ERROR;
		goto out;
	}
	info = main_find_info(argv[p.optind]);
	if (info) {
		cli_print_command_help(stdout, info);
	} else {
		main_report_unknown(cli, argv[p.optind]);
		ret = KILN_EXIT_ERROR;
	}
out:
	cli_parser_release(&p);
	return ret;
}
