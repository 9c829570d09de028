/*
 * engine.c - see engine.h. Loading and expanding a spec, refreshing live
 * state through the provider, and the engine's retries of PROV_RETRY ("not
 * yet") under each logical call's deadline (retry.h).
 */
#include "engine.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonc.h"
#include "log.h"
#include "validate.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *engine_spec_digest(const char *text, size_t len, const struct spec_options *opts)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	struct strbuf sb = {0};
	char **pairs = NULL;
	size_t n = opts ? opts->nvars : 0, k;

	if (!ctx)
		abort();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	EVP_DigestUpdate(ctx, text, len);
	/* --var values change what the spec means, so they are part of it. */
	if (n) {
		pairs = xcalloc(n, sizeof(*pairs));
		for (k = 0; k < n; k++)
			pairs[k] = xasprintf("%s=%s", opts->vars[k].name, opts->vars[k].value);
		qsort(pairs, n, sizeof(*pairs), cmp_str);
		for (k = 0; k < n; k++) {
			EVP_DigestUpdate(ctx, "\0", 1);
			EVP_DigestUpdate(ctx, pairs[k], strlen(pairs[k]));
			free(pairs[k]);
		}
		free(pairs);
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	sb_adds(&sb, "sha256:");
	for (i = 0; i < mdlen; i++)
		sb_addf(&sb, "%02x", md[i]);
	return sb_detach(&sb);
}

int engine_open(struct engine **out, const char *spec_path, const struct spec_options *opts,
		const char *workspace, struct diags *d, struct kiln_error *err)
{
	struct engine *e = xcalloc(1, sizeof(*e));
	char *text = NULL;
	size_t len = 0, i;
	int rc = -1;

	*out = NULL;
	/* Read once: the plan is bound to the very bytes it was made from. */
	if (spec_read_file(spec_path, &text, &len, d) != 0 ||
	    validate_load_buffer(&e->spec, spec_path, text, len, opts, d) != 0)
		goto out;
	e->spec_digest = engine_spec_digest(text, len, opts);
	e->spec_text = text;
	e->spec_len = len;
	text = NULL;
	e->prov = provider_find(e->spec->provider.name);
	if (!e->prov) {
		char *names;

		kiln_error_set(err, "%s: provider '%s' is not built into this kiln", spec_path,
			       e->spec->provider.name);
		names = provider_names_join("", ", ", " and ");
		kiln_error_hint(err, "kiln %s has the providers %s", KILN_VERSION, names);
		free(names);
		goto out;
	}
	if (e->prov->open(&e->ctx, e->spec, err) != 0)
		goto out;
	e->workspace = xstrdup(workspace);
	e->user_tags = json_object();
	for (i = 0; i < e->spec->ntags; i++)
		json_object_set_new(e->user_tags, e->spec->tags[i].key,
				    json_string(e->spec->tags[i].value));
	e->scope.cluster = e->spec->cluster;
	e->scope.workspace = e->workspace;
	e->scope.user_tags = e->user_tags;
	if (e->prov->expand(e->ctx, e->spec, &e->desired, err) != 0)
		goto out;
	engine_mark_created(e->prov, e->desired);
	rc = 0;
out:
	free(text);
	if (rc == 0)
		*out = e;
	else
		engine_free(e);
	return rc;
}

int engine_open_scope(struct engine **out, const struct provider *prov, const char *region,
		      const char *cluster, const char *workspace, struct kiln_error *err)
{
	struct engine *e = xcalloc(1, sizeof(*e));

	*out = NULL;
	e->spec = xcalloc(1, sizeof(*e->spec));
	e->spec->cluster = xstrdup(cluster);
	e->spec->provider.name = xstrdup(prov->name);
	e->spec->provider.region = region ? xstrdup(region) : NULL;
	e->prov = prov;
	e->workspace = xstrdup(workspace);
	e->user_tags = json_object();
	e->desired = json_object();
	e->scope.cluster = e->spec->cluster;
	e->scope.workspace = e->workspace;
	e->scope.user_tags = e->user_tags;
	if (prov->open(&e->ctx, e->spec, err) != 0) {
		engine_free(e);
		return -1;
	}
	*out = e;
	return 0;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	if (e->ctx)
		e->prov->close(e->ctx);
	spec_free(e->spec);
	json_decref(e->desired);
	json_decref(e->user_tags);
	free(e->spec_digest);
	free(e->spec_text);
	free(e->workspace);
	free(e);
}

