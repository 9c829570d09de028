/*
 * cidr.c - see cidr.h.
 */
#include "cidr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static int parse_octet(const char **pp, unsigned *out)
{
	const char *p = *pp;
	unsigned v = 0;
	int digits = 0;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p - '0');
		if (++digits > 3)
			return -1;
		p++;
	}
	/* A leading zero would be read as octal by some tools: refuse it. */
	if (!digits || v > 255 || (digits > 1 && **pp == '0'))
		return -1;
	*out = v;
	*pp = p;
	return 0;
}

int cidr_parse(const char *s, uint32_t *addr, int *prefix, bool *host_bits)
{
	const char *p = s;
	uint32_t a = 0, mask;
	unsigned v;
	int i;

	for (i = 0; i < 4; i++) {
		if (parse_octet(&p, &v) < 0)
			return -1;
		a = (a << 8) | v;
		if (i < 3 && *p++ != '.')
			return -1;
	}
	if (*p++ != '/')
		return -1;
	if (parse_octet(&p, &v) < 0 || v > 32 || *p)
		return -1;
	mask = v == 0 ? 0 : 0xffffffffu << (32 - v);
	*addr = a & mask;
	*prefix = (int)v;
	*host_bits = (a & ~mask) != 0;
	return 0;
}

char *cidr_format(uint32_t addr, int prefix)
{
	uint32_t mask = prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);

	addr &= mask;
	return xasprintf("%u.%u.%u.%u/%d", addr >> 24, (addr >> 16) & 255, (addr >> 8) & 255,
			 addr & 255, prefix);
}
