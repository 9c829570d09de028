/*
 * crypt.c - see crypt.h.
 *
 * Every buffer that holds a key or a plaintext is wiped (OPENSSL_cleanse)
 * before it is freed, and no message ever quotes either: errors name the
 * variable, the file or the key id.
 */
#include "crypt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#define SEAL_ALG "AES-256-GCM"
#define NONCE_LEN 12
#define TAG_LEN 16
/* A key file holds 44 characters; anything much larger is the wrong file. */
#define KEY_FILE_LIMIT 4096

static const char kid_context[] = "kiln-state-key-v1";

/* ---- base64 (RFC 4648, standard alphabet, padded) ---- */

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Decode len characters of strict padded base64 into a new buffer (wiped
 * and freed by the caller). -1 when the text is not base64.
 */
static int b64_decode(unsigned char **out, size_t *out_len, const char *s, size_t len)
{
	unsigned char *buf;
	size_t i, n = 0, pad = 0, cap = len / 4 * 3 + 1;
	int ret = -1;

	if (len % 4 != 0)
		return -1;
	if (len >= 1 && s[len - 1] == '=')
		pad++;
	if (len >= 2 && s[len - 2] == '=')
		pad++;
	buf = xmalloc(cap);
	for (i = 0; i < len; i += 4) {
		unsigned long v = 0;
		size_t j, last = i + 4 == len;

		for (j = 0; j < 4; j++) {
			int d = b64_value((unsigned char)s[i + j]);

			if (d < 0 && !(last && j >= 4 - pad))
				goto out;
			v = (v << 6) | (unsigned long)(d < 0 ? 0 : d);
		}
		buf[n++] = (unsigned char)(v >> 16);
		if (!last || pad < 2)
			buf[n++] = (unsigned char)(v >> 8);
		if (!last || pad < 1)
			buf[n++] = (unsigned char)v;
		/* Bits below the padding must be zero, or two texts decode alike. */
		if (last && ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff))))
			goto out;
	}
	*out = buf;
	*out_len = n;
	buf = NULL;
	ret = 0;
out:
	if (buf) {
		OPENSSL_cleanse(buf, cap);
		free(buf);
	}
	return ret;
}

/* New NUL-terminated padded base64 of len bytes. */
static char *b64_encode(const unsigned char *p, size_t len)
{
	char *out = xmalloc((len + 2) / 3 * 4 + 1);

	EVP_EncodeBlock((unsigned char *)out, p, (int)len);
	return out;
}

char *crypt_base64_encode(const unsigned char *p, size_t len)
{
	return b64_encode(p, len);
}

int crypt_base64_decode(unsigned char **out, size_t *out_len, const char *s, size_t len)
{
	return b64_decode(out, out_len, s, len);
}

static const char *openssl_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	ERR_clear_error();
	return r ? r : "unknown OpenSSL error";
}

/* ---- keys ---- */

static int key_id(char kid[CRYPT_KID_LEN + 1], const unsigned char key[CRYPT_KEY_LEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ret = -1, i;

	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, kid_context, strlen(kid_context)) != 1 ||
	    EVP_DigestUpdate(ctx, key, CRYPT_KEY_LEN) != 1 ||
	    EVP_DigestFinal_ex(ctx, md, &md_len) != 1)
		goto out;
	for (i = 0; i < CRYPT_KID_LEN / 2; i++) {
		kid[2 * i] = hex[md[i] >> 4];
		kid[2 * i + 1] = hex[md[i] & 15];
	}
	kid[CRYPT_KID_LEN] = '\0';
	ret = 0;
out:
	EVP_MD_CTX_free(ctx);
	OPENSSL_cleanse(md, sizeof(md));
	return ret;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Decode base64 key text; `what` names its source in errors. */
static int key_decode(struct crypt_key *k, const char *b64, size_t len, const char *what,
		      struct kiln_error *err)
{
	unsigned char *raw = NULL;
	size_t raw_len = 0;
	int ret = -1;

