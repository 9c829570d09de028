/*
 * catalog.h - instance types with their GPUs and prices, and resolving a
 * spec's `gpu: MODEL:COUNT` to the cheapest type that fits.
 *
 * The data is shipped with kiln, one dated table per provider (each
 * provider's catalog() answers it); prices are on-demand and spot USD per
 * hour in one region. Providers and the engine may both include this.
 */
#ifndef KILN_CATALOG_H
#define KILN_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

struct catalog_type {
	const char *name;   /* "p5.48xlarge" */
	const char *gpu;    /* "H100", or NULL without GPUs */
	int gpus;	    /* per node */
	int gpu_memory_gib; /* per GPU */
	int vcpus;
	int memory_gib;
	bool efa;	      /* supports EFA */
	int nvme_gb;	      /* local instance storage, 0 for none */
	double on_demand_usd; /* per hour */
	double spot_usd;      /* per hour, typical */
	int efa_interfaces;   /* the most EFA interfaces (one per network card); 0 without EFA */
	bool capacity_block;  /* sold as Capacity Blocks for ML */
};

/*
 * A price that is not an instance-hour: storage by the GB-month, an address
 * by the hour. Keys are the provider's own ("ebs:gp3").
 */
struct catalog_rate {
	const char *key;
	const char *unit; /* "GB-month", "hour" */
	double usd;	  /* per unit */
};

/*
 * A GPU model's dense peak (no structured sparsity) in TFLOPS, as its
 * vendor's datasheet gives it; 0 for a precision its tensor cores lack.
 * One table, dated, shared by every catalog that sells the model.
 */
struct catalog_gpu {
	const char *model;  /* "H100", as catalog_type.gpu spells it */
	double bf16_tflops; /* dense BF16 with FP32 accumulate */
	double fp8_tflops;  /* dense FP8 */
	const char *source; /* the datasheet the figures come from */
};

/* The table of peaks: its rows and when they were checked. */
struct catalog_gpus {
	const char *date; /* YYYY-MM-DD */
	const struct catalog_gpu *rows;
	size_t nrows;
};

struct catalog {
	const char *provider; /* "aws" */
	const char *region;   /* prices are for this region */
	const char *date;     /* when the prices were taken, YYYY-MM-DD */
	const struct catalog_type *types;
	size_t ntypes;
	const struct catalog_rate *rates;
	size_t nrates;
	const struct catalog_gpus *gpus; /* the peaks of the GPU models its types hold */
};

const struct catalog_type *catalog_find(const struct catalog *c, const char *name);

/*
 * The cheapest type with count GPUs of model (case-blind) and, when efa,
 * EFA; ties go to the name that sorts first. *runner_up is the next cheapest
 * (NULL when there is none). -1 with err when nothing fits: the error lists
 * the GPU models the catalog has, or the counts it has for that model.
 */
int catalog_resolve(const struct catalog *c, const char *model, int count, bool efa,
		    const struct catalog_type **best, const struct catalog_type **runner_up,
		    struct kiln_error *err);

/* The peaks of a GPU model (case-blind); NULL when the catalog has none. */
const struct catalog_gpu *catalog_gpu(const struct catalog *c, const char *model);

/* The rate with this key; NULL when the catalog has none. */
const struct catalog_rate *catalog_rate(const struct catalog *c, const char *key);

/* The price per node-hour for a market ("spot" or anything else: on-demand). */
double catalog_price(const struct catalog_type *t, bool spot);

#endif
