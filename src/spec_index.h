/*
 * spec_index.h - the spec's names hashed, so that a group, a store or a role
 * is found by name in constant time: a spec of 10,000 groups asks for names
 * hundreds of thousands of times (every role's stores, every group's role).
 *
 * The loader builds the index once it has read every section
 * (spec_index_build). Whoever pushes a group or a store after that makes the
 * index stale, and a stale index is never read: spec_index_fresh() says so
 * and the finders in spec.c scan the arrays as before.
 */
#ifndef KILN_SPEC_INDEX_H
#define KILN_SPEC_INDEX_H

#include <stdbool.h>
#include <stddef.h>

struct spec;
struct spec_group;
struct spec_store;
struct spec_role;
struct spec_index;

/* (Re)builds spec->index from the spec's arrays as they are now. */
void spec_index_build(struct spec *spec);
void spec_index_free(struct spec_index *ix);

/* Whether spec->index describes the spec's arrays as they are now. */
bool spec_index_fresh(const struct spec *spec);

/* By name, through a fresh index (the caller checked spec_index_fresh). */
const struct spec_group *spec_index_group(const struct spec *spec, const char *name);
const struct spec_store *spec_index_store(const struct spec *spec, const char *name);
const struct spec_role *spec_index_role(const struct spec *spec, const char *name);

/* The stores of tier local, in the spec's order; *n of them. */
const struct spec_store *const *spec_index_locals(const struct spec *spec, size_t *n);

#endif
