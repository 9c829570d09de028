/*
 * report_render.c - `kiln report`'s document (report.c) as text, CSV and
 * one self-contained HTML page: a table and inline SVG charts, no script,
 * font or anything fetched, readable on a phone. The figures are the same
 * strings in every format, so the page's totals equal the text's.
 */
#include "report_render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "str.h"
#include "strbuf.h"
#include "timefmt.h"
#include "util.h"

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* A figure as shown: "12.50", or "unknown"/"-" when null. Caller frees. */
static char *figure(const json_t *o, const char *k, const char *null_text)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? xasprintf("%.2f", json_number_value(v)) : xstrdup(null_text);
}

static char *money(const json_t *o, const char *k, const char *null_text)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? cost_money(json_number_value(v)) : xstrdup(null_text);
}

/* The cells of one row (lifetime, group or total), in the columns' order. */
enum { C_HOURS, C_GPUH, C_COST, C_USEFUL, C_PER, C_N };
static void cells(const json_t *o, char *c[C_N])
{
	c[C_HOURS] = figure(o, "hours", "-");
	c[C_GPUH] = figure(o, "gpu_hours", "unknown");
	c[C_COST] = money(o, "cost", "unknown");
	c[C_USEFUL] = figure(o, "useful_gpu_hours", "-");
	c[C_PER] = money(o, "cost_per_useful_gpu_hour", "-");
}

static void cells_free(char *c[C_N])
{
	int i;

	for (i = 0; i < C_N; i++)
		free(c[i]);
}

static char *workspace_text(const json_t *lt)
{
	return xasprintf("%s%s", str(lt, "workspace"),
			 json_is_true(json_object_get(lt, "archived")) ? " (archived)" : "");
}

static const char *end_text(const json_t *lt)
{
	return str(lt, "end") ? str(lt, "end") : "running";
}

/* "by workspace, from 2027-01-01T00:00:00Z to 2027-01-02T00:00:00Z": the period. Caller frees. */
static char *period(const json_t *doc)
{
	return xasprintf("by %s, from %s to %s", str(doc, "by"),
			 str(doc, "since") ? str(doc, "since") : "the first commit",
			 str(doc, "now"));
}

static void heading(FILE *out, const json_t *doc)
{
	char *p = period(doc);

	fprintf(out,
		"Cost of each cluster lifetime, %s (USD, from the ledger in the state history).\n",
		p);
	free(p);
}

void report_render_text(FILE *out, const json_t *doc)
{
	const json_t *lt, *g, *tot = json_object_get(doc, "total");
	char *c[C_N], *ws;
	size_t i;

	heading(out, doc);
	if (json_array_size(json_object_get(doc, "lifetimes")) == 0) {
		fprintf(out, "No cluster lifetime in the state repository%s.\n",
			str(doc, "since") ? " since then" : "");
		return;
	}
	fprintf(out, "\n%-24s %-16s %-20s %-20s %9s %10s %12s %10s %10s\n", "WORKSPACE", "CLUSTER",
		"START", "END", "HOURS", "GPU-HOURS", "COST", "USEFUL-GH", "$/USEFUL");
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		char *shown, *cluster = str_for_terminal(str(lt, "cluster") ? str(lt, "cluster") : "-", 0);

		cells(lt, c);
		ws = workspace_text(lt);
		shown = str_for_terminal(ws, 0);
		fprintf(out, "%-24s %-16s %-20s %-20s %9s %10s %12s %10s %10s\n", shown, cluster,
			str(lt, "start"), end_text(lt), c[C_HOURS], c[C_GPUH], c[C_COST], c[C_USEFUL],
			c[C_PER]);
		free(shown);
		free(cluster);
		free(ws);
		cells_free(c);
	}
	fprintf(out, "\nBy %s:\n", str(doc, "by"));
	json_array_foreach(json_object_get(doc, "groups"), i, g)
	{
		char *key = str_for_terminal(str(g, "key"), 0);

		cells(g, c);
		fprintf(out,
			"  %-24s %" JSON_INTEGER_FORMAT " lifetime%s, %s hours, %s GPU-hours, %s",
			key, json_integer_value(json_object_get(g, "lifetimes")),
			json_integer_value(json_object_get(g, "lifetimes")) == 1 ? "" : "s",
			c[C_HOURS], c[C_GPUH], c[C_COST]);
		if (json_is_number(json_object_get(g, "useful_gpu_hours")))
			fprintf(out, ", %s useful GPU-hours at %s each", c[C_USEFUL], c[C_PER]);
		fprintf(out, "\n");
		cells_free(c);
		free(key);
	}
	cells(tot, c);
	fprintf(out, "Total: %" JSON_INTEGER_FORMAT " lifetime%s, %s hours, %s GPU-hours, %s",
		json_integer_value(json_object_get(tot, "lifetimes")),
		json_integer_value(json_object_get(tot, "lifetimes")) == 1 ? "" : "s", c[C_HOURS],
		c[C_GPUH], c[C_COST]);
	if (json_is_number(json_object_get(tot, "useful_gpu_hours")))
		fprintf(out, ", %s useful GPU-hours at %s each", c[C_USEFUL], c[C_PER]);
	fprintf(out, ".\n");
	if (json_array_size(json_object_get(doc, "ledger_errors")))
		fprintf(out, "Cost unknown: part of the ledger is malformed (each commit is named "
			     "on standard error), so its burn is not counted.\n");
	else if (!json_is_true(json_object_get(tot, "cost_known")) &&
		 !json_is_number(json_object_get(tot, "cost")))
		fprintf(out, "Cost unknown: part of the history was recorded before the cost "
			     "ledger (or by a state edit), so its burn is not known.\n");
	cells_free(c);
}

