/*
 * PDP — Planar Data Processor (pooling) with its read DMA PDP_RDMA.
 *
 * What is modelled
 *   Max / min / average pooling of a feature cube over a kernel of 1..8 x 1..8
 *   elements with strides 1..16, padding 0..7 on each side, the padding values
 *   PAD_VALUE_1X..7X of average pooling, the reciprocal-based average with the
 *   datapath's bit widths and rounding, and split-width mode (the width is
 *   processed in SPLIT_NUM+1 parts that the hardware reads, pools and writes
 *   one after the other).  Input comes from memory through PDP_RDMA
 *   ("off-flying") or from SDP ("on-flying", dla_pdp_execute's `in`).
 *
 * CSB windows
 *   PDP_RDMA 0xa000-0xafff, PDP 0xb000-0xbfff (nv_small map; the generated
 *   NVDLA_PDP_* / NVDLA_PDP_RDMA_* constants carry the addresses).
 * GLB interrupt bits
 *   PDP_DONE_STATUS0/1, raised by the device core when the layer completes.
 * Memory ports
 *   Read through PDP_RDMA D_SRC_RAM_CFG.SRC_RAM_TYPE, write through PDP
 *   D_DST_RAM_CFG.DST_RAM_TYPE (0 = CVIF, 1 = MCIF/DBB).
 *
 * Data path, per output element and per lane of an atom (ref: vmod
 * pdp/NV_NVDLA_PDP_CORE_cal1d.v, NV_NVDLA_PDP_CORE_cal2d.v; cmod
 * pdp/NV_NVDLA_pdp.cpp LineOperation / PoolingStage0Calc / PoolingStage1Calc).
 * B is the element width (8 for int8, 16 for int16):
 *   1. horizontal (1-D) pooling over the real elements of the kernel window in
 *      one input line.  Average: sum of the elements (B+3 bits); when the
 *      window covers n padded columns, PAD_VALUE_nX (its low B+3 bits, signed)
 *      is added and the result wraps to B+3 bits (cal1d pad_table_out).
 *   2. vertical pooling of the 1-D results of the real lines of the window
 *      (B+6 bits).  Average: when n lines are padding, PAD_VALUE_nX * kernel
 *      width (low B+6 bits, signed) is added (cal2d pad_value).
 *   3. average only: x RECIP_KERNEL_WIDTH (17-bit unsigned, 2^16 = 1.0), product
 *      kept to B+23 bits, rounded to B+3 bits; then x RECIP_KERNEL_HEIGHT,
 *      product kept to B+20 bits, rounded to B bits.  Rounding is half away from
 *      zero and the result keeps its low bits (no saturation: cal2d hmult/vmult
 *      take the integer bits and add the rounding bit).
 *   Max/min ignore padding; the result is the extreme of the real elements.
 *   The padding values are not multiplied by the number of padded elements:
 *   the driver programs PAD_VALUE_nX = n * value (RDL D_POOLING_PADDING_VALUE).
 *
 * Memory layout
 *   Feature surfaces of atoms of M = dla_config.memory_atomic_size bytes,
 *   E = M * 8 / B lanes of B bits: element (c, y, x) at base + (c / E) *
 *   surface_stride + y * line_stride + x * M + (c % E) * B/8.  Whole atoms are read and
 *   written, so the lanes past the last channel of the last surface are pooled
 *   from whatever memory holds there (as the hardware does).  Reads are one
 *   burst per input line of a split (RDMA ig: one request per line), writes
 *   one burst per output line (WDMA), in the hardware's order: split, surface,
 *   line.
 *
 * Split width (ref: vmod PDP_RDMA_ig.v base_addr_split / req_size, cmod
 * PdpRdmaSequenceThread / PoolingStage0SequenceThread): with overlap
 * o = |kernel_width - stride_width|, split 0 reads PARTIAL_WIDTH_IN_FIRST
 * columns from column 0; split i > 0 starts at FIRST + (i-1) * MID - o columns
 * (+ o when the stride is larger than the kernel) and reads MID (LAST for the
 * last split) + o columns (- o).  Only split 0 has left padding, only the last
 * split right padding.  Split i writes PARTIAL_WIDTH_OUT_{FIRST,MID,LAST}
 * atoms from output column FIRST + (i-1) * MID.
 *
 * Modelling choices and refusals (DLASIM_ERR_PROG, layer still completes):
 *   - kernel width/height fields > 7 (kernel > 8), pooling method 3, data
 *     format 3 or a format the configuration does not have;
 *   - a kernel window holding no real element (e.g. PAD_LEFT >= kernel width);
 *   - output width/height not equal to (pad + in + pad - kernel) / stride + 1
 *     (per split in split mode); output and input channel counts giving
 *     different numbers of surfaces;
 *   - a split that would start before column 0 or read no column (the
 *     per-split output widths are checked as above).  Split widths whose sum
 *     differs from D_DATA_CUBE_IN/OUT_WIDTH are only logged (guest error): in
 *     split mode the hardware uses the partial widths alone (cal1d
 *     pooling_pwidth, RDMA req_size, WDMA size_of_width);
 *   - an output width (per split) larger than the line buffer holds: 16 atoms
 *     per bank, 8 banks shared by the output lines kept in flight (cal2d
 *     buffer_lines_num / bank_merge_num and its "cube_out_width setting out
 *     of range" assertions);
 *   - PDP_RDMA registers describing a different input stream than PDP's
 *     (height, surface count, format; width or split geometry); on-flying
 *     input with SPLIT_NUM != 0 (SDP streams whole lines: preproc has no
 *     split).  Channel counts only need to give the same number of surfaces.
 *     PDP_RDMA's D_POOLING_PADDING_CFG is not used by the hardware (RDMA ig
 *     has no such input) and is ignored.
 *   - FP16 (nv_small family has no FP16 datapath) -> DLASIM_ERR_UNSUPPORTED.
 *   Hardware-updated registers: D_PERF_WRITE_STALL, D_NAN_INPUT_NUM,
 *   D_INF_INPUT_NUM, D_NAN_OUTPUT_NUM (PDP) and D_PERF_READ_STALL (PDP_RDMA)
 *   are set to 0: no stalls are modelled and integer data has no NaN/Inf.
 *   On-flying input lanes past the SDP cube's channel count read as 0.
 *   If the output overlaps the input in memory the result follows this
 *   model's order (all lines a window needs are read before its output line
 *   is written), not the hardware's exact interleaving.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arith/lanes.h"
#include "arith/pool_arith.h"
#include "common/team.h"
#include "sim/core/budget.h"
#include "sim/core/mem.h"
#include "sim/nvdla/cbuf.h"
#include "sim/nvdla/dla.h"

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

#define PDP_KERNEL_MAX 8u        /* RDL D_POOLING_KERNEL_CFG enums KERNEL_*_1..8 */
#define PDP_PAD_MAX 7u           /* 3-bit PAD_* fields, PAD_VALUE_1X..7X */
/* Line buffer: 8 banks of 16*M/throughput entries (projects.spec
 * PDP_SINGLE_LBUF_WIDTH), an output atom takes M/throughput entries. */
#define PDP_LBUF_ATOMS_PER_BANK 16u
#define PDP_SPLIT_MAX 256u       /* 8-bit SPLIT_NUM + 1 */

enum pdp_method { PDP_AVE = 0, PDP_MAX = 1, PDP_MIN = 2 };

/* One width split (the whole width when split mode is off). */
struct pdp_split {
    int64_t in_x0;   /* first input column read (cube coordinates) */
    uint32_t in_w;   /* input columns read */
    uint32_t pad_l;  /* left padding of this split */
    uint32_t pad_r;  /* right padding of this split */
    uint32_t out_x0; /* first output column written */
    uint32_t out_w;  /* output columns */
};

/* Lanes of an atom the whole-plane average keeps on the stack (Atomic-M). */
#define PDP_WHOLE_LANES_MAX 32u

/* One PDP layer, decoded once from the registers of its group. */
struct pdp_cfg {
    unsigned group;
    int flying;          /* input from SDP */
    unsigned method;     /* enum pdp_method */
    unsigned bits;       /* element width B: 8 or 16 */
    unsigned bytes;      /* bytes per element */
    unsigned lanes;      /* elements per atom (Atomic-M) */
    unsigned beat_lanes; /* lanes cal1d takes per cycle (PDP_THROUGHPUT) */
    unsigned atom_bytes;
    uint32_t in_w, in_h, in_c;
    uint32_t out_w, out_h, out_c;
    uint32_t surfaces;   /* ceil(in_c / lanes) */
    uint32_t kw, kh, sw, sh;
    uint32_t pad_l, pad_r, pad_t, pad_b;
    int32_t pad_h[PDP_PAD_MAX + 1];      /* horizontal addend for n padded columns */
    int32_t pad_v[PDP_KERNEL_MAX + 1];   /* vertical addend for n padded lines */
    uint32_t recip_w, recip_h;
    /* split geometry */
    uint32_t nsplit;
    uint32_t part_in[3];  /* first, mid, last partial input widths (+1 applied) */
    uint32_t part_out[3]; /* first, mid, last partial output widths */
    /* memory */
    uint64_t src_base, src_line, src_surf;
    int src_port;
    uint64_t dst_base, dst_line, dst_surf;
    int dst_port;
    enum dla_lanes_isa isa; /* of the max/min and packing loops */
    int64_t lastline_extra; /* c2d_lastline_extra, and its *last_out */
    int lastline_out;
    /* last: pdp_decode clears the fields before it; pdp_decode_splits sets
     * every field of split[0 .. nsplit-1], the only ones read */
    struct pdp_split split[PDP_SPLIT_MAX];
};

/* ---- small exact integer helpers: src/arith/pool_arith.h (shared with the
 * RK3588 PPU) ----------------------------------------------------------------- */

/* Output line buffer capacity in atoms for a kernel height and stride.
 * ref: cal2d buffer_lines_num / bank_merge_num. */
static uint32_t pdp_lbuf_max_width(uint32_t kh, uint32_t sh)
{
    uint32_t lines;
    uint32_t merge;
    if (sh >= kh) {
        lines = 1;
    } else if (sh == 1) {
        lines = kh;
    } else if (sh == 2) {
        lines = (kh + 1) / 2;
    } else if (sh == 3) {
        lines = (kh <= 6) ? 2 : 3;
    } else {
        lines = 2;
    }
    if (lines == 1) {
        merge = 8;
    } else if (lines == 2) {
        merge = 4;
    } else if (lines <= 4) {
        merge = 2;
    } else {
        merge = 1;
    }
    return PDP_LBUF_ATOMS_PER_BANK * merge;
}

/* Number of windows of a padded line: (pl + n + pr - k) / s + 1, or 0 if the
 * kernel does not fit. */
static uint32_t pdp_windows(uint32_t pl, uint32_t n, uint32_t pr, uint32_t k, uint32_t s)
{
    uint64_t ext = (uint64_t)pl + n + pr;
    if (ext < k) {
        return 0;
    }
    return (uint32_t)((ext - k) / s + 1u);
}

/* First window (index) of a padded line holding no real element, or -1. */
static int64_t pdp_empty_window(uint32_t pl, uint32_t n, uint32_t k, uint32_t s,
                                uint32_t count)
{
    for (uint32_t j = 0; j < count; j++) {
        int64_t a = (int64_t)j * s - pl;
        int64_t b = a + k;
        if (b <= 0 || a >= (int64_t)n) {
            return j;
        }
    }
    return -1;
}

/* ---- register decoding ---------------------------------------------------- */

#define PDP_F(d, g, REG, FIELD) DLA_REG_FIELD(d, g, NVDLA_PDP_##REG##_0, FIELD)
/* PDP_RDMA registers come from PDP_RDMA's own consumer group. */
#define RDMA_F(d, REG, FIELD) \
    DLA_REG_FIELD(d, dla_consumer((d), NVDLA_UNIT_PDP_RDMA), NVDLA_PDP_RDMA_##REG##_0, FIELD)

static const uint32_t pdp_pad_value_regs[PDP_PAD_MAX] = {
    NVDLA_PDP_D_POOLING_PADDING_VALUE_1_CFG_0, NVDLA_PDP_D_POOLING_PADDING_VALUE_2_CFG_0,
    NVDLA_PDP_D_POOLING_PADDING_VALUE_3_CFG_0, NVDLA_PDP_D_POOLING_PADDING_VALUE_4_CFG_0,
    NVDLA_PDP_D_POOLING_PADDING_VALUE_5_CFG_0, NVDLA_PDP_D_POOLING_PADDING_VALUE_6_CFG_0,
    NVDLA_PDP_D_POOLING_PADDING_VALUE_7_CFG_0,
};

/* Data format field -> element width, refusing what the configuration lacks. */
static int pdp_decode_format(struct dla_dev *d, uint32_t fmt, unsigned *bits)
{
    const struct dla_config *cc = dla_cfg(d);
    switch (fmt) {
    case NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA_INT8:
        if (!(cc->feature_data_type & DLA_TYPE_INT8)) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP: D_DATA_FORMAT_0.INPUT_DATA=INT8 but configuration %s has no INT8 "
                             "feature data", cc->name);
        }
        *bits = 8;
        return 0;
    case NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA_INT16:
        if (!(cc->feature_data_type & DLA_TYPE_INT16)) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP: D_DATA_FORMAT_0.INPUT_DATA=INT16 but configuration %s has no INT16 "
                             "feature data", cc->name);
        }
        *bits = 16;
        return 0;
    case NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA_FP16:
        if (!(cc->feature_data_type & DLA_TYPE_FP16)) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP: D_DATA_FORMAT_0.INPUT_DATA=FP16 but configuration %s has no FP16 "
                             "feature data", cc->name);
        }
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "PDP: D_DATA_FORMAT_0.INPUT_DATA=FP16 pooling is not modelled");
    default:
        return dla_error(d, DLASIM_ERR_PROG, "PDP: D_DATA_FORMAT_0.INPUT_DATA=%u is reserved", fmt);
    }
}

/* Kernel, stride, padding, pooling method and the padding addends. */
static int pdp_decode_pooling(struct dla_dev *d, unsigned g, struct pdp_cfg *c)
{
    uint32_t kwf = PDP_F(d, g, D_POOLING_KERNEL_CFG, KERNEL_WIDTH);
    uint32_t khf = PDP_F(d, g, D_POOLING_KERNEL_CFG, KERNEL_HEIGHT);
    c->method = PDP_F(d, g, D_OPERATION_MODE_CFG, POOLING_METHOD);
    if (c->method > PDP_MIN) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_OPERATION_MODE_CFG_0.POOLING_METHOD=%u is reserved", c->method);
    }
    if (kwf >= PDP_KERNEL_MAX) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_POOLING_KERNEL_CFG_0.KERNEL_WIDTH=%u (kernel width %u) exceeds the "
                         "maximum 8", kwf, kwf + 1);
    }
    if (khf >= PDP_KERNEL_MAX) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_POOLING_KERNEL_CFG_0.KERNEL_HEIGHT=%u (kernel height %u) exceeds the "
                         "maximum 8", khf, khf + 1);
    }
    c->kw = kwf + 1;
    c->kh = khf + 1;
    c->sw = PDP_F(d, g, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH) + 1;
    c->sh = PDP_F(d, g, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT) + 1;
    c->pad_l = PDP_F(d, g, D_POOLING_PADDING_CFG, PAD_LEFT);
    c->pad_r = PDP_F(d, g, D_POOLING_PADDING_CFG, PAD_RIGHT);
    c->pad_t = PDP_F(d, g, D_POOLING_PADDING_CFG, PAD_TOP);
    c->pad_b = PDP_F(d, g, D_POOLING_PADDING_CFG, PAD_BOTTOM);
    c->recip_w = PDP_F(d, g, D_RECIP_KERNEL_WIDTH, RECIP_KERNEL_WIDTH);
    c->recip_h = PDP_F(d, g, D_RECIP_KERNEL_HEIGHT, RECIP_KERNEL_HEIGHT);

    /* ref: cal1d pad_table_out[B+2:0] added to the B+3-bit 1-D sum;
     * cal2d pad_value = $signed(PAD_VALUE_nX[18:0]) * kernel_width, low B+6 bits. */
    memset(c->pad_h, 0, sizeof(c->pad_h));
    memset(c->pad_v, 0, sizeof(c->pad_v));
    for (unsigned n = 1; n <= PDP_PAD_MAX; n++) {
        uint32_t raw = dla_reg(d, pdp_pad_value_regs[n - 1], g) &
                       NVDLA_PDP_D_POOLING_PADDING_VALUE_1_CFG_0_PAD_VALUE_1X__MASK;
        int64_t full = dla_sext(raw, 19);
        c->pad_h[n] = (int32_t)dla_pool_wrap(full, c->bits + 3);
        c->pad_v[n] = (int32_t)dla_pool_wrap(full * (int64_t)c->kw, c->bits + 6);
    }
    return 0;
}

