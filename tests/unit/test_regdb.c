/*
 * Register database: generated tables (src/regs/gen/nvdla_regs_table.c),
 * generated header macros (src/regs/gen/nvdla_regs.h) and the lookups of
 * src/regs/regdb.c.
 *
 * Structural checks recompute every derived value (masks, reset, order)
 * from the field list with plain loops written here; the "known facts"
 * come from NVDLA's RDL / RTL (cited per test), not from the tables.
 * Generation reproducibility is checked outside this binary:
 *   python3 tools/regdb/gen_regs.py regdb/nvdla.xml src/regs/gen docs/registers.md
 *   && git diff --exit-code src/regs/gen docs/registers.md
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dlasim/rk3588.h"
#include "regs/regdb.h"

static uint32_t bits(unsigned low, unsigned high)
{
    uint32_t m = 0;
    for (unsigned b = low; b <= high; b++) {
        m |= 1u << b;
    }
    return m;
}

static const struct nvdla_field_desc *field_of(const struct nvdla_reg_desc *r, unsigned i)
{
    return &nvdla_fields[r->first_field + i];
}

/* ---- structure ----------------------------------------------------------- */

static void test_units(void **state)
{
    (void)state;
    static const char *const names[NVDLA_UNIT_COUNT] = {
        "CFGROM", "GLB", "MCIF", "CDMA", "CSC", "CMAC_A", "CMAC_B", "CACC",
        "SDP_RDMA", "SDP", "PDP_RDMA", "PDP", "CDP_RDMA", "CDP", "GEC", "CVIF",
        "BDMA", "RUBIK"
    };
    assert_int_equal(NVDLA_UNIT_COUNT, 18);
    assert_int_equal(NVDLA_UNIT_RUBIK, 0x11);
    assert_int_equal(NVDLA_UNIT_PDP, 0xB);
    unsigned next = 0;
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        assert_string_equal(nvdla_units[u].name, names[u]);
        assert_int_equal(nvdla_units[u].base, u << 12);
        assert_int_equal(nvdla_units[u].first_reg, next);
        assert_true(nvdla_units[u].n_regs > 0);
        next += nvdla_units[u].n_regs;
    }
    assert_int_equal(next, nvdla_reg_count);
    assert_int_equal(nvdla_reg_count, NVDLA_REG_COUNT);
    assert_int_equal(nvdla_field_count, NVDLA_FIELD_COUNT);
    assert_int_equal(nvdla_enum_count, NVDLA_ENUM_COUNT);
    assert_string_equal(nvdla_units[NVDLA_UNIT_RUBIK].alias, "RBK");
}

static void test_regs_sorted_and_inside_windows(void **state)
{
    (void)state;
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        const struct nvdla_unit_desc *ud = &nvdla_units[u];
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
            assert_int_equal(r->unit, u);
            assert_true(r->addr >= ud->base && r->addr < ud->base + 0x1000u);
            assert_int_equal(r->addr % 4u, 0);
            if (i > 0) {
                assert_true(r[-1].addr < r->addr);
            }
            size_t n = strlen(r->name);
            assert_true(n > 2 && strcmp(r->name + n - 2, "_0") == 0);
        }
    }
    for (unsigned i = 1; i < nvdla_reg_count; i++) {
        assert_true(nvdla_regs[i - 1].addr < nvdla_regs[i].addr);
    }
}

