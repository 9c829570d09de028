/*
 * runrec.c - the run record and the runs ref (runrec.h).
 *
 * It owns the record's JSON form (written canonical, read as hostile),
 * its digest and the one file on the runs ref; it does not start, watch
 * or cost runs (runop.c does).
 */
#include "runrec.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "jsonc.h"
#include "lineage.h"
#include "jsonr.h"
#include "jsonw.h"
#include "timefmt.h"
#include "util.h"

#define RUNS_MAX_BYTES (64u << 20)
#define SAVE_TRIES 8

static const char *const state_names[] = {
    [RUNREC_SUBMITTED] = "submitted", [RUNREC_RUNNING] = "running",
    [RUNREC_COMPLETED] = "completed", [RUNREC_FAILED] = "failed",
    [RUNREC_CANCELLED] = "cancelled",
};

const char *runrec_state_name(enum runrec_state s)
{
	return (size_t)s < ARRAY_SIZE(state_names) ? state_names[s] : "unknown";
}

int runrec_state_parse(const char *word, enum runrec_state *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(state_names); i++)
		if (word && strcmp(word, state_names[i]) == 0) {
			*out = (enum runrec_state)i;
			return 0;
		}
	return -1;
}

bool runrec_state_ended(enum runrec_state s)
{
	return s == RUNREC_COMPLETED || s == RUNREC_FAILED || s == RUNREC_CANCELLED;
}

void runrec_new_id(char id[16])
{
	char u[37];

	util_uuid_v4(u);
	snprintf(id, 16, RUNREC_ID_PREFIX "%.8s", u);
}

bool runrec_id_ok(const char *s)
{
	if (!s || strlen(s) != 10 || strncmp(s, RUNREC_ID_PREFIX, 2) != 0)
		return false;
	for (size_t i = 2; i < 10; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

static void lineage_release(struct runrec_lineage *l)
{
	free(l->code_commit);
	free(l->diff_digest);
	for (size_t i = 0; i < l->ndata; i++) {
		free(l->data[i].store);
		free(l->data[i].prefix);
		free(l->data[i].manifest_digest);
	}
	free(l->data);
	free(l->spec_digest);
	free(l->state_commit);
	free(l->image);
	for (size_t i = 0; i < l->ntypes; i++)
		free(l->instance_types[i]);
	free(l->instance_types);
	json_decref(l->workload);
}

void runrec_release(struct runrec *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->workspace);
	free(r->cluster);
	free(r->provider);
	free(r->group);
	free(r->scheduler);
	free(r->job_id);
	free(r->gpu_model);
	free(r->author);
	free(r->entry.kind);
	free(r->entry.name);
	free(r->entry.digest);
	lineage_release(&r->lineage);
	free(r->edited_why);
	free(r->digest);
	memset(r, 0, sizeof(*r));
}

void runrec_list_release(struct runrec_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		runrec_release(&l->runs[i]);
	free(l->runs);
	memset(l, 0, sizeof(*l));
}

/* ---- JSON ---- */

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *time_or_null(int64_t t)
{
	char buf[21];

	return t ? json_string(timefmt_time_format_rfc3339(t, buf)) : json_null();
}

static json_t *lineage_json(const struct runrec_lineage *l)
{
	json_t *data = json_array(), *types = json_array();

	for (size_t i = 0; i < l->ndata; i++)
		json_array_append_new(
		    data, json_pack("{s:s, s:s, s:I, s:I, s:s}", "store", l->data[i].store,
				    "prefix", l->data[i].prefix, "objects",
				    (json_int_t)l->data[i].objects, "bytes",
				    (json_int_t)l->data[i].bytes, "manifest_digest",
				    l->data[i].manifest_digest));
	for (size_t i = 0; i < l->ntypes; i++)
		json_array_append_new(types, json_string(l->instance_types[i]));
	return json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:O?}", "code_commit",
			 str_or_null(l->code_commit), "dirty", l->dirty, "diff_digest",
			 str_or_null(l->diff_digest), "data", data, "spec_digest",
			 str_or_null(l->spec_digest), "state_commit", str_or_null(l->state_commit),
			 "image", str_or_null(l->image), "instance_types", types, "nodes", l->nodes,
			 "workload", l->workload);
}

