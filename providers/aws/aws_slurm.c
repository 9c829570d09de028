/*
 * aws_slurm.c - `scheduler: slurm` on aws: the parameters the cluster's
 * nodes read at boot, and which role reads which.
 *
 *   aws_ssm_parameter.munge_key   SecureString, generated at apply (128 random
 *                                 bytes, base64), sealed in the state
 *   aws_ssm_parameter.slurm_conf  String: slurm.conf (providers/slurm.c)
 *   aws_ssm_parameter.gres_conf   String: gres.conf
 *
 * The controller's role reads all three, a partition's role the munge key
 * only (its slurmd fetches the rest from the controller): the role's
 * ssm_read names them, and its policy their ARNs. The node groups are made
 * after the parameters they read.
 */
#include "aws_int.h"

#include "aws/awsxml.h"
#include "bootstrap.h"
#include "expand.h"
#include "slurm.h"

#include <stdlib.h>
#include <string.h>

#define LEAF_MUNGE "slurm/munge-key"
#define LEAF_CONF "slurm/slurm.conf"
#define LEAF_GRES "slurm/gres.conf"

static void param(json_t *all, const char *name, const char *leaf, const char *kind,
		  const char *content, char *why)
{
	json_t *r = expand_resource(all, "aws_ssm_parameter", name);

	expand_attr(r, "leaf", expand_str(leaf));
	expand_attr(r, "kind", expand_str(kind));
	if (content) {
		expand_attr(r, "content", expand_str(content));
	} else {
		expand_attr(r, "generated", expand_str("munge-key"));
		json_object_set_new(r, "sensitive", json_pack("[s]", "value"));
	}
	expand_why(r, content ? "content" : "generated", why);
}

/* The parameters a group's nodes read at boot: NULL-terminated. */
static const char *const *group_reads(const struct spec *spec, const struct spec_group *g)
{
	static const char *const controller[] = {LEAF_GRES, LEAF_MUNGE, LEAF_CONF, NULL};
	static const char *const node[] = {LEAF_MUNGE, NULL};

	return strcmp(g->name, spec->scheduler.controller.name) == 0 ? controller : node;
}

/* Each role's ssm_read: the leaves its groups' nodes read, sorted, in the spec's region. */
static void role_reads(json_t *all, const struct spec *spec, const char *kms_key)
{
	size_t i, j;

	for (i = 0; i < spec->nroles; i++) {
		const struct spec_role *role = &spec->roles[i];
		const char *leaves[4];
		size_t n = 0;
		bool finds = false;
		char *addr = xasprintf("aws_iam_role.%s", role->name);
		json_t *r = json_object_get(all, addr);

		free(addr);
		for (j = 0; j < spec->ngroups; j++) {
			const struct spec_group *g = &spec->groups[j];
			const char *const *reads = group_reads(spec, g);
			size_t k, m;

			if (!g->role.name || strcmp(g->role.name, role->name) != 0)
				continue;
			finds |= strcmp(g->name, spec->scheduler.controller.name) != 0;
			for (k = 0; reads[k]; k++) {
				for (m = 0; m < n && strcmp(leaves[m], reads[k]) != 0; m++)
					;
				if (m == n && n < ARRAY_SIZE(leaves))
					leaves[n++] = reads[k];
			}
		}
		if (!r || n == 0)
			continue;
		/* A partition's nodes look their controller up (controller_find). */
		expand_attr(r, "ssm_read",
			    json_pack("{s:s, s:o, s:b}", "region", spec->provider.region, "leaves",
				      expand_sorted_strings(leaves, n), "find_controller", finds));
		/* Every node reads the munge key: every role decrypts it. */
		if (kms_key)
			json_object_set_new(
			    json_object_get(json_object_get(r, "attrs"), "ssm_read"), "kms_key",
			    json_string(kms_key));
	}
}

char *aws_slurm_boot_script(const struct slurm_cluster *c, const char *group,
			    const struct prov_scope *scope, const char *region,
			    const char *ctl_find)
{
	char *cmd = xasprintf("aws ssm get-parameter --region %s --name %%s --with-decryption "
			      "--query Parameter.Value --output text",
			      region);
	char *munge = aws_ssm_name(scope, LEAF_MUNGE), *conf = aws_ssm_name(scope, LEAF_CONF);
	char *gres = aws_ssm_name(scope, LEAF_GRES), *out = NULL;
	const struct slurm_fetch f = {cmd, munge, conf, gres};
	const struct slurm_partition *p = slurm_partition_of(c, group);

	if (strcmp(group, c->controller) == 0)
		out = slurm_controller_script(c, &f);
	else if (p)
		out = slurm_node_script(p, &f, ctl_find);
	free(cmd);
	free(munge);
	free(conf);
	free(gres);
	return out;
}

/*
 * How a node finds its controller at boot: the running instance of the
 * controller's group, by kiln's tags (ec2:DescribeInstances, which its role
 * is given). Looked up, not written in at launch, so a new controller
 * needs no new GPU nodes.
 */
static char *controller_find(const struct spec *spec, const char *region, const char *workspace)
{
	return xasprintf("aws ec2 describe-instances --region %s --filters "
			 "Name=tag:kiln:cluster,Values=%s Name=tag:kiln:workspace,Values=%s "
			 "Name=tag:kiln:address,Values=aws_instance_group.%s "
			 "Name=instance-state-name,Values=running --query "
			 "'Reservations[0].Instances[0].PrivateIpAddress' --output text",
			 region, spec->cluster, workspace, spec->scheduler.controller.name);
}

