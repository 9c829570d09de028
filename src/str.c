/*
 * str.c - see str.h.
 */
#include "str.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "strbuf.h"

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

size_t str_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d;
	size_t *row0, *row1, *row2, *t;

	/* Three rows suffice for transpositions (optimal string alignment). */
	row0 = xcalloc(lb + 1, sizeof(*row0));
	row1 = xcalloc(lb + 1, sizeof(*row1));
	row2 = xcalloc(lb + 1, sizeof(*row2));
	for (j = 0; j <= lb; j++)
		row1[j] = j;
	for (i = 1; i <= la; i++) {
		row2[0] = i;
		for (j = 1; j <= lb; j++) {
			/* Case-blind: "EFA" is one step from nothing, it is 'efa'. */
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = row1[j] + 1;

			if (row2[j - 1] + 1 < best)
				best = row2[j - 1] + 1;
			if (row1[j - 1] + cost < best)
				best = row1[j - 1] + cost;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    row0[j - 2] + 1 < best)
				best = row0[j - 2] + 1;
			row2[j] = best;
		}
		t = row0;
		row0 = row1;
		row1 = row2;
		row2 = t;
	}
	d = row1[lb];
	free(row0);
	free(row1);
	free(row2);
	return d;
}

const char *str_closest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, limit, i, wl = strlen(word);

	limit = wl / 3;
	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	/* Long inputs are not typos of short keys; skip the quadratic work. */
	if (wl > 64)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t d = str_edit_distance(word, cands[i]);

		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

void str_text_position(const char *buf, size_t off, int *line, int *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

size_t str_text_offset(const char *buf, size_t len, int line, int col)
{
	size_t i = 0;
	int l = 1, c = 1;

	while (i < len && l < line)
		if (buf[i++] == '\n')
			l++;
	while (i < len && c < col && buf[i] != '\n') {
		i++;
		while (i < len && ((unsigned char)buf[i] & 0xc0) == 0x80)
			i++;
		c++;
	}
	return i;
}

int32_t str_utf8_decode(const unsigned char *s, size_t len, size_t *size)
{
	unsigned char c = s[0];
	size_t n, k;
	uint32_t cp;

	if (c < 0x80) {
		*size = 1;
		return c;
	} else if ((c & 0xe0) == 0xc0) {
		n = 1;
		cp = c & 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 2;
		cp = c & 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 3;
		cp = c & 0x07;
	} else {
		return -1;
	}
	if (n >= len)
		return -1;
	for (k = 1; k <= n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[k] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*size = n + 1;
	return (int32_t)cp;
}

size_t str_utf8_invalid_offset(const unsigned char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (str_utf8_decode(s + i, len - i, &n) < 0)
			return i;
		i += n;
	}
	return len;
}

/* The name of code point cp, one that str_text_flaw_find refuses. */
static void flaw_name(int32_t cp, char *out, size_t size)
{
	static const struct {
		int32_t cp;
		const char *name;
	} named[] = {{0x0a, "a newline"},	   {0x0d, "a carriage return"},
		     {0x1b, "an escape"},	   {0x85, "a next-line character"},
		     {0x2028, "a line separator"}, {0x2029, "a paragraph separator"}};
	const char *name = cp >= 0x80 && cp < 0xa0 ? "a C1 control character"
			   : cp >= 0xfffe	   ? "a noncharacter"
						   : "a control character";
	size_t i;

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].cp == cp)
			name = named[i].name;
	snprintf(out, size, "%s (U+%04X)", name, (unsigned)cp);
}

bool str_text_flaw_find(const char *s, bool newlines, struct text_flaw *f)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s), i = 0, n;

	while (i < len) {
		int32_t cp = str_utf8_decode(u + i, len - i, &n);

		f->byte = i + 1;
		if (cp < 0) {
			snprintf(f->name, sizeof(f->name), "a byte that is not UTF-8 (0x%02X)",
				 u[i]);
			return true;
		}
		if ((cp < 0x20 && cp != '\t' && !(cp == '\n' && newlines)) ||
		    (cp >= 0x7f && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 || cp == 0xfffe ||
		    cp == 0xffff) {
			flaw_name(cp, f->name, sizeof(f->name));
			return true;
		}
		i += n;
	}
	return false;
}

/*
 * What a terminal acts on, or what reorders the text around it (a Trojan
 * Source): C0 controls, DEL, C1 controls and the bidi controls.
 */
static bool terminal_control(int32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x061c || cp == 0x200e ||
	       cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

char *str_for_terminal(const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u), i = 0, len;
	struct strbuf sb = {0};

	sb_adds(&sb, "");
	while (i < n && (!max || sb.len < max)) {
		int32_t cp = str_utf8_decode(u + i, n - i, &len);

		if (cp < 0) {
			sb_addc(&sb, '?');
			i++;
			continue;
		}
		if (terminal_control(cp))
			sb_addc(&sb, '?');
		else
			sb_add(&sb, (const char *)u + i, len);
		i += len;
	}
	if (i < n)
		sb_adds(&sb, "...");
	return sb_detach(&sb);
}
