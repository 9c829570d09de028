/*
 * audit.c - the rules of audit_rules.c run over a spec and its plan, and
 * the spec's waivers applied to what they find; see audit.h.
 *
 * A rule that the spec can express reads the spec (and points at the value
 * that triggered it); a setting kiln's providers always choose (IMDSv2, the
 * public access block, FSx encryption) is read from the plan's resource
 * attributes (change.after), so the rule fires if a provider or a later
 * change ever carries the insecure value, and stays silent otherwise. Rules
 * over cost and the IAM delta skip silently when the plan lacks them.
 */
#include "audit.h"

#include "cost.h"
#include "jsonc.h"
#include "timefmt.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct audit {
	const struct spec *spec;
	const struct provider *prov;
	json_t *plan;
	json_t *changes; /* address -> its change's after (an object, or null) */
	json_t *findings;
	/*
	 * What every finding of a rule repeats (id, severity, fix, the Checkov
	 * and Trivy ids) and the spec's file name, made once and shared by each
	 * finding: a 10,000-resource plan has as many findings.
	 */
	json_t *rule_values; /* rule id -> {rule, severity, fix, checkov, trivy} */
	json_t *file;
};

/* The desired attributes of a resource in the plan, or NULL (absent, or deleted). */
static const json_t *after_of(const struct audit *a, const char *addr)
{
	const json_t *after = addr ? json_object_get(a->changes, addr) : NULL;

	return json_is_object(after) ? after : NULL;
}

/* A spec part's resource address (TYPE.NAME) when the plan holds it; caller frees. */
static char *part_address(const struct audit *a, enum prov_part part, const char *name)
{
	char *addr;

	if (!a->prov || !a->prov->part_type || !a->prov->part_type(part))
		return NULL;
	addr = xasprintf("%s.%s", a->prov->part_type(part), name);
	if (!json_object_get(a->changes, addr)) {
		free(addr);
		return NULL;
	}
	return addr;
}

/* A boolean attribute from the plan when it carries one, else the spec's value. */
static bool attr_bool(const json_t *after, const char *name, bool spec_value)
{
	const json_t *v = json_object_get(after, name);

	return json_is_boolean(v) ? json_is_true(v) : spec_value;
}

static json_t *add(struct audit *a, const char *rule_id, const char *address, const char *path,
		   const struct ynode *at, const char *fmt, ...) KILN_PRINTF(6, 7);
static json_t *add(struct audit *a, const char *rule_id, const char *address, const char *path,
		   const struct ynode *at, const char *fmt, ...)
{
	const struct audit_rule *r = audit_rule_find(rule_id);
	json_t *shared = json_object_get(a->rule_values, r->id), *f;
	va_list ap;
	char *msg;

	if (!shared) {
		shared =
		    json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "rule", r->id, "severity", r->severity,
			      "fix", r->fix, "checkov", r->checkov, "trivy", r->trivy);
		json_object_set_new(a->rule_values, r->id, shared);
	}
	if (!at)
		at = a->spec->root;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	f = json_pack("{s:s?, s:s?, s:O, s:i, s:i, s:s}", "address", address, "spec", path, "file",
		      a->file, "line", at ? at->line : 1, "column", at ? at->col : 1, "message",
		      msg);
	free(msg);
	json_object_update(f, shared);
	json_array_append_new(a->findings, f);
	return f;
}

/* ---- storage ---- */

/* The roles that write to a store, "a, b", or NULL; caller frees. */
static char *writers(const struct spec *spec, const char *store)
{
	struct strbuf sb = {0};
	size_t i, j;

	for (i = 0; i < spec->nroles; i++)
		for (j = 0; j < spec->roles[i].nwrite; j++)
			if (strcmp(spec->roles[i].write[j].name, store) == 0) {
				sb_addf(&sb, "%s%s", sb.len ? ", " : "", spec->roles[i].name);
				break;
			}
	return sb.len ? sb_detach(&sb) : NULL;
}

/* A local store: the nodes' instance store, whose data does not outlive them. */
static void check_local(struct audit *a, const struct spec_store *st)
{
	struct strbuf on = {0};
	size_t i;

	for (i = 0; i < a->spec->ngroups; i++)
		if (spec_local_on(st, &a->spec->groups[i]))
			sb_addf(&on, "%s%s", on.len ? ", " : "", a->spec->groups[i].name);
	add(a, "KILN-LOCAL-001", NULL, st->key->value, st->key,
	    "storage.%s is the instance store of compute.%s: its data is lost when a node "
	    "stops, fails or is replaced",
	    st->name, on.len ? on.buf : "(no group)");
	sb_release(&on);
}