/* Masks and reset recomputed from the fields (regdb.h defines them). */
static void test_masks_match_fields(void **state)
{
    (void)state;
    unsigned next_field = 0;
    unsigned next_enum = 0;
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        const struct nvdla_reg_desc *r = &nvdla_regs[i];
        uint32_t used = 0, reset = 0, wm = 0, rm = 0, w1c = 0, w1s = 0;
        assert_int_equal(r->first_field, next_field);
        assert_true(r->n_fields > 0);
        next_field += r->n_fields;
        for (unsigned k = 0; k < r->n_fields; k++) {
            const struct nvdla_field_desc *f = field_of(r, k);
            assert_true(f->low <= f->high && f->high < 32);
            uint32_t m = bits(f->low, f->high);
            assert_int_equal(used & m, 0); /* no overlap */
            used |= m;
            if (k > 0) {
                assert_true(field_of(r, k - 1)->high < f->low); /* sorted */
            }
            unsigned width = f->high - f->low + 1u;
            if (width < 32) {
                assert_int_equal(f->reset >> width, 0);
            }
            reset |= f->reset << f->low;
            switch (f->access) {
            case NVDLA_ACC_RW: wm |= m; rm |= m; break;
            case NVDLA_ACC_RO: rm |= m; break;
            case NVDLA_ACC_WO: wm |= m; break;
            case NVDLA_ACC_W1C: rm |= m; w1c |= m; break;
            case NVDLA_ACC_W1S: w1s |= m; break;
            default: fail_msg("%s.%s: bad access %u", r->name, f->name, f->access);
            }
            assert_int_equal(f->first_enum, next_enum);
            next_enum += f->n_enums;
            for (unsigned e = 0; e < f->n_enums; e++) {
                uint32_t v = nvdla_enums[f->first_enum + e].value;
                if (width < 32) {
                    assert_int_equal(v >> width, 0);
                }
            }
        }
        assert_int_equal(r->reset, reset);
        assert_int_equal(r->write_mask, wm);
        assert_int_equal(r->read_mask, rm);
        assert_int_equal(r->w1c_mask, w1c);
        assert_int_equal(r->w1s_mask, w1s);
        assert_int_equal(r->reset & ~(r->read_mask | r->write_mask), 0);
    }
    assert_int_equal(next_field, nvdla_field_count);
    assert_int_equal(next_enum, nvdla_enum_count);
}

/* Curation rules (regdb/README.md): groups and kinds. */
static void test_groups_and_kinds(void **state)
{
    (void)state;
    for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) {
        const struct nvdla_unit_desc *ud = &nvdla_units[u];
        uint32_t op_en = 0;
        int has_pointer = 0;
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
            if (strcmp(r->name, "S_POINTER_0") == 0) {
                has_pointer = 1;
                assert_int_equal(r->kind, NVDLA_KIND_POINTER);
            }
            if (strcmp(r->name, "D_OP_ENABLE_0") == 0) {
                op_en = r->addr;
                assert_int_equal(r->kind, NVDLA_KIND_OP_ENABLE);
            }
            if (strcmp(r->name, "S_STATUS_0") == 0) {
                assert_int_equal(r->kind, NVDLA_KIND_STATUS);
            }
            if (u == NVDLA_UNIT_CFGROM) {
                assert_int_equal(r->kind, NVDLA_KIND_ROM);
                assert_int_equal(r->write_mask, 0);
            }
        }
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[ud->first_reg + i];
            int dual = has_pointer && op_en != 0 && r->addr >= op_en;
            assert_int_equal(r->group, dual ? NVDLA_REG_DUAL : NVDLA_REG_SINGLE);
            if (strncmp(r->name, "S_", 2) == 0) {
                assert_int_equal(r->group, NVDLA_REG_SINGLE);
            }
        }
    }
}

/* ---- lookups ------------------------------------------------------------- */

static void test_round_trip(void **state)
{
    (void)state;
    char buf[128];
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        const struct nvdla_reg_desc *r = &nvdla_regs[i];
        const struct nvdla_unit_desc *ud = &nvdla_units[r->unit];
        assert_ptr_equal(nvdla_reg_by_addr(r->addr), r);
        assert_int_equal(nvdla_reg_index(r), i);
        snprintf(buf, sizeof buf, "NVDLA_%s.%s", ud->name, r->name);
        assert_ptr_equal(nvdla_reg_by_name(buf), r);
        snprintf(buf, sizeof buf, "%s.%s", ud->name, r->name);
        assert_ptr_equal(nvdla_reg_by_name(buf), r);
        snprintf(buf, sizeof buf, "NVDLA_%s_%s", ud->name, r->name);
        assert_ptr_equal(nvdla_reg_by_name(buf), r);
        if (ud->alias != NULL) {
            snprintf(buf, sizeof buf, "NVDLA_%s.%s", ud->alias, r->name);
            assert_ptr_equal(nvdla_reg_by_name(buf), r);
            snprintf(buf, sizeof buf, "NVDLA_%s_%s", ud->alias, r->name);
            assert_ptr_equal(nvdla_reg_by_name(buf), r);
        }
        for (unsigned k = 0; k < r->n_fields; k++) {
            const struct nvdla_field_desc *f = field_of(r, k);
            assert_ptr_equal(nvdla_field_by_name(r, f->name), f);
        }
        /* Holes between registers resolve to nothing. */
        if (i + 1 < nvdla_reg_count && nvdla_regs[i + 1].addr != r->addr + 4u) {
            assert_null(nvdla_reg_by_addr(r->addr + 4u));
        }
        assert_null(nvdla_reg_by_addr(r->addr + 1u));
    }
}

