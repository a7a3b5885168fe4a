/* The convolution test layer (see convlayer.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "convlayer.h"
#include "rng.h"
#include "testdev.h"

void tdev_open(struct tdev *t, const char *config, uint64_t *rng)
{
    memset(t, 0, sizeof(*t));
    conv_ring_reset();
    t->dev = tdev_new(config, NULL, 0, 2);
    t->rng = rng;
    t->m = param(t->dev, "NVDLA_MEMORY_ATOMIC_SIZE");
    t->ac = param(t->dev, "NVDLA_MAC_ATOMIC_C_SIZE");
    t->ak = param(t->dev, "NVDLA_MAC_ATOMIC_K_SIZE");
    t->bw = param(t->dev, "NVDLA_CBUF_BANK_WIDTH");
    t->depth = param(t->dev, "NVDLA_CBUF_BANK_DEPTH");
    t->banks = param(t->dev, "NVDLA_CBUF_BANK_NUMBER");
}

/* ---- pixel formats ------------------------------------------------------------------ */

#define TF(ID, COMPONENTS, SEMI, UV, BITS)                                                    \
    { NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_##ID, COMPONENTS, SEMI, UV, BITS }

const struct tfmt conv_fmts[] = {
    TF(T_R8, "R", 0, NULL, 8),
    TF(T_A8B8G8R8, "ABGR", 0, NULL, 8),
    TF(T_A8R8G8B8, "ARGB", 0, NULL, 8),
    TF(T_B8G8R8A8, "BGRA", 0, NULL, 8),
    TF(T_R8G8B8A8, "RGBA", 0, NULL, 8),
    TF(T_X8B8G8R8, "XBGR", 0, NULL, 8),
    TF(T_X8R8G8B8, "XRGB", 0, NULL, 8),
    TF(T_B8G8R8X8, "BGRX", 0, NULL, 8),
    TF(T_R8G8B8X8, "RGBX", 0, NULL, 8),
    TF(T_A8Y8U8V8, "AYUV", 0, NULL, 8),
    TF(T_V8U8Y8A8, "VUYA", 0, NULL, 8),
    TF(T_A2B10G10R10, "ABGR", 0, NULL, 10),
    TF(T_A2R10G10B10, "ARGB", 0, NULL, 10),
    TF(T_B10G10R10A2, "BGRA", 0, NULL, 10),
    TF(T_R10G10B10A2, "RGBA", 0, NULL, 10),
    TF(T_Y8___U8V8_N444, "YUV", 1, "UV", 8),
    TF(T_Y8___V8U8_N444, "YUV", 1, "VU", 8),
};

const size_t conv_n_fmts = sizeof(conv_fmts) / sizeof(conv_fmts[0]);

const struct tfmt *conv_fmt_by_id(uint32_t id)
{
    for (size_t i = 0; i < conv_n_fmts; i++) {
        if (conv_fmts[i].id == id) {
            return &conv_fmts[i];
        }
    }
    return NULL;
}

unsigned conv_fmt_elems(const struct tfmt *f)
{
    return (unsigned)strlen(f->components);
}

unsigned conv_fmt_bpp0(const struct tfmt *f)
{
    return f->semi ? 1 : conv_fmt_elems(f);
}

/* CBUF order of the components: R,G,B,A(X) or Y,U,V,A. */
static char component_of(const struct tfmt *f, unsigned e)
{
    if (strchr(f->components, 'Y')) {
        return "YUVA"[e];
    }
    if (conv_fmt_elems(f) == 1) {
        return 'R';
    }
    return e == 3 ? (strchr(f->components, 'X') ? 'X' : 'A') : "RGB"[e];
}

/* Byte offset of a component in a little-endian word named MSB first. */
static unsigned byte_of(const char *name, char comp)
{
    const char *p = strchr(name, comp);
    assert_non_null(p);
    return (unsigned)(strlen(name) - 1 - (size_t)(p - name));
}

/*
 * Byte of a packed pixel feeding CBUF element e.  Byte-wide components are
 * reordered to R,G,B,A (Y,U,V,A).  The configurations tested are int8-only
 * builds (hw spec/defs/nv_small*.spec, nv_large.spec: FEATURE_DATA_TYPE_INT8),
 * whose CDMA does not decode the 10-bit formats (vmod
 * NV_NVDLA_CDMA_IMG_ctrl.v: those cases are under #ifndef
 * NVDLA_FEATURE_DATA_TYPE_INT8) and reads their 32-bit word as four bytes in
 * memory order, like A8B8G8R8.
 */
static unsigned packed_byte(const struct tfmt *f, unsigned e)
{
    if (f->bits > 8) {
        return e;
    }
    return byte_of(f->components, component_of(f, e));
}

/* ---- layers ------------------------------------------------------------------------- */

uint32_t conv_div_up(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

uint32_t conv_round_up(uint32_t a, uint32_t b)
{
    return conv_div_up(a, b) * b;
}

uint32_t conv_batches(const struct conv *L)
{
    return L->batches ? L->batches : 1;
}

void conv_free(struct conv *L)
{
    free(L->op);
    free(L->in);
    free(L->img0);
    free(L->img1);
    free(L->wt);
    memset(L, 0, sizeof(*L));
}

uint32_t conv_kernel_c(const struct conv *L)
{
    return L->pixel ? L->kw * L->c : L->c;
}

uint32_t conv_bytes_per_kernel(const struct conv *L)
{
    uint32_t bytes = L->precision ? 2 : 1;
    return (L->pixel ? conv_kernel_c(L) * L->kh : L->kw * L->kh * L->c) * bytes;
}

uint32_t conv_entries(const struct tdev *t, const struct conv *L)
{
    if (L->pixel) {
        return conv_div_up(conv_round_up((L->pl + L->w + L->pr) * L->c, t->m), t->bw);
    }
    uint32_t apc = t->bw / t->m;
    uint32_t atoms = conv_div_up(L->c, t->m);
    uint32_t full = atoms / apc, rest = atoms % apc;
    uint32_t e = full * L->w;
    if (rest == 0) {
        return e;
    }
    if (2 * rest > apc) {
        return e + L->w;
    }
    if (4 * rest > apc) {
        return e + conv_div_up(L->w, 2);
    }
    return e + conv_div_up(L->w, 4);
}

int conv_plan_banks(struct tdev *t, struct conv *L)
{
    uint64_t bank_bytes = (uint64_t)t->bw * t->depth;
    L->entries = conv_entries(t, L) + L->extra_entries;
    L->data_bank = conv_div_up(L->h * conv_batches(L) * L->entries, t->depth);
    L->wt_bytes = conv_round_up(conv_bytes_per_kernel(L) * L->k, 128);
    uint64_t group = (uint64_t)(L->k < t->ak ? L->k : t->ak) * conv_bytes_per_kernel(L);
    uint64_t kept = L->skip_weight_rls ? L->wt_bytes : group;
    L->weight_bank = (uint32_t)((kept + bank_bytes - 1) / bank_bytes);
    if (L->data_bank == 0) {
        L->data_bank = 1;
    }
    if (L->weight_bank == 0) {
        L->weight_bank = 1;
    }
    if (L->data_bank + L->weight_bank > t->banks) {
        return 0;
    }
    uint32_t spare = t->banks - L->data_bank - L->weight_bank;
    L->weight_bank += splitmix64_range(t->rng, 0, spare);
    return 1;
}

size_t conv_wt_offset(const struct tdev *t, const struct conv *L, uint32_t k, uint32_t j,
                      uint32_t r, uint32_t x)
{
    uint32_t kc = conv_kernel_c(L), kw = L->pixel ? 1 : L->kw;
    uint32_t npos = kw * L->kh;
    uint32_t g = k / t->ak, kpg = L->k - g * t->ak < t->ak ? L->k - g * t->ak : t->ak;
    size_t base = (size_t)g * t->ak * npos * kc;
    if (L->pixel && L->post_ext) {
        uint32_t ext = 1u << L->post_ext;
        uint32_t s = r / ext, last = conv_div_up(L->kh, ext) - 1;
        uint32_t rows = (s == last && L->kh % ext) ? L->kh % ext : ext;
        return base + (size_t)s * kc * ext * kpg + (size_t)(k % t->ak) * kc * rows +
               (size_t)(r % ext) * kc + j;
    }
    uint32_t b = j / t->ac, cb = kc - b * t->ac < t->ac ? kc - b * t->ac : t->ac;
    uint32_t pos = r * kw + x;
    return base + (size_t)b * t->ac * npos * kpg + (size_t)pos * cb * kpg +
           (size_t)(k % t->ak) * cb + j % t->ac;
}

uint8_t *conv_weight_stream(const struct tdev *t, const struct conv *L)
{
    uint8_t *buf = calloc(1, L->wt_bytes);
    assert_non_null(buf);
    uint32_t kc = conv_kernel_c(L);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t r = 0; r < L->kh; r++) {
            if (L->pixel) {
                for (uint32_t j = 0; j < kc; j++) {
                    buf[conv_wt_offset(t, L, k, j, r, 0)] =
                        (uint8_t)L->wt[((size_t)k * L->kh + r) * kc + j];
                }
                continue;
            }
            for (uint32_t c = 0; c < L->c; c++) {
                for (uint32_t x = 0; x < L->kw; x++) {
                    buf[conv_wt_offset(t, L, k, c, r, x)] =
                        (uint8_t)L->wt[(((size_t)k * L->c + c) * L->kh + r) * L->kw + x];
                }
            }
        }
    }
    return buf;
}

