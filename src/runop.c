/*
 * runop.c - kiln run's operations (runop.h): record, start, list, cancel.
 *
 * It owns the order (recorded before it starts, the outcome recorded
 * after) and the words sent to the nodes; the record is runrec.c's, the
 * lineage lineage.c's, the ssh exchange scheduler.c's bounded run.
 */
#include "runop.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "lineage.h"
#include "runprog.h"
#include "scheduler.h"
#include "state.h"
#include "strbuf.h"
#include "timefmt.h"
#include "util.h"

#define SBATCH_MAX_BYTES (1u << 20)

char *runop_shell_quote(const char *word)
{
	struct strbuf sb = {0};

	sb_addc(&sb, '\'');
	for (const char *p = word; *p; p++) {
		if (*p == '\'')
			sb_adds(&sb, "'\\''");
		else
			sb_addc(&sb, *p);
	}
	sb_addc(&sb, '\'');
	return sb_detach(&sb);
}

/* The group a run goes to: the one named, else the first with GPUs, else the first. */
static const struct spec_group *pick_group(const struct spec *spec, const char *name,
					   struct kiln_error *err)
{
	const struct spec_group *g;
	struct strbuf sb = {0};

	if (name) {
		if ((g = spec_group_find(spec, name)))
			return g;
		for (size_t i = 0; i < spec->ngroups; i++)
			sb_addf(&sb, "%s%s", i ? ", " : "", spec->groups[i].name);
		kiln_error_set(err, "no group '%s' in %s", name, spec->file);
		kiln_error_hint(err, "name one of its groups: %s", sb.buf ? sb.buf : "(none)");
		sb_release(&sb);
		return NULL;
	}
	for (size_t i = 0; i < spec->ngroups; i++)
		if (spec->groups[i].gpu_count > 0)
			return &spec->groups[i];
	if (spec->ngroups)
		return &spec->groups[0];
	kiln_error_set(err, "%s has no node group to run on", spec->file);
	kiln_error_hint(err, "add a group under compute: and kiln apply it");
	return NULL;
}

static json_t *workload_block(const struct spec *spec)
{
	const struct workload *w = &spec->workload.w;

	if (!spec->workload.set)
		return NULL;
	return json_pack("{s:s, s:f, s:f, s:f, s:s, s:i, s:I, s:f, s:f}", "kind",
			 w->kind == WORKLOAD_FINETUNE ? "finetune" : "pretrain", "params", w->params,
			 "active_params", w->active_params ? w->active_params : w->params,
			 "tokens", w->tokens, "precision",
			 w->precision == WORKLOAD_FP8 ? "fp8" : "bf16", "seq_len",
			 w->seq_len ? w->seq_len : WORKLOAD_SEQ_LEN, "deadline_seconds",
			 (json_int_t)w->deadline_s, "mfu", w->mfu, "max_hourly_usd",
			 w->max_hourly_usd);
}

/* The entry: the script's name and digest, or the program's and the argv's digest. */
static int fill_entry(const struct runop_request *q, struct runrec_entry *e,
		      struct kiln_error *err)
{
	if (q->sbatch) {
		char *text = NULL;
		size_t len = 0;
		const char *base = strrchr(q->sbatch, '/');

		if (util_file_read_regular(q->sbatch, SBATCH_MAX_BYTES, &text, &len, err) < 0) {
			kiln_error_hint(err, "give --sbatch a batch script (a file of at most 1 MiB)");
			return -1;
		}
		e->kind = xstrdup("sbatch");
		e->name = xstrdup(base ? base + 1 : q->sbatch);
		e->digest = lineage_digest(text, len);
		free(text);
		return 0;
	}
	{
		struct strbuf sb = {0};
		const char *base = strrchr(q->command[0], '/');

		for (int i = 0; i < q->ncommand; i++)
			sb_add(&sb, q->command[i], strlen(q->command[i]) + 1);
		e->kind = xstrdup("command");
		e->name = xstrdup(base && base[1] ? base + 1 : q->command[0]);
		e->nargs = q->ncommand - 1;
		e->digest = lineage_digest(sb.buf, sb.len);
		sb_release(&sb);
	}
	return 0;
}

