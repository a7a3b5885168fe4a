/*
 * Unit tests of the depthwise path of the convolution pipeline
 * (src/kernels/conv_dw_s8.c): on diagonal (depthwise) dense weights it must
 * give dla_conv_s8_ref's sums bit for bit, for strides 1-3 (the vector rows
 * take 1 and 2, the scalar loop the rest), dilations, kernels up to 7x7,
 * widths that end in a partial block and planes small and large (the
 * vector rows pair a small plane whole, a larger one row by row), with the
 * input and output allocated to their exact sizes (the sanitizer build
 * catches an access past them), through every instruction set the CPU
 * has (scalar, AVX2, AVX-512BW: dla_conv_dw_s8_*_isa); and the weight test
 * must accept exactly the diagonal kernels.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/rng.h"
#include "dlasim/dlasim.h"
#include "kernels/conv_dw_s8.h"

/* A random depthwise geometry, out_w up to max_w and out_h up to max_h. */
static struct dla_conv_geom random_geom_up_to(uint64_t *s, uint32_t max_w, uint32_t max_h)
{
    struct dla_conv_geom g;
    memset(&g, 0, sizeof g);
    g.in_c = g.out_k = splitmix64_range(s, 1, 12);
    g.k_w = splitmix64_range(s, 1, 7);
    g.k_h = splitmix64_range(s, 1, 7);
    g.stride_x = splitmix64_range(s, 1, 3);
    g.stride_y = splitmix64_range(s, 1, 3);
    g.dil_x = splitmix64_range(s, 1, 2);
    g.dil_y = splitmix64_range(s, 1, 2);
    g.out_w = splitmix64_range(s, 1, max_w);
    g.out_h = splitmix64_range(s, 1, max_h);
    /* the padded input the window needs, and sometimes a little more */
    g.in_w = (g.out_w - 1) * g.stride_x + (g.k_w - 1) * g.dil_x + 1 + splitmix64_range(s, 0, 1);
    g.in_h = (g.out_h - 1) * g.stride_y + (g.k_h - 1) * g.dil_y + 1;
    return g;
}

static struct dla_conv_geom random_geom(uint64_t *s)
{
    return random_geom_up_to(s, 40, 6);
}

/* Diagonal dense weights wt[k][c][taps]: random on c == k, 0 elsewhere. */
static int8_t *diagonal_weights(const struct dla_conv_geom *g, uint64_t *s)
{
    size_t taps = (size_t)g->k_w * g->k_h;
    int8_t *wt = calloc((size_t)g->out_k * g->in_c * taps, 1);
    assert_non_null(wt);
    for (size_t k = 0; k < g->out_k; k++) {
        for (size_t t = 0; t < taps; t++) {
            wt[(k * g->in_c + k) * taps + t] = (int8_t)splitmix64_range(s, 0, 255);
        }
    }
    return wt;
}

static void check_depthwise(struct dla_conv_geom g, uint64_t s, int n);

/* n_cases random geometries (out_w <= max_w, out_h <= max_h) against the
 * reference. */
static void check_random_depthwise(uint64_t s, int n_cases, uint32_t max_w, uint32_t max_h)
{
    for (int n = 0; n < n_cases; n++) {
        struct dla_conv_geom g = random_geom_up_to(&s, max_w, max_h);
        check_depthwise(g, splitmix64_next(&s), n);
    }
}

/* One geometry g against the reference (n: the case's number; every
 * fourth case's input is all -128). */
