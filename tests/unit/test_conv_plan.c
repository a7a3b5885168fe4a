/*
 * Tests of the driver-side convolution planner (src/plan/conv_plan.c,
 * include/dlasim/conv.h):
 *   - its arithmetic on known shapes of nv_small / nv_small_256 / nv_large
 *     (entries per slice, banks for data / all kernels / one kernel group,
 *     the CBUF split and weight mode, the partial-H bands), with the
 *     expected numbers worked out by hand from NVDLA's compiler rules
 *     (nvdla/sw ConvCoreNode.cpp calculateEPS, calculateTotalBanksFor*,
 *     splitNodesInternal, determineSplitDataRatios);
 *   - invariants of random plans (bands cover every output row once, each
 *     band's windows lie in its fetched lines + padding, banks and entries
 *     fit CBUF);
 *   - the memory layouts (weight stream, feature cube with gaps) against
 *     offsets computed here, and the address / stride checks;
 *   - end to end: layers that do not fit CBUF are split by the planner,
 *     programmed through the CSB and run on the device, and the int8 output
 *     equals a plain convolution written here + CACC truncation (round half
 *     away from zero, CLIP_TRUNCATE <= 16) + SDP conversion
 *     ((x - offset) * scale, rounding shift, int8 saturation); also random
 *     small layers on a device whose CBUF is made tiny (4 KiB) so that most
 *     of them are split.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/testdev.h"
#include "dlasim/conv.h"
#include "dlasim/dlasim.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- PRNG ---------------------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng_state, lo, hi);
}

/* ---- configurations (spec 004 values of src/plan/config.c) ------------------------- */

static const struct dlasim_conv_hw hw_small = { 8, 8, 8, 32, 8, 512 };
static const struct dlasim_conv_hw hw_small_256 = { 8, 32, 8, 32, 32, 128 };
static const struct dlasim_conv_hw hw_large = { 32, 64, 32, 16, 64, 512 };

static void check_hw_of(const char *config, const struct dlasim_conv_hw *want)
{
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 0);
    struct dlasim_conv_hw hw;
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    assert_memory_equal(&hw, want, sizeof(hw));
    dlasim_destroy(dev);
}

static void test_hw_of(void **state)
{
    (void)state;
    check_hw_of("nv_small", &hw_small);
    check_hw_of("nv_small_256", &hw_small_256);
    check_hw_of("nv_large", &hw_large);
}

static struct dlasim_conv_desc conv(uint32_t w, uint32_t h, uint32_t c, uint32_t k, uint32_t r,
                                    uint32_t stride, uint32_t pad)
{
    struct dlasim_conv_desc d;
    dlasim_conv_desc_init(&d);
    d.in_w = w;
    d.in_h = h;
    d.in_c = c;
    d.kernels = k;
    d.kernel_w = d.kernel_h = r;
    d.stride_x = d.stride_y = stride;
    d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = pad;
    return d;
}

static void plan_ok(const struct dlasim_conv_hw *hw, const struct dlasim_conv_desc *d,
                    struct dlasim_conv_plan *p)
{
    char err[256] = "";
    int rc = dlasim_conv_plan(hw, d, p, err, sizeof(err));
    if (rc) {
        fail_msg("dlasim_conv_plan: %s: %s", dlasim_status_name(rc), err);
    }
}

struct band {
    uint32_t in_y0, in_h, pad_top, pad_bottom, out_y0, out_h;
    int reuse, skip;
};

static void check_bands(const struct dlasim_conv_plan *p, const struct band *b, size_t n)
{
    assert_int_equal(p->n_layers, n);
    for (size_t i = 0; i < n; i++) {
        const struct dlasim_conv_layer *l = &p->layers[i];
        assert_int_equal(l->in_y0, b[i].in_y0);
        assert_int_equal(l->in_h, b[i].in_h);
        assert_int_equal(l->pad_top, b[i].pad_top);
        assert_int_equal(l->pad_bottom, b[i].pad_bottom);
        assert_int_equal(l->out_y0, b[i].out_y0);
        assert_int_equal(l->out_h, b[i].out_h);
        assert_int_equal(l->weight_reuse, b[i].reuse);
        assert_int_equal(l->skip_weight_rls, b[i].skip);
    }
}

/* A number of the plan a test expects. */
enum field {
    OUT_W, OUT_H, ENTRIES, DATA_BANKS_FULL, WEIGHT_BANKS_FULL, WEIGHT_BANKS_GROUP, WEIGHT_MODE,
    WEIGHT_BANK, DATA_BANK, ROWS_PER_LAYER, BYTES_PER_KERNEL, WEIGHT_BYTES, N_LAYERS
};

struct want {
    enum field f;
    uint64_t v;
};

