/*
 * operation.h - the operations layer: the real work of a run (Terraform's
 * backend/local, git's sequencer.c). Open the engine, read the recorded
 * state with an interrupted apply's journal replayed, take the lock,
 * refresh, diff, pre-flight, cost, audit, apply, seal secrets, commit and
 * unlock. Commands (cmd_*.c) parse flags, call these, render what they
 * return and choose the exit code.
 *
 * Nothing here prints or exits: a failure comes back in a kiln_error, and
 * what goes wrong on the way out (a secret that cannot be sealed, a lock
 * that cannot be released) goes to the run's report hook. Progress of the
 * log kind (log_debug timings, a replayed journal's warning) goes through
 * log.h, as everywhere in the engine.
 */
#ifndef KILN_OPERATION_H
#define KILN_OPERATION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "apply.h"
#include "engine.h"
#include "takeover.h"
#include "workspace.h"

struct health_tick; /* health.h */

/* What a run is asked to do: the spec, the state it reads and what it plans. */
struct op_options {
	struct spec_options vars; /* --var overrides */
	const char *state;	  /* the state repository (--state), NULL for the default */
	const char *workspace;	  /* -w, NULL for the default */
	int64_t lock_timeout;	  /* seconds to wait for a held lock */
	const char *const *targets;
	size_t ntargets;
	const char *const *replace;
	size_t nreplace;
	/* destroy --include-retained: these retained stores are deleted too */
	const char *const *include_retained;
	size_t ninclude;
	bool refresh; /* read live state first */
	bool destroy; /* plan the deletion of everything */
};

struct op_run {
	struct op_options o;
	const char *spec_path;
	struct store *store;
	struct workspace *ws;
	struct engine *e;
	json_t *state; /* recorded state, journal replayed; a new document before the first apply */
	json_t *overlay; /* what the journal replayed (address -> resource|null), or NULL */
	char head[41];	 /* the workspace head the run read, "" when none */
	json_t *plan;
	struct plan_view view; /* plan's typed view (plan.h), built once by operation_plan */
	char *owner;	       /* the kiln:owner tag of what this run creates, or NULL */
	struct refresh_stats rs;
	/*
	 * Set by commands that only read the plan (plan, cost, audit): operation_plan
	 * drops the recorded state once diffed, so the cost and the findings
	 * reuse its memory (a tenth of a large plan's peak).
	 */
	bool plan_only;
	/*
	 * Set by commands that show what runs (status): operation_plan keeps the
	 * refresh's live map in live (address -> [live...]), NULL without a
	 * refresh; the plan holds only what differs from the record.
	 */
	bool keep_live;
	json_t *live;
	/*
	 * With keep_live: the retained stores that live tagged for the workspace
	 * but are no longer recorded (a destroy released them), priced
	 * (cost_retained_live), for kiln status.
	 */
	json_t *retained;
	/* What goes wrong on the way (sealing, unlocking), for the caller to say; may be NULL. */
	void (*report)(void *arg, const struct kiln_error *err);
	void *report_arg;
	/*
	 * The spec's diagnostics once operation_plan_spec loaded it (warnings, or why
	 * it is not valid), for the caller to show, with report_arg; may be NULL.
	 */
	void (*loaded)(void *arg, struct diags *d);
	/* The targets and replace of a saved plan (operation_saved_replan), owned. */
	const char **saved_addrs;
	/* Trailers (strings) operation_commit adds after the ledger's ("Kiln-Reap-Reason: idle"),
	 * or NULL.
	 */
	json_t *trailers;
	/* Mean GPU utilization (%) this run measured (reap: over the idle window), for the ledger.
	 */
	bool has_gpu_util;
	double gpu_util;
	/*
	 * Set by operation_open_engine: the engine's spec is a stand-in (kiln sprawl),
	 * so the workspace may record another cluster or cloud than it names.
	 */
	bool stand_in;
	/* The counts operation_commit's summary line gives ("5 adopted"), caller frees; NULL:
	 * operation_summary_counts. */
	char *(*commit_counts)(const struct apply_result *res);
};

