/*
 * CDP programming and the LUT loader shared with SDP, for the
 * firmware-equivalent executor.
 * ref: nvdla/sw kmd/firmware/cdp.c (processor_cdp_program, dla_cdp_enable,
 * dla_cdp_set_producer, dla_cdp_is_ready) and common.c (update_lut): the
 * same registers, values and order, restated on the port.
 * Refusals: source or destination on the fly, in/out precision differing,
 * local sizes other than 3/5/7/9, LUT index outside the LUT list.
 */
#include "regs/gen/nvdla_regs.h"
#include "driver/nvdla/fw.h"

#define CDP(R) NVDLA_CDP_##R##_0
#define CDP_RDMA(R) NVDLA_CDP_RDMA_##R##_0

/* ---- LUT (SDP and CDP) ------------------------------------------------------- */

/* The LUT registers of one unit; SDP has 32-bit start/end, CDP 64-bit pairs. */
struct lut_regs {
    uint32_t access_cfg, access_data, cfg, info;
    uint32_t le_start, le_end, lo_start, lo_end; /* low words; CDP's high word follows */
    uint32_t le_slope_scale, le_slope_shift, lo_slope_scale, lo_slope_shift;
    int has_high;
};

static const struct lut_regs sdp_lut = {
    NVDLA_SDP_S_LUT_ACCESS_CFG_0,     NVDLA_SDP_S_LUT_ACCESS_DATA_0,
    NVDLA_SDP_S_LUT_CFG_0,            NVDLA_SDP_S_LUT_INFO_0,
    NVDLA_SDP_S_LUT_LE_START_0,       NVDLA_SDP_S_LUT_LE_END_0,
    NVDLA_SDP_S_LUT_LO_START_0,       NVDLA_SDP_S_LUT_LO_END_0,
    NVDLA_SDP_S_LUT_LE_SLOPE_SCALE_0, NVDLA_SDP_S_LUT_LE_SLOPE_SHIFT_0,
    NVDLA_SDP_S_LUT_LO_SLOPE_SCALE_0, NVDLA_SDP_S_LUT_LO_SLOPE_SHIFT_0,
    0,
};
static const struct lut_regs cdp_lut = {
    NVDLA_CDP_S_LUT_ACCESS_CFG_0,     NVDLA_CDP_S_LUT_ACCESS_DATA_0,
    NVDLA_CDP_S_LUT_CFG_0,            NVDLA_CDP_S_LUT_INFO_0,
    NVDLA_CDP_S_LUT_LE_START_LOW_0,   NVDLA_CDP_S_LUT_LE_END_LOW_0,
    NVDLA_CDP_S_LUT_LO_START_LOW_0,   NVDLA_CDP_S_LUT_LO_END_LOW_0,
    NVDLA_CDP_S_LUT_LE_SLOPE_SCALE_0, NVDLA_CDP_S_LUT_LE_SLOPE_SHIFT_0,
    NVDLA_CDP_S_LUT_LO_SLOPE_SCALE_0, NVDLA_CDP_S_LUT_LO_SLOPE_SHIFT_0,
    1,
};

static void write_table(struct nvrt_fw *fw, const struct lut_regs *r, uint32_t table,
                        const int16_t *v, int n)
{
    nvrt_wr(fw, r->access_cfg,
            NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID(table) |
                NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE(
                    NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE_WRITE));
    for (int i = 0; i < n; i++) {
        nvrt_wr(fw, r->access_data, (uint32_t)(int32_t)v[i]);
    }
}

static void write_range(struct nvrt_fw *fw, const struct lut_regs *r, uint32_t reg, uint64_t v)
{
    nvrt_wr(fw, reg, NVRT_LO32(v));
    if (r->has_high) {
        nvrt_wr(fw, reg + 4, NVRT_HI32(v));
    }
}

static uint32_t slope_pair(uint32_t lo_shift, uint32_t lo_mask, int32_t u, uint32_t hi_shift,
                           uint32_t hi_mask, int32_t o)
{
    return (((uint32_t)u << lo_shift) & lo_mask) | (((uint32_t)o << hi_shift) & hi_mask);
}

