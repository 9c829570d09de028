/*
 * apply_op.h - one apply or destroy, run whole (Terraform's backend/local
 * opApply): open the run and take the lock, record the expiry, plan (or
 * check a saved plan current and make it again), refuse what the rules
 * refuse (error-level findings, a purchase nobody allowed), ask, carry the
 * plan out with every result journaled, commit once, wait for the nodes'
 * health; and with --wait, after a round the window has not let finish,
 * sleep and run the next (apply_wait.h).
 *
 * It talks to the user only through struct apply_ui, which the command
 * provides: asking, showing the plan, and what happens. Nothing here
 * prints or exits. What is refused before the lock (the approval policy,
 * a plan file's approvals) is the command's, through approval_policy.h.
 */
#ifndef KILN_APPLY_OP_H
#define KILN_APPLY_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "apply_wait.h"
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
	/* What they reported (health.h's group objects), with the bound waited. */
	void (*health)(void *arg, const json_t *groups, int64_t timeout);
	/* --wait: the next round runs in ms, once window (expiry_windows' object) may have started. */
	void (*waiting)(void *arg, const json_t *window, long ms);
};

struct apply_op_options {
	struct op_options run; /* the spec's vars, the state, targets... (destroy: plan a deletion) */
	const char *spec;      /* the spec file */
	const char *plan_file; /* the plan file applied, or NULL */
	json_t *saved;	       /* that plan, read (plan.h), or NULL; apply_op_run releases it */
	json_t *approved;      /* its Kiln-Approval trailers that count, or NULL; released too */
	int64_t ttl;	       /* --ttl, 0 when not given */
	bool allow_purchase;   /* --allow-purchase */
	json_t *waivers;       /* --waive-limit: {LIMIT: REASON}, or NULL; owned by the caller */
	bool auto_approve;     /* do not ask */
	int parallelism;
	bool keep_secrets;	/* a state key is set: secrets are read back and sealed */
	int64_t health_timeout; /* seconds to wait for the nodes' health; 0: do not */
	struct apply_wait *wait; /* --wait, or NULL; its rounds keep to a held plan */
};

/*
 * Run the apply (o->run.destroy: the destroy) o asks for, whole, every
 * round of --wait included, through ui. o is the caller's, and changed:
 * a later round of --wait plans from the spec with saved and approved
 * released (the wait holds the plan's spec and workspace).
 */
enum apply_op_status apply_op_run(struct apply_op_options *o, const struct apply_ui *ui);

#endif
