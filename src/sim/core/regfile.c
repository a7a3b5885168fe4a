/*
 * The register file (see regfile.h).  Every access rule is data from the
 * device's register database: masks, W1C/W1S bits, group membership and
 * kinds; what a pointer register means comes from the device's
 * dla_pointer_ops, and so do registers of the device's own kinds (NVDLA's
 * LUT ports and ConfigROM: its device hooks); which units a configuration
 * has the device sets after init (NVDLA: units.c).
 */
#include "sim/core/regfile.h"

#include "dlasim/dlasim.h"

#include <stdlib.h>
#include <string.h>

/* S_STATUS encodings (RDL S_STATUS_STATUS_0_enum; the RK3588's S_STATUS
 * uses the same values, spec 002/003). */
#define STATUS_IDLE 0u
#define STATUS_RUNNING 1u
#define STATUS_PENDING 2u

/* PRODUCER and CONSUMER bits of S_POINTER (NVDLA and RK3588 alike). */
#define POINTER_PRODUCER 1u
#define POINTER_CONSUMER (1u << 16)

/* Words in one 4 KiB register window. */
#define WINDOW_WORDS 1024u

/* The register at addr and its storage index, or NULL: one table look-up
 * (the index built at init from the database), as the CSB path is hot in
 * the runtime (a few hundred writes per layer). */
static const struct nvdla_reg_desc *lookup(const struct dla_regfile *rf, uint32_t addr,
                                           unsigned *index)
{
    uint32_t e = dla_regfile_entry(rf, addr);
    if (e == DLA_SLOT_NONE) {
        return NULL;
    }
    *index = e & DLA_SLOT_INDEX;
    return &rf->regs[*index];
}

static uint32_t slot_entry(const struct nvdla_reg_desc *r, unsigned i)
{
    return i | (uint32_t)r->unit << DLA_SLOT_UNIT_SHIFT |
           (r->kind == NVDLA_KIND_PLAIN ? DLA_SLOT_PLAIN : 0u) |
           (r->group == NVDLA_REG_DUAL ? DLA_SLOT_DUAL : 0u) |
           (r->kind == NVDLA_KIND_ROM ? DLA_SLOT_ROM : 0u) |
           (r->kind == NVDLA_KIND_POINTER ? DLA_SLOT_POINTER : 0u) |
           (r->kind == NVDLA_KIND_OP_ENABLE ? DLA_SLOT_OP_ENABLE : 0u) |
           (r->w1c_mask ? DLA_SLOT_W1C : 0u);
}

static int build_slots(struct dla_regfile *rf)
{
    const struct regdb *db = rf->db;
    if (db->n_regs >= DLA_REG_NONE) {
        return DLASIM_ERR_INVAL;
    }
    rf->slot = malloc((size_t)db->n_windows * WINDOW_WORDS * sizeof(*rf->slot));
    if (!rf->slot) {
        return DLASIM_ERR_NOMEM;
    }
    memset(rf->slot, 0xff, (size_t)db->n_windows * WINDOW_WORDS * sizeof(*rf->slot)); /* NONE */
    rf->n_words = db->n_windows * WINDOW_WORDS;
    rf->regs = db->regs;
    rf->hot = malloc((db->n_regs ? db->n_regs : 1u) * sizeof(*rf->hot));
    rf->wmask = malloc((db->n_regs ? db->n_regs : 1u) * sizeof(*rf->wmask));
    if (!rf->hot || !rf->wmask) {
        return DLASIM_ERR_NOMEM;
    }
    for (unsigned i = 0; i < db->n_regs; i++) {
        const struct nvdla_reg_desc *r = &db->regs[i];
        rf->hot[i] = (struct dla_reg_hot){ r->write_mask, r->w1c_mask, r->unit, r->group,
                                           r->kind, 0 };
        rf->wmask[i] = r->write_mask;
    }
    for (unsigned i = 0; i < db->n_regs; i++) {
        uint32_t word = db->regs[i].addr >> 2;
        if (word < db->n_windows * WINDOW_WORDS) {
            rf->slot[word] = slot_entry(&db->regs[i], i);
        }
    }
    return 0;
}

