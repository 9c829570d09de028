/*
 * catalog_gpus.h - the dense peak of every GPU model a catalog sells
 * (catalog_gpus.c): one dated table, from the vendors' datasheets, that
 * every provider's catalog points at. Only providers include this: the
 * engine reaches it through the provider's catalog() and catalog_gpu().
 */
#ifndef KILN_CATALOG_GPUS_H
#define KILN_CATALOG_GPUS_H

#include "catalog.h"

extern const struct catalog_gpus catalog_gpu_peaks;

#endif
