/*
 * spec_scheduler.c - the scheduler: section (the workload manager the nodes
 * run; today only Slurm) and the partition: and default: keys of a compute
 * group. Shape only: which group is the controller, whether partitions
 * collide, and whether the provider can run a scheduler at all are
 * validate.c's and the provider's checks.
 */
#include "spec.h"
#include "spec_load.h"

#include <stdlib.h>
#include <string.h>

const char *const spec_scheduler_keys[] = {"type", "controller", "kms_key"};

void spec_load_scheduler(struct loader *ld, const struct ynode *sched)
{
	struct spec *spec = ld->spec;
	int type = 0;

	if (!sched)
		return;
	spec->scheduler.node = sched;
	if (!spec_expect_map(ld, sched, "scheduler"))
		return;
	spec_check_keys(ld, sched, "in scheduler", spec_scheduler_keys,
			ARRAY_SIZE(spec_scheduler_keys));
	if (spec_get_enum(ld, sched, "type", "scheduler.type", true, spec_scheduler_types,
			  ARRAY_SIZE(spec_scheduler_types), &type) == GOT_OK)
		spec->scheduler.type = SCHEDULER_SLURM + type;
	if (spec_get_string(ld, sched, "controller", "scheduler.controller", true,
			    &spec->scheduler.controller.name) == GOT_OK)
		spec->scheduler.controller.node = ydoc_get(sched, "controller");
	/* Its form is the provider's to check (check_spec). */
	if (spec_get_string(ld, sched, "kms_key", "scheduler.kms_key", false,
			    &spec->scheduler.kms_key.name) == GOT_OK)
		spec->scheduler.kms_key.node = ydoc_get(sched, "kms_key");
}

bool spec_load_group_partition(struct loader *ld, const struct ynode *g, const char *path,
			       struct spec_group *grp)
{
	char *sub = xasprintf("%s.partition", path);
	bool ok = true;
	enum got got = spec_get_string(ld, g, "partition", sub, false, &grp->partition);

	if (got == GOT_OK) {
		grp->partition_node = ydoc_get(g, "partition");
		/* Slurm takes more, but the name also goes into node features and file names. */
		if (!spec_name_ok(grp->partition)) {
			diag_hint(
			    spec_err(ld, grp->partition_node,
				     "%s '%s' must be 1 to %d characters of a-z, 0-9 and '-', "
				     "not starting or ending with '-'",
				     sub, grp->partition, SPEC_MAX_NAME),
			    "leave partition: out to name the partition after the group");
			ok = false;
		}
	} else if (got == GOT_BAD) {
		ok = false;
	}
	free(sub);
	sub = xasprintf("%s.default", path);
	got = spec_get_bool(ld, g, "default", sub, &grp->partition_default);
	if (got == GOT_OK)
		grp->default_node = ydoc_get(g, "default");
	ok &= got != GOT_BAD;
	free(sub);
	return ok;
}

const char *spec_group_partition(const struct spec *spec, const struct spec_group *g)
{
	if (spec->scheduler.type == SCHEDULER_NONE)
		return NULL;
	if (spec->scheduler.controller.name &&
	    strcmp(spec->scheduler.controller.name, g->name) == 0)
		return NULL;
	return g->partition ? g->partition : g->name;
}

const struct spec_group *spec_default_partition(const struct spec *spec)
{
	const struct spec_group *first = NULL;
	size_t i;

	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];

		if (!spec_group_partition(spec, g))
			continue;
		if (g->partition_default)
			return g;
		if (!first)
			first = g;
	}
	return first;
}