static void check_depthwise(struct dla_conv_geom g, uint64_t s, int n)
{
    size_t in_n = (size_t)g.in_c * g.in_w * g.in_h, out_n = (size_t)g.out_k * g.out_w * g.out_h;
    int8_t *in = malloc(in_n);
    int32_t *got = malloc(out_n * sizeof(int32_t)), *want = malloc(out_n * sizeof(int32_t));
    assert_non_null(in);
    assert_non_null(got);
    assert_non_null(want);
    for (size_t i = 0; i < in_n; i++) {
        /* extremes often: -128 * -128 is the largest product */
        in[i] = (int8_t)(n % 4 == 0 ? -128 : (int)splitmix64_range(&s, 0, 255));
    }
    int8_t *wt = diagonal_weights(&g, &s);
    assert_true(dla_conv_s8_is_depthwise(&g, wt));
    dla_conv_s8_ref(&g, in, wt, want);
    dla_conv_dw_s8(&g, in, wt, got);
    if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
        fail_msg("case %d: %ux%u kernel, stride %ux%u, dilation %ux%u, out %ux%ux%u differs",
                 n, g.k_w, g.k_h, g.stride_x, g.stride_y, g.dil_x, g.dil_y, g.out_w, g.out_h,
                 g.out_k);
    }
    /* from the diagonal alone (csc.c's cached depthwise kernels) */
    int8_t *diag = malloc((size_t)g.out_k * g.k_w * g.k_h);
    assert_non_null(diag);
    dla_conv_dw_s8_diagonal(&g, wt, diag);
    memset(got, 0x5a, out_n * sizeof(int32_t));
    dla_conv_dw_s8_diag_channels(&g, in, diag, got, 0, g.out_k);
    if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
        fail_msg("case %d: the diagonal kernels' %ux%ux%u output differs", n, g.out_w,
                 g.out_h, g.out_k);
    }
    /* every instruction set the CPU has, channel by channel as well (one
     * item's share: the rows near its last plane's end) */
    for (int isa = 0; isa < DLA_DW_ISA_COUNT; isa++) {
        if (!dla_conv_dw_s8_isa_supported((enum dla_dw_isa)isa)) {
            continue;
        }
        memset(got, 0x5a, out_n * sizeof(int32_t));
        dla_conv_dw_s8_diag_channels_isa(&g, in, diag, got, 0, g.out_k, (enum dla_dw_isa)isa);
        for (size_t k = 0; k < g.out_k; k += 3) {
            dla_conv_dw_s8_diag_channels_isa(&g, in, diag, got, k, k + 3, (enum dla_dw_isa)isa);
        }
        if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
            fail_msg("case %d: isa %d: %ux%u kernel, stride %ux%u, dilation %ux%u, out "
                     "%ux%ux%u differs",
                     n, isa, g.k_w, g.k_h, g.stride_x, g.stride_y, g.dil_x, g.dil_y, g.out_w,
                     g.out_h, g.out_k);
        }
    }
    free(diag);
    free(in);
    free(got);
    free(want);
    free(wt);
}

static void test_random_depthwise(void **state)
{
    (void)state;
    check_random_depthwise(0x64657074ULL, 400, 40, 6);
}

/* MobileNet's depthwise blocks (3x3, eight channels; x and y stride 1
 * and 2, the stride-2 input one or two columns past the window's), whose
 * rows the vector paths take in whole blocks of sixteen, a partial block
 * last, the last channel's last row read up to the input's end. */
static void test_mobilenet_depthwise(void **state)
{
    (void)state;
    static const uint32_t sizes[] = { 7, 14, 15, 16, 17, 28, 31, 56, 112 };
    uint64_t s = 0x6d6f6269ULL;
    int n = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (uint32_t stride = 1; stride <= 2; stride++) {
            for (uint32_t extra = 0; extra <= 1; extra++) {
                struct dla_conv_geom g;
                memset(&g, 0, sizeof g);
                g.in_c = g.out_k = 8;
                g.k_w = g.k_h = 3;
                g.stride_x = g.stride_y = stride;
                g.dil_x = g.dil_y = 1;
                g.out_w = g.out_h = sizes[i];
                g.in_w = (g.out_w - 1) * stride + 3 + extra;
                g.in_h = (g.out_h - 1) * stride + 3;
                check_depthwise(g, splitmix64_next(&s), n++);
            }
        }
    }
}

/* Planes past the size the vector rows pair whole (4096 bytes), and rows
 * past the width they pair on the stack (512): the other paths. */
static void test_wide_depthwise(void **state)
{
    (void)state;
    check_random_depthwise(0x77696465ULL, 40, 700, 12);
}

/*
 * The layer in bands of random heights (dla_conv_dw_s8_src_rows), each into
 * a buffer of its own rows (out[k][y - y0][x]): every band's values are
 * the whole layer's rows, and a band out of range is refused.
 */
