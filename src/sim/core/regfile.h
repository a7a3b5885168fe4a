/*
 * The register file of a device, driven by its register database
 * (src/regs/regdb.h): one write path and one read path for every unit of
 * every device, the access rules being data (masks, W1C/W1S bits, group
 * membership and kinds; QEMU's register_write habit).  What differs between
 * devices is the meaning of the pointer register, a small set of hooks
 * (struct dla_pointer_ops): NVDLA's in units.c, the RK3588's in rk_npu.c.
 *
 * ref: spec 001 "Ping-pong Synchronization Mechanism": two duplicated groups
 * (D_* registers) and a single group per unit; PRODUCER selects the group the
 * CSB accesses, CONSUMER the group the datapath executes; OP_EN is set by
 * software and cleared by hardware.  On NVDLA writes to a group whose OP_EN
 * is set are dropped and GLB S_INTR_SET/S_INTR_STATUS are write-1-to-set/
 * clear; on the RK3588 (TRM 36.5.1, spec 002/003) PRODUCER is S_POINTER
 * `pointer`, CONSUMER is `executer`, and the pointer moves by the pp_en/
 * pp_mode bits (rk_npu.c).
 */
#ifndef DLASIM_SIM_REGFILE_H
#define DLASIM_SIM_REGFILE_H

#include <stdint.h>

#include "regs/regdb.h"

#define DLA_REGFILE_MAX_UNITS 32

#define DLA_REG_NONE 0xffffu

/* An address-table entry (rf->slot): the register's index in bits 0-15 and,
 * so that the common accesses need no further look-up before the value,
 * its unit in bits 16-20 and the flags below; DLA_SLOT_NONE for no register. */
#define DLA_SLOT_INDEX 0xffffu
#define DLA_SLOT_UNIT_SHIFT 16
#define DLA_SLOT_UNIT_MASK 0x1fu
#define DLA_SLOT_PLAIN (1u << 24) /* kind PLAIN: no behaviour of its own */
#define DLA_SLOT_DUAL (1u << 25)  /* one copy per group (D_ registers) */
#define DLA_SLOT_ROM (1u << 26)   /* kind ROM: the device's hook reads it */
#define DLA_SLOT_POINTER (1u << 27)   /* kind POINTER (S_POINTER) */
#define DLA_SLOT_OP_ENABLE (1u << 28) /* kind OP_ENABLE (D_OP_ENABLE) */
#define DLA_SLOT_W1C (1u << 29)       /* some bits are write-1-to-clear (hot[].w1c_mask) */
#define DLA_SLOT_NONE_BIT (1u << 31) /* set only in DLA_SLOT_NONE */
#define DLA_SLOT_NONE 0xffffffffu

/* What the register file knows of a unit, fixed once the device is made. */
struct dla_unit_state {
    uint8_t present;        /* the configuration has this unit */
    uint8_t pingpong;       /* the unit has a pointer register (S_POINTER) */
    int16_t op_en_reg;      /* index of the OP_ENABLE register, or -1 */
    int16_t pointer_reg;    /* index of S_POINTER, or -1 */
    /* For dla_regfile_unit_values: the unit's window from its first address holds
     * view_n registers, one a word, none a ROM, single ones below word
     * view_dual_lo and dual ones from there (NVDLA: every unit but GEC). */
    uint32_t base;          /* the unit's first address (regdb units[].base) */
    uint16_t first_reg;     /* index of its first register */
    uint16_t view_n, view_dual_lo;
    uint16_t op_en_word;    /* OP_ENABLE's word in the window (rf->op_en), or 0xffff */
};

/* A unit's ping-pong pointers, moved by S_POINTER writes, OP_ENABLEs and
 * completions. */
struct dla_unit_ptr {
    uint8_t producer;       /* group the CSB accesses (RK: pointer) */
    uint8_t consumer;       /* group the datapath executes (RK: executer) */
};

struct dla_regfile;

/* What a write to a register needs of its description, 12 bytes instead of
 * the description's 40: a layer's ~100 register writes touch a third of the
 * cache lines (they run between the engines' data, which evicts them). */
struct dla_reg_hot {
    uint32_t write_mask, w1c_mask;
    uint8_t unit, group, kind, pad;
};

/*
 * A device's pointer-register semantics.  The register file stores S_POINTER's
 * other bits in its slot and keeps PRODUCER/CONSUMER in struct dla_unit_ptr
 * (read back as bits 0 and 16, the layout of both NVDLA and the RK3588).
 */
