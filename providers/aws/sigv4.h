/*
 * sigv4.h - AWS Signature Version 4 for one HTTP request.
 *
 * Owns the canonical request, the string to sign, the signing key and the
 * headers that carry the signature, plus redaction of those headers for logs.
 * It does no I/O and keeps no state: the caller gives the request exactly as
 * it will go on the wire and the time to sign at, and sends the headers back
 * unchanged. Where credentials come from is creds.h's business.
 */
#ifndef KILN_AWS_SIGV4_H
#define KILN_AWS_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct aws_creds {
	char *access_key;
	char *secret_key;
	char *session_token; /* NULL when none */
	/* Where they came from, for messages: "the environment (AWS_ACCESS_KEY_ID)" */
	char *source;
};

/* Wipe the secrets (OPENSSL_cleanse) and free every member; c itself is not freed. */
void aws_creds_release(struct aws_creds *c);

struct sigv4_request {
	const char *method; /* "GET", "POST", "PUT", "DELETE", "HEAD" */
	/* The Host header value as sent: "ec2.us-east-1.amazonaws.com", "127.0.0.1:5000" */
	const char *host;
	/* The path as sent on the wire (already percent-encoded once); "/" when NULL or empty */
	const char *path;
	/* The query string as sent, without '?', or NULL/"" */
	const char *query;
	/*
	 * Extra headers to send and sign, "Name: value", NULL-terminated, may be
	 * NULL. Host and X-Amz-Date here are ignored (the signer owns them); an
	 * x-amz-content-sha256 here is signed and used as the payload hash
	 * (S3's "UNSIGNED-PAYLOAD"), and is then not returned again.
	 */
	const char *const *headers;
	const void *body;
	size_t body_len;
	const char *region;
	/* Signing name: "ec2", "s3", "iam", "fsx", "elasticfilesystem", "sts" */
	const char *service;
	time_t now; /* signing time (UTC) */
	/* S3 rules: add x-amz-content-sha256 and do not re-encode or normalise the path */
	bool s3;
};

/*
 * The headers to add to the request: a NULL-terminated, malloc'd array of
 * malloc'd "Name: value" strings, in this order: "Authorization: ...",
 * "X-Amz-Date: ...", "X-Amz-Security-Token: ..." (with a session token),
 * "x-amz-content-sha256: ..." (S3, unless the caller gave one). NULL when the
 * request cannot be signed: a missing method, host, region or service, a
 * method or header name that is not an HTTP token, a header line without ':'
 * or with a CR or LF in it, or a time without a four-digit UTC year.
 */
char **sigv4_sign(const struct sigv4_request *r, const struct aws_creds *c);
void sigv4_headers_free(char **h);

/*
 * Exposed for tests and tracing. The canonical request (malloc'd), and in
 * *signed_headers_out (when not NULL) the malloc'd "host;x-amz-date" list.
 * NULL on the same malformed input as sigv4_sign.
 */
char *sigv4_canonical_request(const struct sigv4_request *r, const struct aws_creds *c,
			      char **signed_headers_out);
/* "AWS4-HMAC-SHA256\nDATE\nSCOPE\nHASH" (malloc'd), or NULL for an unrepresentable time. */
char *sigv4_string_to_sign(const struct sigv4_request *r, const char *canonical_request);
void sigv4_signing_key(const char *secret, const char *yyyymmdd, const char *region,
		       const char *service, unsigned char out[32]);

/*
 * A malloc'd copy of a header line fit for a log: the access key and the
 * signature of an AWS4 Authorization header, any other Authorization value,
 * and the value of any header whose name contains "token" become "REDACTED".
 * The credential scope (date, region, service) is kept because a wrong one is
 * the usual reason a signature is refused.
 */
char *sigv4_redact_header(const char *line);

#endif
