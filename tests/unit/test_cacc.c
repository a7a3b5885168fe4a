/*
 * Unit tests of CACC's delivery (src/sim/nvdla/cacc.c): rounding of the
 * accumulators by CLIP_TRUNCATE and saturation to int32, for int32 sums
 * (dla_cacc_deliver_i32 and each of its loop variants), 34-bit sums
 * (dla_cacc_deliver_i64) and the 48-bit accumulator of INT16 layers
 * (dla_cacc_deliver_int16), against a reference written here.
 *
 * The reference follows the RTL's formulation (vmod/nvdla/cacc/
 * NV_NVDLA_CACC_CALC_int8.v): the sum with 16 zero bits appended is shifted
 * right arithmetically by CLIP_TRUNCATE; bits [15] of the result is the
 * guide bit, bits [14:0] the sticky bits; a non-negative value rounds up on
 * the guide bit, a negative one on guide and sticky; the result saturates to
 * int32 and each saturated element is counted.  And where the output
 * cubes go in their buffer (dla_cacc_cube_place).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "sim/nvdla/cbuf.h"

/* floor(a / 2^t) by division (no shift of a negative value). */
static int64_t floor_div_pow2(int64_t a, unsigned t)
{
    int64_t p = (int64_t)1 << t;
    int64_t q = a / p;
    return (a % p != 0 && a < 0) ? q - 1 : q;
}

static int32_t ref_round(int64_t v, unsigned t, uint32_t *sat)
{
    int64_t shifted = floor_div_pow2(v * 65536, t); /* {v, 16'b0} >>> t */
    int64_t frac = shifted - floor_div_pow2(shifted, 16) * 65536;
    int64_t ip = floor_div_pow2(shifted, 16);
    int guide = (int)(frac >> 15);
    int sticky = (frac & 0x7fff) != 0;
    int64_t r = ip + (guide && (v >= 0 || sticky));
    if (r > INT32_MAX) {
        (*sat)++;
        return INT32_MAX;
    }
    if (r < INT32_MIN) {
        (*sat)++;
        return INT32_MIN;
    }
    return (int32_t)r;
}

/* Random values with every magnitude, plus values around the rounding
 * points of truncation t. */
static int64_t random_value(uint64_t *s, unsigned t, int64_t lo, int64_t hi)
{
    uint64_t r = splitmix64_next(s);
    int64_t v;
    switch (r % 4) {
    case 0:
        v = (int64_t)(splitmix64_next(s) >> (splitmix64_next(s) % 64));
        break;
    case 1: {
        /* k * 2^(t-1) + small: exactly half, just below and above */
        int64_t k = (int64_t)(splitmix64_next(s) % 2001) - 1000;
        int64_t half = t ? (int64_t)1 << (t - 1) : 1;
        v = k * half + (int64_t)(splitmix64_next(s) % 5) - 2;
        break;
    }
    case 2:
        v = (int64_t)(splitmix64_next(s) % 512) - 256;
        break;
    default:
        v = (r & 8) ? hi - (int64_t)(splitmix64_next(s) % 70000)
                    : lo + (int64_t)(splitmix64_next(s) % 70000);
        break;
    }
    if (r & 16) {
        v = -v;
    }
    return v > hi ? hi : (v < lo ? lo : v);
}

static void check_i32(unsigned t, size_t n, enum dla_lanes_isa isa, uint64_t *s)
{
    struct dla_cacc_cfg a;
    memset(&a, 0, sizeof(a));
    a.clip_truncate = t;
    int32_t *got = malloc(n * sizeof(*got));
    int32_t *in = malloc(n * sizeof(*in));
    assert_non_null(got);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++) {
        in[i] = (int32_t)random_value(s, t, INT32_MIN, INT32_MAX);
    }
    in[0] = INT32_MIN;
    if (n > 1) {
        in[1] = INT32_MAX;
    }
    memcpy(got, in, n * sizeof(*in));
    uint32_t sat = dla_cacc_deliver_i32_isa(&a, got, n, isa);
    uint32_t want_sat = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t want = ref_round(in[i], t, &want_sat);
        if (got[i] != want) {
            fail_msg("%s t=%u n=%zu element %zu: %d -> %d, reference %d",
                     dla_lanes_isa_name(isa), t, n, i, in[i], got[i], want);
        }
    }
    assert_int_equal(sat, want_sat);
    free(in);
    free(got);
}

/* Every truncation, lengths around the vector blocks, every loop variant
 * this CPU runs. */
static void test_deliver_i32(void **state)
{
    (void)state;
    uint64_t s = 0xcacc0001u;
    static const size_t lens[] = { 1, 2, 31, 32, 33, 64, 100, 1000, 4099 };
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
        if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
            continue;
        }
        for (unsigned t = 0; t < 32; t++) {
            for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
                check_i32(t, lens[i], (enum dla_lanes_isa)isa, &s);
            }
        }
    }
}

