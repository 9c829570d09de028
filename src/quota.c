/*
 * quota.c - team budgets and quotas across workspaces; see quota.h.
 * Reads the state repository only (the policy, the claims, every
 * workspace's ledger through report.c), never the cloud, never prints.
 */
#include "quota.h"

#include <fnmatch.h>
#include <git2.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cost.h"
#include "jsonc.h"
#include "jsonr.h"
#include "jsonw.h"
#include "ledger.h"
#include "report.h"
#include "store.h"
#include "str.h"
#include "strbuf.h"
#include "timefmt.h"
#include "util.h"

#define POLICY_MAX_BYTES (1 << 20)
/* How many times a claim is checked again after another claim came first. */
#define CLAIM_TRIES 20

static const char *const limit_keys[] = {"team", "workspace", "max_gpus", "monthly_budget_usd",
					 "max_upfront_usd"};

/* ---- the policy file ---- */

static int limit_check(const char *name, size_t i, const json_t *l, struct kiln_error *err)
{
	const char *k, *near;
	const json_t *v;
	int scopes = 0, limits = 0;

	if (!json_is_object(l)) {
		kiln_error_set(err, "%s: limits[%zu] is not an object", name, i);
		kiln_error_hint(err, "write each limit as {\"team\": \"research\", \"max_gpus\": 32}");
		return -1;
	}
	json_object_foreach_const(l, k, v)
	{
		bool known = false;

		for (size_t j = 0; j < ARRAY_SIZE(limit_keys); j++)
			known |= strcmp(k, limit_keys[j]) == 0;
		if (!known) {
			near = str_closest(k, limit_keys, ARRAY_SIZE(limit_keys));
			kiln_error_set(err, "%s: limits[%zu] has an unknown key '%s'", name, i, k);
			if (near)
				kiln_error_hint(err, "did you mean '%s'?", near);
			else
				kiln_error_hint(err, "a limit takes team or workspace, and max_gpus, "
						     "monthly_budget_usd or max_upfront_usd");
			return -1;
		}
		if (strcmp(k, "team") == 0 || strcmp(k, "workspace") == 0) {
			scopes++;
			if (!json_is_string(v) || !json_string_length(v)) {
				kiln_error_set(err, "%s: limits[%zu].%s must be a non-empty string",
					       name, i, k);
				kiln_error_hint(err, "%s",
						strcmp(k, "team") == 0
						    ? "name the team as its specs' tags do: \"team\": "
						      "\"research\""
						    : "give a workspace name or pattern: \"workspace\": "
						      "\"prod-*\"");
				return -1;
			}
		} else if (strcmp(k, "max_gpus") == 0) {
			limits++;
			if (!json_is_integer(v) || json_integer_value(v) < 0) {
				kiln_error_set(err,
					       "%s: limits[%zu].max_gpus must be a whole number from 0 up",
					       name, i);
				kiln_error_hint(err, "write it like \"max_gpus\": 32");
				return -1;
			}
		} else {
			limits++;
			if (!json_is_number(v) || json_number_value(v) < 0 ||
			    !isfinite(json_number_value(v))) {
				kiln_error_set(err,
					       "%s: limits[%zu].%s must be a number of USD from 0 up",
					       name, i, k);
				kiln_error_hint(err, "write it like \"%s\": 20000", k);
				return -1;
			}
		}
	}
	if (scopes != 1) {
		kiln_error_set(err, "%s: limits[%zu] must name one team or one workspace pattern, %s",
			       name, i, scopes ? "not both" : "and names neither");
		kiln_error_hint(err, "add \"team\": \"NAME\" (the spec tag team) or \"workspace\": "
				     "\"PATTERN\"");
		return -1;
	}
	if (!limits) {
		kiln_error_set(err, "%s: limits[%zu] sets no limit", name, i);
		kiln_error_hint(err, "set max_gpus, monthly_budget_usd or max_upfront_usd");
		return -1;
	}
	return 0;
}

int quota_policy_parse(const char *name, const char *text, size_t len, json_t **out,
		       struct kiln_error *err)
{
	json_error_t je;
	json_t *doc = jsonr_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	const json_t *limits, *l;
	const char *k;
	json_t *v;
	size_t i;

