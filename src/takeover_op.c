/*
 * takeover_op.c - kiln state takeover, run whole; see takeover_op.h. The
 * steps are operation.h's: operation_open with the lock, then operation_takeover, whose
 * failed checks and claims are told through the run's report hook (the
 * ui's error) when they happen.
 */
#include "takeover_op.h"

int takeover_op_run(const struct takeover_op_options *o, const struct takeover_ui *ui)
{
	struct op_takeover_result res = {0};
	struct op_run r = {0};
	struct kiln_error err = {0};
	int rc = -1;

	if (operation_open(&r, &o->run, o->spec, true, "state takeover", &ui->base) < 0)
		goto out;
	if (operation_takeover(&r, &o->filter, &res, &err) < 0) {
		ui->base.error(ui->base.arg, &err);
		goto out;
	}
	ui->done(ui->base.arg, &r, &res);
	if (res.commit_failed)
		ui->base.error(ui->base.arg, &res.commit_err);
	rc = res.take_failed || res.commit_failed ? -1 : 0;
out:
	operation_takeover_result_release(&res);
	operation_close(&r);
	return rc;
}
