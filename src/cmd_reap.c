/*
 * cmd_reap.c - `kiln reap`: destroy every workspace whose TTL has passed.
 *
 * Meant for a scheduled CI job. Each workspace branch of the state
 * repository is read; one past its expiry is destroyed through the
 * operations layer (operation_destroy), under its lock, as `kiln destroy` does. The expiry is
 * checked again under that lock, so two reaps at once destroy a workspace once: the second finds
 * the lock held (skipped) or the expiry gone (already reaped).
 *
 * The destroy needs the spec (the provider and its settings come from it):
 * the file recorded in the expiry by the last apply ("spec"), read relative
 * to where reap runs, as the CI job runs from the repository root; or, when
 * that has moved or gone, the copy of its text recorded beside it
 * ("spec_text").
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_run.h"
#include "cmds.h"
#include "crypt.h"
#include "expiry.h"
#include "lock.h"
#include "signals.h"
#include "state.h"
#include "utilization.h"
#include "workspace.h"
#include "jsonw.h"

enum {
	OPT_DRY_RUN = 1,
	OPT_JSON,
	OPT_VAR,
};

static const struct cli_option options[] = {
    {"dry-run", 0, false, OPT_DRY_RUN, NULL, "say what would be reaped; change nothing"},
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    {"var", 0, true, OPT_VAR, "NAME=VALUE",
     "a spec variable the destroy needs (repeatable), as for kiln destroy"},
    {"json", 0, false, OPT_JSON, NULL, "print the outcomes as one JSON document"},
};

const struct cmd_info cmd_reap_info = {
    .name = "reap",
    .usage = "[--dry-run] [--state URL] [OPTIONS]",
    .summary = "destroy workspaces whose TTL has passed or whose GPUs sat idle",
    .description = "Walk every workspace of the state repository and destroy those whose recorded\n"
		   "expiry (the spec's ttl or apply --ttl; see kiln-ttl(1)) has passed, each\n"
		   "through `kiln destroy` with its own lock and one commit. Stores with\n"
		   "`deletion: retain` are kept. The expiry is checked again under the lock: two\n"
		   "reaps at once destroy a workspace once. A workspace whose lock is held is\n"
		   "skipped (--lock-timeout waits that long first).\n\n"
		   "The destroy reads the spec file the last apply recorded, relative to the\n"
		   "current directory: run reap where apply runs (the repository root in CI).\n"
		   "When the file has moved or gone, it destroys with the copy of the spec the\n"
		   "apply recorded in the state.\n"
		   "KILN_REQUIRE_APPROVALS does not hold it back: the TTL was set by an apply\n"
		   "the approval policy governed, and `kiln ttl extend` only moves it later.\n\n"
		   "One line per workspace: kept, reaped, would reap (--dry-run), skipped or\n"
		   "failed. KILN_NOW (RFC 3339) sets the clock, for tests.\n\n"
		   "A workspace whose spec has an idle: policy is also destroyed once the GPUs\n"
		   "of every group under it stayed below gpu_below for its whole `for`, as\n"
		   "measured by the provider; never on missing data, which it says instead.\n"
		   "The commit records Kiln-Reap-Reason: idle (or ttl).\n\n"
		   "Exit status: 0 when nothing failed, 1 otherwise.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-reap(1), kiln-ttl(1), kiln-destroy(1)",
};

struct reap_ctx {
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

/*
 * The destroy of one expired workspace (operation_destroy), as `kiln destroy
 * --auto-approve` runs it, with nothing on standard output: 0 destroyed
 * (*deleted, *released), 1 stopped under the lock, -1 failed (after
 * reporting), with *open_failed when the spec, the store or the lock
 * could not be opened.
 */
