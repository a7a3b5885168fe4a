/*
 * dlasim layers: what each hardware layer the device ran was, as its
 * engines decode it from their registers (the same per-engine summaries the
 * cycle model reads, src/timing/summary.h), delivered to an observer right
 * after the layer executes and before its done interrupt is raised.
 *
 * For a harness that needs a layer's geometry without decoding registers
 * itself: benchmarks (bench/conv_bench.c) compare a layer's time with a
 * plain reference on the same geometry.
 *
 * On rk3588 a layer is a task of one core (its CNA + CORE + DPU [+ PPU], or a
 * DPU or PPU reading memory): kind "conv" with the convolution's geometry as
 * CNA/CORE decode it (a depthwise kernel has in_c 1; no banks: the RK CBUF
 * split is not modelled), "sdp" for a DPU task (the DPU descends from
 * NVDLA's SDP), "pdp" for a PPU task; index counts the tasks of all cores.
 */
#ifndef DLASIM_LAYER_H
#define DLASIM_LAYER_H

#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

struct dlasim_layer_info {
    unsigned index;        /* device layer number (1 = first) */
    const char *kind;      /* "conv", "sdp", "pdp", "cdp", "bdma", "rubik" */
    int status;            /* the layer's outcome: 0 or a negative dlasim_status */
    /* kind "conv": the convolution as CSC runs it (spec 004, CSC D_* registers) */
    uint32_t out_w, out_h, out_k;  /* output cube (per batch) */
    uint32_t in_c;                 /* channels of a kernel */
    uint32_t k_w, k_h;             /* kernel width/height */
    uint32_t stride_x, stride_y, dil_x, dil_y;
    uint32_t batches;
    uint32_t data_banks, weight_banks; /* CBUF banks held (CSC D_BANK + 1) */
    uint64_t macs;                 /* multiply-accumulates, all batches */
};

typedef void (*dlasim_layer_fn)(void *opaque, const struct dlasim_layer_info *layer);

/* Call fn(opaque, layer) after every hardware layer from now on (fn NULL:
 * stop).  DLASIM_ERR_INVAL for a NULL dev, DLASIM_ERR_UNSUPPORTED for a
 * configuration whose engines do not describe their layers (every one
 * today does). */
int dlasim_set_layer_observer(struct dlasim_dev *dev, dlasim_layer_fn fn, void *opaque);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
