/*
 * state.h - the state document: what kiln believes exists, per workspace.
 *
 * Kept as a jansson value, not a struct, so keys a newer kiln adds survive a
 * round trip through an older one. This file owns the document's shape, its
 * canonical text and the sealing of sensitive attributes; it knows nothing
 * about git (the store commits the canonical text) or about providers.
 *
 *   {"format_version": 1, "cluster": "prod" | null, "workspace": "default",
 *    "provider": "aws" | null, "serial": 0, "lineage": "<uuid v4>",
 *    "resources": {
 *      "TYPE.NAME": {"type": "TYPE", "id": "..." | null, "attrs": {...},
 *                    "deps": ["addr", ...], "sensitive": ["attr", ...]}},
 *    "expiry": {"ttl_seconds": N, "expires": "RFC 3339", "set_by": "...",
 *               "set_at": "RFC 3339", "set_how": "...", "spec": "path"},
 *    "created": "RFC 3339"}
 *
 * "expiry" is optional (a workspace with a TTL; see expiry.h), as is
 * "created" (RFC 3339): when the apply that brought the cluster up from
 * nothing ran; removed, as "expiry" is, when a destroy leaves nothing.
 *
 * In a resource, "id", "deps" and "sensitive" may be absent (null, [] and []).
 */
#ifndef KILN_STATE_H
#define KILN_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "crypt.h"
#include "jsonc.h"
#include "util.h"

#define STATE_FORMAT_VERSION 1

/*
 * A new, empty state with serial 0 and a fresh random lineage. cluster and
 * provider may be NULL (stored as null).
 */
json_t *state_new(const char *cluster, const char *workspace, const char *provider);

/*
 * Parse and check a state document. `where` names it in errors ("state.json
 * at refs/heads/default (commit 1a2b3c4)", or a path). Returns 0 and *out (a
 * new reference) or -1 with err.
 */
int state_parse(json_t **out, const char *text, size_t len, const char *where,
		struct kiln_error *err);
/*
 * The checks state_parse makes, on a document already in memory: every key's
 * type, and deps among the recorded resources that have an order (none lists
 * itself, none loops). 0 or -1.
 */
int state_check(const json_t *doc, const char *where, struct kiln_error *err);

/*
 * Canonical text: sorted keys, 2-space indent, reals with 17 significant
 * digits, trailing newline. Dumping a parse of the result gives the same
 * bytes. Caller frees; NULL only if doc cannot be encoded.
 */
char *state_canonical(const json_t *doc);

const char *state_cluster(const json_t *doc);  /* NULL when null */
const char *state_provider(const json_t *doc); /* NULL when null */
const char *state_lineage(const json_t *doc);
json_int_t state_serial(const json_t *doc);
void state_set_serial(json_t *doc, json_int_t serial);
json_t *state_resources(const json_t *doc); /* borrowed */
size_t state_resource_count(const json_t *doc);

/*
 * Typed readers: what commands read of a state, by name instead of by key.
 * Each returns NULL (or false) when the member is absent or not of its
 * type; what they return is borrowed from doc.
 */

/* "expiry" (see expiry.h for its members), or NULL: no TTL. */
const json_t *state_expiry(const json_t *doc);
/* expiry.expires, RFC 3339: when reap destroys the workspace; NULL: no TTL. */
const char *state_expires(const json_t *doc);
/* expiry.set_by, set_at (RFC 3339) and set_how: who set the expiry, when and how. */
const char *state_expiry_set_by(const json_t *doc);
const char *state_expiry_set_at(const json_t *doc);
const char *state_expiry_set_how(const json_t *doc); /* NULL: the spec's ttl */
/* "created", RFC 3339: when the apply that brought it up from nothing ran. */
const char *state_created(const json_t *doc);

/*
 * The policies that record a spec for a later destroy by kiln reap: the
 * TTL ("expiry"), the idle policy ("idle") and a capacity window
 * ("window"), each as {"spec": "path", "spec_text": "..."}.
 */
enum state_policy { STATE_POLICY_EXPIRY, STATE_POLICY_IDLE, STATE_POLICY_WINDOW };
/* The policy's member, or NULL when the state holds none. */
const json_t *state_policy(const json_t *doc, enum state_policy p);
/* The path of the spec the policy recorded, or NULL. */
const char *state_policy_spec(const json_t *doc, enum state_policy p);
/* The spec text the policy recorded (a JSON string: it may hold any byte but NUL), or NULL. */
const json_t *state_policy_spec_text(const json_t *doc, enum state_policy p);

/* The resource recorded at address, or NULL. */
const json_t *state_resource(const json_t *doc, const char *address);
/* A recorded resource's type, id (NULL when null), attributes and one attribute. */
const char *state_resource_type(const json_t *res);
const char *state_resource_id(const json_t *res);
const json_t *state_resource_attrs(const json_t *res);
const json_t *state_resource_attr(const json_t *res, const char *name);

/* Each recorded resource, only read: addr a const char *, res a const json_t *. */
#define state_foreach_resource(doc, addr, res)                                                     \
	json_object_foreach_const(state_resources(doc), addr, res)

/*
 * Reseal every value of doc sealed with key from under key to (values
 * already under to are left). The number resealed, or -1 with err when a
 * value is sealed with a third key or does not open (doc may then be
 * partly resealed: the caller discards it).
 */
int state_rekey(json_t *doc, const struct crypt_key *from, const struct crypt_key *to,
		struct kiln_error *err);

/*
 * The id of the first key other than kid that a value in doc is sealed
 * with, with that value's address and attribute; NULL when every sealed
 * value is sealed with kid. Borrowed from doc.
 */
const char *state_sealed_other(const json_t *doc, const char *kid, const char **address,
			       const char **attr);

/*
 * Seal every attribute a resource lists in "sensitive" that is not sealed
 * yet, with aad "<address>/<attr>". A null value holds no secret and is left
 * alone. Without a key, any plaintext sensitive value is an error unless
 * allow_plaintext. A value sealed with another key is an error before
 * anything is sealed. Returns the number of values sealed, or -1 with err
 * (the document may then be partly sealed, which is still valid).
 */
int state_seal(json_t *doc, const struct crypt_key *key, bool allow_plaintext,
	       struct kiln_error *err);

/*
 * A copy of the resource at address with every sensitive (listed or sealed)
 * attribute opened with key when reveal is true, or replaced by the string
 * "(sensitive)" when it is false (key may then be NULL). New reference or
 * NULL with err.
 */
json_t *state_resource_view(const json_t *doc, const char *address, const struct crypt_key *key,
			    bool reveal, struct kiln_error *err);

#endif
