/*
 * A strict JSON reader that builds jansson values; anything it does not
 * accept goes to json_loadb. See jsonr.h.
 */
#include "jsonr.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_DEPTH 2000

struct reader {
	const unsigned char *p, *end;
	size_t flags;
	char *scratch; /* a string's bytes when it holds escapes */
	size_t cap;
};

static void skip_ws(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
}

static int hex4(const unsigned char *p, int32_t *out)
{
	int32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void scratch_put(struct reader *r, size_t *len, const void *s, size_t n)
{
	if (n == 0)
		return;
	kiln_array_grow((void **)&r->scratch, &r->cap, *len + n, 1);
	memcpy(r->scratch + *len, s, n);
	*len += n;
}

/* An escape's code point as UTF-8 into the scratch buffer; -1 where jansson refuses it. */
static int unescape_u(struct reader *r, size_t *len)
{
	int32_t cp, lo;
	unsigned char u[4];
	size_t n;

	if (r->end - r->p < 6 || hex4(r->p + 2, &cp) < 0)
		return -1;
	r->p += 6;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' ||
		    hex4(r->p + 2, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
			return -1;
		r->p += 6;
		cp = (((cp & 0x3FF) << 10) | (lo & 0x3FF)) + 0x10000;
	} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
		return -1;
	} else if (cp == 0 && !(r->flags & JSON_ALLOW_NUL)) {
		return -1;
	}
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (unsigned char)(0xC0 | (cp >> 6));
		u[1] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (unsigned char)(0xE0 | (cp >> 12));
		u[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (unsigned char)(0xF0 | (cp >> 18));
		u[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (unsigned char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	scratch_put(r, len, u, n);
	return 0;
}

/*
 * The string at r->p (its opening quote): *s and *len point into the input
 * when it holds no escape, into the scratch buffer otherwise. -1 when jansson
 * would refuse it.
 */
static int read_string(struct reader *r, const char **s, size_t *len)
{
	const unsigned char *start = ++r->p, *run;
	size_t n = 0, sz;
	int escaped = 0;

	run = start;
	while (r->p < r->end) {
		unsigned char c = *r->p;

		if (c == '"')
			break;
		if (c < 0x20)
			return -1;
		if (c >= 0x80) {
			if (str_utf8_decode(r->p, (size_t)(r->end - r->p), &sz) < 0)
				return -1;
			r->p += sz;
			continue;
		}
		if (c != '\\') {
			r->p++;
			continue;
		}
		escaped = 1;
		scratch_put(r, &n, run, (size_t)(r->p - run));
		if (r->end - r->p < 2)
			return -1;
		switch (r->p[1]) {
		case '"':
		case '\\':
		case '/':
			scratch_put(r, &n, r->p + 1, 1);
			break;
		case 'b':
			scratch_put(r, &n, "\b", 1);
			break;
		case 'f':
			scratch_put(r, &n, "\f", 1);
			break;
		case 'n':
			scratch_put(r, &n, "\n", 1);
			break;
		case 'r':
			scratch_put(r, &n, "\r", 1);
			break;
		case 't':
			scratch_put(r, &n, "\t", 1);
			break;
		case 'u':
			if (unescape_u(r, &n) < 0)
				return -1;
			run = r->p;
			continue;
		default:
			return -1;
		}
		r->p += 2;
		run = r->p;
	}
	if (r->p >= r->end)
		return -1;
	if (escaped) {
		scratch_put(r, &n, run, (size_t)(r->p - run));
		*s = r->scratch;
		*len = n;
	} else {
		*s = (const char *)start;
		*len = (size_t)(r->p - start);
	}
	r->p++;
	return 0;
}

static int is_digit(const unsigned char *p, const unsigned char *end)
{
	return p < end && *p >= '0' && *p <= '9';
}

/* jansson's lex_scan_number: -?(0|[1-9][0-9]*), then a fraction or exponent makes a real. */
static json_t *read_number(struct reader *r)
{
	const unsigned char *start = r->p;
	char tmp[64], *endp;
	int real = 0;
	size_t n;

	if (*r->p == '-')
		r->p++;
	if (r->p < r->end && *r->p == '0') {
		r->p++;
		if (is_digit(r->p, r->end))
			return NULL;
	} else if (is_digit(r->p, r->end)) {
		while (is_digit(r->p, r->end))
			r->p++;
	} else {
		return NULL;
	}
	if (r->p < r->end && *r->p == '.') {
		real = 1;
		r->p++;
		if (!is_digit(r->p, r->end))
			return NULL;
		while (is_digit(r->p, r->end))
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		real = 1;
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (!is_digit(r->p, r->end))
			return NULL;
		while (is_digit(r->p, r->end))
			r->p++;
	}
	n = (size_t)(r->p - start);
	if (n >= sizeof(tmp))
		return NULL; /* jansson's to handle: rare, and long */
	memcpy(tmp, start, n);
	tmp[n] = '\0';
	errno = 0;
	if (!real) {
		long long v = strtoll(tmp, &endp, 10);

		if (errno == ERANGE || endp != tmp + n)
			return NULL;
		return json_integer((json_int_t)v);
	} else {
		double d = strtod(tmp, &endp);

		if (((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE) || endp != tmp + n)
			return NULL;
		return json_real(d);
	}
}

static int literal(struct reader *r, const char *word, size_t n)
{
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return -1;
	r->p += n;
	return 0;
}

static json_t *read_value(struct reader *r, int depth);

static json_t *read_object(struct reader *r, int depth)
{
	json_t *obj = json_object(), *v;
	const char *k;
	size_t klen;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return obj;
	}
	for (;;) {
		char small[128], *copy = NULL;

		if (r->p >= r->end || *r->p != '"' || read_string(r, &k, &klen) < 0 ||
		    memchr(k, '\0', klen))
			goto fail;
		/* An unescaped key points into the input; an escaped one is copied from the
		 * scratch. */
		if (k == r->scratch) {
			copy = klen < sizeof(small) ? small : xmalloc(klen);
			memcpy(copy, k, klen);
			k = copy;
		}
		skip_ws(r);
		if (r->p < r->end && *r->p == ':' &&
		    !((r->flags & JSON_REJECT_DUPLICATES) && json_object_getn(obj, k, klen))) {
			r->p++;
			v = read_value(r, depth + 1);
		} else {
			v = NULL;
		}
		/* On failure (out of memory) the value is freed by jansson. */
		if (v && json_object_setn_new_nocheck(obj, k, klen, v) < 0)
			v = NULL;
		if (copy != small)
			free(copy);
		if (!v)
			goto fail;
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			skip_ws(r);
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			return obj;
		}
		goto fail;
	}
fail:
	json_decref(obj);
	return NULL;
}

static json_t *read_array(struct reader *r, int depth)
{
	json_t *arr = json_array(), *v;

	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return arr;
	}
	for (;;) {
		v = read_value(r, depth + 1);
		if (!v || json_array_append_new(arr, v) < 0)
			break;
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			return arr;
		}
		break;
	}
	json_decref(arr);
	return NULL;
}

