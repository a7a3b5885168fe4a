/*
 * BDMA and RUBIK programming for the firmware-equivalent executor.
 * ref: nvdla/sw kmd/firmware/bdma.c (dla_bdma_program,
 * processor_bdma_program_slot, dla_bdma_enable, dla_bdma_is_ready): one
 * CFG_* register set per transfer queued with CFG_OP, launched per group.
 * An operation without transfers completes without the hardware.
 * RUBIK programming (rubik.c facts) is at the end of this file.
 */
#include "regs/gen/nvdla_regs.h"
#include "driver/nvdla/fw.h"

#define BDMA(R) NVDLA_BDMA_##R##_0
#define SLOT_POLLS 1000

static void bdma_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    (void)fw, (void)group, (void)rdma_group; /* BDMA has no pointer register */
}

static void bdma_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    if (nvrt_op_of(fw, g)->surface.bdma.num_transfers == 0) {
        g->events |= 1u << DLASIM_RT_EVENT_OP_COMPLETED;
        return;
    }
    if (g->id == 0) {
        nvrt_wr(fw, BDMA(CFG_LAUNCH0), NVDLA_BDMA_CFG_LAUNCH0_0_GRP0_LAUNCH(1));
    } else {
        nvrt_wr(fw, BDMA(CFG_LAUNCH1), NVDLA_BDMA_CFG_LAUNCH1_0_GRP1_LAUNCH(1));
    }
}

static void bdma_rdma_check(struct nvrt_fw *fw, struct nvrt_group *g)
{
    (void)fw;
    g->is_rdma_needed = 0;
}

/* ref: bdma.c dla_bdma_is_ready: wait while the other group holds an op
 * that is not running yet (transfers are queued in order) */
static int bdma_is_ready(struct nvrt_fw *fw, const struct nvrt_group *g,
                         const struct nvrt_group *other)
{
    (void)g;
    return !(other->op >= 0 && fw->proc[DLASIM_RT_OP_BDMA].group_status & (1u << other->id) &&
             !other->active);
}

static uint32_t ram(uint8_t type)
{
    return type == DLASIM_RT_MEM_MC ? NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE_MC
                                    : NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE_CVSRAM;
}

static int check_transfer(struct nvrt_fw *fw, const struct nvrt_group *g,
                          const struct dlasim_rt_bdma_transfer *t)
{
    int rc = nvrt_check_range(fw, g, "bdma transfer line_repeat", t->line_repeat, 1, 8192);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer surface_repeat", t->surface_repeat, 1, 8192);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer line_size", t->line_size, 32, 0x7fffffff);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer line_size % 32", t->line_size % 32, 0, 0);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer source_line", t->source_line, t->line_size, 0xffffffffL);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer destination_line", t->destination_line, t->line_size, 0xffffffffL);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer source_surface", t->source_surface,
                                    (long)((uint64_t)t->source_line * t->line_repeat), 0xffffffffL);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma transfer destination_surface", t->destination_surface,
                                    (long)((uint64_t)t->destination_line * t->line_repeat), 0xffffffffL);
    return rc;
}

static int program_slot(struct nvrt_fw *fw, const struct nvrt_group *g,
                        const struct dlasim_rt_bdma_surface *s, const struct dlasim_rt_bdma_transfer *t)
{
    int polls = 0;
    while (!((nvrt_rd(fw, BDMA(STATUS)) & NVDLA_BDMA_STATUS_0_FREE_SLOT__MASK))) {
        if (fw->rc || ++polls == SLOT_POLLS) {
            return nvrt_fail(fw, DLASIM_ERR_TIMEOUT, "operation %d (BDMA): no free transfer slot", g->op);
        }
    }
    uint64_t src = 0, dst = 0;
    int rc = nvrt_address(fw, g->op, "bdma transfer source", t->source_address, &src);
    rc = rc ? rc : nvrt_address(fw, g->op, "bdma transfer destination", t->destination_address, &dst);
    rc = rc ? rc : check_transfer(fw, g, t);
    if (rc) {
        return rc;
    }
    nvrt_wr(fw, BDMA(CFG_SRC_ADDR_LOW), NVRT_LO32(src));
    nvrt_wr(fw, BDMA(CFG_SRC_ADDR_HIGH), NVRT_HI32(src));
    nvrt_wr(fw, BDMA(CFG_DST_ADDR_LOW), NVRT_LO32(dst));
    nvrt_wr(fw, BDMA(CFG_DST_ADDR_HIGH), NVRT_HI32(dst));
    nvrt_wr(fw, BDMA(CFG_LINE), (t->line_size >> 5) - 1);
    nvrt_wr(fw, BDMA(CFG_CMD), NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE(ram(s->source_type)) |
                                   NVDLA_BDMA_CFG_CMD_0_DST_RAM_TYPE(ram(s->destination_type)));
    nvrt_wr(fw, BDMA(CFG_LINE_REPEAT), t->line_repeat - 1);
    nvrt_wr(fw, BDMA(CFG_SRC_LINE), t->source_line);
    nvrt_wr(fw, BDMA(CFG_DST_LINE), t->destination_line);
    nvrt_wr(fw, BDMA(CFG_SURF_REPEAT), t->surface_repeat - 1);
    nvrt_wr(fw, BDMA(CFG_SRC_SURF), t->source_surface);
    nvrt_wr(fw, BDMA(CFG_DST_SURF), t->destination_surface);
    nvrt_wr(fw, BDMA(CFG_OP), NVDLA_BDMA_CFG_OP_0_EN(1));
    nvrt_mark_range(fw, 0, src, (uint64_t)t->source_surface * t->surface_repeat);
    nvrt_mark_range(fw, 1, dst, (uint64_t)t->destination_surface * t->surface_repeat);
    return fw->rc;
}