/* Every word of every database's address map resolves to the register at
 * exactly that address or to nothing (regdb_reg_by_addr's word table, made
 * by gen_regs.py, against the registers themselves), and every register is
 * found once. */
static void test_every_word(void **state)
{
    (void)state;
    for (size_t d = 0; d < regdb_all_count; d++) {
        const struct regdb *db = regdb_all[d];
        unsigned found = 0;
        for (uint32_t a = 0; a < (db->n_windows + 1) * 0x1000u; a += 2) {
            const struct nvdla_reg_desc *r = regdb_reg_by_addr(db, a);
            if (r) {
                assert_int_equal(r->addr, a);
                found++;
            }
        }
        assert_int_equal(found, db->n_regs);
    }
}

static void test_lookup_misses(void **state)
{
    (void)state;
    const struct nvdla_reg_desc *r = nvdla_reg_by_name("NVDLA_PDP.D_OP_ENABLE_0");
    assert_non_null(r);
    assert_null(nvdla_reg_by_name(NULL));
    assert_null(nvdla_reg_by_name(""));
    assert_null(nvdla_reg_by_name("NVDLA_PDP.D_OP_ENABLE"));   /* no _0 */
    assert_null(nvdla_reg_by_name("NVDLA_PDP.D_OP_ENABLE_0 ")); /* trailing */
    assert_null(nvdla_reg_by_name("nvdla_pdp.d_op_enable_0"));  /* case */
    assert_null(nvdla_reg_by_name("NVDLA_PDPX.D_OP_ENABLE_0"));
    assert_null(nvdla_reg_by_name("NVDLA_.D_OP_ENABLE_0"));
    assert_null(nvdla_reg_by_name("NVDLA_PDP_"));
    assert_null(nvdla_reg_by_name("NVDLA_PDP.S_LUT_ACCESS_DATA_0")); /* SDP/CDP only */
    assert_null(nvdla_reg_by_addr(0x12000u));
    assert_null(nvdla_reg_by_addr(0xFFFFFFFFu));
    assert_null(nvdla_reg_by_addr(0xBFFCu));
    assert_null(nvdla_field_by_name(r, "OP_EN "));
    assert_null(nvdla_field_by_name(r, "op_en"));
    assert_null(nvdla_field_by_name(NULL, "OP_EN"));
    assert_null(nvdla_field_by_name(r, NULL));
    assert_int_equal(nvdla_unit_by_name("PDP", 3), NVDLA_UNIT_PDP);
    assert_int_equal(nvdla_unit_by_name("PDP_RDMA", 8), NVDLA_UNIT_PDP_RDMA);
    assert_int_equal(nvdla_unit_by_name("PDP_RDMA", 3), NVDLA_UNIT_PDP); /* length counts */
    assert_int_equal(nvdla_unit_by_name("RBK", 3), NVDLA_UNIT_RUBIK);
    assert_int_equal(nvdla_unit_by_name("RUBIK", 5), NVDLA_UNIT_RUBIK);
    assert_int_equal(nvdla_unit_by_name("SDP_", 4), -1);
    assert_int_equal(nvdla_unit_by_name("pdp", 3), -1);
    assert_int_equal(nvdla_unit_by_name(NULL, 0), -1);
    /* C spelling where one unit name prefixes another. */
    r = nvdla_reg_by_name("NVDLA_SDP_RDMA_D_OP_ENABLE_0");
    assert_non_null(r);
    assert_int_equal(r->unit, NVDLA_UNIT_SDP_RDMA);
    r = nvdla_reg_by_name("NVDLA_SDP_D_OP_ENABLE_0");
    assert_non_null(r);
    assert_int_equal(r->unit, NVDLA_UNIT_SDP);
    r = nvdla_reg_by_name("NVDLA_CFGROM_CFGROM_HW_VERSION_0");
    assert_non_null(r);
    assert_int_equal(r->addr, 0);
}

