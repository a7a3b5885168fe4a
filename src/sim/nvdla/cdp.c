/*
 * CDP — Channel Data Processor (local response normalization) with its
 * read DMA CDP_RDMA and its write DMA, bit-exact with NVDLA's RTL.
 *
 * CSB windows: CDP_RDMA 0xc000-0xcfff, CDP 0xd000-0xdfff (both dual-group).
 * Interrupt: GLB S_INTR_STATUS CDP_DONE_STATUS0/1 (raised by the device core
 * when this engine returns).  Memory ports: CDP_RDMA reads through DBB or
 * CVIF (D_SRC_DMA_CFG.SRC_RAM_TYPE), CDP writes through DBB or CVIF
 * (D_DST_DMA_CFG.DST_RAM_TYPE).
 *
 * What one layer computes, per pixel (x, y) and channel c:
 *   RDMA    the W x H x C cube is read as surfaces of one atom per
 *           pixel: element (c, y, x) at SRC_BASE + (c / E) * SRC_SURFACE_STRIDE
 *           + y * SRC_LINE_STRIDE + x * A + (c % E) * B, A = atom bytes
 *           (NVDLA_MEMORY_ATOMIC_SIZE), B = bytes per element, E = A / B
 *           elements per atom (ref: CDP_RDMA_ig.v; cmod NV_NVDLA_cdp.h).
 *   cvtin   v = sat9((in - DATIN_OFFSET[7:0]) * DATIN_SCALE >>r DATIN_SHIFTER),
 *           >>r = shift right rounding half away from zero; the lanes of the
 *           last surface beyond C are forced to 0 after the converter
 *           (ref: RDMA_eg.v invalid_flag, DP_cvtin.v, vlibs/HLS_cdp_icvt.v).
 *   sum     sum of v^2 over channels c-r..c+r (r = 1..4 from NORMALZ_LEN),
 *           zero outside the padded channel range (ref: DP_bufferin_tp1.v,
 *           DP_sum.v, int_sum_block_tp1.v); SQSUM_BYPASS feeds v instead.
 *   LUT     LE/LO lookup with interpolation and slope extrapolation
 *           (src/arith/cdp_lut.c).
 *   mul     lut * v (25 bits) unless MUL_BYPASS (ref: DP_mul.v).
 *   cvtout  sat8((y - DATOUT_OFFSET[24:0]) * DATOUT_SCALE >>r DATOUT_SHIFTER)
 *           (ref: DP_cvtout.v, vlibs/HLS_cdp_ocvt.v).
 *   WDMA    whole atoms (padding lanes included) at DST_BASE + s *
 *           DST_SURFACE_STRIDE + y * DST_LINE_STRIDE + x * A (ref: CDP_wdma.v).
 *
 * Hardware-updated registers at layer end (group executed):
 *   D_PERF_LUT_UFLOW/OFLOW/HYBRID/LE_HIT/LO_HIT count every element sent
 *   through the LUT (padding lanes included), saturating at 2^32-1, whatever
 *   D_PERF_ENABLE says (ref: DP_intp.v counters).  D_OUT_SATURATION and
 *   D_NAN_INPUT_NUM / D_INF_INPUT_NUM / D_NAN_OUTPUT_NUM read 0: the RTL ties
 *   them to zero (DP_dp.v, CDP_DP_nan.v, NV_NVDLA_cdp.v).  D_PERF_WRITE_STALL
 *   and CDP_RDMA D_PERF_READ_STALL are 0: modelled memory never stalls.
 *
 * Modelling choices / deviations:
 *   - Cube geometry comes from CDP_RDMA of the same group index as CDP.
 *   - INT8 follows the RTL exactly.  INT16 (no configuration here has it;
 *     the public RTL is INT8-only) follows NVDLA's C model widths: 17-bit
 *     cvtin, 38-bit LUT input, 7-bit index selects, 33-bit product, 16-bit
 *     cvtout with a 32-bit offset; an M-byte atom holds M/2 INT16 elements
 *     as in the C model (ELEMENT_PER_GROUP_INT16 = DLA_ATOM_SIZE / 2), which
 *     NVIDIA's nv_full INT16 CDP_L0_0 golden confirms on nv_large.
 *   - FP16 is not modelled: it would need the fp16->fp17 input conversion
 *     (no offset), fp17 square sums, the fp17 LUT path (HLS_CDP_lookup_fp16
 *     of the C model), NaN flush-to-zero and the NaN/Inf counters.
 *   - The RTL of every configuration ignores D_DATA_FORMAT; when a
 *     configuration lacks the programmed type the layer is processed as INT8
 *     and a guest error is logged.
 *   - D_NAN_FLUSH_TO_ZERO, D_CYA, *_COMPRESSION_EN, D_OPERATION_MODE and
 *     D_PERF_ENABLE do not change results.
 *   - Data are processed in bands of lines: all reads of a band precede its
 *     writes.
 */
