/*
 * Property tests of SDP and SDP_RDMA through the public API: random layers
 * (memory input, BS/BN with register or memory operands, EW with its
 * converters and the LUT where the configuration has them, output converter)
 * are programmed with CSB writes, run, and the destination memory and the
 * hardware status registers are compared with a plain-C reference written
 * here (per-element code, nothing shared with src/).
 *
 * Facts the reference encodes (NVDLA RTL vmod/nvdla/sdp, vmod/vlibs), beyond
 * the rounding shifts, BS/BN stages and output converter of common/sdpref.h:
 *   - EW: MUL (32x32, shift by EW_TRUNCATE) then ALU (max/min/eql/sum,
 *     saturated to 32 bits); memory operands: (x - offset) * scale >> shift;
 *   - LUT: linear index (x - start) >> select (signed select), exponent index
 *     30 - leading-sign-count(x - start) - offset; table priority rules;
 *     interpolation with a 35-bit fraction; extrapolation
 *     y0 + ((x - (bias + start|end)) * scale) >> shift (signed shift);
 *   - CVT: (x - offset) * scale >> shift to 17 bits (counted as saturation),
 *     then int8/int16;
 *   - an M-byte atom holds M int8 or M/2 int16 elements; whole atoms are processed
 *     and written; a 1x1 cube is packed;
 *   - stages the configuration lacks (EW, LUT on nv_small) are bypassed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/sdpref.h"
#include "common/testdev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
    return splitmix64_next(&rng_state);
}

/* Uniform in [lo, hi]. */
static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng_state, lo, hi);
}

static int coin(unsigned percent)
{
    return rnd(0, 99) < percent;
}

/* A shift amount: mostly small, sometimes anything in [0, max]. */
static unsigned rnd_shift(unsigned max)
{
    return coin(80) ? rnd(0, max < 12 ? max : 12) : rnd(0, max);
}

/* A 32-bit value: small, or any. */
static uint32_t rnd_word(void)
{
    if (coin(60)) {
        return (uint32_t)(int32_t)(int)rnd(0, 400) - 200u;
    }
    return (uint32_t)splitmix64();
}

/* ---- layer description ---------------------------------------------------- */

#define SRC_ADDR 0x40000000ull
#define BS_ADDR 0x41000000ull
#define BN_ADDR 0x42000000ull
#define EW_ADDR 0x43000000ull
#define DST_ADDR 0x48000000ull
#define DST_FILL 0x5a

struct ewcvt {
    unsigned bypass, truncate;
    uint32_t offset, scale;
};

struct ewstage {
    unsigned bypass, alu_bypass, algo, mul_bypass, prelu, lut_bypass;
    unsigned alu_src, mul_src, truncate;
    uint32_t alu_op, mul_op;
    struct ewcvt alu_cvt, mul_cvt;
};

struct stream { /* BRDMA / NRDMA / ERDMA */
    unsigned disable, use, size, mode; /* use: 0 MUL, 1 ALU, 2 BOTH */
    uint64_t base, line, surf;
};

struct lutcfg {
    unsigned le_func, uprio, oprio, hprio; /* le_func 0 exponent */
    uint32_t info, le_start, le_end, lo_start, lo_end;
    uint32_t le_scale, le_shift, lo_scale, lo_shift; /* raw register values */
    uint16_t le[65], lo[257];
};

struct layer {
    /* configuration */
    unsigned m;      /* Atomic-M */
    int has_ew, has_lut, has_batch;
    /* cube */
    unsigned w, h, c, bits, batches;
    uint64_t src_line, src_surf, dst_line, dst_surf, dst_batch;
    struct sdp_x x[2];
    struct ewstage ew;
    struct stream st[3];
    struct lutcfg lut;
    uint32_t cvt_offset, cvt_scale, cvt_shift;
    unsigned perf;   /* D_PERF_ENABLE */
    unsigned group;
};

static unsigned bpe(const struct layer *L)
{
    return L->bits / 8;
}

/* an M-byte atom holds M int8 or M/2 int16 elements (vmod nv_full
 * NV_NVDLA_SDP_WDMA_cmd.v size_of_surf) */
static unsigned epa(const struct layer *L)
{
    return L->m / bpe(L);
}

static unsigned nsurf(const struct layer *L)
{
    return (L->c + epa(L) - 1) / epa(L);
}

static int packed(const struct layer *L)
{
    return L->w == 1 && L->h == 1;
}

/* Which operands the data path reads from memory: [stage][0 alu, 1 mul]. */
static int x_uses(const struct layer *L, int k, int mul)
{
    const struct sdp_x *x = &L->x[k];
    if (x->bypass) {
        return 0;
    }
    return mul ? (!x->mul_bypass && x->mul_src) : (!x->alu_bypass && x->alu_src);
}

static int ew_active(const struct layer *L)
{
    return L->has_ew && !L->ew.bypass;
}

static int ew_uses(const struct layer *L, int mul)
{
    if (!ew_active(L)) {
        return 0;
    }
    return mul ? (!L->ew.mul_bypass && L->ew.mul_src) : (!L->ew.alu_bypass && L->ew.alu_src);
}

static int uses(const struct layer *L, int which, int mul)
{
    return which < 2 ? x_uses(L, which, mul) : ew_uses(L, mul);
}

static unsigned elem_bytes(const struct stream *s)
{
    return (s->size ? 2u : 1u) * (s->use == 2 ? 2u : 1u);
}

/* Bytes of operand memory a stream covers. */
static size_t stream_span(const struct layer *L, const struct stream *s)
{
    size_t line = (size_t)L->w * epa(L) * elem_bytes(s);
    if (s->mode == 0 || packed(L)) {
        return (size_t)nsurf(L) * epa(L) * elem_bytes(s);
    }
    return (size_t)((nsurf(L) - 1) * s->surf + (L->h - 1) * s->line) + line;
}

static size_t src_span(const struct layer *L)
{
    size_t line = (size_t)L->w * L->m;
    if (packed(L)) {
        return (size_t)nsurf(L) * L->m;
    }
    return (size_t)((nsurf(L) - 1) * L->src_surf + (L->h - 1) * L->src_line) + line;
}

