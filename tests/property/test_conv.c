/*
 * Property tests of the convolution pipeline (CDMA, CBUF, CSC, CMAC_A/B,
 * CACC) through the public API: random direct and pixel-input convolution
 * layers are programmed with CSB writes, run with SDP in flying mode writing
 * int8 to memory (all stages bypassed, or a BS bias add), and the output is
 * compared byte for byte with the plain-C reference of common/convlayer.c
 * (direct convolution loops, no code shared with src/; the facts it encodes
 * are listed in convlayer.h).  Also: CBUF data and weight reuse across
 * layers (also under other kernel dimensions); every pixel format the
 * ConfigROM lists, with the input converter off, on and with means;
 * batched layers on nv_large (with the SDP bias from a register or from
 * memory per element / per kernel) and their refusals; convolution, SDP
 * and max pooling fused on the fly; inputs CBUF keeps as the memory's
 * atoms (dense layers of any window, and depthwise-like ones the kernel
 * gets as lines).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/convlayer.h"
#include "common/rng.h"
#include "common/testdev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ------------------------------------------------------------------- */

static uint64_t rng_state;

/* Uniform in [lo, hi]. */
static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng_state, lo, hi);
}

static int32_t rnd_s(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(splitmix64_next(&rng_state) % (uint64_t)((int64_t)hi - lo + 1));
}

static void fill_random(void *p, size_t n)
{
    splitmix64_fill(&rng_state, p, n);
}

/* ---- running a layer ------------------------------------------------------------------ */

/* Program the layer in the next register group, apply `n` register
 * overrides and run it. */
static int run_layer_with(struct tdev *t, const struct conv *L, const uint32_t *addr,
                          const uint32_t *val, unsigned n)
{
    conv_ring_before(t, L);
    conv_pointers(t->dev, t->group);
    conv_program_cacc(t, L);
    conv_program_sdp(t, L);
    conv_program_csc(t, L);
    conv_program_cdma(t, L);
    if (L->op_mode != OP_REG) {
        conv_program_sdp_rdma(t, L);
    }
    for (unsigned i = 0; i < n; i++) {
        wr(t->dev, addr[i], val[i]);
    }
    if (L->op_mode != OP_REG) {
        wr(t->dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1); /* SDP waits for its operands */
    }
    conv_enable(t->dev);
    int rc = dlasim_run(t->dev);
    t->group ^= 1;
    conv_ring_after(t, L, rc);
    return rc;
}

/* Run the layer (with `n` register overrides) and compare the int8 output
 * with the reference. */
static void check_layer_with(struct tdev *t, const struct conv *L, const uint32_t *addr,
                             const uint32_t *val, unsigned n_over, const char *what)
{
    int rc = run_layer_with(t, L, addr, val, n_over);
    if (rc) {
        fail_msg("%s: dlasim_run = %s: %s", what, dlasim_status_name(rc),
                 dlasim_last_error(t->dev));
    }
    size_t n = (size_t)(conv_batches(L) - 1) * L->out_batch +
               (size_t)conv_div_up(L->k, t->m) * L->out_surf;
    uint8_t *out = malloc(n);
    assert_non_null(out);
    mem_rd(t->dev, CONV_OUT_ADDR, out, n);
    unsigned sat = 0;
    struct conv Lw;
    conv_ring_view(L, &Lw); /* with the kernels CSC read (the weight ring) */
    for (uint32_t b = 0; b < conv_batches(L); b++) {
        for (uint32_t k = 0; k < L->k; k++) {
            for (uint32_t y = 0; y < L->oh; y++) {
                for (uint32_t x = 0; x < L->ow; x++) {
                    int64_t v = conv_ref_cacc(conv_ref_sum(t, &Lw, b, k, y, x), L->trunc, &sat);
                    int8_t want = conv_ref_sdp(L, v, conv_ref_bias(L, k, y, x));
                    size_t at = (size_t)b * L->out_batch + (size_t)(k / t->m) * L->out_surf +
                                (size_t)y * L->out_line + (size_t)x * t->m + k % t->m;
                    if ((int8_t)out[at] != want) {
                        fail_msg("%s: out[b=%u][k=%u][y=%u][x=%u] = %d, reference %d (cacc "
                                 "%lld); stride %u,%u dilation %u,%u pad %u,%u,%u,%u out %ux%u "
                                 "truncate %u",
                                 what, b, k, y, x, (int8_t)out[at], want, (long long)v, L->sx,
                                 L->sy, L->dx, L->dy, L->pl, L->pr, L->pt, L->pb, L->ow, L->oh,
                                 L->trunc);
                    }
                }
            }
        }
    }
    /* the layer ran in the group before the current producer */
    wr(t->dev, NVDLA_CACC_S_POINTER_0, t->group ^ 1);
    assert_int_equal(rd(t->dev, NVDLA_CACC_D_OUT_SATURATION_0), sat);
    free(out);
}

static void check_layer(struct tdev *t, const struct conv *L, const char *what)
{
    check_layer_with(t, L, NULL, NULL, 0, what);
}

/* ---- random layers --------------------------------------------------------------------- */

static void finish_layer(struct tdev *t, struct conv *L)
{
    L->out_line = L->ow * t->m + rnd(0, 2) * t->m;
    L->out_surf = L->out_line * L->oh + rnd(0, 2) * t->m;
    if (L->ow == 1 && L->oh == 1) {
        /* SDP writes a 1x1 cube as consecutive atoms (the driver programs
         * it packed: kmd firmware conv.c) */
        L->out_line = L->out_surf = t->m;
    }
    L->rls = rnd(1, L->h);
    /* keep the CACC output mostly in int8 range: truncate by about the sum's size */
    uint32_t terms = conv_bytes_per_kernel(L);
    uint32_t bits = 0;
    while ((1u << bits) < terms) {
        bits++;
    }
    L->trunc = rnd(4 + bits / 2, 9 + bits / 2);
    if (rnd(0, 4) == 0) {
        L->trunc = rnd(0, 31);
    }
    L->bias_en = (int)rnd(0, 1);
    L->bias = rnd_s(-200, 200);
    L->wt = malloc((size_t)L->k * conv_bytes_per_kernel(L));
    assert_non_null(L->wt);
    fill_random(L->wt, (size_t)L->k * conv_bytes_per_kernel(L));
}

/* Input lines fetched and padding values of a layer whose geometry fits. */
static void random_padding(struct conv *L)
{
    L->fetch_h = L->h;
    L->pad_value = rnd(0, 0xffff);
    L->cdma_pad = rnd(0, 0xffff);
}

/* A random direct-convolution geometry; 0 when it does not fit CBUF. */
static int random_feature_geometry(struct tdev *t, struct conv *L, uint32_t max_c,
                                   uint32_t batches)
{
    memset(L, 0, sizeof(*L));
    L->batches = batches;
    L->w = rnd(0, 5) ? rnd(1, 12) : 1;
    L->h = L->w == 1 && rnd(0, 1) ? 1 : rnd(1, 10);
    L->c = rnd(1, max_c);
    L->k = rnd(1, 20);
    L->kw = rnd(1, 5);
    L->kh = rnd(1, 5);
    L->sx = rnd(1, 3);
    L->sy = rnd(1, 3);
    L->dx = rnd(1, 3);
    L->dy = rnd(1, 3);
    L->pl = rnd(0, 3);
    L->pr = rnd(0, 3);
    L->pt = rnd(0, 3);
    L->pb = rnd(0, 3);
    L->skip_weight_rls = (int)rnd(0, 1);
    L->skip_data_rls = (int)rnd(0, 1);
    int64_t ew = (int64_t)(L->kw - 1) * L->dx + 1, eh = (int64_t)(L->kh - 1) * L->dy + 1;
    int64_t span_w = (int64_t)L->pl + L->w + L->pr - ew;
    int64_t span_h = (int64_t)L->pt + L->h + L->pb - eh;
    if (span_w < 0 || span_h < 0) {
        return 0;
    }
    L->ow = (uint32_t)(span_w / L->sx + 1);
    L->oh = (uint32_t)(span_h / L->sy + 1);
    return conv_plan_banks(t, L);
}

