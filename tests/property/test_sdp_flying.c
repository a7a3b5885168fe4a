/*
 * Property tests of SDP on the fly from CACC (flying mode) with its X
 * stages: random 1x1 convolution layers (CDMA, CSC, CMAC, CACC) feed SDP,
 * whose BS and BN stages take register operands or operands from memory
 * (BRDMA / NRDMA, per kernel or per element, one or two bytes, ALU, MUL or
 * both), ALU max/min/sum, MUL, PReLU, ReLU, then the output converter;
 * the int8 output in memory, D_PERF_OUT_SATURATION and D_STATUS are
 * compared with a plain-C reference written here (test_sdp.c checks the
 * same stages on memory input, test_conv.c the convolution).  Also: layers
 * in a row with other weights, or the same weight bytes read as another
 * shape, each compute with their own weights (weights decoded once are
 * kept between layers).
 *
 * Facts the reference encodes:
 *   - feature memory: element (c, y, x) at (c / M) * SURF_STRIDE +
 *     y * LINE_STRIDE + x * M + c % M; 1x1 weights in groups of Atomic-K
 *     kernels, blocks of Atomic-C channels, each kernel's channels of a
 *     block in turn (cmod/csc SendWeightToMacSequencerDirectConvCommon);
 *   - CACC: the sum rounded by CLIP_TRUNCATE (round half away from zero;
 *     the sums here stay far below the 16-bit sticky window);
 *   - SDP (vmod/nvdla/sdp, vmod/vlibs): the ALU operand << ALU shift
 *     saturated to 32 bits; ALU max/min/sum in 33 bits; MUL by the 16-bit
 *     operand then a rounding shift (half away from zero) saturated to 32
 *     bits, which also applies when MUL is bypassed; PReLU passes the low
 *     32 bits of a non-negative ALU result; ReLU; converter (x - offset) *
 *     scale, rounding shift to 17 bits (counted as saturation: rounded value
 *     above the maximum, or floor below the minimum), int8;
 *   - channels past the cube up to a whole atom take input 0, go through
 *     the data path and are written; operands: per kernel one value per
 *     channel contiguous; per element a cube laid out as the output (a 1x1
 *     cube packed: NV_NVDLA_SDP_RDMA_ig.v), ALU component first with
 *     DATA_USE=BOTH, one-byte values sign-extended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

#define IN_ADDR 0x10000000ull
#define WT_ADDR 0x20000000ull
#define BS_ADDR 0x30000000ull
#define BN_ADDR 0x40000000ull
#define OUT_ADDR 0x50000000ull

#define F(UNIT, REG, FIELD, v) NVDLA_##UNIT##_##REG##_0_##FIELD(v)

static uint64_t rng;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng, lo, hi);
}

static int coin(unsigned percent)
{
    return rnd(0, 99) < percent;
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

/* ---- device ------------------------------------------------------------------ */

struct tdev {
    struct dlasim_dev *dev;
    uint32_t m, ac, ak, bw, depth, banks;
};

static uint32_t param(struct tdev *t, const char *name)
{
    uint64_t v = 0;
    assert_int_equal(dlasim_param(t->dev, name, &v), 0);
    return (uint32_t)v;
}

static void tdev_open(struct tdev *t, const char *config)
{
    struct dlasim_options o;
    char err[256] = "";
    memset(&o, 0, sizeof(o));
    memset(t, 0, sizeof(*t));
    o.config = config;
    o.threads = 2;
    if (dlasim_create(&o, &t->dev, err, sizeof(err))) {
        fail_msg("dlasim_create(%s): %s", config, err);
    }
    t->m = param(t, "NVDLA_MEMORY_ATOMIC_SIZE");
    t->ac = param(t, "NVDLA_MAC_ATOMIC_C_SIZE");
    t->ak = param(t, "NVDLA_MAC_ATOMIC_K_SIZE");
    t->bw = param(t, "NVDLA_CBUF_BANK_WIDTH");
    t->depth = param(t, "NVDLA_CBUF_BANK_DEPTH");
    t->banks = param(t, "NVDLA_CBUF_BANK_NUMBER");
}

static void wr(struct tdev *t, uint32_t addr, uint32_t v)
{
    assert_int_equal(dlasim_csb_write(t->dev, addr, v), 0);
}

static uint32_t rd(struct tdev *t, uint32_t addr)
{
    uint32_t v = 0;
    assert_int_equal(dlasim_csb_read(t->dev, addr, &v), 0);
    return v;
}

