/*
 * aws_preflight.c - what plan checks with the cloud before anything is
 * spent, for the instance groups it would launch: that each instance type
 * exists in the region and is offered in the group's zones, that it has EFA
 * when the group asks for it, that its GPUs are the ones the catalog says
 * (the live answer wins: a difference is a warning), and that each image
 * exists. Three calls whatever the number of groups: DescribeInstanceTypes,
 * DescribeInstanceTypeOfferings and DescribeImages, each over all of them.
 */
#include "aws_capacity.h"

#include "aws/awsxml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Add s to the string array a once. */
static void add_unique(json_t *a, const char *s)
{
	json_t *v;
	size_t i;

	if (!s)
		return;
	json_array_foreach(a, i, v) if (strcmp(json_string_value(v), s) == 0) return;
	json_array_append_new(a, json_string(s));
}

static void params_list(struct aws_params *p, const char *prefix, json_t *values)
{
	json_t *v;
	size_t i;

	json_array_foreach(values, i, v)
	{
		char *k = xasprintf("%s.%zu", prefix, i + 1);

		aws_param(p, k, json_string_value(v));
		free(k);
	}
}

/* instance type -> its DescribeInstanceTypes item. */
static int describe_types(struct prov_ctx *ctx, json_t *types, json_t **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *items, *it;
	size_t i;
	int rc;

	*out = json_object();
	params_list(&p, "InstanceType", types);
	rc = aws_query(ctx, AWS_EC2, "DescribeInstanceTypes", &p, &resp, err);
	aws_params_release(&p);
	if (rc == PROV_ERROR && strstr(err->msg, "InvalidInstanceType"))
		kiln_error_hint(err,
				"a type the region does not have; check compute.*.instance_type");
	if (rc != PROV_OK)
		return rc;
	items = awsxml_list(resp, "instanceTypeSet");
	json_array_foreach(items, i, it)
	{
		const char *name = awsxml_str(it, "instanceType");
		const char *efa = awsxml_str(it, "networkInfo.efaInfo.maximumEfaInterfaces");

		if (name)
			json_object_set(*out, name, it);
		/* The launch gives an EFA group this many interfaces, one per network card. */
		if (name && efa)
			aws_efa_remember(ctx, name, atoi(efa));
	}
	json_decref(items);
	json_decref(resp);
	return PROV_OK;
}

