/*
 * workload.c - sizing a cluster from a training workload; see workload.h.
 *
 * The arithmetic, and where each figure comes from:
 *
 * Compute. Training a dense transformer costs 6·N·D FLOPs for N parameters
 * and D tokens: 2·N·D for the forward pass, 4·N·D for the backward (Kaplan
 * et al. 2020, "Scaling Laws for Neural Language Models", section 2.1;
 * Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on
 * GPU Clusters Using Megatron-LM", section 5.1; EleutherAI, "Transformer
 * Math 101", 2023). A mixture of experts spends it on its active
 * parameters. LoRA (Hu et al. 2021) freezes the weights: the backward pass
 * still carries the activations' gradients through them (2·N·D) but
 * computes no gradient of a frozen weight (the other 2·N·D), so kiln counts
 * 4·N·D; activation recomputation would add another 2·N·D, which kiln
 * leaves inside the MFU, as the published MFUs do.
 *
 * Throughput. Each GPU delivers its dense peak for the precision (the
 * catalog's table, from the vendor datasheets) times the model FLOPs
 * utilization (MFU). kiln's default MFU per GPU and precision is the table
 * below, each row with the measurements it stands on; it is an assumption
 * and a workload may give its own. Time falls linearly with GPUs at that
 * MFU up to WORKLOAD_MAX_GPUS, the largest published dense run; kiln sizes
 * no larger cluster.
 *
 * Memory. Mixed-precision Adam keeps 16 bytes of model state per parameter:
 * 2 of bf16 weights, 2 of gradients and 12 of fp32 master weights and the
 * two moments (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward
 * Training Trillion Parameter Models", section 3.1). Sharded over every
 * data-parallel rank (ZeRO stage 3, PyTorch FSDP), each of G GPUs holds
 * 1/G of it. LoRA keeps the frozen weights in bf16 (2 bytes each, also
 * sharded) and the 16 bytes only for the adapters: rank 16 on the four
 * attention and the two MLP projections of every layer (18·r·h·L
 * parameters). Activations are kept with full recomputation: each layer's
 * input (2·s·h bytes, bf16, micro-batch 1) and one layer's working set
 * while it is recomputed (34·s·h bytes: Korthikanti et al. 2022, "Reducing
 * Activation Recomputation in Large Transformer Models", section 4.1,
 * without the attention scores a fused attention kernel never stores). The
 * shape comes from N ≈ 12·L·h² at an aspect ratio h = 128·L (GPT-3's and
 * Llama 2 7B's; Kaplan et al. find loss flat across 50 to 200).
 * WORKLOAD_HEADROOM of each GPU's memory is left free for the CUDA context,
 * NCCL buffers, the layers ZeRO-3 gathers and fragmentation.
 *
 * Storage. A checkpoint holds what resumes the run: bf16 weights and the
 * fp32 master weights and moments, 14 bytes per trained parameter. The
 * Lustre file system holds two of them and the dataset, and writes one
 * within write_within; the dataset is read once over the run.
 */
#include "workload.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strbuf.h"
#include "timefmt.h"

#define GIB 1073741824.0
#define WORKLOAD_HEADROOM 0.20	      /* of each GPU's memory, left free */
#define WORKLOAD_MAX_GPUS 16384	      /* Llama 3 405B's run, the largest published */
#define WORKLOAD_ASPECT 128.0	      /* hidden size per layer */
#define WORKLOAD_LORA_RANK 16.0	      /* adapters' rank */
#define WORKLOAD_BYTES_PER_TOKEN 4.0  /* a tokenized dataset, 32-bit token ids */
#define WORKLOAD_CHECKPOINTS_KEPT 2.0 /* on Lustre: the last and the one being written */

/*
 * kiln's default MFU per GPU model and precision, with what each figure
 * stands on. One honest table: tests/test_workload.c checks it against
 * published runs and names the ones it misses, rather than tuning a row
 * per case. A model without a row (TRN1) is sized only with a given mfu.
 */
const char workload_mfu_date[] = "2026-12-06";

struct mfu_row {
	const char *gpu;
	enum workload_precision precision;
	double mfu;
	bool one_node; /* measured on no multi-node run: kiln's default holds within a node */
	const char *source;
};

