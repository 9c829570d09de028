/*
 * quota.h - team budgets and quotas across workspaces (kiln-policy(5)).
 *
 * The policy is a JSON file committed on its own ref of the state
 * repository, refs/kiln/policy (policy.json), changed only by `kiln policy
 * set FILE`: one commit naming its author, moved by compare-and-swap as a
 * workspace's state is. Each limit covers a team (the spec tag "team") or
 * a workspace pattern (fnmatch) and sets any of the most GPUs running at
 * once, a monthly budget and the most one plan may buy up front.
 *
 * What is in use is read from every workspace's recorded state, through
 * the ledger its commits carry (report_workspace), and from the claims on
 * refs/kiln/quota (claims.json): an apply that passes writes its claim
 * (its workspace, the head it planned from, the GPUs and burn after it)
 * there by compare-and-swap before it changes anything, so that two
 * applies racing against one limit never both pass: the second's swap
 * fails, it reads the first's claim and checks again. A claim counts while
 * its workspace's head is still the one it was made from; the commit that
 * follows records the truth in the ledger.
 */
#ifndef KILN_QUOTA_H
#define KILN_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base.h"

struct store;

#define QUOTA_POLICY_REF "refs/kiln/policy"
#define QUOTA_POLICY_FILE "policy.json"
#define QUOTA_CLAIMS_REF "refs/kiln/quota"
#define QUOTA_CLAIMS_FILE "claims.json"
/* The spec tag that names a workspace's team. */
#define QUOTA_TEAM_TAG "team"

/*
 * A policy document from text (name: the file, for messages) into *out,
 * checked whole: -1 with err naming the first problem and the fix.
 */
int quota_policy_parse(const char *name, const char *text, size_t len, json_t **out,
		       struct kiln_error *err);
/*
 * The policy in force: 0 with *out and commit (hex, 41 bytes) set; 1 when
 * no policy was ever set (*out NULL); -1 with err.
 */
int quota_policy_read(struct store *s, json_t **out, char commit[41], struct kiln_error *err);
/* Check the file at path and commit it as the policy; commit: the new commit's hex. */
int quota_policy_set(struct store *s, const char *path, int64_t now, char commit[41],
		     struct kiln_error *err);
/* Who set the policy at commit and when: "Ann <ann@example.com>", RFC 3339. Caller frees. */
int quota_policy_author(struct store *s, const char *commit, char **who, char **when,
			struct kiln_error *err);

/* What one workspace's plan asks of the limits. */
struct quota_ask {
	const char *workspace;
	const char *head; /* the workspace head the plan was made from, "" when none */
	const char *team; /* its spec's team tag, or NULL */
	long gpus_now, gpus_after;
	double burn_now, burn_after; /* USD per hour */
	double upfront;		     /* USD the plan buys up front */
	int64_t now;
	/*
	 * Limits waived ("team=research:max_gpus" or "workspace=prod-*:max_gpus")
	 * with their reason: {LIMIT: REASON}, or NULL.
	 */
	const json_t *waivers;
};

/*
 * Check a against the policy and what every other workspace uses: 0 when
 * no limit is broken (or no policy is set), with reserve its claim written
 * on QUOTA_CLAIMS_REF by compare-and-swap (checked again when another
 * claim came first); 1 when a limit is broken, err naming the limit, the
 * use with it and who uses it, and the fix; -1 with err on an error.
 * *waived (may be NULL): the waivers that were needed, as commit
 * trailers ("Kiln-Quota-Waived: LIMIT: REASON"), a new array.
 */
int quota_check(struct store *s, const struct quota_ask *a, bool reserve, json_t **waived,
		struct kiln_error *err);

#endif
