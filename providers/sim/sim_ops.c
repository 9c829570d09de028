/*
 * sim_ops.c - list, read, create, update, delete and wait, the same for every
 * sim resource type; what differs per type is in its struct sim_kind.
 *
 * Every operation is one API call (sim_call: latency, faults, counting).
 * Reads take no lock: files are replaced by rename, so a reader sees a whole
 * old or a whole new document. Every change takes the lock. Time moves on
 * its own: a pending resource whose delay has passed is ready, a deleting
 * one is gone, whoever looks first records it.
 */
#include "sim_int.h"
#include "jsonc.h"

#include <stdlib.h>
#include <string.h>

static bool utf8_ok(const char *s)
{
	size_t n = strlen(s);

	return str_utf8_invalid_offset((const unsigned char *)s, n) == n;
}

static int bad_id(const struct sim_kind *k, const char *id, struct kiln_error *err)
{
	kiln_error_set(err,
		       "sim: InvalidParameterValue (simulated): '%s' is not a %s id (%s- and %d "
		       "hex digits)",
		       id ? id : "(null)", k->type, k->prefix, SIM_ID_HEX);
	return PROV_ERROR;
}

static bool scope_ok(const struct prov_scope *scope, struct kiln_error *err)
{
	if (!scope || !scope->cluster || !*scope->cluster || !scope->workspace ||
	    !*scope->workspace || !utf8_ok(scope->cluster) || !utf8_ok(scope->workspace)) {
		kiln_error_set(err,
			       "sim: InvalidParameter (simulated): a scope needs a cluster and "
			       "a workspace name, in UTF-8");
		return false;
	}
	return true;
}

/* True when doc is in status and its deadline (when) has passed. */
static bool due(const json_t *doc, const char *status, const char *when, long long now)
{
	const char *s = sim_doc_str(doc, NULL, "status");
	const json_t *t = json_object_get(json_object_get(doc, "sim"), when);

	return s && strcmp(s, status) == 0 && (!json_is_integer(t) || json_integer_value(t) <= now);
}

static bool unsettled(const json_t *doc, long long now)
{
	return due(doc, "pending", "ready_at_ms", now) || due(doc, "deleting", "gone_at_ms", now);
}

/* The resource goes for good: files first, then whatever it held. */
static int remove_doc(struct prov_ctx *ctx, const struct sim_kind *k, json_t *doc,
		      struct kiln_error *err)
{
	int rc = sim_doc_forget(ctx, doc, err);

	if (rc == PROV_OK && k->removed)
		rc = k->removed(ctx, doc, err);
	return rc;
}

/* With the lock held: record what the clock says; PROV_NOTFOUND when it is gone. */
static int settle_locked(struct prov_ctx *ctx, const struct sim_kind *k, json_t **doc,
			 struct kiln_error *err)
{
	long long now = sim_now_ms();
	const char *id;
	int rc;

	if (due(*doc, "pending", "ready_at_ms", now)) {
		json_object_set_new(*doc, "status", json_string("ready"));
		return sim_doc_save(ctx, *doc, err);
	}
	if (!due(*doc, "deleting", "gone_at_ms", now))
		return PROV_OK;
	rc = remove_doc(ctx, k, *doc, err);
	if (rc == PROV_OK) {
		id = sim_doc_str(*doc, NULL, "id");
		kiln_error_set(err, "sim: NotFound (simulated): there is no %s with id %s", k->type,
			       id);
		rc = PROV_NOTFOUND;
	}
	json_decref(*doc);
	*doc = NULL;
	return rc;
}

/* The document of id as of now, settling it (under the lock) when its time has come. */
static int doc_current(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t **out,
		       struct kiln_error *err)
{
	struct sim_lock lk;
	json_t *doc;
	int rc = sim_doc_load(ctx, k, id, &doc, err);