/* The part of unit u's window dla_regfile_unit_values copies in two blocks: registers one
 * a word from the unit's base, no ROM among them, single ones then dual ones. */
static void view_layout(const struct regdb *db, unsigned u, struct dla_unit_state *us)
{
    const struct nvdla_unit_desc *ud = &db->units[u];
    unsigned k = 0, dual_lo = 0, seen_dual = 0;
    for (; k < ud->n_regs; k++) {
        const struct nvdla_reg_desc *r = &db->regs[ud->first_reg + k];
        int dual = r->group == NVDLA_REG_DUAL;
        if (r->addr != ud->base + 4u * k || r->kind == NVDLA_KIND_ROM ||
            (seen_dual && !dual)) {
            break;
        }
        if (dual && !seen_dual) {
            seen_dual = 1;
            dual_lo = k;
        }
    }
    us->base = ud->base;
    us->first_reg = ud->first_reg;
    us->view_n = (uint16_t)k;
    us->view_dual_lo = (uint16_t)(seen_dual ? dual_lo : k);
}

int dla_regfile_init(struct dla_regfile *rf, const struct regdb *db,
                     const struct dla_pointer_ops *pp)
{
    memset(rf, 0, sizeof(*rf));
    if (db->n_units > DLA_REGFILE_MAX_UNITS) {
        return DLASIM_ERR_INVAL;
    }
    rf->db = db;
    rf->pp = pp;
    rf->drop_when_enabled = pp->drop_writes_when_enabled;
    /* on cache lines of their own, from a line's start: NVDLA's GLB
     * interrupt status (index 107) then shares no line with CDMA's
     * registers (from 115), which the worker reads while the host raises
     * the status of the layer before (calloc's 16-byte start could put
     * them on one line: the host's read-modify-write then waited for it;
     * the values are set by dla_regfile_reset) */
    const size_t bytes = ((size_t)db->n_regs * sizeof(uint32_t) + 63u) / 64u * 64u;
    rf->val[0] = aligned_alloc(64, bytes ? bytes : 64u);
    rf->val[1] = aligned_alloc(64, bytes ? bytes : 64u);
    int rc = rf->val[0] && rf->val[1] ? build_slots(rf) : DLASIM_ERR_NOMEM;
    if (rc) {
        dla_regfile_free(rf);
        return rc;
    }
    for (unsigned u = 0; u < db->n_units; u++) {
        struct dla_unit_state *us = &rf->unit[u];
        us->present = 1;
        us->op_en_reg = -1;
        us->op_en_word = 0xffffu;
        us->pointer_reg = -1;
        view_layout(db, u, us);
    }
    rf->intr_status_reg = rf->intr_mask_reg = rf->intr_pending_reg = -1;
    int raw = -1;
    for (unsigned i = 0; i < db->n_regs; i++) {
        const struct nvdla_reg_desc *r = &db->regs[i];
        if (r->kind == NVDLA_KIND_OP_ENABLE) {
            rf->unit[r->unit].op_en_reg = (int16_t)i;
            rf->unit[r->unit].op_en_word = (uint16_t)((r->addr - db->units[r->unit].base) / 4u);
        } else if (r->kind == NVDLA_KIND_POINTER) {
            rf->unit[r->unit].pingpong = 1;
            rf->unit[r->unit].pointer_reg = (int16_t)i;
        } else if (r->kind == NVDLA_KIND_INTR_STATUS) {
            rf->intr_status_reg = (int)i;
        } else if (r->kind == NVDLA_KIND_INTR_MASK) {
            rf->intr_mask_reg = (int)i;
        } else if (r->kind == NVDLA_KIND_INTR_RAW) {
            raw = (int)i;
        }
    }
    rf->intr_pending_reg = raw >= 0 ? raw : rf->intr_status_reg;
    dla_regfile_reset(rf);
    return 0;
}

void dla_regfile_free(struct dla_regfile *rf)
{
    free(rf->val[0]);
    free(rf->val[1]);
    free(rf->slot);
    free(rf->hot);
    free(rf->wmask);
    rf->val[0] = rf->val[1] = NULL;
    rf->slot = NULL;
    rf->hot = NULL;
    rf->wmask = NULL;
    rf->n_words = 0;
}

