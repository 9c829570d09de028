/*
 * aws_types.c - the aws provider's resource types: their inputs with update
 * policies and the reason for each, and the operations behind them.
 *
 * The engine diffs the inputs listed here and obeys their policy; every
 * other live attribute (ids, ARNs, the chosen zone) is computed and only
 * recorded.
 */
#include "aws_capacity.h"
#include "aws_ec2.h"

#include <string.h>

static const char *const retain_why = "kiln's own rule, what destroy does with the data";

static const struct prov_attr vpc_attrs[] = {
    {"cidr", POLICY_REPLACE, false, "a VPC's primary address range is fixed when it is created"},
};

static const struct prov_attr subnet_attrs[] = {
    {"cidr", POLICY_REPLACE, false, "a subnet's range is fixed when it is created"},
    {"zone", POLICY_REPLACE, false, "a subnet lives in one zone"},
};

static const struct prov_attr sg_attrs[] = {
    {"ingress", POLICY_LIVE, false, "security group rules are authorized and revoked in place"},
};

static const struct prov_attr pg_attrs[] = {
    {"strategy", POLICY_REPLACE, false, "a placement group's strategy is fixed at creation"},
};

static const struct prov_attr ig_attrs[] = {
    {"instance_type", POLICY_REPLACE, false,
     "a gang is launched as one type; kiln launches a new gang rather than stop nodes one by one"},
    {"count", POLICY_LIVE, false, "nodes are launched or terminated (newest first) in place"},
    {"gang", POLICY_LIVE, false, "it only decides how later launches are made"},
    {"market", POLICY_REPLACE, false, "a node is bought on-demand or spot when it launches"},
    {"image", POLICY_REPLACE, false, "nodes boot their image once; a new image is new nodes"},
    {"zones", POLICY_REPLACE, false, "instances cannot move between zones"},
    {"disk_size_gb", POLICY_REPLACE, false, "the root volume is made at launch"},
    {"disk_type", POLICY_REPLACE, false, "the root volume is made at launch"},
    {"role", POLICY_REPLACE, false, "the instance profile is given at launch"},
    {"public", POLICY_REPLACE, false, "a public address is given to an interface at launch"},
    {"efa", POLICY_REPLACE, false, "EFA interfaces are attached at launch"},
    {"placement_group", POLICY_REPLACE, false, "instances join a placement group at launch"},
    {"key_pair", POLICY_REPLACE, false, "EC2 gives an instance its key pair (KeyName) at launch"},
    {"capacity", POLICY_REPLACE, false,
     "EC2 puts an instance in a capacity reservation or a Capacity Block only when it launches "
     "it (RunInstances): the group is launched again into its new capacity"},
    {"capacity_reservation", POLICY_REPLACE, false,
     "EC2 puts an instance in a capacity reservation only when it launches it (RunInstances): "
     "the group is launched again into the new reservation"},
    {"spot_fallback", POLICY_LIVE, false,
     "it only decides how later launches are made (a tag on the instances)"},
    {"user_data", POLICY_REPLACE, false,
     "EC2 changes user data only on a stopped instance and cloud-init runs it once, at the "
     "first boot: new user data is new nodes (a stop and start would not run it)"},
};

static const struct prov_attr block_attrs[] = {
    {"instance_type", POLICY_REPLACE, false, "a Capacity Block is bought for one instance type"},
    {"count", POLICY_REPLACE, false, "a Capacity Block holds the instances it was bought for"},
    {"duration_hours", POLICY_REPLACE, false, "a Capacity Block's window is fixed when bought"},
};

static const struct prov_attr bucket_attrs[] = {
    {"versioning", POLICY_LIVE, false, "versioning is switched in place"},
    {"expire_noncurrent_after", POLICY_LIVE, false, "lifecycle rules change in place"},
    {"encrypted", POLICY_LIVE, false, "default encryption is set in place"},
    {"block_public_access", POLICY_LIVE, false, "the public access block is set in place"},
    {"tagged", POLICY_LIVE, false, "kiln's tags are put on in place"},
    {"deletion", POLICY_LIVE, false, retain_why},
};

