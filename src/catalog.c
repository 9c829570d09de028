/*
 * catalog.c - looking up instance types and resolving `gpu: MODEL:COUNT`;
 * see catalog.h. The data lives with the providers (providers/catalog_*.c);
 * this file only reads it and never names a cloud.
 */
#include "catalog.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct catalog_type *catalog_find(const struct catalog *c, const char *name)
{
	size_t i;

	for (i = 0; name && i < c->ntypes; i++)
		if (strcmp(c->types[i].name, name) == 0)
			return &c->types[i];
	return NULL;
}

const struct catalog_rate *catalog_rate(const struct catalog *c, const char *key)
{
	size_t i;

	for (i = 0; key && i < c->nrates; i++)
		if (strcmp(c->rates[i].key, key) == 0)
			return &c->rates[i];
	return NULL;
}

const struct catalog_gpu *catalog_gpu(const struct catalog *c, const char *model)
{
	size_t i;

	for (i = 0; model && c->gpus && i < c->gpus->nrows; i++)
		if (strcasecmp(c->gpus->rows[i].model, model) == 0)
			return &c->gpus->rows[i];
	return NULL;
}

double catalog_price(const struct catalog_type *t, bool spot)
{
	return spot ? t->spot_usd : t->on_demand_usd;
}

/* Cheaper first; at the same price the name that sorts first. */
static bool cheaper(const struct catalog_type *a, const struct catalog_type *b)
{
	if (a->on_demand_usd != b->on_demand_usd)
		return a->on_demand_usd < b->on_demand_usd;
	return strcmp(a->name, b->name) < 0;
}

/* Case-blind, with runs of digits compared as numbers: L4 < L40S, A10G < A100. */
static int natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			char *end_a, *end_b;
			unsigned long x = strtoul(a, &end_a, 10);
			unsigned long y = strtoul(b, &end_b, 10);

			a = end_a;
			b = end_b;

			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return tolower((unsigned char)*a) - tolower((unsigned char)*b);
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int natural_qsort(const void *a, const void *b)
{
	return natural_cmp(*(const char *const *)a, *(const char *const *)b);
}

static int int_qsort(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* "8", "4 or 8", "1, 4 or 8". */
static void counts_text(struct strbuf *sb, const int *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i)
			sb_adds(sb, i + 1 == n ? " or " : ", ");
		sb_addf(sb, "%d", v[i]);
	}
}

/* The distinct GPU counts per node that model comes in (efa_only: with EFA), ascending. */
static size_t model_counts(const struct catalog *c, const char *model, bool efa_only, int *out)
{
	size_t i, j, n = 0;

	for (i = 0; i < c->ntypes; i++) {
		const struct catalog_type *t = &c->types[i];

		if (!t->gpu || strcasecmp(t->gpu, model) != 0 || (efa_only && !t->efa))
			continue;
		for (j = 0; j < n && out[j] != t->gpus; j++)
			;
		if (j == n)
			out[n++] = t->gpus;
	}
	qsort(out, n, sizeof(*out), int_qsort);
	return n;
}

static void unknown_model(const struct catalog *c, const char *model, struct kiln_error *err)
{
	const char **models = xcalloc(c->ntypes + 1, sizeof(*models));
	struct strbuf list = {0};
	const char *near;
	size_t i, j, n = 0;

	for (i = 0; i < c->ntypes; i++) {
		const char *g = c->types[i].gpu;

		if (!g)
			continue;
		for (j = 0; j < n && strcmp(models[j], g) != 0; j++)
			;
		if (j == n)
			models[n++] = g;
	}
	qsort(models, n, sizeof(*models), natural_qsort);
	for (i = 0; i < n; i++)
		sb_addf(&list, "%s%s", i ? ", " : "", models[i]);
	kiln_error_set(err, "the catalog (%s %s, prices of %s) has no GPU model '%s'; it has: %s",
		       c->provider, c->region, c->date, model, list.buf ? list.buf : "none");
	near = str_closest(model, models, n);
	if (near)
		kiln_error_hint(err, "did you mean '%s'?", near);
	else
		kiln_error_hint(err, "write gpu: MODEL:COUNT with one of those models, or name an "
				     "instance_type: instead");
	sb_release(&list);
	free(models);
}

int catalog_resolve(const struct catalog *c, const char *model, int count, bool efa,
		    const struct catalog_type **best, const struct catalog_type **runner_up,
		    struct kiln_error *err)
{
	const char *canon = NULL; /* the catalog's spelling of model */
	bool count_exists = false;
	struct strbuf sb = {0};
	int *counts;
	size_t i, n;

	*best = *runner_up = NULL;
	for (i = 0; i < c->ntypes; i++) {
		const struct catalog_type *t = &c->types[i];

		if (!t->gpu || strcasecmp(t->gpu, model) != 0)
			continue;
		canon = t->gpu;
		if (t->gpus != count)
			continue;
		count_exists = true;
		if (efa && !t->efa)
			continue;
		if (!*best || cheaper(t, *best)) {
			*runner_up = *best;
			*best = t;
		} else if (!*runner_up || cheaper(t, *runner_up)) {
			*runner_up = t;
		}
	}
	if (*best)
		return 0;
	if (!canon) {
		unknown_model(c, model, err);
		return -1;
	}
	counts = xcalloc(c->ntypes + 1, sizeof(*counts));
	if (!count_exists) {
		n = model_counts(c, canon, false, counts);
		counts_text(&sb, counts, n);
		kiln_error_set(err,
			       "the catalog (%s %s, prices of %s) has %s %s %s GPU%s per node, "
			       "not %d",
			       c->provider, c->region, c->date, canon,
			       n == 1 ? "only with" : "with", sb.buf,
			       n == 1 && counts[0] == 1 ? "" : "s", count);
		for (i = 0; i + 1 < n && counts[i] < count; i++)
			;
		kiln_error_hint(err, "try gpu: %s:%d", canon, counts[i]);
	} else {
		n = model_counts(c, canon, true, counts);
		counts_text(&sb, counts, n);
		if (n)
			kiln_error_set(err,
				       "the catalog (%s %s, prices of %s) has no type with %d× "
				       "%s and EFA; %s has EFA only with %s GPU%s per node",
				       c->provider, c->region, c->date, count, canon, canon, sb.buf,
				       n == 1 && counts[0] == 1 ? "" : "s");
		else
			kiln_error_set(err,
				       "the catalog (%s %s, prices of %s) has no type with %d× "
				       "%s and EFA; no %s type has EFA",
				       c->provider, c->region, c->date, count, canon, canon);
		kiln_error_hint(err, "use network.fabric: ena for this GPU, or %s",
				n ? "a GPU count that has EFA" : "another GPU model");
	}
	sb_release(&sb);
	free(counts);
	return -1;
}