	*out = NULL;
	if (rc != PROV_OK)
		return rc;
	if (!unsettled(doc, sim_now_ms())) {
		*out = doc;
		return PROV_OK;
	}
	json_decref(doc);
	if (sim_lock(ctx, &lk, err) != PROV_OK)
		return PROV_ERROR;
	rc = sim_doc_load(ctx, k, id, &doc, err);
	if (rc == PROV_OK)
		rc = settle_locked(ctx, k, &doc, err);
	sim_unlock(&lk);
	*out = doc;
	return rc;
}

static bool in_scope(const json_t *doc, const char *cluster, const char *workspace)
{
	const char *c = sim_doc_str(doc, "tags", PROV_TAG_CLUSTER);
	const char *w = sim_doc_str(doc, "tags", PROV_TAG_WORKSPACE);

	return c && w && strcmp(c, cluster) == 0 && strcmp(w, workspace) == 0;
}

/*
 * The live form of the current doc of each id that keep accepts, in order;
 * an id gone meanwhile is skipped. *out is a new array.
 */
static int live_docs(struct prov_ctx *ctx, const struct sim_kind *k, char **ids, size_t n,
		     bool (*keep)(const json_t *doc, const void *arg), const void *arg,
		     json_t **out, struct kiln_error *err)
{
	json_t *arr = json_array(), *doc;
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < n; i++) {
		rc = doc_current(ctx, k, ids[i], &doc, err);
		if (rc == PROV_NOTFOUND)
			continue;
		if (rc != PROV_OK) {
			json_decref(arr);
			return rc;
		}
		if (keep(doc, arg))
			json_array_append_new(arr, sim_doc_live(doc));
		json_decref(doc);
	}
	*out = arr;
	return PROV_OK;
}

static bool keep_in_scope(const json_t *doc, const void *arg)
{
	const struct prov_scope *scope = arg;

	return in_scope(doc, scope->cluster, scope->workspace);
}

/* Both scope tags (arg points to false), or no kiln:cluster tag (to true). */
static bool keep_any(const json_t *doc, const void *arg)
{
	bool tagged = sim_doc_str(doc, "tags", PROV_TAG_CLUSTER) != NULL;

	return *(const bool *)arg ? !tagged
				  : tagged && sim_doc_str(doc, "tags", PROV_TAG_WORKSPACE) != NULL;
}

/*
 * Every resource of a kind that carries both scope tags (untagged false),
 * or that carries no kiln:cluster tag (untagged true), as one page.
 */
static int list_any(struct prov_ctx *ctx, const struct sim_kind *k, bool untagged, json_t **out,
		    struct kiln_error *err)
{
	char **ids;
	size_t n;
	int rc;

	if (sim_all_ids(ctx, k, &ids, &n, err) != PROV_OK)
		return PROV_ERROR;
	rc = live_docs(ctx, k, ids, n, keep_any, &untagged, out, err);
	sim_ids_free(ids);
	return rc;
}

int sim_list_unmanaged(struct prov_ctx *ctx, json_t **out, struct kiln_error *err)
{
	const struct sim_kind *k = sim_kind_find("sim_node_group");
	const struct catalog_type *t;
	json_t *live;
	size_t i;

	*out = NULL;
	if (sim_call(ctx, false) != SIM_FAULT_NONE)
		return sim_retry(err);
	if (list_any(ctx, k, true, out, err) != PROV_OK)
		return PROV_ERROR;
	/* The catalog's GPU and count beside the attrs, as provider.h says. */
	json_array_foreach(*out, i, live)
	{
		json_t *attrs = json_object_get(live, "attrs");

		t = catalog_find(&catalog_aws,
				 json_string_value(json_object_get(attrs, "instance_type")));
		if (t && t->gpu && !json_object_get(attrs, "gpu"))
			json_object_set_new(attrs, "gpu", json_string(t->gpu));
		if (t && !json_object_get(attrs, "gpus"))
			json_object_set_new(attrs, "gpus", json_integer(t->gpus));
	}
	return PROV_OK;
}

