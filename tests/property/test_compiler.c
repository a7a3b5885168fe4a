/*
 * The ONNX compiler end to end: every supported operator (tests/models/
 * op_*.onnx, built by tools/models/make_test_models.py with random weights)
 * is calibrated on random inputs, compiled for nv_small, run on the
 * simulated device, and its output compared with the same model run in
 * float by the compiler's float executor.
 *
 * Tolerance: the SQNR of the dequantized INT8 output against float is at
 * least 20 dB (ideal int8 rounding of a full-range signal gives about
 * 48 dB; per-layer rounding and saturation of a few layers lose some; the
 * models here reach 29-44 dB, SHOW_SQNR=1 prints them), 15 dB for global
 * average pooling (PDP keeps its input's scale, so the small averages of
 * random data use few int8 steps; two-stage split rounds twice), and
 * the largest error is below 12 % of the output's range.  The engines each
 * model must use are checked too (a convolution must not silently fall back
 * to the CPU).
 * Also: models the compiler must refuse (unsupported op, opset, external
 * data, dangling input, truncated protobuf) give a message naming what and
 * why; the Fashion-MNIST demo model agrees with float on >= 97 % of 300
 * test images (skipped without Debian's dataset-fashion-mnist); its .nvdla
 * loadable runs in the loadable runner and gives the same output bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/testdev.h"
#include "common/testmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "dlasim/compiler.h"
#include "dlasim/runtime.h"

#define MODELS "tests/models/"
#define FMNIST "/usr/share/datasets/fashion-mnist/"

static uint64_t rng;

static struct dlasim_model *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, MODELS "%s.onnx", name);
    return tmodel_load(path);
}

static float urand(void)
{
    return (float)(splitmix64_next(&rng) >> 40) / (float)(1 << 24) * 2.0f - 1.0f;
}

/* engines: substrings the compile report must hold (NULL-terminated) */
static void check_op_on(const char *config, const char *name, const char *const *must, int cpu_ok,
                        double min_db)
{
    struct dlasim_model *m = load(name);
    size_t in_n = dlasim_model_input_size(m), on = dlasim_model_output_size(m);
    enum { CAL = 24, RUNS = 6 };
    float *cal = malloc(CAL * in_n * sizeof(float));
    float *x = malloc(in_n * sizeof(float));
    float *yq = malloc(on * sizeof(float)), *yf = malloc(on * sizeof(float));
    assert_non_null(cal);
    assert_non_null(x);
    assert_non_null(yq);
    assert_non_null(yf);
    for (size_t i = 0; i < CAL * in_n; i++) {
        cal[i] = urand();
    }
    char err[512];
    struct dlasim_calib_options co = { DLASIM_CALIB_MINMAX, 0, 0, 0 };
    if (dlasim_model_calibrate(m, cal, CAL, &co, err, sizeof err) ||
        dlasim_model_compile(m, config, err, sizeof err)) {
        fail_msg("%s: %s", name, err);
    }
    char *rep = dlasim_model_compile_report(m);
    assert_non_null(rep);
    for (int i = 0; must[i]; i++) {
        if (!strstr(rep, must[i])) {
            fail_msg("%s: compile report lacks '%s':\n%s", name, must[i], rep);
        }
    }
    if (!cpu_ok && !strstr(rep, " 0 host-CPU layers")) {
        fail_msg("%s: expected every layer on the hardware:\n%s", name, rep);
    }
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 1);
    double sig = 0, noise = 0, maxerr = 0, lo = INFINITY, hi = -INFINITY;
    for (int r = 0; r < RUNS; r++) {
        for (size_t i = 0; i < in_n; i++) {
            x[i] = urand();
        }
        if (dlasim_model_run(m, dev, x, yq, NULL, err, sizeof err) ||
            dlasim_model_run_float(m, x, yf, err, sizeof err)) {
            fail_msg("%s: %s", name, err);
        }
        for (size_t k = 0; k < on; k++) {
            double e = (double)yq[k] - yf[k];
            sig += (double)yf[k] * yf[k];
            noise += e * e;
            maxerr = fabs(e) > maxerr ? fabs(e) : maxerr;
            lo = yf[k] < lo ? yf[k] : lo;
            hi = yf[k] > hi ? yf[k] : hi;
        }
    }
    double sqnr = noise > 0 ? 10 * log10(sig / noise) : 99;
    if (getenv("SHOW_SQNR")) { /* the margins, for whoever changes the quantizer */
        printf("%s (%s): %.1f dB, largest error %.3f of range %.3f\n", name, config, sqnr, maxerr, hi - lo);
    }
    if (sqnr < min_db || maxerr > 0.12 * (hi - lo)) {
        fail_msg("%s: INT8 vs float SQNR %.1f dB, largest error %.4f of range %.4f\n%s", name, sqnr,
                 maxerr, hi - lo, rep);
    }
    free(rep);
    dlasim_destroy(dev);
    dlasim_model_free(m);
    free(cal);
    free(x);
    free(yq);
    free(yf);
}