static int fill_code(const struct runop_request *q, struct runrec_lineage *l,
		     struct kiln_error *err)
{
	struct lineage_code c;

	if (lineage_code_read(q->code_dir ? q->code_dir : ".", &c, err) < 0)
		return -1;
	if (c.dirty && !q->allow_dirty) {
		kiln_error_set(err,
			       "the code here is not committed: %zu file%s differ%s from %s (first: "
			       "%s)",
			       c.changed, c.changed == 1 ? "" : "s", c.changed == 1 ? "s" : "",
			       c.commit ? c.commit : "an empty repository", c.first);
		kiln_error_hint(err, "commit them so the run's lineage names its code, or pass "
				     "--allow-dirty to record the run with a digest of the diff");
		lineage_code_release(&c);
		return -1;
	}
	l->code_commit = c.commit;
	l->dirty = c.dirty;
	l->diff_digest = c.diff_digest;
	c.commit = c.diff_digest = NULL;
	lineage_code_release(&c);
	return 0;
}

static int no_store(const struct spec *spec, const char *name, struct kiln_error *err)
{
	struct strbuf sb = {0};

	for (size_t i = 0; i < spec->nstores; i++)
		if (spec->stores[i].tier == TIER_OBJECT)
			sb_addf(&sb, "%s%s", sb.len ? ", " : "", spec->stores[i].name);
	kiln_error_set(err, "no store '%s' in %s", name, spec->file);
	kiln_error_hint(err, "--data names one of its object stores: %s", sb.len ? sb.buf : "(none)");
	sb_release(&sb);
	return -1;
}

/* One --data STORE[/PREFIX]: the store's listing under the prefix, as a manifest digest. */
static int fill_one_data(struct op_run *r, const char *arg, struct runrec_data *d,
			 struct kiln_error *err)
{
	const struct spec *spec = r->e->spec;
	const struct spec_store *st;
	char *name = xstrdup(arg), *slash = strchr(name, '/'), *addr = NULL;
	const char *type = r->e->prov->part_type ? r->e->prov->part_type(PART_OBJECT) : NULL;
	const char *id;
	json_t *objs = NULL;
	int rc, ret = -1;

	if (slash)
		*slash = '\0';
	if (!(st = spec_store_find(spec, name))) {
		no_store(spec, name, err);
		goto out;
	}
	if (st->tier != TIER_OBJECT) {
		kiln_error_set(err, "store '%s' is %s, not an object store", name,
			       spec_tier_with_article(st->tier));
		kiln_error_hint(err, "--data names an object store: its keys, sizes and ETags make "
				     "the run's data manifest");
		goto out;
	}
	if (!type || !r->e->prov->list_objects) {
		kiln_error_set(err, "the %s provider cannot list a store's objects",
			       r->e->prov->name);
		goto out;
	}
	addr = xasprintf("%s.%s", type, name);
	if (!(id = state_resource_id(state_resource(r->state, addr)))) {
		kiln_error_set(err, "store '%s' has not been created in workspace '%s'", name,
			       r->e->workspace);
		kiln_error_hint(err, "kiln apply creates it");
		goto out;
	}
	rc = r->e->prov->list_objects(r->e->ctx, id, slash ? slash + 1 : "", &objs, err);
	if (rc == PROV_NOTFOUND) {
		kiln_error_set(err, "store '%s' (%s) is gone from the cloud", name, id);
		kiln_error_hint(err, "kiln plan shows the drift and kiln apply makes it again");
		goto out;
	}
	if (rc != PROV_OK)
		goto out;
	d->manifest_digest = lineage_manifest_digest(objs, &d->objects, &d->bytes, err);
	if (!d->manifest_digest)
		goto out;
	d->store = xstrdup(name);
	d->prefix = xstrdup(slash ? slash + 1 : "");
	ret = 0;
out:
	json_decref(objs);
	free(addr);
	free(name);
	return ret;
}

