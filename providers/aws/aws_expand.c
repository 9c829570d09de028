/*
 * aws_expand.c - a validated spec as the aws provider's desired resources.
 *
 *   aws_vpc.main                   when anything needs a network
 *   aws_subnet.ZONE                one per zone of provider.zone, in order of preference
 *   aws_security_group.main        admits all traffic from itself, plus network.ingress
 *   aws_internet_gateway.main      with the default route, only when a group is public
 *   aws_placement_group.fabric     a cluster placement group, when fabric is not none
 *   aws_instance_group.GROUP       one RunInstances gang per compute group
 *   aws_s3_bucket.STORE            per object store
 *   aws_fsx_lustre.STORE           per lustre store, in the nodes' zone's subnet;
 *   aws_fsx_import.STORE           and its import from an object store
 *   aws_efs.STORE                  per nfs store,
 *   aws_efs_mount_target.STORE     with a mount target in the nodes' zone's subnet
 *   aws_iam_role.ROLE              per IAM role: the role, its inline policy, its
 *                                  instance profile (read and write name buckets;
 *                                  nfs_read, nfs_write and allow when not empty;
 *                                  after the EFS file systems it names)
 *   aws_ssm_parameter.NAME         with scheduler: slurm, what the nodes read at
 *                                  boot (aws_slurm.c)
 *
 * With one zone, file systems come before the nodes that mount them. With
 * a list of zones the node groups launch one after another in one zone
 * (the first with capacity for all: aws_zones.c), and the zone-bound
 * storage (lustre, mount targets) is made after them, in their zone.
 *
 * Subnets split the VPC's range: /20s of a /16 (four more prefix bits, at
 * most /28), the first to the first zone.
 */
#include "aws_int.h"

#include "bootstrap.h"
#include "expand.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int expand_network(json_t *all, const struct spec *spec, const struct prov_ctx *ctx,
			  struct kiln_error *err)
{
	json_t *r, *ingress = json_array();
	uint32_t addr;
	int prefix, sub;
	bool host, public = false;
	size_t i;

	if (cidr_parse(spec->network.cidr, &addr, &prefix, &host) < 0) {
		json_decref(ingress);
		kiln_error_set(err, "aws: network.cidr '%s' is not a CIDR", spec->network.cidr);
		return -1;
	}
	sub = prefix + 4 > 28 ? 28 : prefix + 4;
	if ((size_t)1 << (sub - prefix) < ctx->nzones) {
		json_decref(ingress);
		kiln_error_set(
		    err, "aws: network.cidr %s is too small for a subnet in each of %zu zones",
		    spec->network.cidr, ctx->nzones);
		kiln_error_hint(err, "use a larger range (a /16 splits into 16 subnets)");
		return -1;
	}
	r = expand_resource(all, "aws_vpc", "main");
	expand_attr(r, "cidr", json_string(spec->network.cidr));
	for (i = 0; i < ctx->nzones; i++) {
		char *cidr = cidr_format(addr + (uint32_t)(i << (32 - sub)), sub);

		r = expand_resource(all, "aws_subnet", ctx->zones[i]);
		expand_attr(r, "zone", json_string(ctx->zones[i]));
		expand_attr(r, "cidr", json_string(cidr));
		expand_dep(r, "aws_vpc", "main");
		free(cidr);
	}
	for (i = 0; i < spec->network.ningress; i++) {
		const struct spec_ingress *in = &spec->network.ingress[i];

		json_array_append_new(
		    ingress, json_pack("{s:i, s:i, s:s, s:s}", "port_from", in->port_from,
				       "port_to", in->port_to, "protocol",
				       in->protocol ? in->protocol : "tcp", "from", in->from));
	}
	r = expand_resource(all, "aws_security_group", "main");
	expand_attr(r, "ingress", ingress);
	expand_dep(r, "aws_vpc", "main");
	for (i = 0; i < spec->ngroups; i++)
	public |= spec->groups[i].public;
	if (public) {
		r = expand_resource(all, "aws_internet_gateway", "main");
		expand_dep(r, "aws_vpc", "main");
	}
	if (spec->network.fabric != FABRIC_NONE) {
		r = expand_resource(all, "aws_placement_group", "fabric");
		expand_attr(r, "strategy", json_string("cluster"));
	}
	return 0;
}

