/*
 * Property tests of CDP (local response normalization) with CDP_RDMA.
 *
 * Random layers are programmed through the public API only (CSB writes with
 * the generated NVDLA_* addresses, including the LUT access port; memory
 * through dlasim_mem_write/read) and compared byte for byte, over the whole
 * destination area (gaps between lines and surfaces included), with a plain
 * reference written here from NVDLA's RTL description:
 *   cvtin  (x - offset[7:0]) * scale, shifted right with the rounding and
 *          saturation of NV_NVDLA_HLS_shiftrightsu (guide/sticky bits)
 *   sum    squares over the LRN window, zero outside the padded channels
 *   LUT    LUT_CTRL_unit.v index/flags, DP_lut.v selection table,
 *          INTP_unit.v interpolation (40-bit sub, 57-bit product, 32-bit
 *          fraction rounding)
 *   mul / cvtout, whole atoms written back.
 * The perf counters (D_PERF_LUT_*) are checked against the reference's
 * tallies, D_OUT_SATURATION and the NaN counters must read 0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/testdev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ---------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    return splitmix64_next(s);
}

static uint32_t rnd(uint64_t *s, uint32_t n) /* [0, n) */
{
    return splitmix64_below(s, n);
}

static int32_t rnd_range(uint64_t *s, int32_t lo, int32_t hi) /* [lo, hi] */
{
    return lo + (int32_t)rnd(s, (uint32_t)(hi - lo + 1));
}

/* ---- layer description ------------------------------------------------ */

#define ATOM 8u          /* Atomic-M of nv_small and nv_small_256 */
#define SRC_BASE 0x80000000ull
#define DST_BASE 0x80400000ull

struct layer {
    uint32_t w, h, c;
    uint32_t src_line, src_surf, dst_line, dst_surf;
    uint64_t src, dst;
    uint32_t normalz_len, sqsum_bypass, mul_bypass;
    uint32_t datin_offset, datin_scale, datin_shifter;
    uint32_t datout_offset, datout_scale, datout_shifter;
    /* LUT (single registers) */
    uint32_t lut_cfg, lut_info;
    uint32_t le_start_lo, le_start_hi, le_end_lo, le_end_hi;
    uint32_t lo_start_lo, lo_start_hi, lo_end_lo, lo_end_hi;
    uint32_t le_slope_scale, le_slope_shift, lo_slope_scale, lo_slope_shift;
    uint16_t le[65], lo[257];
    int visible;   /* test only: LUT output reaches the output unscaled */
};

static uint32_t surfaces(const struct layer *l)
{
    return (l->c + ATOM - 1) / ATOM;
}

static size_t src_size(const struct layer *l)
{
    return (size_t)l->src_surf * surfaces(l);
}

static size_t dst_size(const struct layer *l)
{
    return (size_t)l->dst_surf * surfaces(l);
}

/* ---- reference model ----------------------------------------------------- */

static int64_t sx(uint64_t v, unsigned bits)
{
    uint64_t m = (uint64_t)1 << (bits - 1);
    v &= (((uint64_t)1 << bits) - 1);
    return (int64_t)((v ^ m) - m);
}

/* floor(v / 2^s) and the remainder 0 <= rem < 2^s */
static int64_t floor_div(int64_t v, unsigned s, uint64_t *rem)
{
    int64_t p = (int64_t)1 << s;
    int64_t q = v / p;
    if (v % p != 0 && v < 0) {
        q -= 1;
    }
    *rem = (uint64_t)(v - q * p);
    return q;
}

static int64_t clamp_bits(int64_t v, unsigned bits)
{
    int64_t mx = ((int64_t)1 << (bits - 1)) - 1;
    if (v > mx) {
        return mx;
    }
    if (v < -mx - 1) {
        return -mx - 1;
    }
    return v;
}

/* NV_NVDLA_HLS_shiftrightsu: IN_WIDTH-bit v, round with guide/sticky. */
static int64_t ref_shiftright_su(int64_t v, unsigned s, unsigned in_width, unsigned out_bits)
{
    uint64_t rem;
    int64_t q;
    int guide, sticky, point5;
    if (s >= in_width) {
        return 0;
    }
    q = floor_div(v, s, &rem);
    guide = s > 0 && ((rem >> (s - 1)) & 1);
    sticky = s > 1 && (rem & (((uint64_t)1 << (s - 1)) - 1)) != 0;
    point5 = guide && (v >= 0 || sticky);
    return clamp_bits(q + point5, out_bits);
}

struct ref_side {
    int uf, of;
    uint32_t idx, frac;
};

static void ref_linear(uint64_t dec, unsigned dec_bits, int32_t sel, uint32_t last,
                       struct ref_side *r)
{
    if (sel < 0) {
        uint64_t v = dec << (unsigned)(-sel);
        if (v >= last) {
            r->of = 1;
        } else {
            r->idx = (uint32_t)v;
        }
        return;
    }
    /* {s, f} = {dec, dec_bits zeros} >> sel */
    uint64_t t = (dec << dec_bits) >> (unsigned)sel;
    uint64_t hi = t >> dec_bits;
    uint64_t f = t & (((uint64_t)1 << dec_bits) - 1);
    if (hi >= last) {
        r->of = 1;
    } else {
        r->idx = (uint32_t)hi;
        r->frac = (uint32_t)(f >> (dec_bits - 16));
    }
}