static void mem_wr(struct tdev *t, uint64_t addr, const void *p, size_t n)
{
    assert_int_equal(dlasim_mem_write(t->dev, DLASIM_PORT_DBB, addr, p, n), 0);
}

static void mem_rd(struct tdev *t, uint64_t addr, void *p, size_t n)
{
    assert_int_equal(dlasim_mem_read(t->dev, DLASIM_PORT_DBB, addr, p, n), 0);
}

/* ---- a layer -------------------------------------------------------------------- */

struct xstage {
    int bypass, alu_bypass, mul_bypass, prelu, relu_bypass;
    unsigned algo;                   /* 0 max, 1 min, 2 sum */
    int alu_mem, mul_mem;
    unsigned alu_shift, mul_shift;
    uint32_t alu_op, mul_op;         /* 16-bit register operands */
};

struct stream {                      /* BRDMA or NRDMA */
    int used;
    unsigned use;                    /* 0 MUL, 1 ALU, 2 BOTH */
    unsigned size;                   /* 0 one byte, 1 two bytes */
    int per_element;
    int packed;                      /* 1x1 cube: surfaces one after the other */
    uint32_t line, surf;             /* per element */
    uint8_t *mem;                    /* bytes at BS_ADDR / BN_ADDR */
    size_t bytes;
};

struct layer {
    uint32_t w, h, c, k, trunc;
    uint32_t line, surf, out_line, out_surf, entries, data_bank, weight_bank, wt_bytes;
    int8_t *in;                      /* [c][y][x] */
    int8_t *wt;                      /* [k][c] */
    struct xstage x[2];
    struct stream st[2];
    uint32_t cvt_offset, cvt_scale, cvt_shift;
};

static void layer_free(struct layer *L)
{
    free(L->in);
    free(L->wt);
    free(L->st[0].mem);
    free(L->st[1].mem);
    memset(L, 0, sizeof(*L));
}

static uint32_t nsurf(const struct tdev *t, const struct layer *L)
{
    return div_up(L->k, t->m);
}

/* CBUF entries of one input line (the driver's calculateEPS rule). */
static uint32_t entries_of(const struct tdev *t, const struct layer *L)
{
    uint32_t apc = t->bw / t->m;
    uint32_t atoms = div_up(L->c, t->m);
    uint32_t e = atoms / apc * L->w, rest = atoms % apc;
    if (rest == 0) {
        return e;
    }
    if (2 * rest > apc) {
        return e + L->w;
    }
    if (4 * rest > apc) {
        return e + div_up(L->w, 2);
    }
    return e + div_up(L->w, 4);
}

static unsigned elem_bytes(const struct stream *s)
{
    return (s->size ? 2u : 1u) * (s->use == 2 ? 2u : 1u);
}

static void random_x(struct xstage *x)
{
    x->bypass = coin(20);
    x->alu_bypass = coin(25);
    x->algo = rnd(0, 2);
    x->mul_bypass = coin(35);
    x->prelu = coin(30);
    x->relu_bypass = coin(50);
    x->alu_mem = coin(50);
    x->mul_mem = coin(50);
    x->alu_shift = coin(80) ? rnd(0, 4) : rnd(0, 63);
    x->mul_shift = coin(80) ? rnd(0, 6) : rnd(0, 63);
    x->alu_op = rnd(0, 0xffff);
    x->mul_op = coin(50) ? rnd(0, 8) : rnd(0, 0xffff);
}

/* Which operands stage k reads from memory. */
static int reads_alu(const struct xstage *x)
{
    return !x->bypass && !x->alu_bypass && x->alu_mem;
}

static int reads_mul(const struct xstage *x)
{
    return !x->bypass && !x->mul_bypass && x->mul_mem;
}

static void random_stream(const struct tdev *t, const struct layer *L, const struct xstage *x,
                          struct stream *s)
{
    int alu = reads_alu(x), mul = reads_mul(x);
    s->used = alu || mul;
    s->use = (alu && mul) ? 2 : (alu ? (coin(70) ? 1 : 2) : (coin(70) ? 0 : 2));
    s->size = rnd(0, 1);
    s->per_element = coin(50);
    s->packed = L->w == 1 && L->h == 1;
    uint32_t eb = elem_bytes(s);
    if (s->per_element) {
        s->line = L->w * t->m * eb + rnd(0, 2) * t->m;
        s->surf = s->line * L->h + rnd(0, 2) * t->m;
        s->bytes = (size_t)s->surf * nsurf(t, L);
    } else {
        s->bytes = (size_t)nsurf(t, L) * t->m * eb;
    }
    s->mem = malloc(s->bytes);
    assert_non_null(s->mem);
    for (size_t i = 0; i < s->bytes; i++) {
        s->mem[i] = (uint8_t)splitmix64_next(&rng);
    }
}

