/*
 * Register-level behaviour of the device through the CSB, qtest style:
 * reset values and access types of every register (from the register
 * database), the ping-pong rules of spec 001, GLB interrupt set/mask/clear
 * and the IRQ line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "regs/regdb.h"

#define STATUS_IDLE 0u
#define STATUS_RUNNING 1u
#define STATUS_PENDING 2u

static struct dlasim_dev *make_dev(const char *config)
{
    return tdev_new(config, NULL, 0, 0);
}

static int special(const struct nvdla_reg_desc *r)
{
    return r->kind != NVDLA_KIND_PLAIN && r->kind != NVDLA_KIND_OP_ENABLE &&
           r->kind != NVDLA_KIND_INTR_MASK;
}

/* After reset every plain register reads its database reset value (readable
 * bits only); the derived ones read their documented idle state. */
static void test_reset_values(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_large"); /* every unit present */
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        const struct nvdla_reg_desc *r = &nvdla_regs[i];
        uint32_t v = rd(dev, r->addr);
        if (r->kind == NVDLA_KIND_ROM || r->kind == NVDLA_KIND_LUT_ACCESS_DATA) {
            continue; /* ROM: per configuration, see test_cfgrom */
        }
        uint32_t want = special(r) ? 0u : (r->reset & r->read_mask);
        if (r->addr == NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0) {
            want = NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0_FLUSH_DONE__MASK; /* CBUF flushed at reset */
        }
        if (v != want) {
            fail_msg("%s.%s reads 0x%x after reset, database says 0x%x",
                     nvdla_units[r->unit].name, r->name, v, want);
        }
    }
    dlasim_destroy(dev);
}

/* Writing all ones then all zeros shows each field's access type: RW bits
 * follow, RO bits keep their value, WO bits read 0, W1C bits clear. */
static void test_access_types(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_large");
    for (unsigned i = 0; i < nvdla_reg_count; i++) {
        const struct nvdla_reg_desc *r = &nvdla_regs[i];
        if (special(r) || r->kind == NVDLA_KIND_OP_ENABLE || r->unit == NVDLA_UNIT_BDMA ||
            r->addr == NVDLA_CDMA_S_CBUF_FLUSH_STATUS_0) {
            continue; /* derived, or a trigger tested below */
        }
        dlasim_reset(dev);
        uint32_t keep = r->reset & ~r->write_mask & ~r->w1c_mask;
        wr(dev, r->addr, 0xffffffffu);
        uint32_t ones = rd(dev, r->addr);
        wr(dev, r->addr, 0);
        uint32_t zeros = rd(dev, r->addr);
        uint32_t want_ones = (keep | r->write_mask) & r->read_mask;
        uint32_t want_zeros = keep & r->read_mask;
        if (ones != want_ones || zeros != want_zeros) {
            fail_msg("%s.%s: wrote ~0 read 0x%x (want 0x%x), wrote 0 read 0x%x (want 0x%x)",
                     nvdla_units[r->unit].name, r->name, ones, want_ones, zeros, want_zeros);
        }
    }
    dlasim_destroy(dev);
}

/* Units the configuration lacks read as zero and ignore writes. */
static void test_absent_units_read_zero(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_small"); /* no BDMA, RUBIK, CVIF */
    wr(dev, NVDLA_RBK_D_DAIN_ADDR_LOW_0, 0x1234);
    assert_int_equal(rd(dev, NVDLA_RBK_D_DAIN_ADDR_LOW_0), 0);
    assert_int_equal(rd(dev, NVDLA_RBK_S_POINTER_0), 0);
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0, 0x1000);
    assert_int_equal(rd(dev, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0), 0);
    dlasim_destroy(dev);
}

/* PRODUCER selects the group the CSB reads and writes (spec 001). */
static void test_producer_selects_group(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_small");
    const uint32_t reg = NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0;
    wr(dev, reg, 5);
    wr(dev, NVDLA_PDP_S_POINTER_0, 1);
    assert_int_equal(rd(dev, NVDLA_PDP_S_POINTER_0), 1); /* PRODUCER 1, CONSUMER 0 */
    assert_int_equal(rd(dev, reg), 0);
    wr(dev, reg, 7);
    assert_int_equal(rd(dev, reg), 7);
    wr(dev, NVDLA_PDP_S_POINTER_0, 0);
    assert_int_equal(rd(dev, reg), 5);
    /* single registers are shared by both groups */
    wr(dev, NVDLA_CDP_S_LUT_LE_START_LOW_0, 0x55);
    wr(dev, NVDLA_CDP_S_POINTER_0, 1);
    assert_int_equal(rd(dev, NVDLA_CDP_S_LUT_LE_START_LOW_0), 0x55);
    dlasim_destroy(dev);
}

