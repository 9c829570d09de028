/*
 * sim_store.c - the sim's directory: the lock, ids, resource documents,
 * index markers, idempotency tokens, address entries and the GPU usage
 * counter. The layout is described in sim.c. Everything in the directory is
 * treated as hostile: files are opened without following links, a file
 * found at a temporary name is replaced, never written through, sizes are
 * bounded, and a document that is not what the sim wrote is an error naming
 * the file.
 *
 * Creating inodes is what costs most on ext4, so a create makes two (its
 * document and one record under three names) and a change of usage.json
 * makes none; directories are made when a write finds them missing.
 */
#include "sim_int.h"
#include "jsonw.h"
#include "jsonr.h"

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
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

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

/* DIR/TOP/CLUSTER/WORKSPACE[/NAME], each name escaped but the first. */
static char *scope_path(struct prov_ctx *ctx, const char *top, const char *cluster,
			const char *workspace, const char *name)
{
	struct strbuf sb = {0};

	sb_addf(&sb, "%s/%s/", ctx->dir, top);
	path_escape(&sb, cluster);
	sb_addc(&sb, '/');
	path_escape(&sb, workspace);
	if (name) {
		sb_addc(&sb, '/');
		path_escape(&sb, name);
	}
	return sb_detach(&sb);
}

static char *index_dir(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		       const char *type)
{
	return scope_path(ctx, "idx", cluster, workspace, type);
}

static char *marker_path(struct prov_ctx *ctx, const char *cluster, const char *workspace,
			 const char *type, const char *id)
{
	char *dir = index_dir(ctx, cluster, workspace, type);
	char *path = xasprintf("%s/%s", dir, id);

	free(dir);
	return path;
}

static char *address_path(struct prov_ctx *ctx, const char *cluster, const char *workspace,
			  const char *address)
{
	return scope_path(ctx, "a", cluster, workspace, address);
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

/*
 * The directories of path, made when a call found them missing (ENOENT):
 * directories are made once, not checked on every write.
 */
static int mkdir_parent(const char *path, struct kiln_error *err)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int rc = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		rc = mkdir_p(dir, err);
	}
	free(dir);
	return rc;
}

/*
 * A new file at path for writing (O_EXCL, never following a link): what was
 * left there (a crashed writer's temporary file) is removed first; missing
 * directories are made. -1 with err set.
 */
static int open_new(const char *path, struct kiln_error *err)
{
	int tries;

	for (tries = 0;; tries++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
		int e = errno;

		if (fd >= 0)
			return fd;
		if (tries < 2 && e == ENOENT && mkdir_parent(path, err) < 0)
			return -1;
		if (tries < 2 && e == EEXIST && (unlink(path) == 0 || errno == ENOENT))
			continue;
		if (tries == 2 || e != ENOENT) {
			kiln_error_set(err, "sim: cannot write %s: %s", path, strerror(e));
			return -1;
		}
	}
}