static void check_bands(uint64_t *s, const struct dla_conv_geom *g, const struct dla_dw_src *src,
                        const int8_t *diag, const int32_t *want, int n)
{
    const size_t row = g->out_w;
    int32_t *band = malloc((size_t)g->out_k * g->out_h * row * sizeof(int32_t));
    assert_non_null(band);
    for (uint32_t y0 = 0, y1; y0 < g->out_h; y0 = y1) {
        y1 = y0 + (uint32_t)splitmix64_range(s, 1, 4);
        y1 = y1 < g->out_h ? y1 : g->out_h;
        memset(band, 0x5a, (size_t)g->out_k * (y1 - y0) * row * sizeof(int32_t));
        assert_int_equal(dla_conv_dw_s8_src_rows(g, src, diag, y0, y1, band), 0);
        for (size_t k = 0; k < g->out_k; k++) {
            if (memcmp(band + k * (y1 - y0) * row, want + (k * g->out_h + y0) * row,
                       (y1 - y0) * row * sizeof(int32_t)) != 0) {
                fail_msg("case %d: %ux%u kernel, stride %ux%u, out %ux%ux%u: band of rows "
                         "[%u,%u) differs in channel %zu", n, g->k_w, g->k_h, g->stride_x,
                         g->stride_y, g->out_w, g->out_h, g->out_k, y0, y1, k);
            }
        }
    }
    assert_int_equal(dla_conv_dw_s8_src_rows(g, src, diag, 0, g->out_h + 1, band),
                     DLASIM_ERR_INVAL);
    assert_int_equal(dla_conv_dw_s8_src_rows(g, src, diag, 1, 1, band), DLASIM_ERR_INVAL);
    free(band);
}

/* n bytes of random codes (every fifth case's all -128). */
static int8_t *random_codes(uint64_t *s, size_t n, int case_n)
{
    int8_t *buf = malloc(n ? n : 1);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        buf[i] = (int8_t)(case_n % 5 == 0 ? -128 : (int)splitmix64_range(s, 0, 255));
    }
    return buf;
}

/* A layer read from src's buffer: the padded planar cube src describes,
 * random diagonal kernels, the reference's output (want) and room for the
 * kernel's (got). */
struct dw_case {
    int8_t *in, *wt, *diag;
    int32_t *got, *want;
    size_t out_n;
};

/* Byte offset in src's buffer of data element (c, y, x) (y, x from the
 * data's first row and column). */
typedef size_t (*dw_elem_fn)(const struct dla_conv_src *src, size_t c, size_t y, size_t x);

static void dw_case_of(uint64_t *s, const struct dla_conv_geom *g, const struct dla_conv_src *src,
                       dw_elem_fn elem, struct dw_case *k)
{
    const size_t plane = (size_t)g->in_w * g->in_h;
    k->out_n = (size_t)g->out_k * g->out_w * g->out_h;
    k->in = malloc(plane * g->in_c);
    k->got = malloc(k->out_n * sizeof(int32_t));
    k->want = malloc(k->out_n * sizeof(int32_t));
    k->diag = malloc((size_t)g->out_k * g->k_w * g->k_h);
    assert_non_null(k->in);
    assert_non_null(k->got);
    assert_non_null(k->want);
    assert_non_null(k->diag);
    for (size_t c = 0; c < g->in_c; c++) {
        for (size_t y = 0; y < g->in_h; y++) {
            for (size_t x = 0; x < g->in_w; x++) {
                int data = y >= src->y0 && y < src->y1 && x >= src->x0 && x < src->x1;
                k->in[c * plane + y * g->in_w + x] =
                    data ? src->data[elem(src, c, y - src->y0, x - src->x0)] : src->pad;
            }
        }
    }
    k->wt = diagonal_weights(g, s);
    dla_conv_dw_s8_diagonal(g, k->wt, k->diag);
    dla_conv_s8_ref(g, k->in, k->wt, k->want);
}

static void dw_case_free(struct dw_case *k)
{
    free(k->in);
    free(k->wt);
    free(k->diag);
    free(k->got);
    free(k->want);
}

/* Channel rows: channel c's row of line y at y x line_stride + c x ch_stride. */
static size_t line_elem(const struct dla_conv_src *src, size_t c, size_t y, size_t x)
{
    return y * src->line_stride + c * src->ch_stride + x;
}

/* Atoms: surface c / 8 at ch_stride apart, pixel x's 8 channels side by side. */
static size_t atom_elem(const struct dla_conv_src *src, size_t c, size_t y, size_t x)
{
    return c / 8 * src->ch_stride + y * src->line_stride + x * 8 + c % 8;
}

/*
 * One layer whose input is read from its lines (dla_conv_dw_s8_src_channels):
 * the lines hold columns [x0, x1) and rows [y0, y1) of the padded cube
 * (PAD_VALUE elsewhere), channel rows w + ch_extra bytes apart in a line,
 * lines line_stride apart, in a buffer of exactly the lines' bytes (lo,
 * hi: its ends); the same values as the reference on the padded planar
 * cube, whole and through every ISA in calls of `split` channels.  0 when
 * dla_conv_dw_s8_src_takes does not take the layer.
 */
