/*
 * CDMA — convolution DMA: feature / pixel / weight fetch into CBUF.
 *
 * CSB window 0x3000-0x3fff (NVDLA_CDMA_*).  GLB interrupt bits CDMA_DAT_DONE
 * and CDMA_WT_DONE (raised by the device core).  Memory ports: DBB (MCIF) or
 * CVIF per D_DAIN_RAM_TYPE / D_WEIGHT_RAM_TYPE.
 *
 * Modelled:
 *   - feature fetch for direct convolution: surfaces of Atomic-M elements,
 *     element (c, y, x) of batch b at
 *       base + b * BATCH_STRIDE + (c / M) * SURF_STRIDE + y * LINE_STRIDE + x * M + c % M,
 *     read whole lines (or whole surfaces when lines are packed) and turned
 *     into CBUF rows by a byte transpose (src/arith/atoms.h); a 1x1
 *     cube with SURF_PACKED is read as consecutive atoms (ref: vmod
 *     NV_NVDLA_CDMA_dc.v is_packed_1x1);
 *   - batches (D_BATCH_NUMBER, where the configuration has
 *     NVDLA_BATCH_ENABLE, up to NVDLA_MAX_BATCH_SIZE): batch b is read from
 *     D_DAIN_ADDR + b * D_BATCH_STRIDE with the same line/surface strides;
 *     in CBUF the batches of a line are adjacent, line y of batch b is
 *     slice y * BATCHES + b (ref: vmod NV_NVDLA_CDMA_dc.v req_addr_batch_base,
 *     idx_batch_offset; cmod/cdma DirectConvDataRequest/ResponseSequencerCommon);
 *   - the input converter (D_CVT_CFG) on feature data and pixels:
 *     y = sat8(round_half_away((x - offset) * scale / 2^truncate)), where
 *     offset is D_CVT_OFFSET, or the per-channel mean (D_MEAN_GLOBAL_*) for
 *     pixels when D_MEAN_FORMAT is enabled
 *     (ref: cmod/hls/cdma_libs/cdma_cvt.cpp NV_NVDLA_CDMA_CVT_cell: 17-bit
 *     input, 18-bit subtract, 34-bit product, AC_RND_INF shift, saturation);
 *   - pixel input (D_DATAIN_FORMAT = PIXEL) in every format the
 *     configuration's ConfigROM lists (CDMA IMAGE_IN_FORMATS_PACKED/SEMI,
 *     built from the configuration's parameters by src/sim/nvdla/cfgrom.c); other
 *     PIXEL_FORMAT values are refused (DLASIM_ERR_PROG).  For the int8
 *     configurations that is R8, the A8B8G8R8 family, A8Y8U8V8/V8U8Y8A8,
 *     the 10-bit A2B10G10R10/A2R10G10B10/B10G10R10A2/R10G10B10A2 and the
 *     semi-planar Y8___U8V8 / Y8___V8U8.  A format is described by its
 *     bytes per pixel per plane, component width and component order (the
 *     name, most significant component first); elements are stored in
 *     R,G,B,A (Y,U,V,A) order (ref: vmod NV_NVDLA_CDMA_IMG_sg.v reorder,
 *     cmod/cdma ImageConvDataResponseSequencerCommon).  An int8-only build
 *     (no INT16/FP16 feature type) does not unpack 10-bit components: its
 *     format decode (vmod NV_NVDLA_CDMA_IMG_ctrl.v, 10-bit cases under
 *     #ifndef NVDLA_FEATURE_DATA_TYPE_INT8) falls back to 4 bytes per
 *     pixel, byte order unchanged, int8 precision, so the four bytes of the
 *     32-bit word are the four elements in memory order, converted (or not)
 *     byte by byte like A8B8G8R8; each byte mixes bits of two fields (the
 *     2-bit alpha shares byte 3, or byte 0 for the *A2 formats).  The C
 *     model unpacks them instead (cmod/cdma: component << 6 as an unsigned
 *     16-bit input), as a build with INT16 would; in a configuration with
 *     INT16/FP16 feature data they are refused as unsupported.
 *     The left and right padding (D_ZERO_PADDING, PAD_VALUE) is inserted
 *     by CDMA after conversion; PIXEL_X_OFFSET skips pixels at the start of
 *     each line; each CBUF line holds ENTRY_PER_SLICE entries
 *     (ref: cmod/cdma ImageConvDataResponseSequencerCommon);
 *   - weight fetch: the raw byte stream of D_WEIGHT_BYTES bytes, in the
 *     order CSC consumes it (ref: cmod/cdma DirectConvWeightResponseSequencerCommon).
 *
 * Modelling choices / deviations:
 *   - the bytes past the last pixel of a CBUF line (up to the atom boundary)
 *     are produced as the C model does (converted fetched bytes, then
 *     zeros); the RTL may fill them differently, they only matter for
 *     layers whose kernels read past the padded line;
 *   - the means: element k of a pixel uses MEAN_RY/GU/BV/AX[k].  The RTL
 *     picks the mean by byte lane (vmod NV_NVDLA_CDMA_IMG_pack.v mn_ch1_4:
 *     RY on every lane when DATAIN_CHANNEL is 1, else lane % 4; mn_ch3 for
 *     semi-planar), which is the same whenever DATAIN_CHANNEL equals the
 *     format's elements per pixel, as drivers program it;
 *   - INT16 feature data (PROC_PRECISION = IN_PRECISION = INT16, where the
 *     configuration has INT16): surfaces of M-byte atoms of M/2 channels,
 *     16-bit converter output (dla_cdma_fetch_feature16);
 *   - pixel formats read as 16-bit elements, INT16 pixel input, fp16,
 *     precision conversion, Winograd and weight compression are refused (DLASIM_ERR_PROG where
 *     the configuration lacks the feature, DLASIM_ERR_UNSUPPORTED where it
 *     has it); pixel input with batches is refused (the image path has no
 *     batch dimension);
 *   - NaN/Inf counters are 0 (integer data); perf counters are not modelled.
 */
#include <stdlib.h>
#include <string.h>

#include "arith/atoms.h"
#include "common/team.h"
#include "sim/core/mem.h"
#include "sim/nvdla/cbuf.h"

/* ---- decode ------------------------------------------------------------- */

/* The decode reads CDMA's registers of group g from one array up to the
 * last one it needs (dla_unit_values). */