/* The record without its digest or what reading it found: what the digest covers. */
static json_t *record_body(const struct runrec *r)
{
	json_t *j = json_object();

	json_object_set_new(j, "id", json_string(r->id));
	json_object_set_new(j, "name", str_or_null(r->name));
	json_object_set_new(j, "workspace", str_or_null(r->workspace));
	json_object_set_new(j, "cluster", str_or_null(r->cluster));
	json_object_set_new(j, "provider", str_or_null(r->provider));
	json_object_set_new(j, "group", str_or_null(r->group));
	json_object_set_new(j, "simulated", json_boolean(r->simulated));
	json_object_set_new(j, "scheduler", str_or_null(r->scheduler));
	json_object_set_new(j, "job_id", str_or_null(r->job_id));
	json_object_set_new(j, "state", json_string(runrec_state_name(r->state)));
	json_object_set_new(j, "nodes", json_integer(r->nodes));
	json_object_set_new(j, "gpus", json_integer(r->gpus));
	json_object_set_new(j, "gpu_model", str_or_null(r->gpu_model));
	json_object_set_new(j, "author", str_or_null(r->author));
	json_object_set_new(j, "created", time_or_null(r->created));
	json_object_set_new(j, "started", time_or_null(r->started));
	json_object_set_new(j, "ended", time_or_null(r->ended));
	json_object_set_new(j, "exit_status",
			    r->has_exit ? json_integer(r->exit_status) : json_null());
	json_object_set_new(j, "entry",
			    json_pack("{s:o, s:o, s:i, s:o}", "kind", str_or_null(r->entry.kind),
				      "name", str_or_null(r->entry.name), "args", r->entry.nargs,
				      "digest", str_or_null(r->entry.digest)));
	if (r->simulated)
		json_object_set_new(
		    j, "model",
		    json_pack("{s:I, s:o}", "seconds", (json_int_t)r->model_seconds,
			      "tokens_per_second",
			      r->model_tokens_per_s >= 0 ? json_real(r->model_tokens_per_s)
						       : json_null()));
	json_object_set_new(j, "tokens", r->tokens >= 0 ? json_real(r->tokens) : json_null());
	json_object_set_new(j, "lineage", lineage_json(&r->lineage));
	return j;
}

char *runrec_digest(const struct runrec *r)
{
	json_t *body = record_body(r);
	size_t len = 0;
	char *text = jsonw_dumps(body, JSON_COMPACT | JSON_SORT_KEYS, &len);
	char *d = lineage_digest(text, len);

	free(text);
	json_decref(body);
	return d;
}

json_t *runrec_json(const struct runrec *r, bool for_storage)
{
	json_t *j = record_body(r);

	if (for_storage) {
		char *d = r->edited && r->digest ? xstrdup(r->digest) : runrec_digest(r);

		json_object_set_new(j, "record_digest", json_string(d));
		free(d);
		return j;
	}
	json_object_set_new(j, "edited", json_boolean(r->edited));
	if (r->edited)
		json_object_set_new(j, "edited_why", str_or_null(r->edited_why));
	return j;
}

/* ---- reading, as hostile input ---- */

struct rd {
	const json_t *j;
	const char *what; /* "run r-1234abcd" */
	struct kiln_error *err;
	int bad;
};

static const json_t *field(struct rd *d, const json_t *o, const char *key, json_type want,
			   bool nullable)
{
	const json_t *v = json_object_get(o, key);

	if (d->bad)
		return NULL;
	if ((!v || json_is_null(v)) && nullable)
		return NULL;
	if (!v || json_typeof(v) != want) {
		kiln_error_set(d->err, "%s: '%s' is %s, not %s", d->what, key,
			       v ? jsonr_kind(v) : "missing",
			       want == JSON_STRING    ? "a string"
			       : want == JSON_INTEGER ? "an integer"
			       : want == JSON_OBJECT  ? "an object"
						      : "an array");
		d->bad = 1;
		return NULL;
	}
	return v;
}

static char *get_str(struct rd *d, const json_t *o, const char *key, bool nullable)
{
	const json_t *v = field(d, o, key, JSON_STRING, nullable);

	return v ? xstrdup(json_string_value(v)) : NULL;
}

static int64_t get_int(struct rd *d, const json_t *o, const char *key)
{
	const json_t *v = field(d, o, key, JSON_INTEGER, false);

	return v ? json_integer_value(v) : 0;
}

static double get_num(struct rd *d, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (d->bad || !v || json_is_null(v))
		return -1;
	if (!json_is_number(v) || json_number_value(v) < 0) {
		kiln_error_set(d->err, "%s: '%s' is not a number of at least 0", d->what, key);
		d->bad = 1;
		return -1;
	}
	return json_number_value(v);
}