static size_t dst_span(const struct layer *L)
{
    size_t line = (size_t)L->w * L->m;
    size_t one;
    if (packed(L) && L->batches == 1) {
        one = (size_t)nsurf(L) * L->m;
    } else {
        one = (size_t)((nsurf(L) - 1) * L->dst_surf + (L->h - 1) * L->dst_line) + line;
    }
    return (size_t)((L->batches - 1) * L->dst_batch) + one;
}

/* ---- random layers ---------------------------------------------------------- */

static uint64_t aligned(uint64_t v, unsigned m)
{
    return (v + m - 1) / m * m;
}

static void random_x(struct sdp_x *x)
{
    x->bypass = coin(25);
    x->alu_bypass = coin(30);
    x->algo = rnd(0, 3);
    x->mul_bypass = coin(30);
    x->prelu = coin(30);
    x->relu_bypass = coin(50);
    x->alu_src = coin(40);
    x->mul_src = coin(40);
    x->alu_shift = rnd_shift(63);
    x->mul_shift = coin(10) ? rnd(0, 255) : rnd_shift(63); /* 8-bit field, 6 bits used */
    x->alu_op = rnd(0, 0xffff);
    x->mul_op = coin(50) ? rnd(0, 0xffff) : rnd(0, 300);
}

static void random_cvt(struct ewcvt *k)
{
    k->bypass = coin(40);
    k->truncate = rnd_shift(63);
    k->offset = rnd_word();
    k->scale = rnd(0, 0xffff);
}

static void random_ew(struct ewstage *e)
{
    e->bypass = coin(25);
    e->alu_bypass = coin(30);
    e->algo = rnd(0, 3);
    e->mul_bypass = coin(30);
    e->prelu = coin(30);
    e->lut_bypass = coin(40);
    e->alu_src = coin(40);
    e->mul_src = coin(40);
    e->truncate = coin(10) ? rnd(0, 1023) : rnd_shift(40);
    e->alu_op = rnd_word();
    e->mul_op = coin(50) ? rnd_word() : rnd(0, 300);
    random_cvt(&e->alu_cvt);
    random_cvt(&e->mul_cvt);
}

static uint32_t rnd_signed_field(unsigned bits, unsigned small)
{
    uint32_t mask = (1u << bits) - 1;
    return coin(70) ? ((uint32_t)((int)rnd(0, 2 * small) - (int)small) & mask) : rnd(0, mask);
}

static void random_lut(struct lutcfg *l)
{
    l->le_func = rnd(0, 1);
    l->uprio = rnd(0, 1);
    l->oprio = rnd(0, 1);
    l->hprio = rnd(0, 1);
    uint32_t off = rnd_signed_field(8, 8);
    if (coin(10)) {
        off = 0; /* exponent bias 1 << 0 */
    }
    l->info = off | (rnd_signed_field(8, 12) << 8) | (rnd_signed_field(8, 12) << 16);
    int32_t le_start = (int32_t)rnd_word();
    int32_t lo_start = (int32_t)rnd_word();
    l->le_start = (uint32_t)le_start;
    l->lo_start = (uint32_t)lo_start;
    l->le_end = coin(50) ? (uint32_t)((int64_t)le_start + rnd(0, 5000)) : rnd_word();
    l->lo_end = coin(50) ? (uint32_t)((int64_t)lo_start + rnd(0, 5000)) : rnd_word();
    l->le_scale = (uint32_t)splitmix64();
    l->lo_scale = (uint32_t)splitmix64();
    l->le_shift = rnd(0, 0x3ff);
    l->lo_shift = rnd(0, 0x3ff);
    for (int i = 0; i < 65; i++) {
        l->le[i] = (uint16_t)splitmix64();
    }
    for (int i = 0; i < 257; i++) {
        l->lo[i] = (uint16_t)splitmix64();
    }
}

/* A stream consistent with what the data path reads (or random when unused). */
static void random_stream(const struct layer *L, int which, struct stream *s, uint64_t base)
{
    int alu = uses(L, which, 0);
    int mul = uses(L, which, 1);
    s->disable = !(alu || mul);
    if (alu && mul) {
        s->use = 2;
    } else if (alu) {
        s->use = coin(70) ? 1 : 2;
    } else if (mul) {
        s->use = coin(70) ? 0 : 2;
    } else {
        s->use = rnd(0, 2);
    }
    s->size = L->bits == 16 ? 1 : rnd(0, 1);
    s->mode = rnd(0, 1);
    s->base = base + rnd(0, 3) * L->m;
    uint64_t line = (uint64_t)L->w * epa(L) * elem_bytes(s);
    s->line = aligned(line + (coin(50) ? 0 : rnd(0, 3) * L->m), L->m);
    s->surf = aligned(s->line * L->h + (coin(50) ? 0 : rnd(0, 3) * L->m), L->m);
}

/* Parameters that keep values in range, so that an error anywhere reaches
 * the int8/int16 output instead of being hidden by saturation. */
static void tame_x(struct sdp_x *x)
{
    x->alu_shift = rnd(0, 3);
    x->mul_op = rnd(0, 12) - 4u;
    x->mul_op &= 0xffffu;
    /* the 8-bit field feeds a 6-bit shifter: 64 + n shifts by n */
    x->mul_shift = rnd(0, 4) + (coin(20) ? 64u * rnd(1, 3) : 0u);
}

static void tame(struct layer *L)
{
    tame_x(&L->x[0]);
    tame_x(&L->x[1]);
    L->ew.mul_op = rnd(0, 8);
    L->ew.truncate = rnd(0, 3);
    L->ew.alu_cvt.truncate = rnd(0, 4);
    L->ew.mul_cvt.truncate = rnd(4, 8);
    L->ew.mul_cvt.scale = rnd(0, 32);
    L->ew.alu_cvt.offset = rnd(0, 64) - 32u;
    L->ew.mul_cvt.offset = rnd(0, 64) - 32u;
    L->cvt_offset = rnd(0, 40) - 20u;
    L->cvt_scale = rnd(1, 3);
    L->cvt_shift = rnd(0, 6);
}