static void check_op(const char *name, const char *const *must, int cpu_ok, double min_db)
{
    check_op_on("nv_small", name, must, cpu_ok, min_db);
}

#define HW(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define OP_TEST(NAME, CPU_OK, ...)                                                              \
    static void test_##NAME(void **state)                                                       \
    {                                                                                           \
        (void)state;                                                                            \
        check_op(#NAME, HW(__VA_ARGS__), CPU_OK, strstr(#NAME, "globalavg") ? 15.0 : 20.0);                                               \
    }

OP_TEST(op_conv, 0, "CONV+SDP Conv ")
OP_TEST(op_conv_stride_dilation, 0, "CONV+SDP Conv ")
OP_TEST(op_conv_5x5, 0, "CONV+SDP Conv ")
OP_TEST(op_conv_grouped, 0, "CONV+SDP Conv ")
OP_TEST(op_conv_depthwise, 0, "CONV+SDP Conv ")
OP_TEST(op_batchnorm, 0, "CONV+SDP Conv ")
OP_TEST(op_relu, 0, "Conv+Relu")
OP_TEST(op_clip, 0, "Conv+Clip")
OP_TEST(op_add_const, 0, "Conv+Add")
/* a pooling right after a convolution: pooled on the fly, SDP -> PDP (lower_conv.c fuse_pool) */
OP_TEST(op_maxpool, 0, "CONV+SDP Conv+MaxPool", "3 hw ops (MaxPool on the fly: SDP -> PDP)")
OP_TEST(op_avgpool, 0, "CONV+SDP Conv+AveragePool", "AveragePool on the fly")
OP_TEST(op_globalavgpool, 0, "PDP      GlobalAveragePool")
OP_TEST(op_flatten_gemm, 0, "view     Flatten", "CONV+SDP Gemm")
OP_TEST(op_reshape_matmul, 0, "view     Reshape", "CONV+SDP MatMul")
OP_TEST(op_leakyrelu, 0, "CONV+SDP Conv+LeakyRelu")
OP_TEST(op_prelu, 0, "CONV+SDP Conv+PRelu")
OP_TEST(op_sigmoid, 1, "CPU      Sigmoid", "no SDP LUT")
/* issue 17: a depthwise convolution of 32 channels runs as 4 blocks of Atomic-M (8 on nv_small)
 * channels, each a dense 8 -> 8 convolution: 4 x 8 x 8 x 3 x 3 x 12 x 12 MACs executed, not the
 * 32 x 32 x 3 x 3 x 12 x 12 of one dense convolution */
OP_TEST(op_conv_depthwise32, 0, "in 4 channel blocks")
/* Two models compiled separately place their weights at the same device
 * addresses; run in turn on one device, each must find its own weights
 * again (src/sim/core/mem_tag.h), and a caller's write over them must not
 * go unnoticed either. Reference: each model alone on a fresh device. */
static struct dlasim_model *compiled(const char *name, const float *cal, size_t n_cal)
{
    struct dlasim_model *m = load(name);
    struct dlasim_calib_options co = { DLASIM_CALIB_MINMAX, 0, 0, 0 };
    char err[512];
    if (dlasim_model_calibrate(m, cal, n_cal, &co, err, sizeof err) ||
        dlasim_model_compile(m, "nv_small", err, sizeof err)) {
        fail_msg("%s: %s", name, err);
    }
    return m;
}

static void run_or_fail(struct dlasim_model *m, struct dlasim_dev *dev, const float *x, float *y)
{
    char err[512];
    if (dlasim_model_run(m, dev, x, y, NULL, err, sizeof err)) {
        fail_msg("run: %s", err);
    }
}

/* SDP -> PDP on the fly: Conv + Relu + MaxPool 3x3/2 (op_pool_fly) gives
 * exactly the INT8 output of the same Conv + Relu (op_pool_conv, same
 * weights, calibrated on the same inputs, so the same scale) max-pooled
 * here: the fused layer's PDP pools the codes SDP would have written. */
static void maxpool3s2(const float *in, float *out, int c, int h, int w)
{
    int oh = (h - 1) / 2 + 1, ow = (w - 1) / 2 + 1;
    for (int k = 0; k < c; k++) {
        for (int oy = 0; oy < oh; oy++) {
            for (int ox = 0; ox < ow; ox++) {
                float m = -INFINITY;
                for (int y = 2 * oy - 1; y <= 2 * oy + 1; y++) {
                    for (int xx = 2 * ox - 1; xx <= 2 * ox + 1; xx++) {
                        if (y >= 0 && y < h && xx >= 0 && xx < w && in[(k * h + y) * w + xx] > m) {
                            m = in[(k * h + y) * w + xx];
                        }
                    }
                }
                out[(k * oh + oy) * ow + ox] = m;
            }
        }
    }
}

static void test_pool_on_the_fly_is_the_conv_pooled(void **state)
{
    (void)state;
    enum { CAL = 16, RUNS = 4, C = 16, H = 12, W = 12 };
    uint64_t others = rng; /* the other tests' draws stay what they were */
    struct dlasim_model *conv = load("op_pool_conv"), *fly = load("op_pool_fly");
    size_t n = dlasim_model_input_size(conv);
    assert_int_equal(dlasim_model_output_size(conv), C * H * W);
    assert_int_equal(dlasim_model_output_size(fly), C * (H / 2) * (W / 2));
    float *cal = malloc(CAL * n * sizeof(float));
    float yc[C * H * W], yf[C * (H / 2) * (W / 2)], want[C * (H / 2) * (W / 2)];
    assert_non_null(cal);
    for (size_t i = 0; i < CAL * n; i++) {
        cal[i] = urand();
    }
    char err[512];
    struct dlasim_calib_options co = { DLASIM_CALIB_MINMAX, 0, 0, 0 };
    struct dlasim_model *ms[2] = { conv, fly };
    for (int i = 0; i < 2; i++) {
        if (dlasim_model_calibrate(ms[i], cal, CAL, &co, err, sizeof err) ||
            dlasim_model_compile(ms[i], "nv_small", err, sizeof err)) {
            fail_msg("%s", err);
        }
    }
    char *rep = dlasim_model_compile_report(fly);
    if (!strstr(rep, "Conv+Relu+MaxPool") || !strstr(rep, "3 hw ops (MaxPool on the fly")) {
        fail_msg("op_pool_fly: not pooled on the fly:\n%s", rep);
    }
    free(rep);
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    for (int r = 0; r < RUNS; r++) {
        const float *x = cal + (size_t)r * n;
        if (dlasim_model_run(conv, dev, x, yc, NULL, err, sizeof err) ||
            dlasim_model_run(fly, dev, x, yf, NULL, err, sizeof err)) {
            fail_msg("run: %s", err);
        }
        maxpool3s2(yc, want, C, H, W);
        for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
            if (yf[i] != want[i]) {
                fail_msg("input %d, output %zu: %g on the fly, %g pooled", r, i, yf[i], want[i]);
            }
        }
    }
    dlasim_destroy(dev);
    dlasim_model_free(conv);
    dlasim_model_free(fly);
    free(cal);
    rng = others;
}

