/*
 * PDP programming for the firmware-equivalent executor.
 * ref: nvdla/sw kmd/firmware/pdp.c (processor_pdp_program, dla_pdp_enable,
 * dla_pdp_set_producer, dla_pdp_rdma_check): the same registers and values
 * in the same order; restated on the port and the generated packers.
 * Refusals: destination on the fly, strides outside 1..8, kernel sizes
 * outside 1..8, unknown pooling mode or precision, split_num > 1 on the fly.
 */
#include "regs/gen/nvdla_regs.h"
#include "driver/nvdla/fw.h"

#define PDP(R) NVDLA_PDP_##R##_0
#define PDP_RDMA(R) NVDLA_PDP_RDMA_##R##_0

/* ref: pdp.c recip_kernel_size: 1/k in 0.16 fixed point (int8/int16) and FP16 */
static const uint32_t recip_kernel[2][8] = {
    { 0x10000, 0x8000, 0x5555, 0x4000, 0x3333, 0x2aaa, 0x2492, 0x2000 },
    { 0x7c00, 0x7800, 0x7555, 0x7400, 0x7266, 0x7155, 0x7092, 0x7000 },
};

static uint32_t ram_type(uint16_t mem_type)
{
    return mem_type == DLASIM_RT_MEM_MC ? NVDLA_PDP_D_DST_RAM_CFG_0_DST_RAM_TYPE_MC
                                        : NVDLA_PDP_D_DST_RAM_CFG_0_DST_RAM_TYPE_CV;
}

static uint32_t minus1(uint32_t v)
{
    return v ? v - 1 : 0;
}

static void pdp_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    nvrt_wr(fw, PDP(S_POINTER), NVDLA_PDP_S_POINTER_0_PRODUCER((uint32_t)group));
    nvrt_wr(fw, PDP_RDMA(S_POINTER), NVDLA_PDP_RDMA_S_POINTER_0_PRODUCER((uint32_t)rdma_group));
}

static void pdp_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    if (g->is_rdma_needed) {
        nvrt_wr(fw, PDP_RDMA(D_OP_ENABLE), NVDLA_PDP_RDMA_D_OP_ENABLE_0_OP_EN(1));
    }
    nvrt_wr(fw, PDP(D_OP_ENABLE), NVDLA_PDP_D_OP_ENABLE_0_OP_EN(1));
}

static void pdp_rdma_check(struct nvrt_fw *fw, struct nvrt_group *g)
{
    g->is_rdma_needed = nvrt_op_of(fw, g)->surface.io.src_data.type != DLASIM_RT_MEM_HW;
}

static int pdp_is_ready(struct nvrt_fw *fw, const struct nvrt_group *g,
                        const struct nvrt_group *other)
{
    (void)fw, (void)g, (void)other;
    return 1;
}

static int validate(struct nvrt_fw *fw, const struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_pdp_op *op = &d->op.pdp;
    const struct dlasim_rt_io_surface *s = &d->surface.io;
    int rc = nvrt_check_range(fw, g, "pdp_surface.dst_data.type", s->dst_data.type, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_surface.src_data.type", s->src_data.type, 0, 2);
    rc = rc ? rc : nvrt_check_precision(fw, g, "pdp_op.precision", op->precision);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_op.stride_x", op->stride_x, 1, 8);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_op.stride_y", op->stride_y, 1, 8);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_op.split_num", op->split_num, 1, 255);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_op.pool_width", op->pool_width, 0, 7);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_op.pool_height", op->pool_height, 0, 7);
    rc = rc ? rc : nvrt_check_range(fw, g, "pdp_op.pool_mode", op->pool_mode, 0, 2);
    if (!rc && s->src_data.type == DLASIM_RT_MEM_HW) {
        rc = nvrt_check_range(fw, g, "pdp_op.split_num (on the fly)", op->split_num, 1, 1);
    }
    return rc;
}

static uint32_t partial_in(const struct dlasim_rt_pdp_op *op)
{
    return NVDLA_PDP_D_PARTIAL_WIDTH_IN_0_PARTIAL_WIDTH_IN_FIRST(minus1(op->partial_in_width_first)) |
           NVDLA_PDP_D_PARTIAL_WIDTH_IN_0_PARTIAL_WIDTH_IN_MID(minus1(op->partial_in_width_mid)) |
           NVDLA_PDP_D_PARTIAL_WIDTH_IN_0_PARTIAL_WIDTH_IN_LAST(minus1(op->partial_in_width_last));
}

