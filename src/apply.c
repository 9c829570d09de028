/*
 * apply.c - see apply.h. One mutex guards the operation table, the ready
 * queue and the state document; provider calls are made outside it.
 */
#include "apply.h"

#include <openssl/sha.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"
#include "graph_plan.h"
#include "jsonc.h"
#include "state.h"
#include "jsonw.h"
#include "log.h"
#include "signals.h"

enum op_state {
	OPS_BLOCKED,
	OPS_READY,
	OPS_RUNNING,
	OPS_WAITING,
	OPS_DONE,
	OPS_FAILED,
	OPS_SKIPPED,
};

struct op {
	enum plan_op_kind kind;
	enum op_state state;
	const char *addr;
	const char *label;
	const struct prov_type *t;
	const struct plan_change *change;
	char *id;
	size_t blockers; /* operations this one still waits for */
	size_t rank; /* operations on the longest path from this one to the end, itself included */
	double started;
	enum prov_wait_for wait_for;
	int wait_errors;  /* polls in a row that failed transiently */
	double waited;	  /* when its wait began (monotonic seconds) */
	double next_poll; /* when its wait is next due a poll */
	long interval_ms; /* the gap before that poll: doubles to the cap */
	int polls;	  /* polls its wait took */
	bool released;	  /* its create or update answered: what needs it only created went on */
};

/* A wait poll that keeps failing after its own retries fails the operations it covers. */
#define WAIT_ERRORS_MAX 20

