/*
 * sprawl_op.c - kiln sprawl, run whole; see sprawl_op.h. Owns what is read
 * and in which order, the report, which orphans --destroy keeps and why,
 * the question, and the order of the adoption or deletion (sprawl.c's).
 */
#include "sprawl_op.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "jsonc.h"
#include "lock.h"
#include "log.h"
#include "signals.h"
#include "state.h"
#include "store.h"
#include "workspace.h"

/*
 * {"WS": state} for every workspace branch, with the journal this machine
 * keeps of an apply killed before its commit replayed over it (what the next
 * plan recovers is not an orphan); locked: {"WS": "who"} for every workspace
 * whose lock is held (an apply may be creating what no state records yet).
 */
static int read_workspaces(struct store *s, json_t **out, json_t *locked, struct kiln_error *err)
{
	char **names;
	size_t n, i;

	*out = NULL;
	if (store_ref_list(s, "refs/heads/", &names, &n, err) < 0)
		return -1;
	*out = json_object();
	for (i = 0; i < n; i++) {
		struct workspace *w = NULL;

		if (!store_workspace_name_ok(names[i]))
			continue;
		if (workspace_open(&w, s, names[i], err) < 0) {
			store_names_free(names, n);
			json_decref(*out);
			*out = NULL;
			return -1;
		}
		if (w->exists && w->state) {
			json_t *st = json_deep_copy(w->state);
			char *path = journal_path(store_location(s), names[i]);
			struct kiln_error jerr = {0};

			if (journal_replay(path, git_oid_tostr_s(&w->head), st, NULL, &jerr) == -1)
				log_warn("%s", jerr.msg);
			free(path);
			json_object_set_new(*out, names[i], st);
		}
		workspace_close(w, NULL);
		{
			struct lock_info info;
			git_oid oid;
			struct kiln_error lerr = {0};

			if (lock_read(s, names[i], &info, &oid, &lerr) == 0) {
				char *who = lock_info_describe(&info);

				/* A lease run out: its holder died, and records nothing more. */
				if (!lock_info_expired(&info))
					json_object_set_new(locked, names[i], json_string(who));
				free(who);
				lock_info_release(&info);
			}
		}
	}
	store_names_free(names, n);
	return 0;
}

/*
 * {"LINEAGE": true} of every state this repository holds or held: each
 * workspace's, each archived workspace's (a deleted workspace's resources
 * are still this repository's orphans), and each lock's (a first apply has
 * no commit yet). Unreadable archives are skipped: a resource they alone
 * would claim is then reported as another state's, which is the safe side.
 */