/* clang-format off */
static const struct mfu_row mfu_defaults[] = {
	{"H100", WORKLOAD_BF16, 0.40, false,
	 "Llama 3 (Dubey et al. 2024, \"The Llama 3 Herd of Models\", table 4): 38-43% BF16 MFU on 8,192 to 16,384 H100"},
	{"H100", WORKLOAD_FP8, 0.20, false,
	 "Meta, \"The Llama 4 herd\" (2025): 390 TFLOPS per H100 in FP8 on 32K GPUs, 20% of the FP8 peak"},
	{"H200", WORKLOAD_BF16, 0.40, false,
	 "H100's figure (Llama 3): the same Hopper tensor cores; no published H200 training run"},
	{"H200", WORKLOAD_FP8, 0.20, false,
	 "H100's figure (Llama 4): the same Hopper tensor cores; no published H200 training run"},
	{"A100", WORKLOAD_BF16, 0.40, false,
	 "Llama 2 (Touvron et al. 2023, table 2): its A100 GPU-hours give 39-44% for 7B and 70B; "
	 "Narayanan et al. 2021: 44-52% of peak on 3,072 A100; PaLM (Chowdhery et al. 2022, table 3): 30.2% for MT-NLG 530B"},
	{"L40S", WORKLOAD_BF16, 0.30, true,
	 "assumed: no published large-scale run; PCIe cards without NVLink, so below the SXM parts' 0.40, and within one node"},
	{"L40S", WORKLOAD_FP8, 0.15, true,
	 "assumed: half the BF16 figure, as H100's FP8 measurement is half its BF16 one"},
	{"L4", WORKLOAD_BF16, 0.30, true,
	 "assumed: no published large-scale run; PCIe cards without NVLink, so below the SXM parts' 0.40, and within one node"},
	{"L4", WORKLOAD_FP8, 0.15, true,
	 "assumed: half the BF16 figure, as H100's FP8 measurement is half its BF16 one"},
	{"A10G", WORKLOAD_BF16, 0.30, true,
	 "assumed: no published large-scale run; PCIe cards without NVLink, so below the SXM parts' 0.40, and within one node"},
};
/* clang-format on */

static const char *precision_name(enum workload_precision p)
{
	return p == WORKLOAD_FP8 ? "fp8" : "bf16";
}

static const struct mfu_row *mfu_row(const char *gpu, enum workload_precision p)
{
	size_t i;

	for (i = 0; gpu && i < ARRAY_SIZE(mfu_defaults); i++)
		if (strcasecmp(mfu_defaults[i].gpu, gpu) == 0 && mfu_defaults[i].precision == p)
			return &mfu_defaults[i];
	return NULL;
}

double workload_default_mfu(const char *gpu, enum workload_precision p, const char **source)
{
	const struct mfu_row *r = mfu_row(gpu, p);

	if (source)
		*source = r ? r->source : NULL;
	return r ? r->mfu : 0;
}

/* Whether kiln sizes more than one node of gpu: not on a default no multi-node run measured. */
static bool scales_out(const struct workload *w, const char *gpu)
{
	const struct mfu_row *r = mfu_row(gpu, w->precision);

	return w->mfu > 0 || !r || !r->one_node;
}

/* --- counts ------------------------------------------------------------ */

static const struct {
	char unit;
	double scale;
} count_units[] = {{'K', 1e3}, {'M', 1e6}, {'B', 1e9}, {'T', 1e12}};

int workload_parse_count(const char *what, const char *text, double *count, struct kiln_error *err)
{
	const char *p = text;
	char *end;
	double v;
	size_t i;

	if (*p == '-' || *p == '+')
		p++;
	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1]))) {
		kiln_error_set(
		    err, "%s \"%s\" is not a count: write a number and a unit, like 70B or 350M",
		    what, text);
		return -1;
	}
	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	v = strtod(text, &end);
	if (end != p) {
		kiln_error_set(
		    err, "%s \"%s\" is not a count: write a number and a unit, like 70B or 350M",
		    what, text);
		return -1;
	}
	if (!*p) {
		kiln_error_set(
		    err,
		    "%s \"%s\" has no unit: write K, M, B or T after the number (thousand, "
		    "million, billion, trillion), like 70B",
		    what, text);
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(count_units); i++)
		if (p[0] == count_units[i].unit && !p[1])
			break;
	if (i == ARRAY_SIZE(count_units)) {
		kiln_error_set(err,
			       "%s \"%s\" has the unit \"%s\": the unit is K, M, B or T (thousand, "
			       "million, billion, trillion), like 70B",
			       what, text, p);
		return -1;
	}
	if (!(v > 0)) {
		kiln_error_set(err,
			       "%s \"%s\" is not more than zero: give a count above zero, like 7B",
			       what, text);
		return -1;
	}
	*count = v * count_units[i].scale;
	return 0;
}

char *workload_count_format(double count)
{
	size_t i = ARRAY_SIZE(count_units);

	while (i > 1 && count < count_units[i - 1].scale)
		i--;
	return xasprintf("%.4g%c", count / count_units[i - 1].scale, count_units[i - 1].unit);
}

/* --- the rules between fields -------------------------------------------- */

/* The name of a spec key as this caller's user wrote it: --active-params or active_params. */
static char *field_name(bool cli, const char *key)
{
	char *s, *q;

	if (!cli)
		return xstrdup(key);
	s = xasprintf("--%s", key);
	for (q = s; *q; q++)
		if (*q == '_')
			*q = '-';
	return s;
}

static int refuse(const char **field, const char *key)
{
	if (field)
		*field = key;
	return -1;
}

int workload_check_mfu(double mfu, bool cli, struct kiln_error *err)
{
	char *a;

	if (mfu > 0 && mfu <= 1)
		return 0;
	a = field_name(cli, "mfu");
	kiln_error_set(err,
		       "%s %g is outside (0, 1]: it is the fraction of the GPU's peak a run "
		       "achieves, like 0.40",
		       a, mfu);
	free(a);
	return -1;
}

