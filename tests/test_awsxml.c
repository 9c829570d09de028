/*
 * test_awsxml.c - AWS XML responses as JSON, and AWS error responses.
 *
 * The bodies follow the element names of botocore's service models (ec2
 * 2016-11-15, iam 2010-05-08, s3 2006-03-01, fsx, efs) and the examples in
 * the AWS API references, so the shapes are the ones the services send, not
 * ones made up to suit the parser. The hostile documents are the classic
 * ones: billion laughs, an external entity, deep nesting, truncation and
 * bytes that are not UTF-8.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "aws/awserr.h"
#include "aws/awsxml.h"
#include "util.h"

#define XML_DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
#define EC2_NS "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\""
#define IAM_NS "xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\""
#define S3_NS "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\""

/* Parse a document that must parse; fail with the parser's message otherwise. */
static json_t *parse_ok(const char *xml)
{
	struct kiln_error err = {{0}};
	json_t *v = awsxml_parse(xml, strlen(xml), "ec2", &err);

	if (!v)
		fail_msg("parse: %s", err.msg);
	return v;
}

/* Parse a document that must fail, and check the whole message. */
static void assert_parse_fails(const char *xml, size_t len, const char *service,
			       const char *message)
{
	struct kiln_error err = {{0}};
	json_t *v = awsxml_parse(xml, len, service, &err);

	if (v) {
		char *s = json_dumps(v, JSON_COMPACT);

		json_decref(v);
		fail_msg("parsed, to %s", s);
	}
	assert_string_equal(err.msg, message);
}

/* v equals the JSON text expected; print both when not. */
static void assert_json_impl(json_t *v, const char *expected, const char *file, int line)
{
	json_error_t jerr;
	json_t *want = json_loads(expected, JSON_DECODE_ANY, &jerr);
	char *got;
	bool same;

	if (!want) {
		print_error("bad expected JSON: %s\n", jerr.text);
		_fail(file, line);
	}
	same = json_equal(v, want);
	json_decref(want);
	if (same)
		return;
	got = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("NULL");
	print_error("expected %s\n     got %s\n", expected, got);
	free(got);
	_fail(file, line);
}

#define assert_json(v, expected) assert_json_impl((v), (expected), __FILE__, __LINE__)

/* A new reference checked and then dropped, for the accessors that return one. */
#define assert_json_new(v, expected)                                                               \
	do {                                                                                       \
		json_t *tmp_ = (v);                                                                \
		assert_json_impl(tmp_, (expected), __FILE__, __LINE__);                            \
		json_decref(tmp_);                                                                 \
	} while (0)

/* --- EC2 ----------------------------------------------------------------- */

static const char describe_vpcs[] =
    XML_DECL "<DescribeVpcsResponse " EC2_NS ">\n"
	     "    <requestId>7a62c49f-347e-4fc4-9331-6e8eEXAMPLE</requestId>\n"
	     "    <vpcSet>\n"
	     "        <item>\n"
	     "            <vpcId>vpc-0a1b2c3d4e5f67890</vpcId>\n"
	     "            <ownerId>123456789012</ownerId>\n"
	     "            <state>available</state>\n"
	     "            <cidrBlock>10.0.0.0/16</cidrBlock>\n"
	     "            <cidrBlockAssociationSet>\n"
	     "                <item>\n"
	     "                    <cidrBlock>10.0.0.0/16</cidrBlock>\n"
	     "                    <associationId>vpc-cidr-assoc-0b1c2d3e</associationId>\n"
	     "                    <cidrBlockState>\n"
	     "                        <state>associated</state>\n"
	     "                    </cidrBlockState>\n"
	     "                </item>\n"
	     "            </cidrBlockAssociationSet>\n"
	     "            <ipv6CidrBlockAssociationSet/>\n"
	     "            <dhcpOptionsId>dopt-19edf471</dhcpOptionsId>\n"
	     "            <tagSet>\n"
	     "                <item>\n"
	     "                    <key>Name</key>\n"
	     "                    <value>kiln-main</value>\n"
	     "                </item>\n"
	     "            </tagSet>\n"
	     "            <instanceTenancy>default</instanceTenancy>\n"
	     "            <isDefault>false</isDefault>\n"
	     "        </item>\n"
	     "        <item>\n"
	     "            <vpcId>vpc-06e4ab6c6cEXAMPLE</vpcId>\n"
	     "            <ownerId>123456789012</ownerId>\n"
	     "            <state>pending</state>\n"
	     "            <cidrBlock>10.1.0.0/16</cidrBlock>\n"
	     "            <dhcpOptionsId>dopt-19edf471</dhcpOptionsId>\n"
	     "            <tagSet>\n"
	     "                <item><key>Name</key><value>kiln-train</value></item>\n"
	     "                <item><key>kiln:resource</key><value>aws_vpc.train</value></item>\n"
	     "                <item><key>scratch</key><value/></item>\n"
	     "            </tagSet>\n"
	     "            <instanceTenancy>default</instanceTenancy>\n"
	     "            <isDefault>false</isDefault>\n"
	     "        </item>\n"
	     "    </vpcSet>\n"
	     "</DescribeVpcsResponse>\n";

static void test_describe_vpcs_gives_an_array_of_vpcs(void **state)
{
	json_t *v = parse_ok(describe_vpcs);
	json_t *vpcs = awsxml_get(v, "DescribeVpcsResponse.vpcSet");

	(void)state;
	assert_true(json_is_array(vpcs));
	assert_int_equal(json_array_size(vpcs), 2);
	assert_string_equal(awsxml_str(v, "DescribeVpcsResponse.requestId"),
			    "7a62c49f-347e-4fc4-9331-6e8eEXAMPLE");
	assert_string_equal(awsxml_str(v, "DescribeVpcsResponse.vpcSet.0.vpcId"),
			    "vpc-0a1b2c3d4e5f67890");
	assert_string_equal(awsxml_str(v, "DescribeVpcsResponse.vpcSet.1.state"), "pending");
	json_decref(v);
}

static void test_item_list_of_one_is_still_an_array(void **state)
{
	json_t *v = parse_ok(describe_vpcs);
	json_t *vpc = awsxml_get(v, "DescribeVpcsResponse.vpcSet.0");

	(void)state;
	assert_json(awsxml_get(vpc, "cidrBlockAssociationSet"),
		    "[{\"cidrBlock\": \"10.0.0.0/16\","
		    "  \"associationId\": \"vpc-cidr-assoc-0b1c2d3e\","
		    "  \"cidrBlockState\": {\"state\": \"associated\"}}]");
	assert_json(awsxml_get(vpc, "tagSet"), "[{\"key\": \"Name\", \"value\": \"kiln-main\"}]");
	assert_json(awsxml_get(vpc, "ipv6CidrBlockAssociationSet"), "\"\"");
	json_decref(v);
}

static void test_ec2_tag_set_of_one_becomes_an_object(void **state)
{
	json_t *v = parse_ok(describe_vpcs);

	(void)state;
	assert_json_new(awsxml_tags(v, "DescribeVpcsResponse.vpcSet.0.tagSet"),
			"{\"Name\": \"kiln-main\"}");
	json_decref(v);
}

static void test_ec2_tag_set_of_three_keeps_an_empty_value(void **state)
{
	json_t *v = parse_ok(describe_vpcs);

	(void)state;
	assert_json_new(awsxml_tags(v, "DescribeVpcsResponse.vpcSet.1.tagSet"),
			"{\"Name\": \"kiln-train\", \"kiln:resource\": \"aws_vpc.train\","
			" \"scratch\": \"\"}");
	json_decref(v);
}