/* 34-bit sums: rounding and saturation to int32 with its count. */
static void test_deliver_i64(void **state)
{
    (void)state;
    uint64_t s = 0xcacc0002u;
    const int64_t hi = ((int64_t)1 << 33) - 1, lo = -((int64_t)1 << 33);
    const size_t n = 3000;
    int64_t *in = malloc(n * sizeof(*in));
    int32_t *got = malloc(n * sizeof(*got));
    assert_non_null(in);
    assert_non_null(got);
    for (unsigned t = 0; t < 32; t++) {
        struct dla_cacc_cfg a;
        memset(&a, 0, sizeof(a));
        a.clip_truncate = t;
        for (size_t i = 0; i < n; i++) {
            in[i] = random_value(&s, t, lo, hi);
        }
        in[0] = hi;
        in[1] = lo;
        in[2] = (int64_t)INT32_MAX * 2 + 1; /* rounds up to 2^31 at t = 1 */
        uint32_t sat = dla_cacc_deliver_i64(&a, in, got, n);
        uint32_t want_sat = 0;
        for (size_t i = 0; i < n; i++) {
            int32_t want = ref_round(in[i], t, &want_sat);
            if (got[i] != want) {
                fail_msg("t=%u element %zu: %lld -> %d, reference %d", t, i, (long long)in[i],
                         got[i], want);
            }
        }
        assert_int_equal(sat, want_sat);
        assert_true(t > 1 || want_sat > 0);
    }
    free(in);
    free(got);
}

/* INT16 layers (dla_cacc_deliver_int16): exact sums beyond 48 bits clamp
 * to the 48-bit accumulator (vmod nv_full NV_NVDLA_CACC_CALC_int16.v
 * i_sat_pd3), then round and saturate as CALC_int8 does. */
static void test_deliver_int16(void **state)
{
    (void)state;
    uint64_t s = 0xcacc0003u;
    const int64_t hi = ((int64_t)1 << 47) - 1, lo = -((int64_t)1 << 47);
    const size_t n = 3000;
    int64_t *in = malloc(n * sizeof(*in));
    int32_t *got = malloc(n * sizeof(*got));
    assert_non_null(in);
    assert_non_null(got);
    for (unsigned t = 0; t < 32; t++) {
        struct dla_cacc_cfg a;
        memset(&a, 0, sizeof(a));
        a.clip_truncate = t;
        for (size_t i = 0; i < n; i++) {
            in[i] = random_value(&s, t, 4 * lo, 4 * hi);
        }
        in[0] = hi + 1;
        in[1] = lo - 1;
        in[2] = -(((int64_t)1 << 20) + 1); /* sticky bit below the 15-bit window at t = 21 */
        uint32_t sat = dla_cacc_deliver_int16(&a, in, got, n);
        uint32_t want_sat = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t v = in[i] > hi ? hi : (in[i] < lo ? lo : in[i]);
            int32_t want = ref_round(v, t, &want_sat);
            if (got[i] != want) {
                fail_msg("t=%u element %zu: %lld -> %d, reference %d", t, i, (long long)in[i],
                         got[i], want);
            }
        }
        assert_int_equal(sat, want_sat);
        assert_true(t > 16 || want_sat > 0);
    }
    free(in);
    free(got);
}

/* Hand-computed values: the sticky window past 16 bits (-65535 >> 17 is -1
 * in the RTL, 0 with exact rounding), halves of each sign. */
static void test_known_values(void **state)
{
    (void)state;
    struct dla_cacc_cfg a;
    memset(&a, 0, sizeof(a));
    int32_t v[6] = { -65535, 65536, -3, 3, -5, 5 };
    a.clip_truncate = 17;
    assert_int_equal(dla_cacc_deliver_i32(&a, v, 2), 0);
    assert_int_equal(v[0], -1);
    assert_int_equal(v[1], 1);
    a.clip_truncate = 1;
    assert_int_equal(dla_cacc_deliver_i32(&a, v + 2, 4), 0);
    assert_int_equal(v[2], -2); /* -1.5: sticky clear, guide set -> -2 */
    assert_int_equal(v[3], 2);  /* 1.5 -> 2 */
    assert_int_equal(v[4], -3); /* -2.5 -> -3 */
    assert_int_equal(v[5], 3);
}

/* CACC's output cubes (dla_cacc_cube_place): the split element of every
 * cube at one address while the buffer holds them, each cube inside the
 * buffer, the middle line-aligned; a larger side grows the buffer, and the
 * split then sits at the new middle. */
static void test_cube_place(void **state)
{
    (void)state;
    struct dla_conv_state s;
    memset(&s, 0, sizeof(s));
    /* ResNet-50-like shapes: 56x8x256, 56x8x64, 28x28x512, 7x7x8 (split 0) */
    const uint64_t shapes[][2] = { { 56 * 8 * 256, 56 * 8 * 128 }, { 56 * 8 * 64, 56 * 8 * 32 },
                                   { 28 * 28 * 512, 28 * 28 * 256 }, { 7 * 7 * 8, 0 } };
    const int32_t *mid = NULL;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const uint64_t elems = shapes[i][0], below = shapes[i][1];
            int32_t *cube = dla_cacc_cube_place(&s, elems, below);
            assert_non_null(cube);
            assert_true((uintptr_t)(s.cube + s.cube_half) % 64 == 0);
            assert_ptr_equal(cube + below, s.cube + s.cube_half);
            assert_true(cube >= s.cube && cube + elems <= s.cube + 2 * s.cube_half);
            for (uint64_t e = 0; e < elems; e += 4093) { /* every part is writable */
                cube[e] = (int32_t)e;
            }
            if (round == 1) { /* grown to the largest in round 0: one middle */
                assert_ptr_equal(cube + below, mid);
            }
        }
        mid = s.cube + s.cube_half;
    }
    free(s.cube);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deliver_i32),
        cmocka_unit_test(test_deliver_i64),
        cmocka_unit_test(test_deliver_int16),
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_cube_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