static uint64_t field_of(const struct dlasim_conv_plan *p, enum field f, const char **name)
{
    switch (f) {
    case OUT_W: *name = "out_w"; return p->out_w;
    case OUT_H: *name = "out_h"; return p->out_h;
    case ENTRIES: *name = "entries"; return p->entries;
    case DATA_BANKS_FULL: *name = "data_banks_full"; return p->data_banks_full;
    case WEIGHT_BANKS_FULL: *name = "weight_banks_full"; return p->weight_banks_full;
    case WEIGHT_BANKS_GROUP: *name = "weight_banks_group"; return p->weight_banks_group;
    case WEIGHT_MODE: *name = "weight_mode"; return p->weight_mode;
    case WEIGHT_BANK: *name = "weight_bank"; return p->weight_bank;
    case DATA_BANK: *name = "data_bank"; return p->data_bank;
    case ROWS_PER_LAYER: *name = "rows_per_layer"; return p->rows_per_layer;
    case BYTES_PER_KERNEL: *name = "bytes_per_kernel"; return p->bytes_per_kernel;
    case WEIGHT_BYTES: *name = "weight_bytes"; return p->weight_bytes;
    default: *name = "n_layers"; return p->n_layers;
    }
}

/* Plan d for hw into p: the numbers in want[0..nw), the bands b[0..nb)
 * when b is given. */
static void expect_plan(const struct dlasim_conv_hw *hw, const struct dlasim_conv_desc *d,
                        struct dlasim_conv_plan *p, const struct want *want, size_t nw,
                        const struct band *b, size_t nb)
{
    plan_ok(hw, d, p);
    for (size_t i = 0; i < nw; i++) {
        const char *name;
        uint64_t got = field_of(p, want[i].f, &name);
        if (got != want[i].v) {
            fail_msg("plan.%s = %llu, expected %llu", name, (unsigned long long)got,
                     (unsigned long long)want[i].v);
        }
    }
    if (b) {
        check_bands(p, b, nb);
    }
}

/* ---- nv_small ------------------------------------------------------------------------ */

/* ResNet-18 layer1 3x3: 448 entries per line, 49 data banks: partial-H with
 * all kernels (9 banks <= 16 of the profile), 23 data banks = 26 lines. */
static void test_small_resnet_layer1(void **state)
{
    (void)state;
    static const struct want w[] = {
        { OUT_W, 56 }, { OUT_H, 56 }, { ENTRIES, 448 }, { DATA_BANKS_FULL, 49 },
        { WEIGHT_BANKS_FULL, 9 }, { WEIGHT_BANKS_GROUP, 2 },
        { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_FULL }, { WEIGHT_BANK, 9 }, { DATA_BANK, 23 },
        { ROWS_PER_LAYER, 26 }, { BYTES_PER_KERNEL, 576 }, { WEIGHT_BYTES, 36864 },
    };
    static const struct band b[] = {
        { 0, 26, 1, 0, 0, 25, 0, 1 },
        { 24, 26, 0, 0, 25, 24, 1, 1 },
        { 48, 8, 0, 1, 49, 7, 1, 0 },
    };
    struct dlasim_conv_desc d = conv(56, 56, 64, 64, 3, 1, 1);
    struct dlasim_conv_plan p;
    expect_plan(&hw_small, &d, &p, w, N(w), b, N(b));
    dlasim_conv_plan_free(&p);
}

/* Whole input fits with two kernel groups (ping-pong): 25 + 2 * 3 banks. */
static void test_small_pingpong(void **state)
{
    (void)state;
    static const struct want w[] = {
        { ENTRIES, 448 }, { DATA_BANKS_FULL, 25 }, { WEIGHT_BANKS_FULL, 36 },
        { WEIGHT_BANKS_GROUP, 3 }, { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_PINGPONG },
        { WEIGHT_BANK, 6 }, { DATA_BANK, 25 },
    };
    static const struct band b[] = { { 0, 28, 1, 1, 0, 28, 0, 0 } };
    struct dlasim_conv_desc d = conv(28, 28, 128, 128, 3, 1, 1);
    struct dlasim_conv_plan p;
    expect_plan(&hw_small, &d, &p, w, N(w), b, N(b));
    dlasim_conv_plan_free(&p);
}

/* Whole input with one kernel group: 18 data banks + 9 banks per group
 * (2 * 9 + 18 > 32 >= 9 + 18). */
static void test_small_one_group(void **state)
{
    (void)state;
    static const struct want w[] = {
        { ENTRIES, 64 * 9 }, { DATA_BANKS_FULL, 18 }, { WEIGHT_BANKS_GROUP, 9 },
        { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_ONE_GROUP }, { WEIGHT_BANK, 9 }, { DATA_BANK, 18 },
        { N_LAYERS, 1 },
    };
    struct dlasim_conv_desc d = conv(9, 16, 512, 64, 3, 1, 1);
    struct dlasim_conv_plan p;
    expect_plan(&hw_small, &d, &p, w, N(w), NULL, 0);
    dlasim_conv_plan_free(&p);
}

