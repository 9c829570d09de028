/*
 * cmd_apply.c - `kiln apply` and `kiln destroy`: lock, plan (or load a saved
 * plan and check it is current), ask, execute, record every result in the
 * journal as it lands, commit once, unlock.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "approve.h"
#include "audit.h"
#include "cmd_run.h"
#include "cmds.h"
#include "cost.h"
#include "crypt.h"
#include "expiry.h"
#include "journal.h"
#include "log.h"
#include "plan.h"
#include "state.h"
#include "jsonw.h"

enum {
	OPT_REQUIRE_APPROVALS = 980,
	OPT_TRUSTED_KEYS,
	OPT_TTL,
};

static const struct cli_option apply_options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    RUN_OPT_VAR,
    RUN_OPT_AUTO_APPROVE,
    RUN_OPT_PARALLELISM,
    {"json", 0, false, OPT_RUN_JSON, NULL, "stream events as JSON lines on standard output"},
    RUN_OPT_REFRESH,
    RUN_OPT_TARGET,
    RUN_OPT_REPLACE,
    {"require-approvals", 0, true, OPT_REQUIRE_APPROVALS, "N",
     "apply a PLANFILE only with N valid approvals from distinct trusted keys "
     "(KILN_REQUIRE_APPROVALS)"},
    {"trusted-keys", 0, true, OPT_TRUSTED_KEYS, "DIR",
     "the public keys (*.pub) whose approvals count (KILN_TRUSTED_KEYS)"},
    {"ttl", 0, true, OPT_TTL, "DURATION",
     "the cluster expires DURATION from now (overrides the spec's ttl); kiln reap destroys it "
     "after"},
};

const struct cmd_info cmd_apply_info = {
    .name = "apply",
    .usage = "[SPEC | PLANFILE] [OPTIONS]",
    .summary = "create, change and delete resources to match the spec",
    .description = "Take the workspace lock, plan (or load PLANFILE from `kiln plan --out`,\n"
		   "refuse it when the workspace or the spec has moved on, plan again from the\n"
		   "same spec and state, and refuse it when its changes say anything else), ask\n"
		   "for approval, then carry out the changes over the dependency graph, up to\n"
		   "--parallelism at once. Every create carries the kiln:cluster, kiln:workspace\n"
		   "and kiln:address tags and an idempotency token. Each result is journaled as\n"
		   "it lands and one commit records the apply. A failure stops what depends on\n"
		   "it, lets the rest finish, commits what succeeded and exits 1; the next plan\n"
		   "shows what remains. SIGINT or SIGTERM stops starting work and commits what\n"
		   "was done; a second signal exits at once.\n\n"
		   "Without --auto-approve, apply asks on a terminal and refuses otherwise.\n"
		   "A saved plan needs no approval: reviewing it was the approval. With\n"
		   "--require-approvals N, a saved plan is applied only when it carries N valid\n"
		   "approvals (`kiln approve`) from distinct keys in --trusted-keys DIR; it is\n"
		   "refused before the lock is taken, naming each approval that does not count.\n"
		   "A plan file's digest only detects damage; approvals are what protect it\n"
		   "against a deliberate edit.\n\n"
		   "A plan with an unwaived error-level audit finding (kiln-rules(7)) is refused\n"
		   "before anything changes, with exit status 3.\n\n"
		   "With a ttl (the spec's `ttl:` or --ttl), the state records when the cluster\n"
		   "expires, and every resource created carries a kiln:expires tag. The first\n"
		   "apply sets it to now + ttl; later applies keep it; --ttl, or a changed spec\n"
		   "ttl, sets it again from now (`kiln ttl extend` pushes it out).",
    .options = apply_options,
    .noptions = sizeof(apply_options) / sizeof(apply_options[0]),
    .see_also = "kiln-apply(1), kiln-plan(1), kiln-approve(1), kiln-destroy(1)",
};

static const struct cli_option destroy_options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    RUN_OPT_VAR,
    RUN_OPT_AUTO_APPROVE,
    RUN_OPT_PARALLELISM,
    {"json", 0, false, OPT_RUN_JSON, NULL, "stream events as JSON lines on standard output"},
    RUN_OPT_REFRESH,
    RUN_OPT_TARGET,
};

const struct cmd_info cmd_destroy_info = {
    .name = "destroy",
    .usage = "[SPEC] [OPTIONS]",
    .summary = "delete every resource of the workspace",
    .description =
	"Plan the deletion of everything the workspace holds (recorded, or live with\n"
	"its tags), ask, and delete in reverse dependency order. Stores with\n"
	"`deletion: retain` (the default for object, lustre and nfs tiers) are released\n"
	"from the state and left in the cloud, and the output says so. With --target,\n"
	"only that resource and what depends on it.",
    .options = destroy_options,
    .noptions = sizeof(destroy_options) / sizeof(destroy_options[0]),
    .see_also = "kiln-destroy(1), kiln-apply(1)",
};

const struct cmd_info cmd_up_info = {
    .name = "up",
    .usage = "[SPEC] [-w WS] [--ttl DURATION] [OPTIONS]",
    .summary = "plan and apply in one step; print the cost per hour and when it expires",
    .description = "`kiln apply` with a closing summary: what the cluster costs an hour and when\n"
		   "its TTL ends (the spec's ttl, or --ttl, which sets it again from now). Every\n"
		   "option of apply works the same way, PLANFILE included. Without --auto-approve\n"
		   "it asks on a terminal and refuses otherwise. `kiln down` takes it away;\n"
		   "`kiln reap` does once the TTL has passed.",
    .options = apply_options,
    .noptions = sizeof(apply_options) / sizeof(apply_options[0]),
    .see_also = "kiln-up(1), kiln-down(1), kiln-status(1), kiln-apply(1)",
};

const struct cmd_info cmd_down_info = {
    .name = "down",
    .usage = "[SPEC] [-w WS] [OPTIONS]",
    .summary = "destroy the workspace's cluster (kiln destroy)",
    .description = "`kiln destroy` under the name that pairs with `kiln up`: plan the deletion of\n"
		   "everything the workspace holds, ask, and delete it. Stores with `deletion:\n"
		   "retain` are released from the state and kept. Every option of destroy works\n"
		   "the same way.",
    .options = destroy_options,
    .noptions = sizeof(destroy_options) / sizeof(destroy_options[0]),
    .see_also = "kiln-down(1), kiln-up(1), kiln-destroy(1)",
};

/* Progress: JSON events, live lines on a terminal, or a line per start and finish. */
struct progress {
	struct cli *cli;
	bool json;
	bool tty;
	pthread_mutex_t mu;
	json_t *inflight; /* address -> {"op", "t"} */
	int drawn;
	bool stop;
	pthread_t ticker;
	bool ticking;
	const char *verb; /* "apply", "destroy" */
	bool quiet;	  /* kiln reap: no per-resource lines */
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void json_event(const char *type, const char *level, json_t *hook, const char *fmt, ...)
    KILN_PRINTF(4, 5);

static void json_event(const char *type, const char *level, json_t *hook, const char *fmt, ...)
{
	char ts[40];
	struct timespec now;
	struct tm tm;
	va_list ap;
	char *msg;
	json_t *ev;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + 19, sizeof(ts) - 19, ".%06ldZ", now.tv_nsec / 1000);
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	ev = json_pack("{s:s, s:s, s:s, s:s, s:s}", "@level", level, "@message", msg, "@module",
		       "kiln", "@timestamp", ts, "type", type);
	if (hook)
		json_object_set_new(ev, "hook", hook);
	jsonw_dumpf(ev, stdout, JSON_COMPACT);
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(ev);
	free(msg);
}

