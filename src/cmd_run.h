/*
 * cmd_run.h - what plan, apply, destroy and graph share: their flags, and a
 * run: the store and workspace, the engine (spec, provider, desired
 * resources), the recorded state with any interrupted apply's journal
 * replayed, and the plan made from them.
 */
#ifndef KILN_CMD_RUN_H
#define KILN_CMD_RUN_H

#include "cmd_store.h"
#include "engine.h"
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
};

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
#define RUN_OPT_AUTO_APPROVE                                                                       \
	{                                                                                          \
		"auto-approve", 0, false, OPT_RUN_AUTO_APPROVE, NULL,                              \
		    "do not ask; required when standard input is not a terminal"                   \
	}

struct run_flags {
	struct store_flags store;
	struct spec_vars vars;
	const char **targets;
	size_t ntargets, captargets;
	const char **replace;
	size_t nreplace, capreplace;
	bool refresh;
	bool json;
	bool markdown;
	const char *out;
	bool detailed;
	bool destroy;
	bool auto_approve;
	int parallelism;
};

void run_flags_init(struct run_flags *f);
/* 1 handled, 0 not ours, -1 after reporting a bad value. */
int run_flags_handle(struct run_flags *f, const struct cli *cli, int id, const char *arg);
void run_flags_release(struct run_flags *f);
/*
 * Parse a command's options into f (p stays initialised: release it). -1
 * when the command should return *ret now (help printed, or an error
 * reported), else 0 with the operands from p->optind.
 */
int run_flags_parse(struct run_flags *f, struct cli_parser *p, struct cli *cli,
		    const struct cmd_info *info, int argc, char **argv, int *ret);

struct run {
	struct cli *cli;
	struct run_flags *f;
	const char *spec_path;
	struct store *store;
	struct workspace *ws;
	struct engine *e;
	json_t *state; /* recorded state, journal replayed; a new document before the first apply */
	json_t *overlay; /* what the journal replayed (address -> resource|null), or NULL */
	char head[41];	 /* the workspace head the run read, "" when none */
	json_t *plan;
	char *owner; /* the kiln:owner tag of what this run creates, or NULL */
	struct refresh_stats rs;
	/*
	 * Set by commands that only read the plan (plan, cost, audit): run_plan
	 * drops the recorded state once diffed, so the cost and the findings
	 * reuse its memory (a tenth of a large plan's peak).
	 */
	bool plan_only;
};

/* The spec operand: argv's one operand, else ./kiln.yaml; NULL after reporting. */
const char *run_spec_operand(const struct cli *cli, int argc, char **argv, int optind);

/*
 * The engine of spec alone, with no state (graph, iam-policy): its
 * diagnostics printed, an error reported; NULL when it cannot be opened.
 */
struct engine *run_engine_only(struct cli *cli, const char *spec, const struct run_flags *f);

/*
 * Open the store (creating it when lock), the workspace, take the lock when
 * lock is set, load and expand the spec, and read the recorded state with
 * the journal of an interrupted apply replayed. Reports errors; -1 on failure.
 */
int run_open(struct run *r, struct cli *cli, struct run_flags *f, const char *spec_path, bool lock,
	     const char *operation);
/*
 * The kiln:owner tag of what a run creates or claims: "NAME EMAIL at TIME
 * from STATE" (STATE the repository's URL, or HOST:PATH), with what a tag
 * cannot hold as '_'; NULL when the author cannot be told. Caller frees.
 */
char *run_owner(struct store *s);
/* Refresh (unless --refresh=false) and diff into r->plan. Reports errors. */
int run_plan(struct run *r);
void run_close(struct run *r);
/*
 * run_close for a command whose process exits next (plan): the lock, the
 * workspace and the store are released and the provider closed (its
 * credentials wiped), but in a release build the documents (spec, state,
 * live resources, plan) are left to the exit.
 * Freeing a 10,000-resource plan node by node was a seventh of its CPU
 * time, for memory the kernel takes back at once. Sanitizer builds (the
 * test build) free everything, so LeakSanitizer still checks every owner.
 */
void run_finish(struct run *r);

/*
 * v as one JSON document on stdout and a newline, through a 64 KiB buffer:
 * jansson's own file output makes one locked fwrite per token, which was a
 * tenth of the CPU of a 10,000-resource plan.
 */
void run_print_json(const json_t *v, size_t flags);

/*
 * Secrets go into state sealed with KILN_STATE_KEY; without a key they are
 * dropped, with a warning. -1 with err when the key is malformed or sealing
 * failed: the secrets are dropped then too, never kept in plaintext.
 */
int run_seal_secrets(json_t *state, struct kiln_error *err);

/*
 * How up, down and reap reuse apply and destroy (cmd_apply.c): their own
 * help, an check under the lock, and the results back.
 */
struct apply_hooks {
	const struct cmd_info *info; /* help and usage; NULL: apply's or destroy's */
	/* Under the workspace lock, state read: 0 go on, 1 stop (exit 0), -1 stop (exit 1). */
	int (*locked)(struct run *r, void *arg);
	void *arg;
	bool quiet;	 /* no plan, progress or summary on standard output */
	bool up_summary; /* end with the cost per hour and the expiry */
	/* kiln reap: the destroy of an expired TTL, which no approval policy holds back. */
	bool ttl_expired;
	/* Out. */
	bool open_failed; /* the spec, the store or the lock could not be opened */
	size_t deleted, released, failed;
};

/* apply (destroy false) or destroy, as the commands run them; hooks may be NULL. */
int apply_command(int argc, char **argv, struct cli *cli, bool destroy, struct apply_hooks *hooks);

#endif
