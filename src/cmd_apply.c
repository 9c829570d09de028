/*
 * cmd_apply.c - `kiln apply`, `kiln destroy`, `kiln up` and `kiln down`:
 * the flags, asking, and what is shown. The rules are their own modules'
 * (the approval policy: approval_policy.h; buying up front: purchase.h;
 * --wait: apply_wait.h); the run itself (lock, plan or a saved plan checked
 * current, execute with every result journaled, commit once, unlock) is
 * the operations layer's (operation.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply_op.h"
#include "apply_wait.h"
#include "approval_policy.h"
#include "cmd_run.h"
#include "cmds.h"
#include "cost.h"
#include "expiry.h"
#include "plan.h"
#include "progress.h"
#include "signals.h"
#include "state.h"

enum {
	OPT_REQUIRE_APPROVALS = 980,
	OPT_TRUSTED_KEYS,
	OPT_TTL,
	OPT_HEALTH_TIMEOUT,
	OPT_ALLOW_PURCHASE,
	OPT_WAIT,
	OPT_WAIT_TIMEOUT,
	OPT_WAIVE_LIMIT,
	OPT_WAIVE_REASON,
};

static const struct cli_option apply_options[] = {
    CMD_OPT_WORKSPACE,
    CMD_OPT_STATE,
    CMD_OPT_LOCK_TIMEOUT,
    RUN_OPT_SPEC,
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
    {"health-timeout", 0, true, OPT_HEALTH_TIMEOUT, "DURATION",
     "wait this long for the nodes of the groups launched to report their health; 0 does not "
     "wait (default 20m; KILN_HEALTH_TIMEOUT)"},
    {"allow-purchase", 0, false, OPT_ALLOW_PURCHASE, NULL,
     "let this apply buy what its plan buys up front (a Capacity Block), which otherwise "
     "only a saved plan applied with --require-approvals may; the commit names each "
     "purchase (Kiln-Purchase: ID FEE)"},
    {"waive-limit", 0, true, OPT_WAIVE_LIMIT, "LIMIT",
     "apply a saved plan whose approvals count past one team limit of the policy "
     "(kiln-policy(5)), named as the refusal names it (team=research:max_gpus); needs "
     "--waive-reason; the commit records both (Kiln-Quota-Waived)"},
    {"waive-reason", 0, true, OPT_WAIVE_REASON, "TEXT", "why --waive-limit's limit is waived"},
    {"wait", 0, false, OPT_WAIT, NULL,
     "when capacity bought for a window (a Capacity Block) has not started, keep going: "
     "apply again every KILN_WAIT_POLL_MS (default 60000) until the nodes launch into it, "
     "up to --wait-timeout; after a plan file, only while the spec is the one it was made "
     "from"},
    {"wait-timeout", 0, true, OPT_WAIT_TIMEOUT, "DURATION",
     "wait (implies --wait) at most this long for the window to start; past it, or when the "
     "window starts later than that, exit 5 with what was done committed, no round run "
     "after it (default 6h; KILN_WAIT_TIMEOUT; at most 182d; 0 or 0s: until the window "
     "ends)"},
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
		   "After the commit, apply waits up to --health-timeout (default 20m) for the\n"
		   "nodes of the groups it launched to report their health (the kiln:health tag\n"
		   "a node puts on itself), prints one line per group, and exits 4 when a node\n"
		   "is unhealthy or did not report in time; `kiln repair` replaces bad nodes.\n\n"
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
    RUN_OPT_SPEC,
    RUN_OPT_VAR,
    RUN_OPT_AUTO_APPROVE,
    RUN_OPT_PARALLELISM,
    {"json", 0, false, OPT_RUN_JSON, NULL, "stream events as JSON lines on standard output"},
    RUN_OPT_REFRESH,
    RUN_OPT_TARGET,
    {"include-retained", 0, true, OPT_RUN_INCLUDE_RETAINED, "ADDRESS",
     "delete this retained store too, data and all (repeatable); no other store is touched"},
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

/* A rule's refusal (approval_policy.h, purchase.h, apply_wait.h) in the form it names. */
static void refuse(const struct cli *cli, const struct kiln_error *err, bool one_line)
{
	if (one_line)
		cli_error(cli, err->hint[0] ? err->hint : NULL, "%s", err->msg);
	else
		cmd_report(cli, err);
}

