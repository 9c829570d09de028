/*
 * cli.h - what every command shares: global flags, option parsing, help.
 *
 * A command is `cmd_<name>(argc, argv, cli)` in src/cmd_<name>.c with a
 * `struct cmd_info` describing its usage and options; main.c holds the table.
 * Options are parsed with getopt_long; global flags (--chdir, --no-color,
 * --log-level, --log-format) are accepted before or after the command name.
 */
#ifndef KILN_CLI_H
#define KILN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes; CI depends on them (see kiln(1), EXIT STATUS). */
enum kiln_exit {
	KILN_EXIT_OK = 0,
	KILN_EXIT_ERROR = 1,
	KILN_EXIT_CHANGES = 2,
	KILN_EXIT_FINDINGS = 3,	    /* kiln audit: an unwaived error-level finding */
	KILN_EXIT_UNHEALTHY = 4,    /* apply, up, repair: done, but a node is unhealthy or silent */
	KILN_EXIT_WAIT_TIMEOUT = 5, /* apply, up --wait: the window did not start in the bound */
};

struct cli {
	bool color_out; /* colour on stdout */
	bool color_err; /* colour on stderr */
	bool no_color;
	const char *prog; /* "kiln" */
	const char *cmd;  /* the command being run */
};

struct cli_option {
	const char *name; /* long name, without -- */
	char short_name;  /* 0 for none */
	bool has_arg;
	int id;		 /* what cli_next() returns for it */
	const char *arg; /* the argument's name in help, e.g. "NAME=VALUE" */
	const char *help;
};

struct cmd_info {
	const char *name;
	const char *usage;   /* after "kiln NAME " */
	const char *summary; /* one line, for `kiln --help` */
	const char *description;
	const struct cli_option *options;
	size_t noptions;
	const char *see_also; /* man page, e.g. "kiln-validate(1)" */
	/* The words a command takes first (state list, ttl extend), NULL-ended; the
	 * command checks its first operand against them, completion offers them. */
	const char *const *subcommands;
};

/* What cli_next() returns besides a command's option ids. */
enum {
	CLI_DONE = -1, /* no more options; operands start at *optind */
	CLI_EXIT = -2, /* help was printed or an error reported: return cli->exit_code */
};

struct cli_parser {
	struct cli *cli;
	const struct cmd_info *info;
	int argc;
	char **argv;
	const char *optarg; /* argument of the option just returned */
	int optind;	    /* first operand once CLI_DONE is returned */
	int exit_code;	    /* with CLI_EXIT */
	void *state;	    /* internal */
};

void cli_init(struct cli *cli);

/* Start parsing a command's arguments (argv[0] is the command name). */
void cli_parser_init(struct cli_parser *p, struct cli *cli, const struct cmd_info *info, int argc,
		     char **argv);
int cli_next(struct cli_parser *p);
void cli_parser_release(struct cli_parser *p);

/*
 * Apply a global option (shared by main and cli_next). Returns 1 when name
 * was a global option, 0 when not, -1 after reporting an error.
 */
int cli_global_option(struct cli *cli, const char *name, const char *arg);
extern const struct cli_option cli_global_options[];
extern const size_t cli_global_noptions;

/* "kiln CMD: MESSAGE" on stderr, plus an optional "  hint: ..." line. */
void cli_error(const struct cli *cli, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void cli_print_options(FILE *out, const struct cli_option *opts, size_t n);
void cli_print_command_help(FILE *out, const struct cmd_info *info);

/*
 * kiln's spelling ("--auto-approve") of an option another tool spells word
 * ("--yes", "-y"), when this command (or every command) takes it; else NULL.
 * An unknown option is answered with it (did you mean).
 */
const char *cli_other_spelling(const struct cmd_info *info, const char *word);

/* True when CI=true or KILN_IN_AUTOMATION is set: no interactive hints. */
bool cli_in_automation(void);

#endif