/* Split geometry (or the single whole-width "split"). */
static int pdp_decode_splits(struct dla_dev *d, unsigned g, struct pdp_cfg *c)
{
    uint32_t split_num = PDP_F(d, g, D_OPERATION_MODE_CFG, SPLIT_NUM);
    c->part_in[0] = PDP_F(d, g, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST) + 1;
    c->part_in[1] = PDP_F(d, g, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_MID) + 1;
    c->part_in[2] = PDP_F(d, g, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_LAST) + 1;
    c->part_out[0] = PDP_F(d, g, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_FIRST) + 1;
    c->part_out[1] = PDP_F(d, g, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_MID) + 1;
    c->part_out[2] = PDP_F(d, g, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_LAST) + 1;
    c->nsplit = split_num + 1;

    if (c->nsplit == 1) {
        struct pdp_split *s = &c->split[0];
        s->in_x0 = 0;
        s->in_w = c->in_w;
        s->pad_l = c->pad_l;
        s->pad_r = c->pad_r;
        s->out_x0 = 0;
        s->out_w = c->out_w;
        return 0;
    }
    if (c->flying) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_OPERATION_MODE_CFG_0.SPLIT_NUM=%u with FLYING_MODE=ON_FLYING: input "
                         "from SDP cannot be split in width", split_num);
    }

    uint64_t sum_in = (uint64_t)c->part_in[0] + (uint64_t)(c->nsplit - 2) * c->part_in[1] +
                      c->part_in[2];
    uint64_t sum_out = (uint64_t)c->part_out[0] + (uint64_t)(c->nsplit - 2) * c->part_out[1] +
                       c->part_out[2];
    /* The hardware uses only the partial widths in split mode (cal1d
     * pooling_pwidth, WDMA size_of_width); the cube widths are documented as
     * their sum but not used, so a mismatch is reported and ignored. */
    if (sum_in != c->in_w || sum_out != c->out_w) {
        dla_log(d, DLASIM_LOG_GUEST_ERROR,
                "PDP: split widths (in %u+%u*%u+%u, out %u+%u*%u+%u) do not add up to "
                "D_DATA_CUBE_IN_WIDTH_0/OUT_WIDTH_0 (%u, %u); the hardware ignores the latter "
                "in split mode",
                c->part_in[0], c->nsplit - 2, c->part_in[1], c->part_in[2], c->part_out[0],
                c->nsplit - 2, c->part_out[1], c->part_out[2], c->in_w, c->out_w);
    }

    /* ref: PDP_RDMA_ig.v overlap / req_size / base_addr_split. */
    int64_t ov = (int64_t)c->kw - (int64_t)c->sw; /* signed overlap */
    for (uint32_t i = 0; i < c->nsplit; i++) {
        struct pdp_split *s = &c->split[i];
        int last = (i + 1 == c->nsplit);
        if (i == 0) {
            s->in_x0 = 0;
            s->in_w = c->part_in[0];
            s->pad_l = c->pad_l;
            s->out_x0 = 0;
            s->out_w = c->part_out[0];
        } else {
            int64_t w = (int64_t)(last ? c->part_in[2] : c->part_in[1]) + ov;
            s->in_x0 = (int64_t)c->part_in[0] + (int64_t)(i - 1) * c->part_in[1] - ov;
            s->pad_l = 0;
            s->out_x0 = c->part_out[0] + (i - 1) * c->part_out[1];
            s->out_w = last ? c->part_out[2] : c->part_out[1];
            if (s->in_x0 < 0 || w <= 0) {
                return dla_error(d, DLASIM_ERR_PROG,
                                 "PDP: D_PARTIAL_WIDTH_IN_0 (first %u, mid %u, last %u) with kernel "
                                 "width %u and stride %u: split %u would read columns %lld..%lld",
                                 c->part_in[0], c->part_in[1], c->part_in[2], c->kw, c->sw, i,
                                 (long long)s->in_x0, (long long)(s->in_x0 + w - 1));
            }
            s->in_w = (uint32_t)w;
        }
        s->pad_r = last ? c->pad_r : 0;
    }
    return 0;
}

/* Output sizes, windows, line buffer capacity. */
static int pdp_validate_geometry(struct dla_dev *d, const struct pdp_cfg *c)
{
    const char *wreg = (c->nsplit > 1) ? "D_PARTIAL_WIDTH_OUT_0" : "D_DATA_CUBE_OUT_WIDTH_0";
    uint32_t lbuf = pdp_lbuf_max_width(c->kh, c->sh);

    /* The core pools ceil(IN_CHANNEL / M) surfaces, WDMA writes
     * ceil(OUT_CHANNEL / M) (WDMA_cmd is_last_surf): they must agree. */
    if ((c->out_c + c->lanes - 1) / c->lanes != c->surfaces) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_DATA_CUBE_OUT_CHANNEL_0.CUBE_OUT_CHANNEL=%u and "
                         "D_DATA_CUBE_IN_CHANNEL_0.CUBE_IN_CHANNEL=%u give different surface counts "
                         "(pooling keeps the channels)", c->out_c - 1, c->in_c - 1);
    }
    uint32_t oh = pdp_windows(c->pad_t, c->in_h, c->pad_b, c->kh, c->sh);
    if (oh != c->out_h) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_DATA_CUBE_OUT_HEIGHT_0.CUBE_OUT_HEIGHT=%u (height %u) but input height "
                         "%u, padding %u+%u, kernel %u, stride %u give %u lines",
                         c->out_h - 1, c->out_h, c->in_h, c->pad_t, c->pad_b, c->kh, c->sh, oh);
    }
    int64_t e = pdp_empty_window(c->pad_t, c->in_h, c->kh, c->sh, c->out_h);
    if (e >= 0) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP: D_POOLING_PADDING_CFG_0 PAD_TOP=%u/PAD_BOTTOM=%u with kernel height %u: "
                         "output line %lld covers padding only",
                         c->pad_t, c->pad_b, c->kh, (long long)e);
    }
    for (uint32_t i = 0; i < c->nsplit; i++) {
        const struct pdp_split *s = &c->split[i];
        uint32_t ow = pdp_windows(s->pad_l, s->in_w, s->pad_r, c->kw, c->sw);
        if (ow != s->out_w) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP: %s gives width %u for split %u but its %u input columns, padding "
                             "%u+%u, kernel %u, stride %u give %u",
                             wreg, s->out_w, i, s->in_w, s->pad_l, s->pad_r, c->kw, c->sw, ow);
        }
        e = pdp_empty_window(s->pad_l, s->in_w, c->kw, c->sw, s->out_w);
        if (e >= 0) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP: D_POOLING_PADDING_CFG_0 PAD_LEFT=%u/PAD_RIGHT=%u with kernel width "
                             "%u: output column %lld of split %u covers padding only",
                             c->pad_l, c->pad_r, c->kw, (long long)e, i);
        }
        if (s->out_w > lbuf) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP: %s width %u (split %u) exceeds the line buffer: at most %u with "
                             "kernel height %u and stride %u",
                             wreg, s->out_w, i, lbuf, c->kh, c->sh);
        }
    }
    return 0;
}

/* PDP_RDMA must fetch the stream PDP consumes (ref: PDP_RDMA_ig.v). */
static int pdp_decode_rdma(struct dla_dev *d, unsigned g, struct pdp_cfg *c)
{
    uint32_t w = RDMA_F(d, D_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH) + 1;
    uint32_t h = RDMA_F(d, D_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT) + 1;
    uint32_t ch = RDMA_F(d, D_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL) + 1;
    uint32_t fmt = RDMA_F(d, D_DATA_FORMAT, INPUT_DATA);
    uint32_t pfmt = PDP_F(d, g, D_DATA_FORMAT, INPUT_DATA);
    uint32_t nsplit = RDMA_F(d, D_OPERATION_MODE_CFG, SPLIT_NUM) + 1;

    if (fmt != pfmt) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP_RDMA: D_DATA_FORMAT_0.INPUT_DATA=%u differs from PDP D_DATA_FORMAT_0."
                         "INPUT_DATA=%u", fmt, pfmt);
    }
    if (h != c->in_h || (ch + c->lanes - 1) / c->lanes != c->surfaces) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP_RDMA: D_DATA_CUBE_IN_HEIGHT_0/CHANNEL_0 (height %u, %u channels) do "
                         "not match PDP's (height %u, %u channels)", h, ch, c->in_h, c->in_c);
    }
    if (nsplit != c->nsplit) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "PDP_RDMA: D_OPERATION_MODE_CFG_0.SPLIT_NUM=%u differs from PDP's %u",
                         nsplit - 1, c->nsplit - 1);
    }
    if (nsplit == 1) {
        if (w != c->in_w) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP_RDMA: D_DATA_CUBE_IN_WIDTH_0.CUBE_IN_WIDTH=%u differs from PDP's %u",
                             w - 1, c->in_w - 1);
        }
    } else {
        uint32_t kw = RDMA_F(d, D_POOLING_KERNEL_CFG, KERNEL_WIDTH) + 1;
        uint32_t sw = RDMA_F(d, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH) + 1;
        uint32_t f = RDMA_F(d, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST) + 1;
        uint32_t m = RDMA_F(d, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_MID) + 1;
        uint32_t l = RDMA_F(d, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_LAST) + 1;
        if (kw != c->kw || sw != c->sw) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP_RDMA: D_POOLING_KERNEL_CFG_0 (kernel width %u, stride %u) differs "
                             "from PDP's (%u, %u) in split mode", kw, sw, c->kw, c->sw);
        }
        if (f != c->part_in[0] || l != c->part_in[2] || (nsplit > 2 && m != c->part_in[1])) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "PDP_RDMA: D_PARTIAL_WIDTH_IN_0 (first %u, mid %u, last %u) differs "
                             "from PDP's (%u, %u, %u)", f, m, l,
                             c->part_in[0], c->part_in[1], c->part_in[2]);
        }
    }
    unsigned rg = dla_consumer(d, NVDLA_UNIT_PDP_RDMA);
    c->src_base = dla_addr(dla_reg(d, NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, rg),
                           dla_reg(d, NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_LOW_0, rg));
    c->src_line = RDMA_F(d, D_SRC_LINE_STRIDE, SRC_LINE_STRIDE);
    c->src_surf = RDMA_F(d, D_SRC_SURFACE_STRIDE, SRC_SURFACE_STRIDE);
    c->src_port = dla_ram_port(RDMA_F(d, D_SRC_RAM_CFG, SRC_RAM_TYPE));
    return 0;
}

static int pdp_decode(struct dla_dev *d, unsigned g, struct pdp_cfg *c)
{
    const struct dla_config *cc = dla_cfg(d);
    int rc;

    memset(c, 0, offsetof(struct pdp_cfg, split));
    c->group = g;
    c->isa = dla_lanes_best();
    if (!cc->pdp_enable) {
        return dla_error(d, DLASIM_ERR_PROG, "PDP: configuration %s has no PDP", cc->name);
    }
    c->flying = PDP_F(d, g, D_OPERATION_MODE_CFG, FLYING_MODE) ==
                NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_ON_FLYING;
    rc = pdp_decode_format(d, PDP_F(d, g, D_DATA_FORMAT, INPUT_DATA), &c->bits);
    if (rc) {
        return rc;
    }
    c->bytes = c->bits / 8;
    /* an atom is NVDLA_MEMORY_ATOMIC_SIZE bytes whatever the precision: M
     * int8 or M/2 int16 lanes (as SDP and CDP; NVIDIA's nv_full INT16
     * goldens, tests/traces/loadables.sh) */
    c->lanes = cc->memory_atomic_size / c->bytes;
    c->beat_lanes = cc->pdp_throughput && cc->pdp_throughput <= c->lanes &&
                            c->lanes % cc->pdp_throughput == 0
                        ? cc->pdp_throughput
                        : 1;
    c->atom_bytes = c->lanes * c->bytes;

    c->in_w = PDP_F(d, g, D_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH) + 1;
    c->in_h = PDP_F(d, g, D_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT) + 1;
    c->in_c = PDP_F(d, g, D_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL) + 1;
    c->out_w = PDP_F(d, g, D_DATA_CUBE_OUT_WIDTH, CUBE_OUT_WIDTH) + 1;
    c->out_h = PDP_F(d, g, D_DATA_CUBE_OUT_HEIGHT, CUBE_OUT_HEIGHT) + 1;
    c->out_c = PDP_F(d, g, D_DATA_CUBE_OUT_CHANNEL, CUBE_OUT_CHANNEL) + 1;
    c->surfaces = (c->in_c + c->lanes - 1) / c->lanes;

    rc = pdp_decode_pooling(d, g, c);
    if (rc) {
        return rc;
    }
    rc = pdp_decode_splits(d, g, c);
    if (rc) {
        return rc;
    }
    rc = pdp_validate_geometry(d, c);
    if (rc) {
        return rc;
    }
    if (!c->flying) {
        rc = pdp_decode_rdma(d, g, c);
        if (rc) {
            return rc;
        }
    }
    c->dst_base = dla_addr(dla_reg(d, NVDLA_PDP_D_DST_BASE_ADDR_HIGH_0, g),
                           dla_reg(d, NVDLA_PDP_D_DST_BASE_ADDR_LOW_0, g));
    c->dst_line = PDP_F(d, g, D_DST_LINE_STRIDE, DST_LINE_STRIDE);
    c->dst_surf = PDP_F(d, g, D_DST_SURFACE_STRIDE, DST_SURFACE_STRIDE);
    c->dst_port = dla_ram_port(PDP_F(d, g, D_DST_RAM_CFG, DST_RAM_TYPE));
    return 0;
}

/* ---- execution ------------------------------------------------------------ */

/* Host buffers for one layer. */
struct pdp_work {
    uint8_t *raw;     /* one input line of a split, memory bytes */
    int32_t *line;    /* one input line, lanes interleaved: [x * lanes + l] */
    int32_t *ring;    /* 1-D results of the last 8 lines: [slot][j * lanes + l] */
    int32_t *acc;     /* one output line being combined */
    uint8_t *out;     /* one output line, memory bytes */
    size_t ring_stride; /* int32 per ring slot */
    void *block;        /* the allocation of the five above */
    /* read-ahead of a whole input surface (pdp_ahead_init), or NULL */
    uint8_t *surf;       /* the surface's lines, memory bytes */
    uint32_t surf_at;    /* which surface it holds, UINT32_MAX: none */
};

/* Surfaces up to this size are read in one burst (small layers: the per-line
 * read's fixed cost exceeds its bytes' there). */
#define PDP_AHEAD_MAX_BYTES (256u * 1024u)

static void pdp_work_free(struct pdp_work *w)
{
    free(w->block);
    free(w->surf);
    memset(w, 0, sizeof(*w));
}

