/*
 * spec_schema.c - the JSON Schema of a spec; see spec_schema.h.
 *
 * Each mapping of a spec is a block: its keys are the loader's table of
 * them (spec_load.h), and this file gives each key a kind (text, a whole
 * number in the loader's bounds, a duration, words from spec_names.c, a
 * nested block...). A key the loader takes that has no kind here is what
 * spec_schema_untyped() reports. Every scalar may also be a ${var.NAME}
 * reference, as the loader substitutes them before reading a value.
 */
#include "spec_schema.h"

#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "spec.h"
#include "spec_load.h"

enum kind {
	K_STRING,
	K_NAME,	    /* a cluster's name: spec_name_ok() */
	K_INT,	    /* whole number in [min, max] */
	K_POSITIVE, /* a number more than 0 */
	K_BOOL,
	K_DURATION,
	K_CIDR,
	K_ENUM,		/* one of words */
	K_NUMERIC_ENUM, /* one of words, written as numbers or as text */
	K_FORMAT,	/* kiln: the spec format this kiln reads */
	K_PERCENT,
	K_STRINGS,	    /* a list of text */
	K_NONEMPTY_STRINGS, /* the same, at least one */
	K_URL,		    /* http:// or https:// */
	K_ZONE,		    /* a zone or a non-empty list of zones */
	K_PORT,		    /* a port or a range "A-B" */
	K_PROVIDER,	    /* the name of a provider built into this kiln */
	K_TAGS,
	K_VARS,
	K_SSH_KEYS,
	K_CAPACITY, /* on-demand, spot, or the capacity block */
	K_BLOCK,
	K_BLOCKS,	  /* a list of block */
	K_STEPS,	  /* bootstrap: a list of commands or of step blocks */
	K_NAMED_BLOCKS,	  /* NAME: block, names as spec_name_ok() */
	K_NAMED_OR_EMPTY, /* the same, a NAME with no value allowed (iam roles) */
};

struct block;

struct key_type {
	const char *key;
	enum kind kind;
	long min, max;
	const char *const *words;
	size_t nwords;
	const struct block *block;
};

struct block {
	const char *name; /* where it stands, for spec_schema_untyped() */
	const char *const *keys;
	size_t nkeys;
	const struct key_type *types;
	size_t ntypes;
	const char *const *required;
	size_t nrequired;
};

#define WORDS(a) (a), ARRAY_SIZE(a)
#define TYPES(a) (a), ARRAY_SIZE(a)
#define BLOCK(name, keys, types)                                                                   \
	{                                                                                          \
		name, WORDS(keys), TYPES(types), NULL, 0                                           \
	}
#define BLOCK_REQ(name, keys, types, req)                                                          \
	{                                                                                          \
		name, WORDS(keys), TYPES(types), WORDS(req)                                        \
	}

/* --- the blocks, from the leaves up ------------------------------------- */

static const struct key_type idle_types[] = {
    {"gpu_below", K_PERCENT, 0, 0, NULL, 0, NULL},
    {"for", K_DURATION, 0, 0, NULL, 0, NULL},
    {"action", K_ENUM, 0, 0, WORDS(spec_idle_actions), NULL},
};
static const struct block idle_block = BLOCK("idle", spec_idle_keys, idle_types);

static const struct key_type step_types[] = {
    {"run", K_STRING, 0, 0, NULL, 0, NULL},
    {"file", K_STRING, 0, 0, NULL, 0, NULL},
    {"content", K_STRING, 0, 0, NULL, 0, NULL},
    {"mode", K_STRING, 0, 0, NULL, 0, NULL},
};
static const struct block step_block = BLOCK("bootstrap[]", spec_step_keys, step_types);

static const struct key_type health_types[] = {
    {"gpu", K_ENUM, 0, 0, WORDS(spec_health_gpu_names), NULL},
};
static const struct block health_block =
    BLOCK("compute.GROUP.health", spec_health_keys, health_types);

static const struct key_type block_types[] = {
    {"duration", K_DURATION, 0, 0, NULL, 0, NULL},
    {"start", K_STRING, 0, 0, NULL, 0, NULL},
    {"max_upfront_usd", K_POSITIVE, 0, 0, NULL, 0, NULL},
};
static const struct block capacity_block_block =
    BLOCK("compute.GROUP.capacity.block", spec_block_keys, block_types);

