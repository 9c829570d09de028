/*
 * aws_net.c - the network: VPC, one subnet per zone, the security group
 * (all traffic from itself, as EFA needs, plus the spec's ingress), the
 * internet gateway with the default route, and the cluster placement group.
 *
 * Each is created with its tags in the call (TagSpecification). None but
 * the instances needs waiting: EC2 answers these creates synchronously.
 */
#include "aws_ec2.h"

#include "aws/awsxml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- VPC ------------------------------------------------------------------ */

static json_t *vpc_live(json_t *item)
{
	const char *id = awsxml_str(item, "vpcId");

	if (!id)
		return NULL;
	return aws_live("aws_vpc", id, "ready",
			json_pack("{s:s?}", "cidr", awsxml_str(item, "cidrBlock")),
			aws_ec2_item_tags(item));
}

static const struct ec2_kind vpc_kind = {"aws_vpc", "DescribeVpcs", "vpcSet",
					 "VpcId.1", true,	    vpc_live};

static int vpc_scoped(struct prov_ctx *ctx, const struct prov_scope *scope, const void *arg,
		      json_t **out, struct kiln_error *err)
{
	char *page = NULL, *next = NULL;
	json_t *items;
	int rc;

	(void)arg;
	*out = json_array();
	do {
		rc = aws_ec2_list(ctx, &vpc_kind, scope, page, &items, &next, err);
		free(page);
		page = next;
		next = NULL;
		if (rc != PROV_OK)
			break;
		json_array_extend(*out, items);
		json_decref(items);
	} while (page);
	free(page);
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/*
 * Subnets, security groups and instances live in a VPC, which EC2 will not
 * delete while they are in it; kiln makes its internet gateway after the
 * VPC and deletes it before. So without a VPC tagged for the scope, none of
 * them can be the scope's, even after a killed apply: an empty workspace
 * asks for its VPC once, and those lists make no call. (What is recorded
 * is still read by id when no list returns it.)
 */
#define VPC_LISTING_USERS 5 /* the lists of VPC, subnet, security group, gateway, instances */

int aws_ec2_vpcs(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
		 struct kiln_error *err)
{
	return aws_shared_listing(ctx, "vpc", VPC_LISTING_USERS, scope, vpc_scoped, NULL, out, err);
}

int aws_ec2_outside_vpc(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
			bool *skip, struct kiln_error *err)
{
	json_t *vpcs;
	int rc;

	*skip = false;
	/* Every scope (kiln sprawl) lists everything; a later page had its VPC. */
	if (!scope->cluster || page)
		return PROV_OK;
	rc = aws_ec2_vpcs(ctx, scope, &vpcs, err);
	*skip = rc == PROV_OK && json_array_size(vpcs) == 0;
	json_decref(vpcs);
	return rc;
}

/* Lists a type living in the VPC: nothing, with no call, when the scope has no VPC. */
static int in_vpc_list(struct prov_ctx *ctx, const struct ec2_kind *k,
		       const struct prov_scope *scope, const char *page, json_t **out, char **next,
		       struct kiln_error *err)
{
	bool skip;
	int rc = aws_ec2_outside_vpc(ctx, scope, page, &skip, err);

	*out = NULL;
	*next = NULL;
	if (rc != PROV_OK)
		return rc;
	if (skip) {
		*out = json_array();
		return PROV_OK;
	}
	return aws_ec2_list(ctx, k, scope, page, out, next, err);
}

int aws_vpc_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		 json_t **out, char **next, struct kiln_error *err)
{
	if (!scope->cluster)
		return aws_ec2_list(ctx, &vpc_kind, scope, page, out, next, err);
	*next = NULL;
	return aws_ec2_vpcs(ctx, scope, out, err);
}

int aws_vpc_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return aws_ec2_read(ctx, &vpc_kind, id, out, err);
}

