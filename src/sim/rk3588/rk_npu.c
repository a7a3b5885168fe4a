/*
 * The RK3588 NPU personality (src/sim/core/personality.h, dla_rk3588_ops): the
 * RK ping-pong pointer semantics, the PC (register-command fetch), tasks,
 * GLOBAL/per-block OPERATION_ENABLE, the interrupt block and the task
 * scheduler, for three cores.  Each core's registers live in the register
 * file every device shares (src/sim/core/regfile.c) over regdb/rk3588.xml (reset
 * values, masks, groups, kinds); this file adds the pointer semantics below
 * as its struct dla_pointer_ops and what the PC and GLOBAL registers do.
 *
 * Ping-pong (TRM 36.5.1; spec 002/003 S_POINTER and S_STATUS):
 *   - every block with S_POINTER has two register groups from
 *     OPERATION_ENABLE upwards ("this register and after this are all
 *     shadowed");
 *   - writes (CPU or PC) go to group `pointer`; the datapath executes group
 *     `executer` (S_POINTER bit 16, read-only);
 *   - writing OPERATION_ENABLE.op_en = 1 enables the pointer group; with
 *     pointer_pp_en and pointer_pp_mode = 1 ("toggle by pointer") the
 *     pointer then moves to the other group;
 *   - when the group completes, its op_en clears; with executer_pp_en the
 *     executer moves to the other group, and with pointer_pp_en and
 *     pointer_pp_mode = 0 ("toggle by executer") the pointer moves with it;
 *   - a write with pointer_pp_en = 1 keeps `pointer` (the hardware owns it
 *     then; Mesa rewrites S_POINTER = 0xE in every task and the kernels at
 *     every kick, which only works if that write keeps it);
 *   - W1C bit 4 (pointer_pp_clear) sets pointer = 0, bit 5
 *     (executer_pp_clear) sets executer = 0;
 *   - S_STATUS status_g: 0 idle, 1 group g enabled and executing (g is the
 *     executer), 2 enabled and waiting for the other group (assumption: the
 *     TRM's "executing and waiting" read as "pending").
 *
 * Register commands (TRM pc_register_amounts; Mesa rkt_regcmd.c emit()):
 *   64-bit entries, [63:48] target, [47:16] value, [15:0] register offset.
 *   Target bits (regdb/rk3588.xml, domain `regcmd`): 56 PC, 57 CNA, 59 CORE,
 *   60 DPU, 61 DPU_RDMA, 62 PPU, 63 PPU_RDMA (with bit 48 set by every known
 *   stream); 0x0081 (database `regcmdopen`) = op_en with the value a
 *   GLOBAL.OPERATION_ENABLE-style block mask (domain `opbit`); 0x0041
 *   (`regcmdmark`) = the marker the TRM requires before op_en.  Target 0 entries are padding.  The
 *   offset is the absolute in-core offset; an entry whose offset is not in
 *   its target block's window is ignored and logged (guest error).
 *
 * The PC (TRM PC registers; linux drivers/accel/rocket rocket_job.c):
 *   writing OPERATION_ENABLE = 1 with BASE_ADDRESS.pc_sel = 0 starts a job:
 *   TASK_CON.task_number tasks, the first at BASE_ADDRESS[31:4] with
 *   (REGISTER_AMOUNTS + 1) * 2 entries.  Each task's entries are applied in
 *   order (its tail rewrites BASE_ADDRESS/REGISTER_AMOUNTS for the next task
 *   and enables the blocks).  When a task completes, TASK_STATUS counts it;
 *   the next task is fetched from the rewritten BASE_ADDRESS (0 ends the
 *   chain).  With TASK_CON.task_pp_en the next task is fetched as soon as
 *   the previous one is enabled, provided every ping-pong block's pointer
 *   group is free (otherwise after the completion).
 *
 * Interrupts (TRM PC INTERRUPT_*): RAW_STATUS bits 0-11 are per block and
 * group (CNA feature 0/1, weight 2/3, CSC 4/5, CORE 6/7, DPU 8/9, PPU 10/11),
 * 12/13 DMA read/write error; STATUS = RAW & MASK; writing 1 to
 * INTERRUPT_CLEAR clears RAW bits; each core's line = STATUS != 0.
 *
 * Execution is deferred as in the NVDLA model: register writes never
 * compute; rk_npu_step() runs one enabled task on one core.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/layer.h"
#include "regs/regdb.h"
#include "sim/core/budget.h"
#include "sim/core/csb.h"
#include "sim/core/dma.h"
#include "sim/core/host.h"
#include "sim/core/personality.h"
#include "sim/core/regfile.h"
#include "sim/rk3588/rk3588.h"

_Static_assert(RK3588_UNIT_COUNT <= DLA_REGFILE_MAX_UNITS, "regfile unit table too small");
#define RK_PENDING_MAX 2 /* fetched tasks in flight (one per register group) */

