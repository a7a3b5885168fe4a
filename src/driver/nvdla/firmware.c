/*
 * Firmware-equivalent executor: the scheduling rules of NVIDIA's firmware
 * (ref: nvdla/sw kmd/firmware/scheduler.c, engine.c, engine_isr.c), written
 * anew on the runtime port.
 *
 *   - Start: for each engine with an operation list (op_head), submit the
 *     first operation, then dequeue the next one of the same engine, so both
 *     register groups are filled ahead (ping-pong).
 *   - Submit = prepare (take a free group: the hardware CONSUMER pointer
 *     when both are free, else the other one), program if the engine is
 *     ready (LUT sharing: a group may not load a LUT while the other group
 *     runs with a different one), then enable when no dependency remains.
 *   - Programming an operation raises OP_PROGRAMMED to its consumers and
 *     fused parent; enabling raises OP_ENABLED, completing OP_COMPLETED.  A
 *     consumer whose dependency count reaches zero is enabled, which gives
 *     the consumer-before-producer order of fused CONV->SDP->PDP: the
 *     compiler makes the producer depend on its consumer's OP_ENABLED.
 *   - Completion comes from GLB S_INTR_STATUS bits (CACC for CONV; CDMA
 *     data/weight done become events), acknowledged by writing them back;
 *     the completed group is freed, the other group (pending) is programmed
 *     and enabled, and the next operation of that engine is dequeued.
 *   - The network is done when every operation has completed.
 *
 * Deviations, all refusals: ROIs (num_rois > 1, dynamic ROI) and statistics
 * are not supported; a graph that stops making progress (a dependency
 * cycle, a consumer chain that revisits an operation) is an error naming the
 * operations still waiting, never a hang.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regs/gen/nvdla_regs.h"
#include "driver/nvdla/fw.h"

static const struct nvrt_engine *const engines[DLASIM_RT_OP_NUM] = {
    &nvrt_bdma_engine, &nvrt_conv_engine, &nvrt_sdp_engine,
    &nvrt_pdp_engine,  &nvrt_cdp_engine,  &nvrt_rubik_engine,
};

static const char *const op_names[DLASIM_RT_OP_NUM] = { "BDMA", "CONV", "SDP",
                                                        "PDP",  "CDP",  "RUBIK" };

/* ---- helpers shared with the engine files ------------------------------------- */

int nvrt_fail(struct nvrt_fw *fw, int status, const char *fmt, ...)
{
    if (fw->rc == 0 && fw->err && fw->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(fw->err, fw->errlen, fmt, ap);
        va_end(ap);
    }
    if (fw->rc == 0) {
        fw->rc = status;
    }
    return status;
}

static void port_fail(struct nvrt_fw *fw, int rc, const char *what, uint32_t addr)
{
    const char *why = fw->port->last_error ? fw->port->last_error(fw->port->ctx) : "";
    char name[80];
    dlasim_reg_name(addr, name, sizeof name);
    nvrt_fail(fw, rc, "runtime: %s %s (0x%05x) failed: %s", what, name, addr,
              why && *why ? why : dlasim_status_name(rc));
}

void nvrt_wr(struct nvrt_fw *fw, uint32_t addr, uint32_t val)
{
    if (fw->rc) {
        return;
    }
    if (fw->rec && !fw->rec_pause) {
        nvrt_prep_wrote(fw, addr, val);
    }
    int rc = fw->port->reg_write(fw->port->ctx, addr, val);
    if (rc) {
        port_fail(fw, rc, "register write", addr);
    }
}

void nvrt_wr_n(struct nvrt_fw *fw, const struct dlasim_reg_write *w, size_t n)
{
    if (fw->rc || !n) {
        return;
    }
    if ((fw->rec && !fw->rec_pause) || !fw->port->reg_write_n) {
        for (size_t i = 0; i < n && !fw->rc; i++) {
            nvrt_wr(fw, w[i].addr, w[i].val);
        }
        return;
    }
    size_t done = 0;
    int rc = fw->port->reg_write_n(fw->port->ctx, w, n, &done);
    if (rc) {
        port_fail(fw, rc, "register write", w[done < n ? done : n - 1].addr);
    }
}

