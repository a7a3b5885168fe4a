/*
 * Property tests of BDMA (bridge DMA) on nv_large, through the public API only.
 *
 * Two memory windows (one on DBB, one on CVIF) are filled with random bytes
 * and mirrored on the host.  Random transfers (line sizes, line/surface
 * repeats, strides including 0 and overlapping lines, both ports, low
 * address bits that the hardware drops) are queued with CFG_OP_0.EN, launched
 * in groups with CFG_LAUNCH0/1, run, and both windows are compared byte for
 * byte with a plain reference that copies line by line, surface by surface,
 * in launch order (ref: NV_NVDLA_BDMA_load.v / _store.v address generation).
 * The queue rules of NV_NVDLA_BDMA_csb.v are checked through STATUS_0
 * (FREE_SLOT = 20 - queued, IDLE, GRPn_BUSY) and GLB BDMA_DONE_STATUS0/1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/mirror.h"
#include "common/rng.h"
#include "common/testdev.h"

#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ---------------------------------------------------------------- */

static uint32_t rnd(uint64_t *s, uint32_t n) /* [0, n) */
{
    return splitmix64_below(s, n);
}

/* ---- device and host mirror ------------------------------------------------ */

#define WIN_SIZE (128u * 1024u)
#define DBB_BASE 0x80000000ull
#define CVIF_BASE 0x00100000ull /* another address on purpose */

#define DONE0 NVDLA_GLB_S_INTR_STATUS_0_BDMA_DONE_STATUS0__MASK
#define DONE1 NVDLA_GLB_S_INTR_STATUS_0_BDMA_DONE_STATUS1__MASK

static const uint64_t win_base[2] = {DBB_BASE, CVIF_BASE}; /* by enum dlasim_port */

static void world_open(struct world *w, uint64_t *seed)
{
    world_init(w, "nv_large", WIN_SIZE, win_base, seed);
}

/* ---- one transfer ---------------------------------------------------------- */

struct xfer {
    int src_port, dst_port;        /* enum dlasim_port */
    uint32_t src_off, dst_off;     /* offsets in the windows, multiples of 32 */
    uint32_t line_atoms;           /* CFG_LINE.SIZE + 1 */
    uint32_t lines, surfaces;      /* NUMBER + 1 */
    uint32_t src_line, dst_line, src_surf, dst_surf; /* byte strides, multiples of 32 */
    uint32_t low_bits;             /* junk in the dropped low address bits */
};

static uint32_t extent(uint32_t line_bytes, uint32_t lines, uint32_t surfaces,
                       uint32_t line_stride, uint32_t surf_stride)
{
    return (surfaces - 1) * surf_stride + (lines - 1) * line_stride + line_bytes;
}

static uint32_t stride(uint64_t *seed, uint32_t min)
{
    switch (rnd(seed, 6)) {
    case 0:
        return 0; /* every line on the same address */
    case 1:
        return min > 32 ? min - 32 : min; /* overlapping lines */
    case 2:
        return min; /* packed */
    default:
        return min + 32u * rnd(seed, 4);
    }
}

static int overlap(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
    return a < b + blen && b < a + alen;
}

/* A random transfer that fits both windows and whose source and destination
 * do not overlap (the hardware result would depend on timing). */
static void random_xfer(uint64_t *seed, struct xfer *x)
{
    for (;;) {
        x->src_port = (int)rnd(seed, 2);
        x->dst_port = (int)rnd(seed, 2);
        x->line_atoms = 1 + rnd(seed, rnd(seed, 4) ? 4 : 40);
        x->lines = 1 + rnd(seed, 6);
        x->surfaces = 1 + rnd(seed, 4);
        uint32_t lb = x->line_atoms * 32u;
        x->src_line = stride(seed, lb);
        x->dst_line = stride(seed, lb);
        x->src_surf = stride(seed, x->lines * lb);
        x->dst_surf = stride(seed, x->lines * lb);
        x->low_bits = rnd(seed, 32);
        uint32_t se = extent(lb, x->lines, x->surfaces, x->src_line, x->src_surf);
        uint32_t de = extent(lb, x->lines, x->surfaces, x->dst_line, x->dst_surf);
        if (se > WIN_SIZE / 2 || de > WIN_SIZE / 2) {
            continue;
        }
        x->src_off = 32u * rnd(seed, (WIN_SIZE - se) / 32u + 1u);
        x->dst_off = 32u * rnd(seed, (WIN_SIZE - de) / 32u + 1u);
        if (x->src_port == x->dst_port && overlap(x->src_off, se, x->dst_off, de)) {
            continue;
        }
        return;
    }
}