/*
 * A cell a spreadsheet would read as a formula (OWASP's CSV injection rule:
 * it starts with =, +, -, @, a tab or a carriage return). Only text cells
 * are checked: kiln's own figures are numbers and must stay numbers.
 */
static bool csv_formula_like(const char *s)
{
	return s && *s && strchr("=+-@\t\r", *s);
}

/*
 * RFC 4180: a field with a comma, quote or line break is quoted, quotes
 * doubled. A text cell that looks like a formula is written as text, with
 * a leading ' (which spreadsheets hide) and quoted.
 */
static void csv_field(FILE *out, const char *s, bool text, bool last)
{
	bool neutralise = text && csv_formula_like(s);

	if (s && (neutralise || strpbrk(s, ",\"\r\n"))) {
		fputc('"', out);
		if (neutralise)
			fputc('\'', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	} else if (s) {
		fputs(s, out);
	}
	fputs(last ? "\r\n" : ",", out);
}

static char *csv_number(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? xasprintf("%.4f", json_number_value(v)) : xstrdup("");
}

void report_render_csv(FILE *out, const json_t *doc)
{
	static const char *const nums[] = {"hours",
					   "gpu_hours",
					   "cost",
					   "upfront",
					   "useful_gpu_hours",
					   "mean_gpu_util",
					   "cost_per_useful_gpu_hour"};
	const json_t *lt;
	size_t i, k;

	fputs("group,workspace,archived,cluster,start,end,hours,gpu_hours,cost_usd,upfront_usd,"
	      "useful_gpu_hours,mean_gpu_util,cost_per_useful_gpu_hour_usd\r\n",
	      out);
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		csv_field(out, str(lt, "group"), true, false);
		csv_field(out, str(lt, "workspace"), true, false);
		csv_field(out, json_is_true(json_object_get(lt, "archived")) ? "yes" : "no", true,
			  false);
		csv_field(out, str(lt, "cluster"), true, false);
		csv_field(out, str(lt, "start"), true, false);
		csv_field(out, str(lt, "end"), true, false);
		for (k = 0; k < ARRAY_SIZE(nums); k++) {
			char *v = csv_number(lt, nums[k]);

			csv_field(out, v, false, k + 1 == ARRAY_SIZE(nums));
			free(v);
		}
	}
}

/* ---- HTML ---- */

static void html_cell(struct strbuf *sb, const char *tag, const char *id, const char *text)
{
	sb_addf(sb, "<%s", tag);
	if (id)
		sb_addf(sb, " id=\"%s\"", id);
	sb_adds(sb, ">");
	sb_add_xml(sb, text);
	sb_addf(sb, "</%s>", tag);
}

/* Eight colours that stay apart for the common colour blindnesses (Okabe and Ito). */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
				      "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

#define CW 640.0 /* chart width and height, in the SVG's own units */
#define CH 240.0
#define PAD 48.0

static double when(const char *t)
{
	int64_t v = 0;

	if (t)
		timefmt_time_parse_rfc3339(t, &v);
	return (double)v;
}

