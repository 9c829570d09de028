/*
 * lineage.c - a run's code and data lineage (lineage.h).
 */
#include "lineage.h"

#include <git2.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util.h"

#define STATE_DIR ".kiln/"

static char *hex_digest(EVP_MD_CTX *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	struct strbuf sb = {0};

	if (EVP_DigestFinal_ex(ctx, md, &len) != 1)
		abort(); /* a fixed algorithm fails only when out of memory */
	sb_adds(&sb, "sha256:");
	for (unsigned int i = 0; i < len; i++)
		sb_addf(&sb, "%02x", md[i]);
	return sb_detach(&sb);
}

static EVP_MD_CTX *sha256_new(void)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		abort();
	return ctx;
}

char *lineage_digest(const void *data, size_t len)
{
	EVP_MD_CTX *ctx = sha256_new();
	char *d;

	EVP_DigestUpdate(ctx, data, len);
	d = hex_digest(ctx);
	EVP_MD_CTX_free(ctx);
	return d;
}

void lineage_code_release(struct lineage_code *c)
{
	free(c->commit);
	free(c->diff_digest);
	free(c->first);
	memset(c, 0, sizeof(*c));
}

struct walk {
	EVP_MD_CTX *ctx;
	struct lineage_code *out;
	const char *last; /* the delta the lines belong to */
};

static bool kiln_own(const git_diff_delta *d)
{
	const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;

	return p && strncmp(p, STATE_DIR, strlen(STATE_DIR)) == 0;
}

static int each_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
		     void *arg)
{
	struct walk *w = arg;
	const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;

	(void)h;
	if (kiln_own(d))
		return 0;
	if (w->last != path) {
		w->last = path;
		w->out->changed++;
		if (!w->out->first)
			w->out->first = xstrdup(path);
	}
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		EVP_DigestUpdate(w->ctx, &l->origin, 1);
	EVP_DigestUpdate(w->ctx, l->content, l->content_len);
	return 0;
}

static int git_fail(struct kiln_error *err, const char *what, const char *dir)
{
	const git_error *e = git_error_last();

	kiln_error_set(err, "cannot read the git repository at %s: %s: %s", dir, what,
		       e && e->message ? e->message : "unknown error");
	kiln_error_hint(err, "run kiln from a readable git work tree (git status there says what "
			     "is wrong)");
	return -1;
}

int lineage_code_read(const char *dir, struct lineage_code *out, struct kiln_error *err)
{
	git_repository *repo = NULL;
	git_object *head = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
	struct walk w = {0};
	int rc, ret = -1;

	memset(out, 0, sizeof(*out));
	git_libgit2_init();
	rc = git_repository_open_ext(&repo, dir, 0, NULL);
	if (rc == GIT_ENOTFOUND) {
		ret = 0;
		goto out;
	}
	if (rc < 0) {
		git_fail(err, "open", dir);
		goto out;
	}
	if (git_repository_is_bare(repo)) {
		ret = 0;
		goto out;
	}
	rc = git_revparse_single(&head, repo, "HEAD^{tree}");
	if (rc == 0)
		tree = (git_tree *)head;
	else if (rc != GIT_ENOTFOUND) {
		git_fail(err, "HEAD", dir);
		goto out;
	}
	if (tree) {
		git_oid oid;
		char hex[GIT_OID_HEXSZ + 1];

		if (git_reference_name_to_id(&oid, repo, "HEAD") < 0) {
			git_fail(err, "HEAD", dir);
			goto out;
		}
		out->commit = xstrdup(git_oid_tostr(hex, sizeof(hex), &oid));
	}
	opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
		     GIT_DIFF_SHOW_UNTRACKED_CONTENT;
	if (git_diff_tree_to_workdir_with_index(&diff, repo, tree, &opts) < 0) {
		git_fail(err, "diff", dir);
		goto out;
	}
	w.ctx = sha256_new();
	w.out = out;
	if (git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, each_line, &w) < 0) {
		git_fail(err, "diff", dir);
		goto out;
	}
	if (out->changed) {
		out->dirty = true;
		out->diff_digest = hex_digest(w.ctx);
	}
	ret = 0;
out:
	if (w.ctx)
		EVP_MD_CTX_free(w.ctx);
	git_diff_free(diff);
	git_object_free(head);
	git_repository_free(repo);
	if (ret < 0)
		lineage_code_release(out);
	return ret;
}

static int by_key(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;

	return strcmp(json_string_value(json_object_get(x, "key")),
		      json_string_value(json_object_get(y, "key")));
}

char *lineage_manifest_digest(const json_t *objects, uint64_t *count, uint64_t *bytes,
			      struct kiln_error *err)
{
	size_t n = json_array_size(objects);
	const json_t **v = xcalloc(n + 1, sizeof(*v));
	EVP_MD_CTX *ctx = NULL;
	char *d = NULL;

	*count = *bytes = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *o = json_array_get(objects, i);
		const json_t *size = json_object_get(o, "size");

		if (!json_is_string(json_object_get(o, "key")) || !json_is_integer(size) ||
		    json_integer_value(size) < 0 || !json_is_string(json_object_get(o, "etag"))) {
			kiln_error_set(err, "object %zu of the listing has no key, size or etag", i);
			goto out;
		}
		v[i] = o;
	}
	qsort(v, n, sizeof(*v), by_key);
	ctx = sha256_new();
	for (size_t i = 0; i < n; i++) {
		char *line = xasprintf("%s\t%lld\t%s\n", json_string_value(json_object_get(v[i], "key")),
				       (long long)json_integer_value(json_object_get(v[i], "size")),
				       json_string_value(json_object_get(v[i], "etag")));

		EVP_DigestUpdate(ctx, line, strlen(line));
		free(line);
		*bytes += (uint64_t)json_integer_value(json_object_get(v[i], "size"));
	}
	*count = n;
	d = hex_digest(ctx);
out:
	if (ctx)
		EVP_MD_CTX_free(ctx);
	free(v);
	return d;
}
