/*
 * ydoc.c - libyaml events to a positioned node tree; see ydoc.h.
 *
 * Built iteratively from the event stream (no recursion), so a deeply nested
 * hostile document cannot exhaust the C stack; depth and alias expansion are
 * bounded while the document is read, never after.
 */
#include "ydoc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct anchor {
	char *name;
	struct ynode *node;
};

struct frame {
	struct ynode *node;
	struct ynode *key; /* mappings: a key waiting for its value */
};

struct ydoc {
	char *file;
	struct ynode *root;
	struct ynode **all; /* every node, for freeing: aliases make the tree a DAG */
	size_t nall;
	size_t capall;
};

struct builder {
	struct ydoc *doc;
	struct diags *d;
	const char *buf;
	size_t len;
	struct frame *stack;
	size_t depth;
	size_t cap;
	struct anchor *anchors; /* open-addressing table, power-of-two size */
	size_t nanchors;
	size_t capanchors;
	int documents;
	bool failed;
	size_t alias_nodes; /* nodes that aliases add when expanded */
};

static struct ynode *node_new(struct builder *b, enum ynode_kind kind, yaml_mark_t mark)
{
	struct ydoc *doc = b->doc;
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->line = (int)mark.line + 1;
	n->col = (int)mark.column + 1;
	n->expanded = 1;
	*ARRAY_PUSH(doc->all, doc->nall, doc->capall) = n;
	return n;
}

static void fail(struct builder *b, int line, int col, const char *hint, const char *msg)
{
	struct diag *dg = diags_add(b->d, DIAG_ERROR, b->doc->file, line, col, "%s", msg);

	if (hint)
		diag_hint(dg, "%s", hint);
	b->failed = true;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct anchor *anchor_slot(struct builder *b, const char *name)
{
	size_t mask = b->capanchors - 1, i = (size_t)hash_str(name) & mask;

	while (b->anchors[i].name && strcmp(b->anchors[i].name, name) != 0)
		i = (i + 1) & mask;
	return &b->anchors[i];
}

static void anchor_set(struct builder *b, const char *name, struct ynode *node)
{
	struct anchor *slot;

	if ((b->nanchors + 1) * 2 > b->capanchors) {
		struct anchor *old = b->anchors;
		size_t oldcap = b->capanchors, i;

		b->capanchors = oldcap ? oldcap * 2 : 64;
		b->anchors = xcalloc(b->capanchors, sizeof(*b->anchors));
		for (i = 0; i < oldcap; i++)
			if (old[i].name)
				*anchor_slot(b, old[i].name) = old[i];
		free(old);
	}
	slot = anchor_slot(b, name);
	if (!slot->name) {
		slot->name = xstrdup(name);
		b->nanchors++;
	}
	slot->node = node;
}

static struct ynode *anchor_get(struct builder *b, const char *name)
{
	return b->capanchors ? anchor_slot(b, name)->node : NULL;
}

static void child_append(struct ynode *parent, struct ynode *key, struct ynode *val)
{
	if (parent->n == parent->cap) {
		parent->cap = parent->cap ? parent->cap * 2 : 8;
		parent->vals = xrealloc(parent->vals, parent->cap * sizeof(*parent->vals));
		if (parent->kind == YNODE_MAP)
			parent->keys = xrealloc(parent->keys, parent->cap * sizeof(*parent->keys));
	}
	if (parent->kind == YNODE_MAP)
		parent->keys[parent->n] = key;
	parent->vals[parent->n++] = val;
}

/*
 * Written nodes are bounded by the file size; what aliases add is not. Their
 * expansion, nested aliases included, is summed over the whole document and
 * refused past the limit, at the alias that crosses it.
 */
static void count_alias(struct builder *b, const struct ynode *target, int line, int col)
{
	b->alias_nodes += target->expanded;
	if (b->alias_nodes > YDOC_MAX_EXPANDED && !b->failed) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "YAML aliases expand this document by more than %d nodes; kiln refuses "
			 "documents that expand exponentially",
			 YDOC_MAX_EXPANDED);
		fail(b, line, col, "write the values out, or use fewer nested aliases", msg);
	}
}

/*
 * Attach a finished value (or a key) to the collection being built; weight is
 * what it adds to the expanded size, line and col where to blame a bad key.
 */
static void attach(struct builder *b, struct ynode *n, size_t weight, int line, int col)
{
	struct frame *top;

	if (b->depth == 0) {
		b->doc->root = n;
		return;
	}
	top = &b->stack[b->depth - 1];
	if (top->node->kind == YNODE_SEQ) {
		child_append(top->node, NULL, n);
	} else if (!top->key) {
		if (n->kind != YNODE_SCALAR) {
			fail(b, line, col, "write keys as plain words, like `count:`",
			     "mapping keys must be strings, not a mapping or a list");
			return;
		}
		top->key = n;
		weight = 1;
	} else {
		child_append(top->node, top->key, n);
		top->key = NULL;
	}
	top->node->expanded += weight;
}

