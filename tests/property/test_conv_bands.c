/*
 * Property test of the convolution planner (include/dlasim/conv.h) over
 * several hardware layers: for every weight mode (all kernels held, two
 * kernel groups streamed, one group streamed), random convolutions the
 * planner splits into two or more bands along the height are planned,
 * written, programmed and run on a fresh nv_small device, and every output
 * byte is compared with a plain-C direct convolution (loops over the planar
 * arrays, padding value, dilation, strides) followed by common/convlayer.c's
 * CACC truncation and SDP output converter.  Weight counts are drawn so that
 * the weight bytes are often not a multiple of 128, where the hardware's
 * weight ring keeps pointers across layers (src/sim/nvdla/cbuf.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/convlayer.h"
#include "common/rng.h"
#include "dlasim/conv.h"
#include "dlasim/dlasim.h"

#define SHAPES_PER_MODE 6
#define IN_ADDR 0x80000000ull
#define WT_ADDR 0x90000000ull
#define OUT_ADDR 0xa0000000ull

/* A random convolution shaped so the planner is likely to choose `mode`
 * with several bands. */
static void draw(uint64_t *s, enum dlasim_conv_weight_mode mode, struct dlasim_conv_desc *d)
{
    dlasim_conv_desc_init(d);
    static const uint32_t kernels_wh[][2] = { { 1, 1 }, { 3, 3 }, { 2, 3 }, { 3, 1 }, { 1, 4 } };
    const uint32_t *k = kernels_wh[splitmix64_below(s, 5)];
    d->kernel_w = k[0];
    d->kernel_h = k[1];
    d->stride_x = splitmix64_range(s, 1, 3);
    d->stride_y = splitmix64_range(s, 1, 2);
    if (splitmix64_below(s, 4) == 0) {
        d->dilation_x = splitmix64_range(s, 1, 2);
        d->dilation_y = splitmix64_range(s, 1, 2);
    }
    uint32_t ew = (d->kernel_w - 1) * d->dilation_x + 1, eh = (d->kernel_h - 1) * d->dilation_y + 1;
    d->pad_left = splitmix64_below(s, ew);
    d->pad_right = splitmix64_below(s, ew);
    d->pad_top = splitmix64_below(s, eh);
    d->pad_bottom = splitmix64_below(s, eh);
    d->pad_value = (int32_t)splitmix64_range(s, 0, 255) - 128;
    d->clip_truncate = splitmix64_range(s, 0, 10);
    d->out_offset = (int32_t)splitmix64_range(s, 0, 80) - 40;
    d->out_scale = (int32_t)splitmix64_range(s, 1, 200);
    d->out_shift = splitmix64_range(s, 0, 10);
    switch (mode) {
    case DLASIM_CONV_WEIGHTS_FULL:
        d->in_w = splitmix64_range(s, 16, 40);
        d->in_c = 64 + 8 * splitmix64_range(s, 0, 17);
        d->in_h = splitmix64_range(s, 20, 48);
        d->kernels = splitmix64_range(s, 1, 20);
        break;
    case DLASIM_CONV_WEIGHTS_PINGPONG:
        d->kernel_w = d->kernel_h = 3;
        d->dilation_x = d->dilation_y = 1;
        d->pad_left = d->pad_right = d->pad_top = d->pad_bottom = splitmix64_below(s, 2);
        d->in_w = splitmix64_range(s, 10, 16);
        d->in_c = 200 + splitmix64_range(s, 0, 60);
        d->in_h = splitmix64_range(s, 30, 48);
        d->kernels = splitmix64_range(s, 30, 44);
        d->stride_x = splitmix64_range(s, 2, 4);
        d->stride_y = splitmix64_range(s, 2, 3);
        break;
    default:
        d->kernel_w = d->kernel_h = 3;
        d->dilation_x = d->dilation_y = 1;
        d->pad_left = d->pad_right = d->pad_top = d->pad_bottom = splitmix64_below(s, 2);
        d->in_w = splitmix64_range(s, 6, 10);
        d->in_c = 480 + splitmix64_range(s, 0, 160);
        d->in_h = splitmix64_range(s, 24, 36);
        d->kernels = splitmix64_range(s, 6, 20);
        d->stride_x = splitmix64_range(s, 2, 4);
        d->stride_y = splitmix64_range(s, 2, 3);
        break;
    }
}

