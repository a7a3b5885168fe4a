/*
 * Property tests of SDP on the fly from CACC (flying mode) with its X
 * stages: random 1x1 convolution layers (CDMA, CSC, CMAC, CACC) feed SDP,
 * whose BS and BN stages take register operands or operands from memory
 * (BRDMA / NRDMA, per kernel or per element, one or two bytes, ALU, MUL or
 * both), ALU max/min/sum, MUL, PReLU, ReLU, then the output converter;
 * the int8 output in memory, D_PERF_OUT_SATURATION and D_STATUS are
 * compared with plain-C references (common/convlayer.c, common/sdpref.c;
 * test_sdp.c checks the same stages on memory input, test_conv.c the
 * convolution); fully connected layers (one pixel, many surfaces) too.  Also: layers
 * in a row with other weights, or the same weight bytes read as another
 * shape, each compute with their own weights (weights decoded once are
 * kept between layers).
 *
 * Facts the reference encodes:
 *   - the convolution (memory layouts, CACC rounding): common/convlayer.h
 *     (the sums here stay far below the 16-bit sticky window, where CACC
 *     rounds half away from zero);
 *   - SDP's X stages and converter: common/sdpref.h, the output int8;
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

#include "common/convlayer.h"
#include "common/rng.h"
#include "common/sdpref.h"
#include "common/testdev.h"

#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

#define BS_ADDR 0x30000000ull
#define BN_ADDR 0x40000000ull
#define OUT_ADDR 0x50000000ull
/* where SDP writes (OUT_ADDR but in test_output_over_weights) */
static uint64_t out_addr = OUT_ADDR;

static uint64_t rng;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng, lo, hi);
}

static int coin(unsigned percent)
{
    return rnd(0, 99) < percent;
}

/* ---- a layer -------------------------------------------------------------------- */

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
    struct conv cv;                  /* 1x1, stride 1, no padding; SDP's output strides */
    struct sdp_x x[2];
    struct stream st[2];
    uint32_t cvt_offset, cvt_scale, cvt_shift;
};

static void layer_free(struct layer *L)
{
    conv_free(&L->cv);
    free(L->st[0].mem);
    free(L->st[1].mem);
    memset(L, 0, sizeof(*L));
}

static uint32_t nsurf(const struct tdev *t, const struct layer *L)
{
    return conv_div_up(L->cv.k, t->m);
}

/* Entries and banks: all the weights held (the driver's plan); 0 when the
 * layer does not fit CBUF. */
static int plan_banks(const struct tdev *t, struct conv *cv)
{
    cv->entries = conv_entries(t, cv);
    cv->data_bank = conv_div_up(cv->entries * cv->h, t->depth);
    cv->wt_bytes = conv_div_up(cv->k * cv->c, 128) * 128;
    cv->weight_bank = conv_div_up(cv->wt_bytes, t->bw * t->depth);
    return cv->data_bank + cv->weight_bank <= t->banks;
}

static unsigned elem_bytes(const struct stream *s)
{
    return (s->size ? 2u : 1u) * (s->use == 2 ? 2u : 1u);
}

static void random_x(struct sdp_x *x)
{
    x->bypass = coin(20);
    x->alu_bypass = coin(25);
    x->algo = rnd(0, 2);
    x->mul_bypass = coin(35);
    x->prelu = coin(30);
    x->relu_bypass = coin(50);
    x->alu_src = coin(50);
    x->mul_src = coin(50);
    x->alu_shift = coin(80) ? rnd(0, 4) : rnd(0, 63);
    x->mul_shift = coin(80) ? rnd(0, 6) : rnd(0, 63);
    x->alu_op = rnd(0, 0xffff);
    x->mul_op = coin(50) ? rnd(0, 8) : rnd(0, 0xffff);
}

/* Which operands stage k reads from memory. */
static int reads_alu(const struct sdp_x *x)
{
    return !x->bypass && !x->alu_bypass && x->alu_src;
}

static int reads_mul(const struct sdp_x *x)
{
    return !x->bypass && !x->mul_bypass && x->mul_src;
}