/* INTP_unit.v */
static int32_t ref_interp(int64_t in0, int64_t in1, int64_t y0, int64_t scale, int shift)
{
    int64_t mul = (in1 - in0) * scale;
    int64_t rs;
    if (shift < 0) {
        unsigned k = (unsigned)(-shift);
        int64_t mag = mul < 0 ? -mul : mul;
        if (mag != 0 && (mag >> (61 - k)) != 0) {
            return mul < 0 ? -32768 : 32767;
        }
        rs = mul * ((int64_t)1 << k);
    } else {
        uint64_t rem;
        int64_t q = floor_div(mul, (unsigned)shift, &rem);
        /* 32-bit fraction below the integer part */
        uint64_t frac32 = shift == 0 ? 0 : (rem << (32 - shift));
        int half = (frac32 >> 31) & 1;
        int rest = (frac32 & 0x7fffffffu) != 0;
        if (q < 0) {
            rs = (half && rest) ? q + 1 : q;
        } else {
            rs = q + half;
        }
    }
    return (int32_t)clamp_bits(rs + y0, 16);
}

enum { C_UF, C_OF, C_HY, C_LE, C_LO, C_N };

static int32_t ref_lut(const struct layer *l, int64_t x, int *cls)
{
    int le_exp = (l->lut_cfg & 1) == 0;
    int uf_lo = (l->lut_cfg >> 4) & 1, of_lo = (l->lut_cfg >> 5) & 1, hy_lo = (l->lut_cfg >> 6) & 1;
    int32_t off = (int32_t)sx(l->lut_info & 0xff, 8);
    int32_t le_sel = (int32_t)sx((l->lut_info >> 8) & 0x3f, 6);
    int32_t lo_sel = (int32_t)sx((l->lut_info >> 16) & 0x3f, 6);
    uint64_t le_start38 = ((uint64_t)(l->le_start_hi & 0x3f) << 32) | l->le_start_lo;
    uint64_t lo_start38 = ((uint64_t)(l->lo_start_hi & 0x3f) << 32) | l->lo_start_lo;
    int64_t le_start22 = sx(le_start38, 22), lo_start22 = sx(lo_start38, 22);
    struct ref_side X = { 0, 0, 0, 0 }, Y = { 0, 0, 0, 0 };
    int code, use_x;

    if (x <= le_start22) {
        X.uf = 1;
    } else if (le_exp) {
        uint64_t dec = (uint64_t)(x - le_start22);
        int i = 21;
        while (!((dec >> i) & 1)) {
            i--;
        }
        uint64_t frac21 = (dec & (((uint64_t)1 << i) - 1)) << (21 - i);
        if (off >= 0 && i < off) {
            X.uf = 1;
        } else if (i - off >= 64) {
            X.of = 1;
        } else {
            X.idx = (uint32_t)(i - off);
            X.frac = (uint32_t)(frac21 >> 5);
        }
    } else {
        ref_linear((uint64_t)(x - le_start22), 23, le_sel, 64, &X);
    }
    if (x <= lo_start22) {
        Y.uf = 1;
    } else {
        ref_linear((uint64_t)(x - lo_start22), 22, lo_sel, 256, &Y);
    }

    code = (X.of << 3) | (X.uf << 2) | (Y.of << 1) | Y.uf;
    switch (code) {
    case 0x0: case 0x6: case 0x9: use_x = !hy_lo; *cls = C_HY; break;
    case 0x1: case 0x2: use_x = 1; *cls = C_LE; break;
    case 0x4: case 0x8: use_x = 0; *cls = C_LO; break;
    case 0x5: use_x = !uf_lo; *cls = C_UF; break;
    case 0xa: use_x = !of_lo; *cls = C_OF; break;
    default: *cls = C_HY; fail_msg("impossible LUT flags %x", code); return 0;
    }

    if (use_x) {
        int64_t y0 = (int16_t)l->le[X.uf ? 0 : X.of ? 64 : X.idx];
        if (X.uf) {
            int64_t base = sx(le_start38, 38);
            if (le_exp && off >= 0 && off < 39) {
                base = sx((uint64_t)base + ((uint64_t)1 << off), 39);
            }
            return ref_interp(base, x, y0, sx(l->le_slope_scale & 0xffff, 16),
                              (int)sx(l->le_slope_shift & 0x1f, 5));
        }
        if (X.of) {
            int64_t end = sx(((uint64_t)(l->le_end_hi & 0x3f) << 32) | l->le_end_lo, 38);
            return ref_interp(end, x, y0, sx(l->le_slope_scale >> 16, 16),
                              (int)sx((l->le_slope_shift >> 5) & 0x1f, 5));
        }
        return ref_interp(y0, (int16_t)l->le[X.idx + 1], y0, X.frac, 16);
    }
    int64_t y0 = (int16_t)l->lo[Y.uf ? 0 : Y.of ? 256 : Y.idx];
    if (Y.uf) {
        return ref_interp(sx(lo_start38, 38), x, y0, sx(l->lo_slope_scale & 0xffff, 16),
                          (int)sx(l->lo_slope_shift & 0x1f, 5));
    }
    if (Y.of) {
        int64_t end = sx(((uint64_t)(l->lo_end_hi & 0x3f) << 32) | l->lo_end_lo, 38);
        return ref_interp(end, x, y0, sx(l->lo_slope_scale >> 16, 16),
                          (int)sx((l->lo_slope_shift >> 5) & 0x1f, 5));
    }
    return ref_interp(y0, (int16_t)l->lo[Y.idx + 1], y0, Y.frac, 16);
}

