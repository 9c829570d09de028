/*
 * completion.c - shell completion scripts from the command table; see
 * completion.h. Each option's value, and each command's operands, get a
 * kind read from the option's name and argument name and from the usage
 * line, which every shell's part then turns into its own action.
 */
#include "completion.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "base.h"

const char *const completion_shell_names[4] = {"bash", "zsh", "fish", NULL};

/* What completes a value: nothing, fixed words, paths, or names kiln knows. */
enum value_kind {
	VK_NONE,      /* a flag: takes no value */
	VK_FREE,      /* a number, a duration: nothing to offer */
	VK_WORDS,     /* the words of an argument name such as "aws|sim" */
	VK_FILE,
	VK_DIR,
	VK_WORKSPACE, /* kiln workspace list */
	VK_TEMPLATE,  /* kiln init --list */
	VK_GROUP,     /* kiln completion --groups SPEC */
	VK_COMMAND,   /* kiln's own commands (kiln help COMMAND) */
};

/* The dynamic kinds' names in the scripts, indexed by value_kind. */
static const char *const kind_names[] = {"none",      "free",	  "words",   "file",   "dir",
					 "workspace", "template", "group", "command"};

/* Argument names that are paths. */
static const char *const file_args[] = {"FILE", "PLANFILE", "KEY", "PATH", "URL|PATH", "SPEC"};

static bool is_word_list(const char *arg)
{
	const char *c;

	if (!strchr(arg, '|'))
		return false;
	for (c = arg; *c; c++)
		if (!islower((unsigned char)*c) && *c != '|' && *c != '-')
			return false;
	return true;
}

static enum value_kind kind_of_arg(const char *arg)
{
	size_t i;

	if (strcmp(arg, "DIR") == 0)
		return VK_DIR;
	if (strcmp(arg, "GROUP") == 0)
		return VK_GROUP;
	if (strcmp(arg, "COMMAND") == 0)
		return VK_COMMAND;
	for (i = 0; i < ARRAY_SIZE(file_args); i++)
		if (strcmp(arg, file_args[i]) == 0)
			return VK_FILE;
	return is_word_list(arg) ? VK_WORDS : VK_FREE;
}

static enum value_kind option_kind(const struct cli_option *o)
{
	if (!o->has_arg)
		return VK_NONE;
	if (strcmp(o->name, "workspace") == 0)
		return VK_WORKSPACE;
	if (strcmp(o->name, "group") == 0)
		return VK_GROUP;
	if (strcmp(o->name, "template") == 0)
		return VK_TEMPLATE;
	return o->arg ? kind_of_arg(o->arg) : VK_FREE;
}

/*
 * The kind of a usage word of n bytes: of its first upper-case alternative
 * that has one ("[SPEC|PLANFILE]" -> a file, "GROUP[/N]" -> a group).
 */
static enum value_kind token_kind(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		char word[32];
		size_t k = 0;

		while (i < n && !isupper((unsigned char)s[i]))
			i++;
		while (i < n && (isupper((unsigned char)s[i]) || s[i] == '_') && k + 1 < sizeof(word))
			word[k++] = s[i++];
		word[k] = '\0';
		if (k && kind_of_arg(word) != VK_FREE && kind_of_arg(word) != VK_WORDS)
			return kind_of_arg(word);
		while (i < n && s[i] != '|')
			i++;
	}
	return VK_FREE;
}

/*
 * The kind of a command's operands: the first one its usage line names
 * that is not an option's argument ("[SPEC | PLANFILE]" -> files, "[GROUP]"
 * -> groups). Words after "--" are a remote command's and not looked at.
 */
static enum value_kind operand_kind(const struct cmd_info *info)
{
	const char *s = info->usage;
	bool after_option = false;

	while (*s) {
		size_t n = strcspn(s, " ");

		if (n == 2 && strncmp(s, "--", 2) == 0)
			break;
		if (!after_option && token_kind(s, n) != VK_FREE)
			return token_kind(s, n);
		after_option = s[0] == '-' || (s[0] == '[' && s[1] == '-');
		s += n;
		s += strspn(s, " ");
	}
	return VK_FREE;
}