/* ---- known facts (NVDLA nv_small RDL / RTL) ------------------------------- */

static const struct nvdla_reg_desc *reg(const char *name)
{
    const struct nvdla_reg_desc *r = nvdla_reg_by_name(name);
    if (r == NULL) {
        fail_msg("register %s not found", name);
    }
    return r;
}

static const struct nvdla_field_desc *field(const char *reg_name, const char *name)
{
    const struct nvdla_field_desc *f = nvdla_field_by_name(reg(reg_name), name);
    if (f == NULL) {
        fail_msg("field %s.%s not found", reg_name, name);
    }
    return f;
}

static void test_known_addresses(void **state)
{
    (void)state;
    /* ref: spec/manual/NVDLA_GLB.rdl S_INTR_STATUS @0xc, unit @0x1000 */
    assert_int_equal(NVDLA_GLB_S_INTR_STATUS_0, 0x100cu);
    assert_int_equal(reg("NVDLA_GLB.S_INTR_STATUS_0")->addr, 0x100cu);
    /* ref: NVDLA_PDP.rdl D_OP_ENABLE @0x8, unit @0xb000; spec 001 PDP table */
    assert_int_equal(NVDLA_PDP_D_OP_ENABLE_0, 0xB008u);
    assert_int_equal(reg("NVDLA_PDP.D_OP_ENABLE_0")->addr, 0xB008u);
    assert_int_equal(NVDLA_SDP_D_OP_ENABLE_0, 0x9038u);
    assert_int_equal(NVDLA_CDP_S_LUT_ACCESS_DATA_0, 0xD00Cu);
    assert_int_equal(NVDLA_RBK_D_OP_ENABLE_0, 0x11008u);
    assert_int_equal(NVDLA_BDMA_CFG_OP_0, 0x10030u);
    assert_int_equal(NVDLA_MCIF_CFG_RD_WEIGHT_0_0, 0x2000u);
    /* CFGROM registers are allocated back to back (no @offset in the RDL). */
    assert_int_equal(NVDLA_CFGROM_CFGROM_GLB_DESC_0, 0x4u);
    assert_int_equal(NVDLA_CFGROM_CFGROM_SDP_DESC_0, 0x124u);
    assert_int_equal(nvdla_unit_by_name("GLB", 3), (int)(NVDLA_GLB_S_INTR_STATUS_0 >> 12));
}