struct exec {
	const struct apply_options *o;
	struct apply_result *res;
	struct engine *e;
	pthread_mutex_t mu;
	/*
	 * Two conditions: the waiter hears every change on cond, but an idle
	 * worker wakes on work only for an op made ready (one signal each) or
	 * the end. A broadcast to every worker on every completion had a
	 * hundred workers queue on the mutex for each finished operation.
	 */
	pthread_cond_t cond;
	pthread_cond_t work;
	struct op *ops;
	size_t n;
	struct graph *order; /* node i is ops[i]; it depends on what it waits for */
	/*
	 * The ready operations, a heap: the longest remaining path first (then
	 * plan order), so what the rest waits on starts before what nothing
	 * waits on. With fewer workers than ready operations, plan order had a
	 * hundred independent buckets run before the role that three levels of
	 * the graph hang from.
	 */
	size_t *ready;
	size_t nready, rcap;
	size_t terminal;    /* ops done, failed or skipped */
	bool wait_kick;	    /* an operation started waiting to be gone: poll at once */
	bool wait_new;	    /* an operation started waiting to be ready: see when it is due */
	long poll_first_ms; /* the first poll of a wait, this long after its call */
	long poll_cap_ms;   /* the longest gap between two polls (KILN_POLL_MS) */
	size_t running;
	size_t waiting;
	bool stopping; /* interrupted: dispatch nothing more */
	unsigned long calls0;
	char run_id[37]; /* this run's uuid: idempotency tokens never repeat across runs */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void emit(struct exec *x, struct op *op, enum apply_event_kind kind, const char *error)
{
	struct apply_event ev = {
	    .kind = kind,
	    .address = op->addr,
	    .op = op->label,
	    .id = op->id,
	    .elapsed = op->started > 0 ? now_s() - op->started : 0,
	    .error = kind == APPLY_PENDING ? NULL : error,
	    .waiting_for = kind == APPLY_PENDING ? error : NULL,
	    .total = x->n,
	};

	if (x->o->event)
		x->o->event(x->o->event_arg, &ev);
}

static void add_op(struct exec *x, const struct plan_op *p)
{
	struct op *op = &x->ops[x->n++];

	op->kind = p->kind;
	op->addr = p->addr;
	op->change = p->change;
	op->label = p->label;
	op->t = provider_type(x->e->prov, p->change->type);
	op->id = p->id ? xstrdup(p->id) : NULL;
}

/* The operations waiting for op: n of them. */
static const size_t *op_next(const struct exec *x, const struct op *op, size_t *n)
{
	return graph_users(x->order, (size_t)(op - x->ops), n);
}

static json_t *recorded(struct exec *x)
{
	return state_resources(x->o->state);
}

/*
 * The sensitive attribute names present in attrs, for the state's
 * "sensitive": the type's table and what the desired resource lists.
 */
static json_t *sensitive_names(const struct prov_type *t, const json_t *attrs, const json_t *listed)
{
	json_t *out = json_array(), *n;
	size_t i;

	for (i = 0; i < t->nattrs; i++)
		if (t->attrs[i].sensitive && json_object_get(attrs, t->attrs[i].name))
			json_array_append_new(out, json_string(t->attrs[i].name));
	json_array_foreach(listed, i, n)
	{
		const char *name = json_string_value(n);
		if (name && json_object_get(attrs, name) && !provider_type_attr(t, name))
			json_array_append_new(out, json_string(name));
	}
	return out;
}

/* Called with the mutex held: write a live object into the state and checkpoint. */
static void record_live(struct exec *x, struct op *op, const json_t *live)
{
	const json_t *deps = op->change->deps;
	json_t *attrs = json_object_get(live, "attrs"), *r;
	const struct prov_type *t = op->t;
	size_t i;

	if (!attrs)
		attrs = json_object();
	else
		json_incref(attrs);
	json_t *listed = json_object_get(json_object_get(x->e->desired, op->addr), "sensitive");
	json_t *prev = json_object_get(recorded(x), op->addr), *n;

	if (!listed)
		listed = json_object_get(prev, "sensitive");
	/* Sensitive values the provider did not return again stay as recorded. */
	json_array_foreach(json_object_get(prev, "sensitive"), i, n)
	{
		json_t *old = json_object_get(json_object_get(prev, "attrs"), json_string_value(n));
		if (old && !json_object_get(attrs, json_string_value(n)))
			json_object_set(attrs, json_string_value(n), old);
	}
	r = json_pack("{s:s, s:O, s:o, s:o}", "type", t->name, "id", json_object_get(live, "id"),
		      "attrs", attrs, "deps", deps ? jsonc_share(deps) : json_array());
	json_object_set_new(r, "sensitive", sensitive_names(t, attrs, listed));
	json_object_set_new(recorded(x), op->addr, r);
	free(op->id);
	op->id = xstrdup(json_string_value(json_object_get(live, "id")));
	if (x->o->checkpoint)
		x->o->checkpoint(x->o->checkpoint_arg, op->addr, r);
}

static void record_gone(struct exec *x, struct op *op)
{
	json_t *r = json_object_get(recorded(x), op->addr);
	const char *rid = json_string_value(json_object_get(r, "id"));

	/* A replace may already have recorded its new object at this address. */
	if (!r || (op->kind != PLAN_OP_RELEASE && rid && op->id && strcmp(rid, op->id) != 0))
		return;
	json_object_del(recorded(x), op->addr);
	if (x->o->checkpoint)
		x->o->checkpoint(x->o->checkpoint_arg, op->addr, NULL);
}

static bool all_settled(struct exec *x)
{
	if (x->stopping)
		return x->running == 0 && x->waiting == 0;
	return x->terminal == x->n;
}

/* Whether ready op a goes before ready op b. */
static bool ready_before(const struct exec *x, size_t a, size_t b)
{
	if (x->ops[a].rank != x->ops[b].rank)
		return x->ops[a].rank > x->ops[b].rank;
	return a < b;
}

static void push_ready(struct exec *x, size_t i)
{
	size_t at = x->nready;

	kiln_array_grow((void **)&x->ready, &x->rcap, x->nready + 1, sizeof(size_t));
	x->nready++;
	while (at > 0 && ready_before(x, i, x->ready[(at - 1) / 2])) {
		x->ready[at] = x->ready[(at - 1) / 2];
		at = (at - 1) / 2;
	}
	x->ready[at] = i;
	x->ops[i].state = OPS_READY;
	pthread_cond_signal(&x->work);
}

static size_t pop_ready(struct exec *x)
{
	size_t top = x->ready[0], last = x->ready[--x->nready], at = 0, c;

	for (;;) {
		c = 2 * at + 1;
		if (c >= x->nready)
			break;
		if (c + 1 < x->nready && ready_before(x, x->ready[c + 1], x->ready[c]))
			c++;
		if (!ready_before(x, x->ready[c], last))
			break;
		x->ready[at] = x->ready[c];
		at = c;
	}
	if (x->nready)
		x->ready[at] = last;
	return top;
}

/*
 * Each op's rank: 1 plus the largest rank of the ops waiting for it
 * (graph_ranks). An op on a cycle (which build refuses when nothing can
 * start) keeps rank 1.
 */
static void rank_ops(struct exec *x)
{
	size_t *rank = xcalloc(x->n + 1, sizeof(*rank)), i;

	graph_ranks(x->order, rank);
	for (i = 0; i < x->n; i++)
		x->ops[i].rank = rank[i];
	free(rank);
}

/* With the mutex held: the run may have settled or stopped; everyone looks. */
static void wake_all(struct exec *x)
{
	pthread_cond_broadcast(&x->cond);
	pthread_cond_broadcast(&x->work);
}

static void skip_dependants(struct exec *x, struct op *op, const char *why)
{
	size_t i, nnext;
	const size_t *next = op_next(x, op, &nnext);

	for (i = 0; i < nnext; i++) {
		struct op *n = &x->ops[next[i]];

		if (n->state != OPS_BLOCKED && n->state != OPS_READY)
			continue;
		n->state = OPS_SKIPPED;
		x->terminal++;
		x->res->skipped++;
		emit(x, n, APPLY_SKIPPED, why);
		skip_dependants(x, n, why);
	}
}

/* The provider may grant less than asked (a non-gang group short of capacity): say so. */
static void check_landed(struct exec *x, struct op *op)
{
	json_t *live = json_object_get(json_object_get(recorded(x), op->addr), "attrs");
	json_t *want = json_object_get(json_object_get(x->e->desired, op->addr), "attrs");
	json_t *changed, *name;
	size_t i;

	if (!live || !want)
		return;
	changed = diff_changed_inputs(op->t, live, want);
	json_array_foreach(changed, i, name)
	{
		const char *k = json_string_value(name);
		char *got =
		    jsonw_dumps(json_object_get(live, k), JSON_ENCODE_ANY | JSON_COMPACT, NULL);
		char *asked =
		    jsonw_dumps(json_object_get(want, k), JSON_ENCODE_ANY | JSON_COMPACT, NULL);

		json_array_append_new(
		    x->res->warnings,
		    json_sprintf("%s: %s is %s, the spec asks for %s; the next plan "
				 "shows what remains",
				 op->addr, k, got ? got : "null", asked ? asked : "null"));
		free(got);
		free(asked);
	}
	json_decref(changed);
}

/*
 * With the mutex held: one fewer blocker for each operation waiting for op,
 * those that need it only created (created true: its call answered) or the
 * rest (false: it is done), pushing those now free to start.
 */
static void release_users(struct exec *x, struct op *op, bool created)
{
	size_t i, nnext, me = (size_t)(op - x->ops);
	const size_t *next = op_next(x, op, &nnext);

	for (i = 0; i < nnext; i++) {
		struct op *n = &x->ops[next[i]];
		bool early = graph_edge_kind(x->order, next[i], me) == GRAPH_EDGE_CREATED;

		if (created && !early)
			continue;
		if (!created && early && op->released)
			continue; /* let go when its call answered */
		if (n->state == OPS_BLOCKED && --n->blockers == 0)
			push_ready(x, next[i]);
	}
	if (created)
		op->released = true;
}

/* With the mutex held: op finished (ok or not); release or skip what waits for it. */
static void finish(struct exec *x, struct op *op, bool ok, const char *error)
{
	op->state = ok ? OPS_DONE : OPS_FAILED;
	x->terminal++;
	if (ok) {
		x->res->done++;
		if (op->kind == PLAN_OP_CREATE || op->kind == PLAN_OP_UPDATE)
			check_landed(x, op);
		switch (op->kind) {
		case PLAN_OP_CREATE:
			if (strcmp(op->label, "replace") == 0)
				x->res->replaced++;
			else
				x->res->created++;
			break;
		case PLAN_OP_UPDATE:
			x->res->updated++;
			break;
		case PLAN_OP_ADOPT:
			if (strcmp(op->label, "adopt") == 0)
				x->res->adopted++;
			break;
		case PLAN_OP_RELEASE:
			x->res->released++;
			break;
		case PLAN_OP_DELETE:
			if (strcmp(op->label, "delete") == 0)
				x->res->deleted++;
			break;
		case PLAN_OP_DELETE_DUP:
			x->res->deleted++;
			break;
		}
		emit(x, op, APPLY_DONE, NULL);
		release_users(x, op, false);
	} else {
		char *why = xasprintf("%s failed", op->addr);

		x->res->failed++;
		json_array_append_new(x->res->errors,
				      json_pack("{s:s, s:s, s:s}", "address", op->addr, "op",
						op->label, "error", error ? error : "failed"));
		emit(x, op, APPLY_FAILED, error);
		skip_dependants(x, op, why);
		free(why);
	}
	if (all_settled(x))
		wake_all(x);
	else
		pthread_cond_broadcast(&x->cond);
}

static void token_for(struct exec *x, const char *addr, char out[41])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	const char *lineage = state_lineage(x->o->state);
	char *seed = xasprintf("%s|%s|%s|%lld|%s", lineage ? lineage : "", x->e->workspace, addr,
			       (long long)state_serial(x->o->state), x->run_id);
	int i;

