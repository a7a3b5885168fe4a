/*
 * The float reference's depthwise convolution (src/kernels/sdw.c): dla_sdw,
 * row blocks in vectors and threads, must give the same floats bit for bit
 * as dla_sdw_ref (the per-tap scalar loop the float reference used before,
 * same rounding order), with 1 and 3 threads; and dla_sdw_ref must agree
 * with a double-precision loop written here within float rounding.  Random
 * geometries: strides 1 to 3, dilations, asymmetric padding (also wider than
 * the kernel), widths around the 8-output blocks, bias or none; and kernels
 * and padding wider than the masked border blocks take.
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
#include "kernels/sdw.h"

static uint64_t rng = 0xd3e9;

static uint32_t urand(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33) % n;
}

static float *frand_array(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        p[i] = (float)urand(65536) / 32768.0f - 1.0f;
    }
    return p;
}

/* y = bias + sum of w x over the taps inside, in double, and the sum of |terms| */
static void dw_double(const struct dla_sconv_geom *g, const float *w, const float *bias,
                      double *y, double *scale)
{
    for (int64_t k = 0; k < g->C; k++) {
        for (int64_t oy = 0; oy < g->OH; oy++) {
            for (int64_t ox = 0; ox < g->OW; ox++) {
                double s = bias ? bias[k] : 0.0, a = fabs(s);
                for (int64_t ky = 0; ky < g->kh; ky++) {
                    for (int64_t kx = 0; kx < g->kw; kx++) {
                        int64_t iy = oy * g->sy - g->pt + ky * g->dy;
                        int64_t ix = ox * g->sx - g->pl + kx * g->dx;
                        if (iy >= 0 && iy < g->H && ix >= 0 && ix < g->W) {
                            double t = (double)w[(k * g->kh + ky) * g->kw + kx] *
                                       g->x[(k * g->H + iy) * g->W + ix];
                            s += t;
                            a += fabs(t);
                        }
                    }
                }
                y[(k * g->OH + oy) * g->OW + ox] = s;
                scale[(k * g->OH + oy) * g->OW + ox] = a;
            }
        }
    }
}

