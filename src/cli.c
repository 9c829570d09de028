/*
 * cli.c - option parsing and help shared by every command; see cli.h.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

enum {
	GOPT_CHDIR = 1,
	GOPT_NO_COLOR,
	GOPT_LOG_LEVEL,
	GOPT_LOG_FORMAT,
	GOPT_HELP,
};

const struct cli_option cli_global_options[] = {
    {"chdir", 'C', true, GOPT_CHDIR, "DIR", "run as if kiln was started in DIR"},
    {"no-color", 0, false, GOPT_NO_COLOR, NULL, "never colour the output (NO_COLOR does the same)"},
    {"log-level", 0, true, GOPT_LOG_LEVEL, "LEVEL",
     "error, warn, info, debug or trace (default warn; KILN_LOG_LEVEL)"},
    {"log-format", 0, true, GOPT_LOG_FORMAT, "FORMAT",
     "text or json: every line on stderr one JSON object (default text)"},
    {"help", 'h', false, GOPT_HELP, NULL, "show this help"},
};
const size_t cli_global_noptions = ARRAY_SIZE(cli_global_options);

/* Offsets that keep command option ids apart from global ones in getopt's val. */
#define VAL_CMD 1000
#define VAL_GLOBAL 2000

struct parser_state {
	struct option *longopts;
	char *shortopts;
};

static bool color_wanted(struct cli *cli, int fd)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	if (cli->no_color || (nc && *nc) || (term && strcmp(term, "dumb") == 0))
		return false;
	return isatty(fd) == 1;
}

static void update_color(struct cli *cli)
{
	cli->color_out = color_wanted(cli, STDOUT_FILENO);
	/* No escape sequence inside a JSON log line. */
	cli->color_err = color_wanted(cli, STDERR_FILENO) && log_get_format() != LOG_JSON;
}

void cli_init(struct cli *cli)
{
	const char *lvl = getenv("KILN_LOG_LEVEL");

	memset(cli, 0, sizeof(*cli));
	cli->prog = "kiln";
	if (lvl && *lvl && log_level_parse(lvl) >= 0)
		log_set_level((enum log_level)log_level_parse(lvl));
	else if (lvl && *lvl) {
		char *msg = xasprintf("kiln: KILN_LOG_LEVEL '%s' is not a level (error, warn, "
				      "info, debug, trace); using warn",
				      lvl);

		log_report(LOG_WARN, msg, NULL);
		free(msg);
	}
	update_color(cli);
}

bool cli_in_automation(void)
{
	const char *ci = getenv("CI"), *auto_ = getenv("KILN_IN_AUTOMATION");

	return (auto_ && *auto_) || (ci && strcmp(ci, "true") == 0);
}

void cli_error(const struct cli *cli, const char *hint, const char *fmt, ...)
{
	va_list ap;
	char *what, *msg;

	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	if (log_get_format() == LOG_JSON) {
		/* The hint in its own field, as a reader of JSON wants it. */
		msg = cli->cmd ? xasprintf("%s: %s: %s", cli->prog, cli->cmd, what)
			       : xasprintf("%s: %s", cli->prog, what);
		log_report(LOG_ERROR, msg, hint);
	} else {
		msg = xasprintf("%s: %s%s%s%s%s\n", cli->prog, cli->cmd ? cli->cmd : "",
				cli->cmd ? ": " : "", what, hint ? "; " : "", hint ? hint : "");
		fputs(msg, stderr);
	}
	free(msg);
	free(what);
}

