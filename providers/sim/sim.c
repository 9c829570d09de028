/*
 * sim.c - the embedded sim provider: a simulated cloud kept in a directory,
 * for a first run without a cloud account, for CI and for benchmarks. Every
 * message it writes says it is simulated. This file owns the knobs, the
 * context and the accounting of API calls; the rest is in the files named
 * in sim_int.h. It includes no engine header.
 *
 * Knobs (environment, read by open; a malformed value makes open fail with
 * a message naming the variable and the form it takes):
 *
 *   KILN_SIM_DIR         the directory of the simulated cloud; default .kiln/sim
 *                        (relative to the working directory), created on first change
 *   KILN_SIM_LATENCY_MS  every API call (a list page, read, create, update, delete,
 *                        wait) sleeps this long first, without holding any lock;
 *                        0..600000, default 0
 *   KILN_SIM_FAIL_RATE   the probability, 0..1, that a call fails with a retryable
 *                        "503 ServiceUnavailable"; half of the failed creates fail
 *                        after the resource was made (a lost response), which the
 *                        idempotency token turns into no duplicate; default 0
 *   KILN_SIM_SEED        seeds the fault generator (0..2^64-1) so a run repeats;
 *                        default: from the system's random source
 *   KILN_SIM_CAPACITY    MODEL=NODES[,MODEL=NODES...], e.g. H100=8,A100=16: nodes
 *                        per zone of each GPU model, shared by every node group in
 *                        the directory; a model not named is unlimited; default ""
 *   KILN_SIM_READY_MS    how long node groups, lustre and nfs stay "pending" after a
 *                        create or change, and "deleting" after a delete; other
 *                        types are immediate; 0..600000, default 200
 *   KILN_SIM_HEALTH_MS   how long a node, once running, takes to report its health
 *                        (the kiln:health report a booted node gives); 0..600000,
 *                        default 0 (the profile's, with KILN_SIM_PROFILE)
 *   KILN_SIM_PROFILE     "aws": every type takes the create, ready and delete
 *                        durations of the AWS resource it stands for (sim_profile_aws
 *                        below; their sources are in kiln-sim(7)) instead of
 *                        KILN_SIM_READY_MS; default "" (no profile)
 *   KILN_SIM_TIME_SCALE  multiplies the profile's durations (0.01: a 10-minute file
 *                        system in 6 s); a number from 0.0001 to 100, default 1
 *   KILN_SIM_PAGE_SIZE   resources per list page, 1..10000; default 500
 *   KILN_SIM_GPU_UTIL, KILN_SIM_LUSTRE_LOAD
 *                        simulated utilization, read when measured (sim_metrics.c)
 *
 * The directory:
 *
 *   lock                       flock(2)ed around every change (with a mutex for threads)
 *   r/ID.json                  one resource, see below; read by id in O(1)
 *   idx/CLUSTER/WORKSPACE/TYPE/ID
 *                              markers: a list reads only its own scope and type, and
 *                              only the names (names outside [A-Za-z0-9_-] are
 *                              %XX-escaped); older sims left them empty
 *   t/HASH                     an idempotency token: the id its create made ("ID\n")
 *   a/CLUSTER/WORKSPACE/ADDRESS
 *                              the id of the resource created last with that address
 *                              ("ID\n"), so a role policy finds its role and stores in
 *                              O(1); when an entry is missing or stale (an older sim, a
 *                              hand edit) the documents of the type in the scope that
 *                              no entry names are read instead (in an older sim's
 *                              directory all of them, once: each gets its entry)
 *   usage.json                 GPU nodes held: {"H100": {"sim-1a": 16}}
 *
 * A new resource's marker, token and address entry are one file under three
 * names (hard links; a copy where links fail): three names, one inode. Every
 * other file is written to a temporary name (the file's own name and .tmp:
 * writers hold the lock) and renamed into place; usage.json, which only
 * writers read, trades places with its temporary file (RENAME_EXCHANGE), so
 * a change of the counter makes and frees no inode. A resource file holds the
 * live form the engine sees plus the sim's own bookkeeping under "sim":
 *
 *   {"type": "sim_node_group", "id": "ng-0123456789abcdef0", "status": "ready",
 *    "attrs": {"instance_type": "p5.48xlarge", "count": 2, ...},
 *    "tags": {"kiln:cluster": "demo", "kiln:workspace": "default",
 *             "kiln:address": "sim_node_group.trainers", "team": "research"},
 *    "sim": {"cluster": "demo", "workspace": "default", "token": "..." | null,
 *            "created_ms": 1795000000000, "ready_at_ms": ..., "gone_at_ms": ...,
 *            "reserved": {"gpu": "H100", "zone": "sim-1a", "nodes": 2}}}
 *
 * status is "pending" until ready_at_ms, then "ready"; "deleting" until
 * gone_at_ms, when the resource is removed. The clock moves a status on by
 * itself (whichever call looks first writes it down); otherwise read and
 * list report exactly what the file says, so editing attrs injects drift.
 * "sim" is never shown to the engine, and capacity is given back from
 * "reserved", not from attrs.
 */