int nvrt_program_lut(struct nvrt_fw *fw, const struct nvrt_group *g, int is_sdp, int16_t index,
                     uint8_t precision)
{
    if (index < 0 || (uint16_t)index >= fw->net->num_luts) {
        return nvrt_check_range(fw, g, is_sdp ? "sdp_op.lut_index" : "cdp_op.lut_index", index,
                                0, (long)fw->net->num_luts - 1);
    }
    const struct dlasim_rt_lut *l = &fw->net->luts[index];
    const struct lut_regs *r = is_sdp ? &sdp_lut : &cdp_lut;
    if (fw->rec) {
        nvrt_prep_lut(fw, index);
    }
    int rc = nvrt_check_range(fw, g, "lut.method", l->method, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "lut.hybrid_priority", l->hybrid_priority, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "lut.underflow_priority", l->underflow_priority, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "lut.overflow_priority", l->overflow_priority, 0, 1);
    if (rc) {
        return rc;
    }
    write_table(fw, r, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID_LE, l->linear_exp_table, 65);
    write_table(fw, r, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID_LO, l->linear_only_table, 257);
    /* method 0 = exponent, 1 = linear; priorities 0 = LE, 1 = LO (as the fields) */
    nvrt_wr(fw, r->cfg, NVDLA_CDP_S_LUT_CFG_0_LUT_LE_FUNCTION(l->method) |
                            NVDLA_CDP_S_LUT_CFG_0_LUT_HYBRID_PRIORITY(l->hybrid_priority) |
                            NVDLA_CDP_S_LUT_CFG_0_LUT_UFLOW_PRIORITY(l->underflow_priority) |
                            NVDLA_CDP_S_LUT_CFG_0_LUT_OFLOW_PRIORITY(l->overflow_priority));
    uint32_t info;
    if (l->method == NVDLA_CDP_S_LUT_CFG_0_LUT_LE_FUNCTION_EXPONENT) {
        info = NVDLA_CDP_S_LUT_INFO_0_LUT_LE_INDEX_OFFSET((uint32_t)(uint8_t)l->linear_exp_offset);
    } else {
        info = NVDLA_CDP_S_LUT_INFO_0_LUT_LE_INDEX_SELECT((uint32_t)(uint8_t)l->linear_exp_offset);
    }
    info |= NVDLA_CDP_S_LUT_INFO_0_LUT_LO_INDEX_SELECT((uint32_t)(uint8_t)l->linear_only_offset);
    nvrt_wr(fw, r->info, info);
    write_range(fw, r, r->le_start, l->linear_exp_start);
    write_range(fw, r, r->le_end, l->linear_exp_end);
    write_range(fw, r, r->lo_start, l->linear_only_start);
    write_range(fw, r, r->lo_end, l->linear_only_end);
    if (precision == DLASIM_RT_FP16) {
        return nvrt_fail(fw, DLASIM_ERR_UNSUPPORTED,
                         "operation %d: FP16 LUT slopes are not modelled", g->op);
    }
#define PAIR(REG, A, B, U, O)                                                                 \
    slope_pair(NVDLA_CDP_S_LUT_##REG##_0_##A##__SHIFT, NVDLA_CDP_S_LUT_##REG##_0_##A##__MASK, \
               U, NVDLA_CDP_S_LUT_##REG##_0_##B##__SHIFT,                                     \
               NVDLA_CDP_S_LUT_##REG##_0_##B##__MASK, O)
    nvrt_wr(fw, r->le_slope_scale, PAIR(LE_SLOPE_SCALE, LUT_LE_SLOPE_UFLOW_SCALE,
                                        LUT_LE_SLOPE_OFLOW_SCALE, l->le_uflow_scale,
                                        l->le_oflow_scale));
    nvrt_wr(fw, r->le_slope_shift, PAIR(LE_SLOPE_SHIFT, LUT_LE_SLOPE_UFLOW_SHIFT,
                                        LUT_LE_SLOPE_OFLOW_SHIFT, l->le_uflow_shift,
                                        l->le_oflow_shift));
    nvrt_wr(fw, r->lo_slope_scale, PAIR(LO_SLOPE_SCALE, LUT_LO_SLOPE_UFLOW_SCALE,
                                        LUT_LO_SLOPE_OFLOW_SCALE, l->lo_uflow_scale,
                                        l->lo_oflow_scale));
    nvrt_wr(fw, r->lo_slope_shift, PAIR(LO_SLOPE_SHIFT, LUT_LO_SLOPE_UFLOW_SHIFT,
                                        LUT_LO_SLOPE_OFLOW_SHIFT, l->lo_uflow_shift,
                                        l->lo_oflow_shift));
#undef PAIR
    return fw->rc;
}

/* ---- CDP --------------------------------------------------------------------- */

static uint32_t ram_type(uint16_t mem_type)
{
    return mem_type == DLASIM_RT_MEM_MC ? NVDLA_CDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC
                                        : NVDLA_CDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_CV;
}

static uint32_t minus1(uint32_t v)
{
    return v ? v - 1 : 0;
}

/* ref: cdp.c dla_cdp_set_producer: both pointers take the group id */
static void cdp_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    (void)rdma_group;
    nvrt_wr(fw, CDP(S_POINTER), NVDLA_CDP_S_POINTER_0_PRODUCER((uint32_t)group));
    nvrt_wr(fw, CDP_RDMA(S_POINTER), NVDLA_CDP_RDMA_S_POINTER_0_PRODUCER((uint32_t)group));
}

