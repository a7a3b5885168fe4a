/*
 * Unit tests of the int8 convolution kernel (src/kernels/conv_s8.c).
 *
 * The fast kernel, on every instruction set and tile shape this CPU runs,
 * with 1 and 3 threads, must equal dla_conv_s8_ref bit for bit (sums wrap
 * mod 2^32); the reference itself is checked against a separate int64
 * computation written here, and both against hand-computed values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "common/rng.h"
#include "common/team.h"
#include "kernels/conv_s8.h"
#include "kernels/conv_s8_impl.h"

#define CANARY 16 /* int32s after the output that must stay untouched */
#define CANARY_VALUE 0x5A5A5A5A

static uint32_t rnd_range(uint64_t *s, uint32_t lo, uint32_t hi)
{
    return splitmix64_range(s, lo, hi);
}

/* Two's complement reading of the low 32 bits of v. */
static int32_t wrap32(int64_t v)
{
    uint32_t u = (uint32_t)((uint64_t)v & 0xFFFFFFFFu);
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}

/* Independent check: channel-outer loop order, exact int64 sums, wrapped
 * once at the end. */
static void conv_int64(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                       int32_t *out)
{
    size_t npix = (size_t)g->out_h * g->out_w;
    int64_t *acc = calloc((size_t)g->out_k * npix + 1, sizeof(int64_t));
    assert_non_null(acc);
    for (size_t c = 0; c < g->in_c; c++) {
        for (size_t k = 0; k < g->out_k; k++) {
            for (size_t ky = 0; ky < g->k_h; ky++) {
                for (size_t kx = 0; kx < g->k_w; kx++) {
                    int64_t w = wt[((k * g->in_c + c) * g->k_h + ky) * g->k_w + kx];
                    for (size_t oy = 0; oy < g->out_h; oy++) {
                        const int8_t *row = in + (c * g->in_h + oy * g->stride_y +
                                                  ky * g->dil_y) * g->in_w + kx * g->dil_x;
                        for (size_t ox = 0; ox < g->out_w; ox++) {
                            acc[k * npix + oy * g->out_w + ox] += w * row[ox * g->stride_x];
                        }
                    }
                }
            }
        }
    }
    for (size_t i = 0; i < (size_t)g->out_k * npix; i++) {
        out[i] = wrap32(acc[i]);
    }
    free(acc);
}

struct bufs {
    int8_t *in, *wt;
    int32_t *ref, *out;
    size_t nin, nwt, nout;
};

static void bufs_alloc(struct bufs *b, const struct dla_conv_geom *g)
{
    b->nin = (size_t)g->in_c * g->in_h * g->in_w;
    b->nwt = (size_t)g->out_k * g->in_c * g->k_h * g->k_w;
    b->nout = (size_t)g->out_k * g->out_h * g->out_w;
    /* exact sizes (+1 to keep malloc(0) out): ASan sees any overread */
    b->in = malloc(b->nin + 1);
    b->wt = malloc(b->nwt + 1);
    b->ref = malloc((b->nout + 1) * sizeof(int32_t));
    b->out = malloc((b->nout + CANARY) * sizeof(int32_t));
    assert_non_null(b->in);
    assert_non_null(b->wt);
    assert_non_null(b->ref);
    assert_non_null(b->out);
}

static void bufs_free(struct bufs *b)
{
    free(b->in);
    free(b->wt);
    free(b->ref);
    free(b->out);
}

/* mode 0: uniform int8; 1: only -128 and 127; 2: mostly -128 (large sums);
 * the non-negative codes of a post-ReLU input (AVX2's U8 path): 3: uniform
 * 0..127; 4: only 0 and 127; 5: half 0, half 1..127; 6: all 127;
 * weights around AVX2's paired-step bound (four weights of a pair lane
 * may share an int16 sum when the magnitudes of each sign add up to at
 * most 258): 7: a network's bell-shaped weights, 1.5 x (sum of four
 * uniforms): mostly small, some at +-127; 8: only 64 and 65 (lane sums
 * 256-260 against inputs of 127: 32512-33020, around 32767); 9: only -64
 * and -65 */
static void fill(int8_t *p, size_t n, uint64_t *s, int mode)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64_next(s);
        if (mode == 3) {
            p[i] = (int8_t)((r >> 8) & 127);
        } else if (mode == 4) {
            p[i] = (r & 1) ? 127 : 0;
        } else if (mode == 5) {
            p[i] = (r & 1) ? (int8_t)((r >> 8) % 127 + 1) : 0;
        } else if (mode == 6) {
            p[i] = 127;
        } else if (mode == 7) {
            int v = (int)(r & 63) + (int)((r >> 6) & 63) + (int)((r >> 12) & 63) +
                    (int)((r >> 18) & 63) - 126;
            v = v * 3 / 2;
            p[i] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
        } else if (mode == 8 || mode == 9) {
            int v = (r >> 8) & 1 ? 65 : 64;
            p[i] = (int8_t)(mode == 8 ? v : -v);
        } else if (mode == 1) {
            p[i] = (r & 1) ? 127 : -128;
        } else if (mode == 2) {
            p[i] = (r & 7) ? -128 : (int8_t)(uint8_t)(r >> 8);
        } else {
            p[i] = (int8_t)(uint8_t)(r >> 8);
        }
    }
}

static void poison_out(struct bufs *b)
{
    for (size_t i = 0; i < b->nout + CANARY; i++) {
        b->out[i] = CANARY_VALUE;
    }
}

static void expect_same(const struct bufs *b, const char *what)
{
    for (size_t i = 0; i < b->nout; i++) {
        if (b->out[i] != b->ref[i]) {
            fail_msg("%s: out[%zu] = %d, reference %d", what, i, b->out[i], b->ref[i]);
        }
    }
    for (size_t i = b->nout; i < b->nout + CANARY; i++) {
        if (b->out[i] != CANARY_VALUE) {
            fail_msg("%s: wrote past the output at %zu", what, i);
        }
    }
}

/* Weights packed once (dla_conv_wpack_build*), each pack used by several
 * calls: every ISA x tile shape with 1 thread, the automatic shape with 3,
 * and the public entry point, against b->ref. */
static void check_packed_paths(const struct dla_conv_geom *g, struct bufs *b, const char *name)
{
    char what[160];

    for (int isa = 0; isa < DLA_CONV_ISA_COUNT; isa++) {
        if (!dla_conv_isa_supported((enum dla_conv_isa)isa)) {
            continue;
        }
        /* AVX2 packs U8 cells (flags 0: P16 converted per call for inputs
         * with negative codes) or P16 cells (DLA_CONV_NO_U8) */
        unsigned last = isa == DLA_CONV_ISA_AVX2 ? DLA_CONV_NO_U8 : 0;
        for (unsigned flags = 0; flags <= last; flags += DLA_CONV_NO_U8) {
            struct dla_conv_wpack *w = NULL;
            assert_int_equal(
                dla_conv_wpack_build_isa(g, b->wt, (enum dla_conv_isa)isa, flags, &w), 0);
            int shapes = isa == DLA_CONV_ISA_GENERIC ? 0 : DLA_CONV_SHAPES;
            for (int shape = -1; shape < shapes; shape++) {
                for (unsigned threads = 1; threads <= (shape == -1 ? 3u : 1u); threads += 2) {
                    poison_out(b);
                    int rc = dla_conv_s8_packed_opts(g, b->in, w, b->out, shape, threads, NULL);
                    snprintf(what, sizeof what, "%s packed isa=%s flags=%u shape=%d threads=%u",
                             name, dla_conv_isa_name((enum dla_conv_isa)isa), flags, shape,
                             threads);
                    if (rc != 0) {
                        fail_msg("%s: rc %d", what, rc);
                    }
                    expect_same(b, what);
                }
            }
            dla_conv_wpack_free(w);
        }
    }
    struct dla_conv_wpack *w = NULL;
    assert_int_equal(dla_conv_wpack_build(g, b->wt, &w), 0);
    assert_true(dla_conv_wpack_bytes(w) > 0);
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    assert_int_equal(dla_team_threads(pool), 3);
    for (int run = 0; run < 4; run++) {
        poison_out(b);
        /* calls with threads made for the call, then with the pool's */
        assert_int_equal(dla_conv_s8_packed(g, b->in, w, b->out, run < 2 ? 2 : 3,
                                            run < 2 ? NULL : pool), 0);
        snprintf(what, sizeof what, "%s dla_conv_s8_packed run %d", name, run);
        expect_same(b, what);
    }
    /* every thread count the pool can serve, the big shapes on all of them */
    for (unsigned t = 1; t <= 4; t++) {
        poison_out(b);
        assert_int_equal(dla_conv_s8_packed_opts(g, b->in, w, b->out, -1, t, pool), 0);
        snprintf(what, sizeof what, "%s packed pool threads=%u", name, t);
        expect_same(b, what);
    }
    dla_team_destroy(pool);
    dla_conv_wpack_free(w);
}

/* Every ISA x tile shape x packing variant with 1 thread, the automatic
 * shape of each ISA with 3 threads (thread creation is slow under ASan),
 * and the public entry point with 1 and 3, against b->ref. */
static void check_all_paths(const struct dla_conv_geom *g, struct bufs *b, const char *name)
{
    static const unsigned threads[2] = {1, 3};
    char what[160];

    for (int isa = 0; isa < DLA_CONV_ISA_COUNT; isa++) {
        if (!dla_conv_isa_supported((enum dla_conv_isa)isa)) {
            continue;
        }
        /* generic: one tile shape; the VBMI flag only matters for Q8 cells,
         * the U8 one for AVX2 (then flags 0 and 2 take both its paths) */
        int shapes = isa == DLA_CONV_ISA_GENERIC ? 0 : DLA_CONV_SHAPES;
        unsigned last_flags = isa == DLA_CONV_ISA_AVX512VNNI ? DLA_CONV_NO_VBMI
                              : isa == DLA_CONV_ISA_AVX2     ? DLA_CONV_NO_U8
                                                             : 0;
        unsigned flag_step = isa == DLA_CONV_ISA_AVX2 ? DLA_CONV_NO_U8 : 1;
        for (int shape = -1; shape < shapes; shape++) {
            for (unsigned flags = 0; flags <= last_flags; flags += flag_step) {
                for (int ti = 0; ti < (shape == -1 && flags == 0 ? 2 : 1); ti++) {
                    struct dla_conv_opts o;
                    o.isa = (enum dla_conv_isa)isa;
                    o.shape = shape;
                    o.flags = flags;
                    o.threads = threads[ti];
                    poison_out(b);
                    int rc = dla_conv_s8_opts(&o, g, b->in, b->wt, b->out);
                    snprintf(what, sizeof what, "%s isa=%s shape=%d flags=%u threads=%u", name,
                             dla_conv_isa_name(o.isa), shape, flags, o.threads);
                    if (rc != 0) {
                        fail_msg("%s: rc %d", what, rc);
                    }
                    expect_same(b, what);
                }
            }
        }
    }
    for (int ti = 0; ti < 2; ti++) {
        poison_out(b);
        assert_int_equal(dla_conv_s8(g, b->in, b->wt, b->out, threads[ti]), 0);
        snprintf(what, sizeof what, "%s dla_conv_s8 threads=%u", name, threads[ti]);
        expect_same(b, what);
    }
    check_packed_paths(g, b, name);
}

static struct dla_conv_geom geom(uint32_t in_c, uint32_t out_k, uint32_t out_h, uint32_t out_w,
                                 uint32_t k_h, uint32_t k_w, uint32_t sy, uint32_t sx,
                                 uint32_t dy, uint32_t dx, uint32_t extra_h, uint32_t extra_w)
{
    struct dla_conv_geom g;
    g.in_c = in_c;
    g.out_k = out_k;
    g.out_h = out_h;
    g.out_w = out_w;
    g.k_h = k_h;
    g.k_w = k_w;
    g.stride_y = sy;
    g.stride_x = sx;
    g.dil_y = dy;
    g.dil_x = dx;
    g.in_h = (out_h - 1) * sy + (k_h - 1) * dy + 1 + extra_h;
    g.in_w = (out_w - 1) * sx + (k_w - 1) * dx + 1 + extra_w;
    return g;
}

