/*
 * Property tests of RUBIK (reshape engine) on nv_large, through the public
 * API only: random contract (deconvolution reorder), split and merge layers,
 * INT8 / INT16 / FP16, both memory ports, both register groups, random strides
 * with gaps and junk in the dropped low address bits.  Two memory windows
 * (DBB and CVIF) are mirrored on the host and compared byte for byte, gaps
 * included, with a plain element-by-element reference written from the RTL
 * description (vmod/nvdla/rubik/NV_NVDLA_RUBIK_seq_gen.v address counters,
 * NV_NVDLA_RUBIK_rf_ctrl.v byte masks):
 *   contract  out(s, h*sy+dy, w*sx+dx) = in sub-cube (dy*sx+dx) atom (s, h, w),
 *             sub-cube k at DAIN + k * CONTRACT_STRIDE_0; CONTRACT_STRIDE_1
 *             unused by the RTL (random here);
 *   split     plane c line h = lane c%M of surface c/M line h, written as
 *             whole 32-byte atoms, zero after W elements;
 *   merge     the inverse, lanes of channels >= C are zero.
 * Refusals of illegal programming are checked, with the interrupt still
 * raised.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/mirror.h"
#include "common/rng.h"
#include "common/testdev.h"

#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ---------------------------------------------------------------- */

static uint32_t rnd(uint64_t *s, uint32_t n) /* [0, n) */
{
    return splitmix64_below(s, n);
}

/* ---- device and host mirror ------------------------------------------------ */

#define WIN_SIZE (256u * 1024u)
#define HALF (WIN_SIZE / 2u)
#define DBB_BASE 0x80000000ull
#define CVIF_BASE 0x00200000ull

#define DONE0 NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS0__MASK
#define DONE1 NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS1__MASK

static const uint64_t win_base[2] = {DBB_BASE, CVIF_BASE}; /* by enum dlasim_port */

static void world_open(struct world *w, uint64_t *seed)
{
    world_init(w, "nv_large", WIN_SIZE, win_base, seed);
}

/* ---- layer description ------------------------------------------------------ */

enum { CONTRACT = 0, SPLIT = 1, MERGE = 2 };

struct layer {
    uint32_t mode, prec;           /* D_MISC_CFG fields */
    uint32_t w, h, cin, cout, sx, sy;
    int in_port, out_port;
    uint32_t src_off, dst_off;     /* in the windows (src in [0,HALF), dst in [HALF,WIN)) */
    uint32_t in_line, in_surf, in_planar, cube_stride;
    uint32_t out_line, out_surf, out_planar, contract1;
    uint32_t junk;                 /* low address bits the hardware drops */
};

static uint32_t bpe(const struct layer *l)
{
    return l->prec == 0 ? 1u : 2u;
}

static uint32_t epa(const struct layer *l)
{
    return 32u / bpe(l);
}

static uint32_t up32(uint32_t v)
{
    return (v + 31u) & ~31u;
}

static uint32_t surfaces_of(const struct layer *l, uint32_t c)
{
    return (c + epa(l) - 1) / epa(l);
}

static uint32_t gap(uint64_t *seed)
{
    return rnd(seed, 3) ? 32u * rnd(seed, 3) : 0u;
}

/* Bytes spanned by the source and destination areas. */
static uint32_t src_span(const struct layer *l)
{
    switch (l->mode) {
    case CONTRACT:
        return l->sx * l->sy * l->cube_stride;
    case SPLIT:
        return surfaces_of(l, l->cin) * l->in_surf;
    default:
        return l->cin * l->in_planar;
    }
}

static uint32_t dst_span(const struct layer *l)
{
    switch (l->mode) {
    case CONTRACT:
        return surfaces_of(l, l->cout) * l->out_surf;
    case SPLIT:
        return l->cin * l->out_planar;
    default:
        return surfaces_of(l, l->cin) * l->out_surf;
    }
}

