/*
 * base.h - what every kiln header may need and nothing else: the version,
 * ARRAY_SIZE, the printf-format attribute, struct kiln_error and its
 * setters, and allocation that aborts on failure (base.c). It includes only
 * system headers, so the small helper modules (strbuf, str, timefmt, cidr)
 * include it rather than util.h, which includes them: no module of the
 * five reaches back to util.
 */
#ifndef KILN_BASE_H
#define KILN_BASE_H

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

/* Allocation: a failure prints the size and aborts (as git does). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) KILN_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap);

/* Grow *v (of *cap elements of size elem) so that it holds at least need. */
void kiln_array_grow(void **v, size_t *cap, size_t need, size_t elem);
#define ARRAY_PUSH(v, n, cap)                                                                      \
	(kiln_array_grow((void **)&(v), &(cap), (n) + 1, sizeof(*(v))), &(v)[(n)++])

#endif