int aws_vpc_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		   const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp;
	int rc;

	aws_param(&p, "CidrBlock", json_string_value(json_object_get(op->attrs, "cidr")));
	aws_tag_spec(&p, 1, "vpc", scope, op->address, NULL);
	/* No token: a lost answer is looked for, not sent again. */
	rc = aws_query_once(ctx, AWS_EC2, "CreateVpc", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_RETRY)
		return aws_ec2_create_lost(ctx, &vpc_kind, scope, op->address, out, err);
	if (rc != PROV_OK)
		return rc;
	*out = vpc_live(awsxml_get(resp, "vpc"));
	json_decref(resp);
	if (!*out) {
		kiln_error_set(err, "aws: ec2 CreateVpc answered no vpcId");
		return PROV_ERROR;
	}
	/* The answer may omit the tags it was given; they are there. */
	json_object_set_new(*out, "address", json_string(op->address));
	return PROV_OK;
}

/* EC2 deletes refuse while something still uses the resource (a terminating node's interface). */
static int delete_call(struct prov_ctx *ctx, const char *action, const char *param, const char *id,
		       struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc;

	aws_param(&p, param, id);
	rc = aws_query(ctx, AWS_EC2, action, &p, NULL, err);
	aws_params_release(&p);
	if (rc == PROV_NOTFOUND)
		return PROV_OK;
	if (rc == PROV_ERROR && strstr(err->msg, "DependencyViolation"))
		return PROV_RETRY;
	return rc;
}

int aws_vpc_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	return delete_call(ctx, "DeleteVpc", "VpcId", id, err);
}

int aws_vpc_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		 struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}

/* --- subnets ---------------------------------------------------------------- */

static json_t *subnet_live(json_t *item)
{
	const char *id = awsxml_str(item, "subnetId");

	if (!id)
		return NULL;
	return aws_live("aws_subnet", id, "ready",
			json_pack("{s:s?, s:s?, s:s?}", "cidr", awsxml_str(item, "cidrBlock"),
				  "zone", awsxml_str(item, "availabilityZone"), "vpc_id",
				  awsxml_str(item, "vpcId")),
			aws_ec2_item_tags(item));
}

static const struct ec2_kind subnet_kind = {
    "aws_subnet", "DescribeSubnets", "subnetSet", "SubnetId.1", true, subnet_live};

int aws_subnet_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		    json_t **out, char **next, struct kiln_error *err)
{
	return in_vpc_list(ctx, &subnet_kind, scope, page, out, next, err);
}

int aws_subnet_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return aws_ec2_read(ctx, &subnet_kind, id, out, err);
}

static int missing_dep(const char *address, const char *what, struct kiln_error *err)
{
	kiln_error_set(err, "aws: %s needs %s, which is not recorded", address, what);
	kiln_error_hint(err, "run plan again: it refreshes what exists");
	return PROV_ERROR;
}

int aws_subnet_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		      const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *vpc = aws_dep_attr(op->deps, "aws_vpc", "main", "id");
	struct aws_params p = {{0}};
	json_t *resp;
	int rc;

	if (!vpc)
		return missing_dep(op->address, "aws_vpc.main", err);
	aws_param(&p, "VpcId", vpc);
	aws_param(&p, "CidrBlock", json_string_value(json_object_get(op->attrs, "cidr")));
	aws_param(&p, "AvailabilityZone", json_string_value(json_object_get(op->attrs, "zone")));
	aws_tag_spec(&p, 1, "subnet", scope, op->address, NULL);
	rc = aws_query_once(ctx, AWS_EC2, "CreateSubnet", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_RETRY)
		return aws_ec2_create_lost(ctx, &subnet_kind, scope, op->address, out, err);
	if (rc != PROV_OK)
		return rc;
	*out = subnet_live(awsxml_get(resp, "subnet"));
	json_decref(resp);
	if (!*out) {
		kiln_error_set(err, "aws: ec2 CreateSubnet answered no subnetId");
		return PROV_ERROR;
	}
	json_object_set_new(*out, "address", json_string(op->address));
	return PROV_OK;
}

int aws_subnet_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	return delete_call(ctx, "DeleteSubnet", "SubnetId", id, err);
}

int aws_subnet_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		    struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}

/* --- security group ------------------------------------------------------------ */

