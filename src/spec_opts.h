/*
 * spec_opts.h - `--var NAME=VALUE` flags, collected for spec_load_file().
 *
 * Every command that reads a spec (validate now; plan, apply and the rest
 * later) takes the same flag, so the parsing lives once, here.
 */
#ifndef KILN_SPEC_OPTS_H
#define KILN_SPEC_OPTS_H

#include "spec.h"

struct spec_vars {
	struct spec_var_override *v;
	size_t n;
	size_t cap;
	char **text; /* owns v[i]'s strings: "NAME\0VALUE", one per flag */
	size_t ntext, captext;
};

/* Parse one NAME=VALUE; -1 with err (and its hint) when malformed. */
int spec_vars_add(struct spec_vars *vars, const char *arg, struct kiln_error *err);
void spec_vars_release(struct spec_vars *vars);

#endif
