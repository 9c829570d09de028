/*
 * odbcheck.h - loose objects checked before libgit2 trusts them.
 *
 * libgit2 1.5.1 (Debian 12's) loops forever inflating a loose object whose
 * file was truncated: one damaged object would hang every kiln command at
 * 100 % CPU. odbcheck is an object database backend placed ahead of
 * libgit2's own: it inflates each loose object itself with zlib, requires the
 * stream to end, the size to match the header and the content to hash to the
 * object's name, and hands libgit2 the checked content (so the object is
 * inflated once, as before). A damaged object fails the read at once and is
 * remembered, so the store can say which object it was and how to repair it.
 * Packed objects are left to libgit2, which checks a pack against its index.
 */
#ifndef KILN_ODBCHECK_H
#define KILN_ODBCHECK_H

#include <git2.h>
#include <stdbool.h>

struct odbcheck;

/*
 * Put the checker in front of repo's object database. The repository owns it
 * (it is freed with the repository); *out stays valid until then. 0 or -1
 * (libgit2's error is set).
 */
int odbcheck_attach(struct odbcheck **out, git_repository *repo);

/*
 * The first damaged object met: its id, its kind ("blob", "tree", "commit",
 * "tag", or "object" when even its header is unreadable), its file relative to
 * the repository ("objects/ab/cdef...") and what is wrong with it. false when
 * every object read so far was sound.
 */
bool odbcheck_damage(const struct odbcheck *c, git_oid *id, const char **kind, const char **file,
		     const char **why);

#endif