static void test_models_take_turns_on_one_device(void **state)
{
    (void)state;
    enum { CAL = 8 };
    uint64_t others = rng; /* the other tests' draws stay what they were */
    struct dlasim_model *a = load("op_conv"), *b = load("op_conv_5x5");
    size_t na = dlasim_model_input_size(a), nb = dlasim_model_input_size(b);
    size_t oa = dlasim_model_output_size(a), ob = dlasim_model_output_size(b);
    dlasim_model_free(a);
    dlasim_model_free(b);
    size_t n = na > nb ? na : nb, o = oa > ob ? oa : ob;
    float *cal = malloc(CAL * n * sizeof(float)), *x = malloc(n * sizeof(float));
    float *ref = malloc(o * sizeof(float)), *y = malloc(o * sizeof(float));
    assert_true(cal && x && ref && y);
    for (size_t i = 0; i < CAL * n; i++) {
        cal[i] = urand();
    }
    for (size_t i = 0; i < n; i++) {
        x[i] = urand();
    }
    a = compiled("op_conv", cal, CAL);
    b = compiled("op_conv_5x5", cal, CAL);
    struct dlasim_dev *fresh = tdev_new("nv_small", NULL, 0, 1);
    run_or_fail(a, fresh, x, ref);
    dlasim_destroy(fresh);
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    run_or_fail(a, dev, x, y);
    run_or_fail(b, dev, x, y);
    run_or_fail(a, dev, x, y);
    assert_memory_equal(y, ref, oa * sizeof(float));
    static const uint8_t junk[4096] = { 0x5a };
    for (uint64_t addr = 0; addr < (1u << 20); addr += sizeof junk) { /* over the weights */
        assert_int_equal(dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x80000000u + addr, junk, sizeof junk), 0);
    }
    run_or_fail(a, dev, x, y);
    assert_memory_equal(y, ref, oa * sizeof(float));
    dlasim_destroy(dev);
    dlasim_model_free(a);
    dlasim_model_free(b);
    free(cal);
    free(x);
    free(ref);
    free(y);
    rng = others;
}

