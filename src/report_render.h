/*
 * report_render.h - `kiln report`'s document (report.h) as text, CSV
 * (RFC 4180) and one self-contained HTML page.
 */
#ifndef KILN_REPORT_RENDER_H
#define KILN_REPORT_RENDER_H

#include <stdio.h>

#include <jansson.h>

void report_render_text(FILE *out, const json_t *doc);
void report_render_csv(FILE *out, const json_t *doc);
/* A table and inline SVG charts; no script, font or anything fetched. */
void report_render_html(FILE *out, const json_t *doc);

#endif