#include "sim.h"
#include "sim_int.h"
#include "arn_aws.h"
#include "expand.h"
#include "pricing.h"
#include "tags_aws.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

/*
 * KILN_SIM_PROFILE=aws, in seconds: the create call, pending after it, and
 * deleting after a delete. Each figure's source, or "no published figure",
 * is in man/kiln-sim.7 (keep the two together). sim_network stands for a
 * VPC with its subnets, security group and gateway; sim_nfs for an EFS file
 * system with its mount target; sim_lustre for FSx for Lustre (its data
 * repository association is not a separate type in the sim).
 */
static const struct {
	const char *type;
	double create_s, ready_s, delete_s;
} sim_profile_aws[] = {
    {"sim_network", 2, 0, 5},	   {"sim_placement_group", 0.5, 0, 0.5},
    {"sim_node_group", 2, 60, 60}, {"sim_bucket", 0.5, 0, 0.5},
    {"sim_lustre", 1, 600, 300},   {"sim_nfs", 1, 90, 60},
    {"sim_role", 1, 10, 1},	   {"sim_role_policy", 0.5, 10, 0.5},
};
/* Booted and running, how long a node takes to report its health (GPU, EFA checks). */
#define SIM_PROFILE_AWS_HEALTH_S 180

/* --- knobs --- */

static const char *knob(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static int knob_long(const char *name, long min, long max, long def, const char *form, long *out,
		     struct kiln_error *err)
{
	const char *v = knob(name);
	char *end;
	long n;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < min || n > max || v[0] == '-' || v[0] == '+') {
		kiln_error_set(err, "sim: %s must be %s, got '%s'", name, form, v);
		return -1;
	}
	*out = n;
	return 0;
}

/* A number from min to max, like the example form gives; def when unset. */
static int knob_double(const char *name, double min, double max, double def, const char *form,
		       double *out, struct kiln_error *err)
{
	const char *v = knob(name);
	char *end;
	double r;

	*out = def;
	if (!v)
		return 0;
	errno = 0;
	r = strtod(v, &end);
	if (errno || end == v || *end || !(r >= min && r <= max)) {
		kiln_error_set(err, "sim: %s must be %s, got '%s'", name, form, v);
		return -1;
	}
	*out = r;
	return 0;
}

static int knob_rate(double *out, struct kiln_error *err)
{
	return knob_double("KILN_SIM_FAIL_RATE", 0, 1, 0, "a probability from 0 to 1, like 0.05",
			   out, err);
}

static uint64_t system_seed(void)
{
	uint64_t s;

	if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s))
		s = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
	return s;
}

static int knob_scale(double *out, struct kiln_error *err)
{
	return knob_double("KILN_SIM_TIME_SCALE", 0.0001, 100, 1,
			   "a number from 0.0001 to 100, like 0.01", out, err);
}

static long scaled_ms(double seconds, double scale)
{
	return (long)(seconds * scale * 1000.0 + 0.5);
}

