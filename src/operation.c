/*
 * operation.c - the operations layer; see operation.h.
 *
 * Owns the sequence of a run, not its parts: the engine (engine.c), the
 * diff (diff.c), the executor (apply.c), the journal (journal.c) and the
 * workspace and its lock (workspace.c) each keep their own work. Never
 * prints: errors go back in a kiln_error.
 */
#include "operation.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "audit.h"
#include "cost.h"
#include "crypt.h"
#include "diff.h"
#include "expiry.h"
#include "expiry_tag.h"
#include "health.h"
#include "repair.h"
#include "iam.h"
#include "journal.h"
#include "jsonc.h"
#include "ledger.h"
#include "log.h"
#include "plan.h"
#include "quota.h"
#include "signals.h"
#include "state.h"
#include "utilization.h"
#include "workload_spec.h"

/*
 * "in W ms (CPU C ms)": wall and CPU time (of every thread) since the
 * previous call, for --log-level debug timings; bench/bench.py reads the CPU
 * figure, which a busy machine moves less than the wall clock.
 */
static const char *lap(void)
{
	static struct timespec last, last_cpu;
	static char text[64];
	struct timespec now, cpu;
	double ms = 0, cpu_ms = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	if (last.tv_sec) {
		ms = (double)(now.tv_sec - last.tv_sec) * 1e3 +
		     (double)(now.tv_nsec - last.tv_nsec) / 1e6;
		cpu_ms = (double)(cpu.tv_sec - last_cpu.tv_sec) * 1e3 +
			 (double)(cpu.tv_nsec - last_cpu.tv_nsec) / 1e6;
	}
	last = now;
	last_cpu = cpu;
	snprintf(text, sizeof(text), "in %.0f ms (CPU %.0f ms)", ms, cpu_ms);
	return text;
}

/*
 * Who creates, when, from which state, for the kiln:owner tag another
 * state's plan shows: "NAME EMAIL at TIME from STATE", with what a tag
 * cannot hold as '_'. NULL when the author cannot be told (the tag is then
 * left out).
 */
char *operation_owner(struct store *s)
{
	struct kiln_error err = {0};
	git_signature *sig = NULL;
	char *raw, *loc, *out, when[21];
	int64_t now;

	if (store_signature(s, &sig, &err) < 0)
		return NULL;
	if (store_is_remote(s)) {
		loc = xstrdup(store_location(s)); /* without its credentials */
	} else {
		char host[256] = "", *abs = realpath(store_location(s), NULL);

		gethostname(host, sizeof(host) - 1);
		loc = xasprintf("%s:%s", host, abs ? abs : store_location(s));
		free(abs);
	}
	if (timefmt_now(&now, &err) < 0)
		now = (int64_t)time(NULL);
	raw = xasprintf("%s %s at %s from %s", sig->name, sig->email,
			timefmt_time_format_rfc3339(now, when), loc);
	out = provider_tag_value(raw);
	git_signature_free(sig);
	free(loc);
	free(raw);
	return out;
}

/*
 * A workspace with no commit yet takes the lineage its lock records: ours
 * (which took over a dead first apply's), or, for a plan, the holder's.
 * Then what a first apply killed before its commit made is still its own.
 */
static void first_lineage(struct op_run *r)
{
	struct lock_info info;
	struct kiln_error err;
	git_oid oid;
	const char *l = r->ws ? lock_lineage(r->ws->lock) : NULL;

	if (l) {
		json_object_set_new(r->state, "lineage", json_string(l));
		return;
	}
	if (!r->ws || r->ws->lock || lock_read(r->store, r->ws->name, &info, &oid, &err) != 0)
		return;
	if (info.lineage)
		json_object_set_new(r->state, "lineage", json_string(info.lineage));
	lock_info_release(&info);
}

/*
 * A reader (plan, status: no lock of its own) of a workspace whose lock a
 * live holder keeps renewing: that holder's journal is the record of an apply
 * under way, not of an interrupted one, so it is not replayed, and the reader
 * says that what it shows is the state from before that apply. A lease run
 * out means the holder died: its journal is replayed, as after any crash.
 */
static bool journal_writer_alive(const struct op_run *r, const char *ws)
{
	struct lock_info info;
	struct kiln_error lerr = {0};
	git_oid oid;
	char *who;

	if ((r->ws && r->ws->lock) || lock_read(r->store, ws, &info, &oid, &lerr) != 0)
		return false;
	if (lock_info_expired(&info)) {
		lock_info_release(&info);
		return false;
	}
	who = lock_info_describe(&info);
	log_warn("workspace '%s' is locked by %s: its journal is the record of a run under "
		 "way, not replayed; this shows the state before that run",
		 ws, who);
	free(who);
	lock_info_release(&info);
	return true;
}