	while (len && is_space(b64[0])) {
		b64++;
		len--;
	}
	while (len && is_space(b64[len - 1]))
		len--;
	if (len == 0) {
		kiln_error_set(err, "%s is empty", what);
		kiln_error_hint(err, "create a key with: openssl rand -base64 32");
		goto out;
	}
	if (b64_decode(&raw, &raw_len, b64, len) < 0) {
		kiln_error_set(err, "%s is not valid base64", what);
		kiln_error_hint(err, "create a key with: openssl rand -base64 32");
		goto out;
	}
	if (raw_len != CRYPT_KEY_LEN) {
		kiln_error_set(err, "%s decodes to %zu bytes instead of %d", what, raw_len,
			       CRYPT_KEY_LEN);
		kiln_error_hint(err, "create a key with: openssl rand -base64 32");
		goto out;
	}
	memcpy(k->key, raw, CRYPT_KEY_LEN);
	if (key_id(k->kid, k->key) < 0) {
		crypt_key_wipe(k);
		kiln_error_set(err, "cannot compute the id of %s: %s", what, openssl_reason());
		goto out;
	}
	ret = 1;
out:
	if (raw) {
		OPENSSL_cleanse(raw, raw_len);
		free(raw);
	}
	return ret;
}

int crypt_key_from_base64(struct crypt_key *k, const char *b64, struct kiln_error *err)
{
	return key_decode(k, b64, strlen(b64), "the state key", err);
}