static int check_from_lines(uint64_t *s, struct dla_conv_geom g, int n, uint32_t ch_extra,
                            size_t split)
{
    struct dla_conv_src src = {0};
    memset(&src, 0, sizeof src);
    src.x0 = splitmix64_range(s, 0, g.in_w < 3 ? g.in_w : 3);
    src.x1 = g.in_w - splitmix64_range(s, 0, g.in_w - src.x0 < 3 ? g.in_w - src.x0 : 3);
    src.y0 = splitmix64_range(s, 0, g.in_h < 3 ? g.in_h : 3);
    src.y1 = g.in_h - splitmix64_range(s, 0, g.in_h - src.y0 < 3 ? g.in_h - src.y0 : 3);
    src.pad = (int8_t)splitmix64_range(s, 0, 255);
    const size_t w = src.x1 - src.x0, lines = src.y1 - src.y0;
    src.ch_stride = w + ch_extra;
    if (src.ch_stride == 0 || !dla_conv_dw_s8_src_takes(&g, &src)) {
        return 0;
    }
    src.line_stride = src.ch_stride * g.in_c + splitmix64_range(s, 0, 5);
    /* the last line ends with the last channel's data */
    const size_t bytes = lines ? (lines - 1) * src.line_stride +
                                     (g.in_c - 1) * src.ch_stride + w
                               : 0;
    int8_t *buf = random_codes(s, bytes, n);
    src.data = buf;
    struct dw_case k;
    dw_case_of(s, &g, &src, line_elem, &k);
    const size_t out_n = k.out_n;
    int32_t *got = k.got, *want = k.want;
    const int8_t *diag = k.diag;
    const struct dla_dw_src dsrc = {src, buf, buf + bytes};
    dla_conv_dw_s8_src_channels(&g, &dsrc, diag, got, 0, g.out_k);
    if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
        fail_msg("case %d: %ux%u kernel, stride %ux%u, dilation %ux%u, out %ux%ux%u, data "
                 "[%u,%u)x[%u,%u), rows %zu apart, from lines differs",
                 n, g.k_w, g.k_h, g.stride_x, g.stride_y, g.dil_x, g.dil_y, g.out_w, g.out_h,
                 g.out_k, src.x0, src.x1, src.y0, src.y1, src.ch_stride);
    }
    for (int isa = DLA_DW_AVX2; isa < DLA_DW_ISA_COUNT; isa++) {
        if (!dla_conv_dw_s8_isa_supported((enum dla_dw_isa)isa)) {
            continue;
        }
        memset(got, 0x5a, out_n * sizeof(int32_t));
        /* the last call's channels first: a store past a call's last
         * channel would land on outputs already made (another thread's,
         * in the device), which the comparison then catches */
        for (size_t i = (g.out_k + split - 1) / split; i-- > 0;) {
            dla_conv_dw_s8_src_channels_isa(&g, &dsrc, diag, got, i * split, i * split + split,
                                            (enum dla_dw_isa)isa);
        }
        if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
            fail_msg("case %d: isa %d: %ux%u kernel, stride %ux%u, dilation %ux%u, out "
                     "%ux%ux%u, calls of %zu channels, from lines differs",
                     n, isa, g.k_w, g.k_h, g.stride_x, g.stride_y, g.dil_x, g.dil_y, g.out_w,
                     g.out_h, g.out_k, split);
        }
    }
    check_bands(s, &g, &dsrc, diag, want, n);
    free(buf);
    dw_case_free(&k);
    return 1;
}

/* Case n of the wide tests: MobileNetV2's depthwise blocks first (3x3,
 * strides 1 and 2, 7 to 112 columns, 8 channels), then random layers of up
 * to 130 columns and max_h rows, 1-20 channels, windows up to 5 wide and
 * max_kh high. */