static int64_t get_time(struct rd *d, const json_t *o, const char *key)
{
	const json_t *v = field(d, o, key, JSON_STRING, true);
	int64_t t = 0;

	if (v && timefmt_time_parse_rfc3339(json_string_value(v), &t) < 0) {
		kiln_error_set(d->err, "%s: '%s' is not an RFC 3339 time", d->what, key);
		d->bad = 1;
	}
	return t;
}

static void read_lineage(struct rd *d, const json_t *o, struct runrec_lineage *l)
{
	const json_t *data, *types, *v;
	size_t i;

	if (!o)
		return;
	l->code_commit = get_str(d, o, "code_commit", true);
	v = json_object_get(o, "dirty");
	if (!d->bad && !json_is_boolean(v)) {
		kiln_error_set(d->err, "%s: 'dirty' is not true or false", d->what);
		d->bad = 1;
	}
	l->dirty = json_is_true(v);
	l->diff_digest = get_str(d, o, "diff_digest", true);
	l->spec_digest = get_str(d, o, "spec_digest", true);
	l->state_commit = get_str(d, o, "state_commit", true);
	l->image = get_str(d, o, "image", true);
	l->nodes = (int)get_int(d, o, "nodes");
	data = field(d, o, "data", JSON_ARRAY, false);
	types = field(d, o, "instance_types", JSON_ARRAY, false);
	if (d->bad)
		return;
	l->data = xcalloc(json_array_size(data) + 1, sizeof(*l->data));
	json_array_foreach(data, i, v)
	{
		struct runrec_data *x = &l->data[l->ndata++];

		x->store = get_str(d, v, "store", false);
		x->prefix = get_str(d, v, "prefix", false);
		x->objects = (uint64_t)get_int(d, v, "objects");
		x->bytes = (uint64_t)get_int(d, v, "bytes");
		x->manifest_digest = get_str(d, v, "manifest_digest", false);
	}
	l->instance_types = xcalloc(json_array_size(types) + 1, sizeof(char *));
	json_array_foreach(types, i, v)
	{
		if (!json_is_string(v)) {
			kiln_error_set(d->err, "%s: an instance type is not a string", d->what);
			d->bad = 1;
			return;
		}
		l->instance_types[l->ntypes++] = xstrdup(json_string_value(v));
	}
	v = json_object_get(o, "workload");
	if (v && json_is_object(v))
		l->workload = jsonc_copy(v);
}

int runrec_from_json(const json_t *j, struct runrec *r, struct kiln_error *err)
{
	struct rd d = {.j = j, .what = "a run", .err = err};
	const json_t *id, *entry, *model, *ex;
	char *digest = NULL, *state = NULL;
	char what[32];

	memset(r, 0, sizeof(*r));
	r->tokens = -1;
	r->model_tokens_per_s = -1;
	if (!json_is_object(j)) {
		kiln_error_set(err, "a run is %s, not an object", jsonr_kind(j));
		return -1;
	}
	id = json_object_get(j, "id");
	if (!json_is_string(id) || !runrec_id_ok(json_string_value(id))) {
		kiln_error_set(err, "a run's id is not r- and 8 hex digits");
		return -1;
	}
	snprintf(r->id, sizeof(r->id), "%s", json_string_value(id));
	snprintf(what, sizeof(what), "run %s", r->id);
	d.what = what;
	r->name = get_str(&d, j, "name", true);
	r->workspace = get_str(&d, j, "workspace", true);
	r->cluster = get_str(&d, j, "cluster", true);
	r->provider = get_str(&d, j, "provider", true);
	r->group = get_str(&d, j, "group", true);
	r->simulated = json_is_true(json_object_get(j, "simulated"));
	r->scheduler = get_str(&d, j, "scheduler", true);
	r->job_id = get_str(&d, j, "job_id", true);
	state = get_str(&d, j, "state", false);
	if (!d.bad && runrec_state_parse(state, &r->state) < 0) {
		kiln_error_set(err, "%s: state '%s' is not one of submitted, running, completed, "
				    "failed, cancelled",
			       what, state);
		d.bad = 1;
	}
	r->nodes = (int)get_int(&d, j, "nodes");
	r->gpus = (int)get_int(&d, j, "gpus");
	r->gpu_model = get_str(&d, j, "gpu_model", true);
	r->author = get_str(&d, j, "author", true);
	r->created = get_time(&d, j, "created");
	r->started = get_time(&d, j, "started");
	r->ended = get_time(&d, j, "ended");
	ex = json_object_get(j, "exit_status");
	if (ex && !json_is_null(ex)) {
		r->has_exit = true;
		r->exit_status = (int)get_int(&d, j, "exit_status");
	}
	entry = field(&d, j, "entry", JSON_OBJECT, false);
	if (entry) {
		r->entry.kind = get_str(&d, entry, "kind", true);
		r->entry.name = get_str(&d, entry, "name", true);
		r->entry.nargs = (int)get_int(&d, entry, "args");
		r->entry.digest = get_str(&d, entry, "digest", true);
	}
	model = field(&d, j, "model", JSON_OBJECT, true);
	if (model) {
		r->model_seconds = get_int(&d, model, "seconds");
		r->model_tokens_per_s = get_num(&d, model, "tokens_per_second");
	}
	r->tokens = get_num(&d, j, "tokens");
	read_lineage(&d, field(&d, j, "lineage", JSON_OBJECT, false), &r->lineage);
	digest = get_str(&d, j, "record_digest", true);
	free(state);
	if (d.bad) {
		free(digest);
		runrec_release(r);
		return -1;
	}
	{
		char *want = runrec_digest(r);

		if (!digest) {
			r->edited = true;
			r->edited_why = xstrdup("it has no record_digest");
		} else if (strcmp(want, digest) != 0) {
			r->edited = true;
			r->edited_why = xasprintf("its record_digest %.19s... is not the digest of "
						  "what it holds (%.19s...)",
						  digest, want);
		}
		free(want);
	}
	r->digest = digest;
	return 0;
}

