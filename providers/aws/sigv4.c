/*
 * sigv4.c - AWS Signature Version 4: canonical request, string to sign,
 * signing key, the Authorization header, and its redaction for logs.
 *
 * Follows the published algorithm and is pinned by AWS's own test suite and
 * S3 examples (tests/test_sigv4.c). It only computes: no I/O, no globals, so
 * any number of threads may sign at once. The secret and the derived keys
 * are wiped before returning.
 */
#include "aws/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"

/* One header as it goes into the canonical form. */
struct canon_header {
	char *name;  /* lower case */
	char *value; /* trimmed, inner whitespace runs collapsed */
	size_t seq;  /* position given, so same-name values keep their order */
};

struct canon_headers {
	struct canon_header *v;
	size_t n, cap;
};

void aws_creds_release(struct aws_creds *c)
{
	if (!c)
		return;
	if (c->access_key) {
		OPENSSL_cleanse(c->access_key, strlen(c->access_key));
		free(c->access_key);
	}
	if (c->secret_key) {
		OPENSSL_cleanse(c->secret_key, strlen(c->secret_key));
		free(c->secret_key);
	}
	if (c->session_token) {
		OPENSSL_cleanse(c->session_token, strlen(c->session_token));
		free(c->session_token);
	}
	free(c->source);
	memset(c, 0, sizeof(*c));
}

void sigv4_headers_free(char **h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; h[i]; i++)
		free(h[i]);
	free(h);
}

static void hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * n] = '\0';
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;

	/* EVP_Digest of a fixed algorithm only fails when out of memory. */
	if (!EVP_Digest(data ? data : "", n, md, &len, EVP_sha256(), NULL) || len != sizeof(md))
		abort();
	hex_encode(md, sizeof(md), out);
}

static void hmac_sha256(const void *key, size_t klen, const void *msg, size_t mlen,
			unsigned char out[32])
{
	unsigned int len = 0;

	if (!HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &len) || len != 32)
		abort();
}

void sigv4_signing_key(const char *secret, const char *yyyymmdd, const char *region,
		       const char *service, unsigned char out[32])
{
	char *k_secret = xasprintf("AWS4%s", secret);
	unsigned char k[32];

	hmac_sha256(k_secret, strlen(k_secret), yyyymmdd, strlen(yyyymmdd), k);
	hmac_sha256(k, sizeof(k), region, strlen(region), k);
	hmac_sha256(k, sizeof(k), service, strlen(service), k);
	hmac_sha256(k, sizeof(k), "aws4_request", strlen("aws4_request"), out);
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(k_secret, strlen(k_secret));
	free(k_secret);
}

/* "20150830T123600Z"; -1 when the time has no four-digit UTC year. */
static int amz_date(time_t now, char out[17])
{
	struct tm tm;

	if (!gmtime_r(&now, &tm) || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900)
		return -1;
	if (strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
		return -1;
	return 0;
}

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

/* RFC 3986 encoding as SigV4 defines it: upper-case hex, everything but unreserved. */
static void uri_encode(struct strbuf *sb, const char *s, size_t n)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_unreserved(c)) {
			sb_addc(sb, (char)c);
		} else {
			sb_addc(sb, '%');
			sb_addc(sb, digits[c >> 4]);
			sb_addc(sb, digits[c & 0xf]);
		}
	}
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode %XX so that a query component is encoded exactly once however the
 * caller spelled it. A '%' not followed by two hex digits stays a literal
 * '%', and '+' stays '+': AWS reads it as a plus, never as a space.
 */
static void pct_decode(struct strbuf *out, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] == '%' && i + 2 < n && (hi = hex_value(s[i + 1])) >= 0 &&
		    (lo = hex_value(s[i + 2])) >= 0) {
			sb_addc(out, (char)(hi << 4 | lo));
			i += 2;
		} else {
			sb_addc(out, s[i]);
		}
	}
}

/*
 * The canonical URI. S3 signs the path exactly as sent. Every other service
 * signs it with dot segments resolved and empty segments dropped, each
 * segment encoded once more (so "%2F" on the wire is "%252F" here), which is
 * what the services compute on their side.
 */
