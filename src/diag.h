/*
 * diag.h - diagnostics about a spec: FILE:LINE:COL, severity, message, hint.
 *
 * The loader and the validator collect every problem they find here instead of
 * stopping at the first, so one run of `kiln validate` shows them all.
 */
#ifndef KILN_DIAG_H
#define KILN_DIAG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "util.h"

enum diag_severity {
	DIAG_ERROR,
	DIAG_WARNING,
};

struct diag {
	enum diag_severity severity;
	char *file;
	int line; /* 1-based; 0 when the problem has no position (a file-level error) */
	int col;  /* 1-based */
	char *message;
	char *hint; /* NULL, or what to do about it */
	size_t seq; /* insertion order, keeps sorting stable */
};

struct diags {
	struct diag *v;
	size_t n;
	size_t cap;
	size_t errors;
	size_t warnings;
};

/* Past this many diagnostics in one file, further ones are dropped and counted. */
#define DIAG_MAX_PER_RUN 200

/* Returns the new diagnostic, or NULL past the limit (diag_hint accepts NULL). */
struct diag *diags_add(struct diags *d, enum diag_severity sev, const char *file, int line, int col,
		       const char *fmt, ...) KILN_PRINTF(6, 7);
void diag_hint(struct diag *dg, const char *fmt, ...) KILN_PRINTF(2, 3);

/* Sort by file, line and column, keeping insertion order for ties. */
void diags_sort(struct diags *d);

/* FILE:LINE:COL: error: MESSAGE, then "  hint: ..." when there is one. */
void diags_print(const struct diags *d, FILE *out, bool color);

/* A JSON array of {file, line, column, severity, message, hint}. */
json_t *diags_to_json(const struct diags *d);

void diags_release(struct diags *d);

#endif