/* The words of an argument name such as "aws|sim", space-separated. */
static void put_words(FILE *out, const char *arg)
{
	for (; *arg; arg++)
		fputc(*arg == '|' ? ' ' : *arg, out);
}

/* --- bash ------------------------------------------------------------------ */

static void bash_option_kinds(FILE *out, const char *cmd, const struct cli_option *opts,
			      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		enum value_kind k = option_kind(&opts[i]);

		if (k == VK_NONE)
			continue;
		fprintf(out, "\t%s:--%s", cmd, opts[i].name);
		if (opts[i].short_name)
			fprintf(out, " | %s:-%c", cmd, opts[i].short_name);
		if (k == VK_WORDS) {
			fputs(") echo 'words ", out);
			put_words(out, opts[i].arg);
			fputs("' ;;\n", out);
		} else {
			fprintf(out, ") echo %s ;;\n", kind_names[k]);
		}
	}
}

static void bash_option_words(FILE *out, const struct cli_option *opts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		fprintf(out, " --%s", opts[i].name);
		if (opts[i].short_name)
			fprintf(out, " -%c", opts[i].short_name);
	}
}

static void bash_tables(FILE *out, const struct cmd_info *const *cmds, size_t n)
{
	size_t i;

	fputs("_kiln_commands=(", out);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? " " : "", cmds[i]->name);
	fputs(")\n\n# _kiln_option_kind COMMAND OPTION: what the option's value is\n"
	      "_kiln_option_kind() {\n\tcase $1:$2 in\n",
	      out);
	bash_option_kinds(out, "*", cli_global_options, cli_global_noptions);
	for (i = 0; i < n; i++)
		bash_option_kinds(out, cmds[i]->name, cmds[i]->options, cmds[i]->noptions);
	fputs("\t*) echo none ;;\n\tesac\n}\n\n"
	      "# _kiln_options COMMAND: the options it takes, the global ones too\n"
	      "_kiln_options() {\n\tcase $1 in\n",
	      out);
	for (i = 0; i < n; i++) {
		fprintf(out, "\t%s) echo '", cmds[i]->name);
		bash_option_words(out, cmds[i]->options, cmds[i]->noptions);
		bash_option_words(out, cli_global_options, cli_global_noptions);
		fputs("' ;;\n", out);
	}
	fputs("\t*) echo '--version", out);
	bash_option_words(out, cli_global_options, cli_global_noptions);
	fputs("' ;;\n\tesac\n}\n\n"
	      "# _kiln_operand_kind COMMAND: what its first operand is; subcommands first\n"
	      "_kiln_operand_kind() {\n\tcase $1 in\n",
	      out);
	for (i = 0; i < n; i++) {
		enum value_kind k = operand_kind(cmds[i]);
		const char *const *sub = cmds[i]->subcommands;

		if (sub) {
			fprintf(out, "\t%s) echo 'subcommand", cmds[i]->name);
			for (; *sub; sub++)
				fprintf(out, " %s", *sub);
			fputs("' ;;\n", out);
		} else if (k != VK_FREE) {
			fprintf(out, "\t%s) echo %s ;;\n", cmds[i]->name, kind_names[k]);
		}
	}
	fputs("\t*) echo free ;;\n\tesac\n}\n", out);
}

