/*
 * The float reference's matrix products (src/kernels/sgemm.c) against plain
 * double-precision loops written here: dla_sgemm (odd sizes around the
 * 6x16 tile and the 256-wide blocks, bias or none, row strides), dla_sconv
 * (padding, strides, dilations, kernels wider than the input) and
 * dla_sgemv (both layouts).  Float sums differ from double ones by
 * rounding only: every element within 1e-5 of the largest |term sum| of
 * its row, scaled by the reduction length.  Results with 1 and 3 threads
 * must be identical bit for bit (the order of the sums is fixed).
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

#include "common/team.h"
#include "kernels/sgemm.h"

static uint64_t rng = 0x5eed;

static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) & 0xFFFF) / 32768.0f - 1.0f;
}

static float *frand_array(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        p[i] = frand();
    }
    return p;
}

/* |got - want| <= tol * (1 + scale) with scale = the sum of |terms| */
static void expect_close(const float *got, const double *want, const double *scale, size_t n,
                         double tol, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(got[i] - want[i]) <= tol * (1.0 + scale[i]))) {
            fail_msg("%s: element %zu = %.9g, reference %.9g", what, i, got[i], want[i]);
        }
    }
}

static void gemm_case(int64_t M, int64_t N, int64_t K, int with_bias, int64_t pad)
{
    int64_t lda = K + pad, ldb = N + pad, ldc = N + pad;
    float *A = frand_array((size_t)(M * lda)), *B = frand_array((size_t)(K * ldb));
    float *bias = with_bias ? frand_array((size_t)M) : NULL;
    float *C1 = calloc((size_t)(M * ldc) + 1, sizeof(float)), *C3 = calloc((size_t)(M * ldc) + 1, sizeof(float));
    double *ref = calloc((size_t)(M * N) + 1, sizeof(double)), *sc = calloc((size_t)(M * N) + 1, sizeof(double));
    float *got = calloc((size_t)(M * N) + 1, sizeof(float));
    assert_true(C1 && C3 && ref && sc && got);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            double s = bias ? bias[m] : 0, a = bias ? fabs(bias[m]) : 0;
            for (int64_t k = 0; k < K; k++) {
                s += (double)A[m * lda + k] * B[k * ldb + n];
                a += fabs((double)A[m * lda + k] * B[k * ldb + n]);
            }
            ref[m * N + n] = s;
            sc[m * N + n] = a;
        }
    }
    assert_int_equal(dla_sgemm(M, N, K, A, lda, B, ldb, bias, C1, ldc, 1), 0);
    assert_int_equal(dla_sgemm(M, N, K, A, lda, B, ldb, bias, C3, ldc, 3), 0);
    for (int64_t m = 0; m < M; m++) {
        memcpy(got + m * N, C1 + m * ldc, (size_t)N * sizeof(float));
    }
    char what[96];
    snprintf(what, sizeof what, "sgemm %ldx%ldx%ld bias %d", (long)M, (long)N, (long)K, with_bias);
    expect_close(got, ref, sc, (size_t)(M * N), 1e-5, what);
    if (memcmp(C1, C3, (size_t)(M * ldc) * sizeof(float)) != 0) {
        fail_msg("%s: 1 and 3 threads differ", what);
    }
    /* on a kept team of 3 (the float reference's way): the same bits */
    struct dla_team *team = dla_team_create(3);
    memset(C3, 0, (size_t)(M * ldc) * sizeof(float));
    assert_int_equal(dla_sgemm_on(team, M, N, K, A, lda, B, ldb, bias, C3, ldc, NULL), 0);
    if (memcmp(C1, C3, (size_t)(M * ldc) * sizeof(float)) != 0) {
        fail_msg("%s: 1 thread and a team of 3 differ", what);
    }
    /* with a Clip applied as the rows are finished: Clip's values of C1 */
    const struct dla_sact clip = { DLA_SACT_CLIP, -0.5f, 0.75f };
    assert_int_equal(dla_sgemm_on(team, M, N, K, A, lda, B, ldb, bias, C3, ldc, &clip), 0);
    dla_team_destroy(team);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            float x = C1[m * ldc + n], want = x < -0.5f ? -0.5f : x > 0.75f ? 0.75f : x;
            if (memcmp(&want, &C3[m * ldc + n], sizeof want) != 0) {
                fail_msg("%s: Clip at (%ld, %ld): %.9g, want %.9g", what, (long)m, (long)n,
                         C3[m * ldc + n], want);
            }
        }
    }
    free(A), free(B), free(bias), free(C1), free(C3), free(ref), free(sc), free(got);
}