/*
 * What every operation says to the user, through the command that runs it
 * (Terraform's View): a refusal or a failure (its message names the cause,
 * its hint the fix), and the spec's diagnostics once loaded. Each
 * operation's own interface (apply_ui, reap_ui, repair_ui...) adds what it
 * asks and shows.
 */
struct op_ui {
	void *arg;
	void (*error)(void *arg, const struct kiln_error *err);
	void (*loaded)(void *arg, struct diags *d);
};

/*
 * Load, validate and expand the spec into r (cleared first; plan_only and
 * the hooks kept). -1 on failure: with err, or with err empty and d holding
 * why the spec is not valid. d is the caller's to print and release either
 * way.
 */
int operation_load(struct op_run *r, const struct op_options *o, const char *spec_path,
		   struct diags *d, struct kiln_error *err);
/*
 * Open the store (creating a local one when lock), the workspace, take the
 * lock when lock is set (for operation, "apply", "destroy"...), and read
 * the recorded state with the journal of an interrupted apply replayed.
 * Without lock and before any state repository exists, plans against an
 * empty state.
 */
int operation_open_state(struct op_run *r, bool lock, const char *operation,
			 struct kiln_error *err);
/*
 * operation_open_state with the lock over e (r owns it from now on, even on
 * failure) instead of a spec's engine: kiln sprawl's runs, whose engine
 * (engine_open_scope) names only the cluster and workspace of what they
 * delete or adopt. The state's cluster and cloud are not checked against
 * the stand-in: the caller checks what it needs. Hooks in r are kept.
 */
int operation_open_engine(struct op_run *r, const struct op_options *o, struct engine *e,
			  const char *operation, struct kiln_error *err);
/*
 * operation_load and operation_open_state with ui as r's hooks (what goes wrong on the
 * way out goes to ui->error too): -1 after telling ui->error why not (a
 * spec that is not valid: "SPEC is not valid; nothing was planned", its
 * diagnostics shown through ui->loaded). operation_close r after, either way.
 */
int operation_open(struct op_run *r, const struct op_options *o, const char *spec_path, bool lock,
		   const char *operation, const struct op_ui *ui);
/* Refresh (unless refresh is off), diff, pre-flight, IAM delta, cost and audit into r->plan. */
int operation_plan(struct op_run *r, struct kiln_error *err);
/*
 * The plan of a command that changes nothing (plan, cost, audit, status):
 * operation_load (its diagnostics to r->loaded), operation_open_state without the lock,
 * operation_plan. -1 on failure: with err, or with err empty when the spec is not
 * valid (as r->loaded was shown). operation_close or operation_finish r after, either way.
 */
int operation_plan_spec(struct op_run *r, const struct op_options *o, const char *spec_path,
			struct kiln_error *err);

/* What operation_takeover did. */
struct op_takeover_result {
	bool nothing; /* every live resource of the scope is this state's: nothing was done */
	/*
	 * {"address", "id", "type", "from", "owner"} of each resource taken
	 * over and recorded (takeover.h), committed unless commit_failed; a
	 * new reference, or NULL.
	 */
	json_t *taken;
	/*
	 * A check or a claim failed: take_err says why, as r->report was told
	 * when it happened (what was taken before a claim failed is still
	 * committed).
	 */
	bool take_failed;
	struct kiln_error take_err;
	bool commit_failed; /* sealing or the commit failed: commit_err says why */
	struct kiln_error commit_err;
	char commit[41]; /* the commit made, "" when none */
};

/*
 * kiln state takeover over r, opened with its lock: refresh the spec's
 * scope, take over what another state owns that f picks (takeover.h), seal
 * the secrets and commit it, one Kiln-Takeover trailer per resource. -1
 * with err when the refresh failed (nothing done); else 0 with out saying
 * what happened. Release out with operation_takeover_result_release.
 */
int operation_takeover(struct op_run *r, const struct takeover_filter *f,
		       struct op_takeover_result *out, struct kiln_error *err);
void operation_takeover_result_release(struct op_takeover_result *out);
/* Close the provider, unlock and free; then r is zeroed. */
void operation_close(struct op_run *r);
/*
 * operation_close for a command whose process exits next (plan): the lock, the
 * workspace and the store are released and the provider closed (its
 * credentials wiped), but in a release build the documents (spec, state,
 * live resources, plan) are left to the exit.
 * Freeing a 10,000-resource plan node by node was a seventh of its CPU
 * time, for memory the kernel takes back at once. Sanitizer builds (the
 * test build) free everything, so LeakSanitizer still checks every owner.
 */