	*out = NULL;
	if (!doc) {
		kiln_error_set(err, "%s:%d:%d: not JSON: %s", name, je.line, je.column, je.text);
		kiln_error_hint(err, "kiln-policy(5) shows a policy file");
		return -1;
	}
	if (!json_is_object(doc)) {
		kiln_error_set(err, "%s: a policy is a JSON object", name);
		kiln_error_hint(err, "write {\"version\": 1, \"limits\": [...]} (kiln-policy(5))");
		goto bad;
	}
	json_object_foreach(doc, k, v)
	{
		if (strcmp(k, "version") != 0 && strcmp(k, "limits") != 0) {
			kiln_error_set(err, "%s: unknown key '%s'", name, k);
			kiln_error_hint(err, "a policy has \"version\": 1 and \"limits\": [...]");
			goto bad;
		}
	}
	if (!json_is_integer(json_object_get(doc, "version")) ||
	    json_integer_value(json_object_get(doc, "version")) != 1) {
		kiln_error_set(err, "%s: \"version\" must be 1", name);
		kiln_error_hint(err, "this kiln reads policy version 1: add \"version\": 1");
		goto bad;
	}
	limits = json_object_get(doc, "limits");
	if (!json_is_array(limits)) {
		kiln_error_set(err, "%s: \"limits\" must be a list of limits", name);
		kiln_error_hint(err, "write \"limits\": [{\"team\": \"research\", \"max_gpus\": 32}]");
		goto bad;
	}
	json_array_foreach(limits, i, l) if (limit_check(name, i, l, err) < 0) goto bad;
	*out = doc;
	return 0;
bad:
	json_decref(doc);
	return -1;
}

int quota_policy_read(struct store *s, json_t **out, char commit[41], struct kiln_error *err)
{
	git_oid oid;
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	commit[0] = '\0';
	if ((rc = store_ref_read(s, QUOTA_POLICY_REF, &oid, err)) != 0)
		return rc;
	if (store_read_file(s, &oid, QUOTA_POLICY_FILE, &text, &len, err) < 0)
		return -1;
	git_oid_tostr(commit, 41, &oid);
	rc = quota_policy_parse(QUOTA_POLICY_REF ":" QUOTA_POLICY_FILE, text, len, out, err);
	free(text);
	return rc;
}

int quota_policy_set(struct store *s, const char *path, int64_t now, char commit[41],
		     struct kiln_error *err)
{
	json_t *doc = NULL;
	char *text = NULL, *canon = NULL, *msg = NULL, t[21];
	git_oid head, oid;
	size_t len;
	int ret = -1, rc;

	if (util_file_read_regular(path, POLICY_MAX_BYTES, &text, &len, err) < 0 ||
	    quota_policy_parse(path, text, len, &doc, err) < 0)
		goto out;
	if (store_sync(s, err) < 0 || (rc = store_ref_read(s, QUOTA_POLICY_REF, &head, err)) < 0)
		goto out;
	canon = jsonw_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSONW_NEWLINE, NULL);
	msg = xasprintf("policy set: %zu limit%s\n\nKiln-Operation: policy set\nKiln-Time: %s\n",
			json_array_size(json_object_get(doc, "limits")),
			json_array_size(json_object_get(doc, "limits")) == 1 ? "" : "s",
			timefmt_time_format_rfc3339(now, t));
	if (store_commit_file(s, rc == 0 ? &head : NULL, QUOTA_POLICY_FILE, canon, strlen(canon),
			      msg, &oid, err) < 0)
		goto out;
	rc = rc == 0 ? store_ref_update(s, QUOTA_POLICY_REF, &head, &oid, err)
		     : store_ref_create(s, QUOTA_POLICY_REF, &oid, err);
	if (rc > 0) {
		kiln_error_set(err, "the policy changed while this one was being set; nothing was "
				    "changed");
		kiln_error_hint(err, "see it with kiln policy show, then set yours again");
	}
	if (rc != 0)
		goto out;
	git_oid_tostr(commit, 41, &oid);
	ret = 0;
out:
	json_decref(doc);
	free(text);
	free(canon);
	free(msg);
	return ret;
}

int quota_policy_author(struct store *s, const char *commit, char **who, char **when,
			struct kiln_error *err)
{
	git_commit *c = NULL;
	git_oid oid;
	const git_signature *a;
	struct ledger_entry le;
	char t[21];

