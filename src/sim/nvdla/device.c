/*
 * The NVDLA personality (src/sim/core/personality.h): one struct per NVDLA
 * instance, the device operations behind the public API of
 * include/dlasim/dlasim.h (src/sim/core/api.c), the layer scheduler and the GLB
 * interrupt line.
 *
 * Execution model (ref: spec 001 "Ping-pong Synchronization Mechanism",
 * "Programming sequence"): a CSB write never computes.  Setting OP_EN marks a
 * group enabled; dlasim_step() finds a pipeline whose units all have OP_EN
 * set in their CONSUMER group, runs its engines in dataflow order (conv ->
 * SDP -> PDP on the fly), then completes the layer: OP_EN cleared, CONSUMER
 * advanced, GLB done bits raised, IRQ line updated.  Deferring the work lets
 * the pipeline be enabled one unit at a time, as drivers do, and lets tests
 * observe RUNNING/PENDING.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/budget.h"
#include "sim/core/csb.h"
#include "sim/core/dma.h"
#include "sim/core/host.h"
#include "sim/core/mem.h"
#include "sim/core/personality.h"
#include "sim/core/regfile.h"
#include "common/team.h"
#include "sim/nvdla/dla.h"
#include "sim/nvdla/units.h"
#include "timing/timing.h"

_Static_assert(NVDLA_UNIT_COUNT <= DLA_TIMING_UNIT_IDS, "unit ids the timing layer keeps");

#define CDMA_DAT_DONE_BITS (NVDLA_GLB_S_INTR_STATUS_0_CDMA_DAT_DONE_STATUS0__MASK | \
                            NVDLA_GLB_S_INTR_STATUS_0_CDMA_DAT_DONE_STATUS1__MASK)
#define CDMA_WT_DONE_BITS (NVDLA_GLB_S_INTR_STATUS_0_CDMA_WT_DONE_STATUS0__MASK | \
                           NVDLA_GLB_S_INTR_STATUS_0_CDMA_WT_DONE_STATUS1__MASK)

struct pipeline;

/* One cache line, line-aligned: the worker reads the running layer's copy
 * (task_layer) while the host writes the other slot's (hand_over); beside
 * each other on one line each store took that line from the worker's
 * core, and a copy of two lines cost the worker two misses a chained
 * layer. */
struct layer {
    _Alignas(64) const struct pipeline *p;
    unsigned index;            /* its number (d->layer when claimed) */
    uint32_t units;            /* bit per unit it uses, with linked RDMAs (claim_units) */
    uint8_t n;                 /* units taking part */
    uint8_t unit[8];
    uint8_t group[8];          /* each unit's consumer group (BDMA: its launch group) */
    uint8_t exec_group[NVDLA_UNIT_COUNT]; /* what its engines read (dla_dev_exec_group) */
};
_Static_assert(sizeof(struct layer) == 64, "a layer's copy is one cache line");

struct dla_dev {
    struct dlasim_dev base;           /* the public handle (ops = dla_nvdla_ops) */
    struct dla_config cfg;            /* scalability parameters */
    struct dla_regfile rf;            /* every unit's CSB registers */
    struct dla_nvdla_regs regs;       /* LUT RAMs, ConfigROM (the register file's hooks) */
    struct dla_host host;             /* callbacks, limits, memory ports, last error */
    struct dla_exec exec;             /* the layer running: messages, DMA hooks */
    struct dla_conv_state *conv;      /* CBUF state across layers */
    struct dla_bdma_state *bdma;      /* BDMA transfer queue (bdma.c) */
    struct dla_timing *timing;        /* cycle model, NULL when off (src/timing/) */
    struct dla_team *team;            /* worker threads of the engines, made on first use */
    /* The host's side from here: fields it changes every layer, apart from
     * the pointers above that the engines read on the worker's core. */
    _Alignas(64) struct dla_irq_line irq; /* the one GLB interrupt line */
    int team_tried;
    unsigned layer;                   /* layers started since creation */
    /* A layer the hardware never completes (dla_stall): its units stay
     * busy until reset (why: stall_why, with the engines' fields below),
     * for dlasim_busy. */
    uint32_t stalled_units;           /* bit per unit: held by a stalled layer */
    unsigned stalled_layer;
    /* Overlap (dlasim_options.overlap): the layer started on a worker when
     * the one before completed (run_ahead), or as that one ends when the
     * host enabled it in time (try_chain), finished (completion, interrupt)
     * on the host's thread when the host next waits or touches what it
     * uses. */
    int overlap;                      /* asked for, and the device can */
    int overlap_possible;
    /* The layers started early (at most two: the one the host finishes
     * next, in slot[head], and one chained after it), claimed and not yet
     * finished, and the worker's task that runs them (run_chain). */
    unsigned inflight;                /* 0, 1 or 2 */
    int inflight_running;             /* the task may still run their engines */
    unsigned head;                    /* slot of the layer finished next */
    unsigned finished;                /* layers of the task the host finished */
    struct layer slot[2];             /* the host's: what it finishes and tracks */
    uint32_t inflight_units;          /* bit per unit they use (with linked RDMAs) */
    uint8_t inflight_gmask[NVDLA_UNIT_COUNT]; /* their groups, bit per group */
    uint32_t find_flip;               /* units whose CONSUMER find_layer takes as moved on */
    /* What the host hands the worker's task: lines of their own, which the
     * worker reads, and a copy of each slot's layer (hand_over).  Beside
     * the fields above, every host store to them (the IRQ line, the
     * in-flight bookkeeping) waited for the line to come back from the
     * worker's core, and the host's next read of them with it
     * (MobileNetV2's 7x7 blocks: `nvdla_irq_level` ~2.5 % of the host's
     * samples, each a miss); and a layer the worker read left the host's
     * core (this host passes a modified line on at a read), so the host's
     * reads of its own slot (completing it, tracking the units in flight,
     * the next chain) missed. */
    _Alignas(64) unsigned task_slot;  /* slot of the task's first layer */
    struct layer task_layer[2];       /* the worker's copies of slot[] */
    /* What the engines write while a layer runs, on a cache line of its
     * own: next to the host's fields (the IRQ line, the team, the in-flight
     * units every CSB write checks) each store would take the line from
     * the host's core and its next read take it back (overlap). */
    _Alignas(64) const char *cur_unit; /* unit executing (for messages) */
    uint8_t exec_group[NVDLA_UNIT_COUNT]; /* the running layer's (dla_dev_exec_group) */
    unsigned exec_index;              /* ... and its index (messages) */
    /* units dla_stall named during the layer (run_layer clears it every
     * layer: beside the host's IRQ line, that store took the line from the
     * host's core, and the host's next interrupt check missed) */
    uint32_t stalling;
    char stall_why[512];              /* dla_stall's reason */
    /* The chain between the host and the worker (run_chain), on a line of
     * its own with what the host reads at the join (one line passes, not
     * two: the engines' line above stays the worker's).  `chain` is one
     * word, so a layer's end is one read-modify-write of the worker's: the
     * task's layers ended (CHAIN_DONE) and the chain's state (CHAIN_STATE):
     * CHAIN_OPEN while the task runs and takes a chained layer,
     * CHAIN_QUEUED when the host has put one in the other slot,
     * CHAIN_CLOSED when the task ended without one.  Apart, the end was a
     * compare-exchange, a store and two additions, and the host's spin on
     * the count took the line back between them (the worker's end of a
     * 14x14 depthwise block ~450 cycles).  The count wraps after 2^30
     * layers of one task (start_task starts it at 0), as the separate
     * count before it after 2^32. */
    _Alignas(64) int slot_rc[2];      /* each slot's engines' status (0 from hand_over) */
    uint32_t slot_stalling[2];        /* ... and the units they stalled */
    atomic_uint chain;
};

enum { CHAIN_OPEN, CHAIN_QUEUED, CHAIN_CLOSED };
#define CHAIN_STATE(w) ((w) & 3u)
#define CHAIN_DONE(w) ((w) >> 2)
#define CHAIN_WORD(done, state) ((done) << 2 | (state))