/*
 * A plan file's approvals as the policy found them: whose count (unless
 * --json), or why too few do, one line per approval.
 */
static void approvals_show(const struct cli *cli, const struct approval_policy *ap,
			   const char *file, const struct approval_policy_result *res, bool enough,
			   bool quiet)
{
	const struct approval_report *rep = &res->rep;
	char *msg, *hint;
	size_t i, n = 0;

	if (!enough) {
		approval_policy_refusal(ap, file, rep, &msg, &hint);
		fprintf(stderr, "%s: %s: %s\n", cli->prog, cli->cmd, msg);
		for (i = 0; i < rep->n; i++) {
			const struct approval_check *c = &rep->v[i];
			char *why = approve_check_describe(c, ap->dir);

			fprintf(stderr, "  approval %zu: %s at %s, key %s: %s\n", i + 1,
				c->signer ? c->signer : "?", c->time ? c->time : "?",
				c->key_id ? c->key_id : "?", why);
			free(why);
		}
		fprintf(stderr, "  hint: %s\n", hint);
		free(msg);
		free(hint);
		return;
	}
	if (quiet)
		return;
	printf("Approvals: %zu valid from trusted keys in %s (%s):", rep->valid, ap->dir,
	       ap->source);
	for (i = 0; i < rep->n; i++)
		if (rep->v[i].status == APPROVAL_VALID)
			printf("%s %s (%s)", n++ == 0 ? "" : ",", rep->v[i].signer,
			       rep->v[i].trusted_by);
	printf(".\n");
}

/* The plan's unwaived error-level findings, each with where it is, and the fix. */
static void findings_show(const struct cli *cli, const struct op_run *r, const char *file, long n)
{
	const json_t *f;
	size_t i;

	fprintf(stderr, "%s: %s: %s has %ld error-level finding%s; nothing was changed\n",
		cli->prog, cli->cmd, file ? file : "the plan", n, n == 1 ? "" : "s");
	json_array_foreach(plan_kiln(r->plan, "findings"), i, f)
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
}

/* "Expires: 2026-11-30T14:00:00Z (in 8h0m), set by --ttl." or nothing without a TTL. */
static void expiry_print(const json_t *state)
{
	struct kiln_error err = {0};
	int64_t t, now;
	char *left;

	if (!expiry_time(state_expiry(state), &t) || timefmt_now(&now, &err) < 0)
		return;
	left = expiry_left_format(t - now);
	printf("Expires: %s (%s%s%s); kiln reap destroys it after.\n", state_expires(state),
	       t > now ? "in " : "", left, t > now ? "" : " ago");
	free(left);
}

/* kiln up: what the cluster costs an hour, and when it ends. */
static void up_summary(const struct op_run *r)
{
	const json_t *cost = plan_kiln(r->plan, "cost");
	const json_t *h = json_object_get(cost, "hourly_after");

	if (json_is_number(h)) {
		char *m = cost_money(json_number_value(h));

		printf("Cost: %s an hour.\n", m);
		free(m);
	}
	char *window = expiry_window_sentence(r->state);

	if (state_expiry(r->state))
		expiry_print(r->state);
	else if (window)
		printf("Expires: no ttl, but %s.\n", window);
	else
		printf("Expires: never (no ttl): `kiln down` when done, or set --ttl.\n");
	free(window);
}


