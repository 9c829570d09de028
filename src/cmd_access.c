/*
 * cmd_access.c - `kiln hosts`, `kiln ssh-config`, `kiln ssh` and `kiln
 * exec`: the nodes of a workspace, and logging in to them with the system's
 * OpenSSH client (never one of kiln's own).
 *
 * Each reads the node groups from the workspace's state (the last refresh
 * an apply recorded), or live with --refresh, through access.h; ssh and
 * exec write the configuration of `kiln ssh-config` to a private temporary
 * file, give it to ssh with -F, and remove it when ssh is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access.h"
#include "cmd_run.h"
#include "cmds.h"
#include "fanout.h"
#include "signals.h"
#include "str.h"
#include "jsonw.h"
#include "state.h"
#include "strbuf.h"

enum {
	OPT_SPEC = 1,
	OPT_FORMAT,
	OPT_LIVE,
	OPT_PARALLELISM,
	OPT_JSON,
};

#define OPT_SPEC_FILE                                                                              \
	{                                                                                          \
		"spec", 0, true, OPT_SPEC, "FILE", "the cluster's spec (default kiln.yaml)"        \
	}
#define OPT_REFRESH_LIVE                                                                           \
	{                                                                                          \
		"refresh", 0, false, OPT_LIVE, NULL,                                               \
		    "read the nodes live from the cloud, not from the last refresh in state"       \
	}

static const struct cli_option hosts_options[] = {
    OPT_SPEC_FILE,
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_VAR,
    OPT_REFRESH_LIVE,
    {"format", 0, true, OPT_FORMAT, "plain|mpi|hostfile|json",
     "plain (default), an Open MPI hostfile, one address a line, or JSON"},
    {"json", 0, false, OPT_JSON, NULL,
     "the same as --format json (--json is JSON output on every command)"},
};

const struct cmd_info cmd_hosts_info = {
    .name = "hosts",
    .usage = "[GROUP] [SPEC] [--format plain|mpi|hostfile|json] [OPTIONS]",
    .summary = "list the nodes: names, ids, addresses, zones, GPUs, health",
    .description = "List the nodes of the workspace (of GROUP only when given) as the last\n"
		   "refresh recorded them in state, or live with --refresh: the host name kiln\n"
		   "ssh-config gives each (kiln-CLUSTER-WS-GROUP-N), instance id, private and\n"
		   "public address, zone, GPUs and health. --format mpi writes an Open MPI\n"
		   "hostfile (ADDR slots=GPUS), hostfile one private address a line (torchrun,\n"
		   "DeepSpeed), json everything. On sim the addresses are simulated, and say so.",
    .options = hosts_options,
    .noptions = ARRAY_SIZE(hosts_options),
    .see_also = "kiln-hosts(1), kiln-ssh-config(1), kiln-exec(1)",
};

static const struct cli_option config_options[] = {
    OPT_SPEC_FILE, CMD_OPT_WORKSPACE, CMD_OPT_STATE, RUN_OPT_VAR, OPT_REFRESH_LIVE,
};

const struct cmd_info cmd_ssh_config_info = {
    .name = "ssh-config",
    .usage = "[SPEC] [OPTIONS]",
    .summary = "print OpenSSH Host blocks for every node",
    .description = "Print an OpenSSH client configuration (ssh_config(5)) with one Host block\n"
		   "per node, named kiln-CLUSTER-WS-GROUP-N: HostName, User (access.user, else\n"
		   "the image's default user), ProxyJump through the login node (the first node\n"
		   "of the first public group) for private nodes, IdentityFile for each key\n"
		   "file the spec names, and StrictHostKeyChecking accept-new. Use it as\n"
		   "  kiln ssh-config >> ~/.ssh/config\n"
		   "or write it to a file of its own and add `Include FILE` to ~/.ssh/config.",
    .options = config_options,
    .noptions = ARRAY_SIZE(config_options),
    .see_also = "kiln-ssh-config(1), kiln-ssh(1), ssh_config(5)",
};

const struct cmd_info cmd_ssh_info = {
    .name = "ssh",
    .usage = "[GROUP[/N]] [OPTIONS] [-- COMMAND...]",
    .summary = "log in to a node (the login node by default) with the system's ssh",
    .description = "Run the system's ssh with the configuration kiln ssh-config prints, to node\n"
		   "N of GROUP (its first node without /N), or to the login node when no\n"
		   "group is given; with -- COMMAND, run the command there instead of a shell.\n"
		   "The exit status is ssh's. On sim there is nothing to log in to.",
    .options = config_options,
    .noptions = ARRAY_SIZE(config_options),
    .see_also = "kiln-ssh(1), kiln-exec(1), kiln-ssh-config(1), ssh(1)",
};

static const struct cli_option exec_options[] = {
    OPT_SPEC_FILE,
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    RUN_OPT_VAR,
    OPT_REFRESH_LIVE,
    {"parallelism", 0, true, OPT_PARALLELISM, "N", "at most N nodes at once (default 32)"},
    {"json", 0, false, OPT_JSON, NULL,
     "one JSON object at the end: each node's exit, duration and output (kept, to 1 MiB)"},
};

const struct cmd_info cmd_exec_info = {
    .name = "exec",
    .usage = "[GROUP] [OPTIONS] [--json] -- COMMAND...",
    .summary = "run a command on every node of a group (or all), in parallel",
    .description = "Run COMMAND with the system's ssh on every node of GROUP (every node when\n"
		   "no group is given), at most --parallelism at once. Each line a node writes\n"
		   "is printed prefixed with its name, standard output to standard output and\n"
		   "standard error to standard error. The exit status is the worst of the\n"
		   "nodes' (ssh's 255 when it could not connect); the last line, on standard\n"
		   "error, names the nodes that failed. With --json nothing is printed as it\n"
		   "comes: each node's output is kept (its first MiB of each stream) and stdout\n"
		   "is one JSON object at the end, per node its exit, duration and output.",
    .options = exec_options,
    .noptions = ARRAY_SIZE(exec_options),
    .see_also = "kiln-exec(1), kiln-ssh(1), ssh(1)",
};

enum format { FMT_PLAIN, FMT_MPI, FMT_HOSTFILE, FMT_JSON };

struct access_cmd {
	struct run_flags f;
	const char *spec;
	bool live;
	bool json; /* exec --json */
	enum format format;
	int parallelism;
	const char *operand;
	char **command; /* after "--", NULL-terminated; NULL when no "--" */
	int ncommand;
	struct op_run r;
	json_t *hosts;
};