/* Small layer: everything fits, one layer that releases its weights. */
static void test_small_fits(void **state)
{
    (void)state;
    static const struct want w[] = {
        { ENTRIES, 16 }, { DATA_BANKS_FULL, 1 }, { WEIGHT_BANKS_FULL, 1 },
        { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_FULL },
    };
    static const struct band b[] = { { 0, 8, 0, 0, 0, 6, 0, 0 } };
    struct dlasim_conv_desc d = conv(8, 8, 16, 16, 3, 1, 0);
    struct dlasim_conv_plan p;
    expect_plan(&hw_small, &d, &p, w, N(w), NULL, 0);
    assert_int_equal(p.data_bank + p.weight_bank, 2);
    check_bands(&p, b, N(b));
    dlasim_conv_plan_free(&p);
}

/* 1x1/2 downsample and a kernel group larger than half the CBUF; shapes
 * that do not fit or are out of the registers' ranges. */
static void test_small_limits(void **state)
{
    (void)state;
    static const struct want w[] = {
        { OUT_W, 7 }, { DATA_BANKS_FULL, 13 }, { WEIGHT_BANKS_FULL, 32 },
        { WEIGHT_BANKS_GROUP, 1 }, { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_PINGPONG },
    };
    static const struct {
        uint32_t w, h, c, k, r, stride, pad;
        int32_t pad_value;
        int rc;
        const char *err;
    } bad[] = {
        /* 3x3x2048 kernels: one group of 8 is 36 banks */
        { 4, 4, 2048, 8, 3, 1, 1, 0, DLASIM_ERR_UNSUPPORTED, "does not fit CBUF" },
        /* register ranges */
        { 8, 8, 8, 8, 3, 0, 0, 0, DLASIM_ERR_INVAL, "stride_x" },
        { 8, 8, 8, 8, 3, 9, 0, 0, DLASIM_ERR_INVAL, NULL },
        { 8, 8, 8, 8, 3, 1, 32, 0, DLASIM_ERR_INVAL, NULL },
        { 2, 2, 8, 8, 5, 1, 0, 0, DLASIM_ERR_INVAL, NULL },
        { 8, 8, 8, 8, 3, 1, 1, 128, DLASIM_ERR_INVAL, NULL },
    };
    struct dlasim_conv_desc d = conv(14, 14, 256, 512, 1, 2, 0);
    struct dlasim_conv_plan p;
    char err[256] = "";
    expect_plan(&hw_small, &d, &p, w, N(w), NULL, 0);
    dlasim_conv_plan_free(&p);
    for (size_t i = 0; i < N(bad); i++) {
        d = conv(bad[i].w, bad[i].h, bad[i].c, bad[i].k, bad[i].r, bad[i].stride, bad[i].pad);
        d.pad_value = bad[i].pad_value;
        assert_int_equal(dlasim_conv_plan(&hw_small, &d, &p, err, sizeof(err)), bad[i].rc);
        if (bad[i].err) {
            assert_non_null(strstr(err, bad[i].err));
        }
    }
}

/* ---- nv_small_256 --------------------------------------------------------------------- */

/* Entries with 4 atoms per entry: the remaining atoms of 4, 2 or 1 x
 * positions share an entry. */
static void test_small_256_entries(void **state)
{
    (void)state;
    static const struct {
        uint32_t w, c, entries;
    } t[] = {
        { 224, 3, 56 },   /* 1 atom: 4 x per entry */
        { 10, 16, 5 },    /* 2 atoms: 2 x per entry */
        { 10, 24, 10 },   /* 3 atoms: one entry per x */
        { 10, 32, 10 },   /* 4 atoms: one full entry */
        { 10, 40, 13 },   /* 5 atoms: 10 + ceil(10 / 4) */
        { 7, 8, 2 },
    };
    for (size_t i = 0; i < N(t); i++) {
        struct dlasim_conv_desc d = conv(t[i].w, 4, t[i].c, 8, 1, 1, 0);
        struct dlasim_conv_plan p;
        plan_ok(&hw_small_256, &d, &p);
        assert_int_equal(p.entries, t[i].entries);
        dlasim_conv_plan_free(&p);
    }
}

/* ResNet conv1 on nv_small_256: 98 data banks, partial-H with all kernels
 * (3 banks), 29 data banks hold 66 lines. */