/* Reference vs int64 check, then every fast path vs reference. */
static void run_case(const struct dla_conv_geom *g, uint64_t seed, int mode_in, int mode_wt,
                     int check_int64, const char *name)
{
    struct bufs b;
    uint64_t s = seed;

    bufs_alloc(&b, g);
    fill(b.in, b.nin, &s, mode_in);
    fill(b.wt, b.nwt, &s, mode_wt);
    dla_conv_s8_ref(g, b.in, b.wt, b.ref);
    if (check_int64) {
        int32_t *chk = malloc((b.nout + 1) * sizeof(int32_t));
        assert_non_null(chk);
        conv_int64(g, b.in, b.wt, chk);
        for (size_t i = 0; i < b.nout; i++) {
            if (chk[i] != b.ref[i]) {
                fail_msg("%s: reference out[%zu] = %d, int64 check %d", name, i, b.ref[i], chk[i]);
            }
        }
        free(chk);
    }
    check_all_paths(g, &b, name);
    bufs_free(&b);
}

/* ------------------------------------------------------------------ tests */

/* 2 channels, 3x4 input, 2x2 kernel, 2 output channels, stride 1 x 2.
 * Expected values worked out by hand (see comments). */
static void test_hand_checked(void **state)
{
    (void)state;
    struct dla_conv_geom g = geom(2, 2, 2, 2, 2, 2, 1, 2, 1, 1, 0, 0);
    /* in_h = 3, in_w = (2-1)*2 + 1 + 1 = 4 */
    static const int8_t in[2 * 3 * 4] = {
        1, 2, 3, 4,   /* c0 y0 */
        5, 6, 7, 8,   /* c0 y1 */
        9, 10, 11, 12, /* c0 y2 */
        -1, 0, 1, -128, /* c1 y0 */
        2, 127, -2, 3,  /* c1 y1 */
        0, 1, 0, -1,    /* c1 y2 */
    };
    static const int8_t wt[2 * 2 * 2 * 2] = {
        1, 0, 0, 1,  /* k0 c0: w00 w01 / w10 w11 */
        1, 1, 1, 1,  /* k0 c1 */
        -1, 2, 3, 4, /* k1 c0 */
        0, 0, 0, -2, /* k1 c1 */
    };
    /*
     * k0 (oy, ox) = c0: in[y][x] + in[y+1][x+1]; c1: sum of the 2x2 window,
     * x = 2 * ox:
     *  (0,0): (1 + 6) + (-1 + 0 + 2 + 127) = 7 + 128 = 135
     *  (0,1): (3 + 8) + (1 - 128 - 2 + 3) = 11 - 126 = -115
     *  (1,0): (5 + 10) + (2 + 127 + 0 + 1) = 15 + 130 = 145
     *  (1,1): (7 + 12) + (-2 + 3 + 0 - 1) = 19 + 0 = 19
     * k1 = c0: -in[y][x] + 2 in[y][x+1] + 3 in[y+1][x] + 4 in[y+1][x+1];
     *      c1: -2 in[y+1][x+1]:
     *  (0,0): (-1 + 4 + 15 + 24) + (-254) = 42 - 254 = -212
     *  (0,1): (-3 + 8 + 21 + 32) + (-6) = 58 - 6 = 52
     *  (1,0): (-5 + 12 + 27 + 40) + (-2) = 74 - 2 = 72
     *  (1,1): (-7 + 16 + 33 + 48) + (2) = 90 + 2 = 92
     */
    static const int32_t expect[2 * 2 * 2] = {135, -115, 145, 19, -212, 52, 72, 92};
    int32_t ref[8], chk[8];
    struct bufs b;

    assert_int_equal(g.in_h, 3);
    assert_int_equal(g.in_w, 4);
    dla_conv_s8_ref(&g, in, wt, ref);
    conv_int64(&g, in, wt, chk);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(ref[i], expect[i]);
        assert_int_equal(chk[i], expect[i]);
    }
    bufs_alloc(&b, &g);
    memcpy(b.in, in, sizeof in);
    memcpy(b.wt, wt, sizeof wt);
    memcpy(b.ref, expect, sizeof expect);
    check_all_paths(&g, &b, "hand-checked");
    bufs_free(&b);
}

/* Sums past 2^31 must wrap like a 32-bit accumulator: -128 * -128 over
 * 16384 channels x 9 taps = 2^14 * 147456 = 2415919104 -> -1879048192. */
static void test_wrapping_sums(void **state)
{
    (void)state;
    struct dla_conv_geom g = geom(16384, 3, 1, 2, 3, 3, 1, 1, 1, 1, 0, 0);
    struct bufs b;

    bufs_alloc(&b, &g);
    memset(b.in, 0x80, b.nin); /* -128 */
    memset(b.wt, 0x80, b.nwt);
    for (size_t i = 2 * b.nwt / 3; i < b.nwt; i++) {
        b.wt[i] = 127; /* k2: -128 * 127 * 147456 = -2397044736 -> 1897922560 */
    }
    dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
    assert_int_equal(b.ref[0], -1879048192);
    assert_int_equal(b.ref[1], -1879048192);
    assert_int_equal(b.ref[4], 1897922560);
    assert_int_equal(b.ref[5], 1897922560);
    check_all_paths(&g, &b, "wrap -128/127");
    bufs_free(&b);

    /* random extremes over many channels, 1x1 and 3x3 */
    struct dla_conv_geom g1 = geom(140000, 2, 1, 3, 1, 1, 1, 1, 1, 1, 0, 0);
    run_case(&g1, 11, 2, 2, 1, "wrap 1x1 140000 channels");
    struct dla_conv_geom g3 = geom(20001, 5, 2, 1, 3, 3, 1, 1, 1, 1, 0, 1);
    run_case(&g3, 12, 1, 1, 1, "wrap 3x3 -128/127");
}

