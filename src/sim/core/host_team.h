/* The device's worker threads for callers inside the library that do their
 * own work between runs on the device (a compiled model's input, quantized
 * and packed into the device's layout: src/compiler/model.c).
 *
 * dla_dev_idle_team returns the device's team (common/team.h) with nothing
 * of the device on it: a layer still running on a worker has ended first,
 * its completion left to the next step as any CSB access leaves it.  The
 * team is the device's until the caller's next call into the device; its
 * jobs must not touch the device (its memory, its registers).  NULL when
 * the device has no team (one thread, or a personality without one): the
 * caller then runs its items itself (dla_team_run with NULL does). */
#ifndef DLASIM_SIM_CORE_HOST_TEAM_H
#define DLASIM_SIM_CORE_HOST_TEAM_H

#include "dlasim/dlasim.h"

struct dla_team;

struct dla_team *dla_dev_idle_team(struct dlasim_dev *dev);

#endif