static void erase_live(struct progress *p)
{
	for (; p->drawn > 0; p->drawn--)
		fputs("\033[1A\033[2K", stdout);
}

static void draw_live(struct progress *p)
{
	const char *addr;
	json_t *v;
	double now = mono();
	int shown = 0, total = (int)json_object_size(p->inflight);

	json_object_foreach(p->inflight, addr, v)
	{
		if (shown == 8) {
			printf("  … and %d more in flight\n", total - shown);
			p->drawn++;
			break;
		}
		printf("  %s %s… %.1fs\n", json_string_value(json_object_get(v, "op")), addr,
		       now - json_real_value(json_object_get(v, "t")));
		shown++;
		p->drawn++;
	}
	fflush(stdout);
}

static void *ticker(void *arg)
{
	struct progress *p = arg;
	struct timespec ts = {0, 250 * 1000000L};

	for (;;) {
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&p->mu);
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		erase_live(p);
		draw_live(p);
		pthread_mutex_unlock(&p->mu);
	}
}

static const char *past(const char *op)
{
	if (strcmp(op, "replace: delete old") == 0)
		return "old object deleted, for the replacement";
	if (strcmp(op, "read secret") == 0)
		return "secret read back into the state";
	if (strcmp(op, "create") == 0)
		return "created";
	if (strcmp(op, "update") == 0)
		return "updated";
	if (strcmp(op, "replace") == 0)
		return "replaced";
	if (strcmp(op, "adopt") == 0)
		return "adopted";
	if (strcmp(op, "release") == 0)
		return "released from state (retained)";
	return "deleted";
}

static const char *const event_types[] = {
    [APPLY_START] = "apply_start",     [APPLY_PENDING] = "apply_progress",
    [APPLY_DONE] = "apply_complete",   [APPLY_FAILED] = "apply_errored",
    [APPLY_SKIPPED] = "apply_skipped",
};

static void on_event(void *arg, const struct apply_event *ev)
{
	struct progress *p = arg;
	const char *name = strchr(ev->address, '.');

	if (p->quiet)
		return;
	pthread_mutex_lock(&p->mu);
	if (p->json) {
		json_t *hook =
		    json_pack("{s:{s:s, s:s, s:s}, s:s, s:f}", "resource", "addr", ev->address,
			      "resource_type", "", "resource_name", name ? name + 1 : "", "action",
			      ev->op, "elapsed_seconds", ev->elapsed);
		json_object_set_new(json_object_get(hook, "resource"), "resource_type",
				    json_stringn(ev->address, name ? (size_t)(name - ev->address)
								   : strlen(ev->address)));
		if (ev->id)
			json_object_set_new(hook, "id_value", json_string(ev->id));
		if (ev->error)
			json_object_set_new(hook, "error", json_string(ev->error));
		json_event(event_types[ev->kind], ev->kind == APPLY_FAILED ? "error" : "info", hook,
			   "%s: %s%s%s", ev->address, ev->op, ev->error ? ": " : "",
			   ev->error ? ev->error : "");
		pthread_mutex_unlock(&p->mu);
		return;
	}
	if (p->tty)
		erase_live(p);
	switch (ev->kind) {
	case APPLY_START:
		if (p->tty)
			json_object_set_new(p->inflight, ev->address,
					    json_pack("{s:s, s:f}", "op", ev->op, "t", mono()));
		else
			printf("%s: %s…\n", ev->address, ev->op);
		break;
	case APPLY_PENDING:
		if (!p->tty)
			printf("%s: %s: waiting for %s to be %s\n", ev->address, ev->op,
			       ev->id ? ev->id : "it", ev->waiting_for);
		break;
	case APPLY_DONE:
		json_object_del(p->inflight, ev->address);
		printf("%s: %s%s%s%s (%.1fs)\n", ev->address, past(ev->op), ev->id ? " [id " : "",
		       ev->id ? ev->id : "", ev->id ? "]" : "", ev->elapsed);
		break;
	case APPLY_FAILED:
		json_object_del(p->inflight, ev->address);
		printf("%s: %s FAILED: %s\n", ev->address, ev->op, ev->error);
		break;
	case APPLY_SKIPPED:
		json_object_del(p->inflight, ev->address);
		printf("%s: %s skipped: %s\n", ev->address, ev->op, ev->error);
		break;
	}
	if (p->tty)
		draw_live(p);
	fflush(stdout);
	pthread_mutex_unlock(&p->mu);
}

