/*
 * The register database as C tables.  The tables themselves are generated
 * (src/regs/gen/nvdla_regs_table.c) from regdb/nvdla.xml by
 * tools/regdb/gen_regs.py; this header declares their shape and the lookups
 * (src/regs/regdb.c) that the register file, the trace player, the CLI and
 * the docs all share.
 */
#ifndef DLASIM_REGS_REGDB_H
#define DLASIM_REGS_REGDB_H

#include <stddef.h>
#include <stdint.h>

#include "regs/gen/nvdla_regs.h" /* enum nvdla_unit, addresses, fields */
#include "regs/gen/rk3588_regs.h" /* enum rk3588_unit, RK3588 in-core offsets */

/* Register group membership (spec 001, "Ping-pong Synchronization Mechanism"). */
enum nvdla_reg_group {
    NVDLA_REG_SINGLE = 0, /* one copy (S_* registers, GLB, CFGROM, ...) */
    NVDLA_REG_DUAL = 1    /* one copy per group; CSB sees the producer's */
};

/* Behaviour beyond plain storage that the register file must implement. */
enum nvdla_reg_kind {
    NVDLA_KIND_PLAIN = 0,
    NVDLA_KIND_STATUS,      /* S_STATUS: derived from OP_EN and CONSUMER */
    NVDLA_KIND_POINTER,     /* S_POINTER: PRODUCER rw, CONSUMER ro */
    NVDLA_KIND_OP_ENABLE,   /* D_OP_ENABLE: starts a layer */
    NVDLA_KIND_LUT_ACCESS_CFG,  /* S_LUT_ACCESS_CFG: LUT RAM address/table/type */
    NVDLA_KIND_LUT_ACCESS_DATA, /* S_LUT_ACCESS_DATA: LUT RAM port */
    NVDLA_KIND_INTR_SET,    /* GLB S_INTR_SET: write-1-to-set status */
    NVDLA_KIND_INTR_STATUS, /* GLB S_INTR_STATUS: write-1-to-clear */
    NVDLA_KIND_INTR_MASK,   /* GLB S_INTR_MASK */
    NVDLA_KIND_ROM,         /* CFGROM: value from the configuration */
    NVDLA_KIND_INTR_CLEAR,  /* RK3588 PC INTERRUPT_CLEAR: write 1 clears RAW_STATUS */
    NVDLA_KIND_INTR_RAW     /* RK3588 PC INTERRUPT_RAW_STATUS */
};

/* Field access type as a driver sees it. */
enum nvdla_access {
    NVDLA_ACC_RW = 0,
    NVDLA_ACC_RO,  /* read-only (hardware-updated or constant) */
    NVDLA_ACC_WO,  /* write-only (reads 0) */
    NVDLA_ACC_W1C, /* write 1 to clear */
    NVDLA_ACC_W1S  /* write 1 to set (reads 0) */
};

struct nvdla_enum_desc {
    const char *name;   /* "ENABLE" */
    uint32_t value;     /* unshifted */
};

struct nvdla_field_desc {
    const char *name;   /* "KERNEL_WIDTH" */
    uint8_t low, high;  /* bit range, inclusive */
    uint8_t access;     /* enum nvdla_access */
    uint32_t reset;     /* unshifted reset value */
    uint16_t first_enum, n_enums; /* into nvdla_enums[] */
};

struct nvdla_reg_desc {
    const char *name;       /* "D_POOLING_KERNEL_CFG_0" (trace spelling) */
    uint32_t addr;          /* absolute CSB byte address */
    uint8_t unit;           /* enum nvdla_unit */
    uint8_t group;          /* enum nvdla_reg_group */
    uint8_t kind;           /* enum nvdla_reg_kind */
    uint32_t reset;         /* reset value of the whole register */
    uint32_t write_mask;    /* bits a CSB write stores (RW and WO fields) */
    uint32_t read_mask;     /* bits a CSB read returns (RW, RO and W1C fields) */
    uint32_t w1c_mask;      /* write-1-to-clear bits */
    uint32_t w1s_mask;      /* write-1-to-set bits */
    uint16_t first_field, n_fields; /* into nvdla_fields[] */
};

struct nvdla_unit_desc {
    const char *name;       /* "PDP" as in trace names NVDLA_PDP.* */
    const char *alias;      /* other accepted spelling ("RBK" for RUBIK) or NULL */
    uint32_t base;          /* CSB byte address of the unit's 4 KiB window */
    uint16_t first_reg, n_regs; /* into nvdla_regs[], sorted by address */
    uint16_t first_slot, n_slots; /* into the db's word_reg[]: words base .. last register */
    /* Device facts (regdb/README.md, "Device facts"), 0 where none: */
    uint32_t done_bits[2];  /* interrupt status bits raised when register group 0 / 1
                               completes: the domain's `done` fields, and the fields of
                               the same names ending in 1 instead of 0 */
    uint32_t op_en_bit;     /* RK3588: its bit in GLOBAL.OPERATION_ENABLE and in the
                               value of a regcmd op_en entry */
    uint16_t regcmd_target; /* RK3588: its block bit in a regcmd entry's target */
};

/*
 * One register database (regdb/<name>.xml).  The descriptor types above are
 * shared by every database (they carry NVDLA's name because it came first);
 * each database adds its own generated tables and this descriptor, so the
 * lookups below work on any device.
 */
