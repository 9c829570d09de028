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
};

const struct cmd_info cmd_exec_info = {
    .name = "exec",
    .usage = "[GROUP] [OPTIONS] -- COMMAND...",
    .summary = "run a command on every node of a group (or all), in parallel",
    .description = "Run COMMAND with the system's ssh on every node of GROUP (every node when\n"
		   "no group is given), at most --parallelism at once. Each line a node writes\n"
		   "is printed prefixed with its name, standard output to standard output and\n"
		   "standard error to standard error. The exit status is the worst of the\n"
		   "nodes' (ssh's 255 when it could not connect); the last line, on standard\n"
		   "error, names the nodes that failed.",
    .options = exec_options,
    .noptions = ARRAY_SIZE(exec_options),
    .see_also = "kiln-exec(1), kiln-ssh(1), ssh(1)",
};

enum format { FMT_PLAIN, FMT_MPI, FMT_HOSTFILE, FMT_JSON };

struct access_cmd {
	struct run_flags f;
	const char *spec;
	bool live;
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
		case OPT_PARALLELISM:
			if (cmd_run_parallelism_parse(cli, p->optarg, &c->parallelism) < 0)
				return -1;
			break;
		default:
			if (cmd_run_flags_handle(&c->f, cli, opt, p->optarg) < 0)
				return -1;
		}
	}
	for (i = p->optind; i < nargs; i++) {
		if (spec_operand(argv[i])) {
			if (c->spec) {
				cli_error(cli, "give the spec once",
					  "two specs: '%s' and '%s'", c->spec, argv[i]);
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
	if (cmd_run_open(&c->r, cli, &c->f, c->spec, false, cli->cmd) < 0)
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

/* One node of kiln exec: its ssh, and the partial lines of its two streams. */
struct job {
	const char *name;
	pid_t pid;
	int fd[2]; /* stdout, stderr; -1 once closed */
	struct strbuf part[2];
	int code;
};

/* Print buf's complete lines with the node's name; keep the rest for later. */
static void job_emit(struct job *j, int k, bool eof)
{
	FILE *out = k ? stderr : stdout;
	struct strbuf *sb = &j->part[k];
	size_t start = 0, i;

	for (i = 0; i < sb->len; i++)
		if (sb->buf[i] == '\n') {
			fprintf(out, "%s: %.*s\n", j->name, (int)(i - start), sb->buf + start);
			start = i + 1;
		}
	if (eof && start < sb->len) {
		fprintf(out, "%s: %.*s\n", j->name, (int)(sb->len - start), sb->buf + start);
		start = sb->len;
	}
	memmove(sb->buf ? sb->buf : "", sb->buf ? sb->buf + start : "", sb->len - start);
	sb->len -= start;
	if (sb->buf)
		sb->buf[sb->len] = '\0';
	fflush(out);
}

static int job_start(struct job *j, const struct cli *cli, char **av)
{
	int po[2], pe[2];
	pid_t pid;

	if (pipe(po) < 0)
		return -1;
	if (pipe(pe) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		run_ssh(cli, av);
	}
	close(po[1]);
	close(pe[1]);
	j->pid = pid;
	j->fd[0] = po[0];
	j->fd[1] = pe[0];
	return 0;
}

/* Read what is ready on one stream; false when it closed. */
static bool job_read(struct job *j, int k)
{
	char buf[4096];
	ssize_t n = read(j->fd[k], buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		job_emit(j, k, true);
		close(j->fd[k]);
		j->fd[k] = -1;
		return false;
	}
	sb_add(&j->part[k], buf, (size_t)n);
	job_emit(j, k, false);
	return true;
}

/* Run av's command on every node, at most par at once. The worst exit code. */
static int exec_all(struct cli *cli, const json_t *nodes, const char *config, char **command,
		    int ncommand, int par)
{
	size_t n = json_array_size(nodes), next = 0, running = 0, i, failed = 0;
	struct job *jobs = xcalloc(n, sizeof(*jobs));
	struct pollfd *pfd = xcalloc(n * 2, sizeof(*pfd));
	struct strbuf sum = {0};
	int worst = 0;

	while (next < n || running) {
		size_t np = 0;

		while (running < (size_t)par && next < n) {
			struct job *j = &jobs[next];
			char **av;

			j->name =
			    json_string_value(json_object_get(json_array_get(nodes, next), "name"));
			if (require_address(cli, json_array_get(nodes, next)) < 0) {
				/* ssh's own status for a host it cannot reach. */
				j->code = 255;
				j->pid = -1;
				j->fd[0] = j->fd[1] = -1;
				next++;
				continue;
			}
			av = ssh_argv(config, j->name, command, ncommand, true);
			if (job_start(j, cli, av) < 0) {
				fprintf(stderr, "%s: %s: cannot start ssh for %s: %s\n", cli->prog,
					cli->cmd, j->name, strerror(errno));
				j->code = 255;
				j->pid = -1;
				j->fd[0] = j->fd[1] = -1;
			} else {
				running++;
			}
			ssh_argv_free(av);
			next++;
		}
		for (i = 0; i < next; i++)
			for (int k = 0; k < 2; k++)
				if (jobs[i].pid > 0 && jobs[i].fd[k] >= 0)
					pfd[np++] =
					    (struct pollfd){.fd = jobs[i].fd[k], .events = POLLIN};
		if (np && poll(pfd, np, -1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < next; i++) {
			struct job *j = &jobs[i];
			int status;

			if (j->pid <= 0)
				continue;
			for (int k = 0; k < 2; k++)
				for (size_t q = 0; q < np; q++)
					if (j->fd[k] >= 0 && pfd[q].fd == j->fd[k] &&
					    pfd[q].revents)
						job_read(j, k);
			if (j->fd[0] >= 0 || j->fd[1] >= 0)
				continue;
			while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
				;
			j->code = exit_code(status);
			j->pid = 0;
			running--;
		}
	}
	for (i = 0; i < n; i++) {
		if (jobs[i].code > worst)
			worst = jobs[i].code;
		if (jobs[i].code)
			sb_addf(&sum, "%s%s (exit %d)", failed++ ? ", " : "", jobs[i].name,
				jobs[i].code);
		sb_release(&jobs[i].part[0]);
		sb_release(&jobs[i].part[1]);
	}
	if (failed)
		fprintf(stderr, "%s: %s: %zu of %zu nodes failed: %s\n", cli->prog, cli->cmd,
			failed, n, sum.buf);
	else
		fprintf(stderr, "%s: %s: all %zu nodes succeeded\n", cli->prog, cli->cmd, n);
	sb_release(&sum);
	free(pfd);
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
	ret = exec_all(cli, nodes, config, c.command, c.ncommand, c.parallelism);
out:
	if (config) {
		unlink(config);
		free(config);
	}
	json_decref(nodes);
	release(&c, &p);
	return ret;
}
