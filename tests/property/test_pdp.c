/*
 * Property tests of PDP (pooling) and PDP_RDMA through the public API:
 * random layers are programmed with CSB writes, run, and the destination
 * memory is compared byte for byte with a plain-C reference written here
 * (straightforward loops over the padded kernel window, no code shared with
 * src/).  Also: refusals of programming the hardware cannot run.
 *
 * Facts the reference encodes (NVDLA RTL vmod/nvdla/pdp cal1d/cal2d):
 *   - average: per kernel line, the sum of the real elements, plus
 *     PAD_VALUE_nX (low B+3 bits, signed) when n columns are padding, kept to
 *     B+3 bits; lines summed; plus PAD_VALUE_nX * kernel_width (low B+6 bits,
 *     signed) when n lines are padding; x RECIP_KERNEL_WIDTH / 2^16 and
 *     x RECIP_KERNEL_HEIGHT / 2^16, each rounded half away from zero and
 *     kept to B+3 resp. B bits;
 *   - max/min over the real elements only;
 *   - whole atoms of M bytes (M int8 or M/2 int16 lanes) are pooled and written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/sdpref.h"
#include "common/testdev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
    return splitmix64_next(&rng_state);
}

/* Uniform in [lo, hi]. */
static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng_state, lo, hi);
}

/* ---- layer description ---------------------------------------------------- */

#define SRC_ADDR 0x80000000ull
#define DST_ADDR 0x80400000ull
#define DST_FILL 0xa5

struct layer {
    unsigned lanes;       /* elements per atom: Atomic-M bytes / element bytes */
    unsigned bits;        /* 8 or 16 */
    unsigned method;      /* 0 average, 1 max, 2 min */
    unsigned w, h, c;     /* input cube */
    unsigned kw, kh, sw, sh;
    unsigned pl, pr, pt, pb;
    uint32_t pad_reg[8];  /* PAD_VALUE_nX fields, [1..7] */
    uint32_t recip_w, recip_h;
    unsigned ow, oh;
    unsigned nsplit;
    unsigned in_first, in_mid, in_last;    /* split input widths */
    unsigned out_first, out_mid, out_last; /* split output widths */
    uint64_t src_line, src_surf, dst_line, dst_surf;
    unsigned group;
    unsigned rdma_h_extra; /* PDP_RDMA height minus PDP height (0 when consistent) */
    int onfly;             /* input from SDP (pass-through) instead of PDP_RDMA */
    uint32_t cube_w_reg[3]; /* split mode: CUBE_IN_WIDTH (PDP, PDP_RDMA), CUBE_OUT_WIDTH fields */
};

static unsigned ebytes(const struct layer *L)
{
    return L->bits / 8;
}

static unsigned surfaces(const struct layer *L)
{
    return (L->c + L->lanes - 1) / L->lanes;
}

static size_t src_size(const struct layer *L)
{
    return (size_t)(surfaces(L) * L->src_surf);
}

static size_t dst_size(const struct layer *L)
{
    return (size_t)(surfaces(L) * L->dst_surf);
}

/* Value of the element at lane position (s, l), line y, column x. */
static int64_t in_elem(const struct layer *L, const uint8_t *src, unsigned s, unsigned y,
                       unsigned x, unsigned l)
{
    size_t off = (size_t)(s * L->src_surf + y * L->src_line) +
                 ((size_t)x * L->lanes + l) * ebytes(L);
    if (L->bits == 8) {
        return (int8_t)src[off];
    }
    return (int16_t)(uint16_t)(src[off] | (src[off + 1] << 8));
}

/* Two's complement value of the low `bits` bits of v. */
static int64_t low_bits(int64_t v, unsigned bits)
{
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    uint64_t u = (uint64_t)v & mask;
    if (u >> (bits - 1)) {
        return (int64_t)u - (int64_t)((uint64_t)1 << bits);
    }
    return (int64_t)u;
}

/* Fixed-point 16.16 value to an n-bit integer as the datapath does. */
static int64_t hw_round(int64_t p, unsigned n)
{
    int64_t r;
    if (p >= 0) {
        int64_t ip = p / 65536;
        r = (ip % ((int64_t)1 << (n - 1))) + ((p % 65536) >= 32768 ? 1 : 0);
    } else {
        int64_t q = -p;
        int64_t ip = -(q / 65536) - ((q % 65536) ? 1 : 0); /* floor */
        int64_t f = p - ip * 65536;
        r = ip + (f > 32768 ? 1 : 0);
    }
    return low_bits(r, n);
}

