/*
 * The float reference's micro-kernel variants (src/kernels/sgemm.c:
 * generic C, AVX2+FMA, AVX-512F) give the same bits: every variant this CPU
 * runs against the generic one, byte for byte, on random shapes around the
 * tiles (6x16, 8x32: ragged row and column edges), reductions across the
 * 256-step blocks (first and later blocks), bias or none, row strides with
 * padding that must stay untouched, Relu and Clip (also Clip with lo > hi,
 * which no vector register can do), inputs with zeros of both signs, exact
 * cancellations and subnormals; as products and as convolutions; on the
 * calling thread and on a team.  Likewise the depthwise convolution's row
 * loops (src/kernels/sdw.c: generic, AVX2, AVX-512F's 16-column blocks),
 * also against dla_sdw_ref.  The calibration scales, and so every INT8
 * output, come from these floats.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/rng.h"
#include "common/team.h"
#include "kernels/sdw.h"
#include "kernels/sgemm.h"

static uint64_t rng = 0x32a;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng, lo, hi);
}

/* Mostly values in [-1, 1); some zeros of either sign, small integers (sums
 * that cancel exactly) and subnormals. */
static float rnd_float(void)
{
    switch (rnd(0, 15)) {
    case 0:
        return 0.0f;
    case 1:
        return -0.0f;
    case 2:
        return (float)((int)rnd(0, 6) - 3);
    case 3:
        return (float)((int)rnd(1, 1000) - 500) * 1e-41f;
    default:
        return (float)rnd(0, 0xFFFFFF) / 8388608.0f - 1.0f;
    }
}

static float *rnd_array(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        p[i] = rnd_float();
    }
    return p;
}

static const struct dla_sact acts[] = {
    { DLA_SACT_NONE, 0, 0 },         { DLA_SACT_RELU, 0, 0 },
    { DLA_SACT_CLIP, 0.0f, 6.0f },    { DLA_SACT_CLIP, -0.25f, 0.25f },
    { DLA_SACT_CLIP, 0.5f, -0.5f }, /* lo > hi: the scalar path */
};
enum { N_ACTS = sizeof acts / sizeof acts[0] };

static const char *const variant_names[] = { "generic", "avx2", "avx512" };

/* One product through every supported variant, on no team and on a team of
 * 2; each result byte for byte that of the generic kernel on no team. */
static void product_case(struct dla_team *team, int64_t M, int64_t N, int64_t K, int64_t pad,
                         int with_bias, const struct dla_sact *act)
{
    int64_t lda = K + pad, ldb = N + pad, ldc = N + pad;
    size_t csz = (size_t)(M * ldc);
    float *A = rnd_array((size_t)(M * lda)), *B = rnd_array((size_t)(K * ldb));
    float *bias = with_bias ? rnd_array((size_t)M) : NULL;
    float *want = malloc(csz * sizeof(float)), *got = malloc(csz * sizeof(float));
    assert_true(want && got);
    memset(want, 0x7f, csz * sizeof(float)); /* the padding columns must stay as they are */
    assert_int_equal(dla_sgemm_variant_on(DLA_SGEMM_GENERIC, NULL, M, N, K, A, lda, B, ldb, bias,
                                          want, ldc, act),
                     0);
    for (int v = 0; v < DLA_SGEMM_VARIANTS; v++) {
        if (!dla_sgemm_supported((enum dla_sgemm_variant)v)) {
            continue;
        }
        for (int on_team = 0; on_team < 2; on_team++) {
            memset(got, 0x7f, csz * sizeof(float));
            assert_int_equal(dla_sgemm_variant_on((enum dla_sgemm_variant)v, on_team ? team : NULL,
                                                  M, N, K, A, lda, B, ldb, bias, got, ldc, act),
                             0);
            if (memcmp(want, got, csz * sizeof(float)) != 0) {
                fail_msg("sgemm %s team %d: %ldx%ldx%ld pad %ld bias %d act %d (%g, %g) differs "
                         "from generic",
                         variant_names[v], on_team, (long)M, (long)N, (long)K, (long)pad,
                         with_bias, (int)act->kind, act->lo, act->hi);
            }
        }
    }
    free(A), free(B), free(bias), free(want), free(got);
}

static void test_products_random(void **state)
{
    (void)state;
    struct dla_team *team = dla_team_create(2);
    assert_non_null(team);
    for (int i = 0; i < 300; i++) {
        int64_t M = rnd(1, i % 4 ? 20 : 70), N = rnd(1, i % 3 ? 70 : 600);
        int64_t K = i % 5 ? rnd(1, 40) : rnd(200, 800);
        product_case(team, M, N, K, rnd(0, 3), (int)rnd(0, 1), &acts[rnd(0, N_ACTS - 1)]);
    }
    dla_team_destroy(team);
}