static void cdp_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    (void)g;
    nvrt_wr(fw, CDP_RDMA(D_OP_ENABLE), NVDLA_CDP_RDMA_D_OP_ENABLE_0_OP_EN(1));
    nvrt_wr(fw, CDP(D_OP_ENABLE), NVDLA_CDP_D_OP_ENABLE_0_OP_EN(1));
}

static void cdp_rdma_check(struct nvrt_fw *fw, struct nvrt_group *g)
{
    (void)fw;
    g->is_rdma_needed = 1;
}

static int cdp_is_ready(struct nvrt_fw *fw, const struct nvrt_group *g,
                        const struct nvrt_group *other)
{
    return nvrt_lut_is_ready(nvrt_op_of(fw, g)->op.cdp.lut_index, other);
}

static int validate(struct nvrt_fw *fw, const struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_cdp_op *op = &d->op.cdp;
    const struct dlasim_rt_io_surface *s = &d->surface.io;
    int rc = nvrt_check_range(fw, g, "cdp_surface.src_data.type", s->src_data.type, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "cdp_surface.dst_data.type", s->dst_data.type, 0, 1);
    rc = rc ? rc : nvrt_check_precision(fw, g, "cdp_op.in_precision", op->in_precision);
    rc = rc ? rc : nvrt_check_range(fw, g, "cdp_op.out_precision", op->out_precision,
                                    op->in_precision, op->in_precision);
    rc = rc ? rc : nvrt_check_range(fw, g, "cdp_op.local_size", op->local_size, 3, 9);
    if (!rc && op->local_size % 2 == 0) {
        rc = nvrt_check_range(fw, g, "cdp_op.local_size (odd)", op->local_size, 3, 3);
    }
    rc = rc ? rc : nvrt_check_range(fw, g, "cdp_op.lut_index", op->lut_index, -1,
                                    (long)fw->net->num_luts - 1);
    return rc;
}