static int rule_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int c = strcmp(json_string_value(json_object_get(x, "from")),
		       json_string_value(json_object_get(y, "from")));

	if (c == 0)
		c = (int)(json_integer_value(json_object_get(x, "port_from")) -
			  json_integer_value(json_object_get(y, "port_from")));
	if (c == 0)
		c = (int)(json_integer_value(json_object_get(x, "port_to")) -
			  json_integer_value(json_object_get(y, "port_to")));
	if (c == 0)
		c = strcmp(json_string_value(json_object_get(x, "protocol")),
			   json_string_value(json_object_get(y, "protocol")));
	return c;
}

void aws_ingress_sort(json_t *rules)
{
	provider_json_sort(rules, rule_cmp);
}

/* The spec's rules from a group's ipPermissions; the self rule is the group's own. */
static json_t *sg_ingress(json_t *item)
{
	json_t *perms = awsxml_list(item, "ipPermissions"), *perm, *out = json_array();
	size_t i, j;

	json_array_foreach(perms, i, perm)
	{
		const char *proto = awsxml_str(perm, "ipProtocol");
		json_t *ranges = awsxml_list(perm, "ipRanges"), *range;

		json_array_foreach(ranges, j, range)
		{
			const char *cidr = awsxml_str(range, "cidrIp");

			if (!cidr || !proto)
				continue;
			json_array_append_new(
			    out, json_pack("{s:I, s:I, s:s, s:s}", "port_from",
					   (json_int_t)atoll(awsxml_str(perm, "fromPort")
								 ? awsxml_str(perm, "fromPort")
								 : "0"),
					   "port_to",
					   (json_int_t)atoll(awsxml_str(perm, "toPort")
								 ? awsxml_str(perm, "toPort")
								 : "0"),
					   "protocol", strcmp(proto, "-1") == 0 ? "all" : proto,
					   "from", cidr));
		}
		json_decref(ranges);
	}
	json_decref(perms);
	aws_ingress_sort(out);
	return out;
}

static json_t *sg_live(json_t *item)
{
	const char *id = awsxml_str(item, "groupId");

	if (!id)
		return NULL;
	return aws_live("aws_security_group", id, "ready",
			json_pack("{s:o, s:s?, s:s?}", "ingress", sg_ingress(item), "vpc_id",
				  awsxml_str(item, "vpcId"), "group_name",
				  awsxml_str(item, "groupName")),
			aws_ec2_item_tags(item));
}

static const struct ec2_kind sg_kind = {"aws_security_group",
					"DescribeSecurityGroups",
					"securityGroupInfo",
					"GroupId.1",
					true,
					sg_live};

int aws_sg_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	return in_vpc_list(ctx, &sg_kind, scope, page, out, next, err);
}

int aws_sg_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return aws_ec2_read(ctx, &sg_kind, id, out, err);
}

/* IpPermissions.N for rules (and the self rule first when self_id). */
static void sg_permissions(struct aws_params *p, const char *self_id, const json_t *rules)
{
	json_t *r;
	size_t i;
	int n = 1;

	if (self_id) {
		aws_param(p, "IpPermissions.1.IpProtocol", "-1");
		aws_param(p, "IpPermissions.1.Groups.1.GroupId", self_id);
		n++;
	}
	json_array_foreach(rules, i, r)
	{
		char *k = xasprintf("IpPermissions.%d.", n++);
		char *a = xasprintf("%sIpProtocol", k), *b = xasprintf("%sFromPort", k),
		     *c = xasprintf("%sToPort", k), *d = xasprintf("%sIpRanges.1.CidrIp", k);

		aws_param(p, a, json_string_value(json_object_get(r, "protocol")));
		aws_paramf(p, b, "%lld",
			   (long long)json_integer_value(json_object_get(r, "port_from")));
		aws_paramf(p, c, "%lld",
			   (long long)json_integer_value(json_object_get(r, "port_to")));
		aws_param(p, d, json_string_value(json_object_get(r, "from")));
		free(a), free(b), free(c), free(d), free(k);
	}
}

static int sg_authorize(struct prov_ctx *ctx, const char *action, const char *id,
			const char *self_id, const json_t *rules, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc;

	if (!self_id && json_array_size(rules) == 0)
		return PROV_OK;
	aws_param(&p, "GroupId", id);
	sg_permissions(&p, self_id, rules);
	rc = aws_query(ctx, AWS_EC2, action, &p, NULL, err);
	aws_params_release(&p);
	/* A retried authorize finds its rules there already. */
	if (rc == PROV_ERROR && strstr(err->msg, "InvalidPermission.Duplicate"))
		rc = PROV_OK;
	if (rc == PROV_NOTFOUND && strstr(err->msg, "InvalidPermission.NotFound"))
		rc = PROV_OK;
	return rc;
}

