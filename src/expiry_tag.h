/*
 * expiry_tag.h - the node TTL's half in the cloud (issue 29): every node
 * reads its expiry from its own kiln:expires tag and powers itself off past
 * it plus the spec's ttl_grace (providers/bootstrap.c's TTL timer), so a
 * new expiry (kiln ttl extend) is put on the nodes' tags, through the
 * provider's tag_expiry hook.
 */
#ifndef KILN_EXPIRY_TAG_H
#define KILN_EXPIRY_TAG_H

#include <stddef.h>

#include <jansson.h>

#include "engine.h"

/*
 * Put expires (RFC 3339) on the kiln:expires tag of what each resource
 * of state runs (its nodes), through e's provider. *n: the resources asked.
 * 0, or -1 with err naming the first resource it failed on (the rest are
 * still tried). A provider without the hook: 0 and *n 0.
 */
int expiry_tag_nodes(struct engine *e, const json_t *state, const char *expires, size_t *n,
		     struct kiln_error *err);

#endif
