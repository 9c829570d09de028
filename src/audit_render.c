/*
 * audit_render.c - a plan's findings as text (the "Findings" section of
 * kiln plan and kiln audit), as Markdown (a table a reviewer scans, then how
 * to fix each), and as SARIF 2.1.0 for code-scanning UIs. Reads only the
 * plan's "findings"; never judges anything itself.
 */
#include "audit.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RED "\033[31m"
#define YELLOW "\033[33m"
#define CYAN "\033[36m"
#define DIM "\033[2m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

/*
 * Where code-scanning UIs send a reader for the rules: their catalogue, and
 * a rule's section there (its fragment is the .SS heading's id). kiln has no
 * web address of its own, and a man: URI is absolute and works offline.
 */
#define AUDIT_INFORMATION_URI "man:kiln-rules(7)"

/* The base results' paths are relative to (SARIF's name for a source tree). */
#define SARIF_SRCROOT "%SRCROOT%"

static const char *str(const json_t *f, const char *key)
{
	const char *s = json_string_value(json_object_get(f, key));

	return s ? s : "";
}

static const json_t *findings_of(const json_t *plan)
{
	return plan_kiln(plan, "findings");
}

static json_int_t count_of(const json_t *plan, const char *key)
{
	const json_t *f;
	json_int_t n = 0;
	size_t i;

	json_array_foreach(findings_of(plan), i, f)
	{
		bool waived = json_object_get(f, "waived") != NULL;

		if (strcmp(key, "waived") == 0 ? waived
					       : !waived && strcmp(str(f, "severity"), key) == 0)
			n++;
	}
	return n;
}

/* "2 errors, 1 warning, 0 info, 1 waived" */
static char *summary_text(const json_t *plan)
{
	json_int_t e = count_of(plan, "error"), w = count_of(plan, "warning");

	return xasprintf("%" JSON_INTEGER_FORMAT " error%s, %" JSON_INTEGER_FORMAT
			 " warning%s, %" JSON_INTEGER_FORMAT " info, %" JSON_INTEGER_FORMAT
			 " waived",
			 e, e == 1 ? "" : "s", w, w == 1 ? "" : "s", count_of(plan, "info"),
			 count_of(plan, "waived"));
}

/* "Checkov CKV_AWS_24, Trivy AVD-AWS-0107", or NULL; caller frees. */
static char *equivalents(const json_t *f, const char *quote)
{
	const char *c = json_string_value(json_object_get(f, "checkov"));
	const char *t = json_string_value(json_object_get(f, "trivy"));

	if (!c && !t)
		return NULL;
	return xasprintf("%s%s%s%s%s%s%s%s%s", c ? "Checkov " : "", c ? quote : "", c ? c : "",
			 c ? quote : "", c && t ? ", " : "", t ? "Trivy " : "", t ? quote : "",
			 t ? t : "", t ? quote : "");
}

/* ---- text ---- */

void audit_render_text(FILE *out, const json_t *plan, bool color)
{
	const json_t *findings = findings_of(plan), *f;
	char *sum;
	size_t i;

	if (!json_array_size(findings))
		return;
	sum = summary_text(plan);
	fprintf(out, "%sFindings%s: %s\n", color ? BOLD : "", color ? RESET : "", sum);
	free(sum);
	json_array_foreach(findings, i, f)
	{
		const json_t *waived = json_object_get(f, "waived");
		const char *sev = str(f, "severity");
		const char *c = !color			  ? ""
				: waived		  ? DIM
				: !strcmp(sev, "error")	  ? RED
				: !strcmp(sev, "warning") ? YELLOW
							  : CYAN;
		char *eq = equivalents(f, "");

		fprintf(out, "\n  %s%-8s%s %-14s  %s\n", c, waived ? "waived" : sev,
			color ? RESET : "", str(f, "rule"), str(f, "message"));
		fprintf(out, "           at %s:%" JSON_INTEGER_FORMAT ":%" JSON_INTEGER_FORMAT,
			str(f, "file"), json_integer_value(json_object_get(f, "line")),
			json_integer_value(json_object_get(f, "column")));
		if (json_is_string(json_object_get(f, "address")))
			fprintf(out, " (%s)", str(f, "address"));
		fputc('\n', out);
		if (waived) {
			const char *until = json_string_value(json_object_get(waived, "until"));

			fprintf(out, "           waived (%s) %s%s: %s\n", sev,
				until ? "until " : "with no end date", until ? until : "",
				str(waived, "reason"));
		} else {
			fprintf(out, "           fix: %s\n", str(f, "fix"));
		}
		if (eq)
			fprintf(out, "           same as %s\n", eq);
		free(eq);
	}
	fputc('\n', out);
}

