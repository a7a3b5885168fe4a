/*
 * BDMA and RUBIK programming for the firmware-equivalent executor.
 * ref: nvdla/sw kmd/firmware/bdma.c (dla_bdma_program,
 * processor_bdma_program_slot, dla_bdma_enable, dla_bdma_is_ready): one
 * CFG_* register set per transfer queued with CFG_OP, launched per group.
 * An operation without transfers completes without the hardware.
 * RUBIK: refused (not yet written in this runtime; the device models it).
 */
#include "regs/gen/nvdla_regs.h"
#include "runtime/fw.h"

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
    if (fw->port->mark_input) {
        fw->port->mark_input(fw->port->ctx, src, (uint64_t)t->source_surface * t->surface_repeat);
    }
    if (fw->port->mark_output) {
        fw->port->mark_output(fw->port->ctx, dst,
                              (uint64_t)t->destination_surface * t->surface_repeat);
    }
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

/* ---- RUBIK ----------------------------------------------------------------------- */

static void rubik_set_producer(struct nvrt_fw *fw, int group, int rdma_group)
{
    (void)rdma_group;
    nvrt_wr(fw, NVDLA_RBK_S_POINTER_0, NVDLA_RBK_S_POINTER_0_PRODUCER((uint32_t)group));
}

static void rubik_enable(struct nvrt_fw *fw, struct nvrt_group *g)
{
    (void)g;
    nvrt_wr(fw, NVDLA_RBK_D_OP_ENABLE_0, NVDLA_RBK_D_OP_ENABLE_0_OP_EN(1));
}

static int rubik_program(struct nvrt_fw *fw, struct nvrt_group *g)
{
    return nvrt_fail(fw, DLASIM_ERR_UNSUPPORTED,
                     "operation %d (RUBIK): rubik_op mode %u: RUBIK operations are not yet "
                     "programmed by this runtime",
                     g->op, nvrt_op_of(fw, g)->op.rubik.mode);
}

const struct nvrt_engine nvrt_rubik_engine = {
    .name = "RUBIK",
    .op_type = DLASIM_RT_OP_RUBIK,
    .pointer_reg = NVDLA_RBK_S_POINTER_0,
    .rdma_pointer_reg = 0,
    .enable_param = "NVDLA_RUBIK_ENABLE",
    .set_producer = rubik_set_producer,
    .rdma_check = bdma_rdma_check,
    .is_ready = bdma_is_ready,
    .program = rubik_program,
    .enable = rubik_enable,
};
