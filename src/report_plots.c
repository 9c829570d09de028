/*
 * report_plots.c - the charts of kiln report's HTML page; see
 * report_plots.h. Every figure comes from the report's document, the same
 * one the text and JSON show; the drawing furniture is report_chart.c's.
 *
 * Lifetimes overlap (two workspaces running at once, a group's clusters
 * side by side), so the over-time charts are drawn from the stretches of
 * every lifetime cut at every boundary: in each piece, a group's burn is
 * the sum of its lifetimes' and its utilization their mean weighted by
 * GPUs, never one lifetime drawn over another.
 */
#include "report_plots.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_chart.h"
#include "timefmt.h"
#include "util.h"

const char *const report_palette[8] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
				       "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

/* Under this GPU utilization (%) a stretch is idle: kiln status's default (utilization.c). */
#define IDLE_BELOW 10.0

const char *report_plots_color(size_t i)
{
	return report_palette[i % ARRAY_SIZE(report_palette)];
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static double when(const char *t)
{
	int64_t v = 0;

	if (t)
		timefmt_time_parse_rfc3339(t, &v);
	return (double)v;
}

/* One stretch of one lifetime, as the over-time charts cut them. */
struct span {
	double a, b;
	size_t group;
	double burn, budget, gpus, util;
	bool has_budget, has_util;
};

struct spans {
	struct span *v;
	size_t n;
	double *cuts; /* every a and b, sorted, unique */
	size_t ncuts;
	double t0, t1;
	size_t ngroups;
};

static size_t group_index(const json_t *doc, const char *key)
{
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(doc, "groups"), i,
			   g) if (key && str(g, "key") && strcmp(str(g, "key"), key) == 0) return i;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void spans_load(struct spans *s, const json_t *doc)
{
	const json_t *lt, *st;
	size_t i, k, n = 0, j;

	memset(s, 0, sizeof(*s));
	s->ngroups = json_array_size(json_object_get(doc, "groups"));
	s->t1 = when(str(doc, "now"));
	s->t0 = s->t1;
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		double start = when(str(lt, "start"));

		n += json_array_size(json_object_get(lt, "stretches"));
		s->t0 = start < s->t0 ? start : s->t0;
	}
	if (str(doc, "since") && when(str(doc, "since")) > s->t0)
		s->t0 = when(str(doc, "since"));
	s->v = xcalloc(n ? n : 1, sizeof(*s->v));
	s->cuts = xcalloc(2 * n + 2, sizeof(*s->cuts));
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		size_t g = group_index(doc, str(lt, "group"));

		json_array_foreach(json_object_get(lt, "stretches"), k, st)
		{
			struct span *p = &s->v[s->n++];
			const json_t *b = json_object_get(st, "budget_usd_per_hour");
			const json_t *u = json_object_get(st, "gpu_util");

			p->a = when(str(st, "start"));
			p->b = when(str(st, "end"));
			p->group = g;
			p->burn = json_number_value(json_object_get(st, "usd_per_hour"));
			p->gpus = json_number_value(json_object_get(st, "gpus"));
			p->has_budget = json_is_number(b);
			p->budget = json_number_value(b);
			p->has_util = json_is_number(u);
			p->util = json_number_value(u);
			s->cuts[s->ncuts++] = p->a;
			s->cuts[s->ncuts++] = p->b;
		}
	}
	s->cuts[s->ncuts++] = s->t0;
	s->cuts[s->ncuts++] = s->t1;
	qsort(s->cuts, s->ncuts, sizeof(*s->cuts), by_value);
	for (i = j = 0; i < s->ncuts; i++)
		if (j == 0 || s->cuts[i] != s->cuts[j - 1])
			s->cuts[j++] = s->cuts[i];
	s->ncuts = j;
}

static void spans_release(struct spans *s)
{
	free(s->v);
	free(s->cuts);
}

/* What runs in the piece [a, b) of the timeline: of one group, or of all (group = SIZE_MAX). */
struct piece {
	double burn, budget, gpus, measured_gpus, util_weighted;
	bool any, has_budget;
};

static struct piece piece_of(const struct spans *s, double a, double b, size_t group)
{
	struct piece p = {0};
	size_t i;