static int pdp_work_alloc(struct dla_dev *d, const struct pdp_cfg *c, struct pdp_work *w)
{
    uint32_t max_in = 1;
    uint32_t max_out = 1;
    for (uint32_t i = 0; i < c->nsplit; i++) {
        if (c->split[i].in_w > max_in) {
            max_in = c->split[i].in_w;
        }
        if (c->split[i].out_w > max_out) {
            max_out = c->split[i].out_w;
        }
    }
    memset(w, 0, sizeof(*w));
    w->ring_stride = (size_t)max_out * c->lanes;
    /* line, ring, acc (int32), then raw and out (bytes): one allocation (a
     * small layer's five mallocs cost more than its pooling's fixed work) */
    size_t n_line = (size_t)max_in * c->lanes, n_ring = PDP_KERNEL_MAX * w->ring_stride;
    size_t n_raw = (size_t)max_in * c->atom_bytes, n_out = (size_t)max_out * c->atom_bytes;
    size_t words = n_line + n_ring + w->ring_stride;
    w->block = malloc(words * sizeof(int32_t) + n_raw + n_out);
    if (w->block == NULL) {
        pdp_work_free(w);
        return dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory for a %u-column layer",
                         max_in);
    }
    w->line = w->block;
    w->ring = w->line + n_line;
    w->acc = w->ring + n_ring;
    w->raw = (uint8_t *)(void *)(w->acc + w->ring_stride);
    w->out = w->raw + n_raw;
    return 0;
}

/* [lo, hi) of the bytes a line pattern touches: `n` lines of `bytes` bytes,
 * `line` apart, in `surfaces` surfaces `surf` apart from `base`; 0 when the
 * end does not fit in 64 bits. */
static int pdp_span(uint64_t base, uint64_t surf, uint32_t surfaces, uint64_t line, uint32_t n,
                    uint64_t bytes, uint64_t *hi)
{
    const uint64_t lim = (uint64_t)1 << 48; /* register fields are far narrower */
    if (surf >= lim || line >= lim || bytes >= lim) {
        return 0;
    }
    uint64_t extent = (uint64_t)(surfaces - 1) * surf + (uint64_t)(n - 1) * line + bytes;
    *hi = base + extent;
    return *hi >= base;
}

/* Whether the layer may read each input surface in one burst instead of line
 * by line: from memory, one split starting at column 0 whose lines are
 * contiguous (the same bytes in the same order, so the same traffic), a
 * small surface, and an output that cannot overlap the input (a line written
 * before a later line is read would otherwise be seen).  Whether the read can
 * fail is asked per surface (pdp_ahead_surface).  Enabled: w->surf set. */
static int pdp_ahead_init(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                          struct pdp_work *w)
{
    w->surf_at = UINT32_MAX;
    const uint64_t line = (uint64_t)c->split[0].in_w * c->atom_bytes;
    uint64_t src_hi, dst_hi;
    if (in != NULL || c->nsplit != 1 || c->split[0].in_x0 != 0 || c->src_line != line ||
        c->in_h == 0 || c->out_h == 0 || c->surfaces == 0 ||
        line * c->in_h > PDP_AHEAD_MAX_BYTES ||
        !pdp_span(c->src_base, c->src_surf, c->surfaces, c->src_line, c->in_h, line, &src_hi) ||
        !pdp_span(c->dst_base, c->dst_surf, c->surfaces, c->dst_line, c->out_h,
                  (uint64_t)c->out_w * c->atom_bytes, &dst_hi) ||
        (c->dst_base < src_hi && c->src_base < dst_hi)) {
        return 0;
    }
    w->surf = malloc((size_t)(line * c->in_h));
    if (w->surf == NULL) {
        return dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory for a %ux%u surface",
                         c->in_w, c->in_h);
    }
    return 0;
}

/* The memory bytes of line y of surface `surf` from the read-ahead, reading
 * the surface in one burst at its first line; NULL (and *rc 0) when the
 * layer reads line by line or the burst could fail (then the line reads
 * report the failure at the line it happens, as before). */
static const uint8_t *pdp_ahead_line(struct dla_dev *d, const struct pdp_cfg *c, uint32_t surf,
                                     uint32_t y, struct pdp_work *w, int *rc)
{
    const size_t line = (size_t)c->split[0].in_w * c->atom_bytes;
    *rc = 0;
    if (w->surf == NULL) {
        return NULL;
    }
    if (w->surf_at != surf) {
        uint64_t addr = c->src_base + (uint64_t)surf * c->src_surf;
        if (y != 0 || !dla_dma_can_read(d, c->src_port, addr, line * c->in_h)) {
            return NULL;
        }
        *rc = dla_dma_read(d, c->src_port, addr, w->surf, line * c->in_h);
        if (*rc) {
            return NULL;
        }
        w->surf_at = surf;
    }
    return w->surf + (size_t)y * line;
}

/* Line y of surface `surf` of SDP's int8 atoms sent on the fly: the bytes
 * SDP would have written to memory, which PDP pools as it pools memory. */
static const int8_t *pdp_flying_line(const struct pdp_cfg *c, const struct dla_cube *in,
                                     uint32_t surf, uint32_t y)
{
    return in->atoms + (((size_t)surf * in->h + y) * in->w) * c->lanes;
}

/* Sign-extends n bytes; blocks of 16 with restrict pointers so that -O2
 * vectorizes them (this runs once per input line). */
static void pdp_unpack8(const uint8_t *restrict raw, int32_t *restrict v, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (unsigned k = 0; k < 16; k++) {
            v[i + k] = (int8_t)raw[i + k];
        }
    }
    for (; i < n; i++) {
        v[i] = (int8_t)raw[i];
    }
}

/* Memory bytes of one line -> lane values (sign-extended B-bit elements). */
static void pdp_unpack(const struct pdp_cfg *c, const uint8_t *raw, int32_t *v, size_t n)
{
    if (c->bits == 8) {
        pdp_unpack8(raw, v, n);
    } else {
        for (size_t i = 0; i < n; i++) {
            v[i] = (int16_t)(uint16_t)(raw[2 * i] | (raw[2 * i + 1] << 8));
        }
    }
}

#if defined(DLA_LANES_X86)
/* The low bytes of 32 values a step: masked to 0-255, the unsigned
 * saturating packs keep them; the packs interleave 128-bit lanes, the
 * permutation restores the order. */
DLA_LANES_AVX2_ATTR static size_t pdp_pack8_avx2(const int32_t *v, uint8_t *raw, size_t n)
{
    const __m256i low = _mm256_set1_epi32(0xff);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i a = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(v + i)), low);
        __m256i b = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(v + i + 8)), low);
        __m256i e = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(v + i + 16)), low);
        __m256i f = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(v + i + 24)), low);
        __m256i q = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(e, f));
        _mm256_storeu_si256((__m256i *)(void *)(raw + i), _mm256_permutevar8x32_epi32(q, order));
    }
    return i;
}

/* acc[i] = max (is_max) or min of acc[i] and r[i] for i < n, 8 a step;
 * returns the elements done. */
DLA_LANES_AVX2_ATTR static size_t pdp_minmax_avx2(int32_t *acc, const int32_t *r, size_t n,
                                                  int is_max)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(acc + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(r + i));
        a = is_max ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b);
        _mm256_storeu_si256((__m256i *)(void *)(acc + i), a);
    }
    return i;
}
#endif

/* Lane values -> memory bytes (low B bits). */
static void pdp_pack(const struct pdp_cfg *c, const int32_t *v, uint8_t *raw, size_t n)
{
    if (c->bits == 8) {
        size_t i = 0;
#if defined(DLA_LANES_X86)
        if (dla_lanes_avx2_up(c->isa)) {
            i = pdp_pack8_avx2(v, raw, n);
        }
#endif
        for (; i < n; i++) {
            raw[i] = (uint8_t)((uint32_t)v[i] & 0xffu);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)v[i];
            raw[2 * i] = (uint8_t)(u & 0xffu);
            raw[2 * i + 1] = (uint8_t)((u >> 8) & 0xffu);
        }
    }
}

/* Fetch input line y of surface `surf` for split s into w->line. */
static int pdp_fetch_line(struct dla_dev *d, const struct pdp_cfg *c, const struct pdp_split *s,
                          uint32_t surf, uint32_t y, const struct dla_cube *in, struct pdp_work *w)
{
    size_t n = (size_t)s->in_w * c->lanes;
    if (in == NULL) {
        int rc;
        const uint8_t *ahead = pdp_ahead_line(d, c, surf, y, w, &rc);
        if (rc) {
            return rc;
        }
        if (ahead != NULL) {
            pdp_unpack(c, ahead, w->line, n);
            return 0;
        }
        uint64_t addr = c->src_base + (uint64_t)s->in_x0 * c->atom_bytes +
                        (uint64_t)y * c->src_line + (uint64_t)surf * c->src_surf;
        rc = dla_dma_read(d, c->src_port, addr, w->raw, (size_t)s->in_w * c->atom_bytes);
        if (rc) {
            return rc;
        }
        pdp_unpack(c, w->raw, w->line, n);
        return 0;
    }
    if (in->atoms) { /* SDP's int8 atoms (dla_pdp_execute made sure B = 8, same lanes) */
        pdp_unpack8((const uint8_t *)pdp_flying_line(c, in, surf, y) + (size_t)s->in_x0 * c->lanes,
                    w->line, n);
        return 0;
    }
    /* On the fly: SDP's cube holds int32 values; PDP receives their low B bits. */
    for (uint32_t l = 0; l < c->lanes; l++) {
        uint32_t ch = surf * c->lanes + l;
        if (ch >= in->c) {
            for (uint32_t x = 0; x < s->in_w; x++) {
                w->line[(size_t)x * c->lanes + l] = 0;
            }
            continue;
        }
        const int32_t *src = in->data + ((size_t)ch * in->h + y) * in->w + (size_t)s->in_x0;
        for (uint32_t x = 0; x < s->in_w; x++) {
            w->line[(size_t)x * c->lanes + l] = (int32_t)dla_pool_wrap(src[x], c->bits);
        }
    }
    return 0;
}

#if defined(__GNUC__)
#define PDP_INLINE static inline __attribute__((always_inline))
#else
#define PDP_INLINE static inline
#endif

/* Horizontal (1-D) pooling of one input line into `dst` (out_w atoms of L
 * lanes).  Inlined with a constant L for the usual Atomic-M values so the lane
 * loops vectorize.  ref: cal1d unit1d + pad_table_out; cmod LineOperation. */
PDP_INLINE void pdp_pool_line_l(const struct pdp_cfg *c, const struct pdp_split *s,
                                const int32_t *restrict line, int32_t *restrict dst,
                                const uint32_t L)
{
    for (uint32_t j = 0; j < s->out_w; j++) {
        int64_t a0 = (int64_t)j * c->sw - s->pad_l;
        int64_t b0 = a0 + c->kw;
        uint32_t a = (uint32_t)(a0 < 0 ? 0 : a0);
        uint32_t b = (uint32_t)(b0 > (int64_t)s->in_w ? (int64_t)s->in_w : b0);
        int32_t *restrict o = dst + (size_t)j * L;
        const int32_t *p = line + (size_t)a * L;
        for (uint32_t l = 0; l < L; l++) {
            o[l] = p[l];
        }
        if (c->method == PDP_MAX) {
            for (uint32_t x = a + 1; x < b; x++) {
                p = line + (size_t)x * L;
                for (uint32_t l = 0; l < L; l++) {
                    o[l] = p[l] > o[l] ? p[l] : o[l];
                }
            }
        } else if (c->method == PDP_MIN) {
            for (uint32_t x = a + 1; x < b; x++) {
                p = line + (size_t)x * L;
                for (uint32_t l = 0; l < L; l++) {
                    o[l] = p[l] < o[l] ? p[l] : o[l];
                }
            }
        } else {
            for (uint32_t x = a + 1; x < b; x++) {
                p = line + (size_t)x * L;
                for (uint32_t l = 0; l < L; l++) {
                    o[l] += p[l];
                }
            }
            uint32_t npad = c->kw - (b - a);
            if (npad) {
                int32_t pv = c->pad_h[npad];
                for (uint32_t l = 0; l < L; l++) {
                    o[l] = (int32_t)dla_pool_wrap((int64_t)o[l] + pv, c->bits + 3);
                }
            }
        }
    }
}

static void pdp_pool_line(const struct pdp_cfg *c, const struct pdp_split *s,
                          const int32_t *line, int32_t *dst)
{
    switch (c->lanes) {
    case 8:
        pdp_pool_line_l(c, s, line, dst, 8);
        break;
    case 16:
        pdp_pool_line_l(c, s, line, dst, 16);
        break;
    case 32:
        pdp_pool_line_l(c, s, line, dst, 32);
        break;
    default:
        pdp_pool_line_l(c, s, line, dst, c->lanes);
        break;
    }
}

/* An average window's output from the exact sum of its elements and
 * padding addends: the horizontal then the vertical reciprocal
 * multiplication, each rounded.  ref: cal2d hmult/vmult. */
static int32_t pdp_ave_of(const struct pdp_cfg *c, int64_t sum)
{
    const unsigned hbits = c->bits + 23; /* B+6 sum, sign bit, 16 fraction bits */
    const unsigned vbits = c->bits + 20;
    int32_t hm = dla_pool_round16(dla_pool_wrap(sum * (int64_t)c->recip_w, hbits), c->bits + 3);
    return dla_pool_round16(dla_pool_wrap((int64_t)hm * (int64_t)c->recip_h, vbits), c->bits);
}

/* Vertical pooling of ring lines a..b-1 into w->acc, then the average's
 * padding, reciprocal multiplications and rounding.
 * ref: cal2d unit2d, pad_value, hmult/vmult. */
static void pdp_pool_column(const struct pdp_cfg *c, const struct pdp_split *s,
                            struct pdp_work *w, uint32_t a, uint32_t b)
{
    const size_t n = (size_t)s->out_w * c->lanes;
    int32_t *acc = w->acc;
    memcpy(acc, w->ring + (size_t)(a % PDP_KERNEL_MAX) * w->ring_stride, n * sizeof(int32_t));
    for (uint32_t y = a + 1; y < b; y++) {
        const int32_t *r = w->ring + (size_t)(y % PDP_KERNEL_MAX) * w->ring_stride;
        size_t i0 = 0;
#if defined(DLA_LANES_X86)
        if (dla_lanes_avx2_up(c->isa) && c->method != PDP_AVE) {
            i0 = pdp_minmax_avx2(acc, r, n, c->method == PDP_MAX);
        }
#endif
        if (c->method == PDP_MAX) {
            for (size_t i = i0; i < n; i++) {
                acc[i] = r[i] > acc[i] ? r[i] : acc[i];
            }
        } else if (c->method == PDP_MIN) {
            for (size_t i = i0; i < n; i++) {
                acc[i] = r[i] < acc[i] ? r[i] : acc[i];
            }
        } else {
            for (size_t i = 0; i < n; i++) {
                acc[i] += r[i];
            }
        }
    }
    if (c->method != PDP_AVE) {
        return;
    }
    int32_t pv = 0;
    uint32_t npad = c->kh - (b - a);
    if (npad) {
        pv = c->pad_v[npad];
    }
    for (size_t i = 0; i < n; i++) {
        acc[i] = pdp_ave_of(c, (int64_t)acc[i] + pv);
    }
}

/* ---- faithful cal1d line-end flush (over-stated PAD_RIGHT) ----------------
 *
 * ref: nvdla/hw nv_small vmod/nvdla/pdp/NV_NVDLA_PDP_CORE_cal1d.v and
 * NV_NVDLA_PDP_CORE_unit1d.v.  cal1d pools each line with up to 8 pooling
 * units working on overlapping windows.  At the end of a line every busy unit
 * finishes at once (strip_width_end) and stores its result in flush_out; only
 * one of them leaves at once, the others leave later, either while the next
 * line's first elements arrive (last_out_en, last_out_cnt up to
 * first_out_num_dec2) or as bubbles with the input stalled
 * (cur_datin_disable, bubble_num).  How many it sends is not the number of
 * windows still pending but flush_num, derived from the programmed PAD_RIGHT
 * alone (flush_num_cal: PAD_RIGHT / stride, or samllW_flush_num for inputs
 * narrower than the kernel).  When PAD_RIGHT is larger than the last window
 * needs, the count is too large: extra stale flush_out values are emitted and
 * the units' element counters (pooling_cnt, which select the lane each output
 * beat comes from) drift, so the following line's lanes are mixed up.  cal2d
 * takes the 1-D results in order, out_w per line, whatever they are.
 *
 * The model below replays cal1d beat by beat (one beat = one lane group of
 * one element: PDP_THROUGHPUT lanes, Atomic-M / PDP_THROUGHPUT beats per
 * element) with the registers
 * named after the RTL's.  It runs only for layers where the programmed
 * PAD_RIGHT gives a larger flush_num than the padding the last window needs
 * (pdp_overstated_right); every other layer keeps the direct path, which is
 * what the RTL computes for them. */