#include "sim/core/budget.h"
#include "sim/nvdla/dla.h"

#include <stdlib.h>
#include <string.h>

#include "arith/cdp_lut.h"

/* Bytes of input kept on the host at a time (one band of lines). */
#define CDP_BAND_BYTES (4u << 20)
/* Largest window half-length (LEN9). */
#define CDP_MAX_RADIUS 4u

struct cdp_cfg {
    /* cube, from CDP_RDMA */
    uint32_t width, height, channel;   /* in elements */
    uint32_t surfaces;                 /* atoms along C */
    uint32_t atom_elems;               /* E: elements per atom */
    uint32_t elem_bytes;               /* 1 (INT8) or 2 (INT16) */
    uint32_t atom_bytes;               /* atom_elems * elem_bytes */
    uint64_t src_addr, src_line, src_surf;
    int src_port;
    /* output, from CDP */
    uint64_t dst_addr, dst_line, dst_surf;
    int dst_port;
    /* datapath */
    int int16;
    unsigned radius;                   /* window half-length */
    int sqsum_bypass, mul_bypass;
    int32_t in_offset, in_scale;
    unsigned in_shift, in_bits;
    int32_t cvt8[256];                 /* INT8 input converter, by input byte */
    int64_t out_offset;
    int32_t out_scale;
    unsigned out_shift, out_bits;
    struct cdp_lut lut;
};

/* Per-layer working state. */
struct cdp_run {
    uint8_t *in, *out;           /* one band: [surface][row][W * M] */
    int32_t *v;                  /* converted channels of one pixel, padded */
    int32_t *memo;               /* INT8 LUT input -> LUT result, or NULL */
    int64_t memo_lo;             /* LUT input of memo[0] */
    uint32_t memo_size;
    int64_t *sq;                 /* their squares, padded */
    uint64_t count[CDP_LUT_CLASS_COUNT];
};

static int64_t sext(uint32_t v, unsigned bits)
{
    return (int64_t)dla_sext(v, bits);
}

/* ---- register decode --------------------------------------------------- */

static int is_supported(const struct dla_config *hw, uint32_t fmt)
{
    switch (fmt) {
    case NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_INT8:
        return (hw->feature_data_type & DLA_TYPE_INT8) != 0;
    case NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_INT16:
        return (hw->feature_data_type & DLA_TYPE_INT16) != 0;
    case NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_FP16:
        return (hw->feature_data_type & DLA_TYPE_FP16) != 0;
    default:
        return 0;
    }
}

/* Precision of the layer from CDP and CDP_RDMA D_DATA_FORMAT. */
static int decode_precision(struct dla_dev *d, unsigned g, struct cdp_cfg *c)
{
    const struct dla_config *hw = dla_cfg(d);
    uint32_t dp = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATA_FORMAT_0, INPUT_DATA_TYPE);
    uint32_t rd = DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_DATA_FORMAT_0, INPUT_DATA);

    c->int16 = 0;
    if (dp == NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_INT8 &&
        rd == NVDLA_CDP_RDMA_D_DATA_FORMAT_0_INPUT_DATA_INT8) {
        return 0;
    }
    if (!is_supported(hw, dp) || !is_supported(hw, rd)) {
        /* the datapath is built for the configuration's type only and
         * ignores the format fields (ref: NV_NVDLA_cdp.v) */
        dla_log(d, DLASIM_LOG_GUEST_ERROR,
                "CDP: D_DATA_FORMAT_0.INPUT_DATA_TYPE=%u / CDP_RDMA D_DATA_FORMAT_0."
                "INPUT_DATA=%u not supported by %s; processed as INT8",
                (unsigned)dp, (unsigned)rd, hw->name);
        return 0;
    }
    if (dp != rd) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "CDP: D_DATA_FORMAT_0.INPUT_DATA_TYPE=%u differs from "
                         "CDP_RDMA D_DATA_FORMAT_0.INPUT_DATA=%u",
                         (unsigned)dp, (unsigned)rd);
    }
    if (dp == NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_FP16) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "CDP: D_DATA_FORMAT_0.INPUT_DATA_TYPE=FP16 is not modelled");
    }
    c->int16 = 1;
    return 0;
}

