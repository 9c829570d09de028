/*
 * aws.c - the aws provider: its context (credentials, region, zones, one
 * endpoint per service), the helpers its types share (tags, filters, names,
 * the live form) and the provider table entry.
 *
 * The context holds no connection: http.c shares connections between
 * threads, and everything here is read-only after open, so the executor's
 * workers use one context at once.
 */
#include "aws_capacity.h"
#include "aws_int.h"
#include "arn_aws.h"
#include "expand.h"
#include "pricing.h"
#include "tags_aws.h"

#include "aws/aws.h"

#include "aws/awsxml.h"
#include "log.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int endpoint_init(struct aws_endpoint *ep, const char *service, const char *region,
			 struct kiln_error *err)
{
	const char *p, *host;

	ep->base = aws_endpoint(service, region, &ep->custom);
	p = strstr(ep->base, "://");
	if (!p || (strncmp(ep->base, "http://", 7) != 0 && strncmp(ep->base, "https://", 8) != 0)) {
		kiln_error_set(err, "aws: the %s endpoint '%s' is not an http:// or https:// URL",
			       service, ep->base);
		char upper[16] = "";
		size_t i;

		for (i = 0; service[i] && i + 1 < sizeof(upper); i++)
			upper[i] = (char)toupper((unsigned char)service[i]);
		upper[i] = '\0';
		kiln_error_hint(err,
				"set AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_%s) to a URL such "
				"as http://127.0.0.1:5000",
				upper);
		return -1;
	}
	host = p + 3;
	if (strchr(host, '/')) {
		kiln_error_set(
		    err, "aws: the %s endpoint '%s' has a path; kiln needs scheme://host[:port]",
		    service, ep->base);
		return -1;
	}
	ep->host = xstrdup(host);
	return 0;
}

static void aws_close(struct prov_ctx *ctx)
{
	size_t i;

	if (!ctx)
		return;
	aws_creds_release(&ctx->creds);
	free(ctx->kms_scoped);
	json_decref(ctx->images);
	json_decref(ctx->efa);
	json_decref(ctx->offers);
	aws_shared_release(ctx);
	json_decref(ctx->efs_arns);
	free(ctx->account);
	json_decref(ctx->zoned);
	json_decref(ctx->seen);
	json_decref(ctx->buckets);
	pthread_mutex_destroy(&ctx->mu);
	for (i = 0; i < AWS_NSERVICES; i++) {
		free(ctx->ep[i].base);
		free(ctx->ep[i].host);
		retry_rate_free(ctx->rate[i]);
	}
	aws_rate_release(&ctx->ec2_rate);
	for (i = 0; i < ctx->nzones; i++)
		free(ctx->zones[i]);
	free(ctx->zones);
	free(ctx->region);
	free(ctx);
}

static int aws_open(struct prov_ctx **out, const struct spec *spec, struct kiln_error *err)
{
	struct prov_ctx *ctx = xcalloc(1, sizeof(*ctx));
	size_t i;

	pthread_mutex_init(&ctx->mu, NULL);
	pthread_mutex_init(&ctx->share_mu, NULL);
	pthread_cond_init(&ctx->share_cond, NULL);
	for (i = 0; i < AWS_NSERVICES; i++)
		ctx->rate[i] = retry_rate_new();
	aws_rate_init(&ctx->ec2_rate);
	ctx->images = json_object();
	ctx->efa = json_object();
	ctx->offers = json_object();
	ctx->efs_arns = json_object();
	ctx->zoned = json_object();
	ctx->seen = json_object();

	*out = NULL;
	if (aws_region_resolve(spec->provider.region, &ctx->region, err) < 0)
		goto fail;
	/* Missing credentials stop the first call, not graph or iam-policy, which make none. */
	ctx->have_creds = aws_creds_load(&ctx->creds, &ctx->creds_err) == 0;
	for (i = 0; i < AWS_NSERVICES; i++)
		if (endpoint_init(&ctx->ep[i], aws_service_id(i), ctx->region, err) < 0)
			goto fail;
	ctx->zones = xcalloc(spec->provider.nzones + 1, sizeof(*ctx->zones));
	for (i = 0; i < spec->provider.nzones; i++)
		ctx->zones[ctx->nzones++] = xstrdup(spec->provider.zones[i].name);
	if (ctx->nzones == 0)
		ctx->zones[ctx->nzones++] = xasprintf("%sa", ctx->region);
	log_debug("aws: region %s, credentials from %s, ec2 at %s", ctx->region,
		  ctx->have_creds ? ctx->creds.source : "nowhere", ctx->ep[AWS_EC2].base);
	*out = ctx;
	return 0;
fail:
	aws_close(ctx);
	return -1;
}

