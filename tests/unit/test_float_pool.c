/*
 * The float reference's max pooling (src/compiler/float_exec.c) against a
 * reference of its own: MaxPool models alone (tests/models/float_maxpool_*,
 * tools/models/make_test_models.py float_pool_models) on inputs with NaN,
 * both zeros, infinities and ties, every output bit for bit.  The semantics
 * the reference encodes: each output is m = x > m ? x : m over the window's
 * taps inside the input, rows then columns, from -inf (a NaN never wins, a
 * tie keeps the first tap: -0 against +0 tells the order), padding left
 * out.  The vector paths (four outputs a step, the 2x2/2 rows) must give
 * those bits wherever they take a row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "common/testmodel.h"
#include "dlasim/compiler.h"

#define C 4
#define H 21
#define W 27

struct pool {
    const char *file;
    int kh, kw, sy, sx, pt, pl, pb, pr;
};

static float special(uint64_t *s)
{
    switch (splitmix64_range(s, 0, 9)) {
    case 0:
        return NAN;
    case 1:
        return -0.0f;
    case 2:
        return 0.0f;
    case 3:
        return splitmix64_range(s, 0, 1) ? INFINITY : -INFINITY;
    case 4:
        return 1.0f; /* ties */
    default:
        return (float)((double)splitmix64_range(s, 0, 2000) / 1000.0 - 1.0);
    }
}

static void reference(const struct pool *p, const float *x, float *y, int oh, int ow)
{
    for (int c = 0; c < C; c++) {
        for (int oy = 0; oy < oh; oy++) {
            for (int ox = 0; ox < ow; ox++) {
                float m = -INFINITY;
                for (int ky = 0; ky < p->kh; ky++) {
                    for (int kx = 0; kx < p->kw; kx++) {
                        const int iy = oy * p->sy - p->pt + ky, ix = ox * p->sx - p->pl + kx;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
                            continue;
                        }
                        const float v = x[(c * H + iy) * W + ix];
                        m = v > m ? v : m;
                    }
                }
                y[(c * oh + oy) * ow + ox] = m;
            }
        }
    }
}

static void check_pool(const struct pool *p)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "tests/models/%s", p->file);
    struct dlasim_model *m = tmodel_load(path);
    const int oh = (H + p->pt + p->pb - p->kh) / p->sy + 1;
    const int ow = (W + p->pl + p->pr - p->kw) / p->sx + 1;
    assert_int_equal(dlasim_model_input_size(m), C * H * W);
    assert_int_equal(dlasim_model_output_size(m), (size_t)C * oh * ow);
    float x[C * H * W], *got = malloc(sizeof(float) * C * oh * ow);
    float *want = malloc(sizeof(float) * C * oh * ow);
    assert_non_null(got);
    assert_non_null(want);
    uint64_t s = 0x706f6f6cULL;
    for (int run = 0; run < 20; run++) {
        for (int i = 0; i < C * H * W; i++) {
            /* runs 0-4 all ties of +-0 and 1 in places, later ones mixed */
            x[i] = run < 5 ? (splitmix64_range(&s, 0, 1) ? -0.0f : 0.0f) : special(&s);
        }
        if (dlasim_model_run_float(m, x, got, err, sizeof err)) {
            fail_msg("%s: %s", p->file, err);
        }
        reference(p, x, want, oh, ow);
        for (int i = 0; i < C * oh * ow; i++) {
            uint32_t gb, wb;
            memcpy(&gb, &got[i], sizeof gb);
            memcpy(&wb, &want[i], sizeof wb);
            if (gb != wb) {
                fail_msg("%s run %d: output %d (c %d, y %d, x %d) is %g (0x%08x), the "
                         "reference %g (0x%08x)", p->file, run, i, i / (oh * ow),
                         i / ow % oh, i % ow, (double)got[i], gb, (double)want[i], wb);
            }
        }
    }
    free(got);
    free(want);
    dlasim_model_free(m);
}

static void test_maxpool_3x3_stride2(void **state)
{
    (void)state;
    const struct pool p = {"float_maxpool_3s2.onnx", 3, 3, 2, 2, 1, 1, 1, 1};
    check_pool(&p);
}

static void test_maxpool_3x3_stride1(void **state)
{
    (void)state;
    const struct pool p = {"float_maxpool_3s1.onnx", 3, 3, 1, 1, 1, 1, 1, 1};
    check_pool(&p);
}

static void test_maxpool_2x2_stride2(void **state)
{
    (void)state;
    const struct pool p = {"float_maxpool_2s2.onnx", 2, 2, 2, 2, 0, 0, 0, 0};
    check_pool(&p);
}

static void test_maxpool_5x5_stride2(void **state)
{
    (void)state;
    const struct pool p = {"float_maxpool_5s2.onnx", 5, 5, 2, 2, 2, 2, 2, 2};
    check_pool(&p);
}

static void test_maxpool_4x2_stride1(void **state)
{
    (void)state;
    const struct pool p = {"float_maxpool_4x2s1.onnx", 4, 2, 1, 1, 0, 1, 0, 1};
    check_pool(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_maxpool_3x3_stride2), cmocka_unit_test(test_maxpool_3x3_stride1),
        cmocka_unit_test(test_maxpool_2x2_stride2), cmocka_unit_test(test_maxpool_5x5_stride2),
        cmocka_unit_test(test_maxpool_4x2_stride1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
