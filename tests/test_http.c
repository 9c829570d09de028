/*
 * test_http.c - the HTTP client against a scripted server on 127.0.0.1:
 * what is sent and what is captured, retries and backoff, Retry-After,
 * transport failures, refused schemes, redirects, the size cap, connection
 * reuse and many threads on the shared client.
 *
 * The server below runs inside the test process: a thread accepting on an
 * ephemeral port of 127.0.0.1 and a thread per connection, answering from a
 * list of replies (the last one repeats) and recording every request so a
 * test can check what was sent. Nothing but 127.0.0.1 is ever contacted.
 * KILN_HTTP_BACKOFF_MS is 1, so retries cost nothing but Retry-After.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "retry.h"
#include "util.h"

#define MAX_SEEN 256
#define MAX_CONNS 128
#define POLL_MS 20
#define CAP_BYTES ((size_t)64 << 20) /* HTTP_MAX_BYTES in http.c */

/* One scripted answer. */
struct reply {
	int status;
	const char *headers; /* "Name: value\r\n" lines; may be NULL */
	const char *body;    /* may be NULL */
	size_t pattern_len;  /* when not 0, the body is this many pattern_byte()s instead */
	bool echo_path;	     /* the body is the request's path */
	bool close;	     /* say Connection: close, then close */
	bool hangup;	     /* close the connection without answering */
	int delay_ms;	     /* wait this long before answering */
};

/* One request as the server received it. */
struct seen {
	char *method;
	char *path;
	char *headers; /* the header lines as received, each ending "\r\n" */
	char *body;
	size_t body_len;
	struct timespec at; /* when it was complete */
};

struct server;

struct conn {
	struct server *srv;
	int fd;
	pthread_t thread;
};

struct server {
	int fd;
	int port;
	pthread_t acceptor;
	atomic_bool stop;
	pthread_mutex_t mu; /* guards everything below */
	const struct reply *replies;
	size_t nreplies, next;
	struct seen seen[MAX_SEEN];
	size_t nseen;
	struct conn conns[MAX_CONNS];
	size_t nconns; /* connections accepted */
};

/* A body that catches lost, repeated or reordered bytes, NULs included. */
static unsigned char pattern_byte(size_t i)
{
	return (unsigned char)((i * 31 + 7) ^ (i >> 13));
}

static bool send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read what there is into in: 1 when something came, 0 at end, -1 on error, -2 on no data. */
static int recv_some(int fd, struct strbuf *in)
{
	struct pollfd p = {fd, POLLIN, 0};
	char buf[65536];
	ssize_t n;

	if (poll(&p, 1, POLL_MS) <= 0)
		return -2;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return n == 0 ? 0 : -1;
	sb_add(in, buf, (size_t)n);
	return 1;
}

/* The Content-Length of a request head, 0 when it has none. */
static size_t content_length(const char *head, size_t len)
{
	const char *p = head, *end = head + len;

	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);

		if (!eol)
			break;
		if ((size_t)(eol - p) > 15 && strncasecmp(p, "Content-Length:", 15) == 0)
			return strtoul(p + 15, NULL, 10);
		p = eol + 2;
	}
	return 0;
}

/* Split a complete request (head of head_len bytes, then body_len bytes) into r. */
static void parse_request(const char *buf, size_t head_len, size_t body_len, struct seen *r)
{
	const char *eol = memmem(buf, head_len, "\r\n", 2);
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;

	r->method = sp1 ? xstrndup(buf, (size_t)(sp1 - buf)) : xstrdup("");
	r->path = sp2 ? xstrndup(sp1 + 1, (size_t)(sp2 - sp1 - 1)) : xstrdup("");
	/* From after the request line to the blank line, keeping the last "\r\n". */
	r->headers = xstrndup(eol + 2, head_len - (size_t)(eol + 2 - buf) - 2);
	r->body = xmalloc(body_len + 1);
	memcpy(r->body, buf + head_len, body_len);
	r->body[body_len] = '\0';
	r->body_len = body_len;
	clock_gettime(CLOCK_MONOTONIC, &r->at);
}

static void seen_release(struct seen *r)
{
	free(r->method);
	free(r->path);
	free(r->headers);
	free(r->body);
}

/* Wait ms, or less when the server is stopping. */
static void server_pause(struct server *s, int ms)
{
	struct timespec step = {0, POLL_MS * 1000000L};

	for (; ms > 0 && !atomic_load(&s->stop); ms -= POLL_MS)
		nanosleep(&step, NULL);
}

