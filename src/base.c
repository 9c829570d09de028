/*
 * base.c - see base.h: struct kiln_error's setters and allocation that
 * aborts on failure. It calls nothing of kiln's, so every helper module
 * (str, strbuf, timefmt, cidr) can stand on it without reaching util.c.
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kiln_error_set(struct kiln_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->hint[0] = '\0';
}

void kiln_error_hint(struct kiln_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

static void out_of_memory(size_t n)
{
	fprintf(stderr, "kiln: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		out_of_memory(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p;

	n = strnlen(s, n);
	p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char small[256], *p;
	va_list cp;
	int n;

	/* One pass for the short strings nearly every call makes (a 10,000-resource spec: 240,000).
	 */
	va_copy(cp, ap);
	n = vsnprintf(small, sizeof(small), fmt, cp);
	va_end(cp);
	if (n < 0)
		return xstrdup("");
	p = xmalloc((size_t)n + 1);
	if ((size_t)n < sizeof(small))
		memcpy(p, small, (size_t)n + 1);
	else
		vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void kiln_array_grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / elem)
		out_of_memory(SIZE_MAX);
	*v = xrealloc(*v, ncap * elem);
	*cap = ncap;
}
