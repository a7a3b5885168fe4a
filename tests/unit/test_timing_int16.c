/*
 * The cycle model's INT16 costs (src/timing/model.c), checked against the
 * formulas of docs/timing.md worked by hand for nv_large with INT16 feature
 * data switched on: an INT16 atomic operation is Atomic-C x Atomic-K / 2
 * MACs (kernel groups of Atomic-K / 2 kernels, nv_full cmod
 * KERNEL_PER_GROUP_INT16), a memory atom holds Atomic-M / 2 INT16 elements.
 * Not graded on an RTL: the nv_small RTL has no INT16 (docs/timing.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "plan/config.h"
#include "timing/timing.h"

static void config(struct dla_config *c)
{
    char err[256];
    assert_int_equal(dla_config_init(c, "nv_large", err, sizeof(err)), 0);
    assert_int_equal(dla_config_set(c, "NVDLA_FEATURE_DATA_TYPE=INT8|INT16", err, sizeof(err)), 0);
    assert_int_equal(dla_config_set(c, "NVDLA_WEIGHT_DATA_TYPE=INT8|INT16", err, sizeof(err)), 0);
}

static void mem(const struct dla_config *c, struct dla_timing_mem *m)
{
    struct dlasim_timing_profile p;
    assert_int_equal(dlasim_timing_profile_get("rtl-tb", &p), 0);
    dla_timing_mem_of(c, &p, m);
}

/* A 3x3 convolution, 8x8 output, 64 channels, 64 kernels, all weights in
 * CBUF, INT8 or INT16. */
static void conv_layer(struct dla_layer_summary *l, struct dla_timing_traffic *tr, int int16)
{
    uint64_t elem = int16 ? 2 : 1;
    memset(l, 0, sizeof(*l));
    l->kind = DLA_LAYER_CONV;
    l->conv.out_px = 64;
    l->conv.k = 64;
    l->conv.c = 64;
    l->conv.r = 3;
    l->conv.s = 3;
    l->conv.macs = 64ull * 64 * 64 * 9;
    l->conv.weight_bytes = 64ull * 64 * 9 * elem;
    l->conv.weight_banks = 8;
    l->conv.int16 = int16;
    l->sdp.w = 8;
    l->sdp.h = 8;
    l->sdp.c = 64;
    l->sdp.batches = 1;
    l->sdp.int16 = int16;
    tr->rd_bytes = l->conv.weight_bytes + 10ull * 10 * 64 * elem;
    tr->wr_bytes = 64ull * 64 * elem;
}

/* CSC/CMAC busy cycles: kernel groups x kernel positions x channel blocks x
 * the stripes of 64 output pixels (CSC's rule with the configuration's
 * Atomic-K, in INT16 too: 2 x Atomic-K while 4 x Atomic-K remain, the rest
 * once at most 2 x Atomic-K remain, Atomic-K in between), each block at
 * least the Atomic-C x Atomic-K bytes / CBUF width cycles of loading its
 * weights (the same bytes in INT16: half the kernels, two bytes each). */
static void test_int16_conv_halves_mac_rate(void **state)
{
    (void)state;
    struct dla_config c;
    struct dla_timing_mem m;
    config(&c);
    mem(&c, &m);
    struct dla_layer_summary l8, l16;
    struct dla_timing_traffic t8, t16;
    struct dla_timing_cost c8, c16;
    conv_layer(&l8, &t8, 0);
    conv_layer(&l16, &t16, 1);
    dla_timing_model(&c, &l8, &m, &t8, &c8);
    dla_timing_model(&c, &l16, &m, &t16, &c16);
    uint64_t ac = c.mac_atomic_c_size, ak = c.mac_atomic_k_size;
    uint64_t blocks = 9 * ((64 + ac - 1) / ac);
    uint64_t groups8 = (64 + ak - 1) / ak, groups16 = (64 + ak / 2 - 1) / (ak / 2);
    assert_true(ak >= 2 && groups16 == 2 * groups8);
    double wload = (double)(ac * ak) / (double)c.cbuf_bank_width;
    /* nv_large: Atomic-K 32, so the 64 pixels are one stripe of 64 */
    assert_true(ak == 32);
    double stripe = wload > 64.0 ? wload : 64.0;
    assert_true(c8.unit[DLASIM_TU_CONV] == (double)(groups8 * blocks) * stripe);
    assert_true(c16.unit[DLASIM_TU_CONV] == (double)(groups16 * blocks) * stripe);
    assert_true(c16.cycles > c8.cycles);
}

/* A layer without INT16 is costed as before: the flag alone changes it. */
static void test_int8_unchanged_by_config(void **state)
{
    (void)state;
    struct dla_config c, plain;
    char err[256];
    struct dla_timing_mem m, mp;
    config(&c);
    assert_int_equal(dla_config_init(&plain, "nv_large", err, sizeof(err)), 0);
    mem(&c, &m);
    mem(&plain, &mp);
    struct dla_layer_summary l;
    struct dla_timing_traffic t;
    struct dla_timing_cost a, b;
    conv_layer(&l, &t, 0);
    dla_timing_model(&c, &l, &m, &t, &a);
    dla_timing_model(&plain, &l, &mp, &t, &b);
    assert_true(a.cycles == b.cycles);
}

/* SDP from memory, 4x4x4: INT16 atoms hold Atomic-M / 2 elements, so the
 * 4 channels take Atomic-M / 2 lanes per pixel, not Atomic-M. */
static void test_int16_sdp_lanes(void **state)
{
    (void)state;
    struct dla_config c;
    struct dla_timing_mem m;
    config(&c);
    mem(&c, &m);
    uint64_t am = c.memory_atomic_size, half = am / 2;
    struct dla_layer_summary l;
    memset(&l, 0, sizeof(l));
    l.kind = DLA_LAYER_SDP;
    l.sdp.w = 4;
    l.sdp.h = 4;
    l.sdp.c = 4;
    l.sdp.batches = 1;
    l.sdp.int16 = 1;
    struct dla_timing_traffic t = {16, 16};
    struct dla_timing_cost k;
    dla_timing_model(&c, &l, &m, &t, &k);
    double want16 = 16.0 * (double)half / (double)c.sdp_bs_throughput;
    assert_true(k.unit[DLASIM_TU_SDP] == want16);
    l.sdp.int16 = 0;
    dla_timing_model(&c, &l, &m, &t, &k);
    assert_true(k.unit[DLASIM_TU_SDP] == 16.0 * (double)am / (double)c.sdp_bs_throughput);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int16_conv_halves_mac_rate),
        cmocka_unit_test(test_int8_unchanged_by_config),
        cmocka_unit_test(test_int16_sdp_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