static void canonical_uri(struct strbuf *sb, const char *path, bool s3)
{
	struct segment {
		const char *p;
		size_t len;
	} *segs = NULL;
	size_t n = 0, cap = 0, i;
	const char *p;

	if (!path || !*path) {
		sb_addc(sb, '/');
		return;
	}
	if (s3) {
		sb_adds(sb, path);
		return;
	}
	for (p = path; *p;) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (n > 0)
				n--;
		} else if (len > 0 && !(len == 1 && p[0] == '.')) {
			struct segment *sg = ARRAY_PUSH(segs, n, cap);

			sg->p = p;
			sg->len = len;
		}
		p += len;
		if (*p == '/')
			p++;
	}
	for (i = 0; i < n; i++) {
		sb_addc(sb, '/');
		uri_encode(sb, segs[i].p, segs[i].len);
	}
	if (n == 0 || path[strlen(path) - 1] == '/')
		sb_addc(sb, '/');
	free(segs);
}

struct query_param {
	char *name;  /* encoded */
	char *value; /* encoded */
};

static int query_param_cmp(const void *a, const void *b)
{
	const struct query_param *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

static char *encode_component(const char *s, size_t n)
{
	struct strbuf raw = {0}, enc = {0};

	pct_decode(&raw, s, n);
	uri_encode(&enc, raw.buf ? raw.buf : "", raw.len);
	sb_release(&raw);
	return sb_detach(&enc);
}

/* Parameters sorted by encoded name then value, "name=value" joined by '&'. */
static void canonical_query(struct strbuf *sb, const char *query)
{
	struct query_param *v = NULL;
	size_t n = 0, cap = 0, i;
	const char *p = query;

	while (p && *p) {
		const char *e = strchr(p, '&');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *eq = memchr(p, '=', len);

		if (len > 0) {
			struct query_param *q = ARRAY_PUSH(v, n, cap);
			size_t nlen = eq ? (size_t)(eq - p) : len;

			q->name = encode_component(p, nlen);
			q->value = eq ? encode_component(eq + 1, len - nlen - 1) : xstrdup("");
		}
		p += len;
		if (*p == '&')
			p++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), query_param_cmp);
	for (i = 0; i < n; i++) {
		sb_addf(sb, "%s%s=%s", i ? "&" : "", v[i].name, v[i].value);
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* The value with surrounding whitespace trimmed and inner runs made one space. */
static char *trim_all(const char *s)
{
	struct strbuf sb = {0};
	bool pending = false;

	while (is_space(*s))
		s++;
	for (; *s; s++) {
		if (is_space(*s)) {
			pending = true;
			continue;
		}
		if (pending)
			sb_addc(&sb, ' ');
		pending = false;
		sb_addc(&sb, *s);
	}
	return sb_detach(&sb);
}

static void headers_add(struct canon_headers *h, const char *name, size_t nlen, const char *value)
{
	struct canon_header *x = ARRAY_PUSH(h->v, h->n, h->cap);
	size_t i;

	x->name = xstrndup(name, nlen);
	for (i = 0; i < nlen; i++)
		if (x->name[i] >= 'A' && x->name[i] <= 'Z')
			x->name[i] = (char)(x->name[i] - 'A' + 'a');
	x->value = trim_all(value);
	x->seq = h->n - 1;
}

static void headers_release(struct canon_headers *h)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		free(h->v[i].name);
		free(h->v[i].value);
	}
	free(h->v);
}

static int canon_header_cmp(const void *a, const void *b)
{
	const struct canon_header *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool name_is(const char *name, size_t len, const char *lower)
{
	return strlen(lower) == len && strncasecmp(name, lower, len) == 0;
}

/* An HTTP token (RFC 9110): what a method or a header name may be made of. */
static bool is_token(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!is_unreserved((unsigned char)s[i]) && !(s[i] && strchr("!#$%&'*+^`|", s[i])))
			return false;
	return true;
}

/*
 * The caller's headers plus the ones the signer owns. Host and X-Amz-Date
 * from the caller are dropped (the signer sets them from r->host and r->now),
 * and so is the caller's X-Amz-Security-Token when the credentials carry one.
 * *payload_hash is the caller's x-amz-content-sha256 when given (borrowed
 * from h), else NULL. -1 for a line that would corrupt the request: no ':',
 * a name that is not an HTTP token, or a CR or LF anywhere.
 */