/*
 * An operand that names a spec (FILE.yaml or FILE.yml), which these
 * commands take as other commands do, beside --spec: group and node names
 * never end so.
 */
static bool spec_operand(const char *arg)
{
	return str_ends_with(arg, ".yaml") || str_ends_with(arg, ".yml");
}

/* Options, a spec and one operand at most, and what follows "--". -1 with *ret set. */
static int parse(struct access_cmd *c, struct cli_parser *p, struct cli *cli,
		 const struct cmd_info *info, int argc, char **argv, int *ret)
{
	static const char *const formats[] = {"plain", "mpi", "hostfile", "json"};
	int i, opt, nargs = argc;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			nargs = i;
			c->command = argv + i + 1;
			c->ncommand = argc - i - 1;
			break;
		}
	*ret = KILN_EXIT_ERROR;
	cli_parser_init(p, cli, info, nargs, argv);
	while ((opt = cli_next(p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			*ret = p->exit_code;
			return -1;
		}
		switch (opt) {
		case OPT_SPEC:
			c->spec = p->optarg;
			break;
		case OPT_LIVE:
			c->live = true;
			break;
		case OPT_FORMAT:
			for (i = 0; i < (int)ARRAY_SIZE(formats); i++)
				if (strcmp(p->optarg, formats[i]) == 0)
					break;
			if (i == (int)ARRAY_SIZE(formats)) {
				cli_error(cli, "use plain, mpi, hostfile or json",
					  "--format '%s' is not a hosts format", p->optarg);
				return -1;
			}
			c->format = (enum format)i;
			break;
		case OPT_JSON:
			c->json = true;
			c->format = FMT_JSON;
			break;
		case OPT_PARALLELISM:
			if (cmd_run_parallelism_parse(cli, p->optarg, &c->parallelism) < 0)
				return -1;
			break;
		default:
			if (cmd_run_flags_handle(&c->f, cli, opt, p->optarg) < 0)
				return -1;
		}
	}
	if (c->json && c->format != FMT_JSON) {
		cli_error(cli, "give one of them", "--json and --format %s ask for two outputs",
			  formats[c->format]);
		return -1;
	}
	for (i = p->optind; i < nargs; i++) {
		if (spec_operand(argv[i])) {
			if (c->spec) {
				cli_error(cli, "give the spec once", "two specs: '%s' and '%s'",
					  c->spec, argv[i]);
				return -1;
			}
			c->spec = argv[i];
		} else if (c->operand) {
			cli_error(cli, "name one group (GROUP, or GROUP/N for kiln ssh)",
				  "too many operands: '%s'", argv[i]);
			return -1;
		} else {
			c->operand = argv[i];
		}
	}
	return 0;
}