static void program_rdma(struct nvrt_fw *fw, const struct dlasim_rt_pdp_op *op,
                         const struct dlasim_rt_cube *src, uint64_t in)
{
    nvrt_wr(fw, PDP_RDMA(D_DATA_CUBE_IN_WIDTH), minus1(src->width));
    nvrt_wr(fw, PDP_RDMA(D_DATA_CUBE_IN_HEIGHT), minus1(src->height));
    nvrt_wr(fw, PDP_RDMA(D_DATA_CUBE_IN_CHANNEL), minus1(src->channel));
    nvrt_wr(fw, PDP_RDMA(D_SRC_BASE_ADDR_HIGH), NVRT_HI32(in));
    nvrt_wr(fw, PDP_RDMA(D_SRC_BASE_ADDR_LOW), NVRT_LO32(in));
    nvrt_wr(fw, PDP_RDMA(D_SRC_LINE_STRIDE), src->line_stride);
    nvrt_wr(fw, PDP_RDMA(D_SRC_SURFACE_STRIDE), src->surf_stride);
    nvrt_wr(fw, PDP_RDMA(D_DATA_FORMAT), NVDLA_PDP_RDMA_D_DATA_FORMAT_0_INPUT_DATA(op->precision));
    nvrt_wr(fw, PDP_RDMA(D_SRC_RAM_CFG), ram_type(src->type));
    nvrt_wr(fw, PDP_RDMA(D_OPERATION_MODE_CFG),
            NVDLA_PDP_RDMA_D_OPERATION_MODE_CFG_0_SPLIT_NUM(minus1(op->split_num)));
    nvrt_wr(fw, PDP_RDMA(D_POOLING_KERNEL_CFG),
            NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH(op->pool_width) |
                NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG_0_KERNEL_STRIDE_WIDTH(minus1(op->stride_x)));
    nvrt_wr(fw, PDP_RDMA(D_POOLING_PADDING_CFG),
            NVDLA_PDP_RDMA_D_POOLING_PADDING_CFG_0_PAD_WIDTH(op->pad_left));
    nvrt_wr(fw, PDP_RDMA(D_PARTIAL_WIDTH_IN), partial_in(op));
}

