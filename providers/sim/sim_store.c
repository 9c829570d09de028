/*
 * sim_store.c - the sim's directory: the lock, ids, resource documents,
 * index markers, idempotency tokens and the GPU usage counter. The layout is
 * described in sim.c. Everything in the directory is treated as hostile:
 * files are opened without following links, sizes are bounded, and a
 * document that is not what the sim wrote is an error naming the file.
 */
#include "sim_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The largest file the sim reads: a node group of 10,000 instances fits. */
#define SIM_FILE_MAX (4 * 1024 * 1024)

/* Threads of one process share this; processes meet at the flock. */
static pthread_mutex_t sim_mutex = PTHREAD_MUTEX_INITIALIZER;

long long sim_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sim_random_hex(char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char buf[64];
	size_t i, got = 0;

	while (got < n) {
		size_t want = (n - got + 1) / 2;
		ssize_t r;

		if (want > sizeof(buf))
			want = sizeof(buf);
		r = getrandom(buf, want, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "kiln: the system random number generator failed\n");
			abort();
		}
		for (i = 0; i < (size_t)r * 2 && got < n; i++)
			out[got++] = hex[(buf[i / 2] >> (i % 2 ? 0 : 4)) & 15];
	}
	out[n] = '\0';
}

void sim_new_id(const char *prefix, char out[SIM_ID_MAX])
{
	char hex[SIM_ID_HEX + 1];

	sim_random_hex(hex, SIM_ID_HEX);
	snprintf(out, SIM_ID_MAX, "%s-%s", prefix, hex);
}

bool sim_id_ok(const char *id, const char *prefix)
{
	size_t pl = strlen(prefix), i;

	if (!id || strncmp(id, prefix, pl) != 0 || id[pl] != '-')
		return false;
	for (i = 0; i < SIM_ID_HEX; i++) {
		char c = id[pl + 1 + i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return id[pl + 1 + SIM_ID_HEX] == '\0';
}

/* --- paths and files --- */

/* A scope name as one safe path component: [A-Za-z0-9_-] kept, the rest %XX. */
static void path_escape(struct strbuf *sb, const char *s)
{
	if (!*s)
		sb_adds(sb, "%");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-')
			sb_addc(sb, (char)c);
		else
			sb_addf(sb, "%%%02X", c);
	}
}

static char *index_dir(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		       const char *type)
{
	struct strbuf sb = {0};

	sb_addf(&sb, "%s/idx/", ctx->dir);
	path_escape(&sb, cluster);
	sb_addc(&sb, '/');
	path_escape(&sb, workspace);
	sb_addf(&sb, "/%s", type);
	return sb_detach(&sb);
}

static char *doc_path(struct prov_ctx *ctx, const char *id)
{
	return xasprintf("%s/r/%s.json", ctx->dir, id);
}

/* FNV-1a: tokens are any text; the file holds the id, the document the token. */
static char *token_path(struct prov_ctx *ctx, const char *token)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const unsigned char *p;

	for (p = (const unsigned char *)token; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return xasprintf("%s/t/%016llx", ctx->dir, (unsigned long long)h);
}

static int mkdir_p(const char *path, struct kiln_error *err)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		{
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST) {
				kiln_error_set(err, "sim: cannot create %s: %s", p,
					       strerror(errno));
				ret = -1;
			}
			*s = c;
		}
		if (ret < 0 || *s == '\0')
			break;
	}
	free(p);
	return ret;
}