/* Whether the n bytes at s end with suffix. */
static bool ends_with_n(const char *s, size_t n, const char *suffix)
{
	size_t l = strlen(suffix);

	return n >= l && strncmp(s + n - l, suffix, l) == 0;
}

/* Shannon entropy of s in bits per character. */
static double entropy(const char *s, size_t n)
{
	size_t count[256] = {0}, i;
	double h = 0;

	for (i = 0; i < n; i++)
		count[(unsigned char)s[i]]++;
	for (i = 0; i < 256; i++)
		if (count[i]) {
			double p = (double)count[i] / (double)n;

			h -= p * log2(p);
		}
	return h;
}

/* The length of the literal value at v (up to a space, quote or ';'); 0 for $VAR and $(...). */
static size_t literal_len(const char *v)
{
	size_t n;

	if (*v == '"' || *v == '\'')
		v++;
	if (*v == '$' || *v == '<')
		return 0;
	for (n = 0; v[n] && !strchr(" \t\n\"';&|)", v[n]); n++)
		;
	return n;
}

/*
 * What secret text looks like it holds, or NULL: an access key id, a
 * private key block, password=/token=/secret= with a literal value, or a
 * long high-entropy literal assigned to a *_KEY, *_SECRET or *_TOKEN name.
 * Only the kind is returned: the finding never repeats the secret.
 */
static const char *secret_kind(const char *text)
{
	static const char *const words[] = {"password=", "passwd=", "token=", "secret="};
	const char *p;
	size_t i;

	for (p = text; *p; p++) {
		if ((strncmp(p, "AKIA", 4) == 0 || strncmp(p, "ASIA", 4) == 0) &&
		    (p == text || !isalnum((unsigned char)p[-1]))) {
			for (i = 4; i < 20 &&
				    (isupper((unsigned char)p[i]) || isdigit((unsigned char)p[i]));
			     i++)
				;
			if (i == 20 && !isalnum((unsigned char)p[20]))
				return "an access key id";
		}
		if (strncmp(p, "-----BEGIN ", 11) == 0 && strstr(p, "PRIVATE KEY-----"))
			return "a private key";
		for (i = 0; i < ARRAY_SIZE(words); i++)
			if (strncasecmp(p, words[i], strlen(words[i])) == 0 &&
			    (p == text || !isalnum((unsigned char)p[-1]) || p[-1] == '_') &&
			    literal_len(p + strlen(words[i])) > 0)
				return "a password or token";
		if (*p == '=' && p > text) {
			const char *name = p;
			size_t n = literal_len(p + 1);
			const char *v = p[1] == '"' || p[1] == '\'' ? p + 2 : p + 1;

			while (name > text && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
				name--;
			if (n >= 16 && entropy(v, n) >= 3.5 &&
			    (ends_with_n(name, (size_t)(p - name), "_KEY") ||
			     ends_with_n(name, (size_t)(p - name), "_SECRET") ||
			     ends_with_n(name, (size_t)(p - name), "_TOKEN")))
				return "a key, secret or token";
		}
	}
	return NULL;
}

static void check_steps(struct audit *a, const struct spec_step *steps, size_t n, const char *where,
			const char *addr)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *text = steps[i].kind == STEP_RUN ? steps[i].run : steps[i].content;
		const char *kind = text ? secret_kind(text) : NULL;
		char *path;

		if (!kind)
			continue;
		path = xasprintf("%s[%zu]", where, i);
		add(a, "KILN-BOOT-001", addr, path, steps[i].node,
		    "%s looks like it holds %s: user data can be read back by anyone allowed to "
		    "describe the node, and is kept in the plan",
		    path, kind);
		free(path);
	}
}

static void check_boot(struct audit *a)
{
	size_t i;

	check_steps(a, a->spec->bootstrap, a->spec->nbootstrap, "bootstrap", NULL);
	for (i = 0; i < a->spec->ngroups; i++) {
		const struct spec_group *g = &a->spec->groups[i];
		char *where = xasprintf("compute.%s.bootstrap", g->name);
		char *addr = part_address(a, PART_GROUP, g->name);

		check_steps(a, g->bootstrap, g->nbootstrap, where, addr);
		free(addr);
		free(where);
	}
}

