/*
 * spec_opts.c - see spec_opts.h.
 */
#include "spec_opts.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int spec_vars_add(struct spec_vars *vars, const char *arg, struct kiln_error *err)
{
	const char *eq = strchr(arg, '=');
	struct spec_var_override *o;
	char *text;
	size_t i;

	if (!eq || eq == arg) {
		kiln_error_set(err, "--var '%s' is not NAME=VALUE", arg);
		kiln_error_hint(err,
				"write --var NAME=VALUE, like --var image=ami-0123456789abcdef0");
		return -1;
	}
	for (i = 0; i < (size_t)(eq - arg); i++) {
		if (!(isalnum((unsigned char)arg[i]) || arg[i] == '_') ||
		    (i == 0 && isdigit((unsigned char)arg[i]))) {
			kiln_error_set(err, "--var '%.*s' is not a variable name", (int)(eq - arg),
				       arg);
			kiln_error_hint(
			    err, "names are letters, digits and '_', not starting with a digit");
			return -1;
		}
	}
	text = xstrdup(arg);
	text[eq - arg] = '\0';
	*ARRAY_PUSH(vars->text, vars->ntext, vars->captext) = text;
	o = ARRAY_PUSH(vars->v, vars->n, vars->cap);
	/* Later flags win: the loader applies them in order. */
	o->name = text;
	o->value = text + (eq - arg) + 1;
	return 0;
}

void spec_vars_release(struct spec_vars *vars)
{
	size_t i;

	for (i = 0; i < vars->ntext; i++)
		free(vars->text[i]);
	free(vars->text);
	free(vars->v);
	memset(vars, 0, sizeof(*vars));
}