/* 0, PROV_NOTFOUND when absent, PROV_ERROR for anything that is not a small regular file. */
static int file_read(const char *path, char **buf, size_t *len, struct kiln_error *err)
{
	struct strbuf sb = {0};
	struct stat st;
	char chunk[16384];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	*buf = NULL;
	*len = 0;
	if (fd < 0 && errno == ENOENT)
		return PROV_NOTFOUND;
	if (fd < 0) {
		kiln_error_set(err, "sim: cannot read %s: %s", path,
			       errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return PROV_ERROR;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SIM_FILE_MAX) {
		const char *why = "it is larger than 4 MiB";

		if (fstat(fd, &st) < 0)
			why = strerror(errno);
		else if (!S_ISREG(st.st_mode))
			why = "it is not a regular file";
		kiln_error_set(err, "sim: cannot read %s: %s", path, why);
		close(fd);
		return PROV_ERROR;
	}
	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || sb.len + (size_t)r > SIM_FILE_MAX) {
			kiln_error_set(err, "sim: cannot read %s: %s", path,
				       r < 0 ? strerror(errno) : "it is larger than 4 MiB");
			sb_release(&sb);
			close(fd);
			return PROV_ERROR;
		}
		sb_add(&sb, chunk, (size_t)r);
	}
	close(fd);
	*len = sb.len;
	*buf = sb_detach(&sb);
	return PROV_OK;
}

/* Temporary file + rename: readers see the old file or the new one, never half. */
static int file_write(const char *path, const char *data, size_t len, struct kiln_error *err)
{
	char rnd[9];
	char *tmp;
	size_t off = 0;
	int fd, ret = PROV_ERROR;

	sim_random_hex(rnd, 8);
	tmp = xasprintf("%s.tmp-%ld-%s", path, (long)getpid(), rnd);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", tmp, strerror(errno));
		free(tmp);
		return PROV_ERROR;
	}
	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			kiln_error_set(err, "sim: cannot write %s: %s", tmp, strerror(errno));
			close(fd);
			goto out;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	ret = PROV_OK;
out:
	if (ret != PROV_OK)
		unlink(tmp);
	free(tmp);
	return ret;
}

static int json_write(const char *path, const json_t *doc, struct kiln_error *err)
{
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	struct strbuf sb = {0};
	int ret;

	if (!text) {
		kiln_error_set(err, "sim: cannot encode %s", path);
		return PROV_ERROR;
	}
	sb_adds(&sb, text);
	sb_addc(&sb, '\n');
	free(text);
	ret = file_write(path, sb.buf, sb.len, err);
	sb_release(&sb);
	return ret;
}

/* --- the lock --- */

int sim_lock(struct prov_ctx *ctx, struct sim_lock *lk, struct kiln_error *err)
{
	char *path;

	lk->fd = -1;
	pthread_mutex_lock(&sim_mutex);
	if (mkdir_p(ctx->dir, err) < 0)
		goto fail;
	path = xasprintf("%s/lock", ctx->dir);
	lk->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lk->fd < 0) {
		kiln_error_set(err, "sim: cannot open the lock file %s: %s", path, strerror(errno));
		free(path);
		goto fail;
	}
	while (flock(lk->fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		kiln_error_set(err, "sim: cannot lock %s: %s", path, strerror(errno));
		free(path);
		close(lk->fd);
		lk->fd = -1;
		goto fail;
	}
	free(path);
	return PROV_OK;
fail:
	pthread_mutex_unlock(&sim_mutex);
	return PROV_ERROR;
}

void sim_unlock(struct sim_lock *lk)
{
	if (lk->fd < 0)
		return;
	close(lk->fd); /* releases the flock */
	lk->fd = -1;
	pthread_mutex_unlock(&sim_mutex);
}

/* --- documents --- */

const char *sim_doc_str(const json_t *doc, const char *section, const char *key)
{
	const json_t *o = section ? json_object_get(doc, section) : doc;

	return json_string_value(json_object_get(o, key));
}

/* What is wrong with a document that claims to be id, or NULL. */
static const char *doc_problem(const json_t *doc, const struct sim_kind *k, const char *id,
			       char *buf, size_t len)
{
	const char *type = sim_doc_str(doc, NULL, "type");
	const char *status = sim_doc_str(doc, NULL, "status");
	const char *did = sim_doc_str(doc, NULL, "id");
	const json_t *sim = json_object_get(doc, "sim");

	if (!json_is_object(doc))
		return "expected a JSON object";
	if (!type)
		return "\"type\" is missing or not a string";
	if (strcmp(type, k->type) != 0) {
		snprintf(buf, len, "\"type\" is '%s', but the id is a %s id", type, k->type);
		return buf;
	}
	if (!did || strcmp(did, id) != 0)
		return "\"id\" is missing or is not the file's name";
	if (!status ||
	    (strcmp(status, "pending") && strcmp(status, "ready") && strcmp(status, "deleting")))
		return "\"status\" must be \"pending\", \"ready\" or \"deleting\"";
	if (!json_is_object(json_object_get(doc, "attrs")))
		return "\"attrs\" is missing or not an object";
	if (!json_is_object(json_object_get(doc, "tags")))
		return "\"tags\" is missing or not an object";
	if (sim && !json_is_object(sim))
		return "\"sim\" is not an object";
	return NULL;
}

