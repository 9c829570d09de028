/*
 * iam.c - the plan's IAM delta; see iam.h. Its renderings are
 * iam_render.c's.
 *
 * A policy is reduced to the (action, resource) pairs its Allow statements
 * grant: that is what a reviewer has to judge, whatever the statements'
 * grouping. A pair granted by the plan is flagged by how it widens the
 * role: "new role" (nothing held before), "new action" (the role held the
 * action on no resource), "broader resource" (the new resource pattern
 * covers one the role held the action on) or "new resource". Deny
 * statements are listed by no kiln policy and are ignored here.
 */
#include "iam.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

bool iam_pattern_covers(const char *p, const char *v, bool fold_case)
{
	/* Iterative glob with one backtrack point: linear in practice, no recursion. */
	const char *star = NULL, *mark = NULL;

	while (*v) {
		if (*p == '*') {
			star = p++;
			mark = v;
		} else if (*p == '?' ||
			   (fold_case ? tolower((unsigned char)*p) == tolower((unsigned char)*v)
				      : *p == *v)) {
			if (!*p)
				break;
			p++;
			v++;
		} else if (star) {
			p = star + 1;
			v = ++mark;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0' && *v == '\0';
}

/* A statement's Action or Resource as strings: a string or an array of them. */
static void strings_of(const json_t *v, const char ***out, size_t *n, size_t *cap)
{
	const json_t *s;
	size_t i;

	if (json_is_string(v)) {
		*ARRAY_PUSH(*out, *n, *cap) = json_string_value(v);
		return;
	}
	json_array_foreach(v, i, s) if (json_is_string(s)) * ARRAY_PUSH(*out, *n, *cap) =
	    json_string_value(s);
}

static int pair_cmp(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int c = strcmp(json_string_value(json_object_get(x, "action")),
		       json_string_value(json_object_get(y, "action")));

	return c ? c
		 : strcmp(json_string_value(json_object_get(x, "resource")),
			  json_string_value(json_object_get(y, "resource")));
}

/* Sort pairs and drop duplicates: a new array. */
static json_t *pairs_normal(json_t *pairs)
{
	size_t n = json_array_size(pairs), i;
	json_t **v = xcalloc(n ? n : 1, sizeof(*v)), *out = json_array();

	for (i = 0; i < n; i++)
		v[i] = json_array_get(pairs, i);
	qsort(v, n, sizeof(*v), pair_cmp);
	for (i = 0; i < n; i++)
		if (i == 0 || pair_cmp(&v[i], &v[i - 1]) != 0)
			json_array_append(out, v[i]);
	free(v);
	json_decref(pairs);
	return out;
}

json_t *iam_policy_pairs(const char *text)
{
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL, *stmts, *st, *pairs;
	size_t i;

	stmts = json_object_get(doc, "Statement");
	if (!json_is_array(stmts) && !json_is_object(stmts)) {
		json_decref(doc);
		return NULL;
	}
	pairs = json_array();
	for (i = 0; i < (json_is_array(stmts) ? json_array_size(stmts) : 1); i++) {
		const char **acts = NULL, **ress = NULL;
		size_t na = 0, ca = 0, nr = 0, cr = 0, a, r;

		st = json_is_array(stmts) ? json_array_get(stmts, i) : stmts;
		if (strcmp(json_string_value(json_object_get(st, "Effect")) ?: "", "Allow") != 0)
			continue;
		strings_of(json_object_get(st, "Action"), &acts, &na, &ca);
		strings_of(json_object_get(st, "Resource"), &ress, &nr, &cr);
		if (json_object_get(st, "NotAction"))
			*ARRAY_PUSH(acts, na, ca) = "*";
		if (json_object_get(st, "NotResource"))
			*ARRAY_PUSH(ress, nr, cr) = "*";
		for (a = 0; a < na; a++)
			for (r = 0; r < nr; r++)
				json_array_append_new(pairs,
						      json_pack("{s:s, s:s}", "action", acts[a],
								"resource", ress[r]));
		free(acts);
		free(ress);
	}
	json_decref(doc);
	return pairs_normal(pairs);
}

static bool pair_in(const json_t *pairs, const json_t *p)
{
	const json_t *q;
	size_t i;

	json_array_foreach(pairs, i, q) if (pair_cmp(&p, &q) == 0) return true;
	return false;
}

/* How a granted pair widens a role that held before (NULL: it held no policy). */
static const char *widening(const json_t *before, const json_t *p)
{
	const char *action = json_string_value(json_object_get(p, "action"));
	const char *res = json_string_value(json_object_get(p, "resource"));
	bool held = false;
	const json_t *q;
	size_t i;

	if (!before)
		return "new role";
	json_array_foreach(before, i, q)
	{
		const char *qa = json_string_value(json_object_get(q, "action"));
		const char *qr = json_string_value(json_object_get(q, "resource"));

		if (!iam_pattern_covers(action, qa, true) && !iam_pattern_covers(qa, action, true))
			continue;
		held = true;
		if (strcmp(qr, res) != 0 && iam_pattern_covers(res, qr, false))
			return "broader resource";
	}
	if (!held)
		return "new action";
	/* A broader action on a resource held: more than before. */
	json_array_foreach(before, i, q)
	{
		const char *qa = json_string_value(json_object_get(q, "action"));

		if (strcasecmp(qa, action) != 0 && iam_pattern_covers(action, qa, true))
			return "new action";
	}
	return "new resource";
}

/* The live (first) or recorded attrs of an address, or NULL. */
static const json_t *held_attrs(const json_t *live, const json_t *recorded, const char *addr,
				const json_t **type_out)
{
	const json_t *l = json_array_get(json_object_get(live, addr), 0);
	const json_t *r = json_object_get(recorded, addr);

	if (live && l) {
		*type_out = json_object_get(l, "type");
		return json_object_get(l, "attrs");
	}
	if (!live && r) {
		*type_out = json_object_get(r, "type");
		return json_object_get(r, "attrs");
	}
	return NULL;
}

static json_t *policy_pairs(const struct engine *e, const char *type, const json_t *attrs,
			    bool live)
{
	char *text;
	json_t *pairs;

	if (!json_is_object(attrs))
		return NULL;
	text = e->prov->role_policy(e->ctx, &e->scope, type, attrs, live);
	if (!text)
		return NULL;
	pairs = iam_policy_pairs(text);
	free(text);
	return pairs;
}

static json_t *role_delta(const struct engine *e, const struct plan_change *c, const json_t *live,
			  const json_t *recorded)
{
	const char *addr = c->address, *type = c->type;
	const json_t *ht = NULL, *held = held_attrs(live, recorded, addr, &ht);
	/*
	 * A no-op changes no policy: the role keeps what it holds, whatever
	 * the desired attrs compile to now (a store the provider cannot find
	 * must not show as a delta beside "No changes").
	 */
	bool noop = c->action == PLAN_NO_OP;
	json_t *before = policy_pairs(e, type, held, true);
	json_t *after = noop ? json_deep_copy(before) : policy_pairs(e, type, c->after, false);
	json_t *granted, *revoked, *p, *out;
	size_t i;

	if (!before && !after)
		return NULL; /* a type that grants nothing */
	granted = json_array();
	revoked = json_array();
	json_array_foreach(after, i, p) if (!pair_in(before, p))
	{
		const char *action = json_string_value(json_object_get(p, "action"));
		const char *note = e->prov->iam_grant_note ? e->prov->iam_grant_note(action) : NULL;
		json_t *g = json_pack("{s:O, s:O, s:s}", "action", json_object_get(p, "action"),
				      "resource", json_object_get(p, "resource"), "widening",
				      widening(before, p));

		/* An action that lets the role widen its own access says so. */
		if (note)
			json_object_set_new(g, "note", json_string(note));
		json_array_append_new(granted, g);
	}
	json_array_foreach(before, i, p) if (!pair_in(after, p)) json_array_append(revoked, p);
	out = json_pack("{s:s, s:s, s:o, s:o, s:o}", "address", addr, "role", c->name, "granted",
			granted, "revoked", revoked, "after", after ? after : json_array());
	json_decref(before);
	return out;
}

void iam_delta_plan(const struct engine *e, json_t *plan, const struct plan_view *v,
		    const json_t *live, const json_t *recorded)
{
	json_t *delta = json_array();
	size_t i;

	for (i = 0; i < v->nchanges; i++) {
		json_t *d;

		if (!e->prov->role_policy || v->changes[i].deposed)
			continue;
		d = role_delta(e, &v->changes[i], live, recorded);
		if (d)
			json_array_append_new(delta, d);
	}
	plan_kiln_set(plan, "iam_delta", delta);
}
