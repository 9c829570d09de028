/*
 * tags_aws.h - AWS's rules for a tag, which the aws provider and sim (a
 * model of AWS) both check a spec's tags against at validate time.
 *
 * The rules are the strictest of the services kiln tags (botocore's models
 * of EC2, IAM, EFS, FSx and S3): a key is 1 to 128 characters, a value 0 to
 * 256, both counted in characters (code points), not bytes; both are made of
 * letters, numbers and separators (\p{L}, \p{N}, \p{Z}) and _ . : / = + - @
 * (IAM, EFS and FSx); a key may not begin with aws: in any letter case.
 */
#ifndef KILN_TAGS_AWS_H
#define KILN_TAGS_AWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec.h"

#define TAGS_AWS_KEY_MAX 128
#define TAGS_AWS_VALUE_MAX 256

/* A closed range of code points (tag_chars_aws.c, generated). */
struct tags_aws_range {
	uint32_t first, last;
};

extern const struct tags_aws_range tags_aws_chars[];
extern const size_t tags_aws_nchars;

/* Whether an AWS tag key or value may hold code point cp. */
bool tags_aws_char_ok(uint32_t cp);

/* Each problem with the spec's tags: an error in d at the key or value. */
void tags_aws_check(const struct spec *spec, struct diags *d);

#endif
