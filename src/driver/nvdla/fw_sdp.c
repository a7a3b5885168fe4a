/*
 * SDP programming for the firmware-equivalent executor.
 * ref: nvdla/sw kmd/firmware/sdp.c (processor_sdp_program, dla_sdp_enable,
 * dla_sdp_rdma_check, dla_sdp_is_ready): the same registers, values and
 * order, restated on the port and the generated packers.  The three stages
 * (X1 = BS, X2 = BN, Y = EW) share one encoder: their CFG and RDMA CFG
 * registers have the same field layout (checked at compile time).
 * Refusals: unknown enumerations, precisions the configuration lacks, LUT
 * index outside the network's LUT list, address indexes outside the list.
 */
#include <stdio.h>

#include "regs/gen/nvdla_regs.h"
#include "driver/nvdla/fw.h"

#define SDP(R) NVDLA_SDP_##R##_0
#define SDP_RDMA(R) NVDLA_SDP_RDMA_##R##_0

#define SAME_FIELD(A, B) _Static_assert(A##__SHIFT == B##__SHIFT && A##__MASK == B##__MASK, #A)
SAME_FIELD(NVDLA_SDP_D_DP_BS_CFG_0_BS_RELU_BYPASS, NVDLA_SDP_D_DP_EW_CFG_0_EW_LUT_BYPASS);
SAME_FIELD(NVDLA_SDP_D_DP_BS_CFG_0_BS_MUL_PRELU, NVDLA_SDP_D_DP_BN_CFG_0_BN_MUL_PRELU);
SAME_FIELD(NVDLA_SDP_D_DP_BS_CFG_0_BS_MUL_PRELU, NVDLA_SDP_D_DP_EW_CFG_0_EW_MUL_PRELU);
SAME_FIELD(NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_ALGO, NVDLA_SDP_D_DP_EW_CFG_0_EW_ALU_ALGO);
SAME_FIELD(NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_RAM_TYPE, NVDLA_SDP_RDMA_D_ERDMA_CFG_0_ERDMA_RAM_TYPE);
SAME_FIELD(NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE, NVDLA_SDP_RDMA_D_NRDMA_CFG_0_NRDMA_DATA_MODE);
SAME_FIELD(NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SRC, NVDLA_SDP_D_DP_BN_ALU_CFG_0_BN_ALU_SRC);
SAME_FIELD(NVDLA_SDP_D_DP_BS_MUL_CFG_0_BS_MUL_SHIFT_VALUE, NVDLA_SDP_D_DP_BN_MUL_CFG_0_BN_MUL_SHIFT_VALUE);

/* ref: sdp.c map_proc_precision[dst][src] */
static const uint8_t proc_precision[3][3] = { { 0, 0, 2 }, { 0, 1, 2 }, { 0, 1, 2 } };

static uint32_t ram_type(uint16_t mem_type)
{
    return mem_type == DLASIM_RT_MEM_MC ? NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE_MC
                                        : NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE_CV;
}

static uint32_t minus1(uint32_t v)
{
    return v ? v - 1 : 0;
}

static void sdp_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    nvrt_wr(fw, SDP(S_POINTER), NVDLA_SDP_S_POINTER_0_PRODUCER((uint32_t)group));
    nvrt_wr(fw, SDP_RDMA(S_POINTER), NVDLA_SDP_RDMA_S_POINTER_0_PRODUCER((uint32_t)rdma_group));
}

static void sdp_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    if (g->is_rdma_needed) {
        nvrt_wr(fw, SDP_RDMA(D_OP_ENABLE), NVDLA_SDP_RDMA_D_OP_ENABLE_0_OP_EN(1));
    }
    nvrt_wr(fw, SDP(D_OP_ENABLE), NVDLA_SDP_D_OP_ENABLE_0_OP_EN(1));
}

static int stage_reads_memory(const struct dlasim_rt_sdp_stage *s)
{
    return s->enable && s->mode != DLASIM_RT_SDP_PER_LAYER;
}

static void sdp_rdma_check(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_sdp_op *op = &d->op.sdp;
    int fly = d->surface.sdp.src_data.type == DLASIM_RT_MEM_HW;
    g->is_rdma_needed = !fly || stage_reads_memory(&op->x1_op) ||
                        stage_reads_memory(&op->x2_op) || stage_reads_memory(&op->y_op);
}