struct dla_pointer_ops {
    /* A CSB write v to the unit's S_POINTER register r. */
    void (*pointer_write)(struct dla_regfile *rf, struct dla_unit_state *us,
                          const struct nvdla_reg_desc *r, uint32_t v);
    /* OP_EN was just set in the producer group (NULL: nothing more). */
    void (*enabled)(struct dla_regfile *rf, struct dla_unit_state *us);
    /* The consumer group completed (its OP_EN already cleared): advance. */
    void (*completed)(struct dla_regfile *rf, struct dla_unit_state *us);
    uint8_t drop_writes_when_enabled; /* writes to an enabled group are dropped */
    /* Registers of the device's own kinds (NVDLA: the LUT access ports and
     * the ConfigROM, src/sim/nvdla/lut_port.c), whose state the device keeps
     * (rf->owner): a CSB write, a CSB read, and what a reset clears.  NULL:
     * writes are ignored, reads return 0, nothing to reset. */
    void (*device_write)(struct dla_regfile *rf, const struct nvdla_reg_desc *r, uint32_t v);
    uint32_t (*device_read)(const struct dla_regfile *rf, const struct nvdla_reg_desc *r,
                            uint32_t addr);
    void (*device_reset)(struct dla_regfile *rf);
};

struct dla_regfile {
    const struct regdb *db;                       /* the device's register database */
    const struct dla_pointer_ops *pp;             /* its pointer semantics */
    uint32_t *val[2];                             /* [group][register index]; single: val[0] */
    uint32_t *slot;                               /* entry of each word of the database's
                                                     windows (DLA_SLOT_*), DLA_SLOT_NONE if none */
    uint32_t n_words;                             /* words slot[] covers (db's windows) */
    const struct nvdla_reg_desc *regs;            /* db->regs: one load less per access */
    struct dla_reg_hot *hot;                      /* [register index]: from regs */
    uint32_t *wmask;                              /* [register index]: hot[].write_mask, 16
                                                     a cache line for the PLAIN store */
    struct dla_unit_state unit[DLA_REGFILE_MAX_UNITS]; /* by unit of db */
    /* The pointers on a cache line of their own: the host moves them every
     * layer while the engines, on another core with overlap, read unit[] and
     * the pointers above (a line shared with them would go back and forth). */
    _Alignas(64) struct dla_unit_ptr ptr[DLA_REGFILE_MAX_UNITS];
    /* Each unit's D_OP_ENABLE per group, apart from val[] for the same
     * reason: the host sets and clears them every layer and reads them for
     * S_STATUS and spec 001's drop, while with overlap the engines read the
     * configuration registers beside them in val[] (dla_regfile_unit_values),
     * so a line holding both crossed between the cores at every layer.
     * val[] keeps its reset value at their index (never an engine's input). */
    _Alignas(64) uint32_t op_en[2][DLA_REGFILE_MAX_UNITS];
    void *owner;                                  /* the device's state for its hooks
                                                     (set by the device after init) */
    uint8_t drop_when_enabled;                    /* pp->drop_writes_when_enabled */
    int intr_status_reg;                          /* index of the INTR_STATUS register, -1 */
    int intr_mask_reg;                            /* index of the INTR_MASK register, -1 */
    int intr_pending_reg;                         /* where raised bits live: INTR_RAW if the
                                                     database has one, else INTR_STATUS */
};

/* The pointers of unit us (an element of rf->unit), as an lvalue. */
#define DLA_UNIT_PTR(rf, us) ((rf)->ptr[(us) - (rf)->unit])
/* D_OP_ENABLE of unit us in group g, as an lvalue (rf->op_en). */
#define DLA_UNIT_OP_EN(rf, us, g) ((rf)->op_en[(g) & 1u][(us) - (rf)->unit])


/* What a CSB write did, for the device to act on. */
enum dla_write_effect {
    DLA_WRITE_STORED = 0,
    DLA_WRITE_DROPPED_ENABLED, /* dual register of a group whose OP_EN is set */
    DLA_WRITE_IGNORED_RO,      /* read-only register or absent unit */
    DLA_WRITE_UNMAPPED,        /* no register at that address */
    DLA_WRITE_INTR_CHANGED,    /* interrupt status or mask changed */
    DLA_WRITE_OP_ENABLED       /* OP_EN set for a group */
};

