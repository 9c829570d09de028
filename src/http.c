/*
 * http.c - see http.h.
 *
 * One CURLSH holds the connection cache, the TLS sessions and the DNS cache
 * for every thread; each call uses its own easy handle on it, so the
 * executor's workers reuse each other's keep-alive connections without
 * sharing a handle (a curl easy handle is for one thread at a time).
 */
#include "http.h"

#include "log.h"
#include "retry.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* A response larger than this is refused rather than held in memory. */
#define HTTP_MAX_BYTES (64L << 20)

static pthread_once_t http_once = PTHREAD_ONCE_INIT;
static CURLSH *http_share;
static pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *arg)
{
	(void)h;
	(void)access;
	(void)arg;
	pthread_mutex_lock(&share_mu[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
	(void)h;
	(void)arg;
	pthread_mutex_unlock(&share_mu[data]);
}

static void http_init_once(void)
{
	size_t i;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&share_mu[i], NULL);
	http_share = curl_share_init();
	if (!http_share)
		return;
	curl_share_setopt(http_share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(http_share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(http_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	curl_share_setopt(http_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_share_setopt(http_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
}

void http_response_release(struct http_response *r)
{
	free(r->body);
	free(r->request_id);
	free(r->error_type);
	free(r->content_type);
	memset(r, 0, sizeof(*r));
	r->retry_after = -1;
}

bool http_status_transient(long status)
{
	return status == 429 || status >= 500;
}

struct sink {
	struct strbuf body;
	struct http_response *resp;
	bool too_big;
};

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;

	if (s->body.len + size * n > (size_t)HTTP_MAX_BYTES) {
		s->too_big = true;
		return 0;
	}
	sb_add(&s->body, data, size * n);
	return size * n;
}

/* The value of header line "Name: value\r\n" when its name is name, else NULL (malloc'd). */
static char *header_value(const char *line, size_t len, const char *name)
{
	size_t nl = strlen(name), end;

	if (len <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return NULL;
	line += nl + 1;
	len -= nl + 1;
	while (len && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	for (end = len;
	     end && (line[end - 1] == '\r' || line[end - 1] == '\n' || line[end - 1] == ' '); end--)
		;
	return xstrndup(line, end);
}

static void keep(char **slot, char *v)
{
	if (!v)
		return;
	free(*slot);
	*slot = v;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	struct http_response *r = s->resp;
	size_t len = size * n;
	char *v;

	keep(&r->request_id, header_value(data, len, "x-amzn-RequestId"));
	keep(&r->request_id, header_value(data, len, "x-amz-request-id"));
	if (!r->request_id)
		keep(&r->request_id, header_value(data, len, "x-amz-id-2"));
	keep(&r->error_type, header_value(data, len, "x-amzn-ErrorType"));
	keep(&r->content_type, header_value(data, len, "Content-Type"));
	v = header_value(data, len, "Retry-After");
	if (v) {
		char *end;
		long secs = strtol(v, &end, 10);

		r->retry_after = *end || secs < 0 ? -1 : secs;
		free(v);
	}
	return len;
}

/*
 * One attempt: 0 with *resp; -1 when nothing came back (err says why) and
 * another attempt may fare better; -2 when it cannot (a refused scheme, an
 * answer over the cap).
 */
static int http_send(const struct http_request *req, const char *unreachable_hint,
		     struct http_response *resp, struct kiln_error *err)
{
	struct curl_slist *hdrs = NULL;
	struct sink s = {{0}, resp, false};
	char errbuf[CURL_ERROR_SIZE] = "";
	const char *const *h;
	CURLcode cc;
	CURL *c;
	int ret = -1;

	memset(resp, 0, sizeof(*resp));
	resp->retry_after = -1;
	c = curl_easy_init();
	if (!c) {
		kiln_error_set(err, "cannot start an HTTP request (curl_easy_init failed)");
		return -1;
	}
	/* libcurl adds these unless told not to; a signature covers exactly what is sent. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	hdrs = curl_slist_append(hdrs, "Accept:");
	hdrs = curl_slist_append(hdrs, "Content-Type:");
	for (h = req->headers; h && *h; h++)
		hdrs = curl_slist_append(hdrs, *h);
	curl_easy_setopt(c, CURLOPT_SHARE, http_share);
	/* Each handle's cache limit applies to the shared one: room for every worker. */
	curl_easy_setopt(c, CURLOPT_MAXCONNECTS, 64L);
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 log_env_long("KILN_HTTP_CONNECT_TIMEOUT_MS", 10000, 600000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
			 log_env_long("KILN_HTTP_TIMEOUT_MS", 120000, 3600000));
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "kiln/" KILN_VERSION);
	if (strcmp(req->method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(req->method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? (const char *)req->body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
	}
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
		resp->body_len = s.body.len;
		resp->body = s.body.buf ? sb_detach(&s.body) : xstrdup("");
		ret = 0;
	} else if (s.too_big) {
		kiln_error_set(err, "the response from %s is larger than %ld MiB; refused",
			       req->url, HTTP_MAX_BYTES >> 20);
		ret = -2;
	} else if (cc == CURLE_UNSUPPORTED_PROTOCOL || cc == CURLE_URL_MALFORMAT) {
		/* Not worth another attempt: the same URL fails the same way. */
		kiln_error_set(err, "cannot reach %s: %s (kiln speaks only http and https)",
			       req->url, *errbuf ? errbuf : curl_easy_strerror(cc));
		ret = -2;
	} else {
		kiln_error_set(err, "cannot reach %s: %s", req->url,
			       *errbuf ? errbuf : curl_easy_strerror(cc));
		kiln_error_hint(err, "%s",
				unreachable_hint ? unreachable_hint
						 : "check the endpoint and the network");
	}
	if (ret < 0) {
		free(s.body.buf);
		http_response_release(resp);
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return ret;
}

static bool is_throttled(const struct http_call *call, const struct http_response *resp)
{
	return call->throttled ? call->throttled(call->arg, resp) : resp->status == 429;
}

/* The wait before retry attempt + 1: the server's Retry-After when it says 1 to 20 s. */
static long retry_wait_ms(const struct http_response *resp, int attempt, long base_ms,
			  const struct retry_call *rc)
{
	if (resp->retry_after > 0 && resp->retry_after <= 20)
		return resp->retry_after * 1000;
	return retry_backoff_ms(attempt - 1, base_ms, 5000, rc->clock->uniform(rc->clock->arg));
}

/*
 * Wait for attempt's token of the adaptive rate: the first attempt always
 * waits for it (slowing down is the point); a retry only when the wait ends
 * before the deadline, else the token goes back and false says time is up.
 */
static bool wait_for_token(struct retry_rate *rate, const struct retry_call *rc, int attempt)
{
	long wait;

	if (!rate)
		return true;
	wait = retry_rate_take(rate, rc->clock->now_ms(rc->clock->arg));
	if (attempt == 0) {
		rc->clock->sleep_ms(rc->clock->arg, wait);
		return true;
	}
	if (retry_call_sleep(rc, wait))
		return true;
	retry_rate_give_back(rate);
	return false;
}

/*
 * Wait for attempt's tokens of the cloud's documented buckets (call->spend):
 * the first attempt as long as they take, and that wait moves the call's
 * deadline back (kiln keeping to the cloud's rate is not retrying); a retry
 * only when they come before the deadline, else they go back.
 */
static bool wait_for_buckets(const struct http_call *call, struct retry_call *rc, int attempt,
			     struct http_tries *t)
{
	long now = rc->clock->now_ms(rc->clock->arg), wait = 0, w;
	size_t i;

	for (i = 0; i < call->nspend; i++) {
		w = retry_bucket_take(call->spend[i].bucket, call->spend[i].tokens, now);
		if (w > wait)
			wait = w;
	}
	if (wait == 0)
		return true;
	log_debug("http: %s %s: waiting %.1f s for the tokens of its %s", call->service,
		  call->action, (double)wait / 1000, call->nspend > 1 ? "buckets" : "bucket");
	if (attempt == 0) {
		rc->clock->sleep_ms(rc->clock->arg, wait);
		retry_call_defer(rc, wait);
		t->paced_ms += wait;
		return true;
	}
	if (retry_call_sleep(rc, wait)) {
		t->paced_ms += wait;
		return true;
	}
	for (i = 0; i < call->nspend; i++)
		retry_bucket_give_back(call->spend[i].bucket, call->spend[i].tokens);
	return false;
}

/*
 * Before retry attempt + 1: back off, then wait for a token and the
 * buckets' tokens; false when the deadline comes first.
 */
static bool pause_before(const struct http_call *call, const struct http_response *resp,
			 int attempt, long base_ms, struct retry_call *rc, struct http_tries *t)
{
	return retry_call_sleep(rc, retry_wait_ms(resp, attempt, base_ms, rc)) &&
	       wait_for_token(call->rate, rc, attempt) && wait_for_buckets(call, rc, attempt, t);
}

static void trace(const struct http_call *call, int rc, const struct http_response *resp, long ms,
		  int attempt, const struct kiln_error *err)
{
	if (rc == 0)
		log_debug("http: %s %s -> %ld in %ld ms (attempt %d)%s%s", call->service,
			  call->action, resp->status, ms, attempt + 1,
			  resp->request_id ? " request " : "",
			  resp->request_id ? resp->request_id : "");
	else
		log_debug("http: %s %s -> no response in %ld ms (attempt %d): %s", call->service,
			  call->action, ms, attempt + 1, err->msg);
}

/*
 * Whether attempt t->attempts (a retry) may be made, after its wait: the
 * service's quota pays for it (*cost), and its backoff and its token of the
 * rate end before the deadline. t says what stopped it.
 */
static bool may_retry(const struct http_call *call, const struct http_response *resp, int rc,
		      long base_ms, struct retry_call *rcall, struct http_tries *t, int *cost)
{
	if (call->rate && !(*cost = retry_quota_take(call->rate, rc == -1))) {
		t->no_quota = true;
		log_debug("http: %s %s: no retry: the service's retry quota is spent",
			  call->service, call->action);
		return false;
	}
	if (!pause_before(call, resp, t->attempts, base_ms, rcall, t)) {
		t->out_of_time = true;
		if (call->rate)
			retry_quota_put_back(call->rate, *cost);
		log_debug("http: %s %s: no retry: the call's deadline comes first", call->service,
			  call->action);
		return false;
	}
	return true;
}

/* Tell the service's rate whether the answer was throttled, and its quota of a success. */
static void tell_rate(const struct http_call *call, int rc, const struct http_response *resp,
		      bool again, bool throttled, int cost, const struct retry_call *rcall)
{
	size_t i;

	if (rc != 0)
		return;
	for (i = 0; i < call->nspend; i++)
		retry_bucket_answered(call->spend[i].bucket, rcall->clock->now_ms(rcall->clock->arg),
				      throttled);
	if (!call->rate)
		return;
	retry_rate_answered(call->rate, rcall->clock->now_ms(rcall->clock->arg), throttled);
	if (!again && resp->status >= 200 && resp->status < 300)
		retry_quota_put_back(call->rate, cost ? cost : 1);
}

int http_call_run(const struct http_call *call, struct http_response *resp,
		  struct http_tries *tries, struct kiln_error *err)
{
	long max = log_env_long("KILN_HTTP_ATTEMPTS", 4, 100);
	long base = log_env_long("KILN_HTTP_BACKOFF_MS", 100, 60000);
	struct http_tries t = {0};
	struct http_request req;
	struct retry_call rcall;
	long began;
	int rc = -1, cost = 0;
	bool again = false;

	pthread_once(&http_once, http_init_once);
	retry_call_begin(&rcall, NULL);
	began = retry_call_elapsed_ms(&rcall);
	if (max < 1)
		max = 1;
	memset(resp, 0, sizeof(*resp));
	resp->retry_after = -1;
	for (t.attempts = 0; t.attempts < max; t.attempts++) {
		if (t.attempts > 0 && !may_retry(call, resp, rc, base, &rcall, &t, &cost))
			break;
		if (t.attempts == 0) {
			wait_for_token(call->rate, &rcall, 0);
			wait_for_buckets(call, &rcall, 0, &t);
		}
		http_response_release(resp);
		memset(&req, 0, sizeof(req));
		call->prepare(call->arg, t.attempts, &req);
		rc = http_send(&req, call->unreachable_hint, resp, err);
		again = (rc == -1 && !call->once) || (rc == 0 && call->transient(call->arg, resp));
		t.throttled = rc == 0 && again && is_throttled(call, resp);
		tell_rate(call, rc, resp, again, t.throttled, cost, &rcall);
		trace(call, rc, resp, retry_call_elapsed_ms(&rcall) - began, t.attempts, err);
		if (!again) {
			t.attempts++;
			break;
		}
	}
	t.retried = again;
	t.ms = retry_call_elapsed_ms(&rcall) - began;
	t.deadline_ms = rcall.deadline_ms - rcall.start_ms;
	retry_call_end(&rcall);
	if (tries)
		*tries = t;
	return rc < 0 ? -1 : 0;
}