static void random_stream(const struct tdev *t, const struct layer *L, const struct sdp_x *x,
                          struct stream *s)
{
    int alu = reads_alu(x), mul = reads_mul(x);
    s->used = alu || mul;
    s->use = (alu && mul) ? 2 : (alu ? (coin(70) ? 1 : 2) : (coin(70) ? 0 : 2));
    s->size = rnd(0, 1);
    s->per_element = coin(50);
    s->packed = L->cv.w == 1 && L->cv.h == 1;
    uint32_t eb = elem_bytes(s);
    if (s->per_element) {
        s->line = L->cv.w * t->m * eb + rnd(0, 2) * t->m;
        s->surf = s->line * L->cv.h + rnd(0, 2) * t->m;
        s->bytes = (size_t)s->surf * nsurf(t, L);
    } else {
        s->bytes = (size_t)nsurf(t, L) * t->m * eb;
    }
    s->mem = malloc(s->bytes);
    assert_non_null(s->mem);
    splitmix64_fill(&rng, s->mem, s->bytes);
}

/* The residual form (src/compiler/lower_conv.c residual_fusable; sdp.c
 * addend_form_of, which adds the operand's bytes in the one pass to the
 * atoms): BS a requantization with register or per-kernel operands, BN a
 * sum with one-byte per-element operands from NRDMA (lines packed or
 * not), its multiplier bypassed with truncation 0, ReLU or not; the
 * converter as random_layer's. */
static int residual_mode;

static void make_residual(const struct tdev *t, struct layer *L)
{
    struct sdp_x *bs = &L->x[0], *bn = &L->x[1];
    bs->bypass = bs->mul_bypass = bs->prelu = 0;
    bs->algo = 2;
    bs->alu_src = bs->mul_src = coin(70);
    bs->mul_shift = rnd(0, 20);
    bn->bypass = bn->alu_bypass = bn->prelu = bn->mul_shift = 0;
    bn->algo = 2;
    bn->alu_src = 1;
    bn->mul_bypass = 1;
    bn->alu_shift = rnd(0, 9);
    for (int k = 0; k < 2; k++) {
        struct stream *st = &L->st[k];
        free(st->mem);
        memset(st, 0, sizeof(*st));
        random_stream(t, L, &L->x[k], st);
    }
    struct stream *n = &L->st[1];
    n->use = 1;
    n->size = 0;
    n->per_element = 1;
    n->line = L->cv.w * t->m + (coin(50) ? 0 : rnd(1, 2) * t->m);
    n->surf = n->line * L->cv.h + rnd(0, 2) * t->m;
    n->bytes = (size_t)n->surf * nsurf(t, L);
    free(n->mem);
    n->mem = malloc(n->bytes);
    assert_non_null(n->mem);
    splitmix64_fill(&rng, n->mem, n->bytes);
    if (L->st[0].per_element) { /* BS per kernel */
        struct stream *b = &L->st[0];
        b->per_element = 0;
        b->bytes = (size_t)nsurf(t, L) * t->m * elem_bytes(b);
    }
}

/* A random layer that fits CBUF; 0 when it does not. */
/* `big` 1: cubes of 2,048 to 3,072 pixels, which SDP splits over the
 * device's team (src/sim/nvdla/sdp.c run_on_team); 2: outputs of over
 * 2^19 values, which the convolution leaves to SDP in bands of rows
 * (csc.c, sdp.c run_bands); 3: planes of 25 to 144 pixels in 25 to 50
 * surfaces, which the team takes a few whole surfaces an item
 * (sdp.c atoms8_split_of); 5: planes of 4 to 64 pixels, 8 to 32
 * kernels, sums barely truncated, so that products pass 32 bits and SDP's
 * atoms take the channel-by-channel fallback (sdp.c surface_atoms8; at
 * least 82 surfaces of the 300 layers, counted with eight real channels). */