/* Every unit present, no owner; the device adjusts unit[] and owner after this. */
int dla_regfile_init(struct dla_regfile *rf, const struct regdb *db,
                     const struct dla_pointer_ops *pp);
void dla_regfile_free(struct dla_regfile *rf);
void dla_regfile_reset(struct dla_regfile *rf);

/* addr is the database's address (NVDLA: CSB address; RK3588: in-core offset).
 * Inline: the common case in dla_regfile_write_plain, the rest (and every
 * rule of the short path again) in dla_regfile_write_slow. */
static inline enum dla_write_effect dla_regfile_write(struct dla_regfile *rf, uint32_t addr,
                                                      uint32_t v);
/* The common write, a PLAIN register of a present unit whose group accepts
 * writes (a layer's ~60-120 D_ registers), on a path counted in
 * instructions (~20): DLA_WRITE_STORED or DLA_WRITE_IGNORED_RO, or
 * DLA_WRITE_NOT_PLAIN with nothing done when the write is anything else. */
#define DLA_WRITE_NOT_PLAIN (-1)
static inline int dla_regfile_write_plain(struct dla_regfile *rf, uint32_t addr, uint32_t v);
enum dla_write_effect dla_regfile_write_slow(struct dla_regfile *rf, uint32_t addr, uint32_t v);
/* Returns 0, or DLASIM_ERR_INVAL for an unmapped address (value 0). */
int dla_regfile_read(struct dla_regfile *rf, uint32_t addr, uint32_t *v);

/* Hardware side. */
/* A ROM register's value (the device's hook): dla_regfile_get's rare case. */
uint32_t dla_regfile_get_rom(const struct dla_regfile *rf, uint32_t addr, unsigned index);
/* The value of the register at addr in `group` (dual registers; 0 if
 * unmapped).  Inline, through the address-table entry's flags: the engines
 * decode ~100 fields a layer this way (MobileNetV2: ~900 layers an image). */
static inline uint32_t dla_regfile_get(const struct dla_regfile *rf, uint32_t addr,
                                       unsigned group);
/* Unit u's registers as the datapath of `group` reads them, copied as one
 * array: out[k] is the register at the unit's base + 4k (what
 * dla_regfile_get returns; 0 where none), k < n, but for D_OP_ENABLE,
 * which holds its reset value: the host's state, kept apart (rf->op_en),
 * never configuration an engine decodes.  A decode then reads its
 * fields from loads at fixed offsets, not ~100 look-ups through the
 * address table (two copies where the unit's layout allows, else a read
 * per word). */
void dla_regfile_unit_values(const struct dla_regfile *rf, unsigned u, unsigned group,
                             uint32_t *out, unsigned n);
/* Hardware-side stores of n consecutive registers of unit u, words
 * [word, word+n) of its window (as dla_regfile_unit_values numbers them):
 * what n dla_regfile_hw_set calls store, in one copy where the words lie in
 * the unit's view (an operation's status and statistics registers, set
 * once a layer), else one hw_set a word. */
static inline void dla_regfile_unit_store(struct dla_regfile *rf, unsigned u, unsigned group,
                                          unsigned word, const uint32_t *v, unsigned n);
void dla_regfile_unit_store_slow(struct dla_regfile *rf, unsigned u, unsigned group,
                                 unsigned word, const uint32_t *v, unsigned n);
/* The value the datapath executes: a dual register in its unit's CONSUMER group. */
uint32_t dla_regfile_exec(const struct dla_regfile *rf, uint32_t addr);
/* Hardware-side store (status, performance counters), bypassing the
 * software access rules; inline: an SDP operation sets ~17 of them. */
static inline void dla_regfile_hw_set(struct dla_regfile *rf, uint32_t addr, unsigned group,
                                      uint32_t v);
int dla_regfile_op_en(const struct dla_regfile *rf, unsigned u, unsigned group);
/* Set OP_EN of unit u's PRODUCER group as an OP_ENABLE write of 1 would
 * (RK3588 GLOBAL.OPERATION_ENABLE and regcmd op_en entries). */
