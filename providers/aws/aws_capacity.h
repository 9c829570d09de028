/*
 * aws_capacity.h - where a node group's capacity comes from on EC2: a
 * targeted On-Demand Capacity Reservation (or a resource group of them), a
 * Capacity Block for ML kiln finds and buys, or spot with an on-demand
 * fallback. Used by aws_launch.c (the launch's parameters), aws_nodes.c
 * (the live market), aws_preflight.c (the plan's checks and offerings),
 * aws.c (the cost hook) and aws_types.c (the aws_capacity_block type).
 */
#ifndef KILN_AWS_CAPACITY_H
#define KILN_AWS_CAPACITY_H

#include "aws_ec2.h"

/* On a spot group's instances: "true" when a launch falls back on demand (spot_fallback). */
#define TAG_SPOT_FALLBACK "kiln:spot-fallback"

/*
 * The capacity part of a launch (struct launch's cap): what it targets and
 * how it is bought. Filled by aws_capacity_launch_init.
 */
struct capacity_target {
	const char *address;	       /* the node group, for messages */
	const char *reservation;       /* cr-... targeted, or NULL */
	const char *reservation_group; /* a resource group's ARN, or NULL */
	char *reservation_zone;	       /* the reservation's zone, or NULL */
	bool block;		       /* into a Capacity Block (MarketType capacity-block) */
	bool spot;		       /* market: spot */
	bool spot_fallback;	       /* spot, else on demand */
	bool fallback;		       /* this launch is spot's on-demand stand-in */
};

/* A ClientToken that starts so marks the on-demand launch standing in for spot. */
#define CAPACITY_FALLBACK_TOKEN "fallback-"

/*
 * The capacity part of a launch from the group's attrs and recorded deps:
 * the reservation it targets (whose zone and state EC2 is asked for: a
 * block that is not active yet is an error saying when it starts), spot
 * and its fallback.
 */
int aws_capacity_launch_init(struct prov_ctx *ctx, struct capacity_target *c, const json_t *attrs,
			     const json_t *deps, struct kiln_error *err);
/* RunInstances' CapacityReservationSpecification and InstanceMarketOptions for c. */
void aws_capacity_launch_params(struct aws_params *p, const struct capacity_target *c);
/* PROV_CAPACITY (with err) when c's reservation is in another zone than zone. */
int aws_capacity_launch_zone(const struct capacity_target *c, const char *zone,
			     struct kiln_error *err);
/*
 * A launch of c refused (rc, err) because its reservation is not active
 * yet (a block bought but not started: EC2 answers
 * InvalidCapacityReservationState.PendingActivation): err rewritten to
 * say which reservation and what to do. Anything else is left alone.
 */
void aws_capacity_launch_refused(const struct capacity_target *c, int rc, struct kiln_error *err);
/* Whether a refused launch of c (rc, err) is retried on demand (spot's fallback). */
bool aws_capacity_fall_back(const struct capacity_target *c, int rc, const struct kiln_error *err);
/* "spot" or "on-demand": what an instance was launched as (a fallback counts as spot). */
const char *aws_capacity_market(json_t *inst);
/*
 * The group's capacity inputs as EC2 reports them on inst (one of its
 * instances, whose tags are tags) set on attrs: capacity and
 * capacity_reservation for a reservation, a resource group or a block,
 * spot_fallback when set. On demand and spot set none (market says spot).
 */
void aws_capacity_live(json_t *inst, const json_t *tags, json_t *attrs);

/* Whether zone is one of zones (a JSON array of zone names). */
bool aws_capacity_zone_listed(const json_t *zones, const char *zone);
/* One capacity reservation by id, as its live form: PROV_NOTFOUND when EC2 knows none. */
int aws_capacity_reservation_read(struct prov_ctx *ctx, const char *id, json_t **out,
				  struct kiln_error *err);
/*
 * aws_capacity_group.c: the member of the reservation group an instance
 * group's attrs name (capacity_reservation) that its gang fits in (type,
 * one of its zones, a state that takes launches, room): *fit its live form
 * (new), or an error naming each member's mismatch, an empty group or a
 * group that does not exist.
 */
int aws_capacity_group_fit(struct prov_ctx *ctx, const char *address, const json_t *attrs,
			   const json_t *held, json_t **fit, struct kiln_error *err);
/*
 * The plan's check of a group's reservation group: the fit, named in a
 * warning. held: what the nodes a replace deletes first hold, {id: n}
 * (their reservations_held), counted free; NULL for none.
 */
int aws_capacity_preflight_group(struct prov_ctx *ctx, const char *address, const json_t *attrs,
				 const json_t *held, json_t *warnings, struct kiln_error *err);
/*
 * Pre-flight of what a plan creates: reservations read, block offerings
 * found (the chosen one and the runner-up into offers, provider.h).
 */
int aws_capacity_preflight(struct prov_ctx *ctx, const json_t *creates, json_t *warnings,
			   json_t *offers, struct kiln_error *err);
/* The cost of an aws_capacity_block's attrs: its upfront fee (as pre-flight found it). */
void aws_capacity_block_cost(struct prov_ctx *ctx, const json_t *attrs, json_t *components,
			     json_t *unpriced);

EC2_OPS(aws_cb)

#endif