/* NVDLA RAM type encoding: 0 = CV (CVIF), 1 = MC (DBB). */
static uint32_t ram_type(int port)
{
    return port == DLASIM_PORT_CVIF ? 0u : 1u;
}

/* The CFG_* registers of a transfer, without queueing it. */
static void program_regs(struct dlasim_dev *dev, const struct xfer *x)
{
    uint64_t src = win_base[x->src_port] + x->src_off;
    uint64_t dst = win_base[x->dst_port] + x->dst_off;
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0, (uint32_t)src | x->low_bits);
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_HIGH_0, (uint32_t)(src >> 32));
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_LOW_0, (uint32_t)dst | (x->low_bits ^ 31u));
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_HIGH_0, (uint32_t)(dst >> 32));
    wr(dev, NVDLA_BDMA_CFG_LINE_0, x->line_atoms - 1);
    wr(dev, NVDLA_BDMA_CFG_CMD_0,
       NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE(ram_type(x->src_port)) |
           NVDLA_BDMA_CFG_CMD_0_DST_RAM_TYPE(ram_type(x->dst_port)));
    wr(dev, NVDLA_BDMA_CFG_LINE_REPEAT_0, x->lines - 1);
    wr(dev, NVDLA_BDMA_CFG_SRC_LINE_0, x->src_line | x->low_bits);
    wr(dev, NVDLA_BDMA_CFG_DST_LINE_0, x->dst_line);
    wr(dev, NVDLA_BDMA_CFG_SURF_REPEAT_0, x->surfaces - 1);
    wr(dev, NVDLA_BDMA_CFG_SRC_SURF_0, x->src_surf);
    wr(dev, NVDLA_BDMA_CFG_DST_SURF_0, x->dst_surf | x->low_bits);
}

static void program_xfer(struct dlasim_dev *dev, const struct xfer *x)
{
    program_regs(dev, x);
    wr(dev, NVDLA_BDMA_CFG_OP_0, NVDLA_BDMA_CFG_OP_0_EN(1));
}

/* The reference: line n of surface s, in order, through a line buffer. */
static void reference_xfer(struct world *w, const struct xfer *x)
{
    uint32_t lb = x->line_atoms * 32u;
    uint8_t line[40 * 32];
    for (uint32_t s = 0; s < x->surfaces; s++) {
        for (uint32_t n = 0; n < x->lines; n++) {
            uint32_t so = x->src_off + s * x->src_surf + n * x->src_line;
            uint32_t dof = x->dst_off + s * x->dst_surf + n * x->dst_line;
            memcpy(line, w->mirror[x->src_port] + so, lb);
            memcpy(w->mirror[x->dst_port] + dof, line, lb);
        }
    }
}

static uint32_t status(struct dlasim_dev *dev)
{
    return rd(dev, NVDLA_BDMA_STATUS_0);
}

static uint32_t free_slots(struct dlasim_dev *dev)
{
    return (status(dev) & NVDLA_BDMA_STATUS_0_FREE_SLOT__MASK) >>
           NVDLA_BDMA_STATUS_0_FREE_SLOT__SHIFT;
}

#define IDLE_BIT NVDLA_BDMA_STATUS_0_IDLE__MASK
#define BUSY0 NVDLA_BDMA_STATUS_0_GRP0_BUSY__MASK
#define BUSY1 NVDLA_BDMA_STATUS_0_GRP1_BUSY__MASK

/* ---- tests ------------------------------------------------------------------ */

