/*
 * jansson's serialisation, byte for byte, at the cost of the bytes alone.
 * See jsonw.h; tests/test_jsonw.c compares the two on every kind of value.
 */
#include "jsonw.h"

#include <locale.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jsonc.h"
#include "util.h"

#define FLAGS_INDENT(f) ((f)&0x1F)
#define FLAGS_PRECISION(f) (((f) >> 11) & 0x1F)
#define FLUSH_AT 65536

struct key {
	const char *s;
	size_t len;
	json_t *v;
};

struct writer {
	char *buf;
	size_t len, cap;
	FILE *f; /* flushed to once FLUSH_AT bytes are buffered; NULL keeps everything */
	size_t flags;
	struct key *keys; /* one stack of sorted keys for every open object */
	size_t nkeys, capkeys;
	const json_t **open; /* the containers being written, outermost first */
	size_t capopen;
	int failed;
};

static void reserve(struct writer *w, size_t n)
{
	if (w->len + n <= w->cap)
		return;
	if (w->f && w->len && w->len + n > FLUSH_AT) {
		if (fwrite(w->buf, 1, w->len, w->f) != w->len)
			w->failed = 1;
		w->len = 0;
		if (n <= w->cap)
			return;
	}
	kiln_array_grow((void **)&w->buf, &w->cap, w->len + n, 1);
}

static void put(struct writer *w, const char *s, size_t n)
{
	reserve(w, n);
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void putc1(struct writer *w, char c)
{
	reserve(w, 1);
	w->buf[w->len++] = c;
}

/* jansson's dump_indent: a newline and depth x indent spaces, or one space between items. */
static void indent(struct writer *w, size_t depth, int space)
{
	size_t n = FLAGS_INDENT(w->flags) * depth;

	if (FLAGS_INDENT(w->flags)) {
		reserve(w, n + 1);
		w->buf[w->len++] = '\n';
		memset(w->buf + w->len, ' ', n);
		w->len += n;
	} else if (space && !(w->flags & JSON_COMPACT)) {
		putc1(w, ' ');
	}
}

static const char hex[] = "0123456789ABCDEF";

static void put_u16(struct writer *w, unsigned int u)
{
	char seq[6] = {
	    '\\',	 'u', hex[(u >> 12) & 0xF], hex[(u >> 8) & 0xF], hex[(u >> 4) & 0xF],
	    hex[u & 0xF]};

	put(w, seq, sizeof(seq));
}

/* jansson's dump_string. */
static void put_string(struct writer *w, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str, *lim = s + len, *run = s;
	int slash = (w->flags & JSON_ESCAPE_SLASH) != 0,
	    ascii = (w->flags & JSON_ENSURE_ASCII) != 0;

	putc1(w, '"');
	while (s < lim) {
		unsigned char c = *s;
		int32_t cp;
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && !(slash && c == '/')) {
			s++;
			continue;
		}
		cp = str_utf8_decode(s, (size_t)(lim - s), &n);
		if (cp < 0) {
			w->failed = 1;
			return;
		}
		if (cp > 0x7F && !ascii) {
			s += n;
			continue;
		}
		put(w, (const char *)run, (size_t)(s - run));
		s += n;
		run = s;
		switch (cp) {
		case '\\':
			put(w, "\\\\", 2);
			break;
		case '"':
			put(w, "\\\"", 2);
			break;
		case '\b':
			put(w, "\\b", 2);
			break;
		case '\f':
			put(w, "\\f", 2);
			break;
		case '\n':
			put(w, "\\n", 2);
			break;
		case '\r':
			put(w, "\\r", 2);
			break;
		case '\t':
			put(w, "\\t", 2);
			break;
		case '/':
			put(w, "\\/", 2);
			break;
		default:
			if (cp < 0x10000) {
				put_u16(w, (unsigned int)cp);
			} else {
				cp -= 0x10000;
				put_u16(w, 0xD800 | (((unsigned int)cp & 0xffc00) >> 10));
				put_u16(w, 0xDC00 | ((unsigned int)cp & 0x003ff));
			}
		}
	}
	put(w, (const char *)run, (size_t)(s - run));
	putc1(w, '"');
}