static void test_known_fields(void **state)
{
    (void)state;
    /* ref: NVDLA_PDP.rdl D_POOLING_KERNEL_CFG KERNEL_WIDTH[3:0] */
    assert_int_equal(NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH__SHIFT, 0);
    assert_int_equal(NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH__MASK, 0xFu);
    assert_int_equal(NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH__WIDTH, 4);
    assert_int_equal(NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_HEIGHT__SHIFT, 8);
    assert_int_equal(NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_HEIGHT(0x1Fu), 0xF00u);
    assert_int_equal(NVDLA_PDP_D_OP_ENABLE_0_OP_EN_ENABLE, 1);
    assert_int_equal(NVDLA_PDP_D_OP_ENABLE_0_OP_EN(NVDLA_PDP_D_OP_ENABLE_0_OP_EN_ENABLE), 1u);
    /* S_POINTER: PRODUCER bit 0 RW, CONSUMER bit 16 RO (hardware-owned). */
    assert_int_equal(NVDLA_CDP_S_POINTER_0_CONSUMER__SHIFT, 16);
    assert_int_equal(field("NVDLA_CDP.S_POINTER_0", "CONSUMER")->access, NVDLA_ACC_RO);
    assert_int_equal(field("NVDLA_CDP.S_POINTER_0", "PRODUCER")->access, NVDLA_ACC_RW);
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        if (strcmp(nvdla_regs[i].name, "S_POINTER_0") == 0) {
            assert_int_equal(nvdla_regs[i].write_mask, 0x1u);
            assert_int_equal(nvdla_regs[i].read_mask, 0x10001u);
        }
        if (strcmp(nvdla_regs[i].name, "S_STATUS_0") == 0) {
            assert_int_equal(nvdla_regs[i].write_mask, 0);
            assert_int_equal(nvdla_regs[i].read_mask, 0x30003u);
        }
    }
    /* Perf counters and hardware-written statistics are read-only. */
    assert_int_equal(field("NVDLA_PDP.D_PERF_WRITE_STALL_0", "PERF_WRITE_STALL")->access,
                     NVDLA_ACC_RO);
    assert_int_equal(field("NVDLA_SDP.D_STATUS_NAN_INPUT_NUM_0", "STATUS_NAN_INPUT_NUM")->access,
                     NVDLA_ACC_RO);
    assert_int_equal(field("NVDLA_CACC.D_OUT_SATURATION_0", "SAT_COUNT")->access, NVDLA_ACC_RO);
    assert_int_equal(field("NVDLA_CDP.D_OUT_SATURATION_0", "OUT_SATURATION")->access,
                     NVDLA_ACC_RO);
    assert_int_equal(reg("NVDLA_CDMA.D_PERF_DAT_READ_STALL_0")->write_mask, 0);
    assert_int_equal(field("NVDLA_PDP.D_PERF_ENABLE_0", "DMA_EN")->access, NVDLA_ACC_RW);
    /* Enum lookup through the field's slice. */
    const struct nvdla_field_desc *f = field("NVDLA_PDP.D_OPERATION_MODE_CFG_0", "POOLING_METHOD");
    int found = 0;
    for (unsigned e = 0; e < f->n_enums; e++) {
        const struct nvdla_enum_desc *en = &nvdla_enums[f->first_enum + e];
        if (strcmp(en->name, "POOLING_METHOD_MAX") == 0) {
            assert_int_equal(en->value, NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD_POOLING_METHOD_MAX);
            found = 1;
        }
    }
    assert_true(found);
}

static void test_known_kinds(void **state)
{
    (void)state;
    assert_int_equal(reg("NVDLA_CDP.S_LUT_ACCESS_DATA_0")->kind, NVDLA_KIND_LUT_ACCESS_DATA);
    assert_int_equal(reg("NVDLA_SDP.S_LUT_ACCESS_DATA_0")->kind, NVDLA_KIND_LUT_ACCESS_DATA);
    assert_int_equal(reg("NVDLA_CDP.S_LUT_ACCESS_CFG_0")->kind, NVDLA_KIND_LUT_ACCESS_CFG);
    assert_int_equal(reg("NVDLA_SDP.S_LUT_ACCESS_CFG_0")->kind, NVDLA_KIND_LUT_ACCESS_CFG);
    assert_int_equal(reg("NVDLA_SDP.S_LUT_ACCESS_CFG_0")->group, NVDLA_REG_SINGLE);
    assert_int_equal(reg("NVDLA_GLB.S_INTR_MASK_0")->kind, NVDLA_KIND_INTR_MASK);
    assert_int_equal(reg("NVDLA_GLB.S_INTR_SET_0")->kind, NVDLA_KIND_INTR_SET);
    assert_int_equal(reg("NVDLA_GLB.S_INTR_STATUS_0")->kind, NVDLA_KIND_INTR_STATUS);
    assert_int_equal(reg("NVDLA_CFGROM.CFGROM_HW_VERSION_0")->kind, NVDLA_KIND_ROM);
    assert_int_equal(reg("NVDLA_PDP.D_DATA_CUBE_IN_WIDTH_0")->group, NVDLA_REG_DUAL);
    assert_int_equal(reg("NVDLA_PDP.D_DATA_CUBE_IN_WIDTH_0")->kind, NVDLA_KIND_PLAIN);
    assert_int_equal(reg("NVDLA_CDMA.S_ARBITER_0")->group, NVDLA_REG_SINGLE);
    /* BDMA has its own queue/launch mechanism and no ping-pong group. */
    assert_int_equal(reg("NVDLA_BDMA.CFG_OP_0")->group, NVDLA_REG_SINGLE);
    assert_int_equal(reg("NVDLA_BDMA.CFG_SRC_ADDR_LOW_0")->group, NVDLA_REG_SINGLE);
}

