/*
 * The model input's quantization (src/compiler/quant_io.h): every code
 * against a reference written from the rule itself, per element with the
 * branches of the compiler's original loop -- x * inv in float, halves away
 * from zero, saturation to [-128, 127] -- on values at and beside every
 * rounding boundary, beyond saturation, signed zeros, subnormals and random
 * bit patterns, at every length and offset around the 16- and 32-value blocks; NaN
 * and infinities found wherever they sit.  Channel rows placed into atoms
 * (dlc_rows_to_atoms) against the byte-by-byte placement.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "compiler/quant_io.h"

/* The rule as model.c wrote it per element: round half away from zero,
 * add the code of 0, saturate (the float clamp keeps (int) in range). */
static int8_t reference(float x, float inv, int zero)
{
    float v = x * inv;
    v = v < -1e6f ? -1e6f : v > 1e6f ? 1e6f : v;
    int r = (int)(v < 0 ? v - 0.5f : v + 0.5f) + zero;
    return (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
}

static float any_finite(uint64_t *rng, float scale)
{
    uint64_t r = splitmix64_next(rng);
    float f;
    uint32_t u = (uint32_t)(r >> 32);
    switch (r % 7) {
    case 0:
        memcpy(&f, &u, sizeof f);
        return isfinite(f) ? f : 0.0f;
    case 1: /* a rounding boundary k + 0.5 steps, exactly or one ulp beside */
        f = ((float)((int)(u % 600) - 300) + 0.5f) * scale;
        return r & 8 ? nextafterf(f, r & 16 ? INFINITY : -INFINITY) : f;
    case 2:
        return ((float)((int)(u % 100000) - 50000)) * 1e-3f;
    case 3:
        return r & 8 ? -0.0f : 0.0f;
    case 4:
        return (r & 8 ? -1.0f : 1.0f) * FLT_MIN * (float)(u % 5) / 4.0f; /* subnormal */
    case 5:
        return (r & 8 ? -1.0f : 1.0f) * FLT_MAX / (float)(1 + u % 3); /* saturates */
    default:
        return (float)((int)(u % 256) - 128) * scale;
    }
}

/* 40 rounds of random values at one scale and code of 0: lengths and
 * offsets around the blocks of 16, then the whole array. */
static void check_codes(float scale, int zero, uint64_t *rng, float *x, int8_t *q, int8_t *want,
                        size_t N)
{
    float inv = 1.0f / scale;
    for (int round = 0; round < 40; round++) {
        for (size_t i = 0; i < N; i++) {
            x[i] = any_finite(rng, scale);
            want[i] = reference(x[i], inv, zero);
        }
        size_t off = (size_t)round % 17, len = round < 39 ? (size_t)round * 3 % 53 : N - off;
        for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) { /* each variant the CPU runs */
            if (!dla_lanes_supported((enum dla_lanes_isa)isa)) {
                continue;
            }
            memset(q, 0x5a, N + 64);
            assert_int_equal(dlc_quantize_s8_isa((enum dla_lanes_isa)isa, x + off, q, len, inv,
                                                 zero), 0);
            assert_memory_equal(q, want + off, len);
            assert_int_equal((uint8_t)q[len], 0x5a); /* nothing written past n */
        }
    }
}

static void test_codes_match_reference(void **state)
{
    (void)state;
    enum { N = 4099 };
    float *x = malloc(N * sizeof *x);
    int8_t *q = malloc(N + 64), *want = malloc(N);
    assert_true(x && q && want);
    uint64_t rng = 7;
    static const float scales[] = { 1.0f, 0.0078125f, 0.0844f, 0.0036f, 3.1f, 1e-30f };
    static const int zeros[] = { 0, -128, 127, -1, 1, 37, -100 }; /* affine codes of 0 */
    for (size_t z = 0; z < sizeof zeros / sizeof zeros[0]; z++) {
        for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
            check_codes(scales[s], zeros[z], &rng, x, q, want, N);
        }
    }
    free(x);
    free(q);
    free(want);
}

static void test_nonfinite_found(void **state)
{
    (void)state;
    enum { N = 70 };
    float x[N];
    int8_t q[N];
    const float bad[] = { NAN, INFINITY, -INFINITY, -NAN };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        for (size_t at = 0; at < N; at++) {
            for (size_t i = 0; i < N; i++) {
                x[i] = (float)i - 35.0f;
            }
            x[at] = bad[b];
            for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) {
                if (dla_lanes_supported((enum dla_lanes_isa)isa)) {
                    assert_int_not_equal(
                        dlc_quantize_s8_isa((enum dla_lanes_isa)isa, x, q, N, 1.0f, 0), 0);
                }
            }
            assert_int_equal(dlc_first_nonfinite(x, N), (int64_t)at);
        }
    }
    for (size_t i = 0; i < N; i++) {
        x[i] = FLT_MAX * (i & 1 ? -1.0f : 1.0f);
    }
    for (int isa = 0; isa < DLA_LANES_ISA_COUNT; isa++) { /* large but finite */
        if (dla_lanes_supported((enum dla_lanes_isa)isa)) {
            assert_int_equal(dlc_quantize_s8_isa((enum dla_lanes_isa)isa, x, q, N, 1e-3f, 0), 0);
            assert_int_equal(q[0], 127);
            assert_int_equal(q[1], -128);
        }
    }
    assert_int_equal(dlc_first_nonfinite(x, N), -1);
}

/* Every channel count up to 8, widths around the 16-pixel transposes,
 * atoms of 8 and 32 bytes: a pixel's first 8 bytes are its n channels'
 * then zeros, the atom's other bytes untouched. */
static void test_rows_to_atoms_places_each_byte(void **state)
{
    (void)state;
    uint64_t rng = 7;
    int8_t rows[8 * 80];
    uint8_t got[80 * 32], want[80 * 32];
    for (size_t i = 0; i < sizeof rows; i++) {
        rows[i] = (int8_t)splitmix64_next(&rng);
    }
    static const size_t atoms[] = { 8, 32 };
    for (size_t a = 0; a < 2; a++) {
        for (unsigned n = 1; n <= 8; n++) {
            for (size_t w = 0; w <= 70; w++) {
                memset(got, 0xa5, sizeof got);
                memset(want, 0xa5, sizeof want);
                for (size_t x = 0; x < w; x++) {
                    for (unsigned i = 0; i < 8; i++) {
                        want[x * atoms[a] + i] = i < n ? (uint8_t)rows[i * 80 + x] : 0;
                    }
                }
                dlc_rows_to_atoms(rows, 80, n, w, atoms[a], got);
                assert_memory_equal(got, want, sizeof got);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_match_reference),
        cmocka_unit_test(test_nonfinite_found),
        cmocka_unit_test(test_rows_to_atoms_places_each_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