/* The blocks with a ping-pong pair are those with a GLOBAL.OPERATION_ENABLE
 * bit; their regcmd target bits and done bits are register database facts
 * too (regdb/rk3588.xml domain opbit/regcmd/done; rk3588_units[]). */
static int pingpong(unsigned unit)
{
    return rk3588_units[unit].op_en_bit != 0;
}

#define IRQ_DMA_READ_ERROR RK3588_PC_INTERRUPT_RAW_STATUS_DMA_READ_ERROR__MASK
#define IRQ_DMA_WRITE_ERROR RK3588_PC_INTERRUPT_RAW_STATUS_DMA_WRITE_ERROR__MASK

struct rk_core {
    struct rk_npu *npu;
    unsigned index;
    struct dla_regfile rf;     /* the core's registers (regfile.c over regdb/rk3588.xml) */
    struct dla_exec exec;      /* the task running: messages, DMA fault interrupts */
    struct dla_irq_line irq;   /* the core's interrupt line */
    /* PC */
    int pc_active;             /* a job is running */
    unsigned tasks_fetched;    /* of this job */
    unsigned tasks_done;
    unsigned pending;          /* fetched, not yet completed */
    int marker_seen;           /* a regcmd marker entry (0x0041) preceded op_en */
    struct dla_scratch scratch; /* engine buffers kept across tasks */
    struct rk_wcache wcache;
};

struct rk_npu {
    struct dlasim_dev base;    /* the public handle (ops = dla_rk3588_ops) */
    struct rk_core core[RK_CORES];
    struct dla_host host;      /* callbacks, limits, the memory port, last error */
    unsigned tasks_run;
};

/* ---- the RK pointer semantics (struct dla_pointer_ops, regfile.h) --------------- */

#define PTR_PP_EN RK3588_CNA_S_POINTER_POINTER_PP_EN__MASK
#define PTR_PP_MODE RK3588_CNA_S_POINTER_POINTER_PP_MODE__MASK /* 1 = toggle by pointer */
#define PTR_EXEC_PP_EN RK3588_CNA_S_POINTER_EXECUTER_PP_EN__MASK
#define PTR_PP_CLEAR RK3588_CNA_S_POINTER_POINTER_PP_CLEAR__MASK
#define PTR_EXEC_PP_CLEAR RK3588_CNA_S_POINTER_EXECUTER_PP_CLEAR__MASK

/* S_POINTER's pp_en/pp_mode/executer_pp_en bits (pointer and executer are the
 * unit's producer and consumer in the register file). */
static uint32_t pointer_bits(const struct dla_regfile *rf, const struct dla_unit_state *us)
{
    return rf->val[0][us->pointer_reg];
}

static void rk_pointer_write(struct dla_regfile *rf, struct dla_unit_state *us,
                             const struct nvdla_reg_desc *r, uint32_t v)
{
    uint32_t *p = &rf->val[0][us->pointer_reg];
    *p = (*p & ~r->write_mask) | (v & r->write_mask);
    if (!(v & PTR_PP_EN)) {
        /* With ping-pong on, the hardware owns `pointer` (inference: Mesa
         * writes S_POINTER = 0xE in every task and the kernels at every kick;
         * multi-task streams only work if that write keeps the pointer). */
        DLA_UNIT_PTR(rf, us).producer = (uint8_t)(v & 1u);
    }
    if (v & PTR_PP_CLEAR) {
        DLA_UNIT_PTR(rf, us).producer = 0;
    }
    if (v & PTR_EXEC_PP_CLEAR) {
        DLA_UNIT_PTR(rf, us).consumer = 0;
    }
}

