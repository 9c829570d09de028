/*
 * cmd_init.c - `kiln init [--template NAME] [--provider aws|sim] [--list] [DIR]`:
 * start a project from one of the templates compiled into kiln (template.h).
 *
 * It writes DIR/kiln.yaml, makes DIR/.gitignore ignore .kiln/, and creates the
 * workspace in the state repository, the way `kiln workspace new` does. It
 * never overwrites a spec: every check that can refuse runs before anything
 * is written, and kiln.yaml, the one file that must not be clobbered, is
 * written last and only if it does not exist (O_EXCL), so a failed init can
 * simply be run again.
 *
 * It also leaves the user with a state key (crypt.h), outside the project
 * and its state repository, in their own configuration directory, so the
 * first apply records its secrets sealed instead of warning that it could
 * not: a key named by KILN_STATE_KEY or KILN_STATE_KEY_FILE wins, and an
 * existing key file is never replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_store.h"
#include "cmds.h"
#include "crypt.h"
#include "jsonc.h"
#include "jsonw.h"
#include "provider.h"
#include "template.h"

enum {
	OPT_TEMPLATE = 1,
	OPT_PROVIDER,
	OPT_LIST,
	OPT_JSON,
};

static const struct cli_option options[] = {
    {"template", 0, true, OPT_TEMPLATE, "NAME",
     "the template (default sim-demo; finetune with --provider aws)"},
    {"provider", 0, true, OPT_PROVIDER, "aws|sim",
     "start from its default template; with --template, must be its provider"},
    {"list", 0, false, OPT_LIST, NULL, "list the templates (of --provider, if given) and exit"},
    {"json", 0, false, OPT_JSON, NULL,
     "print what was made (or, with --list, the templates) as one JSON document"},
    CMD_OPT_STATE,
    CMD_OPT_WORKSPACE,
};

const struct cmd_info cmd_init_info = {
    .name = "init",
    .usage = "[--template NAME] [--provider aws|sim] [--json] [DIR]  |  init --list [--json]",
    .summary = "start a project from a template: kiln.yaml, .gitignore, state",
    .description =
	"Write DIR/kiln.yaml (DIR defaults to the current directory and is created if\n"
	"missing) from one of the templates built into kiln, make DIR/.gitignore ignore\n"
	".kiln/ (created, or the line appended; no other line is touched), and create\n"
	"the workspace (-w, default default) in the state repository (--state, else\n"
	"KILN_STATE, else DIR/.kiln/state.git; paths are taken from DIR, as with -C).\n"
	"An existing kiln.yaml is never overwritten: init refuses and writes nothing.\n"
	"Unless KILN_STATE_KEY or KILN_STATE_KEY_FILE is set, it also makes the state\n"
	"key that seals secrets in the state, $XDG_CONFIG_HOME/kiln/state.key (else\n"
	"~/.config/kiln/state.key), mode 0600; an existing key is never replaced.\n\n"
	"Without --template: sim-demo (the simulated provider, no account needed), or\n"
	"finetune with --provider aws, the cheapest training cluster (one node). A\n"
	"template fixes its provider; --provider must then agree. Each template says at\n"
	"its top what it makes, what it costs an hour and what to change; `kiln init\n"
	"--list` prints each one's name, provider and summary. With --json, stdout is one\n"
	"JSON document (kiln-init(1) describes it) and the next steps are left out.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-init(1), kiln-spec(5), kiln-workspace(1)",
};

/* --provider names a provider of the table; else an error, with the nearest name. */
static int known_provider(const struct cli *cli, const char *provider)
{
	const char *names[PROVIDERS_MAX], *near;
	char *all, *hint;
	size_t i, n = provider_count();

	if (provider_find(provider))
		return 0;
	for (i = 0; i < n && i < PROVIDERS_MAX; i++)
		names[i] = provider_at(i)->name;
	near = str_closest(provider, names, i);
	if (near) {
		cli_error(cli, NULL, "--provider '%s' is not a provider; did you mean '%s'?",
			  provider, near);
		return -1;
	}
	all = provider_names_join("", ", ", " or ");
	hint = xasprintf("use %s", all);
	cli_error(cli, hint, "--provider '%s' is not a provider", provider);
	free(hint);
	free(all);
	return -1;
}

