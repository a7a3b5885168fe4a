/*
 * BDMA — bridge DMA: copies cubes of lines between the two memory interfaces
 * (MCIF/DBB and CVIF/SRAM) or within one, bit-exact with NVDLA's RTL.
 * Present only where NVDLA_BDMA_ENABLE is set (nv_large; not nv_small).
 *
 * CSB window 0x10000-0x10fff, all registers single (no S_POINTER, no
 * D_OP_ENABLE).  Interrupts: GLB S_INTR_STATUS BDMA_DONE_STATUS0/1, one per
 * launched group.  Memory ports: reads through CFG_CMD.SRC_RAM_TYPE, writes
 * through CFG_CMD.DST_RAM_TYPE (0 = CVIF, 1 = MCIF/DBB).
 *
 * Programming model (ref: vmod/nvdla/bdma/NV_NVDLA_BDMA_csb.v, _load.v,
 * _store.v; kmd/firmware/bdma.c of nvdla/sw):
 *   - A write of CFG_OP_0 with EN=1 pushes the transfer described by the
 *     CFG_* registers at that moment into a 20-entry command FIFO
 *     (STATUS_0.FREE_SLOT = 20 - entries).  A push into a full FIFO is lost
 *     (the RTL asserts "memory copy command is dropped"); logged as a guest
 *     error.  EN=0 does nothing.
 *   - A write of CFG_LAUNCH0_0.GRP0_LAUNCH=1 (CFG_LAUNCH1_0.GRP1_LAUNCH=1)
 *     launches every transfer pushed since the previous launch as group 0
 *     (1) and sets STATUS_0.GRP0_BUSY (GRP1_BUSY).  The last transfer of the
 *     group carries the interrupt: when its last write is acknowledged,
 *     GRPn_BUSY clears and BDMA_DONE_STATUSn is raised.  A launch with no
 *     transfer pushed since the previous one sets GRPn_BUSY and nothing else
 *     (no transfer, no interrupt: launch_count stays 0 in the RTL).
 *   - STATUS_0.IDLE = FIFO empty and nothing in flight: transfers pushed but
 *     not launched keep BDMA non-idle.
 *   - Each launched group is one layer for the device (LAYER_BDMA); groups
 *     run in launch order, transfers in push order.
 *
 * One transfer (ref: NV_NVDLA_BDMA_load.v address generation, BdmaCore.cpp):
 *   line bytes L = (CFG_LINE.SIZE + 1) * 32, lines N = LINE_REPEAT.NUMBER + 1,
 *   surfaces S = SURF_REPEAT.NUMBER + 1; line n of surface s is read at
 *   SRC + s * SRC_SURF.STRIDE + n * SRC_LINE.STRIDE and written at
 *   DST + s * DST_SURF.STRIDE + n * DST_LINE.STRIDE (64-bit addresses, byte
 *   strides = register & ~31, the low 5 address bits are not stored).
 *
 * Illegal programming refused with DLASIM_ERR_PROG (the whole group is then
 * retired with its interrupt, as for any failing layer):
 *   - LINE_REPEAT.NUMBER or SURF_REPEAT.NUMBER > 8191: the load side counts
 *     24 bits but only 13 bits travel to the store side (ld2st_wr_pd), so
 *     reads and writes would disagree (kmd firmware limits both to 8192).
 *
 * Status registers: STATUS_0 is maintained here (dla_reg_hw_set).
 * STATUS_GRP0/1_READ_STALL and _WRITE_STALL stay 0: modelled memory never
 * stalls (and the RTL clears them at each group's completion when
 * CFG_STATUS.STALL_COUNT_EN is set).
 *
 * Modelling choices:
 *   - The hardware streams reads ahead of writes; when source and destination
 *     overlap the result depends on timing.  The model reads a run of up to
 *     BDMA_RUN_BYTES of contiguous lines, then writes it, in order.
 *   - The RTL accepts one launch while another group is executing and asserts
 *     on a third; the model queues any number of launched groups.  In the RTL
 *     a launch waiting behind a running group takes its transfer count when
 *     it is accepted (gather_count), so transfers pushed meanwhile join it;
 *     the model takes the count at the CFG_LAUNCH write (the order a driver
 *     that waits for each group's interrupt observes).
 */