/* Reference output element: output (s, lane l), line oy, column ox. */
static int64_t ref_out(const struct layer *L, const uint8_t *src, unsigned s, unsigned l,
                       unsigned oy, unsigned ox)
{
    int y0 = (int)(oy * L->sh) - (int)L->pt;
    int x0 = (int)(ox * L->sw) - (int)L->pl;
    int64_t best = 0;
    int have = 0;
    int64_t total = 0;
    unsigned real_lines = 0;
    for (int y = y0; y < y0 + (int)L->kh; y++) {
        if (y < 0 || y >= (int)L->h) {
            continue;
        }
        real_lines++;
        int64_t line_sum = 0;
        unsigned real_cols = 0;
        for (int x = x0; x < x0 + (int)L->kw; x++) {
            if (x < 0 || x >= (int)L->w) {
                continue;
            }
            int64_t v = in_elem(L, src, s, (unsigned)y, (unsigned)x, l);
            real_cols++;
            line_sum += v;
            if (!have || (L->method == 1 && v > best) || (L->method == 2 && v < best)) {
                best = v;
            }
            have = 1;
        }
        if (real_cols < L->kw) {
            int64_t pad = low_bits((int64_t)L->pad_reg[L->kw - real_cols], L->bits + 3);
            line_sum = low_bits(line_sum + pad, L->bits + 3);
        }
        total += line_sum;
    }
    if (L->method != 0) {
        return best;
    }
    if (real_lines < L->kh) {
        int64_t pad19 = low_bits((int64_t)L->pad_reg[L->kh - real_lines], 19);
        total += low_bits(pad19 * (int64_t)L->kw, L->bits + 6);
    }
    int64_t hm = hw_round(low_bits(total * (int64_t)L->recip_w, L->bits + 23), L->bits + 3);
    return hw_round(low_bits(hm * (int64_t)L->recip_h, L->bits + 20), L->bits);
}

/* Expected destination memory (dst_size bytes, untouched bytes DST_FILL). */
static uint8_t *ref_dst(const struct layer *L, const uint8_t *src)
{
    uint8_t *dst = malloc(dst_size(L));
    assert_non_null(dst);
    memset(dst, DST_FILL, dst_size(L));
    for (unsigned s = 0; s < surfaces(L); s++) {
        for (unsigned oy = 0; oy < L->oh; oy++) {
            for (unsigned ox = 0; ox < L->ow; ox++) {
                for (unsigned l = 0; l < L->lanes; l++) {
                    int64_t v = ref_out(L, src, s, l, oy, ox);
                    size_t off = (size_t)(s * L->dst_surf + oy * L->dst_line) +
                                 ((size_t)ox * L->lanes + l) * ebytes(L);
                    dst[off] = (uint8_t)((uint64_t)v & 0xff);
                    if (L->bits == 16) {
                        dst[off + 1] = (uint8_t)(((uint64_t)v >> 8) & 0xff);
                    }
                }
            }
        }
    }
    return dst;
}

/* ---- programming ----------------------------------------------------------- */

/* D_PARTIAL_WIDTH_IN/OUT: first, last and mid widths (0 without split). */
static uint32_t partial(const struct layer *L, unsigned first, unsigned mid, unsigned last)
{
    if (L->nsplit == 1) {
        return 0;
    }
    return (first - 1) | ((last - 1) << 10) | ((mid - 1) << 20);
}

static uint32_t data_format(const struct layer *L)
{
    return L->bits == 8 ? NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA_INT8
                        : NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA_INT16;
}

/* PDP's registers; its input from PDP_RDMA or, `flying`, from SDP. */
static void program_pdp(struct dlasim_dev *dev, const struct layer *L, int flying)
{
    uint32_t flying_mode = flying ? NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_ON_FLYING
                                  : NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_OFF_FLYING;
    /* In split mode the hardware ignores the cube widths (it uses the
     * partial widths): random_split may put anything there. */
    wr(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, L->nsplit > 1 ? L->cube_w_reg[0] : L->w - 1);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, L->h - 1);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, L->c - 1);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH_0, L->nsplit > 1 ? L->cube_w_reg[2] : L->ow - 1);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT_0, L->oh - 1);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL_0, L->c - 1);
    wr(dev, NVDLA_PDP_D_OPERATION_MODE_CFG_0,
       L->method | (flying_mode << 4) | ((L->nsplit - 1) << 8));
    wr(dev, NVDLA_PDP_D_PARTIAL_WIDTH_IN_0, partial(L, L->in_first, L->in_mid, L->in_last));
    wr(dev, NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0, partial(L, L->out_first, L->out_mid, L->out_last));
    wr(dev, NVDLA_PDP_D_POOLING_KERNEL_CFG_0,
       (L->kw - 1) | ((L->kh - 1) << 8) | ((L->sw - 1) << 16) | ((L->sh - 1) << 20));
    wr(dev, NVDLA_PDP_D_RECIP_KERNEL_WIDTH_0, L->recip_w);
    wr(dev, NVDLA_PDP_D_RECIP_KERNEL_HEIGHT_0, L->recip_h);
    wr(dev, NVDLA_PDP_D_POOLING_PADDING_CFG_0, L->pl | (L->pt << 4) | (L->pr << 8) | (L->pb << 12));
    static const uint32_t pad_value[8] = {
        0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_1_CFG_0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_2_CFG_0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_3_CFG_0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_4_CFG_0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_5_CFG_0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_6_CFG_0,
        NVDLA_PDP_D_POOLING_PADDING_VALUE_7_CFG_0,
    };
    for (unsigned n = 1; n <= 7; n++) {
        wr(dev, pad_value[n], L->pad_reg[n]);
    }
    wr(dev, NVDLA_PDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)DST_ADDR);
    wr(dev, NVDLA_PDP_D_DST_BASE_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_PDP_D_DST_LINE_STRIDE_0, (uint32_t)L->dst_line);
    wr(dev, NVDLA_PDP_D_DST_SURFACE_STRIDE_0, (uint32_t)L->dst_surf);
    wr(dev, NVDLA_PDP_D_DST_RAM_CFG_0, NVDLA_PDP_D_DST_RAM_CFG_0_DST_RAM_TYPE_MC);
    wr(dev, NVDLA_PDP_D_DATA_FORMAT_0, data_format(L));
}