/* What apply, destroy, up and down were asked, and what they carry through a run. */
struct apply_cmd {
	struct cli *cli;
	const struct cmd_info *info;
	bool destroy;
	bool up; /* end with the cost per hour and the expiry */
	struct run_flags f;
	struct approval_policy ap;
	int64_t ttl;		/* --ttl, 0 when not given */
	const char *health_arg; /* --health-timeout, or NULL */
	int64_t health_timeout; /* seconds; 0: do not wait */
	const char *operand;	/* SPEC or PLANFILE */
	bool allow_purchase;	/* --allow-purchase */
	const char *waive_limit, *waive_reason; /* --waive-limit, --waive-reason */
	struct apply_wait wait; /* --wait, --wait-timeout and what later rounds keep to */
	struct apply_op_options opts; /* the operation asked, as its rounds change it */
	struct progress pg;	      /* the executor's display */
	struct progress_health hl;    /* the health wait's */
};

static int parse_ttl(const struct cli *cli, const char *arg, int64_t *ttl)
{
	if (timefmt_duration_parse(arg, ttl) < 0) {
		cli_error(cli, "write it like 8h, 90m or 2d", "--ttl '%s' is not a duration", arg);
		return -1;
	}
	if (*ttl <= 0 || *ttl > 365LL * 86400) {
		cli_error(cli,
			  "drop --ttl (and ttl: in the spec) for a cluster that lives until `kiln "
			  "down`",
			  "--ttl must be longer than 0s and at most 365d, not '%s'", arg);
		return -1;
	}
	return 0;
}