	for (i = 0; i < s->n; i++) {
		const struct span *x = &s->v[i];

		if (x->a > a || x->b < b || (group != SIZE_MAX && x->group != group))
			continue;
		p.any = true;
		p.burn += x->burn;
		p.gpus += x->gpus;
		if (x->has_budget) {
			p.has_budget = true;
			p.budget += x->budget;
		}
		if (x->has_util && x->gpus > 0) {
			p.measured_gpus += x->gpus;
			p.util_weighted += x->util * x->gpus;
		}
	}
	return p;
}

static void line_close(struct strbuf *sb, const char *title)
{
	sb_adds(sb, "\"><title>");
	sb_add_xml(sb, title);
	sb_adds(sb, "</title></polyline>");
}

/* A step line through pieces: value(piece) per piece, NAN where nothing is drawn. */
static void step_line(struct report_chart *c, const struct spans *s, size_t group,
		      double (*value)(const struct piece *), const char *color, const char *extra,
		      const char *title)
{
	struct strbuf *sb = report_chart_plot(c);
	bool open = false;
	size_t i;

	for (i = 0; i + 1 < s->ncuts; i++) {
		struct piece p = piece_of(s, s->cuts[i], s->cuts[i + 1], group);
		double v = value(&p);

		if (open && v != v)
			line_close(sb, title);
		if (v != v) {
			open = false;
			continue;
		}
		if (!open)
			sb_addf(sb,
				"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
				"points=\"",
				color, extra);
		sb_addf(sb, "%s%.1f,%.1f %.1f,%.1f", open ? " " : "", report_chart_x(c, s->cuts[i]),
			report_chart_y(c, v), report_chart_x(c, s->cuts[i + 1]),
			report_chart_y(c, v));
		open = true;
	}
	if (open)
		line_close(sb, title);
}

static double v_burn(const struct piece *p)
{
	return p->burn;
}

static double v_budget(const struct piece *p)
{
	return p->has_budget ? p->budget : 0.0 / 0.0;
}

static double v_util(const struct piece *p)
{
	return p->measured_gpus > 0 ? p->util_weighted / p->measured_gpus : 0.0 / 0.0;
}

static const char *group_key(const json_t *doc, size_t i)
{
	return str(json_array_get(json_object_get(doc, "groups"), i), "key");
}

/* The hourly burn over time: each group, the whole, and the budget in force. */
static void chart_burn(struct strbuf *sb, const json_t *doc, const struct spans *s)
{
	struct report_chart c;
	double top = 0;
	bool budget = false;
	size_t i;

	for (i = 0; i + 1 < s->ncuts; i++) {
		struct piece p = piece_of(s, s->cuts[i], s->cuts[i + 1], SIZE_MAX);

		top = p.burn > top ? p.burn : top;
		top = p.has_budget && p.budget > top ? p.budget : top;
		budget |= p.has_budget;
	}
	report_chart_init(&c, "chart-burn", "hourly burn over time against the budget",
			  REPORT_AXIS_TIME, s->t0, s->t1, "time (UTC)", REPORT_AXIS_USD, 0,
			  top * 1.05, "burn (USD per hour)");
	for (i = 0; i < s->ngroups; i++) {
		step_line(&c, s, i, v_burn, report_plots_color(i), "", group_key(doc, i));
		report_chart_legend(&c, report_plots_color(i), REPORT_SWATCH_LINE,
				    group_key(doc, i));
	}
	if (s->ngroups > 1) {
		step_line(&c, s, SIZE_MAX, v_burn, "#777", " stroke-dasharray=\"2 3\"", "all");
		report_chart_legend(&c, "#777", REPORT_SWATCH_DOTTED, "all together");
	}
	if (budget) {
		step_line(&c, s, SIZE_MAX, v_budget, "#000", " stroke-dasharray=\"8 4\"",
			  "budget (the running workspaces' budget.max_hourly_usd, added up)");
		report_chart_legend(&c, "#000", REPORT_SWATCH_DASHED,
				    "budget (budget.max_hourly_usd of what ran, added up)");
	} else {
		report_chart_legend(&c, "#bbb", REPORT_SWATCH_DASHED,
				    "budget: none recorded (set budget.max_hourly_usd)");
	}
	sb_adds(sb, "<h2>Burn rate against the budget</h2>\n");
	report_chart_finish(&c, sb);
}