static void random_layer(struct layer *L, unsigned m, int has_ew, int has_lut, int has_batch,
                         unsigned bits, unsigned max_wh, unsigned max_c)
{
    memset(L, 0, sizeof(*L));
    L->m = m;
    L->has_ew = has_ew;
    L->has_lut = has_lut;
    L->has_batch = has_batch;
    L->bits = bits;
    if (coin(15)) {
        L->w = L->h = 1;
    } else {
        L->w = rnd(1, max_wh);
        L->h = rnd(1, max_wh);
    }
    L->c = rnd(1, max_c);
    L->batches = has_batch && coin(30) ? rnd(1, 3) : 1;
    uint64_t line = (uint64_t)L->w * m;
    L->src_line = line + (coin(50) ? 0 : rnd(0, 4) * m);
    L->src_surf = L->src_line * L->h + (coin(50) ? 0 : rnd(0, 4) * m);
    L->dst_line = line + (coin(50) ? 0 : rnd(0, 4) * m);
    L->dst_surf = L->dst_line * L->h + (coin(50) ? 0 : rnd(0, 4) * m);
    L->dst_batch = L->dst_surf * nsurf(L) + rnd(0, 4) * m;
    random_x(&L->x[0]);
    random_x(&L->x[1]);
    random_ew(&L->ew);
    random_lut(&L->lut);
    random_stream(L, 0, &L->st[0], BS_ADDR);
    random_stream(L, 1, &L->st[1], BN_ADDR);
    random_stream(L, 2, &L->st[2], EW_ADDR);
    L->cvt_offset = rnd_word();
    L->cvt_scale = coin(30) ? 1 : rnd(0, 0xffff);
    L->cvt_shift = rnd_shift(63);
    L->perf = rnd(0, 15);
    if (coin(40)) {
        tame(L);
    }
}

/* ---- reference arithmetic ---------------------------------------------------- */

static int64_t ref_ewcvt(const struct ewcvt *k, int64_t op16)
{
    if (k->bypass) {
        return op16;
    }
    return ref_rshift((op16 - sext(k->offset, 32)) * sext(k->scale, 16), k->truncate, 49, 32, NULL);
}

static int64_t ref_ew(const struct ewstage *e, int64_t v, int64_t aop, int64_t mop)
{
    int64_t m = v;
    if (!e->mul_bypass && !(e->prelu && v >= 0)) {
        m = ref_rshift(v * mop, e->truncate, 64, 32, NULL);
    }
    if (e->alu_bypass) {
        return m;
    }
    int64_t a;
    if (e->algo == 0) {
        a = m > aop ? m : aop;
    } else if (e->algo == 1) {
        a = m < aop ? m : aop;
    } else if (e->algo == 3) {
        a = m != aop;
    } else {
        a = m + aop;
    }
    return clamp_bits(a, 32);
}

struct ref_stats {
    uint64_t sat, uflow, oflow, hybrid, le_hit, lo_hit;
};

struct lut_pick {
    unsigned index;
    uint64_t frac;
    int uflow, oflow;
};

static struct lut_pick ref_line(int64_t x, int64_t start, int sel, unsigned depth)
{
    struct lut_pick p = {0, 0, 0, 0};
    if (x <= start) {
        p.uflow = 1;
        return p;
    }
    uint64_t dlt = (uint64_t)(x - start);
    uint64_t idx;
    if (sel < 0) {
        idx = dlt;
        for (int i = 0; i < -sel && idx < 100000; i++) {
            idx *= 2;
        }
    } else {
        idx = sel >= 40 ? 0 : dlt >> sel;
        uint64_t rem = sel >= 40 ? dlt : dlt % (1ull << sel);
        /* frac = rem / 2^sel in 35-bit fixed point, truncated */
        p.frac = sel <= 35 ? rem << (35 - sel) : (sel - 35 >= 40 ? 0 : rem >> (sel - 35));
    }
    if (idx >= depth - 1) {
        p.oflow = 1;
        idx = depth - 1;
    }
    p.index = (unsigned)idx;
    return p;
}

static struct lut_pick ref_expn(int64_t x, int64_t start, int offset, unsigned depth)
{
    struct lut_pick p = {0, 0, 0, 0};
    if (x <= start) {
        p.uflow = 1;
        return p;
    }
    uint32_t dlt = (uint32_t)(uint64_t)(x - start);
    int log2;
    if (dlt >> 31) {
        /* the hardware's leading-sign count: ones after the MSB */
        int ones = 0;
        while (ones < 31 && ((dlt >> (30 - ones)) & 1u)) {
            ones++;
        }
        log2 = 30 - ones; /* -1 for 0xffffffff */
    } else {
        log2 = 0;
        while ((dlt >> (log2 + 1)) != 0) {
            log2++;
        }
    }
    unsigned l9 = (unsigned)log2 & 511u;
    if ((int)l9 < offset) {
        p.uflow = 1;
        return p;
    }
    unsigned idx = (unsigned)((int)l9 - offset) & 511u;
    uint64_t below = log2 < 0 ? dlt : (dlt & ((1ull << log2) - 1));
    p.frac = l9 <= 35 ? (below << (35 - l9)) & ((1ull << 35) - 1) : 0;
    if (idx >= depth - 1) {
        p.oflow = 1;
        idx = depth - 1;
    }
    p.index = idx;
    return p;
}

static int64_t ref_signed_shift(int64_t v, int s)
{
    if (s >= 0) {
        return ref_rshift(v, (unsigned)s, 50, 32, NULL);
    }
    return ref_shl32(v, (unsigned)-s);
}

