/*
 * aws_zones.c - the one zone a workspace's nodes and zone-bound storage
 * live in, chosen by capacity, in provider.zone's order of preference.
 *
 * The first group this apply launches tries the zones in order; the
 * groups after it (expand chains them) join the zone it landed in, or the
 * zone the workspace's nodes were already in. When a later group finds no
 * capacity there and every group in that zone was launched by this same
 * apply, the fabric moves whole: the later group is launched in the next
 * zone, the earlier ones are launched beside it, and only then are their
 * instances in the old zone terminated (never a moment without the
 * capacity already won). Instances that existed before this apply are
 * never terminated to move: the apply fails and names them. Nor do groups
 * in the cluster placement group move: its running instances hold it to
 * one zone, so a relaunch beside them in another zone would be refused.
 *
 * With more than one zone, expand orders the zone-bound storage (the FSx
 * for Lustre file system, the EFS mount target) after every group, and
 * aws_storage_zone puts it in the zone they landed in: nothing holding
 * data is ever made in a zone the nodes leave.
 *
 * A workspace without nodes but with zone-bound storage from an earlier
 * apply (all its groups replaced) launches where that storage is, or not at
 * all: storage that holds data never moves.
 *
 * What this apply launched is remembered in the context (ctx->zoned),
 * per workspace: {"zone", "before": [addresses that had nodes before, or
 * "storage"],
 * "launched": {address: {"attrs", "deps", "token", "count", "ids"}}}.
 */
#include "aws_ec2.h"
#include "aws_launch.h"

#include "aws/awsxml.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

static char *zoned_key(const struct prov_scope *scope)
{
	return xasprintf("%s/%s", scope->cluster, scope->workspace);
}

/* A copy of what this context knows of the workspace's zone, or NULL. */
static json_t *zoned_get(struct prov_ctx *ctx, const struct prov_scope *scope)
{
	char *key = zoned_key(scope);
	json_t *st;

	pthread_mutex_lock(&ctx->mu);
	st = json_deep_copy(json_object_get(ctx->zoned, key));
	pthread_mutex_unlock(&ctx->mu);
	free(key);
	return st;
}

static void zoned_put(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *st)
{
	char *key = zoned_key(scope);

	pthread_mutex_lock(&ctx->mu);
	json_object_set(ctx->zoned, key, st);
	pthread_mutex_unlock(&ctx->mu);
	free(key);
}

/*
 * The zone of the zone-bound storage an earlier apply made in the
 * workspace's subnets (deps: a group's recorded subnets), or NULL: FSx file
 * systems and EFS mount targets each hold a network interface in their
 * subnet, attached to no instance. One DescribeNetworkInterfaces.
 */
static int storage_zone(struct prov_ctx *ctx, const json_t *deps, char **out,
			struct kiln_error *err)
{
	struct aws_params p = {{0}};
	json_t *resp, *enis, *eni;
	const json_t *d;
	const char *key;
	size_t i;
	int rc, n = 0;

	*out = NULL;
	aws_param(&p, "Filter.1.Name", "subnet-id");
	json_object_foreach_const(deps, key, d)
	{
		const char *id = json_string_value(json_object_get(d, "id"));

		if (strncmp(key, "aws_subnet.", 11) == 0 && id) {
			char *k = xasprintf("Filter.1.Value.%d", ++n);

			aws_param(&p, k, id);
			free(k);
		}
	}
	if (n == 0) {
		aws_params_release(&p);
		return PROV_OK;
	}
	rc = aws_query(ctx, AWS_EC2, "DescribeNetworkInterfaces", &p, &resp, err);
	aws_params_release(&p);
	if (rc != PROV_OK)
		return rc;
	enis = awsxml_list(resp, "networkInterfaceSet");
	json_array_foreach(enis, i, eni)
	{
		const char *z = awsxml_str(eni, "availabilityZone");

		if (z && !awsxml_str(eni, "attachment.instanceId")) {
			*out = xstrdup(z);
			break;
		}
	}
	json_decref(enis);
	json_decref(resp);
	return PROV_OK;
}