/* Cumulative cost over time, one line per lifetime, coloured by its group. */
static void chart_cost(struct strbuf *sb, const json_t *doc, const struct spans *s)
{
	const json_t *lts = json_object_get(doc, "lifetimes"), *lt, *pt;
	struct report_chart c;
	double top = 0;
	size_t i, k;

	json_array_foreach(lts, i, lt) json_array_foreach(json_object_get(lt, "series"), k, pt)
	{
		double v = json_number_value(json_array_get(pt, 1));

		top = v > top ? v : top;
	}
	report_chart_init(&c, "chart-cost", "cumulative cost of each lifetime over time",
			  REPORT_AXIS_TIME, s->t0, s->t1, "time (UTC)", REPORT_AXIS_USD, 0, top,
			  "cost so far (USD)");
	json_array_foreach(lts, i, lt)
	{
		size_t g = group_index(doc, str(lt, "group"));
		struct strbuf *plot = report_chart_plot(&c);

		sb_addf(plot, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"",
			report_plots_color(g));
		json_array_foreach(json_object_get(lt, "series"), k, pt)
		    sb_addf(plot, "%s%.1f,%.1f", k ? " " : "",
			    report_chart_x(&c, when(json_string_value(json_array_get(pt, 0)))),
			    report_chart_y(&c, json_number_value(json_array_get(pt, 1))));
		sb_adds(plot, "\"><title>");
		sb_add_xml(plot, str(lt, "workspace"));
		sb_adds(plot, " from ");
		sb_add_xml(plot, str(lt, "start"));
		sb_adds(plot, "</title></polyline>");
	}
	for (i = 0; i < s->ngroups; i++)
		report_chart_legend(&c, report_plots_color(i), REPORT_SWATCH_LINE,
				    group_key(doc, i));
	if (!s->ngroups)
		report_chart_legend(&c, "#bbb", REPORT_SWATCH_LINE, "no lifetime in this period");
	sb_adds(sb, "<h2>Cost over time</h2>\n");
	report_chart_finish(&c, sb);
}

/* The kinds a group's cost is split into, in the bars' order. */
static const struct kind {
	const char *key, *name, *color;
} kinds[] = {
    {"compute_cost", "compute", "#0072B2"},
    {"storage_cost", "storage", "#E69F00"},
    {"other_cost", "network and other", "#56B4E9"},
    {"upfront", "up-front fees", "#CC79A7"},
    {"retained_cost", "retained storage", "#009E73"},
    {"orphaned_cost", "orphaned storage", "#D55E00"},
    {NULL, "not split (recorded before the split)", "#999999"},
};

/* The amount of kind k in group o: the unsplit rest for the last kind. */
static double kind_amount(const json_t *o, size_t k)
{
	const json_t *v;

	if (kinds[k].key)
		return json_number_value(json_object_get(o, kinds[k].key));
	v = json_object_get(o, "compute_cost");
	if (json_is_number(v) || !json_is_number(json_object_get(o, "cost")))
		return 0;
	return json_number_value(json_object_get(o, "cost")) -
	       json_number_value(json_object_get(o, "upfront"));
}

/* Each group's cost as one bar split by kind, kept storage included. */
static void chart_split(struct strbuf *sb, const json_t *doc)
{
	const json_t *groups = json_object_get(doc, "groups"), *g;
	size_t n = json_array_size(groups), i, k;
	const char **names = xcalloc(n ? n : 1, sizeof(*names));
	bool used[ARRAY_SIZE(kinds)] = {0};
	struct report_chart c;
	double top = 0;
	char *title = xasprintf("%s", str(doc, "by"));

	json_array_foreach(groups, i, g)
	{
		double sum = 0;

		names[i] = str(g, "key");
		for (k = 0; k < ARRAY_SIZE(kinds); k++)
			sum += kind_amount(g, k);
		top = sum > top ? sum : top;
	}
	report_chart_init(&c, "chart-split", "cost of each group split by kind", REPORT_AXIS_USD, 0,
			  top, "cost (USD)", REPORT_AXIS_CATEGORY, 0, 0, title);
	report_chart_categories(&c, names, n);
	json_array_foreach(groups, i, g)
	{
		double x = 0;
		struct strbuf *plot = report_chart_plot(&c);

		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			double v = kind_amount(g, k), x0 = report_chart_x(&c, x);
			char *m;

			if (v <= 0)
				continue;
			used[k] = true;
			x += v;
			m = xasprintf("%s: %s %.2f USD", names[i], kinds[k].name, v);
			sb_addf(plot,
				"<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				"fill=\"%s\"><title>",
				x0, report_chart_y(&c, (double)i + 0.2),
				report_chart_x(&c, x) - x0 > 0.5 ? report_chart_x(&c, x) - x0 : 0.5,
				report_chart_y(&c, (double)i + 0.8) -
				    report_chart_y(&c, (double)i + 0.2),
				kinds[k].color);
			sb_add_xml(plot, m);
			sb_adds(plot, "</title></rect>");
			free(m);
		}
	}
	for (k = 0; k < ARRAY_SIZE(kinds); k++)
		if (used[k] || kinds[k].key)
			report_chart_legend(&c, kinds[k].color, REPORT_SWATCH_BOX, kinds[k].name);
	sb_adds(sb, "<h2>Cost by kind</h2>\n");
	report_chart_finish(&c, sb);
	free(names);
	free(title);
}