#define CDMA_WORDS (DLA_REG_WORD(NVDLA_CDMA_D_BANK_0) + 1u)
#define CDMA_F(r, REG, FIELD)                                                              \
    DLA_FIELD(DLA_REG_AT(r, NVDLA_CDMA_##REG##_0), NVDLA_CDMA_##REG##_0_##FIELD)

void dla_cdma_decode(const struct dla_dev *d, unsigned g, struct dla_cdma_cfg *c)
{
    uint32_t r[CDMA_WORDS];
    dla_unit_values(d, NVDLA_UNIT_CDMA, g, r, CDMA_WORDS);
    memset(c, 0, sizeof(*c));
    c->conv_mode = CDMA_F(r, D_MISC_CFG, CONV_MODE);
    c->in_precision = CDMA_F(r, D_MISC_CFG, IN_PRECISION);
    c->proc_precision = CDMA_F(r, D_MISC_CFG, PROC_PRECISION);
    c->data_reuse = (int)CDMA_F(r, D_MISC_CFG, DATA_REUSE);
    c->weight_reuse = (int)CDMA_F(r, D_MISC_CFG, WEIGHT_REUSE);
    c->skip_data_rls = (int)CDMA_F(r, D_MISC_CFG, SKIP_DATA_RLS);
    c->skip_weight_rls = (int)CDMA_F(r, D_MISC_CFG, SKIP_WEIGHT_RLS);

    c->fmt = CDMA_F(r, D_DATAIN_FORMAT, DATAIN_FORMAT) ==
                     NVDLA_CDMA_D_DATAIN_FORMAT_0_DATAIN_FORMAT_PIXEL
                 ? DLA_CONV_IN_PIXEL
                 : DLA_CONV_IN_FEATURE;
    c->pixel_format = CDMA_F(r, D_DATAIN_FORMAT, PIXEL_FORMAT);
    c->pixel_mapping = CDMA_F(r, D_DATAIN_FORMAT, PIXEL_MAPPING);
    c->pixel_signed = (int)CDMA_F(r, D_DATAIN_FORMAT, PIXEL_SIGN_OVERRIDE);

    c->width = CDMA_F(r, D_DATAIN_SIZE_0, DATAIN_WIDTH) + 1;
    c->height = CDMA_F(r, D_DATAIN_SIZE_0, DATAIN_HEIGHT) + 1;
    c->channel = CDMA_F(r, D_DATAIN_SIZE_1, DATAIN_CHANNEL) + 1;
    c->width_ext = CDMA_F(r, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT) + 1;
    c->height_ext = CDMA_F(r, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT) + 1;
    c->pixel_x_offset = CDMA_F(r, D_PIXEL_OFFSET, PIXEL_X_OFFSET);
    c->pixel_y_offset = CDMA_F(r, D_PIXEL_OFFSET, PIXEL_Y_OFFSET);

    c->dain_port = dla_ram_port(CDMA_F(r, D_DAIN_RAM_TYPE, DATAIN_RAM_TYPE));
    c->dain_addr[0] = dla_addr(DLA_REG_AT(r, NVDLA_CDMA_D_DAIN_ADDR_HIGH_0_0),
                               DLA_REG_AT(r, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0));
    c->dain_addr[1] = dla_addr(DLA_REG_AT(r, NVDLA_CDMA_D_DAIN_ADDR_HIGH_1_0),
                               DLA_REG_AT(r, NVDLA_CDMA_D_DAIN_ADDR_LOW_1_0));
    c->line_stride = CDMA_F(r, D_LINE_STRIDE, LINE_STRIDE);
    c->uv_line_stride = CDMA_F(r, D_LINE_UV_STRIDE, UV_LINE_STRIDE);
    c->surf_stride = CDMA_F(r, D_SURF_STRIDE, SURF_STRIDE);
    c->line_packed = (int)CDMA_F(r, D_DAIN_MAP, LINE_PACKED);
    c->surf_packed = (int)CDMA_F(r, D_DAIN_MAP, SURF_PACKED);
    c->batches = CDMA_F(r, D_BATCH_NUMBER, BATCHES) + 1;
    c->batch_stride = CDMA_F(r, D_BATCH_STRIDE, BATCH_STRIDE);
    c->entries = CDMA_F(r, D_ENTRY_PER_SLICE, ENTRIES) + 1;
    c->grains = CDMA_F(r, D_FETCH_GRAIN, GRAINS) + 1;

    c->weight_compressed = CDMA_F(r, D_WEIGHT_FORMAT, WEIGHT_FORMAT) ==
                           NVDLA_CDMA_D_WEIGHT_FORMAT_0_WEIGHT_FORMAT_COMPRESSED;
    c->byte_per_kernel = CDMA_F(r, D_WEIGHT_SIZE_0, BYTE_PER_KERNEL) + 1;
    c->weight_kernel = CDMA_F(r, D_WEIGHT_SIZE_1, WEIGHT_KERNEL) + 1;
    c->weight_port = dla_ram_port(CDMA_F(r, D_WEIGHT_RAM_TYPE, WEIGHT_RAM_TYPE));
    c->weight_addr = dla_addr(DLA_REG_AT(r, NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0),
                              DLA_REG_AT(r, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0));
    c->weight_bytes = CDMA_F(r, D_WEIGHT_BYTES, WEIGHT_BYTES);

    c->mean_en = CDMA_F(r, D_MEAN_FORMAT, MEAN_FORMAT) ==
                 NVDLA_CDMA_D_MEAN_FORMAT_0_MEAN_FORMAT_ENABLE;
    c->mean[0] = dla_sext(CDMA_F(r, D_MEAN_GLOBAL_0, MEAN_RY), 16);
    c->mean[1] = dla_sext(CDMA_F(r, D_MEAN_GLOBAL_0, MEAN_GU), 16);
    c->mean[2] = dla_sext(CDMA_F(r, D_MEAN_GLOBAL_1, MEAN_BV), 16);
    c->mean[3] = dla_sext(CDMA_F(r, D_MEAN_GLOBAL_1, MEAN_AX), 16);
    c->cvt_en = CDMA_F(r, D_CVT_CFG, CVT_EN) == NVDLA_CDMA_D_CVT_CFG_0_CVT_EN_ENABLE;
    c->cvt_truncate = CDMA_F(r, D_CVT_CFG, CVT_TRUNCATE);
    c->cvt_offset = dla_sext(CDMA_F(r, D_CVT_OFFSET, CVT_OFFSET), 16);
    c->cvt_scale = dla_sext(CDMA_F(r, D_CVT_SCALE, CVT_SCALE), 16);

    c->stride_x = CDMA_F(r, D_CONV_STRIDE, CONV_X_STRIDE) + 1;
    c->stride_y = CDMA_F(r, D_CONV_STRIDE, CONV_Y_STRIDE) + 1;
    c->pad_left = CDMA_F(r, D_ZERO_PADDING, PAD_LEFT);
    c->pad_right = CDMA_F(r, D_ZERO_PADDING, PAD_RIGHT);
    c->pad_top = CDMA_F(r, D_ZERO_PADDING, PAD_TOP);
    c->pad_bottom = CDMA_F(r, D_ZERO_PADDING, PAD_BOTTOM);
    c->pad_value = CDMA_F(r, D_ZERO_PADDING_VALUE, PAD_VALUE);
    c->data_bank = CDMA_F(r, D_BANK, DATA_BANK) + 1;
    c->weight_bank = CDMA_F(r, D_BANK, WEIGHT_BANK) + 1;
}

/* ---- pixel formats ------------------------------------------------------- */

/*
 * A pixel format as memory holds it (ref: spec 004 "Supported packed /
 * semi-planar image formats"; cmod/cdma cdma_bytes_per_pixel*).  `layout`
 * names the components from the most significant bit of the little-endian
 * pixel word, as the format's name does: A8B8G8R8 is "ABGR" with R in byte
 * 0.  A semi-planar format has a one-byte Y plane and a UV plane whose
 * two-byte word `layout` names ("UV": V in byte 0).  comp_bits is the width
 * of a colour component in memory.
 */
struct pixel_fmt {
    uint32_t id;
    const char *name;
    uint8_t bpp0, bpp1;        /* bytes per pixel in planar 0 / planar 1 */
    uint8_t comp_bits;         /* 8, or 10 for the A2/10-bit packed formats */
    const char *layout;
};

#define PF(ID, B0, B1, BITS, LAYOUT)                                                          \
    { NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_##ID, #ID, B0, B1, BITS, LAYOUT }

static const struct pixel_fmt pixel_fmts[] = {
    PF(T_R8, 1, 0, 8, "R"),
    PF(T_A8B8G8R8, 4, 0, 8, "ABGR"),
    PF(T_X8B8G8R8, 4, 0, 8, "XBGR"),
    PF(T_A8R8G8B8, 4, 0, 8, "ARGB"),
    PF(T_X8R8G8B8, 4, 0, 8, "XRGB"),
    PF(T_B8G8R8A8, 4, 0, 8, "BGRA"),
    PF(T_B8G8R8X8, 4, 0, 8, "BGRX"),
    PF(T_R8G8B8A8, 4, 0, 8, "RGBA"),
    PF(T_R8G8B8X8, 4, 0, 8, "RGBX"),
    PF(T_A8Y8U8V8, 4, 0, 8, "AYUV"),
    PF(T_V8U8Y8A8, 4, 0, 8, "VUYA"),
    PF(T_A2B10G10R10, 4, 0, 10, "ABGR"),
    PF(T_A2R10G10B10, 4, 0, 10, "ARGB"),
    PF(T_B10G10R10A2, 4, 0, 10, "BGRA"),
    PF(T_R10G10B10A2, 4, 0, 10, "RGBA"),
    PF(T_A2Y10U10V10, 4, 0, 10, "AYUV"),
    PF(T_V10U10Y10A2, 4, 0, 10, "VUYA"),
    PF(T_Y8___U8V8_N444, 1, 2, 8, "UV"),
    PF(T_Y8___V8U8_N444, 1, 2, 8, "VU"),
};

static const struct pixel_fmt *find_pixel_fmt(uint32_t id)
{
    for (size_t i = 0; i < sizeof(pixel_fmts) / sizeof(pixel_fmts[0]); i++) {
        if (pixel_fmts[i].id == id) {
            return &pixel_fmts[i];
        }
    }
    return NULL;
}

/* An int8-only data path: NVDLA built with NVDLA_FEATURE_DATA_TYPE_INT8
 * (spec/defs/projects.spec), i.e. no INT16/FP16 feature types. */
static int int8_only_build(const struct dla_config *cfg)
{
    return !(cfg->feature_data_type & (DLA_TYPE_INT16 | DLA_TYPE_FP16));
}

/* Byte of the pixel word (named MSB first by `layout`) holding `comp`, or
 * -1.  X stands in for A. */
static int component_byte(const char *layout, char comp)
{
    size_t n = strlen(layout);
    for (size_t i = 0; i < n; i++) {
        if (layout[i] == comp || (comp == 'A' && layout[i] == 'X')) {
            return (int)(n - 1 - i);
        }
    }
    return -1;
}

/*
 * Where each element CDMA writes to CBUF comes from: elements are stored
 * R,G,B,A (Y,U,V,A), element e is byte src[e] of the pixel (planar 0 bytes,
 * then planar 1 bytes).  ref: vmod NV_NVDLA_CDMA_IMG_sg.v pixel reorder
 * (rsp_img_data_sw_o*: the int8 build has "unchanged", ARGB, BGRA, RGBA and
 * UV byte orders), cmod/cdma ImageConvDataResponseSequencerCommon.
 *
 * Components wider than a byte are not unpacked by an int8-only build: its
 * format decode (vmod NV_NVDLA_CDMA_IMG_ctrl.v, the 10-bit cases are under
 * #ifndef NVDLA_FEATURE_DATA_TYPE_INT8) leaves them at the default -- 4
 * bytes per pixel, pixel order "unchanged", no 10-bit packing, int8
 * precision -- so the four bytes of the word are the four elements in
 * memory order and the input converter sees bytes, not 10-bit values (the
 * 2-bit alpha shares byte 3, or byte 0 for the *A2 formats, with 6 bits of
 * a colour component).
 */
struct pixel_map {
    const struct pixel_fmt *pf;
    unsigned elems;            /* elements per pixel in CBUF */
    uint8_t src[4];
};

static void pixel_map_of(const struct pixel_fmt *pf, struct pixel_map *pm)
{
    memset(pm, 0, sizeof(*pm));
    pm->pf = pf;
    if (pf->bpp1) {
        pm->elems = 3;
        pm->src[0] = 0;
        pm->src[1] = (uint8_t)(pf->bpp0 + component_byte(pf->layout, 'U'));
        pm->src[2] = (uint8_t)(pf->bpp0 + component_byte(pf->layout, 'V'));
        return;
    }
    pm->elems = pf->bpp0;
    const char *order = strchr(pf->layout, 'Y') ? "YUVA" : "RGBA";
    for (unsigned e = 0; e < pm->elems; e++) {
        pm->src[e] = (uint8_t)(pf->comp_bits > 8 ? (int)e : component_byte(pf->layout, order[e]));
    }
}

/*
 * Is the format one the configuration's ConfigROM lists (CDMA
 * IMAGE_IN_FORMATS_PACKED / _SEMI: bit i = PIXEL_FORMAT i, semi-planar bit
 * i = PIXEL_FORMAT T_Y8___U8V8_N444 + i; spec 004)?  The ROM is built from
 * the configuration's parameters (src/sim/nvdla/cfgrom.c) and its CDMA
 * descriptor found by unit id.
 */
#define CFGROM_UNIT_CDMA 0x3u      /* spec 004 "Sub-unit identifier table" */
#define CFGROM_WORD(REG)                                                                      \
    ((NVDLA_CFGROM_CFGROM_CDMA_##REG##_0 - NVDLA_CFGROM_CFGROM_CDMA_DESC_0) / 4u)

static int rom_lists_format(const struct dla_config *cfg, uint32_t id)
{
    uint32_t rom[DLA_CFGROM_WORDS];
    dla_cfgrom_build(cfg, rom);
    for (unsigned i = 1; i < DLA_CFGROM_WORDS;) {
        uint32_t unit = rom[i] & 0xffffu, len = rom[i] >> 16;
        if (unit == 0) {
            break; /* end of the descriptor list */
        }
        if (unit == CFGROM_UNIT_CDMA) {
            const unsigned first_semi = NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_T_Y8___U8V8_N444;
            unsigned at = i + (id >= first_semi ? CFGROM_WORD(IMAGE_IN_FORMATS_SEMI)
                                                : CFGROM_WORD(IMAGE_IN_FORMATS_PACKED));
            unsigned bit = id >= first_semi ? id - first_semi : id;
            return at < DLA_CFGROM_WORDS && bit < 32 && ((rom[at] >> bit) & 1u);
        }
        i += 1 + (len + 3) / 4;
    }
    return 0;
}

/* ---- the input converter -------------------------------------------------- */

/* round-half-away-from-zero of v / 2^t (AC_RND_INF), |v| < 2^40 */
static int64_t shift_round_away(int64_t v, unsigned t)
{
    if (t == 0) {
        return v;
    }
    if (t > 41) {
        return 0;
    }
    uint64_t mag = v < 0 ? (uint64_t)(-v) : (uint64_t)v;
    uint64_t r = (mag + ((uint64_t)1 << (t - 1))) >> t;
    return v < 0 ? -(int64_t)r : (int64_t)r;
}

/* ref: cmod/hls/cdma_libs/cdma_cvt.cpp NV_NVDLA_CDMA_CVT_cell, int8 output */
static int8_t cvt_int8(int32_t x, int32_t offset, int32_t scale, unsigned truncate)
{
    int64_t v = shift_round_away(((int64_t)x - offset) * scale, truncate);
    return (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
}

/* Converter output for the 256 input bytes: input read as signed or unsigned. */
static void cvt_table(int8_t lut[256], int is_signed, int32_t offset, int32_t scale,
                      unsigned truncate)
{
    for (int b = 0; b < 256; b++) {
        int32_t x = is_signed ? (int32_t)(int8_t)(uint8_t)b : b;
        lut[b] = cvt_int8(x, offset, scale, truncate);
    }
}

/* Identity: the byte is stored as is. */
static void raw_table(int8_t lut[256])
{
    for (int b = 0; b < 256; b++) {
        lut[b] = (int8_t)(uint8_t)b;
    }
}

/* ---- validation ---------------------------------------------------------- */

static uint32_t type_bit(uint32_t precision)
{
    switch (precision) {
    case NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION_INT8:
        return DLA_TYPE_INT8;
    case NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION_INT16:
        return DLA_TYPE_INT16;
    case NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION_FP16:
        return DLA_TYPE_FP16;
    default:
        return 0;
    }
}

static int check_precision(struct dla_dev *d, const char *field, uint32_t v, uint32_t types)
{
    uint32_t bit = type_bit(v);
    if (!bit || !(types & bit)) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_MISC_CFG_0.%s=%u is not a data type of the %s configuration",
                         field, v, dla_cfg(d)->name);
    }
    if (bit == DLA_TYPE_FP16) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CDMA: D_MISC_CFG_0.%s=%u: FP16 convolution is not modelled", field, v);
    }
    return 0;
}

static int check_align(struct dla_dev *d, const char *what, uint64_t v, uint32_t align)
{
    if (align && v % align) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: %s=0x%llx is not a multiple of the %u-byte memory atom", what,
                         (unsigned long long)v, align);
    }
    return 0;
}

static int validate_feature(struct dla_dev *d, const struct dla_cdma_cfg *c)
{
    const struct dla_config *cfg = dla_cfg(d);
    uint32_t m = cfg->memory_atomic_size;
    int rc;
    if ((rc = check_align(d, "D_DAIN_ADDR_LOW_0_0", c->dain_addr[0], m)) ||
        (rc = check_align(d, "D_LINE_STRIDE_0", c->line_stride, m)) ||
        (rc = check_align(d, "D_SURF_STRIDE_0", c->surf_stride, m))) {
        return rc;
    }
    if (c->batches > 1 && (rc = check_align(d, "D_BATCH_STRIDE_0", c->batch_stride, m))) {
        return rc;
    }
    return 0;
}

static int validate_pixel(struct dla_dev *d, const struct dla_cdma_cfg *c)
{
    const struct dla_config *cfg = dla_cfg(d);
    uint32_t m = cfg->memory_atomic_size;
    const struct pixel_fmt *pf = find_pixel_fmt(c->pixel_format);
    int rc;
    if (!rom_lists_format(cfg, c->pixel_format)) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_DATAIN_FORMAT_0.PIXEL_FORMAT=%u (%s) is not a pixel format the "
                         "%s configuration's ConfigROM lists (CDMA IMAGE_IN_FORMATS_PACKED/SEMI)",
                         c->pixel_format, pf ? pf->name : "16-bit, float or reserved", cfg->name);
    }
    if (!pf || (pf->comp_bits > 8 && !int8_only_build(cfg))) {
        /* a build with INT16 unpacks these into 16-bit elements (IN_PRECISION INT16) */
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CDMA: D_DATAIN_FORMAT_0.PIXEL_FORMAT=%u: pixel formats read as 16-bit "
                         "elements are not modelled",
                         c->pixel_format);
    }
    if (c->pixel_mapping != NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_MAPPING_PITCH_LINEAR) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_DATAIN_FORMAT_0.PIXEL_MAPPING=%u: only PITCH_LINEAR exists",
                         c->pixel_mapping);
    }
    if (c->in_precision != NVDLA_CDMA_D_MISC_CFG_0_IN_PRECISION_INT8) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_MISC_CFG_0.IN_PRECISION=%u does not match the int8 "
                         "precision of pixel format %s",
                         c->in_precision, pf->name);
    }
    /* ref: vmod IMG_sg "Pixel height offset is not zero", IMG_ctrl "Pixel X
     * offset is out of range" (offset within the first atom of planar 0) */
    if (c->pixel_y_offset != 0) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_PIXEL_OFFSET_0.PIXEL_Y_OFFSET=%u must be 0", c->pixel_y_offset);
    }
    if (c->pixel_x_offset >= m / pf->bpp0) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_PIXEL_OFFSET_0.PIXEL_X_OFFSET=%u exceeds %u for %s (offset "
                         "must lie in the first %u-byte atom)",
                         c->pixel_x_offset, m / pf->bpp0 - 1, pf->name, m);
    }
    if ((uint64_t)(c->pixel_x_offset + c->width) * pf->bpp0 > c->line_stride) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_LINE_STRIDE_0=%u is smaller than a line of %u pixels of %s "
                         "(%llu bytes)",
                         c->line_stride, c->pixel_x_offset + c->width, pf->name,
                         (unsigned long long)(c->pixel_x_offset + c->width) * pf->bpp0);
    }
    if ((rc = check_align(d, "D_DAIN_ADDR_LOW_0_0", c->dain_addr[0], m))) {
        return rc;
    }
    if (pf->bpp1) {
        uint64_t p1 = (uint64_t)(c->pixel_x_offset * pf->bpp1) % m + (uint64_t)c->width * pf->bpp1;
        if (p1 > c->uv_line_stride) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "CDMA: D_LINE_UV_STRIDE_0=%u is smaller than a UV line of %s "
                             "(%llu bytes)",
                             c->uv_line_stride, pf->name, (unsigned long long)p1);
        }
        if ((rc = check_align(d, "D_DAIN_ADDR_LOW_1_0", c->dain_addr[1], m))) {
            return rc;
        }
    }
    if (c->batches != 1) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_BATCH_NUMBER_0.BATCHES=%u: pixel input has no batches",
                         c->batches - 1);
    }
    return 0;
}

