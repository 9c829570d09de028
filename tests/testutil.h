/*
 * testutil.h - helpers shared by the cmocka unit tests.
 *
 * Loading a spec from a string literal, and assertions over the diagnostics
 * it produced that print every diagnostic when they fail, so a failing test
 * says what the loader did say instead of only what it did not.
 */
#ifndef KILN_TESTUTIL_H
#define KILN_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "provider.h"
#include "spec.h"
#include "util.h"
#include "validate.h"
#include "ydoc.h"

/* The file name every spec loaded from a string carries. */
#define TEST_FILE "t.yaml"

/* Severity filter for the diagnostic assertions. */
enum test_sev {
	TEST_ANY,
	TEST_ERROR,
	TEST_WARNING,
};

/*
 * Per-test state, freed by the teardown even when an assertion fails, so a
 * failing test does not also show up as a leak.
 */
struct fx {
	struct diags d;
	struct spec *spec;
	struct ydoc *doc;
	char *text; /* a buffer the test built */
};

static inline int fx_setup(void **state)
{
	*state = xcalloc(1, sizeof(struct fx));
	return 0;
}

static inline int fx_teardown(void **state)
{
	struct fx *f = *state;

	diags_release(&f->d);
	spec_free(f->spec);
	ydoc_free(f->doc);
	free(f->text);
	free(f);
	return 0;
}

#define kiln_test(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

/* Loaded as validate_load_* loads: with the providers' table kiln has. */
static inline int load_spec_opts(struct spec **out, const char *yaml,
				 const struct spec_options *opts, struct diags *d)
{
	struct spec_options o = opts ? *opts : (struct spec_options){0};

	o.providers = providers_for_spec(&o.nproviders);
	return spec_load_buffer(out, TEST_FILE, yaml, strlen(yaml), &o, d);
}

static inline int load_spec(struct spec **out, const char *yaml, struct diags *d)
{
	return load_spec_opts(out, yaml, NULL, d);
}

/* Load, then validate whatever could be loaded, as `kiln validate` does. */
static inline int load_validate_opts(struct spec **out, const char *yaml,
				     const struct spec_options *opts, struct diags *d)
{
	int ret = load_spec_opts(out, yaml, opts, d);

	if (*out && validate_spec(*out, d) < 0)
		ret = -1;
	return ret;
}

static inline int load_validate(struct spec **out, const char *yaml, struct diags *d)
{
	return load_validate_opts(out, yaml, NULL, d);
}

/* Load yaml (with --var overrides when opts is not NULL) into f. */
static inline int fx_load_opts(struct fx *f, const char *yaml, const struct spec_options *opts)
{
	return load_spec_opts(&f->spec, yaml, opts, &f->d);
}

static inline int fx_load(struct fx *f, const char *yaml)
{
	return load_spec_opts(&f->spec, yaml, NULL, &f->d);
}

/* Load yaml into f and validate whatever could be loaded. */
static inline int fx_validate(struct fx *f, const char *yaml)
{
	return load_validate(&f->spec, yaml, &f->d);
}

static inline void diags_dump(const struct diags *d)
{
	size_t i;

	print_error("%zu diagnostic(s):\n", d->n);
	for (i = 0; i < d->n; i++) {
		const struct diag *dg = &d->v[i];

		print_error("  %s:%d:%d: %s: %s\n", dg->file, dg->line, dg->col,
			    dg->severity == DIAG_ERROR ? "error" : "warning", dg->message);
		if (dg->hint)
			print_error("    hint: %s\n", dg->hint);
	}
}

static inline bool sev_matches(const struct diag *dg, enum test_sev sev)
{
	return sev == TEST_ANY || (sev == TEST_ERROR && dg->severity == DIAG_ERROR) ||
	       (sev == TEST_WARNING && dg->severity == DIAG_WARNING);
}

static inline const char *sev_name(enum test_sev sev)
{
	return sev == TEST_ERROR ? "error" : sev == TEST_WARNING ? "warning" : "diagnostic";
}

/* The diagnostic at line:col with exactly this message, or NULL. */
static inline const struct diag *diag_find(const struct diags *d, enum test_sev sev, int line,
					   int col, const char *message)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct diag *dg = &d->v[i];

		if (sev_matches(dg, sev) && dg->line == line && dg->col == col &&
		    strcmp(dg->message, message) == 0)
			return dg;
	}
	return NULL;
}

