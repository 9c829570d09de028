/*
 * util.c - see util.h. Everything here is pure and testable on its own.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read f to its end (name for messages): util_file_read_all's result; f is not closed. */
static int read_stream(FILE *f, const char *name, size_t limit, char **out, size_t *len,
		       struct kiln_error *err)
{
	struct strbuf sb = {0};
	char chunk[65536];
	size_t n;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (sb.len + n > limit) {
			char *lim = util_size_format(limit);

			kiln_error_set(err, "%s is larger than %s, the most kiln reads", name, lim);
			free(lim);
			sb_release(&sb);
			return -2;
		}
		sb_add(&sb, chunk, n);
	}
	if (ferror(f)) {
		kiln_error_set(err, "cannot read %s: %s", name, strerror(errno));
		sb_release(&sb);
		return -1;
	}
	*len = sb.len;
	*out = sb_detach(&sb);
	return 0;
}

int util_file_read_all(const char *path, size_t limit, char **out, size_t *len,
		       struct kiln_error *err)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	int ret;

	if (!f) {
		kiln_error_set(err, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	ret = read_stream(f, is_stdin ? "standard input" : path, limit, out, len, err);
	if (!is_stdin)
		fclose(f);
	return ret;
}

/* What a file that is not a regular file is, for the message. */
static const char *file_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO (named pipe)";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a file";
}

FILE *util_file_open_regular(const char *path, struct kiln_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		kiln_error_set(err, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		kiln_error_set(err, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		kiln_error_set(err, "it is %s, not a regular file", file_kind(st.st_mode));
		close(fd);
		return NULL;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "rb"))) {
		kiln_error_set(err, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

int util_file_read_regular(const char *path, size_t limit, char **out, size_t *len,
			   struct kiln_error *err)
{
	FILE *f = util_file_open_regular(path, err);
	int ret;

	if (!f)
		return -1;
	ret = read_stream(f, path, limit, out, len, err);
	fclose(f);
	return ret;
}

char *util_size_format(uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		return xasprintf("%llu B", (unsigned long long)bytes);
	if (v == (double)(uint64_t)v)
		return xasprintf("%llu %s", (unsigned long long)v, units[u]);
	return xasprintf("%.1f %s", v, units[u]);
}

void util_uuid_v4(char out[37])
{
	unsigned char b[16];
	int i, o = 0;

	if (RAND_bytes(b, sizeof(b)) != 1) {
		fprintf(stderr, "kiln: the system random number generator failed\n");
		abort();
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		snprintf(out + o, 3, "%02x", b[i]);
		o += 2;
	}
	out[36] = '\0';
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int util_remove_tree(const char *path)
{
	return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