int dla_cdma_validate(struct dla_dev *d, const struct dla_cdma_cfg *c)
{
    const struct dla_config *cfg = dla_cfg(d);
    int rc;
    if (c->conv_mode != NVDLA_CDMA_D_MISC_CFG_0_CONV_MODE_DIRECT) {
        return dla_error(d, cfg->winograd_enable ? DLASIM_ERR_UNSUPPORTED : DLASIM_ERR_PROG,
                         "CDMA: D_MISC_CFG_0.CONV_MODE=WINOGRAD: %s",
                         cfg->winograd_enable ? "Winograd convolution is not modelled"
                                              : "the configuration has no Winograd");
    }
    if ((rc = check_precision(d, "IN_PRECISION", c->in_precision, cfg->feature_data_type)) ||
        (rc = check_precision(d, "PROC_PRECISION", c->proc_precision, cfg->feature_data_type))) {
        return rc;
    }
    /* ref: vmod CDMA_cvt "cvt mode is not enable when format change" */
    if (c->in_precision != c->proc_precision && !c->cvt_en) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_MISC_CFG_0.IN_PRECISION=%u differs from PROC_PRECISION=%u but "
                         "D_CVT_CFG_0.CVT_EN=0",
                         c->in_precision, c->proc_precision);
    }
    if (c->in_precision != c->proc_precision) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CDMA: D_MISC_CFG_0.IN_PRECISION=%u converted to PROC_PRECISION=%u: "
                         "precision conversion is not modelled",
                         c->in_precision, c->proc_precision);
    }
    if (dla_conv_int16(c->proc_precision) && c->fmt == DLA_CONV_IN_PIXEL) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CDMA: D_MISC_CFG_0.PROC_PRECISION=INT16 with pixel input is not "
                         "modelled");
    }
    if (c->weight_compressed) {
        return dla_error(d, cfg->weight_compression_enable ? DLASIM_ERR_UNSUPPORTED
                                                           : DLASIM_ERR_PROG,
                         "CDMA: D_WEIGHT_FORMAT_0.WEIGHT_FORMAT=COMPRESSED: %s",
                         cfg->weight_compression_enable
                             ? "compressed weights are not modelled"
                             : "the configuration has no weight compression");
    }
    if (c->batches > 1 && (!cfg->batch_enable || c->batches > cfg->max_batch_size)) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_BATCH_NUMBER_0.BATCHES=%u exceeds the %u batch(es) of the %s "
                         "configuration",
                         c->batches - 1, cfg->batch_enable ? cfg->max_batch_size : 1, cfg->name);
    }
    if (c->weight_bytes == 0) {
        return dla_error(d, DLASIM_ERR_PROG, "CDMA: D_WEIGHT_BYTES_0.WEIGHT_BYTES=0");
    }
    if ((rc = check_align(d, "D_WEIGHT_ADDR_LOW_0", c->weight_addr, cfg->memory_atomic_size))) {
        return rc;
    }
    rc = c->fmt == DLA_CONV_IN_PIXEL ? validate_pixel(d, c) : validate_feature(d, c);
    if (rc) {
        return rc;
    }
    /* feature slices must match exactly (ref: cmod/cdma
     * DirectConvDataResponseSequencerCommon); a pixel line may be given
     * more entries than it fills (CDMA and CSC both step by ENTRIES) */
    uint32_t need = dla_cdma_entries_needed(cfg, c);
    if (c->fmt == DLA_CONV_IN_PIXEL ? c->entries < need : c->entries != need) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDMA: D_ENTRY_PER_SLICE_0.ENTRIES=%u but a %s slice of %ux%u occupies "
                         "%u CBUF entries (ENTRIES=%u)",
                         c->entries - 1, c->fmt == DLA_CONV_IN_PIXEL ? "pixel" : "feature",
                         c->width, c->channel, need, need - 1);
    }
    return 0;
}