/* The group of this name in the VPC, after a create that met a duplicate (a retried create). */
static int sg_find(struct prov_ctx *ctx, const char *vpc, const char *name, json_t **out,
		   struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *arr;
	int rc;

	aws_param(&p, "Filter.1.Name", "vpc-id");
	aws_param(&p, "Filter.1.Value.1", vpc);
	aws_param(&p, "Filter.2.Name", "group-name");
	aws_param(&p, "Filter.2.Value.1", name);
	rc = aws_ec2_describe(ctx, &sg_kind, &p, &arr, NULL, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return *out ? PROV_OK : PROV_NOTFOUND;
}

/*
 * The live form of a group as kiln just set it: EC2 answered the create and
 * the authorize, so what a describe would say is known (the spec's rules;
 * the self rule is the group's own and not among them).
 */
static json_t *sg_made(const struct prov_scope *scope, const char *address, const char *id,
		       const char *vpc, const char *name, const json_t *ingress)
{
	json_t *rules = ingress ? json_deep_copy(ingress) : json_array();

	aws_ingress_sort(rules);
	return aws_live(
	    "aws_security_group", id, "ready",
	    json_pack("{s:o, s:s, s:s}", "ingress", rules, "vpc_id", vpc, "group_name", name),
	    aws_scope_tags(scope, address, NULL));
}

int aws_sg_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *vpc = aws_dep_attr(op->deps, "aws_vpc", "main", "id");
	char *name = aws_name(scope, "main", 255);
	struct aws_params p = {{0}};
	json_t *resp = NULL;
	const char *id;
	bool again = false;
	char *desc;
	int rc;

	*out = NULL;
	if (!vpc) {
		free(name);
		return missing_dep(op->address, "aws_vpc.main", err);
	}
	desc = xasprintf("kiln %s/%s: the cluster's nodes", scope->cluster, scope->workspace);
	aws_param(&p, "GroupName", name);
	aws_param(&p, "GroupDescription", desc);
	aws_param(&p, "VpcId", vpc);
	aws_tag_spec(&p, 1, "security-group", scope, op->address, NULL);
	rc = aws_query(ctx, AWS_EC2, "CreateSecurityGroup", &p, &resp, err);
	aws_params_release(&p);
	free(desc);
	if (rc == PROV_ERROR && strstr(err->msg, "InvalidGroup.Duplicate")) {
		json_t *found = NULL;

		rc = sg_find(ctx, vpc, name, &found, err);
		if (rc == PROV_OK) {
			resp = json_pack("{s:O}", "groupId", json_object_get(found, "id"));
			json_decref(found);
			again = true;
		}
	}
	if (rc != PROV_OK) {
		free(name);
		return rc;
	}
	id = awsxml_str(resp, "groupId");
	if (!id) {
		free(name);
		json_decref(resp);
		kiln_error_set(err, "aws: ec2 CreateSecurityGroup answered no groupId");
		return PROV_ERROR;
	}
	rc = sg_authorize(ctx, "AuthorizeSecurityGroupIngress", id, id,
			  json_object_get(op->attrs, "ingress"), err);
	/* A group made before (a retried create) may hold other rules too: read it. */
	if (rc == PROV_OK && again)
		rc = aws_sg_read(ctx, id, out, err);
	else if (rc == PROV_OK)
		*out = sg_made(scope, op->address, id, vpc, name,
			       json_object_get(op->attrs, "ingress"));
	free(name);
	json_decref(resp);
	return rc;
}

static bool rule_in(const json_t *rule, const json_t *rules)
{
	json_t *r;
	size_t i;

	json_array_foreach(rules, i, r) if (json_equal(rule, r)) return true;
	return false;
}