static int key_index_cmp(const void *pa, const void *pb, void *arg)
{
	struct ynode **keys = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(keys[a]->value, keys[b]->value);

	return c ? c : (a < b ? -1 : a > b);
}

static bool is_merge_key(const struct ynode *k)
{
	return !k->quoted && strcmp(k->value, "<<") == 0;
}

/* Report every key that repeats an earlier one in the same mapping. */
static void check_duplicates(struct builder *b, struct ynode *map)
{
	size_t *idx, i, m = 0;

	if (map->n < 2)
		return;
	idx = xmalloc(map->n * sizeof(*idx));
	for (i = 0; i < map->n; i++)
		if (!is_merge_key(map->keys[i]))
			idx[m++] = i;
	qsort_r(idx, m, sizeof(*idx), key_index_cmp, map->keys);
	for (i = 1; i < m; i++) {
		struct ynode *first = map->keys[idx[i - 1]], *dup = map->keys[idx[i]];

		if (strcmp(first->value, dup->value) != 0)
			continue;
		/* Runs of the same key are sorted by position: report against the first. */
		{
			size_t j = i - 1;

			while (j > 0 && strcmp(map->keys[idx[j - 1]]->value, dup->value) == 0)
				j--;
			first = map->keys[idx[j]];
		}
		{
			struct diag *dg =
			    diags_add(b->d, DIAG_ERROR, b->doc->file, dup->line, dup->col,
				      "duplicate key '%s' (first defined at %d:%d)", dup->value,
				      first->line, first->col);

			diag_hint(dg, "remove one of the two; YAML keeps only one of them");
		}
	}
	free(idx);
}

/*
 * Resolve `<<: *base` and `<<: [*a, *b]`: keys written in the mapping win,
 * then earlier merge sources over later ones.
 */
static void resolve_merges(struct builder *b, struct ynode *map)
{
	struct ynode **keys = map->keys, **vals = map->vals;
	size_t n = map->n, i, j, k;
	bool any = false;

	for (i = 0; i < n; i++)
		any |= is_merge_key(keys[i]);
	if (!any)
		return;
	if (map->expanded > YDOC_MAX_MERGE) {
		fail(b, map->line, map->col, NULL,
		     "a mapping with merge keys ('<<') is too large to merge");
		return;
	}
	map->keys = NULL;
	map->vals = NULL;
	map->n = map->cap = 0;
	for (i = 0; i < n; i++)
		if (!is_merge_key(keys[i]))
			child_append(map, keys[i], vals[i]);
	for (i = 0; i < n; i++) {
		struct ynode *src = vals[i];
		size_t nsrc;

		if (!is_merge_key(keys[i]))
			continue;
		nsrc = src->kind == YNODE_SEQ ? src->n : 1;
		for (j = 0; j < nsrc; j++) {
			struct ynode *m = src->kind == YNODE_SEQ ? src->vals[j] : src;

			if (m->kind != YNODE_MAP) {
				/* Blame the `<<` that asked for it, not the anchor far above. */
				fail(b, keys[i]->line, keys[i]->col,
				     "merge a mapping, like `<<: *defaults`",
				     "the merge key '<<' takes a mapping or a list of mappings");
				goto out;
			}
			for (k = 0; k < m->n; k++)
				if (!ydoc_get(map, m->keys[k]->value))
					child_append(map, m->keys[k], m->vals[k]);
		}
	}
out:
	free(keys);
	free(vals);
}

static void push(struct builder *b, struct ynode *n)
{
	if (b->depth == YDOC_MAX_DEPTH) {
		char msg[128];

		snprintf(msg, sizeof(msg), "YAML nesting is deeper than %d levels", YDOC_MAX_DEPTH);
		fail(b, n->line, n->col, NULL, msg);
		return;
	}
	attach(b, n, 0, n->line, n->col);
	n->open = true;
	kiln_array_grow((void **)&b->stack, &b->cap, b->depth + 1, sizeof(*b->stack));
	b->stack[b->depth].node = n;
	b->stack[b->depth].key = NULL;
	b->depth++;
}

static void pop(struct builder *b)
{
	struct ynode *n = b->stack[--b->depth].node;

	n->open = false;
	if (n->kind == YNODE_MAP) {
		check_duplicates(b, n);
		resolve_merges(b, n);
	}
	if (b->depth > 0)
		b->stack[b->depth - 1].node->expanded += n->expanded;
}

static void set_anchor(struct builder *b, yaml_char_t *anchor, struct ynode *n)
{
	if (anchor)
		anchor_set(b, (const char *)anchor, n);
}

/* The byte at a 1-based line and column (counted in characters), or -1. */
static int char_at(const char *buf, size_t len, int line, int col)
{
	size_t i = str_text_offset(buf, len, line, col);

	return i < len ? (unsigned char)buf[i] : -1;
}