	SHA256((const unsigned char *)seed, strlen(seed), md);
	free(seed);
	memcpy(out, "kiln-", 5);
	for (i = 0; i < 17; i++)
		snprintf(out + 5 + 2 * i, 3, "%02x", md[i]);
	out[39] = '\0';
}

/*
 * What a create needs to know of its dependencies (their ids and computed
 * attributes, as recorded so far), copied under the lock: workers record
 * results into the state while this one runs.
 */
static json_t *deps_recorded(struct exec *x, const json_t *desired)
{
	json_t *out = json_object(), *dep;
	size_t i;

	pthread_mutex_lock(&x->mu);
	json_array_foreach(json_object_get(desired, "deps"), i, dep)
	{
		json_t *r = json_object_get(recorded(x), json_string_value(dep));

		if (r)
			json_object_set_new(out, json_string_value(dep), json_deep_copy(r));
	}
	pthread_mutex_unlock(&x->mu);
	return out;
}

static void changed_names(const struct plan_change *c, const char ***names, size_t *n)
{
	const json_t *rows = c->attributes, *row;
	size_t i;

	*n = json_array_size(rows);
	*names = xcalloc(*n + 1, sizeof(**names));
	json_array_foreach(rows, i, row)(*names)[i] =
	    json_string_value(json_object_get(row, "name"));
}