/* The public handle is the first member of the device. */
static struct dla_dev *core(struct dlasim_dev *dev)
{
    return (struct dla_dev *)dev;
}

static const struct dla_dev *core_const(const struct dlasim_dev *dev)
{
    return (const struct dla_dev *)dev;
}

/* ---- errors, logging (host.c, dma.c) ------------------------------------------ */

int dla_error(struct dla_dev *d, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dla_exec_verror(&d->exec, status, fmt, ap);
    va_end(ap);
    return status;
}

void dla_stall(struct dla_dev *d, uint32_t units, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->stall_why, sizeof(d->stall_why), fmt, ap);
    va_end(ap);
    d->stalling = units;
}

void dla_log(struct dla_dev *d, unsigned category, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dla_host_vlog(&d->host, category, fmt, ap);
    va_end(ap);
}

static void quiesce(struct dla_dev *d);

static const char *nvdla_last_error(const struct dlasim_dev *dev)
{
    /* the handle the caller holds is its device (dlasim_create gave it
     * non-const): a layer on the worker may still write the message */
    struct dla_dev *d = (struct dla_dev *)(uintptr_t)core_const(dev);
    quiesce(d);
    return d->host.err;
}

/* Who runs, for messages: "layer 3". */
static void layer_where(const void *owner, char *buf, size_t len)
{
    snprintf(buf, len, "layer %u", ((const struct dla_dev *)owner)->exec_index);
}

/* Every DMA burst, for the timing layer. */
static void layer_traffic(void *owner, int write, size_t bytes)
{
    struct dla_dev *d = owner;
    if (d->timing) {
        dla_timing_traffic(d->timing, write, bytes);
    }
}

/* ---- accessors for engines ------------------------------------------------ */

const uint8_t *dla_dev_exec_group(const struct dla_dev *d)
{
    return d->exec_group;
}

const struct dla_regfile *dla_dev_rf(const struct dla_dev *d)
{
    return &d->rf;
}

struct dla_regfile *dla_dev_rf_hw(struct dla_dev *d)
{
    return &d->rf;
}

const struct dla_config *dla_cfg(const struct dla_dev *d)
{
    return &d->cfg;
}

const struct dla_lut_ram *dla_lut(const struct dla_dev *d, enum dla_lut_id id)
{
    return &d->regs.lut[id];
}

struct dla_conv_state *dla_dev_conv_state(struct dla_dev *d)
{
    return d->conv;
}

struct dla_bdma_state *dla_dev_bdma_state(struct dla_dev *d)
{
    return d->bdma;
}

const struct dla_bdma_state *dla_dev_bdma_state_const(const struct dla_dev *d)
{
    return d->bdma;
}

unsigned dla_threads(const struct dla_dev *d)
{
    return d->host.threads;
}

struct dla_team *dla_dev_team(struct dla_dev *d)
{
    if (d->team) { /* (made: team_tried, on the host's line, is not read) */
        return d->team;
    }
    if (!d->team_tried) {
        d->team_tried = 1;
        d->team = dla_team_create(d->host.threads);
        /* (small layers and overlap lose on a slow link: team.h) */
        dla_team_set_link_policy(d->team, d->host.threads_always ? DLA_LINK_SHARE
                                                                 : DLA_LINK_MEASURE);
    }
    return d->team;
}

int dla_check_work(struct dla_dev *d, const char *unit, uint64_t work)
{
    struct dla_work w;
    dla_work_init(&w, unit);
    dla_work_ops(&w, work);
    return dla_work_check(d, &w);
}

int dla_work_check(struct dla_dev *d, const struct dla_work *w)
{
    return dla_exec_work_check(&d->exec, w);
}

int dla_strided_check(struct dla_dev *d, const char *unit, const char *what, int is_write,
                      const struct dla_strided *s)
{
    return dla_exec_extent_check(&d->exec, unit, what, is_write, s);
}

struct dla_timing *dla_dev_timing(const struct dlasim_dev *dev)
{
    /* the timing model is NVDLA's only: other personalities and a NULL
     * device (the public timing calls) see it off */
    return dev && dev->ops == &dla_nvdla_ops ? core_const(dev)->timing : NULL;
}

int dla_cube_alloc(struct dla_cube *cube, uint32_t w, uint32_t h, uint32_t c, uint32_t n)
{
    uint64_t elems = (uint64_t)w * h * c;
    cube->w = w;
    cube->h = h;
    cube->c = c;
    cube->n = n;
    cube->data = NULL;
    cube->atoms = NULL;
    if ((w && h && c && elems / w / h != c) || (n && elems * n / n != elems) ||
        elems * n > SIZE_MAX / sizeof(int32_t)) {
        return DLASIM_ERR_NOMEM;
    }
    elems *= n;
    cube->data = calloc(elems ? (size_t)elems : 1, sizeof(int32_t));
    return cube->data ? 0 : DLASIM_ERR_NOMEM;
}

int dla_cube_alloc_atoms(struct dla_cube *cube, uint32_t w, uint32_t h, uint32_t c,
                         uint32_t lanes, int8_t **buf, size_t *cap)
{
    memset(cube, 0, sizeof *cube);
    cube->w = w, cube->h = h, cube->c = c, cube->n = 1;
    cube->atom_lanes = lanes;
    uint64_t bytes = (uint64_t)w * h * c; /* < 2^39: 13-bit sizes (cube registers) */
    if (lanes == 0 || c % lanes || bytes != (size_t)bytes) {
        return DLASIM_ERR_NOMEM;
    }
    if (buf) {
        if (dla_scratch_grow((void **)buf, cap, bytes ? (size_t)bytes : 1)) {
            return DLASIM_ERR_NOMEM;
        }
        cube->atoms = *buf;
        cube->atoms_borrowed = 1;
        return 0;
    }
    cube->atoms = malloc(bytes ? (size_t)bytes : 1);
    return cube->atoms ? 0 : DLASIM_ERR_NOMEM;
}

int dla_cube_planes(struct dla_cube *cube)
{
    if (cube->data || !cube->atoms) {
        return 0;
    }
    const size_t plane = (size_t)cube->w * cube->h, lanes = cube->atom_lanes;
    const size_t n = plane * cube->c;
    int32_t *d = malloc((n ? n : 1) * sizeof *d);
    if (!d) {
        return DLASIM_ERR_NOMEM;
    }
    for (size_t s = 0; s < cube->c / lanes; s++) {
        const int8_t *a = cube->atoms + s * plane * lanes;
        for (size_t l = 0; l < lanes; l++) {
            int32_t *p = d + (s * lanes + l) * plane;
            for (size_t j = 0; j < plane; j++) {
                p[j] = a[j * lanes + l];
            }
        }
    }
    cube->data = d;
    return 0;
}

void dla_cube_free(struct dla_cube *cube)
{
    if (!cube->borrowed) {
        free(cube->data);
    }
    if (!cube->atoms_borrowed) {
        free(cube->atoms);
    }
    cube->data = NULL;
    cube->atoms = NULL;
}

/* ---- memory (the DMA path is dma.c's) -------------------------------------------- */

int dla_dma_read(struct dla_dev *d, int port, uint64_t addr, void *dst, size_t len)
{
    return dla_exec_dma_read(&d->exec, d->cur_unit, port, addr, dst, len);
}

int dla_dma_can_read(const struct dla_dev *d, int port, uint64_t addr, size_t len)
{
    return dla_mem_port_can_read(&d->host.port[port & 1], addr, len);
}

uint64_t dla_dma_generation(const struct dla_dev *d, int port)
{
    return dla_mem_port_generation(&d->host.port[port & 1]);
}

int dla_dma_unchanged(const struct dla_dev *d, int port, uint64_t addr, size_t len,
                      uint64_t since)
{
    return dla_mem_port_unchanged(&d->host.port[port & 1], addr, len, since);
}

void dla_dma_count_read(struct dla_dev *d, size_t len)
{
    layer_traffic(d, 0, len);
}

