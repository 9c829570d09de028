/*
 * progress.h - what an apply shows while it runs, on standard output: JSON
 * event lines (--json), live lines redrawn by a ticker thread on a
 * terminal, or a line per start and finish. The executor's event callback
 * and the hooks operation_apply calls around it (operation.h).
 */
#ifndef KILN_PROGRESS_H
#define KILN_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "apply.h"
#include "util.h"

struct progress {
	bool json;
	bool tty;
	pthread_mutex_t mu;
	json_t *inflight; /* address -> {"op", "t"} */
	int drawn;
	bool stop;
	pthread_t ticker;
	bool ticking;
	size_t total;	 /* the run's operations (the events say) */
	size_t finished; /* done, failed or skipped so far */
	double started;	 /* when the executor started (monotonic seconds) */
};

/*
 * The health wait's live line, on a terminal only: one line redrawn at
 * every tick ("Health: 3 of 16 nodes reported, 19m40s left"); a log (not a
 * terminal) and json get what the wait found, as before, and no ticks.
 */
struct progress_health {
	bool tty;
	bool drawn;
};

void progress_health_init(struct progress_health *h, bool json);
/* A health_tick's fn (health.h), arg a struct progress_health. */
void progress_health_tick(void *arg, size_t reported, size_t nodes, int64_t left_s);
/* The wait is over: the live line erased, so what it found is printed in its place. */
void progress_health_end(struct progress_health *h);

void progress_init(struct progress *p);
void progress_release(struct progress *p);
/* Before the executor: a blank line, and on a terminal the ticker that redraws the live lines. */
void progress_start(void *arg);
/* After it: the ticker stopped and its lines erased. */
void progress_stop(void *arg);
/* The executor's event callback (apply_options.event). */
void progress_event(void *arg, const struct apply_event *ev);

/*
 * The version of the event stream's shape (types, fields), which the first
 * event carries as "ui", as Terraform's machine-readable UI does: the minor
 * number grows when a type or field is added, the major when one changes.
 */
#define KILN_UI_VERSION "1.1"

/*
 * One JSON event line on standard output ({"@level", "@message",
 * "@module", "@timestamp", "type"}, with hook, which it takes, when not NULL).
 */
void progress_json_event(const char *type, const char *level, json_t *hook, const char *fmt, ...)
    KILN_PRINTF(4, 5);

#endif
