/*
 * aws_ec2.h - shared by the EC2 types (aws_net.c, aws_nodes.c).
 */
#ifndef KILN_AWS_EC2_H
#define KILN_AWS_EC2_H

#include "aws_int.h"

/* How one EC2 type is described. */
struct ec2_kind {
	const char *type;	       /* "aws_vpc" */
	const char *describe;	       /* "DescribeVpcs" */
	const char *set;	       /* "vpcSet" */
	const char *id_param;	       /* "VpcId.1" */
	bool paged;		       /* takes MaxResults and NextToken */
	json_t *(*live)(json_t *item); /* NULL to skip an item (e.g. deleted) */
};

json_t *aws_ec2_item_tags(json_t *item);
int aws_ec2_describe(struct prov_ctx *ctx, const struct ec2_kind *k, struct aws_params *p,
		     json_t **out, char **next, struct kiln_error *err);
int aws_ec2_list(struct prov_ctx *ctx, const struct ec2_kind *k, const struct prov_scope *scope,
		 const char *page, json_t **out, char **next, struct kiln_error *err);
/*
 * The scope's VPCs (all pages), one listing shared in a refresh by the
 * lists of the VPC and of what lives in it: subnets, security group,
 * internet gateway, instances (aws_net.c says why that is safe).
 */
int aws_ec2_vpcs(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
		 struct kiln_error *err);
/*
 * Whether a list of a type that lives in the scope's VPC may skip its call:
 * one scope's first page, and the scope has no VPC (PROV_OK, *skip true).
 */
int aws_ec2_outside_vpc(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
			bool *skip, struct kiln_error *err);
int aws_ec2_read(struct prov_ctx *ctx, const struct ec2_kind *k, const char *id, json_t **out,
		 struct kiln_error *err);
int aws_ec2_wait_now(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		     struct kiln_error *err);
const char *aws_ec2_created_id(json_t *resp, const char *path);
/* Every live resource of this scope whose tag key is value: *out a new array. */
int aws_ec2_find_tagged(struct prov_ctx *ctx, const struct ec2_kind *k,
			const struct prov_scope *scope, const char *key, const char *value,
			json_t **out, struct kiln_error *err);
/* The live resource of this scope carrying address (PROV_NOTFOUND when none). */
int aws_ec2_find_address(struct prov_ctx *ctx, const struct ec2_kind *k,
			 const struct prov_scope *scope, const char *address, json_t **out,
			 struct kiln_error *err);
int aws_ec2_create_lost(struct prov_ctx *ctx, const struct ec2_kind *k,
			const struct prov_scope *scope, const char *address, json_t **out,
			struct kiln_error *err);

/* aws_net.c and aws_nodes.c type operations, for aws_types.c */
#define EC2_OPS(name)                                                                              \
	int name##_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,    \
			json_t **out, char **next, struct kiln_error *err);                        \
	int name##_read(struct prov_ctx *ctx, const char *id, json_t **out,                        \
			struct kiln_error *err);                                                   \
	int name##_create(struct prov_ctx *ctx, const struct prov_scope *scope,                    \
			  const struct prov_create *op, json_t **out, struct kiln_error *err);     \
	int name##_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,    \
			  json_t *attrs, const char *const *changed, size_t nchanged,              \
			  json_t **out, struct kiln_error *err);                                   \
	int name##_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err);           \
	int name##_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids,      \
			size_t n, struct kiln_error *err);

EC2_OPS(aws_vpc)
EC2_OPS(aws_subnet)
EC2_OPS(aws_sg)
EC2_OPS(aws_igw)
EC2_OPS(aws_pg)
EC2_OPS(aws_ig)
EC2_OPS(aws_bucket)
EC2_OPS(aws_role)
EC2_OPS(aws_lustre)
EC2_OPS(aws_import)
EC2_OPS(aws_efs)
EC2_OPS(aws_mt)
EC2_OPS(aws_ssmp)

/* SIGKILL this process when KILN_TEST_KILL_AT names point (tests only; aws_capacity.c). */
void aws_test_kill_at(const char *point);
/* An instance group's nodes replaced (provider.h, replace_nodes). */
int aws_ig_replace_nodes(struct prov_ctx *ctx, const char *id, const char *const *nodes, size_t n,
			 json_t **out, struct kiln_error *err);

/* Ingress rules in one order, so desired and live compare equal. */
void aws_ingress_sort(json_t *rules);

#endif