/* PDP_RDMA reads the cube from memory for PDP. */
static void program(struct dlasim_dev *dev, const struct layer *L)
{
    wr(dev, NVDLA_PDP_RDMA_S_POINTER_0, L->group);
    wr(dev, NVDLA_PDP_S_POINTER_0, L->group);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_CUBE_IN_WIDTH_0, L->nsplit > 1 ? L->cube_w_reg[1] : L->w - 1);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_CUBE_IN_HEIGHT_0, L->h - 1 + L->rdma_h_extra);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_CUBE_IN_CHANNEL_0, L->c - 1);
    wr(dev, NVDLA_PDP_RDMA_D_FLYING_MODE_0, NVDLA_PDP_RDMA_D_FLYING_MODE_0_FLYING_MODE_OFF_FLYING);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_LOW_0, (uint32_t)SRC_ADDR);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_LINE_STRIDE_0, (uint32_t)L->src_line);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_SURFACE_STRIDE_0, (uint32_t)L->src_surf);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_RAM_CFG_0, NVDLA_PDP_RDMA_D_SRC_RAM_CFG_0_SRC_RAM_TYPE_MC);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_FORMAT_0, data_format(L));
    wr(dev, NVDLA_PDP_RDMA_D_OPERATION_MODE_CFG_0, L->nsplit - 1);
    wr(dev, NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG_0, (L->kw - 1) | ((L->sw - 1) << 4));
    wr(dev, NVDLA_PDP_RDMA_D_POOLING_PADDING_CFG_0, L->pl);
    wr(dev, NVDLA_PDP_RDMA_D_PARTIAL_WIDTH_IN_0, partial(L, L->in_first, L->in_mid, L->in_last));
    program_pdp(dev, L, 0);
    wr(dev, NVDLA_PDP_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_PDP_RDMA_D_OP_ENABLE_0, 1);
}

/* ---- random layers ---------------------------------------------------------- */

/* Output lines the line buffer must hold -> widest output (in atoms).
 * ref: cal2d buffer_lines_num / bank_merge_num (16 atoms per bank). */
static unsigned max_out_width(unsigned kh, unsigned sh)
{
    unsigned lines = sh >= kh ? 1 : sh == 1 ? kh : sh == 2 ? (kh + 1) / 2 : sh == 3 ? (kh <= 6 ? 2 : 3) : 2;
    unsigned banks = lines == 1 ? 8 : lines == 2 ? 4 : lines <= 4 ? 2 : 1;
    return 16 * banks;
}

static unsigned windows(unsigned pl, unsigned n, unsigned pr, unsigned k, unsigned s)
{
    return (pl + n + pr - k) / s + 1;
}

/* cal2d starts the windows that begin in the top padding at the surface start
 * (NV_NVDLA_PDP_CORE_cal2d.v init_unit2d_set: padding_stride_num + 1 of them);
 * when the output has no more lines than that, the one after the last is
 * started too and cal2d sends it, partial, at the surface's last line: lines
 * PDP_WDMA does not count, which shift the next surface or hang the RTL
 * (rg_pdp_33x5x23_k8x8s8x3_max_017; src/sim/nvdla/pdp.c).  The ideal
 * reference does not apply. */
static int top_window_left(unsigned pt, unsigned sh, unsigned oh)
{
    unsigned started = sh == 1 ? pt : sh == 2 ? pt / 2 : sh == 3 ? (pt >= 6 ? 2 : pt >= 3 ? 1 : 0)
                                                             : (pt > sh - 1 ? 1 : 0);
    return oh <= started;
}

/* A right/bottom padding beyond what the last window needs that changes the
 * RTL's line-end / surface-end flush count (PAD / stride, or any excess for
 * inputs shorter than the kernel): the RTL then emits stale results (see
 * src/sim/nvdla/pdp.c), which the ideal reference here does not model; those
 * programmings are graded on the RTL in tests/traces/rtl-graded instead. */
static int overstated(unsigned pl, unsigned n, unsigned pr, unsigned k, unsigned s, unsigned outs,
                      int split)
{
    unsigned end = (outs - 1) * s + k - pl;
    unsigned need = end > n ? end - n : 0;
    int small = n - 1 < 8 && n - 1 + pl < k - 1;
    /* split width: the last split decides "shorter than the kernel" */
    return pr > need && (pr / s != need / s || small || split);
}