/* ref: vmod/nvdla/glb/NV_NVDLA_GLB_ic.v: status set by done/S_INTR_SET,
 * cleared by writing 1 to S_INTR_STATUS; S_INTR_SET reads back 0. */
static void test_glb_interrupts(void **state)
{
    (void)state;
    const uint32_t intr_bits = 0x003F03FFu; /* [21:16] and [9:0] */
    const struct nvdla_reg_desc *st = reg("NVDLA_GLB.S_INTR_STATUS_0");
    const struct nvdla_reg_desc *set = reg("NVDLA_GLB.S_INTR_SET_0");
    const struct nvdla_reg_desc *mask = reg("NVDLA_GLB.S_INTR_MASK_0");
    assert_int_equal(st->n_fields, 16);
    for (unsigned k = 0; k < st->n_fields; k++) {
        assert_int_equal(field_of(st, k)->access, NVDLA_ACC_W1C);
    }
    assert_int_equal(st->w1c_mask, intr_bits);
    assert_int_equal(st->read_mask, intr_bits);
    assert_int_equal(st->write_mask, 0);
    assert_int_equal(set->w1s_mask, intr_bits);
    assert_int_equal(set->read_mask, 0);
    assert_int_equal(mask->write_mask, intr_bits);
    assert_int_equal(mask->read_mask, intr_bits);
    assert_int_equal(NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS1__MASK, 1u << 5);
    assert_int_equal(NVDLA_GLB_S_INTR_STATUS_0_CACC_DONE_STATUS1__SHIFT, 21);
    /* ref: NVDLA_GLB.rdl S_NVDLA_HW_VERSION reset MAJOR=0x31 MINOR=0x3030 */
    assert_int_equal(reg("NVDLA_GLB.S_NVDLA_HW_VERSION_0")->reset, 0x303031u);
}

/* Device facts (regdb/README.md "Device facts") against the public RK3588
 * constants (include/dlasim/rk3588.h, from the TRM and Mesa) and NVDLA's GLB
 * field names: the database is the one source the simulator and the
 * regcmd emitter read, so its values must be these. */