int workload_check(const struct workload *w, bool cli, const char **field, struct kiln_error *err)
{
	char *a, *b;

	if (w->mfu != 0 && workload_check_mfu(w->mfu, cli, err) != 0)
		return refuse(field, "mfu");
	if (w->active_params > w->params) {
		char *act = workload_count_format(w->active_params);
		char *all = workload_count_format(w->params);

		a = field_name(cli, "active_params");
		b = field_name(cli, "params");
		kiln_error_set(
		    err,
		    "%s %s is more than %s %s: a mixture of experts activates at most all "
		    "of its parameters; give %s at most %s",
		    a, act, b, all, a, all);
		free(a);
		free(b);
		free(act);
		free(all);
		return refuse(field, "active_params");
	}
	if (w->method == WORKLOAD_LORA && w->kind == WORKLOAD_PRETRAIN) {
		a = field_name(cli, "method");
		b = field_name(cli, "kind");
		kiln_error_set(
		    err,
		    "%s lora with %s pretrain: LoRA adapts a model that is already trained; "
		    "use %s finetune, or %s full to pretrain",
		    a, b, b, a);
		free(a);
		free(b);
		return refuse(field, "method");
	}
	return 0;
}

/* --- compute and memory -------------------------------------------------- */

static double active(const struct workload *w)
{
	return w->active_params > 0 ? w->active_params : w->params;
}

static int seq_len(const struct workload *w)
{
	return w->seq_len > 0 ? w->seq_len : WORKLOAD_SEQ_LEN;
}

/* Hidden size and layers from N ≈ 12·L·h² at h = WORKLOAD_ASPECT·L. */
static void model_shape(double n, double *hidden, double *layers)
{
	*hidden = cbrt(WORKLOAD_ASPECT * n / 12.0);
	*layers = *hidden / WORKLOAD_ASPECT;
}

static double adapter_params(const struct workload *w)
{
	double h, l;

	if (w->method != WORKLOAD_LORA)
		return 0;
	model_shape(active(w), &h, &l);
	return 18.0 * WORKLOAD_LORA_RANK * h * l;
}

static double flops_per_token(const struct workload *w)
{
	return (w->method == WORKLOAD_LORA ? 4.0 : 6.0) * active(w);
}

double workload_flops(const struct workload *w)
{
	return flops_per_token(w) * w->tokens;
}

double workload_state_bytes(const struct workload *w)
{
	if (w->method == WORKLOAD_LORA)
		return 2.0 * w->params + 16.0 * adapter_params(w);
	return 16.0 * w->params;
}

double workload_activation_bytes(const struct workload *w)
{
	double h, l;

	model_shape(active(w), &h, &l);
	return (2.0 * l + 34.0) * seq_len(w) * h;
}

double workload_checkpoint_bytes(const struct workload *w)
{
	return 14.0 * (w->method == WORKLOAD_LORA ? adapter_params(w) : w->params);
}

double workload_per_gpu_bytes(const struct workload *w, int gpus)
{
	return workload_state_bytes(w) / gpus + workload_activation_bytes(w);
}

static double usable_bytes(int gpu_gib)
{
	return (1.0 - WORKLOAD_HEADROOM) * gpu_gib * GIB;
}

bool workload_fits(const struct workload *w, int gpus, int gpu_gib)
{
	return gpus > 0 && workload_per_gpu_bytes(w, gpus) <= usable_bytes(gpu_gib);
}

int workload_fit_gpus(const struct workload *w, int gpu_gib)
{
	double room = usable_bytes(gpu_gib) - workload_activation_bytes(w);
	double g;
	int n;

	if (room <= 0)
		return 0;
	g = ceil(workload_state_bytes(w) / room);
	if (g > INT_MAX / 2)
		return 0;
	n = g < 1 ? 1 : (int)g;
	/* ceil() over doubles may land one off the comparison workload_fits() makes. */
	while (!workload_fits(w, n, gpu_gib))
		n++;
	while (n > 1 && workload_fits(w, n - 1, gpu_gib))
		n--;
	return n;
}

/* --- candidates ---------------------------------------------------------- */

static const char *workload_what(const struct workload *w)
{
	if (w->kind == WORKLOAD_PRETRAIN)
		return "pretraining";
	return w->method == WORKLOAD_LORA ? "a LoRA fine-tune" : "a full fine-tune";
}

static int nodes_for(int gpus, int per_node)
{
	return (gpus + per_node - 1) / per_node;
}

/* "a full fine-tune of 70B needs 136.5 GiB per GPU on 1 × TYPE (...); the smallest that fits is
 * ..." */
static char *fit_refusal(const struct workload *w, const struct catalog_type *t, int nodes,
			 int fit_gpus)
{
	char *n = workload_count_format(w->params);
	int fit_nodes = nodes_for(fit_gpus, t->gpus);
	char *s = xasprintf("%s of %s needs %.1f GiB per GPU on %d × %s (%d GPUs of %d GiB, %.1f "
			    "GiB usable with %.0f%% left free); the smallest that fits is %d × %s "
			    "(%d GPUs)%s",
			    workload_what(w), n, workload_per_gpu_bytes(w, nodes * t->gpus) / GIB,
			    nodes, t->name, nodes * t->gpus, t->gpu_memory_gib,
			    usable_bytes(t->gpu_memory_gib) / GIB, WORKLOAD_HEADROOM * 100,
			    fit_nodes, t->name, fit_nodes * t->gpus,
			    fit_nodes > 1 && !t->efa ? ", which has no EFA to join them" : "");

	free(n);
	return s;
}