static int64_t ref_lut(const struct lutcfg *l, int64_t x, struct ref_stats *st)
{
    int le_off = (int)sext(l->info & 0xff, 8);
    int le_sel = (int)sext((l->info >> 8) & 0xff, 8);
    int lo_sel = (int)sext((l->info >> 16) & 0xff, 8);
    int64_t le_start = sext(l->le_start, 32);
    int64_t lo_start = sext(l->lo_start, 32);
    struct lut_pick le = l->le_func == 0 ? ref_expn(x, le_start, le_off, 65)
                                         : ref_line(x, le_start, le_sel, 65);
    struct lut_pick lo = ref_line(x, lo_start, lo_sel, 257);
    int le_hit = !le.uflow && !le.oflow;
    int lo_hit = !lo.uflow && !lo.oflow;
    int pick_lo;
    if (le.uflow && lo.uflow) {
        pick_lo = (int)l->uprio;
    } else if (le.oflow && lo.oflow) {
        pick_lo = (int)l->oprio;
    } else if (le_hit && lo_hit) {
        pick_lo = (int)l->hprio;
    } else if (!le_hit && !lo_hit) {
        pick_lo = (int)l->hprio;
    } else {
        pick_lo = lo_hit;
    }
    struct lut_pick p = pick_lo ? lo : le;
    const uint16_t *tab = pick_lo ? l->lo : l->le;
    st->uflow += (uint64_t)p.uflow;
    st->oflow += (uint64_t)p.oflow;
    st->hybrid += (uint64_t)(!p.uflow && !p.oflow);
    st->le_hit += (uint64_t)le_hit;
    st->lo_hit += (uint64_t)lo_hit;
    int64_t y0 = sext(tab[p.index], 16);
    if (p.uflow || p.oflow) {
        uint32_t scale_reg = pick_lo ? l->lo_scale : l->le_scale;
        uint32_t shift_reg = pick_lo ? l->lo_shift : l->le_shift;
        int64_t scale = sext(p.oflow ? scale_reg >> 16 : scale_reg & 0xffff, 16);
        int shift = (int)sext(p.oflow ? (shift_reg >> 5) & 31 : shift_reg & 31, 5);
        int64_t off = sext(p.oflow ? (pick_lo ? l->lo_end : l->le_end)
                                   : (pick_lo ? l->lo_start : l->le_start), 32);
        int64_t bias = 0;
        if (p.uflow && !pick_lo && l->le_func == 0 && le_off >= 0 && le_off < 32) {
            bias = (int64_t)1 << le_off;
        }
        return clamp_bits(y0 + ref_signed_shift((x - (bias + off)) * scale, shift), 32);
    }
    int64_t y1 = sext(tab[p.index + 1], 16);
    int64_t sum = y0 * (int64_t)((1ull << 35) - p.frac) + y1 * (int64_t)p.frac;
    return ref_rshift(sum, 35, 53, 32, NULL);
}

/* ---- memory images ------------------------------------------------------------ */

struct images {
    uint8_t *src, *ops[3], *dst;
    size_t src_n, ops_n[3], dst_n;
};

static int64_t elem_at(const uint8_t *p, unsigned bytes)
{
    return bytes == 1 ? (int8_t)p[0] : sext((uint64_t)(p[0] | (p[1] << 8)), 16);
}

/* Operand `mul` of stream `which` for channel ch at (x, y). */
static int64_t ref_operand(const struct layer *L, const struct images *im, int which, int mul,
                           unsigned ch, unsigned y, unsigned x)
{
    const struct stream *s = &L->st[which];
    unsigned eb = elem_bytes(s);
    unsigned size = s->size ? 2u : 1u;
    unsigned comp_off = (s->use == 2 && mul) ? size : 0u;
    size_t off;
    if (s->mode == 0) {
        off = (size_t)ch * eb;
    } else if (packed(L)) {
        off = (size_t)ch * eb;
    } else {
        unsigned e = epa(L);
        off = (size_t)((ch / e) * s->surf + y * s->line) + ((size_t)x * e + ch % e) * eb;
    }
    uint64_t image = which == 0 ? BS_ADDR : which == 1 ? BN_ADDR : EW_ADDR;
    return elem_at(im->ops[which] + (s->base - image) + off + comp_off, size);
}

/* Expected output value of element (ch, y, x) (ch may be a padding lane). */
static int64_t ref_element(const struct layer *L, const struct images *im, unsigned ch,
                           unsigned y, unsigned x, struct ref_stats *st)
{
    unsigned e = epa(L);
    size_t off = packed(L) ? (size_t)ch * bpe(L)
                           : (size_t)((ch / e) * L->src_surf + y * L->src_line) +
                                 ((size_t)x * e + ch % e) * bpe(L);
    int64_t v = elem_at(im->src + off, bpe(L));
    for (int k = 0; k < 2; k++) {
        const struct sdp_x *xs = &L->x[k];
        if (xs->bypass) {
            continue;
        }
        int64_t aop = x_uses(L, k, 0) ? ref_operand(L, im, k, 0, ch, y, x) : sext(xs->alu_op, 16);
        int64_t mop = x_uses(L, k, 1) ? ref_operand(L, im, k, 1, ch, y, x) : sext(xs->mul_op, 16);
        v = ref_sdp_x(xs, v, aop, mop);
    }
    int eql = 0;
    if (ew_active(L)) {
        const struct ewstage *ew = &L->ew;
        int64_t aop = ew_uses(L, 0) ? ref_ewcvt(&ew->alu_cvt, ref_operand(L, im, 2, 0, ch, y, x))
                                    : sext(ew->alu_op, 32);
        int64_t mop = ew_uses(L, 1) ? ref_ewcvt(&ew->mul_cvt, ref_operand(L, im, 2, 1, ch, y, x))
                                    : sext(ew->mul_op, 32);
        v = ref_ew(ew, v, aop, mop);
        if (L->has_lut && !ew->lut_bypass) {
            v = ref_lut(&L->lut, v, st);
        }
        eql = !ew->alu_bypass && ew->algo == 3;
    }
    if (eql) {
        return sext((uint64_t)v, 16);
    }
    int sat;
    int64_t t = ref_sdp_cvt(v, L->cvt_offset, L->cvt_scale, L->cvt_shift, &sat);
    st->sat += (uint64_t)sat;
    return clamp_bits(t, L->bits);
}