static struct dla_conv_geom mnv2_or_wide_geom(uint64_t *s, int n, uint32_t max_h,
                                              uint32_t max_kh)
{
    static const uint32_t mnv2[][2] = {{7, 1}, {14, 1}, {28, 1}, {56, 1}, {112, 1},
                                       {7, 2}, {14, 2}, {28, 2}, {56, 2}};
    struct dla_conv_geom g;
    if (n < (int)(sizeof mnv2 / sizeof mnv2[0])) {
        memset(&g, 0, sizeof g);
        g.in_c = g.out_k = 8;
        g.k_w = g.k_h = 3;
        g.stride_x = g.stride_y = mnv2[n][1];
        g.dil_x = g.dil_y = 1;
        g.out_w = g.out_h = mnv2[n][0];
        g.in_w = (g.out_w - 1) * g.stride_x + 3;
        g.in_h = (g.out_h - 1) * g.stride_y + 3;
        return g;
    }
    g = random_geom_up_to(s, 130, max_h);
    g.in_c = g.out_k = splitmix64_range(s, 1, 20);
    g.k_w = splitmix64_range(s, 1, 5);
    g.k_h = splitmix64_range(s, 1, max_kh);
    g.in_w = (g.out_w - 1) * g.stride_x + (g.k_w - 1) * g.dil_x + 1 + splitmix64_range(s, 0, 1);
    g.in_h = (g.out_h - 1) * g.stride_y + (g.k_h - 1) * g.dil_y + 1;
    return g;
}

/* Random x-stride-1 layers of rows up to 16 bytes (the AVX2 rows' and
 * the VNNI passes'), channel rows back to back. */
static void test_depthwise_from_lines(void **state)
{
    (void)state;
    uint64_t s = 0x6c696e65ULL;
    int taken = 0;
    for (int n = 0; n < 300; n++) {
        struct dla_conv_geom g = random_geom_up_to(&s, 14, 16);
        g.stride_x = 1;
        g.in_w = (g.out_w - 1) + (g.k_w - 1) * g.dil_x + 1;
        taken += check_from_lines(&s, g, n, 0, 2);
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        assert_true(taken > 100);
    }
#endif
}

/*
 * Wide rows, x strides 1-3, windows up to 4 wide and 8 high (the VNNI
 * passes: a pass of as many channels as a 127-byte table holds, one
 * channel for rows past 63 bytes), channel rows up to 3 bytes apart past
 * their data, calls of 1-5 channels; MobileNetV2's geometries among them
 * (3x3, strides 1 and 2, 7 to 112 columns, 8 channels).
 */
static void test_depthwise_from_wide_lines(void **state)
{
    (void)state;
    uint64_t s = 0x776c696eULL;
    int taken = 0;
    for (int n = 0; n < 260; n++) {
        struct dla_conv_geom g = mnv2_or_wide_geom(&s, n, 6, 8);
        taken += check_from_lines(&s, g, n, n % 3 == 0 ? splitmix64_range(&s, 1, 3) : 0,
                                  splitmix64_range(&s, 1, 5));
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi")) {
        assert_true(taken > 100); /* 143: rows past 127 bytes stay with the planar copy */
    }
#endif
}

/*
 * One layer whose input is the memory's atoms (dla_conv_src.atoms 8:
 * surfaces of 8 channels ch_stride apart, lines line_stride apart, a
 * pixel's channels side by side), in a buffer of exactly their bytes: the
 * same values as the reference on the padded planar cube they describe,
 * whole, in calls of `split` channels (odd first channels too) and in
 * bands.  0 when dla_conv_dw_s8_src_takes does not take the layer.
 */