int sim_doc_load(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t **out,
		 struct kiln_error *err)
{
	char *path = doc_path(ctx, id), *buf = NULL, why[160];
	const char *problem;
	json_error_t jerr;
	json_t *doc = NULL;
	size_t len;
	int rc;

	*out = NULL;
	rc = file_read(path, &buf, &len, err);
	if (rc == PROV_NOTFOUND)
		kiln_error_set(err, "sim: NotFound (simulated): there is no %s with id %s", k->type,
			       id);
	if (rc != PROV_OK)
		goto out;
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	rc = PROV_ERROR;
	if (!doc) {
		kiln_error_set(err, "sim: %s is not valid JSON (line %d, column %d: %s)", path,
			       jerr.line, jerr.column, jerr.text);
		kiln_error_hint(err, "fix the file or remove it; the sim wrote it as JSON");
		goto out;
	}
	problem = doc_problem(doc, k, id, why, sizeof(why));
	if (problem) {
		kiln_error_set(err, "sim: %s is not a sim resource document: %s", path, problem);
		kiln_error_hint(err, "fix the file or remove it");
		json_decref(doc);
		goto out;
	}
	*out = doc;
	rc = PROV_OK;
out:
	free(buf);
	free(path);
	return rc;
}

int sim_doc_save(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err)
{
	char *dir = xasprintf("%s/r", ctx->dir);
	char *path = doc_path(ctx, sim_doc_str(doc, NULL, "id"));
	int rc = mkdir_p(dir, err) < 0 ? PROV_ERROR : json_write(path, doc, err);

	free(path);
	free(dir);
	return rc;
}

int sim_doc_forget(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err)
{
	const char *id = sim_doc_str(doc, NULL, "id");
	const char *cluster = sim_doc_str(doc, "sim", "cluster");
	const char *workspace = sim_doc_str(doc, "sim", "workspace");
	const char *token = sim_doc_str(doc, "sim", "token");
	char *path = doc_path(ctx, id);
	int rc = PROV_OK;

	if (unlink(path) < 0 && errno != ENOENT) {
		kiln_error_set(err, "sim: cannot remove %s: %s", path, strerror(errno));
		rc = PROV_ERROR;
	}
	free(path);
	if (cluster && workspace) {
		char *dir = index_dir(ctx, cluster, workspace, sim_doc_str(doc, NULL, "type"));

		path = xasprintf("%s/%s", dir, id);
		unlink(path);
		free(path);
		free(dir);
	}
	if (token) {
		char tid[SIM_ID_MAX];

		if (sim_token_find(ctx, token, tid) == PROV_OK && strcmp(tid, id) == 0) {
			path = token_path(ctx, token);
			unlink(path);
			free(path);
		}
	}
	return rc;
}

json_t *sim_doc_live(const json_t *doc)
{
	const json_t *tags = json_object_get(doc, "tags");
	const char *addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));

	/* Shared, not copied: every caller drops the document right after (10,000-resource lists).
	 */
	return json_pack(
	    "{s:O, s:O, s:o, s:O, s:O, s:O}", "type", json_object_get(doc, "type"), "id",
	    json_object_get(doc, "id"), "address", addr ? json_string(addr) : json_null(), "status",
	    json_object_get(doc, "status"), "attrs", json_object_get(doc, "attrs"), "tags", tags);
}

/* --- the index --- */

