/*
 * takeover.h - move resources that another state owns into this one
 * (kiln state takeover): the only way kiln changes what carries another
 * state's lineage, and always recorded in a commit by the caller.
 */
#ifndef KILN_TAKEOVER_H
#define KILN_TAKEOVER_H

#include <jansson.h>

#include "engine.h"

struct takeover_filter {
	const char *from;	  /* a lineage, "none" (made before lineages), or NULL: any */
	const char *const *addrs; /* the addresses to take, or none: every one that matches */
	size_t naddrs;
};

/*
 * Of foreign (engine_refresh's), the resources that match f: check them all
 * first (an address this state records, an address two of them carry, an
 * address or lineage that matches nothing: -1 with err, nothing changed),
 * then claim each through the provider (e->scope's lineage and owner) and
 * record it in state. *taken (new array) lists {"address", "id", "type",
 * "from", "owner"} of what was recorded, also when a later claim failed
 * (-1 with err): the caller commits what was taken either way.
 */
int takeover_run(struct engine *e, json_t *state, const json_t *foreign,
		 const struct takeover_filter *f, json_t **taken, struct kiln_error *err);

#endif