/*
 * Where a node finds a file system it mounts. With one zone the file
 * systems are made first: their names go into the document (placeholders
 * filled at launch from the recorded dependencies). With a list of zones a
 * Lustre file system is made after the nodes: the node finds it at boot by
 * kiln's tags, once it is AVAILABLE (fsx:DescribeFileSystems, which its role
 * is given). An EFS file system is regional and made before the nodes; only
 * its mount target follows them, so its name is known and the mount retries.
 */
static void aws_boot_source(const struct spec *spec, const struct spec_store *s, bool zoned,
			    char **source, char **find, char **why)
{
	char *key = xasprintf("%s:%s", s->tier == TIER_LUSTRE ? "lustre" : "nfs", s->name);

	if (s->tier == TIER_LUSTRE && zoned) {
		char *ws = bootstrap_placeholder("workspace");

		*find = xasprintf(
		    "aws fsx describe-file-systems --region %s --output text --query "
		    "\"FileSystems[?Lifecycle=='AVAILABLE' && Tags[?Key=='kiln:cluster' && "
		    "Value=='%s'] && Tags[?Key=='kiln:workspace' && Value=='%s'] && "
		    "Tags[?Key=='kiln:address' && Value=='aws_fsx_lustre.%s']] | "
		    "[0].[DNSName, LustreConfiguration.MountName]\" | { read -r dns name && [ -n "
		    "\"$name\" ] && [ \"$dns\" != None ] && printf '%%s@tcp:/%%s\\n' \"$dns\" "
		    "\"$name\"; }",
		    spec->provider.region, spec->cluster, ws, s->name);
		*why = xstrdup("FSx for Lustre made after the nodes, in their zone: found at boot "
			       "by its kiln tags once AVAILABLE");
		free(ws);
	} else {
		*source = bootstrap_placeholder(key);
		*why = xstrdup(s->tier == TIER_LUSTRE
				   ? "FSx for Lustre DNSName@tcp:/MountName, made before the nodes"
			       : zoned ? "EFS FILE_SYSTEM.efs.REGION.amazonaws.com, its mount "
					 "target made after the nodes: the mount retries"
				       : "EFS FILE_SYSTEM.efs.REGION.amazonaws.com, made before "
					 "the nodes");
	}
	free(key);
}

/* amazon-efs-utils mounts an EFS file system by its id, with TLS in transit. */
static char *aws_efs_helper_source(const struct spec_store *s)
{
	char *key = xasprintf("efs:%s", s->name), *p = bootstrap_placeholder(key), *out;

	out = xasprintf("%s:/", p);
	free(p);
	free(key);
	return out;
}

/*
 * The CloudWatch agent on a GPU group (issue 17): each GPU's utilization
 * and memory, per device, as CWAgent's nvidia_smi_* metrics, with the
 * InstanceId dimension and aggregated by it (what aws_metrics.c reads for
 * kiln status). The schema is the agent's: "Manually create or edit the
 * CloudWatch agent configuration file" (metrics.namespace,
 * append_dimensions, aggregation_dimensions, metrics_collection_interval)
 * and "Collect NVIDIA GPU metrics" (metrics_collected.nvidia_gpu and its
 * measurement names), Amazon CloudWatch User Guide. Started as that guide's
 * "Start the CloudWatch agent using the command line" does, where the
 * package installs amazon-cloudwatch-agent-ctl. PutMetricData is allowed
 * into CWAgent only (aws_policy.c, KilnGpuMetrics).
 */
