/*
 * pricing.c - the parts of a cluster the aws and sim providers price alike;
 * see pricing.h. Everything comes from the catalog: a type or rate the
 * catalog lacks is reported as not priced, with the catalog's date, so a
 * cost is never a silent $0.
 */
#include "pricing.h"

#include <stdbool.h>
#include <string.h>

#include "util.h"

static void component(json_t *components, char *name, const char *unit, double quantity,
		      double unit_price, double hourly)
{
	json_array_append_new(components, json_pack("{s:s, s:s, s:f, s:f, s:f}", "name", name,
						    "unit", unit, "quantity", quantity,
						    "unit_price", unit_price, "hourly", hourly));
	free(name);
}

static void not_priced(json_t *unpriced, char *name, char *reason)
{
	json_array_append_new(unpriced, json_pack("{s:s, s:s}", "name", name, "reason", reason));
	free(name);
	free(reason);
}

/* A rate sold by the GB-month, as a component per hour. */
static void by_gb_month(const struct catalog *c, const char *key, double gb, char *name,
			json_t *components, json_t *unpriced)
{
	const struct catalog_rate *r = catalog_rate(c, key);

	if (!r) {
		not_priced(unpriced, name,
			   xasprintf("the %s catalog (%s) has no price for %s", c->provider,
				     c->date, key));
		return;
	}
	component(components, name, r->unit, gb, r->usd, gb * r->usd / PRICING_HOURS_PER_MONTH);
}

void pricing_group(const struct catalog *c, const json_t *attrs, json_t *components,
		   json_t *unpriced)
{
	const char *type = json_string_value(json_object_get(attrs, "instance_type"));
	const char *market = json_string_value(json_object_get(attrs, "market"));
	const char *disk = json_string_value(json_object_get(attrs, "disk_type"));
	json_t *count_v = json_object_get(attrs, "count");
	double count = (double)json_integer_value(count_v);
	double disk_gb = (double)json_integer_value(json_object_get(attrs, "disk_size_gb"));
	bool spot = market && strcmp(market, "spot") == 0;
	const char *capacity = json_string_value(json_object_get(attrs, "capacity"));
	const struct catalog_type *t = catalog_find(c, type);
	char *key;

	if (!json_is_integer(count_v) || !type) {
		not_priced(unpriced, xstrdup("Instance usage"),
			   xstrdup("the node count or instance type is not known until apply"));
		return;
	}
	if (count == 0)
		return;
	/* A Capacity Block's fee covers its instances: they cost nothing by the hour. */
	if (t && capacity && strcmp(capacity, "block") == 0)
		component(components,
			  xasprintf("Instance usage (%s, in a Capacity Block: its fee is paid up "
				    "front)",
				    type),
			  "instance-hour", count, 0, 0);
	else if (t)
		component(components,
			  xasprintf("Instance usage (%s, %s%s)", type, spot ? "spot" : "on-demand",
				    spot ? ", typical price" : ""),
			  "instance-hour", count, catalog_price(t, spot),
			  count * catalog_price(t, spot));
	else
		not_priced(
		    unpriced, xasprintf("Instance usage (%s)", type),
		    xasprintf("%s is not in the %s catalog (%s)", type, c->provider, c->date));
	/* Both prices: spot first, and what the group costs when it falls back. */
	if (t && spot && json_is_true(json_object_get(attrs, "spot_fallback")))
		not_priced(unpriced,
			   xasprintf("On-demand fallback (%s, %.0f × $%.4g/h = $%.2f/h)", type,
				     count, catalog_price(t, false),
				     count * catalog_price(t, false)),
			   xstrdup("what the group costs if EC2 has no spot capacity and it "
				   "launches on demand instead"));
	if (disk_gb > 0) {
		key = xasprintf("ebs:%s", disk ? disk : "gp3");
		by_gb_month(c, key, count * disk_gb,
			    xasprintf("Root volumes (%s, %.0f × %.0f GB)", disk ? disk : "gp3",
				      count, disk_gb),
			    components, unpriced);
		if (disk && strncmp(disk, "io", 2) == 0)
			not_priced(unpriced, xasprintf("Provisioned IOPS (%s)", disk),
				   xstrdup("IOPS are charged on top of storage and kiln sets none "
					   "explicitly"));
		free(key);
	}
	if (json_is_true(json_object_get(attrs, "public"))) {
		const struct catalog_rate *r = catalog_rate(c, "ipv4:public");

		if (r)
			component(components, xstrdup("Public IPv4 addresses"), "address-hour",
				  count, r->usd, count * r->usd);
		else
			not_priced(unpriced, xstrdup("Public IPv4 addresses"),
				   xasprintf("the %s catalog (%s) has no price for them",
					     c->provider, c->date));
	}
}

void pricing_lustre(const struct catalog *c, const json_t *attrs, json_t *components,
		    json_t *unpriced)
{
	json_int_t gb = json_integer_value(json_object_get(attrs, "capacity_gb"));
	json_int_t tput = json_integer_value(json_object_get(attrs, "throughput_per_tib"));
	char *key = xasprintf("fsx-lustre:persistent2:%lld", (long long)tput);

	by_gb_month(c, key, (double)gb,
		    xasprintf("Lustre storage (SSD, %lld MB/s per TiB)", (long long)tput),
		    components, unpriced);
	free(key);
}

void pricing_by_use(json_t *unpriced, const char *name, const char *what)
{
	not_priced(unpriced, xstrdup(name),
		   xasprintf("billed by use (%s), which the spec does not say", what));
}
