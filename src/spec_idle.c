/*
 * spec_idle.c - the idle: policy, at the top level or in a compute group:
 * `idle: {gpu_below: 10%, for: 30m, action: down}` (kiln-spec(5), idle).
 * Shape and ranges only; kiln reap and kiln status act on it.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "spec_load.h"
#include "timefmt.h"

const char *const spec_idle_keys[] = {"gpu_below", "for", "action"};

/* "10%", "10" or "7.5%": the percentage, or -1 when it is none. */
static double percent(const char *s)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	v = strtod(s, &end);
	if (*end == '%')
		end++;
	return *end ? -1 : v;
}

void spec_load_idle(struct loader *ld, const struct ynode *n, const char *path,
		    struct spec_idle *out)
{
	const struct ynode *v;
	char *sub, *text, *w;
	int action = 0;

	out->gpu_below = 10;
	out->for_seconds = 30 * 60;
	if (!n || !spec_expect_map(ld, n, path))
		return;
	out->set = true;
	w = xasprintf("in %s", path);
	spec_check_keys(ld, n, w, spec_idle_keys, ARRAY_SIZE(spec_idle_keys));
	free(w);
	sub = xasprintf("%s.gpu_below", path);
	if ((v = ydoc_get(n, "gpu_below")) && (text = spec_scalar(ld, v, sub))) {
		double p = percent(text);

		if (p < 0)
			diag_hint(spec_err(ld, v, "%s must be a percentage, like 10%%, not '%s'",
					   sub, text),
				  "the GPU utilization under which the nodes count as idle");
		else if (p > 100)
			diag_hint(
			    spec_err(ld, v, "%s must be at most 100%%, not %s", sub, text),
			    "it is a GPU utilization: write 10%% to reap GPUs busy less than a "
			    "tenth of the time");
		else if (p == 0)
			diag_hint(spec_err(ld, v, "%s must be more than 0%%", sub),
				  "no GPU is ever under 0%%: write 10%%, or remove idle");
		else
			out->gpu_below = p;
		free(text);
	}
	free(sub);
	sub = xasprintf("%s.for", path);
	if (spec_get_duration(ld, n, "for", sub, &out->for_seconds) == GOT_OK &&
	    out->for_seconds < SPEC_METRIC_PERIOD) {
		char *d = timefmt_duration_format(out->for_seconds);

		diag_hint(spec_err(ld, ydoc_get(n, "for"),
				   "%s %s is shorter than the metric period (1m): utilization is "
				   "sampled once a minute",
				   sub, d),
			  "write 1m or more; 30m is usual");
		free(d);
	}
	free(sub);
	sub = xasprintf("%s.action", path);
	spec_get_enum(ld, n, "action", sub, false, spec_idle_actions, ARRAY_SIZE(spec_idle_actions),
		      &action);
	free(sub);
}
