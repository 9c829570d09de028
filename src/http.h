/*
 * http.h - kiln's HTTP client: libcurl with one connection cache shared by
 * every thread, timeouts, and retries with backoff under a deadline and an
 * adaptive rate.
 *
 * It knows nothing of clouds: a caller prepares (and signs) each attempt and
 * says which responses are worth another one. What it owns is the transport:
 * keep-alive and TLS session reuse across threads, a response size cap, no
 * redirects and no protocol but http and https, the retries of a request
 * (the one layer that retries a transport failure: see retry.h), and a
 * debug trace line per call (service, action, status, time, retries) that
 * never holds a header or a body, so credentials and signatures never
 * reach a log.
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

struct retry_rate;

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
	/* True when this transient response says slow down (NULL: a 429 does). */
	bool (*throttled)(void *arg, const struct http_response *resp);
	void *arg;
	/*
	 * The adaptive send rate of the service called (retry.h), shared by
	 * every call to it; NULL: none.
	 */
	struct retry_rate *rate;
	/*
	 * The cloud's documented token buckets this request spends from
	 * (retry.h's retry_bucket: its category's, and for a launch one token
	 * an instance), nspend of them; every attempt first waits for its
	 * tokens, and that wait is not counted against the call's deadline.
	 */
	const struct retry_spend *spend;
	size_t nspend;
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

/* How a call went: for the caller's error message. */
struct http_tries {
	int attempts;	  /* made */
	long ms;	  /* from the first attempt to the last answer */
	bool retried;	  /* a transient last answer that was retried as far as it could be */
	bool throttled;	  /* the last answer said slow down */
	bool out_of_time; /* stopped by the logical call's deadline, not by the attempts */
	bool no_quota;	  /* stopped by the service's retry quota (retry.h) */
	long deadline_ms; /* the logical call's time to retry in, KILN_CALL_DEADLINE_MS */
	long paced_ms;	  /* waited for the buckets' tokens (call->spend), before sending */
};

/*
 * Run a call: up to KILN_HTTP_ATTEMPTS attempts in all (default 4) on a
 * transient response or a transport failure (connection refused or reset,
 * timeout), each retry after the server's Retry-After (1 to 20 s) or an
 * exponential backoff with full jitter from KILN_HTTP_BACKOFF_MS (default
 * 100 ms, capped at 5 s), and only while it ends before the deadline of
 * the thread's logical call (retry.h; a call outside one is its own). With
 * call->rate every attempt first waits for its token, every answer tells
 * the rate whether it was throttled, and every retry is paid for from the
 * service's retry quota, none when it is spent. With call->spend every
 * attempt waits for its buckets' tokens first (the first attempt as long
 * as it takes, a retry only while that ends before the deadline), and
 * every answer tells the buckets whether it was throttled. Returns 0 with the last
 * response in *resp (whatever its status: the caller reads errors), or -1
 * when no response came at all, with err naming the URL and the cause.
 * *tries (may be NULL) says how it went.
 */
int http_call_run(const struct http_call *call, struct http_response *resp,
		  struct http_tries *tries, struct kiln_error *err);

/* True for 429 and 5xx: the statuses that are always worth another attempt. */
bool http_status_transient(long status);

#endif
