/*
 * cost_render.c - the plan's cost as text, as a table and as Markdown, and
 * the money formats every command prints; see cost.h. It reads the "cost"
 * object cost.c made and computes nothing.
 */
#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

#define BOLD "\033[1m"
#define GREEN "\033[32m"
#define RED "\033[31m"
#define RESET "\033[0m"
#define ARROW "\xe2\x86\x92"

char *cost_money(double usd)
{
	long long cents = llround(fabs(usd) * 100.0);
	char digits[32], grouped[48];
	size_t n, i, j = 0;

	snprintf(digits, sizeof(digits), "%lld", cents / 100);
	n = strlen(digits);
	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			grouped[j++] = ',';
		grouped[j++] = digits[i];
	}
	grouped[j] = '\0';
	return xasprintf("%s$%s.%02lld", usd < 0 && cents ? "-" : "", grouped, cents % 100);
}

/* "+$1.00" / "-$1.00" / "$0.00". */
static char *signed_money(double usd)
{
	char *m = cost_money(fabs(usd)), *out;

	out = xasprintf("%s%s",
			llround(usd * 100) > 0	 ? "+"
			: llround(usd * 100) < 0 ? "-"
						 : "",
			m);
	free(m);
	return out;
}

static double num(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

char *cost_delta_text(const json_t *cost)
{
	char *d = signed_money(num(cost, "hourly_delta")),
	     *b = cost_money(num(cost, "hourly_before"));
	char *a = cost_money(num(cost, "hourly_after")), *out;

	out = xasprintf("%s/h (%s " ARROW " %s)", d, b, a);
	free(d);
	free(b);
	free(a);
	return out;
}

/* "aws catalog of 2026-11-01, us-east-1 prices" plus a warning when the spec's region differs. */
static char *source_text(const json_t *cost)
{
	const json_t *cat = json_object_get(cost, "catalog");
	const char *region = json_string_value(json_object_get(cost, "region"));
	const char *cregion = json_string_value(json_object_get(cat, "region"));
	const char *prov = json_string_value(json_object_get(cost, "provider"));
	const char *cprov = json_string_value(json_object_get(cat, "provider"));
	bool elsewhere;

	if (!json_is_object(cat))
		return xstrdup("the provider has no price catalog");
	/* sim is priced as AWS: its regions are not AWS's. */
	elsewhere = prov && cprov && strcmp(prov, cprov) == 0 && region && cregion &&
		    strcmp(region, cregion) != 0;
	return xasprintf("%s catalog of %s, %s prices%s%s%s", cprov,
			 json_string_value(json_object_get(cat, "date")), cregion,
			 elsewhere ? "; " : "", elsewhere ? region : "",
			 elsewhere ? " may be priced differently" : "");
}

/* A purchase paid once, beside the hourly figures; nothing when the plan buys none. */
static void text_upfront(FILE *out, const json_t *cost)
{
	char *m;

	if (num(cost, "upfront") <= 0)
		return;
	m = cost_money(num(cost, "upfront"));
	fprintf(out,
		"  Up front: %s, paid once when bought (a Capacity Block cannot be "
		"cancelled)\n",
		m);
	free(m);
}

static void text_ttl(FILE *out, const json_t *plan, const json_t *cost)
{
	const json_t *ttl = json_object_get(cost, "ttl_hours");

	if (json_is_number(ttl)) {
		char *p = cost_money(num(cost, "ttl_projected"));

		fprintf(out, "  TTL %gh: %s if the cluster runs its whole TTL\n",
			json_number_value(ttl), p);
		free(p);
	} else if (!plan_is_destroy(plan)) {
		fputs("  No TTL: the cost runs until the cluster is destroyed\n", out);
	}
}

static void text_unpriced(FILE *out, const json_t *cost)
{
	const json_t *u;
	size_t i;

	json_array_foreach(json_object_get(cost, "unpriced"), i, u)
	{
		if (i == 0)
			fputs("  Not priced (not counted above):\n", out);
		fprintf(out, "    • %s: %s: %s\n", json_string_value(json_object_get(u, "address")),
			json_string_value(json_object_get(u, "name")),
			json_string_value(json_object_get(u, "reason")));
	}
	json_array_foreach(json_object_get(cost, "retained"), i, u)
	{
		char *m = cost_money(num(u, "hourly"));

		fprintf(out, "  Retained: %s keeps costing %s/h after kiln releases it\n",
			json_string_value(json_object_get(u, "address")), m);
		free(m);
	}
}

void cost_render_text(FILE *out, const json_t *plan, bool color)
{
	const json_t *cost = plan_cost(plan), *r;
	char *delta, *month, *src;
	size_t i, width = 0;

	if (!json_is_object(cost))
		return;
	delta = cost_delta_text(cost);
	month = cost_money(num(cost, "monthly_after"));
	src = source_text(cost);
	fprintf(out, "%sCost%s (USD; %s)\n", color ? BOLD : "", color ? RESET : "", src);
	fprintf(out, "  %s, %s a month\n", delta, month);
	text_upfront(out, cost);
	text_ttl(out, plan, cost);
	json_array_foreach(json_object_get(cost, "resources"), i, r)
	{
		size_t w = strlen(json_string_value(json_object_get(r, "address")));

		width = w > width ? w : width;
	}
	json_array_foreach(json_object_get(cost, "resources"), i, r)
	{
		double b = num(r, "hourly_before"), a = num(r, "hourly_after");
		char *mb, *ma, *d;
		const char *col = a > b ? RED : a < b ? GREEN : "";

		if (b == 0 && a == 0)
			continue; /* only unpriced parts: listed below */
		mb = cost_money(b);
		ma = cost_money(a);
		d = signed_money(a - b);
		fprintf(out, "  %-*s  %s " ARROW " %s/h", (int)width,
			json_string_value(json_object_get(r, "address")), mb, ma);
		if (llround((a - b) * 100) != 0)
			fprintf(out, "  %s(%s)%s", color ? col : "", d, color ? RESET : "");
		fputc('\n', out);
		free(mb);
		free(ma);
		free(d);
	}
	text_unpriced(out, cost);
	if (json_integer_value(json_object_get(cost, "free")))
		fprintf(out, "  %lld free resources (network, roles, links)\n",
			(long long)json_integer_value(json_object_get(cost, "free")));
	fputc('\n', out);
	free(delta);
	free(month);
	free(src);
}

/* Table cells: padded columns, numbers to the right. */
struct cell_row {
	char *c[6];
};

void cost_render_table(FILE *out, const json_t *plan, bool color)
{
	static const char *const heads[] = {"RESOURCE",	  "COMPONENT", "QUANTITY",
					    "UNIT PRICE", "HOURLY",    "MONTHLY"};
	const json_t *cost = plan_cost(plan), *c;
	size_t n = json_array_size(json_object_get(cost, "components")), i, k;
	struct cell_row *rows = xcalloc(n + 1, sizeof(*rows));
	size_t w[6] = {0};
	char *src, *delta, *month;

	if (!json_is_object(cost)) {
		free(rows);
		return;
	}
	json_array_foreach(json_object_get(cost, "components"), i, c)
	{
		rows[i].c[0] = xstrdup(json_string_value(json_object_get(c, "address")));
		rows[i].c[1] = xstrdup(json_string_value(json_object_get(c, "name")));
		rows[i].c[2] = xasprintf("%g", num(c, "quantity"));
		rows[i].c[3] = xasprintf("$%g/%s", num(c, "unit_price"),
					 json_string_value(json_object_get(c, "unit")));
		rows[i].c[4] = cost_money(num(c, "hourly"));
		rows[i].c[5] = cost_money(num(c, "monthly"));
	}
	rows[n].c[0] = xstrdup("Total");
	rows[n].c[1] = xstrdup("");
	rows[n].c[2] = xstrdup("");
	rows[n].c[3] = xstrdup("");
	rows[n].c[4] = cost_money(num(cost, "hourly_after"));
	rows[n].c[5] = cost_money(num(cost, "monthly_after"));
	for (k = 0; k < 6; k++) {
		w[k] = strlen(heads[k]);
		for (i = 0; i <= n; i++)
			w[k] = strlen(rows[i].c[k]) > w[k] ? strlen(rows[i].c[k]) : w[k];
	}
	src = source_text(cost);
	fprintf(out, "%sCost%s (USD; %s)\n\n", color ? BOLD : "", color ? RESET : "", src);
	fprintf(out, "%-*s  %-*s  %*s  %*s  %*s  %*s\n", (int)w[0], heads[0], (int)w[1], heads[1],
		(int)w[2], heads[2], (int)w[3], heads[3], (int)w[4], heads[4], (int)w[5], heads[5]);
	for (i = 0; i <= n; i++) {
		if (i == n)
			fputc('\n', out);
		fprintf(out, "%-*s  %-*s  %*s  %*s  %*s  %*s\n", (int)w[0], rows[i].c[0], (int)w[1],
			rows[i].c[1], (int)w[2], rows[i].c[2], (int)w[3], rows[i].c[3], (int)w[4],
			rows[i].c[4], (int)w[5], rows[i].c[5]);
		for (k = 0; k < 6; k++)
			free(rows[i].c[k]);
	}
	free(rows);
	delta = cost_delta_text(cost);
	month = cost_money(num(cost, "monthly_after"));
	fprintf(out, "\nChange: %s, %s a month\n", delta, month);
	text_upfront(out, cost);
	text_ttl(out, plan, cost);
	text_unpriced(out, cost);
	if (json_integer_value(json_object_get(cost, "free")))
		fprintf(out, "  %lld free resources (network, roles, links)\n",
			(long long)json_integer_value(json_object_get(cost, "free")));
	free(delta);
	free(month);
	free(src);
}

/* ---- Markdown ---- */

void cost_render_markdown(FILE *out, const json_t *plan)
{
	const json_t *cost = plan_cost(plan), *r;
	char *delta, *month, *src;
	size_t i;

	if (!json_is_object(cost))
		return;
	delta = cost_delta_text(cost);
	month = cost_money(num(cost, "monthly_after"));
	src = source_text(cost);
	fprintf(out, "### Cost\n\n**%s**, %s a month", delta, month);
	if (json_is_number(json_object_get(cost, "ttl_hours"))) {
		char *p = cost_money(num(cost, "ttl_projected"));

		fprintf(out, "; over the TTL of %gh: **%s**", num(cost, "ttl_hours"), p);
		free(p);
	}
	fprintf(out, "\n\n<sub>USD; %s.</sub>\n\n", src);
	if (json_array_size(json_object_get(cost, "resources"))) {
		fputs("| Resource | Change | Before ($/h) | After ($/h) |\n|---|---|--:|--:|\n",
		      out);
		json_array_foreach(json_object_get(cost, "resources"), i, r)
		{
			char *b, *a;

			if (num(r, "hourly_before") == 0 && num(r, "hourly_after") == 0)
				continue; /* only unpriced parts: listed below */
			b = cost_money(num(r, "hourly_before"));
			a = cost_money(num(r, "hourly_after"));

			fprintf(out, "| `%s` | %s | %s | %s |\n",
				json_string_value(json_object_get(r, "address")),
				json_string_value(json_object_get(r, "change")), b, a);
			free(b);
			free(a);
		}
		fputc('\n', out);
	}
	json_array_foreach(json_object_get(cost, "unpriced"), i, r)
	{
		if (i == 0)
			fputs("Not priced (not counted above):\n\n", out);
		fprintf(out, "- `%s`: ", json_string_value(json_object_get(r, "address")));
		plan_md_text(out, json_string_value(json_object_get(r, "name")));
		fputs(": ", out);
		plan_md_text(out, json_string_value(json_object_get(r, "reason")));
		fputc('\n', out);
	}
	json_array_foreach(json_object_get(cost, "retained"), i, r)
	{
		char *m = cost_money(num(r, "hourly"));

		fprintf(out, "- Retained: `%s` keeps costing %s/h after kiln releases it\n",
			json_string_value(json_object_get(r, "address")), m);
		free(m);
	}
	fputc('\n', out);
	free(delta);
	free(month);
	free(src);
}

void cost_render_still_billing(FILE *out, const json_t *plan, const char *workspace)
{
	const json_t *cost = plan_kiln(plan, "cost"), *r;
	size_t i;

	json_array_foreach(json_object_get(cost, "retained"), i, r)
	{
		char *h = cost_money(num(r, "hourly")), *m = cost_money(num(r, "monthly"));
		const char *addr = json_string_value(json_object_get(r, "address"));

		if (i == 0)
			fputs("Still billing (kept by deletion: retain):\n", out);
		fprintf(out, "  %s: %s an hour, %s a month%s\n", addr, h, m,
			json_is_true(json_object_get(r, "unpriced"))
			    ? " and what it stores (not priced: kiln cannot see its size)"
			    : "");
		if (!json_is_true(json_object_get(r, "store")))
			fputs("    kept for the retained stores that stand in it; it goes with them\n",
			      out);
		else
			fprintf(out,
				"    delete it, data and all: kiln destroy --include-retained %s%s%s\n",
				addr, strcmp(workspace, "default") != 0 ? " -w " : "",
				strcmp(workspace, "default") != 0 ? workspace : "");
		free(h);
		free(m);
	}
}
