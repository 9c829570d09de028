/*
 * cmd_size.c - `kiln size`: the cluster a training workload needs, without
 * a spec. Parses the workload from flags, sizes it over the provider's
 * catalog (workload.c does the arithmetic) and prints the recommendation as
 * text, JSON or the compute:/storage: fragment of a spec. Owns no
 * arithmetic and names no cloud.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cost.h"
#include "jsonw.h"
#include "provider.h"
#include "timefmt.h"
#include "util.h"
#include "workload.h"
#include "workload_spec.h"

enum {
	OPT_PARAMS = 1,
	OPT_TOKENS,
	OPT_ACTIVE,
	OPT_KIND,
	OPT_PRECISION,
	OPT_METHOD,
	OPT_SEQ_LEN,
	OPT_DEADLINE,
	OPT_MFU,
	OPT_MAX_HOURLY,
	OPT_GPU,
	OPT_NODES,
	OPT_WRITE_WITHIN,
	OPT_DATASET,
	OPT_PROVIDER,
	OPT_JSON,
	OPT_WRITE,
};

static const struct cli_option options[] = {
    {"params", 0, true, OPT_PARAMS, "N",
     "the model's parameters, like 70B, 7.5B or 350M (required)"},
    {"tokens", 0, true, OPT_TOKENS, "N", "the tokens it trains on, like 2T or 300B (required)"},
    {"active-params", 0, true, OPT_ACTIVE, "N",
     "a mixture of experts' parameters per token (default: --params)"},
    {"kind", 0, true, OPT_KIND, "KIND", "pretrain (default) or finetune"},
    {"precision", 0, true, OPT_PRECISION, "P", "bf16 (default) or fp8"},
    {"method", 0, true, OPT_METHOD, "M", "full (default) or lora (fine-tuning only)"},
    {"seq-len", 0, true, OPT_SEQ_LEN, "N", "tokens per sequence (default 4096)"},
    {"deadline", 0, true, OPT_DEADLINE, "DURATION", "finish within this, like 30d"},
    {"mfu", 0, true, OPT_MFU, "F",
     "model FLOPs utilization, 0 < F <= 1, instead of kiln's default per GPU"},
    {"max-hourly-usd", 0, true, OPT_MAX_HOURLY, "USD", "the most the cluster may cost an hour"},
    {"gpu", 0, true, OPT_GPU, "MODEL", "only this GPU model (default: every one in the catalog)"},
    {"nodes", 0, true, OPT_NODES, "N", "this many nodes instead of the fewest that do"},
    {"write-within", 0, true, OPT_WRITE_WITHIN, "DURATION",
     "write a checkpoint within this (default 5m)"},
    {"dataset-size", 0, true, OPT_DATASET, "GIB",
     "the dataset's size in GiB (default: 4 bytes a token)"},
    {"provider", 0, true, OPT_PROVIDER, "NAME",
     "whose catalog to size on (default: the first cloud)"},
    {"json", 0, false, OPT_JSON, NULL, "print the sizing as JSON"},
    {"write", 0, false, OPT_WRITE, NULL, "print the compute: and storage: fragment of a spec"},
};

const struct cmd_info cmd_size_info = {
    .name = "size",
    .usage = "--params N --tokens N [--gpu MODEL] [--deadline DURATION] [OPTIONS]",
    .summary = "size a training cluster from the model, the tokens and the deadline",
    .description =
	"Work out the cluster a training run needs: its FLOPs (6·N·D), GPU-hours, memory\n"
	"(ZeRO-3 sharded model state and activations), nodes, days and cost on every GPU\n"
	"type of the catalog, and recommend the cheapest that meets the deadline and\n"
	"--max-hourly-usd, with the runner-up, the fastest, and the Lustre file system that\n"
	"writes a checkpoint in time. MFU is an assumption: kiln's default per GPU and\n"
	"precision comes from published runs; --mfu overrides it. Exit 1 on bad input or\n"
	"when nothing meets the deadline.",
    .options = options,
    .noptions = sizeof(options) / sizeof(options[0]),
    .see_also = "kiln-size(1)",
};

struct size_args {
	struct workload w;
	const char *params, *tokens;
	const char *provider;
	bool json, write;
};

/* pretrain|finetune and the like: the index of text in words, or -1 after the error. */
static int parse_word(const struct cli *cli, const char *flag, const char *text,
		      const char *const words[2])
{
	if (strcmp(text, words[0]) == 0)
		return 0;
	if (strcmp(text, words[1]) == 0)
		return 1;
	cli_error(cli, NULL, "--%s \"%s\" is not %s or %s", flag, text, words[0], words[1]);
	return -1;
}

static int parse_positive_int(const struct cli *cli, const char *flag, const char *text, int *out,
			      const char *like)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v <= 0 || v > 1000000) {
		cli_error(cli, NULL, "--%s \"%s\" is not a whole number above zero, like %s", flag,
			  text, like);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_number(const struct cli *cli, const char *flag, const char *text, double *out,
			const char *like)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(*out)) {
		cli_error(cli, NULL, "--%s \"%s\" is not a number: give one like %s", flag, text,
			  like);
		return -1;
	}
	return 0;
}

