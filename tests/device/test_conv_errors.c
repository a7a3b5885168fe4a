/*
 * Device tests of the convolution pipeline's refusals: a valid layer is
 * programmed through the CSB (public API only), one register is changed to
 * a value the hardware cannot run, and dlasim_run must return
 * DLASIM_ERR_PROG with a message naming the register.  Each test first runs
 * the unmodified layer on its own device, so a refusal is caused by the
 * change and nothing else.  Also: every PIXEL_FORMAT the ConfigROM does not
 * list (nv_small, nv_small_256), batches where the configuration has none,
 * CDMA status registers after reset and a layer, and recovery after a
 * refused layer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/convlayer.h"
#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

#define IN_ADDR 0x80000000ull
#define WT_ADDR 0x90000000ull
#define OUT_ADDR 0xa0000000ull

/* ---- a layer as a list of register writes ------------------------------------- */

#define MAX_REGS 160

struct prog {
    uint32_t addr[MAX_REGS];
    uint32_t val[MAX_REGS];
    unsigned n;
};

static void set(struct prog *p, uint32_t addr, uint32_t v)
{
    for (unsigned i = 0; i < p->n; i++) {
        if (p->addr[i] == addr) {
            p->val[i] = v;
            return;
        }
    }
    assert_true(p->n < MAX_REGS);
    p->addr[p->n] = addr;
    p->val[p->n++] = v;
}

static uint32_t get(const struct prog *p, uint32_t addr)
{
    for (unsigned i = 0; i < p->n; i++) {
        if (p->addr[i] == addr) {
            return p->val[i];
        }
    }
    fail_msg("register 0x%x not programmed", addr);
    return 0;
}

/* Both CDMA and CSC registers with the same value. */
static void set2(struct prog *p, uint32_t cdma, uint32_t csc, uint32_t v)
{
    set(p, cdma, v);
    set(p, csc, v);
}

/* Geometry of the base layers (nv_small: Atomic-C = Atomic-K = M = 8;
 * pixel layers also on nv_small_256, whose CBUF entries are 32 bytes). */
struct geom {
    int pixel;
    uint32_t w, h, c, k, kw, kh, pad;  /* feature: pad on every side; pixel: none */
    uint32_t ow, oh, entries, bpk, wt_bytes;
    uint32_t pixel_format;             /* pixel input */
    uint32_t entry_bytes;              /* CBUF bank width (0: nv_small's 8) */
};

static uint32_t misc(int skip_data, int skip_wt, int reuse_data, int reuse_wt)
{
    return NVDLA_CDMA_D_MISC_CFG_0_SKIP_DATA_RLS((uint32_t)skip_data) |
           NVDLA_CDMA_D_MISC_CFG_0_SKIP_WEIGHT_RLS((uint32_t)skip_wt) |
           NVDLA_CDMA_D_MISC_CFG_0_DATA_REUSE((uint32_t)reuse_data) |
           NVDLA_CDMA_D_MISC_CFG_0_WEIGHT_REUSE((uint32_t)reuse_wt);
}

