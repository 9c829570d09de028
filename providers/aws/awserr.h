/*
 * awserr.h - one shape for every AWS error response.
 *
 * EC2, IAM/STS and S3 answer errors in three XML shapes, FSx and EFS in
 * JSON, and a HEAD request in none at all. Providers parse whichever came
 * into struct aws_error and then ask what kind of failure it is (retry it,
 * tell the user about permissions or credentials, wait for capacity, treat
 * the resource as gone) instead of comparing codes themselves.
 */
#ifndef KILN_AWSERR_H
#define KILN_AWSERR_H

#include <stdbool.h>
#include <stddef.h>

struct aws_error {
	long status;   /* HTTP status */
	char *code;    /* "InvalidVpcID.NotFound", "Throttling"; "HTTP<status>" when the body names
			  none */
	char *message; /* may be "" */
	char *request_id; /* may be "" */
};

/*
 * Fill out from an error response: status, the body (len bytes, need not be
 * NUL-terminated) and the x-amzn-RequestId / x-amz-request-id and
 * x-amzn-ErrorType headers, either of which may be NULL. Shapes:
 *  EC2:  <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>
 *  IAM/STS: <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>
 *  S3:   <Error><Code/><Message/><RequestId/>...</Error>; a HEAD response has no
 *        body and gets its code from the status: 404 NotFound, 403 AccessDenied,
 *        301 PermanentRedirect
 *  JSON: {"__type": "com.amazonaws...#BadRequest" or "BadRequest", "message"
 *        or "Message"} (EFS: "ErrorCode"), the code from x-amzn-ErrorType
 *        ("Code:http://...") first when that header is given
 * Never fails: a body that is none of these gives code "HTTP<status>" (or
 * the header's) and as message the first 200 bytes of the body. Every string
 * is sanitised (control characters replaced, messages at most 500 bytes).
 * Release with aws_error_release.
 */
void aws_error_parse(struct aws_error *out, long status, const char *body, size_t len,
		     const char *request_id_hdr, const char *error_type_hdr);
void aws_error_release(struct aws_error *e);

/* Slow down and retry: the throttling codes, or status 429. */
bool aws_error_is_throttle(const struct aws_error *e);
/* Worth retrying: throttled, status >= 500, or a server-side failure code. */
bool aws_error_is_transient(const struct aws_error *e);
/* The credentials work but may not do this: the denial codes, or 403 that is not aws_error_is_auth.
 */
bool aws_error_is_denied(const struct aws_error *e);
/* The credentials themselves are wrong, expired or missing. */
bool aws_error_is_auth(const struct aws_error *e);
/* The region or zone has no capacity of the kind asked for (by code only). */
bool aws_error_is_capacity(const struct aws_error *e);
/* The resource does not exist: "*.NotFound", the NoSuch* codes, or 404 naming no code. */
bool aws_error_is_notfound(const struct aws_error *e);

/* "Throttling: Rate exceeded (request 1234-...)", for messages; caller frees. */
char *aws_error_describe(const struct aws_error *e);

#endif