static void random_strides(uint64_t *seed, struct layer *l)
{
    uint32_t b = bpe(l);
    if (l->mode == MERGE) {
        l->in_line = up32(l->w * b) + gap(seed);
        l->in_planar = l->h * l->in_line + gap(seed);
    } else {
        l->in_line = l->w * 32u + gap(seed);
        l->in_surf = l->h * l->in_line + gap(seed);
    }
    if (l->mode == CONTRACT) {
        l->cube_stride = surfaces_of(l, l->cout) * l->in_surf + gap(seed);
        l->out_line = l->w * l->sx * 32u + gap(seed);
        l->out_surf = l->h * l->sy * l->out_line + gap(seed);
        /* spec value or junk: the RTL does not read it */
        l->contract1 = rnd(seed, 2) ? l->sy * l->out_line : 32u * rnd(seed, 1000);
    } else if (l->mode == SPLIT) {
        l->out_line = up32(l->w * b) + gap(seed);
        l->out_planar = l->h * l->out_line + gap(seed);
    } else {
        l->out_line = l->w * 32u + gap(seed);
        l->out_surf = l->h * l->out_line + gap(seed);
    }
    /* unused strides of the mode get junk: they must not matter */
    if (l->mode != MERGE) {
        l->in_planar = 32u * rnd(seed, 100);
    } else {
        l->in_surf = 32u * rnd(seed, 100);
    }
    if (l->mode != CONTRACT) {
        l->cube_stride = 32u * rnd(seed, 100);
        l->contract1 = 32u * rnd(seed, 100);
    }
    if (l->mode != SPLIT) {
        l->out_planar = 32u * rnd(seed, 100);
    } else {
        l->out_surf = 32u * rnd(seed, 100);
    }
}

/* A random legal layer whose areas fit the windows. */
static void random_layer(uint64_t *seed, uint32_t mode, struct layer *l)
{
    for (;;) {
        memset(l, 0, sizeof(*l));
        l->mode = mode;
        l->prec = rnd(seed, 3); /* INT8, INT16, FP16 */
        l->w = 1 + (rnd(seed, 4) ? rnd(seed, 20) : rnd(seed, 150)); /* past 64-element chunks */
        l->h = 1 + rnd(seed, 4);
        l->sx = 1;
        l->sy = 1;
        if (mode == CONTRACT) {
            l->cout = 1 + rnd(seed, 70);
            l->sx = 1 + (rnd(seed, 3) ? rnd(seed, 4) : rnd(seed, 12)); /* > 8 too */
            l->sy = 1 + rnd(seed, 3);
            l->cin = 1 + rnd(seed, 8191); /* not used by contract */
        } else {
            l->cin = 1 + (rnd(seed, 2) ? rnd(seed, 40) : rnd(seed, 70));
            /* DATAOUT_CHANNEL: same surface count, any value within it */
            uint32_t s = surfaces_of(l, l->cin);
            l->cout = (s - 1) * epa(l) + 1 + rnd(seed, epa(l));
        }
        l->in_port = (int)rnd(seed, 2);
        l->out_port = (int)rnd(seed, 2);
        l->junk = rnd(seed, 32);
        random_strides(seed, l);
        uint32_t ss = src_span(l), ds = dst_span(l);
        if (ss > HALF || ds > HALF) {
            continue;
        }
        l->src_off = 32u * rnd(seed, (HALF - ss) / 32u + 1u);
        l->dst_off = HALF + 32u * rnd(seed, (HALF - ds) / 32u + 1u);
        return;
    }
}

/* NVDLA RAM type encoding: 0 = CVIF, 1 = MCIF (DBB). */
static uint32_t ram_type(int port)
{
    return port == DLASIM_PORT_CVIF ? 0u : 1u;
}