static void test_small_256_conv1(void **state)
{
    (void)state;
    static const struct want w[] = {
        { OUT_W, 112 }, { OUT_H, 112 }, { ENTRIES, 56 }, { DATA_BANKS_FULL, 98 },
        { WEIGHT_BANKS_FULL, 3 }, { WEIGHT_BANKS_GROUP, 1 },
        { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_FULL }, { DATA_BANK, 29 }, { ROWS_PER_LAYER, 66 },
    };
    /* bands: 66 lines; the next band starts at the first line of the next
     * output row (row o reads lines 2o-3 .. 2o+3) */
    static const struct band b[] = {
        { 0, 66, 3, 0, 0, 32, 0, 1 },   /* (3 + 66 - 7) / 2 + 1 = 32 */
        { 61, 66, 0, 0, 32, 30, 1, 1 }, /* (66 - 7) / 2 + 1 = 30 */
        { 121, 66, 0, 0, 62, 30, 1, 1 },
        { 181, 43, 0, 3, 92, 20, 1, 0 }, /* (43 + 3 - 7) / 2 + 1 = 20 */
    };
    struct dlasim_conv_desc d = conv(224, 224, 3, 64, 7, 2, 3);
    struct dlasim_conv_plan p;
    expect_plan(&hw_small_256, &d, &p, w, N(w), b, N(b));
    dlasim_conv_plan_free(&p);
}

/* ---- nv_large -------------------------------------------------------------------------- */

static void test_large(void **state)
{
    (void)state;
    static const struct want w1[] = {
        { ENTRIES, 56 }, { DATA_BANKS_FULL, 7 }, { WEIGHT_BANKS_FULL, 2 },
        { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_FULL }, { N_LAYERS, 1 },
    };
    /* conv1: 112 entries per line (1 atom of 2 per entry: 2 x share one),
     * 49 data banks; partial-H with 1 weight bank, 15 data banks = 68 lines */
    static const struct want w2[] = {
        { ENTRIES, 112 }, { DATA_BANKS_FULL, 49 }, { WEIGHT_BANK, 1 }, { DATA_BANK, 15 },
        { ROWS_PER_LAYER, 68 },
    };
    static const struct band b2[] = {
        { 0, 68, 3, 0, 0, 33, 0, 1 },
        { 63, 68, 0, 0, 33, 31, 1, 1 },
        { 125, 68, 0, 0, 64, 31, 1, 1 },
        { 187, 37, 0, 3, 95, 17, 1, 0 },
    };
    /* 7x80x512 -> 512: 9 data banks; a group of 32 kernels of 4608 bytes
     * is 5 banks: 2 * 5 + 9 > 16 >= 5 + 9 */
    static const struct want w3[] = {
        { ENTRIES, 56 }, { DATA_BANKS_FULL, 9 }, { WEIGHT_BANKS_GROUP, 5 },
        { WEIGHT_BANKS_FULL, 72 }, { WEIGHT_MODE, DLASIM_CONV_WEIGHTS_ONE_GROUP },
        { N_LAYERS, 1 },
    };
    struct dlasim_conv_plan p;
    struct dlasim_conv_desc d = conv(56, 56, 64, 64, 3, 1, 1);
    expect_plan(&hw_large, &d, &p, w1, N(w1), NULL, 0);
    dlasim_conv_plan_free(&p);
    d = conv(224, 224, 3, 64, 7, 2, 3);
    expect_plan(&hw_large, &d, &p, w2, N(w2), b2, N(b2));
    dlasim_conv_plan_free(&p);
    d = conv(7, 80, 512, 512, 3, 1, 1);
    expect_plan(&hw_large, &d, &p, w3, N(w3), NULL, 0);
    dlasim_conv_plan_free(&p);
}

/* ---- invariants of random plans -------------------------------------------------------- */

static void check_invariants(const struct dlasim_conv_plan *p)
{
    const struct dlasim_conv_desc *d = &p->desc;
    const struct dlasim_conv_hw *hw = &p->hw;
    const int64_t eh = (int64_t)(d->kernel_h - 1) * d->dilation_y + 1;
    assert_true(p->data_bank >= 1 && p->weight_bank >= 1);
    assert_true(p->data_bank + p->weight_bank <= hw->banks);
    assert_true((uint64_t)p->weight_bank * hw->bank_width * hw->bank_depth >=
                (uint64_t)p->bytes_per_kernel * (d->kernels < hw->atomic_k ? d->kernels
                                                                          : hw->atomic_k));
    uint32_t next = 0;
    for (size_t i = 0; i < p->n_layers; i++) {
        const struct dlasim_conv_layer *l = &p->layers[i];
        /* bands follow each other; a one-column output may repeat one row
         * so that no band is a 1x1 cube (SDP writes those packed) */
        if (p->out_w == 1 && l->out_y0 + 1 == next) {
            assert_true(l->out_h >= 2);
        } else {
            assert_int_equal(l->out_y0, next);
        }
        assert_true(l->out_h >= 1);
        assert_true(p->out_w * l->out_h > 1 || p->out_h == 1);
        next = l->out_y0 + l->out_h;
        assert_true((uint64_t)l->in_h * p->entries <= (uint64_t)p->data_bank * hw->bank_depth);
        assert_true(l->in_y0 + l->in_h <= d->in_h);
        assert_true(l->pad_top <= d->pad_top && l->pad_bottom <= d->pad_bottom);
        /* every window of the band: global padded rows vs the band's rows */
        for (uint32_t o = l->out_y0; o < l->out_y0 + l->out_h; o++) {
            int64_t g0 = (int64_t)o * d->stride_y - d->pad_top;
            int64_t b0 = (int64_t)(o - l->out_y0) * d->stride_y - l->pad_top + l->in_y0;
            assert_true(g0 == b0); /* the band sees the same input rows */
            assert_true(b0 + eh - 1 <= (int64_t)l->in_y0 + l->in_h - 1 + l->pad_bottom);
            assert_true(b0 >= (int64_t)l->in_y0 - l->pad_top);
            /* padding rows of the band are padding rows of the layer */
            if (b0 < (int64_t)l->in_y0) {
                assert_true(l->in_y0 == 0);
            }
            if (b0 + eh - 1 > (int64_t)l->in_y0 + l->in_h - 1) {
                assert_true(l->in_y0 + l->in_h == d->in_h);
            }
        }
    }
    assert_int_equal(next, p->out_h);
}