const uint8_t *dla_dma_view(struct dla_dev *d, int port, uint64_t addr, size_t len)
{
    const uint8_t *v = dla_mem_port_view(&d->host.port[port & 1], addr, len);
    if (v) {
        layer_traffic(d, 0, len);
    }
    return v;
}

const uint8_t *dla_dma_lend(const struct dla_dev *d, int port, uint64_t addr, size_t len)
{
    return dla_mem_port_view(&d->host.port[port & 1], addr, len);
}

const uint8_t *dla_dma_lend_span(const struct dla_dev *d, int port, uint64_t addr, size_t len)
{
    return dla_mem_port_view_span(&d->host.port[port & 1], addr, len);
}

uint8_t *dla_dma_write_view(const struct dla_dev *d, int port, uint64_t addr, size_t len)
{
    return dla_mem_port_write_view(&d->host.port[port & 1], addr, len);
}

void dla_dma_wrote(struct dla_dev *d, int port, uint64_t addr, size_t len)
{
    dla_mem_port_wrote(&d->host.port[port & 1], addr, len);
    layer_traffic(d, 1, len);
}

int dla_dma_peek(struct dla_dev *d, int port, uint64_t addr, void *dst, size_t len)
{
    char why[256];
    int rc = dla_mem_port_read(&d->host.port[port & 1], addr, dst, len, why, sizeof(why));
    if (rc) {
        return dla_error(d, rc, "%s: DMA read of 0x%llx+0x%zx on %s failed: %s",
                         d->cur_unit ? d->cur_unit : "?", (unsigned long long)addr, len,
                         dla_port_name(port), why);
    }
    return 0;
}

int dla_dma_write(struct dla_dev *d, int port, uint64_t addr, const void *src, size_t len)
{
    return dla_exec_dma_write(&d->exec, d->cur_unit, port, addr, src, len);
}

int dla_dma_read_lines(struct dla_dev *d, int port, uint64_t wrap_mask, uint64_t base,
                       uint64_t stride, uint32_t rows, size_t line_bytes, void *dst)
{
    const struct dla_lines l = {port, wrap_mask, base, stride, rows, line_bytes};
    return dla_exec_dma_read_lines(&d->exec, d->cur_unit, &l, dst);
}

int dla_dma_write_lines(struct dla_dev *d, int port, uint64_t wrap_mask, uint64_t base,
                        uint64_t stride, uint32_t rows, size_t line_bytes, const void *src)
{
    const struct dla_lines l = {port, wrap_mask, base, stride, rows, line_bytes};
    return dla_exec_dma_write_lines(&d->exec, d->cur_unit, &l, src);
}

static int nvdla_mem_read(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr,
                          void *dst, size_t len)
{
    quiesce(core(dev));
    return dla_host_mem_read(&core(dev)->host, port, addr, dst, len);
}

static int nvdla_mem_write(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr,
                           const void *src, size_t len)
{
    quiesce(core(dev));
    return dla_host_mem_write(&core(dev)->host, port, addr, src, len);
}

/* ---- interrupts ------------------------------------------------------------- */

/* The one function that owns the IRQ line. */
static void update_irq(struct dla_dev *d)
{
    dla_irq_line_set(&d->host, &d->irq, dla_regfile_irq_pending(&d->rf) != 0);
}

static int nvdla_irq_level(const struct dlasim_dev *dev, unsigned line)
{
    (void)line; /* one line */
    return core_const(dev)->irq.level;
}

/* ---- CSB --------------------------------------------------------------------- */

/* Timing: the write's cost, and the cycle an OP_EN write enabled its group. */
static void timing_csb_write(struct dla_dev *d, uint32_t addr, enum dla_write_effect effect)
{
    dla_timing_csb_write(d->timing);
    /* BDMA has no OP_EN: a launch write enables its group */
    if (addr == NVDLA_BDMA_CFG_LAUNCH0_0 || addr == NVDLA_BDMA_CFG_LAUNCH1_0) {
        dla_timing_op_enabled(d->timing, NVDLA_UNIT_BDMA, addr == NVDLA_BDMA_CFG_LAUNCH1_0);
    }
    if (effect == DLA_WRITE_OP_ENABLED) {
        const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
        if (r) {
            dla_timing_op_enabled(d->timing, r->unit, d->rf.ptr[r->unit].producer);
        }
    }
}

/* Timing: what a read returns at the host's cycle (status bits and S_STATUS
 * of layers still running in modelled time). */
static uint32_t timing_csb_read(struct dla_dev *d, uint32_t addr, uint32_t v)
{
    dla_timing_csb_read(d->timing);
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    if (!r) {
        return v;
    }
    if (r->kind == NVDLA_KIND_INTR_STATUS) {
        return dla_timing_intr_status(d->timing, v);
    }
    if (r->kind == NVDLA_KIND_STATUS) {
        return dla_timing_unit_status(d->timing, r->unit, v);
    }
    return v;
}

/* Every CSB write but the common one (nvdla_csb_write): out of line, so
 * that the common one saves no registers and makes no call.  not_plain:
 * the common path found the register is not one it writes. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int csb_write_full(struct dlasim_dev *dev, uint32_t addr, uint32_t val, int not_plain)
{
    struct dla_dev *d = core(dev);
    int rc = dla_csb_check_write(&d->host, addr); /* csb.c */
    if (rc) {
        return rc;
    }
    dla_csb_log_write(&d->host, &nvdla_db, addr, val, "");
    enum dla_write_effect effect = dla_csb_logged(
        &d->host, &d->rf, addr, val, "",
        not_plain ? dla_regfile_write_slow(&d->rf, addr, val) : dla_regfile_write(&d->rf, addr, val));
    if (d->timing) {
        timing_csb_write(d, addr, effect);
    }
    /* BDMA is not ping-pong: CFG_OP_0 / CFG_LAUNCH0/1 writes act at once on
     * its transfer queue (see dla_bdma_csb_written in dla.h). */
    if (effect == DLA_WRITE_STORED && addr >= nvdla_units[NVDLA_UNIT_BDMA].base &&
        addr < nvdla_units[NVDLA_UNIT_BDMA].base + 0x1000u) {
        dla_bdma_csb_written(d, addr, val);
    }
    if (effect == DLA_WRITE_INTR_CHANGED) {
        update_irq(d);
    }
    return 0;
}

/* The common writes: a PLAIN, POINTER or OP_ENABLE register outside BDMA
 * (whose stored writes act at once), no DLASIM_LOG_REG line and no timing
 * model to tell: all the full path would do after the register file's
 * store is nothing (but the log of a dropped write). */
static void quiesce_for(struct dla_dev *d, uint32_t addr, int write);
static int meets_inflight(const struct dla_dev *d, uint32_t e, int write);
static void try_chain(struct dla_dev *d);

static int nvdla_csb_write(struct dlasim_dev *dev, uint32_t addr, uint32_t val)
{
    struct dla_dev *d = core(dev);
    if (d->inflight_running) {
        quiesce_for(d, addr, 1);
    }
    if (!(d->host.log_mask & DLASIM_LOG_REG) && !d->timing &&
        addr - nvdla_units[NVDLA_UNIT_BDMA].base >= 0x1000u) {
        if (dla_regfile_write_plain(&d->rf, addr, val) != DLA_WRITE_NOT_PLAIN) {
            return 0;
        }
        /* producer pointers and OP_ENABLEs: of the full path's steps after
         * the store only the log of a dropped write can apply */
        int effect = dla_regfile_write_control(&d->rf, dla_regfile_entry(&d->rf, addr), val);
        if (effect == DLA_WRITE_DROPPED_ENABLED) {
            dla_csb_logged(&d->host, &d->rf, addr, val, "", DLA_WRITE_DROPPED_ENABLED);
        }
        if (effect == DLA_WRITE_OP_ENABLED && d->inflight == 1 && d->inflight_running) {
            try_chain(d); /* a convolution that can follow the running one at once */
        }
        if (effect != DLA_WRITE_NOT_PLAIN) {
            return 0;
        }
        return csb_write_full(dev, addr, val, 1);
    }
    return csb_write_full(dev, addr, val, 0);
}