/* Driver-style average parameters: pad value per element, recips 2^16/k. */
static void random_average(struct layer *L)
{
    int32_t pad_elem = (int32_t)rnd(0, 3) == 0 ? 0 : (int32_t)low_bits(splitmix64(), L->bits);
    for (unsigned n = 1; n <= 7; n++) {
        L->pad_reg[n] = (uint32_t)((int64_t)pad_elem * n) & 0x7ffffu;
    }
    L->recip_w = (65536u + L->kw / 2) / L->kw;
    L->recip_h = (65536u + L->kh / 2) / L->kh;
    if (rnd(0, 7) == 0) {
        /* Out-of-range programming: results wrap as the datapath's widths do. */
        L->recip_w = rnd(0, 0x1ffff);
        L->recip_h = rnd(0, 0x1ffff);
        for (unsigned n = 1; n <= 7; n++) {
            L->pad_reg[n] = rnd(0, 0x7ffff);
        }
    }
}

/* A random layer that fits a line buffer; `split` asks for a wide input. */
/* random_geometry draws layers of 32 KB or more: 64-160 x 40-120, 16-48
 * channels (pdp_bytes_team's; max and min pooling). */
static int big_layers;

static int random_geometry(struct layer *L, unsigned lanes, unsigned bits, int split)
{
    memset(L, 0, sizeof(*L));
    L->lanes = lanes;
    L->bits = bits;
    L->method = rnd(0, 2);
    L->kw = rnd(1, 8);
    L->kh = rnd(1, 8);
    L->sw = rnd(1, rnd(0, 3) ? 4 : 16);
    L->sh = rnd(1, rnd(0, 3) ? 4 : 16);
    L->pl = rnd(0, L->kw - 1);
    L->pr = rnd(0, L->kw - 1);
    L->pt = rnd(0, L->kh - 1);
    L->pb = rnd(0, L->kh - 1);
    L->method = big_layers ? rnd(1, 2) : L->method;
    for (unsigned tries = 0;; tries++) {
        if (big_layers && tries == 64) {
            return 0; /* (a line buffer too narrow for this kernel's outputs: another) */
        }
        L->w = big_layers ? rnd(64, 160) : rnd(1, split ? 40 : 24);
        L->h = big_layers ? rnd(40, 120) : rnd(1, 12);
        if (L->pl + L->w + L->pr < L->kw || L->pt + L->h + L->pb < L->kh) {
            continue;
        }
        L->ow = windows(L->pl, L->w, L->pr, L->kw, L->sw);
        L->oh = windows(L->pt, L->h, L->pb, L->kh, L->sh);
        /* every window needs a real element: the last ones must reach the data */
        if ((L->ow - 1) * L->sw >= L->pl + L->w || (L->oh - 1) * L->sh >= L->pt + L->h) {
            continue;
        }
        if (overstated(L->pl, L->w, L->pr, L->kw, L->sw, L->ow, split) ||
            overstated(L->pt, L->h, L->pb, L->kh, L->sh, L->oh, 0) ||
            top_window_left(L->pt, L->sh, L->oh)) {
            continue;
        }
        if (!split && L->ow > max_out_width(L->kh, L->sh)) {
            continue;
        }
        if (split && L->ow < 2) {
            continue;
        }
        break;
    }
    L->c = big_layers ? lanes * rnd(2, 6) : rnd(1, 3 * lanes);
    if (L->method == 0) {
        random_average(L);
    } else {
        L->recip_w = rnd(0, 0x1ffff); /* not used by max/min */
        L->recip_h = rnd(0, 0x1ffff);
        for (unsigned n = 1; n <= 7; n++) {
            L->pad_reg[n] = rnd(0, 0x7ffff);
        }
    }
    L->nsplit = 1;
    return 1;
}

/* Driver-style split of the output into first/mid/last widths and the input
 * widths that produce them (window j starts at input column j*sw - pl).
 * Returns 0 if no split was found for this layer. */
static int random_split(struct layer *L)
{
    unsigned lbuf = max_out_width(L->kh, L->sh);
    for (unsigned attempt = 0; attempt < 64; attempt++) {
        unsigned n = rnd(2, L->ow < 6 ? L->ow : 6);
        unsigned of = rnd(1, L->ow - (n - 1));
        unsigned rest = L->ow - of;
        unsigned om = n > 2 ? rnd(1, (rest - 1) / (n - 2)) : 1;
        unsigned ol = n > 2 ? rest - (n - 2) * om : rest;
        int in_first = (int)((of - 1) * L->sw + L->kw) - (int)L->pl;
        int in_mid = (int)(om * L->sw);
        int in_last = (int)L->w - in_first - (int)(n - 2) * in_mid;
        int ov = (int)L->kw - (int)L->sw;
        if (of > lbuf || om > lbuf || ol > lbuf || of * L->sw < L->pl || in_last < 1 ||
            in_last + ov < 1 || (n > 2 && in_mid + ov < 1) || in_first > 1024 ||
            in_mid > 1024 || in_last > 1024) {
            continue;
        }
        L->nsplit = n;
        L->out_first = of;
        L->out_mid = n > 2 ? om : rnd(1, 1024); /* unused with two splits */
        L->out_last = ol;
        L->in_first = (unsigned)in_first;
        L->in_mid = n > 2 ? (unsigned)in_mid : rnd(1, 1024);
        L->in_last = (unsigned)in_last;
        L->cube_w_reg[0] = L->w - 1;
        L->cube_w_reg[1] = L->w - 1;
        L->cube_w_reg[2] = L->ow - 1;
        if (rnd(0, 3) == 0) {
            for (unsigned k = 0; k < 3; k++) {
                L->cube_w_reg[k] = rnd(0, 0x1fff);
            }
        }
        return 1;
    }
    return 0;
}