uint32_t nvrt_rd(struct nvrt_fw *fw, uint32_t addr)
{
    uint32_t v = 0;
    if (fw->rc) {
        return 0;
    }
    int rc = fw->port->reg_read(fw->port->ctx, addr, &v);
    if (rc) {
        port_fail(fw, rc, "register read", addr);
    }
    if (fw->rec && !fw->rec_pause) {
        nvrt_prep_read(fw, addr, v);
    }
    return v;
}

const struct dlasim_rt_op *nvrt_op_of(const struct nvrt_fw *fw, const struct nvrt_group *g)
{
    return &fw->net->ops[g->op];
}

int nvrt_address(struct nvrt_fw *fw, int16_t op, const char *what, int16_t index,
                 uint64_t *addr)
{
    if (index < 0 || (uint16_t)index >= fw->net->num_addresses) {
        return nvrt_fail(fw, DLASIM_ERR_INVAL,
                         "operation %d (%s): %s address index %d is outside the address list "
                         "(%u entries)",
                         op, op_names[fw->net->ops[op].op_type], what, index,
                         fw->net->num_addresses);
    }
    *addr = fw->net->addresses[index];
    if (fw->rec) {
        nvrt_prep_address(fw, index, *addr);
    }
    return 0;
}

int nvrt_cube_address(struct nvrt_fw *fw, int16_t op, const char *what,
                      const struct dlasim_rt_cube *c, uint64_t *addr)
{
    int rc = nvrt_address(fw, op, what, c->address, addr);
    if (!rc) {
        *addr += c->offset;
    }
    return rc;
}

uint64_t nvrt_cube_bytes(const struct nvrt_fw *fw, const struct dlasim_rt_cube *c)
{
    if (c->size) {
        return c->size;
    }
    uint64_t surfaces = ((uint64_t)c->channel + fw->atom_size - 1) / fw->atom_size;
    return c->surf_stride ? (uint64_t)c->surf_stride * surfaces
                          : (uint64_t)c->line_stride * c->height;
}

void nvrt_mark_range(struct nvrt_fw *fw, int output, uint64_t addr, uint64_t bytes)
{
    if (fw->rec) {
        nvrt_prep_marked(fw, output, addr, bytes);
    }
    void (*mark)(void *, uint64_t, uint64_t) = output ? fw->port->mark_output
                                                      : fw->port->mark_input;
    if (mark) {
        mark(fw->port->ctx, addr, bytes);
    }
}

void nvrt_mark_input(struct nvrt_fw *fw, uint64_t addr, const struct dlasim_rt_cube *c)
{
    if ((fw->port->mark_input || fw->rec) && c->type != DLASIM_RT_MEM_HW) {
        nvrt_mark_range(fw, 0, addr, nvrt_cube_bytes(fw, c));
    }
}

void nvrt_mark_output(struct nvrt_fw *fw, uint64_t addr, const struct dlasim_rt_cube *c)
{
    if ((fw->port->mark_output || fw->rec) && c->type != DLASIM_RT_MEM_HW) {
        nvrt_mark_range(fw, 1, addr, nvrt_cube_bytes(fw, c));
    }
}

void nvrt_enable_intr(struct nvrt_fw *fw, uint32_t mask)
{
    if (fw->rec) { /* recorded as one step: its write depends on what it reads */
        nvrt_prep_unmasked(fw, mask);
    }
    if ((fw->intr_mask & mask) == mask) {
        return; /* unmasked by this run already: only CSB writes mask a bit */
    }
    fw->rec_pause++;
    uint32_t reg = nvrt_rd(fw, NVDLA_GLB_S_INTR_MASK_0);
    nvrt_wr(fw, NVDLA_GLB_S_INTR_MASK_0, reg & ~mask);
    fw->rec_pause--;
    if (!fw->rc) {
        fw->intr_mask |= mask;
    }
}

int nvrt_check_range(struct nvrt_fw *fw, const struct nvrt_group *g, const char *field,
                     long value, long lo, long hi)
{
    if (value < lo || value > hi) {
        return nvrt_fail(fw, DLASIM_ERR_INVAL, "operation %d (%s): %s=%ld is outside %ld..%ld",
                         g->op, op_names[nvrt_op_of(fw, g)->op_type], field, value, lo, hi);
    }
    return 0;
}

