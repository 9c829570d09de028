/*
 * template.h - the spec templates `kiln init` starts a project from.
 *
 * The templates are the files in templates/, compiled into kiln by
 * scripts/embed-templates.sh (the table lives in the generated
 * $(BUILD)/gen/templates.c), so an installed kiln, which has no repository
 * beside it, carries them all.
 */
#ifndef KILN_TEMPLATE_H
#define KILN_TEMPLATE_H

#include <stddef.h>

struct template_entry {
	const char *name;     /* the file name without .yaml: "llm-pretrain" */
	const char *provider; /* the spec's provider.name: "aws", "sim" */
	const char *summary;  /* the file's first comment line, without "# " */
	const char *text;     /* the file, NUL-terminated */
	size_t len;	      /* its length without the NUL */
};

/* Sorted by name. */
extern const struct template_entry template_table[];
extern const size_t template_count;

/*
 * What `kiln init` writes without --template: sim-demo on sim (and with no
 * flags at all, since it needs no account), finetune on aws, the cheapest
 * training cluster (one node, about $10 an hour), so that an init without a
 * choice never starts a multi-node bill.
 */
#define TEMPLATE_DEFAULT_SIM "sim-demo"
#define TEMPLATE_DEFAULT_AWS "finetune"

/* The template called name, or NULL. */
const struct template_entry *template_find(const char *name);
/* The default template for provider (NULL: no --provider), or NULL for an unknown provider. */
const struct template_entry *template_default(const char *provider);

#endif