/* Answer one request with r; false when the connection is to be closed. */
static bool answer(struct server *s, int fd, const struct reply *r, const char *method,
		   const char *path)
{
	size_t len = r->pattern_len ? r->pattern_len
		     : r->echo_path ? strlen(path)
		     : r->body	    ? strlen(r->body)
				    : 0;
	char *head;
	bool ok;

	server_pause(s, r->delay_ms);
	if (r->hangup || atomic_load(&s->stop))
		return false;
	head = xasprintf("HTTP/1.1 %d Scripted\r\nContent-Length: %zu\r\n%s%s\r\n", r->status, len,
			 r->close ? "Connection: close\r\n" : "", r->headers ? r->headers : "");
	ok = send_all(fd, head, strlen(head));
	free(head);
	if (!ok || strcmp(method, "HEAD") == 0)
		return ok && !r->close;
	if (r->pattern_len) {
		unsigned char buf[65536];
		size_t off, i;

		for (off = 0; ok && off < len; off += sizeof(buf)) {
			size_t n = len - off < sizeof(buf) ? len - off : sizeof(buf);

			for (i = 0; i < n; i++)
				buf[i] = pattern_byte(off + i);
			ok = send_all(fd, buf, n);
		}
	} else {
		ok = send_all(fd, r->echo_path ? path : r->body ? r->body : "", len);
	}
	return ok && !r->close;
}