/* The options and the operand; -1 when the command should return *ret now. */
static int apply_parse(struct apply_cmd *a, struct cli_parser *p, int argc, char **argv, int *ret)
{
	struct kiln_error err = {0};
	int opt;

	cli_parser_init(p, a->cli, a->info, argc, argv);
	while ((opt = cli_next(p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			*ret = p->exit_code;
			return -1;
		}
		if (opt == OPT_REQUIRE_APPROVALS)
			a->ap.required_arg = p->optarg;
		else if (opt == OPT_TRUSTED_KEYS)
			a->ap.dir_arg = p->optarg;
		else if (opt == OPT_HEALTH_TIMEOUT)
			a->health_arg = p->optarg;
		else if (opt == OPT_ALLOW_PURCHASE)
			a->allow_purchase = true;
		else if (opt == OPT_WAIVE_LIMIT)
			a->waive_limit = p->optarg;
		else if (opt == OPT_WAIVE_REASON)
			a->waive_reason = p->optarg;
		else if (opt == OPT_WAIT)
			a->wait.on = true;
		else if (opt == OPT_WAIT_TIMEOUT)
			a->wait.on = true, a->wait.arg = p->optarg;
		else if (opt == OPT_TTL) {
			if (parse_ttl(a->cli, p->optarg, &a->ttl) < 0)
				return -1;
		} else if (cmd_run_flags_handle(&a->f, a->cli, opt, p->optarg) < 0)
			return -1;
	}
	if (!a->waive_limit != !a->waive_reason ||
	    (a->waive_reason && (!a->waive_reason[0] || strchr(a->waive_reason, '\n')))) {
		cli_error(a->cli,
			  "name the limit as the refusal names it and say why on one line: "
			  "--waive-limit team=research:max_gpus --waive-reason 'the launch week'",
			  "%s",
			  !a->waive_reason  ? "--waive-limit needs --waive-reason TEXT"
			  : !a->waive_limit ? "--waive-reason needs --waive-limit LIMIT"
					    : "--waive-reason must be one line of text");
		return -1;
	}
	a->operand = cmd_run_spec_operand(a->cli, a->f.spec, argc, argv, p->optind);
	if (!a->operand ||
	    (!a->destroy && cmd_run_health_timeout(a->cli, a->health_arg, &a->health_timeout) < 0))
		return -1;
	if (a->wait.on && apply_wait_timeout_parse(&a->wait, getenv("KILN_WAIT_TIMEOUT"), &err) < 0) {
		refuse(a->cli, &err, true);
		return -1;
	}
	if (a->destroy && plan_file_is(a->operand)) {
		cli_error(a->cli,
			  "apply a saved plan, destroy plans included, with `kiln apply FILE`",
			  "%s is a plan file; destroy takes a spec", a->operand);
		return -1;
	}
	return 0;
}

static void render_plan(const struct apply_cmd *a, const struct op_run *r)
{
	char *line;
	json_t *hook;

	if (a->f.json) {
		progress_json_event("version", "info",
				    json_pack("{s:s, s:s}", "kiln", KILN_VERSION, "ui", KILN_UI_VERSION),
				    "kiln %s", KILN_VERSION);
		line = plan_summary_line(r->plan);
		hook = json_deep_copy(plan_kiln(r->plan, "summary"));
		json_object_set_new(hook, "operation", json_string("plan"));
		progress_json_event("change_summary", "info", hook, "%s", line);
		free(line);
	} else if (!a->opts.saved) {
		plan_render_text(stdout, r->plan, a->cli->color_out);
	}
}

/* Nothing in the cloud to change; commit: the one recording a new expiry, or NULL. */
/*
 * up --json's last word, as its text ends: what the cluster costs an hour
 * and when it expires (null: no ttl), for a script to act on.
 */
static void up_summary_json(const struct op_run *r)
{
	const json_t *h = json_object_get(plan_kiln(r->plan, "cost"), "hourly_after");
	const char *expires = state_expires(r->state);

	progress_json_event("up_summary", "info",
			    json_pack("{s:s, s:o, s:s?}", "workspace", r->ws->name, "hourly_usd",
				      json_is_number(h) ? json_real(json_number_value(h))
							: json_null(),
				      "expires", expires),
			    "Cost: %.2f USD an hour; expires %s", json_number_value(h),
			    expires ? expires : "never (no ttl)");
}

static void nothing_show(const struct apply_cmd *a, const struct op_run *r, bool moved,
			 const char *commit)
{
	if (a->f.json) {
		if (a->up)
			up_summary_json(r);
		return;
	}
	printf("\nNothing to %s.\n", a->opts.run.destroy ? "destroy" : "apply");
	if (commit)
		printf("State: commit %.12s in workspace '%s' records the new expiry.\n", commit,
		       r->ws->name);
	if (a->up)
		up_summary(r);
	else if (!a->opts.run.destroy && moved)
		expiry_print(r->state);
}

static void render_outcome_json(const struct apply_cmd *a, const struct op_apply_outcome *o,
				const char *counts, bool whole)
{
	const struct apply_result *res = &o->res;
	size_t i;
	json_t *e;

	json_array_foreach(res->warnings, i, e)
	    progress_json_event("diagnostic", "warn", NULL, "%s", json_string_value(e));
	progress_json_event(
	    "change_summary", whole ? "info" : "error",
	    json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:s*}",
		      "operation", a->opts.run.destroy ? "destroy" : "apply", "add",
		      (int)res->created,
		      "change", (int)res->updated, "replace", (int)res->replaced, "remove",
		      (int)res->deleted, "adopt", (int)res->adopted, "release", (int)res->released,
		      "done", (int)res->done, "failed", (int)res->failed, "skipped",
		      (int)res->skipped, "calls", (int)res->calls, "interrupted", res->interrupted,
		      "commit", o->commit),
	    "%s %s: %s", a->opts.run.destroy ? "Destroy" : "Apply",
	    whole ? "complete" : "incomplete",
	    counts);
}