int sim_op_list(struct prov_ctx *ctx, const struct sim_kind *k, const struct prov_scope *scope,
		const char *page, json_t **out, char **next, struct kiln_error *err)
{
	size_t n;
	bool more;
	char **ids;
	int rc;

	*out = NULL;
	*next = NULL;
	if (sim_call(ctx, false) != SIM_FAULT_NONE)
		return sim_retry(err);
	if (scope && !scope->cluster && !scope->workspace)
		return list_any(ctx, k, false, out, err);
	if (!scope_ok(scope, err))
		return PROV_ERROR;
	if (page && *page && !sim_id_ok(page, k->prefix)) {
		kiln_error_set(err,
			       "sim: InvalidParameterValue (simulated): '%s' is not a page "
			       "token this sim gave",
			       page);
		return PROV_ERROR;
	}
	/* The ids after the token (the last id of the page before), in order. */
	if (sim_index_page(ctx, scope->cluster, scope->workspace, k, page && *page ? page : NULL,
			   (size_t)ctx->page_size, &ids, &n, &more, err) != PROV_OK)
		return PROV_ERROR;
	rc = live_docs(ctx, k, ids, n, keep_in_scope, scope, out, err);
	if (rc == PROV_OK && more && n > 0)
		*next = xstrdup(ids[n - 1]);
	sim_ids_free(ids);
	return rc;
}

int sim_op_read(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t **out,
		struct kiln_error *err)
{
	json_t *doc;
	int rc;

	*out = NULL;
	if (sim_call(ctx, false) != SIM_FAULT_NONE)
		return sim_retry(err);
	if (!sim_id_ok(id, k->prefix))
		return bad_id(k, id, err);
	rc = doc_current(ctx, k, id, &doc, err);
	if (rc == PROV_OK)
		rc = sim_doc_check_indexed(ctx, doc, err);
	if (rc == PROV_OK)
		*out = sim_doc_live(doc);
	json_decref(doc);
	return rc;
}

/* The inputs of a create: the type's attributes, nothing else. */
static json_t *create_inputs(const struct sim_kind *k, const json_t *attrs, struct kiln_error *err)
{
	json_t *in = json_object(), *v;
	const char *key;
	size_t i;

	json_object_foreach_const(attrs, key, v)
	{
		/*
		 * A node group's user data document is a parameter of the launch,
		 * as RunInstances' UserData is, not an input: its digest (user_data) is.
		 */
		if (strcmp(k->type, "sim_node_group") == 0 && strcmp(key, "user_data_text") == 0)
			continue;
		for (i = 0; i < k->nattrs && strcmp(k->attrs[i].name, key) != 0; i++)
			;
		if (i == k->nattrs) {
			kiln_error_set(err,
				       "sim: InvalidParameter (simulated): %s has no input '%s'",
				       k->type, key);
			json_decref(in);
			return NULL;
		}
	}
	for (i = 0; i < k->nattrs; i++) {
		v = json_object_get(attrs, k->attrs[i].name);
		json_object_set_new(in, k->attrs[i].name, v ? json_deep_copy(v) : json_null());
	}
	return in;
}

static json_t *create_tags(const struct prov_scope *scope, const char *address,
			   struct kiln_error *err)
{
	json_t *v;
	const char *key;

	json_object_foreach(scope->user_tags, key, v)
	{
		if (!json_is_string(v)) {
			kiln_error_set(
			    err, "sim: InvalidParameter (simulated): tag '%s' must be a string",
			    key);
			return NULL;
		}
	}
	return provider_scope_tags(scope, address);
}