#define AWS_CWAGENT_DIR "/opt/aws/amazon-cloudwatch-agent"
#define AWS_CWAGENT_CONFIG AWS_CWAGENT_DIR "/etc/kiln.json"
static const struct boot_agent aws_cwagent = {
    "the CloudWatch agent", AWS_CWAGENT_CONFIG,
    "{\n"
    "  \"agent\": {\"metrics_collection_interval\": 60},\n"
    "  \"metrics\": {\n"
    "    \"namespace\": \"" AWS_GPU_METRICS_NAMESPACE "\",\n"
    "    \"append_dimensions\": {\"InstanceId\": \"${aws:InstanceId}\"},\n"
    "    \"aggregation_dimensions\": [[\"InstanceId\"]],\n"
    "    \"metrics_collected\": {\n"
    "      \"nvidia_gpu\": {\n"
    "        \"measurement\": [\"utilization_gpu\", \"utilization_memory\", "
    "\"memory_used\", \"memory_total\"],\n"
    "        \"metrics_collection_interval\": 60\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}\n",
    "command -v amazon-cloudwatch-agent-ctl >/dev/null 2>&1 || [ -x " AWS_CWAGENT_DIR
    "/bin/amazon-cloudwatch-agent-ctl ]",
    "PATH=\"$PATH:" AWS_CWAGENT_DIR "/bin\" amazon-cloudwatch-agent-ctl -a fetch-config -m ec2 "
    "-s -c file:" AWS_CWAGENT_CONFIG};

/*
 * How a node reads its own tag "$1" (the node TTL, issue 29): instance tags
 * in the instance metadata (the launch enables InstanceMetadataTags), with
 * an IMDSv2 token; no API call and no IAM permission. 404 on the key is
 * "no such tag" only when the tag listing itself answers: with tags not in
 * the metadata, the listing is a 404 too, and the node cannot tell.
 * KILN_IMDS stands in for the address in the boot tests.
 */
#define AWS_IMDS "\"${KILN_IMDS:-http://169.254.169.254}\""
static const char aws_boot_read_tag[] =
    "local t o\n"
    "\tt=$(curl -fs -m 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' " AWS_IMDS
    "/latest/api/token) || return 1\n"
    "\to=$(curl -s -m 5 -w '\\n%{http_code}' -H \"X-aws-ec2-metadata-token: $t\" " AWS_IMDS
    "\"/latest/meta-data/tags/instance/$1\") || return 1\n"
    "\tcase ${o##*$'\\n'} in\n"
    "\t200) echo \"${o%$'\\n'*}\" && return 0 ;;\n"
    "\t404) curl -fs -m 5 -o /dev/null -H \"X-aws-ec2-metadata-token: $t\" " AWS_IMDS
    "/latest/meta-data/tags/instance && return 3 ;;\n"
    "\tesac\n"
    "\treturn 1";

#define AWS_BOOT_CLOUD                                                                             \
	{                                                                                          \
		NULL, aws_boot_source, "mount.efs", aws_efs_helper_source, "efs",                  \
		    "tls,_netdev,nofail", aws_slurm_group_script, &aws_cwagent, aws_boot_read_tag  \
	}

static char *aws_boot_report(const char *region)
{
	return xasprintf(
	    "local tok iid\n"
	    "\ttok=$(curl -fsS --retry 5 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 300' "
	    "http://169.254.169.254/latest/api/token) || return 1\n"
	    "\tiid=$(curl -fsS --retry 5 -H \"X-aws-ec2-metadata-token: $tok\" "
	    "http://169.254.169.254/latest/meta-data/instance-id) || return 1\n"
	    "\taws ec2 create-tags --region %s --resources \"$iid\" --tags "
	    "\"[{\\\"Key\\\":\\\"kiln:health\\\",\\\"Value\\\":\\\"$1\\\"}]\"",
	    region);
}