/*
 * n writes as n nvdla_csb_write calls.  A run of PLAIN writes to one unit's
 * registers of one kind (dual or single) finds where they go once: a PLAIN
 * store changes no unit state (dla_regfile_plain_target), so the answer
 * holds until a write of another kind, which goes through nvdla_csb_write
 * and makes the next run look again.
 */
static int nvdla_csb_write_n(struct dlasim_dev *dev, const struct dlasim_reg_write *w, size_t n,
                             size_t *done)
{
    struct dla_dev *d = core(dev);
    struct dla_regfile *rf = &d->rf;
    const uint32_t bdma = nvdla_units[NVDLA_UNIT_BDMA].base;
    const uint32_t key_bits = DLA_SLOT_UNIT_MASK << DLA_SLOT_UNIT_SHIFT | DLA_SLOT_DUAL;
    int quiet = !(d->host.log_mask & DLASIM_LOG_REG) && !d->timing;
    uint32_t key = DLA_SLOT_NONE; /* unit and kind `vals` is for; never a real key */
    uint32_t *vals = NULL;
    size_t i = 0;
    int rc = 0;
    for (; i < n; i++) {
        uint32_t addr = w[i].addr;
        uint32_t e = quiet && addr - bdma >= 0x1000u ? dla_regfile_entry(rf, addr) : DLA_SLOT_NONE;
        if ((e & (DLA_SLOT_PLAIN | DLA_SLOT_NONE_BIT)) == DLA_SLOT_PLAIN) {
            if (d->inflight_running && meets_inflight(d, e, 1)) {
                quiesce(d);
            }
            if ((e & key_bits) != key) {
                key = e & key_bits;
                vals = dla_regfile_plain_target(rf, (e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK,
                                                (e & DLA_SLOT_DUAL) != 0);
            }
            if (vals) {
                dla_regfile_plain_store(rf, vals, e, w[i].val);
                continue;
            }
        }
        key = DLA_SLOT_NONE; /* this write may change a unit's state */
        rc = nvdla_csb_write(dev, addr, w[i].val);
        if (rc) {
            break;
        }
    }
    *done = i;
    return rc;
}

static int nvdla_csb_read(struct dlasim_dev *dev, uint32_t addr, uint32_t *val)
{
    struct dla_dev *d = core(dev);
    if (d->inflight_running) {
        quiesce_for(d, addr, 0);
    }
    int rc = dla_csb_check_read(&d->host, addr, val); /* csb.c */
    if (rc) {
        return rc;
    }
    dla_regfile_read(&d->rf, addr, val); /* unmapped addresses read as zero */
    if (d->timing) {
        *val = timing_csb_read(d, addr, *val);
    }
    return 0;
}

/* ---- scheduler ---------------------------------------------------------------- */


/*
 * A hardware layer the scheduler can run.  It is runnable when its lead unit
 * is enabled in its CONSUMER group (and `lead_ok` agrees: SDP and PDP from
 * memory, not on the fly), all of `units` are, and, for `sdp_chain`, SDP and
 * what SDP's programming links to it (SDP_RDMA for operands from memory, PDP
 * on the fly).  BDMA has no OP_EN: `find` looks at its launch queue instead.
 */
struct pipeline {
    enum dla_layer_kind kind;
    unsigned lead;
    int (*lead_ok)(const struct dla_dev *d, unsigned group);
    unsigned n_units;
    unsigned units[5];
    int sdp_chain;
    int (*find)(const struct dla_dev *d, struct layer *l);
    int (*run)(struct dla_dev *d, const struct layer *l);
};

/* A unit's CONSUMER; for the units of find_flip, the other group (the one
 * the completion of the layer running now moves it to: try_chain). */
static unsigned consumer(const struct dla_dev *d, unsigned u)
{
    return d->rf.ptr[u].consumer ^ ((d->find_flip >> u) & 1u);
}

static int enabled(const struct dla_dev *d, unsigned u)
{
    return d->rf.unit[u].present && dla_regfile_op_en(&d->rf, u, consumer(d, u));
}

/* Add unit u to the layer if it is enabled; returns whether it was. */
static int take(const struct dla_dev *d, struct layer *l, unsigned u)
{
    if (!enabled(d, u)) {
        return 0;
    }
    l->unit[l->n] = (uint8_t)u;
    l->group[l->n] = (uint8_t)consumer(d, u);
    l->n++;
    return 1;
}

/* SDP and what it is linked with (SDP_RDMA, PDP on the fly). */
static int take_sdp_chain(const struct dla_dev *d, struct layer *l)
{
    unsigned g = consumer(d, NVDLA_UNIT_SDP);
    if (!take(d, l, NVDLA_UNIT_SDP)) {
        return 0;
    }
    if (dla_sdp_needs_rdma(d, g) && !take(d, l, NVDLA_UNIT_SDP_RDMA)) {
        return 0;
    }
    if (dla_sdp_output_to_pdp(d, g) && !take(d, l, NVDLA_UNIT_PDP)) {
        return 0;
    }
    return 1;
}

static int has_unit(const struct layer *l, unsigned u)
{
    for (unsigned i = 0; i < l->n; i++) {
        if (l->unit[i] == u) {
            return 1;
        }
    }
    return 0;
}

static int sdp_from_memory(const struct dla_dev *d, unsigned group)
{
    return !dla_sdp_flying(d, group);
}

static int pdp_from_memory(const struct dla_dev *d, unsigned group)
{
    return !dla_pdp_flying(d, group);
}

/* BDMA has no OP_EN: a launched group of transfers is its layer. */
static int find_bdma(const struct dla_dev *d, struct layer *l)
{
    int g = d->rf.unit[NVDLA_UNIT_BDMA].present ? dla_bdma_runnable(d) : -1;
    if (g < 0) {
        return 0;
    }
    l->unit[0] = NVDLA_UNIT_BDMA;
    l->group[0] = (uint8_t)g;
    l->n = 1;
    return 1;
}

/* Run the SDP (and PDP on the fly) part of a layer. */
static int run_sdp_chain(struct dla_dev *d, const struct layer *l, const struct dla_cube *in)
{
    struct dla_cube to_pdp = {0};
    unsigned g = l->exec_group[NVDLA_UNIT_SDP];
    int to_pdp_wanted = has_unit(l, NVDLA_UNIT_PDP);
    d->cur_unit = "SDP";
    int rc = dla_sdp_execute(d, g, in, to_pdp_wanted ? &to_pdp : NULL);
    if (!rc && to_pdp_wanted) {
        d->cur_unit = "PDP";
        rc = dla_pdp_execute(d, l->exec_group[NVDLA_UNIT_PDP], &to_pdp);
    }
    dla_cube_free(&to_pdp);
    return rc;
}

/* dla_team_prologue's: SDP's set-up of the layer made during the first
 * job the convolution shares (sdp.c struct dla_sdp_prep). */
struct sdp_ahead {
    struct dla_dev *d;
    unsigned group;
};

static void sdp_ahead(void *ctx)
{
    const struct sdp_ahead *a = ctx;
    dla_sdp_prepare(a->d, a->group);
}

/* Whether SDP's set-up may be made during the convolution's job: on the
 * owner's thread (a chained layer's jobs stay on its worker), and with
 * nothing that reports the engines' steps in order (the cycle model, a
 * layer observer, the host's logs). */
static int sdp_ahead_allowed(const struct dla_dev *d, const struct layer *l)
{
    return d->team != NULL && dla_team_seat(d->team) == 0 && has_unit(l, NVDLA_UNIT_SDP) &&
           !d->timing && !d->base.layer_fn && !d->host.log_mask;
}

static int run_conv(struct dla_dev *d, const struct layer *l)
{
    struct dla_cube to_sdp = {0};
    d->cur_unit = "CONV";
    struct sdp_ahead ahead = {d, l->exec_group[NVDLA_UNIT_SDP]};
    const int ahead_on = sdp_ahead_allowed(d, l);
    if (ahead_on) {
        dla_team_prologue(d->team, sdp_ahead, &ahead);
    }
    int rc = dla_conv_execute(d, l->exec_group[NVDLA_UNIT_CDMA], &to_sdp);
    if (ahead_on) {
        dla_team_prologue(d->team, NULL, NULL);
    }
    if (!rc) {
        rc = run_sdp_chain(d, l, &to_sdp);
    }
    if (ahead_on) {
        dla_sdp_prepared_drop(d); /* (not taken: the layer failed before SDP) */
    }
    dla_cube_free(&to_sdp);
    return rc;
}

static int run_sdp(struct dla_dev *d, const struct layer *l)
{
    return run_sdp_chain(d, l, NULL);
}

/* A unit leading its own layer: the unit table (units.c) says which engine;
 * BDMA's group is its launch group, the others' their CONSUMER. */
static int run_unit(struct dla_dev *d, const struct layer *l)
{
    const struct dla_unit_behaviour *u = &dla_unit_table[l->unit[0]];
    d->cur_unit = u->engine;
    return u->execute(d, l->group[0]);
}

/* In the order the scheduler looks for them (docs/architecture.md). */
static const struct pipeline pipelines[] = {
    {DLA_LAYER_CONV, NVDLA_UNIT_CDMA, NULL, 5,
     {NVDLA_UNIT_CDMA, NVDLA_UNIT_CSC, NVDLA_UNIT_CMAC_A, NVDLA_UNIT_CMAC_B, NVDLA_UNIT_CACC}, 1,
     NULL, run_conv},
    {DLA_LAYER_SDP, NVDLA_UNIT_SDP, sdp_from_memory, 0, {0}, 1, NULL, run_sdp},
    {DLA_LAYER_PDP, NVDLA_UNIT_PDP, pdp_from_memory, 2, {NVDLA_UNIT_PDP, NVDLA_UNIT_PDP_RDMA}, 0,
     NULL, run_unit},
    {DLA_LAYER_CDP, NVDLA_UNIT_CDP, NULL, 2, {NVDLA_UNIT_CDP, NVDLA_UNIT_CDP_RDMA}, 0, NULL,
     run_unit},
    {DLA_LAYER_BDMA, NVDLA_UNIT_BDMA, NULL, 0, {0}, 0, find_bdma, run_unit},
    {DLA_LAYER_RUBIK, NVDLA_UNIT_RUBIK, NULL, 1, {NVDLA_UNIT_RUBIK}, 0, NULL, run_unit},
};

/* Whether a unit of the layer is held by a stalled layer. */
static int uses_stalled_unit(const struct dla_dev *d, const struct layer *l)
{
    for (unsigned i = 0; i < l->n; i++) {
        if (d->stalled_units >> l->unit[i] & 1u) {
            return 1;
        }
    }
    return 0;
}

static int runnable(const struct dla_dev *d, const struct pipeline *p, struct layer *l)
{
    l->p = p;
    l->n = 0;
    if (p->find) {
        return p->find(d, l) && !uses_stalled_unit(d, l);
    }
    if (!enabled(d, p->lead) || (p->lead_ok && !p->lead_ok(d, consumer(d, p->lead)))) {
        return 0;
    }
    for (unsigned i = 0; i < p->n_units; i++) {
        if (!take(d, l, p->units[i])) {
            return 0;
        }
    }
    return (!p->sdp_chain || take_sdp_chain(d, l)) && !uses_stalled_unit(d, l);
}

static void complete_layer(struct dla_dev *d, const struct layer *l, uint32_t stalled);

/* The layer never completes: the units dla_stall named (`stalling`) stay
 * enabled and busy, with no done interrupt (the RTL's state while it
 * hangs); the layer's other units complete. */
static void stall_layer(struct dla_dev *d, const struct layer *l, uint32_t stalling)
{
    uint32_t stalled = 0;
    for (unsigned i = 0; i < l->n; i++) {
        stalled |= stalling & 1u << l->unit[i];
    }
    complete_layer(d, l, stalled);
    d->stalled_units |= stalled;
    d->stalled_layer = l->index;
    /* what a driver waiting for the interrupt reports (dlasim_last_error) */
    snprintf(d->host.err, sizeof(d->host.err), "layer %u never completes (the hardware hangs on "
             "it): %s", l->index, d->stall_why);
    dla_log(d, DLASIM_LOG_EXEC, "layer %u: never completes: %s", l->index, d->stall_why);
}

/* The first runnable layer, in the table's order. */
static int find_layer(const struct dla_dev *d, struct layer *l)
{
    for (size_t i = 0; i < sizeof(pipelines) / sizeof(pipelines[0]); i++) {
        if (runnable(d, &pipelines[i], l)) {
            return 1;
        }
    }
    return 0;
}

/* Complete a layer as the hardware does, whatever its outcome; units in
 * `stalled` (dla_stall) stay enabled and raise nothing. */
static void complete_layer(struct dla_dev *d, const struct layer *l, uint32_t stalled)
{
    uint32_t bits = 0;
    for (unsigned i = 0; i < l->n; i++) {
        if (stalled >> l->unit[i] & 1u) {
            continue;
        }
        bits |= dla_unit_done_bits(l->unit[i], l->group[i]); /* units.c */
        if (l->unit[i] == NVDLA_UNIT_BDMA) {
            dla_bdma_complete(d); /* retire the launched group (no OP_EN/CONSUMER) */
        } else {
            dla_regfile_complete(&d->rf, l->unit[i]);
        }
    }
    dla_regfile_raise(&d->rf, bits);
    if (d->timing) {
        /* CDMA's data and weight done bits rise when its fetches end */
        dla_timing_raise(d->timing, bits, CDMA_DAT_DONE_BITS, CDMA_WT_DONE_BITS);
    }
    update_irq(d);
}

/* The layer as its engines describe it (units.c summarize hooks). */
static void summarize_layer(struct dla_dev *d, const struct layer *l, struct dla_layer_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->kind = l->p->kind;
    s->n = l->n;
    s->unit = l->unit;
    s->group = l->group;
    for (unsigned i = 0; i < l->n; i++) {
        const struct dla_unit_behaviour *u = &dla_unit_table[l->unit[i]];
        s->engines |= 1u << u->timing_unit;
        if (u->summarize) {
            u->summarize(d, l->group[i], s);
        }
    }
}

/* Timing: the summary timed by the cycle model, whose PERF counter values
 * are written into the units whose perf enable is set. */
static void time_layer(struct dla_dev *d, const struct layer *l, const struct dla_layer_summary *s)
{
    struct dla_perf_counters perf;
    dla_timing_layer_end(d->timing, s, l->index, &perf);
    for (size_t k = 0; k < dla_unit_perf_count; k++) {
        const struct dla_unit_perf *p = &dla_unit_perf[k];
        for (unsigned i = 0; i < l->n; i++) {
            if (l->unit[i] != p->unit) {
                continue;
            }
            if (dla_reg(d, p->enable_reg, l->group[i]) & p->enable_mask) {
                dla_reg_hw_set(d, p->reg, l->group[i], perf.v[p->counter]);
            }
        }
    }
}

/* The public description of a layer (include/dlasim/layer.h) from its
 * summary: one decode, shared with the cycle model. */
static void observe_layer(struct dla_dev *d, const struct layer *l,
                          const struct dla_layer_summary *s, int status)
{
    struct dlasim_layer_info li;
    memset(&li, 0, sizeof(li));
    li.index = l->index;
    li.kind = dla_layer_kind_name(s->kind);
    li.status = status;
    if (s->kind == DLA_LAYER_CONV) {
        const struct dla_conv_summary *c = &s->conv;
        li.out_w = (uint32_t)c->out_w;
        li.out_h = (uint32_t)c->out_h;
        li.out_k = (uint32_t)c->k;
        li.in_c = (uint32_t)c->c;
        li.k_w = (uint32_t)c->s;
        li.k_h = (uint32_t)c->r;
        li.stride_x = (uint32_t)c->stride_x;
        li.stride_y = (uint32_t)c->stride_y;
        li.dil_x = (uint32_t)c->dil_x;
        li.dil_y = (uint32_t)c->dil_y;
        li.batches = (uint32_t)c->batches;
        li.data_banks = (uint32_t)c->data_banks;
        li.weight_banks = (uint32_t)c->weight_banks;
        li.macs = c->macs;
    }
    dla_layer_notify(&d->base, &li);
}

/* The units layer l uses (with the read DMAs whose registers their
 * engines read, in their own consumer groups when l does not take them)
 * and the groups its engines read (dla_dev_exec_group). */
static void claim_units(const struct dla_dev *d, struct layer *l)
{
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        l->exec_group[u] = (uint8_t)consumer(d, u);
    }
    l->units = 0;
    for (unsigned i = 0; i < l->n; i++) {
        const unsigned r = dla_unit_table[l->unit[i]].rdma;
        l->units |= 1u << l->unit[i];
        l->exec_group[l->unit[i]] = (uint8_t)l->group[i];
        if (r) {
            l->units |= 1u << r;
        }
    }
}