/* Why type t cannot run w at all, or NULL; sets c's throughput and fit. */
static char *candidate_skip(const struct workload *w, const struct catalog *cat,
			    struct workload_candidate *c)
{
	const struct catalog_type *t = c->type;
	const struct catalog_gpu *peak = catalog_gpu(cat, t->gpu);

	if (!peak)
		return xasprintf("kiln has no peak TFLOPS for %s: it cannot size it", t->gpu);
	c->peak_tflops = w->precision == WORKLOAD_FP8 ? peak->fp8_tflops : peak->bf16_tflops;
	if (c->peak_tflops <= 0)
		return xasprintf("%s has no %s tensor cores", t->gpu, precision_name(w->precision));
	c->mfu = w->mfu > 0 ? w->mfu : workload_default_mfu(t->gpu, w->precision, &c->mfu_source);
	if (w->mfu > 0)
		c->mfu_source = "given";
	if (c->mfu <= 0)
		return xasprintf("kiln has no measured MFU for %s in %s: give an mfu to size it",
				 t->gpu, precision_name(w->precision));
	c->fit_gpus = workload_fit_gpus(w, t->gpu_memory_gib);
	if (!c->fit_gpus && workload_activation_bytes(w) < usable_bytes(t->gpu_memory_gib))
		return xasprintf("%s needs more GPUs of %s than the %d kiln sizes",
				 workload_what(w), t->gpu, WORKLOAD_MAX_GPUS);
	if (!c->fit_gpus)
		return xasprintf("the activations of one sequence of %d tokens (%.1f GiB) fill the "
				 "%.1f usable GiB of one %s",
				 seq_len(w), workload_activation_bytes(w) / GIB,
				 usable_bytes(t->gpu_memory_gib) / GIB, t->gpu);
	if (w->nodes > 0 && nodes_for(c->fit_gpus, t->gpus) > w->nodes)
		return fit_refusal(w, t, w->nodes, c->fit_gpus);
	if (nodes_for(c->fit_gpus, t->gpus) > 1 && !t->efa)
		return xasprintf("%s needs %d nodes of %s, and %s has no EFA to join them",
				 workload_what(w), nodes_for(c->fit_gpus, t->gpus), t->name,
				 t->name);
	if (w->nodes > 1 && !t->efa)
		return xasprintf("%s has no EFA to join %d nodes", t->name, w->nodes);
	if ((w->nodes > 1 || nodes_for(c->fit_gpus, t->gpus) > 1) && !scales_out(w, t->gpu))
		return xasprintf("kiln's default MFU for %s holds within one node (no published "
				 "multi-node run): give an mfu to size more",
				 t->gpu);
	if (c->fit_gpus > WORKLOAD_MAX_GPUS)
		return xasprintf("%s needs %d GPUs of %s, more than the %d kiln sizes",
				 workload_what(w), c->fit_gpus, t->gpu, WORKLOAD_MAX_GPUS);
	return NULL;
}

/* The most nodes of t kiln would use: the GPU ceiling, one without EFA, the budget. */
static int node_limit(const struct workload *w, const struct catalog_type *t)
{
	int limit = t->efa && scales_out(w, t->gpu) ? WORKLOAD_MAX_GPUS / t->gpus : 1;

	if (w->max_hourly_usd > 0 && t->on_demand_usd > 0) {
		double afford = floor(w->max_hourly_usd / t->on_demand_usd);

		if (afford < limit)
			limit = (int)afford;
	}
	return limit;
}

/* Fill c's figures for a cluster of nodes. */
static void candidate_at(const struct workload *w, struct workload_candidate *c, int nodes)
{
	const struct catalog_type *t = c->type;

	c->nodes = nodes;
	c->gpus = nodes * t->gpus;
	c->gpu_hours = workload_flops(w) / (c->peak_tflops * 1e12 * c->mfu) / 3600.0;
	c->hours = c->gpu_hours / c->gpus;
	c->per_gpu_gib = workload_per_gpu_bytes(w, c->gpus) / GIB;
	c->hourly_usd = nodes * t->on_demand_usd;
	c->cost_usd = c->hours * c->hourly_usd;
	c->spot_cost_usd = t->spot_usd > 0 ? c->hours * nodes * t->spot_usd : -1;
	c->meets_deadline =
	    (w->deadline_s <= 0 || c->hours * 3600.0 <= w->deadline_s * (1 + 1e-9)) &&
	    (w->max_hourly_usd <= 0 || c->hourly_usd <= w->max_hourly_usd);
}

