/*
 * apply_op.c - one apply or destroy, run whole; see apply_op.h. Owns the
 * order of a run's steps and which rule is asked where; the steps are the
 * operations layer's (operation.h), the rules purchase.h's and
 * apply_wait.h's. Its own words are the question and the refusals of a
 * step (a spec not valid, a plan file no longer current, no "yes"), each
 * a kiln_error handed to the ui.
 */
#include "apply_op.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crypt.h"
#include "health.h"
#include "log.h"
#include "plan.h"
#include "purchase.h"
#include "signals.h"
#include "state.h"

/* One apply_op_run: what it was asked, and whom it tells. */
struct apply_op {
	struct apply_op_options *o;
	const struct apply_ui *ui;
	bool executed; /* this round reached the rules before the executor: --wait may follow */
};

static void say(const struct apply_op *op, const struct kiln_error *err, bool one_line)
{
	op->ui->error(op->ui->arg, err, one_line);
}

/* op_run's report hook: what goes wrong on the way out (sealing, unlocking). */
static void report_hook(void *arg, const struct kiln_error *err)
{
	say(arg, err, false);
}

/* A refusal said on one line, "MSG; HINT" (a flag, a bound). */
static int refuse(struct apply_op *op, const char *hint, const char *fmt, ...) KILN_PRINTF(3, 4);
static int refuse(struct apply_op *op, const char *hint, const char *fmt, ...)
{
	struct kiln_error err = {0};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
	va_end(ap);
	if (hint)
		kiln_error_hint(&err, "%s", hint);
	say(op, &err, true);
	return -1;
}

/* Whether the approval policy lets this run go on at all; -1 after saying why not. */
static int admit_policy(struct apply_op *op)
{
	struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	int rc = approval_policy_resolve(o->policy, o->env_required, o->env_trusted, &err);

	if (rc == 0)
		rc = approval_policy_admit(o->policy, o->operand, plan_file_is(o->operand),
					   o->run.destroy, &err);
	if (rc < 0)
		say(op, &err, rc != APPROVAL_REFUSED_RUN);
	return rc < 0 ? -1 : 0;
}

/* A plan file is applied to the workspace it was made for: -1 after saying so when not. */
static int admit_workspace(struct apply_op *op, const char *ws)
{
	const struct apply_op_options *o = op->o;
	struct kiln_error err = {0};

	if (plan_file_workspace_check(o->operand, ws, o->run.workspace, o->env_workspace, &err) ==
	    0)
		return 0;
	say(op, &err, true);
	return -1;
}

/* The approvals of the plan file, when the policy requires some; -1 after saying why not. */
static int admit_approvals(struct apply_op *op, const json_t *approvals)
{
	struct apply_op_options *o = op->o;
	struct approval_policy_result res = {0};
	struct kiln_error err = {0};
	int rc;

	if (o->policy->required <= 0)
		return 0;
	rc = approval_policy_check(o->policy, o->saved, approvals, &res, &err);
	if (rc < 0)
		say(op, &err, false);
	else
		op->ui->approvals(op->ui->arg, o->policy, o->operand, &res, rc == 0);
	if (rc == 0)
		o->approved = json_incref(res.trailers);
	approval_policy_result_release(&res);
	return rc == 0 ? 0 : -1;
}

/* A plan file: read, its flags, its workspace and its approvals; what it binds goes into o. */
static int admit_plan_file(struct apply_op *op)
{
	struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	json_t *approvals = NULL;
	const char *ws;
	int rc = -1;

	if (plan_file_read_approvals(&o->saved, &approvals, o->operand, &err) < 0) {
		say(op, &err, false);
		goto out;
	}
	ws = json_string_value(plan_kiln(o->saved, "workspace"));
	if (o->run.ntargets || o->run.nreplace || !o->run.refresh) {
		refuse(op, "they were fixed when the plan was made",
		       "--target, --replace and --refresh cannot be used with a plan file");
		goto out;
	}
	if (admit_workspace(op, ws) < 0 || admit_approvals(op, approvals) < 0)
		goto out;
	o->plan_file = o->operand;
	o->run.workspace = ws;
	o->run.destroy = plan_is_destroy(o->saved);
	o->spec = json_string_value(json_object_get(plan_kiln(o->saved, "spec"), "file"));
	rc = 0;
out:
	json_decref(approvals);
	return rc;
}

/*
 * Everything that can refuse before the lock is taken and before any call,
 * so that a refusal spends nothing: the approval policy, the state key,
 * the plan file (its workspace and approvals), an approval nobody can give.
 */