static void test_depthwise_macs(void **state)
{
    (void)state;
    struct dlasim_model *m = load("op_conv_depthwise32");
    size_t in_n = dlasim_model_input_size(m);
    float *cal = malloc(4 * in_n * sizeof(float));
    assert_non_null(cal);
    for (size_t i = 0; i < 4 * in_n; i++) {
        cal[i] = urand();
    }
    char err[512];
    if (dlasim_model_calibrate(m, cal, 4, NULL, err, sizeof err) ||
        dlasim_model_compile(m, "nv_small", err, sizeof err)) {
        fail_msg("%s", err);
    }
    assert_int_equal(dlasim_model_macs(m), 4ull * 8 * 8 * 3 * 3 * 12 * 12);
    free(cal);
    dlasim_model_free(m);
}
/* issue 17: the CBUF weight-ring conflict of SqueezeNet's stem, resolved by a restart convolution */
OP_TEST(op_ring_restart, 0, "(2 of them CBUF weight-ring restarts)", "1 CBUF weight-ring restart")
/* issue 17: small torchvision models as torch.onnx.export writes them (tools/models/make_torchvision.py):
 * Identity on initializers, Shape/Gather/Concat chains, HardSigmoid, Split, ReduceMean, Resize */
OP_TEST(op_import_pass, 1, "view     Slice", "SDP      Mul", "PDP      GlobalAveragePool", "CPU      Resize")
OP_TEST(tv_mobilenet_v3_small, 0, "SDP      HardSigmoid", "CONV+SDP Conv+HardSigmoid", "SDP      Mul", "CONV+SDP Gemm")
OP_TEST(tv_shufflenet_v2, 1, "view     Slice", "Conv+Relu+MaxPool", "Conv+Relu+GlobalAveragePool",
        "CONV+SDP Gemm")
OP_TEST(tv_densenet, 1, "SDP      BatchNormalization+Relu", "CONV+SDP Gemm")
OP_TEST(tv_lraspp, 1, "CPU      Resize", "CONV+SDP Conv+HardSigmoid")
OP_TEST(op_tanh, 1, "CPU      Tanh", "no SDP LUT")

/* nv_large has the SDP LUT: Sigmoid and Tanh run on it */
static void test_op_sigmoid_nv_large(void **state)
{
    (void)state;
    check_op_on("nv_large", "op_sigmoid", HW("SDP      Sigmoid"), 0, 20.0);
}

static void test_op_tanh_nv_large(void **state)
{
    (void)state;
    check_op_on("nv_large", "op_tanh", HW("SDP      Tanh"), 0, 20.0);
}
OP_TEST(op_mul_const, 0, "CONV+SDP Conv+Mul")
/* an Add of a convolution's output and a tensor computed before it: fused
 * into the convolution's SDP (BN adds it per element, then the Relu) */