static void test_edge_geometries(void **state)
{
    (void)state;
    static const struct {
        uint32_t in_c, out_k, out_h, out_w, k_h, k_w, sy, sx, dy, dx, eh, ew;
        const char *name;
    } cases[] = {
        {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, "1x1x1"},
        {1, 1, 7, 9, 3, 3, 1, 1, 1, 1, 0, 0, "in_c 1 out_k 1"},
        {1, 17, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, "in_c 1 stride 2"},
        {3, 1, 9, 11, 6, 3, 1, 1, 1, 1, 0, 0, "kernel 6x3"},
        {5, 9, 4, 6, 6, 3, 2, 1, 2, 3, 2, 0, "6x3 dilated strided"},
        {7, 8, 6, 5, 3, 3, 1, 1, 3, 2, 0, 0, "dilation 3x2"},
        {6, 5, 4, 4, 5, 5, 3, 3, 1, 1, 2, 2, "kernel 5x5 stride 3 (25 taps)"},
        {9, 10, 5, 7, 4, 4, 1, 1, 1, 1, 0, 0, "kernel 4x4 (16 taps)"},
        {4, 4, 3, 3, 2, 2, 4, 5, 1, 1, 3, 4, "stride larger than kernel"},
        {2, 3, 2, 3, 3, 3, 2, 2, 3, 3, 0, 0, "stride 2 dilation 3"},
        {13, 3, 1, 1, 7, 7, 1, 1, 1, 1, 0, 0, "single output pixel"},
        {1027, 19, 3, 5, 1, 1, 1, 1, 1, 1, 0, 0, "1x1 1027 channels"},
        {8192, 2, 1, 2, 1, 1, 1, 1, 1, 1, 0, 0, "1x1 8192 channels"},
        {33, 50, 1, 60, 1, 3, 1, 1, 1, 1, 0, 0, "one long row"},
        {2, 3, 50, 1, 3, 1, 1, 1, 1, 1, 0, 0, "one tall column"},
        {3, 64, 7, 7, 7, 7, 2, 2, 1, 1, 1, 1, "7x7 stride 2"},
        {12, 7, 8, 8, 1, 1, 2, 2, 1, 1, 1, 1, "1x1 stride 2"},
        {5, 24, 3, 17, 2, 9, 1, 2, 2, 1, 0, 3, "2x9 mixed strides"},
        {8, 6, 3, 37, 3, 3, 2, 2, 1, 1, 0, 1, "stride 2 long rows, even and odd width"},
        {9, 5, 2, 35, 3, 2, 1, 2, 1, 1, 0, 0, "stride 2 long rows, partial group"},
        /* one output pixel: the channels-in-lanes kernel (U8 on AVX2, Q8 on VNNI) */
        {1568, 64, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, "fully connected 1568 -> 64"},
        {1027, 70, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, "fully connected 1027 -> 70 (k tail, partial group)"},
        {2048, 1000, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, "fully connected 2048 -> 1000"},
        {32, 64, 1, 1, 7, 7, 1, 1, 1, 1, 0, 0, "one pixel over a 7x7 window"},
        {5, 9, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, "one pixel of a padded input"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dla_conv_geom g = geom(cases[i].in_c, cases[i].out_k, cases[i].out_h,
                                      cases[i].out_w, cases[i].k_h, cases[i].k_w, cases[i].sy,
                                      cases[i].sx, cases[i].dy, cases[i].dx, cases[i].eh,
                                      cases[i].ew);
        run_case(&g, 100 + i, (int)(i % 3), (int)((i + 1) % 3), 1, cases[i].name);
    }
}

static void test_random_geometries(void **state)
{
    (void)state;
    uint64_t s = 0xC0FFEEull;
    char name[96];

    for (int i = 0; i < 60; i++) {
        uint32_t k_h = rnd_range(&s, 1, 6), k_w = rnd_range(&s, 1, 6);
        uint32_t big = rnd_range(&s, 0, 3) == 0;
        struct dla_conv_geom g = geom(rnd_range(&s, 1, big ? 70 : 20), rnd_range(&s, 1, 40),
                                      rnd_range(&s, 1, big ? 30 : 9), rnd_range(&s, 1, big ? 40 : 9),
                                      k_h, k_w, rnd_range(&s, 1, 3), rnd_range(&s, 1, 3),
                                      rnd_range(&s, 1, 3), rnd_range(&s, 1, 3),
                                      rnd_range(&s, 0, 2), rnd_range(&s, 0, 2));
        snprintf(name, sizeof name, "random #%d (c%u k%u %ux%u kern %ux%u s%u,%u d%u,%u)", i,
                 g.in_c, g.out_k, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_y, g.stride_x,
                 g.dil_y, g.dil_x);
        run_case(&g, splitmix64_next(&s), (int)rnd_range(&s, 0, 2), (int)rnd_range(&s, 0, 2),
                 i < 20, name);
    }
}

/* Kernels whose non-zero weights are in the first C = 1..7 of in_c
 * channels (a first layer padded to Atomic-C): packed folded (taps as
 * channels, DLA_CONV_FOLD_STEPS folds whenever it saves steps), unfolded
 * (DLA_CONV_NO_FOLD) and as chosen (flags 0), on a planar input and on
 * one described in place with pads of either sign, every ISA, 1 and 3
 * threads, against the reference; the random geometries of
 * test_random_geometries. */
static void few_channels_case(const struct dla_conv_geom *g, uint32_t c_real, uint64_t *s,
                              int mode_in, struct dla_team *pool, const char *name,
                              unsigned *folded)
{
    static const unsigned fold_flags[3] = {DLA_CONV_FOLD_STEPS, DLA_CONV_NO_FOLD, 0};
    char what[240];
    struct bufs b;
    bufs_alloc(&b, g);
    fill(b.wt, b.nwt, s, (int)rnd_range(s, 0, 2));
    for (size_t k = 0; k < g->out_k; k++) {
        memset(b.wt + (k * g->in_c + c_real) * g->k_h * g->k_w, 0,
               (size_t)(g->in_c - c_real) * g->k_h * g->k_w);
    }
    /* the input: a window of data (pad around it) also given in place */
    struct dla_conv_src src = {0};
    src.x0 = rnd_range(s, 0, g->in_w < 3 ? g->in_w : 3);
    src.x1 = rnd_range(s, src.x0, g->in_w);
    src.y0 = rnd_range(s, 0, g->in_h < 3 ? g->in_h : 3);
    src.y1 = rnd_range(s, src.y0, g->in_h);
    src.ch_stride = src.x1 - src.x0 + rnd_range(s, 0, 3);
    src.line_stride = g->in_c * src.ch_stride + rnd_range(s, 0, 5);
    src.pad = (int8_t)(mode_in >= 3 ? rnd_range(s, 0, 127) : rnd_range(s, 0, 255));
    size_t nlines = (size_t)(src.y1 - src.y0) * src.line_stride + 1;
    int8_t *lines = malloc(nlines);
    assert_non_null(lines);
    fill(lines, nlines, s, mode_in);
    src.data = lines;
    for (size_t c = 0; c < g->in_c; c++) {
        for (size_t y = 0; y < g->in_h; y++) {
            for (size_t x = 0; x < g->in_w; x++) {
                int in = y >= src.y0 && y < src.y1 && x >= src.x0 && x < src.x1;
                b.in[(c * g->in_h + y) * g->in_w + x] =
                    in ? lines[(y - src.y0) * src.line_stride + c * src.ch_stride + (x - src.x0)]
                       : src.pad;
            }
        }
    }
    dla_conv_s8_ref(g, b.in, b.wt, b.ref);
    for (int isa = 0; isa < DLA_CONV_ISA_COUNT; isa++) {
        if (!dla_conv_isa_supported((enum dla_conv_isa)isa)) {
            continue;
        }
        for (int f = 0; f < 3; f++) {
            unsigned flags = fold_flags[f] | (isa == DLA_CONV_ISA_AVX2 && f == 2 ? DLA_CONV_NO_U8 : 0);
            struct dla_conv_wpack *w = NULL, *plain = NULL;
            assert_int_equal(dla_conv_wpack_build_isa(g, b.wt, (enum dla_conv_isa)isa, flags, &w), 0);
            assert_int_equal(dla_conv_wpack_build_isa(g, b.wt, (enum dla_conv_isa)isa,
                                                      (flags & DLA_CONV_NO_U8) | DLA_CONV_NO_FOLD,
                                                      &plain), 0);
            assert_true(dla_conv_wpack_bytes(w) <= dla_conv_wpack_bytes_bound(g));
            *folded += dla_conv_wpack_bytes(w) != dla_conv_wpack_bytes(plain);
            dla_conv_wpack_free(plain);
            for (unsigned t = 1; t <= 3; t += 2) {
                for (int in_place = 0; in_place < 2; in_place++) {
                    poison_out(&b);
                    int rc = in_place ? dla_conv_s8_packed_src(g, &src, w, b.out, t, pool)
                                      : dla_conv_s8_packed_opts(g, b.in, w, b.out, -1, t, pool);
                    snprintf(what, sizeof what, "%s C=%u isa=%s flags=%u threads=%u %s", name,
                             c_real, dla_conv_isa_name((enum dla_conv_isa)isa), flags, t,
                             in_place ? "in place" : "planar");
                    if (rc != 0) {
                        fail_msg("%s: rc %d", what, rc);
                    }
                    expect_same(&b, what);
                }
            }
            dla_conv_wpack_free(w);
        }
    }
    free(lines);
    bufs_free(&b);
}

static void test_few_channels(void **state)
{
    (void)state;
    uint64_t s = 0xF01DC4A5ull;
    char name[128];
    unsigned folded = 0;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    for (int i = 0; i < 70; i++) {
        uint32_t c_real = 1 + (uint32_t)i % 7;
        uint32_t k_h = rnd_range(&s, 1, 7), k_w = rnd_range(&s, 1, 7);
        struct dla_conv_geom g = geom(rnd_range(&s, c_real, 8), rnd_range(&s, 1, 40),
                                      rnd_range(&s, 1, 12), rnd_range(&s, 1, 20), k_h, k_w,
                                      rnd_range(&s, 1, 3), rnd_range(&s, 1, 3),
                                      rnd_range(&s, 1, 3), rnd_range(&s, 1, 3),
                                      rnd_range(&s, 0, 2), rnd_range(&s, 0, 2));
        snprintf(name, sizeof name, "few channels #%d (c%u k%u %ux%u kern %ux%u s%u,%u d%u,%u)",
                 i, g.in_c, g.out_k, g.out_h, g.out_w, g.k_h, g.k_w, g.stride_y, g.stride_x,
                 g.dil_y, g.dil_x);
        few_channels_case(&g, c_real, &s, (int)rnd_range(&s, 0, 5), i % 2 ? pool : NULL, name,
                          &folded);
    }
    /* folded inputs past packed_run's stack buffer (8 KB): 1 and 3 real
     * channels of 56x56 first layers, on the heap */
    for (uint32_t c_real = 1; c_real <= 3; c_real += 2) {
        unsigned before = folded;
        struct dla_conv_geom g = geom(4, 16, 56, 56, 3, 3, 1, 1, 1, 1, 2, 2);
        snprintf(name, sizeof name, "few channels, large folded input (c_real %u)", c_real);
        few_channels_case(&g, c_real, &s, 1, c_real == 3 ? pool : NULL, name, &folded);
        assert_true(folded > before);
    }
    dla_team_destroy(pool);
    assert_true(folded > 20); /* the folded paths did run */
}

/* A layer big enough that dla_conv_s8 really splits it over threads. */
static void test_resnet_like_layer(void **state)
{
    (void)state;
    struct dla_conv_geom g = geom(64, 72, 14, 14, 3, 3, 1, 1, 1, 1, 0, 0);
    run_case(&g, 77, 0, 0, 0, "14x14x64->72 3x3");
    struct dla_conv_geom g2 = geom(48, 40, 20, 20, 3, 3, 2, 2, 1, 1, 1, 1);
    run_case(&g2, 78, 0, 0, 0, "42x42x48->40 3x3 stride 2");
}

/* A packed call a team's worker makes from a spawned task (the device's
 * overlap: a chained layer's convolution runs on the worker, its small jobs
 * alone, team.c task_keeps): its threads then are the worker alone, or the
 * worker and the spawning thread helping, never seat 0 as the caller.
 * Every thread that joins packs its own copy of the input (conv_s8.c
 * own_copies_pay), and the call must not wait for a thread that never
 * comes; the sums against the reference, a small job and a large one. */
struct task_call {
    const struct dla_conv_geom *g;
    struct bufs *b;
    const struct dla_conv_wpack *w;
    struct dla_team *pool;
    int rc;
};

static void packed_in_task(void *ctx)
{
    struct task_call *c = ctx;
    c->rc = dla_conv_s8_packed(c->g, c->b->in, c->w, c->b->out, 2, c->pool);
}

static void test_packed_from_task(void **state)
{
    (void)state;
    /* 14x14x128 -> 128 1x1 (3.2 M MACs: two threads' worth, a job the
     * worker keeps) and 28x28x256 -> 256 3x3 (~460 M MACs: shared with the
     * spawning thread) */
    const struct dla_conv_geom gs[2] = {geom(128, 128, 14, 14, 1, 1, 1, 1, 1, 1, 0, 0),
                                        geom(256, 256, 28, 28, 3, 3, 1, 1, 1, 1, 2, 2)};
    struct dla_team *pool = dla_team_create(2);
    assert_non_null(pool);
    for (int i = 0; i < 2; i++) {
        struct bufs b;
        uint64_t s = 90 + (uint64_t)i;
        bufs_alloc(&b, &gs[i]);
        fill(b.in, b.nin, &s, 0);
        fill(b.wt, b.nwt, &s, 7);
        dla_conv_s8_ref(&gs[i], b.in, b.wt, b.ref);
        struct dla_conv_wpack *w = NULL;
        assert_int_equal(dla_conv_wpack_build(&gs[i], b.wt, &w), 0);
        for (int run = 0; run < 3; run++) {
            poison_out(&b);
            struct task_call c = {&gs[i], &b, w, pool, -1};
            if (dla_team_spawn(pool, packed_in_task, &c) != 0) {
                packed_in_task(&c); /* (the link measured slow: no task) */
            } else {
                dla_team_help_until_done(pool);
            }
            assert_int_equal(c.rc, 0);
            expect_same(&b, i ? "28x28x256->256 3x3 from a task" : "14x14x128->128 from a task");
        }
        dla_conv_wpack_free(w);
        bufs_free(&b);
    }
    dla_team_destroy(pool);
}

/* The threads take shrinking chunks of compute items (conv_s8.c
 * team_grab: from 1/(8n) of the call down to 1/(32n)):
 * item counts below, at and above the smallest chunk and at the tails,
 * on 2, 3 and 4 threads of a pool and threads made for the call, outputs
 * poisoned first, so an item no thread takes (or one taken twice into the
 * wrong place) shows against the reference. */
static void test_guided_chunks(void **state)
{
    (void)state;
    /* (out_h, out_w, out_k): 1, 2, 7, 64 + 1, 6 x 50 and 225 x 3 tiles x k blocks */
    static const uint32_t sizes[][3] = {{1, 1, 1},  {4, 4, 2},   {7, 16, 6},
                                        {13, 80, 1}, {40, 40, 36}, {60, 60, 16}};
    struct dla_team *pool = dla_team_create(4);
    assert_non_null(pool);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct dla_conv_geom g = geom(8, sizes[i][2], sizes[i][0], sizes[i][1], 1, 1, 1, 1, 1, 1,
                                      0, 0);
        struct bufs b;
        uint64_t s = 300 + i;
        struct dla_conv_wpack *w = NULL;
        char what[96];
        bufs_alloc(&b, &g);
        fill(b.in, b.nin, &s, 3); /* no negative code: the U8 tiles */
        fill(b.wt, b.nwt, &s, 7); /* bell-shaped: paired steps */
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        assert_int_equal(dla_conv_wpack_build(&g, b.wt, &w), 0);
        for (unsigned t = 2; t <= 4; t++) {
            for (int own = 0; own < 2; own++) {
                poison_out(&b);
                assert_int_equal(
                    dla_conv_s8_packed_opts(&g, b.in, w, b.out, -1, t, own ? NULL : pool), 0);
                snprintf(what, sizeof what, "guided chunks %ux%ux%u threads=%u %s", sizes[i][0],
                         sizes[i][1], sizes[i][2], t, own ? "own" : "pool");
                expect_same(&b, what);
            }
        }
        dla_conv_wpack_free(w);
        bufs_free(&b);
    }
    dla_team_destroy(pool);
}

/* Zero weights the kernel skips (steps outside a tile's non-zero range):
 * a depthwise layer lowered densely (weight k non-zero only on channel k),
 * a grouped one (block diagonal), all-zero output channels among dense
 * ones, single non-zero cells at the first and last step, and all-zero
 * weights; every path must still equal the reference bit for bit. */
static void sparse_case(const struct dla_conv_geom *g, uint64_t seed, int kind, const char *name)
{
    struct bufs b;
    uint64_t s = seed;
    size_t taps = (size_t)g->k_h * g->k_w, per_k = (size_t)g->in_c * taps;

    bufs_alloc(&b, g);
    fill(b.in, b.nin, &s, 2);
    fill(b.wt, b.nwt, &s, 2);
    for (size_t k = 0; k < g->out_k; k++) {
        for (size_t c = 0; c < g->in_c; c++) {
            int keep = kind == 0   ? c == k % g->in_c                      /* depthwise */
                       : kind == 1 ? c / 8 == (k * g->in_c / g->out_k) / 8 /* 8-channel groups */
                       : kind == 2 ? k % 3 != 1                            /* zero rows */
                       : kind == 3 ? (c == 0 || c == g->in_c - 1) && k % 2 == 0
                                   : 0;                                    /* all zero */
            if (!keep) {
                memset(b.wt + k * per_k + c * taps, 0, taps);
            }
        }
    }
    dla_conv_s8_ref(g, b.in, b.wt, b.ref);
    check_all_paths(g, &b, name);
    bufs_free(&b);
}

static void test_sparse_weights(void **state)
{
    (void)state;
    struct dla_conv_geom dw = geom(40, 40, 9, 11, 3, 3, 1, 1, 1, 1, 0, 0);
    sparse_case(&dw, 201, 0, "depthwise as dense 40ch 3x3");
    struct dla_conv_geom dws = geom(19, 19, 5, 7, 3, 3, 2, 2, 1, 1, 1, 0);
    sparse_case(&dws, 202, 0, "depthwise as dense 19ch 3x3 stride 2");
    struct dla_conv_geom gr = geom(48, 24, 6, 6, 3, 3, 1, 1, 1, 1, 0, 0);
    sparse_case(&gr, 203, 1, "grouped 48->24, groups of 8 channels");
    struct dla_conv_geom zr = geom(21, 13, 4, 9, 1, 1, 1, 1, 1, 1, 0, 0);
    sparse_case(&zr, 204, 2, "every third output channel all zero");
    struct dla_conv_geom ends = geom(37, 9, 3, 5, 2, 3, 1, 1, 1, 1, 0, 0);
    sparse_case(&ends, 205, 3, "non-zero only at the first and last channel");
    struct dla_conv_geom z = geom(16, 8, 4, 4, 3, 3, 1, 1, 1, 1, 0, 0);
    sparse_case(&z, 206, 4, "all weights zero");
}

