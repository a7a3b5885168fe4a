/*
 * SDP's decode cache (src/sim/nvdla/sdp.c, "decode cache"): a layer whose
 * register words, but for its base addresses, ran before reuses their
 * decode, so the key must hold every word the decode reads and the base
 * addresses must be taken anew every layer.  Proved behaviourally and
 * table-driven from the register database, as tests/device/
 * test_decode_cache.c does for PDP: for every software-writable field of
 * every SDP and SDP_RDMA register (not OP_ENABLE / S_POINTER), a device that
 * has just run the unchanged layer twice in each group (its cache holds it) runs
 * the layer with that field's low bit flipped, and must do exactly what a
 * new device (empty cache) does: same status, error text, interrupt bits,
 * output bytes and register values.  A cache that skipped a word of its key
 * (or kept an address from the cached layer) would replay the unchanged
 * layer instead.  The hit is checked against an independent reference
 * (tests/common/sdpref.c), also with only the base addresses moved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/sdpref.h"
#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"
#include "regs/regdb.h"

#define SRC 0x80000000u
#define OPS 0x80001000u /* BS operands: ALU then MUL byte of each channel */
#define DST 0x80004000u
#define MOVED 0x800u    /* the second place of each cube (test_addresses_taken_anew) */
#define DST_BYTES 0x1000u
#define W 4u
#define H 4u
#define C 16u

/* BS with per-kernel ALU (sum, shifted) and MUL operands from memory,
 * truncation and ReLU; BN and EW bypassed; converter scale 3, shift 2. */
static const struct sdp_x bs = {
    .alu_src = 1, .alu_shift = 2, .mul_src = 1, .mul_shift = 3,
};

/* The 4x4x16 int8 layer from memory to memory with `flip` XORed into
 * register `flip_addr` (0: none), its cubes `moved` bytes further, the
 * converter's scale and shift values exchanged when `swap`, then OP_ENABLE
 * in the group each unit executes next. */
static void program(struct dlasim_dev *dev, uint32_t flip_addr, uint32_t flip, uint32_t moved,
                    int swap)
{
    const uint32_t rdma_cfg = sdp_rdma_cfg(0, NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_BOTH, 0,
                                           NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_KERNEL);
    const struct {
        uint32_t addr, v;
    } regs[] = {
        {NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, 0},
        {NVDLA_SDP_RDMA_D_BRDMA_CFG_0, rdma_cfg},
        {NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0, OPS + moved},
        {NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH_0, 0},
        {NVDLA_SDP_RDMA_D_NRDMA_CFG_0, sdp_rdma_cfg(1, 0, 0, 0)},
        {NVDLA_SDP_RDMA_D_ERDMA_CFG_0, sdp_rdma_cfg(1, 0, 0, 0)},
        {NVDLA_SDP_D_DATA_CUBE_WIDTH_0, W - 1},
        {NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, H - 1},
        {NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, C - 1},
        {NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, DST + moved},
        {NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, 0},
        {NVDLA_SDP_D_DST_LINE_STRIDE_0, 0x20},
        {NVDLA_SDP_D_DST_SURFACE_STRIDE_0, 0x80},
        {NVDLA_SDP_D_DST_DMA_CFG_0, 1},
        {NVDLA_SDP_D_FEATURE_MODE_CFG_0, 0},
        {NVDLA_SDP_D_DATA_FORMAT_0, 0},
        {NVDLA_SDP_D_DP_BN_CFG_0, 1},
        {NVDLA_SDP_D_DP_EW_CFG_0, 1},
        {NVDLA_SDP_D_CVT_OFFSET_0, 0},
        {NVDLA_SDP_D_CVT_SCALE_0, swap ? 2u : 3u},
        {NVDLA_SDP_D_CVT_SHIFT_0, swap ? 3u : 2u},
    };
    /* program the group each unit executes next (it moves after each layer) */
    wr(dev, NVDLA_SDP_RDMA_S_POINTER_0, (rd(dev, NVDLA_SDP_RDMA_S_POINTER_0) >> 16) & 1u);
    wr(dev, NVDLA_SDP_S_POINTER_0, (rd(dev, NVDLA_SDP_S_POINTER_0) >> 16) & 1u);
    sdp_program_src(dev, W, H, C, SRC + moved, 0x20, 0x80);
    sdp_program_x(dev, 0, &bs);
    for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
        wr(dev, regs[i].addr, regs[i].v);
    }
    if (flip_addr) { /* after the layer's own value, or its reset value */
        wr(dev, flip_addr, rd(dev, flip_addr) ^ flip);
    }
    wr(dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_SDP_D_OP_ENABLE_0, 1);
}