/* Converted channels v[0..P) of pixel (x, y); lanes beyond C are 0. */
static void ref_pixel_inputs(const struct layer *l, const uint8_t *src, uint32_t x, uint32_t y,
                             int64_t *v)
{
    uint32_t P = surfaces(l) * ATOM;
    int64_t in_off = sx(l->datin_offset & 0xff, 8);
    int64_t in_scale = sx(l->datin_scale, 16);
    for (uint32_t c = 0; c < P; c++) {
        size_t a = (size_t)(c / ATOM) * l->src_surf + (size_t)y * l->src_line +
                   (size_t)x * ATOM + c % ATOM;
        int64_t in = (int8_t)src[a];
        v[c] = c < l->c ? ref_shiftright_su((in - in_off) * in_scale, l->datin_shifter, 25, 9)
                        : 0;
    }
}

/* LUT input of channel c: the windowed square sum or the value itself. */
static int64_t ref_lut_input(const struct layer *l, const int64_t *v, uint32_t c)
{
    int32_t P = (int32_t)(surfaces(l) * ATOM);
    int32_t r = (int32_t)l->normalz_len + 1;
    int64_t sum = 0;
    if (l->sqsum_bypass) {
        return v[c];
    }
    for (int32_t j = (int32_t)c - r; j <= (int32_t)c + r; j++) {
        if (j >= 0 && j < P) {
            sum += v[j] * v[j];
        }
    }
    return sum;
}

/* Every LUT input of the layer (to aim random LUT ranges at them). */
static int64_t *ref_all_inputs(const struct layer *l, const uint8_t *src, size_t *n)
{
    uint32_t P = surfaces(l) * ATOM;
    int64_t *v = calloc(P, sizeof(*v));
    int64_t *xs = calloc((size_t)P * l->w * l->h, sizeof(*xs));
    size_t k = 0;
    assert_non_null(v);
    assert_non_null(xs);
    for (uint32_t y = 0; y < l->h; y++) {
        for (uint32_t x = 0; x < l->w; x++) {
            ref_pixel_inputs(l, src, x, y, v);
            for (uint32_t c = 0; c < P; c++) {
                xs[k++] = ref_lut_input(l, v, c);
            }
        }
    }
    free(v);
    *n = k;
    return xs;
}

/* Whole layer on host copies of the source and destination areas. */
static void ref_layer(const struct layer *l, const uint8_t *src, uint8_t *dst,
                      uint64_t counts[C_N])
{
    uint32_t P = surfaces(l) * ATOM;
    int64_t *v = calloc(P, sizeof(*v));
    int64_t out_off = sx(l->datout_offset & 0x1ffffff, 25);
    int64_t out_scale = sx(l->datout_scale, 16);
    assert_non_null(v);

    for (uint32_t y = 0; y < l->h; y++) {
        for (uint32_t x = 0; x < l->w; x++) {
            ref_pixel_inputs(l, src, x, y, v);
            for (uint32_t c = 0; c < P; c++) {
                int cls = C_N;
                int64_t lut = ref_lut(l, ref_lut_input(l, v, c), &cls);
                int64_t prod = l->mul_bypass ? lut : lut * v[c];
                size_t a = (size_t)(c / ATOM) * l->dst_surf + (size_t)y * l->dst_line +
                           (size_t)x * ATOM + c % ATOM;
                counts[cls]++;
                dst[a] = (uint8_t)ref_shiftright_su((prod - out_off) * out_scale,
                                                    l->datout_shifter, 42, 8);
            }
        }
    }
    free(v);
}

/* ---- random layers --------------------------------------------------------- */

static uint32_t rnd_shift(uint64_t *s, uint32_t max, uint32_t typical)
{
    return rnd(s, 8) == 0 ? rnd(s, max + 1) : rnd(s, typical + 1);
}

static void set38(int64_t v, uint32_t *lo, uint32_t *hi)
{
    *lo = (uint32_t)(uint64_t)v;
    *hi = (uint32_t)((uint64_t)v >> 32) & 0x3f;
}

/* A start somewhere: near the inputs, or anywhere in 38 bits (the range
 * comparators see only 22 of them). */
static int64_t rnd_start(uint64_t *s, const int64_t *xs, size_t n, int64_t span)
{
    switch (rnd(s, 8)) {
    case 0:
        return sx(splitmix64(s), 38);
    case 1:
        return rnd_range(s, -600000, 600000);
    default:
        return xs[rnd(s, (uint32_t)n)] - (int64_t)rnd(s, (uint32_t)(span / 2 + 2));
    }
}

/* Index select giving about `entries` table steps over `span`. */
static uint32_t rnd_select(uint64_t *s, int64_t span, uint32_t entries)
{
    int32_t sel = 0;
    while (sel < 30 && (span >> sel) > (int64_t)entries) {
        sel++;
    }
    sel += rnd_range(s, -2, 2);
    if (sel < -8) {
        sel = -8;
    }
    return ((uint32_t)sel & 0x3f) | (rnd(s, 4) << 6); /* upper bits are ignored */
}

static uint32_t rnd_slope_scale(uint64_t *s, int small)
{
    int32_t r = small ? 12 : 400;
    uint32_t lo = rnd(s, 4) ? (uint32_t)rnd_range(s, -r, r) & 0xffff : rnd(s, 65536);
    uint32_t hi = rnd(s, 4) ? (uint32_t)rnd_range(s, -r, r) & 0xffff : rnd(s, 65536);
    return lo | (hi << 16);
}

