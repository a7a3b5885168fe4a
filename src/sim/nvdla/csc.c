/*
 * CSC — convolution sequence controller, and the orchestration of one
 * convolution layer (dla_conv_execute: CDMA -> CBUF -> CSC -> CMAC -> CACC).
 *
 * CSB window 0x4000-0x4fff (NVDLA_CSC_*).  No interrupt, no memory port.
 *
 * Modelled (ref: cmod/csc NV_NVDLA_csc.cpp):
 *   - direct convolution (SendDataToMacSequencerDirectConvCommon): output
 *     (x, y) reads input (x * STRIDE + kx * DILATION - PAD_LEFT, same in y);
 *     coordinates outside DATAIN_SIZE_EXT read CSC's PAD_VALUE (low byte),
 *     which gives the right/bottom padding implicitly;
 *   - pixel input (SendImageDataToMacSequencerConvCommon and
 *     csc_read_one_image_entry): the kernel is channel-extended (width 1,
 *     WEIGHT_CHANNEL_EXT = kernel width x channels): output (x, y) and kernel
 *     row r read the CBUF line y * STRIDE_Y + r - PAD_TOP from element
 *     x * STRIDE_X * (elements per pixel: 4, 3 or 1 from the low bits of
 *     DATAIN_CHANNEL_EXT, as vmod CSC_dl pixel_x_stride_w) onwards; lines
 *     outside the input read PAD_VALUE; with D_POST_Y_EXTENSION the MAC
 *     array takes 2 or 4 kernel rows per atomic operation (weight layout),
 *     and each output column reads the bytes the RTL's data loader steps
 *     to, which differ from the ideal ones for strides above 1
 *     (post_ext_sources, vmod CSC_dl);
 *   - the weight layout in CBUF (SendWeightToMacSequencerDirectConvCommon):
 *     kernel groups of Atomic-K kernels; in a group, channel blocks of
 *     Atomic-C channels; in a block, kernel positions (row-major); at a
 *     position, each kernel's block of channels.  With post-extension a
 *     position holds 2 or 4 rows of each kernel;
 *   - the products and their sums: the padded planar cube and the planar
 *     kernels go to dla_conv_s8() (src/kernels); sums that could exceed
 *     int32 are split over channel chunks and added in 64 bits; a pixel
 *     kernel too wide for that is accumulated atomic operation by atomic
 *     operation in hardware order (CACC's 34-bit accumulator, which no
 *     programmable kernel can overflow: at most 2^18 products of 2^14).
 *
 * INT16 layers (PROC_PRECISION INT16, feature input; ref: nv_full cmod/csc
 * SendDataToMacSequencerDirectConvCommon / SendWeightToMacSequencerDirectConvCommon
 * with element_size 2): the same addressing with 2-byte elements, the whole
 * 16-bit PAD_VALUE, kernel groups of Atomic-K / 2 kernels; the products go
 * to dla_conv_s16() (exact 64-bit sums) and CACC's 48-bit accumulator
 * (compute_int16).  The int8 decode cache below is not used for them.
 *
 * The planar kernels are decoded from the weight stream with byte
 * transposes (src/arith/atoms.h) and kept in struct dla_conv_state with the
 * bytes and the shape they came from: a layer whose weights are the same
 * bytes read the same way (WEIGHT_REUSE, or the same weights fetched again)
 * uses them without decoding (decode_planar).  Layers whose sums fit int32
 * go further: their kernels, packed for the MAC kernel (dla_conv_wpack), are
 * kept per weight stream in a cache across layers and inferences
 * (cached_weights), so a network's weights are decoded and packed once;
 * an entry is used only for a stream equal byte for byte to the copy it
 * keeps, which stays exact whatever software writes into the weights.  The
 * kernel's threads are a pool kept in the same state (kernel_pool).
 *
 * Checks of the layer as a driver sees them: CSC against CDMA (mode,
 * precision, reuse flags, banks, entries, sizes, kernels, weight bytes),
 * D_ATOMICS, D_RELEASE, post-extension limits.  Layers beyond the model's
 * host limits (2^28-byte buffers, 2^38 MACs, all batches together) return
 * DLASIM_ERR_UNSUPPORTED.
 *
 * Batches (D_BATCH_NUMBER, configurations with NVDLA_BATCH_ENABLE; direct
 * convolution only): every batch is convolved with the same kernels (ref:
 * cmod/csc SendDataToMacSequencerDirectConvCommon issues each atomic
 * operation of a stripe once per batch, batch_index in the stripe info);
 * line y of batch b is CBUF slice y * BATCHES + b.  CACC delivers batch b
 * as batch b of the cube flying to SDP; D_OUT_SATURATION counts all
 * batches.  The hardware interleaves the batches per stripe; the model
 * computes them one after the other, which gives the same values.
 */
#include <stdlib.h>
#include <string.h>

#include "arith/atoms.h"
#include "kernels/conv_dw_s8.h"
#include "kernels/conv_s16.h"
#include "kernels/conv_s8.h"
#include "sim/core/budget.h"
#include "sim/core/host.h"
#include "common/team.h"
#include "sim/nvdla/cbuf.h"

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

/* The decode reads CSC's registers of group g from one array up to the
 * last one it needs (dla_unit_values). */
#define CSC_WORDS (DLA_REG_WORD(NVDLA_CSC_D_BANK_0) + 1u)
#define CSC_F(r, REG, FIELD)                                                              \
    DLA_FIELD(DLA_REG_AT(r, NVDLA_CSC_##REG##_0), NVDLA_CSC_##REG##_0_##FIELD)

/* Products whose sum always fits an int32: |a * b| <= 2^14 for int8.  A
 * kernel has at most 2^18 bytes (D_WEIGHT_SIZE_0.BYTE_PER_KERNEL is 18
 * bits), so a sum never leaves CACC's 34-bit accumulator: above this bound
 * the sums are exact in 64 bits. */
#define CONV_INT32_SAFE_TERMS ((uint64_t)1 << 17)

static void csc_decode(const struct dla_dev *d, unsigned g, struct dla_csc_cfg *c)
{
    uint32_t r[CSC_WORDS];
    dla_unit_values(d, NVDLA_UNIT_CSC, g, r, CSC_WORDS);
    memset(c, 0, sizeof(*c));
    c->conv_mode = CSC_F(r, D_MISC_CFG, CONV_MODE);
    c->in_precision = CSC_F(r, D_MISC_CFG, IN_PRECISION);
    c->proc_precision = CSC_F(r, D_MISC_CFG, PROC_PRECISION);
    c->data_reuse = (int)CSC_F(r, D_MISC_CFG, DATA_REUSE);
    c->weight_reuse = (int)CSC_F(r, D_MISC_CFG, WEIGHT_REUSE);
    c->skip_data_rls = (int)CSC_F(r, D_MISC_CFG, SKIP_DATA_RLS);
    c->skip_weight_rls = (int)CSC_F(r, D_MISC_CFG, SKIP_WEIGHT_RLS);
    c->fmt = CSC_F(r, D_DATAIN_FORMAT, DATAIN_FORMAT) ==
                     NVDLA_CSC_D_DATAIN_FORMAT_0_DATAIN_FORMAT_PIXEL
                 ? DLA_CONV_IN_PIXEL
                 : DLA_CONV_IN_FEATURE;
    c->width = CSC_F(r, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT) + 1;
    c->height = CSC_F(r, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT) + 1;
    c->channel = CSC_F(r, D_DATAIN_SIZE_EXT_1, DATAIN_CHANNEL_EXT) + 1;
    c->batches = CSC_F(r, D_BATCH_NUMBER, BATCHES) + 1;
    c->y_extension = CSC_F(r, D_POST_Y_EXTENSION, Y_EXTENSION);
    c->entries = CSC_F(r, D_ENTRY_PER_SLICE, ENTRIES) + 1;
    c->weight_compressed = CSC_F(r, D_WEIGHT_FORMAT, WEIGHT_FORMAT) ==
                           NVDLA_CSC_D_WEIGHT_FORMAT_0_WEIGHT_FORMAT_COMPRESSED;
    c->kernel_w = CSC_F(r, D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT) + 1;
    c->kernel_h = CSC_F(r, D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT) + 1;
    c->kernel_c = CSC_F(r, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT) + 1;
    c->kernels = CSC_F(r, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL) + 1;
    c->weight_bytes = CSC_F(r, D_WEIGHT_BYTES, WEIGHT_BYTES);
    c->out_w = CSC_F(r, D_DATAOUT_SIZE_0, DATAOUT_WIDTH) + 1;
    c->out_h = CSC_F(r, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT) + 1;
    c->out_c = CSC_F(r, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL) + 1;
    c->atomics = CSC_F(r, D_ATOMICS, ATOMICS) + 1;
    c->rls_slices = CSC_F(r, D_RELEASE, RLS_SLICES) + 1;
    c->stride_x = CSC_F(r, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT) + 1;
    c->stride_y = CSC_F(r, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT) + 1;
    c->dil_x = CSC_F(r, D_DILATION_EXT, X_DILATION_EXT) + 1;
    c->dil_y = CSC_F(r, D_DILATION_EXT, Y_DILATION_EXT) + 1;
    c->pad_left = CSC_F(r, D_ZERO_PADDING, PAD_LEFT);
    c->pad_top = CSC_F(r, D_ZERO_PADDING, PAD_TOP);
    c->pad_value = CSC_F(r, D_ZERO_PADDING_VALUE, PAD_VALUE);
    c->data_bank = CSC_F(r, D_BANK, DATA_BANK) + 1;
    c->weight_bank = CSC_F(r, D_BANK, WEIGHT_BANK) + 1;
}

/*
 * Elements CSC steps over per pixel of a pixel-input line: derived from the
 * two low bits of DATAIN_CHANNEL_EXT (4 for 4-element pixels, 3 for 3, else
 * 1).  ref: vmod/nvdla/csc/NV_NVDLA_CSC_dl.v pixel_x_stride_w.
 */
static uint32_t pixel_stride(const struct dla_csc_cfg *c)
{
    switch ((c->channel - 1) & 3u) {
    case 3:
        return 4;
    case 2:
        return 3;
    default:
        return 1;
    }
}

/* ---- validation ------------------------------------------------------------ */

static int differ(struct dla_dev *d, const char *csc_field, uint32_t csc_v, const char *cdma_field,
                  uint32_t cdma_v)
{
    return dla_error(d, DLASIM_ERR_PROG, "CSC: %s=%u differs from CDMA %s=%u", csc_field, csc_v,
                     cdma_field, cdma_v);
}

#define SAME(cf, cv, df, dv)                                                                   \
    do {                                                                                       \
        if ((uint32_t)(cv) != (uint32_t)(dv)) {                                                \
            return differ(d, cf, (uint32_t)(cv), df, (uint32_t)(dv));                          \
        }                                                                                      \
    } while (0)

static int csc_validate_common(struct dla_dev *d, const struct dla_csc_cfg *c,
                               const struct dla_cdma_cfg *m)
{
    SAME("D_MISC_CFG_0.CONV_MODE", c->conv_mode, "D_MISC_CFG_0.CONV_MODE", m->conv_mode);
    SAME("D_MISC_CFG_0.PROC_PRECISION", c->proc_precision, "D_MISC_CFG_0.PROC_PRECISION",
         m->proc_precision);
    SAME("D_MISC_CFG_0.DATA_REUSE", c->data_reuse, "D_MISC_CFG_0.DATA_REUSE", m->data_reuse);
    SAME("D_MISC_CFG_0.WEIGHT_REUSE", c->weight_reuse, "D_MISC_CFG_0.WEIGHT_REUSE",
         m->weight_reuse);
    SAME("D_MISC_CFG_0.SKIP_DATA_RLS", c->skip_data_rls, "D_MISC_CFG_0.SKIP_DATA_RLS",
         m->skip_data_rls);
    SAME("D_MISC_CFG_0.SKIP_WEIGHT_RLS", c->skip_weight_rls, "D_MISC_CFG_0.SKIP_WEIGHT_RLS",
         m->skip_weight_rls);
    SAME("D_DATAIN_FORMAT_0.DATAIN_FORMAT", c->fmt, "D_DATAIN_FORMAT_0.DATAIN_FORMAT", m->fmt);
    SAME("D_BANK_0.DATA_BANK", c->data_bank - 1, "D_BANK_0.DATA_BANK", m->data_bank - 1);
    SAME("D_BANK_0.WEIGHT_BANK", c->weight_bank - 1, "D_BANK_0.WEIGHT_BANK", m->weight_bank - 1);
    SAME("D_ENTRY_PER_SLICE_0.ENTRIES", c->entries - 1, "D_ENTRY_PER_SLICE_0.ENTRIES",
         m->entries - 1);
    SAME("D_BATCH_NUMBER_0.BATCHES", c->batches - 1, "D_BATCH_NUMBER_0.BATCHES", m->batches - 1);
    SAME("D_WEIGHT_FORMAT_0.WEIGHT_FORMAT", c->weight_compressed,
         "D_WEIGHT_FORMAT_0.WEIGHT_FORMAT", m->weight_compressed);
    SAME("D_WEIGHT_BYTES_0", c->weight_bytes, "D_WEIGHT_BYTES_0", m->weight_bytes);
    SAME("D_WEIGHT_SIZE_EXT_1_0.WEIGHT_KERNEL", c->kernels - 1, "D_WEIGHT_SIZE_1_0.WEIGHT_KERNEL",
         m->weight_kernel - 1);
    SAME("D_DATAIN_SIZE_EXT_1_0.DATAIN_CHANNEL_EXT", c->channel - 1,
         "D_DATAIN_SIZE_1_0.DATAIN_CHANNEL", m->channel - 1);
    if (c->kernels != c->out_c) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_WEIGHT_SIZE_EXT_1_0.WEIGHT_KERNEL=%u differs from "
                         "D_DATAOUT_SIZE_1_0.DATAOUT_CHANNEL=%u",
                         c->kernels - 1, c->out_c - 1);
    }
    uint64_t bpk = (uint64_t)c->kernel_w * c->kernel_h * c->kernel_c *
                   dla_conv_elem_bytes(c->proc_precision);
    if (bpk != m->byte_per_kernel) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: a %ux%ux%u %s kernel is %llu bytes but CDMA "
                         "D_WEIGHT_SIZE_0_0.BYTE_PER_KERNEL=%u (%u bytes)",
                         c->kernel_w, c->kernel_h, c->kernel_c,
                         dla_conv_int16(c->proc_precision) ? "int16" : "int8",
                         (unsigned long long)bpk,
                         m->byte_per_kernel - 1, m->byte_per_kernel);
    }
    if (bpk * c->kernels > c->weight_bytes) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: %u kernels of %llu bytes exceed D_WEIGHT_BYTES_0=%u", c->kernels,
                         (unsigned long long)bpk, c->weight_bytes);
    }
    uint64_t atoms = (uint64_t)c->out_w * c->out_h;
    if (c->atomics != atoms) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_ATOMICS_0.ATOMICS=%u but a %ux%u output needs ATOMICS=%llu",
                         c->atomics - 1, c->out_w, c->out_h, (unsigned long long)(atoms - 1));
    }
    uint64_t slices = (uint64_t)c->height * c->batches;
    if (!c->skip_data_rls && c->rls_slices > slices) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_RELEASE_0.RLS_SLICES=%u releases %u slices but the layer has %llu",
                         c->rls_slices - 1, c->rls_slices, (unsigned long long)slices);
    }
    return 0;
}