/* Layer l found runnable: it starts (its index, log line, cycle model). */
static void claim_layer(struct dla_dev *d, struct layer *l)
{
    l->index = ++d->layer;
    claim_units(d, l);
    dla_log(d, DLASIM_LOG_EXEC, "layer %u: start (%u units)", l->index, l->n);
    if (d->timing) {
        dla_timing_layer_begin(d->timing);
    }
}

/* Layer l's engines, on the calling thread: their status; the units they
 * stalled are in d->stalling. */
static int run_layer(struct dla_dev *d, const struct layer *l)
{
    d->stalling = 0;
    memcpy(d->exec_group, l->exec_group, sizeof d->exec_group);
    d->exec_index = l->index;
    const int rc = l->p->run(d, l);
    d->cur_unit = NULL;
    return rc;
}

/* What follows layer l's engines (status rc, the units they stalled): its
 * summary for the cycle model and the observer, then its completion (or
 * its stall). */
static int finish_layer(struct dla_dev *d, const struct layer *l, int rc, uint32_t stalling)
{
    if (d->timing || d->base.layer_fn) {
        struct dla_layer_summary s;
        summarize_layer(d, l, &s);
        if (d->timing) {
            time_layer(d, l, &s);
        }
        if (d->base.layer_fn) {
            observe_layer(d, l, &s, rc);
        }
    }
    if (!rc && stalling) {
        stall_layer(d, l, stalling);
        return 1;
    }
    complete_layer(d, l, 0);
    dla_log(d, DLASIM_LOG_EXEC, "layer %u: done (%s)", l->index, dlasim_status_name(rc));
    return rc ? rc : 1;
}