/* Strides and sizes of the memory surfaces, with random slack. */
static void random_strides(struct layer *L)
{
    unsigned atom = L->lanes * ebytes(L);
    L->src_line = (uint64_t)(L->w + rnd(0, 3)) * atom;
    L->src_surf = L->src_line * (L->h + rnd(0, 2));
    L->dst_line = (uint64_t)(L->ow + rnd(0, 3)) * atom;
    L->dst_surf = L->dst_line * (L->oh + rnd(0, 2));
}

/* A random layer (split width if asked). */
static void random_layer(struct layer *L, unsigned lanes, unsigned bits, int split)
{
    while (!random_geometry(L, lanes, bits, split) || (split && !random_split(L))) {
    }
    random_strides(L);
}

/* Input bytes: 0 = random, 1 = only the extreme values of the element type
 * (drives the datapath's intermediate widths to their limits). */
static int fill_extremes;

static void program_onfly(struct dlasim_dev *dev, const struct layer *L);

/* ---- running ------------------------------------------------------------------ */

/* Run one layer and compare the whole destination region with the reference. */
static void run_and_check(struct dlasim_dev *dev, const struct layer *L, unsigned iter)
{
    size_t ssz = src_size(L);
    size_t dsz = dst_size(L);
    uint8_t *src = malloc(ssz);
    uint8_t *got = malloc(dsz);
    assert_non_null(src);
    assert_non_null(got);
    splitmix64_fill(&rng_state, src, ssz);
    if (fill_extremes) {
        size_t eb = ebytes(L);
        for (size_t i = 0; i + eb <= ssz; i += eb) {
            int neg = (int)(splitmix64() & 1);
            src[i + eb - 1] = neg ? 0x80 : 0x7f;
            if (eb == 2) {
                src[i] = neg ? 0x00 : 0xff;
            }
        }
    }
    memset(got, DST_FILL, dsz);
    mem_wr(dev, SRC_ADDR, src, ssz);
    mem_wr(dev, DST_ADDR, got, dsz);

    if (L->onfly) {
        program_onfly(dev, L);
    } else {
        program(dev, L);
    }
    int rc = dlasim_run(dev);
    if (rc != 0) {
        fail_msg("iter %u: dlasim_run = %d (%s)", iter, rc, dlasim_last_error(dev));
    }
    mem_rd(dev, DST_ADDR, got, dsz);

    uint8_t *want = ref_dst(L, src);
    for (size_t i = 0; i < dsz; i++) {
        if (got[i] != want[i]) {
            fail_msg("iter %u: byte %zu: got 0x%02x want 0x%02x (%ux%ux%u k%ux%u s%ux%u "
                     "pad l%u r%u t%u b%u method %u bits %u splits %u recip %#x/%#x)",
                     iter, i, got[i], want[i], L->w, L->h, L->c, L->kw, L->kh, L->sw, L->sh,
                     L->pl, L->pr, L->pt, L->pb, L->method, L->bits, L->nsplit, L->recip_w,
                     L->recip_h);
        }
    }
    free(want);
    free(src);
    free(got);
}

static void random_layers(const char *config, const char *const *ovr, size_t novr, unsigned bits,
                          int split, unsigned count, uint64_t seed)
{
    struct dlasim_dev *dev = tdev_new(config, ovr, novr, 1);
    /* an atom is NVDLA_MEMORY_ATOMIC_SIZE bytes: M int8 or M/2 int16 lanes */
    uint32_t lanes = param(dev, "NVDLA_MEMORY_ATOMIC_SIZE") / (bits / 8);
    rng_state = seed;
    for (unsigned i = 0; i < count; i++) {
        struct layer L;
        random_layer(&L, lanes, bits, split);
        L.group = i & 1; /* the consumer pointer alternates between the groups */
        run_and_check(dev, &L, i);
    }
    dlasim_destroy(dev);
}

RUN_TEST(test_random_nv_small, random_layers, "nv_small", NULL, 0, 8, 0, 400, 0x5eed0001u)
RUN_TEST(test_random_nv_small_256, random_layers, "nv_small_256", NULL, 0, 8, 0, 150, 0x5eed0002u)
RUN_TEST(test_random_split, random_layers, "nv_small", NULL, 0, 8, 1, 300, 0x5eed0003u)

static const char *const int16_overrides[] = {
    "NVDLA_FEATURE_DATA_TYPE=INT8|INT16",
    "NVDLA_CBUF_BANK_WIDTH=16",
};

