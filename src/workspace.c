/*
 * workspace.c - a workspace's state over the store; see workspace.h.
 */
#include "workspace.h"

#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "provider.h"
#include "state.h"
#include "timefmt.h"

/*
 * A state names its provider, and every resource it records is of one of
 * that provider's types: a hand edit of either would have the wrong cloud
 * asked about (or told to delete) what the state records.
 */
static int provider_check(const json_t *doc, const char *where, struct kiln_error *err)
{
	const char *name = state_provider(doc), *addr;
	const struct provider *p;
	const json_t *res;

	if (!name)
		return 0; /* a workspace no apply has written yet */
	p = provider_find(name);
	if (!p) {
		kiln_error_set(err, "%s: provider '%s' is not built into this kiln", where, name);
		return -1;
	}
	state_foreach_resource(doc, addr, res)
	{
		const char *type = state_resource_type(res);

		if (!provider_type(p, type)) {
			kiln_error_set(err,
				       "%s: the state names provider '%s', but resource %s is of "
				       "type %s, which '%s' does not have",
				       where, name, addr, type, name);
			return -1;
		}
	}
	return 0;
}

static int read_head(struct workspace *w, struct kiln_error *err)
{
	char *text = NULL, sh[8];
	char *where;
	size_t len = 0;
	int rc;

	json_decref(w->state);
	w->state = NULL;
	rc = store_ref_read(w->store, w->branch, &w->head, err);
	if (rc < 0)
		return -1;
	w->exists = rc == 0;
	if (!w->exists)
		return 0;
	if (store_read_file(w->store, &w->head, STORE_STATE_FILE, &text, &len, err) < 0)
		return -1;
	where = xasprintf("state.json of workspace '%s' (commit %s)", w->name,
			  store_short(&w->head, sh));
	rc = state_parse(&w->state, text, len, where, err);
	if (rc == 0 && provider_check(w->state, where, err) < 0) {
		json_decref(w->state);
		w->state = NULL;
		rc = -1;
	}
	free(where);
	free(text);
	if (rc < 0) {
		/* Nothing is written on top of it; say how to find the last good commit. */
		if (err && !err->hint[0])
			kiln_error_hint(
			    err,
			    "`kiln log -p -w %s` shows how it changed; point refs/heads/%s in "
			    "%s back at the last good commit (git update-ref)",
			    w->name, w->name, store_location(w->store));
		return -1;
	}
	return 0;
}

const char *workspace_name(const char *name)
{
	const char *env = getenv("KILN_WORKSPACE");

	if (name && *name)
		return name;
	return env && *env ? env : WORKSPACE_DEFAULT;
}

int workspace_open(struct workspace **out, struct store *s, const char *name,
		   struct kiln_error *err)
{
	struct workspace *w;

	*out = NULL;
	name = workspace_name(name);
	if (!store_workspace_name_ok(name)) {
		kiln_error_set(err, "'%s' is not a workspace name", name);
		kiln_error_hint(err, "%s", WORKSPACE_NAME_RULE);
		return -1;
	}
	w = xcalloc(1, sizeof(*w));
	w->store = s;
	w->name = xstrdup(name);
	w->branch = store_branch_ref(name);
	if (store_sync(s, err) < 0 || read_head(w, err) < 0) {
		workspace_close(w, NULL);
		return -1;
	}
	*out = w;
	return 0;
}

int workspace_require(const struct workspace *w, struct kiln_error *err)
{
	if (w->exists)
		return 0;
	workspace_missing(w->store, w->name, err);
	return -1;
}

void workspace_missing(const struct store *s, const char *name, struct kiln_error *err)
{
	kiln_error_set(err, "workspace '%s' does not exist in %s", name, store_location(s));
	kiln_error_hint(err,
			"`kiln workspace list` shows the workspaces; `kiln workspace new %s` "
			"creates it",
			name);
}

int workspace_lock(struct workspace *w, const struct lock_options *opts, struct kiln_error *err)
{
	if (lock_acquire(&w->lock, w->store, w->name, opts, err) < 0)
		return -1;
	/*
	 * The head may have moved before we won the lock (the last sync was just
	 * before it): fetch again, then read it, so every write starts from the
	 * head that the lock now protects.
	 */
	if (store_sync(w->store, err) < 0)
		return -1;
	return read_head(w, err);
}

char *workspace_label(const struct workspace *w, const json_t *state)
{
	const char *cluster = state ? state_cluster(state) : NULL;

	return xasprintf("%s/%s", cluster ? cluster : "-", w->name);
}

