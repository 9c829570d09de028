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
 * dump, and so does a cycle (found by looking through the containers being
 * written once nesting passes JSONW_CYCLE_CHECK, where jansson looks at
 * every level). One difference: jansson writes a key that is not valid
 * UTF-8 (only json_object_set*_nocheck makes one) as a broken string and
 * reports success; jsonw fails.
 */
#define JSONW_CYCLE_CHECK 2048

/* kiln's own flag, above jansson's: end the text with a newline (a file's last line). */
#define JSONW_NEWLINE 0x100000

/* The text, NUL-terminated, and its length in *len when len is not NULL; NULL on failure. */
char *jsonw_dumps(const json_t *v, size_t flags, size_t *len);

/*
 * Writes the text to f; 0, or -1 on failure, when nothing or (past the
 * first 64 KiB) part of the text has been written.
 */
int jsonw_dumpf(const json_t *v, FILE *f, size_t flags);

#endif