/* op_en = 1 in the pointer group: "toggle by pointer" moves the pointer. */
static void rk_enabled(struct dla_regfile *rf, struct dla_unit_state *us)
{
    uint32_t p = pointer_bits(rf, us);
    if ((p & PTR_PP_EN) && (p & PTR_PP_MODE)) {
        DLA_UNIT_PTR(rf, us).producer ^= 1u;
    }
}

/* The executer group completed: with executer_pp_en the executer moves, and
 * with pointer_pp_en in "toggle by executer" mode the pointer with it. */
static void rk_completed(struct dla_regfile *rf, struct dla_unit_state *us)
{
    uint32_t p = pointer_bits(rf, us);
    if (p & PTR_EXEC_PP_EN) {
        DLA_UNIT_PTR(rf, us).consumer ^= 1u;
        if ((p & PTR_PP_EN) && !(p & PTR_PP_MODE)) {
            DLA_UNIT_PTR(rf, us).producer ^= 1u;
        }
    }
}

static const struct dla_pointer_ops rk_pointer_ops = {
    .pointer_write = rk_pointer_write,
    .enabled = rk_enabled,
    .completed = rk_completed,
    .drop_writes_when_enabled = 0, /* the TRM says nothing of dropping: stored */
};

/* ---- register helpers ------------------------------------------------------------ */

static unsigned pointer_group(const struct rk_core *c, unsigned unit)
{
    return c->rf.ptr[unit].producer;
}

static unsigned executer_group(const struct rk_core *c, unsigned unit)
{
    return c->rf.ptr[unit].consumer;
}

static int op_en(const struct rk_core *c, unsigned unit, unsigned group)
{
    return dla_regfile_op_en(&c->rf, unit, group);
}

static int enabled(const struct rk_core *c, unsigned unit)
{
    return op_en(c, unit, executer_group(c, unit));
}

uint32_t rk_reg(const struct rk_core *c, uint32_t off)
{
    return dla_regfile_exec(&c->rf, off);
}

/* A single register (PC, GLOBAL). */
static uint32_t pc_reg(const struct rk_core *c, uint32_t off)
{
    return dla_regfile_get(&c->rf, off, 0);
}

/* ---- errors, logging, IRQ, DMA (host.c, dma.c, budget.c) ------------------------- */

int rk_error(struct rk_core *c, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dla_exec_verror(&c->exec, status, fmt, ap);
    va_end(ap);
    return status;
}

static void update_irq(struct rk_core *c)
{
    dla_irq_line_set(&c->npu->host, &c->irq, dla_regfile_irq_pending(&c->rf) != 0);
}

static void raise_irq(struct rk_core *c, uint32_t bits)
{
    dla_regfile_raise(&c->rf, bits);
    update_irq(c);
}

/* Who runs, for messages: "core 1, task 5". */
static void core_where(const void *owner, char *buf, size_t len)
{
    const struct rk_core *c = owner;
    snprintf(buf, len, "core %u, task %u", c->index, c->npu->tasks_run);
}

/* A refused DMA access or extent: the core's DMA error interrupt (TRM PC
 * INTERRUPT_RAW_STATUS bits 12/13). */
static void core_dma_fault(void *owner, int write)
{
    raise_irq(owner, write ? IRQ_DMA_WRITE_ERROR : IRQ_DMA_READ_ERROR);
}

void *rk_scratch(struct rk_core *c, unsigned slot, size_t size)
{
    return slot < RK_SCRATCH ? dla_scratch_get(&c->scratch, slot, size) : NULL;
}

struct rk_wcache *rk_weight_cache(struct rk_core *c)
{
    return &c->wcache;
}

unsigned rk_threads(const struct rk_core *c)
{
    return c->npu->host.threads;
}

int rk_work_check(struct rk_core *c, const struct dla_work *w)
{
    return dla_exec_work_check(&c->exec, w);
}

int rk_extent_check(struct rk_core *c, const char *unit, const char *what, int is_write,
                    struct dla_strided *s)
{
    s->port = DLASIM_PORT_DBB;
    s->base = rk_dma_addr(c, s->base);
    return dla_exec_extent_check(&c->exec, unit, what, is_write, s);
}

