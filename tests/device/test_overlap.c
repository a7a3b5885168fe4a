/*
 * Overlap (dlasim_options.overlap, src/sim/nvdla/device.c): when a layer
 * completes inside dlasim_step and another is enabled, the next one starts
 * at once on a worker, as the hardware starts it, while the host services
 * the interrupt.  What the host sees must be what a stepped device shows
 * at the same point: the interrupt status and S_STATUS of the layer not yet
 * finished, the programming of the group that freed taking effect, its
 * errors reported by the next dlasim_step (also when a memory read finished
 * it first), and in the end the same memory, interrupts and pointers.  The
 * layers are 1x1 max-pooling copies (tdev_pdp_copy) whose expected output
 * is their input (an independent reference).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

#define CUBE 0x200u /* 8x8x8 int8, line stride 0x40 */
#define SRC_A 0x80000000u
#define SRC_B 0x80001000u
#define SRC_C 0x80002000u
#define DST_A 0x80010000u
#define DST_B 0x80011000u
#define DST_C 0x80012000u
#define PDP_DONE0 NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK
#define PDP_DONE1 NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS1__MASK

static struct dlasim_dev *device(int overlap, unsigned threads, int strict)
{
    struct dlasim_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.threads_always = 1; /* overlap runs whatever the host's cores cost */
    o.overlap = overlap;
    o.strict_mem = strict;
    return tdev_create(&o);
}

static void fill(struct dlasim_dev *dev, uint32_t addr, unsigned seed)
{
    uint8_t b[CUBE];
    for (unsigned i = 0; i < CUBE; i++) {
        b[i] = (uint8_t)(i * 37u + seed * 101u + 1u);
    }
    mem_wr(dev, addr, b, sizeof b);
}

/* A copy layer in register group g of PDP and PDP_RDMA. */
static void copy_in_group(struct dlasim_dev *dev, unsigned g, uint32_t src, uint32_t dst)
{
    wr(dev, NVDLA_PDP_RDMA_S_POINTER_0, g);
    wr(dev, NVDLA_PDP_S_POINTER_0, g);
    tdev_pdp_copy(dev, src, dst);
}

/* Copies SRC_A -> DST_A in group 0 and SRC_B -> DST_B in group 1, both
 * enabled; the sources filled from seeds a and b (b 0: SRC_B never written). */
static void two_copies(struct dlasim_dev *dev, unsigned a, unsigned b)
{
    fill(dev, SRC_A, a);
    if (b) {
        fill(dev, SRC_B, b);
    }
    copy_in_group(dev, 0, SRC_A, DST_A);
    copy_in_group(dev, 1, SRC_B, DST_B);
}

static void expect_copy(struct dlasim_dev *dev, uint32_t src, uint32_t dst)
{
    uint8_t a[CUBE], b[CUBE];
    mem_rd(dev, src, a, sizeof a);
    mem_rd(dev, dst, b, sizeof b);
    assert_memory_equal(a, b, sizeof a);
}

/* Two layers enabled in both groups; the host services the first's
 * interrupt and programs a third into the group that freed, then runs on. */
static void test_same_view_as_stepped(void **state)
{
    (void)state;
    struct dlasim_dev *dev[2] = {device(1, 2, 0), device(0, 2, 0)}; /* overlapped, stepped */
    uint32_t intr[2], status[2], pointer[2];
    for (int k = 0; k < 2; k++) {
        fill(dev[k], SRC_C, 3);
        two_copies(dev[k], 1, 2);
        assert_int_equal(dlasim_step(dev[k]), 1);
        assert_int_equal(dlasim_irq_level(dev[k]), 1);
        /* the interrupt the host services is the first layer's alone */
        intr[k] = rd(dev[k], NVDLA_GLB_S_INTR_STATUS_0);
        status[k] = rd(dev[k], NVDLA_PDP_S_STATUS_0);
        wr(dev[k], NVDLA_GLB_S_INTR_STATUS_0, intr[k]);
        copy_in_group(dev[k], 0, SRC_C, DST_C);
    }
    assert_int_equal(intr[0], intr[1]);
    assert_int_equal(intr[0] & (PDP_DONE0 | PDP_DONE1), PDP_DONE0);
    assert_int_equal(status[0], status[1]);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(dlasim_run(dev[k]), 0);
        intr[k] = rd(dev[k], NVDLA_GLB_S_INTR_STATUS_0);
        pointer[k] = rd(dev[k], NVDLA_PDP_S_POINTER_0);
        status[k] = rd(dev[k], NVDLA_PDP_S_STATUS_0);
        expect_copy(dev[k], SRC_A, DST_A);
        expect_copy(dev[k], SRC_B, DST_B);
        expect_copy(dev[k], SRC_C, DST_C);
    }
    assert_int_equal(intr[0], intr[1]);
    assert_int_equal(intr[0] & (PDP_DONE0 | PDP_DONE1), PDP_DONE0 | PDP_DONE1);
    assert_int_equal(pointer[0], pointer[1]);
    assert_int_equal(status[0], status[1]);
    dlasim_destroy(dev[0]);
    dlasim_destroy(dev[1]);
}