/* The registers of a consistent layer. */
static void base_layer(struct prog *p, struct geom *g)
{
    memset(p, 0, sizeof(*p));
    if (g->pixel) {
        g->ow = g->w - g->kw + 1;
        g->oh = g->h - g->kh + 1;
        uint32_t eb = g->entry_bytes ? g->entry_bytes : 8;
        g->entries = ((g->w * g->c + 7) / 8 * 8 + eb - 1) / eb; /* whole atoms, no padding */
        g->bpk = g->kw * g->c * g->kh;
    } else {
        g->ow = g->w + 2 * g->pad - g->kw + 1;
        g->oh = g->h + 2 * g->pad - g->kh + 1;
        g->entries = g->w * ((g->c + 7) / 8);
        g->bpk = g->kw * g->kh * g->c;
    }
    g->wt_bytes = (g->bpk * g->k + 127) / 128 * 128;
    uint32_t pad = g->pixel ? 0 : g->pad;

    set(p, NVDLA_CDMA_D_MISC_CFG_0, misc(0, 0, 0, 0));
    set(p, NVDLA_CDMA_D_DATAIN_FORMAT_0,
        NVDLA_CDMA_D_DATAIN_FORMAT_0_DATAIN_FORMAT((uint32_t)g->pixel) |
            NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT(g->pixel_format));
    set(p, NVDLA_CDMA_D_DATAIN_SIZE_0_0,
        NVDLA_CDMA_D_DATAIN_SIZE_0_0_DATAIN_WIDTH(g->w - 1) |
            NVDLA_CDMA_D_DATAIN_SIZE_0_0_DATAIN_HEIGHT(g->h - 1));
    set(p, NVDLA_CDMA_D_DATAIN_SIZE_1_0, g->c - 1);
    set(p, NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0, get(p, NVDLA_CDMA_D_DATAIN_SIZE_0_0));
    set(p, NVDLA_CDMA_D_PIXEL_OFFSET_0, 0);
    set(p, NVDLA_CDMA_D_DAIN_RAM_TYPE_0, 1);
    set(p, NVDLA_CDMA_D_DAIN_ADDR_HIGH_0_0, 0);
    set(p, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)IN_ADDR);
    set(p, NVDLA_CDMA_D_LINE_STRIDE_0, g->pixel ? 64 : g->w * 8);
    set(p, NVDLA_CDMA_D_SURF_STRIDE_0, g->w * g->h * 8);
    set(p, NVDLA_CDMA_D_DAIN_MAP_0, 0);
    set(p, NVDLA_CDMA_D_BATCH_NUMBER_0, 0);
    set(p, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, g->entries - 1);
    set(p, NVDLA_CDMA_D_WEIGHT_FORMAT_0, 0);
    set(p, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, g->bpk - 1);
    set(p, NVDLA_CDMA_D_WEIGHT_SIZE_1_0, g->k - 1);
    set(p, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0, 1);
    set(p, NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0, 0);
    set(p, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0, (uint32_t)WT_ADDR);
    set(p, NVDLA_CDMA_D_WEIGHT_BYTES_0, g->wt_bytes);
    set(p, NVDLA_CDMA_D_CVT_CFG_0, 0);
    set(p, NVDLA_CDMA_D_CONV_STRIDE_0, 0);
    set(p, NVDLA_CDMA_D_ZERO_PADDING_0,
        NVDLA_CDMA_D_ZERO_PADDING_0_PAD_LEFT(pad) | NVDLA_CDMA_D_ZERO_PADDING_0_PAD_RIGHT(pad) |
            NVDLA_CDMA_D_ZERO_PADDING_0_PAD_TOP(pad) | NVDLA_CDMA_D_ZERO_PADDING_0_PAD_BOTTOM(pad));
    set(p, NVDLA_CDMA_D_ZERO_PADDING_VALUE_0, 0);
    set(p, NVDLA_CDMA_D_BANK_0, 0); /* one data bank, one weight bank */

    set(p, NVDLA_CSC_D_MISC_CFG_0, misc(0, 0, 0, 0));
    set(p, NVDLA_CSC_D_DATAIN_FORMAT_0, (uint32_t)g->pixel);
    set(p, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0, get(p, NVDLA_CDMA_D_DATAIN_SIZE_0_0));
    set(p, NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0, g->c - 1);
    set(p, NVDLA_CSC_D_BATCH_NUMBER_0, 0);
    set(p, NVDLA_CSC_D_POST_Y_EXTENSION_0, 0);
    set(p, NVDLA_CSC_D_ENTRY_PER_SLICE_0, g->entries - 1);
    set(p, NVDLA_CSC_D_WEIGHT_FORMAT_0, 0);
    set(p, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0,
        NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_WIDTH_EXT(g->pixel ? 0 : g->kw - 1) |
            NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_HEIGHT_EXT(g->kh - 1));
    set(p, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
        NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_CHANNEL_EXT((g->pixel ? g->kw * g->c : g->c) - 1) |
            NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_KERNEL(g->k - 1));
    set(p, NVDLA_CSC_D_WEIGHT_BYTES_0, g->wt_bytes);
    set(p, NVDLA_CSC_D_DATAOUT_SIZE_0_0,
        NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_WIDTH(g->ow - 1) |
            NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_HEIGHT(g->oh - 1));
    set(p, NVDLA_CSC_D_DATAOUT_SIZE_1_0, g->k - 1);
    set(p, NVDLA_CSC_D_ATOMICS_0, g->ow * g->oh - 1);
    set(p, NVDLA_CSC_D_RELEASE_0, g->h - 1);
    set(p, NVDLA_CSC_D_CONV_STRIDE_EXT_0, 0);
    set(p, NVDLA_CSC_D_DILATION_EXT_0, 0);
    set(p, NVDLA_CSC_D_ZERO_PADDING_0,
        NVDLA_CSC_D_ZERO_PADDING_0_PAD_LEFT(pad) | NVDLA_CSC_D_ZERO_PADDING_0_PAD_TOP(pad));
    set(p, NVDLA_CSC_D_ZERO_PADDING_VALUE_0, 0);
    set(p, NVDLA_CSC_D_BANK_0, 0);

    set(p, NVDLA_CMAC_A_D_MISC_CFG_0, 0);
    set(p, NVDLA_CMAC_B_D_MISC_CFG_0, 0);
    set(p, NVDLA_CACC_D_MISC_CFG_0, 0);
    set(p, NVDLA_CACC_D_DATAOUT_SIZE_0_0, get(p, NVDLA_CSC_D_DATAOUT_SIZE_0_0));
    set(p, NVDLA_CACC_D_DATAOUT_SIZE_1_0, g->k - 1);
    set(p, NVDLA_CACC_D_BATCH_NUMBER_0, 0);
    set(p, NVDLA_CACC_D_CLIP_CFG_0, 8);

    set(p, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, g->ow - 1);
    set(p, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, g->oh - 1);
    set(p, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, g->k - 1);
    set(p, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)OUT_ADDR);
    set(p, NVDLA_SDP_D_DST_LINE_STRIDE_0, g->ow * 8);
    set(p, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, g->ow * g->oh * 8);
    set(p, NVDLA_SDP_D_DP_BS_CFG_0, 0x53);
    set(p, NVDLA_SDP_D_DP_BN_CFG_0, 0x53);
    set(p, NVDLA_SDP_D_DP_EW_CFG_0, 0x53);
    set(p, NVDLA_SDP_D_FEATURE_MODE_CFG_0, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE(1));
    set(p, NVDLA_SDP_D_DST_DMA_CFG_0, 1);
    set(p, NVDLA_SDP_D_DATA_FORMAT_0, 0);
    set(p, NVDLA_SDP_D_CVT_OFFSET_0, 0);
    set(p, NVDLA_SDP_D_CVT_SCALE_0, 1);
    set(p, NVDLA_SDP_D_CVT_SHIFT_0, 0);
}