/* A create whose token was seen: the same resource again, unless the token was reused. */
static int create_again(struct prov_ctx *ctx, const struct sim_kind *k,
			const struct prov_scope *scope, const struct prov_create *op,
			const char *id, json_t **out, struct kiln_error *err)
{
	const char *addr, *tok, *cluster, *workspace;
	json_t *doc;
	int rc;

	if (!sim_id_ok(id, k->prefix))
		goto mismatch;
	rc = sim_doc_load(ctx, k, id, &doc, err);
	if (rc != PROV_OK)
		return rc;
	addr = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
	tok = sim_doc_str(doc, "sim", "token");
	cluster = sim_doc_str(doc, "sim", "cluster");
	workspace = sim_doc_str(doc, "sim", "workspace");
	if (!tok || strcmp(tok, op->token) != 0) {
		json_decref(doc);
		return PROV_NOTFOUND; /* another token with the same hash: not ours */
	}
	if (!addr || strcmp(addr, op->address) != 0 || !cluster ||
	    strcmp(cluster, scope->cluster) != 0 || !workspace ||
	    strcmp(workspace, scope->workspace) != 0) {
		json_decref(doc);
		goto mismatch;
	}
	*out = sim_doc_live(doc);
	json_decref(doc);
	return PROV_OK;
mismatch:
	kiln_error_set(err,
		       "sim: IdempotentParameterMismatch (simulated): the token of %s was already "
		       "used to create %s",
		       op->address, id);
	kiln_error_hint(err, "an idempotency token names one create: use a new token for "
			     "another resource or scope");
	return PROV_ERROR;
}

int sim_op_create(struct prov_ctx *ctx, const struct sim_kind *k, const struct prov_scope *scope,
		  const struct prov_create *op, json_t **out, struct kiln_error *err)
{
	enum sim_fault fault = sim_call(ctx, true);
	const char *tok = op && op->token && *op->token ? op->token : NULL;
	json_t *inputs = NULL, *tags = NULL, *doc = NULL;
	long call = sim_create_ms(ctx, k), delay = sim_ready_ms(ctx, k);
	long long now;
	char id[SIM_ID_MAX], seen[SIM_ID_MAX];
	struct sim_lock lk;
	int rc = PROV_ERROR;

	*out = NULL;
	if (fault == SIM_FAULT_BEFORE)
		return sim_retry(err);
	/* The profile's create call: it answers this much later, pending from then on. */
	sim_sleep_ms(call);
	now = sim_now_ms();
	if (!scope_ok(scope, err))
		return PROV_ERROR;
	if (!op || !op->address || !op->name || !json_is_object(op->attrs) ||
	    !utf8_ok(op->address) || !utf8_ok(op->name) || (tok && !utf8_ok(tok))) {
		kiln_error_set(err, "sim: InvalidParameter (simulated): a create needs an address, "
				    "a name and an attribute object, in UTF-8");
		return PROV_ERROR;
	}
	inputs = create_inputs(k, op->attrs, err);
	if (!inputs)
		return PROV_ERROR;
	tags = create_tags(scope, op->address, err);
	if (!tags) {
		json_decref(inputs);
		return PROV_ERROR;
	}
	if (sim_lock(ctx, &lk, err) != PROV_OK) {
		json_decref(inputs);
		json_decref(tags);
		return PROV_ERROR;
	}
	if (tok && sim_token_find(ctx, tok, seen) == PROV_OK) {
		rc = create_again(ctx, k, scope, op, seen, out, err);
		if (rc != PROV_NOTFOUND) {
			json_decref(inputs);
			json_decref(tags);
			goto unlock;
		}
	}
	sim_new_id(k->prefix, id);
	doc =
	    json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:s, s:o, s:I, s:I, s:I}}", "type",
		      k->type, "id", id, "status", delay > 0 ? "pending" : "ready", "attrs", inputs,
		      "tags", tags, "sim", "cluster", scope->cluster, "workspace", scope->workspace,
		      "token", tok ? json_string(tok) : json_null(), "created_ms", (json_int_t)now,
		      "ready_at_ms", (json_int_t)(now + delay), "call_ms", (json_int_t)call);
	rc = k->created ? k->created(ctx, scope, doc, err) : PROV_OK;
	/* Marker, token, address, then the document: a crash in between leaves nothing listed. */
	if (rc == PROV_OK)
		rc = sim_doc_index(ctx, doc, err);
	if (rc == PROV_OK)
		rc = sim_doc_save(ctx, doc, err);
	if (rc == PROV_OK)
		*out = sim_doc_live(doc);
	json_decref(doc);