static void decode_cube(struct dla_dev *d, unsigned g, struct cdp_cfg *c)
{
    c->width = DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_DATA_CUBE_WIDTH_0, WIDTH) + 1;
    c->height = DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1;
    c->channel = DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1;
    c->elem_bytes = c->int16 ? 2 : 1;
    /* an atom is NVDLA_MEMORY_ATOMIC_SIZE bytes whatever the precision: M
     * INT8 or M/2 INT16 elements (cmod NV_NVDLA_cdp.h ELEMENT_PER_GROUP_INT16
     * = DLA_ATOM_SIZE / 2; the surface loops of NV_NVDLA_cdp.cpp step
     * DLA_ATOM_SIZE bytes per atom) */
    c->atom_bytes = dla_cfg(d)->memory_atomic_size;
    c->atom_elems = c->atom_bytes / c->elem_bytes;
    c->surfaces = (c->channel + c->atom_elems - 1) / c->atom_elems;

    c->src_addr = dla_addr(dla_reg(d, NVDLA_CDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, dla_consumer(d, NVDLA_UNIT_CDP_RDMA)),
                           dla_reg(d, NVDLA_CDP_RDMA_D_SRC_BASE_ADDR_LOW_0, dla_consumer(d, NVDLA_UNIT_CDP_RDMA)));
    c->src_line = DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_SRC_LINE_STRIDE_0, SRC_LINE_STRIDE);
    c->src_surf = DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_SRC_SURFACE_STRIDE_0,
                                SRC_SURFACE_STRIDE);
    c->src_port = dla_ram_port(DLA_REG_FIELD(d, dla_consumer(d, NVDLA_UNIT_CDP_RDMA), NVDLA_CDP_RDMA_D_SRC_DMA_CFG_0,
                                             SRC_RAM_TYPE));

    c->dst_addr = dla_addr(dla_reg(d, NVDLA_CDP_D_DST_BASE_ADDR_HIGH_0, g),
                           dla_reg(d, NVDLA_CDP_D_DST_BASE_ADDR_LOW_0, g));
    c->dst_line = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DST_LINE_STRIDE_0, DST_LINE_STRIDE);
    c->dst_surf = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DST_SURFACE_STRIDE_0, DST_SURFACE_STRIDE);
    c->dst_port = dla_ram_port(DLA_REG_FIELD(d, g, NVDLA_CDP_D_DST_DMA_CFG_0, DST_RAM_TYPE));
}

/* Spec 004 (NVDLA_MEMORY_ATOMIC_SIZE): addresses and strides are multiples
 * of the atom.  The model uses the byte values as programmed and only
 * reports a misalignment. */
static void check_alignment(struct dla_dev *d, const struct cdp_cfg *c)
{
    uint64_t a = c->atom_bytes;
    if (c->src_addr % a || c->src_line % a || c->src_surf % a) {
        dla_log(d, DLASIM_LOG_GUEST_ERROR,
                "CDP_RDMA: D_SRC_BASE_ADDR/LINE_STRIDE/SURFACE_STRIDE 0x%llx/0x%llx/0x%llx "
                "not multiples of the %u-byte atom",
                (unsigned long long)c->src_addr, (unsigned long long)c->src_line,
                (unsigned long long)c->src_surf, (unsigned)a);
    }
    if (c->dst_addr % a || c->dst_line % a || c->dst_surf % a) {
        dla_log(d, DLASIM_LOG_GUEST_ERROR,
                "CDP: D_DST_BASE_ADDR/LINE_STRIDE/SURFACE_STRIDE 0x%llx/0x%llx/0x%llx "
                "not multiples of the %u-byte atom",
                (unsigned long long)c->dst_addr, (unsigned long long)c->dst_line,
                (unsigned long long)c->dst_surf, (unsigned)a);
    }
}

