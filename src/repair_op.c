/*
 * repair_op.c - kiln repair, run whole; see repair_op.h. Owns the order of
 * the steps (operation.h's, repair.h's) and its own words: a workspace with
 * no cluster yet, the question, and no "yes".
 */
#include "repair_op.h"

#include <stdlib.h>

#include "health.h"
#include "repair.h"
#include "state.h"

static void say(const struct repair_ui *ui, const struct kiln_error *err)
{
	ui->base.error(ui->base.arg, err);
}

/* Refreshed under the lock, with a cluster to repair and the state key that sealed it. */
static int repair_open(const struct repair_op_options *o, const struct repair_ui *ui,
		       struct op_run *r)
{
	struct kiln_error err = {0};

	r->keep_live = true;
	if (operation_open(r, &o->run, o->spec, true, "repair", &ui->base) < 0)
		return -1;
	if (operation_plan(r, &err) < 0) {
		say(ui, &err);
		return -1;
	}
	/* kiln init makes the workspace with an empty state: no cluster until an apply. */
	if (!(r->ws && r->ws->exists && state_cluster(r->state))) {
		kiln_error_set(&err, "workspace '%s' has no cluster yet: nothing has been applied",
			       r->e->workspace);
		kiln_error_hint(&err, "bring it up with `kiln up`");
		say(ui, &err);
		return -1;
	}
	if (operation_key_check(r->state, &err) < 0) {
		say(ui, &err);
		return -1;
	}
	return 0;
}

/* Ask, unless --auto-approve; -1 after saying nothing was changed. */
static int repair_ask(const struct repair_op_options *o, const struct repair_ui *ui,
		      const struct op_run *r)
{
	struct kiln_error err = {0};
	char *q;
	bool yes;

	if (o->auto_approve)
		return 0;
	q = xasprintf("Do you want to replace these nodes of %s/%s?", r->e->spec->cluster,
		      r->ws->name);
	yes = ui->ask(ui->base.arg, q);
	free(q);
	if (yes)
		return 0;
	kiln_error_set(&err, "not approved; nothing was changed");
	say(ui, &err);
	return -1;
}

/* After the commit: wait for the nodes of the groups repaired to report. */
static enum repair_op_status repair_health(const struct repair_op_options *o,
					  const struct repair_ui *ui, struct op_run *r,
					  const json_t *done)
{
	json_t *addrs = json_array(), *groups = NULL, *d;
	struct kiln_error err = {0};
	enum repair_op_status st = REPAIR_OP_OK;
	size_t i;

	json_array_foreach(done, i, d) json_array_append(addrs, json_object_get(d, "address"));
	if (o->health_timeout > 0 && json_array_size(addrs) > 0) {
		struct health_tick tick = {ui->health_tick, ui->base.arg};

		ui->health_waiting(ui->base.arg, o->health_timeout);
		if (operation_health_wait(r, addrs, o->health_timeout, &tick, &groups, &err) < 0) {
			say(ui, &err);
			st = REPAIR_OP_FAILED;
		} else {
			ui->health(ui->base.arg, groups, o->health_timeout);
			json_array_foreach(groups, i, d) if (health_group_bad(d)) st =
			    REPAIR_OP_UNHEALTHY;
		}
	}
	json_decref(groups);
	json_decref(addrs);
	return st;
}

enum repair_op_status repair_op_run(const struct repair_op_options *o, const struct repair_ui *ui)
{
	struct op_run r = {0};
	struct op_repair_outcome out = {0};
	struct kiln_error err = {0};
	json_t *targets = NULL;
	enum repair_op_status st = REPAIR_OP_FAILED;

	if (repair_open(o, ui, &r) < 0)
		goto out;
	targets = repair_targets(r.e, r.state, r.live, o->groups, o->ngroups, &err);
	if (!targets) {
		say(ui, &err);
		goto out;
	}
	ui->plan(ui->base.arg, &r, targets);
	if (json_array_size(targets) == 0) {
		st = REPAIR_OP_OK;
		goto out;
	}
	if (repair_ask(o, ui, &r) < 0)
		goto out;
	operation_repair(&r, targets, &out, &err);
	ui->done(ui->base.arg, &r, &out);
	if (out.failed || out.commit_failed) {
		say(ui, &err);
		goto out;
	}
	st = repair_health(o, ui, &r, out.done);
out:
	json_decref(targets);
	operation_repair_outcome_release(&out);
	operation_close(&r);
	return st;
}