static void test_random_invariants(void **state)
{
    (void)state;
    const struct dlasim_conv_hw *hws[3] = { &hw_small, &hw_small_256, &hw_large };
    rng_state = 0xc0ffee01u;
    unsigned planned = 0, split = 0;
    for (unsigned i = 0; i < 3000; i++) {
        struct dlasim_conv_desc d;
        dlasim_conv_desc_init(&d);
        d.in_w = rnd(1, 300);
        d.in_h = rnd(1, 300);
        d.in_c = rnd(0, 3) ? rnd(1, 300) : rnd(1, 2048);
        d.kernels = rnd(1, 600);
        d.kernel_w = rnd(1, 7);
        d.kernel_h = rnd(1, 7);
        d.stride_x = rnd(1, 4);
        d.stride_y = rnd(1, 4);
        d.dilation_x = rnd(1, 3);
        d.dilation_y = rnd(1, 3);
        d.pad_left = rnd(0, 4);
        d.pad_right = rnd(0, 4);
        d.pad_top = rnd(0, 4);
        d.pad_bottom = rnd(0, 4);
        struct dlasim_conv_plan p;
        char err[256];
        int rc = dlasim_conv_plan(hws[i % 3], &d, &p, err, sizeof(err));
        if (rc) {
            assert_true(rc == DLASIM_ERR_INVAL || rc == DLASIM_ERR_UNSUPPORTED);
            continue;
        }
        planned++;
        split += p.n_layers > 1;
        check_invariants(&p);
        dlasim_conv_plan_free(&p);
    }
    assert_true(planned > 1000);
    assert_true(split > 200);
}

/* ---- layouts ----------------------------------------------------------------------------- */

/* Weight (k, c, ky, kx) in the stream: group g = k / AK of kpg kernels,
 * channel block b = c / AC of cb channels, position ky * KW + kx. */
static size_t wt_offset(const struct dlasim_conv_hw *hw, const struct dlasim_conv_desc *d,
                        uint32_t k, uint32_t c, uint32_t ky, uint32_t kx)
{
    size_t npos = (size_t)d->kernel_w * d->kernel_h;
    uint32_t g = k / hw->atomic_k, b = c / hw->atomic_c;
    uint32_t kpg = d->kernels - g * hw->atomic_k;
    uint32_t cb = d->in_c - b * hw->atomic_c;
    kpg = kpg < hw->atomic_k ? kpg : hw->atomic_k;
    cb = cb < hw->atomic_c ? cb : hw->atomic_c;
    return (size_t)g * hw->atomic_k * npos * d->in_c + (size_t)b * hw->atomic_c * npos * kpg +
           ((size_t)ky * d->kernel_w + kx) * cb * kpg + (size_t)(k % hw->atomic_k) * cb +
           c % hw->atomic_c;
}