void operation_finish(struct op_run *r);

/*
 * The kiln:owner tag of what a run creates or claims: "NAME EMAIL at TIME
 * from STATE" (STATE the repository's URL, or HOST:PATH), with what a tag
 * cannot hold as '_'; NULL when the author cannot be told. Caller frees.
 */
char *operation_owner(struct store *s);
/*
 * Before anything changes: the state key is valid and is the one every
 * sealed value of state was sealed with. -1 with err naming both keys and,
 * when kiln can see it, where the state's key is.
 */
int operation_key_check(const json_t *state, struct kiln_error *err);
/*
 * Secrets go into state sealed with KILN_STATE_KEY; without a key they are
 * dropped, with a warning. -1 with err when the key is malformed or sealing
 * failed: the secrets are dropped then too, never kept in plaintext.
 */
int operation_seal_secrets(json_t *state, struct kiln_error *err);

/* A saved plan is applied only to the spec and the state it was made from: -1 with err if not. */
int operation_saved_check(struct op_run *r, const json_t *saved, const char *file,
			  struct kiln_error *err);
/*
 * The plan of the saved plan's inputs, made again into r->plan: the
 * destroy, refresh, targets and replace it was made with, refreshing as it
 * did. Then plan_match it against saved: -1 with err from operation_plan, or 1
 * with err from plan_match when the file says anything else.
 */
int operation_saved_replan(struct op_run *r, const json_t *saved, const char *file,
			   struct kiln_error *err);
/*
 * The expiry an apply records (expiry.h), from the spec's ttl or ttl_flag
 * (seconds, 0 for none), set in r->state and in the scope that tags every
 * create.
 */
int operation_expiry_prepare(struct op_run *r, int64_t ttl_flag, struct kiln_error *err);
/*
 * Record in r->state the spec whose idle: policy kiln reap measures against
 * ("idle": {"spec", "spec_text"}), or remove it when the spec has none.
 */
void operation_idle_prepare(struct op_run *r);
/*
 * Record in r->state the spec kiln reap destroys with when a capacity
 * window (a Capacity Block) ends the cluster ("window": {"spec",
 * "spec_text"}): with no ttl, "expiry" holds none. Removed when the spec
 * buys no block.
 */
void operation_window_prepare(struct op_run *r);
/* No operation, no drift and no replayed journal: an apply would change nothing. */
bool operation_plan_is_empty(const struct op_run *r);
/*
 * The number of unwaived error-level findings of r->plan, auditing a plan
 * saved by a kiln without the audit first; -1 with err.
 */
long operation_plan_errors(struct op_run *r, struct kiln_error *err);

/* "N created, N updated, N replaced, N deleted[, ...]" of an apply. Caller frees. */
char *operation_summary_counts(const struct apply_result *res);
/*
 * One commit for the whole apply, when the state changed (*commit its id,
 * caller frees; NULL when nothing was committed). saved: the plan file
 * applied, whose digest the commit names; approved: its Kiln-Approval
 * trailers. Sealing problems go to the report hook.
 */
int operation_commit(struct op_run *r, const char *op, const struct apply_result *res,
		     const json_t *saved, const json_t *approved, char **commit,
		     struct kiln_error *err);

/* What the plan buys up front (its cost's "upfront"), 0 when nothing. */
double operation_plan_upfront(const json_t *plan);

/*
 * r's plan against the team budgets and quotas (quota.h): 0 within them
 * (with reserve, its claim written; the waivers used go to r->trailers),
 * 1 when a limit is broken (err names it), -1 with err. waivers: {LIMIT:
 * REASON} of --waive-limit, or NULL.
 */
int operation_quota(struct op_run *r, bool reserve, const json_t *waivers, struct kiln_error *err);
/*
 * operation_quota without a claim or a waiver: whether an apply of r's plan would
 * be held to a broken limit (kiln plan says so after the plan). A command
 * may ask this of a plan it only reads; claiming is apply_op_run's.
 */