/* Record a complete request and pick its reply. */
static const struct reply *server_take(struct server *s, struct seen *req)
{
	static const struct reply unscripted = {500, NULL, "no reply scripted"};
	const struct reply *r = &unscripted;

	pthread_mutex_lock(&s->mu);
	if (s->nreplies)
		r = &s->replies[s->next < s->nreplies ? s->next : s->nreplies - 1];
	s->next++;
	if (s->nseen < MAX_SEEN) {
		s->seen[s->nseen++] = *req;
		req->method = req->path = req->headers = req->body = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->srv;
	struct strbuf in = {0};

	while (!atomic_load(&s->stop)) {
		const char *blank = in.len ? memmem(in.buf, in.len, "\r\n\r\n", 4) : NULL;
		int got;

		if (blank) {
			size_t head_len = (size_t)(blank - in.buf) + 4;
			size_t body_len = content_length(in.buf, head_len);

			if (in.len >= head_len + body_len) {
				struct seen req = {0};
				const struct reply *r;
				char *method, *path;
				bool more;

				parse_request(in.buf, head_len, body_len, &req);
				method = xstrdup(req.method);
				path = xstrdup(req.path);
				r = server_take(s, &req); /* keeps req, or leaves it to us */
				seen_release(&req);
				more = answer(s, c->fd, r, method, path);
				free(method);
				free(path);
				memmove(in.buf, in.buf + head_len + body_len,
					in.len - head_len - body_len);
				in.len -= head_len + body_len;
				if (!more)
					break;
				continue;
			}
		}
		got = recv_some(c->fd, &in);
		if (got == 0 || got == -1)
			break;
	}
	close(c->fd);
	sb_release(&in);
	return NULL;
}

static void *acceptor_main(void *arg)
{
	struct server *s = arg;

	while (!atomic_load(&s->stop)) {
		struct pollfd p = {s->fd, POLLIN, 0};
		int fd;

		if (poll(&p, 1, POLL_MS) <= 0)
			continue;
		fd = accept(s->fd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&s->mu);
		if (s->nconns < MAX_CONNS) {
			struct conn *c = &s->conns[s->nconns];

			c->srv = s;
			c->fd = fd;
			if (pthread_create(&c->thread, NULL, conn_main, c) == 0)
				s->nconns++;
			else
				close(fd);
		} else {
			close(fd);
		}
		pthread_mutex_unlock(&s->mu);
	}
	return NULL;
}

/* A socket bound to an ephemeral port of 127.0.0.1 (listening when listening); -1 on failure. */
static int loopback_socket(bool listening, int *port)
{
	struct sockaddr_in a = {0};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || (listening && listen(fd, 64) != 0) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int server_start(struct server *s)
{
	s->fd = loopback_socket(true, &s->port);
	if (s->fd < 0)
		return -1;
	atomic_init(&s->stop, false);
	pthread_mutex_init(&s->mu, NULL);
	if (pthread_create(&s->acceptor, NULL, acceptor_main, s) != 0) {
		pthread_mutex_destroy(&s->mu);
		close(s->fd);
		s->fd = -1;
		return -1;
	}
	return 0;
}

static void server_stop(struct server *s)
{
	size_t i;

	if (s->fd < 0)
		return;
	atomic_store(&s->stop, true);
	pthread_join(s->acceptor, NULL);
	close(s->fd);
	s->fd = -1;
	for (i = 0; i < s->nconns; i++)
		pthread_join(s->conns[i].thread, NULL);
	for (i = 0; i < s->nseen; i++)
		seen_release(&s->seen[i]);
	pthread_mutex_destroy(&s->mu);
}

static void server_script(struct server *s, const struct reply *replies, size_t n)
{
	pthread_mutex_lock(&s->mu);
	s->replies = replies;
	s->nreplies = n;
	s->next = 0;
	pthread_mutex_unlock(&s->mu);
}

static size_t server_requests(struct server *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nseen;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static size_t server_connections(struct server *s)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->nconns;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Request i, which must have come (the call that sent it has returned). */
static const struct seen *server_request(struct server *s, size_t i)
{
	size_t n = server_requests(s);

	if (i >= n)
		fail_msg("request %zu expected, the server saw %zu", i, n);
	return &s->seen[i];
}

/* True when r carried a header called name (any case), with any value. */
static bool sent_header_named(const struct seen *r, const char *name)
{
	size_t nl = strlen(name);
	const char *p;

	for (p = r->headers; *p; p = strstr(p, "\r\n") + 2)
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':')
			return true;
	return false;
}

/* True when r carried exactly this header line. */
static bool sent_header_line(const struct seen *r, const char *line)
{
	size_t ll = strlen(line);
	const char *p;

	for (p = r->headers; *p; p = strstr(p, "\r\n") + 2)
		if (strncmp(p, line, ll) == 0 && strncmp(p + ll, "\r\n", 2) == 0)
			return true;
	return false;
}

#define assert_header_sent(r, line)                                                                \
	do {                                                                                       \
		if (!sent_header_line((r), (line)))                                                \
			fail_msg("expected header \"%s\" in:\n%s", (line), (r)->headers);          \
	} while (0)

/* A caller of http_call_run: what it prepares, and what it was asked. */
struct client {
	const char *method;
	char url[256];
	const char *headers[8]; /* the caller's own, NULL-terminated */
	const void *body;
	size_t body_len;
	int prepared[16]; /* the attempt number given to each prepare */
	int nprepared;
	int ntransient; /* calls to transient() */
	char attempt_header[48];
	const char *sent[10];	 /* headers, then attempt_header */
	bool no_hint;		 /* the call names no unreachable_hint */
	struct retry_rate *rate; /* NULL: no adaptive rate */
};

/* Every attempt says which it is, as a fresh signature would differ. */
static void client_prepare(void *arg, int attempt, struct http_request *req)
{
	struct client *c = arg;
	size_t i;

	if (c->nprepared < (int)ARRAY_SIZE(c->prepared))
		c->prepared[c->nprepared] = attempt;
	c->nprepared++;
	snprintf(c->attempt_header, sizeof(c->attempt_header), "X-Test-Attempt: %d", attempt);
	for (i = 0; c->headers[i]; i++)
		c->sent[i] = c->headers[i];
	c->sent[i++] = c->attempt_header;
	c->sent[i] = NULL;
	req->method = c->method;
	req->url = c->url;
	req->headers = c->sent;
	req->body = c->body;
	req->body_len = c->body_len;
}

/* Throttling and 5xx are worth another attempt, as for a cloud API. */
static bool client_transient(void *arg, const struct http_response *resp)
{
	struct client *c = arg;

	c->ntransient++;
	return http_status_transient(resp->status);
}

static int client_run(struct client *c, struct http_response *resp, struct http_tries *tries,
		      struct kiln_error *err)
{
	/* Named as the aws provider names where its endpoint comes from. */
	const struct http_call call = {
	    .service = "test",
	    .action = "Call",
	    .prepare = client_prepare,
	    .transient = client_transient,
	    .arg = c,
	    .rate = c->rate,
	    .unreachable_hint =
		c->no_hint ? NULL : "check the endpoint (AWS_ENDPOINT_URL) and the network",
	};

	return http_call_run(&call, resp, tries, err);
}

struct fx {
	struct server srv;
	struct client cl;
	struct http_response resp;
	struct kiln_error err;
	int attempts;
	struct http_tries tries;
	int dead_fd; /* bound, not listening: connections to it are refused */
};

static void clear_env(void)
{
	unsetenv("KILN_HTTP_ATTEMPTS");
	unsetenv("KILN_HTTP_TIMEOUT_MS");
	unsetenv("KILN_HTTP_CONNECT_TIMEOUT_MS");
	unsetenv("KILN_CALL_DEADLINE_MS");
}

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));

	clear_env();
	setenv("KILN_HTTP_BACKOFF_MS", "1", 1);
	f->resp.retry_after = -1;
	f->dead_fd = -1;
	f->cl.method = "GET";
	if (server_start(&f->srv) != 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	http_response_release(&f->resp);
	server_stop(&f->srv);
	if (f->dead_fd >= 0)
		close(f->dead_fd);
	free(f);
	clear_env();
	return 0;
}

#define http_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define script(f, replies) server_script(&(f)->srv, (replies), ARRAY_SIZE(replies))

static void set_url(struct fx *f, const char *path)
{
	snprintf(f->cl.url, sizeof(f->cl.url), "http://127.0.0.1:%d%s", f->srv.port, path);
}

static void assert_contains(const char *text, const char *part)
{
	if (!text || !strstr(text, part))
		fail_msg("expected \"%s\" in: %s", part, text ? text : "(null)");
}

