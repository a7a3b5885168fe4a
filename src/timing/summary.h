/*
 * What one hardware layer is, in numbers: the summary each NVDLA engine
 * decodes from the registers of the group it executes (dla_*_summary in
 * src/sim/nvdla/dla.h, next to each engine's execute), and the PERF counter
 * values the cycle model returns for the device to write.
 *
 * This header is the whole vocabulary between the simulator and the timing
 * layer: the timing model reads summaries, never registers, and returns
 * counters, never writes them.  It includes nothing of src/sim, so the
 * dependency runs one way: src/sim/nvdla -> src/timing
 * (tests/unit/include_layers.sh).
 */
#ifndef DLASIM_TIMING_SUMMARY_H
#define DLASIM_TIMING_SUMMARY_H

#include <stdint.h>

/* The kinds of hardware layer the NVDLA scheduler runs (its pipeline table,
 * src/sim/nvdla/device.c) and the cycle model costs (src/timing/model.c). */
enum dla_layer_kind {
    DLA_LAYER_CONV = 0, /* CDMA, CSC, CMAC, CACC, SDP on the fly (and PDP) */
    DLA_LAYER_SDP,      /* SDP from memory (and PDP on the fly) */
    DLA_LAYER_PDP,
    DLA_LAYER_CDP,
    DLA_LAYER_BDMA,
    DLA_LAYER_RUBIK,
    DLA_LAYER_KINDS
};

/* SDP: the data cube, its batches, whether an X stage (BS/BN) is in use.
 * `int16` in each summary: the engine processes INT16 elements (2 bytes; a
 * memory atom holds half as many of them, src/timing/model.c). */
struct dla_sdp_summary {
    uint64_t w, h, c, batches;
    int x_stages;
    int int16;
    uint64_t element_operand_bytes; /* read by BRDMA/NRDMA/ERDMA per element */
};

/* PDP: input and output cubes, split count, kernel, stride, top padding. */
struct dla_pdp_summary {
    uint64_t w, h, c, ow, oh, splits;
    uint64_t kw, kh, sw, sh, pad_top;
    int int16;
};

/* CDP: the data cube. */
struct dla_cdp_summary {
    uint64_t w, h, c;
    int int16;
};

/* Convolution: output pixels (x batches), kernels, channels as CSC sees
 * them, kernel height/width, the MACs they make, the weight bytes CDMA
 * fetches (0 when CBUF keeps them: WEIGHT_REUSE) and the CBUF banks that
 * hold weights. */
struct dla_conv_summary {
    uint64_t out_px, k, c, r, s, macs;
    uint64_t weight_bytes, weight_banks;
    /* the rest of CSC's geometry (the layer observer, include/dlasim/layer.h;
     * the cycle model needs only the fields above) */
    uint64_t out_w, out_h, batches, stride_x, stride_y, dil_x, dil_y, data_banks;
    int int16; /* PROC_PRECISION INT16: atomic operations of Atomic-K / 2 kernels */
};

/* Unit ids a device may hand the timing layer (its register file's units,
 * DLA_REGFILE_MAX_UNITS): the model keeps when each (unit, group) was enabled
 * and ends, without knowing which unit an id is. */
#define DLA_TIMING_UNIT_IDS 32

/* One layer: its kind, the units it holds and the group each executes, and
 * the summaries of the engines taking part. */
struct dla_layer_summary {
    enum dla_layer_kind kind;
    unsigned n;
    const uint8_t *unit;   /* the device's ids of the units (< DLA_TIMING_UNIT_IDS; opaque to
                              the model, which only matches them with dla_timing_op_enabled's) */
    const uint8_t *group;
    unsigned engines;      /* bit (1 << enum dlasim_timing_unit) of each engine the units
                              belong to: they are busy until the layer ends */
    int has_pdp;           /* PDP takes part (alone or on the fly) */
    struct dla_conv_summary conv; /* DLA_LAYER_CONV */
    struct dla_sdp_summary sdp;   /* DLA_LAYER_CONV, DLA_LAYER_SDP */
    struct dla_pdp_summary pdp;   /* has_pdp */
    struct dla_cdp_summary cdp;   /* DLA_LAYER_CDP */
};

/* The D_PERF_* counters that count time, as the cycle model estimates them
 * for one layer; the device writes them into the units whose perf enable
 * is set (the functional model leaves them 0). */
enum dla_perf_counter {
    DLA_PERF_DAT_READ_STALL = 0, /* CDMA */
    DLA_PERF_WT_READ_STALL,      /* CDMA */
    DLA_PERF_DAT_READ_LATENCY,   /* CDMA: summed latency of the read requests */
    DLA_PERF_WT_READ_LATENCY,    /* CDMA */
    DLA_PERF_READ_STALL,         /* SDP_RDMA MRDMA, PDP_RDMA, CDP_RDMA */
    DLA_PERF_WRITE_STALL,        /* SDP, PDP, CDP */
    DLA_PERF_COUNTERS
};

struct dla_perf_counters {
    uint32_t v[DLA_PERF_COUNTERS];
};

/* "conv", "sdp", "pdp", "cdp", "bdma", "rubik" (src/timing/timing.c). */
const char *dla_layer_kind_name(enum dla_layer_kind k);

#endif