/* ---- the runs ref ---- */

char *runrec_ref(const char *workspace)
{
	return xasprintf("refs/kiln/runs/%s", workspace);
}

static int parse_file(const char *text, size_t len, const char *ref, struct runrec_list *out,
		      struct kiln_error *err)
{
	json_error_t jerr;
	json_t *doc = jsonr_loadb(text, len, 0, &jerr), *runs, *v;
	size_t i;
	int ret = -1;

	runs = json_object_get(doc, "runs");
	if (!doc || !json_is_array(runs) ||
	    json_integer_value(json_object_get(doc, "kiln_runs")) != 1) {
		kiln_error_set(err, "%s: %s is not a runs file kiln writes (%s)", ref, RUNREC_FILE,
			       doc ? "no kiln_runs 1 and runs array" : jerr.text);
		kiln_error_hint(err, "restore it from the ref's history (git log %s in the state "
				     "repository)",
				ref);
		goto out;
	}
	json_array_foreach(runs, i, v)
	{
		struct runrec *r = ARRAY_PUSH(out->runs, out->n, out->cap);

		if (runrec_from_json(v, r, err) < 0) {
			out->n--;
			kiln_error_hint(err, "restore the run from the ref's history (git log %s in "
					     "the state repository)",
					ref);
			goto out;
		}
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

int runrec_load(struct store *s, const char *workspace, struct runrec_list *out,
		struct kiln_error *err)
{
	char *ref = runrec_ref(workspace), *text = NULL;
	size_t len = 0;
	int rc, ret = -1;

	memset(out, 0, sizeof(*out));
	rc = store_ref_read(s, ref, &out->head, err);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		ret = 0;
		goto out;
	}
	out->exists = true;
	if (store_read_file(s, &out->head, RUNREC_FILE, &text, &len, err) < 0)
		goto out;
	if (len > RUNS_MAX_BYTES) {
		kiln_error_set(err, "%s: %s is %zu bytes, more than kiln reads", ref, RUNREC_FILE,
			       len);
		goto out;
	}
	ret = parse_file(text, len, ref, out, err);
out:
	if (ret < 0)
		runrec_list_release(out);
	free(text);
	free(ref);
	return ret;
}

struct runrec *runrec_find(struct runrec_list *l, const char *id, struct kiln_error *err)
{
	struct strbuf sb = {0};

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->runs[i].id, id) == 0)
			return &l->runs[i];
	for (size_t i = l->n; i > 0 && i + 5 > l->n; i--)
		sb_addf(&sb, "%s%s", sb.len ? ", " : "", l->runs[i - 1].id);
	kiln_error_set(err, "no run '%s' in this workspace", id);
	if (l->n)
		kiln_error_hint(err, "kiln runs lists them (the latest: %s)", sb.buf);
	else
		kiln_error_hint(err, "this workspace has no runs yet; kiln run starts one");
	sb_release(&sb);
	return NULL;
}