/* A random direct-convolution layer that fits CBUF. */
static void random_feature_layer(struct tdev *t, struct conv *L, uint32_t max_c,
                                 uint32_t batches)
{
    while (!random_feature_geometry(t, L, max_c, batches)) {
    }
    random_padding(L);
    L->line_stride = L->w * t->m + rnd(0, 3) * t->m;
    L->surf_stride = L->line_stride * L->h + rnd(0, 3) * t->m;
    if (rnd(0, 3) == 0) {
        L->line_stride = L->w * t->m;
        L->surf_stride = L->line_stride * L->h;
    }
    if (L->w == 1 && L->h == 1 && rnd(0, 1)) {
        /* a packed 1x1 cube is read as consecutive atoms (vmod
         * NV_NVDLA_CDMA_dc.v is_packed_1x1), whatever D_SURF_STRIDE says */
        L->packed_1x1 = 1;
        L->surf_stride = t->m;
    }
    L->in = malloc((size_t)conv_batches(L) * L->c * L->h * L->w);
    assert_non_null(L->in);
    fill_random(L->in, (size_t)conv_batches(L) * L->c * L->h * L->w);
    if (rnd(0, 3) == 0) {
        /* the input converter on feature data: signed input, D_CVT_OFFSET */
        L->cvt_en = 1;
        L->sign = 1;
        L->cvt_off = rnd_s(-300, 300);
        L->cvt_scale = rnd_s(-600, 600);
        L->cvt_trunc = rnd(0, 10);
    }
    finish_layer(t, L);
}

/* The input converter of a pixel layer: random, off, on with D_CVT_OFFSET,
 * or on with the per-channel means. */
enum cvt_mode { CVT_RANDOM, CVT_OFF, CVT_OFFSET, CVT_MEAN };

/* A random pixel-input geometry in format f (NULL: random); 0 when it does
 * not fit CBUF. */
static int random_pixel_geometry(struct tdev *t, struct conv *L, const struct tfmt *f)
{
    memset(L, 0, sizeof(*L));
    L->pixel = 1;
    L->fmt = f ? f : &conv_fmts[rnd(0, conv_n_fmts - 1)];
    L->c = conv_fmt_elems(L->fmt);
    L->w = rnd(1, 24);
    L->h = rnd(1, 10);
    L->k = rnd(1, 12);
    L->kw = rnd(1, 4);
    L->kh = rnd(1, 5);
    L->sx = rnd(1, 3);
    L->sy = rnd(1, 3);
    L->dx = L->dy = 1;
    L->pl = rnd(0, 3);
    L->pr = rnd(0, 3);
    L->pt = rnd(0, 2);
    L->pb = rnd(0, 2);
    L->x_off = rnd(0, t->m / conv_fmt_bpp0(L->fmt) - 1);
    L->extra_entries = rnd(0, 3) ? 0 : rnd(1, 2);
    L->skip_weight_rls = (int)rnd(0, 1);
    if (L->pl + L->w + L->pr < L->kw || L->pt + L->h + L->pb < L->kh) {
        return 0;
    }
    L->ow = (L->pl + L->w + L->pr - L->kw) / L->sx + 1;
    L->oh = (L->pt + L->h + L->pb - L->kh) / L->sy + 1;
    uint32_t kc = L->kw * L->c;
    L->post_ext = 0;
    /* post-extension only with a horizontal stride of 1: with larger ones the
     * RTL's data loader reads other pixels than this ideal reference
     * (src/sim/nvdla/csc.c post_ext_sources); those are graded on the RTL
     * (tests/traces/rtl-graded/rg_imgpe_*) */
    if (L->sx != 1) {
        kc = UINT32_MAX;
    }
    if (kc <= t->ac / 4 && rnd(0, 2) == 0) {
        L->post_ext = 2;
    } else if (kc <= t->ac / 2 && rnd(0, 1)) {
        L->post_ext = 1;
    }
    return conv_plan_banks(t, L);
}

/* A random pixel-input layer that fits CBUF, in format f (NULL: random). */
static void random_pixel_layer(struct tdev *t, struct conv *L, const struct tfmt *f,
                               enum cvt_mode cvt)
{
    while (!random_pixel_geometry(t, L, f)) {
    }
    random_padding(L);
    L->cvt_en = cvt == CVT_RANDOM ? (int)rnd(0, 1) : cvt != CVT_OFF;
    L->mean_en = cvt == CVT_RANDOM ? (int)rnd(0, 1) : cvt == CVT_MEAN;
    L->sign = (int)rnd(0, 1);
    L->cvt_off = rnd_s(-300, 300);
    L->cvt_scale = rnd_s(-600, 600);
    L->cvt_trunc = rnd(0, 10);
    for (int i = 0; i < 4; i++) {
        L->mean[i] = rnd_s(-300, 300);
    }
    unsigned bpp0 = conv_fmt_bpp0(L->fmt);
    L->line_stride = conv_round_up((L->x_off + L->w) * bpp0, t->m) + rnd(0, 2) * t->m;
    L->img0 = malloc((size_t)L->line_stride * L->h);
    assert_non_null(L->img0);
    fill_random(L->img0, (size_t)L->line_stride * L->h);
    if (L->fmt->semi) {
        L->uv_stride = conv_round_up((L->x_off * 2) % t->m + L->w * 2, t->m) + rnd(0, 2) * t->m;
        L->img1 = malloc((size_t)L->uv_stride * L->h);
        assert_non_null(L->img1);
        fill_random(L->img1, (size_t)L->uv_stride * L->h);
    }
    finish_layer(t, L);
}

/* ---- tests ------------------------------------------------------------------------------- */

/*
 * A random batched direct convolution: batch b of the input at D_DAIN_ADDR
 * + b * D_BATCH_STRIDE, the same kernels for every batch, batch b of the
 * output written by SDP at D_DST_BASE_ADDR + b * D_DST_BATCH_STRIDE (kmd
 * firmware conv.c / sdp.c program D_BATCH_NUMBER in CDMA, CSC, CACC, SDP and
 * SDP_RDMA, D_BATCH_STRIDE in CDMA, D_DST_BATCH_STRIDE in SDP); the BS
 * operand, from a register or from memory per element or per kernel, is
 * the same for every batch.
 */
static void random_batch_layer(struct tdev *t, struct conv *L, uint32_t max_batches)
{
    random_feature_layer(t, L, 70, rnd(2, max_batches));
    uint32_t surfaces = conv_div_up(L->c, t->m);
    L->batch_stride = surfaces * L->surf_stride + rnd(0, 3) * t->m;
    L->out_batch = conv_div_up(L->k, t->m) * L->out_surf + rnd(0, 2) * t->m;
    L->op_mode = rnd(0, 2);
    if (L->op_mode == OP_PER_ELEMENT) {
        L->op_line = L->ow * t->m + rnd(0, 1) * t->m;
        L->op_surf = L->op_line * L->oh + rnd(0, 1) * t->m;
        if (L->ow == 1 && L->oh == 1) {
            L->op_line = L->op_surf = t->m; /* a 1x1 cube is read packed */
        }
        L->op = malloc((size_t)L->k * L->oh * L->ow);
        assert_non_null(L->op);
        fill_random(L->op, (size_t)L->k * L->oh * L->ow);
    } else if (L->op_mode == OP_PER_KERNEL) {
        L->op = malloc(L->k);
        assert_non_null(L->op);
        fill_random(L->op, L->k);
    }
}

enum kind { FEATURE, PIXEL, BATCH };

/* n random layers of a kind on one device; arg: the most channels of a
 * feature layer, the most batches of a batched one. */
