/*
 * The same hostile layer on both devices gets the same class of error from
 * the same code (src/sim/core: budget.c, dma.c, host.c): an 8x8x8 int8 1x1
 * max pooling (a copy) run by NVDLA's PDP (nv_small) and by the RK3588's PPU,
 *   - with its output, then its input, running past the end of the 32-bit
 *     address space: DLASIM_ERR_MEM naming the unit and the cube, refused
 *     before any byte moves (the bytes below the end stay zero);
 *   - under a caller's work limit (max_layer_work) it exceeds:
 *     DLASIM_ERR_UNSUPPORTED, nothing written.
 * Either way the layer or task completes with its done interrupt and the
 * device is left idle, as hardware would.  The valid copy is checked first,
 * byte for byte, so the refusals are of a layer that otherwise works.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"
#include "regs/gen/nvdla_regs.h"
#include "regs/gen/rk3588_regs.h"

#define SRC 0x80000000u
#define DST 0x80010000u
#define CMD 0x40000000u
#define END 0xffffff00u /* 256 bytes below 4 GiB: every cube here is longer */

/* One device's way of running the copy. */
struct device {
    const char *config;
    const char *rd_unit, *wr_unit; /* names in the messages */
    size_t cube_bytes;             /* the 8x8x8 cube in memory */
    size_t bytes_per_pixel;        /* channels 0-7 are the first 8 of them */
    void (*program)(struct dlasim_dev *dev, uint32_t src, uint32_t dst);
    uint32_t (*done_irq)(struct dlasim_dev *dev); /* the unit's done bits, raised */
    uint32_t done_bits;
};

static void nvdla_program(struct dlasim_dev *dev, uint32_t src, uint32_t dst)
{
    tdev_pdp_copy(dev, src, dst);
}

static uint32_t nvdla_done(struct dlasim_dev *dev)
{
    return rd(dev, NVDLA_GLB_S_INTR_STATUS_0);
}

static void rk_program(struct dlasim_dev *dev, uint32_t src, uint32_t dst)
{
    struct dlasim_rk_pool_desc p = {0};
    p.in_w = p.in_h = p.out_w = p.out_h = 8;
    p.c = 8;
    p.k_w = p.k_h = p.stride_x = p.stride_y = 1;
    p.method = 1; /* max */
    p.input = src;
    p.output = dst;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_pool(&l, &p), 0);
    size_t n = dlasim_rk_layout_size(&l);
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    assert_int_equal(dlasim_rk_layout(&l, CMD, buf, n), 0);
    mem_wr(dev, CMD, buf, n);
    free(buf);
    assert_int_equal(dlasim_rk_kick(dev, 0, CMD, dlasim_rk_task_entries(&l, 0), 1,
                                    DLASIM_RK_IRQ_PPU | DLASIM_RK_IRQ_DMA_READ_ERROR |
                                        DLASIM_RK_IRQ_DMA_WRITE_ERROR),
                     0);
    dlasim_rk_regcmd_free(&l);
}

static uint32_t rk_done(struct dlasim_dev *dev)
{
    return rd(dev, RK3588_PC_INTERRUPT_RAW_STATUS);
}

static const struct device devices[] = {
    {"nv_small", "PDP", "PDP", 512, 8, nvdla_program, nvdla_done,
     NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK},
    {"rk3588", "PPU_RDMA", "PPU", 1024, 16, rk_program, rk_done, 0x400u /* PPU group 0 */},
};

static struct dlasim_dev *create(const struct device *d, uint64_t max_work)
{
    struct dlasim_options o = {0};
    o.config = d->config;
    o.max_layer_work = max_work;
    return tdev_create(&o);
}

static void fill_input(struct dlasim_dev *dev, const struct device *d, uint32_t at)
{
    uint8_t *in = calloc(1, d->cube_bytes);
    assert_non_null(in);
    for (size_t px = 0; px < 64; px++) {
        for (size_t ch = 0; ch < 8; ch++) {
            in[px * d->bytes_per_pixel + ch] = (uint8_t)(px * 37u + ch * 11u + 5u);
        }
    }
    mem_wr(dev, at, in, d->cube_bytes);
    free(in);
}

static int all_zero(struct dlasim_dev *dev, uint64_t at, size_t n)
{
    uint8_t buf[1024] = {0};
    mem_rd(dev, at, buf, n);
    for (size_t i = 0; i < n; i++) {
        if (buf[i]) {
            return 0;
        }
    }
    return 1;
}

/* The layer completed: its done interrupt is raised, nothing is left enabled. */
static void check_completed(struct dlasim_dev *dev, const struct device *d)
{
    assert_int_equal(d->done_irq(dev) & d->done_bits, d->done_bits);
    assert_false(dlasim_busy(dev, NULL, 0));
}

static void test_valid_copy(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
        const struct device *d = &devices[i];
        struct dlasim_dev *dev = create(d, 0);
        fill_input(dev, d, SRC);
        d->program(dev, SRC, DST);
        assert_int_equal(dlasim_run(dev), 0);
        uint8_t in[1024], out[1024];
        mem_rd(dev, SRC, in, d->cube_bytes);
        mem_rd(dev, DST, out, d->cube_bytes);
        for (size_t px = 0; px < 64; px++) { /* 1x1 max pooling is a copy */
            assert_memory_equal(in + px * d->bytes_per_pixel, out + px * d->bytes_per_pixel, 8);
        }
        check_completed(dev, d);
        dlasim_destroy(dev);
    }
}

static void test_output_past_end_of_memory(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
        const struct device *d = &devices[i];
        struct dlasim_dev *dev = create(d, 0);
        fill_input(dev, d, SRC);
        d->program(dev, SRC, END);
        char want[64];
        snprintf(want, sizeof(want), "%s: DMA write of the output cube", d->wr_unit);
        expect_error(dev, dlasim_run(dev), DLASIM_ERR_MEM, want);
        assert_non_null(strstr(dlasim_last_error(dev), "beyond the 32-bit address space"));
        assert_true(all_zero(dev, END, 256)); /* refused before any byte moved */
        check_completed(dev, d);
        dlasim_destroy(dev);
    }
}

static void test_input_past_end_of_memory(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
        const struct device *d = &devices[i];
        struct dlasim_dev *dev = create(d, 0);
        d->program(dev, END, DST);
        char want[64];
        snprintf(want, sizeof(want), "%s: DMA read of the input cube", d->rd_unit);
        expect_error(dev, dlasim_run(dev), DLASIM_ERR_MEM, want);
        assert_non_null(strstr(dlasim_last_error(dev), "beyond the 32-bit address space"));
        assert_true(all_zero(dev, DST, d->cube_bytes));
        check_completed(dev, d);
        dlasim_destroy(dev);
    }
}

static void test_work_beyond_limit(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
        const struct device *d = &devices[i];
        struct dlasim_dev *dev = create(d, 100);
        fill_input(dev, d, SRC);
        d->program(dev, SRC, DST);
        expect_error(dev, dlasim_run(dev), DLASIM_ERR_UNSUPPORTED,
                     "exceeds the caller's limit of 100 (max_layer_work)");
        assert_true(all_zero(dev, DST, d->cube_bytes));
        check_completed(dev, d);
        dlasim_destroy(dev);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_copy),
        cmocka_unit_test(test_output_past_end_of_memory),
        cmocka_unit_test(test_input_past_end_of_memory),
        cmocka_unit_test(test_work_beyond_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