int crypt_secret_read(int fd, size_t limit, char **out, size_t *out_len)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	*out = NULL;
	*out_len = 0;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 128;
			char *nbuf = xmalloc(ncap);

			if (buf) {
				memcpy(nbuf, buf, len);
				OPENSSL_cleanse(buf, cap);
				free(buf);
			}
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || len + (size_t)n > limit) {
			int e = n < 0 ? errno : 0;

			if (n == 0)
				break;
			OPENSSL_cleanse(buf, cap);
			free(buf);
			errno = e;
			return n < 0 ? -1 : -2;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

int crypt_key_mode_check(const char *what, const char *path, unsigned mode, const char *use,
			 struct kiln_error *err)
{
	/* As OpenSSH does: a key others can read is no longer a secret. */
	if (!(mode & 077))
		return 0;
	kiln_error_set(err,
		       "%s %s may be read by group or others (mode %04o); kiln %s only with a key "
		       "that is private to its owner",
		       what, path, mode, use);
	kiln_error_hint(err, "chmod 600 %s", path);
	return -1;
}

/*
 * The whole key file, through crypt_secret_read: a pipe (<(vault read ...))
 * works too. prefix starts each message ("KILN_STATE_KEY_FILE: " or "").
 * Returns 0, -1 with err, or -2 when the file does not exist and missing_ok.
 */
static int key_file_read(char **out, size_t *out_len, const char *path, const char *prefix,
			 bool missing_ok, struct kiln_error *err)
{
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (missing_ok && (errno == ENOENT || errno == ENOTDIR))
			return -2;
		kiln_error_set(err, "%scannot read %s: %s", prefix, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		char *what = xasprintf("%sstate key", prefix);

		rc = crypt_key_mode_check(what, path, (unsigned)(st.st_mode & 07777), "seals state",
					  err);
		free(what);
		if (rc < 0) {
			close(fd);
			return -1;
		}
	}
	rc = crypt_secret_read(fd, KEY_FILE_LIMIT, out, out_len);
	if (rc == -1)
		kiln_error_set(err, "%scannot read %s: %s", prefix, path, strerror(errno));
	else if (rc == -2)
		kiln_error_set(err,
			       "%s%s is larger than %d bytes; a key file holds one line of base64",
			       prefix, path, KEY_FILE_LIMIT);
	close(fd);
	return rc < 0 ? -1 : 0;
}

char *crypt_key_default_path(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	/* The XDG base directory spec: a relative XDG_CONFIG_HOME is ignored. */
	if (xdg && xdg[0] == '/')
		return xasprintf("%s/kiln/state.key", xdg);
	if (home && home[0] == '/')
		return xasprintf("%s/.config/kiln/state.key", home);
	return NULL;
}

/* Decode the key text of a file; what names the source in errors. */
static int key_file_load(struct crypt_key *k, const char *path, const char *prefix, bool missing_ok,
			 const char *what, struct kiln_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = key_file_read(&text, &len, path, prefix, missing_ok, err);
	if (ret == -2)
		return 0;
	if (ret < 0)
		return -1;
	ret = key_decode(k, text, len, what, err);
	OPENSSL_cleanse(text, len);
	free(text);
	return ret;
}

int crypt_key_load(struct crypt_key *k, struct kiln_error *err)
{
	const char *env = getenv("KILN_STATE_KEY");
	const char *path = getenv("KILN_STATE_KEY_FILE");
	char *what = NULL, *dflt;
	int ret;

	if (env)
		return key_decode(k, env, strlen(env), "KILN_STATE_KEY", err);
	if (path && !*path) {
		kiln_error_set(err, "KILN_STATE_KEY_FILE is empty");
		kiln_error_hint(err, "set it to the path of a file holding the base64 key, or "
				     "unset it");
		return -1;
	}
	if (path) {
		what = xasprintf("KILN_STATE_KEY_FILE (%s)", path);
		ret = key_file_load(k, path, "KILN_STATE_KEY_FILE: ", false, what, err);
		free(what);
		return ret;
	}
	dflt = crypt_key_default_path();
	if (!dflt)
		return 0;
	what = xasprintf("state key %s", dflt);
	ret = key_file_load(k, dflt, "", true, what, err);
	free(what);
	free(dflt);
	return ret;
}

int crypt_key_load_file(struct crypt_key *k, const char *path, struct kiln_error *err)
{
	char *what = xasprintf("key file %s", path);
	int ret = key_file_load(k, path, "", false, what, err);

	free(what);
	return ret;
}

char *crypt_key_source(void)
{
	const char *path = getenv("KILN_STATE_KEY_FILE");
	char *dflt, *what;

	if (getenv("KILN_STATE_KEY"))
		return xstrdup("KILN_STATE_KEY");
	if (path)
		return xasprintf("KILN_STATE_KEY_FILE (%s)", path);
	dflt = crypt_key_default_path();
	what = xasprintf("the state key %s", dflt ? dflt : "~/.config/kiln/state.key");
	free(dflt);
	return what;
}

/* The id of the key in path: true when the file holds a valid key. */
static bool key_file_kid(const char *path, char kid[CRYPT_KID_LEN + 1])
{
	struct kiln_error ignored = {0};
	struct crypt_key k;
	bool ok = key_file_load(&k, path, "", true, path, &ignored) == 1;

	if (ok)
		memcpy(kid, k.kid, CRYPT_KID_LEN + 1);
	crypt_key_wipe(&k);
	return ok;
}

char *crypt_key_find(const char *kid, const char **what, const char **unset)
{
	const char *env = getenv("KILN_STATE_KEY"), *path = getenv("KILN_STATE_KEY_FILE");
	char found[CRYPT_KID_LEN + 1], *dflt;

	/* KILN_STATE_KEY_FILE's file is passed over only when KILN_STATE_KEY is set. */
	if (env && path && *path && key_file_kid(path, found) && strcmp(found, kid) == 0) {
		*what = "the file KILN_STATE_KEY_FILE names";
		*unset = "KILN_STATE_KEY";
		return xstrdup(path);
	}
	if (!env && !path)
		return NULL; /* the default file is the one in use */
	dflt = crypt_key_default_path();
	if (dflt && key_file_kid(dflt, found) && strcmp(found, kid) == 0) {
		*what = "the state key kiln init made";
		*unset = env && path ? "KILN_STATE_KEY and KILN_STATE_KEY_FILE"
			 : env	     ? "KILN_STATE_KEY"
				     : "KILN_STATE_KEY_FILE";
		return dflt;
	}
	free(dflt);
	return NULL;
}

/* mkdir -p with mode for each directory it makes; existing ones are left as they are. */
static int make_dirs(char *path, mode_t mode)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

int crypt_key_create_file(const char *path, char kid[CRYPT_KID_LEN + 1], struct kiln_error *err)
{
	struct crypt_key k;
	char *dir = xstrdup(path), *b64 = NULL, *line = NULL;
	size_t len;
	int fd = -1, ret = -1;

	if (make_dirs(dir, 0700) < 0) {
		kiln_error_set(err, "cannot make the directory of the state key %s: %s", path,
			       strerror(errno));
		kiln_error_hint(err, "make it yourself, or set KILN_STATE_KEY_FILE to a key "
				     "elsewhere");
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		ret = 0;
		goto out;
	}
	if (fd < 0 || fchmod(fd, 0600) < 0) {
		kiln_error_set(err, "cannot create the state key %s: %s", path, strerror(errno));
		kiln_error_hint(err, "check that the directory is yours and writable, or set "
				     "KILN_STATE_KEY_FILE to a key elsewhere");
		goto out;
	}
	if (RAND_bytes(k.key, CRYPT_KEY_LEN) != 1 || key_id(k.kid, k.key) < 0) {
		kiln_error_set(err, "cannot make a state key: %s", openssl_reason());
		goto unlink;
	}
	b64 = crypt_base64_encode(k.key, CRYPT_KEY_LEN);
	line = xasprintf("%s\n", b64);
	len = strlen(line);
	if (write(fd, line, len) != (ssize_t)len || fsync(fd) < 0) {
		kiln_error_set(err, "cannot write the state key %s: %s", path, strerror(errno));
		kiln_error_hint(err, "free some space, or set KILN_STATE_KEY_FILE to a key "
				     "elsewhere");
		goto unlink;
	}
	memcpy(kid, k.kid, CRYPT_KID_LEN + 1);
	ret = 1;
	goto out;
unlink:
	unlink(path);
out:
	if (fd >= 0)
		close(fd);
	if (b64) {
		OPENSSL_cleanse(b64, strlen(b64));
		free(b64);
	}
	if (line) {
		OPENSSL_cleanse(line, strlen(line));
		free(line);
	}
	crypt_key_wipe(&k);
	free(dir);
	return ret;
}

void crypt_key_wipe(struct crypt_key *k)
{
	if (k)
		OPENSSL_cleanse(k, sizeof(*k));
}

/* ---- envelopes ---- */

bool crypt_is_sealed(const json_t *v)
{
	return json_is_object(v) && json_object_get(v, "kiln_sealed") != NULL;
}

static bool base64_text(const char *s, size_t min_len)
{
	size_t n = s ? strlen(s) : 0;

	return n >= min_len && n % 4 == 0 &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == n;
}

bool crypt_envelope_wellformed(const json_t *v)
{
	const char *alg = json_string_value(json_object_get(v, "kiln_sealed"));
	const char *kid = json_string_value(json_object_get(v, "kid"));
	const char *nonce = json_string_value(json_object_get(v, "nonce"));
	const char *ct = json_string_value(json_object_get(v, "ciphertext"));

	/* 12-byte nonce: 16 base64 characters; the 16-byte tag alone: 24. */
	return json_is_object(v) && json_object_size(v) == 4 && alg &&
	       strcmp(alg, "AES-256-GCM") == 0 && kid && strlen(kid) == CRYPT_KID_LEN &&
	       strspn(kid, "0123456789abcdef") == CRYPT_KID_LEN && nonce && strlen(nonce) == 16 &&
	       base64_text(nonce, 16) && base64_text(ct, 24);
}

/*
 * The plaintext of a value. json_dumpb into a buffer of the exact size keeps
 * the only copy in memory we own, so it can be wiped.
 */
static unsigned char *plaintext_encode(const json_t *value, size_t *len)
{
	const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS;
	size_t n = json_dumpb(value, NULL, 0, flags);
	unsigned char *buf;

	if (n == 0)
		return NULL;
	buf = xmalloc(n);
	if (json_dumpb(value, (char *)buf, n, flags) != n) {
		OPENSSL_cleanse(buf, n);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

json_t *crypt_seal(const struct crypt_key *k, const json_t *value, const char *aad,
		   struct kiln_error *err)
{
	EVP_CIPHER_CTX *ctx = NULL;
	unsigned char nonce[NONCE_LEN];
	unsigned char *pt = NULL, *ct = NULL;
	size_t pt_len = 0, aad_len;
	char *nonce_b64 = NULL, *ct_b64 = NULL;
	json_t *env = NULL;
	int n, fin;

	if (!aad)
		aad = "";
	aad_len = strlen(aad);
	pt = plaintext_encode(value, &pt_len);
	if (!pt) {
		kiln_error_set(err, "cannot seal: the value cannot be encoded as JSON");
		goto out;
	}
	if (pt_len > INT_MAX - TAG_LEN || aad_len > INT_MAX) {
		kiln_error_set(err, "cannot seal: the value is too large (%zu bytes)", pt_len);
		goto out;
	}
	if (RAND_bytes(nonce, sizeof(nonce)) != 1) {
		kiln_error_set(err, "cannot seal: no random nonce: %s", openssl_reason());
		goto out;
	}
	ct = xmalloc(pt_len + TAG_LEN);
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k->key, nonce) != 1 ||
	    EVP_EncryptUpdate(ctx, NULL, &n, (const unsigned char *)aad, (int)aad_len) != 1 ||
	    EVP_EncryptUpdate(ctx, ct, &n, pt, (int)pt_len) != 1 ||
	    EVP_EncryptFinal_ex(ctx, ct + n, &fin) != 1 || (size_t)n + (size_t)fin != pt_len ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, ct + pt_len) != 1) {
		kiln_error_set(err, "cannot seal: %s", openssl_reason());
		goto out;
	}
	nonce_b64 = b64_encode(nonce, sizeof(nonce));
	ct_b64 = b64_encode(ct, pt_len + TAG_LEN);
	env = json_object();
	json_object_set_new(env, "kiln_sealed", json_string(SEAL_ALG));
	json_object_set_new(env, "kid", json_string(k->kid));
	json_object_set_new(env, "nonce", json_string(nonce_b64));
	json_object_set_new(env, "ciphertext", json_string(ct_b64));
out:
	EVP_CIPHER_CTX_free(ctx);
	if (pt) {
		OPENSSL_cleanse(pt, pt_len);
		free(pt);
	}
	free(ct);
	free(nonce_b64);
	free(ct_b64);
	return env;
}