static int sdp_is_ready(struct nvrt_fw *fw, const struct nvrt_group *g,
                        const struct nvrt_group *other)
{
    return nvrt_lut_is_ready(nvrt_op_of(fw, g)->op.sdp.lut_index, other);
}

static int validate_stage(struct nvrt_fw *fw, const struct nvrt_group *g, const char *name,
                          const struct dlasim_rt_sdp_stage *s)
{
    char f[48];
    int rc = 0;
    /* the field's name is formatted only for the message of a value out of
     * range: this runs for every SDP operation of every inference */
#define CHECK(FIELD, LO, HI)                                                                  \
    if (!rc && ((long)s->FIELD < (LO) || (long)s->FIELD > (HI))) {                          \
        snprintf(f, sizeof f, "sdp_op.%s.%s", name, #FIELD);                                  \
        rc = nvrt_check_range(fw, g, f, s->FIELD, LO, HI);                                    \
    }
    CHECK(alu_type, 0, 3)
    CHECK(type, 0, 3)
    CHECK(mode, 0, 2)
    CHECK(act, 0, 3)
    CHECK(precision, 0, 2)
#undef CHECK
    return rc;
}

static int validate(struct nvrt_fw *fw, const struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_sdp_op *op = &d->op.sdp;
    const struct dlasim_rt_sdp_surface *s = &d->surface.sdp;
    int rc = nvrt_check_precision(fw, g, "sdp_op.src_precision", op->src_precision);
    rc = rc ? rc : nvrt_check_precision(fw, g, "sdp_op.dst_precision", op->dst_precision);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_op.batch_num", op->batch_num, 1, 32);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_op.conv_mode", op->conv_mode, 0, 0);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_op.lut_index", op->lut_index, -1,
                                    (long)fw->net->num_luts - 1);
    rc = rc ? rc : validate_stage(fw, g, "x1_op", &op->x1_op);
    rc = rc ? rc : validate_stage(fw, g, "x2_op", &op->x2_op);
    rc = rc ? rc : validate_stage(fw, g, "y_op", &op->y_op);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_surface.src_data.type", s->src_data.type, 0, 2);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_surface.dst_data.type", s->dst_data.type, 0, 2);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_surface.x1_data.type", s->x1_data.type, 0, 2);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_surface.x2_data.type", s->x2_data.type, 0, 2);
    rc = rc ? rc : nvrt_check_range(fw, g, "sdp_surface.y_data.type", s->y_data.type, 0, 2);
    return rc;
}

/* D_BRDMA_CFG / D_NRDMA_CFG / D_ERDMA_CFG (same layout) */
static uint32_t rdma_cfg(const struct dlasim_rt_sdp_stage *s, int rdma_on, uint16_t mem_type)
{
    static const uint8_t data_use[4] = { NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_MUL,
                                         NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_MUL,
                                         NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_ALU,
                                         NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_BOTH };
    uint32_t size = s->precision == DLASIM_RT_INT8
                        ? NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_SIZE_ONE_BYTE
                        : NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_SIZE_TWO_BYTE;
    uint32_t mode = s->mode == DLASIM_RT_SDP_PER_KERNEL
                        ? NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_KERNEL
                        : NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_ELEMENT;
    return NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DISABLE(rdma_on ? 0u : 1u) |
           NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE(data_use[s->type]) |
           NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_SIZE(size) |
           NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE(mode) |
           NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_RAM_TYPE(ram_type(mem_type));
}

struct stage_regs {
    uint32_t cfg, base_lo, base_hi, line, surf;
};

static void program_stage_rdma(struct nvrt_fw *fw, const struct stage_regs *r,
                               const struct dlasim_rt_sdp_stage *s, int on,
                               const struct dlasim_rt_cube *c, uint64_t addr)
{
    nvrt_wr(fw, r->cfg, rdma_cfg(s, on, c->type));
    if (on) {
        nvrt_wr(fw, r->base_lo, NVRT_LO32(addr));
        nvrt_wr(fw, r->base_hi, NVRT_HI32(addr));
        nvrt_wr(fw, r->line, c->line_stride);
        nvrt_wr(fw, r->surf, c->surf_stride);
    }
}