/* Converters and bypasses.  INT8 widths from the RTL (HLS_cdp_icvt.v uses
 * DATIN_OFFSET[7:0], HLS_cdp_ocvt.v DATOUT_OFFSET[24:0]); INT16 widths from
 * cmod hls/cdp_libs (16-bit offset in, 32-bit offset out). */
static void decode_datapath(struct dla_dev *d, unsigned g, struct cdp_cfg *c)
{
    uint32_t in_off = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATIN_OFFSET_0, DATIN_OFFSET);
    uint32_t out_off = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATOUT_OFFSET_0, DATOUT_OFFSET);

    c->radius = DLA_REG_FIELD(d, g, NVDLA_CDP_D_LRN_CFG_0, NORMALZ_LEN) + 1;
    c->sqsum_bypass = DLA_REG_FIELD(d, g, NVDLA_CDP_D_FUNC_BYPASS_0, SQSUM_BYPASS) ==
                      NVDLA_CDP_D_FUNC_BYPASS_0_SQSUM_BYPASS_ENABLE;
    c->mul_bypass = DLA_REG_FIELD(d, g, NVDLA_CDP_D_FUNC_BYPASS_0, MUL_BYPASS) ==
                    NVDLA_CDP_D_FUNC_BYPASS_0_MUL_BYPASS_ENABLE;

    c->in_offset = (int32_t)sext(in_off, c->int16 ? 16 : 8);
    c->in_scale = (int32_t)sext(DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATIN_SCALE_0, DATIN_SCALE), 16);
    c->in_shift = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATIN_SHIFTER_0, DATIN_SHIFTER);
    c->in_bits = c->int16 ? 17 : 9;
    for (int i = 0; i < 256; i++) {
        c->cvt8[i] = cdp_convert((int8_t)(uint8_t)i, c->in_offset, c->in_scale, c->in_shift,
                                 c->in_bits);
    }

    c->out_offset = sext(out_off, c->int16 ? 32 : 25);
    c->out_scale = (int32_t)sext(DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATOUT_SCALE_0, DATOUT_SCALE),
                                 16);
    c->out_shift = DLA_REG_FIELD(d, g, NVDLA_CDP_D_DATOUT_SHIFTER_0, DATOUT_SHIFTER);
    c->out_bits = c->int16 ? 16 : 8;
}

