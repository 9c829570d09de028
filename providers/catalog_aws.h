/*
 * catalog_aws.h - the AWS instance types kiln knows (catalog_aws.c), the
 * one table the aws and sim providers share. Only providers include this:
 * the engine reaches a catalog through the provider's catalog().
 */
#ifndef KILN_CATALOG_AWS_H
#define KILN_CATALOG_AWS_H

#include "catalog.h"

extern const struct catalog catalog_aws;

#endif
