/*
 * approve.c - see approve.h.
 *
 * Ed25519 through OpenSSL's EVP interface: one-shot EVP_DigestSign and
 * EVP_DigestVerify with no message digest (Ed25519 hashes the message
 * itself). A private key is read into a buffer that is wiped before it is
 * freed, and lives otherwise only in its EVP_PKEY, which OpenSSL wipes when
 * it is freed; no message ever quotes key material.
 */
#include "approve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "crypt.h"
#include "plan.h"

/* A PEM Ed25519 key is about 120 bytes; this is the wrong file well before the limit. */
#define KEY_FILE_LIMIT (64 * 1024)
#define SIGNATURE_LEN 64
#define MESSAGE_CONTEXT "kiln-approval-v1\n"
/* The longest header: context, signer, newline, time (20), newline. */
#define HEADER_MAX (sizeof(MESSAGE_CONTEXT) - 1 + APPROVE_SIGNER_MAX + 1 + 20 + 1)
#define GENKEY_HINT                                                                                \
	"make an Ed25519 key with: kiln approve --generate-key FILE (or openssl genpkey "          \
	"-algorithm ed25519 -out FILE)"

static const char *openssl_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	ERR_clear_error();
	return r ? r : "unknown OpenSSL error";
}

static void sha256_hex(char out[65], const unsigned char *p, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0, i;

	EVP_Digest(p, len, md, &md_len, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* ---- keys ---- */

/* A key around pkey (taken over): its id and public key text from the DER SPKI. */
static struct approve_key *key_new(EVP_PKEY *pkey, const char *name)
{
	struct approve_key *k;
	unsigned char *der = NULL;
	char hex[65];
	int len = i2d_PUBKEY(pkey, &der);

	if (len <= 0) {
		ERR_clear_error();
		EVP_PKEY_free(pkey);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->pkey = pkey;
	sha256_hex(hex, der, (size_t)len);
	snprintf(k->id, sizeof(k->id), "sha256:%s", hex);
	k->public_b64 = crypt_base64_encode(der, (size_t)len);
	k->name = xstrdup(name);
	OPENSSL_free(der);
	return k;
}

void approve_key_free(struct approve_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k->public_b64);
	free(k->name);
	free(k);
}

/*
 * Read a key file whole into a buffer the caller wipes and frees; *mode is
 * its permission bits. what is "signing key" or "trusted key".
 */
static int key_file_read(char **out, size_t *out_len, unsigned *mode, const char *path,
			 const char *what, bool private_key, struct kiln_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kiln_error_set(err, "cannot read %s %s: %s", what, path, strerror(errno));
		if (private_key && errno == ENOENT)
			kiln_error_hint(err, GENKEY_HINT);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		kiln_error_set(err, "%s %s is not a regular file", what, path);
		kiln_error_hint(err, "give the PEM file that holds the key");
		goto out;
	}
	*mode = (unsigned)(st.st_mode & 07777);
	if (st.st_size > KEY_FILE_LIMIT) {
		kiln_error_set(err, "%s %s is larger than %d bytes; a PEM key is a few lines", what,
			       path, KEY_FILE_LIMIT);
		goto out;
	}
	cap = (size_t)st.st_size + 2;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			kiln_error_set(err, "cannot read %s %s: %s", what, path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap - 1) {
			kiln_error_set(err, "%s %s changed while kiln read it", what, path);
			goto out;
		}
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	buf = NULL;
	ret = 0;
out:
	if (buf) {
		OPENSSL_cleanse(buf, cap);
		free(buf);
	}
	close(fd);
	return ret;
}

/* The passphrase callback: never prompt; note that the key is encrypted. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	*(bool *)u = true;
	return -1;
}

static int require_ed25519(EVP_PKEY *pkey, const char *what, const char *path,
			   struct kiln_error *err)
{
	const char *type;

	if (EVP_PKEY_get_id(pkey) == EVP_PKEY_ED25519)
		return 0;
	type = EVP_PKEY_get0_type_name(pkey);
	kiln_error_set(err,
		       "%s %s holds a key of type %s, not Ed25519; kiln approvals are Ed25519 "
		       "signatures",
		       what, path, type ? type : "unknown");
	kiln_error_hint(err, GENKEY_HINT);
	return -1;
}

int approve_key_load_private(struct approve_key **out, const char *path, struct kiln_error *err)
{
	EVP_PKEY *pkey = NULL;
	BIO *bio = NULL;
	char *buf = NULL;
	size_t len = 0;
	bool asked = false;
	unsigned mode = 0;
	int ret = -1;

	*out = NULL;
	if (key_file_read(&buf, &len, &mode, path, "signing key", true, err) < 0)
		return -1;
	if (strstr(buf, "-----BEGIN PUBLIC KEY-----")) {
		kiln_error_set(err, "signing key %s is a public key; --key takes the private key",
			       path);
		kiln_error_hint(err, "the .pub file goes in the trusted keys directory of whoever "
				     "applies; sign with the key it was made from");
		goto out;
	}
	/* As OpenSSH does: a key others can read is not proof of anyone's approval. */
	if (mode & 077) {
		kiln_error_set(err,
			       "signing key %s may be read by group or others (mode %04o); kiln "
			       "signs only with a key that is private to its owner",
			       path, mode);
		kiln_error_hint(err, "chmod 600 %s", path);
		goto out;
	}
	bio = BIO_new_mem_buf(buf, (int)len);
	if (bio)
		pkey = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, &asked);
	ERR_clear_error();
	if (!pkey) {
		if (asked) {
			kiln_error_set(err,
				       "signing key %s is encrypted; kiln reads only an "
				       "unencrypted key",
				       path);
			kiln_error_hint(err,
					"keep an unencrypted copy only you can read: openssl "
					"pkey -in %s -out KEY && chmod 600 KEY",
					path);
		} else {
			kiln_error_set(err, "signing key %s is not a PEM private key", path);
			kiln_error_hint(err, GENKEY_HINT);
		}
		goto out;
	}
	if (require_ed25519(pkey, "signing key", path, err) < 0)
		goto out;
	*out = key_new(pkey, path);
	pkey = NULL;
	if (!*out) {
		kiln_error_set(err, "signing key %s: cannot encode its public key: %s", path,
			       openssl_reason());
		goto out;
	}
	ret = 0;