static int load_state(struct op_run *r, struct kiln_error *err)
{
	char *path;
	int n;

	const char *ws = r->e->workspace;

	if (r->ws && r->ws->exists) {
		/* apply changes its copy; plan only reads, so it shares the parsed head. */
		r->state = r->ws->lock ? json_deep_copy(r->ws->state) : json_incref(r->ws->state);
		git_oid_tostr(r->head, sizeof(r->head), &r->ws->head);
	} else {
		r->state = state_new(r->e->spec->cluster, ws, r->e->prov->name);
		first_lineage(r);
	}
	if (!r->stand_in && state_cluster(r->state) &&
	    strcmp(state_cluster(r->state), r->e->spec->cluster) != 0) {
		kiln_error_set(err,
			       "workspace '%s' holds cluster '%s', but the spec describes cluster "
			       "'%s'",
			       ws, state_cluster(r->state), r->e->spec->cluster);
		kiln_error_hint(err, "use another workspace (-w NAME) for this cluster");
		return -1;
	}
	/*
	 * Resources recorded on one cloud are never asked about on another. An
	 * empty state (a destroyed sim rehearsal) takes the spec's provider below.
	 */
	{
		const char *sp = json_string_value(json_object_get(r->state, "provider"));
		size_t nres = state_resource_count(r->state);

		if (!r->stand_in && sp && strcmp(sp, r->e->prov->name) != 0 && nres > 0) {
			kiln_error_set(err,
				       "workspace '%s' records %zu resource%s on provider '%s' "
				       "(state.json of commit %.7s), but the spec names provider "
				       "'%s'",
				       ws, nres, nres == 1 ? "" : "s", sp, r->head,
				       r->e->prov->name);
			kiln_error_hint(
			    err,
			    "use another workspace (-w NAME) for the cluster on '%s', or "
			    "destroy this one first with a spec naming provider '%s'; "
			    "`kiln log -p -w %s` shows who changed the state",
			    r->e->prov->name, sp, ws);
			return -1;
		}
	}
	/*
	 * A workspace made empty (`kiln workspace new`, `kiln init`) names no
	 * cluster or provider yet: the first apply's copy takes the spec's. One
	 * that records nothing (destroyed) takes the spec's provider as well.
	 */
	if (!(r->ws && r->ws->exists && !r->ws->lock)) {
		if (!state_cluster(r->state))
			json_object_set_new(r->state, "cluster", json_string(r->e->spec->cluster));
		if (!json_is_string(json_object_get(r->state, "provider")) ||
		    state_resource_count(r->state) == 0)
			json_object_set_new(r->state, "provider", json_string(r->e->prov->name));
	}
	r->e->scope.lineage = state_lineage(r->state);
	if (!r->store)
		return 0; /* no state repository yet: no apply has run here */
	path = journal_path(store_location(r->store), ws);
	if (access(path, F_OK) == 0 && journal_writer_alive(r, ws)) {
		free(path);
		goto owner;
	}
	n = journal_replay(path, r->head[0] ? r->head : NULL, r->state, &r->overlay, err);
	if (n == -1) {
		free(path);
		return -1;
	}
	if (n == -2)
		log_warn(
		    "%s is the journal of an apply made from another state commit, or one torn "
		    "while it was started; ignored (the next apply replaces it)",
		    path);
	else if (n > 0)
		log_warn(
		    "replayed %d change%s recorded by an interrupted apply (%s); the next apply "
		    "commits them",
		    n, n == 1 ? "" : "s", path);
	free(path);
	/* The replay may have restored a first apply's lineage. */
	r->e->scope.lineage = state_lineage(r->state);
owner:
	r->owner = operation_owner(r->store);
	r->e->scope.owner = r->owner;
	return 0;
}

/* A local state repository that does not exist yet: plan against empty state. */
static bool local_store_missing(const char *state)
{
	const char *loc = state ? state : getenv("KILN_STATE");

	if (!loc || !*loc)
		loc = ".kiln/state.git";
	if (strstr(loc, "://"))
		return false;
	return access(loc, F_OK) != 0;
}

/*
 * The offerings pre-flight chose ({address: {"offering", "runner_up"}})
 * into the changes that buy them, as kiln.offering and kiln.runner_up:
 * what CI and FinOps read, and what a saved plan is held to (plan_match.c).
 */
/* A member of the plan's own "kiln" object, to write: plan_kiln only reads. */
static json_t *plan_kiln_member(json_t *plan, const char *key)
{
	return json_object_get(json_object_get(plan, "kiln"), key);
}

/* The "kiln" object of the plan's i-th change, to write: the view only reads. */
static json_t *change_kiln(json_t *plan, size_t i)
{
	return json_object_get(json_array_get(json_object_get(plan, "resource_changes"), i),
			       "kiln");
}

static void preflight_offers(struct op_run *r, const json_t *offers)
{
	size_t i;

	for (i = 0; i < r->view.nchanges; i++) {
		const struct plan_change *c = &r->view.changes[i];
		const json_t *o = json_object_get(offers, c->address);
		json_t *kiln = change_kiln(r->plan, i);

		if (!o || !json_is_object(kiln) || !plan_action_creates(c->action))
			continue;
		json_object_set(kiln, "offering", json_object_get(o, "offering"));
		json_object_set(kiln, "runner_up", json_object_get(o, "runner_up"));
	}
}

/*
 * The provider's checks before any spend, over what the plan creates (and
 * replaces); its warnings join the plan's, its offerings the changes'. Not
 * for --destroy, which creates nothing, nor with --refresh=false, which
 * promises no API call.
 */
static int preflight(struct op_run *r, struct kiln_error *err)
{
	json_t *creates, *offers = json_object();
	size_t i;
	int ret = 0;

	if (!r->e->prov->preflight || r->o.destroy || !r->o.refresh) {
		json_decref(offers);
		return 0;
	}
	creates = json_object();
	for (i = 0; i < r->view.nchanges; i++) {
		const struct plan_change *c = &r->view.changes[i];
		json_t *d = json_object_get(r->e->desired, c->address);

		/* A replace deletes first (graph_plan.c): what the old one holds is freed. */
		if (d && plan_action_creates(c->action) && c->action != PLAN_CREATE &&
		    json_is_object(c->before)) {
			json_t *with = json_copy(d);

			json_object_set_new(with, "replacing", jsonc_share(c->before));
			json_object_set_new(creates, c->address, with);
		} else if (d && plan_action_creates(c->action)) {
			json_object_set(creates, c->address, d);
		}
	}
	if (json_object_size(creates)) {
		json_t *warnings = plan_kiln_member(r->plan, "warnings");
		int prc;

		/* Transient failures are retried like every other provider call. */
		ENGINE_CALL(prc, err,
			    r->e->prov->preflight(r->e->ctx, creates, warnings, offers, err));
		ret = prc == PROV_OK ? 0 : -1;
		if (ret == 0)
			preflight_offers(r, offers);
		log_debug("pre-flight checks %s", lap());
	}
	json_decref(creates);
	json_decref(offers);
	return ret;
}

