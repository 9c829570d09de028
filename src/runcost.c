/*
 * runcost.c - a run's share of its lifetime's cost (runcost.h).
 */
#include "runcost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

double runcost_cents(double usd)
{
	return round(usd * 100.0) / 100.0;
}

static int64_t run_end(const struct runrec *r, int64_t now)
{
	return r->ended ? r->ended : now;
}

static int cmp_time(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* One stretch cut at every run's start and end inside it, each piece split. */
static void split_stretch(const struct runcost_stretch *s, const struct runrec *runs,
			  size_t nruns, int64_t now, struct runcost_share *out)
{
	int64_t *cut = xcalloc(2 * nruns + 2, sizeof(*cut));
	size_t n = 0;

	cut[n++] = s->a;
	cut[n++] = s->b;
	for (size_t i = 0; i < nruns; i++) {
		if (runs[i].started > s->a && runs[i].started < s->b)
			cut[n++] = runs[i].started;
		if (run_end(&runs[i], now) > s->a && run_end(&runs[i], now) < s->b)
			cut[n++] = run_end(&runs[i], now);
	}
	qsort(cut, n, sizeof(*cut), cmp_time);
	for (size_t k = 0; k + 1 < n; k++) {
		int64_t a = cut[k], b = cut[k + 1];
		double h = (double)(b - a) / 3600.0, total = 0, scale;

		if (b <= a)
			continue;
		for (size_t i = 0; i < nruns; i++)
			if (out[i].counted && runs[i].started <= a && run_end(&runs[i], now) >= b &&
			    s->gpus > 0)
				total += fmin(1.0, (double)runs[i].gpus / (double)s->gpus);
		scale = total > 1.0 ? 1.0 / total : 1.0;
		for (size_t i = 0; i < nruns; i++) {
			double share;

			if (!out[i].counted || runs[i].started > a || run_end(&runs[i], now) < b)
				continue;
			share = s->gpus > 0 ? fmin(1.0, (double)runs[i].gpus / (double)s->gpus) *
						  scale
					    : 0;
			out[i].hours += h;
			out[i].share_hours += h * share;
			out[i].cost += s->burn * h * share;
			out[i].gpu_hours += (double)s->gpus * h * share;
		}
	}
	free(cut);
}

void runcost_split(const struct runcost_stretch *st, size_t nst, double upfront, double hours,
		   const struct runrec *runs, size_t nruns, int64_t now,
		   struct runcost_share *out)
{
	int64_t first = nst ? st[0].a : 0, last = nst ? st[nst - 1].b : 0;

	memset(out, 0, nruns * sizeof(*out));
	for (size_t i = 0; i < nruns; i++)
		out[i].counted = !runs[i].edited && runs[i].started &&
				 runs[i].started < last && run_end(&runs[i], now) > first;
	for (size_t k = 0; k < nst; k++)
		split_stretch(&st[k], runs, nruns, now, out);
	for (size_t i = 0; i < nruns; i++)
		if (out[i].counted && hours > 0)
			out[i].cost += upfront * out[i].share_hours / hours;
}
