/*
 * state.c - see state.h.
 *
 * A state document comes back from git, possibly edited by hand or written by
 * a newer kiln, so it is checked as hostile input: every message names the
 * document (`where`), the resource and the key, and says what was expected.
 */
#include "state.h"
#include "jsonw.h"
#include "jsonr.h"

#include <stdlib.h>
#include <string.h>

#define REDACTED "(sensitive)"

/* ---- checking ---- */

enum {
	T_OBJECT = 1 << 0,
	T_ARRAY = 1 << 1,
	T_STRING = 1 << 2,
	T_INTEGER = 1 << 3,
	T_NULL = 1 << 4,
};

static bool type_in(const json_t *v, unsigned types)
{
	return ((types & T_OBJECT) && json_is_object(v)) ||
	       ((types & T_ARRAY) && json_is_array(v)) ||
	       ((types & T_STRING) && json_is_string(v)) ||
	       ((types & T_INTEGER) && json_is_integer(v)) || ((types & T_NULL) && json_is_null(v));
}

/*
 * obj[key] when it has one of the types; prefix starts every message
 * ("state.json" or "state.json: resource aws_db.main"). A missing optional
 * key gives NULL without an error.
 */
static int member_get(const json_t **out, const json_t *obj, const char *key, unsigned types,
		      const char *expected, bool required, const char *prefix,
		      struct kiln_error *err)
{
	const json_t *v = json_object_get(obj, key);

	*out = v;
	if (!v) {
		if (!required)
			return 0;
		kiln_error_set(err, "%s: missing key '%s'", prefix, key);
		return -1;
	}
	if (!type_in(v, types)) {
		kiln_error_set(err, "%s: wrong type for '%s': expected %s, found %s", prefix, key,
			       expected, jsonr_kind(v));
		return -1;
	}
	return 0;
}

/* An optional array of strings ("deps", "sensitive"). */
static int string_array_check(const json_t **out, const json_t *res, const char *key,
			      const char *prefix, struct kiln_error *err)
{
	const json_t *item;
	size_t i;

	if (member_get(out, res, key, T_ARRAY, "an array of strings", false, prefix, err) < 0)
		return -1;
	json_array_foreach(*out, i, item)
	{
		if (!json_is_string(item)) {
			kiln_error_set(err,
				       "%s: wrong type for '%s[%zu]': expected a string, found %s",
				       prefix, key, i, jsonr_kind(item));
			return -1;
		}
	}
	return 0;
}

static int resource_check(const char *address, const json_t *res, const char *where,
			  struct kiln_error *err)
{
	const json_t *v, *attrs, *sens, *item;
	char *prefix = NULL;
	size_t i;
	int ret = -1;

	if (!json_is_object(res)) {
		kiln_error_set(err, "%s: resource %s is not an object (found %s)", where, address,
			       jsonr_kind(res));
		return -1;
	}
	prefix = xasprintf("%s: resource %s", where, address);
	if (member_get(&v, res, "type", T_STRING, "a string", true, prefix, err) < 0 ||
	    member_get(&v, res, "id", T_STRING | T_NULL, "a string or null", false, prefix, err) <
		0 ||
	    member_get(&attrs, res, "attrs", T_OBJECT, "an object", true, prefix, err) < 0 ||
	    string_array_check(&v, res, "deps", prefix, err) < 0 ||
	    string_array_check(&sens, res, "sensitive", prefix, err) < 0)
		goto out;
	{
		static const char *const known[] = {"type", "id", "attrs", "deps", "sensitive"};
		const char *k;
		json_t *kv;

		/* A typo ("sensitve") would otherwise switch encryption off silently. */
		json_object_foreach_const(res, k, kv)
		{
			size_t j;
			const char *near;

			for (j = 0; j < ARRAY_SIZE(known); j++)
				if (strcmp(k, known[j]) == 0)
					break;
			if (j < ARRAY_SIZE(known))
				continue;
			kiln_error_set(err, "%s: unknown key '%s'", prefix, k);
			near = str_closest(k, known, ARRAY_SIZE(known));
			if (near)
				kiln_error_hint(err, "did you mean '%s'?", near);
			else
				kiln_error_hint(
				    err, "a resource has type, id, attrs, deps and sensitive");
			goto out;
		}
	}
	json_array_foreach(sens, i, item)
	{
		if (!json_object_get(attrs, json_string_value(item))) {
			kiln_error_set(err, "%s: sensitive attribute '%s' is not in attrs", prefix,
				       json_string_value(item));
			goto out;
		}
	}
	ret = 0;
out:
	free(prefix);
	return ret;
}