static void put_integer(struct writer *w, json_int_t v)
{
	char tmp[24], *p = tmp + sizeof(tmp);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	put(w, p, (size_t)(tmp + sizeof(tmp) - p));
}

/* jansson 2.14's jsonp_dtostr as built without dtoa: "%.*g", a ".0" when neither '.' nor 'e'. */
static int dtostr(char *buf, size_t size, double value, int precision)
{
	char point = *localeconv()->decimal_point, *start, *end, *pos;
	int ret = snprintf(buf, size, "%.*g", precision ? precision : 17, value);
	size_t length;

	if (ret < 0 || (size_t)ret >= size)
		return -1;
	length = (size_t)ret;
	if (point != '.' && (pos = strchr(buf, point)) != NULL)
		*pos = '.';
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		if (length + 3 >= size)
			return -1;
		memcpy(buf + length, ".0", 3);
		length += 2;
	}
	start = strchr(buf, 'e');
	if (start) {
		start++;
		end = start + 1;
		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, length - (size_t)(end - buf));
			length -= (size_t)(end - start);
		}
	}
	return (int)length;
}

/*
 * Whether dtostr writes what the jansson kiln is linked with writes: newer
 * builds format reals with dtoa (shortest round trip) instead. When they
 * differ, reals go through jansson itself.
 */
static int reals_native;

static void probe_reals(void)
{
	static const double probe[] = {0.1, 0.8048, 1e13, 1e20, 5e-5, -0.0, 100.0, 1.0 / 3};
	size_t i, p;

	reals_native = 1;
	for (i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
		for (p = 0; p <= 17; p += 12) {
			json_t *r = json_real(probe[i]);
			size_t fl = JSON_ENCODE_ANY | JSON_REAL_PRECISION(p);
			char a[64], b[64];
			size_t na = json_dumpb(r, a, sizeof(a), fl);
			int nb = dtostr(b, sizeof(b), probe[i], (int)p);

			json_decref(r);
			if (nb < 0 || na != (size_t)nb || memcmp(a, b, na) != 0)
				reals_native = 0;
		}
	}
}

static void put_real(struct writer *w, double v)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	char buf[100];
	int n;

	pthread_once(&once, probe_reals);
	if (reals_native) {
		n = dtostr(buf, sizeof(buf), v, (int)FLAGS_PRECISION(w->flags));
	} else {
		json_t *r = json_real(v);
		size_t got =
		    json_dumpb(r, buf, sizeof(buf),
			       JSON_ENCODE_ANY | JSON_REAL_PRECISION(FLAGS_PRECISION(w->flags)));

		json_decref(r);
		n = got && got < sizeof(buf) ? (int)got : -1;
	}
	if (n < 0)
		w->failed = 1;
	else
		put(w, buf, (size_t)n);
}