static int pdp_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_pdp_op *op = &d->op.pdp;
    const struct dlasim_rt_cube *src = &d->surface.io.src_data, *dst = &d->surface.io.dst_data;
    uint64_t in = 0, out = 0;
    nvrt_enable_intr(fw, NVDLA_GLB_S_INTR_MASK_0_PDP_DONE_MASK1__MASK |
                             NVDLA_GLB_S_INTR_MASK_0_PDP_DONE_MASK0__MASK);
    int rc = validate(fw, g);
    if (!rc && src->type != DLASIM_RT_MEM_HW) {
        rc = nvrt_cube_address(fw, g->op, "pdp_surface.src_data", src, &in);
    }
    if (!rc && dst->address != -1) {
        rc = nvrt_cube_address(fw, g->op, "pdp_surface.dst_data", dst, &out);
    }
    if (rc) {
        return rc;
    }
    if (src->type != DLASIM_RT_MEM_HW) {
        program_rdma(fw, op, src, in);
    }
    nvrt_wr(fw, PDP(D_DATA_CUBE_IN_WIDTH), minus1(src->width));
    nvrt_wr(fw, PDP(D_DATA_CUBE_IN_HEIGHT), minus1(src->height));
    nvrt_wr(fw, PDP(D_DATA_CUBE_IN_CHANNEL), minus1(src->channel));
    nvrt_wr(fw, PDP(D_DATA_CUBE_OUT_WIDTH), minus1(dst->width));
    nvrt_wr(fw, PDP(D_DATA_CUBE_OUT_HEIGHT), minus1(dst->height));
    nvrt_wr(fw, PDP(D_DATA_CUBE_OUT_CHANNEL), minus1(dst->channel));
    uint32_t fly = src->type == DLASIM_RT_MEM_HW
                       ? NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_ON_FLYING
                       : NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_OFF_FLYING;
    nvrt_wr(fw, PDP(D_OPERATION_MODE_CFG),
            NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD(op->pool_mode) |
                NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE(fly) |
                NVDLA_PDP_D_OPERATION_MODE_CFG_0_SPLIT_NUM(minus1(op->split_num)));
    nvrt_wr(fw, PDP(D_PARTIAL_WIDTH_IN), partial_in(op));
    nvrt_wr(fw, PDP(D_PARTIAL_WIDTH_OUT),
            NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0_PARTIAL_WIDTH_OUT_FIRST(minus1(op->partial_width_first)) |
                NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0_PARTIAL_WIDTH_OUT_MID(minus1(op->partial_width_mid)) |
                NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0_PARTIAL_WIDTH_OUT_LAST(minus1(op->partial_width_last)));
    nvrt_wr(fw, PDP(D_POOLING_KERNEL_CFG),
            NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH(op->pool_width) |
                NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_HEIGHT(op->pool_height) |
                NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_STRIDE_WIDTH(minus1(op->stride_x)) |
                NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_STRIDE_HEIGHT(minus1(op->stride_y)));
    int fp16 = op->precision == DLASIM_RT_FP16;
    nvrt_wr(fw, PDP(D_RECIP_KERNEL_WIDTH), recip_kernel[fp16][op->pool_width]);
    nvrt_wr(fw, PDP(D_RECIP_KERNEL_HEIGHT), recip_kernel[fp16][op->pool_height]);
    nvrt_wr(fw, PDP(D_POOLING_PADDING_CFG),
            NVDLA_PDP_D_POOLING_PADDING_CFG_0_PAD_LEFT(op->pad_left) |
                NVDLA_PDP_D_POOLING_PADDING_CFG_0_PAD_RIGHT(op->pad_right) |
                NVDLA_PDP_D_POOLING_PADDING_CFG_0_PAD_TOP(op->pad_top) |
                NVDLA_PDP_D_POOLING_PADDING_CFG_0_PAD_BOTTOM(op->pad_bottom));
    static const uint32_t pad_regs[7] = {
        PDP(D_POOLING_PADDING_VALUE_1_CFG), PDP(D_POOLING_PADDING_VALUE_2_CFG),
        PDP(D_POOLING_PADDING_VALUE_3_CFG), PDP(D_POOLING_PADDING_VALUE_4_CFG),
        PDP(D_POOLING_PADDING_VALUE_5_CFG), PDP(D_POOLING_PADDING_VALUE_6_CFG),
        PDP(D_POOLING_PADDING_VALUE_7_CFG),
    };
    for (int i = 0; i < 7; i++) {
        nvrt_wr(fw, pad_regs[i], (uint32_t)op->padding_value[i]);
    }
    if (src->type != DLASIM_RT_MEM_HW) {
        nvrt_wr(fw, PDP(D_SRC_LINE_STRIDE), src->line_stride);
        nvrt_wr(fw, PDP(D_SRC_SURFACE_STRIDE), src->surf_stride);
    }
    nvrt_wr(fw, PDP(D_DST_BASE_ADDR_LOW), NVRT_LO32(out));
    nvrt_wr(fw, PDP(D_DST_BASE_ADDR_HIGH), NVRT_HI32(out));
    nvrt_wr(fw, PDP(D_DST_LINE_STRIDE), dst->line_stride);
    nvrt_wr(fw, PDP(D_DST_SURFACE_STRIDE), dst->surf_stride);
    nvrt_wr(fw, PDP(D_DST_RAM_CFG), NVDLA_PDP_D_DST_RAM_CFG_0_DST_RAM_TYPE(ram_type(dst->type)));
    nvrt_wr(fw, PDP(D_DATA_FORMAT), NVDLA_PDP_D_DATA_FORMAT_0_INPUT_DATA(op->precision));
    nvrt_mark_input(fw, in, src);
    nvrt_mark_output(fw, out, dst);
    return fw->rc;
}

const struct nvrt_engine nvrt_pdp_engine = {
    .name = "PDP",
    .op_type = DLASIM_RT_OP_PDP,
    .pointer_reg = PDP(S_POINTER),
    .rdma_pointer_reg = PDP_RDMA(S_POINTER),
    .enable_param = "NVDLA_PDP_ENABLE",
    .set_producer = pdp_set_producer,
    .rdma_check = pdp_rdma_check,
    .is_ready = pdp_is_ready,
    .program = pdp_program,
    .validate = validate,
    .enable = pdp_enable,
};