static int csc_validate(struct dla_dev *d, const struct dla_csc_cfg *c,
                        const struct dla_cdma_cfg *m)
{
    const struct dla_config *cfg = dla_cfg(d);
    int rc = csc_validate_common(d, c, m);
    if (rc) {
        return rc;
    }
    if (c->fmt == DLA_CONV_IN_FEATURE) {
        SAME("D_DATAIN_SIZE_EXT_0_0.DATAIN_WIDTH_EXT", c->width - 1,
             "D_DATAIN_SIZE_0_0.DATAIN_WIDTH", m->width - 1);
        if (c->kernel_c != c->channel) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "CSC: D_WEIGHT_SIZE_EXT_1_0.WEIGHT_CHANNEL_EXT=%u differs from "
                             "D_DATAIN_SIZE_EXT_1_0.DATAIN_CHANNEL_EXT=%u",
                             c->kernel_c - 1, c->channel - 1);
        }
        if (c->y_extension != 0) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "CSC: D_POST_Y_EXTENSION_0.Y_EXTENSION=%u applies to pixel input "
                             "only",
                             c->y_extension);
        }
        return 0;
    }
    /* pixel input: channel-extended kernels of width 1 (ref: cmod/csc
     * SendImageDataToMacSequencerConvCommon); the lines CSC reads are
     * checked against what CBUF holds by dla_conv_execute */
    if (c->kernel_w != 1) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_WEIGHT_SIZE_EXT_0_0.WEIGHT_WIDTH_EXT=%u: pixel input needs "
                         "channel-extended kernels of width 1 (WEIGHT_WIDTH_EXT=0)",
                         c->kernel_w - 1);
    }
    if (c->y_extension > 2) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_POST_Y_EXTENSION_0.Y_EXTENSION=%u: valid values are 0, 1, 2",
                         c->y_extension);
    }
    if (c->y_extension && c->kernel_c > (cfg->mac_atomic_c_size >> c->y_extension)) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_POST_Y_EXTENSION_0.Y_EXTENSION=%u needs "
                         "D_WEIGHT_SIZE_EXT_1_0.WEIGHT_CHANNEL_EXT+1=%u <= Atomic-C/%u=%u",
                         c->y_extension, c->kernel_c, 1u << c->y_extension,
                         cfg->mac_atomic_c_size >> c->y_extension);
    }
    return 0;
}

/* ---- weights --------------------------------------------------------------- */

/* Weight for (kernel k, channel j, kernel row r) of a channel-extended pixel
 * kernel goes to the planar array through this mapping: channel j is
 * (x, c) = (j / in_c, j % in_c). */
struct wt_map {
    int8_t *dst;               /* planar kernels, zeroed */
    uint32_t in_c;             /* pixel stride */
    uint32_t k_w, k_h;         /* planar kernel size */
};

static inline void wt_put(const struct wt_map *m, uint32_t k, uint32_t j, uint32_t r, int8_t v)
{
    uint32_t x = j / m->in_c, c = j % m->in_c;
    m->dst[(((size_t)k * m->in_c + c) * m->k_h + r) * m->k_w + x] = v;
}

/*
 * Feature kernels (ref: cmod/csc SendWeightToMacSequencerDirectConvCommon):
 * in the stream a channel block of a kernel group holds, per kernel
 * position, each kernel's run of channels; in the planar array a kernel's
 * channels are rows of its positions.  Each kernel's block is a transpose
 * of [position][channel] into [channel][position] (a copy for 1x1 kernels);
 * every planar byte is written.
 */
static void decode_feature_weights(const uint8_t *raw, uint32_t kernels, uint32_t ch,
                                   uint32_t npos, uint32_t ac, uint32_t ak, int8_t *dst)
{
    const enum dla_lanes_isa isa = dla_lanes_best();
    const size_t bpk = (size_t)npos * ch;
    for (uint32_t k0 = 0; k0 < kernels; k0 += ak) {
        uint32_t kpg = kernels - k0 < ak ? kernels - k0 : ak;
        const uint8_t *group = raw + (size_t)(k0 / ak) * bpk * ak;
        for (uint32_t c0 = 0; c0 < ch; c0 += ac) {
            uint32_t cb = ch - c0 < ac ? ch - c0 : ac;
            const uint8_t *block = group + (size_t)c0 * npos * kpg;
            const size_t pos_bytes = (size_t)cb * kpg; /* one position of the block */
            for (uint32_t kk = 0; kk < kpg; kk++) {
                const uint8_t *src = block + (size_t)kk * cb;
                uint8_t *d = (uint8_t *)dst + ((size_t)(k0 + kk) * ch + c0) * npos;
                if (npos == 1 && cb == 8) { /* nv_small's atom: a fixed move, not a libc call */
                    memcpy(d, src, 8);
                } else if (npos == 1) {
                    memcpy(d, src, cb);
                } else {
                    dla_transpose_bytes(isa, src, pos_bytes, npos, cb, d, npos);
                }
            }
        }
    }
}

/* Pixel kernels (width 1, kernel_c channel-extended channels per row).
 * ref: cmod/csc SendWeightToMacSequencerDirectConvCommon, post_y_extension == 1 */
static void decode_pixel_weights(const uint8_t *raw, uint32_t kernels, uint32_t ch, uint32_t kh,
                                 uint32_t ac, uint32_t ak, const struct wt_map *m)
{
    const uint64_t bpk = (uint64_t)kh * ch;
    for (uint32_t k0 = 0; k0 < kernels; k0 += ak) {
        uint32_t kpg = kernels - k0 < ak ? kernels - k0 : ak;
        uint64_t gbase = (uint64_t)(k0 / ak) * bpk * ak;
        for (uint32_t c0 = 0; c0 < ch; c0 += ac) {
            uint32_t cb = ch - c0 < ac ? ch - c0 : ac;
            uint64_t bbase = gbase + (uint64_t)(c0 / ac) * ac * kh * kpg;
            for (uint32_t r = 0; r < kh; r++) {
                const uint8_t *p = raw + bbase + (uint64_t)r * cb * kpg;
                for (uint32_t kk = 0; kk < kpg; kk++) {
                    for (uint32_t i = 0; i < cb; i++) {
                        wt_put(m, k0 + kk, c0 + i, r, (int8_t)p[(size_t)kk * cb + i]);
                    }
                }
            }
        }
    }
}

/* ref: cmod/csc SendWeightToMacSequencerDirectConvCommon, post_y_extension 2/4:
 * a stripe operation holds `ext` rows of `kc` channels of each kernel */
static void decode_weights_post_ext(const uint8_t *raw, uint32_t kernels, uint32_t kc,
                                    uint32_t kh, uint32_t ext, uint32_t ak,
                                    const struct wt_map *m)
{
    const uint64_t bpk = (uint64_t)kc * kh;
    const uint32_t nstripe = (kh + ext - 1) / ext;
    for (uint32_t k0 = 0; k0 < kernels; k0 += ak) {
        uint32_t kpg = kernels - k0 < ak ? kernels - k0 : ak;
        uint64_t gbase = (uint64_t)(k0 / ak) * bpk * ak;
        for (uint32_t s = 0; s < nstripe; s++) {
            uint32_t rows = (s == nstripe - 1 && kh % ext) ? kh % ext : ext;
            uint64_t sbase = gbase + (uint64_t)s * kc * ext * kpg;
            for (uint32_t kk = 0; kk < kpg; kk++) {
                const uint8_t *p = raw + sbase + (uint64_t)kk * kc * rows;
                for (uint32_t ii = 0; ii < rows; ii++) {
                    for (uint32_t j = 0; j < kc; j++) {
                        wt_put(m, k0 + kk, j, s * ext + ii, (int8_t)p[ii * kc + j]);
                    }
                }
            }
        }
    }
}

/* ---- the layer as the kernel sees it ---------------------------------------- */

struct conv_job {
    struct dla_conv_geom g;    /* padded input, planar kernels */
    const int8_t *in;          /* in[c][y][x] */
    const int8_t *wt;          /* wt[k][c][ky][kx] */
    uint64_t terms;            /* non-trivial products per output element */
    int pixel;                 /* pixel input: hardware order over flat channels */
    uint32_t flat_c;           /* pixel input: elements per pixel (pixel_stride) */
    uint32_t flat_kc;          /* pixel input: channel-extended kernel channels */
    uint32_t ext;              /* pixel input: kernel rows per atomic operation */
    uint32_t ac;               /* Atomic-C */
    const struct dla_conv_wpack *pack; /* the kernels packed (then wt is NULL) */
    /* a feature layer's input as the lines in CBUF (the kernel pads while
     * it packs): used instead of `in` where the packed kernel runs alone,
     * else the planar copy is made (feature_planar) */
    struct dla_conv_src src;
    struct feature_copy *copy;
    int copy_in_items;         /* `in` is made by the depthwise items (dw_item) */
};

/* n padding bytes: a short loop for a row's few (pad_left, pad_right),
 * where a call to memset per row cost more than the bytes. */
static inline void pad_fill(int8_t *p, int8_t v, size_t n)
{
    if (n > 16) {
        memset(p, v, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        p[i] = v;
    }
}

/* The padded planar copy of a feature layer's input: where each row's
 * data lies (columns [x0, x1) of rows [y0, y1), the rest is padding) and
 * where channel ch's line 0 is in CBUF (first + ch * w, lines line_bytes
 * apart). */
struct feature_copy {
    int8_t *dst;
    const int8_t *first;
    const int8_t *lo, *hi;     /* CBUF's data bytes [lo, hi): what a row's load may touch */
    size_t plane, line_bytes;
    uint32_t in_w, in_h, w, x0, x1, y0, y1, per_item, channels;
    int8_t pad;
    int avx2;                  /* rows through padded_rows_avx2 */
};

/* Bytes of padded input below which the copy stays on the calling thread
 * (waking the team costs more than it saves). */
#define FEATURE_COPY_TEAM_BYTES 65536u

/* Rows [y0, y1) of one channel's padded plane pl, their data from src on
 * (line_bytes apart): pad, the row's bytes, pad. */
static void padded_rows(const struct feature_copy *f, int8_t *pl, const int8_t *src)
{
    for (uint32_t y = f->y0; y < f->y1; y++, src += f->line_bytes) {
        int8_t *row = pl + (size_t)y * f->in_w;
        pad_fill(row, f->pad, f->x0);
        memcpy(row + f->x0, src, f->x1 - f->x0);
        pad_fill(row + f->x1, f->pad, f->in_w - f->x1);
    }
}

#if defined(DLA_LANES_X86)
/* Rows up to this wide take padded_rows_avx2 (its chunk table is on the stack). */
#define PADDED_MAX_CHUNKS 9
#define PADDED_MAX_W (32u * (PADDED_MAX_CHUNKS - 1))

/*
 * padded_rows in whole vectors: each padded row is written as chunks of
 * n = 32, 16 or 8 bytes (the widest that fits the row; the last chunk
 * overlaps the one before it, so no byte outside the row is written), each
 * one unaligned load of the source bytes it covers blended with PAD_VALUE
 * outside [x0, x1): which lanes take the source depends on the chunk's
 * column only, so the masks are made once per call.  A row whose loads
 * would leave CBUF's bytes [lo, hi) is copied by padded_rows.  A MobileNetV2
 * depthwise block copies 8 channels of 9-114-byte rows: the per-row calls
 * (memcpy, the pad loops) were most of the copy's time.
 */
/* A padding row of PAD_VALUE (padv) in padded_rows_avx2's chunks. */
DLA_LANES_AVX2_ATTR static inline void pad_row_avx2(int8_t *row, __m256i padv, const uint32_t *at,
                                                    uint32_t chunks, uint32_t n)
{
    for (uint32_t k = 0; k < chunks; k++) {
        int8_t *p = row + at[k];
        if (n == 32) {
            _mm256_storeu_si256((__m256i *)(void *)p, padv);
        } else if (n == 16) {
            _mm_storeu_si128((__m128i *)(void *)p, _mm256_castsi256_si128(padv));
        } else {
            _mm_storel_epi64((__m128i *)(void *)p, _mm256_castsi256_si128(padv));
        }
    }
}

DLA_LANES_AVX2_ATTR static void padded_rows_avx2(const struct feature_copy *f, int8_t *pl,
                                                 const int8_t *src, uint32_t channels)
{
    const uint32_t W = f->in_w, n = W >= 32 ? 32 : W >= 16 ? 16 : 8;
    const __m256i lane = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                          16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                                          29, 30, 31);
    const __m256i padv = _mm256_set1_epi8(f->pad);
    __m256i take[PADDED_MAX_CHUNKS];
    uint32_t at[PADDED_MAX_CHUNKS], chunks = 0;
    for (uint32_t o = 0; o < W; o += n) {
        uint32_t c = o + n <= W ? o : W - n;
        /* lanes i with x0 <= c + i < x1 (bounds clamped to int8) */
        int64_t a = (int64_t)f->x0 - c - 1, b = (int64_t)f->x1 - c;
        a = a < -1 ? -1 : a > 32 ? 32 : a;
        b = b < 0 ? 0 : b > 33 ? 33 : b;
        take[chunks] = _mm256_and_si256(_mm256_cmpgt_epi8(lane, _mm256_set1_epi8((char)a)),
                                        _mm256_cmpgt_epi8(_mm256_set1_epi8((char)b), lane));
        at[chunks++] = c;
    }
    const size_t rows = f->y1 - f->y0;
    for (uint32_t ch = 0; ch < channels; ch++, pl += f->plane, src += f->w) {
        /* the padding rows above and below the data */
        for (size_t y = 0; y < f->y0; y++) {
            pad_row_avx2(pl + y * W, padv, at, chunks, n);
        }
        for (size_t y = f->y1; y < f->in_h; y++) {
            pad_row_avx2(pl + y * W, padv, at, chunks, n);
        }
        int8_t *row = pl + (size_t)f->y0 * W;
        const int8_t *from = src - f->x0; /* the source byte of row[0] */
        for (size_t y = 0; y < rows; y++, row += W, from += f->line_bytes) {
            if (from < f->lo || from + W > f->hi) {
                struct feature_copy one = *f;
                one.y0 = (uint32_t)(f->y0 + y);
                one.y1 = one.y0 + 1;
                padded_rows(&one, pl, from + f->x0);
                continue;
            }
            for (uint32_t k = 0; k < chunks; k++) {
                const int8_t *p = from + at[k];
                if (n == 32) {
                    __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
                    _mm256_storeu_si256((__m256i *)(void *)(row + at[k]),
                                        _mm256_blendv_epi8(padv, v, take[k]));
                } else if (n == 16) {
                    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
                    _mm_storeu_si128((__m128i *)(void *)(row + at[k]),
                                     _mm_blendv_epi8(_mm256_castsi256_si128(padv), v,
                                                     _mm256_castsi256_si128(take[k])));
                } else {
                    __m128i v = _mm_loadl_epi64((const __m128i *)(const void *)p);
                    _mm_storel_epi64((__m128i *)(void *)(row + at[k]),
                                     _mm_blendv_epi8(_mm256_castsi256_si128(padv), v,
                                                     _mm256_castsi256_si128(take[k])));
                }
            }
        }
    }
}
#endif