static void syntax_error(struct builder *b, yaml_parser_t *p)
{
	int line, col;
	char msg[512];
	const char *hint = NULL;

	if (p->error == YAML_READER_ERROR) {
		str_text_position(b->buf, p->problem_offset < b->len ? p->problem_offset : b->len,
				  &line, &col);
	} else {
		line = (int)p->problem_mark.line + 1;
		col = (int)p->problem_mark.column + 1;
	}
	if (p->context)
		snprintf(msg, sizeof(msg), "invalid YAML: %s (%s at %d:%d)",
			 p->problem ? p->problem : "syntax error", p->context,
			 (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	else
		snprintf(msg, sizeof(msg), "invalid YAML: %s",
			 p->problem ? p->problem : "syntax error");
	if (char_at(b->buf, b->len, line, col) == '\t')
		hint = "indent with spaces; YAML does not allow tabs for indentation";
	else if (p->problem && strstr(p->problem, "did not find expected key"))
		hint = "check the indentation of this line against the keys above it";
	fail(b, line, col, hint, msg);
}

static void on_scalar(struct builder *b, yaml_event_t *ev)
{
	struct ynode *n = node_new(b, YNODE_SCALAR, ev->start_mark);
	const char *tag = (const char *)ev->data.scalar.tag;

	n->len = ev->data.scalar.length;
	n->value = xstrndup((const char *)ev->data.scalar.value, n->len);
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
		    (tag && strcmp(tag, YAML_STR_TAG) == 0);
	if (memchr(n->value, '\0', n->len)) {
		fail(b, n->line, n->col, NULL, "a string contains a NUL character");
		return;
	}
	set_anchor(b, ev->data.scalar.anchor, n);
	attach(b, n, 1, n->line, n->col);
}

static void on_alias(struct builder *b, yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	struct ynode *target = anchor_get(b, name);
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	char msg[256];

	if (!target) {
		snprintf(msg, sizeof(msg), "YAML alias '*%.64s' names no anchor defined before it",
			 name);
		fail(b, line, col, "define the anchor (&name) before the alias (*name)", msg);
		return;
	}
	if (target->open) {
		snprintf(msg, sizeof(msg), "YAML alias '*%.64s' refers to a node that contains it",
			 name);
		fail(b, line, col, NULL, msg);
		return;
	}
	attach(b, target, target->expanded, line, col);
	count_alias(b, target, line, col);
}

int ydoc_parse(struct ydoc **out, const char *file, const char *buf, size_t len, struct diags *d)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct builder b = {0};
	struct ydoc *doc = xcalloc(1, sizeof(*doc));
	bool done = false;
	size_t i;

	doc->file = xstrdup(file);
	b.doc = doc;
	b.d = d;
	b.buf = buf;
	b.len = len;
	*out = NULL;
	if (!yaml_parser_initialize(&parser)) {
		fail(&b, 0, 0, NULL, "cannot initialise the YAML parser");
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done && !b.failed) {
		if (!yaml_parser_parse(&parser, &ev)) {
			syntax_error(&b, &parser);
			break;
		}
		switch (ev.type) {
		case YAML_DOCUMENT_START_EVENT:
			if (++b.documents > 1)
				fail(&b, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
				     "keep one spec per file",
				     "a spec is one YAML document; this is a second");
			break;
		case YAML_SCALAR_EVENT:
			on_scalar(&b, &ev);
			break;
		case YAML_ALIAS_EVENT:
			on_alias(&b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: {
			bool seq = ev.type == YAML_SEQUENCE_START_EVENT;
			struct ynode *n = node_new(&b, seq ? YNODE_SEQ : YNODE_MAP, ev.start_mark);

			set_anchor(
			    &b, seq ? ev.data.sequence_start.anchor : ev.data.mapping_start.anchor,
			    n);
			push(&b, n);
			break;
		}
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			pop(&b);
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
out:
	for (i = 0; i < b.capanchors; i++)
		free(b.anchors[i].name);
	free(b.anchors);
	free(b.stack);
	if (b.failed) {
		ydoc_free(doc);
		return -1;
	}
	*out = doc;
	return 0;
}

const struct ynode *ydoc_root(const struct ydoc *doc)
{
	return doc->root;
}

void ydoc_free(struct ydoc *doc)
{
	size_t i;

	if (!doc)
		return;
	for (i = 0; i < doc->nall; i++) {
		free(doc->all[i]->value);
		free(doc->all[i]->keys);
		free(doc->all[i]->vals);
		free(doc->all[i]);
	}
	free(doc->all);
	free(doc->file);
	free(doc);
}

const struct ynode *ydoc_key(const struct ynode *map, const char *key)
{
	size_t i;

	if (!map || map->kind != YNODE_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return map->keys[i];
	return NULL;
}

const struct ynode *ydoc_get(const struct ynode *map, const char *key)
{
	size_t i;

	if (!map || map->kind != YNODE_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return map->vals[i];
	return NULL;
}

bool ydoc_is_null(const struct ynode *n)
{
	return n->kind == YNODE_SCALAR && !n->quoted &&
	       (n->len == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
		strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0);
}

const char *ydoc_describe(const struct ynode *n)
{
	if (n->kind == YNODE_MAP)
		return "a mapping";
	if (n->kind == YNODE_SEQ)
		return "a list";
	return ydoc_is_null(n) ? "nothing (null)" : "a string";
}
