/*
 * DMA that leaves the memory the device can reach: beyond the
 * configuration's address width, or outside a caller's memory map.  The
 * error names the unit, the address and the layer; the layer still completes
 * with its interrupt, as hardware would, so a driver is never left waiting.
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


static uint32_t intr_status(struct dlasim_dev *dev)
{
    return rd(dev, NVDLA_GLB_S_INTR_STATUS_0);
}

static void test_valid_layer_copies(void **state)
{
    (void)state;
    uint8_t in[512], out[512];
    for (unsigned i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(i * 37u + 11u);
    }
    struct dlasim_dev *dev = tdev_create(NULL);
    mem_wr(dev, 0x80000000u, in, sizeof(in));
    tdev_pdp_copy(dev, 0x80000000u, 0x80001000u);
    assert_int_equal(dlasim_run(dev), 0);
    mem_rd(dev, 0x80001000u, out, sizeof(out));
    assert_memory_equal(in, out, sizeof(in)); /* 1x1 max pooling is a copy */
    assert_int_equal(intr_status(dev), NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK);
    dlasim_destroy(dev);
}

static void test_read_beyond_address_width(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_create(NULL);
    tdev_pdp_copy(dev, 0xffffff00u, 0x80001000u); /* 512 bytes cross 4 GiB */
    assert_int_equal(dlasim_run(dev), DLASIM_ERR_MEM);
    const char *msg = dlasim_last_error(dev);
    assert_non_null(strstr(msg, "layer 1"));
    assert_non_null(strstr(msg, "PDP"));
    assert_non_null(strstr(msg, "32-bit address space"));
    /* the layer completed: interrupt raised, nothing left enabled */
    assert_int_equal(intr_status(dev), NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK);
    assert_false(dlasim_busy(dev, NULL, 0));
    dlasim_destroy(dev);
}

/* Caller memory backing only [0x1000, 0x1000 + 4 KiB). */
struct window {
    uint8_t bytes[4096];
};

static int win_read(void *opaque, uint64_t addr, void *dst, size_t len)
{
    struct window *w = opaque;
    if (addr < 0x1000 || addr - 0x1000 + len > sizeof(w->bytes)) {
        return DLASIM_ERR_MEM;
    }
    memcpy(dst, w->bytes + (addr - 0x1000), len);
    return 0;
}

static int win_write(void *opaque, uint64_t addr, const void *src, size_t len)
{
    struct window *w = opaque;
    if (addr < 0x1000 || addr - 0x1000 + len > sizeof(w->bytes)) {
        return DLASIM_ERR_MEM;
    }
    memcpy(w->bytes + (addr - 0x1000), src, len);
    return 0;
}

static void test_write_outside_caller_memory(void **state)
{
    (void)state;
    static struct window w;
    const struct dlasim_mem_ops ops = {win_read, win_write};
    struct dlasim_options o = {0};
    o.dbb_ops = &ops;
    o.dbb_opaque = &w;
    struct dlasim_dev *dev = tdev_create(&o);
    tdev_pdp_copy(dev, 0x1000, 0x1f00); /* output runs past the window */
    assert_int_equal(dlasim_run(dev), DLASIM_ERR_MEM);
    const char *msg = dlasim_last_error(dev);
    assert_non_null(strstr(msg, "PDP: DMA write"));
    assert_non_null(strstr(msg, "memory callback refused"));
    dlasim_destroy(dev);
}

/* A caller's work limit refuses a layer before it runs; the layer completes.
 * The 8x8x8 copy reads 512 bytes, writes 512 and makes a 1-wide pass along
 * each axis of its 512 elements: 2048. */
static void run_with_work_limit(uint64_t limit, int expect)
{
    struct dlasim_options o = {0};
    o.max_layer_work = limit;
    struct dlasim_dev *dev = tdev_create(&o);
    tdev_pdp_copy(dev, 0x80000000u, 0x80001000u);
    assert_int_equal(dlasim_run(dev), expect);
    if (expect) {
        assert_non_null(strstr(dlasim_last_error(dev),
                               "PDP: the layer's work of 2048 (512 bytes read, 512 bytes "
                               "written, 1024 elements computed) exceeds the caller's limit "
                               "of 2047"));
    }
    assert_int_equal(intr_status(dev), NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK);
    dlasim_destroy(dev);
}

static void test_work_limit(void **state)
{
    (void)state;
    run_with_work_limit(2047, DLASIM_ERR_UNSUPPORTED);
    run_with_work_limit(2048, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_layer_copies),
        cmocka_unit_test(test_read_beyond_address_width),
        cmocka_unit_test(test_write_outside_caller_memory),
        cmocka_unit_test(test_work_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