/* Open the spec and state, read the hosts (of group, when not NULL). */
static int load(struct access_cmd *c, struct cli *cli, const char *group)
{
	struct kiln_error err = {0};
	json_t *res;

	c->f.refresh = c->live;
	if (!c->spec && !(c->spec = cmd_run_spec_operand(cli, NULL, 0, NULL, 0)))
		return -1;
	if (cmd_run_open(&c->r, cli, &c->f, c->spec) < 0)
		return -1;
	if (!c->r.ws || !c->r.ws->exists || !state_cluster(c->r.state)) {
		cli_error(cli, "bring it up with `kiln up`",
			  "workspace '%s' has no cluster yet: nothing has been applied",
			  c->r.e->workspace);
		return -1;
	}
	res = access_resources(c->r.e, c->r.state, c->live, &err);
	if (res)
		c->hosts = access_hosts(c->r.e, res, group, &err);
	json_decref(res);
	if (!c->hosts) {
		cmd_report(cli, &err);
		return -1;
	}
	return 0;
}

static void release(struct access_cmd *c, struct cli_parser *p)
{
	json_decref(c->hosts);
	operation_close(&c->r);
	cmd_run_flags_release(&c->f);
	cli_parser_release(p);
}

static const char *str(const json_t *node, const char *key)
{
	const char *s = json_string_value(json_object_get(node, key));

	return s ? s : "-";
}

static void print_plain(const json_t *hosts)
{
	const json_t *n;
	size_t i;
	int w = 4;

	json_array_foreach(json_object_get(hosts, "nodes"), i,
			   n) if ((int)strlen(str(n, "name")) > w) w = (int)strlen(str(n, "name"));
	printf("%-*s  %-19s  %-15s  %-15s  %-12s  %4s  %s\n", w, "NAME", "ID", "PRIVATE", "PUBLIC",
	       "ZONE", "GPUS", "HEALTH");
	json_array_foreach(json_object_get(hosts, "nodes"), i, n)
	{
		const char *h = str(n, "health");
		const char *why = json_string_value(json_object_get(n, "health_reason"));

		printf("%-*s  %-19s  %-15s  %-15s  %-12s  %4" JSON_INTEGER_FORMAT "  %s%s%s\n", w,
		       str(n, "name"), str(n, "id"), str(n, "private_ip"), str(n, "public_ip"),
		       str(n, "zone"), json_integer_value(json_object_get(n, "gpus")),
		       strcmp(h, "-") ? h : "not reported", why ? ": " : "", why ? why : "");
	}
	if (json_is_true(json_object_get(hosts, "simulated")))
		printf("(simulated addresses: the %s provider runs no machines)\n",
		       str(hosts, "provider"));
}

