/*
 * cmd_workspace.c - `kiln workspace list|new|delete` and `kiln force-unlock`.
 * A workspace is a branch of the state repository; its lock is a ref beside it.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd_store.h"
#include "cmds.h"
#include "lock.h"
#include "state.h"

enum {
	OPT_FORCE = 1,
	OPT_JSON,
};

static const struct cli_option ws_options[] = {
    CMD_OPT_STATE,
    CMD_OPT_WORKSPACE,
    CMD_OPT_LOCK_TIMEOUT,
    {"json", 0, false, OPT_JSON, NULL,
     "list: one JSON array of {name, selected, lock} on standard output"},
};

static const char *const ws_subs[] = {"list", "new", "delete", NULL};

const struct cmd_info cmd_workspace_info = {
    .name = "workspace",
    .usage = "list | new NAME | delete NAME  [OPTIONS]",
    .summary = "list, create and delete workspaces (branches of the state repository)",
    .description = "  list          every workspace, the selected one (-w, KILN_WORKSPACE, or\n"
		   "                default) marked with *, and who holds its lock, if anyone\n"
		   "  new NAME      create a workspace with an empty state (one commit)\n"
		   "  delete NAME   delete a workspace whose state holds no resources\n\n"
		   "Names are 1 to 64 of letters, digits, '.', '_' and '-'.",
    .options = ws_options,
    .noptions = sizeof(ws_options) / sizeof(ws_options[0]),
    .see_also = "kiln-workspace(1), kiln-state(1)",
    .subcommands = ws_subs,
};

static const struct cli_option unlock_options[] = {
    CMD_OPT_STATE,
    CMD_OPT_WORKSPACE,
    {"force", 0, false, OPT_FORCE, NULL, "remove the lock even though its lease is live"},
};

const struct cmd_info cmd_force_unlock_info = {
    .name = "force-unlock",
    .usage = "LOCK_ID [-w WORKSPACE] [--force] [--state URL|PATH]",
    .summary = "remove a stale workspace lock",
    .description = "Remove the lock of a workspace whose holder is gone. LOCK_ID must be the\n"
		   "id of the lock now held (the error that reported the lock names it), so\n"
		   "a lock taken since cannot be removed by mistake. A lock whose lease is\n"
		   "still being renewed is refused unless --force.",
    .options = unlock_options,
    .noptions = sizeof(unlock_options) / sizeof(unlock_options[0]),
    .see_also = "kiln-force-unlock(1)",
};

/* A workspace's lock as JSON: who holds it, for what, since and until when. */
static json_t *lock_json(const struct lock_info *info)
{
	char since[21], until[21];

	return json_pack("{s:s?, s:s?, s:I, s:s?, s:s, s:s, s:b}", "id", info->id, "holder",
			 info->holder, "pid", (json_int_t)info->pid, "operation", info->operation,
			 "created", timefmt_time_format_rfc3339(info->created, since), "expires",
			 timefmt_time_format_rfc3339(info->expires, until), "stale",
			 lock_info_expired(info));
}