out:
	EVP_PKEY_free(pkey);
	BIO_free(bio);
	OPENSSL_cleanse(buf, len);
	free(buf);
	return ret;
}

int approve_key_load_public(struct approve_key **out, const char *path, struct kiln_error *err)
{
	const char *base = strrchr(path, '/');
	EVP_PKEY *pkey = NULL;
	BIO *bio = NULL;
	char *buf = NULL;
	size_t len = 0;
	unsigned mode = 0;
	int ret = -1;

	*out = NULL;
	if (key_file_read(&buf, &len, &mode, path, "trusted key", false, err) < 0)
		return -1;
	bio = BIO_new_mem_buf(buf, (int)len);
	if (bio)
		pkey = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	ERR_clear_error();
	if (!pkey) {
		if (strstr(buf, "PRIVATE KEY-----"))
			kiln_error_set(err,
				       "trusted key %s is a private key; a trusted key is a "
				       "public key",
				       path);
		else
			kiln_error_set(err, "trusted key %s is not a PEM public key", path);
		kiln_error_hint(err,
				"write the public key of a signing key with: openssl pkey "
				"-in KEY -pubout -out %s",
				path);
		goto out;
	}
	if (require_ed25519(pkey, "trusted key", path, err) < 0)
		goto out;
	*out = key_new(pkey, base ? base + 1 : path);
	pkey = NULL;
	if (!*out) {
		kiln_error_set(err, "trusted key %s: cannot encode it: %s", path, openssl_reason());
		goto out;
	}
	ret = 0;
out:
	EVP_PKEY_free(pkey);
	BIO_free(bio);
	OPENSSL_cleanse(buf, len);
	free(buf);
	return ret;
}

static int write_file_new(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	size_t off = 0;

	if (fd < 0)
		return -1;
	if (fchmod(fd, mode) < 0)
		goto fail;
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fsync(fd) < 0)
		goto fail;
	return close(fd);