/* 4x3x32 input, 16 kernels of 3x3, padding 1: 4x3 output. */
static void feature_base(struct prog *p, struct geom *g)
{
    memset(g, 0, sizeof(*g));
    g->w = 4;
    g->h = 3;
    g->c = 32;
    g->k = 16;
    g->kw = g->kh = 3;
    g->pad = 1;
    base_layer(p, g);
}

/* 8x4 A8B8G8R8 pixels, 4 kernels of 2 pixels x 2 rows (channel-extended),
 * for CBUF entries of `entry_bytes` (0: nv_small's 8). */
static void pixel_base_for(struct prog *p, struct geom *g, uint32_t entry_bytes)
{
    memset(g, 0, sizeof(*g));
    g->pixel = 1;
    g->pixel_format = NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_T_A8B8G8R8;
    g->w = 8;
    g->h = 4;
    g->c = 4;
    g->k = 4;
    g->kw = g->kh = 2;
    g->entry_bytes = entry_bytes;
    base_layer(p, g);
}

static void pixel_base(struct prog *p, struct geom *g)
{
    pixel_base_for(p, g, 0);
}

/* ---- running ---------------------------------------------------------------------- */

struct dev {
    struct dlasim_dev *dev;
    unsigned group;
};

static void open_dev_cfg(struct dev *t, const char *config)
{
    memset(t, 0, sizeof(*t));
    t->dev = tdev_new(config, NULL, 0, 1);
    /* memory the layers read: random-ish bytes */
    static uint8_t buf[16384];
    for (size_t i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)(i * 37u + 11u);
    }
    mem_wr(t->dev, IN_ADDR, buf, sizeof(buf));
    mem_wr(t->dev, WT_ADDR, buf, sizeof(buf));
}

static void open_dev(struct dev *t)
{
    open_dev_cfg(t, "nv_small");
}

static int run(struct dev *t, const struct prog *p)
{
    conv_pointers(t->dev, t->group);
    for (unsigned i = 0; i < p->n; i++) {
        wr(t->dev, p->addr[i], p->val[i]);
    }
    conv_enable(t->dev);
    int rc = dlasim_run(t->dev);
    t->group ^= 1;
    return rc;
}

/* The layer runs on a fresh device of `config`. */
static void expect_runs(const char *config, const struct prog *p)
{
    struct dev t;
    open_dev_cfg(&t, config);
    int rc = run(&t, p);
    if (rc) {
        fail_msg("%s: layer refused: %s", config, dlasim_last_error(t.dev));
    }
    dlasim_destroy(t.dev);
}

/* The layer is refused on a fresh device of `config` with DLASIM_ERR_PROG
 * and a message naming `reg`. */
static void expect_prog_error(const char *config, const struct prog *bad, const char *reg)
{
    struct dev t;
    open_dev_cfg(&t, config);
    expect_error(t.dev, run(&t, bad), DLASIM_ERR_PROG, reg);
    dlasim_destroy(t.dev);
}