int aws_sg_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		  json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		  struct kiln_error *err)
{
	json_t *live, *want = json_object_get(attrs, "ingress"), *have, *add, *drop, *r;
	size_t i;
	int rc;

	(void)scope;
	(void)changed;
	(void)nchanged;
	rc = aws_sg_read(ctx, id, &live, err);
	if (rc != PROV_OK)
		return rc;
	have = json_object_get(json_object_get(live, "attrs"), "ingress");
	add = json_array();
	drop = json_array();
	json_array_foreach(want, i, r) if (!rule_in(r, have)) json_array_append(add, r);
	json_array_foreach(have, i, r) if (!rule_in(r, want)) json_array_append(drop, r);
	rc = sg_authorize(ctx, "RevokeSecurityGroupIngress", id, NULL, drop, err);
	if (rc == PROV_OK)
		rc = sg_authorize(ctx, "AuthorizeSecurityGroupIngress", id, NULL, add, err);
	json_decref(add);
	json_decref(drop);
	/* What was read, less what was revoked, plus what was authorized: the rules wanted. */
	if (rc == PROV_OK) {
		json_t *rules = json_deep_copy(want);

		aws_ingress_sort(rules);
		json_object_set_new(json_object_get(live, "attrs"), "ingress", rules);
		*out = json_incref(live);
	}
	json_decref(live);
	return rc;
}

int aws_sg_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	return delete_call(ctx, "DeleteSecurityGroup", "GroupId", id, err);
}

int aws_sg_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}

/* --- internet gateway and the default route ---------------------------------------- */

static json_t *igw_live(json_t *item)
{
	const char *id = awsxml_str(item, "internetGatewayId");
	json_t *att = awsxml_list(item, "attachmentSet"), *live;

	if (!id) {
		json_decref(att);
		return NULL;
	}
	live = aws_live("aws_internet_gateway", id, "ready",
			json_pack("{s:s?}", "vpc_id", awsxml_str(json_array_get(att, 0), "vpcId")),
			aws_ec2_item_tags(item));
	json_decref(att);
	return live;
}

static const struct ec2_kind igw_kind = {"aws_internet_gateway",
					 "DescribeInternetGateways",
					 "internetGatewaySet",
					 "InternetGatewayId.1",
					 true,
					 igw_live};

int aws_igw_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		 json_t **out, char **next, struct kiln_error *err)
{
	return in_vpc_list(ctx, &igw_kind, scope, page, out, next, err);
}

int aws_igw_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	return aws_ec2_read(ctx, &igw_kind, id, out, err);
}

