/*
 * cmd_run.c - see cmd_run.h.
 */
#include "cmd_run.h"
#include "audit.h"
#include "cost.h"
#include "crypt.h"
#include "iam.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diff.h"
#include "journal.h"
#include "log.h"
#include "state.h"
#include "jsonw.h"

/* Milliseconds since the previous call, for --log-level debug timings. */
static double lap_ms(void)
{
	static struct timespec last;
	struct timespec now;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = last.tv_sec ? (double)(now.tv_sec - last.tv_sec) * 1e3 +
			       (double)(now.tv_nsec - last.tv_nsec) / 1e6
			 : 0;
	last = now;
	return ms;
}

void run_flags_init(struct run_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->refresh = true;
	f->parallelism = 32;
}

int run_flags_handle(struct run_flags *f, const struct cli *cli, int id, const char *arg)
{
	int rc = store_flags_handle(&f->store, cli, id, arg);
	struct kiln_error err = {0};
	char *end;
	long n;

	if (rc != 0)
		return rc;
	switch (id) {
	case OPT_RUN_VAR:
		if (spec_vars_add(&f->vars, arg, &err) < 0) {
			cli_error(cli, err.hint, "%s", err.msg);
			return -1;
		}
		return 1;
	case OPT_RUN_TARGET:
		*ARRAY_PUSH(f->targets, f->ntargets, f->captargets) = arg;
		return 1;
	case OPT_RUN_REPLACE:
		*ARRAY_PUSH(f->replace, f->nreplace, f->capreplace) = arg;
		return 1;
	case OPT_RUN_REFRESH:
		if (strcmp(arg, "true") == 0) {
			f->refresh = true;
		} else if (strcmp(arg, "false") == 0) {
			f->refresh = false;
		} else {
			cli_error(cli, "write --refresh=true or --refresh=false",
				  "--refresh '%s' is not true or false", arg);
			return -1;
		}
		return 1;
	case OPT_RUN_JSON:
		f->json = true;
		return 1;
	case OPT_RUN_MARKDOWN:
		f->markdown = true;
		return 1;
	case OPT_RUN_OUT:
		f->out = arg;
		return 1;
	case OPT_RUN_DETAILED:
		f->detailed = true;
		return 1;
	case OPT_RUN_DESTROY:
		f->destroy = true;
		return 1;
	case OPT_RUN_AUTO_APPROVE:
		f->auto_approve = true;
		return 1;
	case OPT_RUN_PARALLELISM:
		n = strtol(arg, &end, 10);
		if (*arg == '\0' || *end || n < 1 || n > 1024) {
			cli_error(cli, "use a number from 1 to 1024",
				  "--parallelism '%s' is not a number from 1 to 1024", arg);
			return -1;
		}
		f->parallelism = (int)n;
		return 1;
	}
	return 0;
}