static uint64_t dma_base(const struct rk_core *c)
{
    return pc_reg(c, RK3588_PC_TASK_DMA_BASE_ADDR) &
           RK3588_PC_TASK_DMA_BASE_ADDR_DMA_BASE_ADDR__MASK;
}

uint64_t rk_dma_addr(const struct rk_core *c, uint64_t addr)
{
    return (dma_base(c) + addr) & 0xffffffffull; /* 32-bit NPU addresses */
}

int rk_dma_read(struct rk_core *c, const char *unit, uint64_t addr, void *dst, size_t len)
{
    return dla_exec_dma_read(&c->exec, unit, DLASIM_PORT_DBB, rk_dma_addr(c, addr), dst, len);
}

int rk_dma_write(struct rk_core *c, const char *unit, uint64_t addr, const void *src,
                 size_t len)
{
    return dla_exec_dma_write(&c->exec, unit, DLASIM_PORT_DBB, rk_dma_addr(c, addr), src, len);
}

static struct rk_npu *npu_of(struct dlasim_dev *dev)
{
    return (struct rk_npu *)dev; /* the handle is the first member */
}

static const struct rk_npu *npu_const(const struct dlasim_dev *dev)
{
    return (const struct rk_npu *)dev;
}

static int rk_npu_mem_read(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr,
                           void *dst, size_t len)
{
    return dla_host_mem_read(&npu_of(dev)->host, port, addr, dst, len);
}

static int rk_npu_mem_write(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr,
                            const void *src, size_t len)
{
    return dla_host_mem_write(&npu_of(dev)->host, port, addr, src, len);
}

/* ---- register writes ------------------------------------------------------------ */

static void enable_mask(struct rk_core *c, uint32_t mask)
{
    for (unsigned u = 0; u < RK3588_UNIT_COUNT; u++) {
        if (mask & rk3588_units[u].op_en_bit) {
            dla_regfile_enable(&c->rf, u);
        }
    }
}

static void pc_start(struct rk_core *c);

/* One register write from the CPU (MMIO) or the PC (a regcmd entry): the
 * register file's write path, then what the PC, GLOBAL and interrupt
 * registers do. */
static void reg_write(struct rk_core *c, uint32_t off, uint32_t v)
{
    char where[16];
    snprintf(where, sizeof(where), "core %u: ", c->index);
    enum dla_write_effect effect = dla_csb_store(&c->npu->host, &c->rf, off, v, where);
    if (effect == DLA_WRITE_INTR_CHANGED) {
        update_irq(c);
    }
    if (effect != DLA_WRITE_STORED) {
        return;
    }
    switch (off) {
    case RK3588_PC_TASK_CON:
        if (v & RK3588_PC_TASK_CON_TASK_COUNT_CLEAR__MASK) {
            dla_regfile_hw_set(&c->rf, RK3588_PC_TASK_STATUS, 0, 0);
            c->tasks_done = 0;
        }
        break;
    case RK3588_GLOBAL_OPERATION_ENABLE:
        enable_mask(c, v);
        break;
    case RK3588_PC_OPERATION_ENABLE:
        if ((v & 1u) && !c->pc_active) {
            pc_start(c);
        }
        break;
    default:
        break;
    }
}

/* ---- the PC ------------------------------------------------------------------------ */

/* Unit addressed by a regcmd target (one block bit besides bit 48), or -1. */
static int target_unit(uint32_t target)
{
    return regdb_unit_by_regcmd(&rk3588_db, target & ~1u);
}

static void apply_entry(struct rk_core *c, uint64_t e, uint64_t at)
{
    uint32_t target = (uint32_t)(e >> 48);
    uint32_t value = (uint32_t)(e >> 16);
    uint32_t off = (uint32_t)(e & 0xffffu);
    if (target == 0) {
        return; /* padding, or the last task's bare 0 link */
    }
    if (target == rk3588_db.regcmd_marker) {
        c->marker_seen = 1;
        return;
    }
    if (target == rk3588_db.regcmd_op_en) {
        if (!c->marker_seen) {
            dla_host_log(&c->npu->host, DLASIM_LOG_GUEST_ERROR, "core %u: regcmd op_en at "
                         "0x%" PRIx64 " without the 0x%04x entry the TRM requires before it",
                         c->index, at, rk3588_db.regcmd_marker);
        }
        c->marker_seen = 0;
        enable_mask(c, value);
        return;
    }
    int u = target_unit(target);
    if (u < 0 || (off >> 12) != (rk3588_units[u].base >> 12)) {
        dla_host_log(&c->npu->host, DLASIM_LOG_GUEST_ERROR, "core %u: regcmd entry 0x%016" PRIx64
                     " at 0x%" PRIx64 ": target 0x%04x does not own offset 0x%04x; ignored",
                     c->index, e, at, target, off);
        return;
    }
    if (off == RK3588_PC_OPERATION_ENABLE) {
        return; /* the PC does not restart itself from a list */
    }
    reg_write(c, off, value);
}