/* Run f's client, expecting rc. */
static void run(struct fx *f, int want)
{
	int rc = client_run(&f->cl, &f->resp, &f->tries, &f->err);

	f->attempts = f->tries.attempts;

	if (rc != want)
		fail_msg("http_call_run gave %d, expected %d: %s", rc, want, f->err.msg);
}

static long ms_between(const struct timespec *a, const struct timespec *b)
{
	return (long)((b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000);
}

static void test_ok_answer_returns_status_body_and_captured_headers(void **state)
{
	static const struct reply replies[] = {
	    {200,
	     "x-amzn-RequestId: 0f7c1a52-req\r\n"
	     "x-amzn-ErrorType: NotAnError\r\n"
	     "Content-Type: application/x-amz-json-1.1\r\n",
	     "{\"ok\":true}"},
	};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 200);
	assert_string_equal(f->resp.body, "{\"ok\":true}");
	assert_int_equal(f->resp.body_len, strlen("{\"ok\":true}"));
	assert_string_equal(f->resp.request_id, "0f7c1a52-req");
	assert_string_equal(f->resp.error_type, "NotAnError");
	assert_string_equal(f->resp.content_type, "application/x-amz-json-1.1");
	assert_int_equal(f->resp.retry_after, -1);
	assert_int_equal(f->attempts, 1);
}

static void test_request_carries_prepared_method_path_headers_and_body(void **state)
{
	static const struct reply replies[] = {{200, NULL, "done"}};
	static const char body[] = "{\"InstanceIds\":[\"i-1\"]}";
	struct fx *f = *state;
	const struct seen *r;

	script(f, replies);
	set_url(f, "/svc/run?Action=Run&Version=2016-11-15");
	f->cl.method = "POST";
	f->cl.headers[0] = "Content-Type: application/x-amz-json-1.1";
	f->cl.headers[1] = "X-Amz-Target: Test.Run";
	f->cl.body = body;
	f->cl.body_len = strlen(body);
	run(f, 0);
	r = server_request(&f->srv, 0);
	assert_string_equal(r->method, "POST");
	assert_string_equal(r->path, "/svc/run?Action=Run&Version=2016-11-15");
	assert_header_sent(r, "Content-Type: application/x-amz-json-1.1");
	assert_header_sent(r, "X-Amz-Target: Test.Run");
	assert_header_sent(r, "X-Test-Attempt: 0");
	assert_header_sent(r, "Content-Length: 23");
	assert_header_sent(r, "User-Agent: kiln/" KILN_VERSION);
	assert_int_equal(r->body_len, strlen(body));
	assert_memory_equal(r->body, body, strlen(body));
}

static void test_libcurl_default_expect_and_accept_headers_are_not_sent(void **state)
{
	static const struct reply replies[] = {{200}};
	static char body[2048]; /* large enough that libcurl would otherwise ask Expect */
	struct fx *f = *state;
	const struct seen *r;

	memset(body, 'b', sizeof(body));
	script(f, replies);
	set_url(f, "/put");
	f->cl.method = "PUT";
	f->cl.headers[0] = "Content-Type: application/octet-stream";
	f->cl.body = body;
	f->cl.body_len = sizeof(body);
	run(f, 0);
	r = server_request(&f->srv, 0);
	assert_false(sent_header_named(r, "Expect"));
	assert_false(sent_header_named(r, "Accept"));
	assert_int_equal(r->body_len, sizeof(body));
}

/* Nor is libcurl's form Content-Type on a body the caller did not type. */
static void test_no_content_type_is_sent_unless_prepared(void **state)
{
	static const struct reply replies[] = {{204}};
	struct fx *f = *state;
	const struct seen *r;

	script(f, replies);
	set_url(f, "/bucket/key");
	f->cl.method = "PUT";
	f->cl.body = "raw bytes";
	f->cl.body_len = strlen("raw bytes");
	run(f, 0);
	r = server_request(&f->srv, 0);
	if (sent_header_named(r, "Content-Type"))
		fail_msg("a Content-Type nobody prepared was sent:\n%s", r->headers);
	assert_memory_equal(r->body, "raw bytes", strlen("raw bytes"));
}

static void test_s3_request_id_header_is_captured(void **state)
{
	static const struct reply replies[] = {
	    {404, "x-amz-id-2: ZXh0ZW5kZWQ=\r\nx-amz-request-id: 4442587FB7D0A2F9\r\n", "<Error/>"},
	};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/bucket/key");
	run(f, 0);
	assert_int_equal(f->resp.status, 404);
	assert_string_equal(f->resp.request_id, "4442587FB7D0A2F9");
	assert_null(f->resp.error_type);
	assert_null(f->resp.content_type);
}