int operation_plan(struct op_run *r, struct kiln_error *err)
{
	json_t *live = NULL, *foreign = json_array();
	int rc;
	struct diff_input in = {
	    .engine = r->e,
	    .state = r->state,
	    .state_commit = r->head[0] ? r->head : NULL,
	    .destroy = r->o.destroy,
	    .targets = r->o.targets,
	    .ntargets = r->o.ntargets,
	    .replace = r->o.replace,
	    .nreplace = r->o.nreplace,
	    .include_retained = r->o.include_retained,
	    .ninclude = r->o.ninclude,
	    .spec_file = r->spec_path,
	};

	if (r->o.refresh) {
		if (engine_refresh(r->e, state_resources(r->state), r->plan_only, &live, foreign,
				   &r->rs, err) != 0) {
			json_decref(foreign);
			return -1;
		}
		log_info("refreshed %zu live resources with %lu list and %lu read calls %s",
			 r->rs.live, r->rs.list_calls, r->rs.read_calls, lap());
	}
	in.live = live;
	in.foreign = foreign;
	in.view = &r->view;
	json_decref(r->plan);
	r->plan = NULL;
	plan_view_release(&r->view);
	rc = diff_plan(&in, &r->plan, err);
	json_decref(foreign);
	if (rc != 0) {
		json_decref(live);
		return -1;
	}
	if (!r->o.destroy && access_plan_notes(r->e, r->plan, err) < 0) {
		json_decref(live);
		return -1;
	}
	iam_delta_plan(r->e, r->plan, &r->view, live, state_resources(r->state));
	if (r->keep_live) {
		r->live = json_incref(live);
		r->retained = cost_retained_live(
		    &(struct cost_source){r->e->prov, r->e->ctx, r->e->spec}, live,
		    state_resources(r->state));
	}
	json_decref(live);
	if (r->plan_only) {
		/* It is shared with the workspace (load_state): both references go. */
		json_decref(r->state);
		r->state = NULL;
		if (r->ws) {
			json_decref(r->ws->state);
			r->ws->state = NULL;
		}
	}
	if (preflight(r, err) != 0) {
		return -1;
	}
	cost_plan(&(struct cost_source){r->e->prov, r->e->ctx, r->e->spec}, r->plan, &r->view);
	workload_plan(r->e->spec, r->e->prov->catalog ? r->e->prov->catalog(r->e->ctx) : NULL,
		      r->plan);
	if (audit_plan(r->e->spec, r->e->prov, r->plan, &r->view, err) != 0) {
		return -1;
	}
	/* A saved plan made over a replayed journal is current only while that journal is. */
	if (json_object_size(r->overlay))
		json_object_set_new(plan_kiln_member(r->plan, "state"), "journal",
				    json_integer((json_int_t)json_object_size(r->overlay)));
	log_debug("planned %s", lap());
	return 0;
}

int operation_plan_spec(struct op_run *r, const struct op_options *o, const char *spec_path,
			struct kiln_error *err)
{
	struct diags d = {0};
	int rc = operation_load(r, o, spec_path, &d, err);

	if (r->loaded)
		r->loaded(r->report_arg, &d);
	diags_release(&d);
	if (rc != 0)
		return -1;
	return operation_open_state(r, false, "plan", err) < 0 || operation_plan(r, err) < 0 ? -1
											     : 0;
}

/* "Kiln-Takeover: ADDRESS ID from lineage L by OWNER" of each resource taken: n of them. */
static char **takeover_trailers(const json_t *taken, size_t *n)
{
	char **extra;
	json_t *t;
	size_t i;

	*n = json_array_size(taken);
	extra = xcalloc(*n + 1, sizeof(*extra));
	json_array_foreach(taken, i, t)
	{
		const char *fl = json_string_value(json_object_get(t, "from"));
		const char *ow = json_string_value(json_object_get(t, "owner"));

		extra[i] = xasprintf("Kiln-Takeover: %s %s from %s%s%s%s",
				     json_string_value(json_object_get(t, "address")),
				     json_string_value(json_object_get(t, "id")),
				     fl ? "lineage " : "no lineage", fl ? fl : "", ow ? " by " : "",
				     ow ? ow : "");
	}
	return extra;
}

int operation_takeover(struct op_run *r, const struct takeover_filter *f,
		       struct op_takeover_result *out, struct kiln_error *err)
{
	struct refresh_stats rs;
	json_t *live = NULL, *foreign = json_array();
	char **extra, *summary, *label;
	size_t i, n;

	memset(out, 0, sizeof(*out));
	if (engine_refresh(r->e, state_resources(r->state), false, &live, foreign, &rs, err) != 0) {
		json_decref(foreign);
		return -1;
	}
	json_decref(live);
	if (!json_array_size(foreign) && !f->from && !f->naddrs) {
		json_decref(foreign);
		out->nothing = true;
		return 0;
	}
	out->take_failed =
	    takeover_run(r->e, r->state, foreign, f, &out->taken, &out->take_err) != 0;
	json_decref(foreign);
	/* Said now: what was taken before a claim failed is still sealed and committed. */
	if (out->take_failed && r->report)
		r->report(r->report_arg, &out->take_err);
	if (!json_array_size(out->taken))
		return 0;
	extra = takeover_trailers(out->taken, &n);
	label = workspace_label(r->ws, r->state);
	summary = xasprintf("state takeover: %zu resource%s %s", n, n == 1 ? "" : "s", label);
	free(label);
	if (operation_seal_secrets(r->state, &out->commit_err) < 0 ||
	    workspace_commit(r->ws, r->state, false, summary, (const char *const *)extra, n,
			     &out->commit_err) < 0)
		out->commit_failed = true;
	else
		git_oid_tostr(out->commit, sizeof(out->commit), &r->ws->head);
	for (i = 0; i < n; i++)
		free(extra[i]);
	free(extra);
	free(summary);
	return 0;
}

void operation_takeover_result_release(struct op_takeover_result *out)
{
	json_decref(out->taken);
	memset(out, 0, sizeof(*out));
}

static void release(struct op_run *r, bool documents)
{
	struct kiln_error err = {0};

	plan_view_release(&r->view);
	if (documents) {
		json_decref(r->plan);
		json_decref(r->state);
		json_decref(r->overlay);
		json_decref(r->live);
		json_decref(r->retained);
		r->retained = NULL;
		engine_free(r->e);
		free(r->owner);
		free(r->saved_addrs);
		json_decref(r->trailers);
	} else if (r->e && r->e->ctx) {
		/* The provider still closes: it wipes its credentials (OPENSSL_cleanse). */
		r->e->prov->close(r->e->ctx);
		r->e->ctx = NULL;
	}
	if (r->ws && workspace_close(r->ws, &err) < 0 && r->report)
		r->report(r->report_arg, &err);
	store_free(r->store);
	memset(r, 0, sizeof(*r));
}