/* ---- overlap: the next layer on a worker while the host services one ---------- */

/* The register windows of l's units (both groups: the host wrote them on
 * its core), fetched at once rather than line by line as the engines'
 * decodes first touch them (the worker), or for writing (the host, once
 * the layer has ended, for the group's next programming: see join_next). */
static void prefetch_layer_regs(const struct dla_dev *d, const struct layer *l, int write)
{
    uint32_t units = l->units;
    for (unsigned u = 0; units; u++, units >>= 1) {
        if (!(units & 1u)) {
            continue;
        }
        const struct dla_unit_state *us = &d->rf.unit[u];
        const unsigned g = l->exec_group[u] & 1u;
        const char *lo = (const char *)(d->rf.val[0] + us->first_reg);
        const char *dual = (const char *)(d->rf.val[g] + us->first_reg);
        for (size_t at = 0; at < (size_t)us->view_n * 4u; at += 64) {
            const char *line = at < (size_t)us->view_dual_lo * 4u ? lo + at : dual + at;
            if (write) {
                __builtin_prefetch(line, 1);
            } else {
                __builtin_prefetch(line);
            }
        }
    }
}

/*
 * The worker's task: the layer in slot task_slot, then each layer the host
 * chains after it (try_chain), until none is queued when one ends (what
 * the engines touch is theirs until the host joins: the layers' units'
 * registers in their groups, CBUF, the memory; the host's CSB accesses
 * that could meet them wait first).  A layer's status and stalled units go
 * to its slot, then `done` counts it (release: the host finishes it once
 * it sees the count); whether the next one was taken is settled before.
 * After an error or a stall nothing more runs (a queued layer is left for
 * the host to take back).
 */
static void run_chain(void *ctx)
{
    struct dla_dev *d = ctx;
    unsigned s = d->task_slot;
    /* the word as this task last left it: only the host's queueing
     * (CHAIN_OPEN -> CHAIN_QUEUED) changes it meanwhile */
    unsigned w = atomic_load_explicit(&d->chain, memory_order_relaxed);
    for (;;) {
        const struct layer *l = &d->task_layer[s];
        prefetch_layer_regs(d, l, 0);
        const int rc = run_layer(d, l);
        const int go_on = rc == 0 && !d->stalling;
        if (!go_on) { /* (hand_over left them 0) */
            d->slot_rc[s] = rc;
            d->slot_stalling[s] = d->stalling;
        } else {
            /* the next layer's copy, which the host wrote if it queued
             * one: fetched beside the word's line, not after it */
            __builtin_prefetch(&d->task_layer[s ^ 1u]);
        }
        /* one exchange, expecting a queued layer (the host is usually
         * ahead); on a miss w is the word as it is */
        unsigned next;
        w = (w & ~3u) | CHAIN_QUEUED;
        do {
            next = CHAIN_WORD(CHAIN_DONE(w) + 1u,
                              go_on && CHAIN_STATE(w) == CHAIN_QUEUED ? CHAIN_OPEN : CHAIN_CLOSED);
        } while (!atomic_compare_exchange_weak_explicit(&d->chain, &w, next, memory_order_acq_rel,
                                                        memory_order_relaxed));
        if (CHAIN_STATE(next) != CHAIN_OPEN) {
            return;
        }
        w = next;
        s ^= 1u;
    }
}

/* Engines whose layers overlap: every CSB write of another kind (BDMA's
 * queue, RUBIK) acts at once in the hardware, so those stay in step. */
static int overlaps(enum dla_layer_kind kind)
{
    return kind == DLA_LAYER_CONV || kind == DLA_LAYER_SDP || kind == DLA_LAYER_PDP ||
           kind == DLA_LAYER_CDP;
}

/* inflight_units and inflight_gmask from the layers claimed and not yet
 * finished. */
static void track_inflight(struct dla_dev *d)
{
    d->inflight_units = 0;
    memset(d->inflight_gmask, 0, sizeof d->inflight_gmask);
    for (unsigned k = 0; k < d->inflight; k++) {
        const struct layer *l = &d->slot[(d->head + k) & 1u];
        d->inflight_units |= l->units;
        for (uint32_t units = l->units; units; units &= units - 1u) { /* (its units only) */
            const unsigned u = (unsigned)__builtin_ctz(units);
            d->inflight_gmask[u] |= (uint8_t)(1u << (l->exec_group[u] & 1u));
        }
    }
}

/* Slot s's layer, claimed, copied for the worker's task (before it is
 * published to it). */
static void hand_over(struct dla_dev *d, unsigned s)
{
    d->task_layer[s] = d->slot[s];
    d->slot_rc[s] = 0;
    d->slot_stalling[s] = 0;
}

/* Layer l (found runnable, in slot[head]) claimed and handed to a worker's
 * task of its own (run_chain). */
static void start_task(struct dla_dev *d, struct dla_team *team, struct layer *l)
{
    claim_layer(d, l);
    d->inflight = 1;
    track_inflight(d);
    d->finished = 0;
    d->task_slot = d->head;
    hand_over(d, d->head);
    atomic_store_explicit(&d->chain, CHAIN_WORD(0u, CHAIN_OPEN), memory_order_relaxed);
    d->inflight_running = 1;
    if (dla_team_spawn(team, run_chain, d)) {
        run_chain(d); /* (never: the last task ended at its join) */
    }
}