/* Every ping-pong block can take a new group (its pointer group is idle). */
static int groups_free(const struct rk_core *c)
{
    for (unsigned u = 0; u < RK3588_UNIT_COUNT; u++) {
        if (pingpong(u) && op_en(c, u, pointer_group(c, u))) {
            return 0;
        }
    }
    return 1;
}

static unsigned task_number(const struct rk_core *c)
{
    return RK_FIELD(pc_reg(c, RK3588_PC_TASK_CON), RK3588_PC_TASK_CON_TASK_NUMBER);
}

/* Fetch and apply one task's register commands; 0 when the chain ended. */
static int pc_fetch(struct rk_core *c)
{
    uint32_t base = pc_reg(c, RK3588_PC_BASE_ADDRESS) &
                    RK3588_PC_BASE_ADDRESS_PC_SOURCE_ADDR__MASK;
    uint32_t amount = RK_FIELD(pc_reg(c, RK3588_PC_REGISTER_AMOUNTS),
                               RK3588_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT);
    if (base == 0) {
        c->pc_active = 0; /* the previous tail linked to nothing */
        return 0;
    }
    size_t n = ((size_t)amount + 1) * 2;
    uint64_t buf[256];
    c->tasks_fetched++;
    c->pending++;
    c->marker_seen = 0;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < 256 ? n - done : 256;
        uint64_t at = (uint64_t)base + done * 8;
        /* the list is fetched at its own address (TASK_DMA_BASE_ADDR is for data) */
        if (dla_exec_dma_read(&c->exec, "PC regcmd fetch", DLASIM_PORT_DBB, at, buf, k * 8)) {
            c->pc_active = 0;
            c->pending--;
            return 0;
        }
        for (size_t j = 0; j < k; j++) {
            apply_entry(c, buf[j], at + j * 8); /* little-endian memory, as the SoC */
        }
        done += k;
    }
    return 1;
}

/* Fetch tasks while the job has more and the PC may run ahead (task_pp_en). */
static void pc_fill(struct rk_core *c)
{
    int pp = (pc_reg(c, RK3588_PC_TASK_CON) & RK3588_PC_TASK_CON_TASK_PP_EN__MASK) != 0;
    while (c->pc_active && c->tasks_fetched < task_number(c)) {
        if (c->pending > 0 && (!pp || c->pending >= RK_PENDING_MAX || !groups_free(c))) {
            return;
        }
        if (!pc_fetch(c)) {
            return;
        }
    }
}

static void pc_start(struct rk_core *c)
{
    if (pc_reg(c, RK3588_PC_BASE_ADDRESS) & RK3588_PC_BASE_ADDRESS_PC_SEL__MASK) {
        return; /* slave mode: the CPU programs the blocks itself */
    }
    if (task_number(c) == 0) {
        return;
    }
    c->pc_active = 1;
    c->tasks_fetched = 0;
    c->pending = 0;
    pc_fill(c);
}

static void pc_task_done(struct rk_core *c)
{
    if (!c->pc_active && c->pending == 0) {
        return;
    }
    if (c->pending) {
        c->pending--;
    }
    c->tasks_done++;
    dla_regfile_hw_set(&c->rf, RK3588_PC_TASK_STATUS, 0,
                       c->tasks_done & RK3588_PC_TASK_STATUS_TASK_STATUS__MASK);
    if (c->tasks_fetched >= task_number(c) && c->pending == 0) {
        c->pc_active = 0;
        return;
    }
    pc_fill(c);
}

/* ---- tasks ---------------------------------------------------------------------------- */