void operation_close(struct op_run *r)
{
	release(r, true);
}

void operation_finish(struct op_run *r)
{
#if defined(__SANITIZE_ADDRESS__)
	release(r, true);
#else
	release(r, false);
#endif
}

int operation_key_check(const json_t *state, struct kiln_error *err)
{
	struct crypt_key key;
	int have = crypt_key_load(&key, err);
	const char *address, *attr, *kid, *unset = NULL, *what = NULL;
	char *source, *path;

	if (have <= 0)
		return have; /* no key: new secrets are dropped, sealed ones kept as they are */
	kid = state_sealed_other(state, key.kid, &address, &attr);
	if (!kid) {
		crypt_key_wipe(&key);
		return 0;
	}
	source = crypt_key_source();
	kiln_error_set(err,
		       "the state is sealed with key %s (%s/%s), but %s is key %s: kiln seals a "
		       "state with one key only",
		       kid, address, attr, source, key.kid);
	path = crypt_key_find(kid, &what, &unset);
	if (path)
		kiln_error_hint(err,
				"key %s is %s, %s: unset %s to use it, or move the state to key %s "
				"with kiln state rekey %s; nothing was changed",
				kid, what, path, unset, key.kid, path);
	else
		kiln_error_hint(err,
				"set KILN_STATE_KEY (or KILN_STATE_KEY_FILE) to the key whose id "
				"is %s, the one this workspace was sealed with, or move the state to "
				"key %s with kiln state rekey FILE, FILE holding key %s; nothing "
				"was changed",
				kid, key.kid, kid);
	free(path);
	free(source);
	crypt_key_wipe(&key);
	return -1;
}

int operation_seal_secrets(json_t *state, struct kiln_error *err)
{
	struct crypt_key key;
	int have = crypt_key_load(&key, err), dropped = 0, rc = 0;
	const char *addr;
	json_t *res, *name;
	size_t i;

	if (have == 1) {
		rc = state_seal(state, &key, false, err);
		crypt_key_wipe(&key);
		if (rc >= 0)
			return 0;
	}
	/* No key, or one that failed: the secrets are dropped, never kept in plaintext. */
	json_object_foreach(state_resources(state), addr, res)
	{
		json_t *attrs = json_object_get(res, "attrs");

		json_array_foreach(json_object_get(res, "sensitive"), i, name)
		{
			json_t *v = json_object_get(attrs, json_string_value(name));

			if (v && !json_is_null(v) && !crypt_is_sealed(v)) {
				json_object_set_new(attrs, json_string_value(name), json_null());
				dropped++;
			}
		}
	}
	if (dropped)
		log_warn("%d sensitive value%s not recorded: set KILN_STATE_KEY (or "
			 "KILN_STATE_KEY_FILE) to keep them, encrypted, in the state",
			 dropped, dropped == 1 ? " was" : "s were");
	return have < 0 || rc < 0 ? -1 : 0;
}

/* A saved plan is applied only to the spec and the state it was made from. */
int operation_saved_check(struct op_run *r, const json_t *plan, const char *file,
			  struct kiln_error *err)
{
	const json_t *state = plan_kiln(plan, "state");
	const char *digest = json_string_value(json_object_get(plan_kiln(plan, "spec"), "digest"));
	const char *commit = json_string_value(json_object_get(state, "commit"));

	if (!digest || strcmp(digest, r->e->spec_digest) != 0) {
		kiln_error_set(
		    err,
		    "%s is stale: the spec %s changed since the plan was made (plan: %.19s, "
		    "now: %.19s)",
		    file, r->spec_path, digest ? digest : "none", r->e->spec_digest);
		kiln_error_hint(err, "make and review a new plan: kiln plan %s --out %s",
				r->spec_path, file);
	} else if (commit && strcmp(commit, r->head) != 0 && !store_has_object(r->store, commit)) {
		/* Not a commit this repository ever had: nobody applied "since". */
		kiln_error_set(err,
			       "%s was made with another state repository: its state commit %.12s "
			       "is not in %s",
			       file, commit, store_location(r->store));
		kiln_error_hint(err,
				"apply it with the state it was made from (--state or KILN_STATE), "
				"or make and review a plan here: kiln plan %s --out %s",
				r->spec_path, file);
	} else if ((commit == NULL) != (r->head[0] == '\0') ||
		   (commit && strcmp(commit, r->head) != 0)) {
		kiln_error_set(
		    err,
		    "%s is stale: it was made from state commit %.12s, but workspace '%s' "
		    "is now at %.12s",
		    file, commit ? commit : "(none: no workspace yet)", r->ws->name,
		    r->head[0] ? r->head : "(none)");
		kiln_error_hint(err, "%s; make and review a new plan: kiln plan %s --out %s",
				commit ? "someone applied since"
				       : "the workspace was made or applied since",
				r->spec_path, file);
	} else if ((json_int_t)json_object_size(r->overlay) !=
		   json_integer_value(json_object_get(state, "journal"))) {
		/* Same head, but an apply was killed after changing the cloud: the plan predates
		 * it. */
		kiln_error_set(err,
			       "%s is stale: an interrupted apply changed workspace '%s' after the "
			       "plan was made (%zu changes in its journal)",
			       file, r->ws->name, json_object_size(r->overlay));
		kiln_error_hint(err, "make and review a new plan: kiln plan %s --out %s",
				r->spec_path, file);
	}
	return err->msg[0] ? -1 : 0;
}

char *operation_summary_counts(const struct apply_result *res)
{
	struct strbuf sb = {0};

	sb_addf(&sb, "%zu created, %zu updated, %zu replaced, %zu deleted", res->created,
		res->updated, res->replaced, res->deleted);
	if (res->adopted)
		sb_addf(&sb, ", %zu adopted", res->adopted);
	if (res->released)
		sb_addf(&sb, ", %zu released (retained, not deleted)", res->released);
	if (res->failed)
		sb_addf(&sb, "; %zu failed", res->failed);
	if (res->skipped)
		sb_addf(&sb, "; %zu not done", res->skipped);
	return sb_detach(&sb);
}