static void test_device_facts(void **state)
{
    (void)state;
    static const struct {
        unsigned unit;
        uint32_t op_en;
        uint16_t target;
        uint32_t done;
    } rk[] = {
        {RK3588_UNIT_CNA, DLASIM_RK_EN_CNA, 0x0200, 0x15},
        {RK3588_UNIT_CORE, DLASIM_RK_EN_CORE, 0x0800, 0x40},
        {RK3588_UNIT_DPU, DLASIM_RK_EN_DPU, 0x1000, DLASIM_RK_IRQ_DPU & 0x155},
        {RK3588_UNIT_DPU_RDMA, DLASIM_RK_EN_DPU_RDMA, 0x2000, 0},
        {RK3588_UNIT_PPU, DLASIM_RK_EN_PPU, 0x4000, DLASIM_RK_IRQ_PPU & 0x555},
        {RK3588_UNIT_PPU_RDMA, DLASIM_RK_EN_PPU_RDMA, 0x8000, 0},
    };
    for (size_t i = 0; i < sizeof(rk) / sizeof(rk[0]); i++) {
        const struct nvdla_unit_desc *u = &rk3588_units[rk[i].unit];
        assert_int_equal(u->op_en_bit, rk[i].op_en);
        assert_int_equal(u->regcmd_target, rk[i].target);
        assert_int_equal(u->done_bits[0], rk[i].done);
        assert_int_equal(u->done_bits[1], rk[i].done << 1); /* CNA_FEATURE_1 ... DPU_1 */
        assert_int_equal(regdb_unit_by_regcmd(&rk3588_db, rk[i].target), (int)rk[i].unit);
    }
    assert_int_equal(regdb_unit_by_regcmd(&rk3588_db, 0x0100), RK3588_UNIT_PC);
    assert_int_equal(regdb_unit_by_regcmd(&rk3588_db, 0x0400), -1); /* no block */
    assert_int_equal(rk3588_units[RK3588_UNIT_GLOBAL].op_en_bit, 0);
    assert_int_equal(rk3588_db.regcmd_op_en, 0x0081);
    assert_int_equal(rk3588_db.regcmd_marker, 0x0041);
    assert_int_equal(rk3588_db.intr_status, RK3588_PC_INTERRUPT_STATUS);
    assert_int_equal(rk3588_db.intr_clear, RK3588_PC_INTERRUPT_CLEAR);
    assert_true(rk3588_db.has_intr_clear && rk3588_db.intr_mask_enables);
    assert_int_equal(regdb_intr_bit(&rk3588_db, "DPU_1"), 1u << 9);
    assert_int_equal(regdb_intr_bit(&rk3588_db, "dpu_0"), 1u << 8);
    /* NVDLA: done bits are the GLB S_INTR_STATUS fields of each unit */
    assert_int_equal(nvdla_units[NVDLA_UNIT_CDMA].done_bits[0],
                     NVDLA_GLB_S_INTR_STATUS_0_CDMA_DAT_DONE_STATUS0__MASK |
                         NVDLA_GLB_S_INTR_STATUS_0_CDMA_WT_DONE_STATUS0__MASK);
    assert_int_equal(nvdla_units[NVDLA_UNIT_CDMA].done_bits[1],
                     NVDLA_GLB_S_INTR_STATUS_0_CDMA_DAT_DONE_STATUS1__MASK |
                         NVDLA_GLB_S_INTR_STATUS_0_CDMA_WT_DONE_STATUS1__MASK);
    assert_int_equal(nvdla_units[NVDLA_UNIT_RUBIK].done_bits[0],
                     NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS0__MASK);
    assert_int_equal(nvdla_units[NVDLA_UNIT_RUBIK].done_bits[1],
                     NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS1__MASK);
    assert_int_equal(nvdla_units[NVDLA_UNIT_CSC].done_bits[0] | nvdla_units[NVDLA_UNIT_CSC].done_bits[1], 0);
    assert_int_equal(nvdla_db.intr_status, NVDLA_GLB_S_INTR_STATUS_0);
    assert_int_equal(nvdla_db.intr_mask, NVDLA_GLB_S_INTR_MASK_0);
    assert_false(nvdla_db.has_intr_clear || nvdla_db.intr_mask_enables);
    assert_int_equal(regdb_intr_bit(&nvdla_db, "CDMA_WT_1"),
                     NVDLA_GLB_S_INTR_STATUS_0_CDMA_WT_DONE_STATUS1__MASK);
    assert_int_equal(regdb_intr_bit(&nvdla_db, "FOO_0"), 0);
    assert_int_equal(regdb_intr_bit(&nvdla_db, "SDP"), 0);
    /* trace prefixes pick the database */
    assert_ptr_equal(regdb_by_trace_name("NVDLA_PDP.D_OP_ENABLE_0"), &nvdla_db);
    assert_ptr_equal(regdb_by_trace_name("rknn_ppu_s_pointer"), &rk3588_db);
    assert_null(regdb_by_trace_name("PDP.D_OP_ENABLE_0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_regs_sorted_and_inside_windows),
        cmocka_unit_test(test_masks_match_fields),
        cmocka_unit_test(test_groups_and_kinds),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_lookup_misses),
        cmocka_unit_test(test_every_word),
        cmocka_unit_test(test_known_addresses),
        cmocka_unit_test(test_known_fields),
        cmocka_unit_test(test_known_kinds),
        cmocka_unit_test(test_glb_interrupts),
        cmocka_unit_test(test_device_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