static const struct key_type spot_types[] = {
    {"fallback", K_ENUM, 0, 0, WORDS(spec_fallback_names), NULL},
};
static const struct block spot_block =
    BLOCK("compute.GROUP.capacity.spot", spec_spot_keys, spot_types);

static const struct key_type capacity_types[] = {
    {"reservation", K_STRING, 0, 0, NULL, 0, NULL},
    {"reservation_group", K_STRING, 0, 0, NULL, 0, NULL},
    {"block", K_BLOCK, 0, 0, NULL, 0, &capacity_block_block},
    {"spot", K_BLOCK, 0, 0, NULL, 0, &spot_block},
};
static const struct block capacity_block =
    BLOCK("compute.GROUP.capacity", spec_capacity_keys, capacity_types);

static const struct key_type disk_types[] = {
    {"size_gb", K_INT, 8, 65536, NULL, 0, NULL},
    {"type", K_ENUM, 0, 0, WORDS(spec_disk_types), NULL},
    {"encrypted", K_BOOL, 0, 0, NULL, 0, NULL},
    {"allow_unencrypted", K_BOOL, 0, 0, NULL, 0, NULL},
};
static const struct block disk_block = BLOCK("compute.GROUP.disk", spec_disk_keys, disk_types);

static const struct key_type group_types[] = {
    {"gpu", K_STRING, 0, 0, NULL, 0, NULL},
    {"instance_type", K_STRING, 0, 0, NULL, 0, NULL},
    {"count", K_INT, 0, SPEC_MAX_COUNT, NULL, 0, NULL},
    {"gang", K_BOOL, 0, 0, NULL, 0, NULL},
    {"market", K_ENUM, 0, 0, WORDS(spec_market_names), NULL},
    {"capacity", K_CAPACITY, 0, 0, NULL, 0, &capacity_block},
    {"image", K_STRING, 0, 0, NULL, 0, NULL},
    {"disk", K_BLOCK, 0, 0, NULL, 0, &disk_block},
    {"role", K_STRING, 0, 0, NULL, 0, NULL},
    {"public", K_BOOL, 0, 0, NULL, 0, NULL},
    {"bootstrap", K_STEPS, 0, 0, NULL, 0, &step_block},
    {"health", K_BLOCK, 0, 0, NULL, 0, &health_block},
    {"partition", K_STRING, 0, 0, NULL, 0, NULL},
    {"default", K_BOOL, 0, 0, NULL, 0, NULL},
    {"idle", K_BLOCK, 0, 0, NULL, 0, &idle_block},
};
static const struct block group_block = BLOCK("compute.GROUP", spec_group_keys, group_types);

/* A store's keys are spec_store_keys (with the tiers each applies to). */
static const struct key_type store_types[] = {
    {"tier", K_ENUM, 0, 0, WORDS(spec_tier_names), NULL},
    {"deletion", K_ENUM, 0, 0, WORDS(spec_deletion_names), NULL},
    {"versioning", K_BOOL, 0, 0, NULL, 0, NULL},
    {"expire_noncurrent_after", K_DURATION, 0, 0, NULL, 0, NULL},
    {"capacity_gb", K_INT, 1, 10000000, NULL, 0, NULL},
    {"throughput_per_tib", K_NUMERIC_ENUM, 0, 0, WORDS(spec_lustre_throughputs), NULL},
    {"import", K_STRING, 0, 0, NULL, 0, NULL},
    {"mount", K_STRING, 0, 0, NULL, 0, NULL},
    {"groups", K_STRINGS, 0, 0, NULL, 0, NULL},
    {"encrypted", K_BOOL, 0, 0, NULL, 0, NULL},
    {"allow_unencrypted", K_BOOL, 0, 0, NULL, 0, NULL},
};

static const struct key_type allow_types[] = {
    {"actions", K_NONEMPTY_STRINGS, 0, 0, NULL, 0, NULL},
    {"resources", K_NONEMPTY_STRINGS, 0, 0, NULL, 0, NULL},
    {"sid", K_STRING, 0, 0, NULL, 0, NULL},
};
static const char *const allow_required[] = {"actions", "resources"};
static const struct block allow_block =
    BLOCK_REQ("iam.roles.ROLE.allow[]", spec_allow_keys, allow_types, allow_required);