OP_TEST(op_add_tensor, 0, "CONV+SDP Conv+Add+Relu")
/* an Add of two Relu outputs: SDP's element-wise Add from memory */
OP_TEST(op_add_standalone, 0, "SDP      Add")
OP_TEST(op_sub_tensor, 0, "SDP      Sub")
OP_TEST(op_mul_tensor, 0, "SDP      Mul")
OP_TEST(op_concat, 0, "placed   Concat")
OP_TEST(op_lrn, 0, "CDP      LRN")
OP_TEST(op_transpose, 1, "Transpose")
OP_TEST(op_squeeze_softmax, 1, "PDP      GlobalAveragePool", "view     Squeeze", "Softmax")
OP_TEST(op_resize, 1, "Resize")
OP_TEST(op_pad, 1, "Pad")
OP_TEST(op_concat_pool, 1, "PDP      MaxPool", "CPU      Concat")
OP_TEST(op_pad_conv, 0, "CONV+SDP Conv ")
OP_TEST(op_affine_standalone, 0, "SDP      BatchNormalization+Relu", "SDP      Mul", "SDP      Sub")

/* ---- refusals --------------------------------------------------------------------------- */

static void refused(const char *name, int status, const char *needle)
{
    char path[256];
    snprintf(path, sizeof path, MODELS "%s.onnx", name);
    size_t len;
    uint8_t *b = tmodel_read(path, &len);
    assert_non_null(b);
    struct dlasim_model *m = NULL;
    char err[512] = "";
    int rc = dlasim_model_load_onnx(b, len, &m, err, sizeof err);
    free(b);
    if (rc != status || !strstr(err, needle)) {
        fail_msg("%s: status %d (want %d), message '%s' (want '%s')", name, rc, status, err, needle);
    }
    assert_null(m);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("bad_unsupported_op", DLASIM_ERR_PARSE, "node 'my_einsum': op Einsum is not supported");
    refused("bad_opset", DLASIM_ERR_PARSE, "opset 9 is not supported");
    refused("bad_external_data", DLASIM_ERR_PARSE, "tensor 'conv.w': its data is stored outside");
    refused("bad_conv_weights_missing", DLASIM_ERR_PARSE, "node 'conv' (Conv): input 'nowhere'");
    /* constants whose conversion or product overflows int64 (UBSan before the fix) */
    refused("bad_resize_huge_scale", DLASIM_ERR_UNSUPPORTED, "node 'up' (Resize): output size out of range");
    refused("bad_reshape_huge", DLASIM_ERR_UNSUPPORTED,
            "node 'reshape' (Reshape): the shape does not keep the number of elements");
    refused("bad_pad_huge", DLASIM_ERR_UNSUPPORTED, "node 'pad' (Pad): pads must be 0..255");
}

/* Every prefix of a valid model: refused or loaded, never a crash. */
static void test_truncated_models(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = tmodel_read(MODELS "op_flatten_gemm.onnx", &len);
    assert_non_null(b);
    unsigned refused_n = 0;
    for (size_t cut = 0; cut < len; cut += 1 + cut / 8) {
        struct dlasim_model *m = NULL;
        char err[512] = "";
        int rc = dlasim_model_load_onnx(b, cut, &m, err, sizeof err);
        if (rc) {
            assert_null(m);
            assert_true(err[0] != 0);
            refused_n++;
        }
        dlasim_model_free(m);
    }
    assert_true(refused_n > 10);
    free(b);
}

/* ---- the Fashion-MNIST model ------------------------------------------------------------- */

static float *idx_images(const char *path, size_t n)
{
    size_t len;
    uint8_t *b = tmodel_read(path, &len);
    if (!b || len < 16 + n * 784) {
        free(b);
        return NULL;
    }
    float *x = malloc(n * 784 * sizeof(float));
    for (size_t i = 0; x && i < n * 784; i++) {
        x[i] = b[16 + i] / 255.0f;
    }
    free(b);
    return x;
}

static int argmax(const float *v, size_t n)
{
    size_t b = 0;
    for (size_t i = 1; i < n; i++) {
        b = v[i] > v[b] ? i : b;
    }
    return (int)b;
}