void dla_regfile_reset(struct dla_regfile *rf)
{
    const struct regdb *db = rf->db;
    for (unsigned i = 0; i < db->n_regs; i++) {
        rf->val[0][i] = rf->val[1][i] = db->regs[i].reset;
    }
    for (unsigned u = 0; u < db->n_units; u++) {
        struct dla_unit_state *us = &rf->unit[u];
        const uint32_t en = us->op_en_reg >= 0 ? db->regs[us->op_en_reg].reset : 0u;
        DLA_UNIT_OP_EN(rf, us, 0) = DLA_UNIT_OP_EN(rf, us, 1) = en;
        uint32_t p = us->pointer_reg >= 0 ? db->regs[us->pointer_reg].reset : 0u;
        DLA_UNIT_PTR(rf, us).producer = (uint8_t)(p & POINTER_PRODUCER);
        DLA_UNIT_PTR(rf, us).consumer = (uint8_t)((p & POINTER_CONSUMER) != 0);
    }
    if (rf->pp->device_reset) {
        rf->pp->device_reset(rf);
    }
}

static uint32_t op_en(const struct dla_regfile *rf, const struct dla_unit_state *us, unsigned g)
{
    return us->op_en_reg >= 0 ? (DLA_UNIT_OP_EN(rf, us, g) & 1u) : 0u;
}

int dla_regfile_op_en(const struct dla_regfile *rf, unsigned u, unsigned group)
{
    return (int)op_en(rf, &rf->unit[u], group & 1u);
}

static uint32_t status_value(const struct dla_regfile *rf, const struct dla_unit_state *us)
{
    uint32_t s[2];
    for (unsigned g = 0; g < 2; g++) {
        if (!op_en(rf, us, g)) {
            s[g] = STATUS_IDLE;
        } else {
            s[g] = DLA_UNIT_PTR(rf, us).consumer == g ? STATUS_RUNNING : STATUS_PENDING;
        }
    }
    return s[0] | (s[1] << 16);
}

/* ---- CSB access ----------------------------------------------------------- */

/* Writes to registers whose kind gives them a behaviour of their own. */
static int write_special(struct dla_regfile *rf, const struct nvdla_reg_desc *r, unsigned i,
                         struct dla_unit_state *us, uint32_t v, enum dla_write_effect *effect)
{
    *effect = DLA_WRITE_STORED;
    switch (r->kind) {
    case NVDLA_KIND_POINTER:
        rf->pp->pointer_write(rf, us, r, v);
        return 1;
    case NVDLA_KIND_LUT_ACCESS_CFG:
    case NVDLA_KIND_LUT_ACCESS_DATA:
        if (rf->pp->device_write) {
            rf->pp->device_write(rf, r, v); /* the device's own kinds */
        }
        return 1;
    case NVDLA_KIND_INTR_SET:
        dla_regfile_raise(rf, v & r->w1s_mask);
        *effect = DLA_WRITE_INTR_CHANGED;
        return 1;
    case NVDLA_KIND_INTR_STATUS:
        rf->val[0][i] &= ~(v & r->w1c_mask);
        *effect = DLA_WRITE_INTR_CHANGED;
        return 1;
    case NVDLA_KIND_INTR_CLEAR:
        if (rf->intr_pending_reg >= 0) {
            rf->val[0][rf->intr_pending_reg] &= ~(v & r->write_mask);
        }
        *effect = DLA_WRITE_INTR_CHANGED;
        return 1;
    default:
        return 0;
    }
}

/* A write to a register of kind PLAIN of a present unit: the general path's
 * steps for that kind (group, spec 001's drop, masks), without its switch;
 * e is the register's address-table entry. */