/* The most of (fits in memory, meets the deadline), within the type's limit; or as given. */
static int candidate_nodes(const struct workload *w, const struct workload_candidate *c)
{
	const struct catalog_type *t = c->type;
	double gpu_hours = workload_flops(w) / (c->peak_tflops * 1e12 * c->mfu) / 3600.0;
	int fit_nodes = nodes_for(c->fit_gpus, t->gpus), limit = node_limit(w, t);
	double need;

	if (w->nodes > 0)
		return w->nodes;
	if (w->deadline_s <= 0)
		return fit_nodes;
	need = ceil(gpu_hours * 3600.0 / (double)w->deadline_s / t->gpus - 1e-9);
	if (need > limit)
		need = limit;
	return need > fit_nodes ? (int)need : fit_nodes;
}

/* The largest cluster of c's type kiln sizes: what "the fastest" runs on. */
static int candidate_most_nodes(const struct workload *w, const struct workload_candidate *c)
{
	int limit = node_limit(w, c->type), fit_nodes = nodes_for(c->fit_gpus, c->type->gpus);

	if (w->nodes > 0)
		return w->nodes;
	return limit > fit_nodes ? limit : fit_nodes;
}

/* Cheaper first; at the same cost the shorter run, then the name. */
static bool cheaper(const struct workload_candidate *a, const struct workload_candidate *b)
{
	if (a->cost_usd != b->cost_usd)
		return a->cost_usd < b->cost_usd;
	if (a->hours != b->hours)
		return a->hours < b->hours;
	return strcmp(a->type->name, b->type->name) < 0;
}

static bool faster(const struct workload_candidate *a, const struct workload_candidate *b)
{
	if (a->hours != b->hours)
		return a->hours < b->hours;
	return cheaper(a, b);
}

static void choose(const struct workload *w, struct workload_sizing *s)
{
	size_t i;

	for (i = 0; i < s->ncands; i++) {
		const struct workload_candidate *c = &s->cands[i];
		struct workload_candidate most = *c;

		if (c->skip)
			continue;
		candidate_at(w, &most, candidate_most_nodes(w, c));
		if (!s->fastest || faster(&most, &s->fastest_run)) {
			s->fastest_run = most;
			s->fastest = &s->fastest_run;
		}
		if (!c->meets_deadline)
			continue;
		if (!s->best || cheaper(c, s->best)) {
			s->runner_up = s->best;
			s->best = c;
		} else if (!s->runner_up || cheaper(c, s->runner_up)) {
			s->runner_up = c;
		}
	}
}

/* --- Lustre --------------------------------------------------------------- */

/*
 * Capacity steps of a Lustre file system kiln's spec takes: 1200, then
 * multiples of 2400, up to the spec's largest capacity_gb (10,000,000).
 */
#define LUSTRE_MAX_GIB 9998400

static int lustre_capacity_at_least(double gib)
{
	double steps;

	if (gib <= 1200)
		return 1200;
	steps = ceil(gib / 2400.0 - 1e-9);
	return steps * 2400 >= LUSTRE_MAX_GIB ? LUSTRE_MAX_GIB : (int)steps * 2400;
}

/* The lowest throughput per TiB at which cap GiB write need_mbps; 0 when none does. */
static int lustre_per_tib(int cap, double need_mbps)
{
	static const int per_tib[] = {125, 250, 500, 1000};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(per_tib); i++)
		if (cap / 1024.0 * per_tib[i] >= need_mbps)
			return per_tib[i];
	return 0;
}

static void size_lustre(const struct workload *w, struct workload_sizing *s,
			const struct workload_candidate *run)
{
	int64_t within = w->write_within_s > 0 ? w->write_within_s : WORKLOAD_WRITE_WITHIN_S;
	double data =
	    w->dataset_bytes > 0 ? w->dataset_bytes : w->tokens * WORKLOAD_BYTES_PER_TOKEN;
	double need_mbps = s->checkpoint_bytes / 1e6 / (double)within;
	int cap = lustre_capacity_at_least(
	    (WORKLOAD_CHECKPOINTS_KEPT * s->checkpoint_bytes + data) / GIB);
	int tput = lustre_per_tib(cap, need_mbps);

	if (!tput) { /* too slow at any rate: grow it until 1000 MB/s a TiB is enough */
		int more = lustre_capacity_at_least(need_mbps / 1000.0 * 1024.0);

		cap = more > cap ? more : cap;
		tput = lustre_per_tib(cap, need_mbps);
		if (!tput) /* past the largest file system: the fastest it can be */
			tput = 1000;
	}
	s->lustre.capacity_gib = cap;
	s->lustre.throughput_per_tib = tput;
	s->lustre.write_mb_per_s = need_mbps;
	s->lustre.read_mb_per_s = run ? data / 1e6 / (run->hours * 3600.0) : 0;
}

/* --- sizing ---------------------------------------------------------------- */

static bool wanted(const struct workload *w, const struct catalog_type *t)
{
	return t->gpu && t->gpus > 0 && (!w->gpu || strcasecmp(w->gpu, t->gpu) == 0) &&
	       (!w->instance_type || strcmp(w->instance_type, t->name) == 0);
}

