/*
 * signals.h - the one owner of SIGINT, SIGTERM, SIGHUP and SIGQUIT: a
 * thread that waits for them, and the one record of a signal that asked a
 * run to wind down. Every executor, wait and loop that stops early on an
 * interrupt reads it here (signals_interrupted); no command keeps a flag.
 *
 * Until signals_start (lock.c calls it with the first lock, the operation
 * with the first executor) a signal ends kiln as usual. From then on,
 * while a run winds down on a signal (signals_wind_down), the first one is
 * recorded instead: the run starts nothing new, records what finished,
 * commits and unlocks. Otherwise, or at the second, the exit main gave
 * signals_install ends the process (releasing the held locks first).
 * Library code never exits: without signals_install (unit tests) signals
 * keep their default.
 */
#ifndef KILN_SIGNALS_H
#define KILN_SIGNALS_H

#include <stdatomic.h>
#include <stdbool.h>

/*
 * For main: SIGPIPE ignored from now on (a closed pipe must not kill a run
 * that holds a lock: writes fail with EPIPE, and every exit path unlocks),
 * and end(sig), which must not return, called by the signal thread for a
 * signal that ends the process.
 */
void signals_install(void (*end)(int sig));
/* Once: block the signals and start the thread that waits for them (after signals_install). */
void signals_start(void);
/* While on, the first signal is recorded (and turns this off) instead of ending the process. */
void signals_wind_down(bool on);
/*
 * As signals_wind_down(true) for a loop that runs until interrupted (kiln
 * status --watch): the first signal is recorded without a word, the loop
 * reads it and ends; a second ends the process.
 */
void signals_stop_quietly(void);
/* The signal recorded since the last signals_reset (or the start), 0 when none. */
int signals_interrupted(void);
/*
 * In a child about to exec (ssh): the signals the thread waits for
 * unblocked, as a blocked mask survives exec and the child must see ^C
 * and SIGTERM. Async-signal-safe.
 */
void signals_for_exec(void);
/* Forget a recorded signal: a new run (kiln reap's next workspace) starts afresh. */
void signals_reset(void);

#endif