static int random_layer(const struct tdev *t, struct layer *L, int big)
{
    memset(L, 0, sizeof(*L));
    struct conv *cv = &L->cv;
    cv->w = coin(15) ? 1 : rnd(1, 40);
    cv->h = cv->w == 1 && coin(50) ? 1 : rnd(1, 6);
    if (big) {
        cv->w = rnd(64, 96);
        cv->h = 32;
    }
    if (big == 2) {
        cv->w = 128;
        cv->h = rnd(64, 72);
    }
    if (big == 3) {
        cv->w = rnd(5, 12);
        cv->h = rnd(5, 12);
    }
    if (big == 4) { /* fully connected: one pixel, up to 40 surfaces */
        cv->w = cv->h = 1;
    }
    if (big == 5) {
        cv->w = rnd(2, 8);
        cv->h = rnd(2, 8);
    }
    cv->c = big == 2 ? rnd(1, 8) : big == 4 ? rnd(1, 64) : rnd(1, 24);
    cv->k = big == 2   ? rnd(57, 64)
            : big == 3 ? rnd(200, 400)
            : big == 4 ? (coin(30) ? rnd(257, 320) : rnd(1, 80))
            : big == 5 ? rnd(8, 32)
                       : rnd(1, 24);
    cv->trunc = big == 5 ? rnd(0, 2) : coin(70) ? rnd(7, 12) : rnd(0, 14); /* mostly int8-scale */
    cv->kw = cv->kh = cv->sx = cv->sy = cv->dx = cv->dy = 1;
    cv->ow = cv->w;
    cv->oh = cv->fetch_h = cv->rls = cv->h;
    cv->line_stride = cv->w * t->m;
    cv->surf_stride = cv->line_stride * cv->h;
    cv->out_line = cv->w * t->m + rnd(0, 2) * t->m;
    cv->out_surf = cv->out_line * cv->h + rnd(0, 2) * t->m;
    if (cv->w == 1 && cv->h == 1) {
        cv->out_line = cv->out_surf = t->m; /* SDP writes a 1x1 cube as consecutive atoms */
    }
    if (!plan_banks(t, cv)) {
        return 0;
    }
    cv->in = malloc((size_t)cv->c * cv->h * cv->w);
    cv->wt = malloc((size_t)cv->k * cv->c);
    assert_non_null(cv->in);
    assert_non_null(cv->wt);
    splitmix64_fill(&rng, cv->in, (size_t)cv->c * cv->h * cv->w);
    splitmix64_fill(&rng, cv->wt, (size_t)cv->k * cv->c);
    for (int k = 0; k < 2; k++) {
        random_x(&L->x[k]);
        random_stream(t, L, &L->x[k], &L->st[k]);
    }
    L->cvt_offset = coin(60) ? rnd(0, 40) - 20u : (uint32_t)splitmix64_next(&rng);
    L->cvt_scale = coin(60) ? rnd(1, 3) : rnd(0, 0xffff);
    L->cvt_shift = coin(60) ? rnd(0, 6) : rnd(0, 63);
    if (residual_mode) {
        make_residual(t, L);
    }
    return 1;
}

static void write_layer_memory(struct tdev *t, const struct layer *L)
{
    conv_write(t, &L->cv);
    if (L->st[0].used) {
        mem_wr(t->dev, BS_ADDR, L->st[0].mem, L->st[0].bytes);
    }
    if (L->st[1].used) {
        mem_wr(t->dev, BN_ADDR, L->st[1].mem, L->st[1].bytes);
    }
}

/* ---- programming ------------------------------------------------------------------ */

static uint32_t stream_cfg(const struct stream *s)
{
    return sdp_rdma_cfg(!s->used, s->use, s->size, (unsigned)s->per_element);
}