/* The optional "expiry" member (expiry.h): a kiln that reaps must be able to read it. */
static int expiry_check(const json_t *doc, const char *where, struct kiln_error *err)
{
	const json_t *x = json_object_get(doc, "expiry"), *v;
	char *prefix;
	int64_t t;
	int rc = -1;

	if (!x)
		return 0;
	if (!json_is_object(x)) {
		kiln_error_set(err, "%s: wrong type for 'expiry': expected an object, found %s",
			       where, jsonr_kind(x));
		return -1;
	}
	prefix = xasprintf("%s: expiry", where);
	if (member_get(&v, x, "ttl_seconds", T_INTEGER, "an integer", true, prefix, err) < 0)
		goto out;
	if (json_integer_value(v) <= 0) {
		kiln_error_set(err, "%s: ttl_seconds must be more than 0", prefix);
		goto out;
	}
	if (member_get(&v, x, "expires", T_STRING, "a string", true, prefix, err) < 0)
		goto out;
	if (timefmt_time_parse_rfc3339(json_string_value(v), &t) < 0) {
		kiln_error_set(err, "%s: expires '%s' is not an RFC 3339 time", prefix,
			       json_string_value(v));
		goto out;
	}
	if (member_get(&v, x, "set_by", T_STRING, "a string", true, prefix, err) < 0 ||
	    member_get(&v, x, "set_at", T_STRING, "a string", true, prefix, err) < 0 ||
	    member_get(&v, x, "set_how", T_STRING, "a string", false, prefix, err) < 0 ||
	    member_get(&v, x, "spec", T_STRING, "a string", false, prefix, err) < 0 ||
	    member_get(&v, x, "spec_text", T_STRING, "a string", false, prefix, err) < 0)
		goto out;
	rc = 0;
out:
	free(prefix);
	return rc;
}

/*
 * The deps of a state must have an order: apply creates a resource after
 * what it uses and destroy deletes it first, so a resource that depends on
 * itself, or a loop of them, would have a role deleted before the group
 * that uses it. Deps naming no recorded resource are left alone. One walk
 * over every resource and dep, iterative so a long chain cannot overflow.
 */
static int deps_cycle_check(const json_t *resources, const char *where, struct kiln_error *err)
{
	size_t n = json_object_size(resources), i = 0, top, k;
	const char **addr = xcalloc(n + 1, sizeof(*addr));
	const json_t **deps = xcalloc(n + 1, sizeof(*deps));
	unsigned char *color = xcalloc(n + 1, 1); /* 0 new, 1 on the path, 2 done */
	size_t *stack = xcalloc(n + 1, sizeof(*stack)), *next = xcalloc(n + 1, sizeof(*next));
	json_t *index = json_object();
	const char *a;
	json_t *res;
	int rc = 0;

	json_object_foreach_const(resources, a, res)
	{
		addr[i] = a;
		deps[i] = json_object_get(res, "deps");
		json_object_set_new(index, a, json_integer((json_int_t)i));
		i++;
	}
	for (i = 0; i < n && rc == 0; i++) {
		if (color[i])
			continue;
		top = 0;
		stack[top] = i;
		next[top] = 0;
		color[i] = 1;
		while (rc == 0) {
			size_t cur = stack[top];
			const json_t *d = json_array_get(deps[cur], next[top]++);
			const json_t *to;

			if (!d) {
				color[cur] = 2;
				if (top-- == 0)
					break;
				continue;
			}
			to = json_object_get(index, json_string_value(d));
			if (!to)
				continue;
			k = (size_t)json_integer_value(to);
			if (color[k] == 0) {
				color[k] = 1;
				stack[++top] = k;
				next[top] = 0;
			} else if (color[k] == 1 && k == cur) {
				kiln_error_set(
				    err, "%s: resource %s depends on itself (its deps list %s)",
				    where, addr[k], addr[k]);
				rc = -1;
			} else if (color[k] == 1) {
				struct strbuf path = {0};
				size_t j = top;

				while (stack[j] != k)
					j--;
				for (; j <= top; j++)
					sb_addf(&path, "%s -> ", addr[stack[j]]);
				sb_adds(&path, addr[k]);
				kiln_error_set(err,
					       "%s: resources depend on each other in a loop: %s",
					       where, path.buf);
				sb_release(&path);
				rc = -1;
			}
		}
	}
	json_decref(index);
	free(next);
	free(stack);
	free(color);
	free(deps);
	free(addr);
	return rc;
}