static void test_random_int16(void **state)
{
    (void)state;
    random_layers("nv_small", int16_overrides, 2, 16, 0, 100, 0x5eed0004u);
    random_layers("nv_small", int16_overrides, 2, 16, 1, 50, 0x5eed0005u);
}

/* Large kernels on extreme inputs with out-of-range padding values and
 * reciprocals up to 2^17 - 1: every intermediate reaches the width at which
 * the datapath keeps it. */
static void extreme_layers(const char *const *ovr, size_t novr, unsigned bits, uint64_t seed)
{
    struct dlasim_dev *dev = tdev_new("nv_small", ovr, novr, 1);
    rng_state = seed;
    fill_extremes = 1;
    for (unsigned i = 0; i < 150; i++) {
        struct layer L;
        do {
            random_layer(&L, 8 / (bits / 8), bits, 0); /* 8-byte atoms */
        } while (L.kw < 6 || L.kh < 6);
        L.method = 0;
        L.recip_w = rnd(0x8000, 0x1ffff);
        L.recip_h = rnd(0x8000, 0x1ffff);
        for (unsigned n = 1; n <= 7; n++) {
            L.pad_reg[n] = rnd(0, 0x7ffff);
        }
        L.group = i & 1;
        run_and_check(dev, &L, i);
    }
    fill_extremes = 0;
    dlasim_destroy(dev);
}

static void test_extreme_values(void **state)
{
    (void)state;
    extreme_layers(NULL, 0, 8, 0x5eed0009u);
    extreme_layers(int16_overrides, 2, 16, 0x5eed000au);
}

/* A layer whose output is as wide as the line buffer allows (stride >= kernel
 * height: all 8 banks hold one output line, 128 atoms). */
static void test_widest_output(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    struct layer L;
    rng_state = 0x5eed0006u;
    random_layer(&L, 8, 8, 0);
    L.method = 0;
    L.kw = 2;
    L.sw = 2;
    L.pl = L.pr = 0;
    L.kh = 3;
    L.sh = 3;
    L.pt = 1;
    L.pb = 0;
    L.w = 256;
    L.h = 5;
    L.c = 9;
    L.ow = 128;
    L.oh = 2;
    random_average(&L);
    L.src_line = (uint64_t)L.w * 8;
    L.src_surf = L.src_line * L.h;
    L.dst_line = (uint64_t)L.ow * 8;
    L.dst_surf = L.dst_line * L.oh;
    run_and_check(dev, &L, 0);
    dlasim_destroy(dev);
}

/* Max and min pooling of int8 surfaces whose lines are contiguous in memory
 * (the layers PDP pools straight from their bytes), many of them 2x2
 * stride 2 without left padding (the common pooling, taken two output atoms
 * at a time): random sizes, the other parameters as random_layer draws them. */
static void pool_bytes_layers(const char *config, unsigned count, uint64_t seed)
{
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 1);
    const unsigned lanes = param(dev, "NVDLA_MEMORY_ATOMIC_SIZE");
    rng_state = seed;
    for (unsigned i = 0; i < count; i++) {
        struct layer L;
        int want_2x2 = i % 2 == 0;
        do {
            random_layer(&L, lanes, 8, 0);
        } while (L.method == 0 || (want_2x2 && (L.kw != 2 || L.sw != 2 || L.pl != 0)));
        L.src_line = (uint64_t)L.w * lanes;
        L.src_surf = L.src_line * (L.h + rnd(0, 2));
        L.group = i & 1;
        run_and_check(dev, &L, i);
    }
    dlasim_destroy(dev);
}

static void test_pool_bytes(void **state)
{
    (void)state;
    pool_bytes_layers("nv_small", 200, 0x5eed000bu);
    pool_bytes_layers("nv_small_256", 60, 0x5eed000cu);
}

/* Max and min pooling of 32 KB or more on a device of two threads, whose
 * surfaces the team pools (pdp.c pdp_bytes_team): from memory, the rows
 * lent page by page (surfaces of 40-150 KB: rows across 64 KB pages), and
 * on the fly from SDP; every output byte against the reference. */
static void run_on_the_fly(struct dlasim_dev *dev, struct layer *L, unsigned iter);

static void test_pool_bytes_team(void **state)
{
    (void)state;
    rng_state = 0x5eed0011u;
    big_layers = 1;
    /* (a device each: the two paths move different units' pointers) */
    for (int fly = 0; fly <= 1; fly++) {
        struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 2);
        for (unsigned i = 0; i < 12; i++) {
            struct layer L;
            random_layer(&L, 8, 8, 0);
            if (fly) {
                run_on_the_fly(dev, &L, i);
                continue;
            }
            L.src_line = (uint64_t)L.w * 8;
            L.src_surf = L.src_line * (L.h + rnd(0, 2));
            L.group = i & 1;
            run_and_check(dev, &L, i);
        }
        dlasim_destroy(dev);
    }
    big_layers = 0;
}

/* ---- on the fly from SDP ------------------------------------------------------ */