/* Decide which blocks form a runnable task; 0 when none can run yet. */
static int find_task(const struct rk_core *c, struct rk_task *t)
{
    memset(t, 0, sizeof(*t));
    int cna = enabled(c, RK3588_UNIT_CNA), core = enabled(c, RK3588_UNIT_CORE);
    int dpu = enabled(c, RK3588_UNIT_DPU), ppu = enabled(c, RK3588_UNIT_PPU);
    uint32_t dpu_mode = rk_reg(c, RK3588_DPU_FEATURE_MODE_CFG);
    uint32_t ppu_mode = rk_reg(c, RK3588_PPU_OPERATION_MODE_CFG);
    int dpu_from_mrdma = RK_FIELD(dpu_mode, RK3588_DPU_FEATURE_MODE_CFG_FLYING_MODE) != 0;
    int dpu_to_ppu = (RK_FIELD(dpu_mode, RK3588_DPU_FEATURE_MODE_CFG_OUTPUT_MODE) & 1u) != 0;
    int ppu_from_dpu = RK_FIELD(ppu_mode, RK3588_PPU_OPERATION_MODE_CFG_FLYING_MODE) == 0;
    if (cna || core) {
        if (!(cna && core && dpu) || dpu_from_mrdma) {
            return 0; /* the convolution waits for its DPU (or CNA/CORE) */
        }
        t->conv = 1;
    } else if (dpu) {
        if (!dpu_from_mrdma || !enabled(c, RK3588_UNIT_DPU_RDMA)) {
            return 0;
        }
    } else if (ppu) {
        if (ppu_from_dpu || !enabled(c, RK3588_UNIT_PPU_RDMA)) {
            return 0;
        }
        t->ppu = 1;
        t->ppu_rdma = 1;
        return 1;
    } else {
        return 0;
    }
    t->dpu = 1;
    t->dpu_rdma = enabled(c, RK3588_UNIT_DPU_RDMA);
    if (dpu_to_ppu) {
        if (!ppu || !ppu_from_dpu) {
            return 0; /* the fused PPU is not enabled yet */
        }
        t->ppu = 1;
    }
    return 1;
}

static void complete_unit(struct rk_core *c, unsigned unit)
{
    unsigned g = executer_group(c, unit);
    dla_regfile_complete(&c->rf, unit); /* op_en cleared, executer/pointer moved */
    dla_regfile_raise(&c->rf, rk3588_units[unit].done_bits[g & 1u]);
}

static void complete_task(struct rk_core *c, const struct rk_task *t)
{
    if (t->conv) {
        complete_unit(c, RK3588_UNIT_CNA);
        complete_unit(c, RK3588_UNIT_CORE);
    }
    if (t->dpu) {
        complete_unit(c, RK3588_UNIT_DPU);
    }
    if (t->dpu_rdma) {
        complete_unit(c, RK3588_UNIT_DPU_RDMA);
    }
    if (t->ppu) {
        complete_unit(c, RK3588_UNIT_PPU);
    }
    if (t->ppu_rdma) {
        complete_unit(c, RK3588_UNIT_PPU_RDMA);
    }
    update_irq(c);
    pc_task_done(c);
}

/* info (NULL: no observer) gets the convolution's geometry (rk_conv_run). */
static int run_task(struct rk_core *c, const struct rk_task *t, struct dlasim_layer_info *info)
{
    struct rk_cube acc = {0, 0, 0, NULL, 0, 0, 0}, pool_in = {0, 0, 0, NULL, 0, 0, 0};
    int rc = 0;
    if (t->conv) {
        rc = rk_conv_run(c, &acc, info);
    }
    if (!rc && t->dpu) {
        rc = rk_dpu_run(c, t, t->conv ? &acc : NULL, t->ppu ? &pool_in : NULL);
    }
    if (!rc && t->ppu) {
        rc = rk_ppu_run(c, t, t->dpu ? &pool_in : NULL);
    }
    if (!acc.borrowed) {
        free(acc.v);
    }
    if (!pool_in.borrowed) {
        free(pool_in.v);
    }
    return rc;
}

/* The observer's kind of a task: the convolution with its DPU (and fused
 * PPU), else the engine that reads memory (the DPU descends from NVDLA's
 * SDP, the PPU from its PDP). */
static const char *task_kind(const struct rk_task *t)
{
    return t->conv ? "conv" : t->dpu ? "sdp" : "pdp";
}