static void test_layouts(void **state)
{
    (void)state;
    const struct dlasim_conv_hw *hws[3] = { &hw_small, &hw_small_256, &hw_large };
    rng_state = 0x1a40u;
    for (int i = 0; i < 3; i++) {
        const struct dlasim_conv_hw *hw = hws[i];
        struct dlasim_conv_desc d = conv(5, 3, 2 * hw->atomic_c + 3, hw->atomic_k + 5, 2, 1, 0);
        d.kernel_h = 3;
        d.pad_top = d.pad_bottom = 1;
        struct dlasim_conv_plan p;
        plan_ok(hw, &d, &p);
        size_t n = (size_t)d.kernels * d.in_c * d.kernel_h * d.kernel_w;
        assert_int_equal(p.weight_bytes % 128, 0);
        assert_true(p.weight_bytes >= n && p.weight_bytes < n + 128);
        int8_t *w = malloc(n);
        uint8_t *packed = malloc(p.weight_bytes);
        assert_non_null(w);
        assert_non_null(packed);
        for (size_t j = 0; j < n; j++) {
            w[j] = (int8_t)splitmix64_next(&rng_state);
        }
        dlasim_conv_pack_weights(&p, w, packed);
        for (uint32_t k = 0; k < d.kernels; k++) {
            for (uint32_t c = 0; c < d.in_c; c++) {
                for (uint32_t y = 0; y < d.kernel_h; y++) {
                    for (uint32_t x = 0; x < d.kernel_w; x++) {
                        int8_t v = w[(((size_t)k * d.in_c + c) * d.kernel_h + y) * d.kernel_w + x];
                        assert_int_equal((int8_t)packed[wt_offset(hw, &d, k, c, y, x)], v);
                    }
                }
            }
        }
        for (size_t j = n; j < p.weight_bytes; j++) {
            assert_int_equal(packed[j], 0);
        }
        free(w);
        free(packed);

        /* feature cube with gaps: (c, y, x) at (c / M) * surf + y * line + x * M + c % M */
        uint32_t line = (d.in_w + 2) * hw->atom_m, surf = line * d.in_h + hw->atom_m;
        uint64_t bytes = dlasim_conv_cube_bytes(hw, d.in_w, d.in_h, d.in_c, line, surf);
        uint32_t surfaces = (d.in_c + hw->atom_m - 1) / hw->atom_m;
        assert_int_equal(bytes, (uint64_t)(surfaces - 1) * surf + (uint64_t)(d.in_h - 1) * line +
                                    (uint64_t)d.in_w * hw->atom_m);
        size_t ncube = (size_t)d.in_c * d.in_h * d.in_w;
        int8_t *cube = malloc(ncube), *back = malloc(ncube);
        uint8_t *mem = malloc((size_t)bytes);
        assert_non_null(cube);
        assert_non_null(back);
        assert_non_null(mem);
        for (size_t j = 0; j < ncube; j++) {
            cube[j] = (int8_t)splitmix64_next(&rng_state);
        }
        dlasim_conv_pack_cube(hw, d.in_w, d.in_h, d.in_c, line, surf, cube, mem);
        for (uint32_t c = 0; c < d.in_c; c++) {
            for (uint32_t y = 0; y < d.in_h; y++) {
                for (uint32_t x = 0; x < d.in_w; x++) {
                    size_t at = (size_t)(c / hw->atom_m) * surf + (size_t)y * line +
                                (size_t)x * hw->atom_m + c % hw->atom_m;
                    assert_int_equal((int8_t)mem[at],
                                     cube[((size_t)c * d.in_h + y) * d.in_w + x]);
                }
            }
        }
        dlasim_conv_unpack_cube(hw, d.in_w, d.in_h, d.in_c, line, surf, mem, back);
        assert_memory_equal(cube, back, ncube);
        free(cube);
        free(back);
        free(mem);
        dlasim_conv_plan_free(&p);
    }
}

/* Misaligned addresses and strides too small for the cube are refused
 * before anything is written or programmed. */
static void test_mem_checks(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_create(NULL);
    struct dlasim_conv_desc d = conv(8, 8, 16, 16, 3, 1, 1);
    struct dlasim_conv_plan p;
    plan_ok(&hw_small, &d, &p);
    int8_t in[8 * 8 * 16] = { 0 };
    struct dlasim_conv_mem m;
    memset(&m, 0, sizeof(m));
    m.input = 0x1004;
    m.weights = 0x8000;
    m.output = 0x10000;
    assert_int_equal(dlasim_conv_write_input(dev, &p, &m, in), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_run(dev, &p, &m), DLASIM_ERR_INVAL);
    m.input = 0x1000;
    m.in_line_stride = 7 * 8;
    assert_int_equal(dlasim_conv_write_input(dev, &p, &m, in), DLASIM_ERR_INVAL);
    m.in_line_stride = 0;
    m.out_surf_stride = 8 * 8 * 8 - 8;
    assert_int_equal(dlasim_conv_run(dev, &p, &m), DLASIM_ERR_INVAL);
    m.out_surf_stride = 0;
    assert_int_equal(dlasim_conv_write_input(dev, &p, &m, in), 0);
    dlasim_conv_plan_free(&p);
    dlasim_destroy(dev);
}

/* ---- end to end on the device ---------------------------------------------------------- */