void aws_boot_check(const struct spec *spec, struct diags *d)
{
	struct boot_cloud cloud = AWS_BOOT_CLOUD;
	char *report = aws_boot_report(spec->provider.region ? spec->provider.region : "us-east-1");

	cloud.report = report;
	bootstrap_check_spec(&catalog_aws, spec, &cloud,
			     spec->provider.nzones > 1 && spec->ngroups > 0, d);
	free(report);
}

/* The group's user data: its digest (an input), the document, and the plan's note. */
static int group_user_data(json_t *r, const struct spec *spec, const struct prov_ctx *ctx,
			   const struct spec_group *g, const struct catalog_type *t, bool efa,
			   bool zoned, struct kiln_error *err)
{
	char *addr = xasprintf("aws_instance_group.%s", g->name);
	struct boot_cloud cloud = AWS_BOOT_CLOUD;
	char *report = aws_boot_report(ctx->region);
	int rc;

	cloud.report = report;
	rc = bootstrap_group_attrs(r, "aws: ", spec, g, addr, t, efa, &cloud, zoned, err);
	free(report);
	free(addr);
	return rc;
}

static int expand_group(json_t *all, const struct spec *spec, const struct prov_ctx *ctx,
			const struct spec_group *g, bool zoned, const char *prev[2],
			const struct spec_store *const *fs, size_t nfs, struct kiln_error *err)
{
	const struct catalog_type *t;
	bool efa, in_pg;
	char *resolved;
	json_t *r, *zones = json_array();
	size_t i;

	if (expand_group_type("aws: ", &catalog_aws, spec, g, &t, &resolved, err) < 0) {
		json_decref(zones);
		return -1;
	}
	efa = spec->network.fabric == FABRIC_EFA && t->efa;
	/* EC2 gives a public address only to an instance launched with one interface. */
	if (efa && g->public && t->efa_interfaces > 1) {
		char *at = expand_where(spec, ydoc_get(g->node, "public"));

		kiln_error_set(
		    err,
		    "aws: %scompute.%s: public: true cannot go with EFA on the %d network "
		    "cards of %s (EC2 gives a public address only to an instance with one "
		    "network interface)",
		    at, g->name, t->efa_interfaces, t->name);
		kiln_error_hint(err, "reach the nodes through a public login group, as "
				     "examples/llm-pretrain.yaml does");
		free(at);
		free(resolved);
		json_decref(zones);
		return -1;
	}
	/* GPU nodes share the fabric's placement group; CPU nodes (login, head) stay out. */
	in_pg = spec->network.fabric != FABRIC_NONE && t->gpu &&
		(spec->network.fabric != FABRIC_EFA || efa);
	for (i = 0; i < ctx->nzones; i++)
		json_array_append_new(zones, json_string(ctx->zones[i]));
	r = expand_resource(all, "aws_instance_group", g->name);
	expand_group_attrs(r, g, t->name, zones, json_string(g->disk.type ? g->disk.type : "gp3"),
			   efa, in_pg);
	expand_access_attrs(r, spec);
	/*
	 * Spot is the market's to say (market: spot and capacity: spot are one
	 * launch): EC2 reports it as the instance's lifecycle, which the live
	 * view reads back as market, so capacity names only a reservation, a
	 * resource group of them or a block (aws_capacity.c, aws_capacity_live).
	 */
	if (g->capacity.kind == CAPACITY_SPOT)
		json_object_del(json_object_get(r, "attrs"), "capacity");
	if (resolved)
		expand_why(r, "instance_type", resolved);
	if (spec->network.fabric == FABRIC_EFA && !efa)
		expand_why(
		    r, "efa",
		    xasprintf("%s has no EFA: this group reaches the fabric's network over ENA%s",
			      t->name, t->gpu ? " and stays out of the placement group" : ""));
	for (i = 0; i < ctx->nzones; i++)
		expand_dep(r, "aws_subnet", ctx->zones[i]);
	expand_dep(r, "aws_security_group", "main");
	if (g->public)
		expand_dep(r, "aws_internet_gateway", "main");
	if (in_pg)
		expand_dep(r, "aws_placement_group", "fabric");
	/*
	 * The fabric's groups launch one after another: a cluster placement
	 * group lives in one zone, and a group joins the zone the ones before
	 * it landed in (after a capacity fallback, not the first listed). With a
	 * list of zones every group does, so the nodes and the storage they
	 * mount share one zone. Only placement group members depend on the one
	 * before (prev[1]); other groups are only made after the last (prev[0]),
	 * so replacing one group does not replace the rest.
	 */
	if (in_pg && prev[1])
		expand_dep(r, "aws_instance_group", prev[1]);
	else if (zoned && prev[0])
		expand_after(r, "aws_instance_group", prev[0]);
	if (in_pg || zoned)
		prev[0] = g->name;
	if (in_pg)
		prev[1] = g->name;
	if (g->role.name && spec_role_find(spec, g->role.name))
		expand_dep(r, "aws_iam_role", g->role.name);
	if (g->capacity.kind == CAPACITY_BLOCK) {
		json_t *bz = json_array();

		for (i = 0; i < ctx->nzones; i++)
			json_array_append_new(bz, json_string(ctx->zones[i]));
		expand_capacity_block(all, "aws_capacity_block", g, t->name, bz);
		expand_dep(r, "aws_capacity_block", g->name);
	}
	/*
	 * A group mounts the file systems its role reaches. With one zone they
	 * come first, and their names go into its user data; with a list, an
	 * EFS file system (regional) still does, its mount target and Lustre
	 * come after (zone_bound).
	 */
	for (i = 0; i < nfs; i++) {
		if (!bootstrap_mounts_store(spec, g, fs[i]))
			continue;
		if (fs[i]->tier == TIER_NFS)
			expand_dep(r, "aws_efs", fs[i]->name);
		if (!zoned)
			expand_dep(r,
				   fs[i]->tier == TIER_LUSTRE ? "aws_fsx_lustre"
							      : "aws_efs_mount_target",
				   fs[i]->name);
	}
	return group_user_data(r, spec, ctx, g, t, efa, zoned, err);
}