/* The VPC's main route table. */
static int main_route_table(struct prov_ctx *ctx, const char *vpc, char **out,
			    struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *tables;
	const char *id;
	int rc;

	*out = NULL;
	aws_param(&p, "Filter.1.Name", "vpc-id");
	aws_param(&p, "Filter.1.Value.1", vpc);
	aws_param(&p, "Filter.2.Name", "association.main");
	aws_param(&p, "Filter.2.Value.1", "true");
	rc = aws_query(ctx, AWS_EC2, "DescribeRouteTables", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	tables = awsxml_list(resp, "routeTableSet");
	id = awsxml_str(json_array_get(tables, 0), "routeTableId");
	if (id)
		*out = xstrdup(id);
	json_decref(tables);
	json_decref(resp);
	if (!*out) {
		kiln_error_set(err, "aws: VPC %s has no main route table", vpc);
		return PROV_ERROR;
	}
	return PROV_OK;
}

static int igw_route(struct prov_ctx *ctx, const char *action, const char *vpc, const char *igw,
		     struct kiln_error *err)
{
	struct aws_params p = {{0}};
	char *rt;
	int rc = main_route_table(ctx, vpc, &rt, err);

	if (rc != PROV_OK)
		return rc;
	aws_param(&p, "RouteTableId", rt);
	aws_param(&p, "DestinationCidrBlock", "0.0.0.0/0");
	if (igw)
		aws_param(&p, "GatewayId", igw);
	rc = aws_query(ctx, AWS_EC2, action, &p, NULL, err);
	aws_params_release(&p);
	free(rt);
	if (rc == PROV_ERROR && strstr(err->msg, "RouteAlreadyExists"))
		rc = PROV_OK;
	/* Gone is done for a delete; for a create it is EC2 not showing the new gateway yet. */
	if (rc == PROV_NOTFOUND)
		rc = igw ? PROV_RETRY : PROV_OK;
	return rc;
}

static int igw_attach(struct prov_ctx *ctx, const char *action, const char *igw, const char *vpc,
		      struct kiln_error *err)
{
	struct aws_params p = {{0}};
	int rc;

	aws_param(&p, "InternetGatewayId", igw);
	aws_param(&p, "VpcId", vpc);
	rc = aws_query(ctx, AWS_EC2, action, &p, NULL, err);
	aws_params_release(&p);
	if (rc == PROV_ERROR && (strstr(err->msg, "Resource.AlreadyAssociated") ||
				 strstr(err->msg, "Gateway.NotAttached")))
		rc = PROV_OK;
	/* Gone is done for a detach; for an attach it is EC2 not showing it yet. */
	if (rc == PROV_NOTFOUND)
		rc = strcmp(action, "AttachInternetGateway") == 0 ? PROV_RETRY : PROV_OK;
	return rc;
}

/*
 * Attaching and routing a gateway just made: EC2 not showing the new
 * gateway yet (eventual consistency) is waited out here, under the call's
 * deadline, never by making the gateway again; throttling past http.c's
 * retries (PROV_GAVE_UP) is not tried again.
 */
static int igw_finish(struct prov_ctx *ctx, const char *id, const char *vpc, struct kiln_error *err)
{
	int rc = PROV_RETRY, attempt;

	for (attempt = 0; attempt < 8 && rc == PROV_RETRY; attempt++) {
		if (attempt && !retry_pause(attempt - 1, 100, 5000))
			break;
		rc = igw_attach(ctx, "AttachInternetGateway", id, vpc, err);
		if (rc == PROV_OK)
			rc = igw_route(ctx, "CreateRoute", vpc, id, err);
	}
	if (prov_status_transient(rc)) {
		rc = PROV_ERROR;
		kiln_error_hint(err,
				"internet gateway %s is made but not attached to %s; the next "
				"plan adopts it: kiln apply --replace aws_internet_gateway.main "
				"makes it afresh",
				id, vpc);
	}
	return rc;
}

int aws_igw_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		   const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	const char *vpc = aws_dep_attr(op->deps, "aws_vpc", "main", "id");
	struct aws_params p = {{0}};
	json_t *resp = NULL, *found = NULL;
	const char *id;
	int rc;

	*out = NULL;
	if (!vpc)
		return missing_dep(op->address, "aws_vpc.main", err);
	aws_tag_spec(&p, 1, "internet-gateway", scope, op->address, NULL);
	rc = aws_query_once(ctx, AWS_EC2, "CreateInternetGateway", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_RETRY) {
		/* Made, but maybe not attached and routed yet: carry on with it. */
		rc = aws_ec2_create_lost(ctx, &igw_kind, scope, op->address, &found, err);
		if (rc != PROV_OK)
			return rc;
		resp = json_pack("{s:{s:O}}", "internetGateway", "internetGatewayId",
				 json_object_get(found, "id"));
		json_decref(found);
	}
	if (rc != PROV_OK)
		return rc;
	id = awsxml_str(resp, "internetGateway.internetGatewayId");
	if (!id) {
		json_decref(resp);
		kiln_error_set(err, "aws: ec2 CreateInternetGateway answered no id");
		return PROV_ERROR;
	}
	rc = igw_finish(ctx, id, vpc, err);
	/* Attached to the VPC, as a describe would say. */
	if (rc == PROV_OK)
		*out =
		    aws_live("aws_internet_gateway", id, "ready", json_pack("{s:s}", "vpc_id", vpc),
			     aws_scope_tags(scope, op->address, NULL));
	json_decref(resp);
	return rc;
}

int aws_igw_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	json_t *live;
	const char *vpc;
	int rc = aws_igw_read(ctx, id, &live, err);

	if (rc == PROV_NOTFOUND)
		return PROV_OK;
	if (rc != PROV_OK)
		return rc;
	vpc = json_string_value(json_object_get(json_object_get(live, "attrs"), "vpc_id"));
	if (vpc) {
		rc = igw_route(ctx, "DeleteRoute", vpc, NULL, err);
		if (rc == PROV_OK)
			rc = igw_attach(ctx, "DetachInternetGateway", id, vpc, err);
	}
	json_decref(live);
	if (rc == PROV_OK)
		rc = delete_call(ctx, "DeleteInternetGateway", "InternetGatewayId", id, err);
	return rc;
}

