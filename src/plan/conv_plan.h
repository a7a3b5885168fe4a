/*
 * Convolution planner internals shared by the pure planning
 * (conv_plan.c) and the emission of its hardware layers on the runtime
 * port (conv_emit.c).
 */
#ifndef NVRT_CONV_PLAN_H
#define NVRT_CONV_PLAN_H

#include <stdint.h>

#include "dlasim/conv.h"

/* Strides of the input/output cubes in memory, and the memory check. */
uint32_t nvrt_conv_in_line(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m);
uint32_t nvrt_conv_in_surf(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m);
uint32_t nvrt_conv_out_line(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m);
uint32_t nvrt_conv_out_surf(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m);
int nvrt_conv_check_mem(const struct dlasim_conv_plan *p, const struct dlasim_conv_mem *m);

#endif