static void store_common(json_t *r, const struct spec_store *s)
{
	expand_attr(r, "encrypted", json_boolean(s->encrypted));
	expand_deletion(r, s);
}

/*
 * Where zone-bound storage (a Lustre file system, an EFS mount target) is
 * made: with one zone, in its subnet; with a list, after every node group
 * and in the subnet of the zone they landed in, chosen at apply.
 */
static void zone_bound(json_t *r, const struct spec *spec, const struct prov_ctx *ctx)
{
	size_t i;

	if (ctx->nzones <= 1 || spec->ngroups == 0) {
		expand_dep(r, "aws_subnet", ctx->zones[0]);
		return;
	}
	for (i = 0; i < ctx->nzones; i++)
		expand_dep(r, "aws_subnet", ctx->zones[i]);
	/* Made after the nodes, not with them: a new image is no new file system. */
	for (i = 0; i < spec->ngroups; i++)
		expand_after(r, "aws_instance_group", spec->groups[i].name);
	expand_why(r, "zone",
		   xstrdup("made after the node groups, in the zone they land in: a zone without "
			   "capacity moves the whole fabric, and nothing holding data is made in a "
			   "zone the nodes leave"));
}

static void expand_store(json_t *all, const struct spec *spec, const struct prov_ctx *ctx,
			 const struct spec_store *s)
{
	json_t *r;

	switch (s->tier) {
	case TIER_OBJECT:
		r = expand_resource(all, "aws_s3_bucket", s->name);
		expand_attr(r, "versioning", json_boolean(s->versioning));
		expand_attr(r, "expire_noncurrent_after", json_integer(s->expire_noncurrent_after));
		expand_attr(r, "block_public_access", json_true());
		/* Read back as whether kiln's tags are there: a killed create's bucket gets them.
		 */
		expand_attr(r, "tagged", json_true());
		store_common(r, s);
		return;
	case TIER_LUSTRE:
		r = expand_resource(all, "aws_fsx_lustre", s->name);
		expand_attr(r, "capacity_gb", json_integer(s->capacity_gb));
		expand_attr(r, "throughput_per_tib", json_integer(s->throughput_per_tib));
		expand_attr(r, "mount", expand_str(s->mount));
		store_common(r, s);
		expand_attr(r, "encrypted", json_true());
		if (!s->encrypted)
			expand_why(
			    r, "encrypted",
			    xstrdup(
				"FSx encrypts every file system at rest, whatever the spec says"));
		zone_bound(r, spec, ctx);
		expand_dep(r, "aws_security_group", "main");
		if (s->import.name && spec_store_find(spec, s->import.name)) {
			r = expand_resource(all, "aws_fsx_import", s->name);
			expand_attr(r, "from", json_string(s->import.name));
			expand_dep(r, "aws_fsx_lustre", s->name);
			expand_dep(r, "aws_s3_bucket", s->import.name);
		}
		return;
	case TIER_LOCAL:
		return; /* the nodes' own disks: nothing to make */
	case TIER_NFS:
		r = expand_resource(all, "aws_efs", s->name);
		expand_attr(r, "mount", expand_str(s->mount));
		store_common(r, s);
		r = expand_resource(all, "aws_efs_mount_target", s->name);
		expand_dep(r, "aws_efs", s->name);
		zone_bound(r, spec, ctx);
		expand_dep(r, "aws_security_group", "main");
		return;
	}
}