/* ---- CBUF entries of one slice ------------------------------------------- */

uint32_t dla_cdma_entries_needed(const struct dla_config *cfg, const struct dla_cdma_cfg *c)
{
    uint32_t m = cfg->memory_atomic_size;
    uint32_t bw = cfg->cbuf_bank_width;
    if (c->fmt == DLA_CONV_IN_PIXEL) {
        /* ref: cmod/cdma ImageConvDataResponseSequencerCommon: a padded,
         * converted line rounded up to the atom, written in whole entries */
        const struct pixel_fmt *pf = find_pixel_fmt(c->pixel_format);
        struct pixel_map pm = { NULL, 1, { 0, 0, 0, 0 } };
        if (pf) {
            pixel_map_of(pf, &pm);
        }
        uint64_t bytes = (uint64_t)(c->pad_left + c->width + c->pad_right) * pm.elems;
        bytes = (bytes + m - 1) / m * m;
        return (uint32_t)((bytes + bw - 1) / bw);
    }
    /* ref: cmod/cdma DirectConvDataResponseSequencerCommon: whole entries
     * per x for full groups of atoms; the remaining atoms of 2 or 4 x
     * positions share one entry */
    uint32_t apc = bw / m ? bw / m : 1;
    /* atoms of m bytes: m int8 or m/2 int16 channels (nv_full cmod/csc
     * atom_per_channel = ceil(channel * element_size / ATOM_CUBE_SIZE)) */
    uint32_t e = m / dla_conv_elem_bytes(c->proc_precision);
    uint32_t atoms = (c->channel + e - 1) / e;
    uint32_t w = c->width;
    uint32_t entries = atoms / apc * w;
    uint32_t crip = atoms % apc;
    if (crip > apc / 2) {
        entries += w;
    } else if (crip > apc / 4) {
        entries += (w + 1) / 2;
    } else if (crip) {
        entries += (w + 3) / 4;
    }
    return entries;
}

/* ---- feature fetch -------------------------------------------------------- */

/* The input converter on n rows of w bytes (a table of the 256 inputs). */
static void convert_rows(const int8_t lut[256], int8_t *rows, size_t stride, uint32_t n,
                         uint32_t w)
{
    for (uint32_t i = 0; i < n; i++) {
        int8_t *row = rows + i * stride;
        for (uint32_t x = 0; x < w; x++) {
            row[x] = lut[(uint8_t)row[x]];
        }
    }
}

/* Where one fetched surface lands: surface s of batch b, n channels of it,
 * in h lines of w atoms at buf; first is the first CBUF slice of the cube. */
struct surface_put {
    void (*put)(const struct surface_put *sp, const uint8_t *buf, int8_t *first, uint32_t b,
                uint32_t s, uint32_t n);
    const struct dla_cdma_cfg *c;
    uint32_t m, per_atom; /* atom bytes, channels an atom holds */
    size_t line_bytes, slice_bytes;
    enum dla_lanes_isa isa;
    const int8_t *lut;    /* INT8 input converter table, NULL when off */
};

/* Surface bytes at base (h lines of line_bytes, line_stride apart): in
 * place when they are one burst the memory can lend (dla_dma_view, the
 * same traffic), else read into the conv state's fetch buffer. */
static const uint8_t *read_surface(struct dla_dev *d, const struct surface_put *sp,
                                   uint64_t base, int *rc)
{
    const struct dla_cdma_cfg *c = sp->c;
    const size_t bytes = sp->line_bytes * c->height;
    /* one burst, as dla_dma_read_lines makes of contiguous lines */
    if (c->height == 1 || c->line_stride == sp->line_bytes) {
        const uint8_t *v = dla_dma_view(d, c->dain_port, base, bytes);
        if (v) {
            return v;
        }
    }
    struct dla_conv_state *st = dla_dev_conv_state(d);
    *rc = dla_conv_scratch(d, (void **)&st->fetch, &st->fetch_cap, bytes ? bytes : 1);
    if (!*rc) {
        *rc = dla_dma_read_lines(d, c->dain_port, UINT64_MAX, base, c->line_stride, c->height,
                                 sp->line_bytes, st->fetch);
    }
    return *rc ? NULL : st->fetch;
}

static int put_int8_lent(struct dla_dev *d, const struct surface_put *sp, uint64_t base,
                         int8_t *first, uint32_t b, uint32_t s, uint32_t n);

/* Where surface s of batch b starts (see the layout below). */
static uint64_t surface_base(const struct dla_cdma_cfg *c, uint32_t b, uint32_t s,
                             uint64_t surf_stride)
{
    return c->dain_addr[0] + (uint64_t)b * c->batch_stride + s * surf_stride;
}

/*
 * Feature data in memory: surfaces of m-byte atoms of per_atom channels,
 * element (c, y, x) of batch b at base + b * BATCH_STRIDE + (c / per_atom) *
 * SURF_STRIDE + y * LINE_STRIDE + x * m.  Each surface is read whole, then
 * placed by sp->put.  ref: vmod/nvdla/cdma/NV_NVDLA_CDMA_dc.v is_packed_1x1:
 * a 1x1 cube with SURF_PACKED is fetched as consecutive atoms.
 */
