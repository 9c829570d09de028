/*
 * iam_render.c - the plan's IAM delta as text and as Markdown; see iam.h.
 * It reads the "iam_delta" iam.c made and computes nothing.
 */
#include "iam.h"

#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util.h"

#define GREEN "\033[32m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

static bool role_changes(const json_t *d)
{
	return json_array_size(json_object_get(d, "granted")) ||
	       json_array_size(json_object_get(d, "revoked"));
}

static const json_t *plan_delta(const json_t *plan)
{
	return plan_kiln(plan, "iam_delta");
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/* "3 granted, 1 revoked" and, when the role widens, what widens it. */
static char *role_headline(const json_t *d)
{
	const json_t *g;
	size_t i, widen = 0;

	json_array_foreach(json_object_get(d, "granted"), i,
			   g) if (strcmp(str(g, "widening"), "new role") != 0) widen++;
	return xasprintf(
	    "%zu granted, %zu revoked%s", json_array_size(json_object_get(d, "granted")),
	    json_array_size(json_object_get(d, "revoked")), widen ? "; widens the role" : "");
}

/* The widest value of key over the role's granted (and, with both, revoked) pairs. */
static int column_width(const json_t *d, const char *key, bool both)
{
	const json_t *p;
	size_t i, w = 0;
	int k;

	for (k = 0; k < (both ? 2 : 1); k++)
		json_array_foreach(json_object_get(d, k ? "revoked" : "granted"), i, p)
		{
			size_t n = strlen(str(p, key));

			w = n > w ? n : w;
		}
	return (int)w;
}

void iam_render_text(FILE *out, const json_t *plan, bool color)
{
	const json_t *d, *p;
	size_t i, j, shown = 0;

	json_array_foreach(plan_delta(plan), i, d)
	{
		char *head;
		int w, rw;

		if (!role_changes(d))
			continue;
		if (shown++ == 0)
			fprintf(out, "%sIAM permissions%s (granted + and revoked -)\n",
				color ? BOLD : "", color ? RESET : "");
		head = role_headline(d);
		w = column_width(d, "action", true);
		rw = column_width(d, "resource", false);
		fprintf(out, "  %s (role %s): %s\n", str(d, "address"), str(d, "role"), head);
		free(head);
		json_array_foreach(json_object_get(d, "granted"), j, p)
		{
			bool widen = strcmp(str(p, "widening"), "new role") != 0;

			fprintf(out, "    %s+%s %-*s  %-*s  %s(%s)%s\n", color ? GREEN : "",
				color ? RESET : "", w, str(p, "action"), rw, str(p, "resource"),
				color && widen ? YELLOW : "", str(p, "widening"),
				color && widen ? RESET : "");
			if (*str(p, "note"))
				fprintf(out, "      %s!%s %s %s\n", color ? YELLOW : "",
					color ? RESET : "", str(p, "action"), str(p, "note"));
		}
		json_array_foreach(json_object_get(d, "revoked"), j, p)
		    fprintf(out, "    %s-%s %-*s  %s\n", color ? RED : "", color ? RESET : "", w,
			    str(p, "action"), str(p, "resource"));
	}
	if (shown)
		fputc('\n', out);
}

static void md_code(FILE *out, const char *s)
{
	fputs("<code>", out);
	plan_md_text(out, s);
	fputs("</code>", out);
}

void iam_render_markdown(FILE *out, const json_t *plan)
{
	const json_t *d, *p;
	size_t i, j, shown = 0;

	json_array_foreach(plan_delta(plan), i, d)
	{
		char *head;

		if (!role_changes(d))
			continue;
		if (shown++ == 0)
			fputs("### IAM permissions\n\n", out);
		head = role_headline(d);
		fputs("**", out);
		md_code(out, str(d, "address"));
		fputs("**: ", out);
		plan_md_text(out, head);
		fputs("\n\n|  | Action | Resource | Widening |\n|---|---|---|---|\n", out);
		free(head);
		json_array_foreach(json_object_get(d, "granted"), j, p)
		{
			fputs("| + | ", out);
			md_code(out, str(p, "action"));
			fputs(" | ", out);
			md_code(out, str(p, "resource"));
			fputs(" | ", out);
			plan_md_text(out, str(p, "widening"));
			if (*str(p, "note")) {
				fputs(": ", out);
				plan_md_text(out, str(p, "note"));
			}
			fputs(" |\n", out);
		}
		json_array_foreach(json_object_get(d, "revoked"), j, p)
		{
			fputs("| − | ", out);
			md_code(out, str(p, "action"));
			fputs(" | ", out);
			md_code(out, str(p, "resource"));
			fputs(" | revoked |\n", out);
		}
		fputc('\n', out);
	}
}