/*
 * "Kiln-Purchase: ID FEE" for each resource this apply bought up front: a
 * resource the plan creates (or adopts: an apply killed after buying it)
 * whose recorded attrs name an upfront_fee.
 */
static json_t *purchase_trailers(const struct op_run *r)
{
	json_t *out = json_array(), *res = state_resources(r->state);
	size_t i;

	for (i = 0; i < r->view.nchanges; i++) {
		const struct plan_change *c = &r->view.changes[i];
		const json_t *got = json_object_get(res, c->address);
		const char *fee = json_string_value(
		    json_object_get(json_object_get(got, "attrs"), "upfront_fee"));
		bool made = c->action == PLAN_CREATE || c->action == PLAN_CREATE_DELETE ||
			    c->importing != NULL;

		if (made && fee)
			json_array_append_new(
			    out, json_sprintf("Kiln-Purchase: %s %s",
					      json_string_value(json_object_get(got, "id")), fee));
	}
	return out;
}

double operation_plan_upfront(const json_t *plan)
{
	return json_number_value(json_object_get(plan_kiln(plan, "cost"), "upfront"));
}

int operation_quota_check(struct op_run *r, struct kiln_error *err)
{
	return operation_quota(r, false, NULL, err);
}

int operation_quota(struct op_run *r, bool reserve, const json_t *waivers, struct kiln_error *err)
{
	const json_t *cost = plan_kiln(r->plan, "cost");
	struct quota_ask a = {
	    .workspace = r->e->workspace,
	    .head = r->head,
	    .team = json_string_value(json_object_get(r->e->user_tags, QUOTA_TEAM_TAG)),
	    .burn_now = json_number_value(json_object_get(cost, "hourly_before")),
	    .burn_after = json_number_value(json_object_get(cost, "hourly_after")),
	    .upfront = operation_plan_upfront(r->plan),
	    .waivers = waivers,
	};
	json_t *waived = NULL;
	size_t i;
	int rc;

	/* No state repository yet: no policy either. */
	if (!r->store)
		return 0;
	if (timefmt_now(&a.now, err) < 0)
		return -1;
	/* Before and after the plan, as its cost prices them (a no-op keeps what is there). */
	for (i = 0; i < r->view.nchanges; i++) {
		const struct plan_change *c = &r->view.changes[i];

		a.gpus_now += ledger_gpus(r->e, c->type, c->before);
		a.gpus_after += ledger_gpus(r->e, c->type,
					    c->action == PLAN_NO_OP ? c->before : c->after);
	}
	rc = quota_check(r->store, &a, reserve, &waived, err);
	if (rc == 0 && waived) {
		if (!r->trailers)
			r->trailers = json_array();
		json_array_extend(r->trailers, waived);
	}
	json_decref(waived);
	return rc;
}

const struct plan_change *operation_plan_purchase(const struct op_run *r)
{
	size_t i;

	for (i = 0; i < r->view.nchanges; i++) {
		const struct plan_change *c = &r->view.changes[i];
		const struct prov_type *t = provider_type(r->e->prov, c->type);

		if (t && t->purchase && plan_action_creates(c->action) && !c->importing)
			return &r->view.changes[i];
	}
	return NULL;
}

/*
 * The GPU utilization of the stretch this commit ends, for the ledger: the
 * nodes the head recorded, from the head's Kiln-Time to now. Never fails
 * the commit: a cluster whose metrics cannot be read records none.
 */
static void ledger_measure_stretch(struct op_run *r)
{
	struct kiln_error err = {0};
	struct ledger_entry le;
	git_commit *c = NULL;
	int64_t now;
	double mean;

	if (r->has_gpu_util || !r->ws->exists || !r->e->prov->metrics ||
	    timefmt_now(&now, &err) < 0 ||
	    git_commit_lookup(&c, store_repo(r->store), &r->ws->head) != 0)
		return;
	ledger_parse(git_commit_message(c), &le);
	git_commit_free(c);
	if (le.has_time &&
	    utilization_mean(r->e, state_resources(r->ws->state), le.time, now, &mean, &err) == 0) {
		r->has_gpu_util = true;
		r->gpu_util = mean;
	} else if (err.msg[0]) {
		log_debug("the ledger records no GPU utilization: %s", err.msg);
	}
	ledger_entry_release(&le);
}

/*
 * The hourly cost of the stores the plan released from the state and kept
 * (the plan's cost.retained) that this apply did release: they bill on
 * outside the state, and the ledger says so for kiln report.
 */
static double retained_hourly(const struct op_run *r, const json_t *cost)
{
	const json_t *k;
	double sum = 0;
	size_t i;

	json_array_foreach(json_object_get(cost, "retained"), i, k)
	{
		if (!state_resource(r->state, json_string_value(json_object_get(k, "address"))))
			sum += json_number_value(json_object_get(k, "hourly"));
	}
	return sum;
}

/*
 * One commit for the whole apply, when the state changed. approved holds
 * the Kiln-Approval trailers of a plan applied under --require-approvals.
 */
int operation_commit(struct op_run *r, const char *op, const struct apply_result *res,
		     const json_t *saved, const json_t *approved, char **commit_out,
		     struct kiln_error *err)
{
	struct kiln_error seal = {0};
	const json_t *cost = plan_kiln(r->plan, "cost");
	char *before = r->ws->exists ? state_canonical(r->ws->state) : NULL;
	char *after, *counts, *summary, *label, *t_res;
	json_t *trailers, *t, *bought;
	const char **extra;
	size_t i, nextra;
	int rc = 0;

