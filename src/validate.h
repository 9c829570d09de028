/*
 * validate.h - checks that relate one part of a spec to another.
 *
 * spec.c has already checked the shape of every value; here are the rules
 * that need more than one value at a time: references between groups, roles
 * and stores, the provider's own requirements, fabric against zones, and the
 * encryption and mount rules. Sections whose shape was broken are skipped, so
 * one mistake does not cascade into a dozen false ones.
 */
#ifndef KILN_VALIDATE_H
#define KILN_VALIDATE_H

#include "diag.h"
#include "spec.h"

/* Adds to d; returns 0 when it added no error. */
int validate_spec(const struct spec *spec, struct diags *d);

/*
 * spec_load_file() then validate_spec(): the whole of `kiln validate` for one
 * file, as every later command needs it. Returns 0 and *out when valid.
 */
int validate_load(struct spec **out, const char *path, const struct spec_options *opts,
		  struct diags *d);

/* validate_load() of bytes already read from path (named in messages). */
int validate_load_buffer(struct spec **out, const char *path, const char *buf, size_t len,
			 const struct spec_options *opts, struct diags *d);

/*
 * validate_load() and the rules judged against today's date (KILN_NOW for
 * tests): a waiver the plan would count as an error (expired, without a
 * reason, of an unknown rule) is an error here too. What `kiln validate`
 * runs; a plan reports these as audit findings instead, for its reviewer.
 */
int validate_load_today(struct spec **out, const char *path, const struct spec_options *opts,
			struct diags *d);

#endif