static int fill_data(struct op_run *r, const struct runop_request *q, struct runrec_lineage *l,
		     struct kiln_error *err)
{
	l->data = xcalloc(q->ndata + 1, sizeof(*l->data));
	for (size_t i = 0; i < q->ndata; i++) {
		if (fill_one_data(r, q->data[i], &l->data[l->ndata], err) < 0)
			return -1;
		l->ndata++;
	}
	return 0;
}

/* The group's nodes (new array, non-empty) and the host list, or -1 with err. */
static int group_nodes(struct op_run *r, const char *group, json_t **hosts, json_t **nodes,
		       struct kiln_error *err)
{
	json_t *res = access_resources(r->e, r->state, false, err);
	struct kiln_error none = {0};

	*hosts = *nodes = NULL;
	if (!res)
		return -1;
	*hosts = access_hosts(r->e, res, NULL, err);
	json_decref(res);
	if (!*hosts)
		return -1;
	/* The spec has the group (pick_group): no nodes is the one thing access can say. */
	*nodes = access_select(*hosts, group, &none);
	if (!json_array_size(*nodes)) {
		kiln_error_set(err, "group '%s' has no nodes in workspace '%s'", group,
			       r->e->workspace);
		kiln_error_hint(err, "kiln apply (or kiln up) starts them; kiln hosts lists the "
				     "nodes there are");
		return -1;
	}
	return 0;
}

static int fill_record(struct op_run *r, const struct runop_request *q,
		       const struct spec_group *g, const json_t *nodes, int64_t now,
		       struct runrec *rec, struct kiln_error *err)
{
	git_signature *sig = NULL;
	size_t i;
	const json_t *n;

	memset(rec, 0, sizeof(*rec));
	rec->tokens = -1;
	rec->model_tokens_per_s = -1;
	runrec_new_id(rec->id);
	if (fill_code(q, &rec->lineage, err) < 0 || fill_entry(q, &rec->entry, err) < 0 ||
	    fill_data(r, q, &rec->lineage, err) < 0 ||
	    store_signature(r->store, &sig, err) < 0)
		return -1;
	rec->author = xasprintf("%s <%s>", sig->name, sig->email);
	git_signature_free(sig);
	rec->name = xstrdup(q->name ? q->name : rec->entry.name);
	rec->workspace = xstrdup(r->e->workspace);
	rec->cluster = xstrdup(r->e->spec->cluster);
	rec->provider = xstrdup(r->e->prov->name);
	rec->group = xstrdup(g->name);
	rec->simulated = r->e->prov->simulated;
	rec->scheduler =
	    xstrdup(r->e->spec->scheduler.type == SCHEDULER_NONE ? "none" : "slurm");
	rec->state = RUNREC_SUBMITTED;
	rec->created = now;
	rec->nodes = (int)json_array_size(nodes);
	rec->gpus = rec->nodes * g->gpu_count;
	rec->gpu_model = g->gpu_model ? xstrdup(g->gpu_model) : NULL;
	rec->lineage.spec_digest = xstrdup(r->e->spec_digest);
	rec->lineage.state_commit = r->head[0] ? xstrdup(r->head) : NULL;
	rec->lineage.image = g->image ? xstrdup(g->image) : NULL;
	rec->lineage.nodes = rec->nodes;
	rec->lineage.instance_types = xcalloc(json_array_size(nodes) + 1, sizeof(char *));
	json_array_foreach(nodes, i, n)
	{
		const char *t = json_string_value(json_object_get(n, "instance_type"));
		bool seen = !t;

		for (size_t k = 0; k < rec->lineage.ntypes && !seen; k++)
			seen = strcmp(rec->lineage.instance_types[k], t) == 0;
		if (!seen)
			rec->lineage.instance_types[rec->lineage.ntypes++] = xstrdup(t);
	}
	rec->lineage.workload = workload_block(r->e->spec);
	return 0;
}