int cli_global_option(struct cli *cli, const char *name, const char *arg)
{
	size_t i;
	int id = 0, lvl;

	for (i = 0; i < cli_global_noptions; i++)
		if (strcmp(cli_global_options[i].name, name) == 0)
			id = cli_global_options[i].id;
	switch (id) {
	case GOPT_CHDIR:
		if (chdir(arg) != 0) {
			cli_error(cli, NULL, "cannot change to directory '%s': %s", arg,
				  strerror(errno));
			return -1;
		}
		return 1;
	case GOPT_NO_COLOR:
		cli->no_color = true;
		update_color(cli);
		return 1;
	case GOPT_LOG_LEVEL:
		lvl = log_level_parse(arg);
		if (lvl < 0) {
			cli_error(cli, "use error, warn, info, debug or trace",
				  "unknown log level '%s'", arg);
			return -1;
		}
		log_set_level((enum log_level)lvl);
		return 1;
	case GOPT_LOG_FORMAT:
		if (strcmp(arg, "text") == 0) {
			log_set_format(LOG_TEXT);
		} else if (strcmp(arg, "json") == 0) {
			log_set_format(LOG_JSON);
			update_color(cli);
		} else {
			cli_error(cli, "use text or json", "unknown log format '%s'", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

void cli_parser_init(struct cli_parser *p, struct cli *cli, const struct cmd_info *info, int argc,
		     char **argv)
{
	struct parser_state *st = xcalloc(1, sizeof(*st));
	struct strbuf so = {0};
	size_t n = info->noptions + cli_global_noptions, i, k = 0;

	memset(p, 0, sizeof(*p));
	p->cli = cli;
	p->info = info;
	p->argc = argc;
	p->argv = argv;
	p->state = st;
	st->longopts = xcalloc(n + 1, sizeof(*st->longopts));
	/* ':' first: a missing argument comes back as ':' and is reported here. */
	sb_addc(&so, ':');
	for (i = 0; i < n; i++) {
		bool global = i >= info->noptions;
		const struct cli_option *o =
		    global ? &cli_global_options[i - info->noptions] : &info->options[i];

		st->longopts[k].name = o->name;
		st->longopts[k].has_arg = o->has_arg ? required_argument : no_argument;
		st->longopts[k].val = (int)i + (global ? VAL_GLOBAL : VAL_CMD);
		k++;
		if (o->short_name) {
			sb_addc(&so, o->short_name);
			if (o->has_arg)
				sb_addc(&so, ':');
		}
	}
	st->shortopts = sb_detach(&so);
	optind = 0; /* glibc: start afresh, argv[0] is the command name */
	opterr = 0;
}

void cli_parser_release(struct cli_parser *p)
{
	struct parser_state *st = p->state;

	if (!st)
		return;
	free(st->longopts);
	free(st->shortopts);
	free(st);
	p->state = NULL;
}

static const struct cli_option *option_by_index(const struct cli_parser *p, size_t i)
{
	return i < p->info->noptions ? &p->info->options[i]
				     : &cli_global_options[i - p->info->noptions];
}

static const struct cli_option *option_by_short(const struct cli_parser *p, int c)
{
	size_t i, n = p->info->noptions + cli_global_noptions;

	for (i = 0; i < n; i++)
		if (option_by_index(p, i)->short_name == c)
			return option_by_index(p, i);
	return NULL;
}

/*
 * Spellings other tools (or kiln's own other commands, before issue 31)
 * use for an option kiln spells one way on every command. An unknown
 * option that is one of them is answered with kiln's spelling when the
 * command has it, before the nearest-name guess (which would offer
 * --markdown for --format).
 */
static const struct {
	const char *word, *kiln;
} other_spellings[] = {
    {"--format", "--json"},
    {"-o", "--json"},
    {"--output", "--out"},
    {"--output", "--json"},
    {"--yes", "--auto-approve"},
    {"-y", "--auto-approve"},
    {"--assume-yes", "--auto-approve"},
    {"--force", "--auto-approve"},
    {"--approve", "--auto-approve"},
    {"--non-interactive", "--auto-approve"},
    {"--file", "--spec"},
    {"-f", "--spec"},
    {"--config", "--spec"},
    {"--env", "--workspace"},
    {"--environment", "--workspace"},
    {"--ws", "--workspace"},
    {"--parallel", "--parallelism"},
    {"-j", "--parallelism"},
    {"--jobs", "--parallelism"},
    {"--concurrency", "--parallelism"},
    {"--verbose", "--log-level"},
    {"-v", "--log-level"},
    {"--debug", "--log-level"},
    {"--no-colour", "--no-color"},
};

const char *cli_other_spelling(const struct cmd_info *info, const char *word)
{
	size_t i, k;

	for (i = 0; i < ARRAY_SIZE(other_spellings); i++) {
		const char *kiln = other_spellings[i].kiln;

		if (strcmp(other_spellings[i].word, word) != 0)
			continue;
		for (k = 0; k < info->noptions; k++)
			if (strcmp(info->options[k].name, kiln + 2) == 0)
				return kiln;
		for (k = 0; k < cli_global_noptions; k++)
			if (strcmp(cli_global_options[k].name, kiln + 2) == 0)
				return kiln;
	}
	return NULL;
}

static void report_bad_option(struct cli_parser *p, int c)
{
	const char *arg = p->argv[optind - 1 > 0 ? optind - 1 : 1];
	size_t n = p->info->noptions + cli_global_noptions, i;
	const char **names = xcalloc(n, sizeof(*names));
	char **owned = xcalloc(n, sizeof(*owned));
	char *word;
	const char *near;

	p->exit_code = KILN_EXIT_ERROR;
	if (c == ':') {
		const struct cli_option *o = NULL;

		if (str_starts_with(arg, "--")) {
			for (i = 0; i < n; i++)
				if (strcmp(option_by_index(p, i)->name, arg + 2) == 0)
					o = option_by_index(p, i);
		} else {
			o = option_by_short(p, optopt);
		}
		if (o)
			cli_error(p->cli, NULL, "option '--%s' needs a value (%s)", o->name,
				  o->arg);
		else
			cli_error(p->cli, NULL, "option '%s' needs a value", arg);
		goto out;
	}
	if (str_starts_with(arg, "--")) {
		const char *eq = strchr(arg, '=');

		word = eq ? xstrndup(arg, (size_t)(eq - arg)) : xstrdup(arg);
		for (i = 0; i < n; i++) {
			owned[i] = xasprintf("--%s", option_by_index(p, i)->name);
			names[i] = owned[i];
			if (eq && strcmp(owned[i], word) == 0) {
				cli_error(p->cli, NULL, "option '%s' takes no value", word);
				free(word);
				goto out;
			}
		}
	} else {
		word = xasprintf("-%c", optopt ? optopt : '?');
		for (i = 0; i < n; i++)
			names[i] = owned[i] = xasprintf("--%s", option_by_index(p, i)->name);
	}
	if ((near = cli_other_spelling(p->info, word))) {
		char *hint = xasprintf("did you mean '%s%s'? kiln spells it so on every command",
				       near, strcmp(near, "--log-level") == 0 ? " debug" : "");

		cli_error(p->cli, hint, "unknown option '%s'", word);
		free(hint);
		goto done;
	}
	near = str_closest(word, names, n);
	if (near) {
		char *hint = xasprintf("did you mean '%s'?", near);

		cli_error(p->cli, hint, "unknown option '%s'", word);
		free(hint);
	} else {
		char *hint = xasprintf("see 'kiln help %s'", p->info->name);

		cli_error(p->cli, hint, "unknown option '%s'", word);
		free(hint);
	}
done:
	free(word);
out:
	for (i = 0; i < n; i++)
		free(owned[i]);
	free(owned);
	free(names);
}

/* True when the command takes an option of this name. */
static bool takes_option(const struct cmd_info *info, const char *name)
{
	size_t i;

	for (i = 0; i < info->noptions; i++)
		if (strcmp(info->options[i].name, name) == 0)
			return true;
	return false;
}

/*
 * An empty workspace name, from -w '' or KILN_WORKSPACE='', is refused
 * here, once for every command that takes -w: it used to mean "default"
 * silently, so a script whose variable came out empty worked on the
 * default workspace. The environment is checked only once the options
 * are read, so that --help still answers.
 */
static bool workspace_empty(struct cli_parser *p, const struct cli_option *o, const char *arg)
{
	const char *env = getenv("KILN_WORKSPACE");

	if (o && strcmp(o->name, "workspace") == 0 && arg && !*arg) {
		cli_error(p->cli,
			  "give a workspace name, such as -w staging, or drop -w for the default "
			  "workspace",
			  "the workspace name given to -w is empty");
		return true;
	}
	if (!o && takes_option(p->info, "workspace") && env && !*env) {
		cli_error(p->cli,
			  "set it to a workspace name, or unset it for the default workspace "
			  "(unset KILN_WORKSPACE)",
			  "KILN_WORKSPACE is set but empty");
		return true;
	}
	return false;
}

int cli_next(struct cli_parser *p)
{
	struct parser_state *st = p->state;
	const struct cli_option *o;
	int c, idx = -1;

	for (;;) {
		c = getopt_long(p->argc, p->argv, st->shortopts, st->longopts, &idx);
		if (c == -1) {
			p->optind = optind;
			if (workspace_empty(p, NULL, NULL)) {
				p->exit_code = KILN_EXIT_ERROR;
				return CLI_EXIT;
			}
			return CLI_DONE;
		}
		if (c == '?' || c == ':') {
			report_bad_option(p, c);
			return CLI_EXIT;
		}
		if (c >= VAL_CMD) {
			o = option_by_index(p,
					    (size_t)(c - (c >= VAL_GLOBAL ? VAL_GLOBAL : VAL_CMD)));
		} else {
			o = option_by_short(p, c);
			if (!o) {
				report_bad_option(p, '?');
				return CLI_EXIT;
			}
		}
		p->optarg = optarg;
		if (o >= cli_global_options && o < cli_global_options + cli_global_noptions) {
			if (o->id == GOPT_HELP) {
				cli_print_command_help(stdout, p->info);
				p->exit_code = KILN_EXIT_OK;
				return CLI_EXIT;
			}
			if (cli_global_option(p->cli, o->name, optarg) < 0) {
				p->exit_code = KILN_EXIT_ERROR;
				return CLI_EXIT;
			}
			continue;
		}
		if (workspace_empty(p, o, optarg)) {
			p->exit_code = KILN_EXIT_ERROR;
			return CLI_EXIT;
		}
		return o->id;
	}
}

void cli_print_options(FILE *out, const struct cli_option *opts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct cli_option *o = &opts[i];
		char lhs[96];

		snprintf(lhs, sizeof(lhs), "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		if (strlen(lhs) > 26)
			fprintf(out, "  %s\n  %-26s  %s\n", lhs, "", o->help);
		else
			fprintf(out, "  %-26s  %s\n", lhs, o->help);
	}
}

void cli_print_command_help(FILE *out, const struct cmd_info *info)
{
	fprintf(out, "Usage: kiln %s %s\n\n%s\n", info->name, info->usage, info->description);
	if (info->noptions) {
		fprintf(out, "\nOptions:\n");
		cli_print_options(out, info->options, info->noptions);
	}
	fprintf(out, "\nGlobal options:\n");
	cli_print_options(out, cli_global_options, cli_global_noptions);
	if (info->see_also)
		fprintf(out, "\nSee also: %s\n", info->see_also);
}