void aws_refresh_seen(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
		      size_t n)
{
	char *key;

	if (!scope->cluster)
		return;
	key = zoned_key(scope);
	pthread_mutex_lock(&ctx->mu);
	if (!json_object_get(ctx->seen, key))
		json_object_set_new(ctx->seen, key, json_object());
	json_object_set_new(json_object_get(ctx->seen, key), type, json_integer((json_int_t)n));
	pthread_mutex_unlock(&ctx->mu);
	free(key);
}

/* Whether this context's refresh listed each of types (NULL-ended) for the scope and found none. */
static bool seen_none(struct prov_ctx *ctx, const struct prov_scope *scope,
		      const char *const *types)
{
	char *key = zoned_key(scope);
	json_t *seen, *n;
	bool none = true;

	pthread_mutex_lock(&ctx->mu);
	seen = json_object_get(ctx->seen, key);
	for (; *types && none; types++) {
		n = json_object_get(seen, *types);
		none = n && json_integer_value(n) == 0;
	}
	pthread_mutex_unlock(&ctx->mu);
	free(key);
	return none;
}

/* Whether this context's refresh listed both zone-bound types of the scope and found none. */
static bool storage_none(struct prov_ctx *ctx, const struct prov_scope *scope)
{
	static const char *const types[] = {"aws_fsx_lustre", "aws_efs_mount_target", NULL};

	return seen_none(ctx, scope, types);
}

/*
 * Where the workspace's nodes are before this apply launches any: the zone
 * of its placement group's instances (pg, may be NULL), else of any of its
 * groups', else of its zone-bound storage (with deps, when the spec has
 * some), else null; and what is there: the addresses of the groups, or
 * "storage". One DescribeInstances, and one DescribeNetworkInterfaces when
 * there are no nodes but may be storage.
 */
static int zoned_load(struct prov_ctx *ctx, const struct prov_scope *scope, const char *pg,
		      const json_t *deps, json_t **out, struct kiln_error *err)
{
	static const char *const nodes[] = {"aws_instance_group", NULL};
	json_t *insts, *inst, *before = json_array();
	const char *zone = NULL;
	char *held = NULL;
	size_t i;
	int rc;

	*out = NULL;
	/* This context's refresh found no instance of the scope: none to look for. */
	if (seen_none(ctx, scope, nodes)) {
		insts = json_array();
		rc = PROV_OK;
	} else {
		rc = aws_launch_describe_scope(ctx, scope, &insts, err);
	}
	if (rc != PROV_OK) {
		json_decref(before);
		return rc;
	}
	json_array_foreach(insts, i, inst)
	{
		const char *g = awsxml_str(inst, "placement.groupName");
		const char *z = awsxml_str(inst, "placement.availabilityZone");

		if (z && (!zone || (pg && g && strcmp(g, pg) == 0)))
			zone = z;
		if (z && pg && g && strcmp(g, pg) == 0)
			break;
	}
	json_array_foreach(insts, i, inst)
	{
		json_t *tags = aws_ec2_item_tags(inst), *a;
		const char *addr = json_string_value(json_object_get(tags, PROV_TAG_ADDRESS));
		const char *z = awsxml_str(inst, "placement.availabilityZone");
		bool seen = false;
		size_t k;

		json_array_foreach(before, k, a) seen |=
		    addr && strcmp(json_string_value(a), addr) == 0;
		if (addr && z && zone && strcmp(z, zone) == 0 && !seen)
			json_array_append_new(before, json_string(addr));
		json_decref(tags);
	}
	if (!zone && deps && ctx->zone_bound && !storage_none(ctx, scope)) {
		rc = storage_zone(ctx, deps, &held, err);
		if (rc == PROV_OK && held)
			json_array_append_new(before, json_string("storage"));
	}
	if (rc == PROV_OK)
		*out = json_pack("{s:s?, s:o, s:{}}", "zone", zone ? zone : held, "before", before,
				 "launched");
	else
		json_decref(before);
	free(held);
	json_decref(insts);
	return rc;
}

