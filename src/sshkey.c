/*
 * sshkey.c - OpenSSH public key lines: parse, check, fingerprint (sshkey.h).
 *
 * Pure: no files, no output. The blob's layout is RFC 4253 section 6.6
 * (string type, then the key's fields) and RFC 8709 for Ed25519; the
 * fingerprint is ssh-keygen's: SHA-256 of the blob, base64 without padding.
 */
#include "sshkey.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "util.h"

/* The key types OpenSSH 9 accepts in authorized_keys, and their sizes. */
static const struct {
	const char *name;
	int bits; /* 0: read from the key */
} known_types[] = {
    {"ssh-ed25519", 256},
    {"sk-ssh-ed25519@openssh.com", 256},
    {"ecdsa-sha2-nistp256", 256},
    {"ecdsa-sha2-nistp384", 384},
    {"ecdsa-sha2-nistp521", 521},
    {"sk-ecdsa-sha2-nistp256@openssh.com", 256},
    {"ssh-rsa", 0},
    {"ssh-dss", 0},
};

/* One length-prefixed string of a blob: its bytes and length, or false past the end. */
static bool blob_string(const unsigned char **p, const unsigned char *end, const unsigned char **s,
			size_t *len)
{
	uint32_t n;

	if (end - *p < 4)
		return false;
	n = (uint32_t)(*p)[0] << 24 | (uint32_t)(*p)[1] << 16 | (uint32_t)(*p)[2] << 8 |
	    (uint32_t)(*p)[3];
	*p += 4;
	if ((size_t)(end - *p) < n)
		return false;
	*s = *p;
	*len = n;
	*p += n;
	return true;
}

/* The size in bits of an mpint (leading zero bytes and bits not counted). */
static int mpint_bits(const unsigned char *s, size_t len)
{
	int bits;

	while (len && *s == 0) {
		s++;
		len--;
	}
	if (!len || len > 2048)
		return 0;
	bits = (int)(len - 1) * 8;
	for (unsigned c = *s; c; c >>= 1)
		bits++;
	return bits;
}

static unsigned char *b64_decode(const char *b64, size_t *len)
{
	size_t n = strlen(b64), pad = 0;
	unsigned char *out;
	int got;

	if (n == 0 || n % 4 != 0 || n > 16384)
		return NULL;
	out = xmalloc(n / 4 * 3 + 1);
	got = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
	if (got < 0) {
		free(out);
		return NULL;
	}
	if (b64[n - 1] == '=')
		pad++;
	if (b64[n - 2] == '=')
		pad++;
	*len = (size_t)got - pad;
	return out;
}

static char *fingerprint(const unsigned char *blob, size_t len)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	unsigned char enc[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
	int n;

	SHA256(blob, len, md);
	n = EVP_EncodeBlock(enc, md, sizeof(md));
	while (n > 0 && enc[n - 1] == '=')
		n--;
	return xasprintf("SHA256:%.*s", n, enc);
}

/* Check the blob against its type; the key's size into k->bits. */
static int check_blob(struct sshkey *k, const unsigned char *blob, size_t len, int type_bits,
		      struct kiln_error *err)
{
	const unsigned char *p = blob, *end = blob + len, *s, *e, *n;
	size_t slen, elen, nlen;

	if (!blob_string(&p, end, &s, &slen)) {
		kiln_error_set(err, "the %s key's data is too short to hold a key", k->type);
		return -1;
	}
	if (slen != strlen(k->type) || memcmp(s, k->type, slen) != 0) {
		kiln_error_set(err, "the key says it is %s, but its data holds a key of type %.*s",
			       k->type, (int)(slen > 64 ? 64 : slen), s);
		kiln_error_hint(err, "copy the whole line from the .pub file again");
		return -1;
	}
	if (strcmp(k->type, "ssh-rsa") == 0 || strcmp(k->type, "ssh-dss") == 0) {
		/* RSA: e, n. DSA: p, q, g, y: p's size is the key's. */
		if (!blob_string(&p, end, &e, &elen) || !blob_string(&p, end, &n, &nlen)) {
			kiln_error_set(err, "the %s key's data is cut short", k->type);
			kiln_error_hint(err, "copy the whole line from the .pub file again");
			return -1;
		}
		k->bits = mpint_bits(strcmp(k->type, "ssh-rsa") == 0 ? n : e,
				     strcmp(k->type, "ssh-rsa") == 0 ? nlen : elen);
		return 0;
	}
	if (strstr(k->type, "ed25519") && (!blob_string(&p, end, &e, &elen) || elen != 32)) {
		kiln_error_set(err, "the %s key's data does not hold a 32-byte key", k->type);
		kiln_error_hint(err, "copy the whole line from the .pub file again");
		return -1;
	}
	k->bits = type_bits;
	return 0;
}

