/*
 * report_plots.h - what kiln report's HTML page charts, from its document
 * (report.h): the burn against the budget, the cumulative cost, the cost
 * split by kind, and GPU utilization per group over time.
 */
#ifndef KILN_REPORT_PLOTS_H
#define KILN_REPORT_PLOTS_H

#include <jansson.h>

#include "strbuf.h"

/* Eight colours that stay apart for the common colour blindnesses (Okabe and Ito). */
extern const char *const report_palette[8];

/* The colour of group i (the groups' order in the document). */
const char *report_plots_color(size_t i);

/* Each chart, with its heading, as inline SVG appended to sb. */
void report_plots_write(struct strbuf *sb, const json_t *doc);

#endif