static json_t *known_lineages(struct store *s, const json_t *recorded)
{
	json_t *known = json_object();
	const json_t *st;
	const char *ws;
	char **names;
	size_t n, i;
	struct kiln_error err = {0};

	json_object_foreach_const(recorded, ws, st) if (state_lineage(st))
	    json_object_set_new(known, state_lineage(st), json_true());
	if (store_ref_list(s, "refs/kiln/archive/", &names, &n, &err) == 0) {
		for (i = 0; i < n; i++) {
			char *ref = xasprintf("refs/kiln/archive/%s", names[i]), *text = NULL;
			json_t *doc = NULL;
			git_oid oid;
			size_t len;

			if (store_ref_read(s, ref, &oid, &err) == 0 &&
			    store_read_file(s, &oid, STORE_STATE_FILE, &text, &len, &err) == 0 &&
			    state_parse(&doc, text, len, ref, &err) == 0 && state_lineage(doc))
				json_object_set_new(known, state_lineage(doc), json_true());
			json_decref(doc);
			free(text);
			free(ref);
		}
		store_names_free(names, n);
	}
	if (store_ref_list(s, "refs/kiln/locks/", &names, &n, &err) == 0) {
		for (i = 0; i < n; i++) {
			struct lock_info info;
			git_oid oid;

			if (lock_read(s, names[i], &info, &oid, &err) == 0) {
				if (info.lineage)
					json_object_set_new(known, info.lineage, json_true());
				lock_info_release(&info);
			}
		}
		store_names_free(names, n);
	}
	return known;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/*
 * Without --provider: the one every workspace of the state repository
 * records, so sprawl next to a sim cluster looks in the sim; otherwise the
 * first real cloud of the provider table.
 */
static const char *recorded_provider(const json_t *recorded)
{
	const char *name = NULL, *ws, *cloud = provider_first(false)->name;
	const json_t *st;

	json_object_foreach_const(recorded, ws, st)
	{
		const char *p = state_provider(st);

		if (!p)
			continue;
		if (name && strcmp(name, p) != 0)
			return cloud;
		name = p;
	}
	return name && provider_find(name) ? name : cloud;
}

/*
 * The report: where it looked, the orphans (each marked "locked" when its
 * workspace's lock is held) and the unmanaged GPU instances, priced.
 */
static json_t *build_report(const struct sprawl_op_options *f, struct store *s, const struct provider *prov,
			    struct prov_ctx *ctx, const json_t *recorded, const json_t *locked,
			    json_t *orphans, json_t *un, size_t foreign)
{
	const struct catalog *cat = sprawl_catalog(prov, ctx);
	double oh, uh;
	const char *k;
	json_t *rep, *o;
	const json_t *st;
	size_t i;

	/* A locked workspace may be mid-apply: its orphans may be its next commit. */
	json_array_foreach(orphans, i, o)
	{
		const char *who = jstr(locked, jstr(o, "workspace"));

		json_object_set_new(o, "locked", json_boolean(who != NULL));
		if (who) {
			char *why = xasprintf("%s; the workspace is locked by %s: an apply may "
					      "still record it",
					      jstr(o, "reason"), who);

			json_object_set_new(o, "reason", json_string(why));
			free(why);
		}
	}
	oh = sprawl_price_all(prov, ctx, orphans);
	uh = sprawl_price_all(prov, ctx, un);
	rep = json_pack("{s:s, s:b, s:s?, s:s, s:[], s:s, s:{s:s?, s:s?, s:s?}}", "provider",
			prov->name, "simulated", prov->simulated, "region", f->run.region, "state",
			store_location(s), "workspaces", "currency", "USD", "catalog", "provider",
			cat ? cat->provider : NULL, "region", cat ? cat->region : NULL, "date",
			cat ? cat->date : NULL);
	if (!f->run.region)
		json_object_set_new(rep, "region", json_string(sprawl_default_region(prov)));
	json_object_foreach_const(recorded, k, st)
	    json_array_append_new(json_object_get(rep, "workspaces"), json_string(k));
	/* Live attrs may hold secrets (a join token): the report names, never dumps. */
	json_object_set_new(rep, "orphans", json_array());
	json_array_foreach(orphans, i, o)
	{
		json_t *c = json_copy(o);

		json_object_del(c, "attrs");
		json_array_append_new(json_object_get(rep, "orphans"), c);
	}
	json_object_set(rep, "unmanaged", un);
	json_object_set_new(rep, "orphans_hourly", json_real(oh));
	json_object_set_new(rep, "other_states", json_integer((json_int_t)foreign));
	json_object_set_new(rep, "unmanaged_hourly", json_real(uh));
	json_object_set_new(rep, "hourly_total", json_real(oh + uh));
	json_object_set_new(rep, "monthly_total", json_real((oh + uh) * 730));
	return rep;
}

static void say(const struct sprawl_ui *ui, const struct kiln_error *err)
{
	ui->base.error(ui->base.arg, err);
}

static void refuse(const struct sprawl_ui *ui, const struct kiln_error *err)
{
	ui->refuse(ui->base.arg, err);
}

/*
 * After an interrupt stopped an adoption or a destroy (signals.h): that it
 * was asked for, and where to see the rest; -1 then, else rc.
 */
static int interrupt_report(const struct sprawl_ui *ui, const char *done, int rc)
{
	int sig = signals_interrupted();
	struct kiln_error err = {0};

	if (!sig)
		return rc;
	kiln_error_set(&err,
		       "stopped by SIG%s, as asked: what was %s is recorded, and nothing more was "
		       "started",
		       sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", done);
	kiln_error_hint(&err, "run `kiln sprawl` to see what remains");
	refuse(ui, &err);
	return -1;
}

/* --adopt: the report, then each workspace's adoption and what was not adopted. */
static int run_adopt(const struct sprawl_op_options *f, const struct sprawl_ui *ui,
		     const struct provider *prov, const json_t *orphans, json_t *rep,
		     struct sprawl_results *d)
{
	json_t *skipped = json_array(), *commits = json_array();
	int rc;

	ui->report(ui->base.arg, rep, NULL);
	ui->started(ui->base.arg);
	rc = sprawl_adopt(prov, &f->run, orphans, d, skipped, commits) == 0 &&
		     json_array_size(d->failed) == 0
		 ? 0
		 : -1;
	json_object_set(rep, "adopted", d->done);
	json_object_set(rep, "failed", d->failed);
	json_object_set_new(rep, "skipped", skipped);
	json_object_set_new(rep, "commits", commits);
	ui->done(ui->base.arg, rep, true);
	return interrupt_report(ui, "adopted", rc);
}

/* Why --destroy keeps orphan o, or NULL when it deletes it. */
static const char *keep_reason(const struct sprawl_op_options *f, const struct provider *prov,
			       const json_t *o)
{
	if (json_is_true(json_object_get(o, "locked")))
		return "its workspace is locked; run again when the lock is released";
	if (!store_workspace_name_ok(jstr(o, "workspace")))
		return "its kiln:workspace tag is not a workspace name, so no lock covers its "
		       "deletion; delete it by hand";
	if (!f->include_stores && sprawl_is_store(prov, jstr(o, "type")))
		return "a store; --include-stores deletes it";
	return NULL;
}

/* Ask, unless --auto-approve; -1 after saying nothing was deleted. */
static int destroy_ask(const struct sprawl_op_options *f, const struct sprawl_ui *ui, size_t n)
{
	struct kiln_error err = {0};
	char *q;
	bool yes;

	if (f->auto_approve)
		return 0;
	if (!f->can_ask) {
		kiln_error_set(&err, "standard input is not a terminal, so kiln cannot ask for "
				     "approval; nothing was deleted");
		kiln_error_hint(&err,
				"review with `kiln sprawl`, then pass --destroy --auto-approve");
		refuse(ui, &err);
		return -1;
	}
	q = xasprintf("Do you want to delete these %zu orphan%s?", n, n == 1 ? "" : "s");
	yes = ui->ask(ui->base.arg, q);
	free(q);
	if (yes)
		return 0;
	kiln_error_set(&err, "not confirmed; nothing was deleted");
	refuse(ui, &err);
	return -1;
}

/* --destroy: what goes, what stays, asking first; the orphans deleted. */
static int run_destroy(const struct sprawl_op_options *f, const struct sprawl_ui *ui,
		       const struct provider *prov, const json_t *orphans, json_t *rep,
		       struct sprawl_results *d)
{
	json_t *chosen = json_array(), *kept = json_array(), *shown = json_array(), *o;
	size_t i;
	int rc = -1;

	json_array_foreach(orphans, i, o)
	{
		const char *why = keep_reason(f, prov, o);

		if (!why) {
			json_array_append(chosen, o);
			continue;
		}
		json_array_append(kept, o);
		json_array_append_new(shown, json_pack("{s:O, s:O, s:O, s:O, s:s}", "cluster",
						       json_object_get(o, "cluster"), "workspace",
						       json_object_get(o, "workspace"), "address",
						       json_object_get(o, "address"), "id",
						       json_object_get(o, "id"), "keep", why));
	}
	ui->report(ui->base.arg, rep, shown);
	if (json_array_size(chosen) > 0 && destroy_ask(f, ui, json_array_size(chosen)) < 0)
		goto out;
	if (json_array_size(chosen) > 0) {
		ui->started(ui->base.arg);
		rc = sprawl_destroy(prov, &f->run, chosen, d) == 0 ? 0 : -1;
	} else {
		rc = 0;
	}
	json_object_set(rep, "destroyed", d->done);
	json_object_set(rep, "failed", d->failed);
	json_object_set_new(rep, "kept", json_array());
	json_array_foreach(shown, i, o)
	{
		json_t *k = json_copy(o);

		json_object_del(k, "keep");
		json_array_append_new(json_object_get(rep, "kept"), k);
	}
	ui->done(ui->base.arg, rep, json_array_size(chosen) > 0);
	if (json_array_size(chosen) > 0)
		rc = interrupt_report(ui, "deleted", rc);
out:
	json_decref(chosen);
	json_decref(kept);
	json_decref(shown);
	return rc;
}

int sprawl_op_run(const struct sprawl_op_options *o, const struct sprawl_ui *ui)
{
	struct store *s = NULL;
	struct prov_ctx *ctx = NULL;
	const struct provider *prov = NULL;
	struct kiln_error err = {0};
	json_t *recorded = NULL, *locked = json_object(), *live = NULL, *orphans = NULL,
	       *un = NULL, *rep = NULL, *known = NULL;
	struct sprawl_results d = {.on_result = ui->result,
				   .on_commit = ui->commit,
				   .on_error = ui->base.error,
				   .arg = ui->base.arg};
	size_t foreign = 0;
	int rc = -1;

	sprawl_results_init(&d);
	if (store_open_existing(&s, o->run.state, &err) < 0 || store_sync(s, &err) < 0 ||
	    read_workspaces(s, &recorded, locked, &err) < 0)
		goto report;
	prov = provider_find(o->provider ? o->provider : recorded_provider(recorded));
	if (sprawl_provider_open(prov, o->run.region, &ctx, &err) < 0 ||
	    sprawl_list_tagged(prov, ctx, &live, &err) < 0 ||
	    sprawl_list_unmanaged(prov, ctx, &un, &err) < 0)
		goto report;
	known = known_lineages(s, recorded);
	orphans = sprawl_orphans(live, recorded, known, &foreign);
	rep = build_report(o, s, prov, ctx, recorded, locked, orphans, un, foreign);
	if (o->mode == SPRAWL_OP_ADOPT) {
		rc = run_adopt(o, ui, prov, orphans, rep, &d);
	} else if (o->mode == SPRAWL_OP_DESTROY) {
		rc = run_destroy(o, ui, prov, orphans, rep, &d);
	} else {
		ui->report(ui->base.arg, rep, NULL);
		ui->done(ui->base.arg, rep, false);
		rc = 0;
	}
	goto out;
report:
	say(ui, &err);
out:
	sprawl_results_release(&d);
	json_decref(rep);
	json_decref(orphans);
	json_decref(un);
	json_decref(live);
	json_decref(recorded);
	json_decref(known);
	json_decref(locked);
	if (prov)
		sprawl_provider_close(prov, ctx);
	store_free(s);
	return rc;
}
