/*
 * workload_render.c - the plan's Workload section, in text and Markdown,
 * from kiln.workload (workload_spec.c): what one run costs and takes on the
 * spec's groups and on the recommended cluster, what kiln derived, whether
 * the Lustre stores keep up with the checkpoints, and the assumptions.
 */
#include "workload_render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "plan.h"
#include "timefmt.h"
#include "workload.h"

#define BOLD "\033[1m"
#define RESET "\033[0m"

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* "pretrain 70B params on 2T tokens, bf16, within 30 days"; caller frees. */
static char *headline(const json_t *wl)
{
	char *params = workload_count_format(num(wl, "params"));
	char *tokens = workload_count_format(num(wl, "tokens"));
	const char *what = strcmp(str(wl, "kind"), "pretrain") == 0 ? "pretrain"
			   : strcmp(str(wl, "method"), "lora") == 0 ? "LoRA fine-tune"
								    : "full fine-tune";
	char *deadline = json_is_number(json_object_get(wl, "deadline_days"))
			     ? xasprintf(", within %g days", num(wl, "deadline_days"))
			     : xstrdup("");
	char *s = xasprintf("%s %s params on %s tokens, %s%s", what, params, tokens,
			    str(wl, "precision"), deadline);

	free(params);
	free(tokens);
	free(deadline);
	return s;
}

/* "16 × p5.48xlarge (128 H100): 191.9 days, 24576 GPU-hours, $X a run, $Y per million tokens". */
static char *run_text(const json_t *c)
{
	char *cost = cost_money(num(c, "cost_usd"));
	char *per_m = cost_money(num(c, "usd_per_million_tokens"));
	char *s = xasprintf("%lld × %s (%lld %s): %.1f days, %.0f GPU-hours, %s a run, %s per "
			    "million tokens",
			    (long long)num(c, "nodes"), str(c, "instance_type"),
			    (long long)num(c, "gpus"), str(c, "gpu"), num(c, "train_days"),
			    num(c, "gpu_hours"), cost, per_m);

	free(cost);
	free(per_m);
	return s;
}

/* Whether a group that runs the workload meets its deadline; NULL when it does. */
static char *group_verdict(const json_t *g)
{
	const json_t *need = json_object_get(g, "nodes_for_deadline");

	if (!json_is_false(json_object_get(g, "meets_deadline")))
		return NULL;
	return json_is_integer(need) ? xasprintf("past the deadline: %lld nodes meet it",
						 (long long)json_integer_value(need))
				     : xstrdup("past the deadline");
}

/* What a spec's group means for the run; caller frees. */
static char *group_text(const json_t *g)
{
	char *run, *verdict, *s;

	if (!json_is_true(json_object_get(g, "fits")))
		return xasprintf("%lld × %s cannot run it: %s", (long long)num(g, "nodes"),
				 str(g, "instance_type"), str(g, "reason"));
	run = run_text(g);
	verdict = group_verdict(g);
	s = verdict ? xasprintf("%s; %s", run, verdict) : xstrdup(run);
	free(run);
	free(verdict);
	return s;
}

/* How long a Lustre store takes to write one checkpoint; caller frees. */
static char *store_text(const json_t *st)
{
	char *took = num(st, "write_seconds") >= 0
			 ? timefmt_duration_format((int64_t)num(st, "write_seconds"))
			 : xstrdup("forever");
	char *within = timefmt_duration_format((int64_t)num(st, "write_within_seconds"));
	char *s = xasprintf("storage.%s writes a checkpoint in %s at %.1f MB/s (within %s: %s)",
			    str(st, "store"), took, num(st, "write_mb_per_s"), within,
			    json_is_true(json_object_get(st, "fast_enough")) ? "fast enough"
									     : "too slow");

	free(took);
	free(within);
	return s;
}

static void text_line(FILE *out, const char *label, const char *text)
{
	fprintf(out, "  %-13s%s\n", label, text);
}

