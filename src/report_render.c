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
#include "report_plots.h"
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

static void html_cell(struct strbuf *sb, const char *tag, const char *cls, const char *id,
		      const char *text)
{
	sb_addf(sb, "<%s", tag);
	if (cls)
		sb_addf(sb, " class=\"%s\"", cls);
	if (id)
		sb_addf(sb, " id=\"%s\"", id);
	sb_adds(sb, ">");
	sb_add_xml(sb, text);
	sb_addf(sb, "</%s>", tag);
}

/* "2027-01-01 00:00" (UTC): a table's time, which may break at the space. */
static char *html_time(const char *rfc3339)
{
	if (!rfc3339)
		return xstrdup("running");
	if (strlen(rfc3339) >= 16 && rfc3339[10] == 'T')
		return xasprintf("%.10s %.5s", rfc3339, rfc3339 + 11);
	return xstrdup(rfc3339);
}

/* A row's first cell, edged with color (the group's in the charts) unless NULL. */
static void row_head(struct strbuf *sb, const char *first, const char *color)
{
	if (color)
		sb_addf(sb, "<tr><th class=\"l\" style=\"border-left:6px solid %s\">", color);
	else
		sb_adds(sb, "<tr><th class=\"l\">");
	sb_add_xml(sb, first);
	sb_adds(sb, "</th>");
}

/* A group's or the total's row; color: the group's line in the charts, or NULL. */
static void html_row(struct strbuf *sb, const json_t *o, const char *first, const char *id,
		     const char *color)
{
	char *c[C_N], *idbuf;
	int i;
	static const char *const names[C_N] = {"hours", "gpu-hours", "cost", "useful-gpu-hours",
					       "cost-per-useful-gpu-hour"};

	cells(o, c);
	row_head(sb, first, color);
	for (i = 0; i < C_N; i++) {
		idbuf = id ? xasprintf("%s-%s", id, names[i]) : NULL;
		html_cell(sb, "td", NULL, idbuf, c[i]);
		free(idbuf);
	}
	sb_adds(sb, "</tr>\n");
	cells_free(c);
}

/* The FinOps figures of a group or the total: where the money went, and what idled. */
static void html_finops_row(struct strbuf *sb, const json_t *o, const char *first, const char *id,
			    const char *color)
{
	static const struct {
		const char *key, *id;
		bool usd;
	} cols[] = {
	    {"compute_cost", "compute", true},	 {"storage_cost", "storage", true},
	    {"other_cost", "other", true},	 {"upfront", "upfront", true},
	    {"retained_cost", "retained", true}, {"orphaned_cost", "orphaned", true},
	    {"idle_gpu_hours", "idle-gpu-hours", false}, {"idle_cost", "idle-cost", true},
	};
	size_t i;

	row_head(sb, first, color);
	for (i = 0; i < ARRAY_SIZE(cols); i++) {
		char *v = cols[i].usd ? money(o, cols[i].key, "-") : figure(o, cols[i].key, "-");
		char *idbuf = id ? xasprintf("%s-%s", id, cols[i].id) : NULL;

		html_cell(sb, "td", NULL, idbuf, v);
		free(idbuf);
		free(v);
	}
	sb_adds(sb, "</tr>\n");
}

static const char html_style[] =
    "body{font-family:system-ui,sans-serif;margin:1rem auto;padding:0 1rem;max-width:64rem;"
    "color:#111;line-height:1.35}"
    "h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.6rem}"
    ".scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;font-size:.85rem;width:100%}"
    "th,td{padding:.25rem .4rem;border-bottom:1px solid #ddd;text-align:right;"
    "vertical-align:top}"
    "td{white-space:nowrap}td.t{white-space:normal;min-width:5.5em}"
    "thead th{font-weight:600;vertical-align:bottom}"
    "th.l,td.l{text-align:left;overflow-wrap:break-word;min-width:4em}"
    "svg.chart{width:100%;height:auto;max-width:48rem;display:block}"
    "svg text{fill:#222}svg .axis-title{font-weight:600}"
    "tfoot th,tfoot td{font-weight:bold}"
    "p.note{font-size:.85rem;color:#444}"
    "@media (max-width:700px){table{font-size:.72rem}th,td{padding:.2rem .25rem}}";