int state_check(const json_t *doc, const char *where, struct kiln_error *err)
{
	const json_t *version, *serial, *lineage, *resources, *v;
	const char *address;
	json_t *res;
	int64_t created;

	if (!json_is_object(doc)) {
		kiln_error_set(err, "%s: not a JSON object (found %s)", where, jsonr_kind(doc));
		return -1;
	}
	/* First, so a newer layout is reported as newer rather than as broken. */
	if (member_get(&version, doc, "format_version", T_INTEGER, "an integer", true, where, err) <
	    0)
		return -1;
	if (json_integer_value(version) > STATE_FORMAT_VERSION) {
		kiln_error_set(err,
			       "%s: format_version %" JSON_INTEGER_FORMAT
			       " is newer than this kiln understands (%d)",
			       where, json_integer_value(version), STATE_FORMAT_VERSION);
		kiln_error_hint(
		    err, "upgrade kiln to a version that reads state format %" JSON_INTEGER_FORMAT,
		    json_integer_value(version));
		return -1;
	}
	if (json_integer_value(version) < 1) {
		kiln_error_set(err,
			       "%s: format_version %" JSON_INTEGER_FORMAT
			       " is not valid; it must be 1 or more",
			       where, json_integer_value(version));
		return -1;
	}
	if (member_get(&v, doc, "cluster", T_STRING | T_NULL, "a string or null", true, where,
		       err) < 0 ||
	    member_get(&v, doc, "workspace", T_STRING, "a string", true, where, err) < 0 ||
	    member_get(&v, doc, "provider", T_STRING | T_NULL, "a string or null", true, where,
		       err) < 0 ||
	    member_get(&serial, doc, "serial", T_INTEGER, "an integer", true, where, err) < 0 ||
	    member_get(&lineage, doc, "lineage", T_STRING, "a string", true, where, err) < 0 ||
	    member_get(&resources, doc, "resources", T_OBJECT, "an object", true, where, err) < 0)
		return -1;
	/* Up to 2^53 - 1: every JSON reader holds it exactly, and +1 cannot overflow. */
	if (json_integer_value(serial) < 0 || json_integer_value(serial) > 9007199254740991LL) {
		kiln_error_set(err,
			       "%s: serial is %" JSON_INTEGER_FORMAT
			       "; it must be between 0 and 9007199254740991",
			       where, json_integer_value(serial));
		return -1;
	}
	if (json_string_length(lineage) == 0) {
		kiln_error_set(err, "%s: lineage is empty", where);
		return -1;
	}
	if (expiry_check(doc, where, err) < 0)
		return -1;
	if (member_get(&v, doc, "created", T_STRING, "a string", false, where, err) < 0)
		return -1;
	if (v && timefmt_time_parse_rfc3339(json_string_value(v), &created) < 0) {
		kiln_error_set(err, "%s: created '%s' is not an RFC 3339 time", where,
			       json_string_value(v));
		return -1;
	}
	json_object_foreach_const(resources, address, res)
	{
		const char *type = json_string_value(json_object_get(res, "type"));
		size_t tl;

		if (resource_check(address, res, where, err) < 0)
			return -1;
		/* The address is TYPE.NAME, and its TYPE is the resource's type. */
		tl = strlen(type);
		if (strncmp(address, type, tl) != 0 || address[tl] != '.' || !address[tl + 1]) {
			kiln_error_set(err, "%s: resource address '%s' is not %s.NAME", where,
				       address, type);
			return -1;
		}
	}
	return deps_cycle_check(resources, where, err);
}

int state_parse(json_t **out, const char *text, size_t len, const char *where,
		struct kiln_error *err)
{
	json_error_t jerr;
	json_t *doc;

	*out = NULL;
	doc = jsonr_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		kiln_error_set(err, "%s: not JSON: line %d, column %d: %s", where, jerr.line,
			       jerr.column, jerr.text);
		return -1;
	}
	if (state_check(doc, where, err) < 0) {
		json_decref(doc);
		return -1;
	}
	*out = doc;
	return 0;
}

/* ---- building and accessors ---- */