static int headers_collect(struct canon_headers *h, const struct sigv4_request *r,
			   const struct aws_creds *c, const char *date, const char **payload_hash)
{
	const char *const *l;
	size_t i;

	*payload_hash = NULL;
	for (l = r->headers; l && *l; l++) {
		const char *colon = strchr(*l, ':'), *name = *l, *end;

		if (!colon || strpbrk(*l, "\r\n"))
			return -1;
		while (is_space(*name))
			name++;
		for (end = colon; end > name && is_space(end[-1]); end--)
			;
		if (!is_token(name, (size_t)(end - name)))
			return -1;
		if (name_is(name, (size_t)(end - name), "host") ||
		    name_is(name, (size_t)(end - name), "x-amz-date") ||
		    (c->session_token &&
		     name_is(name, (size_t)(end - name), "x-amz-security-token")))
			continue;
		headers_add(h, name, (size_t)(end - name), colon + 1);
	}
	for (i = 0; i < h->n; i++)
		if (strcmp(h->v[i].name, "x-amz-content-sha256") == 0)
			*payload_hash = h->v[i].value;
	headers_add(h, "host", 4, r->host);
	headers_add(h, "x-amz-date", 10, date);
	if (c->session_token)
		headers_add(h, "x-amz-security-token", 20, c->session_token);
	return 0;
}

static bool request_ok(const struct sigv4_request *r, const struct aws_creds *c)
{
	return r && c && r->method && is_token(r->method, strlen(r->method)) && r->host &&
	       *r->host && r->region && *r->region && r->service && *r->service && c->access_key &&
	       c->secret_key && !strpbrk(r->host, "\r\n") &&
	       !(c->session_token && strpbrk(c->session_token, "\r\n"));
}

/*
 * The canonical request, its signed-header list and the payload hash that
 * went into it (malloc'd); *caller_hash says the caller sent that hash
 * itself, so it must not be returned a second time. -1 on malformed input.
 */
static int canonicalise(const struct sigv4_request *r, const struct aws_creds *c, char **creq_out,
			char **signed_out, char **hash_out, bool *caller_hash)
{
	struct canon_headers h = {0};
	struct strbuf sb = {0}, sh = {0};
	const char *given_hash;
	char date[17], body_hash[65];
	size_t i;

	if (!request_ok(r, c) || amz_date(r->now, date) < 0)
		return -1;
	if (headers_collect(&h, r, c, date, &given_hash) < 0) {
		headers_release(&h);
		return -1;
	}
	*caller_hash = given_hash != NULL;
	if (given_hash) {
		*hash_out = xstrdup(given_hash);
	} else {
		sha256_hex(r->body, r->body_len, body_hash);
		*hash_out = xstrdup(body_hash);
		if (r->s3)
			headers_add(&h, "x-amz-content-sha256", 20, body_hash);
	}
	qsort(h.v, h.n, sizeof(*h.v), canon_header_cmp);

	sb_adds(&sb, r->method);
	sb_addc(&sb, '\n');
	canonical_uri(&sb, r->path, r->s3);
	sb_addc(&sb, '\n');
	canonical_query(&sb, r->query);
	sb_addc(&sb, '\n');
	for (i = 0; i < h.n; i++) {
		bool first = i == 0 || strcmp(h.v[i - 1].name, h.v[i].name) != 0;
		bool last = i + 1 == h.n || strcmp(h.v[i + 1].name, h.v[i].name) != 0;

		if (first) {
			sb_addf(&sb, "%s:", h.v[i].name);
			sb_addf(&sh, "%s%s", sh.len ? ";" : "", h.v[i].name);
		} else {
			sb_addc(&sb, ',');
		}
		sb_adds(&sb, h.v[i].value);
		if (last)
			sb_addc(&sb, '\n');
	}
	sb_addf(&sb, "\n%s\n%s", sh.buf, *hash_out);
	headers_release(&h);
	*creq_out = sb_detach(&sb);
	*signed_out = sb_detach(&sh);
	return 0;
}

char *sigv4_canonical_request(const struct sigv4_request *r, const struct aws_creds *c,
			      char **signed_headers_out)
{
	char *creq, *sh, *hash;
	bool caller_hash;

	if (canonicalise(r, c, &creq, &sh, &hash, &caller_hash) < 0)
		return NULL;
	if (signed_headers_out)
		*signed_headers_out = sh;
	else
		free(sh);
	free(hash);
	return creq;
}

