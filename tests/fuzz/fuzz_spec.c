/*
 * fuzz_spec.c - libFuzzer target: any bytes through the whole spec pipeline
 * (UTF-8 check, YAML tree, typed loader, validator). It must never crash,
 * hang, leak or read out of bounds, whatever the input.
 */
#include <stddef.h>
#include <stdint.h>

#include "provider.h"
#include "spec.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct spec_var_override vars[] = {{"image", "ami-0123456789abcdef0"}};
	struct spec_options opts = {.vars = vars, .nvars = 1};
	struct diags d = {0};
	struct spec *spec = NULL;

	opts.providers = providers_for_spec(&opts.nproviders);
	spec_load_buffer(&spec, "fuzz.yaml", (const char *)data, size, &opts, &d);
	if (spec)
		validate_spec(spec, &d);
	diags_sort(&d);
	diags_release(&d);
	spec_free(spec);
	return 0;
}