/* The base layer runs; the changed one is refused naming `reg`. */
static void expect_refusal(const struct prog *good, const struct prog *bad, const char *reg)
{
    expect_runs("nv_small", good);
    expect_prog_error("nv_small", bad, reg);
}

/* `good` runs; with register addr set to v it is refused naming `reg`. */
static void expect_set_refused(const struct prog *good, uint32_t addr, uint32_t v, const char *reg)
{
    struct prog bad = *good;
    set(&bad, addr, v);
    expect_refusal(good, &bad, reg);
}

/*
 * A test of one refusal: the base layer BASE (feature_base or pixel_base)
 * runs; `bad`, the same layer with CHANGE (which may use the base geometry
 * `g`), is refused naming REG.
 */
#define REFUSAL_TEST(NAME, BASE, REG, CHANGE)                                                   \
    static void NAME(void **state)                                                              \
    {                                                                                           \
        struct prog good, bad;                                                                  \
        struct geom g;                                                                          \
        (void)state;                                                                            \
        BASE(&good, &g);                                                                        \
        bad = good;                                                                             \
        CHANGE;                                                                                 \
        expect_refusal(&good, &bad, REG);                                                       \
    }

/* ---- CBUF ------------------------------------------------------------------------------ */

REFUSAL_TEST(test_banks_over_capacity, feature_base, "DATA_BANK=19 + WEIGHT_BANK=14",
             set2(&bad, NVDLA_CDMA_D_BANK_0, NVDLA_CSC_D_BANK_0,
                  NVDLA_CDMA_D_BANK_0_DATA_BANK(19) |
                      NVDLA_CDMA_D_BANK_0_WEIGHT_BANK(14))) /* 20 + 15 > 32 */

REFUSAL_TEST(test_entries_mismatch, feature_base, "D_ENTRY_PER_SLICE_0.ENTRIES",
             set2(&bad, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, NVDLA_CSC_D_ENTRY_PER_SLICE_0, g.entries))

/* The layer of geometry `g` runs with D_BANK = `bank` and is refused naming
 * `reg` with the base programming's one data bank and one weight bank. */
static void expect_bank_refusal(struct geom *g, uint32_t bank, const char *reg)
{
    struct prog good, bad;
    base_layer(&bad, g);
    good = bad;
    set2(&good, NVDLA_CDMA_D_BANK_0, NVDLA_CSC_D_BANK_0, bank);
    expect_refusal(&good, &bad, reg);
}

static void test_data_exceeds_banks(void **state)
{
    (void)state;
    struct prog p;
    struct geom g;
    feature_base(&p, &g);
    /* 40 lines of 4 x 32 channels: 640 entries > one 512-entry bank */
    g.h = 40;
    expect_bank_refusal(&g, NVDLA_CDMA_D_BANK_0_DATA_BANK(1), "DATA_BANK=0");
}

static void test_kernel_group_exceeds_weight_banks(void **state)
{
    (void)state;
    struct prog p;
    struct geom g;
    feature_base(&p, &g);
    /* 8 kernels of 5x5x32 = 6400 bytes > one 4 KiB weight bank */
    g.kw = g.kh = 5;
    g.pad = 2;
    expect_bank_refusal(&g, NVDLA_CDMA_D_BANK_0_WEIGHT_BANK(1), "kernel group");
}

/* 16 kernels of 288 bytes = 4608 bytes kept in one 4 KiB bank */
REFUSAL_TEST(test_kept_weights_exceed_weight_banks, feature_base, "SKIP_WEIGHT_RLS",
             set2(&bad, NVDLA_CDMA_D_MISC_CFG_0, NVDLA_CSC_D_MISC_CFG_0, misc(0, 1, 0, 0)))

REFUSAL_TEST(test_release_exceeds_slices, feature_base, "D_RELEASE_0.RLS_SLICES",
             set(&bad, NVDLA_CSC_D_RELEASE_0, g.h))

REFUSAL_TEST(test_csc_reads_more_slices, feature_base, "DATAIN_HEIGHT_EXT",
             set(&bad, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0,
                 NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0_DATAIN_WIDTH_EXT(g.w - 1) |
                     NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0_DATAIN_HEIGHT_EXT(g.h + 1)))

/* Two layers on one device: the second, reusing what the first kept, is
 * refused naming `reg`. */
static void expect_reuse_refusal(const struct prog *first, const struct prog *second,
                                 const char *reg)
{
    struct dev t;
    open_dev(&t);
    assert_int_equal(run(&t, first), 0);
    assert_int_equal(run(&t, second), DLASIM_ERR_PROG);
    assert_non_null(strstr(dlasim_last_error(t.dev), reg));
    dlasim_destroy(t.dev);
}