static const struct key_type role_types[] = {
    {"read", K_STRINGS, 0, 0, NULL, 0, NULL},
    {"write", K_STRINGS, 0, 0, NULL, 0, NULL},
    {"allow", K_BLOCKS, 0, 0, NULL, 0, &allow_block},
};
static const struct block role_block = BLOCK("iam.roles.ROLE", spec_role_keys, role_types);

static const struct key_type iam_types[] = {
    {"roles", K_NAMED_OR_EMPTY, 0, 0, NULL, 0, &role_block},
};
static const struct block iam_block = BLOCK("iam", spec_iam_keys, iam_types);

static const struct key_type ingress_types[] = {
    {"port", K_PORT, 0, 0, NULL, 0, NULL},
    {"from", K_CIDR, 0, 0, NULL, 0, NULL},
    {"protocol", K_ENUM, 0, 0, WORDS(spec_ingress_protocols), NULL},
    {"description", K_STRING, 0, 0, NULL, 0, NULL},
};
static const char *const ingress_required[] = {"port", "from"};
static const struct block ingress_block =
    BLOCK_REQ("network.ingress[]", spec_ingress_keys, ingress_types, ingress_required);

static const struct key_type network_types[] = {
    {"cidr", K_CIDR, 0, 0, NULL, 0, NULL},
    {"fabric", K_ENUM, 0, 0, WORDS(spec_fabric_names), NULL},
    {"ingress", K_BLOCKS, 0, 0, NULL, 0, &ingress_block},
};
static const struct block network_block = BLOCK("network", spec_network_keys, network_types);

static const struct key_type provider_types[] = {
    {"name", K_PROVIDER, 0, 0, NULL, 0, NULL},
    {"region", K_STRING, 0, 0, NULL, 0, NULL},
    {"zone", K_ZONE, 0, 0, NULL, 0, NULL},
    {"endpoint", K_URL, 0, 0, NULL, 0, NULL},
};
static const char *const provider_required[] = {"name"};
static const struct block provider_block =
    BLOCK_REQ("provider", spec_provider_keys, provider_types, provider_required);

static const struct key_type budget_types[] = {
    {"max_hourly_usd", K_POSITIVE, 0, 0, NULL, 0, NULL},
    {"max_upfront_usd", K_POSITIVE, 0, 0, NULL, 0, NULL},
};
static const struct block budget_block = BLOCK("budget", spec_budget_keys, budget_types);

static const struct key_type waiver_types[] = {
    {"rule", K_STRING, 0, 0, NULL, 0, NULL},
    {"reason", K_STRING, 0, 0, NULL, 0, NULL},
    {"until", K_STRING, 0, 0, NULL, 0, NULL},
    {"address", K_STRING, 0, 0, NULL, 0, NULL},
};
static const char *const waiver_required[] = {"rule"};
static const struct block waiver_block =
    BLOCK_REQ("waive[]", spec_waiver_keys, waiver_types, waiver_required);

static const struct key_type scheduler_types[] = {
    {"type", K_ENUM, 0, 0, WORDS(spec_scheduler_types), NULL},
    {"controller", K_STRING, 0, 0, NULL, 0, NULL},
    {"kms_key", K_STRING, 0, 0, NULL, 0, NULL},
};
static const char *const scheduler_required[] = {"type", "controller"};
static const struct block scheduler_block =
    BLOCK_REQ("scheduler", spec_scheduler_keys, scheduler_types, scheduler_required);

static const struct key_type key_file_types[] = {
    {"file", K_STRING, 0, 0, NULL, 0, NULL},
};
static const char *const key_file_required[] = {"file"};
static const struct block key_file_block =
    BLOCK_REQ("access.ssh_keys[]", spec_key_file_keys, key_file_types, key_file_required);

static const struct key_type access_types[] = {
    {"ssh_keys", K_SSH_KEYS, 0, 0, NULL, 0, &key_file_block},
    {"user", K_STRING, 0, 0, NULL, 0, NULL},
    {"key_pair", K_STRING, 0, 0, NULL, 0, NULL},
};
static const struct block access_block = BLOCK("access", spec_access_keys, access_types);

