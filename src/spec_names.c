/*
 * spec_names.c - the words of the spec's enumerations (fabric, market,
 * tier, deletion, protocol, disk type...), for the loader's checks, for
 * messages and for the JSON Schema (spec_schema.c). The loader's
 * files (spec.c, spec_storage.c...) and the engine all read them here, so
 * none of the loader's files needs another's for a name.
 */
#include "spec.h"
#include "spec_load.h"

const char *const spec_fabric_names[3] = {"none", "ena", "efa"};
const char *const spec_market_names[2] = {"on-demand", "spot"};
const char *const spec_health_gpu_names[2] = {"quick", "none"};
const char *const spec_tier_names[4] = {"object", "lustre", "nfs", "local"};
const char *const spec_deletion_names[2] = {"retain", "delete"};
const char *const spec_ingress_protocols[2] = {"tcp", "udp"};
const char *const spec_disk_types[4] = {"gp3", "gp2", "io1", "io2"};
/* MB/s per TiB of a Lustre file system: the sizes FSx sells. */
const char *const spec_lustre_throughputs[4] = {"125", "250", "500", "1000"};
const char *const spec_fallback_names[1] = {"on-demand"};
const char *const spec_idle_actions[1] = {"down"};
const char *const spec_scheduler_types[1] = {"slurm"};

const char *spec_fabric_name(enum spec_fabric f)
{
	return spec_fabric_names[f];
}

const char *spec_tier_name(enum spec_tier t)
{
	return spec_tier_names[t];
}

const char *spec_tier_with_article(enum spec_tier t)
{
	static const char *const with[] = {"an object", "a lustre", "an nfs", "a local"};

	return with[t];
}

const char *spec_market_name(enum spec_market m)
{
	return spec_market_names[m];
}

const char *spec_capacity_name(enum spec_capacity_kind k)
{
	static const char *const names[] = {"on-demand", "spot", "reservation", "reservation-group",
					    "block"};

	return names[k];
}