/* A random layer that fits CBUF; 0 when it does not. */
static int random_layer(const struct tdev *t, struct layer *L)
{
    memset(L, 0, sizeof(*L));
    L->w = coin(15) ? 1 : rnd(1, 40);
    L->h = L->w == 1 && coin(50) ? 1 : rnd(1, 6);
    L->c = rnd(1, 24);
    L->k = rnd(1, 24);
    L->trunc = coin(70) ? rnd(7, 12) : rnd(0, 14); /* mostly int8-scale sums */
    L->line = L->w * t->m;
    L->surf = L->line * L->h;
    L->out_line = L->w * t->m + rnd(0, 2) * t->m;
    L->out_surf = L->out_line * L->h + rnd(0, 2) * t->m;
    if (L->w == 1 && L->h == 1) {
        L->out_line = L->out_surf = t->m; /* SDP writes a 1x1 cube as consecutive atoms */
    }
    L->entries = entries_of(t, L);
    L->data_bank = div_up(L->entries * L->h, t->depth);
    L->wt_bytes = div_up(L->k * L->c, 128) * 128;
    L->weight_bank = div_up(L->wt_bytes, t->bw * t->depth);
    if (L->data_bank + L->weight_bank > t->banks) {
        return 0;
    }
    L->in = malloc((size_t)L->c * L->h * L->w);
    L->wt = malloc((size_t)L->k * L->c);
    assert_non_null(L->in);
    assert_non_null(L->wt);
    for (size_t i = 0; i < (size_t)L->c * L->h * L->w; i++) {
        L->in[i] = (int8_t)splitmix64_next(&rng);
    }
    for (size_t i = 0; i < (size_t)L->k * L->c; i++) {
        L->wt[i] = (int8_t)splitmix64_next(&rng);
    }
    for (int k = 0; k < 2; k++) {
        random_x(&L->x[k]);
        random_stream(t, L, &L->x[k], &L->st[k]);
    }
    L->cvt_offset = coin(60) ? rnd(0, 40) - 20u : (uint32_t)splitmix64_next(&rng);
    L->cvt_scale = coin(60) ? rnd(1, 3) : rnd(0, 0xffff);
    L->cvt_shift = coin(60) ? rnd(0, 6) : rnd(0, 63);
    return 1;
}

/* ---- memory ---------------------------------------------------------------------- */

/* Byte offset of weight (k, c) in the weight stream of a 1x1 layer. */
static size_t wt_at(const struct tdev *t, const struct layer *L, uint32_t k, uint32_t c)
{
    uint32_t g = k / t->ak, kpg = L->k - g * t->ak < t->ak ? L->k - g * t->ak : t->ak;
    uint32_t b = c / t->ac, cb = L->c - b * t->ac < t->ac ? L->c - b * t->ac : t->ac;
    return (size_t)g * t->ak * L->c + (size_t)b * t->ac * kpg + (size_t)(k % t->ak) * cb +
           c % t->ac;
}

/* The weight stream of the layer (wt_bytes, zero-padded). */
static uint8_t *weight_stream(const struct tdev *t, const struct layer *L)
{
    uint8_t *buf = calloc(1, L->wt_bytes);
    assert_non_null(buf);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t c = 0; c < L->c; c++) {
            buf[wt_at(t, L, k, c)] = (uint8_t)L->wt[(size_t)k * L->c + c];
        }
    }
    return buf;
}

static void write_layer_memory(struct tdev *t, const struct layer *L)
{
    size_t n = (size_t)div_up(L->c, t->m) * L->surf;
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        buf[i] = (uint8_t)splitmix64_next(&rng); /* padding channels hold garbage */
    }
    for (uint32_t c = 0; c < L->c; c++) {
        for (uint32_t y = 0; y < L->h; y++) {
            for (uint32_t x = 0; x < L->w; x++) {
                buf[(size_t)(c / t->m) * L->surf + (size_t)y * L->line + (size_t)x * t->m +
                    c % t->m] = (uint8_t)L->in[((size_t)c * L->h + y) * L->w + x];
            }
        }
    }
    mem_wr(t, IN_ADDR, buf, n);
    free(buf);
    buf = weight_stream(t, L);
    mem_wr(t, WT_ADDR, buf, L->wt_bytes);
    free(buf);
    if (L->st[0].used) {
        mem_wr(t, BS_ADDR, L->st[0].mem, L->st[0].bytes);
    }
    if (L->st[1].used) {
        mem_wr(t, BN_ADDR, L->st[1].mem, L->st[1].bytes);
    }
}

