/*
 * main_signal.h - the process's signal thread, owned by main.c: the only
 * place besides main that ends the process. See main_signal.c.
 */
#ifndef KILN_MAIN_SIGNAL_H
#define KILN_MAIN_SIGNAL_H

/*
 * Block SIGINT, SIGTERM, SIGHUP and SIGQUIT and start the thread that
 * waits for them: during an apply the first one sets the interrupt flag
 * (lock_set_interrupt_flag); otherwise, or at the second, it releases the
 * held locks and exits with 128 + the signal. Registered with
 * lock_set_signal_starter, so it starts with the first lock.
 */
void main_signal_start(void);

#endif
