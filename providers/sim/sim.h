/*
 * sim.h - the embedded sim provider: a simulated cloud kept in a directory.
 *
 * See sim.c for the knobs (KILN_SIM_*) and the on-disk format.
 */
#ifndef KILN_SIM_H
#define KILN_SIM_H

#include "provider.h"

extern const struct provider provider_sim;

#endif
