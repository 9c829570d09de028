#ifndef KILN_JSONW_H
#define KILN_JSONW_H

#include <stdio.h>

#include <jansson.h>

/*
 * jansson's serialisation, byte for byte (json_dumps and json_dumpf with the
 * same flags), written for documents of ten thousand resources: jansson's
 * dump formats every container's address into a loop-check table, allocates
 * and qsorts a key array per object and makes one callback per token, which
 * was a quarter of a 10,000-resource `plan --json`. Here keys are sorted in a
 * reused array and bytes go to one buffer.
 *
 * Flags: JSON_INDENT(n), JSON_COMPACT, JSON_ENSURE_ASCII, JSON_SORT_KEYS,
 * JSON_ENCODE_ANY, JSON_ESCAPE_SLASH, JSON_REAL_PRECISION(n) and
 * JSON_PRESERVE_ORDER (a no-op in jansson 2.14 too). JSON_EMBED is not
 * supported. Like jansson, a string that is not valid UTF-8 fails the whole
 * dump; so does nesting deeper than JSONW_MAX_DEPTH, which stands in for
 * jansson's cycle check (a cycle nests without end).
 */
#define JSONW_MAX_DEPTH 2048

/* The text, NUL-terminated, and its length in *len when len is not NULL; NULL on failure. */
char *jsonw_dumps(const json_t *v, size_t flags, size_t *len);

/* Writes the text to f; 0, or -1 on failure (part of it may have been written). */
int jsonw_dumpf(const json_t *v, FILE *f, size_t flags);

#endif
