/*
 * Runtime operations for tests that build networks by hand (the loadable
 * writer, the NVDLA UAPI client, its fuzzer, the runtime graph tests).
 * Header-only so that the fuzzers, which do not link tests/common, use the
 * same construction.
 */
#ifndef DLASIM_TESTS_RTOP_H
#define DLASIM_TESTS_RTOP_H

#include <string.h>

#include "dlasim/runtime.h"

/* An operation of `type` with no consumers and no fused parent (index -1:
 * the firmware's "none"), everything else zero. */
static inline void rtop_init(struct dlasim_rt_op *op, uint8_t type)
{
    memset(op, 0, sizeof *op);
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        op->consumers[i].index = -1;
    }
    op->fused_parent.index = -1;
    op->op_type = type;
}

/* PDP max pooling 2x2, stride 2, one split: src (in_w wide) to dst (out_w
 * wide); the firmware encodes a 2-wide window as pool_width 1. */
static inline void rtop_maxpool2x2(struct dlasim_rt_op *op, const struct dlasim_rt_cube *src,
                                   const struct dlasim_rt_cube *dst)
{
    rtop_init(op, DLASIM_RT_OP_PDP);
    op->op.pdp.split_num = 1;
    op->op.pdp.partial_in_width_first = src->width;
    op->op.pdp.partial_width_first = dst->width;
    op->op.pdp.pool_mode = 1; /* max */
    op->op.pdp.pool_width = op->op.pdp.pool_height = 1;
    op->op.pdp.stride_x = op->op.pdp.stride_y = 2;
    op->surface.io.src_data = *src;
    op->surface.io.dst_data = *dst;
}

#endif
