/*
 * main.c - the command table and global flags; everything else is a command.
 *
 * `kiln [GLOBAL OPTIONS] COMMAND [ARGS]`. A command lives in cmd_<name>.c and
 * owns its exit code.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "lock.h"
#include "log.h"
#include "signals.h"
#include "util.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli *cli);
	const struct cmd_info *info;
} commands[] = {
    {"init", cmd_init, &cmd_init_info},
    {"validate", cmd_validate, &cmd_validate_info},
    {"plan", cmd_plan, &cmd_plan_info},
    {"approve", cmd_approve, &cmd_approve_info},
    {"apply", cmd_apply, &cmd_apply_info},
    {"destroy", cmd_destroy, &cmd_destroy_info},
    {"up", cmd_up, &cmd_up_info},
    {"down", cmd_down, &cmd_down_info},
    {"status", cmd_status, &cmd_status_info},
    {"hosts", cmd_hosts, &cmd_hosts_info},
    {"ssh-config", cmd_ssh_config, &cmd_ssh_config_info},
    {"ssh", cmd_ssh, &cmd_ssh_info},
    {"exec", cmd_exec, &cmd_exec_info},
    {"run", cmd_run, &cmd_run_info},
    {"runs", cmd_runs, &cmd_runs_info},
    {"repair", cmd_repair, &cmd_repair_info},
    {"graph", cmd_graph, &cmd_graph_info},
    {"iam-policy", cmd_iam_policy, &cmd_iam_policy_info},
    {"user-data", cmd_user_data, &cmd_user_data_info},
    {"size", cmd_size, &cmd_size_info},
    {"cost", cmd_cost, &cmd_cost_info},
    {"audit", cmd_audit, &cmd_audit_info},
    {"sprawl", cmd_sprawl, &cmd_sprawl_info},
    {"state", cmd_state, &cmd_state_info},
    {"log", cmd_log, &cmd_log_info},
    {"show", cmd_show, &cmd_show_info},
    {"workspace", cmd_workspace, &cmd_workspace_info},
    {"force-unlock", cmd_force_unlock, &cmd_force_unlock_info},
    {"reap", cmd_reap, &cmd_reap_info},
    {"report", cmd_report_costs, &cmd_report_info},
    {"ttl", cmd_ttl, &cmd_ttl_info},
    {"policy", cmd_policy, &cmd_policy_info},
    {"schema", cmd_schema, &cmd_schema_info},
    {"completion", cmd_completion, &cmd_completion_info},
    {"version", cmd_version, &cmd_version_info},
    {"help", cmd_help, &cmd_help_info},
};

const struct cmd_info *main_find_info(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return commands[i].info;
	return NULL;
}

const struct cmd_info *main_info_at(size_t i)
{
	return i < ARRAY_SIZE(commands) ? commands[i].info : NULL;
}

void main_print_help(FILE *out)
{
	size_t i;

	fprintf(out,
		"kiln %s - declarative provisioning for deep-learning clusters\n\n"
		"Usage: kiln [GLOBAL OPTIONS] COMMAND [ARGS]\n\nCommands:\n",
		KILN_VERSION);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].info->summary);
	fprintf(out, "\nGlobal options (before or after the command):\n");
	cli_print_options(out, cli_global_options, cli_global_noptions);
	fprintf(out, "\nBefore the command only:\n"
		     "      --version               print the version and exit\n"
		     "\nRun 'kiln help COMMAND' for a command's options; the spec format is in "
		     "kiln-spec(5).\n");
}

void main_report_unknown(const struct cli *cli, const char *name)
{
	const char *names[ARRAY_SIZE(commands)];
	const char *near;
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		names[n++] = commands[i].name;
	near = str_closest(name, names, n);
	if (near)
		fprintf(stderr, "%s: '%s' is not a kiln command; did you mean '%s'?\n", cli->prog,
			name, near);
	else
		fprintf(stderr, "%s: '%s' is not a kiln command; see 'kiln --help'\n", cli->prog,
			name);
}

/* Global options before the command name; returns the command's index in argv or -1. */
static int parse_globals(struct cli *cli, int argc, char **argv, int *exit_code)
{
	struct option longopts[16];
	size_t i, k = 0;
	int c;

	for (i = 0; i < cli_global_noptions && k < ARRAY_SIZE(longopts) - 2; i++) {
		longopts[k].name = cli_global_options[i].name;
		longopts[k].has_arg =
		    cli_global_options[i].has_arg ? required_argument : no_argument;
		longopts[k].flag = NULL;
		longopts[k].val = 1000 + (int)i;
		k++;
	}
	longopts[k++] = (struct option){"version", no_argument, NULL, 'V'};
	longopts[k] = (struct option){NULL, 0, NULL, 0};
	opterr = 0;
	optind = 0;
	/* '+': stop at the command name, whose own options come after it. */
	while ((c = getopt_long(argc, argv, "+:C:h", longopts, NULL)) != -1) {
		const char *arg = argv[optind - 1];

		if (c == 'V') {
			printf("kiln %s\n", KILN_VERSION);
			*exit_code = KILN_EXIT_OK;
			return -1;
		}
		if (c == 'h' ||
		    (c >= 1000 && strcmp(cli_global_options[c - 1000].name, "help") == 0)) {
			main_print_help(stdout);
			*exit_code = KILN_EXIT_OK;
			return -1;
		}
		if (c == 'C') {
			if (cli_global_option(cli, "chdir", optarg) < 0)
				goto fail;
			continue;
		}
		if (c >= 1000) {
			if (cli_global_option(cli, cli_global_options[c - 1000].name, optarg) < 0)
				goto fail;
			continue;
		}
		if (c == ':') {
			fprintf(stderr, "%s: option '%s' needs a value\n", cli->prog, arg);
			goto fail;
		}
		{
			const char *names[ARRAY_SIZE(longopts)];
			char *owned[ARRAY_SIZE(longopts)];
			char *word = str_starts_with(arg, "--") ? xstrndup(arg, strcspn(arg, "="))
								: xasprintf("-%c", optopt);
			const char *near;
			size_t j;

			for (j = 0; j < k; j++)
				names[j] = owned[j] = xasprintf("--%s", longopts[j].name);
			near = str_closest(word, names, k);
			if (near)
				fprintf(stderr, "%s: unknown option '%s'; did you mean '%s'?\n",
					cli->prog, word, near);
			else
				fprintf(stderr, "%s: unknown option '%s'; see 'kiln --help'\n",
					cli->prog, word);
			for (j = 0; j < k; j++)
				free(owned[j]);
			free(word);
			goto fail;
		}
	}
	if (argc == 1) {
		/* A bare kiln is someone finding their way: the usage, as kiln --help. */
		main_print_help(stdout);
		*exit_code = KILN_EXIT_OK;
		return -1;
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no command given; see 'kiln --help'\n", cli->prog);
		goto fail;
	}
	return optind;
fail:
	*exit_code = KILN_EXIT_ERROR;
	return -1;
}