static int8_t sat8(int64_t v)
{
    return (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
}

/* v / 2^t rounded half away from zero (t <= 16: CACC's RTL rounding) */
static int64_t round_shift(int64_t v, unsigned t)
{
    if (t == 0) {
        return v;
    }
    int64_t half = (int64_t)1 << (t - 1);
    int64_t mag = v < 0 ? -v : v;
    mag = (mag + half) >> t;
    return v < 0 ? -mag : mag;
}

/* Plain convolution + CACC + SDP for output (k, oy, ox). */
static int8_t ref_out(const struct dlasim_conv_desc *d, const int8_t *in, const int8_t *wt,
                      uint32_t k, uint32_t oy, uint32_t ox)
{
    int64_t sum = 0;
    for (uint32_t c = 0; c < d->in_c; c++) {
        for (uint32_t ky = 0; ky < d->kernel_h; ky++) {
            for (uint32_t kx = 0; kx < d->kernel_w; kx++) {
                int64_t y = (int64_t)oy * d->stride_y + (int64_t)ky * d->dilation_y - d->pad_top;
                int64_t x = (int64_t)ox * d->stride_x + (int64_t)kx * d->dilation_x - d->pad_left;
                int64_t a = d->pad_value;
                if (y >= 0 && y < d->in_h && x >= 0 && x < d->in_w) {
                    a = in[((size_t)c * d->in_h + (size_t)y) * d->in_w + (size_t)x];
                }
                int64_t b = wt[(((size_t)k * d->in_c + c) * d->kernel_h + ky) * d->kernel_w + kx];
                sum += a * b;
            }
        }
    }
    int64_t cacc = round_shift(sum, d->clip_truncate);
    int64_t v = (cacc - d->out_offset) * d->out_scale;
    return sat8(round_shift(v, d->out_shift));
}

/* Plan, write, run and compare one layer on `dev`. */
static void check_on_device(struct dlasim_dev *dev, const char *what,
                            const struct dlasim_conv_desc *d, const struct dlasim_conv_plan *pp)
{
    struct dlasim_conv_plan p = *pp;
    struct dlasim_conv_hw hw = p.hw;
    size_t n_in = (size_t)d->in_c * d->in_h * d->in_w;
    size_t n_wt = (size_t)d->kernels * d->in_c * d->kernel_h * d->kernel_w;
    size_t n_out = (size_t)d->kernels * p.out_h * p.out_w;
    int8_t *in = malloc(n_in), *wt = malloc(n_wt), *out = malloc(n_out);
    assert_non_null(in);
    assert_non_null(wt);
    assert_non_null(out);
    splitmix64_fill(&rng_state, in, n_in);
    splitmix64_fill(&rng_state, wt, n_wt);
    struct dlasim_conv_mem m;
    memset(&m, 0, sizeof(m));
    m.input = 0x10000000u;
    m.weights = 0x20000000u;
    m.output = 0x30000000u;
    /* padded lines on the input side, packed output */
    m.in_line_stride = (d->in_w + 1) * hw.atom_m;
    m.in_surf_stride = m.in_line_stride * d->in_h + 2 * hw.atom_m;
    assert_int_equal(dlasim_conv_write_input(dev, &p, &m, in), 0);
    assert_int_equal(dlasim_conv_write_weights(dev, &p, &m, wt), 0);
    int rc = dlasim_conv_run(dev, &p, &m);
    if (rc) {
        fail_msg("%s: dlasim_conv_run: %s: %s", what, dlasim_status_name(rc),
                 dlasim_last_error(dev));
    }
    assert_int_equal(dlasim_irq_level(dev), 0);
    assert_int_equal(dlasim_conv_read_output(dev, &p, &m, out), 0);
    size_t i = 0;
    for (uint32_t k = 0; k < d->kernels; k++) {
        for (uint32_t y = 0; y < p.out_h; y++) {
            for (uint32_t x = 0; x < p.out_w; x++, i++) {
                int8_t want = ref_out(d, in, wt, k, y, x);
                if (out[i] != want) {
                    fail_msg("%s: out[k=%u][y=%u][x=%u] = %d, reference %d (%zu hardware layers)",
                             what, k, y, x, out[i], want, p.n_layers);
                }
            }
        }
    }
    free(in);
    free(wt);
    free(out);
}

static void run_e2e(const char *config, const struct dlasim_conv_desc *d, size_t min_layers,
                    enum dlasim_conv_weight_mode mode)
{
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 2);
    struct dlasim_conv_hw hw;
    struct dlasim_conv_plan p;
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    plan_ok(&hw, d, &p);
    assert_true(p.n_layers >= min_layers);
    assert_int_equal(p.weight_mode, mode);
    check_on_device(dev, config, d, &p);
    dlasim_conv_plan_free(&p);
    dlasim_destroy(dev);
}

/* 56x56x64 -> 64 3x3 (ResNet layer1) does not fit nv_small's 128 KiB CBUF:
 * three bands sharing the kernels held in CBUF. */
static void test_e2e_small_layer1(void **state)
{
    (void)state;
    rng_state = 0xe2e00001u;
    struct dlasim_conv_desc d = conv(56, 56, 64, 64, 3, 1, 1);
    d.pad_value = -3;
    d.clip_truncate = 9;
    d.out_offset = 5;
    d.out_scale = 3;
    d.out_shift = 2;
    run_e2e("nv_small", &d, 3, DLASIM_CONV_WEIGHTS_FULL);
}