static uint32_t rnd_slope_shift(uint64_t *s)
{
    uint32_t u = rnd(s, 4) ? (uint32_t)rnd_range(s, -4, 12) & 0x1f : rnd(s, 32);
    uint32_t o = rnd(s, 4) ? (uint32_t)rnd_range(s, -4, 12) & 0x1f : rnd(s, 32);
    return u | (o << 5);
}

/* LUT contents and configuration aimed at the layer's LUT inputs xs. */
static void random_lut(uint64_t *s, struct layer *l, const int64_t *xs, size_t n)
{
    int64_t mn = xs[0], mx = xs[0], span, start;
    uint32_t off, le_sel, lo_sel;
    for (size_t i = 1; i < n; i++) {
        mn = xs[i] < mn ? xs[i] : mn;
        mx = xs[i] > mx ? xs[i] : mx;
    }
    span = mx - mn + 1;
    for (int i = 0; i < 65; i++) {
        l->le[i] = (uint16_t)splitmix64(s);
    }
    for (int i = 0; i < 257; i++) {
        l->lo[i] = (uint16_t)splitmix64(s);
    }
    if (l->visible) { /* small entries: the LUT output shows in the int8 output */
        for (int i = 0; i < 65; i++) {
            l->le[i] = (uint16_t)(int16_t)rnd_range(s, -140, 140);
        }
        for (int i = 0; i < 257; i++) {
            l->lo[i] = (uint16_t)(int16_t)rnd_range(s, -140, 140);
        }
    } else if (rnd(s, 2) == 0) { /* smooth tables, fewer saturations */
        int32_t a = rnd_range(s, -20000, 20000);
        int32_t da = rnd_range(s, -300, 300), db = rnd_range(s, -80, 80);
        for (int i = 0; i < 65; i++) {
            l->le[i] = (uint16_t)(int16_t)(a + i * da + rnd_range(s, -3, 3));
        }
        for (int i = 0; i < 257; i++) {
            l->lo[i] = (uint16_t)(int16_t)(a + i * db + rnd_range(s, -3, 3));
        }
    }
    l->lut_cfg = rnd(s, 2) | (rnd(s, 2) << 4) | (rnd(s, 2) << 5) | (rnd(s, 2) << 6);
    le_sel = rnd_select(s, span, rnd_range(s, 8, 90));
    lo_sel = rnd_select(s, span, rnd_range(s, 30, 350));
    start = rnd_start(s, xs, n, span);
    set38(start, &l->le_start_lo, &l->le_start_hi);
    off = (uint32_t)rnd_range(s, -6, 18) & 0xff;
    if ((l->lut_cfg & 1) == 0) { /* exponent LE: offset near log2 of the range */
        int32_t lg = 0;
        while (lg < 40 && ((mx - start) >> lg) > 1) {
            lg++;
        }
        /* either the top of the range near index 0..8, or near index 64 */
        off = (uint32_t)(lg - (rnd(s, 3) ? rnd_range(s, -2, 8) : rnd_range(s, 61, 66))) & 0xff;
    }
    if (rnd(s, 10) == 0) {
        off = rnd(s, 256);
    }
    if (rnd(s, 12) == 0) {
        le_sel = rnd(s, 256);
        lo_sel = rnd(s, 256);
    }
    l->lut_info = off | (le_sel << 8) | (lo_sel << 16);
    set38(rnd(s, 3) ? mx - (int64_t)rnd(s, (uint32_t)(span / 3 + 2)) : rnd_start(s, xs, n, span),
          &l->le_end_lo, &l->le_end_hi);
    set38(rnd_start(s, xs, n, span), &l->lo_start_lo, &l->lo_start_hi);
    set38(rnd(s, 3) ? mx - (int64_t)rnd(s, (uint32_t)(span / 3 + 2)) : rnd_start(s, xs, n, span),
          &l->lo_end_lo, &l->lo_end_hi);
    l->le_slope_scale = rnd_slope_scale(s, l->visible);
    l->lo_slope_scale = rnd_slope_scale(s, l->visible);
    l->le_slope_shift = rnd_slope_shift(s);
    l->lo_slope_shift = rnd_slope_shift(s);
}

/* Random layer, memory filled, LUT aimed at its inputs. */
static void random_layer(uint64_t *s, struct layer *l);
static uint8_t *fill_memory(struct dlasim_dev *dev, uint64_t *s, const struct layer *l,
                            uint8_t **dst_init);

/* LUT ranges aimed at the layer's LUT inputs for source bytes src. */
static void aim_lut(uint64_t *s, struct layer *l, const uint8_t *src)
{
    size_t n;
    int64_t *xs = ref_all_inputs(l, src, &n);
    random_lut(s, l, xs, n);
    free(xs);
}

static uint8_t *setup_random(struct dlasim_dev *dev, uint64_t *s, struct layer *l,
                             uint8_t **dst_init)
{
    random_layer(s, l);
    uint8_t *src = fill_memory(dev, s, l, dst_init);
    aim_lut(s, l, src);
    return src;
}