	*commit_out = NULL;
	if (operation_seal_secrets(r->state, &seal) < 0 && r->report)
		r->report(r->report_arg, &seal);
	after = state_canonical(r->state);
	/* An apply that changed the cloud is logged even if the state reads the same. */
	if ((before && strcmp(before, after) == 0 && res->done == 0) ||
	    (!r->ws->exists && state_resource_count(r->state) == 0)) {
		free(before);
		free(after);
		return 0;
	}
	counts = r->commit_counts ? r->commit_counts(res) : operation_summary_counts(res);
	label = workspace_label(r->ws, r->state);
	if (json_object_size(r->overlay))
		summary = xasprintf("%s: %s, %zu recorded from an interrupted apply's journal (%s)",
				    op, counts, json_object_size(r->overlay), label);
	else
		summary = xasprintf("%s: %s (%s)", op, counts, label);
	trailers = json_array();
	json_array_append_new(trailers, json_sprintf("Kiln-Operation: %s", op));
	/* A saved plan's file digest: the apply traces back to the plan reviewed. */
	t_res = plan_digest(saved ? saved : r->plan);
	if (t_res)
		json_array_append_new(trailers, json_sprintf("Kiln-Plan-Digest: %s", t_res));
	free(t_res);
	/* A stand-in spec (kiln sprawl) has no file to digest. */
	if (r->e->spec_digest)
		json_array_append_new(trailers,
				      json_sprintf("Kiln-Spec-Digest: %s", r->e->spec_digest));
	json_array_foreach(approved, i, t) json_array_append_new(trailers, jsonc_share(t));
	bought = purchase_trailers(r);
	json_array_extend(trailers, bought);
	json_decref(bought);
	json_array_append_new(
	    trailers, json_sprintf("Kiln-Result: %s", res->failed ? "partial (operations failed)"
						      : res->interrupted ? "partial (interrupted)"
									 : "complete"));
	ledger_measure_stretch(r);
	/* The cost ledger (ledger.h): what burns after this commit, from what it records. */
	ledger_trailers(r->e, r->state,
			res->done ? json_number_value(json_object_get(cost, "upfront")) : 0,
			r->has_gpu_util ? r->gpu_util : -1, res->done ? retained_hourly(r, cost) : 0,
			trailers);
	if (r->trailers)
		json_array_extend(trailers, r->trailers);
	nextra = json_array_size(trailers);
	extra = xcalloc(nextra, sizeof(*extra));
	json_array_foreach(trailers, i, t) extra[i] = json_string_value(t);
	if (workspace_commit(r->ws, r->state, false, summary, extra, nextra, err) < 0) {
		rc = -1;
	} else {
		*commit_out = xmalloc(41);
		git_oid_tostr(*commit_out, 41, &r->ws->head);
	}
	free(extra);
	json_decref(trailers);
	free(before);
	free(after);
	free(counts);
	free(label);
	free(summary);
	return rc;
}

/* A copy of the spec as digested in o, so reap can destroy once the file has gone. */
static void spec_text_record(struct op_run *r, json_t *o)
{
	if (memchr(r->e->spec_text, '\0', r->e->spec_len) == NULL)
		json_object_set_new(o, "spec_text", json_stringn(r->e->spec_text, r->e->spec_len));
}

/*
 * The expiry this apply records (expiry.h), set in r->state and in the
 * scope that tags every create. 0, or -1 after reporting.
 */
int operation_expiry_prepare(struct op_run *r, int64_t ttl_flag, struct kiln_error *err)
{
	git_signature *sig = NULL;
	char *author;
	int64_t now;
	json_t *x;

	if (timefmt_now(&now, err) < 0) {
		return -1;
	}
	if (store_signature(r->store, &sig, err) < 0) {
		return -1;
	}
	author = xasprintf("%s <%s>", sig->name, sig->email);
	git_signature_free(sig);
	x = expiry_at_apply(state_expiry(r->state),
			    ttl_flag ? ttl_flag : r->e->spec->ttl, ttl_flag != 0, now, author,
			    r->spec_path);
	free(author);
	/*
	 * A new expiry (--ttl, another ttl in the spec) reaches the nodes that
	 * stay, before anything runs: each powers itself off past the
	 * kiln:expires tag it reads (the node TTL), never at one the state no
	 * longer holds. A workspace losing its TTL gets the tag emptied, which
	 * the node reads as no TTL.
	 */
	if (strcmp(state_expires(r->state) ?: "",
		   json_string_value(json_object_get(x, "expires")) ?: "") != 0) {
		size_t n;

		if (expiry_tag_nodes(r->e, r->state,
				     json_string_value(json_object_get(x, "expires")) ?: "", &n,
				     err) < 0) {
			json_decref(x);
			return -1;
		}
	}
	if (x) {
		spec_text_record(r, x);
		json_object_set_new(r->state, "expiry", x);
	} else
		json_object_del(r->state, "expiry");
	r->e->scope.expires = json_string_value(json_object_get(x, "expires"));
	operation_idle_prepare(r);
	operation_window_prepare(r);
	return 0;
}

void operation_idle_prepare(struct op_run *r)
{
	const struct spec *spec = r->e->spec;
	bool any = spec->idle.set;
	size_t i;

	for (i = 0; i < spec->ngroups; i++)
		any |= spec->groups[i].idle.set;
	if (!any) {
		json_object_del(r->state, "idle");
		return;
	}
	/* kiln reap measures against this spec's policy, the file or, once gone, the copy. */
	json_object_set_new(r->state, "idle", json_pack("{s:s}", "spec", r->spec_path));
	spec_text_record(r, json_object_get(r->state, "idle"));
}

void operation_window_prepare(struct op_run *r)
{
	const struct spec *spec = r->e->spec;
	bool any = false;
	size_t i;

	for (i = 0; i < spec->ngroups; i++)
		any |= spec->groups[i].capacity.kind == CAPACITY_BLOCK;
	if (!any) {
		json_object_del(r->state, "window");
		return;
	}
	/* A block's end is a hard expiry even without a ttl: reap destroys with this spec. */
	json_object_set_new(r->state, "window", json_pack("{s:s}", "spec", r->spec_path));
	spec_text_record(r, json_object_get(r->state, "window"));
}

int operation_load(struct op_run *r, const struct op_options *o, const char *spec_path,
		   struct diags *d, struct kiln_error *err)
{
	bool plan_only = r->plan_only, keep_live = r->keep_live;
	void (*report)(void *, const struct kiln_error *) = r->report;
	void (*loaded)(void *, struct diags *) = r->loaded;
	void *arg = r->report_arg;
	int rc;