/*
 * Partitions of AWS: an allow resource of another cloud (the sim's
 * arn:sim:...) or a sim: action is refused here rather than by IAM at apply.
 */
static int allow_check(const struct spec *spec, const struct spec_role *role,
		       struct kiln_error *err)
{
	size_t i, j;

	for (i = 0; i < role->nallow; i++) {
		const struct spec_allow *a = &role->allow[i];
		const char *bad = NULL, *what = NULL;

		for (j = 0; !bad && j < a->nresources; j++)
			if (strcmp(a->resources[j], "*") != 0 &&
			    strncmp(a->resources[j], "arn:aws:", 8) != 0 &&
			    strncmp(a->resources[j], "arn:aws-", 8) != 0) {
				bad = a->resources[j];
				what = "is not in an AWS partition (arn:aws:, arn:aws-cn:, "
				       "arn:aws-us-gov:...)";
			}
		for (j = 0; !bad && j < a->nactions; j++)
			if (strncmp(a->actions[j], "sim:", 4) == 0) {
				bad = a->actions[j];
				what = "is an action of the sim provider, not of AWS";
			}
		if (bad) {
			char *at = expand_where(spec, a->node);

			kiln_error_set(err, "aws: %siam.roles.%s.allow[%zu]: '%s' %s", at,
				       role->name, i, bad, what);
			kiln_error_hint(err, "write the AWS action or ARN this role needs");
			free(at);
			return -1;
		}
	}
	return 0;
}

/*
 * The role's inline policy must fit IAM's limit. The workspace (part of
 * every bucket name) is not known here, so the size is taken with every
 * bucket name at its longest, 63 characters: what passes here fits IAM in
 * any workspace.
 */
static int policy_fits(const struct spec *spec, const struct spec_role *role, const json_t *attrs,
		       struct kiln_error *err)
{
	char longest[72];
	struct prov_scope worst = {spec->cluster, longest, NULL};
	json_t *efs = json_object(), *v;
	char *doc;
	size_t size, i;
	int pass;