/* The store block has no key table of names; types_for() reads spec_store_keys. */
static const struct block store_block = {"storage.STORE", NULL, 0, TYPES(store_types), NULL, 0};

static const struct key_type checkpoint_types[] = {
    {"every", K_DURATION, 0, 0, NULL, 0, NULL},
    {"write_within", K_DURATION, 0, 0, NULL, 0, NULL},
};
static const struct block checkpoint_block =
    BLOCK("workload.checkpoint", spec_checkpoint_keys, checkpoint_types);

static const struct key_type dataset_types[] = {
    {"size", K_STRING, 0, 0, NULL, 0, NULL},
};
static const struct block dataset_block =
    BLOCK("workload.dataset", spec_dataset_keys, dataset_types);

/* Counts ("70B") are text with a unit; workload_parse_count checks them. */
static const struct key_type workload_types[] = {
    {"kind", K_ENUM, 0, 0, WORDS(spec_workload_kinds), NULL},
    {"params", K_STRING, 0, 0, NULL, 0, NULL},
    {"active_params", K_STRING, 0, 0, NULL, 0, NULL},
    {"tokens", K_STRING, 0, 0, NULL, 0, NULL},
    {"precision", K_ENUM, 0, 0, WORDS(spec_workload_precisions), NULL},
    {"method", K_ENUM, 0, 0, WORDS(spec_workload_methods), NULL},
    {"seq_len", K_INT, 1, 1048576, NULL, 0, NULL},
    {"deadline", K_DURATION, 0, 0, NULL, 0, NULL},
    {"mfu", K_POSITIVE, 0, 0, NULL, 0, NULL},
    {"checkpoint", K_BLOCK, 0, 0, NULL, 0, &checkpoint_block},
    {"dataset", K_BLOCK, 0, 0, NULL, 0, &dataset_block},
};
static const char *const workload_required[] = {"params", "tokens"};
static const struct block workload_block =
    BLOCK_REQ("workload", spec_workload_keys, workload_types, workload_required);

static const struct key_type top_types[] = {
    {"kiln", K_FORMAT, 0, 0, NULL, 0, NULL},
    {"cluster", K_NAME, 0, 0, NULL, 0, NULL},
    {"provider", K_BLOCK, 0, 0, NULL, 0, &provider_block},
    {"ttl", K_DURATION, 0, 0, NULL, 0, NULL},
    {"ttl_grace", K_DURATION, 0, 0, NULL, 0, NULL},
    {"budget", K_BLOCK, 0, 0, NULL, 0, &budget_block},
    {"idle", K_BLOCK, 0, 0, NULL, 0, &idle_block},
    {"tags", K_TAGS, 0, 0, NULL, 0, NULL},
    {"vars", K_VARS, 0, 0, NULL, 0, NULL},
    {"network", K_BLOCK, 0, 0, NULL, 0, &network_block},
    {"compute", K_NAMED_BLOCKS, 0, 0, NULL, 0, &group_block},
    {"storage", K_NAMED_BLOCKS, 0, 0, NULL, 0, &store_block},
    {"iam", K_BLOCK, 0, 0, NULL, 0, &iam_block},
    {"waive", K_BLOCKS, 0, 0, NULL, 0, &waiver_block},
    {"bootstrap", K_STEPS, 0, 0, NULL, 0, &step_block},
    {"scheduler", K_BLOCK, 0, 0, NULL, 0, &scheduler_block},
    {"access", K_BLOCK, 0, 0, NULL, 0, &access_block},
    {"workload", K_BLOCK, 0, 0, NULL, 0, &workload_block},
};
static const char *const top_required[] = {"kiln", "cluster", "provider"};
static const struct block top_block = BLOCK_REQ("", spec_top_keys, top_types, top_required);

/* Every block, for spec_schema_untyped(). */
static const struct block *const all_blocks[] = {
    &top_block,	     &provider_block, &budget_block,	 &idle_block,		&network_block,
    &ingress_block,  &group_block,    &capacity_block,	 &capacity_block_block, &spot_block,
    &disk_block,     &health_block,   &step_block,	 &store_block,		&iam_block,
    &role_block,     &allow_block,    &waiver_block,	 &scheduler_block,	&access_block,
    &key_file_block, &workload_block, &checkpoint_block, &dataset_block,
};