static int rk_npu_step(struct dlasim_dev *dev)
{
    struct rk_npu *n = npu_of(dev);
    for (unsigned i = 0; i < RK_CORES; i++) {
        struct rk_core *c = &n->core[i];
        struct rk_task t;
        if (!find_task(c, &t)) {
            continue;
        }
        n->tasks_run++;
        dla_host_log(&n->host, DLASIM_LOG_EXEC, "core %u: task %u:%s%s%s%s", i, n->tasks_run,
               t.conv ? " CNA+CORE" : "", t.dpu ? " DPU" : "", t.ppu ? " PPU" : "",
               t.ppu_rdma ? " (PPU_RDMA)" : "");
        struct dlasim_layer_info info;
        memset(&info, 0, sizeof(info));
        int rc = run_task(c, &t, dev->layer_fn ? &info : NULL);
        if (dev->layer_fn) { /* after the task ran, before its interrupt (layer.h) */
            info.index = n->tasks_run;
            info.kind = task_kind(&t);
            info.status = rc;
            dla_layer_notify(dev, &info);
        }
        complete_task(c, &t); /* as hardware, the task completes even after an error */
        return rc ? rc : 1;
    }
    return 0;
}

static int rk_npu_busy(struct dlasim_dev *dev, char *desc, size_t desclen)
{
    struct rk_npu *n = npu_of(dev);
    struct dla_desc out;
    int busy = 0;
    dla_desc_init(&out, desc, desclen);
    for (unsigned i = 0; i < RK_CORES; i++) {
        const struct rk_core *c = &n->core[i];
        char prefix[16];
        snprintf(prefix, sizeof(prefix), "core %u ", i);
        busy |= dla_csb_describe_enabled(&c->rf, prefix, &out) > 0;
        if (c->pc_active) {
            busy = 1;
            dla_desc_add(&out, "core %u PC: %u of %u tasks done, %u fetched", i, c->tasks_done,
                         task_number(c), c->tasks_fetched);
        }
    }
    return busy;
}

/* ---- CSB ------------------------------------------------------------------------------ */

static struct rk_core *core_of(struct rk_npu *n, uint32_t addr)
{
    unsigned i = addr / RK_WINDOW;
    return i < RK_CORES ? &n->core[i] : NULL;
}

static int rk_npu_csb_write(struct dlasim_dev *dev, uint32_t addr, uint32_t val)
{
    struct rk_npu *n = npu_of(dev);
    struct rk_core *c = core_of(n, addr);
    int rc = dla_csb_check_write(&n->host, addr); /* csb.c */
    if (rc) {
        return rc;
    }
    if (c == NULL) {
        dla_host_log(&n->host, DLASIM_LOG_GUEST_ERROR, "CSB write to 0x%x beyond the three "
                     "cores ignored", addr);
        return 0;
    }
    dla_csb_log_write(&n->host, &rk3588_db, addr % RK_WINDOW, val,
                      c->index ? " /* core 1/2 */" : "");
    reg_write(c, addr % RK_WINDOW, val);
    return 0;
}

static int rk_npu_csb_read(struct dlasim_dev *dev, uint32_t addr, uint32_t *val)
{
    struct rk_npu *n = npu_of(dev);
    struct rk_core *c = core_of(n, addr);
    int rc = dla_csb_check_read(&n->host, addr, val); /* csb.c */
    if (!rc && c != NULL) {
        dla_regfile_read(&c->rf, addr % RK_WINDOW, val); /* unmapped offsets read as zero */
    }
    return rc;
}

/* ---- lifecycle --------------------------------------------------------------------------- */

static void core_reset(struct rk_core *c)
{
    dla_regfile_reset(&c->rf);
    c->pc_active = 0;
    c->tasks_fetched = c->tasks_done = c->pending = 0;
    c->marker_seen = 0;
    c->wcache.valid = 0;
    update_irq(c);
}

static void rk_npu_reset(struct dlasim_dev *dev)
{
    struct rk_npu *n = npu_of(dev);
    for (unsigned i = 0; i < RK_CORES; i++) {
        core_reset(&n->core[i]);
    }
    n->host.err[0] = '\0';
}

static void rk_npu_destroy(struct dlasim_dev *dev);

