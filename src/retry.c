/*
 * retry.c - see retry.h.
 */
#include "retry.h"

#include "log.h"
#include "util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* A day: a deadline longer than that is a typo. */
#define DEADLINE_MAX_MS 86400000L
#define DEADLINE_DEFAULT_MS 300000L
/* botocore's measured rate: half-second buckets, the newest weighing 0.8. */
#define BUCKET_MS 500
#define SMOOTHING 0.8

static long real_now_ms(void *arg)
{
	struct timespec t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void real_sleep_ms(void *arg, long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (ms % 1000) * 1000000L};

	(void)arg;
	if (ms > 0)
		nanosleep(&ts, NULL);
}

static double real_uniform(void *arg)
{
	static _Thread_local unsigned seed;

	(void)arg;
	if (!seed)
		seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
	return rand_r(&seed) / ((double)RAND_MAX + 1);
}

const struct retry_clock retry_real_clock = {real_now_ms, real_sleep_ms, real_uniform, NULL};

long retry_backoff_ms(int attempt, long base_ms, long cap_ms, double u)
{
	long ms = base_ms > 0 ? base_ms : 0;
	int i;

	for (i = 0; i < attempt && ms < cap_ms; i++)
		ms *= 2;
	if (ms > cap_ms)
		ms = cap_ms;
	if (u < 0 || u >= 1)
		u = 0;
	return (long)(u * (double)(ms + 1));
}

static _Thread_local struct retry_call *current;

void retry_call_begin(struct retry_call *c, const struct retry_clock *clock)
{
	if (current) {
		*c = *current;
		c->owner = false;
		return;
	}
	c->clock = clock ? clock : &retry_real_clock;
	c->start_ms = c->clock->now_ms(c->clock->arg);
	c->deadline_ms = c->start_ms + log_env_long("KILN_CALL_DEADLINE_MS", DEADLINE_DEFAULT_MS,
						    DEADLINE_MAX_MS);
	c->owner = true;
	current = c;
}

void retry_call_end(struct retry_call *c)
{
	if (c->owner && current == c)
		current = NULL;
}

const struct retry_call *retry_call_current(void)
{
	return current;
}

long retry_call_elapsed_ms(const struct retry_call *c)
{
	return c->clock->now_ms(c->clock->arg) - c->start_ms;
}

long retry_call_left_ms(const struct retry_call *c)
{
	long left = c->deadline_ms - c->clock->now_ms(c->clock->arg);

	return left > 0 ? left : 0;
}

bool retry_call_sleep(const struct retry_call *c, long ms)
{
	if (ms > retry_call_left_ms(c))
		return false;
	c->clock->sleep_ms(c->clock->arg, ms);
	return true;
}

bool retry_pause(int attempt, long base_ms, long cap_ms)
{
	const struct retry_call *c = current;
	const struct retry_clock *clock = c ? c->clock : &retry_real_clock;
	long ms = retry_backoff_ms(attempt, base_ms, cap_ms, clock->uniform(clock->arg));

	if (c)
		return retry_call_sleep(c, ms);
	clock->sleep_ms(clock->arg, ms);
	return true;
}

struct retry_rate {
	pthread_mutex_t mu;
	bool limiting;	  /* since the first throttled answer */
	double fill;	  /* tokens a second */
	double tokens;	  /* below 0: sends already promised a token */
	long refilled_ms; /* when tokens were last added */
	double measured;  /* the send rate, smoothed over half-second buckets */
	long bucket_ms;	  /* the current bucket's start; -1 before the first send */
	unsigned sent;	  /* sends in the current bucket */
	int quota;	  /* the retry quota left */
};

struct retry_rate *retry_rate_new(void)
{
	struct retry_rate *r = xcalloc(1, sizeof(*r));

	pthread_mutex_init(&r->mu, NULL);
	r->bucket_ms = -1;
	r->quota = RETRY_QUOTA_MAX;
	return r;
}

