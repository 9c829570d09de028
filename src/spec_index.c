/*
 * spec_index.c - the spec's names hashed (declared in spec.h). Three open-addressing
 * tables (groups, stores, roles) of positions into the spec's arrays, keyed by
 * the names the arrays own, and the list of local stores, which every group's
 * boot document asks for.
 */
#include "spec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

struct table {
	uint32_t *slot; /* position + 1 in the array; 0 is an empty slot */
	size_t mask;
};

struct spec_index {
	/* What the index was built from: a push that moves or grows an array makes it stale. */
	const struct spec_group *groups;
	size_t ngroups;
	const struct spec_store *stores;
	size_t nstores;
	const struct spec_role *roles;
	size_t nroles;
	struct table group, store, role;
	const struct spec_store **locals;
	size_t nlocals;
};

/* FNV-1a, 64 bits. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* names(i) is the name at position i, of n; a name met twice keeps its first position. */
static void table_build(struct table *t, size_t n, const void *base, size_t stride,
			size_t name_offset)
{
	size_t cap = 16, i;

	while (cap < 2 * n)
		cap *= 2;
	t->slot = xcalloc(cap, sizeof(*t->slot));
	t->mask = cap - 1;
	for (i = 0; i < n; i++) {
		const char *name =
		    *(char *const *)((const char *)base + i * stride + name_offset);
		size_t at;

		if (!name)
			continue;
		for (at = name_hash(name) & t->mask; t->slot[at]; at = (at + 1) & t->mask) {
			const char *other = *(char *const *)((const char *)base +
							     (t->slot[at] - 1) * stride +
							     name_offset);
			if (strcmp(other, name) == 0)
				break;
		}
		if (!t->slot[at])
			t->slot[at] = (uint32_t)(i + 1);
	}
}

/* The position of name in the array, or -1. */
static long table_find(const struct table *t, const void *base, size_t stride,
		       size_t name_offset, const char *name)
{
	size_t at;

	for (at = name_hash(name) & t->mask; t->slot[at]; at = (at + 1) & t->mask) {
		size_t i = t->slot[at] - 1;
		const char *other = *(char *const *)((const char *)base + i * stride + name_offset);

		if (strcmp(other, name) == 0)
			return (long)i;
	}
	return -1;
}

void spec_index_free(struct spec_index *ix)
{
	if (!ix)
		return;
	free(ix->group.slot);
	free(ix->store.slot);
	free(ix->role.slot);
	free(ix->locals);
	free(ix);
}

void spec_index_build(struct spec *spec)
{
	struct spec_index *ix = xcalloc(1, sizeof(*ix));
	size_t i;

	spec_index_free(spec->index);
	ix->groups = spec->groups;
	ix->ngroups = spec->ngroups;
	ix->stores = spec->stores;
	ix->nstores = spec->nstores;
	ix->roles = spec->roles;
	ix->nroles = spec->nroles;
	table_build(&ix->group, spec->ngroups, spec->groups, sizeof(*spec->groups),
		    offsetof(struct spec_group, name));
	table_build(&ix->store, spec->nstores, spec->stores, sizeof(*spec->stores),
		    offsetof(struct spec_store, name));
	table_build(&ix->role, spec->nroles, spec->roles, sizeof(*spec->roles),
		    offsetof(struct spec_role, name));
	ix->locals = xcalloc(spec->nstores + 1, sizeof(*ix->locals));
	for (i = 0; i < spec->nstores; i++)
		if (spec->stores[i].tier == TIER_LOCAL)
			ix->locals[ix->nlocals++] = &spec->stores[i];
	spec->index = ix;
}

bool spec_index_fresh(const struct spec *spec)
{
	const struct spec_index *ix = spec->index;

	return ix && ix->groups == spec->groups && ix->ngroups == spec->ngroups &&
	       ix->stores == spec->stores && ix->nstores == spec->nstores &&
	       ix->roles == spec->roles && ix->nroles == spec->nroles;
}

const struct spec_group *spec_index_group(const struct spec *spec, const char *name)
{
	long i = table_find(&spec->index->group, spec->groups, sizeof(*spec->groups),
			    offsetof(struct spec_group, name), name);

	return i < 0 ? NULL : &spec->groups[i];
}

const struct spec_store *spec_index_store(const struct spec *spec, const char *name)
{
	long i = table_find(&spec->index->store, spec->stores, sizeof(*spec->stores),
			    offsetof(struct spec_store, name), name);

	return i < 0 ? NULL : &spec->stores[i];
}

const struct spec_role *spec_index_role(const struct spec *spec, const char *name)
{
	long i = table_find(&spec->index->role, spec->roles, sizeof(*spec->roles),
			    offsetof(struct spec_role, name), name);

	return i < 0 ? NULL : &spec->roles[i];
}

const struct spec_store *const *spec_index_locals(const struct spec *spec, size_t *n)
{
	*n = spec->index->nlocals;
	return spec->index->locals;
}