static const char bash_functions[] =
    "\n"
    "# _kiln_values KIND: the names kiln knows now, one a line\n"
    "_kiln_values() {\n"
    "\tcase $1 in\n"
    "\tworkspace) \"$_kiln_bin\" workspace list 2>/dev/null | sed 's/^..//; s/ .*//' ;;\n"
    "\ttemplate) \"$_kiln_bin\" init --list 2>/dev/null | sed 's/ .*//' ;;\n"
    "\tgroup) \"$_kiln_bin\" completion --groups \"$_kiln_spec\" 2>/dev/null ;;\n"
    "\tcommand) printf '%s\\n' \"${_kiln_commands[@]}\" ;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    "# _kiln_reply KIND [WORD...]: COMPREPLY for $cur\n"
    "_kiln_reply() {\n"
    "\tlocal kind=$1\n"
    "\tshift\n"
    "\tcase $kind in\n"
    "\tfile | dir)\n"
    "\t\tcompopt -o filenames 2>/dev/null\n"
    "\t\tmapfile -t COMPREPLY < <(compgen \"-${kind:0:1}\" -- \"$cur\") ;;\n"
    "\twords | subcommand) mapfile -t COMPREPLY < <(compgen -W \"$*\" -- \"$cur\") ;;\n"
    "\tworkspace | template | group | command)\n"
    "\t\tmapfile -t COMPREPLY < <(compgen -W \"$(_kiln_values \"$kind\")\" -- \"$cur\") ;;\n"
    "\tesac\n"
    "}\n"
    "\n"
    "_kiln() {\n"
    "\tlocal _kiln_bin=${COMP_WORDS[0]} _kiln_spec=kiln.yaml cur=${COMP_WORDS[COMP_CWORD]}\n"
    "\tlocal cmd='' sub='' valued='' w i\n"
    "\tlocal -a kind\n"
    "\tCOMPREPLY=()\n"
    "\t# The command, its subcommand and the spec named so far; an option that\n"
    "\t# takes a value owns the next word ('=' is a word of its own in bash).\n"
    "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
    "\t\tw=${COMP_WORDS[i]}\n"
    "\t\tif [[ $w == = ]]; then\n"
    "\t\t\tcontinue\n"
    "\t\telif [[ -n $valued ]]; then\n"
    "\t\t\t[[ $valued == --spec ]] && _kiln_spec=$w\n"
    "\t\t\tvalued=''\n"
    "\t\telif [[ $w == -* ]]; then\n"
    "\t\t\t[[ $(_kiln_option_kind \"$cmd\" \"$w\") != none ]] && valued=$w\n"
    "\t\telif [[ -z $cmd ]]; then\n"
    "\t\t\tcmd=$w\n"
    "\t\telse\n"
    "\t\t\t[[ $w == *.yaml || $w == *.yml ]] && _kiln_spec=$w\n"
    "\t\t\t[[ -z $sub ]] && sub=$w\n"
    "\t\tfi\n"
    "\tdone\n"
    "\t[[ $cur == = ]] && cur=''\n"
    "\tif [[ -n $valued ]]; then\n"
    "\t\tread -ra kind <<<\"$(_kiln_option_kind \"$cmd\" \"$valued\")\"\n"
    "\telif [[ $cur == -* ]]; then\n"
    "\t\tread -ra kind <<<\"words $(_kiln_options \"$cmd\")\"\n"
    "\telif [[ -z $cmd ]]; then\n"
    "\t\tkind=(command)\n"
    "\telse\n"
    "\t\tread -ra kind <<<\"$(_kiln_operand_kind \"$cmd\")\"\n"
    "\t\t# After the subcommand, its operands are the spec's or the state's: files.\n"
    "\t\t[[ ${kind[0]} == subcommand && -n $sub ]] && kind=(file)\n"
    "\tfi\n"
    "\t_kiln_reply \"${kind[@]}\"\n"
    "}\n"
    "\n"
    "complete -F _kiln kiln\n";

static void write_bash(FILE *out, const struct cmd_info *const *cmds, size_t n)
{
	fprintf(out,
		"# bash completion for kiln %s, written by `kiln completion bash` from\n"
		"# kiln's command table; regenerate it rather than edit it.\n"
		"# shellcheck shell=bash\n\n",
		KILN_VERSION);
	bash_tables(out, cmds, n);
	fputs(bash_functions, out);
}

/* --- zsh ------------------------------------------------------------------- */

/* s inside a zsh single-quoted _arguments spec: ' closed and reopened,
 * and the characters _arguments reads ([ ] :) escaped. */
