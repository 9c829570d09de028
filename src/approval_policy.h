/*
 * approval_policy.h - apply's approval policy: how many approvals a saved
 * plan needs and whose keys count (--require-approvals and --trusted-keys,
 * else KILN_REQUIRE_APPROVALS and KILN_TRUSTED_KEYS, so that a CI job's
 * environment can demand approvals of every apply it runs), whether a run
 * may go on under it at all, and whether a plan's approvals meet it.
 *
 * Rules over plain inputs: nothing here reads the environment, prints or
 * exits. A refusal comes back in a kiln_error; each function says how it
 * reads: a misused flag or variable on one line ("MSG; HINT", cli_error),
 * or a refused run with its hint on a line of its own (cmd_report).
 */
#ifndef KILN_APPROVAL_POLICY_H
#define KILN_APPROVAL_POLICY_H

#include <stdbool.h>

#include <jansson.h>

#include "approve.h"
#include "base.h"

/* The most approvals a policy may require. */
#define APPROVAL_POLICY_MAX 100

struct approval_policy {
	const char *required_arg; /* --require-approvals N, or NULL */
	const char *dir_arg;	  /* --trusted-keys DIR, or NULL */
	long required;		  /* 0: no approval required */
	char *source;		  /* "--require-approvals 2" or "KILN_REQUIRE_APPROVALS=2", owned */
	const char *dir;	  /* the trusted keys' directory, or NULL */
};

/*
 * The policy from its flags, else from the environment's values given
 * (env_required, env_dir; NULL when unset). -1 with err (one line) when
 * the number is not one from 0 to APPROVAL_POLICY_MAX.
 */
int approval_policy_resolve(struct approval_policy *ap, const char *env_required,
			    const char *env_dir, struct kiln_error *err);

/* How approval_policy_admit refused: which form the message takes. */
enum approval_refusal {
	APPROVAL_REFUSED_RUN = -2, /* a run that would step around the review; hint on its own line */
	APPROVAL_REFUSED_FLAGS = -1, /* flags that do not go together; one line */
};

/*
 * Whether a run of operand (a plan file when plan_file; destroy takes a
 * spec) may go on under ap: 0, or an approval_refusal with err. A spec
 * carries no approvals, so where approvals are required applying one would
 * step around the review; required approvals need trusted keys; trusted
 * keys need a number required.
 */
int approval_policy_admit(const struct approval_policy *ap, const char *operand, bool plan_file,
			  bool destroy, struct kiln_error *err);

/*
 * What approval_policy_check found: the trusted keys read and each
 * approval's check (rep borrows from ring and from the approvals checked,
 * which must outlive it), and the commit trailers of those that count.
 */
struct approval_policy_result {
	struct approve_keyring ring;
	struct approval_report rep;
	json_t *trailers; /* "Kiln-Approval: KEY-ID TIME SIGNER" each; NULL unless they meet it */
};

/*
 * Verify plan's approvals against the trusted keys of ap (approve.h) into
 * out: 0 when at least ap->required of them count (out->trailers set); 1
 * when too few do (out->rep says which and why: approval_policy_refusal);
 * -1 with err (its hint on its own line) when the keys cannot be read or
 * the plan cannot be encoded. Release out either way.
 */
int approval_policy_check(const struct approval_policy *ap, const json_t *plan,
			  const json_t *approvals, struct approval_policy_result *out,
			  struct kiln_error *err);
void approval_policy_result_release(struct approval_policy_result *out);

/*
 * Why approval_policy_check found too few approvals in file, and the fix:
 * *msg the first line, *hint the last (between them go one line per
 * approval, approve_check_describe). Caller frees both.
 */
void approval_policy_refusal(const struct approval_policy *ap, const char *file,
			     const struct approval_report *rep, char **msg, char **hint);

void approval_policy_release(struct approval_policy *ap);

#endif