static void test_empty_and_errors(void **state)
{
    (void)state;
    int8_t in[64] = {0}, wt[64] = {0};
    int32_t out[16];
    struct dla_conv_geom g = geom(2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0);

    /* kernel reaching past the input */
    struct dla_conv_geom bad = g;
    bad.in_w = 2;
    assert_int_equal(dla_conv_s8(&bad, in, wt, out, 1), DLASIM_ERR_INVAL);
    bad = g;
    bad.stride_x = 0;
    assert_int_equal(dla_conv_s8(&bad, in, wt, out, 1), DLASIM_ERR_INVAL);
    bad = g;
    bad.dil_y = 0;
    assert_int_equal(dla_conv_s8(&bad, in, wt, out, 1), DLASIM_ERR_INVAL);
    bad = g;
    bad.k_h = 3; /* (2-1)*1 + (3-1)*1 = 3 >= in_h = 3 */
    assert_int_equal(dla_conv_s8(&bad, in, wt, out, 1), DLASIM_ERR_INVAL);
    bad = g;
    bad.out_w = 0x80000000u; /* (out_w - 1) * stride far past the input */
    assert_int_equal(dla_conv_s8(&bad, in, wt, out, 2), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8(NULL, in, wt, out, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8(&g, NULL, wt, out, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8(&g, in, NULL, out, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8(&g, in, wt, NULL, 1), DLASIM_ERR_INVAL);

    /* no output pixels: nothing written */
    struct dla_conv_geom none = g;
    none.out_k = 0;
    out[0] = 1234;
    assert_int_equal(dla_conv_s8(&none, in, wt, out, 1), 0);
    assert_int_equal(out[0], 1234);

    /* no input channels: empty sums are 0, in both kernels */
    struct dla_conv_geom empty = g;
    empty.in_c = 0;
    for (int i = 0; i < 8; i++) {
        out[i] = 99;
    }
    assert_int_equal(dla_conv_s8(&empty, in, wt, out, 3), 0);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(out[i], 0);
        out[i] = 99;
    }
    dla_conv_s8_ref(&empty, in, wt, out);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(out[i], 0);
    }

    /* threads = 0 counts as 1 */
    in[0] = 3;
    wt[0] = 5;
    assert_int_equal(dla_conv_s8(&g, in, wt, out, 0), 0);
    assert_int_equal(out[0], 15);

    /* weights packed for one kernel shape refuse another; empty layers pack */
    struct dla_conv_wpack *w = NULL;
    assert_int_equal(dla_conv_wpack_build(&g, wt, &w), 0);
    assert_int_equal(dla_conv_s8_packed(&g, in, w, out, 1, NULL), 0);
    assert_int_equal(out[0], 15);
    struct dla_conv_geom other = g;
    other.in_c = 1;
    assert_int_equal(dla_conv_s8_packed(&other, in, w, out, 1, NULL), DLASIM_ERR_INVAL);
    other = g;
    other.out_k = 1;
    assert_int_equal(dla_conv_s8_packed(&other, in, w, out, 1, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8_packed(&g, NULL, w, out, 1, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8_packed(&g, in, NULL, out, 1, NULL), DLASIM_ERR_INVAL);
    assert_null(dla_team_create(1));
    dla_team_destroy(NULL);
    assert_int_equal(dla_team_threads(NULL), 1);
    dla_conv_wpack_free(w);
    assert_int_equal(dla_conv_wpack_build(&bad, wt, &w), DLASIM_ERR_INVAL);
    assert_null(w);
    assert_int_equal(dla_conv_wpack_build(&empty, wt, &w), 0);
    out[0] = 99;
    assert_int_equal(dla_conv_s8_packed(&empty, in, w, out, 1, NULL), 0);
    assert_int_equal(out[0], 0);
    dla_conv_wpack_free(w);
    dla_conv_wpack_free(NULL);
}

/* AVX2's U8 path (vpmaddubsw on non-negative inputs, exact by the bounds
 * in conv_s8_x86.c): the extreme pair sums (inputs 0/127 x weights
 * -128/127, all 127 x all -128), odd channel counts (partial last group of
 * 4), padding, strides, 1x1, then random geometries; each against the
 * reference, the int64 check and every path as in run_case.  Then single
 * negative codes anywhere in the padded input, including padding no window
 * reads: the kernel must leave the U8 path and still be exact. */
/*
 * dla_conv_s8_packed_src: the input described in place (CSC's lines in
 * CBUF: per line, each channel's row of data, then the next channel's;
 * everything outside the data region is the pad value) must give the sums
 * of the padded planar cube it describes.  Random geometries, data regions
 * (none, partial, whole), channel and line gaps, inputs with and without
 * negative codes and pads of either sign (the U8 and the int16 path), 1
 * thread and a pool of 3.
 */
/* dla_conv_s8_packed_src_rows: the layer in bands of output rows (bands of
 * one row, of a random height with a shorter last one, one band of every
 * row) gives each row's values of the whole layer (`ref`), whichever
 * padding rows the band's input window covers; empty and out-of-range
 * bands are refused. */
static void check_row_bands(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                            const struct dla_conv_wpack *wp, const int32_t *ref, uint64_t *rng,
                            const char *what)
{
    const size_t plane = (size_t)g->out_w * g->out_h;
    int32_t *band = malloc(plane * g->out_k * sizeof(int32_t) + 1);
    assert_non_null(band);
    const uint32_t heights[3] = {1, rnd_range(rng, 1, g->out_h), g->out_h};
    for (int i = 0; i < 3; i++) {
        for (uint32_t y0 = 0; y0 < g->out_h; y0 += heights[i]) {
            const uint32_t y1 = g->out_h - y0 < heights[i] ? g->out_h : y0 + heights[i];
            const size_t bp = (size_t)(y1 - y0) * g->out_w;
            int rc = dla_conv_s8_packed_src_rows(g, src, wp, y0, y1, band);
            if (rc != 0) {
                fail_msg("%s: rows [%u,%u): rc %d", what, y0, y1, rc);
            }
            for (size_t k = 0; k < g->out_k; k++) {
                if (memcmp(band + k * bp, ref + k * plane + (size_t)y0 * g->out_w,
                           bp * sizeof(int32_t)) != 0) {
                    fail_msg("%s: rows [%u,%u) kernel %zu differ from the whole layer's", what,
                             y0, y1, k);
                }
            }
        }
    }
    assert_int_equal(dla_conv_s8_packed_src_rows(g, src, wp, 0, 0, band), DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_s8_packed_src_rows(g, src, wp, 0, g->out_h + 1, band),
                     DLASIM_ERR_INVAL);
    free(band);
}

/* dla_conv_wpack_build_signed: the pack made once for inputs with negative
 * codes gives the same sums (any input); dla_conv_src_nonneg is 0 for an
 * input with a negative code and 1 where every byte of the lines (gaps
 * included) and the pad are non-negative. */
static void check_signed_pack(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                              const int8_t *wt, const struct dla_conv_wpack *wp, struct bufs *b,
                              int nonneg, const char *what)
{
    struct dla_conv_wpack *sp = NULL;
    assert_int_equal(dla_conv_wpack_build_signed(g, wt, wp, &sp), 0);
    int has_neg = 0;
    for (size_t i = 0; i < (size_t)g->in_c * g->in_h * g->in_w; i++) {
        has_neg |= b->in[i] < 0;
    }
    if (has_neg && dla_conv_src_nonneg(g, src)) {
        fail_msg("%s: dla_conv_src_nonneg 1 but the input has a negative code", what);
    }
    if (nonneg && !has_neg && !dla_conv_src_nonneg(g, src)) {
        fail_msg("%s: dla_conv_src_nonneg 0 on lines of non-negative bytes only", what);
    }
    if (sp == NULL) {
        return; /* wp is not U8 on this CPU */
    }
    poison_out(b);
    assert_int_equal(dla_conv_s8_packed_src(g, src, sp, b->out, 1, NULL), 0);
    expect_same(b, what);
    dla_conv_wpack_free(sp);
}

/* n random input bytes (and one more, unread), with no negative code when
 * nonneg: a CSC view's lines. */
static int8_t *random_lines(size_t n, uint64_t *rng, int nonneg)
{
    int8_t *lines = malloc(n + 1);
    assert_non_null(lines);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = rnd_range(rng, 0, 255);
        lines[i] = (int8_t)(nonneg ? v % 128 : v);
    }
    return lines;
}

/* The padded planar cube src describes (the reference's input). */
static void planar_of_src(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                          int8_t *in)
{
    for (size_t c = 0; c < g->in_c; c++) {
        for (size_t y = 0; y < g->in_h; y++) {
            for (size_t x = 0; x < g->in_w; x++) {
                int inside = y >= src->y0 && y < src->y1 && x >= src->x0 && x < src->x1;
                size_t at = src->atoms ? c / src->atoms * src->ch_stride +
                                             (x - src->x0) * src->atoms + c % src->atoms
                                       : c * src->ch_stride + (x - src->x0);
                in[(c * g->in_h + y) * g->in_w + x] =
                    inside ? src->data[(y - src->y0) * src->line_stride + at] : src->pad;
            }
        }
    }
}

/* The layer g on the input src describes, with random weights (fill mode
 * wt_mode), on 1 and 3 threads (pool) against the reference on its planar
 * copy; with `full`, also in bands of rows and with the pack for signed
 * inputs (check_signed_pack: nonneg says src holds no negative code);
 * `what` names the case in a failure. */
static void expect_src_layer(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                             uint64_t *rng, int wt_mode, struct dla_team *pool, const char *what,
                             int full, int nonneg)
{
    struct bufs b;
    bufs_alloc(&b, g);
    fill(b.wt, b.nwt, rng, wt_mode);
    planar_of_src(g, src, b.in);
    dla_conv_s8_ref(g, b.in, b.wt, b.ref);
    struct dla_conv_wpack *wp = NULL;
    assert_int_equal(dla_conv_wpack_build(g, b.wt, &wp), 0);
    char where[240];
    for (unsigned t = 1; t <= 3; t += 2) {
        poison_out(&b);
        int rc = dla_conv_s8_packed_src(g, src, wp, b.out, t, t > 1 ? pool : NULL);
        snprintf(where, sizeof where, "%s, threads %u", what, t);
        if (rc != 0) {
            fail_msg("%s: rc %d", where, rc);
        }
        expect_same(&b, where);
    }
    if (full) {
        check_row_bands(g, src, wp, b.ref, rng, what);
        check_signed_pack(g, src, b.wt, wp, &b, nonneg, what);
    }
    dla_conv_wpack_free(wp);
    bufs_free(&b);
}

/* Fully connected layers as CSC gives them (one 1x1 output pixel of a 1x1
 * kernel, the input in place): the pixel inside the region or padding,
 * channels 1 or more bytes apart, on the one-pixel kernel where the pack
 * has it, with 1 and 3 threads, against the reference. */
static void test_src_one_pixel(void **state)
{
    (void)state;
    uint64_t rng = 0xfc0ffeeull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[160];
    for (int iter = 0; iter < 48; iter++) {
        struct dla_conv_geom g = {1, 1, rnd_range(&rng, 1, 300), 1, 1, rnd_range(&rng, 1, 70),
                                  1, 1, 1, 1, 1, 1};
        struct dla_conv_src src = {NULL, iter % 3 ? 1 : rnd_range(&rng, 2, 5), 0, 0, 1, 0, 1, 0, 0};
        if (iter % 7 == 6) {
            src.x1 = src.y1 = 0; /* the pixel is padding */
        }
        src.line_stride = g.in_c * src.ch_stride;
        int nonneg = iter % 2 == 0;
        src.pad = nonneg ? (int8_t)rnd_range(&rng, 0, 127) : (int8_t)-(int)rnd_range(&rng, 1, 128);
        int8_t *line = random_lines(src.line_stride, &rng, nonneg);
        src.data = line;
        snprintf(what, sizeof what, "iter %d: %u -> %u channels, ch_stride %zu, %s", iter,
                 g.in_c, g.out_k, src.ch_stride, src.x1 ? "inside" : "padding");
        expect_src_layer(&g, &src, &rng, iter % 3 == 0 ? 1 : 0, pool, what, 0, 0);
        free(line);
    }
    dla_team_destroy(pool);
}

/* An input of the memory's atoms for a data window of w x h pixels at
 * (x0, y0) of in_c channels: lines and surfaces back to back or with gaps
 * (by iter), random codes, none negative when nonneg; *lines to free. */
static struct dla_conv_src atoms_src(uint32_t x0, uint32_t y0, uint32_t w, uint32_t h,
                                     uint32_t in_c, int iter, uint64_t *rng, int nonneg,
                                     int8_t **lines)
{
    struct dla_conv_src src = {0};
    src.atoms = 8;
    src.x0 = x0;
    src.x1 = x0 + w;
    src.y0 = y0;
    src.y1 = y0 + h;
    src.line_stride = (size_t)w * 8 + (iter % 3 == 1 ? 8 * rnd_range(rng, 1, 3) : 0);
    src.ch_stride = h * src.line_stride + (iter % 5 == 2 ? rnd_range(rng, 1, 40) : 0);
    *lines = random_lines(in_c / 8 * src.ch_stride, rng, nonneg);
    src.data = *lines;
    return src;
}

/* 1x1 layers on an input of the memory's 8-byte atoms (CBUF's copy of a
 * feature surface: dla_conv_src.atoms), lines back to back or with a gap,
 * surfaces back to back or apart, signed and non-negative inputs, 8 to
 * 64 columns (the AVX2 chunks of 8 atoms and the atoms after them): the
 * same sums as the reference on the planar copy, on 1 and 3 threads, in
 * bands of rows, with the pack for signed inputs; and the inputs the
 * kernel does not take as atoms (a part of an atom, lines or surfaces
 * that overlap) are refused, not computed. */
static void test_input_atoms(void **state)
{
    (void)state;
    uint64_t rng = 0xa70b5c0ffeeull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[200];
    for (int iter = 0; iter < 96; iter++) {
        struct dla_conv_geom g = {0};
        g.in_c = 8 * rnd_range(&rng, 1, 12);
        g.out_k = rnd_range(&rng, 1, 40);
        g.k_w = g.k_h = g.stride_x = g.stride_y = g.dil_x = g.dil_y = 1;
        g.in_w = g.out_w = rnd_range(&rng, 4, iter % 4 ? 20 : 64);
        g.in_h = g.out_h = rnd_range(&rng, 1, 12);
        int nonneg = iter % 2 == 0;
        int8_t *lines = NULL;
        struct dla_conv_src src =
            atoms_src(0, 0, g.in_w, g.in_h, g.in_c, iter, &rng, nonneg, &lines);
        assert_true(dla_conv_src_atoms_takes(&g, &src));
        snprintf(what, sizeof what, "iter %d atoms %ux%ux%u -> %u lines %zu apart, surfaces %zu",
                 iter, g.in_w, g.in_h, g.in_c, g.out_k, src.line_stride, src.ch_stride);
        expect_src_layer(&g, &src, &rng, iter % 3 == 0 ? 1 : 0, pool, what, 1, nonneg);

        /* not taken: a part of an atom, lines or surfaces that overlap */
        struct dla_conv_geom odd = g;
        odd.in_c = g.in_c - 4;
        struct dla_conv_src lines_over = src, surfs_over = src;
        lines_over.line_stride = (size_t)g.in_w * 8 - 8;
        surfs_over.ch_stride = (size_t)g.in_h * src.line_stride - 1;
        assert_false(dla_conv_src_atoms_takes(&odd, &src));
        assert_false(dla_conv_src_atoms_takes(&g, &lines_over));
        assert_false(dla_conv_src_atoms_takes(&g, &surfs_over));
        struct bufs b;
        bufs_alloc(&b, &g);
        memset(b.wt, 1, b.nwt);
        struct dla_conv_wpack *wp = NULL;
        assert_int_equal(dla_conv_wpack_build(&g, b.wt, &wp), 0);
        assert_int_equal(dla_conv_s8_packed_src(&g, &lines_over, wp, b.out, 1, NULL),
                         DLASIM_ERR_INVAL);
        dla_conv_wpack_free(wp);
        bufs_free(&b);
        free(lines);
    }
    dla_team_destroy(pool);
}

/* g on 1, 2 and 3 threads with pack `fast` and with pack `slow` (a pack
 * without the fast path's weights, named `slow_name`): the reference's sums
 * in b each time; the input is src's (not NULL) or b's planar one. */
static void expect_both_packs(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                              struct bufs *b, const struct dla_conv_wpack *fast,
                              const struct dla_conv_wpack *slow, const char *slow_name,
                              struct dla_team *pool, const char *what)
{
    char where[240];
    for (unsigned t = 1; t <= 3; t++) {
        for (int packed = 0; packed < 2; packed++) {
            const struct dla_conv_wpack *w = packed ? slow : fast;
            struct dla_team *team = t > 1 ? pool : NULL;
            poison_out(b);
            int rc = src != NULL ? dla_conv_s8_packed_src(g, src, w, b->out, t, team)
                                 : dla_conv_s8_packed(g, b->in, w, b->out, t, team);
            snprintf(where, sizeof where, "%s, threads %u%s", what, t, packed ? slow_name : "");
            if (rc != 0) {
                fail_msg("%s: rc %d", where, rc);
            }
            expect_same(b, where);
        }
    }
}

/* The atoms tiles (dense 1x1 layers of 32 channels or more on AVX-512
 * VNNI, run on the atoms in place, conv_s8_x86.c dla_conv_atoms_tile_vnni;
 * at stride 2 on each thread's compact copy of the atoms it reads):
 * 1 to 12 rows of 4 to 40 columns (pixel tails of every length below 8 and
 * 24), stride 2 from 1 to 60 x 20 inputs of odd and even sizes and lines
 * with gaps, k tails of every length below 8, surfaces back to back or apart,
 * random codes and the extremes (all -128 inputs with -128/127 weights:
 * the lane pairs' corrections at their largest), on 1, 2 and 3 threads
 * and in bands of rows, against the reference; and the same sums from a
 * pack without atoms weights (the packed path). */
static void test_atoms_tiles(void **state)
{
    (void)state;
    if (!dla_conv_isa_supported(DLA_CONV_ISA_AVX512VNNI)) {
        skip();
    }
    uint64_t rng = 0xa7035711ull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[200];
    for (int iter = 0; iter < 64; iter++) {
        struct dla_conv_geom g = {0};
        g.in_c = 8 * rnd_range(&rng, 4, iter % 8 ? 17 : 64);
        g.out_k = iter < 8 ? 8 * (iter + 1) - (uint32_t)iter % 8 : rnd_range(&rng, 1, 70);
        g.k_w = g.k_h = g.stride_x = g.stride_y = g.dil_x = g.dil_y = 1;
        g.in_w = g.out_w = rnd_range(&rng, 4, 40);
        g.in_h = g.out_h = rnd_range(&rng, 1, 12);
        /* stride 2 (the thread's compact copy of the atoms it reads): odd
         * and even sizes, lines with a gap */
        const int halved = iter % 4 == 1;
        if (halved) {
            g.stride_x = g.stride_y = 2;
            g.in_w = rnd_range(&rng, 3, 60);
            g.in_h = rnd_range(&rng, 1, 20);
            g.out_w = (g.in_w - 1) / 2 + 1;
            g.out_h = (g.in_h - 1) / 2 + 1;
        }
        const int extreme = iter % 5 == 3;
        struct dla_conv_src src = {0};
        src.atoms = 8;
        src.x1 = g.in_w;
        src.y1 = g.in_h;
        src.line_stride = (size_t)g.in_w * 8;
        if (halved && iter % 3 == 0) {
            src.line_stride += 8 * rnd_range(&rng, 1, 3);
        }
        src.ch_stride = g.in_h * src.line_stride + (iter % 3 == 1 ? 8 * rnd_range(&rng, 1, 9) : 0);
        int8_t *lines = random_lines(g.in_c / 8 * src.ch_stride, &rng, 0);
        if (extreme) {
            memset(lines, 0x80, g.in_c / 8 * src.ch_stride);
        }
        src.data = lines;
        struct bufs b;
        bufs_alloc(&b, &g);
        fill(b.wt, b.nwt, &rng, extreme ? 1 : 0);
        planar_of_src(&g, &src, b.in);
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        struct dla_conv_wpack *wa = NULL, *wp = NULL;
        assert_int_equal(dla_conv_wpack_build(&g, b.wt, &wa), 0);
        assert_int_equal(
            dla_conv_wpack_build_isa(&g, b.wt, DLA_CONV_ISA_AVX512VNNI, DLA_CONV_NO_ATOMS, &wp), 0);
        assert_true(dla_conv_wpack_has_atoms(wa));
        assert_false(dla_conv_wpack_has_atoms(wp));
        snprintf(what, sizeof what, "iter %d: %ux%ux%u s%u -> %u, lines %zu, surfaces %zu apart%s",
                 iter, g.in_w, g.in_h, g.in_c, g.stride_x, g.out_k, src.line_stride, src.ch_stride,
                 extreme ? ", extremes" : "");
        expect_both_packs(&g, &src, &b, wa, wp, ", packed path", pool, what);
        check_row_bands(&g, &src, wa, b.ref, &rng, what);
        dla_conv_wpack_free(wa);
        dla_conv_wpack_free(wp);
        bufs_free(&b);
        free(lines);
    }
    dla_team_destroy(pool);
}

/* The k-lanes tiles (deep dense layers of few output pixels, out_k a
 * multiple of 32, on AVX-512 VNNI: conv_s8_x86.c dla_conv_klanes_tile_vnni):
 * 3x3, 1x1 and 5x3 kernels of 512 steps or more, strides 1 and 2, 1 to
 * 13 output rows and columns (every tail of 12 pixels), random codes
 * and the extremes, on 1, 2 and 3 threads, against the reference and
 * against a pack without k-lanes weights (the pixel tiles).  (The device
 * runs them on inputs of atoms: the packing is the pixel tiles', which
 * test_input_atoms_windows checks.) */
static void test_klanes_tiles(void **state)
{
    (void)state;
    if (!dla_conv_isa_supported(DLA_CONV_ISA_AVX512VNNI)) {
        skip();
    }
    uint64_t rng = 0x6b1a4e5ull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[200];
    for (int iter = 0; iter < 40; iter++) {
        struct dla_conv_geom g = {0};
        const int shape = iter % 3;
        g.k_w = shape == 1 ? 1 : 3;
        g.k_h = shape == 2 ? 5 : g.k_w;
        /* 512 steps or more (KLANES_MIN_STEPS) */
        g.in_c = shape == 1 ? 8 * rnd_range(&rng, 256, 264)
                 : shape == 0 ? 8 * rnd_range(&rng, 29, 34)
                              : 8 * rnd_range(&rng, 18, 22);
        g.out_k = 32 * rnd_range(&rng, 1, 2);
        g.stride_x = g.stride_y = iter % 4 == 3 ? 2 : 1;
        g.dil_x = g.dil_y = 1;
        const uint32_t ow = rnd_range(&rng, 1, 13), oh = rnd_range(&rng, iter < 2 ? 1 : 2, 13);
        g.out_w = ow;
        g.out_h = oh;
        g.in_w = (ow - 1) * g.stride_x + g.k_w;
        g.in_h = (oh - 1) * g.stride_y + g.k_h;
        if ((uint64_t)ow * oh < 2) {
            continue;
        }
        const int extreme = iter % 5 == 2;
        struct bufs b;
        bufs_alloc(&b, &g);
        fill(b.in, b.nin, &rng, extreme ? 1 : 0);
        fill(b.wt, b.nwt, &rng, extreme ? 1 : 0);
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        struct dla_conv_wpack *wk = NULL, *wp = NULL;
        assert_int_equal(dla_conv_wpack_build(&g, b.wt, &wk), 0);
        assert_int_equal(dla_conv_wpack_build_isa(&g, b.wt, DLA_CONV_ISA_AVX512VNNI,
                                                  DLA_CONV_NO_KLANES | DLA_CONV_NO_ATOMS, &wp),
                         0);
        assert_true(dla_conv_wpack_has_klanes(wk));
        assert_false(dla_conv_wpack_has_klanes(wp));
        snprintf(what, sizeof what, "iter %d: %ux%ux%u k%ux%u s%u -> %ux%ux%u%s", iter, g.in_w,
                 g.in_h, g.in_c, g.k_w, g.k_h, g.stride_x, g.out_w, g.out_h, g.out_k,
                 extreme ? ", extremes" : "");
        expect_both_packs(&g, NULL, &b, wk, wp, ", pixel tiles", pool, what);
        dla_conv_wpack_free(wk);
        dla_conv_wpack_free(wp);
        bufs_free(&b);
    }
    dla_team_destroy(pool);
}

/* Any window on an input of atoms (round 43: CDMA keeps 3x3 layers' input
 * as atoms too): kernels of 1 to 7 taps, strides 1 to 3, dilations,
 * padding on every side (the data region inside the padded input), 1 to
 * 70 columns (the AVX2 chunks of 8 cells at strides 1 and 2, the cells
 * after them; one-pixel outputs, whose gathers read the atoms too), lines
 * and surfaces with gaps, signed and non-negative
 * inputs: the reference's sums on the planar copy, on 1 and 3 threads, in
 * bands of rows, with the pack for signed inputs. */
static void test_input_atoms_windows(void **state)
{
    (void)state;
    uint64_t rng = 0x3a70b5ull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[240];
    for (int iter = 0; iter < 120; iter++) {
        struct dla_conv_geom g = {0};
        g.in_c = 8 * rnd_range(&rng, 1, 10);
        g.out_k = rnd_range(&rng, 1, 36);
        g.k_w = rnd_range(&rng, 1, iter % 4 ? 3 : 7);
        g.k_h = iter % 3 ? g.k_w : rnd_range(&rng, 1, 5);
        g.stride_x = rnd_range(&rng, 1, 3);
        g.stride_y = iter % 2 ? g.stride_x : rnd_range(&rng, 1, 3);
        g.dil_x = g.dil_y = iter % 9 == 4 ? 2 : 1;
        const uint32_t w = rnd_range(&rng, 1, iter % 4 ? 24 : 70), h = rnd_range(&rng, 1, 10);
        const uint32_t pl = rnd_range(&rng, 0, 3), pr = rnd_range(&rng, 0, 3);
        const uint32_t pt = rnd_range(&rng, 0, 3), pb = rnd_range(&rng, 0, 3);
        g.in_w = w + pl + pr;
        g.in_h = h + pt + pb;
        const uint32_t span_x = (g.k_w - 1) * g.dil_x + 1, span_y = (g.k_h - 1) * g.dil_y + 1;
        if (g.in_w < span_x || g.in_h < span_y) {
            continue;
        }
        g.out_w = (g.in_w - span_x) / g.stride_x + 1;
        g.out_h = (g.in_h - span_y) / g.stride_y + 1;
        int nonneg = iter % 2 == 0;
        int8_t *lines = NULL;
        struct dla_conv_src src = atoms_src(pl, pt, w, h, g.in_c, iter, &rng, nonneg, &lines);
        src.pad = nonneg ? (int8_t)rnd_range(&rng, 0, 127) : (int8_t)-(int)rnd_range(&rng, 1, 128);
        assert_true(dla_conv_src_atoms_takes(&g, &src));
        snprintf(what, sizeof what,
                 "iter %d atoms %ux%ux%u (data %ux%u at %u,%u) k%ux%u s%ux%u d%u -> %u",
                 iter, g.in_w, g.in_h, g.in_c, w, h, pl, pt, g.k_w, g.k_h, g.stride_x,
                 g.stride_y, g.dil_x, g.out_k);
        expect_src_layer(&g, &src, &rng, iter % 3 == 0 ? 1 : 0, pool, what, 1, nonneg);
        free(lines);
    }
    dla_team_destroy(pool);
}

static void test_input_in_place(void **state)
{
    (void)state;
    uint64_t rng = 0x1d5c0ffeeull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[200];
    unsigned paths[2] = {0, 0}; /* inputs with a negative code, without */
    for (int iter = 0; iter < 160; iter++) {
        struct dla_conv_geom g = {0};
        g.in_c = rnd_range(&rng, 1, 40);
        g.out_k = rnd_range(&rng, 1, 40);
        g.k_w = rnd_range(&rng, 1, 5);
        g.k_h = rnd_range(&rng, 1, 5);
        g.stride_x = rnd_range(&rng, 1, 3);
        g.stride_y = rnd_range(&rng, 1, 3);
        g.dil_x = rnd_range(&rng, 1, 2);
        g.dil_y = rnd_range(&rng, 1, 2);
        g.out_w = rnd_range(&rng, 1, 24);
        g.out_h = rnd_range(&rng, 1, 12);
        g.in_w = (g.out_w - 1) * g.stride_x + (g.k_w - 1) * g.dil_x + 1;
        g.in_h = (g.out_h - 1) * g.stride_y + (g.k_h - 1) * g.dil_y + 1;
        struct dla_conv_src src = {0};
        src.x0 = rnd_range(&rng, 0, g.in_w < 3 ? g.in_w : 3);
        src.x1 = rnd_range(&rng, src.x0, g.in_w);
        src.y0 = rnd_range(&rng, 0, g.in_h < 3 ? g.in_h : 3);
        src.y1 = rnd_range(&rng, src.y0, g.in_h);
        if (iter % 8 == 0) { /* no padding at all */
            src.x0 = src.y0 = 0;
            src.x1 = g.in_w;
            src.y1 = g.in_h;
        }
        size_t w = src.x1 - src.x0, h = src.y1 - src.y0;
        src.ch_stride = w + rnd_range(&rng, 0, 2) * rnd_range(&rng, 0, 9);
        src.line_stride = g.in_c * src.ch_stride + rnd_range(&rng, 0, 7);
        int nonneg = iter % 2 == 0;
        src.pad = (int8_t)(nonneg || iter % 3 ? rnd_range(&rng, 0, 127) : -rnd_range(&rng, 1, 128));
        int8_t *lines = random_lines(h * src.line_stride, &rng, nonneg);
        src.data = lines;

        struct bufs b;
        bufs_alloc(&b, &g);
        fill(b.wt, b.nwt, &rng, iter % 3 == 0 ? 1 : 0);
        planar_of_src(&g, &src, b.in);
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        paths[dla_conv_takes_u8(DLA_CONV_ISA_AVX2, 0, &g, b.in)]++;
        struct dla_conv_wpack *wp = NULL;
        assert_int_equal(dla_conv_wpack_build(&g, b.wt, &wp), 0);
        for (unsigned t = 1; t <= 3; t += 2) {
            poison_out(&b);
            int rc = dla_conv_s8_packed_src(&g, &src, wp, b.out, t, t > 1 ? pool : NULL);
            snprintf(what, sizeof what,
                     "iter %d in %ux%ux%u k%ux%u s%u,%u d%u,%u region x[%u,%u) y[%u,%u) pad %d "
                     "threads %u", iter, g.in_w, g.in_h, g.in_c, g.k_w, g.k_h, g.stride_x,
                     g.stride_y, g.dil_x, g.dil_y, src.x0, src.x1, src.y0, src.y1, src.pad, t);
            if (rc != 0) {
                fail_msg("%s: rc %d", what, rc);
            }
            expect_same(&b, what);
        }
        check_row_bands(&g, &src, wp, b.ref, &rng, what);
        check_signed_pack(&g, &src, b.wt, wp, &b, nonneg, what);
        dla_conv_wpack_free(wp);
        bufs_free(&b);
        free(lines);
    }
    if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
        assert_true(paths[0] > 0 && paths[1] > 0);
    }
    /* a region outside the padded input is refused */
    struct dla_conv_geom g = {4, 4, 4, 2, 2, 4, 3, 3, 1, 1, 1, 1};
    int8_t one = 0;
    int8_t wt[4 * 4 * 9] = {0};
    int32_t out[16];
    struct dla_conv_wpack *wp = NULL;
    assert_int_equal(dla_conv_wpack_build(&g, wt, &wp), 0);
    struct dla_conv_src bad = {&one, 1, 4, 0, 5, 0, 1, 0, 0};
    assert_int_equal(dla_conv_s8_packed_src(&g, &bad, wp, out, 1, NULL), DLASIM_ERR_INVAL);
    bad.x1 = 1;
    bad.y0 = 2;
    assert_int_equal(dla_conv_s8_packed_src(&g, &bad, wp, out, 1, NULL), DLASIM_ERR_INVAL);
    dla_conv_wpack_free(wp);
    dla_team_destroy(pool);
}

/* Rows of every width 1..40 at x stride 1 and 2, signed inputs (AVX2's
 * P16 cells): the packing's chunks of 16, 8 and 4 cells and its
 * overlapping last chunk (p16_cells_simd) against the int64 reference,
 * from a planar input and from lines in place with pad columns either
 * side, 1x1 and 3-wide kernels (shifted planes), odd channel counts (the
 * last cell's zero channel). */
/* 1x1 layers read in place with each line's channel rows back to back
 * (CSC's lines: ch_stride = w), every row one byte permute on AVX-512
 * VBMI for w <= 32: widths 4 to 34 (one vector, two, and past the
 * permute's reach), channel counts with a partial last group (its rows
 * are not four back to back), rows apart by more than the channels, codes
 * of either sign, 1 and 3 threads, against the reference; and the same
 * with row gaps (ch_stride > w: the unpacking path). */
static void test_one_by_one_lines(void **state)
{
    (void)state;
    uint64_t rng = 0x1b1b0ffeull;
    struct dla_team *pool = dla_team_create(3);
    assert_non_null(pool);
    char what[200];
    for (uint32_t w = 4; w <= 34; w++) {
        for (int gap = 0; gap < 2; gap++) {
            struct dla_conv_geom g = {0};
            g.in_c = w % 3 == 0 ? 4 * rnd_range(&rng, 1, 10) : rnd_range(&rng, 1, 40);
            g.out_k = rnd_range(&rng, 1, 40);
            g.k_w = g.k_h = g.stride_x = g.stride_y = g.dil_x = g.dil_y = 1;
            g.in_w = g.out_w = w;
            g.in_h = g.out_h = rnd_range(&rng, 1, 6);
            struct dla_conv_src src = {0};
            src.x1 = g.in_w;
            src.y1 = g.in_h;
            src.ch_stride = w + (gap ? rnd_range(&rng, 1, 5) : 0);
            src.line_stride = g.in_c * src.ch_stride + rnd_range(&rng, 0, 9);
            int nonneg = w % 2 == 0;
            src.pad = (int8_t)rnd_range(&rng, 0, 127);
            int8_t *lines = random_lines(g.in_h * src.line_stride, &rng, nonneg);
            src.data = lines;
            snprintf(what, sizeof what, "1x1 %ux%ux%u -> %u ch_stride %zu line_stride %zu %s",
                     g.in_w, g.in_h, g.in_c, g.out_k, src.ch_stride, src.line_stride,
                     nonneg ? "codes >= 0" : "signed codes");
            expect_src_layer(&g, &src, &rng, 0, pool, what, 0, 0);
            free(lines);
        }
    }
    dla_team_destroy(pool);
}

static void test_short_signed_rows(void **state)
{
    (void)state;
    uint64_t rng = 0x5167ed0ull;
    char what[160];
    for (uint32_t w = 1; w <= 40; w++) {
        for (uint32_t sx = 1; sx <= 2; sx++) {
            for (uint32_t kw = 1; kw <= 3; kw += 2) {
                struct dla_conv_geom g = {0};
                g.in_c = rnd_range(&rng, 1, 7);
                g.out_k = rnd_range(&rng, 1, 9);
                g.k_w = kw;
                g.k_h = 1;
                g.stride_x = sx;
                g.stride_y = 1;
                g.dil_x = g.dil_y = 1;
                g.out_w = w;
                g.out_h = 2;
                g.in_w = (g.out_w - 1) * g.stride_x + g.k_w;
                g.in_h = g.out_h;
                struct dla_conv_src src = {0};
                src.x0 = kw > 1 ? 1 : 0; /* a pad column either side of a 3-wide kernel */
                src.x1 = kw > 1 && g.in_w > 1 ? g.in_w - 1 : g.in_w;
                src.y0 = 0;
                src.y1 = g.in_h;
                src.ch_stride = src.x1 - src.x0 + rnd_range(&rng, 0, 3);
                src.line_stride = g.in_c * src.ch_stride + rnd_range(&rng, 0, 5);
                src.pad = (int8_t)-rnd_range(&rng, 1, 128);
                size_t nlines = (size_t)g.in_h * src.line_stride + 1;
                int8_t *lines = malloc(nlines);
                assert_non_null(lines);
                fill(lines, nlines, &rng, 0);
                src.data = lines;
                struct bufs b;
                bufs_alloc(&b, &g);
                fill(b.wt, b.nwt, &rng, 0);
                for (size_t c = 0; c < g.in_c; c++) {
                    for (size_t y = 0; y < g.in_h; y++) {
                        for (size_t x = 0; x < g.in_w; x++) {
                            int in = x >= src.x0 && x < src.x1;
                            b.in[(c * g.in_h + y) * g.in_w + x] =
                                in ? lines[y * src.line_stride + c * src.ch_stride + x - src.x0]
                                   : src.pad;
                        }
                    }
                }
                conv_int64(&g, b.in, b.wt, b.ref);
                struct dla_conv_wpack *wp = NULL;
                assert_int_equal(dla_conv_wpack_build(&g, b.wt, &wp), 0);
                for (int in_place = 0; in_place < 2; in_place++) {
                    poison_out(&b);
                    int rc = in_place ? dla_conv_s8_packed_src(&g, &src, wp, b.out, 1, NULL)
                                      : dla_conv_s8_packed(&g, b.in, wp, b.out, 1, NULL);
                    snprintf(what, sizeof what, "row %u cells, stride %u, kernel %ux1, in_c %u, %s",
                             w, sx, kw, g.in_c, in_place ? "in place" : "planar");
                    if (rc != 0) {
                        fail_msg("%s: rc %d", what, rc);
                    }
                    expect_same(&b, what);
                }
                dla_conv_wpack_free(wp);
                bufs_free(&b);
                free(lines);
            }
        }
    }
}

static void test_nonneg_inputs(void **state)
{
    (void)state;
    static const struct {
        uint32_t in_c, out_k, out_h, out_w, k_h, k_w, sy, sx, dy, dx, eh, ew;
        int mode_in, mode_wt;
        const char *name;
    } cases[] = {
        {1, 3, 5, 9, 3, 3, 1, 1, 1, 1, 0, 0, 4, 1, "u8 in_c 1 0/127 x -128/127"},
        {3, 64, 7, 7, 7, 7, 2, 2, 1, 1, 1, 1, 6, 2, "u8 7x7 s2 in_c 3, 127 x mostly -128"},
        {5, 9, 4, 6, 6, 3, 2, 1, 2, 3, 2, 0, 4, 1, "u8 in_c 5 dilated strided"},
        {7, 13, 9, 11, 3, 3, 1, 1, 1, 1, 2, 3, 5, 0, "u8 in_c 7 padded"},
        {64, 64, 14, 14, 3, 3, 1, 1, 1, 1, 0, 0, 4, 1, "u8 3x3 64 ch 0/127 x -128/127"},
        {256, 20, 7, 7, 1, 1, 1, 1, 1, 1, 0, 0, 5, 0, "u8 1x1 256 ch"},
        {255, 17, 7, 7, 1, 1, 2, 2, 1, 1, 1, 1, 3, 1, "u8 1x1 s2 255 ch"},
        {129, 33, 5, 13, 3, 3, 2, 2, 1, 1, 0, 1, 3, 2, "u8 3x3 s2 129 ch"},
        {16384, 3, 1, 2, 3, 3, 1, 1, 1, 1, 0, 0, 6, 2, "u8 127 x -128 over 147456 MACs"},
        {8192, 2, 1, 2, 1, 1, 1, 1, 1, 1, 0, 0, 4, 1, "u8 1x1 8192 ch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dla_conv_geom g = geom(cases[i].in_c, cases[i].out_k, cases[i].out_h,
                                      cases[i].out_w, cases[i].k_h, cases[i].k_w, cases[i].sy,
                                      cases[i].sx, cases[i].dy, cases[i].dx, cases[i].eh,
                                      cases[i].ew);
        run_case(&g, 300 + i, cases[i].mode_in, cases[i].mode_wt, 1, cases[i].name);
    }
    /* the whole weight range -128..127 against 127 and 0 in every pair */
    struct dla_conv_geom g = geom(256, 4, 1, 16, 1, 1, 1, 1, 1, 1, 0, 0);
    struct bufs b;
    bufs_alloc(&b, &g);
    for (size_t i = 0; i < b.nwt; i++) {
        b.wt[i] = (int8_t)(uint8_t)(i + 37 * (i / 256));
    }
    for (size_t i = 0; i < b.nin; i++) {
        b.in[i] = (int8_t)((i / 16) % 3 == 0 ? 0 : 127);
    }
    dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
    if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
        assert_true(dla_conv_takes_u8(DLA_CONV_ISA_AVX2, 0, &g, b.in));
        assert_false(dla_conv_takes_u8(DLA_CONV_ISA_AVX2, DLA_CONV_NO_U8, &g, b.in));
    }
    check_all_paths(&g, &b, "u8 every weight code");
    bufs_free(&b);

    uint64_t s = 0x5EEDull;
    char name[128];
    for (int i = 0; i < 24; i++) {
        uint32_t k_h = rnd_range(&s, 1, 5), k_w = rnd_range(&s, 1, 5);
        struct dla_conv_geom gr = geom(rnd_range(&s, 1, 70), rnd_range(&s, 1, 40),
                                       rnd_range(&s, 1, 20), rnd_range(&s, 1, 30), k_h, k_w,
                                       rnd_range(&s, 1, 3), rnd_range(&s, 1, 3),
                                       rnd_range(&s, 1, 2), rnd_range(&s, 1, 2),
                                       rnd_range(&s, 0, 2), rnd_range(&s, 0, 2));
        int mode_in = (int)rnd_range(&s, 3, 6);
        snprintf(name, sizeof name, "u8 random #%d (c%u k%u %ux%u kern %ux%u s%u,%u)", i,
                 gr.in_c, gr.out_k, gr.out_h, gr.out_w, gr.k_h, gr.k_w, gr.stride_y,
                 gr.stride_x);
        run_case(&gr, splitmix64_next(&s), mode_in, (int)rnd_range(&s, 0, 2), i < 8, name);
    }

    /* one negative code: the first byte, the last (padding no window
     * reads), and random places; codes -1 and -128 */
    struct dla_conv_geom gn = geom(13, 9, 6, 7, 3, 3, 1, 1, 1, 1, 2, 2);
    bufs_alloc(&b, &gn);
    for (int i = 0; i < 6; i++) {
        uint64_t f = 400 + (uint64_t)i;
        fill(b.in, b.nin, &f, 4);
        fill(b.wt, b.nwt, &f, 1);
        size_t at = i == 0 ? 0 : i == 1 ? b.nin - 1 : (size_t)rnd_range(&s, 0, (uint32_t)b.nin - 1);
        b.in[at] = i % 2 ? -128 : -1;
        if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
            assert_false(dla_conv_takes_u8(DLA_CONV_ISA_AVX2, 0, &gn, b.in));
        }
        dla_conv_s8_ref(&gn, b.in, b.wt, b.ref);
        snprintf(name, sizeof name, "one negative code at %zu", at);
        check_all_paths(&gn, &b, name);
    }
    bufs_free(&b);
}