	memset(longest, 'w', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	/* And every file system at the longest ARN EFS gives (a region name of 20). */
	for (pass = 0; pass < 2; pass++)
		json_array_foreach(json_object_get(attrs, pass ? "nfs_write" : "nfs_read"), i, v)
		    json_object_set_new(efs, json_string_value(v),
					json_string("arn:aws-us-gov:elasticfilesystem:"
						    "wwwwwwwwwwwwwwwwwwww:123456789012:"
						    "file-system/fs-0123456789abcdef0"));
	/* And the SSM parameters in an account of 12 digits, as AWS's are. */
	doc = aws_role_policy_compile(&worst, attrs, efs, "123456789012");
	json_decref(efs);
	size = aws_policy_size(doc);
	free(doc);
	if (size <= AWS_ROLE_POLICY_MAX)
		return 0;
	{
		char *at = expand_where(spec, role->key);

		kiln_error_set(err,
			       "aws: %siam.roles.%s: the role's inline policy would be up to %zu "
			       "characters; IAM allows at most %d",
			       at, role->name, size, AWS_ROLE_POLICY_MAX);
		kiln_error_hint(err, "merge allow statements that share resources or actions, or "
				     "split the stores between two roles");
		free(at);
	}
	return -1;
}

/*
 * With a list of zones a Lustre file system is made after the nodes, and a
 * node finds it at boot (aws_boot_source): the roles of the groups that mount
 * one may describe file systems. FSx cannot scope fsx:DescribeFileSystems to
 * one file system, so the statement names "*"; it reads names, not data.
 */
static void lustre_lookup(json_t *r, const struct spec *spec, const struct spec_role *role,
			  bool zoned)
{
	json_t *attrs = json_object_get(r, "attrs"), *all, *norm;
	const char *store = NULL;
	size_t i, j;

	for (i = 0; zoned && !store && i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];

		if (!g->role.name || strcmp(g->role.name, role->name) != 0)
			continue;
		for (j = 0; !store && j < spec->nstores; j++)
			if (spec->stores[j].tier == TIER_LUSTRE &&
			    bootstrap_mounts_store(spec, g, &spec->stores[j]))
				store = spec->stores[j].name;
	}
	if (!store)
		return;
	all = json_is_array(json_object_get(attrs, "allow"))
		  ? json_deep_copy(json_object_get(attrs, "allow"))
		  : json_array();
	json_array_append_new(all, json_pack("{s:[s], s:[s]}", "actions", "fsx:DescribeFileSystems",
					     "resources", "*"));
	norm = expand_allow_normalize(all);
	json_decref(all);
	expand_attr(r, "allow", norm);
	expand_why(
	    r, "allow",
	    xasprintf("fsx:DescribeFileSystems on \"*\": its nodes find %s, made after them "
		      "in their zone, at boot (FSx cannot scope the call to one file system)",
		      store));
}

/*
 * A role of a group whose type has GPUs lets its nodes' CloudWatch agent
 * publish their GPU metrics (aws_cwagent), into its namespace only.
 */
static void gpu_metrics(json_t *r, const struct spec *spec, const struct spec_role *role)
{
	size_t i;

	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		const struct catalog_type *t = NULL;
		struct kiln_error ignored = {{0}, {0}};
		char *why = NULL;
		bool gpus;

		if (!g->role.name || strcmp(g->role.name, role->name) != 0)
			continue;
		/* A type that does not resolve is the group's error, reported there. */
		gpus = expand_group_type("", &catalog_aws, spec, g, &t, &why, &ignored) == 0 &&
		       t->gpus > 0;
		free(why);
		if (gpus) {
			expand_attr(r, "gpu_metrics", json_true());
			expand_why(r, "gpu_metrics",
				   xasprintf("its nodes' CloudWatch agent publishes GPU metrics "
					     "(group %s): cloudwatch:PutMetricData, namespace "
					     "%s only",
					     g->name, AWS_GPU_METRICS_NAMESPACE));
			return;
		}
	}
}