unlock:
	sim_unlock(&lk);
	if (rc == PROV_OK && fault == SIM_FAULT_AFTER) {
		json_decref(*out);
		*out = NULL;
		return sim_retry(err);
	}
	return rc;
}

static int check_changes(const struct sim_kind *k, const json_t *attrs, const char *const *changed,
			 size_t n, struct kiln_error *err)
{
	size_t i, j;

	if (!json_is_object(attrs)) {
		kiln_error_set(err, "sim: InvalidParameter (simulated): an update needs an "
				    "attribute object");
		return PROV_ERROR;
	}
	for (i = 0; i < n; i++) {
		const struct prov_attr *a = NULL;

		for (j = 0; j < k->nattrs && !a; j++)
			if (changed[i] && strcmp(k->attrs[j].name, changed[i]) == 0)
				a = &k->attrs[j];
		if (!a) {
			kiln_error_set(err,
				       "sim: InvalidParameter (simulated): %s has no input '%s'",
				       k->type, changed[i] ? changed[i] : "(null)");
			return PROV_ERROR;
		}
		if (a->policy == POLICY_REPLACE) {
			kiln_error_set(err,
				       "sim: InvalidParameterCombination (simulated): %s.%s cannot "
				       "change in place: %s",
				       k->type, a->name, a->why);
			return PROV_ERROR;
		}
	}
	return PROV_OK;
}

int sim_op_update(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, json_t *attrs,
		  const char *const *changed, size_t nchanged, json_t **out, struct kiln_error *err)
{
	json_t *doc = NULL, *dattrs, *before = NULL;
	struct sim_lock lk;
	long delay = sim_ready_ms(ctx, k);
	size_t i;
	int rc;

	*out = NULL;
	if (sim_call(ctx, false) != SIM_FAULT_NONE)
		return sim_retry(err);
	if (!sim_id_ok(id, k->prefix))
		return bad_id(k, id, err);
	if (check_changes(k, attrs, changed, nchanged, err) != PROV_OK)
		return PROV_ERROR;
	if (sim_lock(ctx, &lk, err) != PROV_OK)
		return PROV_ERROR;
	rc = sim_doc_load(ctx, k, id, &doc, err);
	if (rc == PROV_OK)
		rc = settle_locked(ctx, k, &doc, err);
	if (rc != PROV_OK)
		goto out;
	if (strcmp(sim_doc_str(doc, NULL, "status"), "deleting") == 0) {
		kiln_error_set(err, "sim: IncorrectState (simulated): %s is being deleted", id);
		rc = PROV_ERROR;
		goto out;
	}
	dattrs = json_object_get(doc, "attrs");
	before = json_deep_copy(dattrs);
	/* An input the update gives no value for is one the spec no longer sets: unset. */
	for (i = 0; i < nchanged; i++)
		if (json_object_get(attrs, changed[i]))
			json_object_set_new(dattrs, changed[i],
					    json_deep_copy(json_object_get(attrs, changed[i])));
		else
			json_object_del(dattrs, changed[i]);
	rc =
	    k->updated && nchanged ? k->updated(ctx, doc, before, changed, nchanged, err) : PROV_OK;
	if (rc != PROV_OK)
		goto out;
	if (delay > 0 && nchanged) {
		json_object_set_new(doc, "status", json_string("pending"));
		json_object_set_new(json_object_get(doc, "sim"), "ready_at_ms",
				    json_integer(sim_now_ms() + delay));
	}
	rc = sim_doc_save(ctx, doc, err);
	if (rc == PROV_OK)
		*out = sim_doc_live(doc);
out:
	sim_unlock(&lk);
	json_decref(before);
	json_decref(doc);
	return rc;
}

/*
 * One call that changes the document of id: the id checked, the lock taken
 * (*locked says so: release it with sim_unlock, and *doc with json_decref,
 * whatever the result), the document loaded and settled.
 */