/* AVX2's paired steps: weights whose pair lanes sum to 258 in magnitude
 * (may share an int16 sum against inputs of 127: 32766) next to ones of
 * 259-260 (32893-33020: would wrap), bell-shaped weights (most pairs
 * paired, some not: schedules of both kinds of runs), odd step counts,
 * k tails, strides and padding; every path against the reference. */
static void test_paired_steps(void **state)
{
    (void)state;
    static const struct {
        uint32_t in_c, out_k, out_h, out_w, k_h, k_w, sy, sx, eh, ew;
        int mode_in, mode_wt;
        const char *name;
    } cases[] = {
        {64, 13, 5, 19, 1, 1, 1, 1, 0, 0, 6, 8, "pairs 1x1 64 ch, 127 x 64/65"},
        {64, 13, 5, 19, 1, 1, 1, 1, 0, 0, 6, 9, "pairs 1x1 64 ch, 127 x -64/-65"},
        {24, 7, 6, 9, 3, 3, 1, 1, 1, 2, 6, 8, "pairs 3x3 24 ch padded, 127 x 64/65"},
        {5, 11, 7, 7, 3, 3, 2, 2, 1, 0, 6, 9, "pairs 3x3 s2 5 ch, 127 x -64/-65"},
        {256, 20, 7, 7, 1, 1, 1, 1, 0, 0, 3, 7, "pairs 1x1 256 ch bell weights"},
        {128, 17, 6, 14, 3, 3, 1, 1, 0, 0, 5, 7, "pairs 3x3 128 ch bell weights"},
        {36, 9, 9, 11, 3, 3, 2, 2, 1, 1, 6, 7, "pairs 3x3 s2 36 ch (odd steps) 127 x bell"},
        {2048, 8, 1, 1, 1, 1, 1, 1, 0, 0, 4, 7, "pairs one pixel 2048 ch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dla_conv_geom g = geom(cases[i].in_c, cases[i].out_k, cases[i].out_h,
                                      cases[i].out_w, cases[i].k_h, cases[i].k_w, cases[i].sy,
                                      cases[i].sx, 1, 1, cases[i].eh, cases[i].ew);
        struct bufs b;
        uint64_t s = 900 + i;
        bufs_alloc(&b, &g);
        fill(b.in, b.nin, &s, cases[i].mode_in);
        fill(b.wt, b.nwt, &s, cases[i].mode_wt);
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
            /* both kinds of step pairs are there, so both are exercised */
            struct dla_conv_wpack *w = NULL;
            assert_int_equal(dla_conv_wpack_build_isa(&g, b.wt, DLA_CONV_ISA_AVX2, 0, &w), 0);
            size_t npairs = (size_t)g.out_k * (((size_t)g.in_c + 3) / 4 * g.k_h * g.k_w / 2);
            size_t paired = dla_conv_wpack_pairs(w);
            if (paired == 0 || paired == npairs) {
                fail_msg("%s: %zu of %zu step pairs may be paired", cases[i].name, paired,
                         npairs);
            }
            dla_conv_wpack_free(w);
        }
        check_all_paths(&g, &b, cases[i].name);
        bufs_free(&b);
    }
    /* lanes at exactly +-258 pair (127 x 258 = 32766), at +-259 they do not:
     * 4 channels (channels 2, 3 zero), a 26x1 kernel: 13 pairs of steps a
     * channel (enough to be paired, conv_s8.c sched_gains); channel 0's
     * lanes add to +258 (+259), channel 1's to -258 (-259) in every pair */
    for (int over = 0; over < 2; over++) {
        struct dla_conv_geom g = geom(4, 2, 1, 8, 26, 1, 1, 1, 1, 1, 0, 0);
        struct bufs b;
        bufs_alloc(&b, &g);
        memset(b.wt, 0, b.nwt);
        for (int k = 0; k < 2; k++) {
            for (int t = 0; t < 26; t++) {
                /* [k][c][t]: c0 64, 65 alternating; c1 64/65 (65 on the odd tap if over) */
                int c0 = t % 2 ? 65 : 64, c1 = t % 2 ? (over ? 66 : 65) : 64;
                b.wt[(k * 4 + 0) * 26 + t] = (int8_t)(k ? -c0 : c0);
                b.wt[(k * 4 + 1) * 26 + t] = (int8_t)(k ? -c1 : c1);
            }
        }
        memset(b.in, 127, b.nin);
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        assert_int_equal(b.ref[0], over ? 127 * 3367 : 127 * 3354);
        assert_int_equal(b.ref[8], over ? -127 * 3367 : -127 * 3354);
        if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
            struct dla_conv_wpack *w = NULL;
            assert_int_equal(dla_conv_wpack_build_isa(&g, b.wt, DLA_CONV_ISA_AVX2, 0, &w), 0);
            assert_int_equal(dla_conv_wpack_pairs(w), over ? 0 : 26);
            dla_conv_wpack_free(w);
        }
        check_all_paths(&g, &b, over ? "pairs at 259" : "pairs at 258");
        bufs_free(&b);
    }
}