#include "sim/core/budget.h"
#include "sim/nvdla/dla.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Command FIFO depth (ref: NV_NVDLA_BDMA_csb.v, FREE_SLOT = 20 - count). */
#define BDMA_SLOTS 20u
/* Largest run of contiguous lines copied through one host buffer. */
#define BDMA_RUN_BYTES (1u << 20)
/* Largest LINE/SURF_REPEAT.NUMBER the store side can count (13 bits). */
#define BDMA_MAX_REPEAT 8191u

/* One queued transfer: the CFG_* registers captured at the CFG_OP write. */
struct bdma_cmd {
    uint32_t src_lo, src_hi, dst_lo, dst_hi;
    uint32_t line, cmd, line_repeat, src_line, dst_line;
    uint32_t surf_repeat, src_surf, dst_surf;
};

/* A launched group: `count` transfers from the head of the FIFO. */
struct bdma_launch {
    unsigned group;
    unsigned count;
};

struct dla_bdma_state {
    struct bdma_cmd fifo[BDMA_SLOTS]; /* ring of pushed transfers */
    unsigned head, n;
    unsigned gathered;                /* pushed since the last launch */
    struct bdma_launch launch[BDMA_SLOTS]; /* ring of launched groups */
    unsigned lhead, ln;
    unsigned busy[2];                 /* STATUS_0.GRPn_BUSY */
};

/* Decoded transfer. */
struct bdma_cfg {
    uint64_t src, dst;
    uint64_t src_line, dst_line, src_surf, dst_surf; /* byte strides */
    uint32_t line_bytes, lines, surfaces;
    int src_port, dst_port;
};

/* ---- state ------------------------------------------------------------------ */

int dla_bdma_state_create(struct dla_dev *d, struct dla_bdma_state **out)
{
    (void)d;
    *out = calloc(1, sizeof(**out));
    return *out ? 0 : DLASIM_ERR_NOMEM;
}

void dla_bdma_state_destroy(struct dla_bdma_state *s)
{
    free(s);
}

/* STATUS_0 from the queue state (ref: NV_NVDLA_BDMA_csb.v STATUS IDLE/BUSY). */
static void update_status(struct dla_dev *d, const struct dla_bdma_state *s)
{
    uint32_t v = NVDLA_BDMA_STATUS_0_FREE_SLOT(BDMA_SLOTS - s->n) |
                 NVDLA_BDMA_STATUS_0_IDLE(s->n == 0) |
                 NVDLA_BDMA_STATUS_0_GRP0_BUSY(s->busy[0]) |
                 NVDLA_BDMA_STATUS_0_GRP1_BUSY(s->busy[1]);
    dla_reg_hw_set(d, NVDLA_BDMA_STATUS_0, 0, v);
}

void dla_bdma_reset(struct dla_dev *d)
{
    struct dla_bdma_state *s = dla_dev_bdma_state(d);
    if (!s) {
        return;
    }
    memset(s, 0, sizeof(*s));
    if (dla_cfg(d)->bdma_enable) {
        update_status(d, s);
    }
}

/* ---- CSB side: CFG_OP pushes, CFG_LAUNCH launches ---------------------------- */