/* ---- programming ------------------------------------------------------------------ */

static void program_conv(struct tdev *t, const struct layer *L)
{
    uint32_t bank = F(CDMA, D_BANK, DATA_BANK, L->data_bank - 1) |
                    F(CDMA, D_BANK, WEIGHT_BANK, L->weight_bank - 1);
    wr(t, NVDLA_CDMA_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CDMA_D_DATAIN_FORMAT_0, 0);
    wr(t, NVDLA_CDMA_D_DATAIN_SIZE_0_0,
       F(CDMA, D_DATAIN_SIZE_0, DATAIN_WIDTH, L->w - 1) |
           F(CDMA, D_DATAIN_SIZE_0, DATAIN_HEIGHT, L->h - 1));
    wr(t, NVDLA_CDMA_D_DATAIN_SIZE_1_0, L->c - 1);
    wr(t, NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0,
       F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, L->w - 1) |
           F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, L->h - 1));
    wr(t, NVDLA_CDMA_D_DAIN_RAM_TYPE_0, NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_MCIF);
    wr(t, NVDLA_CDMA_D_DAIN_ADDR_HIGH_0_0, (uint32_t)(IN_ADDR >> 32));
    wr(t, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)IN_ADDR);
    wr(t, NVDLA_CDMA_D_LINE_STRIDE_0, L->line);
    wr(t, NVDLA_CDMA_D_SURF_STRIDE_0, L->surf);
    wr(t, NVDLA_CDMA_D_DAIN_MAP_0,
       F(CDMA, D_DAIN_MAP, LINE_PACKED, 1) | F(CDMA, D_DAIN_MAP, SURF_PACKED, 1));
    wr(t, NVDLA_CDMA_D_BATCH_NUMBER_0, 0);
    wr(t, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, L->entries - 1);
    wr(t, NVDLA_CDMA_D_WEIGHT_FORMAT_0, 0);
    wr(t, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, L->c - 1);
    wr(t, NVDLA_CDMA_D_WEIGHT_SIZE_1_0, L->k - 1);
    wr(t, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0_WEIGHT_RAM_TYPE_MCIF);
    wr(t, NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0, (uint32_t)(WT_ADDR >> 32));
    wr(t, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0, (uint32_t)WT_ADDR);
    wr(t, NVDLA_CDMA_D_WEIGHT_BYTES_0, L->wt_bytes);
    wr(t, NVDLA_CDMA_D_CVT_CFG_0, 0);
    wr(t, NVDLA_CDMA_D_CONV_STRIDE_0, 0);
    wr(t, NVDLA_CDMA_D_ZERO_PADDING_0, 0);
    wr(t, NVDLA_CDMA_D_BANK_0, bank);

    wr(t, NVDLA_CSC_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CSC_D_DATAIN_FORMAT_0, 0);
    wr(t, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0,
       F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, L->w - 1) |
           F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, L->h - 1));
    wr(t, NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0, L->c - 1);
    wr(t, NVDLA_CSC_D_BATCH_NUMBER_0, 0);
    wr(t, NVDLA_CSC_D_ENTRY_PER_SLICE_0, L->entries - 1);
    wr(t, NVDLA_CSC_D_WEIGHT_FORMAT_0, 0);
    wr(t, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0, 0);
    wr(t, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
       F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT, L->c - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL, L->k - 1));
    wr(t, NVDLA_CSC_D_WEIGHT_BYTES_0, L->wt_bytes);
    wr(t, NVDLA_CSC_D_DATAOUT_SIZE_0_0,
       F(CSC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, L->w - 1) |
           F(CSC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, L->h - 1));
    wr(t, NVDLA_CSC_D_DATAOUT_SIZE_1_0, L->k - 1);
    wr(t, NVDLA_CSC_D_ATOMICS_0, L->w * L->h - 1);
    wr(t, NVDLA_CSC_D_RELEASE_0, L->h - 1);
    wr(t, NVDLA_CSC_D_CONV_STRIDE_EXT_0, 0);
    wr(t, NVDLA_CSC_D_DILATION_EXT_0, 0);
    wr(t, NVDLA_CSC_D_ZERO_PADDING_0, 0);
    wr(t, NVDLA_CSC_D_BANK_0, bank);

    wr(t, NVDLA_CMAC_A_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CMAC_B_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CACC_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CACC_D_DATAOUT_SIZE_0_0,
       F(CACC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, L->w - 1) |
           F(CACC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, L->h - 1));
    wr(t, NVDLA_CACC_D_DATAOUT_SIZE_1_0, L->k - 1);
    wr(t, NVDLA_CACC_D_BATCH_NUMBER_0, 0);
    wr(t, NVDLA_CACC_D_CLIP_CFG_0, L->trunc);
}