/* SDP reads the cube from memory and passes it through unchanged (every
 * stage bypassed, converter scale 1) to PDP on the fly. */
static void program_onfly(struct dlasim_dev *dev, const struct layer *L)
{
    wr(dev, NVDLA_SDP_RDMA_S_POINTER_0, L->group);
    wr(dev, NVDLA_SDP_S_POINTER_0, L->group);
    wr(dev, NVDLA_PDP_S_POINTER_0, L->group);

    sdp_program_src(dev, L->w, L->h, L->c, SRC_ADDR, (uint32_t)L->src_line,
                    (uint32_t)L->src_surf);
    wr(dev, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, 1); /* BRDMA_DISABLE */
    wr(dev, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, 1);
    wr(dev, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, 1);
    wr(dev, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_OFF);

    wr(dev, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, L->w - 1);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, L->h - 1);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, L->c - 1);
    wr(dev, NVDLA_SDP_D_DP_BS_CFG_0, 0x53); /* BYPASS, ALU_BYPASS, MUL_BYPASS, RELU_BYPASS */
    wr(dev, NVDLA_SDP_D_DP_BN_CFG_0, 0x53);
    wr(dev, NVDLA_SDP_D_DP_EW_CFG_0, 0x53);
    wr(dev, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST_PDP << NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST__SHIFT);
    wr(dev, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(dev, NVDLA_SDP_D_DATA_FORMAT_0, 0);
    wr(dev, NVDLA_SDP_D_CVT_SCALE_0, 1);
    wr(dev, NVDLA_SDP_D_CVT_SHIFT_0, 0);
    wr(dev, NVDLA_SDP_D_CVT_OFFSET_0, 0);

    program_pdp(dev, L, 1);
    /* PDP first, as NVDLA's own traces do: it waits for SDP's data. */
    wr(dev, NVDLA_PDP_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_SDP_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1);
}

/* L (group by iteration) run with SDP passing its input to PDP on the fly;
 * SDP_RDMA reads whole lines. */
static void run_on_the_fly(struct dlasim_dev *dev, struct layer *L, unsigned iter)
{
    L->src_surf = L->src_line * L->h;
    L->dst_surf = L->dst_line * L->oh;
    L->group = iter & 1;
    L->onfly = 1;
    run_and_check(dev, L, iter);
}

/* SDP pass-through feeding PDP: the pooled result is that of the cube in
 * memory.  Channels are whole atoms, so every lane PDP pools comes from SDP. */
static void test_on_the_fly(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    rng_state = 0x5eed000bu;
    for (unsigned i = 0; i < 80; i++) {
        struct layer L;
        random_layer(&L, 8, 8, 0);
        L.c = 8 * rnd(1, 3);
        run_on_the_fly(dev, &L, i);
    }
    dlasim_destroy(dev);
}

/* A global average pool on the fly: one window over the whole plane, no
 * padding (pdp.c pdp_run_whole_ave sums each surface at once), with
 * in-range and out-of-range reciprocals, and extreme inputs. */
static void test_on_the_fly_whole_plane(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    rng_state = 0x5eed00a1u;
    for (unsigned i = 0; i < 120; i++) {
        struct layer L;
        memset(&L, 0, sizeof(L));
        L.lanes = 8;
        L.bits = 8;
        L.method = 0;
        do { /* (SDP reads a 1x1 cube's surfaces as packed atoms: sdp.c) */
            L.w = L.kw = rnd(1, 8);
            L.h = L.kh = rnd(1, 8);
        } while (L.w * L.h < 2);
        L.sw = rnd(1, 16);
        L.sh = rnd(1, 16);
        L.ow = L.oh = 1;
        L.nsplit = 1;
        L.c = 8 * rnd(1, 4);
        random_average(&L);
        random_strides(&L);
        fill_extremes = i % 4 == 3;
        run_on_the_fly(dev, &L, i);
    }
    fill_extremes = 0;
    dlasim_destroy(dev);
}

/* ---- refusals ----------------------------------------------------------------- */

static void base_layer(struct layer *L);

/* Program L, run: DLASIM_ERR_PROG naming `reg`, and the layer completes
 * (its group's done bit is set and nothing stays enabled).  For group 1 a
 * good layer runs first in group 0. */
static void expect_refusal(const struct layer *L, const char *reg)
{
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    if (L->group == 1) {
        struct layer good;
        base_layer(&good);
        run_and_check(dev, &good, 0);
        wr(dev, NVDLA_GLB_S_INTR_STATUS_0, 0xffffffffu);
    }
    program(dev, L);
    expect_error(dev, dlasim_run(dev), DLASIM_ERR_PROG, reg);
    uint32_t done = L->group ? NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS1__MASK
                             : NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK;
    assert_true(rd(dev, NVDLA_GLB_S_INTR_STATUS_0) & done);
    assert_false(dlasim_busy(dev, NULL, 0));
    dlasim_destroy(dev);
}