static void program_sdp(struct tdev *t, const struct layer *L)
{
    struct dlasim_dev *d = t->dev;
    const struct conv *cv = &L->cv;
    wr(d, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, cv->w - 1);
    wr(d, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, cv->h - 1);
    wr(d, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, cv->k - 1);
    wr(d, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
       F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE,
         NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON));
    wr(d, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, stream_cfg(&L->st[0]));
    wr(d, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH_0, (uint32_t)(BS_ADDR >> 32));
    wr(d, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0, (uint32_t)BS_ADDR);
    wr(d, NVDLA_SDP_RDMA_D_BS_LINE_STRIDE_0, L->st[0].line);
    wr(d, NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE_0, L->st[0].surf);
    wr(d, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, stream_cfg(&L->st[1]));
    wr(d, NVDLA_SDP_RDMA_D_BN_BASE_ADDR_HIGH_0, (uint32_t)(BN_ADDR >> 32));
    wr(d, NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW_0, (uint32_t)BN_ADDR);
    wr(d, NVDLA_SDP_RDMA_D_BN_LINE_STRIDE_0, L->st[1].line);
    wr(d, NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE_0, L->st[1].surf);
    wr(d, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, F(SDP_RDMA, D_ERDMA_CFG, ERDMA_DISABLE, 1));

    wr(d, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, cv->w - 1);
    wr(d, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, cv->h - 1);
    wr(d, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, cv->k - 1);
    wr(d, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(out_addr >> 32));
    wr(d, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)out_addr);
    wr(d, NVDLA_SDP_D_DST_LINE_STRIDE_0, cv->out_line);
    wr(d, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, cv->out_surf);
    sdp_program_x(d, 0, &L->x[0]);
    sdp_program_x(d, 1, &L->x[1]);
    wr(d, NVDLA_SDP_D_DP_EW_CFG_0, 0x53); /* bypassed */
    wr(d, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON));
    wr(d, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(d, NVDLA_SDP_D_DATA_FORMAT_0, 0);
    wr(d, NVDLA_SDP_D_CVT_OFFSET_0, L->cvt_offset);
    wr(d, NVDLA_SDP_D_CVT_SCALE_0, L->cvt_scale);
    wr(d, NVDLA_SDP_D_CVT_SHIFT_0, L->cvt_shift);
    wr(d, NVDLA_SDP_D_PERF_ENABLE_0, F(SDP, D_PERF_ENABLE, PERF_SAT_EN, 1));
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
        wr(t->dev, ptr[i], (rd(t->dev, ptr[i]) >> 16) & 1u);
    }
}

static void run_layer(struct tdev *t, const struct layer *L)
{
    conv_ring_before(t, &L->cv);
    set_pointers(t);
    conv_program_cdma(t, &L->cv);
    conv_program_csc(t, &L->cv);
    conv_program_cacc(t, &L->cv);
    program_sdp(t, L);
    if (L->st[0].used || L->st[1].used) {
        wr(t->dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1); /* SDP waits for its operands */
    }
    conv_enable(t->dev);
    int rc = dlasim_run(t->dev);
    conv_ring_after(t, &L->cv, rc);
    if (rc) {
        fail_msg("dlasim_run = %s: %s", dlasim_status_name(rc), dlasim_last_error(t->dev));
    }
    char busy[512] = "";
    if (dlasim_busy(t->dev, busy, sizeof(busy))) {
        fail_msg("units still busy after the layer: %s", busy);
    }
}

/* ---- reference ----------------------------------------------------------------------- */

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

/* SDP's X stage k on the value of channel ch at (y, x). */
static int64_t ref_x(const struct tdev *t, const struct layer *L, int k, int64_t v, uint32_t ch,
                     uint32_t y, uint32_t x)
{
    const struct sdp_x *xs = &L->x[k];
    const struct stream *s = &L->st[k];
    int64_t aop = reads_alu(xs) ? stream_value(t, s, ch, y, x, 0) : sext(xs->alu_op, 16);
    int64_t mop = reads_mul(xs) ? stream_value(t, s, ch, y, x, 1) : sext(xs->mul_op, 16);
    return ref_sdp_x(xs, v, aop, mop);
}

/* Bytes of layer L's output cube in memory. */
static size_t out_bytes(const struct tdev *t, const struct layer *L)
{
    const struct conv *cv = &L->cv;
    return (size_t)(nsurf(t, L) - 1) * cv->out_surf + (size_t)(cv->h - 1) * cv->out_line +
           (size_t)cv->w * t->m;
}