/* WEIGHT_REUSE after a layer that released its weights. */
static void test_weight_reuse_without_kept_weights(void **state)
{
    (void)state;
    struct prog first, second;
    struct geom g;
    struct dev t;
    feature_base(&first, &g);
    second = first;
    set2(&second, NVDLA_CDMA_D_MISC_CFG_0, NVDLA_CSC_D_MISC_CFG_0, misc(0, 0, 0, 1));
    expect_reuse_refusal(&first, &second, "WEIGHT_REUSE");

    /* with SKIP_WEIGHT_RLS on the first layer the same second layer runs */
    set2(&first, NVDLA_CDMA_D_BANK_0, NVDLA_CSC_D_BANK_0, NVDLA_CDMA_D_BANK_0_WEIGHT_BANK(1));
    set2(&second, NVDLA_CDMA_D_BANK_0, NVDLA_CSC_D_BANK_0, NVDLA_CDMA_D_BANK_0_WEIGHT_BANK(1));
    set2(&first, NVDLA_CDMA_D_MISC_CFG_0, NVDLA_CSC_D_MISC_CFG_0, misc(0, 1, 0, 0));
    open_dev(&t);
    assert_int_equal(run(&t, &first), 0);
    int rc = run(&t, &second);
    if (rc) {
        fail_msg("weight reuse refused: %s", dlasim_last_error(t.dev));
    }
    dlasim_destroy(t.dev);
}

/* DATA_REUSE of slices whose geometry differs from the reading layer's. */
static void test_data_reuse_other_geometry(void **state)
{
    (void)state;
    struct prog first, second;
    struct geom g;
    feature_base(&first, &g);
    set2(&first, NVDLA_CDMA_D_MISC_CFG_0, NVDLA_CSC_D_MISC_CFG_0, misc(1, 0, 0, 0));
    g.w = 5;
    base_layer(&second, &g);
    set2(&second, NVDLA_CDMA_D_MISC_CFG_0, NVDLA_CSC_D_MISC_CFG_0, misc(0, 0, 1, 0));
    expect_reuse_refusal(&first, &second, "DATA_REUSE");
}

/* ---- consistency between units ----------------------------------------------------------- */

REFUSAL_TEST(test_csc_width_differs_from_cdma, feature_base, "DATAIN_WIDTH_EXT",
             set(&bad, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0,
                 NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0_DATAIN_WIDTH_EXT(g.w) |
                     NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0_DATAIN_HEIGHT_EXT(g.h - 1)))

REFUSAL_TEST(test_csc_flags_differ_from_cdma, feature_base, "SKIP_DATA_RLS",
             set(&bad, NVDLA_CSC_D_MISC_CFG_0, misc(1, 0, 0, 0)))

REFUSAL_TEST(test_kernels_differ_from_output_channels, feature_base, "DATAOUT_CHANNEL",
             set(&bad, NVDLA_CSC_D_DATAOUT_SIZE_1_0, g.k))

/* CSC and CDMA both see half the channels */
REFUSAL_TEST(test_weight_channels_differ_from_data, feature_base, "WEIGHT_CHANNEL_EXT",
             (set(&bad, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
                  NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_CHANNEL_EXT(g.c / 2 - 1) |
                      NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_KERNEL(g.k - 1)),
              set(&bad, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, g.kw * g.kh * (g.c / 2) - 1)))

REFUSAL_TEST(test_byte_per_kernel_mismatch, feature_base, "BYTE_PER_KERNEL",
             set(&bad, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, g.bpk))

REFUSAL_TEST(test_weight_bytes_too_small, feature_base, "D_WEIGHT_BYTES_0",
             set2(&bad, NVDLA_CDMA_D_WEIGHT_BYTES_0, NVDLA_CSC_D_WEIGHT_BYTES_0, 128))

REFUSAL_TEST(test_atomics_mismatch, feature_base, "D_ATOMICS_0.ATOMICS",
             set(&bad, NVDLA_CSC_D_ATOMICS_0, g.ow * g.oh))

REFUSAL_TEST(test_cacc_size_differs_from_csc, feature_base,
             "CACC: D_DATAOUT_SIZE_0_0.DATAOUT_WIDTH",
             set(&bad, NVDLA_CACC_D_DATAOUT_SIZE_0_0,
                 NVDLA_CACC_D_DATAOUT_SIZE_0_0_DATAOUT_WIDTH(g.ow) |
                     NVDLA_CACC_D_DATAOUT_SIZE_0_0_DATAOUT_HEIGHT(g.oh - 1)))

REFUSAL_TEST(test_sdp_cube_differs_from_cacc, feature_base, "SDP D_DATA_CUBE_CHANNEL_0",
             set(&bad, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, g.k))