static void zsh_quoted(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

static const char *zsh_action(enum value_kind k)
{
	static const char *const actions[] = {"",		  " ",		    "",
					      "_files",		  "_files -/",	    "_kiln_workspaces",
					      "_kiln_templates", "_kiln_groups", "_kiln_commands"};

	return actions[k];
}

static void zsh_option(FILE *out, const struct cli_option *o, bool is_short)
{
	enum value_kind k = option_kind(o);

	/* One word of a command continued over lines (an array's too). */
	fputs(" \\\n\t\t'", out);
	if (is_short)
		fprintf(out, "-%c%s[", o->short_name, k == VK_NONE ? "" : "+");
	else
		fprintf(out, "--%s%s[", o->name, k == VK_NONE ? "" : "=");
	zsh_quoted(out, o->help);
	fputc(']', out);
	if (k != VK_NONE) {
		fputc(':', out);
		zsh_quoted(out, o->arg ? o->arg : "VALUE");
		fputc(':', out);
		if (k == VK_WORDS) {
			fputc('(', out);
			put_words(out, o->arg);
			fputc(')', out);
		} else {
			fputs(zsh_action(k), out);
		}
	}
	fputc('\'', out);
}

static void zsh_options(FILE *out, const struct cli_option *opts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		zsh_option(out, &opts[i], false);
		if (opts[i].short_name)
			zsh_option(out, &opts[i], true);
	}
}

static void zsh_command_case(FILE *out, const struct cmd_info *info)
{
	enum value_kind k = operand_kind(info);
	const char *const *sub;

	fprintf(out, "\t%s)\n\t\t_arguments -s \"${_kiln_globals[@]}\"", info->name);
	zsh_options(out, info->options, info->noptions);
	if (info->subcommands) {
		fputs(" \\\n\t\t'1:subcommand:(", out);
		for (sub = info->subcommands; *sub; sub++)
			fprintf(out, "%s%s", sub == info->subcommands ? "" : " ", *sub);
		fputs(")' \\\n\t\t'*:argument:_files'", out);
	} else if (k != VK_FREE) {
		fprintf(out, " \\\n\t\t'*:operand:%s'", zsh_action(k));
	} else {
		fputs(" \\\n\t\t'*:operand: '", out);
	}
	fputs(" ;;\n", out);
}

static const char zsh_functions[] =
    "_kiln_workspaces() {\n"
    "\tcompadd -- ${(f)\"$(\"$_kiln_bin\" workspace list 2>/dev/null | sed 's/^..//; s/ "
    ".*//')\"}\n"
    "}\n"
    "\n"
    "_kiln_templates() {\n"
    "\tcompadd -- ${(f)\"$(\"$_kiln_bin\" init --list 2>/dev/null | sed 's/ .*//')\"}\n"
    "}\n"
    "\n"
    "# The groups of the spec named on the line (--spec FILE or a .yaml operand).\n"
    "_kiln_groups() {\n"
    "\tlocal spec=kiln.yaml i\n"
    "\tfor ((i = 2; i < CURRENT; i++)); do\n"
    "\t\tcase $words[i] in\n"
    "\t\t--spec) spec=$words[i+1] ;;\n"
    "\t\t--spec=*) spec=${words[i]#--spec=} ;;\n"
    "\t\t*.yaml | *.yml) spec=$words[i] ;;\n"
    "\t\tesac\n"
    "\tdone\n"
    "\tcompadd -- ${(f)\"$(\"$_kiln_bin\" completion --groups \"$spec\" 2>/dev/null)\"}\n"
    "}\n"
    "\n"
    "_kiln_commands() {\n"
    "\t_describe -t commands 'kiln command' _kiln_command_list\n"
    "}\n";