/* STATUS_0 after reset: 20 free slots, idle; absent on nv_small. */
static void test_reset_status(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_large", NULL, 0, 0);
    assert_int_equal(status(dev), 20u | IDLE_BIT);
    wr(dev, NVDLA_BDMA_CFG_OP_0, 1);
    assert_int_equal(status(dev), 19u);
    dlasim_reset(dev);
    assert_int_equal(status(dev), 20u | IDLE_BIT);
    assert_int_equal(dlasim_run(dev), 0);
    dlasim_destroy(dev);

    dev = tdev_new("nv_small", NULL, 0, 0);
    wr(dev, NVDLA_BDMA_CFG_OP_0, 1);
    wr(dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    assert_int_equal(status(dev), 0);
    assert_int_equal(dlasim_step(dev), 0);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), 0);
    dlasim_destroy(dev);
}

/* Random groups of random transfers on both ports and both launch groups. */
static void test_random_transfers(void **state)
{
    (void)state;
    uint64_t seed = 0xbd3a0001u;
    struct world w;
    world_open(&w, &seed);
    for (int round = 0; round < 60; round++) {
        unsigned groups = 1 + rnd(&seed, 2);
        uint32_t expect_bits = 0;
        unsigned queued = 0;
        unsigned first = rnd(&seed, 2);
        for (unsigned gi = 0; gi < groups; gi++) {
            unsigned g = (first + gi) & 1u; /* 1 then 0 as well as 0 then 1 */
            unsigned n = 1 + rnd(&seed, 5);
            for (unsigned i = 0; i < n; i++) {
                struct xfer x;
                random_xfer(&seed, &x);
                program_xfer(w.dev, &x);
                reference_xfer(&w, &x);
                queued++;
                assert_int_equal(free_slots(w.dev), 20u - queued);
            }
            wr(w.dev, g ? NVDLA_BDMA_CFG_LAUNCH1_0 : NVDLA_BDMA_CFG_LAUNCH0_0, 1);
            assert_true(status(w.dev) & (g ? BUSY1 : BUSY0));
            assert_false(status(w.dev) & IDLE_BIT);
            expect_bits |= g ? DONE1 : DONE0;
        }
        assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), 0);
        assert_int_equal(dlasim_run(w.dev), 0);
        assert_int_equal(status(w.dev), 20u | IDLE_BIT);
        assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), expect_bits);
        assert_int_equal(dlasim_irq_level(w.dev), 1);
        wr(w.dev, NVDLA_GLB_S_INTR_STATUS_0, expect_bits); /* W1C */
        assert_int_equal(dlasim_irq_level(w.dev), 0);
        world_check(&w, "BDMA");
    }
    world_free(&w);
}

/* Groups run in launch order: group 1 launched first feeds group 0. */
static void test_launch_order(void **state)
{
    (void)state;
    uint64_t seed = 0xbd3a0002u;
    struct world w;
    world_open(&w, &seed);
    struct xfer a = {DLASIM_PORT_DBB, DLASIM_PORT_CVIF, 0, 4096, 2, 3, 2, 64, 64, 192, 192, 0};
    struct xfer b = {DLASIM_PORT_CVIF, DLASIM_PORT_DBB, 4096, 65536, 2, 3, 2, 64, 128, 192, 512, 0};
    program_xfer(w.dev, &a);
    wr(w.dev, NVDLA_BDMA_CFG_LAUNCH1_0, 1);
    program_xfer(w.dev, &b);
    wr(w.dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    reference_xfer(&w, &a);
    reference_xfer(&w, &b);
    assert_int_equal(dlasim_step(w.dev), 1); /* group 1 */
    assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE1);
    assert_int_equal(status(w.dev), 19u | BUSY0);
    assert_int_equal(dlasim_step(w.dev), 1); /* group 0 */
    assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0 | DONE1);
    assert_int_equal(dlasim_step(w.dev), 0);
    world_check(&w, "BDMA");
    world_free(&w);
}

/* Transfers wait in the queue until launched; EN=0 queues nothing; a launch
 * takes only the transfers queued since the previous launch. */