static uint32_t x_cfg_bits(const struct xstage *x)
{
    /* BS and BN share the field layout */
    return F(SDP, D_DP_BS_CFG, BS_BYPASS, (uint32_t)x->bypass) |
           F(SDP, D_DP_BS_CFG, BS_ALU_BYPASS, (uint32_t)x->alu_bypass) |
           F(SDP, D_DP_BS_CFG, BS_ALU_ALGO, x->algo) |
           F(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, (uint32_t)x->mul_bypass) |
           F(SDP, D_DP_BS_CFG, BS_MUL_PRELU, (uint32_t)x->prelu) |
           F(SDP, D_DP_BS_CFG, BS_RELU_BYPASS, (uint32_t)x->relu_bypass);
}

static uint32_t stream_cfg_bits(const struct stream *s)
{
    /* BRDMA and NRDMA share the field layout */
    return F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DISABLE, (uint32_t)!s->used) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, s->use) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE, s->size) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE, (uint32_t)s->per_element) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE, NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_RAM_TYPE_MC);
}

static void program_sdp(struct tdev *t, const struct layer *L)
{
    const struct xstage *bs = &L->x[0], *bn = &L->x[1];
    wr(t, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, L->w - 1);
    wr(t, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, L->h - 1);
    wr(t, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, L->k - 1);
    wr(t, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
       F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE,
         NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON));
    wr(t, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, stream_cfg_bits(&L->st[0]));
    wr(t, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH_0, (uint32_t)(BS_ADDR >> 32));
    wr(t, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0, (uint32_t)BS_ADDR);
    wr(t, NVDLA_SDP_RDMA_D_BS_LINE_STRIDE_0, L->st[0].line);
    wr(t, NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE_0, L->st[0].surf);
    wr(t, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, stream_cfg_bits(&L->st[1]));
    wr(t, NVDLA_SDP_RDMA_D_BN_BASE_ADDR_HIGH_0, (uint32_t)(BN_ADDR >> 32));
    wr(t, NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW_0, (uint32_t)BN_ADDR);
    wr(t, NVDLA_SDP_RDMA_D_BN_LINE_STRIDE_0, L->st[1].line);
    wr(t, NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE_0, L->st[1].surf);
    wr(t, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, F(SDP_RDMA, D_ERDMA_CFG, ERDMA_DISABLE, 1));

    wr(t, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, L->w - 1);
    wr(t, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, L->h - 1);
    wr(t, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, L->k - 1);
    wr(t, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(OUT_ADDR >> 32));
    wr(t, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)OUT_ADDR);
    wr(t, NVDLA_SDP_D_DST_LINE_STRIDE_0, L->out_line);
    wr(t, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, L->out_surf);
    wr(t, NVDLA_SDP_D_DP_BS_CFG_0, x_cfg_bits(bs));
    wr(t, NVDLA_SDP_D_DP_BS_ALU_CFG_0,
       F(SDP, D_DP_BS_ALU_CFG, BS_ALU_SRC, (uint32_t)bs->alu_mem) |
           F(SDP, D_DP_BS_ALU_CFG, BS_ALU_SHIFT_VALUE, bs->alu_shift));
    wr(t, NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE_0, bs->alu_op);
    wr(t, NVDLA_SDP_D_DP_BS_MUL_CFG_0,
       F(SDP, D_DP_BS_MUL_CFG, BS_MUL_SRC, (uint32_t)bs->mul_mem) |
           F(SDP, D_DP_BS_MUL_CFG, BS_MUL_SHIFT_VALUE, bs->mul_shift));
    wr(t, NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE_0, bs->mul_op);
    wr(t, NVDLA_SDP_D_DP_BN_CFG_0, x_cfg_bits(bn));
    wr(t, NVDLA_SDP_D_DP_BN_ALU_CFG_0,
       F(SDP, D_DP_BN_ALU_CFG, BN_ALU_SRC, (uint32_t)bn->alu_mem) |
           F(SDP, D_DP_BN_ALU_CFG, BN_ALU_SHIFT_VALUE, bn->alu_shift));
    wr(t, NVDLA_SDP_D_DP_BN_ALU_SRC_VALUE_0, bn->alu_op);
    wr(t, NVDLA_SDP_D_DP_BN_MUL_CFG_0,
       F(SDP, D_DP_BN_MUL_CFG, BN_MUL_SRC, (uint32_t)bn->mul_mem) |
           F(SDP, D_DP_BN_MUL_CFG, BN_MUL_SHIFT_VALUE, bn->mul_shift));
    wr(t, NVDLA_SDP_D_DP_BN_MUL_SRC_VALUE_0, bn->mul_op);
    wr(t, NVDLA_SDP_D_DP_EW_CFG_0, 0x53); /* bypassed */
    wr(t, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON));
    wr(t, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(t, NVDLA_SDP_D_DATA_FORMAT_0, 0);
    wr(t, NVDLA_SDP_D_CVT_OFFSET_0, L->cvt_offset);
    wr(t, NVDLA_SDP_D_CVT_SCALE_0, L->cvt_scale);
    wr(t, NVDLA_SDP_D_CVT_SHIFT_0, L->cvt_shift);
    wr(t, NVDLA_SDP_D_PERF_ENABLE_0, F(SDP, D_PERF_ENABLE, PERF_SAT_EN, 1));
}