/* Run one operation's provider call(s), without the mutex. */
static int run_op(struct exec *x, struct op *op, json_t **live, struct kiln_error *err)
{
	const struct prov_type *t = op->t;
	json_t *d = json_object_get(x->e->desired, op->addr);
	int rc = PROV_OK;

	*live = NULL;
	switch (op->kind) {
	case PLAN_OP_CREATE: {
		char token[41];
		json_t *deps = deps_recorded(x, d);
		struct prov_create c = {
		    .address = op->addr,
		    .name = op->change->name,
		    .attrs = json_object_get(d, "attrs"),
		    .token = token,
		    .deps = deps,
		    .guard = x->o->guard,
		    .guard_arg = x->o->guard_arg,
		};

		if (!d) {
			kiln_error_set(err, "%s is not in the spec any more", op->addr);
			kiln_error_hint(err, "the plan and the spec disagree; make a new plan");
			return PROV_ERROR;
		}
		token_for(x, op->addr, token);
		if (engine_call_retried(t, VERB_CREATE))
			ENGINE_CALL(rc, err, t->create(x->e->ctx, &x->e->scope, &c, live, err));
		else
			ENGINE_CALL_ONCE(rc, t->create(x->e->ctx, &x->e->scope, &c, live, err));
		json_decref(deps);
		return rc;
	}
	case PLAN_OP_UPDATE: {
		const char **names;
		size_t n;

		if (!d) {
			kiln_error_set(err, "%s is not in the spec any more", op->addr);
			return PROV_ERROR;
		}
		changed_names(op->change, &names, &n);
		ENGINE_CALL(rc, err,
			    t->update(x->e->ctx, &x->e->scope, op->id, json_object_get(d, "attrs"),
				      names, n, live, err));
		free(names);
		return rc;
	}
	case PLAN_OP_ADOPT:
		ENGINE_CALL(rc, err, t->read(x->e->ctx, op->id, live, err));
		return rc;
	case PLAN_OP_DELETE:
	case PLAN_OP_DELETE_DUP:
		ENGINE_CALL(rc, err, t->delete (x->e->ctx, op->id, err));
		/* Already gone is what we wanted. */
		return rc == PROV_NOTFOUND ? PROV_OK : rc;
	case PLAN_OP_RELEASE:
		return PROV_OK;
	}
	return PROV_ERROR;
}