/* KILN_SIM_PROFILE: the durations of each type, scaled; health_ms too unless it was given. */
static int knob_profile(struct prov_ctx *ctx, struct kiln_error *err)
{
	const char *v = knob("KILN_SIM_PROFILE");
	size_t i;

	if (knob_scale(&ctx->time_scale, err) < 0)
		return -1;
	if (!v)
		return 0;
	if (strcmp(v, "aws") != 0) {
		kiln_error_set(err, "sim: KILN_SIM_PROFILE must be 'aws' or empty, got '%s'", v);
		kiln_error_hint(err, "aws takes each type's durations from AWS's documented or "
				     "widely reported figures (kiln-sim(7)); empty keeps "
				     "KILN_SIM_READY_MS");
		return -1;
	}
	ctx->timing = xcalloc(ARRAY_SIZE(sim_profile_aws), sizeof(*ctx->timing));
	for (i = 0; i < ARRAY_SIZE(sim_profile_aws); i++) {
		ctx->timing[i].type = sim_profile_aws[i].type;
		ctx->timing[i].create_ms = scaled_ms(sim_profile_aws[i].create_s, ctx->time_scale);
		ctx->timing[i].ready_ms = scaled_ms(sim_profile_aws[i].ready_s, ctx->time_scale);
		ctx->timing[i].delete_ms = scaled_ms(sim_profile_aws[i].delete_s, ctx->time_scale);
	}
	if (!knob("KILN_SIM_HEALTH_MS"))
		ctx->health_ms = scaled_ms(SIM_PROFILE_AWS_HEALTH_S, ctx->time_scale);
	return 0;
}

static const struct sim_timing *timing_of(const struct prov_ctx *ctx, const struct sim_kind *k)
{
	size_t i;

	for (i = 0; ctx->timing && i < ARRAY_SIZE(sim_profile_aws); i++)
		if (strcmp(ctx->timing[i].type, k->type) == 0)
			return &ctx->timing[i];
	return NULL;
}

long sim_ready_ms(const struct prov_ctx *ctx, const struct sim_kind *k)
{
	const struct sim_timing *t = timing_of(ctx, k);

	return t ? t->ready_ms : k->delayed ? ctx->ready_ms : 0;
}

long sim_delete_ms(const struct prov_ctx *ctx, const struct sim_kind *k)
{
	const struct sim_timing *t = timing_of(ctx, k);

	return t ? t->delete_ms : k->delayed ? ctx->ready_ms : 0;
}

long sim_create_ms(const struct prov_ctx *ctx, const struct sim_kind *k)
{
	const struct sim_timing *t = timing_of(ctx, k);

	return t ? t->create_ms : 0;
}

static int knob_seed(uint64_t *out, struct kiln_error *err)
{
	const char *v = knob("KILN_SIM_SEED");
	unsigned long long s;
	char *end;

	if (!v) {
		*out = system_seed();
		return 0;
	}
	errno = 0;
	s = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || v[0] == '+') {
		kiln_error_set(err,
			       "sim: KILN_SIM_SEED must be a whole number from 0 to "
			       "18446744073709551615, got '%s'",
			       v);
		return -1;
	}
	*out = (uint64_t)s;
	return 0;
}

/* KILN_SIM_CAPACITY=H100=8,A100=16: each model must be one the catalog has. */
static int knob_capacity(struct prov_ctx *ctx, struct kiln_error *err)
{
	const char *v = knob("KILN_SIM_CAPACITY");
	const struct catalog *cat = &catalog_aws;
	char *copy, *item, *save = NULL;
	size_t cap = 0, i;
	int ret = -1;

	if (!v)
		return 0;
	copy = xstrdup(v);
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *end;
		const char *model = NULL;
		struct sim_cap *c;
		long n;

		if (!eq || eq == item)
			goto bad;
		*eq = '\0';
		for (i = 0; i < cat->ntypes && !model; i++)
			if (cat->types[i].gpu && strcasecmp(cat->types[i].gpu, item) == 0)
				model = cat->types[i].gpu;
		if (!model) {
			kiln_error_set(err,
				       "sim: KILN_SIM_CAPACITY names GPU model '%s', which the "
				       "catalog does not have",
				       item);
			kiln_error_hint(err, "write MODEL=NODES[,MODEL=NODES...], like "
					     "H100=8,A100=16");
			goto out;
		}
		for (i = 0; i < ctx->ncaps; i++)
			if (strcmp(ctx->caps[i].model, model) == 0)
				goto bad;
		errno = 0;
		n = strtol(eq + 1, &end, 10);
		if (errno || end == eq + 1 || *end || n < 0 || eq[1] == '+' ||
		    n > SPEC_MAX_COUNT * 100L)
			goto bad;
		c = ARRAY_PUSH(ctx->caps, ctx->ncaps, cap);
		c->model = xstrdup(model);
		c->nodes = n;
	}
	if (ctx->ncaps == 0)
		goto bad;
	ret = 0;
	goto out;
bad:
	kiln_error_set(err,
		       "sim: KILN_SIM_CAPACITY must be MODEL=NODES[,MODEL=NODES...], like "
		       "H100=8,A100=16, got '%s'",
		       v);