/* Each unit's registers are programmed in the group it executes next (its
 * CONSUMER): SDP_RDMA only moves on in layers that use it. */
static void set_pointers(struct tdev *t)
{
    static const uint32_t ptr[] = {
        NVDLA_CDMA_S_POINTER_0,   NVDLA_CSC_S_POINTER_0, NVDLA_CMAC_A_S_POINTER_0,
        NVDLA_CMAC_B_S_POINTER_0, NVDLA_CACC_S_POINTER_0, NVDLA_SDP_RDMA_S_POINTER_0,
        NVDLA_SDP_S_POINTER_0,
    };
    for (size_t i = 0; i < sizeof(ptr) / sizeof(ptr[0]); i++) {
        wr(t, ptr[i], (rd(t, ptr[i]) >> 16) & 1u);
    }
}

static void run_layer(struct tdev *t, const struct layer *L)
{
    set_pointers(t);
    program_conv(t, L);
    program_sdp(t, L);
    if (L->st[0].used || L->st[1].used) {
        wr(t, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1); /* SDP waits for its operands */
    }
    wr(t, NVDLA_SDP_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CACC_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CMAC_A_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CMAC_B_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CSC_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CDMA_D_OP_ENABLE_0, 1);
    int rc = dlasim_run(t->dev);
    if (rc) {
        fail_msg("dlasim_run = %s: %s", dlasim_status_name(rc), dlasim_last_error(t->dev));
    }
    char busy[512] = "";
    if (dlasim_busy(t->dev, busy, sizeof(busy))) {
        fail_msg("units still busy after the layer: %s", busy);
    }
}

/* ---- reference ----------------------------------------------------------------------- */

static int64_t sext(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (m << 1) - 1;
    return (v & m) ? (int64_t)v - (int64_t)(m << 1) : (int64_t)v;
}

/* x / 2^s rounded half away from zero, saturated to out_w bits; *sat as
 * the header says; 0 for s >= in_w. */
static int64_t ref_rshift(int64_t x, unsigned s, unsigned in_w, unsigned out_w, int *sat)
{
    int64_t hi = (int64_t)((1ull << (out_w - 1)) - 1);
    *sat = 0;
    if (s >= in_w) {
        return 0;
    }
    uint64_t mag = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    uint64_t q = s == 0 ? mag : (mag + (1ull << (s - 1))) >> s;
    if (x >= 0) {
        *sat = (int64_t)q > hi;
        return (int64_t)q > hi ? hi : (int64_t)q;
    }
    uint64_t ceil_mag = s == 0 ? mag : (mag + (1ull << s) - 1) >> s;
    *sat = ceil_mag > (uint64_t)hi + 1;
    return (int64_t)q > hi + 1 ? -hi - 1 : -(int64_t)q;
}

