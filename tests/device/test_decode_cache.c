/*
 * PDP's decode cache (src/sim/nvdla/decode_cache.h): a layer whose register
 * values ran before reuses their decode, so the key must hold every register
 * the decode reads.  Proved here behaviourally, table-driven from the
 * register database: for every software-writable field of every PDP and
 * PDP_RDMA register (not OP_ENABLE / S_POINTER, which start layers and move
 * groups), a device that has just run the unchanged layer in both groups
 * (its cache holds it) runs the layer with that field's low bit flipped, and
 * must do exactly what a new device (empty cache) does with the same
 * registers and memory: same status, error text, interrupt bits, output
 * bytes and register values.  An incomplete key would replay the unchanged
 * layer instead.  The cache's hit is checked too: a layer run in the same
 * group again gives the same bytes.
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
#include "regs/gen/nvdla_regs.h"
#include "regs/regdb.h"

#define SRC 0x80000000u
#define DST 0x80004000u
#define DST_BYTES 0x2000u /* the 4x4x16 output and what a perturbed layer may reach */

/* 2x2 stride-2 max pooling of an 8x8x16 int8 cube (two surfaces) to 4x4x16,
 * with `flip` XORed into register `flip_addr` (0: none), then OP_ENABLE. */
static void program(struct dlasim_dev *dev, uint32_t flip_addr, uint32_t flip)
{
    static const uint32_t in_part = 7u | (7u << 10) | (7u << 20);
    static const uint32_t out_part = 3u | (3u << 10) | (3u << 20);
    const uint32_t kernel = NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH(1) |
                            NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_HEIGHT(1) |
                            NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_STRIDE_WIDTH(1) |
                            NVDLA_PDP_D_POOLING_KERNEL_CFG_0_KERNEL_STRIDE_HEIGHT(1);
    const uint32_t rdma_kernel = NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG_0_KERNEL_WIDTH(1) |
                                 NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG_0_KERNEL_STRIDE_WIDTH(1);
    const struct {
        uint32_t addr, v;
    } regs[] = {
        {NVDLA_PDP_RDMA_D_DATA_CUBE_IN_WIDTH_0, 7},
        {NVDLA_PDP_RDMA_D_DATA_CUBE_IN_HEIGHT_0, 7},
        {NVDLA_PDP_RDMA_D_DATA_CUBE_IN_CHANNEL_0, 15},
        {NVDLA_PDP_RDMA_D_FLYING_MODE_0, NVDLA_PDP_RDMA_D_FLYING_MODE_0_FLYING_MODE_OFF_FLYING},
        {NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_LOW_0, SRC},
        {NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, 0},
        {NVDLA_PDP_RDMA_D_SRC_LINE_STRIDE_0, 0x40},
        {NVDLA_PDP_RDMA_D_SRC_SURFACE_STRIDE_0, 0x200},
        {NVDLA_PDP_RDMA_D_SRC_RAM_CFG_0, 1},
        {NVDLA_PDP_RDMA_D_PARTIAL_WIDTH_IN_0, in_part},
        {NVDLA_PDP_RDMA_D_POOLING_KERNEL_CFG_0, rdma_kernel},
        {NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, 7},
        {NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, 7},
        {NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, 15},
        {NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH_0, 3},
        {NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT_0, 3},
        {NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL_0, 15},
        {NVDLA_PDP_D_OPERATION_MODE_CFG_0,
         NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD(
             NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD_POOLING_METHOD_MAX) |
             NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE(
                 NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_OFF_FLYING)},
        {NVDLA_PDP_D_PARTIAL_WIDTH_IN_0, in_part},
        {NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0, out_part},
        {NVDLA_PDP_D_POOLING_KERNEL_CFG_0, kernel},
        {NVDLA_PDP_D_SRC_BASE_ADDR_LOW_0, SRC},
        {NVDLA_PDP_D_SRC_BASE_ADDR_HIGH_0, 0},
        {NVDLA_PDP_D_SRC_LINE_STRIDE_0, 0x40},
        {NVDLA_PDP_D_SRC_SURFACE_STRIDE_0, 0x200},
        {NVDLA_PDP_D_DST_BASE_ADDR_LOW_0, DST},
        {NVDLA_PDP_D_DST_BASE_ADDR_HIGH_0, 0},
        {NVDLA_PDP_D_DST_LINE_STRIDE_0, 0x20},
        {NVDLA_PDP_D_DST_SURFACE_STRIDE_0, 0x80},
        {NVDLA_PDP_D_DST_RAM_CFG_0, 1},
    };
    int flipped = 0;
    /* program the group the unit executes next (it moves after each layer) */
    wr(dev, NVDLA_PDP_RDMA_S_POINTER_0, (rd(dev, NVDLA_PDP_RDMA_S_POINTER_0) >> 16) & 1u);
    wr(dev, NVDLA_PDP_S_POINTER_0, (rd(dev, NVDLA_PDP_S_POINTER_0) >> 16) & 1u);
    for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
        const int hit = regs[i].addr == flip_addr;
        wr(dev, regs[i].addr, regs[i].v ^ (hit ? flip : 0));
        flipped |= hit;
    }
    if (flip_addr && !flipped) {
        /* a register the layer leaves at its reset value */
        wr(dev, flip_addr, rd(dev, flip_addr) ^ flip);
    }
    wr(dev, NVDLA_PDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_PDP_D_OP_ENABLE_0, 1);
}

