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
};

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
