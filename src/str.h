/*
 * str.h - string tests, "did you mean" distances, text positions and UTF-8.
 */
#ifndef KILN_STR_H
#define KILN_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool str_starts_with(const char *s, const char *prefix);
bool str_ends_with(const char *s, const char *suffix);

/* Damerau-Levenshtein (optimal string alignment) distance, ignoring case. */
size_t str_edit_distance(const char *a, const char *b);
/*
 * The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo (distance at most a third of the word, and at least 1).
 */
const char *str_closest(const char *word, const char *const *cands, size_t n);

/* The 1-based line and column (in characters) of byte offset off in buf. */
void str_text_position(const char *buf, size_t off, int *line, int *col);

/* The inverse: the byte offset of a 1-based line and column, or len past the end. */
size_t str_text_offset(const char *buf, size_t len, int line, int col);

/* Byte offset of the first invalid UTF-8 sequence, or len when the buffer is valid. */
size_t str_utf8_invalid_offset(const unsigned char *s, size_t len);
/* The code point UTF-8 encodes at s (len > 0 bytes left) and its length in *size, or -1. */
int32_t str_utf8_decode(const unsigned char *s, size_t len, size_t *size);

/*
 * What text that must stay text (a command, a path, a key line: written
 * into a YAML document and a shell script as they are) may not hold: a byte
 * that is not UTF-8, a C0 control character but tab (and newline when
 * newlines), DEL, a C1 control character (U+0085 among them), U+2028,
 * U+2029, U+FFFE or U+FFFF. YAML ends a line at CR, NEL, U+2028 and U+2029
 * and takes none of the others. The first such character of s: true with
 * its 1-based byte offset and its name ("a carriage return (U+000D)").
 */
struct text_flaw {
	size_t byte;
	char name[48];
};
bool str_text_flaw_find(const char *s, bool newlines, struct text_flaw *f);

/*
 * s (NULL: "") as text safe to show on a terminal, a new string: every
 * C0 control (tab, CR and LF too), DEL, C1 control (U+0080-U+009F), bidi
 * control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and byte
 * that is not UTF-8 becomes '?'. max > 0: at most max bytes, cut at a
 * character, "..." after. The one filter for cloud, ledger and user text
 * that reaches a terminal.
 */
char *str_for_terminal(const char *s, size_t max);

#endif