void conv_write_weights(struct tdev *t, const struct conv *L)
{
    uint8_t *buf = conv_weight_stream(t, L);
    mem_wr(t->dev, CONV_WT_ADDR, buf, L->wt_bytes);
    free(buf);
}

/* Batch b at b * D_BATCH_STRIDE, each laid out as one cube. */
void conv_write_feature(struct tdev *t, const struct conv *L)
{
    uint32_t surfaces = conv_div_up(L->c, t->m);
    size_t n = (size_t)(conv_batches(L) - 1) * L->batch_stride +
               (size_t)surfaces * L->surf_stride;
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    splitmix64_fill(t->rng, buf, n); /* gaps and padding channels hold garbage */
    for (uint32_t b = 0; b < conv_batches(L); b++) {
        for (uint32_t c = 0; c < L->c; c++) {
            for (uint32_t y = 0; y < L->fetch_h; y++) {
                for (uint32_t x = 0; x < L->w; x++) {
                    size_t at = (size_t)b * L->batch_stride + (size_t)(c / t->m) * L->surf_stride +
                                (size_t)y * L->line_stride + (size_t)x * t->m + c % t->m;
                    buf[at] = (uint8_t)L->in[(((size_t)b * L->c + c) * L->fetch_h + y) * L->w + x];
                }
            }
        }
    }
    mem_wr(t->dev, CONV_IN_ADDR, buf, n);
    free(buf);
}