int run_flags_parse(struct run_flags *f, struct cli_parser *p, struct cli *cli,
		    const struct cmd_info *info, int argc, char **argv, int *ret)
{
	int c;

	cli_parser_init(p, cli, info, argc, argv);
	while ((c = cli_next(p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			*ret = p->exit_code;
			return -1;
		}
		if (run_flags_handle(f, cli, c, p->optarg) < 0)
			return -1;
	}
	return 0;
}

void run_flags_release(struct run_flags *f)
{
	spec_vars_release(&f->vars);
	free(f->targets);
	free(f->replace);
}

struct engine *run_engine_only(struct cli *cli, const char *spec, const struct run_flags *f)
{
	struct spec_options opts = {f->vars.v, f->vars.n};
	struct kiln_error err = {0};
	struct diags d = {0};
	struct engine *e = NULL;

	if (engine_open(&e, spec, &opts, workspace_name(f->store.workspace), &d, &err) != 0) {
		diags_sort(&d);
		diags_print(&d, stderr, cli->color_err);
		if (err.msg[0])
			cmd_report(cli, &err);
		e = NULL;
	} else {
		diags_print(&d, stderr, cli->color_err);
	}
	diags_release(&d);
	return e;
}

const char *run_spec_operand(const struct cli *cli, int argc, char **argv, int optind)
{
	if (argc - optind > 1) {
		cli_error(cli, "give one spec (or plan file)", "too many operands: '%s' and '%s'",
			  argv[optind], argv[optind + 1]);
		return NULL;
	}
	if (argc - optind == 1)
		return argv[optind];
	if (access("kiln.yaml", F_OK) != 0) {
		cli_error(cli, "pass a spec path, for example examples/quickstart.yaml",
			  "no spec given and ./kiln.yaml does not exist");
		return NULL;
	}
	return "kiln.yaml";
}

/*
 * Who creates, when, from which state, for the kiln:owner tag another
 * state's plan shows: "NAME EMAIL at TIME from STATE", with what a tag
 * cannot hold as '_'. NULL when the author cannot be told (the tag is then
 * left out).
 */
char *run_owner(struct store *s)
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
	if (util_now(&now, &err) < 0)
		now = (int64_t)time(NULL);
	raw = xasprintf("%s %s at %s from %s", sig->name, sig->email,
			time_format_rfc3339(now, when), loc);
	out = prov_tag_value(raw);
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
static void first_lineage(struct run *r)
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

static int load_state(struct run *r)
{
	struct kiln_error err = {0};
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
	if (state_cluster(r->state) && strcmp(state_cluster(r->state), r->e->spec->cluster) != 0) {
		kiln_error_set(&err,
			       "workspace '%s' holds cluster '%s', but the spec describes cluster "
			       "'%s'",
			       ws, state_cluster(r->state), r->e->spec->cluster);
		kiln_error_hint(&err, "use another workspace (-w NAME) for this cluster");
		cmd_report(r->cli, &err);
		return -1;
	}
	/*
	 * Resources recorded on one cloud are never asked about on another. An
	 * empty state (a destroyed sim rehearsal) takes the spec's provider below.
	 */
	{
		const char *sp = json_string_value(json_object_get(r->state, "provider"));
		size_t nres = state_resource_count(r->state);

		if (sp && strcmp(sp, r->e->prov->name) != 0 && nres > 0) {
			kiln_error_set(&err,
				       "workspace '%s' records %zu resource%s on provider '%s' "
				       "(state.json of commit %.7s), but the spec names provider "
				       "'%s'",
				       ws, nres, nres == 1 ? "" : "s", sp, r->head,
				       r->e->prov->name);
			kiln_error_hint(
			    &err,
			    "use another workspace (-w NAME) for the cluster on '%s', or "
			    "destroy this one first with a spec naming provider '%s'; "
			    "`kiln log -p -w %s` shows who changed the state",
			    r->e->prov->name, sp, ws);
			cmd_report(r->cli, &err);
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
	n = journal_replay(path, r->head[0] ? r->head : NULL, r->state, &r->overlay, &err);
	if (n == -1) {
		cmd_report(r->cli, &err);
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
	r->owner = run_owner(r->store);
	r->e->scope.owner = r->owner;
	return 0;
}

/* A local state repository that does not exist yet: plan against empty state. */
static bool local_store_missing(const struct store_flags *f)
{
	const char *loc = f->state ? f->state : getenv("KILN_STATE");

	if (!loc || !*loc)
		loc = ".kiln/state.git";
	if (strstr(loc, "://"))
		return false;
	return access(loc, F_OK) != 0;
}

int run_open(struct run *r, struct cli *cli, struct run_flags *f, const char *spec_path, bool lock,
	     const char *operation)
{
	struct spec_options opts = {f->vars.v, f->vars.n};
	struct lock_options lo = {.operation = operation, .timeout = f->store.lock_timeout};
	char lineage[37];
	struct kiln_error err = {0};
	struct diags d = {0};
	bool plan_only = r->plan_only;
	int rc;

	memset(r, 0, sizeof(*r));
	r->plan_only = plan_only;
	r->cli = cli;
	r->f = f;
	r->spec_path = spec_path;
	if (strcmp(spec_path, "-") == 0) {
		cli_error(cli, "write the spec to a file: plans are bound to the file's digest",
			  "%s reads a spec file, not standard input", cli->cmd);
		return -1;
	}
	lap_ms();
	rc = engine_open(&r->e, spec_path, &opts, workspace_name(f->store.workspace), &d, &err);
	log_debug("loaded and expanded %s into %zu resources in %.0f ms", spec_path,
		  r->e ? json_object_size(r->e->desired) : 0, lap_ms());
	diags_sort(&d);
	diags_print(&d, stderr, cli->color_err);
	diags_release(&d);
	if (rc != 0) {
		if (err.msg[0])
			cmd_report(cli, &err);
		else
			fprintf(stderr, "%s: %s: %s is not valid; nothing was planned\n", cli->prog,
				cli->cmd, spec_path);
		return -1;
	}
	if (!lock && local_store_missing(&f->store))
		return load_state(r); /* planning before the first apply: nothing recorded */
	if (store_flags_open(&f->store, cli, lock, &r->store, &r->ws) < 0)
		return -1;
	log_debug("read workspace '%s' in %.0f ms", r->ws->name, lap_ms());
	if (!r->ws->exists) {
		uuid_v4(lineage);
		lo.lineage = lineage;
	}
	if (lock && workspace_lock(r->ws, &lo, &err) < 0) {
		cmd_report(cli, &err);
		return -1;
	}
	return load_state(r);
}

/*
 * The provider's checks before any spend, over what the plan creates (and
 * replaces); its warnings join the plan's. Not for --destroy, which creates
 * nothing, nor with --refresh=false, which promises no API call.
 */
static int run_preflight(struct run *r, struct kiln_error *err)
{
	json_t *kn = json_object_get(r->plan, "kiln"), *creates, *rc;
	size_t i;
	int ret = 0;

	if (!r->e->prov->preflight || r->f->destroy || !r->f->refresh)
		return 0;
	creates = json_object();
	json_array_foreach(json_object_get(r->plan, "resource_changes"), i, rc)
	{
		json_t *actions = json_object_get(json_object_get(rc, "change"), "actions"), *a;
		const char *addr = json_string_value(json_object_get(rc, "address"));
		json_t *d = addr ? json_object_get(r->e->desired, addr) : NULL;
		size_t j;

		json_array_foreach(actions, j, a) if (d && strcmp(json_string_value(a), "create") ==
							       0) json_object_set(creates, addr, d);
	}
	if (json_object_size(creates)) {
		json_t *warnings = json_object_get(kn, "warnings");
		int prc;

		/* Transient failures are retried like every other provider call. */
		ENGINE_CALL(prc, err, r->e->prov->preflight(r->e->ctx, creates, warnings, err));
		ret = prc == PROV_OK ? 0 : -1;
		log_debug("pre-flight checks in %.0f ms", lap_ms());
	}
	json_decref(creates);
	return ret;
}

int run_plan(struct run *r)
{
	struct kiln_error err = {0};
	json_t *live = NULL, *foreign = json_array();
	int rc;
	struct diff_input in = {
	    .engine = r->e,
	    .state = r->state,
	    .state_commit = r->head[0] ? r->head : NULL,
	    .destroy = r->f->destroy,
	    .targets = r->f->targets,
	    .ntargets = r->f->ntargets,
	    .replace = r->f->replace,
	    .nreplace = r->f->nreplace,
	    .spec_file = r->spec_path,
	};

	if (r->f->refresh) {
		if (engine_refresh(r->e, state_resources(r->state), r->plan_only, &live, foreign,
				   &r->rs, &err) != 0) {
			json_decref(foreign);
			cmd_report(r->cli, &err);
			return -1;
		}
		log_info("refreshed %zu live resources with %lu list and %lu read calls in %.0f ms",
			 r->rs.live, r->rs.list_calls, r->rs.read_calls, lap_ms());
	}
	in.live = live;
	in.foreign = foreign;
	rc = diff_plan(&in, &r->plan, &err);
	json_decref(foreign);
	if (rc != 0) {
		json_decref(live);
		cmd_report(r->cli, &err);
		return -1;
	}
	iam_delta_plan(r->e, r->plan, live, state_resources(r->state));
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
	if (run_preflight(r, &err) != 0) {
		cmd_report(r->cli, &err);
		return -1;
	}
	cost_plan(r->e, r->plan);
	if (audit_plan(r->e->spec, r->e->prov, r->plan, &err) != 0) {
		cmd_report(r->cli, &err);
		return -1;
	}
	/* A saved plan made over a replayed journal is current only while that journal is. */
	if (json_object_size(r->overlay))
		json_object_set_new(json_object_get(json_object_get(r->plan, "kiln"), "state"),
				    "journal",
				    json_integer((json_int_t)json_object_size(r->overlay)));
	log_debug("planned in %.0f ms", lap_ms());
	return 0;
}

static void run_release(struct run *r, bool documents)
{
	struct kiln_error err;

	if (documents) {
		json_decref(r->plan);
		json_decref(r->state);
		json_decref(r->overlay);
		engine_free(r->e);
		free(r->owner);
	} else if (r->e && r->e->ctx) {
		/* The provider still closes: it wipes its credentials (OPENSSL_cleanse). */
		r->e->prov->close(r->e->ctx);
		r->e->ctx = NULL;
	}
	if (r->ws && workspace_close(r->ws, &err) < 0)
		cmd_report(r->cli, &err);
	store_free(r->store);
	memset(r, 0, sizeof(*r));
}

void run_close(struct run *r)
{
	run_release(r, true);
}

void run_finish(struct run *r)
{
#if defined(__SANITIZE_ADDRESS__)
	run_release(r, true);
#else
	run_release(r, false);
#endif
}

void run_print_json(const json_t *v, size_t flags)
{
	jsonw_dumpf(v, stdout, flags);
	fputc('\n', stdout);
}

int run_seal_secrets(json_t *state, struct kiln_error *err)
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
