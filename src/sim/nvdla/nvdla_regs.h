/*
 * NVDLA registers beyond the generic register file's rules (src/sim/core/
 * regfile.c): the LUT RAMs of SDP and CDP behind their S_LUT_ACCESS_CFG /
 * S_LUT_ACCESS_DATA ports, and the ConfigROM image.  The register file
 * calls NVDLA's device hooks (struct dla_pointer_ops device_read /
 * device_write / device_reset, set in units.c) for registers of these
 * kinds; the state lives here, in the NVDLA device.
 */
#ifndef DLASIM_SIM_NVDLA_REGS_H
#define DLASIM_SIM_NVDLA_REGS_H

#include <stdint.h>

#include "plan/config.h"

/* LUT RAM of SDP and CDP (written through S_LUT_ACCESS_CFG/S_LUT_ACCESS_DATA).
 * ref: spec 001, CDP LUT; RAW table 65 entries, density table 257 entries. */
#define DLA_LUT_LE_ENTRIES 65
#define DLA_LUT_LO_ENTRIES 257
struct dla_lut_ram {
    uint16_t le[DLA_LUT_LE_ENTRIES]; /* LE (raw/exponent) table */
    uint16_t lo[DLA_LUT_LO_ENTRIES]; /* LO (density/linear) table */
};
enum dla_lut_id { DLA_LUT_SDP = 0, DLA_LUT_CDP = 1 };

/* LUT access port state (S_LUT_ACCESS_CFG) of SDP and CDP. */
struct dla_lut_port {
    uint32_t table;         /* 0 = LE, 1 = LO */
    uint32_t index;         /* next entry */
    uint32_t write;         /* 1 = data writes store, 0 = data reads load */
};

/* ConfigROM image (CSB 0x0000-0x0fff) derived from the parameters, in
 * 32-bit words: rom[offset / 4].  ref: spec 004 "Descriptors and payloads"
 * (cfgrom.c). */
#define DLA_CFGROM_WORDS 1024
void dla_cfgrom_build(const struct dla_config *c, uint32_t rom[DLA_CFGROM_WORDS]);

/* The NVDLA device's register state the register file does not hold. */
struct dla_nvdla_regs {
    struct dla_lut_port lut_port[2];  /* by enum dla_lut_id */
    struct dla_lut_ram lut[2];        /* LUT RAMs by enum dla_lut_id */
    uint32_t rom[DLA_CFGROM_WORDS];   /* ConfigROM image (kind ROM) */
};

struct dla_regfile;
struct nvdla_reg_desc;

/* The register file's device hooks for NVDLA (lut_port.c): x is rf->owner. */
void dla_nvdla_reg_write(struct dla_regfile *rf, const struct nvdla_reg_desc *r, uint32_t v);
uint32_t dla_nvdla_reg_read(const struct dla_regfile *rf, const struct nvdla_reg_desc *r, uint32_t addr);
void dla_nvdla_reg_reset(struct dla_regfile *rf);

#endif