/* D_DP_BS_CFG / D_DP_BN_CFG / D_DP_EW_CFG; last = RELU_BYPASS or (EW) LUT_BYPASS */
static uint32_t stage_cfg(const struct dlasim_rt_sdp_stage *s, int last_on)
{
    int alu = s->type != DLASIM_RT_SDP_MUL && s->type != DLASIM_RT_SDP_NONE;
    int mul = s->type != DLASIM_RT_SDP_ADD && s->type != DLASIM_RT_SDP_NONE;
    return NVDLA_SDP_D_DP_BS_CFG_0_BS_BYPASS(s->enable ? 0u : 1u) |
           NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_BYPASS(alu ? 0u : 1u) |
           NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_ALGO(s->alu_type) |
           NVDLA_SDP_D_DP_BS_CFG_0_BS_MUL_BYPASS(mul ? 0u : 1u) |
           NVDLA_SDP_D_DP_BS_CFG_0_BS_MUL_PRELU(s->act == DLASIM_RT_ACT_PRELU) |
           NVDLA_SDP_D_DP_BS_CFG_0_BS_RELU_BYPASS(last_on ? 0u : 1u);
}

static uint32_t alu_src(const struct dlasim_rt_sdp_stage *s)
{
    return s->mode == DLASIM_RT_SDP_PER_LAYER ? NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SRC_REG
                                              : NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SRC_MEM;
}

/* X1 (BS) and X2 (BN): same registers, same rules */
struct bsbn_regs {
    uint32_t cfg, alu_cfg, alu_value, mul_value, mul_cfg;
};

static void program_bsbn(struct nvrt_fw *fw, const struct bsbn_regs *r,
                         const struct dlasim_rt_sdp_stage *s)
{
    nvrt_wr(fw, r->cfg, stage_cfg(s, s->act == DLASIM_RT_ACT_RELU));
    if (!s->enable) {
        return;
    }
    if (s->type == DLASIM_RT_SDP_ADD || s->type == DLASIM_RT_SDP_BOTH) {
        nvrt_wr(fw, r->alu_cfg, NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SRC(alu_src(s)) |
                                    NVDLA_SDP_D_DP_BS_ALU_CFG_0_BS_ALU_SHIFT_VALUE(s->shift_value));
    }
    if (s->mode == DLASIM_RT_SDP_PER_LAYER) {
        nvrt_wr(fw, r->alu_value, (uint32_t)s->alu_operand);
        nvrt_wr(fw, r->mul_value, (uint32_t)s->mul_operand);
    }
    nvrt_wr(fw, r->mul_cfg, NVDLA_SDP_D_DP_BS_MUL_CFG_0_BS_MUL_SRC(alu_src(s)) |
                                NVDLA_SDP_D_DP_BS_MUL_CFG_0_BS_MUL_SHIFT_VALUE(s->truncate));
}

