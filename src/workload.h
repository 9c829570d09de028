/*
 * workload.h - from a training workload (model size, tokens, precision,
 * deadline) to the cluster that runs it: FLOPs, memory, nodes, GPU-hours,
 * days and cost per instance type of a catalog, the cheapest that meets the
 * deadline, the runner-up and the fastest, and the Lustre its checkpoints
 * need. Pure arithmetic over the catalog the provider answers: no cloud
 * named, no I/O. `kiln size` prints it; a spec's `workload:` block plans
 * with it.
 *
 * The figures and where they come from are in workload.c (the model of
 * compute and memory, kiln's default MFU table) and in the catalog (peak
 * TFLOPS per GPU model, prices); workload_assumptions() lists them as text.
 */
#ifndef KILN_WORKLOAD_H
#define KILN_WORKLOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "catalog.h"

enum workload_kind { WORKLOAD_PRETRAIN, WORKLOAD_FINETUNE };
enum workload_precision { WORKLOAD_BF16, WORKLOAD_FP8 };
enum workload_method { WORKLOAD_FULL, WORKLOAD_LORA };

/* Defaults for the fields a caller leaves 0. */
#define WORKLOAD_SEQ_LEN 4096
#define WORKLOAD_WRITE_WITHIN_S 300 /* a checkpoint written within 5 minutes */

/* What one training run is. A zero field takes its default. */
struct workload {
	enum workload_kind kind;
	double params;	      /* total parameters, every expert's */
	double active_params; /* parameters each token goes through; 0: params */
	double tokens;	      /* tokens trained on */
	enum workload_precision precision;
	enum workload_method method;
	int seq_len;		   /* 0: WORKLOAD_SEQ_LEN */
	int64_t deadline_s;	   /* 0: none */
	double mfu;		   /* 0: kiln's default for each GPU and precision */
	double max_hourly_usd;	   /* 0: no budget */
	const char *gpu;	   /* only this GPU model (case-blind); NULL: every one */
	const char *instance_type; /* only this type (a spec's group); NULL: every one */
	int nodes;		   /* this many nodes; 0: kiln chooses */
	int64_t write_within_s;	   /* 0: WORKLOAD_WRITE_WITHIN_S */
	double dataset_bytes;	   /* 0: the tokens at 4 bytes each */
};

/* One instance type sized for the workload. */
struct workload_candidate {
	const struct catalog_type *type;
	double peak_tflops; /* the GPU's dense peak in the precision */
	double mfu;
	const char *mfu_source; /* the measurement behind the default, or "given" */
	int fit_gpus;		/* the fewest GPUs the model state fits on */
	int nodes, gpus;
	double per_gpu_gib; /* memory each GPU holds at this size */
	double gpu_hours, hours;
	double hourly_usd;    /* on-demand, the whole cluster */
	double cost_usd;      /* on-demand, the whole run */
	double spot_cost_usd; /* < 0: the catalog has no spot rate */
	bool meets_deadline;  /* and the budget: it can be chosen */
	char *skip;	      /* why it cannot run the workload at all; NULL when it can */
};

/* The Lustre file system the workload's checkpoints and data need. */
struct workload_lustre {
	int capacity_gib;
	int throughput_per_tib; /* MB/s per TiB: 125, 250, 500 or 1000 */
	double write_mb_per_s;	/* a checkpoint within write_within */
	double read_mb_per_s;	/* the dataset over the chosen cluster's run */
};

struct workload_sizing {
	double flops;		 /* the whole run */
	double flops_per_token;	 /* 6 x active params; 4 x with LoRA */
	double adapter_params;	 /* LoRA's trained parameters; 0 for full */
	double state_bytes;	 /* model state across every GPU */
	double activation_bytes; /* per GPU */
	double checkpoint_bytes;
	struct workload_candidate *cands; /* every GPU type of the catalog (after --gpu) */
	size_t ncands;
	const struct workload_candidate *best;	    /* cheapest meeting deadline and budget */
	const struct workload_candidate *runner_up; /* the next cheapest that does */
	const struct workload_candidate *fastest;   /* the shortest run: a type at its most nodes */
	struct workload_lustre lustre;		    /* for best, else fastest */
	struct workload_candidate fastest_run;	    /* what fastest points at (skip NULL) */
};

