/*
 * cmd_policy.c - `kiln policy set FILE` and `kiln policy show`: the team
 * budgets and quotas (quota.h, kiln-policy(5)) committed in the state
 * repository, one commit naming its author per change.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_store.h"
#include "cmds.h"
#include "cost.h"
#include "jsonw.h"
#include "quota.h"
#include "timefmt.h"

enum { OPT_JSON = 1 };

static const struct cli_option options[] = {
    CMD_OPT_STATE,
    {"json", 0, false, OPT_JSON, NULL, "show: the policy, its commit and author as JSON"},
};

static const char *const policy_subs[] = {"show", "set", NULL};

const struct cmd_info cmd_policy_info = {
    .name = "policy",
    .usage = "show | set FILE  [OPTIONS]",
    .summary = "show or set the team budgets and quotas every apply is held to",
    .description =
	"  show      the policy in force: each limit, the commit that set it, its author\n"
	"  set FILE  check FILE (a JSON policy, kiln-policy(5)) and commit it as the policy,\n"
	"            the commit naming you (KILN_AUTHOR, else git's user.name and email)\n\n"
	"A limit covers a team (the spec tag team) or a workspace pattern and sets the most\n"
	"GPUs its workspaces run at once (max_gpus), its monthly budget\n"
	"(monthly_budget_usd) and the most one plan buys up front (max_upfront_usd).\n"
	"kiln plan, apply and up read every workspace's recorded state and refuse a plan\n"
	"that breaks one, naming the limit, the use and who uses it; two applies racing\n"
	"against one limit never both pass. An approved saved plan may waive one limit\n"
	"(kiln apply --waive-limit LIMIT --waive-reason TEXT).",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-policy(5), kiln-apply(1), kiln-report(1)",
    .subcommands = policy_subs,
};

static void show_text(const json_t *policy, const char *commit, const char *who,
		      const char *when)
{
	const json_t *l;
	size_t i;

	printf("Policy %.12s, set by %s at %s:\n", commit, who, when);
	json_array_foreach(json_object_get(policy, "limits"), i, l)
	{
		const json_t *v;
		char *m;

		if ((v = json_object_get(l, "team")))
			printf("  limits[%zu] team '%s':", i, json_string_value(v));
		else
			printf("  limits[%zu] workspaces '%s':", i,
			       json_string_value(json_object_get(l, "workspace")));
		if ((v = json_object_get(l, "max_gpus")))
			printf(" at most %" JSON_INTEGER_FORMAT " GPUs at once;",
			       json_integer_value(v));
		if ((v = json_object_get(l, "monthly_budget_usd"))) {
			m = cost_money(json_number_value(v));
			printf(" %s a month;", m);
			free(m);
		}
		if ((v = json_object_get(l, "max_upfront_usd"))) {
			m = cost_money(json_number_value(v));
			printf(" at most %s up front in one plan;", m);
			free(m);
		}
		printf("\n");
	}
	if (!json_array_size(json_object_get(policy, "limits")))
		printf("  no limits\n");
}

static int show(struct store *s, const struct cli *cli, bool json)
{
	struct kiln_error err = {0};
	json_t *policy = NULL;
	char commit[41], *who = NULL, *when = NULL;
	int rc, ret = KILN_EXIT_ERROR;

	if (store_sync(s, &err) < 0 || (rc = quota_policy_read(s, &policy, commit, &err)) < 0 ||
	    (rc == 0 && quota_policy_author(s, commit, &who, &when, &err) < 0)) {
		cmd_report(cli, &err);
		goto out;
	}
	if (json) {
		json_t *doc = json_pack("{s:O?, s:s?, s:s?, s:s?}", "policy", policy, "commit",
					rc == 0 ? commit : NULL, "author", who, "time", when);

		jsonw_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		json_decref(doc);
	} else if (rc > 0) {
		printf("No policy: no team limit holds an apply back. Set one with kiln policy set "
		       "FILE (kiln-policy(5)).\n");
	} else {
		show_text(policy, commit, who, when);
	}
	ret = KILN_EXIT_OK;
out:
	json_decref(policy);
	free(who);
	free(when);
	return ret;
}

static int set(struct store *s, const struct cli *cli, const char *file)
{
	struct kiln_error err = {0};
	char commit[41];
	int64_t now;

	if (timefmt_now(&now, &err) < 0 || quota_policy_set(s, file, now, commit, &err) < 0) {
		cmd_report(cli, &err);
		return KILN_EXIT_ERROR;
	}
	printf("Policy set from %s: commit %.12s on %s.\n", file, commit, QUOTA_POLICY_REF);
	return show(s, cli, false);
}

int cmd_policy(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct store_flags sf = {0};
	struct store *s = NULL;
	bool json = false;
	const char *sub;
	int c, nops, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_policy_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (c == OPT_JSON)
			json = true;
		else if (cmd_store_flags_handle(&sf, cli, c, p.optarg) < 0)
			goto out;
	}
	nops = argc - p.optind;
	sub = nops ? argv[p.optind] : "show";
	if (!((strcmp(sub, "show") == 0 && nops <= 1) || (strcmp(sub, "set") == 0 && nops == 2))) {
		if (strcmp(sub, "set") == 0)
			cli_error(cli, "for example: kiln policy set policy.json",
				  "set takes one FILE");
		else
			cli_error(cli, "use show, or set FILE", "'%s' is not a policy subcommand",
				  sub);
		goto out;
	}
	if (cmd_store_flags_open(&sf, cli, strcmp(sub, "set") == 0, &s, NULL) < 0)
		goto out;
	ret = strcmp(sub, "set") == 0 ? set(s, cli, argv[p.optind + 1]) : show(s, cli, json);
out:
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