static void write_zsh(FILE *out, const struct cmd_info *const *cmds, size_t n)
{
	size_t i;

	fprintf(out,
		"#compdef kiln\n"
		"# zsh completion for kiln %s, written by `kiln completion zsh` from\n"
		"# kiln's command table; regenerate it rather than edit it.\n\n",
		KILN_VERSION);
	fputs(zsh_functions, out);
	fputs("\n_kiln() {\n\tlocal curcontext=$curcontext state line ret=1\n"
	      "\tlocal _kiln_bin=$words[1]\n\tlocal -a _kiln_globals _kiln_command_list\n"
	      "\t_kiln_globals=(",
	      out);
	zsh_options(out, cli_global_options, cli_global_noptions);
	fputs("\n\t)\n\t_kiln_command_list=(\n", out);
	for (i = 0; i < n; i++) {
		fputs("\t\t'", out);
		zsh_quoted(out, cmds[i]->name);
		fputc(':', out);
		zsh_quoted(out, cmds[i]->summary);
		fputs("'\n", out);
	}
	fputs("\t)\n"
	      "\t_arguments -C \"${_kiln_globals[@]}\" '--version[print the version and exit]' \\\n"
	      "\t\t'1:command:_kiln_commands' '*::argument:->argument' && ret=0\n"
	      "\t[[ $state == argument ]] || return ret\n"
	      "\tcurcontext=${curcontext%:*:*}:kiln-$words[1]:\n"
	      "\tcase $words[1] in\n",
	      out);
	for (i = 0; i < n; i++)
		zsh_command_case(out, cmds[i]);
	fputs("\tesac && ret=0\n\treturn ret\n}\n\n_kiln \"$@\"\n", out);
}

/* --- fish ------------------------------------------------------------------ */

/* s inside fish single quotes: only ' and \ are special there. */
static void fish_quoted(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', out);
		fputc(*s == '\n' ? ' ' : *s, out);
	}
	fputc('\'', out);
}

static void fish_option(FILE *out, const char *cmd, const struct cli_option *o)
{
	static const char *const args[] = {
	    "", " -x", "", " -r -F", " -x -a '(__fish_complete_directories)'",
	    " -x -a '(__kiln_values workspace)'", " -x -a '(__kiln_values template)'",
	    " -x -a '(__kiln_values group)'", " -x -a '(__kiln_values command)'"};
	enum value_kind k = option_kind(o);

	fputs("complete -c kiln", out);
	if (cmd)
		fprintf(out, " -n '__kiln_using %s'", cmd);
	if (o->short_name)
		fprintf(out, " -s %c", o->short_name);
	fprintf(out, " -l %s", o->name);
	if (k == VK_WORDS) {
		fputs(" -x -a '", out);
		put_words(out, o->arg);
		fputc('\'', out);
	} else {
		fputs(args[k], out);
	}
	fputs(" -d ", out);
	fish_quoted(out, o->help);
	fputc('\n', out);
}

/* Every spelling of an option that takes a value, so that its value is not
 * taken for the command or a subcommand. */
static void fish_valued(FILE *out, const struct cli_option *opts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!opts[i].has_arg)
			continue;
		fprintf(out, " --%s", opts[i].name);
		if (opts[i].short_name)
			fprintf(out, " -%c", opts[i].short_name);
	}
}

