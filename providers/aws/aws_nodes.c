/*
 * aws_nodes.c - instance groups: one compute group's instances, launched
 * with one RunInstances call whose MinCount = MaxCount = count (all or
 * nothing: the gang a multi-node job needs) and a ClientToken, tagged in the
 * call. The group has no object of its own in EC2: its id is
 * "ig/CLUSTER/WORKSPACE/GROUP" and its live form is made from the instances
 * that carry its kiln:address tag, found with one DescribeInstances.
 *
 * What EC2 reports on an instance (type, image, zone, profile, EFA
 * interfaces, placement group, market) is read from it; the launch choices
 * it does not report (the zones in order, gang, the root volume) are kept
 * in kiln:* tags at launch. Which zone a new group launches in, and moving
 * the groups of this apply when a zone has no capacity, is aws_zones.c's.
 */
#include "aws_ec2.h"
#include "aws_capacity.h"
#include "aws_launch.h"

#include "aws/awsxml.h"
#include "log.h"
#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * "ig/C/W/G", or "ig/C/W/G@LINEAGE" for a group made by a state with a
 * lineage -> the parts (malloc'd; *lineage NULL for the first form, and
 * lineage itself may be NULL); false when id is not one. The lineage is in
 * the id so that a read, a wait or a delete of one state's group never
 * counts another state's instances tagged with the same address.
 */
static bool ig_id_parse(const char *id, char **cluster, char **ws, char **group, char **lineage)
{
	const char *a, *b, *c, *at;

	if (strncmp(id, "ig/", 3) != 0)
		return false;
	a = id + 3;
	b = strchr(a, '/');
	c = b ? strrchr(b + 1, '/') : NULL;
	if (!b || !c || b == a || c == b + 1 || !c[1])
		return false;
	at = strchr(c + 1, '@');
	if (at && (at == c + 1 || !at[1]))
		return false;
	*cluster = xstrndup(a, (size_t)(b - a));
	*ws = xstrndup(b + 1, (size_t)(c - b - 1));
	*group = at ? xstrndup(c + 1, (size_t)(at - c - 1)) : xstrdup(c + 1);
	if (lineage)
		*lineage = at ? xstrdup(at + 1) : NULL;
	return true;
}

static char *ig_id(const char *cluster, const char *ws, const char *address, const char *lineage)
{
	const char *dot = strchr(address, '.');

	return lineage ? xasprintf("ig/%s/%s/%s@%s", cluster, ws, dot ? dot + 1 : address, lineage)
		       : xasprintf("ig/%s/%s/%s", cluster, ws, dot ? dot + 1 : address);
}

static bool has_efa(json_t *inst)
{
	json_t *nics = awsxml_list(inst, "networkInterfaceSet"), *nic;
	bool efa = false;
	size_t i;

	json_array_foreach(nics, i, nic)
	{
		const char *t = awsxml_str(nic, "interfaceType");

		efa |= t && strcmp(t, "efa") == 0;
	}
	json_decref(nics);
	return efa;
}

/* The profile name from its ARN: arn:aws:iam::ACCOUNT:instance-profile/PATH/NAME. */
static const char *profile_name(const char *arn)
{
	const char *slash = arn ? strrchr(arn, '/') : NULL;

	return slash ? slash + 1 : arn;
}

/* One instance as a node of the group's live view (nodes.h). */
static json_t *node_of(json_t *inst)
{
	json_t *tags = aws_ec2_item_tags(inst), *node;

	node = nodes_new(awsxml_str(inst, "instanceId"),
			 awsxml_str(inst, "placement.availabilityZone"),
			 awsxml_str(inst, "privateIpAddress"), awsxml_str(inst, "ipAddress"),
			 awsxml_str(inst, "instanceState.name"), awsxml_str(inst, "launchTime"),
			 json_string_value(json_object_get(tags, PROV_TAG_HEALTH)));
	json_decref(tags);
	return node;
}

