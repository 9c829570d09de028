/*
 * util.h - memory, strings, errors, durations, CIDRs, file reading.
 *
 * The small helpers every other module uses. Nothing here knows about specs,
 * plans or clouds. Allocation failure aborts (as git does): a CLI that cannot
 * allocate a few bytes has nothing sensible left to do.
 */
#ifndef KILN_UTIL_H
#define KILN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KILN_VERSION "0.1.0"
#define KILN_SPEC_FORMAT 1

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define KILN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KILN_PRINTF(f, a)
#endif

/* An error filled once, where the cause is known, and rendered by the caller. */
struct kiln_error {
	char msg[1024];
	char hint[512];
};

void kiln_error_set(struct kiln_error *err, const char *fmt, ...) KILN_PRINTF(2, 3);
void kiln_error_hint(struct kiln_error *err, const char *fmt, ...) KILN_PRINTF(2, 3);

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) KILN_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap);

/* Grow *v (of *cap elements of size elem) so that it holds at least need. */
void grow_array(void **v, size_t *cap, size_t need, size_t elem);
#define ARRAY_PUSH(v, n, cap)                                                                      \
	(grow_array((void **)&(v), &(cap), (n) + 1, sizeof(*(v))), &(v)[(n)++])

/* A growable, always NUL-terminated string. */
struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
};

void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addc(struct strbuf *sb, char c);
void sb_addf(struct strbuf *sb, const char *fmt, ...) KILN_PRINTF(2, 3);
char *sb_detach(struct strbuf *sb);
void sb_release(struct strbuf *sb);

bool str_starts_with(const char *s, const char *prefix);
bool str_ends_with(const char *s, const char *suffix);

/* Damerau-Levenshtein (optimal string alignment) distance, ignoring case. */
size_t str_edit_distance(const char *a, const char *b);
/*
 * The candidate closest to word, or NULL when none is close enough to be a
 * plausible typo (distance at most a third of the word, and at least 1).
 */
const char *str_closest(const char *word, const char *const *cands, size_t n);

/*
 * Durations: one or more NUMBER UNIT groups, units s, m, h, d ("45s", "90m",
 * "72h", "30d", "1h30m"). Returns 0 and the seconds, or -1 when malformed or
 * above 100 years.
 */
int duration_parse(const char *s, int64_t *seconds);
/* The shortest exact form ("1h30m"); caller frees. */
char *duration_format(int64_t seconds);

/*
 * RFC 3339 times ("2027-01-31T12:00:00Z", "...T12:00:00.5+02:00"): 0 and
 * the unix seconds (fraction dropped), or -1 when malformed.
 */
int time_parse_rfc3339(const char *s, int64_t *t);
/* "YYYY-MM-DDTHH:MM:SSZ" for a unix time, into buf[21]; returns buf. */
const char *time_format_rfc3339(int64_t t, char buf[21]);
/*
 * Now, in unix seconds. KILN_NOW (an RFC 3339 time) overrides the clock for
 * tests and for replaying a decision: waivers, TTLs and reaping all read
 * the time here. -1 with err when KILN_NOW is set but malformed.
 */
int util_now(int64_t *t, struct kiln_error *err);

/* An IPv4 CIDR: 0 ok, -1 malformed; *host_bits is set when bits beyond the prefix are set. */
int cidr_parse(const char *s, uint32_t *addr, int *prefix, bool *host_bits);
/* "a.b.c.d/p" with the host bits cleared; caller frees. */
char *cidr_format(uint32_t addr, int prefix);

/* The 1-based line and column (in characters) of byte offset off in buf. */
void text_position(const char *buf, size_t off, int *line, int *col);

/* The inverse: the byte offset of a 1-based line and column, or len past the end. */
size_t text_offset(const char *buf, size_t len, int line, int col);

/* Byte offset of the first invalid UTF-8 sequence, or len when the buffer is valid. */
size_t utf8_invalid_offset(const unsigned char *s, size_t len);
/* The code point UTF-8 encodes at s (len > 0 bytes left) and its length in *size, or -1. */
int32_t utf8_decode(const unsigned char *s, size_t len, size_t *size);

/*
 * Read a whole file (or standard input for "-") into a NUL-terminated buffer.
 * Returns 0, -1 when it cannot be read, -2 when it is larger than limit bytes.
 */
int file_read_all(const char *path, size_t limit, char **out, size_t *len, struct kiln_error *err);

/* A random (version 4) UUID, lower case, into out[37]. */
void uuid_v4(char out[37]);

/* Remove a directory tree (like rm -rf, never following links). */
int remove_tree(const char *path);

/* A numeric environment setting from 0 to max; a malformed one is reported once and def used. */
long env_long(const char *name, long def, long max);

/*
 * Sleep before retry number attempt+1: exponential from base_ms, capped at
 * cap_ms, with full jitter (a uniform draw in [0, that]) so many threads or
 * processes retrying together do not stampede.
 */
void backoff_sleep(int attempt, long base_ms, long cap_ms);

/* Human size: "1.5 MiB". Caller frees. */
char *size_format(uint64_t bytes);

#endif