/* Channels [c0, c1) of the copy. */
static void feature_copy_channels(const struct feature_copy *f, uint32_t c0, uint32_t c1)
{
#if defined(DLA_LANES_X86)
    if (f->avx2) {
        padded_rows_avx2(f, f->dst + c0 * f->plane, f->first + (size_t)c0 * f->w, c1 - c0);
        return;
    }
#endif
    for (uint32_t ch = c0; ch < c1; ch++) {
        int8_t *pl = f->dst + ch * f->plane;
        memset(pl, f->pad, (size_t)f->y0 * f->in_w);
        memset(pl + (size_t)f->y1 * f->in_w, f->pad, (size_t)(f->in_h - f->y1) * f->in_w);
        /* from line 0 of channel ch */
        padded_rows(f, pl, f->first + (size_t)ch * f->w);
    }
}

/* Channels [i * per_item, ...) of the copy (a dla_team_run item). */
static void feature_copy_item(void *ctx, size_t i)
{
    const struct feature_copy *f = ctx;
    uint32_t c0 = (uint32_t)i * f->per_item;
    uint32_t c1 = f->channels - c0 < f->per_item ? f->channels : c0 + f->per_item;
    feature_copy_channels(f, c0, c1);
}

/* A feature layer's output and kernel as its kernels see them (g's
 * out_w, out_h, out_k, k_w, k_h, strides and dilations). */
static void feature_kernel_geom(const struct dla_csc_cfg *c, struct dla_conv_geom *g)
{
    g->out_w = c->out_w;
    g->out_h = c->out_h;
    g->out_k = c->kernels;
    g->k_w = c->kernel_w;
    g->k_h = c->kernel_h;
    g->stride_x = c->stride_x;
    g->stride_y = c->stride_y;
    g->dil_x = c->dil_x;
    g->dil_y = c->dil_y;
}

/* A feature layer's padded input (g's in_c, in_w, in_h) and the part of it
 * that holds data: columns [x0, x1), rows [y0, y1) of w's (its other
 * fields untouched). */
static void feature_window(const struct dla_csc_cfg *c, struct dla_conv_geom *g,
                           struct dla_conv_src *w)
{
    g->in_c = c->channel;
    g->in_w = (c->out_w - 1) * c->stride_x + (c->kernel_w - 1) * c->dil_x + 1;
    g->in_h = (c->out_h - 1) * c->stride_y + (c->kernel_h - 1) * c->dil_y + 1;
    /* x range of the padded row that holds data: [x0, x1) <- source [x0 - pad_left, ...) */
    w->x0 = c->pad_left < g->in_w ? c->pad_left : g->in_w;
    uint64_t x1w = (uint64_t)c->pad_left + c->width;
    w->x1 = x1w < g->in_w ? (uint32_t)x1w : g->in_w;
    /* rows [y0, y1) hold data (source line y - pad_top), the others are padding */
    w->y0 = c->pad_top < g->in_h ? c->pad_top : g->in_h;
    uint64_t y1w = (uint64_t)c->pad_top + c->height;
    w->y1 = w->x0 >= w->x1 ? w->y0 : y1w < g->in_h ? (uint32_t)y1w : g->in_h;
}

/* Batch `b` of a feature layer's input in CBUF: line y of batch b is slice
 * y * BATCHES + b (ref: cmod/cdma DirectConvDataResponseSequencerCommon and
 * cmod/csc SendDataToMacSequencerDirectConvCommon entry addresses, vmod
 * NV_NVDLA_CDMA_dc.v idx_batch_offset: the batches of a line are
 * adjacent): the padded input's geometry and where its data lies (j->src,
 * and f for a planar copy); nothing is copied yet. */
static void build_feature_input(struct dla_conv_state *s, const struct dla_csc_cfg *c,
                                uint32_t b, struct conv_job *j, struct feature_copy *f)
{
    struct dla_conv_geom *g = &j->g;
    const struct dla_cbuf_slices *data = &s->data;
    struct dla_conv_src win;
    feature_window(c, g, &win);
    f->plane = (size_t)g->in_w * g->in_h;
    f->in_w = g->in_w;
    f->in_h = g->in_h;
    f->w = c->width;
    f->channels = g->in_c;
    f->pad = (int8_t)(uint8_t)(c->pad_value & 0xff);
    f->x0 = win.x0;
    f->x1 = win.x1;
    f->y0 = win.y0;
    f->y1 = win.y1;
    f->line_bytes = (size_t)c->batches * dla_cbuf_slice_bytes(data);
    f->first = data->buf + (size_t)b * dla_cbuf_slice_bytes(data);
    /* the guards are readable too (their bytes never taken) */
    f->lo = data->buf ? data->buf - DLA_CBUF_GUARD : NULL;
    f->hi = data->buf ? data->buf + data->cap + DLA_CBUF_GUARD : NULL;
    /* rows of 8 to PADDED_MAX_W bytes in vectors (padded_rows_avx2) */
#if defined(DLA_LANES_X86)
    f->avx2 = g->in_w >= 8 && g->in_w <= PADDED_MAX_W && dla_lanes_supported(DLA_LANES_AVX2);
#else
    f->avx2 = 0;
#endif
    j->src = (struct dla_conv_src){f->first, f->w, f->line_bytes, f->x0, f->x1, f->y0, f->y1,
                                   f->pad, 0};
    if (data->atoms_h != 0) { /* the memory's atoms, surface after surface (fetch_atoms) */
        const size_t line = (size_t)data->w * 8;
        j->src = (struct dla_conv_src){data->buf, line * data->atoms_h, line, f->x0, f->x1,
                                       f->y0, f->y1, f->pad, 8};
        if (data->atoms_view != NULL) { /* ... read in place (cdma.c atoms_view) */
            j->src.data = data->atoms_view;
            j->src.ch_stride = data->view_surf;
            j->src.line_stride = data->view_line;
        }
    }
    j->copy = f;
    j->copy_in_items = 0;
    j->in = NULL;
    j->terms = (uint64_t)c->channel * c->kernel_w * c->kernel_h;
}

/* The padded planar copy of a feature layer's input (j->copy) in s->in,
 * for the kernels that read a planar cube.  Large inputs are copied by the
 * device's team, a chunk of channels each. */
static int feature_planar(struct dla_dev *d, struct dla_conv_state *s, struct conv_job *j)
{
    struct feature_copy *f = j->copy;
    const struct dla_conv_geom *g = &j->g;
    size_t total = f->plane * g->in_c;
    int rc = dla_conv_scratch(d, (void **)&s->in, &s->in_cap, total);
    if (rc) {
        return rc;
    }
    f->dst = s->in;
    struct dla_team *team = total >= FEATURE_COPY_TEAM_BYTES ? dla_dev_team(d) : NULL;
    /* about 8 items a thread, none much under 16 KiB */
    size_t per = team ? g->in_c / (8 * (size_t)dla_team_threads(team)) : g->in_c;
    size_t least = (16384 + f->plane - 1) / f->plane;
    per = per < least ? least : per;
    f->per_item = (uint32_t)(per < g->in_c ? per : g->in_c);
    if (f->per_item == 0) {
        f->per_item = 1;
    }
    dla_team_run(team, (g->in_c + f->per_item - 1) / f->per_item, feature_copy_item, f);
    j->in = s->in;
    return 0;
}

/* Whether the layer's MACs run on the packed kernel alone, which reads the
 * input in place (j->src): the int32-safe sums of a non-depthwise layer
 * whose kernels came packed (compute, run_kernel). */
static int reads_in_place(const struct conv_job *j)
{
    return j->copy != NULL && j->pack != NULL && j->wt == NULL &&
           j->terms < CONV_INT32_SAFE_TERMS;
}

/* Whether a depthwise layer's cached diagonal kernels run on its input in
 * place (dla_conv_dw_s8_src_takes: with VNNI every MobileNet block, x
 * strides 1 and 2, 7 to 112 columns; with AVX2 the small x-stride-1
 * ones), without the padded planar copy. */
static int dw_reads_in_place(const struct conv_job *j)
{
    return j->copy != NULL && j->pack != NULL && j->wt != NULL &&
           j->terms < CONV_INT32_SAFE_TERMS && dla_conv_dw_s8_src_takes(&j->g, &j->src);
}

/*
 * Post-extension (D_POST_Y_EXTENSION 1/2): where the data loader takes the
 * kernel_c bytes of output column ox from (element index into the CBUF line,
 * or -1 for a zero byte), for every byte i < kernel_c.  The hardware rule
 * (ref: vmod/nvdla/csc/NV_NVDLA_CSC_dl.v, nv_small), with s = pixel_x_stride_w
 * (x stride times elements per pixel) and e = 2 or 4 lines per atomic op:
 *   - outputs go in stripes of 2 x Atomic-K columns (pixel_ch_stride_w; the
 *     sequence generator's image stripe) and, in a stripe, in loops of e
 *     columns (sub_h_cnt); loop n reads one entry per line, at element
 *     pixel_w_cnt = pixel_x_init_w + n * pixel_x_add_w, i.e.
 *     (e-1)*s + kernel_c - 1 + n*e*s (6- and 7-bit fields), from the stripe's
 *     first element on;
 *   - s <= one entry: the entry enters a two-entry window {new, previous}
 *     (dat_l0c0 / dat_l0c1) only when its address changes (or on the
 *     stripe's first loop, pixel_force_fetch); the window offset
 *     rsp_sft_cnt starts at one entry, grows by s per column and drops by
 *     one entry per entry loaded after the first; bytes past the window
 *     are zero;
 *   - s > one entry: CBUF shifts the read itself (sc2buf_dat_rd_shift): the
 *     kernel_c bytes ending at pixel_w_cnt, except on a stripe's first loop
 *     (stripe_begin_disable_jump) where the entry is read from its start.
 * With stride 1 this is the ideal input; with larger strides columns read
 * other pixels (the RTL-graded rg_img cases with stride > 1).
 */
static void post_ext_sources(const struct dla_csc_cfg *c, uint32_t s, uint32_t entry,
                             uint32_t stripe, uint32_t ox, int64_t *src, uint8_t *pad_zero)
{
    const uint32_t e = 1u << c->y_extension;
    const uint32_t kc = c->kernel_c;
    const uint32_t init = ((e - 1) * s + kc - 1) & 0x3fu;  /* pixel_x_init_w, 6 bits */
    const uint32_t add = (e * s) & 0x7fu;                  /* pixel_x_add_w, 7 bits */
    const uint32_t x0 = ox / stripe * stripe;
    const uint32_t r = ox - x0, n_loop = r / e;
    const uint64_t pw0 = ((uint64_t)init + (uint64_t)s * x0) & 0xffffu;
    uint64_t pw = (pw0 + (uint64_t)n_loop * add) & 0xffffu;
    /* a line outside the input: the window is PAD_VALUE, its offset wraps
     * within an entry on each loop (rsp_sft_cnt under dat_dummy_l0_en) and
     * bytes past the window are zero */
    uint32_t dsft = entry;
    for (uint32_t k = 1; k <= r; k++) {
        dsft = s > entry ? entry : dsft + s;
        if (k % e == 0) {
            dsft &= entry - 1;
        }
    }
    for (uint32_t i = 0; i < kc; i++) {
        pad_zero[i] = dsft + i >= 2 * entry;
    }
    if (s > entry) {
        int64_t start = n_loop == 0 ? (int64_t)(pw0 / entry * entry) : (int64_t)pw + 1 - kc;
        for (uint32_t i = 0; i < kc; i++) {
            src[i] = start + i;
        }
        return;
    }
    uint64_t cur = pw0 / entry, prev = cur, loads = 1;
    for (uint32_t n = 1; n <= n_loop; n++) {
        uint64_t en = ((pw0 + (uint64_t)n * add) & 0xffffu) / entry;
        if (en != cur) {
            prev = cur;
            cur = en;
            loads++;
        }
    }
    int64_t sft = (int64_t)entry + (int64_t)s * r - (int64_t)entry * (int64_t)(loads - 1);
    for (uint32_t i = 0; i < kc; i++) {
        int64_t w = sft + i;
        src[i] = w < 0 || w >= 2 * (int64_t)entry ? -1
                 : w < (int64_t)entry ? (int64_t)(prev * entry) + w
                                      : (int64_t)(cur * entry) + w - entry;
    }
}

/* Pixel input under post-extension: every output column gets its own
 * k_w-pixel window (the planar stride becomes k_w, see build_weights)
 * filled from the bytes post_ext_sources() names. */
static int build_pixel_input_post_ext(struct dla_dev *d, struct dla_conv_state *s,
                                      const struct dla_csc_cfg *c, struct conv_job *j)
{
    const struct dla_config *cfg = dla_cfg(d);
    struct dla_conv_geom *g = &j->g;
    const struct dla_cbuf_slices *data = &s->data;
    const uint32_t cc = pixel_stride(c);
    const uint32_t kw = (c->kernel_c + cc - 1) / cc;
    const uint32_t entry = cfg->mac_atomic_c_size;
    const uint32_t stripe = 2 * cfg->mac_atomic_k_size;
    g->in_c = cc;
    g->in_w = c->out_w * kw;
    g->in_h = (c->out_h - 1) * c->stride_y + c->kernel_h;
    size_t plane = (size_t)g->in_w * g->in_h;
    int rc = dla_conv_scratch(d, (void **)&s->in, &s->in_cap, plane * cc);
    if (rc) {
        return rc;
    }
    int64_t src[32]; /* kernel_c <= Atomic-C / 2 under post-extension (checked) */
    uint8_t pad_zero[32];
    if (c->kernel_c > 32) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CSC: post-extension with %u channel-extended kernel channels "
                         "(model limit 32)", c->kernel_c);
    }
    const int8_t pad = (int8_t)(uint8_t)(c->pad_value & 0xff);
    const size_t line = dla_cbuf_slice_bytes(data);
    const size_t total = line * data->n;
    memset(s->in, 0, plane * cc);
    for (uint32_t ox = 0; ox < c->out_w; ox++) {
        post_ext_sources(c, cc * c->stride_x, entry, stripe, ox, src, pad_zero);
        for (uint32_t y = 0; y < g->in_h; y++) {
            int64_t sy = (int64_t)y - c->pad_top;
            int inside = sy >= 0 && sy < c->height;
            for (uint32_t i = 0; i < c->kernel_c; i++) {
                int8_t v = pad_zero[i] ? 0 : pad;
                if (inside) {
                    size_t at = (size_t)sy * line + (size_t)src[i];
                    v = src[i] < 0 || at >= total ? 0 : (int8_t)data->buf[at];
                }
                s->in[(i % cc) * plane + (size_t)y * g->in_w + (size_t)ox * kw + i / cc] = v;
            }
        }
    }
    j->in = s->in;
    j->terms = (uint64_t)c->kernel_c * c->kernel_h;
    return 0;
}

