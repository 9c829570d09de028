/*
 * awserr.c - AWS error responses (three XML shapes, JSON, no body at all)
 * into struct aws_error, and the classification providers retry and report
 * by.
 *
 * Everything taken from a response is sanitised here, once, so that a
 * provider can put code, message and request id into an error message as
 * they are. The code tables follow botocore's retry handler and the
 * services' documented error codes; a code not in a table is simply not of
 * that kind.
 */
#include "awserr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "awsxml.h"
#include "util.h"

#define CODE_CAP 128
#define REQUEST_ID_CAP 128
#define MESSAGE_CAP 500
/* Of a body in no known shape, this much goes into the message. */
#define SNIPPET_BYTES 200

static bool code_in(const char *code, const char *const *codes, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(code, codes[i]) == 0)
			return true;
	return false;
}

static const char *code_of(const struct aws_error *e)
{
	return e->code ? e->code : "";
}

/*
 * A code as services send it in __type or x-amzn-ErrorType:
 * "com.amazonaws.fsx#BadRequest" or "BadRequest:http://internal..." are
 * both "BadRequest". NULL when nothing is left.
 */
static char *code_clean(const char *raw)
{
	const char *end, *hash;

	if (!raw)
		return NULL;
	end = strchr(raw, ':');
	if (!end)
		end = raw + strlen(raw);
	hash = memrchr(raw, '#', (size_t)(end - raw));
	if (hash)
		raw = hash + 1;
	if (end == raw)
		return NULL;
	return awsxml_sanitize(raw, (size_t)(end - raw), CODE_CAP);
}

/* A sanitised copy of a non-empty string from the response, or NULL. */
static char *take(const char *s, size_t cap)
{
	if (!s || !*s)
		return NULL;
	return awsxml_sanitize(s, strlen(s), cap);
}

/* The first element of what may be one element or a list of them. */
static json_t *first_of(json_t *doc, const char *path)
{
	json_t *list = awsxml_list(doc, path);
	json_t *v = json_array_get(list, 0);

	/* Borrowed from doc, which holds it after list is gone. */
	json_decref(list);
	return json_is_object(v) ? v : NULL;
}

/* EC2, IAM/STS and S3 XML errors; false when the body is none of them. */
static bool parse_xml(struct aws_error *out, const char *body, size_t len)
{
	json_t *doc = awsxml_parse(body, len, "aws", NULL);
	json_t *error;
	const char *rid;
	bool found = true;

	if ((error = first_of(doc, "Response.Errors.Error")))
		rid = awsxml_str(doc, "Response.RequestID");
	else if ((error = first_of(doc, "ErrorResponse.Error")))
		rid = awsxml_str(doc, "ErrorResponse.RequestId");
	/* Some servers (moto's authentication errors) wrap it in Errors as EC2 does. */
	else if ((error = first_of(doc, "ErrorResponse.Errors.Error")))
		rid = awsxml_str(doc, "ErrorResponse.RequestId");
	else if ((error = awsxml_get(doc, "Error")) && json_is_object(error))
		rid = awsxml_str(error, "RequestId");
	else
		found = false;
	if (found) {
		out->code = take(awsxml_str(error, "Code"), CODE_CAP);
		out->message = take(awsxml_str(error, "Message"), MESSAGE_CAP);
		out->request_id = take(rid, REQUEST_ID_CAP);
	}
	json_decref(doc);
	return found;
}

/* FSx, EFS and the other JSON protocols; false when the body is not a JSON object. */
static bool parse_json(struct aws_error *out, const char *body, size_t len)
{
	json_t *doc = json_loadb(body, len, 0, NULL);
	const char *type, *msg;

	if (!json_is_object(doc)) {
		json_decref(doc);
		return false;
	}
	type = json_string_value(json_object_get(doc, "__type"));
	if (!type)
		type = json_string_value(json_object_get(doc, "code"));
	if (!type)
		type = json_string_value(json_object_get(doc, "Code"));
	/* EFS's error shapes carry the code as a member of their own. */
	if (!type)
		type = json_string_value(json_object_get(doc, "ErrorCode"));
	msg = json_string_value(json_object_get(doc, "message"));
	if (!msg)
		msg = json_string_value(json_object_get(doc, "Message"));
	out->code = code_clean(type);
	out->message = take(msg, MESSAGE_CAP);
	json_decref(doc);
	return out->code || out->message;
}

/* What a body-less response (HEAD) says by its status alone. */
static const char *status_code(long status)
{
	switch (status) {
	case 301:
		return "PermanentRedirect";
	case 403:
		return "AccessDenied";
	case 404:
		return "NotFound";
	default:
		return NULL;
	}
}

