/*
 * arn_aws.c - the grammar of an ARN; see arn_aws.h.
 */
#include "arn_aws.h"

#include <string.h>

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"

/* Whether the n bytes at s are all in set. */
static bool span_is(const char *s, size_t n, const char *set)
{
	return strspn(s, set) >= n;
}

/*
 * "*", or arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE: partition and
 * service [a-z0-9-]+, region [a-z0-9-*?]* (empty for global services),
 * account [0-9*?]* or "aws" (AWS managed policies), resource any visible
 * ASCII (it may hold ':' and '/'). NULL when good, else the part at fault.
 */
static const char *arn_aws_fault(const char *r)
{
	static const char *const faults[] = {
	    "the partition must be a-z, 0-9 and '-'",
	    "the service must be a-z, 0-9 and '-'",
	    "the region must be a-z, 0-9, '-', '*' and '?'",
	    "the account must be digits, '*' and '?', or aws",
	};
	const char *p, *end;
	size_t i, n;

	if (strcmp(r, "*") == 0)
		return NULL;
	if (strncmp(r, "arn:", 4) != 0)
		return "it does not start with arn:";
	p = r + 4;
	for (i = 0; i < 4; i++) {
		end = strchr(p, ':');
		if (!end)
			return "it has fewer than six ':'-separated parts";
		n = (size_t)(end - p);
		if ((i < 2 && (n == 0 || !span_is(p, n, LOWER_DIGITS "-"))) ||
		    (i == 2 && !span_is(p, n, LOWER_DIGITS "-*?")) ||
		    (i == 3 && !span_is(p, n, "0123456789*?") &&
		     !(n == 3 && !strncmp(p, "aws", 3))))
			return faults[i];
		p = end + 1;
	}
	if (!*p)
		return "the resource after the fifth ':' is empty";
	for (; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return "the resource holds a space or a character outside ASCII";
	return NULL;
}

/* An ARN whose resource part is "*" (arn:aws:s3:::*). */
static bool arn_aws_is_any(const char *r)
{
	int colons = 0;

	if (strncmp(r, "arn:", 4) != 0)
		return false;
	for (; *r && colons < 5; r++)
		colons += *r == ':';
	return colons == 5 && strcmp(r, "*") == 0;
}

const struct spec_grammar arn_aws_grammar = {
    .resource_fault = arn_aws_fault,
    .resource_is_any = arn_aws_is_any,
    .resource_form = "arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE",
    .example_action = "ecr:GetAuthorizationToken",
    .example_resource = "arn:aws:ecr:us-east-1:123456789012:repository/train",
};