fail:
	close(fd);
	return -1;
}

int approve_key_generate(struct approve_key **out, const char *path, struct kiln_error *err)
{
	char *pub_path = xasprintf("%s.pub", path);
	EVP_PKEY *pkey = NULL;
	BIO *priv = NULL, *pub = NULL;
	char *data;
	long len;
	int ret = -1;
	bool wrote = false;

	*out = NULL;
	if (access(path, F_OK) == 0 || access(pub_path, F_OK) == 0) {
		kiln_error_set(err, "%s already exists; kiln does not overwrite a key",
			       access(path, F_OK) == 0 ? path : pub_path);
		kiln_error_hint(err, "choose another file name, or remove the old key first");
		goto out;
	}
	pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	/* Secure memory: the PEM text of the private key is wiped when the BIO is freed. */
	priv = BIO_new(BIO_s_secmem());
	pub = BIO_new(BIO_s_mem());
	if (!pkey || !priv || !pub ||
	    PEM_write_bio_PrivateKey(priv, pkey, NULL, NULL, 0, NULL, NULL) != 1 ||
	    PEM_write_bio_PUBKEY(pub, pkey) != 1) {
		kiln_error_set(err, "cannot make an Ed25519 key: %s", openssl_reason());
		goto out;
	}
	len = BIO_get_mem_data(priv, &data);
	if (write_file_new(path, data, (size_t)len, 0600) < 0) {
		kiln_error_set(err, "cannot write %s: %s", path, strerror(errno));
		kiln_error_hint(err,
				"check that the directory exists and that you may write to it");
		goto out;
	}
	wrote = true;
	len = BIO_get_mem_data(pub, &data);
	if (write_file_new(pub_path, data, (size_t)len, 0644) < 0) {
		kiln_error_set(err, "cannot write %s: %s", pub_path, strerror(errno));
		kiln_error_hint(err,
				"check that the directory exists and that you may write to it");
		goto out;
	}
	*out = key_new(pkey, path);
	pkey = NULL;
	if (!*out) {
		kiln_error_set(err, "cannot encode the new key: %s", openssl_reason());
		unlink(pub_path);
		goto out;
	}
	ret = 0;
out:
	if (ret < 0 && wrote)
		unlink(path);
	EVP_PKEY_free(pkey);
	BIO_free(priv);
	BIO_free(pub);
	free(pub_path);
	return ret;
}

/* ---- the trusted keys ---- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

const struct approve_key *approve_keyring_find(const struct approve_keyring *r, const char *id)
{
	size_t i;

	for (i = 0; r && id && i < r->n; i++)
		if (strcmp(r->keys[i]->id, id) == 0)
			return r->keys[i];
	return NULL;
}

int approve_keyring_load(struct approve_keyring *out, const char *dir, struct kiln_error *err)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->dir = xstrdup(dir);
	d = opendir(dir);
	if (!d) {
		kiln_error_set(err, "cannot read the trusted keys directory %s: %s", dir,
			       strerror(errno));
		kiln_error_hint(err, "give a directory that holds a PEM public key per *.pub file");
		return -1;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && str_ends_with(de->d_name, ".pub"))
			*ARRAY_PUSH(names, n, cap) = xstrdup(de->d_name);
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		struct approve_key *k;
		int rc = approve_key_load_public(&k, path, err);

		free(path);
		if (rc < 0)
			goto out;
		if (approve_keyring_find(out, k->id)) {
			approve_key_free(k); /* the same key in two files counts once */
			continue;
		}
		*ARRAY_PUSH(out->keys, out->n, out->cap) = k;
	}
	if (out->n == 0) {
		kiln_error_set(err, "the trusted keys directory %s holds no key (no *.pub file)",
			       dir);
		kiln_error_hint(err,
				"put each approver's public key there as NAME.pub: openssl "
				"pkey -in KEY -pubout -out %s/NAME.pub",
				dir);
		goto out;
	}
	ret = 0;
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

