/*
 * report_chart.c - the SVG charts of kiln report's page; see
 * report_chart.h. Every chart gets the same furniture, so no chart can
 * ship without axes, ticks, titles or a legend: the series are drawn into
 * a buffer of their own and framed when the chart is finished.
 */
#include "report_chart.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost.h"
#include "util.h"

#define W 720.0	  /* the SVG's width, in its own units */
#define MR 40.0	  /* right margin: room for the last tick's label */
#define MT 12.0	  /* top margin */
#define PH 200.0  /* the plot area's height */
#define AXIS 52.0 /* under the plot: tick labels and the x title */
#define ROW 18.0  /* a legend row */
#define CHAR 6.2  /* the width of a character at font-size 11, roughly */
#define TICKS 5	  /* about this many ticks on a numeric axis */

static double left_margin(const struct report_chart *c)
{
	size_t i, longest = 0;

	if (c->ykind != REPORT_AXIS_CATEGORY)
		return 72.0;
	for (i = 0; i < c->ncategories; i++)
		longest = strlen(c->categories[i]) > longest ? strlen(c->categories[i]) : longest;
	longest = longest > 24 ? 24 : longest;
	return 40.0 + CHAR * (double)(longest < 5 ? 5 : longest);
}

/* A step of 1, 2 or 5 times a power of ten that cuts span into about TICKS parts. */
static double nice_step(double span)
{
	double raw = span / TICKS, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return mag * (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10);
}

/* The time axis's step: whole minutes, hours or days, at most 6 ticks. */
static int64_t time_step(double span)
{
	static const int64_t steps[] = {
	    300,   600,	  900,	     1800,	3600,	    7200,	10800,	    21600,
	    43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 365 * 86400};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(steps); i++)
		if (span / (double)steps[i] <= 6)
			return steps[i];
	return (int64_t)ceil(span / 6 / (365.0 * 86400)) * 365 * 86400;
}

const char *report_chart_time_label(int64_t t, int64_t step, char buf[32])
{
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	if (step >= 86400)
		snprintf(buf, 32, "%s %d", months[tm.tm_mon % 12], tm.tm_mday);
	else
		snprintf(buf, 32, "%s %d %02d:%02d", months[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour,
			 tm.tm_min);
	return buf;
}

void report_chart_init(struct report_chart *c, const char *id, const char *label,
		       enum report_axis xkind, double x0, double x1, const char *x_title,
		       enum report_axis ykind, double y0, double y1, const char *y_title)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->label = label;
	c->xkind = xkind;
	c->ykind = ykind;
	c->x_title = x_title;
	c->y_title = y_title;
	if (!(x1 > x0))
		x1 = x0 + (xkind == REPORT_AXIS_TIME ? 3600 : 1);
	if (xkind == REPORT_AXIS_USD || xkind == REPORT_AXIS_PERCENT) {
		double s = nice_step(x1 - x0);

		x0 = 0;
		x1 = ceil(x1 / s) * s;
	}
	if (ykind == REPORT_AXIS_USD) {
		double s;

		y0 = 0;
		y1 = y1 > 0 ? y1 : 1;
		s = nice_step(y1);
		y1 = ceil(y1 / s - 1e-9) * s;
	} else if (ykind == REPORT_AXIS_PERCENT) {
		y0 = 0;
		y1 = 100;
	}
	c->x0 = x0;
	c->x1 = x1;
	c->y0 = y0;
	c->y1 = y1 > y0 ? y1 : y0 + 1;
}

void report_chart_categories(struct report_chart *c, const char *const *names, size_t n)
{
	c->categories = names;
	c->ncategories = n;
	c->y0 = 0;
	c->y1 = n ? (double)n : 1;
}

double report_chart_x(const struct report_chart *c, double v)
{
	double l = left_margin(c);

	return l + (W - MR - l) * (v - c->x0) / (c->x1 - c->x0);
}

double report_chart_y(const struct report_chart *c, double v)
{
	/* Categories run down from the top, as a table's rows do. */
	if (c->ykind == REPORT_AXIS_CATEGORY)
		return MT + PH * (v - c->y0) / (c->y1 - c->y0);
	return MT + PH - PH * (v - c->y0) / (c->y1 - c->y0);
}

struct strbuf *report_chart_plot(struct report_chart *c)
{
	return &c->plot;
}

void report_chart_legend(struct report_chart *c, const char *color, enum report_swatch swatch,
			 const char *text)
{
	double l = left_margin(c), wide = 28 + CHAR * (double)strlen(text) + 16, x, y;

	if (c->legend_x > 0 && l + c->legend_x + wide > W - MR) {
		c->legend_x = 0;
		c->legend_rows++;
	}
	x = l + c->legend_x;
	y = MT + PH + AXIS + ROW * c->legend_rows + 9;
	sb_adds(&c->legend, "<g class=\"legend-entry\">");
	if (swatch == REPORT_SWATCH_BOX)
		sb_addf(&c->legend,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"20\" height=\"10\" fill=\"%s\"/>", x,
			y - 5, color);
	else
		sb_addf(&c->legend,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			"stroke-width=\"2.5\"%s/>",
			x, y, x + 20, y, color,
			swatch == REPORT_SWATCH_DASHED	 ? " stroke-dasharray=\"6 3\""
			: swatch == REPORT_SWATCH_DOTTED ? " stroke-dasharray=\"2 3\""
							 : "");
	sb_addf(&c->legend, "<text x=\"%.1f\" y=\"%.1f\">", x + 26, y + 4);
	sb_add_xml(&c->legend, text);
	sb_adds(&c->legend, "</text></g>");
	c->legend_x += wide;
}