static void random_layers(const char *config, uint64_t seed, unsigned n, enum kind kind,
                          uint32_t arg)
{
    struct tdev t;
    char what[160];
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    for (unsigned i = 0; i < n; i++) {
        struct conv L;
        if (kind == FEATURE) {
            random_feature_layer(&t, &L, arg, 1);
            snprintf(what, sizeof(what), "%s feature layer %u (%ux%ux%u k%ux%ux%u)", config, i,
                     L.w, L.h, L.c, L.kw, L.kh, L.k);
        } else if (kind == PIXEL) {
            random_pixel_layer(&t, &L, NULL, CVT_RANDOM);
            snprintf(what, sizeof(what),
                     "%s pixel layer %u (fmt %u %ux%u x_off %u k%ux%ux%u ext %u)", config, i,
                     L.fmt->id, L.w, L.h, L.x_off, L.kw, L.kh, L.k, L.post_ext);
        } else {
            random_batch_layer(&t, &L, arg);
            snprintf(what, sizeof(what),
                     "%s batch layer %u (%u x %ux%ux%u k%ux%ux%u, operand %d)", config, i,
                     L.batches, L.w, L.h, L.c, L.kw, L.kh, L.k, (int)L.op_mode);
        }
        conv_write(&t, &L);
        check_layer(&t, &L, what);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

/* ---- fused: CACC -> SDP -> PDP on the fly ------------------------------------------- */

#define POOL_ADDR 0xb0000000ull

struct pool {
    uint32_t k, s;     /* square max-pooling window and stride */
    uint32_t ow, oh;   /* pooled size */
};

/* PDP reads SDP's output on the fly and writes the pooled cube packed. */
static void program_pdp_on_the_fly(struct tdev *t, const struct conv *L, const struct pool *P)
{
    uint32_t line = P->ow * t->m;
    wr(t->dev, NVDLA_PDP_S_POINTER_0, t->group);
    wr(t->dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, L->ow - 1);
    wr(t->dev, NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, L->oh - 1);
    wr(t->dev, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, L->k - 1);
    wr(t->dev, NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH_0, P->ow - 1);
    wr(t->dev, NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT_0, P->oh - 1);
    wr(t->dev, NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL_0, L->k - 1);
    wr(t->dev, NVDLA_PDP_D_OPERATION_MODE_CFG_0,
       F(PDP, D_OPERATION_MODE_CFG, POOLING_METHOD,
         NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD_POOLING_METHOD_MAX) |
           F(PDP, D_OPERATION_MODE_CFG, FLYING_MODE,
             NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_ON_FLYING));
    wr(t->dev, NVDLA_PDP_D_PARTIAL_WIDTH_IN_0,
       F(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST, L->ow - 1));
    wr(t->dev, NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0,
       F(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_FIRST, P->ow - 1));
    wr(t->dev, NVDLA_PDP_D_POOLING_KERNEL_CFG_0,
       F(PDP, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, P->k - 1) |
           F(PDP, D_POOLING_KERNEL_CFG, KERNEL_HEIGHT, P->k - 1) |
           F(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH, P->s - 1) |
           F(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT, P->s - 1));
    wr(t->dev, NVDLA_PDP_D_POOLING_PADDING_CFG_0, 0);
    wr(t->dev, NVDLA_PDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(POOL_ADDR >> 32));
    wr(t->dev, NVDLA_PDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)POOL_ADDR);
    wr(t->dev, NVDLA_PDP_D_DST_LINE_STRIDE_0, line);
    wr(t->dev, NVDLA_PDP_D_DST_SURFACE_STRIDE_0, line * P->oh);
    wr(t->dev, NVDLA_PDP_D_DST_RAM_CFG_0, 1);
    wr(t->dev, NVDLA_PDP_D_DATA_FORMAT_0, 0);
}

/* Convolution, CACC, SDP and max pooling as one hardware layer: the pooled
 * cube must equal max pooling of the reference SDP output. */
static void check_fused_layer(struct tdev *t, const struct conv *L, const struct pool *P,
                              const char *what)
{
    const uint32_t sdp_mode = NVDLA_SDP_D_FEATURE_MODE_CFG_0;
    const uint32_t to_pdp =
        F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
        F(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST_PDP);
    program_pdp_on_the_fly(t, L, P);
    wr(t->dev, NVDLA_PDP_D_OP_ENABLE_0, 1);
    int rc = run_layer_with(t, L, &sdp_mode, &to_pdp, 1);
    if (rc) {
        fail_msg("%s: dlasim_run = %s: %s", what, dlasim_status_name(rc),
                 dlasim_last_error(t->dev));
    }
    uint32_t status = rd(t->dev, NVDLA_GLB_S_INTR_STATUS_0);
    assert_true(status & (NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK |
                          NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS1__MASK));
    wr(t->dev, NVDLA_GLB_S_INTR_STATUS_0, status);

    size_t n = (size_t)conv_div_up(L->k, t->m) * P->ow * P->oh * t->m;
    uint8_t *out = malloc(n);
    int8_t *sdp = malloc((size_t)L->k * L->oh * L->ow);
    assert_non_null(out);
    assert_non_null(sdp);
    unsigned sat = 0;
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t y = 0; y < L->oh; y++) {
            for (uint32_t x = 0; x < L->ow; x++) {
                sdp[((size_t)k * L->oh + y) * L->ow + x] =
                    conv_ref_sdp(L,
                                 conv_ref_cacc(conv_ref_sum(t, L, 0, k, y, x), L->trunc, &sat),
                                 conv_ref_bias(L, k, y, x));
            }
        }
    }
    mem_rd(t->dev, POOL_ADDR, out, n);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t py = 0; py < P->oh; py++) {
            for (uint32_t px = 0; px < P->ow; px++) {
                int want = -128;
                for (uint32_t dy = 0; dy < P->k; dy++) {
                    for (uint32_t dx = 0; dx < P->k; dx++) {
                        int v = sdp[((size_t)k * L->oh + py * P->s + dy) * L->ow + px * P->s + dx];
                        want = v > want ? v : want;
                    }
                }
                size_t at = (size_t)(k / t->m) * P->ow * P->oh * t->m +
                            ((size_t)py * P->ow + px) * t->m + k % t->m;
                if ((int8_t)out[at] != want) {
                    fail_msg("%s: pooled[k=%u][y=%u][x=%u] = %d, reference %d", what, k, py, px,
                             (int8_t)out[at], want);
                }
            }
        }
    }
    free(sdp);
    free(out);
}

static void fused_layers(const char *config, uint64_t seed, unsigned count)
{
    struct tdev t;
    struct conv L;
    char what[160];
    tdev_open(&t, config, &rng_state);
    rng_state = seed;
    for (unsigned i = 0; i < count;) {
        random_feature_layer(&t, &L, 40, 1);
        struct pool P;
        P.k = rnd(1, 3);
        P.s = rnd(1, P.k);
        if (L.ow < P.k || L.oh < P.k || L.ow * L.oh == 1) {
            conv_free(&L);
            continue;
        }
        P.ow = (L.ow - P.k) / P.s + 1;
        P.oh = (L.oh - P.k) / P.s + 1;
        conv_write(&t, &L);
        snprintf(what, sizeof(what), "%s fused layer %u (%ux%ux%u k%ux%u -> %ux%ux%u, pool %u/%u)",
                 config, i, L.w, L.h, L.c, L.kw, L.kh, L.ow, L.oh, L.k, P.k, P.s);
        check_fused_layer(&t, &L, &P, what);
        conv_free(&L);
        i++;
    }
    dlasim_destroy(t.dev);
}

/* A stride-1 layer keeping its size: w and h in [wlo, whi], c input
 * channels in [clo, chi], k kernels in [klo, khi], 1x1 or (with may_3x3)
 * 3x3 padded; 0 when it does not fit CBUF. */
static int same_size_geometry(struct tdev *t, struct conv *L, uint32_t wlo, uint32_t whi,
                              uint32_t clo, uint32_t chi, uint32_t klo, uint32_t khi, int may_3x3)
{
    memset(L, 0, sizeof(*L));
    L->batches = 1;
    L->w = rnd(wlo, whi);
    L->h = rnd(wlo, whi);
    L->c = rnd(clo, chi);
    L->k = rnd(klo, khi);
    L->kw = L->kh = may_3x3 && !rnd(0, 1) ? 3 : 1; /* (rnd 1: 1x1) */
    L->sx = L->sy = L->dx = L->dy = 1;
    L->pl = L->pr = L->pt = L->pb = L->kw / 2;
    L->ow = L->w;
    L->oh = L->h;
    return conv_plan_banks(t, L);
}

/* A layer whose SDP output is large enough for the device's team
 * (src/sim/nvdla/sdp.c SDP_TEAM_MIN_ELEMS, 7,168 values): up to 28x28
 * outputs of 40-72 kernels, 1x1 or 3x3. */
static int large_fused_geometry(struct tdev *t, struct conv *L)
{
    return same_size_geometry(t, L, 16, 28, 1, 16, 40, 72, 1);
}

/* One surface of input (8 channels or fewer) of 68-100 KB, as a
 * depthwise block's: CDMA places it in CBUF in parts of lines on the team
 * (cdma.c lent_cube_put; a cube from 32 KB goes to the team). */
static int one_large_surface_geometry(struct tdev *t, struct conv *L)
{
    return same_size_geometry(t, L, 92, 112, 1, 8, 1, 8, 1);
}

/* Inputs of 28-64 KB in 6-8 surfaces (MobileNetV2's 7x7x960 is 47 KB):
 * from 32 KB CDMA transposes them on the team (cdma.c FETCH_TEAM_BYTES),
 * surfaces a few to an item. */
static int many_surfaces_geometry(struct tdev *t, struct conv *L)
{
    return same_size_geometry(t, L, 24, 32, 48, 64, 1, 16, 0);
}

/* Fused layers of `geometry` on a device of two threads whose SDP runs on
 * its team and hands PDP the int8 cube the team's items wrote (sdp.c
 * run_on_team): the pooled cube must equal pooling of the reference SDP
 * output, and SDP's status what a one-thread device shows. */