/* Run command on node through ssh, bounded; its standard output into *out (caller frees). */
static int on_node(const json_t *hosts, const struct spec *spec, const json_t *node,
		   const char *endpoint, const char *command, char **out, struct kiln_error *err)
{
	const char *name = json_string_value(json_object_get(node, "name"));
	const char *group = json_string_value(json_object_get(node, "group"));
	char *config = NULL, *host = xstrdup(name ? name : ""), *cmd = xstrdup(command);
	char *av[] = {"ssh", "-F", NULL, "-n", "--", host, cmd, NULL};
	struct sched_run run = {0};
	int ret = -1;

	if (out)
		*out = NULL;
	if (!access_node_host(node) && !endpoint) {
		kiln_error_set(err, "%s has no address yet", name);
		kiln_error_hint(err, "kiln hosts --refresh shows it once the cloud has given it one");
		goto out;
	}
	if (access_ssh_config_file(hosts, spec, endpoint, SCHED_CONNECT_TIMEOUT, &config, err) < 0)
		goto out;
	av[2] = config;
	if (scheduler_run_bounded(av, RUNOP_SSH_DEADLINE * 1000, &run, err) < 0 ||
	    scheduler_run_verdict(&run, name, group, err) < 0)
		goto out;
	if (out)
		*out = sb_detach(&run.out);
	ret = 0;
out:
	if (config)
		unlink(config);
	free(config);
	free(host);
	free(cmd);
	sb_release(&run.out);
	sb_release(&run.errs);
	return ret;
}

/* The words that start the command on one node, detached, in a session of its own. */
static char *node_command(const struct runrec *rec, const struct runop_request *q, int rank,
			  const char *master)
{
	struct strbuf user = {0}, sb = {0};
	char *quoted;
	const char *id = rec->id;

	for (int i = 0; i < q->ncommand; i++) {
		char *w = runop_shell_quote(q->command[i]);

		sb_addf(&user, "%s%s", i ? " " : "", w);
		free(w);
	}
	/*
	 * The wrapper: its pid is the session's, so cancel ends the whole
	 * tree. Files are per rank: nodes may share a home directory.
	 */
	sb_addf(&sb,
		"cd && mkdir -p " RUNOP_NODE_DIR " && echo $$ > " RUNOP_NODE_DIR "/%s-%d.pid && "
		"export KILN_RUN_ID=%s KILN_NODES=%d KILN_NODE_RANK=%d KILN_MASTER_ADDR=%s && "
		"{ %s; } > " RUNOP_NODE_DIR "/%s-%d.log 2>&1; "
		"echo $? $(date +%%s) > " RUNOP_NODE_DIR "/%s-%d.exit",
		id, rank, id, rec->nodes, rank, master, user.buf, id, rank, id, rank);
	quoted = runop_shell_quote(sb.buf);
	sb_release(&sb);
	sb_addf(&sb, "setsid nohup sh -c %s > /dev/null 2>&1 < /dev/null &", quoted);
	free(quoted);
	sb_release(&user);
	return sb_detach(&sb);
}