static void test_empty_vpc_set_lists_as_empty_array(void **state)
{
	json_t *v = parse_ok(XML_DECL "<DescribeVpcsResponse " EC2_NS ">\n"
				      "    <requestId>b1c7e2e5-3a5f-4d47-a5b2-EXAMPLE</requestId>\n"
				      "    <vpcSet/>\n"
				      "</DescribeVpcsResponse>\n");

	(void)state;
	assert_json(v, "{\"DescribeVpcsResponse\": {"
		       "  \"requestId\": \"b1c7e2e5-3a5f-4d47-a5b2-EXAMPLE\", \"vpcSet\": \"\"}}");
	assert_json_new(awsxml_list(v, "DescribeVpcsResponse.vpcSet"), "[]");
	assert_null(awsxml_get(v, "DescribeVpcsResponse.vpcSet.0"));
	json_decref(v);
}

static const char run_instances[] = XML_DECL
    "<RunInstancesResponse " EC2_NS ">\n"
    "  <requestId>d1f6c8a4-5e3b-4f6a-9d2c-EXAMPLE</requestId>\n"
    "  <reservationId>r-1234567890abcdef0</reservationId>\n"
    "  <ownerId>123456789012</ownerId>\n"
    "  <groupSet/>\n"
    "  <instancesSet>\n"
    "    <item>\n"
    "      <instanceId>i-1234567890abcdef0</instanceId>\n"
    "      <imageId>ami-0abcdef1234567890</imageId>\n"
    "      <instanceState>\n"
    "        <code>0</code>\n"
    "        <name>pending</name>\n"
    "      </instanceState>\n"
    "      <privateDnsName>ip-10-0-0-12.ec2.internal</privateDnsName>\n"
    "      <dnsName/>\n"
    "      <reason/>\n"
    "      <amiLaunchIndex>0</amiLaunchIndex>\n"
    "      <productCodes/>\n"
    "      <instanceType>p4d.24xlarge</instanceType>\n"
    "      <launchTime>2024-05-08T16:46:19.000Z</launchTime>\n"
    "      <placement>\n"
    "        <availabilityZone>us-east-1a</availabilityZone>\n"
    "        <groupName>kiln-train-cluster</groupName>\n"
    "        <tenancy>default</tenancy>\n"
    "      </placement>\n"
    "      <monitoring><state>disabled</state></monitoring>\n"
    "      <subnetId>subnet-56f5f000</subnetId>\n"
    "      <vpcId>vpc-0a1b2c3d4e5f67890</vpcId>\n"
    "      <privateIpAddress>10.0.0.12</privateIpAddress>\n"
    "      <sourceDestCheck>true</sourceDestCheck>\n"
    "      <groupSet>\n"
    "        <item><groupId>sg-e4076980</groupId><groupName>kiln-efa</groupName></item>\n"
    "      </groupSet>\n"
    "      <architecture>x86_64</architecture>\n"
    "      <rootDeviceType>ebs</rootDeviceType>\n"
    "      <rootDeviceName>/dev/xvda</rootDeviceName>\n"
    "      <blockDeviceMapping/>\n"
    "      <virtualizationType>hvm</virtualizationType>\n"
    "      <clientToken>kiln-5b0c7e52-trainer-0</clientToken>\n"
    "      <tagSet>\n"
    "        <item><key>kiln:resource</key><value>aws_instance.trainer</value></item>\n"
    "      </tagSet>\n"
    "      <hypervisor>xen</hypervisor>\n"
    "      <networkInterfaceSet>\n"
    "        <item>\n"
    "          <networkInterfaceId>eni-551ba033</networkInterfaceId>\n"
    "          <subnetId>subnet-56f5f000</subnetId>\n"
    "          <vpcId>vpc-0a1b2c3d4e5f67890</vpcId>\n"
    "          <description/>\n"
    "          <ownerId>123456789012</ownerId>\n"
    "          <status>in-use</status>\n"
    "          <macAddress>02:dd:2c:5e:01:69</macAddress>\n"
    "          <privateIpAddress>10.0.0.12</privateIpAddress>\n"
    "          <sourceDestCheck>true</sourceDestCheck>\n"
    "          <groupSet>\n"
    "            <item><groupId>sg-e4076980</groupId><groupName>kiln-efa</groupName></item>\n"
    "          </groupSet>\n"
    "          <attachment>\n"
    "            <attachmentId>eni-attach-39697adc</attachmentId>\n"
    "            <deviceIndex>0</deviceIndex>\n"
    "            <status>attaching</status>\n"
    "            <attachTime>2024-05-08T16:46:19.000Z</attachTime>\n"
    "            <deleteOnTermination>true</deleteOnTermination>\n"
    "            <networkCardIndex>0</networkCardIndex>\n"
    "          </attachment>\n"
    "          <privateIpAddressesSet>\n"
    "            <item><privateIpAddress>10.0.0.12</privateIpAddress>"
    "<primary>true</primary></item>\n"
    "          </privateIpAddressesSet>\n"
    "          <ipv6AddressesSet/>\n"
    "          <interfaceType>efa</interfaceType>\n"
    "        </item>\n"
    "        <item>\n"
    "          <networkInterfaceId>eni-0f1e2d3c</networkInterfaceId>\n"
    "          <subnetId>subnet-56f5f000</subnetId>\n"
    "          <status>in-use</status>\n"
    "          <attachment>\n"
    "            <deviceIndex>1</deviceIndex>\n"
    "            <networkCardIndex>1</networkCardIndex>\n"
    "          </attachment>\n"
    "          <interfaceType>efa</interfaceType>\n"
    "        </item>\n"
    "      </networkInterfaceSet>\n"
    "      <ebsOptimized>true</ebsOptimized>\n"
    "    </item>\n"
    "  </instancesSet>\n"
    "</RunInstancesResponse>\n";

static void test_run_instances_nests_sets_inside_the_reservation(void **state)
{
	json_t *v = parse_ok(run_instances);
	json_t *inst = awsxml_get(v, "RunInstancesResponse.instancesSet.0");
	json_t *enis = awsxml_list(inst, "networkInterfaceSet");

	(void)state;
	assert_string_equal(awsxml_str(v, "RunInstancesResponse.reservationId"),
			    "r-1234567890abcdef0");
	assert_int_equal(json_array_size(awsxml_get(v, "RunInstancesResponse.instancesSet")), 1);
	assert_string_equal(awsxml_str(inst, "instanceState.name"), "pending");
	assert_string_equal(awsxml_str(inst, "placement.groupName"), "kiln-train-cluster");
	assert_string_equal(awsxml_str(inst, "dnsName"), "");
	assert_int_equal(json_array_size(enis), 2);
	assert_string_equal(awsxml_str(enis, "0.privateIpAddressesSet.0.privateIpAddress"),
			    "10.0.0.12");
	assert_string_equal(awsxml_str(enis, "0.groupSet.0.groupId"), "sg-e4076980");
	assert_string_equal(awsxml_str(enis, "1.attachment.networkCardIndex"), "1");
	assert_json(awsxml_get(enis, "0.ipv6AddressesSet"), "\"\"");
	assert_json_new(awsxml_tags(inst, "tagSet"),
			"{\"kiln:resource\": \"aws_instance.trainer\"}");
	json_decref(enis);
	json_decref(v);
}