static int layer_is_eql(const struct layer *L)
{
    return ew_active(L) && !L->ew.alu_bypass && L->ew.algo == 3;
}

/* Expected destination image and counters; returns STATUS_UNEQUAL. */
static int reference(const struct layer *L, const struct images *im, uint8_t *exp,
                     struct ref_stats *st)
{
    unsigned e = epa(L);
    int unequal = 0;
    memset(st, 0, sizeof(*st));
    for (unsigned ch = 0; ch < nsurf(L) * e; ch++) {
        for (unsigned y = 0; y < L->h; y++) {
            for (unsigned x = 0; x < L->w; x++) {
                int64_t v = ref_element(L, im, ch, y, x, st);
                unequal |= (v & ((1 << L->bits) - 1)) != 0;
                if (layer_is_eql(L)) {
                    continue;
                }
                for (unsigned b = 0; b < L->batches; b++) {
                    size_t off;
                    if (packed(L) && L->batches == 1) {
                        off = (size_t)ch * bpe(L);
                    } else {
                        off = (size_t)(b * L->dst_batch + (ch / e) * L->dst_surf +
                                       y * L->dst_line) +
                              ((size_t)x * e + ch % e) * bpe(L);
                    }
                    exp[off] = (uint8_t)((uint64_t)v & 0xff);
                    if (bpe(L) == 2) {
                        exp[off + 1] = (uint8_t)(((uint64_t)v >> 8) & 0xff);
                    }
                }
            }
        }
    }
    return unequal;
}

/* ---- programming -------------------------------------------------------------- */

static void program_lut(struct dlasim_dev *dev, const struct lutcfg *l)
{
    wr(dev, NVDLA_SDP_S_LUT_ACCESS_CFG_0, (1u << 17) | (0u << 16));
    for (int i = 0; i < 65; i++) {
        wr(dev, NVDLA_SDP_S_LUT_ACCESS_DATA_0, l->le[i]);
    }
    wr(dev, NVDLA_SDP_S_LUT_ACCESS_CFG_0, (1u << 17) | (1u << 16));
    for (int i = 0; i < 257; i++) {
        wr(dev, NVDLA_SDP_S_LUT_ACCESS_DATA_0, l->lo[i]);
    }
    wr(dev, NVDLA_SDP_S_LUT_CFG_0, l->le_func | (l->uprio << 4) | (l->oprio << 5) | (l->hprio << 6));
    wr(dev, NVDLA_SDP_S_LUT_INFO_0, l->info);
    wr(dev, NVDLA_SDP_S_LUT_LE_START_0, l->le_start);
    wr(dev, NVDLA_SDP_S_LUT_LE_END_0, l->le_end);
    wr(dev, NVDLA_SDP_S_LUT_LO_START_0, l->lo_start);
    wr(dev, NVDLA_SDP_S_LUT_LO_END_0, l->lo_end);
    wr(dev, NVDLA_SDP_S_LUT_LE_SLOPE_SCALE_0, l->le_scale);
    wr(dev, NVDLA_SDP_S_LUT_LE_SLOPE_SHIFT_0, l->le_shift);
    wr(dev, NVDLA_SDP_S_LUT_LO_SLOPE_SCALE_0, l->lo_scale);
    wr(dev, NVDLA_SDP_S_LUT_LO_SLOPE_SHIFT_0, l->lo_shift);
}

static void program(struct dlasim_dev *dev, const struct layer *L)
{
    unsigned g = L->group;
    uint32_t prec = L->bits == 16 ? 1u : 0u;
    wr(dev, NVDLA_SDP_S_POINTER_0, g);
    wr(dev, NVDLA_SDP_RDMA_S_POINTER_0, g);
    program_lut(dev, &L->lut);

    /* SDP_RDMA */
    sdp_program_src(dev, L->w, L->h, L->c, SRC_ADDR, (uint32_t)L->src_line,
                    (uint32_t)L->src_surf);
    wr(dev, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
        (prec << 2) | (prec << 4) | (prec << 6) | ((L->batches - 1) << 8));
    static const uint32_t cfg_reg[3] = {NVDLA_SDP_RDMA_D_BRDMA_CFG_0, NVDLA_SDP_RDMA_D_NRDMA_CFG_0,
                                        NVDLA_SDP_RDMA_D_ERDMA_CFG_0};
    static const uint32_t lo_reg[3] = {NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0,
                                       NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW_0,
                                       NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW_0};
    static const uint32_t line_reg[3] = {NVDLA_SDP_RDMA_D_BS_LINE_STRIDE_0,
                                         NVDLA_SDP_RDMA_D_BN_LINE_STRIDE_0,
                                         NVDLA_SDP_RDMA_D_EW_LINE_STRIDE_0};
    static const uint32_t surf_reg[3] = {NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE_0,
                                         NVDLA_SDP_RDMA_D_BN_SURFACE_STRIDE_0,
                                         NVDLA_SDP_RDMA_D_EW_SURFACE_STRIDE_0};
    for (int i = 0; i < 3; i++) {
        const struct stream *st = &L->st[i];
        wr(dev, cfg_reg[i], sdp_rdma_cfg(st->disable, st->use, st->size, st->mode));
        wr(dev, lo_reg[i], (uint32_t)L->st[i].base);
        wr(dev, line_reg[i], (uint32_t)L->st[i].line);
        wr(dev, surf_reg[i], (uint32_t)L->st[i].surf);
    }

    /* SDP */
    wr(dev, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, L->w - 1);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, L->h - 1);
    wr(dev, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, L->c - 1);
    wr(dev, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)DST_ADDR);
    wr(dev, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_SDP_D_DST_LINE_STRIDE_0, (uint32_t)L->dst_line);
    wr(dev, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, (uint32_t)L->dst_surf);
    wr(dev, NVDLA_SDP_D_DST_BATCH_STRIDE_0, (uint32_t)L->dst_batch);
    wr(dev, NVDLA_SDP_D_DST_DMA_CFG_0, 1);
    wr(dev, NVDLA_SDP_D_FEATURE_MODE_CFG_0, (L->batches - 1) << 8);
    wr(dev, NVDLA_SDP_D_DATA_FORMAT_0, prec | (prec << 2));
    sdp_program_x(dev, 0, &L->x[0]);
    sdp_program_x(dev, 1, &L->x[1]);
    const struct ewstage *e = &L->ew;
    wr(dev, NVDLA_SDP_D_DP_EW_CFG_0,
       e->bypass | (e->alu_bypass << 1) | (e->algo << 2) | (e->mul_bypass << 4) | (e->prelu << 5) |
           (e->lut_bypass << 6));
    wr(dev, NVDLA_SDP_D_DP_EW_ALU_CFG_0, e->alu_src | (e->alu_cvt.bypass << 1));
    wr(dev, NVDLA_SDP_D_DP_EW_ALU_SRC_VALUE_0, e->alu_op);
    wr(dev, NVDLA_SDP_D_DP_EW_ALU_CVT_OFFSET_VALUE_0, e->alu_cvt.offset);
    wr(dev, NVDLA_SDP_D_DP_EW_ALU_CVT_SCALE_VALUE_0, e->alu_cvt.scale);
    wr(dev, NVDLA_SDP_D_DP_EW_ALU_CVT_TRUNCATE_VALUE_0, e->alu_cvt.truncate);
    wr(dev, NVDLA_SDP_D_DP_EW_MUL_CFG_0, e->mul_src | (e->mul_cvt.bypass << 1));
    wr(dev, NVDLA_SDP_D_DP_EW_MUL_SRC_VALUE_0, e->mul_op);
    wr(dev, NVDLA_SDP_D_DP_EW_MUL_CVT_OFFSET_VALUE_0, e->mul_cvt.offset);
    wr(dev, NVDLA_SDP_D_DP_EW_MUL_CVT_SCALE_VALUE_0, e->mul_cvt.scale);
    wr(dev, NVDLA_SDP_D_DP_EW_MUL_CVT_TRUNCATE_VALUE_0, e->mul_cvt.truncate);
    wr(dev, NVDLA_SDP_D_DP_EW_TRUNCATE_VALUE_0, e->truncate);
    wr(dev, NVDLA_SDP_D_CVT_OFFSET_0, L->cvt_offset);
    wr(dev, NVDLA_SDP_D_CVT_SCALE_0, L->cvt_scale);
    wr(dev, NVDLA_SDP_D_CVT_SHIFT_0, L->cvt_shift);
    wr(dev, NVDLA_SDP_D_PERF_ENABLE_0, L->perf);
}