/*
 * "70B", "7.5B", "350M", "2T": a count with its unit (K, M, B or T, a
 * thousand to a trillion). what names the field in the error ("--params",
 * "workload.params"). -1 with err when there is no unit, another unit, or
 * the count is not above zero.
 */
int workload_parse_count(const char *what, const char *text, double *count, struct kiln_error *err);
/* The shortest form of a count with its unit ("70B", "7.5B", "350M"); caller frees. */
char *workload_count_format(double count);

/*
 * The rules between fields: mfu in (0, 1], active_params at most params,
 * LoRA only to fine-tune, counts above zero. cli names the fields as
 * kiln size's flags (--active-params), else as the spec's keys
 * (active_params). -1 with err, and *field the spec key at fault.
 */
int workload_check(const struct workload *w, bool cli, const char **field, struct kiln_error *err);
/* An mfu as given (where 0 is not "the default"): -1 with err outside (0, 1]. */
int workload_check_mfu(double mfu, bool cli, struct kiln_error *err);

/*
 * Size w over the catalog's GPU types. 0 with out->best set; -1 with err
 * when no type can run it (the error gives the reason of the one with the
 * most GPU memory per node) or none meets the deadline and budget (the
 * error names the fastest and its time). *out is filled either way and is
 * freed with workload_sizing_free().
 */
int workload_size(const struct workload *w, const struct catalog *c, struct workload_sizing *out,
		  struct kiln_error *err);
void workload_sizing_free(struct workload_sizing *s);

/* The pieces, for tests and for a spec that states its own compute. */
double workload_flops(const struct workload *w);
double workload_state_bytes(const struct workload *w);
double workload_activation_bytes(const struct workload *w);
double workload_checkpoint_bytes(const struct workload *w);
/* The memory each of gpus GPUs holds; fits when at most what a GPU of gpu_gib leaves free. */
double workload_per_gpu_bytes(const struct workload *w, int gpus);
bool workload_fits(const struct workload *w, int gpus, int gpu_gib);
/* The fewest GPUs of gpu_gib the workload fits on; 0 when none does. */
int workload_fit_gpus(const struct workload *w, int gpu_gib);
/* kiln's default MFU for a GPU model and precision (0 when it has none), and its source. */
double workload_default_mfu(const char *gpu, enum workload_precision p, const char **source);
/* When kiln's default MFU table was last checked against its sources. */
extern const char workload_mfu_date[];

/*
 * The sizing as JSON: the fields of kiln-size(1) (flops, gpu_hours,
 * train_days, instance_type, gpu, nodes, gpus, cost_usd,
 * usd_per_million_tokens, mfu, memory, checkpoint_gib, lustre, runner_up,
 * fastest, assumptions). best may be NULL (nothing met the deadline): the
 * chosen fields are then null.
 */
json_t *workload_json(const struct workload *w, const struct catalog *c,
		      const struct workload_sizing *s);
/*
 * One candidate's figures as workload_json() gives the runner-up's (why,
 * instance_type, nodes, train_days, cost_usd, memory...); null for NULL.
 */
json_t *workload_candidate_json(const struct workload *w, const struct workload_sizing *s,
				const struct workload_candidate *c);
/* Why c is shown: the recommended, the runner-up ("12.3% more") or the fastest; caller frees. */
char *workload_why(const struct workload *w, const struct workload_sizing *s,
		   const struct workload_candidate *c);
/* The assumptions behind the figures, each with its source, in the order kiln-size(1) lists them.
 */
json_t *workload_assumptions(const struct workload *w, const struct catalog *c,
			     const struct workload_sizing *s);
/*
 * The compute: and storage: fragment of a spec for the chosen cluster
 * (group "trainers", store "scratch"); caller frees.
 */
char *workload_fragment(const struct workload *w, const struct workload_sizing *s);

#endif