/* --- IAM ----------------------------------------------------------------- */

static const char list_roles[] =
    "<ListRolesResponse " IAM_NS ">\n"
    "  <ListRolesResult>\n"
    "    <IsTruncated>false</IsTruncated>\n"
    "    <Roles>\n"
    "      <member>\n"
    "        <Path>/kiln/</Path>\n"
    "        <AssumeRolePolicyDocument>%7B%22Version%22%3A%222012-10-17%22%7D"
    "</AssumeRolePolicyDocument>\n"
    "        <MaxSessionDuration>3600</MaxSessionDuration>\n"
    "        <RoleId>AROADBQP57FF2AEXAMPLE</RoleId>\n"
    "        <RoleName>kiln-trainer</RoleName>\n"
    "        <Arn>arn:aws:iam::123456789012:role/kiln/kiln-trainer</Arn>\n"
    "        <CreateDate>2024-05-09T15:45:35Z</CreateDate>\n"
    "      </member>\n"
    "      <member>\n"
    "        <Path>/</Path>\n"
    "        <RoleId>AROAC2ICXG32EXAMPLE</RoleId>\n"
    "        <RoleName>kiln-fsx</RoleName>\n"
    "        <Arn>arn:aws:iam::123456789012:role/kiln-fsx</Arn>\n"
    "        <CreateDate>2024-05-10T08:01:02Z</CreateDate>\n"
    "      </member>\n"
    "    </Roles>\n"
    "  </ListRolesResult>\n"
    "  <ResponseMetadata>\n"
    "    <RequestId>20f7279f-99ee-11e1-a4c3-27EXAMPLE804</RequestId>\n"
    "  </ResponseMetadata>\n"
    "</ListRolesResponse>\n";

static void test_list_roles_members_become_an_array(void **state)
{
	json_t *v = parse_ok(list_roles);
	json_t *roles = awsxml_get(v, "ListRolesResponse.ListRolesResult.Roles");

	(void)state;
	assert_true(json_is_array(roles));
	assert_int_equal(json_array_size(roles), 2);
	assert_string_equal(awsxml_str(roles, "0.RoleName"), "kiln-trainer");
	assert_string_equal(awsxml_str(roles, "1.Arn"), "arn:aws:iam::123456789012:role/kiln-fsx");
	assert_string_equal(awsxml_str(roles, "0.AssumeRolePolicyDocument"),
			    "%7B%22Version%22%3A%222012-10-17%22%7D");
	assert_string_equal(awsxml_str(v, "ListRolesResponse.ResponseMetadata.RequestId"),
			    "20f7279f-99ee-11e1-a4c3-27EXAMPLE804");
	json_decref(v);
}

static void test_list_roles_with_one_member_is_an_array_of_one(void **state)
{
	json_t *v = parse_ok("<ListRolesResponse " IAM_NS "><ListRolesResult>"
			     "<IsTruncated>true</IsTruncated><Marker>AAEAAQ==</Marker>"
			     "<Roles><member><RoleName>kiln-trainer</RoleName></member></Roles>"
			     "</ListRolesResult></ListRolesResponse>");

	(void)state;
	assert_json(awsxml_get(v, "ListRolesResponse.ListRolesResult"),
		    "{\"IsTruncated\": \"true\", \"Marker\": \"AAEAAQ==\","
		    " \"Roles\": [{\"RoleName\": \"kiln-trainer\"}]}");
	json_decref(v);
}

static void test_get_role_policy_keeps_the_document_text_as_sent(void **state)
{
	json_t *v = parse_ok(
	    "<GetRolePolicyResponse " IAM_NS ">\n"
	    "<GetRolePolicyResult>\n"
	    "  <PolicyName>kiln-s3-state</PolicyName>\n"
	    "  <RoleName>kiln-trainer</RoleName>\n"
	    "  <PolicyDocument>\n"
	    "  %7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A"
	    "%22Allow%22%2C%22Action%22%3A%22s3%3A%2A%22%2C%22Resource%22%3A%22%2A%22%7D%5D%7D"
	    "</PolicyDocument>\n"
	    "</GetRolePolicyResult>\n"
	    "<ResponseMetadata><RequestId>7e7cd8bc-99ef-11e1-a4c3-27EXAMPLE804</RequestId>"
	    "</ResponseMetadata>\n"
	    "</GetRolePolicyResponse>\n");

	(void)state;
	assert_string_equal(awsxml_str(v, "GetRolePolicyResponse.GetRolePolicyResult.PolicyName"),
			    "kiln-s3-state");
	/* Leading whitespace inside a text element is data, not layout. */
	assert_string_equal(
	    awsxml_str(v, "GetRolePolicyResponse.GetRolePolicyResult.PolicyDocument"),
	    "\n  %7B%22Version%22%3A%222012-10-17%22%2C%22Statement%22%3A%5B%7B%22Effect%22%3A"
	    "%22Allow%22%2C%22Action%22%3A%22s3%3A%2A%22%2C%22Resource%22%3A%22%2A%22%7D%5D%7D");
	json_decref(v);
}

static void test_iam_tags_become_an_object(void **state)
{
	json_t *v = parse_ok("<ListRoleTagsResponse " IAM_NS ">\n"
			     "  <ListRoleTagsResult>\n"
			     "    <IsTruncated>false</IsTruncated>\n"
			     "    <Tags>\n"
			     "      <member><Key>Dept</Key><Value>Accounting</Value></member>\n"
			     "      <member><Key>kiln:workspace</Key><Value>prod</Value></member>\n"
			     "    </Tags>\n"
			     "  </ListRoleTagsResult>\n"
			     "  <ResponseMetadata><RequestId>EXAMPLE8-90ab</RequestId>"
			     "</ResponseMetadata>\n"
			     "</ListRoleTagsResponse>\n");

	(void)state;
	assert_json_new(awsxml_tags(v, "ListRoleTagsResponse.ListRoleTagsResult.Tags"),
			"{\"Dept\": \"Accounting\", \"kiln:workspace\": \"prod\"}");
	json_decref(v);
}

/* --- S3 ------------------------------------------------------------------ */

static void test_s3_versioning_status_is_read(void **state)
{
	json_t *v = parse_ok(XML_DECL "<VersioningConfiguration " S3_NS
				      "><Status>Enabled</Status></VersioningConfiguration>");

	(void)state;
	assert_json(v, "{\"VersioningConfiguration\": {\"Status\": \"Enabled\"}}");
	assert_string_equal(awsxml_str(v, "VersioningConfiguration.Status"), "Enabled");
	json_decref(v);
}

static void test_s3_versioning_never_configured_has_no_status(void **state)
{
	json_t *v = parse_ok(XML_DECL "<VersioningConfiguration " S3_NS "/>");

	(void)state;
	assert_json(v, "{\"VersioningConfiguration\": \"\"}");
	assert_null(awsxml_str(v, "VersioningConfiguration.Status"));
	json_decref(v);
}