static int expand_role(json_t *all, const struct spec *spec, const struct spec_role *role,
		       bool zoned, struct kiln_error *err)
{
	json_t *r = expand_resource(all, "aws_iam_role", role->name);
	size_t i;

	if (allow_check(spec, role, err) < 0)
		return -1;

	expand_role_policy_attrs(r, spec, role,
				 "Lustre clients mount over the network (the security group), not "
				 "through IAM, and FSx cannot scope fsx:DescribeFileSystems to one "
				 "file system, so the policy grants nothing for lustre stores");
	expand_attr(r, "node_health", json_true());
	expand_why(r, "node_health",
		   xstrdup("a node puts its health report on itself: ec2:CreateTags on its own "
			   "instance (aws:ARN = ${ec2:SourceInstanceARN}), key kiln:health only"));
	gpu_metrics(r, spec, role);
	lustre_lookup(r, spec, role, zoned);
	/* The policy names each store's exact ARN: the stores come first. */
	for (i = 0; i < role->nread + role->nwrite; i++) {
		const struct spec_ref *ref =
		    i < role->nread ? &role->read[i] : &role->write[i - role->nread];
		const struct spec_store *s = spec_store_find(spec, ref->name);

		if (s && s->tier == TIER_OBJECT)
			expand_dep(r, "aws_s3_bucket", s->name);
		if (s && s->tier == TIER_NFS)
			expand_dep(r, "aws_efs", s->name);
	}
	return policy_fits(spec, role, json_object_get(r, "attrs"), err);
}

int aws_expand(struct prov_ctx *ctx, const struct spec *spec, json_t **out, struct kiln_error *err)
{
	json_t *all = json_object();
	bool network = spec->network.node || spec->ngroups > 0;
	const char *prev[2] = {NULL, NULL};
	bool zoned = ctx->nzones > 1 && spec->ngroups > 0;
	size_t i, nfs;
	const struct spec_store **fs = expand_file_systems(spec, &nfs);

	*out = NULL;
	network |= nfs > 0;
	/* Nodes must join the zone such storage already holds data in (aws_zones.c). */
	ctx->zone_bound = nfs > 0;
	ctx->capacity_blocks = false;
	for (i = 0; i < spec->ngroups; i++)
		ctx->capacity_blocks |= spec->groups[i].capacity.kind == CAPACITY_BLOCK;
	if (network && expand_network(all, spec, ctx, err) < 0)
		goto fail;
	for (i = 0; i < spec->nstores; i++)
		expand_store(all, spec, ctx, &spec->stores[i]);
	for (i = 0; i < spec->ngroups; i++)
		if (expand_group(all, spec, ctx, &spec->groups[i], zoned, prev, fs, nfs, err) < 0)
			goto fail;
	if (zoned) {
		struct strbuf order = {0};
		char *first = xasprintf("aws_instance_group.%s", spec->groups[0].name);

		for (i = 0; i < ctx->nzones; i++)
			sb_addf(&order, "%s%s",
				i == 0		       ? ""
				: i + 1 == ctx->nzones ? " else "
						       : ", ",
				ctx->zones[i]);
		expand_why(
		    json_object_get(all, first), "zones",
		    xasprintf("the node groups launch one after another in one zone, the "
			      "first with capacity for them all: %s; when a group finds none, "
			      "the groups this apply launched move with it, and the zone-bound "
			      "storage follows them",
			      order.buf));
		sb_release(&order);
		free(first);
	}
	for (i = 0; i < spec->nroles; i++)
		if (expand_role(all, spec, &spec->roles[i], zoned, err) < 0)
			goto fail;
	if (aws_expand_slurm(ctx, all, spec, err) < 0)
		goto fail;
	expand_sort_deps(all);
	free(fs);
	*out = all;
	return PROV_OK;
fail:
	free(fs);
	json_decref(all);
	return PROV_ERROR;
}
