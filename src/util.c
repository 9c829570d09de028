/*
 * util.c - see util.h. Everything here is pure and testable on its own.
 */
#include "util.h"

#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void grow_array(void **v, size_t *cap, size_t need, size_t elem)
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

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	grow_array((void **)&sb->buf, &sb->cap, sb->len + n + 1, 1);
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

int time_parse_rfc3339(const char *s, int64_t *t)
{
	struct tm tm = {0};
	const char *rest;
	time_t v;

	rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (rest && *rest == '.')
		for (rest++; *rest >= '0' && *rest <= '9'; rest++)
			;
	if (!rest || (strcmp(rest, "Z") != 0 &&
		      !((rest[0] == '+' || rest[0] == '-') && strlen(rest) == 6 &&
			isdigit((unsigned char)rest[1]) && isdigit((unsigned char)rest[2]) &&
			rest[3] == ':' && isdigit((unsigned char)rest[4]) &&
			isdigit((unsigned char)rest[5]))))
		return -1;
	v = timegm(&tm);
	if (*rest != 'Z') {
		long off = (atol(rest + 1) * 60 + atol(rest + 4)) * 60;

		v += rest[0] == '+' ? -off : off;
	}
	*t = (int64_t)v;
	return 0;
}

const char *time_format_rfc3339(int64_t t, char buf[21])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

int util_now(int64_t *t, struct kiln_error *err)
{
	const char *now = getenv("KILN_NOW");

	if (!now || !*now) {
		*t = (int64_t)time(NULL);
		return 0;
	}
	if (time_parse_rfc3339(now, t) < 0) {
		kiln_error_set(err, "KILN_NOW '%s' is not an RFC 3339 time", now);
		kiln_error_hint(err, "write it like 2027-01-31T12:00:00Z, or unset it");
		return -1;
	}
	return 0;
}

int duration_parse(const char *s, int64_t *seconds)
{
	const int64_t max = 100LL * 365 * 86400;
	int64_t total = 0;
	const char *p = s;

	if (!*p)
		return -1;
	while (*p) {
		int64_t n = 0, unit;
		int digits = 0;

		while (*p >= '0' && *p <= '9') {
			n = n * 10 + (*p - '0');
			if (n > max)
				return -1;
			p++;
			digits++;
		}
		if (!digits)
			return -1;
		switch (*p) {
		case 's':
			unit = 1;
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		default:
			return -1;
		}
		p++;
		if (n > max / unit)
			return -1;
		total += n * unit;
		if (total > max)
			return -1;
	}
	*seconds = total;
	return 0;
}

char *duration_format(int64_t seconds)
{
	static const struct {
		char unit;
		int64_t size;
	} units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
	struct strbuf sb = {0};
	size_t i;

	if (seconds <= 0)
		return xstrdup("0s");
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (seconds >= units[i].size) {
			sb_addf(&sb, "%lld%c", (long long)(seconds / units[i].size), units[i].unit);
			seconds %= units[i].size;
		}
	}
	return sb_detach(&sb);
}

static int parse_octet(const char **pp, unsigned *out)
{
	const char *p = *pp;
	unsigned v = 0;
	int digits = 0;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p - '0');
		if (++digits > 3)
			return -1;
		p++;
	}
	/* A leading zero would be read as octal by some tools: refuse it. */
	if (!digits || v > 255 || (digits > 1 && **pp == '0'))
		return -1;
	*out = v;
	*pp = p;
	return 0;
}

int cidr_parse(const char *s, uint32_t *addr, int *prefix, bool *host_bits)
{
	const char *p = s;
	uint32_t a = 0, mask;
	unsigned v;
	int i;

	for (i = 0; i < 4; i++) {
		if (parse_octet(&p, &v) < 0)
			return -1;
		a = (a << 8) | v;
		if (i < 3 && *p++ != '.')
			return -1;
	}
	if (*p++ != '/')
		return -1;
	if (parse_octet(&p, &v) < 0 || v > 32 || *p)
		return -1;
	mask = v == 0 ? 0 : 0xffffffffu << (32 - v);
	*addr = a & mask;
	*prefix = (int)v;
	*host_bits = (a & ~mask) != 0;
	return 0;
}

char *cidr_format(uint32_t addr, int prefix)
{
	uint32_t mask = prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);

	addr &= mask;
	return xasprintf("%u.%u.%u.%u/%d", addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255,
			 addr & 255, prefix);
}

void text_position(const char *buf, size_t off, int *line, int *col)
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

size_t text_offset(const char *buf, size_t len, int line, int col)
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

int32_t utf8_decode(const unsigned char *s, size_t len, size_t *size)
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

size_t utf8_invalid_offset(const unsigned char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (utf8_decode(s + i, len - i, &n) < 0)
			return i;
		i += n;
	}
	return len;
}

int file_read_all(const char *path, size_t limit, char **out, size_t *len, struct kiln_error *err)
{
	FILE *f;
	struct strbuf sb = {0};
	char chunk[65536];
	size_t n;
	bool is_stdin = strcmp(path, "-") == 0;
	int ret = -1;

	f = is_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		kiln_error_set(err, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (sb.len + n > limit) {
			char *lim = size_format(limit);

			kiln_error_set(err, "%s is larger than %s, the most kiln reads",
				       is_stdin ? "standard input" : path, lim);
			free(lim);
			ret = -2;
			goto out;
		}
		sb_add(&sb, chunk, n);
	}
	if (ferror(f)) {
		kiln_error_set(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	*len = sb.len;
	*out = sb_detach(&sb);
	ret = 0;
out:
	sb_release(&sb);
	if (!is_stdin)
		fclose(f);
	return ret;
}

char *size_format(uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		return xasprintf("%llu B", (unsigned long long)bytes);
	if (v == (double)(uint64_t)v)
		return xasprintf("%llu %s", (unsigned long long)v, units[u]);
	return xasprintf("%.1f %s", v, units[u]);
}

void uuid_v4(char out[37])
{
	unsigned char b[16];
	int i, o = 0;

	if (RAND_bytes(b, sizeof(b)) != 1) {
		fprintf(stderr, "kiln: the system random number generator failed\n");
		abort();
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		snprintf(out + o, 3, "%02x", b[i]);
		o += 2;
	}
	out[36] = '\0';
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int remove_tree(const char *path)
{
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void backoff_sleep(int attempt, long base_ms, long cap_ms)
{
	static __thread unsigned seed;
	long ms = base_ms << (attempt < 16 ? attempt : 16);
	struct timespec ts;

	if (!seed)
		seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
	if (ms > cap_ms || ms < 0)
		ms = cap_ms;
	ms = ms > 0 ? (long)(rand_r(&seed) % (ms + 1)) : 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

long env_long(const char *name, long def, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > max) {
		static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
		static const char *warned[8];
		size_t i;

		pthread_mutex_lock(&mu);
		for (i = 0; i < ARRAY_SIZE(warned) && warned[i] && strcmp(warned[i], name); i++)
			;
		if (i < ARRAY_SIZE(warned) && !warned[i]) {
			warned[i] = name;
			log_warn("%s '%s' is not a whole number from 0 to %ld; using %ld", name, s,
				 max, def);
		}
		pthread_mutex_unlock(&mu);
		return def;
	}
	return v;
}