static int start_nodes(struct op_run *r, const struct runop_request *q, struct runrec *rec,
		       const json_t *hosts, const json_t *nodes, struct kiln_error *err)
{
	const json_t *first = json_array_get(nodes, 0);
	const char *master = json_string_value(json_object_get(first, "private_ip"));

	if (!master)
		master = json_string_value(json_object_get(first, "name"));
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		char *cmd = node_command(rec, q, (int)i, master);
		int rc = on_node(hosts, r->e->spec, json_array_get(nodes, i), q->endpoint, cmd, NULL,
				 err);

		free(cmd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* sbatch's --parsable answer: "JOBID" or "JOBID;CLUSTER". */
static char *parse_job_id(const char *out)
{
	size_t n = out ? strspn(out, "0123456789") : 0;

	return n && n < 16 ? xstrndup(out, n) : NULL;
}

static int submit(struct op_run *r, const struct runop_request *q, struct runrec *rec,
		  const json_t *hosts, struct kiln_error *err)
{
	const char *ctl = r->e->spec->scheduler.controller.name;
	json_t *ctl_nodes = ctl ? access_select(hosts, ctl, err) : NULL;
	struct strbuf sb = {0}, script = {0};
	char *text = NULL, *out = NULL, *quoted;
	size_t len = 0;
	int ret = -1;

	if (!json_array_size(ctl_nodes)) {
		kiln_error_set(err, "the Slurm controller's group %s has no node",
			       ctl ? ctl : "(none)");
		kiln_error_hint(err, "kiln up starts it");
		goto out;
	}
	if (q->sbatch) {
		if (util_file_read_regular(q->sbatch, SBATCH_MAX_BYTES, &text, &len, err) < 0)
			goto out;
		sb_add(&script, text, len);
	} else {
		sb_adds(&script, "#!/bin/sh\nexec");
		for (int i = 0; i < q->ncommand; i++) {
			char *w = runop_shell_quote(q->command[i]);

			sb_addf(&script, " %s", w);
			free(w);
		}
		sb_addc(&script, '\n');
	}
	/* The script goes in the command itself, as a quoted here-string: no second channel. */
	quoted = runop_shell_quote(script.buf);
	sb_addf(&sb,
		"cd && mkdir -p " RUNOP_NODE_DIR " && printf %%s %s > " RUNOP_NODE_DIR
		"/%s.sbatch && sbatch --parsable --job-name=kiln-%s --export=ALL,KILN_RUN_ID=%s,"
		"KILN_NODES=%d ",
		quoted, rec->id, rec->id, rec->id, rec->nodes);
	/* A script says its own nodes, partition and output; a wrapped command gets the group's. */
	if (!q->sbatch)
		sb_addf(&sb, "--nodes=%d --partition=%s --output=" RUNOP_NODE_DIR "/%s-%%j.log ",
			rec->nodes, rec->group, rec->id);
	sb_addf(&sb, RUNOP_NODE_DIR "/%s.sbatch", rec->id);
	free(quoted);
	if (on_node(hosts, r->e->spec, json_array_get(ctl_nodes, 0), q->endpoint, sb.buf, &out,
		    err) < 0)
		goto out;
	if (!(rec->job_id = parse_job_id(out))) {
		char *shown = str_for_terminal(out ? out : "", 80);

		kiln_error_set(err, "sbatch gave no job id: '%s'", shown);
		kiln_error_hint(err, "kiln ssh %s and sbatch there say what is wrong", ctl);
		free(shown);
		goto out;
	}
	ret = 0;
out:
	json_decref(ctl_nodes);
	sb_release(&sb);
	sb_release(&script);
	free(text);
	free(out);
	return ret;
}

int runop_start(struct op_run *r, const struct runop_request *q, struct runrec *out,
		struct kiln_error *err)
{
	const struct spec_group *g;
	json_t *hosts = NULL, *nodes = NULL;
	struct kiln_error why = {0};
	char *summary = NULL;
	int64_t now;
	int rc = -1, ret = -1;

	memset(out, 0, sizeof(*out));
	if (q->sbatch && r->e->spec->scheduler.type == SCHEDULER_NONE) {
		kiln_error_set(err, "--sbatch needs a scheduler, and %s has no scheduler: section",
			       r->e->spec->file);
		kiln_error_hint(err, "give the command after --, which kiln starts on every node "
				     "of the group, or add scheduler: {type: slurm}");
		return -1;
	}
	if (timefmt_now(&now, err) < 0 || !(g = pick_group(r->e->spec, q->group, err)) ||
	    group_nodes(r, g->name, &hosts, &nodes, err) < 0 ||
	    fill_record(r, q, g, nodes, now, out, err) < 0 ||
	    (r->e->prov->simulated && r->e->prov->run_model &&
	     r->e->prov->run_model(r->e->ctx, &out->model_seconds, &out->model_tokens_per_s, err) <
		 0)) {
		runrec_release(out); /* nothing was recorded */
		goto out;
	}
	summary = xasprintf("run %s: %s on %s (%d node%s)", out->id, out->name, out->group,
			    out->nodes, out->nodes == 1 ? "" : "s");
	if (runrec_save(r->store, r->e->workspace, out, summary, err) < 0) {
		runrec_release(out); /* nothing was recorded */
		goto out;
	}
	/* Recorded: from here a failure to start is recorded too. */
	if (r->e->prov->simulated)
		rc = 0;
	else if (r->e->spec->scheduler.type != SCHEDULER_NONE)
		rc = submit(r, q, out, hosts, &why);
	else
		rc = start_nodes(r, q, out, hosts, nodes, &why);
	free(summary);
	if (rc == 0) {
		out->state = out->job_id ? RUNREC_SUBMITTED : RUNREC_RUNNING;
		out->started = out->job_id ? 0 : now;
		summary = xasprintf("run %s %s%s%s", out->id,
				    out->job_id ? "submitted as job " : "started",
				    out->job_id ? out->job_id : "",
				    out->simulated ? " (simulated)" : "");
	} else {
		out->state = RUNREC_FAILED;
		out->ended = now;
		summary = xasprintf("run %s failed to start: %s", out->id, why.msg);
	}
	if (runrec_save(r->store, r->e->workspace, out, summary, err) < 0)
		goto out;
	if (rc < 0) {
		*err = why;
		goto out;
	}
	ret = 0;
out:
	free(summary);
	json_decref(hosts);
	json_decref(nodes);
	return ret;
}

int runop_list(struct store *s, const char *workspace, int64_t now, struct runrec_list *out,
	       struct kiln_error *err)
{
	if (runrec_load(s, workspace, out, err) < 0)
		return -1;
	for (size_t i = 0; i < out->n; i++)
		runrec_settle(&out->runs[i], now);
	return 0;
}

/* A run whose end kiln reads from its nodes' exit files: started without a scheduler. */
static bool reapable(const struct runrec *rec)
{
	return !rec->simulated && !rec->job_id && rec->state == RUNREC_RUNNING && rec->nodes > 0;
}

bool runop_needs_reap(const struct runrec_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (reapable(&l->runs[i]))
			return true;
	return false;
}

/* What the nodes said of one run: each rank's exit status (-1: not yet) and the last end. */
struct reaped {
	int *exit;
	int64_t last;
};

/* One line a node printed, into what[]; a line of another shape is skipped. */
static void reap_line(const char *line, struct runrec_list *l, struct reaped *what)
{
	struct runrec_exit x;

	if (runrec_exit_parse(line, &x) < 0)
		return;
	for (size_t i = 0; i < l->n; i++) {
		if (!what[i].exit || strcmp(l->runs[i].id, x.id) != 0 || x.rank >= l->runs[i].nodes)
			continue;
		what[i].exit[x.rank] = x.status;
		if (x.when > what[i].last)
			what[i].last = x.when;
	}
}

/* One node's exit files of the runs on its group, in one ssh exchange. */
static int reap_node(struct op_run *r, const json_t *hosts, const json_t *node,
		     const char *endpoint, struct runrec_list *l, struct reaped *what,
		     struct kiln_error *err)
{
	const char *group = json_string_value(json_object_get(node, "group"));
	struct strbuf sb = {0};
	char *out = NULL, *line, *save = NULL;
	bool any = false;
	int ret;

	sb_adds(&sb, "cd " RUNOP_NODE_DIR " 2>/dev/null || exit 0; for f in");
	for (size_t i = 0; i < l->n; i++)
		if (what[i].exit && group && strcmp(l->runs[i].group, group) == 0) {
			sb_addf(&sb, " %s-*.exit", l->runs[i].id);
			any = true;
		}
	/* Each file is "STATUS TIME" (the wrapper's echo); printed after its name. */
	sb_adds(&sb, "; do test -f \"$f\" && echo \"${f%.exit}\" $(cat \"$f\"); done; true");
	if (!any) {
		sb_release(&sb);
		return 0;
	}
	ret = on_node(hosts, r->e->spec, node, endpoint, sb.buf, &out, err);
	sb_release(&sb);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save))
		reap_line(line, l, what);
	free(out);
	return ret;
}