/* Run one layer on dev and check memory and status registers. */
static void run_and_check(struct dlasim_dev *dev, const struct layer *L, unsigned idx)
{
    struct images im;
    memset(&im, 0, sizeof(im));
    im.src_n = src_span(L);
    im.src = malloc(im.src_n);
    assert_non_null(im.src);
    splitmix64_fill(&rng_state, im.src, im.src_n);
    mem_wr(dev, SRC_ADDR, im.src, im.src_n);
    static const uint64_t op_base[3] = {BS_ADDR, BN_ADDR, EW_ADDR};
    for (int i = 0; i < 3; i++) {
        im.ops_n[i] = (size_t)(L->st[i].base - op_base[i]) + stream_span(L, &L->st[i]);
        im.ops[i] = malloc(im.ops_n[i]);
        assert_non_null(im.ops[i]);
        splitmix64_fill(&rng_state, im.ops[i], im.ops_n[i]);
        mem_wr(dev, op_base[i], im.ops[i], im.ops_n[i]);
    }
    im.dst_n = dst_span(L) + L->m; /* one atom past the end must stay untouched */
    im.dst = malloc(im.dst_n);
    uint8_t *exp = malloc(im.dst_n);
    assert_non_null(im.dst);
    assert_non_null(exp);
    memset(exp, DST_FILL, im.dst_n);
    mem_wr(dev, DST_ADDR, exp, im.dst_n);

    program(dev, L);
    wr(dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_SDP_D_OP_ENABLE_0, 1);
    int rc = dlasim_run(dev);
    if (rc != 0) {
        fail_msg("layer %u: dlasim_run: %s", idx, dlasim_last_error(dev));
    }
    assert_int_equal(dlasim_busy(dev, NULL, 0), 0);

    struct ref_stats st;
    int unequal = reference(L, &im, exp, &st);
    mem_rd(dev, DST_ADDR, im.dst, im.dst_n);
    for (size_t i = 0; i < im.dst_n; i++) {
        if (im.dst[i] != exp[i]) {
            fail_msg("layer %u (%ux%ux%u, %u-bit, group %u): dst byte 0x%zx is 0x%02x, expected "
                     "0x%02x",
                     idx, L->w, L->h, L->c, L->bits, L->group, i, im.dst[i], exp[i]);
        }
    }
    /* status registers of the layer's group */
    wr(dev, NVDLA_SDP_S_POINTER_0, L->group);
    assert_int_equal(rd(dev, NVDLA_SDP_D_STATUS_0), (uint32_t)unequal);
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_OUT_SATURATION_0),
                     (L->perf & 4u) ? (uint32_t)st.sat : 0u);
    int lut = (L->perf & 2u) && L->has_lut && ew_active(L) && !L->ew.lut_bypass;
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_LUT_UFLOW_0), lut ? (uint32_t)st.uflow : 0u);
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_LUT_OFLOW_0), lut ? (uint32_t)st.oflow : 0u);
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_LUT_HYBRID_0), lut ? (uint32_t)st.hybrid : 0u);
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_LUT_LE_HIT_0), lut ? (uint32_t)st.le_hit : 0u);
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_LUT_LO_HIT_0), lut ? (uint32_t)st.lo_hit : 0u);
    assert_int_equal(rd(dev, NVDLA_SDP_D_PERF_WDMA_WRITE_STALL_0), 0u);

    free(im.src);
    for (int i = 0; i < 3; i++) {
        free(im.ops[i]);
    }
    free(im.dst);
    free(exp);
}

/* Random layers on fresh devices, `per_dev` on each (register groups 0
 * then 1), each changed by `tweak` when given. */