	if (git_oid_fromstr(&oid, commit) != 0 ||
	    git_commit_lookup(&c, store_repo(s), &oid) != 0) {
		kiln_error_set(err, "cannot read the policy commit %.12s: %s", commit,
			       store_git_error());
		return -1;
	}
	a = git_commit_author(c);
	*who = xasprintf("%s <%s>", a->name, a->email);
	/* The time kiln recorded (Kiln-Time: the clock, KILN_NOW), else git's. */
	ledger_parse(git_commit_message(c), &le);
	*when =
	    xstrdup(timefmt_time_format_rfc3339(le.has_time ? le.time : (int64_t)a->when.time, t));
	ledger_entry_release(&le);
	git_commit_free(c);
	return 0;
}

/* ---- what is in use ---- */

/* One other workspace's use: from its claim, else its ledger. */
struct use {
	char *ws;
	char *team;
	long gpus;
	double burn;
};

struct uses {
	struct use *v;
	size_t n;
};

static void uses_release(struct uses *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].ws);
		free(u->v[i].team);
	}
	free(u->v);
	u->v = NULL;
	u->n = 0;
}

static void uses_add(struct uses *u, const char *ws, const char *team, long gpus, double burn)
{
	u->v = xrealloc(u->v, (u->n + 1) * sizeof(*u->v));
	u->v[u->n].ws = xstrdup(ws);
	u->v[u->n].team = team ? xstrdup(team) : NULL;
	u->v[u->n].gpus = gpus;
	u->v[u->n].burn = burn;
	u->n++;
}

/* The head of workspace ws as hex, "" when it has no branch; -1 with err. */
static int head_hex(struct store *s, const char *ws, char hex[41], struct kiln_error *err)
{
	char *ref = store_branch_ref(ws);
	git_oid oid;
	int rc = store_ref_read(s, ref, &oid, err);

	free(ref);
	hex[0] = '\0';
	if (rc == 0)
		git_oid_tostr(hex, 41, &oid);
	return rc < 0 ? -1 : 0;
}

/* A claim counts while its workspace's head is the one it was made from. */
static bool claim_current(const json_t *claim, const char *hex)
{
	const char *base = json_string_value(json_object_get(claim, "base"));

	return base && strcmp(base, hex) == 0;
}

/* Every workspace but self: what it runs, from its current claim or its ledger. */
static int uses_read(struct store *s, const json_t *claims, const char *self, int64_t now,
		     struct uses *u, struct kiln_error *err)
{
	const json_t *ws_claims = json_object_get(claims, "workspaces"), *c;
	char **names = NULL, hex[41];
	const char *k;
	size_t n = 0, i;
	int ret = -1;