int runop_reap(struct op_run *r, const char *endpoint, struct kiln_error *err)
{
	struct runrec_list l = {0};
	struct reaped *what = NULL;
	json_t *res = NULL, *hosts = NULL;
	const json_t *n;
	struct kiln_error first = {0};
	size_t i;
	int64_t now;
	int ret = -1;

	if (timefmt_now(&now, err) < 0 || runop_list(r->store, r->e->workspace, now, &l, err) < 0)
		goto out;
	if (!runop_needs_reap(&l)) {
		ret = 0;
		goto out;
	}
	what = xcalloc(l.n, sizeof(*what));
	for (i = 0; i < l.n; i++) {
		if (!reapable(&l.runs[i]))
			continue;
		what[i].exit = xcalloc((size_t)l.runs[i].nodes, sizeof(int));
		for (int k = 0; k < l.runs[i].nodes; k++)
			what[i].exit[k] = -1;
	}
	if (!(res = access_resources(r->e, r->state, false, err)) ||
	    !(hosts = access_hosts(r->e, res, NULL, err)))
		goto out;
	/* One exchange a node for all its runs; a node not reached leaves its runs running. */
	json_array_foreach(json_object_get(hosts, "nodes"), i, n)
	{
		struct kiln_error e = {0};

		if (reap_node(r, hosts, n, endpoint, &l, what, &e) < 0 && !first.msg[0])
			first = e;
	}
	for (i = 0; i < l.n; i++) {
		struct runrec *rec = &l.runs[i];
		char *summary;
		int worst_rank;

		if (!what[i].exit || !runrec_end_ranks(rec, what[i].exit, what[i].last, &worst_rank))
			continue;
		summary = xasprintf("run %s %s: exit status %d (rank %d's, the worst of %d)", rec->id,
				    runrec_state_name(rec->state), rec->exit_status, worst_rank,
				    rec->nodes);
		if (runrec_save(r->store, r->e->workspace, rec, summary, err) < 0) {
			free(summary);
			goto out;
		}
		free(summary);
	}
	if (first.msg[0]) {
		*err = first;
		goto out;
	}
	ret = 0;
out:
	for (i = 0; what && i < l.n; i++)
		free(what[i].exit);
	free(what);
	json_decref(hosts);
	json_decref(res);
	runrec_list_release(&l);
	return ret;
}