/* instance type -> [zones offering it], among zones. */
static int describe_offerings(struct prov_ctx *ctx, json_t *types, json_t *zones, json_t **out,
			      struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *items, *it;
	size_t i;
	int rc;

	*out = json_object();
	aws_param(&p, "LocationType", "availability-zone");
	aws_param(&p, "Filter.1.Name", "instance-type");
	params_list(&p, "Filter.1.Value", types);
	aws_param(&p, "Filter.2.Name", "location");
	params_list(&p, "Filter.2.Value", zones);
	rc = aws_query(ctx, AWS_EC2, "DescribeInstanceTypeOfferings", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	items = awsxml_list(resp, "instanceTypeOfferingSet");
	json_array_foreach(items, i, it)
	{
		const char *type = awsxml_str(it, "instanceType");
		const char *zone = awsxml_str(it, "location");
		json_t *list;

		if (!type || !zone)
			continue;
		list = json_object_get(*out, type);
		if (!list) {
			list = json_array();
			json_object_set_new(*out, type, list);
		}
		add_unique(list, zone);
	}
	json_decref(items);
	json_decref(resp);
	return PROV_OK;
}

/* The images of the region among ids: a set of the ids found. */
static int describe_images(struct prov_ctx *ctx, json_t *ids, json_t **out, struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *items, *it;
	size_t i;
	int rc;

	*out = json_object();
	params_list(&p, "ImageId", ids);
	rc = aws_query(ctx, AWS_EC2, "DescribeImages", &p, &resp, err);
	aws_params_release(&p);
	/* One unknown id fails the whole call: then ask for each, to name the one. */
	if ((rc == PROV_NOTFOUND || (rc == PROV_ERROR && strstr(err->msg, "InvalidAMIID"))) &&
	    json_array_size(ids) > 1) {
		json_t *v;
		size_t k;

		json_array_foreach(ids, k, v)
		{
			json_t *one = json_pack("[O]", v), *got;

			rc = describe_images(ctx, one, &got, err);
			json_decref(one);
			if (rc != PROV_OK) {
				json_decref(got);
				return rc;
			}
			json_object_update(*out, got);
			json_decref(got);
		}
		return PROV_OK;
	}
	if (rc == PROV_NOTFOUND || (rc == PROV_ERROR && strstr(err->msg, "InvalidAMIID")))
		return PROV_OK;
	if (rc != PROV_OK)
		return rc;
	items = awsxml_list(resp, "imagesSet");
	json_array_foreach(items, i, it)
	{
		const char *id = awsxml_str(it, "imageId");

		if (id) {
			json_object_set_new(*out, id, json_true());
			/* The launch needs its root device: one call less per group. */
			aws_image_remember(ctx, id, awsxml_str(it, "rootDeviceName"));
		}
	}
	json_decref(items);
	json_decref(resp);
	return PROV_OK;
}

static const char *group_of(const char *address)
{
	const char *dot = strchr(address, '.');

	return dot ? dot + 1 : address;
}

static char *joined(json_t *a)
{
	struct strbuf sb = {0};
	json_t *v;
	size_t i;

	json_array_foreach(a, i, v) sb_addf(&sb, "%s%s", i ? ", " : "", json_string_value(v));
	return sb.buf ? sb_detach(&sb) : xstrdup("none");
}

/* One group against the answers: 0, or -1 with err. */
static int check_group(struct prov_ctx *ctx, const char *address, json_t *attrs, json_t *types,
		       json_t *offers, json_t *images, json_t *warnings, struct kiln_error *err)
{
	const char *type = json_string_value(json_object_get(attrs, "instance_type"));
	const char *image = json_string_value(json_object_get(attrs, "image"));
	json_t *it = json_object_get(types, type), *zones = json_object_get(attrs, "zones"), *z;
	json_t *offered = json_object_get(offers, type), *missing = json_array();
	const struct catalog_type *cat = catalog_find(&catalog_aws, type);
	const char *efa = awsxml_str(it, "networkInfo.efaSupported");
	size_t i, j;
	int rc = 0;

	if (!it) {
		kiln_error_set(err, "aws: compute.%s: instance type %s does not exist in region %s",
			       group_of(address), type, ctx->region);
		kiln_error_hint(err,
				"check the name, or ask for gpu: MODEL:COUNT and let kiln choose");
		rc = -1;
		goto out;
	}
	json_array_foreach(zones, i, z)
	{
		bool found = false;
		json_t *o;

		json_array_foreach(offered, j, o) found |= json_equal(o, z);
		if (!found)
			json_array_append(missing, z);
	}
	if (json_array_size(missing) == json_array_size(zones)) {
		char *want = joined(zones), *have = joined(offered);

		kiln_error_set(err, "aws: compute.%s: %s is not offered in %s (of those, %s)",
			       group_of(address), type, want, have);
		kiln_error_hint(err, "list a zone that offers it under provider.zone, or choose "
				     "another type");
		free(want);
		free(have);
		rc = -1;
		goto out;
	}
	if (json_array_size(missing)) {
		char *m = joined(missing);

		json_array_append_new(warnings,
				      json_sprintf("%s: %s is not offered in %s; a launch that "
						   "falls back there will fail",
						   address, type, m));
		free(m);
	}
	if (json_is_true(json_object_get(attrs, "efa")) && !(efa && strcmp(efa, "true") == 0)) {
		kiln_error_set(err, "aws: compute.%s: %s does not support EFA in %s",
			       group_of(address), type, ctx->region);
		kiln_error_hint(err, "choose a type with EFA, or set network.fabric to ena");
		rc = -1;
		goto out;
	}
	if (cat && cat->efa_interfaces > 0) {
		const char *max = awsxml_str(it, "networkInfo.efaInfo.maximumEfaInterfaces");

		/* EC2 knows best; say when the shipped catalog disagrees. */
		if (max && atoi(max) != cat->efa_interfaces)
			json_array_append_new(
			    warnings,
			    json_sprintf(
				"%s: EC2 says %s takes %s EFA interfaces; the catalog (%s) "
				"says %d; EC2's number is used",
				address, type, max, catalog_aws.date, cat->efa_interfaces));
	}
	if (cat && cat->gpu) {
		const char *name = awsxml_str(it, "gpuInfo.gpus.0.name");
		const char *count = awsxml_str(it, "gpuInfo.gpus.0.count");

		/* The live answer wins over the shipped catalog: say when they differ. */
		if (!name || !count || strcasecmp(name, cat->gpu) != 0 || atoi(count) != cat->gpus)
			json_array_append_new(
			    warnings,
			    json_sprintf("%s: EC2 says %s has %s× %s; the catalog (%s) says "
					 "%d× %s",
					 address, type, count ? count : "no", name ? name : "GPU",
					 catalog_aws.date, cat->gpus, cat->gpu));
	}
	if (image && !json_object_get(images, image)) {
		kiln_error_set(err, "aws: compute.%s.image: %s does not exist in region %s",
			       group_of(address), image, ctx->region);
		kiln_error_hint(err, "images are regional: use the AMI id of this region");
		rc = -1;
	}
out:
	json_decref(missing);
	return rc;
}

int aws_preflight(struct prov_ctx *ctx, const json_t *creates, json_t *warnings, json_t *offerings,
		  struct kiln_error *err)
{
	json_t *types = json_array(), *zones = json_array(), *images = json_array();
	json_t *tinfo = NULL, *offers = NULL, *found = NULL, *z;
	const json_t *r;
	const char *addr;
	size_t i;
	int rc = PROV_OK;

	json_object_foreach_const(creates, addr, r)
	{
		json_t *a = json_object_get(r, "attrs");

		if (strcmp(json_string_value(json_object_get(r, "type")), "aws_instance_group") !=
		    0)
			continue;
		add_unique(types, json_string_value(json_object_get(a, "instance_type")));
		add_unique(images, json_string_value(json_object_get(a, "image")));
		json_array_foreach(json_object_get(a, "zones"), i, z)
		    add_unique(zones, json_string_value(z));
	}
	if (json_array_size(types) == 0) {
		rc = aws_capacity_preflight(ctx, creates, warnings, offerings, err);
		goto out;
	}
	rc = describe_types(ctx, types, &tinfo, err);
	if (rc == PROV_OK)
		rc = describe_offerings(ctx, types, zones, &offers, err);
	if (rc == PROV_OK && json_array_size(images))
		rc = describe_images(ctx, images, &found, err);
	if (rc != PROV_OK)
		goto out;
	json_object_foreach_const(creates, addr, r)
	{
		if (strcmp(json_string_value(json_object_get(r, "type")), "aws_instance_group") !=
		    0)
			continue;
		if (check_group(ctx, addr, json_object_get(r, "attrs"), tinfo, offers, found,
				warnings, err) < 0) {
			rc = PROV_ERROR;
			break;
		}
	}
	if (rc == PROV_OK)
		rc = aws_capacity_preflight(ctx, creates, warnings, offerings, err);
out:
	json_decref(types);
	json_decref(zones);
	json_decref(images);
	json_decref(tinfo);
	json_decref(offers);
	json_decref(found);
	return rc;
}
