/*
 * spec_load.h - internals shared by the spec loader's files (spec.c,
 * spec_get.c, spec_compute.c, spec_storage.c, spec_waive.c); not for use
 * outside them.
 *
 * A loader walks the YAML tree section by section. Every value is read by one
 * ld_get_* getter, which substitutes ${var.NAME}, checks the type and names
 * the dotted path of the value in its error, so messages read the same
 * everywhere.
 */
#ifndef KILN_SPEC_LOAD_H
#define KILN_SPEC_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* Only pointers to the spec's types pass through here: spec.h stands above
 * the loader, which is what keeps spec.c (the entry) and its sections from
 * including each other. Each section file includes spec.h itself. */
struct diag;
struct diags;
struct spec;
struct spec_allow;
struct spec_group;
struct spec_idle;
struct spec_options;
struct spec_step;
struct spec_var;
struct ynode;

struct loader {
	struct spec *spec;
	struct diags *d;
	const struct spec_options *opts;
	const char *src; /* the spec's text, to place errors inside a scalar */
	size_t srclen;
};

/* Result of a getter: the key was absent, present and good, or present and bad. */
enum got {
	GOT_BAD = -1,
	GOT_NONE = 0,
	GOT_OK = 1,
};

extern const char *const spec_tier_names[4];
extern const char *const spec_market_names[2];
extern const char *const spec_health_gpu_names[2];
extern const char *const spec_fabric_names[3];
extern const char *const spec_deletion_names[2];
extern const char *const spec_ingress_protocols[2];
extern const char *const spec_disk_types[4];
extern const char *const spec_lustre_throughputs[4];
extern const char *const spec_fallback_names[1];
extern const char *const spec_idle_actions[1];
extern const char *const spec_scheduler_types[1];

/*
 * The keys each mapping of a spec takes, as the loader checks them
 * (spec_check_keys); spec_schema.c writes the JSON Schema from the same
 * tables, so a key added here is in the schema too. Sized, so that a
 * definition with another count does not compile.
 */
extern const char *const spec_top_keys[18];
extern const char *const spec_provider_keys[4];
extern const char *const spec_budget_keys[2];
extern const char *const spec_network_keys[3];
extern const char *const spec_ingress_keys[4];
extern const char *const spec_access_keys[3];
extern const char *const spec_key_file_keys[1];
extern const char *const spec_step_keys[4];
extern const char *const spec_health_keys[1];
extern const char *const spec_capacity_keys[4];
extern const char *const spec_block_keys[3];
extern const char *const spec_spot_keys[1];
extern const char *const spec_group_keys[15];
extern const char *const spec_disk_keys[4];
extern const char *const spec_idle_keys[3];
extern const char *const spec_scheduler_keys[3];
extern const char *const spec_iam_keys[1];
extern const char *const spec_role_keys[3];
extern const char *const spec_allow_keys[3];
extern const char *const spec_waiver_keys[4];
extern const char *const spec_workload_keys[11];
extern const char *const spec_checkpoint_keys[2];
extern const char *const spec_dataset_keys[1];
extern const char *const spec_workload_kinds[2];
extern const char *const spec_workload_precisions[2];
extern const char *const spec_workload_methods[2];

/* A store's keys, and the tiers each applies to. */
struct spec_store_key {
	const char *key;
	unsigned tiers; /* 1 << enum spec_tier */
};
extern const struct spec_store_key spec_store_keys[11];

struct diag *spec_err(struct loader *ld, const struct ynode *n, const char *fmt, ...)
    KILN_PRINTF(3, 4);
char *spec_join_names(const char *const *names, size_t n);
/* Hint for a word that should have been one of names: the closest, else the list. */
void spec_hint_choices(struct diag *dg, const char *word, const char *const *names, size_t n);
/* Unknown keys in a mapping are errors; returns false when there was one. */
bool spec_check_keys(struct loader *ld, const struct ynode *map, const char *where,
		     const char *const *known, size_t n);
bool spec_expect_map(struct loader *ld, const struct ynode *n, const char *path);
bool spec_var_name_ok(const char *s, size_t len);
struct spec_var *spec_var_find(struct spec *spec, const char *name, size_t len);
/* The scalar's text with ${var.NAME} substituted, or NULL after reporting. */
char *spec_scalar(struct loader *ld, const struct ynode *n, const char *path);
enum got spec_get_string(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, bool required, char **out);
enum got spec_get_int(struct loader *ld, const struct ynode *map, const char *key, const char *path,
		      bool required, long min, long max, int *out);
enum got spec_get_number(struct loader *ld, const struct ynode *map, const char *key,
			 const char *path, double *out);
enum got spec_get_bool(struct loader *ld, const struct ynode *map, const char *key,
		       const char *path, bool *out);
enum got spec_get_enum(struct loader *ld, const struct ynode *map, const char *key,
		       const char *path, bool required, const char *const *names, size_t n,
		       int *out);
enum got spec_get_duration(struct loader *ld, const struct ynode *map, const char *key,
			   const char *path, int64_t *out);
enum got spec_get_cidr(struct loader *ld, const struct ynode *map, const char *key,
		       const char *path, bool required, int min_prefix, int max_prefix, char **out);
/* Group, store and role names: spec_name_ok(), reported at the key. */
bool spec_check_name(struct loader *ld, const struct ynode *key, const char *what);

/* Section loaders, one per file. */
void spec_load_group(struct loader *ld, const struct ynode *key, const struct ynode *g);
/* spec_capacity.c: compute.GROUP.capacity, into grp->capacity. */
bool spec_load_capacity(struct loader *ld, const struct ynode *g, const char *gpath,
			struct spec_group *grp);
void spec_load_store(struct loader *ld, const struct ynode *key, const struct ynode *s);
void spec_load_iam(struct loader *ld, const struct ynode *iam);
/* spec_storage.c: the statements of a role's allow: list. */
void spec_allow_free(struct spec_allow *allow, size_t n);
void spec_load_waive(struct loader *ld, const struct ynode *waive);
/* spec_scheduler.c: the scheduler: section, and a group's partition: and default:. */
void spec_load_scheduler(struct loader *ld, const struct ynode *sched);
bool spec_load_group_partition(struct loader *ld, const struct ynode *g, const char *path,
			       struct spec_group *grp);
/* spec_idle.c: an idle: mapping at path ("idle", "compute.NAME.idle") into *out. */
void spec_load_idle(struct loader *ld, const struct ynode *n, const char *path,
		    struct spec_idle *out);
void spec_load_access(struct loader *ld, const struct ynode *access);
void spec_access_free(struct spec *spec);
/* spec_boot.c: a bootstrap: list at path ("bootstrap", "compute.G.bootstrap"). */
void spec_load_bootstrap(struct loader *ld, const struct ynode *list, const char *path,
			 struct spec_step **out, size_t *n);
/* spec_boot.c: a group's health: section (default gpu: quick). */
void spec_load_health(struct loader *ld, const struct ynode *g, const char *gpath,
		      struct spec_group *grp);
/* spec_workload.c: the workload: section (kiln-spec(5) WORKLOAD). */
void spec_load_workload(struct loader *ld, const struct ynode *n);
/* Free what n steps hold (not the array). */
void spec_steps_free(struct spec_step *steps, size_t n);

#endif
