/*
 * scheduler.c - the scheduler's own view of its nodes (scheduler.h): sinfo
 * on the Slurm controller, over the system's ssh with the configuration
 * `kiln ssh-config` prints, and its output read as hostile text.
 *
 * It owns running that one ssh (bounded in time and bytes) and parsing what
 * comes back; it does not render (kiln status does) and names no cloud: the
 * controller node comes from access.c's host list.
 */
#include "scheduler.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "signals.h"
#include "strbuf.h"
#include "util.h"

#define PARTITION_MAX 64
#define STATE_MAX 48
#define LINES_MAX 4096
#define COUNT_MAX 1000000

/* Slurm's node states (sinfo %T, lower case) that kiln status counts as one thing. */
static const char *const busy_states[] = {"allocated", "mixed", "completing"};
static const char *const down_states[] = {"down",   "drained", "draining",	 "drain",
					  "fail",   "failing", "not_responding", "unknown",
					  "future", "inval",   "no_respond"};

static bool in(const char *word, size_t len, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(set[i]) == len && strncmp(set[i], word, len) == 0)
			return true;
	return false;
}

/*
 * Which count a state adds to: "not_responding" (a '*' after it: slurmctld
 * has not heard from the node, such as a dynamic node that left in a shrink
 * and stays listed as down*), else "idle", "allocated", "down" or "other".
 */
static const char *state_class(const char *state)
{
	const char *p = state, *flags = state + strspn(state, "abcdefghijklmnopqrstuvwxyz_+");
	bool down = false, busy = false, idle = false;

	if (strchr(flags, '*'))
		return "not_responding";

	/* "mixed+drain": every part counts; down wins, then busy. */
	while (p < flags) {
		size_t len = strcspn(p, "+");

		if (p + len > flags)
			len = (size_t)(flags - p);
		down |= in(p, len, down_states, ARRAY_SIZE(down_states));
		busy |= in(p, len, busy_states, ARRAY_SIZE(busy_states));
		idle |= len == 4 && strncmp(p, "idle", 4) == 0;
		p += len + (p[len] == '+');
	}
	return down ? "down" : busy ? "allocated" : idle ? "idle" : "other";
}