	if (store_ref_list(s, "refs/heads/", &names, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		json_t *lt = NULL;

		if (strcmp(names[i], self) == 0)
			continue;
		if (head_hex(s, names[i], hex, err) < 0)
			goto out;
		c = json_object_get(ws_claims, names[i]);
		if (c && claim_current(c, hex)) {
			uses_add(u, names[i], json_string_value(json_object_get(c, "team")),
				 (long)json_integer_value(json_object_get(c, "gpus")),
				 json_number_value(json_object_get(c, "burn")));
			continue;
		}
		if (report_workspace(s, names[i], now, &lt, err) < 0)
			goto out;
		if (lt)
			uses_add(u, names[i],
				 json_string_value(json_object_get(json_object_get(lt, "tags"),
								   QUOTA_TEAM_TAG)),
				 (long)json_integer_value(json_object_get(lt, "gpus")),
				 json_number_value(json_object_get(lt, "burn")));
		json_decref(lt);
	}
	/* A claim of a workspace with no branch yet: its first apply is under way. */
	json_object_foreach_const(ws_claims, k, c)
	{
		bool listed = false;

		for (i = 0; i < n; i++)
			listed |= strcmp(names[i], k) == 0;
		if (!listed && strcmp(k, self) != 0 && claim_current(c, ""))
			uses_add(u, k, json_string_value(json_object_get(c, "team")),
				 (long)json_integer_value(json_object_get(c, "gpus")),
				 json_number_value(json_object_get(c, "burn")));
	}
	ret = 0;
out:
	store_names_free(names, n);
	return ret;
}

/* ---- the limits ---- */

static bool limit_covers(const json_t *l, const char *ws, const char *team)
{
	const char *t = json_string_value(json_object_get(l, "team"));
	const char *w = json_string_value(json_object_get(l, "workspace"));

	if (t)
		return team && strcmp(t, team) == 0;
	return w && fnmatch(w, ws, 0) == 0;
}

/* "team=research" or "workspace=prod-*": the limit's scope, as waivers name it. */
static char *limit_scope(const json_t *l)
{
	const char *t = json_string_value(json_object_get(l, "team"));

	return t ? xasprintf("team=%s", t)
		 : xasprintf("workspace=%s", json_string_value(json_object_get(l, "workspace")));
}

/* "team 'research'" or "workspaces 'prod-*'", for messages. */
static char *limit_words(const json_t *l)
{
	const char *t = json_string_value(json_object_get(l, "team"));

	return t ? xasprintf("team '%s'", t)
		 : xasprintf("workspaces '%s'", json_string_value(json_object_get(l, "workspace")));
}

/* The first instant of the month after now's (UTC), and the month as YYYY-MM (ym: 16 bytes). */
static int64_t month_bounds(int64_t now, int64_t *start, char ym[16])
{
	time_t t = (time_t)now;
	struct tm tm;

	gmtime_r(&t, &tm);
	/* Bounded for -Wformat-truncation at -O2: a year of gmtime has 4 digits here. */
	snprintf(ym, 16, "%04d-%02d", (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	*start = (int64_t)timegm(&tm);
	tm.tm_mon++;
	return (int64_t)timegm(&tm);
}

/* What the limit's workspaces spent this month, from the ledger (report_build). */
static int month_spent(struct store *s, const json_t *l, int64_t now, int64_t start,
		       double *spent, struct kiln_error *err)
{
	struct report_options o = {.now = now, .has_since = true, .since = start, .by = "workspace"};
	json_t *doc = NULL;
	const json_t *lt;
	size_t i;

	*spent = 0;
	if (report_build(s, &o, &doc, err) < 0)
		return -1;
	json_array_foreach(json_object_get(doc, "lifetimes"), i, lt)
	{
		const char *team = json_string_value(
		    json_object_get(json_object_get(lt, "tags"), QUOTA_TEAM_TAG));

		if (limit_covers(l, json_string_value(json_object_get(lt, "workspace")), team))
			*spent += json_number_value(json_object_get(lt, "cost"));
	}
	json_decref(doc);
	return 0;
}

/* Append "WS (N GPUs)" or "WS ($X/h)" of every covered other workspace to b. */
static size_t who_uses(const json_t *l, const struct uses *u, bool gpus, struct strbuf *b)
{
	size_t k = 0;

	for (size_t i = 0; i < u->n; i++) {
		char *m;

		if (!limit_covers(l, u->v[i].ws, u->v[i].team) ||
		    (gpus ? u->v[i].gpus == 0 : u->v[i].burn == 0))
			continue;
		sb_adds(b, k++ ? ", " : "");
		if (gpus) {
			sb_addf(b, "%ld in %s", u->v[i].gpus, u->v[i].ws);
		} else {
			m = cost_money(u->v[i].burn);
			sb_addf(b, "%s (%s/h)", u->v[i].ws, m);
			free(m);
		}
	}
	return k;
}

/*
 * One limit of the policy against a: 0 kept (or waived: the waiver's
 * trailer appended to waived), 1 broken (err set).
 */
static int limit_apply(struct store *s, const json_t *l, size_t idx, const char *pcommit,
		       const struct quota_ask *a, const struct uses *u, json_t *waived,
		       struct kiln_error *err)
{
	static const char *const kinds[] = {"max_gpus", "monthly_budget_usd", "max_upfront_usd"};
	char *scope = limit_scope(l), *words = limit_words(l);
	struct strbuf b = {0};
	int ret = 0;

	for (size_t k = 0; k < ARRAY_SIZE(kinds) && ret == 0; k++) {
		const json_t *lim = json_object_get(l, kinds[k]);
		char *id, *m1 = NULL, *m2 = NULL, *m3 = NULL;
		const char *reason;

		if (!lim)
			continue;
		if (b.buf)
			b.buf[b.len = 0] = '\0';
		if (k == 0) {
			long max = (long)json_integer_value(lim), use = a->gpus_after;

			for (size_t i = 0; i < u->n; i++)
				if (limit_covers(l, u->v[i].ws, u->v[i].team))
					use += u->v[i].gpus;
			if (use <= max || a->gpus_after <= a->gpus_now)
				continue;
			if (!who_uses(l, u, true, &b))
				sb_adds(&b, "none elsewhere");
			kiln_error_set(err,
				       "%s may run at most %ld GPUs at once (policy limits[%zu], "
				       "commit %.7s); this plan would bring it to %ld: %ld in %s "
				       "(this plan), and in use %s; nothing was changed",
				       words, max, idx, pcommit, use, a->gpus_after, a->workspace,
				       (b.buf ? b.buf : ""));
		} else if (k == 1) {
			double max = json_number_value(lim), spent, more, total;
			int64_t start, end;
			char ym[16];
			double hours;

			end = month_bounds(a->now, &start, ym);
			hours = (double)(end - a->now) / 3600.0;
			if (a->burn_after <= a->burn_now && a->upfront <= 0)
				continue;
			if (month_spent(s, l, a->now, start, &spent, err) < 0) {
				ret = -1;
				break;
			}
			more = a->burn_after * hours + a->upfront;
			for (size_t i = 0; i < u->n; i++)
				if (limit_covers(l, u->v[i].ws, u->v[i].team))
					more += u->v[i].burn * hours;
			total = round((spent + more) * 100) / 100;
			if (total <= max)
				continue;
			m1 = cost_money(max);
			m2 = cost_money(total);
			m3 = cost_money(spent);
			sb_addf(&b, "%s (this plan", a->workspace);
			if (a->upfront > 0) {
				char *up = cost_money(a->upfront);

				sb_addf(&b, ", %s up front", up);
				free(up);
			}
			sb_adds(&b, ")");
			if (u->n)
				sb_adds(&b, ", ");
			if (!who_uses(l, u, false, &b) && u->n)
				b.buf[b.len -= 2] = '\0';
			kiln_error_set(err,
				       "%s has a monthly budget of %s (policy limits[%zu], commit "
				       "%.7s); this plan would bring %s to %s: %s spent so far, the "
				       "rest at the hourly cost of %s to the month's end; nothing was "
				       "changed",
				       words, m1, idx, pcommit, ym, m2, m3, (b.buf ? b.buf : ""));
		} else {
			double max = json_number_value(lim);

			if (a->upfront <= max)
				continue;
			m1 = cost_money(max);
			m2 = cost_money(a->upfront);
			kiln_error_set(err,
				       "%s may buy at most %s up front in one plan (policy "
				       "limits[%zu], commit %.7s); this plan buys %s up front in %s; "
				       "nothing was changed",
				       words, m1, idx, pcommit, m2, a->workspace);
		}
		free(m1);
		free(m2);
		free(m3);
		id = xasprintf("%s:%s", scope, kinds[k]);
		reason = json_string_value(json_object_get(a->waivers, id));
		if (reason) {
			json_array_append_new(waived,
					      json_sprintf("Kiln-Quota-Waived: %s: %s", id, reason));
			memset(err, 0, sizeof(*err));
		} else {
			kiln_error_hint(err,
					"shrink the plan, free what those workspaces hold (kiln "
					"down), change the limit (kiln policy set FILE), or have an "
					"approved plan waive it: kiln apply PLAN --waive-limit %s "
					"--waive-reason TEXT",
					id);
			ret = 1;
		}
		free(id);
	}
	sb_release(&b);
	free(scope);
	free(words);
	return ret;
}

/* The claims document at Q (or a new one when the ref is absent: *has false). */
static int claims_read(struct store *s, git_oid *q, bool *has, json_t **out,
		       struct kiln_error *err)
{
	char *text = NULL;
	json_error_t je;
	size_t len;
	int rc = store_ref_read(s, QUOTA_CLAIMS_REF, q, err);

	*out = NULL;
	*has = rc == 0;
	if (rc < 0)
		return -1;
	if (rc > 0) {
		*out = json_pack("{s:{}}", "workspaces");
		return 0;
	}
	if (store_read_file(s, q, QUOTA_CLAIMS_FILE, &text, &len, err) < 0)
		return -1;
	*out = jsonr_loadb(text, len, 0, &je);
	free(text);
	if (!json_is_object(*out) || !json_is_object(json_object_get(*out, "workspaces"))) {
		json_decref(*out);
		*out = NULL;
		kiln_error_set(err, "%s:%s is damaged: not a claims document", QUOTA_CLAIMS_REF,
			       QUOTA_CLAIMS_FILE);
		kiln_error_hint(err, "delete the ref (git update-ref -d %s in the state "
				     "repository): the next apply writes it again",
				QUOTA_CLAIMS_REF);
		return -1;
	}
	return 0;
}

/* Write a's claim over claims (dropping claims no longer current) and swap the ref. */
static int claim_write(struct store *s, json_t *claims, const git_oid *q, bool has,
		       const struct quota_ask *a, struct kiln_error *err)
{
	json_t *ws = json_object_get(claims, "workspaces"), *keep = json_object(), *c;
	char *text, *msg, t[21], hex[41];
	const char *k;
	git_oid oid;
	int rc = -1;

	json_object_foreach(ws, k, c)
	{
		if (strcmp(k, a->workspace) != 0 && head_hex(s, k, hex, err) == 0 &&
		    claim_current(c, hex))
			json_object_set(keep, k, c);
	}
	json_object_set_new(keep, a->workspace,
			    json_pack("{s:s, s:s?, s:I, s:f, s:s}", "base", a->head, "team",
				      a->team, "gpus", (json_int_t)a->gpus_after, "burn",
				      round(a->burn_after * 1e4) / 1e4, "time",
				      timefmt_time_format_rfc3339(a->now, t)));
	json_object_set_new(claims, "workspaces", keep);
	text = jsonw_dumps(claims, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12) | JSONW_NEWLINE, NULL);
	msg = xasprintf("quota claim: %s, %ld GPUs\n\nKiln-Operation: quota claim\nKiln-Time: %s\n",
			a->workspace, a->gpus_after, t);
	if (store_commit_file(s, has ? q : NULL, QUOTA_CLAIMS_FILE, text, strlen(text), msg, &oid,
			      err) == 0)
		rc = has ? store_ref_update(s, QUOTA_CLAIMS_REF, q, &oid, err)
			 : store_ref_create(s, QUOTA_CLAIMS_REF, &oid, err);
	free(text);
	free(msg);
	return rc;
}

/* KILN_TEST_STOP_AT=quota: stop (SIGSTOP) after the check, before the claim's swap (tests). */
static void test_stop(void)
{
	const char *at = getenv("KILN_TEST_STOP_AT");

	if (at && strcmp(at, "quota") == 0)
		raise(SIGSTOP);
}

int quota_check(struct store *s, const struct quota_ask *a, bool reserve, json_t **waived,
		struct kiln_error *err)
{
	json_t *policy = NULL, *claims = NULL, *w = json_array();
	const json_t *l;
	char pcommit[41];
	int ret = -1, rc = 0;
	size_t i;

	if (waived)
		*waived = NULL;
	if (store_sync(s, err) < 0 || (rc = quota_policy_read(s, &policy, pcommit, err)) < 0)
		goto out;
	if (rc > 0) {
		ret = 0;
		goto out;
	}
	for (int tries = 0; tries < CLAIM_TRIES; tries++) {
		struct uses u = {0};
		git_oid q;
		bool has;

		json_decref(claims);
		json_array_clear(w);
		if (claims_read(s, &q, &has, &claims, err) < 0 ||
		    uses_read(s, claims, a->workspace, a->now, &u, err) < 0) {
			uses_release(&u);
			goto out;
		}
		rc = 0;
		json_array_foreach(json_object_get(policy, "limits"), i, l)
		{
			if (!limit_covers(l, a->workspace, a->team))
				continue;
			if ((rc = limit_apply(s, l, i, pcommit, a, &u, w, err)) != 0)
				break;
		}
		uses_release(&u);
		if (rc != 0 || !reserve) {
			ret = rc;
			goto out;
		}
		test_stop();
		rc = claim_write(s, claims, &q, has, a, err);
		if (rc < 0)
			goto out;
		if (rc == 0) {
			ret = 0;
			goto out;
		}
		/* Another claim came first: read it and check again. */
		memset(err, 0, sizeof(*err));
		if (store_sync(s, err) < 0)
			goto out;
	}
	kiln_error_set(err, "the quota claims kept changing (%d tries); nothing was changed",
		       CLAIM_TRIES);
	kiln_error_hint(err, "run the apply again");
out:
	if (ret == 0 && waived && json_array_size(w))
		*waived = json_incref(w);
	json_decref(w);
	json_decref(policy);
	json_decref(claims);
	return ret;
}