void dla_regfile_enable(struct dla_regfile *rf, unsigned u);
/* Layer done on unit u: clear OP_EN of the consumer group, advance CONSUMER. */
void dla_regfile_complete(struct dla_regfile *rf, unsigned u);
/* Raise interrupt status bits (NVDLA GLB S_INTR_STATUS, RK3588 RAW_STATUS). */
void dla_regfile_raise(struct dla_regfile *rf, uint32_t status_bits);
/* Raised bits the mask lets through to the interrupt line. */
uint32_t dla_regfile_irq_pending(const struct dla_regfile *rf);

/* The address-table entry of addr (DLA_SLOT_*), DLA_SLOT_NONE when no
 * register is there: every access starts here. */
static inline uint32_t dla_regfile_entry(const struct dla_regfile *rf, uint32_t addr)
{
    uint32_t word = addr >> 2;
    return !(addr & 3u) && word < rf->n_words ? rf->slot[word] : DLA_SLOT_NONE;
}

static inline uint32_t dla_regfile_get(const struct dla_regfile *rf, uint32_t addr,
                                       unsigned group)
{
    uint32_t e = dla_regfile_entry(rf, addr);
    if (e == DLA_SLOT_NONE) {
        return 0;
    }
    unsigned i = e & DLA_SLOT_INDEX;
    if (e & DLA_SLOT_ROM) {
        return dla_regfile_get_rom(rf, addr, i);
    }
    if (e & DLA_SLOT_OP_ENABLE) {
        return rf->op_en[group & 1u][(e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK];
    }
    return rf->val[(e & DLA_SLOT_DUAL) ? (group & 1u) : 0u][i];
}

/*
 * *at = v where that changes it: a PLAIN write's store (dla_regfile_plain_store)
 * and the hardware side's (below).  For the latter, the status and
 * statistics registers share cache lines with the group's configuration
 * (SDP D_STATUS_0 at 0x90cc, D_FEATURE_MODE_CFG_0 at 0x90b0), and a store
 * by the worker that ran the layer, of the same zero counts every layer,
 * took the line from the host, whose next read of the configuration
 * (programming the group again, deciding the next layer's units) then
 * waited for it: ~63 % of dla_sdp_needs_rdma's samples sat on that load
 * in a 1,200-block depthwise model.  Values and their order unchanged.
 */
static inline void dla_regfile_store_changed(uint32_t *at, uint32_t v)
{
    if (*at != v) {
        *at = v;
    }
}

/* Through the entry's flags, not the register's description. */
static inline void dla_regfile_hw_set(struct dla_regfile *rf, uint32_t addr, unsigned group,
                                      uint32_t v)
{
    uint32_t e = dla_regfile_entry(rf, addr);
    if (e != DLA_SLOT_NONE) {
        const unsigned g = (e & DLA_SLOT_DUAL) ? (group & 1u) : 0u;
        if (e & DLA_SLOT_OP_ENABLE) {
            rf->op_en[g][(e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK] = v;
        } else {
            dla_regfile_store_changed(&rf->val[g][e & DLA_SLOT_INDEX], v);
        }
    }
}

static inline void dla_regfile_unit_store(struct dla_regfile *rf, unsigned u, unsigned group,
                                          unsigned word, const uint32_t *v, unsigned n)
{
    const struct dla_unit_state *us = &rf->unit[u];
    if (word >= us->view_dual_lo && word + n <= us->view_n &&
        (word > us->op_en_word || word + n <= us->op_en_word)) { /* dual, in the view */
        uint32_t *to = rf->val[group & 1u] + us->first_reg + word;
        for (unsigned k = 0; k < n; k++) {
            dla_regfile_store_changed(&to[k], v[k]);
        }
        return;
    }
    dla_regfile_unit_store_slow(rf, u, group, word, v, n);
}

/* The value array a PLAIN write to unit u's registers (dual: D_ registers)
 * stores into, or NULL when such a write would not be a plain store now
 * (absent unit; spec 001: a write to an enabled group is dropped, which the
 * slow path does and says).  A PLAIN store changes no unit state (present,
 * PRODUCER, OP_EN), so the answer holds across a run of PLAIN writes. */
static inline uint32_t *dla_regfile_plain_target(struct dla_regfile *rf, unsigned u, int dual)
{
    const struct dla_unit_state *us = &rf->unit[u];
    if (!us->present) {
        return NULL;
    }
    if (!dual) {
        return rf->val[0];
    }
    unsigned g = DLA_UNIT_PTR(rf, us).producer;
    if (rf->drop_when_enabled && us->op_en_reg >= 0 && (DLA_UNIT_OP_EN(rf, us, g) & 1u)) {
        return NULL;
    }
    return rf->val[g];
}

/* The store of the register of address-table entry e into its group's
 * value array (masks of its description: the write mask from the 4-byte
 * array, the W1C mask only where the entry says there is one). */
static inline int dla_regfile_plain_store(const struct dla_regfile *rf, uint32_t *vals,
                                          uint32_t e, uint32_t v)
{
    unsigned i = e & DLA_SLOT_INDEX;
    uint32_t wm = rf->wmask[i];
    uint32_t *p = &vals[i];
    uint32_t x = (*p & ~wm) | (v & wm);
    if (e & DLA_SLOT_W1C) {
        x &= ~(v & rf->hot[i].w1c_mask);
    }
    /* an unchanged value is not stored: the line stays shared with the
     * worker that read it for the group's last layer (overlap: a store
     * takes it back from that core).  84 % of MobileNetV2's plain writes
     * repeat the value the group holds (measured, 60 images). */
    dla_regfile_store_changed(p, x);
    return wm ? DLA_WRITE_STORED : DLA_WRITE_IGNORED_RO;
}

static inline int dla_regfile_write_plain(struct dla_regfile *rf, uint32_t addr, uint32_t v)
{
    uint32_t e = dla_regfile_entry(rf, addr);
    if ((e & (DLA_SLOT_PLAIN | DLA_SLOT_NONE_BIT)) != DLA_SLOT_PLAIN) {
        return DLA_WRITE_NOT_PLAIN;
    }
    uint32_t *vals = dla_regfile_plain_target(rf, (e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK,
                                              (e & DLA_SLOT_DUAL) != 0);
    return vals ? dla_regfile_plain_store(rf, vals, e, v) : DLA_WRITE_NOT_PLAIN;
}

/* A write to a POINTER or OP_ENABLE register of a present unit, e its
 * address-table entry: what dla_regfile_write_slow does for those two kinds,
 * without its look-ups and dispatch (a runtime writes ~20 of them a layer:
 * each operation's producer pointers when it is programmed and again when
 * it is enabled, then its OP_ENABLEs).  DLA_WRITE_NOT_PLAIN with nothing
 * done for any other register. */
static inline int dla_regfile_write_control(struct dla_regfile *rf, uint32_t e, uint32_t v)
{
    if ((e & DLA_SLOT_NONE_BIT) || !(e & (DLA_SLOT_POINTER | DLA_SLOT_OP_ENABLE))) {
        return DLA_WRITE_NOT_PLAIN;
    }
    struct dla_unit_state *us = &rf->unit[(e >> DLA_SLOT_UNIT_SHIFT) & DLA_SLOT_UNIT_MASK];
    unsigned i = e & DLA_SLOT_INDEX;
    if (!us->present) {
        return DLA_WRITE_NOT_PLAIN;
    }
    if (e & DLA_SLOT_POINTER) {
        rf->pp->pointer_write(rf, us, &rf->regs[i], v);
        return DLA_WRITE_STORED;
    }
    unsigned g = (e & DLA_SLOT_DUAL) ? DLA_UNIT_PTR(rf, us).producer : 0u;
    if ((e & DLA_SLOT_DUAL) && rf->drop_when_enabled && us->op_en_reg >= 0 &&
        (DLA_UNIT_OP_EN(rf, us, g) & 1u)) {
        return DLA_WRITE_DROPPED_ENABLED; /* spec 001: dropped silently */
    }
    uint32_t *op = &DLA_UNIT_OP_EN(rf, us, g);
    const uint32_t wm = rf->wmask[i];
    *op = (*op & ~wm) | (v & wm);
    const int stored = wm ? DLA_WRITE_STORED : DLA_WRITE_IGNORED_RO;
    if (*op & 1u) {
        if (rf->pp->enabled) {
            rf->pp->enabled(rf, us);
        }
        return DLA_WRITE_OP_ENABLED;
    }
    return stored;
}

static inline enum dla_write_effect dla_regfile_write(struct dla_regfile *rf, uint32_t addr,
                                                      uint32_t v)
{
    int effect = dla_regfile_write_plain(rf, addr, v);
    return effect != DLA_WRITE_NOT_PLAIN ? (enum dla_write_effect)effect
                                         : dla_regfile_write_slow(rf, addr, v);
}

#endif
