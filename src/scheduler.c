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
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "strbuf.h"
#include "util.h"

#define STR_(x) #x
#define STR(x) STR_(x)
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

/* Which count a state adds to: "idle", "allocated", "down" or "other". */
static const char *state_class(const char *state)
{
	const char *p = state, *flags = state + strspn(state, "abcdefghijklmnopqrstuvwxyz_+");
	bool down = strchr(flags, '*') != NULL, busy = false, idle = false;

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

json_t *sched_parse_sinfo(const char *text, size_t len, struct kiln_error *err)
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
			part = json_pack("{s:i, s:i, s:i, s:i, s:i}", "joined", 0, "idle", 0,
					 "allocated", 0, "down", 0, "other", 0);
			json_object_set_new(out, name, part);
		}
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

/* What one bounded run of ssh gave back. */
struct run {
	struct strbuf out, errs;
	int status;    /* waitpid's */
	bool too_long; /* past SCHED_DEADLINE: killed */
	bool too_big;  /* more than SCHED_OUTPUT_MAX on a stream: killed */
};

/* In the child: the signals main_signal.c blocks unblocked (a blocked mask survives exec). */
static void child(int out, int errfd, char **av)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	dup2(out, 1);
	dup2(errfd, 2);
	execvp(av[0], av);
	dprintf(2, "cannot run ssh: %s (Debian: openssh-client)\n", strerror(errno));
	_exit(127);
}

/* Run av with both streams read into r, within the deadline and the size bound. */
static int run_bounded(char **av, struct run *r, struct kiln_error *err)
{
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, fd[2];
	int64_t deadline = now_ms() + SCHED_DEADLINE * 1000;
	struct strbuf *sb[2] = {&r->out, &r->errs};
	pid_t pid;

	if (pipe(po) < 0 || pipe(pe) < 0) {
		kiln_error_set(err, "cannot start ssh: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		kiln_error_set(err, "cannot start ssh: %s", strerror(errno));
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
	while (fd[0] >= 0 || fd[1] >= 0) {
		struct pollfd p[2];
		int64_t left = deadline - now_ms();
		nfds_t n = 0;
		char buf[4096];

		if (left <= 0) {
			r->too_long = true;
			break;
		}
		for (int k = 0; k < 2; k++)
			if (fd[k] >= 0)
				p[n++] = (struct pollfd){.fd = fd[k], .events = POLLIN};
		if (poll(p, n, (int)left) < 0 && errno != EINTR)
			break;
		for (nfds_t q = 0; q < n; q++) {
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
			if (sb[k]->len + (size_t)got > SCHED_OUTPUT_MAX) {
				r->too_big = true;
				break;
			}
			sb_add(sb[k], buf, (size_t)got);
		}
		if (r->too_big)
			break;
	}
	if (r->too_long || r->too_big)
		kill(pid, SIGTERM);
	for (int k = 0; k < 2; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
		;
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

/* Why the run gave no counts, in err; 0 when it exited 0. */
static int run_verdict(const struct run *r, const char *node, const char *group,
		       struct kiln_error *err)
{
	int code = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	char *why;

	if (r->too_long) {
		kiln_error_set(err, "sinfo on %s did not answer within %d s", node, SCHED_DEADLINE);
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

int sched_ask_controller(struct engine *e, const json_t *resources, const char *endpoint,
			 json_t **counts, char **node, struct kiln_error *err)
{
	const char *group = e->spec->scheduler.controller.name;
	json_t *hosts = NULL, *nodes = NULL;
	const json_t *n;
	const char *name;
	char *config = NULL;
	char *av[] = {"ssh",
		      "-F",
		      NULL,
		      "-n",
		      "-o",
		      "BatchMode=yes",
		      "-o",
		      "ConnectTimeout=" STR(SCHED_CONNECT_TIMEOUT),
		      "--",
		      NULL,
		      SCHED_SINFO_COMMAND,
		      NULL};
	struct run r = {0};
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
	if (access_ssh_config_file(hosts, e->spec, endpoint, &config, err) < 0)
		goto out;
	av[2] = config;
	av[9] = (char *)name;
	if (run_bounded(av, &r, err) < 0 || run_verdict(&r, name, group, err) < 0)
		goto out;
	if ((*counts = sched_parse_sinfo(r.out.buf ? r.out.buf : "", r.out.len, err)))
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