/* The summary first, then why: in a CI log the two arrive in order. */
static void render_outcome(const struct apply_cmd *a, const struct op_run *r,
			   const struct op_apply_outcome *o)
{
	const struct apply_result *res = &o->res;
	char *counts = operation_summary_counts(res);
	bool whole = !res->failed && !res->interrupted && !res->skipped;
	size_t i;
	json_t *e;

	if (a->f.json) {
		render_outcome_json(a, o, counts, whole);
		if (a->up)
			up_summary_json(r);
		free(counts);
		return;
	}
	printf("\n%s %s: %s.\n", a->opts.run.destroy ? "Destroy" : "Apply",
	       whole ? "complete" : "incomplete", counts);
	free(counts);
	if (o->commit)
		printf("State: commit %.12s in workspace '%s'.\n", o->commit, r->ws->name);
	if (a->up)
		up_summary(r);
	else if (!a->opts.run.destroy)
		expiry_print(r->state);
	if (a->destroy && o->commit)
		cost_render_still_billing(stdout, r->plan, r->ws->name);
	fflush(stdout);
	json_array_foreach(res->warnings, i, e) fprintf(
	    stderr, "%s: %s: warning: %s\n", a->cli->prog, a->cli->cmd, json_string_value(e));
	cmd_run_report_failures(a->cli, res->errors);
	/* A user's own interrupt has no cause to fix. */
	if (!whole && res->interrupted && !res->failed) {
		int sig = signals_interrupted();

		fprintf(stderr,
			"  hint: stopped by SIG%s, as asked: what was done is recorded; run `kiln "
			"plan` to see what remains\n",
			sig > 0 && sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else if (!whole) {
		fprintf(stderr, "  hint: what succeeded is recorded; fix the cause and run `kiln "
				"plan` to see what remains\n");
	}
}

static void ui_error(void *arg, const struct kiln_error *err, bool one_line)
{
	const struct apply_cmd *a = arg;

	refuse(a->cli, err, one_line);
}

static void ui_loaded(void *arg, struct diags *d)
{
	const struct apply_cmd *a = arg;

	cmd_run_loaded(a->cli, d);
}

static void ui_approvals(void *arg, const struct approval_policy *policy, const char *file,
			 const struct approval_policy_result *res, bool enough)
{
	const struct apply_cmd *a = arg;

	approvals_show(a->cli, policy, file, res, enough, a->f.json);
}

static void ui_plan(void *arg, const struct op_run *r)
{
	render_plan(arg, r);
}

static void ui_findings(void *arg, const struct op_run *r, long n)
{
	const struct apply_cmd *a = arg;

	findings_show(a->cli, r, a->opts.plan_file, n);
}

static bool ui_ask(void *arg, const char *question)
{
	(void)arg;
	return cmd_run_confirm(question);
}

static void ui_event(void *arg, const struct apply_event *ev)
{
	struct apply_cmd *a = arg;

	progress_event(&a->pg, ev);
}

/* A round of --wait starts its display again: the last round's ticker was stopped. */
static void ui_started(void *arg)
{
	struct apply_cmd *a = arg;

	a->pg.stop = false;
	progress_start(&a->pg);
}

static void ui_finished(void *arg)
{
	struct apply_cmd *a = arg;

	progress_stop(&a->pg);
}

static void ui_done(void *arg, const struct op_run *r, const struct op_apply_outcome *o,
		    bool moved, const char *commit)
{
	const struct apply_cmd *a = arg;

	if (o)
		render_outcome(a, r, o);
	else
		nothing_show(a, r, moved, commit);
}

static void ui_health_waiting(void *arg, int64_t timeout)
{
	struct apply_cmd *a = arg;

	cmd_run_health_waiting(timeout, a->f.json);
	progress_health_init(&a->hl, a->f.json);
}

static void ui_health_tick(void *arg, size_t reported, size_t nodes, int64_t left_s)
{
	struct apply_cmd *a = arg;

	progress_health_tick(&a->hl, reported, nodes, left_s);
}

static void ui_health(void *arg, const json_t *groups, int64_t timeout)
{
	struct apply_cmd *a = arg;

	progress_health_end(&a->hl);
	cmd_run_health_show(a->cli, groups, timeout, a->f.json);
}

static void ui_waiting(void *arg, const json_t *window, long ms)
{
	const struct apply_cmd *a = arg;
	const char *start = json_string_value(json_object_get(window, "start"));

	fprintf(stderr, "%s: %s: waiting for %s (from %s): applying again in %lds (--wait)\n",
		a->cli->prog, a->cli->cmd, json_string_value(json_object_get(window, "address")),
		start ? start : "?", (ms + 999) / 1000);
}

static const struct apply_ui apply_ui_template = {
    .error = ui_error,
    .loaded = ui_loaded,
    .approvals = ui_approvals,
    .plan = ui_plan,
    .findings = ui_findings,
    .ask = ui_ask,
    .event = ui_event,
    .started = ui_started,
    .finished = ui_finished,
    .done = ui_done,
    .health_waiting = ui_health_waiting,
    .health_tick = ui_health_tick,
    .health = ui_health,
    .waiting = ui_waiting,
};

/* The operation apply_op_run admits and runs, from what was parsed; -1 after refusing. */
static int apply_operation(struct apply_cmd *a)
{
	if (cmd_run_options(&a->opts.run, a->cli, &a->f, a->operand) < 0)
		return -1;
	a->opts.operand = a->operand;
	a->opts.policy = &a->ap;
	a->opts.env_required = getenv("KILN_REQUIRE_APPROVALS");
	a->opts.env_trusted = getenv("KILN_TRUSTED_KEYS");
	a->opts.env_workspace = getenv("KILN_WORKSPACE");
	a->opts.can_ask = isatty(STDIN_FILENO);
	a->opts.ttl = a->ttl;
	a->opts.allow_purchase = a->allow_purchase;
	if (a->waive_limit)
		a->opts.waivers = json_pack("{s:s}", a->waive_limit, a->waive_reason);
	a->opts.auto_approve = a->f.auto_approve;
	a->opts.parallelism = a->f.parallelism;
	a->opts.health_timeout = a->destroy ? 0 : a->health_timeout;
	a->opts.wait = &a->wait;
	return 0;
}

static int exit_status(enum apply_op_status st)
{
	switch (st) {
	case APPLY_OP_OK:
		return KILN_EXIT_OK;
	case APPLY_OP_FINDINGS:
		return KILN_EXIT_FINDINGS;
	case APPLY_OP_UNHEALTHY:
		return KILN_EXIT_UNHEALTHY;
	case APPLY_OP_WAIT_TIMEOUT:
		return KILN_EXIT_WAIT_TIMEOUT;
	case APPLY_OP_FAILED:
		break;
	}
	return KILN_EXIT_ERROR;
}

/* apply (destroy false) or destroy, as the commands run them; up: info of up, and its summary. */
static int apply_main(int argc, char **argv, struct cli *cli, const struct cmd_info *info,
		      bool destroy, bool up)
{
	struct apply_cmd a = {.cli = cli, .info = info, .destroy = destroy, .up = up};
	struct apply_ui ui = apply_ui_template;
	struct cli_parser p;
	int ret = KILN_EXIT_ERROR;

	cmd_run_flags_init(&a.f);
	a.f.destroy = destroy;
	a.pg = (struct progress){.json = false};
	if (apply_parse(&a, &p, argc, argv, &ret) < 0 || apply_operation(&a) < 0)
		goto out;
	a.pg = (struct progress){.json = a.f.json, .tty = !a.f.json && isatty(STDOUT_FILENO)};
	progress_init(&a.pg);
	ui.arg = &a;
	ret = exit_status(apply_op_run(&a.opts, &ui));
	progress_release(&a.pg);
out:
	json_decref(a.opts.saved);
	json_decref(a.opts.approved);
	json_decref(a.opts.waivers);
	approval_policy_release(&a.ap);
	apply_wait_release(&a.wait);
	cmd_run_flags_release(&a.f);
	cli_parser_release(&p);
	return ret;
}

int cmd_apply(int argc, char **argv, struct cli *cli)
{
	return apply_main(argc, argv, cli, &cmd_apply_info, false, false);
}

int cmd_destroy(int argc, char **argv, struct cli *cli)
{
	return apply_main(argc, argv, cli, &cmd_destroy_info, true, false);
}

int cmd_up(int argc, char **argv, struct cli *cli)
{
	return apply_main(argc, argv, cli, &cmd_up_info, false, true);
}

int cmd_down(int argc, char **argv, struct cli *cli)
{
	return apply_main(argc, argv, cli, &cmd_down_info, true, false);
}