/* "a, b and c" (last "and") or "a, b or c" of the strings of arr. */
static char *join_list(const json_t *arr, const char *last)
{
	struct strbuf sb = {0};
	size_t i, n = json_array_size(arr);

	for (i = 0; i < n; i++)
		sb_addf(&sb, "%s%s%s%s",
			i == 0	     ? ""
			: i + 1 == n ? " "
				     : ", ",
			i > 0 && i + 1 == n ? last : "", i > 0 && i + 1 == n ? " " : "",
			json_string_value(json_array_get(arr, i)));
	return sb.buf ? sb.buf : xstrdup("");
}

/* The zones of provider.zone after zone (all when zone is NULL): a new array. */
static json_t *zones_after(const json_t *zones, const char *zone)
{
	json_t *out = json_array(), *z;
	bool past = zone == NULL;
	size_t i;

	json_array_foreach(zones, i, z)
	{
		if (past)
			json_array_append(out, z);
		past |= zone && strcmp(json_string_value(z), zone) == 0;
	}
	return out;
}

/* Terminate what a failed move launched in the zone it tried (the ids of each launch). */
static void undo_launches(struct prov_ctx *ctx, const json_t *made)
{
	struct kiln_error e = {{0}, {0}};
	json_t *ids;
	size_t i;

	json_array_foreach(made, i, ids) if (aws_launch_terminate(ctx, ids, &e) != PROV_OK)
	    log_warn("aws: could not terminate %zu instances a failed move launched: %s",
		     json_array_size(ids), e.msg);
}

/*
 * Launch the groups this apply launched (launched: each with its
 * remembered attrs, deps, token and count) in zone to; each launch's ids
 * are appended to made, and on PROV_OK set as the group's ids.
 */
static int relaunch(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *launched,
		    const char *to, json_t *made, struct kiln_error *err)
{
	const char *addr;
	json_t *g, *fresh = json_object(), *ids;
	int rc = PROV_OK;

	json_object_foreach(launched, addr, g)
	{
		const json_t *deps = json_object_get(g, "deps");
		struct launch l;

		ids = NULL;
		rc = aws_launch_init(ctx, &l, addr, json_object_get(g, "attrs"), deps, err);
		if (rc == PROV_OK)
			rc = aws_launch_in(ctx, &l, scope, deps, to,
					   (long)json_integer_value(json_object_get(g, "count")),
					   json_string_value(json_object_get(g, "token")), &ids,
					   err);
		aws_launch_release(&l);
		if (rc != PROV_OK) {
			json_decref(ids);
			break;
		}
		json_array_append(made, ids);
		json_object_set_new(fresh, addr, ids);
	}
	if (rc == PROV_OK)
		json_object_foreach(fresh, addr, ids)
		    json_object_set(json_object_get(launched, addr), "ids", ids);
	json_decref(fresh);
	return rc;
}

/*
 * The new group (l, count) found no capacity in st's zone, where only
 * groups this apply launched are: launch it in the next zone with room,
 * the others beside it, and then terminate theirs in the old zone. *ids:
 * the new group's instances.
 */