static void fused_layers_on_team(uint64_t seed, unsigned count,
                                 int (*geometry)(struct tdev *, struct conv *))
{
    struct tdev t[2];
    rng_state = seed;
    for (int k = 0; k < 2; k++) {
        struct dlasim_options o;
        memset(&o, 0, sizeof o);
        o.config = "nv_small";
        o.threads = k == 0 ? 2 : 1;
        o.threads_always = 1; /* the team whatever the host's cores cost */
        tdev_open(&t[k], "nv_small", &rng_state);
        dlasim_destroy(t[k].dev);
        t[k].dev = tdev_create(&o);
    }
    char what[160];
    for (unsigned i = 0; i < count;) {
        struct conv L;
        while (!geometry(&t[0], &L)) {
        }
        random_padding(&L);
        L.line_stride = L.w * t[0].m;
        L.surf_stride = L.line_stride * L.h;
        L.in = malloc((size_t)L.c * L.h * L.w);
        assert_non_null(L.in);
        fill_random(L.in, (size_t)L.c * L.h * L.w);
        finish_layer(&t[0], &L);
        struct pool P;
        P.k = rnd(1, 3);
        P.s = rnd(1, P.k);
        P.ow = (L.ow - P.k) / P.s + 1;
        P.oh = (L.oh - P.k) / P.s + 1;
        uint32_t status[2];
        for (int k = 0; k < 2; k++) {
            conv_write(&t[k], &L);
            snprintf(what, sizeof(what), "fused layer %u on %d thread(s) (%ux%ux%u k%ux%u -> "
                     "%ux%ux%u, pool %u/%u)", i, k == 0 ? 2 : 1, L.w, L.h, L.c, L.kw, L.kh,
                     L.ow, L.oh, L.k, P.k, P.s);
            check_fused_layer(&t[k], &L, &P, what);
            status[k] = rd(t[k].dev, NVDLA_SDP_D_STATUS_0);
        }
        if (status[0] != status[1]) {
            fail_msg("%s: SDP D_STATUS 0x%x on two threads, 0x%x on one", what, status[0],
                     status[1]);
        }
        conv_free(&L);
        i++;
    }
    dlasim_destroy(t[0].dev);
    dlasim_destroy(t[1].dev);
}

/* ---- batches (nv_large) ---------------------------------------------------------------- */

static void test_batches_nv_large(void **state)
{
    (void)state;
    random_layers("nv_large", 0x5eed000du, 40, BATCH, 6);
    random_layers("nv_large", 0x5eed000eu, 4, BATCH, 32); /* up to the maximum batch size */
}

/* A batched layer (with its BS operand from memory when `mem_op`) with one
 * register changed is refused naming `reg`; with `pdp` PDP is enabled for
 * on-the-fly input as well. */
static void expect_batch_refusal(uint32_t addr, uint32_t val, int pdp, int mem_op,
                                 const char *reg)
{
    struct tdev t;
    struct conv L;
    tdev_open(&t, "nv_large", &rng_state);
    for (;;) {
        random_batch_layer(&t, &L, 4);
        if ((L.op_mode != OP_REG) == mem_op) {
            break;
        }
        conv_free(&L);
    }
    conv_write(&t, &L);
    if (pdp) {
        struct pool P = { 1, 1, L.ow, L.oh };
        program_pdp_on_the_fly(&t, &L, &P);
        wr(t.dev, NVDLA_PDP_D_OP_ENABLE_0, 1);
    }
    expect_error(t.dev, run_layer_with(&t, &L, &addr, &val, 1), DLASIM_ERR_PROG, reg);
    conv_free(&L);
    dlasim_destroy(t.dev);
}

static void test_batch_refusals_nv_large(void **state)
{
    (void)state;
    rng_state = 0x5eed000fu;
    /* CSC, CACC or SDP disagreeing with CDMA about the batches */
    expect_batch_refusal(NVDLA_CSC_D_BATCH_NUMBER_0, 0, 0, 0, "CSC: D_BATCH_NUMBER_0.BATCHES");
    expect_batch_refusal(NVDLA_CACC_D_BATCH_NUMBER_0, 0, 0, 0, "CACC: D_BATCH_NUMBER_0.BATCHES");
    expect_batch_refusal(NVDLA_SDP_D_FEATURE_MODE_CFG_0,
                         F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, 1), 0, 0,
                         "SDP: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=0");
    /* SDP_RDMA replays its operands per batch: it must count SDP's batches */
    expect_batch_refusal(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
                         F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE, 1), 0, 1,
                         "SDP_RDMA: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=0");
    /* PDP on the fly has no batches */
    expect_batch_refusal(NVDLA_SDP_D_FEATURE_MODE_CFG_0,
                         F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, 1) |
                             F(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, 1) |
                             F(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, 1),
                         1, 0, "OUTPUT_DST=PDP");
    /* pixel input has no batches */
    expect_batch_refusal(NVDLA_CDMA_D_DATAIN_FORMAT_0, F(CDMA, D_DATAIN_FORMAT, DATAIN_FORMAT, 1),
                         0, 0, "pixel input has no batches");
}

/* ---- layers chained on the worker (overlap) ---------------------------------------- */

#define CHAIN_STEP 0x100000u /* layer j's input, weights, output at the bases + j * this */

/* Layer L in register group g with input, weights and output j. */
static void program_chained(struct tdev *t, const struct conv *L, unsigned g, unsigned j)
{
    conv_pointers(t->dev, g);
    conv_program_cacc(t, L);
    conv_program_sdp(t, L);
    conv_program_csc(t, L);
    conv_program_cdma(t, L);
    wr(t->dev, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)CONV_IN_ADDR + j * CHAIN_STEP);
    wr(t->dev, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0, (uint32_t)CONV_WT_ADDR + j * CHAIN_STEP);
    wr(t->dev, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)CONV_OUT_ADDR + j * CHAIN_STEP);
    conv_enable(t->dev);
}

/* What the host sees after a step: its status, the interrupts (then
 * acknowledged), S_STATUS and the pointers of the convolution's units. */
static void after_step(struct tdev *t, uint32_t *seen)
{
    seen[0] = (uint32_t)dlasim_step(t->dev);
    seen[1] = rd(t->dev, NVDLA_GLB_S_INTR_STATUS_0);
    wr(t->dev, NVDLA_GLB_S_INTR_STATUS_0, seen[1]);
    seen[2] = rd(t->dev, NVDLA_CDMA_S_STATUS_0);
    seen[3] = rd(t->dev, NVDLA_CACC_S_STATUS_0);
    seen[4] = rd(t->dev, NVDLA_SDP_S_STATUS_0);
    seen[5] = rd(t->dev, NVDLA_CDMA_S_POINTER_0);
    seen[6] = rd(t->dev, NVDLA_SDP_S_POINTER_0);
}

/* A square layer of c channels with 3x3 diagonal kernels, pad 1, stride 1
 * or 2, lo-hi pixels a side, that fits CBUF: a depthwise block as the
 * compiler lowers one (8 or 16 channels), or a wider depthwise layer. */
static void diagonal_layer_of(struct tdev *t, struct conv *L, uint32_t c, uint32_t lo,
                              uint32_t hi)
{
    do {
        memset(L, 0, sizeof *L);
        L->c = L->k = c;
        L->w = L->h = rnd(lo, hi);
        L->kw = L->kh = 3;
        L->sx = L->sy = rnd(1, 2);
        L->dx = L->dy = 1;
        L->pl = L->pr = L->pt = L->pb = 1;
        L->ow = (L->w - 1) / L->sx + 1;
        L->oh = (L->h - 1) / L->sy + 1;
    } while (!conv_plan_banks(t, L));
    random_padding(L);
    L->line_stride = L->w * t->m;
    L->surf_stride = L->line_stride * L->h;
    finish_layer(t, L);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t ch = 0; ch < L->c; ch++) {
            if (ch != k) {
                memset(L->wt + ((size_t)k * L->c + ch) * 9, 0, 9);
            }
        }
    }
}

/* diagonal_layer_of, 3-14 pixels a side. */
static void diagonal_layer(struct tdev *t, struct conv *L, uint32_t c)
{
    diagonal_layer_of(t, L, c, 3, 14);
}

/* A depthwise block (diagonal_layer), or a random convolution. */
static void chain_layer(struct tdev *t, struct conv *L, int dw)
{
    if (!dw) {
        random_feature_layer(t, L, 24, 1);
        return;
    }
    diagonal_layer(t, L, 8 * rnd(1, 2));
}

/* Dense layers whose input CDMA keeps as the memory's atoms (whole
 * atoms, no input converter, every line released: csc.c fetch_atoms) with
 * random kernels, strides, dilations and padding: the kernel packs its
 * cells from the atoms; every output byte the reference's. */