static int admit(struct apply_op *op)
{
	struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	struct crypt_key key;
	int have_key;

	if (admit_policy(op) < 0)
		return -1;
	have_key = crypt_key_load(&key, &err);
	crypt_key_wipe(&key);
	if (have_key < 0) {
		/* Before anything changes: a secret that cannot be sealed would be lost. */
		say(op, &err, false);
		return -1;
	}
	o->keep_secrets = have_key == 1;
	o->spec = o->operand;
	if (plan_file_is(o->operand))
		return admit_plan_file(op);
	if (o->auto_approve || o->can_ask)
		return 0;
	/* The reviewed way to destroy is a destroy plan: a plain one would apply. */
	return refuse(op,
		      o->run.destroy ? "review with `kiln plan --destroy --out destroy.kiln`, then "
				       "`kiln apply destroy.kiln`; or pass --auto-approve"
				     : "review with `kiln plan --out plan.kiln`, then `kiln apply "
				       "plan.kiln`; or pass --auto-approve",
		      "standard input is not a terminal, so kiln cannot ask for approval; "
		      "nothing was changed");
}

/* Load the spec and open the state under the lock; -1 after saying why not. */
static int round_open(struct apply_op *op, struct op_run *r)
{
	const struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	struct diags d = {0};
	int rc;

	r->report = report_hook;
	r->report_arg = op;
	rc = operation_load(r, &o->run, o->spec, &d, &err);
	op->ui->loaded(op->ui->arg, &d);
	diags_release(&d);
	if (rc == 0 &&
	    operation_open_state(r, true, o->run.destroy ? "destroy" : "apply", &err) == 0)
		return 0;
	if (!err.msg[0])
		kiln_error_set(&err, "%s is not valid; nothing was planned", o->spec);
	say(op, &err, false);
	return -1;
}

/* A later round of --wait after a saved plan: -1 (said) when the spec moved on. */
static int round_held(struct apply_op *op, const struct op_run *r)
{
	struct kiln_error err = {0};

	if (!op->o->wait ||
	    apply_wait_held_check(op->o->wait, r->e->spec_digest, r->spec_path, &err) == 0)
		return 0;
	say(op, &err, false);
	return -1;
}

/* A saved plan that no longer says what its spec and state give now: why, and the fix. */
static void saved_refuse(struct apply_op *op, const struct op_run *r, const char *why)
{
	struct kiln_error err = {0};

	kiln_error_set(&err, "%s; nothing was changed", why);
	kiln_error_hint(&err,
			"kiln carries out a plan file only as kiln made it, and this one was edited "
			"or the cloud changed since it was made; make and review a new plan: kiln "
			"plan %s%s --out %s",
			plan_is_destroy(op->o->saved) ? "--destroy " : "", r->spec_path,
			op->o->plan_file);
	say(op, &err, false);
}

/* Under the lock: the expiry to record, then the plan (made again from a saved one). */
static int round_plan(struct apply_op *op, struct op_run *r)
{
	const struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	int rc = 0;

	if (!o->run.destroy && (operation_key_check(r->state, &err) < 0 ||
				operation_expiry_prepare(r, o->ttl, &err) < 0))
		rc = -1;
	else if (!o->saved)
		rc = operation_plan(r, &err);
	else if (operation_saved_check(r, o->saved, o->plan_file, &err) < 0)
		rc = -1;
	else
		rc = operation_saved_replan(r, o->saved, o->plan_file, &err);
	if (rc > 0)
		saved_refuse(op, r, err.msg);
	else if (rc < 0)
		say(op, &err, false);
	return rc == 0 ? 0 : -1;
}

/* Nothing in the cloud to change, but a new --ttl is still recorded. */
static enum apply_op_status round_nothing(struct apply_op *op, struct op_run *r,
					  const json_t *expiry_before)
{
	const json_t *after = json_object_get(r->state, "expiry");
	bool moved = !json_equal(expiry_before, after) && (expiry_before || after);
	struct apply_result none = {0};
	struct kiln_error err = {0};
	char *commit = NULL;
	enum apply_op_status st = APPLY_OP_OK;

	if (moved && state_resource_count(r->state) > 0 &&
	    operation_commit(r, "apply", &none, op->o->saved, NULL, &commit, &err) < 0) {
		say(op, &err, false);
		st = APPLY_OP_FAILED;
	}
	op->ui->done(op->ui->arg, r, NULL, moved, commit);
	free(commit);
	return st;
}

/*
 * An apply never carries out a plan with an unwaived error-level finding
 * (an open SSH port, a plan over budget), as `kiln audit` exits 3 on one.
 * A plan saved by a kiln without the audit is audited now, against the
 * spec it was checked to be made from.
 */
static enum apply_op_status round_findings(struct apply_op *op, struct op_run *r)
{
	struct kiln_error err = {0};
	long n = operation_plan_errors(r, &err);