/* --- building the JSON ----------------------------------------------------- */

/* A ${var.NAME} reference: what any scalar may be before substitution. */
#define VAR_PATTERN "\\$\\{var\\.[A-Za-z_][A-Za-z0-9_]*\\}"

static json_t *words_array(const char *const *words, size_t n, bool numeric)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_array_append_new(a, json_string(words[i]));
		if (numeric)
			json_array_append_new(a, json_integer(strtol(words[i], NULL, 10)));
	}
	return a;
}

/* x, or a ${var.NAME} string in its place. */
static json_t *or_var(json_t *x)
{
	return json_pack("{s:[o,{s:s}]}", "anyOf", x, "$ref", "#/definitions/var");
}

/*
 * x, or the same written as text ("4", "true"): the loader reads a scalar's
 * text whatever its YAML style, so a quoted number is a number to kiln.
 */
static json_t *or_text(json_t *x, const char *pattern)
{
	return json_pack("{s:[o,{s:s,s:s},{s:s}]}", "anyOf", x, "type", "string", "pattern",
			 pattern, "$ref", "#/definitions/var");
}

static json_t *string_schema(void)
{
	return json_pack("{s:s}", "type", "string");
}

static json_t *strings_schema(void)
{
	return json_pack("{s:s,s:o}", "type", "array", "items", string_schema());
}

/* Names of groups, stores and roles: spec_name_ok(). */
static json_t *name_pattern(void)
{
	char *p = xasprintf("^[a-z0-9]([a-z0-9-]{0,%d}[a-z0-9])?$", SPEC_MAX_NAME - 2);
	json_t *s = json_pack("{s:s,s:s}", "type", "string", "pattern", p);

	free(p);
	return s;
}

static json_t *block_schema(const struct block *b, const struct spec_options *opts);

static json_t *provider_names(const struct spec_options *opts)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; opts && i < opts->nproviders; i++)
		json_array_append_new(a, json_string(opts->providers[i].name));
	return json_pack("{s:o}", "enum", a);
}

