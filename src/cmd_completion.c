/*
 * cmd_completion.c - `kiln completion bash|zsh|fish`: the shell's completion
 * script, written from the command table (completion.c); and `kiln
 * completion --groups [SPEC]`, the group names the scripts ask for when
 * they complete a group.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "completion.h"
#include "diag.h"
#include "spec.h"
#include "str.h"
#include "util.h"

enum { OPT_GROUPS = 1 };

static const struct cli_option options[] = {
    {"groups", 0, false, OPT_GROUPS, NULL,
     "print the compute groups of SPEC (default kiln.yaml), one a line"},
};

const struct cmd_info cmd_completion_info = {
    .name = "completion",
    .usage = "bash | zsh | fish  |  completion --groups [SPEC]",
    .summary = "print the completion script for bash, zsh or fish",
    .description =
	"Print the script that completes kiln's commands, subcommands, options and\n"
	"their values in SHELL. Workspace names, template names and the compute\n"
	"groups of the spec on the line are asked of kiln when TAB is pressed.\n"
	"`make install` installs all three; to try one in the running shell:\n\n"
	"  bash:  source <(kiln completion bash)\n"
	"  zsh:   kiln completion zsh > ~/.zfunc/_kiln   (with ~/.zfunc in fpath)\n"
	"  fish:  kiln completion fish | source\n\n"
	"With --groups, print the compute groups of SPEC (default kiln.yaml), one a\n"
	"line: what the scripts call to complete a group.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-completion(1)",
    .subcommands = completion_shell_names,
};

/* The group names of spec, as far as it loads; nothing when it does not. */
static int print_groups(const char *path)
{
	struct spec_options opts = {0};
	struct diags d = {0};
	struct spec *spec = NULL;
	size_t i;

	spec_load_file(&spec, path, &opts, &d);
	for (i = 0; spec && i < spec->ngroups; i++)
		printf("%s\n", spec->groups[i].name);
	spec_free(spec);
	diags_release(&d);
	return KILN_EXIT_OK;
}

static int print_script(const struct cli *cli, const char *shell)
{
	const struct cmd_info *cmds[64];
	const char *near;
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(completion_shell_names) - 1; i++) {
		if (strcmp(shell, completion_shell_names[i]) != 0)
			continue;
		while (n < ARRAY_SIZE(cmds) && main_info_at(n))
			cmds[n] = main_info_at(n), n++;
		completion_write(stdout, (enum completion_shell)i, cmds, n);
		return KILN_EXIT_OK;
	}
	near = str_closest(shell, completion_shell_names, ARRAY_SIZE(completion_shell_names) - 1);
	if (near) {
		char *hint = xasprintf("did you mean '%s'?", near);

		cli_error(cli, hint, "kiln completes bash, zsh and fish, not '%s'", shell);
		free(hint);
	} else {
		cli_error(cli, "use bash, zsh or fish", "kiln completes bash, zsh and fish, not '%s'",
			  shell);
	}
	return KILN_EXIT_ERROR;
}

int cmd_completion(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	bool groups = false;
	int c, ret = KILN_EXIT_ERROR, nops;

	cli_parser_init(&p, cli, &cmd_completion_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		groups |= c == OPT_GROUPS;
	}
	nops = argc - p.optind;
	if (groups && nops <= 1)
		ret = print_groups(nops ? argv[p.optind] : "kiln.yaml");
	else if (groups)
		cli_error(cli, "give one spec, or none for kiln.yaml",
			  "--groups takes at most one SPEC, got %d", nops);
	else if (nops == 1)
		ret = print_script(cli, argv[p.optind]);
	else
		cli_error(cli, "for example: source <(kiln completion bash)",
			  "which shell: bash, zsh or fish?");
out:
	cli_parser_release(&p);
	return ret;
}