static int bdma_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_bdma_surface *s = &nvrt_op_of(fw, g)->surface.bdma;
    int rc = nvrt_check_range(fw, g, "bdma_surface.num_transfers", s->num_transfers, 0,
                              DLASIM_RT_BDMA_MAX_TRANSFERS);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma_surface.source_type", s->source_type, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "bdma_surface.destination_type", s->destination_type, 0, 1);
    for (uint16_t i = 0; !rc && i < s->num_transfers; i++) {
        rc = program_slot(fw, g, s, &s->transfers[i]);
    }
    if (!rc && s->num_transfers) {
        nvrt_enable_intr(fw, NVDLA_GLB_S_INTR_MASK_0_BDMA_DONE_MASK1__MASK |
                                 NVDLA_GLB_S_INTR_MASK_0_BDMA_DONE_MASK0__MASK);
    }
    return rc ? rc : fw->rc;
}

const struct nvrt_engine nvrt_bdma_engine = {
    .name = "BDMA",
    .op_type = DLASIM_RT_OP_BDMA,
    .pointer_reg = BDMA(STATUS),
    .rdma_pointer_reg = 0,
    .enable_param = "NVDLA_BDMA_ENABLE",
    .set_producer = bdma_set_producer,
    .rdma_check = bdma_rdma_check,
    .is_ready = bdma_is_ready,
    .program = bdma_program,
    .enable = bdma_enable,
};

/* ---- RUBIK --------------------------------------------------------------------
 * ref: nvdla/sw kmd/firmware/rubik.c (processor_rubik_program,
 * dla_rubik_enable): contract (deconvolution reorder), split, merge.
 * Refusals: source or destination on the fly, merge without a 32-byte
 * aligned plane stride, unknown mode or precision. */

#define RBK(R) NVDLA_RBK_##R##_0

static void rubik_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    (void)rdma_group;
    nvrt_wr(fw, RBK(S_POINTER), NVDLA_RBK_S_POINTER_0_PRODUCER((uint32_t)group));
}

static void rubik_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    (void)g;
    nvrt_wr(fw, RBK(D_OP_ENABLE), NVDLA_RBK_D_OP_ENABLE_0_OP_EN(1));
}

static int rubik_is_ready(struct nvrt_fw *fw, const struct nvrt_group *g,
                          const struct nvrt_group *other)
{
    (void)fw, (void)g, (void)other;
    return 1;
}

static uint32_t rbk_ram(uint16_t type)
{
    return type == DLASIM_RT_MEM_MC ? NVDLA_RBK_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_MCIF
                                    : NVDLA_RBK_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_CVIF;
}

static int rubik_validate(struct nvrt_fw *fw, const struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_rubik_op *op = &d->op.rubik;
    const struct dlasim_rt_cube *src = &d->surface.io.src_data, *dst = &d->surface.io.dst_data;
    int rc = nvrt_check_range(fw, g, "rubik_surface.src_data.type", src->type, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "rubik_surface.dst_data.type", dst->type, 0, 1);
    rc = rc ? rc : nvrt_check_range(fw, g, "rubik_op.mode", op->mode, 0, 2);
    rc = rc ? rc : nvrt_check_precision(fw, g, "rubik_op.precision", op->precision);
    if (!rc && op->mode == 0) {
        rc = nvrt_check_range(fw, g, "rubik_op.stride_x", op->stride_x, 1, 32);
        rc = rc ? rc : nvrt_check_range(fw, g, "rubik_op.stride_y", op->stride_y, 1, 32);
    }
    if (!rc && op->mode == 2 && (src->plane_stride == 0 || src->plane_stride % 32)) {
        rc = nvrt_fail(fw, DLASIM_ERR_INVAL,
                       "operation %d (RUBIK): rubik_surface.src_data.plane_stride=%u: merge "
                       "needs a non-zero multiple of 32",
                       g->op, src->plane_stride);
    }
    return rc;
}

