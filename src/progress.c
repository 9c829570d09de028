/*
 * progress.c - see progress.h. A display, like plan_render.c: it writes to
 * standard output and owns nothing of the run.
 */
#include "progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdint.h>
#include <unistd.h>

#include "jsonw.h"
#include "timefmt.h"

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_json_event(const char *type, const char *level, json_t *hook, const char *fmt, ...)
{
	char ts[40];
	struct timespec now;
	struct tm tm;
	va_list ap;
	char *msg;
	json_t *ev;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + 19, sizeof(ts) - 19, ".%06ldZ", now.tv_nsec / 1000);
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	ev = json_pack("{s:s, s:s, s:s, s:s, s:s}", "@level", level, "@message", msg, "@module",
		       "kiln", "@timestamp", ts, "type", type);
	if (hook)
		json_object_set_new(ev, "hook", hook);
	jsonw_dumpf(ev, stdout, JSON_COMPACT | JSON_REAL_PRECISION(12));
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(ev);
	free(msg);
}

static void erase_live(struct progress *p)
{
	for (; p->drawn > 0; p->drawn--)
		fputs("\033[1A\033[2K", stdout);
}

/* "12.4s", "3m05s": how long, for the live lines. */
static void say_elapsed(char *buf, size_t n, double s)
{
	if (s < 60)
		snprintf(buf, n, "%.1fs", s);
	else if (s < 3600)
		snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, n, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static void draw_live(struct progress *p)
{
	const char *addr;
	json_t *v;
	double now = mono();
	int shown = 0, total = (int)json_object_size(p->inflight);
	char took[32];

	say_elapsed(took, sizeof(took), now - p->started);
	printf("  [%zu of %zu operations done, %s elapsed]\n", p->finished, p->total, took);
	p->drawn++;

	json_object_foreach(p->inflight, addr, v)
	{
		if (shown == 8) {
			printf("  … and %d more in flight\n", total - shown);
			p->drawn++;
			break;
		}
		printf("  %s %s… %.1fs\n", json_string_value(json_object_get(v, "op")), addr,
		       now - json_real_value(json_object_get(v, "t")));
		shown++;
		p->drawn++;
	}
	fflush(stdout);
}

static void *ticker(void *arg)
{
	struct progress *p = arg;
	struct timespec ts = {0, 250 * 1000000L};

	for (;;) {
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&p->mu);
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		erase_live(p);
		draw_live(p);
		pthread_mutex_unlock(&p->mu);
	}
}

static const char *past(const char *op)
{
	if (strcmp(op, "replace: delete old") == 0)
		return "old object deleted, for the replacement";
	if (strcmp(op, "read secret") == 0)
		return "secret read back into the state";
	if (strcmp(op, "create") == 0)
		return "created";
	if (strcmp(op, "update") == 0)
		return "updated";
	if (strcmp(op, "replace") == 0)
		return "replaced";
	if (strcmp(op, "adopt") == 0)
		return "adopted";
	if (strcmp(op, "release") == 0)
		return "released from state (retained)";
	return "deleted";
}

static const char *const event_types[] = {
    [APPLY_START] = "apply_start",     [APPLY_PENDING] = "apply_progress",
    [APPLY_DONE] = "apply_complete",   [APPLY_FAILED] = "apply_errored",
    [APPLY_SKIPPED] = "apply_skipped",
};

void progress_event(void *arg, const struct apply_event *ev)
{
	struct progress *p = arg;
	const char *name = strchr(ev->address, '.');

	pthread_mutex_lock(&p->mu);
	if (p->json) {
		json_t *hook =
		    json_pack("{s:{s:s, s:s, s:s}, s:s, s:f}", "resource", "addr", ev->address,
			      "resource_type", "", "resource_name", name ? name + 1 : "", "action",
			      ev->op, "elapsed_seconds", ev->elapsed);
		json_object_set_new(json_object_get(hook, "resource"), "resource_type",
				    json_stringn(ev->address, name ? (size_t)(name - ev->address)
								   : strlen(ev->address)));
		if (ev->id)
			json_object_set_new(hook, "id_value", json_string(ev->id));
		if (ev->error)
			json_object_set_new(hook, "error", json_string(ev->error));
		progress_json_event(event_types[ev->kind],
				    ev->kind == APPLY_FAILED ? "error" : "info", hook, "%s: %s%s%s",
				    ev->address, ev->op, ev->error ? ": " : "",
				    ev->error ? ev->error : "");
		pthread_mutex_unlock(&p->mu);
		return;
	}
	if (ev->total)
		p->total = ev->total;
	if (ev->kind == APPLY_DONE || ev->kind == APPLY_FAILED || ev->kind == APPLY_SKIPPED)
		p->finished++;
	if (p->tty)
		erase_live(p);
	switch (ev->kind) {
	case APPLY_START:
		if (p->tty)
			json_object_set_new(p->inflight, ev->address,
					    json_pack("{s:s, s:f}", "op", ev->op, "t", mono()));
		else
			printf("%s: %s…\n", ev->address, ev->op);
		break;
	case APPLY_PENDING:
		if (!p->tty)
			printf("%s: %s: waiting for %s to be %s\n", ev->address, ev->op,
			       ev->id ? ev->id : "it", ev->waiting_for);
		break;
	case APPLY_DONE:
		json_object_del(p->inflight, ev->address);
		printf("%s: %s%s%s%s (%.1fs)\n", ev->address, past(ev->op), ev->id ? " [id " : "",
		       ev->id ? ev->id : "", ev->id ? "]" : "", ev->elapsed);
		break;
	case APPLY_FAILED:
		json_object_del(p->inflight, ev->address);
		printf("%s: %s FAILED: %s\n", ev->address, ev->op, ev->error);
		break;
	case APPLY_SKIPPED:
		json_object_del(p->inflight, ev->address);
		printf("%s: %s skipped: %s\n", ev->address, ev->op, ev->error);
		break;
	}
	if (p->tty)
		draw_live(p);
	fflush(stdout);
	pthread_mutex_unlock(&p->mu);
}

void progress_init(struct progress *p)
{
	pthread_mutex_init(&p->mu, NULL);
	p->inflight = json_object();
}

void progress_release(struct progress *p)
{
	json_decref(p->inflight);
	pthread_mutex_destroy(&p->mu);
}

void progress_start(void *arg)
{
	struct progress *p = arg;

	if (!p->json)
		printf("\n");
	p->started = mono();
	p->finished = 0;
	if (p->tty && pthread_create(&p->ticker, NULL, ticker, p) == 0)
		p->ticking = true;
}

void progress_stop(void *arg)
{
	struct progress *p = arg;

	if (!p->ticking)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	erase_live(p);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->ticker, NULL);
	p->ticking = false;
}

void progress_health_init(struct progress_health *h, bool json)
{
	const char *term = getenv("TERM");

	memset(h, 0, sizeof(*h));
	h->tty = !json && isatty(STDOUT_FILENO) && !(term && strcmp(term, "dumb") == 0);
}

void progress_health_tick(void *arg, size_t reported, size_t nodes, int64_t left_s)
{
	struct progress_health *h = arg;
	char *left;

	if (!h->tty)
		return;
	left = timefmt_duration_format(left_s);
	printf("\r\033[KHealth: %zu of %zu node%s reported, %s left", reported, nodes,
	       nodes == 1 ? "" : "s", left);
	fflush(stdout);
	h->drawn = true;
	free(left);
}

void progress_health_end(struct progress_health *h)
{
	if (h->drawn)
		printf("\r\033[K");
	fflush(stdout);
	h->drawn = false;
}