/* ---- Markdown ---- */

/* Text safe in a table cell: pipes, markup and line breaks neutralised. */
static void md_cell(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else if (strchr("|\\`*_[]<>#~", *s))
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

/* A code span: backticks cannot be escaped inside one, so they become quotes. */
static void md_code(FILE *out, const char *s)
{
	fputc('`', out);
	for (; *s; s++) {
		if (*s == '`')
			fputc('\'', out);
		else if (*s == '|')
			fputs("\\|", out);
		else
			fputc(*s, out);
	}
	fputc('`', out);
}

void audit_render_markdown(FILE *out, const json_t *plan)
{
	const json_t *findings = findings_of(plan), *f;
	char *sum;
	size_t i;

	if (!findings)
		return;
	if (!json_array_size(findings)) {
		/* A reviewer reads "none" differently from a plan that was not audited. */
		fprintf(out,
			"### Findings\n\nNone: no rule of kiln-rules(7) fired (%zu rules).\n\n",
			audit_nrules);
		return;
	}
	sum = summary_text(plan);
	fprintf(out, "### Findings\n\n%s%s%s\n\n", count_of(plan, "error") ? "**" : "", sum,
		count_of(plan, "error") ? "**" : "");
	free(sum);
	fputs("| Severity | Rule | Resource | Where | Finding |\n"
	      "| --- | --- | --- | --- | --- |\n",
	      out);
	json_array_foreach(findings, i, f)
	{
		const char *sev = str(f, "severity");
		char *where = xasprintf("%s:%" JSON_INTEGER_FORMAT, str(f, "file"),
					json_integer_value(json_object_get(f, "line")));

		if (json_object_get(f, "waived"))
			fprintf(out, "| waived (%s) | ", sev);
		else if (strcmp(sev, "error") == 0)
			fputs("| **error** | ", out);
		else
			fprintf(out, "| %s | ", sev);
		md_code(out, str(f, "rule"));
		fputs(" | ", out);
		if (json_is_string(json_object_get(f, "address")))
			md_code(out, str(f, "address"));
		fputs(" | ", out);
		if (json_is_string(json_object_get(f, "spec"))) {
			md_code(out, str(f, "spec"));
			fputc(' ', out);
		}
		md_cell(out, where);
		fputs(" | ", out);
		md_cell(out, str(f, "message"));
		fputs(" |\n", out);
		free(where);
	}
	fputs("\n<details><summary>How to fix</summary>\n\n", out);
	json_array_foreach(findings, i, f)
	{
		const json_t *waived = json_object_get(f, "waived");
		char *eq = equivalents(f, "`");

		fputs("- **", out);
		md_cell(out, str(f, "rule"));
		fputs("**", out);
		if (json_is_string(json_object_get(f, "spec"))) {
			fputs(" ", out);
			md_code(out, str(f, "spec"));
		}
		fputs(": ", out);
		if (waived) {
			const char *until = json_string_value(json_object_get(waived, "until"));

			fprintf(out, "waived%s%s: ", until ? " until " : " with no end date",
				until ? until : "");
			md_cell(out, str(waived, "reason"));
		} else {
			md_cell(out, str(f, "fix"));
		}
		if (eq)
			fprintf(out, " (same as %s)", eq);
		fputc('\n', out);
		free(eq);
	}
	fputs("\n</details>\n\n", out);
}

/* ---- SARIF ---- */

static const char *sarif_level(const char *severity)
{
	return strcmp(severity, "error") == 0	  ? "error"
	       : strcmp(severity, "warning") == 0 ? "warning"
						  : "note";
}

/* A path as a URI reference: relative stays relative, absolute becomes file://. */
static char *path_uri(const char *path)
{
	struct strbuf sb = {0};
	const unsigned char *p;

	if (path[0] == '/')
		sb_adds(&sb, "file://");
	for (p = (const unsigned char *)path; *p; p++) {
		if (isalnum(*p) || strchr("-._~/", *p))
			sb_addc(&sb, (char)*p);
		else
			sb_addf(&sb, "%%%02X", *p);
	}
	return sb_detach(&sb);
}

/* PATH made absolute: resolved when it exists, else joined to the working directory. */
static char *path_absolute(const char *path)
{
	char *real = realpath(path, NULL), cwd[PATH_MAX];

	if (real || path[0] == '/')
		return real ? real : xstrdup(path);
	return xasprintf("%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : "", path);
}

/* DIR + "/" unless it ends with one already. */
static char *with_slash(char *dir)
{
	char *s;

	if (*dir && dir[strlen(dir) - 1] == '/')
		return dir;
	s = xasprintf("%s/", dir);
	free(dir);
	return s;
}

static bool has_git(const char *dir)
{
	char *git = xasprintf("%s.git", dir);
	struct stat st;
	bool yes = stat(git, &st) == 0;

	free(git);
	return yes;
}

static bool path_under(const char *path, const char *dir)
{
	return strncmp(path, dir, strlen(dir)) == 0;
}

char *audit_source_root(const char *spec)
{
	char *abs = path_absolute(spec), *dir = with_slash(path_absolute(".")), *up, *cut;

	/* The repository a code-scanning upload is for: the nearest .git above the spec. */
	up = xstrdup(abs);
	while ((cut = strrchr(up, '/')) != NULL) {
		cut[1] = '\0';
		if (has_git(up)) {
			free(abs);
			free(dir);
			return up;
		}
		*cut = '\0';
	}
	free(up);
	/* No repository: the working directory, or the spec's own directory. */
	if (!path_under(abs, dir)) {
		free(dir);
		cut = strrchr(abs, '/');
		cut[1] = '\0';
		return abs;
	}
	free(abs);
	return dir;
}

/* A result's artifactLocation: relative to root with its uriBaseId, or file:// outside it. */
static json_t *sarif_artifact(const char *file, const char *root)
{
	char *abs = path_absolute(file), *uri;
	json_t *loc;

	if (path_under(abs, root)) {
		uri = path_uri(abs + strlen(root));
		loc = json_pack("{s:s, s:s}", "uri", uri, "uriBaseId", SARIF_SRCROOT);
	} else {
		uri = path_uri(abs);
		loc = json_pack("{s:s}", "uri", uri);
	}
	free(uri);
	free(abs);
	return loc;
}

/* A rule's SARIF name: its title in PascalCase ("SshIsOpenToTheWorld"), never its id. */
static char *rule_name(const char *title)
{
	struct strbuf sb = {0};
	const unsigned char *p;
	bool word_start = true;

	for (p = (const unsigned char *)title; *p; p++) {
		/* An apostrophe is inside a word: "workload's" reads Workloads, not WorkloadS. */
		if (*p == '\'')
			continue;
		if (!isalnum(*p)) {
			word_start = true;
			continue;
		}
		sb_addc(&sb, word_start ? (char)toupper(*p) : (char)*p);
		word_start = false;
	}
	return sb_detach(&sb);
}

static json_t *sarif_rule(const struct audit_rule *r)
{
	json_t *props = json_pack("{s:[s], s:s}", "tags", "security", "security-severity",
				  strcmp(r->severity, "error") == 0	? "8.0"
				  : strcmp(r->severity, "warning") == 0 ? "5.0"
									: "2.0");
	char *help = xasprintf("%s Fix: %s", r->why, r->fix);
	char *name = rule_name(r->title);
	char *help_uri = xasprintf("%s#%s", AUDIT_INFORMATION_URI, r->id);
	json_t *rule;

	if (r->checkov)
		json_object_set_new(props, "checkov", json_string(r->checkov));
	if (r->trivy)
		json_object_set_new(props, "trivy", json_string(r->trivy));
	rule =
	    json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:s, s:{s:s}, s:{s:s}, s:o}", "id", r->id,
		      "name", name, "shortDescription", "text", r->title, "fullDescription", "text",
		      r->why, "helpUri", help_uri, "help", "text", help, "defaultConfiguration",
		      "level", sarif_level(r->severity), "properties", props);
	free(help);
	free(name);
	free(help_uri);
	return rule;
}