/* LUT configuration: single registers, plus the LUT RAM contents. */
static void decode_lut(struct dla_dev *d, struct cdp_cfg *c)
{
    struct cdp_lut_fields f;
    uint32_t cfg = dla_reg(d, NVDLA_CDP_S_LUT_CFG_0, 0);
    uint32_t info = dla_reg(d, NVDLA_CDP_S_LUT_INFO_0, 0);
    uint32_t le_scale = dla_reg(d, NVDLA_CDP_S_LUT_LE_SLOPE_SCALE_0, 0);
    uint32_t le_shift = dla_reg(d, NVDLA_CDP_S_LUT_LE_SLOPE_SHIFT_0, 0);
    uint32_t lo_scale = dla_reg(d, NVDLA_CDP_S_LUT_LO_SLOPE_SCALE_0, 0);
    uint32_t lo_shift = dla_reg(d, NVDLA_CDP_S_LUT_LO_SLOPE_SHIFT_0, 0);
    const struct dla_lut_ram *ram = dla_lut(d, DLA_LUT_CDP);

    f.le_function = DLA_FIELD(cfg, NVDLA_CDP_S_LUT_CFG_0_LUT_LE_FUNCTION);
    f.uflow_priority = DLA_FIELD(cfg, NVDLA_CDP_S_LUT_CFG_0_LUT_UFLOW_PRIORITY);
    f.oflow_priority = DLA_FIELD(cfg, NVDLA_CDP_S_LUT_CFG_0_LUT_OFLOW_PRIORITY);
    f.hybrid_priority = DLA_FIELD(cfg, NVDLA_CDP_S_LUT_CFG_0_LUT_HYBRID_PRIORITY);
    f.le_index_offset = DLA_FIELD(info, NVDLA_CDP_S_LUT_INFO_0_LUT_LE_INDEX_OFFSET);
    f.le_index_select = DLA_FIELD(info, NVDLA_CDP_S_LUT_INFO_0_LUT_LE_INDEX_SELECT);
    f.lo_index_select = DLA_FIELD(info, NVDLA_CDP_S_LUT_INFO_0_LUT_LO_INDEX_SELECT);
    f.le_start_low = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LE_START_LOW_0, LUT_LE_START_LOW);
    f.le_start_high = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LE_START_HIGH_0, LUT_LE_START_HIGH);
    f.le_end_low = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LE_END_LOW_0, LUT_LE_END_LOW);
    f.le_end_high = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LE_END_HIGH_0, LUT_LE_END_HIGH);
    f.lo_start_low = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LO_START_LOW_0, LUT_LO_START_LOW);
    f.lo_start_high = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LO_START_HIGH_0, LUT_LO_START_HIGH);
    f.lo_end_low = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LO_END_LOW_0, LUT_LO_END_LOW);
    f.lo_end_high = DLA_REG_FIELD(d, 0, NVDLA_CDP_S_LUT_LO_END_HIGH_0, LUT_LO_END_HIGH);
    f.le_slope_uflow_scale =
        DLA_FIELD(le_scale, NVDLA_CDP_S_LUT_LE_SLOPE_SCALE_0_LUT_LE_SLOPE_UFLOW_SCALE);
    f.le_slope_oflow_scale =
        DLA_FIELD(le_scale, NVDLA_CDP_S_LUT_LE_SLOPE_SCALE_0_LUT_LE_SLOPE_OFLOW_SCALE);
    f.le_slope_uflow_shift =
        DLA_FIELD(le_shift, NVDLA_CDP_S_LUT_LE_SLOPE_SHIFT_0_LUT_LE_SLOPE_UFLOW_SHIFT);
    f.le_slope_oflow_shift =
        DLA_FIELD(le_shift, NVDLA_CDP_S_LUT_LE_SLOPE_SHIFT_0_LUT_LE_SLOPE_OFLOW_SHIFT);
    f.lo_slope_uflow_scale =
        DLA_FIELD(lo_scale, NVDLA_CDP_S_LUT_LO_SLOPE_SCALE_0_LUT_LO_SLOPE_UFLOW_SCALE);
    f.lo_slope_oflow_scale =
        DLA_FIELD(lo_scale, NVDLA_CDP_S_LUT_LO_SLOPE_SCALE_0_LUT_LO_SLOPE_OFLOW_SCALE);
    f.lo_slope_uflow_shift =
        DLA_FIELD(lo_shift, NVDLA_CDP_S_LUT_LO_SLOPE_SHIFT_0_LUT_LO_SLOPE_UFLOW_SHIFT);
    f.lo_slope_oflow_shift =
        DLA_FIELD(lo_shift, NVDLA_CDP_S_LUT_LO_SLOPE_SHIFT_0_LUT_LO_SLOPE_OFLOW_SHIFT);

    cdp_lut_setup(&c->lut, &f, ram->le, ram->lo, c->int16);
}

static int cdp_decode(struct dla_dev *d, unsigned g, struct cdp_cfg *c)
{
    int rc;
    memset(c, 0, sizeof(*c));
    rc = decode_precision(d, g, c);
    if (rc) {
        return rc;
    }
    decode_cube(d, g, c);
    check_alignment(d, c);
    decode_datapath(d, g, c);
    decode_lut(d, c);
    return 0;
}

/* ---- data movement ------------------------------------------------------ */

/* Bytes of one line of one surface. */
static size_t line_bytes(const struct cdp_cfg *c)
{
    return (size_t)c->width * c->atom_bytes;
}