static int64_t ref_shl32(int64_t x, unsigned s)
{
    for (unsigned i = 0; i < s && x != 0; i++) {
        x *= 2;
        if (x > INT32_MAX) {
            return INT32_MAX;
        }
        if (x < INT32_MIN) {
            return INT32_MIN;
        }
    }
    return x;
}

/* Component `mul` of the operand of channel ch at (y, x) from stream s. */
static int64_t stream_value(const struct tdev *t, const struct stream *s, uint32_t ch, uint32_t y,
                            uint32_t x, int mul)
{
    unsigned size = s->size ? 2u : 1u, eb = elem_bytes(s);
    /* per kernel, and per element for a 1x1 cube (read packed): contiguous */
    size_t at = s->per_element && !s->packed ? (size_t)(ch / t->m) * s->surf +
                                                   (size_t)y * s->line +
                                                   ((size_t)x * t->m + ch % t->m) * eb
                                             : (size_t)ch * eb;
    if (s->use == 2 && mul) {
        at += size;
    }
    uint64_t v = s->mem[at];
    if (size == 2) {
        v |= (uint64_t)s->mem[at + 1] << 8;
    }
    return sext(v, 8 * size);
}

static int64_t ref_x(const struct tdev *t, const struct xstage *x, const struct stream *s,
                     int64_t v, uint32_t ch, uint32_t y, uint32_t xx)
{
    int64_t a = v;
    if (!x->alu_bypass) {
        int64_t op = x->alu_mem ? stream_value(t, s, ch, y, xx, 0) : sext(x->alu_op, 16);
        op = ref_shl32(op, x->alu_shift);
        a = x->algo == 0 ? (a > op ? a : op) : (x->algo == 1 ? (a < op ? a : op) : a + op);
    }
    int sat;
    int64_t r;
    if (x->mul_bypass) {
        r = ref_rshift(a, x->mul_shift, 49, 32, &sat);
    } else if (x->prelu && a >= 0) {
        r = sext((uint64_t)a, 32);
    } else {
        int64_t mop = x->mul_mem ? stream_value(t, s, ch, y, xx, 1) : sext(x->mul_op, 16);
        r = ref_rshift(a * mop, x->mul_shift, 49, 32, &sat);
    }
    return (!x->relu_bypass && r < 0) ? 0 : r;
}

static int64_t ref_cacc(const struct layer *L, uint32_t k, uint32_t y, uint32_t x)
{
    int64_t sum = 0;
    for (uint32_t c = 0; c < L->c; c++) {
        sum += (int64_t)L->in[((size_t)c * L->h + y) * L->w + x] * L->wt[(size_t)k * L->c + c];
    }
    if (L->trunc == 0) {
        return sum;
    }
    uint64_t mag = sum < 0 ? (uint64_t)-sum : (uint64_t)sum;
    int64_t r = (int64_t)((mag + (1ull << (L->trunc - 1))) >> L->trunc);
    return sum < 0 ? -r : r;
}

static void check_layer(struct tdev *t, const struct layer *L, unsigned idx)
{
    uint32_t ns = nsurf(t, L);
    size_t n = (size_t)(ns - 1) * L->out_surf + (size_t)(L->h - 1) * L->out_line +
               (size_t)L->w * t->m;
    uint8_t *out = malloc(n);
    assert_non_null(out);
    mem_rd(t, OUT_ADDR, out, n);
    uint32_t sat = 0;
    int nonzero = 0;
    for (uint32_t ch = 0; ch < ns * t->m; ch++) {
        for (uint32_t y = 0; y < L->h; y++) {
            for (uint32_t x = 0; x < L->w; x++) {
                int64_t v = ch < L->k ? ref_cacc(L, ch, y, x) : 0;
                for (int k = 0; k < 2; k++) {
                    if (!L->x[k].bypass) {
                        v = ref_x(t, &L->x[k], &L->st[k], v, ch, y, x);
                    }
                }
                int s;
                int64_t r = ref_rshift((v - (int64_t)(int32_t)L->cvt_offset) *
                                           sext(L->cvt_scale, 16),
                                       L->cvt_shift, 49, 17, &s);
                int8_t want = (int8_t)(r > 127 ? 127 : (r < -128 ? -128 : r));
                sat += (uint32_t)s;
                nonzero |= want != 0;
                size_t at = (size_t)(ch / t->m) * L->out_surf + (size_t)y * L->out_line +
                            (size_t)x * t->m + ch % t->m;
                if ((int8_t)out[at] != want) {
                    fail_msg("layer %u (%ux%ux%u -> %u, trunc %u): out[ch=%u][y=%u][x=%u] = %d, "
                             "reference %d",
                             idx, L->w, L->h, L->c, L->k, L->trunc, ch, y, x, (int8_t)out[at],
                             want);
                }
            }
        }
    }
    /* SDP's producer still points at the group that ran */
    assert_int_equal(rd(t, NVDLA_SDP_D_PERF_OUT_SATURATION_0), sat);
    assert_int_equal(rd(t, NVDLA_SDP_D_STATUS_0), (uint32_t)nonzero);
    free(out);
}