static bool live_pending(const json_t *live)
{
	const char *s = json_string_value(json_object_get(live, "status"));

	return s && strcmp(s, "ready") != 0;
}

/*
 * With the mutex held: op starts waiting (to be ready, or gone). Its first
 * poll comes soon after the call (most of what a cloud makes is ready
 * within a second or two, and a delete is confirmed at once), the gap then
 * doubles up to the cap (KILN_POLL_MS).
 */
static void start_wait(struct exec *x, struct op *op, enum prov_wait_for what)
{
	op->state = OPS_WAITING;
	op->wait_for = what;
	op->waited = now_s();
	op->polls = 0;
	op->interval_ms = what == WAIT_GONE ? 0 : x->poll_first_ms;
	op->next_poll = op->waited + (double)op->interval_ms / 1000.0;
	x->waiting++;
	/* A delete is confirmed now; a new wait may be due before the waiter's next poll. */
	if (what == WAIT_GONE)
		x->wait_kick = true;
	else
		x->wait_new = true;
	emit(x, op, APPLY_PENDING, what == WAIT_GONE ? "gone" : "ready");
}

static void complete_call(struct exec *x, struct op *op, int rc, json_t *live,
			  const struct kiln_error *err)
{
	bool deleting = op->kind == PLAN_OP_DELETE || op->kind == PLAN_OP_DELETE_DUP;

	if (rc != PROV_OK) {
		char *text =
		    err->hint[0] ? xasprintf("%s (%s)", err->msg, err->hint) : xstrdup(err->msg);

		finish(x, op, false, text);
		free(text);
		return;
	}
	if (op->kind == PLAN_OP_CREATE || op->kind == PLAN_OP_UPDATE || op->kind == PLAN_OP_ADOPT) {
		record_live(x, op, live);
		if (op->kind != PLAN_OP_ADOPT && live_pending(live)) {
			start_wait(x, op, WAIT_READY);
			/* Created: what needs no more of it starts now, during its wait. */
			release_users(x, op, true);
			pthread_cond_broadcast(&x->cond);
			return;
		}
	} else if (deleting) {
		/*
		 * Gone or going: wait until it is gone, so what it used can go
		 * next. Most deletes are done when the call returns: start_wait
		 * confirms it now, not a poll later.
		 */
		start_wait(x, op, WAIT_GONE);
		pthread_cond_broadcast(&x->cond);
		return;
	} else if (op->kind == PLAN_OP_RELEASE) {
		record_gone(x, op);
	}
	finish(x, op, true, NULL);
}

/* Nothing can run and nothing is in flight, yet work remains: a cycle. Skip it. */
static void stall(struct exec *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		if (x->ops[i].state == OPS_BLOCKED) {
			x->ops[i].state = OPS_SKIPPED;
			x->terminal++;
			x->res->skipped++;
			emit(x, &x->ops[i], APPLY_SKIPPED,
			     "its operations wait for each other in a cycle");
		}
	}
	wake_all(x);
}

static void *worker(void *arg)
{
	struct exec *x = arg;
	struct kiln_error err;
	json_t *live;
	struct op *op;
	size_t i;
	int rc;

	pthread_mutex_lock(&x->mu);
	for (;;) {
		if (!x->stopping && signals_interrupted())
			x->stopping = true;
		if (all_settled(x))
			break;
		if (!x->stopping && x->nready == 0 && x->running == 0 && x->waiting == 0) {
			stall(x);
			continue;
		}
		if (x->stopping || x->nready == 0) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100 * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&x->work, &x->mu, &ts);
			continue;
		}
		i = pop_ready(x);
		op = &x->ops[i];
		op->state = OPS_RUNNING;
		op->started = now_s();
		x->running++;
		pthread_mutex_unlock(&x->mu);
		/* Outside the lock: printing must not hold up the other workers. */
		emit(x, op, APPLY_START, NULL);

		memset(&err, 0, sizeof(err));
		rc = run_op(x, op, &live, &err);

		pthread_mutex_lock(&x->mu);
		x->running--;
		complete_call(x, op, rc, live, &err);
		json_decref(live);
	}
	wake_all(x);
	pthread_mutex_unlock(&x->mu);
	return NULL;
}

