/*
 * test_apply_op.c - one apply run whole (src/apply_op.c) on the sim,
 * through a ui that records what it is told: the plan is shown before the
 * question, an unapproved apply changes nothing and says so, an approved
 * one runs the executor between started and finished and shows how it
 * went, and the next finds nothing to do; a plan with an error-level
 * finding, or one buying capacity nobody allowed, is refused unasked; and
 * its admission refuses before anything is loaded: a question nobody can
 * answer, a spec where approvals are required. The spec is the
 * quickstart's (examples/quickstart.yaml, on the sim).
 *
 * And the operations that follow an apply, run whole the same way
 * (repair_op.c, reap_op.c): a repair before any apply is refused, one
 * after finds nothing unhealthy and asks nothing; a reap keeps a workspace
 * before its TTL and destroys it, under its lock, after.
 */
#include "testutil.h"

#include <limits.h>
#include <unistd.h>

#include "apply_op.h"
#include "reap_op.h"
#include "repair_op.h"
#include "strbuf.h"

/* What the ui was told, in order: one word each, "event" once for a run of events. */
struct rec {
	struct strbuf said;
	bool answer;		 /* what ask answers */
	char question[256];	 /* the last question */
	char error[1024];	 /* the last error's message */
	bool one_line;		 /* the last error was a refusal said on one line */
	bool nothing;		 /* done came without an outcome */
	size_t created;		 /* the outcome's count */
};

static void said(struct rec *t, const char *word)
{
	size_t n = strlen(word);

	if (t->said.len >= n && strcmp(t->said.buf + t->said.len - n, word) == 0 &&
	    strcmp(word, "event") == 0)
		return;
	sb_addf(&t->said, "%s%s", t->said.len ? " " : "", word);
}

static void rec_error(void *arg, const struct kiln_error *err, bool one_line)
{
	struct rec *t = arg;

	t->one_line = one_line;
	snprintf(t->error, sizeof(t->error), "%s", err->msg);
	said(t, "error");
}

static void rec_loaded(void *arg, struct diags *d)
{
	(void)d;
	said(arg, "loaded");
}

static void rec_plan(void *arg, const struct op_run *r)
{
	assert_non_null(r->plan);
	said(arg, "plan");
}

static void rec_findings(void *arg, const struct op_run *r, long n)
{
	(void)r;
	(void)n;
	said(arg, "findings");
}

static bool rec_ask(void *arg, const char *question)
{
	struct rec *t = arg;

	snprintf(t->question, sizeof(t->question), "%s", question);
	said(t, "ask");
	return t->answer;
}

static void rec_event(void *arg, const struct apply_event *ev)
{
	(void)ev;
	said(arg, "event");
}

static void rec_started(void *arg)
{
	said(arg, "started");
}

static void rec_finished(void *arg)
{
	said(arg, "finished");
}

static void rec_done(void *arg, const struct op_run *r, const struct op_apply_outcome *o,
		     bool moved, const char *commit)
{
	struct rec *t = arg;

	(void)r;
	(void)moved;
	(void)commit;
	t->nothing = !o;
	t->created = o ? o->res.created : 0;
	said(t, "done");
}

static void rec_health_waiting(void *arg, int64_t timeout)
{
	(void)timeout;
	said(arg, "health_waiting");
}

static void rec_health(void *arg, const json_t *groups, int64_t timeout)
{
	(void)groups;
	(void)timeout;
	said(arg, "health");
}

static void rec_waiting(void *arg, const json_t *window, long ms)
{
	(void)window;
	(void)ms;
	said(arg, "waiting");
}

struct run_fx {
	char dir[64];
	char cwd[PATH_MAX];
	struct rec t;
	struct apply_ui ui;
	struct approval_policy policy; /* none, unless a test sets its flags */
};

static int run_setup(void **state)
{
	struct run_fx *f = xcalloc(1, sizeof(*f));
	char *spec;
	int rc;

	setenv("KILN_AUTHOR", "Test <test@example.com>", 1);
	unsetenv("KILN_STATE");
	unsetenv("KILN_WORKSPACE");
	unsetenv("KILN_STATE_KEY");
	strcpy(f->dir, "/tmp/kiln-test-apply-op-XXXXXX");
	if (!getcwd(f->cwd, sizeof(f->cwd)) || !mkdtemp(f->dir) || chdir(f->dir) != 0) {
		free(f);
		return -1;
	}
	spec = xasprintf("%s/examples/quickstart.yaml", f->cwd);
	rc = symlink(spec, "kiln.yaml");
	free(spec);
	if (rc != 0)
		return -1;
	f->ui = (struct apply_ui){
	    .arg = &f->t,
	    .error = rec_error,
	    .loaded = rec_loaded,
	    .plan = rec_plan,
	    .findings = rec_findings,
	    .ask = rec_ask,
	    .event = rec_event,
	    .started = rec_started,
	    .finished = rec_finished,
	    .done = rec_done,
	    .health_waiting = rec_health_waiting,
	    .health = rec_health,
	    .waiting = rec_waiting,
	};
	*state = f;
	return 0;
}