static int write_all(int fd, const char *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(fd, data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* 0, PROV_NOTFOUND when absent, PROV_ERROR for anything that is not a small regular file. */
static int file_read(const char *path, char **buf, size_t *len, struct kiln_error *err)
{
	struct stat st;
	size_t cap, got = 0;
	char *b;
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
	/*
	 * Ask for one byte more than the file holds: a read that stops short at
	 * exactly its size has met the end, so a whole document is one read.
	 */
	cap = (size_t)st.st_size + 1;
	b = xmalloc(cap + 1);
	for (;;) {
		size_t want = cap - got;
		ssize_t r = read(fd, b + got, want);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || got + (size_t)r > SIM_FILE_MAX) {
			kiln_error_set(err, "sim: cannot read %s: %s", path,
				       r < 0 ? strerror(errno) : "it is larger than 4 MiB");
			free(b);
			close(fd);
			return PROV_ERROR;
		}
		got += (size_t)r;
		if (r == 0 || (got == (size_t)st.st_size && (size_t)r < want))
			break;
		if (got == cap) { /* it grew since fstat */
			cap = cap * 2 > SIM_FILE_MAX + 1 ? SIM_FILE_MAX + 1 : cap * 2;
			b = xrealloc(b, cap + 1);
		}
	}
	close(fd);
	b[got] = '\0';
	*len = got;
	*buf = b;
	return PROV_OK;
}

/*
 * Temporary file + rename: readers see the old file or the new one, never
 * half. Every writer holds the lock, so each file has one temporary name,
 * PATH.tmp, and what a crash left there is overwritten by the next write.
 */
static int file_write(const char *path, const char *data, size_t len, struct kiln_error *err)
{
	char *tmp = xasprintf("%s.tmp", path);
	int fd = open_new(tmp, err), ret = PROV_ERROR;

	if (fd < 0) {
		free(tmp);
		return PROV_ERROR;
	}
	if (write_all(fd, data, len) < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		goto out;
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

/*
 * file_write for a file only ever read under the lock (usage.json): the
 * temporary file and the file trade places (RENAME_EXCHANGE), so the old
 * content becomes the next write's temporary file and no inode is made or
 * freed per write. Where the file system cannot exchange, a plain rename.
 */
static int file_swap(const char *path, const char *data, size_t len, struct kiln_error *err)
{
	char *tmp = xasprintf("%s.tmp", path);
	struct stat st = {0};
	int fd = -1, ret = PROV_ERROR;

	if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
		fd = open(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		st.st_size = 0;
		fd = open_new(tmp, err);
	}
	if (fd < 0) {
		free(tmp);
		return PROV_ERROR;
	}
	/* Overwrite, then cut: ext4 flushes a file truncated to 0 when it is closed. */
	if (write_all(fd, data, len) < 0 ||
	    (st.st_size > (off_t)len && ftruncate(fd, (off_t)len) < 0)) {
		kiln_error_set(err, "sim: cannot write %s: %s", tmp, strerror(errno));
		close(fd);
		goto out;
	}
	if (close(fd) < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) < 0 &&
	    rename(tmp, path) < 0) {
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

/* doc's file text (sorted keys, a newline at the end), or NULL and err set. */
static char *json_text(const char *path, const json_t *doc, size_t *len, struct kiln_error *err)
{
	char *text = jsonw_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSONW_NEWLINE, len);

	if (!text)
		kiln_error_set(err, "sim: cannot encode %s", path);
	return text;
}

static int json_write(const char *path, const json_t *doc, struct kiln_error *err)
{
	size_t len;
	char *text = json_text(path, doc, &len, err);
	int ret = text ? file_write(path, text, len, err) : PROV_ERROR;

	free(text);
	return ret;
}

/* --- the lock --- */

int sim_lock(struct prov_ctx *ctx, struct sim_lock *lk, struct kiln_error *err)
{
	char *path;

	lk->fd = -1;
	pthread_mutex_lock(&sim_mutex);
	path = xasprintf("%s/lock", ctx->dir);
	lk->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lk->fd < 0 && errno == ENOENT) { /* the first change makes the directory */
		if (mkdir_p(ctx->dir, err) < 0) {
			free(path);
			goto fail;
		}
		lk->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	}
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
	doc = jsonr_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
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
	char *path = doc_path(ctx, sim_doc_str(doc, NULL, "id"));
	int rc = json_write(path, doc, err);

	free(path);
	return rc;
}

/* 0 and the id a record (token or address entry: "ID\n") names, or PROV_NOTFOUND. */
static int record_read(const char *path, char id[SIM_ID_MAX])
{
	struct kiln_error ignored;
	char *buf = NULL;
	size_t len;
	int rc = file_read(path, &buf, &len, &ignored);

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

/* Remove the record at path when it names id. */
static void record_forget(const char *path, const char *id)
{
	char rid[SIM_ID_MAX];

	if (record_read(path, rid) == PROV_OK && strcmp(rid, id) == 0)
		unlink(path);
}

int sim_doc_forget(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err)
{
	const char *id = sim_doc_str(doc, NULL, "id");
	const char *cluster = sim_doc_str(doc, "sim", "cluster");
	const char *workspace = sim_doc_str(doc, "sim", "workspace");
	const char *token = sim_doc_str(doc, "sim", "token");
	const char *address = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
	char *path = doc_path(ctx, id);
	int rc = PROV_OK;

	if (unlink(path) < 0 && errno != ENOENT) {
		kiln_error_set(err, "sim: cannot remove %s: %s", path, strerror(errno));
		rc = PROV_ERROR;
	}
	free(path);
	if (cluster && workspace) {
		path = marker_path(ctx, cluster, workspace, sim_doc_str(doc, NULL, "type"), id);
		unlink(path);
		free(path);
		if (address) {
			path = address_path(ctx, cluster, workspace, address);
			record_forget(path, id);
			free(path);
		}
	}
	if (token) {
		path = token_path(ctx, token);
		record_forget(path, id);
		free(path);
	}
	return rc;
}

json_t *sim_doc_live(const json_t *doc)
{
	const json_t *tags = json_object_get(doc, "tags");
	const char *addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));

	const char *type = json_string_value(json_object_get(doc, "type"));
	json_t *attrs = json_object_get(doc, "attrs");

	/* A node group's nodes are computed as of now, beside a copy of its attrs. */
	if (type && strcmp(type, "sim_node_group") == 0 && json_is_object(attrs)) {
		attrs = json_copy(attrs);
		json_object_set_new(attrs, "nodes", sim_nodes_view(doc));
	} else {
		json_incref(attrs);
	}
	/* Shared, not copied: every caller drops the document right after (10,000-resource lists).
	 */
	return json_pack("{s:O, s:O, s:o, s:O, s:o, s:O}", "type", json_object_get(doc, "type"),
			 "id", json_object_get(doc, "id"), "address",
			 addr ? json_string(addr) : json_null(), "status",
			 json_object_get(doc, "status"), "attrs", attrs, "tags", tags);
}

/* --- the index: markers, tokens, addresses --- */

/*
 * Another name for the record at src (a hard link: no new inode), replacing
 * whatever dst was; where the file system has no hard links, a copy of line.
 */
static int record_link(const char *src, const char *dst, const char *line, struct kiln_error *err)
{
	char *tmp;
	int rc, e;

	if (link(src, dst) == 0)
		return PROV_OK;
	e = errno;
	if (e == ENOENT) {
		if (mkdir_parent(dst, err) < 0)
			return PROV_ERROR;
		if (link(src, dst) == 0)
			return PROV_OK;
		e = errno;
	}
	if (e != EEXIST)
		return file_write(dst, line, strlen(line), err);
	tmp = xasprintf("%s.tmp", dst);
	unlink(tmp);
	rc = link(src, tmp) == 0 && rename(tmp, dst) == 0 ? PROV_OK : PROV_ERROR;
	if (rc != PROV_OK) {
		unlink(tmp);
		rc = file_write(dst, line, strlen(line), err);
	}
	free(tmp);
	return rc;
}

int sim_doc_index(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err)
{
	const char *id = sim_doc_str(doc, NULL, "id");
	const char *token = sim_doc_str(doc, "sim", "token");
	const char *address = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
	char *marker =
	    marker_path(ctx, sim_doc_str(doc, "sim", "cluster"),
			sim_doc_str(doc, "sim", "workspace"), sim_doc_str(doc, NULL, "type"), id);
	char *line = xasprintf("%s\n", id), *path;
	struct kiln_error ignored;
	int fd = open_new(marker, err), rc = PROV_ERROR;

	if (fd < 0)
		goto out;
	if (write_all(fd, line, strlen(line)) < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", marker, strerror(errno));
		close(fd);
		goto out;
	}
	if (close(fd) < 0) {
		kiln_error_set(err, "sim: cannot write %s: %s", marker, strerror(errno));
		goto out;
	}
	rc = PROV_OK;
	if (token) {
		path = token_path(ctx, token);
		rc = record_link(marker, path, line, err);
		free(path);
	}
	if (rc == PROV_OK && address) {
		/* A missing address entry costs a scan, never a wrong answer. */
		path = address_path(ctx, sim_doc_str(doc, "sim", "cluster"),
				    sim_doc_str(doc, "sim", "workspace"), address);
		if (record_link(marker, path, line, &ignored) != PROV_OK)
			unlink(path);
		free(path);
	}
out:
	free(line);
	free(marker);
	return rc;
}

bool sim_index_has(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		   const char *type, const char *id)
{
	char *path = marker_path(ctx, cluster, workspace, type, id);
	struct stat st;
	bool has = fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0;

	free(path);
	return has;
}

int sim_doc_check_indexed(struct prov_ctx *ctx, const json_t *doc, struct kiln_error *err)
{
	const char *id = sim_doc_str(doc, NULL, "id"), *type = sim_doc_str(doc, NULL, "type");
	const char *cluster = sim_doc_str(doc, "sim", "cluster");
	const char *workspace = sim_doc_str(doc, "sim", "workspace");
	const char *address = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
	char *marker, *path;

	if (!id || !type || !cluster || !workspace ||
	    sim_index_has(ctx, cluster, workspace, type, id))
		return PROV_OK;
	marker = marker_path(ctx, cluster, workspace, type, id);
	path = doc_path(ctx, id);
	kiln_error_set(err,
		       "sim: the simulated cloud is damaged: %s %s (%s in %s/%s) has its document "
		       "%s but no index marker %s, so no list would show it",
		       type, id, address ? address : "no address", cluster, workspace, path,
		       marker);
	kiln_error_hint(err,
			"put the marker back (an empty file will do): touch '%s'; or restore the "
			"sim directory from a copy",
			marker);
	free(path);
	free(marker);
	return PROV_ERROR;
}

static int str_qsort(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static DIR *index_open(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		       const struct sim_kind *k, struct kiln_error *err)
{
	char *dir = index_dir(ctx, cluster, workspace, k->type);
	DIR *d = opendir(dir);

	if (!d && errno != ENOENT)
		kiln_error_set(err, "sim: cannot list %s: %s", dir, strerror(errno));
	if (!d && errno == ENOENT)
		errno = 0;
	free(dir);
	return d;
}

int sim_index_ids(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		  const struct sim_kind *k, char ***ids, size_t *n, struct kiln_error *err)
{
	DIR *d = index_open(ctx, cluster, workspace, k, err);
	struct dirent *e;
	size_t cap = 0;

	*ids = NULL;
	*n = 0;
	if (!d && errno)
		return PROV_ERROR;
	while (d && (e = readdir(d)) != NULL)
		if (sim_id_ok(e->d_name, k->prefix))
			*ARRAY_PUSH(*ids, *n, cap) = xstrdup(e->d_name);
	if (d)
		closedir(d);
	*ARRAY_PUSH(*ids, *n, cap) = NULL;
	(*n)--;
	qsort(*ids, *n, sizeof(**ids), str_qsort);
	return PROV_OK;
}

static int ino_qsort(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Whether readdir's inode numbers in the scope's index and address
 * directories are the files' own, on one file system: those that are known
 * to (not overlays or FUSE, where they may not be).
 */
static bool inodes_trusted(const char *idx, const char *addr)
{
	struct stat a, b;
	struct statfs fs;

	if (stat(idx, &a) < 0 || stat(addr, &b) < 0 || a.st_dev != b.st_dev || statfs(idx, &fs) < 0)
		return false;
	switch ((unsigned long)fs.f_type) {
	case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
		return true;
	default:
		return false;
	}
}

int sim_index_unnamed(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		      const struct sim_kind *k, const char *except, char ***ids, size_t *n,
		      struct kiln_error *err)
{
	char *idx = index_dir(ctx, cluster, workspace, k->type);
	char *addr = scope_path(ctx, "a", cluster, workspace, NULL);
	char *skip = address_path(ctx, cluster, workspace, except);
	ino_t *inos = NULL;
	size_t ni = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	/*
	 * The inode of every address entry but except's, which was just found
	 * wrong (maybe edited in place); a name with a dot is a temporary one.
	 */
	if (inodes_trusted(idx, addr) && (d = opendir(addr)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (e->d_ino && !strchr(e->d_name, '.') &&
			    strcmp(e->d_name, skip + strlen(addr) + 1) != 0)
				*ARRAY_PUSH(inos, ni, cap) = e->d_ino;
		closedir(d);
		/* An empty directory (all deleted) leaves inos NULL, which qsort must not get. */
		if (ni)
			qsort(inos, ni, sizeof(*inos), ino_qsort);
	}
	free(skip);
	free(addr);
	free(idx);
	d = index_open(ctx, cluster, workspace, k, err);
	cap = 0;
	*ids = NULL;
	*n = 0;
	if (!d && errno) {
		free(inos);
		return PROV_ERROR;
	}
	while (d && (e = readdir(d)) != NULL)
		if (sim_id_ok(e->d_name, k->prefix) &&
		    !(e->d_ino && ni && bsearch(&e->d_ino, inos, ni, sizeof(*inos), ino_qsort)))
			*ARRAY_PUSH(*ids, *n, cap) = xstrdup(e->d_name);
	if (d)
		closedir(d);
	free(inos);
	*ARRAY_PUSH(*ids, *n, cap) = NULL;
	(*n)--;
	qsort(*ids, *n, sizeof(**ids), str_qsort);
	return PROV_OK;
}

/* A max-heap of the page's ids: the largest at the root. */
static void heap_down(char **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		char *t;

		if (l < n && strcmp(h[l], h[m]) > 0)
			m = l;
		if (l + 1 < n && strcmp(h[l + 1], h[m]) > 0)
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_up(char **h, size_t i)
{
	while (i > 0 && strcmp(h[i], h[(i - 1) / 2]) > 0) {
		char *t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

int sim_index_page(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		   const struct sim_kind *k, const char *after, size_t limit, char ***ids,
		   size_t *n, bool *more, struct kiln_error *err)
{
	DIR *d = index_open(ctx, cluster, workspace, k, err);
	struct dirent *e;
	size_t cap = 0, seen = 0;

	*ids = NULL;
	*n = 0;
	*more = false;
	if (!d && errno)
		return PROV_ERROR;
	/* One pass keeps the limit smallest ids after the token: no sort of the whole scope. */
	while (d && limit > 0 && (e = readdir(d)) != NULL) {
		if (!sim_id_ok(e->d_name, k->prefix) || (after && strcmp(e->d_name, after) <= 0))
			continue;
		seen++;
		if (*n < limit) {
			*ARRAY_PUSH(*ids, *n, cap) = xstrdup(e->d_name);
			heap_up(*ids, *n - 1);
		} else if (strcmp(e->d_name, (*ids)[0]) < 0) {
			free((*ids)[0]);
			(*ids)[0] = xstrdup(e->d_name);
			heap_down(*ids, *n, 0);
		}
	}
	if (d)
		closedir(d);
	*ARRAY_PUSH(*ids, *n, cap) = NULL;
	(*n)--;
	qsort(*ids, *n, sizeof(**ids), str_qsort);
	*more = seen > *n;
	return PROV_OK;
}

void sim_ids_free(char **ids)
{
	size_t i;

	for (i = 0; ids && ids[i]; i++)
		free(ids[i]);
	free(ids);
}

int sim_token_find(struct prov_ctx *ctx, const char *token, char id[SIM_ID_MAX])
{
	char *path = token_path(ctx, token);
	int rc = record_read(path, id);

	free(path);
	return rc;
}

int sim_address_find(struct prov_ctx *ctx, const char *cluster, const char *workspace,
		     const char *address, char id[SIM_ID_MAX])
{
	char *path = address_path(ctx, cluster, workspace, address);
	int rc = record_read(path, id);

	free(path);
	return rc;
}

void sim_address_repair(struct prov_ctx *ctx, const char *cluster, const char *workspace,
			const char *type, const char *id, const char *address, bool replace)
{
	char *marker = marker_path(ctx, cluster, workspace, type, id);
	char *path = address_path(ctx, cluster, workspace, address);
	char *line = xasprintf("%s\n", id), rid[SIM_ID_MAX];
	struct kiln_error ignored;
	struct stat st;

	if (!replace && lstat(path, &st) == 0)
		goto out;
	/* An older sim's marker is empty: it becomes the record the entry shares. */
	if ((record_read(marker, rid) != PROV_OK || strcmp(rid, id) != 0) &&
	    file_write(marker, line, strlen(line), &ignored) != PROV_OK)
		goto out;
	if (record_link(marker, path, line, &ignored) != PROV_OK && replace)
		unlink(path);
out:
	free(line);
	free(path);
	free(marker);
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
	usage = jsonr_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
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
	size_t len;
	char *text = json_text(path, usage, &len, err);
	int rc = text ? file_swap(path, text, len, err) : PROV_ERROR;

	free(text);
	free(path);
	return rc;
}

/*
 * Every id of a kind in the directory, whatever its scope (kiln sprawl):
 * the names of r/, sorted. O(resources): sprawl is rare.
 */
int sim_all_ids(struct prov_ctx *ctx, const struct sim_kind *k, char ***ids, size_t *n,
		struct kiln_error *err)
{
	char *dir = xasprintf("%s/r", ctx->dir);
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
	free(dir);
	while (d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		char *id;

		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		id = xstrndup(e->d_name, len - 5);
		if (sim_id_ok(id, k->prefix))
			*ARRAY_PUSH(*ids, *n, cap) = id;
		else
			free(id);
	}
	if (d)
		closedir(d);
	*ARRAY_PUSH(*ids, *n, cap) = NULL;
	(*n)--;
	qsort(*ids, *n, sizeof(**ids), str_qsort);
	return PROV_OK;
}