static void test_s3_bucket_tagging_tag_set_becomes_an_object(void **state)
{
	json_t *v =
	    parse_ok(XML_DECL "<Tagging " S3_NS ">\n"
			      "  <TagSet>\n"
			      "    <Tag><Key>team</Key><Value>ml-infra</Value></Tag>\n"
			      "    <Tag><Key>kiln:resource</Key><Value>aws_s3_bucket.state</Value>"
			      "</Tag>\n"
			      "  </TagSet>\n"
			      "</Tagging>\n");

	(void)state;
	assert_json_new(awsxml_tags(v, "Tagging.TagSet"),
			"{\"team\": \"ml-infra\", \"kiln:resource\": \"aws_s3_bucket.state\"}");
	assert_json_new(awsxml_tags(v, "Tagging.TagSet.Tag"),
			"{\"team\": \"ml-infra\", \"kiln:resource\": \"aws_s3_bucket.state\"}");
	json_decref(v);
}

static void test_s3_bucket_tagging_with_one_tag(void **state)
{
	json_t *v = parse_ok(XML_DECL "<Tagging " S3_NS "><TagSet>"
				      "<Tag><Key>team</Key><Value>ml-infra</Value></Tag>"
				      "</TagSet></Tagging>");

	(void)state;
	/* One Tag is an object, not a list: the accessors make it one. */
	assert_true(json_is_object(awsxml_get(v, "Tagging.TagSet.Tag")));
	assert_json_new(awsxml_tags(v, "Tagging.TagSet"), "{\"team\": \"ml-infra\"}");
	assert_json_new(awsxml_list(v, "Tagging.TagSet.Tag"),
			"[{\"Key\": \"team\", \"Value\": \"ml-infra\"}]");
	json_decref(v);
}

static const char list_buckets[] =
    XML_DECL "<ListAllMyBucketsResult " S3_NS ">\n"
	     "  <Owner>\n"
	     "    <ID>bcaf1ffd86f461ca5fb16fd081034f</ID>\n"
	     "    <DisplayName>kiln-ci</DisplayName>\n"
	     "  </Owner>\n"
	     "  <Buckets>\n"
	     "    <Bucket>\n"
	     "      <Name>kiln-state-123456789012</Name>\n"
	     "      <CreationDate>2024-01-15T10:02:12.000Z</CreationDate>\n"
	     "      <BucketRegion>us-east-1</BucketRegion>\n"
	     "    </Bucket>\n"
	     "    <Bucket>\n"
	     "      <Name>kiln-datasets</Name>\n"
	     "      <CreationDate>2024-02-01T08:30:00.000Z</CreationDate>\n"
	     "      <BucketRegion>us-west-2</BucketRegion>\n"
	     "    </Bucket>\n"
	     "  </Buckets>\n"
	     "</ListAllMyBucketsResult>\n";

static void test_s3_list_buckets_repeated_bucket_is_an_array(void **state)
{
	json_t *v = parse_ok(list_buckets);
	json_t *buckets = awsxml_list(v, "ListAllMyBucketsResult.Buckets.Bucket");

	(void)state;
	assert_int_equal(json_array_size(buckets), 2);
	assert_string_equal(awsxml_str(buckets, "0.Name"), "kiln-state-123456789012");
	assert_string_equal(awsxml_str(buckets, "1.BucketRegion"), "us-west-2");
	assert_string_equal(awsxml_str(v, "ListAllMyBucketsResult.Owner.DisplayName"), "kiln-ci");
	json_decref(buckets);
	json_decref(v);
}

static void test_s3_list_buckets_of_one_and_of_none(void **state)
{
	json_t *one = parse_ok("<ListAllMyBucketsResult " S3_NS "><Buckets>"
			       "<Bucket><Name>kiln-state</Name></Bucket>"
			       "</Buckets></ListAllMyBucketsResult>");
	json_t *none = parse_ok("<ListAllMyBucketsResult " S3_NS "><Owner><ID>bcaf</ID></Owner>"
				"<Buckets></Buckets></ListAllMyBucketsResult>");

	(void)state;
	assert_json_new(awsxml_list(one, "ListAllMyBucketsResult.Buckets.Bucket"),
			"[{\"Name\": \"kiln-state\"}]");
	/* "Bucket" at index 0 of a single object is the object itself. */
	assert_string_equal(awsxml_str(one, "ListAllMyBucketsResult.Buckets.Bucket.0.Name"),
			    "kiln-state");
	assert_json_new(awsxml_list(none, "ListAllMyBucketsResult.Buckets.Bucket"), "[]");
	json_decref(one);
	json_decref(none);
}

/* --- the conversion rules ------------------------------------------------ */

static void test_attributes_and_namespaces_are_dropped(void **state)
{
	json_t *v = parse_ok("<a xmlns=\"urn:x\" xmlns:xsi=\"http://www.w3.org/2001/"
			     "XMLSchema-instance\" xsi:type=\"Group\" id=\"1\">"
			     "<p:b xmlns:p=\"urn:p\" p:attr=\"z\">t</p:b></a>");

	(void)state;
	assert_json(v, "{\"a\": {\"b\": \"t\"}}");
	json_decref(v);
}

static void test_text_is_kept_untrimmed_and_entities_decoded(void **state)
{
	json_t *v = parse_ok("<a>\n  <b>  two  spaces  </b>\n  <c>x &amp; y &lt;z&gt; &#233;</c>"
			     "<d><![CDATA[<raw> & ]]></d><e>   </e></a>");

	(void)state;
	assert_json(v, "{\"a\": {\"b\": \"  two  spaces  \", \"c\": \"x & y <z> \\u00e9\","
		       " \"d\": \"<raw> & \", \"e\": \"   \"}}");
	json_decref(v);
}

static void test_repeated_lists_stay_separate(void **state)
{
	json_t *v = parse_ok("<a><x><item>1</item></x><x><item>2</item><item>3</item></x>"
			     "<y>1</y><x><item>4</item></x></a>");

	(void)state;
	assert_json(v, "{\"a\": {\"x\": [[\"1\"], [\"2\", \"3\"], [\"4\"]], \"y\": \"1\"}}");
	json_decref(v);
}

static void test_item_mixed_with_other_names_is_an_object(void **state)
{
	json_t *v = parse_ok("<a><item>1</item><member>2</member><item>3</item></a>");

	(void)state;
	assert_json(v, "{\"a\": {\"item\": [\"1\", \"3\"], \"member\": \"2\"}}");
	json_decref(v);
}

static void test_comments_and_processing_instructions_are_ignored(void **state)
{
	json_t *v = parse_ok("<?xml version=\"1.0\"?><!-- c --><a><!-- c --><b>1</b><?pi x?></a>");

	(void)state;
	assert_json(v, "{\"a\": {\"b\": \"1\"}}");
	json_decref(v);
}

static void test_latin1_document_is_converted_to_utf8(void **state)
{
	json_t *v = parse_ok("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf\xe9</a>");

	(void)state;
	assert_json(v, "{\"a\": \"caf\\u00e9\"}");
	json_decref(v);
}

static void test_len_bounds_the_document_not_the_nul(void **state)
{
	struct kiln_error err = {{0}};
	const char buf[] = "<a>1</a>GARBAGE";
	json_t *v = awsxml_parse(buf, 8, "s3", &err);

	(void)state;
	assert_json(v, "{\"a\": \"1\"}");
	json_decref(v);
}

/* --- hostile XML --------------------------------------------------------- */

static void test_billion_laughs_is_refused_at_the_doctype(void **state)
{
	const char *xml = "<?xml version=\"1.0\"?>\n"
			  "<!DOCTYPE lolz [\n"
			  " <!ENTITY lol \"lol\">\n"
			  " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
			  " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
			  " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
			  " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
			  "]>\n"
			  "<DescribeVpcsResponse>&lol4;</DescribeVpcsResponse>\n";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "ec2",
			   "malformed XML from ec2: document type declarations are refused, "
			   "line 2");
}