void retry_rate_free(struct retry_rate *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->mu);
	free(r);
}

double retry_rate_fill(struct retry_rate *r)
{
	double fill;

	pthread_mutex_lock(&r->mu);
	fill = r->limiting ? r->fill : 0;
	pthread_mutex_unlock(&r->mu);
	return fill;
}

int retry_quota_take(struct retry_rate *r, bool no_answer)
{
	int cost = no_answer ? RETRY_QUOTA_TIMEOUT_COST : RETRY_QUOTA_COST;

	pthread_mutex_lock(&r->mu);
	if (r->quota < cost)
		cost = 0;
	r->quota -= cost;
	pthread_mutex_unlock(&r->mu);
	return cost;
}

void retry_quota_put_back(struct retry_rate *r, int amount)
{
	pthread_mutex_lock(&r->mu);
	r->quota += amount;
	if (r->quota > RETRY_QUOTA_MAX)
		r->quota = RETRY_QUOTA_MAX;
	pthread_mutex_unlock(&r->mu);
}

int retry_quota_left(struct retry_rate *r)
{
	int left;

	pthread_mutex_lock(&r->mu);
	left = r->quota;
	pthread_mutex_unlock(&r->mu);
	return left;
}

double retry_rate_decreased(double sending)
{
	double next = sending * RETRY_RATE_BETA;

	return next > RETRY_RATE_MIN ? next : RETRY_RATE_MIN;
}

double retry_rate_increased(double fill, double measured)
{
	double next = fill + RETRY_RATE_STEP, ceiling = 2 * measured;

	/* Never above twice what is sent (an idle client earns no credit), never lower. */
	if (ceiling < fill)
		ceiling = fill;
	return next < ceiling ? next : ceiling;
}

/* Count a send in its half-second bucket; a finished bucket updates the measured rate. */
static void measure(struct retry_rate *r, long now_ms)
{
	long bucket = now_ms - now_ms % BUCKET_MS;

	if (r->bucket_ms < 0)
		r->bucket_ms = bucket;
	if (bucket > r->bucket_ms) {
		double rate = r->sent * 1000.0 / (double)(bucket - r->bucket_ms);

		r->measured = rate * SMOOTHING + r->measured * (1 - SMOOTHING);
		r->sent = 0;
		r->bucket_ms = bucket;
	}
	r->sent++;
}

/* The rate kiln is sending at: measured, or this first bucket's when none is yet. */
static double sending_rate(const struct retry_rate *r)
{
	double m = r->measured > 0 ? r->measured : r->sent * 1000.0 / BUCKET_MS;

	return r->limiting && r->fill < m ? r->fill : m;
}

static void refill(struct retry_rate *r, long now_ms)
{
	double cap = r->fill > 1 ? r->fill : 1;

	if (now_ms > r->refilled_ms)
		r->tokens += (double)(now_ms - r->refilled_ms) * r->fill / 1000.0;
	if (r->tokens > cap)
		r->tokens = cap;
	r->refilled_ms = now_ms;
}

long retry_rate_take(struct retry_rate *r, long now_ms)
{
	long wait = 0;

	pthread_mutex_lock(&r->mu);
	measure(r, now_ms);
	if (r->limiting) {
		refill(r, now_ms);
		r->tokens -= 1;
		if (r->tokens < 0)
			wait = (long)(-r->tokens * 1000.0 / r->fill + 0.999);
	}
	pthread_mutex_unlock(&r->mu);
	return wait;
}

void retry_rate_give_back(struct retry_rate *r)
{
	pthread_mutex_lock(&r->mu);
	if (r->limiting)
		r->tokens += 1;
	pthread_mutex_unlock(&r->mu);
}