static void test_prepare_is_called_once_per_attempt_with_its_number(void **state)
{
	static const struct reply replies[] = {{500}, {503}, {200, NULL, "third time"}};
	struct fx *f = *state;
	size_t i;

	script(f, replies);
	set_url(f, "/again");
	run(f, 0);
	assert_int_equal(f->cl.nprepared, 3);
	assert_int_equal(f->cl.prepared[0], 0);
	assert_int_equal(f->cl.prepared[1], 1);
	assert_int_equal(f->cl.prepared[2], 2);
	/* What each prepare made is what went out. */
	assert_int_equal(server_requests(&f->srv), 3);
	for (i = 0; i < 3; i++) {
		char line[48];

		snprintf(line, sizeof(line), "X-Test-Attempt: %zu", i);
		assert_header_sent(server_request(&f->srv, i), line);
	}
}

static void test_transient_503_then_200_takes_two_attempts(void **state)
{
	static const struct reply replies[] = {
	    {503, "x-amzn-RequestId: first\r\n", "busy"},
	    {200, "x-amzn-RequestId: second\r\n", "fine"},
	};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 200);
	assert_string_equal(f->resp.body, "fine");
	assert_string_equal(f->resp.request_id, "second");
	assert_int_equal(f->attempts, 2);
	assert_int_equal(f->cl.ntransient, 2);
	assert_int_equal(server_requests(&f->srv), 2);
}

static void test_non_transient_400_is_returned_after_one_attempt(void **state)
{
	static const struct reply replies[] = {
	    {400, "x-amzn-ErrorType: ValidationException\r\n", "{\"message\":\"bad\"}"},
	    {200, NULL, "must not be reached"},
	};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 400);
	assert_string_equal(f->resp.body, "{\"message\":\"bad\"}");
	assert_string_equal(f->resp.error_type, "ValidationException");
	assert_int_equal(f->attempts, 1);
	assert_int_equal(f->cl.nprepared, 1);
	assert_int_equal(server_requests(&f->srv), 1);
}

static void test_persistent_500_stops_after_the_attempt_limit_with_the_last_answer(void **state)
{
	static const struct reply replies[] = {
	    {500, NULL, "one"},
	    {500, NULL, "two"},
	    {500, NULL, "three"},
	    {500, NULL, "four"},
	};
	struct fx *f = *state;

	setenv("KILN_HTTP_ATTEMPTS", "3", 1);
	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 500);
	assert_string_equal(f->resp.body, "three");
	assert_int_equal(f->attempts, 3);
	assert_int_equal(f->cl.nprepared, 3);
	assert_int_equal(server_requests(&f->srv), 3);
}

static void test_persistent_503_stops_at_the_calls_deadline(void **state)
{
	static const struct reply replies[] = {{503, NULL, "busy"}};
	struct fx *f = *state;

	/*
	 * 100 attempts allowed, 50 ms backoffs, 1 s to retry in: room for a
	 * second attempt on a loaded machine (an ASan build beside a parallel
	 * make), far less than 100 attempts' backoffs.
	 */
	setenv("KILN_HTTP_ATTEMPTS", "100", 1);
	setenv("KILN_HTTP_BACKOFF_MS", "50", 1);
	setenv("KILN_CALL_DEADLINE_MS", "1000", 1);
	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 503);
	assert_true(f->tries.out_of_time);
	assert_true(f->tries.retried);
	assert_false(f->tries.throttled);
	assert_int_equal(f->tries.deadline_ms, 1000);
	if (f->attempts < 2 || f->attempts >= 100 || f->tries.ms > 5000)
		fail_msg("%d attempts in %ld ms: not stopped by a 1 s deadline", f->attempts,
			 f->tries.ms);
	assert_int_equal(server_requests(&f->srv), f->attempts);
}

static void test_a_throttled_answer_slows_the_adaptive_rate(void **state)
{
	static const struct reply replies[] = {
	    {429, NULL, "slow down"},
	    {200, NULL, "ok"},
	};
	struct fx *f = *state;

	f->cl.rate = retry_rate_new();
	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 200);
	assert_int_equal(f->attempts, 2);
	assert_false(f->tries.throttled); /* the last answer was not */
	assert_true(retry_rate_fill(f->cl.rate) >= RETRY_RATE_MIN);
	retry_rate_free(f->cl.rate);
}

static void test_no_retry_is_made_once_the_retry_quota_is_spent(void **state)
{
	static const struct reply replies[] = {
	    {503, NULL, "busy"},
	    {200, NULL, "ok"},
	};
	struct fx *f = *state;

	f->cl.rate = retry_rate_new();
	while (retry_quota_take(f->cl.rate, false))
		;
	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 503);
	assert_int_equal(f->attempts, 1);
	assert_true(f->tries.no_quota);
	assert_int_equal(server_requests(&f->srv), 1);
	retry_rate_free(f->cl.rate);
}