static json_t *kind_schema(const struct key_type *t, const struct spec_options *opts)
{
	switch (t->kind) {
	case K_STRING:
		return string_schema();
	case K_NAME:
		return or_var(name_pattern());
	case K_INT:
		return or_text(json_pack("{s:s,s:I,s:I}", "type", "integer", "minimum",
					 (json_int_t)t->min, "maximum", (json_int_t)t->max),
			       "^-?[0-9]+$");
	case K_POSITIVE:
		return or_text(json_pack("{s:s,s:i}", "type", "number", "exclusiveMinimum", 0),
			       "^[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?$");
	case K_BOOL:
		return or_text(json_pack("{s:s}", "type", "boolean"), "^(true|false)$");
	case K_DURATION:
		return or_var(
		    json_pack("{s:s,s:s}", "type", "string", "pattern", "^([0-9]+[smhd])+$"));
	case K_CIDR:
		return or_var(json_pack("{s:s,s:s}", "type", "string", "pattern",
					"^[0-9]{1,3}(\\.[0-9]{1,3}){3}/[0-9]{1,2}$"));
	case K_ENUM:
		return or_var(json_pack("{s:o}", "enum", words_array(t->words, t->nwords, false)));
	case K_NUMERIC_ENUM:
		return or_var(json_pack("{s:o}", "enum", words_array(t->words, t->nwords, true)));
	case K_FORMAT: {
		char *text = xasprintf("^%d$", KILN_SPEC_FORMAT);
		json_t *f = or_text(json_pack("{s:i}", "const", KILN_SPEC_FORMAT), text);

		free(text);
		return f;
	}
	case K_PERCENT:
		return or_var(json_pack("{s:[{s:s,s:i,s:i},{s:s,s:s}]}", "anyOf", "type", "number",
					"exclusiveMinimum", 0, "maximum", 100, "type", "string",
					"pattern", "^[0-9][0-9.]*%?$"));
	case K_STRINGS:
		return strings_schema();
	case K_NONEMPTY_STRINGS:
		return json_pack("{s:s,s:i,s:o}", "type", "array", "minItems", 1, "items",
				 string_schema());
	case K_URL:
		return json_pack("{s:s,s:s}", "type", "string", "pattern",
				 "^(https?://|\\$\\{var\\.)");
	case K_ZONE:
		return json_pack("{s:[o,{s:s,s:i,s:b,s:o}]}", "anyOf", string_schema(), "type",
				 "array", "minItems", 1, "uniqueItems", 1, "items",
				 string_schema());
	case K_PORT:
		return or_var(json_pack("{s:[{s:s,s:i,s:i},{s:s,s:s}]}", "anyOf", "type", "integer",
					"minimum", 1, "maximum", 65535, "type", "string", "pattern",
					"^[0-9]+(-[0-9]+)?$"));
	case K_PROVIDER:
		return or_var(provider_names(opts));
	case K_TAGS:
		return json_pack("{s:s,s:i,s:{s:{s:s}},s:{s:[s,s,s]}}", "type", "object",
				 "maxProperties", SPEC_MAX_USER_TAGS, "propertyNames", "not",
				 "pattern", "^[Kk][Ii][Ll][Nn]:", "additionalProperties", "type",
				 "string", "number", "boolean");
	case K_VARS:
		return json_pack("{s:s,s:{s:s},s:{s:[s,s,s,s]}}", "type", "object", "propertyNames",
				 "pattern", "^[A-Za-z_][A-Za-z0-9_]*$", "additionalProperties",
				 "type", "string", "number", "boolean", "null");
	case K_SSH_KEYS:
		return json_pack("{s:s,s:{s:[o,o]}}", "type", "array", "items", "anyOf",
				 string_schema(), block_schema(t->block, opts));
	case K_CAPACITY:
		return json_pack("{s:[o,o]}", "anyOf",
				 or_var(json_pack("{s:o}", "enum",
						  words_array(WORDS(spec_market_names), false))),
				 block_schema(t->block, opts));
	case K_BLOCK:
		return block_schema(t->block, opts);
	case K_BLOCKS:
		return json_pack("{s:s,s:o}", "type", "array", "items",
				 block_schema(t->block, opts));
	case K_STEPS:
		return json_pack("{s:s,s:{s:[o,o]}}", "type", "array", "items", "anyOf",
				 string_schema(), block_schema(t->block, opts));
	case K_NAMED_BLOCKS:
		return json_pack("{s:s,s:o,s:o}", "type", "object", "propertyNames", name_pattern(),
				 "additionalProperties", block_schema(t->block, opts));
	case K_NAMED_OR_EMPTY:
		return json_pack("{s:s,s:o,s:{s:[{s:s},o]}}", "type", "object", "propertyNames",
				 name_pattern(), "additionalProperties", "anyOf", "type", "null",
				 block_schema(t->block, opts));
	}
	return json_object();
}

static const struct key_type *type_of(const struct block *b, const char *key)
{
	size_t i;

	for (i = 0; i < b->ntypes; i++)
		if (strcmp(b->types[i].key, key) == 0)
			return &b->types[i];
	return NULL;
}

/* The block's key names: its table, or the store's. */
static size_t block_keys(const struct block *b, const char **out, size_t cap)
{
	size_t i, n = 0;

	if (b != &store_block) {
		for (i = 0; i < b->nkeys && n < cap; i++)
			out[n++] = b->keys[i];
		return n;
	}
	for (i = 0; i < ARRAY_SIZE(spec_store_keys) && n < cap; i++)
		out[n++] = spec_store_keys[i].key;
	return n;
}

/*
 * A store's keys by tier: the ones spec_store_keys does not give a tier
 * are refused there, as the loader refuses them ("does not apply to").
 */
static json_t *store_tier_rules(void)
{
	json_t *all = json_array();
	size_t tier, i;

	for (tier = 0; tier < ARRAY_SIZE(spec_tier_names); tier++) {
		json_t *names = json_array();

		for (i = 0; i < ARRAY_SIZE(spec_store_keys); i++)
			if (spec_store_keys[i].tiers & (1u << tier))
				json_array_append_new(names, json_string(spec_store_keys[i].key));
		json_array_append_new(all,
				      json_pack("{s:{s:{s:{s:s}}},s:{s:{s:o}}}", "if", "properties",
						"tier", "const", spec_tier_names[tier], "then",
						"propertyNames", "enum", names));
	}
	return all;
}

