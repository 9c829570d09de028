/*
 * spec_schema.h - the JSON Schema (draft-07) of kiln.yaml, for editors
 * (yaml-language-server) and linters: written from the loader's own tables
 * of keys and enumeration words (spec_load.h, spec_names.c), so that it
 * names the keys and words `kiln validate` takes and no others.
 */
#ifndef KILN_SPEC_SCHEMA_H
#define KILN_SPEC_SCHEMA_H

#include <jansson.h>

struct spec_options;

/* The schema; provider names from opts->providers. The caller owns it. */
json_t *spec_schema(const struct spec_options *opts);

/*
 * The first "block.key" of the loader's tables the schema has no type for,
 * or NULL when every key has one: a key added to the loader without one is
 * caught by the unit tests, not shipped as "anything goes".
 */
const char *spec_schema_untyped(void);

#endif
