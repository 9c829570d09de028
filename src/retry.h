/*
 * retry.h - the one retry policy of a provider call: exponential backoff
 * with full jitter, one deadline per logical call, and a client-side send
 * rate that adapts to throttling, as botocore's "adaptive" retry mode does.
 *
 * Who retries what. A provider with a transport of its own (aws, through
 * http.c) retries a throttled, failed or lost request there, request by
 * request, under the logical call's deadline and its service's adaptive
 * rate and retry quota; when that gives up the provider answers
 * PROV_GAVE_UP, which nobody repeats. The engine (ENGINE_CALL) retries only PROV_RETRY, "not yet":
 * eventual consistency (a gateway EC2 does not show yet, a resource still
 * in use, a lost create that made nothing) and the sim's simulated 503 (the
 * sim has no transport), under the same deadline. So one layer retries any
 * one failure, and a throttled cloud gets fewer requests, not more.
 *
 * The logical call is what the engine asks a provider for (a create, a
 * read, one list page, one poll, the pre-flight): ENGINE_CALL begins it on
 * the calling thread (ENGINE_CALL_ONCE for a purchase, never retried), and
 * every request the provider makes for it shares its deadline. The
 * deadline travels with the thread because a provider context is one per
 * run, shared by every worker; a request made outside any logical call
 * (expand, metrics) is one of its own.
 *
 * The arithmetic takes its clock and dice as arguments, for the unit tests
 * (tests/test_retry.c).
 */
#ifndef KILN_RETRY_H
#define KILN_RETRY_H

#include <stdbool.h>

/* The time and the dice a retry reads: the real ones, or a test's. */
struct retry_clock {
	long (*now_ms)(void *arg); /* monotonic milliseconds */
	void (*sleep_ms)(void *arg, long ms);
	double (*uniform)(void *arg); /* uniform in [0, 1) */
	void *arg;
};

extern const struct retry_clock retry_real_clock;

/*
 * Full jitter: u (in [0, 1)) scaled to [0, min(cap, base * 2^attempt)]
 * milliseconds, attempt counting from 0 (AWS Architecture Blog,
 * "Exponential Backoff And Jitter").
 */
long retry_backoff_ms(int attempt, long base_ms, long cap_ms, double u);

/* One logical call: its start and its deadline, on the clock it reads. */
struct retry_call {
	const struct retry_clock *clock;
	long start_ms, deadline_ms;
	bool owner; /* began the thread's call (not nested in one) */
};

/*
 * Begin a logical call on this thread, with KILN_CALL_DEADLINE_MS (default
 * 300000) to retry in; nested in one already begun, it shares that one's
 * deadline. clock NULL: the real one. retry_call_end ends what began.
 */
void retry_call_begin(struct retry_call *c, const struct retry_clock *clock);
void retry_call_end(struct retry_call *c);
/* The calling thread's logical call; NULL outside any. */
const struct retry_call *retry_call_current(void);

/* Milliseconds since the call began, and left before its deadline (never below 0). */
long retry_call_elapsed_ms(const struct retry_call *c);
long retry_call_left_ms(const struct retry_call *c);
/*
 * Sleep ms and return true when the sleep ends before the deadline;
 * otherwise return false at once, without sleeping: the time is up.
 */
bool retry_call_sleep(const struct retry_call *c, long ms);
/*
 * The backoff before retry attempt + 1 of a loop, slept on the thread's
 * logical call: false, at once, when it would end past the call's deadline.
 * Outside a logical call only the loop's own bound holds.
 */
bool retry_pause(int attempt, long base_ms, long cap_ms);

/*
 * A client-side send rate that adapts to throttling: a token bucket, off
 * until the first throttled answer, whose fill rate then drops to 0.7 of
 * the rate kiln was sending at (multiplicative decrease, botocore's beta)
 * on each throttled answer, never below 0.5 requests a second, and grows by
 * 0.5 a second on each answer that was not throttled (additive increase),
 * up to twice the rate measured. One per service of a provider context,
 * shared by its threads, with the retry quota below.
 */
#define RETRY_RATE_MIN 0.5
#define RETRY_RATE_BETA 0.7
#define RETRY_RATE_STEP 0.5

struct retry_rate;

