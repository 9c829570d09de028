/*
 * plan_match.c - whether a saved plan says what its spec and state give.
 *
 * A plan file's digest catches accidental damage, but anyone can compute
 * it again after an edit. So `kiln apply FILE` plans again from the spec
 * and the state commit the file is bound to (cmd_apply.c), and this check
 * compares the file with that plan on every field the executor acts on or
 * a reviewer reads as a promise: which changes there are, their actions,
 * the values they set, the objects they touch and the offering a purchase
 * buys (so a Capacity Block offering that vanished or changed its fee
 * since the plan was made refuses the file). Live values ("before",
 * reasons, attribute explanations) are left out: they are what the cloud
 * reads now, not what the plan decides. What the file may still choose
 * (destroy, targets, replace) is the input of a plan anyone could make;
 * signed approvals (approve.c) are what guard a plan against that.
 */
#include "plan.h"
#include "jsonw.h"
#include "jsonc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A value printed in a message is cut here: an "after" object can be long. */
#define MATCH_VALUE_MAX 80

/*
 * The fields compared, by the object of the change that holds them: the
 * member of the change's view (plan.h) that is that object, and its name
 * in a message (NULL: the change itself).
 */
static const struct {
	size_t member; /* offsetof a const json_t * of struct plan_change */
	const char *object;
	const char *key;
} match_fields[] = {
    {offsetof(struct plan_change, json), NULL, "type"},
    {offsetof(struct plan_change, json), NULL, "name"},
    {offsetof(struct plan_change, json), NULL, "action_reason"},
    {offsetof(struct plan_change, body), "change", "actions"},
    {offsetof(struct plan_change, body), "change", "after"},
    {offsetof(struct plan_change, body), "change", "after_unknown"},
    {offsetof(struct plan_change, body), "change", "after_sensitive"},
    {offsetof(struct plan_change, body), "change", "importing"},
    {offsetof(struct plan_change, body), "change", "replace_paths"},
    {offsetof(struct plan_change, kiln), "kiln", "id"},
    {offsetof(struct plan_change, kiln), "kiln", "deps"},
    {offsetof(struct plan_change, kiln), "kiln", "after"},
    {offsetof(struct plan_change, kiln), "kiln", "retain"},
    /* What a purchase buys and its fee: a promise, unlike the runner-up beside it. */
    {offsetof(struct plan_change, kiln), "kiln", "offering"},
};

/* The object of the change that holds match_fields[i]. */
static const json_t *match_object(const struct plan_change *c, size_t i)
{
	return *(const json_t *const *)((const char *)c + match_fields[i].member);
}

/* Of an attribute row, what the plan decides; "before" and "why" read the cloud. */
static const char *const match_row_keys[] = {"name", "after", "policy", "sensitive"};

/*
 * Compact JSON of v, cut to MATCH_VALUE_MAX, or "absent". Caller frees.
 * ASCII only: the cut never splits a character, and what a hostile file
 * holds reaches the terminal escaped.
 */
static char *match_show(const json_t *v)
{
	char *text, *cut;

	if (!v)
		return xstrdup("absent");
	text = jsonw_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII,
			   NULL);
	if (!text)
		return xstrdup("?");
	if (strlen(text) <= MATCH_VALUE_MAX)
		return text;
	cut = xasprintf("%.*s…", MATCH_VALUE_MAX, text);
	free(text);
	return cut;
}

/*
 * The first place where a and b differ, as a path below where ("change.after"
 * -> "change.after.count"); NULL when they are equal. Objects, and arrays of
 * objects, are walked so that the message names the value, not the whole.
 */
static char *match_first_diff(const json_t *a, const json_t *b, const char *where,
			      const json_t **da, const json_t **db)
{
	const char *key;
	json_t *v;

	*da = a;
	*db = b;
	if (a && b && json_is_object(a) && json_is_object(b)) {
		json_object_foreach_const(a, key, v)
		{
			char *at = xasprintf("%s.%s", where, key);
			char *d = match_first_diff(v, json_object_get(b, key), at, da, db);

			free(at);
			if (d)
				return d;
		}
		json_object_foreach_const(b, key, v)
		{
			if (!json_object_get(a, key)) {
				*da = NULL;
				*db = v;
				return xasprintf("%s.%s", where, key);
			}
		}
		return NULL;
	}
	if (a && b && json_is_array(a) && json_is_array(b) &&
	    json_array_size(a) == json_array_size(b)) {
		size_t i;

		/* Rows of objects (kiln.attributes): name the row and its member. */
		for (i = 0; i < json_array_size(a); i++) {
			json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
			char *at, *d;

			if (json_equal(x, y))
				continue;
			if (!json_is_object(x) || !json_is_object(y))
				break;
			at = xasprintf("%s[%zu]", where, i);
			d = match_first_diff(x, y, at, da, db);
			free(at);
			return d;
		}
	}
	if (!a && !b)
		return NULL;
	if (a && b && json_equal(a, b))
		return NULL;
	return xstrdup(where);
}

