/*
 * sim_iam.c - the API actions each sim operation needs, named the way AWS
 * names its own ("sim:CreateNodeGroup" beside "ec2:RunInstances"), so
 * `kiln iam-policy` and the plan's IAM delta read the same on sim as on a
 * cloud. Every create also tags in the same call (sim:CreateTags).
 */
#include "sim_int.h"

#include <string.h>

/* A static, NULL-terminated list of actions. */
#define ACTIONS(...) ((const char *const[]){__VA_ARGS__, NULL})

struct iam_row {
	const char *type;
	const char *const *verbs[5]; /* indexed by enum prov_verb */
};

static const struct iam_row iam_rows[] = {
    {"sim_network",
     {ACTIONS("sim:DescribeVpcs"), ACTIONS("sim:DescribeVpcs"),
      ACTIONS("sim:CreateVpc", "sim:CreateSubnet", "sim:CreateSecurityGroup",
	      "sim:AuthorizeSecurityGroupIngress", "sim:CreateTags"),
      ACTIONS("sim:AuthorizeSecurityGroupIngress", "sim:RevokeSecurityGroupIngress"),
      ACTIONS("sim:DeleteVpc", "sim:DeleteSubnet", "sim:DeleteSecurityGroup")}},
    {"sim_placement_group",
     {ACTIONS("sim:DescribePlacementGroups"), ACTIONS("sim:DescribePlacementGroups"),
      ACTIONS("sim:CreatePlacementGroup", "sim:CreateTags"), ACTIONS("sim:CreateTags"),
      ACTIONS("sim:DeletePlacementGroup")}},
    {"sim_node_group",
     {ACTIONS("sim:DescribeNodeGroups"), ACTIONS("sim:DescribeNodeGroups"),
      ACTIONS("sim:CreateNodeGroup", "sim:CreateTags", "sim:PassRole"),
      ACTIONS("sim:ModifyNodeGroup", "sim:StopNodeGroup", "sim:StartNodeGroup", "sim:PassRole"),
      ACTIONS("sim:DeleteNodeGroup")}},
    {"sim_bucket",
     {ACTIONS("sim:ListBuckets", "sim:GetBucketTagging"),
      ACTIONS("sim:GetBucketVersioning", "sim:GetBucketLifecycle", "sim:GetBucketTagging"),
      ACTIONS("sim:CreateBucket", "sim:PutBucketTagging", "sim:PutBucketVersioning",
	      "sim:PutBucketLifecycle", "sim:PutBucketEncryption"),
      ACTIONS("sim:PutBucketVersioning", "sim:PutBucketLifecycle"), ACTIONS("sim:DeleteBucket")}},
    {"sim_lustre",
     {ACTIONS("sim:DescribeFileSystems"), ACTIONS("sim:DescribeFileSystems"),
      ACTIONS("sim:CreateFileSystem", "sim:CreateDataRepositoryAssociation", "sim:TagResource"),
      ACTIONS("sim:UpdateFileSystem"), ACTIONS("sim:DeleteFileSystem")}},
    {"sim_nfs",
     {ACTIONS("sim:DescribeFileSystems"), ACTIONS("sim:DescribeFileSystems"),
      ACTIONS("sim:CreateFileSystem", "sim:CreateMountTarget", "sim:TagResource"),
      ACTIONS("sim:UpdateFileSystem"), ACTIONS("sim:DeleteMountTarget", "sim:DeleteFileSystem")}},
    {"sim_role",
     {ACTIONS("sim:ListRoles", "sim:ListRoleTags"), ACTIONS("sim:GetRole"),
      ACTIONS("sim:CreateRole", "sim:TagRole", "sim:CreateInstanceProfile",
	      "sim:AddRoleToInstanceProfile"),
      ACTIONS("sim:UpdateAssumeRolePolicy"),
      ACTIONS("sim:RemoveRoleFromInstanceProfile", "sim:DeleteInstanceProfile", "sim:DeleteRole")}},
    {"sim_capacity_block",
     {ACTIONS("sim:DescribeCapacityReservations"), ACTIONS("sim:DescribeCapacityReservations"),
      ACTIONS("sim:DescribeCapacityBlockOfferings", "sim:PurchaseCapacityBlock", "sim:CreateTags"),
      /* Nothing changes a block in place, and none is cancelled: a delete only reads it. */
      ACTIONS("sim:CreateTags"), ACTIONS("sim:DescribeCapacityReservations")}},
    {"sim_role_policy",
     {ACTIONS("sim:ListRolePolicies"), ACTIONS("sim:GetRolePolicy"), ACTIONS("sim:PutRolePolicy"),
      ACTIONS("sim:PutRolePolicy"), ACTIONS("sim:DeleteRolePolicy")}},
};

const char *const *sim_iam_actions(const char *type, enum prov_verb verb)
{
	size_t i;

	if ((unsigned)verb > VERB_DELETE)
		return NULL;
	for (i = 0; type && i < ARRAY_SIZE(iam_rows); i++)
		if (strcmp(iam_rows[i].type, type) == 0)
			return iam_rows[i].verbs[verb];
	return NULL;
}