static void test_a_persistent_429_is_reported_throttled(void **state)
{
	static const struct reply replies[] = {{429, NULL, "slow down"}};
	struct fx *f = *state;

	setenv("KILN_HTTP_ATTEMPTS", "2", 1);
	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->attempts, 2);
	assert_true(f->tries.throttled);
	assert_true(f->tries.retried);
	assert_false(f->tries.out_of_time);
}

static void test_retry_after_on_429_delays_the_next_attempt(void **state)
{
	static const struct reply replies[] = {
	    {429, "Retry-After: 1\r\n", "slow down"},
	    {200, NULL, "ok"},
	};
	struct fx *f = *state;
	long gap;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 200);
	assert_int_equal(f->attempts, 2);
	gap = ms_between(&server_request(&f->srv, 0)->at, &server_request(&f->srv, 1)->at);
	if (gap < 950)
		fail_msg("the second attempt came %ld ms after the first, not ~1000", gap);
}

static void test_retry_after_is_returned_with_the_last_answer(void **state)
{
	static const struct reply replies[] = {{429, "Retry-After: 7\r\n", "throttled"}};
	struct fx *f = *state;

	setenv("KILN_HTTP_ATTEMPTS", "1", 1);
	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 429);
	assert_int_equal(f->resp.retry_after, 7);
}

static void test_refused_connection_is_retried_then_names_the_url(void **state)
{
	struct fx *f = *state;
	char want[128];
	int port;

	f->dead_fd = loopback_socket(false, &port);
	assert_true(f->dead_fd >= 0);
	setenv("KILN_HTTP_ATTEMPTS", "3", 1);
	snprintf(f->cl.url, sizeof(f->cl.url), "http://127.0.0.1:%d/nowhere", port);
	run(f, -1);
	snprintf(want, sizeof(want), "cannot reach http://127.0.0.1:%d/nowhere: ", port);
	if (strncmp(f->err.msg, want, strlen(want)) != 0)
		fail_msg("expected \"%s...\", got: %s", want, f->err.msg);
	assert_string_equal(f->err.hint, "check the endpoint (AWS_ENDPOINT_URL) and the network");
	assert_int_equal(f->attempts, 3);
	assert_int_equal(f->cl.nprepared, 3);
	/* No response: transient() is never asked about one, and nothing is returned. */
	assert_int_equal(f->cl.ntransient, 0);
	assert_null(f->resp.body);
	assert_int_equal(f->resp.status, 0);
}

static void test_unreachable_endpoint_without_a_hint_gets_the_plain_one(void **state)
{
	struct fx *f = *state;
	int port;

	f->dead_fd = loopback_socket(false, &port);
	assert_true(f->dead_fd >= 0);
	setenv("KILN_HTTP_ATTEMPTS", "1", 1);
	snprintf(f->cl.url, sizeof(f->cl.url), "http://127.0.0.1:%d/nowhere", port);
	f->cl.no_hint = true;
	run(f, -1);
	assert_string_equal(f->err.hint, "check the endpoint and the network");
}

static void test_connection_dropped_without_answer_is_retried(void **state)
{
	static const struct reply replies[] = {{0, .hangup = true}, {200, NULL, "second"}};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_int_equal(f->resp.status, 200);
	assert_string_equal(f->resp.body, "second");
	assert_int_equal(f->attempts, 2);
}

static void test_timeout_is_a_transport_failure_naming_the_url(void **state)
{
	static const struct reply replies[] = {{200, NULL, "late", .delay_ms = 5000}};
	struct fx *f = *state;
	char want[128];

	setenv("KILN_HTTP_TIMEOUT_MS", "200", 1);
	setenv("KILN_HTTP_ATTEMPTS", "2", 1);
	script(f, replies);
	set_url(f, "/slow");
	run(f, -1);
	snprintf(want, sizeof(want), "cannot reach http://127.0.0.1:%d/slow: ", f->srv.port);
	assert_contains(f->err.msg, want);
	assert_contains(f->err.msg, "timed out");
	assert_int_equal(f->attempts, 2);
	assert_null(f->resp.body);
}

/*
 * The cap itself is exercised: 64 MiB over loopback takes well under a
 * second, and the server makes the body in 64 KiB pieces. One attempt, so
 * the message is checked apart from the retry policy.
 */
static void test_body_larger_than_the_cap_is_refused(void **state)
{
	static const struct reply replies[] = {{200, .pattern_len = CAP_BYTES + 1}};
	struct fx *f = *state;
	char want[160];

	setenv("KILN_HTTP_ATTEMPTS", "1", 1);
	script(f, replies);
	set_url(f, "/big");
	run(f, -1);
	snprintf(want, sizeof(want),
		 "the response from http://127.0.0.1:%d/big is larger than 64 MiB; refused",
		 f->srv.port);
	assert_string_equal(f->err.msg, want);
	assert_null(f->resp.body);
	assert_int_equal(f->resp.status, 0);
}