static void test_queue_until_launch(void **state)
{
    (void)state;
    uint64_t seed = 0xbd3a0003u;
    struct world w;
    world_open(&w, &seed);
    struct xfer x[3];
    for (int i = 0; i < 3; i++) {
        random_xfer(&seed, &x[i]);
        program_xfer(w.dev, &x[i]);
    }
    wr(w.dev, NVDLA_BDMA_CFG_OP_0, 0); /* EN=0: nothing */
    assert_int_equal(status(w.dev), 17u);
    assert_int_equal(rd(w.dev, NVDLA_BDMA_CFG_OP_0), 0);
    assert_int_equal(dlasim_run(w.dev), 0); /* nothing launched */
    char desc[128];
    assert_true(dlasim_busy(w.dev, desc, sizeof(desc)));
    assert_non_null(strstr(desc, "BDMA"));
    world_check(&w, "BDMA"); /* untouched */
    wr(w.dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    assert_int_equal(rd(w.dev, NVDLA_BDMA_CFG_LAUNCH0_0), 1);
    struct xfer y;
    random_xfer(&seed, &y);
    program_xfer(w.dev, &y); /* after the launch: next group */
    assert_int_equal(status(w.dev), 16u | BUSY0);
    for (int i = 0; i < 3; i++) {
        reference_xfer(&w, &x[i]);
    }
    assert_int_equal(dlasim_run(w.dev), 0);
    world_check(&w, "BDMA");
    assert_int_equal(status(w.dev), 19u);
    assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0);
    wr(w.dev, NVDLA_BDMA_CFG_LAUNCH1_0, 1);
    reference_xfer(&w, &y);
    assert_int_equal(dlasim_run(w.dev), 0);
    world_check(&w, "BDMA");
    assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0 | DONE1);
    assert_int_equal(status(w.dev), 20u | IDLE_BIT);
    assert_false(dlasim_busy(w.dev, NULL, 0));
    world_free(&w);
}

/* 20 slots: a 21st push is dropped; the launched group copies 20. */
static void test_full_queue_drops(void **state)
{
    (void)state;
    uint64_t seed = 0xbd3a0004u;
    struct world w;
    world_open(&w, &seed);
    for (uint32_t i = 0; i < 21; i++) {
        /* one 32-byte line from DBB offset i*32 to CVIF offset 8192 + i*64 */
        struct xfer x = {DLASIM_PORT_DBB, DLASIM_PORT_CVIF, i * 32u, 8192u + i * 64u,
                         1, 1, 1, 32, 32, 32, 32, 0};
        program_xfer(w.dev, &x);
        if (i < 20) {
            reference_xfer(&w, &x);
        }
        assert_int_equal(free_slots(w.dev), i < 20 ? 19u - i : 0u);
    }
    wr(w.dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    assert_int_equal(dlasim_run(w.dev), 0);
    world_check(&w, "BDMA"); /* the 21st destination untouched */
    assert_int_equal(status(w.dev), 20u | IDLE_BIT);
    world_free(&w);
}

/* Big packed lines (256 KiB each, the largest CFG_LINE.SIZE) over more than
 * the model's 1 MiB host buffer, DBB -> CVIF. */
static void test_large_lines(void **state)
{
    (void)state;
    const uint32_t line = 8192u * 32u, lines = 6;
    const uint64_t src = 0x90000000ull, dst = 0x01000000ull;
    uint64_t seed = 0xbd3a0008u;
    struct dlasim_dev *dev = tdev_new("nv_large", NULL, 0, 0);
    uint8_t *data = malloc((size_t)line * lines);
    uint8_t *got = malloc((size_t)line * lines);
    assert_non_null(data);
    assert_non_null(got);
    splitmix64_fill(&seed, data, (size_t)line * lines);
    mem_wr(dev, src, data, (size_t)line * lines);
    struct xfer x = {DLASIM_PORT_DBB, DLASIM_PORT_CVIF, 0, 0, 8192, lines, 1, line, line, 0, 0, 0};
    program_regs(dev, &x);
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0, (uint32_t)src);
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_LOW_0, (uint32_t)dst);
    wr(dev, NVDLA_BDMA_CFG_OP_0, 1);
    wr(dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    assert_int_equal(dlasim_run(dev), 0);
    assert_int_equal(dlasim_mem_read(dev, DLASIM_PORT_CVIF, dst, got, (size_t)line * lines), 0);
    assert_memory_equal(got, data, (size_t)line * lines);
    free(data);
    free(got);
    dlasim_destroy(dev);
}