static void check_layer(struct tdev *t, const struct layer *L, unsigned idx)
{
    const struct conv *cv = &L->cv;
    uint32_t ns = nsurf(t, L);
    size_t n = out_bytes(t, L);
    uint8_t *out = malloc(n);
    assert_non_null(out);
    mem_rd(t->dev, out_addr, out, n);
    uint32_t sat = 0;
    unsigned cacc_sat = 0;
    int nonzero = 0;
    struct conv view;
    conv_ring_view(cv, &view); /* the kernels CSC read (the weight ring) */
    for (uint32_t ch = 0; ch < ns * t->m; ch++) {
        for (uint32_t y = 0; y < cv->h; y++) {
            for (uint32_t x = 0; x < cv->w; x++) {
                int64_t v = ch < cv->k ? conv_ref_cacc(conv_ref_sum(t, &view, 0, ch, y, x),
                                                       cv->trunc, &cacc_sat)
                                       : 0;
                for (int k = 0; k < 2; k++) {
                    if (!L->x[k].bypass) {
                        v = ref_x(t, L, k, v, ch, y, x);
                    }
                }
                int s;
                int64_t r = ref_sdp_cvt(v, L->cvt_offset, L->cvt_scale, L->cvt_shift, &s);
                int8_t want = (int8_t)clamp_bits(r, 8);
                sat += (uint32_t)s;
                nonzero |= want != 0;
                size_t at = (size_t)(ch / t->m) * cv->out_surf + (size_t)y * cv->out_line +
                            (size_t)x * t->m + ch % t->m;
                if ((int8_t)out[at] != want) {
                    fail_msg("layer %u (%ux%ux%u -> %u, trunc %u): out[ch=%u][y=%u][x=%u] = %d, "
                             "reference %d",
                             idx, cv->w, cv->h, cv->c, cv->k, cv->trunc, ch, y, x,
                             (int8_t)out[at], want);
                }
            }
        }
    }
    /* SDP's producer still points at the group that ran */
    assert_int_equal(rd(t->dev, NVDLA_SDP_D_PERF_OUT_SATURATION_0), sat);
    assert_int_equal(rd(t->dev, NVDLA_SDP_D_STATUS_0), (uint32_t)nonzero);
    free(out);
}

/* Write, run and check. */
static void run_and_check(struct tdev *t, const struct layer *L, unsigned idx)
{
    write_layer_memory(t, L);
    if (coin(50)) { /* output pages that hold bytes already: SDP may write in place */
        const size_t n = out_bytes(t, L);
        uint8_t *fill = malloc(n);
        assert_non_null(fill);
        memset(fill, 0x5a, n);
        mem_wr(t->dev, out_addr, fill, n);
        free(fill);
    }
    run_layer(t, L);
    check_layer(t, L, idx);
}

static void random_suite(const char *config, unsigned n, uint64_t seed, int big)
{
    struct tdev t;
    rng = seed;
    tdev_open(&t, config, &rng);
    for (unsigned i = 0; i < n;) {
        struct layer L;
        if (!random_layer(&t, &L, big)) {
            layer_free(&L);
            continue;
        }
        run_and_check(&t, &L, i);
        layer_free(&L);
        i++;
    }
    dlasim_destroy(t.dev);
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
    tdev_open(&t, "nv_small", &rng);
    for (unsigned i = 0; i < 40;) {
        struct layer L;
        struct conv *cv = &L.cv;
        if (!random_layer(&t, &L, 0) || cv->c * cv->k > 2048 || cv->c == cv->k) {
            layer_free(&L);
            continue;
        }
        L.x[0].bypass = L.x[1].bypass = 1;
        L.st[0].used = L.st[1].used = 0;
        run_and_check(&t, &L, i);
        /* same shape, other weights */
        splitmix64_fill(&rng, cv->wt, (size_t)cv->k * cv->c);
        run_and_check(&t, &L, i);
        /* the same bytes as k' = c kernels of c' = k channels */
        uint8_t *bytes = conv_weight_stream(&t, cv);
        uint32_t c = cv->c;
        cv->c = cv->k;
        cv->k = c;
        int fits = plan_banks(&t, cv);
        free(cv->in);
        cv->in = malloc((size_t)cv->c * cv->h * cv->w);
        assert_non_null(cv->in);
        splitmix64_fill(&rng, cv->in, (size_t)cv->c * cv->h * cv->w);
        for (uint32_t k = 0; k < cv->k; k++) {
            for (uint32_t ch = 0; ch < cv->c; ch++) {
                cv->wt[(size_t)k * cv->c + ch] = (int8_t)bytes[conv_wt_offset(&t, cv, k, ch, 0, 0)];
            }
        }
        free(bytes);
        if (fits) {
            run_and_check(&t, &L, i);
            /* the same bytes and shape, new data */
            splitmix64_fill(&rng, cv->in, (size_t)cv->c * cv->h * cv->w);
            run_and_check(&t, &L, i);
        }
        layer_free(&L);
        i++;
    }
    dlasim_destroy(t.dev);
}

