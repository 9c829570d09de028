/*
 * base.h - what every kiln header may need and nothing else: the version,
 * ARRAY_SIZE, the printf-format attribute and struct kiln_error (whose
 * setters are util.c's). It includes only system headers, so the small
 * helper headers (strbuf.h, str.h, timefmt.h, cidr.h) include it rather
 * than util.h, which includes them.
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

#endif