/* A launch with nothing queued: no transfer, no interrupt, GRPn_BUSY set. */
static void test_empty_launch(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_new("nv_large", NULL, 0, 0);
    wr(dev, NVDLA_BDMA_CFG_LAUNCH1_0, 1);
    assert_int_equal(status(dev), 20u | IDLE_BIT | BUSY1);
    assert_int_equal(dlasim_step(dev), 0);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), 0);
    dlasim_destroy(dev);
}

/* LINE/SURF_REPEAT.NUMBER above 8191 are refused; the group still completes. */
static void test_refusals(void **state)
{
    (void)state;
    static const uint32_t regs[2] = {NVDLA_BDMA_CFG_LINE_REPEAT_0, NVDLA_BDMA_CFG_SURF_REPEAT_0};
    static const char *names[2] = {"CFG_LINE_REPEAT_0", "CFG_SURF_REPEAT_0"};
    for (int i = 0; i < 2; i++) {
        uint64_t seed = 0xbd3a0005u + (uint64_t)i;
        struct world w;
        world_open(&w, &seed);
        struct xfer x = {DLASIM_PORT_DBB, DLASIM_PORT_DBB, 0, 65536, 1, 1, 1, 0, 0, 0, 0, 0};
        program_xfer(w.dev, &x);
        reference_xfer(&w, &x); /* a legal transfer first in the group */
        x.dst_off = 4096;
        program_regs(w.dev, &x);
        wr(w.dev, regs[i], 8192); /* refused: the group stops here */
        wr(w.dev, NVDLA_BDMA_CFG_OP_0, 1);
        x.dst_off = 8192;
        program_xfer(w.dev, &x); /* legal, after the refused one: not run */
        wr(w.dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
        assert_int_equal(dlasim_run(w.dev), DLASIM_ERR_PROG);
        assert_non_null(strstr(dlasim_last_error(w.dev), names[i]));
        assert_non_null(strstr(dlasim_last_error(w.dev), "8192"));
        assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0);
        assert_int_equal(status(w.dev), 20u | IDLE_BIT);
        world_check(&w, "BDMA");
        world_free(&w);
    }
}

/* A DMA fault (destination beyond the CVIF address space) is reported and
 * the group completes. */
static void test_dma_fault(void **state)
{
    (void)state;
    uint64_t seed = 0xbd3a0007u;
    struct world w;
    world_open(&w, &seed);
    struct xfer x = {DLASIM_PORT_DBB, DLASIM_PORT_CVIF, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0};
    program_xfer(w.dev, &x);
    wr(w.dev, NVDLA_BDMA_CFG_DST_ADDR_HIGH_0, 0xffffffffu);
    wr(w.dev, NVDLA_BDMA_CFG_DST_ADDR_LOW_0, 0xffffffe0u);
    wr(w.dev, NVDLA_BDMA_CFG_LINE_0, 1); /* 64 bytes: wraps past 2^64 */
    wr(w.dev, NVDLA_BDMA_CFG_OP_0, 1);
    wr(w.dev, NVDLA_BDMA_CFG_LAUNCH1_0, 1);
    assert_true(dlasim_run(w.dev) < 0);
    assert_non_null(strstr(dlasim_last_error(w.dev), "BDMA"));
    assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE1);
    assert_int_equal(status(w.dev), 20u | IDLE_BIT);
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reset_status),
        cmocka_unit_test(test_random_transfers),
        cmocka_unit_test(test_launch_order),
        cmocka_unit_test(test_queue_until_launch),
        cmocka_unit_test(test_full_queue_drops),
        cmocka_unit_test(test_large_lines),
        cmocka_unit_test(test_empty_launch),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_dma_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