static void push(struct dla_dev *d, struct dla_bdma_state *s)
{
    if (s->n == BDMA_SLOTS) {
        dla_log(d, DLASIM_LOG_GUEST_ERROR,
                "BDMA: CFG_OP_0.EN=1 with no free slot (STATUS_0.FREE_SLOT=0): "
                "transfer dropped, as the RTL drops it");
        return;
    }
    struct bdma_cmd *c = &s->fifo[(s->head + s->n) % BDMA_SLOTS];
    c->src_lo = dla_reg(d, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0, 0);
    c->src_hi = dla_reg(d, NVDLA_BDMA_CFG_SRC_ADDR_HIGH_0, 0);
    c->dst_lo = dla_reg(d, NVDLA_BDMA_CFG_DST_ADDR_LOW_0, 0);
    c->dst_hi = dla_reg(d, NVDLA_BDMA_CFG_DST_ADDR_HIGH_0, 0);
    c->line = dla_reg(d, NVDLA_BDMA_CFG_LINE_0, 0);
    c->cmd = dla_reg(d, NVDLA_BDMA_CFG_CMD_0, 0);
    c->line_repeat = dla_reg(d, NVDLA_BDMA_CFG_LINE_REPEAT_0, 0);
    c->src_line = dla_reg(d, NVDLA_BDMA_CFG_SRC_LINE_0, 0);
    c->dst_line = dla_reg(d, NVDLA_BDMA_CFG_DST_LINE_0, 0);
    c->surf_repeat = dla_reg(d, NVDLA_BDMA_CFG_SURF_REPEAT_0, 0);
    c->src_surf = dla_reg(d, NVDLA_BDMA_CFG_SRC_SURF_0, 0);
    c->dst_surf = dla_reg(d, NVDLA_BDMA_CFG_DST_SURF_0, 0);
    s->n++;
    s->gathered++;
}

static void launch(struct dla_dev *d, struct dla_bdma_state *s, unsigned group)
{
    s->busy[group] = 1; /* status_grpN_set = grpN_cmd_launch */
    if (s->gathered == 0) {
        dla_log(d, DLASIM_LOG_GUEST_ERROR,
                "BDMA: CFG_LAUNCH%u_0 with no transfer queued since the previous launch: "
                "nothing runs and no interrupt will come (GRP%u_BUSY stays set)",
                group, group);
        return;
    }
    /* at most one launch per pushed transfer, so the ring cannot overflow */
    struct bdma_launch *l = &s->launch[(s->lhead + s->ln) % BDMA_SLOTS];
    l->group = group;
    l->count = s->gathered;
    s->ln++;
    s->gathered = 0;
}

void dla_bdma_csb_written(struct dla_dev *d, uint32_t addr, uint32_t v)
{
    struct dla_bdma_state *s = dla_dev_bdma_state(d);
    if (!s) {
        return;
    }
    if (addr == NVDLA_BDMA_CFG_OP_0 && DLA_FIELD(v, NVDLA_BDMA_CFG_OP_0_EN)) {
        push(d, s);
    } else if (addr == NVDLA_BDMA_CFG_LAUNCH0_0 &&
               DLA_FIELD(v, NVDLA_BDMA_CFG_LAUNCH0_0_GRP0_LAUNCH)) {
        launch(d, s, 0);
    } else if (addr == NVDLA_BDMA_CFG_LAUNCH1_0 &&
               DLA_FIELD(v, NVDLA_BDMA_CFG_LAUNCH1_0_GRP1_LAUNCH)) {
        launch(d, s, 1);
    } else {
        return;
    }
    update_status(d, s);
}

int dla_bdma_runnable(const struct dla_dev *d)
{
    const struct dla_bdma_state *s = dla_dev_bdma_state_const(d);
    if (!s || s->ln == 0) {
        return -1;
    }
    return (int)s->launch[s->lhead].group;
}

void dla_bdma_complete(struct dla_dev *d)
{
    struct dla_bdma_state *s = dla_dev_bdma_state(d);
    if (!s || s->ln == 0) {
        return;
    }
    struct bdma_launch *l = &s->launch[s->lhead];
    s->head = (s->head + l->count) % BDMA_SLOTS;
    s->n -= l->count;
    s->busy[l->group] = 0; /* status_grpN_clr = st2csb_grpN_done */
    s->lhead = (s->lhead + 1) % BDMA_SLOTS;
    s->ln--;
    update_status(d, s);
}

/* ---- execution ---------------------------------------------------------------- */