static void program_ew(struct nvrt_fw *fw, const struct dlasim_rt_sdp_stage *s)
{
    nvrt_wr(fw, SDP(D_DP_EW_CFG), stage_cfg(s, s->act == DLASIM_RT_ACT_LUT));
    if (!s->enable) {
        return;
    }
    int per_layer = s->mode == DLASIM_RT_SDP_PER_LAYER;
    if (s->type == DLASIM_RT_SDP_ADD || s->type == DLASIM_RT_SDP_BOTH) {
        nvrt_wr(fw, SDP(D_DP_EW_ALU_CFG),
                NVDLA_SDP_D_DP_EW_ALU_CFG_0_EW_ALU_SRC(alu_src(s)) |
                    NVDLA_SDP_D_DP_EW_ALU_CFG_0_EW_ALU_CVT_BYPASS(s->alu_cvt.enable ? 0u : 1u));
        if (per_layer) {
            nvrt_wr(fw, SDP(D_DP_EW_ALU_SRC_VALUE), (uint32_t)s->alu_operand);
        } else {
            nvrt_wr(fw, SDP(D_DP_EW_ALU_CVT_OFFSET_VALUE), (uint32_t)s->alu_cvt.offset);
            nvrt_wr(fw, SDP(D_DP_EW_ALU_CVT_SCALE_VALUE), (uint32_t)(int32_t)s->alu_cvt.scale);
            nvrt_wr(fw, SDP(D_DP_EW_ALU_CVT_TRUNCATE_VALUE), s->alu_cvt.truncate);
        }
    }
    if (s->type == DLASIM_RT_SDP_MUL || s->type == DLASIM_RT_SDP_BOTH) {
        nvrt_wr(fw, SDP(D_DP_EW_MUL_CFG),
                NVDLA_SDP_D_DP_EW_MUL_CFG_0_EW_MUL_SRC(alu_src(s)) |
                    NVDLA_SDP_D_DP_EW_MUL_CFG_0_EW_MUL_CVT_BYPASS(s->mul_cvt.enable ? 0u : 1u));
        if (per_layer) {
            nvrt_wr(fw, SDP(D_DP_EW_MUL_SRC_VALUE), (uint32_t)s->mul_operand);
        } else {
            nvrt_wr(fw, SDP(D_DP_EW_MUL_CVT_OFFSET_VALUE), (uint32_t)s->mul_cvt.offset);
            nvrt_wr(fw, SDP(D_DP_EW_MUL_CVT_SCALE_VALUE), (uint32_t)(int32_t)s->mul_cvt.scale);
            nvrt_wr(fw, SDP(D_DP_EW_MUL_CVT_TRUNCATE_VALUE), s->mul_cvt.truncate);
        }
    }
    nvrt_wr(fw, SDP(D_DP_EW_TRUNCATE_VALUE), s->truncate);
}

struct sdp_addrs {
    uint64_t src, dst, x1, x2, y;
    int x1_on, x2_on, y_on;
};

static int stage_on(const struct dlasim_rt_sdp_stage *s)
{
    return s->enable && s->type != DLASIM_RT_SDP_NONE && s->mode != DLASIM_RT_SDP_PER_LAYER;
}

static int resolve_addresses(struct nvrt_fw *fw, const struct nvrt_group *g, struct sdp_addrs *a)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_sdp_op *op = &d->op.sdp;
    const struct dlasim_rt_sdp_surface *s = &d->surface.sdp;
    int rc = 0;
    a->x1_on = stage_on(&op->x1_op);
    a->x2_on = stage_on(&op->x2_op);
    a->y_on = stage_on(&op->y_op);
    if (s->src_data.type != DLASIM_RT_MEM_HW) {
        rc = nvrt_cube_address(fw, g->op, "sdp_surface.src_data", &s->src_data, &a->src);
    }
    if (!rc && s->dst_data.type != DLASIM_RT_MEM_HW) {
        rc = nvrt_cube_address(fw, g->op, "sdp_surface.dst_data", &s->dst_data, &a->dst);
    }
    if (!rc && a->x1_on) {
        rc = nvrt_cube_address(fw, g->op, "sdp_surface.x1_data", &s->x1_data, &a->x1);
    }
    if (!rc && a->x2_on) {
        rc = nvrt_cube_address(fw, g->op, "sdp_surface.x2_data", &s->x2_data, &a->x2);
    }
    if (!rc && a->y_on) {
        rc = nvrt_cube_address(fw, g->op, "sdp_surface.y_data", &s->y_data, &a->y);
    }
    return rc;
}