static int run_teardown(void **state)
{
	struct run_fx *f = *state;
	int rc = 0;

	sb_release(&f->t.said);
	approval_policy_release(&f->policy);
	if (chdir(f->cwd) != 0 || util_remove_tree(f->dir) != 0)
		rc = -1;
	free(f);
	return rc;
}

/* The apply of kiln.yaml with the defaults of kiln apply, asked on a terminal. */
static struct apply_op_options apply_of_spec(struct run_fx *f)
{
	return (struct apply_op_options){
	    .run = {.refresh = true},
	    .operand = "kiln.yaml",
	    .policy = &f->policy,
	    .can_ask = true,
	    .parallelism = 4,
	};
}

static void test_an_apply_not_approved_changes_nothing_and_says_so(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);

	f->t.answer = false;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_FAILED);
	/* The plan is shown before the question, and nothing starts after the no. */
	assert_string_equal(f->t.said.buf, "loaded plan ask error");
	assert_string_equal(f->t.question, "Do you want to apply this plan to quickstart/default?");
	assert_string_equal(f->t.error, "not approved; nothing was changed");
}

static void test_an_approved_apply_runs_whole_and_the_next_has_nothing_to_do(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);

	f->t.answer = true;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_OK);
	assert_string_equal(f->t.said.buf, "loaded plan ask started event finished done");
	assert_false(f->t.nothing);
	assert_true(f->t.created > 0);

	/* Recorded and committed: the next plan is empty, and nothing is asked. */
	sb_release(&f->t.said);
	o = apply_of_spec(f);
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_OK);
	assert_string_equal(f->t.said.buf, "loaded plan done");
	assert_true(f->t.nothing);
}

static void test_auto_approve_asks_nothing(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);

	o.auto_approve = true;
	f->t.answer = false;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_OK);
	assert_null(strstr(f->t.said.buf, "ask"));
}

/*
 * The apply of spec (kiln.yaml's text from now on), answered yes if asked:
 * it ends with st, the ui told only said.
 */
static void apply_spec(struct run_fx *f, const char *spec, enum apply_op_status st,
		       const char *words)
{
	struct apply_op_options o = apply_of_spec(f);
	FILE *fp;

	assert_int_equal(unlink("kiln.yaml"), 0);
	fp = fopen("kiln.yaml", "w");
	assert_non_null(fp);
	assert_true(fputs(spec, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
	f->t.answer = true;
	assert_int_equal(apply_op_run(&o, &f->ui), st);
	assert_string_equal(f->t.said.buf, words);
}

static void test_a_plan_with_an_error_level_finding_is_refused_unasked(void **state)
{
	apply_spec(*state,
		   "kiln: 1\n"
		   "cluster: quickstart\n"
		   "provider: {name: sim}\n"
		   "budget: {max_hourly_usd: 1}\n"
		   "network: {cidr: 10.42.0.0/16, fabric: ena}\n"
		   "compute:\n"
		   "  trainers: {gpu: H100:8, count: 2}\n",
		   APPLY_OP_FINDINGS, "loaded plan findings");
}

static void test_a_purchase_nobody_allowed_is_refused_before_the_question(void **state)
{
	struct run_fx *f = *state;

	apply_spec(f,
		   "kiln: 1\n"
		   "cluster: block\n"
		   "provider: {name: sim}\n"
		   "network: {cidr: 10.42.0.0/16, fabric: efa}\n"
		   "compute:\n"
		   "  trainers:\n"
		   "    gpu: H100:8\n"
		   "    count: 2\n"
		   "    capacity: {block: {duration: 24h, start: asap, max_upfront_usd: 6000}}\n",
		   APPLY_OP_FAILED, "loaded plan error");
	assert_non_null(strstr(f->t.error, "this plan buys capacity up front ("));
	assert_non_null(strstr(f->t.error, "and no approval covers it; nothing was changed"));
}

static void test_without_a_terminal_a_spec_is_refused_before_it_is_loaded(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);

	o.can_ask = false;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_FAILED);
	assert_string_equal(f->t.said.buf, "error");
	assert_true(f->t.one_line);
	assert_string_equal(f->t.error, "standard input is not a terminal, so kiln cannot ask for "
					"approval; nothing was changed");
	assert_int_equal(access(".kiln/state.git", F_OK), -1);
}

static void test_required_approvals_refuse_a_spec_before_it_is_loaded(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);

	f->policy.required_arg = "1";
	o.auto_approve = true;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_FAILED);
	assert_string_equal(f->t.said.buf, "error");
	/* Its hint goes on a line of its own: the fix is a whole procedure. */
	assert_false(f->t.one_line);
	assert_string_equal(f->t.error,
			    "approvals are required (--require-approvals 1), and kiln.yaml is a "
			    "spec, which carries none; nothing was changed");
	assert_int_equal(access(".kiln/state.git", F_OK), -1);
}