static void test_external_entity_is_refused(void **state)
{
	const char *xml = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM "
			  "\"file:///etc/passwd\">]><Error><Code>&x;</Code></Error>";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "s3",
			   "malformed XML from s3: document type declarations are refused, "
			   "line 1");
}

static void test_doctype_without_subset_is_refused(void **state)
{
	const char *xml = "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" "
			  "\"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\"><html/>";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "iam",
			   "malformed XML from iam: document type declarations are refused, "
			   "line 1");
}

static void test_undefined_entity_is_an_error(void **state)
{
	const char *xml = "<Error><Code>&x;</Code></Error>";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "s3",
			   "malformed XML from s3: Entity 'x' not defined, line 1");
}

/* depth elements <d><d>...x...</d></d>, on one line. */
static char *nested(int depth)
{
	struct strbuf sb = {0};
	int i;

	for (i = 0; i < depth; i++)
		sb_adds(&sb, "<d>");
	sb_adds(&sb, "x");
	for (i = 0; i < depth; i++)
		sb_adds(&sb, "</d>");
	return sb_detach(&sb);
}

static void test_nesting_of_100_is_refused(void **state)
{
	char *xml = nested(100);

	(void)state;
	assert_parse_fails(xml, strlen(xml), "ec2",
			   "malformed XML from ec2: elements nested deeper than 64, line 1");
	free(xml);
}

static void test_nesting_of_65_is_refused_and_64_accepted(void **state)
{
	char *deep = nested(65);
	char *ok = nested(64);
	json_t *v;
	int depth = 0;

	(void)state;
	assert_parse_fails(deep, strlen(deep), "ec2",
			   "malformed XML from ec2: elements nested deeper than 64, line 1");
	v = parse_ok(ok);
	for (json_t *p = v; json_is_object(p); p = json_object_get(p, "d"))
		depth++;
	assert_int_equal(depth, 64);
	json_decref(v);
	free(deep);
	free(ok);
}

static void test_truncated_document_names_the_open_element(void **state)
{
	const char *xml = XML_DECL "<DescribeVpcsResponse " EC2_NS ">\n"
				   "    <requestId>7a62c49f</requestId>\n"
				   "    <vpcSet>\n"
				   "        <item><vpcId>vpc-0a1b2c3d</vpc";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "ec2", "malformed XML from ec2: expected '>', line 5");
}

static void test_document_cut_between_elements(void **state)
{
	const char *xml = XML_DECL "<DescribeVpcsResponse " EC2_NS ">\n"
				   "    <requestId>7a62c49f</requestId>\n"
				   "    <vpcSet>";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "ec2",
			   "malformed XML from ec2: Premature end of data in tag vpcSet line 4, "
			   "line 4");
}

static void test_bytes_that_are_not_utf8_are_an_error(void **state)
{
	const char *xml = "<Response><Errors><Error><Code>\xff\xfe</Code></Error></Errors>"
			  "</Response>";

	(void)state;
	assert_parse_fails(xml, strlen(xml), "ec2",
			   "malformed XML from ec2: Input is not proper UTF-8, indicate encoding"
			   " ! Bytes: 0xFF 0xFE 0x3C 0x2F, line 1");
}

static void test_nul_byte_is_an_error(void **state)
{
	const char xml[] = "<a>x\0y</a>";

	(void)state;
	assert_parse_fails(xml, sizeof(xml) - 1, "ec2",
			   "malformed XML from ec2: Char 0x0 out of allowed range, line 1");
}

static void test_empty_and_garbage_bodies_are_errors(void **state)
{
	(void)state;
	assert_parse_fails("", 0, "sts", "malformed XML from sts: Document is empty, line 1");
	assert_parse_fails("Service Unavailable", 19, "sts",
			   "malformed XML from sts: Start tag expected, '<' not found, line 1");
	assert_parse_fails("<a>1</a><b/>", 12, "sts",
			   "malformed XML from sts: Extra content at the end of the document, "
			   "line 1");
	assert_parse_fails("<a><b></a>", 10, "sts",
			   "malformed XML from sts: Opening and ending tag mismatch: b line 1 and "
			   "a, line 1");
}

static void test_document_above_the_backstop_is_refused_unread(void **state)
{
	size_t len = AWSXML_MAX_SIZE + 1;
	char *big = xmalloc(len);

	(void)state;
	memset(big, ' ', len);
	assert_parse_fails(big, len, "s3",
			   "malformed XML from s3: 67108865 bytes is more than the 64 MiB kiln "
			   "reads");
	free(big);
}

/* --- accessors ----------------------------------------------------------- */

static void test_accessors_on_missing_paths(void **state)
{
	json_t *v = parse_ok(describe_vpcs);

	(void)state;
	assert_null(awsxml_get(v, "DescribeVpcsResponse.nextToken"));
	assert_null(awsxml_get(v, "NoSuchResponse.vpcSet"));
	assert_null(awsxml_get(v, "DescribeVpcsResponse.vpcSet.7"));
	assert_null(awsxml_get(v, "DescribeVpcsResponse.vpcSet.vpcId"));
	assert_null(awsxml_get(v, "DescribeVpcsResponse.requestId.x"));
	assert_null(awsxml_get(v, "DescribeVpcsResponse..requestId"));
	assert_null(awsxml_get(NULL, "DescribeVpcsResponse"));
	assert_ptr_equal(awsxml_get(v, ""), v);
	assert_ptr_equal(awsxml_get(v, NULL), v);
	/* An object at the path is not a string. */
	assert_null(awsxml_str(v, "DescribeVpcsResponse.vpcSet.0"));
	assert_null(awsxml_str(v, "DescribeVpcsResponse.nextToken"));
	assert_json_new(awsxml_list(v, "DescribeVpcsResponse.nextToken"), "[]");
	assert_json_new(awsxml_list(NULL, "x"), "[]");
	assert_json_new(awsxml_list(v, "DescribeVpcsResponse.requestId"),
			"[\"7a62c49f-347e-4fc4-9331-6e8eEXAMPLE\"]");
	assert_json_new(awsxml_tags(v, "DescribeVpcsResponse.vpcSet.0.noTags"), "{}");
	assert_json_new(awsxml_tags(NULL, "tagSet"), "{}");
	json_decref(v);
}

static void test_list_is_a_copy_the_caller_may_change(void **state)
{
	json_t *v = parse_ok(describe_vpcs);
	json_t *list = awsxml_list(v, "DescribeVpcsResponse.vpcSet");

	(void)state;
	json_array_append_new(list, json_string("extra"));
	assert_int_equal(json_array_size(awsxml_get(v, "DescribeVpcsResponse.vpcSet")), 2);
	json_decref(list);
	json_decref(v);
}

static void test_tags_skip_entries_without_a_key(void **state)
{
	json_t *v = parse_ok("<r><tagSet><item><value>orphan</value></item>"
			     "<item><key>k</key></item><item>text</item></tagSet></r>");

	(void)state;
	assert_json_new(awsxml_tags(v, "r.tagSet"), "{\"k\": \"\"}");
	json_decref(v);
}