char *aws_image_root(struct prov_ctx *ctx, const char *image)
{
	const char *dev;
	char *out;

	pthread_mutex_lock(&ctx->mu);
	dev = json_string_value(json_object_get(ctx->images, image));
	out = dev ? xstrdup(dev) : NULL;
	pthread_mutex_unlock(&ctx->mu);
	return out;
}

void aws_image_remember(struct prov_ctx *ctx, const char *image, const char *root_device)
{
	pthread_mutex_lock(&ctx->mu);
	json_object_set_new(ctx->images, image,
			    json_string(root_device ? root_device : "/dev/xvda"));
	pthread_mutex_unlock(&ctx->mu);
}

int aws_efa_max(struct prov_ctx *ctx, const char *type)
{
	int n;

	pthread_mutex_lock(&ctx->mu);
	n = (int)json_integer_value(json_object_get(ctx->efa, type));
	pthread_mutex_unlock(&ctx->mu);
	return n;
}

void aws_efa_remember(struct prov_ctx *ctx, const char *type, int n)
{
	pthread_mutex_lock(&ctx->mu);
	json_object_set_new(ctx->efa, type, json_integer(n));
	pthread_mutex_unlock(&ctx->mu);
}

/*
 * A listing being shared: made (value set), given up on (rc set), or being
 * made by one user (neither).
 */
struct aws_share {
	char *key;	       /* "KEY/CLUSTER/WORKSPACE", or "KEY/-" for every scope */
	json_t *value;	       /* the answer, once made */
	int rc;		       /* PROV_GAVE_UP when its retries ran out, else PROV_OK */
	struct kiln_error err; /* why, with rc */
	int left;	       /* users yet to take it */
	struct timespec ready; /* when it was made (CLOCK_MONOTONIC) */
	struct aws_share *next;
};

#define AWS_SHARE_MAX_AGE 60 /* seconds */

static struct aws_share **share_find(struct prov_ctx *ctx, const char *key)
{
	struct aws_share **p;

	for (p = &ctx->shares; *p; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0)
			return p;
	return NULL;
}

static void share_drop(struct aws_share **p)
{
	struct aws_share *s = *p;

	*p = s->next;
	json_decref(s->value);
	free(s->key);
	free(s);
}

static bool share_stale(const struct aws_share *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - s->ready.tv_sec > AWS_SHARE_MAX_AGE;
}