static int fetch_surfaces(struct dla_dev *d, struct dla_cbuf_slices *dst,
                          const struct surface_put *sp)
{
    const struct dla_cdma_cfg *c = sp->c;
    const uint32_t w = c->width, h = c->height, ch = c->channel, nb = c->batches;
    uint64_t surf_stride = c->surf_packed && w == 1 && h == 1 ? sp->m : c->surf_stride;
    int8_t *first = dla_cbuf_append(d, dst, h * nb);
    if (!first) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = 0;
    for (uint32_t b = 0; b < nb && !rc; b++) {
        for (uint32_t s = 0; s * sp->per_atom < ch && !rc; s++) {
            uint64_t base = surface_base(c, b, s, surf_stride);
            uint32_t left = ch - s * sp->per_atom;
            const uint32_t n = left < sp->per_atom ? left : sp->per_atom;
            rc = put_int8_lent(d, sp, base, first, b, s, n);
            if (rc) {
                rc = rc < 0 ? rc : 0;
                continue;
            }
            const uint8_t *buf = read_surface(d, sp, base, &rc);
            if (!rc) {
                sp->put(sp, buf, first, b, s, n);
            }
        }
    }
    return rc;
}

/* INT8: n channels of line y of a surface (its atoms at `line`)
 * transposed into channel rows of w bytes. */
static void put_int8_line(const struct surface_put *sp, const uint8_t *line, int8_t *first,
                          uint32_t b, uint32_t s, uint32_t n, uint32_t y)
{
    const uint32_t w = sp->c->width, nb = sp->c->batches;
    int8_t *rows = first + (size_t)(y * nb + b) * sp->slice_bytes + (size_t)s * sp->m * w;
    dla_transpose_bytes(sp->isa, line, sp->m, w, n, (uint8_t *)rows, w);
    if (sp->lut) {
        convert_rows(sp->lut, rows, w, n, w);
    }
}

/* INT8: lines y0 .. y1 - 1 of n channels of a surface (line y0's atoms at
 * buf, the others after it) transposed into channel rows of w bytes: all
 * in one call (short lines share tiles, dla_transpose_lines), or line by
 * line when converted (each line converted while in L1) or one line alone. */
static void put_int8_rows(const struct surface_put *sp, const uint8_t *buf, int8_t *first,
                          uint32_t b, uint32_t s, uint32_t n, uint32_t y0, uint32_t y1)
{
    const uint32_t w = sp->c->width, nb = sp->c->batches;
    if (sp->lut || y1 - y0 == 1) {
        for (uint32_t y = y0; y < y1; y++) {
            put_int8_line(sp, buf + (size_t)(y - y0) * sp->line_bytes, first, b, s, n, y);
        }
        return;
    }
    int8_t *rows = first + (size_t)(y0 * nb + b) * sp->slice_bytes + (size_t)s * sp->m * w;
    dla_transpose_lines(sp->isa, buf, sp->m, w, n, (uint8_t *)rows, w, y1 - y0, sp->line_bytes,
                        nb * sp->slice_bytes);
}

/* INT8: n channels of a surface transposed into channel rows of w bytes. */
static void put_int8(const struct surface_put *sp, const uint8_t *buf, int8_t *first, uint32_t b,
                     uint32_t s, uint32_t n)
{
    put_int8_rows(sp, buf, first, b, s, n, 0, sp->c->height);
}

/* Pages of a surface placed from the memory's own bytes at most (a larger
 * one is read into the fetch buffer). */
#define LENT_PAGES 64

/* A line of at most this many bytes across pages is put together on the
 * stack of a team's worker (a longer one: the cube is read). */
#define LENT_LINE_MAX 4096u

/* Whether the INT8 surface at base can be placed from the memory's pages:
 * contiguous lines (one burst, as read_surface reads them), at most
 * max_pages pages. */
static int lendable_shape(const struct surface_put *sp, uint64_t base, size_t max_pages)
{
    const struct dla_cdma_cfg *c = sp->c;
    const size_t bytes = sp->line_bytes * c->height, P = DLA_MEM_PAGE_BYTES;
    return sp->put == put_int8 && (c->height == 1 || c->line_stride == sp->line_bytes) &&
           bytes != 0 && (base + bytes - 1) / P - base / P < max_pages;
}

/* The pages of the surface at base lent by the memory (dla_dma_lend, no
 * traffic): page[i] the first byte of its i-th page; 0 when one cannot be. */
static int lend_surface(const struct dla_dev *d, const struct surface_put *sp, uint64_t base,
                        const uint8_t **page)
{
    const uint64_t P = DLA_MEM_PAGE_BYTES, end = base + sp->line_bytes * sp->c->height;
    for (uint64_t a = base; a < end; a = (a / P + 1) * P) {
        const uint64_t next = (a / P + 1) * P;
        const uint8_t *v = dla_dma_lend(d, sp->c->dain_port, a, (size_t)((next < end ? next : end) - a));
        if (!v) {
            return 0;
        }
        page[a / P - base / P] = v - a % P;
    }
    return 1;
}

/* put_int8 of lines [y0, h) of the lent surface at base (its pages:
 * lend_surface): the lines that lie inside one page in one call from the
 * page (lines back to back share work, dla_transpose_lines), a line across
 * pages put together in linebuf (line_bytes) first. */
static void put_int8_pages(const struct surface_put *sp, const uint8_t *const *page, uint64_t base,
                           uint8_t *linebuf, int8_t *first, uint32_t b, uint32_t s, uint32_t n,
                           uint32_t y0, uint32_t h)
{
    const uint64_t P = DLA_MEM_PAGE_BYTES, p0 = base / P, lb = sp->line_bytes;
    for (uint32_t y = y0; y < h;) {
        const uint64_t a = base + (uint64_t)y * lb, last = a + lb - 1;
        if (a / P == last / P) { /* the lines that end in this page: in place */
            const uint64_t fit = ((a / P + 1) * P - a) / lb;
            const uint32_t z = fit < h - y ? y + (uint32_t)fit : h;
            put_int8_rows(sp, page[a / P - p0] + a % P, first, b, s, n, y, z);
            y = z;
            continue;
        }
        for (uint64_t x = a; x <= last; x = (x / P + 1) * P) { /* across pages */
            const uint64_t e = (x / P + 1) * P - 1 < last ? (x / P + 1) * P - 1 : last;
            memcpy(linebuf + (x - a), page[x / P - p0] + x % P, (size_t)(e - x + 1));
        }
        put_int8_rows(sp, linebuf, first, b, s, n, y, y + 1);
        y++;
    }
}

/*
 * put_int8 of the contiguous INT8 surface at base straight from the
 * memory's pages (no copy of the surface), with the traffic of the one
 * burst read_surface reads: 1 when done, 0 when a page cannot be lent
 * (nothing done; then read_surface's way), or an error of the line buffer.
 */
static int put_int8_lent(struct dla_dev *d, const struct surface_put *sp, uint64_t base,
                         int8_t *first, uint32_t b, uint32_t s, uint32_t n)
{
    const uint8_t *page[LENT_PAGES];
    const size_t bytes = sp->line_bytes * sp->c->height, P = DLA_MEM_PAGE_BYTES;
    if (!lendable_shape(sp, base, LENT_PAGES) || !lend_surface(d, sp, base, page)) {
        return 0;
    }
    struct dla_conv_state *st = dla_dev_conv_state(d);
    if (base / P != (base + bytes - 1) / P) { /* a line may cross pages: room for one */
        int rc = dla_conv_scratch(d, (void **)&st->fetch, &st->fetch_cap, sp->line_bytes);
        if (rc) {
            return rc;
        }
    }
    dla_dma_count_read(d, bytes);
    put_int8_pages(sp, page, base, st->fetch, first, b, s, n, 0, sp->c->height);
    return 1;
}

/* An INT8 feature cube read whole (surface k of batch b at buf + (b * nsurf
 * + k) * surf_bytes), placed into CBUF by the device's team, a surface an
 * item. */
struct int8_cube {
    const struct surface_put *sp;
    const uint8_t *buf;
    int8_t *first;
    uint32_t nsurf;
    size_t surf_bytes;
};

static void put_int8_item(void *ctx, size_t i)
{
    const struct int8_cube *q = ctx;
    uint32_t b = (uint32_t)(i / q->nsurf), s = (uint32_t)(i % q->nsurf);
    uint32_t left = q->sp->c->channel - s * q->sp->per_atom;
    put_int8(q->sp, q->buf + i * q->surf_bytes, q->first, b, s,
             left < q->sp->per_atom ? left : q->sp->per_atom);
}

/* An INT8 feature cube placed by the team from the memory's pages: each
 * surface's pages (lend_surface) at pages + i * per; a surface in `parts`
 * items of `lines` lines each (the last one shorter). */
struct lent_cube {
    const struct surface_put *sp;
    const uint8_t *const *pages;
    size_t per;
    int8_t *first;
    uint32_t nsurf;
    uint64_t surf_stride;
    uint32_t parts, lines;
};

/* Item k: lines of surface k / parts (each line's rows are its own). */
static void put_lent_item(void *ctx, size_t k)
{
    const struct lent_cube *q = ctx;
    const size_t i = k / q->parts;
    const uint32_t b = (uint32_t)(i / q->nsurf), s = (uint32_t)(i % q->nsurf);
    const uint32_t left = q->sp->c->channel - s * q->sp->per_atom;
    const uint32_t y0 = (uint32_t)(k % q->parts) * q->lines, h = q->sp->c->height;
    uint8_t linebuf[LENT_LINE_MAX];
    put_int8_pages(q->sp, q->pages + i * q->per, surface_base(q->sp->c, b, s, q->surf_stride),
                   linebuf, q->first, b, s, left < q->sp->per_atom ? left : q->sp->per_atom, y0,
                   h - y0 < q->lines ? h : y0 + q->lines);
}

/* Bytes of surfaces a team item transposes, about (dla_team_units_per_item:
 * small surfaces a few to an item). */