static void sdw_case(struct dla_sconv_geom g, int with_bias)
{
    int64_t pb = (int64_t)urand(3), pr = (int64_t)urand(3);
    g.OH = (g.H + g.pt + pb - (g.kh - 1) * g.dy - 1) / g.sy + 1;
    g.OW = (g.W + g.pl + pr - (g.kw - 1) * g.dx - 1) / g.sx + 1;
    if (g.OH < 1 || g.OW < 1) {
        return;
    }
    float *x = frand_array((size_t)(g.C * g.H * g.W));
    float *w = frand_array((size_t)(g.C * g.kh * g.kw));
    float *bias = with_bias ? frand_array((size_t)g.C) : NULL;
    size_t n = (size_t)(g.C * g.OH * g.OW);
    float *ref = malloc(n * sizeof(float)), *got = malloc(n * sizeof(float));
    double *dbl = malloc(n * sizeof(double)), *sc = malloc(n * sizeof(double));
    assert_true(ref && got && dbl && sc);
    g.x = x;
    dla_sdw_ref(&g, w, bias, ref);
    dw_double(&g, w, bias, dbl, sc);
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(ref[i] - dbl[i]) <= 1e-6 * (1.0 + sc[i]) * (double)(g.kh * g.kw))) {
            fail_msg("dla_sdw_ref: element %zu = %.9g, double %.9g", i, ref[i], dbl[i]);
        }
    }
    struct dla_team *team = dla_team_create(3);
    /* 1 thread, 3 threads started per call, then a kept team of 3 (shown as 4) */
    for (unsigned threads = 1; threads <= 4; threads += threads == 1 ? 2 : 1) {
        memset(got, 0xff, n * sizeof(float));
        if (threads == 4) {
            dla_sdw_on(team, &g, w, bias, got, NULL);
        } else {
            dla_sdw(&g, w, bias, got, threads);
        }
        if (memcmp(got, ref, n * sizeof(float))) {
            size_t i = 0;
            while (!memcmp(&got[i], &ref[i], sizeof(float))) {
                i++;
            }
            fail_msg("dla_sdw (%u threads) C%lld H%lld W%lld k%lldx%lld s%lld,%lld d%lld,%lld "
                     "p%lld,%lld: element %zu = %.9g, per-tap loop %.9g",
                     threads, (long long)g.C, (long long)g.H, (long long)g.W, (long long)g.kh,
                     (long long)g.kw, (long long)g.sy, (long long)g.sx, (long long)g.dy,
                     (long long)g.dx, (long long)g.pt, (long long)g.pl, i, got[i], ref[i]);
        }
    }
    /* Relu and Clips (MobileNet's (0, 6), one with lo > hi) applied as the
     * outputs are stored: the ONNX expressions of the per-tap loop's values */
    const struct dla_sact acts[] = { { DLA_SACT_CLIP, 0.0f, 6.0f }, { DLA_SACT_RELU, 0, 0 },
                                     { DLA_SACT_CLIP, -0.25f, 0.5f }, { DLA_SACT_CLIP, 1.0f, -1.0f } };
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        const float lo = acts[a].lo, hi = acts[a].hi;
        memset(got, 0, n * sizeof(float));
        dla_sdw_on(team, &g, w, bias, got, &acts[a]);
        for (size_t i = 0; i < n; i++) {
            float e = ref[i];
            float want = acts[a].kind == DLA_SACT_RELU ? (e > 0 ? e : 0) : e < lo ? lo : e > hi ? hi : e;
            if (memcmp(&want, &got[i], sizeof want)) {
                fail_msg("dla_sdw_on with activation %zu: element %zu = %.9g, want %.9g", a, i,
                         got[i], want);
            }
        }
    }
    dla_team_destroy(team);
    free(x), free(w), free(bias), free(ref), free(got), free(dbl), free(sc);
}

static void test_sdw_random(void **state)
{
    (void)state;
    for (int i = 0; i < 400; i++) {
        struct dla_sconv_geom g = {
            .C = 1 + urand(6), .H = 1 + urand(20), .W = 1 + urand(40), .kh = 1 + urand(5),
            .kw = 1 + urand(5), .sy = 1 + urand(3), .sx = 1 + urand(3), .dy = 1 + urand(2),
            .dx = 1 + urand(2), .pt = urand(4), .pl = urand(4),
        };
        sdw_case(g, (int)urand(2));
    }
}

/* MobileNet's 3x3 layers (pad 1, strides 1 and 2), large enough for threads */
static void test_sdw_mobilenet(void **state)
{
    (void)state;
    for (int64_t s = 1; s <= 2; s++) {
        for (int64_t hw = 7; hw <= 57; hw += 25) {
            struct dla_sconv_geom g = { .C = 48, .H = hw, .W = hw, .kh = 3, .kw = 3, .sy = s,
                                        .sx = s, .dy = 1, .dx = 1, .pt = 1, .pl = 1 };
            sdw_case(g, 1);
        }
    }
}

/* Wide kernels and wide padding: the border columns one by one (more than
 * the two masked blocks cover, or kernel rows wider than they take). */
static void test_sdw_wide(void **state)
{
    (void)state;
    for (int i = 0; i < 60; i++) {
        struct dla_sconv_geom g = {
            .C = 1 + urand(3), .H = 4 + urand(12), .W = 10 + urand(40), .kh = 1 + urand(3),
            .kw = 8 + urand(12), .sy = 1 + urand(2), .sx = 1 + urand(2), .dy = 1,
            .dx = 1 + urand(2), .pt = urand(3), .pl = 6 + urand(8),
        };
        sdw_case(g, (int)urand(2));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sdw_random),
        cmocka_unit_test(test_sdw_mobilenet),
        cmocka_unit_test(test_sdw_wide),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
