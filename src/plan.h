/*
 * plan.h - the plan document, its renderings and plan files.
 *
 * A plan is one jansson object: the JSON that `kiln plan --json` prints, that
 * a plan file holds and that apply executes. It uses Terraform's `show -json`
 * names where the concept is the same, so tools reading Terraform plans read
 * it; kiln's own parts sit under "kiln" keys. man/kiln-plan-json.5 and
 * tests/plan-schema.json describe it; this is a summary:
 *
 * {
 *   "format_version": "1.2",
 *   "kiln_version": "0.1.0",
 *   "resource_changes": [CHANGE...],   every address the plan knows, sorted
 *   "resource_drift": [CHANGE...],     live differs from recorded
 *   "errored": false,
 *   "kiln": {
 *     "plan_version": 1,
 *     "created": "2026-11-30T01:02:03Z",
 *     "cluster": "demo", "workspace": "default",
 *     "provider": "sim", "simulated": true,
 *     "spec": {"file": "kiln.yaml", "digest": "sha256:HEX"},
 *     "state": {"commit": "HEX" | null, "serial": 3, "lineage": "UUID" | null,
 *               "journal": 2},   changes replayed from an interrupted apply (absent: 0)
 *     "destroy": false, "refresh": true,
 *     "targets": ["addr"...], "replace": ["addr"...],
 *     "summary": {"create": 1, "update": 0, "replace": 0, "delete": 0,
 *                 "adopt": 0, "drift": 0, "no_op": 4},
 *     "changes": true,          any action other than no-op, an adoption, or drift
 *     "notes": ["text"...],     e.g. the catalog choice, retained stores
 *     "warnings": ["text"...]
 *   }
 * }
 *
 * CHANGE:
 * {
 *   "address": "sim_node_group.trainers", "mode": "managed",
 *   "deposed": "ID",                     only on a duplicate: another live object
 *                                        carrying this address, to be deleted
 *   "type": "sim_node_group", "name": "trainers", "provider_name": "sim",
 *   "change": {
 *     "actions": ["no-op"] | ["create"] | ["update"] | ["delete", "create"] | ["delete"],
 *     "before": {ATTRS} | null,          live (or recorded) attributes
 *     "after": {ATTRS} | null,           desired attributes
 *     "after_unknown": {"attr": true},   computed attributes known only after apply
 *     "before_sensitive": {"attr": true} | false,
 *     "after_sensitive": {"attr": true} | false,
 *     "replace_paths": [["attr"]...],    present with a replace
 *     "importing": {"id": "ID"}          present when adopting a tagged live resource
 *   },
 *   "action_reason": "replace_because_cannot_update" | "replace_by_request"
 *                  | "replace_because_dependency" | "delete_because_no_resource_config"
 *                  | "delete_because_duplicate",   (absent when not needed)
 *   "kiln": {
 *     "id": "ID" | null,                 the live or recorded id
 *     "deps": ["addr"...],               desired deps (recorded deps for a delete)
 *     "attributes": [{"name": "count", "before": 2, "after": 4,
 *                     "policy": "live" | "replace" | "stop",
 *                     "sensitive": false, "why": "text"}],
 *                                        every attribute that changes
 *     "reason": "text",                  one line a person reads
 *     "retain": true                     a retained store: released from state, not deleted
 *   }
 * }
 *
 * Sensitive values appear as null in before/after, with *_sensitive saying
 * which; renderings print "(sensitive)".
 */
#ifndef KILN_PLAN_H
#define KILN_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "util.h"

#define PLAN_FORMAT_VERSION "1.2"
#define PLAN_VERSION 1

/* change.actions, one value per action list kiln executes. */
enum plan_action {
	PLAN_NO_OP,	    /* ["no-op"] */
	PLAN_CREATE,	    /* ["create"] */
	PLAN_UPDATE,	    /* ["update"] */
	PLAN_DELETE_CREATE, /* ["delete", "create"]: a replace */
	PLAN_CREATE_DELETE, /* ["create", "delete"]: a replace, the new one made first */
	PLAN_DELETE,	    /* ["delete"] */
};