int nvrt_check_precision(struct nvrt_fw *fw, const struct nvrt_group *g, const char *field,
                         uint8_t precision)
{
    static const char *const names[3] = { "INT8", "INT16", "FP16" };
    static const uint32_t bits[3] = { 0x10, 0x20, 0x100 };
    int rc = nvrt_check_range(fw, g, field, precision, 0, 2);
    if (rc) {
        return rc;
    }
    if (!(fw->data_types & bits[precision])) {
        return nvrt_fail(fw, DLASIM_ERR_UNSUPPORTED,
                         "operation %d (%s): %s=%u asks for %s data, which this hardware "
                         "configuration does not support (NVDLA_FEATURE_DATA_TYPE=0x%x)",
                         g->op, op_names[nvrt_op_of(fw, g)->op_type], field, precision,
                         names[precision], fw->data_types);
    }
    return 0;
}

int nvrt_lut_is_ready(int16_t lut_index, const struct nvrt_group *other)
{
    if (lut_index == -1 || other->lut_index == lut_index) {
        return 1;
    }
    if (other->lut_index != -1) {
        return 0;
    }
    return !other->active;
}

/* ---- scheduler ---------------------------------------------------------------- */

static int submit_operation(struct nvrt_fw *fw, struct nvrt_processor *p, int16_t op);
static int enable_operation(struct nvrt_fw *fw, struct nvrt_processor *p, int16_t op);

static int check_op_index(struct nvrt_fw *fw, int16_t op, const char *what)
{
    if (op < 0 || (uint16_t)op >= fw->net->num_ops) {
        return nvrt_fail(fw, DLASIM_ERR_INVAL,
                         "runtime: %s refers to operation %d, outside the %u operations", what,
                         op, fw->net->num_ops);
    }
    return 0;
}

/* ref: engine.c utils_get_free_group */
static int free_group(struct nvrt_fw *fw, struct nvrt_processor *p, uint8_t *gid,
                      uint8_t *rdma_id)
{
    const struct nvrt_engine *e = p->eng;
    uint32_t hw_ptr = 0, hw_rdma = 0;
    if (p->group_status == 3) {
        return 1; /* busy: the op is dequeued again when a group completes */
    }
    /* the hardware's pointers only where both groups are free (the status
     * reads have no effect: one held group decides, ~2 reads a depthwise
     * block fewer) */
    if (!p->group_status) {
        uint32_t v = nvrt_rd(fw, e->pointer_reg);
        hw_ptr = e->op_type == DLASIM_RT_OP_BDMA
                     ? (v & NVDLA_BDMA_STATUS_0_GRP0_BUSY__MASK ? 1u : 0u)
                     : (v & NVDLA_PDP_S_POINTER_0_CONSUMER__MASK) >>
                           NVDLA_PDP_S_POINTER_0_CONSUMER__SHIFT;
    }
    if (!p->rdma_status && e->rdma_pointer_reg) {
        uint32_t v = nvrt_rd(fw, e->rdma_pointer_reg);
        hw_rdma = (v & NVDLA_PDP_S_POINTER_0_CONSUMER__MASK) >>
                  NVDLA_PDP_S_POINTER_0_CONSUMER__SHIFT;
    }
    *gid = p->group_status ? (uint8_t) !(p->group_status >> 1) : (uint8_t)hw_ptr;
    *rdma_id = p->rdma_status ? (uint8_t) !(p->rdma_status >> 1) : (uint8_t)hw_rdma;
    return 0;
}

/* One consumer's dependency count down by one; enabled at zero. */
static int raise_event(struct nvrt_fw *fw, int16_t op, const struct dlasim_rt_consumer *c,
                       uint8_t event)
{
    if (fw->rc) {
        return fw->rc;
    }
    int rc = check_op_index(fw, c->index, "a consumer");
    if (rc) {
        return rc;
    }
    if (fw->dep_count[c->index] == 0) {
        return nvrt_fail(fw, DLASIM_ERR_INVAL,
                         "operation %d (%s): event %u for operation %d, whose dependency "
                         "count is already 0 (inconsistent dependency graph)",
                         op, op_names[fw->net->ops[op].op_type], event, c->index);
    }
    if (--fw->dep_count[c->index] == 0) {
        const struct dlasim_rt_op *cd = &fw->net->ops[c->index];
        return enable_operation(fw, &fw->proc[cd->op_type], c->index);
    }
    return 0;
}