static void check_store(struct audit *a, const struct spec_store *st)
{
	static const enum prov_part parts[] = {PART_OBJECT, PART_LUSTRE, PART_NFS, PART_OBJECT};
	static const char *const unencrypted[] = {"KILN-S3-001", "KILN-FSX-001", "KILN-EFS-001",
						  NULL};
	char *path, *sub, *addr, *who;
	const json_t *after;

	if (st->tier == TIER_LOCAL) {
		check_local(a, st);
		return;
	}
	path = xasprintf("storage.%s", st->name);
	addr = part_address(a, parts[st->tier], st->name);
	after = after_of(a, addr);

	if (!attr_bool(after, "encrypted", st->encrypted)) {
		sub = xasprintf("%s.encrypted", path);
		add(a, unencrypted[st->tier], addr, sub, spec_value_node(st->node, "encrypted"),
		    "%s is not encrypted at rest", path);
		free(sub);
	}
	if (st->allow_unencrypted) {
		sub = xasprintf("%s.allow_unencrypted", path);
		add(a, "KILN-ENC-001", addr, sub, spec_value_node(st->node, "allow_unencrypted"),
		    "%s sets allow_unencrypted: true%s", path,
		    st->encrypted ? " (encryption is still on)" : "");
		free(sub);
	}
	if (st->tier == TIER_OBJECT) {
		if (json_is_false(json_object_get(after, "block_public_access")))
			add(a, "KILN-S3-002", addr, path, st->key,
			    "%s: the plan leaves the bucket without its public access block", path);
		who = writers(a->spec, st->name);
		if (who && !attr_bool(after, "versioning", st->versioning)) {
			sub = xasprintf("%s.versioning", path);
			add(a, "KILN-S3-003", addr, sub, spec_value_node(st->node, "versioning"),
			    "%s is written by role %s but keeps no versions: an overwritten or "
			    "deleted object is gone for good",
			    path, who);
			free(sub);
		}
		free(who);
	}
	/* Lustre's default delete is scratch, said in the plan's note: only a written one warns. */
	if (st->deletion == DELETION_DELETE && st->deletion_set) {
		sub = xasprintf("%s.deletion", path);
		add(a, "KILN-STORE-001", addr, sub, spec_value_node(st->node, "deletion"),
		    "%s has deletion: delete: destroying the cluster deletes the %s store and "
		    "its data",
		    path, spec_tier_name(st->tier));
		free(sub);
	}
	free(addr);
	free(path);
}

/* ---- compute ---- */

static bool group_has_gpu(const struct audit *a, const struct spec_group *g, const json_t *after)
{
	const char *type = json_string_value(json_object_get(after, "instance_type"));
	const struct catalog *cat;
	const struct catalog_type *t;

	if (g->gpu_model)
		return true;
	if (!type)
		type = g->instance_type;
	/* Both providers' catalogs are static tables that ignore the context. */
	cat = a->prov && a->prov->catalog ? a->prov->catalog(NULL) : NULL;
	t = cat && type ? catalog_find(cat, type) : NULL;
	return t && t->gpu;
}

static void check_group(struct audit *a, const struct spec_group *g)
{
	char *path = xasprintf("compute.%s", g->name), *sub;
	char *addr = part_address(a, PART_GROUP, g->name);
	const json_t *after = after_of(a, addr);
	const struct ynode *disk = ydoc_get(g->node, "disk");
	const char *tokens = json_string_value(json_object_get(after, "http_tokens"));
	json_int_t count = json_is_integer(json_object_get(after, "count"))
			       ? json_integer_value(json_object_get(after, "count"))
			       : g->count;
	bool efa = attr_bool(after, "efa", a->spec->network.fabric == FABRIC_EFA);

	/*
	 * The plan's attribute says what apply makes; without one, the spec
	 * says what was asked for (a provider may encrypt regardless).
	 */
	if (!attr_bool(after, "disk_encrypted", g->disk.encrypted)) {
		sub = xasprintf("%s.disk.encrypted", path);
		add(a, "KILN-EBS-001", addr, sub,
		    disk ? spec_value_node(disk, "encrypted") : g->key,
		    json_is_boolean(json_object_get(after, "disk_encrypted"))
			? "%s: the plan leaves the nodes' root disks unencrypted"
			: "%s asks for unencrypted root disks (disk.encrypted: false)",
		    path);
		free(sub);
	}
	if (g->disk.allow_unencrypted) {
		sub = xasprintf("%s.disk.allow_unencrypted", path);
		add(a, "KILN-ENC-001", addr, sub, spec_value_node(disk, "allow_unencrypted"),
		    "%s.disk sets allow_unencrypted: true%s", path,
		    g->disk.encrypted ? " (encryption is still on)" : "");
		free(sub);
	}
	if (tokens && strcmp(tokens, "required") != 0)
		add(a, "KILN-EC2-001", addr, path, g->key,
		    "%s: the nodes' metadata service takes IMDSv1 (http_tokens \"%s\")", path,
		    tokens);
	if (group_has_gpu(a, g, after)) {
		if (!a->spec->ttl && a->spec->max_hourly_usd <= 0)
			add(a, "KILN-GPU-001", addr, path, g->key,
			    "%s has GPU nodes, and the spec sets neither ttl nor "
			    "budget.max_hourly_usd",
			    path);
		if (count > 1 && !efa)
			add(a, "KILN-GPU-002", addr, path, g->key,
			    "%s: %" JSON_INTEGER_FORMAT " GPU nodes without EFA: collectives run "
			    "over TCP and multi-node scaling suffers",
			    path, count);
	}
	free(addr);
	free(path);
}