/* A group's live form from its instances (all with one address tag). */
static json_t *group_live(const char *id, json_t *insts)
{
	json_t *first = json_array_get(insts, 0), *tags = aws_ec2_item_tags(first), *attrs, *zones,
	       *ids = json_array(), *nodes = json_array(), *held = json_object(), *inst;
	const char *ztag = json_string_value(json_object_get(tags, TAG_ZONES));
	const char *disk = json_string_value(json_object_get(tags, TAG_DISK));
	const char *gang = json_string_value(json_object_get(tags, TAG_GANG));
	const char *pg = awsxml_str(first, "placement.groupName");
	bool pending = false;
	size_t i;
	long disk_gb = 0;
	char disk_type[32] = "";

	json_array_foreach(insts, i, inst)
	{
		const char *state = awsxml_str(inst, "instanceState.name");

		const char *cr = awsxml_str(inst, "capacityReservationId");

		pending |= !state || strcmp(state, "running") != 0;
		json_array_append_new(nodes, node_of(inst));
		if (cr)
			json_object_set_new(
			    held, cr,
			    json_integer(json_integer_value(json_object_get(held, cr)) + 1));
	}
	nodes_order(nodes);
	/* instance_ids: newest first (a shrink takes the first ones), the nodes reversed. */
	for (i = json_array_size(nodes); i-- > 0;)
		json_array_append(ids, json_object_get(json_array_get(nodes, i), "id"));
	/* One node's report, not the group's. */
	json_object_del(tags, PROV_TAG_HEALTH);
	zones = json_array();
	if (ztag) {
		char *copy = xstrdup(ztag), *save = NULL, *z;

		for (z = strtok_r(copy, ",", &save); z; z = strtok_r(NULL, ",", &save))
			json_array_append_new(zones, json_string(z));
		free(copy);
	}
	if (disk)
		sscanf(disk, "%ld/%31s", &disk_gb, disk_type);
	attrs = json_pack(
	    "{s:s?, s:I, s:b, s:s, s:s?, s:o, s:I, s:s, s:s?, s:b, s:b, s:s?, s:o, s:s?, s:s?, "
	    "s:s?, s:s?}",
	    "instance_type", awsxml_str(first, "instanceType"), "count",
	    (json_int_t)json_array_size(insts), "gang", gang && strcmp(gang, "true") == 0, "market",
	    aws_capacity_market(first), "image", awsxml_str(first, "imageId"), "zones", zones,
	    "disk_size_gb", (json_int_t)disk_gb, "disk_type", disk_type, "role", NULL, "public",
	    awsxml_str(first, "ipAddress") != NULL, "efa", has_efa(first), "placement_group", NULL,
	    "instance_ids", ids, "zone", awsxml_str(first, "placement.availabilityZone"),
	    "subnet_id", awsxml_str(first, "subnetId"), "security_group_id",
	    awsxml_str(first, "groupSet.0.groupId")
		? awsxml_str(first, "groupSet.0.groupId")
		: awsxml_str(first, "networkInterfaceSet.0.groupSet.0.groupId"),
	    "profile", profile_name(awsxml_str(first, "iamInstanceProfile.arn")));
	/* The logical names the spec uses: the role behind the profile, the fabric's group. */
	{
		const char *role = json_string_value(json_object_get(tags, "kiln:role"));

		json_object_set_new(attrs, "role", role && *role ? json_string(role) : json_null());
		json_object_set_new(attrs, "placement_group",
				    pg && *pg ? json_string("fabric") : json_null());
		json_object_set_new(attrs, "placement_group_name",
				    pg && *pg ? json_string(pg) : json_null());
		/* Only when set, as the spec's access.key_pair is (expand_access_attrs). */
		if (awsxml_str(first, "keyName"))
			json_object_set_new(attrs, "key_pair",
					    json_string(awsxml_str(first, "keyName")));
		/* The digest of the user data it was launched with (null: launched without). */
		json_object_set_new(
		    attrs, "user_data",
		    json_string_value(json_object_get(tags, TAG_USER_DATA))
			? json_string(json_string_value(json_object_get(tags, TAG_USER_DATA)))
			: json_null());
	}
	aws_capacity_live(first, tags, attrs);
	/*
	 * Read only, not an input: the slots its nodes take in each reservation
	 * ({id: n}), which a replace frees before it launches (preflight).
	 */
	if (json_object_size(held))
		json_object_set(attrs, "reservations_held", held);
	json_decref(held);
	json_object_set_new(attrs, "nodes", nodes);
	return aws_live("aws_instance_group", id, pending ? "pending" : "ready", attrs, tags);
}

