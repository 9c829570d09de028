/*
 * access.c - hosts, ssh configuration and the plan's access notes
 * (access.h). The engine side of `kiln hosts`, `kiln ssh-config`, `kiln
 * ssh` and `kiln exec`: commands render what these return.
 *
 * A node group is any resource whose attributes list "instance_ids" (the
 * engine names no cloud type); its nodes come from the "nodes" view the
 * providers compute (id, index, zone, addresses, state, health), or, in a
 * state recorded before that view existed, from the ids alone.
 */
#include "access.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "log.h"
#include "state.h"
#include "strbuf.h"
#include "util.h"

json_t *access_resources(struct engine *e, const json_t *state, bool refresh,
			 struct kiln_error *err)
{
	json_t *recorded = state ? state_resources((json_t *)state) : NULL, *live = NULL, *out, *v;
	struct refresh_stats rs = {0};
	const char *addr;

	if (!refresh)
		return recorded ? json_incref(recorded) : json_object();
	if (engine_refresh(e, recorded, false, &live, NULL, &rs, err) != 0)
		return NULL;
	out = json_object();
	json_object_foreach(live, addr, v) json_object_set(out, addr, json_array_get(v, 0));
	json_decref(live);
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The addresses of resources' node groups, sorted. */
static const char **group_addresses(const json_t *resources, size_t *n)
{
	const char **out = xcalloc(json_object_size(resources) + 1, sizeof(*out));
	const char *addr;
	json_t *r;

	*n = 0;
	json_object_foreach((json_t *)resources, addr, r)
	{
		if (strchr(addr, '.') &&
		    json_is_array(json_object_get(json_object_get(r, "attrs"), "instance_ids")))
			out[(*n)++] = addr;
	}
	qsort(out, *n, sizeof(*out), cmp_str);
	return out;
}

static int group_gpus(struct engine *e, const json_t *attrs)
{
	const json_t *g = json_object_get(attrs, "gpus_per_node");
	const struct catalog *c = e->prov->catalog ? e->prov->catalog(e->ctx) : NULL;
	const struct catalog_type *t;

	if (json_is_integer(g))
		return (int)json_integer_value(g);
	t = c ? catalog_find(c, json_string_value(json_object_get(attrs, "instance_type"))) : NULL;
	return t ? t->gpus : 0;
}

/*
 * The login user of a group: the spec's access.user, else the provider's
 * default for its image (asked once per image: cache maps image -> [user, why]).
 */
static int group_user(struct engine *e, const char *image, json_t *cache, const char **user,
		      const char **why, struct kiln_error *err)
{
	json_t *hit;
	char *u = NULL, *w = NULL;
	int rc;

	if (e->spec->access.user) {
		*user = e->spec->access.user;
		*why = "access.user";
		return 0;
	}
	if (!e->prov->login_user) {
		kiln_error_set(err, "provider %s has no default login user", e->prov->name);
		kiln_error_hint(err, "set access.user in the spec");
		return -1;
	}
	if (!(hit = json_object_get(cache, image ? image : ""))) {
		ENGINE_CALL(rc, err, e->prov->login_user(e->ctx, image, &u, &w, err));
		if (rc != PROV_OK)
			return -1;
		hit = json_pack("[s, s]", u, w);
		json_object_set_new(cache, image ? image : "", hit);
		free(u);
		free(w);
	}
	*user = json_string_value(json_array_get(hit, 0));
	*why = json_string_value(json_array_get(hit, 1));
	return 0;
}

static char *host_name(const struct engine *e, const char *group, json_int_t index)
{
	return xasprintf("kiln-%s-%s-%s-%" JSON_INTEGER_FORMAT, e->spec->cluster, e->workspace,
			 group, index);
}

/* One group's nodes appended to nodes. */
static int add_group(struct engine *e, const char *addr, const json_t *attrs, json_t *cache,
		     json_t *nodes, struct kiln_error *err)
{
	const char *group = strchr(addr, '.') + 1, *user, *why;
	const json_t *view = json_object_get(attrs, "nodes"), *ids, *n;
	bool public = json_is_true(json_object_get(attrs, "public"));
	int gpus = group_gpus(e, attrs);
	size_t i;

	if (group_user(e, json_string_value(json_object_get(attrs, "image")), cache, &user, &why,
		       err) < 0)
		return -1;
	ids = json_is_array(view) ? view : json_object_get(attrs, "instance_ids");
	json_array_foreach(ids, i, n)
	{
		json_int_t index = json_is_object(n) && json_is_integer(json_object_get(n, "index"))
				       ? json_integer_value(json_object_get(n, "index"))
				       : (json_int_t)i;
		char *name = host_name(e, group, index);
		json_t *node =
		    json_pack("{s:s, s:s, s:s, s:I, s:s?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, "
			      "s:O?, s:i, s:O?, "
			      "s:b, s:s, s:s, s:n}",
			      "name", name, "group", group, "address", addr, "index", index, "id",
			      json_is_string(n) ? json_string_value(n)
						: json_string_value(json_object_get(n, "id")),
			      "zone", json_object_get(n, "zone") ?: json_object_get(attrs, "zone"),
			      "private_ip", json_object_get(n, "private_ip"), "public_ip",
			      json_object_get(n, "public_ip"), "state", json_object_get(n, "state"),
			      "launched", json_object_get(n, "launched"), "health",
			      json_object_get(n, "health"), "health_reason",
			      json_object_get(n, "health_reason"), "gpus", gpus, "instance_type",
			      json_object_get(attrs, "instance_type"), "public", public, "user",
			      user, "user_why", why, "proxy_jump");

		/* Missing members of the view read as null, as the contract has them. */
		static const char *const nullable[] = {"zone",		"private_ip",	"public_ip",
						       "state",		"launched",	"health",
						       "health_reason", "instance_type"};
		for (size_t k = 0; k < ARRAY_SIZE(nullable); k++)
			if (!json_object_get(node, nullable[k]))
				json_object_set_new(node, nullable[k], json_null());
		json_array_append_new(nodes, node);
		free(name);
	}
	return 0;
}

json_t *access_hosts(struct engine *e, const json_t *resources, const char *group,
		     struct kiln_error *err)
{
	size_t i, n;
	const char **addrs = group_addresses(resources, &n);
	json_t *nodes = json_array(), *cache = json_object(), *node, *doc = NULL;
	const char *login = NULL;
	bool found = !group;