static void test_body_of_exactly_the_cap_is_accepted_intact(void **state)
{
	static const struct reply replies[] = {{200, .pattern_len = CAP_BYTES}};
	struct fx *f = *state;
	size_t i;

	script(f, replies);
	set_url(f, "/cap");
	run(f, 0);
	assert_int_equal(f->resp.status, 200);
	assert_int_equal(f->resp.body_len, CAP_BYTES);
	for (i = 0; i < CAP_BYTES; i++)
		if ((unsigned char)f->resp.body[i] != pattern_byte(i))
			fail_msg("body byte %zu differs", i);
	assert_int_equal(f->resp.body[CAP_BYTES], '\0');
}

static void test_one_mib_binary_body_arrives_intact(void **state)
{
	static const struct reply replies[] = {{200, .pattern_len = 1 << 20}};
	struct fx *f = *state;
	size_t i;

	script(f, replies);
	set_url(f, "/mib");
	run(f, 0);
	assert_int_equal(f->resp.body_len, 1 << 20);
	for (i = 0; i < (1 << 20); i++)
		if ((unsigned char)f->resp.body[i] != pattern_byte(i))
			fail_msg("body byte %zu differs", i);
}

static void test_redirect_is_returned_not_followed(void **state)
{
	static const struct reply replies[] = {
	    {302, "Location: /elsewhere\r\n", "moved"},
	    {200, NULL, "followed"},
	};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/here");
	run(f, 0);
	assert_int_equal(f->resp.status, 302);
	assert_string_equal(f->resp.body, "moved");
	assert_int_equal(f->attempts, 1);
	assert_int_equal(server_requests(&f->srv), 1);
	assert_string_equal(server_request(&f->srv, 0)->path, "/here");
}

static void test_non_http_schemes_are_refused_without_reading(void **state)
{
	struct fx *f = *state;

	setenv("KILN_HTTP_ATTEMPTS", "1", 1);
	snprintf(f->cl.url, sizeof(f->cl.url), "ftp://127.0.0.1:%d/", f->srv.port);
	run(f, -1);
	assert_contains(f->err.msg, f->cl.url);
	assert_null(f->resp.body);
	assert_int_equal(server_connections(&f->srv), 0);

	snprintf(f->cl.url, sizeof(f->cl.url), "file:///etc/passwd");
	run(f, -1);
	assert_contains(f->err.msg, "file:///etc/passwd");
	assert_null(f->resp.body);
	assert_int_equal(f->resp.status, 0);
}

/* http.h: retries are for transient answers and transport failures, not a refused scheme. */
static void test_refused_scheme_is_not_retried(void **state)
{
	struct fx *f = *state;

	snprintf(f->cl.url, sizeof(f->cl.url), "file:///etc/passwd");
	run(f, -1);
	assert_int_equal(f->cl.nprepared, 1);
	assert_int_equal(f->attempts, 1);
}

/* Nor an answer over the cap: fetching 64 MiB again only to refuse it again. */
static void test_body_larger_than_the_cap_is_not_fetched_again(void **state)
{
	static const struct reply replies[] = {{200, .pattern_len = CAP_BYTES + 1}};
	struct fx *f = *state;

	setenv("KILN_HTTP_ATTEMPTS", "2", 1);
	script(f, replies);
	set_url(f, "/big");
	run(f, -1);
	assert_int_equal(server_requests(&f->srv), 1);
	assert_int_equal(f->attempts, 1);
}

static void test_http_status_transient_is_429_and_5xx_only(void **state)
{
	static const long yes[] = {429, 500, 502, 503, 504, 599};
	static const long no[] = {200, 201, 204, 301, 302, 304, 400, 403, 404, 409, 428, 430};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(yes); i++)
		if (!http_status_transient(yes[i]))
			fail_msg("%ld should be transient", yes[i]);
	for (i = 0; i < ARRAY_SIZE(no); i++)
		if (http_status_transient(no[i]))
			fail_msg("%ld should not be transient", no[i]);
}

static void test_kept_alive_connection_is_reused_by_the_next_call(void **state)
{
	static const struct reply replies[] = {{200, NULL, "one"}, {200, NULL, "two"}};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	assert_string_equal(f->resp.body, "one");
	http_response_release(&f->resp);
	run(f, 0);
	assert_string_equal(f->resp.body, "two");
	assert_int_equal(server_requests(&f->srv), 2);
	assert_int_equal(server_connections(&f->srv), 1);
}

static void test_connection_closed_by_the_server_is_not_reused(void **state)
{
	static const struct reply replies[] = {{200, NULL, "one", .close = true},
					       {200, NULL, "two", .close = true}};
	struct fx *f = *state;

	script(f, replies);
	set_url(f, "/");
	run(f, 0);
	http_response_release(&f->resp);
	run(f, 0);
	assert_string_equal(f->resp.body, "two");
	assert_int_equal(server_connections(&f->srv), 2);
}