/*
 * Group live instances by the group id their own tags make,
 * ig/CLUSTER/WORKSPACE/GROUP[@LINEAGE]: {id: [instances]}.
 */
static json_t *group_instances(json_t *insts)
{
	json_t *out = json_object(), *inst;
	size_t i;

	json_array_foreach(insts, i, inst)
	{
		json_t *tags = aws_ec2_item_tags(inst), *list;
		const char *addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));
		const char *c = json_string_value(json_object_get(tags, PROV_TAG_CLUSTER));
		const char *w = json_string_value(json_object_get(tags, PROV_TAG_WORKSPACE));
		char *key;

		const char *lineage = json_string_value(json_object_get(tags, PROV_TAG_LINEAGE));

		if (!addr || !c || !w ||
		    !aws_launch_alive(awsxml_str(inst, "instanceState.name"))) {
			json_decref(tags);
			continue;
		}
		key = ig_id(c, w, addr, lineage && *lineage ? lineage : NULL);
		list = json_object_get(out, key);
		if (!list) {
			list = json_array();
			json_object_set_new(out, key, list);
		}
		json_array_append(list, inst);
		free(key);
		json_decref(tags);
	}
	return out;
}

int aws_ig_list(struct prov_ctx *ctx, const struct prov_scope *scope, const char *page,
		json_t **out, char **next, struct kiln_error *err)
{
	struct aws_params f = {{0}};
	json_t *insts, *groups, *list;
	const char *id;
	bool skip;
	int rc;

	*next = NULL;
	*out = NULL;
	/* Instances live in the scope's VPC: none without it, and no call. */
	rc = aws_ec2_outside_vpc(ctx, scope, page, &skip, err);
	if (rc != PROV_OK)
		return rc;
	if (skip) {
		aws_refresh_seen(ctx, scope, "aws_instance_group", 0);
		*out = json_array();
		return PROV_OK;
	}
	aws_launch_state_filter(&f, aws_scope_filters(&f, 1, scope));
	rc = aws_launch_describe(ctx, &f, &insts, err);
	aws_params_release(&f);
	if (rc != PROV_OK)
		return rc;
	aws_refresh_seen(ctx, scope, "aws_instance_group", json_array_size(insts));
	groups = group_instances(insts);
	*out = json_array();
	json_object_foreach(groups, id, list) json_array_append_new(*out, group_live(id, list));
	json_decref(groups);
	json_decref(insts);
	return PROV_OK;
}

/* The live instances of some groups (ids), one DescribeInstances for all of them. */
static int describe_groups(struct prov_ctx *ctx, const char *const *ids, size_t n, json_t **groups,
			   struct kiln_error *err)
{
	struct aws_params f = {{0}};
	char *cluster = NULL, *ws = NULL, *group = NULL;
	json_t *insts;
	size_t i;
	int rc, k = 0;

	*groups = NULL;
	for (i = 0; i < n; i++) {
		char *key;

		free(cluster), free(ws), free(group);
		if (!ig_id_parse(ids[i], &cluster, &ws, &group, NULL)) {
			aws_params_release(&f);
			kiln_error_set(
			    err,
			    "aws: '%s' is not an instance group id (ig/CLUSTER/WORKSPACE/GROUP)",
			    ids[i]);
			return PROV_ERROR;
		}
		key = xasprintf("Filter.3.Value.%d", ++k);
		{
			char *addr = xasprintf("aws_instance_group.%s", group);

			aws_param(&f, key, addr);
			free(addr);
		}
		free(key);
	}
	{
		struct prov_scope s = {cluster, ws, NULL};
		struct aws_params all = {{0}};

		aws_scope_filters(&all, 1, &s);
		aws_paramf(&all, "Filter.3.Name", "tag:%s", PROV_TAG_ADDRESS);
		sb_addf(&all.sb, "&%s", f.sb.buf);
		aws_launch_state_filter(&all, 4);
		rc = aws_launch_describe(ctx, &all, &insts, err);
		aws_params_release(&all);
	}
	aws_params_release(&f);
	free(cluster), free(ws), free(group);
	if (rc != PROV_OK)
		return rc;
	*groups = group_instances(insts);
	json_decref(insts);
	return PROV_OK;
}