void approve_keyring_release(struct approve_keyring *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		approve_key_free(r->keys[i]);
	free(r->keys);
	free(r->dir);
	memset(r, 0, sizeof(*r));
}

/* ---- what an approval holds ---- */

void approve_time_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Exactly "YYYY-MM-DDTHH:MM:SSZ", and a real moment (no February 30th). */
static bool time_ok(const char *s)
{
	static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
	struct tm tm = {0};
	char back[32];
	time_t t;
	size_t i;

	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (i = 0; form[i]; i++)
		if (form[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != form[i])
			return false;
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec) != 6 ||
	    tm.tm_year < 1970)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	if (t == (time_t)-1 || !gmtime_r(&t, &tm))
		return false;
	strftime(back, sizeof(back), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return strcmp(back, s) == 0;
}

bool approve_signer_ok(const char *signer)
{
	size_t i, len = strlen(signer);

	if (len == 0 || len > APPROVE_SIGNER_MAX ||
	    utf8_invalid_offset((const unsigned char *)signer, len) != len)
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)signer[i] < 0x20 || signer[i] == 0x7f)
			return false;
	return true;
}

static bool key_id_ok(const char *id)
{
	return strlen(id) == APPROVE_KEY_ID_LEN && str_starts_with(id, "sha256:") &&
	       strspn(id + 7, "0123456789abcdef") == 64;
}

/*
 * The signed messages of one plan: the canonical plan sits at the end of
 * one buffer, and each message's header is written just before it, so a
 * plan of many MiB is encoded and copied once for any number of approvals.
 */
struct message {
	char *buf;
	size_t plan_len;
};

static int message_init(struct message *m, const json_t *plan, struct kiln_error *err)
{
	char *canonical = plan_canonical(plan);

	if (!canonical) {
		kiln_error_set(err, "the plan cannot be encoded");
		return -1;
	}
	m->plan_len = strlen(canonical);
	m->buf = xmalloc(HEADER_MAX + m->plan_len);
	memcpy(m->buf + HEADER_MAX, canonical, m->plan_len);
	free(canonical);
	return 0;
}

/* The message for signer and time (both checked); *len its length. */
static const unsigned char *message_for(struct message *m, const char *signer, const char *time,
					size_t *len)
{
	size_t clen = strlen(MESSAGE_CONTEXT), slen = strlen(signer), tlen = strlen(time);
	size_t hlen = clen + slen + 1 + tlen + 1;
	char *p = m->buf + HEADER_MAX - hlen;

	memcpy(p, MESSAGE_CONTEXT, clen);
	memcpy(p + clen, signer, slen);
	p[clen + slen] = '\n';
	memcpy(p + clen + slen + 1, time, tlen);
	p[hlen - 1] = '\n';
	*len = hlen + m->plan_len;
	return (const unsigned char *)p;
}

json_t *approve_sign(const struct approve_key *key, const json_t *plan, const char *signer,
		     const char *time, struct kiln_error *err)
{
	struct message m = {0};
	unsigned char sig[SIGNATURE_LEN];
	size_t sig_len = sizeof(sig), len;
	const unsigned char *msg;
	EVP_MD_CTX *ctx = NULL;
	json_t *approval = NULL;
	char *b64;

	if (!approve_signer_ok(signer)) {
		kiln_error_set(err,
			       "the signer name must be 1 to %d bytes of UTF-8 without control "
			       "characters",
			       APPROVE_SIGNER_MAX);
		kiln_error_hint(err, "give it with --signer NAME");
		return NULL;
	}
	if (!time_ok(time)) {
		kiln_error_set(err, "'%s' is not a UTC time such as 2026-11-30T05:40:00Z", time);
		return NULL;
	}
	if (message_init(&m, plan, err) < 0)
		return NULL;
	msg = message_for(&m, signer, time, &len);
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, key->pkey) != 1 ||
	    EVP_DigestSign(ctx, sig, &sig_len, msg, len) != 1 || sig_len != SIGNATURE_LEN) {
		kiln_error_set(err, "cannot sign with %s: %s", key->name, openssl_reason());
		goto out;
	}
	b64 = crypt_base64_encode(sig, sig_len);
	approval = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "signer", signer, "time", time,
			     "key_id", key->id, "algorithm", APPROVE_ALGORITHM, "public_key",
			     key->public_b64, "signature", b64);
	free(b64);