void workload_render_text(FILE *out, const json_t *plan, bool color)
{
	const json_t *wl = plan_kiln(plan, "workload"), *v, *lustre;
	char *s;
	size_t i;

	if (!json_is_object(wl))
		return;
	s = headline(wl);
	fprintf(out, "%sWorkload%s: %s\n", color ? BOLD : "", color ? RESET : "", s);
	free(s);
	s = xasprintf("%.3g FLOPs; a checkpoint is %.1f GiB", num(wl, "flops"),
		      num(wl, "checkpoint_gib"));
	text_line(out, "compute", s);
	free(s);
	json_array_foreach(json_object_get(wl, "groups"), i, v)
	{
		char *g = group_text(v);

		s = xasprintf("compute.%s: %s", str(v, "group"), g);
		text_line(out, "this spec", s);
		free(g);
		free(s);
		if (json_is_string(json_object_get(v, "derived"))) {
			s = xasprintf("compute.%s: %s", str(v, "group"), str(v, "derived"));
			text_line(out, "derived", s);
			free(s);
		}
	}
	if (json_is_string(json_object_get(wl, "instance_type"))) {
		s = run_text(wl);
		fprintf(out, "  %-13s%s: %s\n", "recommended", s, str(wl, "why"));
		free(s);
	}
	if (json_is_object(v = json_object_get(wl, "runner_up"))) {
		s = run_text(v);
		fprintf(out, "  %-13s%s: %s\n", "runner-up", s, str(v, "why"));
		free(s);
	}
	json_array_foreach(json_object_get(wl, "checkpoint_stores"), i, v)
	{
		s = store_text(v);
		text_line(out, "lustre", s);
		free(s);
	}
	lustre = json_object_get(wl, "lustre");
	s = xasprintf("%lld GiB at %lld MB/s/TiB writes a checkpoint in time",
		      (long long)num(lustre, "capacity_gib"),
		      (long long)num(lustre, "throughput_per_tib"));
	text_line(out, "lustre needs", s);
	free(s);
	fputs("  assumptions\n", out);
	json_array_foreach(json_object_get(wl, "assumptions"), i, v)
	    fprintf(out, "    - %s\n", json_string_value(v));
	fputc('\n', out);
}

static void md_row(FILE *out, const char *label, const json_t *c, const char *why)
{
	char *cost = cost_money(num(c, "cost_usd"));
	char *per_m = cost_money(num(c, "usd_per_million_tokens"));

	fputs("| ", out);
	plan_md_text(out, label);
	fprintf(out, " | %lld × %s | %.1f | %.0f | %s | %s | ", (long long)num(c, "nodes"),
		str(c, "instance_type"), num(c, "train_days"), num(c, "gpu_hours"), cost, per_m);
	plan_md_text(out, why);
	fputs(" |\n", out);
	free(cost);
	free(per_m);
}

void workload_render_markdown(FILE *out, const json_t *plan)
{
	const json_t *wl = plan_kiln(plan, "workload"), *v;
	char *s;
	size_t i;

	if (!json_is_object(wl))
		return;
	s = headline(wl);
	fputs("### Workload\n\n", out);
	plan_md_text(out, s);
	fprintf(out, ": %.3g FLOPs, a checkpoint of %.1f GiB.\n\n", num(wl, "flops"),
		num(wl, "checkpoint_gib"));
	free(s);
	fputs("| Cluster | Nodes | Days | GPU-hours | Cost of a run | Per million tokens | Why |\n"
	      "| --- | --- | ---: | ---: | ---: | ---: | --- |\n",
	      out);
	json_array_foreach(json_object_get(wl, "groups"), i, v)
	{
		char *label = xasprintf("compute.%s", str(v, "group"));

		if (json_is_true(json_object_get(v, "fits"))) {
			s = group_verdict(v);
			md_row(out, label, v,
			       s ? s
			       : json_is_string(json_object_get(v, "derived"))
				   ? str(v, "derived")
				   : "meets the deadline");
			free(s);
		}
		free(label);
	}
	if (json_is_string(json_object_get(wl, "instance_type")))
		md_row(out, "recommended", wl, str(wl, "why"));
	if (json_is_object(v = json_object_get(wl, "runner_up")))
		md_row(out, "runner-up", v, str(v, "why"));
	fputc('\n', out);
	json_array_foreach(json_object_get(wl, "checkpoint_stores"), i, v)
	{
		s = store_text(v);
		fputs("- ", out);
		plan_md_text(out, s);
		fputc('\n', out);
		free(s);
	}
	fputs("\n<details><summary>Assumptions</summary>\n\n", out);
	json_array_foreach(json_object_get(wl, "assumptions"), i, v)
	{
		fputs("- ", out);
		plan_md_text(out, json_string_value(v));
		fputc('\n', out);
	}
	fputs("\n</details>\n\n", out);
}

void workload_render_run_cost(FILE *out, const json_t *plan)
{
	const json_t *run = json_object_get(plan_kiln(plan, "cost"), "run");
	char *cost, *per_m;

	if (!json_is_object(run))
		return;
	cost = cost_money(num(run, "cost_usd"));
	per_m = cost_money(num(run, "usd_per_million_tokens"));
	fprintf(out,
		"Run: one training run of the workload on compute.%s (%lld × %s) takes %.1f days "
		"and costs %s on demand, %s per million tokens\n",
		str(run, "group"), (long long)num(run, "nodes"), str(run, "instance_type"),
		num(run, "train_days"), cost, per_m);
	free(cost);
	free(per_m);
}
