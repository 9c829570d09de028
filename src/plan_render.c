/*
 * plan_render.c - a plan document as text for a terminal, as a Markdown
 * pull-request comment, and as its one summary line.
 *
 * Both renderings read the document only (plan.h has its shape) and lay it
 * out through the same blocks: one per changed resource, a headline and one
 * row per attribute. Nothing a plan holds reaches the output unfiltered:
 * control characters become '?', so a hostile name cannot move a terminal's
 * cursor, and Markdown text is escaped so it cannot open a table or a tag.
 */
#include "plan.h"

#include "audit.h"
#include "cost.h"
#include "iam.h"
#include "jsonc.h"
#include "jsonw.h"
#include "log.h"
#include "workload_render.h"

#include <stdlib.h>
#include <string.h>

#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RED "\033[31m"
#define MAGENTA "\033[35m"
#define CYAN "\033[36m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

/* Values longer than this do not push the policy column of their block further right. */
#define VALUE_ALIGN_MAX 40

#define ARROW "\xe2\x86\x92"

/* One attribute line: "name:  value   (note)". */
struct row {
	char *name;
	char *value;
	char *note;
};

/* One resource's headline and rows. */
struct block {
	const char *sym;   /* "+", "~", "-/+", "+/-", "-", "<=" */
	const char *color; /* of sym */
	char mark;	   /* the diff marker in Markdown: '+', '-' or '!' */
	bool same;	   /* the same resource as the block before (an adopt, then its update) */
	char *address;
	char *headline;
	struct row *rows;
	size_t n, cap;
};

struct blocks {
	struct block *v;
	size_t n, cap;
};

struct counts {
	json_int_t create, update, replace, del, adopt, drift;
	json_int_t release; /* retained stores released from state: counted in no other column */
};

/* ---- text helpers ---- */

/* s with every control character (C0, DEL, C1) as '?'; caller frees. */
static char *clean(const char *s)
{
	struct strbuf sb = {0};
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	sb_adds(&sb, "");
	for (; *p; p++) {
		if (*p == '\t')
			sb_addc(&sb, ' ');
		else if (*p < 0x20 || *p == 0x7f)
			sb_addc(&sb, '?');
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			sb_addc(&sb, '?');
			p++;
		} else
			sb_addc(&sb, (char)*p);
	}
	return sb_detach(&sb);
}

/* Columns on a terminal, counting each UTF-8 character as one. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void sb_pad(struct strbuf *sb, size_t used, size_t width)
{
	while (used++ < width)
		sb_addc(sb, ' ');
}

/* A value as JSON (strings quoted, arrays and objects compact); caller frees. */
static char *value_text(const json_t *v)
{
	char *raw, *s;

	if (!v)
		return xstrdup("null");
	/* A document (a node group's user data) is too long for a row: the JSON plan has it. */
	if (json_is_string(v) && json_string_length(v) > 512 && strchr(json_string_value(v), '\n'))
		return xasprintf("(a document of %zu bytes: kiln plan --json has it)",
				 json_string_length(v));
	raw = jsonw_dumps(
	    v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15), NULL);
	s = clean(raw ? raw : "?");
	free(raw);
	return s;
}

