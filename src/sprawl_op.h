/*
 * sprawl_op.h - kiln sprawl, run whole: read every workspace of the state
 * repository (with the journal of an apply killed before its commit
 * replayed over it) and every lineage it holds or held, list what runs in
 * the cloud under kiln's tags and the GPU instances without them, price
 * them into a report, and, as asked, adopt the orphans into the
 * workspaces their tags name or delete them (sprawl.c, each workspace's
 * run through the operation's lock, journal and commit). It talks to the
 * user only through struct sprawl_ui; nothing here prints.
 */
#ifndef KILN_SPRAWL_OP_H
#define KILN_SPRAWL_OP_H

#include <stdbool.h>

#include <jansson.h>

#include "operation.h"
#include "sprawl.h"

enum sprawl_op_mode {
	SPRAWL_OP_REPORT,  /* only the report */
	SPRAWL_OP_ADOPT,   /* --adopt */
	SPRAWL_OP_DESTROY, /* --destroy */
};

struct sprawl_ui {
	struct op_ui base; /* arg and error (sprawl loads no spec: loaded is not called) */
	/*
	 * The report (kiln-sprawl(1)'s JSON: where it looked, the orphans, the
	 * GPU instances without kiln tags, priced), before anything changes;
	 * with SPRAWL_OP_DESTROY, kept: the orphans it keeps, each with "keep"
	 * saying why (else NULL).
	 */
	void (*report)(void *arg, const json_t *rep, const json_t *kept);
	/*
	 * A refusal (no terminal to ask on, no "yes") or an interrupt, said on
	 * one line ("MSG; HINT"), as a flag's refusal is.
	 */
	void (*refuse)(void *arg, const struct kiln_error *err);
	/* question ("Do you want to ...?"): true only when the answer is yes. */
	bool (*ask)(void *arg, const char *question);
	/* The adoption or the deletion begins. */
	void (*started)(void *arg);
	/* Each deletion or adoption as it lands, and each workspace's adoption committed. */
	void (*result)(void *arg, const char *cluster, const char *workspace,
		       const struct apply_event *ev);
	void (*commit)(void *arg, const char *workspace, size_t adopted, const git_oid *commit);
	/*
	 * The run is over: rep with what was done ("adopted", "failed",
	 * "skipped", "commits"; or "destroyed", "failed", "kept"); ran: the
	 * adoption or deletion ran (false: nothing to delete, or the report
	 * alone). Not called when the deletion was refused.
	 */
	void (*done)(void *arg, const json_t *rep, bool ran);
};

struct sprawl_op_options {
	struct sprawl_options run; /* the state, the region, the lock's wait, parallelism */
	const char *provider;	   /* NULL: the one the workspaces record, else the first cloud */
	enum sprawl_op_mode mode;
	bool include_stores; /* --destroy deletes stores too */
	bool auto_approve;   /* do not ask */
	bool can_ask;	     /* standard input is a terminal */
};

/*
 * Run the sprawl o asks for, whole, through ui: 0 when all went well, -1
 * after saying why not (a refusal, a failure, an interrupt).
 */
int sprawl_op_run(const struct sprawl_op_options *o, const struct sprawl_ui *ui);

#endif