static void random_layer(uint64_t *s, struct layer *l)
{
    memset(l, 0, sizeof(*l));
    l->w = 1 + rnd(s, 9);
    l->h = 1 + rnd(s, 4);
    l->c = 1 + rnd(s, rnd(s, 4) == 0 ? 90 : 40);
    l->src_line = (l->w + rnd(s, 3)) * ATOM;
    l->src_surf = l->h * l->src_line + rnd(s, 3) * ATOM;
    l->dst_line = (l->w + rnd(s, 3)) * ATOM;
    l->dst_surf = l->h * l->dst_line + rnd(s, 3) * ATOM;
    l->src = SRC_BASE + rnd(s, 64) * ATOM;
    l->dst = DST_BASE + rnd(s, 64) * ATOM;
    l->normalz_len = rnd(s, 4);
    l->sqsum_bypass = rnd(s, 5) == 0;
    l->mul_bypass = rnd(s, 3) == 0;
    l->datin_offset = (uint32_t)splitmix64(s) & 0xffff;
    l->datin_scale = rnd(s, 3) ? (uint32_t)rnd_range(s, -4, 8) & 0xffff : rnd(s, 65536);
    l->datin_shifter = rnd_shift(s, 31, 6);
    l->datout_offset = rnd(s, 3) ? (uint32_t)rnd_range(s, -3000, 3000) : (uint32_t)splitmix64(s);
    l->datout_scale = rnd(s, 3) ? (uint32_t)rnd_range(s, -8, 8) & 0xffff : rnd(s, 65536);
    l->datout_shifter = rnd(s, 6) == 0 ? rnd(s, 64) : (uint32_t)rnd_range(s, 4, 24);
    l->visible = rnd(s, 2) == 0;
    if (l->visible) { /* output = LUT output - small offset */
        l->mul_bypass = 1;
        l->datout_offset = (uint32_t)rnd_range(s, -20, 20);
        l->datout_scale = 1;
        l->datout_shifter = rnd(s, 4) ? 0 : rnd(s, 3);
    }
}

/* ---- programming through the public API ------------------------------------ */

static void program_lut(struct dlasim_dev *dev, const struct layer *l)
{
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_CFG_0, (1u << 17) | (0u << 16));
    for (int i = 0; i < 65; i++) {
        wr(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0, l->le[i]);
    }
    wr(dev, NVDLA_CDP_S_LUT_ACCESS_CFG_0, (1u << 17) | (1u << 16));
    for (int i = 0; i < 257; i++) {
        wr(dev, NVDLA_CDP_S_LUT_ACCESS_DATA_0, l->lo[i]);
    }
    wr(dev, NVDLA_CDP_S_LUT_CFG_0, l->lut_cfg);
    wr(dev, NVDLA_CDP_S_LUT_INFO_0, l->lut_info);
    wr(dev, NVDLA_CDP_S_LUT_LE_START_LOW_0, l->le_start_lo);
    wr(dev, NVDLA_CDP_S_LUT_LE_START_HIGH_0, l->le_start_hi);
    wr(dev, NVDLA_CDP_S_LUT_LE_END_LOW_0, l->le_end_lo);
    wr(dev, NVDLA_CDP_S_LUT_LE_END_HIGH_0, l->le_end_hi);
    wr(dev, NVDLA_CDP_S_LUT_LO_START_LOW_0, l->lo_start_lo);
    wr(dev, NVDLA_CDP_S_LUT_LO_START_HIGH_0, l->lo_start_hi);
    wr(dev, NVDLA_CDP_S_LUT_LO_END_LOW_0, l->lo_end_lo);
    wr(dev, NVDLA_CDP_S_LUT_LO_END_HIGH_0, l->lo_end_hi);
    wr(dev, NVDLA_CDP_S_LUT_LE_SLOPE_SCALE_0, l->le_slope_scale);
    wr(dev, NVDLA_CDP_S_LUT_LE_SLOPE_SHIFT_0, l->le_slope_shift);
    wr(dev, NVDLA_CDP_S_LUT_LO_SLOPE_SCALE_0, l->lo_slope_scale);
    wr(dev, NVDLA_CDP_S_LUT_LO_SLOPE_SHIFT_0, l->lo_slope_shift);
}

/* Program the dual registers of group g (producer pointer) and enable. */
static void program_layer(struct dlasim_dev *dev, const struct layer *l, unsigned g,
                          uint32_t rdma_fmt, uint32_t dp_fmt)
{
    wr(dev, NVDLA_CDP_RDMA_S_POINTER_0, g);
    wr(dev, NVDLA_CDP_S_POINTER_0, g);
    wr(dev, NVDLA_CDP_RDMA_D_DATA_CUBE_WIDTH_0, l->w - 1);
    wr(dev, NVDLA_CDP_RDMA_D_DATA_CUBE_HEIGHT_0, l->h - 1);
    wr(dev, NVDLA_CDP_RDMA_D_DATA_CUBE_CHANNEL_0, l->c - 1);
    wr(dev, NVDLA_CDP_RDMA_D_SRC_BASE_ADDR_LOW_0, (uint32_t)l->src);
    wr(dev, NVDLA_CDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, (uint32_t)(l->src >> 32));
    wr(dev, NVDLA_CDP_RDMA_D_SRC_LINE_STRIDE_0, l->src_line);
    wr(dev, NVDLA_CDP_RDMA_D_SRC_SURFACE_STRIDE_0, l->src_surf);
    wr(dev, NVDLA_CDP_RDMA_D_SRC_DMA_CFG_0, NVDLA_CDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE_MC);
    wr(dev, NVDLA_CDP_RDMA_D_DATA_FORMAT_0, rdma_fmt);
    wr(dev, NVDLA_CDP_D_DATA_FORMAT_0, dp_fmt);
    wr(dev, NVDLA_CDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)l->dst);
    wr(dev, NVDLA_CDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(l->dst >> 32));
    wr(dev, NVDLA_CDP_D_DST_LINE_STRIDE_0, l->dst_line);
    wr(dev, NVDLA_CDP_D_DST_SURFACE_STRIDE_0, l->dst_surf);
    wr(dev, NVDLA_CDP_D_DST_DMA_CFG_0, NVDLA_CDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(dev, NVDLA_CDP_D_LRN_CFG_0, l->normalz_len);
    wr(dev, NVDLA_CDP_D_FUNC_BYPASS_0, l->sqsum_bypass | (l->mul_bypass << 1));
    wr(dev, NVDLA_CDP_D_DATIN_OFFSET_0, l->datin_offset);
    wr(dev, NVDLA_CDP_D_DATIN_SCALE_0, l->datin_scale);
    wr(dev, NVDLA_CDP_D_DATIN_SHIFTER_0, l->datin_shifter);
    wr(dev, NVDLA_CDP_D_DATOUT_OFFSET_0, l->datout_offset);
    wr(dev, NVDLA_CDP_D_DATOUT_SCALE_0, l->datout_scale);
    wr(dev, NVDLA_CDP_D_DATOUT_SHIFTER_0, l->datout_shifter);
    wr(dev, NVDLA_CDP_D_PERF_ENABLE_0, 3);
    wr(dev, NVDLA_CDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_CDP_D_OP_ENABLE_0, 1);
}