static void test_sanitise_replaces_controls_and_bad_bytes_and_caps(void **state)
{
	char *s;

	(void)state;
	s = awsxml_sanitize("a\nb\x1b[31m\x7f\xc2\x85z", 12, 100);
	assert_string_equal(s, "a b [31m  z");
	free(s);
	s = awsxml_sanitize("\xff\xc3\xa9\xe0\x80\x80\xed\xa0\x80", 9, 100);
	assert_string_equal(s, "?\xc3\xa9??????");
	free(s);
	/* Cut at a character boundary: "é" is two bytes and does not fit whole. */
	s = awsxml_sanitize("abcde\xc3\xa9xyz", 10, 9);
	assert_string_equal(s, "abcde...");
	free(s);
	s = awsxml_sanitize("abcdef", 6, 6);
	assert_string_equal(s, "abcdef");
	free(s);
}

/* --- error responses ----------------------------------------------------- */

static void parse_error(struct aws_error *e, long status, const char *body, const char *rid_hdr,
			const char *type_hdr)
{
	aws_error_parse(e, status, body, body ? strlen(body) : 0, rid_hdr, type_hdr);
}

static void assert_aws_error(const struct aws_error *e, const char *code, const char *message,
			     const char *request_id)
{
	assert_string_equal(e->code, code);
	assert_string_equal(e->message, message);
	assert_string_equal(e->request_id, request_id);
}

static void test_ec2_error_response(void **state)
{
	struct aws_error e;
	char *d;

	(void)state;
	parse_error(&e, 400,
		    XML_DECL "<Response><Errors><Error><Code>InvalidVpcID.NotFound</Code>"
			     "<Message>The vpc ID 'vpc-0a1b2c3d' does not exist</Message></Error>"
			     "</Errors><RequestID>b25f4f8e-3e1b-4c2f-9c5c-2a6d3b8e5f10</RequestID>"
			     "</Response>",
		    NULL, NULL);
	assert_int_equal(e.status, 400);
	assert_aws_error(&e, "InvalidVpcID.NotFound", "The vpc ID 'vpc-0a1b2c3d' does not exist",
			 "b25f4f8e-3e1b-4c2f-9c5c-2a6d3b8e5f10");
	assert_true(aws_error_is_notfound(&e));
	assert_false(aws_error_is_transient(&e));
	d = aws_error_describe(&e);
	assert_string_equal(d, "InvalidVpcID.NotFound: The vpc ID 'vpc-0a1b2c3d' does not exist "
			       "(request b25f4f8e-3e1b-4c2f-9c5c-2a6d3b8e5f10)");
	free(d);
	aws_error_release(&e);
}

static void test_ec2_error_with_two_errors_takes_the_first(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 400,
		    "<Response><Errors>"
		    "<Error><Code>InvalidParameterValue</Code><Message>first</Message></Error>"
		    "<Error><Code>MissingParameter</Code><Message>second</Message></Error>"
		    "</Errors><RequestID>r-2</RequestID></Response>",
		    NULL, NULL);
	assert_aws_error(&e, "InvalidParameterValue", "first", "r-2");
	aws_error_release(&e);
}

static void test_iam_error_response(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 404,
		    "<ErrorResponse " IAM_NS ">\n"
		    "  <Error>\n"
		    "    <Type>Sender</Type>\n"
		    "    <Code>NoSuchEntity</Code>\n"
		    "    <Message>The role with name kiln-trainer cannot be found.</Message>\n"
		    "  </Error>\n"
		    "  <RequestId>4d8e1a3c-5f2b-11e9-8a4f-EXAMPLE</RequestId>\n"
		    "</ErrorResponse>\n",
		    NULL, NULL);
	assert_aws_error(&e, "NoSuchEntity", "The role with name kiln-trainer cannot be found.",
			 "4d8e1a3c-5f2b-11e9-8a4f-EXAMPLE");
	assert_true(aws_error_is_notfound(&e));
	aws_error_release(&e);
}

static void test_sts_throttling_response(void **state)
{
	struct aws_error e;
	char *d;

	(void)state;
	parse_error(&e, 400,
		    "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
		    "<Error><Type>Sender</Type><Code>Throttling</Code>"
		    "<Message>Rate exceeded</Message></Error>"
		    "<RequestId>1234-abcd-5678</RequestId></ErrorResponse>",
		    NULL, NULL);
	assert_true(aws_error_is_throttle(&e));
	assert_true(aws_error_is_transient(&e));
	d = aws_error_describe(&e);
	assert_string_equal(d, "Throttling: Rate exceeded (request 1234-abcd-5678)");
	free(d);
	aws_error_release(&e);
}

static void test_s3_error_response(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 404,
		    XML_DECL
		    "<Error><Code>NoSuchBucket</Code>"
		    "<Message>The specified bucket does not exist</Message>"
		    "<BucketName>kiln-state</BucketName>"
		    "<RequestId>4442587FB7D0A2F9</RequestId>"
		    "<HostId>eftixk72aD6Ap51TnqcoF8eFidJG9Z/2mkiDFu8yU9AS1ed4OpIszj7UDNEHGran"
		    "</HostId></Error>",
		    "ignored-because-the-body-has-one", NULL);
	assert_aws_error(&e, "NoSuchBucket", "The specified bucket does not exist",
			 "4442587FB7D0A2F9");
	assert_true(aws_error_is_notfound(&e));
	aws_error_release(&e);
}

static void test_s3_head_without_body_takes_code_from_status(void **state)
{
	static const struct {
		long status;
		const char *code;
	} cases[] = {
	    {404, "NotFound"}, {403, "AccessDenied"}, {301, "PermanentRedirect"},
	    {400, "HTTP400"},  {500, "HTTP500"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct aws_error e;

		aws_error_parse(&e, cases[i].status, NULL, 0, "TX7Y0QH3GZ2RPKRK", NULL);
		assert_aws_error(&e, cases[i].code, "", "TX7Y0QH3GZ2RPKRK");
		aws_error_release(&e);
	}
}

static void test_s3_head_404_is_notfound_and_403_is_denied(void **state)
{
	struct aws_error e;
	char *d;

	(void)state;
	parse_error(&e, 404, "", NULL, NULL);
	assert_true(aws_error_is_notfound(&e));
	d = aws_error_describe(&e);
	assert_string_equal(d, "NotFound");
	free(d);
	aws_error_release(&e);
	parse_error(&e, 403, " \r\n", NULL, NULL);
	assert_aws_error(&e, "AccessDenied", "", "");
	assert_true(aws_error_is_denied(&e));
	aws_error_release(&e);
}

static void test_fsx_json_error_with_qualified_type(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 400,
		    "{\"__type\":\"com.amazonaws.fsx#BadRequest\","
		    "\"Message\":\"StorageCapacity must be a multiple of 2400 GiB\"}",
		    "2b8e7a1c-6f0d-4e39-a4f0-EXAMPLE", NULL);
	assert_aws_error(&e, "BadRequest", "StorageCapacity must be a multiple of 2400 GiB",
			 "2b8e7a1c-6f0d-4e39-a4f0-EXAMPLE");
	aws_error_release(&e);
}

static void test_fsx_json_error_with_bare_type(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 400,
		    "{\"__type\":\"FileSystemNotFound\","
		    "\"message\":\"File system 'fs-0123456789abcdef0' does not exist.\"}",
		    "5c7e0a9d", NULL);
	assert_aws_error(&e, "FileSystemNotFound",
			 "File system 'fs-0123456789abcdef0' does not exist.", "5c7e0a9d");
	assert_true(aws_error_is_notfound(&e));
	aws_error_release(&e);
}

