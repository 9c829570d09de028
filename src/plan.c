/*
 * plan.c - the plan document's digest, its shape check and plan files.
 *
 * This file reads plan documents; diff.c builds them and apply.c executes
 * them. It owns the digest (what a plan file and a state commit name a plan
 * by), the file that `kiln plan --out FILE` writes and `kiln apply FILE`
 * reads, and the check that a document has the shape plan.h describes, so
 * the executor never meets an action list or a policy it does not know.
 * The renderings are in plan_render.c.
 */
#include "plan.h"
#include "jsonw.h"
#include "jsonc.h"
#include "jsonr.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

/* A plan for a cluster of 10000 nodes is a few MiB; this bounds a hostile file. */
#define PLAN_FILE_LIMIT ((size_t)256 << 20)
/* plan_file_is() looks this far into a file for the marker key. */
#define PLAN_FILE_PEEK 4096
#define PLAN_FILE_VERSION 1

/*
 * The digest covers the plan exactly as jansson prints it compact, with
 * sorted keys, ASCII only (other characters as \uXXXX escapes, upper-case
 * hex, surrogate pairs above U+FFFF) and reals to 17 significant digits,
 * which read back to the same double: so the text a plan file holds may be
 * indented or reordered and still carry the same digest.
 */
#define PLAN_DIGEST_FLAGS                                                                          \
	(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17))

char *plan_canonical(const json_t *plan)
{
	if (!json_is_object(plan))
		return NULL;
	return jsonw_dumps(plan, PLAN_DIGEST_FLAGS, NULL);
}

char *plan_digest(const json_t *plan)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	char *text;
	unsigned int i;

	text = plan_canonical(plan);
	if (!text)
		return NULL;
	if (EVP_Digest(text, strlen(text), md, &md_len, EVP_sha256(), NULL) != 1) {
		free(text);
		return NULL;
	}
	free(text);
	for (i = 0; i < md_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return xasprintf("sha256:%s", hex);
}

/* ---- the shape check ---- */

/* The action lists kiln executes, as in Terraform's plan. */
static const char *const plan_actions[][2] = {
    {"no-op", NULL},	  {"create", NULL},	{"update", NULL},
    {"delete", "create"}, {"create", "delete"}, {"delete", NULL},
};

static const char *const plan_policies[] = {"live", "replace", "stop"};

static bool actions_known(const json_t *actions)
{
	size_t i, n = json_array_size(actions);

	if (!json_is_array(actions) || n < 1 || n > 2)
		return false;
	for (i = 0; i < ARRAY_SIZE(plan_actions); i++) {
		const char *a = json_string_value(json_array_get(actions, 0));
		const char *b = json_string_value(json_array_get(actions, 1));
		size_t want = plan_actions[i][1] ? 2 : 1;

		if (n == want && a && strcmp(a, plan_actions[i][0]) == 0 &&
		    (n == 1 || (b && strcmp(b, plan_actions[i][1]) == 0)))
			return true;
	}
	return false;
}

static bool policy_known(const char *p)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(plan_policies); i++)
		if (strcmp(p, plan_policies[i]) == 0)
			return true;
	return false;
}

/*
 * One fault found by the check. prefix says whose plan it is ("f.plan is
 * not a valid kiln plan"); each fault names the JSON path of the value.
 */
struct shape {
	const char *prefix;
	struct kiln_error *err;
};

static int shape_fail(struct shape *s, const char *where, const char *what)
{
	kiln_error_set(s->err, "%s: %s %s", s->prefix, where, what);
	return -1;
}

static int shape_kind(struct shape *s, const char *where, const json_t *v, const char *want)
{
	char *what = v ? xasprintf("is %s, not %s", jsonr_kind(v), want) : xstrdup("is missing");

	shape_fail(s, where, what);
	free(what);
	return -1;
}

/* Every element of v (an array) a string. */
static int check_strings(struct shape *s, const char *where, const json_t *v)
{
	size_t i;
	const json_t *item;

	if (!json_is_array(v))
		return shape_kind(s, where, v, "an array of strings");
	json_array_foreach(v, i, item)
	{
		if (!json_is_string(item)) {
			char *at = xasprintf("%s[%zu]", where, i);
			int rc = shape_kind(s, at, item, "a string");

			free(at);
			return rc;
		}
	}
	return 0;
}