/* OP_EN set by software locks its group; S_STATUS shows RUNNING for the
 * consumer's group and PENDING for the other. */
static void test_op_en_locks_group_and_status(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_small");
    const uint32_t reg = NVDLA_CDP_D_LRN_CFG_0;
    wr(dev, reg, 1);
    wr(dev, NVDLA_CDP_D_OP_ENABLE_0, 1);
    assert_int_equal(rd(dev, NVDLA_CDP_D_OP_ENABLE_0), 1);
    assert_int_equal(rd(dev, NVDLA_CDP_S_STATUS_0), STATUS_RUNNING);
    wr(dev, reg, 3); /* dropped: group 0 is enabled */
    assert_int_equal(rd(dev, reg), 1);
    wr(dev, NVDLA_CDP_D_OP_ENABLE_0, 0); /* software cannot clear OP_EN */
    assert_int_equal(rd(dev, NVDLA_CDP_D_OP_ENABLE_0), 1);
    wr(dev, NVDLA_CDP_S_POINTER_0, 1);
    assert_int_equal(rd(dev, NVDLA_CDP_D_OP_ENABLE_0), 0);
    wr(dev, reg, 2); /* group 1 is free */
    assert_int_equal(rd(dev, reg), 2);
    wr(dev, NVDLA_CDP_D_OP_ENABLE_0, 1);
    assert_int_equal(rd(dev, NVDLA_CDP_S_STATUS_0), STATUS_RUNNING | (STATUS_PENDING << 16));
    char busy[256];
    assert_true(dlasim_busy(dev, busy, sizeof(busy)));
    assert_non_null(strstr(busy, "CDP group 0"));
    dlasim_destroy(dev);
}

static int irq_changes;
static int irq_last;
static void on_irq(void *opaque, int level)
{
    (void)opaque;
    irq_changes++;
    irq_last = level;
}

/* A completed layer clears OP_EN, advances CONSUMER, raises the done bit of
 * the group it ran in, and the IRQ line follows status & ~mask.  RUBIK on
 * nv_large serves as the unit: each group holds a small contract layer (one
 * atom, DBB to DBB) that really runs. */
static void program_small_rubik(struct dlasim_dev *dev, uint32_t dst)
{
    wr(dev, NVDLA_RBK_D_MISC_CFG_0, 0); /* CONTRACT, INT8 */
    wr(dev, NVDLA_RBK_D_DAIN_RAM_TYPE_0, 1); /* MCIF */
    wr(dev, NVDLA_RBK_D_DAOUT_RAM_TYPE_0, 1);
    wr(dev, NVDLA_RBK_D_DAIN_ADDR_LOW_0, 0x80000000u);
    wr(dev, NVDLA_RBK_D_DAOUT_ADDR_LOW_0, dst);
}

static void test_completion_flips_consumer_and_raises_irq(void **state)
{
    (void)state;
    struct dlasim_options o = {0};
    o.config = "nv_large";
    o.irq_cb = on_irq;
    irq_changes = 0;
    struct dlasim_dev *dev = tdev_create(&o);
    uint8_t atom[32], got[32];
    for (unsigned i = 0; i < sizeof(atom); i++) {
        atom[i] = (uint8_t)(i * 7u + 1u);
    }
    mem_wr(dev, 0x80000000u, atom, sizeof(atom));
    program_small_rubik(dev, 0x80001000u);
    wr(dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_RBK_S_POINTER_0, 1);
    program_small_rubik(dev, 0x80002000u);
    wr(dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
    assert_int_equal(rd(dev, NVDLA_RBK_S_STATUS_0), STATUS_RUNNING | (STATUS_PENDING << 16));
    assert_int_equal(dlasim_step(dev), 1); /* group 0 ran */
    mem_rd(dev, 0x80001000u, got, sizeof(got));
    assert_memory_equal(got, atom, sizeof(atom));
    assert_int_equal(rd(dev, NVDLA_RBK_S_POINTER_0), 1 | (1u << 16));
    assert_int_equal(rd(dev, NVDLA_RBK_S_STATUS_0), STATUS_RUNNING << 16);
    uint32_t done0 = NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS0__MASK;
    uint32_t done1 = NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS1__MASK;
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), done0);
    assert_int_equal(dlasim_irq_level(dev), 1);
    assert_int_equal(irq_last, 1);
    assert_int_equal(dlasim_step(dev), 1); /* group 1 ran */
    mem_rd(dev, 0x80002000u, got, sizeof(got));
    assert_memory_equal(got, atom, sizeof(atom));
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), done0 | done1);
    assert_int_equal(rd(dev, NVDLA_RBK_S_STATUS_0), STATUS_IDLE);
    assert_int_equal(rd(dev, NVDLA_RBK_S_POINTER_0), 1); /* CONSUMER back to 0 */
    assert_int_equal(dlasim_step(dev), 0);                /* nothing left */
    assert_false(dlasim_busy(dev, NULL, 0));
    wr(dev, NVDLA_GLB_S_INTR_STATUS_0, done0 | done1); /* W1C */
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), 0);
    assert_int_equal(dlasim_irq_level(dev), 0);
    assert_int_equal(irq_changes, 2);
    dlasim_destroy(dev);
}