out:
	EVP_MD_CTX_free(ctx);
	free(m.buf);
	return approval;
}

json_t *approve_replace(const json_t *approvals, const json_t *approval)
{
	const char *id = json_string_value(json_object_get(approval, "key_id"));
	json_t *out = json_array(), *a;
	size_t i;

	json_array_foreach(approvals, i, a)
	{
		const char *other = json_string_value(json_object_get(a, "key_id"));

		if (!other || !id || strcmp(other, id) != 0)
			json_array_append(out, a);
	}
	json_array_append(out, (json_t *)approval);
	return out;
}

/* ---- verifying ---- */

const char *approval_status_name(enum approval_status s)
{
	switch (s) {
	case APPROVAL_VALID:
		return "valid";
	case APPROVAL_MALFORMED:
		return "malformed";
	case APPROVAL_BAD_SIGNATURE:
		return "bad signature";
	case APPROVAL_UNKNOWN_KEY:
		return "unknown key";
	case APPROVAL_DUPLICATE:
		return "duplicate";
	}
	return "unknown";
}

char *approval_check_describe(const struct approval_check *c, const char *trusted_dir)
{
	switch (c->status) {
	case APPROVAL_VALID:
		if (c->trusted_by)
			return xasprintf("valid, by trusted key %s", c->trusted_by);
		return xstrdup("valid signature; trust not checked");
	case APPROVAL_MALFORMED:
		return xasprintf("malformed: %s", c->why);
	case APPROVAL_BAD_SIGNATURE:
		return xstrdup("bad signature: it does not verify over this plan with its signer "
			       "and time, so the plan or the approval changed after signing");
	case APPROVAL_UNKNOWN_KEY:
		return xasprintf("unknown key: no *.pub file in %s holds it",
				 trusted_dir ? trusted_dir : "the trusted keys directory");
	case APPROVAL_DUPLICATE:
		return xasprintf("duplicate: approval %zu already counts its key",
				 c->duplicate_of + 1);
	}
	return xstrdup("unknown");
}

static const char *member(const json_t *a, const char *name)
{
	const char *s = json_string_value(json_object_get(a, name));

	return s ? s : "";
}

/* The public key an approval carries, checked against its key_id; NULL with *why. */
static EVP_PKEY *carried_key(const char *b64, const char *key_id, const char **why)
{
	unsigned char *der = NULL;
	const unsigned char *p;
	size_t len = 0;
	EVP_PKEY *pkey = NULL;
	char hex[65];

	*why = "its public_key is not the base64 of an Ed25519 public key";
	if (crypt_base64_decode(&der, &len, b64, strlen(b64)) < 0)
		return NULL;
	p = der;
	pkey = d2i_PUBKEY(NULL, &p, (long)len);
	if (pkey && (p != der + len || EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519)) {
		EVP_PKEY_free(pkey);
		pkey = NULL;
	}
	if (pkey) {
		sha256_hex(hex, der, len);
		if (strcmp(hex, key_id + 7) != 0) {
			*why = "its key_id is not the SHA-256 of its public_key";
			EVP_PKEY_free(pkey);
			pkey = NULL;
		}
	}
	ERR_clear_error();
	free(der);
	return pkey;
}

/*
 * Check the members of one approval, filling c's borrowed fields with those
 * that are well formed. *pkey is the public key it carries, *sig its
 * signature. -1 with c->why naming the first fault.
 */
