/*
 * signals.c - SIGINT, SIGTERM, SIGHUP and SIGQUIT, owned here; see
 * signals.h. The thread waits with sigwait, so nothing here runs in a
 * signal handler: it may log and take mutexes. Ending the process is
 * main's (the exit it installs); the locks that exit releases are lock.c's.
 */
#include "signals.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

static void (*end_process)(int sig);
static pthread_once_t started = PTHREAD_ONCE_INIT;
/* The signal that asked the run to wind down, 0 when none. */
static atomic_int caught;
/* A run winds down on the next signal (the signal thread takes it: once). */
static atomic_bool winding;
/* ... and says nothing of it: the command says what it does (kiln status --watch stops). */
static atomic_bool quiet;

/* The signals that end a run. */
static void signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

static const char *signal_name(int sig)
{
	return sigabbrev_np(sig) ? sigabbrev_np(sig) : "?";
}

static void *signal_main(void *arg)
{
	sigset_t set;
	int sig = SIGTERM;

	(void)arg;
	signal_set(&set);
	for (;;) {
		char *msg;

		if (sigwait(&set, &sig) != 0)
			return NULL;
		if (!atomic_exchange(&winding, false))
			break;
		atomic_store(&caught, sig);
		if (atomic_load(&quiet))
			continue;
		msg = xasprintf("kiln: SIG%s: starting nothing new; the calls in flight finish "
				"and are recorded (interrupt again to stop at once)",
				signal_name(sig));
		log_report(LOG_WARN, msg, NULL);
		free(msg);
	}
	end_process(sig);
	return NULL;
}

static void start_thread(void)
{
	sigset_t set;
	pthread_t t;

	if (!end_process)
		return;
	signal_set(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, signal_main, NULL) == 0)
		pthread_detach(t);
}

void signals_install(void (*end)(int sig))
{
	signal(SIGPIPE, SIG_IGN);
	end_process = end;
}

void signals_start(void)
{
	pthread_once(&started, start_thread);
}

void signals_wind_down(bool on)
{
	if (on)
		signals_start();
	atomic_store(&quiet, false);
	atomic_store(&winding, on);
}

void signals_stop_quietly(void)
{
	signals_start();
	atomic_store(&quiet, true);
	atomic_store(&winding, true);
}

int signals_interrupted(void)
{
	return atomic_load(&caught);
}

void signals_reset(void)
{
	atomic_store(&caught, 0);
}

void signals_for_exec(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}