/* The exact tile and block edges of both tile shapes. */
static void test_products_edges(void **state)
{
    (void)state;
    static const int64_t dims[][3] = {
        { 6, 16, 256 }, { 8, 32, 256 }, { 7, 17, 257 }, { 9, 33, 255 }, { 5, 15, 512 },
        { 1, 1, 513 },  { 16, 48, 1 },  { 24, 64, 2 },  { 48, 256, 300 }, { 13, 257, 40 },
        { 8, 16, 3 },   { 8, 31, 5 },   { 64, 196, 576 }, { 3, 5000, 2 }, { 40, 49, 1024 },
    };
    struct dla_team *team = dla_team_create(2);
    assert_non_null(team);
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        for (int a = 0; a < N_ACTS; a++) {
            product_case(team, dims[i][0], dims[i][1], dims[i][2], (int64_t)(i % 3), a % 2,
                         &acts[a]);
        }
    }
    dla_team_destroy(team);
}

/* Convolutions (B gathered from an image) through every variant. */
static void conv_case(struct dla_team *team, const struct dla_sconv_geom *g0, int64_t K,
                      const struct dla_sact *act)
{
    struct dla_sconv_geom g = *g0;
    float *x = rnd_array((size_t)(g.C * g.H * g.W));
    float *w = rnd_array((size_t)(K * g.C * g.kh * g.kw));
    float *b = rnd_array((size_t)K);
    size_t n = (size_t)(K * g.OH * g.OW);
    float *want = calloc(n, sizeof(float)), *got = calloc(n, sizeof(float));
    assert_true(want && got);
    g.x = x;
    assert_int_equal(dla_sconv_variant_on(DLA_SGEMM_GENERIC, NULL, &g, K, w, b, want, act), 0);
    /* the gathered panels hold the im2col matrix: the same bits as the
     * product with that matrix written out here */
    int64_t rows = g.C * g.kh * g.kw, npix = g.OH * g.OW;
    float *col = calloc((size_t)(rows * npix), sizeof(float));
    assert_non_null(col);
    for (int64_t r = 0; r < rows; r++) {
        int64_t c = r / (g.kh * g.kw), ky = r / g.kw % g.kh, kx = r % g.kw;
        for (int64_t j = 0; j < npix; j++) {
            int64_t iy = j / g.OW * g.sy - g.pt + ky * g.dy, ix = j % g.OW * g.sx - g.pl + kx * g.dx;
            if (iy >= 0 && iy < g.H && ix >= 0 && ix < g.W) {
                col[r * npix + j] = x[(c * g.H + iy) * g.W + ix];
            }
        }
    }
    assert_int_equal(dla_sgemm_variant_on(DLA_SGEMM_GENERIC, NULL, K, npix, rows, w, rows, col,
                                          npix, b, got, npix, act),
                     0);
    if (memcmp(want, got, n * sizeof(float)) != 0) {
        fail_msg("sconv c%ld %ldx%ld k%ld %ldx%ld s%ld: the gathered panels differ from im2col",
                 (long)g.C, (long)g.H, (long)g.W, (long)K, (long)g.kh, (long)g.kw, (long)g.sy);
    }
    free(col);
    for (int v = 0; v < DLA_SGEMM_VARIANTS; v++) {
        if (!dla_sgemm_supported((enum dla_sgemm_variant)v)) {
            continue;
        }
        for (int on_team = 0; on_team < 2; on_team++) {
            memset(got, 0, n * sizeof(float));
            assert_int_equal(dla_sconv_variant_on((enum dla_sgemm_variant)v, on_team ? team : NULL,
                                                  &g, K, w, b, got, act),
                             0);
            if (memcmp(want, got, n * sizeof(float)) != 0) {
                fail_msg("sconv %s team %d: c%ld %ldx%ld k%ld %ldx%ld s%ld act %d differs",
                         variant_names[v], on_team, (long)g.C, (long)g.H, (long)g.W, (long)K,
                         (long)g.kh, (long)g.kw, (long)g.sy, (int)act->kind);
            }
        }
    }
    free(x), free(w), free(b), free(want), free(got);
}

static void test_convs_random(void **state)
{
    (void)state;
    struct dla_team *team = dla_team_create(2);
    assert_non_null(team);
    for (int i = 0; i < 120; i++) {
        struct dla_sconv_geom g = { 0 };
        g.C = rnd(1, i % 4 ? 8 : 40);
        g.H = rnd(1, 20);
        g.W = rnd(1, i % 2 ? 20 : 90);
        g.kh = rnd(1, 4) * 2 - 1;
        g.kw = g.kh;
        g.sy = g.sx = rnd(1, 3);
        g.dy = g.dx = rnd(1, 2);
        g.pt = g.pl = rnd(0, (uint32_t)g.kh);
        if (g.H + 2 * g.pt <= g.dy * (g.kh - 1) || g.W + 2 * g.pl <= g.dx * (g.kw - 1)) {
            continue;
        }
        g.OH = (g.H + 2 * g.pt - g.dy * (g.kh - 1) - 1) / g.sy + 1;
        g.OW = (g.W + 2 * g.pl - g.dx * (g.kw - 1) - 1) / g.sx + 1;
        conv_case(team, &g, rnd(1, 40), &acts[rnd(0, N_ACTS - 1)]);
    }
    dla_team_destroy(team);
}