/* Calibrates m on n inputs of x (in the order idx gives, NULL: as they are)
 * and compiles it; returns the output scale, or 0 with the message in err. */
static float calib_scale(struct dlasim_model *m, const float *x, const size_t *idx, size_t n,
                         const struct dlasim_calib_options *co, char *err, size_t errlen)
{
    float *in = malloc(n * 784 * sizeof *in);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++) {
        memcpy(in + i * 784, x + (idx ? idx[i] : i) * 784, 784 * sizeof *in);
    }
    int rc = dlasim_model_calibrate(m, in, n, co, err, errlen);
    free(in);
    if (rc || dlasim_model_compile(m, "nv_small", err, errlen)) {
        return 0.0f;
    }
    return dlasim_model_output_scale(m);
}

/* A small model's calibration inputs run on several threads (calib.c):
 * the scales must not depend on which thread saw which input.  Checked
 * against one-input calibrations (one thread): min-max over 24 inputs is
 * the largest of the 24 single-input scales; every method gives the same
 * scale for the inputs reversed; limits apply to every thread and an
 * error names the first input, as one thread would. */
static void test_calib_threads_same_scales(void **state)
{
    (void)state;
    enum { N = 24 };
    float *x = idx_images(FMNIST "t10k-images-idx3-ubyte.gz", N);
    if (!x) {
        skip(); /* Debian's dataset-fashion-mnist is not installed */
    }
    struct dlasim_model *m = load("../../models/fashion_mnist");
    char err[512];
    size_t rev[N];
    for (size_t i = 0; i < N; i++) {
        rev[i] = N - 1 - i;
    }
    float single_max = 0;
    for (size_t i = 0; i < N; i++) {
        float s = calib_scale(m, x + i * 784, NULL, 1, NULL, err, sizeof err);
        assert_true(s > 0);
        single_max = s > single_max ? s : single_max;
    }
    static const enum dlasim_calib_method methods[] = { DLASIM_CALIB_MINMAX,
                                                        DLASIM_CALIB_PERCENTILE,
                                                        DLASIM_CALIB_ENTROPY };
    for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
        struct dlasim_calib_options co = { .method = methods[k], .percentile = 99.9,
                                           .max_host_mem = 64u << 20, .max_work = 1u << 30 };
        float fwd = calib_scale(m, x, NULL, N, &co, err, sizeof err);
        float bwd = calib_scale(m, x, rev, N, &co, err, sizeof err);
        if (!(fwd > 0) || fwd != bwd) {
            fail_msg("method %d: scale %g in order, %g reversed (%s)", (int)methods[k], fwd, bwd,
                     err);
        }
        if (methods[k] == DLASIM_CALIB_MINMAX && fwd != single_max) {
            fail_msg("min-max over %d inputs %g, largest single-input scale %g", N, fwd,
                     single_max);
        }
    }
    struct dlasim_calib_options tight = { .method = DLASIM_CALIB_MINMAX, .max_host_mem = 4096 };
    assert_true(calib_scale(m, x, NULL, N, &tight, err, sizeof err) == 0.0f);
    if (!strstr(err, "calibration input 0:") || !strstr(err, "max_host_mem")) {
        fail_msg("limit error: %s", err);
    }
    dlasim_model_free(m);
    free(x);
}

