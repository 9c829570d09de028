/*
 * ydoc.h - a YAML document as a tree of positioned nodes.
 *
 * libyaml's event stream becomes mappings, sequences and scalars, each with
 * its 1-based line and column, so every later error can name FILE:LINE:COL.
 * The builder is where hostile YAML is stopped: duplicate keys, non-scalar
 * keys, recursive aliases, aliases that expand exponentially, nesting that is
 * too deep, NUL characters and multi-document streams are all refused here.
 * Aliases share the anchored node (the tree is a DAG); merge keys (`<<`) are
 * resolved into their mapping. Every node belongs to the document.
 */
#ifndef KILN_YDOC_H
#define KILN_YDOC_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

enum ynode_kind {
	YNODE_SCALAR,
	YNODE_MAP,
	YNODE_SEQ,
};

struct ynode {
	enum ynode_kind kind;
	int line;
	int col;
	/* Scalars. */
	char *value;
	size_t len;
	bool quoted; /* written with quotes or as a block: never null, never a number */
	/* Mappings: keys[i] -> vals[i]; sequences: vals[i]. */
	struct ynode **keys;
	struct ynode **vals;
	size_t n;
	size_t cap;
	/* Internal to the builder. */
	size_t expanded; /* nodes after alias expansion, this one included */
	bool open;
};

struct ydoc;

/* Limits on what a spec may be; generous for real specs, fatal for attacks. */
#define YDOC_MAX_DEPTH 64
/* Nodes that aliases may add when expanded (written nodes are bounded by the file size). */
#define YDOC_MAX_EXPANDED 100000
#define YDOC_MAX_MERGE 5000

/*
 * Parse buf as one YAML document. Problems go to d with file as their name.
 * Returns 0 with *out set (its root may be NULL for an empty document), or -1.
 */
int ydoc_parse(struct ydoc **out, const char *file, const char *buf, size_t len, struct diags *d);
const struct ynode *ydoc_root(const struct ydoc *doc);
void ydoc_free(struct ydoc *doc);

/* The value for key in a mapping, or NULL. */
const struct ynode *ydoc_get(const struct ynode *map, const char *key);
/* The key node for key (for its position), or NULL. */
const struct ynode *ydoc_key(const struct ynode *map, const char *key);
/* A plain scalar that YAML reads as null: empty, "~", "null". */
bool ydoc_is_null(const struct ynode *n);
/* "a mapping", "a list", "a string", "null". */
const char *ydoc_describe(const struct ynode *n);

#endif