#define FETCH_ITEM_BYTES 8192u
/* Least bytes of a part of a surface split over the team (lent_cube_put):
 * MobileNetV2's 112x112x8 depthwise inputs (100 KB) took 4-6 us on one
 * thread (rdtsc, 2 threads, a block's worker alone while the host waited). */
#define FETCH_SPLIT_BYTES 16384u

/* The cube placed on the team from the memory's pages when every surface
 * can be lent (the traffic of its reads, counted at once): 1 when done, 0
 * when not (nothing done), or an error of the page table's buffer. */
static int lent_cube_put(struct dla_dev *d, const struct surface_put *sp, int8_t *first,
                         uint32_t nsurf, uint64_t surf_stride)
{
    const struct dla_cdma_cfg *c = sp->c;
    const size_t bytes = sp->line_bytes * c->height, per = bytes / DLA_MEM_PAGE_BYTES + 2;
    const size_t n = (size_t)nsurf * c->batches;
    struct dla_conv_state *st = dla_dev_conv_state(d);
    if (sp->line_bytes > LENT_LINE_MAX || !lendable_shape(sp, c->dain_addr[0], per)) {
        return 0;
    }
    int rc = dla_conv_scratch(d, (void **)&st->fetch, &st->fetch_cap, n * per * sizeof(void *));
    if (rc) {
        return rc;
    }
    const uint8_t **pages = (const uint8_t **)(void *)st->fetch;
    for (size_t i = 0; i < n; i++) {
        const uint64_t base = surface_base(c, (uint32_t)(i / nsurf), (uint32_t)(i % nsurf), surf_stride);
        if (!lendable_shape(sp, base, per) || !lend_surface(d, sp, base, pages + i * per)) {
            return 0;
        }
    }
    dla_dma_count_read(d, bytes * n);
    struct lent_cube q = {sp, pages, per, first, nsurf, surf_stride, 1, c->height};
    struct dla_team *team = dla_dev_team(d);
    const size_t threads = dla_team_threads(team);
    if (n < threads && bytes >= 2 * FETCH_SPLIT_BYTES) {
        /* fewer surfaces than threads (a depthwise block's one): each in
         * parts of lines, FETCH_SPLIT_BYTES or more, a few a thread */
        size_t parts = bytes / FETCH_SPLIT_BYTES, most = 4 * threads / n;
        parts = parts < most ? parts : most;
        q.lines = (uint32_t)((c->height + parts - 1) / parts);
        q.parts = (c->height + q.lines - 1) / q.lines;
        if (st->fetch_by_rows) {
            dla_team_run_local(team, n * q.parts, put_lent_item, &q); /* (csc.c dw_fetch_by_rows) */
        } else {
            dla_team_run(team, n * q.parts, put_lent_item, &q);
        }
        return 1;
    }
    dla_team_run_grouped(team, n, dla_team_units_per_item(team, n, bytes, FETCH_ITEM_BYTES),
                         put_lent_item, &q);
    return 1;
}

/* Surfaces of at least this many bytes in all are transposed on the team
 * (smaller ones cost less than waking it).  65536 before: MobileNetV2's
 * 7x7x960 inputs (47 KB, 120 surfaces) took 4-10 us on one thread while
 * the worker waited; at 32 KB, alternated over eight argument lengths,
 * 3.102 -> 3.020 and 3.058 -> 3.032 ms an image (8/8, 5/8), ResNet-18
 * unchanged (3.932 / 3.921). */
#define FETCH_TEAM_BYTES 32768u

/* fetch_surfaces for INT8 on the team: the surfaces are read in the same
 * order and bursts (same traffic; a failed read stops at the same
 * surface, after the ones before it are placed), then transposed in
 * parallel into their own CBUF rows. */
static int fetch_surfaces_int8(struct dla_dev *d, struct dla_cbuf_slices *dst,
                               const struct surface_put *sp)
{
    const struct dla_cdma_cfg *c = sp->c;
    const uint32_t h = c->height, nb = c->batches;
    const uint32_t nsurf = (c->channel + sp->per_atom - 1) / sp->per_atom;
    const size_t surf_bytes = sp->line_bytes * h;
    const size_t total = surf_bytes * nsurf * nb;
    struct dla_conv_state *st = dla_dev_conv_state(d);
    struct dla_team *team = dla_dev_team(d);
    if (team == NULL || total < FETCH_TEAM_BYTES || (nsurf && total / nsurf / nb != surf_bytes)) {
        return fetch_surfaces(d, dst, sp);
    }
    uint64_t surf_stride = c->surf_packed && c->width == 1 && h == 1 ? sp->m : c->surf_stride;
    int8_t *first = dla_cbuf_append(d, dst, h * nb);
    if (!first) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = lent_cube_put(d, sp, first, nsurf, surf_stride);
    if (rc) {
        return rc < 0 ? rc : 0;
    }
    rc = dla_conv_scratch(d, (void **)&st->fetch, &st->fetch_cap, total);
    size_t done = 0; /* surfaces read */
    for (uint32_t b = 0; b < nb && !rc; b++) {
        for (uint32_t s = 0; s < nsurf && !rc; s++, done++) {
            uint64_t base = surface_base(c, b, s, surf_stride);
            rc = dla_dma_read_lines(d, c->dain_port, UINT64_MAX, base, c->line_stride, h,
                                    sp->line_bytes, st->fetch + done * surf_bytes);
        }
    }
    if (rc && done) {
        done--; /* the failed surface is not placed */
    }
    struct int8_cube q = {sp, st->fetch, first, nsurf, surf_bytes};
    dla_team_run_grouped(team, done, dla_team_units_per_item(team, done, surf_bytes,
                                                              FETCH_ITEM_BYTES),
                         put_int8_item, &q);
    return rc;
}

int dla_cdma_fetch_feature(struct dla_dev *d, const struct dla_cdma_cfg *c,
                           struct dla_cbuf_slices *dst)
{
    const uint32_t m = dla_cfg(d)->memory_atomic_size;
    int8_t lut[256];
    if (c->cvt_en) {
        cvt_table(lut, 1, c->cvt_offset, c->cvt_scale, c->cvt_truncate);
    }
    const struct surface_put sp = {
        .put = put_int8, .c = c, .m = m, .per_atom = m, .line_bytes = (size_t)c->width * m,
        .slice_bytes = dla_cbuf_slice_bytes(dst), .isa = dla_lanes_best(),
        .lut = c->cvt_en ? lut : NULL,
    };
    return fetch_surfaces_int8(d, dst, &sp);
}

/* The surfaces of an atoms fetch copied by the device's team from the
 * memory's pages (lend_surface: surface k's at pages + k * per), each
 * surface's bytes to first + k * surf_bytes. */
struct atoms_copy {
    const uint8_t *const *pages;
    size_t per, surf_bytes;
    uint64_t surf_stride, base0;
    int8_t *first;
};

static void atoms_copy_item(void *ctx, size_t k)
{
    const struct atoms_copy *q = ctx;
    const uint64_t P = DLA_MEM_PAGE_BYTES, base = q->base0 + k * q->surf_stride;
    const uint8_t *const *page = q->pages + k * q->per;
    int8_t *to = q->first + k * q->surf_bytes;
    for (size_t done = 0; done < q->surf_bytes;) {
        const uint64_t a = base + done, room = (a / P + 1) * P - a;
        const size_t n = room < q->surf_bytes - done ? (size_t)room : q->surf_bytes - done;
        memcpy(to + done, page[a / P - base / P] + a % P, n);
        done += n;
    }
}

/* dla_cdma_fetch_feature_atoms on the team when every surface is one
 * burst the memory can lend (the same traffic, counted at once; a surface
 * the memory cannot lend, and so could not read, leaves it to the reads
 * surface by surface, which fail where they fail): each thread copies the
 * surfaces of its home share (common/team.h), the channels its core packs
 * for the kernel next.  1 when done, 0 when not (nothing done), or an
 * error of the page table's buffer. */
static int atoms_fetch_lent(struct dla_dev *d, const struct dla_cdma_cfg *c, int8_t *first,
                            uint32_t nsurf)
{
    const struct surface_put sp = {.put = put_int8, .c = c, .m = 8, .per_atom = 8,
                                   .line_bytes = (size_t)c->width * 8, .slice_bytes = 0,
                                   .isa = DLA_LANES_GENERIC, .lut = NULL};
    const size_t surf_bytes = sp.line_bytes * c->height;
    const size_t per = surf_bytes / DLA_MEM_PAGE_BYTES + 2;
    struct dla_team *team = dla_dev_team(d);
    if (team == NULL || surf_bytes * nsurf < FETCH_TEAM_BYTES) {
        return 0;
    }
    struct dla_conv_state *st = dla_dev_conv_state(d);
    int rc = dla_conv_scratch(d, (void **)&st->fetch, &st->fetch_cap,
                              nsurf * per * sizeof(void *));
    if (rc) {
        return rc;
    }
    const uint8_t **pages = (const uint8_t **)(void *)st->fetch;
    for (uint32_t k = 0; k < nsurf; k++) {
        const uint64_t base = surface_base(c, 0, k, c->surf_stride);
        if (!lendable_shape(&sp, base, per) || !lend_surface(d, &sp, base, pages + k * per)) {
            return 0;
        }
    }
    dla_dma_count_read(d, surf_bytes * nsurf);
    struct atoms_copy q = {pages, per, surf_bytes, c->surf_stride,
                           surface_base(c, 0, 0, c->surf_stride), first};
    dla_team_run_grouped(team, nsurf,
                         dla_team_units_per_item(team, nsurf, surf_bytes, FETCH_ITEM_BYTES),
                         atoms_copy_item, &q);
    return 1;
}