static void base_layer(struct layer *L)
{
    rng_state = 0x5eed0007u;
    random_layer(L, 8, 8, 0);
    L->method = 1;
    L->kw = L->kh = 3;
    L->sw = L->sh = 1;
    L->pl = L->pr = L->pt = L->pb = 1;
    L->w = L->h = 6;
    L->c = 8;
    L->ow = L->oh = 6;
    L->src_line = 6 * 8;
    L->src_surf = 6 * 6 * 8;
    L->dst_line = 6 * 8;
    L->dst_surf = 6 * 6 * 8;
    L->group = 0;
}

static void test_refuse_kernel_too_big(void **state)
{
    (void)state;
    struct layer L;
    base_layer(&L);
    L.kw = 9; /* field 8: beyond KERNEL_WIDTH_8 */
    expect_refusal(&L, "KERNEL_WIDTH");
    base_layer(&L);
    L.kh = 10;
    L.group = 1;
    expect_refusal(&L, "KERNEL_HEIGHT");
}

static void test_refuse_padding_only_window(void **state)
{
    (void)state;
    struct layer L;
    base_layer(&L);
    L.kw = 2;
    L.pl = 2; /* first window is padding only */
    L.pr = 0;
    L.ow = windows(L.pl, L.w, L.pr, L.kw, L.sw);
    expect_refusal(&L, "PAD_LEFT");
    base_layer(&L);
    L.kh = 2;
    L.pt = 0;
    L.pb = 2; /* last window is padding only */
    L.oh = windows(L.pt, L.h, L.pb, L.kh, L.sh);
    expect_refusal(&L, "PAD_BOTTOM");
}

static void test_refuse_output_size(void **state)
{
    (void)state;
    struct layer L;
    base_layer(&L);
    L.ow = 5;
    expect_refusal(&L, "D_DATA_CUBE_OUT_WIDTH");
    base_layer(&L);
    L.oh = 7;
    expect_refusal(&L, "D_DATA_CUBE_OUT_HEIGHT");
}

static void test_refuse_line_buffer(void **state)
{
    (void)state;
    struct layer L;
    base_layer(&L);
    /* kernel height 8, stride 1: every bank holds its own line, 16 atoms each */
    L.kh = 8;
    L.pt = L.pb = 0;
    L.h = 8;
    L.oh = 1;
    L.kw = 1;
    L.pl = L.pr = 0;
    L.w = 17;
    L.ow = 17;
    L.src_line = L.dst_line = 17 * 8;
    L.src_surf = L.src_line * 8;
    L.dst_surf = L.dst_line;
    expect_refusal(&L, "D_DATA_CUBE_OUT_WIDTH");
}

static void test_refuse_split_geometry(void **state)
{
    (void)state;
    struct layer L;
    rng_state = 0x5eed0008u;
    random_layer(&L, 8, 8, 1);
    L.out_first += 1; /* no longer what the first split's input gives */
    if (L.nsplit == 2) {
        L.out_last -= (L.out_last > 1) ? 1 : 0;
    }
    expect_refusal(&L, "D_PARTIAL_WIDTH_OUT");
}

static void test_refuse_rdma_mismatch(void **state)
{
    (void)state;
    struct layer L;
    base_layer(&L);
    L.rdma_h_extra = 1; /* PDP_RDMA would fetch one line more than PDP pools */
    expect_refusal(&L, "D_DATA_CUBE_IN_HEIGHT");
}

static void test_refuse_int16_on_int8_config(void **state)
{
    (void)state;
    struct layer L;
    base_layer(&L);
    L.bits = 16;
    L.src_line *= 2;
    L.src_surf *= 2;
    L.dst_line *= 2;
    L.dst_surf *= 2;
    expect_refusal(&L, "INPUT_DATA");
}

/* The hardware-updated counters of the group read 0 after a layer. */
static void test_status_registers(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    struct layer L;
    base_layer(&L);
    run_and_check(dev, &L, 0);
    wr(dev, NVDLA_PDP_S_POINTER_0, L.group);
    assert_int_equal(rd(dev, NVDLA_PDP_D_PERF_WRITE_STALL_0), 0);
    assert_int_equal(rd(dev, NVDLA_PDP_D_NAN_INPUT_NUM_0), 0);
    dlasim_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_nv_small),
        cmocka_unit_test(test_random_nv_small_256),
        cmocka_unit_test(test_random_split),
        cmocka_unit_test(test_random_int16),
        cmocka_unit_test(test_extreme_values),
        cmocka_unit_test(test_widest_output),
        cmocka_unit_test(test_pool_bytes),
        cmocka_unit_test(test_pool_bytes_team),
        cmocka_unit_test(test_on_the_fly),
        cmocka_unit_test(test_on_the_fly_whole_plane),
        cmocka_unit_test(test_refuse_kernel_too_big),
        cmocka_unit_test(test_refuse_padding_only_window),
        cmocka_unit_test(test_refuse_output_size),
        cmocka_unit_test(test_refuse_line_buffer),
        cmocka_unit_test(test_refuse_split_geometry),
        cmocka_unit_test(test_refuse_rdma_mismatch),
        cmocka_unit_test(test_refuse_int16_on_int8_config),
        cmocka_unit_test(test_status_registers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