REFUSAL_TEST(test_cmac_precision_differs, feature_base, "CMAC_B: D_MISC_CFG_0.PROC_PRECISION",
             set(&bad, NVDLA_CMAC_B_D_MISC_CFG_0, NVDLA_CMAC_B_D_MISC_CFG_0_PROC_PRECISION(1)))

REFUSAL_TEST(test_post_extension_on_feature_input, feature_base, "Y_EXTENSION",
             set(&bad, NVDLA_CSC_D_POST_Y_EXTENSION_0, 1))

/* ---- features the configuration lacks --------------------------------------------------- */

REFUSAL_TEST(test_winograd_on_nv_small, feature_base, "CONV_MODE",
             set(&bad, NVDLA_CDMA_D_MISC_CFG_0, NVDLA_CDMA_D_MISC_CFG_0_CONV_MODE(1)))

REFUSAL_TEST(test_int16_on_nv_small, feature_base, "IN_PRECISION",
             set(&bad, NVDLA_CDMA_D_MISC_CFG_0,
                 NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION(NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION_INT16)))

REFUSAL_TEST(test_compressed_weights_on_nv_small, feature_base, "WEIGHT_FORMAT",
             set(&bad, NVDLA_CDMA_D_WEIGHT_FORMAT_0, 1))

static void test_batches_on_nv_small(void **state)
{
    (void)state;
    struct prog good, bad;
    struct geom g;
    feature_base(&good, &g);
    expect_set_refused(&good, NVDLA_CDMA_D_BATCH_NUMBER_0, 1, "BATCHES");
    /* consistently programmed batches (CDMA, CSC, CACC, SDP, stride):
     * still none in a configuration without NVDLA_BATCH_ENABLE */
    for (uint32_t n = 1; n < 32; n += 15) {
        bad = good;
        set2(&bad, NVDLA_CDMA_D_BATCH_NUMBER_0, NVDLA_CSC_D_BATCH_NUMBER_0, n);
        set(&bad, NVDLA_CACC_D_BATCH_NUMBER_0, n);
        set(&bad, NVDLA_CDMA_D_BATCH_STRIDE_0, 4096);
        set(&bad, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
            NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE(1) |
                NVDLA_SDP_D_FEATURE_MODE_CFG_0_BATCH_NUMBER(n));
        set(&bad, NVDLA_SDP_D_DST_BATCH_STRIDE_0, 4096);
        expect_prog_error("nv_small", &bad, "D_BATCH_NUMBER_0.BATCHES");
    }
}

/* nv_small_256 has no batches either (a pixel layer: its geometry does not
 * depend on the bank width beyond ENTRY_PER_SLICE). */
static void test_batches_on_nv_small_256(void **state)
{
    (void)state;
    struct prog good, bad;
    struct geom g;
    pixel_base_for(&good, &g, 32);
    expect_runs("nv_small_256", &good);
    bad = good;
    set2(&bad, NVDLA_CDMA_D_BATCH_NUMBER_0, NVDLA_CSC_D_BATCH_NUMBER_0, 1);
    set(&bad, NVDLA_CACC_D_BATCH_NUMBER_0, 1);
    expect_prog_error("nv_small_256", &bad, "D_BATCH_NUMBER_0.BATCHES");
}

REFUSAL_TEST(test_misaligned_input, feature_base, "D_DAIN_ADDR_LOW_0_0",
             set(&bad, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)IN_ADDR + 4))

/* ---- pixel input ------------------------------------------------------------------------- */

/* DATAIN_FORMAT pixel, PIXEL_FORMAT id. */
static uint32_t pixel_format(uint32_t id)
{
    return NVDLA_CDMA_D_DATAIN_FORMAT_0_DATAIN_FORMAT(1) |
           NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT(id);
}

REFUSAL_TEST(test_pixel_format_not_in_config, pixel_base, "PIXEL_FORMAT",
             set(&bad, NVDLA_CDMA_D_DATAIN_FORMAT_0,
                 pixel_format(NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_T_R16)))

/*
 * Every PIXEL_FORMAT value the configuration's ConfigROM does not list is
 * refused naming the field; every listed 4-byte packed format (the 8-bit
 * RGB/YUV ones and the 10-bit ones) runs with the same 4-element geometry.
 * The ROM is read through the CSB (CDMA IMAGE_IN_FORMATS_PACKED: bit i =
 * PIXEL_FORMAT i, _SEMI: bit i = PIXEL_FORMAT 28 + i; spec 004).
 */
