/*
 * cmd_run.h - what plan, apply, destroy and graph share: their flags, and
 * opening an operation (operation.h) from them with its errors reported.
 */
#ifndef KILN_CMD_RUN_H
#define KILN_CMD_RUN_H

#include "cmd_store.h"
#include "engine.h"
#include "operation.h"
#include "spec_opts.h"

enum {
	OPT_RUN_VAR = 950,
	OPT_RUN_TARGET,
	OPT_RUN_REPLACE,
	OPT_RUN_REFRESH,
	OPT_RUN_JSON,
	OPT_RUN_MARKDOWN,
	OPT_RUN_OUT,
	OPT_RUN_DETAILED,
	OPT_RUN_DESTROY,
	OPT_RUN_AUTO_APPROVE,
	OPT_RUN_PARALLELISM,
	OPT_RUN_SPEC,
	OPT_RUN_NO_PAGER,
	OPT_RUN_INCLUDE_RETAINED,
};

#define RUN_OPT_SPEC                                                                               \
	{                                                                                          \
		"spec", 0, true, OPT_RUN_SPEC, "FILE",                                             \
		    "the spec, as the SPEC operand gives it (default ./kiln.yaml)"                 \
	}
#define RUN_OPT_VAR                                                                                \
	{                                                                                          \
		"var", 0, true, OPT_RUN_VAR, "NAME=VALUE", "set a spec variable (repeatable)"      \
	}
#define RUN_OPT_TARGET                                                                             \
	{                                                                                          \
		"target", 0, true, OPT_RUN_TARGET, "ADDRESS",                                      \
		    "only this resource and what it needs (repeatable)"                            \
	}
#define RUN_OPT_REPLACE                                                                            \
	{                                                                                          \
		"replace", 0, true, OPT_RUN_REPLACE, "ADDRESS",                                    \
		    "replace this resource even if unchanged (repeatable)"                         \
	}
#define RUN_OPT_REFRESH                                                                            \
	{                                                                                          \
		"refresh", 0, true, OPT_RUN_REFRESH, "true|false",                                 \
		    "read live state first (default true); false trusts the recorded state"        \
	}
#define RUN_OPT_PARALLELISM                                                                        \
	{                                                                                          \
		"parallelism", 0, true, OPT_RUN_PARALLELISM, "N",                                  \
		    "at most N provider operations at once (default 32)"                           \
	}
#define RUN_OPT_NO_PAGER                                                                           \
	{                                                                                          \
		"no-pager", 0, false, OPT_RUN_NO_PAGER, NULL,                                      \
		    "never page the text (on a terminal it goes through PAGER, else less -FRX)"    \
	}
#define RUN_OPT_AUTO_APPROVE                                                                       \
	{                                                                                          \
		"auto-approve", 0, false, OPT_RUN_AUTO_APPROVE, NULL,                              \
		    "do not ask; required when standard input is not a terminal"                   \
	}

struct run_flags {
	const char *spec; /* --spec, or NULL */
	struct store_flags store;
	struct spec_vars vars;
	const char **targets;
	size_t ntargets, captargets;
	const char **replace;
	size_t nreplace, capreplace;
	const char **include_retained; /* destroy --include-retained ADDRESS */
	size_t ninclude, capinclude;
	bool refresh;
	bool json;
	bool markdown;
	const char *out;
	bool detailed;
	bool destroy;
	bool auto_approve;
	bool no_pager;
	int parallelism;
};

void cmd_run_flags_init(struct run_flags *f);
/* 1 handled, 0 not ours, -1 after reporting a bad value. */
int cmd_run_flags_handle(struct run_flags *f, const struct cli *cli, int id, const char *arg);
void cmd_run_flags_release(struct run_flags *f);
/* --parallelism's value into *out: 0, or -1 after reporting one that is not 1 to 1024. */
int cmd_run_parallelism_parse(const struct cli *cli, const char *arg, int *out);
/*
 * Parse a command's options into f (p stays initialised: release it). -1
 * when the command should return *ret now (help printed, or an error
 * reported), else 0 with the operands from p->optind.
 */