/* Stride 2 with 256 kernels: bands with kernel groups streamed (ping-pong). */
static void test_e2e_small_stride2_pingpong(void **state)
{
    (void)state;
    rng_state = 0xe2e00002u;
    struct dlasim_conv_desc d = conv(56, 56, 64, 256, 3, 2, 1);
    d.pad_value = -128;
    d.clip_truncate = 10;
    d.out_offset = -7;
    d.out_scale = -2;
    d.out_shift = 1;
    run_e2e("nv_small", &d, 2, DLASIM_CONV_WEIGHTS_PINGPONG);
}

/* A 3-channel input with a dilated 5x5 kernel, stride 2, on nv_small_256. */
static void test_e2e_small_256_dilated(void **state)
{
    (void)state;
    rng_state = 0xe2e00003u;
    struct dlasim_conv_desc d = conv(200, 200, 3, 16, 5, 2, 4);
    d.dilation_x = 2;
    d.dilation_y = 2;
    d.pad_right = 1;
    d.pad_bottom = 3;
    d.pad_value = 7;
    d.clip_truncate = 6;
    d.out_scale = 1;
    run_e2e("nv_small_256", &d, 2, DLASIM_CONV_WEIGHTS_FULL);
}

/*
 * Random small layers on a device with a tiny CBUF (32 banks of 16
 * entries: 4 KiB), so most of them are split into bands or stream their
 * kernel groups; one device runs them all in sequence.
 */
static void test_e2e_random_tiny_cbuf(void **state)
{
    (void)state;
    static const char *const ovr[] = { "NVDLA_CBUF_BANK_DEPTH=16" };
    struct dlasim_dev *dev = tdev_new("nv_small", ovr, 1, 2);
    struct dlasim_conv_hw hw;
    char what[160], err[256];
    unsigned ran = 0, split = 0, streamed = 0;
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    assert_int_equal(hw.bank_depth, 16);
    rng_state = 0xe2e00004u;
    for (unsigned i = 0; i < 60; i++) {
        struct dlasim_conv_desc d;
        struct dlasim_conv_plan p;
        dlasim_conv_desc_init(&d);
        d.in_w = rnd(1, 20);
        d.in_h = rnd(1, 40);
        d.in_c = rnd(1, 40);
        d.kernels = rnd(1, 24);
        d.kernel_w = rnd(1, 4);
        d.kernel_h = rnd(1, 4);
        d.stride_x = rnd(1, 3);
        d.stride_y = rnd(1, 3);
        d.dilation_x = rnd(1, 2);
        d.dilation_y = rnd(1, 2);
        d.pad_left = rnd(0, 2);
        d.pad_right = rnd(0, 2);
        d.pad_top = rnd(0, 2);
        d.pad_bottom = rnd(0, 2);
        d.pad_value = (int32_t)rnd(0, 255) - 128;
        d.clip_truncate = rnd(0, 10);
        d.out_offset = (int32_t)rnd(0, 40) - 20;
        d.out_scale = (int32_t)rnd(0, 6) - 3;
        d.out_shift = rnd(0, 4);
        if (dlasim_conv_plan(&hw, &d, &p, err, sizeof(err))) {
            continue;
        }
        snprintf(what, sizeof(what), "layer %u: %ux%ux%u k%u %ux%u s%u,%u d%u,%u, %zu bands, %s", i,
                 d.in_w, d.in_h, d.in_c, d.kernels, d.kernel_w, d.kernel_h, d.stride_x, d.stride_y,
                 d.dilation_x, d.dilation_y, p.n_layers, dlasim_conv_weight_mode_name(p.weight_mode));
        check_on_device(dev, what, &d, &p);
        ran++;
        split += p.n_layers > 1;
        streamed += p.weight_mode != DLASIM_CONV_WEIGHTS_FULL;
        dlasim_conv_plan_free(&p);
    }
    assert_true(ran >= 40);
    assert_true(split >= 10);
    assert_true(streamed >= 5);
    dlasim_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hw_of),
        cmocka_unit_test(test_small_resnet_layer1),
        cmocka_unit_test(test_small_pingpong),
        cmocka_unit_test(test_small_one_group),
        cmocka_unit_test(test_small_fits),
        cmocka_unit_test(test_small_limits),
        cmocka_unit_test(test_small_256_entries),
        cmocka_unit_test(test_small_256_conv1),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_random_invariants),
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_mem_checks),
        cmocka_unit_test(test_e2e_small_layer1),
        cmocka_unit_test(test_e2e_small_stride2_pingpong),
        cmocka_unit_test(test_e2e_small_256_dilated),
        cmocka_unit_test(test_e2e_random_tiny_cbuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