static int move_fabric(struct prov_ctx *ctx, const struct prov_scope *scope,
		       const struct prov_create *op, struct launch *l, long count, json_t *st,
		       json_t **ids, struct kiln_error *err)
{
	char *from = xstrdup(json_string_value(json_object_get(st, "zone")));
	json_t *zones = zones_after(json_object_get(op->attrs, "zones"), from), *z;
	json_t *launched = json_object_get(st, "launched"), *old = json_object(), *who, *g;
	const char *addr, *to = NULL;
	char *names;
	size_t i;
	int rc = PROV_CAPACITY;

	who = json_array();
	json_object_foreach(launched, addr, g)
	{
		json_object_set(old, addr, json_object_get(g, "ids"));
		json_array_append_new(who, json_string(addr));
	}
	names = join_list(who, "and");
	json_array_foreach(zones, i, z)
	{
		json_t *made = json_array(), *mine = NULL;

		to = json_string_value(z);
		log_warn("%s: no capacity for %ld × %s in %s; the fabric moves to %s with %s "
			 "(launched by this apply)",
			 op->address, count, l->type,
			 i ? json_string_value(json_array_get(zones, i - 1)) : from, to, names);
		rc = aws_launch_in(ctx, l, scope, op->deps, to, count, op->token, &mine, err);
		if (rc == PROV_OK) {
			json_array_append(made, mine);
			rc = relaunch(ctx, scope, launched, to, made, err);
		}
		if (rc == PROV_OK) {
			*ids = mine;
			json_decref(made);
			break;
		}
		json_decref(mine);
		undo_launches(ctx, made);
		json_decref(made);
		if (rc != PROV_CAPACITY)
			break;
	}
	if (rc == PROV_OK) {
		/* The capacity is held in the new zone: only now do the old nodes go. */
		json_object_foreach(old, addr, g)
		{
			if (rc == PROV_OK)
				rc = aws_launch_terminate(ctx, g, err);
			if (rc == PROV_OK)
				log_warn("%s: moved from %s to %s with %s: its %zu instances in %s "
					 "terminated",
					 addr, from, to, op->address, json_array_size(g), from);
		}
		json_object_set_new(st, "zone", json_string(to));
	} else if (rc == PROV_CAPACITY) {
		char *tried;

		json_array_insert_new(zones, 0, json_string(from));
		tried = join_list(zones, "or");
		kiln_error_set(err,
			       "aws: %s: no capacity for %ld × %s in %s; %s (launched by this "
			       "apply) stay%s in %s",
			       op->address, count, l->type, tried, names,
			       json_array_size(who) == 1 ? "s" : "", from);
		kiln_error_hint(err, "try again later, add a zone to provider.zone, or choose "
				     "another instance type");
		free(tried);
	}
	json_decref(zones);
	json_decref(who);
	json_decref(old);
	free(names);
	free(from);
	return rc;
}

/*
 * Whether the new group (l) or a group this apply launched is in the
 * cluster placement group: EC2 keeps one zone for a cluster placement
 * group's running instances, so moving them means relaunching into the
 * same group in another zone while the old ones still run there.
 */
static bool in_placement_group(const struct launch *l, const json_t *st)
{
	const char *addr;
	json_t *g;

	if (l->pg)
		return true;
	json_object_foreach(json_object_get(st, "launched"), addr, g)
	{
		if (json_string_value(
			json_object_get(json_object_get(g, "attrs"), "placement_group")))
			return true;
	}
	return false;
}

/* Launch in the first zone of zones with room; PROV_CAPACITY when none has. */
static int first_with_room(struct prov_ctx *ctx, const struct prov_scope *scope,
			   const struct prov_create *op, struct launch *l, long count,
			   const json_t *zones, json_t **ids, struct kiln_error *err)
{
	size_t i, n = json_array_size(zones);
	char *tried;
	int rc = PROV_CAPACITY;

	for (i = 0; i < n; i++) {
		rc = aws_launch_in(ctx, l, scope, op->deps,
				   json_string_value(json_array_get(zones, i)), count, op->token,
				   ids, err);
		if (rc != PROV_CAPACITY || i + 1 == n)
			break;
		log_warn("%s: no capacity for %ld × %s in %s; the group moves to %s (%s)",
			 op->address, count, l->type, json_string_value(json_array_get(zones, i)),
			 json_string_value(json_array_get(zones, i + 1)), err->msg);
	}
	if (rc != PROV_CAPACITY)
		return rc;
	tried = join_list(zones, "or");
	kiln_error_set(err, "aws: %s: no capacity for %ld × %s in %s", op->address, count, l->type,
		       tried);
	kiln_error_hint(err, "try again later, add a zone to provider.zone, or choose another "
			     "instance type");
	free(tried);
	return rc;
}

int aws_zones_launch(struct prov_ctx *ctx, const struct prov_scope *scope,
		     const struct prov_create *op, struct launch *l, long count,
		     struct kiln_error *err)
{
	const json_t *zones = json_object_get(op->attrs, "zones");
	json_t *st = NULL, *ids = NULL;
	const char *zone;
	int rc;