/*
 * The typed view of one CHANGE: its members as the plan holds them,
 * borrowed (valid while the plan holds the change and the member is not
 * set again). A member absent from the plan is NULL; before and after are
 * the plan's values, JSON null included.
 */
struct plan_change {
	const json_t *json; /* the CHANGE object itself */
	const char *address, *type, *name;
	const char *deposed;	   /* another live object carrying the address, or NULL */
	const char *action_reason; /* or NULL */
	enum plan_action action;
	const json_t *body; /* "change" */
	const json_t *actions, *before, *after, *after_unknown, *before_sensitive, *after_sensitive,
	    *replace_paths, *importing;
	const json_t *kiln;			      /* the change's "kiln" object, or NULL */
	const char *id;				      /* kiln.id, NULL when null or absent */
	const json_t *deps, *kiln_after, *attributes; /* kiln.deps, kiln.after, kiln.attributes */
	const json_t *created_only; /* kiln.created_only: deps and afters needed only created */
	const char *reason;	    /* kiln.reason */
	bool retain;		    /* kiln.retain */
};

/* The typed view of a plan's changes: resource_changes, then resource_drift. */
struct plan_view {
	struct plan_change *changes;
	size_t nchanges;
	struct plan_change *drift;
	size_t ndrift;
};

/*
 * Build v over plan (zeroed first): every change's address, type and name a
 * non-empty string and its actions a list kiln knows, else -1 with err
 * naming the change's JSON path and the fault, as a plan file's check does.
 * v borrows from plan: release it before plan.
 */
int plan_view_build(struct plan_view *v, const json_t *plan, struct kiln_error *err);
void plan_view_release(struct plan_view *v);
/* The action of a known action list; a list plan_view_build refuses is PLAN_NO_OP. */
enum plan_action plan_action_of(const json_t *actions);
/* The action deletes (a delete or a replace) / creates (a create or a replace). */
bool plan_action_deletes(enum plan_action a);
bool plan_action_creates(enum plan_action a);
/* A member of the plan's own "kiln" object (cost, findings, summary...), or NULL. */
const json_t *plan_kiln(const json_t *plan, const char *key);
/* The same member of a plan its caller owns and may change (kiln.cost's run line). */
json_t *plan_kiln_edit(json_t *plan, const char *key);
/* Set a member of the plan's own "kiln" object to value (stolen). */
void plan_kiln_set(json_t *plan, const char *key, json_t *value);
/* kiln.destroy: a plan of the deletion of everything. */
bool plan_is_destroy(const json_t *plan);

/*
 * Typed readers of the plan's own facts (its "kiln" object), for commands
 * to read a plan by name instead of by key, as state.h's do for a state.
 * Each returns NULL (or false) when the member is absent or not of its
 * type; what they return is borrowed from plan.
 */
const char *plan_workspace(const json_t *plan);	  /* kiln.workspace */
const char *plan_spec_file(const json_t *plan);	  /* kiln.spec.file */
const char *plan_spec_digest(const json_t *plan); /* kiln.spec.digest */
/* kiln.changes: any action other than no-op, an adoption, or drift. */
bool plan_has_changes(const json_t *plan);
/* kiln.summary: the count of each action. */
const json_t *plan_summary(const json_t *plan);
/* kiln.cost (cost.h says its members), an object. */
const json_t *plan_cost(const json_t *plan);
/* kiln.cost.hourly_before / hourly_after: what runs now, and after apply, an hour (USD). */
bool plan_hourly_before(const json_t *plan, double *usd);
bool plan_hourly_after(const json_t *plan, double *usd);
/* kiln.findings (audit.h writes them), an array, and kiln.findings_summary. */
const json_t *plan_findings(const json_t *plan);
const json_t *plan_findings_summary(const json_t *plan);

/* One finding of kiln.findings, typed: borrowed from the finding. */
struct plan_finding {
	const char *rule;     /* "KILN-NET-001" */
	const char *severity; /* "error", "warning", "info" */
	const char *message;
	const char *address; /* the resource, or NULL: a finding of the spec */
	const char *spec;    /* FILE:LINE:COL in the spec */
	bool waived;	     /* a waive: entry covers it */
};
void plan_finding_read(const json_t *finding, struct plan_finding *out);

