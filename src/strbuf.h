/*
 * strbuf.h - a growable, always NUL-terminated string (sb_*).
 */
#ifndef KILN_STRBUF_H
#define KILN_STRBUF_H

#include <stddef.h>

#include "base.h"

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
/* s (NULL: nothing) with & < > " ' as XML and HTML entities, for text and attribute values. */
void sb_add_xml(struct strbuf *sb, const char *s);
char *sb_detach(struct strbuf *sb);
void sb_release(struct strbuf *sb);

#endif