static bool name_ok(const char *s, size_t len)
{
	if (len == 0 || len > PARTITION_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
			return false;
	return true;
}

static bool state_ok(const char *s, size_t len)
{
	size_t base = 0;

	if (len == 0 || len > STATE_MAX)
		return false;
	while (base < len && ((s[base] >= 'a' && s[base] <= 'z') || s[base] == '_' ||
			      (s[base] == '+' && base > 0)))
		base++;
	if (base == 0)
		return false;
	for (size_t i = base; i < len; i++)
		if (!strchr("*~#!%$@^-", s[i]))
			return false;
	return true;
}

/* Split one line into exactly three space-separated fields; false otherwise. */
static bool fields(const char *line, size_t len, const char *f[3], size_t flen[3])
{
	size_t i = 0, k = 0;

	while (k < 3) {
		while (i < len && line[i] == ' ')
			i++;
		if (i == len)
			return false;
		f[k] = line + i;
		while (i < len && line[i] != ' ')
			i++;
		flen[k] = (size_t)(line + i - f[k]);
		k++;
	}
	while (i < len && line[i] == ' ')
		i++;
	return i == len;
}

static void add(json_t *part, const char *key, json_int_t n)
{
	json_object_set_new(part, key,
			    json_integer(json_integer_value(json_object_get(part, key)) + n));
}

json_t *scheduler_parse_sinfo(const char *text, size_t len, struct kiln_error *err)
{
	json_t *out = json_object();
	size_t pos = 0, lineno = 0;

	if (len > SCHED_OUTPUT_MAX) {
		kiln_error_set(err, "sinfo wrote %zu bytes, more than the %d kiln reads", len,
			       SCHED_OUTPUT_MAX);
		goto bad;
	}
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos), *f[3];
		size_t llen = nl ? (size_t)(nl - line) : len - pos, flen[3];
		char name[PARTITION_MAX + 1], state[STATE_MAX + 1], num[16];
		json_t *part;
		long count;
		char *end;

		pos += llen + (nl != NULL);
		lineno++;
		if (llen && line[llen - 1] == '\r')
			llen--;
		if (llen == 0)
			continue;
		if (lineno > LINES_MAX) {
			kiln_error_set(err, "sinfo wrote more than %d lines", LINES_MAX);
			goto bad;
		}
		if (!fields(line, llen, f, flen) || !name_ok(f[0], flen[0]) || flen[1] == 0 ||
		    flen[1] >= sizeof(num) || strspn(f[1], "0123456789") < flen[1] ||
		    !state_ok(f[2], flen[2])) {
			kiln_error_set(err, "sinfo's line %zu is not 'PARTITION NODES STATE'",
				       lineno);
			goto bad;
		}
		memcpy(num, f[1], flen[1]);
		num[flen[1]] = '\0';
		errno = 0;
		count = strtol(num, &end, 10);
		if (errno || *end || count > COUNT_MAX) {
			kiln_error_set(err, "sinfo's line %zu counts %s nodes, more than %d",
				       lineno, num, COUNT_MAX);
			goto bad;
		}
		memcpy(name, f[0], flen[0]);
		name[flen[0]] = '\0';
		memcpy(state, f[2], flen[2]);
		state[flen[2]] = '\0';
		if (!(part = json_object_get(out, name))) {
			part =
			    json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "joined", 0, "idle", 0,
				      "allocated", 0, "down", 0, "other", 0, "not_responding", 0);
			json_object_set_new(out, name, part);
		}
		/* A node slurmctld does not hear from has not joined (or has left). */
		if (strcmp(state_class(state), "not_responding") != 0)
			add(part, "joined", count);
		add(part, state_class(state), count);
	}
	return out;
bad:
	kiln_error_hint(err, "run %s on the controller (kiln ssh) to see what it answers",
			SCHED_SINFO_COMMAND);
	json_decref(out);
	return NULL;
}

/* The last non-empty line of text, printable and at most 200 bytes. Caller frees. */
static char *last_line(const char *text, size_t len)
{
	size_t end = len, start;
	char *out;

	while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' '))
		end--;
	start = end;
	while (start > 0 && text[start - 1] != '\n')
		start--;
	if (end - start > 200)
		end = start + 200;
	out = xstrndup(text + start, end - start);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return out;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * In the child: the signals kiln blocks unblocked (signals_for_exec); no
 * terminal to prompt on (a session of its own, so no /dev/tty, and ssh
 * told never to run an askpass) and standard input /dev/null, whatever
 * the config or a jump's ssh would do.
 */
static void child(int out, int errfd, char **av)
{
	int in = open("/dev/null", O_RDONLY);

	signals_for_exec();
	setsid();
	setenv("SSH_ASKPASS_REQUIRE", "never", 1);
	if (in >= 0 && in != 0) {
		dup2(in, 0);
		close(in);
	}
	dup2(out, 1);
	dup2(errfd, 2);
	execvp(av[0], av);
	dprintf(2, "cannot run ssh: %s (Debian: openssh-client)\n", strerror(errno));
	_exit(127);
}

/*
 * Until pid ends: at kill_at (ms, now_ms's clock) SIGTERM to its process
 * group (the child made its own session, so a jump's ssh goes too), a
 * second later SIGKILL. killed: whether it had to be.
 */