int aws_igw_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		 struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}

/* --- placement group ---------------------------------------------------------------- */

static json_t *pg_live(json_t *item)
{
	const char *name = awsxml_str(item, "groupName");
	const char *state = awsxml_str(item, "state");

	if (!name || (state && strcmp(state, "deleted") == 0))
		return NULL;
	return aws_live("aws_placement_group", name,
			state && strcmp(state, "deleting") == 0 ? "deleting" : "ready",
			json_pack("{s:s?, s:s, s:s?}", "strategy", awsxml_str(item, "strategy"),
				  "group_name", name, "group_id", awsxml_str(item, "groupId")),
			aws_ec2_item_tags(item));
}

static const struct ec2_kind pg_kind = {"aws_placement_group",
					"DescribePlacementGroups",
					"placementGroupSet",
					"GroupName.1",
					false,
					pg_live};

int aws_pg_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	return aws_ec2_list(ctx, &pg_kind, scope, page, out, next, err);
}

int aws_pg_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	int rc = aws_ec2_read(ctx, &pg_kind, id, out, err);

	/* An unknown name is an error to DescribePlacementGroups, not an empty answer. */
	if (rc == PROV_ERROR && strstr(err->msg, "InvalidPlacementGroup.Unknown"))
		rc = PROV_NOTFOUND;
	return rc;
}

int aws_pg_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	char *name = aws_name(scope, op->name, 255);
	struct aws_params p = {{0}};
	json_t *resp = NULL;
	int rc;

	*out = NULL;
	aws_param(&p, "GroupName", name);
	aws_param(&p, "Strategy", json_string_value(json_object_get(op->attrs, "strategy")));
	aws_tag_spec(&p, 1, "placement-group", scope, op->address, NULL);
	rc = aws_query(ctx, AWS_EC2, "CreatePlacementGroup", &p, &resp, err);
	aws_params_release(&p);
	/* EC2 answers the group it made (placementGroup): no call to read it back. */
	if (rc == PROV_OK) {
		*out = pg_live(awsxml_get(resp, "placementGroup"));
		json_decref(resp);
		if (*out) {
			/* The answer may leave out the tags it was given; they are there. */
			json_object_set_new(*out, "tags", aws_scope_tags(scope, op->address, NULL));
			json_object_set_new(*out, "address", json_string(op->address));
			free(name);
			return PROV_OK;
		}
	}
	/*
	 * A retried create: the group of that name is there (tagged by the
	 * first call, or another scope's, checked below); or an answer without
	 * the group (an older API): read it.
	 */
	if (rc == PROV_ERROR && strstr(err->msg, "InvalidPlacementGroup.Duplicate"))
		rc = PROV_OK;
	if (rc == PROV_OK)
		rc = aws_pg_read(ctx, name, out, err);
	/* Another scope's group of the same name ('_' and '.' become '-') is not taken over. */
	if (rc == PROV_OK) {
		json_t *tags = json_object_get(*out, "tags");
		const char *c = json_string_value(json_object_get(tags, PROV_TAG_CLUSTER));
		const char *w = json_string_value(json_object_get(tags, PROV_TAG_WORKSPACE));

		if ((c && strcmp(c, scope->cluster) != 0) ||
		    (w && strcmp(w, scope->workspace) != 0)) {
			kiln_error_set(
			    err, "aws: placement group %s belongs to %s/%s, not to %s/%s", name,
			    c ? c : "?", w ? w : "?", scope->cluster, scope->workspace);
			json_decref(*out);
			*out = NULL;
			rc = PROV_ERROR;
		}
	}
	free(name);
	return rc;
}

int aws_pg_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	int rc = delete_call(ctx, "DeletePlacementGroup", "GroupName", id, err);

	if (rc == PROV_ERROR && strstr(err->msg, "InvalidPlacementGroup.Unknown"))
		rc = PROV_OK;
	return rc;
}

int aws_pg_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	return aws_ec2_wait_now(ctx, what, ids, n, err);
}