void retry_rate_answered(struct retry_rate *r, long now_ms, bool throttled)
{
	pthread_mutex_lock(&r->mu);
	if (throttled) {
		double fill = retry_rate_decreased(sending_rate(r));

		if (!r->limiting) {
			r->limiting = true;
			r->tokens = 0;
			r->refilled_ms = now_ms;
		} else {
			refill(r, now_ms);
		}
		r->fill = fill;
		log_debug(
		    "throttled: kiln's own rate for this service is now %.1f requests a second",
		    fill);
	} else if (r->limiting) {
		refill(r, now_ms);
		r->fill = retry_rate_increased(r->fill, r->measured);
	}
	pthread_mutex_unlock(&r->mu);
}

struct retry_bucket {
	pthread_mutex_t mu;
	double size, documented, refill;
	double tokens;	  /* below 0: promised to waiters */
	long refilled_ms; /* -1 before the first take */
};

struct retry_bucket *retry_bucket_new(double size, double refill)
{
	struct retry_bucket *b = xcalloc(1, sizeof(*b));

	pthread_mutex_init(&b->mu, NULL);
	b->size = size > 0 ? size : 1;
	b->documented = b->refill = refill > 0 ? refill : 1;
	b->tokens = b->size;
	b->refilled_ms = -1;
	return b;
}

void retry_bucket_free(struct retry_bucket *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b);
}

double retry_bucket_size(const struct retry_bucket *b)
{
	return b->size;
}

double retry_bucket_refill(struct retry_bucket *b)
{
	double r;

	pthread_mutex_lock(&b->mu);
	r = b->refill;
	pthread_mutex_unlock(&b->mu);
	return r;
}

static void bucket_refill(struct retry_bucket *b, long now_ms)
{
	if (b->refilled_ms >= 0 && now_ms > b->refilled_ms)
		b->tokens += (double)(now_ms - b->refilled_ms) * b->refill / 1000.0;
	if (b->tokens > b->size)
		b->tokens = b->size;
	if (b->refilled_ms < now_ms)
		b->refilled_ms = now_ms;
}

long retry_bucket_take(struct retry_bucket *b, double n, long now_ms)
{
	long wait = 0;

	if (n > b->size)
		n = b->size;
	pthread_mutex_lock(&b->mu);
	bucket_refill(b, now_ms);
	b->tokens -= n;
	/*
	 * RETRY_BUCKET_MARGIN later than the arithmetic says: the cloud's
	 * bucket counts from when a request arrived, a moment after kiln took
	 * its tokens, and a request a hair early is refused whole.
	 */
	if (b->tokens < 0)
		wait = (long)(-b->tokens * 1000.0 / b->refill * RETRY_BUCKET_MARGIN + 0.999);
	pthread_mutex_unlock(&b->mu);
	return wait;
}

void retry_bucket_give_back(struct retry_bucket *b, double n)
{
	pthread_mutex_lock(&b->mu);
	b->tokens += n;
	if (b->tokens > b->size)
		b->tokens = b->size;
	pthread_mutex_unlock(&b->mu);
}

void retry_bucket_answered(struct retry_bucket *b, long now_ms, bool throttled)
{
	pthread_mutex_lock(&b->mu);
	bucket_refill(b, now_ms);
	if (throttled) {
		double floor = b->documented / 10;

		if (b->tokens > 0)
			b->tokens = 0;
		b->refill = b->refill * RETRY_RATE_BETA > floor ? b->refill * RETRY_RATE_BETA : floor;
		log_debug("throttled: kiln now assumes this bucket refills %.2f tokens a second",
			  b->refill);
	} else if (b->refill < b->documented) {
		b->refill += b->documented / 10;
		if (b->refill > b->documented)
			b->refill = b->documented;
	}
	pthread_mutex_unlock(&b->mu);
}

void retry_call_defer(struct retry_call *c, long ms)
{
	if (ms <= 0)
		return;
	c->deadline_ms += ms;
	if (!c->owner && current && current != c)
		current->deadline_ms += ms;
}
