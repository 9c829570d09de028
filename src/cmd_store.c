/*
 * cmd_store.c - see cmd_store.h.
 */
#include "cmd_store.h"

#include "plan.h"
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_store_flags_handle(struct store_flags *f, const struct cli *cli, int id, const char *arg)
{
	switch (id) {
	case OPT_STATE:
		f->state = arg;
		return 1;
	case OPT_WORKSPACE:
		f->workspace = arg;
		return 1;
	case OPT_LOCK_TIMEOUT:
		if (timefmt_duration_parse(arg, &f->lock_timeout) < 0) {
			cli_error(cli, "write a duration like 30s, 5m or 1h",
				  "--lock-timeout '%s' is not a duration", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

int cmd_store_flags_plan_workspace(const struct store_flags *f, const struct cli *cli,
				   const char *file, const char *ws)
{
	struct kiln_error err = {0};

	if (plan_file_workspace_check(file, ws, f->workspace, getenv("KILN_WORKSPACE"), &err) == 0)
		return 0;
	cli_error(cli, err.hint, "%s", err.msg);
	return -1;
}

void cmd_report(const struct cli *cli, const struct kiln_error *err)
{
	char *msg = xasprintf("%s: %s: %s", cli->prog, cli->cmd, err->msg);

	log_report(LOG_ERROR, msg, err->hint);
	free(msg);
}

int cmd_store_flags_open(const struct store_flags *f, const struct cli *cli, bool create,
			 struct store **s, struct workspace **w)
{
	struct kiln_error err = {0};

	*s = NULL;
	if (w)
		*w = NULL;
	if ((create ? store_open(s, f->state, &err) : store_open_existing(s, f->state, &err)) < 0) {
		cmd_report(cli, &err);
		return -1;
	}
	if (w && workspace_open(w, *s, f->workspace, &err) < 0) {
		cmd_report(cli, &err);
		store_free(*s);
		*s = NULL;
		return -1;
	}
	return 0;
}