const struct prov_type *engine_type(const struct engine *e, const json_t *resource)
{
	const char *t = json_string_value(json_object_get(resource, "type"));

	return t ? provider_type(e->prov, t) : NULL;
}

json_t *engine_inputs(const struct prov_type *t, const json_t *attrs)
{
	json_t *out = json_object(), *v;
	size_t i;

	for (i = 0; i < t->nattrs; i++) {
		v = json_object_get(attrs, t->attrs[i].name);
		json_object_set(out, t->attrs[i].name, v ? v : json_null());
	}
	return out;
}

static int cmp_live_id(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "id"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "id"));

	return strcmp(x ? x : "", y ? y : "");
}

/* Sort each address's live objects by id, so duplicates are reported the same way each run. */
static void sort_live(json_t *live)
{
	const char *addr;
	json_t *arr;

	json_object_foreach(live, addr, arr)
	{
		if (json_array_size(arr) > 1)
			provider_json_sort(arr, cmp_live_id);
	}
}

static bool live_has_id(const json_t *arr, const char *id)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
	{
		const char *x = json_string_value(json_object_get(v, "id"));
		if (x && strcmp(x, id) == 0)
			return true;
	}
	return false;
}

static void live_add(json_t *live, const char *addr, json_t *obj)
{
	json_t *arr = json_object_get(live, addr);

	if (!arr) {
		arr = json_array();
		json_object_set_new(live, addr, arr);
	}
	json_array_append(arr, obj);
}

/* Being deleted counts as gone: it will be, whatever the plan says. */
static bool going(const json_t *live)
{
	const char *s = json_string_value(json_object_get(live, "status"));

	return s && strcmp(s, "deleting") == 0;
}

/* One type's pages, listed on a thread of its own: types are independent. */
struct lister {
	struct engine *e;
	const struct prov_type *t;
	const json_t *shared; /* the recorded resources to share attributes with, or NULL */
	json_t *items;	      /* every live object of the type */
	unsigned long calls;
	int rc;
	struct kiln_error err;
};

/*
 * Live attributes equal to the recorded ones become the recorded object.
 * Other threads read recorded too: lookups and json_equal only read, and
 * jansson counts references atomically.
 */
static void share_recorded(json_t *items, const json_t *recorded)
{
	json_t *item, *r, *attrs;
	size_t i;

	json_array_foreach(items, i, item)
	{
		const char *addr = provider_live_address(item);

		r = addr ? json_object_get(recorded, addr) : NULL;
		attrs = json_object_get(r, "attrs");
		if (attrs && json_equal(json_object_get(r, "id"), json_object_get(item, "id")) &&
		    json_equal(attrs, json_object_get(item, "attrs")))
			json_object_set(item, "attrs", attrs);
	}
}

static void *list_type(void *arg)
{
	struct lister *l = arg;
	char *page = NULL, *next = NULL;
	json_t *page_items;

	l->items = json_array();
	do {
		page_items = NULL;
		ENGINE_CALL(l->rc, &l->err,
			    l->t->list(l->e->ctx, &l->e->scope, page, &page_items, &next, &l->err));
		l->calls++;
		free(page);
		page = next;
		next = NULL;
		if (l->rc != PROV_OK)
			break;
		if (l->shared)
			share_recorded(page_items, l->shared);
		json_array_extend(l->items, page_items);
		json_decref(page_items);
	} while (page);
	free(page);
	return NULL;
}