static int doc_change(struct prov_ctx *ctx, const struct sim_kind *k, const char *id, bool create,
		      struct sim_lock *lk, bool *locked, json_t **doc, struct kiln_error *err)
{
	int rc;

	*doc = NULL;
	*locked = false;
	if (sim_call(ctx, create) != SIM_FAULT_NONE)
		return sim_retry(err);
	if (!sim_id_ok(id, k->prefix))
		return bad_id(k, id, err);
	if (sim_lock(ctx, lk, err) != PROV_OK)
		return PROV_ERROR;
	*locked = true;
	rc = sim_doc_load(ctx, k, id, doc, err);
	if (rc == PROV_OK)
		rc = settle_locked(ctx, k, doc, err);
	return rc;
}

int sim_op_replace_nodes(struct prov_ctx *ctx, const struct sim_kind *k, const char *id,
			 const char *const *nodes, size_t n, json_t **out, struct kiln_error *err)
{
	json_t *doc = NULL;
	struct sim_lock lk;
	bool locked;
	int rc;

	*out = NULL;
	rc = doc_change(ctx, k, id, true, &lk, &locked, &doc, err);
	if (rc == PROV_OK)
		rc = sim_nodes_replaced(ctx, doc, nodes, n, err);
	if (rc == PROV_OK)
		rc = sim_doc_save(ctx, doc, err);
	if (rc == PROV_OK)
		*out = sim_doc_live(doc);
	if (locked)
		sim_unlock(&lk);
	json_decref(doc);
	return rc;
}

int sim_op_delete(struct prov_ctx *ctx, const struct sim_kind *k, const char *id,
		  struct kiln_error *err)
{
	json_t *doc = NULL;
	struct sim_lock lk;
	long delay = sim_delete_ms(ctx, k);
	bool locked;
	int rc;

	rc = doc_change(ctx, k, id, false, &lk, &locked, &doc, err);
	if (rc != PROV_OK || strcmp(sim_doc_str(doc, NULL, "status"), "deleting") == 0)
		goto out;
	if (delay == 0) {
		rc = remove_doc(ctx, k, doc, err);
		goto out;
	}
	json_object_set_new(doc, "status", json_string("deleting"));
	json_object_set_new(json_object_get(doc, "sim"), "gone_at_ms",
			    json_integer(sim_now_ms() + delay));
	rc = sim_doc_save(ctx, doc, err);
out:
	if (locked)
		sim_unlock(&lk);
	json_decref(doc);
	return rc;
}

/*
 * What a tagging call does: edit(tags, arg) on resource id's tags and
 * nothing else of it; *out (may be NULL) its live object after.
 */
static int retag(struct prov_ctx *ctx, const struct sim_kind *k, const char *id,
		 void (*edit)(json_t *tags, const void *arg), const void *arg, json_t **out,
		 struct kiln_error *err)
{
	json_t *doc = NULL;
	struct sim_lock lk;
	int rc;

	if (sim_call(ctx, false) != SIM_FAULT_NONE)
		return sim_retry(err);
	if (!sim_id_ok(id, k->prefix))
		return bad_id(k, id, err);
	if (sim_lock(ctx, &lk, err) != PROV_OK)
		return PROV_ERROR;
	rc = sim_doc_load(ctx, k, id, &doc, err);
	if (rc == PROV_OK) {
		edit(json_object_get(doc, "tags"), arg);
		rc = sim_doc_save(ctx, doc, err);
	}
	if (rc == PROV_OK && out)
		*out = sim_doc_live(doc);
	sim_unlock(&lk);
	json_decref(doc);
	return rc;
}

/* A claim's tags: the scope's lineage and owner. */
static void claim_edit(json_t *tags, const void *arg)
{
	const struct prov_scope *scope = arg;

	json_object_set_new(tags, PROV_TAG_LINEAGE, json_string(scope->lineage));
	if (scope->owner)
		json_object_set_new(tags, PROV_TAG_OWNER, json_string(scope->owner));
	else
		json_object_del(tags, PROV_TAG_OWNER);
}