/* Per kernel one byte per channel; per element a cube of bytes laid out
 * like the output. */
void conv_write_operand(struct tdev *t, const struct conv *L)
{
    if (L->op_mode == OP_PER_KERNEL) {
        mem_wr(t->dev, CONV_OP_ADDR, L->op, L->k);
        return;
    }
    size_t n = (size_t)conv_div_up(L->k, t->m) * L->op_surf;
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    splitmix64_fill(t->rng, buf, n);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t y = 0; y < L->oh; y++) {
            for (uint32_t x = 0; x < L->ow; x++) {
                buf[(size_t)(k / t->m) * L->op_surf + (size_t)y * L->op_line + (size_t)x * t->m +
                    k % t->m] = (uint8_t)L->op[((size_t)k * L->oh + y) * L->ow + x];
            }
        }
    }
    mem_wr(t->dev, CONV_OP_ADDR, buf, n);
    free(buf);
}

void conv_write(struct tdev *t, const struct conv *L)
{
    if (L->pixel) {
        mem_wr(t->dev, CONV_IN_ADDR, L->img0, (size_t)L->line_stride * L->h);
        if (L->img1) {
            mem_wr(t->dev, CONV_IN1_ADDR, L->img1, (size_t)L->uv_stride * L->h);
        }
    } else {
        conv_write_feature(t, L);
    }
    conv_write_weights(t, L);
    if (L->op_mode != OP_REG) {
        conv_write_operand(t, L);
    }
}

/* ---- programming ------------------------------------------------------------------ */

void conv_pointers(struct dlasim_dev *dev, unsigned group)
{
    static const uint32_t pointers[] = {
        NVDLA_CDMA_S_POINTER_0,   NVDLA_CSC_S_POINTER_0,  NVDLA_CMAC_A_S_POINTER_0,
        NVDLA_CMAC_B_S_POINTER_0, NVDLA_CACC_S_POINTER_0, NVDLA_SDP_S_POINTER_0,
    };
    for (size_t i = 0; i < sizeof(pointers) / sizeof(pointers[0]); i++) {
        wr(dev, pointers[i], group);
    }
}

void conv_enable(struct dlasim_dev *dev)
{
    static const uint32_t enables[] = {
        NVDLA_SDP_D_OP_ENABLE_0,    NVDLA_CACC_D_OP_ENABLE_0, NVDLA_CMAC_A_D_OP_ENABLE_0,
        NVDLA_CMAC_B_D_OP_ENABLE_0, NVDLA_CSC_D_OP_ENABLE_0,  NVDLA_CDMA_D_OP_ENABLE_0,
    };
    for (size_t i = 0; i < sizeof(enables) / sizeof(enables[0]); i++) {
        wr(dev, enables[i], 1);
    }
}

/* D_MISC_CFG of CDMA and CSC (the same fields). */
static uint32_t misc_flags(const struct conv *L)
{
    return F(CDMA, D_MISC_CFG, IN_PRECISION, (uint32_t)L->precision) |
           F(CDMA, D_MISC_CFG, PROC_PRECISION, (uint32_t)L->precision) |
           F(CDMA, D_MISC_CFG, DATA_REUSE, L->data_reuse) |
           F(CDMA, D_MISC_CFG, WEIGHT_REUSE, L->weight_reuse) |
           F(CDMA, D_MISC_CFG, SKIP_DATA_RLS, L->skip_data_rls) |
           F(CDMA, D_MISC_CFG, SKIP_WEIGHT_RLS, L->skip_weight_rls);
}