/* Padded planar input of a pixel layer: channel c of pixel p of line y is
 * element p * pixel_stride + c of the CBUF line (reading past a line
 * continues into the next one, as CBUF entries do). */
static int build_pixel_input(struct dla_dev *d, struct dla_conv_state *s,
                             const struct dla_csc_cfg *c, struct conv_job *j)
{
    struct dla_conv_geom *g = &j->g;
    const struct dla_cbuf_slices *data = &s->data;
    const uint32_t cc = pixel_stride(c);
    const uint32_t kw = (c->kernel_c + cc - 1) / cc;
    g->in_c = cc;
    g->in_w = (c->out_w - 1) * c->stride_x + kw;
    g->in_h = (c->out_h - 1) * c->stride_y + c->kernel_h;
    size_t plane = (size_t)g->in_w * g->in_h;
    int rc = dla_conv_scratch(d, (void **)&s->in, &s->in_cap, plane * cc);
    if (rc) {
        return rc;
    }
    const int8_t pad = (int8_t)(uint8_t)(c->pad_value & 0xff);
    const size_t line = dla_cbuf_slice_bytes(data);
    const size_t total = line * data->n;
    for (uint32_t y = 0; y < g->in_h; y++) {
        int64_t sy = (int64_t)y - c->pad_top;
        int inside = sy >= 0 && sy < c->height;
        for (uint32_t ch = 0; ch < cc; ch++) {
            int8_t *row = s->in + ch * plane + (size_t)y * g->in_w;
            if (!inside) {
                memset(row, pad, g->in_w);
                continue;
            }
            size_t at = (size_t)sy * line + ch;
            for (uint32_t p = 0; p < g->in_w; p++, at += cc) {
                row[p] = at < total ? data->buf[at] : 0;
            }
        }
    }
    j->in = s->in;
    j->terms = (uint64_t)c->kernel_c * c->kernel_h;
    return 0;
}

/* Bytes of the weight stream the kernels occupy (the rest is not read). */
static size_t weight_stream_used(const struct dla_csc_cfg *c)
{
    return (size_t)c->kernels * c->kernel_w * c->kernel_h * c->kernel_c;
}

/* The weight stream's bytes at s->wt: copied from memory now if CDMA's
 * fetch deferred them (cbuf.h wt_deferred; nothing has written memory
 * since, as the layer is still running). */
static int wt_ready(struct dla_dev *d, struct dla_conv_state *s)
{
    if (!s->wt_deferred) {
        return 0;
    }
    s->wt_deferred = 0;
    return dla_dma_peek(d, s->wt_origin.port, s->wt_origin.addr, s->wt, s->wt_len);
}

/*
 * The ring's tail of a deferred weight stream: the last `bytes` bytes of
 * the stream at s->wt, which dla_cbuf_weight_ring_end keeps for the next
 * layer when CBUF releases the weights at the layer's end (SKIP_WEIGHT_RLS
 * keeps the whole stream: wt_ready).  Nothing else of the stream is read
 * after the layer, so only these bytes are copied from memory, not the
 * whole stream.  A MobileNetV2 depthwise op's 640-byte stream leaves the 64
 * bytes past its 576 released ones, a line untouched since the last image:
 * its miss was most of the layer's tail (~450 of ~500 ticks, instrumented),
 * so wt_tail_lend puts it in flight when the layer starts, and the copy at
 * the end reads the lent bytes (the memory is not written while the layer
 * runs: the lent view stays valid, as the deferral itself assumes).
 */
struct wt_tail {
    const uint8_t *src;  /* the bytes in the memory's page, or NULL: read them */
    size_t bytes;
};

/* A deferred stream has no lag (s->wt is the memory's bytes from
 * wt_origin.addr on) and the tail is within it (dla_cbuf_weight_ring_left). */
static void wt_tail_lend(const struct dla_dev *d, const struct dla_conv_state *s,
                         struct wt_tail *t)
{
    t->src = NULL;
    if (!s->wt_deferred || t->bytes == 0) {
        return;
    }
    t->src = dla_dma_lend(d, s->wt_origin.port, s->wt_origin.addr + (s->wt_len - t->bytes),
                          t->bytes);
    for (size_t at = 0; t->src != NULL && at < t->bytes; at += 64) {
        __builtin_prefetch(t->src + at);
    }
}

/* The tail's bytes at their place in s->wt; wt_deferred stays set (the
 * rest was not copied; the layer's end, dla_cbuf_end_layer, clears it). */
static int wt_tail_ready(struct dla_dev *d, struct dla_conv_state *s, const struct wt_tail *t)
{
    if (!s->wt_deferred || t->bytes == 0) {
        return 0;
    }
    const size_t at = s->wt_len - t->bytes;
    if (t->src != NULL) {
        memcpy(s->wt + at, t->src, t->bytes);
        return 0;
    }
    return dla_dma_peek(d, s->wt_origin.port, s->wt_origin.addr + at, s->wt + at, t->bytes);
}

/* Decode the weight stream into s->wplanar (n bytes) unless it already
 * holds the decode of the same bytes under the same key. */
static int decode_planar(struct dla_dev *d, struct dla_conv_state *s, const struct dla_csc_cfg *c,
                         const struct dla_wt_key *key, size_t n)
{
    const size_t used = weight_stream_used(c);
    int rc = wt_ready(d, s);
    if (rc) {
        return rc;
    }
    /* unchanged since the last look (WEIGHT_REUSE), or fetched again equal */
    if (s->wdec_len == used && !memcmp(&s->wdec_key, key, sizeof(*key)) &&
        (s->wdec_fetch == s->wt_fetches || !memcmp(s->wdec_src, s->wt, used))) {
        s->wdec_fetch = s->wt_fetches;
        return 0;
    }
    s->wdec_len = 0;
    rc = dla_conv_scratch(d, (void **)&s->wplanar, &s->wplanar_cap, n);
    if (!rc) {
        rc = dla_conv_scratch(d, (void **)&s->wdec_src, &s->wdec_src_cap, used);
    }
    if (rc) {
        return rc;
    }
    if (!key->pixel) {
        decode_feature_weights(s->wt, c->kernels, c->kernel_c, c->kernel_w * c->kernel_h,
                               key->atomic_c, key->atomic_k, s->wplanar);
    } else {
        /* channel-extended kernels may not fill the last planar column */
        memset(s->wplanar, 0, n);
        struct wt_map m = { s->wplanar, key->in_c, key->k_w, key->k_h };
        if (c->y_extension) {
            decode_weights_post_ext(s->wt, c->kernels, c->kernel_c, c->kernel_h,
                                    1u << c->y_extension, key->atomic_k, &m);
        } else {
            decode_pixel_weights(s->wt, c->kernels, c->kernel_c, c->kernel_h, key->atomic_c,
                                 key->atomic_k, &m);
        }
    }
    memcpy(s->wdec_src, s->wt, used);
    s->wdec_key = *key;
    s->wdec_len = used;
    s->wdec_fetch = s->wt_fetches;
    return 0;
}

/* ---- the packed-kernel cache (struct dla_wt_cache, cbuf.h) --------------------- */

/* Cheap fingerprint of a weight stream: its length and 64 sampled bytes.
 * Only narrows the candidates; a hit is decided by a full compare. */
static uint64_t stream_print(const uint8_t *p, size_t n)
{
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15u;
    size_t step = n / 64 + 1;
    for (size_t i = 0; i < n; i += step) {
        h = (h ^ p[i]) * 0x100000001B3u;
    }
    return n ? (h ^ p[n - 1]) * 0x100000001B3u : h;
}

static void wt_cache_drop(struct dla_wt_cache *wc, size_t i)
{
    struct dla_wt_cache_entry *e = &wc->e[i];
    wc->bytes -= e->bytes;
    free(e->src);
    free(e->dw_wt);
    dla_conv_wpack_free(e->pack_signed);
    dla_conv_wpack_free(e->pack);
    *e = wc->e[--wc->n];
    wc->last = wc->n; /* indices moved: no last hit */
}

void dla_wt_cache_free(struct dla_wt_cache *wc)
{
    while (wc->n) {
        wt_cache_drop(wc, wc->n - 1);
    }
    free(wc->e);
    memset(wc, 0, sizeof(*wc));
}

/* Room for `bytes` more within DLA_WT_CACHE_BYTES, evicting the least
 * recently used entries that no recent lookup used (a network larger than
 * the budget keeps the part it has instead of thrashing); 0: no room. */
static int wt_cache_room(struct dla_wt_cache *wc, size_t bytes)
{
    if (bytes > DLA_WT_CACHE_BYTES) {
        return 0;
    }
    while (wc->bytes + bytes > DLA_WT_CACHE_BYTES) {
        size_t lru = 0;
        for (size_t i = 1; i < wc->n; i++) {
            lru = wc->e[i].last_use < wc->e[lru].last_use ? i : lru;
        }
        if (wc->n == 0 || wc->clock - wc->e[lru].last_use <= 2 * (uint64_t)wc->n) {
            return 0;
        }
        wt_cache_drop(wc, lru);
    }
    if (wc->n == wc->cap) {
        size_t cap = wc->cap ? 2 * wc->cap : 64;
        struct dla_wt_cache_entry *e = realloc(wc->e, cap * sizeof(*e));
        if (e == NULL) {
            return 0;
        }
        wc->e = e;
        wc->cap = cap;
    }
    return 1;
}

/* A hit on entry i: remembered as the scan's next start, and the entry
 * after it (the next layer's, in a network's order) fetched ahead: an
 * inference's data evicts the entries, and the next layer's lookup stalled
 * on the line (a quarter of dla_conv_execute's own time, MobileNetV2). */
static void wt_cache_hit(struct dla_wt_cache *wc, size_t i)
{
    wc->last = i;
    const char *next = (const char *)&wc->e[i + 1 < wc->n ? i + 1 : 0];
    for (size_t at = 0; at < sizeof(struct dla_wt_cache_entry); at += 64) {
        __builtin_prefetch(next + at);
    }
}

/* Whether entry e's `used` source bytes equal those at s->wt because both
 * were read from the same memory range and no write reached it since the
 * earlier read: the compare would succeed, so it is skipped. */
static int wt_same_origin(struct dla_dev *d, const struct dla_conv_state *s,
                          const struct dla_wt_cache_entry *e, size_t used)
{
    const struct dla_wt_origin *a = &e->origin, *b = &s->wt_origin;
    if (a->gen == 0 || b->gen == 0 || a->port != b->port || a->addr != b->addr ||
        a->bytes < used || b->bytes < used) {
        return 0;
    }
    return dla_dma_unchanged(d, a->port, a->addr, used, a->gen < b->gen ? a->gen : b->gen);
}

/* The entry a search looks at in its step-th step.  Entries are appended
 * in the order layers first use them, and a network runs its layers in the
 * same order every time: first the entry after the last hit (the search
 * usually ends there), then the last hit itself (layers with the same
 * weights in a row: a pre-quantized model's global average pool, 160
 * depthwise blocks of ones in MobileNetV2, each scanned the whole cache,
 * ~900 entries, 8 us a block), then the others in order. */
static size_t wt_cache_probe(const struct dla_wt_cache *wc, size_t step)
{
    const size_t last = wc->last < wc->n ? wc->last : wc->n - 1;
    return step == 1 ? last : (last + (step ? step : 1)) % wc->n;
}

/* Entries wt_cache_find_origin looks at (wt_cache_probe's first). */
#define WT_ORIGIN_PROBES 2

/* An entry under `key` for the `used` bytes at s->wt proved equal by their
 * origin (wt_same_origin), or NULL. */
static struct dla_wt_cache_entry *wt_cache_find_origin(struct dla_dev *d, struct dla_conv_state *s,
                                                       const struct dla_wt_key *key, size_t used)
{
    struct dla_wt_cache *wc = &s->wcache;
    if (s->wt_origin.gen == 0) {
        return NULL;
    }
    /* the entries a network's order makes likely only: a miss here falls to
     * the compare of the bytes (wt_cache_find), which finds any equal entry;
     * the whole cache scanned on every miss was ~3 us a block of
     * MobileNetV2's global average pool (its blocks' ones at addresses of
     * their own) */
    const size_t probes = wc->n < WT_ORIGIN_PROBES ? wc->n : WT_ORIGIN_PROBES;
    for (size_t step = 0; step < probes; step++) {
        const size_t i = wt_cache_probe(wc, step);
        struct dla_wt_cache_entry *e = &wc->e[i];
        if (e->len == used && e->origin.addr == s->wt_origin.addr &&
            !memcmp(&e->key, key, sizeof(*key)) && wt_same_origin(d, s, e, used)) {
            wt_cache_hit(wc, i);
            return e;
        }
    }
    return NULL;
}

/* The cached entry for the `used` bytes at s->wt under `key`, or NULL. */
static struct dla_wt_cache_entry *wt_cache_find(struct dla_conv_state *s,
                                                const struct dla_wt_key *key, size_t used,
                                                uint64_t print)
{
    struct dla_wt_cache *wc = &s->wcache;
    for (size_t step = 0; step < wc->n; step++) {
        const size_t i = wt_cache_probe(wc, step);
        struct dla_wt_cache_entry *e = &wc->e[i];
        if (e->len == used && e->print == print && !memcmp(&e->key, key, sizeof(*key)) &&
            !memcmp(e->src, s->wt, used)) {
            wt_cache_hit(wc, i);
            return e;
        }
    }
    return NULL;
}

/* Upper bound of the bytes a pack of g's kernels holds (the kernel's). */
static size_t pack_bytes_bound(const struct dla_conv_geom *g)
{
    return dla_conv_wpack_bytes_bound(g);
}

/* The kernels of this layer packed for dla_conv_s8_packed, from the cache or
 * decoded, packed and cached now; *out NULL when they cannot be cached
 * (then the caller decodes and packs them per call, as before). */
