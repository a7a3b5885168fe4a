/*
 * dla_regfile_unit_values (src/sim/core/regfile.c): a unit's registers of a
 * group copied as one array, which the engines' decodes read instead of one
 * dla_regfile_get a register.  The reference is dla_regfile_get at every
 * word of the unit's window (D_OP_ENABLE: the value array's word, the
 * register itself being kept apart in rf.op_en), for every unit of both register databases, both
 * groups and every array length up to the window's last register (so the
 * two-block copy, its single/dual boundary and the word-by-word fallback,
 * ROM and gaps included, are all checked).  Every register holds a value
 * that differs by group and by register, so a value from the wrong group or
 * the wrong register shows.
 * dla_regfile_unit_store (the hardware's stores of a run of registers, as
 * SDP sets its status and statistics) against dla_regfile_hw_set a word,
 * the whole register file compared after each run.
 * The short write paths (PLAIN, S_POINTER, D_OP_ENABLE) against the slow
 * path, write by write (check_write_paths).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "sim/core/regfile.h"

static const struct dla_pointer_ops no_hooks = {0};

static uint32_t value_of(unsigned index, unsigned group)
{
    return 0x9e3779b9u * (index + 1u) ^ (group ? 0xa5a50000u : 0x00005a5au);
}

/* Words from the unit's base to its last register. */
static unsigned window_words(const struct regdb *db, unsigned u)
{
    const struct nvdla_unit_desc *ud = &db->units[u];
    const struct nvdla_reg_desc *last = &db->regs[ud->first_reg + ud->n_regs - 1u];
    return (last->addr - ud->base) / 4u + 1u;
}

static void check_db(const struct regdb *db)
{
    struct dla_regfile rf;
    assert_int_equal(dla_regfile_init(&rf, db, &no_hooks), 0);
    for (unsigned i = 0; i < db->n_regs; i++) {
        rf.val[0][i] = value_of(i, 0);
        rf.val[1][i] = value_of(i, 1);
    }
    unsigned copied = 0;
    for (unsigned u = 0; u < db->n_units; u++) {
        unsigned words = window_words(db, u);
        assert_true(words <= 1024u);
        copied += rf.unit[u].view_n;
        for (unsigned g = 0; g < 2; g++) {
            for (unsigned n = 0; n <= words; n++) {
                uint32_t out[1025];
                memset(out, 0xee, sizeof(out));
                dla_regfile_unit_values(&rf, u, g, out, n);
                for (unsigned k = 0; k < n; k++) {
                    const uint32_t addr = db->units[u].base + 4u * k;
                    const uint32_t e = dla_regfile_entry(&rf, addr);
                    /* D_OP_ENABLE: the value array's word (the host's state is rf.op_en) */
                    uint32_t want = e != DLA_SLOT_NONE && (e & DLA_SLOT_OP_ENABLE)
                                        ? rf.val[(e & DLA_SLOT_DUAL) ? g : 0u][e & DLA_SLOT_INDEX]
                                        : dla_regfile_get(&rf, addr, g);
                    if (out[k] != want) {
                        fail_msg("%s unit %s group %u n %u word %u: 0x%08x, expected 0x%08x",
                                 db->name, db->units[u].name, g, n, k, out[k], want);
                    }
                }
                assert_int_equal(out[n], 0xeeeeeeeeu); /* nothing written beyond n */
            }
        }
    }
    assert_true(copied > 0); /* the two-block copy is used, not only the fallback */
    dla_regfile_free(&rf);
}

static void test_nvdla(void **state)
{
    (void)state;
    check_db(&nvdla_db);
}

static void test_rk3588(void **state)
{
    (void)state;
    check_db(&rk3588_db);
}

/* The layout the two-block copy relies on, for the units the engines decode
 * this way (CDMA, CSC, SDP, SDP_RDMA): every register one a word, singles then duals. */
static void test_nvdla_engine_units_copied(void **state)
{
    (void)state;
    struct dla_regfile rf;
    assert_int_equal(dla_regfile_init(&rf, &nvdla_db, &no_hooks), 0);
    static const unsigned units[] = {NVDLA_UNIT_CDMA, NVDLA_UNIT_CSC, NVDLA_UNIT_SDP,
                                     NVDLA_UNIT_SDP_RDMA};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        assert_int_equal(rf.unit[units[i]].view_n, nvdla_units[units[i]].n_regs);
        assert_true(rf.unit[units[i]].view_dual_lo < rf.unit[units[i]].view_n);
    }
    dla_regfile_free(&rf);
}

/* Runs of up to 8 words from every word of every unit's window, both groups:
 * the same register file as one dla_regfile_hw_set a word. */
static void check_store_db(const struct regdb *db)
{
    struct dla_regfile a, b;
    assert_int_equal(dla_regfile_init(&a, db, &no_hooks), 0);
    assert_int_equal(dla_regfile_init(&b, db, &no_hooks), 0);
    const size_t bytes = db->n_regs * sizeof(uint32_t);
    for (unsigned u = 0; u < db->n_units; u++) {
        unsigned words = window_words(db, u);
        for (unsigned g = 0; g < 2; g++) {
            for (unsigned w = 0; w < words; w++) {
                for (unsigned n = 0; n <= 8u && w + n <= words; n++) {
                    uint32_t v[8];
                    for (unsigned k = 0; k < n; k++) {
                        v[k] = value_of(u * 4096u + w * 8u + k, g);
                    }
                    dla_regfile_unit_store(&a, u, g, w, v, n);
                    for (unsigned k = 0; k < n; k++) {
                        dla_regfile_hw_set(&b, db->units[u].base + 4u * (w + k), g, v[k]);
                    }
                    if (memcmp(a.val[0], b.val[0], bytes) || memcmp(a.val[1], b.val[1], bytes) ||
                        memcmp(a.op_en, b.op_en, sizeof(a.op_en))) {
                        fail_msg("%s unit %s group %u words [%u, %u): differs from hw_set",
                                 db->name, db->units[u].name, g, w, w + n);
                    }
                }
            }
        }
    }
    dla_regfile_free(&a);
    dla_regfile_free(&b);
}

