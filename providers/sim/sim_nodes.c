/*
 * sim_nodes.c - node groups: where they land and how many nodes they get.
 *
 * KILN_SIM_CAPACITY limits the nodes of a GPU model per zone, shared by
 * every node group in the sim directory; usage.json counts what each group
 * holds (its own share is recorded in the document's sim.reserved, which is
 * what is given back, whatever attrs say after a drift edit). All of this
 * runs under the sim lock.
 *
 * A gang group is all or nothing: it takes the first zone of its list where
 * the whole count fits, or fails leaving nothing behind. A group that is not
 * a gang takes the first zone where it fits, else as many nodes as the
 * roomiest zone has (at least one). Growing follows the same rules inside
 * the group's zone.
 *
 * Each node has its own record in the document's sim.nodes (by instance
 * id): when it launched, when it runs (KILN_SIM_READY_MS after), when it
 * reports its health (KILN_SIM_HEALTH_MS after that), the report it gives
 * (a healthy one, unless tests/e2e/sim_inspect.py's `report` put another
 * there) and its simulated addresses: the next host of the network's CIDR
 * (counted in the network's sim.next_host, so two groups never share one),
 * and one in 198.51.100.0/24 (TEST-NET-2, documentation only) when public.
 */
#include "cidr.h"
#include "nodes.h"
#include "sim_int.h"
#include "timefmt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The GPU nodes a group holds, as sim.reserved records them. */
struct held {
	const char *gpu; /* NULL: nothing held */
	const char *zone;
	long nodes;
};

static long cap_limit(const struct prov_ctx *ctx, const char *model)
{
	size_t i;

	for (i = 0; i < ctx->ncaps; i++)
		if (strcasecmp(ctx->caps[i].model, model) == 0)
			return ctx->caps[i].nodes;
	return -1;
}

static long used(const json_t *usage, const char *model, const char *zone)
{
	return (long)json_integer_value(json_object_get(json_object_get(usage, model), zone));
}

static void use(json_t *usage, const char *model, const char *zone, long delta)
{
	json_t *zones = json_object_get(usage, model);
	long n = used(usage, model, zone) + delta;

	if (!zones) {
		zones = json_object();
		json_object_set_new(usage, model, zones);
	}
	if (n > 0)
		json_object_set_new(zones, zone, json_integer(n));
	else
		json_object_del(zones, zone);
	if (json_object_size(zones) == 0)
		json_object_del(usage, model);
}

static long free_nodes(const struct prov_ctx *ctx, const json_t *usage, const char *model,
		       const char *zone)
{
	long limit = cap_limit(ctx, model), n;

	if (limit < 0)
		return LONG_MAX;
	n = limit - used(usage, model, zone);
	return n > 0 ? n : 0;
}

static const struct catalog_type *group_type(const json_t *attrs, struct kiln_error *err)
{
	const char *name = json_string_value(json_object_get(attrs, "instance_type"));
	const struct catalog_type *t = catalog_find(&catalog_aws, name);

	if (!t)
		kiln_error_set(
		    err,
		    "sim: InvalidParameterValue (simulated): instance type '%s' does not "
		    "exist in the catalog",
		    name ? name : "(none)");
	return t;
}

static bool group_count(const json_t *attrs, long *count, struct kiln_error *err)
{
	const json_t *c = json_object_get(attrs, "count");

	if (!json_is_integer(c) || json_integer_value(c) < 0 ||
	    json_integer_value(c) > SPEC_MAX_COUNT) {
		kiln_error_set(err,
			       "sim: InvalidParameterValue (simulated): count must be a whole "
			       "number from 0 to %d",
			       SPEC_MAX_COUNT);
		return false;
	}
	*count = (long)json_integer_value(c);
	return true;
}

static void capacity_error(struct kiln_error *err, const char *more, long want,
			   const struct catalog_type *t, const char *const *zones,
			   const long *avail, size_t n, bool gang)
{
	struct strbuf sb = {0};
	size_t i;

	for (i = 0; i < n; i++)
		sb_addf(&sb, ", %ld free in %s", avail[i], zones[i]);
	kiln_error_set(err,
		       "sim: InsufficientInstanceCapacity (simulated): %ld%s × %s (%s) requested%s",
		       want, more, t->name, t->gpu, sb.buf ? sb.buf : "");
	if (gang)
		kiln_error_hint(err,
				"a gang is placed whole or not at all: lower count, add a zone "
				"to provider.zone, or raise KILN_SIM_CAPACITY");
	else
		kiln_error_hint(err, "lower count, or raise KILN_SIM_CAPACITY");
	sb_release(&sb);
}