void conv_program_cdma(struct tdev *t, const struct conv *L)
{
    struct dlasim_dev *d = t->dev;
    wr(d, NVDLA_CDMA_D_MISC_CFG_0, misc_flags(L));
    wr(d, NVDLA_CDMA_D_DATAIN_FORMAT_0,
       F(CDMA, D_DATAIN_FORMAT, DATAIN_FORMAT, L->pixel) |
           F(CDMA, D_DATAIN_FORMAT, PIXEL_FORMAT, L->pixel ? L->fmt->id : 0) |
           F(CDMA, D_DATAIN_FORMAT, PIXEL_SIGN_OVERRIDE, L->pixel ? L->sign : 0));
    wr(d, NVDLA_CDMA_D_DATAIN_SIZE_0_0,
       F(CDMA, D_DATAIN_SIZE_0, DATAIN_WIDTH, L->w - 1) |
           F(CDMA, D_DATAIN_SIZE_0, DATAIN_HEIGHT, L->fetch_h - 1));
    wr(d, NVDLA_CDMA_D_DATAIN_SIZE_1_0, L->c - 1);
    wr(d, NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0,
       F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, L->w - 1) |
           F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, L->h - 1));
    wr(d, NVDLA_CDMA_D_PIXEL_OFFSET_0, F(CDMA, D_PIXEL_OFFSET, PIXEL_X_OFFSET, L->x_off));
    wr(d, NVDLA_CDMA_D_DAIN_RAM_TYPE_0, NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_MCIF);
    wr(d, NVDLA_CDMA_D_DAIN_ADDR_HIGH_0_0, (uint32_t)(CONV_IN_ADDR >> 32));
    wr(d, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)CONV_IN_ADDR);
    wr(d, NVDLA_CDMA_D_DAIN_ADDR_HIGH_1_0, (uint32_t)(CONV_IN1_ADDR >> 32));
    wr(d, NVDLA_CDMA_D_DAIN_ADDR_LOW_1_0, (uint32_t)CONV_IN1_ADDR);
    wr(d, NVDLA_CDMA_D_LINE_STRIDE_0, L->line_stride);
    wr(d, NVDLA_CDMA_D_LINE_UV_STRIDE_0, L->uv_stride);
    wr(d, NVDLA_CDMA_D_SURF_STRIDE_0, L->packed_1x1 ? 0x12340 * t->m : L->surf_stride);
    wr(d, NVDLA_CDMA_D_DAIN_MAP_0,
       F(CDMA, D_DAIN_MAP, LINE_PACKED, L->line_stride == L->w * t->m) |
           F(CDMA, D_DAIN_MAP, SURF_PACKED,
             L->packed_1x1 || L->surf_stride == L->w * L->fetch_h * t->m));
    wr(d, NVDLA_CDMA_D_BATCH_NUMBER_0, conv_batches(L) - 1);
    wr(d, NVDLA_CDMA_D_BATCH_STRIDE_0, L->batch_stride);
    wr(d, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, L->entries - 1);
    wr(d, NVDLA_CDMA_D_FETCH_GRAIN_0, 0);
    wr(d, NVDLA_CDMA_D_WEIGHT_FORMAT_0, 0);
    wr(d, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, conv_bytes_per_kernel(L) - 1);
    wr(d, NVDLA_CDMA_D_WEIGHT_SIZE_1_0, L->k - 1);
    wr(d, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0_WEIGHT_RAM_TYPE_MCIF);
    wr(d, NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0, (uint32_t)(CONV_WT_ADDR >> 32));
    wr(d, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0, (uint32_t)CONV_WT_ADDR);
    wr(d, NVDLA_CDMA_D_WEIGHT_BYTES_0, L->wt_bytes);
    wr(d, NVDLA_CDMA_D_MEAN_FORMAT_0, (uint32_t)L->mean_en);
    wr(d, NVDLA_CDMA_D_MEAN_GLOBAL_0_0,
       F(CDMA, D_MEAN_GLOBAL_0, MEAN_RY, (uint32_t)L->mean[0]) |
           F(CDMA, D_MEAN_GLOBAL_0, MEAN_GU, (uint32_t)L->mean[1]));
    wr(d, NVDLA_CDMA_D_MEAN_GLOBAL_1_0,
       F(CDMA, D_MEAN_GLOBAL_1, MEAN_BV, (uint32_t)L->mean[2]) |
           F(CDMA, D_MEAN_GLOBAL_1, MEAN_AX, (uint32_t)L->mean[3]));
    wr(d, NVDLA_CDMA_D_CVT_CFG_0,
       F(CDMA, D_CVT_CFG, CVT_EN, L->cvt_en) | F(CDMA, D_CVT_CFG, CVT_TRUNCATE, L->cvt_trunc));
    wr(d, NVDLA_CDMA_D_CVT_OFFSET_0, (uint32_t)L->cvt_off & 0xffff);
    wr(d, NVDLA_CDMA_D_CVT_SCALE_0, (uint32_t)L->cvt_scale & 0xffff);
    wr(d, NVDLA_CDMA_D_CONV_STRIDE_0,
       F(CDMA, D_CONV_STRIDE, CONV_X_STRIDE, L->sx - 1) |
           F(CDMA, D_CONV_STRIDE, CONV_Y_STRIDE, L->sy - 1));
    wr(d, NVDLA_CDMA_D_ZERO_PADDING_0,
       F(CDMA, D_ZERO_PADDING, PAD_LEFT, L->pl) | F(CDMA, D_ZERO_PADDING, PAD_RIGHT, L->pr) |
           F(CDMA, D_ZERO_PADDING, PAD_TOP, L->pt) | F(CDMA, D_ZERO_PADDING, PAD_BOTTOM, L->pb));
    wr(d, NVDLA_CDMA_D_ZERO_PADDING_VALUE_0, L->cdma_pad);
    wr(d, NVDLA_CDMA_D_BANK_0,
       F(CDMA, D_BANK, DATA_BANK, L->data_bank - 1) |
           F(CDMA, D_BANK, WEIGHT_BANK, L->weight_bank - 1));
}