static void test_store_nvdla(void **state)
{
    (void)state;
    check_store_db(&nvdla_db);
}

static void test_store_rk3588(void **state)
{
    (void)state;
    check_store_db(&rk3588_db);
}

/* Hooks for the write paths' test: PRODUCER from bit 0, CONSUMER flipped on
 * completion, each OP_EN set counted in the owner. */
static void test_pointer_write(struct dla_regfile *rf, struct dla_unit_state *us,
                               const struct nvdla_reg_desc *r, uint32_t v)
{
    DLA_UNIT_PTR(rf, us).producer = (uint8_t)(v & r->write_mask & 1u);
}

static void test_enabled(struct dla_regfile *rf, struct dla_unit_state *us)
{
    (void)us;
    (*(unsigned *)rf->owner)++;
}

static void test_completed(struct dla_regfile *rf, struct dla_unit_state *us)
{
    DLA_UNIT_PTR(rf, us).consumer ^= 1u;
}

static uint32_t next_random(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* The short paths a device takes without a log or timing model listening
 * (dla_regfile_write_plain, then dla_regfile_write_control for S_POINTER
 * and D_OP_ENABLE) against dla_regfile_write_slow alone: 200,000 writes of
 * random values to random registers of every kind (a unit now and then
 * absent, its layers completed now and then, writes to enabled groups
 * dropped), the effect, every value, PRODUCER/CONSUMER and the enabled
 * hook's count compared after each. */
static void check_write_paths(const struct regdb *db, int drop)
{
    const struct dla_pointer_ops hooks = { test_pointer_write, test_enabled, test_completed,
                                           (uint8_t)drop, NULL, NULL, NULL };
    struct dla_regfile a, b;
    unsigned enabled_a = 0, enabled_b = 0;
    assert_int_equal(dla_regfile_init(&a, db, &hooks), 0);
    assert_int_equal(dla_regfile_init(&b, db, &hooks), 0);
    a.owner = &enabled_a;
    b.owner = &enabled_b;
    const size_t bytes = db->n_regs * sizeof(uint32_t);
    uint32_t x = 0x12345678u;
    for (unsigned n = 0; n < 200000u; n++) {
        uint32_t r = next_random(&x);
        unsigned u = r % db->n_units;
        if ((r >> 8) % 64u == 0) { /* a layer of unit u completes */
            dla_regfile_complete(&a, u);
            dla_regfile_complete(&b, u);
        }
        if ((r >> 14) % 512u == 0) { /* the configuration lacks unit u, or has it again */
            a.unit[u].present = b.unit[u].present = (uint8_t)!a.unit[u].present;
        }
        const struct nvdla_reg_desc *reg = &db->regs[next_random(&x) % db->n_regs];
        if (reg->kind == NVDLA_KIND_LUT_ACCESS_CFG || reg->kind == NVDLA_KIND_LUT_ACCESS_DATA) {
            continue; /* the device's own kinds: no hook here */
        }
        uint32_t v = next_random(&x);
        if (reg->kind == NVDLA_KIND_OP_ENABLE || reg->kind == NVDLA_KIND_POINTER) {
            v &= 1u; /* as drivers write them, so that groups get enabled */
        }
        int ea = dla_regfile_write_plain(&a, reg->addr, v);
        if (ea == DLA_WRITE_NOT_PLAIN) {
            ea = dla_regfile_write_control(&a, dla_regfile_entry(&a, reg->addr), v);
        }
        if (ea == DLA_WRITE_NOT_PLAIN) {
            ea = (int)dla_regfile_write_slow(&a, reg->addr, v);
        }
        int eb = (int)dla_regfile_write_slow(&b, reg->addr, v);
        if (ea != eb || enabled_a != enabled_b || memcmp(a.val[0], b.val[0], bytes) ||
            memcmp(a.val[1], b.val[1], bytes) || memcmp(a.unit, b.unit, sizeof(a.unit))) {
            fail_msg("%s write %u: 0x%08x to %s: effect %d, the slow path's %d, or the state "
                     "differs", db->name, n, v, reg->name, ea, eb);
        }
    }
    assert_true(enabled_a > 100); /* groups were enabled, and writes to them dropped */
    dla_regfile_free(&a);
    dla_regfile_free(&b);
}

static void test_write_paths(void **state)
{
    (void)state;
    check_write_paths(&nvdla_db, 1);
    check_write_paths(&nvdla_db, 0);
    check_write_paths(&rk3588_db, 1);
    check_write_paths(&rk3588_db, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvdla),
        cmocka_unit_test(test_rk3588),
        cmocka_unit_test(test_nvdla_engine_units_copied),
        cmocka_unit_test(test_store_nvdla),
        cmocka_unit_test(test_store_rk3588),
        cmocka_unit_test(test_write_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
