/*
 * The layer observer (include/dlasim/layer.h) and the public convolution
 * kernel (include/dlasim/kernel.h), through the public API only.
 *
 * Observer: a convolution planned and programmed with the driver-side API
 * (include/dlasim/conv.h) is reported once per hardware layer with the
 * geometry the plan programmed (bands of output rows, banks, MACs); with the
 * cycle model on, the observer's MACs are the timing layer's (one decode);
 * NULL is refused (rk3588's reports: tests/device/test_rk3588.c).
 * Kernel: the fast kernel, the reference and every instruction set this CPU
 * runs agree with a naive loop written here; bad geometry is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dlasim/conv.h"
#include "dlasim/dlasim.h"
#include "dlasim/kernel.h"
#include "dlasim/layer.h"
#include "dlasim/timing.h"

#define MAX_SEEN 64

struct seen {
    size_t n;
    struct dlasim_layer_info l[MAX_SEEN];
};

static void record(void *opaque, const struct dlasim_layer_info *li)
{
    struct seen *s = opaque;
    if (s->n < MAX_SEEN) {
        s->l[s->n] = *li;
    }
    s->n++;
}

static struct dlasim_dev *device(int timing)
{
    struct dlasim_options o;
    struct dlasim_dev *dev = NULL;
    memset(&o, 0, sizeof(o));
    o.timing = timing;
    assert_int_equal(dlasim_create(&o, &dev, NULL, 0), 0);
    return dev;
}

/* 64x256x64 input (more than nv_small's CBUF holds: several bands of
 * output rows), 8 kernels 3x3, stride 2, pad 1: run through the public conv
 * API on dev; the plan in *p (free it). */
static void run_conv(struct dlasim_dev *dev, struct dlasim_conv_plan *p)
{
    struct dlasim_conv_hw hw;
    struct dlasim_conv_desc d;
    struct dlasim_conv_mem m;
    char err[256];
    dlasim_conv_desc_init(&d);
    d.in_w = 64;
    d.in_h = 256;
    d.in_c = 64;
    d.kernels = 8;
    d.kernel_w = d.kernel_h = 3;
    d.stride_x = d.stride_y = 2;
    d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = 1;
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    assert_int_equal(dlasim_conv_plan(&hw, &d, p, err, sizeof(err)), 0);
    int8_t *in = calloc((size_t)d.in_w * d.in_h * d.in_c, 1);
    int8_t *wt = calloc((size_t)d.kernels * d.in_c * 9, 1);
    assert_non_null(in);
    assert_non_null(wt);
    memset(&m, 0, sizeof(m));
    m.input = 0x10000000u;
    m.weights = 0x20000000u;
    m.output = 0x30000000u;
    assert_int_equal(dlasim_conv_write_input(dev, p, &m, in), 0);
    assert_int_equal(dlasim_conv_write_weights(dev, p, &m, wt), 0);
    assert_int_equal(dlasim_conv_run(dev, p, &m), 0);
    free(in);
    free(wt);
}

static void test_observer_reports_the_planned_layers(void **state)
{
    (void)state;
    struct dlasim_dev *dev = device(0);
    struct dlasim_conv_plan p;
    struct seen s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(dlasim_set_layer_observer(dev, record, &s), 0);
    run_conv(dev, &p);
    assert_true(p.n_layers > 1);
    assert_int_equal(s.n, p.n_layers);
    for (size_t i = 0; i < p.n_layers && i < MAX_SEEN; i++) {
        const struct dlasim_layer_info *l = &s.l[i];
        assert_string_equal(l->kind, "conv");
        assert_int_equal(l->index, i + 1);
        assert_int_equal(l->status, 0);
        assert_int_equal(l->out_w, p.out_w);
        assert_int_equal(l->out_h, p.layers[i].out_h);
        assert_int_equal(l->out_k, 8);
        assert_int_equal(l->in_c, 64);
        assert_int_equal(l->k_w, 3);
        assert_int_equal(l->k_h, 3);
        assert_int_equal(l->stride_x, 2);
        assert_int_equal(l->stride_y, 2);
        assert_int_equal(l->dil_x, 1);
        assert_int_equal(l->dil_y, 1);
        assert_int_equal(l->batches, 1);
        assert_int_equal(l->data_banks, p.layers[i].data_bank);
        assert_int_equal(l->weight_banks, p.weight_bank);
        assert_int_equal(l->macs, (uint64_t)p.out_w * p.layers[i].out_h * 8 * 64 * 9);
    }
    /* switched off: no more calls */
    size_t before = s.n;
    assert_int_equal(dlasim_set_layer_observer(dev, NULL, NULL), 0);
    struct dlasim_conv_plan q;
    run_conv(dev, &q);
    assert_int_equal(s.n, before);
    dlasim_conv_plan_free(&p);
    dlasim_conv_plan_free(&q);
    dlasim_destroy(dev);
}

