/*
 * http.h - kiln's HTTP client: libcurl with one connection cache shared by
 * every thread, timeouts, and bounded retries with backoff.
 *
 * It knows nothing of clouds: a caller prepares (and signs) each attempt and
 * says which responses are worth another one. What it owns is the transport:
 * keep-alive and TLS session reuse across threads, a response size cap, no
 * redirects and no protocol but http and https, and a debug trace line per
 * call (service, action, status, time, retries) that never holds a header
 * or a body, so credentials and signatures never reach a log.
 */
#ifndef KILN_HTTP_H
#define KILN_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct http_request {
	const char *method;	    /* "GET", "POST", "PUT", "DELETE", "HEAD" */
	const char *url;	    /* scheme://host[:port]/path?query, already encoded */
	const char *const *headers; /* "Name: value", NULL-terminated; may be NULL */
	const void *body;
	size_t body_len;
};

struct http_response {
	long status;
	char *body; /* NUL-terminated; "" when none */
	size_t body_len;
	char *request_id;   /* x-amzn-RequestId, x-amz-request-id or x-amz-id-2; NULL when absent */
	char *error_type;   /* x-amzn-ErrorType; NULL when absent */
	char *content_type; /* NULL when absent */
	long retry_after;   /* seconds from Retry-After, else -1 */
};

void http_response_release(struct http_response *r);

/* What one call is, and how each attempt is made and judged. */
struct http_call {
	const char *service; /* for the trace: "ec2" */
	const char *action;  /* for the trace: "RunInstances" */
	/*
	 * Fill req for attempt number attempt (0 for the first): called before
	 * every attempt so a signature carries a fresh date. The request and
	 * what it points to must stay valid until the next prepare or the end.
	 */
	void (*prepare)(void *arg, int attempt, struct http_request *req);
	/* True when this response is worth another attempt (throttling, 5xx). */
	bool (*transient)(void *arg, const struct http_response *resp);
	void *arg;
	/*
	 * A call that is not idempotent (a create with no token): a lost
	 * connection or timeout may have done it, so it is not sent again;
	 * the caller looks before it tries again.
	 */
	bool once;
	/*
	 * The hint when the endpoint cannot be reached, naming where the
	 * caller's endpoint comes from; NULL: "check the endpoint and the network".
	 */
	const char *unreachable_hint;
};

/*
 * Run a call: up to KILN_HTTP_ATTEMPTS attempts in all (default 4), with
 * backoff from KILN_HTTP_BACKOFF_MS (default 100 ms, capped at 5 s, or the
 * server's Retry-After when it says so) between them, on a transient
 * response or a transport failure (connection refused or reset, timeout).
 * Returns 0 with the last response in *resp (whatever its status: the
 * caller reads errors), or -1 when no response came at all, with err naming
 * the URL and the cause. *attempts (may be NULL) says how many were made.
 */
int http_call_run(const struct http_call *call, struct http_response *resp, int *attempts,
		  struct kiln_error *err);

/* True for 429 and 5xx: the statuses that are always worth another attempt. */
bool http_status_transient(long status);

#endif