static void reap(pid_t pid, int64_t kill_at, struct sched_run *r, bool *killed)
{
	int64_t term = 0;

	*killed = false;
	for (;;) {
		pid_t w = waitpid(pid, &r->status, WNOHANG);
		int64_t t = now_ms();

		if (w == pid || (w < 0 && errno != EINTR))
			return;
		if (!term && t >= kill_at) {
			kill(-pid, SIGTERM);
			kill(pid, SIGTERM);
			term = t;
			*killed = true;
		} else if (term && t >= term + 1000) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
				;
			return;
		}
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000000}, NULL);
	}
}

int scheduler_run_bounded(char **av, int deadline_ms, struct sched_run *r, struct kiln_error *err)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, fd[2];
	int64_t deadline = now_ms() + deadline_ms;
	struct strbuf *sb[2] = {&r->out, &r->errs};
	bool killed;
	pid_t pid;

	if (pipe(po) < 0 || pipe(pe) < 0) {
		kiln_error_set(err, "cannot start %s: %s", av[0], strerror(errno));
		kiln_error_hint(err, "too many open files? close some, or raise ulimit -n");
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		kiln_error_set(err, "cannot start %s: %s", av[0], strerror(errno));
		kiln_error_hint(err, "too many processes? try again when fewer run");
		goto fail;
	}
	if (pid == 0) {
		close(po[0]);
		close(pe[0]);
		child(po[1], pe[1], av);
	}
	close(po[1]);
	close(pe[1]);
	fd[0] = po[0];
	fd[1] = pe[0];
	while ((fd[0] >= 0 || fd[1] >= 0) && !r->too_big && !r->poll_failed) {
		struct pollfd p[2];
		int64_t left = deadline - now_ms();
		nfds_t n = 0;
		char buf[4096];
		int ready;

		if (left <= 0)
			break;
		for (int k = 0; k < 2; k++)
			if (fd[k] >= 0)
				p[n++] = (struct pollfd){.fd = fd[k], .events = POLLIN};
		if ((ready = poll(p, n, (int)left)) < 0) {
			r->poll_failed = errno != EINTR;
			r->poll_errno = errno;
			continue;
		}
		for (nfds_t q = 0; q < n && !r->too_big; q++) {
			int k = p[q].fd == fd[0] ? 0 : 1;
			ssize_t got;

			if (!p[q].revents)
				continue;
			got = read(fd[k], buf, sizeof(buf));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				close(fd[k]);
				fd[k] = -1;
				continue;
			}
			if (sb[k]->len + (size_t)got > SCHED_OUTPUT_MAX)
				r->too_big = true;
			else
				sb_add(sb[k], buf, (size_t)got);
		}
	}
	for (int k = 0; k < 2; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	/* Ended streams, not yet an ended process: the deadline still holds. */
	reap(pid, r->too_big || r->poll_failed ? now_ms() : deadline, r, &killed);
	r->too_long = killed && !r->too_big && !r->poll_failed;
	r->deadline_ms = deadline_ms;
	return 0;
fail:
	for (int k = 0; k < 2; k++) {
		if (po[k] >= 0)
			close(po[k]);
		if (pe[k] >= 0)
			close(pe[k]);
	}
	return -1;
}

int scheduler_run_verdict(const struct sched_run *r, const char *node, const char *group,
			  struct kiln_error *err)
{
	int code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	char *why;

	if (r->poll_failed) {
		kiln_error_set(err, "cannot read ssh's answer from %s: poll: %s", node,
			       strerror(r->poll_errno));
		kiln_error_hint(err, "run kiln status again; --no-ssh skips asking");
		return -1;
	}