int sshkey_parse(struct sshkey *out, const char *line, struct kiln_error *err)
{
	struct sshkey k = {0};
	const char *p = line, *t, *b;
	unsigned char *blob = NULL;
	size_t i, len = 0;
	int type_bits = -1;

	while (*p == ' ' || *p == '\t')
		p++;
	for (t = p; *p && *p != ' ' && *p != '\t'; p++)
		;
	k.type = xasprintf("%.*s", (int)(p - t), t);
	for (i = 0; i < ARRAY_SIZE(known_types); i++)
		if (strcmp(k.type, known_types[i].name) == 0)
			type_bits = known_types[i].bits;
	if (type_bits < 0) {
		kiln_error_set(err, "'%.40s' is not an OpenSSH public key type", k.type);
		kiln_error_hint(err, "give the line of a .pub file, like 'ssh-ed25519 AAAAC3Nza... "
				     "you@host' (ssh-keygen -t ed25519 makes one)");
		goto fail;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	for (b = p; *p && *p != ' ' && *p != '\t'; p++)
		;
	k.base64 = xasprintf("%.*s", (int)(p - b), b);
	if (!*k.base64) {
		kiln_error_set(err, "the %s key has no key data after its type", k.type);
		kiln_error_hint(err, "copy the whole line from the .pub file");
		goto fail;
	}
	if (!(blob = b64_decode(k.base64, &len))) {
		kiln_error_set(err, "the %s key's data is not valid base64", k.type);
		kiln_error_hint(err, "copy the whole line from the .pub file again");
		goto fail;
	}
	if (check_blob(&k, blob, len, type_bits, err) < 0)
		goto fail;
	k.fingerprint = fingerprint(blob, len);
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	while (len && isspace((unsigned char)p[len - 1]))
		len--;
	k.comment = xasprintf("%.*s", (int)len, p);
	free(blob);
	*out = k;
	return 0;
fail:
	free(blob);
	sshkey_release(&k);
	return -1;
}

void sshkey_release(struct sshkey *k)
{
	free(k->type);
	free(k->base64);
	free(k->comment);
	free(k->fingerprint);
	memset(k, 0, sizeof(*k));
}

char *sshkey_line(const struct sshkey *k)
{
	return k->comment && *k->comment ? xasprintf("%s %s %s", k->type, k->base64, k->comment)
					 : xasprintf("%s %s", k->type, k->base64);
}

bool sshkey_is_private(const char *head, size_t len)
{
	static const char pem[] = "-----BEGIN ";
	const char *nl = memchr(head, '\n', len);
	size_t line = nl ? (size_t)(nl - head) : len;

	if (line >= sizeof(pem) - 1 && memcmp(head, pem, sizeof(pem) - 1) == 0) {
		/* "-----BEGIN OPENSSH PRIVATE KEY-----", "RSA PRIVATE KEY", "ENCRYPTED PRIVATE
		 * KEY"... */
		for (size_t i = 0; i + 11 <= line; i++)
			if (memcmp(head + i, "PRIVATE KEY", 11) == 0)
				return true;
	}
	/* The binary form's magic, should the armour have been stripped. */
	return len >= 14 && memcmp(head, "openssh-key-v1", 14) == 0;
}

const char *sshkey_weakness(const struct sshkey *k)
{
	if (strcmp(k->type, "ssh-dss") == 0)
		return "DSA keys are limited to 1024 bits and OpenSSH 7.0 and later refuse them";
	if (strcmp(k->type, "ssh-rsa") == 0 && k->bits < 3072)
		return "RSA keys under 3072 bits fall short of NIST SP 800-57's 128-bit "
		       "security level";
	return NULL;
}