static void test_fashion_mnist_end_to_end(void **state)
{
    (void)state;
    enum { N = 300 };
    float *cal = idx_images(FMNIST "train-images-idx3-ubyte.gz", 200);
    float *x = idx_images(FMNIST "t10k-images-idx3-ubyte.gz", N);
    if (!cal || !x) {
        free(cal);
        free(x);
        skip(); /* Debian's dataset-fashion-mnist is not installed */
    }
    struct dlasim_model *m = load("../../models/fashion_mnist");
    char err[512];
    if (dlasim_model_calibrate(m, cal, 200, NULL, err, sizeof err) ||
        dlasim_model_compile(m, "nv_small", err, sizeof err)) {
        fail_msg("%s", err);
    }
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    float yq[10], yf[10];
    unsigned agree = 0;
    for (int i = 0; i < N; i++) {
        if (dlasim_model_run(m, dev, x + i * 784, yq, NULL, err, sizeof err) ||
            dlasim_model_run_float(m, x + i * 784, yf, err, sizeof err)) {
            fail_msg("%s", err);
        }
        agree += argmax(yq, 10) == argmax(yf, 10);
    }
    if (agree < N * 97 / 100) {
        fail_msg("top-1 agreement with float %u / %d", agree, N);
    }

    /* the same model as a loadable: identical output bytes */
    uint8_t *file;
    size_t len;
    if (dlasim_model_write_loadable(m, &file, &len, err, sizeof err)) {
        fail_msg("write loadable: %s", err);
    }
    struct dlasim_loadable *ld;
    if (dlasim_loadable_open(file, len, &ld, err, sizeof err)) {
        fail_msg("open: %s", err);
    }
    assert_int_equal(dlasim_loadable_num_inputs(ld), 1);
    assert_int_equal(dlasim_loadable_num_outputs(ld), 1);
    /* the input as the packed int8 cube (nv_small: 8-byte atoms, 1 channel) */
    static uint8_t cube[28 * 28 * 8];
    memset(cube, 0, sizeof cube);
    for (int i = 0; i < 784; i++) {
        float v = x[i] * 127.0f; /* input range [0, 1] of the calibration set */
        cube[i * 8] = (uint8_t)(int8_t)(int)(v + 0.5f);
    }
    struct dlasim_loadable_input in = { cube, sizeof cube };
    struct dlasim_dev *dev2 = tdev_new("nv_small", NULL, 0, 1);
    if (dlasim_loadable_run(dev2, ld, &in, 1, NULL, err, sizeof err)) {
        fail_msg("loadable run: %s", err);
    }
    const uint8_t *d;
    size_t dn;
    assert_int_equal(dlasim_loadable_output_dimg(ld, 0, &d, &dn), 0);
    assert_true(dn >= 36 + 10);
    if (dlasim_model_run(m, dev, x, yq, NULL, err, sizeof err)) {
        fail_msg("%s", err);
    }
    float s = dlasim_model_output_scale(m);
    assert_true(s > 0);
    for (int k = 0; k < 10; k++) {
        if ((float)(int8_t)d[36 + k] * s != yq[k]) {
            fail_msg("loadable output %d: %d * %g, compiler run %g", k, (int8_t)d[36 + k], s, yq[k]);
        }
    }
    dlasim_loadable_close(ld);
    free(file);
    dlasim_destroy(dev2);
    dlasim_destroy(dev);
    dlasim_model_free(m);
    free(cal);
    free(x);
}

/* The model's input codes exact (dlasim_model_run's quantization): through
 * a 1x1 max pooling (PDP passes the codes) each output lies within half a
 * quantization step (max |x| / 127, min-max calibration on the same
 * inputs) of its input, for an input narrower than 16 (quantized as one
 * run), a wide one (its lines back to back: one run a surface), a tall
 * one (100x100: runs of several segments) and a large one (12 channels of
 * 150x40, two surfaces: packed in items of rows on the device's team),
 * on a device of one thread and of two.  A code off by one, or a value in
 * another element's place, is a step or more away. */
static void check_input_codes(const char *name, struct dlasim_model *m, unsigned threads,
                              float *x, size_t n, int cal, double half_step)
{
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, threads);
    float *y = malloc(n * sizeof(float));
    assert_non_null(y);
    char err[512];
    for (int r = 0; r < cal; r++) {
        if (dlasim_model_run(m, dev, x + r * n, y, NULL, err, sizeof err)) {
            fail_msg("%s: %s", name, err);
        }
        for (size_t i = 0; i < n; i++) {
            if (fabs((double)y[i] - x[r * n + i]) > half_step) {
                fail_msg("%s (%u threads): input %d value %zu: %g came back as %g (half a step "
                         "%g)", name, threads, r, i, x[r * n + i], y[i], half_step);
            }
        }
    }
    /* a NaN is refused with its index, the last value or one in the
     * middle (the large input: another item's rows than the first) */
    const size_t at[2] = { n - 1, n / 2 + 7 };
    for (int k = 0; k < 2; k++) {
        const float keep = x[at[k]];
        x[at[k]] = NAN;
        char want[64];
        snprintf(want, sizeof want, "input value %zu ", at[k]);
        assert_int_equal(dlasim_model_run(m, dev, x, y, NULL, err, sizeof err), DLASIM_ERR_INVAL);
        assert_non_null(strstr(err, want));
        x[at[k]] = keep;
    }
    dlasim_destroy(dev);
    free(y);
}

