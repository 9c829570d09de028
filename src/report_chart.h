/*
 * report_chart.h - the inline SVG charts of kiln report's HTML page: a
 * plot area with both axes, labelled ticks (dates a person reads, money,
 * percentages or category names), an axis title with its unit on each, and
 * a legend. Only drawing: what is drawn is report_render.c's.
 */
#ifndef KILN_REPORT_CHART_H
#define KILN_REPORT_CHART_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

/* What an axis's values are, so its ticks are placed and labelled for a reader. */
enum report_axis {
	REPORT_AXIS_TIME,    /* seconds since the epoch: ticks on whole hours or days, UTC */
	REPORT_AXIS_USD,     /* "$1,200" */
	REPORT_AXIS_PERCENT, /* "50%" */
	REPORT_AXIS_CATEGORY /* one tick a category, at its middle; values are indexes */
};

/* How a legend entry's swatch looks: as the series it names is drawn. */
enum report_swatch {
	REPORT_SWATCH_LINE,
	REPORT_SWATCH_DASHED,
	REPORT_SWATCH_DOTTED,
	REPORT_SWATCH_BOX,
};

struct report_chart {
	struct strbuf plot;   /* the series, in the plot area's coordinates */
	struct strbuf legend; /* the legend's entries, laid out in rows */
	const char *id, *label;
	enum report_axis xkind, ykind;
	double x0, x1, y0, y1;	       /* the data's ranges */
	const char *x_title, *y_title; /* with their units */
	const char *const *categories; /* REPORT_AXIS_CATEGORY on y: their names */
	size_t ncategories;
	double legend_x, legend_rows; /* where the next entry goes */
};

/*
 * Start a chart: id and label (for a screen reader) name it; the ranges
 * are widened to whole ticks (y from 0). Draw with report_chart_x and _y,
 * add legend entries, then report_chart_finish writes it to sb.
 */
void report_chart_init(struct report_chart *c, const char *id, const char *label,
		       enum report_axis xkind, double x0, double x1, const char *x_title,
		       enum report_axis ykind, double y0, double y1, const char *y_title);
/* y as categories (ykind REPORT_AXIS_CATEGORY): names[i] is drawn at row i. Borrowed. */
void report_chart_categories(struct report_chart *c, const char *const *names, size_t n);
/* A data value's place in the SVG's units. */
double report_chart_x(const struct report_chart *c, double v);
double report_chart_y(const struct report_chart *c, double v);
/* The plot area's buffer, to draw series into. */
struct strbuf *report_chart_plot(struct report_chart *c);
/* A legend entry; text is escaped. */
void report_chart_legend(struct report_chart *c, const char *color, enum report_swatch swatch,
			 const char *text);
/* Write the whole <svg> (axes, ticks, titles, series, legend) to sb, and release c. */
void report_chart_finish(struct report_chart *c, struct strbuf *sb);

/* "Jan 1 06:00" (UTC), as the time axis labels a tick; buf of 32 bytes. */
const char *report_chart_time_label(int64_t t, int64_t step, char buf[32]);

#endif