struct outcome {
    int rc;
    char err[256];
    uint32_t intr;
    uint8_t dst[DST_BYTES];
    uint32_t regs[128];
};

static struct dlasim_dev *new_dev(void)
{
    struct dlasim_dev *dev = tdev_create(NULL);
    uint8_t in[0x400];
    for (unsigned i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(i * 73u + 5u);
    }
    mem_wr(dev, SRC, in, sizeof(in));
    return dev;
}

static void clear_for_run(struct dlasim_dev *dev)
{
    static const uint8_t zero[DST_BYTES];
    mem_wr(dev, DST, zero, sizeof(zero));
    wr(dev, NVDLA_GLB_S_INTR_STATUS_0, 0xffffffffu);
}

/* Registers of `unit` a test perturbs: software-writable, not OP_ENABLE or
 * S_POINTER. */
static int perturbable(const struct nvdla_reg_desc *r)
{
    return r->write_mask != 0 && r->kind != NVDLA_KIND_OP_ENABLE && r->kind != NVDLA_KIND_POINTER;
}

static void run_and_record(struct dlasim_dev *dev, uint32_t flip_addr, uint32_t flip,
                           struct outcome *o)
{
    memset(o, 0, sizeof(*o));
    clear_for_run(dev);
    program(dev, flip_addr, flip);
    o->rc = dlasim_run(dev);
    if (o->rc) {
        /* without the "layer N: " prefix (the devices ran different counts) */
        const char *msg = dlasim_last_error(dev);
        const char *after = strncmp(msg, "layer ", 6) == 0 ? strstr(msg, ": ") : NULL;
        strncpy(o->err, after ? after + 2 : msg, sizeof(o->err) - 1);
    }
    o->intr = rd(dev, NVDLA_GLB_S_INTR_STATUS_0);
    mem_rd(dev, DST, o->dst, sizeof(o->dst));
    size_t n = 0;
    const enum nvdla_unit units[2] = {NVDLA_UNIT_PDP_RDMA, NVDLA_UNIT_PDP};
    for (int u = 0; u < 2; u++) {
        const struct nvdla_unit_desc *ud = &nvdla_db.units[units[u]];
        for (unsigned i = 0; i < ud->n_regs && n < 128; i++) {
            o->regs[n++] = rd(dev, nvdla_db.regs[ud->first_reg + i].addr);
        }
    }
}

static void assert_same(const struct outcome *a, const struct outcome *b, const char *what)
{
    if (a->rc != b->rc || strcmp(a->err, b->err) != 0 || a->intr != b->intr ||
        memcmp(a->dst, b->dst, sizeof(a->dst)) != 0 ||
        (a->rc == 0 && memcmp(a->regs, b->regs, sizeof(a->regs)) != 0)) {
        fail_msg("%s: a device that ran the unchanged layer before gives rc %d '%s' intr "
                 "0x%x, a new one rc %d '%s' intr 0x%x (output %s)",
                 what, a->rc, a->err, a->intr, b->rc, b->err, b->intr,
                 memcmp(a->dst, b->dst, sizeof(a->dst)) ? "differs" : "equal");
    }
}