/* As the hardware does on a layer's completion: the next runnable layer
 * starts at once, here on a worker, while the host services the interrupt
 * and programs the group that just freed (spec 001, "Ping-pong
 * Synchronization Mechanism": software programs one group while the other
 * executes). */
static void run_ahead(struct dla_dev *d)
{
    struct dla_team *team = dla_dev_team(d);
    struct layer *l = &d->slot[d->head];
    /* (not while the cores' link is slow: the handover costs more than
     * the overlap wins, team.h dla_team_coupled) */
    if (d->inflight || !team || !dla_team_coupled(team) || !find_layer(d, l) ||
        !overlaps(l->p->kind)) {
        return;
    }
    start_task(d, team, l);
}

/* try_chain after the task ended with the running layer (the host
 * enabled the next one too late for it): a task of its own for the next
 * slot's layer, unless that layer failed or stalled (or the link is slow:
 * dla_team_spawn).  1 when spawned. */
static int chain_anew(struct dla_dev *d)
{
    dla_team_help_until_done(d->team); /* (at its end: it closed the chain) */
    const unsigned s = d->head;
    if (d->slot_rc[s] != 0 || d->slot_stalling[s]) {
        return 0;
    }
    d->task_slot = s ^ 1u;
    const unsigned ended = atomic_load_explicit(&d->chain, memory_order_relaxed);
    /* (open again: the join sees the next layer taken) */
    atomic_store_explicit(&d->chain, CHAIN_WORD(CHAIN_DONE(ended), CHAIN_OPEN),
                          memory_order_relaxed);
    if (dla_team_spawn(d->team, run_chain, d)) {
        atomic_store_explicit(&d->chain, ended, memory_order_relaxed);
        return 0;
    }
    return 1;
}

/*
 * The host enabled a unit while a layer runs on the worker: a convolution
 * that becomes runnable when that one completes is chained after it, so
 * the worker starts it as it ends (as the hardware does) instead of
 * waiting for the host to see the end, complete it and hand the next one
 * over (~0.3 us a MobileNetV2 depthwise block).  Only a convolution after
 * a convolution: CONV leads the scheduler's table (find_layer), so a
 * stepped device, completing the running one, would start this one next
 * whatever else becomes runnable meanwhile, and its enables stay set
 * until it runs; the order of layers and completions is a stepped
 * device's.  Not under the cycle model, a layer observer or the execution
 * log (their calls are the host's, in order).
 */
static void try_chain(struct dla_dev *d)
{
    const struct layer *run = &d->slot[d->head];
    if (d->inflight != 1 || !d->inflight_running || run->p->kind != DLA_LAYER_CONV ||
        d->timing || d->base.layer_fn || (d->host.log_mask & DLASIM_LOG_EXEC)) {
        return;
    }
    struct layer *l = &d->slot[d->head ^ 1u];
    d->find_flip = run->units; /* as after its completion */
    const int found = runnable(d, &pipelines[0], l);
    if (found) {
        claim_units(d, l);
    }
    d->find_flip = 0;
    if (!found) {
        return;
    }
    l->index = d->layer + 1;
    /* (its registers decoded by the worker as it runs it: csc.c
     * conv_execute says why not here) */
    hand_over(d, d->head ^ 1u);
    /* the task has ended the layers the host finished, and runs the next
     * one unless it ended it too (then the word is CHAIN_CLOSED) */
    unsigned w = CHAIN_WORD(d->finished, CHAIN_OPEN);
    const int ended = !atomic_compare_exchange_strong_explicit(
        &d->chain, &w, CHAIN_WORD(d->finished, CHAIN_QUEUED), memory_order_release,
        memory_order_relaxed);
    if (ended && !chain_anew(d)) {
        return; /* run_ahead starts it at the next step */
    }
    d->layer++;
    d->inflight = 2;
    track_inflight(d);
}

/* Before a host access that could meet the layers on the worker: their
 * engines end (the host helps with their team jobs meanwhile).  Their
 * completions stay the next steps', so the host sees them still enabled,
 * as a stepped device shows layers not yet run, and those steps return
 * their status. */
static void quiesce(struct dla_dev *d)
{
    if (d->inflight_running) {
        dla_team_help_until_done(d->team);
        d->inflight_running = 0;
        d->inflight_units = 0;
    }
}

/* The next layer started early, to its end and completion (a step's): the
 * host waits for its engines alone (helping with their team jobs), not for
 * a layer chained after it. */
static int join_next(struct dla_dev *d)
{
    const unsigned want = d->finished + 1;
    if (d->inflight_running) {
        dla_team_help_until_count(d->team, &d->chain, CHAIN_WORD(want, 0u));
    }
    const unsigned s = d->head;
    /* The host programs this layer's groups next (its completion frees
     * them): their lines, which the worker read while it ran, have left
     * this core (this host passes a modified line on at a read), and each
     * PLAIN write's compare would wait for its line in turn; fetched now,
     * they come while the interrupt is serviced. */
    prefetch_layer_regs(d, &d->slot[s], 1);
    /* ... and the worker's copy of it, which hand_over writes next */
    for (size_t at = 0; at < sizeof(d->task_layer[s]); at += 64) {
        __builtin_prefetch((const char *)&d->task_layer[s] + at, 1);
    }
    const int rc = finish_layer(d, &d->slot[s], d->slot_rc[s], d->slot_stalling[s]);
    d->finished++;
    d->head ^= 1u;
    d->inflight--;
    if (d->inflight && atomic_load_explicit(&d->chain, memory_order_relaxed) ==
                           CHAIN_WORD(d->finished, CHAIN_CLOSED)) {
        d->inflight = 0; /* chained but left (an error or a stall before it) */
        d->layer--;
    }
    if (!d->inflight) {
        quiesce(d); /* the task ends without another layer */
    } else {
        track_inflight(d);
    }
    return rc;
}

/*
 * Whether a CSB access to register entry e (dla_regfile_entry) may meet
 * the layers on the worker: a register of one of their units (or their
 * read DMAs) that their engines read or write while they run.  Never their
 * pointers, OP_ENs and status (the host's alone until the join); for a
 * write, a single register (the engines read them: dla_unit_values) or a
 * dual one of a group they run (dropped anyway while its OP_EN is set);
 * for a read, a dual one of such a group (the engines' counters:
 * dla_reg_hw_set stores only D_ registers of the layers' groups; the
 * single ones it sets, CBUF's flush status, change at reset only) or the
 * LUT ports.
 */