/* One depthwise convolution through every variant, against the generic
 * one and (no activation) dla_sdw_ref. */
static void depthwise_case(struct dla_team *team, struct dla_sconv_geom g,
                           const struct dla_sact *act)
{
    g.OH = (g.H + 2 * g.pt - g.dy * (g.kh - 1) - 1) / g.sy + 1;
    g.OW = (g.W + 2 * g.pl - g.dx * (g.kw - 1) - 1) / g.sx + 1;
    if (g.OH <= 0 || g.OW <= 0) {
        return;
    }
    float *x = rnd_array((size_t)(g.C * g.H * g.W)), *w = rnd_array((size_t)(g.C * g.kh * g.kw));
    float *b = rnd(0, 1) ? rnd_array((size_t)g.C) : NULL;
    size_t n = (size_t)(g.C * g.OH * g.OW);
    float *want = calloc(n, sizeof(float)), *got = calloc(n, sizeof(float));
    assert_true(want && got);
    g.x = x;
    dla_sdw_variant_on(DLA_SGEMM_GENERIC, NULL, &g, w, b, want, act);
    if (act->kind == DLA_SACT_NONE) {
        dla_sdw_ref(&g, w, b, got);
        if (memcmp(want, got, n * sizeof(float)) != 0) {
            fail_msg("sdw generic differs from dla_sdw_ref");
        }
    }
    for (int v = 0; v < DLA_SGEMM_VARIANTS; v++) {
        if (!dla_sgemm_supported((enum dla_sgemm_variant)v)) {
            continue;
        }
        for (int on_team = 0; on_team < 2; on_team++) {
            memset(got, 0, n * sizeof(float));
            dla_sdw_variant_on((enum dla_sgemm_variant)v, on_team ? team : NULL, &g, w, b, got,
                               act);
            if (memcmp(want, got, n * sizeof(float)) != 0) {
                fail_msg("sdw %s team %d: c%ld %ldx%ld k%ldx%ld s%ld,%ld d%ld,%ld p%ld,%ld act %d "
                         "differs",
                         variant_names[v], on_team, (long)g.C, (long)g.H, (long)g.W, (long)g.kh,
                         (long)g.kw, (long)g.sy, (long)g.sx, (long)g.dy, (long)g.dx, (long)g.pt,
                         (long)g.pl, (int)act->kind);
            }
        }
    }
    free(x), free(w), free(b), free(want), free(got);
}

static void test_depthwise_random(void **state)
{
    (void)state;
    struct dla_team *team = dla_team_create(2);
    assert_non_null(team);
    for (int i = 0; i < 400; i++) {
        struct dla_sconv_geom g = { 0 };
        g.C = rnd(1, i % 8 ? 6 : 64);
        g.H = rnd(1, 20);
        g.W = rnd(1, i % 2 ? 40 : 120);
        g.kh = rnd(1, 5);
        g.kw = i % 10 ? rnd(1, 5) : rnd(6, 20);
        g.sy = rnd(1, 3);
        g.sx = rnd(1, 3);
        g.dy = rnd(1, 2);
        g.dx = rnd(1, 2);
        g.pt = rnd(0, 4);
        g.pl = i % 10 ? rnd(0, 4) : rnd(5, 12);
        depthwise_case(team, g, &acts[rnd(0, N_ACTS - 1)]);
    }
    /* MobileNet's 3x3 planes, strides 1 and 2 */
    static const int64_t hw[] = { 7, 14, 28, 56, 112 };
    for (size_t i = 0; i < sizeof hw / sizeof hw[0]; i++) {
        for (int64_t s = 1; s <= 2; s++) {
            struct dla_sconv_geom g = { .C = 24, .H = hw[i], .W = hw[i], .kh = 3, .kw = 3,
                                        .sy = s, .sx = s, .dy = 1, .dx = 1, .pt = 1, .pl = 1 };
            depthwise_case(team, g, &acts[(i + (size_t)s) % N_ACTS]);
        }
    }
    dla_team_destroy(team);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_products_random),
        cmocka_unit_test(test_products_edges),
        cmocka_unit_test(test_convs_random),
        cmocka_unit_test(test_depthwise_random),
    };
    for (int v = 0; v < DLA_SGEMM_VARIANTS; v++) {
        printf("sgemm variant %s: %s\n", variant_names[v],
               dla_sgemm_supported((enum dla_sgemm_variant)v) ? "tested" : "not on this CPU");
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