/* ---- network ---- */

static bool world(const char *cidr)
{
	return cidr && (strcmp(cidr, "0.0.0.0/0") == 0 || strcmp(cidr, "::/0") == 0);
}

/* The resource carrying the ingress rules (the security group, the sim network). */
static const char *ingress_address(const struct audit *a, const json_t **rules)
{
	const char *addr;
	json_t *after;

	json_object_foreach(a->changes, addr, after)
	{
		if (json_is_array(json_object_get(after, "ingress"))) {
			*rules = json_object_get(after, "ingress");
			return addr;
		}
	}
	*rules = NULL;
	return NULL;
}

static bool declared(const struct spec *spec, const json_t *rule)
{
	const char *proto = json_string_value(json_object_get(rule, "protocol"));
	size_t i;

	for (i = 0; i < spec->network.ningress; i++) {
		const struct spec_ingress *in = &spec->network.ingress[i];

		if (world(in->from) &&
		    in->port_from == json_integer_value(json_object_get(rule, "port_from")) &&
		    in->port_to == json_integer_value(json_object_get(rule, "port_to")) &&
		    (!proto || !in->protocol || strcmp(proto, in->protocol) == 0))
			return true;
	}
	return false;
}

static char *port_text(json_int_t from, json_int_t to)
{
	return from == to
		   ? xasprintf("port %" JSON_INTEGER_FORMAT, from)
		   : xasprintf("ports %" JSON_INTEGER_FORMAT "-%" JSON_INTEGER_FORMAT, from, to);
}

/* The spec's login keys: a weak type is a finding at the key. */
static void check_access(struct audit *a)
{
	size_t i;

	for (i = 0; i < a->spec->access.nkeys; i++) {
		const struct spec_ssh_key *k = &a->spec->access.keys[i];
		char *path = xasprintf("access.ssh_keys[%zu]", i);

		if (strcmp(k->type, "ssh-dss") == 0)
			add(a, "KILN-SSH-001", NULL, path, k->node,
			    "%s (%s) is an ssh-dss key: %d-bit DSA, which OpenSSH refuses", path,
			    k->fingerprint, k->bits);
		else if (strcmp(k->type, "ssh-rsa") == 0 && k->bits < 3072)
			add(a, "KILN-SSH-001", NULL, path, k->node,
			    "%s (%s) is a %d-bit RSA key: under 3072 bits", path, k->fingerprint,
			    k->bits);
		free(path);
	}
}

static void check_network(struct audit *a)
{
	const json_t *rules, *r;
	const char *addr = ingress_address(a, &rules);
	size_t i;

	for (i = 0; i < a->spec->network.ningress; i++) {
		const struct spec_ingress *in = &a->spec->network.ingress[i];
		char *path = xasprintf("network.ingress[%zu]", i);
		char *ports = port_text(in->port_from, in->port_to);
		bool tcp = !in->protocol || strcmp(in->protocol, "tcp") == 0;

		if (world(in->from) && tcp && in->port_from <= 22 && in->port_to >= 22)
			add(a, "KILN-NET-002", addr, path, spec_value_node(in->node, "from"),
			    "%s admits SSH (%s) from %s, the whole internet", path, ports,
			    in->from);
		else if (world(in->from))
			add(a, "KILN-NET-001", addr, path, spec_value_node(in->node, "from"),
			    "%s admits %s %s from %s, the whole internet", path, ports,
			    in->protocol ? in->protocol : "tcp", in->from);
		free(ports);
		free(path);
	}
	json_array_foreach(rules, i, r)
	{
		const char *from = json_string_value(json_object_get(r, "from"));
		char *ports;

		if (!world(from) || declared(a->spec, r))
			continue;
		ports = port_text(json_integer_value(json_object_get(r, "port_from")),
				  json_integer_value(json_object_get(r, "port_to")));
		add(a, "KILN-NET-003", addr, "network.ingress",
		    a->spec->network.node ? spec_value_node(a->spec->network.node, "ingress")
					  : NULL,
		    "%s admits %s from %s, which network.ingress does not declare", addr, ports,
		    from);
		free(ports);
	}
}

/* ---- cost ---- */

/*
 * A budget of the spec (budget.KEY, 0: none) against the plan's cost.COST:
 * rule fires above it, "the plan costs $X/h, above budget.max_hourly_usd
 * $Y/h" (what and unit say how the figures read).
 */