static int check_from_atoms(uint64_t *s, struct dla_conv_geom g, int n, size_t split)
{
    struct dla_conv_src src;
    memset(&src, 0, sizeof src);
    src.atoms = 8;
    src.x0 = splitmix64_range(s, 0, g.in_w < 3 ? g.in_w : 3);
    src.x1 = g.in_w - splitmix64_range(s, 0, g.in_w - src.x0 < 3 ? g.in_w - src.x0 : 3);
    src.y0 = splitmix64_range(s, 0, g.in_h < 3 ? g.in_h : 3);
    src.y1 = g.in_h - splitmix64_range(s, 0, g.in_h - src.y0 < 3 ? g.in_h - src.y0 : 3);
    src.pad = (int8_t)splitmix64_range(s, 0, 255);
    if (!dla_conv_dw_s8_src_takes(&g, &src)) {
        return 0;
    }
    const size_t w = src.x1 - src.x0, lines = src.y1 - src.y0, nsurf = (g.in_c + 7) / 8;
    src.line_stride = w * 8 + 8 * splitmix64_range(s, 0, 2);
    src.ch_stride = lines * src.line_stride + splitmix64_range(s, 0, 24);
    /* the last surface's last line ends with its last atom */
    const size_t bytes = lines && w ? (nsurf - 1) * src.ch_stride +
                                          (lines - 1) * src.line_stride + w * 8
                                    : 0;
    int8_t *buf = random_codes(s, bytes, n);
    src.data = buf;
    struct dw_case k;
    dw_case_of(s, &g, &src, atom_elem, &k);
    const size_t out_n = k.out_n;
    int32_t *got = k.got, *want = k.want;
    const int8_t *diag = k.diag;
    const struct dla_dw_src dsrc = {src, buf, buf + bytes};
    memset(got, 0x5a, out_n * sizeof(int32_t));
    dla_conv_dw_s8_src_channels(&g, &dsrc, diag, got, 0, g.out_k);
    if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
        fail_msg("case %d: %ux%u kernel, stride %ux%u, dilation %ux%u, out %ux%ux%u, data "
                 "[%u,%u)x[%u,%u), from atoms differs",
                 n, g.k_w, g.k_h, g.stride_x, g.stride_y, g.dil_x, g.dil_y, g.out_w, g.out_h,
                 g.out_k, src.x0, src.x1, src.y0, src.y1);
    }
    /* calls of `split` channels from channel `first` on, the last first
     * (a store past a call's channels lands on outputs already made) */
    const size_t first = splitmix64_range(s, 0, 3) % g.out_k;
    memset(got, 0x5a, out_n * sizeof(int32_t));
    dla_conv_dw_s8_src_channels(&g, &dsrc, diag, got, 0, first);
    for (size_t i = (g.out_k - first + split - 1) / split; i-- > 0;) {
        dla_conv_dw_s8_src_channels(&g, &dsrc, diag, got, first + i * split,
                                    first + i * split + split);
    }
    if (memcmp(got, want, out_n * sizeof(int32_t)) != 0) {
        fail_msg("case %d: %ux%u kernel, stride %ux%u, out %ux%ux%u, calls of %zu channels "
                 "from %zu, from atoms differs",
                 n, g.k_w, g.k_h, g.stride_x, g.stride_y, g.out_w, g.out_h, g.out_k, split, first);
    }
    check_bands(s, &g, &dsrc, diag, want, n);
    free(buf);
    dw_case_free(&k);
    return 1;
}

/*
 * The memory's atoms (a depthwise block read where CDMA would fetch it):
 * MobileNetV2's blocks (3x3, strides 1 and 2, 7 to 112 columns, 8
 * channels), then random layers of 1 to 20 channels (surfaces of 8),
 * windows up to 5 wide (4 at most taken) and 9 high, x strides 1-3,
 * dilations, up to 130 columns, data windows inside the padding.
 */
static void test_depthwise_from_atoms(void **state)
{
    (void)state;
    uint64_t s = 0x61746f6dULL;
    int taken = 0;
    for (int n = 0; n < 300; n++) {
        struct dla_conv_geom g = mnv2_or_wide_geom(&s, n, 8, 9);
        taken += check_from_atoms(&s, g, n, splitmix64_range(&s, 1, 9));
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi")) {
        assert_true(taken > 150);
    } else {
        assert_int_equal(taken, 0);
    }
#endif
}

static void test_depthwise_detection(void **state)
{
    (void)state;
    uint64_t s = 7;
    struct dla_conv_geom g = random_geom(&s);
    g.in_c = g.out_k = 8;
    size_t taps = (size_t)g.k_w * g.k_h;
    int8_t *wt = diagonal_weights(&g, &s);
    assert_true(dla_conv_s8_is_depthwise(&g, wt));
    /* one weight off the diagonal: dense */
    wt[(3 * g.in_c + 5) * taps + taps - 1] = 1;
    assert_false(dla_conv_s8_is_depthwise(&g, wt));
    wt[(3 * g.in_c + 5) * taps + taps - 1] = 0;
    /* all zero is diagonal (the sums are 0 either way) */
    memset(wt, 0, (size_t)g.out_k * g.in_c * taps);
    assert_true(dla_conv_s8_is_depthwise(&g, wt));
    /* not square: never */
    g.out_k = 4;
    assert_false(dla_conv_s8_is_depthwise(&g, wt));
    free(wt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_depthwise),
        cmocka_unit_test(test_wide_depthwise),
        cmocka_unit_test(test_mobilenet_depthwise),
        cmocka_unit_test(test_depthwise_detection),
        cmocka_unit_test(test_depthwise_from_wide_lines),
        cmocka_unit_test(test_depthwise_from_lines),
        cmocka_unit_test(test_depthwise_from_atoms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