/* "finetune, inference, llm-pretrain and sim-demo". Caller frees. */
static char *template_names(void)
{
	struct strbuf sb = {0};
	size_t i;

	for (i = 0; i < template_count; i++)
		sb_addf(&sb, "%s%s",
			i == 0			  ? ""
			: i + 1 == template_count ? " and "
						  : ", ",
			template_table[i].name);
	return sb_detach(&sb);
}

/* The templates of provider (all when NULL) with their provider and summary. */
static void list_templates(const char *provider, bool json)
{
	json_t *doc = json ? json_array() : NULL;
	size_t i, w = 0;

	for (i = 0; i < template_count; i++)
		if (strlen(template_table[i].name) > w)
			w = strlen(template_table[i].name);
	for (i = 0; i < template_count; i++) {
		const struct template_entry *t = &template_table[i];

		if (provider && strcmp(provider, t->provider) != 0)
			continue;
		if (doc)
			json_array_append_new(doc, json_pack("{s:s, s:s, s:s}", "name", t->name,
							     "provider", t->provider, "summary",
							     t->summary));
		else
			printf("%-*s  %s  %s\n", (int)w, t->name, t->provider, t->summary);
	}
	if (doc) {
		jsonw_dumpf(doc, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(doc);
	}
}

static const struct template_entry *choose_template(const struct cli *cli, const char *name,
						    const char *provider)
{
	const struct template_entry *t;

	if (!name)
		return template_default(provider);
	t = template_find(name);
	if (!t) {
		const char *names[64];
		const char *near;
		char *all = template_names();
		size_t i, n = 0;

		for (i = 0; i < template_count && n < ARRAY_SIZE(names); i++)
			names[n++] = template_table[i].name;
		near = str_closest(name, names, n);
		if (near)
			cli_error(cli, NULL,
				  "there is no template '%s'; did you mean '%s'? The templates are "
				  "%s (kiln init --list)",
				  name, near, all);
		else
			cli_error(cli, NULL,
				  "there is no template '%s'; the templates are %s (kiln init "
				  "--list)",
				  name, all);
		free(all);
		return NULL;
	}
	if (provider && strcmp(provider, t->provider) != 0) {
		struct strbuf sb = {0};
		size_t i;

		for (i = 0; i < template_count; i++)
			if (strcmp(template_table[i].provider, provider) == 0)
				sb_addf(&sb, "%s%s", sb.len ? ", " : "", template_table[i].name);
		cli_error(cli, NULL,
			  "template '%s' is for provider %s, not %s; drop --provider %s, or "
			  "choose one of the %s templates: %s",
			  t->name, t->provider, provider, provider, provider,
			  sb.len ? sb.buf : "(none)");
		sb_release(&sb);
		return NULL;
	}
	return t;
}

/* DIR/NAME for messages; NAME alone when DIR is the current directory. */
static char *shown(const char *dir, const char *name)
{
	if (strcmp(dir, ".") == 0 || strcmp(dir, "./") == 0)
		return xstrdup(name);
	return xasprintf("%s%s%s", dir, str_ends_with(dir, "/") ? "" : "/", name);
}

/* mkdir -p: every missing component of dir. */
static int make_dir(const struct cli *cli, const char *dir)
{
	char *p = xstrdup(dir), *q;
	int ret = 0;

	for (q = p + 1;; q++) {
		char c = *q;

		if (c != '/' && c != '\0')
			continue;
		*q = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			cli_error(cli, "check the path and its permissions",
				  "cannot create directory %s: %s", p, strerror(errno));
			ret = -1;
			break;
		}
		*q = c;
		if (c == '\0')
			break;
	}
	free(p);
	return ret;
}

/* Whether a .gitignore line ignores .kiln/ at the top: .kiln, .kiln/, /.kiln or /.kiln/. */
static bool ignores_kiln(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((n == 5 && memcmp(p, ".kiln", 5) == 0) ||
		    (n == 6 && memcmp(p, ".kiln/", 6) == 0) ||
		    (n == 6 && memcmp(p, "/.kiln", 6) == 0) ||
		    (n == 7 && memcmp(p, "/.kiln/", 7) == 0))
			return true;
		p = nl ? nl + 1 : end;
	}
	return false;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * What .gitignore needs, decided before anything is written: 0 nothing (it
 * ignores .kiln/ already), 1 create it, 2 append (3: after a newline, the
 * file not ending with one); -1 after reporting.
 */
