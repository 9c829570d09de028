/*
 * runprog.c - a running run's progress (runprog.h).
 */
#include "runprog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timefmt.h"
#include "util.h"

static double wl_num(const json_t *w, const char *key)
{
	const json_t *v = json_object_get(w, key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

void runprog_compute(const struct runrec *r, int64_t now, double cluster_hourly, int cluster_gpus,
		     double peak_tflops, struct runprog *p)
{
	const json_t *w = r->lineage.workload;
	double params = wl_num(w, "active_params"), want = wl_num(w, "tokens");
	double deadline = wl_num(w, "deadline_seconds"), budget = wl_num(w, "max_hourly_usd");
	struct strbuf sb = {0};

	memset(p, 0, sizeof(*p));
	p->tokens_per_s = p->mfu = p->eta_s = p->hourly = p->cost_so_far = p->cost_projected = -1;
	p->elapsed_s = r->started && now > r->started ? now - r->started : 0;
	if (r->model_tokens_per_s >= 0)
		p->tokens_per_s = r->model_tokens_per_s;
	else if (r->tokens >= 0 && p->elapsed_s > 0)
		p->tokens_per_s = r->tokens / (double)p->elapsed_s;
	if (p->tokens_per_s >= 0 && params > 0 && peak_tflops > 0 && r->gpus > 0)
		p->mfu = 6.0 * params * p->tokens_per_s / ((double)r->gpus * peak_tflops * 1e12);
	if (p->tokens_per_s > 0 && want > 0)
		p->eta_s = fmax(0, want - (r->tokens >= 0 ? r->tokens : 0)) / p->tokens_per_s;
	if (deadline > 0 && r->started) {
		p->has_deadline = true;
		p->deadline_at = r->started + (int64_t)deadline;
	}
	if (cluster_hourly >= 0 && cluster_gpus > 0) {
		p->hourly = cluster_hourly * fmin(1.0, (double)r->gpus / cluster_gpus);
		p->cost_so_far = p->hourly * (double)p->elapsed_s / 3600.0;
		if (p->eta_s >= 0)
			p->cost_projected = p->hourly * ((double)p->elapsed_s + p->eta_s) / 3600.0;
	}
	if (p->has_deadline && p->eta_s >= 0 && (double)now + p->eta_s > (double)p->deadline_at) {
		char *late =
		    timefmt_duration_format((int64_t)ceil((double)now + p->eta_s) - p->deadline_at);
		char at[21];

		sb_addf(&sb, "will miss its deadline (%s) by %s at this pace",
			timefmt_time_format_rfc3339(p->deadline_at, at), late);
		free(late);
	}
	if (budget > 0 && p->hourly > budget)
		sb_addf(&sb, "%sruns at $%.2f an hour, $%.2f over the workload's budget of $%.2f",
			sb.len ? "; " : "", p->hourly, p->hourly - budget, budget);
	p->warning = sb.len ? sb_detach(&sb) : NULL;
	sb_release(&sb);
}

void runprog_release(struct runprog *p)
{
	free(p->warning);
	memset(p, 0, sizeof(*p));
}

static json_t *num(double v, double scale)
{
	return v >= 0 ? json_real(round(v * scale) / scale) : json_null();
}

json_t *runprog_json(const struct runrec *r, const struct runprog *p)
{
	char at[21];

	return json_pack(
	    "{s:s, s:s?, s:s?, s:i, s:i, s:b, s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
	    "s:s?}",
	    "id", r->id, "name", r->name, "group", r->group, "nodes", r->nodes, "gpus", r->gpus,
	    "simulated", r->simulated, "state", runrec_state_name(r->state), "elapsed_seconds",
	    (json_int_t)p->elapsed_s, "tokens", num(r->tokens, 1), "tokens_per_second",
	    num(p->tokens_per_s, 100), "mfu", num(p->mfu, 1e4), "eta_seconds",
	    p->eta_s >= 0 ? json_integer((json_int_t)ceil(p->eta_s)) : json_null(), "deadline",
	    p->has_deadline ? json_string(timefmt_time_format_rfc3339(p->deadline_at, at))
			    : json_null(),
	    "hourly_usd", num(p->hourly, 1e4), "cost_so_far_usd", num(p->cost_so_far, 1e4),
	    "projected_cost_usd", num(p->cost_projected, 1e4), "warning", p->warning);
}