/*
 * The entry's kernels for an input with negative codes (a U8 pack converts
 * its cells on every such call: ~0.25 ns a weight, 100 us for MobileNetV2's
 * last 320 -> 1280 layer), made once from the planar weights.  Counted in
 * the cache's bytes without evicting (the entry is in use; the next
 * insertion makes room).  Without memory the U8 pack serves.
 */
static int signed_pack(struct dla_dev *d, struct dla_conv_state *s, const struct dla_csc_cfg *c,
                       const struct dla_wt_key *key, const struct dla_conv_geom *g,
                       struct dla_wt_cache *wc, struct dla_wt_cache_entry *e)
{
    int rc = wt_ready(d, s);
    if (!rc) {
        rc = decode_planar(d, s, c, key, (size_t)g->out_k * g->in_c * g->k_h * g->k_w);
    }
    struct dla_conv_wpack *ps = NULL;
    if (!rc && dla_conv_wpack_build_signed(g, s->wplanar, e->pack, &ps) == 0 && ps != NULL) {
        const size_t n = dla_conv_wpack_bytes(ps);
        e->bytes += n;
        wc->bytes += n;
        e->pack_signed = ps;
    }
    return rc;
}

/* src: a feature layer's input in place (NULL otherwise): with a negative
 * code the entry's signed pack is the one returned. */
static int cached_weights(struct dla_dev *d, struct dla_conv_state *s, const struct dla_csc_cfg *c,
                          const struct dla_wt_key *key, const struct dla_conv_geom *g,
                          const struct dla_conv_src *in_src, const struct dla_conv_wpack **out,
                          const int8_t **dw_wt)
{
    struct dla_wt_cache *wc = &s->wcache;
    const size_t used = weight_stream_used(c);
    struct dla_wt_cache_entry *e = NULL;
    *out = NULL;
    *dw_wt = NULL;
    wc->clock++;
    /* the weights of the last hit, not fetched again since (WEIGHT_REUSE) */
    if (wc->last < wc->n && wc->last_fetch == s->wt_fetches && wc->e[wc->last].len == used &&
        !memcmp(&wc->e[wc->last].key, key, sizeof(*key))) {
        e = &wc->e[wc->last];
    }
    if (e == NULL) {
        e = wt_cache_find_origin(d, s, key, used);
    }
    int rc = e == NULL ? wt_ready(d, s) : 0; /* the bytes are compared or packed */
    if (rc) {
        return rc;
    }
    uint64_t print = e ? e->print : stream_print(s->wt, used);
    if (e == NULL) {
        e = wt_cache_find(s, key, used, print);
    }
    if (e == NULL) {
        size_t bound = used + pack_bytes_bound(g);
        uint8_t *src = wt_cache_room(wc, bound) ? malloc(used ? used : 1) : NULL;
        if (src == NULL) {
            return 0;
        }
        struct dla_conv_wpack *pack = NULL;
        rc = decode_planar(d, s, c, key, (size_t)g->out_k * g->in_c * g->k_h * g->k_w);
        if (!rc) {
            rc = dla_conv_wpack_build(g, s->wplanar, &pack);
        }
        if (rc) {
            free(src);
            return dla_error(d, rc, "CSC: cannot pack %u kernels of %ux%ux%u (%s)", g->out_k,
                             g->k_w, g->k_h, g->in_c, dlasim_status_name(rc));
        }
        /* a depthwise layer keeps its diagonal kernels for the depthwise
         * kernel, which skips the dense zeros (and their cache lines) */
        size_t n_wt = (size_t)g->out_k * g->k_h * g->k_w;
        int8_t *dw = dla_conv_s8_is_depthwise(g, s->wplanar) ? malloc(n_wt ? n_wt : 1) : NULL;
        if (dw != NULL) {
            dla_conv_dw_s8_diagonal(g, s->wplanar, dw);
        }
        memcpy(src, s->wt, used);
        e = &wc->e[wc->n++];
        e->key = *key;
        e->src = src;
        e->len = used;
        e->print = print;
        e->pack = pack;
        e->pack_signed = NULL;
        e->dw_wt = dw;
        e->origin = s->wt_origin;
        e->bytes = used + dla_conv_wpack_bytes(pack) + (dw ? n_wt : 0);
        wc->bytes += e->bytes;
        wc->last = wc->n - 1;
    }
    e->last_use = wc->clock;
    wc->last_fetch = s->wt_fetches;
    *out = e->pack;
    *dw_wt = e->dw_wt;
    if (e->dw_wt != NULL) {
        /* a small depthwise layer's kernels are usually cold (the layers
         * since their last use evicted them): in flight while CSC builds
         * the input */
        const size_t n_wt = (size_t)g->out_k * g->k_h * g->k_w;
        for (size_t at = 0; at < n_wt; at += 64) {
            __builtin_prefetch(e->dw_wt + at);
        }
    }
    /* only a U8 pack asks whether the input has a negative code (the scan
     * is a pass over the input at every call) */
    if (in_src != NULL && e->dw_wt == NULL && !dla_conv_wpack_takes_signed(e->pack) &&
        !dla_conv_src_nonneg(g, in_src)) {
        if (e->pack_signed == NULL) {
            rc = signed_pack(d, s, c, key, g, wc, e);
        }
        *out = e->pack_signed != NULL ? e->pack_signed : e->pack;
    }
    return rc;
}

static int build_weights(struct dla_dev *d, struct dla_conv_state *s, const struct dla_csc_cfg *c,
                         struct conv_job *j)
{
    const struct dla_config *cfg = dla_cfg(d);
    struct dla_conv_geom *g = &j->g;
    int pixel = c->fmt == DLA_CONV_IN_PIXEL;
    feature_kernel_geom(c, g);
    if (pixel) {
        g->k_w = (c->kernel_c + pixel_stride(c) - 1) / pixel_stride(c);
        /* post-extension: one k_w window per output column (build_pixel_input_post_ext) */
        g->stride_x = c->y_extension ? g->k_w : c->stride_x;
        g->dil_x = g->dil_y = 1;
    }
    struct dla_wt_key key;
    memset(&key, 0, sizeof(key));
    key.pixel = (uint32_t)pixel;
    key.kernels = c->kernels;
    key.kernel_c = c->kernel_c;
    key.kernel_w = c->kernel_w;
    key.kernel_h = c->kernel_h;
    key.y_extension = pixel ? c->y_extension : 0;
    key.atomic_c = cfg->mac_atomic_c_size;
    key.atomic_k = cfg->mac_atomic_k_size;
    key.in_c = g->in_c;
    key.k_w = g->k_w;
    key.k_h = g->k_h;
    int rc = 0;
    j->pack = NULL;
    j->wt = NULL;
    /* sums that fit int32 run on dla_conv_s8: its packed kernels are cached */
    if (j->terms < CONV_INT32_SAFE_TERMS) {
        rc = cached_weights(d, s, c, &key, g, j->copy != NULL ? &j->src : NULL, &j->pack,
                            &j->wt);
    }
    if (!rc && j->pack == NULL) {
        rc = decode_planar(d, s, c, &key, (size_t)g->out_k * g->in_c * g->k_h * g->k_w);
        j->wt = s->wplanar;
    }
    if (rc) {
        return rc;
    }
    j->pixel = pixel;
    j->flat_c = pixel ? pixel_stride(c) : c->channel;
    j->flat_kc = c->kernel_c;
    j->ext = pixel ? 1u << c->y_extension : 1;
    j->ac = cfg->mac_atomic_c_size;
    return 0;
}

/* ---- running the MACs ---------------------------------------------------------- */

/* A depthwise layer's channels on the device's team (common/team.h);
 * diag: wt holds the diagonal kernels alone (a cached entry's dw_wt);
 * src: the input read from its lines (then in is NULL). */
struct dw_job {
    const struct dla_conv_geom *g;
    const int8_t *in, *wt;
    int32_t *out;
    int diag;
    const struct dla_dw_src *src;
    size_t per_item; /* channels a dla_team_run item */
    const struct feature_copy *copy; /* the planes each item copies first, or NULL */
};

static void dw_channels(const struct dw_job *j, size_t k0, size_t k1)
{
    if (j->src != NULL) {
        dla_conv_dw_s8_src_channels(j->g, j->src, j->wt, j->out, k0, k1);
    } else if (j->diag) {
        dla_conv_dw_s8_diag_channels(j->g, j->in, j->wt, j->out, k0, k1);
    } else {
        dla_conv_dw_s8_channels(j->g, j->in, j->wt, j->out, k0, k1);
    }
}

/* Channels [k0, k1) of a layer whose item copies their padded planes
 * (dla_conv_geom in[c][y][x], s->in) first: then the kernel reads them.
 * Its reads end at plane k1 (in_c = k1: the AVX2 rows' loads near the
 * input's end stop there), so no item reads a plane another one writes;
 * each output is the same exact sum as from the whole copy. */
static void dw_copy_channels(const struct dw_job *j, size_t k0, size_t k1)
{
    const struct feature_copy *f = j->copy;
    feature_copy_channels(f, (uint32_t)k0, k1 < f->channels ? (uint32_t)k1 : f->channels);
    struct dla_conv_geom g = *j->g;
    g.in_c = (uint32_t)k1;
    dla_conv_dw_s8_diag_channels(&g, j->in, j->wt, j->out, k0, k1);
}

/* Item i of a layer on the team: channels [i * per_item, ...). */
static void dw_item(void *ctx, size_t i)
{
    const struct dw_job *j = ctx;
    size_t k0 = i * j->per_item, k1 = k0 + j->per_item;
    k1 = k1 < j->g->out_k ? k1 : j->g->out_k;
    if (j->copy != NULL) {
        dw_copy_channels(j, k0, k1);
    } else {
        dw_channels(j, k0, k1);
    }
}

/* Real MACs below which a depthwise layer stays on the calling thread.
 * A spinning worker joins a job in ~0.1-0.3 us (common/team.h).  With
 * chained layers (device.c try_chain) the blocks of a depthwise layer run
 * back to back on the worker while the host, once it has programmed the
 * next, waits in dla_team_help_until_count: a job then has a helper that
 * is otherwise idle.  The 28x28 blocks of 8 channels (56,448 MACs) gain
 * from it (a model of eight 28x28x192 layers, 2 threads, eight alternated
 * pairs: 0.695 -> 0.639 ms, 8/8), the 14x14 ones (14,112) lose (eight
 * 14x14x384 layers: 0.525 -> 0.559 ms, 0/8: the kernel is too small a part
 * of such a block); the blocks' SDP stays alone (SDP_TEAM_MIN_ELEMS 4096
 * instead of 16384: 0.658 -> 0.700 ms).  Without chaining (the layer
 * observer) both sizes ran about as fast shared as alone, and a slow link
 * between the vCPUs made sharing cost 1.6x-2.7x (team.h's link check then
 * keeps them alone).  Items of at least DW_ITEM_MACS, so the shared
 * counter is not taken per 0.1 us channel. */
#define DW_TEAM_MIN_MACS 32768.0
#define DW_ITEM_MACS 3072.0

/* Whether a depthwise layer's channels go to the team (run_kernel). */
static int dw_on_team(struct dla_dev *d, const struct dla_conv_geom *g)
{
    double per_channel = (double)g->out_h * g->out_w * g->k_h * g->k_w;
    return per_channel * g->out_k >= DW_TEAM_MIN_MACS && dla_dev_team(d) != NULL;
}

/* Whether the padded planar copy of a depthwise layer with cached diagonal
 * kernels is made by its team items, each its own channels' planes before
 * computing them (dw_copy_channels), instead of on the calling thread
 * before the split: both threads copy.  Layers that stay on the caller
 * keep the one copy (feature_planar). */
static int dw_copies_in_items(struct dla_dev *d, const struct conv_job *j)
{
    return j->copy != NULL && j->pack != NULL && j->wt != NULL &&
           j->terms < CONV_INT32_SAFE_TERMS && j->g.out_k <= j->g.in_c &&
           !dw_reads_in_place(j) && dw_on_team(d, &j->g);
}

/* The scratch the items of dw_copies_in_items copy into (s->in). */
static int feature_scratch(struct dla_dev *d, struct dla_conv_state *s, struct conv_job *j)
{
    int rc = dla_conv_scratch(d, (void **)&s->in, &s->in_cap, j->copy->plane * j->g.in_c);
    if (rc) {
        return rc;
    }
    j->copy->dst = s->in;
    j->in = s->in;
    j->copy_in_items = 1;
    return 0;
}

/* wt: the dense planar weights, or (with a cached pack) the diagonal
 * kernels of a depthwise layer, NULL otherwise (cached_weights).  src:
 * the input in place where `in` is NULL (the packed kernel's, or a
 * depthwise layer's that dw_reads_in_place takes). */
static int run_kernel(struct dla_dev *d, const struct dla_conv_geom *g, const int8_t *in,
                      const struct dla_dw_src *src, const int8_t *wt,
                      const struct dla_conv_wpack *pack, const struct feature_copy *copy,
                      int32_t *out)
{
    /* a depthwise block lowered densely: the same sums without the zeros
     * (weights that came with a cached pack were checked when cached) */
    if (wt != NULL && (pack != NULL || dla_conv_s8_is_depthwise(g, wt))) {
        struct dw_job j = { g, in, wt, out, pack != NULL, in == NULL ? src : NULL, 1, copy };
        double per_channel = (double)g->out_h * g->out_w * g->k_h * g->k_w;
        if (dw_on_team(d, g)) {
            j.per_item = per_channel >= DW_ITEM_MACS ? 1 : (size_t)(DW_ITEM_MACS / per_channel) + 1;
            if (copy != NULL || in == NULL) {
                /* an item a thread: a copy of one channel reads a few
                 * bytes of every CBUF line, of half the channels a line's
                 * half (perf, MobileNetV2 --threads 2, padded_rows_avx2
                 * main / worker: items of 1 channel 1.53 / 1.51 %, of 2
                 * 1.15 / 0.92, of 4 1.04 / 0.80; the caller's copy alone
                 * 1.41 / 0.56); and a call on the lines sets its passes
                 * up once (eight 28x28x192 layers, 2 threads: items of 1
                 * channel 0.76 ms, of half the block 0.56) */
                size_t t = dla_team_threads(dla_dev_team(d));
                size_t per = (g->out_k + t - 1) / t;
                j.per_item = per > j.per_item ? per : j.per_item;
            }
            size_t items = (g->out_k + j.per_item - 1) / j.per_item;
            dla_team_run(dla_dev_team(d), items, dw_item, &j);
        } else {
            j.per_item = g->out_k; /* one call: a small layer's 8 channels */
            dw_item(&j, 0);
        }
        return 0;
    }
    int rc = pack && src ? dla_conv_s8_packed_src(g, &src->src, pack, out, dla_threads(d),
                                                  dla_dev_team(d))
             : pack      ? dla_conv_s8_packed(g, in, pack, out, dla_threads(d), dla_dev_team(d))
                         : dla_conv_s8(g, in, wt, out, dla_threads(d));
    if (rc) {
        return dla_error(d, rc, "CSC: convolution kernel failed (%s) on a %ux%ux%u input, "
                         "%ux%u kernels",
                         dlasim_status_name(rc), g->in_w, g->in_h, g->in_c, g->k_w, g->k_h);
    }
    return 0;
}

