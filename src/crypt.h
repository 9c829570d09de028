/*
 * crypt.h - the state key and sealed values (AES-256-GCM envelopes).
 *
 * Sensitive attributes never reach the state repository in plaintext: they are
 * replaced by an envelope that names the key (by id, never by value), the
 * nonce and the ciphertext. The additional authenticated data binds each
 * envelope to its place ("aws_db.main/password"), so a sealed value copied to
 * another attribute or resource fails to open instead of leaking there.
 *
 * This file owns the key and the envelope format; it knows nothing about the
 * shape of a state document (state.c does) or about git.
 */
#ifndef KILN_CRYPT_H
#define KILN_CRYPT_H

#include <stdbool.h>

#include <jansson.h>

#include "util.h"

#define CRYPT_KEY_LEN 32
#define CRYPT_KID_LEN 16

struct crypt_key {
	unsigned char key[CRYPT_KEY_LEN]; /* the secret; wipe with crypt_key_wipe */
	char kid[CRYPT_KID_LEN + 1];	  /* 16 lowercase hex chars + NUL; safe to show */
};

/*
 * Load the state key, looking in this order:
 *   1. KILN_STATE_KEY (base64 of exactly 32 bytes);
 *   2. KILN_STATE_KEY_FILE (a file holding that base64 text, surrounding
 *      whitespace trimmed);
 *   3. the key kiln init makes, crypt_key_default_path().
 * The first that is set wins; a variable set to the empty string counts as
 * set (and invalid), so a CI secret that did not arrive is reported rather
 * than silently ignored. A key file that group or others may read is
 * refused (crypt_key_mode_check).
 *
 * Returns 1 and fills k when a key is configured, 0 when neither variable is
 * set and the default file does not exist, -1 with err (naming the variable
 * or file and the problem) when one is set but invalid.
 */
int crypt_key_load(struct crypt_key *k, struct kiln_error *err);

/*
 * A key from the file at path (base64, surrounding whitespace trimmed,
 * private to its owner, as KILN_STATE_KEY_FILE's): 1, or -1 with err.
 */
int crypt_key_load_file(struct crypt_key *k, const char *path, struct kiln_error *err);

/*
 * Where the key crypt_key_load takes comes from, as a user would name it:
 * "KILN_STATE_KEY", "KILN_STATE_KEY_FILE (PATH)" or "the state key PATH".
 * A new string.
 */
char *crypt_key_source(void);

/*
 * Where else a key whose id is kid is configured, among those
 * crypt_key_load passes over: the file KILN_STATE_KEY_FILE names (when
 * KILN_STATE_KEY is set) and the file kiln init makes (when either is set).
 * The file's path (a new string) with *what naming it ("the state key kiln
 * init made") and *unset the variables to unset to use it, or NULL.
 */
char *crypt_key_find(const char *kid, const char **what, const char **unset);

/*
 * Read a secret (a key file) whole from fd into a new NUL-terminated buffer
 * the caller wipes and frees. Every grow wipes the old buffer, so no copy
 * of the secret stays in freed memory, and a pipe, which has no size to
 * allocate up front, works. 0; -1 with errno on a read error; -2 when it
 * is longer than limit. Nothing is left allocated on failure.
 */
int crypt_secret_read(int fd, size_t limit, char **out, size_t *out_len);

/* Same from a base64 string (surrounding whitespace trimmed). 1 or -1. */
int crypt_key_from_base64(struct crypt_key *k, const char *b64, struct kiln_error *err);

/*
 * Where kiln init makes the state key and crypt_key_load looks last:
 * $XDG_CONFIG_HOME/kiln/state.key, or ~/.config/kiln/state.key when
 * XDG_CONFIG_HOME is unset or relative. NULL when HOME is not set either.
 */
char *crypt_key_default_path(void);

/*
 * Make a new random key in path (mode 0600, directories made 0700), never
 * replacing a file there. 1 and kid filled when made, 0 when path already
 * exists (left as it is), -1 with err.
 */
int crypt_key_create_file(const char *path, char kid[CRYPT_KID_LEN + 1], struct kiln_error *err);

/*
 * The one check of a key file's permission bits, for state keys and
 * approval signing keys alike: -1 with err (naming what, path and mode, and
 * the chmod that fixes it) when group or others may read it. use says
 * what kiln does with the key ("signs", "seals state").
 */
int crypt_key_mode_check(const char *what, const char *path, unsigned mode, const char *use,
			 struct kiln_error *err);

/* Overwrite the key (and its id) with zeros. */
void crypt_key_wipe(struct crypt_key *k);

/*
 * Seal a JSON value: the compact, key-sorted JSON text of value, encrypted
 * with AES-256-GCM under a fresh random 12-byte nonce, aad (NULL means "")
 * authenticated alongside. Returns a new envelope
 *   {"kiln_sealed":"AES-256-GCM","kid":"<16 hex>","nonce":"<base64>",
 *    "ciphertext":"<base64 of ciphertext || 16-byte tag>"}
 * or NULL with err.
 */
json_t *crypt_seal(const struct crypt_key *k, const json_t *value, const char *aad,
		   struct kiln_error *err);

/*
 * Open an envelope sealed with crypt_seal under the same key and aad.
 * Returns the decoded JSON value (new reference) or NULL with err: a
 * malformed envelope, a different key id, or failed authentication.
 */
json_t *crypt_open(const struct crypt_key *k, const json_t *envelope, const char *aad,
		   struct kiln_error *err);

/* Padded standard base64 (RFC 4648) of len bytes; caller frees. */
char *crypt_base64_encode(const unsigned char *p, size_t len);
/*
 * Decode strict padded base64 (no white space, zero bits under the padding,
 * so that one text means one value): 0, or -1 when s is not such base64.
 * The caller frees *out (wiping it first if it is secret).
 */
int crypt_base64_decode(unsigned char **out, size_t *out_len, const char *s, size_t len);

/* An object with a "kiln_sealed" key: an envelope, well-formed or not. */
bool crypt_is_sealed(const json_t *v);
/* An envelope of exactly crypt_seal()'s shape (algorithm, key id, nonce and tag lengths). */
bool crypt_envelope_wellformed(const json_t *v);

#endif