int workspace_commit(struct workspace *w, json_t *state, bool keep_serial, const char *summary,
		     const char *const *extra, size_t nextra, struct kiln_error *err)
{
	struct strbuf msg = {0};
	char *text = NULL, old[8], now[8];
	const char *takeover = w->lock ? lock_takeover_note(w->lock) : NULL;
	git_oid commit, latest;
	char when[21];
	int64_t t;
	size_t i;
	int rc, ret = -1;

	if (w->lock && lock_verify(w->lock, err) < 0)
		return -1;
	if (!keep_serial)
		state_set_serial(state, w->exists ? state_serial(w->state) + 1 : 0);
	json_object_set_new(state, "workspace", json_string(w->name));
	if (state_check(state, "the new state", err) < 0 || timefmt_now(&t, err) < 0)
		return -1;
	text = state_canonical(state);
	{
		unsigned char md[SHA256_DIGEST_LENGTH];
		char hex[2 * SHA256_DIGEST_LENGTH + 1];
		size_t k;

		/* The digest lets an auditor check a state.json against the commit that recorded
		 * it. */
		SHA256((const unsigned char *)text, strlen(text), md);
		for (k = 0; k < sizeof(md); k++)
			snprintf(hex + 2 * k, 3, "%02x", md[k]);
		sb_addf(&msg,
			"%s\n\nKiln-Serial: %lld\nKiln-Lineage: %s\nKiln-State-Digest: sha256:%s\n"
			"Kiln-Version: %s\nKiln-Time: %s\n",
			summary, (long long)state_serial(state), state_lineage(state), hex,
			KILN_VERSION, timefmt_time_format_rfc3339(t, when));
	}
	if (takeover)
		sb_addf(&msg, "%s\n", takeover);
	for (i = 0; i < nextra; i++)
		sb_addf(&msg, "%s\n", extra[i]);
	if (store_commit_file(w->store, w->exists ? &w->head : NULL, STORE_STATE_FILE, text,
			      strlen(text), msg.buf, &commit, err) < 0)
		goto out;
	lock_critical_enter();
	rc = w->exists ? store_ref_update(w->store, w->branch, &w->head, &commit, err)
		       : store_ref_create(w->store, w->branch, &commit, err);
	lock_critical_leave();
	if (rc == STORE_MOVED || rc == STORE_EXISTS) {
		if (store_ref_read(w->store, w->branch, &latest, NULL) == 0)
			kiln_error_set(
			    err,
			    "workspace '%s' moved while this run worked: it is at %s, this "
			    "run started from %s; nothing was overwritten",
			    w->name, store_short(&latest, now),
			    w->exists ? store_short(&w->head, old) : "no commit");
		else
			kiln_error_set(err,
				       "workspace '%s' changed while this run worked; nothing "
				       "was overwritten",
				       w->name);
		kiln_error_hint(err, "run the command again on top of the new state");
		goto out;
	}
	if (rc < 0)
		goto out;
	log_debug("recorded %s on %s: %s", store_short(&commit, now), w->branch, summary);
	w->head = commit;
	w->exists = true;
	if (w->state != state) {
		json_decref(w->state);
		w->state = json_incref(state);
	}
	ret = 0;
out:
	free(text);
	sb_release(&msg);
	return ret;
}

int workspace_create(struct workspace *w, const char *summary, struct kiln_error *err)
{
	json_t *st;
	int ret;

	if (w->exists) {
		kiln_error_set(err, "workspace '%s' already exists", w->name);
		kiln_error_hint(err, "`kiln workspace list` shows the workspaces");
		return -1;
	}
	st = state_new(NULL, w->name, NULL);
	ret = workspace_commit(w, st, false, summary, NULL, 0, err);
	json_decref(st);
	return ret;
}

int workspace_delete_branch(struct workspace *w, struct kiln_error *err)
{
	char *archive, stamp[32];
	time_t now;
	struct tm tm;
	int rc, n;

	if (w->lock && lock_verify(w->lock, err) < 0)
		return -1;
	/* The history stays reachable for auditors: the old head gets an archive ref. */
	now = time(NULL);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (n = 1;; n++) {
		git_oid there;

		archive = n == 1 ? xasprintf("refs/kiln/archive/%s/%s", w->name, stamp)
				 : xasprintf("refs/kiln/archive/%s/%s-%d", w->name, stamp, n);
		rc = store_ref_create(w->store, archive, &w->head, err);
		/* Deleted more than once in one second: the same head, or the next name. */
		if (rc == STORE_EXISTS && store_ref_read(w->store, archive, &there, NULL) == 0 &&
		    git_oid_equal(&there, &w->head))
			rc = 0;
		if (rc != STORE_EXISTS || n == 100)
			break;
		free(archive);
	}
	if (rc != 0) {
		if (rc == STORE_EXISTS)
			kiln_error_set(
			    err, "cannot archive workspace '%s': too many deletions this second",
			    w->name);
		free(archive);
		return -1;
	}
	w->archive = archive;
	lock_critical_enter();
	rc = store_ref_delete(w->store, w->branch, &w->head, err);
	lock_critical_leave();
	if (rc == STORE_MOVED) {
		kiln_error_set(err, "workspace '%s' moved while deleting it; nothing was deleted",
			       w->name);
		return -1;
	}
	if (rc == 0)
		w->exists = false;
	return rc;
}

int workspace_close(struct workspace *w, struct kiln_error *err)
{
	struct kiln_error local;
	int rc = 0;

	if (!w)
		return 0;
	if (w->lock)
		rc = lock_release(w->lock, err ? err : &local);
	json_decref(w->state);
	free(w->name);
	free(w->branch);
	free(w->archive);
	free(w);
	return rc;
}
