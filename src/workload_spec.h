/*
 * workload_spec.h - a spec's workload: against its catalog: the counts and
 * machines its compute groups leave to it (derived at validation), and the
 * plan's kiln.workload (kiln-plan-json(5)): the recommended cluster, each
 * GPU group's run, and whether each Lustre store writes a checkpoint in time,
 * which the audit's KILN-WORK rules read.
 */
#ifndef KILN_WORKLOAD_SPEC_H
#define KILN_WORKLOAD_SPEC_H

#include <jansson.h>

#include "catalog.h"
#include "spec.h"

/*
 * Size the spec's workload over cat and fill in what its groups leave out:
 * a group with neither gpu nor instance_type gets the recommended type, a
 * GPU group without count the fewest nodes that meet the deadline; each
 * such group's derived says so. A workload no cluster can run (the
 * deadline, memory, the budget) is an error in d at its value. -1 when an
 * error was added. Nothing to do without a workload.
 */
int workload_spec_derive(struct spec *spec, const struct catalog *cat, struct diags *d);

/* The plan's kiln.workload, or NULL when the spec has no workload. */
json_t *workload_spec_json(const struct spec *spec, const struct catalog *cat);
/* Set kiln.workload on plan (not on a destroy's, nor without a workload or a catalog). */
void workload_plan(const struct spec *spec, const struct catalog *cat, json_t *plan);

/*
 * The catalog kiln sizes on: the named provider's (NULL: the first provider
 * of the table that is not simulated), or NULL with err naming the problem.
 */
const struct catalog *workload_catalog(const char *provider, struct kiln_error *err);

#endif
