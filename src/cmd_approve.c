/*
 * cmd_approve.c - `kiln approve PLANFILE --key KEY`: sign a saved plan, so
 * that `kiln apply PLANFILE --require-approvals N --trusted-keys DIR` knows
 * who reviewed exactly this plan; and `kiln approve --generate-key FILE`.
 * Signing is approve.c's, the plan file plan.c's; this file picks the
 * signer's name, prints and owns the exit code.
 */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "approve.h"
#include "cmd_store.h"
#include "cmds.h"
#include "jsonw.h"
#include "plan.h"

enum {
	OPT_KEY = 1,
	OPT_SIGNER,
	OPT_GENERATE,
	OPT_JSON,
};

static const struct cli_option options[] = {
    {"key", 0, true, OPT_KEY, "KEY", "sign with this Ed25519 private key (PEM, mode 0600)"},
    {"signer", 0, true, OPT_SIGNER, "NAME",
     "the name to sign as (default KILN_AUTHOR, git's user.name, or LOGIN@HOST)"},
    {"generate-key", 0, true, OPT_GENERATE, "FILE",
     "write a new Ed25519 key to FILE (0600) and its public key to FILE.pub"},
    {"json", 0, false, OPT_JSON, NULL, "print the approval (or the new key) as one JSON object"},
};

const struct cmd_info cmd_approve_info = {
    .name = "approve",
    .usage = "PLANFILE --key KEY [--signer NAME] [--json] | --generate-key FILE [--json]",
    .summary = "sign a saved plan so that apply --require-approvals accepts it",
    .description = "Add an approval to a plan file written by `kiln plan --out`: an Ed25519\n"
		   "signature over the plan's canonical bytes (those its digest covers), the\n"
		   "signer's name and the time, made with KEY. The approval is stored in the\n"
		   "file beside the plan; the plan and its digest do not change. A key signs a\n"
		   "plan once: approving again with the same key replaces its approval.\n\n"
		   "`kiln apply PLANFILE --require-approvals N --trusted-keys DIR` then applies\n"
		   "the plan only with N valid approvals from distinct keys whose public keys are\n"
		   "*.pub files in DIR; `kiln show PLANFILE` lists the approvals.\n\n"
		   "--generate-key FILE writes a new key (FILE, mode 0600) and its public key\n"
		   "(FILE.pub, to put in the trusted keys directory); it overwrites nothing.\n\n"
		   "With --json, stdout is one JSON object (kiln-approve(1) describes both).",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-approve(1), kiln-apply(1), kiln-show(1)",
};

/*
 * Who signs, when --signer is not given: the identity kiln records as a
 * commit's author (KILN_AUTHOR, then git's global user.name and
 * user.email), else LOGIN@HOST as ssh-keygen names a key. *source says
 * where it came from, for the message when it cannot be used.
 */
static char *default_signer(const char **source)
{
	const char *env = getenv("KILN_AUTHOR");
	git_config *cfg = NULL;
	git_buf name = GIT_BUF_INIT, email = GIT_BUF_INIT;
	struct passwd *pw;
	char host[256] = "localhost";
	char *out = NULL;

	if (env && *env) {
		*source = "KILN_AUTHOR";
		return xstrdup(env);
	}
	git_libgit2_init();
	if (git_config_open_default(&cfg) == 0 &&
	    git_config_get_string_buf(&name, cfg, "user.name") == 0 && name.size) {
		if (git_config_get_string_buf(&email, cfg, "user.email") == 0 && email.size)
			out = xasprintf("%s <%s>", name.ptr, email.ptr);
		else
			out = xstrdup(name.ptr);
		*source = "git config user.name";
	}
	git_buf_dispose(&name);
	git_buf_dispose(&email);
	git_config_free(cfg);
	git_libgit2_shutdown();
	if (out)
		return out;
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	pw = getpwuid(getuid());
	*source = "the login and host name";
	return xasprintf("%s@%s", pw && pw->pw_name ? pw->pw_name : "unknown", host);
}

/* One JSON object on stdout; takes doc's reference. */
static void print_json(json_t *doc)
{
	jsonw_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
}