static void random_suite(const char *config, unsigned n, uint64_t seed)
{
    struct tdev t;
    rng = seed;
    tdev_open(&t, config);
    for (unsigned i = 0; i < n;) {
        struct layer L;
        if (!random_layer(&t, &L)) {
            layer_free(&L);
            continue;
        }
        write_layer_memory(&t, &L);
        run_layer(&t, &L);
        check_layer(&t, &L, i);
        layer_free(&L);
        i++;
    }
    dlasim_destroy(t.dev);
}

/* New input data of the same shape. */
static void new_input(struct layer *L)
{
    for (size_t i = 0; i < (size_t)L->c * L->h * L->w; i++) {
        L->in[i] = (int8_t)splitmix64_next(&rng);
    }
}

/*
 * Decoded weights are kept between layers: consecutive layers with the
 * same shape and other weights, the same weight bytes read as another
 * shape (kernels and channels swapped), and the same bytes and shape again
 * must each compute with the weights they program.
 */
static void test_weight_reuse_between_layers(void **state)
{
    (void)state;
    struct tdev t;
    rng = 0x5df10003u;
    tdev_open(&t, "nv_small");
    for (unsigned i = 0; i < 40;) {
        struct layer L;
        if (!random_layer(&t, &L) || L.c * L.k > 2048 || L.c == L.k) {
            layer_free(&L);
            continue;
        }
        L.x[0].bypass = L.x[1].bypass = 1;
        L.st[0].used = L.st[1].used = 0;
        write_layer_memory(&t, &L);
        run_layer(&t, &L);
        check_layer(&t, &L, i);
        /* same shape, other weights */
        for (size_t j = 0; j < (size_t)L.k * L.c; j++) {
            L.wt[j] = (int8_t)splitmix64_next(&rng);
        }
        write_layer_memory(&t, &L);
        run_layer(&t, &L);
        check_layer(&t, &L, i);
        /* the same bytes as k' = c kernels of c' = k channels */
        uint8_t *bytes = weight_stream(&t, &L);
        uint32_t c = L.c;
        L.c = L.k;
        L.k = c;
        L.entries = entries_of(&t, &L);
        L.data_bank = div_up(L.entries * L.h, t.depth);
        L.weight_bank = div_up(L.wt_bytes, t.bw * t.depth);
        free(L.in);
        L.in = malloc((size_t)L.c * L.h * L.w);
        assert_non_null(L.in);
        new_input(&L);
        for (uint32_t k = 0; k < L.k; k++) {
            for (uint32_t ch = 0; ch < L.c; ch++) {
                L.wt[(size_t)k * L.c + ch] = (int8_t)bytes[wt_at(&t, &L, k, ch)];
            }
        }
        free(bytes);
        if (L.data_bank + L.weight_bank <= t.banks) {
            write_layer_memory(&t, &L);
            run_layer(&t, &L);
            check_layer(&t, &L, i);
            /* the same bytes and shape, new data */
            new_input(&L);
            write_layer_memory(&t, &L);
            run_layer(&t, &L);
            check_layer(&t, &L, i);
        }
        layer_free(&L);
        i++;
    }
    dlasim_destroy(t.dev);
}

static void test_flying_nv_small(void **state)
{
    (void)state;
    random_suite("nv_small", 400, 0x5df10001u);
}

static void test_flying_nv_small_256(void **state)
{
    (void)state;
    random_suite("nv_small_256", 150, 0x5df10002u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flying_nv_small),
        cmocka_unit_test(test_flying_nv_small_256),
        cmocka_unit_test(test_weight_reuse_between_layers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