static void test_sgemm_sizes(void **state)
{
    (void)state;
    static const int64_t sizes[][3] = {
        {1, 1, 1}, {6, 16, 1}, {7, 17, 3}, {5, 15, 9}, {13, 300, 40}, {64, 257, 300},
        {12, 49, 700}, {100, 1000, 27}, {3, 5000, 2}, {70, 33, 513}, {16, 196, 600},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        gemm_case(sizes[i][0], sizes[i][1], sizes[i][2], (int)(i % 2), (int64_t)(i % 3));
    }
}

static void conv_case(int64_t C, int64_t H, int64_t W, int64_t K, int64_t kh, int64_t kw,
                      int64_t sy, int64_t sx, int64_t dy, int64_t dx, int64_t pt, int64_t pl,
                      int64_t pb, int64_t pr)
{
    int64_t OH = (H + pt + pb - dy * (kh - 1) - 1) / sy + 1;
    int64_t OW = (W + pl + pr - dx * (kw - 1) - 1) / sx + 1;
    assert_true(OH > 0 && OW > 0);
    float *x = frand_array((size_t)(C * H * W)), *w = frand_array((size_t)(K * C * kh * kw));
    float *b = frand_array((size_t)K);
    size_t n = (size_t)(K * OH * OW);
    float *y1 = calloc(n, sizeof(float)), *y3 = calloc(n, sizeof(float));
    double *ref = calloc(n, sizeof(double)), *sc = calloc(n, sizeof(double));
    assert_true(y1 && y3 && ref && sc);
    for (int64_t k = 0; k < K; k++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                double s = b[k], a = fabs(b[k]);
                for (int64_t c = 0; c < C; c++) {
                    for (int64_t ky = 0; ky < kh; ky++) {
                        for (int64_t kx = 0; kx < kw; kx++) {
                            int64_t iy = oy * sy - pt + ky * dy, ix = ox * sx - pl + kx * dx;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W) {
                                double t = (double)x[(c * H + iy) * W + ix] *
                                           w[((k * C + c) * kh + ky) * kw + kx];
                                s += t;
                                a += fabs(t);
                            }
                        }
                    }
                }
                ref[(k * OH + oy) * OW + ox] = s;
                sc[(k * OH + oy) * OW + ox] = a;
            }
        }
    }
    struct dla_sconv_geom g = { .x = x, .C = C, .H = H, .W = W, .OH = OH, .OW = OW, .kh = kh,
                                .kw = kw, .sy = sy, .sx = sx, .dy = dy, .dx = dx, .pt = pt, .pl = pl };
    assert_int_equal(dla_sconv(&g, K, w, b, y1, 1), 0);
    assert_int_equal(dla_sconv(&g, K, w, b, y3, 3), 0);
    char what[128];
    snprintf(what, sizeof what, "sconv c%ld %ldx%ld k%ld %ldx%ld s%ld,%ld d%ld,%ld p%ld,%ld,%ld,%ld",
             (long)C, (long)H, (long)W, (long)K, (long)kh, (long)kw, (long)sy, (long)sx, (long)dy,
             (long)dx, (long)pt, (long)pl, (long)pb, (long)pr);
    expect_close(y1, ref, sc, n, 1e-5, what);
    if (memcmp(y1, y3, n * sizeof(float)) != 0) {
        fail_msg("%s: 1 and 3 threads differ", what);
    }
    struct dla_team *team = dla_team_create(3);
    memset(y3, 0, n * sizeof(float));
    assert_int_equal(dla_sconv_on(team, &g, K, w, b, y3, NULL), 0);
    if (memcmp(y1, y3, n * sizeof(float)) != 0) {
        fail_msg("%s: 1 thread and a team of 3 differ", what);
    }
    const struct dla_sact relu = { .kind = DLA_SACT_RELU };
    assert_int_equal(dla_sconv_on(team, &g, K, w, b, y3, &relu), 0);
    dla_team_destroy(team);
    for (size_t i = 0; i < n; i++) {
        float want = y1[i] > 0 ? y1[i] : 0;
        if (memcmp(&want, &y3[i], sizeof want) != 0) {
            fail_msg("%s: Relu at %zu: %.9g, want %.9g", what, i, y3[i], want);
        }
    }
    free(x), free(w), free(b), free(y1), free(y3), free(ref), free(sc);
}