/* Program the producer group (everything but OP_EN). */
static void program(struct dlasim_dev *dev, const struct layer *l)
{
    uint64_t src = win_base[l->in_port] + l->src_off;
    uint64_t dst = win_base[l->out_port] + l->dst_off;
    uint32_t j = l->junk;
    wr(dev, NVDLA_RBK_D_MISC_CFG_0,
       NVDLA_RBK_D_MISC_CFG_0_RUBIK_MODE(l->mode) | NVDLA_RBK_D_MISC_CFG_0_IN_PRECISION(l->prec));
    wr(dev, NVDLA_RBK_D_DAIN_RAM_TYPE_0, ram_type(l->in_port));
    wr(dev, NVDLA_RBK_D_DATAIN_SIZE_0_0,
       NVDLA_RBK_D_DATAIN_SIZE_0_0_DATAIN_WIDTH(l->w - 1) |
           NVDLA_RBK_D_DATAIN_SIZE_0_0_DATAIN_HEIGHT(l->h - 1));
    wr(dev, NVDLA_RBK_D_DATAIN_SIZE_1_0, l->cin - 1);
    wr(dev, NVDLA_RBK_D_DAIN_ADDR_HIGH_0, (uint32_t)(src >> 32));
    wr(dev, NVDLA_RBK_D_DAIN_ADDR_LOW_0, (uint32_t)src | j);
    wr(dev, NVDLA_RBK_D_DAIN_LINE_STRIDE_0, l->in_line | j);
    wr(dev, NVDLA_RBK_D_DAIN_SURF_STRIDE_0, l->in_surf | (31u - j));
    wr(dev, NVDLA_RBK_D_DAIN_PLANAR_STRIDE_0, l->in_planar | j);
    wr(dev, NVDLA_RBK_D_DAOUT_RAM_TYPE_0, ram_type(l->out_port));
    wr(dev, NVDLA_RBK_D_DATAOUT_SIZE_1_0, l->cout - 1);
    wr(dev, NVDLA_RBK_D_DAOUT_ADDR_HIGH_0, (uint32_t)(dst >> 32));
    wr(dev, NVDLA_RBK_D_DAOUT_ADDR_LOW_0, (uint32_t)dst | (31u - j));
    wr(dev, NVDLA_RBK_D_DAOUT_LINE_STRIDE_0, l->out_line | j);
    wr(dev, NVDLA_RBK_D_CONTRACT_STRIDE_0_0, l->cube_stride | j);
    wr(dev, NVDLA_RBK_D_CONTRACT_STRIDE_1_0, l->contract1);
    wr(dev, NVDLA_RBK_D_DAOUT_SURF_STRIDE_0, l->out_surf | j);
    wr(dev, NVDLA_RBK_D_DAOUT_PLANAR_STRIDE_0, l->out_planar | (31u - j));
    wr(dev, NVDLA_RBK_D_DECONV_STRIDE_0,
       NVDLA_RBK_D_DECONV_STRIDE_0_DECONV_X_STRIDE(l->sx - 1) |
           NVDLA_RBK_D_DECONV_STRIDE_0_DECONV_Y_STRIDE(l->sy - 1));
}

/* ---- reference ----------------------------------------------------------------- */

static void reference(struct world *w, const struct layer *l)
{
    const uint8_t *in = w->mirror[l->in_port] + l->src_off;
    uint8_t *out = w->mirror[l->out_port] + l->dst_off;
    uint32_t b = bpe(l), m = epa(l);
    if (l->mode == CONTRACT) {
        for (uint32_t s = 0; s < surfaces_of(l, l->cout); s++) {
            for (uint32_t y = 0; y < l->h * l->sy; y++) {
                for (uint32_t x = 0; x < l->w * l->sx; x++) {
                    uint32_t k = (y % l->sy) * l->sx + x % l->sx;
                    for (uint32_t i = 0; i < 32; i++) {
                        out[s * l->out_surf + y * l->out_line + x * 32 + i] =
                            in[k * l->cube_stride + s * l->in_surf + (y / l->sy) * l->in_line +
                               (x / l->sx) * 32 + i];
                    }
                }
            }
        }
        return;
    }
    /* split and merge: channel c of pixel (x, y), byte i of the element */
    for (uint32_t c = 0; c < surfaces_of(l, l->cin) * m; c++) {
        for (uint32_t y = 0; y < l->h; y++) {
            uint32_t plane_line = up32(l->w * b);
            for (uint32_t x = 0; x < plane_line / b; x++) {
                for (uint32_t i = 0; i < b; i++) {
                    uint32_t cube = (c / m) * (l->mode == SPLIT ? l->in_surf : l->out_surf) +
                                    y * (l->mode == SPLIT ? l->in_line : l->out_line) + x * 32 +
                                    (c % m) * b + i;
                    uint32_t plane = c * (l->mode == SPLIT ? l->out_planar : l->in_planar) +
                                     y * (l->mode == SPLIT ? l->out_line : l->in_line) + x * b + i;
                    int real = c < l->cin && x < l->w;
                    if (l->mode == SPLIT && c < l->cin) {
                        out[plane] = real ? in[cube] : 0; /* padding of the last atom */
                    } else if (l->mode == MERGE && x < l->w) {
                        out[cube] = real ? in[plane] : 0; /* lanes of channels >= C */
                    }
                }
            }
        }
    }
}

/* ---- tests ------------------------------------------------------------------------ */

static void run_random(uint64_t seed, uint32_t mode, int rounds)
{
    struct world w;
    world_open(&w, &seed);
    for (int r = 0; r < rounds; r++) {
        struct layer l[2];
        /* one layer per register group, sources apart, destinations apart */
        random_layer(&seed, mode, &l[0]);
        random_layer(&seed, rnd(&seed, 4) ? mode : rnd(&seed, 3), &l[1]);
        for (int g = 0; g < 2; g++) {
            wr(w.dev, NVDLA_RBK_S_POINTER_0, (uint32_t)g);
            program(w.dev, &l[g]);
            wr(w.dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
        }
        assert_int_equal(dlasim_step(w.dev), 1);
        reference(&w, &l[0]);
        world_check(&w, "group 0");
        assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0);
        assert_int_equal(dlasim_step(w.dev), 1);
        reference(&w, &l[1]);
        world_check(&w, "group 1");
        assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0 | DONE1);
        assert_int_equal(rd(w.dev, NVDLA_RBK_S_STATUS_0), 0); /* both idle */
        wr(w.dev, NVDLA_GLB_S_INTR_STATUS_0, DONE0 | DONE1);
        wr(w.dev, NVDLA_RBK_S_POINTER_0, 0);
    }
    world_free(&w);
}