static int reap_destroy(struct cli *cli, const char *spec, const char *name,
			const struct store_flags *sf, const char *const *vars, size_t nvars, struct reap_ctx *c,
			bool *open_failed, size_t *deleted, size_t *released)
{
	struct run_flags f;
	struct op_run r = {0};
	struct op_apply_outcome o = {0};
	struct kiln_error err = {0};
	struct crypt_key key;
	struct op_apply_options ao = {0};
	int rc = -1, have_key;
	size_t i;

	cmd_run_flags_init(&f);
	f.store = (struct store_flags){sf->state, name, sf->lock_timeout};
	f.destroy = true;
	ao.parallelism = f.parallelism;
	signals_reset(); /* each workspace's destroy is a run of its own */
	for (i = 0; i < nvars && i < 64; i++)
		if (cmd_run_flags_handle(&f, cli, OPT_RUN_VAR, vars[i]) < 0)
			goto out;
	have_key = crypt_key_load(&key, &err);
	crypt_key_wipe(&key);
	if (have_key < 0) {
		/* Before anything changes: a secret that cannot be sealed would be lost. */
		cmd_report(cli, &err);
		goto out;
	}
	ao.keep_secrets = have_key == 1;
	if (cmd_run_open(&r, cli, &f, spec, true, "destroy") < 0) {
		*open_failed = true;
		goto out;
	}
	rc = operation_destroy(&r, &ao, recheck, c, &o, &err);
	if (rc < 0 && err.msg[0])
		cmd_report(cli, &err);
	if (rc == 0 || o.commit_failed) {
		*deleted = o.res.deleted;
		*released = o.res.released;
		cmd_run_report_failures(cli, o.res.errors);
		if (o.res.failed || o.res.interrupted || o.res.skipped)
			rc = -1;
	}
out:
	operation_apply_outcome_release(&o);
	operation_close(&r);
	f.store = (struct store_flags){0};
	cmd_run_flags_release(&f);
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
static bool reap_one(struct cli *cli, struct store *s, const char *name, const json_t *state,
		     struct reap_ctx c, const struct store_flags *sf, const char *const *vars, size_t nvars,
		     json_t *out)
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

	rc = lock_read(s, name, &info, &oid, &err);
	if (rc == 0 && !(sf->lock_timeout > 0))
		return skipped_locked(out, &info);
	if (rc == 0)
		lock_info_release(&info);
	if (!spec || access(spec, R_OK) != 0) {
		/* Moved or deleted since the apply: destroy with the copy the state holds. */
		copy = spec_copy(state, member);
		if (!copy)
			return no_spec(out, spec, name);
		json_object_set_new(out, "spec",
				    json_sprintf("the copy recorded at apply (%s is not here)",
						 spec ? spec : "its file"));
		spec = copy;
	}
	rc = reap_destroy(cli, spec, name, sf, vars, nvars, &c, &open_failed, &deleted, &released);
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
	if (open_failed && lock_read(s, name, &info, &oid, &err) == 0)
		return skipped_locked(out, &info);
	set_str(out, "outcome", "failed");
	set_str(out, "reason", "the destroy failed; see the errors above");
	return false;
}

/*
 * Whether the workspace's GPUs have been idle as its spec's idle: policy
 * says, measured through its provider: 1 idle (*util: their mean), 0 not or
 * not known (out says why: never reaped on missing data), -1 failed.
 */
