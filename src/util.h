/*
 * util.h - files, uuids, sizes and retries; and, for the modules that use
 * them all, the headers of the other small helpers: base.h (errors and
 * allocation), strbuf.h, str.h, timefmt.h and cidr.h, each its own file.
 *
 * Nothing here knows about specs, plans or clouds. Allocation (base.h) aborts on failure (as git does): a CLI
 * that cannot allocate a few bytes has nothing sensible left to do.
 */
#ifndef KILN_UTIL_H
#define KILN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "base.h"

/*
 * Read a whole file (or standard input for "-") into a NUL-terminated buffer.
 * Returns 0, -1 when it cannot be read, -2 when it is larger than limit bytes.
 */
int util_file_read_all(const char *path, size_t limit, char **out, size_t *len,
		       struct kiln_error *err);
/*
 * A file a spec names (an ssh key file), opened for reading only when it is
 * a regular file: opened without blocking, so a FIFO cannot hang kiln, and
 * checked on the open descriptor, so it cannot be swapped after the check.
 * NULL with err ("it is a FIFO (named pipe), not a regular file") else.
 */
FILE *util_file_open_regular(const char *path, struct kiln_error *err);
/* util_file_read_all of a util_file_open_regular file. */
int util_file_read_regular(const char *path, size_t limit, char **out, size_t *len,
			   struct kiln_error *err);

/* A random (version 4) UUID, lower case, into out[37]. */
void util_uuid_v4(char out[37]);

/* Remove a directory tree (like rm -rf, never following links). */
int util_remove_tree(const char *path);

/* Human size: "1.5 MiB". Caller frees. */
char *util_size_format(uint64_t bytes);

#include "cidr.h"
#include "str.h"
#include "strbuf.h"
#include "timefmt.h"

#endif