/* Bytes a view of the atoms reaches past the cube's last byte: the cell
 * packing's vector reads near its end, as CBUF's guard (DLA_CBUF_GUARD)
 * allows them in its buffer (the tiles' reads are masked). */
#define ATOMS_VIEW_TAIL 64u

/*
 * The cube read in place instead of copied to CBUF (struct dla_cbuf_slices
 * atoms_view): when the memory keeps it, and ATOMS_VIEW_TAIL bytes after
 * it, as one range of the host's memory (dla_dma_lend_span: the pages of
 * a 2 MiB region follow each other there), every read of it cannot fail,
 * and the layer's output writes none of it (dla_sdp_writes_apart: so the
 * bytes the kernel reads are those a fetch at the layer's start copies,
 * also where SDP writes a band of rows while the kernel reads the next).
 * The fetch's traffic is counted as a copy's.  Issue 18: "no copies
 * through the memory port where a view will do"; ResNet-50 copied 10.6 MB
 * an image (~0.9 ms of 13.4, rdtsc).
 */
static int atoms_view(struct dla_dev *d, const struct dla_cdma_cfg *c, uint32_t nsurf,
                      struct dla_cbuf_slices *dst)
{
    const uint64_t base = surface_base(c, 0, 0, c->surf_stride);
    const uint64_t line = (uint64_t)c->width * 8;
    if (nsurf == 0 || c->height == 0) {
        return 0;
    }
    const uint64_t span = (uint64_t)(nsurf - 1) * c->surf_stride +
                          (uint64_t)(c->height - 1) * c->line_stride + line;
    if (span > UINT64_MAX - base - ATOMS_VIEW_TAIL) {
        return 0;
    }
    const uint8_t *v = dla_dma_lend_span(d, c->dain_port, base, span + ATOMS_VIEW_TAIL);
    if (v == NULL || !dla_sdp_writes_apart(d, dla_dev_exec_group(d)[NVDLA_UNIT_SDP],
                                           c->dain_port, base, base + span)) {
        return 0;
    }
    dla_dma_count_read(d, line * c->height * nsurf);
    dst->atoms_view = (const int8_t *)v;
    dst->view_surf = c->surf_stride;
    dst->view_line = c->line_stride;
    return 1;
}

/*
 * The feature cube kept as the memory's atoms: each surface's h lines of w
 * atoms read as fetch_surfaces reads them (the same bursts, traffic and
 * failures, surface by surface) into CBUF, surface after surface.  A 1x1
 * layer's kernel packs its cells from these (kernels/conv_s8.h
 * dla_conv_src.atoms): an atom already holds a pixel's channels side by
 * side, so the transposition to channel rows and the one back to cells
 * are both skipped.
 */
int dla_cdma_fetch_feature_atoms(struct dla_dev *d, const struct dla_cdma_cfg *c,
                                 struct dla_cbuf_slices *dst)
{
    const uint32_t w = c->width, h = c->height;
    int8_t *first = dla_cbuf_append(d, dst, h);
    if (!first) {
        return DLASIM_ERR_NOMEM;
    }
    dst->atoms_h = h;
    dst->atoms_view = NULL;
    const size_t line = (size_t)w * 8;
    const uint32_t nsurf = (c->channel + 7) / 8;
    if (atoms_view(d, c, nsurf, dst)) {
        return 0;
    }
    int rc = atoms_fetch_lent(d, c, first, nsurf);
    if (rc) {
        return rc < 0 ? rc : 0;
    }
    for (uint32_t k = 0; k < nsurf && !rc; k++) {
        rc = dla_dma_read_lines(d, c->dain_port, UINT64_MAX, surface_base(c, 0, k, c->surf_stride),
                                c->line_stride, h, line, first + (size_t)k * h * line);
    }
    return rc;
}

int dla_cdma_atoms_to_planar(struct dla_dev *d, struct dla_cbuf_slices *s)
{
    const size_t w = s->w, h = s->atoms_h, line = w * 8, bytes = h * (size_t)s->c * w;
    struct dla_conv_state *st = dla_dev_conv_state(d);
    int rc = dla_conv_scratch(d, (void **)&st->fetch, &st->fetch_cap, bytes ? bytes : 1);
    if (rc) {
        return rc;
    }
    if (s->atoms_view != NULL) { /* the lines where the memory keeps them */
        for (size_t k = 0; k * 8 < s->c; k++) {
            for (size_t y = 0; y < h; y++) {
                memcpy(st->fetch + (k * h + y) * line,
                       s->atoms_view + k * s->view_surf + y * s->view_line, line);
            }
        }
        s->atoms_view = NULL;
    } else {
        memcpy(st->fetch, s->buf, bytes);
    }
    for (size_t k = 0; k * 8 < s->c; k++) { /* surface k's lines to its rows of every slice */
        dla_transpose_lines(dla_lanes_best(), st->fetch + k * h * line, 8, w, 8,
                            (uint8_t *)s->buf + k * 8 * w, w, h, line, (size_t)s->c * w);
    }
    s->atoms_h = 0;
    return 0;
}

/* ref: cmod/hls/cdma_libs/cdma_cvt.cpp NV_NVDLA_CDMA_CVT_cell, int16 output
 * (17-bit result saturated to 16 bits) */
static int16_t cvt_int16(int32_t x, int32_t offset, int32_t scale, unsigned truncate)
{
    int64_t v = shift_round_away(((int64_t)x - offset) * scale, truncate);
    return (int16_t)(v > INT16_MAX ? INT16_MAX : (v < INT16_MIN ? INT16_MIN : v));
}