#define PDP_UNITS 8u
#define PDP_BEATS_MAX 32u /* beats per element: NVDLA_MEMORY_ATOMIC_SIZE / PDP_THROUGHPUT */

struct pdp_unit {
    int en, first;         /* unit1d_en, pooling_din_1st */
    uint32_t size;         /* pooling_size: elements taken - 1 */
    uint32_t cnt;          /* pooling_cnt: next buffer to output */
    int32_t *latch;        /* latch_result[cpos][T] */
    int32_t *flush;        /* flush_out[cpos][T] */
    uint32_t flush_size[PDP_BEATS_MAX];
};

struct pdp_c1d {
    const struct pdp_cfg *c;
    unsigned t;            /* lanes per beat */
    unsigned beats;        /* beats per element */
    uint32_t regs_num, flush_num;
    /* input side */
    uint32_t xs, xp, total, cu_s, cu_p;
    int need_bubble, disable, last_out_en, subcube_end;
    uint32_t bubble_num, channel_cnt, bubble_cnt, last_out_cnt;
    struct pdp_unit u[PDP_UNITS];
    /* output side */
    uint32_t out_unit, wr_cnt, wr_line, wr_surf, wr_split;
    int32_t *stream;       /* 1-D results, lanes interleaved per element */
    size_t cap, nbeat;     /* capacity in beats, beats written */
};

/* padding_stride_num: windows that start inside the left padding - 1. */
static uint32_t c1d_pad_stride_num(uint32_t sw, uint32_t pl)
{
    switch (sw) {
    case 1:
        return pl;
    case 2:
        return pl >> 1;
    case 3:
        return pl >= 6 ? 2 : (pl >= 3 ? 1 : 0);
    default:
        return pl > sw - 1 ? 1 : 0;
    }
}

/* regs_num: pooling units in use - 1 (line_regs_1..4). */
static uint32_t c1d_regs_num(uint32_t kw, uint32_t sw)
{
    uint32_t size = kw - 1;
    switch (sw) {
    case 1:
        return size;
    case 2:
        return size >> 1;
    case 3:
        return size > 5 ? 2 : (size > 2 ? 1 : 0);
    default:
        return size > sw - 1 ? 1 : 0;
    }
}

/* flush_num_cal: PAD_RIGHT / stride, at most 7. */
static uint32_t c1d_flush_cal(uint32_t pr, uint32_t sw)
{
    uint32_t n = pr / sw;
    return n > 7 ? 7 : n;
}

static int c1d_nonsplit(const struct pdp_cfg *c)
{
    return c->nsplit == 1;
}

/* non_split_small_active / split_small_active and samllW_flush_num. */
static int c1d_small(const struct pdp_cfg *c)
{
    uint32_t kwr = c->kw - 1, swr = c->sw - 1;
    uint32_t overlap = kwr < swr ? swr - kwr : kwr - swr;
    if (c1d_nonsplit(c)) {
        uint32_t wr = c->in_w - 1;
        return wr < 8 && ((wr & 7) + c->pad_l) < kwr;
    }
    int big = swr >= kwr;
    uint32_t lw = (c->part_in[2] - 1) & 0x3ff;
    return big ? (uint32_t)((lw - overlap) & 0x3ff) < kwr : (lw + overlap) < kwr;
}

static uint32_t c1d_flush_num_for(const struct pdp_cfg *c, uint32_t pad_r)
{
    uint32_t cal = c1d_flush_cal(pad_r, c->sw);
    if (cal == 0 || !c1d_small(c)) {
        return cal;
    }
    uint32_t kwr = c->kw - 1, swr = c->sw - 1;
    uint32_t overlap = kwr < swr ? swr - kwr : kwr - swr;
    uint32_t remain;
    if (c1d_nonsplit(c)) {
        remain = (((c->in_w - 1) & 7) + c->pad_l + pad_r - kwr) & 0xff;
    } else {
        uint32_t lw = (c->part_in[2] - 1) & 0x1f;
        uint32_t olap = (swr >= kwr ? lw - overlap : lw + overlap) & 0x3f;
        remain = (olap + pad_r - kwr) & 0xff;
    }
    for (uint32_t n = 6; n >= 1; n--) {
        if (remain == n * c->sw) {
            return n;
        }
    }
    return 0;
}

static uint32_t c1d_flush_num(const struct pdp_cfg *c)
{
    return c1d_flush_num_for(c, c->pad_r);
}

/* first_out_num: elements of a line before its first window completes. */
static uint32_t c1d_first_out_num(const struct pdp_cfg *c, uint32_t split)
{
    uint32_t kwr = c->kw - 1, swr = c->sw - 1;
    uint32_t overlap = kwr < swr ? swr - kwr : kwr - swr;
    int big = swr >= kwr;
    if (c1d_nonsplit(c)) {
        if (c1d_small(c)) {
            return ((c->in_w - 1) & 7) + 1;
        }
        return (c->kw - c->pad_l) & 0x1f;
    }
    if (split == 0) {
        return (c->kw - c->pad_l) & 0x1f;
    }
    if (split == c->nsplit - 1 && c1d_small(c)) {
        uint32_t pw = c->part_in[2];
        return (big ? pw : pw + overlap) & 0x1f;
    }
    return (big ? c->kw + c->sw : c->kw) & 0x1f;
}

/* Right padding the last window of a split really covers. */
static uint32_t pdp_needed_right(const struct pdp_cfg *c, const struct pdp_split *s)
{
    if (s->out_w == 0) {
        return 0;
    }
    int64_t end = (int64_t)(s->out_w - 1) * c->sw + c->kw - s->pad_l;
    return end > (int64_t)s->in_w ? (uint32_t)(end - s->in_w) : 0;
}

/* The layer takes the faithful path: cal1d's flush count (from PAD_RIGHT)
 * differs from the one the padding the last window needs would give. */
static int pdp_overstated_right(const struct pdp_cfg *c)
{
    const struct pdp_split *last = &c->split[c->nsplit - 1];
    uint32_t need = pdp_needed_right(c, last);
    return c->pad_r > need && c1d_flush_num_for(c, c->pad_r) != c1d_flush_num_for(c, need);
}

/* Append one output beat (T lanes) of value v and pooling size `size` to the
 * stream, adding the average's horizontal padding (padding_here,
 * pad_table_out). */
static void c1d_emit(struct pdp_c1d *m, const int32_t *v, uint32_t size)
{
    const struct pdp_cfg *c = m->c;
    if (m->nbeat >= m->cap) {
        m->nbeat++;
        return;
    }
    int32_t *o = m->stream + m->nbeat * m->t;
    uint32_t npad = (c->kw - 1 - size) & 7;
    for (unsigned t = 0; t < m->t; t++) {
        int64_t x = v[t];
        if (c->method == PDP_AVE && npad) {
            x = dla_pool_wrap(x + c->pad_h[npad], c->bits + 3);
        }
        o[t] = (int32_t)x;
    }
    m->nbeat++;
}

/* Output-side bookkeeping of one 1-D result (pooling1d_out_v): unit
 * selection (pooling_out_cnt) and the line/surface/split counters that give
 * pout_width_cur. */
static void c1d_element_out(struct pdp_c1d *m)
{
    const struct pdp_cfg *c = m->c;
    uint32_t split = m->wr_split < c->nsplit ? m->wr_split : c->nsplit - 1;
    int done = m->wr_cnt == c->split[split].out_w - 1;
    m->out_unit = (m->out_unit == m->regs_num || done) ? 0 : m->out_unit + 1;
    m->wr_cnt = done ? 0 : m->wr_cnt + 1;
    if (done && ++m->wr_line == c->in_h) {
        m->wr_line = 0;
        if (++m->wr_surf == c->surfaces) {
            m->wr_surf = 0;
            m->wr_split++;
        }
    }
}

/* One beat through every unit and the output mux.  din is NULL for a bubble
 * (cur_datin_disable).  dlast: pooling_din_last per unit; lastout: the
 * last_out_en sampled with the beat. */
static void c1d_units(struct pdp_c1d *m, const int32_t *din, unsigned cpos, int lc,
                      const int *dlast, int lastout)
{
    const struct pdp_cfg *c = m->c;
    const unsigned T = m->t;
    const int bubble = din == NULL;
    int any_last = 0;
    int32_t outv[PDP_BEATS_MAX]; /* PDP_THROUGHPUT lanes, at most Atomic-M <= 32 */
    uint32_t outsize = 0;
    int have = 0;

    for (unsigned i = 0; i < PDP_UNITS; i++) {
        struct pdp_unit *u = &m->u[i];
        uint32_t size_out = u->size;
        int last_i = dlast[i] && !bubble;
        any_last |= dlast[i];
        if (!bubble) {
            /* unit1d: latch_result[buf_sel] <= 1st ? din : (load ? fun(latch, din) : 0) */
            int32_t *l = u->latch + (size_t)cpos * T;
            for (unsigned t = 0; t < T; t++) {
                int32_t r;
                if (u->first) {
                    r = din[t];
                } else if (!u->en) {
                    r = 0;
                } else if (c->method == PDP_MAX) {
                    r = din[t] > l[t] ? din[t] : l[t];
                } else if (c->method == PDP_MIN) {
                    r = din[t] < l[t] ? din[t] : l[t];
                } else {
                    r = (int32_t)dla_pool_wrap((int64_t)l[t] + din[t], c->bits + 3);
                }
                l[t] = r;
            }
            if (u->en && lc) {
                u->size = dlast[i] ? 0 : ((u->size + 1) & 7);
            }
        }
        /* pooling_out: flush_out[pooling_cnt] under last_out_en (the unit's
         * last_out_en input is last_out_en | cur_datin_disable), otherwise
         * the latch selected by pooling_cnt. */
        int lo = lastout || bubble;
        if (i == m->out_unit) {
            if (lo) {
                memcpy(outv, u->flush + (size_t)u->cnt * T, T * sizeof(int32_t));
                outsize = u->flush_size[u->cnt];
            } else {
                memcpy(outv, u->latch + (size_t)u->cnt * T, T * sizeof(int32_t));
                outsize = size_out;
            }
            have = 1;
        }
        if (last_i) {
            memcpy(u->flush + (size_t)cpos * T, u->latch + (size_t)cpos * T, T * sizeof(int32_t));
            u->flush_size[cpos] = size_out;
        }
        if (last_i || lo) {
            u->cnt = (u->cnt + 1) % m->beats;
        }
    }
    if (have && (any_last || bubble || lastout)) {
        c1d_emit(m, outv, outsize);
    }
    int elem = (any_last && lc && !bubble) || (bubble && m->channel_cnt == m->beats - 1) ||
               (lastout && lc && !bubble);
    if (elem) {
        c1d_element_out(m);
    }
}

/* need_bubble / bubble_num for the current split (pdp_op_start when not
 * split, every cycle of the last split when split). */
static void c1d_bubble_cfg(struct pdp_c1d *m, uint32_t split)
{
    uint32_t fon = c1d_first_out_num(m->c, split);
    if (m->flush_num >= fon) {
        m->need_bubble = 1;
        m->bubble_num = (m->flush_num - fon + 1) & 7;
    } else {
        m->need_bubble = 0;
        m->bubble_num = 0;
    }
}

/* One stalled cycle: a bubble beat (cur_datin_disable). */
static void c1d_bubble_beat(struct pdp_c1d *m, uint32_t split)
{
    int dlast[PDP_UNITS];
    const struct pdp_cfg *c = m->c;
    int last_c = m->channel_cnt == m->beats - 1;
    int bubble_end = ((m->bubble_cnt & 7) == ((m->bubble_num - 1) & 7)) && last_c;
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        dlast[i] = m->u[i].en && ((m->xp == c->kw - 1 && m->cu_p == i) ||
                                  m->total == c->split[split].in_w - 1);
    }
    c1d_units(m, NULL, m->beats - 1, 1, dlast, m->last_out_en);
    /* registers */
    int fon = (int)c1d_first_out_num(c, split);
    if (fon != 1 && !m->subcube_end) {
        if (m->need_bubble && bubble_end) {
            m->last_out_en = 1;
        }
    } else {
        m->last_out_en = 0;
    }
    if (!m->last_out_en) {
        m->last_out_cnt = 0;
    }
    if (bubble_end) {
        m->disable = 0;
    }
    m->bubble_cnt = bubble_end ? 0 : (last_c ? m->bubble_cnt + 1 : m->bubble_cnt);
    m->channel_cnt = last_c ? 0 : m->channel_cnt + 1;
}

/* One input beat: lane group cpos of an element; split_end on the last beat
 * of a split, cube_end on the last beat of the layer. */
static void c1d_data_beat(struct pdp_c1d *m, const int32_t *din, unsigned cpos, uint32_t split,
                          int split_end, int cube_end)
{
    const struct pdp_cfg *c = m->c;
    const int nonsplit = c1d_nonsplit(c);
    const int lastsplit = split == c->nsplit - 1;
    const int lc = cpos == m->beats - 1;
    const uint32_t kwr = c->kw - 1, swr = c->sw - 1;
    const uint32_t pwidth = c->split[split].in_w - 1;
    uint32_t pad_left = (nonsplit || (split == 0 && !split_end)) ? c->pad_l : 0;
    uint32_t psn = c1d_pad_stride_num(c->sw, pad_left);
    uint32_t offset = (pad_left - psn * c->sw) & 7;
    int width_end = m->total == pwidth;
    int init = width_end && lc;
    int stride_end = lc && m->xs == swr;
    int64_t rest = (int64_t)pwidth - m->total + ((nonsplit || lastsplit) ? c->pad_r : 0);
    int lpf = rest <= (int64_t)kwr;
    int rdy = m->xp == kwr && lc;
    int set[PDP_UNITS], clr[PDP_UNITS], dlast[PDP_UNITS];
    int init_set[PDP_UNITS] = {0};
    uint32_t fon = c1d_first_out_num(c, split);
    uint32_t dec2 = (m->need_bubble ? fon - 2 : m->flush_num - 1) & 7;
    int last_out_done = m->last_out_cnt == dec2 && lc && m->last_out_en;

    if (init) {
        uint32_t out_split = m->wr_split < c->nsplit ? m->wr_split : c->nsplit - 1;
        uint32_t pout = c->split[out_split].out_w - 1;
        for (unsigned i = 0; i < PDP_UNITS; i++) {
            init_set[i] = psn >= i && pout >= i;
        }
    }
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        int trig;
        if (i == 0) {
            trig = stride_end && m->cu_s == m->regs_num && !lpf;
        } else {
            trig = stride_end && m->cu_s == i - 1 && m->cu_s != m->regs_num && !lpf;
        }
        set[i] = trig || init_set[i];
        clr[i] = (rdy && m->cu_p == i) || init;
        dlast[i] = m->u[i].en && ((m->xp == kwr && m->cu_p == i) || width_end);
    }
    int lastout = m->last_out_en;
    c1d_units(m, din, cpos, lc, dlast, lastout);

    /* strip_xcnt_stride / strip_xcnt_psize */
    uint32_t f = init ? offset : (stride_end ? 0 : (lc ? m->xs + 1 : m->xs));
    if (init) {
        m->xp = pad_left;
    } else if (kwr >= swr) {
        if (rdy) {
            m->xp = (kwr - swr) & 7;
        } else if (lc) {
            m->xp = (m->xp + 1) & 7;
        }
    } else {
        m->xp = f <= kwr ? (f & 7) : 0;
    }
    m->xs = f & 15;
    m->total = init ? 0 : (lc ? m->total + 1 : m->total);
    if (init) {
        m->cu_s = psn;
    } else if (stride_end) {
        m->cu_s = m->cu_s == m->regs_num ? 0 : m->cu_s + 1;
    }
    if (init) {
        m->cu_p = 0;
    } else if (rdy) {
        m->cu_p = m->cu_p == m->regs_num ? 0 : m->cu_p + 1;
    }
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        struct pdp_unit *u = &m->u[i];
        if (cube_end) {
            u->en = 0;
        } else if (set[i]) {
            u->en = 1;
        } else if (clr[i]) {
            u->en = 0;
        }
        if (set[i]) {
            u->first = 1;
        } else if (lc) {
            u->first = 0;
        }
    }
    /* last_out_en / last_out_cnt (uses need_bubble before its update) */
    if (m->last_out_en) {
        if (lc) {
            m->last_out_cnt = last_out_done ? 0 : m->last_out_cnt + 1;
        }
    } else {
        m->last_out_cnt = 0;
    }
    int old_need = m->need_bubble;
    if (last_out_done || cube_end) {
        m->last_out_en = 0;
    } else if (fon != 1 && !m->subcube_end) {
        if (old_need) {
            /* bubble_en_end needs cur_datin_disable: not on an input beat */
        } else if (m->flush_num) {
            if ((nonsplit || lastsplit) && init) {
                m->last_out_en = 1;
            }
        }
    } else {
        m->last_out_en = 0;
    }
    /* cur_datin_disable */
    if (cube_end && m->flush_num) {
        m->disable = 1;
    } else if ((nonsplit || lastsplit) && init && old_need) {
        m->disable = 1;
    }
    /* need_bubble / bubble_num */
    if (cube_end) {
        m->need_bubble = m->flush_num != 0;
        m->bubble_num = m->flush_num;
    } else if (!nonsplit && lastsplit) {
        c1d_bubble_cfg(m, split);
    }
    m->subcube_end = split_end;
    m->channel_cnt = 0;
    m->bubble_cnt = 0;
}