struct retry_rate *retry_rate_new(void);
void retry_rate_free(struct retry_rate *r);
/* The fill rate in requests a second; 0 while it limits nothing (before a throttled answer). */
double retry_rate_fill(struct retry_rate *r);
/*
 * One send at now_ms: the milliseconds it must wait for its token (0 when
 * the rate is not limiting). The token is taken: a caller that then does
 * not send gives it back with retry_rate_give_back.
 */
long retry_rate_take(struct retry_rate *r, long now_ms);
void retry_rate_give_back(struct retry_rate *r);
/* What the answer to a send said: throttled or not. */
void retry_rate_answered(struct retry_rate *r, long now_ms, bool throttled);
/*
 * The retry quota beside it, as botocore's standard mode keeps one per
 * client: RETRY_QUOTA_MAX to start with; a retry costs RETRY_QUOTA_COST
 * (RETRY_QUOTA_TIMEOUT_COST after no answer at all) and is not made when
 * the quota cannot pay; a call that succeeds puts back what its last retry
 * cost, or 1 when it needed none. When every call fails, retries stop
 * after 100 of them, whatever the number of calls and threads.
 */
#define RETRY_QUOTA_MAX 500
#define RETRY_QUOTA_COST 5
#define RETRY_QUOTA_TIMEOUT_COST 10

/* Pay for a retry (no_answer: after a lost connection or timeout): its cost, or 0 when the quota
 * cannot. */
int retry_quota_take(struct retry_rate *r, bool no_answer);
/*
 * Put amount back (up to RETRY_QUOTA_MAX): a call that succeeded, what its
 * last retry cost or 1; a retry not made after all, its cost.
 */
void retry_quota_put_back(struct retry_rate *r, int amount);
int retry_quota_left(struct retry_rate *r);
/* The fill rate after a throttled answer, and after one that was not. */
double retry_rate_decreased(double sending);
double retry_rate_increased(double fill, double measured);

/*
 * A token bucket a cloud documents for a kind of request (EC2's "Request
 * throttling for the Amazon EC2 API": a bucket per action category, and per
 * instance for RunInstances and TerminateInstances), kept on the client so
 * kiln waits for a token instead of sending a request the cloud would
 * refuse. It starts full, as the cloud's does; a take may promise tokens
 * not there yet (the count goes below 0) and says how long to wait for
 * them, so waiters queue in the order they asked. A throttled answer means
 * the cloud's bucket is empty (another client of the account spends it
 * too): the count drops to 0 and the refill to RETRY_RATE_BETA of itself,
 * never below a tenth of the documented one; each answer that was not
 * throttled gives back a tenth of the documented refill, up to it, as
 * botocore's adaptive mode decreases and increases its rate.
 */
struct retry_bucket;

/* A wait for tokens is this much longer than the refill arithmetic says (see retry.c). */
#define RETRY_BUCKET_MARGIN 1.02

/* A full bucket of size tokens refilled with refill a second (both > 0). */
struct retry_bucket *retry_bucket_new(double size, double refill);
void retry_bucket_free(struct retry_bucket *b);
double retry_bucket_size(const struct retry_bucket *b);
/* The refill it assumes now: the documented one, or less after throttling. */
double retry_bucket_refill(struct retry_bucket *b);
/*
 * Take n tokens at now_ms: the milliseconds to wait until they are there,
 * RETRY_BUCKET_MARGIN over (0 when they are). n above the size waits as for the size: the caller
 * splits what it sends so that no one request costs more than the bucket
 * holds.
 */
long retry_bucket_take(struct retry_bucket *b, double n, long now_ms);
/* n tokens taken but not spent (the request was not sent after all). */
void retry_bucket_give_back(struct retry_bucket *b, double n);
void retry_bucket_answered(struct retry_bucket *b, long now_ms, bool throttled);

/* What one request costs of one bucket. */
struct retry_spend {
	struct retry_bucket *bucket;
	double tokens;
};

/*
 * Push the deadline of the thread's logical call (c, and the call it is
 * nested in) back by ms: the time it spent waiting for its buckets' tokens
 * is kiln keeping to the cloud's documented rate, not time spent retrying.
 */
void retry_call_defer(struct retry_call *c, long ms);

#endif