static void on_checkpoint(void *arg, const char *address, const json_t *resource)
{
	journal_record(arg, address, resource);
}

static bool ask(struct run *r, const char *what)
{
	char line[64];

	fprintf(stderr, "\nDo you want to %s %s/%s? Only 'yes' is accepted: ", what,
		r->e->spec->cluster, r->ws->name);
	fflush(stderr);
	log_stderr_end_line();
	if (!fgets(line, sizeof(line), stdin))
		return false;
	line[strcspn(line, "\r\n")] = '\0';
	return strcmp(line, "yes") == 0;
}

/* A saved plan is applied only to the spec and the state it was made from. */
static int check_saved_plan(struct run *r, const json_t *plan, const char *file)
{
	json_t *kn = json_object_get(plan, "kiln");
	const char *digest =
	    json_string_value(json_object_get(json_object_get(kn, "spec"), "digest"));
	const char *commit =
	    json_string_value(json_object_get(json_object_get(kn, "state"), "commit"));
	struct kiln_error err = {0};

	if (!digest || strcmp(digest, r->e->spec_digest) != 0) {
		kiln_error_set(
		    &err,
		    "%s is stale: the spec %s changed since the plan was made (plan: %.19s, "
		    "now: %.19s)",
		    file, r->spec_path, digest ? digest : "none", r->e->spec_digest);
		kiln_error_hint(&err, "make and review a new plan: kiln plan %s --out %s",
				r->spec_path, file);
	} else if (commit && strcmp(commit, r->head) != 0 && !store_has_object(r->store, commit)) {
		/* Not a commit this repository ever had: nobody applied "since". */
		kiln_error_set(&err,
			       "%s was made with another state repository: its state commit %.12s "
			       "is not in %s",
			       file, commit, store_location(r->store));
		kiln_error_hint(&err,
				"apply it with the state it was made from (--state or KILN_STATE), "
				"or make and review a plan here: kiln plan %s --out %s",
				r->spec_path, file);
	} else if ((commit == NULL) != (r->head[0] == '\0') ||
		   (commit && strcmp(commit, r->head) != 0)) {
		kiln_error_set(
		    &err,
		    "%s is stale: it was made from state commit %.12s, but workspace '%s' "
		    "is now at %.12s",
		    file, commit ? commit : "(none: no workspace yet)", r->ws->name,
		    r->head[0] ? r->head : "(none)");
		kiln_error_hint(&err, "%s; make and review a new plan: kiln plan %s --out %s",
				commit ? "someone applied since"
				       : "the workspace was made or applied since",
				r->spec_path, file);
	} else if ((json_int_t)json_object_size(r->overlay) !=
		   json_integer_value(json_object_get(json_object_get(kn, "state"), "journal"))) {
		/* Same head, but an apply was killed after changing the cloud: the plan predates
		 * it. */
		kiln_error_set(&err,
			       "%s is stale: an interrupted apply changed workspace '%s' after the "
			       "plan was made (%zu changes in its journal)",
			       file, r->ws->name, json_object_size(r->overlay));
		kiln_error_hint(&err, "make and review a new plan: kiln plan %s --out %s",
				r->spec_path, file);
	}
	if (err.msg[0]) {
		cmd_report(r->cli, &err);
		return -1;
	}
	return 0;
}

/*
 * The plan of the saved plan's inputs, made again into r->plan: its spec
 * and state commit (checked current), and the destroy, refresh, targets and
 * replace it was made with, refreshing as it did.
 */
static int rederive_saved_plan(struct run *r, const json_t *plan)
{
	const json_t *kn = json_object_get(plan, "kiln"), *v;
	struct run_flags *f = r->f;
	size_t i;

	f->destroy = json_is_true(json_object_get(kn, "destroy"));
	f->refresh = !json_is_false(json_object_get(kn, "refresh"));
	/* The strings stay owned by plan, which outlives the run. */
	json_array_foreach(json_object_get(kn, "targets"), i, v)
	{
		if (json_is_string(v))
			*ARRAY_PUSH(f->targets, f->ntargets, f->captargets) = json_string_value(v);
	}
	json_array_foreach(json_object_get(kn, "replace"), i, v)
	{
		if (json_is_string(v))
			*ARRAY_PUSH(f->replace, f->nreplace, f->capreplace) = json_string_value(v);
	}
	return run_plan(r);
}

/*
 * What the file says against what its spec and state give now (plan_match):
 * anything else, an edit or a cloud that changed since, is refused. The
 * plan carried out is the one made now, which says the same; its "before"
 * values are the cloud as it is.
 */