struct regdb {
    const char *name;                /* "nvdla", "rk3588" */
    const char *trace_prefix;        /* "NVDLA_" or "RKNN_" in trace register names */
    int names_any_case;              /* trace names may be lower case (RKNN_ppu_s_pointer) */
    const struct nvdla_unit_desc *units;
    unsigned n_units;
    const struct nvdla_reg_desc *regs;
    unsigned n_regs;
    const struct nvdla_field_desc *fields;
    unsigned n_fields;
    const struct nvdla_enum_desc *enums;
    unsigned n_enums;
    const int8_t *window_unit;       /* unit of each 4 KiB window, -1 = none */
    unsigned n_windows;
    const uint16_t *word_reg;        /* register index of each word of a unit's span
                                        (units' first_slot), 0xFFFF = none */
    /* Device facts (regdb/README.md, "Device facts"). */
    uint32_t intr_status;            /* address of the kind=intr_status register */
    uint32_t intr_mask;              /* kind=intr_mask */
    uint32_t intr_clear;             /* kind=intr_clear, if has_intr_clear; else writing
                                        1s to intr_status clears them (W1C) */
    uint8_t has_intr_clear;
    uint8_t intr_mask_enables;       /* a mask bit 1 lets its status bit through to the
                                        line (RK3588); else it masks it (NVDLA) */
    const char *intr_infix;          /* a trace's interrupt ENGINE_G names the status
                                        field ENGINE<infix>G ("_DONE_STATUS", "_") */
    uint16_t regcmd_op_en;           /* regcmd target of the op_en entry, 0 = no regcmd */
    uint16_t regcmd_marker;          /* target of the entry required before op_en */
    /* Lookups the generator emits (tools/regdb/gen_regs.py emit_lookups): */
    int (*unit_by_regcmd)(uint32_t block);   /* see regdb_unit_by_regcmd */
    uint32_t (*intr_bit)(const char *name);  /* see regdb_intr_bit */
};

extern const struct regdb nvdla_db;
extern const struct regdb rk3588_db;

/* Lookups in any database (same rules as the nvdla_* ones below; in a
 * database with names_any_case, names match without regard to case). */
const struct nvdla_reg_desc *regdb_reg_by_addr(const struct regdb *db, uint32_t addr);
const struct nvdla_reg_desc *regdb_reg_by_name(const struct regdb *db, const char *name);
int regdb_unit_by_name(const struct regdb *db, const char *name, size_t len);
const struct nvdla_field_desc *regdb_field_by_name(const struct regdb *db,
                                                   const struct nvdla_reg_desc *r,
                                                   const char *name);
/* "RKNN_ppu_s_pointer" / "NVDLA_PDP.D_OP_ENABLE_0" spelling of a register. */
const char *regdb_reg_name(const struct regdb *db, uint32_t addr, char *buf, size_t buflen);

/* Every database (the first is the default), and the one whose trace prefix
 * starts `name` ("NVDLA_PDP.D_OP_ENABLE_0", "RKNN_ppu_s_pointer"), or NULL:
 * generated from the list of databases (src/regs/gen/regdb_all.c, make regs). */
extern const struct regdb *const regdb_all[];
extern const size_t regdb_all_count;
const struct regdb *regdb_by_trace_name(const char *name);
/* Unit whose regcmd_target is `block` (a target without bit 0), or -1. */
static inline int regdb_unit_by_regcmd(const struct regdb *db, uint32_t block)
{
    return db->unit_by_regcmd(block);
}
/* Interrupt status bit named by a trace's "ENGINE_G" (SDP_0, CDMA_DAT_1,
 * DPU_0): the field ENGINE<intr_infix>G of the intr_status register; 0 if none. */
static inline uint32_t regdb_intr_bit(const struct regdb *db, const char *name)
{
    return db->intr_bit(name);
}

extern const struct nvdla_unit_desc rk3588_units[RK3588_UNIT_COUNT];
extern const struct nvdla_reg_desc rk3588_regs[];
extern const struct nvdla_field_desc rk3588_fields[];

extern const struct nvdla_unit_desc nvdla_units[NVDLA_UNIT_COUNT];
extern const struct nvdla_reg_desc nvdla_regs[];
extern const unsigned nvdla_reg_count;
extern const struct nvdla_field_desc nvdla_fields[];
extern const unsigned nvdla_field_count;
extern const struct nvdla_enum_desc nvdla_enums[];
extern const unsigned nvdla_enum_count;

/* Register at a CSB byte address, or NULL. */
const struct nvdla_reg_desc *nvdla_reg_by_addr(uint32_t addr);
/* Register by trace name: "NVDLA_PDP.D_OP_ENABLE_0" (also "PDP.D_OP_ENABLE_0"
 * and the C spelling "NVDLA_PDP_D_OP_ENABLE_0"), or NULL. */
const struct nvdla_reg_desc *nvdla_reg_by_name(const char *name);
/* Index of a register in nvdla_regs[] (the register file's storage slot). */
static inline unsigned nvdla_reg_index(const struct nvdla_reg_desc *r)
{
    return (unsigned)(r - nvdla_regs);
}
/* Unit by name ("PDP", "RBK"/"RUBIK", "SDP_RDMA"), or -1. */
int nvdla_unit_by_name(const char *name, size_t len);
/* Field of a register by name, or NULL. */
const struct nvdla_field_desc *nvdla_field_by_name(const struct nvdla_reg_desc *r,
                                                   const char *name);

#endif