int operation_quota_check(struct op_run *r, struct kiln_error *err);

/*
 * The first change of r's plan that buys something up front (creates a
 * type the provider marks purchase, provider.h; not one it adopts, bought
 * already), or NULL.
 */
const struct plan_change *operation_plan_purchase(const struct op_run *r);

struct op_apply_options {
	int parallelism;
	bool keep_secrets; /* a state key is set: secrets are read back and sealed */
	void (*event)(void *arg, const struct apply_event *ev);
	void *event_arg;
	/* Around the executor, after the journal opened: the caller's display. */
	void (*started)(void *arg);
	void (*finished)(void *arg);
	const json_t *saved;	/* the plan file applied, or NULL */
	const json_t *approved; /* its Kiln-Approval trailers, or NULL */
};

struct op_apply_outcome {
	struct apply_result res;
	char *commit;	    /* the commit made, or NULL */
	bool commit_failed; /* the executor ran, but its commit failed: err says why */
};

/*
 * Carry out r->plan: open the journal, run the executor over the plan
 * with every result journaled as it lands (while it runs, the first
 * signal winds it down: signals.h), then record "created" (or drop the
 * expiry of an empty state), commit (op "apply", "destroy", "sprawl adopt"
 * or "sprawl destroy") and close the journal. -1 with err when nothing ran
 * (the journal did not open);
 * else 0, with out->commit_failed and err when the commit failed. Release
 * out with operation_apply_outcome_release.
 */
int operation_apply(struct op_run *r, const char *op, const struct op_apply_options *ao,
		    struct op_apply_outcome *out, struct kiln_error *err);
void operation_apply_outcome_release(struct op_apply_outcome *out);

/*
 * After an apply (committed): wait up to timeout_s for the nodes of the
 * node groups at addresses (health_touched: those r->plan created, updated
 * or replaced) to report their health, polling through their type's wait
 * (every 5 s; 100 ms on a simulated provider). *groups: health.h's
 * objects, one per group; tick (may be NULL) hears how it goes. -1 with
 * err when a provider call failed.
 */
int operation_health_wait(struct op_run *r, const json_t *addresses, int64_t timeout_s,
			  const struct health_tick *tick, json_t **groups, struct kiln_error *err);

struct op_repair_outcome {
	json_t *done; /* per target repaired: {"address", "replaced": [ids], "added": [ids]} */
	char *commit; /* the commit made, or NULL */
	bool failed;  /* a group's replacement failed: err says why; the others are kept */
	bool commit_failed; /* the replacements ran, but the commit failed: err says why */
};

/*
 * kiln repair, under the lock: replace the unhealthy nodes of each target
 * (repair.h) in turn, stopping at the first that fails, then one commit
 * (op "repair") naming the replaced ids in a Kiln-Replaced trailer per
 * group. 0 with out filled (out->failed, out->commit_failed with err);
 * release out with operation_repair_outcome_release.
 */
int operation_repair(struct op_run *r, const json_t *targets, struct op_repair_outcome *out,
		     struct kiln_error *err);
void operation_repair_outcome_release(struct op_repair_outcome *out);

/* operation_destroy: the locked check said stop. */
#define OP_STOPPED 1

/*
 * An unattended destroy of r, opened with its lock (kiln reap): ask locked
 * (0 go on, else stop: OP_STOPPED), plan and, when there is anything to
 * do, apply. 0 with out filled (all zero when there was nothing to do);
 * OP_STOPPED; or -1 with err (out->commit_failed when the executor ran).
 */
int operation_destroy(struct op_run *r, const struct op_apply_options *ao,
		      int (*locked)(struct op_run *r, void *arg), void *arg,
		      struct op_apply_outcome *out, struct kiln_error *err);

/*
 * The least-privilege policy document kiln itself needs to plan, apply and
 * destroy e's spec (kiln iam-policy): the list, read and delete actions of
 * every type, the create and update actions of the types the spec uses, as
 * the provider scopes them. NULL when the provider is simulated and needs
 * no permissions. Caller frees.
 */
char *operation_iam_policy(struct engine *e, bool report_actual);

#endif
