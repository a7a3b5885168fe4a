/*
 * CDMA's INT8 feature fetch (src/sim/nvdla/cdma.c) on the calling thread
 * and on the device's team: cubes of one or several surfaces placed into
 * CBUF from the memory's lent pages (the lines inside one page transposed
 * in one call, a line across pages put together first) or from a whole
 * read (a line stride that leaves gaps, lines longer than a worker's line
 * buffer), one team item a surface from 64 KiB.  Each shape is run on
 * fresh nv_small devices of 1, 2 and 3 threads (1: the caller alone, no
 * team code) through the public convolution API; every output byte of
 * every run is compared with a plain-C direct convolution followed by
 * common/convlayer.c's CACC truncation and SDP output converter, so the
 * team's bytes are the single thread's and both are right.
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

#define IN_ADDR 0x80000000ull
#define WT_ADDR 0x90000000ull
#define OUT_ADDR 0xa0000000ull

/* One test shape: the input cube, its line stride in memory (0 = packed),
 * the kernel. */
struct shape {
    const char *what;
    uint32_t in_w, in_h, in_c, line_stride;
    uint32_t kernel, pad, stride, kernels;
};

static int8_t reference(const struct dlasim_conv_desc *d, const int8_t *in, const int8_t *wt,
                        uint32_t k, uint32_t oy, uint32_t ox)
{
    int64_t acc = 0;
    for (uint32_t c = 0; c < d->in_c; c++) {
        for (uint32_t ky = 0; ky < d->kernel_h; ky++) {
            int64_t y = (int64_t)oy * d->stride_y + ky - d->pad_top;
            for (uint32_t kx = 0; kx < d->kernel_w; kx++) {
                int64_t x = (int64_t)ox * d->stride_x + kx - d->pad_left;
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

static void describe(const struct shape *sh, struct dlasim_conv_desc *d)
{
    dlasim_conv_desc_init(d);
    d->in_w = sh->in_w;
    d->in_h = sh->in_h;
    d->in_c = sh->in_c;
    d->kernel_w = d->kernel_h = sh->kernel;
    d->pad_left = d->pad_right = d->pad_top = d->pad_bottom = sh->pad;
    d->stride_x = d->stride_y = sh->stride;
    d->kernels = sh->kernels;
    d->pad_value = -3;
    d->clip_truncate = 6;
    d->out_offset = 5;
    d->out_scale = 97;
    d->out_shift = 7;
}

/* The shape run on a device of `threads` threads, its output (planar)
 * into out. */
static void run_on(const struct shape *sh, unsigned threads, const int8_t *in, const int8_t *wt,
                   int8_t *out, size_t nout)
{
    struct dlasim_options o = { 0 };
    o.threads = threads;
    o.threads_always = 1; /* the team's split, whatever the host's cores cost */
    struct dlasim_dev *dev;
    char err[256];
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), 0);
    struct dlasim_conv_hw hw;
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    struct dlasim_conv_desc d;
    describe(sh, &d);
    struct dlasim_conv_plan p;
    if (dlasim_conv_plan(&hw, &d, &p, err, sizeof(err))) {
        fail_msg("%s: plan: %s", sh->what, err);
    }
    assert_int_equal((size_t)d.kernels * p.out_h * p.out_w, nout);
    struct dlasim_conv_mem m = { IN_ADDR, WT_ADDR, OUT_ADDR, sh->line_stride, 0, 0, 0 };
    assert_int_equal(dlasim_conv_write_input(dev, &p, &m, in), 0);
    assert_int_equal(dlasim_conv_write_weights(dev, &p, &m, wt), 0);
    if (dlasim_conv_run(dev, &p, &m)) {
        fail_msg("%s, %u threads: run: %s", sh->what, threads, dlasim_last_error(dev));
    }
    assert_int_equal(dlasim_conv_read_output(dev, &p, &m, out), 0);
    dlasim_conv_plan_free(&p);
    dlasim_destroy(dev);
}

static void check_shape(const struct shape *sh, uint64_t seed)
{
    struct dlasim_conv_desc d;
    describe(sh, &d);
    const uint32_t out_w = (sh->in_w + 2 * sh->pad - sh->kernel) / sh->stride + 1;
    const uint32_t out_h = (sh->in_h + 2 * sh->pad - sh->kernel) / sh->stride + 1;
    const size_t nin = (size_t)sh->in_c * sh->in_h * sh->in_w;
    const size_t nwt = (size_t)sh->kernels * sh->in_c * sh->kernel * sh->kernel;
    const size_t nout = (size_t)sh->kernels * out_h * out_w;
    int8_t *in = malloc(nin), *wt = malloc(nwt), *out = malloc(nout), *want = malloc(nout);
    assert_non_null(in);
    assert_non_null(wt);
    assert_non_null(out);
    assert_non_null(want);
    uint64_t s = seed;
    for (size_t i = 0; i < nin; i++) {
        in[i] = (int8_t)splitmix64_next(&s);
    }
    for (size_t i = 0; i < nwt; i++) {
        wt[i] = (int8_t)splitmix64_next(&s);
    }
    for (uint32_t k = 0; k < sh->kernels; k++) {
        for (uint32_t y = 0; y < out_h; y++) {
            for (uint32_t x = 0; x < out_w; x++) {
                want[((size_t)k * out_h + y) * out_w + x] = reference(&d, in, wt, k, y, x);
            }
        }
    }
    for (unsigned threads = 1; threads <= 3; threads++) {
        memset(out, 0x5a, nout);
        run_on(sh, threads, in, wt, out, nout);
        for (size_t i = 0; i < nout; i++) {
            if (out[i] != want[i]) {
                fail_msg("%s (%ux%ux%u, line stride %u), %u threads: output %zu (kernel %zu) "
                         "is %d, want %d",
                         sh->what, sh->in_w, sh->in_h, sh->in_c, sh->line_stride, threads, i,
                         i / ((size_t)out_h * out_w), out[i], want[i]);
            }
        }
    }
    free(in);
    free(wt);
    free(out);
    free(want);
}

/* One 8-channel surface of 73 KiB (one team item), lines across pages. */
static void test_one_large_surface(void **state)
{
    (void)state;
    const struct shape sh = { "one 96x96 surface", 96, 96, 8, 0, 1, 0, 1, 4 };
    check_shape(&sh, 0x31c1);
}

/* One surface of 18 KiB, 384-byte lines: runs of lines in a page. */
static void test_one_small_surface(void **state)
{
    (void)state;
    const struct shape sh = { "one 48x48 surface", 48, 48, 8, 0, 3, 1, 1, 3 };
    check_shape(&sh, 0x31c2);
}

/* Two surfaces of 1,600-byte lines, many across 4 KiB pages, on the team. */
static void test_lines_across_pages(void **state)
{
    (void)state;
    const struct shape sh = { "200-pixel lines", 200, 41, 16, 0, 3, 1, 2, 2 };
    check_shape(&sh, 0x31c3);
}

/* Lines with a gap between them: the cube read whole, then the team. */
static void test_read_whole(void **state)
{
    (void)state;
    const struct shape sh = { "gapped lines", 64, 70, 24, 64 * 8 + 96, 1, 0, 1, 5 };
    check_shape(&sh, 0x31c4);
}

/* Lines longer than a worker's line buffer (4,160 bytes): read whole. */
static void test_long_lines(void **state)
{
    (void)state;
    const struct shape sh = { "520-pixel lines", 520, 9, 8, 0, 1, 0, 1, 3 };
    check_shape(&sh, 0x31c5);
}

/* Twelve surfaces: an item a surface. */
static void test_many_surfaces(void **state)
{
    (void)state;
    const struct shape sh = { "12 surfaces", 28, 28, 96, 0, 1, 0, 1, 8 };
    check_shape(&sh, 0x31c6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_large_surface),
        cmocka_unit_test(test_one_small_surface),
        cmocka_unit_test(test_lines_across_pages),
        cmocka_unit_test(test_read_whole),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_many_surfaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