static void test_atoms_layers_nv_small(void **state)
{
    (void)state;
    struct tdev t;
    char what[160];
    rng_state = 0xa70b5ull;
    tdev_open(&t, "nv_small", &rng_state);
    for (unsigned i = 0; i < 24; i++) {
        struct conv L;
        random_feature_layer(&t, &L, 32, 1);
        while (L.c % 8 != 0 || L.cvt_en || L.skip_data_rls) {
            conv_free(&L);
            random_feature_layer(&t, &L, 32, 1);
        }
        L.rls = L.h;
        snprintf(what, sizeof(what), "atoms layer %u (%ux%ux%u k%ux%ux%u s%ux%u d%ux%u)", i, L.w,
                 L.h, L.c, L.kw, L.kh, L.k, L.sx, L.sy, L.dx, L.dy);
        conv_write(&t, &L);
        check_layer(&t, &L, what);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

/* Depthwise-like layers too wide for a depthwise block (40-64 channels,
 * 3x3 diagonal kernels, pad 1): CDMA keeps their input as the memory's
 * atoms (csc.c fetch_atoms) and the depthwise kernel reads them surface
 * by surface (kernels/conv_dw_s8.c dwa_range where the CPU has AVX-512
 * VNNI + VBMI, else after dla_cdma_atoms_to_planar); every output byte
 * the reference's. */
static void test_wide_diagonal_nv_small(void **state)
{
    (void)state;
    struct tdev t;
    char what[160];
    rng_state = 0xd1a90a1ull;
    tdev_open(&t, "nv_small", &rng_state);
    for (unsigned i = 0; i < 12; i++) {
        struct conv L;
        diagonal_layer(&t, &L, 8 * rnd(5, 8));
        L.in = malloc((size_t)L.c * L.h * L.w);
        assert_non_null(L.in);
        fill_random(L.in, (size_t)L.c * L.h * L.w);
        L.rls = L.h; /* every line released: nothing kept in CBUF, the atoms' case */
        snprintf(what, sizeof(what), "diagonal layer %u (%ux%ux%u k3x3 s%u)", i, L.w, L.h, L.c,
                 L.sx);
        conv_write(&t, &L);
        check_layer(&t, &L, what);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

/* Depthwise blocks of 8 or 16 channels, 40-60 pixels a side (inputs of
 * 16 KB and more: on a team, each thread computes and converts bands of
 * rows, csc.c DW_BAND_MIN_INPUT), strides 1 and 2, read where the memory
 * keeps their atoms (cdma.c atoms_view), on devices of two threads and of
 * one: every output byte the reference's.  Every third layer's kernels are
 * dense instead: CDMA decides on the shape alone (csc.c
 * dw_block_takes_atoms), so a square dense layer meets the atoms too. */
static void test_large_diagonal_blocks(void **state)
{
    (void)state;
    char what[160];
    rng_state = 0xd1a9b10cull;
    for (unsigned threads = 1; threads <= 2; threads++) {
        struct tdev t;
        struct dlasim_options o;
        memset(&o, 0, sizeof o);
        o.config = "nv_small";
        o.threads = threads;
        o.threads_always = 1; /* the team whatever the host's cores cost */
        tdev_open(&t, "nv_small", &rng_state);
        dlasim_destroy(t.dev);
        t.dev = tdev_create(&o);
        for (unsigned i = 0; i < 8; i++) {
            struct conv L;
            diagonal_layer_of(&t, &L, 8 * rnd(1, 2), 40, 60);
            if (i % 3 == 2) {
                fill_random(L.wt, (size_t)L.k * L.c * 9); /* dense */
            }
            L.in = malloc((size_t)L.c * L.h * L.w);
            assert_non_null(L.in);
            fill_random(L.in, (size_t)L.c * L.h * L.w);
            L.rls = L.h; /* every line released: the atoms' case */
            snprintf(what, sizeof(what), "%s %u on %u thread(s) (%ux%ux%u k3x3 s%u)",
                     i % 3 == 2 ? "dense layer" : "block", i, threads, L.w, L.h, L.c, L.sx);
            conv_write(&t, &L);
            check_layer(&t, &L, what);
            conv_free(&L);
        }
        dlasim_destroy(t.dev);
    }
}

/* Three convolutions, each with its own input, kernels and output: A in
 * group 0, B in group 1, both enabled, then (A completed) A again in group
 * 0 while B runs.  Overlapped, the worker runs B early and the third
 * chained after it (src/sim/nvdla/device.c try_chain), reading the groups
 * A's completion moves to while the registers still show B's; what every
 * step returns and shows (interrupts, S_STATUS, pointers) and every output
 * byte must be a stepped device's.  Most are depthwise blocks (the chain's
 * case); with `missing`, B's input is never written on strict-memory
 * devices: its error at its step, the third layer run after it all the
 * same. */
static void chained_layers(uint64_t seed, unsigned count, int missing)
{
    rng_state = seed;
    char what[200];
    for (unsigned n = 0; n < count; n++) {
        struct tdev t[2];
        for (int k = 0; k < 2; k++) {
            struct dlasim_options o;
            memset(&o, 0, sizeof o);
            o.config = "nv_small";
            o.threads = 2;
            o.threads_always = 1; /* the chain whatever the host's cores cost */
            o.overlap = k == 0;
            o.strict_mem = missing;
            tdev_open(&t[k], "nv_small", &rng_state);
            dlasim_destroy(t[k].dev);
            t[k].dev = tdev_create(&o);
        }
        struct conv L[2]; /* A, B */
        chain_layer(&t[0], &L[0], n % 4 != 3);
        chain_layer(&t[0], &L[1], n % 4 != 3 && n % 3 != 2);
        const struct conv *of[3] = {&L[0], &L[1], &L[0]};
        size_t in_bytes[3], out_bytes[3];
        uint8_t *in[3], *out[2][3];
        for (unsigned j = 0; j < 3; j++) {
            in_bytes[j] = (size_t)conv_div_up(of[j]->c, t[0].m) * of[j]->surf_stride;
            out_bytes[j] = (size_t)conv_div_up(of[j]->k, t[0].m) * of[j]->out_surf;
            in[j] = malloc(in_bytes[j]);
            assert_non_null(in[j]);
            fill_random(in[j], in_bytes[j]);
        }
        uint32_t seen[2][3][7];
        for (int k = 0; k < 2; k++) {
            for (unsigned j = 0; j < 3; j++) {
                uint8_t *wt = conv_weight_stream(&t[k], of[j]);
                mem_wr(t[k].dev, CONV_WT_ADDR + j * CHAIN_STEP, wt, of[j]->wt_bytes);
                free(wt);
                if (!(missing && j == 1)) {
                    mem_wr(t[k].dev, CONV_IN_ADDR + j * CHAIN_STEP, in[j], in_bytes[j]);
                }
                out[k][j] = calloc(1, out_bytes[j]); /* (strict memory: gaps read as written) */
                assert_non_null(out[k][j]);
                mem_wr(t[k].dev, CONV_OUT_ADDR + j * CHAIN_STEP, out[k][j], out_bytes[j]);
            }
            program_chained(&t[k], of[0], 0, 0);
            program_chained(&t[k], of[1], 1, 1);
            after_step(&t[k], seen[k][0]);
            program_chained(&t[k], of[2], 0, 2);
            after_step(&t[k], seen[k][1]);
            after_step(&t[k], seen[k][2]);
            assert_int_equal(dlasim_step(t[k].dev), 0);
            for (unsigned j = 0; j < 3; j++) {
                mem_rd(t[k].dev, CONV_OUT_ADDR + j * CHAIN_STEP, out[k][j], out_bytes[j]);
            }
        }
        snprintf(what, sizeof what, "A %ux%ux%u k%u %ux%u s%u, B %ux%ux%u k%u %ux%u s%u%s",
                 L[0].w, L[0].h, L[0].c, L[0].k, L[0].kw, L[0].kh, L[0].sx, L[1].w, L[1].h,
                 L[1].c, L[1].k, L[1].kw, L[1].kh, L[1].sx, missing ? " (B's input missing)" : "");
        for (unsigned s = 0; s < 3; s++) {
            for (unsigned i = 0; i < 7; i++) {
                if (seen[0][s][i] != seen[1][s][i]) {
                    fail_msg("%s: after step %u, value %u: 0x%x overlapped, 0x%x stepped", what,
                             s + 1, i, seen[0][s][i], seen[1][s][i]);
                }
            }
        }
        assert_int_equal((int)seen[0][1][0], missing ? DLASIM_ERR_MEM : 1);
        assert_int_equal((int)seen[0][2][0], 1);
        for (unsigned j = 0; j < 3; j++) {
            if (memcmp(out[0][j], out[1][j], out_bytes[j])) {
                fail_msg("%s: output %u differs from the stepped device's", what, j);
            }
            free(out[0][j]);
            free(out[1][j]);
            free(in[j]);
        }
        for (int k = 0; k < 2; k++) {
            dlasim_destroy(t[k].dev);
        }
        conv_free(&L[0]);
        conv_free(&L[1]);
    }
}

static void test_chained_layers(void **state)
{
    (void)state;
    chained_layers(0xC4A1ull, 32, 0);
}

static void test_chained_after_error(void **state)
{
    (void)state;
    chained_layers(0xC4A2ull, 8, 1);
}

static void test_fused_conv_sdp_pdp(void **state)
{
    (void)state;
    fused_layers("nv_small", 0x5eed00f1u, 25);
    fused_layers("nv_small_256", 0x5eed00f2u, 15);
    fused_layers_on_team(0x5eed00f3u, 12, large_fused_geometry);
    fused_layers_on_team(0x5eed00f4u, 8, one_large_surface_geometry);
    fused_layers_on_team(0x5eed00f5u, 8, many_surfaces_geometry);
}

RUN_TEST(test_feature_nv_small, random_layers, "nv_small", 0x5eed0001u, 60, FEATURE, 40)
RUN_TEST(test_feature_nv_small_256, random_layers, "nv_small_256", 0x5eed0002u, 60, FEATURE,
         100)
RUN_TEST(test_pixel_nv_small, random_layers, "nv_small", 0x5eed0003u, 60, PIXEL, 0)
RUN_TEST(test_pixel_nv_small_256, random_layers, "nv_small_256", 0x5eed0004u, 60, PIXEL, 0)

/* nv_large: 32-byte atoms, and a ConfigROM with two CIF descriptors before
 * CDMA's (the formats it lists are found by unit, not by address). */
RUN_TEST(test_pixel_nv_large, random_layers, "nv_large", 0x5eed0010u, 40, PIXEL, 0)

/*
 * Every pixel format the configuration's ConfigROM lists (CDMA
 * IMAGE_IN_FORMATS_PACKED: bit i = PIXEL_FORMAT i; _SEMI: bit i =
 * PIXEL_FORMAT 28 + i; spec 004) with the converter off, on with
 * D_CVT_OFFSET and on with the means, each with random geometry.  The ROM
 * words are read at their nv_small register addresses (NVDLA_CFGROM.rdl),
 * which nv_small_256 shares.
 */
static void listed_formats(const char *config, uint64_t seed, unsigned per_mode)
{
    static const enum cvt_mode modes[] = { CVT_OFF, CVT_OFFSET, CVT_MEAN };
    struct tdev t;
    char what[160];
    unsigned covered = 0;
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    uint32_t packed = rd(t.dev, NVDLA_CFGROM_CFGROM_CDMA_IMAGE_IN_FORMATS_PACKED_0);
    uint32_t semi = rd(t.dev, NVDLA_CFGROM_CFGROM_CDMA_IMAGE_IN_FORMATS_SEMI_0);
    for (uint32_t id = 0; id < 64; id++) {
        int listed = id < 28 ? (int)((packed >> id) & 1u) : (id < 60 && ((semi >> (id - 28)) & 1u));
        if (!listed) {
            continue;
        }
        const struct tfmt *f = conv_fmt_by_id(id);
        if (!f) {
            fail_msg("%s: the ConfigROM lists PIXEL_FORMAT %u, which this test does not know",
                     config, id);
        }
        for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
            for (unsigned i = 0; i < per_mode; i++) {
                struct conv L;
                random_pixel_layer(&t, &L, f, modes[m]);
                conv_write(&t, &L);
                snprintf(what, sizeof(what),
                         "%s format %u (%s%s) cvt mode %zu layer %u (%ux%u x_off %u sign %d)",
                         config, id, f->components, f->bits > 8 ? ", 10-bit" : "", m, i, L.w,
                         L.h, L.x_off, L.sign);
                check_layer(&t, &L, what);
                conv_free(&L);
            }
        }
        covered++;
    }
    /* R8, 8 A8B8G8R8-family, 4 10-bit, A8Y8U8V8, V8U8Y8A8, 2 semi-planar */
    assert_int_equal(covered, 17);
    dlasim_destroy(t.dev);
}

RUN_TEST(test_listed_formats_nv_small, listed_formats, "nv_small", 0x5eed000bu, 3)
RUN_TEST(test_listed_formats_nv_small_256, listed_formats, "nv_small_256", 0x5eed000cu, 3)

/* Random bytes over layer A's input and weights in memory (a layer that
 * reuses CBUF must not read them). */
static void clobber_memory(struct tdev *t, const struct conv *A)
{
    struct conv junk = *A;
    junk.in = malloc((size_t)A->c * A->h * A->w);
    junk.wt = malloc((size_t)A->k * conv_bytes_per_kernel(A));
    assert_non_null(junk.in);
    assert_non_null(junk.wt);
    fill_random(junk.in, (size_t)A->c * A->h * A->w);
    fill_random(junk.wt, (size_t)A->k * conv_bytes_per_kernel(A));
    conv_write(t, &junk);
    free(junk.in);
    free(junk.wt);
}

/*
 * Weight and full data reuse: layer A keeps its data and weights
 * (SKIP_*_RLS); memory is then overwritten; layer B with DATA_REUSE and
 * WEIGHT_REUSE must compute on what CBUF holds, not on memory.
 */
static void reuse_all(const char *config, uint64_t seed)
{
    struct tdev t;
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    for (unsigned i = 0; i < 6; i++) {
        struct conv A;
        random_feature_layer(&t, &A, 24, 1);
        A.skip_data_rls = 1;
        A.skip_weight_rls = 1;
        if (!conv_plan_banks(&t, &A)) {
            conv_free(&A);
            continue;
        }
        conv_write(&t, &A);
        check_layer(&t, &A, "reuse: layer A");

        /* clobber memory: B must not read it */
        clobber_memory(&t, &A);

        struct conv B = A;
        B.data_reuse = 1;
        B.weight_reuse = 1;
        B.skip_data_rls = 0;
        B.skip_weight_rls = 0;
        B.bias_en = 1;
        B.bias = rnd_s(-100, 100);
        B.trunc = A.trunc > 0 ? A.trunc - 1 : 0;
        check_layer(&t, &B, "reuse: layer B (DATA_REUSE + WEIGHT_REUSE)");
        conv_free(&A);
    }
    dlasim_destroy(t.dev);
}

RUN_TEST(test_reuse_nv_small, reuse_all, "nv_small", 0x5eed0005u)
RUN_TEST(test_reuse_nv_small_256, reuse_all, "nv_small_256", 0x5eed0006u)

/*
 * WEIGHT_REUSE under other kernel dimensions: CSC reads the bytes CBUF
 * holds by its own D_WEIGHT_* registers, so layer B reuses layer A's kept
 * weights as kernels of kh x kw instead of kw x kh (the same bytes, another
 * decode).  A runs twice, so that its second run finds its kernels packed
 * already and never reads the fetched bytes; memory is then overwritten,
 * and B must compute on A's bytes as its own registers lay them out
 * (reference: A's stream read at B's offsets).  Without the copy of the
 * deferred weight fetch at the end of A (csc.c, cbuf.h wt_deferred) B would
 * read the overwritten memory.
 */
static void reuse_reinterpreted(const char *config, uint64_t seed)
{
    struct tdev t;
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    unsigned ran = 0;
    for (unsigned i = 0; i < 40 && ran < 4; i++) {
        struct conv A;
        random_feature_layer(&t, &A, 24, 1);
        A.skip_data_rls = 1;
        A.skip_weight_rls = 1;
        /* B's output with the kernel's width and height swapped */
        int64_t span_w = (int64_t)A.pl + A.w + A.pr - ((int64_t)(A.kh - 1) * A.dx + 1);
        int64_t span_h = (int64_t)A.pt + A.h + A.pb - ((int64_t)(A.kw - 1) * A.dy + 1);
        if (A.kw == A.kh || span_w < 0 || span_h < 0 || !conv_plan_banks(&t, &A)) {
            conv_free(&A);
            continue;
        }
        conv_write(&t, &A);
        check_layer(&t, &A, "reinterpreted reuse: layer A");
        check_layer(&t, &A, "reinterpreted reuse: layer A again (its kernels cached)");
        uint8_t *stream = conv_weight_stream(&t, &A);

        clobber_memory(&t, &A);

        struct conv B = A;
        B.kw = A.kh;
        B.kh = A.kw;
        B.ow = (uint32_t)(span_w / B.sx + 1);
        B.oh = (uint32_t)(span_h / B.sy + 1);
        B.out_line = B.ow * t.m;
        B.out_surf = B.ow == 1 && B.oh == 1 ? t.m : B.out_line * B.oh;
        B.data_reuse = 1;
        B.weight_reuse = 1;
        B.skip_data_rls = 0;
        B.skip_weight_rls = 0;
        B.wt = malloc((size_t)B.k * conv_bytes_per_kernel(&B));
        assert_non_null(B.wt);
        for (uint32_t k = 0; k < B.k; k++) {
            for (uint32_t c = 0; c < B.c; c++) {
                for (uint32_t r = 0; r < B.kh; r++) {
                    for (uint32_t x = 0; x < B.kw; x++) {
                        B.wt[(((size_t)k * B.c + c) * B.kh + r) * B.kw + x] =
                            (int8_t)stream[conv_wt_offset(&t, &B, k, c, r, x)];
                    }
                }
            }
        }
        free(stream);
        check_layer(&t, &B, "reinterpreted reuse: layer B (WEIGHT_REUSE as kh x kw)");
        free(B.wt);
        conv_free(&A);
        ran++;
    }
    assert_int_equal(ran, 4);
    dlasim_destroy(t.dev);
}

RUN_TEST(test_reuse_reinterpreted_nv_small, reuse_reinterpreted, "nv_small", 0x5eed0016u)

/*
 * Weights rewritten by software between runs of the same layer (CSC keeps
 * the kernels it packed, per weight stream, across layers): the layer runs
 * with its weights, with one byte changed, with all of them changed, with
 * the first weights again and unchanged twice; every run must compute on
 * what memory holds at that run.
 */
static void rewritten_weights(const char *config, uint64_t seed)
{
    struct tdev t;
    char what[160];
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    for (unsigned i = 0; i < 4; i++) {
        struct conv L;
        random_feature_layer(&t, &L, 40, 1);
        size_t n = (size_t)L.k * conv_bytes_per_kernel(&L);
        int8_t *first = malloc(n);
        assert_non_null(first);
        memcpy(first, L.wt, n);
        for (unsigned step = 0; step < 5; step++) {
            if (step == 1) {
                size_t at = rnd(0, (uint32_t)(n - 1));
                L.wt[at] = (int8_t)(L.wt[at] ^ (int8_t)rnd(1, 255));
            } else if (step == 2) {
                fill_random(L.wt, n);
            } else if (step == 3) {
                memcpy(L.wt, first, n);
            }
            conv_write(&t, &L);
            snprintf(what, sizeof(what), "%s layer %u (%ux%ux%u k%ux%ux%u) weights step %u",
                     config, i, L.w, L.h, L.c, L.kw, L.kh, L.k, step);
            check_layer(&t, &L, what);
        }
        free(first);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

/*
 * The same, with the fewest writes: CSC's cache skips comparing a weight
 * stream with its copy when the memory shows no write reached the stream's
 * bytes since (src/sim/core/mem.h generations).  The layer runs again with
 * nothing written, then after only the bytes of the stream that one
 * changed weight changes are written (one byte at a time), then again with
 * nothing written, then after junk written right before and after the
 * stream; every run must compute on what memory holds.
 */
static void poked_weights(const char *config, uint64_t seed)
{
    struct tdev t;
    char what[160];
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    for (unsigned i = 0; i < 4; i++) {
        struct conv L;
        random_feature_layer(&t, &L, 40, 1);
        size_t n = (size_t)L.k * conv_bytes_per_kernel(&L);
        conv_write(&t, &L);
        for (unsigned step = 0; step < 6; step++) {
            if (step == 2 || step == 4) {
                uint8_t *old = conv_weight_stream(&t, &L);
                size_t at = rnd(0, (uint32_t)(n - 1));
                L.wt[at] = (int8_t)(L.wt[at] ^ (int8_t)rnd(1, 255));
                uint8_t *now = conv_weight_stream(&t, &L);
                for (size_t b = 0; b < L.wt_bytes; b++) {
                    if (old[b] != now[b]) {
                        mem_wr(t.dev, CONV_WT_ADDR + b, &now[b], 1);
                    }
                }
                free(old);
                free(now);
            } else if (step == 5) {
                uint8_t junk[64];
                fill_random(junk, sizeof(junk));
                mem_wr(t.dev, CONV_WT_ADDR - sizeof(junk), junk, sizeof(junk));
                mem_wr(t.dev, CONV_WT_ADDR + L.wt_bytes, junk, sizeof(junk));
            }
            snprintf(what, sizeof(what), "%s layer %u (%ux%ux%u k%ux%ux%u) poked weights step %u",
                     config, i, L.w, L.h, L.c, L.kw, L.kh, L.k, step);
            check_layer(&t, &L, what);
        }
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

/*
 * CDMA defers copying a weight stream that memory holds unchanged (CSC's
 * cache finds the kernels by the stream's origin and never needs its
 * bytes); the bytes CBUF keeps past the layer must still be the fetched
 * ones.  Layer L runs; another layer Y runs with its weights elsewhere in
 * memory (so CBUF's copy of a stream is Y's); L runs again with one more
 * data bank (the ring pointers restart on a bank change, so its stream is
 * the memory's alone, and its kernels are found cached by origin: the copy
 * is deferred); then memory is rewritten by the next layer's weights (L's
 * shape with new ones), which reads the entries the repeat left in the
 * weight ring first.  The reference models the ring (conv_ring_before/
 * after).  Some repeats must leave entries in the ring, or the case was
 * not reached.
 */
#define ALT_WT_ADDR (CONV_WT_ADDR + 0x04000000ull)

static void deferred_weight_tail(const char *config, uint64_t seed)
{
    static const uint32_t wt_addr[2] = {NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0,
                                        NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0};
    static const uint32_t alt[2] = {(uint32_t)(ALT_WT_ADDR >> 32), (uint32_t)ALT_WT_ADDR};
    struct tdev t;
    char what[160];
    unsigned tails = 0;
    rng_state = seed;
    tdev_open(&t, config, &rng_state);
    for (unsigned i = 0; i < 32; i++) {
        struct conv L, Y;
        random_feature_layer(&t, &L, 40, 1);
        if (L.data_bank + L.weight_bank >= t.banks) {
            conv_free(&L);
            continue;
        }
        conv_write(&t, &L);
        snprintf(what, sizeof(what), "%s layer %u (%ux%ux%u k%ux%ux%u)", config, i, L.w, L.h,
                 L.c, L.kw, L.kh, L.k);
        check_layer(&t, &L, what);

        random_feature_layer(&t, &Y, 40, 1);
        uint8_t *ys = conv_weight_stream(&t, &Y);
        mem_wr(t.dev, ALT_WT_ADDR, ys, Y.wt_bytes);
        free(ys);
        conv_write_feature(&t, &Y);
        snprintf(what, sizeof(what), "%s layer %u's other layer, weights elsewhere", config, i);
        check_layer_with(&t, &Y, wt_addr, alt, 2, what);
        conv_free(&Y);

        struct conv X = L; /* L's weights are still in memory, untouched */
        X.data_bank++;
        conv_write_feature(&t, &X);
        snprintf(what, sizeof(what), "%s layer %u again, one more data bank", config, i);
        check_layer(&t, &X, what);
        tails += conv_ring_lag() != 0;

        struct conv M = X; /* the successor: new weights at L's address */
        size_t n = (size_t)L.k * conv_bytes_per_kernel(&L);
        M.wt = malloc(n);
        assert_non_null(M.wt);
        fill_random(M.wt, n);
        conv_write(&t, &M);
        snprintf(what, sizeof(what), "%s layer %u's successor", config, i);
        check_layer(&t, &M, what);
        free(M.wt);
        conv_free(&L);
    }
    assert_true(tails > 0);
    dlasim_destroy(t.dev);
}

RUN_TEST(test_deferred_weight_tail_nv_small, deferred_weight_tail, "nv_small", 0x5eed0019u)
RUN_TEST(test_deferred_weight_tail_nv_large, deferred_weight_tail, "nv_large", 0x5eed001au)
RUN_TEST(test_rewritten_weights_nv_small, rewritten_weights, "nv_small", 0x5eed0015u)
RUN_TEST(test_poked_weights_nv_small, poked_weights, "nv_small", 0x5eed0017u)
RUN_TEST(test_poked_weights_nv_large, poked_weights, "nv_large", 0x5eed0018u)
RUN_TEST(test_rewritten_weights_nv_large, rewritten_weights, "nv_large", 0x5eed0016u)

/*
 * Partial data reuse (split of a layer by height): layer A releases only
 * RLS_SLICES+1 of its lines; layer B with DATA_REUSE fetches new lines and
 * reads the lines A left followed by them.
 */
static void test_partial_reuse(void **state)
{
    (void)state;
    struct tdev t;
    rng_state = 0x5eed0007u;
    tdev_open(&t, "nv_small", &rng_state);
    for (unsigned i = 0; i < 8; i++) {
        struct conv A;
        random_feature_layer(&t, &A, 16, 1);
        if (A.h < 2) {
            conv_free(&A);
            continue;
        }
        A.skip_data_rls = 0;
        A.rls = rnd(1, A.h - 1);
        conv_write(&t, &A);
        check_layer(&t, &A, "partial reuse: layer A");

        uint32_t left = A.h - A.rls, more = rnd(1, 4);
        /* B's input: the lines A left, then `more` new lines */
        struct conv B = A;
        B.h = left + more;
        B.fetch_h = more;
        B.data_reuse = 1;
        B.pt = rnd(0, 2);
        B.pb = rnd(0, 2);
        int64_t eh = (int64_t)(B.kh - 1) * B.dy + 1;
        if ((int64_t)B.pt + B.h + B.pb < eh) {
            B.pb = (uint32_t)(eh - B.h - B.pt);
        }
        B.oh = (uint32_t)(((int64_t)B.pt + B.h + B.pb - eh) / B.sy + 1);
        B.rls = B.h;
        if ((B.h) * B.entries > B.data_bank * t.depth) {
            conv_free(&A);
            continue;
        }
        B.out_surf = B.out_line * B.oh;
        B.in = malloc((size_t)B.c * B.h * B.w);
        assert_non_null(B.in);
        for (uint32_t c = 0; c < B.c; c++) {
            for (uint32_t y = 0; y < B.h; y++) {
                for (uint32_t x = 0; x < B.w; x++) {
                    int8_t v = y < left ? A.in[((size_t)c * A.h + A.rls + y) * A.w + x]
                                        : (int8_t)splitmix64_next(&rng_state);
                    B.in[((size_t)c * B.h + y) * B.w + x] = v;
                }
            }
        }
        /* memory holds only the new lines */
        struct conv fresh = B;
        fresh.in = malloc((size_t)B.c * more * B.w);
        assert_non_null(fresh.in);
        for (uint32_t c = 0; c < B.c; c++) {
            memcpy(fresh.in + (size_t)c * more * B.w, B.in + ((size_t)c * B.h + left) * B.w,
                   (size_t)more * B.w);
        }
        fresh.surf_stride = B.line_stride * more + t.m;
        B.surf_stride = fresh.surf_stride;
        conv_write_feature(&t, &fresh);
        free(fresh.in);
        check_layer(&t, &B, "partial reuse: layer B");
        free(B.in);
        conv_free(&A);
    }
    dlasim_destroy(t.dev);
}

/* A direct layer with stride and dilation 1 and equal padding on every side. */
static void simple_layer(struct tdev *t, struct conv *L, uint32_t w, uint32_t h, uint32_t c,
                         uint32_t kw, uint32_t kh, uint32_t pad, uint32_t k)
{
    memset(L, 0, sizeof(*L));
    L->w = w;
    L->h = L->fetch_h = h;
    L->c = c;
    L->k = k;
    L->kw = kw;
    L->kh = kh;
    L->sx = L->sy = L->dx = L->dy = 1;
    L->pl = L->pr = L->pt = L->pb = pad;
    L->ow = w + 2 * pad - kw + 1;
    L->oh = h + 2 * pad - kh + 1;
    L->rls = h;
    assert_true(conv_plan_banks(t, L));
    L->line_stride = w * t->m;
    L->surf_stride = w * h * t->m;
    L->out_line = L->ow * t->m;
    L->out_surf = L->out_line * L->oh;
    L->pad_value = 0x80; /* -128 */
    L->in = malloc((size_t)c * h * w);
    L->wt = malloc((size_t)k * conv_bytes_per_kernel(L));
    assert_non_null(L->in);
    assert_non_null(L->wt);
}

/* CACC rounding past 16 truncation bits, where the RTL's sticky window
 * ignores the low bits (-65535 >> 17 is -1 there, 0 with exact rounding). */
static void test_cacc_sticky_window(void **state)
{
    (void)state;
    struct tdev t;
    rng_state = 0x5eed0008u;
    tdev_open(&t, "nv_small", &rng_state);
    struct conv L;
    simple_layer(&t, &L, 1, 1, 8, 1, 1, 0, 1);
    /* 4 * (-128 * 127) - 128 * 3 - 127 * 1 = -65535 */
    static const int8_t in[8] = { -128, -128, -128, -128, -128, -127, 0, 0 };
    static const int8_t wt[8] = { 127, 127, 127, 127, 3, 1, 0, 0 };
    memcpy(L.in, in, 8);
    memcpy(L.wt, wt, 8);
    L.trunc = 17;
    L.bias_en = 1;
    L.bias = 5; /* -1 + 5 = 4 in the RTL, 0 + 5 = 5 with exact rounding */
    L.pad_value = 0;
    conv_write(&t, &L);
    check_layer(&t, &L, "CACC sticky window");
    uint8_t out = 0;
    mem_rd(t.dev, CONV_OUT_ADDR, &out, 1);
    assert_int_equal((int8_t)out, 4);
    conv_free(&L);
    dlasim_destroy(t.dev);
}

/*
 * Sums beyond int32 (more than 2^17 products, nv_large's larger CBUF): the
 * accumulator must be exact before CACC truncates / saturates.
 */
static void test_deep_kernel_nv_large(void **state)
{
    (void)state;
    struct tdev t;
    struct conv L;
    rng_state = 0x5eed0009u;
    tdev_open(&t, "nv_large", &rng_state);
    simple_layer(&t, &L, 2, 2, 4096, 6, 6, 4, 2); /* 147456 products per output */
    memset(L.in, 0x80, (size_t)L.c * L.h * L.w);
    size_t n = (size_t)L.k * conv_bytes_per_kernel(&L);
    for (size_t i = 0; i < n; i++) {
        L.wt[i] = rnd(0, 63) ? -128 : 127; /* sums around 2.3e9 */
    }
    conv_write(&t, &L);
    L.sdp_shift = 25;
    L.trunc = 0; /* saturates where the sum exceeds int32 */
    check_layer(&t, &L, "nv_large deep kernel, CLIP_TRUNCATE 0");
    L.trunc = 2;
    L.sdp_shift = 23;
    check_layer(&t, &L, "nv_large deep kernel, CLIP_TRUNCATE 2");
    conv_free(&L);
    dlasim_destroy(t.dev);
}

/*
 * A pixel kernel whose rows are too wide to split by channel (R8, 4096 x 32
 * products): the sum 2^31 saturates in CACC with CLIP_TRUNCATE 0.
 */
static void test_wide_pixel_kernel_nv_large(void **state)
{
    (void)state;
    struct tdev t;
    struct conv L;
    rng_state = 0x5eed000au;
    tdev_open(&t, "nv_large", &rng_state);
    memset(&L, 0, sizeof(L));
    L.pixel = 1;
    L.fmt = &conv_fmts[0]; /* T_R8 */
    L.c = 1;
    L.w = L.kw = 4096;
    L.h = L.fetch_h = L.kh = 32;
    L.k = 1;
    L.sx = L.sy = L.dx = L.dy = 1;
    L.ow = L.oh = 1;
    L.rls = L.h;
    L.pad_value = L.cdma_pad = 0x80;
    assert_true(conv_plan_banks(&t, &L));
    L.line_stride = L.w;
    L.out_line = L.out_surf = t.m;
    L.img0 = malloc((size_t)L.line_stride * L.h);
    L.wt = malloc(conv_bytes_per_kernel(&L));
    assert_non_null(L.img0);
    assert_non_null(L.wt);
    memset(L.img0, 0x80, (size_t)L.line_stride * L.h);
    memset(L.wt, 0x80, conv_bytes_per_kernel(&L));
    conv_write(&t, &L);
    L.trunc = 0;
    check_layer(&t, &L, "wide pixel kernel, CLIP_TRUNCATE 0");
    L.trunc = 1;
    L.sdp_shift = 24;
    check_layer(&t, &L, "wide pixel kernel, CLIP_TRUNCATE 1");
    uint8_t out = 0;
    mem_rd(t.dev, CONV_OUT_ADDR, &out, 1);
    assert_int_equal((int8_t)out, 64); /* 2^31 / 2 / 2^24 */
    conv_free(&L);
    dlasim_destroy(t.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feature_nv_small),
        cmocka_unit_test(test_feature_nv_small_256),
        cmocka_unit_test(test_pixel_nv_small),
        cmocka_unit_test(test_pixel_nv_small_256),
        cmocka_unit_test(test_pixel_nv_large),
        cmocka_unit_test(test_listed_formats_nv_small),
        cmocka_unit_test(test_listed_formats_nv_small_256),
        cmocka_unit_test(test_reuse_nv_small),
        cmocka_unit_test(test_reuse_nv_small_256),
        cmocka_unit_test(test_reuse_reinterpreted_nv_small),
        cmocka_unit_test(test_rewritten_weights_nv_small),
        cmocka_unit_test(test_rewritten_weights_nv_large),
        cmocka_unit_test(test_deferred_weight_tail_nv_small),
        cmocka_unit_test(test_deferred_weight_tail_nv_large),
        cmocka_unit_test(test_poked_weights_nv_small),
        cmocka_unit_test(test_poked_weights_nv_large),
        cmocka_unit_test(test_partial_reuse),
        cmocka_unit_test(test_cacc_sticky_window),
        cmocka_unit_test(test_deep_kernel_nv_large),
        cmocka_unit_test(test_wide_pixel_kernel_nv_large),
        cmocka_unit_test(test_fused_conv_sdp_pdp),
        cmocka_unit_test(test_atoms_layers_nv_small),
        cmocka_unit_test(test_wide_diagonal_nv_small),
        cmocka_unit_test(test_large_diagonal_blocks),
        cmocka_unit_test(test_chained_layers),
        cmocka_unit_test(test_chained_after_error),
        cmocka_unit_test(test_batches_nv_large),
        cmocka_unit_test(test_batch_refusals_nv_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
