/*
 * cidr.h - IPv4 CIDR blocks.
 */
#ifndef KILN_CIDR_H
#define KILN_CIDR_H

#include <stdbool.h>
#include <stdint.h>

/* An IPv4 CIDR: 0 ok, -1 malformed; *host_bits is set when bits beyond the prefix are set. */
int cidr_parse(const char *s, uint32_t *addr, int *prefix, bool *host_bits);
/* "a.b.c.d/p" with the host bits cleared; caller frees. */
char *cidr_format(uint32_t addr, int prefix);

#endif