/* The zone and node count for a new group; PROV_CAPACITY when nothing may be placed. */
static int place(struct prov_ctx *ctx, const json_t *usage, const struct catalog_type *t,
		 const char *const *zones, size_t nzones, long count, bool gang, size_t *zone,
		 long *nodes, struct kiln_error *err)
{
	long *avail = xcalloc(nzones, sizeof(*avail));
	size_t i, roomiest = 0;
	int rc = PROV_OK;

	*zone = 0;
	*nodes = count;
	if (!t->gpu || count == 0)
		goto out;
	for (i = 0; i < nzones; i++) {
		avail[i] = free_nodes(ctx, usage, t->gpu, zones[i]);
		if (avail[i] >= count) {
			*zone = i;
			goto out;
		}
		if (avail[i] > avail[roomiest])
			roomiest = i;
	}
	if (!gang && avail[roomiest] > 0) {
		*zone = roomiest;
		*nodes = avail[roomiest];
		goto out;
	}
	capacity_error(err, "", count, t, zones, avail, nzones, gang);
	rc = PROV_CAPACITY;
out:
	free(avail);
	return rc;
}

/* The network the group's nodes take addresses from: its document, or NULL. */
static json_t *group_network(struct prov_ctx *ctx, const json_t *doc)
{
	const char *cluster = sim_doc_str(doc, "sim", "cluster");
	const char *ws = sim_doc_str(doc, "sim", "workspace");
	json_t *net = NULL;
	struct kiln_error ignored = {0};

	if (cluster && ws &&
	    sim_find_address(ctx, sim_kind_find("sim_network"), cluster, ws, "sim_network.main",
			     &net, &ignored) != PROV_OK)
		net = NULL;
	return net;
}

/*
 * The host'th address of cidr (or of 10.0.0.0/16 when it is not one), past
 * the first four and the last one, which AWS keeps for itself in a subnet.
 */