static void rec_op_error(void *arg, const struct kiln_error *err)
{
	rec_error(arg, err, false);
}

static void rec_repair_plan(void *arg, const struct op_run *r, const json_t *targets)
{
	struct rec *t = arg;

	(void)r;
	said(t, json_array_size(targets) ? "plan" : "nothing");
}

static void rec_repair_done(void *arg, const struct op_run *r, const struct op_repair_outcome *o)
{
	(void)r;
	(void)o;
	said(arg, "done");
}

static const struct repair_ui repair_rec = {
    .base = {NULL, rec_op_error, rec_loaded},
    .plan = rec_repair_plan,
    .ask = rec_ask,
    .done = rec_repair_done,
    .health_waiting = rec_health_waiting,
    .health = rec_health,
};

static enum repair_op_status repair(struct run_fx *f)
{
	struct repair_ui ui = repair_rec;
	struct repair_op_options o = {.run = {.refresh = true}, .spec = "kiln.yaml"};

	ui.base.arg = &f->t;
	sb_release(&f->t.said);
	return repair_op_run(&o, &ui);
}

static void test_a_repair_before_any_apply_is_refused(void **state)
{
	struct run_fx *f = *state;

	assert_int_equal(repair(f), REPAIR_OP_FAILED);
	assert_string_equal(f->t.said.buf, "loaded error");
	assert_string_equal(f->t.error,
			    "workspace 'default' has no cluster yet: nothing has been applied");
}

static void test_a_repair_after_an_apply_finds_nothing_and_asks_nothing(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);

	o.auto_approve = true;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_OK);
	assert_int_equal(repair(f), REPAIR_OP_OK);
	assert_string_equal(f->t.said.buf, "loaded nothing");
}

static void rec_workspace(void *arg, const json_t *outcome)
{
	said(arg, json_string_value(json_object_get(outcome, "outcome")));
}

static void rec_failures(void *arg, const json_t *errors)
{
	(void)errors;
	said(arg, "failures");
}

/* kiln reap at now (seconds after the apply's clock), its ui recording each outcome. */
static int reap_at(struct run_fx *f, int64_t now, struct reap_op_result *res)
{
	const struct reap_ui ui = {
	    .base = {&f->t, rec_op_error, rec_loaded},
	    .workspace = rec_workspace,
	    .failures = rec_failures,
	};
	struct reap_op_options o = {.now = now, .parallelism = 4};

	sb_release(&f->t.said);
	return reap_op_run(&o, &ui, res);
}

static void test_a_reap_keeps_a_workspace_before_its_ttl_and_destroys_it_after(void **state)
{
	struct run_fx *f = *state;
	struct apply_op_options o = apply_of_spec(f);
	struct reap_op_result res = {0};
	struct kiln_error err = {0};
	int64_t now;

	assert_int_equal(timefmt_now(&now, &err), 0);
	o.auto_approve = true;
	o.ttl = 3600;
	assert_int_equal(apply_op_run(&o, &f->ui), APPLY_OP_OK);

	assert_int_equal(reap_at(f, now + 60, &res), 0);
	assert_string_equal(f->t.said.buf, "kept");
	assert_int_equal(res.reaped, 0);
	assert_int_equal(res.failed, 0);
	reap_op_result_release(&res);

	/* The destroy loads the spec the apply recorded: its diagnostics, then the outcome. */
	assert_int_equal(reap_at(f, now + 7200, &res), 0);
	assert_string_equal(f->t.said.buf, "loaded reaped");
	assert_int_equal(res.reaped, 1);
	assert_int_equal(res.failed, 0);
	assert_true(json_integer_value(json_object_get(
			json_array_get(res.workspaces, 0), "deleted")) > 0);
	reap_op_result_release(&res);

	/* Reaped: nothing is left to destroy, and a second reap changes nothing. */
	assert_int_equal(reap_at(f, now + 7300, &res), 0);
	assert_string_equal(f->t.said.buf, "kept");
	reap_op_result_release(&res);
}

#define apply_op_test(fn) cmocka_unit_test_setup_teardown(fn, run_setup, run_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    apply_op_test(test_an_apply_not_approved_changes_nothing_and_says_so),
	    apply_op_test(test_an_approved_apply_runs_whole_and_the_next_has_nothing_to_do),
	    apply_op_test(test_auto_approve_asks_nothing),
	    apply_op_test(test_a_plan_with_an_error_level_finding_is_refused_unasked),
	    apply_op_test(test_a_purchase_nobody_allowed_is_refused_before_the_question),
	    apply_op_test(test_without_a_terminal_a_spec_is_refused_before_it_is_loaded),
	    apply_op_test(test_required_approvals_refuse_a_spec_before_it_is_loaded),
	    apply_op_test(test_a_repair_before_any_apply_is_refused),
	    apply_op_test(test_a_repair_after_an_apply_finds_nothing_and_asks_nothing),
	    apply_op_test(test_a_reap_keeps_a_workspace_before_its_ttl_and_destroys_it_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