/* Sums of more than 2^17 products: channel chunks of fewer products,
 * added in 64 bits. */
static int run_chunked(struct dla_dev *d, struct dla_conv_state *s, const struct conv_job *j,
                       int32_t *tmp, int64_t *acc)
{
    const struct dla_conv_geom *g = &j->g;
    const size_t taps = (size_t)g->k_w * g->k_h;
    const size_t plane = (size_t)g->in_w * g->in_h;
    const size_t n_out = (size_t)g->out_w * g->out_h * g->out_k;
    uint32_t chunk = (uint32_t)((CONV_INT32_SAFE_TERMS - 1) / taps);
    int rc = dla_conv_scratch(d, (void **)&s->wchunk, &s->wchunk_cap,
                              (size_t)g->out_k * chunk * taps);
    if (rc) {
        return rc;
    }
    memset(acc, 0, n_out * sizeof(*acc));
    for (uint32_t c0 = 0; c0 < g->in_c; c0 += chunk) {
        struct dla_conv_geom sub = *g;
        sub.in_c = g->in_c - c0 < chunk ? g->in_c - c0 : chunk;
        for (uint32_t k = 0; k < g->out_k; k++) {
            memcpy(s->wchunk + (size_t)k * sub.in_c * taps,
                   j->wt + ((size_t)k * g->in_c + c0) * taps, (size_t)sub.in_c * taps);
        }
        rc = run_kernel(d, &sub, j->in + (size_t)c0 * plane, NULL, s->wchunk, NULL, NULL, tmp);
        if (rc) {
            return rc;
        }
        for (size_t i = 0; i < n_out; i++) {
            acc[i] += tmp[i];
        }
    }
    return 0;
}

/* One atomic operation of a feature layer: Atomic-C channels at one kernel
 * position. */
static int64_t feature_atom(const struct conv_job *j, uint32_t k, uint32_t oy, uint32_t ox,
                            uint32_t c0, uint32_t c1, uint32_t ky, uint32_t kx)
{
    const struct dla_conv_geom *g = &j->g;
    const size_t plane = (size_t)g->in_w * g->in_h;
    const size_t taps = (size_t)g->k_w * g->k_h;
    size_t y = (size_t)oy * g->stride_y + (size_t)ky * g->dil_y;
    size_t x = (size_t)ox * g->stride_x + (size_t)kx * g->dil_x;
    int64_t sum = 0;
    for (uint32_t c = c0; c < c1; c++) {
        int8_t a = j->in[c * plane + y * g->in_w + x];
        int8_t b = j->wt[((size_t)k * g->in_c + c) * taps + (size_t)ky * g->k_w + kx];
        sum += (int32_t)a * b;
    }
    return sum;
}

/* Element e of the channel-extended pixel row (flat index e of the line). */
static int64_t pixel_term(const struct conv_job *j, uint32_t k, uint32_t oy, uint32_t ox,
                          uint32_t r, uint32_t e)
{
    const struct dla_conv_geom *g = &j->g;
    const size_t plane = (size_t)g->in_w * g->in_h;
    uint32_t c = e % j->flat_c, x = e / j->flat_c;
    size_t y = (size_t)oy * g->stride_y + r;
    int8_t a = j->in[c * plane + y * g->in_w + (size_t)ox * g->stride_x + x];
    int8_t b = j->wt[(((size_t)k * g->in_c + c) * g->k_h + r) * g->k_w + x];
    return (int32_t)a * b;
}

/*
 * Accumulate atomic operation by atomic operation in the order CSC issues
 * them (channel block outer, kernel position inner) as CACC does.
 * ref: cmod/csc SendDataToMacSequencerDirectConvCommon / SendImageDataToMacSequencerConvCommon
 * loop order; vmod CACC_CALC_int8 34-bit partial saturation.
 */
static void run_exact(const struct conv_job *j, int64_t *acc)
{
    const struct dla_conv_geom *g = &j->g;
    size_t i = 0;
    for (uint32_t k = 0; k < g->out_k; k++) {
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            for (uint32_t ox = 0; ox < g->out_w; ox++, i++) {
                int64_t a = 0;
                if (!j->pixel) {
                    for (uint32_t c0 = 0; c0 < g->in_c; c0 += j->ac) {
                        uint32_t c1 = g->in_c - c0 < j->ac ? g->in_c : c0 + j->ac;
                        for (uint32_t ky = 0; ky < g->k_h; ky++) {
                            for (uint32_t kx = 0; kx < g->k_w; kx++) {
                                a = dla_cacc_accumulate(a,
                                                        feature_atom(j, k, oy, ox, c0, c1, ky, kx));
                            }
                        }
                    }
                } else {
                    for (uint32_t e0 = 0; e0 < j->flat_kc; e0 += j->ac) {
                        uint32_t e1 = j->flat_kc - e0 < j->ac ? j->flat_kc : e0 + j->ac;
                        for (uint32_t r0 = 0; r0 < g->k_h; r0 += j->ext) {
                            int64_t step = 0;
                            for (uint32_t r = r0; r < r0 + j->ext && r < g->k_h; r++) {
                                for (uint32_t e = e0; e < e1; e++) {
                                    step += pixel_term(j, k, oy, ox, r, e);
                                }
                            }
                            a = dla_cacc_accumulate(a, step);
                        }
                    }
                }
                acc[i] = a;
            }
        }
    }
}

/* MACs and accumulation of one batch into `out` (n_out elements of the
 * allocated cube); CACC's saturations are added to *sat. */
static int compute(struct dla_dev *d, struct dla_conv_state *s, const struct conv_job *j,
                   const struct dla_cacc_cfg *cacc, int32_t *out, size_t n_out, uint32_t *sat)
{
    const struct dla_conv_geom *g = &j->g;
    const uint64_t taps = (uint64_t)g->k_w * g->k_h;
    int rc;
    if (j->terms < CONV_INT32_SAFE_TERMS) {
        const struct dla_dw_src src = {j->src, j->copy ? j->copy->lo : NULL,
                                       j->copy ? j->copy->hi : NULL};
        rc = run_kernel(d, g, j->in, j->in == NULL ? &src : NULL, j->wt, j->pack,
                        j->copy_in_items ? j->copy : NULL, out);
        if (!rc) {
            *sat += dla_cacc_deliver_i32(cacc, out, n_out);
        }
        return rc;
    }
    rc = dla_conv_scratch(d, (void **)&s->acc, &s->acc_cap, n_out * sizeof(int64_t));
    if (rc) {
        return rc;
    }
    if (taps < CONV_INT32_SAFE_TERMS) {
        rc = run_chunked(d, s, j, out, s->acc);
    } else {
        run_exact(j, s->acc); /* a pixel kernel of 2^17+ taps per channel */
    }
    if (!rc) {
        *sat += dla_cacc_deliver_i64(cacc, s->acc, out, n_out);
    }
    return rc;
}

/* ---- a layer's output in bands of rows (dla.h dla_conv_band_*) ---------------- */

/*
 * A feature layer that reads its input in place with packed kernels (the
 * int32-exact sums, one batch) need not compute its whole int32 cube before
 * SDP runs: SDP asks for bands of output rows and post-processes each band
 * while it is in cache, on every thread of the team.  Every output element
 * is the same exact sum whichever rows it is computed with (conv_s8.h: the
 * pack is valid for every geometry of its kernel shape), and CACC's int32
 * delivery is element-wise and never saturates (cacc.c cacc_round_i32), so
 * the values and the CACC statistics are those of compute().  What must
 * wait for the bands is CBUF's release of the slices they read
 * (dla_cbuf_end_layer), done by dla_conv_band_end.
 */
struct dla_conv_band {
    struct dla_conv_state *s;
    struct conv_job job;        /* input in place (job.src), packed kernels */
    struct dla_cacc_cfg cacc;
    struct dla_csc_cfg csc;     /* for dla_cbuf_end_layer */
    struct dla_cdma_cfg cdma;
    uint32_t rows;              /* output rows a band (band_rows) */
    /* a depthwise block (dw_reads_in_place): job.wt its diagonal kernels,
     * [lo, hi) CBUF's bytes its rows' whole-vector loads may touch */
    int dw;
    const int8_t *lo, *hi;
};

/* Multiply-adds per output above which the layer keeps the whole-layer
 * kernel: its tiles split over the team at tile grain and the passes over
 * the output are a small part of its time. */
#define BAND_MAX_TERMS 1024u
/* int32 values of a band, at least: 1 MiB (MobileNetV2's dense layers,
 * one thread, instrumented: 192 KiB bands took 7.09 ms an image for the
 * layers that 1 MiB bands ran in 6.76-6.79 and the whole-layer path in
 * 7.06-7.24; each band is a kernel call with its own plan). */
#define BAND_ELEMS 262144u
/* ... and at least this many times the kernels' weights: each band is a
 * kernel call with its own plan, and before the signed packs (signed_pack)
 * a call on an input with negative codes converted the whole pack, ~0.25 ns
 * a weight against ~0.6 ns an output (4 instead of 32 measured the same
 * since, within the noise). */
#define BAND_ELEMS_PER_WEIGHT 32u

/* On a team, bands a thread at least, each of at least BAND_SPLIT_ELEMS
 * int32 values: the bands are taken one at a time (sdp.c band_body), so
 * at the layer's close one thread idles for up to a band while the other
 * ends its last one; with one band a thread that is the whole imbalance
 * of the two threads' speeds.  Measured (MobileNetV2, --threads 2,
 * loaded host, 31 images, the worker's idle time between its last band
 * and the caller's, rdtsc): 3.2-5.4 M ticks with 1 band a thread,
 * 2.1-3.2 M with 2; 4 a thread made the caller wait longer. */
#define BAND_PER_THREAD 2u
#define BAND_SPLIT_ELEMS 65536u

/* A depthwise block's bands: a thread computes a band's sums and SDP
 * converts them while they are in its cache, so a block chained on the
 * worker (device.c try_chain) shares its kernel and SDP with the host
 * without either reading the other's int32 values (items of channels for
 * the kernel and of pixels for SDP, split apart, move half of them between
 * the cores: sharing those measured slower than the worker alone,
 * MobileNetV2's 56x56 blocks 232 -> 328 us a layer).  Where the kernel
 * reads the memory's atoms in place (dw_block_takes_atoms, round 50) no
 * fetch precedes the bands; where CDMA transposes the input to channel
 * rows, its fetch is shared by rows too (dw_fetch_by_rows), each thread's
 * rows those its bands read (sdp.c take_band).  Blocks of
 * DW_BAND_MIN_INPUT input bytes or more, DW_BANDS_PER_THREAD bands a
 * thread: with the atoms read in place, 16 KB (the 56x56x8 blocks, 25
 * KB) against 64 KB before (112x112 only): the dw56 kind 1.39 -> 1.12 ms
 * best median, MobileNetV2 4.13 -> 3.93 (4.28 -> 4.07 mean), 3 rounds
 * alternated; 4 KB (28x28 blocks too) 3.81 -> 3.97 against 16 KB (4
 * rounds): a 28x28 block's ~3 us gain less than the two threads' meeting
 * costs.  With the transposing fetch shared by rows, 56x56 blocks had
 * gained nothing (231 -> 237 us a layer).  One band a thread (two before):
 * the dw56 kind 1.177 -> 1.103 ms best median (4 rounds), MobileNetV2
 * 3.916 -> 3.884 (5): each band is a kernel call with its set-up, and
 * the threads meet once. */
#define DW_BAND_MIN_INPUT 16384u
#define DW_BANDS_PER_THREAD 1u

/* The widest square layer fetch_atoms takes for a depthwise block: the
 * compiler's are one Atomic-M, 8 channels where atoms are 8 bytes
 * (lower_conv.c block_groups); a wider depthwise layer's atoms reach its
 * kernel as lines all the same (dla_cdma_atoms_to_planar: one copy more,
 * the same values). */
#define DW_BLOCK_MAX_CHANNELS 32u

/* Whether CSC's configuration is a depthwise block that runs in bands (when
 * its input is read in place, dw_band_rows) on a team of `threads`. */
static int dw_banded(const struct dla_csc_cfg *c, unsigned threads)
{
    return threads > 1 && c->kernels == c->channel && c->channel <= DW_BLOCK_MAX_CHANNELS &&
           c->batches == 1 && (uint64_t)c->width * c->height * c->channel >= DW_BAND_MIN_INPUT;
}

/* A depthwise block's rows a band (dw_reads_in_place, dw_banded).  Every
 * band is taken from the lines as the block is (dla_conv_dw_s8_src_takes
 * asks the same of fewer input rows). */
static uint32_t dw_band_rows(const struct conv_job *j, unsigned threads)
{
    const struct dla_conv_geom *g = &j->g;
    uint32_t bands = threads * DW_BANDS_PER_THREAD;
    bands = bands < g->out_h ? bands : g->out_h;
    return (g->out_h + bands - 1) / bands;
}

/* Output rows a band, or 0 where the layer keeps the whole-layer path:
 * fewer than two bands of BAND_ELEMS (the whole-layer kernel splits over
 * the team itself), deep sums, input not read in place.  On a team of t
 * threads the band count is a multiple of t (every thread the same
 * share) and at least BAND_PER_THREAD * t where the bands stay large. */
static uint32_t band_rows(const struct dla_csc_cfg *c, const struct conv_job *j, unsigned threads)
{
    const struct dla_conv_geom *g = &j->g;
    if (dw_reads_in_place(j) && dw_banded(c, threads) && g->out_h >= 2) {
        return dw_band_rows(j, threads);
    }
    if (c->batches != 1 || !reads_in_place(j) || j->terms > BAND_MAX_TERMS || g->out_h < 2) {
        return 0;
    }
    const uint64_t row = (uint64_t)g->out_w * g->out_k;
    const uint64_t weights = j->terms * g->out_k;
    uint64_t least = weights * BAND_ELEMS_PER_WEIGHT;
    least = least > BAND_ELEMS ? least : BAND_ELEMS;
    uint64_t rows = (least + row - 1) / row;
    uint64_t bands = (g->out_h + rows - 1) / rows;
    if (bands < 2) {
        return 0;
    }
    /* a layer worth banding on a team: at least BAND_PER_THREAD bands a
     * thread while they stay BAND_SPLIT_ELEMS or more */
    const uint64_t want = (uint64_t)BAND_PER_THREAD * threads;
    const uint64_t most = g->out_h * row / BAND_SPLIT_ELEMS;
    if (threads > 1 && bands < want && most > bands) {
        bands = want < most ? want : most;
    }
    bands = (bands + threads - 1) / threads * threads;
    return (uint32_t)((g->out_h + bands - 1) / bands);
}