static void value_label(enum report_axis kind, double v, char buf[48])
{
	char *m;

	if (kind == REPORT_AXIS_USD) {
		/* Whole dollars unless the axis is about cents. */
		m = fabs(v) >= 10 || v == 0 ? xasprintf("$%.0f", v) : cost_money(v);
		if (fabs(v) >= 1000) {
			free(m);
			m = cost_money(v);
			/* "$1,200.00" reads as "$1,200" on an axis. */
			if (strlen(m) > 3 && strcmp(m + strlen(m) - 3, ".00") == 0)
				m[strlen(m) - 3] = '\0';
		}
		snprintf(buf, 48, "%s", m);
		free(m);
	} else if (kind == REPORT_AXIS_PERCENT) {
		snprintf(buf, 48, "%.0f%%", v);
	} else {
		snprintf(buf, 48, "%g", v);
	}
}

/* A tick of the x axis at x, with its label, and a grid line up the plot unless on the y axis. */
static void tick_x(struct strbuf *sb, double x, bool grid, const char *label)
{
	double base = MT + PH;

	sb_addf(sb, "<g class=\"tick\">");
	if (grid)
		sb_addf(sb,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>",
			x, MT, x, base);
	sb_addf(sb,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
		"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text></g>",
		x, base, x, base + 4, x, base + 16, label);
}

/* The x axis: its line, ticks with labels, and its title. */
static void axis_x(const struct report_chart *c, struct strbuf *sb)
{
	double base = MT + PH, l = left_margin(c), v;
	char buf[48];

	sb_addf(sb,
		"<g class=\"axis axis-x\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"#555\"/>",
		l, base, W - MR, base);
	if (c->xkind == REPORT_AXIS_TIME) {
		int64_t step = time_step(c->x1 - c->x0), t;

		t = ((int64_t)ceil(c->x0 / (double)step)) * step;
		for (; (double)t <= c->x1; t += step) {
			double x = report_chart_x(c, (double)t);

			tick_x(sb, x, x > l + 0.5, report_chart_time_label(t, step, (char[32]){0}));
		}
	} else {
		double s = nice_step(c->x1 - c->x0);

		for (v = c->x0; v <= c->x1 + s / 2; v += s) {
			double x = report_chart_x(c, v);

			value_label(c->xkind, v, buf);
			tick_x(sb, x, x > l + 0.5, buf);
		}
	}
	sb_addf(sb, "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		(l + W - MR) / 2, base + 36);
	sb_add_xml(sb, c->x_title);
	sb_adds(sb, "</text></g>");
}

/* The y axis: its line, ticks with labels (or category names), and its title, turned. */
static void axis_y(const struct report_chart *c, struct strbuf *sb)
{
	double l = left_margin(c), v;
	char buf[48];
	size_t i;

	sb_addf(sb,
		"<g class=\"axis axis-y\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"#555\"/>",
		l, MT, l, MT + PH);
	if (c->ykind == REPORT_AXIS_CATEGORY) {
		for (i = 0; i < c->ncategories; i++) {
			double y = report_chart_y(c, (double)i + 0.5);

			sb_addf(sb,
				"<g class=\"tick\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\" stroke=\"#555\"/><text x=\"%.1f\" y=\"%.1f\" "
				"text-anchor=\"end\"><title>",
				l - 4, y, l, y, l - 6, y + 4);
			sb_add_xml(sb, c->categories[i]);
			sb_adds(sb, "</title>");
			if (strlen(c->categories[i]) > 24) {
				char *cut = xstrndup(c->categories[i], 23);

				sb_add_xml(sb, cut);
				sb_adds(sb, "\xe2\x80\xa6");
				free(cut);
			} else {
				sb_add_xml(sb, c->categories[i]);
			}
			sb_adds(sb, "</text></g>");
		}
	} else {
		double s = c->ykind == REPORT_AXIS_PERCENT ? 20 : nice_step(c->y1 - c->y0);

		for (v = c->y0; v <= c->y1 + s / 2; v += s) {
			double y = report_chart_y(c, v);

			value_label(c->ykind, v, buf);
			sb_adds(sb, "<g class=\"tick\">");
			if (v > c->y0)
				sb_addf(sb,
					"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
					"stroke=\"#eee\"/>",
					l, y, W - MR, y);
			sb_addf(sb,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#555\"/><text x=\"%.1f\" y=\"%.1f\" "
				"text-anchor=\"end\">%s</text></g>",
				l - 4, y, l, y, l - 6, y + 4, buf);
		}
	}
	sb_addf(sb,
		"<text class=\"axis-title\" transform=\"translate(12 %.1f) rotate(-90)\" "
		"text-anchor=\"middle\">",
		MT + PH / 2);
	sb_add_xml(sb, c->y_title);
	sb_adds(sb, "</text></g>");
}

void report_chart_finish(struct report_chart *c, struct strbuf *sb)
{
	double h = MT + PH + AXIS + ROW * (c->legend_rows + 1) + 4;

	sb_addf(sb,
		"<svg id=\"%s\" class=\"chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"font-size=\"11\" aria-label=\"",
		c->id, W, h);
	sb_add_xml(sb, c->label);
	sb_adds(sb, "\"><title>");
	sb_add_xml(sb, c->label);
	sb_adds(sb, "</title>");
	/* Grid lines first, so the series are drawn over them. */
	axis_y(c, sb);
	axis_x(c, sb);
	sb_addf(sb, "<g class=\"series\">%s</g>", c->plot.buf ? c->plot.buf : "");
	sb_addf(sb, "<g class=\"legend\">%s</g></svg>\n", c->legend.buf ? c->legend.buf : "");
	sb_release(&c->plot);
	sb_release(&c->legend);
}