void conv_program_csc(struct tdev *t, const struct conv *L)
{
    struct dlasim_dev *d = t->dev;
    wr(d, NVDLA_CSC_D_MISC_CFG_0, misc_flags(L));
    wr(d, NVDLA_CSC_D_DATAIN_FORMAT_0, (uint32_t)L->pixel);
    wr(d, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0,
       F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, L->w - 1) |
           F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, L->h - 1));
    wr(d, NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0, L->c - 1);
    wr(d, NVDLA_CSC_D_BATCH_NUMBER_0, conv_batches(L) - 1);
    wr(d, NVDLA_CSC_D_POST_Y_EXTENSION_0, L->post_ext);
    wr(d, NVDLA_CSC_D_ENTRY_PER_SLICE_0, L->entries - 1);
    wr(d, NVDLA_CSC_D_WEIGHT_FORMAT_0, 0);
    wr(d, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0,
       F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT, L->pixel ? 0 : L->kw - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT, L->kh - 1));
    wr(d, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
       F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT, conv_kernel_c(L) - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL, L->k - 1));
    wr(d, NVDLA_CSC_D_WEIGHT_BYTES_0, L->wt_bytes);
    wr(d, NVDLA_CSC_D_WMB_BYTES_0, 0);
    wr(d, NVDLA_CSC_D_DATAOUT_SIZE_0_0,
       F(CSC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, L->ow - 1) |
           F(CSC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, L->oh - 1));
    wr(d, NVDLA_CSC_D_DATAOUT_SIZE_1_0, L->k - 1);
    wr(d, NVDLA_CSC_D_ATOMICS_0, L->ow * L->oh - 1);
    wr(d, NVDLA_CSC_D_RELEASE_0, L->rls - 1);
    wr(d, NVDLA_CSC_D_CONV_STRIDE_EXT_0,
       F(CSC, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT, L->sx - 1) |
           F(CSC, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT, L->sy - 1));
    wr(d, NVDLA_CSC_D_DILATION_EXT_0,
       F(CSC, D_DILATION_EXT, X_DILATION_EXT, L->dx - 1) |
           F(CSC, D_DILATION_EXT, Y_DILATION_EXT, L->dy - 1));
    wr(d, NVDLA_CSC_D_ZERO_PADDING_0,
       F(CSC, D_ZERO_PADDING, PAD_LEFT, L->pixel ? 0 : L->pl) |
           F(CSC, D_ZERO_PADDING, PAD_TOP, L->pt));
    wr(d, NVDLA_CSC_D_ZERO_PADDING_VALUE_0, L->pad_value);
    wr(d, NVDLA_CSC_D_BANK_0,
       F(CSC, D_BANK, DATA_BANK, L->data_bank - 1) |
           F(CSC, D_BANK, WEIGHT_BANK, L->weight_bank - 1));
    wr(d, NVDLA_CSC_D_PRA_CFG_0, 0);
}

void conv_program_cacc(struct tdev *t, const struct conv *L)
{
    struct dlasim_dev *d = t->dev;
    wr(d, NVDLA_CMAC_A_D_MISC_CFG_0, F(CMAC_A, D_MISC_CFG, PROC_PRECISION, (uint32_t)L->precision));
    wr(d, NVDLA_CMAC_B_D_MISC_CFG_0, F(CMAC_B, D_MISC_CFG, PROC_PRECISION, (uint32_t)L->precision));
    wr(d, NVDLA_CACC_D_MISC_CFG_0, F(CACC, D_MISC_CFG, PROC_PRECISION, (uint32_t)L->precision));
    wr(d, NVDLA_CACC_D_DATAOUT_SIZE_0_0,
       F(CACC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, L->ow - 1) |
           F(CACC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, L->oh - 1));
    wr(d, NVDLA_CACC_D_DATAOUT_SIZE_1_0, L->k - 1);
    wr(d, NVDLA_CACC_D_BATCH_NUMBER_0, conv_batches(L) - 1);
    wr(d, NVDLA_CACC_D_CLIP_CFG_0, L->trunc);
}