/* Random source data, a sentinel in the destination area. */
static uint8_t *fill_memory(struct dlasim_dev *dev, uint64_t *s, const struct layer *l,
                            uint8_t **dst_init)
{
    size_t ns = src_size(l), nd = dst_size(l);
    uint8_t *src = malloc(ns);
    uint8_t *dst = malloc(nd);
    assert_non_null(src);
    assert_non_null(dst);
    splitmix64_fill(s, src, ns);
    memset(dst, 0xa5, nd);
    mem_wr(dev, l->src, src, ns);
    mem_wr(dev, l->dst, dst, nd);
    *dst_init = dst;
    return src;
}

static void check_output(struct dlasim_dev *dev, const struct layer *l, const uint8_t *expect,
                         unsigned seed_id)
{
    size_t nd = dst_size(l);
    uint8_t *got = malloc(nd);
    assert_non_null(got);
    mem_rd(dev, l->dst, got, nd);
    for (size_t i = 0; i < nd; i++) {
        if (got[i] != expect[i]) {
            fail_msg("layer %u (%ux%ux%u len=%u byp=%u/%u lutcfg=%x info=%x): dst+0x%zx = %02x, "
                     "expected %02x",
                     seed_id, l->w, l->h, l->c, l->normalz_len, l->sqsum_bypass, l->mul_bypass,
                     l->lut_cfg, l->lut_info, i, got[i], expect[i]);
        }
    }
    free(got);
}

static void check_counters(struct dlasim_dev *dev, unsigned g, const uint64_t counts[C_N])
{
    wr(dev, NVDLA_CDP_S_POINTER_0, g);
    assert_int_equal(rd(dev, NVDLA_CDP_D_PERF_LUT_UFLOW_0), counts[C_UF]);
    assert_int_equal(rd(dev, NVDLA_CDP_D_PERF_LUT_OFLOW_0), counts[C_OF]);
    assert_int_equal(rd(dev, NVDLA_CDP_D_PERF_LUT_HYBRID_0), counts[C_HY]);
    assert_int_equal(rd(dev, NVDLA_CDP_D_PERF_LUT_LE_HIT_0), counts[C_LE]);
    assert_int_equal(rd(dev, NVDLA_CDP_D_PERF_LUT_LO_HIT_0), counts[C_LO]);
    assert_int_equal(rd(dev, NVDLA_CDP_D_OUT_SATURATION_0), 0);
    assert_int_equal(rd(dev, NVDLA_CDP_D_NAN_INPUT_NUM_0), 0);
    assert_int_equal(rd(dev, NVDLA_CDP_D_INF_INPUT_NUM_0), 0);
    assert_int_equal(rd(dev, NVDLA_CDP_D_NAN_OUTPUT_NUM_0), 0);
    assert_int_equal(rd(dev, NVDLA_CDP_D_PERF_WRITE_STALL_0), 0);
}

/* Layer l in group 0 with the LUT: the destination (expect holds its
 * initial bytes) and the counters (returned in counts) as the reference's. */
static void run_and_check(struct dlasim_dev *dev, const struct layer *l, const uint8_t *src,
                          uint8_t *expect, uint64_t counts[C_N], unsigned id)
{
    ref_layer(l, src, expect, counts);
    program_lut(dev, l);
    program_layer(dev, l, 0, 0, 0);
    assert_int_equal(dlasim_run(dev), 0);
    check_output(dev, l, expect, id);
    check_counters(dev, 0, counts);
}

/* One random layer on a fresh device, in group 0. */
static void run_random(const char *config, uint64_t seed, unsigned id)
{
    uint64_t s = seed;
    struct layer l;
    uint64_t counts[C_N] = { 0 };
    uint8_t *dst_expect;
    struct dlasim_dev *dev = tdev_new(config, NULL, 0, 1);
    uint8_t *src = setup_random(dev, &s, &l, &dst_expect);
    run_and_check(dev, &l, src, dst_expect, counts, id);
    free(src);
    free(dst_expect);
    dlasim_destroy(dev);
}

static void test_random_nv_small(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 400; i++) {
        run_random("nv_small", 0x1234567ull + i * 7919u, i);
    }
}

