/*
 * approve.c - approvals (see approve.h): what is signed, signing, and
 * checking every approval of a plan. The keys are approve_key.c's.
 *
 * Ed25519 through OpenSSL's EVP interface: one-shot EVP_DigestSign and
 * EVP_DigestVerify with no message digest (Ed25519 hashes the message
 * itself).
 */
#include "approve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "crypt.h"
#include "jsonc.h"
#include "plan.h"

#define SIGNATURE_LEN 64
#define MESSAGE_CONTEXT "kiln-approval-v1\n"
/* The longest header: context, signer, newline, time (20), newline. */
#define HEADER_MAX (sizeof(MESSAGE_CONTEXT) - 1 + APPROVE_SIGNER_MAX + 1 + 20 + 1)

static const char *openssl_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	ERR_clear_error();
	return r ? r : "unknown OpenSSL error";
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
	    str_utf8_invalid_offset((const unsigned char *)signer, len) != len)
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
	json_array_append_new(out, jsonc_share(approval));
	return out;
}

/* ---- verifying ---- */

const char *approve_status_name(enum approval_status s)
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

char *approve_check_describe(const struct approval_check *c, const char *trusted_dir)
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
static struct approve_key *carried_key(const char *b64, const char *key_id, const char **why)
{
	unsigned char *der = NULL;
	size_t len = 0;
	struct approve_key *k = NULL;

	*why = "its public_key is not the base64 of an Ed25519 public key";
	if (crypt_base64_decode(&der, &len, b64, strlen(b64)) == 0)
		k = approve_key_from_der(der, len);
	free(der);
	if (k && strcmp(k->id, key_id) != 0) {
		*why = "its key_id is not the SHA-256 of its public_key";
		approve_key_free(k);
		k = NULL;
	}
	return k;
}

/*
 * Check the members of one approval, filling c's borrowed fields with those
 * that are well formed. *pkey is the public key it carries, *sig its
 * signature. -1 with c->why naming the first fault.
 */
static int approval_parse(struct approval_check *c, const json_t *a, struct approve_key **key,
			  unsigned char sig[SIGNATURE_LEN])
{
	const char *signer = member(a, "signer"), *time = member(a, "time");
	const char *key_id = member(a, "key_id"), *alg = member(a, "algorithm");
	const char *pub = member(a, "public_key"), *sigtext = member(a, "signature");
	unsigned char *raw = NULL;
	const char *why = NULL;
	size_t raw_len = 0;
	int ret = -1;

	*key = NULL;
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
	} else if (!(*key = carried_key(pub, key_id, &why))) {
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
	if (ret < 0) {
		approve_key_free(*key);
		*key = NULL;
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
		struct approve_key *carried = NULL;
		const struct approve_key *k;
		EVP_PKEY *pkey;
		const unsigned char *msg;
		size_t len;

		if (approval_parse(c, a, &carried, sig) < 0) {
			c->status = APPROVAL_MALFORMED;
			continue;
		}
		/* The trusted key itself when there is one, not the copy the file carries. */
		k = trusted ? approve_keyring_find(trusted, c->key_id) : NULL;
		pkey = k ? k->pkey : carried->pkey;
		msg = message_for(&m, c->signer, c->time, &len);
		if (!signature_verifies(pkey, sig, msg, len))
			c->status = APPROVAL_BAD_SIGNATURE;
		else if (trusted && !k)
			c->status = APPROVAL_UNKNOWN_KEY;
		else
			c->status = APPROVAL_VALID;
		c->trusted_by = k ? k->name : NULL;
		approve_key_free(carried);
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

void approve_report_release(struct approval_report *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