static char *address_of(const char *id)
{
	const char *slash = strrchr(id, '/');
	const char *name = slash ? slash + 1 : id, *at = strchr(name, '@');

	return xasprintf("aws_instance_group.%.*s", at ? (int)(at - name) : (int)strlen(name),
			 name);
}

int aws_ig_read(struct prov_ctx *ctx, const char *id, json_t **out, struct kiln_error *err)
{
	json_t *groups, *list;
	int rc = describe_groups(ctx, &id, 1, &groups, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	list = json_object_get(groups, id);
	if (list && json_array_size(list))
		*out = group_live(id, list);
	json_decref(groups);
	if (!*out) {
		kiln_error_set(err, "aws: instance group %s has no instances", id);
		return PROV_NOTFOUND;
	}
	return PROV_OK;
}

int aws_ig_create(struct prov_ctx *ctx, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	long count = (long)json_integer_value(json_object_get(op->attrs, "count"));
	struct launch l;
	char *id;
	int rc;

	*out = NULL;
	rc = aws_launch_init(ctx, &l, op->address, op->attrs, op->deps, err);
	if (rc == PROV_OK)
		rc = aws_zones_launch(ctx, scope, op, &l, count, err);
	aws_launch_release(&l);
	if (rc != PROV_OK)
		return rc;
	/*
	 * Launched: pending, with the inputs the launch asked for (what a
	 * describe says of them once they run), and no call to read them back
	 * (EC2 may not list them yet, and they are pending anyway). One
	 * DescribeInstances for every waiting group records what EC2 chose.
	 */
	id = ig_id(scope->cluster, scope->workspace, op->address, scope->lineage);
	*out = aws_live("aws_instance_group", id, "pending", json_deep_copy(op->attrs),
			aws_scope_tags(scope, op->address, NULL));
	free(id);
	return PROV_OK;
}

/*
 * Launch count more instances beside a group's live ones (live: its live
 * object), with their settings, tags and owner, in one all-or-nothing call
 * whose idempotency token is tok.
 */
/* A grow targets the reservation (or resource group) its group's instances run in. */
static void launch_beside_capacity(struct launch *l, const json_t *la)
{
	const char *kind = json_string_value(json_object_get(la, "capacity"));
	const char *target = json_string_value(json_object_get(la, "capacity_reservation"));

	if (kind && strcmp(kind, "reservation") == 0)
		l->cap.reservation = target;
	else if (kind && strcmp(kind, "reservation-group") == 0)
		l->cap.reservation_group = target;
}

static int launch_beside(struct prov_ctx *ctx, const char *id, json_t *live, long count,
			 const char *tok, struct kiln_error *err)
{
	json_t *la = json_object_get(live, "attrs");
	char *cluster = NULL, *ws = NULL, *group = NULL, *lineage = NULL, *addr = address_of(id);
	struct launch l = {0};
	json_t *tags = json_object_get(live, "tags");
	int rc;

	ig_id_parse(id, &cluster, &ws, &group, &lineage);
	{
		struct prov_scope s = {cluster, ws, NULL};
		json_t *user = json_object();
		const char *k;
		json_t *v;
		json_object_foreach(tags, k, v) if (strncmp(k, "kiln:", 5) != 0 &&
						    strncmp(k, "aws:", 4) != 0)
		    json_object_set(user, k, v);
		s.user_tags = user;
		/* New instances of a group carry the group's expiry tag. */
		s.expires = json_string_value(json_object_get(tags, PROV_TAG_EXPIRES));
		/* And the group's owner: its id names the lineage. */
		s.lineage = lineage;
		s.owner = json_string_value(json_object_get(tags, PROV_TAG_OWNER));
		l.address = addr;
		l.cap.address = addr;
		l.type = json_string_value(json_object_get(la, "instance_type"));
		l.image = json_string_value(json_object_get(la, "image"));
		l.disk_gb = (long)json_integer_value(json_object_get(la, "disk_size_gb"));
		l.disk_type = json_string_value(json_object_get(la, "disk_type"));
		l.subnet = json_string_value(json_object_get(la, "subnet_id"));
		l.zone = json_string_value(json_object_get(la, "zone"));
		l.sg = json_string_value(json_object_get(la, "security_group_id"));
		l.pg = json_string_value(json_object_get(la, "placement_group_name"));
		l.profile = json_string_value(json_object_get(la, "profile"));
		l.role = json_string_value(json_object_get(la, "role"));
		l.key_pair = json_string_value(json_object_get(la, "key_pair"));
		l.efa = json_is_true(json_object_get(la, "efa"));
		l.public = json_is_true(json_object_get(la, "public"));
		l.gang = json_is_true(json_object_get(la, "gang"));
		l.cap.spot = strcmp(json_string_value(json_object_get(la, "market")), "spot") == 0;
		l.cap.spot_fallback = json_is_true(json_object_get(la, "spot_fallback"));
		launch_beside_capacity(&l, la);
		l.user_data_digest = json_string_value(json_object_get(la, "user_data"));
		l.zones = xstrdup(json_string_value(json_object_get(tags, TAG_ZONES))
				      ? json_string_value(json_object_get(tags, TAG_ZONES))
				      : "");
		if (!l.subnet || !l.sg || !l.type || !l.image) {
			kiln_error_set(err,
				       "aws: %s: its instances do not say their subnet, "
				       "security group, type and image; cannot launch more "
				       "beside them",
				       id);
			kiln_error_hint(err, "replace the group: kiln apply --replace %s", addr);
			rc = PROV_ERROR;
		} else {
			rc = aws_launch_root_device(ctx, l.image, &l.root_dev, err);
		}
		/* New nodes boot as the others did: with the user data EC2 holds for them. */
		if (rc == PROV_OK)
			rc = aws_launch_user_data_of(
			    ctx,
			    json_string_value(json_array_get(
				json_object_get(la, "instance_ids"),
				json_array_size(json_object_get(la, "instance_ids")) - 1)),
			    &l.user_data_b64, err);
		if (rc == PROV_OK && l.efa)
			rc = aws_launch_efa_interfaces(ctx, l.type, &l.efa_interfaces, err);
		if (rc == PROV_OK)
			rc = aws_launch_run(ctx, &l, &s, count, tok, 0, NULL, err);
		json_decref(user);
	}
	free(l.root_dev);
	free(l.zones);
	free(l.user_data_b64);
	free(cluster), free(ws), free(group), free(lineage), free(addr);
	return rc;
}

/*
 * The tags of a group's instances that say how its later launches are made
 * (kiln:gang, kiln:spot-fallback), set to the desired attrs when one of
 * changed is theirs.
 */
static int retag(struct prov_ctx *ctx, const json_t *ids, const json_t *attrs,
		 const char *const *changed, size_t nchanged, struct kiln_error *err)
{
	const char *market = json_string_value(json_object_get(attrs, "market"));
	json_t *tags = json_object();
	size_t i;
	int rc = PROV_OK;

	for (i = 0; i < nchanged; i++) {
		bool on = json_is_true(json_object_get(attrs, changed[i]));

		if (strcmp(changed[i], "gang") == 0)
			json_object_set_new(tags, TAG_GANG, json_string(on ? "true" : "false"));
		else if (strcmp(changed[i], "spot_fallback") == 0 && market &&
			 strcmp(market, "spot") == 0)
			json_object_set_new(tags, TAG_SPOT_FALLBACK,
					    json_string(on ? "true" : "false"));
	}
	if (json_object_size(tags) && json_array_size(ids))
		rc = aws_ec2_put_tags(ctx, ids, tags, err);
	json_decref(tags);
	return rc;
}

int aws_ig_update(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id,
		  json_t *attrs, const char *const *changed, size_t nchanged, json_t **out,
		  struct kiln_error *err)
{
	long want = (long)json_integer_value(json_object_get(attrs, "count")), have;
	json_t *live, *la, *ids;
	int rc;

	(void)scope; /* the group's own tags say whose the new nodes are */
	*out = NULL;
	rc = aws_ig_read(ctx, id, &live, err);
	if (rc != PROV_OK)
		return rc;
	la = json_object_get(live, "attrs");
	ids = json_object_get(la, "instance_ids");
	have = (long)json_array_size(ids);
	/* How later launches are made lives in the instances' tags: rewrite them. */
	rc = retag(ctx, ids, attrs, changed, nchanged, err);
	if (rc != PROV_OK) {
		json_decref(live);
		return rc;
	}
	if (want < have) {
		/* Shrink: the newest go first (ids are newest first). */
		rc = aws_launch_terminate_range(ctx, ids, 0, (size_t)(have - want), err);
	} else if (want > have) {
		/* Grow: launch the difference beside the others; a retry is the same token. */
		const char *oldest =
		    json_string_value(json_array_get(ids, json_array_size(ids) - 1));
		char *tok = xasprintf("%s:grow->%ld:%s", id, want, oldest ? oldest : "");

		rc = launch_beside(ctx, id, live, want - have, tok, err);
		free(tok);
	}
	json_decref(live);
	if (rc == PROV_OK)
		rc = aws_ig_read(ctx, id, out, err);
	return rc;
}

int aws_ig_replace_nodes(struct prov_ctx *ctx, const char *id, const char *const *nodes, size_t n,
			 json_t **out, struct kiln_error *err)
{
	json_t *live, *ids, *bad = json_array();
	struct strbuf tok = {0};
	size_t i, j;
	int rc;

	*out = NULL;
	rc = aws_ig_read(ctx, id, &live, err);
	if (rc != PROV_OK) {
		json_decref(bad);
		return rc;
	}
	ids = json_object_get(json_object_get(live, "attrs"), "instance_ids");
	sb_addf(&tok, "%s:replace", id);
	for (i = 0; i < n; i++) {
		for (j = 0; j < json_array_size(ids); j++)
			if (strcmp(json_string_value(json_array_get(ids, j)) ?: "", nodes[i]) == 0)
				break;
		if (j == json_array_size(ids)) {
			kiln_error_set(err, "aws: %s is not a running instance of %s", nodes[i],
				       id);
			kiln_error_hint(err, "kiln status lists the group's nodes");
			rc = PROV_ERROR;
			goto out;
		}
		json_array_append_new(bad, json_string(nodes[i]));
		sb_addf(&tok, ":%s", nodes[i]);
	}
	/* The new ones first, all or nothing: a launch that fails leaves the group as it was. */
	rc = launch_beside(ctx, id, live, (long)n, tok.buf, err);
	if (rc == PROV_OK)
		aws_test_kill_at("replace");
	if (rc == PROV_OK)
		rc = aws_launch_terminate(ctx, bad, err);
	if (rc == PROV_OK)
		rc = aws_ig_read(ctx, id, out, err);
out:
	sb_release(&tok);
	json_decref(bad);
	json_decref(live);
	return rc;
}

/*
 * Instances with no kiln:cluster tag whose type the catalog lists with GPUs
 * (kiln sprawl), one live object each, priced as a group of one.
 */
int aws_list_unmanaged(struct prov_ctx *ctx, json_t **out, struct kiln_error *err)
{
	struct aws_params f = {{0}};
	json_t *insts, *inst;
	size_t i;
	int rc;

	*out = NULL;
	aws_launch_state_filter(&f, 1);
	rc = aws_launch_describe(ctx, &f, &insts, err);
	aws_params_release(&f);
	if (rc != PROV_OK)
		return rc;
	*out = json_array();
	json_array_foreach(insts, i, inst)
	{
		json_t *tags = aws_ec2_item_tags(inst), *attrs;
		const char *type = awsxml_str(inst, "instanceType");
		const struct catalog_type *t = catalog_find(&catalog_aws, type);
		const char *state = awsxml_str(inst, "instanceState.name");

		if (json_object_get(tags, PROV_TAG_CLUSTER) || !t || t->gpus == 0 ||
		    !awsxml_str(inst, "instanceId")) {
			json_decref(tags);
			continue;
		}
		attrs = json_pack("{s:s, s:i, s:s, s:s, s:i, s:s?, s:s?}", "instance_type", type,
				  "count", 1, "market", aws_capacity_market(inst), "gpu", t->gpu,
				  "gpus", t->gpus, "zone",
				  awsxml_str(inst, "placement.availabilityZone"), "launched",
				  awsxml_str(inst, "launchTime"));
		json_array_append_new(
		    *out, aws_live("aws_instance_group", awsxml_str(inst, "instanceId"),
				   state && strcmp(state, "running") == 0 ? "ready" : "pending",
				   attrs, tags));
	}
	json_decref(insts);
	return PROV_OK;
}

int aws_ig_delete(struct prov_ctx *ctx, const char *id, struct kiln_error *err)
{
	json_t *live, *ids;
	int rc = aws_ig_read(ctx, id, &live, err);

	if (rc == PROV_NOTFOUND)
		return PROV_OK;
	if (rc != PROV_OK)
		return rc;
	ids = json_object_get(json_object_get(live, "attrs"), "instance_ids");
	rc = aws_launch_terminate_range(ctx, ids, 0, json_array_size(ids), err);
	json_decref(live);
	return rc;
}

int aws_ig_wait(struct prov_ctx *ctx, enum prov_wait_for what, struct prov_wait *ids, size_t n,
		struct kiln_error *err)
{
	const char **v = xcalloc(n + 1, sizeof(*v));
	json_t *groups;
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		v[i] = ids[i].id;
	rc = describe_groups(ctx, v, n, &groups, err);
	free(v);
	if (rc != PROV_OK)
		return rc;
	for (i = 0; i < n; i++) {
		json_t *list = json_object_get(groups, ids[i].id);

		ids[i].state = WAIT_PENDING;
		if (what == WAIT_GONE) {
			if (json_array_size(list) == 0)
				ids[i].state = WAIT_DONE;
			continue;
		}
		if (json_array_size(list) > 0) {
			json_t *live = group_live(ids[i].id, list);

			if (strcmp(json_string_value(json_object_get(live, "status")), "ready") ==
			    0) {
				ids[i].state = WAIT_DONE;
				ids[i].live = live;
			} else {
				json_decref(live);
			}
		}
	}
	json_decref(groups);
	return PROV_OK;
}

/*
 * Every instance of the group gets the claim's tags; the group's id names
 * the lineage, so the group is read back under its new id.
 */
int aws_ig_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *id, json_t **out,
		 struct kiln_error *err)
{
	char *cluster = NULL, *ws = NULL, *group = NULL, *lineage = NULL, *addr, *next;
	json_t *live = NULL;
	int rc;

	*out = NULL;
	if (!ig_id_parse(id, &cluster, &ws, &group, &lineage)) {
		kiln_error_set(
		    err, "aws: '%s' is not an instance group id (ig/CLUSTER/WORKSPACE/GROUP)", id);
		return PROV_ERROR;
	}
	rc = aws_ig_read(ctx, id, &live, err);
	if (rc == PROV_OK)
		rc = aws_ec2_claim_tags(
		    ctx, scope, json_object_get(json_object_get(live, "attrs"), "instance_ids"),
		    err);
	json_decref(live);
	addr = xasprintf("aws_instance_group.%s", group);
	next = ig_id(cluster, ws, addr, scope->lineage);
	if (rc == PROV_OK)
		rc = aws_ig_read(ctx, next, out, err);
	free(next);
	free(addr);
	free(cluster), free(ws), free(group), free(lineage);
	return rc;
}