/* "A10G, A100, H100 ..." in the catalog's order, each once. */
static char *gpu_models(const struct catalog *cat)
{
	struct strbuf sb = {0};
	size_t i, j;

	for (i = 0; i < cat->ntypes; i++) {
		const char *g = cat->types[i].gpu;

		for (j = 0; g && j < i; j++)
			if (cat->types[j].gpu && strcasecmp(cat->types[j].gpu, g) == 0)
				break;
		if (g && j == i)
			sb_addf(&sb, "%s%s", sb.len ? ", " : "", g);
	}
	return sb_detach(&sb);
}

/* The candidate with the most GPU memory a node, whose reason says most about what is missing. */
static const struct workload_candidate *roomiest(const struct workload_sizing *s)
{
	const struct workload_candidate *r = NULL;
	size_t i;

	for (i = 0; i < s->ncands; i++) {
		const struct catalog_type *t = s->cands[i].type;

		if (!r || t->gpus * t->gpu_memory_gib > r->type->gpus * r->type->gpu_memory_gib)
			r = &s->cands[i];
	}
	return r;
}

/* Among what runs, the lowest hourly bill: what a budget error names. */
static const struct workload_candidate *cheapest_hourly(const struct workload_sizing *s)
{
	const struct workload_candidate *r = NULL;
	size_t i;

	for (i = 0; i < s->ncands; i++)
		if (!s->cands[i].skip && (!r || s->cands[i].hourly_usd < r->hourly_usd))
			r = &s->cands[i];
	return r;
}

static void deadline_missed(const struct workload *w, const struct workload_sizing *s,
			    struct kiln_error *err)
{
	const struct workload_candidate *f = s->fastest;
	double days = f->hours / 24.0;

	if (w->deadline_s > 0 && f->hours * 3600.0 > w->deadline_s * (1 + 1e-9)) {
		char *deadline = timefmt_duration_format(w->deadline_s);

		kiln_error_set(
		    err,
		    "no cluster in the catalog meets the %s deadline%s: the fastest, %d × "
		    "%s (%d %s), takes %.1f days; give a deadline of at least %.0fd%s",
		    deadline, w->max_hourly_usd > 0 ? " within the budget" : "", f->nodes,
		    f->type->name, f->gpus, f->type->gpu, days, ceil(days),
		    w->max_hourly_usd > 0 ? ", or a larger max_hourly_usd" : "");
		free(deadline);
		return;
	}
	f = cheapest_hourly(s);
	kiln_error_set(
	    err,
	    "no cluster in the catalog fits max_hourly_usd %g: the cheapest an hour that "
	    "runs it, %d × %s, costs $%.2f an hour; raise max_hourly_usd",
	    w->max_hourly_usd, f->nodes, f->type->name, f->hourly_usd);
}

int workload_size(const struct workload *w, const struct catalog *cat, struct workload_sizing *out,
		  struct kiln_error *err)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	out->flops_per_token = flops_per_token(w);
	out->flops = workload_flops(w);
	out->adapter_params = adapter_params(w);
	out->state_bytes = workload_state_bytes(w);
	out->activation_bytes = workload_activation_bytes(w);
	out->checkpoint_bytes = workload_checkpoint_bytes(w);
	out->cands = xcalloc(cat->ntypes ? cat->ntypes : 1, sizeof(*out->cands));
	for (i = 0; i < cat->ntypes; i++) {
		struct workload_candidate *c = &out->cands[out->ncands];

		if (!wanted(w, &cat->types[i]))
			continue;
		c->type = &cat->types[i];
		c->skip = candidate_skip(w, cat, c);
		if (!c->skip)
			candidate_at(w, c, candidate_nodes(w, c));
		out->ncands++;
	}
	choose(w, out);
	size_lustre(w, out, out->best ? out->best : out->fastest);
	if (!out->ncands && w->instance_type) {
		kiln_error_set(err, "the catalog has no GPU instance type \"%s\"%s%s",
			       w->instance_type, w->gpu ? " with GPU " : "", w->gpu ? w->gpu : "");
		return -1;
	}
	if (!out->ncands) {
		char *models = gpu_models(cat);

		kiln_error_set(err, "the catalog has no GPU model \"%s\": it has %s", w->gpu,
			       models);
		free(models);
		return -1;
	}
	if (!out->fastest) {
		kiln_error_set(err, "no instance type can run this workload: %s",
			       roomiest(out)->skip);
		return -1;
	}
	if (!out->best) {
		deadline_missed(w, out, err);
		return -1;
	}
	return 0;
}

void workload_sizing_free(struct workload_sizing *s)
{
	size_t i;

	for (i = 0; i < s->ncands; i++)
		free(s->cands[i].skip);
	free(s->cands);
	memset(s, 0, sizeof(*s));
}

/* --- JSON, assumptions, fragment -------------------------------------------- */

/* Rounded for output: money to the cent, the rest to four significant places. */
static json_t *money(double usd)
{
	return json_real(round(usd * 100.0) / 100.0);
}

static json_t *fig(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.4g", v);
	return json_real(strtod(buf, NULL));
}

