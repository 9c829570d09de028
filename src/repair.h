/*
 * repair.h - kiln repair's engine part: which nodes of which node groups
 * reported themselves unhealthy (as the refresh read them), replacing just
 * those through their type's replace_nodes, and recording the group after.
 * Nothing here prints.
 */
#ifndef KILN_REPAIR_H
#define KILN_REPAIR_H

#include <jansson.h>

#include "engine.h"

/*
 * The node groups to repair: those named (every node group in the state
 * when n is 0) that have an unhealthy node, in address order, as
 * {"group", "address", "id", "nodes": N, "replace": [{"id", "reason"}],
 * "instance_ids": the group's as found}.
 * live is the refresh's map (address -> [live...]), or NULL to read the
 * recorded nodes. NULL with err naming the groups there are when a name is
 * not one of them.
 */
json_t *repair_targets(const struct engine *e, const json_t *state, const json_t *live,
		       const char *const *names, size_t n, struct kiln_error *err);
/*
 * Replace one target's nodes (through the provider, with retries) and
 * record the group's live object in state. *added: the new node ids. -1
 * with err; then nothing was recorded.
 */
int repair_group(struct engine *e, json_t *state, const json_t *target, json_t **added,
		 struct kiln_error *err);

#endif
