/*
 * reap_op.c - kiln reap, run whole; see reap_op.h. Owns the walk over the
 * workspaces, the decision for each (expiry.h's, and the idle policy's
 * measure through utilization.h) and the order of each destroy's steps
 * (operation.h's operation_open and operation_destroy). Its own words are the outcomes
 * it hands the ui, one object per workspace.
 */
#include "reap_op.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypt.h"
#include "expiry.h"
#include "lock.h"
#include "signals.h"
#include "state.h"
#include "strbuf.h"
#include "timefmt.h"
#include "utilization.h"
#include "workspace.h"

/* One workspace's reap: what it was asked, whom it tells, and what it decided. */
struct reap_ctx {
	const struct reap_op_options *o;
	const struct reap_ui *ui;
	const char *name; /* the workspace */
	int64_t now;
	json_t *out; /* the workspace's outcome object */
	bool stopped;
	bool idle;   /* reaping for idleness: the expiry is not rechecked */
	double util; /* the idle GPUs' mean utilization, for the ledger */
};

/* Under the lock: the expiry may have been extended, or another reap done it. */
static int recheck(struct op_run *r, void *arg)
{
	struct reap_ctx *c = arg;
	int64_t left;
	enum reap_decision d = expiry_reap_decision(r->state, c->now, &left);

	/* The ledger says why (kiln-report(1)): Kiln-Reap-Reason, and the idle GPUs' utilization.
	 */
	r->trailers =
	    json_pack("[s]", c->idle ? "Kiln-Reap-Reason: idle" : "Kiln-Reap-Reason: ttl");
	if (c->idle) {
		r->has_gpu_util = true;
		r->gpu_util = c->util;
	}
	if (d == REAP_DESTROY || (c->idle && state_resource_count(r->state) > 0))
		return 0;
	c->stopped = true;
	json_object_set_new(c->out, "outcome", json_string(d == REAP_KEEP ? "kept" : "skipped"));
	json_object_set_new(c->out, "reason",
			    json_string(d == REAP_KEEP
					    ? "its expiry moved while reap waited for the lock"
					    : "already reaped (by another process)"));
	return 1;
}

static void set_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, json_string(v));
}

/*
 * The spec text the last apply recorded with the expiry, written to a
 * private temporary file for the destroy (caller unlinks and frees the
 * path); NULL when the state holds none or the file cannot be written.
 */