/* The layer's state for the bands (its end waits for them). */
static int band_defer(struct dla_dev *d, struct dla_conv_state *s, const struct conv_job *j,
                      const struct dla_cacc_cfg *cacc, const struct dla_csc_cfg *csc,
                      const struct dla_cdma_cfg *cdma, uint32_t rows, struct dla_cube *to_sdp)
{
    struct dla_conv_band *b = malloc(sizeof(*b));
    if (b == NULL) {
        return dla_error(d, DLASIM_ERR_NOMEM, "CSC: no memory for a layer's band state");
    }
    b->s = s;
    b->job = *j;
    b->dw = dw_reads_in_place(j);
    b->lo = j->copy->lo;
    b->hi = j->copy->hi;
    b->job.copy = NULL; /* (the caller's; the bands read job.src) */
    b->cacc = *cacc;
    b->csc = *csc;
    b->cdma = *cdma;
    b->rows = rows;
    to_sdp->band = b;
    return 0;
}

uint32_t dla_conv_band_height(const struct dla_conv_band *b)
{
    return b->rows;
}

int dla_conv_band_rows(const struct dla_conv_band *b, uint32_t y0, uint32_t y1, int32_t *out)
{
    const struct dla_conv_geom *g = &b->job.g;
    const struct dla_dw_src dw = {b->job.src, b->lo, b->hi};
    int rc = b->dw ? dla_conv_dw_s8_src_rows(g, &dw, b->job.wt, y0, y1, out)
                   : dla_conv_s8_packed_src_rows(g, &b->job.src, b->job.pack, y0, y1, out);
    if (!rc) {
        (void)dla_cacc_deliver_i32(&b->cacc, out, (size_t)(y1 - y0) * g->out_w * g->out_k);
    }
    return rc;
}

int dla_conv_band_whole(struct dla_dev *d, const struct dla_cube *cube)
{
    struct dla_conv_band *b = cube->band;
    uint32_t sat = 0;
    /* a depthwise block reads its lines within CBUF's bytes (compute) */
    struct feature_copy bytes = {0};
    struct conv_job job = b->job;
    if (b->dw) {
        bytes.lo = b->lo;
        bytes.hi = b->hi;
        job.copy = &bytes;
    }
    return compute(d, b->s, &job, &b->cacc, cube->data, dla_cube_batch_elems(cube), &sat);
}

int dla_conv_band_end(const struct dla_cube *cube, int rc)
{
    struct dla_conv_band *b = cube->band;
    if (b == NULL) {
        return rc;
    }
    /* whatever SDP did: the convolution itself ended without an error,
     * as it does before SDP runs on the whole-layer path */
    dla_cbuf_end_layer(b->s, &b->csc, &b->cdma);
    free(b);
    /* the cube is the caller's (not const there); it hands the band over once */
    ((struct dla_cube *)cube)->band = NULL;
    return rc;
}

/* ---- INT16 layers ------------------------------------------------------------------ */

/* Element (c, x) of an INT16 slice (see dla_cdma_fetch_feature16). */
static int16_t slice_elem16(const int8_t *slice, uint32_t w, uint32_t c, uint32_t x)
{
    int16_t v;
    memcpy(&v, slice + ((size_t)c * w + x) * 2u, sizeof(v));
    return v;
}

/* Padded planar int16 input of batch `b`: as build_feature_input, with the
 * whole 16-bit PAD_VALUE at padded positions (ref: nv_full cmod/csc
 * SendDataToMacSequencerDirectConvCommon, INT16 padding coordinate). */
static int build_feature_input16(struct dla_dev *d, struct dla_conv_state *s,
                                 const struct dla_csc_cfg *c, uint32_t b,
                                 struct dla_conv_geom *g)
{
    const struct dla_cbuf_slices *data = &s->data;
    g->in_c = c->channel;
    g->in_w = (c->out_w - 1) * c->stride_x + (c->kernel_w - 1) * c->dil_x + 1;
    g->in_h = (c->out_h - 1) * c->stride_y + (c->kernel_h - 1) * c->dil_y + 1;
    const size_t plane = (size_t)g->in_w * g->in_h;
    int rc = dla_conv_scratch(d, (void **)&s->in16, &s->in16_cap,
                              plane * g->in_c * sizeof(int16_t));
    if (rc) {
        return rc;
    }
    const int16_t pad = (int16_t)(uint16_t)(c->pad_value & 0xffffu);
    for (uint32_t ch = 0; ch < g->in_c; ch++) {
        for (uint32_t y = 0; y < g->in_h; y++) {
            int16_t *row = s->in16 + ch * plane + (size_t)y * g->in_w;
            int64_t sy = (int64_t)y - c->pad_top;
            const int8_t *slice = sy >= 0 && sy < c->height
                                      ? data->buf + ((size_t)sy * c->batches + b) *
                                                        dla_cbuf_slice_bytes(data)
                                      : NULL;
            for (uint32_t x = 0; x < g->in_w; x++) {
                int64_t sx = (int64_t)x - c->pad_left;
                row[x] = slice && sx >= 0 && sx < c->width
                             ? slice_elem16(slice, c->width, ch, (uint32_t)sx)
                             : pad;
            }
        }
    }
    return 0;
}

/*
 * INT16 kernels (ref: nv_full cmod/csc SendWeightToMacSequencerDirectConvCommon
 * with element_size 2): groups of `ak` kernels (dla_conv_kernels_per_group);
 * in a group, channel blocks of Atomic-C channels; in a block, kernel
 * positions (row-major); at a position, each kernel's run of the block's
 * channels, 2 bytes (little endian) per weight.
 */
static void decode_feature_weights16(const uint8_t *raw, uint32_t kernels, uint32_t ch,
                                     uint32_t npos, uint32_t ac, uint32_t ak, int16_t *dst)
{
    const size_t bpk = (size_t)npos * ch * 2u;
    for (uint32_t k0 = 0; k0 < kernels; k0 += ak) {
        uint32_t kpg = kernels - k0 < ak ? kernels - k0 : ak;
        const uint8_t *group = raw + (size_t)(k0 / ak) * bpk * ak;
        for (uint32_t c0 = 0; c0 < ch; c0 += ac) {
            uint32_t cb = ch - c0 < ac ? ch - c0 : ac;
            const uint8_t *block = group + (size_t)c0 * npos * kpg * 2u;
            for (uint32_t p = 0; p < npos; p++) {
                for (uint32_t kk = 0; kk < kpg; kk++) {
                    const uint8_t *src = block + ((size_t)p * kpg + kk) * cb * 2u;
                    for (uint32_t i = 0; i < cb; i++) {
                        uint16_t u = (uint16_t)(src[2 * i] | (uint16_t)(src[2 * i + 1] << 8));
                        dst[((size_t)(k0 + kk) * ch + c0 + i) * npos + p] = (int16_t)u;
                    }
                }
            }
        }
    }
}

static int build_weights16(struct dla_dev *d, struct dla_conv_state *s,
                           const struct dla_csc_cfg *c, struct dla_conv_geom *g)
{
    const struct dla_config *cfg = dla_cfg(d);
    feature_kernel_geom(c, g);
    const size_t npos = (size_t)c->kernel_w * c->kernel_h;
    int rc = wt_ready(d, s);
    if (!rc) {
        rc = dla_conv_scratch(d, (void **)&s->wt16, &s->wt16_cap,
                              (size_t)c->kernels * c->kernel_c * npos * sizeof(int16_t));
    }
    if (!rc) {
        decode_feature_weights16(s->wt, c->kernels, c->kernel_c, (uint32_t)npos,
                                 cfg->mac_atomic_c_size,
                                 dla_conv_kernels_per_group(cfg, c->proc_precision), s->wt16);
    }
    return rc;
}

/* CSC + CMAC + CACC of an INT16 layer, batch by batch with the same
 * kernels: exact 64-bit sums (dla_conv_s16), then CACC's 48-bit
 * accumulator and rounding (dla_cacc_deliver_int16). */
static int compute_int16(struct dla_dev *d, struct dla_conv_state *s, const struct dla_csc_cfg *c,
                         const struct dla_cacc_cfg *cacc, struct dla_cube *to_sdp, uint32_t *sat)
{
    struct dla_conv_geom g;
    memset(&g, 0, sizeof(g));
    int rc = build_weights16(d, s, c, &g);
    const size_t n = dla_cube_batch_elems(to_sdp);
    if (!rc) {
        rc = dla_conv_scratch(d, (void **)&s->acc, &s->acc_cap, n * sizeof(int64_t));
    }
    for (uint32_t b = 0; b < c->batches && !rc; b++) {
        rc = build_feature_input16(d, s, c, b, &g);
        if (!rc) {
            dla_conv_s16(&g, s->in16, s->wt16, s->acc);
            *sat += dla_cacc_deliver_int16(cacc, s->acc, to_sdp->data + b * n, n);
        }
    }
    return rc;
}

/* ---- the layer -------------------------------------------------------------------- */

/* Host memory and work one layer may take: far above what a CBUF-bound
 * layer needs, low enough that arbitrary programming (fuzzing) cannot
 * exhaust the host. */
#define CONV_MAX_BUFFER_BYTES ((uint64_t)1 << 28)
#define CONV_MAX_MACS ((uint64_t)1 << 38)

static int check_host_limits(struct dla_dev *d, const struct dla_csc_cfg *c,
                             const struct dla_cdma_cfg *m)
{
    uint64_t s = c->fmt == DLA_CONV_IN_PIXEL ? pixel_stride(c) : c->channel;
    uint64_t kw = c->fmt == DLA_CONV_IN_PIXEL ? (c->kernel_c + s - 1) / s : c->kernel_w;
    uint64_t dx = c->fmt == DLA_CONV_IN_PIXEL ? 1 : c->dil_x;
    uint64_t dy = c->fmt == DLA_CONV_IN_PIXEL ? 1 : c->dil_y;
    uint64_t in_w = (uint64_t)(c->out_w - 1) * c->stride_x + (kw - 1) * dx + 1;
    uint64_t in_h = (uint64_t)(c->out_h - 1) * c->stride_y + (uint64_t)(c->kernel_h - 1) * dy + 1;
    uint64_t outs = (uint64_t)c->out_w * c->out_h * c->out_c * c->batches;
    uint64_t wts = (uint64_t)c->kernels * s * kw * c->kernel_h;
    uint64_t macs = outs * c->kernel_c * c->kernel_w * c->kernel_h;
    if (s * in_w * in_h > CONV_MAX_BUFFER_BYTES || outs * 4 > CONV_MAX_BUFFER_BYTES ||
        wts > CONV_MAX_BUFFER_BYTES || m->weight_bytes > CONV_MAX_BUFFER_BYTES ||
        macs > CONV_MAX_MACS) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CONV: %u batch(es) of a %ux%ux%u output from a %llux%llux%llu padded "
                         "input with %u kernels of %ux%ux%u exceed the host limits of the model",
                         c->batches, c->out_w, c->out_h, c->out_c, (unsigned long long)in_w,
                         (unsigned long long)in_h, (unsigned long long)s, c->kernels,
                         c->kernel_w, c->kernel_h, c->kernel_c);
    }
    /* work: the padded input CSC reads for every batch and the weights
     * CDMA fetches, and the MACs (SDP counts what it writes) */
    struct dla_work w;
    struct dla_strided in = {m->dain_port, 0, s * in_w, in_h, s * in_w, 1, 0, c->batches, 0};
    struct dla_strided wt = {m->weight_port, m->weight_addr, m->weight_bytes, 1, 0, 1, 0, 1, 0};
    dla_work_init(&w, "CONV");
    dla_work_read(&w, &in);
    dla_work_read(&w, &wt);
    dla_work_ops(&w, macs);
    return dla_work_check(d, &w);
}

/* The channel where two threads' shares of a layer's output meet: the
 * convolution kernel splits its k blocks of 8 channels in halves (conv_s8.c
 * team_homes) and SDP its surfaces of 8 (dla_team_run's home shares), so
 * both meet at half the channels rounded down to a whole surface. */
static uint64_t cacc_split_channel(const struct dla_csc_cfg *c)
{
    return (uint64_t)c->out_c / 16u * 8u;
}

/*
 * CACC's output cube in the conv state's buffer, reused from layer to
 * layer: a fresh zeroed allocation per layer cost page faults and clearing
 * (MobileNetV2: ~950 layers an image), and every element is written by the
 * layer's kernel (compute, compute_int16) before SDP reads it.  The cube
 * is placed so that its split channel (cacc_split_channel) starts at the
 * buffer's middle, the same address at every layer: each core writes its
 * half of every layer's accumulators into lines on its own side, lines its
 * cache already holds.  With every cube at the buffer's start the split
 * moved with each layer's channels and plane, and each line between two
 * layers' splits went from one core's cache to the other's (a store to a
 * line the other core holds waits for it; ResNet-50 on two threads, means
 * of alternated runs 16.0-16.9 -> 14.8-15.8 ms an image, docs/performance.md
 * round 43).
 */
static int cacc_cube(struct dla_dev *d, struct dla_conv_state *s, const struct dla_csc_cfg *c,
                     struct dla_cube *to_sdp)
{
    const uint64_t elems = (uint64_t)c->out_w * c->out_h * c->out_c * c->batches;
    *to_sdp = (struct dla_cube){ .w = c->out_w, .h = c->out_h, .c = c->out_c, .n = c->batches,
                                 .borrowed = 1 };
    to_sdp->data = dla_cacc_cube_place(s, elems, cacc_split_channel(c) * c->out_w * c->out_h);
    if (!to_sdp->data) {
        return dla_error(d, DLASIM_ERR_NOMEM,
                         "CACC: no memory for %u batch(es) of a %ux%ux%u output cube",
                         c->batches, c->out_w, c->out_h, c->out_c);
    }
    return 0;
}

/* A layer that failed: no cube, no band, nothing kept in CBUF. */
static void conv_abandon(struct dla_cube *to_sdp, struct dla_conv_state *s)
{
    free(to_sdp->band);
    to_sdp->band = NULL;
    dla_cube_free(to_sdp);
    dla_cbuf_forget(s);
}

static int conv_execute(struct dla_dev *d, unsigned group, struct dla_cube *to_sdp);

int dla_conv_execute(struct dla_dev *d, unsigned group, struct dla_cube *to_sdp)
{
    return conv_execute(d, group, to_sdp);
}

/* Whether CDMA's fetch of this layer shares its rows out as the bands
 * will (dw_banded). */
static int dw_fetch_by_rows(struct dla_dev *d, const struct dla_csc_cfg *c)
{
    return dw_banded(c, dla_team_threads(dla_dev_team(d)));
}

