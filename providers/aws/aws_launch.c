/*
 * aws_launch.c - RunInstances for a node group and what it needs (the
 * image's root device, the type's EFA interfaces, the ClientToken), the
 * scope's instances (DescribeInstances) and their termination; see
 * aws_launch.h. aws_nodes.c (a group's create, grow and shrink) and
 * aws_zones.c (which zone, and moving there) both launch through it, and it
 * calls neither.
 */
#include "aws_launch.h"

#include "aws_capacity.h"

#include "aws/awsxml.h"
#include "bootstrap.h"
#include "log.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The states of an instance that still counts as one of its group's. */
static const char *const live_states[] = {"pending", "running", "stopping", "stopped"};

bool aws_launch_alive(const char *state)
{
	size_t i;

	for (i = 0; state && i < ARRAY_SIZE(live_states); i++)
		if (strcmp(state, live_states[i]) == 0)
			return true;
	return false;
}

/* The instances of a DescribeInstances answer (all its reservations), flattened. */
static void instances_of(json_t *resp, json_t *into)
{
	json_t *res = awsxml_list(resp, "reservationSet"), *r, *insts, *i;
	size_t a, b;

	json_array_foreach(res, a, r)
	{
		insts = awsxml_list(r, "instancesSet");
		json_array_foreach(insts, b, i) json_array_append(into, i);
		json_decref(insts);
	}
	json_decref(res);
}

/* Every live instance with these filters, all pages. */
int aws_launch_describe(struct prov_ctx *ctx, struct aws_params *filters, json_t **out,
			struct kiln_error *err)
{
	char *token = NULL;
	int rc;