/*
 * Whose a live object is. Ours: it carries our lineage, or it carries none
 * (made before lineages) and our state records its id at its address.
 * Anything else is another state's, or nobody's yet: never ours to change.
 */
static bool owned(const struct engine *e, const json_t *recorded, const char *addr,
		  const json_t *item)
{
	const char *lineage = provider_live_lineage(item);
	const char *id, *rid;

	if (lineage)
		return e->scope.lineage && strcmp(lineage, e->scope.lineage) == 0;
	id = json_string_value(json_object_get(item, "id"));
	rid = json_string_value(json_object_get(json_object_get(recorded, addr), "id"));
	return id && rid && strcmp(id, rid) == 0;
}

int engine_refresh(struct engine *e, const json_t *recorded, bool share, json_t **live,
		   json_t *foreign, struct refresh_stats *stats, struct kiln_error *err)
{
	size_t n = e->prov->ntypes, i, k;
	struct lister *ls = xcalloc(n + 1, sizeof(*ls));
	pthread_t *th = xcalloc(n + 1, sizeof(*th));
	bool *started = xcalloc(n + 1, sizeof(*started));
	json_t *out = json_object(), *item, *foreign_ids;
	const json_t *r;
	const char *addr;
	int rc = 0;

	memset(stats, 0, sizeof(*stats));
	*live = NULL;
	for (i = 0; i < n; i++) {
		ls[i].e = e;
		ls[i].t = &e->prov->types[i];
		ls[i].shared = share ? recorded : NULL;
		started[i] = pthread_create(&th[i], NULL, list_type, &ls[i]) == 0;
		if (!started[i])
			list_type(&ls[i]);
	}
	for (i = 0; i < n; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		stats->list_calls += ls[i].calls;
		if (ls[i].rc != PROV_OK && rc == 0) {
			*err = ls[i].err;
			rc = -1;
		}
		json_array_foreach(ls[i].items, k, item)
		{
			addr = provider_live_address(item);
			if (!addr || going(item))
				continue;
			if (!owned(e, recorded, addr, item)) {
				if (foreign)
					json_array_append(foreign, item);
				continue;
			}
			live_add(out, addr, item);
			stats->live++;
		}
		json_decref(ls[i].items);
	}
	free(ls);
	free(th);
	free(started);
	if (rc != 0) {
		json_decref(out);
		return -1;
	}
	/* The ids another state holds, once: a state taken over is thousands of them. */
	foreign_ids = json_object();
	json_array_foreach(foreign, k, item)
	{
		const char *id = json_string_value(json_object_get(item, "id"));

		if (id)
			json_object_set_new(foreign_ids, id, json_true());
	}
	/* What the lists did not return may have lost its tags: read it by id. */
	json_object_foreach_const(recorded, addr, r)
	{
		const char *id = json_string_value(json_object_get(r, "id"));
		const struct prov_type *t = engine_type(e, r);
		json_t *obj = NULL, *arr = json_object_get(out, addr);

		if (!id || !t || (arr && live_has_id(arr, id)) || json_object_get(foreign_ids, id))
			continue;
		ENGINE_CALL(rc, err, t->read(e->ctx, id, &obj, err));
		stats->read_calls++;
		if (rc == PROV_NOTFOUND || (rc == PROV_OK && going(obj))) {
			json_decref(obj);
			continue;
		}
		if (rc != PROV_OK) {
			json_decref(foreign_ids);
			json_decref(out);
			return -1;
		}
		/* Recorded here, but since tagged by another state: taken over. */
		if (provider_live_lineage(obj) && !owned(e, recorded, addr, obj)) {
			if (foreign)
				json_array_append(foreign, obj);
			json_decref(obj);
			continue;
		}
		live_add(out, addr, obj);
		json_decref(obj);
		stats->live++;
	}
	json_decref(foreign_ids);
	sort_live(out);
	*live = out;
	return 0;
}