	/* One zone: nothing to choose, nothing to move. */
	if (json_array_size(zones) <= 1)
		return first_with_room(ctx, scope, op, l, count, zones, NULL, err);
	st = zoned_get(ctx, scope);
	if (!st) {
		rc = zoned_load(ctx, scope, l->pg, op->deps, &st, err);
		if (rc != PROV_OK)
			return rc;
	}
	zone = json_string_value(json_object_get(st, "zone"));
	if (!zone) {
		rc = first_with_room(ctx, scope, op, l, count, zones, &ids, err);
		if (rc == PROV_OK)
			json_object_set_new(st, "zone", json_string(l->zone));
	} else {
		const json_t *before = json_object_get(st, "before");
		bool storage = json_array_size(before) &&
			       strcmp(json_string_value(json_array_get(before, 0)), "storage") == 0;

		rc = aws_launch_in(ctx, l, scope, op->deps, zone, count, op->token, &ids, err);

		if (rc == PROV_CAPACITY && storage) {
			kiln_error_set(err,
				       "aws: %s: no capacity for %ld × %s in %s, where the "
				       "workspace's file systems (FSx for Lustre, EFS mount "
				       "targets) already are; kiln never moves storage that holds "
				       "data",
				       op->address, count, l->type, zone);
			kiln_error_hint(err, "try again later, or choose another instance type");
		} else if (rc == PROV_CAPACITY && json_array_size(before)) {
			char *there = join_list(before, "and");

			kiln_error_set(err,
				       "aws: %s: no capacity for %ld × %s in %s, where %s already "
				       "run%s; kiln never terminates nodes an earlier apply made "
				       "to move the fabric",
				       op->address, count, l->type, zone, there,
				       json_array_size(before) == 1 ? "s" : "");
			kiln_error_hint(err, "try again later, or replace those groups together to "
					     "move the whole fabric (kiln apply --replace ADDRESS "
					     "for each)");
			free(there);
		} else if (rc == PROV_CAPACITY && in_placement_group(l, st)) {
			json_t *who = json_array();
			const char *a;
			json_t *g;
			char *there;

			json_object_foreach(json_object_get(st, "launched"), a, g)
			    json_array_append_new(who, json_string(a));
			there = join_list(who, "and");

			kiln_error_set(err,
				       "aws: %s: no capacity for %ld × %s in %s, where %s "
				       "(launched by this apply) already run%s in the cluster "
				       "placement group; a cluster placement group holds one zone, "
				       "so the fabric cannot move while they run",
				       op->address, count, l->type, zone, there,
				       json_array_size(who) == 1 ? "s" : "");
			json_decref(who);
			kiln_error_hint(err, "try again later, or replace those groups together "
					     "(kiln apply --replace ADDRESS for each): launched "
					     "into an empty placement group, the fabric takes the "
					     "first zone with room for it");
			free(there);
		} else if (rc == PROV_CAPACITY) {
			rc = move_fabric(ctx, scope, op, l, count, st, &ids, err);
		}
	}
	if (rc == PROV_OK) {
		json_object_set_new(json_object_get(st, "launched"), op->address,
				    json_pack("{s:O, s:O, s:s?, s:I, s:O}", "attrs", op->attrs,
					      "deps", op->deps ? op->deps : json_null(), "token",
					      op->token, "count", (json_int_t)count, "ids",
					      ids ? ids : json_array()));
		/* Deep: the engine frees the create's attrs and deps after it. */
		{
			json_t *copy = json_deep_copy(st);

			zoned_put(ctx, scope, copy);
			json_decref(copy);
		}
	}
	json_decref(ids);
	json_decref(st);
	return rc;
}

int aws_storage_zone(struct prov_ctx *ctx, const struct prov_scope *scope, char **out,
		     struct kiln_error *err)
{
	json_t *st = ctx->nzones > 1 ? zoned_get(ctx, scope) : NULL;
	const char *zone;
	int rc;

	*out = NULL;
	if (ctx->nzones <= 1) {
		*out = xstrdup(ctx->zones[0]);
		return PROV_OK;
	}
	/* No group launched by this apply: where the workspace's nodes already are. */
	if (!st) {
		rc = zoned_load(ctx, scope, NULL, NULL, &st, err);
		if (rc != PROV_OK)
			return rc;
		zoned_put(ctx, scope, st);
	}
	zone = json_string_value(json_object_get(st, "zone"));
	*out = xstrdup(zone ? zone : ctx->zones[0]);
	json_decref(st);
	return PROV_OK;
}