/*
 * A layer's output written in place over its own weights (SDP's team path
 * writes its atoms into the memory's pages, then stamps them as written):
 * run again without its weights written, the layer must compute with the
 * bytes SDP left there, not with the packed copy of the weights CSC kept
 * from the runs before (which it keeps while the memory says the weights'
 * bytes were not written since).
 */
static void test_output_over_weights(void **state)
{
    (void)state;
    struct tdev t;
    rng = 0x5df1000du;
    tdev_open(&t, "nv_small", &rng);
    for (unsigned i = 0; i < 12;) {
        struct layer L;
        struct conv *cv = &L.cv;
        /* (a bank spare: each run below takes another weight bank count
         * than the run before, so that CSC reads no weights the run before
         * left in the ring and the weights are the memory's bytes alone;
         * weights of 2 KB or more, in a stream with no padding, which SDP's
         * bytes would fill) */
        if (!random_layer(&t, &L, 3) || cv->data_bank + cv->weight_bank >= t.banks ||
            cv->wt_bytes < 2048 || cv->c % t.ac != 0 ||
            cv->wt_bytes != (size_t)cv->k * conv_bytes_per_kernel(cv)) {
            layer_free(&L);
            continue;
        }
        out_addr = OUT_ADDR;
        run_and_check(&t, &L, i); /* its weights packed and kept */
        cv->weight_bank++;
        /* the output over the weights, from halfway before them where it is
         * larger (the weights then lie inside it, not at its start), every
         * page it reaches holding bytes (written in place) */
        const size_t n = out_bytes(&t, &L);
        const size_t wt = cv->wt_bytes;
        const size_t before = n > 2u * wt ? ((n - wt) / 2u) & ~(size_t)255 : 0;
        out_addr = CONV_WT_ADDR - before;
        uint8_t *fill = malloc(n);
        assert_non_null(fill);
        memset(fill, 0x5a, n);
        mem_wr(t.dev, out_addr, fill, before);
        if (n > before + cv->wt_bytes) {
            mem_wr(t.dev, CONV_WT_ADDR + cv->wt_bytes, fill, n - before - cv->wt_bytes);
        }
        free(fill);
        conv_write_feature(&t, cv);
        run_layer(&t, &L);
        check_layer(&t, &L, i);
        /* the weights are now what SDP wrote */
        uint8_t *now = malloc(cv->wt_bytes);
        assert_non_null(now);
        mem_rd(t.dev, CONV_WT_ADDR, now, cv->wt_bytes);
        for (uint32_t k = 0; k < cv->k; k++) {
            for (uint32_t c = 0; c < cv->c; c++) {
                for (uint32_t r = 0; r < cv->kh; r++) {
                    for (uint32_t x = 0; x < cv->kw; x++) {
                        cv->wt[(((size_t)k * cv->c + c) * cv->kh + r) * cv->kw + x] =
                            (int8_t)now[conv_wt_offset(&t, cv, k, c, r, x)];
                    }
                }
            }
        }
        free(now);
        out_addr = OUT_ADDR;
        cv->weight_bank--;
        conv_write_feature(&t, cv);
        run_layer(&t, &L);
        check_layer(&t, &L, i);
        layer_free(&L);
        i++;
    }
    out_addr = OUT_ADDR;
    dlasim_destroy(t.dev);
}

