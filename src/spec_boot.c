/*
 * spec_boot.c - what a node does at boot, as the spec says it: the
 * bootstrap: lists (top level and per compute group) and a group's health:
 * section. Shape only; providers/bootstrap.c turns them into user data.
 */
#include "spec.h"
#include "spec_load.h"

#include <stdlib.h>
#include <string.h>

const char *const spec_step_keys[] = {"run", "file", "content", "mode"};
const char *const spec_health_keys[] = {"gpu"};

static const char step_forms[] = "write a command as a string, {run: CMD}, or {file: PATH, "
				 "content: TEXT, mode: \"0644\"}";

/* mode: three or four octal digits. */
static bool mode_ok(const char *m)
{
	size_t n = strlen(m), i;

	if (n < 3 || n > 4)
		return false;
	for (i = 0; i < n; i++)
		if (m[i] < '0' || m[i] > '7')
			return false;
	return true;
}

/*
 * A command or a file's path stays text in the user data (the boot script
 * names the path, and logs the command's first line): refuse what YAML or
 * a shell line cannot carry as it is (str_text_flaw_find). A file's content is
 * carried encoded, byte for byte, and takes any byte but NUL.
 */
static bool step_text_ok(struct loader *ld, const struct ynode *n, const char *path,
			 const char *text, bool command)
{
	struct text_flaw f;
	struct diag *dg;

	if (!text || !str_text_flaw_find(text, command, &f))
		return true;
	dg = spec_err(ld, n,
		      "%s holds %s at byte %zu; a %s must be UTF-8 text with no control character "
		      "but %s",
		      path, f.name, f.byte, command ? "command" : "path",
		      command ? "tab and newline" : "tab");
	if (command)
		diag_hint(dg,
			  "remove it; bytes "
			  "that are not text go in a file step's content:, which reaches the node "
			  "byte for byte");
	else
		diag_hint(dg, "write where the file goes on the node, like /etc/profile.d/team.sh");
	return false;
}

/* One {run} or {file, content, mode} mapping; false when it was reported. */
static bool load_step_map(struct loader *ld, const struct ynode *n, const char *path,
			  struct spec_step *st)
{
	bool run = ydoc_get(n, "run") != NULL, file = ydoc_get(n, "file") != NULL, ok;
	char *sub;

	ok = spec_check_keys(ld, n, "in a bootstrap entry", spec_step_keys,
			     ARRAY_SIZE(spec_step_keys));
	if (run == file) {
		diag_hint(spec_err(ld, n, "%s must have either run or file", path), "%s",
			  step_forms);
		return false;
	}
	if (run) {
		if (ydoc_get(n, "content") || ydoc_get(n, "mode")) {
			diag_hint(spec_err(ld,
					   ydoc_key(n, ydoc_get(n, "content") ? "content" : "mode"),
					   "%s: content and mode go with file, not run", path),
				  "%s", step_forms);
			return false;
		}
		st->kind = STEP_RUN;
		sub = xasprintf("%s.run", path);
		ok &= spec_get_string(ld, n, "run", sub, true, &st->run) == GOT_OK &&
		      step_text_ok(ld, ydoc_get(n, "run"), sub, st->run, true);
		free(sub);
		return ok;
	}
	st->kind = STEP_FILE;
	sub = xasprintf("%s.file", path);
	if (spec_get_string(ld, n, "file", sub, true, &st->path) == GOT_OK &&
	    (st->path[0] != '/' || strstr(st->path, "/../") || strchr(st->path, '\n'))) {
		diag_hint(spec_err(ld, ydoc_get(n, "file"), "%s: '%s' is not an absolute path", sub,
				   st->path),
			  "write where the file goes on the node, like /etc/profile.d/team.sh");
		ok = false;
	} else if (!st->path || !step_text_ok(ld, ydoc_get(n, "file"), sub, st->path, false)) {
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.content", path);
	ok &= spec_get_string(ld, n, "content", sub, true, &st->content) == GOT_OK;
	free(sub);
	sub = xasprintf("%s.mode", path);
	if (spec_get_string(ld, n, "mode", sub, false, &st->mode) == GOT_BAD) {
		ok = false;
	} else if (st->mode && !mode_ok(st->mode)) {
		diag_hint(spec_err(ld, ydoc_get(n, "mode"),
				   "%s must be an octal file mode, got '%s'", sub, st->mode),
			  "quote it so YAML keeps the digits: mode: \"0644\"");
		ok = false;
	}
	if (!st->mode)
		st->mode = xstrdup("0644");
	free(sub);
	return ok;
}

void spec_load_bootstrap(struct loader *ld, const struct ynode *list, const char *path,
			 struct spec_step **out, size_t *n)
{
	size_t i;

	*out = NULL;
	*n = 0;
	if (!list || ydoc_is_null(list))
		return;
	if (list->kind != YNODE_SEQ) {
		diag_hint(spec_err(ld, list, "%s must be a list of steps, got %s", path,
				   ydoc_describe(list)),
			  "%s, one per list item", step_forms);
		return;
	}
	*out = xcalloc(list->n + 1, sizeof(**out));
	for (i = 0; i < list->n; i++) {
		const struct ynode *item = list->vals[i];
		char *ipath = xasprintf("%s[%zu]", path, i);
		struct spec_step *st = &(*out)[*n];
		bool ok;

		memset(st, 0, sizeof(*st));
		st->node = item;
		if (item->kind == YNODE_SCALAR && !ydoc_is_null(item)) {
			st->kind = STEP_RUN;
			st->run = spec_scalar(ld, item, ipath);
			ok = st->run != NULL && step_text_ok(ld, item, ipath, st->run, true);
		} else if (item->kind == YNODE_MAP) {
			ok = load_step_map(ld, item, ipath, st);
		} else {
			diag_hint(spec_err(ld, item, "%s must be a command or a mapping, got %s",
					   ipath, ydoc_describe(item)),
				  "%s", step_forms);
			ok = false;
		}
		free(ipath);
		if (ok)
			(*n)++;
		else
			spec_steps_free(st, 1);
	}
}

void spec_load_health(struct loader *ld, const struct ynode *g, const char *gpath,
		      struct spec_group *grp)
{
	const struct ynode *h = ydoc_get(g, "health");
	char *path = xasprintf("%s.health", gpath), *sub;
	int gpu = HEALTH_GPU_QUICK;

	grp->health_gpu = HEALTH_GPU_QUICK;
	grp->health_node = h;
	if (!h || !spec_expect_map(ld, h, path))
		goto out;
	spec_check_keys(ld, h, "in a compute group's health", spec_health_keys,
			ARRAY_SIZE(spec_health_keys));
	sub = xasprintf("%s.gpu", path);
	if (spec_get_enum(ld, h, "gpu", sub, false, spec_health_gpu_names, 2, &gpu) == GOT_OK)
		grp->health_gpu = (enum spec_health_gpu)gpu;
	free(sub);
out:
	free(path);
}

void spec_steps_free(struct spec_step *steps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(steps[i].run);
		free(steps[i].path);
		free(steps[i].content);
		free(steps[i].mode);
		memset(&steps[i], 0, sizeof(steps[i]));
	}
}