static const char fish_functions[] =
    "# The words on the line that are not options or an option's value: the\n"
    "# command, then its subcommand or operands.\n"
    "function __kiln_operands\n"
    "    set -l skip 0\n"
    "    for w in (commandline -opc)[2..-1]\n"
    "        if test $skip = 1\n"
    "            set skip 0\n"
    "        else if contains -- $w $__kiln_valued\n"
    "            set skip 1\n"
    "        else if not string match -q -- '-*' $w\n"
    "            echo $w\n"
    "        end\n"
    "    end\n"
    "end\n"
    "\n"
    "function __kiln_needs_command\n"
    "    test (count (__kiln_operands)) -eq 0\n"
    "end\n"
    "\n"
    "function __kiln_using -a cmd\n"
    "    set -l ops (__kiln_operands)\n"
    "    test \"$ops[1]\" = $cmd\n"
    "end\n"
    "\n"
    "function __kiln_needs_subcommand -a cmd\n"
    "    set -l ops (__kiln_operands)\n"
    "    test \"$ops[1]\" = $cmd; and test (count $ops) -eq 1\n"
    "end\n"
    "\n"
    "# The names kiln knows now: workspace, template, group or command.\n"
    "function __kiln_values -a kind\n"
    "    set -l kiln (commandline -opc)[1]\n"
    "    switch $kind\n"
    "        case workspace\n"
    "            $kiln workspace list 2>/dev/null | string sub -s 3 | string replace -r ' .*' ''\n"
    "        case template\n"
    "            $kiln init --list 2>/dev/null | string replace -r ' .*' ''\n"
    "        case group\n"
    "            set -l spec kiln.yaml\n"
    "            set -l words (commandline -opc)\n"
    "            for i in (seq (count $words))\n"
    "                if test \"$words[$i]\" = --spec; and test $i -lt (count $words)\n"
    "                    set spec $words[(math $i + 1)]\n"
    "                else if string match -q -r '\\.ya?ml$' -- $words[$i]\n"
    "                    set spec $words[$i]\n"
    "                end\n"
    "            end\n"
    "            $kiln completion --groups $spec 2>/dev/null\n"
    "        case command\n"
    "            printf '%s\\n' $__kiln_commands\n"
    "    end\n"
    "end\n"
    "\n"
    "complete -c kiln -f\n";

static void fish_command(FILE *out, const struct cmd_info *info)
{
	static const char *const operands[] = {
	    "", "", "", " -F", " -a '(__fish_complete_directories)'",
	    " -a '(__kiln_values workspace)'", " -a '(__kiln_values template)'",
	    " -a '(__kiln_values group)'", " -a '(__kiln_values command)'"};
	enum value_kind k = operand_kind(info);
	size_t i;

	fprintf(out, "\n# kiln %s\ncomplete -c kiln -n __kiln_needs_command -a %s -d ", info->name,
		info->name);
	fish_quoted(out, info->summary);
	fputc('\n', out);
	for (i = 0; i < info->noptions; i++)
		fish_option(out, info->name, &info->options[i]);
	if (info->subcommands) {
		const char *const *sub;

		fprintf(out, "complete -c kiln -n '__kiln_needs_subcommand %s' -a '", info->name);
		for (sub = info->subcommands; *sub; sub++)
			fprintf(out, "%s%s", sub == info->subcommands ? "" : " ", *sub);
		fputs("'\n", out);
	} else if (operands[k][0]) {
		fprintf(out, "complete -c kiln -n '__kiln_using %s'%s\n", info->name, operands[k]);
	}
}

static void write_fish(FILE *out, const struct cmd_info *const *cmds, size_t n)
{
	size_t i;

	fprintf(out,
		"# fish completion for kiln %s, written by `kiln completion fish` from\n"
		"# kiln's command table; regenerate it rather than edit it.\n\n"
		"set -g __kiln_commands",
		KILN_VERSION);
	for (i = 0; i < n; i++)
		fprintf(out, " %s", cmds[i]->name);
	fputs("\nset -g __kiln_valued", out);
	fish_valued(out, cli_global_options, cli_global_noptions);
	for (i = 0; i < n; i++)
		fish_valued(out, cmds[i]->options, cmds[i]->noptions);
	fputs("\n\n", out);
	fputs(fish_functions, out);
	fputs("\n# Global options, before or after the command\n", out);
	for (i = 0; i < cli_global_noptions; i++)
		fish_option(out, NULL, &cli_global_options[i]);
	fputs("complete -c kiln -n __kiln_needs_command -l version -d 'print the version and "
	      "exit'\n",
	      out);
	for (i = 0; i < n; i++)
		fish_command(out, cmds[i]);
}

void completion_write(FILE *out, enum completion_shell shell, const struct cmd_info *const *cmds,
		      size_t n)
{
	switch (shell) {
	case COMPLETION_BASH:
		write_bash(out, cmds, n);
		break;
	case COMPLETION_ZSH:
		write_zsh(out, cmds, n);
		break;
	case COMPLETION_FISH:
		write_fish(out, cmds, n);
		break;
	}
}