/* Read rows [y0, y0+n) of every surface into buf[s][r][line]. */
static int read_band(struct dla_dev *d, const struct cdp_cfg *c, uint8_t *buf,
                     uint32_t y0, uint32_t n)
{
    size_t lb = line_bytes(c);
    for (uint32_t s = 0; s < c->surfaces; s++) {
        uint64_t a = c->src_addr + s * c->src_surf + (uint64_t)y0 * c->src_line;
        int rc = dla_dma_read_lines(d, c->src_port, UINT64_MAX, a, c->src_line, n, lb,
                                    buf + (size_t)s * n * lb);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static int write_band(struct dla_dev *d, const struct cdp_cfg *c, const uint8_t *buf,
                      uint32_t y0, uint32_t n)
{
    size_t lb = line_bytes(c);
    for (uint32_t s = 0; s < c->surfaces; s++) {
        uint64_t a = c->dst_addr + s * c->dst_surf + (uint64_t)y0 * c->dst_line;
        int rc = dla_dma_write_lines(d, c->dst_port, UINT64_MAX, a, c->dst_line, n, lb,
                                     buf + (size_t)s * n * lb);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* The cube CDP_RDMA reads or CDP writes (read_band / write_band). */
static struct dla_strided cdp_cube(const struct cdp_cfg *c, int is_write)
{
    struct dla_strided s;
    memset(&s, 0, sizeof(s));
    s.port = is_write ? c->dst_port : c->src_port;
    s.base = is_write ? c->dst_addr : c->src_addr;
    s.line_bytes = line_bytes(c);
    s.lines = c->height;
    s.line_stride = is_write ? c->dst_line : c->src_line;
    s.surfaces = c->surfaces;
    s.surf_stride = is_write ? c->dst_surf : c->src_surf;
    s.batches = 1;
    return s;
}

/* Work: the cube read and written, a window of 2 * radius + 1 channels per
 * element; then the extents of both cubes. */
static int cdp_check_work(struct dla_dev *d, const struct cdp_cfg *c)
{
    struct dla_work w;
    struct dla_strided in = cdp_cube(c, 0), out = cdp_cube(c, 1);
    dla_work_init(&w, "CDP");
    dla_work_read(&w, &in);
    dla_work_write(&w, &out);
    dla_work_ops(&w, (uint64_t)c->width * c->height * c->surfaces * c->atom_elems *
                         (2u * c->radius + 1u));
    int rc = dla_work_check(d, &w);
    if (!rc) {
        rc = dla_strided_check(d, "CDP", "input cube", 0, &in);
    }
    if (!rc) {
        rc = dla_strided_check(d, "CDP", "output cube", 1, &out);
    }
    return rc;
}

/* ---- datapath ------------------------------------------------------------- */

/* Element e of an atom as a signed value. */
static int32_t load_elem(const struct cdp_cfg *c, const uint8_t *atom, uint32_t e)
{
    if (c->int16) {
        const uint8_t *p = atom + 2 * e;
        return (int32_t)(int16_t)(uint16_t)(p[0] | (uint16_t)(p[1] << 8));
    }
    return (int32_t)(int8_t)atom[e];
}

static void store_elem(const struct cdp_cfg *c, uint8_t *atom, uint32_t e, int32_t v)
{
    uint16_t u = (uint16_t)v;
    if (c->int16) {
        atom[2 * e] = (uint8_t)u;
        atom[2 * e + 1] = (uint8_t)(u >> 8);
        return;
    }
    atom[e] = (uint8_t)u;
}

/*
 * Convert the channels of one pixel into v[R .. R+P) (R = CDP_MAX_RADIUS
 * zeros on each side).  Lanes of the last surface beyond C are 0.
 */
static void convert_pixel(const struct cdp_cfg *c, const uint8_t *band, uint32_t n,
                          uint32_t r, uint32_t x, int32_t *v)
{
    size_t lb = line_bytes(c);
    uint32_t ch = 0;
    for (uint32_t s = 0; s < c->surfaces; s++) {
        const uint8_t *atom = band + ((size_t)s * n + r) * lb + (size_t)x * c->atom_bytes;
        if (!c->int16) {
            for (uint32_t e = 0; e < c->atom_elems; e++, ch++) {
                v[CDP_MAX_RADIUS + ch] = ch < c->channel ? c->cvt8[atom[e]] : 0;
            }
            continue;
        }
        for (uint32_t e = 0; e < c->atom_elems; e++, ch++) {
            int32_t in = load_elem(c, atom, e);
            v[CDP_MAX_RADIUS + ch] =
                ch < c->channel
                    ? cdp_convert(in, c->in_offset, c->in_scale, c->in_shift, c->in_bits)
                    : 0;
        }
    }
}

/*
 * LUT result for input x.  INT8 LUT inputs take few distinct values (square
 * sums 0 .. 9 * 2^16, or -256 .. 255 with SQSUM_BYPASS), so layers remember
 * each result: an entry holds ((class + 1) << 16) | (uint16_t)result, 0 when
 * not yet computed.
 */
static int32_t lut_lookup(const struct cdp_cfg *c, struct cdp_run *st, int64_t x)
{
    enum cdp_lut_class cls;
    int32_t y;
    int64_t i = x - st->memo_lo;
    if (st->memo && i >= 0 && i < (int64_t)st->memo_size) {
        int32_t e = st->memo[i];
        if (e) {
            st->count[(e >> 16) - 1]++;
            return (int16_t)(uint16_t)(e & 0xffff);
        }
        y = cdp_lut_eval(&c->lut, x, &cls);
        st->memo[i] = (int32_t)(((uint32_t)cls + 1) << 16 | (uint16_t)y);
    } else {
        y = cdp_lut_eval(&c->lut, x, &cls);
    }
    st->count[cls]++;
    return y;
}

/* Normalize one pixel: square sums, LUT, multiply, output converter. */
static void process_pixel(const struct cdp_cfg *c, struct cdp_run *st, uint8_t *band_out,
                          uint32_t n, uint32_t r, uint32_t x)
{
    const uint32_t pad = CDP_MAX_RADIUS;
    const uint32_t lanes = c->surfaces * c->atom_elems;
    const int32_t *v = st->v;
    int64_t *sq = st->sq;
    int64_t sum = 0;
    size_t lb = line_bytes(c);
    uint32_t k = 0;

    if (!c->sqsum_bypass) {
        for (k = 0; k < lanes; k++) {
            sq[pad + k] = (int64_t)v[pad + k] * v[pad + k];
        }
        for (k = pad - c->radius; k <= pad + c->radius; k++) {
            sum += sq[k];
        }
    }
    k = 0;
    for (uint32_t s = 0; s < c->surfaces; s++) {
        uint8_t *atom = band_out + ((size_t)s * n + r) * lb + (size_t)x * c->atom_bytes;
        for (uint32_t e = 0; e < c->atom_elems; e++, k++) {
            int64_t xin = c->sqsum_bypass ? v[pad + k] : sum;
            int64_t lut = lut_lookup(c, st, xin);
            int64_t y = c->mul_bypass ? lut : lut * v[pad + k];
            store_elem(c, atom, e,
                       cdp_convert(y, c->out_offset, c->out_scale, c->out_shift, c->out_bits));
            if (!c->sqsum_bypass) {
                /* slide the window to channel k + 1 */
                sum += sq[pad + k + 1 + c->radius] - sq[pad + k - c->radius];
            }
        }
    }
}

static int run_layer(struct dla_dev *d, const struct cdp_cfg *c, struct cdp_run *st)
{
    size_t lb = line_bytes(c);
    size_t band_line = lb * c->surfaces;          /* one row of every surface */
    size_t lanes = (size_t)c->surfaces * c->atom_elems;
    uint32_t rows = (uint32_t)(CDP_BAND_BYTES / band_line);

    if (rows == 0) {
        rows = 1;
    }
    if (rows > c->height) {
        rows = c->height;
    }
    st->in = malloc(band_line * rows);
    st->out = malloc(band_line * rows);
    st->v = calloc(lanes + 2 * CDP_MAX_RADIUS + 2, sizeof(*st->v));
    st->sq = calloc(lanes + 2 * CDP_MAX_RADIUS + 2, sizeof(*st->sq));
    if (!st->in || !st->out || !st->v || !st->sq) {
        return dla_error(d, DLASIM_ERR_NOMEM, "CDP: no host memory for a %ux%ux%u cube",
                         (unsigned)c->width, (unsigned)c->height, (unsigned)c->channel);
    }
    /* remember INT8 LUT results when the layer has enough elements */
    if (!c->int16) {
        uint32_t range = c->sqsum_bypass ? 512u : (2 * c->radius + 1) * (1u << 16) + 1;
        if ((uint64_t)lanes * c->width * c->height > range / 4) {
            st->memo_lo = c->sqsum_bypass ? -256 : 0;
            st->memo_size = range;
            st->memo = calloc(st->memo_size, sizeof(*st->memo));
        }
    }
    for (uint32_t y0 = 0; y0 < c->height; y0 += rows) {
        uint32_t n = c->height - y0 < rows ? c->height - y0 : rows;
        int rc = read_band(d, c, st->in, y0, n);
        if (rc) {
            return rc;
        }
        for (uint32_t r = 0; r < n; r++) {
            for (uint32_t x = 0; x < c->width; x++) {
                convert_pixel(c, st->in, n, r, x, st->v);
                process_pixel(c, st, st->out, n, r, x);
            }
        }
        rc = write_band(d, c, st->out, y0, n);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

static uint32_t sat32(uint64_t v)
{
    return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

/* Status and perf registers the hardware updates at layer end. */
static void publish(struct dla_dev *d, unsigned g, const struct cdp_run *st)
{
    dla_reg_hw_set(d, NVDLA_CDP_D_PERF_LUT_UFLOW_0, g, sat32(st->count[CDP_LUT_CLASS_UFLOW]));
    dla_reg_hw_set(d, NVDLA_CDP_D_PERF_LUT_OFLOW_0, g, sat32(st->count[CDP_LUT_CLASS_OFLOW]));
    dla_reg_hw_set(d, NVDLA_CDP_D_PERF_LUT_HYBRID_0, g,
                   sat32(st->count[CDP_LUT_CLASS_HYBRID]));
    dla_reg_hw_set(d, NVDLA_CDP_D_PERF_LUT_LE_HIT_0, g,
                   sat32(st->count[CDP_LUT_CLASS_LE_HIT]));
    dla_reg_hw_set(d, NVDLA_CDP_D_PERF_LUT_LO_HIT_0, g,
                   sat32(st->count[CDP_LUT_CLASS_LO_HIT]));
    dla_reg_hw_set(d, NVDLA_CDP_D_OUT_SATURATION_0, g, 0);
    dla_reg_hw_set(d, NVDLA_CDP_D_NAN_INPUT_NUM_0, g, 0);
    dla_reg_hw_set(d, NVDLA_CDP_D_INF_INPUT_NUM_0, g, 0);
    dla_reg_hw_set(d, NVDLA_CDP_D_NAN_OUTPUT_NUM_0, g, 0);
    dla_reg_hw_set(d, NVDLA_CDP_D_PERF_WRITE_STALL_0, g, 0);
    dla_reg_hw_set(d, NVDLA_CDP_RDMA_D_PERF_READ_STALL_0, g, 0);
}

int dla_cdp_execute(struct dla_dev *d, unsigned group)
{
    struct cdp_cfg *c = malloc(sizeof(*c));
    struct cdp_run st;
    int rc;

    memset(&st, 0, sizeof(st));
    if (!c) {
        return dla_error(d, DLASIM_ERR_NOMEM, "CDP: no host memory for the layer state");
    }
    rc = cdp_decode(d, group, c);
    if (!rc) {
        rc = cdp_check_work(d, c);
    }
    if (!rc) {
        rc = run_layer(d, c, &st);
    }
    publish(d, group, &st);
    free(st.in);
    free(st.out);
    free(st.v);
    free(st.sq);
    free(st.memo);
    free(c);
    return rc;
}

/* ---- summary (src/timing/summary.h) ------------------------------------------ */

/* The data cube CDP_RDMA reads (`g` is CDP_RDMA's group). */
void dla_cdp_summarize(const struct dla_dev *d, unsigned g, struct dla_layer_summary *s)
{
    s->cdp.w = DLA_REG_FIELD(d, g, NVDLA_CDP_RDMA_D_DATA_CUBE_WIDTH_0, WIDTH) + 1ull;
    s->cdp.h = DLA_REG_FIELD(d, g, NVDLA_CDP_RDMA_D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1ull;
    s->cdp.c = DLA_REG_FIELD(d, g, NVDLA_CDP_RDMA_D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1ull;
    s->cdp.int16 = DLA_REG_FIELD(d, g, NVDLA_CDP_RDMA_D_DATA_FORMAT_0, INPUT_DATA) ==
                   NVDLA_CDP_RDMA_D_DATA_FORMAT_0_INPUT_DATA_INT16;
}
