/*
 * odbcheck.c - a checking backend for loose objects; see odbcheck.h.
 *
 * It owns the reading of loose object files for the repository it is
 * attached to, and never writes: writes, existence checks and packed objects
 * go to libgit2's backends, which come after it. libgit2 calls a backend with
 * its object database lock held, so no two calls run at once.
 */
#include "odbcheck.h"

#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* The longest header git writes: "commit 18446744073709551615\0". */
#define HEADER_MAX 32

struct odbcheck {
	git_odb_backend parent; /* first: libgit2 hands this back to every callback */
	char *gitdir;		/* the repository's directory, ending in '/' */
	git_oid *sound;		/* ids checked sound (open addressing) */
	size_t sound_cap;	/* a power of two, or 0 */
	size_t sound_n;
	bool damaged; /* the fields below describe the first damaged object */
	git_oid bad_id;
	char bad_kind[8];
	char bad_file[64];
	char bad_why[160];
};

static size_t sound_slot(const struct odbcheck *c, const git_oid *id)
{
	uint64_t h;

	memcpy(&h, id->id, sizeof(h)); /* the id is a hash already */
	return (size_t)h & (c->sound_cap - 1);
}

static bool sound_has(const struct odbcheck *c, const git_oid *id)
{
	size_t i;

	if (!c->sound_cap)
		return false;
	for (i = sound_slot(c, id); !git_oid_is_zero(&c->sound[i]);
	     i = (i + 1) & (c->sound_cap - 1))
		if (git_oid_equal(&c->sound[i], id))
			return true;
	return false;
}

static void sound_add(struct odbcheck *c, const git_oid *id)
{
	size_t i;

	if (sound_has(c, id))
		return;
	if (2 * (c->sound_n + 1) > c->sound_cap) {
		git_oid *old = c->sound;
		size_t j, old_cap = c->sound_cap;

		c->sound_cap = old_cap ? 2 * old_cap : 64;
		c->sound = xcalloc(c->sound_cap, sizeof(*c->sound));
		for (j = 0; j < old_cap; j++) {
			if (git_oid_is_zero(&old[j]))
				continue;
			for (i = sound_slot(c, &old[j]); !git_oid_is_zero(&c->sound[i]);
			     i = (i + 1) & (c->sound_cap - 1))
				;
			c->sound[i] = old[j];
		}
		free(old);
	}
	for (i = sound_slot(c, id); !git_oid_is_zero(&c->sound[i]);
	     i = (i + 1) & (c->sound_cap - 1))
		;
	c->sound[i] = *id;
	c->sound_n++;
}

/* Remember the first damaged object, and make it libgit2's error too. */
static int damage(struct odbcheck *c, const git_oid *id, const char *kind, const char *file,
		  const char *why)
{
	char hex[GIT_OID_HEXSZ + 1], *msg;

	if (!c->damaged) {
		c->damaged = true;
		git_oid_cpy(&c->bad_id, id);
		snprintf(c->bad_kind, sizeof(c->bad_kind), "%s", kind);
		snprintf(c->bad_file, sizeof(c->bad_file), "%s", file);
		snprintf(c->bad_why, sizeof(c->bad_why), "%s", why);
	}
	git_oid_tostr(hex, sizeof(hex), id);
	msg = xasprintf("%s %s (%s) %s", kind, hex, file, why);
	git_error_set_str(GIT_ERROR_ODB, msg);
	free(msg);
	return GIT_ERROR;
}

/* The whole file into memory: 0, 1 when there is no such file, -1 (errno set). */
static int slurp(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return errno == ENOENT ? 1 : -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	*buf = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, *buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return 0;
}

/*
 * Inflate the loose object file at rel (objects/ab/cdef...) named id: 0 with
 * its content in *data (from git_odb_backend_data_alloc, NUL-terminated, NULL
 * when data is NULL: check only), 1 when there is no such file, 2 when it is
 * too big to check here (libgit2 reads it), or a damage.
 */