/*
 * The polling schedule: a wait's first poll comes poll_first_ms after its
 * call (KILN_POLL_FIRST_MS: default an eighth of the cap, at least 10 ms),
 * each next one twice as long after, up to KILN_POLL_MS.
 */
static void poll_schedule(struct exec *x)
{
	long cap = log_env_long("KILN_POLL_MS", x->e->prov->simulated ? 25 : 2000, 600000);
	long first = cap / 8 > 10 ? cap / 8 : 10;

	x->poll_cap_ms = cap;
	x->poll_first_ms = log_env_long("KILN_POLL_FIRST_MS", first < cap ? first : cap, 600000);
	if (x->poll_first_ms > cap)
		x->poll_first_ms = cap;
}

/* With the mutex held: op stays pending after a poll; it is next due a longer gap later. */
static void back_off(struct exec *x, struct op *op, bool throttled)
{
	long next = op->interval_ms ? op->interval_ms * 2 : x->poll_first_ms;

	/* A throttled or failing poll waits the longest gap: the API asked for less. */
	op->interval_ms = throttled || next > x->poll_cap_ms ? x->poll_cap_ms : next;
	op->next_poll = now_s() + (double)op->interval_ms / 1000.0;
}

/* With the mutex held: the wait is over; say in the debug trace how long it took. */
static void wait_over(struct exec *x, struct op *op)
{
	x->waiting--;
	log_debug("%s: %s after %d poll%s in %.1fs", op->addr,
		  op->wait_for == WAIT_GONE ? "gone" : "ready", op->polls,
		  op->polls == 1 ? "" : "s", now_s() - op->waited);
}

/*
 * With the mutex held: which types and directions have a waiting op due a
 * poll, due[2 * type index + direction] (one pass over the ops).
 */
static bool *due_polls(struct exec *x, double now)
{
	bool *due = xcalloc(2 * x->e->prov->ntypes + 1, sizeof(*due));
	size_t i;

	for (i = 0; i < x->n; i++) {
		struct op *op = &x->ops[i];

		if (op->state == OPS_WAITING && op->next_poll <= now)
			due[2 * (size_t)(op->t - x->e->prov->types) + (size_t)op->wait_for] = true;
	}
	return due;
}

/* With the mutex held: the earliest time a waiting op is due a poll, or 0 with none. */
static double next_due(struct exec *x)
{
	double at = 0;
	size_t i;

	for (i = 0; i < x->n; i++)
		if (x->ops[i].state == OPS_WAITING && (at == 0 || x->ops[i].next_poll < at))
			at = x->ops[i].next_poll;
	return at;
}

/*
 * One batched wait per type and direction that has an operation due a
 * poll, over every operation of that type and direction waiting (due or
 * not: the call costs the same).
 */