static int cdp_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_cdp_op *op = &d->op.cdp;
    const struct dlasim_rt_cube *src = &d->surface.io.src_data, *dst = &d->surface.io.dst_data;
    uint64_t in = 0, out = 0;
    nvrt_enable_intr(fw, NVDLA_GLB_S_INTR_MASK_0_CDP_DONE_MASK1__MASK |
                             NVDLA_GLB_S_INTR_MASK_0_CDP_DONE_MASK0__MASK);
    int rc = validate(fw, g);
    rc = rc ? rc : nvrt_cube_address(fw, g->op, "cdp_surface.src_data", src, &in);
    rc = rc ? rc : nvrt_cube_address(fw, g->op, "cdp_surface.dst_data", dst, &out);
    if (rc) {
        return rc;
    }
    if (op->lut_index >= 0) {
        g->lut_index = op->lut_index;
    }
    nvrt_wr(fw, CDP_RDMA(D_DATA_CUBE_WIDTH), NVDLA_CDP_RDMA_D_DATA_CUBE_WIDTH_0_WIDTH(minus1(src->width)));
    nvrt_wr(fw, CDP_RDMA(D_DATA_CUBE_HEIGHT), NVDLA_CDP_RDMA_D_DATA_CUBE_HEIGHT_0_HEIGHT(minus1(src->height)));
    nvrt_wr(fw, CDP_RDMA(D_DATA_CUBE_CHANNEL), NVDLA_CDP_RDMA_D_DATA_CUBE_CHANNEL_0_CHANNEL(minus1(src->channel)));
    nvrt_wr(fw, CDP_RDMA(D_SRC_BASE_ADDR_LOW), NVRT_LO32(in));
    nvrt_wr(fw, CDP_RDMA(D_SRC_BASE_ADDR_HIGH), NVRT_HI32(in));
    nvrt_wr(fw, CDP_RDMA(D_SRC_LINE_STRIDE), src->line_stride);
    nvrt_wr(fw, CDP_RDMA(D_SRC_SURFACE_STRIDE), src->surf_stride);
    nvrt_wr(fw, CDP_RDMA(D_SRC_DMA_CFG), NVDLA_CDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE(ram_type(src->type)));
    nvrt_wr(fw, CDP_RDMA(D_DATA_FORMAT), NVDLA_CDP_RDMA_D_DATA_FORMAT_0_INPUT_DATA(op->in_precision));
    if (op->lut_index >= 0) {
        rc = nvrt_program_lut(fw, g, 0, op->lut_index, op->in_precision);
        if (rc) {
            return rc;
        }
    }
    nvrt_wr(fw, CDP(D_DST_BASE_ADDR_LOW), NVRT_LO32(out));
    nvrt_wr(fw, CDP(D_DST_BASE_ADDR_HIGH), NVRT_HI32(out));
    nvrt_wr(fw, CDP(D_DST_LINE_STRIDE), dst->line_stride);
    nvrt_wr(fw, CDP(D_DST_SURFACE_STRIDE), dst->surf_stride);
    nvrt_wr(fw, CDP(D_DST_DMA_CFG), NVDLA_CDP_D_DST_DMA_CFG_0_DST_RAM_TYPE(ram_type(dst->type)));
    nvrt_wr(fw, CDP(D_DATA_FORMAT), NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE(op->in_precision));
    /* NORMALZ_LEN: 0 = 3, 1 = 5, 2 = 7, 3 = 9 (ref: cdp.c map_local_size) */
    nvrt_wr(fw, CDP(D_LRN_CFG), NVDLA_CDP_D_LRN_CFG_0_NORMALZ_LEN((uint32_t)(op->local_size - 1) / 2 - 1));
    nvrt_wr(fw, CDP(D_DATIN_OFFSET), NVDLA_CDP_D_DATIN_OFFSET_0_DATIN_OFFSET((uint32_t)op->in_cvt.offset));
    nvrt_wr(fw, CDP(D_DATIN_SCALE), NVDLA_CDP_D_DATIN_SCALE_0_DATIN_SCALE((uint32_t)(int32_t)op->in_cvt.scale));
    nvrt_wr(fw, CDP(D_DATIN_SHIFTER), NVDLA_CDP_D_DATIN_SHIFTER_0_DATIN_SHIFTER(op->in_cvt.truncate));
    nvrt_wr(fw, CDP(D_DATOUT_OFFSET), NVDLA_CDP_D_DATOUT_OFFSET_0_DATOUT_OFFSET((uint32_t)op->out_cvt.offset));
    nvrt_wr(fw, CDP(D_DATOUT_SCALE), NVDLA_CDP_D_DATOUT_SCALE_0_DATOUT_SCALE((uint32_t)(int32_t)op->out_cvt.scale));
    nvrt_wr(fw, CDP(D_DATOUT_SHIFTER), NVDLA_CDP_D_DATOUT_SHIFTER_0_DATOUT_SHIFTER(op->out_cvt.truncate));
    nvrt_wr(fw, CDP(D_FUNC_BYPASS),
            NVDLA_CDP_D_FUNC_BYPASS_0_SQSUM_BYPASS(op->bypass_sqsum
                                                       ? NVDLA_CDP_D_FUNC_BYPASS_0_SQSUM_BYPASS_ENABLE
                                                       : NVDLA_CDP_D_FUNC_BYPASS_0_SQSUM_BYPASS_DISABLE) |
                NVDLA_CDP_D_FUNC_BYPASS_0_MUL_BYPASS(op->bypass_out_mul
                                                         ? NVDLA_CDP_D_FUNC_BYPASS_0_MUL_BYPASS_ENABLE
                                                         : NVDLA_CDP_D_FUNC_BYPASS_0_MUL_BYPASS_DISABLE));
    nvrt_mark_input(fw, in, src);
    nvrt_mark_output(fw, out, dst);
    return fw->rc;
}

const struct nvrt_engine nvrt_cdp_engine = {
    .name = "CDP",
    .op_type = DLASIM_RT_OP_CDP,
    .pointer_reg = CDP(S_POINTER),
    .rdma_pointer_reg = CDP_RDMA(S_POINTER),
    .enable_param = "NVDLA_CDP_ENABLE",
    .set_producer = cdp_set_producer,
    .rdma_check = cdp_rdma_check,
    .is_ready = cdp_is_ready,
    .program = cdp_program,
    .validate = validate,
    .enable = cdp_enable,
};