static int parse_duration(const struct cli *cli, const char *flag, const char *text, int64_t *out,
			  const char *like)
{
	if (timefmt_duration_parse(text, out) != 0) {
		cli_error(cli, NULL,
			  "--%s \"%s\" is not a duration: write it like 30d, 72h or 1d12h", flag,
			  text);
		return -1;
	}
	if (*out <= 0) {
		cli_error(cli, NULL, "--%s \"%s\" is not longer than zero, like %s", flag, text,
			  like);
		return -1;
	}
	return 0;
}

static int parse_count(const struct cli *cli, const char *flag, const char *text, double *out)
{
	struct kiln_error err = {0};

	if (workload_parse_count(flag, text, out, &err) == 0)
		return 0;
	cli_error(cli, NULL, "%s", err.msg);
	return -1;
}

static int parse_option(struct size_args *a, const struct cli *cli, int opt, const char *arg)
{
	static const char *const kinds[2] = {"pretrain", "finetune"};
	static const char *const precisions[2] = {"bf16", "fp8"};
	static const char *const methods[2] = {"full", "lora"};
	struct kiln_error err = {0};
	double gib;
	int i;

	switch (opt) {
	case OPT_PARAMS:
		a->params = arg;
		return parse_count(cli, "--params", arg, &a->w.params);
	case OPT_TOKENS:
		a->tokens = arg;
		return parse_count(cli, "--tokens", arg, &a->w.tokens);
	case OPT_ACTIVE:
		return parse_count(cli, "--active-params", arg, &a->w.active_params);
	case OPT_KIND:
		if ((i = parse_word(cli, "kind", arg, kinds)) < 0)
			return -1;
		a->w.kind = i ? WORKLOAD_FINETUNE : WORKLOAD_PRETRAIN;
		return 0;
	case OPT_PRECISION:
		if ((i = parse_word(cli, "precision", arg, precisions)) < 0)
			return -1;
		a->w.precision = i ? WORKLOAD_FP8 : WORKLOAD_BF16;
		return 0;
	case OPT_METHOD:
		if ((i = parse_word(cli, "method", arg, methods)) < 0)
			return -1;
		a->w.method = i ? WORKLOAD_LORA : WORKLOAD_FULL;
		return 0;
	case OPT_SEQ_LEN:
		return parse_positive_int(cli, "seq-len", arg, &a->w.seq_len, "4096");
	case OPT_NODES:
		return parse_positive_int(cli, "nodes", arg, &a->w.nodes, "16");
	case OPT_DEADLINE:
		return parse_duration(cli, "deadline", arg, &a->w.deadline_s, "30d");
	case OPT_WRITE_WITHIN:
		return parse_duration(cli, "write-within", arg, &a->w.write_within_s, "5m");
	case OPT_MFU:
		if (parse_number(cli, "mfu", arg, &a->w.mfu, "0.40") != 0)
			return -1;
		if (workload_check_mfu(a->w.mfu, true, &err) == 0)
			return 0;
		cli_error(cli, NULL, "%s", err.msg);
		return -1;
	case OPT_MAX_HOURLY:
		if (parse_number(cli, "max-hourly-usd", arg, &a->w.max_hourly_usd, "1600") != 0)
			return -1;
		if (a->w.max_hourly_usd > 0)
			return 0;
		cli_error(cli, NULL, "--max-hourly-usd \"%s\" is not above zero, like 1600", arg);
		return -1;
	case OPT_DATASET:
		if (parse_number(cli, "dataset-size", arg, &gib, "20480") != 0)
			return -1;
		a->w.dataset_bytes = gib * 1073741824.0;
		if (gib > 0)
			return 0;
		cli_error(cli, NULL,
			  "--dataset-size \"%s\" is not above zero: give GiB, like 20480", arg);
		return -1;
	case OPT_GPU:
		a->w.gpu = arg;
		return 0;
	case OPT_PROVIDER:
		a->provider = arg;
		return 0;
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_WRITE:
		a->write = true;
		return 0;
	}
	return 0;
}

static int check_args(struct size_args *a, const struct cli *cli)
{
	struct kiln_error err = {0};

	if (!a->params) {
		cli_error(cli, NULL,
			  "--params is required: give the model's size, like --params 70B");
		return -1;
	}
	if (!a->tokens) {
		cli_error(cli, NULL,
			  "--tokens is required: give the tokens it trains on, like --tokens 2T");
		return -1;
	}
	if (a->json && a->write) {
		cli_error(cli, NULL, "--json and --write print different things: give one");
		return -1;
	}
	if (workload_check(&a->w, true, NULL, &err) != 0) {
		cli_error(cli, err.hint[0] ? err.hint : NULL, "%s", err.msg);
		return -1;
	}
	return 0;
}

static const struct catalog *size_catalog(const struct size_args *a, const struct cli *cli)
{
	struct kiln_error err = {0};
	const struct catalog *c = workload_catalog(a->provider, &err);

	if (!c)
		cli_error(cli, NULL, "%s", err.msg);
	return c;
}