static void c1d_free(struct pdp_c1d *m)
{
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        free(m->u[i].latch);
        free(m->u[i].flush);
    }
    free(m->stream);
}

/* State at pdp_op_start.  pooling_cnt, flush_out and pooling_size are not
 * reset by the RTL; after any layer that ends cleanly they are 0. */
static int c1d_init(struct dla_dev *d, const struct pdp_cfg *c, struct pdp_c1d *m)
{
    size_t elems = 0;
    memset(m, 0, sizeof(*m));
    m->c = c;
    m->t = c->beat_lanes;
    m->beats = c->lanes / c->beat_lanes;
    if (m->beats > PDP_BEATS_MAX) {
        return dla_error(d, DLASIM_ERR_PROG, "PDP: %u-lane atoms at %u lanes a cycle are beyond the "
                         "line-end flush model (at most %u cycles an element)",
                         c->lanes, c->beat_lanes, PDP_BEATS_MAX);
    }
    for (uint32_t i = 0; i < c->nsplit; i++) {
        elems += (size_t)c->surfaces * c->in_h * c->split[i].out_w;
    }
    m->cap = (elems + PDP_UNITS) * m->beats;
    m->stream = calloc(m->cap, m->t * sizeof(int32_t));
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        m->u[i].latch = calloc(m->beats * m->t, sizeof(int32_t));
        m->u[i].flush = calloc(m->beats * m->t, sizeof(int32_t));
    }
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        if (!m->stream || !m->u[i].latch || !m->u[i].flush) {
            c1d_free(m);
            return dla_error(d, DLASIM_ERR_NOMEM,
                             "PDP: out of host memory for the line-end flush model (%zu results)",
                             elems);
        }
    }
    m->regs_num = c1d_regs_num(c->kw, c->sw);
    m->flush_num = c1d_flush_num(c);
    /* init_cnt at pdp_op_start */
    uint32_t psn = c1d_pad_stride_num(c->sw, c->pad_l);
    m->xs = (c->pad_l - psn * c->sw) & 7;
    m->xp = c->pad_l;
    m->cu_s = psn;
    for (unsigned i = 0; i < PDP_UNITS; i++) {
        if (psn >= i && c->split[0].out_w - 1 >= i) {
            m->u[i].en = 1;
            m->u[i].first = 1;
        }
    }
    if (c1d_nonsplit(c)) {
        c1d_bubble_cfg(m, 0);
    }
    return 0;
}

/* Run cal1d over the whole layer (split by split, surface by surface, line
 * by line, the order PDP_RDMA / SDP deliver it), keeping every 1-D result. */
static int c1d_run(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                   struct pdp_work *w, struct pdp_c1d *m)
{
    for (uint32_t si = 0; si < c->nsplit; si++) {
        const struct pdp_split *s = &c->split[si];
        for (uint32_t surf = 0; surf < c->surfaces; surf++) {
            for (uint32_t y = 0; y < c->in_h; y++) {
                int rc = pdp_fetch_line(d, c, s, surf, y, in, w);
                if (rc) {
                    return rc;
                }
                int last_line = surf == c->surfaces - 1 && y == c->in_h - 1;
                for (uint32_t x = 0; x < s->in_w; x++) {
                    int split_end = last_line && x == s->in_w - 1;
                    for (unsigned b = 0; b < m->beats; b++) {
                        while (m->disable) {
                            c1d_bubble_beat(m, si);
                        }
                        const int32_t *din = w->line + (size_t)x * c->lanes + (size_t)b * m->t;
                        int end = split_end && b == m->beats - 1;
                        c1d_data_beat(m, din, b, si, end, end && si == c->nsplit - 1);
                    }
                }
            }
        }
    }
    while (m->disable) {
        c1d_bubble_beat(m, c->nsplit - 1);
    }
    return 0;
}

/* ---- cal2d's surface-end flush (over-stated PAD_BOTTOM) -------------------
 *
 * ref: nvdla/hw nv_small vmod/nvdla/pdp/NV_NVDLA_PDP_CORE_cal2d.v.  cal2d
 * keeps one line-buffer entry per window in progress (buffer_lines_num of
 * them, used in turn: window j in entry j mod buffer_lines_num) and at the
 * end of each surface sends flush_num more output lines, flush_num derived
 * from the programmed PAD_BOTTOM alone (flush_num_cal: PAD_BOTTOM / stride,
 * samllH_flush_num for inputs shorter than the kernel), the ones left over
 * while the next surface's first lines come in (flush_in_next_surf).  When
 * PAD_BOTTOM is larger than the last window needs, the surplus lines are
 * stale entries, the last result the following entries held (no data for the
 * entry of the surface's last window, emptied at its last line: c2d_emptied_entry),
 * and they go out ahead of the next surface's lines: the write DMA, counting
 * lines, puts every later line one place further.  Measured on the nv_small
 * RTL (rg_pdp_8x6x19_k4x4s3x2_ave_007, 2 entries: surface 1 starts with
 * surface 0's line 1, surface 2 with surface 1's line 2 then line 1;
 * rg_pdpoverb_21x4x10_k4x3s4x4_max_012, 1 entry: surface 1 starts with a
 * line of zeros).  After a split's last surface the surplus is not written
 * (nothing of the layer is left to shift). */

/* buffer_lines_num: line-buffer entries in use. */
static uint32_t c2d_buffer_lines(uint32_t kh, uint32_t sh)
{
    if (sh >= kh) {
        return 1;
    }
    switch (sh) {
    case 1:
        return kh;
    case 2:
        return (kh >> 1) + (kh & 1);
    case 3:
        return kh - 1 <= 5 ? 2 : 3;
    default:
        return 2;
    }
}

/* flush_num of cal2d for a bottom padding pb (samllH_flush_num when the
 * input is shorter than the kernel). */
static uint32_t c2d_flush_num(const struct pdp_cfg *c, uint32_t pb)
{
    uint32_t cal = c1d_flush_cal(pb, c->sh);
    uint32_t hr = c->in_h - 1, khr = c->kh - 1;
    int small = hr < 8 && ((hr & 7) + c->pad_t) < khr;
    if (cal == 0 || !small) {
        return cal;
    }
    uint32_t remain = ((hr & 7) + c->pad_t + pb - khr) & 0x3f;
    for (uint32_t n = 6; n >= 1; n--) {
        if (remain == n * c->sh) {
            return n;
        }
    }
    return 0;
}

/* first_out_num of cal2d: input lines before a surface's first window is
 * complete. */
static uint32_t c2d_first_out_num(const struct pdp_cfg *c)
{
    uint32_t hr = c->in_h - 1, khr = c->kh - 1;
    if (hr < 8 && ((hr & 7) + c->pad_t) < khr) {
        return (hr & 7) + 1;
    }
    return (c->kh - c->pad_t) & 0xf;
}

/* Bottom padding the last window needs. */
static uint32_t pdp_needed_bottom(const struct pdp_cfg *c)
{
    int64_t end = (int64_t)(c->out_h - 1) * c->sh + c->kh - c->pad_t;
    return end > (int64_t)c->in_h ? (uint32_t)(end - c->in_h) : 0;
}

/* Surplus lines cal2d sends at each surface end.  Fewer than needed (the
 * samllH_flush_num rule needs an exact match, so a small input with
 * PAD_BOTTOM over-stated can flush none) is pdp_never_completes' case. */
static uint32_t pdp_bottom_surplus(const struct pdp_cfg *c)
{
    uint32_t need = pdp_needed_bottom(c);
    if (c->pad_b <= need) {
        return 0;
    }
    uint32_t f = c2d_flush_num(c, c->pad_b), g = c2d_flush_num(c, need);
    return f > g ? f - g : 0;
}

/* Whether surplus line k (1..surplus) of a surface that is not a split's
 * last goes out: the entry after the last window's, as it is; the last
 * window's own entry (emptied at its last line) only in the bubble path
 * (flush_num >= first_out_num), else it is left to the next surface. */
static int c2d_surplus_sent(const struct pdp_cfg *c, uint32_t k, uint32_t nbuf)
{
    int bubbles = c2d_flush_num(c, c->pad_b) >= c2d_first_out_num(c);
    return (c->out_h - 1 + k) % nbuf != (c->out_h - 1) % nbuf || bubbles;
}

/* Surplus lines sent after each surface but a split's last. */
static uint32_t c2d_surplus_sent_count(const struct pdp_cfg *c)
{
    uint32_t nbuf = c2d_buffer_lines(c->kh, c->sh), n = 0;
    for (uint32_t k = 1; k <= pdp_bottom_surplus(c); k++) {
        n += (uint32_t)c2d_surplus_sent(c, k, nbuf);
    }
    return n;
}

/* The output line stream of one split: slot p goes to surface p / out_h,
 * line p % out_h; slots past the split's cube are not written. */
static int c2d_put(struct dla_dev *d, const struct pdp_cfg *c, const struct pdp_split *s,
                   uint64_t p, const uint8_t *line)
{
    if (p >= (uint64_t)c->surfaces * c->out_h) {
        return 0;
    }
    uint64_t surf = p / c->out_h, oy = p % c->out_h;
    uint64_t addr = c->dst_base + (uint64_t)s->out_x0 * c->atom_bytes + oy * c->dst_line +
                    surf * c->dst_surf;
    return dla_dma_write(d, c->dst_port, addr, line, (size_t)s->out_w * c->atom_bytes);
}

/* Window oy of a surface (lines clipped to the input) pooled from cal1d's
 * results into w->out; `e0` is the surface's first element in the stream. */
static void c2d_window(const struct pdp_cfg *c, const struct pdp_split *s, struct pdp_work *w,
                       const struct pdp_c1d *m, size_t e0, uint32_t oy)
{
    const size_t n = (size_t)s->out_w * c->lanes;
    int64_t a0 = (int64_t)oy * c->sh - c->pad_t;
    int64_t b0 = a0 + c->kh;
    uint32_t a = (uint32_t)(a0 < 0 ? 0 : a0);
    uint32_t b = (uint32_t)(b0 > (int64_t)c->in_h ? (int64_t)c->in_h : b0);
    for (uint32_t y = a; y < b; y++) {
        size_t e = e0 + (size_t)y * s->out_w;
        memcpy(w->ring + (size_t)(y % PDP_KERNEL_MAX) * w->ring_stride, m->stream + e * c->lanes,
               n * sizeof(int32_t));
    }
    pdp_pool_column(c, s, w, a, b);
    pdp_pack(c, w->acc, w->out, n);
}

/* Whether window oy was started (unit2d_set), so its line-buffer entry holds
 * its own partial result: those in the top padding at the surface start
 * (init_unit2d_set: padding_stride_num), the others at the line before their
 * first unless last_pooling_flag (the lines left plus PAD_BOTTOM are not
 * more than the kernel) says the window would end past the padded input. */
static int c2d_window_started(const struct pdp_cfg *c, uint32_t oy)
{
    int64_t start = (int64_t)oy * c->sh - c->pad_t;
    if (start <= 0) {
        return oy <= c1d_pad_stride_num(c->sh, c->pad_t);
    }
    return start <= (int64_t)c->in_h - 1 && start + c->kh <= (int64_t)c->in_h + c->pad_b;
}

static int64_t c2d_lastline_extra(const struct pdp_cfg *c, int *last_out);
static void pdp_lastline_init(struct pdp_cfg *c);

/* The last window's own entry, emptied at its last line, sent as a surplus
 * line: no data, and a line count of one (the entry's size field holds
 * lines - 1 = 0), so for average pooling cal2d adds the padding value of the
 * kernel height - 1 lines it takes as missing (pad_value, PAD_VALUE_nX x
 * kernel width) before dividing; max and min read 0.  Measured on the nv_small
 * RTL: rg_pdpedge_7x6x13_k7x3s7x3_ave_035 (kernel height 3, PAD_BOTTOM 3: a
 * line of avg(2 pad lines)), and two variants of it with kernel height 4 and
 * PAD_BOTTOM 5 and 6 (3 pad lines in both; docs/fidelity.md). */
static void c2d_emptied_entry(const struct pdp_cfg *c, const struct pdp_split *s,
                              struct pdp_work *w, uint8_t *line)
{
    const size_t n = (size_t)s->out_w * c->lanes;
    const uint32_t npad = c->kh - 1;
    if (c->method != PDP_AVE || npad == 0) {
        memset(line, 0, (size_t)s->out_w * c->atom_bytes);
        return;
    }
    const unsigned hbits = c->bits + 23, vbits = c->bits + 20; /* as pdp_pool_column */
    int64_t sum = c->pad_v[npad];
    int32_t hm = dla_pool_round16(dla_pool_wrap(sum * (int64_t)c->recip_w, hbits), c->bits + 3);
    int32_t r = dla_pool_round16(dla_pool_wrap((int64_t)hm * (int64_t)c->recip_h, vbits), c->bits);
    for (size_t i = 0; i < n; i++) {
        w->acc[i] = r;
    }
    pdp_pack(c, w->acc, line, n);
}

/* The faithful path: cal1d replayed, cal2d fed the results in order, its
 * surface-end surplus lines put in the output stream (and the window in
 * progress at a surface's last line, c2d_lastline_extra). */