int aws_shared_listing(struct prov_ctx *ctx, const char *key, int users,
		       const struct prov_scope *scope,
		       int (*fetch)(struct prov_ctx *ctx, const struct prov_scope *scope,
				    const void *arg, json_t **out, struct kiln_error *err),
		       const void *arg, json_t **out, struct kiln_error *err)
{
	char *full = scope->cluster ? xasprintf("%s/%s/%s", key, scope->cluster, scope->workspace)
				    : xasprintf("%s/-", key);
	struct aws_share **p, *s;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&ctx->share_mu);
	for (;;) {
		p = share_find(ctx, full);
		if (p && ((*p)->value || (*p)->rc) && share_stale(*p)) {
			share_drop(p);
			p = NULL;
		}
		if (!p)
			break;
		if ((*p)->rc) {
			/* Its retries ran out: the others are not sent again (one retry layer). */
			rc = (*p)->rc;
			*err = (*p)->err;
			if (--(*p)->left <= 0)
				share_drop(p);
			pthread_mutex_unlock(&ctx->share_mu);
			free(full);
			return rc;
		}
		if ((*p)->value) {
			/* A copy each: the engine may change what a list gave it. */
			*out = json_deep_copy((*p)->value);
			if (--(*p)->left <= 0)
				share_drop(p);
			pthread_mutex_unlock(&ctx->share_mu);
			free(full);
			return PROV_OK;
		}
		pthread_cond_wait(&ctx->share_cond, &ctx->share_mu);
	}
	/* Nobody has it: this user makes it, outside the lock. */
	s = xcalloc(1, sizeof(*s));
	s->key = full;
	s->left = users - 1;
	s->next = ctx->shares;
	ctx->shares = s;
	pthread_mutex_unlock(&ctx->share_mu);

	rc = fetch(ctx, scope, arg, out, err);

	pthread_mutex_lock(&ctx->share_mu);
	p = share_find(ctx, full);
	if (rc == PROV_OK && (*p)->left > 0) {
		(*p)->value = json_deep_copy(*out);
		clock_gettime(CLOCK_MONOTONIC, &(*p)->ready);
	} else if (rc == PROV_GAVE_UP && (*p)->left > 0) {
		(*p)->rc = rc;
		(*p)->err = *err;
		clock_gettime(CLOCK_MONOTONIC, &(*p)->ready);
	} else {
		share_drop(p);
	}
	pthread_cond_broadcast(&ctx->share_cond);
	pthread_mutex_unlock(&ctx->share_mu);
	return rc;
}

void aws_shared_release(struct prov_ctx *ctx)
{
	while (ctx->shares)
		share_drop(&ctx->shares);
	pthread_cond_destroy(&ctx->share_cond);
	pthread_mutex_destroy(&ctx->share_mu);
}

static char *efs_key(const char *cluster, const char *ws, const char *name)
{
	return xasprintf("%s/%s/%s", cluster, ws, name);
}

void aws_efs_remember(struct prov_ctx *ctx, const json_t *live)
{
	const json_t *tags = json_object_get(live, "tags");
	const char *c = json_string_value(json_object_get(tags, PROV_TAG_CLUSTER));
	const char *w = json_string_value(json_object_get(tags, PROV_TAG_WORKSPACE));
	const char *addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));
	const char *arn = json_string_value(json_object_get(json_object_get(live, "attrs"), "arn"));
	char *key;

	if (!c || !w || !addr || !arn || strncmp(addr, "aws_efs.", 8) != 0)
		return;
	key = efs_key(c, w, addr + 8);
	pthread_mutex_lock(&ctx->mu);
	json_object_set_new(ctx->efs_arns, key, json_string(arn));
	pthread_mutex_unlock(&ctx->mu);
	free(key);
}

char *aws_efs_arn(struct prov_ctx *ctx, const struct prov_scope *scope, const char *name)
{
	char *key = efs_key(scope->cluster, scope->workspace, name), *out;
	const char *arn;

	pthread_mutex_lock(&ctx->mu);
	arn = json_string_value(json_object_get(ctx->efs_arns, key));
	out = arn ? xstrdup(arn) : NULL;
	pthread_mutex_unlock(&ctx->mu);
	free(key);
	return out;
}

void aws_account_remember(struct prov_ctx *ctx, const char *arn)
{
	/* arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE; an account is 12 digits. */
	const char *at = arn;
	size_t i, n;

	for (i = 0; at && i < 4; i++)
		at = strchr(at, ':') ? strchr(at, ':') + 1 : NULL;
	if (!at || strncmp(arn, "arn:", 4) != 0)
		return;
	n = strspn(at, "0123456789");
	if (n != 12 || at[n] != ':')
		return;
	pthread_mutex_lock(&ctx->mu);
	if (!ctx->account)
		ctx->account = xstrndup(at, n);
	pthread_mutex_unlock(&ctx->mu);
}

char *aws_account(struct prov_ctx *ctx)
{
	char *out;

	pthread_mutex_lock(&ctx->mu);
	out = ctx->account ? xstrdup(ctx->account) : NULL;
	pthread_mutex_unlock(&ctx->mu);
	return out;
}