static int match_saved_plan(struct run *r, const json_t *plan, const char *file)
{
	struct kiln_error err = {0};

	if (plan_match(plan, r->plan, file, &err) == 0)
		return 0;
	fprintf(stderr, "%s: %s: %s; nothing was changed\n", r->cli->prog, r->cli->cmd, err.msg);
	fprintf(stderr,
		"  hint: kiln carries out a plan file only as kiln made it, and this one was "
		"edited or the cloud changed since it was made; make and review a new plan: kiln "
		"plan %s%s --out %s\n",
		json_is_true(json_object_get(json_object_get(plan, "kiln"), "destroy"))
		    ? "--destroy "
		    : "",
		r->spec_path, file);
	return -1;
}

static char *summary_counts(const struct apply_result *res)
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
 * One commit for the whole apply, when the state changed. approved holds
 * the Kiln-Approval trailers of a plan applied under --require-approvals.
 */
static int commit_state(struct run *r, const char *op, const struct apply_result *res,
			const json_t *saved, const json_t *approved, char **commit_out)
{
	struct kiln_error err = {0};
	char *before = r->ws->exists ? state_canonical(r->ws->state) : NULL;
	char *after, *counts, *summary, *label, *t_plan, *t_spec, *t_op, *t_res;
	const char **extra;
	size_t i, nextra = 4 + json_array_size(approved);
	int rc = 0;

	*commit_out = NULL;
	if (run_seal_secrets(r->state, &err) < 0)
		cmd_report(r->cli, &err);
	after = state_canonical(r->state);
	/* An apply that changed the cloud is logged even if the state reads the same. */
	if ((before && strcmp(before, after) == 0 && res->done == 0) ||
	    (!r->ws->exists && state_resource_count(r->state) == 0)) {
		free(before);
		free(after);
		return 0;
	}
	counts = summary_counts(res);
	label = workspace_label(r->ws, r->state);
	if (json_object_size(r->overlay))
		summary = xasprintf("%s: %s, %zu recorded from an interrupted apply's journal (%s)",
				    op, counts, json_object_size(r->overlay), label);
	else
		summary = xasprintf("%s: %s (%s)", op, counts, label);
	t_op = xasprintf("Kiln-Operation: %s", op);
	/* A saved plan's file digest: the apply traces back to the plan reviewed. */
	t_res = plan_digest(saved ? saved : r->plan);
	t_plan = xasprintf("Kiln-Plan-Digest: %s", t_res);
	free(t_res);
	t_spec = xasprintf("Kiln-Spec-Digest: %s", r->e->spec_digest);
	t_res = xasprintf("Kiln-Result: %s", res->failed	? "partial (operations failed)"
					     : res->interrupted ? "partial (interrupted)"
								: "complete");
	extra = xcalloc(nextra, sizeof(*extra));
	extra[0] = t_op;
	extra[1] = t_plan;
	extra[2] = t_spec;
	for (i = 0; i < json_array_size(approved); i++)
		extra[3 + i] = json_string_value(json_array_get(approved, i));
	extra[nextra - 1] = t_res;
	if (workspace_commit(r->ws, r->state, false, summary, extra, nextra, &err) < 0) {
		cmd_report(r->cli, &err);
		rc = -1;
	} else {
		*commit_out = xmalloc(41);
		git_oid_tostr(*commit_out, 41, &r->ws->head);
	}
	free(extra);
	free(before);
	free(after);
	free(counts);
	free(label);
	free(summary);
	free(t_op);
	free(t_plan);
	free(t_spec);
	free(t_res);
	return rc;
}

/*
 * What --require-approvals and --trusted-keys ask for, or, when they are
 * not given, KILN_REQUIRE_APPROVALS and KILN_TRUSTED_KEYS: so that a CI
 * job's environment can demand approvals of every apply it runs.
 */
struct approval_policy {
	const char *required_arg; /* --require-approvals N, or NULL */
	const char *dir_arg;	  /* --trusted-keys DIR, or NULL */
	long required;		  /* 0: no approval required */
	char *source;		  /* "--require-approvals 2" or "KILN_REQUIRE_APPROVALS=2" */
	const char *dir;
};

#define APPROVALS_MAX 100

static int approval_policy_resolve(struct approval_policy *ap, const struct cli *cli)
{
	const char *env = getenv("KILN_REQUIRE_APPROVALS");
	const char *text = ap->required_arg ? ap->required_arg : env;
	const char *name = ap->required_arg ? "--require-approvals" : "KILN_REQUIRE_APPROVALS";
	char *end;

	ap->dir = ap->dir_arg ? ap->dir_arg : getenv("KILN_TRUSTED_KEYS");
	if (ap->dir && !*ap->dir)
		ap->dir = NULL;
	if (!text || (!ap->required_arg && !*text))
		return 0;
	ap->required = strtol(text, &end, 10);
	if (!*text || *end || ap->required < 0 || ap->required > APPROVALS_MAX) {
		cli_error(cli, "give the number of approvals a plan needs, such as 2",
			  "%s '%s' is not a number from 0 to %d", name, text, APPROVALS_MAX);
		return -1;
	}
	ap->source = ap->required_arg ? xasprintf("--require-approvals %ld", ap->required)
				      : xasprintf("KILN_REQUIRE_APPROVALS=%ld", ap->required);
	return 0;
}