static void test_observer_and_timing_share_one_decode(void **state)
{
    (void)state;
    struct dlasim_dev *dev = device(1);
    struct dlasim_conv_plan p;
    struct seen s;
    memset(&s, 0, sizeof(s));
    assert_int_equal(dlasim_set_layer_observer(dev, record, &s), 0);
    run_conv(dev, &p);
    assert_int_equal(dlasim_timing_layer_count(dev), s.n);
    for (size_t i = 0; i < s.n && i < MAX_SEEN; i++) {
        struct dlasim_timing_layer t;
        assert_int_equal(dlasim_timing_layer_get(dev, i, &t), 0);
        assert_int_equal(t.index, s.l[i].index);
        assert_string_equal(t.kind, s.l[i].kind);
        assert_int_equal(t.macs, s.l[i].macs);
    }
    dlasim_conv_plan_free(&p);
    dlasim_destroy(dev);
}

static void test_observer_refusals(void **state)
{
    (void)state;
    struct seen s;
    assert_int_equal(dlasim_set_layer_observer(NULL, record, &s), DLASIM_ERR_INVAL);
}

/* ---- the kernel ------------------------------------------------------------------ */

static uint64_t rng = 0x5eed0000cafe0001ull;

static int8_t rnd8(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int8_t)(uint8_t)(rng >> 56);
}

/* The definition, written out: out[k][y][x] = sum over c, ky, kx (mod 2^32). */
static void naive(const struct dlasim_conv_geom *g, const int8_t *in, const int8_t *wt,
                  int32_t *out)
{
    for (uint32_t k = 0; k < g->out_k; k++) {
        for (uint32_t y = 0; y < g->out_h; y++) {
            for (uint32_t x = 0; x < g->out_w; x++) {
                uint32_t acc = 0;
                for (uint32_t c = 0; c < g->in_c; c++) {
                    for (uint32_t ky = 0; ky < g->k_h; ky++) {
                        for (uint32_t kx = 0; kx < g->k_w; kx++) {
                            uint32_t iy = y * g->stride_y + ky * g->dil_y;
                            uint32_t ix = x * g->stride_x + kx * g->dil_x;
                            int32_t a = in[((size_t)c * g->in_h + iy) * g->in_w + ix];
                            int32_t b = wt[(((size_t)k * g->in_c + c) * g->k_h + ky) * g->k_w + kx];
                            acc += (uint32_t)(a * b);
                        }
                    }
                }
                memcpy(&out[((size_t)k * g->out_h + y) * g->out_w + x], &acc, 4);
            }
        }
    }
}

static void test_kernel_matches_the_definition(void **state)
{
    (void)state;
    /* 37 channels, 5x3 kernel, stride 2x1, dilation 1x2: no shape a kernel
     * would special-case */
    struct dlasim_conv_geom g = {.in_c = 37, .out_k = 19, .k_w = 5, .k_h = 3, .stride_x = 2,
                                 .stride_y = 1, .dil_x = 1, .dil_y = 2, .out_w = 11, .out_h = 9};
    g.in_w = (g.out_w - 1) * g.stride_x + (g.k_w - 1) * g.dil_x + 1;
    g.in_h = (g.out_h - 1) * g.stride_y + (g.k_h - 1) * g.dil_y + 1;
    size_t nin = (size_t)g.in_c * g.in_h * g.in_w, nwt = (size_t)g.out_k * g.in_c * 15;
    size_t nout = (size_t)g.out_k * g.out_h * g.out_w;
    int8_t *in = malloc(nin), *wt = malloc(nwt);
    int32_t *want = malloc(nout * 4), *got = malloc(nout * 4);
    assert_true(in && wt && want && got);
    for (size_t i = 0; i < nin; i++) {
        in[i] = rnd8();
    }
    for (size_t i = 0; i < nwt; i++) {
        wt[i] = rnd8();
    }
    naive(&g, in, wt, want);
    assert_int_equal(dlasim_conv_s8_ref(&g, in, wt, got), 0);
    assert_memory_equal(got, want, nout * 4);
    memset(got, 0x55, nout * 4);
    assert_int_equal(dlasim_conv_s8(&g, in, wt, got, 2), 0);
    assert_memory_equal(got, want, nout * 4);
    unsigned isas = 0;
    for (unsigned i = 0; dlasim_conv_s8_isa_name(i); i++, isas++) {
        memset(got, 0x55, nout * 4);
        int rc = dlasim_conv_s8_on_isa(i, &g, in, wt, got, 2);
        if (rc == DLASIM_ERR_UNSUPPORTED) {
            continue; /* this CPU cannot run it */
        }
        assert_int_equal(rc, 0);
        assert_memory_equal(got, want, nout * 4);
    }
    assert_true(isas >= 1);
    assert_string_equal(dlasim_conv_s8_isa_name(0), "generic");
    assert_int_equal(dlasim_conv_s8_on_isa(isas, &g, in, wt, got, 1), DLASIM_ERR_INVAL);
    assert_non_null(dlasim_conv_s8_isa());

    /* a window past the input's edge */
    g.in_w--;
    assert_int_equal(dlasim_conv_s8_ref(&g, in, wt, got), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_s8(&g, in, wt, got, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_s8_on_isa(0, &g, in, wt, got, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_s8_ref(NULL, in, wt, got), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_s8(NULL, in, wt, got, 1), DLASIM_ERR_INVAL);
    free(in);
    free(wt);
    free(want);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_observer_reports_the_planned_layers),
        cmocka_unit_test(test_observer_and_timing_share_one_decode),
        cmocka_unit_test(test_observer_refusals),
        cmocka_unit_test(test_kernel_matches_the_definition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
