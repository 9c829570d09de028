/*
 * apply_op.h - one apply or destroy, run whole (Terraform's backend/local
 * opApply): open the run and take the lock, record the expiry, plan (or
 * check a saved plan current and make it again), refuse what the rules
 * refuse (error-level findings, a purchase nobody allowed), ask, carry the
 * plan out with every result journaled, commit once, wait for the nodes'
 * health; and with --wait, after a round the window has not let finish,
 * sleep and run the next (apply_wait.h).
 *
 * Before all that, and before the lock, its admission: what can refuse
 * without spending anything (the approval policy, approval_policy.h; the
 * state key; a plan file's flags, workspace and approvals; a question
 * nobody can answer).
 *
 * It talks to the user only through struct apply_ui, which the command
 * provides: asking, showing the plan and the approvals, and what happens.
 * Nothing here prints or exits.
 */
#ifndef KILN_APPLY_OP_H
#define KILN_APPLY_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "apply_wait.h"
#include "approval_policy.h"
#include "operation.h"

/* How an apply ended, for the command's exit status. */
enum apply_op_status {
	APPLY_OP_OK,	      /* done, or nothing to do */
	APPLY_OP_FAILED,      /* refused, or something failed: said through ui->error */
	APPLY_OP_FINDINGS,    /* the plan has unwaived error-level findings: nothing changed */
	APPLY_OP_UNHEALTHY,   /* done and committed, but a node is unhealthy or silent */
	APPLY_OP_WAIT_TIMEOUT /* --wait: the window does not start in the bound */
};

/* What the user sees and answers; arg is passed back to each. */
struct apply_ui {
	void *arg;
	/*
	 * A refusal or a failure. one_line: a bound or a flag, shown as one
	 * line ("MSG; HINT"); else the message, and its hint on a line below.
	 */
	void (*error)(void *arg, const struct kiln_error *err, bool one_line);
	/* The spec's diagnostics once loaded (warnings, or why it is not valid). */
	void (*loaded)(void *arg, struct diags *d);
	/*
	 * Before the lock: the approvals of plan file, as policy checked them
	 * (res->rep: each one's check); enough: they meet it (then nothing is
	 * refused), else too few count and nothing changes.
	 */
	void (*approvals)(void *arg, const struct approval_policy *policy, const char *file,
			  const struct approval_policy_result *res, bool enough);
	/* The plan this round carries out, before anything is asked or changed. */
	void (*plan)(void *arg, const struct op_run *r);
	/* The plan has n unwaived error-level findings (its kiln.findings): nothing changes. */
	void (*findings)(void *arg, const struct op_run *r, long n);
	/* question ("Do you want to ...?"): true only when the answer is yes. */
	bool (*ask)(void *arg, const char *question);
	/* The executor's progress (op_apply_options' event, started, finished). */
	void (*event)(void *arg, const struct apply_event *ev);
	void (*started)(void *arg);
	void (*finished)(void *arg);
	/*
	 * How the round went: o, what the executor did; or, with o NULL,
	 * nothing to change (moved: the expiry changed all the same, recorded
	 * by commit when that is not NULL).
	 */
	void (*done)(void *arg, const struct op_run *r, const struct op_apply_outcome *o, bool moved,
		     const char *commit);
	/* The wait for the nodes' health begins, bounded by timeout seconds. */
	void (*health_waiting)(void *arg, int64_t timeout);
	/* During it, every second at least: nodes reported of nodes, seconds left (may be NULL). */
	void (*health_tick)(void *arg, size_t reported, size_t nodes, int64_t left_s);
	/* What they reported (health.h's group objects), with the bound waited. */
	void (*health)(void *arg, const json_t *groups, int64_t timeout);
	/* --wait: the next round runs in ms, once window (expiry_windows' object) may have started. */
	void (*waiting)(void *arg, const json_t *window, long ms);
};

struct apply_op_options {
	struct op_options run; /* the spec's vars, the state, targets... (destroy: plan a deletion) */
	const char *operand;   /* the SPEC or PLANFILE operand */
	/* --require-approvals and --trusted-keys; resolved with env_required and env_trusted */
	struct approval_policy *policy;
	const char *env_required;  /* KILN_REQUIRE_APPROVALS, or NULL */
	const char *env_trusted;   /* KILN_TRUSTED_KEYS, or NULL */
	const char *env_workspace; /* KILN_WORKSPACE, or NULL */
	bool can_ask;		   /* standard input is a terminal */
	/*
	 * Set by the admission: the spec file (the operand's, or a plan file's),
	 * the plan file applied (or NULL), that plan read (plan.h) and its
	 * Kiln-Approval trailers that count (apply_op_run releases both), and
	 * whether a state key is set (secrets are read back and sealed); a plan
	 * file's workspace and destroy go into run.
	 */
	const char *spec;
	const char *plan_file;
	json_t *saved;
	json_t *approved;
	bool keep_secrets;
	int64_t ttl;	       /* --ttl, 0 when not given */
	bool allow_purchase;   /* --allow-purchase */
	json_t *waivers;       /* --waive-limit: {LIMIT: REASON}, or NULL; owned by the caller */
	bool auto_approve;     /* do not ask */
	int parallelism;
	int64_t health_timeout; /* seconds to wait for the nodes' health (not a destroy's); 0: do not */
	struct apply_wait *wait; /* --wait, or NULL; its rounds keep to a held plan */
};

/*
 * Admit, then run the apply (o->run.destroy, or a destroy plan file: the
 * destroy) o asks for, whole, every round of --wait included, through ui.
 * o is the caller's, and changed (the admission's fields above):
 * a later round of --wait plans from the spec with saved and approved
 * released (the wait holds the plan's spec and workspace).
 */
enum apply_op_status apply_op_run(struct apply_op_options *o, const struct apply_ui *ui);

#endif
