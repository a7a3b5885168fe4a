/*
 * NVDLA's registers of its own kinds (nvdla_regs.h), reached through the
 * register file's device hooks: the LUT access ports of SDP and CDP and the
 * ConfigROM.
 *
 * LUT port ref: cmod cdp_reg_model/sdp_reg_model: the CFG write sets table,
 * entry and access type; each DATA access of the matching type moves one
 * entry and advances the index until the table's last entry.
 */
#include "sim/nvdla/nvdla_regs.h"

#include <string.h>

#include "regs/regdb.h"
#include "sim/core/regfile.h"
#include "sim/nvdla/units.h"

#define FIELD(v, F) (((uint32_t)(v) & F##__MASK) >> F##__SHIFT)

static struct dla_nvdla_regs *state(const struct dla_regfile *rf)
{
    return rf->owner;
}

static void lut_cfg_write(struct dla_lut_port *p, unsigned unit, uint32_t v)
{
    if (unit == NVDLA_UNIT_SDP) {
        p->index = FIELD(v, NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_ADDR);
        p->table = FIELD(v, NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID);
        p->write = FIELD(v, NVDLA_SDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE);
    } else {
        p->index = FIELD(v, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ADDR);
        p->table = FIELD(v, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID);
        p->write = FIELD(v, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE);
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

static uint16_t *lut_entry(struct dla_lut_ram *ram, const struct dla_lut_port *p)
{
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

static void lut_data_write(struct dla_nvdla_regs *x, int lut, uint32_t v)
{
    struct dla_lut_port *p = &x->lut_port[lut];
    if (!p->write) {
        return;
    }
    uint16_t *e = lut_entry(&x->lut[lut], p);
    if (e) {
        *e = (uint16_t)v;
    }
    lut_advance(p);
}

static uint32_t lut_data_read(struct dla_nvdla_regs *x, int lut)
{
    struct dla_lut_port *p = &x->lut_port[lut];
    if (p->write) {
        return 0;
    }
    uint16_t *e = lut_entry(&x->lut[lut], p);
    uint32_t v = e ? *e : 0;
    lut_advance(p);
    return v;
}

void dla_nvdla_reg_write(struct dla_regfile *rf, const struct nvdla_reg_desc *r, uint32_t v)
{
    struct dla_nvdla_regs *x = state(rf);
    int lut = r->unit < NVDLA_UNIT_COUNT ? dla_unit_table[r->unit].lut : -1;
    if (!x || lut < 0) {
        return;
    }
    if (r->kind == NVDLA_KIND_LUT_ACCESS_CFG) {
        lut_cfg_write(&x->lut_port[lut], r->unit, v);
    } else if (r->kind == NVDLA_KIND_LUT_ACCESS_DATA) {
        lut_data_write(x, lut, v);
    }
}

uint32_t dla_nvdla_reg_read(const struct dla_regfile *rf, const struct nvdla_reg_desc *r, uint32_t addr)
{
    struct dla_nvdla_regs *x = state(rf);
    if (!x) {
        return 0;
    }
    if (r->kind == NVDLA_KIND_ROM) {
        uint32_t word = (addr - rf->db->units[r->unit].base) / 4u;
        return word < DLA_CFGROM_WORDS ? x->rom[word] : 0;
    }
    int lut = r->unit < NVDLA_UNIT_COUNT ? dla_unit_table[r->unit].lut : -1;
    if (lut < 0) {
        return 0;
    }
    if (r->kind == NVDLA_KIND_LUT_ACCESS_CFG) {
        return lut_cfg_read(&x->lut_port[lut], r->unit);
    }
    return r->kind == NVDLA_KIND_LUT_ACCESS_DATA ? lut_data_read(x, lut) : 0;
}

void dla_nvdla_reg_reset(struct dla_regfile *rf)
{
    struct dla_nvdla_regs *x = state(rf);
    if (x) {
        memset(x->lut_port, 0, sizeof(x->lut_port));
    }
}
