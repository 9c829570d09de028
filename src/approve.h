/*
 * approve.h - approvals of a saved plan: Ed25519 signatures over the plan's
 * canonical bytes, the keys that make them and the trusted keys that count.
 *
 * An approval (plan.h shows where a plan file keeps it) signs
 *
 *   "kiln-approval-v1\n" SIGNER "\n" TIME "\n" CANONICAL-PLAN
 *
 * where CANONICAL-PLAN is plan_canonical() of the plan, the bytes that
 * plan_digest() hashes; so the signer's name and the time cannot be changed
 * without breaking the signature, and neither can one byte of the plan. The
 * key is named by key_id, "sha256:" and the hex SHA-256 of its DER
 * SubjectPublicKeyInfo (`openssl pkey -pubin -outform DER | sha256sum`); the
 * approval carries that public key too, so that a reader without the trusted
 * keys can still tell whether it verifies. Trust is the caller's: a directory
 * of PEM public keys, one per *.pub file.
 *
 * approve_key.c owns keys, approve.c signatures; neither prints, nor reads
 * or writes a plan file (plan.c does).
 */
#ifndef KILN_APPROVE_H
#define KILN_APPROVE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util.h"

#define APPROVE_ALGORITHM "ed25519"
/* "sha256:" and 64 hex digits. */
#define APPROVE_KEY_ID_LEN (7 + 64)
/* The longest signer name kiln writes or reads, in bytes. */
#define APPROVE_SIGNER_MAX 200

/* An Ed25519 key, private or public. */
struct approve_key {
	void *pkey;			 /* EVP_PKEY; freed (and wiped) by approve_key_free */
	char id[APPROVE_KEY_ID_LEN + 1]; /* "sha256:HEX" */
	char *public_b64;		 /* base64 of the DER SubjectPublicKeyInfo */
	char *name;			 /* the file it came from (a trusted key: its base name) */
};

/*
 * Load a signing key: a PEM private key (PKCS#8, as `openssl genpkey
 * -algorithm ed25519` writes it) from a regular file that neither group nor
 * others may read. A key of another type, an encrypted key, a public key or
 * an unprotected file is refused with err naming the file and the fix.
 */
int approve_key_load_private(struct approve_key **out, const char *path, struct kiln_error *err);
/* Load a PEM public key (SubjectPublicKeyInfo, as `openssl pkey -pubout` writes it). */
int approve_key_load_public(struct approve_key **out, const char *path, struct kiln_error *err);
/* The Ed25519 public key whose DER SubjectPublicKeyInfo is der, or NULL. */
struct approve_key *approve_key_from_der(const unsigned char *der, size_t len);
/* A new Ed25519 key, written to path (0600, not overwritten) and path.pub (0644). */
int approve_key_generate(struct approve_key **out, const char *path, struct kiln_error *err);
void approve_key_free(struct approve_key *k);

/* The trusted keys: every *.pub file of a directory, sorted by name. */
struct approve_keyring {
	char *dir;
	struct approve_key **keys;
	size_t n, cap;
};

/*
 * Read dir's *.pub files (other files, and names starting with '.', are
 * ignored). A *.pub file that is not an Ed25519 public key, and a directory
 * with no key at all, are errors: a trust list that cannot be read whole is
 * not one to decide with. The same key in two files counts once.
 */
int approve_keyring_load(struct approve_keyring *out, const char *dir, struct kiln_error *err);
void approve_keyring_release(struct approve_keyring *r);
/* The key with this id, or NULL. */
const struct approve_key *approve_keyring_find(const struct approve_keyring *r, const char *id);

/* The time now, as an approval writes it: "2026-11-30T05:40:00Z". */
void approve_time_now(char out[32]);
/* A signer name kiln writes: 1 to APPROVE_SIGNER_MAX bytes of UTF-8, no control character. */
bool approve_signer_ok(const char *signer);

/*
 * Sign plan with key as signer at time (approve_time_now's form): a new
 * approval object (plan.h's APPROVAL), or NULL with err.
 */
json_t *approve_sign(const struct approve_key *key, const json_t *plan, const char *signer,
		     const char *time, struct kiln_error *err);

/*
 * The approvals with this key replaced by approval (appended when the key
 * has none yet): one key, one approval. Returns a new array.
 */
json_t *approve_replace(const json_t *approvals, const json_t *approval);

enum approval_status {
	APPROVAL_VALID,		/* verifies over the plan (with a keyring: by a trusted key) */
	APPROVAL_MALFORMED,	/* a member is not what kiln writes; why says which */
	APPROVAL_BAD_SIGNATURE, /* does not verify over this plan, signer and time */
	APPROVAL_UNKNOWN_KEY,	/* verifies, but (with a keyring) its key is not a trusted one */
	APPROVAL_DUPLICATE,	/* valid, but its key was counted by an earlier approval */
};

struct approval_check {
	enum approval_status status;
	const char *signer; /* borrowed from the approval; "" when not a string */
	const char *time;
	const char *key_id;
	const char *trusted_by; /* the *.pub file of the key, when trusted */
	size_t duplicate_of;	/* with APPROVAL_DUPLICATE: the index of the counted one */
	char why[256];		/* with APPROVAL_MALFORMED: which member, and how */
};

struct approval_report {
	struct approval_check *v; /* one per approval, in order */
	size_t n;
	size_t valid; /* valid approvals of distinct keys */
	bool trust_checked;
};

/*
 * Check every approval of a plan: well formed, signed by the key it names,
 * over exactly this plan; with trusted (may be NULL), by one of those keys.
 * The report borrows from approvals, which must outlive it. 0, or -1 with
 * err when the plan cannot be encoded.
 */
int approve_verify(struct approval_report *out, const json_t *plan, const json_t *approvals,
		   const struct approve_keyring *trusted, struct kiln_error *err);
void approve_report_release(struct approval_report *r);
/* "valid", "malformed", "bad signature", "unknown key", "duplicate". */
const char *approve_status_name(enum approval_status s);
/*
 * One line for a person: what the check found and why, such as "unknown
 * key: no *.pub file in keys/ holds it". trusted_dir names the directory
 * checked (NULL when none was). Caller frees.
 */
char *approve_check_describe(const struct approval_check *c, const char *trusted_dir);

#endif