static json_t *sarif_result(const json_t *f, const char *root)
{
	const char *rule = str(f, "rule");
	const json_t *waived = json_object_get(f, "waived");
	json_t *loc, *res, *region = json_object();
	size_t i;

	if (json_integer_value(json_object_get(f, "line")) > 0) {
		json_object_set(region, "startLine", json_object_get(f, "line"));
		json_object_set(region, "startColumn", json_object_get(f, "column"));
	}
	loc = json_pack("{s:{s:o}}", "physicalLocation", "artifactLocation",
			sarif_artifact(str(f, "file"), root));
	if (json_object_size(region))
		json_object_set(json_object_get(loc, "physicalLocation"), "region", region);
	if (json_is_string(json_object_get(f, "address")))
		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:s, s:s}]", "fullyQualifiedName",
					      str(f, "address"), "kind", "resource"));
	res = json_pack("{s:s, s:{s:s}, s:[o], s:{s:s, s:s}}", "ruleId", rule, "message", "text",
			str(f, "message"), "locations", loc, "properties", "spec", str(f, "spec"),
			"fix", str(f, "fix"));
	json_object_set_new(res, "level", json_string(sarif_level(str(f, "severity"))));
	for (i = 0; i < audit_nrules; i++)
		if (strcmp(audit_rules[i].id, rule) == 0)
			json_object_set_new(res, "ruleIndex", json_integer((json_int_t)i));
	if (waived) {
		const char *until = json_string_value(json_object_get(waived, "until"));
		char *why = xasprintf("%s (waived %s%s)", str(waived, "reason"),
				      until ? "until " : "with no end date", until ? until : "");

		json_object_set_new(
		    res, "suppressions",
		    json_pack("[{s:s, s:s}]", "kind", "external", "justification", why));
		free(why);
	}
	json_decref(region);
	return res;
}

