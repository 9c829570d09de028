/*
 * fanout.c - see fanout.h. The poll loop kiln exec ran inside its command,
 * moved here so that the command only renders: a line callback for text,
 * the kept output and each node's duration for --json.
 */
#include "fanout.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "str.h"
#include "util.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An exit status as a shell reports it: 128+N for a signal. */
static int shell_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* Keep what came, to FANOUT_KEEP_MAX; or hand over the complete lines and keep the rest. */
static void take(struct fanout_node *j, int k, const char *buf, size_t n, bool eof,
		 const struct fanout_ui *ui)
{
	struct strbuf *sb = &j->part[k];
	size_t start = 0, i;

	if (ui->keep) {
		size_t room = FANOUT_KEEP_MAX - j->kept[k].len;

		if (n > room)
			j->truncated[k] = true;
		sb_add(&j->kept[k], buf, n < room ? n : room);
		return;
	}
	sb_add(sb, buf, n);
	for (i = 0; i < sb->len; i++)
		if (sb->buf[i] == '\n') {
			ui->line(ui->ctx, j, k, sb->buf + start, i - start);
			start = i + 1;
		}
	if (eof && start < sb->len) {
		ui->line(ui->ctx, j, k, sb->buf + start, sb->len - start);
		start = sb->len;
	}
	if (start) {
		memmove(sb->buf, sb->buf + start, sb->len - start);
		sb->len -= start;
		sb->buf[sb->len] = '\0';
	}
}

static int start(struct fanout_node *j, const struct fanout_ui *ui)
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
		ui->exec(ui->ctx, j->argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	j->pid = pid;
	j->fd[0] = po[0];
	j->fd[1] = pe[0];
	j->started = mono();
	return 0;
}

/* Read what is ready on one stream; closes it at its end. */
static void drain(struct fanout_node *j, int k, const struct fanout_ui *ui)
{
	char buf[4096];
	ssize_t n = read(j->fd[k], buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		take(j, k, "", 0, true, ui);
		close(j->fd[k]);
		j->fd[k] = -1;
		return;
	}
	take(j, k, buf, (size_t)n, false, ui);
}

void fanout_run(struct fanout_node *nodes, size_t n, int parallelism, const struct fanout_ui *ui)
{
	struct pollfd *pfd = xcalloc(n * 2 + 1, sizeof(*pfd));
	size_t next = 0, running = 0, i;

	for (i = 0; i < n; i++)
		nodes[i].fd[0] = nodes[i].fd[1] = -1;
	while (next < n || running) {
		size_t np = 0;

		for (; running < (size_t)parallelism && next < n; next++) {
			struct fanout_node *j = &nodes[next];

			if (!j->argv)
				continue;
			if (start(j, ui) < 0) {
				j->start_errno = errno;
				j->code = 255;
			} else {
				running++;
			}
		}
		for (i = 0; i < next; i++)
			for (int k = 0; k < 2; k++)
				if (nodes[i].pid > 0 && nodes[i].fd[k] >= 0)
					pfd[np++] =
					    (struct pollfd){.fd = nodes[i].fd[k], .events = POLLIN};
		if (np && poll(pfd, np, -1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < next; i++) {
			struct fanout_node *j = &nodes[i];
			int status;

			if (j->pid <= 0)
				continue;
			for (int k = 0; k < 2; k++)
				for (size_t q = 0; q < np; q++)
					if (j->fd[k] >= 0 && pfd[q].fd == j->fd[k] &&
					    pfd[q].revents)
						drain(j, k, ui);
			if (j->fd[0] >= 0 || j->fd[1] >= 0)
				continue;
			while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
				;
			j->code = shell_code(status);
			j->seconds = mono() - j->started;
			j->pid = 0;
			running--;
		}
	}
	free(pfd);
}

char *fanout_text(const struct strbuf *kept)
{
	const unsigned char *s = (const unsigned char *)(kept->buf ? kept->buf : "");
	struct strbuf sb = {0};
	size_t at = 0, len = kept->len, size;

	sb_add(&sb, "", 0);
	while (at < len) {
		if (!s[at] || str_utf8_decode(s + at, len - at, &size) < 0) {
			sb_add(&sb, "\xef\xbf\xbd", 3);
			at++;
			continue;
		}
		sb_add(&sb, (const char *)s + at, size);
		at += size;
	}
	return sb_detach(&sb);
}

void fanout_release(struct fanout_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			sb_release(&nodes[i].kept[k]);
			sb_release(&nodes[i].part[k]);
		}
}