static int rk_npu_create(const struct dlasim_options *opt, struct dlasim_dev **out, char *err,
                         size_t errlen)
{
    *out = NULL;
    if (opt->n_overrides) {
        snprintf(err, errlen, "rk3588 has no scalability parameters to --set (%s)",
                 opt->overrides && opt->overrides[0] ? opt->overrides[0] : "NULL");
        return DLASIM_ERR_INVAL;
    }
    if (opt->cvif_ops) {
        snprintf(err, errlen, "rk3588 has no second memory port");
        return DLASIM_ERR_INVAL;
    }
    if (opt->timing) {
        snprintf(err, errlen, "rk3588: the timing model (dlasim_options.timing) is NVDLA's only");
        return DLASIM_ERR_UNSUPPORTED;
    }
    struct rk_npu *n = calloc(1, sizeof(*n));
    if (!n) {
        return DLASIM_ERR_NOMEM;
    }
    n->base.ops = &dla_rk3588_ops;
    dla_host_init(&n->host, opt);
    /* 32-bit NPU bus addresses (TRM register widths) */
    int rc = dla_host_port_init(&n->host, DLASIM_PORT_DBB, 1, 1ull << 32, opt->dbb_ops,
                                opt->dbb_opaque, err, errlen);
    if (rc) {
        free(n);
        return rc;
    }
    for (unsigned i = 0; i < RK_CORES; i++) {
        struct rk_core *c = &n->core[i];
        c->npu = n;
        c->index = i;
        c->exec = (struct dla_exec){&n->host, c, core_where, NULL, core_dma_fault};
        c->irq.reports = i == 0; /* the callback reports core 0's line (dlasim_irq_level) */
        rc = dla_regfile_init(&n->core[i].rf, &rk3588_db, &rk_pointer_ops);
        if (rc) {
            rk_npu_destroy(&n->base);
            return rc;
        }
    }
    rk_npu_reset(&n->base);
    *out = &n->base;
    return 0;
}

static void rk_npu_destroy(struct dlasim_dev *dev)
{
    struct rk_npu *n = npu_of(dev);
    dla_host_free(&n->host);
    for (unsigned i = 0; i < RK_CORES; i++) {
        dla_scratch_free(&n->core[i].scratch);
        dla_regfile_free(&n->core[i].rf);
    }
    free(n);
}

/* Core `core`'s line; core 0's is the device's dlasim_irq_level. */
static int rk_npu_irq_level(const struct dlasim_dev *dev, unsigned core)
{
    return core < RK_CORES ? npu_const(dev)->core[core].irq.level : 0;
}

static const char *rk_npu_last_error(const struct dlasim_dev *dev)
{
    return npu_const(dev)->host.err;
}

/* Facts `dlasim info --config rk3588` and dlasim_param report (TRM 36.1). */
static int rk_npu_param(const struct dlasim_dev *dev, const char *name, uint64_t *value)
{
    static const struct {
        const char *name;
        uint64_t v;
    } params[] = {
        {"RK_CORES", RK_CORES},
        {"RK_CORE_WINDOW", RK_WINDOW},
        {"RK_MACS_INT8_PER_CORE", 1024},
        {"RK_MACS_FP16_PER_CORE", 512},
        {"RK_CBUF_BYTES_PER_CORE", 384 * 1024},
        {"RK_ADDRESS_WIDTH", 32},
    };
    (void)dev;
    if (!name || !value) {
        return DLASIM_ERR_INVAL;
    }
    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        if (!strcmp(params[i].name, name)) {
            *value = params[i].v;
            return 0;
        }
    }
    return DLASIM_ERR_INVAL;
}

const struct dla_device_ops dla_rk3588_ops = {
    .name = "RK3588",
    .db = &rk3588_db,
    .cores = RK_CORES,
    .create = rk_npu_create,
    .destroy = rk_npu_destroy,
    .reset = rk_npu_reset,
    .csb_read = rk_npu_csb_read,
    .csb_write = rk_npu_csb_write,
    .mem_read = rk_npu_mem_read,
    .mem_write = rk_npu_mem_write,
    .step = rk_npu_step,
    .describes_layers = 1,
    .busy = rk_npu_busy,
    .irq_level = rk_npu_irq_level,
    .param = rk_npu_param,
    .last_error = rk_npu_last_error,
};