/* Human text: one block per changed resource, drift, notes, summary line. */
void plan_render_text(FILE *out, const json_t *plan, bool color);
/* A pull-request comment: summary table, collapsible details, warnings. */
void plan_render_markdown(FILE *out, const json_t *plan);
/* Markdown text outside code: escaped, no table cell, tag or entity of its own, one line. */
void plan_md_text(FILE *out, const char *s);
/* "Plan: 1 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt." */
char *plan_summary_line(const json_t *plan);

/*
 * The canonical text of a plan: compact, sorted keys, ASCII only, reals to
 * 17 digits. What plan_digest hashes and what an approval signs. Caller frees.
 */
char *plan_canonical(const json_t *plan);
/* "sha256:HEX" of the canonical (sorted, compact) document. Caller frees. */
char *plan_digest(const json_t *plan);

/*
 * A plan file: {"kiln_plan_file": 1, "digest": "sha256:..",
 * "approvals": [APPROVAL...], "plan": PLAN}, written atomically (temp file +
 * rename), mode 0600. "approvals" (approve.h) sits outside the digest, so
 * approving a plan does not change it; it is written only when not empty.
 *
 * APPROVAL: {"signer": "..", "time": "2026-11-30T05:40:00Z",
 *            "key_id": "sha256:HEX", "algorithm": "ed25519",
 *            "public_key": "BASE64", "signature": "BASE64"}
 * The shape (exactly these six string members) is checked here; whether the
 * strings are well formed and the signature verifies is approve.c's.
 */
int plan_file_write(const char *path, const json_t *plan, struct kiln_error *err);
/* The same with approvals (an array, or NULL for none). */
int plan_file_write_approvals(const char *path, const json_t *plan, const json_t *approvals,
			      struct kiln_error *err);
/*
 * Read and check a plan file: its digest matches, its versions are ones this
 * kiln reads, and its shape is what plan.h describes. *out is the plan.
 * 0, or -1 with err naming the file and the fault.
 */
int plan_file_read(json_t **out, const char *path, struct kiln_error *err);
/* The same, and *approvals (when not NULL) the approvals array, empty when there are none. */
int plan_file_read_approvals(json_t **out, json_t **approvals, const char *path,
			     struct kiln_error *err);
/*
 * Whether file (a plan read from the plan file path) says what derived, the
 * plan made again from the same spec and state commit, says: the same
 * changes and drift, and for each the same actions, values set, objects
 * touched and dependencies (plan_match.c lists the fields). 0, or -1 with
 * err naming the first address and field that differ and both values.
 */
int plan_match(const json_t *file, const json_t *derived, const char *path, struct kiln_error *err);
/*
 * Terraform's values representation of the plan's resource_changes
 * (plan_values.c), as `terraform show -json` writes it for readers that look
 * for resources there: planned_values, {"root_module": {"resources": [R...]}}
 * with R {address, mode, type, name, provider_name, values,
 * sensitive_values} for every change but a delete, values its after without
 * the after_unknown ones; and prior_state, {"format_version": "1.0",
 * "values": {"root_module": {"resources": [R...]}}}, R from its before, for
 * every change with one (but a deposed duplicate). New references.
 */
void plan_values_views(const json_t *plan, json_t **planned, json_t **prior);
/* Set the plan's planned_values and prior_state to those views. */
void plan_values_add(json_t *plan);
/*
 * A plan file's planned_values and prior_state (when it has them) are still
 * those views of its own resource_changes: 0, or -1 with err naming path and
 * the key edited. plan_match checks this once the changes match.
 */
int plan_values_check(const json_t *plan, const char *path, struct kiln_error *err);
/* True when path holds a plan file rather than a spec (peeks at the start). */
bool plan_file_is(const char *path);
/*
 * A plan file made for workspace ws (NULL: none, stale against every state
 * commit) is used only there: flag_ws (-w), or else env_ws
 * (KILN_WORKSPACE), when given, must name it. 0, or -1 with err (one line
 * and its hint: a flag's refusal).
 */
int plan_file_workspace_check(const char *file, const char *ws, const char *flag_ws,
			      const char *env_ws, struct kiln_error *err);

#endif