static int cmd_hosts_print(struct access_cmd *c, struct cli *cli)
{
	const json_t *n;
	size_t i, skipped = 0;

	if (c->format == FMT_JSON) {
		jsonw_dumpf(c->hosts, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		return KILN_EXIT_OK;
	}
	if (c->format == FMT_PLAIN) {
		print_plain(c->hosts);
		return KILN_EXIT_OK;
	}
	json_array_foreach(json_object_get(c->hosts, "nodes"), i, n)
	{
		const char *ip = json_string_value(json_object_get(n, "private_ip"));

		if (!ip) {
			skipped++;
			continue;
		}
		char *shown = str_for_terminal(ip, 0);

		if (c->format == FMT_MPI)
			printf("%s slots=%" JSON_INTEGER_FORMAT "\n", shown,
			       json_integer_value(json_object_get(n, "gpus")));
		else
			printf("%s\n", shown);
		free(shown);
	}
	if (skipped)
		fprintf(stderr, "%s: %s: %zu node%s without an address yet left out\n", cli->prog,
			cli->cmd, skipped, skipped == 1 ? "" : "s");
	if (json_is_true(json_object_get(c->hosts, "simulated")))
		fprintf(stderr, "%s: %s: simulated addresses: the %s provider runs no machines\n",
			cli->prog, cli->cmd, str(c->hosts, "provider"));
	return KILN_EXIT_OK;
}

int cmd_hosts(int argc, char **argv, struct cli *cli)
{
	struct access_cmd c = {0};
	struct cli_parser p;
	int ret;

	cmd_run_flags_init(&c.f);
	if (parse(&c, &p, cli, &cmd_hosts_info, argc, argv, &ret) < 0)
		goto out;
	if (c.command) {
		cli_error(cli, "kiln exec runs a command on the nodes",
			  "kiln hosts takes no command after --");
		goto out;
	}
	if (load(&c, cli, c.operand) == 0)
		ret = cmd_hosts_print(&c, cli);
out:
	release(&c, &p);
	return ret;
}

int cmd_ssh_config(int argc, char **argv, struct cli *cli)
{
	struct access_cmd c = {0};
	struct cli_parser p;
	char *text;
	int ret;

	cmd_run_flags_init(&c.f);
	if (parse(&c, &p, cli, &cmd_ssh_config_info, argc, argv, &ret) < 0)
		goto out;
	if (c.command || c.operand) {
		cli_error(cli, "kiln ssh-config prints every node's block; kiln ssh logs in",
			  "kiln ssh-config takes no operand");
		goto out;
	}
	if (load(&c, cli, NULL) == 0) {
		struct kiln_error err = {0};

		text = access_ssh_config(c.hosts, c.r.e->spec, getenv(ACCESS_ENDPOINT_ENV), &err);
		if (!text) {
			cmd_report(cli, &err);
			goto out;
		}
		fputs(text, stdout);
		free(text);
		ret = KILN_EXIT_OK;
	}
out:
	release(&c, &p);
	return ret;
}

/* sim has no machine to log in to: say so, with what there is to do. */
static bool refuse_simulated(const struct access_cmd *c, struct cli *cli)
{
	if (!json_is_true(json_object_get(c->hosts, "simulated")))
		return false;
	cli_error(cli,
		  "kiln hosts and kiln ssh-config show the simulated addresses; a spec on a cloud "
		  "provider makes nodes to log in to",
		  "workspace '%s' runs on the %s provider: its nodes are simulated and there is "
		  "nothing to log in to",
		  c->r.e->workspace, str(c->hosts, "provider"));
	return true;
}

/*
 * A node ssh can be pointed at: one with an address (or any, with the test
 * endpoint). -1 after saying why not.
 */
static int require_address(const struct cli *cli, const json_t *node)
{
	if (access_node_host(node) || getenv(ACCESS_ENDPOINT_ENV))
		return 0;
	cli_error(cli, "kiln hosts --refresh shows it once the cloud has given it one",
		  "node %s (%s) has no address yet (state %s)",
		  json_string_value(json_object_get(node, "name")),
		  json_string_value(json_object_get(node, "id")) ?: "no id",
		  json_string_value(json_object_get(node, "state")) ?: "unknown");
	return -1;
}

/*
 * The hosts' configuration in a private temporary file (*path, caller
 * unlinks and frees); batch: BatchMode for every ssh, a jump's too.
 */
static int write_config(const struct access_cmd *c, struct cli *cli, bool batch, char **path)
{
	struct kiln_error err = {0};

	if (access_ssh_config_file(c->hosts, c->r.e->spec, getenv(ACCESS_ENDPOINT_ENV),
				   batch ? 0 : -1, path, &err) == 0)
		return 0;
	cmd_report(cli, &err);
	return -1;
}

/*
 * ssh -F config [extra...] -- HOST [command...], as a NULL-terminated argv
 * owning its strings, as execvp wants them (char *); ssh_argv_free frees it.
 */
static char **ssh_argv(const char *config, const char *host, char **command, int ncommand,
		       bool batch)
{
	char **av = xcalloc((size_t)ncommand + 10, sizeof(*av));
	int n = 0;

	av[n++] = xstrdup("ssh");
	av[n++] = xstrdup("-F");
	av[n++] = xstrdup(config);
	if (batch) {
		av[n++] = xstrdup("-n");
		av[n++] = xstrdup("-o");
		av[n++] = xstrdup("BatchMode=yes");
	}
	av[n++] = xstrdup("--");
	av[n++] = xstrdup(host);
	for (int i = 0; i < ncommand; i++)
		av[n++] = xstrdup(command[i]);
	return av;
}

static void ssh_argv_free(char **av)
{
	for (size_t i = 0; av && av[i]; i++)
		free(av[i]);
	free(av);
}

/*
 * In a child: exec ssh with the signals kiln blocks unblocked (ssh must see
 * ^C and SIGTERM).
 */
static void run_ssh(const struct cli *cli, char **av)
{
	signals_for_exec();
	execvp("ssh", av);
	fprintf(stderr,
		"%s: %s: cannot run ssh: %s\n  hint: install OpenSSH's client (Debian: "
		"openssh-client)\n",
		cli->prog, cli->cmd, strerror(errno));
	_exit(127);
}

/* An exit status as a shell reports it: 128+N for a signal. */
static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return KILN_EXIT_ERROR;
}

