/*
 * spec_workload.c - the workload: section, the training run the cluster is
 * for (kiln-spec(5) WORKLOAD):
 *
 *   workload: {kind: pretrain, params: 70B, tokens: 2T, deadline: 30d,
 *              checkpoint: {every: 2h, write_within: 5m}, dataset: {size: 20TiB}}
 *
 * Shape and ranges only, with the words of `kiln size` (workload.c's
 * workload_parse_count and workload_check make both messages): what the
 * catalog can do with it (a deadline no cluster meets, the counts a group
 * leaves to it) is validate's, through workload_spec.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "spec_load.h"
#include "timefmt.h"

const char *const spec_workload_keys[] = {"kind",      "params",     "active_params", "tokens",
					  "precision", "method",     "seq_len",	      "deadline",
					  "mfu",       "checkpoint", "dataset"};
const char *const spec_checkpoint_keys[] = {"every", "write_within"};
const char *const spec_dataset_keys[] = {"size"};
const char *const spec_workload_kinds[] = {"pretrain", "finetune"};
const char *const spec_workload_precisions[] = {"bf16", "fp8"};
const char *const spec_workload_methods[] = {"full", "lora"};

/* A count with its unit ("70B") at key; false after the error. */
static bool load_count(struct loader *ld, const struct ynode *map, const char *key, bool required,
		       double *out)
{
	const struct ynode *v = ydoc_get(map, key);
	char *path = xasprintf("workload.%s", key), *text;
	struct kiln_error err = {{0}, {0}};
	bool ok = true;

	if (!v && required) {
		diag_hint(spec_err(ld, map, "missing required key '%s' in workload", key),
			  "add %s: with its unit, like %s", key,
			  strcmp(key, "tokens") == 0 ? "2T" : "70B");
		ok = false;
	} else if (v && !(text = spec_scalar(ld, v, path))) {
		ok = false;
	} else if (v) {
		if (workload_parse_count(path, text, out, &err) != 0) {
			spec_err(ld, v, "%s", err.msg);
			ok = false;
		}
		free(text);
	}
	free(path);
	return ok;
}

/* A duration at key that must be longer than zero; false after the error. */
static bool load_span(struct loader *ld, const struct ynode *map, const char *path, const char *key,
		      int64_t *out)
{
	char *sub = xasprintf("%s.%s", path, key);
	enum got g = spec_get_duration(ld, map, key, sub, out);

	if (g == GOT_OK && *out <= 0) {
		diag_hint(spec_err(ld, ydoc_get(map, key), "%s must be longer than 0s", sub),
			  "write a duration like 30d, 2h or 5m, or remove %s", key);
		g = GOT_BAD;
	}
	free(sub);
	return g != GOT_BAD;
}