/* A memory read of the output of the layer that started early waits for
 * its engines: the bytes are its output.  Its completion is still the next
 * step's: until then its interrupt is not raised and its units read
 * enabled, as on a stepped device, and that step returns 1. */
static void test_memory_read_waits_for_the_layer(void **state)
{
    (void)state;
    struct dlasim_dev *dev = device(1, 2, 0), *st = device(0, 2, 0);
    two_copies(dev, 4, 5);
    two_copies(st, 4, 5);
    assert_int_equal(dlasim_step(dev), 1);
    assert_int_equal(dlasim_step(st), 1);
    expect_copy(dev, SRC_B, DST_B);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0), rd(st, NVDLA_GLB_S_INTR_STATUS_0));
    assert_int_equal(rd(dev, NVDLA_PDP_S_STATUS_0), rd(st, NVDLA_PDP_S_STATUS_0));
    assert_int_equal(rd(dev, NVDLA_PDP_S_POINTER_0), rd(st, NVDLA_PDP_S_POINTER_0));
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0) & (PDP_DONE0 | PDP_DONE1), PDP_DONE0);
    assert_int_equal(dlasim_step(dev), 1);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0) & (PDP_DONE0 | PDP_DONE1),
                     PDP_DONE0 | PDP_DONE1);
    assert_int_equal(dlasim_step(dev), 0); /* nothing left */
    dlasim_destroy(dev);
    dlasim_destroy(st);
}

/* The early layer's error: the next dlasim_step returns it, with the
 * stepped device's status and message, also when a memory read waited for
 * the layer before that step. */
static void layer_error(int read_first)
{
    struct dlasim_dev *dev[2] = {device(1, 2, 1), device(0, 2, 1)}; /* strict memory */
    int rc[2];
    const char *err[2];
    for (int k = 0; k < 2; k++) {
        two_copies(dev[k], 6, 0); /* SRC_B never written: a strict read fails */
        assert_int_equal(dlasim_step(dev[k]), 1);
        if (read_first) {
            expect_copy(dev[k], SRC_A, DST_A);
        }
        rc[k] = dlasim_step(dev[k]);
        err[k] = dlasim_last_error(dev[k]);
    }
    assert_true(rc[0] < 0);
    assert_int_equal(rc[0], rc[1]);
    assert_string_equal(err[0], err[1]);
    dlasim_destroy(dev[0]);
    dlasim_destroy(dev[1]);
}

static void test_error_at_next_step(void **state)
{
    (void)state;
    layer_error(0);
}

static void test_error_after_memory_read(void **state)
{
    (void)state;
    layer_error(1);
}

/* dlasim_set_overlap: the previous setting; off without a worker. */
static void test_set_overlap(void **state)
{
    (void)state;
    struct dlasim_dev *two = device(1, 2, 0), *one = device(1, 1, 0);
    assert_int_equal(dlasim_set_overlap(two, 0), 1);
    assert_int_equal(dlasim_set_overlap(two, 1), 0);
    assert_int_equal(dlasim_set_overlap(two, 1), 1);
    assert_int_equal(dlasim_set_overlap(one, 1), 0);
    assert_int_equal(dlasim_set_overlap(one, 0), 0);
    assert_int_equal(dlasim_set_overlap(NULL, 1), DLASIM_ERR_INVAL);
    dlasim_destroy(two);
    dlasim_destroy(one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_view_as_stepped),
        cmocka_unit_test(test_memory_read_waits_for_the_layer),
        cmocka_unit_test(test_error_at_next_step),
        cmocka_unit_test(test_error_after_memory_read),
        cmocka_unit_test(test_set_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