static void test_random_nv_small_256(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 200; i++) {
        run_random("nv_small_256", 0xabcdef01ull + i * 104729u, i);
    }
}

/* Larger layers (tens of thousands of elements, one value of every
 * window length) where an implementation may cache LUT results. */
static void test_large_layers(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 4; i++) {
        uint64_t s = 0xb16b00b5ull + i;
        struct layer l;
        uint64_t counts[C_N] = { 0 };
        uint8_t *expect, *src;
        struct dlasim_dev *dev = tdev_new(i & 1 ? "nv_small_256" : "nv_small", NULL, 0, 1);
        random_layer(&s, &l);
        l.w = 64 - i; l.h = 32; l.c = 64 + 16 * i;
        l.normalz_len = i;
        l.sqsum_bypass = 0;
        l.src_line = l.w * ATOM; l.src_surf = l.h * l.src_line + ATOM;
        l.dst_line = l.w * ATOM + ATOM; l.dst_surf = l.h * l.dst_line;
        src = fill_memory(dev, &s, &l, &expect);
        aim_lut(&s, &l, src);
        run_and_check(dev, &l, src, expect, counts, i);
        free(src); free(expect);
        dlasim_destroy(dev);
    }
}

/* Two layers queued in both register groups; the LUT is shared. */
static void test_ping_pong(void **state)
{
    uint64_t s = 0x5eed;
    struct layer a, b;
    uint64_t ca[C_N] = { 0 }, cb[C_N] = { 0 };
    uint8_t *ea, *eb, *sa, *sb;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    (void)state;

    sa = setup_random(dev, &s, &a, &ea);
    random_layer(&s, &b);
    b.src += 0x100000;
    b.dst += 0x100000;
    b.sqsum_bypass = a.sqsum_bypass;
    /* the LUT registers are single: b runs with a's LUT */
    memcpy(b.le, a.le, sizeof(a.le));
    memcpy(b.lo, a.lo, sizeof(a.lo));
    b.lut_cfg = a.lut_cfg;
    b.lut_info = a.lut_info;
    b.le_start_lo = a.le_start_lo; b.le_start_hi = a.le_start_hi;
    b.le_end_lo = a.le_end_lo; b.le_end_hi = a.le_end_hi;
    b.lo_start_lo = a.lo_start_lo; b.lo_start_hi = a.lo_start_hi;
    b.lo_end_lo = a.lo_end_lo; b.lo_end_hi = a.lo_end_hi;
    b.le_slope_scale = a.le_slope_scale; b.le_slope_shift = a.le_slope_shift;
    b.lo_slope_scale = a.lo_slope_scale; b.lo_slope_shift = a.lo_slope_shift;

    sb = fill_memory(dev, &s, &b, &eb);
    ref_layer(&a, sa, ea, ca);
    ref_layer(&b, sb, eb, cb);
    program_lut(dev, &a);
    program_layer(dev, &a, 0, 0, 0);
    program_layer(dev, &b, 1, 0, 0);
    assert_int_equal(dlasim_run(dev), 0);
    check_output(dev, &a, ea, 0);
    check_output(dev, &b, eb, 1);
    check_counters(dev, 0, ca);
    check_counters(dev, 1, cb);
    free(sa); free(sb); free(ea); free(eb);
    dlasim_destroy(dev);
}

/* A directed LRN: linear LO table y = 32 + x / 16 read at the square sums,
 * channel count not a multiple of the atom so the padding lanes show. */
static void test_directed_padding(void **state)
{
    uint64_t s = 42;
    struct layer l;
    uint64_t counts[C_N] = { 0 };
    uint8_t *expect, *src;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    (void)state;

    random_layer(&s, &l);
    memset(l.le, 0, sizeof(l.le));
    l.w = 3; l.h = 2; l.c = 13;
    l.src_line = l.w * ATOM; l.src_surf = l.h * l.src_line;
    l.dst_line = l.w * ATOM; l.dst_surf = l.h * l.dst_line;
    l.normalz_len = 3; l.sqsum_bypass = 0; l.mul_bypass = 1;
    l.datin_offset = 0; l.datin_scale = 1; l.datin_shifter = 0;
    l.datout_offset = 0; l.datout_scale = 1; l.datout_shifter = 4;
    l.lut_cfg = 0x1 | 0x10 | 0x20 | 0x40;   /* LE linear, LO preferred everywhere */
    l.lut_info = (4u << 16) | (4u << 8);
    l.lo_start_lo = 0; l.lo_start_hi = 0;
    for (int i = 0; i < 257; i++) {
        l.lo[i] = (uint16_t)(32 + i);
    }
    src = fill_memory(dev, &s, &l, &expect);
    run_and_check(dev, &l, src, expect, counts, 0);
    /* the padding lanes (13..15) carry the LUT of their neighbours' squares */
    assert_true(counts[C_UF] + counts[C_OF] + counts[C_HY] + counts[C_LE] + counts[C_LO] ==
                (uint64_t)l.w * l.h * 16);
    free(src); free(expect);
    dlasim_destroy(dev);
}

/* nv_small's datapath ignores the data format: INT16 programmed on an
 * INT8-only configuration gives the INT8 result. */