	memset(r, 0, sizeof(*r));
	r->plan_only = plan_only;
	r->keep_live = keep_live;
	r->report = report;
	r->loaded = loaded;
	r->report_arg = arg;
	r->o = *o;
	r->spec_path = spec_path;
	lap();
	rc = engine_open(&r->e, spec_path, &o->vars, workspace_name(o->workspace), d, err);
	log_debug("loaded and expanded %s into %zu resources %s", spec_path,
		  r->e ? json_object_size(r->e->desired) : 0, lap());
	return rc != 0 ? -1 : 0;
}

int operation_open_state(struct op_run *r, bool lock, const char *operation, struct kiln_error *err)
{
	struct lock_options lo = {.operation = operation, .timeout = r->o.lock_timeout};
	char lineage[37];

	if (!lock && local_store_missing(r->o.state))
		return load_state(r, err); /* planning before the first apply: nothing recorded */
	if ((lock ? store_open(&r->store, r->o.state, err)
		  : store_open_existing(&r->store, r->o.state, err)) < 0)
		return -1;
	if (workspace_open(&r->ws, r->store, r->o.workspace, err) < 0) {
		store_free(r->store);
		r->store = NULL;
		return -1;
	}
	log_debug("read workspace '%s' %s", r->ws->name, lap());
	if (!r->ws->exists) {
		util_uuid_v4(lineage);
		lo.lineage = lineage;
	}
	if (lock && workspace_lock(r->ws, &lo, err) < 0)
		return -1;
	return load_state(r, err);
}

int operation_open(struct op_run *r, const struct op_options *o, const char *spec_path, bool lock,
		   const char *operation, const struct op_ui *ui)
{
	struct kiln_error err = {0};
	struct diags d = {0};
	int rc;

	r->report = ui->error;
	r->loaded = ui->loaded;
	r->report_arg = ui->arg;
	rc = operation_load(r, o, spec_path, &d, &err);
	ui->loaded(ui->arg, &d);
	diags_release(&d);
	if (rc == 0 && operation_open_state(r, lock, operation, &err) == 0)
		return 0;
	if (!err.msg[0])
		kiln_error_set(&err, "%s is not valid; nothing was planned", spec_path);
	ui->error(ui->arg, &err);
	return -1;
}

int operation_open_engine(struct op_run *r, const struct op_options *o, struct engine *e,
			  const char *operation, struct kiln_error *err)
{
	void (*report)(void *, const struct kiln_error *) = r->report;
	char *(*counts)(const struct apply_result *) = r->commit_counts;
	void *arg = r->report_arg;

	memset(r, 0, sizeof(*r));
	r->report = report;
	r->report_arg = arg;
	r->commit_counts = counts;
	r->o = *o;
	r->e = e;
	r->stand_in = true;
	return operation_open_state(r, true, operation, err);
}

int operation_saved_replan(struct op_run *r, const json_t *saved, const char *file,
			   struct kiln_error *err)
{
	const json_t *targets = plan_kiln(saved, "targets"), *v;
	const json_t *replace = plan_kiln(saved, "replace");
	size_t i, n = 0;

	r->o.destroy = plan_is_destroy(saved);
	r->o.refresh = !json_is_false(plan_kiln(saved, "refresh"));
	/* The strings stay owned by saved, which outlives the run. */
	free(r->saved_addrs);
	r->saved_addrs =
	    xcalloc(json_array_size(targets) + json_array_size(replace) + 1, sizeof(char *));
	r->o.targets = r->saved_addrs;
	json_array_foreach(targets, i, v)
	{
		if (json_is_string(v))
			r->saved_addrs[n++] = json_string_value(v);
	}
	r->o.ntargets = n;
	r->o.replace = r->saved_addrs + n;
	json_array_foreach(replace, i, v)
	{
		if (json_is_string(v))
			r->saved_addrs[n++] = json_string_value(v);
	}
	r->o.nreplace = n - r->o.ntargets;
	if (operation_plan(r, err) < 0)
		return -1;
	/*
	 * What the file says against what its spec and state give now: anything
	 * else, an edit or a cloud that changed since, is refused. The plan
	 * carried out is the one made now, which says the same; its "before"
	 * values are the cloud as it is.
	 */
	return plan_match(saved, r->plan, file, err) == 0 ? 0 : 1;
}

bool operation_plan_is_empty(const struct op_run *r)
{
	return apply_count_ops(&r->view) == 0 && r->view.ndrift == 0 &&
	       json_object_size(r->overlay) == 0;
}

long operation_plan_errors(struct op_run *r, struct kiln_error *err)
{
	if (!plan_kiln(r->plan, "findings") &&
	    audit_plan(r->e->spec, r->e->prov, r->plan, &r->view, err) != 0)
		return -1;
	return (long)audit_errors(r->plan);
}

static void on_checkpoint(void *arg, const char *address, const json_t *resource)
{
	journal_record(arg, address, resource);
}

/* Nothing left to expire: a later apply starts a new TTL; else when the cluster came up. */
static void record_lifetime(json_t *state)
{
	struct kiln_error err = {0};
	int64_t now;
	char buf[21];

	if (state_resource_count(state) == 0) {
		json_object_del(state, "expiry");
		json_object_del(state, "idle");
		json_object_del(state, "window");
		json_object_del(state, "created");
	} else if (!state_created(state) && timefmt_now(&now, &err) == 0) {
		/* kiln status counts its cost from here. */
		json_object_set_new(state, "created",
				    json_string(timefmt_time_format_rfc3339(now, buf)));
	}
}

/* prov_create.guard: the workspace's lock renewed and checked before a purchase. */
static int still_held(void *arg, struct kiln_error *err)
{
	struct op_run *r = arg;

	if (!r->ws || !r->ws->lock)
		return 0;
	if (lock_renew_check(r->ws->lock, err) == 0)
		return 0;
	kiln_error_hint(err, "nothing was bought: the run that holds the lock now buys what the "
			     "spec asks; see kiln log once it ends");
	return -1;
}

int operation_apply(struct op_run *r, const char *op, const struct op_apply_options *ao,
		    struct op_apply_outcome *out, struct kiln_error *err)
{
	struct journal *j = NULL;
	char *jpath = journal_path(store_location(r->store), r->ws->name);
	int rc;