void conv_program_sdp(struct tdev *t, const struct conv *L)
{
    struct dlasim_dev *d = t->dev;
    wr(d, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, L->ow - 1);
    wr(d, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, L->oh - 1);
    wr(d, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, L->k - 1);
    wr(d, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(CONV_OUT_ADDR >> 32));
    wr(d, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)CONV_OUT_ADDR);
    wr(d, NVDLA_SDP_D_DST_LINE_STRIDE_0, L->out_line);
    wr(d, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, L->out_surf);
    if (L->bias_en || L->op_mode != OP_REG) {
        wr(d, NVDLA_SDP_D_DP_BS_CFG_0,
           F(SDP, D_DP_BS_CFG, BS_ALU_ALGO, NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_ALGO_SUM) |
               F(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, 1) | F(SDP, D_DP_BS_CFG, BS_RELU_BYPASS, 1));
        wr(d, NVDLA_SDP_D_DP_BS_ALU_CFG_0,
           F(SDP, D_DP_BS_ALU_CFG, BS_ALU_SRC, L->op_mode != OP_REG));
        wr(d, NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE_0, (uint32_t)L->bias & 0xffff);
    } else {
        wr(d, NVDLA_SDP_D_DP_BS_CFG_0, 0x53);
    }
    wr(d, NVDLA_SDP_D_DP_BN_CFG_0, 0x53);
    wr(d, NVDLA_SDP_D_DP_EW_CFG_0, 0x53);
    wr(d, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
           F(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, conv_batches(L) - 1));
    wr(d, NVDLA_SDP_D_DST_BATCH_STRIDE_0, L->out_batch);
    wr(d, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(d, NVDLA_SDP_D_DATA_FORMAT_0,
       F(SDP, D_DATA_FORMAT, PROC_PRECISION, (uint32_t)L->precision) |
           F(SDP, D_DATA_FORMAT, OUT_PRECISION, (uint32_t)L->precision));
    wr(d, NVDLA_SDP_D_CVT_OFFSET_0, (uint32_t)L->sdp_offset);
    wr(d, NVDLA_SDP_D_CVT_SCALE_0, L->sdp_scale ? L->sdp_scale : 1);
    wr(d, NVDLA_SDP_D_CVT_SHIFT_0, L->sdp_shift);
}

void conv_program_sdp_rdma(struct tdev *t, const struct conv *L)
{
    struct dlasim_dev *d = t->dev;
    const uint32_t mode = L->op_mode == OP_PER_ELEMENT
                              ? NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_ELEMENT
                              : NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_KERNEL;
    wr(d, NVDLA_SDP_RDMA_S_POINTER_0, (rd(d, NVDLA_SDP_RDMA_S_POINTER_0) >> 16) & 1u);
    wr(d, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, L->ow - 1);
    wr(d, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, L->oh - 1);
    wr(d, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, L->k - 1);
    wr(d, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
       F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE,
         NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
           F(SDP_RDMA, D_FEATURE_MODE_CFG, BATCH_NUMBER, conv_batches(L) - 1));
    wr(d, NVDLA_SDP_RDMA_D_BRDMA_CFG_0,
       F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_ALU) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE,
             NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_SIZE_ONE_BYTE) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE, mode) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE,
             NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_RAM_TYPE_MC));
    wr(d, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH_0, (uint32_t)(CONV_OP_ADDR >> 32));
    wr(d, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0, (uint32_t)CONV_OP_ADDR);
    wr(d, NVDLA_SDP_RDMA_D_BS_LINE_STRIDE_0, L->op_line);
    wr(d, NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE_0, L->op_surf);
    /* per-batch operand strides exist as registers but feed nothing */
    wr(d, NVDLA_SDP_RDMA_D_BS_BATCH_STRIDE_0, 0x12345 * t->m);
    wr(d, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, F(SDP_RDMA, D_NRDMA_CFG, NRDMA_DISABLE, 1));
    wr(d, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, F(SDP_RDMA, D_ERDMA_CFG, ERDMA_DISABLE, 1));
}

/* ---- reference -------------------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The 50-bit {sum, 16'b0} shifted right, guide + 15 sticky bits. */
int32_t conv_ref_cacc(int64_t v, unsigned trunc, unsigned *sat)
{
    int64_t q = floor_div(v * 65536, (int64_t)1 << trunc);
    int64_t top = floor_div(q, 65536);
    unsigned low = (unsigned)(q - top * 65536);
    int guide = (low >> 15) & 1, sticky = (low & 0x7fff) != 0;
    int64_t r = top + (guide && (v >= 0 || sticky));
    if (v < 0 && top < INT32_MIN) {
        (*sat)++;
        return INT32_MIN;
    }
    if (v >= 0 && r > INT32_MAX) {
        (*sat)++;
        return INT32_MAX;
    }
    return (int32_t)r;
}

/* ---- the weight ring --------------------------------------------------------------------
 * CDMA writes weight streams into the weight banks as a ring and CSC reads
 * them with pointers kept across layers until D_BANK changes (src/sim/nvdla/cbuf.c,
 * vmod NV_NVDLA_CDMA_wt.v / NV_NVDLA_CSC_wl.v / NV_NVDLA_CSC_sg.v): a layer
 * that fetched and released weights whose 128-byte padded stream is longer
 * than the entries its kernel groups occupy leaves `lag` entries, which the
 * next layer's CSC reads before its own stream.  The reference reads each
 * layer's kernels the same way: from (previous tail ++ stream). */
