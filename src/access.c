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

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "jsonc.h"
#include "log.h"
#include "state.h"
#include "strbuf.h"
#include "util.h"

json_t *access_resources(struct engine *e, const json_t *state, bool refresh,
			 struct kiln_error *err)
{
	json_t *recorded = state ? state_resources(state) : NULL, *live = NULL, *out, *v;
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
	json_object_foreach_const(resources, addr, r)
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

/*
 * A directory whose path goes into a shell command as it is: ssh runs a
 * ProxyJump as `ssh -F PATH ...` through /bin/sh, unquoted.
 */
static bool dir_ok(const char *s)
{
	if (*s != '/')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("/._-", *s))
			return false;
	return true;
}

int access_ssh_config_file(const json_t *hosts, const struct spec *spec, const char *endpoint,
			   int batch, char **path, struct kiln_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char *text = access_ssh_config(hosts, spec, endpoint, err);
	size_t len, off = 0;
	int fd;

	*path = NULL;
	if (!text)
		return -1;
	if (batch >= 0) {
		/* Last, so every Host takes it; in the file, so a jump's ssh (-F) does too. */
		struct strbuf sb = {0};

		sb_addf(&sb, "%s\nHost *\n  BatchMode yes\n", text);
		if (batch > 0)
			sb_addf(&sb, "  ConnectTimeout %d\n", batch);
		free(text);
		text = sb_detach(&sb);
	}
	len = strlen(text);
	if (!tmp || !dir_ok(tmp))
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
								 login))) hit = node;
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

/* An IPv4 or IPv6 address, or a DNS name (RFC 1123 labels): what HostName may say. */
static bool host_ok(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];
	size_t label = 0, len = strlen(s);

	if (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1)
		return true;
	if (len == 0 || len > 253)
		return false;
	for (const char *p = s; *p; p++) {
		if (*p == '.') {
			if (label == 0 || p[-1] == '-')
				return false;
			label = 0;
		} else if (isalnum((unsigned char)*p) || (*p == '-' && label > 0)) {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	return label > 0 && s[len - 1] != '-';
}

/* A value ssh_config(5) reads as one argument inside double quotes: no control byte, no '"'. */
static bool value_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"')
			return false;
	return true;
}

/* A node's block; -1 with err when a value would not be read back as written. */
static int host_block(struct strbuf *sb, const json_t *node, const struct spec *spec,
		      const char *endpoint, struct kiln_error *err)
{
	const char *name = json_string_value(json_object_get(node, "name"));
	const char *host = access_node_host(node);
	const char *user = json_string_value(json_object_get(node, "user"));
	const char *jump = json_string_value(json_object_get(node, "proxy_jump"));
	const char *colon = endpoint ? strrchr(endpoint, ':') : NULL;

	if (!endpoint && !host_ok(host)) {
		kiln_error_set(err, "%s's address '%s' is not an IP address or a DNS name", name,
			       host);
		kiln_error_hint(err, "kiln hosts --refresh shows what the cloud reports for it; "
				     "kiln writes no ssh configuration for such an address");
		return -1;
	}
	if (!user || !*user || strchr(user, ' ') || !value_ok(user)) {
		kiln_error_set(err, "%s's login user '%s' has a space, a control character or '\"'",
			       name, user ? user : "");
		kiln_error_hint(err, "set access.user in the spec to the image's login name");
		return -1;
	}
	sb_addf(sb, "\nHost %s\n", name);
	if (endpoint && colon)
		sb_addf(sb, "  HostName %.*s\n  Port %s\n", (int)(colon - endpoint), endpoint,
			colon + 1);
	else
		sb_addf(sb, "  HostName %s\n", endpoint ? endpoint : host);
	sb_addf(sb, "  User %s\n", user);
	if (jump)
		sb_addf(sb, "  ProxyJump %s\n", jump);
	for (size_t k = 0; k < spec->access.nkeys; k++) {
		const char *id = spec->access.keys[k].identity;

		if (!id)
			continue;
		if (!value_ok(id)) {
			kiln_error_set(err,
				       "the key file '%s' has a control character or '\"' in its "
				       "name, which ssh_config cannot quote",
				       id);
			kiln_error_hint(err, "rename the key pair (and its .pub) and name the new "
					     "file in access.ssh_keys");
			return -1;
		}
		sb_addf(sb, "  IdentityFile \"%s\"\n", id);
	}
	sb_adds(sb, "  StrictHostKeyChecking accept-new\n");
	if (endpoint)
		sb_adds(sb, "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n");
	return 0;
}

char *access_ssh_config(const json_t *hosts, const struct spec *spec, const char *endpoint,
			struct kiln_error *err)
{
	struct strbuf sb = {0};
	const json_t *node;
	size_t i;

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
		if (!access_node_host(node) && !endpoint) {
			sb_addf(&sb, "\n# %s (%s): no address yet\n",
				json_string_value(json_object_get(node, "name")),
				json_string_value(json_object_get(node, "id")) ?: "no id");
			continue;
		}
		if (host_block(&sb, node, spec, endpoint, err) < 0) {
			sb_release(&sb);
			return NULL;
		}
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