/* The base64 string member `name` of an envelope, decoded. */
static int envelope_field(unsigned char **out, size_t *len, const json_t *env, const char *name,
			  struct kiln_error *err)
{
	const json_t *v = json_object_get(env, name);
	const char *s = json_string_value(v);

	if (!s) {
		kiln_error_set(err, "sealed value is malformed: %s '%s'",
			       v ? "wrong type for" : "missing key", name);
		return -1;
	}
	if (b64_decode(out, len, s, json_string_length(v)) < 0) {
		kiln_error_set(err, "sealed value is malformed: '%s' is not valid base64", name);
		return -1;
	}
	return 0;
}

json_t *crypt_open(const struct crypt_key *k, const json_t *envelope, const char *aad,
		   struct kiln_error *err)
{
	EVP_CIPHER_CTX *ctx = NULL;
	unsigned char *nonce = NULL, *ct = NULL, *pt = NULL;
	size_t nonce_len = 0, ct_len = 0, pt_len = 0, aad_len;
	const char *alg, *kid;
	json_t *value = NULL;
	json_error_t jerr;
	int n, fin;

	if (!aad)
		aad = "";
	aad_len = strlen(aad);
	if (!json_is_object(envelope)) {
		kiln_error_set(err, "sealed value is malformed: not an object");
		goto out;
	}
	alg = json_string_value(json_object_get(envelope, "kiln_sealed"));
	if (!alg) {
		kiln_error_set(err, "sealed value is malformed: 'kiln_sealed' is not a string");
		goto out;
	}
	if (strcmp(alg, SEAL_ALG) != 0) {
		kiln_error_set(err, "sealed with '%s', which this kiln cannot open (it knows %s)",
			       alg, SEAL_ALG);
		kiln_error_hint(err, "upgrade kiln");
		goto out;
	}
	kid = json_string_value(json_object_get(envelope, "kid"));
	if (!kid) {
		kiln_error_set(err, "sealed value is malformed: 'kid' is missing or not a string");
		goto out;
	}
	if (strcmp(kid, k->kid) != 0) {
		kiln_error_set(err, "sealed with key %s, but KILN_STATE_KEY is key %s", kid,
			       k->kid);
		kiln_error_hint(err,
				"set KILN_STATE_KEY (or KILN_STATE_KEY_FILE) to the key "
				"whose id is %s",
				kid);
		goto out;
	}
	if (envelope_field(&nonce, &nonce_len, envelope, "nonce", err) < 0 ||
	    envelope_field(&ct, &ct_len, envelope, "ciphertext", err) < 0)
		goto out;
	if (nonce_len != NONCE_LEN) {
		kiln_error_set(err, "sealed value is malformed: nonce is %zu bytes instead of %d",
			       nonce_len, NONCE_LEN);
		goto out;
	}
	if (ct_len < TAG_LEN || ct_len > INT_MAX || aad_len > INT_MAX) {
		kiln_error_set(err, "sealed value is malformed: ciphertext is %zu bytes", ct_len);
		goto out;
	}
	pt_len = ct_len - TAG_LEN;
	pt = xmalloc(pt_len + 1);
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx || EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, k->key, nonce) != 1 ||
	    EVP_DecryptUpdate(ctx, NULL, &n, (const unsigned char *)aad, (int)aad_len) != 1 ||
	    EVP_DecryptUpdate(ctx, pt, &n, ct, (int)pt_len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, ct + pt_len) != 1) {
		kiln_error_set(err, "cannot open sealed value: %s", openssl_reason());
		goto out;
	}
	if (EVP_DecryptFinal_ex(ctx, pt + n, &fin) != 1) {
		ERR_clear_error();
		kiln_error_set(err, "authentication failed: the value was changed or the key is "
				    "wrong");
		goto out;
	}
	/* jansson's error text quotes the input: it must not reach a message. */
	value = json_loadb((const char *)pt, pt_len, JSON_DECODE_ANY, &jerr);
	if (!value)
		kiln_error_set(err, "sealed value opened but does not hold JSON");
out:
	EVP_CIPHER_CTX_free(ctx);
	if (pt) {
		OPENSSL_cleanse(pt, pt_len + 1);
		free(pt);
	}
	OPENSSL_cleanse(&jerr, sizeof(jerr));
	free(nonce);
	free(ct);
	return value;
}