struct outcome {
    int rc;
    char err[256];
    uint32_t intr;
    uint8_t dst[DST_BYTES];
    uint32_t regs[192];
};

/* Input and operands at both places (the moved copies differ). */
static struct dlasim_dev *new_dev(void)
{
    struct dlasim_dev *dev = tdev_create(NULL);
    uint8_t in[0x100], ops[2 * C];
    for (uint32_t m = 0; m <= MOVED; m += MOVED) {
        for (unsigned i = 0; i < sizeof(in); i++) {
            in[i] = (uint8_t)(i * 73u + 5u + m / 64u);
        }
        for (unsigned i = 0; i < sizeof(ops); i++) {
            ops[i] = (uint8_t)(i * 29u + 3u + m / 32u);
        }
        mem_wr(dev, SRC + m, in, sizeof(in));
        mem_wr(dev, OPS + m, ops, sizeof(ops));
    }
    return dev;
}

static void clear_for_run(struct dlasim_dev *dev)
{
    static const uint8_t zero[DST_BYTES];
    mem_wr(dev, DST, zero, sizeof(zero));
    wr(dev, NVDLA_GLB_S_INTR_STATUS_0, 0xffffffffu);
}

static int perturbable(const struct nvdla_reg_desc *r)
{
    return r->write_mask != 0 && r->kind != NVDLA_KIND_OP_ENABLE && r->kind != NVDLA_KIND_POINTER;
}

static void run_and_record(struct dlasim_dev *dev, uint32_t flip_addr, uint32_t flip,
                           uint32_t moved, int swap, struct outcome *o)
{
    memset(o, 0, sizeof(*o));
    clear_for_run(dev);
    program(dev, flip_addr, flip, moved, swap);
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
    const enum nvdla_unit units[2] = {NVDLA_UNIT_SDP_RDMA, NVDLA_UNIT_SDP};
    for (int u = 0; u < 2; u++) {
        const struct nvdla_unit_desc *ud = &nvdla_db.units[units[u]];
        for (unsigned i = 0; i < ud->n_regs && n < 192; i++) {
            const struct nvdla_reg_desc *r = &nvdla_db.regs[ud->first_reg + i];
            /* not the LUT port: a read of it moves its address */
            if (r->kind != NVDLA_KIND_LUT_ACCESS_CFG && r->kind != NVDLA_KIND_LUT_ACCESS_DATA) {
                o->regs[n++] = rd(dev, r->addr);
            }
        }
    }
}

static void assert_same(const struct outcome *a, const struct outcome *b, const char *what)
{
    if (a->rc != b->rc || strcmp(a->err, b->err) != 0 || a->intr != b->intr ||
        memcmp(a->dst, b->dst, sizeof(a->dst)) != 0 ||
        (a->rc == 0 && a->intr != 0 && memcmp(a->regs, b->regs, sizeof(a->regs)) != 0)) {
        /* (registers only of a layer that ran: one left waiting, e.g. for a
         * convolution in flying mode, leaves each device's history) */
        fail_msg("%s: a device that ran the unchanged layer before gives rc %d '%s' intr "
                 "0x%x, a new one rc %d '%s' intr 0x%x (output %s)",
                 what, a->rc, a->err, a->intr, b->rc, b->err, b->intr,
                 memcmp(a->dst, b->dst, sizeof(a->dst)) ? "differs" : "equal");
    }
}

/* The unchanged layer twice in each group: the cache keeps a layer at its
 * second operation in a group, so both groups' words are then cached. */
static void warm_up(struct dlasim_dev *dev)
{
    struct outcome *o = malloc(sizeof(*o));
    assert_non_null(o);
    for (int i = 0; i < 4; i++) {
        run_and_record(dev, 0, 0, 0, 0, o);
        assert_int_equal(o->rc, 0);
    }
    free(o);
}

/* The reference output of the layer whose cubes are `moved` bytes further
 * (surface c/8, line y, atom x, lane c%8), compared with dst. */
static void check_reference(struct dlasim_dev *dev, uint32_t moved, const uint8_t *dst)
{
    uint8_t in[0x100], ops[2 * C];
    mem_rd(dev, SRC + moved, in, sizeof(in));
    mem_rd(dev, OPS + moved, ops, sizeof(ops));
    for (unsigned c = 0; c < C; c++) {
        for (unsigned y = 0; y < H; y++) {
            for (unsigned x = 0; x < W; x++) {
                const size_t at = (c / 8) * 0x80 + y * 0x20 + x * 8 + c % 8;
                int sat = 0;
                int64_t v = ref_sdp_x(&bs, (int8_t)in[at], (int8_t)ops[2 * c], (int8_t)ops[2 * c + 1]);
                v = clamp_bits(ref_sdp_cvt(v, 0, 3, 2, &sat), 8);
                assert_int_equal((int8_t)dst[(moved ? MOVED : 0) + at], (int8_t)v);
            }
        }
    }
}