static char *file_text(const struct runrec_list *l, const struct runrec *r)
{
	json_t *doc = json_object(), *runs = json_array();
	bool replaced = false;
	char *text;

	for (size_t i = 0; i < l->n; i++) {
		const struct runrec *x = &l->runs[i];

		if (strcmp(x->id, r->id) == 0) {
			x = r;
			replaced = true;
		}
		json_array_append_new(runs, runrec_json(x, true));
	}
	if (!replaced)
		json_array_append_new(runs, runrec_json(r, true));
	json_object_set_new(doc, "kiln_runs", json_integer(1));
	json_object_set_new(doc, "runs", runs);
	text = jsonw_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS, NULL);
	json_decref(doc);
	return text;
}

int runrec_save(struct store *s, const char *workspace, const struct runrec *r,
		const char *summary, struct kiln_error *err)
{
	char *ref = runrec_ref(workspace);
	int ret = -1;

	for (int tries = 0; tries < SAVE_TRIES; tries++) {
		struct runrec_list l;
		char *text, *message;
		git_oid commit;
		int rc;

		if (runrec_load(s, workspace, &l, err) < 0)
			goto out;
		text = file_text(&l, r);
		message = xasprintf("%s\n\nKiln-Operation: run\nKiln-Run: %s\n", summary, r->id);
		rc = store_commit_file(s, l.exists ? &l.head : NULL, RUNREC_FILE, text,
				       strlen(text), message, &commit, err);
		free(text);
		free(message);
		if (rc == 0)
			rc = l.exists ? store_ref_update(s, ref, &l.head, &commit, err)
				      : store_ref_create(s, ref, &commit, err);
		runrec_list_release(&l);
		if (rc < 0)
			goto out;
		if (rc == 0) {
			ret = 0;
			goto out;
		}
		/* STORE_EXISTS or STORE_MOVED: another writer recorded a run; read again. */
		if (store_sync(s, err) < 0)
			goto out;
	}
	kiln_error_set(err, "%s kept moving: %d tries to record run %s lost to other writers", ref,
		       SAVE_TRIES, r->id);
	kiln_error_hint(err, "run the command again");
out:
	free(ref);
	return ret;
}

void runrec_settle(struct runrec *r, int64_t now)
{
	int64_t end;

	if (!r->simulated || runrec_state_ended(r->state) || !r->started)
		return;
	end = r->started + r->model_seconds;
	if (now < end) {
		r->state = RUNREC_RUNNING;
		if (r->model_tokens_per_s >= 0)
			r->tokens = r->model_tokens_per_s * (double)(now - r->started);
		return;
	}
	r->state = RUNREC_COMPLETED;
	r->ended = end;
	r->has_exit = true;
	r->exit_status = 0;
	if (r->model_tokens_per_s >= 0)
		r->tokens = r->model_tokens_per_s * (double)r->model_seconds;
}

int runrec_exit_parse(const char *line, struct runrec_exit *out)
{
	const char *p = line;
	long long rank, status, when;
	char *end;

	memset(out, 0, sizeof(*out));
	if (strlen(p) < 11 || p[10] != '-')
		return -1;
	memcpy(out->id, p, 10);
	if (!runrec_id_ok(out->id))
		return -1;
	p += 11;
	if (*p < '0' || *p > '9' || (rank = strtoll(p, &end, 10)) > INT_MAX || *end != ' ')
		return -1;
	p = end + 1;
	if (*p < '0' || *p > '9' || (status = strtoll(p, &end, 10)) > 255 || *end != ' ')
		return -1;
	p = end + 1;
	if (*p < '0' || *p > '9' || (when = strtoll(p, &end, 10)) <= 0 || *end)
		return -1;
	out->rank = (int)rank;
	out->status = (int)status;
	out->when = when;
	return 0;
}

bool runrec_end_ranks(struct runrec *r, const int *exit, int64_t last, int *worst_rank)
{
	int worst = 0;

	*worst_rank = 0;
	for (int k = 0; k < r->nodes; k++) {
		if (exit[k] < 0)
			return false;
		if (exit[k] > worst) {
			worst = exit[k];
			*worst_rank = k;
		}
	}
	r->state = worst ? RUNREC_FAILED : RUNREC_COMPLETED;
	r->has_exit = true;
	r->exit_status = worst;
	r->ended = last > r->started ? last : r->started;
	return true;
}