static struct {
    struct dlasim_dev *dev;   /* the device the state belongs to */
    int have;                 /* a layer completed on it */
    uint32_t data_bank, weight_bank;
    uint32_t lag;             /* entries left unreleased */
    uint8_t *tail;            /* their bytes */
    int8_t *wt;               /* the kernels CSC reads for the current layer (planar) */
    uint8_t *eff;             /* tail ++ stream of the current layer */
    size_t eff_len;
} ring;

static size_t planar_weights(const struct conv *L)
{
    return L->pixel ? (size_t)L->k * L->kh * conv_kernel_c(L) : (size_t)L->k * L->c * L->kh * L->kw;
}

/* Before a layer runs: the kernels CSC will read (ring.wt). */
void conv_ring_before(struct tdev *t, const struct conv *L)
{
    if (ring.dev != t->dev) {
        free(ring.tail);
        ring.tail = NULL;
        ring.have = 0;
        ring.lag = 0;
        ring.dev = t->dev;
    }
    free(ring.wt);
    free(ring.eff);
    ring.wt = NULL;
    ring.eff = NULL;
    if (L->weight_reuse) {
        return;
    }
    uint32_t lag = ring.have && ring.data_bank == L->data_bank && ring.weight_bank == L->weight_bank
                       ? ring.lag : 0;
    size_t lag_bytes = (size_t)lag * t->bw;
    uint8_t *stream = conv_weight_stream(t, L);
    ring.eff_len = lag_bytes + L->wt_bytes;
    ring.eff = malloc(ring.eff_len);
    ring.wt = malloc(planar_weights(L));
    if (!ring.eff || !ring.wt) {
        abort();
    }
    if (lag_bytes) {
        memcpy(ring.eff, ring.tail, lag_bytes);
    }
    memcpy(ring.eff + lag_bytes, stream, L->wt_bytes);
    free(stream);
    uint32_t kc = L->pixel ? conv_kernel_c(L) : L->c, kw = L->pixel ? 1 : L->kw;
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t j = 0; j < kc; j++) {
            for (uint32_t r = 0; r < L->kh; r++) {
                for (uint32_t x = 0; x < kw; x++) {
                    size_t at = L->pixel ? ((size_t)k * L->kh + r) * kc + j
                                         : (((size_t)k * L->c + j) * L->kh + r) * L->kw + x;
                    ring.wt[at] = (int8_t)ring.eff[conv_wt_offset(t, L, k, j, r, x)];
                }
            }
        }
    }
}

/* After it ran: what it leaves in the ring. */
void conv_ring_after(struct tdev *t, const struct conv *L, int rc)
{
    ring.lag = 0;
    ring.have = !rc;
    ring.data_bank = L->data_bank;
    ring.weight_bank = L->weight_bank;
    if (rc || L->weight_reuse || L->skip_weight_rls || !ring.eff) {
        return;
    }
    uint64_t bpk = conv_bytes_per_kernel(L), released = 0;
    for (uint32_t k0 = 0; k0 < L->k; k0 += t->ak) {
        uint32_t kg = L->k - k0 < t->ak ? L->k - k0 : t->ak;
        released += (kg * bpk + t->bw - 1) / t->bw;
    }
    uint64_t total = ring.eff_len / t->bw;
    if (released < total) {
        ring.lag = (uint32_t)(total - released);
        free(ring.tail);
        ring.tail = malloc((size_t)ring.lag * t->bw);
        if (!ring.tail) {
            abort();
        }
        memcpy(ring.tail, ring.eff + ring.eff_len - (size_t)ring.lag * t->bw,
               (size_t)ring.lag * t->bw);
    }
}

void conv_ring_view(const struct conv *L, struct conv *view)
{
    *view = *L;
    if (ring.wt) {
        view->wt = ring.wt;
    }
}

uint32_t conv_ring_lag(void)
{
    return ring.lag;
}

void conv_ring_reset(void)
{
    free(ring.tail);
    free(ring.wt);
    free(ring.eff);
    memset(&ring, 0, sizeof(ring));
}