char *sigv4_string_to_sign(const struct sigv4_request *r, const char *canonical_request)
{
	char date[17], hash[65];

	if (!r || !r->region || !r->service || !canonical_request || amz_date(r->now, date) < 0)
		return NULL;
	sha256_hex(canonical_request, strlen(canonical_request), hash);
	return xasprintf(SIGV4_ALGORITHM "\n%s\n%.8s/%s/%s/aws4_request\n%s", date, date, r->region,
			 r->service, hash);
}

char **sigv4_sign(const struct sigv4_request *r, const struct aws_creds *c)
{
	char *creq = NULL, *sh = NULL, *hash = NULL, *sts = NULL, **out = NULL;
	char date[17], day[9], sig_hex[65];
	unsigned char key[32], sig[32];
	bool caller_hash;
	size_t n = 0;

	if (canonicalise(r, c, &creq, &sh, &hash, &caller_hash) < 0)
		return NULL;
	sts = sigv4_string_to_sign(r, creq);
	if (!sts || amz_date(r->now, date) < 0)
		goto out;
	memcpy(day, date, 8);
	day[8] = '\0';
	sigv4_signing_key(c->secret_key, day, r->region, r->service, key);
	hmac_sha256(key, sizeof(key), sts, strlen(sts), sig);
	hex_encode(sig, sizeof(sig), sig_hex);
	OPENSSL_cleanse(key, sizeof(key));

	out = xcalloc(5, sizeof(*out));
	out[n++] = xasprintf("Authorization: " SIGV4_ALGORITHM
			     " Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, Signature=%s",
			     c->access_key, day, r->region, r->service, sh, sig_hex);
	out[n++] = xasprintf("X-Amz-Date: %s", date);
	if (c->session_token)
		out[n++] = xasprintf("X-Amz-Security-Token: %s", c->session_token);
	if (r->s3 && !caller_hash)
		out[n++] = xasprintf("x-amz-content-sha256: %s", hash);
out:
	free(creq);
	free(sh);
	free(hash);
	free(sts);
	return out;
}

static bool has_prefix_ci(const char *s, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - s) >= n && strncasecmp(s, prefix, n) == 0;
}

static bool contains_ci(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word), i;

	for (i = 0; i + w <= n; i++)
		if (strncasecmp(s + i, word, w) == 0)
			return true;
	return false;
}

/* An AWS4 Authorization value with the access key and the signature replaced. */
static void redact_aws4(struct strbuf *sb, const char *v)
{
	const char *p = v + strlen(SIGV4_ALGORITHM);

	sb_add(sb, v, (size_t)(p - v));
	while (*p) {
		const char *end = strchr(p, ','), *k = p;

		if (!end)
			end = p + strlen(p);
		while (k < end && is_space(*k))
			k++;
		sb_add(sb, p, (size_t)(k - p));
		if (has_prefix_ci(k, end, "Credential=")) {
			const char *slash = memchr(k, '/', (size_t)(end - k));

			sb_add(sb, k, strlen("Credential="));
			sb_adds(sb, "REDACTED");
			if (slash)
				sb_add(sb, slash, (size_t)(end - slash));
		} else if (has_prefix_ci(k, end, "Signature=")) {
			sb_add(sb, k, strlen("Signature="));
			sb_adds(sb, "REDACTED");
		} else {
			sb_add(sb, k, (size_t)(end - k));
		}
		if (*end == ',')
			sb_addc(sb, *end++);
		p = end;
	}
}

char *sigv4_redact_header(const char *line)
{
	struct strbuf sb = {0};
	const char *colon, *v, *name = line, *name_end;

	if (!line)
		return NULL;
	colon = strchr(line, ':');
	if (!colon)
		return xstrdup(line);
	while (is_space(*name))
		name++;
	for (name_end = colon; name_end > name && is_space(name_end[-1]); name_end--)
		;
	for (v = colon + 1; is_space(*v); v++)
		;
	sb_add(&sb, line, (size_t)(v - line));
	if (name_is(name, (size_t)(name_end - name), "authorization")) {
		if (has_prefix_ci(v, v + strlen(v), SIGV4_ALGORITHM " "))
			redact_aws4(&sb, v);
		else
			sb_adds(&sb, "REDACTED");
	} else if (contains_ci(name, (size_t)(name_end - name), "token") ||
		   contains_ci(name, (size_t)(name_end - name), "secret")) {
		sb_adds(&sb, "REDACTED");
	} else {
		sb_adds(&sb, v);
	}
	return sb_detach(&sb);
}