static void test_sconv_geometries(void **state)
{
    (void)state;
    conv_case(3, 9, 11, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
    conv_case(4, 15, 13, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1);
    conv_case(2, 8, 9, 6, 3, 3, 1, 1, 2, 3, 2, 3, 2, 3);
    conv_case(3, 23, 23, 8, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3);
    conv_case(5, 6, 7, 9, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0);
    conv_case(1, 4, 3, 2, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2);  /* kernel wider than the input */
    conv_case(2, 5, 40, 3, 1, 9, 1, 3, 1, 1, 0, 4, 0, 4); /* long rows, stride 3 */
    conv_case(16, 20, 20, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1);
    conv_case(2, 3, 3, 4, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1); /* bottom/right padding only */
}

static void test_sgemv_layouts(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{1, 1}, {7, 3}, {8, 8}, {17, 100}, {1000, 512}, {3, 1029}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t N = sizes[i][0], K = sizes[i][1];
        float *x = frand_array((size_t)K), *B = frand_array((size_t)(K * N));
        float *y = calloc((size_t)N, sizeof(float));
        double *ref = calloc((size_t)N, sizeof(double)), *sc = calloc((size_t)N, sizeof(double));
        assert_true(y && ref && sc);
        for (int tb = 0; tb < 2; tb++) {
            for (int64_t n = 0; n < N; n++) {
                ref[n] = sc[n] = 0;
                for (int64_t k = 0; k < K; k++) {
                    double t = (double)x[k] * (tb ? B[n * K + k] : B[k * N + n]);
                    ref[n] += t;
                    sc[n] += fabs(t);
                }
            }
            dla_sgemv(N, K, x, B, tb, y);
            char what[64];
            snprintf(what, sizeof what, "sgemv %ldx%ld trans_b %d", (long)N, (long)K, tb);
            expect_close(y, ref, sc, (size_t)N, 1e-5, what);
        }
        free(x), free(B), free(y), free(ref), free(sc);
    }
}

/* dla_sact_apply against the ONNX expressions, bit for bit, on values that
 * tell the orders apart: NaN, both zeros, the bounds themselves, infinities. */
static void test_sact_edges(void **state)
{
    (void)state;
    const float special[] = { NAN, -NAN, 0.0f, -0.0f, -1.0f, 6.0f, 5.999999f, 6.000001f,
                              INFINITY, -INFINITY, 1e-45f, -1e-45f, 3.0f, -7.5f };
    enum { N = 203 }; /* vector blocks and a tail */
    float x[N];
    for (int i = 0; i < N; i++) {
        x[i] = i < (int)(sizeof special / sizeof special[0]) ? special[i] : (float)(i % 17) - 8.0f;
    }
    const struct dla_sact acts[] = { { DLA_SACT_RELU, 0, 0 }, { DLA_SACT_CLIP, 0.0f, 6.0f },
                                     { DLA_SACT_CLIP, -1.0f, 1.0f }, { DLA_SACT_CLIP, 2.0f, 2.0f },
                                     { DLA_SACT_CLIP, 4.0f, -4.0f } };
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        float y[N];
        memcpy(y, x, sizeof y);
        dla_sact_apply(&acts[a], y, N);
        for (int i = 0; i < N; i++) {
            float e = x[i], lo = acts[a].lo, hi = acts[a].hi;
            float want = acts[a].kind == DLA_SACT_RELU ? (e > 0 ? e : 0) : e < lo ? lo : e > hi ? hi : e;
            if (memcmp(&want, &y[i], sizeof want) != 0) {
                fail_msg("activation %zu, element %d (%.9g): %.9g, want %.9g", a, i, e, y[i], want);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgemm_sizes),
        cmocka_unit_test(test_sconv_geometries),
        cmocka_unit_test(test_sgemv_layouts),
        cmocka_unit_test(test_sact_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