	if (n < 0) {
		say(op, &err, false);
		return APPLY_OP_FAILED;
	}
	if (n > 0)
		op->ui->findings(op->ui->arg, r, n);
	return n > 0 ? APPLY_OP_FINDINGS : APPLY_OP_OK;
}

/* The purchase rule (purchase.h) over r's plan; -1 after saying why not. */
static int round_purchase(struct apply_op *op, const struct op_run *r)
{
	const struct apply_op_options *o = op->o;
	const struct plan_change *c = operation_plan_purchase(r);
	const json_t *plan = o->saved ? o->saved : r->plan;
	struct purchase_ask ask = {
	    .address = c ? c->address : NULL,
	    .offering = c && json_is_object(json_object_get(c->kiln, "offering")),
	    .refresh_off = json_is_false(plan_kiln(plan, "refresh")),
	    .upfront = operation_plan_upfront(r->plan),
	    .allowed = o->allow_purchase || json_array_size(o->approved) > 0,
	    .spec_path = r->spec_path,
	};
	struct kiln_error err = {0};

	if (purchase_check(&ask, &err) == 0)
		return 0;
	say(op, &err, false);
	return -1;
}

/*
 * The team budgets and quotas (quota.h) over r's plan: checked before the
 * question, claimed after it (a claim made by compare-and-swap, so that
 * two applies racing against one limit never both pass); -1 after saying
 * why not. A limit is waived only for a saved plan whose approvals count.
 */
static int round_quota(struct apply_op *op, struct op_run *r, bool reserve)
{
	const struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	int rc;

	if (json_object_size(o->waivers) && !json_array_size(o->approved)) {
		kiln_error_set(&err, "--waive-limit waives a limit only for a saved plan whose "
				     "approvals count; nothing was changed");
		kiln_error_hint(&err,
				"save the plan (kiln plan %s --out plan.kiln), have it approved "
				"(kiln approve), and apply it with --require-approvals N "
				"--waive-limit 'LIMIT=REASON'",
				r->spec_path);
		say(op, &err, false);
		return -1;
	}
	rc = operation_quota(r, reserve, o->waivers, &err);
	if (rc == 0)
		return 0;
	say(op, &err, false);
	return -1;
}

/* Ask, unless a saved plan (reviewing it was the approval) or --auto-approve; -1 when not. */
static int round_ask(struct apply_op *op, const struct op_run *r)
{
	struct kiln_error err = {0};
	char *q;
	bool yes;

	if (op->o->saved || op->o->auto_approve)
		return 0;
	q = xasprintf("Do you want to %s %s/%s?",
		      op->o->run.destroy ? "destroy everything in" : "apply this plan to",
		      r->e->spec->cluster, r->ws->name);
	yes = op->ui->ask(op->ui->arg, q);
	free(q);
	if (yes)
		return 0;
	kiln_error_set(&err, "not approved; nothing was changed");
	say(op, &err, false);
	return -1;
}

/* After a whole apply: wait for the nodes of the groups it launched to report. */
static enum apply_op_status round_health(struct apply_op *op, struct op_run *r)
{
	const struct apply_op_options *o = op->o;
	json_t *touched = health_touched(r->e, r->plan), *groups = NULL, *g;
	struct kiln_error err = {0};
	enum apply_op_status st = APPLY_OP_OK;
	size_t i;

	if (json_array_size(touched) > 0) {
		struct health_tick tick = {op->ui->health_tick, op->ui->arg};

		op->ui->health_waiting(op->ui->arg, o->health_timeout);
		if (operation_health_wait(r, touched, o->health_timeout, &tick, &groups, &err) <
		    0) {
			say(op, &err, false);
			st = APPLY_OP_FAILED;
		} else {
			op->ui->health(op->ui->arg, groups, o->health_timeout);
			json_array_foreach(groups, i, g) if (health_group_bad(g)) st =
			    APPLY_OP_UNHEALTHY;
		}
	}
	json_decref(groups);
	json_decref(touched);
	return st;
}

/* The rules, the question, the executor, its commit, and the nodes' health. */
static enum apply_op_status round_execute(struct apply_op *op, struct op_run *r)
{
	const struct apply_op_options *o = op->o;
	const char *what = o->run.destroy ? "destroy" : "apply";
	struct op_apply_outcome out = {0};
	struct kiln_error err = {0};
	struct op_apply_options ao = {
	    .parallelism = o->parallelism,
	    .keep_secrets = o->keep_secrets,
	    .event = op->ui->event,
	    .event_arg = op->ui->arg,
	    .started = op->ui->started,
	    .finished = op->ui->finished,
	    .saved = o->saved,
	    .approved = o->approved,
	};
	enum apply_op_status st = APPLY_OP_FAILED;

