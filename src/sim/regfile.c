/*
 * CSB register file (see regfile.h).  Every access rule is data from the
 * register database: masks, W1C/W1S bits, group membership and kinds; which
 * units a configuration has and which have a LUT port comes from the unit
 * table (units.c).
 */
#include "sim/regfile.h"

#include <stdlib.h>
#include <string.h>

#include "sim/units.h"

/* S_STATUS encodings (RDL S_STATUS_STATUS_0_enum). */
#define STATUS_IDLE 0u
#define STATUS_RUNNING 1u
#define STATUS_PENDING 2u

int dla_regfile_init(struct dla_regfile *rf, const struct dla_config *cfg)
{
    memset(rf, 0, sizeof(*rf));
    rf->val[0] = calloc(nvdla_reg_count, sizeof(uint32_t));
    rf->val[1] = calloc(nvdla_reg_count, sizeof(uint32_t));
    if (!rf->val[0] || !rf->val[1]) {
        dla_regfile_free(rf);
        return DLASIM_ERR_NOMEM;
    }
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        struct dla_unit_state *us = &rf->unit[u];
        us->present = (uint8_t)dla_unit_present(cfg, u); /* units.c */
        us->op_en_reg = -1;
        us->lut = (int16_t)dla_unit_table[u].lut;
    }
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        const struct nvdla_reg_desc *r = &nvdla_regs[i];
        if (r->kind == NVDLA_KIND_OP_ENABLE) {
            rf->unit[r->unit].op_en_reg = (int16_t)i;
        } else if (r->kind == NVDLA_KIND_POINTER) {
            rf->unit[r->unit].pingpong = 1;
        } else if (r->kind == NVDLA_KIND_INTR_STATUS) {
            rf->intr_status_reg = i;
        } else if (r->kind == NVDLA_KIND_INTR_MASK) {
            rf->intr_mask_reg = i;
        }
    }
    dla_cfgrom_build(cfg, rf->rom);
    dla_regfile_reset(rf);
    return 0;
}

void dla_regfile_free(struct dla_regfile *rf)
{
    free(rf->val[0]);
    free(rf->val[1]);
    rf->val[0] = rf->val[1] = NULL;
}

void dla_regfile_reset(struct dla_regfile *rf)
{
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        rf->val[0][i] = rf->val[1][i] = nvdla_regs[i].reset;
    }
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        rf->unit[u].producer = 0;
        rf->unit[u].consumer = 0;
    }
    memset(rf->lut_port, 0, sizeof(rf->lut_port));
}

static uint32_t op_en(const struct dla_regfile *rf, const struct dla_unit_state *us, unsigned g)
{
    return us->op_en_reg >= 0 ? (rf->val[g][us->op_en_reg] & 1u) : 0u;
}

int dla_regfile_op_en(const struct dla_regfile *rf, enum nvdla_unit u, unsigned group)
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
            s[g] = us->consumer == g ? STATUS_RUNNING : STATUS_PENDING;
        }
    }
    return s[0] | (s[1] << 16);
}

/* ---- LUT access port (S_LUT_ACCESS_CFG / S_LUT_ACCESS_DATA) -------------- */
/* ref: cmod cdp_reg_model/sdp_reg_model: the CFG write sets table, entry and
 * access type; each DATA access of the matching type moves one entry and
 * advances the index until the table's last entry. */

static void lut_cfg_write(struct dla_lut_port *p, unsigned unit, uint32_t v)
{
    if (unit == NVDLA_UNIT_SDP) {
        p->index = DLA_FIELD(v, NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_ADDR);
        p->table = DLA_FIELD(v, NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID);
        p->write = DLA_FIELD(v, NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE);
    } else {
        p->index = DLA_FIELD(v, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ADDR);
        p->table = DLA_FIELD(v, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID);
        p->write = DLA_FIELD(v, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE);
    }
}

static uint32_t lut_cfg_read(const struct dla_lut_port *p, unsigned unit)
{
    if (unit == NVDLA_UNIT_SDP) {
        return NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_ADDR(p->index) |
               NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID(p->table) |
               NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE(p->write);
    }
    return NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ADDR(p->index) |
           NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID(p->table) |
           NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE(p->write);
}

static uint16_t *lut_entry(struct dla_regfile *rf, int lut, const struct dla_lut_port *p)
{
    struct dla_lut_ram *ram = &rf->lut[lut];
    if (p->table) {
        return p->index < DLA_LUT_LO_ENTRIES ? &ram->lo[p->index] : NULL;
    }
    return p->index < DLA_LUT_LE_ENTRIES ? &ram->le[p->index] : NULL;
}

static void lut_advance(struct dla_lut_port *p)
{
    uint32_t last = p->table ? DLA_LUT_LO_ENTRIES - 1 : DLA_LUT_LE_ENTRIES - 1;
    if (p->index < last) {
        p->index++;
    }
}

static void lut_data_write(struct dla_regfile *rf, int lut, uint32_t v)
{
    struct dla_lut_port *p = &rf->lut_port[lut];
    if (!p->write) {
        return;
    }
    uint16_t *e = lut_entry(rf, lut, p);
    if (e) {
        *e = (uint16_t)v;
    }
    lut_advance(p);
}