/* The type of the resource at address in desired, else the address's TYPE part. */
static char *type_at(const json_t *desired, const char *address)
{
	const char *t =
	    json_string_value(json_object_get(json_object_get(desired, address), "type"));
	const char *dot = strchr(address, '.');

	if (t)
		return xstrdup(t);
	return dot ? xstrndup(address, (size_t)(dot - address)) : xstrdup(address);
}

void engine_mark_created(const struct provider *prov, json_t *desired)
{
	static const char *const keys[] = {"deps", "after"};
	const char *addr;
	json_t *r, *dep;
	size_t i, k;

	json_object_foreach(desired, addr, r)
	{
		const char *type = json_string_value(json_object_get(r, "type"));
		json_t *created = json_array();

		for (k = 0; k < 2; k++)
			json_array_foreach(json_object_get(r, keys[k]), i, dep)
			{
				char *dt = type_at(desired, json_string_value(dep));

				if (provider_need_created(prov, type, dt))
					json_array_append(created, dep);
				free(dt);
			}
		if (json_array_size(created))
			json_object_set(r, "created_only", created);
		else
			json_object_del(r, "created_only");
		json_decref(created);
	}
}

static bool is_created(const json_t *r, const char *dep)
{
	const json_t *a;
	size_t i;

	json_array_foreach(json_object_get(r, "created_only"), i,
			   a) if (strcmp(json_string_value(a), dep) == 0) return true;
	return false;
}

const char *engine_tier(const struct engine *e, const char *address)
{
	static const char *const names[] = {
	    [PROV_TIER_OTHER] = NULL,		  [PROV_TIER_NETWORK] = "network",
	    [PROV_TIER_COMPUTE] = "compute",	  [PROV_TIER_STORAGE] = "storage",
	    [PROV_TIER_IAM] = "iam",
	};
	const char *dot = strchr(address, '.');
	char *type;
	enum prov_tier t;

	if (!e->prov->type_tier || !dot)
		return NULL;
	type = xstrndup(address, (size_t)(dot - address));
	t = e->prov->type_tier(type);
	free(type);
	return (size_t)t < ARRAY_SIZE(names) ? names[t] : NULL;
}

struct graph *engine_graph(const json_t *resources, struct kiln_error *err)
{
	struct graph *g = graph_new();
	const char *addr;
	const json_t *r, *dep;
	size_t i, k;

	json_object_foreach_const(resources, addr, r) graph_add(g, addr);
	/* What each resource uses, and what it is only made after (provider.h). */
	json_object_foreach_const(resources, addr, r) for (k = 0; k < 2; k++)
	{
		json_array_foreach(json_object_get(r, k ? "after" : "deps"), i, dep)
		{
			const char *d = json_string_value(dep);

			/* A dependency outside the map is already in place (or gone): no edge. */
			if (!d || graph_find(g, d) == (size_t)-1)
				continue;
			if (is_created(r, d)) {
				graph_link_kind(g, graph_find(g, addr), graph_find(g, d),
						GRAPH_EDGE_CREATED);
				continue;
			}
			if (graph_depend(g, addr, d, err) != 0) {
				graph_free(g);
				return NULL;
			}
		}
	}
	if (graph_check(g, err) != 0) {
		graph_free(g);
		return NULL;
	}
	return g;
}

void engine_retry_gave_up(int rc, int attempts, struct kiln_error *err)
{
	size_t len = strlen(err->msg);

	if (rc == PROV_RETRY && attempts > 1)
		snprintf(err->msg + len, sizeof(err->msg) - len, " (gave up after %d attempts)",
			 attempts);
}

bool engine_call_retried(const struct prov_type *t, enum prov_verb verb)
{
	return !(verb == VERB_CREATE && t && t->purchase);
}

bool engine_retry_wait(int attempt)
{
	long max = log_env_long("KILN_RETRY_MAX", 8, 1000);
	long base = log_env_long("KILN_RETRY_BASE_MS", 100, 60000);

	if (attempt + 1 >= max)
		return false;
	log_debug("transient provider error; retry %d of %ld", attempt + 1, max - 1);
	return retry_pause(attempt, base, 5000);
}
