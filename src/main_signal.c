/*
 * main_signal.c - the signal thread: SIGINT/SIGTERM become "wind down" during
 * an apply, and "release the locks, then exit" otherwise. Owned by main.c
 * (and, like it, left out of the library the unit tests link): library code
 * never exits the process. The locks it releases and the critical section
 * it waits for are lock.c's.
 */
#include "main_signal.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"
#include "log.h"
#include "util.h"

/* The signals that end a run: each releases the held locks first. */
static void exit_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

static void *signal_main(void *arg)
{
	sigset_t set;
	int sig = SIGTERM, released;

	(void)arg;
	exit_signals(&set);
	for (;;) {
		atomic_int *flag;

		if (sigwait(&set, &sig) != 0)
			return NULL;
		flag = lock_take_interrupt_flag();
		if (!flag)
			break;
		atomic_store(flag, sig);
		{
			char *msg = xasprintf("kiln: SIG%s: starting nothing new; the calls in "
					      "flight finish and are recorded (interrupt again to "
					      "stop at once)",
					      sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");

			log_report(LOG_WARN, msg, NULL);
			free(msg);
		}
	}
	released = lock_release_all_for_exit();
	fprintf(stderr, "kiln: interrupted by SIG%s%s\n",
		sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
		released ? "; the workspace lock was released" : "");
	_exit(128 + sig);
	return NULL;
}

void main_signal_start(void)
{
	sigset_t set;
	pthread_t t;

	exit_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, signal_main, NULL) == 0)
		pthread_detach(t);
}