/* S_INTR_SET sets status bits (and reads 0), S_INTR_MASK gates the line,
 * S_INTR_STATUS clears on writing 1. */
static void test_interrupt_set_mask_clear(void **state)
{
    (void)state;
    struct dlasim_options o = {0};
    o.irq_cb = on_irq;
    irq_changes = 0;
    struct dlasim_dev *dev = tdev_create(&o);
    uint32_t sdp0 = NVDLA_GLB_S_INTR_STATUS_0_SDP_DONE_STATUS0__MASK;
    uint32_t cacc1 = NVDLA_GLB_S_INTR_STATUS_0_CACC_DONE_STATUS1__MASK;
    wr(dev, NVDLA_GLB_S_INTR_MASK_0, NVDLA_GLB_S_INTR_MASK_0_SDP_DONE_MASK0__MASK);
    wr(dev, NVDLA_GLB_S_INTR_SET_0, sdp0);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_SET_0), 0);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), sdp0);
    assert_int_equal(dlasim_irq_level(dev), 0); /* masked */
    wr(dev, NVDLA_GLB_S_INTR_SET_0, cacc1);
    assert_int_equal(dlasim_irq_level(dev), 1);
    wr(dev, NVDLA_GLB_S_INTR_STATUS_0, cacc1);
    assert_int_equal(dlasim_irq_level(dev), 0);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), sdp0);
    wr(dev, NVDLA_GLB_S_INTR_MASK_0, 0); /* unmasking raises the line */
    assert_int_equal(dlasim_irq_level(dev), 1);
    wr(dev, NVDLA_GLB_S_INTR_STATUS_0, 0xffffffffu);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), 0);
    assert_int_equal(dlasim_irq_level(dev), 0);
    assert_int_equal(irq_changes, 4);
    dlasim_reset(dev);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_MASK_0), 0);
    dlasim_destroy(dev);
}

/* The LUT port: CFG picks table, entry and direction; each DATA access
 * moves one entry and advances; reading back returns what was written. */
static void test_lut_port(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_small");
    uint32_t write_lo = NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ACCESS_TYPE(1) |
                        NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID(1) |
                        NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ADDR(255);
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_CFG_0, write_lo);
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0, 0x1111);
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0, 0x2222);
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0, 0x3333); /* stays on the last entry */
    assert_int_equal(rd(dev, NVDLA_CDP_S_LUT_ACCESS_CFG_0) &
                         NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ADDR__MASK, 256);
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_CFG_0, NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_TABLE_ID(1) |
                                              NVDLA_CDP_S_LUT_ACCESS_CFG_0_LUT_ADDR(255));
    assert_int_equal(rd(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0), 0x1111);
    assert_int_equal(rd(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0), 0x3333);
    dlasim_destroy(dev);
}

static void test_unaligned_and_unmapped(void **state)
{
    (void)state;
    struct dlasim_dev *dev = make_dev("nv_small");
    uint32_t v;
    assert_int_equal(dlasim_csb_write(dev, NVDLA_PDP_D_OP_ENABLE_0 + 1, 1), DLASIM_ERR_INVAL);
    assert_non_null(strstr(dlasim_last_error(dev), "unaligned"));
    assert_int_equal(dlasim_csb_read(dev, 0x3fffc, &v), 0);
    assert_int_equal(v, 0);
    dlasim_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reset_values),
        cmocka_unit_test(test_access_types),
        cmocka_unit_test(test_absent_units_read_zero),
        cmocka_unit_test(test_producer_selects_group),
        cmocka_unit_test(test_op_en_locks_group_and_status),
        cmocka_unit_test(test_completion_flips_consumer_and_raises_irq),
        cmocka_unit_test(test_interrupt_set_mask_clear),
        cmocka_unit_test(test_lut_port),
        cmocka_unit_test(test_unaligned_and_unmapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