static void unlisted_formats(const char *config, uint32_t entry_bytes)
{
    struct prog good, bad;
    struct geom g;
    struct dev t;
    unsigned refused = 0, ran = 0;
    pixel_base_for(&good, &g, entry_bytes);
    open_dev_cfg(&t, config);
    uint32_t packed = rd(t.dev, NVDLA_CFGROM_CFGROM_CDMA_IMAGE_IN_FORMATS_PACKED_0);
    uint32_t semi = rd(t.dev, NVDLA_CFGROM_CFGROM_CDMA_IMAGE_IN_FORMATS_SEMI_0);
    dlasim_destroy(t.dev);
    for (uint32_t id = 0; id < 64; id++) {
        int listed = id < 28 ? (int)((packed >> id) & 1u) : (id < 60 && ((semi >> (id - 28)) & 1u));
        bad = good;
        set(&bad, NVDLA_CDMA_D_DATAIN_FORMAT_0, pixel_format(id));
        if (!listed) {
            expect_prog_error(config, &bad, "PIXEL_FORMAT");
            refused++;
        } else if (id >= NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_T_A8B8G8R8 && id < 28) {
            expect_runs(config, &bad);
            ran++;
        }
    }
    /* listed: 17 of the 36 formats; 14 of them 4-byte packed */
    assert_int_equal(refused, 64 - 17);
    assert_int_equal(ran, 14);
}

static void test_pixel_format_unlisted(void **state)
{
    (void)state;
    unlisted_formats("nv_small", 8);
    unlisted_formats("nv_small_256", 32);
}

REFUSAL_TEST(test_pixel_mapping, pixel_base, "PIXEL_MAPPING",
             set(&bad, NVDLA_CDMA_D_DATAIN_FORMAT_0,
                 get(&good, NVDLA_CDMA_D_DATAIN_FORMAT_0) |
                     NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_MAPPING(1)))

REFUSAL_TEST(test_pixel_y_offset, pixel_base, "PIXEL_Y_OFFSET",
             set(&bad, NVDLA_CDMA_D_PIXEL_OFFSET_0, NVDLA_CDMA_D_PIXEL_OFFSET_0_PIXEL_Y_OFFSET(1)))

/* 4-byte pixels: two per 8-byte atom, offsets 0 and 1 */
REFUSAL_TEST(test_pixel_x_offset_beyond_atom, pixel_base, "PIXEL_X_OFFSET",
             set(&bad, NVDLA_CDMA_D_PIXEL_OFFSET_0, NVDLA_CDMA_D_PIXEL_OFFSET_0_PIXEL_X_OFFSET(2)))

/* 8 pixels of 4 bytes need 32 */
REFUSAL_TEST(test_pixel_line_stride_too_small, pixel_base, "D_LINE_STRIDE_0",
             set(&bad, NVDLA_CDMA_D_LINE_STRIDE_0, 24))

/* width 2, channels 4: the same bytes per kernel as 1 x 8 */
REFUSAL_TEST(test_pixel_kernel_not_channel_extended, pixel_base, "WEIGHT_WIDTH_EXT",
             (set(&bad, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0,
                  NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_WIDTH_EXT(1) |
                      NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_HEIGHT_EXT(g.kh - 1)),
              set(&bad, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
                  NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_CHANNEL_EXT(g.c - 1) |
                      NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_KERNEL(g.k - 1))))

static void test_pixel_post_extension_channels(void **state)
{
    (void)state;
    struct prog good;
    struct geom g;
    pixel_base(&good, &g);
    /* 8 extended channels do not fit Atomic-C / 2 = 4 */
    expect_set_refused(&good, NVDLA_CSC_D_POST_Y_EXTENSION_0, 1, "Y_EXTENSION");
    expect_set_refused(&good, NVDLA_CSC_D_POST_Y_EXTENSION_0, 3, "Y_EXTENSION=3");
}

REFUSAL_TEST(test_pixel_entries_mismatch, pixel_base, "D_ENTRY_PER_SLICE_0.ENTRIES",
             set2(&bad, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, NVDLA_CSC_D_ENTRY_PER_SLICE_0,
                  g.entries - 2))

/* A layer the hardware could run but whose output (2048 x 1024 x 8192
 * int32, padding only) exceeds what the model allocates: refused as
 * unsupported, not crashed on. */