static int gitignore_check(const struct cli *cli, const char *shown_path)
{
	struct kiln_error err;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (lstat(".gitignore", &st) != 0) {
		if (errno == ENOENT)
			return 1;
		cli_error(cli, NULL, "cannot read %s: %s", shown_path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		cli_error(cli, "make it a file, or remove it", "%s is not a regular file",
			  shown_path);
		return -1;
	}
	if (util_file_read_all(".gitignore", (size_t)16 << 20, &text, &len, &err) != 0) {
		cli_error(cli, NULL, "cannot read %s: %s", shown_path, err.msg);
		return -1;
	}
	if (ignores_kiln(text, len))
		ret = 0;
	else
		ret = len > 0 && text[len - 1] != '\n' ? 3 : 2;
	free(text);
	return ret;
}

static int gitignore_write(const struct cli *cli, int how, const char *shown_path)
{
	int fd;
	bool ok;

	if (how == 0)
		return 0;
	fd = open(".gitignore", how == 1 ? O_WRONLY | O_CREAT | O_EXCL : O_WRONLY | O_APPEND, 0644);
	if (fd < 0) {
		cli_error(cli, NULL, "cannot write %s: %s", shown_path, strerror(errno));
		return -1;
	}
	ok = write_all(fd, how == 3 ? "\n.kiln/\n" : ".kiln/\n", how == 3 ? 8 : 7) == 0;
	if (close(fd) != 0)
		ok = false;
	if (!ok) {
		cli_error(cli, NULL, "cannot write %s: %s", shown_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The workspace, created unless it exists; *created says which. */
static int state_init(const struct cli *cli, const struct store_flags *flags,
		      const struct template_entry *t, const char *dir, bool *created, char **where,
		      char **local)
{
	struct store *s = NULL;
	struct workspace *w = NULL;
	struct kiln_error err;
	char *summary = NULL;
	int ret = -1;

	*created = false;
	*where = NULL;
	*local = NULL;
	if (cmd_store_flags_open(flags, cli, true, &s, &w) < 0)
		return -1;
	if (!store_is_remote(s))
		*local = realpath(store_location(s), NULL);
	if (store_is_remote(s) || store_location(s)[0] == '/')
		*where = xstrdup(store_location(s));
	else
		*where = shown(dir, store_location(s));
	if (!w->exists) {
		summary = xasprintf("init: workspace %s, from template %s", w->name, t->name);
		if (workspace_create(w, summary, &err) < 0) {
			cmd_report(cli, &err);
			goto out;
		}
		*created = true;
	}
	ret = 0;
out:
	free(summary);
	workspace_close(w, NULL);
	store_free(s);
	return ret;
}

/* True when path (which may not exist yet) lies under directory top. */
static bool path_is_under(const char *path, const char *top)
{
	char *copy = xstrdup(path), *real = NULL, *slash;
	size_t n = strlen(top);
	bool under = false;

	/* The nearest ancestor that exists says where the path really goes. */
	while (!real && (slash = strrchr(copy, '/')) != NULL && slash != copy) {
		*slash = '\0';
		real = realpath(copy, NULL);
	}
	if (real)
		under = strncmp(real, top, n) == 0 && (real[n] == '/' || real[n] == '\0');
	free(real);
	free(copy);
	return under;
}

/*
 * Make the state key unless one is configured; *said is the line init prints
 * about it, key the same for --json (action, path or variable). store_dir is the real path of a
 * local state repository (or NULL), which the key must never be inside.
 */
static int key_init(const struct cli *cli, const char *store_dir, char **said, json_t *key)
{
	char kid[CRYPT_KID_LEN + 1] = "";
	struct kiln_error err = {0};
	char *path;
	int rc;

	/* The id is for tests and callers that want it; init names the file. */
	*said = NULL;
	if (getenv("KILN_STATE_KEY") || getenv("KILN_STATE_KEY_FILE")) {
		const char *var =
		    getenv("KILN_STATE_KEY") ? "KILN_STATE_KEY" : "KILN_STATE_KEY_FILE";

		*said =
		    xasprintf("state key: %s is set, so kiln uses that key; no key file made", var);
		json_object_set_new(key, "action", json_string("environment"));
		json_object_set_new(key, "variable", json_string(var));
		return 0;
	}
	path = crypt_key_default_path();
	if (!path) {
		*said = xstrdup("state key: none made, as neither XDG_CONFIG_HOME nor HOME is set; "
				"set KILN_STATE_KEY_FILE to a key (openssl rand -base64 32)");
		json_object_set_new(key, "action", json_string("none"));
		return 0;
	}
	if (store_dir && path_is_under(path, store_dir)) {
		cli_error(cli,
			  "point XDG_CONFIG_HOME elsewhere, or set KILN_STATE_KEY_FILE to a key "
			  "outside it",
			  "the state key %s would be inside the state repository %s, next to the "
			  "secrets it seals",
			  path, store_dir);
		free(path);
		return -1;
	}
	rc = crypt_key_create_file(path, kid, &err);
	json_object_set_new(key, "action", json_string(rc > 0 ? "created" : "kept"));
	json_object_set_new(key, "path", json_string(path));
	if (rc < 0)
		cmd_report(cli, &err);
	else if (rc == 0)
		*said = xasprintf("state key %s already exists; left as it is", path);
	else
		*said = xasprintf("created state key %s (mode 0600); keep a copy: the secrets "
				  "sealed in the state open only with it",
				  path);
	free(path);
	return rc < 0 ? -1 : 0;
}

static int spec_write(const struct cli *cli, const struct template_entry *t, const char *shown_path)
{
	int fd = open("kiln.yaml", O_WRONLY | O_CREAT | O_EXCL, 0644);
	bool ok;

	if (fd < 0) {
		if (errno == EEXIST)
			cli_error(cli, "move it away first, or init another directory",
				  "%s already exists, and init never overwrites a spec",
				  shown_path);
		else
			cli_error(cli, NULL, "cannot write %s: %s", shown_path, strerror(errno));
		return -1;
	}
	ok = write_all(fd, t->text, t->len) == 0;
	if (close(fd) != 0)
		ok = false;
	if (!ok) {
		cli_error(cli, NULL, "cannot write %s: %s", shown_path, strerror(errno));
		unlink("kiln.yaml");
		return -1;
	}
	return 0;
}

static void print_next_steps(const char *dir, const struct template_entry *t)
{
	const struct provider *tp = provider_find(t->provider);

	printf("\nNext steps:\n");
	if (strcmp(dir, ".") != 0 && strcmp(dir, "./") != 0)
		printf("  cd %s\n", dir);
	if (tp && tp->init_edit)
		printf("  %-17s  %s\n", "$EDITOR kiln.yaml", tp->init_edit);
	printf("  %-17s  %s\n", "kiln validate", "check the spec");
	printf("  %-17s  %s\n", "kiln plan", "see what would be made and what it costs an hour");
	printf("  %-17s  %s\n", "kiln up", "create it (plan and apply); `kiln down` removes it");
}

/*
 * Go into dir (made when missing), refusing what is not a directory and a
 * spec already there (spec_shown names it); -1 after reporting.
 */
static int enter_dir(const struct cli *cli, const char *dir, const char *spec_shown)
{
	struct stat st;

	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cli_error(cli, "pass a directory (kiln init creates a missing one)",
				  "%s is not a directory", dir);
			return -1;
		}
		if (chdir(dir) != 0) {
			cli_error(cli, NULL, "cannot enter %s: %s", dir, strerror(errno));
			return -1;
		}
		if (lstat("kiln.yaml", &st) == 0) {
			cli_error(cli, "move it away first, or init another directory",
				  "%s already exists, and init never overwrites a spec",
				  spec_shown);
			return -1;
		}
	} else if (errno != ENOENT) {
		cli_error(cli, NULL, "cannot use %s: %s", dir, strerror(errno));
		return -1;
	} else if (make_dir(cli, dir) < 0) {
		return -1;
	} else if (chdir(dir) != 0) {
		cli_error(cli, NULL, "cannot enter %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_init(int argc, char **argv, struct cli *cli)
{
	struct store_flags flags = {0};
	struct cli_parser p;
	const struct template_entry *t;
	const char *tname = NULL, *provider = NULL, *dir = ".";
	char *spec_shown = NULL, *ign_shown = NULL, *where = NULL, *local = NULL, *key_said = NULL;
	bool list = false, created = false, json = false;
	json_t *key = json_object();
	int c, ign, ret = KILN_EXIT_ERROR;

	cli_parser_init(&p, cli, &cmd_init_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		switch (cmd_store_flags_handle(&flags, cli, c, p.optarg)) {
		case -1:
			goto out;
		case 1:
			continue;
		}
		if (c == OPT_TEMPLATE)
			tname = p.optarg;
		else if (c == OPT_PROVIDER)
			provider = p.optarg;
		else if (c == OPT_LIST)
			list = true;
		else if (c == OPT_JSON)
			json = true;
	}
	if (provider && known_provider(cli, provider) < 0)
		goto out;
	if (list) {
		if (tname || argc - p.optind > 0) {
			char *names = provider_names_join("", "|", "|");
			char *hint = xasprintf("use `kiln init --list [--provider %s]`", names);

			cli_error(cli, hint, "--list takes no --template and no DIR");
			free(hint);
			free(names);
			goto out;
		}
		list_templates(provider, json);
		ret = KILN_EXIT_OK;
		goto out;
	}
	if (argc - p.optind > 1) {
		cli_error(cli, NULL, "takes at most one DIR, got %d", argc - p.optind);
		goto out;
	}
	if (argc - p.optind == 1)
		dir = argv[p.optind];
	if (!*dir) {
		cli_error(cli, "pass a directory, or nothing for the current one", "DIR is empty");
		goto out;
	}
	t = choose_template(cli, tname, provider);
	if (!t)
		goto out;
	if (!store_workspace_name_ok(workspace_name(flags.workspace))) {
		cli_error(cli, WORKSPACE_NAME_RULE, "'%s' is not a workspace name",
			  workspace_name(flags.workspace));
		goto out;
	}
	spec_shown = shown(dir, "kiln.yaml");
	ign_shown = shown(dir, ".gitignore");

	/* Everything that can refuse, before anything is written. */
	if (enter_dir(cli, dir, spec_shown) < 0)
		goto out;
	ign = gitignore_check(cli, ign_shown);
	if (ign < 0)
		goto out;

	/* kiln.yaml last: after a failure, running init again finds no spec in the way. */
	if (state_init(cli, &flags, t, dir, &created, &where, &local) < 0 ||
	    key_init(cli, local, &key_said, key) < 0 || gitignore_write(cli, ign, ign_shown) < 0 ||
	    spec_write(cli, t, spec_shown) < 0)
		goto out;

	if (json) {
		static const char *const ignored[] = {"present", "created", "appended"};
		json_t *doc =
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:b, s:s?}, s:o}", "dir", dir,
			      "spec", spec_shown, "template", t->name, "provider", t->provider,
			      "gitignore", ignored[ign < 2 ? ign : 2], "workspace", "name",
			      workspace_name(flags.workspace), "created", created, "state", where,
			      "state_key", jsonc_share(key));

		jsonw_dumpf(doc, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(doc);
		ret = KILN_EXIT_OK;
		goto out;
	}
	printf("created %s from template '%s' (provider %s)\n", spec_shown, t->name, t->provider);
	if (ign == 1)
		printf("created %s, which ignores .kiln/\n", ign_shown);
	else if (ign == 0)
		printf("%s already ignores .kiln/\n", ign_shown);
	else
		printf("added .kiln/ to %s\n", ign_shown);
	if (created)
		printf("created workspace '%s' in %s\n", workspace_name(flags.workspace), where);
	else
		printf("workspace '%s' already exists in %s; left as it is\n",
		       workspace_name(flags.workspace), where);
	if (key_said)
		printf("%s\n", key_said);
	if (!cli_in_automation())
		print_next_steps(dir, t);
	ret = KILN_EXIT_OK;
out:
	json_decref(key);
	free(where);
	free(local);
	free(key_said);
	free(spec_shown);
	free(ign_shown);
	cli_parser_release(&p);
	return ret;
}
