/*
 * Precision flags of the compile and run reports (issue 17 items 5 and 9),
 * checked against SQNRs this test computes itself from the model's INT8
 * outputs (dlasim_model_run) and its float outputs (dlasim_model_run_float):
 *  - tests/models/op_bias_collapse.onnx (a convolution whose input step is
 *    ~1e-5 and whose bias is a few hundred): flagged at compile time with
 *    the node's name and the bias, the healthy first convolution not; its
 *    output now keeps the bias (before, the bias in accumulator units, ~3e9,
 *    saturated the SDP's 32-bit operand: SQNR 5.6 dB);
 *  - op_conv calibrated on inputs with one outlier (a 60 among values in
 *    [0, 1)): the SQNR flag names the node, gives the SQNR this test
 *    computes, and blames the input's own quantization;
 *  - op_conv calibrated on inputs like those it runs: no flag;
 *  - the threshold: --min-sqnr's API refuses out-of-range values, and a
 *    threshold above the measured SQNR flags the healthy model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/testdev.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/compiler.h"

#define MODELS "tests/models/"
enum { CAL = 8, RUNS = 8 };

static uint64_t rng;

static struct dlasim_model *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, MODELS "%s.onnx", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail_msg("cannot read %s (run from the repository root)", path);
    }
    static uint8_t buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct dlasim_model *m = NULL;
    char err[512];
    if (dlasim_model_load_onnx(buf, len, &m, err, sizeof err)) {
        fail_msg("%s: %s", name, err);
    }
    return m;
}

/* uniform [0, 1) */
static float u01(void)
{
    return (float)(splitmix64_next(&rng) >> 40) / (float)(1 << 24);
}

static void calibrate_compile(struct dlasim_model *m, float outlier)
{
    size_t in_n = dlasim_model_input_size(m);
    float *cal = malloc(CAL * in_n * sizeof(float));
    assert_non_null(cal);
    for (size_t i = 0; i < CAL * in_n; i++) {
        cal[i] = u01();
    }
    if (outlier > 0) {
        cal[0] = outlier;
    }
    char err[512];
    struct dlasim_calib_options co = { DLASIM_CALIB_MINMAX, 0, 0, 0 };
    if (dlasim_model_calibrate(m, cal, CAL, &co, err, sizeof err) ||
        dlasim_model_compile(m, "nv_small", err, sizeof err)) {
        fail_msg("%s", err);
    }
    free(cal);
}

/* RUNS inputs with statistics on; returns the SQNR of the model's output
 * computed here (INT8 against float). */
static double run_with_stats(struct dlasim_model *m)
{
    size_t in_n = dlasim_model_input_size(m), on = dlasim_model_output_size(m);
    float *x = malloc(in_n * sizeof(float)), *yq = malloc(on * sizeof(float));
    float *yf = malloc(on * sizeof(float));
    assert_true(x && yq && yf);
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    char err[512];
    double sig = 0, noise = 0;
    dlasim_model_stats_begin(m, 0);
    for (int r = 0; r < RUNS; r++) {
        for (size_t i = 0; i < in_n; i++) {
            x[i] = u01();
        }
        if (dlasim_model_run(m, dev, x, yq, NULL, err, sizeof err) ||
            dlasim_model_run_float(m, x, yf, err, sizeof err)) {
            fail_msg("%s", err);
        }
        for (size_t k = 0; k < on; k++) {
            double e = (double)yq[k] - yf[k];
            sig += (double)yf[k] * yf[k];
            noise += e * e;
        }
    }
    dlasim_destroy(dev);
    free(x);
    free(yq);
    free(yf);
    return 10 * log10(sig / noise);
}

static void test_bias_collapse_flagged(void **state)
{
    (void)state;
    struct dlasim_model *m = load("op_bias_collapse");
    calibrate_compile(m, 0);
    char *rep = dlasim_model_compile_report(m);
    assert_non_null(rep);
    const char *f = strstr(rep, "layer 1 [big_bias_conv] Conv: bias ");
    if (!f || !strstr(f, "the inputs move 16 of 16 channels by at most") ||
        !strstr(f, "constant, set by the bias") || strstr(rep, "[small_conv] Conv:")) {
        fail_msg("compile report without the bias flag on big_bias_conv alone:\n%s", rep);
    }
    /* the flag's bias is the largest |bias| of the channels it counts: all
     * 16 here, so the largest of the model's bias (printed with %.2g) */
    double bias = strtod(f + strlen("layer 1 [big_bias_conv] Conv: bias "), NULL);
    assert_true(bias > 300 && bias < 1500);
    free(rep);
    double db = run_with_stats(m);
    /* the bias survives (constant output = the bias rounded to the output step) */
    if (db < 40) {
        fail_msg("op_bias_collapse: INT8 vs float %.1f dB: the bias is lost", db);
    }
    dlasim_model_free(m);
}

/* The SQNR a flag line of layer `layer` prints, or NAN. */
static double flagged_sqnr(const char *flags, const char *layer)
{
    const char *p = flags ? strstr(flags, layer) : NULL;
    p = p ? strstr(p, "SQNR ") : NULL;
    return p ? strtod(p + 5, NULL) : NAN;
}

static void test_outlier_calibration_flagged(void **state)
{
    (void)state;
    struct dlasim_model *m = load("op_conv");
    calibrate_compile(m, 60.0f);
    double db = run_with_stats(m);
    char *flags = dlasim_model_precision_flags(m);
    double shown = flagged_sqnr(flags, "layer 0 [conv] Conv: SQNR ");
    /* one layer: its output is the model's, so the SQNRs must agree (%.1f) */
    if (!(fabs(shown - db) <= 0.051) || db >= 20 ||
        !strstr(flags, "the model input's own quantization has SQNR")) {
        fail_msg("flag SQNR %.2f vs %.2f computed here:\n%s", shown, db, flags ? flags : "(none)");
    }
    free(flags);
    char *rep = dlasim_model_layer_report(m);
    assert_non_null(rep);
    assert_non_null(strstr(rep, "precision flags"));
    free(rep);
    dlasim_model_free(m);
}

static void test_healthy_not_flagged(void **state)
{
    (void)state;
    struct dlasim_model *m = load("op_conv");
    calibrate_compile(m, 0);
    double db = run_with_stats(m);
    char *flags = dlasim_model_precision_flags(m);
    if (flags || db < 30) {
        fail_msg("healthy op_conv (%.1f dB) flagged:\n%s", db, flags ? flags : "(none)");
    }
    /* a threshold above the measured SQNR flags it, with the cause */
    assert_int_equal(dlasim_model_set_min_sqnr(m, db + 5), 0);
    flags = dlasim_model_precision_flags(m);
    if (!flags || !(fabs(flagged_sqnr(flags, "[conv]") - db) <= 0.051) ||
        !strstr(flags, "quantization noise")) {
        fail_msg("threshold %.1f dB: %s", db + 5, flags ? flags : "(none)");
    }
    free(flags);
    assert_int_equal(dlasim_model_set_min_sqnr(m, -1), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_model_set_min_sqnr(m, NAN), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_model_set_min_sqnr(NULL, 20), DLASIM_ERR_INVAL);
    assert_null(dlasim_model_precision_flags(NULL));
    dlasim_model_free(m);
}

int main(void)
{
    rng = 0x5eed0017u;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bias_collapse_flagged),
        cmocka_unit_test(test_outlier_calibration_flagged),
        cmocka_unit_test(test_healthy_not_flagged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
