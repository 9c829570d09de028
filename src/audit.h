/*
 * audit.h - policy findings over a plan: rules with stable ids, waivers,
 * and their renderings (text, Markdown, SARIF).
 *
 * A finding is a rule that fired on one part of the spec or one resource of
 * the plan. The plan's "kiln" object carries them (kiln-plan-json(5)):
 *
 *   "findings": [{"rule": "KILN-NET-002", "severity": "error"|"warning"|"info",
 *                 "address": "aws_security_group.main" | null,
 *                 "spec": "network.ingress[0]", "file": "kiln.yaml",
 *                 "line": 12, "column": 7, "message": "...", "fix": "...",
 *                 "checkov": "CKV_AWS_24" | null, "trivy": "AVD-AWS-0107" | null,
 *                 "waived": {"reason": "...", "until": "2027-01-31" | null}}]
 *   "findings_summary": {"error": N, "warning": N, "info": N, "waived": N}
 *
 * "waived" is present only on a waived finding, which stays in the list and
 * counts under "waived", not under its severity. The rules read the spec and
 * the plan only (resource_changes, and kiln.cost and kiln.iam_delta when the
 * plan has them); none calls a cloud. man/kiln-rules.7 is the catalogue.
 */
#ifndef KILN_AUDIT_H
#define KILN_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "plan.h"
#include "provider.h"
#include "spec.h"
#include "util.h"

struct audit_rule {
	const char *id;	      /* "KILN-S3-001": never renumbered, never reused */
	const char *severity; /* "error", "warning" or "info" */
	const char *title;    /* one line: what is wrong */
	const char *why;      /* why it matters */
	const char *fix;      /* what to change */
	const char *checkov;  /* the equivalent Checkov id, or NULL */
	const char *trivy;    /* the equivalent Trivy (AVD) id, or NULL */
};

extern const struct audit_rule audit_rules[];
extern const size_t audit_nrules;

/* The rule with this id, or NULL. */
const struct audit_rule *audit_rule_find(const char *id);

/*
 * Add "findings" and "findings_summary" to plan's "kiln" object from the
 * spec and the plan (its resource_changes through v, its view; kiln.cost,
 * kiln.iam_delta).
 * Replaces any findings already there. -1 with err only when KILN_NOW (the
 * clock waivers are judged by, for tests) is malformed.
 */
int audit_plan(const struct spec *spec, const struct provider *prov, json_t *plan,
	       const struct plan_view *v, struct kiln_error *err);

/*
 * Text block for `kiln plan` / `kiln show` ("Findings" section; nothing when
 * none) and Markdown for --markdown.
 */
void audit_render_text(FILE *out, const json_t *plan, bool color);
void audit_render_markdown(FILE *out, const json_t *plan);

/* How many unwaived error-level findings (apply refuses a plan with any). */
size_t audit_errors(const json_t *plan);

/*
 * A SARIF 2.1.0 log of the plan's findings (new reference): every rule of
 * the catalogue under runs[0].tool.driver.rules, one result per finding,
 * waived ones with an external suppression. Results name their file
 * relative to root (an absolute directory; NULL: the working directory),
 * under the uriBaseId %SRCROOT% that originalUriBaseIds maps to root.
 */
json_t *audit_sarif(const json_t *plan, const char *root);

/*
 * The source root a SARIF log's paths are relative to for a spec: the
 * nearest directory above it holding .git (the repository code scanning
 * uploads for), else the working directory when the spec is under it,
 * else the spec's own directory. Absolute, ending with '/'. Caller frees.
 */
char *audit_source_root(const char *spec);

/*
 * What the plan's audit would report as errors about the spec's waivers
 * alone (no reason, expired today, an unknown rule: KILN-WAIVE-001 to 003),
 * as errors in d at each waiver, for `kiln validate`. -1 with err only
 * when KILN_NOW is malformed.
 */
int audit_check_waivers(const struct spec *spec, struct diags *d, struct kiln_error *err);

/*
 * Today (UTC) as "YYYY-MM-DD" into out: from KILN_NOW (an RFC 3339 time,
 * for tests) when set, else the clock. -1 with err when KILN_NOW is bad.
 */
int audit_today(char out[11], struct kiln_error *err);

#endif