static int stop_on_nodes(struct op_run *r, const struct runrec *rec, const char *endpoint,
			 struct kiln_error *err)
{
	json_t *hosts = NULL, *nodes = NULL;
	char *cmd;
	int ret = -1;

	if (group_nodes(r, rec->group, &hosts, &nodes, err) < 0)
		goto out;
	/* Every rank's session that has not written its exit status yet. */
	cmd = xasprintf("cd && for p in " RUNOP_NODE_DIR "/%s-*.pid; do test -f \"$p\" || "
			"continue; test -f \"${p%%.pid}.exit\" || kill -TERM -- -$(cat \"$p\") "
			"2>/dev/null; done; true",
			rec->id);
	for (size_t i = 0; i < json_array_size(nodes); i++)
		if (on_node(hosts, r->e->spec, json_array_get(nodes, i), endpoint, cmd, NULL, err) <
		    0) {
			free(cmd);
			goto out;
		}
	free(cmd);
	ret = 0;
out:
	json_decref(hosts);
	json_decref(nodes);
	return ret;
}

static int scancel(struct op_run *r, const struct runrec *rec, const char *endpoint,
		   struct kiln_error *err)
{
	json_t *res = access_resources(r->e, r->state, false, err), *hosts = NULL, *ctl = NULL;
	const char *group = r->e->spec->scheduler.controller.name;
	char *cmd = NULL;
	int ret = -1;

	if (!res || !(hosts = access_hosts(r->e, res, NULL, err)) ||
	    !(ctl = access_select(hosts, group, err)))
		goto out;
	if (!json_array_size(ctl)) {
		kiln_error_set(err, "the Slurm controller's group %s has no node", group);
		goto out;
	}
	cmd = xasprintf("scancel %s", rec->job_id);
	ret = on_node(hosts, r->e->spec, json_array_get(ctl, 0), endpoint, cmd, NULL, err);
out:
	free(cmd);
	json_decref(ctl);
	json_decref(hosts);
	json_decref(res);
	return ret;
}

