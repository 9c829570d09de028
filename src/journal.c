/*
 * journal.c - see journal.h.
 */
#include "journal.h"

#include <errno.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "jsonc.h"
#include "state.h"
#include "jsonw.h"

struct journal {
	FILE *f;
	char *path;
	bool failed;
};

char *journal_path(const char *store_location, const char *workspace)
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256((const unsigned char *)store_location, strlen(store_location), md);
	return xasprintf(".kiln/journal/%s-%02x%02x%02x%02x.jsonl", workspace, md[0], md[1], md[2],
			 md[3]);
}

/*
 * Install a journaled record. Its secrets were written as null: drop those
 * keys, keeping a value the state already had, so the next apply reads the
 * live one instead of recording null.
 */
static void replay_record(json_t *res, const char *addr, json_t *r)
{
	json_t *copy = json_deep_copy(r), *attrs = json_object_get(copy, "attrs"), *name;
	json_t *old = json_object_get(json_object_get(res, addr), "attrs");
	size_t i;

	json_array_foreach(json_object_get(copy, "sensitive"), i, name)
	{
		const char *k = json_string_value(name);
		json_t *had = json_object_get(old, k);

		if (!k || !json_is_null(json_object_get(attrs, k)))
			continue;
		if (had && !json_is_null(had))
			json_object_set(attrs, k, had);
		else
			json_object_del(attrs, k);
	}
	json_object_set_new(res, addr, copy);
}

int journal_replay(const char *path, const char *head, json_t *state, json_t **overlay,
		   struct kiln_error *err)
{
	char *text = NULL, *line, *nl;
	size_t len;
	json_t *hdr = NULL, *rec, *res = state_resources(state), *ov = json_object();
	const char *base;
	int n = 0, rc;

	if (overlay)
		*overlay = NULL;
	if (access(path, F_OK) != 0) {
		json_decref(ov);
		return 0;
	}
	rc = util_file_read_all(path, (size_t)1 << 30, &text, &len, err);
	if (rc != 0) {
		json_decref(ov);
		return -1;
	}
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	hdr = json_loads(text, 0, NULL);
	base = json_string_value(json_object_get(hdr, "base"));
	if (!nl || !hdr || json_integer_value(json_object_get(hdr, "kiln_journal")) != 1) {
		/* Torn while it was being started: it holds nothing to replay. */
		n = -2;
		goto out;
	}
	if ((base == NULL) != (head == NULL) || (base && strcmp(base, head) != 0)) {
		n = -2;
		goto out;
	}
	/*
	 * A first apply's resources carry the lineage it made up: the state
	 * takes it again, so what that apply created is still its own.
	 */
	if (!head && json_string_length(json_object_get(hdr, "lineage")))
		json_object_set(state, "lineage", json_object_get(hdr, "lineage"));
	for (line = nl ? nl + 1 : NULL; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (!nl)
			break; /* torn: the process died while writing it */
		*nl = '\0';
		rec = json_loads(line, 0, NULL);
		if (!rec)
			break;
		const char *addr = json_string_value(json_object_get(rec, "address"));
		json_t *r = json_object_get(rec, "resource");

		if (addr) {
			if (json_is_object(r))
				replay_record(res, addr, r);
			else
				json_object_del(res, addr);
			json_object_set(ov, addr, r ? r : json_null());
			n++;
		}
		json_decref(rec);
	}
out:
	json_decref(hdr);
	free(text);
	if (overlay && n >= 0)
		*overlay = json_incref(ov);
	json_decref(ov);
	return n;
}

static void write_line(struct journal *j, const char *address, const json_t *resource)
{
	json_t *r = NULL, *rec, *name, *attrs;
	size_t i;

	if (resource) {
		/* Secrets stay out of the journal. */
		r = json_deep_copy(resource);
		attrs = json_object_get(r, "attrs");
		json_array_foreach(json_object_get(r, "sensitive"), i, name)
		    json_object_set_new(attrs, json_string_value(name), json_null());
	}
	rec = json_pack("{s:s, s:o}", "address", address, "resource", r ? r : json_null());
	if (jsonw_dumpf(rec, j->f, JSON_COMPACT | JSON_SORT_KEYS) != 0 ||
	    fputc('\n', j->f) == EOF || fflush(j->f) != 0) {
		if (!j->failed)
			log_warn("cannot write the apply journal %s: %s", j->path, strerror(errno));
		j->failed = true;
	}
	json_decref(rec);
}

int journal_open(struct journal **out, const char *path, const char *head, const char *lineage,
		 const json_t *overlay, struct kiln_error *err)
{
	struct journal *j = xcalloc(1, sizeof(*j));
	json_t *hdr, *v;
	const char *k;
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *tmp;
	bool ok;

	*out = NULL;
	if (slash) {
		*slash = '\0';
		mkdir(".kiln", 0755);
		mkdir(dir, 0700);
	}
	free(dir);
	/*
	 * Start it beside the old one and rename it over: a kill in between
	 * leaves the old journal whole, never a torn new one.
	 */
	tmp = xasprintf("%s.tmp", path);
	j->path = xstrdup(path);
	j->f = fopen(tmp, "w");
	if (!j->f)
		goto fail;
	hdr = json_pack("{s:i, s:o, s:i, s:s?}", "kiln_journal", 1, "base",
			head ? json_string(head) : json_null(), "pid", (int)getpid(), "lineage",
			lineage);
	ok = jsonw_dumpf(hdr, j->f, JSON_COMPACT | JSON_SORT_KEYS) == 0 && fputc('\n', j->f) != EOF;
	json_decref(hdr);
	json_object_foreach_const(overlay, k, v) write_line(j, k, json_is_object(v) ? v : NULL);
	if (!ok || j->failed || fflush(j->f) != 0 || fsync(fileno(j->f)) != 0 ||
	    rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	*out = j;
	return 0;
fail:
	kiln_error_set(err, "cannot write the apply journal %s: %s", path, strerror(errno));
	kiln_error_hint(err, "kiln needs to write under .kiln/ in the working directory");
	if (j->f)
		fclose(j->f);
	unlink(tmp);
	free(tmp);
	free(j->path);
	free(j);
	return -1;
}

void journal_record(struct journal *j, const char *address, const json_t *resource)
{
	if (j)
		write_line(j, address, resource);
}

void journal_close(struct journal *j, int remove_it)
{
	if (!j)
		return;
	fclose(j->f);
	if (remove_it)
		unlink(j->path);
	free(j->path);
	free(j);
}