/* "20TiB", "512GiB", "1.5PiB": bytes, or -1. */
static double bytes_of(const char *s)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {{"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"PiB", 1125899906842624.0}};
	char *end;
	double v;
	size_t i;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	v = strtod(s, &end);
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (strcmp(end, units[i].unit) == 0)
			return isfinite(v) ? v * units[i].scale : -1;
	return -1;
}

static void load_dataset(struct loader *ld, const struct ynode *n, struct workload *w)
{
	const struct ynode *v;
	char *text;
	double bytes;

	if (!n || !spec_expect_map(ld, n, "workload.dataset"))
		return;
	spec_check_keys(ld, n, "in workload.dataset", spec_dataset_keys,
			ARRAY_SIZE(spec_dataset_keys));
	if (!(v = ydoc_get(n, "size")) || !(text = spec_scalar(ld, v, "workload.dataset.size")))
		return;
	bytes = bytes_of(text);
	if (bytes < 0)
		diag_hint(spec_err(ld, v, "workload.dataset.size: '%s' is not a size", text),
			  "write a number and a unit (GiB, TiB or PiB), like 20TiB");
	else if (bytes == 0)
		diag_hint(spec_err(ld, v, "workload.dataset.size must be more than 0"),
			  "give the dataset's size, like 20TiB, or remove dataset: (kiln then "
			  "counts 4 bytes a token)");
	else
		w->dataset_bytes = bytes;
	free(text);
}

static void load_checkpoint(struct loader *ld, const struct ynode *n, struct spec_workload *sw)
{
	const char *path = "workload.checkpoint";

	if (!n || !spec_expect_map(ld, n, path))
		return;
	spec_check_keys(ld, n, "in workload.checkpoint", spec_checkpoint_keys,
			ARRAY_SIZE(spec_checkpoint_keys));
	if (!load_span(ld, n, path, "every", &sw->checkpoint_every) ||
	    !load_span(ld, n, path, "write_within", &sw->w.write_within_s))
		return;
	if (sw->checkpoint_every > 0 && sw->w.write_within_s > sw->checkpoint_every) {
		char *within = timefmt_duration_format(sw->w.write_within_s);
		char *every = timefmt_duration_format(sw->checkpoint_every);

		diag_hint(spec_err(ld, ydoc_get(n, "write_within"),
				   "workload.checkpoint.write_within %s is longer than "
				   "checkpoint.every %s: the next checkpoint would start before "
				   "this one is written",
				   within, every),
			  "give write_within at most %s, like 5m", every);
		free(within);
		free(every);
	}
}

/* The enums, each into its field of w; false when one was bad. */
static bool load_words(struct loader *ld, const struct ynode *n, struct workload *w)
{
	int kind = 0, precision = 0, method = 0;
	bool ok = true;

	ok &= spec_get_enum(ld, n, "kind", "workload.kind", false, spec_workload_kinds,
			    ARRAY_SIZE(spec_workload_kinds), &kind) != GOT_BAD;
	ok &=
	    spec_get_enum(ld, n, "precision", "workload.precision", false, spec_workload_precisions,
			  ARRAY_SIZE(spec_workload_precisions), &precision) != GOT_BAD;
	ok &= spec_get_enum(ld, n, "method", "workload.method", false, spec_workload_methods,
			    ARRAY_SIZE(spec_workload_methods), &method) != GOT_BAD;
	w->kind = kind ? WORKLOAD_FINETUNE : WORKLOAD_PRETRAIN;
	w->precision = precision ? WORKLOAD_FP8 : WORKLOAD_BF16;
	w->method = method ? WORKLOAD_LORA : WORKLOAD_FULL;
	return ok;
}

/* mfu, where 0 is a value given, not kiln's default. */
static bool load_mfu(struct loader *ld, const struct ynode *n, struct workload *w)
{
	struct kiln_error err = {{0}, {0}};
	double mfu = 0;
	enum got g = spec_get_number(ld, n, "mfu", "workload.mfu", &mfu);

	if (g != GOT_OK)
		return g == GOT_NONE;
	if (workload_check_mfu(mfu, false, &err) != 0) {
		spec_err(ld, ydoc_get(n, "mfu"), "workload.%s", err.msg);
		return false;
	}
	w->mfu = mfu;
	return true;
}

void spec_load_workload(struct loader *ld, const struct ynode *n)
{
	struct spec_workload *sw = &ld->spec->workload;
	struct kiln_error err = {{0}, {0}};
	const char *field = NULL;
	bool ok = true;

	if (!n)
		return;
	sw->node = n;
	if (!spec_expect_map(ld, n, "workload")) {
		ld->spec->broken |= SPEC_BROKEN_WORKLOAD;
		return;
	}
	sw->set = true;
	ok &= spec_check_keys(ld, n, "in workload", spec_workload_keys,
			      ARRAY_SIZE(spec_workload_keys));
	ok &= load_words(ld, n, &sw->w);
	ok &= load_count(ld, n, "params", true, &sw->w.params);
	ok &= load_count(ld, n, "active_params", false, &sw->w.active_params);
	ok &= load_count(ld, n, "tokens", true, &sw->w.tokens);
	ok &= spec_get_int(ld, n, "seq_len", "workload.seq_len", false, 1, 1048576,
			   &sw->w.seq_len) != GOT_BAD;
	ok &= load_span(ld, n, "workload", "deadline", &sw->w.deadline_s);
	ok &= load_mfu(ld, n, &sw->w);
	load_checkpoint(ld, ydoc_get(n, "checkpoint"), sw);
	load_dataset(ld, ydoc_get(n, "dataset"), &sw->w);
	/* The rules between fields, once each field is known good. */
	if (ok && workload_check(&sw->w, false, &field, &err) != 0)
		spec_err(ld, spec_value_node(n, field), "workload.%s", err.msg);
	if (!ok)
		ld->spec->broken |= SPEC_BROKEN_WORKLOAD;
}