static int load(struct odbcheck *c, const git_oid *id, const char *rel, void **data, size_t *len,
		git_object_t *type)
{
	unsigned char *file = NULL, hdr[HEADER_MAX], *out = NULL;
	char *path = xasprintf("%s%s", c->gitdir, rel), kind[8] = "object", why[160];
	char what[HEADER_MAX + 1], *end;
	const unsigned char *nul;
	size_t flen, produced, hlen, extra;
	unsigned long long size;
	z_stream zs;
	git_oid hashed;
	git_object_t t;
	int zr, ret;

	ret = slurp(path, &file, &flen);
	free(path);
	if (ret != 0) {
		free(file);
		if (ret == 1)
			return 1;
		/* Not damage: a file kiln may not read says so, through libgit2's error. */
		snprintf(why, sizeof(why), "cannot read %s: %s", rel, strerror(errno));
		git_error_set_str(GIT_ERROR_OS, why);
		return GIT_ERROR;
	}
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		free(file);
		git_error_set_str(GIT_ERROR_ZLIB, "cannot start zlib");
		return GIT_ERROR;
	}
	zs.next_in = file;
	zs.avail_in = (uInt)flen;
	zs.next_out = hdr;
	zs.avail_out = sizeof(hdr);
	zr = inflate(&zs, Z_NO_FLUSH);
	produced = sizeof(hdr) - zs.avail_out;
	nul = memchr(hdr, '\0', produced);
	if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
		snprintf(why, sizeof(why), "is not valid zlib data (%s)",
			 zs.msg ? zs.msg : "unknown error");
		goto bad;
	}
	if (!nul && zr != Z_STREAM_END && zs.avail_in == 0 && zs.avail_out > 0) {
		snprintf(why, sizeof(why),
			 "is truncated: its file ends after %zu bytes, inside the object header",
			 flen);
		goto bad;
	}
	memcpy(what, hdr, nul ? (size_t)(nul - hdr) : 0);
	what[nul ? nul - hdr : 0] = '\0';
	end = strchr(what, ' ');
	if (end)
		*end++ = '\0';
	t = end ? git_object_string2type(what) : GIT_OBJECT_INVALID;
	errno = 0;
	size = end && *end >= '0' && *end <= '9' ? strtoull(end, &end, 10) : 0;
	if (!nul || t == GIT_OBJECT_INVALID || errno || *end) {
		snprintf(why, sizeof(why), "has no valid object header");
		goto bad;
	}
	snprintf(kind, sizeof(kind), "%s", git_object_type2string(t));
	if (size >= UINT32_MAX) { /* more than one inflate call takes; no state is that big */
		inflateEnd(&zs);
		free(file);
		return 2;
	}
	hlen = (size_t)(nul - hdr) + 1;
	extra = produced - hlen;
	if (extra > size) {
		snprintf(why, sizeof(why),
			 "holds more than the %llu bytes of content its header announces", size);
		goto bad;
	}
	out = data ? (unsigned char *)git_odb_backend_data_alloc(&c->parent, (size_t)size + 1)
		   : xmalloc((size_t)size + 1);
	memcpy(out, hdr + hlen, extra);
	zs.next_out = out + extra;
	zs.avail_out = (uInt)(size - extra);
	/* All input is given: inflate makes progress (Z_OK) until it ends or is stuck. */
	while (zr == Z_OK)
		zr = inflate(&zs, Z_NO_FLUSH);
	/* Out of input: the file ends early, even if only its checksum is missing. */
	if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
		snprintf(why, sizeof(why),
			 "is truncated: its file ends after %zu bytes, before the end of its "
			 "compressed content (%llu bytes announced)",
			 flen, size);
		goto bad;
	}
	if (zr == Z_BUF_ERROR) {
		snprintf(why, sizeof(why),
			 "holds more than the %llu bytes of content its header announces", size);
		goto bad;
	}
	if (zr != Z_STREAM_END) {
		snprintf(why, sizeof(why), "is not valid zlib data (%s)",
			 zs.msg ? zs.msg : "unknown error");
		goto bad;
	}
	if (zs.avail_out > 0) {
		snprintf(why, sizeof(why),
			 "holds %llu bytes of content where its header announces %llu",
			 size - zs.avail_out, size);
		goto bad;
	}
	out[size] = '\0';
	if (git_odb_hash(&hashed, out, (size_t)size, t) != 0 || !git_oid_equal(&hashed, id)) {
		snprintf(why, sizeof(why), "holds content whose SHA-1 is not its name");
		goto bad;
	}
	inflateEnd(&zs);
	free(file);
	if (data) {
		*data = out;
		*len = (size_t)size;
		*type = t;
	} else {
		free(out);
	}
	sound_add(c, id);
	return 0;