/* The rules between a block's keys that the loader checks in place. */
static void add_block_rules(const struct block *b, json_t *s)
{
	if (b == &store_block) {
		json_object_set_new(s, "required", json_pack("[s]", "tier"));
		json_object_set_new(s, "allOf", store_tier_rules());
	} else if (b == &step_block) {
		/* run: or file:, and content:/mode: only with file: (spec_boot.c). */
		json_object_set_new(
		    s, "oneOf",
		    json_pack("[{s:[s]},{s:[s]}]", "required", "run", "required", "file"));
		json_object_set_new(s, "dependencies",
				    json_pack("{s:[s],s:[s]}", "content", "file", "mode", "file"));
	} else if (b == &group_block) {
		/* gpu: or instance_type:, and capacity: instead of market:. */
		json_object_set_new(
		    s, "oneOf",
		    json_pack("[{s:[s]},{s:[s]}]", "required", "gpu", "required", "instance_type"));
		json_object_set_new(s, "not",
				    json_pack("{s:[s,s]}", "required", "market", "capacity"));
	}
}

static json_t *block_schema(const struct block *b, const struct spec_options *opts)
{
	const char *keys[32];
	json_t *s = json_object(), *props = json_object();
	size_t i, n = block_keys(b, keys, ARRAY_SIZE(keys));

	json_object_set_new(s, "type", json_string("object"));
	for (i = 0; i < n; i++) {
		const struct key_type *t = type_of(b, keys[i]);

		json_object_set_new(props, keys[i], t ? kind_schema(t, opts) : json_object());
	}
	json_object_set_new(s, "properties", props);
	json_object_set_new(s, "additionalProperties", json_false());
	if (b->nrequired)
		json_object_set_new(s, "required", words_array(b->required, b->nrequired, false));
	add_block_rules(b, s);
	return s;
}

/* A top-level section written with no value is absent (spec.c's section()). */
static void top_sections_may_be_empty(json_t *top)
{
	json_t *props = json_object_get(top, "properties");
	const char *key;
	json_t *v;

	json_object_foreach(props, key, v)
	{
		const struct key_type *t = type_of(&top_block, key);

		if (t && t->kind != K_STRING && t->kind != K_NAME && t->kind != K_FORMAT &&
		    t->kind != K_DURATION && strcmp(key, "provider") != 0)
			json_object_set_new(props, key,
					    json_pack("{s:[{s:s},O]}", "anyOf", "type", "null", v));
	}
}

json_t *spec_schema(const struct spec_options *opts)
{
	json_t *s = json_object(), *top = block_schema(&top_block, opts);
	char *about = xasprintf("A kiln cluster spec, format %d, as `kiln validate` reads it; see "
				"kiln-spec(5). Written by `kiln schema` from kiln's own tables.",
				KILN_SPEC_FORMAT);

	top_sections_may_be_empty(top);
	json_object_set_new(s, "$schema", json_string("http://json-schema.org/draft-07/schema#"));
	json_object_set_new(s, "$id", json_string("https://kiln.dev/schema/kiln.schema.json"));
	json_object_set_new(s, "title", json_string("kiln spec (kiln.yaml)"));
	json_object_set_new(s, "description", json_string(about));
	free(about);
	json_object_update(s, top);
	json_decref(top);
	json_object_set_new(
	    s, "definitions",
	    json_pack("{s:{s:s,s:s}}", "var", "type", "string", "pattern", VAR_PATTERN));
	return s;
}

const char *spec_schema_untyped(void)
{
	static char where[96];
	size_t b, i;

	for (b = 0; b < ARRAY_SIZE(all_blocks); b++) {
		const char *keys[32];
		size_t n = block_keys(all_blocks[b], keys, ARRAY_SIZE(keys));

		for (i = 0; i < n; i++) {
			if (type_of(all_blocks[b], keys[i]))
				continue;
			snprintf(where, sizeof(where), "%s%s%s", all_blocks[b]->name,
				 *all_blocks[b]->name ? "." : "", keys[i]);
			return where;
		}
	}
	return NULL;
}