static char *host_address(const char *cidr, long host)
{
	uint32_t base = 0x0a000000u, a;
	int prefix = 16;
	bool ignored;
	uint64_t size;

	if (!cidr || cidr_parse(cidr, &base, &prefix, &ignored) < 0 || prefix > 28) {
		base = 0x0a000000u;
		prefix = 16;
	}
	size = (uint64_t)1 << (32 - prefix);
	a = (base & (uint32_t) ~(size - 1)) + 4u + (uint32_t)((uint64_t)host % (size - 5));
	return xasprintf("%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

/* What a node of type t says when it finds what it was bought for. */
static char *healthy_report(const struct catalog_type *t, bool efa)
{
	if (efa && t->efa_interfaces)
		return xasprintf("healthy: %d/%d GPUs, %d/%d EFA", t->gpus, t->gpus,
				 t->efa_interfaces, t->efa_interfaces);
	return xasprintf("healthy: %d/%d GPUs", t->gpus, t->gpus);
}

/*
 * A new node's record in sim.nodes: times, addresses, report. now is the
 * launch's time: the nodes of one launch share it, as EC2 gives the
 * instances of one RunInstances one launch time.
 */
static void node_record(struct prov_ctx *ctx, json_t *doc, json_t *net, const char *id,
			const struct catalog_type *t, long long now)
{
	json_t *attrs = json_object_get(doc, "attrs"), *sim = json_object_get(doc, "sim");
	json_t *nodes = json_object_get(sim, "nodes");
	json_t *counter = net ? json_object_get(net, "sim") : sim;
	long running = sim_ready_ms(ctx, sim_kind_find("sim_node_group"));
	long host = (long)json_integer_value(json_object_get(counter, "next_host"));
	char *ip = host_address(net ? sim_doc_str(net, "attrs", "cidr") : NULL, host);
	char *pub = json_is_true(json_object_get(attrs, "public"))
			? host_address("198.51.100.0/24", host)
			: NULL;
	char *report = healthy_report(t, json_is_true(json_object_get(attrs, "efa")));

	json_object_set_new(counter, "next_host", json_integer(host + 1));
	if (!json_is_object(nodes)) {
		nodes = json_object();
		json_object_set_new(sim, "nodes", nodes);
	}
	json_object_set_new(nodes, id,
			    json_pack("{s:I, s:I, s:I, s:s, s:s?, s:s}", "launched_ms",
				      (json_int_t)now, "ready_at_ms", (json_int_t)(now + running),
				      "report_at_ms", (json_int_t)(now + running + ctx->health_ms),
				      "private_ip", ip, "public_ip", pub, "report", report));
	free(ip);
	free(pub);
	free(report);
}

/*
 * Make the instance ids as many as nodes: keep the first ones, add new ones
 * (each with its record in sim.nodes), forget the records of those dropped.
 */
static int instance_ids(struct prov_ctx *ctx, json_t *doc, const struct catalog_type *t, long nodes,
			struct kiln_error *err)
{
	json_t *attrs = json_object_get(doc, "attrs");
	json_t *ids = json_object_get(attrs, "instance_ids");
	json_t *recs = json_object_get(json_object_get(doc, "sim"), "nodes"), *net;
	char id[SIM_ID_MAX];
	long long now;
	int rc = PROV_OK;

	if (!json_is_array(ids)) {
		ids = json_array();
		json_object_set_new(attrs, "instance_ids", ids);
	}
	while ((long)json_array_size(ids) > nodes) {
		const char *gone = json_string_value(json_array_get(ids, json_array_size(ids) - 1));

		if (json_is_object(recs) && gone)
			json_object_del(recs, gone);
		json_array_remove(ids, json_array_size(ids) - 1);
	}
	if ((long)json_array_size(ids) >= nodes)
		return PROV_OK;
	net = group_network(ctx, doc);
	now = sim_now_ms();
	while ((long)json_array_size(ids) < nodes) {
		sim_new_id("i", id);
		json_array_append_new(ids, json_string(id));
		node_record(ctx, doc, net, id, t, now);
	}
	if (net)
		rc = sim_doc_save(ctx, net, err);
	json_decref(net);
	return rc;
}

/* "YYYY-MM-DDTHH:MM:SS.mmmZ", as EC2 gives a launch time: nodes launched apart sort apart. */
static char *launch_time(long long ms)
{
	char when[21];

	timefmt_time_format_rfc3339(ms / 1000, when);
	when[19] = '\0';
	return xasprintf("%s.%03lldZ", when, ms % 1000);
}

json_t *sim_nodes_view(const json_t *doc)
{
	const json_t *attrs = json_object_get(doc, "attrs");
	const json_t *recs = json_object_get(json_object_get(doc, "sim"), "nodes");
	const json_t *ids = json_object_get(attrs, "instance_ids"), *idv;
	const char *zone = json_string_value(json_object_get(attrs, "zone"));
	long long now = sim_now_ms();
	json_t *nodes = json_array();
	size_t i;

	json_array_foreach(ids, i, idv)
	{
		const json_t *r = json_object_get(recs, json_string_value(idv));
		const json_t *ms = json_object_get(r, "launched_ms");
		char *when = json_is_integer(ms) ? launch_time(json_integer_value(ms)) : NULL;
		bool up = json_integer_value(json_object_get(r, "ready_at_ms")) <= now;
		bool told = json_integer_value(json_object_get(r, "report_at_ms")) <= now;
		json_t *node;

		if (!json_string_value(idv)) {
			free(when);
			continue;
		}
		node = nodes_new(json_string_value(idv), zone,
				 json_string_value(json_object_get(r, "private_ip")),
				 json_string_value(json_object_get(r, "public_ip")),
				 !r || up ? "running" : "pending", when,
				 r && up && told ? json_string_value(json_object_get(r, "report"))
						 : NULL);
		/* Said wherever shown: nothing of it is a real machine. */
		json_object_set_new(node, "simulated", json_true());
		free(when);
		json_array_append_new(nodes, node);
	}
	nodes_order(nodes);
	return nodes;
}

/* attrs and sim.reserved after placing nodes of t in zone. */
static int record(struct prov_ctx *ctx, json_t *doc, const struct catalog_type *t,
		  const char *where, long nodes, struct kiln_error *err)
{
	json_t *attrs = json_object_get(doc, "attrs");
	json_t *sim = json_object_get(doc, "sim");
	char *zone = xstrdup(where); /* where may be a string of doc's, replaced below */

	json_object_set_new(attrs, "count", json_integer(nodes));
	json_object_set_new(attrs, "zone", json_string(zone));
	json_object_set_new(attrs, "gpu_model", t->gpu ? json_string(t->gpu) : json_null());
	json_object_set_new(attrs, "gpus_per_node", json_integer(t->gpus));
	if (t->gpu && nodes > 0)
		json_object_set_new(sim, "reserved",
				    json_pack("{s:s, s:s, s:I}", "gpu", t->gpu, "zone", zone,
					      "nodes", (json_int_t)nodes));
	else
		json_object_del(sim, "reserved");
	free(zone);
	return instance_ids(ctx, doc, t, nodes, err);
}

static struct held held_of(const json_t *doc)
{
	const json_t *r = json_object_get(json_object_get(doc, "sim"), "reserved");
	struct held h = {json_string_value(json_object_get(r, "gpu")),
			 json_string_value(json_object_get(r, "zone")),
			 (long)json_integer_value(json_object_get(r, "nodes"))};

	if (!h.gpu || !h.zone || h.nodes <= 0)
		h.gpu = NULL;
	return h;
}

/* The zones a group may use, in order: its input, else the context's. */
static const char **group_zones(struct prov_ctx *ctx, const json_t *attrs, size_t *n,
				struct kiln_error *err)
{
	const json_t *z = json_object_get(attrs, "zones");
	const char **v;
	size_t i;

	if (json_is_null(z) || !z) {
		v = xcalloc(ctx->nzones, sizeof(*v));
		for (i = 0; i < ctx->nzones; i++)
			v[i] = ctx->zones[i];
		*n = ctx->nzones;
		return v;
	}
	if (!json_is_array(z) || json_array_size(z) == 0)
		goto bad;
	v = xcalloc(json_array_size(z), sizeof(*v));
	for (i = 0; i < json_array_size(z); i++) {
		v[i] = json_string_value(json_array_get(z, i));
		if (!v[i] || !*v[i]) {
			free(v);
			goto bad;
		}
	}
	*n = json_array_size(z);
	return v;
bad:
	kiln_error_set(err, "sim: InvalidParameterValue (simulated): zones must be a non-empty "
			    "list of zone names");
	return NULL;
}

/* NAME of the group's address sim_node_group.NAME. */
static const char *group_name(const json_t *doc)
{
	const char *addr = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
	const char *dot = addr ? strchr(addr, '.') : NULL;

	return dot ? dot + 1 : "unnamed";
}

int sim_nodes_created(struct prov_ctx *ctx, const struct prov_scope *scope, json_t *doc,
		      struct kiln_error *err)
{
	json_t *attrs = json_object_get(doc, "attrs"), *usage = NULL;
	const struct catalog_type *t = group_type(attrs, err);
	const char **zones = NULL;
	char token[65];
	size_t nzones = 0, zone;
	long count, nodes;
	int rc = PROV_ERROR;

	if (!t || !group_count(attrs, &count, err))
		return PROV_ERROR;
	/* Into its Capacity Block, only while the block is active. */
	if (json_string_value(json_object_get(attrs, "capacity")) &&
	    strcmp(json_string_value(json_object_get(attrs, "capacity")), "block") == 0 &&
	    sim_block_check(ctx, scope, group_name(doc), err) != PROV_OK)
		return PROV_ERROR;
	if (json_is_true(json_object_get(attrs, "efa")) && !t->efa) {
		kiln_error_set(err,
			       "sim: InvalidParameterCombination (simulated): %s does not support "
			       "EFA",
			       t->name);
		return PROV_ERROR;
	}
	zones = group_zones(ctx, attrs, &nzones, err);
	if (!zones || sim_usage_load(ctx, &usage, err) != PROV_OK)
		goto out;
	rc = place(ctx, usage, t, zones, nzones, count,
		   json_is_true(json_object_get(attrs, "gang")), &zone, &nodes, err);
	if (rc != PROV_OK)
		goto out;
	if (t->gpu && nodes > 0) {
		use(usage, t->gpu, zones[zone], nodes);
		rc = sim_usage_save(ctx, usage, err);
		if (rc != PROV_OK)
			goto out;
	}
	rc = record(ctx, doc, t, zones[zone], nodes, err);
	if (rc != PROV_OK)
		goto out;
	/* What nodes use to join each other, like a munge key: sensitive. */
	sim_random_hex(token, 64);
	json_object_set_new(attrs, "join_token", json_string(token));
out:
	json_decref(usage);
	free(zones);
	return rc;
}

int sim_nodes_updated(struct prov_ctx *ctx, json_t *doc, const json_t *before,
		      const char *const *changed, size_t n, struct kiln_error *err)
{
	json_t *attrs = json_object_get(doc, "attrs"), *usage = NULL;
	const struct catalog_type *t = group_type(attrs, err);
	struct held h = held_of(doc);
	const json_t *old_disk = json_object_get(before, "disk_size_gb");
	const json_t *new_disk = json_object_get(attrs, "disk_size_gb");
	const char *zone = json_string_value(json_object_get(attrs, "zone"));
	bool gang = json_is_true(json_object_get(attrs, "gang"));
	long count, keep, avail, got;
	int rc = PROV_ERROR;
	size_t i;

	if (!t || !group_count(attrs, &count, err))
		return PROV_ERROR;
	if (json_is_integer(old_disk) && json_is_integer(new_disk) &&
	    json_integer_value(new_disk) < json_integer_value(old_disk)) {
		kiln_error_set(err,
			       "sim: InvalidParameterValue (simulated): a volume cannot shrink "
			       "(disk_size_gb %lld -> %lld)",
			       (long long)json_integer_value(old_disk),
			       (long long)json_integer_value(new_disk));
		return PROV_ERROR;
	}
	/* Only the size and the type of the nodes touch capacity. */
	for (i = 0; i < n; i++)
		if (strcmp(changed[i], "count") == 0 || strcmp(changed[i], "instance_type") == 0)
			break;
	if (i == n)
		return PROV_OK;
	if (!zone)
		zone = h.gpu ? h.zone : ctx->zones[0];
	if (sim_usage_load(ctx, &usage, err) != PROV_OK)
		return PROV_ERROR;
	/* Give back what the group holds, then take what it needs: one change either way. */
	if (h.gpu)
		use(usage, h.gpu, h.zone, -h.nodes);
	keep = h.gpu && t->gpu && strcmp(h.gpu, t->gpu) == 0 && strcmp(h.zone, zone) == 0 ? h.nodes
											  : 0;
	got = count;
	if (t->gpu && count > 0) {
		avail = free_nodes(ctx, usage, t->gpu, zone);
		if (avail < count && (gang || avail <= keep)) {
			long shown = avail > keep ? avail - keep : 0;

			capacity_error(err, keep ? " more" : "", count - keep, t, &zone, &shown, 1,
				       gang);
			rc = PROV_CAPACITY;
			goto out;
		}
		got = avail < count ? avail : count;
		use(usage, t->gpu, zone, got);
	}
	rc = h.gpu || t->gpu ? sim_usage_save(ctx, usage, err) : PROV_OK;
	if (rc == PROV_OK)
		rc = record(ctx, doc, t, zone, got, err);
out:
	json_decref(usage);
	return rc;
}

int sim_nodes_removed(struct prov_ctx *ctx, json_t *doc, struct kiln_error *err)
{
	struct held h = held_of(doc);
	json_t *usage;
	int rc;

	if (!h.gpu)
		return PROV_OK;
	if (sim_usage_load(ctx, &usage, err) != PROV_OK)
		return PROV_ERROR;
	use(usage, h.gpu, h.zone, -h.nodes);
	rc = sim_usage_save(ctx, usage, err);
	json_decref(usage);
	return rc;
}

int sim_nodes_replaced(struct prov_ctx *ctx, json_t *doc, const char *const *nodes, size_t n,
		       struct kiln_error *err)
{
	json_t *attrs = json_object_get(doc, "attrs"), *usage = NULL;
	json_t *ids = json_object_get(attrs, "instance_ids");
	json_t *recs = json_object_get(json_object_get(doc, "sim"), "nodes");
	const struct catalog_type *t = group_type(attrs, err);
	const char *zone = json_string_value(json_object_get(attrs, "zone"));
	long keep = (long)json_array_size(ids);
	size_t i, j;
	int rc;

	if (!t)
		return PROV_ERROR;
	for (i = 0; i < n; i++) {
		for (j = 0; j < json_array_size(ids); j++)
			if (strcmp(json_string_value(json_array_get(ids, j)) ?: "", nodes[i]) == 0)
				break;
		if (j == json_array_size(ids)) {
			kiln_error_set(
			    err,
			    "sim: InvalidInstanceID.NotFound (simulated): %s is not a node "
			    "of %s",
			    nodes[i], sim_doc_str(doc, NULL, "id"));
			return PROV_ERROR;
		}
	}
	/* The new nodes first, all of them or none: they need room beside the old ones. */
	if (t->gpu && zone) {
		long avail;

		if (sim_usage_load(ctx, &usage, err) != PROV_OK)
			return PROV_ERROR;
		avail = free_nodes(ctx, usage, t->gpu, zone);
		json_decref(usage);
		if (avail < (long)n) {
			capacity_error(err, " more", (long)n, t, &zone, &avail, 1, true);
			return PROV_CAPACITY;
		}
	}
	rc = instance_ids(ctx, doc, t, keep + (long)n, err);
	if (rc != PROV_OK)
		return rc;
	/* Then the bad ones go; the group holds as many nodes as before. */
	for (i = 0; i < n; i++)
		for (j = 0; j < json_array_size(ids); j++)
			if (strcmp(json_string_value(json_array_get(ids, j)) ?: "", nodes[i]) ==
			    0) {
				if (json_is_object(recs))
					json_object_del(recs, nodes[i]);
				json_array_remove(ids, j);
				break;
			}
	return PROV_OK;
}