bad:
	inflateEnd(&zs);
	free(file);
	if (data)
		git_odb_backend_data_free(&c->parent, out);
	else
		free(out);
	return damage(c, id, kind, rel, why);
}

static char *loose_rel(const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	return xasprintf("objects/%.2s/%s", hex, hex + 2);
}

static int check_read(void **data, size_t *len, git_object_t *type, git_odb_backend *b,
		      const git_oid *id)
{
	struct odbcheck *c = (struct odbcheck *)b;
	char *rel = loose_rel(id);
	int rc = load(c, id, rel, data, len, type);

	free(rel);
	if (rc == 1)
		return GIT_ENOTFOUND;
	return rc == 2 ? GIT_PASSTHROUGH : rc;
}

static int check_read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *id)
{
	struct odbcheck *c = (struct odbcheck *)b;
	char *rel;
	int rc;

	/* Checked before: libgit2's loose backend reads the header alone. */
	if (sound_has(c, id))
		return GIT_PASSTHROUGH;
	rel = loose_rel(id);
	rc = load(c, id, rel, NULL, len, type);
	free(rel);
	if (rc == 1)
		return GIT_ENOTFOUND;
	return rc >= 0 ? GIT_PASSTHROUGH : rc;
}

/*
 * An abbreviated id: check the one loose object it names, then let libgit2's
 * backends resolve it (they also report an ambiguous prefix).
 */
static int check_read_prefix(git_oid *full, void **data, size_t *len, git_object_t *type,
			     git_odb_backend *b, const git_oid *prefix, size_t n)
{
	struct odbcheck *c = (struct odbcheck *)b;
	char hex[GIT_OID_HEXSZ + 1], *dir;
	struct dirent *e;
	git_oid id;
	DIR *d;
	int found = 0, rc = 0;

	(void)data;
	(void)len;
	(void)type;
	(void)full;
	if (n < 2)
		return GIT_PASSTHROUGH;
	git_oid_tostr(hex, sizeof(hex), prefix);
	dir = xasprintf("%sobjects/%.2s", c->gitdir, hex);
	d = opendir(dir);
	free(dir);
	if (!d)
		return GIT_PASSTHROUGH;
	while ((e = readdir(d)) != NULL) {
		char name[GIT_OID_HEXSZ + 1];

		if (strlen(e->d_name) != GIT_OID_HEXSZ - 2 ||
		    strncmp(e->d_name, hex + 2, n - 2) != 0)
			continue;
		snprintf(name, sizeof(name), "%.2s%.38s", hex, e->d_name);
		if (git_oid_fromstr(&id, name) != 0)
			continue;
		found++;
	}
	closedir(d);
	if (found == 1 && !sound_has(c, &id)) {
		char *rel = loose_rel(&id);

		rc = load(c, &id, rel, NULL, NULL, NULL);
		free(rel);
	}
	return rc < 0 ? rc : GIT_PASSTHROUGH;
}

static void check_free(git_odb_backend *b)
{
	struct odbcheck *c = (struct odbcheck *)b;

	free(c->sound);
	free(c->gitdir);
	free(c);
}

int odbcheck_attach(struct odbcheck **out, git_repository *repo)
{
	struct odbcheck *c;
	git_odb *odb = NULL;
	int rc;

	*out = NULL;
	if (git_repository_odb(&odb, repo) != 0)
		return -1;
	c = xcalloc(1, sizeof(*c));
	git_odb_init_backend(&c->parent, GIT_ODB_BACKEND_VERSION);
	c->gitdir = xstrdup(git_repository_path(repo));
	c->parent.read = check_read;
	c->parent.read_header = check_read_header;
	c->parent.read_prefix = check_read_prefix;
	c->parent.free = check_free;
	/* libgit2's loose backend has priority 1 and its packs 2: this comes first. */
	rc = git_odb_add_backend(odb, &c->parent, 100);
	git_odb_free(odb);
	if (rc != 0) {
		check_free(&c->parent);
		return -1;
	}
	*out = c;
	return 0;
}

bool odbcheck_damage(const struct odbcheck *c, git_oid *id, const char **kind, const char **file,
		     const char **why)
{
	if (!c || !c->damaged)
		return false;
	git_oid_cpy(id, &c->bad_id);
	*kind = c->bad_kind;
	*file = c->bad_file;
	*why = c->bad_why;
	return true;
}
