/*
 * aws_spec.c - aws's rules on a spec, checked by `kiln validate` with no
 * API call: region and zone names, each group's AMI; and the region a
 * report shows when none is given. The engine keeps the rules every cloud
 * shares (a zone is in its region); these are the ones only AWS has.
 */
#include "aws_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* An error at n (the top of the file when NULL) with a hint; NULL past the limit. */
static struct diag *error_at(const struct spec *spec, struct diags *d, const struct ynode *n,
			     const char *msg)
{
	return diags_add(d, DIAG_ERROR, spec->file, n ? n->line : 1, n ? n->col : 1, "%s", msg);
}

static bool aws_region_ok(const char *r)
{
	/* us-east-1, ap-southeast-2, us-gov-west-1, eu-central-2 */
	const char *p = r;
	int parts = 0;

	while (*p) {
		const char *start = p;

		while (islower((unsigned char)*p))
			p++;
		if (p == start)
			break;
		parts++;
		if (*p++ != '-')
			return false;
	}
	if (parts < 2 || !isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}

static bool ami_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (!str_starts_with(s, "ami-") || (n != 12 && n != 21))
		return false;
	for (i = 4; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

bool aws_check_region(const struct spec *spec, const char *region, const struct spec_ref *zone,
		      struct diags *d)
{
	char *msg;

	if (aws_region_ok(region))
		return true;
	if (zone) {
		msg = xasprintf("provider.zone '%s' is not an AWS availability zone", zone->name);
		diag_hint(error_at(spec, d, zone->node, msg),
			  "write a zone like us-east-1a, and set provider.region");
	} else {
		msg = xasprintf("provider.region '%s' is not an AWS region name", region);
		diag_hint(error_at(spec, d, spec_value_node(spec->provider.node, "region"), msg),
			  "write a region like us-east-1 or eu-west-2");
	}
	free(msg);
	return false;
}

void aws_check_group(const struct spec *spec, const struct spec_group *g, struct diags *d)
{
	char *msg = NULL;

	if (!ydoc_get(g->node, "image") && !(spec->broken & SPEC_BROKEN_PROVIDER)) {
		msg = xasprintf("compute.%s needs an image on the aws provider", g->name);
		diag_hint(error_at(spec, d, g->key, msg), "add image: ami-... (an AMI in %s)",
			  spec->provider.region ? spec->provider.region : "your region");
	} else if (g->image && !ami_ok(g->image)) {
		msg = xasprintf("compute.%s.image '%s' is not an AMI id", g->name, g->image);
		diag_hint(error_at(spec, d, ydoc_get(g->node, "image"), msg),
			  "write ami- and 8 or 17 hex digits, like ami-0123456789abcdef0");
	}
	free(msg);
}

/* The environment's region (AWS_REGION, AWS_DEFAULT_REGION), else us-east-1. */
const char *aws_default_region(void)
{
	return getenv("AWS_REGION")	      ? getenv("AWS_REGION")
	       : getenv("AWS_DEFAULT_REGION") ? getenv("AWS_DEFAULT_REGION")
					      : "us-east-1";
}
