/*
 * approval_policy.c - apply's approval policy; see approval_policy.h.
 * Owns the rules and their words; verifying a signature is approve.c's,
 * showing a refusal the command's.
 */
#include "approval_policy.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int approval_policy_resolve(struct approval_policy *ap, const char *env_required,
			    const char *env_dir, struct kiln_error *err)
{
	const char *text = ap->required_arg ? ap->required_arg : env_required;
	const char *name = ap->required_arg ? "--require-approvals" : "KILN_REQUIRE_APPROVALS";
	char *end;

	ap->dir = ap->dir_arg ? ap->dir_arg : env_dir;
	if (ap->dir && !*ap->dir)
		ap->dir = NULL;
	if (!text || (!ap->required_arg && !*text))
		return 0;
	ap->required = strtol(text, &end, 10);
	if (!*text || *end || ap->required < 0 || ap->required > APPROVAL_POLICY_MAX) {
		kiln_error_set(err, "%s '%s' is not a number from 0 to %d", name, text,
			       APPROVAL_POLICY_MAX);
		kiln_error_hint(err, "give the number of approvals a plan needs, such as 2");
		ap->required = 0;
		return -1;
	}
	ap->source = ap->required_arg ? xasprintf("--require-approvals %ld", ap->required)
				      : xasprintf("KILN_REQUIRE_APPROVALS=%ld", ap->required);
	return 0;
}

int approval_policy_admit(const struct approval_policy *ap, const char *operand, bool plan_file,
			  bool destroy, struct kiln_error *err)
{
	const char *file = destroy ? "destroy.kiln" : "plan.kiln";

	if (ap->required > 0 && (destroy || !plan_file)) {
		/* A spec carries no approvals: applying it would step around the review. */
		kiln_error_set(err,
			       "approvals are required (%s), and %s is a spec, which carries none; "
			       "nothing was changed",
			       ap->source, operand);
		kiln_error_hint(err,
				"save the plan for review: kiln plan %s%s --out %s, have it "
				"approved (kiln approve %s --key KEY), then kiln apply %s",
				destroy ? "--destroy " : "", operand, file, file, file);
		return APPROVAL_REFUSED_RUN;
	}
	if (ap->required > 0 && !ap->dir) {
		kiln_error_set(err, "approvals are required (%s), but no trusted keys are given",
			       ap->source);
		kiln_error_hint(err, "give --trusted-keys DIR, a directory of the approvers' *.pub "
				     "keys (or set KILN_TRUSTED_KEYS)");
		return APPROVAL_REFUSED_FLAGS;
	}
	if (ap->dir_arg && ap->required == 0) {
		kiln_error_set(err, "--trusted-keys is used only with --require-approvals N");
		kiln_error_hint(err,
				"give the number of approvals required, such as --require-approvals 1");
		return APPROVAL_REFUSED_FLAGS;
	}
	return 0;
}

int approval_policy_check(const struct approval_policy *ap, const json_t *plan,
			  const json_t *approvals, struct approval_policy_result *out,
			  struct kiln_error *err)
{
	size_t i;

	if (approve_keyring_load(&out->ring, ap->dir, err) < 0 ||
	    approve_verify(&out->rep, plan, approvals, &out->ring, err) < 0)
		return -1;
	if ((long)out->rep.valid < ap->required)
		return 1;
	out->trailers = json_array();
	for (i = 0; i < out->rep.n; i++) {
		const struct approval_check *c = &out->rep.v[i];

		if (c->status == APPROVAL_VALID)
			json_array_append_new(out->trailers,
					      json_sprintf("Kiln-Approval: %s %s %s", c->key_id,
							   c->time, c->signer));
	}
	return 0;
}

void approval_policy_result_release(struct approval_policy_result *out)
{
	approve_report_release(&out->rep);
	approve_keyring_release(&out->ring);
	json_decref(out->trailers);
	out->trailers = NULL;
}

void approval_policy_refusal(const struct approval_policy *ap, const char *file,
			     const struct approval_report *rep, char **msg, char **hint)
{
	long more = ap->required - (long)rep->valid;
	bool bad = false;
	size_t i;

	if (rep->n == 0)
		*msg = xasprintf("%s is not approved: it has no approvals, %ld from trusted keys "
				 "required (%s); nothing was changed",
				 file, ap->required, ap->source);
	else
		*msg = xasprintf("%s is not approved: %zu valid approval%s from trusted keys, %ld "
				 "required (%s); nothing was changed",
				 file, rep->valid, rep->valid == 1 ? "" : "s", ap->required,
				 ap->source);
	for (i = 0; i < rep->n; i++)
		bad = bad || rep->v[i].status == APPROVAL_BAD_SIGNATURE;
	*hint = xasprintf("%s%ld more approval%s needed from keys in %s: each approver runs kiln "
			  "approve %s --key KEY",
			  bad ? "an approval that does not verify was made for another plan or "
				"edited since; "
			      : "",
			  more, more == 1 ? " is" : "s are", ap->dir, file);
}

void approval_policy_release(struct approval_policy *ap)
{
	free(ap->source);
	ap->source = NULL;
}
