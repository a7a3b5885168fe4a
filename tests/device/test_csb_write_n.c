/*
 * dlasim_csb_write_n (include/dlasim/dlasim.h) against dlasim_csb_write:
 * two devices get the same random writes, one by one and in batches of
 * random length, and must then read the same in every register of both
 * register groups, with the same interrupt line.  The writes mix plain D_
 * registers with the ones that change what a plain write does (S_POINTER,
 * D_OP_ENABLE: spec 001's dropped writes to an enabled group), interrupt
 * registers, BDMA's queue, LUT ports and units the configuration lacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "regs/regdb.h"

#define N_WRITES 6000

static int unit_wanted(unsigned u)
{
    return u == NVDLA_UNIT_GLB || u == NVDLA_UNIT_CDMA || u == NVDLA_UNIT_CSC ||
           u == NVDLA_UNIT_CMAC_A || u == NVDLA_UNIT_CMAC_B || u == NVDLA_UNIT_CACC ||
           u == NVDLA_UNIT_SDP || u == NVDLA_UNIT_SDP_RDMA || u == NVDLA_UNIT_PDP ||
           u == NVDLA_UNIT_CDP || u == NVDLA_UNIT_BDMA;
}

/* A register of the units above; a third of the time one of the kinds
 * that change a group's state. */
static struct dlasim_reg_write random_write(uint64_t *rng)
{
    for (;;) {
        const struct nvdla_reg_desc *r = &nvdla_regs[splitmix64_below(rng, nvdla_reg_count)];
        if (!unit_wanted(r->unit)) {
            continue;
        }
        int state_kind = r->kind == NVDLA_KIND_POINTER || r->kind == NVDLA_KIND_OP_ENABLE;
        if (splitmix64_below(rng, 3) == 0 && !state_kind) {
            continue;
        }
        uint32_t v = (uint32_t)splitmix64_next(rng);
        if (state_kind) {
            v &= splitmix64_below(rng, 2) ? 0x1u : 0x10001u;
        }
        return (struct dlasim_reg_write){ r->addr, v };
    }
}

/* Every register of both devices in both groups, and the IRQ line. */
static void expect_same(struct dlasim_dev *a, struct dlasim_dev *b, size_t after)
{
    assert_int_equal(dlasim_irq_level(a), dlasim_irq_level(b));
    for (unsigned g = 0; g < 2; g++) {
        for (unsigned u = 0; u < NVDLA_UNIT_COUNT; u++) { /* the group CSB reads see */
            for (unsigned i = 0; i < nvdla_reg_count; i++) {
                if (nvdla_regs[i].unit == u && nvdla_regs[i].kind == NVDLA_KIND_POINTER) {
                    wr(a, nvdla_regs[i].addr, g);
                    wr(b, nvdla_regs[i].addr, g);
                }
            }
        }
        for (unsigned i = 0; i < nvdla_reg_count; i++) {
            const struct nvdla_reg_desc *r = &nvdla_regs[i];
            if (r->kind == NVDLA_KIND_LUT_ACCESS_DATA) {
                continue; /* a read moves the LUT port's address */
            }
            uint32_t va = rd(a, r->addr), vb = rd(b, r->addr);
            if (va != vb) {
                fail_msg("after %zu writes: %s.%s group %u reads 0x%x one by one, 0x%x batched",
                         after, nvdla_units[r->unit].name, r->name, g, va, vb);
            }
        }
    }
}

static void same_as_single_writes(const char *config, uint64_t seed)
{
    struct dlasim_dev *a = tdev_new(config, NULL, 0, 0);
    struct dlasim_dev *b = tdev_new(config, NULL, 0, 0);
    static struct dlasim_reg_write w[N_WRITES];
    uint64_t rng = seed;
    for (size_t i = 0; i < N_WRITES; i++) {
        w[i] = random_write(&rng);
    }
    size_t at = 0;
    while (at < N_WRITES) {
        size_t n = 1 + splitmix64_below(&rng, 96);
        n = n > N_WRITES - at ? N_WRITES - at : n;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(dlasim_csb_write(a, w[at + i].addr, w[at + i].val), 0);
        }
        size_t done = 0;
        assert_int_equal(dlasim_csb_write_n(b, &w[at], n, &done), 0);
        assert_int_equal(done, n);
        at += n;
        if (at % 7 == 0 || at == N_WRITES) { /* now and then, and at the end */
            expect_same(a, b, at);
        }
    }
    dlasim_destroy(a);
    dlasim_destroy(b);
}

RUN_TEST(test_same_nv_small, same_as_single_writes, "nv_small", 0x5eed0001u)
RUN_TEST(test_same_nv_large, same_as_single_writes, "nv_large", 0x5eed0002u)

/* A failing write stops the batch: the writes before it are made, the ones
 * after it are not, and `done` counts the former. */
static void test_stops_at_failing_write(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 0);
    const struct dlasim_reg_write w[] = {
        { NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, 5 },
        { NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, 6 },
        { NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0 + 1, 7 }, /* unaligned */
        { NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, 8 },
    };
    uint32_t channel = rd(dev, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0);
    size_t done = 99;
    assert_int_equal(dlasim_csb_write_n(dev, w, 4, &done), DLASIM_ERR_INVAL);
    assert_int_equal(done, 2);
    assert_non_null(strstr(dlasim_last_error(dev), "unaligned"));
    assert_int_equal(rd(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0), 5);
    assert_int_equal(rd(dev, NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0), 6);
    assert_int_equal(rd(dev, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0), channel);
    assert_int_equal(dlasim_csb_write_n(dev, w, 0, &done), 0);
    assert_int_equal(done, 0);
    assert_int_equal(dlasim_csb_write_n(NULL, w, 1, &done), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_csb_write_n(dev, NULL, 1, NULL), DLASIM_ERR_INVAL);
    dlasim_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_nv_small),
        cmocka_unit_test(test_same_nv_large),
        cmocka_unit_test(test_stops_at_failing_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