static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *state_new(const char *cluster, const char *workspace, const char *provider)
{
	char lineage[37];
	json_t *doc;

	util_uuid_v4(lineage);
	doc = json_object();
	json_object_set_new(doc, "format_version", json_integer(STATE_FORMAT_VERSION));
	json_object_set_new(doc, "cluster", string_or_null(cluster));
	json_object_set_new(doc, "workspace", json_string(workspace));
	json_object_set_new(doc, "provider", string_or_null(provider));
	json_object_set_new(doc, "serial", json_integer(0));
	json_object_set_new(doc, "lineage", json_string(lineage));
	json_object_set_new(doc, "resources", json_object());
	return doc;
}

char *state_canonical(const json_t *doc)
{
	return jsonw_dumps(
	    doc, JSON_SORT_KEYS | JSON_INDENT(2) | JSON_REAL_PRECISION(17) | JSONW_NEWLINE, NULL);
}

const char *state_cluster(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "cluster"));
}

const char *state_provider(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "provider"));
}

const char *state_lineage(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "lineage"));
}

json_int_t state_serial(const json_t *doc)
{
	return json_integer_value(json_object_get(doc, "serial"));
}

void state_set_serial(json_t *doc, json_int_t serial)
{
	json_object_set_new(doc, "serial", json_integer(serial));
}

json_t *state_resources(const json_t *doc)
{
	return json_object_get(doc, "resources");
}

size_t state_resource_count(const json_t *doc)
{
	return json_object_size(state_resources(doc));
}

/* ---- typed readers ---- */

const json_t *state_expiry(const json_t *doc)
{
	const json_t *x = json_object_get(doc, "expiry");

	return json_is_object(x) ? x : NULL;
}

const char *state_expires(const json_t *doc)
{
	return json_string_value(json_object_get(state_expiry(doc), "expires"));
}

const char *state_expiry_set_by(const json_t *doc)
{
	return json_string_value(json_object_get(state_expiry(doc), "set_by"));
}

const char *state_expiry_set_at(const json_t *doc)
{
	return json_string_value(json_object_get(state_expiry(doc), "set_at"));
}

const char *state_expiry_set_how(const json_t *doc)
{
	return json_string_value(json_object_get(state_expiry(doc), "set_how"));
}

const char *state_created(const json_t *doc)
{
	return json_string_value(json_object_get(doc, "created"));
}

const json_t *state_policy(const json_t *doc, enum state_policy p)
{
	static const char *const member[] = {
	    [STATE_POLICY_EXPIRY] = "expiry",
	    [STATE_POLICY_IDLE] = "idle",
	    [STATE_POLICY_WINDOW] = "window",
	};
	const json_t *o = json_object_get(doc, member[p]);

	return json_is_object(o) ? o : NULL;
}

const char *state_policy_spec(const json_t *doc, enum state_policy p)
{
	return json_string_value(json_object_get(state_policy(doc, p), "spec"));
}

const json_t *state_policy_spec_text(const json_t *doc, enum state_policy p)
{
	const json_t *t = json_object_get(state_policy(doc, p), "spec_text");

	return json_is_string(t) ? t : NULL;
}

const json_t *state_resource(const json_t *doc, const char *address)
{
	const json_t *res = json_object_get(state_resources(doc), address);

	return json_is_object(res) ? res : NULL;
}

const char *state_resource_type(const json_t *res)
{
	return json_string_value(json_object_get(res, "type"));
}

const char *state_resource_id(const json_t *res)
{
	return json_string_value(json_object_get(res, "id"));
}

const json_t *state_resource_attrs(const json_t *res)
{
	const json_t *attrs = json_object_get(res, "attrs");

	return json_is_object(attrs) ? attrs : NULL;
}

const json_t *state_resource_attr(const json_t *res, const char *name)
{
	return json_object_get(state_resource_attrs(res), name);
}

/* ---- sensitive attributes ---- */

static bool name_listed(const json_t *names, const char *name)
{
	const json_t *item;
	size_t i;

	json_array_foreach(names, i, item)
	{
		if (strcmp(json_string_value(item), name) == 0)
			return true;
	}
	return false;
}

/* Copy a crypt error under a message that says which value it was about. */
static void error_wrap(struct kiln_error *err, const struct kiln_error *cause, const char *what,
		       const char *address, const char *attr)
{
	kiln_error_set(err, "%s %s/%s: %s", what, address, attr, cause->msg);
	if (cause->hint[0])
		kiln_error_hint(err, "%s", cause->hint);
}

