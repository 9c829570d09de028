/*
 * apply.h - the executor: carry out a plan's changes over the DAG with a
 * worker pool, recording each result in the state document as it lands.
 *
 * Creates, updates and adoptions run in dependency order; deletes in reverse
 * (a resource goes after everything that used it); a replace is a delete and
 * then a create. Up to `parallelism` provider calls run at once. A create
 * that comes back pending is handed to one waiter thread, which polls every
 * pending id of a type with one batched wait call, so a worker is never tied
 * up waiting. A failure skips what depends on it and lets the rest finish.
 * An interrupt stops new work; calls in flight finish and are recorded.
 */
#ifndef KILN_APPLY_H
#define KILN_APPLY_H

#include <stdatomic.h>
#include <stdbool.h>

#include <jansson.h>

#include "engine.h"
#include "plan.h"

enum apply_event_kind {
	APPLY_START,   /* an operation begins */
	APPLY_PENDING, /* the call returned; waiting for the cloud */
	APPLY_DONE,    /* finished */
	APPLY_FAILED,  /* error holds why */
	APPLY_SKIPPED, /* a dependency failed, or the run was interrupted */
};

struct apply_event {
	enum apply_event_kind kind;
	const char *address;
	/* "create", "update", "replace", "replace: delete old", "delete", "adopt", "release",
	 * "delete duplicate", "read secret" */
	const char *op;
	const char *id; /* when known */
	double elapsed; /* seconds since the operation started */
	const char *error;
	const char *waiting_for; /* APPLY_PENDING: "ready" or "gone" */
	size_t total;		 /* the operations of the run, for a display's "N of M" */
};

struct apply_options {
	struct engine *engine;
	const struct plan_view *plan; /* the plan's view (plan.h) */
	json_t *state;		      /* the recorded state document, changed in place */
	int parallelism;
	bool keep_secrets; /* a state key is set: read secrets the state lacks */
	void (*event)(void *arg, const struct apply_event *ev);
	void *event_arg;
	/* After each recorded change: resource is the new record, or NULL when removed. */
	void (*checkpoint)(void *arg, const char *address, const json_t *resource);
	void *checkpoint_arg;
	/* Before a call that cannot be undone (prov_create.guard); may be NULL. */
	int (*guard)(void *arg, struct kiln_error *err);
	void *guard_arg;
};

struct apply_result {
	size_t done;
	size_t failed;
	size_t skipped;
	size_t calls; /* provider calls made, retries included */
	/* What was done, by kind (a replace counts once, when its create lands). */
	size_t created, updated, replaced, deleted, adopted, released;
	bool interrupted;
	json_t *errors;	  /* [{"address", "op", "error"}], new reference */
	json_t *warnings; /* ["text"]: done, but not as asked (a partial capacity grant) */
};

/* 0 when every operation succeeded, -1 otherwise (result says what happened). */
int apply_run(const struct apply_options *o, struct apply_result *res);
void apply_result_release(struct apply_result *res);

/* The operations a plan (its view) asks for (not counting no-ops): for "nothing to do". */
size_t apply_count_ops(const struct plan_view *plan);

#endif