/* Plain direct convolution of output (k, oy, ox), then CACC and SDP. */
static int8_t reference(const struct dlasim_conv_desc *d, const int8_t *in, const int8_t *wt,
                        uint32_t k, uint32_t oy, uint32_t ox)
{
    int64_t acc = 0;
    for (uint32_t c = 0; c < d->in_c; c++) {
        for (uint32_t ky = 0; ky < d->kernel_h; ky++) {
            int64_t y = (int64_t)oy * d->stride_y + (int64_t)ky * d->dilation_y - d->pad_top;
            for (uint32_t kx = 0; kx < d->kernel_w; kx++) {
                int64_t x = (int64_t)ox * d->stride_x + (int64_t)kx * d->dilation_x - d->pad_left;
                int32_t v = (y < 0 || x < 0 || y >= d->in_h || x >= d->in_w)
                                ? (int8_t)d->pad_value
                                : in[((size_t)c * d->in_h + (size_t)y) * d->in_w + (size_t)x];
                acc += (int64_t)v *
                       wt[(((size_t)k * d->in_c + c) * d->kernel_h + ky) * d->kernel_w + kx];
            }
        }
    }
    unsigned sat = 0;
    struct conv L;
    memset(&L, 0, sizeof(L));
    L.sdp_offset = d->out_offset;
    L.sdp_scale = (uint32_t)d->out_scale;
    L.sdp_shift = d->out_shift;
    return conv_ref_sdp(&L, conv_ref_cacc(acc, d->clip_truncate, &sat), 0);
}

/* Plan, run and check one convolution; returns 0 if the planner did not
 * choose `mode` with two or more bands (nothing checked). */
static int run_one(uint64_t *s, enum dlasim_conv_weight_mode mode)
{
    struct dlasim_options o = { 0 };
    o.threads = 1;
    struct dlasim_dev *dev;
    char err[256];
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), 0);
    struct dlasim_conv_hw hw;
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    struct dlasim_conv_desc d;
    draw(s, mode, &d);
    struct dlasim_conv_plan p;
    int planned = dlasim_conv_plan(&hw, &d, &p, err, sizeof(err)) == 0;
    if (!planned || p.weight_mode != mode || p.n_layers < 2) {
        if (planned) {
            dlasim_conv_plan_free(&p);
        }
        dlasim_destroy(dev);
        return 0;
    }
    size_t nin = (size_t)d.in_c * d.in_h * d.in_w;
    size_t nwt = (size_t)d.kernels * d.in_c * d.kernel_h * d.kernel_w;
    size_t nout = (size_t)d.kernels * p.out_h * p.out_w;
    int8_t *in = malloc(nin), *wt = malloc(nwt), *out = malloc(nout);
    assert_non_null(in);
    assert_non_null(wt);
    assert_non_null(out);
    for (size_t i = 0; i < nin; i++) {
        in[i] = (int8_t)splitmix64_next(s);
    }
    for (size_t i = 0; i < nwt; i++) {
        wt[i] = (int8_t)splitmix64_next(s);
    }
    struct dlasim_conv_mem m = { IN_ADDR, WT_ADDR, OUT_ADDR, 0, 0, 0, 0 };
    assert_int_equal(dlasim_conv_write_input(dev, &p, &m, in), 0);
    assert_int_equal(dlasim_conv_write_weights(dev, &p, &m, wt), 0);
    int rc = dlasim_conv_run(dev, &p, &m);
    if (rc) {
        fail_msg("conv run: %s", dlasim_last_error(dev));
    }
    assert_int_equal(dlasim_conv_read_output(dev, &p, &m, out), 0);
    for (uint32_t k = 0; k < d.kernels; k++) {
        for (uint32_t y = 0; y < p.out_h; y++) {
            for (uint32_t x = 0; x < p.out_w; x++) {
                int8_t want = reference(&d, in, wt, k, y, x);
                int8_t got = out[((size_t)k * p.out_h + y) * p.out_w + x];
                if (got != want) {
                    fail_msg("%s, %zu bands, in %ux%ux%u kernel %ux%ux%u stride %ux%u "
                             "dilation %ux%u: output (%u,%u,%u) is %d, want %d",
                             dlasim_conv_weight_mode_name(mode), p.n_layers, d.in_w, d.in_h,
                             d.in_c, d.kernel_w, d.kernel_h, d.kernels, d.stride_x, d.stride_y,
                             d.dilation_x, d.dilation_y, k, y, x, got, want);
                }
            }
        }
    }
    free(in);
    free(wt);
    free(out);
    dlasim_conv_plan_free(&p);
    dlasim_destroy(dev);
    return 1;
}

static void check_mode(enum dlasim_conv_weight_mode mode, uint64_t seed)
{
    uint64_t s = seed;
    int done = 0;
    for (int tries = 0; done < SHAPES_PER_MODE && tries < 200; tries++) {
        done += run_one(&s, mode);
    }
    assert_int_equal(done, SHAPES_PER_MODE);
}

static void test_full_weights_bands(void **state)
{
    (void)state;
    check_mode(DLASIM_CONV_WEIGHTS_FULL, 0x7f01);
}

static void test_pingpong_weights_bands(void **state)
{
    (void)state;
    check_mode(DLASIM_CONV_WEIGHTS_PINGPONG, 0x7f02);
}

static void test_one_group_weights_bands(void **state)
{
    (void)state;
    check_mode(DLASIM_CONV_WEIGHTS_ONE_GROUP, 0x7f03);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_weights_bands),
        cmocka_unit_test(test_pingpong_weights_bands),
        cmocka_unit_test(test_one_group_weights_bands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