static int rubik_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    const struct dlasim_rt_op *d = nvrt_op_of(fw, g);
    const struct dlasim_rt_rubik_op *op = &d->op.rubik;
    const struct dlasim_rt_cube *src = &d->surface.io.src_data, *dst = &d->surface.io.dst_data;
    uint64_t in = 0, out = 0;
    nvrt_enable_intr(fw, NVDLA_GLB_S_INTR_MASK_0_RUBIK_DONE_MASK1__MASK |
                             NVDLA_GLB_S_INTR_MASK_0_RUBIK_DONE_MASK0__MASK);
    int rc = rubik_validate(fw, g);
    rc = rc ? rc : nvrt_cube_address(fw, g->op, "rubik_surface.src_data", src, &in);
    rc = rc ? rc : nvrt_cube_address(fw, g->op, "rubik_surface.dst_data", dst, &out);
    if (rc) {
        return rc;
    }
    nvrt_wr(fw, RBK(D_MISC_CFG), NVDLA_RBK_D_MISC_CFG_0_RUBIK_MODE(op->mode) |
                                     NVDLA_RBK_D_MISC_CFG_0_IN_PRECISION(op->precision));
    nvrt_wr(fw, RBK(D_DAIN_RAM_TYPE), NVDLA_RBK_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE(rbk_ram(src->type)));
    nvrt_wr(fw, RBK(D_DATAIN_SIZE_0), NVDLA_RBK_D_DATAIN_SIZE_0_0_DATAIN_WIDTH(src->width ? src->width - 1u : 0) |
                                          NVDLA_RBK_D_DATAIN_SIZE_0_0_DATAIN_HEIGHT(src->height ? src->height - 1u : 0));
    nvrt_wr(fw, RBK(D_DATAIN_SIZE_1), NVDLA_RBK_D_DATAIN_SIZE_1_0_DATAIN_CHANNEL(src->channel ? src->channel - 1u : 0));
    nvrt_wr(fw, RBK(D_DAIN_ADDR_LOW), NVRT_LO32(in));
    nvrt_wr(fw, RBK(D_DAIN_ADDR_HIGH), NVRT_HI32(in));
    if (op->mode == 2) {
        nvrt_wr(fw, RBK(D_DAIN_PLANAR_STRIDE), src->plane_stride);
    } else {
        nvrt_wr(fw, RBK(D_DAIN_SURF_STRIDE), src->surf_stride);
    }
    nvrt_wr(fw, RBK(D_DAIN_LINE_STRIDE), src->line_stride);
    nvrt_wr(fw, RBK(D_DAOUT_RAM_TYPE), NVDLA_RBK_D_DAOUT_RAM_TYPE_0_DATAOUT_RAM_TYPE(rbk_ram(dst->type)));
    nvrt_wr(fw, RBK(D_DATAOUT_SIZE_1), NVDLA_RBK_D_DATAOUT_SIZE_1_0_DATAOUT_CHANNEL(dst->channel ? dst->channel - 1u : 0));
    nvrt_wr(fw, RBK(D_DAOUT_ADDR_LOW), NVRT_LO32(out));
    nvrt_wr(fw, RBK(D_DAOUT_ADDR_HIGH), NVRT_HI32(out));
    nvrt_wr(fw, RBK(D_DAOUT_LINE_STRIDE), dst->line_stride);
    if (op->mode != 1) {
        nvrt_wr(fw, RBK(D_DAOUT_SURF_STRIDE), dst->surf_stride);
        if (op->mode == 0) {
            uint32_t bpe = op->precision == DLASIM_RT_INT8 ? 1 : 2;
            nvrt_wr(fw, RBK(D_CONTRACT_STRIDE_0),
                    ((dst->channel * bpe + 31) >> 5) * src->surf_stride);
            nvrt_wr(fw, RBK(D_CONTRACT_STRIDE_1), (uint32_t)op->stride_y * dst->line_stride);
            nvrt_wr(fw, RBK(D_DECONV_STRIDE),
                    NVDLA_RBK_D_DECONV_STRIDE_0_DECONV_X_STRIDE(op->stride_x - 1u) |
                        NVDLA_RBK_D_DECONV_STRIDE_0_DECONV_Y_STRIDE(op->stride_y - 1u));
        }
    } else {
        nvrt_wr(fw, RBK(D_DAOUT_PLANAR_STRIDE), dst->plane_stride);
    }
    nvrt_mark_input(fw, in, src);
    nvrt_mark_output(fw, out, dst);
    return fw->rc;
}

const struct nvrt_engine nvrt_rubik_engine = {
    .name = "RUBIK",
    .op_type = DLASIM_RT_OP_RUBIK,
    .pointer_reg = RBK(S_POINTER),
    .rdma_pointer_reg = 0,
    .enable_param = "NVDLA_RUBIK_ENABLE",
    .set_producer = rubik_set_producer,
    .rdma_check = bdma_rdma_check,
    .is_ready = rubik_is_ready,
    .program = rubik_program,
    .validate = rubik_validate,
    .enable = rubik_enable,
};
