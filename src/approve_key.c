/*
 * approve_key.c - the keys of approvals (see approve.h): a signing key read
 * from a PEM file only its owner can read, trusted public keys, a
 * directory of them, and new keys.
 *
 * A private key is read into a buffer that is wiped before it is freed, and
 * lives otherwise only in its EVP_PKEY, which OpenSSL wipes when it is
 * freed; no message ever quotes key material.
 */
#include "approve.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "crypt.h"

/* A PEM Ed25519 key is about 120 bytes; this is the wrong file well before the limit. */
#define KEY_FILE_LIMIT (64 * 1024)
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
	int fd, rc = -1;

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
	rc = crypt_secret_read(fd, KEY_FILE_LIMIT, out, out_len);
	if (rc == -1)
		kiln_error_set(err, "cannot read %s %s: %s", what, path, strerror(errno));
	else if (rc == -2)
		kiln_error_set(err, "%s %s is larger than %d bytes; a PEM key is a few lines", what,
			       path, KEY_FILE_LIMIT);
out:
	close(fd);
	return rc < 0 ? -1 : 0;
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
	/* A key others can read is not proof of anyone's approval. */
	if (crypt_key_mode_check("signing key", path, mode, "signs", err) < 0)
		goto out;
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

struct approve_key *approve_key_from_der(const unsigned char *der, size_t len)
{
	const unsigned char *p = der;
	EVP_PKEY *pkey = d2i_PUBKEY(NULL, &p, (long)len);

	ERR_clear_error();
	if (!pkey)
		return NULL;
	if (p != der + len || EVP_PKEY_get_id(pkey) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	return key_new(pkey, "(carried by the approval)");
}