static const struct catalog *aws_catalog(struct prov_ctx *ctx)
{
	(void)ctx;
	return &catalog_aws;
}

static unsigned long aws_calls(struct prov_ctx *ctx)
{
	return atomic_load(&ctx->calls);
}

int aws_read_one(int rc, json_t *all, const char *what, const char *id, json_t **out,
		 struct kiln_error *err)
{
	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	*out = json_incref(json_array_get(all, 0));
	json_decref(all);
	if (!*out) {
		kiln_error_set(err, "aws: %s %s does not exist", what, id);
		return PROV_NOTFOUND;
	}
	return PROV_OK;
}

json_t *aws_scope_tags(const struct prov_scope *scope, const char *address, const json_t *extra)
{
	json_t *tags = provider_scope_tags(scope, address);
	const json_t *v;
	const char *k;

	/* The provider's own (kiln:zones, kiln:role...) never name a scope tag. */
	json_object_foreach_const(extra, k, v) json_object_set_new(tags, k, jsonc_share(v));
	return tags;
}

json_t *aws_claim_tags(const struct prov_scope *scope)
{
	json_t *tags = json_pack("{s:s}", PROV_TAG_LINEAGE, scope->lineage);

	if (scope->owner)
		json_object_set_new(tags, PROV_TAG_OWNER, json_string(scope->owner));
	return tags;
}

void aws_tag_params(struct aws_params *p, const char *prefix, const json_t *tags)
{
	const char *k;
	const json_t *v;
	int i = 1;

	json_object_foreach_const(tags, k, v)
	{
		char *kk = xasprintf("%s.%d.Key", prefix, i);
		char *kv = xasprintf("%s.%d.Value", prefix, i++);

		aws_param(p, kk, k);
		aws_param(p, kv, json_string_value(v));
		free(kk);
		free(kv);
	}
}

void aws_tag_spec(struct aws_params *p, int n, const char *resource_type,
		  const struct prov_scope *scope, const char *address, const json_t *extra)
{
	char *prefix = xasprintf("TagSpecification.%d.Tag", n);
	char *rt = xasprintf("TagSpecification.%d.ResourceType", n);
	json_t *tags = aws_scope_tags(scope, address, extra);

	aws_param(p, rt, resource_type);
	aws_tag_params(p, prefix, tags);
	json_decref(tags);
	free(rt);
	free(prefix);
}

int aws_scope_filters(struct aws_params *p, int n, const struct prov_scope *scope)
{
	char *k;

	/* Every scope (kiln sprawl): whatever carries both tags, whatever their values. */
	if (!scope->cluster) {
		k = xasprintf("Filter.%d.Name", n);
		aws_param(p, k, "tag-key");
		free(k);
		k = xasprintf("Filter.%d.Value.1", n);
		aws_param(p, k, PROV_TAG_CLUSTER);
		free(k);
		k = xasprintf("Filter.%d.Name", n + 1);
		aws_param(p, k, "tag-key");
		free(k);
		k = xasprintf("Filter.%d.Value.1", n + 1);
		aws_param(p, k, PROV_TAG_WORKSPACE);
		free(k);
		return n + 2;
	}

	k = xasprintf("Filter.%d.Name", n);
	aws_paramf(p, k, "tag:%s", PROV_TAG_CLUSTER);
	free(k);
	k = xasprintf("Filter.%d.Value.1", n);
	aws_param(p, k, scope->cluster);
	free(k);
	k = xasprintf("Filter.%d.Name", n + 1);
	aws_paramf(p, k, "tag:%s", PROV_TAG_WORKSPACE);
	free(k);
	k = xasprintf("Filter.%d.Value.1", n + 1);
	aws_param(p, k, scope->workspace);
	free(k);
	return n + 2;
}

json_t *aws_live(const char *type, const char *id, const char *status, json_t *attrs, json_t *tags)
{
	const char *addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));
	json_t *live =
	    json_pack("{s:s, s:s, s:s?, s:s, s:o, s:o}", "type", type, "id", id, "address", addr,
		      "status", status, "attrs", attrs, "tags", tags ? tags : json_object());

	if (!addr)
		json_object_set_new(live, "address", json_null());
	return live;
}