/*
 * kiln builds large JSON trees from many small allocations (a plan of
 * 10,000 resources is some 170 MB of them), and on virtual machines a page
 * fault costs more than the work done on the page: it was half of a large
 * plan's CPU time. glibc can back its heap with transparent huge pages and
 * grow it in 32 MiB steps, but only through GLIBC_TUNABLES, which it reads
 * at startup; so kiln sets that and executes itself once. (One arena for
 * all threads saves some 10 MB on a large plan, but its refresh threads then
 * queue on the arena's lock: a third more CPU on two cores.) A GLIBC_TUNABLES
 * the caller set is left alone (which also ends the loop), as is a run with
 * KILN_MALLOC_TUNING=0. Sanitizer builds bring their own allocator.
 */
static void tune_malloc(char **argv)
{
#if !defined(__SANITIZE_ADDRESS__)
	static const char *const heavy[] = {"plan", "apply", "destroy", "graph", "state", "show"};
	const char *off = getenv("KILN_MALLOC_TUNING");
	bool wanted = false;
	size_t i, k;

	/* Only the commands that hold whole states and plans are worth an exec. */
	for (i = 1; argv[i] && !wanted; i++)
		for (k = 0; k < ARRAY_SIZE(heavy); k++)
			wanted = wanted || strcmp(argv[i], heavy[k]) == 0;
	if (!wanted || getenv("GLIBC_TUNABLES") || (off && strcmp(off, "0") == 0))
		return;
	if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432", 1))
		return;
	execv("/proc/self/exe", argv);
	unsetenv("GLIBC_TUNABLES"); /* no /proc: run untuned */
#else
	(void)argv;
#endif
}

/*
 * --log-format json takes effect before anything is said, so that an error
 * about an option written before it, or about KILN_LOG_LEVEL, is JSON too.
 * parse_globals and the command's parser still check it where it stands.
 */
static void log_format_early(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--log-format=json") == 0 ||
		    (strcmp(argv[i], "--log-format") == 0 && i + 1 < argc &&
		     strcmp(argv[i + 1], "json") == 0))
			log_set_format(LOG_JSON);
	}
}

/*
 * A signal that ends the run (signals.c's thread calls this): release the
 * held locks, say so, and exit with 128 + the signal. The one exit outside
 * a command's return.
 */
static void exit_for_signal(int sig)
{
	int released = lock_release_all_for_exit();

	fprintf(stderr, "kiln: interrupted by SIG%s%s\n",
		sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
		released ? "; the workspace lock was released" : "");
	_exit(128 + sig);
}

int main(int argc, char **argv)
{
	struct cli cli;
	int exit_code = KILN_EXIT_OK, at;
	const char *name;
	size_t i;

	tune_malloc(argv);

	/* SIGPIPE ignored; the signal thread starts with the first lock (signals.h). */
	signals_install(exit_for_signal);
	log_format_early(argc, argv);
	cli_init(&cli);
	at = parse_globals(&cli, argc, argv, &exit_code);
	if (at < 0)
		return exit_code;
	name = argv[at];
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, name) == 0) {
			cli.cmd = name;
			return commands[i].fn(argc - at, argv + at, &cli);
		}
	}
	main_report_unknown(&cli, name);
	return KILN_EXIT_ERROR;
}