/* Whether a depthwise block's kernel takes its input as the memory's atoms
 * (kernels/conv_dw_s8.h dla_conv_dw_s8_src_takes: with AVX-512 VNNI +
 * VBMI, windows up to 4 wide and 8 high): then CDMA keeps them so, or
 * reads them in place, and no transposition to channel rows is made (a
 * 56x56 block's fetch was ~1.5 us of its ~12.7 on the worker, rdtsc,
 * round 50).  A block whose weights turn out dense still reads the atoms
 * (the packed kernel's cells, or dla_cdma_atoms_to_planar). */
static int dw_block_takes_atoms(const struct dla_csc_cfg *c)
{
    struct dla_conv_geom g;
    struct dla_conv_src src;
    memset(&g, 0, sizeof g);
    memset(&src, 0, sizeof src);
    feature_kernel_geom(c, &g);
    feature_window(c, &g, &src);
    src.atoms = 8;
    return dla_conv_dw_s8_src_takes(&g, &src);
}

/*
 * Whether CDMA keeps this layer's input as the memory's atoms
 * (dla_cdma_fetch_feature_atoms) for the kernel to pack its cells from
 * (kernels/conv_s8.h dla_conv_src_atoms_takes): a dense INT8 feature layer
 * (not a depthwise block: DW_BLOCK_MAX_CHANNELS kernels or fewer on as
 * many channels), one batch, no input conversion, whole 8-byte atoms,
 * int32-exact sums, every slice fetched now and none kept for the next
 * layer; any kernel size, stride and padding (3x3 layers too: round 43,
 * docs/performance.md).
 * CBUF's contents are the same bytes in another order; a path that reads
 * slices gets them transposed first (conv_execute,
 * dla_cdma_atoms_to_planar).
 */
static int fetch_atoms(const struct dla_config *cfg, const struct dla_cdma_cfg *a,
                       const struct dla_csc_cfg *c, enum dla_cbuf_use use)
{
    return use == DLA_CBUF_FRESH && cfg->memory_atomic_size == 8 &&
           a->fmt == DLA_CONV_IN_FEATURE && c->fmt == DLA_CONV_IN_FEATURE &&
           !dla_conv_int16(a->proc_precision) && !a->cvt_en && a->batches == 1 &&
           c->batches == 1 && a->channel % 8 == 0 && a->channel == c->channel &&
           a->width == c->width && a->height == c->height &&
           (c->kernels != c->channel || c->channel > DW_BLOCK_MAX_CHANNELS ||
            dw_block_takes_atoms(c)) &&
           (uint64_t)c->channel * c->kernel_w * c->kernel_h < CONV_INT32_SAFE_TERMS &&
           dla_cbuf_kept(c, c->height) == 0;
}

/* A layer of the convolution pipeline, its units' registers in `group`. */
static int conv_execute(struct dla_dev *d, unsigned group, struct dla_cube *to_sdp)
{
    const struct dla_config *cfg = dla_cfg(d);
    struct dla_conv_state *s = dla_dev_conv_state(d);
    struct dla_cdma_cfg cdma;
    struct dla_csc_cfg csc;
    struct dla_cmac_cfg cmac_a, cmac_b;
    struct dla_cacc_cfg cacc;
    enum dla_cbuf_use data_use, weight_use;
    /* (initialised here, not by memset: its rep stos cost ~10 ns a layer) */
    struct conv_job job = {0};
    struct feature_copy fcopy;
    uint32_t sat = 0;
    int rc;

    /* Decoded here, on the thread that runs the layer, also for a layer the
     * host chained: from the register file the host wrote only its changed
     * registers' lines of, not from a decode the host wrote whole (round
     * 48: the dw7 kind 1.77 -> 1.47 ms, docs/performance.md) */
    dla_cdma_decode(d, group, &cdma);
    csc_decode(d, group, &csc);
    dla_cmac_decode(d, group, NVDLA_CMAC_A_D_MISC_CFG_0, &cmac_a);
    dla_cmac_decode(d, group, NVDLA_CMAC_B_D_MISC_CFG_0, &cmac_b);
    dla_cacc_decode(d, group, &cacc);
    if ((rc = dla_cdma_validate(d, &cdma)) || (rc = csc_validate(d, &csc, &cdma)) ||
        (rc = dla_cmac_validate(d, "CMAC_A", &cmac_a, &csc)) ||
        (rc = dla_cmac_validate(d, "CMAC_B", &cmac_b, &csc)) ||
        (rc = dla_cacc_validate(d, &cacc, &csc)) || (rc = dla_cbuf_validate(d, &cdma)) ||
        (rc = check_host_limits(d, &csc, &cdma)) ||
        (rc = dla_cbuf_plan(d, s, &cdma, &data_use, &weight_use))) {
        return rc;
    }

    /* the slices CSC reads must be in CBUF: kept ones and/or fetched ones */
    uint64_t held = data_use == DLA_CBUF_FRESH ? 0 : s->data.n;
    uint64_t fetched = data_use == DLA_CBUF_REUSE ? 0 : (uint64_t)cdma.height * cdma.batches;
    uint64_t needed = (uint64_t)csc.height * csc.batches;
    if (held + fetched < needed) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CSC: D_DATAIN_SIZE_EXT_0_0.DATAIN_HEIGHT_EXT=%u needs %llu slices but "
                         "CBUF will hold %llu (%llu kept, %llu fetched by CDMA)",
                         csc.height - 1, (unsigned long long)needed,
                         (unsigned long long)(held + fetched), (unsigned long long)held,
                         (unsigned long long)fetched);
    }
    uint32_t slice_w = cdma.fmt == DLA_CONV_IN_PIXEL ? cdma.entries * cfg->cbuf_bank_width
                                                     : cdma.width;
    uint32_t slice_c = cdma.fmt == DLA_CONV_IN_PIXEL
                           ? 1
                           : cdma.channel * dla_conv_elem_bytes(cdma.proc_precision);
    if ((rc = dla_cbuf_begin_data(d, s, data_use, &cdma, slice_w, slice_c))) {
        return rc;
    }

    /* CDMA: weights, then data (both land in CBUF) */
    /* CSC reads `lag` entries left in the weight ring by the previous
     * layer before this layer's stream (cbuf.c, the weight ring) */
    const uint32_t lag = weight_use == DLA_CBUF_FRESH ? dla_cbuf_weight_lag(s, &cdma) : 0;
    const size_t lag_bytes = (size_t)lag * cfg->cbuf_bank_width;
    if (weight_use == DLA_CBUF_FRESH) {
        s->wt_len = 0;
        s->wt_fetches++;
        rc = dla_conv_scratch(d, (void **)&s->wt, &s->wt_cap, lag_bytes + cdma.weight_bytes);
        if (!rc && lag_bytes) {
            memcpy(s->wt, s->wt_tail, lag_bytes);
        }
        /* the stream is the memory's bytes only without a lag (its first
         * bytes are then the previous layer's) */
        const uint64_t gen = lag_bytes ? 0 : dla_dma_generation(d, cdma.weight_port);
        s->wt_origin.gen = 0;
        /* a stream that is the memory's bytes alone is copied only if CSC
         * needs its bytes (the packed-kernel cache usually proves them
         * unchanged by their origin) */
        const int defer = !rc && gen != 0 && dla_cdma_defer_weights(d, &cdma);
        if (!rc && !defer) {
            rc = dla_cdma_fetch_weights(d, &cdma, s->wt + lag_bytes);
        }
        if (!rc) {
            s->wt_len = lag_bytes + cdma.weight_bytes;
            s->wt_origin = (struct dla_wt_origin){cdma.weight_port, cdma.weight_addr,
                                                  cdma.weight_bytes, gen};
            s->wt_deferred = defer;
        }
    }
    const int wt_fetched = weight_use == DLA_CBUF_FRESH;
    const uint32_t atomic_k = dla_conv_kernels_per_group(cfg, csc.proc_precision);
    struct wt_tail tail = {NULL, 0};
    if (!rc && s->wt_deferred && !csc.skip_weight_rls) {
        tail.bytes = (size_t)dla_cbuf_weight_ring_left(s, &csc, &cdma, lag, wt_fetched,
                                                       cfg->cbuf_bank_width, atomic_k) *
                     cfg->cbuf_bank_width;
        wt_tail_lend(d, s, &tail);
    }
    s->fetch_by_rows = dw_fetch_by_rows(d, &csc);
    if (!rc && data_use != DLA_CBUF_REUSE) {
        rc = cdma.fmt == DLA_CONV_IN_PIXEL         ? dla_cdma_fetch_image(d, &cdma, &s->data)
             : dla_conv_int16(cdma.proc_precision) ? dla_cdma_fetch_feature16(d, &cdma, &s->data)
             : fetch_atoms(cfg, &cdma, &csc, data_use)
                 ? dla_cdma_fetch_feature_atoms(d, &cdma, &s->data)
                 : dla_cdma_fetch_feature(d, &cdma, &s->data);
    }

    /* CSC + CMAC + CACC, batch by batch with the same kernels (ref: cmod/csc
     * SendDataToMacSequencerDirectConvCommon: each atomic operation of a
     * stripe runs for every batch with the weights it holds) */
    if (!rc) {
        rc = cacc_cube(d, s, &csc, to_sdp);
    }
    if (!rc && dla_conv_int16(csc.proc_precision)) {
        rc = compute_int16(d, s, &csc, &cacc, to_sdp, &sat);
    }
    for (uint32_t b = 0; b < csc.batches && !rc && !dla_conv_int16(csc.proc_precision); b++) {
        rc = csc.fmt == DLA_CONV_IN_PIXEL
                 ? (csc.y_extension ? build_pixel_input_post_ext(d, s, &csc, &job)
                                    : build_pixel_input(d, s, &csc, &job))
                 : (build_feature_input(s, &csc, b, &job, &fcopy), 0);
        if (!rc && b == 0) {
            rc = build_weights(d, s, &csc, &job);
        }
        if (!rc && s->data.atoms_h != 0 && !dw_reads_in_place(&job) &&
            (!reads_in_place(&job) || !dla_conv_src_atoms_takes(&job.g, &job.src))) {
            /* a path that reads slices (a depthwise block, deep sums) */
            rc = dla_cdma_atoms_to_planar(d, &s->data);
            if (!rc) {
                build_feature_input(s, &csc, b, &job, &fcopy);
            }
        }
        if (!rc && job.copy != NULL && !reads_in_place(&job) && !dw_reads_in_place(&job)) {
            rc = dw_copies_in_items(d, &job) ? feature_scratch(d, s, &job)
                                             : feature_planar(d, s, &job);
        }
        const uint32_t rows = rc || job.g.out_k != to_sdp->c
                                  ? 0
                                  : band_rows(&csc, &job, dla_team_threads(dla_dev_team(d)));
        if (rows) {
            rc = band_defer(d, s, &job, &cacc, &csc, &cdma, rows, to_sdp);
        } else if (!rc) {
            const size_t n = dla_cube_batch_elems(to_sdp);
            rc = compute(d, s, &job, &cacc, to_sdp->data + b * n, n, &sat);
        }
    }
    if (rc) {
        conv_abandon(to_sdp, s);
        return rc;
    }
    /* bytes CBUF keeps past the layer (all with SKIP_WEIGHT_RLS, or the
     * ring's tail) must be copied before anything writes memory again */
    if (s->wt_deferred) {
        rc = csc.skip_weight_rls ? wt_ready(d, s) : wt_tail_ready(d, s, &tail);
        if (rc) {
            conv_abandon(to_sdp, s);
            return rc;
        }
    }
    rc = dla_cbuf_weight_ring_end(s, &csc, &cdma, lag, wt_fetched, cfg->cbuf_bank_width,
                                  atomic_k);
    if (rc) {
        conv_abandon(to_sdp, s);
        return dla_error(d, rc, "CBUF: no memory for the weight ring");
    }
    dla_cacc_finish(d, group, sat);
    dla_cdma_finish(d, group);
    if (to_sdp->band == NULL) { /* else after the bands (dla_conv_band_end) */
        dla_cbuf_end_layer(s, &csc, &cdma);
    }
    return 0;
}

/* ---- summary (src/timing/summary.h) ------------------------------------------ */

/* Output pixels (x batches where the configuration has them), the kernel
 * as CSC runs it (kernels, channels, height, width) and the MACs. */
void dla_csc_summarize(const struct dla_dev *d, unsigned g, struct dla_layer_summary *s)
{
    uint64_t ow = DLA_REG_FIELD(d, g, NVDLA_CSC_D_DATAOUT_SIZE_0_0, DATAOUT_WIDTH) + 1ull;
    uint64_t oh = DLA_REG_FIELD(d, g, NVDLA_CSC_D_DATAOUT_SIZE_0_0, DATAOUT_HEIGHT) + 1ull;
    uint64_t batch = dla_cfg(d)->batch_enable
                         ? DLA_REG_FIELD(d, g, NVDLA_CSC_D_BATCH_NUMBER_0, BATCHES) + 1ull
                         : 1;
    s->conv.out_px = ow * oh * batch;
    s->conv.k = DLA_REG_FIELD(d, g, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0, WEIGHT_KERNEL) + 1ull;
    s->conv.c = DLA_REG_FIELD(d, g, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0, WEIGHT_CHANNEL_EXT) + 1ull;
    s->conv.r = DLA_REG_FIELD(d, g, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0, WEIGHT_HEIGHT_EXT) + 1ull;
    s->conv.s = DLA_REG_FIELD(d, g, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0, WEIGHT_WIDTH_EXT) + 1ull;
    s->conv.macs = s->conv.out_px * s->conv.k * s->conv.c * s->conv.r * s->conv.s;
    s->conv.out_w = ow;
    s->conv.out_h = oh;
    s->conv.batches = batch;
    s->conv.stride_x = DLA_REG_FIELD(d, g, NVDLA_CSC_D_CONV_STRIDE_EXT_0, CONV_X_STRIDE_EXT) + 1ull;
    s->conv.stride_y = DLA_REG_FIELD(d, g, NVDLA_CSC_D_CONV_STRIDE_EXT_0, CONV_Y_STRIDE_EXT) + 1ull;
    s->conv.dil_x = DLA_REG_FIELD(d, g, NVDLA_CSC_D_DILATION_EXT_0, X_DILATION_EXT) + 1ull;
    s->conv.dil_y = DLA_REG_FIELD(d, g, NVDLA_CSC_D_DILATION_EXT_0, Y_DILATION_EXT) + 1ull;
    s->conv.data_banks = DLA_REG_FIELD(d, g, NVDLA_CSC_D_BANK_0, DATA_BANK) + 1ull;
    s->conv.int16 = DLA_REG_FIELD(d, g, NVDLA_CSC_D_MISC_CFG_0, PROC_PRECISION) ==
                    NVDLA_CSC_D_MISC_CFG_0_PROC_PRECISION_INT16;
}