/* before_sensitive, after_sensitive: an object, or false (Terraform's "none"). */
static bool sensitive_shape(const json_t *v)
{
	return !v || json_is_object(v) || json_is_boolean(v);
}

static int check_attributes(struct shape *s, const char *where, const json_t *attrs)
{
	size_t i;
	const json_t *a;
	int rc = 0;

	if (!json_is_array(attrs))
		return shape_kind(s, where, attrs, "an array");
	json_array_foreach(attrs, i, a)
	{
		char *at = xasprintf("%s[%zu]", where, i);
		const json_t *policy = json_object_get(a, "policy");

		if (!json_is_object(a))
			rc = shape_kind(s, at, a, "an object");
		else if (!json_is_string(json_object_get(a, "name")))
			rc = shape_kind(s, at, json_object_get(a, "name"),
					"an object with a string \"name\"");
		else if (policy && !json_is_null(policy) &&
			 !(json_is_string(policy) && policy_known(json_string_value(policy)))) {
			char *p = jsonw_dumps(policy, JSON_ENCODE_ANY | JSON_COMPACT, NULL);
			char *what = xasprintf("has policy %s; kiln knows live, replace and stop",
					       p ? p : "?");

			rc = shape_fail(s, at, what);
			free(what);
			free(p);
		}
		free(at);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The "kiln" object of one change: optional, and only what the renderer and executor read. */
static int check_change_kiln(struct shape *s, const char *where, const json_t *k)
{
	char *at;
	const json_t *v;
	int rc = 0;

	if (!k)
		return 0;
	if (!json_is_object(k))
		return shape_kind(s, where, k, "an object");
	at = xasprintf("%s.id", where);
	v = json_object_get(k, "id");
	if (v && !json_is_string(v) && !json_is_null(v))
		rc = shape_kind(s, at, v, "a string or null");
	free(at);
	if (rc == 0 && (v = json_object_get(k, "deps"))) {
		at = xasprintf("%s.deps", where);
		rc = check_strings(s, at, v);
		free(at);
	}
	if (rc == 0 && (v = json_object_get(k, "after"))) {
		at = xasprintf("%s.after", where);
		rc = check_strings(s, at, v);
		free(at);
	}
	if (rc == 0 && (v = json_object_get(k, "attributes"))) {
		at = xasprintf("%s.attributes", where);
		rc = check_attributes(s, at, v);
		free(at);
	}
	if (rc == 0 && (v = json_object_get(k, "reason")) && !json_is_string(v)) {
		at = xasprintf("%s.reason", where);
		rc = shape_kind(s, at, v, "a string");
		free(at);
	}
	if (rc == 0 && (v = json_object_get(k, "retain")) && !json_is_boolean(v)) {
		at = xasprintf("%s.retain", where);
		rc = shape_kind(s, at, v, "true or false");
		free(at);
	}
	return rc;
}

/* The "change" object: the part the executor acts on, so checked strictly. */
static int check_change_body(struct shape *s, const char *where, const json_t *c)
{
	static const char *const objects[] = {"before", "after"};
	const json_t *v;
	char *at = NULL;
	int rc = 0;
	size_t i;

	if (!json_is_object(c))
		return shape_kind(s, where, c, "an object");
	v = json_object_get(c, "actions");
	if (!actions_known(v)) {
		char *text = v ? jsonw_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT, NULL) : NULL;
		char *what = v ? xasprintf("is %s, which is not an action list kiln knows",
					   text ? text : "?")
			       : xstrdup("is missing");

		at = xasprintf("%s.actions", where);
		rc = shape_fail(s, at, what);
		kiln_error_hint(s->err, "actions are [\"no-op\"], [\"create\"], [\"update\"], "
					"[\"delete\", \"create\"], [\"create\", \"delete\"] or "
					"[\"delete\"]");
		free(what);
		free(text);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(objects); i++) {
		v = json_object_get(c, objects[i]);
		if (!json_is_object(v) && !json_is_null(v)) {
			at = xasprintf("%s.%s", where, objects[i]);
			rc = shape_kind(s, at, v, "an object or null");
			goto out;
		}
	}
	if ((v = json_object_get(c, "after_unknown")) && !json_is_object(v)) {
		at = xasprintf("%s.after_unknown", where);
		rc = shape_kind(s, at, v, "an object");
		goto out;
	}
	if (!sensitive_shape(v = json_object_get(c, "before_sensitive"))) {
		at = xasprintf("%s.before_sensitive", where);
		rc = shape_kind(s, at, v, "an object or false");
		goto out;
	}
	if (!sensitive_shape(v = json_object_get(c, "after_sensitive"))) {
		at = xasprintf("%s.after_sensitive", where);
		rc = shape_kind(s, at, v, "an object or false");
		goto out;
	}
	if ((v = json_object_get(c, "replace_paths")) && !json_is_array(v)) {
		at = xasprintf("%s.replace_paths", where);
		rc = shape_kind(s, at, v, "an array");
		goto out;
	}
	if ((v = json_object_get(c, "importing")) &&
	    !(json_is_object(v) && json_is_string(json_object_get(v, "id")))) {
		at = xasprintf("%s.importing", where);
		rc = shape_kind(s, at, v, "an object with a string \"id\"");
	}
out:
	free(at);
	return rc;
}

static int check_change(struct shape *s, const char *list, size_t i, const json_t *rc_obj)
{
	static const char *const strings[] = {"address", "type", "name"};
	char *where = xasprintf("%s[%zu]", list, i);
	char *at = NULL;
	const json_t *v;
	int rc = 0;
	size_t k;

	if (!json_is_object(rc_obj)) {
		rc = shape_kind(s, where, rc_obj, "an object");
		goto out;
	}
	for (k = 0; k < ARRAY_SIZE(strings); k++) {
		v = json_object_get(rc_obj, strings[k]);
		if (!json_is_string(v) || !*json_string_value(v)) {
			at = xasprintf("%s.%s", where, strings[k]);
			rc = shape_kind(s, at, v, "a non-empty string");
			goto out;
		}
	}
	if ((v = json_object_get(rc_obj, "action_reason")) && !json_is_string(v)) {
		at = xasprintf("%s.action_reason", where);
		rc = shape_kind(s, at, v, "a string");
		goto out;
	}
	if ((v = json_object_get(rc_obj, "deposed")) && !json_is_string(v)) {
		at = xasprintf("%s.deposed", where);
		rc = shape_kind(s, at, v, "a string");
		goto out;
	}
	at = xasprintf("%s.change", where);
	rc = check_change_body(s, at, json_object_get(rc_obj, "change"));
	if (rc == 0) {
		free(at);
		at = xasprintf("%s.kiln", where);
		rc = check_change_kiln(s, at, json_object_get(rc_obj, "kiln"));
	}
out:
	free(at);
	free(where);
	return rc;
}

static int check_change_list(struct shape *s, const json_t *plan, const char *key, bool required)
{
	const json_t *list = json_object_get(plan, key);
	const json_t *item;
	size_t i;

	if (!list && !required)
		return 0;
	if (!json_is_array(list))
		return shape_kind(s, key, list, "an array");
	json_array_foreach(list, i, item) if (check_change(s, key, i, item) < 0) return -1;
	return 0;
}

/*
 * The versions first (a newer plan is named as newer, not as malformed:
 * version_prefix and newer_hint say so), then the shape. Unknown keys are
 * allowed: a plan of the same versions may gain keys (kiln-plan-json(5)
 * promises that), and this kiln ignores them.
 */
static int plan_check(const json_t *plan, const char *prefix, const char *version_prefix,
		      const char *newer_hint, struct kiln_error *err)
{
	struct shape s = {prefix, err};
	const json_t *fv = json_object_get(plan, "format_version");
	const json_t *k = json_object_get(plan, "kiln");
	const json_t *pv = json_object_get(k, "plan_version");
	const char *fvs = json_string_value(fv);

	if (!json_is_object(plan))
		return shape_kind(&s, "the plan", plan, "an object");
	if (!fvs)
		return shape_kind(&s, "format_version", fv, "a string such as \"1.2\"");
	if (strncmp(fvs, "1.", 2) != 0 || fvs[2] < '0' || fvs[2] > '9' ||
	    strspn(fvs + 2, "0123456789") != strlen(fvs + 2)) {
		kiln_error_set(err,
			       "%s: its format_version is \"%s\", and this kiln (%s) reads 1.x",
			       version_prefix, fvs, KILN_VERSION);
		kiln_error_hint(err, "%s", newer_hint);
		return -1;
	}
	if (!json_is_object(k))
		return shape_kind(&s, "kiln", k, "an object");
	if (!json_is_integer(pv))
		return shape_kind(&s, "kiln.plan_version", pv, "an integer");
	if (json_integer_value(pv) != PLAN_VERSION) {
		kiln_error_set(err,
			       "%s: its kiln.plan_version is %" JSON_INTEGER_FORMAT
			       ", and this kiln (%s) reads version %d",
			       version_prefix, json_integer_value(pv), KILN_VERSION, PLAN_VERSION);
		kiln_error_hint(err, "%s", newer_hint);
		return -1;
	}
	if (check_change_list(&s, plan, "resource_changes", true) < 0 ||
	    check_change_list(&s, plan, "resource_drift", false) < 0)
		return -1;
	return 0;
}

/* ---- the typed view ---- */

enum plan_action plan_action_of(const json_t *actions)
{
	size_t i, n = json_array_size(actions);
	const char *a = json_string_value(json_array_get(actions, 0));
	const char *b = json_string_value(json_array_get(actions, 1));

	for (i = 0; a && i < ARRAY_SIZE(plan_actions); i++)
		if (n == (plan_actions[i][1] ? 2u : 1u) && strcmp(a, plan_actions[i][0]) == 0 &&
		    (n == 1 || (b && strcmp(b, plan_actions[i][1]) == 0)))
			return (enum plan_action)i;
	return PLAN_NO_OP;
}

bool plan_action_deletes(enum plan_action a)
{
	return a == PLAN_DELETE || a == PLAN_DELETE_CREATE || a == PLAN_CREATE_DELETE;
}

bool plan_action_creates(enum plan_action a)
{
	return a == PLAN_CREATE || a == PLAN_DELETE_CREATE || a == PLAN_CREATE_DELETE;
}

const json_t *plan_kiln(const json_t *plan, const char *key)
{
	return json_object_get(json_object_get(plan, "kiln"), key);
}

json_t *plan_kiln_edit(json_t *plan, const char *key)
{
	return json_object_get(json_object_get(plan, "kiln"), key);
}

void plan_kiln_set(json_t *plan, const char *key, json_t *value)
{
	json_t *k = json_object_get(plan, "kiln");

	if (k)
		json_object_set_new(k, key, value);
	else
		json_decref(value);
}

bool plan_is_destroy(const json_t *plan)
{
	return json_is_true(plan_kiln(plan, "destroy"));
}

const char *plan_workspace(const json_t *plan)
{
	return json_string_value(plan_kiln(plan, "workspace"));
}

const char *plan_spec_file(const json_t *plan)
{
	return json_string_value(json_object_get(plan_kiln(plan, "spec"), "file"));
}

const char *plan_spec_digest(const json_t *plan)
{
	return json_string_value(json_object_get(plan_kiln(plan, "spec"), "digest"));
}

bool plan_has_changes(const json_t *plan)
{
	return json_is_true(plan_kiln(plan, "changes"));
}

static const json_t *plan_kiln_object(const json_t *plan, const char *key)
{
	const json_t *v = plan_kiln(plan, key);

	return json_is_object(v) ? v : NULL;
}

const json_t *plan_summary(const json_t *plan)
{
	return plan_kiln_object(plan, "summary");
}

const json_t *plan_cost(const json_t *plan)
{
	return plan_kiln_object(plan, "cost");
}

static bool cost_number(const json_t *plan, const char *key, double *usd)
{
	const json_t *v = json_object_get(plan_cost(plan), key);

	if (!json_is_number(v))
		return false;
	*usd = json_number_value(v);
	return true;
}

bool plan_hourly_before(const json_t *plan, double *usd)
{
	return cost_number(plan, "hourly_before", usd);
}

bool plan_hourly_after(const json_t *plan, double *usd)
{
	return cost_number(plan, "hourly_after", usd);
}

const json_t *plan_findings(const json_t *plan)
{
	const json_t *v = plan_kiln(plan, "findings");

	return json_is_array(v) ? v : NULL;
}

const json_t *plan_findings_summary(const json_t *plan)
{
	return plan_kiln_object(plan, "findings_summary");
}

void plan_finding_read(const json_t *f, struct plan_finding *out)
{
	*out = (struct plan_finding){
	    .rule = json_string_value(json_object_get(f, "rule")),
	    .severity = json_string_value(json_object_get(f, "severity")),
	    .message = json_string_value(json_object_get(f, "message")),
	    .address = json_string_value(json_object_get(f, "address")),
	    .spec = json_string_value(json_object_get(f, "spec")),
	    .waived = json_object_get(f, "waived") != NULL,
	};
}

static const char *nonempty(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && *s ? s : NULL;
}

/* One change's view; false when what the view needs is malformed. */
static bool change_view(struct plan_change *c, const json_t *rc)
{
	const json_t *k;

	c->json = rc;
	c->address = nonempty(json_object_get(rc, "address"));
	c->type = nonempty(json_object_get(rc, "type"));
	c->name = nonempty(json_object_get(rc, "name"));
	c->deposed = json_string_value(json_object_get(rc, "deposed"));
	c->action_reason = json_string_value(json_object_get(rc, "action_reason"));
	c->body = json_object_get(rc, "change");
	c->actions = json_object_get(c->body, "actions");
	if (!c->address || !c->type || !c->name || !json_is_object(c->body) ||
	    !actions_known(c->actions))
		return false;
	c->action = plan_action_of(c->actions);
	c->before = json_object_get(c->body, "before");
	c->after = json_object_get(c->body, "after");
	c->after_unknown = json_object_get(c->body, "after_unknown");
	c->before_sensitive = json_object_get(c->body, "before_sensitive");
	c->after_sensitive = json_object_get(c->body, "after_sensitive");
	c->replace_paths = json_object_get(c->body, "replace_paths");
	c->importing = json_object_get(c->body, "importing");
	c->kiln = k = json_object_get(rc, "kiln");
	c->id = json_string_value(json_object_get(k, "id"));
	c->deps = json_object_get(k, "deps");
	c->kiln_after = json_object_get(k, "after");
	c->created_only = json_object_get(k, "created_only");
	c->attributes = json_object_get(k, "attributes");
	c->reason = json_string_value(json_object_get(k, "reason"));
	c->retain = json_is_true(json_object_get(k, "retain"));
	return true;
}

static int view_list(struct plan_change **out, size_t *n, const json_t *plan, const char *key,
		     struct kiln_error *err)
{
	const json_t *list = json_object_get(plan, key), *rc;
	struct shape s = {"the plan is not valid", err};
	size_t i;

	*n = json_array_size(list);
	*out = *n ? xcalloc(*n, sizeof(**out)) : NULL;
	json_array_foreach(list, i, rc)
	{
		if (change_view(&(*out)[i], rc))
			continue;
		if (check_change(&s, key, i, rc) == 0)
			kiln_error_set(err, "%s: %s[%zu] is not a change kiln reads", s.prefix, key,
				       i);
		if (!err->hint[0])
			kiln_error_hint(err, "a plan comes from kiln plan and is not edited: make "
					     "it again with kiln plan");
		return -1;
	}
	return 0;
}

int plan_view_build(struct plan_view *v, const json_t *plan, struct kiln_error *err)
{
	memset(v, 0, sizeof(*v));
	if (view_list(&v->changes, &v->nchanges, plan, "resource_changes", err) < 0 ||
	    view_list(&v->drift, &v->ndrift, plan, "resource_drift", err) < 0) {
		plan_view_release(v);
		return -1;
	}
	return 0;
}

void plan_view_release(struct plan_view *v)
{
	free(v->changes);
	free(v->drift);
	memset(v, 0, sizeof(*v));
}

/* ---- plan files ---- */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* So that the rename itself survives a crash; best effort, as git does. */
static void fsync_parent(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

/* An approval has exactly these members, all strings (see plan.h). */
static const char *const approval_members[] = {"signer",    "time",	  "key_id",
					       "algorithm", "public_key", "signature"};

/* More approvals than any review needs; bounds the work a hostile file asks for. */
#define PLAN_APPROVALS_MAX 256

/*
 * The shape of the "approvals" member, strictly: an unknown or missing
 * member is refused rather than ignored, so that no field a reader might
 * trust can ride along unsigned.
 */
static int check_approvals(const json_t *approvals, const char *path, struct kiln_error *err)
{
	const json_t *a, *v;
	const char *key;
	size_t i, k;

	if (!json_is_array(approvals)) {
		kiln_error_set(err,
			       "%s is not a valid kiln plan file: its \"approvals\" is %s, not an "
			       "array",
			       path, jsonr_kind(approvals));
		return -1;
	}
	if (json_array_size(approvals) > PLAN_APPROVALS_MAX) {
		kiln_error_set(err,
			       "%s is not a valid kiln plan file: it has %zu approvals, more than "
			       "the %d kiln reads",
			       path, json_array_size(approvals), PLAN_APPROVALS_MAX);
		return -1;
	}
	json_array_foreach(approvals, i, a)
	{
		if (!json_is_object(a)) {
			kiln_error_set(
			    err,
			    "%s is not a valid kiln plan file: approvals[%zu] is %s, not "
			    "an object",
			    path, i, jsonr_kind(a));
			return -1;
		}
		for (k = 0; k < ARRAY_SIZE(approval_members); k++) {
			v = json_object_get(a, approval_members[k]);
			if (!v) {
				kiln_error_set(
				    err,
				    "%s is not a valid kiln plan file: approvals[%zu] has "
				    "no \"%s\"",
				    path, i, approval_members[k]);
				return -1;
			}
			if (!json_is_string(v)) {
				kiln_error_set(
				    err,
				    "%s is not a valid kiln plan file: approvals[%zu].%s "
				    "is %s, not a string",
				    path, i, approval_members[k], jsonr_kind(v));
				return -1;
			}
		}
		json_object_foreach_const(a, key, v)
		{
			for (k = 0; k < ARRAY_SIZE(approval_members); k++)
				if (strcmp(key, approval_members[k]) == 0)
					break;
			if (k == ARRAY_SIZE(approval_members)) {
				kiln_error_set(
				    err,
				    "%s is not a valid kiln plan file: approvals[%zu] has "
				    "a member \"%s\" that an approval does not have",
				    path, i, key);
				return -1;
			}
		}
	}
	return 0;
}

int plan_file_write(const char *path, const json_t *plan, struct kiln_error *err)
{
	return plan_file_write_approvals(path, plan, NULL, err);
}

int plan_file_write_approvals(const char *path, const json_t *plan, const json_t *approvals,
			      struct kiln_error *err)
{
	char *prefix = xasprintf("cannot write plan file %s: the plan is not valid", path);
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	char *digest = NULL, *text = NULL;
	json_t *file = NULL;
	struct stat st;
	int fd = -1, ret = -1;

	/* rename() over a directory fails as EBUSY or EISDIR, which name neither cause nor fix. */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		size_t n = strlen(path);

		while (n > 1 && path[n - 1] == '/')
			n--;
		kiln_error_set(err, "cannot write plan file %s: it is a directory", path);
		kiln_error_hint(err, "give the name of a file, such as %.*s%splan.kiln", (int)n,
				path, path[n - 1] == '/' ? "" : "/");
		goto out;
	}
	if (plan_check(plan, prefix, prefix, "this is a bug in kiln: please report it", err) < 0)
		goto out;
	digest = plan_digest(plan);
	if (!digest) {
		kiln_error_set(err, "cannot write plan file %s: the plan cannot be encoded", path);
		goto out;
	}
	/* Insertion order puts the marker first, where plan_file_is() looks for it. */
	file = json_object();
	json_object_set_new(file, "kiln_plan_file", json_integer(PLAN_FILE_VERSION));
	json_object_set_new(file, "digest", json_string(digest));
	/* Before the plan, so that a reader of the file sees who approved it first. */
	if (json_array_size(approvals) > 0) {
		if (check_approvals(approvals, path, err) < 0) {
			kiln_error_hint(err, "this is a bug in kiln: please report it");
			goto out;
		}
		json_object_set_new(file, "approvals", jsonc_share(approvals));
	}
	json_object_set_new(file, "plan", jsonc_share(plan));
	text = jsonw_dumps(file, JSON_INDENT(2) | JSON_REAL_PRECISION(17), NULL);
	if (!text) {
		kiln_error_set(err, "cannot write plan file %s: the plan cannot be encoded", path);
		goto out;
	}
	if (unlink(tmp) < 0 && errno != ENOENT)
		goto fail;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 || write_all(fd, text, strlen(text)) < 0 ||
	    write_all(fd, "\n", 1) < 0 || fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto fail;
	fsync_parent(path);
	ret = 0;
	goto out;
fail:
	kiln_error_set(err, "cannot write plan file %s: %s", path, strerror(errno));
	kiln_error_hint(err, "check that the directory exists and that you may write to it");
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	json_decref(file);
	free(text);
	free(digest);
	free(tmp);
	free(prefix);
	return ret;
}

#define REMAKE_HINT "make a new one with kiln plan --out FILE"

/* The wrapper: {"kiln_plan_file": 1, "digest": "sha256:..", "plan": {..}}. */
static int check_wrapper(const json_t *file, const char *path, struct kiln_error *err)
{
	const json_t *version = json_object_get(file, "kiln_plan_file");
	const json_t *digest = json_object_get(file, "digest");
	const json_t *plan = json_object_get(file, "plan");
	json_int_t v;

	if (!json_is_object(file)) {
		kiln_error_set(err,
			       "%s is not a kiln plan file: its top level is %s, not an object",
			       path, jsonr_kind(file));
		goto not_plan;
	}
	if (!version) {
		kiln_error_set(err, "%s is not a kiln plan file: it has no \"kiln_plan_file\" key",
			       path);
		goto not_plan;
	}
	if (!json_is_integer(version)) {
		kiln_error_set(err,
			       "%s is not a kiln plan file: its \"kiln_plan_file\" is %s, not "
			       "an integer",
			       path, jsonr_kind(version));
		goto not_plan;
	}
	v = json_integer_value(version);
	if (v > PLAN_FILE_VERSION) {
		kiln_error_set(err,
			       "%s is a version %" JSON_INTEGER_FORMAT " plan file, written by a "
			       "kiln newer than this one (%s), which reads version %d",
			       path, v, KILN_VERSION, PLAN_FILE_VERSION);
		kiln_error_hint(err, "apply it with the kiln that wrote it, or make a new plan "
				     "with this one (kiln plan --out FILE)");
		return -1;
	}
	if (v != PLAN_FILE_VERSION) {
		kiln_error_set(err,
			       "%s is a version %" JSON_INTEGER_FORMAT " plan file, which no kiln "
			       "writes; this one (%s) reads version %d",
			       path, v, KILN_VERSION, PLAN_FILE_VERSION);
		kiln_error_hint(err, REMAKE_HINT);
		return -1;
	}
	if (!json_is_string(digest) || !str_starts_with(json_string_value(digest), "sha256:")) {
		kiln_error_set(err,
			       "%s is not a kiln plan file: its \"digest\" is %s, not "
			       "\"sha256:HEX\"",
			       path, jsonr_kind(digest));
		kiln_error_hint(err, REMAKE_HINT);
		return -1;
	}
	if (!json_is_object(plan)) {
		kiln_error_set(err, "%s is not a kiln plan file: its \"plan\" is %s, not an object",
			       path, jsonr_kind(plan));
		kiln_error_hint(err, REMAKE_HINT);
		return -1;
	}
	if (json_object_get(file, "approvals") &&
	    check_approvals(json_object_get(file, "approvals"), path, err) < 0) {
		kiln_error_hint(err,
				"approvals are what kiln approve writes; delete the faulty one "
				"from \"approvals\" (the plan and its digest stay as they "
				"are) and approve again");
		return -1;
	}
	return 0;
not_plan:
	kiln_error_hint(err, "a plan file is what kiln plan --out FILE writes; a spec is YAML");
	return -1;
}

int plan_file_read(json_t **out, const char *path, struct kiln_error *err)
{
	return plan_file_read_approvals(out, NULL, path, err);
}

int plan_file_read_approvals(json_t **out, json_t **approvals, const char *path,
			     struct kiln_error *err)
{
	json_t *file = NULL;
	json_error_t jerr;
	char *buf = NULL, *digest = NULL, *prefix = NULL, *vprefix = NULL, *newer = NULL;
	const char *stored;
	json_t *plan; /* the file's own member: shared with the caller below */
	size_t len = 0;
	int ret = -1;

	*out = NULL;
	if (approvals)
		*approvals = NULL;
	if (util_file_read_all(path, PLAN_FILE_LIMIT, &buf, &len, err) < 0) {
		kiln_error_hint(err, "give the file that kiln plan --out FILE wrote");
		goto out;
	}
	file = jsonr_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!file) {
		kiln_error_set(err, "%s is not a kiln plan file: line %d column %d: %s", path,
			       jerr.line, jerr.column, jerr.text);
		kiln_error_hint(err, "a plan file is what kiln plan --out FILE writes; a spec "
				     "is YAML");
		goto out;
	}
	if (check_wrapper(file, path, err) < 0)
		goto out;
	plan = json_object_get(file, "plan");
	stored = json_string_value(json_object_get(file, "digest"));
	digest = plan_digest(plan);
	if (!digest || strcmp(digest, stored) != 0) {
		/*
		 * Neither digest is printed: the one that matches would be pasted
		 * back. The digest is a check against damage, not a seal.
		 */
		kiln_error_set(err,
			       "%s has been modified since kiln wrote it: its contents do not "
			       "match its digest",
			       path);
		if (json_array_size(json_object_get(file, "approvals")) > 0)
			kiln_error_hint(err,
					"a plan file must not be edited, and its approvals are for "
					"the plan as it was signed; " REMAKE_HINT " and have it "
					"approved again");
		else
			kiln_error_hint(err, "a plan file must not be edited; " REMAKE_HINT);
		goto out;
	}
	prefix = xasprintf("%s is not a valid kiln plan", path);
	vprefix = xasprintf("%s cannot be read by this kiln", path);
	newer = xasprintf("it was made by kiln %s; apply it with that kiln, or make a new plan "
			  "with this one (kiln plan --out FILE)",
			  json_string_value(json_object_get(plan, "kiln_version"))
			      ? json_string_value(json_object_get(plan, "kiln_version"))
			      : "of another version");
	if (plan_check(plan, prefix, vprefix, newer, err) < 0) {
		if (!err || !err->hint[0])
			kiln_error_hint(err, "it was not made by kiln plan; " REMAKE_HINT);
		goto out;
	}
	*out = json_incref(plan);
	if (approvals) {
		*approvals = json_incref(json_object_get(file, "approvals"));
		if (!*approvals)
			*approvals = json_array();
	}
	ret = 0;
out:
	json_decref(file);
	free(newer);
	free(vprefix);
	free(prefix);
	free(digest);
	free(buf);
	return ret;
}