/* A refusal, on standard error: why, one line per approval, and the fix. */
static void approvals_refuse(const struct cli *cli, const char *file,
			     const struct approval_policy *ap, const struct approval_report *rep)
{
	bool bad = false;
	size_t i;

	if (rep->n == 0)
		fprintf(stderr,
			"%s: %s: %s is not approved: it has no approvals, %ld from trusted keys "
			"required (%s); nothing was changed\n",
			cli->prog, cli->cmd, file, ap->required, ap->source);
	else
		fprintf(stderr,
			"%s: %s: %s is not approved: %zu valid approval%s from trusted keys, %ld "
			"required (%s); nothing was changed\n",
			cli->prog, cli->cmd, file, rep->valid, rep->valid == 1 ? "" : "s",
			ap->required, ap->source);
	for (i = 0; i < rep->n; i++) {
		const struct approval_check *c = &rep->v[i];
		char *why = approval_check_describe(c, ap->dir);

		fprintf(stderr, "  approval %zu: %s at %s, key %s: %s\n", i + 1,
			c->signer ? c->signer : "?", c->time ? c->time : "?",
			c->key_id ? c->key_id : "?", why);
		bad = bad || c->status == APPROVAL_BAD_SIGNATURE;
		free(why);
	}
	fprintf(stderr,
		"  hint: %s%ld more approval%s needed from keys in %s: each approver runs kiln "
		"approve %s --key KEY\n",
		bad ? "an approval that does not verify was made for another plan or edited since; "
		    : "",
		ap->required - (long)rep->valid,
		ap->required - (long)rep->valid == 1 ? " is" : "s are", ap->dir, file);
}

/*
 * The approvals check of a saved plan, before anything is locked or
 * called: 0 when plan carries the approvals the policy asks for (with
 * *trailers the commit trailers naming them), -1 after reporting why not.
 */