const char *state_sealed_other(const json_t *doc, const char *kid, const char **address,
			       const char **attr)
{
	const char *addr;
	const json_t *res;

	state_foreach_resource(doc, addr, res)
	{
		const json_t *attrs = json_object_get(res, "attrs"), *item;
		size_t i;

		json_array_foreach(json_object_get(res, "sensitive"), i, item)
		{
			const json_t *v = json_object_get(attrs, json_string_value(item));
			const char *k = json_string_value(json_object_get(v, "kid"));

			if (crypt_envelope_wellformed(v) && k && strcmp(k, kid) != 0) {
				*address = addr;
				*attr = json_string_value(item);
				return k;
			}
		}
	}
	return NULL;
}

/* attrs[name] (of resource address) becomes value sealed with key; -1 with err saying what failed.
 */
static int seal_at(json_t *attrs, const char *address, const char *name,
		   const struct crypt_key *key, const json_t *value, const char *what,
		   struct kiln_error *err)
{
	struct kiln_error cause = {{0}};
	char *aad = xasprintf("%s/%s", address, name);
	json_t *env = crypt_seal(key, value, aad, &cause);

	free(aad);
	if (!env) {
		error_wrap(err, &cause, what, address, name);
		return -1;
	}
	json_object_set_new(attrs, name, env);
	return 0;
}

/* A value sealed with a key other than key: true with err naming it. */
static bool sealed_elsewhere(const json_t *doc, const struct crypt_key *key, struct kiln_error *err)
{
	const char *address, *name, *kid = state_sealed_other(doc, key->kid, &address, &name);

	if (!kid)
		return false;
	kiln_error_set(err,
		       "resource %s attribute '%s' is sealed with key %s, but the state key is %s",
		       address, name, kid, key->kid);
	kiln_error_hint(err, "put the plain value there to seal it with this key, or use key %s",
			kid);
	return true;
}

/* One sensitive attribute of a resource, as sensitive_each hands it over. */
struct sensitive {
	json_t *attrs;	     /* the resource's attrs */
	const char *address; /* the resource */
	const char *name;    /* the attribute */
	json_t *value;	     /* its value (NULL when absent) */
};

/*
 * fn over every attribute doc's resources list in "sensitive": -1 as soon
 * as fn says -1, else the sum of what fn returned.
 */
static int sensitive_each(json_t *doc, int (*fn)(const struct sensitive *s, void *arg), void *arg)
{
	const char *address;
	json_t *res;
	int sum = 0, rc;

	json_object_foreach(state_resources(doc), address, res)
	{
		json_t *attrs = json_object_get(res, "attrs");
		const json_t *item;
		size_t i;

		json_array_foreach(json_object_get(res, "sensitive"), i, item)
		{
			const char *name = json_string_value(item);
			struct sensitive s = {attrs, address, name, json_object_get(attrs, name)};

			if ((rc = fn(&s, arg)) < 0)
				return -1;
			sum += rc;
		}
	}
	return sum;
}

struct seal_ctx {
	const struct crypt_key *key;
	bool allow_plaintext;
	struct kiln_error *err;
};

/* state_seal's step: 1 when s was sealed now. */
static int seal_one(const struct sensitive *s, void *arg)
{
	struct seal_ctx *c = arg;

	if (crypt_is_sealed(s->value)) {
		/* Something that only looks sealed would be stored as it is. */
		if (crypt_envelope_wellformed(s->value))
			return 0;
		kiln_error_set(c->err,
			       "resource %s attribute '%s' looks sealed but is not a kiln envelope",
			       s->address, s->name);
		kiln_error_hint(c->err, "put the plain value there; kiln seals it");
		return -1;
	}
	if (json_is_null(s->value))
		return 0;
	if (!c->key) {
		if (c->allow_plaintext)
			return 0;
		kiln_error_set(
		    c->err, "resource %s has sensitive attribute '%s' and no KILN_STATE_KEY is set",
		    s->address, s->name);
		kiln_error_hint(c->err, "set KILN_STATE_KEY or KILN_STATE_KEY_FILE, or pass "
					"--allow-plaintext-secrets");
		return -1;
	}
	return seal_at(s->attrs, s->address, s->name, c->key, s->value, "cannot seal", c->err) < 0
		   ? -1
		   : 1;
}

int state_seal(json_t *doc, const struct crypt_key *key, bool allow_plaintext,
	       struct kiln_error *err)
{
	struct seal_ctx c = {key, allow_plaintext, err};