int plan_file_workspace_check(const char *file, const char *ws, const char *flag_ws,
			      const char *env_ws, struct kiln_error *err)
{
	if (!ws)
		return 0;
	if (flag_ws && strcmp(flag_ws, ws) != 0) {
		kiln_error_set(err, "%s was made for workspace '%s', not '%s'", file, ws, flag_ws);
		kiln_error_hint(err, "drop -w, or make a plan for that workspace");
		return -1;
	}
	/* The variable names a workspace exactly as -w does. */
	if (!flag_ws && env_ws && strcmp(env_ws, ws) != 0) {
		kiln_error_set(err, "%s was made for workspace '%s', not '%s' (KILN_WORKSPACE)",
			       file, ws, env_ws);
		kiln_error_hint(err, "unset KILN_WORKSPACE, or make a plan for that workspace");
		return -1;
	}
	return 0;
}

bool plan_file_is(const char *path)
{
	char buf[PLAN_FILE_PEEK + 1];
	size_t n, i = 0;
	FILE *f;

	if (strcmp(path, "-") == 0)
		return false;
	f = fopen(path, "rb");
	if (!f)
		return false;
	n = fread(buf, 1, PLAN_FILE_PEEK, f);
	fclose(f);
	buf[n] = '\0';
	if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
		i++;
	return i < n && buf[i] == '{' && memmem(buf, n, "\"kiln_plan_file\"", 16) != NULL;
}
