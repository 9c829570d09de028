/*
 * iam.h - the plan's IAM delta: for every role, the (action, resource)
 * pairs its policy grants after the plan, and those granted and revoked
 * against the policy it holds now, with widening flagged, so a reviewer
 * sees privilege changes without reading policy JSON.
 *
 * Policies come from the provider's role_policy hook (compiled from the
 * spec, or held by the live or recorded role); this file reads IAM policy
 * documents, the format every cloud kiln targets uses, and names no cloud.
 */
#ifndef KILN_IAM_H
#define KILN_IAM_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "engine.h"
#include "plan.h"

/*
 * The Allow pairs of a policy document: a new sorted, duplicate-free array
 * of {"action", "resource"}. NotAction or NotResource grant everything but
 * what they name: they become "*". NULL when text is not a policy document.
 */
json_t *iam_policy_pairs(const char *text);

/*
 * Whether pattern (IAM's "*" and "?" wildcards, actions compared without
 * regard to case) covers value.
 */
bool iam_pattern_covers(const char *pattern, const char *value, bool fold_case);

/*
 * Add "iam_delta" to the plan's "kiln" object. live maps address ->
 * [live...] (NULL without refresh); recorded maps address -> recorded
 * resource; the policy held before the plan is the first live object's,
 * else the recorded one's.
 */
void iam_delta_plan(const struct engine *e, json_t *plan, const struct plan_view *v,
		    const json_t *live, const json_t *recorded);

/* The plan's "IAM permissions" section; nothing when no role changes. */
void iam_render_text(FILE *out, const json_t *plan, bool color);
void iam_render_markdown(FILE *out, const json_t *plan);

#endif