/* Layers without junk lanes (1x1 kernels: the virtual plane is out_w
 * wide; shifted planes, conv_s8.c conv_shifted): a tile's pixels from
 * several output rows are one run, stored straight from the registers
 * when the tile is full, and the last tile's 1..15 pixels take every
 * tail store (4, 2, 1 int32s): pixel counts 49, 15, 6, 25, 11, 42, 12 and
 * 7 leave each remainder of 8 and 16 pixels; 13 output channels leave a
 * partial row block in every shape.  A last tile of 16-pixel shapes with
 * at most 8 real pixels runs as a half tile (6x8, 4x8: P16 on the signed
 * inputs, U8, and paired U8 on the 3x3 cases' bell weights), one with at
 * most DLA_CONV_DOT_PIXELS as the dot tile (49, 18 and 17 pixels). */
static void test_row_spanning_runs(void **state)
{
    (void)state;
    static const struct {
        uint32_t in_c, out_k, out_h, out_w, k_h, k_w, sy, sx, ew;
        int mode_in, mode_wt;
        const char *name;
    } cases[] = {
        {12, 13, 7, 7, 1, 1, 1, 1, 0, 3, 7, "runs 1x1 7x7 (49 pixels) bell weights"},
        {12, 13, 3, 5, 1, 1, 1, 1, 0, 4, 0, "runs 1x1 3x5 (15 pixels), 0/127 input"},
        {9, 13, 2, 3, 1, 1, 1, 1, 0, 0, 0, "runs 1x1 2x3 (6 pixels), signed input"},
        {16, 13, 5, 5, 1, 1, 2, 2, 1, 3, 0, "runs 1x1 s2 5x5 (25 pixels)"},
        {64, 13, 1, 11, 1, 1, 1, 1, 0, 6, 8, "runs 1x1 1x11 (11 pixels), 127 x 64/65"},
        {8, 13, 6, 7, 1, 1, 1, 1, 0, 2, 2, "runs 1x1 6x7 (42 pixels), mostly -128"},
        {40, 13, 4, 3, 1, 1, 1, 1, 0, 5, 7, "runs 1x1 4x3 (12 pixels)"},
        {64, 13, 7, 1, 1, 1, 1, 1, 0, 3, 7, "runs 1x1 7x1 (7 pixels)"},
        {64, 13, 14, 14, 3, 3, 1, 1, 0, 3, 7, "runs 3x3 14x14 (shifted planes)"},
        {96, 13, 7, 7, 3, 3, 1, 1, 0, 5, 7, "runs 3x3 7x7 (shifted planes)"},
        /* one or two real pixels in the last tile (the dot tiles), over
         * more steps than one gather (DOT_CHUNK) and a step count that
         * leaves a scalar tail; signed (P16) and U8 inputs */
        {600, 13, 7, 7, 1, 1, 1, 1, 0, 0, 2, "dot 1x1 7x7 600 ch, signed input"},
        {1000, 9, 7, 7, 1, 1, 1, 1, 0, 6, 8, "dot 1x1 7x7 1000 ch, 127 x 64/65"},
        {37, 13, 3, 6, 1, 1, 1, 1, 0, 2, 2, "dot 1x1 3x6 (18 pixels), mostly -128"},
        {70, 7, 1, 17, 1, 1, 1, 1, 0, 3, 7, "dot 1x1 1x17 (17 pixels) bell weights"},
        {45, 13, 7, 7, 3, 3, 1, 1, 0, 0, 1, "dot 3x3 7x7 (shifted planes), signed input"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dla_conv_geom g = geom(cases[i].in_c, cases[i].out_k, cases[i].out_h,
                                      cases[i].out_w, cases[i].k_h, cases[i].k_w, cases[i].sy,
                                      cases[i].sx, 1, 1, 0, cases[i].ew);
        run_case(&g, 1100 + i, cases[i].mode_in, cases[i].mode_wt, 1, cases[i].name);
    }
}

static void test_one_pixel(void **state)
{
    (void)state;
    static const struct {
        uint32_t in_c, out_k, k_h, k_w, eh, ew;
        int mode_in, mode_wt;
        const char *name;
    } cases[] = {
        {1, 1, 1, 1, 0, 0, 3, 0, "one pixel 1 -> 1"},
        {5, 7, 1, 1, 0, 0, 6, 1, "one pixel 5 -> 7, 127 x -128/127"},
        {64, 10, 1, 1, 0, 0, 3, 0, "one pixel 64 -> 10 (the demo's last layer)"},
        {13, 9, 3, 3, 2, 1, 4, 2, "one pixel 3x3 13 ch -> 9, padded"},
        {32, 64, 7, 7, 0, 0, 5, 7, "one pixel 7x7x32 -> 64 (a flattened layer)"},
        {100, 33, 1, 1, 0, 0, 6, 2, "one pixel 100 -> 33, mostly -128"},
        {2048, 100, 1, 1, 0, 0, 3, 0, "one pixel 2048 -> 100"},
        {300, 40, 1, 1, 3, 5, 4, 1, "one pixel 300 -> 40, 0/127 x -128/127"},
        {64, 16, 1, 1, 0, 0, 0, 0, "one pixel 64 -> 16, signed input"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct dla_conv_geom g = geom(cases[i].in_c, cases[i].out_k, 1, 1, cases[i].k_h,
                                      cases[i].k_w, 1, 1, 1, 1, cases[i].eh, cases[i].ew);
        run_case(&g, 950 + i, cases[i].mode_in, cases[i].mode_wt, 1, cases[i].name);
    }
}

/* The k blocks' step ranges and pair schedules a pack keeps, one table per
 * tile height of its ISA's shapes (conv_s8.c kb_tables_build): weights
 * that pair in runs of 5 step pairs, each run ended by one pair that does
 * not fit (the densest schedule a k block keeps: 2 entries per 5 pairs),
 * on 960 channels.  With one output pixel (the wk copy takes the byte
 * bound's slack) the pack stays within dla_conv_wpack_bytes_bound; with
 * one and with 7 pixels (pixel tiles read the schedules) every ISA, tile
 * shape (each table) and thread count equals the reference. */
static void test_pack_tables(void **state)
{
    (void)state;
    for (uint32_t pixels = 1; pixels <= 7; pixels += 6) {
        struct dla_conv_geom g = geom(960, 256, 1, pixels, 1, 1, 1, 1, 1, 1, 0, 0);
        struct bufs b;
        uint64_t s = 1200 + pixels;
        bufs_alloc(&b, &g);
        fill(b.in, b.nin, &s, 3);
        for (size_t k = 0; k < g.out_k; k++) {
            for (size_t c = 0; c < g.in_c; c++) {
                /* pair i = channels 8i .. 8i + 7 (two U8 cells); i % 6 == 5:
                 * lanes of 4 x 127, past 258; else small weights */
                int8_t v = (c / 8) % 6 == 5 ? 127 : (int8_t)(rnd_range(&s, 0, 6) - 3);
                b.wt[k * g.in_c + c] = v;
            }
        }
        dla_conv_s8_ref(&g, b.in, b.wt, b.ref);
        if (dla_conv_isa_supported(DLA_CONV_ISA_AVX2)) {
            struct dla_conv_wpack *w = NULL;
            assert_int_equal(dla_conv_wpack_build_isa(&g, b.wt, DLA_CONV_ISA_AVX2, 0, &w), 0);
            assert_int_equal(dla_conv_wpack_pairs(w), 256 * 100);
            if (dla_conv_wpack_bytes(w) > dla_conv_wpack_bytes_bound(&g)) {
                fail_msg("%u pixels: pack of %zu bytes, bound %zu", pixels,
                         dla_conv_wpack_bytes(w), dla_conv_wpack_bytes_bound(&g));
            }
            dla_conv_wpack_free(w);
        }
        check_all_paths(&g, &b, pixels == 1 ? "pack tables, one pixel" : "pack tables, 7 pixels");
        bufs_free(&b);
    }
}

static void test_isa_names(void **state)
{
    (void)state;
    const char *isa = dla_conv_s8_isa();
    int found = 0;

    assert_non_null(isa);
    /* the selected ISA is the best one this CPU supports */
    for (int i = DLA_CONV_ISA_COUNT - 1; i >= 0; i--) {
        if (dla_conv_isa_supported((enum dla_conv_isa)i)) {
            assert_string_equal(isa, dla_conv_isa_name((enum dla_conv_isa)i));
            found = 1;
            break;
        }
    }
    assert_true(found);
    assert_true(dla_conv_isa_supported(DLA_CONV_ISA_GENERIC));
    assert_string_equal(dla_conv_isa_name(DLA_CONV_ISA_GENERIC), "generic");
    assert_string_equal(dla_conv_isa_name(DLA_CONV_ISA_AVX2), "avx2");
    assert_string_equal(dla_conv_isa_name(DLA_CONV_ISA_AVX512VNNI), "avx512vnni");
    for (int i = 0; i < DLA_CONV_ISA_COUNT; i++) {
        if (!dla_conv_isa_supported((enum dla_conv_isa)i)) {
            struct dla_conv_opts o = {(enum dla_conv_isa)i, -1, 0, 1};
            struct dla_conv_geom g = geom(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0);
            int8_t x = 1;
            int32_t y;
            assert_int_equal(dla_conv_s8_opts(&o, &g, &x, &x, &y), DLASIM_ERR_UNSUPPORTED);
        }
    }
}

/* The thread-count decision: shares of 150 us of work for threads created
 * per call and of 6 us for a kept team's workers (they spin for the next
 * job), at the given per-thread speed (conv_s8.c wpack_macs_per_s: AVX2 U8
 * cells 75 GMAC/s, P16 52). */
static void test_split_threads(void **state)
{
    (void)state;
    const double u8 = 75e9, p16 = 52e9;

    /* ResNet-50's 56x8x256 -> 64 1x1 bands (after a ReLU: U8): two threads
     * of a kept team, one created for the call */
    assert_int_equal(dla_conv_split_threads(56.0 * 8 * 256 * 64, u8, 2, 1), 2);
    assert_int_equal(dla_conv_split_threads(56.0 * 8 * 256 * 64, u8, 2, 0), 1);
    /* MobileNetV2's 28x28x32 -> 192 expand layer (P16 ~90 us, U8 ~65 us):
     * two threads of a kept team, one created for the call; the demo's
     * 14x14x16 -> 32 3x3 layer (12.04 us at U8, just over two shares): two
     * of a kept team, its 7x7x16 -> 32 one (~3 us): one */
    assert_int_equal(dla_conv_split_threads(28.0 * 28 * 32 * 192, p16, 2, 1), 2);
    assert_int_equal(dla_conv_split_threads(28.0 * 28 * 32 * 192, p16, 2, 0), 1);
    assert_int_equal(dla_conv_split_threads(28.0 * 28 * 32 * 192, u8, 2, 1), 2);
    assert_int_equal(dla_conv_split_threads(14.0 * 14 * 16 * 32 * 9, u8, 2, 1), 2);
    assert_int_equal(dla_conv_split_threads(7.0 * 7 * 16 * 32 * 9, u8, 2, 1), 1);
    /* its 112x70x16 -> 96 band (~250 us): two of a kept team, not three
     * where there are two; a thread created for it must get 150 us */
    assert_int_equal(dla_conv_split_threads(112.0 * 70 * 16 * 96, p16, 2, 1), 2);
    assert_int_equal(dla_conv_split_threads(112.0 * 70 * 16 * 96, p16, 2, 0), 1);
    /* its 112x35x32 -> 16 projection bands with VNNI (2 M MACs, 11-15 us on
     * one thread in the network): two of a kept team */
    assert_int_equal(dla_conv_split_threads(112.0 * 35 * 32 * 16, 250e9, 2, 1), 2);
    for (int kept = 0; kept <= 1; kept++) {
        const double share = kept ? 0.225e6 : 11.25e6; /* MACs in 3 / 150 us at u8 */
        /* edges: just under and just over two shares */
        assert_int_equal(dla_conv_split_threads(2 * share * 0.999, u8, 4, kept), 1);
        assert_int_equal(dla_conv_split_threads(2 * share * 1.001, u8, 4, kept), 2);
        /* whole shares only, never more than the threads there are */
        assert_int_equal(dla_conv_split_threads(3.5 * share, u8, 8, kept), 3);
        assert_int_equal(dla_conv_split_threads(3.5 * share, u8, 2, kept), 2);
        assert_int_equal(dla_conv_split_threads(1e12, u8, 5, kept), 5);
        assert_int_equal(dla_conv_split_threads(1e12, u8, 1, kept), 1);
        assert_int_equal(dla_conv_split_threads(0.0, u8, 4, kept), 1);
    }
    /* a slower ISA (the generic loops' figure): the same layer makes more shares */
    assert_int_equal(dla_conv_split_threads(28.0 * 28 * 32 * 192, 3e9, 4, 1), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_checked),
        cmocka_unit_test(test_wrapping_sums),
        cmocka_unit_test(test_edge_geometries),
        cmocka_unit_test(test_random_geometries),
        cmocka_unit_test(test_few_channels),
        cmocka_unit_test(test_resnet_like_layer),
        cmocka_unit_test(test_guided_chunks),
        cmocka_unit_test(test_packed_from_task),
        cmocka_unit_test(test_sparse_weights),
        cmocka_unit_test(test_nonneg_inputs),
        cmocka_unit_test(test_paired_steps),
        cmocka_unit_test(test_one_pixel),
        cmocka_unit_test(test_pack_tables),
        cmocka_unit_test(test_row_spanning_runs),
        cmocka_unit_test(test_input_in_place),
        cmocka_unit_test(test_input_atoms),
        cmocka_unit_test(test_input_atoms_windows),
        cmocka_unit_test(test_atoms_tiles),
        cmocka_unit_test(test_klanes_tiles),
        cmocka_unit_test(test_one_by_one_lines),
        cmocka_unit_test(test_src_one_pixel),
        cmocka_unit_test(test_short_signed_rows),
        cmocka_unit_test(test_empty_and_errors),
        cmocka_unit_test(test_isa_names),
        cmocka_unit_test(test_split_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