/* Raise an event on an operation's consumers and fused parent
 * (ref: scheduler.c dla_update_consumers / dla_update_dependency). */
static int update_consumers(struct nvrt_fw *fw, int16_t op, uint8_t event)
{
    const struct dlasim_rt_op *d = &fw->net->ops[op];
    for (int i = 0; i <= DLASIM_RT_OP_NUM; i++) { /* the consumers, then the fused parent */
        const struct dlasim_rt_consumer *c = i < DLASIM_RT_OP_NUM ? &d->consumers[i]
                                                                  : &d->fused_parent;
        if (c->event == event && c->index != -1) {
            int rc = raise_event(fw, op, c, event);
            if (rc) {
                return rc;
            }
        }
    }
    return fw->rc;
}

/* The processor's S_POINTERs (its engine's and its read DMA's PRODUCER) at
 * g's groups for the writes that follow: not written again where this run
 * left them there (only CSB writes move PRODUCER; the hardware moves
 * CONSUMER), as when an operation is enabled right after it was
 * programmed (a convolution's five pointers, SDP's two). */
static void point_at(struct nvrt_fw *fw, struct nvrt_processor *p, const struct nvrt_group *g)
{
    const uint8_t at = (uint8_t)(1u + (g->id & 1u) + 2u * (g->rdma_id & 1u));
    if (p->pointed_at == at) {
        return;
    }
    p->eng->set_producer(fw, g->id, g->rdma_id);
    p->pointed_at = fw->rc ? 0 : at;
}

static int program_operation(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g)
{
    g->programming = 1;
    point_at(fw, p, g);
    int rc = fw->prep ? nvrt_prep_program(fw, p, g) : p->eng->program(fw, g);
    g->programming = 0;
    if (rc || fw->rc) {
        return rc ? rc : fw->rc;
    }
    g->pending = 0;
    return update_consumers(fw, g->op, DLASIM_RT_EVENT_OP_PROGRAMMED);
}

/* ref: scheduler.c dla_enable_operation */
static int enable_operation(struct nvrt_fw *fw, struct nvrt_processor *p, int16_t op)
{
    struct nvrt_group *g = NULL;
    for (int i = 0; i < 2; i++) {
        struct nvrt_group *c = &p->groups[i];
        if ((p->group_status & (1u << i)) && c->op == op && !c->pending) {
            g = c;
        }
    }
    if (!g || g->programming || g->active) {
        return 0; /* not programmed yet (enabled after programming) or already on */
    }
    point_at(fw, p, g);
    p->eng->enable(fw, g);
    if (fw->rc) {
        return fw->rc;
    }
    g->active = 1;
    return update_consumers(fw, op, DLASIM_RT_EVENT_OP_ENABLED);
}

/* ref: scheduler.c dla_prepare_operation + dla_submit_operation */
static int submit_operation(struct nvrt_fw *fw, struct nvrt_processor *p, int16_t op)
{
    const struct dlasim_rt_op *d = &fw->net->ops[op];
    if (d->op_type != p->eng->op_type) {
        return nvrt_fail(fw, DLASIM_ERR_INVAL,
                         "operation %d: op_type %u (%s) found in the %s operation chain", op,
                         d->op_type, d->op_type < DLASIM_RT_OP_NUM ? op_names[d->op_type] : "?",
                         p->eng->name);
    }
    if (fw->state[op] != 0) {
        return nvrt_fail(fw, DLASIM_ERR_INVAL,
                         "operation %d (%s): the %s operation chain reaches it twice (a cycle "
                         "in consumers[%s])",
                         op, p->eng->name, p->eng->name, p->eng->name);
    }
    uint8_t gid = 0, rdma = 0;
    if (free_group(fw, p, &gid, &rdma)) {
        return fw->rc; /* both groups busy: dequeued again on completion */
    }
    struct nvrt_group *g = &p->groups[gid];
    fw->state[op] = 1;
    g->op = op;
    g->id = gid;
    g->rdma_id = rdma;
    g->pending = 1;
    g->active = 0;
    g->lut_index = -1;
    p->group_status |= (uint8_t)(1u << gid);
    p->eng->rdma_check(fw, g);
    if (g->is_rdma_needed) {
        p->rdma_status |= (uint8_t)(1u << rdma);
    }
    p->tail_op = op;
    if (!p->eng->is_ready(fw, g, &p->groups[!gid])) {
        return fw->rc;
    }
    int rc = program_operation(fw, p, g);
    if (rc) {
        return rc;
    }
    if (fw->dep_count[op] == 0) {
        return enable_operation(fw, p, op);
    }
    return 0;
}