	op->executed = true;
	if ((!o->run.destroy && (round_purchase(op, r) < 0 || round_quota(op, r, false) < 0)) ||
	    round_ask(op, r) < 0 || (!o->run.destroy && round_quota(op, r, true) < 0))
		return APPLY_OP_FAILED;
	if (operation_apply(r, what, &ao, &out, &err) < 0) {
		say(op, &err, false);
		goto out;
	}
	if (out.commit_failed)
		say(op, &err, false);
	op->ui->done(op->ui->arg, r, &out, false, NULL);
	if (!out.res.failed && !out.res.interrupted && !out.res.skipped && !out.commit_failed)
		st = APPLY_OP_OK;
	if (st == APPLY_OP_OK && !o->run.destroy && o->health_timeout > 0)
		st = round_health(op, r);
out:
	operation_apply_outcome_release(&out);
	return st;
}

/* One round: open, plan, refuse or carry out. */
static enum apply_op_status round_run(struct apply_op *op, struct op_run *r)
{
	json_t *expiry_before;
	enum apply_op_status st;

	if (round_open(op, r) < 0 || round_held(op, r) < 0)
		return APPLY_OP_FAILED;
	expiry_before = json_deep_copy(json_object_get(r->state, "expiry"));
	if (round_plan(op, r) < 0)
		st = APPLY_OP_FAILED;
	else if ((op->ui->plan(op->ui->arg, r), operation_plan_is_empty(r)))
		st = round_nothing(op, r, expiry_before);
	/* Taking a cluster down is never held back by what is wrong with it. */
	else if (!op->o->run.destroy && (st = round_findings(op, r)) != APPLY_OP_OK)
		;
	else
		st = round_execute(op, r);
	json_decref(expiry_before);
	return st;
}

/* Milliseconds on the monotonic clock, for the bound of --wait. */
static int64_t monotonic_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/*
 * --wait: after a round that did not finish, whether capacity bought for
 * a window is still to come and starts within the bound (apply_wait.h);
 * then sleep one poll, said first (1). The next round plans again from the
 * spec: it buys nothing new without --allow-purchase, and asks nothing. 0:
 * nothing to wait for; -1: the window starts past the bound, or the bound
 * ran out (said).
 */
static int round_wait(struct apply_op *op, const struct op_run *r)
{
	struct apply_op_options *o = op->o;
	struct kiln_error err = {0};
	json_t *next = NULL;
	long ms = 0;
	int64_t now;
	int rc;
	struct timespec ts;

	if (!o->wait || !o->wait->on || o->run.destroy || !r->state || timefmt_now(&now, &err) < 0)
		return 0;
	rc = apply_wait_next(o->wait, r->state, now, monotonic_ms(),
			     log_env_long("KILN_WAIT_POLL_MS", 60000, 3600000), &next, &ms, &err);
	if (rc <= 0) {
		if (rc < 0)
			say(op, &err, true);
		return rc;
	}
	op->ui->waiting(op->ui->arg, next, ms);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
	/* The bound ran out while asleep: exit 5 without another round. */
	rc = apply_wait_in_bound(o->wait, next, now, monotonic_ms(), &err) ? 1 : -1;
	json_decref(next);
	if (rc < 0) {
		say(op, &err, true);
		return -1;
	}
	/*
	 * The next round is the spec's plan, approved by asking for --wait;
	 * after a saved plan, only while the spec is still the one it was made
	 * from (round_held), and the plan's spec file and workspace outlive it.
	 */
	if (o->saved) {
		apply_wait_hold(
		    o->wait, o->plan_file,
		    json_string_value(json_object_get(plan_kiln(o->saved, "spec"), "digest")),
		    o->spec, o->run.workspace);
		o->spec = o->wait->held_spec;
		o->run.workspace = o->wait->held_ws;
	}
	json_decref(o->saved);
	json_decref(o->approved);
	o->saved = o->approved = NULL;
	o->plan_file = NULL;
	o->auto_approve = true;
	return 1;
}

enum apply_op_status apply_op_run(struct apply_op_options *o, const struct apply_ui *ui)
{
	struct apply_op op = {.o = o, .ui = ui};
	enum apply_op_status st = APPLY_OP_FAILED;
	int waiting;

	if (admit(&op) < 0)
		goto out;
	if (o->run.destroy)
		o->health_timeout = 0;
	for (;;) {
		struct op_run r = {0};

		op.executed = false;
		st = round_run(&op, &r);
		waiting = op.executed && st != APPLY_OP_OK && !signals_interrupted()
			      ? round_wait(&op, &r)
			      : 0;
		operation_close(&r);
		if (waiting < 0)
			st = APPLY_OP_WAIT_TIMEOUT;
		if (waiting <= 0)
			break;
	}
out:
	json_decref(o->saved);
	json_decref(o->approved);
	o->saved = o->approved = NULL;
	return st;
}