	/* A malformed "sensitive" list would let a secret through unsealed. */
	if (state_check(doc, "state", err) < 0)
		return -1;
	/* One key per state: nothing is sealed while another key's value is there. */
	if (key && sealed_elsewhere(doc, key, err))
		return -1;
	return sensitive_each(doc, seal_one, &c);
}

struct rekey_ctx {
	const struct crypt_key *from, *to;
	struct kiln_error *err;
};

/* state_rekey's step: 1 when s moved from the old key to the new one. */
static int rekey_one(const struct sensitive *s, void *arg)
{
	struct rekey_ctx *c = arg;
	struct kiln_error cause = {{0}};
	const char *kid = json_string_value(json_object_get(s->value, "kid"));
	json_t *opened;
	char *aad;
	int rc;

	if (!crypt_is_sealed(s->value) || (kid && strcmp(kid, c->to->kid) == 0))
		return 0;
	if (!kid || strcmp(kid, c->from->kid) != 0) {
		kiln_error_set(
		    c->err,
		    "resource %s attribute '%s' is sealed with key %s, neither the old key "
		    "%s nor the new key %s",
		    s->address, s->name, kid ? kid : "(none)", c->from->kid, c->to->kid);
		kiln_error_hint(c->err, "give the file of key %s; nothing was changed",
				kid ? kid : "(none)");
		return -1;
	}
	aad = xasprintf("%s/%s", s->address, s->name);
	opened = crypt_open(c->from, s->value, aad, &cause);
	free(aad);
	if (!opened) {
		error_wrap(c->err, &cause, "cannot open", s->address, s->name);
		return -1;
	}
	rc = seal_at(s->attrs, s->address, s->name, c->to, opened, "cannot reseal", c->err);
	json_decref(opened);
	return rc < 0 ? -1 : 1;
}

int state_rekey(json_t *doc, const struct crypt_key *from, const struct crypt_key *to,
		struct kiln_error *err)
{
	struct rekey_ctx c = {from, to, err};

	return sensitive_each(doc, rekey_one, &c);
}

/* Suggest the closest address when the one asked for is not in the state. */
static void error_no_resource(struct kiln_error *err, const json_t *resources, const char *address)
{
	const char **cands = NULL;
	const char *key, *best;
	json_t *v;
	size_t n = 0, cap = 0;

	kiln_error_set(err, "no resource %s in the state", address);
	json_object_foreach_const(resources, key, v)
	{
		*ARRAY_PUSH(cands, n, cap) = key;
	}
	best = str_closest(address, cands, n);
	if (best)
		kiln_error_hint(err, "did you mean %s?", best);
	free(cands);
}

json_t *state_resource_view(const json_t *doc, const char *address, const struct crypt_key *key,
			    bool reveal, struct kiln_error *err)
{
	struct kiln_error cause = {{0}};
	const json_t *resources = state_resources(doc), *res, *sens;
	json_t *copy = NULL, *view = NULL, *attrs;
	void *it;

	res = json_object_get(resources, address);
	if (!res) {
		error_no_resource(err, resources, address);
		return NULL;
	}
	if (resource_check(address, res, "state", err) < 0)
		return NULL;
	copy = json_deep_copy(res);
	attrs = json_object_get(copy, "attrs");
	sens = json_object_get(copy, "sensitive");
	for (it = json_object_iter(attrs); it; it = json_object_iter_next(attrs, it)) {
		const char *name = json_object_iter_key(it);
		json_t *v = json_object_iter_value(it), *opened;
		char *aad;

		/* A sealed value is a secret even if the list has lost its name. */
		if (!name_listed(sens, name) && !crypt_is_sealed(v))
			continue;
		if (!reveal) {
			json_object_iter_set_new(attrs, it, json_string(REDACTED));
			continue;
		}
		if (!crypt_is_sealed(v))
			continue;
		if (!key) {
			kiln_error_set(err, "%s/%s is sealed and no KILN_STATE_KEY is set", address,
				       name);
			kiln_error_hint(err, "set KILN_STATE_KEY or KILN_STATE_KEY_FILE to the key "
					     "the state was sealed with");
			goto out;
		}
		aad = xasprintf("%s/%s", address, name);
		opened = crypt_open(key, v, aad, &cause);
		free(aad);
		if (!opened) {
			error_wrap(err, &cause, "cannot open", address, name);
			goto out;
		}
		json_object_iter_set_new(attrs, it, opened);
	}
	view = copy;
	copy = NULL;
out:
	json_decref(copy);
	return view;
}