void aws_error_parse(struct aws_error *out, long status, const char *body, size_t len,
		     const char *request_id_hdr, const char *error_type_hdr)
{
	size_t start = 0;
	char *hdr_code = code_clean(error_type_hdr);
	bool known = false;

	memset(out, 0, sizeof(*out));
	out->status = status;
	if (!body)
		len = 0;
	while (start < len && (body[start] == ' ' || body[start] == '\t' || body[start] == '\r' ||
			       body[start] == '\n'))
		start++;

	if (start == len) {
		const char *c = status_code(status);

		known = true;
		if (c)
			out->code = xstrdup(c);
	} else if (body[start] == '<') {
		known = parse_xml(out, body, len);
	} else if (body[start] == '{') {
		known = parse_json(out, body, len);
		/* The JSON protocols put the code in the header first (as botocore reads it). */
		if (known && hdr_code) {
			free(out->code);
			out->code = hdr_code;
			hdr_code = NULL;
		}
	}
	if (!known)
		out->message =
		    awsxml_sanitize(body, len < SNIPPET_BYTES ? len : SNIPPET_BYTES, MESSAGE_CAP);
	if (!out->code && hdr_code) {
		out->code = hdr_code;
		hdr_code = NULL;
	}
	if (!out->code)
		out->code = xasprintf("HTTP%ld", status);
	if (!out->message)
		out->message = xstrdup("");
	if (!out->request_id)
		out->request_id = take(request_id_hdr, REQUEST_ID_CAP);
	if (!out->request_id)
		out->request_id = xstrdup("");
	free(hdr_code);
}

void aws_error_release(struct aws_error *e)
{
	if (!e)
		return;
	free(e->code);
	free(e->message);
	free(e->request_id);
	e->code = e->message = e->request_id = NULL;
}

bool aws_error_is_throttle(const struct aws_error *e)
{
	static const char *const codes[] = {
	    "Throttling",
	    "ThrottlingException",
	    "RequestLimitExceeded",
	    "SlowDown",
	    "TooManyRequestsException",
	    "RequestThrottled",
	    "RequestThrottledException",
	    "ProvisionedThroughputExceededException",
	};

	return e->status == 429 || code_in(code_of(e), codes, ARRAY_SIZE(codes));
}

bool aws_error_is_transient(const struct aws_error *e)
{
	static const char *const codes[] = {
	    "InternalError",  "InternalFailure",	 "ServiceUnavailable",
	    "RequestTimeout", "RequestTimeoutException",
	};

	/* A retry with the same token and other parameters fails the same way. */
	if (strcmp(code_of(e), "IdempotentParameterMismatch") == 0)
		return false;
	return aws_error_is_throttle(e) || e->status >= 500 ||
	       code_in(code_of(e), codes, ARRAY_SIZE(codes));
}

bool aws_error_is_auth(const struct aws_error *e)
{
	static const char *const codes[] = {
	    "SignatureDoesNotMatch",
	    "InvalidClientTokenId",
	    "AuthFailure",
	    "InvalidAccessKeyId",
	    "ExpiredToken",
	    "ExpiredTokenException",
	    "IncompleteSignature",
	    "MissingAuthenticationToken",
	    "UnrecognizedClientException",
	};

	return code_in(code_of(e), codes, ARRAY_SIZE(codes));
}

bool aws_error_is_denied(const struct aws_error *e)
{
	static const char *const codes[] = {
	    "UnauthorizedOperation",
	    "AccessDenied",
	    "AccessDeniedException",
	    "UnauthorizedAccess",
	};

	if (code_in(code_of(e), codes, ARRAY_SIZE(codes)))
		return true;
	/* A 403 for bad credentials is a credentials problem, not a permission one. */
	return e->status == 403 && !aws_error_is_auth(e);
}

bool aws_error_is_capacity(const struct aws_error *e)
{
	static const char *const codes[] = {
	    "InsufficientInstanceCapacity",
	    "InsufficientCapacity",
	    "InsufficientHostCapacity",
	    "InsufficientReservedInstanceCapacity",
	};

	return code_in(code_of(e), codes, ARRAY_SIZE(codes));
}

bool aws_error_is_notfound(const struct aws_error *e)
{
	static const char *const codes[] = {
	    "NoSuchEntity",	   "NoSuchBucket",
	    "FileSystemNotFound",  "DataRepositoryAssociationNotFound",
	    "MountTargetNotFound", "NotFound",
	    "ParameterNotFound",
	};
	const char *code = code_of(e);
	char generic[32];

	if (str_ends_with(code, ".NotFound") || code_in(code, codes, ARRAY_SIZE(codes)))
		return true;
	/* A 404 whose body named no code: the code is still the generic one. */
	snprintf(generic, sizeof(generic), "HTTP%ld", e->status);
	return e->status == 404 && strcmp(code, generic) == 0;
}

char *aws_error_describe(const struct aws_error *e)
{
	struct strbuf sb = {0};

	sb_adds(&sb, code_of(e));
	if (e->message && *e->message) {
		sb_adds(&sb, ": ");
		sb_adds(&sb, e->message);
	}
	if (e->request_id && *e->request_id) {
		sb_adds(&sb, " (request ");
		sb_adds(&sb, e->request_id);
		sb_adds(&sb, ")");
	}
	return sb_detach(&sb);
}