int sim_index_add(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		  const char *type, const char *id, struct kiln_error *err)
{
	char *dir = index_dir(ctx, cluster, workspace, type), *path;
	int fd, rc = PROV_OK;

	if (mkdir_p(dir, err) < 0) {
		free(dir);
		return PROV_ERROR;
	}
	path = xasprintf("%s/%s", dir, id);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", path, strerror(errno));
		rc = PROV_ERROR;
	} else {
		close(fd);
	}
	free(path);
	free(dir);
	return rc;
}

static int str_qsort(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int sim_index_ids(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		  const struct sim_kind *k, char ***ids, size_t *n, struct kiln_error *err)
{
	char *dir = index_dir(ctx, cluster, workspace, k->type);
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t cap = 0;

	*ids = NULL;
	*n = 0;
	if (!d && errno != ENOENT) {
		kiln_error_set(err, "sim: cannot list %s: %s", dir, strerror(errno));
		free(dir);
		return PROV_ERROR;
	}
	while (d && (e = readdir(d)) != NULL)
		if (sim_id_ok(e->d_name, k->prefix))
			*ARRAY_PUSH(*ids, *n, cap) = xstrdup(e->d_name);
	if (d)
		closedir(d);
	free(dir);
	*ARRAY_PUSH(*ids, *n, cap) = NULL;
	(*n)--;
	qsort(*ids, *n, sizeof(**ids), str_qsort);
	return PROV_OK;
}

void sim_ids_free(char **ids)
{
	size_t i;

	for (i = 0; ids && ids[i]; i++)
		free(ids[i]);
	free(ids);
}

/* --- tokens --- */

int sim_token_find(struct prov_ctx *ctx, const char *token, char id[SIM_ID_MAX])
{
	char *path = token_path(ctx, token), *buf = NULL;
	struct kiln_error ignored;
	size_t len;
	int rc = file_read(path, &buf, &len, &ignored);

	free(path);
	if (rc != PROV_OK || len == 0 || len >= SIM_ID_MAX) {
		free(buf);
		return PROV_NOTFOUND;
	}
	if (buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	snprintf(id, SIM_ID_MAX, "%s", buf);
	free(buf);
	return PROV_OK;
}

int sim_token_save(struct prov_ctx *ctx, const char *token, const char *id, struct kiln_error *err)
{
	char *dir = xasprintf("%s/t", ctx->dir), *path = token_path(ctx, token);
	char *line = xasprintf("%s\n", id);
	int rc = mkdir_p(dir, err) < 0 ? PROV_ERROR : file_write(path, line, strlen(line), err);

	free(line);
	free(path);
	free(dir);
	return rc;
}

/* --- GPU usage --- */

int sim_usage_load(struct prov_ctx *ctx, json_t **out, struct kiln_error *err)
{
	char *path = xasprintf("%s/usage.json", ctx->dir), *buf = NULL;
	json_error_t jerr;
	json_t *usage = NULL, *zones, *n;
	const char *model, *zone;
	size_t len;
	int rc = file_read(path, &buf, &len, err);

	*out = NULL;
	if (rc == PROV_NOTFOUND) {
		*out = json_object();
		rc = PROV_OK;
		goto out;
	}
	if (rc != PROV_OK)
		goto out;
	rc = PROV_ERROR;
	usage = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(usage))
		goto bad;
	json_object_foreach(usage, model, zones)
	{
		if (!json_is_object(zones))
			goto bad;
		json_object_foreach(zones, zone, n)
		{
			if (!json_is_integer(n) || json_integer_value(n) < 0)
				goto bad;
		}
	}
	*out = usage;
	usage = NULL;
	rc = PROV_OK;
	goto out;
bad:
	kiln_error_set(err,
		       "sim: %s is not a GPU usage counter: expected {\"MODEL\": {\"ZONE\": "
		       "NODES}}",
		       path);
	kiln_error_hint(err, "remove it only when no node group is in the sim directory");
out:
	json_decref(usage);
	free(buf);
	free(path);
	return rc;
}

int sim_usage_save(struct prov_ctx *ctx, const json_t *usage, struct kiln_error *err)
{
	char *path = xasprintf("%s/usage.json", ctx->dir);
	int rc = json_write(path, usage, err);

	free(path);
	return rc;
}