static void program_rdma(struct nvrt_fw *fw, const struct nvrt_group *g,
                         const struct sdp_addrs *a)
{
    static const struct stage_regs bs = { SDP_RDMA(D_BRDMA_CFG), SDP_RDMA(D_BS_BASE_ADDR_LOW),
                                          SDP_RDMA(D_BS_BASE_ADDR_HIGH), SDP_RDMA(D_BS_LINE_STRIDE),
                                          SDP_RDMA(D_BS_SURFACE_STRIDE) };
    static const struct stage_regs bn = { SDP_RDMA(D_NRDMA_CFG), SDP_RDMA(D_BN_BASE_ADDR_LOW),
                                          SDP_RDMA(D_BN_BASE_ADDR_HIGH), SDP_RDMA(D_BN_LINE_STRIDE),
                                          SDP_RDMA(D_BN_SURFACE_STRIDE) };
    static const struct stage_regs ew = { SDP_RDMA(D_ERDMA_CFG), SDP_RDMA(D_EW_BASE_ADDR_LOW),
                                          SDP_RDMA(D_EW_BASE_ADDR_HIGH), SDP_RDMA(D_EW_LINE_STRIDE),
                                          SDP_RDMA(D_EW_SURFACE_STRIDE) };
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_sdp_op *op = &d->op.sdp;
    const struct dlasim_rt_sdp_surface *s = &d->surface.sdp;
    int fly = s->src_data.type == DLASIM_RT_MEM_HW;
    nvrt_wr(fw, SDP_RDMA(D_DATA_CUBE_WIDTH), minus1(s->src_data.width));
    nvrt_wr(fw, SDP_RDMA(D_DATA_CUBE_HEIGHT), minus1(s->src_data.height));
    nvrt_wr(fw, SDP_RDMA(D_DATA_CUBE_CHANNEL), minus1(s->src_data.channel));
    if (!fly) {
        nvrt_wr(fw, SDP_RDMA(D_SRC_BASE_ADDR_LOW), NVRT_LO32(a->src));
        nvrt_wr(fw, SDP_RDMA(D_SRC_BASE_ADDR_HIGH), NVRT_HI32(a->src));
        nvrt_wr(fw, SDP_RDMA(D_SRC_LINE_STRIDE), s->src_data.line_stride);
        nvrt_wr(fw, SDP_RDMA(D_SRC_SURFACE_STRIDE), s->src_data.surf_stride);
        nvrt_wr(fw, SDP_RDMA(D_SRC_DMA_CFG), ram_type(s->src_data.type));
    }
    program_stage_rdma(fw, &bs, &op->x1_op, a->x1_on, &s->x1_data, a->x1);
    program_stage_rdma(fw, &bn, &op->x2_op, a->x2_on, &s->x2_data, a->x2);
    program_stage_rdma(fw, &ew, &op->y_op, a->y_on, &s->y_data, a->y);
}