json_t *audit_sarif(const json_t *plan, const char *root)
{
	json_t *rules = json_array(), *results = json_array(), *log;
	char *base = root ? with_slash(xstrdup(root)) : with_slash(path_absolute("."));
	char *base_uri = path_uri(base);
	const json_t *f;
	size_t i;

	for (i = 0; i < audit_nrules; i++)
		json_array_append_new(rules, sarif_rule(&audit_rules[i]));
	json_array_foreach(findings_of(plan), i, f)
	    json_array_append_new(results, sarif_result(f, base));
	/* Paths relative to a named base (SARIF2016): code scanning maps it to the repository. */
	log =
	    json_pack("{s:s, s:s, s:[{s:{s:{s:s, s:s, s:s, s:o}}, s:{s:{s:s, s:{s:s}}}, s:o}]}",
		      "$schema", "https://json.schemastore.org/sarif-2.1.0.json", "version",
		      "2.1.0", "runs", "tool", "driver", "name", "kiln", "version", KILN_VERSION,
		      "informationUri", AUDIT_INFORMATION_URI, "rules", rules, "originalUriBaseIds",
		      SARIF_SRCROOT, "uri", base_uri, "description", "text",
		      "the repository holding the spec (the nearest directory above it with .git); "
		      "else the working directory, or the spec's directory outside it",
		      "results", results);
	free(base);
	free(base_uri);
	return log;
}
