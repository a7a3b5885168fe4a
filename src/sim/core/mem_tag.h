/* Whose content a device's memory holds, for callers inside the library
 * that keep data resident between runs (a compiled model's weights,
 * src/compiler/model.c).
 *
 * A caller that has written its data declares it with a tag of its own
 * (unique to that caller and that load); any later dlasim_mem_write, by
 * anyone, clears the tag, so a run that finds its own tag still set knows
 * nothing was written through the API since it declared its content.  A
 * new device starts with no tag, so a device created at the address of a
 * destroyed one is never taken for it.  What the hardware itself writes
 * (its output surfaces) does not clear the tag: the caller places those. */
#ifndef DLASIM_SIM_CORE_MEM_TAG_H
#define DLASIM_SIM_CORE_MEM_TAG_H

#include <stdint.h>

#include "dlasim/dlasim.h"

uint64_t dla_mem_tag(const struct dlasim_dev *dev);
void dla_set_mem_tag(struct dlasim_dev *dev, uint64_t tag);

#endif