/* The transfer as the registers give it (checked by decode()). */
static void fill(const struct bdma_cmd *c, struct bdma_cfg *t)
{
    t->src = dla_addr(c->src_hi, c->src_lo & NVDLA_BDMA_CFG_SRC_ADDR_LOW_0_V32__MASK);
    t->dst = dla_addr(c->dst_hi, c->dst_lo & NVDLA_BDMA_CFG_DST_ADDR_LOW_0_V32__MASK);
    t->src_line = c->src_line & NVDLA_BDMA_CFG_SRC_LINE_0_STRIDE__MASK;
    t->dst_line = c->dst_line & NVDLA_BDMA_CFG_DST_LINE_0_STRIDE__MASK;
    t->src_surf = c->src_surf & NVDLA_BDMA_CFG_SRC_SURF_0_STRIDE__MASK;
    t->dst_surf = c->dst_surf & NVDLA_BDMA_CFG_DST_SURF_0_STRIDE__MASK;
    t->line_bytes = (DLA_FIELD(c->line, NVDLA_BDMA_CFG_LINE_0_SIZE) + 1u) * 32u;
    t->lines = DLA_FIELD(c->line_repeat, NVDLA_BDMA_CFG_LINE_REPEAT_0_NUMBER) + 1u;
    t->surfaces = DLA_FIELD(c->surf_repeat, NVDLA_BDMA_CFG_SURF_REPEAT_0_NUMBER) + 1u;
    t->src_port = dla_ram_port(DLA_FIELD(c->cmd, NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE));
    t->dst_port = dla_ram_port(DLA_FIELD(c->cmd, NVDLA_BDMA_CFG_CMD_0_DST_RAM_TYPE));
}

/* Source (is_write = 0) or destination cube of a transfer. */
static struct dla_strided transfer_cube(const struct bdma_cfg *t, int is_write)
{
    struct dla_strided s;
    memset(&s, 0, sizeof(s));
    s.port = is_write ? t->dst_port : t->src_port;
    s.base = is_write ? t->dst : t->src;
    s.line_bytes = t->line_bytes;
    s.lines = t->lines;
    s.line_stride = is_write ? t->dst_line : t->src_line;
    s.surfaces = t->surfaces;
    s.surf_stride = is_write ? t->dst_surf : t->src_surf;
    s.batches = 1;
    return s;
}

/* The work of every transfer of the launched group, checked before the
 * first one runs: the group is one layer. */
static int check_group_work(struct dla_dev *d, const struct dla_bdma_state *s,
                            const struct bdma_launch *l)
{
    struct dla_work w;
    dla_work_init(&w, "BDMA");
    for (unsigned i = 0; i < l->count; i++) {
        struct bdma_cfg t;
        fill(&s->fifo[(s->head + i) % BDMA_SLOTS], &t);
        struct dla_strided src = transfer_cube(&t, 0), dst = transfer_cube(&t, 1);
        dla_work_read(&w, &src);
        dla_work_write(&w, &dst);
    }
    return dla_work_check(d, &w);
}

/* Address extents of one transfer, strides included. */
static int check_extents(struct dla_dev *d, const struct bdma_cfg *t, unsigned idx)
{
    char what[64];
    struct dla_strided src = transfer_cube(t, 0), dst = transfer_cube(t, 1);
    snprintf(what, sizeof(what), "source of transfer %u", idx);
    int rc = dla_strided_check(d, "BDMA", what, 0, &src);
    if (!rc) {
        snprintf(what, sizeof(what), "destination of transfer %u", idx);
        rc = dla_strided_check(d, "BDMA", what, 1, &dst);
    }
    return rc;
}

static int decode(struct dla_dev *d, const struct bdma_cmd *c, unsigned idx,
                  struct bdma_cfg *t)
{
    uint32_t lrep = DLA_FIELD(c->line_repeat, NVDLA_BDMA_CFG_LINE_REPEAT_0_NUMBER);
    uint32_t srep = DLA_FIELD(c->surf_repeat, NVDLA_BDMA_CFG_SURF_REPEAT_0_NUMBER);
    if (lrep > BDMA_MAX_REPEAT) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "BDMA: transfer %u: CFG_LINE_REPEAT_0.NUMBER=%u exceeds %u (the store "
                         "side counts 13 bits; reads and writes would disagree)",
                         idx, lrep, BDMA_MAX_REPEAT);
    }
    if (srep > BDMA_MAX_REPEAT) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "BDMA: transfer %u: CFG_SURF_REPEAT_0.NUMBER=%u exceeds %u (the store "
                         "side counts 13 bits; reads and writes would disagree)",
                         idx, srep, BDMA_MAX_REPEAT);
    }
    fill(c, t);
    return check_extents(d, t, idx);
}