static json_t *read_value(struct reader *r, int depth)
{
	const char *s;
	size_t len;

	skip_ws(r);
	if (r->p >= r->end || depth > MAX_DEPTH)
		return NULL;
	switch (*r->p) {
	case '{':
		return read_object(r, depth);
	case '[':
		return read_array(r, depth);
	case '"':
		if (read_string(r, &s, &len) < 0)
			return NULL;
		return json_stringn_nocheck(s, len);
	case 't':
		return literal(r, "true", 4) == 0 ? json_true() : NULL;
	case 'f':
		return literal(r, "false", 5) == 0 ? json_false() : NULL;
	case 'n':
		return literal(r, "null", 4) == 0 ? json_null() : NULL;
	default:
		return read_number(r);
	}
}

static unsigned long fallbacks;

unsigned long jsonr_fallbacks(void)
{
	return __atomic_load_n(&fallbacks, __ATOMIC_RELAXED);
}

static json_t *fallback(const char *buf, size_t len, size_t flags, json_error_t *error)
{
	__atomic_fetch_add(&fallbacks, 1, __ATOMIC_RELAXED);
	return json_loadb(buf, len, flags, error);
}

json_t *jsonr_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
	struct reader r = {(const unsigned char *)buf, (const unsigned char *)buf + len, flags};
	json_t *v = NULL;

	if (!buf ||
	    (flags & ~(size_t)(JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL)) ||
	    strcmp(localeconv()->decimal_point, ".") != 0)
		return fallback(buf, len, flags, error);
	skip_ws(&r);
	if (r.p < r.end && (flags & JSON_DECODE_ANY || *r.p == '{' || *r.p == '['))
		v = read_value(&r, 0);
	skip_ws(&r);
	free(r.scratch);
	if (v && r.p == r.end) {
		if (error) {
			/* What json_loadb leaves in it on success. */
			memset(error, 0, sizeof(*error));
			error->line = error->column = -1;
			snprintf(error->source, sizeof(error->source), "%s", "<buffer>");
		}
		return v;
	}
	json_decref(v);
	return fallback(buf, len, flags, error);
}

/* What a JSON value is, for messages: "is a string, not an object". */
const char *jsonr_kind(const json_t *v)
{
	if (!v)
		return "missing";
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	case JSON_NULL:
		return "null";
	}
	return "unknown";
}