	memset(out, 0, sizeof(*out));
	rc = journal_open(&j, jpath, r->head[0] ? r->head : NULL, state_lineage(r->state),
			  r->overlay, err);
	free(jpath);
	if (rc < 0)
		return -1;
	if (ao->started)
		ao->started(ao->event_arg);
	/* While the executor runs, the first signal stops it starting work (signals.h). */
	signals_wind_down(true);
	struct apply_options o = {
	    .engine = r->e,
	    .plan = &r->view,
	    .state = r->state,
	    .parallelism = ao->parallelism,
	    .keep_secrets = ao->keep_secrets,
	    .event = ao->event,
	    .event_arg = ao->event_arg,
	    .checkpoint = on_checkpoint,
	    .checkpoint_arg = j,
	    .guard = still_held,
	    .guard_arg = r,
	};
	apply_run(&o, &out->res);
	if (ao->finished)
		ao->finished(ao->event_arg);
	/* From here a signal exits at once; the journal keeps what the commit would have. */
	signals_wind_down(false);
	record_lifetime(r->state);
	rc = operation_commit(r, op, &out->res, ao->saved, ao->approved, &out->commit, err);
	journal_close(j, rc == 0);
	out->commit_failed = rc < 0;
	return 0;
}

void operation_apply_outcome_release(struct op_apply_outcome *out)
{
	apply_result_release(&out->res);
	free(out->commit);
	memset(out, 0, sizeof(*out));
}

int operation_destroy(struct op_run *r, const struct op_apply_options *ao,
		      int (*locked)(struct op_run *r, void *arg), void *arg,
		      struct op_apply_outcome *out, struct kiln_error *err)
{
	memset(out, 0, sizeof(*out));
	if (locked && locked(r, arg) != 0)
		return OP_STOPPED;
	if (operation_plan(r, err) < 0)
		return -1;
	if (operation_plan_is_empty(r))
		return 0;
	if (operation_apply(r, "destroy", ao, out, err) < 0 || out->commit_failed)
		return -1;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The actions of a verb of a type, added to *v. */
static void add_actions(const struct provider *prov, const char *type, enum prov_verb verb,
			const char ***v, size_t *n, size_t *cap)
{
	const char *const *a = prov->iam_actions(type, verb);

	for (; a && *a; a++)
		*ARRAY_PUSH(*v, *n, *cap) = *a;
}

char *operation_iam_policy(struct engine *e, bool report_actual)
{
	const struct provider *prov = e->prov;
	const char **v = NULL, *addr;
	size_t n = 0, cap = 0, i, u;
	json_t *r;
	char *doc = NULL;

	/* Refresh lists and reads every type: a resource left from an older spec is found. */
	for (i = 0; i < prov->ntypes; i++) {
		add_actions(prov, prov->types[i].name, VERB_LIST, &v, &n, &cap);
		add_actions(prov, prov->types[i].name, VERB_READ, &v, &n, &cap);
		/* Destroying what an older spec made needs its delete too. */
		add_actions(prov, prov->types[i].name, VERB_DELETE, &v, &n, &cap);
	}
	json_object_foreach(e->desired, addr, r)
	{
		const char *type = json_string_value(json_object_get(r, "type"));

		add_actions(prov, type, VERB_CREATE, &v, &n, &cap);
		add_actions(prov, type, VERB_UPDATE, &v, &n, &cap);
		if (prov->iam_resource_actions) {
			const char *const *a = prov->iam_resource_actions(r, VERB_CREATE);

			for (; a && *a; a++)
				*ARRAY_PUSH(v, n, cap) = *a;
		}
	}
	/* kiln report --actual reads the bill: only when asked for, never by default. */
	for (i = 0; report_actual && prov->billed_actions && prov->billed_actions[i]; i++)
		*ARRAY_PUSH(v, n, cap) = prov->billed_actions[i];
	qsort(v, n, sizeof(*v), str_cmp);
	for (i = 0, u = 0; i < n; i++)
		if (u == 0 || strcmp(v[i], v[u - 1]) != 0)
			v[u++] = v[i];
	if (prov->iam_policy)
		doc = prov->iam_policy(e->ctx, &e->scope, v, u);
	free(v);
	return doc;
}

int operation_health_wait(struct op_run *r, const json_t *addresses, int64_t timeout_s,
			  const struct health_tick *tick, json_t **groups, struct kiln_error *err)
{
	return health_wait(r->e, r->state, addresses, timeout_s, r->e->prov->simulated ? 100 : 5000,
			   tick, groups, err);
}

int operation_repair(struct op_run *r, const json_t *targets, struct op_repair_outcome *out,
		     struct kiln_error *err)
{
	struct apply_result res = {0};
	json_t *trailers = json_array(), *t;
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->done = json_array();
	json_array_foreach(targets, i, t)
	{
		json_t *added = NULL, *ids = json_array(), *b;
		struct strbuf line = {0};
		size_t j;

		if (repair_group(r->e, r->state, t, &added, err) < 0) {
			out->failed = true;
			res.failed++;
			json_decref(ids);
			break;
		}
		sb_addf(&line, "Kiln-Replaced: %s",
			json_string_value(json_object_get(t, "address")));
		json_array_foreach(json_object_get(t, "replace"), j, b)
		{
			json_array_append(ids, json_object_get(b, "id"));
			sb_addf(&line, " %s", json_string_value(json_object_get(b, "id")));
		}
		json_array_append_new(trailers, json_string(line.buf));
		sb_release(&line);
		json_array_append_new(out->done, json_pack("{s:O, s:o, s:o}", "address",
							   json_object_get(t, "address"),
							   "replaced", ids, "added", added));
		res.updated++;
		res.done++;
	}
	if (res.done) {
		struct kiln_error cerr = {0};

		if (operation_commit(r, "repair", &res, NULL, trailers, &out->commit, &cerr) < 0) {
			out->commit_failed = true;
			if (!out->failed)
				*err = cerr;
		}
	}
	json_decref(trailers);
	return rc;
}

void operation_repair_outcome_release(struct op_repair_outcome *out)
{
	json_decref(out->done);
	free(out->commit);
	memset(out, 0, sizeof(*out));
}
