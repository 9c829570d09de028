/*
 * access.h - the nodes of a workspace as people log in to them: the host
 * list of `kiln hosts`, the OpenSSH configuration of `kiln ssh-config`,
 * `kiln ssh` and `kiln exec`, and the plan's notes on who logs in and how.
 *
 * Everything here reads the node groups' recorded (or refreshed) resources
 * and the spec's access: section; the only provider call is login_user,
 * for the image's default user when the spec names none. Nothing prints.
 */
#ifndef KILN_ACCESS_H
#define KILN_ACCESS_H

#include <jansson.h>

#include "engine.h"

/*
 * The resources (address -> {type, id, attrs}) hosts are read from: the
 * state's records, or with refresh each recorded address's live object.
 * New object; NULL with err.
 */
json_t *access_resources(struct engine *e, const json_t *state, bool refresh,
			 struct kiln_error *err);

/*
 * The host list of resources' node groups (only group when not NULL):
 *   {"cluster", "workspace", "provider", "simulated", "user", "user_why",
 *    "login": NAME|null, "nodes": [{"name", "group", "index", "id", "zone",
 *    "private_ip", "public_ip", "state", "health", "health_reason", "gpus",
 *    "instance_type", "public", "proxy_jump": NAME|null, "address"}]}
 * Host names are kiln-CLUSTER-WS-GROUP-N. A private node's proxy_jump is
 * the first node of the first public group. NULL with err (an unknown group).
 */
json_t *access_hosts(struct engine *e, const json_t *resources, const char *group,
		     struct kiln_error *err);

/*
 * OpenSSH Host blocks for every node of hosts (ssh_config(5)): HostName,
 * User, ProxyJump, IdentityFile (the spec's key files), StrictHostKeyChecking
 * accept-new. endpoint ("HOST:PORT", from KILN_TEST_SSH_ENDPOINT, else NULL)
 * sends every node to one test sshd: HostName and Port rewritten, host keys
 * kept out of the user's known_hosts (and ssh's note of each, LogLevel
 * ERROR). Caller frees.
 */
char *access_ssh_config(const json_t *hosts, const struct spec *spec, const char *endpoint);

/* The test-only variable that sends every node to one sshd (kiln-ssh(1)). */
#define ACCESS_ENDPOINT_ENV "KILN_TEST_SSH_ENDPOINT"

/*
 * access_ssh_config(hosts, spec, endpoint) in a private temporary file
 * (mode 0600, under TMPDIR or /tmp): *path, which the caller unlinks and
 * frees. -1 with err when it cannot be written.
 */
int access_ssh_config_file(const json_t *hosts, const struct spec *spec, const char *endpoint,
			   char **path, struct kiln_error *err);

/*
 * The node "GROUP" (its first) or "GROUP/N" names; with target NULL, the
 * login node (or, without a public group, the first node). Borrowed from
 * hosts; NULL with err naming the groups or indexes there are.
 */
const json_t *access_find(const json_t *hosts, const char *target, struct kiln_error *err);
/* The nodes of GROUP (all when NULL), new array; NULL with err for an unknown group. */
json_t *access_select(const json_t *hosts, const char *group, struct kiln_error *err);

/* The address ssh reaches node at (public for a public node, else private), or NULL. */
const char *access_node_host(const json_t *node);

/* Why hosts has private nodes no one outside the VPC reaches, or NULL. Caller frees. */
#define ACCESS_UNREACHABLE_FIX                                                                     \
	"add a login group with public: true (a small instance) to jump through, or run kiln "     \
	"from inside the VPC"
char *access_unreachable(const json_t *hosts);

/*
 * The plan's notes on access (kiln.notes): who logs in and why that user,
 * and private groups that only the VPC reaches. -1 with err when the
 * provider could not tell the user.
 */
int access_plan_notes(struct engine *e, json_t *plan, struct kiln_error *err);

#endif