static void test_int16_on_int8_config(void **state)
{
    uint64_t s = 77;
    struct layer l;
    uint64_t counts[C_N] = { 0 };
    uint8_t *expect, *src;
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    (void)state;

    src = setup_random(dev, &s, &l, &expect);
    ref_layer(&l, src, expect, counts);
    program_lut(dev, &l);
    program_layer(dev, &l, 0, NVDLA_CDP_RDMA_D_DATA_FORMAT_0_INPUT_DATA_INT16,
                  NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_INT16);
    assert_int_equal(dlasim_run(dev), 0);
    check_output(dev, &l, expect, 0);
    free(src); free(expect);
    dlasim_destroy(dev);
}

/* INT16 on a configuration that has it: sqsum bypass, mul bypass, unit
 * converters and a linear LO table of slope 1 (256 values per entry, index
 * select 8) with an overflow slope of 1 give y = x for every element; LE is
 * an always-overflowing linear table so LO wins every priority. */
static void test_int16_identity(void **state)
{
    static const char *const ovr[] = { "NVDLA_FEATURE_DATA_TYPE=INT8|INT16",
                                       "NVDLA_CBUF_BANK_WIDTH=16" };
    uint64_t s = 99;
    struct dlasim_dev *dev;
    struct layer l;
    const int32_t lo_start = -33024, lo_end = 32512;
    /* an ATOM-byte atom holds ATOM / 2 INT16 elements (cmod
     * ELEMENT_PER_GROUP_INT16; NVIDIA's INT16 CDP_L0_0 golden) */
    const uint32_t E = ATOM / 2;
    uint32_t C = 11, W = 4, H = 3, S = (C + E - 1) / E;
    uint32_t line = W * ATOM, surf = H * line;
    uint8_t *src, *got;
    (void)state;

    dev = tdev_new("nv_small", ovr, 2, 1);
    memset(&l, 0, sizeof(l));
    l.w = W; l.h = H; l.c = C;
    l.src_line = line; l.src_surf = surf; l.dst_line = line; l.dst_surf = surf;
    l.src = SRC_BASE; l.dst = DST_BASE;
    l.sqsum_bypass = 1; l.mul_bypass = 1;
    l.datin_scale = 1; l.datout_scale = 1;
    l.lut_cfg = 0x1 | 0x10 | 0x20 | 0x40;          /* LE linear; LO preferred */
    l.lut_info = 8u << 16;
    l.lo_start_lo = (uint32_t)lo_start; l.lo_start_hi = 0x3f;
    l.lo_end_lo = (uint32_t)lo_end; l.lo_end_hi = 0;
    l.lo_slope_scale = 1u << 16;                   /* overflow slope 1, shift 0 */
    l.le_start_lo = (uint32_t)-40000; l.le_start_hi = 0x3f;
    for (int i = 1; i < 257; i++) {
        l.lo[i] = (uint16_t)(int16_t)(lo_start + 256 * i);
    }
    src = malloc((size_t)surf * S);
    got = malloc((size_t)surf * S);
    assert_non_null(src);
    assert_non_null(got);
    splitmix64_fill(&s, src, (size_t)surf * S);
    mem_wr(dev, l.src, src, (size_t)surf * S);
    program_lut(dev, &l);
    program_layer(dev, &l, 0, NVDLA_CDP_RDMA_D_DATA_FORMAT_0_INPUT_DATA_INT16,
                  NVDLA_CDP_D_DATA_FORMAT_0_INPUT_DATA_TYPE_INT16);
    assert_int_equal(dlasim_run(dev), 0);
    mem_rd(dev, l.dst, got, (size_t)surf * S);
    for (uint32_t c = 0; c < S * E; c++) {
        for (uint32_t y = 0; y < H; y++) {
            for (uint32_t x = 0; x < W; x++) {
                size_t a = (size_t)(c / E) * surf + (size_t)y * line + (size_t)x * ATOM +
                           (c % E) * 2;
                int32_t in = (int16_t)(uint16_t)(src[a] | (src[a + 1] << 8));
                int32_t out = (int16_t)(uint16_t)(got[a] | (got[a + 1] << 8));
                int32_t want = c < C ? in : 0;
                if (out != want) {
                    fail_msg("INT16 c=%u y=%u x=%u: %d, expected %d", c, y, x, out, want);
                }
            }
        }
    }
    free(src); free(got);
    dlasim_destroy(dev);
}

/* A source that was never written, with strict memory: the layer fails
 * with a memory error naming CDP, and the destination is not written. */
static void test_dma_fault(void **state)
{
    uint64_t s = 5;
    struct layer l;
    struct dlasim_options opt;
    uint8_t sentinel[64], back[64];
    (void)state;

    memset(&opt, 0, sizeof(opt));
    opt.config = "nv_small";
    opt.strict_mem = 1;
    struct dlasim_dev *dev = tdev_create(&opt);
    random_layer(&s, &l);
    memset(sentinel, 0x5a, sizeof(sentinel));
    mem_wr(dev, l.dst, sentinel, sizeof(sentinel));
    program_layer(dev, &l, 0, 0, 0);
    assert_true(dlasim_run(dev) < 0);
    assert_non_null(strstr(dlasim_last_error(dev), "CDP"));
    mem_rd(dev, l.dst, back, sizeof(back));
    assert_memory_equal(back, sentinel, sizeof(back));
    dlasim_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_nv_small),
        cmocka_unit_test(test_random_nv_small_256),
        cmocka_unit_test(test_large_layers),
        cmocka_unit_test(test_ping_pong),
        cmocka_unit_test(test_directed_padding),
        cmocka_unit_test(test_int16_on_int8_config),
        cmocka_unit_test(test_int16_identity),
        cmocka_unit_test(test_dma_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