static const struct prov_attr lustre_attrs[] = {
    {"capacity_gb", POLICY_LIVE, false, "FSx grows storage in place (it never shrinks)"},
    {"throughput_per_tib", POLICY_LIVE, false, "FSx changes throughput in place"},
    {"encrypted", POLICY_REPLACE, false, "FSx encrypts every file system at rest"},
    {"deletion", POLICY_LIVE, false, retain_why},
    {"mount", POLICY_LIVE, false, "where nodes mount it; a tag"},
};

static const struct prov_attr import_attrs[] = {
    {"from", POLICY_REPLACE, false, "an association links one bucket for its life"},
};

static const struct prov_attr efs_attrs[] = {
    {"encrypted", POLICY_REPLACE, false, "EFS encryption is chosen when it is made"},
    {"deletion", POLICY_LIVE, false, retain_why},
    {"mount", POLICY_LIVE, false, "where nodes mount it; a tag"},
};

static const struct prov_attr role_attrs[] = {
    {"read", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"write", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"nfs_read", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"nfs_write", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"allow", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"node_health", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"gpu_metrics", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
    {"ssm_read", POLICY_LIVE, false, "the role's inline policy is rewritten in place"},
};

static const struct prov_attr ssm_attrs[] = {
    {"leaf", POLICY_REPLACE, false, "a parameter's name is fixed when it is made"},
    {"kind", POLICY_REPLACE, false,
     "kiln never rewrites a secret as plain text, nor plain text as a secret"},
    {"content", POLICY_LIVE, false,
     "PutParameter overwrites it in place; the Slurm controller reads it again within a "
     "minute and runs scontrol reconfigure: no node is replaced"},
    {"generated", POLICY_REPLACE, false,
     "kiln makes a new secret only with a new parameter; nodes read it when they boot"},
    {"key_id", POLICY_REPLACE, false,
     "SSM encrypts a secret with its key when kiln makes it: a new key is a new parameter "
     "with a new munge key, which running nodes read only when they boot again"},
};

/*
 * The update of a type whose inputs all force a replacement: the engine
 * never calls it, and it says so if it ever does.
 */
static int update_none(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		       json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		       struct kiln_error *err)
{
	(void)ctx, (void)scope, (void)attrs, (void)changed, (void)nchanged, (void)out;
	kiln_error_set(err, "aws: %s has nothing to change in place", id);
	return PROV_ERROR;
}

/* A type with no input that changes in place. */
#define AWS_TYPE_FIXED(tname, prefix, attrs, nattrs)                                               \
	{                                                                                          \
#tname, attrs, nattrs, prefix##_list, prefix##_read, prefix##_create, update_none, \
		    prefix##_delete, prefix##_wait                                                 \
	}

#define AWS_TYPE(tname, prefix, attrs)                                                             \
	{                                                                                          \
#tname, attrs, ARRAY_SIZE(attrs), prefix##_list, prefix##_read, prefix##_create,   \
		    prefix##_update, prefix##_delete, prefix##_wait                                \
	}

static const struct prov_attr no_attrs[1] = {{NULL, POLICY_LIVE, false, NULL}};

const struct prov_type aws_types[AWS_NTYPES] = {
    AWS_TYPE_FIXED(aws_vpc, aws_vpc, vpc_attrs, ARRAY_SIZE(vpc_attrs)),
    AWS_TYPE_FIXED(aws_subnet, aws_subnet, subnet_attrs, ARRAY_SIZE(subnet_attrs)),
    AWS_TYPE(aws_security_group, aws_sg, sg_attrs),
    AWS_TYPE_FIXED(aws_internet_gateway, aws_igw, no_attrs, 0),
    AWS_TYPE_FIXED(aws_placement_group, aws_pg, pg_attrs, ARRAY_SIZE(pg_attrs)),
    {"aws_instance_group", ig_attrs, ARRAY_SIZE(ig_attrs), aws_ig_list, aws_ig_read, aws_ig_create,
     aws_ig_update, aws_ig_delete, aws_ig_wait, aws_ig_replace_nodes},
    AWS_TYPE(aws_s3_bucket, aws_bucket, bucket_attrs),
    AWS_TYPE(aws_iam_role, aws_role, role_attrs),
    AWS_TYPE(aws_fsx_lustre, aws_lustre, lustre_attrs),
    AWS_TYPE_FIXED(aws_fsx_import, aws_import, import_attrs, ARRAY_SIZE(import_attrs)),
    AWS_TYPE(aws_efs, aws_efs, efs_attrs),
    AWS_TYPE_FIXED(aws_efs_mount_target, aws_mt, no_attrs, 0),
    {"aws_capacity_block", block_attrs, ARRAY_SIZE(block_attrs), aws_cb_list, aws_cb_read,
     aws_cb_create, aws_cb_update, aws_cb_delete, aws_cb_wait, NULL, true},
    AWS_TYPE(aws_ssm_parameter, aws_ssmp, ssm_attrs),
};

/*
 * The API actions each operation calls, for `kiln iam-policy` and the plan's
 * IAM delta. They must list every call the code above makes: the
 * least-privilege test runs apply and destroy with exactly these.
 */
struct type_actions {
	const char *type;
	const char *const *verbs[VERB_DELETE + 1];
};

#define A(...) ((const char *const[]){__VA_ARGS__, NULL})
/* What reading a bucket back takes: one call per setting. */
#define S3_READS                                                                                   \
	"s3:GetBucketTagging", "s3:GetBucketVersioning", "s3:GetLifecycleConfiguration",           \
	    "s3:GetEncryptionConfiguration", "s3:GetBucketPublicAccessBlock"

static const struct type_actions actions[] = {
    {"aws_vpc",
     {A("ec2:DescribeVpcs"), A("ec2:DescribeVpcs"), A("ec2:CreateVpc", "ec2:CreateTags"), NULL,
      A("ec2:DeleteVpc")}},
    {"aws_subnet",
     {A("ec2:DescribeVpcs", "ec2:DescribeSubnets"), A("ec2:DescribeSubnets"),
      A("ec2:CreateSubnet", "ec2:CreateTags"), NULL, A("ec2:DeleteSubnet")}},
    {"aws_security_group",
     {A("ec2:DescribeVpcs", "ec2:DescribeSecurityGroups"), A("ec2:DescribeSecurityGroups"),
      A("ec2:CreateSecurityGroup", "ec2:CreateTags", "ec2:AuthorizeSecurityGroupIngress",
	"ec2:DescribeSecurityGroups"),
      A("ec2:DescribeSecurityGroups", "ec2:AuthorizeSecurityGroupIngress",
	"ec2:RevokeSecurityGroupIngress"),
      A("ec2:DeleteSecurityGroup")}},
    {"aws_internet_gateway",
     {A("ec2:DescribeVpcs", "ec2:DescribeInternetGateways"), A("ec2:DescribeInternetGateways"),
      A("ec2:CreateInternetGateway", "ec2:CreateTags", "ec2:DescribeInternetGateways",
	"ec2:AttachInternetGateway", "ec2:DescribeRouteTables", "ec2:CreateRoute"),
      NULL,
      A("ec2:DescribeInternetGateways", "ec2:DescribeRouteTables", "ec2:DeleteRoute",
	"ec2:DetachInternetGateway", "ec2:DeleteInternetGateway")}},
    {"aws_placement_group",
     {A("ec2:DescribePlacementGroups"), A("ec2:DescribePlacementGroups"),
      A("ec2:CreatePlacementGroup", "ec2:CreateTags", "ec2:DescribePlacementGroups"), NULL,
      A("ec2:DeletePlacementGroup")}},
    {"aws_instance_group",
     /* Reading a group includes its GPUs' metrics (kiln status, reap's idle policy). */
     {A("ec2:DescribeVpcs", "ec2:DescribeInstances"),
      A("ec2:DescribeInstances", "cloudwatch:GetMetricData"),
      A("ec2:DescribeInstanceTypes", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeImages",
	"ec2:RunInstances", "ec2:CreateTags", "ec2:DescribeInstances", "iam:PassRole"),
      A("ec2:DescribeInstances", "ec2:DescribeImages", "ec2:DescribeInstanceTypes",
	"ec2:DescribeInstanceAttribute", "ec2:RunInstances", "ec2:CreateTags",
	"ec2:TerminateInstances", "iam:PassRole"),
      A("ec2:DescribeInstances", "ec2:TerminateInstances")}},
    {"aws_s3_bucket",
     {A("s3:ListAllMyBuckets", S3_READS), A(S3_READS),
      A("s3:CreateBucket", "s3:TagResource", "s3:PutBucketTagging", "s3:PutBucketPublicAccessBlock",
	"s3:PutEncryptionConfiguration", "s3:PutBucketVersioning", "s3:PutLifecycleConfiguration",
	S3_READS),
      A("s3:PutBucketVersioning", "s3:PutLifecycleConfiguration", "s3:PutBucketTagging",
	"s3:PutEncryptionConfiguration", "s3:PutBucketPublicAccessBlock", S3_READS),
      A("s3:DeleteBucket")}},
    {"aws_fsx_lustre",
     {A("fsx:DescribeFileSystems"), A("fsx:DescribeFileSystems"),
      A("fsx:CreateFileSystem", "fsx:TagResource", "ec2:CreateNetworkInterface",
	"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DescribeSecurityGroups"),
      A("fsx:UpdateFileSystem", "fsx:TagResource", "fsx:DescribeFileSystems"),
      A("fsx:DeleteFileSystem", "fsx:DescribeFileSystems")}},
    {"aws_fsx_import",
     {A("fsx:DescribeFileSystems", "fsx:DescribeDataRepositoryAssociations"),
      A("fsx:DescribeDataRepositoryAssociations"),
      A("fsx:CreateDataRepositoryAssociation", "fsx:TagResource", "s3:ListBucket",
	"s3:GetBucketPolicy", "iam:CreateServiceLinkedRole"),
      NULL, A("fsx:DeleteDataRepositoryAssociation", "fsx:DescribeDataRepositoryAssociations")}},
    {"aws_efs",
     {A("elasticfilesystem:DescribeFileSystems"), A("elasticfilesystem:DescribeFileSystems"),
      A("elasticfilesystem:CreateFileSystem", "elasticfilesystem:TagResource"),
      A("elasticfilesystem:TagResource", "elasticfilesystem:DescribeFileSystems"),
      A("elasticfilesystem:DeleteFileSystem", "elasticfilesystem:DescribeFileSystems")}},
    /*
     * Listing and reading blocks is part of the create's actions: refresh
     * asks EC2 only when the spec buys blocks (aws_capacity.c), so a spec
     * that buys none needs none of these.
     */
    {"aws_capacity_block",
     {NULL, NULL,
      A("ec2:DescribeCapacityReservations", "ec2:DescribeCapacityBlockOfferings",
	"ec2:PurchaseCapacityBlock", "ec2:CreateTags"),
      NULL, NULL}},
    {"aws_efs_mount_target",
     {A("elasticfilesystem:DescribeFileSystems", "elasticfilesystem:DescribeMountTargets"),
      A("elasticfilesystem:DescribeMountTargets", "elasticfilesystem:DescribeFileSystems"),
      A("elasticfilesystem:CreateMountTarget", "elasticfilesystem:DescribeMountTargets",
	"elasticfilesystem:DescribeFileSystems", "ec2:CreateNetworkInterface",
	"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"),
      NULL,
      A("elasticfilesystem:DeleteMountTarget", "elasticfilesystem:DescribeMountTargets",
	"elasticfilesystem:DescribeFileSystems", "ec2:DeleteNetworkInterface")}},
    {"aws_ssm_parameter",
     {A("ssm:GetParametersByPath", "ssm:ListTagsForResource"),
      A("ssm:GetParameters", "ssm:ListTagsForResource"),
      A("ssm:PutParameter", "ssm:AddTagsToResource", "ssm:GetParameters",
	"ssm:ListTagsForResource"),
      A("ssm:PutParameter", "ssm:GetParameters", "ssm:ListTagsForResource"),
      A("ssm:DeleteParameter")}},
    {"aws_iam_role",
     {A("iam:ListRoles", "iam:GetRolePolicy"), A("iam:GetRole", "iam:GetRolePolicy"),
      A("iam:CreateRole", "iam:TagRole", "iam:PutRolePolicy", "iam:CreateInstanceProfile",
	"iam:TagInstanceProfile", "iam:AddRoleToInstanceProfile", "iam:GetRole",
	"iam:GetRolePolicy"),
      A("iam:GetRole", "iam:GetRolePolicy", "iam:CreateInstanceProfile", "iam:TagInstanceProfile",
	"iam:AddRoleToInstanceProfile", "iam:PutRolePolicy"),
      A("iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile", "iam:DeleteRolePolicy",
	"iam:DeleteRole")}},
};

/*
 * A group that targets a capacity reservation (or a group of them) reads it
 * (pre-flight and the launch): only such a spec's policy has the actions.
 */
const char *const *aws_iam_resource_actions(const json_t *desired, enum prov_verb verb)
{
	static const char *const reads[] = {"ec2:DescribeCapacityReservations", NULL};
	static const char *const group_reads[] = {"resource-groups:ListGroupResources",
						  "ec2:DescribeCapacityReservations", NULL};
	const char *kind =
	    json_string_value(json_object_get(json_object_get(desired, "attrs"), "capacity"));

	if (verb == VERB_CREATE && kind && strcmp(kind, "reservation") == 0)
		return reads;
	/* A reservation group's members are read from Resource Groups, then from EC2. */
	if (verb == VERB_CREATE && kind && strcmp(kind, "reservation-group") == 0)
		return group_reads;
	return NULL;
}

const char *const *aws_iam_actions(const char *type, enum prov_verb verb)
{
	static const char *const none[] = {NULL};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(actions); i++)
		if (strcmp(actions[i].type, type) == 0)
			return actions[i].verbs[verb] ? actions[i].verbs[verb] : none;
	return none;
}