static void test_input_codes_exact(void **state)
{
    (void)state;
    static const char *const names[] = { "io_pass_narrow", "io_pass_wide", "io_pass_tall",
                                         "io_pass_big" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        struct dlasim_model *m = load(names[k]);
        size_t n = dlasim_model_input_size(m);
        enum { CAL = 4 };
        float *x = malloc(CAL * n * sizeof(float));
        assert_non_null(x);
        assert_int_equal(dlasim_model_output_size(m), n);
        float amax = 0;
        for (size_t i = 0; i < CAL * n; i++) {
            x[i] = urand();
            amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
        }
        char err[512];
        struct dlasim_calib_options co = { DLASIM_CALIB_MINMAX, 0, 0, 0 };
        if (dlasim_model_calibrate(m, x, CAL, &co, err, sizeof err) ||
            dlasim_model_compile(m, "nv_small", err, sizeof err)) {
            fail_msg("%s: %s", names[k], err);
        }
        const double half_step = 0.5 * amax / 127.0 * (1 + 1e-5);
        check_input_codes(names[k], m, 1, x, n, CAL, half_step);
        check_input_codes(names[k], m, 2, x, n, CAL, half_step);
        dlasim_model_free(m);
        free(x);
    }
}

int main(void)
{
    rng = 0x5eed0009u;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_conv),
        cmocka_unit_test(test_input_codes_exact),
        cmocka_unit_test(test_models_take_turns_on_one_device),
        cmocka_unit_test(test_op_conv_stride_dilation),
        cmocka_unit_test(test_op_conv_5x5),
        cmocka_unit_test(test_op_conv_grouped),
        cmocka_unit_test(test_op_conv_depthwise),
        cmocka_unit_test(test_op_batchnorm),
        cmocka_unit_test(test_op_relu),
        cmocka_unit_test(test_op_clip),
        cmocka_unit_test(test_op_add_const),
        cmocka_unit_test(test_op_maxpool),
        cmocka_unit_test(test_pool_on_the_fly_is_the_conv_pooled),
        cmocka_unit_test(test_op_avgpool),
        cmocka_unit_test(test_op_globalavgpool),
        cmocka_unit_test(test_op_flatten_gemm),
        cmocka_unit_test(test_op_reshape_matmul),
        cmocka_unit_test(test_op_leakyrelu),
        cmocka_unit_test(test_op_prelu),
        cmocka_unit_test(test_op_sigmoid),
        cmocka_unit_test(test_op_tanh),
        cmocka_unit_test(test_op_sigmoid_nv_large),
        cmocka_unit_test(test_op_tanh_nv_large),
        cmocka_unit_test(test_op_mul_const),
        cmocka_unit_test(test_op_add_tensor),
        cmocka_unit_test(test_op_add_standalone),
        cmocka_unit_test(test_op_sub_tensor),
        cmocka_unit_test(test_op_mul_tensor),
        cmocka_unit_test(test_op_concat),
        cmocka_unit_test(test_op_lrn),
        cmocka_unit_test(test_op_transpose),
        cmocka_unit_test(test_op_squeeze_softmax),
        cmocka_unit_test(test_op_resize),
        cmocka_unit_test(test_op_pad),
        cmocka_unit_test(test_op_concat_pool),
        cmocka_unit_test(test_op_pad_conv),
        cmocka_unit_test(test_op_affine_standalone),
        cmocka_unit_test(test_op_conv_depthwise32),
        cmocka_unit_test(test_depthwise_macs),
        cmocka_unit_test(test_op_ring_restart),
        cmocka_unit_test(test_op_import_pass),
        cmocka_unit_test(test_tv_mobilenet_v3_small),
        cmocka_unit_test(test_tv_shufflenet_v2),
        cmocka_unit_test(test_tv_densenet),
        cmocka_unit_test(test_tv_lraspp),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_truncated_models),
        cmocka_unit_test(test_fashion_mnist_end_to_end),
        cmocka_unit_test(test_calib_threads_same_scales),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