RUN_TEST(test_contract, run_random, 0x7b1c0001u, CONTRACT, 40)
RUN_TEST(test_split, run_random, 0x7b1c0002u, SPLIT, 40)
RUN_TEST(test_merge, run_random, 0x7b1c0003u, MERGE, 40)

/* Split then merge restores the cube (gaps and lanes >= C aside). */
static void test_split_merge_round_trip(void **state)
{
    (void)state;
    uint64_t seed = 0x7b1c0004u;
    struct world w;
    world_open(&w, &seed);
    struct layer s;
    random_layer(&seed, SPLIT, &s);
    struct layer m = s;
    m.mode = MERGE;
    m.in_port = s.out_port;
    m.src_off = s.dst_off;
    m.in_line = s.out_line;
    m.in_planar = s.out_planar;
    m.out_port = s.in_port;
    m.dst_off = s.src_off;
    m.out_line = s.in_line;
    m.out_surf = s.in_surf;
    program(w.dev, &s);
    wr(w.dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
    wr(w.dev, NVDLA_RBK_S_POINTER_0, 1);
    program(w.dev, &m);
    wr(w.dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
    assert_int_equal(dlasim_run(w.dev), 0);
    uint8_t *cube = malloc(HALF);
    assert_non_null(cube);
    assert_int_equal(dlasim_mem_read(w.dev, (enum dlasim_port)s.in_port, win_base[s.in_port],
                                     cube, HALF), 0);
    uint32_t lanes = epa(&s), b = bpe(&s);
    for (uint32_t c = 0; c < s.cin; c++) {
        for (uint32_t y = 0; y < s.h; y++) {
            for (uint32_t x = 0; x < s.w; x++) {
                for (uint32_t i = 0; i < b; i++) {
                    uint32_t off = s.src_off + (c / lanes) * s.in_surf + y * s.in_line +
                                   x * 32 + (c % lanes) * b + i;
                    assert_int_equal(cube[off], w.mirror[s.in_port][off]);
                }
            }
        }
    }
    free(cube);
    world_free(&w);
}

/* Refused programming: DLASIM_ERR_PROG naming the field, destination
 * untouched, the layer completes with its interrupt. */
static void expect_refusal(struct layer *l, const char *field)
{
    uint64_t seed = 0x7b1c0005u;
    struct world w;
    world_open(&w, &seed);
    program(w.dev, l);
    wr(w.dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
    assert_int_equal(dlasim_step(w.dev), DLASIM_ERR_PROG);
    assert_non_null(strstr(dlasim_last_error(w.dev), "RUBIK"));
    assert_non_null(strstr(dlasim_last_error(w.dev), field));
    assert_int_equal(rd(w.dev, NVDLA_GLB_S_INTR_STATUS_0), DONE0);
    assert_int_equal(rd(w.dev, NVDLA_RBK_S_STATUS_0), 0);
    world_check(&w, "refused layer");
    world_free(&w);
}

static void test_refusals(void **state)
{
    (void)state;
    uint64_t seed = 0x7b1c0006u;
    struct layer l;

    random_layer(&seed, MERGE, &l);
    l.mode = 3;
    expect_refusal(&l, "RUBIK_MODE=3");

    random_layer(&seed, SPLIT, &l);
    l.prec = 3;
    expect_refusal(&l, "IN_PRECISION=3");

    random_layer(&seed, SPLIT, &l);
    l.prec = 0;
    l.cin = 33; /* 2 surfaces of 32 */
    l.cout = 32; /* 1 surface */
    expect_refusal(&l, "DATAOUT_CHANNEL");

    random_layer(&seed, MERGE, &l);
    l.prec = 1;
    l.cin = 16;
    l.cout = 17;
    expect_refusal(&l, "DATAIN_CHANNEL");

    random_layer(&seed, CONTRACT, &l);
    l.w = 1025; /* 1025 x 8 atoms in one output line > 8192 */
    l.sx = 8;
    expect_refusal(&l, "DECONV_X_STRIDE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_split_merge_round_trip),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