/* jansson's compare_keys: bytes, then the shorter first. */
static int key_cmp(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;
	int c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static void sort_keys(struct key *k, size_t n)
{
	size_t i, j;

	if (n > 16) {
		qsort(k, n, sizeof(*k), key_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		struct key t = k[i];

		for (j = i; j > 0 && key_cmp(&k[j - 1], &t) > 0; j--)
			k[j] = k[j - 1];
		k[j] = t;
	}
}

static void put_value(struct writer *w, const json_t *v, size_t depth);

static void put_object(struct writer *w, const json_t *v, size_t depth)
{
	size_t n = json_object_size(v), base = w->nkeys, i = 0;
	const char *sep = w->flags & JSON_COMPACT ? ":" : ": ";
	size_t seplen = w->flags & JSON_COMPACT ? 1 : 2;
	void *it;

	if (n == 0) {
		put(w, "{}", 2);
		return;
	}
	kiln_array_grow((void **)&w->keys, &w->capkeys, base + n, sizeof(*w->keys));
	for (it = jsonc_object_iter(v); it; it = jsonc_object_iter_next(v, it)) {
		struct key *k = &w->keys[base + i++];

		k->s = json_object_iter_key(it);
		k->len = json_object_iter_key_len(it);
		k->v = json_object_iter_value(it);
	}
	n = i;
	w->nkeys = base + n;
	if (w->flags & JSON_SORT_KEYS)
		sort_keys(w->keys + base, n);
	putc1(w, '{');
	indent(w, depth + 1, 0);
	for (i = 0; i < n && !w->failed; i++) {
		/* w->keys may move while the value is written: index, never hold a pointer. */
		put_string(w, w->keys[base + i].s, w->keys[base + i].len);
		put(w, sep, seplen);
		put_value(w, w->keys[base + i].v, depth + 1);
		if (i + 1 < n) {
			putc1(w, ',');
			indent(w, depth + 1, 1);
		} else {
			indent(w, depth, 0);
		}
	}
	w->nkeys = base;
	putc1(w, '}');
}

static void put_array(struct writer *w, const json_t *v, size_t depth)
{
	size_t n = json_array_size(v), i;

	if (n == 0) {
		put(w, "[]", 2);
		return;
	}
	putc1(w, '[');
	indent(w, depth + 1, 0);
	for (i = 0; i < n && !w->failed; i++) {
		put_value(w, json_array_get(v, i), depth + 1);
		if (i + 1 < n) {
			putc1(w, ',');
			indent(w, depth + 1, 1);
		} else {
			indent(w, depth, 0);
		}
	}
	putc1(w, ']');
}

/* Whether v is one of the containers being written: a cycle. */
static bool in_cycle(struct writer *w, const json_t *v, size_t depth)
{
	size_t i;

	for (i = 0; i < depth; i++)
		if (w->open[i] == v)
			return true;
	return false;
}

static void put_value(struct writer *w, const json_t *v, size_t depth)
{
	if (!v) {
		w->failed = 1;
		return;
	}
	if (json_is_object(v) || json_is_array(v)) {
		kiln_array_grow((void **)&w->open, &w->capopen, depth + 1, sizeof(*w->open));
		w->open[depth] = v;
		if (depth >= JSONW_CYCLE_CHECK && in_cycle(w, v, depth)) {
			w->failed = 1;
			return;
		}
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_object(w, v, depth);
		break;
	case JSON_ARRAY:
		put_array(w, v, depth);
		break;
	case JSON_STRING:
		put_string(w, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		put_integer(w, json_integer_value(v));
		break;
	case JSON_REAL:
		put_real(w, json_real_value(v));
		break;
	case JSON_TRUE:
		put(w, "true", 4);
		break;
	case JSON_FALSE:
		put(w, "false", 5);
		break;
	case JSON_NULL:
		put(w, "null", 4);
		break;
	}
}

static int write_all(struct writer *w, const json_t *v, size_t flags)
{
	w->flags = flags;
	if ((flags & JSON_EMBED) ||
	    (!(flags & JSON_ENCODE_ANY) && !json_is_object(v) && !json_is_array(v)))
		w->failed = 1;
	else
		put_value(w, v, 0);
	if (!w->failed && (flags & JSONW_NEWLINE))
		putc1(w, '\n');
	free(w->keys);
	free(w->open);
	return w->failed ? -1 : 0;
}

char *jsonw_dumps(const json_t *v, size_t flags, size_t *len)
{
	struct writer w = {0};

	if (write_all(&w, v, flags) != 0) {
		free(w.buf);
		return NULL;
	}
	putc1(&w, '\0');
	if (len)
		*len = w.len - 1;
	return w.buf;
}

int jsonw_dumpf(const json_t *v, FILE *f, size_t flags)
{
	struct writer w = {.f = f};
	int rc;

	rc = write_all(&w, v, flags);
	if (rc == 0 && w.len && fwrite(w.buf, 1, w.len, f) != w.len)
		rc = -1;
	free(w.buf);
	return rc || w.failed ? -1 : 0;
}