/* The attribute rows with only match_row_keys in each. Caller decrefs. */
static json_t *match_rows(const json_t *rows)
{
	json_t *out, *row, *v;
	size_t i, k;

	if (!json_is_array(rows))
		return rows ? jsonc_share(rows) : NULL;
	out = json_array();
	json_array_foreach(rows, i, row)
	{
		json_t *kept = json_object();

		for (k = 0; k < ARRAY_SIZE(match_row_keys); k++)
			if ((v = json_object_get(row, match_row_keys[k])))
				json_object_set(kept, match_row_keys[k], v);
		json_array_append_new(out, kept);
	}
	return out;
}

/* "sim_node_group.trainers", or with its deposed object "ADDR (deposed ID)". Caller frees. */
static char *match_key(const struct plan_change *c)
{
	if (c->deposed)
		return xasprintf("%s (deposed %s)", c->address, c->deposed);
	return xstrdup(c->address);
}

/* f and d differ at diff: say where, and both values. */
static void match_report(const char *path, const char *what, const char *key, const char *diff,
			 const json_t *fv, const json_t *dv, struct kiln_error *err)
{
	char *sf = match_show(fv), *sd = match_show(dv);

	kiln_error_set(err,
		       "%s does not match the plan its spec and state give now: in %s %s, %s is "
		       "%s in the file, but %s now",
		       path, what, key, diff, sf, sd);
	free(sf);
	free(sd);
}

/*
 * Both changes of one address: the first field that differs, in err. A drift
 * entry (full false) is compared on its actions and id only: its values are
 * what the cloud reads, and the executor acts on its actions alone.
 */
static int match_change(const struct plan_change *f, const struct plan_change *d, bool full,
			const char *path, const char *what, const char *key, struct kiln_error *err)
{
	const json_t *fv = NULL, *dv = NULL;
	json_t *fr, *dr;
	char *where, *diff = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(match_fields) && !diff; i++) {
		const char *obj = match_fields[i].object, *k = match_fields[i].key;
		const json_t *fo = match_object(f, i), *dobj = match_object(d, i);

		if (!full && strcmp(k, "actions") != 0 && strcmp(k, "id") != 0)
			continue;
		where = obj ? xasprintf("%s.%s", obj, k) : xstrdup(k);
		diff = match_first_diff(json_object_get(fo, k), json_object_get(dobj, k), where,
					&fv, &dv);
		free(where);
	}
	if (!diff && full) {
		fr = match_rows(f->attributes);
		dr = match_rows(d->attributes);
		diff = match_first_diff(fr, dr, "kiln.attributes", &fv, &dv);
		if (diff)
			match_report(path, what, key, diff, fv, dv, err);
		json_decref(fr);
		json_decref(dr);
	} else if (diff) {
		match_report(path, what, key, diff, fv, dv, err);
	}
	i = diff != NULL;
	free(diff);
	return i ? -1 : 0;
}

/* One list (resource_changes or resource_drift) of both plans: file's nf changes, derived's nd. */
static int match_list(const struct plan_change *file, size_t nf, const struct plan_change *derived,
		      size_t nd, bool full, const char *what, const char *path,
		      struct kiln_error *err)
{
	json_t *index = json_object(), *at;
	const char *key;
	size_t i;
	int ret = -1;

	for (i = 0; i < nd; i++) {
		char *k = match_key(&derived[i]);

		json_object_set_new(index, k, json_integer((json_int_t)i));
		free(k);
	}
	for (i = 0; i < nf; i++) {
		char *k = match_key(&file[i]);
		const json_t *d = json_object_get(index, k);
		int m;

		if (!d) {
			kiln_error_set(err,
				       "%s does not match the plan its spec and state give now: "
				       "the file has %s %s, which they do not give",
				       path, what, k);
			free(k);
			goto out;
		}
		m = match_change(&file[i], &derived[json_integer_value(d)], full, path, what, k,
				 err);
		json_object_del(index, k);
		free(k);
		if (m < 0)
			goto out;
	}
	json_object_foreach(index, key, at)
	{
		kiln_error_set(err,
			       "%s does not match the plan its spec and state give now: the "
			       "file lacks %s %s, which they give",
			       path, what, key);
		goto out;
	}
	ret = 0;
out:
	json_decref(index);
	return ret;
}

int plan_match(const json_t *file, const json_t *derived, const char *path, struct kiln_error *err)
{
	struct plan_view f, d = {0};
	int ret = -1;

	if (plan_view_build(&f, file, err) < 0)
		return -1;
	/* Then what a policy read of the file (its Terraform views) is what its changes say. */
	if (plan_view_build(&d, derived, err) == 0 &&
	    match_list(f.changes, f.nchanges, d.changes, d.nchanges, true, "the change of", path,
		       err) == 0 &&
	    match_list(f.drift, f.ndrift, d.drift, d.ndrift, false, "the drift of", path, err) == 0)
		ret = plan_values_check(file, path, err);
	plan_view_release(&f);
	plan_view_release(&d);
	return ret;
}