static void poll_waiting(struct exec *x)
{
	size_t ti, i, n;
	bool *due;
	int dir;

	pthread_mutex_lock(&x->mu);
	due = due_polls(x, now_s());
	pthread_mutex_unlock(&x->mu);
	for (ti = 0; ti < x->e->prov->ntypes; ti++) {
		const struct prov_type *t = &x->e->prov->types[ti];

		for (dir = WAIT_READY; dir <= WAIT_GONE; dir++) {
			struct prov_wait *w;
			size_t *which;
			struct kiln_error err = {0};
			int rc;

			if (!due[2 * ti + (size_t)dir])
				continue;
			pthread_mutex_lock(&x->mu);
			w = xcalloc(x->waiting + 1, sizeof(*w));
			which = xcalloc(x->waiting + 1, sizeof(*which));
			for (i = 0, n = 0; i < x->n && n < x->waiting; i++) {
				struct op *op = &x->ops[i];
				if (op->state == OPS_WAITING && op->t == t &&
				    (int)op->wait_for == dir) {
					w[n].id = op->id;
					which[n++] = i;
				}
			}
			pthread_mutex_unlock(&x->mu);
			if (n == 0) {
				free(w);
				free(which);
				continue;
			}
			ENGINE_CALL(rc, &err,
				    t->wait(x->e->ctx, (enum prov_wait_for)dir, w, n, &err));
			pthread_mutex_lock(&x->mu);
			for (i = 0; i < n; i++) {
				struct op *op = &x->ops[which[i]];

				if (op->state != OPS_WAITING)
					continue;
				op->polls++;
				if (prov_status_transient(rc) &&
				    ++op->wait_errors < WAIT_ERRORS_MAX) {
					/* the poll failed (throttled), not the operation: later */
					log_debug("%s: poll %d failed (%s); next in %lds", op->addr,
						  op->polls, err.msg, x->poll_cap_ms / 1000);
					back_off(x, op, true);
					continue;
				}
				if (rc != PROV_OK) {
					wait_over(x, op);
					finish(x, op, false, err.msg);
					continue;
				}
				op->wait_errors = 0;
				if (w[i].state == WAIT_PENDING) {
					back_off(x, op, false);
					continue;
				}
				wait_over(x, op);
				if (w[i].state == WAIT_FAILED) {
					finish(x, op, false, w[i].err.msg);
				} else {
					if (dir == WAIT_READY && w[i].live)
						record_live(x, op, w[i].live);
					if (dir == WAIT_GONE)
						record_gone(x, op);
					finish(x, op, true, NULL);
				}
			}
			pthread_mutex_unlock(&x->mu);
			for (i = 0; i < n; i++)
				json_decref(w[i].live);
			free(w);
			free(which);
		}
	}
	free(due);
}

static void *waiter(void *arg)
{
	struct exec *x = arg;
	bool done;

	for (;;) {
		pthread_mutex_lock(&x->mu);
		if (!x->stopping && signals_interrupted())
			x->stopping = true;
		if (x->stopping && x->waiting) {
			/* Interrupted: what is still coming up is recorded already; leave it. */
			size_t i;
			for (i = 0; i < x->n; i++) {
				if (x->ops[i].state == OPS_WAITING) {
					x->ops[i].state = OPS_SKIPPED;
					x->terminal++;
					x->res->skipped++;
					emit(x, &x->ops[i], APPLY_SKIPPED,
					     "interrupted while waiting; recorded as it was");
				}
			}
			x->waiting = 0;
			wake_all(x);
		}
		done = all_settled(x);
		if (!done) {
			struct timespec until;
			double due = next_due(x), now = now_s();
			/* Until the next poll is due; none waiting: a cap's gap, or a wake. */
			long ms = due == 0     ? x->poll_cap_ms
				  : due <= now ? 0
					       : (long)((due - now) * 1000.0) + 1;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += ms / 1000;
			until.tv_nsec += (ms % 1000) * 1000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			while (!x->wait_kick && !x->wait_new && !all_settled(x) &&
			       pthread_cond_timedwait(&x->cond, &x->mu, &until) != ETIMEDOUT)
				;
			x->wait_kick = false;
			done = all_settled(x);
			if (!done && x->wait_new) {
				/* Look again at when the next poll is due, before polling. */
				x->wait_new = false;
				pthread_mutex_unlock(&x->mu);
				continue;
			}
		}
		pthread_mutex_unlock(&x->mu);
		if (done)
			return NULL;
		poll_waiting(x);
	}
}

/* No-ops need no call: the refreshed attributes replace the recorded ones. */
static void refresh_recorded(struct exec *x, const struct plan_change *c)
{
	json_t *r = json_object_get(recorded(x), c->address);
	const json_t *before = c->before, *deps;
	json_t *attrs, *v;
	const char *k;

	if (!r || !json_is_object(before))
		return;
	attrs = json_object_get(r, "attrs");
	if (!json_is_object(attrs)) {
		attrs = json_object();
		json_object_set_new(r, "attrs", attrs);
	}
	/* Sensitive values are null in a plan: keep the recorded (sealed) ones. */
	json_object_foreach_const(before, k, v) if (!json_is_null(v) || !json_object_get(attrs, k))
	    json_object_set(attrs, k, v);
	/* Nothing changes, so what it depends on does not either: keep the recorded deps. */
	deps = c->deps;
	if (deps && !json_object_get(r, "deps"))
		json_object_set_new(r, "deps", jsonc_share(deps));
}

