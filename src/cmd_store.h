/*
 * cmd_store.h - the flags every state-touching command shares (--state,
 * -w/--workspace, --lock-timeout) and opening the store and workspace they name.
 */
#ifndef KILN_CMD_STORE_H
#define KILN_CMD_STORE_H

#include <stdint.h>

#include "cli.h"
#include "workspace.h"

enum {
	OPT_STATE = 900,
	OPT_WORKSPACE,
	OPT_LOCK_TIMEOUT,
};

#define CMD_OPT_STATE                                                                              \
	{                                                                                          \
		"state", 0, true, OPT_STATE, "URL|PATH",                                           \
		    "state repository (default .kiln/state.git; KILN_STATE)"                       \
	}
#define CMD_OPT_WORKSPACE                                                                          \
	{                                                                                          \
		"workspace", 'w', true, OPT_WORKSPACE, "NAME",                                     \
		    "workspace, not empty (default default; KILN_WORKSPACE)"                       \
	}
#define CMD_OPT_LOCK_TIMEOUT                                                                       \
	{                                                                                          \
		"lock-timeout", 0, true, OPT_LOCK_TIMEOUT, "DURATION",                             \
		    "wait this long for a held lock, and take over a stale one (default 0s)"       \
	}

struct store_flags {
	const char *state;
	const char *workspace;
	int64_t lock_timeout;
};

/* 1 when id was one of the shared flags, 0 when not, -1 after reporting a bad value. */
int cmd_store_flags_handle(struct store_flags *f, const struct cli *cli, int id, const char *arg);

/*
 * Open the store (creating a missing local one only when create is set) and
 * the workspace (when w is not NULL), reporting errors; -1 on failure.
 */
int cmd_store_flags_open(const struct store_flags *f, const struct cli *cli, bool create,
			 struct store **s, struct workspace **w);

/*
 * A plan file made for workspace ws is used only there: -w, or else
 * KILN_WORKSPACE, when given, must name it. 0, or -1 after reporting.
 */
int cmd_store_flags_plan_workspace(const struct store_flags *f, const struct cli *cli,
				   const char *file, const char *ws);

/* "kiln CMD: error" plus its hint line, from a kiln_error. */
void cmd_report(const struct cli *cli, const struct kiln_error *err);

#endif