/* Next operation of the same engine (ref: scheduler.c dla_dequeue_operation). */
static int dequeue_operation(struct nvrt_fw *fw, struct nvrt_processor *p)
{
    if (p->tail_op < 0) {
        return 0;
    }
    int16_t next = fw->net->ops[p->tail_op].consumers[p->eng->op_type].index;
    if (next == -1) {
        return 0;
    }
    int rc = check_op_index(fw, next, "a consumer");
    return rc ? rc : submit_operation(fw, p, next);
}

/* ref: scheduler.c dla_op_completion */
static int complete_operation(struct nvrt_fw *fw, struct nvrt_processor *p, struct nvrt_group *g)
{
    int16_t op = g->op;
    fw->state[op] = 2;
    fw->num_done++;
    p->group_status &= (uint8_t) ~(1u << g->id);
    if (g->is_rdma_needed) {
        g->is_rdma_needed = 0;
        p->rdma_status &= (uint8_t) ~(1u << g->rdma_id);
        g->rdma_id = 0;
    }
    g->active = 0;
    g->lut_index = -1;
    g->op = -1;
    p->last_group = g->id;
    int rc = update_consumers(fw, op, DLASIM_RT_EVENT_OP_COMPLETED);
    if (rc || fw->num_done == fw->net->num_ops) {
        return rc;
    }
    struct nvrt_group *next = &p->groups[!g->id];
    if (next->pending && (p->group_status & (1u << next->id)) &&
        p->eng->is_ready(fw, next, g)) {
        rc = program_operation(fw, p, next);
        if (rc) {
            return rc;
        }
        if (fw->dep_count[next->op] == 0) {
            rc = enable_operation(fw, p, next->op);
            if (rc) {
                return rc;
            }
        }
    }
    return dequeue_operation(fw, p);
}

