/*
 * template.c - looking templates up in the table scripts/embed-templates.sh
 * generates (see template.h).
 */
#include "template.h"

#include <string.h>

#include "provider.h"

const struct template_entry *template_find(const char *name)
{
	size_t i;

	for (i = 0; i < template_count; i++)
		if (strcmp(template_table[i].name, name) == 0)
			return &template_table[i];
	return NULL;
}

const struct template_entry *template_default(const char *provider)
{
	const struct provider *p = provider ? provider_find(provider) : provider_first(true);

	return p && p->default_template ? template_find(p->default_template) : NULL;
}