static void html_lifetimes(struct strbuf *sb, const json_t *doc)
{
	const json_t *lt;
	size_t i;

	sb_adds(sb, "<h2>Lifetimes</h2><div class=\"scroll\"><table id=\"lifetimes\"><thead><tr>"
		    "<th class=\"l\">Workspace</th><th class=\"l\">Cluster</th><th>Start (UTC)</th>"
		    "<th>End (UTC)</th><th>Hours</th><th>GPU-hours</th><th>Cost</th>"
		    "<th>Useful GPU-hours</th><th>Cost per useful GPU-hour</th></tr></thead>"
		    "<tbody>\n");
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		char *c[C_N], *ws = workspace_text(lt), *a = html_time(str(lt, "start")),
			      *b = html_time(str(lt, "end"));
		int k;

		cells(lt, c);
		sb_adds(sb, "<tr>");
		html_cell(sb, "th", "l", NULL, ws);
		html_cell(sb, "td", "l", NULL, str(lt, "cluster") ? str(lt, "cluster") : "-");
		html_cell(sb, "td", "t", NULL, a);
		html_cell(sb, "td", "t", NULL, b);
		for (k = 0; k < C_N; k++)
			html_cell(sb, "td", NULL, NULL, c[k]);
		sb_adds(sb, "</tr>\n");
		free(ws);
		free(a);
		free(b);
		cells_free(c);
	}
	sb_adds(sb, "</tbody></table></div>\n");
}

static void html_groups(struct strbuf *sb, const json_t *doc)
{
	const json_t *g;
	size_t i;

	sb_adds(sb, "<h2>By ");
	sb_add_xml(sb, str(doc, "by"));
	sb_adds(sb, "</h2><div class=\"scroll\"><table id=\"groups\"><thead><tr><th class=\"l\">");
	sb_add_xml(sb, str(doc, "by"));
	sb_adds(sb, "</th><th>Hours</th><th>GPU-hours</th><th>Cost</th><th>Useful GPU-hours</th>"
		    "<th>Cost per useful GPU-hour</th></tr></thead><tbody>\n");
	json_array_foreach(json_object_get(doc, "groups"), i, g)
	    html_row(sb, g, str(g, "key"), NULL, report_plots_color(i));
	sb_adds(sb, "</tbody><tfoot>");
	html_row(sb, json_object_get(doc, "total"), "Total", "total", NULL);
	sb_adds(sb, "</tfoot></table></div>\n");
}

static void html_finops(struct strbuf *sb, const json_t *doc)
{
	const json_t *g;
	size_t i;

	sb_adds(sb, "<h2>Where the money went</h2><div class=\"scroll\"><table id=\"finops\">"
		    "<thead><tr><th class=\"l\">");
	sb_add_xml(sb, str(doc, "by"));
	sb_adds(sb, "</th><th>Compute</th><th>Storage</th><th>Network and other</th>"
		    "<th>Up-front fees</th><th>Retained storage</th><th>Orphaned storage</th>"
		    "<th>Idle GPU-hours</th><th>Cost of idle GPUs</th></tr></thead><tbody>\n");
	json_array_foreach(json_object_get(doc, "groups"), i, g)
	    html_finops_row(sb, g, str(g, "key"), NULL, report_plots_color(i));
	sb_adds(sb, "</tbody><tfoot>");
	html_finops_row(sb, json_object_get(doc, "total"), "Total", "finops-total", NULL);
	sb_adds(sb, "</tfoot></table></div>\n<p class=\"note\">Retained storage: stores a "
		    "destroy kept (<code>deletion: retain</code>), counted from their release to "
		    "now at the hourly cost the ledger recorded, as long as nobody deleted them; "
		    "orphaned: those of workspaces since deleted, which no workspace owns. Idle "
		    "GPU-hours: the GPU-hours the recorded utilization left unused, and their "
		    "share of the cost. A dash: nothing recorded to count from.</p>\n");
}

void report_render_html(FILE *out, const json_t *doc)
{
	struct strbuf sb = {0};
	char *p;

	sb_adds(&sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		     "<title>kiln report</title><style>");
	sb_adds(&sb, html_style);
	sb_adds(&sb, "</style></head><body>\n<h1>What it cost</h1>\n<p id=\"period\">");
	p = period(doc);
	sb_adds(&sb, "Cost of each cluster lifetime, ");
	sb_add_xml(&sb, p);
	free(p);
	sb_adds(&sb, " (USD, from the ledger in the state history).</p>\n");
	html_lifetimes(&sb, doc);
	html_groups(&sb, doc);
	html_finops(&sb, doc);
	report_plots_write(&sb, doc);
	sb_adds(&sb, "\n<p class=\"note\">Made by kiln report from the state repository alone: "
		     "nothing on this page is fetched.</p>\n</body></html>\n");
	fputs(sb.buf, out);
	sb_release(&sb);
}