static int pdp_run_flush(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                         struct pdp_work *w, size_t *c1d_beats)
{
    struct pdp_c1d m;
    const uint32_t nbuf = c2d_buffer_lines(c->kh, c->sh);
    const uint32_t surplus = pdp_bottom_surplus(c);
    int last_out;
    const int64_t lastline = c2d_lastline_extra(c, &last_out);
    const size_t max_bytes = (size_t)w->ring_stride / c->lanes * c->atom_bytes;
    uint8_t *stale = calloc((size_t)PDP_KERNEL_MAX * (max_bytes ? max_bytes : 1), 1);
    if (stale == NULL) {
        return dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory for the line buffer model");
    }
    int rc = c1d_init(d, c, &m);
    if (rc) {
        free(stale);
        return rc;
    }
    rc = c1d_run(d, c, in, w, &m);
    *c1d_beats = m.nbeat;
    size_t base = 0; /* elements of the stream consumed by earlier splits */
    for (uint32_t si = 0; !rc && si < c->nsplit; si++) {
        const struct pdp_split *s = &c->split[si];
        const size_t bytes = (size_t)s->out_w * c->atom_bytes;
        uint64_t slot = 0;
        memset(stale, 0, (size_t)PDP_KERNEL_MAX * max_bytes);
        for (uint32_t surf = 0; !rc && surf < c->surfaces; surf++) {
            const size_t e0 = base + (size_t)surf * c->in_h * s->out_w;
            for (uint32_t oy = 0; !rc && oy < c->out_h; oy++) {
                c2d_window(c, s, w, &m, e0, oy);
                memcpy(stale + (size_t)(oy % nbuf) * max_bytes, w->out, bytes);
                rc = c2d_put(d, c, s, slot++, w->out);
            }
            /* the window started in the top padding and left in progress:
             * sent partial with the surface's last line, ahead of the next */
            for (int64_t k = 0; !rc && surf + 1 < c->surfaces && k < lastline; k++) {
                c2d_window(c, s, w, &m, e0, c->out_h);
                memcpy(stale + (size_t)(c->out_h % nbuf) * max_bytes, w->out, bytes);
                rc = c2d_put(d, c, s, slot++, w->out);
            }
            /* surplus: the windows after the last one; one that has taken a
             * line of the surface sends its partial result, one that has not
             * the entry as it is (the last window's own entry: no data,
             * c2d_emptied_entry) */
            for (uint32_t k = 1; !rc && surplus && surf + 1 < c->surfaces && k <= surplus; k++) {
                uint32_t oy = c->out_h - 1 + k, entry = oy % nbuf;
                if (!c2d_surplus_sent(c, k, nbuf)) {
                    continue;
                }
                if (c2d_window_started(c, oy)) {
                    c2d_window(c, s, w, &m, e0, oy);
                    memcpy(stale + (size_t)entry * max_bytes, w->out, bytes);
                } else if (entry == (c->out_h - 1) % nbuf) {
                    c2d_emptied_entry(c, s, w, stale + (size_t)entry * max_bytes);
                }
                rc = c2d_put(d, c, s, slot++, stale + (size_t)entry * max_bytes);
            }
        }
        base += (size_t)c->surfaces * c->in_h * s->out_w;
    }
    c1d_free(&m);
    free(stale);
    return rc;
}

static int pdp_run(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                   struct pdp_work *w)
{
    for (uint32_t si = 0; si < c->nsplit; si++) {
        const struct pdp_split *s = &c->split[si];
        const size_t out_bytes = (size_t)s->out_w * c->atom_bytes;
        for (uint32_t surf = 0; surf < c->surfaces; surf++) {
            uint32_t loaded = 0; /* input lines fetched and pooled so far */
            for (uint32_t oy = 0; oy < c->out_h; oy++) {
                int64_t a0 = (int64_t)oy * c->sh - c->pad_t;
                int64_t b0 = a0 + c->kh;
                uint32_t a = (uint32_t)(a0 < 0 ? 0 : a0);
                uint32_t b = (uint32_t)(b0 > (int64_t)c->in_h ? (int64_t)c->in_h : b0);
                for (; loaded < b; loaded++) {
                    int rc = pdp_fetch_line(d, c, s, surf, loaded, in, w);
                    if (rc) {
                        return rc;
                    }
                    pdp_pool_line(c, s, w->line,
                                  w->ring + (size_t)(loaded % PDP_KERNEL_MAX) * w->ring_stride);
                }
                pdp_pool_column(c, s, w, a, b);
                pdp_pack(c, w->acc, w->out, (size_t)s->out_w * c->lanes);
                uint64_t addr = c->dst_base + (uint64_t)s->out_x0 * c->atom_bytes +
                                (uint64_t)oy * c->dst_line + (uint64_t)surf * c->dst_surf;
                int rc = dla_dma_write(d, c->dst_port, addr, w->out, out_bytes);
                if (rc) {
                    return rc;
                }
            }
            /* PDP_RDMA reads every line, also those no window uses. */
            if (in == NULL) {
                for (; loaded < c->in_h; loaded++) {
                    int rc = pdp_fetch_line(d, c, s, surf, loaded, in, w);
                    if (rc) {
                        return rc;
                    }
                }
            }
        }
    }
    return 0;
}

/* ---- int8 max/min straight on the memory bytes --------------------------------
 *
 * Max and min pooling of int8 data are the extreme of the window's real
 * elements: no padding addend, no reciprocal, no register width to keep, so
 * the int32 lane values pdp_run works in give the same bytes as comparing the
 * signed bytes themselves.  Layers read from memory, in one split, with every
 * surface read ahead in one burst (pdp_ahead_init; the same bytes and traffic
 * as line by line) take this path: per output line, the window's input lines
 * are combined byte by byte (32 bytes a step in AVX2), then each output atom
 * from the window's columns of that line; each output line is written as
 * pdp_run writes it (one burst per line, in the same order: a write fault
 * leaves the same lines written and names the same burst). */

#if defined(DLA_LANES_X86)
/* acc[i] = max/min of acc[i] and r[i] as signed bytes, i < n. */
DLA_LANES_AVX2_ATTR static void pdp_bytes_rows_avx2(int8_t *acc, const int8_t *r, size_t n,
                                                    int is_max)
{
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(acc + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(r + i));
        a = is_max ? _mm256_max_epi8(a, b) : _mm256_min_epi8(a, b);
        _mm256_storeu_si256((__m256i *)(void *)(acc + i), a);
    }
    for (; i < n; i++) {
        acc[i] = is_max ? (r[i] > acc[i] ? r[i] : acc[i]) : (r[i] < acc[i] ? r[i] : acc[i]);
    }
}

/* Output atom j of a line: the extreme of atoms [a, b) of `v`, 8 bytes a step
 * (atom_bytes is a multiple of 8: Atomic-M is 8 or 32 bytes). */
DLA_LANES_AVX2_ATTR static void pdp_bytes_cols_avx2(const struct pdp_cfg *c, const int8_t *v,
                                                    int8_t *out, int is_max)
{
    const size_t ab = c->atom_bytes;
    uint32_t j = 0;
    if (ab == 8 && c->kw == 2 && c->sw == 2 && c->pad_l == 0) {
        /* 2x2 stride 2 (the common pooling): atoms 2j..2j+3 in one load,
         * the even ones against the odd ones give outputs j and j + 1 */
        for (; 2 * (size_t)j + 4 <= c->in_w && j + 2 <= c->out_w; j += 2) {
            __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(v + (size_t)j * 16));
            x = _mm256_permute4x64_epi64(x, 0xd8); /* atoms 0 2 | 1 3 */
            __m128i e = _mm256_castsi256_si128(x), o = _mm256_extracti128_si256(x, 1);
            __m128i m = is_max ? _mm_max_epi8(e, o) : _mm_min_epi8(e, o);
            _mm_storeu_si128((__m128i *)(void *)(out + (size_t)j * 8), m);
        }
    }
    for (; j < c->out_w; j++) {
        int64_t a0 = (int64_t)j * c->sw - c->pad_l, b0 = a0 + c->kw;
        size_t a = (size_t)(a0 < 0 ? 0 : a0);
        size_t b = (size_t)(b0 > (int64_t)c->in_w ? (int64_t)c->in_w : b0);
        for (size_t k = 0; k < ab; k += 8) {
            __m128i m = _mm_loadl_epi64((const __m128i *)(const void *)(v + a * ab + k));
            for (size_t x = a + 1; x < b; x++) {
                __m128i e = _mm_loadl_epi64((const __m128i *)(const void *)(v + x * ab + k));
                m = is_max ? _mm_max_epi8(m, e) : _mm_min_epi8(m, e);
            }
            _mm_storel_epi64((__m128i *)(void *)(out + j * ab + k), m);
        }
    }
}
#endif

static void pdp_bytes_rows(int8_t *acc, const int8_t *r, size_t n, int is_max)
{
    for (size_t i = 0; i < n; i++) {
        acc[i] = is_max ? (r[i] > acc[i] ? r[i] : acc[i]) : (r[i] < acc[i] ? r[i] : acc[i]);
    }
}

static void pdp_bytes_cols(const struct pdp_cfg *c, const int8_t *v, int8_t *out, int is_max)
{
    const size_t ab = c->atom_bytes;
    for (uint32_t j = 0; j < c->out_w; j++) {
        int64_t a0 = (int64_t)j * c->sw - c->pad_l, b0 = a0 + c->kw;
        size_t a = (size_t)(a0 < 0 ? 0 : a0);
        size_t b = (size_t)(b0 > (int64_t)c->in_w ? (int64_t)c->in_w : b0);
        memcpy(out + j * ab, v + a * ab, ab);
        for (size_t x = a + 1; x < b; x++) {
            pdp_bytes_rows(out + j * ab, v + x * ab, ab, is_max);
        }
    }
}

/* Max or min of 8-bit atoms without a width split: the layer pools bytes. */
static int pdp_pools_bytes(const struct pdp_cfg *c)
{
    return c->bits == 8 && c->method != PDP_AVE && c->nsplit == 1 && c->atom_bytes % 8 == 0;
}

/* Whether the layer can pool its memory bytes directly (see above): every
 * surface's burst read cannot fail, so no line-by-line fallback is needed. */
static int pdp_bytes_eligible(struct dla_dev *d, const struct pdp_cfg *c, const struct pdp_work *w)
{
    if (w->surf == NULL || !pdp_pools_bytes(c)) {
        return 0;
    }
    const size_t bytes = (size_t)c->in_w * c->atom_bytes * c->in_h;
    for (uint32_t s = 0; s < c->surfaces; s++) {
        if (!dla_dma_can_read(d, c->src_port, c->src_base + (uint64_t)s * c->src_surf, bytes)) {
            return 0;
        }
    }
    return 1;
}

/* ---- a global average pool of SDP's int8 atoms ------------------------------------
 *
 * One window covering the whole plane, no padding, one output per lane (a
 * network's global average pool: MobileNetV2's 7x7x1280 took 28-36 us
 * through pdp_run, line by line, 19.5 this way; rdtsc, 2 threads, its 160
 * writes ~3 us of it).  pdp_run's average is the exact integer sum of the
 * window's elements (its lines' sums added; no addend without padding)
 * through pdp_ave_of, so summing each surface's atoms at once gives the
 * same bytes; each output written as pdp_run writes it (one burst a
 * surface, in order). */
static int pdp_whole_ave_eligible(const struct pdp_cfg *c, const struct dla_cube *in)
{
    const struct pdp_split *s = &c->split[0];
    return in != NULL && in->atoms != NULL && c->method == PDP_AVE && c->bits == 8 &&
           c->nsplit == 1 && c->out_w == 1 && c->out_h == 1 && s->out_w == 1 && s->in_x0 == 0 &&
           s->in_w == c->in_w && s->pad_l == 0 && c->pad_t == 0 && c->kw == c->in_w &&
           c->kh == c->in_h && c->lanes <= PDP_WHOLE_LANES_MAX;
}

/* sum[l] = lane l's total over `atoms` atoms of L lanes at p.  Inlined with
 * a constant L for the usual Atomic-M values so the lane loop vectorizes
 * (with L a variable, MobileNetV2's 160 surfaces of 49 atoms took 30 us). */
PDP_INLINE void pdp_whole_sum_l(const int8_t *restrict p, size_t atoms, int32_t *restrict sum,
                                const uint32_t L)
{
    for (uint32_t l = 0; l < L; l++) {
        sum[l] = 0;
    }
    for (size_t x = 0; x < atoms; x++, p += L) {
        for (uint32_t l = 0; l < L; l++) {
            sum[l] += p[l];
        }
    }
}

#if defined(DLA_LANES_X86)
/* pdp_whole_sum_l with AVX2 for L a multiple of 8: each 8-lane group of
 * the atoms sign-extended to int32 and added, a ymm a group, two atoms
 * apart in two sums (the adds' latency): MobileNetV2's 7x7x1280 pool in the
 * compiler's SSE2 loop was dla_pdp_execute's 0.17 % of the run's samples,
 * 0.05 % this way. */
DLA_LANES_AVX2_ATTR static void pdp_whole_sum_avx2(const int8_t *p, size_t atoms, int32_t *sum,
                                                   uint32_t L)
{
    for (uint32_t g = 0; g < L; g += 8) {
        const int8_t *q = p + g;
        __m256i a0 = _mm256_setzero_si256(), a1 = a0;
        size_t x = 0;
        for (; x + 2 <= atoms; x += 2, q += 2 * (size_t)L) {
            a0 = _mm256_add_epi32(a0, _mm256_cvtepi8_epi32(
                                          _mm_loadl_epi64((const __m128i *)(const void *)q)));
            a1 = _mm256_add_epi32(a1, _mm256_cvtepi8_epi32(
                                          _mm_loadl_epi64((const __m128i *)(const void *)(q + L))));
        }
        if (x < atoms) {
            a0 = _mm256_add_epi32(a0, _mm256_cvtepi8_epi32(
                                          _mm_loadl_epi64((const __m128i *)(const void *)q)));
        }
        _mm256_storeu_si256((__m256i *)(void *)(sum + g), _mm256_add_epi32(a0, a1));
    }
}
#endif

static void pdp_whole_sum(const struct pdp_cfg *c, const int8_t *p, size_t atoms, int32_t *sum)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(c->isa) && c->lanes % 8 == 0) {
        pdp_whole_sum_avx2(p, atoms, sum, c->lanes);
        return;
    }
#endif
    switch (c->lanes) {
    case 8:
        pdp_whole_sum_l(p, atoms, sum, 8);
        break;
    case 32:
        pdp_whole_sum_l(p, atoms, sum, 32);
        break;
    default:
        pdp_whole_sum_l(p, atoms, sum, c->lanes);
        break;
    }
}