/* The SVG of cumulative cost over time, one line per lifetime, coloured by group. */
static void chart_cost(struct strbuf *sb, const json_t *doc, double t0, double t1)
{
	const json_t *lts = json_object_get(doc, "lifetimes"), *lt, *pt, *g;
	double top = 0;
	size_t i, k, gi;
	char *m;

	json_array_foreach(lts, i, lt) json_array_foreach(json_object_get(lt, "series"), k, pt)
	{
		double v = json_number_value(json_array_get(pt, 1));

		top = v > top ? v : top;
	}
	if (top <= 0)
		top = 1;
	sb_addf(sb,
		"<svg id=\"chart-cost\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"cost over time per %s\">",
		CW, CH, str(doc, "by"));
	sb_addf(sb,
		"<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>"
		"<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>",
		PAD, CH - PAD, CW - 8, CH - PAD, PAD, 8.0, PAD, CH - PAD);
	m = cost_money(top);
	sb_addf(sb, "<text x=\"4\" y=\"16\" font-size=\"11\">%s</text>", m);
	free(m);
	sb_adds(sb, "<text x=\"4\" y=\"228\" font-size=\"11\">");
	sb_add_xml(sb, str(json_array_get(lts, 0), "start"));
	sb_addf(sb, "</text><text x=\"%.0f\" y=\"228\" font-size=\"11\" text-anchor=\"end\">",
		CW - 8);
	sb_add_xml(sb, str(doc, "now"));
	sb_adds(sb, "</text>");
	json_array_foreach(lts, i, lt)
	{
		const char *grp = str(lt, "group");

		gi = 0;
		json_array_foreach(json_object_get(doc, "groups"), k,
				   g) if (strcmp(str(g, "key"), grp) == 0) gi = k;
		sb_addf(sb, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"",
			palette[gi % ARRAY_SIZE(palette)]);
		json_array_foreach(json_object_get(lt, "series"), k, pt)
		{
			double x = PAD + (CW - PAD - 8) *
					     (when(json_string_value(json_array_get(pt, 0))) - t0) /
					     (t1 > t0 ? t1 - t0 : 1);
			double y = (CH - PAD) -
				   (CH - PAD - 8) * json_number_value(json_array_get(pt, 1)) / top;

			sb_addf(sb, "%s%.1f,%.1f", k ? " " : "", x, y);
		}
		sb_adds(sb, "\"><title>");
		sb_add_xml(sb, grp);
		sb_adds(sb, "</title></polyline>");
	}
	sb_adds(sb, "</svg>");
}

/* The SVG of GPU utilization: one bar per recorded stretch, its height the utilization. */
static void chart_util(struct strbuf *sb, const json_t *doc, double t0, double t1)
{
	const json_t *lt, *u;
	size_t i, k, bars = 0;

	sb_addf(sb,
		"<svg id=\"chart-util\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"GPU utilization\">",
		CW, CH);
	sb_addf(sb,
		"<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#888\"/>"
		"<text x=\"4\" y=\"16\" font-size=\"11\">100%%</text>"
		"<text x=\"4\" y=\"%.0f\" font-size=\"11\">0%%</text>",
		PAD, CH - PAD, CW - 8, CH - PAD, CH - PAD);
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	    json_array_foreach(json_object_get(lt, "utilization"), k, u)
	{
		double a = when(json_string_value(json_array_get(u, 0)));
		double b = when(json_string_value(json_array_get(u, 1)));
		double pct = json_number_value(json_array_get(u, 2));
		double span = t1 > t0 ? t1 - t0 : 1;
		double x = PAD + (CW - PAD - 8) * (a - t0) / span;
		double w = (CW - PAD - 8) * (b - a) / span;
		double h = (CH - PAD - 8) * pct / 100.0;

		sb_addf(sb,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"%s\"><title>%.1f%%</title></rect>",
			x, CH - PAD - h, w > 1 ? w : 1, h, pct < 10 ? "#D55E00" : "#009E73", pct);
		bars++;
	}
	if (!bars)
		sb_addf(
		    sb,
		    "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" text-anchor=\"middle\">No GPU "
		    "utilization recorded in this period.</text>",
		    CW / 2, CH / 2);
	sb_adds(sb, "</svg>");
}