static int meets_inflight(const struct dla_dev *d, uint32_t e, int write)
{
    if (e == DLA_SLOT_NONE) {
        return 1; /* (its error message is the device's) */
    }
    const unsigned u = (e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK;
    if (!(d->inflight_units >> u & 1u) || (e & (DLA_SLOT_POINTER | DLA_SLOT_OP_ENABLE))) {
        return 0;
    }
    if (e & DLA_SLOT_DUAL) {
        return d->inflight_gmask[u] >> (d->rf.ptr[u].producer & 1u) & 1u;
    }
    const uint8_t kind = d->rf.regs[e & DLA_SLOT_INDEX].kind;
    return kind != NVDLA_KIND_STATUS && (write || kind != NVDLA_KIND_PLAIN);
}

/* quiesce when a CSB access to addr may meet the layers on the worker. */
static void quiesce_for(struct dla_dev *d, uint32_t addr, int write)
{
    if (d->inflight_running && meets_inflight(d, dla_regfile_entry(&d->rf, addr), write)) {
        quiesce(d);
    }
}

static int nvdla_set_overlap(struct dlasim_dev *dev, int on)
{
    struct dla_dev *d = core(dev);
    const int was = d->overlap;
    quiesce(d);
    d->overlap = on && d->overlap_possible;
    return was;
}

/* host_team.h: the layers on the worker ended (their completions stay
 * the next steps'). */
static struct dla_team *nvdla_idle_team(struct dlasim_dev *dev)
{
    struct dla_dev *d = core(dev);
    quiesce(d);
    return dla_dev_team(d);
}

static int nvdla_step(struct dlasim_dev *dev)
{
    struct dla_dev *d = core(dev);
    int rc;
    if (d->inflight) {
        rc = join_next(d);
    } else {
        struct layer l;
        if (!find_layer(d, &l)) {
            return 0;
        }
        claim_layer(d, &l);
        rc = run_layer(d, &l);
        rc = finish_layer(d, &l, rc, d->stalling);
    }
    if (rc > 0 && d->overlap && d->irq.level && !d->inflight) {
        run_ahead(d); /* the host now services the interrupt */
    }
    return rc;
}

static int nvdla_busy(struct dlasim_dev *dev, char *desc, size_t desclen)
{
    struct dla_dev *d = core(dev);
    quiesce(d);
    struct dla_desc out;
    int busy = 0;
    dla_desc_init(&out, desc, desclen);
    /* BDMA transfers queued by CFG_OP but never launched (STATUS_0.IDLE=0
     * while nothing is runnable). */
    if (d->rf.unit[NVDLA_UNIT_BDMA].present &&
        !DLA_FIELD(dla_regfile_get(&d->rf, NVDLA_BDMA_STATUS_0, 0), NVDLA_BDMA_STATUS_0_IDLE)) {
        busy = 1;
        dla_desc_add(&out, "BDMA transfers queued, not launched");
    }
    if (d->stalled_units) {
        busy = 1;
        dla_desc_add(&out, "layer %u never completes (the hardware hangs on it): %s",
                     d->stalled_layer, d->stall_why);
    }
    return dla_csb_describe_enabled(&d->rf, "", &out) > 0 || busy;
}

/* ---- lifecycle ---------------------------------------------------------------- */

/* Port `port` of the configuration: present or not, addresses below
 * 2^NVDLA_MEMIF_ADDRESS_WIDTH (spec 004). */
static int setup_port(struct dla_dev *d, enum dlasim_port port, int present,
                      const struct dlasim_mem_ops *ops, void *opaque, char *err, size_t errlen)
{
    uint64_t limit = d->cfg.memif_address_width >= 64 ? UINT64_MAX
                                                       : (1ull << d->cfg.memif_address_width);
    return dla_host_port_init(&d->host, port, present, limit, ops, opaque, err, errlen);
}

static int configure(struct dla_dev *d, const struct dlasim_options *opt, char *err,
                     size_t errlen)
{
    /* options' pointers were checked by dlasim_create (api.c) */
    int rc = dla_config_init(&d->cfg, opt->config, err, errlen);
    for (size_t i = 0; !rc && i < opt->n_overrides; i++) {
        rc = dla_config_set(&d->cfg, opt->overrides[i], err, errlen);
    }
    if (!rc) {
        rc = dla_config_validate(&d->cfg, err, errlen);
    }
    return rc;
}

static void nvdla_destroy(struct dlasim_dev *dev);

static int nvdla_create(const struct dlasim_options *opt, struct dlasim_dev **out, char *err,
                        size_t errlen)
{
    /* aligned: the engines' fields have a cache line of their own */
    struct dla_dev *d = aligned_alloc(64, (sizeof(*d) + 63) / 64 * 64);
    if (d) {
        memset(d, 0, sizeof(*d));
    }
    if (!d) {
        snprintf(err, errlen, "dlasim_create: out of host memory for the device");
        return DLASIM_ERR_NOMEM;
    }
    d->base.ops = &dla_nvdla_ops;
    struct dlasim_dev *dev = &d->base;
    dla_host_init(&d->host, opt);
    d->exec = (struct dla_exec){&d->host, d, layer_where, layer_traffic, NULL};
    d->irq.reports = 1;
    int rc = configure(d, opt, err, errlen);
    if (!rc) {
        rc = dla_regfile_init_nvdla(&d->rf, &d->regs, &d->cfg); /* units.c */
    }
    if (!rc) {
        rc = setup_port(d, DLASIM_PORT_DBB, 1, opt->dbb_ops, opt->dbb_opaque, err,
                        errlen);
    }
    if (!rc) {
        rc = setup_port(d, DLASIM_PORT_CVIF, d->cfg.secondary_memif_enable != 0, opt->cvif_ops,
                        opt->cvif_opaque, err, errlen);
    }
    if (!rc) {
        rc = dla_conv_state_create(d, &d->conv);
    }
    if (!rc) {
        rc = dla_bdma_state_create(d, &d->bdma);
    }
    if (!rc && opt->timing) {
        rc = dla_timing_create(&d->cfg, opt->timing_profile, &d->timing);
        if (rc) {
            snprintf(err, errlen, "timing profile: a cost is negative or not a number");
        }
    }
    if (rc) {
        nvdla_destroy(dev);
        return rc;
    }
    /* the overlap's conditions: a worker to run on, the built-in memory
     * (a caller's memory callbacks are called from the host's thread
     * only), no cycle model and no log (both follow the host's order) */
    d->overlap_possible = d->host.threads > 1 && !d->timing && !d->host.log_mask &&
                          !opt->dbb_ops && !opt->cvif_ops;
    d->overlap = opt->overlap && d->overlap_possible;
    dla_conv_reset(d);
    dla_bdma_reset(d);
    *out = dev;
    return 0;
}

static void nvdla_destroy(struct dlasim_dev *dev)
{
    struct dla_dev *d = core(dev);
    quiesce(d);
    dla_team_destroy(d->team);
    dla_conv_state_destroy(d->conv);
    dla_bdma_state_destroy(d->bdma);
    dla_timing_destroy(d->timing);
    dla_host_free(&d->host);
    dla_regfile_free(&d->rf);
    free(d);
}

static void nvdla_reset(struct dlasim_dev *dev)
{
    struct dla_dev *d = core(dev);
    quiesce(d);
    d->inflight = 0; /* its completion is reset's */
    dla_regfile_reset(&d->rf);
    dla_conv_reset(d);
    dla_bdma_reset(d);
    if (d->timing) {
        dla_timing_clear(d->timing);
    }
    d->stalling = 0;
    d->stalled_units = 0;
    d->stall_why[0] = '\0';
    d->host.err[0] = '\0';
    update_irq(d);
}

static int nvdla_param(const struct dlasim_dev *dev, const char *name, uint64_t *value)
{
    if (!name || !value) {
        return DLASIM_ERR_INVAL;
    }
    return dla_config_get(&core_const(dev)->cfg, name, value);
}

const struct dla_device_ops dla_nvdla_ops = {
    .name = "NVDLA",
    .db = &nvdla_db,
    .cores = 1,
    .create = nvdla_create,
    .destroy = nvdla_destroy,
    .reset = nvdla_reset,
    .csb_read = nvdla_csb_read,
    .csb_write = nvdla_csb_write,
    .csb_write_n = nvdla_csb_write_n,
    .mem_read = nvdla_mem_read,
    .mem_write = nvdla_mem_write,
    .step = nvdla_step,
    .busy = nvdla_busy,
    .irq_level = nvdla_irq_level,
    .param = nvdla_param,
    .last_error = nvdla_last_error,
    .set_overlap = nvdla_set_overlap,
    .idle_team = nvdla_idle_team,
    .describes_layers = 1,
};

/* ---- register names ------------------------------------------------------------ */

int dlasim_reg_lookup(const char *name, uint32_t *addr)
{
    const struct nvdla_reg_desc *r = name && addr ? nvdla_reg_by_name(name) : NULL;
    if (!r) {
        return DLASIM_ERR_INVAL;
    }
    *addr = r->addr;
    return 0;
}

const char *dlasim_reg_name(uint32_t addr, char *buf, size_t buflen)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    if (!buf || !buflen) {
        return NULL;
    }
    if (r) {
        snprintf(buf, buflen, "NVDLA_%s.%s", nvdla_units[r->unit].name, r->name);
    } else {
        snprintf(buf, buflen, "0x%x", addr);
    }
    return buf;
}