static int idle_decide(struct cli *cli, const char *name, const json_t *state, int64_t now,
		       const struct store_flags *sf, const char *const *vars, size_t nvars, json_t *out,
		       double *util)
{
	const char *spec = state_policy_spec(state, STATE_POLICY_IDLE);
	struct run_flags f;
	struct op_run r = {0};
	struct kiln_error err = {0};
	struct strbuf why = {0};
	char *copy = NULL;
	const char *addr;
	json_t *res, *groups = NULL;
	double sum = 0;
	size_t nodes = 0, i;
	int rc = -1;

	cmd_run_flags_init(&f);
	f.store = (struct store_flags){sf->state, name, 0};
	for (i = 0; i < nvars && i < 64; i++)
		if (cmd_run_flags_handle(&f, cli, OPT_RUN_VAR, vars[i]) < 0)
			goto out;
	if (!spec || access(spec, R_OK) != 0) {
		if (!(copy = spec_copy(state, STATE_POLICY_IDLE))) {
			no_spec(out, spec, name);
			goto out;
		}
		spec = copy;
	}
	if (cmd_run_open(&r, cli, &f, spec, false, "reap") < 0) {
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
		if (utilization_measure(r.e, one, now, p->for_seconds, &u, &err) < 0 || !u) {
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
	*util = sum / (double)nodes;
	json_object_set_new(out, "idle", json_string(why.buf));
out:
	if (copy) {
		unlink(copy);
		free(copy);
	}
	sb_release(&why);
	json_decref(groups);
	operation_close(&r);
	f.store = (struct store_flags){0};
	cmd_run_flags_release(&f);
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

static void print_line(const json_t *o)
{
	const char *ws = json_string_value(json_object_get(o, "workspace"));
	const char *outcome = json_string_value(json_object_get(o, "outcome"));
	const char *reason = json_string_value(json_object_get(o, "reason"));
	const char *expires = json_string_value(json_object_get(o, "expires"));
	json_int_t left = json_integer_value(json_object_get(o, "left_seconds"));
	const char *window = json_string_value(json_object_get(o, "window"));
	char *l = expiry_left_format(left);
	char *why = window ? xasprintf(", an hour before %s ends", window) : xstrdup("");

	printf("%s: %s", ws, outcome);
	if (json_is_string(json_object_get(o, "idle")) &&
	    (strcmp(outcome, "reaped") == 0 || strcmp(outcome, "would reap") == 0)) {
		if (strcmp(outcome, "reaped") == 0)
			printf(": %" JSON_INTEGER_FORMAT " deleted, %" JSON_INTEGER_FORMAT
			       " retained (idle: %s)",
			       json_integer_value(json_object_get(o, "deleted")),
			       json_integer_value(json_object_get(o, "retained")),
			       json_string_value(json_object_get(o, "idle")));
		else
			printf(": %" JSON_INTEGER_FORMAT " resources (idle: %s)",
			       json_integer_value(json_object_get(o, "resources")),
			       json_string_value(json_object_get(o, "idle")));
	} else if (strcmp(outcome, "reaped") == 0) {
		printf(": %" JSON_INTEGER_FORMAT " deleted, %" JSON_INTEGER_FORMAT
		       " retained (expired %s ago%s)",
		       json_integer_value(json_object_get(o, "deleted")),
		       json_integer_value(json_object_get(o, "retained")), l, why);
		if (json_is_string(json_object_get(o, "spec")))
			printf(", with %s", json_string_value(json_object_get(o, "spec")));
	} else if (strcmp(outcome, "would reap") == 0)
		printf(": %" JSON_INTEGER_FORMAT " resources (expired %s ago%s)",
		       json_integer_value(json_object_get(o, "resources")), l, why);
	else if (reason)
		printf(": %s", reason);
	else if (expires && left > 0)
		printf(": expires in %s (%s%s)", l, expires, why);
	else if (expires)
		printf(": expired %s ago, nothing left to destroy", l);
	else
		printf(": no ttl");
	putchar('\n');
	fflush(stdout);
	free(l);
	free(why);
}

int cmd_reap(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct store_flags sf = {0};
	struct kiln_error err = {0};
	struct store *s = NULL;
	char **names = NULL;
	const char **vars = NULL;
	size_t n = 0, i, nvars = 0, nreaped = 0, nfailed = 0;
	bool dry = false, json = false;
	json_t *all = NULL;
	int64_t now;
	int c, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_reap_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_DRY_RUN) {
			dry = true;
		} else if (c == OPT_JSON) {
			json = true;
		} else if (c == OPT_VAR) {
			vars = xrealloc(vars, (nvars + 1) * sizeof(*vars));
			vars[nvars++] = p.optarg;
		} else if (cmd_store_flags_handle(&sf, cli, c, p.optarg) < 0) {
			goto out;
		}
	}
	if (p.optind < argc) {
		cli_error(cli, "reap walks every workspace; `kiln destroy -w NAME` takes one",
			  "unexpected operand '%s'", argv[p.optind]);
		goto out;
	}
	if (timefmt_now(&now, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (store_open_existing(&s, sf.state, &err) < 0) {
		/* The store's hint is about creating one; a reap has nothing to create. */
		err.hint[0] = '\0';
		kiln_error_hint(&err, "run reap where apply runs, or select the state repository "
				      "with --state URL or KILN_STATE");
		cmd_report(cli, &err);
		goto out;
	}
	if (store_ref_list(s, "refs/heads/", &names, &n, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	all = json_array();
	for (i = 0; i < n; i++) {
		struct workspace *w = NULL;
		json_t *o = json_pack("{s:s}", "workspace", names[i]), *state = NULL;
		struct reap_ctx rc = {.now = now, .out = o};
		const char *expires;
		int64_t left;
		enum reap_decision d;

		json_array_append_new(all, o);
		if (workspace_open(&w, s, names[i], &err) < 0) {
			set_str(o, "outcome", "failed");
			set_str(o, "reason", err.msg);
			nfailed++;
			if (!json)
				print_line(o);
			continue;
		}
		state = json_incref(w->state);
		workspace_close(w, &err);
		d = expiry_reap_decision(state, now, &left);
		if ((expires = state_expires(state)))
			set_str(o, "expires", expires);
		if (d != REAP_NO_TTL)
			reap_when(o, state, now, left);
		if (d != REAP_DESTROY && state_policy(state, STATE_POLICY_IDLE) &&
		    state_resource_count(state) > 0) {
			int idle =
			    idle_decide(cli, names[i], state, now, &sf, vars, nvars, o, &rc.util);

			if (idle < 0)
				nfailed++;
			rc.idle = idle == 1;
		}
		if ((d == REAP_DESTROY || rc.idle) && dry) {
			set_str(o, "outcome", "would reap");
			json_object_set_new(o, "resources",
					    json_integer((json_int_t)state_resource_count(state)));
		} else if (d == REAP_DESTROY || rc.idle) {
			if (!reap_one(cli, s, names[i], state, rc, &sf, vars, nvars, o))
				nfailed++;
			else if (strcmp(json_string_value(json_object_get(o, "outcome")),
					"reaped") == 0)
				nreaped++;
		} else if (!json_object_get(o, "outcome")) {
			set_str(o, "outcome", "kept");
		}
		json_decref(state);
		if (!json)
			print_line(o);
	}
	if (json) {
		json_t *doc = json_pack("{s:s, s:b, s:O, s:I, s:I}", "now",
					timefmt_time_format_rfc3339(now, (char[21]){0}), "dry_run",
					dry, "workspaces", all, "reaped", (json_int_t)nreaped,
					"failed", (json_int_t)nfailed);

		jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	} else if (n == 0) {
		printf("No workspaces in %s.\n", store_location(s));
	}
	ret = nfailed ? KILN_EXIT_ERROR : KILN_EXIT_OK;
out:
	json_decref(all);
	if (names)
		store_names_free(names, n);
	store_free(s);
	free(vars);
	cli_parser_release(&p);
	return ret;
}