/* ---- workload ---- */

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* A group that cannot run the workload, or not by its deadline (kiln.workload.groups). */
static void check_workload_group(struct audit *a, const json_t *run, double deadline_days)
{
	const char *name = json_string_value(json_object_get(run, "group"));
	const struct spec_group *g = name ? spec_group_find(a->spec, name) : NULL;
	const char *type = json_string_value(json_object_get(run, "instance_type"));
	json_int_t nodes = json_integer_value(json_object_get(run, "nodes"));
	const json_t *need = json_object_get(run, "nodes_for_deadline");
	char *addr, *path, *meet;

	if (!g || !type)
		return;
	addr = part_address(a, PART_GROUP, g->name);
	path = xasprintf("compute.%s", g->name);
	if (!json_is_true(json_object_get(run, "fits"))) {
		add(a, "KILN-WORK-001", addr, path, g->key,
		    "%s: %" JSON_INTEGER_FORMAT " × %s cannot run the workload: %s", path, nodes,
		    type, json_string_value(json_object_get(run, "reason")));
	} else if (json_is_false(json_object_get(run, "meets_deadline"))) {
		meet = json_is_integer(need)
			   ? xasprintf("%" JSON_INTEGER_FORMAT " nodes meet it",
				       json_integer_value(need))
			   : xasprintf("no count of %s meets it", type);
		add(a, "KILN-WORK-001", addr, path, spec_value_node(g->node, "count"),
		    "%s: %" JSON_INTEGER_FORMAT " × %s finish in %.1f days, past the %g-day "
		    "deadline: %s",
		    path, nodes, type, num(run, "train_days"), deadline_days, meet);
		free(meet);
	}
	free(path);
	free(addr);
}

/* A Lustre store that writes a checkpoint slower than write_within (kiln.workload.checkpoint_stores). */
static void check_workload_store(struct audit *a, const json_t *chk, const json_t *wl)
{
	const char *name = json_string_value(json_object_get(chk, "store"));
	const struct spec_store *st = name ? spec_store_find(a->spec, name) : NULL;
	const json_t *lustre = json_object_get(wl, "lustre");
	char *addr, *path, *took, *within;

	if (!st || json_is_true(json_object_get(chk, "fast_enough")))
		return;
	addr = part_address(a, PART_LUSTRE, st->name);
	path = xasprintf("storage.%s", st->name);
	took = timefmt_duration_format((int64_t)num(chk, "write_seconds"));
	within = timefmt_duration_format((int64_t)num(chk, "write_within_seconds"));
	add(a, "KILN-WORK-002", addr, path, spec_value_node(st->node, "throughput_per_tib"),
	    "%s: %d GiB at %d MB/s/TiB writes %.1f MB/s: a %.1f GiB checkpoint takes %s, past "
	    "workload.checkpoint.write_within %s, which needs %.1f MB/s; %d GiB at %d MB/s/TiB "
	    "writes it in time",
	    path, (int)num(chk, "capacity_gib"), (int)num(chk, "throughput_per_tib"),
	    num(chk, "write_mb_per_s"), num(wl, "checkpoint_gib"), took, within,
	    num(chk, "needed_mb_per_s"), (int)num(lustre, "capacity_gib"),
	    (int)num(lustre, "throughput_per_tib"));
	free(took);
	free(within);
	free(path);
	free(addr);
}

/* More than one node trains without EFA: the spec's cluster's, else the recommended one's. */
static void check_workload_fabric(struct audit *a, const json_t *wl)
{
	const json_t *run = json_object_get(wl, "run");
	const json_t *on = json_is_object(run) ? run : wl;
	const char *type = json_string_value(json_object_get(on, "instance_type"));
	json_int_t nodes = json_integer_value(json_object_get(on, "nodes"));
	const struct ynode *at = a->spec->network.node
				     ? spec_value_node(a->spec->network.node, "fabric")
				     : a->spec->workload.node;

	if (a->spec->network.fabric == FABRIC_EFA || nodes < 2 || !type)
		return;
	add(a, "KILN-WORK-003", NULL, "network.fabric", at,
	    "the workload trains on %" JSON_INTEGER_FORMAT " × %s and network.fabric is %s: "
	    "gradients cross between nodes over TCP, far below the MFU its time and cost assume",
	    nodes, type, spec_fabric_name(a->spec->network.fabric));
}

static void check_workload(struct audit *a)
{
	const json_t *wl = plan_kiln(a->plan, "workload"), *v;
	double deadline = num(wl, "deadline_days");
	size_t i;

	if (!json_is_object(wl))
		return;
	json_array_foreach(json_object_get(wl, "groups"), i, v)
	    check_workload_group(a, v, deadline);
	json_array_foreach(json_object_get(wl, "checkpoint_stores"), i, v)
	    check_workload_store(a, v, wl);
	check_workload_fabric(a, wl);
}