/* The unchanged layer again in the same group (a cache hit): same bytes. */
static void test_hit_same_output(void **state)
{
    (void)state;
    struct dlasim_dev *dev = new_dev();
    struct outcome *o = malloc(3 * sizeof(*o));
    assert_non_null(o);
    run_and_record(dev, 0, 0, &o[0]); /* group 0 */
    run_and_record(dev, 0, 0, &o[1]); /* group 1 */
    run_and_record(dev, 0, 0, &o[2]); /* group 0 again: from the cache */
    assert_int_equal(o[0].rc, 0);
    assert_memory_equal(o[0].dst, o[2].dst, sizeof(o[0].dst));
    assert_memory_equal(o[1].dst, o[2].dst, sizeof(o[0].dst));
    /* 2x2 max of the input: element (c, y, x) at surface c/8, line y, atom x */
    uint8_t in[0x400];
    mem_rd(dev, SRC, in, sizeof(in));
    for (unsigned c = 0; c < 16; c++) {
        for (unsigned y = 0; y < 4; y++) {
            for (unsigned x = 0; x < 4; x++) {
                int8_t m = INT8_MIN;
                for (unsigned k = 0; k < 4; k++) {
                    unsigned iy = 2 * y + k / 2, ix = 2 * x + k % 2;
                    int8_t v = (int8_t)in[(c / 8) * 0x200 + iy * 0x40 + ix * 8 + c % 8];
                    m = v > m ? v : m;
                }
                assert_int_equal((int8_t)o[2].dst[(c / 8) * 0x80 + y * 0x20 + x * 8 + c % 8], m);
            }
        }
    }
    free(o);
    dlasim_destroy(dev);
}

/* Every writable field of every PDP / PDP_RDMA register flipped: the warm
 * device does what a new one does. */
static void test_every_field_misses(void **state)
{
    (void)state;
    struct outcome *o = malloc(3 * sizeof(*o));
    assert_non_null(o);
    struct dlasim_dev *ref = new_dev();
    run_and_record(ref, 0, 0, &o[2]); /* the unchanged layer's outcome */
    dlasim_destroy(ref);
    unsigned cases = 0, changed = 0;
    const enum nvdla_unit units[2] = {NVDLA_UNIT_PDP_RDMA, NVDLA_UNIT_PDP};
    for (int u = 0; u < 2; u++) {
        const struct nvdla_unit_desc *ud = &nvdla_db.units[units[u]];
        for (unsigned i = 0; i < ud->n_regs; i++) {
            const struct nvdla_reg_desc *r = &nvdla_db.regs[ud->first_reg + i];
            if (!perturbable(r)) {
                continue;
            }
            for (unsigned f = 0; f < r->n_fields; f++) {
                const struct nvdla_field_desc *fd = &nvdla_db.fields[r->first_field + f];
                const uint32_t flip = 1u << fd->low;
                if (!(r->write_mask & flip)) {
                    continue;
                }
                struct dlasim_dev *warm = new_dev();
                struct dlasim_dev *cold = new_dev();
                struct outcome tmp;
                run_and_record(warm, 0, 0, &tmp); /* group 0 */
                run_and_record(warm, 0, 0, &tmp); /* group 1 */
                run_and_record(warm, r->addr, flip, &o[0]);
                run_and_record(cold, r->addr, flip, &o[1]);
                char what[128];
                snprintf(what, sizeof(what), "%s.%s bit %u", r->name, fd->name, fd->low);
                assert_same(&o[0], &o[1], what);
                cases++;
                changed += o[1].rc != o[2].rc || memcmp(o[1].dst, o[2].dst, DST_BYTES) != 0;
                dlasim_destroy(warm);
                dlasim_destroy(cold);
            }
        }
    }
    /* the perturbations are seen: 28 of the 64 change the outcome (the rest are
     * address bits below the atom, CYA, counters enables...) */
    print_message("%u fields flipped, %u changed the outcome\n", cases, changed);
    assert_true(cases >= 40);
    assert_true(changed >= 20);
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_same_output),
        cmocka_unit_test(test_every_field_misses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