static json_t *candidate_json(const struct workload *w, const struct workload_sizing *s,
			      const struct workload_candidate *c)
{
	json_t *o;
	char *why;

	if (!c)
		return json_null();
	o = json_object();
	why = workload_why(w, s, c);
	json_object_set_new(o, "why", json_string(why));
	free(why);
	json_object_set_new(o, "instance_type", json_string(c->type->name));
	json_object_set_new(o, "gpu", json_string(c->type->gpu));
	json_object_set_new(o, "nodes", json_integer(c->nodes));
	json_object_set_new(o, "gpus", json_integer(c->gpus));
	json_object_set_new(o, "gpu_hours", fig(c->gpu_hours));
	json_object_set_new(o, "train_days", fig(c->hours / 24.0));
	json_object_set_new(o, "hourly_usd", money(c->hourly_usd));
	json_object_set_new(o, "cost_usd", money(c->cost_usd));
	json_object_set_new(o, "spot_cost_usd",
			    c->spot_cost_usd >= 0 ? money(c->spot_cost_usd) : json_null());
	/* Capacity Blocks are priced by the offering at purchase, not by the catalog. */
	json_object_set_new(o, "capacity_block_cost_usd", json_null());
	json_object_set_new(o, "usd_per_million_tokens", money(c->cost_usd / (w->tokens / 1e6)));
	json_object_set_new(o, "mfu", fig(c->mfu));
	json_object_set_new(o, "mfu_source", json_string(c->mfu_source));
	json_object_set_new(o, "peak_tflops", fig(c->peak_tflops));
	json_object_set_new(o, "meets_deadline", json_boolean(c->meets_deadline));
	json_object_set_new(
	    o, "memory",
	    json_pack("{s:o, s:o, s:b, s:i}", "state_gib", fig(workload_state_bytes(w) / GIB),
		      "per_gpu_gib", fig(c->per_gpu_gib), "fits",
		      workload_fits(w, c->gpus, c->type->gpu_memory_gib), "fit_gpus", c->fit_gpus));
	return o;
}

json_t *workload_candidate_json(const struct workload *w, const struct workload_sizing *s,
				const struct workload_candidate *c)
{
	return candidate_json(w, s, c);
}

char *workload_why(const struct workload *w, const struct workload_sizing *s,
		   const struct workload_candidate *c)
{
	const char *limits = w->deadline_s > 0 && w->max_hourly_usd > 0
				 ? " that meets the deadline and the budget"
			     : w->deadline_s > 0     ? " that meets the deadline"
			     : w->max_hourly_usd > 0 ? " within the budget"
						     : "";

	if (c && c == s->best)
		return xasprintf("the cheapest on demand%s", limits);
	if (c && s->best && c == s->runner_up)
		return xasprintf("%.1f%% more than the recommended",
				 (c->cost_usd / s->best->cost_usd - 1) * 100);
	if (c && c == s->fastest)
		return xasprintf("the shortest run: %d GPUs, the most kiln sizes of %s", c->gpus,
				 c->type->name);
	return xstrdup("");
}

/* The chosen candidate's fields at the top level, then the rest. */
json_t *workload_json(const struct workload *w, const struct catalog *c,
		      const struct workload_sizing *s)
{
	json_t *o = candidate_json(w, s, s->best), *skipped = json_array();
	size_t i;

	if (json_is_null(o)) {
		static const char *const chosen[] = {
		    "instance_type", "gpu",	   "nodes",    "gpus",
		    "gpu_hours",     "train_days", "cost_usd", "usd_per_million_tokens",
		    "mfu",	     "memory"};

		json_decref(o);
		o = json_object();
		for (i = 0; i < ARRAY_SIZE(chosen); i++)
			json_object_set_new(o, chosen[i], json_null());
	}
	json_object_set_new(o, "flops", fig(s->flops));
	json_object_set_new(o, "tokens", fig(w->tokens));
	json_object_set_new(o, "params", fig(w->params));
	json_object_set_new(o, "active_params", fig(active(w)));
	json_object_set_new(o, "adapter_params", fig(s->adapter_params));
	json_object_set_new(o, "deadline_days",
			    w->deadline_s > 0 ? fig(w->deadline_s / 86400.0) : json_null());
	json_object_set_new(o, "checkpoint_gib", fig(s->checkpoint_bytes / GIB));
	json_object_set_new(o, "lustre",
			    json_pack("{s:i, s:i, s:o, s:o}", "capacity_gib",
				      s->lustre.capacity_gib, "throughput_per_tib",
				      s->lustre.throughput_per_tib, "write_mb_per_s",
				      fig(s->lustre.write_mb_per_s), "dataset_read_mb_per_s",
				      fig(s->lustre.read_mb_per_s)));
	json_object_set_new(o, "runner_up", candidate_json(w, s, s->runner_up));
	json_object_set_new(o, "fastest", candidate_json(w, s, s->fastest));
	for (i = 0; i < s->ncands; i++)
		if (s->cands[i].skip)
			json_array_append_new(skipped, json_pack("{s:s, s:s}", "instance_type",
								 s->cands[i].type->name, "reason",
								 s->cands[i].skip));
	json_object_set_new(o, "skipped", skipped);
	json_object_set_new(o, "catalog",
			    json_pack("{s:s, s:s, s:s, s:s?, s:s}", "provider", c->provider,
				      "region", c->region, "prices_date", c->date, "peaks_date",
				      c->gpus ? c->gpus->date : NULL, "mfu_date",
				      workload_mfu_date));
	json_object_set_new(o, "assumptions", workload_assumptions(w, c, s));
	return o;
}