static void test_layer_beyond_host_limits(void **state)
{
    (void)state;
    struct prog p;
    struct geom g;
    struct dev t;
    memset(&g, 0, sizeof(g));
    g.w = g.h = 1;
    g.c = 8;
    g.k = 8192;
    g.kw = g.kh = 1;
    base_layer(&p, &g);
    uint32_t size0 = NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_WIDTH(2047) |
                     NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_HEIGHT(1023);
    set(&p, NVDLA_CSC_D_DATAOUT_SIZE_0_0, size0);
    set(&p, NVDLA_CACC_D_DATAOUT_SIZE_0_0, size0);
    set(&p, NVDLA_CSC_D_ATOMICS_0, 2048 * 1024 - 1);
    set(&p, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, 2047);
    set(&p, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, 1023);
    open_dev(&t);
    int rc = run(&t, &p);
    if (rc != DLASIM_ERR_UNSUPPORTED) {
        fail_msg("expected DLASIM_ERR_UNSUPPORTED, got %s: %s", dlasim_status_name(rc),
                 dlasim_last_error(t.dev));
    }
    assert_non_null(strstr(dlasim_last_error(t.dev), "host limits"));
    dlasim_destroy(t.dev);
}

/* ---- status registers and recovery -------------------------------------------------------- */

static void test_status_registers(void **state)
{
    (void)state;
    struct dev t;
    struct prog p;
    struct geom g;
    open_dev(&t);
    assert_int_equal(rd(t.dev, NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0), 1);
    feature_base(&p, &g);
    assert_int_equal(run(&t, &p), 0);
    wr(t.dev, NVDLA_CDMA_S_POINTER_0, 0);
    assert_int_equal(rd(t.dev, NVDLA_CDMA_D_NAN_INPUT_DATA_NUM_0), 0);
    assert_int_equal(rd(t.dev, NVDLA_CDMA_D_INF_INPUT_WEIGHT_NUM_0), 0);
    dlasim_reset(t.dev);
    assert_int_equal(rd(t.dev, NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0), 1);
    dlasim_destroy(t.dev);
}

/* A refused layer leaves CBUF empty; the next valid layer runs and its
 * data reuse request finds nothing kept (it fetches, as after reset). */
static void test_recovery_after_refusal(void **state)
{
    (void)state;
    struct dev t;
    struct prog good, bad;
    struct geom g;
    feature_base(&good, &g);
    bad = good;
    set(&bad, NVDLA_CSC_D_ATOMICS_0, 0);
    open_dev(&t);
    assert_int_equal(run(&t, &bad), DLASIM_ERR_PROG);
    int rc = run(&t, &good);
    if (rc) {
        fail_msg("valid layer after a refused one: %s", dlasim_last_error(t.dev));
    }
    dlasim_destroy(t.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_banks_over_capacity),
        cmocka_unit_test(test_entries_mismatch),
        cmocka_unit_test(test_data_exceeds_banks),
        cmocka_unit_test(test_kernel_group_exceeds_weight_banks),
        cmocka_unit_test(test_kept_weights_exceed_weight_banks),
        cmocka_unit_test(test_release_exceeds_slices),
        cmocka_unit_test(test_csc_reads_more_slices),
        cmocka_unit_test(test_weight_reuse_without_kept_weights),
        cmocka_unit_test(test_data_reuse_other_geometry),
        cmocka_unit_test(test_csc_width_differs_from_cdma),
        cmocka_unit_test(test_csc_flags_differ_from_cdma),
        cmocka_unit_test(test_kernels_differ_from_output_channels),
        cmocka_unit_test(test_weight_channels_differ_from_data),
        cmocka_unit_test(test_byte_per_kernel_mismatch),
        cmocka_unit_test(test_weight_bytes_too_small),
        cmocka_unit_test(test_atomics_mismatch),
        cmocka_unit_test(test_cacc_size_differs_from_csc),
        cmocka_unit_test(test_sdp_cube_differs_from_cacc),
        cmocka_unit_test(test_cmac_precision_differs),
        cmocka_unit_test(test_post_extension_on_feature_input),
        cmocka_unit_test(test_winograd_on_nv_small),
        cmocka_unit_test(test_int16_on_nv_small),
        cmocka_unit_test(test_compressed_weights_on_nv_small),
        cmocka_unit_test(test_batches_on_nv_small),
        cmocka_unit_test(test_batches_on_nv_small_256),
        cmocka_unit_test(test_misaligned_input),
        cmocka_unit_test(test_pixel_format_not_in_config),
        cmocka_unit_test(test_pixel_format_unlisted),
        cmocka_unit_test(test_pixel_mapping),
        cmocka_unit_test(test_pixel_y_offset),
        cmocka_unit_test(test_pixel_x_offset_beyond_atom),
        cmocka_unit_test(test_pixel_line_stride_too_small),
        cmocka_unit_test(test_pixel_kernel_not_channel_extended),
        cmocka_unit_test(test_pixel_post_extension_channels),
        cmocka_unit_test(test_pixel_entries_mismatch),
        cmocka_unit_test(test_layer_beyond_host_limits),
        cmocka_unit_test(test_status_registers),
        cmocka_unit_test(test_recovery_after_refusal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