static void check_budget(struct audit *a, const char *rule, const char *cost_key, double limit,
			 const char *key, const char *what, const char *unit, const char *per)
{
	const json_t *v = json_object_get(plan_kiln(a->plan, "cost"), cost_key);
	char *cost, *budget, *path;

	if (!json_is_number(v) || limit <= 0 || json_number_value(v) <= limit)
		return;
	cost = cost_money(json_number_value(v));
	budget = cost_money(limit);
	path = xasprintf("budget.%s", key);
	add(a, rule, NULL, path, spec_value_node(ydoc_get(a->spec->root, "budget"), key),
	    "the plan %s %s%s, above %s %s%s", what, cost, unit, path, budget, per);
	free(path);
	free(cost);
	free(budget);
}

/* ---- IAM ---- */

/* "*", or what a provider of the table says names every resource (arn:aws:s3:::*). */
static bool resource_is_star(const char *r)
{
	size_t i;

	if (strcmp(r, "*") == 0)
		return true;
	for (i = 0; i < provider_count(); i++) {
		const struct spec_grammar *g = provider_at(i)->grammar;

		if (g && g->resource_is_any(r))
			return true;
	}
	return false;
}

static bool action_matches(const char *pattern, const char *action)
{
	return fnmatch(pattern, action, FNM_CASEFOLD) == 0;
}

/*
 * Actions no policy can scope to a resource, as any provider of the table
 * lists them (its unscopable_actions): "*" is their only resource, so
 * KILN-IAM-002 does not flag them, as Checkov's CKV_AWS_355 does not.
 */
static bool action_unscopable(const char *action)
{
	const char *const *u;
	size_t i;

	if (strchr(action, '*') || strchr(action, '?'))
		return false; /* a pattern may cover scopable actions too */
	for (i = 0; i < provider_count(); i++)
		for (u = provider_at(i)->unscopable_actions; u && *u; u++)
			if (fnmatch(*u, action, FNM_CASEFOLD) == 0)
				return true;
	return false;
}

/* Pairs of one role that one rule flags, for one finding per rule and role. */
struct pairs {
	struct strbuf text;
	size_t n;
};

static void pairs_add(struct pairs *p, const char *action, const char *resource)
{
	if (p->n++ < 3)
		sb_addf(&p->text, "%s\"%s\" on %s", p->text.len ? ", " : "", action, resource);
}

static void check_role(struct audit *a, const json_t *entry)
{
	const char *addr = json_string_value(json_object_get(entry, "address"));
	const char *role = json_string_value(json_object_get(entry, "role"));
	const char *who = role ? role : addr ? addr : "(unnamed)";
	const struct spec_role *sr = role ? spec_role_find(a->spec, role) : NULL;
	const struct ynode *at =
	    sr ? (ydoc_get(sr->node, "allow") ? ydoc_get(sr->node, "allow") : sr->key) : NULL;
	static const char *const ids[] = {"KILN-IAM-004", "KILN-IAM-003", "KILN-IAM-001",
					  "KILN-IAM-002"};
	static const char *const what[] = {"is admin-equivalent", "may pass any role",
					   "is granted wildcard actions",
					   "is granted actions on every resource"};
	struct pairs p[4] = {{{0}, 0}};
	char *path = role ? xasprintf("iam.roles.%s", role) : NULL;
	const json_t *pair;
	size_t i;

	json_array_foreach(json_object_get(entry, "after"), i, pair)
	{
		const char *act = json_string_value(json_object_get(pair, "action"));
		const char *res = json_string_value(json_object_get(pair, "resource"));

		if (!act || !res)
			continue;
		if (((strcmp(act, "*") == 0 || strcmp(act, "*:*") == 0) && resource_is_star(res)) ||
		    strcasecmp(act, "iam:*") == 0)
			pairs_add(&p[0], act, res);
		else if (action_matches(act, "iam:PassRole") && resource_is_star(res))
			pairs_add(&p[1], act, res);
		else {
			if (strchr(act, '*'))
				pairs_add(&p[2], act, res);
			if (resource_is_star(res) && !action_unscopable(act))
				pairs_add(&p[3], act, res);
		}
	}
	for (i = 0; i < 4; i++) {
		if (p[i].n)
			add(a, ids[i], addr, path, at, "role %s %s: %s%s", who, what[i],
			    p[i].text.buf, p[i].n > 3 ? " and more" : "");
		sb_release(&p[i].text);
	}
	free(path);
}

/* ---- waivers ---- */

