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

/* The template called name, or NULL. */
const struct template_entry *template_find(const char *name);
/*
 * What `kiln init` writes without --template: the provider's default
 * template (struct provider's default_template), and with no --provider
 * (provider NULL) the simulated provider's, since it needs no account.
 * NULL for an unknown provider.
 */
const struct template_entry *template_default(const char *provider);

#endif