int runop_cancel(struct op_run *r, const char *id, const char *endpoint, struct runrec *out,
		 struct kiln_error *err)
{
	struct runrec_list l = {0};
	struct runrec *rec;
	char *summary = NULL;
	int64_t now;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (timefmt_now(&now, err) < 0 || runop_list(r->store, r->e->workspace, now, &l, err) < 0 ||
	    !(rec = runrec_find(&l, id, err)))
		goto out;
	if (runrec_state_ended(rec->state)) {
		char buf[21];

		kiln_error_set(err, "run %s has already ended: %s%s%s", id,
			       runrec_state_name(rec->state), rec->ended ? " at " : "",
			       rec->ended ? timefmt_time_format_rfc3339(rec->ended, buf) : "");
		kiln_error_hint(err, "kiln runs lists the runs still going");
		goto out;
	}
	if (!rec->simulated &&
	    (rec->job_id ? scancel(r, rec, endpoint, err) : stop_on_nodes(r, rec, endpoint, err)) <
		0)
		goto out;
	rec->state = RUNREC_CANCELLED;
	rec->ended = now;
	summary = xasprintf("run %s cancelled%s", id, rec->simulated ? " (simulated)" : "");
	if (runrec_save(r->store, r->e->workspace, rec, summary, err) < 0)
		goto out;
	*out = *rec;
	memset(rec, 0, sizeof(*rec));
	ret = 0;
out:
	free(summary);
	runrec_list_release(&l);
	return ret;
}

/* The GPUs of the workspace's nodes, as the host list counts them. */
static int cluster_gpus(struct op_run *r, struct kiln_error *err)
{
	json_t *res = access_resources(r->e, r->state, false, err), *hosts;
	const json_t *n;
	size_t i;
	int gpus = 0;

	if (!res)
		return -1;
	hosts = access_hosts(r->e, res, NULL, err);
	json_decref(res);
	if (!hosts)
		return -1;
	json_array_foreach(json_object_get(hosts, "nodes"), i, n)
		gpus += (int)json_integer_value(json_object_get(n, "gpus"));
	json_decref(hosts);
	return gpus;
}

static double peak_of(struct op_run *r, const struct runrec *rec)
{
	const struct catalog *cat = r->e->prov->catalog ? r->e->prov->catalog(r->e->ctx) : NULL;
	const struct catalog_gpu *g = cat && rec->gpu_model ? catalog_gpu(cat, rec->gpu_model) : NULL;
	const char *prec = json_string_value(json_object_get(rec->lineage.workload, "precision"));

	if (!g)
		return -1;
	return prec && strcmp(prec, "fp8") == 0 ? g->fp8_tflops : g->bf16_tflops;
}

int runop_status(struct op_run *r, int64_t now, double cluster_hourly, json_t **out,
		 struct kiln_error *err)
{
	struct runrec_list l = {0};
	int gpus = -1;

	*out = NULL;
	if (runop_list(r->store, r->e->workspace, now, &l, err) < 0)
		return -1;
	*out = json_array();
	for (size_t i = 0; i < l.n; i++) {
		const struct runrec *rec = &l.runs[i];
		struct runprog p;
		json_t *j;

		if (rec->state != RUNREC_RUNNING)
			continue;
		if (gpus < 0 && (gpus = cluster_gpus(r, err)) < 0) {
			json_decref(*out);
			*out = NULL;
			runrec_list_release(&l);
			return -1;
		}
		runprog_compute(rec, now, rec->edited ? -1 : cluster_hourly, gpus, peak_of(r, rec),
				&p);
		j = runprog_json(rec, &p);
		if (rec->edited)
			json_object_set_new(j, "edited", json_string(rec->edited_why));
		json_array_append_new(*out, j);
		runprog_release(&p);
	}
	runrec_list_release(&l);
	return 0;
}