static bool waiver_matches(const struct spec_waiver *w, const json_t *f)
{
	const char *addr = json_string_value(json_object_get(f, "address"));
	const char *path = json_string_value(json_object_get(f, "spec"));

	if (strcmp(w->rule, json_string_value(json_object_get(f, "rule"))) != 0)
		return false;
	return !w->address || (addr && strcmp(w->address, addr) == 0) ||
	       (path && strcmp(w->address, path) == 0);
}

/* Why a waiver waives nothing: KILN-WAIVE-001 to 003, each with its message and node. */
struct waiver_problem {
	const char *rule;
	char *msg;
	const struct ynode *at;
};

/* The problems of waiver i judged on today (at most 3, into p); their count. */
static size_t waiver_problems(const struct spec *spec, size_t i, const char *today,
			      struct waiver_problem p[3])
{
	const struct spec_waiver *w = &spec->waivers[i];
	size_t n = 0;

	if (!audit_rule_find(w->rule)) {
		const char **ids = xcalloc(audit_nrules, sizeof(*ids));
		const char *near;
		size_t k;

		for (k = 0; k < audit_nrules; k++)
			ids[k] = audit_rules[k].id;
		near = str_closest(w->rule, ids, audit_nrules);
		p[n++] = (struct waiver_problem){
		    "KILN-WAIVE-003",
		    xasprintf("waive[%zu] waives rule '%s', which kiln does not have%s%s%s", i,
			      w->rule, near ? " (did you mean " : "", near ? near : "",
			      near ? "?)" : ""),
		    spec_value_node(w->node, "rule")};
		free(ids);
	} else if (str_starts_with(w->rule, "KILN-WAIVE-")) {
		p[n++] = (struct waiver_problem){
		    "KILN-WAIVE-003",
		    xasprintf("waive[%zu] waives %s: a waiver's own findings cannot be waived", i,
			      w->rule),
		    spec_value_node(w->node, "rule")};
	}
	if (!w->reason)
		p[n++] = (struct waiver_problem){
		    "KILN-WAIVE-001",
		    xasprintf("waive[%zu] (%s) gives no reason, so it waives nothing", i, w->rule),
		    w->node};
	if (w->until && strcmp(w->until, today) < 0)
		p[n++] = (struct waiver_problem){
		    "KILN-WAIVE-002",
		    xasprintf("waive[%zu] (%s) expired on %s, so it waives nothing", i, w->rule,
			      w->until),
		    spec_value_node(w->node, "until")};
	return n;
}

static void check_waivers(struct audit *a, const char *today)
{
	size_t i, j, nrules_found = json_array_size(a->findings);

	for (i = 0; i < a->spec->nwaivers; i++) {
		const struct spec_waiver *w = &a->spec->waivers[i];
		struct waiver_problem p[3];
		size_t k, np = waiver_problems(a->spec, i, today, p), matched = 0;
		char *path = xasprintf("waive[%zu]", i);
		json_t *f;

		for (k = 0; k < np; k++) {
			add(a, p[k].rule, NULL, path, p[k].at, "%s", p[k].msg);
			free(p[k].msg);
		}
		for (j = 0; !np && j < nrules_found; j++) {
			f = json_array_get(a->findings, j);
			if (json_object_get(f, "waived") || !waiver_matches(w, f))
				continue;
			json_object_set_new(
			    f, "waived",
			    json_pack("{s:s, s:s?}", "reason", w->reason, "until", w->until));
			if (!w->until)
				json_object_set_new(json_object_get(f, "waived"), "until",
						    json_null());
			matched++;
		}
		if (!np && !matched)
			add(a, "KILN-WAIVE-004", NULL, path, w->node,
			    "%s (%s%s%s) matches no finding", path, w->rule,
			    w->address ? " at " : "", w->address ? w->address : "");
		free(path);
	}
}

int audit_check_waivers(const struct spec *spec, struct diags *d, struct kiln_error *err)
{
	char today[11];
	size_t i, k, np;

	if (audit_today(today, err) < 0)
		return -1;
	for (i = 0; i < spec->nwaivers; i++) {
		struct waiver_problem p[3];

		np = waiver_problems(spec, i, today, p);
		for (k = 0; k < np; k++) {
			const struct ynode *at = p[k].at ? p[k].at : spec->root;

			diag_hint(diags_add(d, DIAG_ERROR, spec->file, at ? at->line : 1,
					    at ? at->col : 1,
					    "%s; kiln plan reports it as %s, an error", p[k].msg,
					    p[k].rule),
				  "%s", audit_rule_find(p[k].rule)->fix);
			free(p[k].msg);
		}
	}
	return 0;
}

/* ---- order and summary ---- */

static int severity_rank(const json_t *f)
{
	const char *s = json_string_value(json_object_get(f, "severity"));

	return !s ? 2 : strcmp(s, "error") == 0 ? 0 : strcmp(s, "warning") == 0 ? 1 : 2;
}