int sim_claim(struct prov_ctx *ctx, const struct prov_scope *scope, const char *type,
	      const char *id, json_t **out, struct kiln_error *err)
{
	const struct sim_kind *k = sim_kind_find(type);

	*out = NULL;
	if (!k) {
		kiln_error_set(err, "sim: no resource type %s", type);
		return PROV_ERROR;
	}
	return retag(ctx, k, id, claim_edit, scope, out, err);
}

static void expires_edit(json_t *tags, const void *arg)
{
	json_object_set_new(tags, PROV_TAG_EXPIRES, json_string(arg));
}

int sim_tag_expiry(struct prov_ctx *ctx, const char *type, const char *id, const json_t *attrs,
		   const char *expires, struct kiln_error *err)
{
	const struct sim_kind *k = sim_kind_find(type);

	(void)attrs;
	/* Only the nodes read the tag: a node group's document holds them. */
	if (!k || strcmp(type, "sim_node_group") != 0)
		return PROV_OK;
	return retag(ctx, k, id, expires_edit, expires, NULL, err);
}

static void wait_one(struct prov_ctx *ctx, const struct sim_kind *k, enum prov_wait_for what,
		     struct prov_wait *w)
{
	json_t *doc = NULL;
	const char *status;
	int rc;

	if (!sim_id_ok(w->id, k->prefix)) {
		bad_id(k, w->id, &w->err);
		w->state = WAIT_FAILED;
		return;
	}
	rc = doc_current(ctx, k, w->id, &doc, &w->err);
	if (rc == PROV_NOTFOUND) {
		w->state = what == WAIT_GONE ? WAIT_DONE : WAIT_FAILED;
		return;
	}
	if (rc != PROV_OK) {
		w->state = WAIT_FAILED;
		return;
	}
	status = sim_doc_str(doc, NULL, "status");
	if (what == WAIT_READY && strcmp(status, "ready") == 0) {
		w->state = WAIT_DONE;
		w->live = sim_doc_live(doc);
	} else if (what == WAIT_READY && strcmp(status, "deleting") == 0) {
		kiln_error_set(&w->err, "sim: %s is being deleted; it will never be ready", w->id);
		w->state = WAIT_FAILED;
	} else if (what == WAIT_GONE && strcmp(status, "deleting") != 0) {
		kiln_error_set(&w->err, "sim: %s is %s, not being deleted; delete it first", w->id,
			       status);
		w->state = WAIT_FAILED;
	}
	json_decref(doc);
}

int sim_op_wait(struct prov_ctx *ctx, const struct sim_kind *k, enum prov_wait_for what,
		struct prov_wait *ids, size_t n, struct kiln_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		ids[i].state = WAIT_PENDING;
		ids[i].live = NULL;
		ids[i].err.msg[0] = ids[i].err.hint[0] = '\0';
	}
	if (sim_call(ctx, false) != SIM_FAULT_NONE)
		return sim_retry(err);
	for (i = 0; i < n; i++)
		wait_one(ctx, k, what, &ids[i]);
	return PROV_OK;
}

static bool is_address(const json_t *doc, const char *cluster, const char *workspace,
		       const char *address)
{
	const char *addr = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);

	return in_scope(doc, cluster, workspace) && addr && strcmp(addr, address) == 0 &&
	       strcmp(sim_doc_str(doc, NULL, "status"), "deleting") != 0;
}

/*
 * The address entry's resource, when the entry is there and still right: it
 * is marked in the scope, and its document has the address and is not being
 * deleted. Otherwise NULL, and the caller scans.
 */
json_t *sim_find_indexed(struct prov_ctx *ctx, const struct sim_kind *k, const char *cluster,
			 const char *workspace, const char *address)
{
	struct kiln_error ignored;
	char id[SIM_ID_MAX];
	json_t *doc = NULL;

	if (sim_address_find(ctx, cluster, workspace, address, id) != PROV_OK ||
	    !sim_id_ok(id, k->prefix) || !sim_index_has(ctx, cluster, workspace, k->type, id) ||
	    sim_doc_load(ctx, k, id, &doc, &ignored) != PROV_OK)
		return NULL;
	if (is_address(doc, cluster, workspace, address))
		return doc;
	json_decref(doc);
	return NULL;
}