int cmd_run_flags_parse(struct run_flags *f, struct cli_parser *p, struct cli *cli,
			const struct cmd_info *info, int argc, char **argv, int *ret);

/* What every command says when there is no spec: how to make one, where none is. */
#define RUN_NO_SPEC_HINT                                                                           \
	"run kiln init to start one here (kiln init --list shows the templates), or pass a "       \
	"spec path"
/* The spec operand: argv's one operand, else ./kiln.yaml; NULL after reporting. */
const char *cmd_run_spec_operand(const struct cli *cli, const char *flag, int argc, char **argv,
				 int optind);

/*
 * The engine of spec alone, with no state (graph, iam-policy): its
 * diagnostics printed, an error reported; NULL when it cannot be opened.
 */
struct engine *cmd_run_engine_only(struct cli *cli, const char *spec, const struct run_flags *f);

/*
 * The options of an operation from f, for spec_path; -1 after refusing the
 * spec "-" (standard input), as a plan is bound to its file's digest.
 */
int cmd_run_options(struct op_options *o, const struct cli *cli, const struct run_flags *f,
		    const char *spec_path);
/*
 * The run of a command that only reads the recorded state (kiln hosts,
 * ssh, exec): operation_open without the lock, the spec "-" refused, the spec's
 * diagnostics printed, errors reported; -1 on failure. operation_close r after,
 * either way. A command that changes anything calls its operation's one
 * entry instead (apply_op_run, reap_op_run...), which takes the lock.
 */
int cmd_run_open(struct op_run *r, struct cli *cli, struct run_flags *f, const char *spec_path);
/*
 * The operation's interface of a command that says nothing of its own
 * (operation.h): errors through cmd_report, the spec's diagnostics through
 * cmd_run_loaded; arg is cli.
 */
struct op_ui cmd_run_ui(struct cli *cli);
/* The spec's diagnostics, sorted, on standard error; arg is the struct cli. */
void cmd_run_loaded(void *arg, struct diags *d);
/*
 * The one operation of a command that only reads a plan (plan, cost,
 * audit, status): operation_plan_spec from f, the spec "-" refused, its
 * diagnostics printed and its errors reported; -1 on failure. operation_close or
 * operation_finish r after, either way.
 */
int cmd_run_plan_spec(struct op_run *r, struct cli *cli, struct run_flags *f,
		      const char *spec_path);

/*
 * v as one JSON document on stdout and a newline, through a 64 KiB buffer:
 * jansson's own file output makes one locked fwrite per token, which was a
 * tenth of the CPU of a 10,000-resource plan.
 */
void cmd_run_print_json(const json_t *v, size_t flags);

/* Ask question on the terminal (standard error); true only for the answer "yes". */
bool cmd_run_confirm(const char *question);
/* 0 when the workspace has a cluster; else -1 after saying nothing was applied yet. */
int cmd_run_need_cluster(const struct cli *cli, const struct op_run *r);
/*
 * The wait for node health: arg (--health-timeout), else
 * KILN_HEALTH_TIMEOUT, else 20m, in seconds ("0": no wait); -1 after
 * reporting a value that is not a duration of at most 24h.
 */
int cmd_run_health_timeout(const struct cli *cli, const char *arg, int64_t *timeout);
/* Before the wait for node health: "Health: waiting up to ..." (none with json). */
void cmd_run_health_waiting(int64_t timeout, bool json);
/*
 * The lines for what the groups (health.h's objects)
 * reported within timeout; KILN_EXIT_UNHEALTHY, said, when a node is
 * unhealthy or did not report, else KILN_EXIT_OK.
 */
int cmd_run_health_show(const struct cli *cli, const json_t *groups, int64_t timeout, bool json);

/* "kiln CMD: ADDRESS: OP failed: ERROR" on standard error for each of an apply's errors. */
void cmd_run_report_failures(const struct cli *cli, const json_t *errors);

#endif