static inline const struct diag *diag_find_substring(const struct diags *d, const char *part)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (strstr(d->v[i].message, part))
			return &d->v[i];
	return NULL;
}

static inline void assert_diag_impl(const struct diags *d, enum test_sev sev, int line, int col,
				    const char *message, const char *file, int fline)
{
	if (diag_find(d, sev, line, col, message))
		return;
	print_error("expected %s at %d:%d: %s\n", sev_name(sev), line, col, message);
	diags_dump(d);
	_fail(file, fline);
}

/* For positions whose column is a matter of design: the line must be right. */
static inline void assert_on_line_impl(const struct diags *d, int line, const char *message,
				       const char *file, int fline)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].line == line && strcmp(d->v[i].message, message) == 0)
			return;
	print_error("expected a diagnostic on line %d: %s\n", line, message);
	diags_dump(d);
	_fail(file, fline);
}

static inline void assert_hint_impl(const struct diags *d, int line, int col, const char *hint,
				    const char *file, int fline)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		const struct diag *dg = &d->v[i];

		if (dg->line == line && dg->col == col && dg->hint && strcmp(dg->hint, hint) == 0)
			return;
	}
	print_error("expected a diagnostic at %d:%d with hint: %s\n", line, col, hint);
	diags_dump(d);
	_fail(file, fline);
}

static inline void assert_counts_impl(const struct diags *d, size_t errors, size_t warnings,
				      const char *file, int fline)
{
	if (d->errors == errors && d->warnings == warnings)
		return;
	print_error("expected %zu error(s) and %zu warning(s), got %zu and %zu\n", errors, warnings,
		    d->errors, d->warnings);
	diags_dump(d);
	_fail(file, fline);
}

static inline void assert_has_errors_impl(const struct diags *d, int ret, const char *file,
					  int fline)
{
	if (ret < 0 && d->errors > 0)
		return;
	print_error("expected a failure with at least one error, got %d and %zu error(s)\n", ret,
		    d->errors);
	diags_dump(d);
	_fail(file, fline);
}

static inline void assert_no_message_impl(const struct diags *d, const char *part, const char *file,
					  int fline)
{
	if (!diag_find_substring(d, part))
		return;
	print_error("expected no diagnostic containing: %s\n", part);
	diags_dump(d);
	_fail(file, fline);
}

static inline void assert_message_impl(const struct diags *d, const char *part, const char *file,
				       int fline)
{
	if (diag_find_substring(d, part))
		return;
	print_error("expected a diagnostic containing: %s\n", part);
	diags_dump(d);
	_fail(file, fline);
}

/* A diagnostic of any severity at line:col with exactly this message. */
#define assert_diag(d, line, col, msg)                                                             \
	assert_diag_impl((d), TEST_ANY, (line), (col), (msg), __FILE__, __LINE__)
#define assert_error(d, line, col, msg)                                                            \
	assert_diag_impl((d), TEST_ERROR, (line), (col), (msg), __FILE__, __LINE__)
#define assert_warning(d, line, col, msg)                                                          \
	assert_diag_impl((d), TEST_WARNING, (line), (col), (msg), __FILE__, __LINE__)
/* A diagnostic on this line (any column) with exactly this message. */
#define assert_diag_on_line(d, line, msg)                                                          \
	assert_on_line_impl((d), (line), (msg), __FILE__, __LINE__)
/* A diagnostic at line:col carrying exactly this hint. */
#define assert_hint(d, line, col, hint)                                                            \
	assert_hint_impl((d), (line), (col), (hint), __FILE__, __LINE__)
#define assert_diag_counts(d, errors, warnings)                                                    \
	assert_counts_impl((d), (errors), (warnings), __FILE__, __LINE__)
/* ret (a load or validate result) says failure, and d holds an error. */
#define assert_failed_with_errors(d, ret) assert_has_errors_impl((d), (ret), __FILE__, __LINE__)
#define assert_no_errors(d) assert_counts_impl((d), 0, (d)->warnings, __FILE__, __LINE__)
#define assert_no_diags(d) assert_counts_impl((d), 0, 0, __FILE__, __LINE__)
/* No diagnostic (of any severity) whose message contains part. */
#define assert_no_message(d, part) assert_no_message_impl((d), (part), __FILE__, __LINE__)
/* Some diagnostic whose message contains part; for rules whose wording is not yet fixed. */
#define assert_message(d, part) assert_message_impl((d), (part), __FILE__, __LINE__)

#endif