	*out = json_array();
	do {
		struct aws_params p = {{0}};
		json_t *resp;

		sb_adds(&p.sb, filters->sb.buf);
		aws_param(&p, "MaxResults", "1000");
		if (token)
			aws_param(&p, "NextToken", token);
		free(token);
		token = NULL;
		rc = aws_query(ctx, AWS_EC2, "DescribeInstances", &p, &resp, err);
		aws_params_release(&p);
		if (rc != PROV_OK)
			break;
		instances_of(resp, *out);
		if (awsxml_str(resp, "nextToken") && *awsxml_str(resp, "nextToken"))
			token = xstrdup(awsxml_str(resp, "nextToken"));
		json_decref(resp);
	} while (token);
	free(token);
	if (rc != PROV_OK) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/* Filter.N: the instances that are alive (live_states). */
void aws_launch_state_filter(struct aws_params *p, int n)
{
	char *k = xasprintf("Filter.%d.Name", n);
	size_t i;

	aws_param(p, k, "instance-state-name");
	free(k);
	for (i = 0; i < ARRAY_SIZE(live_states); i++) {
		k = xasprintf("Filter.%d.Value.%zu", n, i + 1);
		aws_param(p, k, live_states[i]);
		free(k);
	}
}

/* The root device of an image, which BlockDeviceMappings must name. */
int aws_launch_root_device(struct prov_ctx *ctx, const char *image, char **out,
			   struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *images;
	const char *dev;
	int rc;

	*out = aws_image_root(ctx, image);
	if (*out)
		return PROV_OK;
	aws_param(&p, "ImageId.1", image);
	rc = aws_query(ctx, AWS_EC2, "DescribeImages", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_NOTFOUND || (rc == PROV_ERROR && strstr(err->msg, "InvalidAMIID"))) {
		kiln_error_set(err, "aws: image %s does not exist in region %s", image,
			       ctx->region);
		kiln_error_hint(err, "images are regional: use the AMI id of this region");
		return PROV_ERROR;
	}
	if (rc != PROV_OK)
		return rc;
	images = awsxml_list(resp, "imagesSet");
	dev = awsxml_str(json_array_get(images, 0), "rootDeviceName");
	if (json_array_size(images) == 0) {
		kiln_error_set(err, "aws: image %s does not exist in region %s", image,
			       ctx->region);
		kiln_error_hint(err, "images are regional: use the AMI id of this region");
		rc = PROV_ERROR;
	} else {
		*out = xstrdup(dev ? dev : "/dev/xvda");
		aws_image_remember(ctx, image, dev);
	}
	json_decref(images);
	json_decref(resp);
	return rc;
}

/*
 * How many EFA interfaces a type takes: EC2's answer remembered from
 * pre-flight, else the catalog's, else asked (one call).
 */
int aws_launch_efa_interfaces(struct prov_ctx *ctx, const char *type, int *out,
			      struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp;
	const char *n;
	int rc;

	const struct catalog_type *cat = catalog_find(&catalog_aws, type);

	*out = aws_efa_max(ctx, type);
	if (*out > 0)
		return PROV_OK;
	/* Not asked at plan time (a saved plan): the shipped catalog knows most types. */
	if (cat && cat->efa_interfaces > 0) {
		*out = cat->efa_interfaces;
		return PROV_OK;
	}
	aws_param(&p, "InstanceType.1", type);
	rc = aws_query(ctx, AWS_EC2, "DescribeInstanceTypes", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	n = awsxml_str(resp, "instanceTypeSet.0.networkInfo.efaInfo.maximumEfaInterfaces");
	*out = n && atoi(n) > 0 ? atoi(n) : 1;
	aws_efa_remember(ctx, type, *out);
	json_decref(resp);
	return PROV_OK;
}

/*
 * The values a document's placeholders take at launch: the scope, and the
 * file systems among the group's recorded dependencies (FSx for Lustre as
 * DNSName@tcp:/MountName, EFS by its regional DNS name).
 */
static json_t *user_data_values(const struct prov_ctx *ctx, const struct launch *l,
				const struct prov_scope *scope)
{
	json_t *v = json_object();
	const json_t *d;
	const char *addr;

	json_object_set_new(v, "cluster", json_string(scope->cluster));
	json_object_set_new(v, "workspace", json_string(scope->workspace));
	json_object_foreach_const(l->deps, addr, d)
	{
		const json_t *a = json_object_get(d, "attrs");
		const char *id = json_string_value(json_object_get(d, "id"));
		const char *dns = json_string_value(json_object_get(a, "dns_name"));
		const char *mount = json_string_value(json_object_get(a, "mount_name"));
		char *key = NULL;

		if (strncmp(addr, "aws_fsx_lustre.", 15) == 0 && dns && mount) {
			key = xasprintf("lustre:%s", addr + 15);
			json_object_set_new(v, key, json_sprintf("%s@tcp:/%s", dns, mount));
		} else if (strncmp(addr, "aws_efs.", 8) == 0 && id) {
			key = xasprintf("nfs:%s", addr + 8);
			json_object_set_new(
			    v, key, json_sprintf("%s.efs.%s.amazonaws.com:/", id, ctx->region));
			free(key);
			/* amazon-efs-utils' mount.efs takes the id (bootstrap.h's alt_source). */
			key = xasprintf("efs:%s", addr + 8);
			json_object_set_new(v, key, json_string(id));
		}
		free(key);
	}
	return v;
}

/* The user data of a launch, filled and in base64 (*out NULL: none). */
static int launch_user_data(const struct prov_ctx *ctx, const struct launch *l,
			    const struct prov_scope *scope, char **out, struct kiln_error *err)
{
	json_t *values;
	char *doc;
	size_t n;

	*out = NULL;
	if (l->user_data_b64) {
		*out = xstrdup(l->user_data_b64);
		return PROV_OK;
	}
	if (!l->user_data_doc)
		return PROV_OK;
	values = user_data_values(ctx, l, scope);
	doc = bootstrap_fill(l->user_data_doc, values, err);
	json_decref(values);
	if (!doc) {
		char *msg = xasprintf("aws: %s: %s", l->address, err->msg);

		snprintf(err->msg, sizeof(err->msg), "%s", msg);
		free(msg);
		return PROV_ERROR;
	}
	n = strlen(doc);
	*out = xcalloc(4 * ((n + 2) / 3) + 1, 1);
	EVP_EncodeBlock((unsigned char *)*out, (const unsigned char *)doc, (int)n);
	free(doc);
	return PROV_OK;
}

int aws_launch_user_data_of(struct prov_ctx *ctx, const char *id, char **out,
			    struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp;
	const char *v;
	int rc;

	*out = NULL;
	aws_param(&p, "InstanceId", id);
	aws_param(&p, "Attribute", "userData");
	rc = aws_query(ctx, AWS_EC2, "DescribeInstanceAttribute", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	v = awsxml_str(resp, "userData.value");
	if (v && *v)
		*out = xstrdup(v);
	json_decref(resp);
	return PROV_OK;
}

static void launch_params(struct aws_params *p, const struct launch *l,
			  const struct prov_scope *scope, long count, const char *token,
			  const char *user_data)
{
	json_t *extra = json_object();
	int i;

	aws_param(p, "ImageId", l->image);
	aws_param(p, "InstanceType", l->type);
	aws_paramf(p, "MinCount", "%ld", count);
	aws_paramf(p, "MaxCount", "%ld", count);
	aws_param(p, "ClientToken", token);
	if (l->key_pair)
		aws_param(p, "KeyName", l->key_pair);
	aws_param(p, "MetadataOptions.HttpTokens", "required");
	aws_param(p, "MetadataOptions.HttpEndpoint", "enabled");
	/*
	 * The node TTL (issue 29): a node reads its kiln:expires tag from the
	 * instance metadata (no API call, no IAM permission), and powering
	 * itself off past it terminates it rather than leaving it stopped
	 * (its EBS root still billing).
	 */
	aws_param(p, "MetadataOptions.InstanceMetadataTags", "enabled");
	aws_param(p, "InstanceInitiatedShutdownBehavior", "terminate");
	aws_param(p, "BlockDeviceMapping.1.DeviceName", l->root_dev);
	aws_paramf(p, "BlockDeviceMapping.1.Ebs.VolumeSize", "%ld", l->disk_gb);
	aws_param(p, "BlockDeviceMapping.1.Ebs.VolumeType", l->disk_type);
	aws_param(p, "BlockDeviceMapping.1.Ebs.Encrypted", "true");
	aws_param(p, "BlockDeviceMapping.1.Ebs.DeleteOnTermination", "true");
	/*
	 * Interfaces carry the subnet and the group; EFA is an interface type,
	 * one per network card (card 0 the primary, device 0; the others
	 * device 1), as many as the type has EFA interfaces.
	 */
	for (i = 0; i < (l->efa && l->efa_interfaces > 1 ? l->efa_interfaces : 1); i++) {
		char *k = xasprintf("NetworkInterface.%d.", i + 1), *v;

#define NIC(name, value)                                                                           \
	do {                                                                                       \
		v = xasprintf("%s%s", k, name);                                                    \
		aws_param(p, v, value);                                                            \
		free(v);                                                                           \
	} while (0)
		NIC("DeviceIndex", i == 0 ? "0" : "1");
		if (l->efa_interfaces > 1) {
			char card[16];

			snprintf(card, sizeof(card), "%d", i);
			NIC("NetworkCardIndex", card);
		}
		NIC("SubnetId", l->subnet);
		NIC("SecurityGroupId.1", l->sg);
		NIC("DeleteOnTermination", "true");
		if (l->efa)
			NIC("InterfaceType", "efa");
		if (l->public && i == 0)
			NIC("AssociatePublicIpAddress", "true");
#undef NIC
		free(k);
	}
	if (l->pg)
		aws_param(p, "Placement.GroupName", l->pg);
	if (l->profile)
		aws_param(p, "IamInstanceProfile.Name", l->profile);
	if (user_data)
		aws_param(p, "UserData", user_data);
	aws_capacity_launch_params(p, &l->cap);
	json_object_set_new(extra, TAG_ZONES, json_string(l->zones));
	json_object_set_new(extra, TAG_GANG, json_string(l->gang ? "true" : "false"));
	if (l->cap.spot)
		json_object_set_new(extra, TAG_SPOT_FALLBACK,
				    json_string(l->cap.spot_fallback ? "true" : "false"));
	json_object_set_new(extra, TAG_DISK, json_sprintf("%ld/%s", l->disk_gb, l->disk_type));
	json_object_set_new(extra, "kiln:role", json_string(l->role ? l->role : ""));
	if (l->user_data_digest)
		json_object_set_new(extra, TAG_USER_DATA, json_string(l->user_data_digest));
	aws_tag_spec(p, 1, "instance", scope, l->address, extra);
	aws_tag_spec(p, 2, "volume", scope, l->address, NULL);
	json_decref(extra);
}

/*
 * A ClientToken (at most 64 characters) for one launch of count in zone,
 * and chunk of it (from 1; 0: launched whole); spot's on-demand stand-in
 * has its own, which says so (aws_capacity.h).
 */
static void launch_token(const char *base, const char *zone, long count, long chunk, char out[65],
			 bool fallback)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char *in = chunk ? xasprintf("%s/%s/%ld/chunk%ld", base, zone, count, chunk)
			 : xasprintf("%s/%s/%ld", base, zone, count);
	size_t i, at = fallback ? strlen(CAPACITY_FALLBACK_TOKEN) : 0;

	SHA256((const unsigned char *)in, strlen(in), md);
	memcpy(out, CAPACITY_FALLBACK_TOKEN, at);
	for (i = 0; i < 24; i++)
		snprintf(out + at + 2 * i, 3, "%02x", md[i]);
	free(in);
}

/*
 * How long RunInstances is retried while EC2 does not see a new instance
 * profile yet: IAM is eventually consistent (IAM User Guide, "Changes that
 * I make are not always immediately visible"); Terraform's AWS provider
 * retries the same error for two minutes.
 */
#define PROFILE_UNSEEN_MAX_S 120

/* Whether a refused RunInstances says EC2 does not know the launch's instance profile yet. */
static bool profile_unseen(const struct launch *l, int rc, const struct kiln_error *err)
{
	return rc == PROV_ERROR && l->profile && strstr(err->msg, "iamInstanceProfile");
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One RunInstances of count, chunk of a launch (0: the whole of it). */
static int launch_one(struct prov_ctx *ctx, const struct launch *l, const struct prov_scope *scope,
		      long count, const char *token, long token_count, long chunk, json_t **ids,
		      struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp = NULL;
	char tok[65], *user_data;
	double since;
	int rc, attempt;

	rc = launch_user_data(ctx, l, scope, &user_data, err);
	if (rc != PROV_OK)
		return rc;
	launch_token(token, l->zone, token_count, chunk, tok, l->cap.fallback);
	launch_params(&p, l, scope, count, tok, user_data);
	free(user_data);
	/*
	 * A profile made a moment ago that EC2 does not see yet: the launch was
	 * refused and made nothing, so the same call (same ClientToken) is made
	 * again, bounded, each time with the reason in the debug trace.
	 */
	for (attempt = 0, since = mono_s();; attempt++) {
		memset(err, 0, sizeof(*err));
		rc = aws_query(ctx, AWS_EC2, "RunInstances", &p, ids ? &resp : NULL, err);
		if (!profile_unseen(l, rc, err) || mono_s() - since >= PROFILE_UNSEEN_MAX_S)
			break;
		log_debug("%s: RunInstances refused: %s: instance profile %s is not visible to "
			  "EC2 yet (IAM is eventually consistent); retry %d after %.1fs",
			  l->address, err->msg, l->profile, attempt + 1, mono_s() - since);
		/* A wait, not a transport retry: under the same deadline as the call's retries. */
		if (!retry_pause(attempt, 500, 8000))
			break;
	}
	aws_params_release(&p);
	/* Only a launch made has ids: a refused one leaves *ids NULL. */
	if (ids)
		*ids = NULL;
	if (ids && rc == PROV_OK) {
		json_t *insts = awsxml_list(resp, "instancesSet"), *inst;
		size_t i;

		*ids = json_array();
		json_array_foreach(insts, i, inst) if (awsxml_str(inst, "instanceId"))
		    json_array_append_new(*ids, json_string(awsxml_str(inst, "instanceId")));
		json_decref(insts);
	}
	json_decref(resp);
	if (profile_unseen(l, rc, err))
		kiln_error_hint(
		    err,
		    "EC2 has not seen instance profile %s for %.0f s after kiln made it: "
		    "IAM is eventually consistent, and slower at times; apply again in "
		    "a few minutes",
		    l->profile, mono_s() - since);
	aws_capacity_launch_refused(&l->cap, rc, err);
	if (aws_capacity_fall_back(&l->cap, rc, err)) {
		struct launch od = *l;

		log_warn("%s: no spot capacity for %ld × %s in %s (%s); launching on demand",
			 l->address, count, l->type, l->zone, err->msg);
		od.cap.fallback = true;
		memset(err, 0, sizeof(*err));
		return launch_one(ctx, &od, scope, count, token, token_count, chunk, ids, err);
	}
	return rc;
}

/*
 * A gang larger than EC2's RunInstances instance bucket (aws_rate.h) can
 * never launch in one call: EC2 refuses it with RequestLimitExceeded
 * however long kiln waits. It launches in chunks the bucket holds, each
 * all or nothing (MinCount = MaxCount), the next once the bucket has
 * refilled; a chunk that fails undoes the chunks before it, so no part
 * of a gang is left running, and the error says so. Each chunk has its
 * own ClientToken and carries the group's tags: an apply killed between
 * chunks leaves tagged instances that the next one adopts.
 */
static int launch_chunks(struct prov_ctx *ctx, const struct launch *l,
			 const struct prov_scope *scope, long count, const char *token,
			 long token_count, long size, json_t **ids, struct kiln_error *err)
{
	long chunks = (count + size - 1) / size, k, done = 0;
	json_t *all = json_array();
	int rc = PROV_OK;

	log_info("%s: launching %ld instances in %ld chunks of at most %ld (EC2's RunInstances "
		 "instance bucket holds %ld)",
		 l->address, count, chunks, size, size);
	for (k = 0; k < chunks && rc == PROV_OK; k++) {
		long n = count - done < size ? count - done : size;
		json_t *part = NULL;

		rc = launch_one(ctx, l, scope, n, token, token_count, k + 1, &part, err);
		if (rc == PROV_OK) {
			json_array_extend(all, part);
			done += n;
			/* Tests only: a crash between chunks (kiln-aws(7)). */
			aws_test_kill_at("chunk");
		}
		json_decref(part);
	}
	if (rc != PROV_OK && done > 0) {
		struct kiln_error undo = {0};
		char msg[sizeof(err->msg)];
		int urc = aws_launch_terminate(ctx, all, &undo);

		snprintf(msg, sizeof(msg), "%s", err->msg);
		if (urc == PROV_OK) {
			log_warn("%s: chunk %ld of %ld failed (%s): terminated the %ld instances "
				 "the chunks before it launched, so no part of the gang runs",
				 l->address, k, chunks, msg, done);
			kiln_error_set(err,
				       "%s (chunk %ld of %ld of a gang of %ld; the %ld instances of "
				       "the chunks before it were terminated: no part of the gang "
				       "runs)",
				       msg, k, chunks, count, done);
		} else {
			kiln_error_set(err,
				       "%s (chunk %ld of %ld of a gang of %ld); terminating the %ld "
				       "instances the chunks before it launched failed too: %s",
				       msg, k, chunks, count, done, undo.msg);
			kiln_error_hint(err, "run kiln destroy, or apply again: they carry the "
					     "group's tags and are found");
		}
	}
	if (ids && rc == PROV_OK)
		*ids = all;
	else
		json_decref(all);
	return rc;
}

/*
 * Launch count instances. The ClientToken is made from token, the zone
 * and token_count (the count for a create; 0 for a grow, whose count may
 * be read differently on a retry while EC2 catches up: the same grow must
 * keep its token, or it would launch twice).
 */
int aws_launch_run(struct prov_ctx *ctx, const struct launch *l, const struct prov_scope *scope,
		   long count, const char *token, long token_count, json_t **ids,
		   struct kiln_error *err)
{
	long size = aws_rate_launch_chunk();

	if (ids)
		*ids = NULL;
	if (count > size)
		return launch_chunks(ctx, l, scope, count, token, token_count, size, ids, err);
	return launch_one(ctx, l, scope, count, token, token_count, 0, ids, err);
}

int aws_launch_describe_scope(struct prov_ctx *ctx, const struct prov_scope *scope, json_t **out,
			      struct kiln_error *err)
{
	struct aws_params f = {{0}};
	int rc;

	aws_launch_state_filter(&f, aws_scope_filters(&f, 1, scope));
	rc = aws_launch_describe(ctx, &f, out, err);
	aws_params_release(&f);
	return rc;
}

int aws_launch_init(struct prov_ctx *ctx, struct launch *l, const char *address, const json_t *a,
		    const json_t *deps, struct kiln_error *err)
{
	const char *role = json_string_value(json_object_get(a, "role"));
	bool in_pg = json_string_value(json_object_get(a, "placement_group")) != NULL;
	struct strbuf zs = {0};
	json_t *z;
	size_t i;
	int rc = PROV_OK;

	memset(l, 0, sizeof(*l));
	l->address = address;
	l->cap.address = address;
	l->type = json_string_value(json_object_get(a, "instance_type"));
	l->image = json_string_value(json_object_get(a, "image"));
	l->disk_gb = (long)json_integer_value(json_object_get(a, "disk_size_gb"));
	l->disk_type = json_string_value(json_object_get(a, "disk_type"));
	l->sg = aws_dep_attr(deps, "aws_security_group", "main", "id");
	l->efa = json_is_true(json_object_get(a, "efa"));
	l->public = json_is_true(json_object_get(a, "public"));
	l->gang = json_is_true(json_object_get(a, "gang"));
	l->cap.spot = json_string_value(json_object_get(a, "market")) &&
		  strcmp(json_string_value(json_object_get(a, "market")), "spot") == 0;
	l->role = role;
	l->key_pair = json_string_value(json_object_get(a, "key_pair"));
	l->deps = deps;
	l->user_data_doc = json_string_value(json_object_get(a, "user_data_text"));
	l->user_data_digest = json_string_value(json_object_get(a, "user_data"));
	if (in_pg)
		l->pg = aws_dep_attr(deps, "aws_placement_group", "fabric", "group_name");
	if (role)
		l->profile = aws_dep_attr(deps, "aws_iam_role", role, "profile");
	if (!l->image) {
		kiln_error_set(err, "aws: %s has no image", address);
		kiln_error_hint(err, "set compute.GROUP.image to an AMI id of region %s",
				ctx->region);
		return PROV_ERROR;
	}
	if (!l->sg || (role && !l->profile) || (in_pg && !l->pg)) {
		kiln_error_set(err, "aws: %s needs its security group%s%s, which %s not recorded",
			       address, role ? ", instance profile" : "",
			       l->pg ? "" : " or placement group", "are");
		kiln_error_hint(err, "run plan again: it refreshes what exists");
		return PROV_ERROR;
	}
	json_array_foreach(json_object_get(a, "zones"), i, z)
	    sb_addf(&zs, "%s%s", i ? "," : "", json_string_value(z));
	l->zones = zs.buf ? zs.buf : xstrdup("");
	rc = aws_capacity_launch_init(ctx, &l->cap, a, deps, err);
	if (rc == PROV_OK)
		rc = aws_launch_root_device(ctx, l->image, &l->root_dev, err);
	if (rc == PROV_OK && l->efa)
		rc = aws_launch_efa_interfaces(ctx, l->type, &l->efa_interfaces, err);
	return rc;
}

void aws_launch_release(struct launch *l)
{
	free(l->root_dev);
	free(l->zones);
	free(l->cap.reservation_zone);
	free(l->user_data_b64);
	l->root_dev = NULL;
	l->zones = NULL;
	l->cap.reservation_zone = NULL;
	l->user_data_b64 = NULL;
}

int aws_launch_in(struct prov_ctx *ctx, struct launch *l, const struct prov_scope *scope,
		  const json_t *deps, const char *zone, long count, const char *token, json_t **ids,
		  struct kiln_error *err)
{
	if (ids)
		*ids = NULL;
	l->zone = zone;
	if (aws_capacity_launch_zone(&l->cap, zone, err) != PROV_OK)
		return PROV_CAPACITY;
	l->subnet = aws_dep_attr(deps, "aws_subnet", zone, "id");
	if (!l->subnet) {
		kiln_error_set(err, "aws: %s needs aws_subnet.%s, which is not recorded",
			       l->address, zone);
		kiln_error_hint(err, "run plan again: it refreshes what exists");
		return PROV_ERROR;
	}
	return aws_launch_run(ctx, l, scope, count, token, count, ids, err);
}

int aws_launch_terminate_range(struct prov_ctx *ctx, const json_t *ids, size_t from, size_t n,
			       struct kiln_error *err)
{
	struct aws_params p = {{0}};
	size_t i;
	int rc;

	size_t size = (size_t)aws_rate_terminate_chunk();

	if (n == 0)
		return PROV_OK;
	/* No one call names more than EC2's TerminateInstances instance bucket holds. */
	if (n > size) {
		for (i = 0, rc = PROV_OK; i < n && rc == PROV_OK; i += size)
			rc = aws_launch_terminate_range(ctx, ids, from + i,
							n - i < size ? n - i : size, err);
		return rc;
	}
	for (i = 0; i < n; i++) {
		char *k = xasprintf("InstanceId.%zu", i + 1);

		aws_param(&p, k, json_string_value(json_array_get(ids, from + i)));
		free(k);
	}
	rc = aws_query(ctx, AWS_EC2, "TerminateInstances", &p, NULL, err);
	aws_params_release(&p);
	return rc == PROV_NOTFOUND ? PROV_OK : rc;
}

int aws_launch_terminate(struct prov_ctx *ctx, const json_t *ids, struct kiln_error *err)
{
	return aws_launch_terminate_range(ctx, ids, 0, json_array_size(ids), err);
}