out:
	free(copy);
	return ret;
}

/* --- the context --- */

static void sim_close(struct prov_ctx *ctx)
{
	size_t i;

	if (!ctx)
		return;
	for (i = 0; i < ctx->ncaps; i++)
		free(ctx->caps[i].model);
	for (i = 0; i < ctx->nzones; i++)
		free(ctx->zones[i]);
	free(ctx->caps);
	free(ctx->timing);
	free(ctx->zones);
	free(ctx->region);
	free(ctx->dir);
	free(ctx);
}

static int sim_open(struct prov_ctx **out, const struct spec *spec, struct kiln_error *err)
{
	struct prov_ctx *ctx = xcalloc(1, sizeof(*ctx));
	const char *dir = knob("KILN_SIM_DIR");
	const char *ms = "a whole number of milliseconds from 0 to 600000";
	uint64_t seed = 0;
	size_t i;

	*out = NULL;
	ctx->dir = xstrdup(dir ? dir : ".kiln/sim");
	ctx->region =
	    xstrdup(spec && spec->provider.region ? spec->provider.region : SIM_DEFAULT_REGION);
	if (spec && spec->provider.nzones) {
		ctx->zones = xcalloc(spec->provider.nzones, sizeof(*ctx->zones));
		for (i = 0; i < spec->provider.nzones; i++)
			ctx->zones[i] = xstrdup(spec->provider.zones[i].name);
		ctx->nzones = spec->provider.nzones;
	} else {
		ctx->zones = xcalloc(1, sizeof(*ctx->zones));
		ctx->zones[0] = xasprintf("%sa", ctx->region);
		ctx->nzones = 1;
	}
	if (knob_long("KILN_SIM_LATENCY_MS", 0, 600000, 0, ms, &ctx->latency_ms, err) < 0 ||
	    knob_long("KILN_SIM_READY_MS", 0, 600000, 200, ms, &ctx->ready_ms, err) < 0 ||
	    knob_long("KILN_SIM_HEALTH_MS", 0, 600000, 0, ms, &ctx->health_ms, err) < 0 ||
	    knob_long("KILN_SIM_PAGE_SIZE", 1, 10000, 500, "a whole number from 1 to 10000",
		      &ctx->page_size, err) < 0 ||
	    knob_rate(&ctx->fail_rate, err) < 0 || knob_seed(&seed, err) < 0 ||
	    knob_profile(ctx, err) < 0 || knob_capacity(ctx, err) < 0) {
		sim_close(ctx);
		return PROV_ERROR;
	}
	atomic_init(&ctx->calls, 0);
	atomic_init(&ctx->rng, seed);
	*out = ctx;
	return PROV_OK;
}

/* sim boots no image: its nodes stand for a cloud image whose default user is "kiln". */
/*
 * A run on sim lasts KILN_SIM_RUN_SECONDS (default an hour) and reports
 * KILN_SIM_RUN_TOKENS_PER_S tokens a second (unset: no progress data, as a
 * script that never calls kiln-progress).
 */
static int sim_run_model(struct prov_ctx *ctx, int64_t *seconds, double *tokens_per_s,
			 struct kiln_error *err)
{
	long s;

	(void)ctx;
	if (knob_long("KILN_SIM_RUN_SECONDS", 1, 366L * 86400, 3600,
		      "a whole number of seconds from 1 to 31622400, like 3600", &s, err) < 0 ||
	    knob_double("KILN_SIM_RUN_TOKENS_PER_S", 0, 1e12, -1,
			"a number of tokens a second of at least 0, like 250000", tokens_per_s,
			err) < 0)
		return PROV_ERROR;
	*seconds = s;
	return PROV_OK;
}

/*
 * A sim bucket's objects: KILN_SIM_OBJECTS, "KEY=SIZE" separated by commas
 * (every bucket holds the same), the keys under prefix listed with an ETag
 * made from key and size (FNV-1a, as S3's is from the content). Unset: an
 * empty bucket.
 */
static int sim_list_objects(struct prov_ctx *ctx, const char *id, const char *prefix, json_t **out,
			    struct kiln_error *err)
{
	const char *v = knob("KILN_SIM_OBJECTS"), *p = v;

