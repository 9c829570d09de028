/*
 * diag.c - see diag.h.
 */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

struct diag *diags_add(struct diags *d, enum diag_severity sev, const char *file, int line, int col,
		       const char *fmt, ...)
{
	struct diag *dg;
	va_list ap;

	if (sev == DIAG_ERROR)
		d->errors++;
	else
		d->warnings++;
	/*
	 * A hostile file can produce a diagnostic per line; keep the first ones
	 * (the useful ones) and say how many more there were.
	 */
	if (d->n == DIAG_MAX_PER_RUN) {
		dg = ARRAY_PUSH(d->v, d->n, d->cap);
		memset(dg, 0, sizeof(*dg));
		dg->severity = DIAG_ERROR;
		dg->file = xstrdup(file);
		dg->line = line;
		dg->col = col;
		dg->message = xstrdup("too many problems; the rest are not shown");
		dg->seq = d->n;
	}
	if (d->n > DIAG_MAX_PER_RUN)
		return NULL;
	dg = ARRAY_PUSH(d->v, d->n, d->cap);
	memset(dg, 0, sizeof(*dg));
	dg->severity = sev;
	dg->file = xstrdup(file);
	dg->line = line;
	dg->col = col;
	va_start(ap, fmt);
	dg->message = xvasprintf(fmt, ap);
	va_end(ap);
	dg->seq = d->n;
	return dg;
}

void diag_hint(struct diag *dg, const char *fmt, ...)
{
	va_list ap;

	if (!dg)
		return;
	free(dg->hint);
	va_start(ap, fmt);
	dg->hint = xvasprintf(fmt, ap);
	va_end(ap);
}

static int diag_cmp(const void *pa, const void *pb)
{
	const struct diag *a = pa, *b = pb;
	int c = strcmp(a->file, b->file);

	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->col != b->col)
		return a->col < b->col ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void diags_sort(struct diags *d)
{
	/* The "too many" marker stays last whatever its position. */
	size_t n = d->n > DIAG_MAX_PER_RUN ? DIAG_MAX_PER_RUN : d->n;

	if (n > 1)
		qsort(d->v, n, sizeof(*d->v), diag_cmp);
}

void diags_print(const struct diags *d, FILE *out, bool color)
{
	const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct diag *dg = &d->v[i];
		bool err = dg->severity == DIAG_ERROR;
		const char *sevc = !color ? "" : err ? "\033[1;31m" : "\033[1;33m";

		if (dg->line > 0)
			fprintf(out, "%s%s:%d:%d:%s %s%s:%s %s\n", bold, dg->file, dg->line,
				dg->col, reset, sevc, err ? "error" : "warning", reset,
				dg->message);
		else
			fprintf(out, "%s%s:%s %s%s:%s %s\n", bold, dg->file, reset, sevc,
				err ? "error" : "warning", reset, dg->message);
		if (dg->hint)
			fprintf(out, "  %shint:%s %s\n", color ? "\033[36m" : "", reset, dg->hint);
	}
}

json_t *diags_to_json(const struct diags *d)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct diag *dg = &d->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "file", json_string(dg->file));
		json_object_set_new(o, "line", json_integer(dg->line));
		json_object_set_new(o, "column", json_integer(dg->col));
		json_object_set_new(o, "severity",
				    json_string(dg->severity == DIAG_ERROR ? "error" : "warning"));
		json_object_set_new(o, "message", json_string(dg->message));
		json_object_set_new(o, "hint", dg->hint ? json_string(dg->hint) : json_null());
		json_array_append_new(arr, o);
	}
	return arr;
}

void diags_release(struct diags *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].message);
		free(d->v[i].hint);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}