static inline enum dla_write_effect write_plain(struct dla_regfile *rf, uint32_t e,
                                               const struct dla_unit_state *us, uint32_t v)
{
    unsigned i = e & DLA_SLOT_INDEX, g = 0;
    if (e & DLA_SLOT_DUAL) {
        g = DLA_UNIT_PTR(rf, us).producer;
        if (rf->drop_when_enabled && op_en(rf, us, g)) {
            return DLA_WRITE_DROPPED_ENABLED; /* spec 001: dropped silently */
        }
    }
    const struct dla_reg_hot *h = &rf->hot[i];
    uint32_t *slot = &rf->val[g][i];
    *slot = ((*slot & ~h->write_mask) | (v & h->write_mask)) & ~(v & h->w1c_mask);
    return h->write_mask ? DLA_WRITE_STORED : DLA_WRITE_IGNORED_RO;
}

enum dla_write_effect dla_regfile_write_slow(struct dla_regfile *rf, uint32_t addr, uint32_t v)
{
    uint32_t e = dla_regfile_entry(rf, addr);
    if (e == DLA_SLOT_NONE) {
        return DLA_WRITE_UNMAPPED;
    }
    /* the unit straight from the entry: its state loads beside the rules */
    struct dla_unit_state *us = &rf->unit[(e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK];
    if ((e & DLA_SLOT_PLAIN) && us->present) {
        return write_plain(rf, e, us, v); /* most writes: a layer's D_ registers */
    }
    unsigned i = e & DLA_SLOT_INDEX;
    const struct nvdla_reg_desc *r = &rf->regs[i];
    if (!us->present || r->kind == NVDLA_KIND_ROM || r->kind == NVDLA_KIND_STATUS ||
        r->kind == NVDLA_KIND_INTR_RAW) {
        return DLA_WRITE_IGNORED_RO;
    }
    enum dla_write_effect effect;
    if (write_special(rf, r, i, us, v, &effect)) {
        return effect;
    }
    unsigned g = r->group == NVDLA_REG_DUAL ? DLA_UNIT_PTR(rf, us).producer : 0u;
    if (r->group == NVDLA_REG_DUAL && rf->pp->drop_writes_when_enabled && op_en(rf, us, g)) {
        return DLA_WRITE_DROPPED_ENABLED; /* spec 001: dropped silently */
    }
    uint32_t *slot = r->kind == NVDLA_KIND_OP_ENABLE ? &DLA_UNIT_OP_EN(rf, us, g) : &rf->val[g][i];
    *slot = ((*slot & ~r->write_mask) | (v & r->write_mask)) & ~(v & r->w1c_mask);
    if (r->kind == NVDLA_KIND_INTR_MASK) {
        return DLA_WRITE_INTR_CHANGED;
    }
    if (r->kind == NVDLA_KIND_OP_ENABLE && (*slot & 1u)) {
        if (rf->pp->enabled) {
            rf->pp->enabled(rf, us);
        }
        return DLA_WRITE_OP_ENABLED;
    }
    return r->write_mask ? DLA_WRITE_STORED : DLA_WRITE_IGNORED_RO;
}

int dla_regfile_read(struct dla_regfile *rf, uint32_t addr, uint32_t *v)
{
    unsigned i;
    const struct nvdla_reg_desc *r = lookup(rf, addr, &i);
    *v = 0;
    if (!r) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_unit_state *us = &rf->unit[r->unit];
    if (!us->present) {
        return 0; /* units a configuration lacks read as zero */
    }
    switch (r->kind) {
    case NVDLA_KIND_ROM:
    case NVDLA_KIND_LUT_ACCESS_CFG:
    case NVDLA_KIND_LUT_ACCESS_DATA:
        *v = rf->pp->device_read ? rf->pp->device_read(rf, r, addr) : 0; /* the device's kinds */
        return 0;
    case NVDLA_KIND_STATUS:
        *v = status_value(rf, us);
        return 0;
    case NVDLA_KIND_POINTER:
        *v = ((rf->val[0][i] & ~(POINTER_PRODUCER | POINTER_CONSUMER)) | DLA_UNIT_PTR(rf, us).producer |
              ((uint32_t)DLA_UNIT_PTR(rf, us).consumer << 16)) & r->read_mask;
        return 0;
    case NVDLA_KIND_INTR_STATUS:
        if (rf->intr_pending_reg != (int)i) {
            *v = dla_regfile_irq_pending(rf) & r->read_mask; /* RK3588: RAW & MASK */
            return 0;
        }
        break;
    default:
        break;
    }
    unsigned g = r->group == NVDLA_REG_DUAL ? DLA_UNIT_PTR(rf, us).producer : 0u;
    *v = (r->kind == NVDLA_KIND_OP_ENABLE ? DLA_UNIT_OP_EN(rf, us, g) : rf->val[g][i]) &
         r->read_mask;
    return 0;
}

uint32_t dla_regfile_get_rom(const struct dla_regfile *rf, uint32_t addr, unsigned index)
{
    return rf->pp->device_read ? rf->pp->device_read(rf, &rf->regs[index], addr) : 0;
}

void dla_regfile_unit_values(const struct dla_regfile *rf, unsigned u, unsigned group,
                             uint32_t *out, unsigned n)
{
    const struct dla_unit_state *us = &rf->unit[u];
    if (n <= us->view_n) {
        unsigned lo = n < us->view_dual_lo ? n : us->view_dual_lo;
        memcpy(out, rf->val[0] + us->first_reg, lo * sizeof(*out));
        memcpy(out + lo, rf->val[group & 1u] + us->first_reg + lo, (n - lo) * sizeof(*out));
        return;
    }
    for (unsigned k = 0; k < n; k++) {
        const uint32_t e = dla_regfile_entry(rf, us->base + 4u * k);
        out[k] = e != DLA_SLOT_NONE && (e & DLA_SLOT_OP_ENABLE)
                     ? rf->val[(e & DLA_SLOT_DUAL) ? (group & 1u) : 0u][e & DLA_SLOT_INDEX]
                     : dla_regfile_get(rf, us->base + 4u * k, group);
    }
}

/* dla_regfile_unit_store's other cases: one hw_set a word. */
void dla_regfile_unit_store_slow(struct dla_regfile *rf, unsigned u, unsigned group,
                                 unsigned word, const uint32_t *v, unsigned n)
{
    const struct dla_unit_state *us = &rf->unit[u];
    for (unsigned k = 0; k < n; k++) {
        dla_regfile_hw_set(rf, us->base + 4u * (word + k), group, v[k]);
    }
}

uint32_t dla_regfile_exec(const struct dla_regfile *rf, uint32_t addr)
{
    uint32_t e = dla_regfile_entry(rf, addr);
    if (e == DLA_SLOT_NONE) {
        return 0;
    }
    unsigned u = (e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK;
    const unsigned g = (e & DLA_SLOT_DUAL) ? rf->ptr[u].consumer : 0u;
    return (e & DLA_SLOT_OP_ENABLE) ? rf->op_en[g][u] : rf->val[g][e & DLA_SLOT_INDEX];
}

void dla_regfile_enable(struct dla_regfile *rf, unsigned u)
{
    struct dla_unit_state *us = &rf->unit[u];
    if (us->op_en_reg < 0) {
        return;
    }
    DLA_UNIT_OP_EN(rf, us, rf->ptr[u].producer) |= 1u;
    if (rf->pp->enabled) {
        rf->pp->enabled(rf, us);
    }
}

void dla_regfile_complete(struct dla_regfile *rf, unsigned u)
{
    struct dla_unit_state *us = &rf->unit[u];
    if (us->op_en_reg >= 0) {
        DLA_UNIT_OP_EN(rf, us, rf->ptr[u].consumer) &= ~1u;
    }
    rf->pp->completed(rf, us);
}

void dla_regfile_raise(struct dla_regfile *rf, uint32_t status_bits)
{
    if (rf->intr_pending_reg >= 0) {
        rf->val[0][rf->intr_pending_reg] |= status_bits;
    }
}

uint32_t dla_regfile_irq_pending(const struct dla_regfile *rf)
{
    if (rf->intr_pending_reg < 0) {
        return 0;
    }
    uint32_t raised = rf->val[0][rf->intr_pending_reg];
    uint32_t mask = rf->intr_mask_reg >= 0 ? rf->val[0][rf->intr_mask_reg] : 0u;
    return raised & (rf->db->intr_mask_enables ? mask : ~mask); /* regdb fact */
}