static const char *str_of(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* A digest shortened to 12 hex digits after its "sha256:". */
static char *digest_short(const char *d)
{
	char *c = clean(d);

	if (str_starts_with(c, "sha256:") && strlen(c) > 7 + 12)
		c[7 + 12] = '\0';
	return c;
}

/* ---- reading a change ---- */

static const json_t *importing_of(const struct plan_change *c)
{
	return json_is_object(c->importing) ? c->importing : NULL;
}

/*
 * Whether *_sensitive marks name: true, or a structure that marks part of
 * it (shown whole as sensitive rather than risk showing the part).
 */
static bool marked(const json_t *sens, const char *name)
{
	const json_t *v;

	if (json_is_true(sens))
		return true;
	v = json_object_get(sens, name);
	return json_is_true(v) || json_object_size(v) > 0 || json_array_size(v) > 0;
}

/* One side of an attribute as printed; caller frees. */
static char *side_text(const struct plan_change *c, bool after, const char *name,
		       const json_t *value, bool sensitive)
{
	if (after && json_is_true(json_object_get(c->after_unknown, name)))
		return xstrdup("(known after apply)");
	if (sensitive || marked(after ? c->after_sensitive : c->before_sensitive, name))
		return xstrdup("(sensitive)");
	return value_text(value);
}

/* ---- building blocks ---- */

static struct block *block_add(struct blocks *bs, const char *sym, const char *color, char mark,
			       const struct plan_change *c, char *headline)
{
	struct block *b = ARRAY_PUSH(bs->v, bs->n, bs->cap);

	memset(b, 0, sizeof(*b));
	b->sym = sym;
	b->color = color;
	b->mark = mark;
	if (c->deposed) {
		char *both = xasprintf("%s (deposed %s)", c->address, c->deposed);

		b->address = clean(both);
		free(both);
	} else {
		b->address = clean(c->address);
	}
	b->headline = headline;
	return b;
}

static void row_add(struct block *b, const char *name, char *value, char *note)
{
	struct row *r = ARRAY_PUSH(b->rows, b->n, b->cap);

	r->name = clean(name);
	r->value = value;
	r->note = note;
}

static void blocks_release(struct blocks *bs)
{
	size_t i, j;

	for (i = 0; i < bs->n; i++) {
		struct block *b = &bs->v[i];

		for (j = 0; j < b->n; j++) {
			free(b->rows[j].name);
			free(b->rows[j].value);
			free(b->rows[j].note);
		}
		free(b->rows);
		free(b->address);
		free(b->headline);
	}
	free(bs->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, distinct names: the keys of obj, and those of flags whose value is true. */
static const char **names_of(const json_t *obj, const json_t *flags, size_t *n)
{
	const char **v = NULL;
	const char *key;
	const json_t *val;
	size_t cap = 0, i, k = 0;

	*n = 0;
	json_object_foreach_const(obj, key, val) * ARRAY_PUSH(v, *n, cap) = key;
	json_object_foreach_const(flags, key, val) if (json_is_true(val)) *
	    ARRAY_PUSH(v, *n, cap) = key;
	if (*n == 0)
		return v;
	qsort(v, *n, sizeof(*v), cmp_str);
	for (i = 1; i < *n; i++)
		if (strcmp(v[i], v[k]) != 0)
			v[++k] = v[i];
	*n = k + 1;
	return v;
}

/* A create: every attribute it will have. */
static void rows_create(struct block *b, const struct plan_change *c)
{
	const char **names;
	size_t i, n;

	names = names_of(c->after, c->after_unknown, &n);
	for (i = 0; i < n; i++)
		row_add(b, names[i],
			side_text(c, true, names[i], json_object_get(c->after, names[i]), false),
			NULL);
	free(names);
}

static char *policy_note(const json_t *attr)
{
	const char *policy = str_of(attr, "policy");
	const char *why = str_of(attr, "why");
	char *note, *c;

	if (!policy)
		return NULL;
	note = why && *why ? xasprintf("(%s: %s)", policy, why) : xasprintf("(%s)", policy);
	c = clean(note);
	free(note);
	return c;
}

static void row_change(struct block *b, const struct plan_change *c, const char *name,
		       const json_t *before, const json_t *after, bool sensitive, char *note)
{
	char *l = side_text(c, false, name, before, sensitive);
	char *r = side_text(c, true, name, after, sensitive);

	row_add(b, name, xasprintf("%s " ARROW " %s", l, r), note);
	free(l);
	free(r);
}

/*
 * An update, a replace or drift: the attributes that change, as diff.c
 * listed them in kiln.attributes, or (for a document without that list)
 * every attribute whose before and after differ. Drift has no policy.
 */
static void rows_changed(struct block *b, const struct plan_change *c, bool drift)
{
	const json_t *attrs = c->attributes, *before = c->before, *after = c->after;
	const json_t *unknown = c->after_unknown;
	const json_t *a, *val;
	const char **names, *key;
	json_t *all;
	size_t i, n;

	if (json_is_array(attrs)) {
		json_array_foreach(attrs, i, a)
		{
			const char *name = str_of(a, "name");

			if (name)
				row_change(b, c, name, json_object_get(a, "before"),
					   json_object_get(a, "after"),
					   json_is_true(json_object_get(a, "sensitive")),
					   drift ? NULL : policy_note(a));
		}
		return;
	}
	all = json_object();
	/* Only the names are wanted: true stands for each attribute. */
	json_object_foreach_const(before, key, val) json_object_set_new(all, key, json_true());
	json_object_foreach_const(after, key, val) json_object_set_new(all, key, json_true());
	names = names_of(all, unknown, &n);
	for (i = 0; i < n; i++) {
		const json_t *l = json_object_get(before, names[i]);
		const json_t *r = json_object_get(after, names[i]);

		if (json_is_true(json_object_get(unknown, names[i])) || !l || !r ||
		    !json_equal(l, r))
			row_change(b, c, names[i], l, r, false, NULL);
	}
	free(names);
	json_decref(all);
}

/* "a forces replacement", "a and b force replacement", "a, b and c force replacement". */
static char *forces_text(const struct plan_change *c)
{
	const json_t *paths = c->replace_paths, *attrs = c->attributes;
	const char **names = NULL;
	const json_t *p;
	struct strbuf sb = {0};
	size_t i, n = 0, cap = 0;
	char *text;

	json_array_foreach(paths, i, p) if (json_string_value(json_array_get(p, 0))) *
	    ARRAY_PUSH(names, n, cap) = json_string_value(json_array_get(p, 0));
	if (n == 0)
		json_array_foreach(attrs, i, p) if (str_of(p, "name") && str_of(p, "policy") &&
						    strcmp(str_of(p, "policy"), "replace") == 0) *
		    ARRAY_PUSH(names, n, cap) = str_of(p, "name");
	if (n == 0) {
		free(names);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (i > 0)
			sb_adds(&sb, i + 1 == n ? " and " : ", ");
		sb_adds(&sb, names[i]);
	}
	sb_adds(&sb, n == 1 ? " forces replacement" : " force replacement");
	free(names);
	text = clean(sb.buf);
	sb_release(&sb);
	return text;
}

/* Why a replace or delete happens, from action_reason; NULL when nothing is worth saying. */
static char *derived_reason(const struct plan_change *c)
{
	const char *why = c->action_reason;

	if (c->action == PLAN_DELETE) {
		if (why && strcmp(why, "delete_because_no_resource_config") == 0)
			return xstrdup("not in the spec");
		if (why && strcmp(why, "delete_because_duplicate") == 0)
			return xstrdup("duplicate of the recorded resource");
		return NULL;
	}
	if (why && strcmp(why, "replace_by_request") == 0)
		return xstrdup("replacement requested");
	if (why && strcmp(why, "replace_because_dependency") == 0)
		return xstrdup("a resource it depends on is replaced");
	return forces_text(c);
}

/*
 * Whether text begins with word as a whole word: "adopt bkt-1: ..." begins
 * with "adopt" (and so does "adopt" itself: strchr finds the terminator).
 */
static bool begins_with_word(const char *text, const char *word)
{
	size_t n = strlen(word);

	return text && strncmp(text, word, n) == 0 && strchr(" :;,(", text[n]) != NULL;
}

/*
 * "update in place", "update in place: reason", or the reason alone when it
 * begins with the action's word (first), as a reason written as a whole
 * headline does: nothing is said twice. Takes reason.
 */
static char *headline(const char *words, const char *first, char *reason)
{
	char *h;

	if (!reason)
		return xstrdup(words);
	if (begins_with_word(reason, first))
		return reason;
	h = xasprintf("%s: %s", words, reason);
	free(reason);
	return h;
}

/* kiln.reason, cleaned, or NULL. */
static char *kiln_reason(const struct plan_change *c)
{
	return c->reason && *c->reason ? clean(c->reason) : NULL;
}

/* The "<=" line of an adoption; takes why. */
static void block_adopt(struct blocks *bs, const struct plan_change *rc, const json_t *imp,
			char *why)
{
	char *id;

	if (begins_with_word(why, "adopt")) {
		block_add(bs, "<=", CYAN, '!', rc, why);
		return;
	}
	id = clean(str_of(imp, "id"));
	block_add(bs, "<=", CYAN, '!', rc,
		  xasprintf("adopt %s (%s)", id, why ? why : "tagged live, missing from state"));
	free(why);
	free(id);
}

/* The block of one resource change; takes why (kiln.reason, when it is this block's). */
static void block_change(struct blocks *bs, const struct plan_change *rc, char *why)
{
	struct block *b;

	switch (rc->action) {
	case PLAN_CREATE:
		b = block_add(bs, "+", GREEN, '+', rc, headline("create", "create", why));
		rows_create(b, rc);
		break;
	case PLAN_UPDATE:
		b = block_add(bs, "~", YELLOW, '!', rc, headline("update in place", "update", why));
		rows_changed(b, rc, false);
		break;
	case PLAN_DELETE_CREATE:
	case PLAN_CREATE_DELETE:
		if (!why)
			why = derived_reason(rc);
		b = block_add(bs, rc->action == PLAN_DELETE_CREATE ? "-/+" : "+/-", MAGENTA, '!',
			      rc, headline("replace", "replace", why));
		rows_changed(b, rc, false);
		break;
	case PLAN_DELETE:
		if (rc->retain && begins_with_word(why, "release")) {
			block_add(bs, "-", RED, '-', rc, why);
		} else if (rc->retain) {
			block_add(bs, "-", RED, '-', rc,
				  xasprintf("release from state; retained, not deleted (%s)",
					    why ? why : "deletion: retain"));
			free(why);
		} else {
			if (!why)
				why = derived_reason(rc);
			block_add(bs, "-", RED, '-', rc, headline("delete", "delete", why));
		}
		break;
	case PLAN_NO_OP:
		free(why);
		break;
	}
}

static void block_drift(struct blocks *bs, const struct plan_change *rc)
{
	char *why = kiln_reason(rc);
	struct block *b;

	switch (rc->action) {
	case PLAN_DELETE:
		block_add(bs, "-", RED, '-', rc, why ? why : xstrdup("deleted outside kiln"));
		return;
	case PLAN_CREATE:
		b = block_add(bs, "+", GREEN, '+', rc, why ? why : xstrdup("created outside kiln"));
		break;
	case PLAN_DELETE_CREATE:
	case PLAN_CREATE_DELETE:
		b = block_add(bs, "-/+", MAGENTA, '!', rc,
			      why ? why : xstrdup("replaced outside kiln"));
		break;
	case PLAN_NO_OP:
		free(why);
		return;
	default:
		b = block_add(bs, "~", YELLOW, '!', rc,
			      why ? why : xstrdup("changed outside kiln"));
		break;
	}
	rows_changed(b, rc, true);
}

/*
 * The blocks of resource_changes (drift false) or of resource_drift (drift
 * true). An adoption's kiln.reason is the adopt line's when it begins with
 * "adopt" or when nothing else happens to the resource; otherwise it is the
 * reason of the action that follows.
 */
static void blocks_collect(struct blocks *bs, const struct plan_view *v, bool drift)
{
	const struct plan_change *list = drift ? v->drift : v->changes;
	size_t i, n = drift ? v->ndrift : v->nchanges;

	for (i = 0; i < n; i++) {
		const struct plan_change *rc = &list[i];
		const json_t *imp = drift ? NULL : importing_of(rc);
		size_t before = bs->n;
		char *why;

		if (drift) {
			block_drift(bs, rc);
			continue;
		}
		why = kiln_reason(rc);
		if (imp && (begins_with_word(why, "adopt") || rc->action == PLAN_NO_OP)) {
			block_adopt(bs, rc, imp, why);
			why = NULL;
		} else if (imp) {
			block_adopt(bs, rc, imp, NULL);
		}
		block_change(bs, rc, why);
		if (imp && bs->n == before + 2)
			bs->v[before + 1].same = true;
	}
}

/* Resources, not blocks: an adopt with its update is one. */
static size_t blocks_resources(const struct blocks *bs)
{
	size_t i, n = 0;

	for (i = 0; i < bs->n; i++)
		if (!bs->v[i].same)
			n++;
	return n;
}

/* Each row of b, laid out with its names and values aligned, into lines[]. */
static void block_rows_text(const struct block *b, struct strbuf *lines)
{
	size_t i, namew = 0, valuew = 0;

	for (i = 0; i < b->n; i++) {
		size_t w = text_width(b->rows[i].name) + 1;
		size_t v = text_width(b->rows[i].value);

		if (w > namew)
			namew = w;
		if (b->rows[i].note && v <= VALUE_ALIGN_MAX && v > valuew)
			valuew = v;
	}
	for (i = 0; i < b->n; i++) {
		const struct row *r = &b->rows[i];
		struct strbuf *sb = &lines[i];

		sb_adds(sb, r->name);
		sb_addc(sb, ':');
		sb_pad(sb, text_width(r->name) + 1, namew);
		sb_adds(sb, "  ");
		sb_adds(sb, r->value);
		if (r->note) {
			sb_pad(sb, text_width(r->value), valuew);
			sb_adds(sb, "   ");
			sb_adds(sb, r->note);
		}
	}
}

/* ---- counts and the summary line ---- */

static json_int_t count_of(const json_t *summary, const char *key)
{
	return json_integer_value(json_object_get(summary, key));
}

/* kiln.summary, as diff.c counted; counted here for a document without one. */
static void plan_counts(const json_t *plan, const struct plan_view *v, struct counts *c)
{
	const json_t *summary = plan_kiln(plan, "summary");
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < v->nchanges; i++)
		if (v->changes[i].retain)
			c->release++;
	if (json_is_object(summary)) {
		c->create = count_of(summary, "create");
		c->update = count_of(summary, "update");
		c->replace = count_of(summary, "replace");
		c->del = count_of(summary, "delete");
		c->adopt = count_of(summary, "adopt");
		c->drift = count_of(summary, "drift");
		return;
	}
	for (i = 0; i < v->nchanges; i++) {
		const struct plan_change *rc = &v->changes[i];

		if (importing_of(rc))
			c->adopt++;
		switch (rc->action) {
		case PLAN_CREATE:
			c->create++;
			break;
		case PLAN_UPDATE:
			c->update++;
			break;
		case PLAN_DELETE_CREATE:
		case PLAN_CREATE_DELETE:
			c->replace++;
			break;
		case PLAN_DELETE:
			if (!rc->retain)
				c->del++;
			break;
		default:
			break;
		}
	}
	c->drift = (json_int_t)v->ndrift;
}

/*
 * The view of a plan to render: a plan made here or read from a file was
 * checked, so a fault is a bug; what is malformed then renders as no change.
 */
static void render_view(struct plan_view *v, const json_t *plan)
{
	struct kiln_error err = {{0}, {0}};

	if (plan_view_build(v, plan, &err) < 0)
		log_debug("plan: rendered without its changes: %s", err.msg);
}

static char *summary_line(const json_t *plan, const struct plan_view *v)
{
	struct counts c;
	struct strbuf sb = {0};

	plan_counts(plan, v, &c);
	if (!c.create && !c.update && !c.replace && !c.del && !c.adopt && !c.drift && !c.release)
		return xstrdup("No changes.");
	sb_addf(&sb,
		"Plan: %" JSON_INTEGER_FORMAT " to create, %" JSON_INTEGER_FORMAT
		" to update, %" JSON_INTEGER_FORMAT " to replace, %" JSON_INTEGER_FORMAT
		" to delete, %" JSON_INTEGER_FORMAT " to adopt",
		c.create, c.update, c.replace, c.del, c.adopt);
	if (c.release)
		sb_addf(&sb, ", %" JSON_INTEGER_FORMAT " to release from state (retained)",
			c.release);
	if (c.drift)
		sb_addf(&sb, "; %" JSON_INTEGER_FORMAT " drifted", c.drift);
	sb_addc(&sb, '.');
	return sb_detach(&sb);
}

char *plan_summary_line(const json_t *plan)
{
	struct plan_view v;
	char *line;

	render_view(&v, plan);
	line = summary_line(plan, &v);
	plan_view_release(&v);
	return line;
}

/* ---- the header both renderings share ---- */

struct header {
	char *cluster, *workspace, *provider;
	bool simulated;
	char *state; /* "serial 3 at commit 1a2b3c4d5e6f", or the first-apply text */
	char *spec;  /* "FILE (sha256:0123456789ab)", or NULL */
};

#define SIMULATION "a simulation: nothing real is created or billed"
#define NO_CHANGES "No changes. Live resources match the spec and the recorded state."

/* What narrows or turns the plan: --destroy, --target, --replace, --refresh=false. */
static void text_scope(FILE *out, const json_t *plan)
{
	const json_t *v;
	const char *keys[] = {"targets", "replace"};
	const char *names[] = {"Only (--target, with what it needs or what needs it)",
			       "Replacing on request (--replace)"};
	size_t i, j;

	if (plan_is_destroy(plan))
		fputs("Destroying (--destroy)\n", out);
	if (json_is_false(plan_kiln(plan, "refresh")))
		fputs("Live state not read (--refresh=false): the recorded state is trusted\n",
		      out);
	for (i = 0; i < 2; i++) {
		if (!json_array_size(plan_kiln(plan, keys[i])))
			continue;
		fprintf(out, "%s:", names[i]);
		json_array_foreach(plan_kiln(plan, keys[i]), j, v)
		{
			char *c = clean(json_string_value(v));

			fprintf(out, " %s", c);
			free(c);
		}
		fputc('\n', out);
	}
}

static void header_read(struct header *h, const json_t *plan)
{
	const json_t *state = plan_kiln(plan, "state"), *spec = plan_kiln(plan, "spec");
	const char *commit = str_of(state, "commit");
	const char *cluster = json_string_value(plan_kiln(plan, "cluster"));
	const char *workspace = json_string_value(plan_kiln(plan, "workspace"));
	const char *provider = json_string_value(plan_kiln(plan, "provider"));

	h->cluster = clean(cluster ? cluster : "?");
	h->workspace = clean(workspace ? workspace : "?");
	h->provider = clean(provider ? provider : "?");
	h->simulated = json_is_true(plan_kiln(plan, "simulated"));
	if (commit) {
		char *c = clean(commit);

		h->state = xasprintf("serial %" JSON_INTEGER_FORMAT " at commit %.12s",
				     json_integer_value(json_object_get(state, "serial")), c);
		free(c);
	} else {
		h->state = xstrdup("none yet (first apply creates the workspace)");
	}
	h->spec = NULL;
	if (str_of(spec, "file")) {
		char *file = clean(str_of(spec, "file"));

		if (str_of(spec, "digest")) {
			char *d = digest_short(str_of(spec, "digest"));

			h->spec = xasprintf("%s (%s)", file, d);
			free(d);
			free(file);
		} else {
			h->spec = file;
		}
	}
}

static void header_release(struct header *h)
{
	free(h->cluster);
	free(h->workspace);
	free(h->provider);
	free(h->state);
	free(h->spec);
}

/* ---- text ---- */

static void put_heading(FILE *out, bool color, const char *text)
{
	fprintf(out, "%s%s%s\n", color ? BOLD : "", text, color ? RESET : "");
}

static void text_blocks(FILE *out, const struct blocks *bs, bool color)
{
	size_t i, j;

	for (i = 0; i < bs->n; i++) {
		const struct block *b = &bs->v[i];
		struct strbuf *lines = xcalloc(b->n ? b->n : 1, sizeof(*lines));

		if (color)
			fprintf(out, "  %s%s%s %s%s%s  %s\n", b->color, b->sym, RESET, BOLD,
				b->address, RESET, b->headline);
		else
			fprintf(out, "  %s %s  %s\n", b->sym, b->address, b->headline);
		block_rows_text(b, lines);
		for (j = 0; j < b->n; j++) {
			fprintf(out, "      %s\n", lines[j].buf);
			sb_release(&lines[j]);
		}
		free(lines);
	}
}

/* Notes or warnings: the strings of kiln.KEY under a heading; false when there are none. */
static bool text_list(FILE *out, const json_t *plan, const char *key, const char *heading,
		      bool color)
{
	const json_t *list = plan_kiln(plan, key);
	const json_t *item;
	bool any = false;
	size_t i;

	json_array_foreach(list, i, item)
	{
		char *c;

		if (!json_is_string(item))
			continue;
		if (!any)
			put_heading(out, color, heading);
		any = true;
		c = clean(json_string_value(item));
		fprintf(out, "  • %s\n", c);
		free(c);
	}
	if (any)
		fputc('\n', out);
	return any;
}

/* What stands in kiln.foreign's entry f: "lineage L, by OWNER" or why it has none. Caller frees. */
static char *foreign_whose(const json_t *f)
{
	const char *lineage = str_of(f, "lineage"), *owner = str_of(f, "owner");

	if (!lineage)
		return xstrdup("no lineage tag: made before kiln tagged lineages, and no state "
			       "here records it");
	return owner ? xasprintf("state lineage %s, by %s", lineage, owner)
		     : xasprintf("state lineage %s", lineage);
}

#define FOREIGN_HEADING                                                                            \
	"Another state's resources here (never changed, adopted or deleted by this one; "          \
	"kiln state takeover moves them)"

static void text_foreign(FILE *out, const json_t *plan, bool color)
{
	const json_t *list = plan_kiln(plan, "foreign"), *f;
	size_t i;

	if (!json_array_size(list))
		return;
	put_heading(out, color, FOREIGN_HEADING);
	json_array_foreach(list, i, f)
	{
		char *addr = clean(str_of(f, "address")), *id = clean(str_of(f, "id"));
		char *whose = foreign_whose(f), *w = clean(whose);

		fprintf(out, "  %s!%s %s %s (%s)\n", color ? YELLOW : "", color ? RESET : "", addr,
			id, w);
		free(addr);
		free(id);
		free(whose);
		free(w);
	}
	fputc('\n', out);
}

void plan_render_text(FILE *out, const json_t *plan, bool color)
{
	struct header h;
	struct blocks drift = {0}, changes = {0};
	struct plan_view v;

	render_view(&v, plan);
	header_read(&h, plan);
	blocks_collect(&drift, &v, true);
	blocks_collect(&changes, &v, false);
	fprintf(out, "kiln plan: %s/%s on %s%s\n", h.cluster, h.workspace, h.provider,
		h.simulated ? " \xe2\x80\x94 " SIMULATION : "");
	fprintf(out, "State: %s", h.state);
	if (h.spec)
		fprintf(out, "   Spec: %s", h.spec);
	fputc('\n', out);
	text_scope(out, plan);
	fputc('\n', out);
	if (drift.n) {
		put_heading(out, color,
			    "Drift: live resources that differ from the recorded state");
		text_blocks(out, &drift, color);
		fputc('\n', out);
	}
	if (changes.n) {
		put_heading(out, color, "Changes");
		text_blocks(out, &changes, color);
		fputc('\n', out);
	}
	text_foreign(out, plan, color);
	text_list(out, plan, "notes", "Notes", color);
	text_list(out, plan, "warnings", "Warnings", color);
	audit_render_text(out, plan, color);
	iam_render_text(out, plan, color);
	workload_render_text(out, plan, color);
	cost_render_text(out, plan, color);
	if (!drift.n && !changes.n) {
		fputs(NO_CHANGES "\n", out);
	} else {
		char *line = summary_line(plan, &v);

		fprintf(out, "%s\n", line);
		free(line);
	}
	blocks_release(&drift);
	blocks_release(&changes);
	header_release(&h);
	plan_view_release(&v);
}

/* ---- Markdown ---- */

/* Text outside code: no table cell, tag or entity of its own, on one line. */
void plan_md_text(FILE *out, const char *s)
{
	char *c = clean(s);
	const char *p;

	for (p = c; *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '|':
			fputs("\\|", out);
			break;
		default:
			fputc(*p, out);
		}
	}
	free(c);
}

/* The longest run of backticks in s, so that a fence can be longer. */
static size_t backtick_run(const char *s, size_t longest)
{
	size_t run = 0;

	for (; *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	return longest;
}

/* One fenced diff block per resource (an adopt and its update share one). */
static void md_blocks(FILE *out, const struct blocks *bs)
{
	size_t i = 0, j, k, end;

	while (i < bs->n) {
		struct strbuf text = {0};
		size_t fence = 2;

		for (end = i + 1; end < bs->n && bs->v[end].same; end++)
			;
		for (k = i; k < end; k++) {
			const struct block *b = &bs->v[k];
			struct strbuf *lines = xcalloc(b->n ? b->n : 1, sizeof(*lines));

			sb_addf(&text, "%c %s  %s\n", b->mark, b->address, b->headline);
			block_rows_text(b, lines);
			for (j = 0; j < b->n; j++) {
				sb_addf(&text, "%c     %s\n", b->mark, lines[j].buf);
				sb_release(&lines[j]);
			}
			free(lines);
		}
		fence = backtick_run(text.buf, fence) + 1;
		for (j = 0; j < fence; j++)
			fputc('`', out);
		fputs("diff\n", out);
		fputs(text.buf, out);
		for (j = 0; j < fence; j++)
			fputc('`', out);
		fputs("\n\n", out);
		sb_release(&text);
		i = end;
	}
}

static void md_list(FILE *out, const json_t *plan, const char *key, bool warning)
{
	const json_t *list = plan_kiln(plan, key);
	const json_t *item;
	bool any = false;
	size_t i;

	json_array_foreach(list, i, item)
	{
		if (!json_is_string(item))
			continue;
		if (warning) {
			fputs("> **Warning**\n> ", out);
			plan_md_text(out, json_string_value(item));
			fputs("\n\n", out);
			continue;
		}
		if (!any)
			fputs("**Notes**\n\n", out);
		any = true;
		fputs("- ", out);
		plan_md_text(out, json_string_value(item));
		fputc('\n', out);
	}
	if (any)
		fputc('\n', out);
}

static void md_foreign(FILE *out, const json_t *plan)
{
	const json_t *list = plan_kiln(plan, "foreign"), *f;
	size_t i;

	if (!json_array_size(list))
		return;
	fputs("**", out);
	plan_md_text(out, FOREIGN_HEADING);
	fputs("**\n\n", out);
	json_array_foreach(list, i, f)
	{
		char *whose = foreign_whose(f);

		fputs("- ", out);
		plan_md_text(out, str_of(f, "address"));
		fputc(' ', out);
		plan_md_text(out, str_of(f, "id"));
		fputs(": ", out);
		plan_md_text(out, whose);
		fputc('\n', out);
		free(whose);
	}
	fputc('\n', out);
}

/* One row of the offerings table: the change's "offering" or "runner_up". */
static void md_offer_row(FILE *out, const char *address, const char *role, const json_t *o)
{
	char *fee = cost_money(json_number_value(json_object_get(o, "upfront_usd")));
	const json_t *per = json_object_get(o, "usd_per_gpu_hour");

	fputs("| ", out);
	if (*address) {
		plan_md_text(out, address);
		fputc(' ', out);
	}
	fprintf(out, "| %s | ", role);
	plan_md_text(out, str_of(o, "id"));
	fputs(" | ", out);
	plan_md_text(out, str_of(o, "zone"));
	fprintf(out, " | %" JSON_INTEGER_FORMAT " × ",
		json_integer_value(json_object_get(o, "count")));
	plan_md_text(out, str_of(o, "instance_type"));
	fputs(" | ", out);
	plan_md_text(out, str_of(o, "start"));
	fputs(" | ", out);
	plan_md_text(out, str_of(o, "end"));
	fprintf(out, " | %" JSON_INTEGER_FORMAT " | %s | ",
		json_integer_value(json_object_get(o, "duration_hours")), fee);
	if (json_is_number(per))
		fprintf(out, "$%.2f |\n", json_number_value(per));
	else
		fputs("\u2014 |\n", out);
	free(fee);
}

/* What the plan buys among offerings (kiln.offering) and the runner-up, as a table. */
static void md_offerings(FILE *out, const struct plan_view *v)
{
	bool any = false;
	size_t i;

	for (i = 0; i < v->nchanges; i++) {
		const struct plan_change *c = &v->changes[i];
		const json_t *o = json_object_get(c->kiln, "offering");
		const json_t *r = json_object_get(c->kiln, "runner_up");

		if (!json_is_object(o))
			continue;
		if (!any)
			fputs(
			    "**Capacity Blocks**\n\n| Resource | | Offering | Zone | Instances | "
			    "Start | End | Hours | Up front | Per GPU-hour |\n| --- | --- | --- | "
			    "--- | --- | --- | --- | ---: | ---: | ---: |\n",
			    out);
		any = true;
		md_offer_row(out, c->address, "buys", o);
		if (json_is_object(r))
			md_offer_row(out, "", "runner-up", r);
		else
			fputs("| | runner-up | none | | | | | | | |\n", out);
	}
	if (any)
		fputc('\n', out);
}

static void md_row(FILE *out, const char *action, json_int_t n)
{
	fprintf(out, "| %s | %" JSON_INTEGER_FORMAT " |\n", action, n);
}

void plan_render_markdown(FILE *out, const json_t *plan)
{
	struct header h;
	struct blocks drift = {0}, changes = {0};
	struct counts c;
	struct plan_view v;
	size_t n;

	render_view(&v, plan);
	header_read(&h, plan);
	plan_counts(plan, &v, &c);
	blocks_collect(&drift, &v, true);
	blocks_collect(&changes, &v, false);
	fputs("### kiln plan: ", out);
	plan_md_text(out, h.cluster);
	fputc('/', out);
	plan_md_text(out, h.workspace);
	fputs(" (", out);
	plan_md_text(out, h.provider);
	fputs(")\n\n", out);
	if (h.simulated)
		fputs("_A simulation: nothing real is created or billed._\n\n", out);
	fputs("State: ", out);
	plan_md_text(out, h.state);
	if (h.spec) {
		fputs(" \xc2\xb7 Spec: ", out);
		plan_md_text(out, h.spec);
	}
	fputs("\n\n", out);
	if (!drift.n && !changes.n) {
		fputs(NO_CHANGES "\n\n", out);
	} else {
		char *line = summary_line(plan, &v);

		fputs("| Action | Count |\n| --- | ---: |\n", out);
		md_row(out, "create", c.create);
		md_row(out, "update", c.update);
		md_row(out, "replace", c.replace);
		md_row(out, "delete", c.del);
		md_row(out, "adopt", c.adopt);
		md_row(out, "drift", c.drift);
		fputs("\n**", out);
		plan_md_text(out, line);
		fputs("**\n\n", out);
		free(line);
	}
	audit_render_markdown(out, plan);
	workload_render_markdown(out, plan);
	cost_render_markdown(out, plan);
	md_offerings(out, &v);
	iam_render_markdown(out, plan);
	if (drift.n) {
		n = blocks_resources(&drift);
		fprintf(out, "<details><summary>%zu drifted resource%s</summary>\n\n", n,
			n == 1 ? "" : "s");
		md_blocks(out, &drift);
		fputs("</details>\n\n", out);
	}
	if (changes.n) {
		n = blocks_resources(&changes);
		fprintf(out, "<details><summary>%zu change%s</summary>\n\n", n, n == 1 ? "" : "s");
		md_blocks(out, &changes);
		fputs("</details>\n\n", out);
	}
	md_foreign(out, plan);
	md_list(out, plan, "notes", false);
	md_list(out, plan, "warnings", true);
	blocks_release(&drift);
	blocks_release(&changes);
	header_release(&h);
	plan_view_release(&v);
}