int8_t sat8(int64_t v)
{
    return (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
}

static int8_t cvt_ref(const struct conv *L, uint8_t b, unsigned e)
{
    if (!L->cvt_en) {
        return (int8_t)b;
    }
    int64_t x = L->sign ? (int8_t)b : b;
    int64_t v = (x - (L->mean_en ? L->mean[e] : L->cvt_off)) * L->cvt_scale;
    if (L->cvt_trunc) {
        int64_t half = (int64_t)1 << (L->cvt_trunc - 1);
        int64_t mag = v < 0 ? -v : v;
        mag = (mag + half) >> L->cvt_trunc;
        v = v < 0 ? -mag : mag;
    }
    return sat8(v);
}

/* Element e of pixel p (0 = first pixel after the left padding) of line y. */
static int8_t pixel_elem(const struct tdev *t, const struct conv *L, uint32_t y, uint32_t p,
                         unsigned e)
{
    const struct tfmt *f = L->fmt;
    char comp = component_of(f, e);
    uint8_t b;
    if (!f->semi) {
        b = L->img0[(size_t)y * L->line_stride + (size_t)(L->x_off + p) * conv_fmt_bpp0(f) +
                    packed_byte(f, e)];
    } else if (comp == 'Y') {
        b = L->img0[(size_t)y * L->line_stride + L->x_off + p];
    } else {
        size_t first = (L->x_off * 2) % t->m;
        b = L->img1[(size_t)y * L->uv_stride + first + (size_t)p * 2 + byte_of(f->uv, comp)];
    }
    return cvt_ref(L, b, e);
}

/* Input value seen by the MACs at padded coordinates. */
static int8_t ref_input(const struct tdev *t, const struct conv *L, uint32_t b, int64_t y,
                        int64_t x, uint32_t c)
{
    int8_t pad = (int8_t)(L->pad_value & 0xff);
    if (L->pixel) {
        if (y < 0 || y >= L->h) {
            return pad;
        }
        if (x < (int64_t)L->pl || x >= (int64_t)(L->pl + L->w)) {
            return (int8_t)(L->cdma_pad & 0xff); /* CDMA's left/right padding */
        }
        return pixel_elem(t, L, (uint32_t)y, (uint32_t)(x - L->pl), c);
    }
    y -= L->pt;
    x -= L->pl;
    if (y < 0 || y >= L->h || x < 0 || x >= L->w) {
        return pad;
    }
    int8_t v = L->in[(((size_t)b * L->c + c) * L->h + (size_t)y) * L->w + (size_t)x];
    return cvt_ref(L, (uint8_t)v, 0); /* feature data: signed, CVT_OFFSET */
}

/* CACC's partial sum: 34-bit signed, saturating. */
static int64_t acc34(int64_t partial, int64_t step)
{
    const int64_t lim = (int64_t)1 << 33;
    int64_t s = partial + step;
    return s >= lim ? lim - 1 : (s < -lim ? -lim : s);
}

/*
 * The atomic operations in the order CSC issues them: Atomic-C channel
 * blocks outer, kernel positions (rows for pixel input, 2 or 4 rows with
 * post-extension) inner.
 */
int64_t conv_ref_sum(const struct tdev *t, const struct conv *L, uint32_t b, uint32_t k,
                     uint32_t oy, uint32_t ox)
{
    int64_t s = 0;
    if (L->pixel) {
        uint32_t kc = conv_kernel_c(L), rows = 1u << L->post_ext;
        for (uint32_t j0 = 0; j0 < kc; j0 += t->ac) {
            for (uint32_t r0 = 0; r0 < L->kh; r0 += rows) {
                int64_t step = 0;
                for (uint32_t r = r0; r < r0 + rows && r < L->kh; r++) {
                    int64_t y = (int64_t)oy * L->sy + r - L->pt;
                    for (uint32_t j = j0; j < j0 + t->ac && j < kc; j++) {
                        int64_t x = (int64_t)ox * L->sx + j / L->c;
                        int8_t w = L->wt[((size_t)k * L->kh + r) * kc + j];
                        step += (int64_t)ref_input(t, L, b, y, x, j % L->c) * w;
                    }
                }
                s = acc34(s, step);
            }
        }
        return s;
    }
    for (uint32_t c0 = 0; c0 < L->c; c0 += t->ac) {
        for (uint32_t r = 0; r < L->kh; r++) {
            for (uint32_t x = 0; x < L->kw; x++) {
                int64_t iy = (int64_t)oy * L->sy + (int64_t)r * L->dy;
                int64_t ix = (int64_t)ox * L->sx + (int64_t)x * L->dx;
                int64_t step = 0;
                for (uint32_t c = c0; c < c0 + t->ac && c < L->c; c++) {
                    int8_t w = L->wt[(((size_t)k * L->c + c) * L->kh + r) * L->kw + x];
                    step += (int64_t)ref_input(t, L, b, iy, ix, c) * w;
                }
                s = acc34(s, step);
            }
        }
    }
    return s;
}

/* vmod NV_NVDLA_SDP_RDMA_EG_ro.v replays each operand for all batches; the
 * D_*_BATCH_STRIDE registers of SDP_RDMA feed nothing. */
int32_t conv_ref_bias(const struct conv *L, uint32_t k, uint32_t y, uint32_t x)
{
    switch (L->op_mode) {
    case OP_PER_ELEMENT:
        return L->op[((size_t)k * L->oh + y) * L->ow + x];
    case OP_PER_KERNEL:
        return L->op[k];
    default:
        return L->bias_en ? L->bias : 0;
    }
}

int8_t conv_ref_sdp(const struct conv *L, int32_t cacc, int32_t bias)
{
    int64_t v = (int64_t)cacc + bias - L->sdp_offset;
    v *= L->sdp_scale ? L->sdp_scale : 1;
    if (L->sdp_shift) {
        int64_t mag = v < 0 ? -v : v;
        mag = (mag + ((int64_t)1 << (L->sdp_shift - 1))) >> L->sdp_shift;
        v = v < 0 ? -mag : mag;
    }
    return sat8(v);
}
