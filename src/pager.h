/*
 * pager.h - a long text on a terminal goes through a pager, as git does:
 * KILN_PAGER, else PAGER, else `less`, with LESS=FRX when LESS is unset (a
 * text shorter than the screen is printed and less quits; colours pass; the
 * screen is not cleared). Never when standard output is not a terminal, in
 * automation (CI=true, KILN_IN_AUTOMATION), for JSON, or with --no-pager;
 * a pager of "" or "cat" is none.
 */
#ifndef KILN_PAGER_H
#define KILN_PAGER_H

#include <stdbool.h>
#include <sys/types.h>

struct pager {
	pid_t pid; /* 0: none running */
	int saved_stdout;
};

/*
 * The pager command for this run, or NULL for none: off (--no-pager, JSON),
 * stdout not a terminal, automation, or a pager of "" or "cat".
 */
const char *pager_command(bool off);
/*
 * Start cmd (from pager_command) with stdout going to it; the signals kiln
 * blocks are unblocked in it (signals.h). -1 when it cannot be started
 * (stdout is left as it was and the text goes there).
 */
int pager_start(struct pager *pg, const char *cmd);
/* Flush, close the pipe, and wait for the pager to end; stdout is the terminal again. */
void pager_finish(struct pager *pg);

#endif