static int generate_key(struct cli *cli, const char *path, bool json)
{
	struct kiln_error err = {0};
	struct approve_key *k;

	if (approve_key_generate(&k, path, &err) < 0) {
		cmd_report(cli, &err);
		return KILN_EXIT_ERROR;
	}
	if (json) {
		char *pub = xasprintf("%s.pub", path);

		print_json(
		    json_pack("{s:s, s:s, s:s}", "key", path, "public_key", pub, "key_id", k->id));
		free(pub);
		approve_key_free(k);
		return KILN_EXIT_OK;
	}
	printf("Wrote the signing key %s (mode 0600: keep it private) and its public key %s.pub.\n"
	       "Key id: %s\n"
	       "Put %s.pub in the trusted keys directory of whoever applies (kiln apply "
	       "--trusted-keys DIR); sign with kiln approve PLANFILE --key %s.\n",
	       path, path, k->id, path, path);
	approve_key_free(k);
	return KILN_EXIT_OK;
}

static int approve_plan(struct cli *cli, const char *path, const char *key_path,
			const char *signer_opt, bool json)
{
	struct kiln_error err = {0};
	struct approve_key *key = NULL;
	json_t *plan = NULL, *approvals = NULL, *approval = NULL, *updated = NULL;
	const char *source = "--signer";
	char *signer = NULL, *digest = NULL, *summary = NULL;
	char when[32];
	size_t before;
	int ret = KILN_EXIT_ERROR;

	if (plan_file_read_approvals(&plan, &approvals, path, &err) < 0 ||
	    approve_key_load_private(&key, key_path, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	signer = signer_opt ? xstrdup(signer_opt) : default_signer(&source);
	if (!approve_signer_ok(signer)) {
		cli_error(cli, "give another with --signer NAME",
			  "the signer name from %s is not 1 to %d bytes of UTF-8 without control "
			  "characters",
			  source, APPROVE_SIGNER_MAX);
		goto out;
	}
	approve_time_now(when);
	approval = approve_sign(key, plan, signer, when, &err);
	if (!approval) {
		cmd_report(cli, &err);
		goto out;
	}
	before = json_array_size(approvals);
	updated = approve_replace(approvals, approval);
	if (plan_file_write_approvals(path, plan, updated, &err) < 0) {
		cmd_report(cli, &err);
		goto out;
	}
	digest = plan_digest(plan);
	summary = plan_summary_line(plan);
	if (json) {
		print_json(json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:b}", "plan", path,
				     "signer", signer, "time", when, "key_id", key->id, "digest",
				     digest, "summary", summary, "approvals",
				     (int)json_array_size(updated), "replaced",
				     json_array_size(updated) == before));
		ret = KILN_EXIT_OK;
		goto out;
	}
	printf("Approved %s as %s at %s, with key %s.\n", path, signer, when, key->id);
	printf("Digest: %s\n%s\n", digest, summary);
	printf("The plan file holds %zu approval%s%s.\n", json_array_size(updated),
	       json_array_size(updated) == 1 ? "" : "s",
	       json_array_size(updated) == before ? " (this key's earlier one was replaced)" : "");
	ret = KILN_EXIT_OK;
out:
	json_decref(updated);
	json_decref(approval);
	json_decref(approvals);
	json_decref(plan);
	approve_key_free(key);
	free(signer);
	free(digest);
	free(summary);
	return ret;
}

int cmd_approve(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	const char *key = NULL, *signer = NULL, *generate = NULL;
	bool json = false;
	int opt, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_approve_info, argc, argv);
	while ((opt = cli_next(&p)) != CLI_DONE) {
		if (opt == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (opt == OPT_KEY)
			key = p.optarg;
		else if (opt == OPT_SIGNER)
			signer = p.optarg;
		else if (opt == OPT_GENERATE)
			generate = p.optarg;
		else if (opt == OPT_JSON)
			json = true;
	}
	if (generate) {
		if (key || signer || p.optind < argc) {
			cli_error(cli, "run kiln approve --generate-key FILE alone",
				  "--generate-key makes a key; it takes no plan file, --key or "
				  "--signer");
			goto out;
		}
		ret = generate_key(cli, generate, json);
		goto out;
	}
	if (argc - p.optind == 0) {
		cli_error(cli, "write kiln approve PLANFILE --key KEY",
			  "needs the plan file to approve");
		goto out;
	}
	if (argc - p.optind > 1) {
		cli_error(cli, "approve one plan file at a time", "takes one plan file, got %d",
			  argc - p.optind);
		goto out;
	}
	if (!key) {
		cli_error(cli,
			  "make a key with kiln approve --generate-key FILE (or openssl genpkey "
			  "-algorithm ed25519 -out FILE)",
			  "needs --key KEY, the Ed25519 private key to sign with");
		goto out;
	}
	ret = approve_plan(cli, argv[p.optind], key, signer, json);
out:
	cli_parser_release(&p);
	return ret;
}