/*
 * GPU utilization per group over time: the GPU-weighted mean of what its
 * lifetimes recorded, the idle band under it, and each stretch that ran GPUs
 * with nothing recorded (a running cluster's current stretch) shaded.
 */
static void chart_util(struct strbuf *sb, const json_t *doc, const struct spans *s)
{
	struct report_chart c;
	struct strbuf *plot;
	bool unmeasured = false;
	size_t i, g;
	char pct[16];

	report_chart_init(&c, "chart-util", "GPU utilization per group over time", REPORT_AXIS_TIME,
			  s->t0, s->t1, "time (UTC)", REPORT_AXIS_PERCENT, 0, 100,
			  "GPU utilization (%)");
	plot = report_chart_plot(&c);
	sb_addf(plot,
		"<rect class=\"idle\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"#D55E00\" fill-opacity=\"0.12\"><title>idle: under %.0f%% GPU "
		"utilization</title></rect>",
		report_chart_x(&c, s->t0), report_chart_y(&c, IDLE_BELOW),
		report_chart_x(&c, s->t1) - report_chart_x(&c, s->t0),
		report_chart_y(&c, 0) - report_chart_y(&c, IDLE_BELOW), IDLE_BELOW);
	for (i = 0; i + 1 < s->ncuts; i++)
		for (g = 0; g < s->ngroups; g++) {
			struct piece p = piece_of(s, s->cuts[i], s->cuts[i + 1], g);

			if (!(p.gpus > 0 && p.measured_gpus == 0))
				continue;
			unmeasured = true;
			sb_addf(plot,
				"<rect class=\"unmeasured\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				"height=\"%.1f\" fill=\"#999\" fill-opacity=\"0.18\"><title>",
				report_chart_x(&c, s->cuts[i]), report_chart_y(&c, 100),
				report_chart_x(&c, s->cuts[i + 1]) - report_chart_x(&c, s->cuts[i]),
				report_chart_y(&c, 0) - report_chart_y(&c, 100));
			sb_add_xml(plot, group_key(doc, g));
			sb_adds(plot, ": GPUs running, no utilization recorded</title></rect>");
		}
	for (g = 0; g < s->ngroups; g++) {
		step_line(&c, s, g, v_util, report_plots_color(g), "", group_key(doc, g));
		report_chart_legend(&c, report_plots_color(g), REPORT_SWATCH_LINE,
				    group_key(doc, g));
	}
	snprintf(pct, sizeof(pct), "%.0f%%", IDLE_BELOW);
	{
		char *idle = xasprintf("idle: under %s", pct);

		report_chart_legend(&c, "#F4D3C0", REPORT_SWATCH_BOX, idle);
		free(idle);
	}
	report_chart_legend(&c, unmeasured ? "#DDD" : "#EEE", REPORT_SWATCH_BOX,
			    unmeasured ? "GPUs running, no utilization recorded"
				       : "every GPU stretch has utilization recorded");
	sb_adds(sb, "<h2>GPU utilization per group</h2>\n");
	report_chart_finish(&c, sb);
}

void report_plots_write(struct strbuf *sb, const json_t *doc)
{
	struct spans s;

	spans_load(&s, doc);
	chart_burn(sb, doc, &s);
	chart_split(sb, doc);
	chart_util(sb, doc, &s);
	chart_cost(sb, doc, &s);
	spans_release(&s);
}