/* A finding and what it sorts by, read once: 10,000 findings sort in some 140,000 steps. */
struct finding_key {
	json_t *f;
	int waived, rank;
	json_int_t line;
	const char *rule, *spec, *address;
};

static const char *str_or_empty(const json_t *f, const char *key)
{
	const char *s = json_string_value(json_object_get(f, key));

	return s ? s : "";
}

/* What still counts first: errors, warnings, info, then the waived; by rule, then where. */
static int finding_cmp(const void *pa, const void *pb)
{
	const struct finding_key *a = pa, *b = pb;
	int c = a->waived - b->waived;

	if (!c)
		c = a->rank - b->rank;
	if (!c)
		c = strcmp(a->rule, b->rule);
	if (!c)
		c = a->line < b->line ? -1 : a->line > b->line;
	if (!c)
		c = strcmp(a->spec, b->spec);
	if (!c)
		c = strcmp(a->address, b->address);
	return c;
}

static json_t *sorted(json_t *findings)
{
	size_t n = json_array_size(findings), i;
	struct finding_key *v = xcalloc(n + 1, sizeof(*v));
	json_t *out = json_array();

	for (i = 0; i < n; i++) {
		json_t *f = json_array_get(findings, i);

		v[i] = (struct finding_key){
		    .f = f,
		    .waived = json_object_get(f, "waived") != NULL,
		    .rank = severity_rank(f),
		    .line = json_integer_value(json_object_get(f, "line")),
		    .rule = str_or_empty(f, "rule"),
		    .spec = str_or_empty(f, "spec"),
		    .address = str_or_empty(f, "address"),
		};
	}
	qsort(v, n, sizeof(*v), finding_cmp);
	for (i = 0; i < n; i++)
		json_array_append(out, v[i].f);
	free(v);
	return out;
}

static json_t *summary(const json_t *findings)
{
	json_int_t n[4] = {0};
	const json_t *f;
	size_t i;

	json_array_foreach(findings, i, f)
	{
		if (json_object_get(f, "waived"))
			n[3]++;
		else
			n[severity_rank(f)]++;
	}
	return json_pack("{s:I, s:I, s:I, s:I}", "error", n[0], "warning", n[1], "info", n[2],
			 "waived", n[3]);
}

int audit_today(char out[11], struct kiln_error *err)
{
	char buf[21];
	int64_t t;

	if (timefmt_now(&t, err) < 0)
		return -1;
	memcpy(out, timefmt_time_format_rfc3339(t, buf), 10);
	out[10] = '\0';
	return 0;
}

int audit_plan(const struct spec *spec, const struct provider *prov, json_t *plan,
	       const struct plan_view *v, struct kiln_error *err)
{
	struct audit a = {.spec = spec, .prov = prov, .plan = plan};
	json_t *entry, *list;
	char today[11];
	size_t i;

	if (audit_today(today, err) < 0)
		return -1;
	a.changes = json_object();
	a.findings = json_array();
	a.rule_values = json_object();
	a.file = json_string(spec->file ? spec->file : "");
	for (i = 0; i < v->nchanges; i++)
		if (!v->changes[i].deposed)
			json_object_set_new(a.changes, v->changes[i].address,
					    v->changes[i].after
						? jsonc_share(v->changes[i].after)
						: json_null());
	for (i = 0; i < spec->nstores; i++)
		check_store(&a, &spec->stores[i]);
	for (i = 0; i < spec->ngroups; i++)
		check_group(&a, &spec->groups[i]);
	check_boot(&a);
	check_network(&a);
	check_access(&a);
	check_workload(&a);
	check_budget(&a, "KILN-COST-001", "hourly_after", a.spec->max_hourly_usd, "max_hourly_usd",
		     "costs", "/h", "/h");
	/* What a plan buys up front (Capacity Blocks), once. */
	check_budget(&a, "KILN-COST-002", "upfront", a.spec->max_upfront_usd, "max_upfront_usd",
		     "buys", " up front", "");
	json_array_foreach(plan_kiln(plan, "iam_delta"), i, entry) check_role(&a, entry);
	check_waivers(&a, today);
	list = sorted(a.findings);
	plan_kiln_set(plan, "findings_summary", summary(list));
	plan_kiln_set(plan, "findings", list);
	json_decref(a.findings);
	json_decref(a.changes);
	json_decref(a.rule_values);
	json_decref(a.file);
	return 0;
}

size_t audit_errors(const json_t *plan)
{
	const json_t *f;
	size_t i, n = 0;

	json_array_foreach(plan_kiln(plan, "findings"), i, f)
	{
		const char *sev = json_string_value(json_object_get(f, "severity"));

		n += !json_object_get(f, "waived") && sev && strcmp(sev, "error") == 0;
	}
	return n;
}