/* Interrupt bits -> group events (ref: engine_isr.c dla_isr_handler). */
struct intr_event {
    uint32_t mask;
    uint8_t op_type, group, event;
};
#define IEV(BIT, T, G, E) { 1u << NVDLA_GLB_S_INTR_STATUS_0_##BIT##__SHIFT, T, G, E }
static const struct intr_event intr_events[] = {
    IEV(CACC_DONE_STATUS0, DLASIM_RT_OP_CONV, 0, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(CACC_DONE_STATUS1, DLASIM_RT_OP_CONV, 1, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(SDP_DONE_STATUS0, DLASIM_RT_OP_SDP, 0, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(SDP_DONE_STATUS1, DLASIM_RT_OP_SDP, 1, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(CDP_DONE_STATUS0, DLASIM_RT_OP_CDP, 0, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(CDP_DONE_STATUS1, DLASIM_RT_OP_CDP, 1, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(RUBIK_DONE_STATUS0, DLASIM_RT_OP_RUBIK, 0, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(RUBIK_DONE_STATUS1, DLASIM_RT_OP_RUBIK, 1, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(PDP_DONE_STATUS0, DLASIM_RT_OP_PDP, 0, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(PDP_DONE_STATUS1, DLASIM_RT_OP_PDP, 1, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(BDMA_DONE_STATUS0, DLASIM_RT_OP_BDMA, 0, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(BDMA_DONE_STATUS1, DLASIM_RT_OP_BDMA, 1, DLASIM_RT_EVENT_OP_COMPLETED),
    IEV(CDMA_DAT_DONE_STATUS0, DLASIM_RT_OP_CONV, 0, DLASIM_RT_EVENT_CDMA_DT_DONE),
    IEV(CDMA_DAT_DONE_STATUS1, DLASIM_RT_OP_CONV, 1, DLASIM_RT_EVENT_CDMA_DT_DONE),
    IEV(CDMA_WT_DONE_STATUS0, DLASIM_RT_OP_CONV, 0, DLASIM_RT_EVENT_CDMA_WT_DONE),
    IEV(CDMA_WT_DONE_STATUS1, DLASIM_RT_OP_CONV, 1, DLASIM_RT_EVENT_CDMA_WT_DONE),
};

static uint32_t service_interrupt(struct nvrt_fw *fw)
{
    uint32_t status = nvrt_rd(fw, NVDLA_GLB_S_INTR_STATUS_0);
    for (size_t i = 0; i < sizeof intr_events / sizeof intr_events[0]; i++) {
        const struct intr_event *e = &intr_events[i];
        if (status & e->mask) {
            fw->proc[e->op_type].groups[e->group].events |= 1u << e->event;
        }
    }
    nvrt_wr(fw, NVDLA_GLB_S_INTR_STATUS_0, status);
    return status;
}

/* Operation op's descriptor into the cache (a hint: no access happens). */
static void prefetch_op(const struct nvrt_fw *fw, int16_t op)
{
    if (op < 0 || (uint16_t)op >= fw->net->num_ops) {
        return;
    }
    const char *d = (const char *)&fw->net->ops[op];
    for (size_t at = 0; at < sizeof(struct dlasim_rt_op); at += 64) {
        __builtin_prefetch(d + at);
    }
    __builtin_prefetch(d + sizeof(struct dlasim_rt_op) - 1);
    nvrt_prep_prefetch(fw, op);
}

/*
 * The descriptors the next events read, fetched while the device runs a
 * layer: the operations in each engine's groups (their consumers, on
 * completion) and the next one in each engine's chain (dequeue_operation).
 * The engines' data evicts a network's descriptors between two looks at
 * one (MobileNetV2: ~1,900 operations), so each first look was a miss to
 * memory.  A network whose descriptors take less than PREFETCH_MIN_BYTES
 * stays in the cache and is not prefetched (the demo's ten operations:
 * the prefetches were ~1 % of its time).
 */
#define PREFETCH_MIN_BYTES (32u * 1024u)

static void prefetch_next(const struct nvrt_fw *fw)
{
    for (int t = 0; t < DLASIM_RT_OP_NUM; t++) {
        const struct nvrt_processor *p = &fw->proc[t];
        for (int g = 0; g < 2; g++) {
            prefetch_op(fw, p->groups[g].op);
            if (fw->prep && p->groups[g].pending) { /* programmed when the other completes */
                nvrt_prep_prefetch_rec(fw, p->groups[g].op);
            }
        }
        if (p->tail_op >= 0 && (uint16_t)p->tail_op < fw->net->num_ops && p->eng) {
            const int16_t next = fw->net->ops[p->tail_op].consumers[p->eng->op_type].index;
            prefetch_op(fw, next);
            if (fw->prep) {
                nvrt_prep_prefetch_rec(fw, next);
            }
        }
    }
}

/* ref: scheduler.c dla_handle_events: other events first, completion last,
 * starting with the group after the one that completed last. */
static int handle_events(struct nvrt_fw *fw, struct nvrt_processor *p)
{
    uint8_t gid = (uint8_t)!p->last_group;
    for (int j = 0; j < 2 && !fw->rc; j++, gid = (uint8_t)!gid) {
        struct nvrt_group *g = &p->groups[gid];
        uint32_t ev = g->events;
        g->events = 0;
        if (!ev) {
            continue;
        }
        if (g->op < 0 || !(p->group_status & (1u << gid))) {
            continue; /* an interrupt for a group the runtime did not program */
        }
        static const uint8_t cdma_events[2] = { DLASIM_RT_EVENT_CDMA_WT_DONE,
                                                DLASIM_RT_EVENT_CDMA_DT_DONE };
        for (int k = 0; k < 2; k++) {
            if (ev & (1u << cdma_events[k])) {
                int rc = update_consumers(fw, g->op, cdma_events[k]);
                if (rc) {
                    return rc;
                }
            }
        }
        if (ev & (1u << DLASIM_RT_EVENT_OP_COMPLETED)) {
            int rc = complete_operation(fw, p, g);
            if (rc) {
                return rc;
            }
        }
    }
    return fw->rc;
}

/* Events raised without an interrupt (a BDMA op with no transfers). */
static int pending_events(const struct nvrt_fw *fw)
{
    for (int t = 0; t < DLASIM_RT_OP_NUM; t++) {
        if (fw->proc[t].groups[0].events | fw->proc[t].groups[1].events) {
            return 1;
        }
    }
    return 0;
}

static void describe_waiting(struct nvrt_fw *fw, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (uint16_t i = 0; i < fw->net->num_ops && n + 48 < len; i++) {
        if (fw->state[i] != 2) {
            n += (size_t)snprintf(buf + n, len - n, "%s%u (%s, %s, %u dependencies)",
                                  n ? ", " : "", i, op_names[fw->net->ops[i].op_type],
                                  fw->state[i] ? "programmed" : "not submitted",
                                  fw->dep_count[i]);
        }
    }
}

/* The configuration has engine t's unit (asked only for the engines a
 * network uses: the port's parameter look-ups are by name). */
static uint8_t engine_present(const struct nvrt_port *port, int t)
{
    uint64_t en = 1;
    return !(port->param && engines[t]->enable_param &&
             port->param(port->ctx, engines[t]->enable_param, &en) == 0 && !en);
}

static int check_network(struct nvrt_fw *fw)
{
    const struct dlasim_rt_network *net = fw->net;
    uint8_t asked[DLASIM_RT_OP_NUM] = { 0 };
    for (uint16_t i = 0; i < net->num_ops; i++) {
        uint8_t t = net->ops[i].op_type;
        if (t >= DLASIM_RT_OP_NUM) {
            return nvrt_fail(fw, DLASIM_ERR_INVAL, "operation %u: op_type %u is not an engine",
                             i, t);
        }
        if (!asked[t]) {
            asked[t] = 1;
            fw->proc[t].present = engine_present(fw->port, t);
        }
        if (!fw->proc[t].present) {
            return nvrt_fail(fw, DLASIM_ERR_UNSUPPORTED,
                             "operation %u (%s) needs the %s unit, which this hardware "
                             "configuration does not have (%s=0)",
                             i, op_names[t], op_names[t], engines[t]->enable_param);
        }
    }
    for (int t = 0; t < DLASIM_RT_OP_NUM; t++) {
        int16_t h = net->op_head[t];
        if (h != -1 && (h < 0 || (uint16_t)h >= net->num_ops)) {
            return nvrt_fail(fw, DLASIM_ERR_INVAL,
                             "network: op_head[%s]=%d is outside the %u operations", op_names[t],
                             h, net->num_ops);
        }
    }
    return 0;
}

static int init_fw(struct nvrt_fw *fw, const struct nvrt_port *port,
                   const struct dlasim_rt_network *net, struct dlasim_rt_prepared *prep,
                   char *err, size_t errlen)
{
    memset(fw, 0, sizeof *fw);
    fw->port = port;
    fw->net = net;
    fw->err = err;
    fw->errlen = errlen;
    fw->prep = prep;
    uint64_t v = 32, types = 0x10;
    if (port->param) {
        if (port->param(port->ctx, "NVDLA_MEMORY_ATOMIC_SIZE", &v) == 0) {
            fw->atom_size = (uint32_t)v;
        }
        if (port->param(port->ctx, "NVDLA_FEATURE_DATA_TYPE", &types) != 0) {
            types = 0x10;
        }
    }
    if (!fw->atom_size) {
        fw->atom_size = 32;
    }
    fw->data_types = (uint32_t)types;
    for (int t = 0; t < DLASIM_RT_OP_NUM; t++) {
        struct nvrt_processor *p = &fw->proc[t];
        p->eng = engines[t];
        p->tail_op = -1;
        p->present = 1; /* check_network asks for the engines the network uses */
        for (int g = 0; g < 2; g++) {
            p->groups[g].id = (uint8_t)g;
            p->groups[g].op = -1;
            p->groups[g].lut_index = -1;
        }
    }
    /* per-operation counters: the prepared form's buffer, kept from one
     * inference to the next, else allocated for this run */
    size_t n = net->num_ops ? net->num_ops : 1;
    uint8_t *counts = prep ? nvrt_prep_counts(prep, n) : NULL;
    fw->counts_owned = counts == NULL;
    if (!counts) {
        counts = malloc(2 * n);
    }
    if (!counts) {
        return nvrt_fail(fw, DLASIM_ERR_NOMEM, "runtime: out of host memory");
    }
    fw->dep_count = counts;
    fw->state = counts + n;
    memset(fw->state, 0, n);
    for (uint16_t i = 0; i < net->num_ops; i++) {
        fw->dep_count[i] = net->ops[i].dependency_count;
    }
    return check_network(fw);
}

static void fini_fw(struct nvrt_fw *fw)
{
    if (fw->counts_owned) {
        free(fw->dep_count);
    }
    fw->dep_count = fw->state = NULL;
}

int nvrt_validate(const struct nvrt_port *port, const struct dlasim_rt_network *net, char *err,
                  size_t errlen)
{
    struct nvrt_fw fw;
    int rc = init_fw(&fw, port, net, NULL, err, errlen);
    for (uint16_t i = 0; !rc && i < net->num_ops; i++) {
        const struct nvrt_engine *e = engines[net->ops[i].op_type];
        struct nvrt_group g = { 0 };
        g.op = (int16_t)i;
        g.lut_index = -1;
        if (e->validate) {
            rc = e->validate(&fw, &g);
        }
    }
    fini_fw(&fw);
    return rc ? rc : fw.rc;
}

/* Execute a network on a port (ref: scheduler.c dla_execute_task,
 * dla_initiate_processors, dla_process_events). */
int nvrt_execute(const struct nvrt_port *port, const struct dlasim_rt_network *net, char *err,
                 size_t errlen)
{
    return nvrt_execute_prepared(port, net, NULL, err, errlen);
}

int nvrt_execute_prepared(const struct nvrt_port *port, const struct dlasim_rt_network *net,
                          struct dlasim_rt_prepared *prep, char *err, size_t errlen)
{
    struct nvrt_fw fw;
    int rc = init_fw(&fw, port, net, prep, err, errlen);
    for (int t = 0; !rc && t < DLASIM_RT_OP_NUM; t++) {
        int16_t h = net->op_head[t];
        if (h == -1) {
            continue;
        }
        struct nvrt_processor *p = &fw.proc[net->ops[h].op_type];
        rc = submit_operation(&fw, p, h);
        if (!rc) {
            rc = dequeue_operation(&fw, p);
        }
    }
    /* every interrupt completes at least one event; bound the loop anyway */
    uint64_t budget = 4ull * net->num_ops + 16;
    int prefetch = (size_t)net->num_ops * sizeof *net->ops > PREFETCH_MIN_BYTES;
    while (!rc && fw.num_done < net->num_ops) {
        if (budget-- == 0) {
            rc = nvrt_fail(&fw, DLASIM_ERR_TIMEOUT, "runtime: no progress");
            break;
        }
        if (prefetch && !pending_events(&fw)) {
            prefetch_next(&fw);
        }
        rc = pending_events(&fw) ? 0 : port->wait_irq(port->ctx);
        if (rc) {
            char waiting[256];
            describe_waiting(&fw, waiting, sizeof waiting);
            const char *why = port->last_error ? port->last_error(port->ctx) : "";
            if (rc == DLASIM_ERR_TIMEOUT && why && strstr(why, "never completes")) {
                nvrt_fail(&fw, rc, "runtime: operations %s did not complete: %s", waiting, why);
            } else if (rc == DLASIM_ERR_TIMEOUT) {
                nvrt_fail(&fw, rc,
                          "runtime: the device went idle with operations still waiting "
                          "(dependency cycle or missing producer?): %s",
                          waiting);
            } else {
                nvrt_fail(&fw, rc, "runtime: device error while operations %s ran: %s", waiting,
                          why);
            }
            break;
        }
        if (!pending_events(&fw) && service_interrupt(&fw) == 0 && !fw.rc) {
            rc = nvrt_fail(&fw, DLASIM_ERR_PROG,
                           "runtime: interrupt line high but GLB S_INTR_STATUS reads 0");
            break;
        }
        for (int t = 0; !rc && t < DLASIM_RT_OP_NUM; t++) {
            rc = handle_events(&fw, &fw.proc[t]);
        }
        if (!rc) {
            rc = fw.rc;
        }
    }
    if (!rc) {
        rc = fw.rc;
    }
    fini_fw(&fw);
    return rc;
}