static int pdp_run_whole_ave(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                             struct pdp_work *w)
{
    const size_t atoms = (size_t)c->in_w * c->in_h, L = c->lanes;
    for (uint32_t surf = 0; surf < c->surfaces; surf++) {
        int32_t sum[PDP_WHOLE_LANES_MAX];
        pdp_whole_sum(c, pdp_flying_line(c, in, surf, 0), atoms, sum);
        for (size_t l = 0; l < L; l++) {
            w->acc[l] = pdp_ave_of(c, sum[l]); /* (no padded line: no addend) */
        }
        pdp_pack(c, w->acc, w->out, L);
        const uint64_t addr = c->dst_base + (uint64_t)c->split[0].out_x0 * c->atom_bytes +
                              (uint64_t)surf * c->dst_surf;
        int rc = dla_dma_write(d, c->dst_port, addr, w->out, c->atom_bytes);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* A surface's output lines (out_bytes each) into lines from its input
 * rows (row y at rows[y]): each output row's window of input rows combined
 * into vline (one input line's bytes), then its columns. */
static void pdp_bytes_surface(const struct pdp_cfg *c, const int8_t *const *rows, int8_t *vline,
                              int8_t *lines)
{
    const size_t line = (size_t)c->in_w * c->atom_bytes, out_bytes = (size_t)c->out_w * c->atom_bytes;
    const int is_max = c->method == PDP_MAX;
    for (uint32_t oy = 0; oy < c->out_h; oy++) {
        int8_t *out = lines + (size_t)oy * out_bytes;
        int64_t a0 = (int64_t)oy * c->sh - c->pad_t, b0 = a0 + c->kh;
        uint32_t a = (uint32_t)(a0 < 0 ? 0 : a0);
        uint32_t b = (uint32_t)(b0 > (int64_t)c->in_h ? (int64_t)c->in_h : b0);
        memcpy(vline, rows[a], line);
        for (uint32_t y = a + 1; y < b; y++) {
#if defined(DLA_LANES_X86)
            if (dla_lanes_avx2_up(c->isa)) {
                pdp_bytes_rows_avx2(vline, rows[y], line, is_max);
                continue;
            }
#endif
            pdp_bytes_rows(vline, rows[y], line, is_max);
        }
#if defined(DLA_LANES_X86)
        if (dla_lanes_avx2_up(c->isa)) {
            pdp_bytes_cols_avx2(c, vline, out, is_max);
        } else
#endif
        {
            pdp_bytes_cols(c, vline, out, is_max);
        }
    }
}

/* Input bytes from which a layer's surfaces are pooled on the device's
 * team (pdp_bytes_team).  ResNet's 112x112x64 max pooling after its first
 * convolution (800 KB) took ~1.5 % of ResNet-18's calling-thread samples
 * (perf, ~75 us an image) while the worker waited; small ones (Fashion-
 * MNIST's, under 32 KB) stay on the calling thread, as SDP's small layers
 * do (sdp.c SDP_TEAM_MIN_ELEMS). */
#define PDP_TEAM_MIN_BYTES 32768u

struct pdp_bytes_job {
    const struct pdp_cfg *c;
    const int8_t **rows; /* each surface's input rows, in_h a surface */
    int8_t *lines;       /* every surface's output lines, n_lines bytes apart */
    int8_t *vlines;      /* an input line's bytes a surface */
    size_t n_lines, line;
};

/* Surface `surf` of a pdp_bytes_job (a dla_team_run item: it writes only
 * its own lines). */
static void pdp_bytes_item(void *ctx, size_t surf)
{
    const struct pdp_bytes_job *j = ctx;
    pdp_bytes_surface(j->c, j->rows + surf * j->c->in_h, j->vlines + surf * j->line,
                      j->lines + surf * j->n_lines);
}

/* [at, the end of at's memory page or `end`) lent in place, or NULL. */
static const uint8_t *pdp_lend_piece(struct dla_dev *d, const struct pdp_cfg *c, uint64_t at,
                                     uint64_t end, uint64_t *piece_end)
{
    const uint64_t page_end = (at / DLA_MEM_PAGE_BYTES + 1) * DLA_MEM_PAGE_BYTES;
    *piece_end = page_end < end ? page_end : end;
    return dla_dma_lend(d, c->src_port, at, (size_t)(*piece_end - at));
}

/* Surface `surf`'s input rows from the memory, lent in place a page at a
 * time (a row across a page boundary assembled from both pages in spill,
 * a row's bytes a boundary); 0 where a page cannot be lent. */
static int pdp_lend_rows(struct dla_dev *d, const struct pdp_cfg *c, uint32_t surf,
                         const int8_t **rows, int8_t *spill)
{
    const size_t line = (size_t)c->in_w * c->atom_bytes;
    const uint64_t base = c->src_base + (uint64_t)surf * c->src_surf;
    const uint64_t end = base + (uint64_t)line * c->in_h;
    const uint8_t *piece = NULL;
    uint64_t at = 0, piece_end = 0; /* piece holds [at, piece_end) */
    for (uint32_t y = 0; y < c->in_h; y++) {
        const uint64_t a = base + (uint64_t)y * line;
        if (a >= piece_end) {
            at = a;
            if ((piece = pdp_lend_piece(d, c, at, end, &piece_end)) == NULL) {
                return 0;
            }
        }
        if (a + line <= piece_end) {
            rows[y] = (const int8_t *)piece + (a - at);
            continue;
        }
        const size_t head = (size_t)(piece_end - a);
        memcpy(spill, piece + (a - at), head);
        at = piece_end;
        if ((piece = pdp_lend_piece(d, c, at, end, &piece_end)) == NULL) {
            return 0;
        }
        memcpy(spill + head, piece, line - head);
        rows[y] = spill;
        spill += line;
    }
    return 1;
}

/* Rows a surface's spill may need: one a page boundary within it. */
static size_t pdp_spill_rows(const struct pdp_cfg *c)
{
    return (size_t)c->in_w * c->atom_bytes * c->in_h / DLA_MEM_PAGE_BYTES + 1;
}

/* Every surface's input rows, for pdp_bytes_team: SDP's atoms on the fly,
 * or the memory's bytes lent in place (the read-ahead's layers: the input
 * apart from the output, each surface's lines back to back); 0 when a
 * page cannot be lent (nothing counted). */
static int pdp_bytes_sources(struct dla_dev *d, const struct pdp_cfg *c,
                             const struct dla_cube *in, const struct pdp_work *w,
                             const int8_t **rows, int8_t *spill)
{
    const size_t line = (size_t)c->in_w * c->atom_bytes;
    for (uint32_t surf = 0; surf < c->surfaces; surf++) {
        const int8_t **r = rows + (size_t)surf * c->in_h;
        if (in) {
            for (uint32_t y = 0; y < c->in_h; y++) {
                r[y] = pdp_flying_line(c, in, surf, y);
            }
        } else if (!w->surf || line > DLA_MEM_PAGE_BYTES ||
                   !pdp_lend_rows(d, c, surf, r, spill + surf * pdp_spill_rows(c) * line)) {
            return 0;
        }
    }
    if (!in) {
        dla_dma_count_read(d, line * c->in_h * c->surfaces);
    }
    return 1;
}

/* pdp_run_bytes with its surfaces pooled over the team (each thread the
 * surfaces of its home share: on the fly, those SDP's items gave it), then
 * written in surface order on the calling thread; 1 when done (*rc its
 * status), 0 when the memory cannot lend the input (nothing read). */
static int pdp_bytes_team(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                          const struct pdp_work *w, struct dla_team *team, int *rc)
{
    const size_t line = (size_t)c->in_w * c->atom_bytes, out_bytes = (size_t)c->out_w * c->atom_bytes;
    const size_t n_lines = out_bytes * c->out_h, surfs = c->surfaces;
    struct pdp_bytes_job j = { c, NULL, NULL, NULL, n_lines, line };
    j.rows = malloc(surfs * c->in_h * sizeof(*j.rows));
    j.lines = malloc(surfs * (n_lines + line + pdp_spill_rows(c) * line) + 1);
    if (j.rows == NULL || j.lines == NULL) {
        free(j.rows);
        free(j.lines);
        *rc = dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory for %u output surfaces of "
                        "%ux%u", c->surfaces, c->out_w, c->out_h);
        return 1;
    }
    j.vlines = j.lines + surfs * n_lines;
    if (!pdp_bytes_sources(d, c, in, w, j.rows, j.vlines + surfs * line)) {
        free(j.rows);
        free(j.lines);
        return 0;
    }
    dla_team_run(team, surfs, pdp_bytes_item, &j);
    *rc = 0;
    for (uint32_t surf = 0; surf < c->surfaces && !*rc; surf++) {
        *rc = dla_dma_write_lines(d, c->dst_port, UINT64_MAX,
                                  c->dst_base + (uint64_t)surf * c->dst_surf, c->dst_line,
                                  c->out_h, out_bytes, j.lines + surf * n_lines);
    }
    free(j.rows);
    free(j.lines);
    return 1;
}

/* Max or min pooling of 8-bit atoms, surface by surface, from memory (the
 * read-ahead) or from SDP's atoms on the fly (in). */
static int pdp_run_bytes(struct dla_dev *d, const struct pdp_cfg *c, const struct dla_cube *in,
                         struct pdp_work *w)
{
    const size_t line = (size_t)c->in_w * c->atom_bytes, out_bytes = (size_t)c->out_w * c->atom_bytes;
    struct dla_team *team = dla_dev_team(d);
    int rc = 0;
    if (team && c->surfaces > 1 && (uint64_t)c->surfaces * line * c->in_h >= PDP_TEAM_MIN_BYTES &&
        pdp_bytes_team(d, c, in, w, team, &rc)) {
        return rc;
    }
    int8_t *vline = (int8_t *)w->raw; /* one input line's bytes */
    /* a surface's output lines, written in one call (one burst where the
     * lines are contiguous: the per-line calls cost more than their bytes) */
    const size_t n_lines = out_bytes * c->out_h;
    int8_t *lines = malloc(n_lines ? n_lines : 1);
    if (lines == NULL) {
        return dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory for a %ux%u output surface",
                         c->out_w, c->out_h);
    }
    const int8_t **rows = malloc((size_t)c->in_h * sizeof(*rows));
    if (rows == NULL) {
        free(lines);
        return dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory for a %ux%u output surface",
                         c->out_w, c->out_h);
    }
    for (uint32_t surf = 0; surf < c->surfaces && !rc; surf++) {
        const int8_t *src = in ? pdp_flying_line(c, in, surf, 0)
                               : (const int8_t *)pdp_ahead_line(d, c, surf, 0, w, &rc);
        if (rc || src == NULL) {
            rc = rc ? rc : dla_error(d, DLASIM_ERR_MEM, "PDP: input surface %u not readable", surf);
            break;
        }
        for (uint32_t y = 0; y < c->in_h; y++) {
            rows[y] = src + (size_t)y * line;
        }
        pdp_bytes_surface(c, rows, vline, lines);
        rc = dla_dma_write_lines(d, c->dst_port, UINT64_MAX,
                                 c->dst_base + (uint64_t)surf * c->dst_surf, c->dst_line, c->out_h,
                                 out_bytes, lines);
    }
    free(rows);
    free(lines);
    return rc;
}

/* ---- layers the RTL never completes ------------------------------------------
 *
 * ref: nvdla/hw nv_small vmod/nvdla/pdp/NV_NVDLA_PDP_wdma.v, _WDMA_dat.v,
 * _RDMA_eg.v, _CORE_cal2d.v.  PDP's done (dp2reg_done, the interrupt) needs
 * both PDP_WDMA's op_done (the output cube's last atom written: its own line
 * and surface counts) and, from memory, rdma2wdma_done (PDP_RDMA handed its
 * last element to the core).  cal2d sends its lines straight into PDP_WDMA's
 * data FIFOs (one 4-entry FIFO per byte of the atom); after op_done the WDMA
 * issues no more writes, so lines cal2d sends past the count stay there.
 * Two kinds of programming leave the layer running for ever:
 *  - cal2d sends fewer lines than PDP_WDMA counts: its surface-end flush count
 *    (flush_num, from PAD_BOTTOM alone) is below what the last window needs,
 *    or cal1d sends fewer 1-D results than cal2d counts (cal1d's line-end
 *    flush, from PAD_RIGHT alone; replayed by c1d_run): op_done never comes.
 *  - cal2d sends more lines than PDP_WDMA counts before it has taken its last
 *    input (the surplus lines of every surface but the last, the flush lines
 *    and the windows of extra 1-D results when cal1d sends more than cal2d
 *    counts, less the flush of the last surface, which comes after it), by
 *    more than the FIFOs and pipeline stages behind op_done hold: cal2d, cal1d
 *    and PDP_RDMA stall, and rdma2wdma_done never comes.  How much they hold
 *    was measured on the nv_small RTL with cal2d run alone under Verilator and
 *    the whole design: 8 atoms, the last still going out with the last
 *    input line, pass (rg_pdpoverb_7x8x25_k6x3s2x7_ave_008), 9 hang
 *    (rg_pdpoverb_9x6x16_k2x5s4x3_max_021), and so do 8 whole atoms
 *    (rg_pdpoverbx_19x9x20_k8x6s3x6_ave_017): c2d_lines tells whether the
 *    last input line carries an output line; docs/fidelity.md.
 *    The lines cal2d sends include the window started in the top padding
 *    and left in progress at a surface's last line (c2d_lastline_extra).
 * On the fly the WDMA does not wait for PDP_RDMA (reading_done_flag is set at
 * op_load), so only the first case applies there. */

/* atoms past op_done that do not stall the core, the last in flight (measured) */
#define PDP_WDMA_ABSORB_ATOMS 8u

/* Windows cal2d completes in `lines` whole extra lines after the cube: its
 * line counters are not started again (init_cnt is pdp_op_start or a surface
 * end inside the cube), so the first line only starts the count; measured
 * on cal2d run alone (the extra-line cases of docs/fidelity.md). */
static uint64_t c2d_windows_in(const struct pdp_cfg *c, uint64_t lines)
{
    int64_t room = (int64_t)lines - 1 + c->pad_t - c->kh;
    return lines == 0 || room < 0 ? 0 : (uint64_t)room / c->sh + 1;
}

/* cal2d's vertical counters, stepped one input line at a time.  ref: nvdla/hw
 * nv_small NV_NVDLA_PDP_CORE_cal2d.v: strip_ycnt_stride (stride_end),
 * strip_ycnt_psize (3 bits; pooling_2d_rdy when it equals the kernel height -
 * 1 at a line end), unit2d_cnt_stride / unit2d_cnt_pooling (the line-buffer
 * entry a window starts in / is read from), unit2d_en (an entry holds a
 * window in progress: set at the surface start for the windows in the top
 * padding, init_unit2d_set, and at each stride_end unless last_pooling_flag;
 * cleared when its window is read out and at each surface end).  An output
 * line goes out on an active_last_line (pooling_2d_rdy, or the surface's
 * last input line, last_line_in) when the entry unit2d_cnt_pooling points to
 * is enabled: so the window in progress at a surface's last line goes out
 * then, partial, even when PAD_BOTTOM does not reach its end.  Checked
 * against cal2d run alone (tools/rtlgrade/cal2d_probe) on random programmings
 * without a surface-end flush: lines and their timing agree. */
struct c2d_lines {
    uint32_t stride, psize, cnt_stride, cnt, line;
    uint32_t en; /* unit2d_en, bit i for entry i */
};

static void c2d_lines_init(const struct pdp_cfg *c, struct c2d_lines *s)
{
    const uint32_t psn = c1d_pad_stride_num(c->sh, c->pad_t);
    s->stride = (c->pad_t - psn * c->sh) & 7u; /* strip_ycnt_offset */
    s->psize = c->pad_t & 7u;
    s->cnt_stride = psn;
    s->cnt = 0;
    s->line = 0;
    s->en = psn >= 7 ? 0xffu : (2u << psn) - 1u; /* init_unit2d_set: entries 0..psn */
}

/* One input line; returns whether cal2d sends an output line with it.
 * `cube_end`: this line ends the (sub)cube (no re-start of the counters,
 * wr_total_cube_done clears every entry). */
static int c2d_lines_step(const struct pdp_cfg *c, struct c2d_lines *s, uint32_t nbuf,
                          int cube_end)
{
    const int last = s->line == c->in_h - 1; /* last_line_in */
    const int rdy = s->psize == c->kh - 1;   /* pooling_2d_rdy */
    const int out = (rdy || last) && (s->en >> s->cnt & 1u);
    const int stride_end = s->stride == c->sh - 1;
    const int last_pooling = (int64_t)(c->in_h - 1 - s->line) + c->pad_b <= (int64_t)c->kh - 1;
    if (last && !cube_end) {
        c2d_lines_init(c, s); /* middle_surface_trig */
        return out;
    }
    uint32_t set = 8; /* unit2d_set_trig: the entry after unit2d_cnt_stride */
    if (stride_end && !last_pooling) {
        set = s->cnt_stride == nbuf - 1 ? 0 : s->cnt_stride + 1;
    }
    if (last && cube_end) {
        s->en = 0;
    } else { /* the set entry wins over a clear of the same entry */
        const uint32_t clear = last ? 0xffu : rdy ? 1u << s->cnt : 0u;
        s->en = (s->en & ~clear & 0xffu) | (set < 8 ? 1u << set : 0u);
    }
    if (stride_end) {
        s->cnt_stride = s->cnt_stride == nbuf - 1 ? 0 : s->cnt_stride + 1;
    }
    if (rdy || last) {
        s->cnt = s->cnt == nbuf - 1 ? 0 : s->cnt + 1;
    }
    s->stride = stride_end ? 0 : s->stride + 1;
    if (c->kh >= c->sh) {
        s->psize = (rdy ? c->kh - c->sh : s->psize + 1) & 7u;
    } else {
        s->psize = s->stride <= c->kh - 1 ? s->stride : 0;
    }
    s->line = last ? 0 : s->line + 1;
    return out;
}

/* Lines cal2d sends during a surface's input lines (before its surface-end
 * flush); *last_out: whether its last input line carries one. */
static uint32_t c2d_surface_lines(const struct pdp_cfg *c, int *last_out)
{
    struct c2d_lines s;
    const uint32_t nbuf = c2d_buffer_lines(c->kh, c->sh);
    uint32_t n = 0;
    int out = 0;
    c2d_lines_init(c, &s);
    for (uint32_t y = 0; y < c->in_h; y++) {
        out = c2d_lines_step(c, &s, nbuf, 0);
        n += (uint32_t)out;
    }
    *last_out = out;
    return n;
}