static int sdp_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_sdp_op *op = &d->op.sdp;
    const struct dlasim_rt_sdp_surface *s = &d->surface.sdp;
    struct sdp_addrs a = { 0 };
    nvrt_enable_intr(fw, NVDLA_GLB_S_INTR_MASK_0_SDP_DONE_MASK1__MASK |
                             NVDLA_GLB_S_INTR_MASK_0_SDP_DONE_MASK0__MASK);
    int rc = validate(fw, g);
    rc = rc ? rc : resolve_addresses(fw, g, &a);
    if (rc) {
        return rc;
    }
    int fly = s->src_data.type == DLASIM_RT_MEM_HW;
    int out_dma = s->dst_data.type != DLASIM_RT_MEM_HW;
    uint32_t proc = proc_precision[op->dst_precision][op->src_precision];
    if (op->lut_index >= 0) {
        g->lut_index = op->lut_index;
    }
    /* all three read DMAs off first, then the mode (ref: sdp.c) */
    nvrt_wr(fw, SDP_RDMA(D_FEATURE_MODE_CFG),
            NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE(
                NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_OFF));
    nvrt_wr(fw, SDP_RDMA(D_BRDMA_CFG), NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DISABLE(1));
    nvrt_wr(fw, SDP_RDMA(D_NRDMA_CFG), NVDLA_SDP_RDMA_D_NRDMA_CFG_0_NRDMA_DISABLE(1));
    nvrt_wr(fw, SDP_RDMA(D_ERDMA_CFG), NVDLA_SDP_RDMA_D_ERDMA_CFG_0_ERDMA_DISABLE(1));
    nvrt_wr(fw, SDP_RDMA(D_FEATURE_MODE_CFG),
            NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE((uint32_t)fly) |
                NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_WINOGRAD(op->conv_mode == 1) |
                NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_IN_PRECISION(op->src_precision) |
                NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_OUT_PRECISION(op->dst_precision) |
                NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_PROC_PRECISION(proc) |
                NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_BATCH_NUMBER(minus1(op->batch_num)));
    if (g->is_rdma_needed) {
        program_rdma(fw, g, &a);
    }
    if (op->lut_index >= 0) {
        rc = nvrt_program_lut(fw, g, 1, op->lut_index, op->src_precision);
        if (rc) {
            return rc;
        }
    }
    nvrt_wr(fw, SDP(D_DATA_CUBE_WIDTH), minus1(s->src_data.width));
    nvrt_wr(fw, SDP(D_DATA_CUBE_HEIGHT), minus1(s->src_data.height));
    nvrt_wr(fw, SDP(D_DATA_CUBE_CHANNEL), minus1(s->src_data.channel));
    if (out_dma) {
        nvrt_wr(fw, SDP(D_DST_BASE_ADDR_HIGH), NVRT_HI32(a.dst));
        nvrt_wr(fw, SDP(D_DST_BASE_ADDR_LOW), NVRT_LO32(a.dst));
        nvrt_wr(fw, SDP(D_DST_LINE_STRIDE), s->dst_data.line_stride);
        nvrt_wr(fw, SDP(D_DST_SURFACE_STRIDE), s->dst_data.surf_stride);
    }
    static const struct bsbn_regs bs = { SDP(D_DP_BS_CFG), SDP(D_DP_BS_ALU_CFG),
                                         SDP(D_DP_BS_ALU_SRC_VALUE), SDP(D_DP_BS_MUL_SRC_VALUE),
                                         SDP(D_DP_BS_MUL_CFG) };
    static const struct bsbn_regs bn = { SDP(D_DP_BN_CFG), SDP(D_DP_BN_ALU_CFG),
                                         SDP(D_DP_BN_ALU_SRC_VALUE), SDP(D_DP_BN_MUL_SRC_VALUE),
                                         SDP(D_DP_BN_MUL_CFG) };
    program_bsbn(fw, &bs, &op->x1_op);
    program_bsbn(fw, &bn, &op->x2_op);
    program_ew(fw, &op->y_op);
    nvrt_wr(fw, SDP(D_FEATURE_MODE_CFG),
            NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE((uint32_t)fly) |
                NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST(s->dst_data.type == DLASIM_RT_MEM_HW) |
                NVDLA_SDP_D_FEATURE_MODE_CFG_0_WINOGRAD(op->conv_mode == 1) |
                NVDLA_SDP_D_FEATURE_MODE_CFG_0_BATCH_NUMBER(minus1(op->batch_num)));
    nvrt_wr(fw, SDP(D_DST_DMA_CFG), ram_type(s->dst_data.type));
    if (op->batch_num > 1) {
        nvrt_wr(fw, SDP(D_DST_BATCH_STRIDE), op->batch_stride);
    }
    nvrt_wr(fw, SDP(D_DATA_FORMAT), NVDLA_SDP_D_DATA_FORMAT_0_PROC_PRECISION(proc) |
                                        NVDLA_SDP_D_DATA_FORMAT_0_OUT_PRECISION(op->dst_precision));
    nvrt_wr(fw, SDP(D_CVT_OFFSET), (uint32_t)op->out_cvt.offset);
    nvrt_wr(fw, SDP(D_CVT_SCALE), (uint32_t)(int32_t)op->out_cvt.scale);
    nvrt_wr(fw, SDP(D_CVT_SHIFT), op->out_cvt.truncate);
    nvrt_mark_input(fw, a.src, &s->src_data);
    if (a.x1_on) {
        nvrt_mark_input(fw, a.x1, &s->x1_data);
    }
    if (a.x2_on) {
        nvrt_mark_input(fw, a.x2, &s->x2_data);
    }
    if (a.y_on) {
        nvrt_mark_input(fw, a.y, &s->y_data);
    }
    nvrt_mark_output(fw, a.dst, &s->dst_data);
    return fw->rc;
}

const struct nvrt_engine nvrt_sdp_engine = {
    .name = "SDP",
    .op_type = DLASIM_RT_OP_SDP,
    .pointer_reg = SDP(S_POINTER),
    .rdma_pointer_reg = SDP_RDMA(S_POINTER),
    .enable_param = NULL,
    .set_producer = sdp_set_producer,
    .rdma_check = sdp_rdma_check,
    .is_ready = sdp_is_ready,
    .program = sdp_program,
    .validate = validate,
    .enable = sdp_enable,
};