	for (i = 0; i < n; i++) {
		const json_t *attrs =
		    json_object_get(json_object_get(resources, addrs[i]), "attrs");

		if (add_group(e, addrs[i], attrs, cache, nodes, err) < 0)
			goto out;
	}
	/* The login node: the first node of the first public group. */
	json_array_foreach(nodes, i,
			   node) if (!login && json_is_true(json_object_get(node, "public")))
	    login = json_string_value(json_object_get(node, "name"));
	json_array_foreach(nodes, i, node)
	{
		if (login && !json_is_true(json_object_get(node, "public")))
			json_object_set_new(node, "proxy_jump", json_string(login));
		found |=
		    group && strcmp(json_string_value(json_object_get(node, "group")), group) == 0;
	}
	doc = json_pack("{s:s, s:s, s:s, s:b, s:s?, s:O}", "cluster", e->spec->cluster, "workspace",
			e->workspace, "provider", e->prov->name, "simulated", e->prov->simulated,
			"login", login, "nodes", nodes);
	if (!login)
		json_object_set_new(doc, "login", json_null());
	if (!found) {
		json_t *sel = access_select(doc, group, err);

		json_decref(sel);
		json_decref(doc);
		doc = NULL;
	} else if (group) {
		json_object_set_new(doc, "nodes", access_select(doc, group, err));
	}
out:
	json_decref(cache);
	json_decref(nodes);
	free(addrs);
	return doc;
}

int access_ssh_config_file(const json_t *hosts, const struct spec *spec, const char *endpoint,
			   char **path, struct kiln_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *text = access_ssh_config(hosts, spec, endpoint);
	size_t len = strlen(text), off = 0;
	int fd;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	*path = xasprintf("%s/kiln-ssh-config.XXXXXX", tmp);
	if ((fd = mkstemp(*path)) < 0) {
		kiln_error_set(err,
			       "cannot create a temporary file for ssh's configuration in %s: %s",
			       tmp, strerror(errno));
		kiln_error_hint(err, "set TMPDIR to a writable directory");
		goto fail;
	}
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	close(fd);
	if (off < len) {
		kiln_error_set(err, "cannot write ssh's configuration to %s: %s", *path,
			       strerror(errno));
		kiln_error_hint(err, "free some space in TMPDIR");
		unlink(*path);
		goto fail;
	}
	free(text);
	return 0;
fail:
	free(text);
	free(*path);
	*path = NULL;
	return -1;
}

/* The distinct group names of hosts' nodes, "a, b" ("none" when none). Caller frees. */
static char *group_names(const json_t *hosts)
{
	struct strbuf sb = {0};
	const char *last = NULL, *g;
	const json_t *node;
	size_t i;

	json_array_foreach(json_object_get(hosts, "nodes"), i, node)
	{
		g = json_string_value(json_object_get(node, "group"));
		if (last && strcmp(last, g) == 0)
			continue;
		sb_addf(&sb, "%s%s", last ? ", " : "", g);
		last = g;
	}
	return sb.buf ? sb_detach(&sb) : xstrdup("none");
}

static void unknown_group(const json_t *hosts, const char *group, struct kiln_error *err)
{
	char *names = group_names(hosts);

	kiln_error_set(err, "workspace '%s' has no node group '%s' with nodes",
		       json_string_value(json_object_get(hosts, "workspace")), group);
	kiln_error_hint(err, "the groups with nodes are: %s (kiln hosts lists them)", names);
	free(names);
}

json_t *access_select(const json_t *hosts, const char *group, struct kiln_error *err)
{
	json_t *out = json_array(), *node;
	size_t i;

	json_array_foreach(json_object_get(hosts, "nodes"), i,
			   node) if (!group ||
				     strcmp(json_string_value(json_object_get(node, "group")),
					    group) == 0) json_array_append(out, node);
	if (group && !json_array_size(out)) {
		unknown_group(hosts, group, err);
		json_decref(out);
		return NULL;
	}
	return out;
}

const json_t *access_find(const json_t *hosts, const char *target, struct kiln_error *err)
{
	const json_t *nodes = json_object_get(hosts, "nodes"), *node, *login;
	char *group, *slash, *end;
	long index = 0, count = 0;
	const json_t *hit = NULL;
	size_t i;

	if (!target) {
		login = json_object_get(hosts, "login");
		json_array_foreach(nodes, i,
				   node) if (!hit && (json_is_null(login) ||
						      json_equal(json_object_get(node, "name"),
								 (json_t *)login))) hit = node;
		if (!hit) {
			kiln_error_set(err, "workspace '%s' has no nodes",
				       json_string_value(json_object_get(hosts, "workspace")));
			kiln_error_hint(err, "bring the cluster up with `kiln up`");
		}
		return hit;
	}
	group = xstrdup(target);
	if ((slash = strchr(group, '/'))) {
		*slash = '\0';
		index = strtol(slash + 1, &end, 10);
		if (!slash[1] || *end || index < 0) {
			kiln_error_set(
			    err, "'%s' is not GROUP or GROUP/N (N a node's index from 0)", target);
			kiln_error_hint(err, "for example trainers/1");
			free(group);
			return NULL;
		}
	}
	json_array_foreach(nodes, i, node)
	{
		if (strcmp(json_string_value(json_object_get(node, "group")), group) != 0)
			continue;
		count++;
		if (json_integer_value(json_object_get(node, "index")) == index)
			hit = node;
	}
	if (!count)
		unknown_group(hosts, group, err);
	else if (!hit) {
		kiln_error_set(err,
			       "node group '%s' has %ld node%s (index 0 to %ld); there is no "
			       "node %ld",
			       group, count, count == 1 ? "" : "s", count - 1, index);
		kiln_error_hint(err, "kiln hosts %s lists them", group);
	}
	free(group);
	return hit;
}

const char *access_node_host(const json_t *node)
{
	const char *pub = json_string_value(json_object_get(node, "public_ip"));

	if (json_is_true(json_object_get(node, "public")) && pub)
		return pub;
	return json_string_value(json_object_get(node, "private_ip"));
}

char *access_ssh_config(const json_t *hosts, const struct spec *spec, const char *endpoint)
{
	struct strbuf sb = {0};
	const json_t *node;
	const char *colon = endpoint ? strrchr(endpoint, ':') : NULL;
	size_t i, k;

	sb_addf(&sb, "# kiln %s/%s: OpenSSH configuration written by `kiln ssh-config`\n",
		json_string_value(json_object_get(hosts, "cluster")),
		json_string_value(json_object_get(hosts, "workspace")));
	if (json_is_true(json_object_get(hosts, "simulated")))
		sb_addf(&sb, "# simulated addresses (%s provider): no host listens at them\n",
			json_string_value(json_object_get(hosts, "provider")));
	if (endpoint)
		sb_addf(&sb, "# KILN_TEST_SSH_ENDPOINT: every node is the test sshd at %s\n",
			endpoint);
	json_array_foreach(json_object_get(hosts, "nodes"), i, node)
	{
		const char *name = json_string_value(json_object_get(node, "name"));
		const char *host = access_node_host(node);
		const char *jump = json_string_value(json_object_get(node, "proxy_jump"));

		if (!host && !endpoint) {
			sb_addf(&sb, "\n# %s (%s): no address yet\n", name,
				json_string_value(json_object_get(node, "id")) ?: "no id");
			continue;
		}
		sb_addf(&sb, "\nHost %s\n", name);
		if (endpoint && colon)
			sb_addf(&sb, "  HostName %.*s\n  Port %s\n", (int)(colon - endpoint),
				endpoint, colon + 1);
		else
			sb_addf(&sb, "  HostName %s\n", endpoint ? endpoint : host);
		sb_addf(&sb, "  User %s\n", json_string_value(json_object_get(node, "user")));
		if (jump)
			sb_addf(&sb, "  ProxyJump %s\n", jump);
		for (k = 0; k < spec->access.nkeys; k++)
			if (spec->access.keys[k].identity)
				sb_addf(&sb, "  IdentityFile \"%s\"\n",
					spec->access.keys[k].identity);
		sb_adds(&sb, "  StrictHostKeyChecking accept-new\n");
		if (endpoint)
			sb_adds(&sb, "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n");
	}
	return sb_detach(&sb);
}

char *access_unreachable(const json_t *hosts)
{
	struct strbuf sb = {0};
	const char *last = NULL, *g;
	const json_t *node;
	size_t i, n = 0;

	if (!json_is_null(json_object_get(hosts, "login")))
		return NULL;
	json_array_foreach(json_object_get(hosts, "nodes"), i, node)
	{
		g = json_string_value(json_object_get(node, "group"));
		if (json_is_true(json_object_get(node, "public")) || (last && !strcmp(last, g)))
			continue;
		sb_addf(&sb, "%scompute.%s", n++ ? ", " : "", g);
		last = g;
	}
	if (!n)
		return NULL;
	sb_addf(&sb, " %s private and no group is public: reachable only from inside the VPC",
		n == 1 ? "is" : "are");
	return sb_detach(&sb);
}

int access_plan_notes(struct engine *e, json_t *plan, struct kiln_error *err)
{
	json_t *notes = json_object_get(json_object_get(plan, "kiln"), "notes"), *cache;
	const struct spec *spec = e->spec;
	size_t i, npriv = 0;
	bool any_public = false;
	struct strbuf priv = {0};
	int rc = 0;

	if (!spec->access.node || !notes)
		return 0;
	cache = json_object();
	for (i = 0; i < spec->ngroups; i++) {
		const struct spec_group *g = &spec->groups[i];
		const char *user, *why;

		if (group_user(e, g->image, cache, &user, &why, err) < 0) {
			rc = -1;
			break;
		}
		json_array_append_new(notes, json_sprintf("access: compute.%s: nodes log in as %s "
							  "(%s)",
							  g->name, user, why));
		any_public |= g->public;
		if (!g->public)
			sb_addf(&priv, "%scompute.%s", npriv++ ? ", " : "", g->name);
	}
	if (rc == 0 && npriv && !any_public)
		json_array_append_new(notes, json_sprintf("access: %s %s private and no group is "
							  "public: reachable only from inside the "
							  "VPC; " ACCESS_UNREACHABLE_FIX,
							  priv.buf, npriv == 1 ? "is" : "are"));
	sb_release(&priv);
	json_decref(cache);
	return rc;
}