/* Element k of atom x of a fetched line of INT16 atoms (little endian). */
static int16_t line_elem16(const uint8_t *line, uint32_t m, uint32_t x, uint32_t k)
{
    const uint8_t *p = line + (size_t)x * m + 2u * k;
    return (int16_t)(uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

/* INT16: n channels of a surface into channel rows of w 16-bit elements,
 * converted by D_CVT_CFG if enabled. */
static void put_int16(const struct surface_put *sp, const uint8_t *buf, int8_t *first, uint32_t b,
                      uint32_t s, uint32_t n)
{
    const struct dla_cdma_cfg *c = sp->c;
    const uint32_t w = c->width, e = sp->per_atom;
    for (uint32_t y = 0; y < c->height; y++) {
        int8_t *slice = first + (size_t)(y * c->batches + b) * sp->slice_bytes;
        for (uint32_t k = 0; k < n; k++) {
            int8_t *row = slice + ((size_t)(s * e + k) * w) * 2u;
            for (uint32_t x = 0; x < w; x++) {
                int16_t v = line_elem16(buf + y * sp->line_bytes, sp->m, x, k);
                if (c->cvt_en) {
                    v = cvt_int16(v, c->cvt_offset, c->cvt_scale, c->cvt_truncate);
                }
                memcpy(row + 2u * x, &v, sizeof(v));
            }
        }
    }
}

/*
 * INT16 feature data: an atom holds e = m / 2 channels (NVDLA_MEMORY_ATOMIC_SIZE
 * bytes per atom whatever the precision; nv_full cmod/csc ELEMENT_PER_ATOM_INT16
 * 16 with 32-byte atoms), element (c, y, x) at (c % e) * 2 in its atom.
 */
int dla_cdma_fetch_feature16(struct dla_dev *d, const struct dla_cdma_cfg *c,
                             struct dla_cbuf_slices *dst)
{
    const uint32_t m = dla_cfg(d)->memory_atomic_size;
    const struct surface_put sp = {
        .put = put_int16, .c = c, .m = m, .per_atom = m / 2, .line_bytes = (size_t)c->width * m,
        .slice_bytes = dla_cbuf_slice_bytes(dst),
    };
    return fetch_surfaces(d, dst, &sp);
}

/* ---- pixel fetch ----------------------------------------------------------- */

/*
 * One CBUF line of pixel input: pad_left pixels of PAD_VALUE, the converted
 * pixels, pad_right pixels of PAD_VALUE, then tail pixels up to the end of
 * the last entry: their data and their mean are zeroed before the converter,
 * so each tail element is the converter's output for 0 with mean 0.
 * ref: vmod/nvdla/cdma/NV_NVDLA_CDMA_IMG_pack.v: data_width_mark_2 =
 * pad_left + (DATAIN_WIDTH-1) + 1 + pad_right is the padded line length;
 * data_planar{0,1}_p*_zero_mask covers every pixel position at or past it
 * in the planar atom where the count crosses it, and mask_zero clears both
 * the pixel bytes (pk_rsp_dat_mnorm) and the mean (mn_8b_mnorm).  So the
 * fetched pixel that follows the image (index width) never reaches CBUF.
 * The tail fills the line's last atom, its last pixel partly (byte 207 of
 * rg_imgst_f15_034 is the converter's output for 0).  Semi-planar lines
 * without right padding whose data end in the first planar-1 atom of their
 * last group: a tail pixel in the second one gets stale UV (stale_uv();
 * RTL-graded cases rg_imgst_*).  Only post-extension reads past the line
 * see the tail.
 */
struct img_line_ctx {
    struct pixel_map pm;       /* the format and where each element comes from */
    uint32_t w, pl, pr, x_off;
    uint32_t m;                /* NVDLA_MEMORY_ATOMIC_SIZE */
    uint32_t p1_off;           /* byte offset of the first pixel in planar 1 */
    size_t len0, len1;         /* fetched bytes of planar 0 / 1 */
    size_t line_bytes;         /* padded line rounded to the atom */
    size_t garbage_pixels;     /* tail pixels after the right padding */
    int8_t pad;                /* low byte of PAD_VALUE */
    int8_t lut[4][256];        /* converter per element, real pixels */
    int8_t lut_tail[4][256];   /* converter per element, pixels after the line */
};

/* Byte k of fetched pixel i; 0 past the image (IMG_pack zero mask, above). */
static uint8_t pixel_byte(const struct img_line_ctx *x, const uint8_t *p0, const uint8_t *p1,
                          uint32_t i, unsigned k)
{
    const struct pixel_fmt *pf = x->pm.pf;
    if (i >= x->w) {
        return 0;
    }
    if (k < pf->bpp0) {
        size_t at = (size_t)(x->x_off + i) * pf->bpp0 + k;
        return at < x->len0 ? p0[at] : 0;
    }
    size_t at = x->p1_off + (size_t)i * pf->bpp1 + (k - pf->bpp0);
    return at < x->len1 ? p1[at] : 0;
}

/*
 * Semi-planar, no right padding: the pack takes the planar-1 (UV) data of
 * a group of m padded pixels from two atoms, c0 (the first m / bpp1 pixels)
 * and c1, kept in registers (vmod NV_NVDLA_CDMA_IMG_pack.v
 * pk_rsp_planar1_c0_d1 / _c1_d1, with their zero masks mn_mask_uv_lo_d1 /
 * _hi_d1).  When the line's data end inside c0 of its last group
 * (pixel_early_end), c1 is not fetched and the register still holds the
 * previous group's c1 atom with its mask: a tail pixel at a c1 position
 * gets the UV of the pixel m positions before it, converted with its mean
 * like a real pixel.  1: that is the case for tail pixel p; *src: that pixel's
 * image index.  Not modelled: a line of a single group (padded length 3),
 * whose register holds an atom of an earlier line or layer (the tail pixel
 * keeps the zero-masked value; graded cases have 33 or more pixels).
 */
static int stale_uv(const struct img_line_ctx *x, size_t p, uint32_t m, uint32_t *src)
{
    const struct pixel_fmt *pf = x->pm.pf;
    const size_t len = (size_t)x->pl + x->w;
    if (!pf->bpp1 || x->pr || !m || p < len || p / m != (len - 1) / m) {
        return 0;
    }
    const size_t half = m / pf->bpp1; /* pixels of one planar-1 atom */
    if (len % m >= half || p % m < half || p < (size_t)m + x->pl) {
        return 0;
    }
    *src = (uint32_t)(p - m - x->pl);
    return 1;
}

static void build_img_line(const struct img_line_ctx *x, const uint8_t *p0, const uint8_t *p1,
                           int8_t *out, size_t out_bytes)
{
    const unsigned e = x->pm.elems;
    size_t limit = x->line_bytes < out_bytes ? x->line_bytes : out_bytes;
    size_t pixels = x->pl + x->w + x->pr + x->garbage_pixels;
    memset(out, 0, out_bytes);
    for (size_t p = 0; p < pixels && p * e < limit; p++) {
        uint32_t from = 0;
        const int stale = stale_uv(x, p, x->m, &from);
        for (unsigned k = 0; k < e && p * e + k < limit; k++) {
            int8_t v;
            if (p < x->pl || (p >= x->pl + x->w && p < x->pl + x->w + x->pr)) {
                v = x->pad;
            } else if (stale && x->pm.src[k] >= x->pm.pf->bpp0) {
                v = x->lut[k][pixel_byte(x, p0, p1, from, x->pm.src[k])];
            } else {
                uint32_t i = (uint32_t)(p - x->pl);
                uint8_t b = pixel_byte(x, p0, p1, i, x->pm.src[k]);
                v = i < x->w ? x->lut[k][b] : x->lut_tail[k][b];
            }
            out[p * e + k] = v;
        }
    }
}

int dla_cdma_fetch_image(struct dla_dev *d, const struct dla_cdma_cfg *c,
                         struct dla_cbuf_slices *dst)
{
    const uint32_t m = dla_cfg(d)->memory_atomic_size;
    struct img_line_ctx *x = calloc(1, sizeof(*x));
    uint8_t *p0 = NULL, *p1 = NULL;
    int rc = 0;
    if (!x) {
        return dla_error(d, DLASIM_ERR_NOMEM, "CDMA: no memory for pixel conversion");
    }
    pixel_map_of(find_pixel_fmt(c->pixel_format), &x->pm);
    const struct pixel_fmt *pf = x->pm.pf;
    x->w = c->width;
    x->pl = c->pad_left;
    x->pr = c->pad_right;
    x->x_off = c->pixel_x_offset;
    x->m = m;
    x->pad = (int8_t)(uint8_t)(c->pad_value & 0xff);
    x->len0 = ((size_t)(x->x_off + x->w) * pf->bpp0 + m - 1) / m * m;
    if (pf->bpp1) {
        x->p1_off = (x->x_off * pf->bpp1) % m;
        x->len1 = (x->p1_off + (size_t)x->w * pf->bpp1 + m - 1) / m * m;
    }
    x->line_bytes = ((size_t)(x->pl + x->w + x->pr) * x->pm.elems + m - 1) / m * m;
    /* the tail pixels fill the line's last atom, the last one partly */
    x->garbage_pixels = (m + x->pm.elems - 1) / x->pm.elems;
    for (unsigned k = 0; k < x->pm.elems; k++) {
        if (c->cvt_en) {
            int32_t off = c->mean_en ? c->mean[k] : c->cvt_offset;
            cvt_table(x->lut[k], c->pixel_signed, off, c->cvt_scale, c->cvt_truncate);
            cvt_table(x->lut_tail[k], c->pixel_signed, c->mean_en ? 0 : c->cvt_offset,
                      c->cvt_scale, c->cvt_truncate);
        } else {
            raw_table(x->lut[k]);
            raw_table(x->lut_tail[k]);
        }
    }
    p0 = malloc(x->len0);
    p1 = malloc(x->len1 ? x->len1 : 1);
    int8_t *first = (p0 && p1) ? dla_cbuf_append(d, dst, c->height) : NULL;
    if (!first) {
        rc = (p0 && p1) ? DLASIM_ERR_NOMEM
                        : dla_error(d, DLASIM_ERR_NOMEM, "CDMA: no memory for a pixel line");
    }
    const size_t slice_bytes = dla_cbuf_slice_bytes(dst);
    for (uint32_t y = 0; y < c->height && !rc; y++) {
        rc = dla_dma_read(d, c->dain_port, c->dain_addr[0] + (uint64_t)y * c->line_stride, p0,
                          x->len0);
        if (!rc && x->len1) {
            rc = dla_dma_read(d, c->dain_port, c->dain_addr[1] + (uint64_t)y * c->uv_line_stride,
                              p1, x->len1);
        }
        if (!rc) {
            build_img_line(x, p0, p1, first + (size_t)y * slice_bytes, slice_bytes);
        }
    }
    free(p0);
    free(p1);
    free(x);
    return rc;
}

/* ---- weights --------------------------------------------------------------- */

int dla_cdma_fetch_weights(struct dla_dev *d, const struct dla_cdma_cfg *c, uint8_t *dst)
{
    return dla_dma_read(d, c->weight_port, c->weight_addr, dst, c->weight_bytes);
}

int dla_cdma_defer_weights(struct dla_dev *d, const struct dla_cdma_cfg *c)
{
    if (dla_conv_int16(c->proc_precision) ||
        !dla_dma_can_read(d, c->weight_port, c->weight_addr, c->weight_bytes)) {
        return 0;
    }
    dla_dma_count_read(d, c->weight_bytes);
    return 1;
}

void dla_cdma_finish(struct dla_dev *d, unsigned group)
{
    /* integer data has no NaN/Inf (ref: cmod/cdma countNaNinData, FP16 only) */
    dla_reg_hw_set(d, NVDLA_CDMA_D_NAN_INPUT_DATA_NUM_0, group, 0);
    dla_reg_hw_set(d, NVDLA_CDMA_D_NAN_INPUT_WEIGHT_NUM_0, group, 0);
    dla_reg_hw_set(d, NVDLA_CDMA_D_INF_INPUT_DATA_NUM_0, group, 0);
    dla_reg_hw_set(d, NVDLA_CDMA_D_INF_INPUT_WEIGHT_NUM_0, group, 0);
}

/* ---- summary (src/timing/summary.h) ------------------------------------------ */

/* The weight bytes CDMA fetches (none when CBUF keeps them: WEIGHT_REUSE)
 * and the CBUF banks that hold weights. */
void dla_cdma_summarize(const struct dla_dev *d, unsigned g, struct dla_layer_summary *s)
{
    int reuse = DLA_REG_FIELD(d, g, NVDLA_CDMA_D_MISC_CFG_0, WEIGHT_REUSE) != 0;
    s->conv.weight_bytes =
        reuse ? 0 : DLA_REG_FIELD(d, g, NVDLA_CDMA_D_WEIGHT_BYTES_0, WEIGHT_BYTES);
    s->conv.weight_banks = DLA_REG_FIELD(d, g, NVDLA_CDMA_D_BANK_0, WEIGHT_BANK) + 1ull;
}
