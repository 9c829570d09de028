/*
 * aws.h - the aws provider, for the provider table (providers/providers.c).
 */
#ifndef KILN_AWS_H
#define KILN_AWS_H

#include "provider.h"

extern const struct provider provider_aws;

#endif