	if (r->too_long) {
		if (r->deadline_ms % 1000)
			kiln_error_set(err, "sinfo on %s did not answer within %d ms", node,
				       r->deadline_ms);
		else
			kiln_error_set(err, "sinfo on %s did not answer within %d s", node,
				       r->deadline_ms / 1000);
		kiln_error_hint(err,
				"check that slurmctld runs there (kiln ssh, then scontrol ping)");
		return -1;
	}
	if (r->too_big) {
		kiln_error_set(err, "sinfo on %s wrote more than %d bytes", node, SCHED_OUTPUT_MAX);
		kiln_error_hint(err, "run %s there (kiln ssh) to see what it answers",
				SCHED_SINFO_COMMAND);
		return -1;
	}
	if (WIFSIGNALED(r->status)) {
		kiln_error_set(err, "ssh to %s was killed by signal %d (%s)", node,
			       WTERMSIG(r->status), strsignal(WTERMSIG(r->status)));
		kiln_error_hint(err, "kiln ssh %s shows what ssh does; --no-ssh skips asking",
				group);
		return -1;
	}
	if (code == 0)
		return 0;
	why = last_line(r->errs.buf ? r->errs.buf : "", r->errs.len);
	if (code == 255) {
		kiln_error_set(err, "%s", *why ? why : "ssh could not connect");
		kiln_error_hint(err, "kiln ssh %s shows what ssh does; --no-ssh skips asking",
				group);
	} else if (code == 127) {
		kiln_error_set(err, "sinfo is not on %s: %s", node, *why ? why : "not found");
		kiln_error_hint(
		    err, "the controller's image needs Slurm's client commands (slurm-client)");
	} else {
		kiln_error_set(err, "sinfo on %s exited %d%s%s", node, code, *why ? ": " : "", why);
		kiln_error_hint(err,
				"check that slurmctld runs there (kiln ssh, then scontrol ping)");
	}
	free(why);
	return -1;
}

int scheduler_ask_controller(struct engine *e, const json_t *resources, const char *endpoint,
			     json_t **counts, char **node, struct kiln_error *err)
{
	const char *group = e->spec->scheduler.controller.name;
	json_t *hosts = NULL, *nodes = NULL;
	const json_t *n;
	const char *name;
	char *config = NULL;
	char *av[] = {"ssh", "-F", NULL, "-n", "--", NULL, SCHED_SINFO_COMMAND, NULL};
	struct sched_run r = {0};
	struct kiln_error none = {0}; /* access_select's: no node is said below */
	int rc = -1;

	*counts = NULL;
	*node = NULL;
	if (!group) {
		kiln_error_set(err, "the spec has no scheduler controller");
		return -1;
	}
	if (e->prov->simulated) {
		kiln_error_set(err, "the %s provider runs no machines, so no slurmctld",
			       e->prov->name);
		return -1;
	}
	if (!(hosts = access_hosts(e, resources, NULL, err)))
		return -1;
	nodes = access_select(hosts, group, &none);
	if (!json_array_size(nodes)) {
		kiln_error_set(err, "the controller's group %s has no node", group);
		kiln_error_hint(err, "kiln up starts it");
		goto out;
	}
	n = json_array_get(nodes, 0);
	name = json_string_value(json_object_get(n, "name"));
	*node = xstrdup(name);
	if (!access_node_host(n) && !endpoint) {
		kiln_error_set(err, "%s has no address yet", name);
		kiln_error_hint(err,
				"kiln hosts --refresh shows it once the cloud has given it one");
		goto out;
	}
	/* BatchMode and ConnectTimeout in the file: a ProxyJump's ssh reads them too. */
	if (access_ssh_config_file(hosts, e->spec, endpoint, SCHED_CONNECT_TIMEOUT, &config, err) <
	    0)
		goto out;
	av[2] = config;
	av[5] = *node; /* name, in the copy the caller owns */
	if (scheduler_run_bounded(av, SCHED_DEADLINE * 1000, &r, err) < 0 ||
	    scheduler_run_verdict(&r, name, group, err) < 0)
		goto out;
	if ((*counts = scheduler_parse_sinfo(r.out.buf ? r.out.buf : "", r.out.len, err)))
		rc = 0;
out:
	if (config) {
		unlink(config);
		free(config);
	}
	sb_release(&r.out);
	sb_release(&r.errs);
	json_decref(nodes);
	json_decref(hosts);
	return rc;
}