int cmd_ssh(int argc, char **argv, struct cli *cli)
{
	struct access_cmd c = {0};
	struct kiln_error err = {0};
	struct cli_parser p;
	const json_t *node;
	char *config = NULL, **av = NULL, *why;
	pid_t pid;
	int ret, status;

	cmd_run_flags_init(&c.f);
	if (parse(&c, &p, cli, &cmd_ssh_info, argc, argv, &ret) < 0)
		goto out;
	if (load(&c, cli, NULL) < 0 || refuse_simulated(&c, cli))
		goto out;
	if (!(node = access_find(c.hosts, c.operand, &err))) {
		cmd_report(cli, &err);
		goto out;
	}
	if (require_address(cli, node) < 0)
		goto out;
	if (!json_is_true(json_object_get(node, "public")) &&
	    json_is_null(json_object_get(node, "proxy_jump")) &&
	    (why = access_unreachable(c.hosts))) {
		fprintf(stderr, "%s: %s: warning: %s\n  hint: %s\n", cli->prog, cli->cmd, why,
			ACCESS_UNREACHABLE_FIX);
		free(why);
	}
	if (write_config(&c, cli, false, &config) < 0)
		goto out;
	av = ssh_argv(config, json_string_value(json_object_get(node, "name")), c.command,
		      c.ncommand, false);
	fflush(NULL);
	if ((pid = fork()) < 0) {
		cli_error(cli, NULL, "cannot start ssh: %s", strerror(errno));
		goto out;
	}
	if (pid == 0)
		run_ssh(cli, av);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ret = exit_code(status);
out:
	if (config) {
		unlink(config);
		free(config);
	}
	ssh_argv_free(av);
	release(&c, &p);
	return ret;
}

/* Text: each line a node writes, prefixed with its name, on the stream it came on. */
static void exec_line(void *ctx, const struct fanout_node *n, int stream, const char *text,
		      size_t len)
{
	FILE *out = stream ? stderr : stdout;

	(void)ctx;
	fprintf(out, "%s: %.*s\n", n->name, (int)len, text);
	fflush(out);
}

static void exec_ssh(void *ctx, char **argv)
{
	run_ssh(ctx, argv);
}

static json_t *exec_stream(const struct fanout_node *n, int k)
{
	char *text = fanout_text(&n->kept[k]);
	json_t *v = json_string(text);

	free(text);
	return v ? v : json_string("");
}

