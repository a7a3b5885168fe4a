/*
 * The CSB register file of every unit, driven by the register database
 * (src/regs/regdb.h): one write path and one read path for all units.
 *
 * ref: spec 001 "Ping-pong Synchronization Mechanism": two duplicated groups
 * (D_* registers) and a single group per unit; PRODUCER selects the group the
 * CSB accesses, CONSUMER the group the datapath executes; OP_EN is set by
 * software and cleared by hardware; writes to a group whose OP_EN is set are
 * dropped.  GLB S_INTR_SET/S_INTR_STATUS are write-1-to-set/clear.
 */
#ifndef DLASIM_SIM_REGFILE_H
#define DLASIM_SIM_REGFILE_H

#include <stdint.h>

#include "regs/regdb.h"
#include "sim/dla.h"

/* Per-unit ping-pong state. */
struct dla_unit_state {
    uint8_t present;        /* the configuration has this unit */
    uint8_t pingpong;       /* the unit has S_POINTER/D_OP_ENABLE */
    uint8_t producer;       /* group the CSB accesses */
    uint8_t consumer;       /* group the datapath executes */
    int16_t op_en_reg;      /* index of D_OP_ENABLE_0, or -1 */
    int16_t lut;            /* enum dla_lut_id for units with a LUT port, or -1 */
};

/* LUT access port state (S_LUT_ACCESS_CFG) of SDP and CDP. */
struct dla_lut_port {
    uint32_t table;         /* 0 = LE, 1 = LO */
    uint32_t index;         /* next entry */
    uint32_t write;         /* 1 = data writes store, 0 = data reads load */
};

struct dla_regfile {
    uint32_t *val[2];                             /* [group][register index]; single: val[0] */
    struct dla_unit_state unit[NVDLA_UNIT_COUNT]; /* ping-pong pointers */
    struct dla_lut_port lut_port[2];              /* by enum dla_lut_id */
    struct dla_lut_ram lut[2];                    /* LUT RAMs by enum dla_lut_id */
    uint32_t rom[DLA_CFGROM_WORDS];               /* ConfigROM image */
    unsigned intr_status_reg;                     /* index of GLB S_INTR_STATUS_0 */
    unsigned intr_mask_reg;                       /* index of GLB S_INTR_MASK_0 */
};

/* What a CSB write did, for the device to act on. */
enum dla_write_effect {
    DLA_WRITE_STORED = 0,
    DLA_WRITE_DROPPED_ENABLED, /* dual register of a group whose OP_EN is set */
    DLA_WRITE_IGNORED_RO,      /* read-only register or absent unit */
    DLA_WRITE_UNMAPPED,        /* no register at that address */
    DLA_WRITE_INTR_CHANGED,    /* GLB interrupt status or mask changed */
    DLA_WRITE_OP_ENABLED       /* OP_EN set for a group */
};

int dla_regfile_init(struct dla_regfile *rf, const struct dla_config *cfg);
void dla_regfile_free(struct dla_regfile *rf);
void dla_regfile_reset(struct dla_regfile *rf);

enum dla_write_effect dla_regfile_write(struct dla_regfile *rf, uint32_t addr, uint32_t v);
/* Returns 0, or DLASIM_ERR_INVAL for an unmapped address (value 0). */
int dla_regfile_read(struct dla_regfile *rf, uint32_t addr, uint32_t *v);

/* Hardware side. */
uint32_t dla_regfile_get(const struct dla_regfile *rf, uint32_t addr, unsigned group);
void dla_regfile_hw_set(struct dla_regfile *rf, uint32_t addr, unsigned group, uint32_t v);
int dla_regfile_op_en(const struct dla_regfile *rf, enum nvdla_unit u, unsigned group);
/* Layer done on unit u: clear OP_EN of the consumer group, advance CONSUMER. */
void dla_regfile_complete(struct dla_regfile *rf, enum nvdla_unit u);
/* Raise GLB interrupt status bits. */
void dla_regfile_raise(struct dla_regfile *rf, uint32_t status_bits);
uint32_t dla_regfile_irq_pending(const struct dla_regfile *rf);

#endif
