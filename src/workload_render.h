/*
 * workload_render.h - the plan's Workload section (kiln.workload), for
 * kiln plan, kiln show and --markdown, and the run's line of kiln cost.
 */
#ifndef KILN_WORKLOAD_RENDER_H
#define KILN_WORKLOAD_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Nothing when the plan has no kiln.workload. */
void workload_render_text(FILE *out, const json_t *plan, bool color);
void workload_render_markdown(FILE *out, const json_t *plan);
/* "Run: one training run ... costs $X" from kiln.cost.run; nothing without one. */
void workload_render_run_cost(FILE *out, const json_t *plan);

#endif
