/*
 * pricing.h - what a provider's resources cost, from the shared catalog:
 * the parts the aws and sim providers price alike (a node group, a Lustre
 * file system, a store billed by use). Each part is a component of the
 * shape provider.h's cost hook describes, priced per hour; storage sold by
 * the GB-month is spread over PRICING_HOURS_PER_MONTH.
 */
#ifndef KILN_PRICING_H
#define KILN_PRICING_H

#include <jansson.h>

#include "catalog.h"

/* The month AWS's calculator and Infracost use: 730 hours. */
#define PRICING_HOURS_PER_MONTH 730.0

/*
 * A node group: count × the type's price in its market, the root volumes by
 * the GB-month, and one public IPv4 address per node when public.
 */
void pricing_group(const struct catalog *c, const json_t *attrs, json_t *components,
		   json_t *unpriced);
/* A Lustre file system: capacity_gb by the GB-month at its throughput per TiB. */
void pricing_lustre(const struct catalog *c, const json_t *attrs, json_t *components,
		    json_t *unpriced);
/* Something billed by use, which a spec does not say: listed, never counted as $0. */
void pricing_by_use(json_t *unpriced, const char *name, const char *what);

#endif
