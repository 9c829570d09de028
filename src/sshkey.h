/*
 * sshkey.h - OpenSSH public keys as an authorized_keys line holds them:
 * "TYPE BASE64 [COMMENT]". A key is checked the way sshd would read it:
 * a type OpenSSH knows, base64 that decodes, and a blob whose own type
 * string is the one written before it. The size of an RSA key is read from
 * its modulus, for the audit's weak-key rule.
 *
 * Private keys are recognised from their first line only (sshkey_is_private)
 * so that a caller can refuse one without holding its contents.
 */
#ifndef KILN_SSHKEY_H
#define KILN_SSHKEY_H

#include "base.h"

struct sshkey {
	char *type;	   /* "ssh-ed25519", "ssh-rsa", ... */
	char *base64;	   /* the blob as written */
	char *comment;	   /* "" when none */
	int bits;	   /* RSA and DSA: the modulus' size; others: the curve's */
	char *fingerprint; /* "SHA256:..." as ssh-keygen -l prints it */
};

/*
 * Parse one line. -1 with err naming what is wrong (the message has no
 * location: the caller adds it) and the fix.
 */
int sshkey_parse(struct sshkey *out, const char *line, struct kiln_error *err);
void sshkey_release(struct sshkey *k);
/* "TYPE BASE64 COMMENT" (no comment: "TYPE BASE64"). Caller frees. */
char *sshkey_line(const struct sshkey *k);
/*
 * Whether head (the first bytes of a file) starts a private key: PEM's
 * "-----BEGIN ... PRIVATE KEY-----" or OpenSSH's "openssh-key-v1" armour.
 */
bool sshkey_is_private(const char *head, size_t len);
/* A weak key (ssh-dss, ssh-rsa under 3072 bits): why, else NULL. Static text. */
const char *sshkey_weakness(const struct sshkey *k);

#endif