/*
 * Set a resource's kiln:lineage and kiln:owner to the scope's (kiln state
 * takeover), with the tagging call of its service, and read it back.
 */
int aws_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
	      const char *id, json_t **out, struct kiln_error *err)
{
	static const char *const plain_ec2[] = {"aws_vpc", "aws_subnet", "aws_security_group",
						"aws_internet_gateway"};
	const struct prov_type *t = NULL;
	json_t *ids, *live = NULL;
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < AWS_NTYPES; i++)
		if (strcmp(aws_types[i].name, type) == 0)
			t = &aws_types[i];
	if (!t) {
		kiln_error_set(err, "aws: no resource type %s", type);
		return PROV_ERROR;
	}
	if (strcmp(type, "aws_instance_group") == 0)
		return aws_ig_claim(ctx, scope, id, out, err);
	if (strcmp(type, "aws_s3_bucket") == 0)
		return aws_bucket_claim(ctx, scope, id, out, err);
	if (strcmp(type, "aws_iam_role") == 0)
		return aws_role_claim(ctx, scope, id, out, err);
	if (strncmp(type, "aws_fsx_", 8) == 0)
		return aws_fsx_claim(ctx, scope, type, id, out, err);
	if (strncmp(type, "aws_efs", 7) == 0)
		return aws_efs_claim(ctx, scope, type, id, out, err);
	if (strcmp(type, "aws_ssm_parameter") == 0)
		return aws_ssmp_claim(ctx, scope, id, out, err);
	for (i = 0; i < ARRAY_SIZE(plain_ec2); i++)
		if (strcmp(type, plain_ec2[i]) == 0)
			break;
	if (i == ARRAY_SIZE(plain_ec2)) {
		/* A placement group is named by its name; CreateTags wants its pg- id. */
		rc = t->read(ctx, id, &live, err);
		if (rc != PROV_OK)
			return rc;
		ids =
		    json_pack("[O?]", json_object_get(json_object_get(live, "attrs"), "group_id"));
		json_decref(live);
		if (!json_array_size(ids)) {
			json_decref(ids);
			kiln_error_set(err, "aws: EC2 did not say the id of placement group %s",
				       id);
			return PROV_ERROR;
		}
	} else {
		ids = json_pack("[s]", id);
	}
	rc = aws_ec2_claim_tags(ctx, scope, ids, err);
	json_decref(ids);
	return rc == PROV_OK ? t->read(ctx, id, out, err) : rc;
}