/* --json: one object, a member per node (exit, duration, its output kept whole to 1 MiB). */
static void exec_print_json(const struct fanout_node *nodes, size_t n, char **command, int ncommand,
			    const char *workspace, int worst)
{
	json_t *doc = json_object(), *arr = json_array(), *cmd = json_array();
	size_t i, failed = 0;

	for (int k = 0; k < ncommand; k++)
		json_array_append_new(cmd, json_string(command[k]));
	for (i = 0; i < n; i++) {
		const struct fanout_node *j = &nodes[i];
		json_t *o = json_pack("{s:s, s:i, s:b, s:f, s:o, s:o, s:b, s:b}", "name", j->name,
				      "exit", j->code, "started", j->argv && !j->start_errno,
				      "duration_seconds", j->seconds, "stdout", exec_stream(j, 0),
				      "stderr", exec_stream(j, 1), "stdout_truncated",
				      j->truncated[0], "stderr_truncated", j->truncated[1]);

		failed += j->code != 0;
		json_array_append_new(arr, o);
	}
	json_object_set_new(doc, "command", cmd);
	json_object_set_new(doc, "workspace", json_string(workspace));
	json_object_set_new(doc, "output", json_string("kept"));
	json_object_set_new(doc, "output_limit_bytes", json_integer((json_int_t)FANOUT_KEEP_MAX));
	json_object_set_new(doc, "nodes", arr);
	json_object_set_new(doc, "succeeded", json_integer((json_int_t)(n - failed)));
	json_object_set_new(doc, "failed", json_integer((json_int_t)failed));
	json_object_set_new(doc, "exit", json_integer(worst));
	jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	putchar('\n');
	json_decref(doc);
}

/* Run the command on every node, at most par at once. The worst exit code. */
static int exec_all(struct cli *cli, const struct access_cmd *c, const json_t *nodes,
		    const char *config)
{
	size_t n = json_array_size(nodes), i, failed = 0;
	struct fanout_node *jobs = xcalloc(n, sizeof(*jobs));
	struct fanout_ui ui = {.line = exec_line, .exec = exec_ssh, .ctx = cli, .keep = c->json};
	struct strbuf sum = {0};
	int worst = 0;

	for (i = 0; i < n; i++) {
		const json_t *node = json_array_get(nodes, i);

		jobs[i].name = json_string_value(json_object_get(node, "name"));
		if (require_address(cli, node) < 0)
			jobs[i].code = 255; /* ssh's own status for a host it cannot reach */
		else
			jobs[i].argv =
			    ssh_argv(config, jobs[i].name, c->command, c->ncommand, true);
	}
	fanout_run(jobs, n, c->parallelism, &ui);
	for (i = 0; i < n; i++) {
		if (jobs[i].start_errno)
			fprintf(stderr, "%s: %s: cannot start ssh for %s: %s\n", cli->prog,
				cli->cmd, jobs[i].name, strerror(jobs[i].start_errno));
		if (jobs[i].code > worst)
			worst = jobs[i].code;
		if (jobs[i].code)
			sb_addf(&sum, "%s%s (exit %d)", failed++ ? ", " : "", jobs[i].name,
				jobs[i].code);
	}
	if (c->json)
		exec_print_json(jobs, n, c->command, c->ncommand, c->r.e->workspace, worst);
	if (failed)
		fprintf(stderr, "%s: %s: %zu of %zu nodes failed: %s\n", cli->prog, cli->cmd,
			failed, n, sum.buf);
	else
		fprintf(stderr, "%s: %s: all %zu nodes succeeded\n", cli->prog, cli->cmd, n);
	for (i = 0; i < n; i++)
		ssh_argv_free(jobs[i].argv);
	fanout_release(jobs, n);
	sb_release(&sum);
	free(jobs);
	return worst;
}

int cmd_exec(int argc, char **argv, struct cli *cli)
{
	struct access_cmd c = {.parallelism = 32};
	struct kiln_error err = {0};
	struct cli_parser p;
	json_t *nodes = NULL;
	char *config = NULL;
	int ret;

	cmd_run_flags_init(&c.f);
	if (parse(&c, &p, cli, &cmd_exec_info, argc, argv, &ret) < 0)
		goto out;
	if (!c.command || c.ncommand == 0) {
		cli_error(cli,
			  "write the command after --, like kiln exec trainers -- nvidia-smi -L",
			  "kiln exec needs a command to run");
		goto out;
	}
	if (load(&c, cli, NULL) < 0 || refuse_simulated(&c, cli))
		goto out;
	if (!(nodes = access_select(c.hosts, c.operand, &err))) {
		cmd_report(cli, &err);
		goto out;
	}
	if (!json_array_size(nodes)) {
		cli_error(cli, "bring the cluster up with `kiln up`", "workspace '%s' has no nodes",
			  c.r.e->workspace);
		goto out;
	}
	if (write_config(&c, cli, true, &config) < 0)
		goto out;
	ret = exec_all(cli, &c, nodes, config);
out:
	if (config) {
		unlink(config);
		free(config);
	}
	json_decref(nodes);
	release(&c, &p);
	return ret;
}