static int approvals_check(const struct cli *cli, const char *file, const json_t *plan,
			   const json_t *approvals, const struct approval_policy *ap, bool quiet,
			   json_t **trailers)
{
	struct approve_keyring ring = {0};
	struct approval_report rep = {0};
	struct kiln_error err = {0};
	size_t i;
	int ret = -1;

	*trailers = NULL;
	if (approve_keyring_load(&ring, ap->dir, &err) < 0 ||
	    approve_verify(&rep, plan, approvals, &ring, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if ((long)rep.valid < ap->required) {
		approvals_refuse(cli, file, ap, &rep);
		goto out;
	}
	*trailers = json_array();
	if (!quiet)
		printf("Approvals: %zu valid from trusted keys in %s (%s):", rep.valid, ap->dir,
		       ap->source);
	for (i = 0; i < rep.n; i++) {
		const struct approval_check *c = &rep.v[i];

		if (c->status != APPROVAL_VALID)
			continue;
		json_array_append_new(*trailers, json_sprintf("Kiln-Approval: %s %s %s", c->key_id,
							      c->time, c->signer));
		if (!quiet)
			printf("%s %s (%s)", json_array_size(*trailers) == 1 ? "" : ",", c->signer,
			       c->trusted_by);
	}
	if (!quiet)
		printf(".\n");
	ret = 0;
out:
	approval_report_release(&rep);
	approve_keyring_release(&ring);
	return ret;
}

/* Static, not on the stack: the signal thread may write it a moment after we return. */
/*
 * An apply never carries out a plan with an unwaived error-level finding
 * (an open SSH port, a plan over budget): it names each and exits 3, as
 * `kiln audit` does. A plan saved by a kiln without the audit is audited
 * now, against the spec it was checked to be made from.
 */
static int findings_refuse(struct run *r, const char *file)
{
	const json_t *kn = json_object_get(r->plan, "kiln"), *f;
	struct kiln_error err = {0};
	size_t n, i;

	if (!json_object_get(kn, "findings") &&
	    audit_plan(r->e->spec, r->e->prov, r->plan, &err) != 0) {
		cmd_report(r->cli, &err);
		return KILN_EXIT_ERROR;
	}
	n = audit_errors(r->plan);
	if (n == 0)
		return 0;
	fprintf(stderr, "%s: %s: %s has %zu error-level finding%s; nothing was changed\n",
		r->cli->prog, r->cli->cmd, file ? file : "the plan", n, n == 1 ? "" : "s");
	json_array_foreach(json_object_get(kn, "findings"), i, f)
	{
		const json_t *addr = json_object_get(f, "address");

		if (json_object_get(f, "waived") ||
		    strcmp(json_string_value(json_object_get(f, "severity")) ?: "", "error") != 0)
			continue;
		fprintf(stderr, "  %s %s: %s\n", json_string_value(json_object_get(f, "rule")),
			json_is_string(addr) ? json_string_value(addr)
					     : json_string_value(json_object_get(f, "spec")),
			json_string_value(json_object_get(f, "message")));
	}
	fprintf(stderr, "  hint: fix the spec and plan again, or waive a finding with a reason and "
			"an end date (waive: in kiln-spec(5)); kiln audit shows each fix\n");
	return KILN_EXIT_FINDINGS;
}

static atomic_int interrupted;

/*
 * The expiry this apply records (expiry.h), set in r->state and in the
 * scope that tags every create. 0, or -1 after reporting.
 */
static int expiry_prepare(struct run *r, int64_t ttl_flag)
{
	struct kiln_error err = {0};
	git_signature *sig = NULL;
	char *author;
	int64_t now;
	json_t *x;

	if (util_now(&now, &err) < 0) {
		cmd_report(r->cli, &err);
		return -1;
	}
	if (store_signature(r->store, &sig, &err) < 0) {
		cmd_report(r->cli, &err);
		return -1;
	}
	author = xasprintf("%s <%s>", sig->name, sig->email);
	git_signature_free(sig);
	x = expiry_at_apply(json_object_get(r->state, "expiry"),
			    ttl_flag ? ttl_flag : r->e->spec->ttl, ttl_flag != 0, now, author,
			    r->spec_path);
	free(author);
	if (x) {
		/* A copy of the spec as digested, so reap can destroy once the file has gone. */
		if (memchr(r->e->spec_text, '\0', r->e->spec_len) == NULL)
			json_object_set_new(x, "spec_text",
					    json_stringn(r->e->spec_text, r->e->spec_len));
		json_object_set_new(r->state, "expiry", x);
	} else
		json_object_del(r->state, "expiry");
	r->e->scope.expires = json_string_value(json_object_get(x, "expires"));
	return 0;
}

/* "Expires: 2026-11-30T14:00:00Z (in 8h0m), set by --ttl." or nothing without a TTL. */
static void expiry_print(const json_t *state)
{
	const json_t *x = json_object_get(state, "expiry");
	struct kiln_error err = {0};
	int64_t t, now;
	char *left;

	if (!expiry_time(x, &t) || util_now(&now, &err) < 0)
		return;
	left = expiry_left_format(t - now);
	printf("Expires: %s (%s%s%s); kiln reap destroys it after.\n",
	       json_string_value(json_object_get(x, "expires")), t > now ? "in " : "", left,
	       t > now ? "" : " ago");
	free(left);
}

/* kiln up: what the cluster costs an hour, and when it ends. */
static void up_summary(const struct run *r)
{
	const json_t *cost = json_object_get(json_object_get(r->plan, "kiln"), "cost");
	const json_t *h = json_object_get(cost, "hourly_after");

	if (json_is_number(h)) {
		char *m = cost_money(json_number_value(h));

		printf("Cost: %s an hour.\n", m);
		free(m);
	}
	if (json_object_get(r->state, "expiry"))
		expiry_print(r->state);
	else
		printf("Expires: never (no ttl): `kiln down` when done, or set --ttl.\n");
}

int apply_command(int argc, char **argv, struct cli *cli, bool destroy, struct apply_hooks *hooks)
{
	const struct cmd_info *info = hooks && hooks->info ? hooks->info
				      : destroy		   ? &cmd_destroy_info
							   : &cmd_apply_info;
	int64_t ttl_flag = 0;
	bool quiet = hooks && hooks->quiet;
	struct cli_parser p;
	struct run_flags f;
	struct run r = {0};
	struct kiln_error err = {0};
	struct progress pg = {.cli = cli};
	struct apply_result res = {0};
	struct journal *j = NULL;
	struct approval_policy ap = {0};
	json_t *saved = NULL, *approvals = NULL, *approved = NULL, *hook, *expiry_before = NULL;
	const char *operand, *spec;
	char *jpath = NULL, *commit = NULL, *line;
	int ret = KILN_EXIT_ERROR, commit_rc = 0, have_key, opt;
	struct crypt_key key;

	run_flags_init(&f);
	f.destroy = destroy;
	atomic_store(&interrupted, 0);
	pthread_mutex_init(&pg.mu, NULL);
	pg.inflight = json_object();
	cli_parser_init(&p, cli, info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (opt == OPT_REQUIRE_APPROVALS)
			ap.required_arg = p.optarg;
		else if (opt == OPT_TRUSTED_KEYS)
			ap.dir_arg = p.optarg;
		else if (opt == OPT_TTL) {
			if (duration_parse(p.optarg, &ttl_flag) < 0) {
				cli_error(cli, "write it like 8h, 90m or 2d",
					  "--ttl '%s' is not a duration", p.optarg);
				goto out;
			}
			if (ttl_flag <= 0 || ttl_flag > 365LL * 86400) {
				cli_error(cli,
					  "drop --ttl (and ttl: in the spec) for a cluster that "
					  "lives until `kiln down`",
					  "--ttl must be longer than 0s and at most 365d, not '%s'",
					  p.optarg);
				goto out;
			}
		} else if (run_flags_handle(&f, cli, opt, p.optarg) < 0)
			goto out;
	}
	operand = run_spec_operand(cli, argc, argv, p.optind);
	if (!operand)
		goto out;
	spec = operand;
	if (destroy && plan_file_is(operand)) {
		cli_error(cli, "apply a saved plan, destroy plans included, with `kiln apply FILE`",
			  "%s is a plan file; destroy takes a spec", operand);
		goto out;
	}
	/*
	 * reap carries out a destroy decided when the TTL was recorded: by an
	 * apply, which the approval policy already governed (a TTL only grows
	 * without one: ttl extend). Asking for signatures now would leave every
	 * expired cluster running in a repository that requires approvals.
	 */
	if (!(hooks && hooks->ttl_expired) && approval_policy_resolve(&ap, cli) < 0)
		goto out;
	if (ap.required > 0 && (destroy || !plan_file_is(operand))) {
		/* A spec carries no approvals: applying it would step around the review. */
		cli_error(cli, NULL,
			  "approvals are required (%s), and %s is a spec, which carries none; "
			  "nothing was changed",
			  ap.source, operand);
		fprintf(
		    stderr,
		    "  hint: save the plan for review: kiln plan %s%s --out %s, have it "
		    "approved (kiln approve %s --key KEY), then kiln apply %s\n",
		    destroy ? "--destroy " : "", operand, destroy ? "destroy.kiln" : "plan.kiln",
		    destroy ? "destroy.kiln" : "plan.kiln", destroy ? "destroy.kiln" : "plan.kiln");
		goto out;
	}
	if (ap.required > 0 && !ap.dir) {
		cli_error(cli,
			  "give --trusted-keys DIR, a directory of the approvers' *.pub keys "
			  "(or set KILN_TRUSTED_KEYS)",
			  "approvals are required (%s), but no trusted keys are given", ap.source);
		goto out;
	}
	if (ap.dir_arg && ap.required == 0) {
		cli_error(cli,
			  "give the number of approvals required, such as --require-approvals 1",
			  "--trusted-keys is used only with --require-approvals N");
		goto out;
	}
	have_key = crypt_key_load(&key, &err);
	crypt_key_wipe(&key);
	if (have_key < 0) {
		/* Before anything changes: a secret that cannot be sealed would be lost. */
		cmd_report(cli, &err);
		goto out;
	}
	if (plan_file_is(operand)) {
		if (plan_file_read_approvals(&saved, &approvals, operand, &err) < 0) {
			cmd_report(cli, &err);
			goto out;
		}
		json_t *kn = json_object_get(saved, "kiln");
		const char *ws = json_string_value(json_object_get(kn, "workspace"));

		if (f.ntargets || f.nreplace || !f.refresh) {
			cli_error(
			    cli, "they were fixed when the plan was made",
			    "--target, --replace and --refresh cannot be used with a plan file");
			goto out;
		}
		if (store_flags_plan_workspace(&f.store, cli, operand, ws) < 0)
			goto out;
		/* Before the lock and before any call: a refusal spends nothing. */
		if (ap.required > 0 &&
		    approvals_check(cli, operand, saved, approvals, &ap, f.json, &approved) < 0)
			goto out;
		f.store.workspace = ws;
		f.destroy = destroy = json_is_true(json_object_get(kn, "destroy"));
		spec = json_string_value(json_object_get(json_object_get(kn, "spec"), "file"));
	} else if (!f.auto_approve && !isatty(STDIN_FILENO)) {
		/* The reviewed way to destroy is a destroy plan: a plain one would apply. */
		cli_error(cli,
			  destroy ? "review with `kiln plan --destroy --out destroy.kiln`, then "
				    "`kiln apply destroy.kiln`; or pass --auto-approve"
				  : "review with `kiln plan --out plan.kiln`, then `kiln apply "
				    "plan.kiln`; or pass --auto-approve",
			  "standard input is not a terminal, so kiln cannot ask for approval; "
			  "nothing was changed");
		goto out;
	}
	if (run_open(&r, cli, &f, spec, true, destroy ? "destroy" : "apply") < 0) {
		if (hooks)
			hooks->open_failed = true;
		goto out;
	}
	if (hooks && hooks->locked) {
		int h = hooks->locked(&r, hooks->arg);

		if (h != 0) {
			ret = h > 0 ? KILN_EXIT_OK : KILN_EXIT_ERROR;
			goto out;
		}
	}
	expiry_before = json_deep_copy(json_object_get(r.state, "expiry"));
	if (!destroy && expiry_prepare(&r, ttl_flag) < 0)
		goto out;
	if (saved) {
		if (check_saved_plan(&r, saved, operand) < 0 ||
		    rederive_saved_plan(&r, saved) < 0 || match_saved_plan(&r, saved, operand) < 0)
			goto out;
	} else if (run_plan(&r) < 0) {
		goto out;
	}
	pg.json = f.json;
	pg.quiet = quiet;
	pg.tty = !f.json && !quiet && isatty(STDOUT_FILENO);
	if (f.json) {
		json_event("version", "info", json_pack("{s:s}", "kiln", KILN_VERSION), "kiln %s",
			   KILN_VERSION);
		line = plan_summary_line(r.plan);
		hook = json_deep_copy(json_object_get(json_object_get(r.plan, "kiln"), "summary"));
		json_object_set_new(hook, "operation", json_string("plan"));
		json_event("change_summary", "info", hook, "%s", line);
		free(line);
	} else if (!saved && !quiet) {
		plan_render_text(stdout, r.plan, cli->color_out);
	}
	if (apply_count_ops(r.plan) == 0 &&
	    json_array_size(json_object_get(r.plan, "resource_drift")) == 0 &&
	    json_object_size(r.overlay) == 0) {
		bool moved = !json_equal(expiry_before, json_object_get(r.state, "expiry")) &&
			     (expiry_before || json_object_get(r.state, "expiry"));

		ret = KILN_EXIT_OK;
		/* Nothing in the cloud to change, but a new --ttl is still recorded. */
		if (moved && state_resource_count(r.state) > 0 &&
		    commit_state(&r, "apply", &res, saved, NULL, &commit) < 0)
			ret = KILN_EXIT_ERROR;
		if (!f.json && !quiet) {
			printf("\nNothing to %s.\n", destroy ? "destroy" : "apply");
			if (commit)
				printf("State: commit %.12s in workspace '%s' records the new "
				       "expiry.\n",
				       commit, r.ws->name);
			if (hooks && hooks->up_summary)
				up_summary(&r);
			else if (!destroy && moved)
				expiry_print(r.state);
		}
		goto out;
	}
	/* Taking a cluster down is never held back by what is wrong with it. */
	if (!destroy && (ret = findings_refuse(&r, saved ? operand : NULL)) != 0)
		goto out;
	ret = KILN_EXIT_ERROR;
	if (!saved && !f.auto_approve &&
	    !ask(&r, destroy ? "destroy everything in" : "apply this plan to")) {
		fprintf(stderr, "%s: %s: not approved; nothing was changed\n", cli->prog, cli->cmd);
		goto out;
	}
	jpath = journal_path(store_location(r.store), r.ws->name);
	if (journal_open(&j, jpath, r.head[0] ? r.head : NULL, state_lineage(r.state), r.overlay,
			 &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	if (!f.json && !quiet)
		printf("\n");
	if (pg.tty && pthread_create(&pg.ticker, NULL, ticker, &pg) == 0)
		pg.ticking = true;
	lock_set_interrupt_flag(&interrupted);
	struct apply_options ao = {
	    .engine = r.e,
	    .plan = r.plan,
	    .state = r.state,
	    .parallelism = f.parallelism,
	    .interrupted = &interrupted,
	    .keep_secrets = have_key == 1,
	    .event = on_event,
	    .event_arg = &pg,
	    .checkpoint = on_checkpoint,
	    .checkpoint_arg = j,
	};
	apply_run(&ao, &res);
	if (pg.ticking) {
		pthread_mutex_lock(&pg.mu);
		pg.stop = true;
		erase_live(&pg);
		pthread_mutex_unlock(&pg.mu);
		pthread_join(pg.ticker, NULL);
	}
	/* From here a signal exits at once; the journal keeps what the commit would have. */
	lock_set_interrupt_flag(NULL);
	/* Nothing left to expire: a later apply starts a new TTL. */
	if (state_resource_count(r.state) == 0) {
		json_object_del(r.state, "expiry");
		json_object_del(r.state, "created");
	} else if (!json_object_get(r.state, "created")) {
		/* When the cluster came up: kiln status counts its cost from here. */
		int64_t now;
		char buf[21];

		if (util_now(&now, &err) == 0)
			json_object_set_new(r.state, "created",
					    json_string(time_format_rfc3339(now, buf)));
	}
	commit_rc = commit_state(&r, destroy ? "destroy" : "apply", &res, saved, approved, &commit);
	journal_close(j, commit_rc == 0);
	j = NULL;
	{
		char *counts = summary_counts(&res);
		const char *what = destroy ? "destroy" : "apply";
		bool whole = !res.failed && !res.interrupted && !res.skipped;
		size_t i;
		json_t *e;

		if (hooks) {
			hooks->deleted = res.deleted;
			hooks->released = res.released;
			hooks->failed = res.failed + res.skipped + (res.interrupted ? 1 : 0);
		}
		if (quiet) {
			json_array_foreach(res.errors, i, e)
			    fprintf(stderr, "%s: %s: %s: %s failed: %s\n", cli->prog, cli->cmd,
				    json_string_value(json_object_get(e, "address")),
				    json_string_value(json_object_get(e, "op")),
				    json_string_value(json_object_get(e, "error")));
		} else if (f.json) {
			json_array_foreach(res.warnings, i, e)
			    json_event("diagnostic", "warn", NULL, "%s", json_string_value(e));
			json_event(
			    "change_summary", whole ? "info" : "error",
			    json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
				      "s:b, s:s*}",
				      "operation", what, "add", (int)res.created, "change",
				      (int)res.updated, "replace", (int)res.replaced, "remove",
				      (int)res.deleted, "adopt", (int)res.adopted, "release",
				      (int)res.released, "done", (int)res.done, "failed",
				      (int)res.failed, "skipped", (int)res.skipped, "calls",
				      (int)res.calls, "interrupted", res.interrupted, "commit",
				      commit),
			    "%s %s: %s", destroy ? "Destroy" : "Apply",
			    whole ? "complete" : "incomplete", counts);
		} else {
			printf("\n%s %s: %s.\n", destroy ? "Destroy" : "Apply",
			       whole ? "complete" : "incomplete", counts);
			if (commit)
				printf("State: commit %.12s in workspace '%s'.\n", commit,
				       r.ws->name);
			if (hooks && hooks->up_summary)
				up_summary(&r);
			else if (!destroy)
				expiry_print(r.state);
			/* The summary first, then why: in a CI log the two arrive in order. */
			fflush(stdout);
			json_array_foreach(res.warnings, i, e)
			    fprintf(stderr, "%s: %s: warning: %s\n", cli->prog, cli->cmd,
				    json_string_value(e));
			json_array_foreach(res.errors, i, e)
			    fprintf(stderr, "%s: %s: %s: %s failed: %s\n", cli->prog, cli->cmd,
				    json_string_value(json_object_get(e, "address")),
				    json_string_value(json_object_get(e, "op")),
				    json_string_value(json_object_get(e, "error")));
			/* A user's own interrupt has no cause to fix. */
			if (!whole && res.interrupted && !res.failed) {
				int sig = atomic_load(&interrupted);

				fprintf(stderr,
					"  hint: stopped by SIG%s, as asked: what was done is "
					"recorded; run `kiln plan` to see what remains\n",
					sig > 0 && sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
			} else if (!whole) {
				fprintf(stderr,
					"  hint: what succeeded is recorded; fix the cause and run "
					"`kiln plan` to see what remains\n");
			}
		}
		free(counts);
	}
	ret = (res.failed || res.interrupted || res.skipped || commit_rc < 0) ? KILN_EXIT_ERROR
									      : KILN_EXIT_OK;
out:
	lock_set_interrupt_flag(NULL);
	journal_close(j, 0);
	apply_result_release(&res);
	free(jpath);
	free(commit);
	json_decref(saved);
	json_decref(approvals);
	json_decref(approved);
	json_decref(expiry_before);
	free(ap.source);
	json_decref(pg.inflight);
	pthread_mutex_destroy(&pg.mu);
	run_close(&r);
	run_flags_release(&f);
	cli_parser_release(&p);
	return ret;
}

int cmd_apply(int argc, char **argv, struct cli *cli)
{
	return apply_command(argc, argv, cli, false, NULL);
}

int cmd_destroy(int argc, char **argv, struct cli *cli)
{
	return apply_command(argc, argv, cli, true, NULL);
}

int cmd_up(int argc, char **argv, struct cli *cli)
{
	struct apply_hooks h = {.info = &cmd_up_info, .up_summary = true};

	return apply_command(argc, argv, cli, false, &h);
}

int cmd_down(int argc, char **argv, struct cli *cli)
{
	struct apply_hooks h = {.info = &cmd_down_info};

	return apply_command(argc, argv, cli, true, &h);
}