/* A group's or the total's row; color: the group's line in the chart, or NULL. */
static void html_row(struct strbuf *sb, const json_t *o, const char *first, const char *id,
		     const char *color)
{
	char *c[C_N], *idbuf;
	int i;
	static const char *const names[C_N] = {"hours", "gpu-hours", "cost", "useful-gpu-hours",
					       "cost-per-useful-gpu-hour"};

	cells(o, c);
	if (color)
		sb_addf(sb, "<tr style=\"border-left:6px solid %s\">", color);
	else
		sb_adds(sb, "<tr>");
	html_cell(sb, "th", NULL, first);
	for (i = 0; i < C_N; i++) {
		idbuf = id ? xasprintf("%s-%s", id, names[i]) : NULL;
		html_cell(sb, "td", idbuf, c[i]);
		free(idbuf);
	}
	sb_adds(sb, "</tr>\n");
	cells_free(c);
}

void report_render_html(FILE *out, const json_t *doc)
{
	struct strbuf sb = {0};
	const json_t *lt, *g;
	double t0 = when(str(doc, "now")), t1 = t0;
	size_t i;
	char *ws, *p;

	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		double s = when(str(lt, "start"));

		t0 = s < t0 ? s : t0;
	}
	if (str(doc, "since") && when(str(doc, "since")) > t0)
		t0 = when(str(doc, "since"));
	sb_adds(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		     "<title>kiln report</title><style>"
		     "body{font-family:system-ui,sans-serif;margin:1rem;max-width:64rem;color:#111}"
		     "h1{font-size:1.3rem}h2{font-size:1.1rem}"
		     ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:.9rem}"
		     "th,td{padding:.25rem .5rem;border-bottom:1px solid #ddd;text-align:right;"
		     "white-space:nowrap}th:first-child,td.l{text-align:left}"
		     "svg{width:100%;height:auto;max-width:40rem;display:block}"
		     "tfoot th,tfoot td{font-weight:bold}"
		     "@media (max-width:600px){table{font-size:.75rem}}"
		     "</style></head><body>\n<h1>What it cost</h1>\n<p id=\"period\">");
	p = period(doc);
	sb_adds(&sb, "Cost of each cluster lifetime, ");
	sb_add_xml(&sb, p);
	free(p);
	sb_adds(&sb, " (USD, from the ledger in the state history).</p>\n<h2>Lifetimes</h2>"
		     "<div class=\"scroll\"><table id=\"lifetimes\"><thead><tr><th>Workspace</th>"
		     "<th>Cluster</th><th>Start</th><th>End</th><th>Hours</th><th>GPU-hours</th>"
		     "<th>Cost</th><th>Useful GPU-hours</th><th>Cost per useful GPU-hour</th>"
		     "</tr></thead><tbody>\n");
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		char *c[C_N];
		int k;

		cells(lt, c);
		ws = workspace_text(lt);
		sb_adds(&sb, "<tr>");
		html_cell(&sb, "th", NULL, ws);
		html_cell(&sb, "td", NULL, str(lt, "cluster") ? str(lt, "cluster") : "-");
		html_cell(&sb, "td", NULL, str(lt, "start"));
		html_cell(&sb, "td", NULL, end_text(lt));
		for (k = 0; k < C_N; k++)
			html_cell(&sb, "td", NULL, c[k]);
		sb_adds(&sb, "</tr>\n");
		free(ws);
		cells_free(c);
	}
	sb_adds(&sb, "</tbody></table></div>\n<h2>By ");
	sb_add_xml(&sb, str(doc, "by"));
	sb_adds(&sb, "</h2><div class=\"scroll\"><table id=\"groups\"><thead><tr><th>");
	sb_add_xml(&sb, str(doc, "by"));
	sb_adds(&sb, "</th><th>Hours</th><th>GPU-hours</th><th>Cost</th><th>Useful GPU-hours</th>"
		     "<th>Cost per useful GPU-hour</th></tr></thead><tbody>\n");
	json_array_foreach(json_object_get(doc, "groups"), i, g)
	    html_row(&sb, g, str(g, "key"), NULL, palette[i % ARRAY_SIZE(palette)]);
	sb_adds(&sb, "</tbody><tfoot>");
	html_row(&sb, json_object_get(doc, "total"), "Total", "total", NULL);
	sb_adds(&sb, "</tfoot></table></div>\n<h2>Cost over time</h2>\n");
	chart_cost(&sb, doc, t0, t1);
	sb_adds(&sb, "\n<h2>GPU utilization</h2>\n");
	chart_util(&sb, doc, t0, t1);
	sb_adds(&sb, "\n<p>Made by kiln report from the state repository alone: nothing on this "
		     "page is fetched.</p>\n</body></html>\n");
	fputs(sb.buf, out);
	sb_release(&sb);
}
