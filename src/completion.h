/*
 * completion.h - bash, zsh and fish completion scripts written from the
 * command table: each command's name, summary, options, subcommands and
 * usage, the same data --help prints, so a new option completes without a
 * hand-kept list. Values that change (workspaces, templates, a spec's
 * groups) are asked of kiln itself when the user presses TAB.
 */
#ifndef KILN_COMPLETION_H
#define KILN_COMPLETION_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"

enum completion_shell {
	COMPLETION_BASH,
	COMPLETION_ZSH,
	COMPLETION_FISH,
};

/* The shells by enum completion_shell, NULL-ended (completion's subcommands). */
extern const char *const completion_shell_names[4];

/* The script for shell over the n commands, written to out. */
void completion_write(FILE *out, enum completion_shell shell, const struct cmd_info *const *cmds,
		      size_t n);

#endif