/* The unchanged layer again in the same group (a cache hit): same bytes,
 * the reference's. */
static void test_hit_same_output(void **state)
{
    (void)state;
    struct dlasim_dev *dev = new_dev();
    struct outcome *o = malloc(3 * sizeof(*o));
    assert_non_null(o);
    run_and_record(dev, 0, 0, 0, 0, &o[0]); /* group 0 */
    run_and_record(dev, 0, 0, 0, 0, &o[1]); /* group 1 */
    warm_up(dev);
    run_and_record(dev, 0, 0, 0, 0, &o[2]); /* group 0 again: from the cache */
    assert_int_equal(o[0].rc, 0);
    assert_memory_equal(o[0].dst, o[2].dst, sizeof(o[0].dst));
    assert_memory_equal(o[1].dst, o[2].dst, sizeof(o[0].dst));
    check_reference(dev, 0, o[2].dst);
    free(o);
    dlasim_destroy(dev);
}

/* The same words but for the base addresses of the input, the operands and
 * the output (the operations of one layer): the cached decode with this
 * layer's addresses, as the reference computes from the moved cubes. */
static void test_addresses_taken_anew(void **state)
{
    (void)state;
    struct dlasim_dev *dev = new_dev();
    struct outcome *o = malloc(2 * sizeof(*o));
    assert_non_null(o);
    warm_up(dev);
    run_and_record(dev, 0, 0, MOVED, 0, &o[1]); /* a hit, every address moved */
    assert_int_equal(o[1].rc, 0);
    check_reference(dev, MOVED, o[1].dst);
    /* the first place is untouched (clear_for_run zeroed it) */
    for (unsigned i = 0; i < MOVED; i++) {
        assert_int_equal(o[1].dst[i], 0);
    }
    free(o);
    dlasim_destroy(dev);
}

/* Every writable field of every SDP / SDP_RDMA register flipped: the warm
 * device does what a new one does. */
static void test_every_field_misses(void **state)
{
    (void)state;
    struct outcome *o = malloc(3 * sizeof(*o));
    assert_non_null(o);
    struct dlasim_dev *ref = new_dev();
    run_and_record(ref, 0, 0, 0, 0, &o[2]); /* the unchanged layer's outcome */
    dlasim_destroy(ref);
    unsigned cases = 0, changed = 0;
    const enum nvdla_unit units[2] = {NVDLA_UNIT_SDP_RDMA, NVDLA_UNIT_SDP};
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
                warm_up(warm);
                run_and_record(warm, r->addr, flip, 0, 0, &o[0]);
                run_and_record(cold, r->addr, flip, 0, 0, &o[1]);
                char what[160];
                snprintf(what, sizeof(what), "%s.%s bit %u", r->name, fd->name, fd->low);
                assert_same(&o[0], &o[1], what);
                cases++;
                changed += o[1].rc != o[2].rc || memcmp(o[1].dst, o[2].dst, DST_BYTES) != 0;
                dlasim_destroy(warm);
                dlasim_destroy(cold);
            }
        }
    }
    print_message("%u fields flipped, %u changed the outcome\n", cases, changed);
    assert_true(cases >= 100);
    assert_true(changed >= 30); /* 34 of 135 when written */
    free(o);
}

/* Two words of the key exchanged (the converter's scale 3 and shift 2):
 * a key with the same words in another order (the same sum, the same
 * xor).  The warm device does what a new one does: the words are compared
 * each at its place. */
static void test_exchanged_words(void **state)
{
    (void)state;
    struct outcome *o = malloc(2 * sizeof(*o));
    assert_non_null(o);
    struct dlasim_dev *warm = new_dev();
    struct dlasim_dev *cold = new_dev();
    warm_up(warm);
    run_and_record(warm, 0, 0, 0, 1, &o[0]);
    run_and_record(cold, 0, 0, 0, 1, &o[1]);
    assert_int_equal(o[1].rc, 0);
    assert_same(&o[0], &o[1], "CVT_SCALE and CVT_SHIFT exchanged");
    struct outcome *u = malloc(sizeof(*u));
    assert_non_null(u);
    run_and_record(cold, 0, 0, 0, 0, u);
    assert_memory_not_equal(u->dst, o[1].dst, DST_BYTES); /* the exchange is seen */
    free(u);
    free(o);
    dlasim_destroy(warm);
    dlasim_destroy(cold);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_same_output),
        cmocka_unit_test(test_addresses_taken_anew),
        cmocka_unit_test(test_every_field_misses),
        cmocka_unit_test(test_exchanged_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