static int ws_list(struct store *s, const char *selected, bool json, const struct cli *cli)
{
	struct kiln_error err = {0};
	json_t *list = json ? json_array() : NULL;
	char **names;
	size_t n, i;

	selected = workspace_name(selected);
	if (store_ref_list(s, "refs/heads/", &names, &n, &err) < 0) {
		cmd_report(cli, &err);
		json_decref(list);
		return KILN_EXIT_ERROR;
	}
	for (i = 0; i < n; i++) {
		struct lock_info info;
		git_oid oid;
		int held = lock_read(s, names[i], &info, &oid, &err);
		bool chosen = strcmp(names[i], selected) == 0;

		if (json) {
			json_array_append_new(list, json_pack("{s:s, s:b, s:o}", "name", names[i],
							      "selected", chosen, "lock",
							      held == 0 ? lock_json(&info)
									: json_null()));
		} else {
			printf("%c %s", chosen ? '*' : ' ', names[i]);
			if (held == 0) {
				char *who = lock_info_describe(&info);

				printf("  (locked by %s%s)", who,
				       lock_info_expired(&info) ? ", stale" : "");
				free(who);
			}
			putchar('\n');
		}
		if (held == 0)
			lock_info_release(&info);
	}
	store_names_free(names, n);
	if (json) {
		json_dumpf(list, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(list);
	}
	return KILN_EXIT_OK;
}

static int ws_new(struct store *s, const char *name, const struct cli *cli)
{
	struct workspace *w = NULL;
	struct kiln_error err = {0};
	char *summary = NULL;
	int ret = KILN_EXIT_ERROR;

	if (workspace_open(&w, s, name, &err) < 0) {
		cmd_report(cli, &err);
		return KILN_EXIT_ERROR;
	}
	if (w->exists) {
		cli_error(cli, "`kiln workspace list` shows the workspaces",
			  "workspace '%s' already exists", name);
		goto out;
	}
	summary = xasprintf("workspace new: %s", name);
	if (workspace_create(w, summary, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	printf("created workspace '%s'\n", name);
	ret = KILN_EXIT_OK;
out:
	free(summary);
	workspace_close(w, NULL);
	return ret;
}

static int ws_delete(struct store *s, const char *name, int64_t timeout, const struct cli *cli)
{
	struct workspace *w = NULL;
	struct kiln_error err = {0};
	struct lock_options lo = {"workspace delete", timeout};
	int ret = KILN_EXIT_ERROR;
	size_t n;

	if (workspace_open(&w, s, name, &err) < 0 || workspace_require(w, &err) < 0 ||
	    workspace_lock(w, &lo, &err) < 0 || workspace_require(w, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	n = state_resource_count(w->state);
	if (n > 0) {
		cli_error(cli, "forget them with `kiln state rm` (the cloud is not touched)",
			  "workspace '%s' still records %zu resource%s", name, n,
			  n == 1 ? "" : "s");
		goto out;
	}
	if (workspace_delete_branch(w, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	printf("deleted workspace '%s'; its history is kept at %s\n", name, w->archive);
	ret = KILN_EXIT_OK;
out:
	if (workspace_close(w, &err) < 0 && ret == KILN_EXIT_OK) {
		cmd_report(cli, &err);
		ret = KILN_EXIT_ERROR;
	}
	return ret;
}

int cmd_workspace(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	struct store *s = NULL;
	const char *sub;
	int opt, nops, ret = KILN_EXIT_ERROR;
	bool json = false;
	char **ops;

	cli_parser_init(&p, cli, &cmd_workspace_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (opt == OPT_JSON)
			json = true;
		else if (cmd_store_flags_handle(&flags, cli, opt, p.optarg) < 0)
			goto out;
	}
	ops = argv + p.optind;
	nops = argc - p.optind;
	sub = nops ? ops[0] : "list";
	if (!((strcmp(sub, "list") == 0 && nops <= 1) ||
	      ((strcmp(sub, "new") == 0 || strcmp(sub, "delete") == 0) && nops == 2))) {
		const char *near = str_closest(sub, ws_subs, ARRAY_SIZE(ws_subs) - 1);

		if (strcmp(sub, "new") == 0 || strcmp(sub, "delete") == 0)
			cli_error(cli, NULL, "usage: kiln workspace %s NAME", sub);
		else if (near && strcmp(near, sub) != 0)
			cli_error(cli, NULL, "'%s' is not a workspace command; did you mean '%s'?",
				  sub, near);
		else
			cli_error(cli, "use list, new NAME or delete NAME",
				  "'%s' is not a workspace command", sub);
		goto out;
	}
	if (json && strcmp(sub, "list") != 0) {
		cli_error(cli, "use kiln workspace list --json", "--json is for list, not %s", sub);
		goto out;
	}
	if (nops == 2 && !store_workspace_name_ok(ops[1])) {
		cli_error(cli, WORKSPACE_NAME_RULE, "'%s' is not a workspace name", ops[1]);
		goto out;
	}
	if (cmd_store_flags_open(&flags, cli, strcmp(sub, "new") == 0, &s, NULL) < 0)
		goto out;
	{
		struct kiln_error err = {0};

		if (store_sync(s, &err) < 0) {
			cmd_report(cli, &err);
			goto out;
		}
	}
	if (strcmp(sub, "list") == 0)
		ret = ws_list(s, flags.workspace, json, cli);
	else if (strcmp(sub, "new") == 0)
		ret = ws_new(s, ops[1], cli);
	else
		ret = ws_delete(s, ops[1], flags.lock_timeout, cli);
out:
	store_free(s);
	cli_parser_release(&p);
	return ret;
}

int cmd_force_unlock(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	struct store *s = NULL;
	struct kiln_error err = {0};
	bool force = false;
	const char *ws;
	int opt, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_force_unlock_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (cmd_store_flags_handle(&flags, cli, opt, p.optarg) < 0)
			goto out;
		force |= opt == OPT_FORCE;
	}
	if (argc - p.optind != 1) {
		cli_error(cli, "the error that reported the lock names its id",
			  "needs one LOCK_ID");
		goto out;
	}
	ws = workspace_name(flags.workspace);
	if (!store_workspace_name_ok(ws)) {
		cli_error(cli, NULL, "'%s' is not a workspace name", ws);
		goto out;
	}
	if (cmd_store_flags_open(&flags, cli, false, &s, NULL) < 0)
		goto out;
	if (lock_force_unlock(s, ws, argv[p.optind], force, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	printf("removed lock %s of workspace '%s'\n", argv[p.optind], ws);
	ret = KILN_EXIT_OK;
out:
	store_free(s);
	cli_parser_release(&p);
	return ret;
}