static uint32_t lut_data_read(struct dla_regfile *rf, int lut)
{
    struct dla_lut_port *p = &rf->lut_port[lut];
    if (p->write) {
        return 0;
    }
    uint16_t *e = lut_entry(rf, lut, p);
    uint32_t v = e ? *e : 0;
    lut_advance(p);
    return v;
}

/* ---- CSB access ----------------------------------------------------------- */

enum dla_write_effect dla_regfile_write(struct dla_regfile *rf, uint32_t addr, uint32_t v)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    if (!r) {
        return DLA_WRITE_UNMAPPED;
    }
    struct dla_unit_state *us = &rf->unit[r->unit];
    unsigned i = nvdla_reg_index(r);
    if (!us->present || r->kind == NVDLA_KIND_ROM || r->kind == NVDLA_KIND_STATUS) {
        return DLA_WRITE_IGNORED_RO;
    }
    switch (r->kind) {
    case NVDLA_KIND_POINTER:
        us->producer = (uint8_t)(v & 1u);
        return DLA_WRITE_STORED;
    case NVDLA_KIND_LUT_ACCESS_CFG:
        lut_cfg_write(&rf->lut_port[us->lut], r->unit, v);
        return DLA_WRITE_STORED;
    case NVDLA_KIND_LUT_ACCESS_DATA:
        lut_data_write(rf, us->lut, v);
        return DLA_WRITE_STORED;
    case NVDLA_KIND_INTR_SET:
        rf->val[0][rf->intr_status_reg] |= v & r->w1s_mask;
        return DLA_WRITE_INTR_CHANGED;
    case NVDLA_KIND_INTR_STATUS:
        rf->val[0][i] &= ~(v & r->w1c_mask);
        return DLA_WRITE_INTR_CHANGED;
    default:
        break;
    }
    unsigned g = r->group == NVDLA_REG_DUAL ? us->producer : 0u;
    if (r->group == NVDLA_REG_DUAL && op_en(rf, us, g)) {
        return DLA_WRITE_DROPPED_ENABLED; /* spec 001: dropped silently */
    }
    uint32_t old = rf->val[g][i];
    rf->val[g][i] = ((old & ~r->write_mask) | (v & r->write_mask)) & ~(v & r->w1c_mask);
    if (r->kind == NVDLA_KIND_INTR_MASK) {
        return DLA_WRITE_INTR_CHANGED;
    }
    if (r->kind == NVDLA_KIND_OP_ENABLE && (rf->val[g][i] & 1u)) {
        return DLA_WRITE_OP_ENABLED;
    }
    return r->write_mask ? DLA_WRITE_STORED : DLA_WRITE_IGNORED_RO;
}

int dla_regfile_read(struct dla_regfile *rf, uint32_t addr, uint32_t *v)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
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
        *v = rf->rom[(addr - nvdla_units[r->unit].base) / 4u];
        return 0;
    case NVDLA_KIND_STATUS:
        *v = status_value(rf, us);
        return 0;
    case NVDLA_KIND_POINTER:
        *v = (uint32_t)us->producer | ((uint32_t)us->consumer << 16);
        return 0;
    case NVDLA_KIND_LUT_ACCESS_CFG:
        *v = lut_cfg_read(&rf->lut_port[us->lut], r->unit);
        return 0;
    case NVDLA_KIND_LUT_ACCESS_DATA:
        *v = lut_data_read(rf, us->lut);
        return 0;
    default:
        break;
    }
    unsigned g = r->group == NVDLA_REG_DUAL ? us->producer : 0u;
    *v = rf->val[g][nvdla_reg_index(r)] & r->read_mask;
    return 0;
}

uint32_t dla_regfile_get(const struct dla_regfile *rf, uint32_t addr, unsigned group)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    if (!r) {
        return 0;
    }
    if (r->kind == NVDLA_KIND_ROM) {
        return rf->rom[(addr - nvdla_units[r->unit].base) / 4u];
    }
    unsigned g = r->group == NVDLA_REG_DUAL ? (group & 1u) : 0u;
    return rf->val[g][nvdla_reg_index(r)];
}

void dla_regfile_hw_set(struct dla_regfile *rf, uint32_t addr, unsigned group, uint32_t v)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_addr(addr);
    if (!r) {
        return;
    }
    unsigned g = r->group == NVDLA_REG_DUAL ? (group & 1u) : 0u;
    rf->val[g][nvdla_reg_index(r)] = v;
}

void dla_regfile_complete(struct dla_regfile *rf, enum nvdla_unit u)
{
    struct dla_unit_state *us = &rf->unit[u];
    if (us->op_en_reg >= 0) {
        rf->val[us->consumer][us->op_en_reg] &= ~1u;
    }
    us->consumer ^= 1u;
}

void dla_regfile_raise(struct dla_regfile *rf, uint32_t status_bits)
{
    rf->val[0][rf->intr_status_reg] |= status_bits;
}

uint32_t dla_regfile_irq_pending(const struct dla_regfile *rf)
{
    return rf->val[0][rf->intr_status_reg] & ~rf->val[0][rf->intr_mask_reg];
}