static void test_efs_json_error_takes_code_from_the_header(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 404,
		    "{\"ErrorCode\":\"MountTargetNotFound\","
		    "\"Message\":\"Mount target 'fsmt-1234' does not exist.\"}",
		    "a1b2c3d4-EXAMPLE",
		    "MountTargetNotFound:http://internal.amazon.com/coral/com.amazonaws.magnolia/");
	assert_aws_error(&e, "MountTargetNotFound", "Mount target 'fsmt-1234' does not exist.",
			 "a1b2c3d4-EXAMPLE");
	assert_true(aws_error_is_notfound(&e));
	aws_error_release(&e);
	/* Without the header the body's own ErrorCode member names it. */
	parse_error(&e, 404,
		    "{\"ErrorCode\":\"FileSystemNotFound\",\"Message\":\"File system 'fs-1' does "
		    "not exist.\"}",
		    NULL, NULL);
	assert_aws_error(&e, "FileSystemNotFound", "File system 'fs-1' does not exist.", "");
	aws_error_release(&e);
}

static void test_json_error_header_wins_over_the_body_type(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 400, "{\"__type\":\"com.amazon.coral.service#SerializationException\"}",
		    NULL, "ThrottlingException:http://internal.amazon.com/coral/");
	assert_aws_error(&e, "ThrottlingException", "", "");
	assert_true(aws_error_is_throttle(&e));
	aws_error_release(&e);
}

static void test_garbage_body_keeps_the_status_and_a_sanitised_snippet(void **state)
{
	struct aws_error e;
	char *d;

	(void)state;
	parse_error(&e, 502,
		    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body></body>"
		    "</html>\r\n",
		    NULL, NULL);
	assert_aws_error(&e, "HTTP502",
			 "<html>  <head><title>502 Bad Gateway</title></head>  <body></body>"
			 "</html>  ",
			 "");
	assert_true(aws_error_is_transient(&e));
	d = aws_error_describe(&e);
	assert_string_equal(d, "HTTP502: <html>  <head><title>502 Bad Gateway</title></head>  "
			       "<body></body></html>  ");
	free(d);
	aws_error_release(&e);

	parse_error(&e, 400, "not xml \x1b]0;pwned\x07 \xff", "rid-9", NULL);
	assert_aws_error(&e, "HTTP400", "not xml  ]0;pwned  ?", "rid-9");
	aws_error_release(&e);
}

static void test_garbage_body_message_is_the_first_200_bytes(void **state)
{
	struct aws_error e;
	char body[1000];

	(void)state;
	memset(body, 'x', sizeof(body));
	aws_error_parse(&e, 503, body, sizeof(body), NULL, NULL);
	assert_string_equal(e.code, "HTTP503");
	assert_int_equal(strlen(e.message), 200);
	assert_int_equal(strspn(e.message, "x"), 200);
	aws_error_release(&e);
}

static void test_long_and_hostile_messages_are_capped_and_cleaned(void **state)
{
	struct strbuf body = {0};
	struct aws_error e;
	int i;

	(void)state;
	/* XML 1.0 allows no control character but tab, newline and return. */
	sb_adds(&body, "<Response><Errors><Error><Code>Unsupported\t[2J</Code><Message>");
	for (i = 0; i < 200; i++)
		sb_adds(&body, "line\n");
	sb_adds(&body, "</Message></Error></Errors><RequestID>r</RequestID></Response>");
	aws_error_parse(&e, 400, body.buf, body.len, NULL, NULL);
	assert_string_equal(e.code, "Unsupported [2J");
	assert_int_equal(strlen(e.message), 500);
	assert_true(str_starts_with(e.message, "line line "));
	assert_true(str_ends_with(e.message, "..."));
	assert_null(strchr(e.message, '\n'));
	aws_error_release(&e);
	sb_release(&body);
}

static void test_xml_of_another_shape_is_treated_as_garbage(void **state)
{
	struct aws_error e;

	(void)state;
	parse_error(&e, 500, "<Oops><Reason>x</Reason></Oops>", "hdr-id",
		    "InternalFailure:http://x/");
	assert_aws_error(&e, "InternalFailure", "<Oops><Reason>x</Reason></Oops>", "hdr-id");
	aws_error_release(&e);
	/* An error element that names no code keeps its message. */
	parse_error(&e, 409, "<Error><Message>busy</Message></Error>", NULL, NULL);
	assert_aws_error(&e, "HTTP409", "busy", "");
	aws_error_release(&e);
}

static void test_release_twice_and_on_zeroed_error_is_safe(void **state)
{
	struct aws_error e = {0};

	(void)state;
	aws_error_release(&e);
	parse_error(&e, 500, "x", NULL, NULL);
	aws_error_release(&e);
	aws_error_release(&e);
	aws_error_release(NULL);
}

/* --- classification ------------------------------------------------------ */

enum kind {
	THROTTLE = 1 << 0,
	TRANSIENT = 1 << 1,
	DENIED = 1 << 2,
	AUTH = 1 << 3,
	CAPACITY = 1 << 4,
	NOTFOUND = 1 << 5,
};

static const struct {
	long status;
	char *code; /* struct aws_error's own type: it owns what it holds */
	char *message;
	unsigned kinds;
} classify_cases[] = {
    {400, "Throttling", "Rate exceeded", THROTTLE | TRANSIENT},
    {400, "ThrottlingException", "", THROTTLE | TRANSIENT},
    {503, "RequestLimitExceeded", "", THROTTLE | TRANSIENT},
    {503, "SlowDown", "Please reduce your request rate.", THROTTLE | TRANSIENT},
    {429, "TooManyRequestsException", "", THROTTLE | TRANSIENT},
    {400, "RequestThrottled", "", THROTTLE | TRANSIENT},
    {400, "RequestThrottledException", "", THROTTLE | TRANSIENT},
    {400, "ProvisionedThroughputExceededException", "", THROTTLE | TRANSIENT},
    {429, "HTTP429", "", THROTTLE | TRANSIENT},
    {500, "InternalError", "", TRANSIENT},
    {500, "InternalFailure", "", TRANSIENT},
    {503, "ServiceUnavailable", "", TRANSIENT},
    {400, "RequestTimeout", "", TRANSIENT},
    {408, "RequestTimeoutException", "", TRANSIENT},
    {502, "HTTP502", "", TRANSIENT},
    {504, "HTTP504", "", TRANSIENT},
    {400, "IdempotentParameterMismatch", "", 0},
    {500, "IdempotentParameterMismatch", "", 0},
    {400, "InvalidParameterValue", "", 0},
    {403, "UnauthorizedOperation", "You are not authorized to perform this operation.", DENIED},
    {403, "AccessDenied", "", DENIED},
    {400, "AccessDeniedException", "", DENIED},
    {401, "UnauthorizedAccess", "", DENIED},
    {403, "HTTP403", "", DENIED},
    {403, "Forbidden", "", DENIED},
    {403, "SignatureDoesNotMatch", "", AUTH},
    {403, "InvalidClientTokenId", "", AUTH},
    {401, "AuthFailure", "", AUTH},
    {403, "InvalidAccessKeyId", "", AUTH},
    {400, "ExpiredToken", "", AUTH},
    {400, "ExpiredTokenException", "", AUTH},
    {403, "IncompleteSignature", "", AUTH},
    {403, "MissingAuthenticationToken", "", AUTH},
    {400, "UnrecognizedClientException", "", AUTH},
    {500, "InsufficientInstanceCapacity", "", CAPACITY | TRANSIENT},
    {400, "InsufficientInstanceCapacity", "", CAPACITY},
    {400, "InsufficientCapacity", "", CAPACITY},
    {400, "InsufficientHostCapacity", "", CAPACITY},
    {400, "InsufficientReservedInstanceCapacity", "", CAPACITY},
    {400, "Unsupported", "There is no capacity for p5.48xlarge in us-east-1e", 0},
    {400, "InvalidVpcID.NotFound", "", NOTFOUND},
    {400, "InvalidGroup.NotFound", "", NOTFOUND},
    {404, "NoSuchEntity", "", NOTFOUND},
    {404, "NoSuchBucket", "", NOTFOUND},
    {400, "FileSystemNotFound", "", NOTFOUND},
    {400, "DataRepositoryAssociationNotFound", "", NOTFOUND},
    {404, "MountTargetNotFound", "", NOTFOUND},
    {404, "NotFound", "", NOTFOUND},
    {404, "HTTP404", "", NOTFOUND},
    {404, "NoSuchKey", "", 0},
    {400, "HTTP400", "", 0},
    {400, "NotFoundish", "", 0},
};

