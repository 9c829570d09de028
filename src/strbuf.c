/*
 * strbuf.c - see strbuf.h.
 */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	kiln_array_grow((void **)&sb->buf, &sb->cap, sb->len + n + 1, 1);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_addc(struct strbuf *sb, char c)
{
	sb_add(sb, &c, 1);
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	sb_adds(sb, p);
	free(p);
}

char *sb_detach(struct strbuf *sb)
{
	char *p = sb->buf ? sb->buf : xstrdup("");

	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void sb_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void sb_add_xml(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			sb_adds(sb, "&amp;");
			break;
		case '<':
			sb_adds(sb, "&lt;");
			break;
		case '>':
			sb_adds(sb, "&gt;");
			break;
		case '"':
			sb_adds(sb, "&quot;");
			break;
		case '\'':
			sb_adds(sb, "&#39;");
			break;
		default:
			sb_addc(sb, *s);
		}
	}
}