const char *aws_dep_attr(const json_t *deps, const char *type, const char *name, const char *key)
{
	char *addr = xasprintf("%s.%s", type, name);
	json_t *r = json_object_get(deps, addr);

	free(addr);
	if (strcmp(key, "id") == 0)
		return json_string_value(json_object_get(r, "id"));
	return json_string_value(json_object_get(json_object_get(r, "attrs"), key));
}

const char *aws_dep_attr_any(const json_t *deps, const char *type, const char *key)
{
	size_t tl = strlen(type);
	const char *addr;
	const json_t *r;

	json_object_foreach_const(deps, addr, r)
	{
		if (strncmp(addr, type, tl) != 0 || addr[tl] != '.')
			continue;
		if (strcmp(key, "id") == 0)
			return json_string_value(json_object_get(r, "id"));
		return json_string_value(json_object_get(json_object_get(r, "attrs"), key));
	}
	return NULL;
}

char *aws_name(const struct prov_scope *scope, const char *name, size_t max)
{
	char *full = xasprintf("kiln-%s-%s-%s", scope->cluster, scope->workspace, name);
	unsigned char md[SHA256_DIGEST_LENGTH];
	char *out, *p;

	for (p = full; *p; p++)
		if (*p == '_' || *p == '.')
			*p = '-';
		else if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (strlen(full) <= max)
		return full;
	/* Too long: keep the start and the name's end, and a hash of the whole to stay unique. */
	SHA256((const unsigned char *)full, strlen(full), md);
	out = xasprintf("%.*s-%02x%02x%02x%02x", (int)(max - 9), full, md[0], md[1], md[2], md[3]);
	free(full);
	return out;
}

static const char *aws_part_type(enum prov_part part)
{
	static const char *const types[] = {
	    [PART_GROUP] = "aws_instance_group", [PART_OBJECT] = "aws_s3_bucket",
	    [PART_LUSTRE] = "aws_fsx_lustre",	 [PART_NFS] = "aws_efs",
	    [PART_ROLE] = "aws_iam_role",
	};
	return types[part];
}

static enum prov_tier aws_type_tier(const char *type)
{
	static const struct prov_type_tier tiers[] = {
	    {"aws_vpc", PROV_TIER_NETWORK},
	    {"aws_subnet", PROV_TIER_NETWORK},
	    {"aws_security_group", PROV_TIER_NETWORK},
	    {"aws_internet_gateway", PROV_TIER_NETWORK},
	    {"aws_placement_group", PROV_TIER_NETWORK},
	    {"aws_instance_group", PROV_TIER_COMPUTE},
	    {"aws_capacity_block", PROV_TIER_COMPUTE},
	    {"aws_s3_bucket", PROV_TIER_STORAGE},
	    {"aws_fsx_lustre", PROV_TIER_STORAGE},
	    {"aws_fsx_import", PROV_TIER_STORAGE},
	    {"aws_efs", PROV_TIER_STORAGE},
	    {"aws_efs_mount_target", PROV_TIER_STORAGE},
	    {"aws_iam_role", PROV_TIER_IAM},
	};

	return provider_tier_find(tiers, ARRAY_SIZE(tiers), type);
}

/* Tags as strict as the strictest service kiln tags; groups the catalog has. */
static void aws_check_spec(const struct spec *spec, struct diags *d)
{
	tags_aws_check(spec, d);
	expand_check_groups(&catalog_aws, spec, d);
	aws_boot_check(spec, d);
	aws_kms_check(spec, d);
}

/*
 * Instances, root volumes, public addresses and Lustre are priced from the
 * catalog; S3 and EFS are billed by use; the network, roles and the links
 * between resources cost nothing.
 */