static int approval_parse(struct approval_check *c, const json_t *a, EVP_PKEY **pkey,
			  unsigned char sig[SIGNATURE_LEN])
{
	const char *signer = member(a, "signer"), *time = member(a, "time");
	const char *key_id = member(a, "key_id"), *alg = member(a, "algorithm");
	const char *pub = member(a, "public_key"), *sigtext = member(a, "signature");
	unsigned char *raw = NULL;
	const char *why = NULL;
	size_t raw_len = 0;
	int ret = -1;

	*pkey = NULL;
	if (approve_signer_ok(signer))
		c->signer = signer;
	if (time_ok(time))
		c->time = time;
	if (key_id_ok(key_id))
		c->key_id = key_id;
	if (!c->signer) {
		snprintf(c->why, sizeof(c->why),
			 "its signer is not 1 to %d bytes of UTF-8 without control characters",
			 APPROVE_SIGNER_MAX);
	} else if (!c->time) {
		snprintf(c->why, sizeof(c->why),
			 "its time is not a UTC time such as 2026-11-30T05:40:00Z");
	} else if (!c->key_id) {
		snprintf(c->why, sizeof(c->why), "its key_id is not \"sha256:\" and 64 hex digits");
	} else if (strcmp(alg, APPROVE_ALGORITHM) != 0) {
		snprintf(c->why, sizeof(c->why), "its algorithm is not \"%s\"", APPROVE_ALGORITHM);
	} else if (!(*pkey = carried_key(pub, key_id, &why))) {
		snprintf(c->why, sizeof(c->why), "%s", why);
	} else if (crypt_base64_decode(&raw, &raw_len, sigtext, strlen(sigtext)) < 0 ||
		   raw_len != SIGNATURE_LEN) {
		snprintf(c->why, sizeof(c->why),
			 "its signature is not the base64 of a %d-byte Ed25519 signature",
			 SIGNATURE_LEN);
	} else {
		memcpy(sig, raw, SIGNATURE_LEN);
		ret = 0;
	}
	ERR_clear_error();
	if (ret < 0) {
		EVP_PKEY_free(*pkey);
		*pkey = NULL;
	}
	free(raw);
	return ret;
}

static bool signature_verifies(EVP_PKEY *pkey, const unsigned char sig[SIGNATURE_LEN],
			       const unsigned char *msg, size_t len)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
		  EVP_DigestVerify(ctx, sig, SIGNATURE_LEN, msg, len) == 1;

	ERR_clear_error();
	EVP_MD_CTX_free(ctx);
	return ok;
}

int approve_verify(struct approval_report *out, const json_t *plan, const json_t *approvals,
		   const struct approve_keyring *trusted, struct kiln_error *err)
{
	struct message m = {0};
	size_t i, j, n = json_array_size(approvals);

	memset(out, 0, sizeof(*out));
	out->trust_checked = trusted != NULL;
	if (message_init(&m, plan, err) < 0)
		return -1;
	out->v = xcalloc(n ? n : 1, sizeof(*out->v));
	out->n = n;
	for (i = 0; i < n; i++) {
		struct approval_check *c = &out->v[i];
		const json_t *a = json_array_get(approvals, i);
		unsigned char sig[SIGNATURE_LEN];
		EVP_PKEY *carried = NULL, *pkey;
		const struct approve_key *k;
		const unsigned char *msg;
		size_t len;

		if (approval_parse(c, a, &carried, sig) < 0) {
			c->status = APPROVAL_MALFORMED;
			continue;
		}
		/* The trusted key itself when there is one, not the copy the file carries. */
		k = trusted ? approve_keyring_find(trusted, c->key_id) : NULL;
		pkey = k ? k->pkey : carried;
		msg = message_for(&m, c->signer, c->time, &len);
		if (!signature_verifies(pkey, sig, msg, len))
			c->status = APPROVAL_BAD_SIGNATURE;
		else if (trusted && !k)
			c->status = APPROVAL_UNKNOWN_KEY;
		else
			c->status = APPROVAL_VALID;
		c->trusted_by = k ? k->name : NULL;
		EVP_PKEY_free(carried);
		if (c->status != APPROVAL_VALID)
			continue;
		for (j = 0; j < i; j++) {
			if (out->v[j].status == APPROVAL_VALID &&
			    strcmp(out->v[j].key_id, c->key_id) == 0) {
				c->status = APPROVAL_DUPLICATE;
				c->duplicate_of = j;
				break;
			}
		}
		if (c->status == APPROVAL_VALID)
			out->valid++;
	}
	free(m.buf);
	return 0;
}

void approval_report_release(struct approval_report *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