char *aws_slurm_group_script(const struct spec *spec, const struct spec_group *g)
{
	struct slurm_cluster c;
	struct kiln_error err = {{0}, {0}};
	char *ws, *find, *out;
	const char *region = spec->provider.region ? spec->provider.region : "us-east-1";
	struct prov_scope scope = {0};

	if (spec->scheduler.type != SCHEDULER_SLURM ||
	    slurm_cluster_from_spec(&c, spec, &catalog_aws, &err) < 0)
		return NULL; /* a type the catalog lacks: expand reports it */
	ws = bootstrap_placeholder("workspace");
	find = controller_find(spec, region, ws);
	scope.cluster = spec->cluster;
	scope.workspace = ws;
	out = aws_slurm_boot_script(&c, g->name, &scope, region, find);
	free(find);
	free(ws);
	slurm_cluster_free(&c);
	return out;
}

/*
 * A bare alias/NAME names a key of no account in particular: a policy on
 * every account's keys the alias name matches ("kms:ResourceAliases" takes
 * any account's alias of that name) would let the roles decrypt with
 * another account's key that its key policy opens to them. Scoped to the
 * caller's own account, as KMS resolves a bare alias ("Aliases in AWS
 * KMS": an alias name refers to a key in the caller's account and
 * Region): its alias ARN, the account from STS GetCallerIdentity. Any
 * other form is kept.
 */
static int kms_scope(struct prov_ctx *ctx, const char *key, const char *region,
		     struct kiln_error *err)
{
	struct aws_params p = {0};
	const char *acct;
	json_t *resp = NULL;
	int rc;

	free(ctx->kms_scoped);
	ctx->kms_scoped = NULL;
	ctx->kms_key = key;
	if (!key || strncmp(key, "alias/", 6) != 0)
		return 0;
	rc = aws_query(ctx, AWS_STS, "GetCallerIdentity", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK) {
		kiln_error_hint(err,
				"scheduler.kms_key %s is scoped to your account, which "
				"sts:GetCallerIdentity names; or write its alias ARN, "
				"arn:aws:kms:%s:ACCOUNT:%s",
				key, region, key);
		return -1;
	}
	acct = awsxml_str(resp, "GetCallerIdentityResult.Account");
	if (!acct || strlen(acct) != 12 || strspn(acct, "0123456789") != 12) {
		kiln_error_set(err, "STS GetCallerIdentity answered no 12-digit account ('%s')",
			       acct ? acct : "");
		kiln_error_hint(err,
				"write scheduler.kms_key as its alias ARN, "
				"arn:aws:kms:%s:ACCOUNT:%s",
				region, key);
		json_decref(resp);
		return -1;
	}
	ctx->kms_scoped = xasprintf("arn:aws:kms:%s:%s:%s", region, acct, key);
	ctx->kms_key = ctx->kms_scoped;
	json_decref(resp);
	return 0;
}

int aws_expand_slurm(struct prov_ctx *ctx, json_t *all, const struct spec *spec,
		     struct kiln_error *err)
{
	struct slurm_cluster c;
	char *conf, *gres;
	size_t i;

	ctx->ssm_parameters = spec->scheduler.type == SCHEDULER_SLURM;
	ctx->kms_region = spec->provider.region;
	if (kms_scope(ctx, ctx->ssm_parameters ? spec->scheduler.kms_key.name : NULL,
		      spec->provider.region, err) < 0)
		return -1;
	if (!ctx->ssm_parameters)
		return 0;
	if (slurm_cluster_from_spec(&c, spec, &catalog_aws, err) < 0)
		return -1;
	conf = slurm_conf(&c);
	gres = slurm_gres_conf(&c);
	param(all, "munge_key", LEAF_MUNGE, "SecureString", NULL,
	      xstrdup("munged's shared key: kiln makes it at apply and seals it in the state; "
		      "the nodes read it with their role at boot, never from user data"));
	if (ctx->kms_key) {
		json_t *r = json_object_get(all, "aws_ssm_parameter.munge_key");

		expand_attr(r, "key_id", expand_str(spec->scheduler.kms_key.name));
		expand_why(r, "key_id",
			   xstrdup("scheduler.kms_key: SSM encrypts the key with it, and only the "
				   "cluster's roles may decrypt with it, through SSM"));
	}
	param(all, "slurm_conf", LEAF_CONF, "String", conf,
	      xasprintf("slurm.conf for the controller on compute.%s (configless: every slurmd "
			"fetches it from there)",
			c.controller));
	param(all, "gres_conf", LEAF_GRES, "String", gres,
	      xstrdup("gres.conf: each GPU group's devices, from the catalog"));
	free(conf);
	free(gres);
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		char *addr = xasprintf("aws_instance_group.%s", g->name);
		json_t *r = json_object_get(all, addr);
		const char *const *reads = group_reads(spec, g);
		size_t k;

		free(addr);
		for (k = 0; r && reads[k]; k++)
			expand_after(r, "aws_ssm_parameter",
				     strcmp(reads[k], LEAF_MUNGE) == 0	? "munge_key"
				     : strcmp(reads[k], LEAF_CONF) == 0 ? "slurm_conf"
									: "gres_conf");
	}
	role_reads(all, spec, ctx->kms_key);
	slurm_cluster_free(&c);
	return 0;
}