	(void)ctx;
	(void)id;
	*out = json_array();
	while (p && *p) {
		size_t len = strcspn(p, ","), klen = strcspn(p, "=");
		char *end = NULL, etag[19];
		long long size = klen < len ? strtoll(p + klen + 1, &end, 10) : -1;
		uint64_t h = 1469598103934665603ULL;

		if (klen == 0 || klen >= len || size < 0 || end != p + len) {
			kiln_error_set(err, "sim: KILN_SIM_OBJECTS must be KEY=SIZE pairs separated "
					    "by commas, like data/a.bin=1024,data/b.bin=2048, got '%s'",
				       v);
			json_decref(*out);
			*out = NULL;
			return PROV_ERROR;
		}
		for (size_t i = 0; i < len; i++)
			h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
		snprintf(etag, sizeof(etag), "%016llx", (unsigned long long)h);
		if (!prefix || (strlen(prefix) <= klen && strncmp(p, prefix, strlen(prefix)) == 0))
			json_array_append_new(*out, json_pack("{s:s%, s:I, s:s}", "key", p, klen, "size",
							      (json_int_t)size, "etag", etag));
		p += len + (p[len] == ',');
	}
	return PROV_OK;
}

static int sim_login_user(struct prov_ctx *ctx, const char *image, char **user, char **why,
			  struct kiln_error *err)
{
	(void)ctx;
	(void)image;
	(void)err;
	*user = xstrdup("kiln");
	*why = xstrdup("sim nodes boot no image; 'kiln' stands for an image's default user");
	return PROV_OK;
}

static unsigned long sim_calls(struct prov_ctx *ctx)
{
	return atomic_load(&ctx->calls);
}

/* --- calls: latency and faults --- */