#define THREADS 8
#define CALLS 5

struct worker {
	struct fx *f;
	int id;
	int ok;
	char failure[1200];
};

/* No cmocka assertion off the main thread: a worker counts and says what went wrong. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < CALLS; i++) {
		struct client cl = {.method = "GET"};
		struct http_response resp = {0};
		struct kiln_error err = {{0}};
		char path[32];
		int rc;

		snprintf(path, sizeof(path), "/w%d/c%d", w->id, i);
		snprintf(cl.url, sizeof(cl.url), "http://127.0.0.1:%d%s", w->f->srv.port, path);
		rc = client_run(&cl, &resp, NULL, &err);
		if (rc == 0 && resp.status == 200 && strcmp(resp.body, path) == 0)
			w->ok++;
		else if (!w->failure[0])
			snprintf(w->failure, sizeof(w->failure), "%s: rc %d status %ld body %s: %s",
				 path, rc, resp.status, resp.body ? resp.body : "(none)", err.msg);
		http_response_release(&resp);
	}
	return NULL;
}

/* Run THREADS workers of CALLS calls each against f's server; the calls that succeeded. */
static int run_workers(struct fx *f)
{
	static const struct reply replies[] = {{200, .echo_path = true}};
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int i, ok = 0;

	script(f, replies);
	memset(w, 0, sizeof(w));
	for (i = 0; i < THREADS; i++) {
		w[i].f = f;
		w[i].id = i;
		if (pthread_create(&t[i], NULL, worker_main, &w[i]) != 0)
			fail_msg("pthread_create failed");
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ok += w[i].ok;
		if (w[i].failure[0])
			print_error("worker %d: %s\n", i, w[i].failure);
	}
	return ok;
}

/* Each call gets its own answer (the body echoes its path): no crossed wires. */
static void test_many_threads_share_the_client_safely(void **state)
{
	struct fx *f = *state;

	assert_int_equal(run_workers(f), THREADS * CALLS);
	assert_int_equal(server_requests(&f->srv), THREADS * CALLS);
}

/*
 * A thread looking for a connection holds none, so THREADS connections are
 * enough for any schedule; the slack is for libcurl's own timing only.
 */
static void test_concurrent_calls_reuse_kept_alive_connections(void **state)
{
	struct fx *f = *state;
	size_t conns;

	assert_int_equal(run_workers(f), THREADS * CALLS);
	conns = server_connections(&f->srv);
	if (conns > THREADS + THREADS / 2)
		fail_msg("%zu connections for %d calls from %d threads", conns, THREADS * CALLS,
			 THREADS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    http_test(test_ok_answer_returns_status_body_and_captured_headers),
	    http_test(test_request_carries_prepared_method_path_headers_and_body),
	    http_test(test_libcurl_default_expect_and_accept_headers_are_not_sent),
	    http_test(test_no_content_type_is_sent_unless_prepared),
	    http_test(test_s3_request_id_header_is_captured),
	    http_test(test_prepare_is_called_once_per_attempt_with_its_number),
	    http_test(test_transient_503_then_200_takes_two_attempts),
	    http_test(test_persistent_503_stops_at_the_calls_deadline),
	    http_test(test_a_throttled_answer_slows_the_adaptive_rate),
	    http_test(test_a_persistent_429_is_reported_throttled),
	    http_test(test_no_retry_is_made_once_the_retry_quota_is_spent),
	    http_test(test_non_transient_400_is_returned_after_one_attempt),
	    http_test(test_persistent_500_stops_after_the_attempt_limit_with_the_last_answer),
	    http_test(test_retry_after_on_429_delays_the_next_attempt),
	    http_test(test_retry_after_is_returned_with_the_last_answer),
	    http_test(test_refused_connection_is_retried_then_names_the_url),
	    http_test(test_unreachable_endpoint_without_a_hint_gets_the_plain_one),
	    http_test(test_connection_dropped_without_answer_is_retried),
	    http_test(test_timeout_is_a_transport_failure_naming_the_url),
	    http_test(test_body_larger_than_the_cap_is_refused),
	    http_test(test_body_of_exactly_the_cap_is_accepted_intact),
	    http_test(test_one_mib_binary_body_arrives_intact),
	    http_test(test_redirect_is_returned_not_followed),
	    http_test(test_non_http_schemes_are_refused_without_reading),
	    http_test(test_refused_scheme_is_not_retried),
	    http_test(test_body_larger_than_the_cap_is_not_fetched_again),
	    cmocka_unit_test(test_http_status_transient_is_429_and_5xx_only),
	    http_test(test_kept_alive_connection_is_reused_by_the_next_call),
	    http_test(test_connection_closed_by_the_server_is_not_reused),
	    http_test(test_many_threads_share_the_client_safely),
	    http_test(test_concurrent_calls_reuse_kept_alive_connections),
	};

	return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