static int build(struct exec *x, struct kiln_error *err)
{
	const struct plan_view *plan = x->o->plan;
	struct plan_op *steps;
	size_t i, k, n = plan->nchanges;

	x->ops = xcalloc(2 * n + 1, sizeof(*x->ops));
	steps = xcalloc(2 * n + 1, sizeof(*steps));
	graph_plan_forget_drifted(x->o->plan, recorded(x));
	for (i = 0; i < n; i++) {
		const struct plan_change *rc = &plan->changes[i];
		size_t got, at = x->n;

		if (!provider_type(x->e->prov, rc->type)) {
			kiln_error_set(err, "the plan names %s, whose type the %s provider lacks",
				       rc->address, x->e->prov->name);
			free(steps);
			return -1;
		}
		got = graph_plan_ops(rc, recorded(x), x->o->keep_secrets, &steps[at]);
		if (got == 0)
			refresh_recorded(x, rc);
		for (k = 0; k < got; k++)
			add_op(x, &steps[at + k]);
	}
	x->order = graph_plan_order(steps, x->n, recorded(x));
	free(steps);
	for (i = 0; i < x->n; i++)
		graph_deps(x->order, i, &x->ops[i].blockers);
	rank_ops(x);
	for (i = 0; i < x->n; i++)
		if (x->ops[i].blockers == 0)
			push_ready(x, i);
	if (x->nready == 0 && x->n > 0) {
		kiln_error_set(err, "the plan's operations wait for each other in a cycle");
		return -1;
	}
	return 0;
}

size_t apply_count_ops(const struct plan_view *plan)
{
	size_t i, n = 0;

	for (i = 0; i < plan->nchanges; i++)
		if (plan->changes[i].action != PLAN_NO_OP || plan->changes[i].importing)
			n++;
	return n;
}

int apply_run(const struct apply_options *o, struct apply_result *res)
{
	struct exec x = {.o = o, .res = res, .e = o->engine};
	struct kiln_error err = {0};
	pthread_t *threads = NULL, wt;
	size_t i, nthreads;

	memset(res, 0, sizeof(*res));
	res->errors = json_array();
	res->warnings = json_array();
	pthread_mutex_init(&x.mu, NULL);
	pthread_cond_init(&x.cond, NULL);
	pthread_cond_init(&x.work, NULL);
	util_uuid_v4(x.run_id);
	poll_schedule(&x);
	if (x.e->prov->calls)
		x.calls0 = x.e->prov->calls(x.e->ctx);
	if (build(&x, &err) != 0) {
		json_array_append_new(res->errors, json_pack("{s:s, s:s, s:s}", "address", "", "op",
							     "plan", "error", err.msg));
		res->failed++;
		goto out;
	}
	nthreads = (size_t)(o->parallelism > 0 ? o->parallelism : 1);
	if (nthreads > x.n)
		nthreads = x.n;
	threads = xcalloc(nthreads + 1, sizeof(*threads));
	pthread_create(&wt, NULL, waiter, &x);
	for (i = 0; i < nthreads; i++)
		pthread_create(&threads[i], NULL, worker, &x);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	pthread_join(wt, NULL);
	/* Interrupted: what never started is skipped. */
	for (i = 0; i < x.n; i++) {
		if (x.ops[i].state == OPS_READY || x.ops[i].state == OPS_BLOCKED) {
			x.ops[i].state = OPS_SKIPPED;
			res->skipped++;
			emit(&x, &x.ops[i], APPLY_SKIPPED, "not started: interrupted");
		}
	}
	res->interrupted = x.stopping;
out:
	if (x.e->prov->calls)
		res->calls = x.e->prov->calls(x.e->ctx) - x.calls0;
	for (i = 0; i < x.n; i++)
		free(x.ops[i].id);
	free(x.ops);
	graph_free(x.order);
	free(x.ready);
	free(threads);
	pthread_mutex_destroy(&x.mu);
	pthread_cond_destroy(&x.cond);
	pthread_cond_destroy(&x.work);
	return (res->failed || res->skipped) ? -1 : 0;
}

void apply_result_release(struct apply_result *res)
{
	json_decref(res->errors);
	json_decref(res->warnings);
	res->errors = NULL;
	res->warnings = NULL;
}