/* splitmix64 over an atomic counter: thread-safe, and one seed replays a run. */
static double sim_uniform(struct prov_ctx *ctx)
{
	uint64_t z = atomic_fetch_add(&ctx->rng, 0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

void sim_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * The start of every API call: count it, wait the latency (holding no lock,
 * so parallel calls overlap as they would against a cloud), and decide
 * whether it fails.
 */
enum sim_fault sim_call(struct prov_ctx *ctx, bool create)
{
	atomic_fetch_add(&ctx->calls, 1);
	sim_sleep_ms(ctx->latency_ms);
	if (ctx->fail_rate <= 0 || sim_uniform(ctx) >= ctx->fail_rate)
		return SIM_FAULT_NONE;
	if (create && sim_uniform(ctx) < 0.5)
		return SIM_FAULT_AFTER;
	return SIM_FAULT_BEFORE;
}

int sim_retry(struct kiln_error *err)
{
	kiln_error_set(err, "sim: 503 ServiceUnavailable (simulated transient failure); retry");
	return PROV_RETRY;
}

const struct sim_kind *sim_kind_find(const char *type)
{
	size_t i;

	for (i = 0; type && i < SIM_NTYPES; i++)
		if (strcmp(sim_kinds[i].type, type) == 0)
			return &sim_kinds[i];
	return NULL;
}

static const struct catalog *sim_catalog(struct prov_ctx *ctx)
{
	(void)ctx;
	return &catalog_aws;
}

static const char *sim_part_type(enum prov_part part)
{
	static const char *const types[] = {
	    [PART_GROUP] = "sim_node_group", [PART_OBJECT] = "sim_bucket",
	    [PART_LUSTRE] = "sim_lustre",    [PART_NFS] = "sim_nfs",
	    [PART_ROLE] = "sim_role_policy",
	};
	return types[part];
}

static enum prov_tier sim_type_tier(const char *type)
{
	static const struct prov_type_tier tiers[] = {
	    {"sim_network", PROV_TIER_NETWORK},	   {"sim_placement_group", PROV_TIER_NETWORK},
	    {"sim_node_group", PROV_TIER_COMPUTE}, {"sim_capacity_block", PROV_TIER_COMPUTE},
	    {"sim_bucket", PROV_TIER_STORAGE},	   {"sim_lustre", PROV_TIER_STORAGE},
	    {"sim_nfs", PROV_TIER_STORAGE},	   {"sim_role", PROV_TIER_IAM},
	    {"sim_role_policy", PROV_TIER_IAM},
	};

	return provider_tier_find(tiers, ARRAY_SIZE(tiers), type);
}

/*
 * sim models AWS: AWS's rules for tags, and its catalog, as aws checks them.
 * It simulates the cloud's API, not what runs on the nodes: nothing boots
 * there, so no scheduler could run.
 */
static void sim_check_spec(const struct spec *spec, struct diags *d)
{
	const struct ynode *sched = spec->scheduler.node;

	tags_aws_check(spec, d);
	expand_check_groups(&catalog_aws, spec, d);
	if (sched)
		diag_hint(diags_add(d, DIAG_ERROR, spec->file, sched->line, sched->col,
				    "scheduler: sim simulates the cloud's API (instances, "
				    "networks, stores, roles), not the software on the nodes: no "
				    "node boots, so no Slurm controller or slurmd could run"),
			  "plan a Slurm cluster with provider: aws (moto runs it locally, "
			  "see kiln-aws(7)), or remove scheduler: to try the rest on sim");
	sim_boot_check(spec, d);
}

/*
 * A spec on sim may leave out where it runs: region sim-1 and, without a
 * provider.zone, the region's zone a.
 */
static void sim_defaults(struct spec *spec, bool zone_given)
{
	if (!spec->provider.region)
		spec->provider.region = xstrdup("sim-1");
	if (zone_given)
		return;
	spec->provider.zones = xcalloc(1, sizeof(*spec->provider.zones));
	spec->provider.zones[0].name = xasprintf("%sa", spec->provider.region);
	spec->provider.nzones = 1;
}

static const char *sim_default_region(void)
{
	return SIM_DEFAULT_REGION;
}

/* sim prices what it simulates with AWS's catalog, as aws does. */
static void sim_cost(struct prov_ctx *ctx, const char *type, const json_t *attrs,
		     json_t *components, json_t *unpriced)
{
	(void)ctx;
	if (strcmp(type, "sim_node_group") == 0)
		pricing_group(&catalog_aws, attrs, components, unpriced);
	else if (strcmp(type, "sim_lustre") == 0)
		pricing_lustre(&catalog_aws, attrs, components, unpriced);
	else if (strcmp(type, "sim_bucket") == 0)
		pricing_by_use(unpriced, "Object storage and requests", "GB stored, requests");
	else if (strcmp(type, "sim_nfs") == 0)
		pricing_by_use(unpriced, "NFS storage", "GB stored, throughput");
	else if (strcmp(type, "sim_capacity_block") == 0)
		sim_block_cost(attrs, components, unpriced);
}

/* sim mirrors the AWS names of its read calls, which no policy scopes either. */
static const char *const sim_unscopable[] = {"sim:Describe*", "sim:List*", NULL};

/*
 * What a dependant needs only created (provider.h): an ARN, a DNS name,
 * known when the create call answers. Every other pair needs ready.
 */
static const struct prov_need sim_needs[] = {
    {"sim_role_policy", "sim_bucket", "the bucket's ARN, which the policy names"},
    {"sim_role_policy", "sim_lustre", "the file system's ARN, which the policy names"},
    {"sim_role_policy", "sim_nfs", "the file system's ARN, which the policy names"},
    {"sim_lustre", "sim_bucket", "the bucket's name, which the import reads"},
    {"sim_node_group", "sim_lustre",
     "dns_name and mount_name for the boot's mount, which retries until the file system "
     "answers"},
    {"sim_node_group", "sim_nfs",
     "dns_name for the boot's mount, which retries until the file system answers"},
    {NULL, NULL, NULL},
};

const struct provider provider_sim = {
    .name = "sim",
    .simulated = true,
    .types = sim_types,
    .ntypes = SIM_NTYPES,
    .open = sim_open,
    .close = sim_close,
    .expand = sim_expand,
    .catalog = sim_catalog,
    .check_spec = sim_check_spec,
    .iam_actions = sim_iam_actions,
    .part_type = sim_part_type,
    .type_tier = sim_type_tier,
    .cost = sim_cost,
    .preflight = sim_preflight,
    .role_policy = sim_role_policy,
    .list_unmanaged = sim_list_unmanaged,
    .claim = sim_claim,
    .tag_expiry = sim_tag_expiry,
    .calls = sim_calls,
    .metrics = sim_metrics,
    .login_user = sim_login_user,
    .run_model = sim_run_model,
    .list_objects = sim_list_objects,
    .default_template = "sim-demo",
    .defaults = sim_defaults,
    .default_region = sim_default_region,
    /* sim models AWS: its allow: statements name ARNs, as on aws. */
    .grammar = &arn_aws_grammar,
    .unscopable_actions = sim_unscopable,
    .needs = sim_needs,
};
