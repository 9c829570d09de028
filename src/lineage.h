/*
 * lineage.h - where a run's code and data came from (issue 27): the git
 * commit of the directory kiln runs in, whether its tree was dirty and a
 * digest of how, and the digest of an object listing (a data manifest).
 *
 * Pure reading: libgit2 on the working directory's repository, OpenSSL's
 * SHA-256. Nothing prints; no file content is kept, only digests.
 */
#ifndef KILN_LINEAGE_H
#define KILN_LINEAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base.h"

/* What the code of a run was. */
struct lineage_code {
	char *commit; /* HEAD's 40 hex digits; NULL outside a repository or before a commit */
	bool dirty;   /* a tracked file changed, staged or not, or an untracked file */
	char *diff_digest; /* "sha256:HEX" over the patch from HEAD (untracked files' content
			      included); NULL when clean */
	size_t changed;	   /* files in that patch */
	char *first;	   /* the first changed path, for messages; NULL when clean */
};

/*
 * The code at dir (a repository found upward from it, as git does): its
 * HEAD, dirty flag and diff digest. The state repository kiln keeps under
 * .kiln/ is not the code and is left out. Not a repository at all is not
 * an error (commit NULL). -1 with err when the repository cannot be read.
 */
int lineage_code_read(const char *dir, struct lineage_code *out, struct kiln_error *err);
void lineage_code_release(struct lineage_code *c);

/*
 * A data manifest's digest: objects is an array of {"key", "size", "etag"}
 * (an object store listing); the digest is "sha256:HEX" over one line
 * "KEY\tSIZE\tETAG\n" per object, sorted by key, so the same objects give
 * the same digest whatever order the listing came in. *count and *bytes
 * sum them. NULL with err when an entry is not of that shape.
 */
char *lineage_manifest_digest(const json_t *objects, uint64_t *count, uint64_t *bytes,
			      struct kiln_error *err);

/* "sha256:HEX" of len bytes at data. Caller frees. */
char *lineage_digest(const void *data, size_t len);

#endif