static void aws_cost(struct prov_ctx *ctx, const char *type, const json_t *attrs,
		     json_t *components, json_t *unpriced)
{
	if (strcmp(type, "aws_instance_group") == 0)
		pricing_group(&catalog_aws, attrs, components, unpriced);
	else if (strcmp(type, "aws_capacity_block") == 0)
		aws_capacity_block_cost(ctx, attrs, components, unpriced);
	else if (strcmp(type, "aws_fsx_lustre") == 0)
		pricing_lustre(&catalog_aws, attrs, components, unpriced);
	else if (strcmp(type, "aws_s3_bucket") == 0)
		pricing_by_use(unpriced, "S3 storage and requests", "GB stored, requests");
	else if (strcmp(type, "aws_efs") == 0)
		pricing_by_use(unpriced, "EFS storage", "GB stored, throughput");
}

/*
 * Actions IAM lets no policy scope to a resource (the Service Authorization
 * Reference lists no resource type for them).
 */
static const char *const aws_unscopable[] = {
    "ecr:GetAuthorizationToken",
    "sts:GetCallerIdentity",
    "s3:ListAllMyBuckets",
    "ec2:Describe*",
    "cloudwatch:PutMetricData",
    "cloudwatch:GetMetricData",
    "cloudwatch:ListMetrics",
    "fsx:DescribeFileSystems",
    NULL,
};

/*
 * What a dependant needs only created (provider.h): what the create call
 * answered (an ARN, an id, the zone RunInstances launched in). Every other
 * pair needs ready: a mount target needs its EFS file system available, a
 * data repository association its FSx file system available.
 */
static const struct prov_need aws_needs[] = {
    {"aws_iam_role", "aws_s3_bucket", "the bucket's ARN, which the role's policy names"},
    {"aws_iam_role", "aws_efs", "the file system's ARN, which the role's policy names"},
    {"aws_iam_role", "aws_fsx_lustre", "the file system's ARN, which the role's policy names"},
    {"aws_fsx_import", "aws_s3_bucket", "the bucket's name, which the association names"},
    {"aws_instance_group", "aws_efs",
     "the file system's id for the boot's mount, which retries until its mount target "
     "answers"},
    {"aws_instance_group", "aws_fsx_lustre",
     "DNSName and MountName for the boot's mount, which retries until the file system is "
     "AVAILABLE"},
    {"aws_instance_group", "aws_efs_mount_target",
     "the mount target's file system for the boot's mount, which retries until the mount "
     "target answers"},
    {"aws_instance_group", "aws_instance_group",
     "the zone the group before launched in, which RunInstances answered"},
    {"aws_fsx_lustre", "aws_instance_group",
     "the zone the nodes launched in, which RunInstances answered"},
    {"aws_efs_mount_target", "aws_instance_group",
     "the zone the nodes launched in, which RunInstances answered"},
    {NULL, NULL, NULL},
};

const struct provider provider_aws = {
    .name = "aws",
    .simulated = false,
    .types = aws_types,
    .ntypes = AWS_NTYPES,
    .open = aws_open,
    .close = aws_close,
    .expand = aws_expand,
    .catalog = aws_catalog,
    .check_spec = aws_check_spec,
    .iam_actions = aws_iam_actions,
    .iam_resource_actions = aws_iam_resource_actions,
    .iam_policy = aws_iam_policy,
    .iam_grant_note = aws_iam_grant_note,
    .preflight = aws_preflight,
    .part_type = aws_part_type,
    .type_tier = aws_type_tier,
    .cost = aws_cost,
    .role_policy = aws_role_policy,
    .list_unmanaged = aws_list_unmanaged,
    .billed = aws_billed,
    .billed_actions = aws_billed_actions,
    .claim = aws_claim,
    .tag_expiry = aws_tag_expiry,
    .calls = aws_calls,
    .metrics = aws_metrics,
    .login_user = aws_login_user,
    .list_objects = aws_s3_list_objects,
    /*
     * The cheapest training cluster (one node, about $10 an hour): an init
     * without a choice never starts a multi-node bill.
     */
    .default_template = "finetune",
    .init_edit = "its header says what to change (vars: image AMI, addresses)",
    .default_region = aws_default_region,
    .check_region = aws_check_region,
    .check_group = aws_check_group,
    .grammar = &arn_aws_grammar,
    .unscopable_actions = aws_unscopable,
    .needs = aws_needs,
};