/* --- text ----------------------------------------------------------------- */

static char *count_text(double v)
{
	return workload_count_format(v);
}

static void print_candidate(const char *label, const struct workload *w,
			    const struct workload_sizing *s, const struct workload_candidate *c)
{
	char *cost = cost_money(c->cost_usd), *hourly = cost_money(c->hourly_usd);
	char *per_m = cost_money(c->cost_usd / (w->tokens / 1e6));
	char *why = workload_why(w, s, c);

	printf("%-12s%d × %s (%d %s): %s\n", label, c->nodes, c->type->name, c->gpus, c->type->gpu,
	       why);
	free(why);
	printf("  time      %.1f days, %.0f GPU-hours at MFU %.2f of %g TFLOPS\n", c->hours / 24.0,
	       c->gpu_hours, c->mfu, c->peak_tflops);
	printf("  cost      %s on demand (%s an hour), %s per million tokens\n", cost, hourly,
	       per_m);
	if (c->spot_cost_usd >= 0) {
		char *spot = cost_money(c->spot_cost_usd);

		printf("            %s at typical spot rates\n", spot);
		free(spot);
	}
	printf("  memory    %.1f GiB a GPU of %d GiB; fits on %d GPU%s or more\n", c->per_gpu_gib,
	       c->type->gpu_memory_gib, c->fit_gpus, c->fit_gpus == 1 ? "" : "s");
	free(cost);
	free(hourly);
	free(per_m);
}

static void print_text(const struct workload *w, const struct catalog *cat,
		       const struct workload_sizing *s)
{
	char *params = count_text(w->params), *tokens = count_text(w->tokens);
	json_t *assumptions = workload_assumptions(w, cat, s);
	const char *what = w->kind == WORKLOAD_PRETRAIN ? "pretrain"
			   : w->method == WORKLOAD_LORA ? "LoRA fine-tune"
							: "full fine-tune";
	json_t *v;
	size_t i;

	printf("workload    %s %s params on %s tokens, %s", what, params, tokens,
	       w->precision == WORKLOAD_FP8 ? "fp8" : "bf16");
	if (w->deadline_s > 0) {
		char *d = timefmt_duration_format(w->deadline_s);

		printf(", within %s", d);
		free(d);
	}
	printf("\n  compute   %.3g FLOPs (%.3g a token)\n", s->flops, s->flops_per_token);
	printf("  state     %.1f GiB of model state, sharded over every GPU\n",
	       s->state_bytes / 1073741824.0);
	print_candidate("recommended", w, s, s->best);
	if (s->runner_up)
		print_candidate("runner-up", w, s, s->runner_up);
	if (s->fastest &&
	    (s->fastest->type != s->best->type || s->fastest->nodes != s->best->nodes))
		print_candidate("fastest", w, s, s->fastest);
	printf("storage     a checkpoint is %.1f GiB; Lustre of %d GiB at %d MB/s/TiB writes "
	       "one at %.0f MB/s",
	       s->checkpoint_bytes / 1073741824.0, s->lustre.capacity_gib,
	       s->lustre.throughput_per_tib, s->lustre.write_mb_per_s);
	printf("; the dataset reads at %.1f MB/s\n", s->lustre.read_mb_per_s);
	printf("assumptions\n");
	json_array_foreach(assumptions, i, v) printf("  - %s\n", json_string_value(v));
	json_decref(assumptions);
	free(params);
	free(tokens);
}

int cmd_size(int argc, char **argv, struct cli *cli)
{
	struct cli_parser p;
	struct size_args a;
	struct workload_sizing s;
	struct kiln_error err = {0};
	const struct catalog *cat;
	int c, ret = KILN_EXIT_ERROR;

	memset(&a, 0, sizeof(a));
	memset(&s, 0, sizeof(s));
	cli_parser_init(&p, cli, &cmd_size_info, argc, argv);
	while ((c = cli_next(&p)) != CLI_DONE) {
		if (c == CLI_EXIT) {
			ret = p.exit_code;
			goto out;
		}
		if (parse_option(&a, cli, c, p.optarg) != 0)
			goto out;
	}
	if (p.optind < argc) {
		cli_error(cli, NULL, "takes no arguments, got '%s'", argv[p.optind]);
		goto out;
	}
	if (check_args(&a, cli) != 0 || !(cat = size_catalog(&a, cli)))
		goto out;
	if (workload_size(&a.w, cat, &s, &err) != 0) {
		cli_error(cli, err.hint[0] ? err.hint : NULL, "%s", err.msg);
		goto out;
	}
	if (a.json) {
		json_t *o = workload_json(&a.w, cat, &s);

		jsonw_dumpf(o, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(o);
	} else if (a.write) {
		char *frag = workload_fragment(&a.w, &s);

		fputs(frag, stdout);
		free(frag);
	} else {
		print_text(&a.w, cat, &s);
	}
	ret = KILN_EXIT_OK;
out:
	workload_sizing_free(&s);
	cli_parser_release(&p);
	return ret;
}