/* A run of contiguous bytes on both sides, copied through `buf`. */
struct bdma_run {
    uint64_t src, dst;
    size_t len;
};

static int flush_run(struct dla_dev *d, const struct bdma_cfg *t, struct bdma_run *r,
                     uint8_t *buf)
{
    int rc = 0;
    if (r->len) {
        rc = dla_dma_read(d, t->src_port, r->src, buf, r->len);
        if (!rc) {
            rc = dla_dma_write(d, t->dst_port, r->dst, buf, r->len);
        }
    }
    r->len = 0;
    return rc;
}

/* Lines in surface order, merged into runs while both sides stay contiguous. */
static int copy_transfer(struct dla_dev *d, const struct bdma_cfg *t, uint8_t *buf, size_t cap)
{
    struct bdma_run r = {0, 0, 0};
    for (uint32_t s = 0; s < t->surfaces; s++) {
        uint64_t src_s = t->src + (uint64_t)s * t->src_surf;
        uint64_t dst_s = t->dst + (uint64_t)s * t->dst_surf;
        for (uint32_t n = 0; n < t->lines; n++) {
            uint64_t src = src_s + (uint64_t)n * t->src_line;
            uint64_t dst = dst_s + (uint64_t)n * t->dst_line;
            int joins = r.len && r.src + r.len == src && r.dst + r.len == dst &&
                        r.len + t->line_bytes <= cap;
            if (!joins) {
                int rc = flush_run(d, t, &r, buf);
                if (rc) {
                    return rc;
                }
                r.src = src;
                r.dst = dst;
            }
            r.len += t->line_bytes;
        }
    }
    return flush_run(d, t, &r, buf);
}

int dla_bdma_execute(struct dla_dev *d, unsigned group)
{
    struct dla_bdma_state *s = dla_dev_bdma_state(d);
    if (!s || s->ln == 0 || s->launch[s->lhead].group != group) {
        return dla_error(d, DLASIM_ERR_INVAL, "BDMA: no launched group %u to run", group);
    }
    const struct bdma_launch *l = &s->launch[s->lhead];
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = check_group_work(d, s, l);
    for (unsigned i = 0; i < l->count && !rc; i++) {
        struct bdma_cfg t = {0};
        rc = decode(d, &s->fifo[(s->head + i) % BDMA_SLOTS], i, &t);
        if (rc) {
            break;
        }
        uint64_t total = (uint64_t)t.line_bytes * t.lines * t.surfaces;
        size_t want = total < BDMA_RUN_BYTES ? (size_t)total : BDMA_RUN_BYTES;
        if (want < t.line_bytes) {
            want = t.line_bytes;
        }
        if (want > cap) {
            uint8_t *nb = realloc(buf, want);
            if (!nb) {
                rc = dla_error(d, DLASIM_ERR_NOMEM, "BDMA: no memory for a %zu-byte buffer", want);
                break;
            }
            buf = nb;
            cap = want;
        }
        dla_log(d, DLASIM_LOG_EXEC,
                "BDMA: group %u transfer %u: %u x %u lines of %u bytes, %s 0x%llx -> %s 0x%llx",
                group, i, (unsigned)t.surfaces, (unsigned)t.lines, (unsigned)t.line_bytes,
                t.src_port == DLASIM_PORT_CVIF ? "CVIF" : "DBB", (unsigned long long)t.src,
                t.dst_port == DLASIM_PORT_CVIF ? "CVIF" : "DBB", (unsigned long long)t.dst);
        rc = copy_transfer(d, &t, buf, cap);
    }
    free(buf);
    return rc;
}