struct suite {
    const char *name;
    const char *config;
    const char *const *ovr;
    size_t novr;
    unsigned m;
    int ew, lut, batch;
    unsigned bits, max_wh, max_c;
    unsigned n, per_dev;
    uint64_t seed;
    void (*tweak)(struct layer *L, unsigned i, unsigned g);
    unsigned threads; /* of the device */
};

static void random_suite(void **state)
{
    const struct suite *s = *state;
    rng_state = s->seed;
    for (unsigned i = 0; i < s->n; i += s->per_dev) {
        struct dlasim_dev *dev = tdev_new(s->config, s->ovr, s->novr, s->threads);
        for (unsigned g = 0; g < s->per_dev; g++) {
            struct layer L;
            random_layer(&L, s->m, s->ew, s->lut, s->batch, s->bits, s->max_wh, s->max_c);
            if (s->tweak) {
                s->tweak(&L, i, g);
            }
            L.group = g;
            run_and_check(dev, &L, i + g);
        }
        dlasim_destroy(dev);
    }
}

/* ---- tests -------------------------------------------------------------------- */

/* LUT-heavy layers: EW stage on with its LUT, everything else mostly off. */
static void lut_focus(struct layer *L, unsigned i, unsigned g)
{
    (void)i;
    (void)g;
    L->x[0].bypass = L->x[1].bypass = 1;
    L->ew.bypass = L->ew.lut_bypass = 0;
    L->ew.mul_bypass = coin(70);
    L->ew.alu_bypass = coin(50);
    if (L->ew.algo == 3) {
        L->ew.algo = 2;
    }
    /* small EW results: the LUT input stays near the tables */
    tame(L);
    L->ew.mul_op = rnd(1, 3);
    L->ew.truncate = rnd(0, 1);
    L->ew.alu_op = rnd(0, 60) - 30u;
    L->ew.alu_cvt.bypass = L->ew.mul_cvt.bypass = 1;
    L->perf = 0xf;
    /* keep values in range so that index, fraction, bias and slope
     * errors reach the output: inputs are int8, LUT entries are
     * scaled down to int8 by the converter */
    struct lutcfg *l = &L->lut;
    int32_t le_start = (int32_t)rnd(0, 250) - 150;
    int32_t lo_start = (int32_t)rnd(0, 250) - 150;
    l->le_start = (uint32_t)le_start;
    l->lo_start = (uint32_t)lo_start;
    l->le_end = (uint32_t)(le_start + (int32_t)rnd(0, 300));
    l->lo_end = (uint32_t)(lo_start + (int32_t)rnd(0, 300));
    l->info = ((uint32_t)((int)rnd(0, 6) - 2) & 0xffu) |
              (((uint32_t)((int)rnd(0, 5) - 1) & 0xffu) << 8) |
              (((uint32_t)((int)rnd(0, 4) - 1) & 0xffu) << 16);
    l->le_scale = (((uint32_t)rnd(0, 32) - 16u) & 0xffffu) |
                  ((((uint32_t)rnd(0, 32) - 16u) & 0xffffu) << 16);
    l->lo_scale = (((uint32_t)rnd(0, 32) - 16u) & 0xffffu) |
                  ((((uint32_t)rnd(0, 32) - 16u) & 0xffffu) << 16);
    l->le_shift = (((uint32_t)rnd(0, 9) - 1u) & 31u) | ((((uint32_t)rnd(0, 9) - 1u) & 31u) << 5);
    l->lo_shift = (((uint32_t)rnd(0, 9) - 1u) & 31u) | ((((uint32_t)rnd(0, 9) - 1u) & 31u) << 5);
    if (coin(50)) {
        /* int8 table entries through an identity converter */
        for (int k = 0; k < 65; k++) {
            l->le[k] = (uint16_t)(rnd(0, 255) - 128u);
        }
        for (int k = 0; k < 257; k++) {
            l->lo[k] = (uint16_t)(rnd(0, 255) - 128u);
        }
        L->cvt_offset = 0;
        L->cvt_scale = 1;
        L->cvt_shift = 0;
    } else if (coin(80)) {
        L->cvt_offset = 0;
        L->cvt_scale = 1;
        L->cvt_shift = 8;
    }
    random_stream(L, 2, &L->st[2], EW_ADDR);
}

/* Exponent table over wide differences (x - start up to 2^32 - 1): the
 * hardware's log2 of a difference >= 2^31 (leading-sign count). */
static void lut_exponent_wide(struct layer *L, unsigned i, unsigned g)
{
    L->x[0].bypass = L->x[1].bypass = 1;
    L->ew.bypass = L->ew.lut_bypass = 0;
    L->ew.alu_bypass = 1;
    L->ew.mul_bypass = 0;
    L->ew.mul_src = 0;
    L->ew.prelu = 0;
    L->ew.truncate = 0;
    L->ew.mul_op = 1u << rnd(16, 24);
    L->lut.le_func = 0;
    L->lut.le_start = 0x80000000u + rnd(0, 1u << 20);
    L->lut.lo_start = 0x7fff0000u;
    L->lut.info = ((uint32_t)((int)rnd(0, 4) - 2) & 0xffu) | (rnd(0, 3) << 16);
    if (i >= 20) {
        /* linear tables with selects beyond the 35 fraction bits */
        L->lut.le_func = 1;
        L->lut.lo_start = 0x80000000u + rnd(0, 1u << 20);
        L->lut.info = (rnd(26, 40) << 8) | (rnd(24, 40) << 16);
    }
    if (g == 1 && i < 20) {
        /* x = 0x7fffffff for non-negative inputs: BS adds a
         * saturated operand, so x - start = 0xffffffff with start
         * = -2^31 (log2 = -1 in the hardware's 9-bit arithmetic) */
        L->x[0] = (struct sdp_x){0};
        L->x[0].algo = 2;
        L->x[0].mul_bypass = 1;
        L->x[0].relu_bypass = 1;
        L->x[0].alu_op = 0x7fff;
        L->x[0].alu_shift = 20;
        L->ew.mul_bypass = 1;
        L->lut.le_start = 0x80000000u;
        L->lut.info = (uint32_t)((int)rnd(0, 3) - 3) & 0xffu;
    }
    L->cvt_offset = 0;
    L->cvt_scale = 1;
    L->cvt_shift = 8;
    L->perf = 0xf;
    random_stream(L, 2, &L->st[2], EW_ADDR);
}

