/*
 * pager.c - see pager.h. Like git's pager.c: the pager is run by /bin/sh
 * (PAGER may hold options), reads a pipe that becomes kiln's stdout, and
 * kiln waits for it before exiting so the shell's prompt comes after it.
 */
#include "pager.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "signals.h"

const char *pager_command(bool off)
{
	const char *cmd = getenv("KILN_PAGER");

	if (off || !isatty(STDOUT_FILENO) || cli_in_automation())
		return NULL;
	if (!cmd)
		cmd = getenv("PAGER");
	if (!cmd)
		cmd = "less";
	if (!*cmd || strcmp(cmd, "cat") == 0)
		return NULL;
	return cmd;
}

int pager_start(struct pager *pg, const char *cmd)
{
	int fd[2];
	pid_t pid;

	pg->pid = 0;
	pg->saved_stdout = -1;
	fflush(stdout);
	if (pipe(fd) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		/* git's defaults: quit when it fits, keep colours, leave the screen. */
		setenv("LESS", getenv("LESS") ? getenv("LESS") : "FRX", 1);
		setenv("LV", getenv("LV") ? getenv("LV") : "-c", 1);
		signals_for_exec();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127); /* no /bin/sh; the shell says itself when cmd is not found */
	}
	close(fd[0]);
	pg->saved_stdout = dup(STDOUT_FILENO);
	dup2(fd[1], STDOUT_FILENO);
	close(fd[1]);
	pg->pid = pid;
	return 0;
}

void pager_finish(struct pager *pg)
{
	struct timespec tenth = {0, 100 * 1000000L};
	int status;
	pid_t got;

	if (!pg->pid)
		return;
	fflush(stdout);
	/* The pager sees the end of its input only once no copy of the pipe is open. */
	dup2(pg->saved_stdout, STDOUT_FILENO);
	close(pg->saved_stdout);
	/*
	 * A ^C in the pager reaches kiln too (one process group): kiln must
	 * not end under a pager still reading the terminal, so while it runs
	 * each signal is only recorded (signals.c), and forgotten.
	 */
	for (;;) {
		signals_stop_quietly();
		got = waitpid(pg->pid, &status, WNOHANG);
		if (got == pg->pid || (got < 0 && errno != EINTR))
			break;
		signals_reset();
		nanosleep(&tenth, NULL);
	}
	signals_wind_down(false);
	signals_reset();
	pg->pid = 0;
}