/*
 * A 1x1 layer whose output lies over its own input, rows ahead of them
 * (SDP writes a band of output rows while the convolution's later bands
 * still read their input rows: csc.c band_defer, sdp.c run_bands): the
 * layer computes with the input as it was when it started, as a fetch of
 * the whole input into CBUF before the layer gives.  The convolution reads
 * its input where the memory keeps it only where its output writes none
 * of it (cdma.c atoms_view); run in place here, the later bands would read
 * rows SDP had written.  Eight input channels, every slice released: the
 * atoms path (csc.c fetch_atoms).  Also the same layers with the output
 * apart, where the input is read in place.
 */
static void test_output_over_input(void **state)
{
    (void)state;
    struct tdev t;
    rng = 0x5df1000fu;
    tdev_open(&t, "nv_small", &rng);
    for (unsigned i = 0; i < 8;) {
        struct layer L;
        struct conv *cv = &L.cv;
        if (!random_layer(&t, &L, 2) || cv->c != 8) {
            layer_free(&L);
            continue;
        }
        for (int over = 0; over < 2; over++) {
            out_addr = over ? CONV_IN_ADDR + (uint64_t)cv->line_stride * (cv->h / 2)
                            : OUT_ADDR;
            /* the output's pages hold bytes (SDP then writes in place),
             * then the layer's memory over them */
            const size_t n = out_bytes(&t, &L);
            uint8_t *fill = malloc(n);
            assert_non_null(fill);
            memset(fill, 0x5a, n);
            mem_wr(t.dev, out_addr, fill, n);
            free(fill);
            write_layer_memory(&t, &L);
            run_layer(&t, &L);
            check_layer(&t, &L, i);
        }
        layer_free(&L);
        i++;
    }
    out_addr = OUT_ADDR;
    dlasim_destroy(t.dev);
}

/* random_suite on make_residual's layers */
static void residual_suite(const char *config, unsigned n, uint64_t seed, int big)
{
    residual_mode = 1;
    random_suite(config, n, seed, big);
    residual_mode = 0;
}

RUN_TEST(test_flying_nv_small, random_suite, "nv_small", 400, 0x5df10001u, 0)
RUN_TEST(test_flying_residual, residual_suite, "nv_small", 300, 0x5df10009u, 0)
RUN_TEST(test_flying_residual_team, residual_suite, "nv_small", 60, 0x5df1000au, 1)
RUN_TEST(test_flying_residual_bands, residual_suite, "nv_small", 12, 0x5df1000bu, 2)
RUN_TEST(test_flying_residual_small_planes, residual_suite, "nv_small", 30, 0x5df1000cu, 3)
RUN_TEST(test_flying_nv_small_256, random_suite, "nv_small_256", 150, 0x5df10002u, 0)
RUN_TEST(test_flying_team, random_suite, "nv_small", 120, 0x5df10004u, 1)
RUN_TEST(test_flying_bands, random_suite, "nv_small", 24, 0x5df10005u, 2)
RUN_TEST(test_flying_team_small_planes, random_suite, "nv_small", 40, 0x5df10006u, 3)
RUN_TEST(test_flying_wide_products, random_suite, "nv_small", 300, 0x5df10008u, 5)
RUN_TEST(test_flying_one_pixel, random_suite, "nv_small", 200, 0x5df10007u, 4)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flying_nv_small),
        cmocka_unit_test(test_flying_nv_small_256),
        cmocka_unit_test(test_flying_residual),
        cmocka_unit_test(test_flying_residual_team),
        cmocka_unit_test(test_flying_residual_bands),
        cmocka_unit_test(test_flying_residual_small_planes),
        cmocka_unit_test(test_flying_team),
        cmocka_unit_test(test_flying_bands),
        cmocka_unit_test(test_flying_team_small_planes),
        cmocka_unit_test(test_flying_wide_products),
        cmocka_unit_test(test_flying_one_pixel),
        cmocka_unit_test(test_weight_reuse_between_layers),
        cmocka_unit_test(test_output_over_weights),
        cmocka_unit_test(test_output_over_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