/* EQL mode: nothing is written, D_STATUS tells whether some lane differed. */
static void eql(struct layer *L, unsigned i, unsigned g)
{
    (void)g;
    L->ew.bypass = 0;
    L->ew.alu_bypass = 0;
    L->ew.algo = 3;
    L->ew.lut_bypass = 1;
    L->ew.mul_bypass = 1;
    L->x[0].bypass = L->x[1].bypass = 1;
    /* half of the layers compare with a register operand of 0, so that
     * zero inputs give equal lanes */
    if (i & 1) {
        L->ew.alu_op = 0;
        L->ew.alu_src = 0;
    }
    random_stream(L, 2, &L->st[2], EW_ADDR);
}

static const char *const ew_lut_ovr[] = {"NVDLA_SDP_EW_ENABLE=1", "NVDLA_SDP_LUT_ENABLE=1"};
static const char *const ew_only_ovr[] = {"NVDLA_SDP_EW_ENABLE=1"};
static const char *const int16_ovr[] = {"NVDLA_FEATURE_DATA_TYPE=INT8|INT16",
                                        "NVDLA_CBUF_BANK_WIDTH=16", "NVDLA_SDP_EW_ENABLE=1",
                                        "NVDLA_SDP_LUT_ENABLE=1"};

static const struct suite suites[] = {
    /* nv_small: EW/LUT registers are programmed at random and must be ignored. */
    {"test_nv_small", "nv_small", NULL, 0, 8, 0, 0, 0, 8, 6, 40, 200, 2, 0x5d900001u, NULL, 1},
    {"test_nv_small_256", "nv_small_256", NULL, 0, 8, 0, 0, 0, 8, 6, 40, 80, 2, 0x5d900002u, NULL, 1},
    {"test_ew_lut", "nv_small", ew_lut_ovr, 2, 8, 1, 1, 0, 8, 6, 40, 300, 2, 0x5d900003u, NULL, 1},
    {"test_ew_without_lut", "nv_small", ew_only_ovr, 1, 8, 1, 0, 0, 8, 5, 24, 100, 2, 0x5d900004u,
     NULL, 1},
    {"test_nv_large", "nv_large", NULL, 0, 32, 1, 1, 1, 8, 4, 70, 60, 2, 0x5d900005u, NULL, 1},
    {"test_int16", "nv_small", int16_ovr, 4, 8, 1, 1, 0, 16, 5, 24, 100, 2, 0x5d900006u, NULL, 1},
    {"test_lut_focus", "nv_small", ew_lut_ovr, 2, 8, 1, 1, 0, 8, 4, 16, 300, 2, 0x5d900007u,
     lut_focus, 1},
    {"test_lut_exponent_wide", "nv_small", ew_lut_ovr, 2, 8, 1, 1, 0, 8, 4, 16, 40, 2, 0x5d90000au,
     lut_exponent_wide, 1},
    {"test_eql", "nv_small", ew_lut_ovr, 2, 8, 1, 1, 0, 8, 4, 12, 40, 1, 0x5d900009u, eql, 1},
    /* cubes of up to 96x96x96 on a device with two threads: the surfaces of
     * the larger ones run on the device's team (src/sim/nvdla/sdp.c) */
    {"test_team", "nv_small", ew_lut_ovr, 2, 8, 1, 1, 0, 8, 96, 96, 16, 2, 0x5d90000bu, NULL, 2},
};

/* Programming SDP cannot run on nv_small: the layer is refused with a message. */
static void expect_refusal(struct layer *L, int status, const char *needle,
                           void (*tweak)(struct dlasim_dev *))
{
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    program(dev, L);
    if (tweak) {
        tweak(dev);
    }
    wr(dev, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_SDP_D_OP_ENABLE_0, 1);
    expect_error(dev, dlasim_run(dev), status, needle);
    dlasim_destroy(dev);
}

static void tweak_rdma_width(struct dlasim_dev *dev)
{
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, rd(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0) + 1);
}

static void tweak_in_precision(struct dlasim_dev *dev)
{
    wr(dev, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, 1u << 2);
}

static void tweak_int16(struct dlasim_dev *dev)
{
    wr(dev, NVDLA_SDP_D_DATA_FORMAT_0, 1u | (1u << 2));
}

static void test_refusals(void **state)
{
    (void)state;
    struct layer L;
    rng_state = 0x5d900008u;
    random_layer(&L, 8, 0, 0, 0, 8, 3, 8);
    L.x[0].bypass = 0;
    L.x[0].alu_bypass = 0;
    L.x[0].alu_src = 1;
    L.st[0].disable = 1;
    expect_refusal(&L, DLASIM_ERR_PROG, "BRDMA", NULL);

    L.st[0].disable = 0;
    L.st[0].use = 0; /* MUL only, but ALU reads memory */
    L.x[0].mul_bypass = 1;
    expect_refusal(&L, DLASIM_ERR_PROG, "DATA_USE", NULL);

    L.st[0].use = 1;
    expect_refusal(&L, DLASIM_ERR_PROG, "WIDTH", tweak_rdma_width);
    expect_refusal(&L, DLASIM_ERR_UNSUPPORTED, "IN_PRECISION",
                   tweak_in_precision);
    expect_refusal(&L, DLASIM_ERR_PROG, "INT16", tweak_int16);
}

#define SUITE(i) { suites[i].name, random_suite, NULL, NULL, (void *)&suites[i] }

int main(void)
{
    const struct CMUnitTest tests[] = {
        SUITE(0), SUITE(1), SUITE(2), SUITE(3), SUITE(4), SUITE(5), SUITE(6), SUITE(7),
        cmocka_unit_test(test_refusals),
        SUITE(8), SUITE(9),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