int sim_find_planned(struct prov_ctx *ctx, const struct sim_kind *k, const char *cluster,
		     const char *workspace, const char *address, json_t **out,
		     struct kiln_error *err)
{
	struct kiln_error ignored;
	char id[SIM_ID_MAX], **ids;
	json_t *doc = NULL;
	size_t n, i;
	int rc = PROV_NOTFOUND;

	*out = NULL;
	if (sim_address_find(ctx, cluster, workspace, address, id) == PROV_OK &&
	    sim_id_ok(id, k->prefix) && sim_doc_load(ctx, k, id, &doc, &ignored) == PROV_OK) {
		/* Its marker may be missing (a damaged directory): the refresh says so. */
		if (is_address(doc, cluster, workspace, address)) {
			*out = doc;
			return PROV_OK;
		}
		json_decref(doc);
	}
	/* The entry is missing or stale: the scope's documents no entry names, read only. */
	if (sim_index_unnamed(ctx, cluster, workspace, k, address, &ids, &n, err) != PROV_OK)
		return PROV_ERROR;
	for (i = 0; i < n && rc == PROV_NOTFOUND; i++) {
		if (sim_doc_load(ctx, k, ids[i], &doc, &ignored) != PROV_OK)
			continue;
		if (is_address(doc, cluster, workspace, address)) {
			*out = doc;
			rc = PROV_OK;
		} else {
			json_decref(doc);
		}
	}
	sim_ids_free(ids);
	return rc;
}

/*
 * Called with the lock held (from a kind's created or updated). The address
 * entry answers in O(1). When it is missing or stale, the documents of the
 * kind in the scope that no entry names are read, in id order, as the whole
 * scope was before the entries: in a directory this sim wrote, none or a few;
 * in one an older sim wrote, all of them, once, since each one read gets its
 * entry (and the one found has its entry rewritten).
 */
int sim_find_address(struct prov_ctx *ctx, const struct sim_kind *k, const char *cluster,
		     const char *workspace, const char *address, json_t **out,
		     struct kiln_error *err)
{
	struct kiln_error ignored;
	char **ids;
	size_t n, i;
	int rc = PROV_NOTFOUND;

	*out = sim_find_indexed(ctx, k, cluster, workspace, address);
	if (*out)
		return PROV_OK;
	if (sim_index_unnamed(ctx, cluster, workspace, k, address, &ids, &n, err) != PROV_OK)
		return PROV_ERROR;
	for (i = 0; i < n; i++) {
		json_t *doc;
		const char *addr;
		int r = sim_doc_load(ctx, k, ids[i], &doc, rc == PROV_OK ? &ignored : err);

		if (r == PROV_NOTFOUND || (r != PROV_OK && rc == PROV_OK))
			continue;
		if (r != PROV_OK) {
			rc = r;
			break;
		}
		addr = sim_doc_str(doc, "tags", PROV_TAG_ADDRESS);
		if (rc != PROV_OK && is_address(doc, cluster, workspace, address)) {
			*out = doc;
			rc = PROV_OK;
			sim_address_repair(ctx, cluster, workspace, k->type, ids[i], address, true);
			continue;
		}
		if (addr && in_scope(doc, cluster, workspace) &&
		    strcmp(sim_doc_str(doc, NULL, "status"), "deleting") != 0)
			sim_address_repair(ctx, cluster, workspace, k->type, ids[i], addr, false);
		json_decref(doc);
	}
	sim_ids_free(ids);
	if (rc == PROV_NOTFOUND)
		kiln_error_set(err, "sim: NoSuchEntity (simulated): %s does not exist in %s/%s",
			       address, cluster, workspace);
	return rc;
}