static char *spec_copy(const json_t *state, enum state_policy member)
{
	const json_t *t = state_policy_spec_text(state, member);
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;
	size_t len = json_string_length(t);

	if (!json_is_string(t))
		return NULL;
	path = xasprintf("%s/kiln-reap-XXXXXX.yaml", dir && *dir ? dir : "/tmp");
	fd = mkstemps(path, 5);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	if (write(fd, json_string_value(t), len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

/* Another holds the workspace's lock: the reap skips it (out says who). Releases info. */
static bool skipped_locked(json_t *out, struct lock_info *info)
{
	char *who = lock_info_describe(info);

	set_str(out, "outcome", "skipped");
	json_object_set_new(out, "reason", json_sprintf("locked by %s", who));
	free(who);
	lock_info_release(info);
	return true;
}

/* Why no spec can be read for the destroy; in out. */
static bool no_spec(json_t *out, const char *spec, const char *name)
{
	set_str(out, "outcome", "failed");
	json_object_set_new(
	    out, "reason",
	    spec ? json_sprintf("the spec %s recorded at apply is not readable here, and the state "
				"holds no copy of it; run reap where apply runs, or kiln destroy "
				"SPEC -w %s",
				spec, name)
		 : json_sprintf("no spec is recorded; kiln destroy SPEC -w %s", name));
	return false;
}

/* The run of workspace name with spec, for a destroy (or, not, a measure). */
static struct op_options reap_run_options(const struct reap_ctx *c, bool destroy)
{
	return (struct op_options){
	    .vars = c->o->vars,
	    .state = c->o->state,
	    .workspace = c->name,
	    .lock_timeout = destroy ? c->o->lock_timeout : 0,
	    .refresh = true,
	    .destroy = destroy,
	};
}

/*
 * The destroy of one expired workspace (operation_destroy), as `kiln destroy
 * --auto-approve` runs it, with nothing to show but its errors: 0
 * destroyed (*deleted, *released), 1 stopped under the lock, -1 failed
 * (after saying why), with *open_failed when the spec, the store or the
 * lock could not be opened.
 */
static int reap_destroy(struct reap_ctx *c, const char *spec, bool *open_failed, size_t *deleted,
			size_t *released)
{
	const struct reap_ui *ui = c->ui;
	struct op_options ro = reap_run_options(c, true);
	struct op_run r = {0};
	struct op_apply_outcome o = {0};
	struct kiln_error err = {0};
	struct crypt_key key;
	struct op_apply_options ao = {.parallelism = c->o->parallelism};
	int rc = -1, have_key;

	signals_reset(); /* each workspace's destroy is a run of its own */
	have_key = crypt_key_load(&key, &err);
	crypt_key_wipe(&key);
	if (have_key < 0) {
		/* Before anything changes: a secret that cannot be sealed would be lost. */
		ui->base.error(ui->base.arg, &err);
		goto out;
	}
	ao.keep_secrets = have_key == 1;
	if (operation_open(&r, &ro, spec, true, "destroy", &ui->base) < 0) {
		*open_failed = true;
		goto out;
	}
	rc = operation_destroy(&r, &ao, recheck, c, &o, &err);
	if (rc < 0 && err.msg[0])
		ui->base.error(ui->base.arg, &err);
	if (rc == 0 || o.commit_failed) {
		*deleted = o.res.deleted;
		*released = o.res.released;
		if (json_array_size(o.res.errors))
			ui->failures(ui->base.arg, o.res.errors);
		if (o.res.failed || o.res.interrupted || o.res.skipped)
			rc = -1;
	}
out:
	operation_apply_outcome_release(&o);
	operation_close(&r);
	return rc;
}

/*
 * Where the spec the destroy uses is recorded: the idle policy's, the
 * TTL's, or, with no TTL, the capacity window's (operation_window_prepare).
 */
static enum state_policy reap_member(const json_t *state, bool idle)
{
	if (idle)
		return STATE_POLICY_IDLE;
	if (!state_policy_spec(state, STATE_POLICY_EXPIRY) &&
	    !state_policy_spec_text(state, STATE_POLICY_EXPIRY) &&
	    state_policy(state, STATE_POLICY_WINDOW))
		return STATE_POLICY_WINDOW;
	return STATE_POLICY_EXPIRY;
}

/* Destroy one expired workspace; fills out. Returns false when it failed. */
static bool reap_one(struct store *s, const json_t *state, struct reap_ctx c, json_t *out)
{
	enum state_policy member = reap_member(state, c.idle);
	const char *spec = state_policy_spec(state, member);
	struct kiln_error err = {0};
	struct lock_info info;
	git_oid oid;
	char *copy = NULL;
	bool open_failed = false;
	size_t deleted = 0, released = 0;
	int rc;

	rc = lock_read(s, c.name, &info, &oid, &err);
	if (rc == 0 && !(c.o->lock_timeout > 0))
		return skipped_locked(out, &info);
	if (rc == 0)
		lock_info_release(&info);
	if (!spec || access(spec, R_OK) != 0) {
		/* Moved or deleted since the apply: destroy with the copy the state holds. */
		copy = spec_copy(state, member);
		if (!copy)
			return no_spec(out, spec, c.name);
		json_object_set_new(out, "spec",
				    json_sprintf("the copy recorded at apply (%s is not here)",
						 spec ? spec : "its file"));
		spec = copy;
	}
	rc = reap_destroy(&c, spec, &open_failed, &deleted, &released);
	if (copy) {
		unlink(copy);
		free(copy);
	}
	if (c.stopped)
		return true;
	if (rc == 0) {
		set_str(out, "outcome", "reaped");
		json_object_set_new(out, "deleted", json_integer((json_int_t)deleted));
		json_object_set_new(out, "retained", json_integer((json_int_t)released));
		return true;
	}
	/* Lost the race for the lock to another process: not a failure. */
	if (open_failed && lock_read(s, c.name, &info, &oid, &err) == 0)
		return skipped_locked(out, &info);
	set_str(out, "outcome", "failed");
	set_str(out, "reason", "the destroy failed; see the errors above");
	return false;
}

/*
 * Whether the workspace's GPUs have been idle as its spec's idle: policy
 * says, measured through its provider: 1 idle (c->util: their mean), 0 not
 * or not known (out says why: never reaped on missing data), -1 failed.
 */
static int idle_decide(struct reap_ctx *c, const json_t *state, json_t *out)
{
	const char *spec = state_policy_spec(state, STATE_POLICY_IDLE);
	struct op_options ro = reap_run_options(c, false);
	struct op_run r = {0};
	struct kiln_error err = {0};
	struct strbuf why = {0};
	char *copy = NULL;
	const char *addr;
	json_t *res, *groups = NULL;
	double sum = 0;
	size_t nodes = 0;
	int rc = -1;

	if (!spec || access(spec, R_OK) != 0) {
		if (!(copy = spec_copy(state, STATE_POLICY_IDLE))) {
			no_spec(out, spec, c->name);
			goto out;
		}
		spec = copy;
	}
	if (operation_open(&r, &ro, spec, false, "reap", &c->ui->base) < 0) {
		set_str(out, "outcome", "failed");
		set_str(out, "reason", "its spec could not be opened; see the errors above");
		goto out;
	}
	rc = 1;
	groups = utilization_idle_groups(r.e, r.state);
	json_object_foreach(groups, addr, res)
	{
		const struct spec_idle *p = utilization_idle_policy(r.e->spec, addr);
		json_t *one, *u = NULL, *g;
		const char *diag;

		one = json_pack("{s:O}", addr, res);
		if (utilization_measure(r.e, one, c->now, p->for_seconds, &u, &err) < 0 || !u) {
			json_decref(one);
			set_str(out, "outcome", "failed");
			set_str(out, "reason",
				err.msg[0] ? err.msg : "its provider cannot measure");
			rc = -1;
			goto out;
		}
		json_decref(one);
		g = json_array_get(json_object_get(u, "groups"), 0);
		diag = json_string_value(json_object_get(g, "diagnosis"));
		if (diag && strcmp(diag, "idle") == 0 &&
		    json_integer_value(json_object_get(g, "reporting")) ==
			json_integer_value(json_object_get(g, "nodes"))) {
			sb_addf(&why, "%s%s: %s", why.len ? "; " : "",
				json_string_value(json_object_get(g, "name")),
				json_string_value(json_object_get(g, "why")));
			sum += json_number_value(json_object_get(g, "gpu_util")) *
			       (double)json_integer_value(json_object_get(g, "nodes"));
			nodes += (size_t)json_integer_value(json_object_get(g, "nodes"));
		} else {
			set_str(out, "outcome", "kept");
			if (diag && strcmp(diag, "idle") != 0 && strcmp(diag, "no data") != 0)
				json_object_set_new(
				    out, "reason",
				    json_sprintf("%s is not idle (%s: %s)",
						 json_string_value(json_object_get(g, "name")),
						 diag,
						 json_string_value(json_object_get(g, "why"))));
			else
				json_object_set_new(
				    out, "reason",
				    json_sprintf(
					"no utilization data for %s (%s); reap never reaps "
					"on missing data",
					json_string_value(json_object_get(g, "name")),
					json_string_value(json_object_get(g, "why"))));
			rc = 0;
		}
		json_decref(u);
		if (rc == 0)
			goto out;
	}
	if (!nodes) {
		set_str(out, "outcome", "kept");
		set_str(out, "reason", "no node group under an idle policy to measure");
		rc = 0;
		goto out;
	}
	c->util = sum / (double)nodes;
	json_object_set_new(out, "idle", json_string(why.buf));
out:
	if (copy) {
		unlink(copy);
		free(copy);
	}
	sb_release(&why);
	json_decref(groups);
	operation_close(&r);
	return rc;
}

/*
 * When the workspace expires, as reap decided it: the TTL's expiry, or an
 * hour before a capacity window ends when that comes first ("window" names
 * the block).
 */
static void reap_when(json_t *o, const json_t *state, int64_t now, int64_t left)
{
	const char *addr = NULL;
	int64_t end;
	char at[21];

	json_object_set_new(o, "expires", json_string(timefmt_time_format_rfc3339(now + left, at)));
	json_object_set_new(o, "left_seconds", json_integer(left));
	if (expiry_window_end(state, &end, &addr) && end - EXPIRY_WINDOW_MARGIN == now + left)
		json_object_set_new(o, "window", json_string(addr));
}

/* Decide for workspace name, and reap it when it is due; its outcome in o. */
static void reap_workspace(const struct reap_op_options *opts, const struct reap_ui *ui,
			   struct store *s, const char *name, json_t *o, struct reap_op_result *out)
{
	struct workspace *w = NULL;
	struct kiln_error err = {0};
	struct reap_ctx rc = {.o = opts, .ui = ui, .name = name, .now = opts->now, .out = o};
	json_t *state;
	const char *expires;
	int64_t left;
	enum reap_decision d;

	if (workspace_open(&w, s, name, &err) < 0) {
		set_str(o, "outcome", "failed");
		set_str(o, "reason", err.msg);
		out->failed++;
		return;
	}
	state = json_incref(w->state);
	workspace_close(w, &err);
	d = expiry_reap_decision(state, opts->now, &left);
	if ((expires = state_expires(state)))
		set_str(o, "expires", expires);
	if (d != REAP_NO_TTL)
		reap_when(o, state, opts->now, left);
	if (d != REAP_DESTROY && state_policy(state, STATE_POLICY_IDLE) &&
	    state_resource_count(state) > 0) {
		int idle = idle_decide(&rc, state, o);

		if (idle < 0)
			out->failed++;
		rc.idle = idle == 1;
	}
	if ((d == REAP_DESTROY || rc.idle) && opts->dry_run) {
		set_str(o, "outcome", "would reap");
		json_object_set_new(o, "resources",
				    json_integer((json_int_t)state_resource_count(state)));
	} else if (d == REAP_DESTROY || rc.idle) {
		if (!reap_one(s, state, rc, o))
			out->failed++;
		else if (strcmp(json_string_value(json_object_get(o, "outcome")), "reaped") == 0)
			out->reaped++;
	} else if (!json_object_get(o, "outcome")) {
		set_str(o, "outcome", "kept");
	}
	json_decref(state);
}

int reap_op_run(const struct reap_op_options *o, const struct reap_ui *ui,
		struct reap_op_result *out)
{
	struct kiln_error err = {0};
	struct store *s = NULL;
	char **names = NULL;
	size_t n = 0, i;
	int rc = -1;

	*out = (struct reap_op_result){0};
	if (store_open_existing(&s, o->state, &err) < 0) {
		/* The store's hint is about creating one; a reap has nothing to create. */
		err.hint[0] = '\0';
		kiln_error_hint(&err, "run reap where apply runs, or select the state repository "
				      "with --state URL or KILN_STATE");
		goto out;
	}
	if (store_ref_list(s, "refs/heads/", &names, &n, &err) < 0)
		goto out;
	out->location = xstrdup(store_location(s));
	out->workspaces = json_array();
	for (i = 0; i < n; i++) {
		json_t *one = json_pack("{s:s}", "workspace", names[i]);

		json_array_append_new(out->workspaces, one);
		reap_workspace(o, ui, s, names[i], one, out);
		ui->workspace(ui->base.arg, one);
	}
	rc = 0;
out:
	if (rc < 0)
		ui->base.error(ui->base.arg, &err);
	if (names)
		store_names_free(names, n);
	store_free(s);
	return rc;
}

void reap_op_result_release(struct reap_op_result *out)
{
	json_decref(out->workspaces);
	free(out->location);
	*out = (struct reap_op_result){0};
}