static void test_classification_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(classify_cases); i++) {
		struct aws_error e = {
		    .status = classify_cases[i].status,
		    .code = classify_cases[i].code,
		    .message = classify_cases[i].message,
		    .request_id = "",
		};
		unsigned got = (aws_error_is_throttle(&e) ? THROTTLE : 0) |
			       (aws_error_is_transient(&e) ? TRANSIENT : 0) |
			       (aws_error_is_denied(&e) ? DENIED : 0) |
			       (aws_error_is_auth(&e) ? AUTH : 0) |
			       (aws_error_is_capacity(&e) ? CAPACITY : 0) |
			       (aws_error_is_notfound(&e) ? NOTFOUND : 0);

		if (got != classify_cases[i].kinds)
			fail_msg("%ld %s: kinds 0x%x, expected 0x%x", e.status, e.code, got,
				 classify_cases[i].kinds);
	}
}

static void test_describe_leaves_out_empty_parts(void **state)
{
	struct aws_error e = {.status = 400,
			      .code = (char *)"Throttling",
			      .message = (char *)"",
			      .request_id = (char *)"rid-1"};
	char *d;

	(void)state;
	d = aws_error_describe(&e);
	assert_string_equal(d, "Throttling (request rid-1)");
	free(d);
	e.message = (char *)"Rate exceeded";
	e.request_id = (char *)"";
	d = aws_error_describe(&e);
	assert_string_equal(d, "Throttling: Rate exceeded");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_describe_vpcs_gives_an_array_of_vpcs),
	    cmocka_unit_test(test_item_list_of_one_is_still_an_array),
	    cmocka_unit_test(test_ec2_tag_set_of_one_becomes_an_object),
	    cmocka_unit_test(test_ec2_tag_set_of_three_keeps_an_empty_value),
	    cmocka_unit_test(test_empty_vpc_set_lists_as_empty_array),
	    cmocka_unit_test(test_run_instances_nests_sets_inside_the_reservation),
	    cmocka_unit_test(test_list_roles_members_become_an_array),
	    cmocka_unit_test(test_list_roles_with_one_member_is_an_array_of_one),
	    cmocka_unit_test(test_get_role_policy_keeps_the_document_text_as_sent),
	    cmocka_unit_test(test_iam_tags_become_an_object),
	    cmocka_unit_test(test_s3_versioning_status_is_read),
	    cmocka_unit_test(test_s3_versioning_never_configured_has_no_status),
	    cmocka_unit_test(test_s3_bucket_tagging_tag_set_becomes_an_object),
	    cmocka_unit_test(test_s3_bucket_tagging_with_one_tag),
	    cmocka_unit_test(test_s3_list_buckets_repeated_bucket_is_an_array),
	    cmocka_unit_test(test_s3_list_buckets_of_one_and_of_none),
	    cmocka_unit_test(test_attributes_and_namespaces_are_dropped),
	    cmocka_unit_test(test_text_is_kept_untrimmed_and_entities_decoded),
	    cmocka_unit_test(test_repeated_lists_stay_separate),
	    cmocka_unit_test(test_item_mixed_with_other_names_is_an_object),
	    cmocka_unit_test(test_comments_and_processing_instructions_are_ignored),
	    cmocka_unit_test(test_latin1_document_is_converted_to_utf8),
	    cmocka_unit_test(test_len_bounds_the_document_not_the_nul),
	    cmocka_unit_test(test_billion_laughs_is_refused_at_the_doctype),
	    cmocka_unit_test(test_external_entity_is_refused),
	    cmocka_unit_test(test_doctype_without_subset_is_refused),
	    cmocka_unit_test(test_undefined_entity_is_an_error),
	    cmocka_unit_test(test_nesting_of_100_is_refused),
	    cmocka_unit_test(test_nesting_of_65_is_refused_and_64_accepted),
	    cmocka_unit_test(test_truncated_document_names_the_open_element),
	    cmocka_unit_test(test_document_cut_between_elements),
	    cmocka_unit_test(test_bytes_that_are_not_utf8_are_an_error),
	    cmocka_unit_test(test_nul_byte_is_an_error),
	    cmocka_unit_test(test_empty_and_garbage_bodies_are_errors),
	    cmocka_unit_test(test_document_above_the_backstop_is_refused_unread),
	    cmocka_unit_test(test_accessors_on_missing_paths),
	    cmocka_unit_test(test_list_is_a_copy_the_caller_may_change),
	    cmocka_unit_test(test_tags_skip_entries_without_a_key),
	    cmocka_unit_test(test_sanitise_replaces_controls_and_bad_bytes_and_caps),
	    cmocka_unit_test(test_ec2_error_response),
	    cmocka_unit_test(test_ec2_error_with_two_errors_takes_the_first),
	    cmocka_unit_test(test_iam_error_response),
	    cmocka_unit_test(test_sts_throttling_response),
	    cmocka_unit_test(test_s3_error_response),
	    cmocka_unit_test(test_s3_head_without_body_takes_code_from_status),
	    cmocka_unit_test(test_s3_head_404_is_notfound_and_403_is_denied),
	    cmocka_unit_test(test_fsx_json_error_with_qualified_type),
	    cmocka_unit_test(test_fsx_json_error_with_bare_type),
	    cmocka_unit_test(test_efs_json_error_takes_code_from_the_header),
	    cmocka_unit_test(test_json_error_header_wins_over_the_body_type),
	    cmocka_unit_test(test_garbage_body_keeps_the_status_and_a_sanitised_snippet),
	    cmocka_unit_test(test_garbage_body_message_is_the_first_200_bytes),
	    cmocka_unit_test(test_long_and_hostile_messages_are_capped_and_cleaned),
	    cmocka_unit_test(test_xml_of_another_shape_is_treated_as_garbage),
	    cmocka_unit_test(test_release_twice_and_on_zeroed_error_is_safe),
	    cmocka_unit_test(test_classification_table),
	    cmocka_unit_test(test_describe_leaves_out_empty_parts),
	};

	return cmocka_run_group_tests_name("awsxml", tests, NULL, NULL);
}