/* Lines cal2d sends per surface beyond those PDP_WDMA expects before the
 * flush (out_h less the flush lines the last windows need): the window in
 * progress at the last line sent partial (rg_pdp_33x5x23_k8x8s8x3_max_017);
 * *last_out as c2d_surface_lines. */
static int64_t c2d_lastline_calc(const struct pdp_cfg *c, int *last_out)
{
    const int64_t sent = c2d_surface_lines(c, last_out);
    return sent - ((int64_t)c->out_h - (int64_t)c2d_flush_num(c, pdp_needed_bottom(c)));
}

/* c2d_lastline_calc, stepped once per layer (pdp_lastline_init). */
static int64_t c2d_lastline_extra(const struct pdp_cfg *c, int *last_out)
{
    *last_out = c->lastline_out;
    return c->lastline_extra;
}

static void pdp_lastline_init(struct pdp_cfg *c)
{
    c->lastline_extra = c2d_lastline_calc(c, &c->lastline_out);
}

/* Whether cal2d's last input line carries an output line when cal1d sends
 * `extra` lines' worth of results past the cube, stepped from the cube's
 * last surface on: the counters run on past its end (wr_total_cube_done
 * only clears the entries), and its surface and split counters start again,
 * so every surfaces x splits surfaces later is a cube end again.  Against
 * cal2d run alone with extra lines (cal2d_probe BEATS_IN): 34 of 599 random
 * programmings without a flush differ (docs/fidelity.md); it decides only
 * at exactly 8 atoms past the count. */
static int c2d_extra_last_out(const struct pdp_cfg *c, uint64_t extra)
{
    struct c2d_lines s;
    const uint32_t nbuf = c2d_buffer_lines(c->kh, c->sh);
    const uint64_t period = (uint64_t)c->surfaces * c->nsplit;
    int out = 0;
    c2d_lines_init(c, &s);
    for (uint64_t y = 0; y < c->in_h + extra; y++) {
        out = c2d_lines_step(c, &s, nbuf, (y / c->in_h) % period == 0);
    }
    return out;
}

/* Atoms cal2d sends past PDP_WDMA's count before it has taken its last
 * input (negative: fewer); *in_flight: whether the last of them goes out
 * with that input line (its last beats still in cal2d's pipeline). */
static int64_t c2d_excess_atoms(const struct pdp_cfg *c, size_t beats_in, size_t beats_want,
                                int *in_flight)
{
    const struct pdp_split *last = &c->split[c->nsplit - 1];
    const uint64_t f = c2d_flush_num(c, c->pad_b), g = c2d_flush_num(c, pdp_needed_bottom(c));
    const uint64_t beats_atom = c->lanes / c->beat_lanes;
    const int64_t sx = (int64_t)c2d_surplus_sent_count(c);
    const int64_t lx = c2d_lastline_extra(c, in_flight);
    int64_t excess = 0;
    for (uint32_t i = 0; i < c->nsplit; i++) {
        int64_t ow = c->split[i].out_w;
        excess += sx * (int64_t)(c->surfaces - 1) * ow + lx * (int64_t)c->surfaces * ow;
        if (i + 1 < c->nsplit) {
            excess += ((int64_t)f - (int64_t)g) * ow; /* a split's last flush, before the next */
        }
    }
    if (beats_in <= beats_want) {
        return excess - (int64_t)g * last->out_w; /* the needed flush lines come after */
    }
    uint64_t extra_lines = (beats_in - beats_want) / (beats_atom * c->split[0].out_w);
    *in_flight = c2d_extra_last_out(c, extra_lines);
    return excess + ((int64_t)f - (int64_t)g) * last->out_w +
           (int64_t)(c2d_windows_in(c, extra_lines) * c->split[0].out_w);
}

/* Whether the layer never completes on the RTL; if so dla_stall says why. */
static int pdp_never_completes(struct dla_dev *d, const struct pdp_cfg *c, size_t beats_in)
{
    const uint32_t need = pdp_needed_bottom(c);
    const uint32_t f = c2d_flush_num(c, c->pad_b), g = c2d_flush_num(c, need);
    size_t beats_want = 0;
    for (uint32_t i = 0; i < c->nsplit; i++) {
        beats_want +=
            (size_t)c->surfaces * c->in_h * c->split[i].out_w * (c->lanes / c->beat_lanes);
    }
    if (beats_in == SIZE_MAX) {
        beats_in = beats_want; /* the direct path: cal1d sends what cal2d counts */
    }
    /* short: PDP_RDMA has read everything (its OP_EN clears), PDP waits;
     * past the count: PDP_RDMA never finishes either */
    const uint32_t pdp = 1u << NVDLA_UNIT_PDP, both = pdp | 1u << NVDLA_UNIT_PDP_RDMA;
    if (f < g) {
        dla_stall(d, pdp, "PDP: cal2d flushes %u line(s) at each surface end (flush_num from "
                  "D_POOLING_PADDING_CFG.PAD_BOTTOM=%u, stride %u) where the last window needs %u "
                  "(bottom padding %u): PDP_WDMA waits for output lines that never come",
                  f, c->pad_b, c->sh, g, need);
        return 1;
    }
    if (beats_in < beats_want) {
        dla_stall(d, pdp, "PDP: cal1d sends %zu beats of 1-D results where cal2d counts %zu "
                  "(line-end flush from D_POOLING_PADDING_CFG.PAD_RIGHT=%u, stride %u): cal2d "
                  "waits for the rest and PDP_WDMA for its output lines",
                  beats_in, beats_want, c->pad_r, c->sw);
        return 1;
    }
    int in_flight = 0;
    int64_t excess = c->flying ? 0 : c2d_excess_atoms(c, beats_in, beats_want, &in_flight);
    /* whole atoms past the count before the last input: at most 7 (the 8th
     * may still be in flight) */
    if (excess - in_flight >= (int64_t)PDP_WDMA_ABSORB_ATOMS) {
        int last_out;
        long long lx = (long long)c2d_lastline_extra(c, &last_out);
        dla_stall(d, both, "PDP: cal2d sends %lld atom(s) more than PDP_WDMA writes before it has "
                  "taken its last input (D_POOLING_PADDING_CFG.PAD_BOTTOM=%u where the last window "
                  "needs %u, PAD_RIGHT=%u; %lld line(s) a surface for a window still in progress at "
                  "the surface's last line; %u are absorbed, the last only while cal2d still sends "
                  "it with its last input line): the core stalls and PDP_RDMA never finishes reading",
                  (long long)excess, c->pad_b, need, c->pad_r, lx, PDP_WDMA_ABSORB_ATOMS);
        return 1;
    }
    return 0;
}

/* Hardware-updated registers: no stalls modelled, no NaN/Inf in integers. */
static void pdp_update_status(struct dla_dev *d, const struct pdp_cfg *c)
{
    dla_reg_hw_set(d, NVDLA_PDP_D_PERF_WRITE_STALL_0, c->group, 0);
    dla_reg_hw_set(d, NVDLA_PDP_D_NAN_INPUT_NUM_0, c->group, 0);
    dla_reg_hw_set(d, NVDLA_PDP_D_INF_INPUT_NUM_0, c->group, 0);
    dla_reg_hw_set(d, NVDLA_PDP_D_NAN_OUTPUT_NUM_0, c->group, 0);
    if (!c->flying) {
        dla_reg_hw_set(d, NVDLA_PDP_RDMA_D_PERF_READ_STALL_0, c->group, 0);
    }
}

/* The cube PDP writes (is_write) or PDP_RDMA reads, strides included. */
static struct dla_strided pdp_cube(const struct pdp_cfg *c, int is_write)
{
    struct dla_strided s;
    memset(&s, 0, sizeof(s));
    s.port = is_write ? c->dst_port : c->src_port;
    s.base = is_write ? c->dst_base : c->src_base;
    s.line_bytes = (uint64_t)(is_write ? c->out_w : c->in_w) * c->atom_bytes;
    s.lines = is_write ? c->out_h : c->in_h;
    s.line_stride = is_write ? c->dst_line : c->src_line;
    s.surfaces = c->surfaces;
    s.surf_stride = is_write ? c->dst_surf : c->src_surf;
    s.batches = 1;
    return s;
}

/* Work: every line of every split read (splits overlap by the kernel),
 * every output line written, a kernel-width and a kernel-height pass per
 * element (pdp_run); then the extents of both cubes. */
static int pdp_check_work(struct dla_dev *d, const struct pdp_cfg *c)
{
    struct dla_work w;
    struct dla_strided in = pdp_cube(c, 0), out = pdp_cube(c, 1);
    dla_work_init(&w, "PDP");
    for (uint32_t i = 0; i < c->nsplit && !c->flying; i++) {
        struct dla_strided part = in;
        part.line_bytes = (uint64_t)c->split[i].in_w * c->atom_bytes;
        dla_work_read(&w, &part);
    }
    dla_work_write(&w, &out);
    uint64_t lanes = (uint64_t)c->surfaces * c->lanes;
    dla_work_ops(&w, (uint64_t)c->in_w * c->in_h * lanes * c->kw);
    dla_work_ops(&w, (uint64_t)c->out_w * c->out_h * lanes * c->kh);
    int rc = dla_work_check(d, &w);
    if (!rc && !c->flying) {
        rc = dla_strided_check(d, "PDP", "input cube", 0, &in);
    }
    if (!rc) {
        rc = dla_strided_check(d, "PDP", "output cube", 1, &out);
    }
    return rc;
}

int dla_pdp_flying(const struct dla_dev *d, unsigned group)
{
    return DLA_REG_FIELD(d, group, NVDLA_PDP_D_OPERATION_MODE_CFG_0, FLYING_MODE) ==
           NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_ON_FLYING;
}

/* The layer in `group` decoded, its work checked and its line-count model
 * stepped: from the device's decode cache when the same register values ran
 * before (decode_cache.h: the decode and pdp_lastline_init read nothing
 * else), else decoded now and kept.  *own is what the caller frees. */
static int pdp_layer_cfg(struct dla_dev *d, unsigned group, const struct pdp_cfg **out,
                         struct pdp_cfg **own)
{
    struct dla_conv_state *s = dla_dev_conv_state(d);
    struct dla_dcache *cache = s ? &s->pdp_dcache : NULL;
    const struct pdp_cfg *hit = cache ? dla_dcache_find(cache, d, group) : NULL;
    *own = NULL;
    *out = NULL;
    if (hit) {
        *out = hit;
        return pdp_check_work(d, hit);
    }
    struct pdp_cfg *c = malloc(sizeof(*c));
    if (c == NULL) {
        return dla_error(d, DLASIM_ERR_NOMEM, "PDP: out of host memory");
    }
    *own = c;
    *out = c;
    int rc = pdp_decode(d, group, c);
    if (!rc) {
        rc = pdp_check_work(d, c);
    }
    if (!rc) {
        pdp_lastline_init(c);
        if (cache && dla_dcache_keep(cache, c)) {
            *own = NULL;
        }
    }
    return rc;
}

int dla_pdp_execute(struct dla_dev *d, unsigned group, const struct dla_cube *in)
{
    const struct pdp_cfg *c = NULL;
    struct pdp_cfg *own = NULL;
    struct dla_cube planes = {0};
    struct pdp_work w;
    int rc = pdp_layer_cfg(d, group, &c, &own);

    if (rc) {
        goto out;
    }
    pdp_update_status(d, c);
    if (c->flying) {
        if (in == NULL || (in->data == NULL && in->atoms == NULL)) {
            rc = dla_error(d, DLASIM_ERR_PROG,
                           "PDP: D_OPERATION_MODE_CFG_0.FLYING_MODE=ON_FLYING but no SDP output "
                           "goes to PDP in this layer");
            goto out;
        }
        if (in->w != c->in_w || in->h != c->in_h || in->c < c->in_c) {
            rc = dla_error(d, DLASIM_ERR_PROG,
                           "PDP: input cube %ux%ux%u (D_DATA_CUBE_IN_*) does not match the "
                           "%ux%ux%u cube SDP sends on the fly",
                           c->in_w, c->in_h, c->in_c, in->w, in->h, in->c);
            goto out;
        }
    } else {
        in = NULL;
    }
    if (in && in->atoms && (c->bits != 8 || in->atom_lanes != c->lanes)) {
        /* SDP's int8 atoms where PDP takes other elements: as int32 values */
        planes = *in;
        planes.data = NULL;
        rc = dla_cube_planes(&planes);
        planes.atoms = NULL; /* in's */
        if (rc) {
            rc = dla_error(d, rc, "PDP: out of host memory for the cube SDP sends");
            goto out;
        }
        in = &planes;
    }
    rc = pdp_work_alloc(d, c, &w);
    if (rc) {
        goto out;
    }
    rc = pdp_ahead_init(d, c, in, &w);
    if (rc) {
        pdp_work_free(&w);
        goto out;
    }
    size_t beats_in = SIZE_MAX; /* cal1d's results (SIZE_MAX: as many as cal2d counts) */
    /* the faithful flush path agrees with the direct one wherever both apply
     * (checked once with every layer sent through it: all PDP traces of
     * NVIDIA's suite and tests/traces/rtl-graded pass); the direct one is
     * the fast path */
    int last_out;
    int flush = pdp_overstated_right(c) || pdp_bottom_surplus(c) ||
                c2d_lastline_extra(c, &last_out) > 0;
    rc = flush ? pdp_run_flush(d, c, in, &w, &beats_in)
         : pdp_whole_ave_eligible(c, in) ? pdp_run_whole_ave(d, c, in, &w)
         : in ? (in->atoms && pdp_pools_bytes(c) ? pdp_run_bytes(d, c, in, &w)
                                                 : pdp_run(d, c, in, &w))
         : pdp_bytes_eligible(d, c, &w) ? pdp_run_bytes(d, c, NULL, &w)
                                        : pdp_run(d, c, NULL, &w);
    if (!rc) {
        pdp_never_completes(d, c, beats_in);
    }
    pdp_work_free(&w);
out:
    free(planes.data);
    free(own);
    return rc;
}

/* ---- summary (src/timing/summary.h) ------------------------------------------ */

/* Input and output cubes, splits, kernel, strides and top padding. */
void dla_pdp_summarize(const struct dla_dev *d, unsigned g, struct dla_layer_summary *s)
{
    struct dla_pdp_summary *p = &s->pdp;
    s->has_pdp = 1;
    p->w = DLA_REG_FIELD(d, g, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, CUBE_IN_WIDTH) + 1ull;
    p->h = DLA_REG_FIELD(d, g, NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, CUBE_IN_HEIGHT) + 1ull;
    p->c = DLA_REG_FIELD(d, g, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, CUBE_IN_CHANNEL) + 1ull;
    p->ow = DLA_REG_FIELD(d, g, NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH_0, CUBE_OUT_WIDTH) + 1ull;
    p->oh = DLA_REG_FIELD(d, g, NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT_0, CUBE_OUT_HEIGHT) + 1ull;
    p->splits = DLA_REG_FIELD(d, g, NVDLA_PDP_D_OPERATION_MODE_CFG_0, SPLIT_NUM) + 1ull;
    p->kw = DLA_REG_FIELD(d, g, NVDLA_PDP_D_POOLING_KERNEL_CFG_0, KERNEL_WIDTH) + 1ull;
    p->kh = DLA_REG_FIELD(d, g, NVDLA_PDP_D_POOLING_KERNEL_CFG_0, KERNEL_HEIGHT) + 1ull;
    p->sw = DLA_REG_FIELD(d, g, NVDLA_PDP_D_POOLING_KERNEL_CFG_0, KERNEL_STRIDE_WIDTH) + 1ull;
    p->sh = DLA_REG_FIELD(d, g, NVDLA_PDP_D_POOLING_KERNEL_CFG_0, KERNEL_STRIDE_HEIGHT) + 1ull;
    p->pad_top = DLA_REG_FIELD(d, g, NVDLA_PDP_D_POOLING_PADDING_CFG_0, PAD_TOP);
    p->int16 = DLA_REG_FIELD(d, g, NVDLA_PDP_D_DATA_FORMAT_0, INPUT_DATA) ==
               NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA_INT16;
}