static void assume(json_t *list, const char *fmt, ...) KILN_PRINTF(2, 3);

static void assume(json_t *list, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	json_array_append_new(list, json_string(s));
	free(s);
}

json_t *workload_assumptions(const struct workload *w, const struct catalog *c,
			     const struct workload_sizing *s)
{
	const struct workload_candidate *run = s->best ? s->best : s->fastest;
	const struct catalog_gpu *peak = run ? catalog_gpu(c, run->type->gpu) : NULL;
	json_t *a = json_array();

	if (w->method == WORKLOAD_LORA)
		assume(a,
		       "LoRA costs 4·N·D FLOPs: the backward pass carries the activations' "
		       "gradients through the frozen weights but computes none of theirs (Hu et "
		       "al. 2021, LoRA); dense training is 6·N·D (Kaplan et al. 2020; Narayanan et "
		       "al. 2021; EleutherAI, Transformer Math 101)");
	else
		assume(a,
		       "training costs 6·N·D FLOPs, 2·N·D forward and 4·N·D backward, N the "
		       "active parameters (Kaplan et al. 2020; Narayanan et al. 2021; EleutherAI, "
		       "Transformer Math 101)");
	if (run && w->mfu > 0)
		assume(a, "MFU %.2f, as given", run->mfu);
	else if (run)
		assume(a,
		       "MFU %.2f for %s in %s is an assumption (kiln's table of %s): %s; override "
		       "it with --mfu or workload.mfu",
		       run->mfu, run->type->gpu, precision_name(w->precision), workload_mfu_date,
		       run->mfu_source);
	if (peak)
		assume(a, "%s peaks at %g dense %s TFLOPS: %s (checked %s)", peak->model,
		       run->peak_tflops, precision_name(w->precision), peak->source, c->gpus->date);
	assume(a,
	       "time falls linearly with GPUs at that MFU, up to %d GPUs (Llama 3 405B's "
	       "run, the largest published); kiln sizes no larger cluster",
	       WORKLOAD_MAX_GPUS);
	if (w->method == WORKLOAD_LORA)
		assume(a,
		       "memory: frozen weights in bf16 (2 bytes a parameter) and, for adapters of "
		       "rank 16 on the attention and MLP projections (%.3g parameters), 16 bytes "
		       "of weights, gradients and Adam state each, sharded over every GPU "
		       "(ZeRO-3/FSDP; Rajbhandari et al. 2020, ZeRO)",
		       s->adapter_params);
	else
		assume(a,
		       "memory: mixed-precision Adam keeps 16 bytes a parameter (2 weights, 2 "
		       "gradients, 12 of fp32 master weights and moments), sharded over every GPU "
		       "(ZeRO-3/FSDP; Rajbhandari et al. 2020, ZeRO)");
	assume(a,
	       "activations with full recomputation, micro-batch 1 at %d tokens: %.1f GiB a "
	       "GPU (each layer's input, and one layer's working set, Korthikanti et al. "
	       "2022), the shape from N = 12·L·h² at h = 128·L; %.0f%% of each GPU's memory "
	       "left free",
	       seq_len(w), s->activation_bytes / GIB, WORKLOAD_HEADROOM * 100);
	assume(a,
	       "prices: the catalog's on-demand and typical spot rates (%s, %s); Capacity "
	       "Blocks are priced by the offering at purchase",
	       c->region, c->date);
	assume(a,
	       "a checkpoint holds bf16 weights and fp32 master weights and moments, 14 "
	       "bytes a trained parameter; Lustre holds two and the dataset (%s), read once "
	       "over the run",
	       w->dataset_bytes > 0 ? "as given" : "4 bytes a token");
	return a;
}

char *workload_fragment(const struct workload *w, const struct workload_sizing *s)
{
	const struct workload_candidate *b = s->best;
	struct strbuf sb = {0};

	(void)w;
	if (!b)
		return xstrdup("");
	sb_addf(&sb, "# kiln size: %d × %s (%d %s), %.1f days, $%.0f on demand\n", b->nodes,
		b->type->name, b->gpus, b->type->gpu, b->hours / 24.0, b->cost_usd);
	if (b->nodes > 1)
		sb_adds(&sb, "# more than one node: set network.fabric to efa\n");
	sb_adds(&sb, "compute:\n  trainers:\n");
	sb_addf(&sb, "    instance_type: %s\n    count: %d\n", b->type->name, b->nodes);
	if (b->nodes > 1)
		sb_adds(&sb, "    gang: true\n");
	sb_adds(&sb, "    market: on-demand\n");
	sb_adds(&sb, "storage:\n");
	sb_addf(
	    &sb,
	    "  scratch: {tier: lustre, capacity_gb: %d, throughput_per_tib: %d, mount: /lustre}\n",
	    s->lustre.capacity_gib, s->lustre.throughput_per_tib);
	return sb_detach(&sb);
}
