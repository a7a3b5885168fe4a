/*
 * SDP data path loops (see sdp_lanes.h and lanes.h).
 *
 * Every loop runs whole blocks of DLA_LANES_BLOCK elements; a run's tail
 * goes through zero-padded copies of one block, and padding lanes do not
 * count as saturations.  BS/BN and the output converter take 32-bit lanes
 * (twice as many per vector, and the 32-bit multiply AVX2 has) for a run
 * whose values and operands keep every intermediate within 32 bits, which
 * the ranges of the run tell (the common case: CACC output of int8 scale,
 * 16-bit operands); else the 64-bit lanes, which are exact for any input.
 */
#include <string.h>

#include "arith/sdp_lanes.h"

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

/* ---- constants -------------------------------------------------------------- */

void dla_sdp_lane_x_init(struct sdp_lane_x_cfg *l, enum sdp_lane_alu alu, int mul_bypass,
                         int prelu, int relu_bypass, unsigned mul_shift)
{
    l->sum_mask = alu == SDP_LANE_ALU_SUM ? UINT32_MAX : 0;
    l->max_mask = alu == SDP_LANE_ALU_MAX ? UINT32_MAX : 0;
    l->min_mask = alu == SDP_LANE_ALU_MIN ? UINT32_MAX : 0;
    /* the truncation applies even without MUL (NV_NVDLA_SDP_HLS_X_int_trt.v) */
    l->mul_shift = sdp_lane_shift_of(mul_shift, 49);
    l->prelu = !mul_bypass && prelu;
    l->relu_floor = relu_bypass ? INT32_MIN : 0;
}

/* Inputs x with |x * scale - offset_scaled| <= 2^31 - 1, i.e. with s =
 * |scale| and o = offset_scaled * sign(scale), s * x in [o - lim, o + lim];
 * 0 when no int32 is. */
static int narrow_range(int32_t scale, int64_t offset_scaled, int64_t half, int32_t *lo,
                        int32_t *hi)
{
    /* |v| + half within int32: the passes round v with one add (cvt_vec) */
    const int64_t lim = INT32_MAX - half;
    int64_t a = INT32_MIN, b = INT32_MAX;
    if (scale != 0) {
        int64_t s = scale < 0 ? -(int64_t)scale : scale;
        int64_t o = scale < 0 ? -offset_scaled : offset_scaled;
        int64_t num_lo = o - lim, num_hi = o + lim;
        a = num_lo >= 0 ? (num_lo + s - 1) / s : -((-num_lo) / s); /* ceil */
        b = num_hi >= 0 ? num_hi / s : -((-num_hi + s - 1) / s);   /* floor */
    }
    if (a > b || a > INT32_MAX || b < INT32_MIN) {
        return 0;
    }
    *lo = (int32_t)(a < INT32_MIN ? INT32_MIN : a);
    *hi = (int32_t)(b > INT32_MAX ? INT32_MAX : b);
    return 1;
}

static int cvt_quiet(const struct sdp_lane_cvt_cfg *w, int32_t x)
{
    uint32_t s = 0;
    (void)sdp_lane_cvt(w, x, &s);
    return s == 0;
}

/* The end of the converter's quiet inputs between `from` (quiet) and `to`:
 * the flag is monotone on each side of the input the offset maps to 0 (v =
 * (x - offset) * scale grows in magnitude away from it; the rounding and
 * the floor of v are monotone), so the quiet inputs there are an interval
 * and a bisection finds its end. */
static int32_t cvt_quiet_end(const struct sdp_lane_cvt_cfg *w, int32_t from, int32_t to)
{
    int64_t in = from, out = to; /* quiet at `in`; `out` may be quiet too */
    if (cvt_quiet(w, to)) {
        return to;
    }
    while (in - out > 1 || out - in > 1) {
        int64_t mid = in + (out - in) / 2;
        if (cvt_quiet(w, (int32_t)mid)) {
            in = mid;
        } else {
            out = mid;
        }
    }
    return (int32_t)in;
}

/* [quiet_lo, quiet_hi]: the inputs that raise no 17-bit saturation flag
 * (ref: NV_NVDLA_SDP_HLS_C_int.v, sdp_lane_cvt).  The identity converter,
 * the compiler's after BS, in closed form; others (a few layers) by
 * bisection at decode. */
static void cvt_quiet_range(struct sdp_lane_cvt *c, int32_t offset)
{
    const struct sdp_lane_cvt_cfg *w = &c->wide;
    if (w->scale == 1 && w->offset_scaled == 0 && w->shift.shift == 0) {
        c->quiet_lo = -65536;
        c->quiet_hi = 65535;
    } else if (w->scale == 0) { /* v = 0 for every input */
        c->quiet_lo = INT32_MIN;
        c->quiet_hi = INT32_MAX;
    } else { /* v = 0 at x = offset: quiet */
        c->quiet_lo = cvt_quiet_end(w, offset, INT32_MIN);
        c->quiet_hi = cvt_quiet_end(w, offset, INT32_MAX);
    }
}

void dla_sdp_lane_cvt_init(struct sdp_lane_cvt *c, int32_t offset, int32_t scale, unsigned shift,
                           unsigned out_bits)
{
    memset(c, 0, sizeof(*c));
    c->wide.scale = scale;
    c->wide.offset_scaled = (int64_t)offset * scale;
    c->wide.shift = sdp_lane_shift_of(shift, 49);
    c->wide.lo = (int32_t)sdp_smin(out_bits);
    c->wide.hi = (int32_t)sdp_smax(out_bits);
    /* 32-bit lanes need the shift below 32 (wider shifts give 0 anyway) */
    c->narrow_ok = c->wide.shift.shift <= 31 &&
                   narrow_range(scale, c->wide.offset_scaled, (int64_t)c->wide.shift.half,
                                &c->narrow_lo, &c->narrow_hi);
    c->narrow.scale = (uint32_t)scale;
    c->narrow.offset_scaled = (uint32_t)(uint64_t)c->wide.offset_scaled;
    c->narrow.shift = c->wide.shift.shift;
    c->narrow.half = (uint32_t)c->wide.shift.half;
    c->narrow.lo = c->wide.lo;
    c->narrow.hi = c->wide.hi;
    cvt_quiet_range(c, offset);
}

/* ---- ranges ------------------------------------------------------------------- */

/*
 * Smallest and largest of d[0..n), n > 0.  The loops here keep one value
 * (or counter) per lane of a block and reduce them once at the end: a
 * scalar accumulator would make the vectorised block end in a horizontal
 * reduction.
 */
DLA_LANES_INLINE void run_range(const int32_t *d, size_t n, int32_t *lo, int32_t *hi)
{
    const size_t B = DLA_LANES_BLOCK;
    int32_t a[DLA_LANES_BLOCK], b[DLA_LANES_BLOCK];
    for (size_t j = 0; j < B; j++) {
        a[j] = d[0];
        b[j] = d[0];
    }
    size_t i = 0;
    for (; i + B <= n; i += B) {
        for (size_t j = 0; j < B; j++) {
            int32_t v = d[i + j];
            a[j] = v < a[j] ? v : a[j];
            b[j] = v > b[j] ? v : b[j];
        }
    }
    for (; i < n; i++) {
        a[0] = d[i] < a[0] ? d[i] : a[0];
        b[0] = d[i] > b[0] ? d[i] : b[0];
    }
    for (size_t j = 1; j < B; j++) {
        a[0] = a[j] < a[0] ? a[j] : a[0];
        b[0] = b[j] > b[0] ? b[j] : b[0];
    }
    *lo = a[0];
    *hi = b[0];
}

#if defined(DLA_LANES_X86)
/* The smallest, largest and sum (modulo 2^32) of a register's lanes, in
 * registers: reducing through a stack array and the result pointers made
 * each step a store-to-load round trip (a sixth of a 7x7 plane's call). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) int32_t hmin8(__m256i v)
{
    __m128i m = _mm_min_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, 0x4e));
    return _mm_cvtsi128_si32(_mm_min_epi32(m, _mm_shuffle_epi32(m, 0xb1)));
}

DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) int32_t hmax8(__m256i v)
{
    __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4e));
    return _mm_cvtsi128_si32(_mm_max_epi32(m, _mm_shuffle_epi32(m, 0xb1)));
}

DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) int32_t hsum8(__m256i v)
{
    __m128i m = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    m = _mm_add_epi32(m, _mm_shuffle_epi32(m, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(m, _mm_shuffle_epi32(m, 0xb1)));
}

/* run_range in 8-lane min/max registers: the block form above keeps its
 * per-lane arrays in memory (a store per element). */
DLA_LANES_AVX2_ATTR static void run_range_avx2(const int32_t *d, size_t n, int32_t *lo,
                                               int32_t *hi)
{
    __m256i a = _mm256_set1_epi32(d[0]), b = a;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(d + i));
        a = _mm256_min_epi32(a, v);
        b = _mm256_max_epi32(b, v);
    }
    int32_t l = hmin8(a), h = hmax8(b);
    for (; i < n; i++) {
        l = d[i] < l ? d[i] : l;
        h = d[i] > h ? d[i] : h;
    }
    *lo = l;
    *hi = h;
}

/* Each channel's input range over pixels [j0, j1) (zeros past `real`). */
DLA_LANES_AVX2_ATTR static void channel_ranges_avx2(const int32_t *src, size_t plane,
                                                    unsigned real, size_t j0, size_t j1,
                                                    int32_t lo[8], int32_t hi[8])
{
    for (unsigned l = 0; l < 8; l++) {
        lo[l] = hi[l] = 0;
        if (l < real) {
            run_range_avx2(src + l * plane + j0, j1 - j0, &lo[l], &hi[l]);
        }
    }
}
#endif

/* run_range of the variant (`avx2` a constant after inlining). */
DLA_LANES_INLINE void range_of(const int avx2, const int32_t *d, size_t n, int32_t *lo,
                               int32_t *hi)
{
#if defined(DLA_LANES_X86)
    if (avx2) {
        run_range_avx2(d, n, lo, hi);
        return;
    }
#endif
    (void)avx2;
    run_range(d, n, lo, hi);
}

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* Is the X stage exact in 32-bit lanes (sdp_lane_x32) for inputs in
 * [xlo, xhi], ALU operands in [olo, ohi] and MUL operands in [mlo, mhi]?
 * Then *bound bounds the magnitude of its outputs: the product's rounded
 * by the truncation, or the ALU result PReLU passes; ReLU only raises
 * negative values to 0. */
static int x_narrow_bound(const struct sdp_lane_x_cfg *p, int32_t xlo, int32_t xhi, int32_t olo,
                          int32_t ohi, int32_t mlo, int32_t mhi, int64_t *bound)
{
    const int64_t lim = INT32_MAX;
    int64_t alo = xlo, ahi = xhi; /* the ALU result, bounded conservatively */
    if (p->max_mask || p->min_mask) {
        alo = alo < olo ? alo : olo;
        ahi = ahi > ohi ? ahi : ohi;
    }
    if (p->sum_mask) {
        alo += olo;
        ahi += ohi;
    }
    int64_t amax = abs64(alo) > abs64(ahi) ? abs64(alo) : abs64(ahi);
    int64_t mmax = abs64(mlo) > abs64(mhi) ? abs64(mlo) : abs64(mhi);
    int narrow = p->mul_shift.shift <= 31 && alo >= -lim && ahi <= lim && amax * mmax <= lim;
    /* the product's magnitude rounded by the truncation (sdp_lane_x32) */
    int64_t prod = narrow ? (int64_t)((uint64_t)(amax * mmax) + p->mul_shift.half) >>
                                p->mul_shift.shift
                          : amax * mmax;
    *bound = p->prelu && amax > prod ? amax : prod;
    return narrow;
}

static int x_narrow(const struct sdp_lane_x_cfg *p, int32_t xlo, int32_t xhi, int32_t olo,
                    int32_t ohi, int32_t mlo, int32_t mhi)
{
    int64_t bound;
    return x_narrow_bound(p, xlo, xhi, olo, ohi, mlo, mhi, &bound);
}

/* ---- X stage ---------------------------------------------------------------- */

/*
 * A block reads src and writes dst through a local array: every load comes
 * before the store, so src may be dst (the stages after the first run in
 * place), and the compiler needs no aliasing check to vectorise.  `narrow`
 * and `shifted` select sdp_lane_x32 (and its truncation) or sdp_lane_x.
 */
DLA_LANES_INLINE void x_block(const struct sdp_lane_x_cfg *p, const int32_t *src, int32_t *dst,
                              const int32_t *ao, int32_t av, const int32_t *mo, int32_t mv,
                              const int per_a, const int per_m, const int narrow,
                              const int shifted)
{
    _Alignas(64) int32_t t[DLA_LANES_BLOCK];
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        int32_t op = per_a ? ao[j] : av, mop = per_m ? mo[j] : mv;
        t[j] = narrow ? sdp_lane_x32(p, src[j], op, mop, shifted) : sdp_lane_x(p, src[j], op, mop);
    }
    memcpy(dst, t, sizeof(t));
}

/* The flags are constants after inlining: one loop per operand kind and
 * lane form. */
DLA_LANES_INLINE void x_loop(const struct sdp_lane_x_cfg *cfg, const int32_t *src, int32_t *dst,
                             size_t n, const int32_t *ao, int32_t av, const int32_t *mo,
                             int32_t mv, const int per_a, const int per_m, const int narrow,
                             const int shifted)
{
    const struct sdp_lane_x_cfg p = *cfg; /* not reloaded after each store */
    const size_t B = DLA_LANES_BLOCK;
    size_t i = 0;
    for (; i + B <= n; i += B) {
        x_block(&p, src + i, dst + i, per_a ? ao + i : NULL, av, per_m ? mo + i : NULL, mv,
                per_a, per_m, narrow, shifted);
    }
    if (i < n) {
        int32_t td[DLA_LANES_BLOCK] = {0}, ta[DLA_LANES_BLOCK] = {0}, tm[DLA_LANES_BLOCK] = {0};
        size_t r = n - i;
        memcpy(td, src + i, r * sizeof(*src));
        if (per_a) {
            memcpy(ta, ao + i, r * sizeof(*ao));
        }
        if (per_m) {
            memcpy(tm, mo + i, r * sizeof(*mo));
        }
        x_block(&p, td, td, ta, av, tm, mv, per_a, per_m, narrow, shifted);
        memcpy(dst + i, td, r * sizeof(*dst));
    }
}

/* The lane form for the operand kinds (per_a, per_m): 64-bit, or 32-bit
 * with or without truncation. */
DLA_LANES_INLINE void x_form(const struct sdp_lane_x_cfg *p, const int32_t *src, int32_t *dst,
                             size_t n, const int32_t *ao, int32_t av, const int32_t *mo,
                             int32_t mv, const int per_a, const int per_m, int narrow)
{
    if (!narrow) {
        x_loop(p, src, dst, n, ao, av, mo, mv, per_a, per_m, 0, 0);
    } else if (p->mul_shift.shift) {
        x_loop(p, src, dst, n, ao, av, mo, mv, per_a, per_m, 1, 1);
    } else {
        x_loop(p, src, dst, n, ao, av, mo, mv, per_a, per_m, 1, 0);
    }
}

DLA_LANES_INLINE void x_any(const struct sdp_lane_x_cfg *p, const int32_t *src, int32_t *dst,
                            size_t n, const int32_t *ao, int32_t av, const int32_t *mo,
                            int32_t mv, const int avx2)
{
    int32_t xlo, xhi, olo = av, ohi = av, mlo = mv, mhi = mv;
    if (n == 0) {
        return;
    }
    range_of(avx2, src, n, &xlo, &xhi);
    if (ao) {
        range_of(avx2, ao, n, &olo, &ohi);
    }
    if (mo) {
        range_of(avx2, mo, n, &mlo, &mhi);
    }
    int narrow = x_narrow(p, xlo, xhi, olo, ohi, mlo, mhi);
    if (ao && mo) {
        x_form(p, src, dst, n, ao, av, mo, mv, 1, 1, narrow);
    } else if (ao) {
        x_form(p, src, dst, n, ao, av, NULL, mv, 1, 0, narrow);
    } else if (mo) {
        x_form(p, src, dst, n, NULL, av, mo, mv, 0, 1, narrow);
    } else {
        x_form(p, src, dst, n, NULL, av, NULL, mv, 0, 0, narrow);
    }
}

static void x_generic(const struct sdp_lane_x_cfg *p, const int32_t *src, int32_t *dst, size_t n,
                      const int32_t *ao, int32_t av, const int32_t *mo, int32_t mv)
{
    x_any(p, src, dst, n, ao, av, mo, mv, 0);
}

#if defined(DLA_LANES_X86)
DLA_LANES_AVX2_ATTR static void x_avx2(const struct sdp_lane_x_cfg *p, const int32_t *src,
                                       int32_t *dst, size_t n, const int32_t *ao, int32_t av,
                                       const int32_t *mo, int32_t mv)
{
    x_any(p, src, dst, n, ao, av, mo, mv, 1);
}

/* The same blocks compiled for AVX-512: gcc vectorises them in 16 lanes
 * (1.5x the AVX2 form's elements a second on Zen 5). */
DLA_LANES_AVX512_ATTR static void x_avx512(const struct sdp_lane_x_cfg *p, const int32_t *src,
                                           int32_t *dst, size_t n, const int32_t *ao, int32_t av,
                                           const int32_t *mo, int32_t mv)
{
    x_any(p, src, dst, n, ao, av, mo, mv, 1);
}
#endif

void dla_sdp_lanes_x(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *p, const int32_t *src,
                     int32_t *dst, size_t n, const int32_t *ao, int32_t av, const int32_t *mo,
                     int32_t mv)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        x_avx512(p, src, dst, n, ao, av, mo, mv);
        return;
    }
    if (dla_lanes_avx2_up(isa)) {
        x_avx2(p, src, dst, n, ao, av, mo, mv);
        return;
    }
#endif
    (void)isa;
    x_generic(p, src, dst, n, ao, av, mo, mv);
}

/* ---- output converter --------------------------------------------------------- */

static uint32_t sum_lanes(const uint32_t v[DLA_LANES_BLOCK])
{
    uint32_t s = 0;
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        s += v[j];
    }
    return s;
}

/* Lanes j < valid of the block add their saturation to sat[j] (valid is a
 * constant for whole blocks); src may be dst as in x_block. */
DLA_LANES_INLINE void cvt_block(const struct sdp_lane_cvt_cfg *p, const int32_t *src,
                                int32_t *dst, uint32_t *restrict sat, size_t valid)
{
    _Alignas(64) int32_t t[DLA_LANES_BLOCK];
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        uint32_t s = 0;
        t[j] = sdp_lane_cvt(p, src[j], &s);
        sat[j] += s & (uint32_t)(j < valid);
    }
    memcpy(dst, t, sizeof(t));
}

DLA_LANES_INLINE void cvt32_block(const struct sdp_lane_cvt_narrow *p, const int32_t *src,
                                  int32_t *dst, uint32_t *restrict sat, size_t valid,
                                  const int shifted)
{
    _Alignas(64) int32_t t[DLA_LANES_BLOCK];
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        uint32_t s = 0;
        t[j] = sdp_lane_cvt32(p, src[j], &s, shifted);
        sat[j] += s & (uint32_t)(j < valid);
    }
    memcpy(dst, t, sizeof(t));
}

/* The 32-bit converter over a run; `shifted` a constant (one loop each). */
DLA_LANES_INLINE void cvt32_loop(const struct sdp_lane_cvt_narrow *p, const int32_t *src,
                                 int32_t *dst, size_t n, uint32_t *sat, const int shifted)
{
    const size_t B = DLA_LANES_BLOCK;
    size_t i = 0;
    for (; i + B <= n; i += B) {
        cvt32_block(p, src + i, dst + i, sat, B, shifted);
    }
    if (i < n) {
        int32_t td[DLA_LANES_BLOCK] = {0};
        memcpy(td, src + i, (n - i) * sizeof(*src));
        cvt32_block(p, td, td, sat, n - i, shifted);
        memcpy(dst + i, td, (n - i) * sizeof(*dst));
    }
}

/* The 64-bit converter over a run. */
DLA_LANES_INLINE void cvt_loop(const struct sdp_lane_cvt_cfg *p, const int32_t *src,
                               int32_t *dst, size_t n, uint32_t *sat)
{
    const size_t B = DLA_LANES_BLOCK;
    size_t i = 0;
    for (; i + B <= n; i += B) {
        cvt_block(p, src + i, dst + i, sat, B);
    }
    if (i < n) {
        int32_t td[DLA_LANES_BLOCK] = {0};
        memcpy(td, src + i, (n - i) * sizeof(*src));
        cvt_block(p, td, td, sat, n - i);
        memcpy(dst + i, td, (n - i) * sizeof(*dst));
    }
}

DLA_LANES_INLINE uint32_t cvt_any(const struct sdp_lane_cvt *c, const int32_t *src, int32_t *dst,
                                  size_t n, const int avx2)
{
    _Alignas(64) uint32_t sat[DLA_LANES_BLOCK];
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        sat[j] = 0;
    }
    int32_t lo, hi;
    range_of(avx2, src, n, &lo, &hi);
    if (c->narrow_ok && lo >= c->narrow_lo && hi <= c->narrow_hi) {
        const struct sdp_lane_cvt_narrow p = c->narrow;
        if (p.shift) {
            cvt32_loop(&p, src, dst, n, sat, 1);
        } else {
            cvt32_loop(&p, src, dst, n, sat, 0);
        }
    } else {
        const struct sdp_lane_cvt_cfg p = c->wide;
        cvt_loop(&p, src, dst, n, sat);
    }
    return sum_lanes(sat);
}

static uint32_t cvt_generic(const struct sdp_lane_cvt *c, const int32_t *src, int32_t *dst,
                            size_t n)
{
    return cvt_any(c, src, dst, n, 0);
}

#if defined(DLA_LANES_X86)
DLA_LANES_AVX2_ATTR static uint32_t cvt_avx2(const struct sdp_lane_cvt *c, const int32_t *src,
                                             int32_t *dst, size_t n)
{
    return cvt_any(c, src, dst, n, 1);
}

/* (as x_avx512) */
DLA_LANES_AVX512_ATTR static uint32_t cvt_avx512(const struct sdp_lane_cvt *c, const int32_t *src,
                                                 int32_t *dst, size_t n)
{
    return cvt_any(c, src, dst, n, 1);
}
#endif

uint32_t dla_sdp_lanes_cvt(enum dla_lanes_isa isa, const struct sdp_lane_cvt *p,
                           const int32_t *src, int32_t *dst, size_t n)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return cvt_avx512(p, src, dst, n);
    }
    if (dla_lanes_avx2_up(isa)) {
        return cvt_avx2(p, src, dst, n);
    }
#endif
    (void)isa;
    return cvt_generic(p, src, dst, n);
}

/* Bytes OR-ed between the early-exit checks of dla_sdp_lanes_any_nonzero
 * (outputs are rarely all zero: the answer is usually in the first). */
#define ANY_NONZERO_CHUNK 256u

int dla_sdp_lanes_any_nonzero(const uint8_t *p, size_t n)
{
    const size_t B = DLA_LANES_BLOCK;
    uint8_t nz[DLA_LANES_BLOCK] = {0};
    size_t i = 0;
    while (i + B <= n) {
        const size_t end = n - i > ANY_NONZERO_CHUNK ? i + ANY_NONZERO_CHUNK : n;
        for (; i + B <= end; i += B) {
            for (size_t j = 0; j < B; j++) {
                nz[j] |= p[i + j];
            }
        }
        uint8_t any = 0;
        for (size_t j = 0; j < B; j++) {
            any |= nz[j];
        }
        if (any) {
            return 1;
        }
    }
    for (; i < n; i++) {
        if (p[i]) {
            return 1;
        }
    }
    return 0;
}

/* ---- X stage and output converter in one pass ------------------------------------ */

/* One block of sdp_lane_x32 then sdp_lane_cvt32 (register operands); lanes
 * j < valid count their saturation. */
DLA_LANES_INLINE void xcvt_block(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt_narrow *q,
                                 const int32_t *src, int32_t *dst, int32_t av, int32_t mv,
                                 uint32_t *restrict sat, size_t valid, const int xshift,
                                 const int cshift)
{
    _Alignas(64) int32_t t[DLA_LANES_BLOCK];
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        uint32_t s = 0;
        t[j] = sdp_lane_cvt32(q, sdp_lane_x32(p, src[j], av, mv, xshift), &s, cshift);
        sat[j] += s & (uint32_t)(j < valid);
    }
    memcpy(dst, t, sizeof(t));
}

DLA_LANES_INLINE void xcvt_loop(const struct sdp_lane_x_cfg *cfg,
                                const struct sdp_lane_cvt_narrow *qcfg, const int32_t *src,
                                int32_t *dst, size_t n, int32_t av, int32_t mv, uint32_t *sat,
                                const int xshift, const int cshift)
{
    const struct sdp_lane_x_cfg p = *cfg;
    const struct sdp_lane_cvt_narrow q = *qcfg;
    const size_t B = DLA_LANES_BLOCK;
    size_t i = 0;
    for (; i + B <= n; i += B) {
        xcvt_block(&p, &q, src + i, dst + i, av, mv, sat, B, xshift, cshift);
    }
    if (i < n) {
        int32_t td[DLA_LANES_BLOCK] = {0};
        memcpy(td, src + i, (n - i) * sizeof(*src));
        xcvt_block(&p, &q, td, td, av, mv, sat, n - i, xshift, cshift);
        memcpy(dst + i, td, (n - i) * sizeof(*dst));
    }
}

/* The fused pass when the X stage is exact in 32-bit lanes for the run and
 * its outputs are all within the converter's 32-bit range (0: the caller
 * runs the stages one by one). */
DLA_LANES_INLINE int xcvt_any(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,
                              const int32_t *src, int32_t *dst, size_t n, int32_t av, int32_t mv,
                              uint32_t *saturated, const int avx2)
{
    int32_t lo, hi;
    int64_t bound;
    if (n == 0 || !c->narrow_ok) {
        return 0;
    }
    range_of(avx2, src, n, &lo, &hi);
    if (!x_narrow_bound(p, lo, hi, av, av, mv, mv, &bound) || -bound < c->narrow_lo ||
        bound > c->narrow_hi) {
        return 0;
    }
    uint32_t sat[DLA_LANES_BLOCK] = {0};
    const int xs = p->mul_shift.shift != 0, cs = c->narrow.shift != 0;
    if (xs && cs) {
        xcvt_loop(p, &c->narrow, src, dst, n, av, mv, sat, 1, 1);
    } else if (xs) {
        xcvt_loop(p, &c->narrow, src, dst, n, av, mv, sat, 1, 0);
    } else if (cs) {
        xcvt_loop(p, &c->narrow, src, dst, n, av, mv, sat, 0, 1);
    } else {
        xcvt_loop(p, &c->narrow, src, dst, n, av, mv, sat, 0, 0);
    }
    *saturated = sum_lanes(sat);
    return 1;
}

static int xcvt_generic(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,
                        const int32_t *src, int32_t *dst, size_t n, int32_t av, int32_t mv,
                        uint32_t *sat)
{
    return xcvt_any(p, c, src, dst, n, av, mv, sat, 0);
}

#if defined(DLA_LANES_X86)
/*
 * The fused pass in AVX2 registers.  The block loop above, as compiled,
 * keeps each block in a stack array and copies it out 16 bytes at a time,
 * and zeroes its saturation array at every call; MobileNetV2 makes ~19,000
 * calls an image, most of them on 7x7 or 14x14 planes, so both the
 * per-element and the per-call costs show.  Here every value stays in a
 * register, the tail is one masked vector, and when src and dst do not
 * overlap the run's range is taken in the same sweep (a separate range pass
 * reads the run twice): the exactness check then comes after the pass,
 * which is harmless since a declined run is recomputed stage by stage from
 * the unchanged src.
 */
/* A channel's operands (they differ channel by channel in atoms8_pass; the
 * rest of xcvt_k is the layer's). */
struct xcvt_op {
    __m256i op_max, op_min, op_sum, mv, bias;
};

struct xcvt_k {
    struct xcvt_op op;
    __m256i xhalf, prelu, relu;
    __m256i scale, offset, chalf, lo, hi, sat_lo, sat_hi;
    __m128i xsh, csh;
};

/* (x + op_sum) * mv + half = x * mv + (op_sum * mv + half) modulo 2^32:
 * the constant term of the X stage's product plus its rounding half when
 * neither MAX/MIN nor PReLU needs the ALU result on its own (the forms
 * without XCVT_FULL).  xcvt_exact keeps the true value within int32, so the
 * wrapped sum is that value. */
static int32_t xcvt_bias(const struct sdp_lane_x_cfg *p, int32_t av, int32_t mv)
{
    return (int32_t)(((uint32_t)av & p->sum_mask) * (uint32_t)mv + (uint32_t)p->mul_shift.half);
}

/* A channel's operands of ALU operand av and MUL operand mv. */
DLA_LANES_AVX2_ATTR static void xcvt_op_init(struct xcvt_op *o, const struct sdp_lane_x_cfg *p,
                                             int32_t av, int32_t mv)
{
    const uint32_t u = (uint32_t)av;
    /* sdp_lane_x32's operands of a register value: constants of the run */
    const uint32_t op_max = (u & p->max_mask) | (UINT32_C(0x80000000) & ~p->max_mask);
    const uint32_t op_min = (u & p->min_mask) | (UINT32_C(0x7fffffff) & ~p->min_mask);
    o->op_max = _mm256_set1_epi32((int32_t)op_max);
    o->op_min = _mm256_set1_epi32((int32_t)op_min);
    o->op_sum = _mm256_set1_epi32((int32_t)(u & p->sum_mask));
    o->mv = _mm256_set1_epi32(mv);
    o->bias = _mm256_set1_epi32(xcvt_bias(p, av, mv));
}

DLA_LANES_AVX2_ATTR static void xcvt_k_init(struct xcvt_k *k, const struct sdp_lane_x_cfg *p,
                                            const struct sdp_lane_cvt_narrow *q, int32_t av,
                                            int32_t mv)
{
    xcvt_op_init(&k->op, p, av, mv);
    k->xhalf = _mm256_set1_epi32((int32_t)(uint32_t)p->mul_shift.half);
    k->xsh = _mm_cvtsi32_si128((int)p->mul_shift.shift);
    k->prelu = _mm256_set1_epi32(p->prelu ? -1 : 0);
    k->relu = _mm256_set1_epi32(p->relu_floor);
    k->scale = _mm256_set1_epi32((int32_t)q->scale);
    k->offset = _mm256_set1_epi32((int32_t)q->offset_scaled);
    k->chalf = _mm256_set1_epi32((int32_t)q->half);
    k->csh = _mm_cvtsi32_si128((int)q->shift);
    k->lo = _mm256_set1_epi32(q->lo);
    k->hi = _mm256_set1_epi32(q->hi);
    k->sat_lo = _mm256_set1_epi32(-65536);
    k->sat_hi = _mm256_set1_epi32(65535);
}

/* Forms of the fused pass, constants where it is inlined: XCVT_XS the X
 * truncation is not 0, XCVT_CS the converter's shift is not 0, XCVT_FULL
 * the ALU is MAX/MIN or PReLU is on (else those steps pass the value),
 * XCVT_CID the converter multiplies by 1 with offset and shift 0 (a
 * convolution requantised by BS, as the compiler emits it), XCVT_NOSAT no
 * saturation counting (atoms8_avx2 proves afterwards that there was none,
 * else it runs the counting form), XCVT_RELU (atoms8 only, without
 * XCVT_FULL) ReLU is on: the rounding's sign step is moot (below) and, with
 * XCVT_CID and XCVT_NOSAT, ReLU moves to the packed bytes. */
enum { XCVT_XS = 1, XCVT_CS = 2, XCVT_FULL = 4, XCVT_CID = 8, XCVT_NOSAT = 16, XCVT_RELU = 32 };

/* ReLU on the packed int8 bytes (atoms8_store): max(clamp(t), 0) =
 * clamp(max(t, 0)) as 0 is within int8, one byte max for 32 values; only
 * where nothing between ReLU and the pack reads t. */
#define ATOMS8_BYTE_RELU(form)                                                                \
    (((form) & (XCVT_RELU | XCVT_CID | XCVT_NOSAT)) == (XCVT_RELU | XCVT_CID | XCVT_NOSAT))

/* sdp_lane_x32 on eight lanes with a channel's operands o: the X stage,
 * its ReLU floor included (but where ATOMS8_BYTE_RELU moves it to the
 * packed bytes). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
x_vec_op(const struct xcvt_k *k, const struct xcvt_op *o, __m256i x, const int form)
{
    __m256i t;
    if (form & XCVT_FULL) {
        __m256i a = _mm256_min_epi32(_mm256_max_epi32(x, o->op_max), o->op_min);
        __m256i alu = _mm256_add_epi32(a, o->op_sum);
        t = _mm256_mullo_epi32(alu, o->mv);
        if (form & XCVT_XS) {
            /* magnitude rounded half up, sign restored (sdp_lane_round):
             * with half = 2^(s-1), -floor((-t + half) / 2^s) = floor((t +
             * half - 1) / 2^s) for t < 0, so one arithmetic shift of t +
             * half + (t < 0 ? -1 : 0) gives both signs; xcvt_exact keeps t +
             * half in int32 */
            __m256i m = _mm256_srai_epi32(t, 31);
            t = _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(t, k->xhalf), m), k->xsh);
        }
        /* PReLU passes a non-negative ALU result */
        __m256i pass = _mm256_andnot_si256(_mm256_srai_epi32(alu, 31), k->prelu);
        t = _mm256_blendv_epi8(t, alu, pass);
    } else {
        /* th = t + half in one multiply-add (xcvt_bias); t < 0 exactly when
         * th < half, so the rounding above is one shift of th - (th < half) */
        t = _mm256_add_epi32(_mm256_mullo_epi32(x, o->mv), o->bias);
        if ((form & XCVT_XS) && (form & XCVT_RELU)) {
            /* t < 0 gives floor((t + half) / 2^s) <= floor((half - 1) / 2^s)
             * = 0 without the sign step, as with it: ReLU makes both 0 */
            t = _mm256_sra_epi32(t, k->xsh);
        } else if (form & XCVT_XS) {
            t = _mm256_sra_epi32(_mm256_add_epi32(t, _mm256_cmpgt_epi32(k->xhalf, t)), k->xsh);
        }
    }
    if (!ATOMS8_BYTE_RELU(form)) {
        t = _mm256_max_epi32(t, k->relu);
    }
    return t;
}

/* sdp_lane_cvt32 on eight lanes; the lanes' saturation flags (all ones) in
 * *sat.  `clamp` (a constant): the result clamped to [lo, hi]; without it
 * the caller's saturating packs to int8 clamp to [-128, 127] (atoms8_pass,
 * whose converter's range is exactly that). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
cvt_vec(const struct xcvt_k *k, __m256i t, __m256i *sat, const int form, const int clamp)
{
    __m256i v = t;
    if (!(form & XCVT_CID)) {
        v = _mm256_sub_epi32(_mm256_mullo_epi32(t, k->scale), k->offset);
    }
    __m256i r = v, f = v;
    if ((form & XCVT_CS) && (form & XCVT_NOSAT)) {
        /* round half away from zero in one add: (v + half - (v < 0)) >> s,
         * arithmetic (|v| + half within int32: narrow_range) */
        r = _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(v, k->chalf),
                                              _mm256_srai_epi32(v, 31)),
                             k->csh);
    } else if (form & XCVT_CS) {
        __m256i m = _mm256_srai_epi32(v, 31);
        __m256i vm = _mm256_xor_si256(v, m);
        __m256i mag = _mm256_sub_epi32(vm, m);
        r = _mm256_srl_epi32(_mm256_add_epi32(mag, k->chalf), k->csh);
        r = _mm256_sub_epi32(_mm256_xor_si256(r, m), m);
        f = _mm256_xor_si256(_mm256_srl_epi32(vm, k->csh), m);
    }
    if (form & XCVT_NOSAT) {
        *sat = _mm256_setzero_si256();
    } else {
        *sat = _mm256_or_si256(_mm256_cmpgt_epi32(k->sat_lo, f), _mm256_cmpgt_epi32(r, k->sat_hi));
    }
    return clamp ? _mm256_min_epi32(_mm256_max_epi32(r, k->lo), k->hi) : r;
}

/* sdp_lane_x32 then sdp_lane_cvt32 on eight lanes (x_vec_op, cvt_vec). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
xcvt_vec_op(const struct xcvt_k *k, const struct xcvt_op *o, __m256i x, __m256i *sat,
            const int form, const int clamp)
{
    return cvt_vec(k, x_vec_op(k, o, x, form), sat, form, clamp);
}

/* xcvt_vec_op with the layer's own operands (k->op). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
xcvt_vec(const struct xcvt_k *k, __m256i x, __m256i *sat, const int form, const int clamp)
{
    return xcvt_vec_op(k, &k->op, x, sat, form, clamp);
}

/* The pass over n > 0 elements; the input range in *lo, *hi when `ranged`
 * (constants after inlining); returns the saturated elements. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) uint32_t
xcvt_pass_avx2(const struct xcvt_k *k, const int32_t *src, int32_t *dst, size_t n, int32_t *lo,
               int32_t *hi, const int form, const int ranged)
{
    __m256i cnt = _mm256_setzero_si256(), s;
    __m256i rlo = _mm256_set1_epi32(src[0]), rhi = rlo;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(src + i));
        if (ranged) {
            rlo = _mm256_min_epi32(rlo, x);
            rhi = _mm256_max_epi32(rhi, x);
        }
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), xcvt_vec(k, x, &s, form, 1));
        cnt = _mm256_sub_epi32(cnt, s);
    }
    if (i < n) { /* the tail as one masked vector; its padding lanes count nothing */
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(n - i)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256i x = _mm256_maskload_epi32(src + i, mask);
        if (ranged) {
            x = _mm256_blendv_epi8(_mm256_set1_epi32(src[0]), x, mask);
            rlo = _mm256_min_epi32(rlo, x);
            rhi = _mm256_max_epi32(rhi, x);
        }
        _mm256_maskstore_epi32(dst + i, mask, xcvt_vec(k, x, &s, form, 1));
        cnt = _mm256_sub_epi32(cnt, _mm256_and_si256(s, mask));
    }
    if (ranged) {
        *lo = hmin8(rlo);
        *hi = hmax8(rhi);
    }
    return (uint32_t)hsum8(cnt);
}

/* Is the fused pass exact for inputs in [lo, hi]?  Then *bound bounds the
 * magnitude of the X stage's outputs (x_narrow_bound). */
static int xcvt_exact_bound(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,
                            int32_t lo, int32_t hi, int32_t alo, int32_t ahi, int32_t mlo,
                            int32_t mhi, int64_t *bound)
{
    /* bound < 2^(31 - shift): the product plus half below 2^31 (xcvt_vec's
     * rounding adds them in int32) */
    return x_narrow_bound(p, lo, hi, alo, ahi, mlo, mhi, bound) && -*bound >= c->narrow_lo &&
           *bound <= c->narrow_hi && *bound <= (INT32_MAX >> p->mul_shift.shift);
}

static int xcvt_exact(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c, int32_t lo,
                      int32_t hi, int32_t av, int32_t mv)
{
    int64_t bound;
    return xcvt_exact_bound(p, c, lo, hi, av, av, mv, mv, &bound);
}

/* xcvt_exact, and *quiet cleared unless no input in [lo, hi] raises the
 * converter's saturation flag: every X output lies in [-bound, bound], so
 * within [quiet_lo, quiet_hi] is enough. */
static int xcvt_exact_quiet(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,
                            int32_t lo, int32_t hi, int32_t av, int32_t mv, int *quiet)
{
    int64_t bound;
    if (!xcvt_exact_bound(p, c, lo, hi, av, av, mv, mv, &bound)) {
        return 0;
    }
    *quiet &= -bound >= c->quiet_lo && bound <= c->quiet_hi;
    return 1;
}

/* Every combination of the forms' flags (XCVT_CID excludes XCVT_CS): one
 * case of a switch per form, so each gets its own loop.
 * Without DLA_SPECIALIZE (arith/lanes.h: the sanitizer and fuzz builds)
 * every dispatcher below calls its pass once with the form as a variable:
 * ~130 instrumented copies of the loops fewer. */
#define XCVT_EACH_FORM(CASE) \
    CASE(0); \
    CASE(XCVT_XS); \
    CASE(XCVT_CS); \
    CASE(XCVT_XS | XCVT_CS); \
    CASE(XCVT_FULL); \
    CASE(XCVT_FULL | XCVT_XS); \
    CASE(XCVT_FULL | XCVT_CS); \
    CASE(XCVT_FULL | XCVT_XS | XCVT_CS); \
    CASE(XCVT_CID); \
    CASE(XCVT_CID | XCVT_XS); \
    CASE(XCVT_CID | XCVT_FULL); \
    CASE(XCVT_CID | XCVT_FULL | XCVT_XS);

/* One loop per form (XCVT_CID excludes XCVT_CS). */
#define XCVT_FORM(f)                                                                      \
    case f:                                                                               \
        return ranged ? xcvt_pass_avx2(k, src, dst, n, lo, hi, f, 1)                      \
                      : xcvt_pass_avx2(k, src, dst, n, lo, hi, f, 0)

DLA_LANES_AVX2_ATTR static __attribute__((noinline)) uint32_t
xcvt_pass_any_avx2(const struct xcvt_k *k, const int32_t *src,
                                                      int32_t *dst, size_t n, int32_t *lo,
                                                      int32_t *hi, int form, int ranged)
{
#if !DLA_SPECIALIZE
    return xcvt_pass_avx2(k, src, dst, n, lo, hi, form, ranged);
#else
    switch (form) {
        XCVT_EACH_FORM(XCVT_FORM)
    default:
        return 0; /* not reached: the forms above are every combination */
    }
#endif
}
#undef XCVT_FORM

/* The form of a layer's X stage and converter. */
static int xcvt_form(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt_narrow *q)
{
    int form = p->mul_shift.shift != 0 ? XCVT_XS : 0;
    form |= q->shift != 0 ? XCVT_CS : 0;
    form |= p->max_mask || p->min_mask || p->prelu ? XCVT_FULL : 0;
    form |= q->scale == 1 && q->offset_scaled == 0 && q->shift == 0 ? XCVT_CID : 0;
    return form;
}

DLA_LANES_AVX2_ATTR static int xcvt_avx2(const struct sdp_lane_x_cfg *p,
                                         const struct sdp_lane_cvt *c, const int32_t *src,
                                         int32_t *dst, size_t n, int32_t av, int32_t mv,
                                         uint32_t *sat)
{
    if (n == 0 || !c->narrow_ok) {
        return 0;
    }
    struct xcvt_k k;
    xcvt_k_init(&k, p, &c->narrow, av, mv);
    const int form = xcvt_form(p, &c->narrow);
    const uintptr_t s0 = (uintptr_t)src, d0 = (uintptr_t)dst, bytes = n * sizeof(int32_t);
    int32_t lo = INT32_MIN, hi = INT32_MAX; /* (a range no layer is exact on) */
    if (s0 + bytes <= d0 || d0 + bytes <= s0) { /* apart: range and pass in one sweep */
        uint32_t s = xcvt_pass_any_avx2(&k, src, dst, n, &lo, &hi, form, 1);
        if (!xcvt_exact(p, c, lo, hi, av, mv)) {
            return 0;
        }
        *sat = s;
        return 1;
    }
    run_range_avx2(src, n, &lo, &hi);
    if (!xcvt_exact(p, c, lo, hi, av, mv)) {
        return 0;
    }
    *sat = xcvt_pass_any_avx2(&k, src, dst, n, &lo, &hi, form, 0);
    return 1;
}
#endif

#if defined(DLA_LANES_X86)
/*
 * Eight channels' outputs of eight pixels (r[l]: channel l, lane j: pixel
 * j; every value within int8) as eight atoms of 8 bytes: out[j * 8 + l].
 * The saturating packs keep the values; the byte shuffle turns each
 * 128-bit lane's 4 x 4 block (channel-major) pixel-major.
 */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
atoms8_store(const __m256i r[8], uint8_t *out, const int byte_relu)
{
    const __m256i t = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4,
                                       8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m256i q0 = _mm256_packs_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
    __m256i q1 = _mm256_packs_epi16(_mm256_packs_epi32(r[4], r[5]), _mm256_packs_epi32(r[6], r[7]));
    q0 = _mm256_shuffle_epi8(q0, t); /* pixels 0-3 | 4-7, channels 0-3 each */
    q1 = _mm256_shuffle_epi8(q1, t); /* channels 4-7 */
    if (byte_relu) {
        q0 = _mm256_max_epi8(q0, _mm256_setzero_si256());
        q1 = _mm256_max_epi8(q1, _mm256_setzero_si256());
    }
    __m256i lo = _mm256_unpacklo_epi32(q0, q1), hi = _mm256_unpackhi_epi32(q0, q1);
    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(out + 32), _mm256_permute2x128_si256(lo, hi, 0x31));
}

/* Pixels [j0, j1) of the surface (see dla_sdp_lanes_x_cvt_atoms8), in one
 * form; the input range of all its channels into *lo, *hi (one range for
 * the eight: per-channel ones would not fit the registers). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) uint32_t
atoms8_pass(const struct xcvt_k *k, const struct xcvt_op o[8], const int32_t *src, size_t plane,
            unsigned real, size_t j0,
            size_t j1, uint8_t *dst, int32_t *lo, int32_t *hi, const int form)
{
    __m256i cnt = _mm256_setzero_si256(), s, r[8];
    __m256i rlo = _mm256_set1_epi32(src[j0]), rhi = rlo;
    if (real < 8) { /* the zero planes are inputs too */
        rlo = _mm256_min_epi32(rlo, _mm256_setzero_si256());
        rhi = _mm256_max_epi32(rhi, _mm256_setzero_si256());
    }
    size_t j = j0;
    for (; j + 8 <= j1; j += 8) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < 8; l++) {
            __m256i x = l < real ? _mm256_loadu_si256((const __m256i *)(const void *)(src + l * plane + j))
                                 : _mm256_setzero_si256();
            rlo = _mm256_min_epi32(rlo, x);
            rhi = _mm256_max_epi32(rhi, x);
            r[l] = xcvt_vec_op(k, &o[l], x, &s, form, 0);
            if (!(form & XCVT_NOSAT)) {
                cnt = _mm256_sub_epi32(cnt, s);
            }
        }
        atoms8_store(r, dst + j * 8, ATOMS8_BYTE_RELU(form));
    }
    if (j < j1) { /* the last pixels as masked vectors; padding lanes count nothing */
        const size_t rem = j1 - j;
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)rem),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        uint8_t tmp[64];
        for (unsigned l = 0; l < 8; l++) {
            __m256i x = l < real ? _mm256_maskload_epi32(src + l * plane + j, mask)
                                 : _mm256_setzero_si256();
            __m256i xr = _mm256_blendv_epi8(rlo, x, mask); /* padding: a value already seen */
            rlo = _mm256_min_epi32(rlo, xr);
            rhi = _mm256_max_epi32(rhi, xr);
            r[l] = xcvt_vec_op(k, &o[l], x, &s, form, 0);
            cnt = _mm256_sub_epi32(cnt, _mm256_and_si256(s, mask));
        }
        atoms8_store(r, tmp, ATOMS8_BYTE_RELU(form));
        for (size_t q = 0; q < rem; q++) { /* an atom a move: a memcpy of rem * 8 is a call */
            _mm_storel_epi64((__m128i *)(void *)(dst + (j + q) * 8),
                             _mm_loadl_epi64((const __m128i *)(const void *)(tmp + q * 8)));
        }
    }
    *lo = hmin8(rlo);
    *hi = hmax8(rhi);
    return (uint32_t)hsum8(cnt);
}

/*
 * atoms8's dispatch, one per instruction set: a pass compiled for each
 * form the converter takes (XCVT_EACH_FORM, with and without saturation
 * counting) and, with eight real channels, the hot forms without the
 * channel test.  NAME(K, OP) is the dispatcher over PASS.
 */
#define ATOMS8_FORM(f)                                                                    \
    case f:                                                                               \
        return ATOMS8_PASS(k, o, src, plane, real, j0, j1, dst, lo, hi, f);               \
    case (f) | XCVT_NOSAT:                                                                \
        return ATOMS8_PASS(k, o, src, plane, real, j0, j1, dst, lo, hi, (f) | XCVT_NOSAT)

#define ATOMS8_FORM8(f)                                                                   \
    case f:                                                                               \
        return ATOMS8_PASS(k, o, src, plane, 8, j0, j1, dst, lo, hi, f)

/* The dispatcher's signature (both forms of ATOMS8_DISPATCH below). */
#define ATOMS8_HEAD(ATTR, NAME, K, OP)                                                    \
    ATTR static __attribute__((noinline)) uint32_t NAME(                                  \
        const K *k, const OP o[8], const int32_t *src, size_t plane, unsigned real,       \
        size_t j0, size_t j1, uint8_t *dst, int32_t *lo, int32_t *hi, int form)
#if !DLA_SPECIALIZE
#define ATOMS8_DISPATCH(ATTR, NAME, K, OP)                                                \
    ATOMS8_HEAD(ATTR, NAME, K, OP)                                                        \
    {                                                                                     \
        return ATOMS8_PASS(k, o, src, plane, real, j0, j1, dst, lo, hi, form);            \
    }
#else
#define ATOMS8_DISPATCH(ATTR, NAME, K, OP)                                                \
    ATOMS8_HEAD(ATTR, NAME, K, OP)                                                        \
    {                                                                                     \
        if (real == 8) { /* eight real channels: no channel test in the loop */          \
            switch (form) {                                                               \
                ATOMS8_FORM8(XCVT_RELU | XCVT_CID | XCVT_XS | XCVT_NOSAT);                \
                ATOMS8_FORM8(XCVT_CID | XCVT_XS | XCVT_NOSAT);                            \
            default:                                                                      \
                break;                                                                    \
            }                                                                             \
        }                                                                                 \
        switch (form) {                                                                   \
            XCVT_EACH_FORM(ATOMS8_FORM);                                                  \
            /* ReLU after a convolution's requantisation (MobileNetV2's most) */         \
            ATOMS8_FORM(XCVT_RELU | XCVT_CID | XCVT_XS);                                  \
            ATOMS8_FORM(XCVT_RELU | XCVT_CID);                                            \
        default:                                                                          \
            *lo = INT32_MIN; /* not reached; a range no layer is exact on */              \
            *hi = INT32_MAX;                                                              \
            return 0;                                                                     \
        }                                                                                 \
    }
#endif

#define ATOMS8_PASS atoms8_pass
ATOMS8_DISPATCH(DLA_LANES_AVX2_ATTR, atoms8_any, struct xcvt_k, struct xcvt_op)
#undef ATOMS8_PASS

/* Whether every channel is exact on its own inputs' range: the pass
 * computes each lane with its channel's operands only, so when the range of
 * all eight is too wide for one of them (a fully connected layer's few
 * outputs: one pixel of channels far apart) each channel's own range still
 * decides whether its values are the stage-by-stage ones. */
DLA_LANES_AVX2_ATTR static int atoms8_channels_exact(const struct sdp_lane_x_cfg *p,
                                                     const struct sdp_lane_cvt *c,
                                                     const int32_t *src, size_t plane,
                                                     unsigned real, size_t j0, size_t j1,
                                                     const int32_t av[8], const int32_t mv[8])
{
    int32_t lo[8], hi[8];
    channel_ranges_avx2(src, plane, real, j0, j1, lo, hi);
    for (unsigned l = 0; l < 8; l++) {
        if (!xcvt_exact(p, c, lo[l], hi[l], av[l], mv[l])) {
            return 0;
        }
    }
    return 1;
}

/* The eight channels' ALU operands' range [*alo, *ahi] and MUL operands'
 * [*mlo, *mhi]. */
static void operand_ranges8(const int32_t av[8], const int32_t mv[8], int32_t *alo, int32_t *ahi,
                            int32_t *mlo, int32_t *mhi)
{
    *alo = *ahi = av[0];
    *mlo = *mhi = mv[0];
    for (unsigned l = 1; l < 8; l++) {
        *alo = av[l] < *alo ? av[l] : *alo;
        *ahi = av[l] > *ahi ? av[l] : *ahi;
        *mlo = mv[l] < *mlo ? mv[l] : *mlo;
        *mhi = mv[l] > *mhi ? mv[l] : *mhi;
    }
}

/* One bound for the eight channels: x_narrow_bound is monotone in the
 * operands' ranges, so exact and quiet with the ALU operands within [min
 * av, max av] and the MUL ones within [min mv, max mv] holds for each
 * channel's own.  1 (*exact, *quiet set) when it settles both; else the
 * caller checks channel by channel. */
static int atoms8_jointly_exact_quiet(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,
                                      int32_t lo, int32_t hi, const int32_t av[8],
                                      const int32_t mv[8], int *exact, int *quiet)
{
    int32_t alo, ahi, mlo, mhi;
    operand_ranges8(av, mv, &alo, &ahi, &mlo, &mhi);
    int64_t bound;
    if (!xcvt_exact_bound(p, c, lo, hi, alo, ahi, mlo, mhi, &bound) || -bound < c->quiet_lo ||
        bound > c->quiet_hi) {
        return 0;
    }
    *exact = *quiet = 1;
    return 1;
}

/* xcvt_form plus XCVT_RELU where atoms8_any has a loop for it. */
static int atoms8_form(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt_narrow *q)
{
    const int form = xcvt_form(p, q);
    const int relu = p->relu_floor == 0 && (form & ~XCVT_XS) == XCVT_CID;
    return form | (relu ? XCVT_RELU : 0);
}

/* After a pass without saturation counting over inputs in [lo, hi] (the
 * range of all eight channels): 0 when some channel is not exact in 32-bit
 * lanes (run the channels one by one), 1 when all are exact and none can
 * saturate (the pass stands), 2 when all are exact but saturation is not
 * ruled out (run the counting form). */
static int atoms8_verdict(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,
                          const int32_t *src, size_t plane, unsigned real, size_t j0, size_t j1,
                          const int32_t av[8], const int32_t mv[8], int32_t lo, int32_t hi)
{
    int shared, quiet; /* every channel exact on the eight channels' range */
    if (!atoms8_jointly_exact_quiet(p, c, lo, hi, av, mv, &shared, &quiet)) {
        shared = quiet = 1;
        for (unsigned l = 0; l < 8 && shared; l++) {
            shared = xcvt_exact_quiet(p, c, lo, hi, av[l], mv[l], &quiet);
        }
    }
    if (!shared && !atoms8_channels_exact(p, c, src, plane, real, j0, j1, av, mv)) {
        return 0;
    }
    return shared && quiet ? 1 : 2;
}

/* The int8 packs clamp (xcvt_vec without `clamp`): the converter's range
 * must be int8's. */
static int atoms8_takes(const struct sdp_lane_cvt *c, unsigned real, size_t j0, size_t j1)
{
    return j1 > j0 && c->narrow_ok && c->narrow.lo == -128 && c->narrow.hi == 127 && real <= 8;
}

/*
 * atoms8 on one instruction set: the layer's constants in k, each
 * channel's operands in o, a pass without saturation counting, then the
 * verdict on the range it saw (atoms8_verdict): kept, run again counting,
 * or refused (0: the caller converts channel by channel).
 */
#define ATOMS8_ENTRY(ATTR, NAME, K, OP, K_INIT, OP_INIT, ANY)                              \
    ATTR static int NAME(const struct sdp_lane_x_cfg *p, const struct sdp_lane_cvt *c,      \
                         const int32_t *src, size_t plane, unsigned real, size_t j0,        \
                         size_t j1, const int32_t av[8], const int32_t mv[8], uint8_t *dst, \
                         uint32_t *sat)                                                     \
    {                                                                                       \
        if (!atoms8_takes(c, real, j0, j1)) {                                               \
            return 0;                                                                       \
        }                                                                                   \
        K k;                                                                                \
        OP o[8];                                                                            \
        int32_t lo, hi;                                                                     \
        K_INIT(&k, p, &c->narrow, av, mv);                                                  \
        for (unsigned l = 0; l < 8; l++) {                                                  \
            OP_INIT(&o[l], p, av[l], mv[l]);                                                \
        }                                                                                   \
        const int form = atoms8_form(p, &c->narrow);                                        \
        uint32_t s = ANY(&k, o, src, plane, real, j0, j1, dst, &lo, &hi, form | XCVT_NOSAT); \
        const int verdict = atoms8_verdict(p, c, src, plane, real, j0, j1, av, mv, lo, hi); \
        if (verdict == 0) {                                                                 \
            return 0;                                                                       \
        }                                                                                   \
        if (verdict == 2 && sat) { /* saturation not ruled out: count it (if wanted) */    \
            s = ANY(&k, o, src, plane, real, j0, j1, dst, &lo, &hi, form);                  \
        }                                                                                   \
        if (sat) {                                                                          \
            *sat = s;                                                                       \
        }                                                                                   \
        return 1;                                                                           \
    }

/* AVX2's constants take the first channel's operands (its lanes hold
 * per-lane ones: xcvt_op) */
#define ATOMS8_K_INIT_AVX2(k, p, narrow, av, mv) xcvt_k_init(k, p, narrow, (av)[0], (mv)[0])
ATOMS8_ENTRY(DLA_LANES_AVX2_ATTR, atoms8_avx2, struct xcvt_k, struct xcvt_op, ATOMS8_K_INIT_AVX2,
             xcvt_op_init, atoms8_any)
#undef ATOMS8_K_INIT_AVX2

/* xcvt_vec over one pixel's eight channels (lane l: channel l). */
#define PIXEL8_FORM(f)                                                                    \
    case f:                                                                               \
        return xcvt_vec(k, x, sat, f, 0)

DLA_LANES_AVX2_ATTR static __attribute__((noinline)) __m256i
pixel8_any(const struct xcvt_k *k, __m256i x, __m256i *sat, int form)
{
#if !DLA_SPECIALIZE
    return xcvt_vec(k, x, sat, form, 0);
#else
    switch (form) {
        XCVT_EACH_FORM(PIXEL8_FORM)
    default:
        *sat = _mm256_setzero_si256(); /* not reached: every combination is above */
        return x;
    }
#endif
}
#undef PIXEL8_FORM

/* One xcvt_k whose per-channel fields (the ALU operand's three forms and
 * the MUL operand) differ lane by lane: lane l with av[l], mv[l]. */
DLA_LANES_AVX2_ATTR static void xcvt_k_init_lanes(struct xcvt_k *k,
                                                  const struct sdp_lane_x_cfg *p,
                                                  const struct sdp_lane_cvt_narrow *q,
                                                  const int32_t av[8], const int32_t mv[8])
{
    int32_t op_max[8], op_min[8], op_sum[8], bias[8];
    xcvt_k_init(k, p, q, 0, 0);
    for (unsigned l = 0; l < 8; l++) { /* as xcvt_k_init */
        const uint32_t u = (uint32_t)av[l];
        op_max[l] = (int32_t)((u & p->max_mask) | (UINT32_C(0x80000000) & ~p->max_mask));
        op_min[l] = (int32_t)((u & p->min_mask) | (UINT32_C(0x7fffffff) & ~p->min_mask));
        op_sum[l] = (int32_t)(u & p->sum_mask);
        bias[l] = xcvt_bias(p, av[l], mv[l]);
    }
    k->op.op_max = _mm256_loadu_si256((const __m256i *)(const void *)op_max);
    k->op.op_min = _mm256_loadu_si256((const __m256i *)(const void *)op_min);
    k->op.op_sum = _mm256_loadu_si256((const __m256i *)(const void *)op_sum);
    k->op.mv = _mm256_loadu_si256((const __m256i *)(const void *)mv);
    k->op.bias = _mm256_loadu_si256((const __m256i *)(const void *)bias);
}

DLA_LANES_AVX2_ATTR static int pixel8_avx2(const struct sdp_lane_x_cfg *p,
                                           const struct sdp_lane_cvt *c, const int32_t *src,
                                           unsigned real, const int32_t av[8],
                                           const int32_t mv[8], uint8_t *dst, uint32_t *sat)
{
    if (!c->narrow_ok || c->narrow.lo != -128 || c->narrow.hi != 127 || real > 8 || real == 0) {
        return 0; /* (as atoms8_avx2) */
    }
    int32_t v[8] = {0}; /* the channels past `real` read zeros */
    memcpy(v, src, real * sizeof(*v));
    for (unsigned l = 0; l < 8; l++) { /* each channel on its own input */
        if (!xcvt_exact(p, c, v[l], v[l], av[l], mv[l])) {
            return 0;
        }
    }
    struct xcvt_k k;
    xcvt_k_init_lanes(&k, p, &c->narrow, av, mv);
    __m256i s;
    __m256i r = pixel8_any(&k, _mm256_loadu_si256((const __m256i *)(const void *)v), &s,
                           xcvt_form(p, &c->narrow));
    /* int32 -> int8 by saturating packs: the clamp to [-128, 127] */
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storel_epi64((__m128i *)(void *)dst, _mm_packs_epi16(w, w));
    *sat = (uint32_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(s)));
    return 1;
}
#endif

#if defined(DLA_LANES_X86)
/*
 * The AVX-512 form of the fused pass into int8 atoms: sixteen pixels of a
 * channel a step (twice atoms8_pass's), the last pixels as masked vectors
 * (loads that touch no byte past the plane, stores of whole 8-byte atoms
 * under a mask) and the saturation flags as mask registers.  The values
 * are xcvt_vec_op's, step for step in 16 lanes.
 */
/* A channel's operands as scalars: the pass broadcasts them where it uses
 * them (an embedded broadcast of a memory operand, or a register hoisted
 * out of the loop), so that a call on a small plane does not first store
 * forty 64-byte vectors. */
struct xcvt_op512 {
    int32_t op_max, op_min, op_sum, mv, bias;
};

struct xcvt_k512 {
    __m512i xhalf, relu, scale, offset, chalf, sat_lo, sat_hi;
    __mmask16 prelu; /* all ones with PReLU */
    __m128i xsh, csh;
};

static void xcvt_op512_init(struct xcvt_op512 *o, const struct sdp_lane_x_cfg *p, int32_t av,
                            int32_t mv)
{
    const uint32_t u = (uint32_t)av; /* as xcvt_op_init */
    o->op_max = (int32_t)((u & p->max_mask) | (UINT32_C(0x80000000) & ~p->max_mask));
    o->op_min = (int32_t)((u & p->min_mask) | (UINT32_C(0x7fffffff) & ~p->min_mask));
    o->op_sum = (int32_t)(u & p->sum_mask);
    o->mv = mv;
    o->bias = xcvt_bias(p, av, mv);
}

DLA_LANES_AVX512_ATTR static void xcvt_k512_init(struct xcvt_k512 *k,
                                                 const struct sdp_lane_x_cfg *p,
                                                 const struct sdp_lane_cvt_narrow *q)
{
    k->xhalf = _mm512_set1_epi32((int32_t)(uint32_t)p->mul_shift.half);
    k->xsh = _mm_cvtsi32_si128((int)p->mul_shift.shift);
    k->prelu = p->prelu ? (__mmask16)0xffff : (__mmask16)0;
    k->relu = _mm512_set1_epi32(p->relu_floor);
    k->scale = _mm512_set1_epi32((int32_t)q->scale);
    k->offset = _mm512_set1_epi32((int32_t)q->offset_scaled);
    k->chalf = _mm512_set1_epi32((int32_t)q->half);
    k->csh = _mm_cvtsi32_si128((int)q->shift);
    k->sat_lo = _mm512_set1_epi32(-65536);
    k->sat_hi = _mm512_set1_epi32(65535);
}

/* xcvt_vec_op's X stage on sixteen lanes (xcvt_vec512's first half). */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
x_vec512(const struct xcvt_k512 *k, const struct xcvt_op512 *o, __m512i x, const int form)
{
    const __m512i one = _mm512_set1_epi32(1);
    __m512i t;
    if (form & XCVT_FULL) {
        __m512i a = _mm512_min_epi32(_mm512_max_epi32(x, _mm512_set1_epi32(o->op_max)),
                                     _mm512_set1_epi32(o->op_min));
        __m512i alu = _mm512_add_epi32(a, _mm512_set1_epi32(o->op_sum));
        t = _mm512_mullo_epi32(alu, _mm512_set1_epi32(o->mv));
        if (form & XCVT_XS) { /* (xcvt_vec_op's rounding) */
            __m512i m = _mm512_srai_epi32(t, 31);
            t = _mm512_sra_epi32(_mm512_add_epi32(_mm512_add_epi32(t, k->xhalf), m), k->xsh);
        }
        /* PReLU passes a non-negative ALU result */
        __mmask16 pass = _mm512_mask_cmpge_epi32_mask(k->prelu, alu, _mm512_setzero_si512());
        t = _mm512_mask_mov_epi32(t, pass, alu);
    } else {
        t = _mm512_add_epi32(_mm512_mullo_epi32(x, _mm512_set1_epi32(o->mv)),
                             _mm512_set1_epi32(o->bias));
        if ((form & XCVT_XS) && (form & XCVT_RELU)) {
            t = _mm512_sra_epi32(t, k->xsh);
        } else if (form & XCVT_XS) { /* th - (th < half), shifted */
            t = _mm512_sra_epi32(
                _mm512_mask_sub_epi32(t, _mm512_cmplt_epi32_mask(t, k->xhalf), t, one), k->xsh);
        }
    }
    if (!ATOMS8_BYTE_RELU(form)) {
        t = _mm512_max_epi32(t, k->relu);
    }
    return t;
}

/* xcvt_vec_op's converter on sixteen lanes (xcvt_vec512's second half);
 * the lanes' saturation flags in *sat. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
cvt_vec512(const struct xcvt_k512 *k, __m512i t, __mmask16 *sat, const int form)
{
    __m512i v = t;
    if (!(form & XCVT_CID)) {
        v = _mm512_sub_epi32(_mm512_mullo_epi32(t, k->scale), k->offset);
    }
    __m512i r = v, f = v;
    if ((form & XCVT_CS) && (form & XCVT_NOSAT)) { /* (as cvt_vec) */
        r = _mm512_sra_epi32(_mm512_add_epi32(_mm512_add_epi32(v, k->chalf),
                                              _mm512_srai_epi32(v, 31)),
                             k->csh);
    } else if (form & XCVT_CS) {
        __m512i m = _mm512_srai_epi32(v, 31);
        __m512i vm = _mm512_xor_si512(v, m);
        __m512i mag = _mm512_sub_epi32(vm, m);
        r = _mm512_srl_epi32(_mm512_add_epi32(mag, k->chalf), k->csh);
        r = _mm512_sub_epi32(_mm512_xor_si512(r, m), m);
        f = _mm512_xor_si512(_mm512_srl_epi32(vm, k->csh), m);
    }
    if (form & XCVT_NOSAT) {
        *sat = 0;
    } else {
        *sat = _mm512_cmpgt_epi32_mask(k->sat_lo, f) | _mm512_cmpgt_epi32_mask(r, k->sat_hi);
    }
    return r;
}

/* xcvt_vec_op (without `clamp`: the int8 packs clamp) on sixteen lanes; the
 * lanes' saturation flags in *sat. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
xcvt_vec512(const struct xcvt_k512 *k, const struct xcvt_op512 *o, __m512i x, __mmask16 *sat,
            const int form)
{
    return cvt_vec512(k, x_vec512(k, o, x, form), sat, form);
}

/* atoms8_store on sixteen pixels: out[j * 8 + l] for the pixels j whose bit
 * is set in `atoms` (bit j: pixel j's 8-byte atom). */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) void
atoms8_store512(const __m512i r[8], uint8_t *out, const int byte_relu, const __mmask16 atoms,
                const int all)
{
    const __m512i t = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    __m512i q0 = _mm512_packs_epi16(_mm512_packs_epi32(r[0], r[1]), _mm512_packs_epi32(r[2], r[3]));
    __m512i q1 = _mm512_packs_epi16(_mm512_packs_epi32(r[4], r[5]), _mm512_packs_epi32(r[6], r[7]));
    q0 = _mm512_shuffle_epi8(q0, t); /* 128-bit lane L: pixels 4L..4L+3, channels 0-3 each */
    q1 = _mm512_shuffle_epi8(q1, t); /* channels 4-7 */
    if (byte_relu) {
        q0 = _mm512_max_epi8(q0, _mm512_setzero_si512());
        q1 = _mm512_max_epi8(q1, _mm512_setzero_si512());
    }
    /* 64-bit atoms: lo pixels 0 1 4 5 8 9 12 13, hi pixels 2 3 6 7 10 11 14 15 */
    __m512i lo = _mm512_unpacklo_epi32(q0, q1), hi = _mm512_unpackhi_epi32(q0, q1);
    __m512i a = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi);
    __m512i b = _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi);
    if (all) {
        _mm512_storeu_si512((void *)out, a);
        _mm512_storeu_si512((void *)(out + 64), b);
    } else {
        _mm512_mask_storeu_epi64((void *)out, (__mmask8)atoms, a);
        _mm512_mask_storeu_epi64((void *)(out + 64), (__mmask8)(atoms >> 8), b);
    }
}

/* Keep v in a register: a plane's 64-byte loads are rarely aligned (a 7x7
 * plane is 196 bytes), and one that crosses a cache line costs about as
 * much as two; gcc otherwise folds the load into the range's min and max
 * as well, reading every vector three times. */
#define DLA_LANES_IN_REGISTER(v) __asm__("" : "+v"(v))

/* atoms8_pass in sixteen lanes. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) uint32_t
atoms8_pass512(const struct xcvt_k512 *k, const struct xcvt_op512 o[8], const int32_t *src,
               size_t plane, unsigned real, size_t j0, size_t j1, uint8_t *dst, int32_t *lo,
               int32_t *hi, const int form)
{
    const __m512i one = _mm512_set1_epi32(1);
    __m512i cnt = _mm512_setzero_si512(), r[8];
    __m512i rlo = _mm512_set1_epi32(src[j0]), rhi = rlo;
    __mmask16 s;
    if (real < 8) { /* the zero planes are inputs too */
        rlo = _mm512_min_epi32(rlo, _mm512_setzero_si512());
        rhi = _mm512_max_epi32(rhi, _mm512_setzero_si512());
    }
    size_t j = j0;
    for (; j + 16 <= j1; j += 16) {
#pragma GCC unroll 8
        for (unsigned l = 0; l < 8; l++) {
            __m512i x = l < real ? _mm512_loadu_si512((const void *)(src + l * plane + j))
                                 : _mm512_setzero_si512();
            DLA_LANES_IN_REGISTER(x);
            rlo = _mm512_min_epi32(rlo, x);
            rhi = _mm512_max_epi32(rhi, x);
            r[l] = xcvt_vec512(k, &o[l], x, &s, form);
            if (!(form & XCVT_NOSAT)) {
                cnt = _mm512_mask_add_epi32(cnt, s, cnt, one);
            }
        }
        atoms8_store512(r, dst + j * 8, ATOMS8_BYTE_RELU(form), 0xffff, 1);
    }
    if (j < j1) { /* the last pixels under a mask; padding lanes count nothing */
        const __mmask16 m = (__mmask16)((1u << (j1 - j)) - 1u);
        for (unsigned l = 0; l < 8; l++) {
            __m512i x = l < real ? _mm512_maskz_loadu_epi32(m, src + l * plane + j)
                                 : _mm512_setzero_si512();
            rlo = _mm512_mask_min_epi32(rlo, m, rlo, x);
            rhi = _mm512_mask_max_epi32(rhi, m, rhi, x);
            r[l] = xcvt_vec512(k, &o[l], x, &s, form);
            cnt = _mm512_mask_add_epi32(cnt, s & m, cnt, one);
        }
        atoms8_store512(r, dst + j * 8, ATOMS8_BYTE_RELU(form), m, 0);
    }
    *lo = _mm512_reduce_min_epi32(rlo);
    *hi = _mm512_reduce_max_epi32(rhi);
    return (uint32_t)_mm512_reduce_add_epi32(cnt);
}

/* atoms8_any's forms in sixteen lanes. */
#define ATOMS8_PASS atoms8_pass512
ATOMS8_DISPATCH(DLA_LANES_AVX512_ATTR, atoms8_any512, struct xcvt_k512, struct xcvt_op512)
#undef ATOMS8_PASS
#undef ATOMS8_DISPATCH
#undef ATOMS8_HEAD
#undef ATOMS8_FORM
#undef ATOMS8_FORM8

#define ATOMS8_K_INIT_512(k, p, narrow, av, mv) xcvt_k512_init(k, p, narrow)
ATOMS8_ENTRY(DLA_LANES_AVX512_ATTR, atoms8_avx512, struct xcvt_k512, struct xcvt_op512,
             ATOMS8_K_INIT_512, xcvt_op512_init, atoms8_any512)
#undef ATOMS8_K_INIT_512
#undef ATOMS8_ENTRY

/*
 * atoms8 in 64-bit products, for what the 32-bit lanes refuse: a
 * convolution whose accumulators times its 15-bit multipliers pass 2^31
 * (ResNet's 7x7 input layer: accumulators to ~2^18, multipliers to 2^15
 * with truncation 25) took the channel-by-channel stages.  X with an ALU
 * sum or bypass and MUL (no MAX/MIN, no PReLU), the identity converter
 * (XCVT_CID: a convolution requantised by BS), 8-bit output: x * mv and
 * the constant (op_sum + 0) * mv in 64-bit lanes, even and odd elements
 * apart (vpmuldq), rounded as sdp_lane_round, saturated to 32 bits, the
 * ReLU floor, the 17-bit flag of the identity converter; exact for every
 * input (|x * mv| < 2^47).
 */
struct wide512 {
    __m512i half, relu, lo32, hi32;
    __m128i sh;
};

/* One channel's sixteen values (x) through X in 64-bit lanes with its MUL
 * operand mv and constant term bias (64-bit lanes), back in 32-bit lanes. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
wide_x512(const struct wide512 *k, __m512i mv, __m512i bias, __m512i x)
{
    __m512i p[2] = {_mm512_mul_epi32(x, mv), _mm512_mul_epi32(_mm512_srli_epi64(x, 32), mv)};
    for (int h = 0; h < 2; h++) {
        __m512i v = _mm512_add_epi64(p[h], bias);
        const __mmask8 neg = _mm512_cmplt_epi64_mask(v, _mm512_setzero_si512());
        __m512i r = _mm512_srl_epi64(_mm512_add_epi64(_mm512_abs_epi64(v), k->half), k->sh);
        r = _mm512_mask_sub_epi64(r, neg, _mm512_setzero_si512(), r);
        r = _mm512_min_epi64(_mm512_max_epi64(r, k->lo32), k->hi32);
        p[h] = _mm512_max_epi64(r, k->relu);
    }
    return _mm512_mask_blend_epi32((__mmask16)0xaaaa, p[0], _mm512_slli_epi64(p[1], 32));
}

/* The X stage's constants (k) and each channel's MUL operand and constant
 * term (x + op) * mop = x * mop + op * mop in 64-bit lanes, for wide_x512. */
DLA_LANES_AVX512_ATTR static void wide512_init(const struct sdp_lane_x_cfg *p,
                                               const int32_t av[8], const int32_t mv[8],
                                               struct wide512 *k, __m512i mvl[8],
                                               __m512i bias[8])
{
    *k = (struct wide512){_mm512_set1_epi64((int64_t)p->mul_shift.half),
                          _mm512_set1_epi64(p->relu_floor), _mm512_set1_epi64(INT32_MIN),
                          _mm512_set1_epi64(INT32_MAX), _mm_cvtsi32_si128((int)p->mul_shift.shift)};
    for (unsigned l = 0; l < 8; l++) {
        mvl[l] = _mm512_set1_epi64(mv[l]);
        bias[l] = _mm512_set1_epi64((int64_t)(int32_t)((uint32_t)av[l] & p->sum_mask) * mv[l]);
    }
}

DLA_LANES_AVX512_ATTR static int atoms8_wide512(const struct sdp_lane_x_cfg *p,
                                                const struct sdp_lane_cvt *c, const int32_t *src,
                                                size_t plane, unsigned real, size_t j0,
                                                size_t j1, const int32_t av[8],
                                                const int32_t mv[8], uint8_t *dst, uint32_t *sat)
{
    if (!atoms8_takes(c, real, j0, j1) || p->max_mask || p->min_mask || p->prelu ||
        !(xcvt_form(p, &c->narrow) & XCVT_CID) || p->mul_shift.shift > 62) {
        return 0;
    }
    struct wide512 k;
    __m512i mvl[8], bias[8];
    wide512_init(p, av, mv, &k, mvl, bias);
    const __m512i flag_lo = _mm512_set1_epi32(-65536), flag_hi = _mm512_set1_epi32(65535);
    __m512i cnt = _mm512_setzero_si512(), r[8];
    for (size_t j = j0; j < j1; j += 16) {
        const size_t n = j1 - j < 16 ? j1 - j : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        for (unsigned l = 0; l < 8; l++) {
            __m512i x = l < real ? _mm512_maskz_loadu_epi32(m, src + l * plane + j)
                                 : _mm512_setzero_si512();
            r[l] = wide_x512(&k, mvl[l], bias[l], x);
            const __mmask16 f = _mm512_cmpgt_epi32_mask(flag_lo, r[l]) |
                                _mm512_cmpgt_epi32_mask(r[l], flag_hi);
            cnt = _mm512_mask_add_epi32(cnt, f & m, cnt, _mm512_set1_epi32(1));
        }
        atoms8_store512(r, dst + j * 8, 0, m, n == 16);
    }
    if (sat) {
        *sat = (uint32_t)_mm512_reduce_add_epi32(cnt);
    }
    return 1;
}

/*
 * atoms8 with a per-element addend (dla_sdp_lanes_x_add_cvt_atoms8): a
 * residual addition fused after a convolution, BS requantising CACC's
 * values, BN adding the shortcut's int8 codes read per element.  Sixteen
 * pixels a step as atoms8_pass512; the addend's 128 bytes (16 atoms) are
 * turned channel-major by a byte shuffle inside each 128-bit lane (two
 * pixels: a word per channel) and one two-source word permute per four
 * channels.
 */
struct addcvt512 {
    struct xcvt_k512 k1, k2; /* BS (no converter); BN's ReLU and the converter */
    __m128i shl;             /* BN's ALU shift of the addend */
    int xs;                  /* BS truncates (XCVT_XS) */
};

/* The addend's atoms of sixteen pixels (a: pixels 0-7, b: 8-15) as two
 * vectors of four channels' 16 bytes each, pixel order. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) void
addend_channels512(__m512i a, __m512i b, __m512i q[2])
{
    const __m512i pair = _mm512_broadcast_i32x4(
        _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15));
    a = _mm512_shuffle_epi8(a, pair); /* 128-bit lane L, word l: channel l of pixels 2L, 2L+1 */
    b = _mm512_shuffle_epi8(b, pair);
    /* word 8c + i of q[h]: channel 4h + c of pixels 2i, 2i+1 (i < 4: from a, else b) */
    const __m512i w0 = _mm512_setr_epi32(0x00080000, 0x00180010, 0x00280020, 0x00380030,
                                         0x00090001, 0x00190011, 0x00290021, 0x00390031,
                                         0x000a0002, 0x001a0012, 0x002a0022, 0x003a0032,
                                         0x000b0003, 0x001b0013, 0x002b0023, 0x003b0033);
    const __m512i w1 = _mm512_add_epi16(w0, _mm512_set1_epi16(4));
    q[0] = _mm512_permutex2var_epi16(a, w0, b);
    q[1] = _mm512_permutex2var_epi16(a, w1, b);
}

/* Channel l's sixteen addend values, sign-extended and shifted. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
addend_lane512(const __m512i q[2], unsigned l, __m128i shl)
{
    __m128i b;
    switch (l & 3u) { /* (the extract's lane is an immediate) */
    case 0: b = _mm512_extracti32x4_epi32(q[l >> 2], 0); break;
    case 1: b = _mm512_extracti32x4_epi32(q[l >> 2], 1); break;
    case 2: b = _mm512_extracti32x4_epi32(q[l >> 2], 2); break;
    default: b = _mm512_extracti32x4_epi32(q[l >> 2], 3); break;
    }
    return _mm512_sll_epi32(_mm512_cvtepi8_epi32(b), shl);
}

/* One step of sixteen pixels (m: the valid ones): BS, the addend, BN's
 * ReLU, the converter; the inputs' range and the saturations counted. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) void
addcvt_step512(const struct addcvt512 *k, const struct xcvt_op512 o[8], const int32_t *src,
               size_t plane, unsigned real, size_t j, const uint8_t *opd, uint8_t *dst,
               __mmask16 m, __m512i *rlo, __m512i *rhi, __m512i *cnt, const int full,
               const int form1, const int form2)
{
    __m512i r[8], q[2];
    __mmask16 s;
    if (full) {
        addend_channels512(_mm512_loadu_si512((const void *)(opd + j * 8)),
                           _mm512_loadu_si512((const void *)(opd + j * 8 + 64)), q);
    } else {
        addend_channels512(_mm512_maskz_loadu_epi64((__mmask8)(m & 0xffu), opd + j * 8),
                           _mm512_maskz_loadu_epi64((__mmask8)(m >> 8), opd + j * 8 + 64), q);
    }
#pragma GCC unroll 8
    for (unsigned l = 0; l < 8; l++) {
        __m512i x = l >= real ? _mm512_setzero_si512()
                    : full    ? _mm512_loadu_si512((const void *)(src + l * plane + j))
                              : _mm512_maskz_loadu_epi32(m, src + l * plane + j);
        if (full) {
            DLA_LANES_IN_REGISTER(x);
            *rlo = _mm512_min_epi32(*rlo, x);
            *rhi = _mm512_max_epi32(*rhi, x);
        } else {
            *rlo = _mm512_mask_min_epi32(*rlo, m, *rlo, x);
            *rhi = _mm512_mask_max_epi32(*rhi, m, *rhi, x);
        }
        __m512i t = x_vec512(&k->k1, &o[l], x, form1);
        t = _mm512_max_epi32(_mm512_add_epi32(t, addend_lane512(q, l, k->shl)), k->k2.relu);
        r[l] = cvt_vec512(&k->k2, t, &s, form2);
        if (!(form2 & XCVT_NOSAT)) {
            *cnt = _mm512_mask_add_epi32(*cnt, s & m, *cnt, _mm512_set1_epi32(1));
        }
    }
    atoms8_store512(r, dst + j * 8, 0, m, full);
}

/* Pixels [j0, j1) in steps of sixteen, the last under a mask; the inputs'
 * range (the zero planes past `real` included) in *lo, *hi; returns the
 * saturations. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) uint32_t
addcvt_pass512(const struct addcvt512 *k, const struct xcvt_op512 o[8], const int32_t *src,
               size_t plane, unsigned real, size_t j0, size_t j1, const uint8_t *opd,
               uint8_t *dst, int32_t *lo, int32_t *hi, const int form1, const int form2)
{
    __m512i cnt = _mm512_setzero_si512(), rlo = _mm512_set1_epi32(src[j0]), rhi = rlo;
    if (real < 8) {
        rlo = _mm512_min_epi32(rlo, _mm512_setzero_si512());
        rhi = _mm512_max_epi32(rhi, _mm512_setzero_si512());
    }
    size_t j = j0;
    for (; j + 16 <= j1; j += 16) {
        addcvt_step512(k, o, src, plane, real, j, opd, dst, (__mmask16)0xffff, &rlo, &rhi, &cnt,
                       1, form1, form2);
    }
    if (j < j1) {
        addcvt_step512(k, o, src, plane, real, j, opd, dst, (__mmask16)((1u << (j1 - j)) - 1u),
                       &rlo, &rhi, &cnt, 0, form1, form2);
    }
    *lo = _mm512_reduce_min_epi32(rlo);
    *hi = _mm512_reduce_max_epi32(rhi);
    return (uint32_t)_mm512_reduce_add_epi32(cnt);
}

/* The converter's forms (with and without saturation counting), BS's
 * truncation or not, eight real channels or fewer: a loop each. */
#define ADDCVT_FORM(f)                                                                    \
    case f:                                                                               \
        return xs ? (real == 8 ? ADDCVT_PASS(k, o, src, plane, 8, j0, j1, opd, dst, lo, hi, \
                                             XCVT_CID | XCVT_NOSAT | XCVT_XS, f)          \
                               : ADDCVT_PASS(k, o, src, plane, real, j0, j1, opd, dst, lo, \
                                             hi, XCVT_CID | XCVT_NOSAT | XCVT_XS, f))     \
                  : ADDCVT_PASS(k, o, src, plane, real, j0, j1, opd, dst, lo, hi,         \
                                XCVT_CID | XCVT_NOSAT, f)
/* NAME(K, OP): the dispatcher over ADDCVT_PASS's forms. */
/* The dispatcher's signature (both forms of ADDCVT_DISPATCH below). */
#define ADDCVT_HEAD(ATTR, NAME, K, OP)                                                    \
    ATTR static __attribute__((noinline)) uint32_t NAME(                                  \
        const K *k, const OP o[8], const int32_t *src, size_t plane, unsigned real,       \
        size_t j0, size_t j1, const uint8_t *opd, uint8_t *dst, int32_t *lo, int32_t *hi, \
        int form2)
#if !DLA_SPECIALIZE
#define ADDCVT_DISPATCH(ATTR, NAME, K, OP)                                                \
    ADDCVT_HEAD(ATTR, NAME, K, OP)                                                        \
    {                                                                                     \
        return ADDCVT_PASS(k, o, src, plane, real, j0, j1, opd, dst, lo, hi,              \
                           XCVT_CID | XCVT_NOSAT | (k->xs ? XCVT_XS : 0), form2);          \
    }
#else
#define ADDCVT_DISPATCH(ATTR, NAME, K, OP)                                                \
    ADDCVT_HEAD(ATTR, NAME, K, OP)                                                        \
    {                                                                                     \
        const int xs = k->xs;                                                             \
        switch (form2) {                                                                  \
            ADDCVT_FORM(0);                                                               \
            ADDCVT_FORM(XCVT_CS);                                                         \
            ADDCVT_FORM(XCVT_CID);                                                        \
            ADDCVT_FORM(XCVT_NOSAT);                                                      \
            ADDCVT_FORM(XCVT_CS | XCVT_NOSAT);                                            \
            ADDCVT_FORM(XCVT_CID | XCVT_NOSAT);                                           \
        default:                                                                          \
            *lo = INT32_MIN; /* not reached: the forms above are every one */             \
            *hi = INT32_MAX;                                                              \
            return 0;                                                                     \
        }                                                                                 \
    }
#endif
#define ADDCVT_PASS addcvt_pass512
ADDCVT_DISPATCH(DLA_LANES_AVX512_ATTR, addcvt_any512, struct addcvt512, struct xcvt_op512)
#undef ADDCVT_PASS

/* Each channel's input range over pixels [j0, j1) (zeros past `real`). */
DLA_LANES_AVX512_ATTR static void channel_ranges512(const int32_t *src, size_t plane,
                                                   unsigned real, size_t j0, size_t j1,
                                                   int32_t lo[8], int32_t hi[8])
{
    for (unsigned l = 0; l < 8; l++) {
        lo[l] = hi[l] = 0;
        if (l >= real) {
            continue;
        }
        const int32_t *p = src + l * plane;
        __m512i a = _mm512_set1_epi32(p[j0]), b = a;
        size_t j = j0;
        for (; j + 16 <= j1; j += 16) {
            __m512i x = _mm512_loadu_si512((const void *)(p + j));
            a = _mm512_min_epi32(a, x);
            b = _mm512_max_epi32(b, x);
        }
        if (j < j1) {
            const __mmask16 m = (__mmask16)((1u << (j1 - j)) - 1u);
            __m512i x = _mm512_maskz_loadu_epi32(m, p + j);
            a = _mm512_mask_min_epi32(a, m, a, x);
            b = _mm512_mask_max_epi32(b, m, b, x);
        }
        lo[l] = _mm512_reduce_min_epi32(a);
        hi[l] = _mm512_reduce_max_epi32(b);
    }
}

/* BS's outputs within [-b1, b1] plus an int8 addend << shl: the sum
 * within int32 (BN's ALU then never saturates, and its multiplier of 1
 * with truncation 0 passes the sum) and the converter exact on the sums'
 * range.  *quiet cleared unless no sum can raise the converter's
 * saturation flag. */
static int addcvt_sum_exact(const struct sdp_lane_cvt *c, int64_t b1, unsigned shl, int *quiet)
{
    const int64_t b2 = b1 + ((int64_t)128 << shl);
    if (b2 > INT32_MAX || -b2 < c->narrow_lo || b2 > c->narrow_hi) {
        return 0;
    }
    *quiet &= -b2 >= c->quiet_lo && b2 <= c->quiet_hi;
    return 1;
}

/* Whether the values of inputs in [lo, hi] with ALU operands in [alo, ahi]
 * and MUL operands in [mlo, mhi] stay exact in 32-bit lanes: BS as the
 * fused pass computes it (xcvt_exact_bound's X part), then
 * addcvt_sum_exact. */
static int addcvt_exact(const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *c,
                        int32_t lo, int32_t hi, int32_t alo, int32_t ahi, int32_t mlo,
                        int32_t mhi, unsigned shl, int *quiet)
{
    int64_t b1;
    if (!x_narrow_bound(x1, lo, hi, alo, ahi, mlo, mhi, &b1) ||
        b1 > (INT32_MAX >> x1->mul_shift.shift)) {
        return 0;
    }
    return addcvt_sum_exact(c, b1, shl, quiet);
}

/* addcvt_exact with BS in 64-bit products (addcvt_wide512): any product
 * of a 33-bit ALU result and a 16-bit operand (< 2^48), rounded by the
 * truncation, then the sum and the converter in 32-bit lanes. */
static int addcvt_wide_exact(const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *c,
                             int32_t lo, int32_t hi, int32_t av, int32_t mv, unsigned shl,
                             int *quiet)
{
    int64_t b1;
    if (x1->mul_shift.shift > 62) {
        return 0;
    }
    if (!x_narrow_bound(x1, lo, hi, av, av, mv, mv, &b1)) { /* b1: the product's magnitude */
        b1 = (int64_t)(((uint64_t)b1 + x1->mul_shift.half) >> x1->mul_shift.shift);
    }
    return addcvt_sum_exact(c, b1, shl, quiet);
}

/* The verdict on a pass over inputs in [lo, hi] (the eight channels'):
 * every channel exact on that range with the operands' ranges, else each on
 * its own inputs' range and operands (a pass over the planes); 0 not exact,
 * 1 exact and quiet, 2 exact but saturation not ruled out. */
typedef void channel_ranges_fn(const int32_t *src, size_t plane, unsigned real, size_t j0,
                               size_t j1, int32_t lo[8], int32_t hi[8]);

static int addcvt_verdict(const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *c,
                          const int32_t *src, size_t plane, unsigned real, size_t j0, size_t j1,
                          const int32_t av[8], const int32_t mv[8], unsigned shl, int32_t lo,
                          int32_t hi, channel_ranges_fn *channel_ranges)
{
    int32_t alo, ahi, mlo, mhi;
    operand_ranges8(av, mv, &alo, &ahi, &mlo, &mhi);
    int quiet = 1;
    if (!addcvt_exact(x1, c, lo, hi, alo, ahi, mlo, mhi, shl, &quiet)) {
        int32_t clo[8], chi[8];
        channel_ranges(src, plane, real, j0, j1, clo, chi);
        quiet = 1;
        for (unsigned l = 0; l < 8; l++) {
            if (!addcvt_exact(x1, c, clo[l], chi[l], av[l], av[l], mv[l], mv[l], shl, &quiet)) {
                return 0;
            }
        }
    }
    return quiet ? 1 : 2;
}

/* The stages this pass takes: BN a sum with its multiplier bypassed
 * (truncation 0, no PReLU), an 8-bit converter, BS without MAX/MIN or
 * PReLU. */
static int addcvt_takes(const struct sdp_lane_x_cfg *x1, const struct sdp_lane_x_cfg *x2,
                        const struct sdp_lane_cvt *c, unsigned real, size_t j0, size_t j1,
                        unsigned shl)
{
    return atoms8_takes(c, real, j0, j1) && shl <= 23 && x2->sum_mask == UINT32_MAX &&
           !x2->max_mask && !x2->min_mask && !x2->prelu && x2->mul_shift.shift == 0 &&
           !x1->max_mask && !x1->min_mask && !x1->prelu;
}

/*
 * addcvt on one instruction set (as ATOMS8_ENTRY): BS's and BN's constants
 * in k, each channel's BS operands in o, a pass without saturation
 * counting, then the verdict on the range it saw (RANGES: the per-channel
 * ranges it may need): kept, run again counting, or refused.
 */
#define ADDCVT_ENTRY(ATTR, NAME, K, OP, K_INIT, OP_INIT, ANY, RANGES)                        \
    ATTR static int NAME(const struct sdp_lane_x_cfg *x1, const struct sdp_lane_x_cfg *x2,     \
                         const struct sdp_lane_cvt *c, const int32_t *src, size_t plane,       \
                         unsigned real, size_t j0, size_t j1, const int32_t av[8],             \
                         const int32_t mv[8], const uint8_t *opd, unsigned shl, uint8_t *dst,  \
                         uint32_t *sat)                                                        \
    {                                                                                          \
        if (!addcvt_takes(x1, x2, c, real, j0, j1, shl)) {                                     \
            return 0;                                                                          \
        }                                                                                      \
        K k;                                                                                   \
        OP o[8];                                                                               \
        K_INIT(&k, x1, x2, &c->narrow, av, mv);                                                \
        k.shl = _mm_cvtsi32_si128((int)shl);                                                   \
        k.xs = x1->mul_shift.shift != 0;                                                       \
        const int form2 = xcvt_form(x2, &c->narrow) & (XCVT_CS | XCVT_CID);                    \
        for (unsigned l = 0; l < 8; l++) {                                                     \
            OP_INIT(&o[l], x1, av[l], mv[l]);                                                  \
        }                                                                                      \
        int32_t lo, hi;                                                                        \
        uint32_t s = ANY(&k, o, src, plane, real, j0, j1, opd, dst, &lo, &hi,                  \
                         form2 | XCVT_NOSAT);                                                  \
        const int verdict =                                                                    \
            addcvt_verdict(x1, c, src, plane, real, j0, j1, av, mv, shl, lo, hi, RANGES);      \
        if (verdict == 0) {                                                                    \
            return 0;                                                                          \
        }                                                                                      \
        if (verdict == 2 && sat) { /* saturation not ruled out: count it */                   \
            s = ANY(&k, o, src, plane, real, j0, j1, opd, dst, &lo, &hi, form2);               \
        }                                                                                      \
        if (sat) {                                                                             \
            *sat = s;                                                                          \
        }                                                                                      \
        return 1;                                                                              \
    }

/* BS's constants and BN's (its ReLU floor, the converter). */
#define ADDCVT_K_INIT_512(k, x1, x2, narrow, av, mv)                                          \
    do {                                                                                       \
        xcvt_k512_init(&(k)->k1, x1, narrow);                                                  \
        xcvt_k512_init(&(k)->k2, x2, narrow);                                                  \
    } while (0)
ADDCVT_ENTRY(DLA_LANES_AVX512_ATTR, addcvt_avx512, struct addcvt512, struct xcvt_op512,
             ADDCVT_K_INIT_512, xcvt_op512_init, addcvt_any512, channel_ranges512)
#undef ADDCVT_K_INIT_512

/*
 * addcvt with BS in 64-bit products, for what the 32-bit lanes refuse: a
 * projection's residual addition whose accumulators times BS's 15-bit
 * multipliers pass 2^31 (MobileNetV2's 7x7x960 -> 160 layers: sums to
 * ~2^17, multipliers to ~2^14.6, truncation 18-19) took the
 * channel-by-channel stages, ~40 us for 7,840 values.  Each channel's
 * range decides first (addcvt_wide_exact); BS as atoms8_wide512 computes
 * it (wide_x512: its ReLU floor, saturation to 32 bits), then the addend,
 * BN's ReLU and the converter as addcvt_step512.
 */
DLA_LANES_AVX512_ATTR static int addcvt_wide512(const struct sdp_lane_x_cfg *x1,
                                                const struct sdp_lane_x_cfg *x2,
                                                const struct sdp_lane_cvt *c, const int32_t *src,
                                                size_t plane, unsigned real, size_t j0,
                                                size_t j1, const int32_t av[8],
                                                const int32_t mv[8], const uint8_t *opd,
                                                unsigned shl, uint8_t *dst, uint32_t *sat)
{
    if (!addcvt_takes(x1, x2, c, real, j0, j1, shl)) {
        return 0;
    }
    int32_t clo[8], chi[8];
    int quiet = 1;
    channel_ranges512(src, plane, real, j0, j1, clo, chi);
    for (unsigned l = 0; l < 8; l++) {
        if (!addcvt_wide_exact(x1, c, clo[l], chi[l], av[l], mv[l], shl, &quiet)) {
            return 0;
        }
    }
    struct wide512 k;
    __m512i mvl[8], bias[8], cnt = _mm512_setzero_si512(), r[8], q[2];
    wide512_init(x1, av, mv, &k, mvl, bias);
    struct xcvt_k512 k2;
    xcvt_k512_init(&k2, x2, &c->narrow);
    const __m128i sh = _mm_cvtsi32_si128((int)shl);
    const int count = sat != NULL && !quiet;
    const int form2 = (xcvt_form(x2, &c->narrow) & (XCVT_CS | XCVT_CID)) |
                      (count ? 0 : XCVT_NOSAT);
    for (size_t j = j0; j < j1; j += 16) {
        const size_t n = j1 - j < 16 ? j1 - j : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        addend_channels512(_mm512_maskz_loadu_epi64((__mmask8)(m & 0xffu), opd + j * 8),
                           _mm512_maskz_loadu_epi64((__mmask8)(m >> 8), opd + j * 8 + 64), q);
        for (unsigned l = 0; l < 8; l++) {
            __m512i x = l < real ? _mm512_maskz_loadu_epi32(m, src + l * plane + j)
                                 : _mm512_setzero_si512();
            __m512i t = wide_x512(&k, mvl[l], bias[l], x);
            __mmask16 s;
            t = _mm512_max_epi32(_mm512_add_epi32(t, addend_lane512(q, l, sh)), k2.relu);
            r[l] = cvt_vec512(&k2, t, &s, form2);
            if (count) {
                cnt = _mm512_mask_add_epi32(cnt, s & m, cnt, _mm512_set1_epi32(1));
            }
        }
        atoms8_store512(r, dst + j * 8, 0, m, n == 16);
    }
    if (sat) {
        *sat = (uint32_t)_mm512_reduce_add_epi32(cnt);
    }
    return 1;
}

/*
 * BS, then BN, then the converter in one pass (x2cvt): a pre-quantized
 * model's requantization in two multipliers in series (the compiler's
 * quantize_two_stage: BS's product untruncated or barely, BN's truncated
 * by ~37 bits, an affine output's offset in the converter), whose BN
 * products pass 2^31 on every input.  The channel-by-channel stages took
 * ~2/3 of such a MobileNetV2's time.  In 64-bit lanes each X stage is
 * wide_x512 and the converter sdp_lane_cvt (wide_cvt512), exact for every
 * input; x2cvt512's forms take 32-bit lanes where a layer allows it.
 */
struct wide_cvt512 {
    __m512i scale, off, half, lo, hi, qlo, rhi;
    __m128i sh;
};

DLA_LANES_AVX512_ATTR static void wide_cvt512_init(const struct sdp_lane_cvt_cfg *p,
                                                   struct wide_cvt512 *k)
{
    *k = (struct wide_cvt512){_mm512_set1_epi64(p->scale), _mm512_set1_epi64(p->offset_scaled),
                              _mm512_set1_epi64((int64_t)p->shift.half),
                              _mm512_set1_epi64(p->lo), _mm512_set1_epi64(p->hi),
                              _mm512_set1_epi64(-65536), _mm512_set1_epi64(65535),
                              _mm_cvtsi32_si128((int)p->shift.shift)};
}

/* Sixteen 32-bit values through the converter (sdp_lane_cvt), back in
 * 32-bit lanes; f[0] the even lanes' 17-bit saturation flags, f[1] the odd
 * ones'. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
wide_cvt512(const struct wide_cvt512 *k, __m512i x, __mmask8 f[2])
{
    __m512i p[2] = {_mm512_mul_epi32(x, k->scale),
                    _mm512_mul_epi32(_mm512_srli_epi64(x, 32), k->scale)};
    for (int h = 0; h < 2; h++) {
        const __m512i v = _mm512_sub_epi64(p[h], k->off);
        const __mmask8 neg = _mm512_cmplt_epi64_mask(v, _mm512_setzero_si512());
        __m512i r = _mm512_srl_epi64(_mm512_add_epi64(_mm512_abs_epi64(v), k->half), k->sh);
        r = _mm512_mask_sub_epi64(r, neg, _mm512_setzero_si512(), r);
        const __m512i q = _mm512_sra_epi64(v, k->sh); /* floor, as sdp_lane_floor */
        f[h] = _mm512_cmplt_epi64_mask(q, k->qlo) | _mm512_cmpgt_epi64_mask(r, k->rhi);
        p[h] = _mm512_min_epi64(_mm512_max_epi64(r, k->lo), k->hi);
    }
    return _mm512_mask_blend_epi32((__mmask16)0xaaaa, p[0], _mm512_slli_epi64(p[1], 32));
}

/* An X stage wide_x512 computes: an ALU sum or bypass, no MAX/MIN, no
 * PReLU. */
static int wide_x_takes(const struct sdp_lane_x_cfg *p)
{
    return !p->max_mask && !p->min_mask && !p->prelu && p->mul_shift.shift <= 62;
}

/*
 * x2cvt's constants.  Three forms cut the 64-bit work where a layer allows
 * it, each exact: BS in 32-bit lanes where every channel's range keeps its
 * ALU result and product within 32 bits (x_narrow); BN without its
 * saturation to 32 bits where its truncation is 17 or more (|(x + op) *
 * mop| < 2^48: the rounded value fits); the converter in 32-bit lanes where
 * it only subtracts its offset (scale 1, shift 0, |offset| < 2^30: a
 * pre-quantized model's zero point), its clamp and flag bounds moved by the
 * offset.
 */
struct x2cvt512 {
    struct wide512 k1, k2;
    struct wide_cvt512 kc;
    __m512i mvl1[8], bias1[8], mvl2[8], bias2[8];
    __m512i a1[8], m1[8], half1, relu1; /* BS in 32-bit lanes */
    __m512i relu2;                        /* BN's floor (without the saturation) */
    __m128i sh1;
    __m512i off, clo, chi, flo, fhi; /* the offset-only converter */
};

/* One channel's sixteen values through BS, BN and the converter; the
 * saturation flags counted into cnt (16 lanes, `off` form) or cnt64. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
x2cvt_step512(const struct x2cvt512 *k, unsigned l, __m512i x, __mmask16 m, __m512i *cnt,
              __m512i *cnt64, const int narrow1, const int small2, const int off_only)
{
    __m512i t;
    if (narrow1) { /* sdp_lane_x32: wraps to the true value, rounds the magnitude */
        const __m512i p = _mm512_mullo_epi32(_mm512_add_epi32(x, k->a1[l]), k->m1[l]);
        const __mmask16 neg = _mm512_cmplt_epi32_mask(p, _mm512_setzero_si512());
        t = _mm512_srl_epi32(_mm512_add_epi32(_mm512_abs_epi32(p), k->half1), k->sh1);
        t = _mm512_max_epi32(_mm512_mask_sub_epi32(t, neg, _mm512_setzero_si512(), t), k->relu1);
    } else {
        t = wide_x512(&k->k1, k->mvl1[l], k->bias1[l], x);
    }
    if (small2) { /* wide_x512 less the saturation to 32 bits, which cannot act */
        const struct wide512 *k2 = &k->k2;
        __m512i p[2] = {_mm512_mul_epi32(t, k->mvl2[l]),
                        _mm512_mul_epi32(_mm512_srli_epi64(t, 32), k->mvl2[l])};
        for (int h = 0; h < 2; h++) {
            const __m512i v = _mm512_add_epi64(p[h], k->bias2[l]);
            const __mmask8 neg = _mm512_cmplt_epi64_mask(v, _mm512_setzero_si512());
            __m512i r = _mm512_srl_epi64(_mm512_add_epi64(_mm512_abs_epi64(v), k2->half), k2->sh);
            p[h] = _mm512_mask_sub_epi64(r, neg, _mm512_setzero_si512(), r);
        }
        t = _mm512_mask_blend_epi32((__mmask16)0xaaaa, p[0], _mm512_slli_epi64(p[1], 32));
        t = _mm512_max_epi32(t, k->relu2);
    } else {
        t = wide_x512(&k->k2, k->mvl2[l], k->bias2[l], t);
    }
    if (off_only) {
        const __mmask16 f = _mm512_cmplt_epi32_mask(t, k->flo) | _mm512_cmpgt_epi32_mask(t, k->fhi);
        *cnt = _mm512_mask_add_epi32(*cnt, f & m, *cnt, _mm512_set1_epi32(1));
        return _mm512_sub_epi32(_mm512_min_epi32(_mm512_max_epi32(t, k->clo), k->chi), k->off);
    }
    __mmask8 f[2];
    const __m512i r = wide_cvt512(&k->kc, t, f);
    /* the valid pixels among the even lanes (2i < n) and the odd ones */
    const unsigned n = (unsigned)__builtin_popcount(m);
    const __mmask8 even = (__mmask8)((1u << ((n + 1) / 2)) - 1u);
    const __mmask8 odd = (__mmask8)((1u << (n / 2)) - 1u);
    *cnt64 = _mm512_mask_add_epi64(*cnt64, f[0] & even, *cnt64, _mm512_set1_epi64(1));
    *cnt64 = _mm512_mask_add_epi64(*cnt64, f[1] & odd, *cnt64, _mm512_set1_epi64(1));
    return r;
}

DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) uint32_t
x2cvt_pass512(const struct x2cvt512 *k, const int32_t *src, size_t plane, unsigned real, size_t j0,
              size_t j1, uint8_t *dst, const int narrow1, const int small2, const int off_only)
{
    __m512i cnt = _mm512_setzero_si512(), cnt64 = _mm512_setzero_si512(), r[8];
    for (size_t j = j0; j < j1; j += 16) {
        const size_t n = j1 - j < 16 ? j1 - j : 16;
        const __mmask16 m = (__mmask16)((1u << n) - 1u);
        for (unsigned l = 0; l < 8; l++) {
            __m512i x = l < real ? _mm512_maskz_loadu_epi32(m, src + l * plane + j)
                                 : _mm512_setzero_si512();
            r[l] = x2cvt_step512(k, l, x, m, &cnt, &cnt64, narrow1, small2, off_only);
        }
        atoms8_store512(r, dst + j * 8, 0, m, n == 16);
    }
    return (uint32_t)_mm512_reduce_add_epi32(cnt) + (uint32_t)_mm512_reduce_add_epi64(cnt64);
}

DLA_LANES_AVX512_ATTR static void x2cvt_init(struct x2cvt512 *k, const struct sdp_lane_x_cfg *x1,
                                             const struct sdp_lane_x_cfg *x2,
                                             const struct sdp_lane_cvt_cfg *c,
                                             const int32_t av1[8], const int32_t mv1[8],
                                             const int32_t av2[8], const int32_t mv2[8])
{
    wide512_init(x1, av1, mv1, &k->k1, k->mvl1, k->bias1);
    wide512_init(x2, av2, mv2, &k->k2, k->mvl2, k->bias2);
    wide_cvt512_init(c, &k->kc);
    for (unsigned l = 0; l < 8; l++) {
        k->a1[l] = _mm512_set1_epi32((int32_t)((uint32_t)av1[l] & x1->sum_mask));
        k->m1[l] = _mm512_set1_epi32(mv1[l]);
    }
    k->half1 = _mm512_set1_epi32((int32_t)(uint32_t)x1->mul_shift.half);
    k->relu1 = _mm512_set1_epi32(x1->relu_floor);
    k->sh1 = _mm_cvtsi32_si128((int)x1->mul_shift.shift);
    k->relu2 = _mm512_set1_epi32(x2->relu_floor);
    const int32_t off = (int32_t)c->offset_scaled; /* (the offset-only form: scale 1) */
    k->off = _mm512_set1_epi32(off);
    k->clo = _mm512_set1_epi32(off + c->lo);
    k->chi = _mm512_set1_epi32(off + c->hi);
    k->flo = _mm512_set1_epi32(off - 65536);
    k->fhi = _mm512_set1_epi32(off + 65535);
}

DLA_LANES_AVX512_ATTR static int x2cvt_wide512(const struct sdp_lane_x_cfg *x1,
                                               const struct sdp_lane_x_cfg *x2,
                                               const struct sdp_lane_cvt *c, const int32_t *src,
                                               size_t plane, unsigned real, size_t j0, size_t j1,
                                               const int32_t av1[8], const int32_t mv1[8],
                                               const int32_t av2[8], const int32_t mv2[8],
                                               uint8_t *dst, uint32_t *sat)
{
    if (j1 <= j0 || real > 8 || c->wide.lo != -128 || c->wide.hi != 127 || !wide_x_takes(x1) ||
        !wide_x_takes(x2)) {
        return 0;
    }
    struct x2cvt512 k;
    x2cvt_init(&k, x1, x2, &c->wide, av1, mv1, av2, mv2);
    int32_t clo[8], chi[8];
    channel_ranges512(src, plane, real, j0, j1, clo, chi);
    int narrow1 = x1->mul_shift.shift <= 31;
    for (unsigned l = 0; l < 8 && narrow1; l++) {
        narrow1 = x_narrow(x1, clo[l], chi[l], av1[l], av1[l], mv1[l], mv1[l]);
    }
    const int small2 = x2->mul_shift.shift >= 17;
    const int64_t off = c->wide.offset_scaled;
    const int off_only = c->wide.scale == 1 && c->wide.shift.shift == 0 && off > -(1 << 30) &&
                         off < (1 << 30);
    uint32_t n;
    if (narrow1 && small2 && off_only) {
        n = x2cvt_pass512(&k, src, plane, real, j0, j1, dst, 1, 1, 1);
    } else if (small2 && off_only) {
        n = x2cvt_pass512(&k, src, plane, real, j0, j1, dst, 0, 1, 1);
    } else {
        n = x2cvt_pass512(&k, src, plane, real, j0, j1, dst, 0, 0, 0);
    }
    if (sat) {
        *sat = n;
    }
    return 1;
}

/*
 * The fused residual pass in AVX2 registers: eight pixels a step as
 * atoms8_pass, the values step for step addcvt_step512's.  The addend's 64
 * bytes (8 atoms) are turned channel-major by a byte shuffle inside each
 * 128-bit lane (two pixels: a word per channel), a word interleave of the
 * two halves (four pixels: a dword per channel) and a dword permute, so
 * that each channel's eight codes are one 8-byte half of a 128-bit lane.
 */
struct addcvt_k {
    struct xcvt_k k1, k2; /* BS (no converter); BN's ReLU and the converter */
    __m128i shl;          /* BN's ALU shift of the addend */
    int xs;               /* BS truncates (XCVT_XS) */
};

/* The addend's atoms of eight pixels at p as two vectors: q[0] channels
 * 0-3, q[1] channels 4-7, eight bytes a channel in pixel order. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
addend_channels(const uint8_t *p, __m256i q[2])
{
    const __m256i pair = _mm256_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
                                          0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    __m256i a = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(const void *)p), pair);
    __m256i b = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)),
                                    pair);
    /* word l of each 128-bit lane: channel l of a pixel pair */
    __m256i c = _mm256_permute2x128_si256(a, b, 0x20); /* pixels 0-1 | 4-5 */
    __m256i d = _mm256_permute2x128_si256(a, b, 0x31); /* pixels 2-3 | 6-7 */
    /* dword c of each 128-bit lane: channel c (+4 in hi) of four pixels */
    __m256i lo = _mm256_unpacklo_epi16(c, d), hi = _mm256_unpackhi_epi16(c, d);
    const __m256i idx = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    q[0] = _mm256_permutevar8x32_epi32(lo, idx);
    q[1] = _mm256_permutevar8x32_epi32(hi, idx);
}

/* Channel l's eight addend values, sign-extended and shifted. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
addend_lane(const __m256i q[2], unsigned l, __m128i shl)
{
    __m128i h = (l & 2u) ? _mm256_extracti128_si256(q[l >> 2], 1) : _mm256_castsi256_si128(q[l >> 2]);
    if (l & 1u) {
        h = _mm_unpackhi_epi64(h, h);
    }
    return _mm256_sll_epi32(_mm256_cvtepi8_epi32(h), shl);
}

/* Eight pixels from j (`mask`: the valid lanes, all of them when `full`,
 * the addend's atoms of the valid ones then in `opd8`): BS, the addend,
 * BN's ReLU, the converter, into r; the inputs' range and the saturations
 * counted. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
addcvt_step(const struct addcvt_k *k, const struct xcvt_op o[8], const int32_t *src, size_t plane,
            unsigned real, size_t j, const uint8_t *opd8, __m256i r[8], __m256i mask,
            __m256i *rlo, __m256i *rhi, __m256i *cnt, const int full, const int form1,
            const int form2)
{
    __m256i q[2], s;
    addend_channels(opd8, q);
#pragma GCC unroll 8
    for (unsigned l = 0; l < 8; l++) {
        __m256i x = l >= real ? _mm256_setzero_si256()
                    : full    ? _mm256_loadu_si256((const __m256i *)(const void *)(src + l * plane + j))
                              : _mm256_maskload_epi32(src + l * plane + j, mask);
        /* padding lanes: a value already seen */
        __m256i xr = full ? x : _mm256_blendv_epi8(*rlo, x, mask);
        *rlo = _mm256_min_epi32(*rlo, xr);
        *rhi = _mm256_max_epi32(*rhi, xr);
        __m256i t = x_vec_op(&k->k1, &o[l], x, form1);
        t = _mm256_max_epi32(_mm256_add_epi32(t, addend_lane(q, l, k->shl)), k->k2.relu);
        r[l] = cvt_vec(&k->k2, t, &s, form2, 0);
        if (!(form2 & XCVT_NOSAT)) {
            *cnt = _mm256_sub_epi32(*cnt, full ? s : _mm256_and_si256(s, mask));
        }
    }
}

/* addcvt_pass512 in eight lanes. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) uint32_t
addcvt_pass_avx2(const struct addcvt_k *k, const struct xcvt_op o[8], const int32_t *src,
                 size_t plane, unsigned real, size_t j0, size_t j1, const uint8_t *opd,
                 uint8_t *dst, int32_t *lo, int32_t *hi, const int form1, const int form2)
{
    __m256i cnt = _mm256_setzero_si256(), rlo = _mm256_set1_epi32(src[j0]), rhi = rlo, r[8];
    if (real < 8) { /* the zero planes are inputs too */
        rlo = _mm256_min_epi32(rlo, _mm256_setzero_si256());
        rhi = _mm256_max_epi32(rhi, _mm256_setzero_si256());
    }
    const __m256i all = _mm256_set1_epi32(-1);
    size_t j = j0;
    for (; j + 8 <= j1; j += 8) {
        addcvt_step(k, o, src, plane, real, j, opd + j * 8, r, all, &rlo, &rhi, &cnt, 1, form1,
                    form2);
        atoms8_store(r, dst + j * 8, 0);
    }
    if (j < j1) { /* the last pixels: their atoms through buffers, the planes masked */
        const size_t rem = j1 - j;
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)rem),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        uint8_t in8[64] = {0}, out8[64];
        for (size_t q = 0; q < rem; q++) { /* an atom a move (as atoms8_pass) */
            _mm_storel_epi64((__m128i *)(void *)(in8 + q * 8),
                             _mm_loadl_epi64((const __m128i *)(const void *)(opd + (j + q) * 8)));
        }
        addcvt_step(k, o, src, plane, real, j, in8, r, mask, &rlo, &rhi, &cnt, 0, form1, form2);
        atoms8_store(r, out8, 0);
        for (size_t q = 0; q < rem; q++) {
            _mm_storel_epi64((__m128i *)(void *)(dst + (j + q) * 8),
                             _mm_loadl_epi64((const __m128i *)(const void *)(out8 + q * 8)));
        }
    }
    *lo = hmin8(rlo);
    *hi = hmax8(rhi);
    return (uint32_t)hsum8(cnt);
}

#define ADDCVT_PASS addcvt_pass_avx2
ADDCVT_DISPATCH(DLA_LANES_AVX2_ATTR, addcvt_any_avx2, struct addcvt_k, struct xcvt_op)
#undef ADDCVT_PASS
#undef ADDCVT_DISPATCH
#undef ADDCVT_HEAD
#undef ADDCVT_FORM

/* addcvt_avx512 in eight lanes (the per-lane operands in o: k's own unused). */
#define ADDCVT_K_INIT_AVX2(k, x1, x2, narrow, av, mv)                                         \
    do {                                                                                       \
        xcvt_k_init(&(k)->k1, x1, narrow, (av)[0], (mv)[0]);                                   \
        xcvt_k_init(&(k)->k2, x2, narrow, 0, 1);                                               \
    } while (0)
ADDCVT_ENTRY(DLA_LANES_AVX2_ATTR, addcvt_avx2, struct addcvt_k, struct xcvt_op,
             ADDCVT_K_INIT_AVX2, xcvt_op_init, addcvt_any_avx2, channel_ranges_avx2)
#undef ADDCVT_K_INIT_AVX2
#undef ADDCVT_ENTRY
#endif

int dla_sdp_lanes_x_cvt_pixel8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x,
                               const struct sdp_lane_cvt *cvt, const int32_t *src, unsigned real,
                               const int32_t av[8], const int32_t mv[8], uint8_t *dst,
                               uint32_t *sat)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        return pixel8_avx2(x, cvt, src, real, av, mv, dst, sat);
    }
#endif
    (void)isa, (void)x, (void)cvt, (void)src, (void)real, (void)av, (void)mv, (void)dst;
    (void)sat;
    return 0;
}

int dla_sdp_lanes_x_cvt_atoms8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x,
                               const struct sdp_lane_cvt *cvt, const int32_t *src, size_t plane,
                               unsigned real, size_t j0, size_t j1, const int32_t av[8],
                               const int32_t mv[8], uint8_t *dst, uint32_t *sat)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return atoms8_avx512(x, cvt, src, plane, real, j0, j1, av, mv, dst, sat) ||
               atoms8_wide512(x, cvt, src, plane, real, j0, j1, av, mv, dst, sat);
    }
    if (dla_lanes_avx2_up(isa)) {
        return atoms8_avx2(x, cvt, src, plane, real, j0, j1, av, mv, dst, sat);
    }
#endif
    (void)isa, (void)x, (void)cvt, (void)src, (void)plane, (void)real, (void)j0, (void)j1;
    (void)av, (void)mv, (void)dst, (void)sat;
    return 0;
}

int dla_sdp_lanes_x_add_cvt_atoms8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x1,
                                   const struct sdp_lane_x_cfg *x2, const struct sdp_lane_cvt *cvt,
                                   const int32_t *src, size_t plane, unsigned real, size_t j0,
                                   size_t j1, const int32_t av[8], const int32_t mv[8],
                                   const uint8_t *opd, unsigned shl, uint8_t *dst, uint32_t *sat)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return addcvt_avx512(x1, x2, cvt, src, plane, real, j0, j1, av, mv, opd, shl, dst, sat) ||
               addcvt_wide512(x1, x2, cvt, src, plane, real, j0, j1, av, mv, opd, shl, dst, sat);
    }
    if (dla_lanes_avx2_up(isa)) {
        return addcvt_avx2(x1, x2, cvt, src, plane, real, j0, j1, av, mv, opd, shl, dst, sat);
    }
#endif
    (void)isa, (void)x1, (void)x2, (void)cvt, (void)src, (void)plane, (void)real, (void)j0;
    (void)j1, (void)av, (void)mv, (void)opd, (void)shl, (void)dst, (void)sat;
    return 0;
}

int dla_sdp_lanes_x2_cvt_atoms8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x1,
                                const struct sdp_lane_x_cfg *x2, const struct sdp_lane_cvt *cvt,
                                const int32_t *src, size_t plane, unsigned real, size_t j0,
                                size_t j1, const int32_t av1[8], const int32_t mv1[8],
                                const int32_t av2[8], const int32_t mv2[8], uint8_t *dst,
                                uint32_t *sat)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return x2cvt_wide512(x1, x2, cvt, src, plane, real, j0, j1, av1, mv1, av2, mv2, dst, sat);
    }
#endif
    (void)isa, (void)x1, (void)x2, (void)cvt, (void)src, (void)plane, (void)real, (void)j0;
    (void)j1, (void)av1, (void)mv1, (void)av2, (void)mv2, (void)dst, (void)sat;
    return 0;
}

int dla_sdp_lanes_x_cvt(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x,
                        const struct sdp_lane_cvt *cvt, const int32_t *src, int32_t *dst,
                        size_t n, int32_t av, int32_t mv, uint32_t *sat)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        return xcvt_avx2(x, cvt, src, dst, n, av, mv, sat);
    }
#endif
    (void)isa;
    return xcvt_generic(x, cvt, src, dst, n, av, mv, sat);
}

/* ---- BS, BN and the converter in one pass ------------------------------------------ */

/* The identity X stage (ALU, MUL, ReLU bypassed; truncation 0) with ALU
 * operand 0 and MUL operand 1: sdp_lane_x32 returns its input. */
static void x_identity(struct sdp_lane_x_cfg *l)
{
    dla_sdp_lane_x_init(l, SDP_LANE_ALU_BYPASS, 1, 0, 1, 0);
}

/* The chain's stages (ch->x), 1 when both stay in 32-bit lanes; [*lo, *hi]
 * bounds what they pass to the converter. */
static int chain_stages(struct sdp_lane_chain *ch, const struct sdp_lane_x_cfg *x0,
                        const struct sdp_lane_x_cfg *x1, int32_t in_lo, int32_t in_hi,
                        const int32_t op_lo[4], const int32_t op_hi[4], int64_t *lo, int64_t *hi)
{
    const struct sdp_lane_x_cfg *x[2] = {x0, x1};
    *lo = in_lo, *hi = in_hi;
    memset(ch, 0, sizeof(*ch));
    for (int k = 0; k < 2; k++) {
        int64_t bound;
        if (!x[k]) {
            x_identity(&ch->x[k]);
            continue;
        }
        ch->x[k] = *x[k];
        if (!x_narrow_bound(x[k], (int32_t)*lo, (int32_t)*hi, op_lo[2 * k], op_hi[2 * k],
                            op_lo[2 * k + 1], op_hi[2 * k + 1], &bound)) {
            return 0;
        }
        *lo = -bound;
        *hi = bound;
    }
    return 1;
}

int dla_sdp_lane_chain_init(struct sdp_lane_chain *ch, const struct sdp_lane_x_cfg *x0,
                            const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *cvt,
                            int32_t in_lo, int32_t in_hi, const int32_t op_lo[4],
                            const int32_t op_hi[4])
{
    int64_t lo, hi;
    if (!chain_stages(ch, x0, x1, in_lo, in_hi, op_lo, op_hi, &lo, &hi)) {
        return 0;
    }
    ch->cvt = cvt->narrow;
    return cvt->narrow_ok && lo >= cvt->narrow_lo && hi <= cvt->narrow_hi;
}

int dla_sdp_lane_chain_init_wide(struct sdp_lane_chain *ch, const struct sdp_lane_x_cfg *x0,
                                 const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *cvt,
                                 int32_t in_lo, int32_t in_hi, const int32_t op_lo[4],
                                 const int32_t op_hi[4])
{
    int64_t lo, hi;
    if (!chain_stages(ch, x0, x1, in_lo, in_hi, op_lo, op_hi, &lo, &hi) ||
        cvt->wide.lo != -128 || cvt->wide.hi != 127) {
        return 0;
    }
    ch->cvt = cvt->narrow;
    ch->wide = 1;
    ch->wcvt = cvt->wide;
    return 1;
}

/* A wide chain on int8 elements, element by element (the forms without
 * AVX-512): the stages of sdp_lane_x32, the converter of sdp_lane_cvt. */
static uint32_t chain8_wide_generic(const struct sdp_lane_chain *c, const uint8_t *src,
                                    uint8_t *dst, size_t n, const struct sdp_lane_op8 ops[4])
{
    uint32_t sat = 0;
    for (size_t j = 0; j < n; j++) {
        int32_t op[4];
        for (int k = 0; k < 4; k++) {
            op[k] = ops[k].p ? (int32_t)((uint32_t)(int8_t)ops[k].p[j * ops[k].stride]
                                         << ops[k].shl)
                             : ops[k].val;
        }
        int32_t v = sdp_lane_x32(&c->x[0], (int8_t)src[j], op[0], op[1], 1);
        v = sdp_lane_x32(&c->x[1], v, op[2], op[3], 1);
        dst[j] = (uint8_t)sdp_lane_cvt(&c->wcvt, v, &sat);
    }
    return sat;
}

/* Both stages and the converter with their truncations on (a shift of 0
 * rounds to the same value); lanes j < valid count their saturation. */
DLA_LANES_INLINE void chain_block(const struct sdp_lane_chain *c, const int32_t *src, int32_t *dst,
                                  const int32_t *a0, const int32_t *m0, const int32_t *a1,
                                  const int32_t *m1, uint32_t *restrict sat, size_t valid)
{
    _Alignas(64) int32_t t[DLA_LANES_BLOCK];
    for (size_t j = 0; j < DLA_LANES_BLOCK; j++) {
        uint32_t s = 0;
        int32_t v = sdp_lane_x32(&c->x[0], src[j], a0[j], m0[j], 1);
        v = sdp_lane_x32(&c->x[1], v, a1[j], m1[j], 1);
        t[j] = sdp_lane_cvt32(&c->cvt, v, &s, 1);
        sat[j] += s & (uint32_t)(j < valid);
    }
    memcpy(dst, t, sizeof(t));
}

/* An operand given as one value is a block of copies read again for every
 * block (step 0), so that the loop stays one loop and its data in L1. */
DLA_LANES_INLINE uint32_t chain_any(const struct sdp_lane_chain *cfg, const int32_t *src,
                                    int32_t *dst, size_t n, const int32_t *const ops[4],
                                    const int32_t vals[4])
{
    const struct sdp_lane_chain c = *cfg;
    const size_t B = DLA_LANES_BLOCK;
    uint32_t sat[DLA_LANES_BLOCK] = {0};
    _Alignas(64) int32_t bc[4][DLA_LANES_BLOCK];
    const int32_t *op[4];
    size_t step[4];
    for (int k = 0; k < 4; k++) {
        for (size_t j = 0; j < B; j++) {
            bc[k][j] = vals[k];
        }
        op[k] = ops[k] ? ops[k] : bc[k];
        step[k] = ops[k] ? B : 0;
    }
    size_t i = 0;
    for (; i + B <= n; i += B) {
        chain_block(&c, src + i, dst + i, op[0], op[1], op[2], op[3], sat, B);
        for (int k = 0; k < 4; k++) {
            op[k] += step[k];
        }
    }
    if (i < n) {
        _Alignas(64) int32_t t[5][DLA_LANES_BLOCK];
        memset(t, 0, sizeof(t));
        memcpy(t[4], src + i, (n - i) * sizeof(*src));
        for (int k = 0; k < 4; k++) {
            memcpy(t[k], op[k], (step[k] ? n - i : B) * sizeof(int32_t));
        }
        chain_block(&c, t[4], t[4], t[0], t[1], t[2], t[3], sat, n - i);
        memcpy(dst + i, t[4], (n - i) * sizeof(*dst));
    }
    return sum_lanes(sat);
}

static uint32_t chain_generic(const struct sdp_lane_chain *c, const int32_t *src, int32_t *dst,
                              size_t n, const int32_t *const ops[4], const int32_t vals[4])
{
    return chain_any(c, src, dst, n, ops, vals);
}

#if defined(DLA_LANES_X86)
DLA_LANES_AVX2_ATTR static uint32_t chain_avx2(const struct sdp_lane_chain *c, const int32_t *src,
                                               int32_t *dst, size_t n,
                                               const int32_t *const ops[4],
                                               const int32_t vals[4])
{
    return chain_any(c, src, dst, n, ops, vals);
}

/* (as x_avx512) */
DLA_LANES_AVX512_ATTR static uint32_t chain_avx512(const struct sdp_lane_chain *c,
                                                   const int32_t *src, int32_t *dst, size_t n,
                                                   const int32_t *const ops[4],
                                                   const int32_t vals[4])
{
    return chain_any(c, src, dst, n, ops, vals);
}
#endif

uint32_t dla_sdp_lanes_chain(enum dla_lanes_isa isa, const struct sdp_lane_chain *c,
                             const int32_t *src, int32_t *dst, size_t n,
                             const int32_t *const ops[4], const int32_t vals[4])
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return chain_avx512(c, src, dst, n, ops, vals);
    }
    if (dla_lanes_avx2_up(isa)) {
        return chain_avx2(c, src, dst, n, ops, vals);
    }
#endif
    (void)isa;
    return chain_generic(c, src, dst, n, ops, vals);
}

/* ---- the chain on int8 memory elements ----------------------------------------------- */

/* Elements per chunk of the generic form (its int32 copies stay in L1). */
#define CHAIN8_CHUNK 256

/* The generic form: widen, operands, chain and narrow a chunk at a time. */
static uint32_t chain8_generic(const struct sdp_lane_chain *c, const uint8_t *src, uint8_t *dst,
                               size_t n, const struct sdp_lane_op8 ops[4])
{
    _Alignas(64) int32_t buf[5][CHAIN8_CHUNK];
    uint32_t sat = 0;
    for (size_t i = 0; i < n; i += CHAIN8_CHUNK) {
        const size_t m = n - i < CHAIN8_CHUNK ? n - i : CHAIN8_CHUNK;
        const int32_t *op[4];
        int32_t vals[4];
        for (int k = 0; k < 4; k++) {
            vals[k] = ops[k].val;
            op[k] = NULL;
            if (ops[k].p) {
                dla_sdp_lanes_shl_ops(DLA_LANES_GENERIC, ops[k].p + i * ops[k].stride,
                                      ops[k].stride, 1, ops[k].shl, buf[1 + k], m);
                op[k] = buf[1 + k];
            }
        }
        dla_sdp_lanes_widen(DLA_LANES_GENERIC, src + i, 1, buf[0], m);
        sat += dla_sdp_lanes_chain(DLA_LANES_GENERIC, c, buf[0], buf[0], m, op, vals);
        dla_sdp_lanes_narrow(DLA_LANES_GENERIC, buf[0], m, 1, dst + i);
    }
    return sat;
}

#if defined(DLA_LANES_X86)
/*
 * The AVX2 form: eight elements a step, every value in registers (the
 * chain of 32-bit lanes above, with the widening, the operand shifts and
 * the narrowing folded in; ResNet's residual Adds: an int8 input scaled by
 * BS, an int8 operand << 7 added by BN, ReLU, the converter).
 */
struct chain8_stage {
    __m256i max_mask, min_mask, sum_mask, half, prelu, relu;
    __m128i sh;
};

DLA_LANES_AVX2_ATTR static void chain8_stage_init(struct chain8_stage *k,
                                                  const struct sdp_lane_x_cfg *p)
{
    k->max_mask = _mm256_set1_epi32((int32_t)p->max_mask);
    k->min_mask = _mm256_set1_epi32((int32_t)p->min_mask);
    k->sum_mask = _mm256_set1_epi32((int32_t)p->sum_mask);
    k->half = _mm256_set1_epi32((int32_t)(uint32_t)p->mul_shift.half);
    k->sh = _mm_cvtsi32_si128((int)p->mul_shift.shift);
    k->prelu = _mm256_set1_epi32(p->prelu ? -1 : 0);
    k->relu = _mm256_set1_epi32(p->relu_floor);
}

/* sdp_lane_x32 (shifted) on eight lanes with ALU operands u, MUL operands m. */
/* Steps of a stage chain8_x takes (constants where inlined; all of them
 * are exact whatever the stage): CH_FULL the MAX/MIN operands and PReLU,
 * CH_MUL the multiplication, CH_SHIFT the truncation. */
enum { CH_FULL = 1, CH_MUL = 2, CH_SHIFT = 4, CH_ALL = 7 };
/* chain8_vec512's converter form: 0 the 32-bit one, 1 the identity, CVT_WIDE
 * the 64-bit one (a wide chain's). */
#define CVT_WIDE 2

DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
chain8_x(const struct chain8_stage *k, __m256i x, __m256i u, __m256i m, const int steps)
{
    __m256i a = x;
    if (steps & CH_FULL) {
        const __m256i smin = _mm256_set1_epi32(INT32_MIN), smax = _mm256_set1_epi32(INT32_MAX);
        __m256i op_max = _mm256_or_si256(_mm256_and_si256(u, k->max_mask),
                                         _mm256_andnot_si256(k->max_mask, smin));
        __m256i op_min = _mm256_or_si256(_mm256_and_si256(u, k->min_mask),
                                         _mm256_andnot_si256(k->min_mask, smax));
        a = _mm256_min_epi32(_mm256_max_epi32(x, op_max), op_min);
    }
    __m256i alu = _mm256_add_epi32(a, _mm256_and_si256(u, k->sum_mask));
    __m256i t = alu;
    if (steps & CH_MUL) {
        t = _mm256_mullo_epi32(alu, m);
    }
    if (steps & CH_SHIFT) {
        __m256i sg = _mm256_srai_epi32(t, 31);
        __m256i mag = _mm256_sub_epi32(_mm256_xor_si256(t, sg), sg);
        __m256i r = _mm256_srl_epi32(_mm256_add_epi32(mag, k->half), k->sh);
        t = _mm256_sub_epi32(_mm256_xor_si256(r, sg), sg);
    }
    if (steps & CH_FULL) {
        __m256i pass = _mm256_andnot_si256(_mm256_srai_epi32(alu, 31), k->prelu);
        t = _mm256_blendv_epi8(t, alu, pass);
    }
    return _mm256_max_epi32(t, k->relu);
}

/* Eight one-byte components from p (stride 1 or 2), sign-extended,
 * shifted left by sh. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
chain8_load_op(const uint8_t *p, size_t stride, __m128i sh)
{
    __m128i b;
    if (stride == 1) {
        b = _mm_loadl_epi64((const __m128i *)(const void *)p);
    } else {
        const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1,
                                           -1, -1);
        b = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), even);
    }
    return _mm256_sll_epi32(_mm256_cvtepi8_epi32(b), sh);
}

struct chain8_k {
    struct chain8_stage x[2];
    __m256i val[4];
    __m128i shl[4];
    __m256i scale, offset, half, lo, hi, sat_lo, sat_hi;
    __m128i sh;
};

/* Eight elements at offset i (bytes src + i; operand k at ops[k].p + i *
 * stride): the low bytes of the results in the low 8 bytes, the lanes'
 * saturation flags in *sat. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m128i
chain8_vec(const struct chain8_k *k, __m128i in8, const struct sdp_lane_op8 ops[4], size_t i,
           __m256i *sat, const int bn_alu_only, const int steps0, const int steps1,
           const int cvt_id)
{
    __m256i op[4];
    if (bn_alu_only) { /* ResNet's residual Add: the BN ALU operand alone, stride 1 */
        op[0] = k->val[0];
        op[1] = k->val[1];
        op[2] = chain8_load_op(ops[2].p + i, 1, k->shl[2]);
        op[3] = k->val[3];
    } else {
        for (int j = 0; j < 4; j++) {
            op[j] = ops[j].p ? chain8_load_op(ops[j].p + i * ops[j].stride, ops[j].stride,
                                              k->shl[j])
                             : k->val[j];
        }
    }
    __m256i v = _mm256_cvtepi8_epi32(in8);
    v = chain8_x(&k->x[0], v, op[0], op[1], steps0);
    v = chain8_x(&k->x[1], v, op[2], op[3], steps1);
    __m256i r = v, f = v;
    if (!cvt_id) {
        v = _mm256_sub_epi32(_mm256_mullo_epi32(v, k->scale), k->offset);
        __m256i sg = _mm256_srai_epi32(v, 31);
        __m256i vm = _mm256_xor_si256(v, sg);
        r = _mm256_srl_epi32(_mm256_add_epi32(_mm256_sub_epi32(vm, sg), k->half), k->sh);
        r = _mm256_sub_epi32(_mm256_xor_si256(r, sg), sg);
        f = _mm256_xor_si256(_mm256_srl_epi32(vm, k->sh), sg);
    }
    *sat = _mm256_or_si256(_mm256_cmpgt_epi32(k->sat_lo, f), _mm256_cmpgt_epi32(r, k->sat_hi));
    r = _mm256_min_epi32(_mm256_max_epi32(r, k->lo), k->hi);
    /* the low byte of each lane */
    const __m256i low = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         -1, -1);
    __m256i b = _mm256_shuffle_epi8(r, low);
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

/* ResNet's residual Add as the compiler emits it: BS without MAX/MIN or
 * PReLU (its ALU operand and MUL any, truncation any), BN adding the
 * element operand without MAX/MIN, PReLU, multiplication (operand 1) or
 * truncation: chain8_vec's steps left out for it are identities there. */
static int chain8_residual(const struct sdp_lane_chain *c, const struct sdp_lane_op8 ops[4])
{
    const struct sdp_lane_x_cfg *x0 = &c->x[0], *x1 = &c->x[1];
    return !x0->max_mask && !x0->min_mask && !x0->prelu && !x1->max_mask && !x1->min_mask &&
           !x1->prelu && !ops[3].p && ops[3].val == 1 && x1->mul_shift.shift == 0 &&
           x1->mul_shift.half == 0;
}

/* The identity converter (scale 1, offset 0, shift 0). */
static int chain8_cvt_id(const struct sdp_lane_chain *c)
{
    return c->cvt.scale == 1 && c->cvt.offset_scaled == 0 && c->cvt.shift == 0;
}

DLA_LANES_AVX2_ATTR static uint32_t chain8_avx2(const struct sdp_lane_chain *c, const uint8_t *src,
                                                uint8_t *dst, size_t n,
                                                const struct sdp_lane_op8 ops[4])
{
    struct chain8_k k;
    for (int s = 0; s < 2; s++) {
        chain8_stage_init(&k.x[s], &c->x[s]);
    }
    for (int j = 0; j < 4; j++) {
        k.val[j] = _mm256_set1_epi32(ops[j].val);
        k.shl[j] = _mm_cvtsi32_si128((int)ops[j].shl);
    }
    k.scale = _mm256_set1_epi32((int32_t)c->cvt.scale);
    k.offset = _mm256_set1_epi32((int32_t)c->cvt.offset_scaled);
    k.half = _mm256_set1_epi32((int32_t)c->cvt.half);
    k.sh = _mm_cvtsi32_si128((int)c->cvt.shift);
    k.lo = _mm256_set1_epi32(c->cvt.lo);
    k.hi = _mm256_set1_epi32(c->cvt.hi);
    k.sat_lo = _mm256_set1_epi32(-65536);
    k.sat_hi = _mm256_set1_epi32(65535);
    __m256i cnt = _mm256_setzero_si256(), s;
    size_t i = 0;
    /* an operand of stride 2 reads 16 bytes a step, one past its last
     * component: the last step goes through the tail's copies */
    size_t lim = n;
    for (int j = 0; j < 4; j++) {
        lim = ops[j].p && ops[j].stride == 2 && n > 0 ? n - 1 : lim;
    }
    const int bn_alu_only =
        !ops[0].p && !ops[1].p && ops[2].p && ops[2].stride == 1 && !ops[3].p;
    if (bn_alu_only && chain8_residual(c, ops) && chain8_cvt_id(c)) {
        for (; i + 8 <= lim; i += 8) {
            __m128i in = _mm_loadl_epi64((const __m128i *)(const void *)(src + i));
            __m128i out = chain8_vec(&k, in, ops, i, &s, 1, CH_MUL | CH_SHIFT, 0, 1);
            _mm_storel_epi64((__m128i *)(void *)(dst + i), out);
            cnt = _mm256_sub_epi32(cnt, s);
        }
    } else if (bn_alu_only && chain8_residual(c, ops)) {
        for (; i + 8 <= lim; i += 8) {
            __m128i in = _mm_loadl_epi64((const __m128i *)(const void *)(src + i));
            __m128i out = chain8_vec(&k, in, ops, i, &s, 1, CH_MUL | CH_SHIFT, 0, 0);
            _mm_storel_epi64((__m128i *)(void *)(dst + i), out);
            cnt = _mm256_sub_epi32(cnt, s);
        }
    } else if (bn_alu_only) {
        for (; i + 8 <= lim; i += 8) {
            __m128i in = _mm_loadl_epi64((const __m128i *)(const void *)(src + i));
            __m128i out = chain8_vec(&k, in, ops, i, &s, 1, CH_ALL, CH_ALL, 0);
            _mm_storel_epi64((__m128i *)(void *)(dst + i), out);
            cnt = _mm256_sub_epi32(cnt, s);
        }
    }
    for (; i + 8 <= lim; i += 8) {
        __m128i in = _mm_loadl_epi64((const __m128i *)(const void *)(src + i));
        __m128i out = chain8_vec(&k, in, ops, i, &s, 0, CH_ALL, CH_ALL, 0);
        _mm_storel_epi64((__m128i *)(void *)(dst + i), out);
        cnt = _mm256_sub_epi32(cnt, s);
    }
    while (i < n) { /* the tail through zero-padded copies; padding counts nothing */
        const size_t r = n - i < 8 ? n - i : 8;
        uint8_t tin[16] = {0}, top[4][32], tout[16];
        struct sdp_lane_op8 t[4];
        memcpy(tin, src + i, r);
        for (int j = 0; j < 4; j++) {
            t[j] = ops[j];
            if (ops[j].p) {
                memset(top[j], 0, sizeof(top[j]));
                memcpy(top[j], ops[j].p + i * ops[j].stride, (r - 1) * ops[j].stride + 1);
                t[j].p = top[j];
            }
        }
        __m128i out = chain8_vec(&k, _mm_loadl_epi64((const __m128i *)(const void *)tin), t, 0,
                                 &s, 0, CH_ALL, CH_ALL, 0);
        _mm_storel_epi64((__m128i *)(void *)tout, out);
        memcpy(dst + i, tout, r);
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)r),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        cnt = _mm256_sub_epi32(cnt, _mm256_and_si256(s, mask));
        i += r;
    }
    int32_t tc[8];
    _mm256_storeu_si256((__m256i *)(void *)tc, cnt);
    uint32_t total = 0;
    for (int j = 0; j < 8; j++) {
        total += (uint32_t)tc[j];
    }
    return total;
}
#endif

#if defined(DLA_LANES_X86)
/*
 * The AVX-512 form of the chain on int8 elements: sixteen elements a step
 * (chain8_avx2's values in 16 lanes), the tail as one step under masks
 * (byte-masked loads that touch no byte past a run, a masked store)
 * instead of zero-padded copies, the saturation flags as mask registers.
 */
struct chain8_stage512 {
    __m512i max_mask, min_mask, sum_mask, half, relu;
    __mmask16 prelu; /* all ones with PReLU */
    __m128i sh;
};

struct chain8_k512 {
    struct chain8_stage512 x[2];
    __m512i val[4];
    __m128i shl[4];
    __m512i scale, offset, half, lo, hi, sat_lo, sat_hi;
    __m128i sh;
    struct wide_cvt512 wc; /* a wide chain's converter */
};

DLA_LANES_AVX512_ATTR static void chain8_k512_init(struct chain8_k512 *k,
                                                   const struct sdp_lane_chain *c,
                                                   const struct sdp_lane_op8 ops[4])
{
    for (int s = 0; s < 2; s++) {
        const struct sdp_lane_x_cfg *p = &c->x[s];
        struct chain8_stage512 *x = &k->x[s];
        x->max_mask = _mm512_set1_epi32((int32_t)p->max_mask);
        x->min_mask = _mm512_set1_epi32((int32_t)p->min_mask);
        x->sum_mask = _mm512_set1_epi32((int32_t)p->sum_mask);
        x->half = _mm512_set1_epi32((int32_t)(uint32_t)p->mul_shift.half);
        x->sh = _mm_cvtsi32_si128((int)p->mul_shift.shift);
        x->prelu = p->prelu ? (__mmask16)0xffff : (__mmask16)0;
        x->relu = _mm512_set1_epi32(p->relu_floor);
    }
    for (int j = 0; j < 4; j++) {
        k->val[j] = _mm512_set1_epi32(ops[j].val);
        k->shl[j] = _mm_cvtsi32_si128((int)ops[j].shl);
    }
    k->scale = _mm512_set1_epi32((int32_t)c->cvt.scale);
    k->offset = _mm512_set1_epi32((int32_t)c->cvt.offset_scaled);
    k->half = _mm512_set1_epi32((int32_t)c->cvt.half);
    k->sh = _mm_cvtsi32_si128((int)c->cvt.shift);
    k->lo = _mm512_set1_epi32(c->cvt.lo);
    k->hi = _mm512_set1_epi32(c->cvt.hi);
    k->sat_lo = _mm512_set1_epi32(-65536);
    k->sat_hi = _mm512_set1_epi32(65535);
    wide_cvt512_init(&c->wcvt, &k->wc); /* (a wide chain's; zeros otherwise) */
}

/* chain8_x on sixteen lanes. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
chain8_x512(const struct chain8_stage512 *k, __m512i x, __m512i u, __m512i m, const int steps)
{
    __m512i a = x;
    if (steps & CH_FULL) {
        const __m512i smin = _mm512_set1_epi32(INT32_MIN), smax = _mm512_set1_epi32(INT32_MAX);
        __m512i op_max = _mm512_or_si512(_mm512_and_si512(u, k->max_mask),
                                         _mm512_andnot_si512(k->max_mask, smin));
        __m512i op_min = _mm512_or_si512(_mm512_and_si512(u, k->min_mask),
                                         _mm512_andnot_si512(k->min_mask, smax));
        a = _mm512_min_epi32(_mm512_max_epi32(x, op_max), op_min);
    }
    __m512i alu = _mm512_add_epi32(a, _mm512_and_si512(u, k->sum_mask));
    __m512i t = alu;
    if (steps & CH_MUL) {
        t = _mm512_mullo_epi32(alu, m);
    }
    if (steps & CH_SHIFT) {
        __m512i sg = _mm512_srai_epi32(t, 31);
        __m512i mag = _mm512_sub_epi32(_mm512_xor_si512(t, sg), sg);
        __m512i r = _mm512_srl_epi32(_mm512_add_epi32(mag, k->half), k->sh);
        t = _mm512_sub_epi32(_mm512_xor_si512(r, sg), sg);
    }
    if (steps & CH_FULL) { /* PReLU passes a non-negative ALU result */
        __mmask16 pass = _mm512_mask_cmpge_epi32_mask(k->prelu, alu, _mm512_setzero_si512());
        t = _mm512_mask_mov_epi32(t, pass, alu);
    }
    return _mm512_max_epi32(t, k->relu);
}

/* Sixteen one-byte components from p (stride 1 or 2), sign-extended,
 * shifted left by sh; with `all` 0 only the components whose bit is set
 * in m are read (the others are 0). */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m512i
chain8_load_op512(const uint8_t *p, size_t stride, __m128i sh, __mmask16 m, const int all)
{
    __m128i b;
    if (stride == 1) {
        b = all ? _mm_loadu_si128((const __m128i *)(const void *)p) : _mm_maskz_loadu_epi8(m, p);
    } else {
        /* component j is byte 2j: the 16-bit words' low bytes.  Under a
         * mask (the tail's: its r low bits, r >= 1) bytes 0..2r-2 are
         * read, not the last word's high byte past the run. */
        __m256i w;
        if (all) {
            w = _mm256_loadu_si256((const __m256i *)(const void *)p);
        } else {
            const unsigned r = (unsigned)__builtin_popcount((unsigned)m);
            w = _mm256_maskz_loadu_epi8((__mmask32)((UINT64_C(1) << (2 * r - 1)) - 1), p);
        }
        b = _mm256_cvtepi16_epi8(w);
    }
    return _mm512_sll_epi32(_mm512_cvtepi8_epi32(b), sh);
}

/* chain8_vec on sixteen elements at offset i (`all` 0: those of m only):
 * the low bytes of the results, the lanes' saturation flags in *sat. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) __m128i
chain8_vec512(const struct chain8_k512 *k, __m128i in8, const struct sdp_lane_op8 ops[4], size_t i,
              __mmask16 *sat, __mmask16 m, const int all, const int bn_alu_only,
              const int steps0, const int steps1, const int cvt_id)
{
    __m512i op[4];
    if (bn_alu_only) { /* ResNet's residual Add: the BN ALU operand alone, stride 1 */
        op[0] = k->val[0];
        op[1] = k->val[1];
        op[2] = chain8_load_op512(ops[2].p + i, 1, k->shl[2], m, all);
        op[3] = k->val[3];
    } else {
        for (int j = 0; j < 4; j++) {
            op[j] = ops[j].p ? chain8_load_op512(ops[j].p + i * ops[j].stride, ops[j].stride,
                                                 k->shl[j], m, all)
                             : k->val[j];
        }
    }
    __m512i v = _mm512_cvtepi8_epi32(in8);
    v = chain8_x512(&k->x[0], v, op[0], op[1], steps0);
    v = chain8_x512(&k->x[1], v, op[2], op[3], steps1);
    if (cvt_id == CVT_WIDE) { /* the flags of the even and odd lanes back in lane order */
        __mmask8 fw[2];
        const __m512i r = wide_cvt512(&k->wc, v, fw), ones = _mm512_set1_epi64(-1);
        const __m512i fl = _mm512_mask_blend_epi32((__mmask16)0xaaaa,
                                                   _mm512_maskz_mov_epi64(fw[0], ones),
                                                   _mm512_maskz_mov_epi64(fw[1], ones));
        *sat = _mm512_test_epi32_mask(fl, fl);
        return _mm512_cvtepi32_epi8(r);
    }
    __m512i r = v, f = v;
    if (!cvt_id) {
        v = _mm512_sub_epi32(_mm512_mullo_epi32(v, k->scale), k->offset);
        __m512i sg = _mm512_srai_epi32(v, 31);
        __m512i vm = _mm512_xor_si512(v, sg);
        r = _mm512_srl_epi32(_mm512_add_epi32(_mm512_sub_epi32(vm, sg), k->half), k->sh);
        r = _mm512_sub_epi32(_mm512_xor_si512(r, sg), sg);
        f = _mm512_xor_si512(_mm512_srl_epi32(vm, k->sh), sg);
    }
    *sat = _mm512_cmpgt_epi32_mask(k->sat_lo, f) | _mm512_cmpgt_epi32_mask(r, k->sat_hi);
    r = _mm512_min_epi32(_mm512_max_epi32(r, k->lo), k->hi);
    return _mm512_cvtepi32_epi8(r); /* the low byte of each lane */
}

/* Whole steps of sixteen from *i while they end by lim; the saturations
 * added to *cnt. */
DLA_LANES_AVX512_ATTR static inline __attribute__((always_inline)) void
chain8_steps512(const struct chain8_k512 *k, const uint8_t *src, uint8_t *dst,
                const struct sdp_lane_op8 ops[4], size_t *at, size_t lim, uint32_t *cnt,
                const int bn_alu_only, const int steps0, const int steps1, const int cvt_id)
{
    size_t i = *at;
    uint32_t c = 0;
    __mmask16 s;
    for (; i + 16 <= lim; i += 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        __m128i out = chain8_vec512(k, in, ops, i, &s, 0xffff, 1, bn_alu_only, steps0, steps1,
                                    cvt_id);
        _mm_storeu_si128((__m128i *)(void *)(dst + i), out);
        c += (uint32_t)__builtin_popcount((unsigned)s);
    }
    *at = i;
    *cnt += c;
}

DLA_LANES_AVX512_ATTR static uint32_t chain8_avx512(const struct sdp_lane_chain *c,
                                                    const uint8_t *src, uint8_t *dst, size_t n,
                                                    const struct sdp_lane_op8 ops[4])
{
    struct chain8_k512 k;
    chain8_k512_init(&k, c, ops);
    uint32_t cnt = 0;
    size_t i = 0;
    /* an operand of stride 2 reads 32 bytes a step, one past its last
     * component: the last step goes under the tail's masks */
    size_t lim = n;
    for (int j = 0; j < 4; j++) {
        lim = ops[j].p && ops[j].stride == 2 && n > 0 ? n - 1 : lim;
    }
    const int bn_alu_only =
        !ops[0].p && !ops[1].p && ops[2].p && ops[2].stride == 1 && !ops[3].p;
    if (c->wide && bn_alu_only && chain8_residual(c, ops)) { /* a pre-quantized Add */
        chain8_steps512(&k, src, dst, ops, &i, lim, &cnt, 1, CH_ALL, 0, CVT_WIDE);
    } else if (c->wide) {
        chain8_steps512(&k, src, dst, ops, &i, lim, &cnt, 0, CH_ALL, CH_ALL, CVT_WIDE);
    } else if (bn_alu_only && chain8_residual(c, ops) && chain8_cvt_id(c)) {
        chain8_steps512(&k, src, dst, ops, &i, lim, &cnt, 1, CH_MUL | CH_SHIFT, 0, 1);
    } else if (bn_alu_only && chain8_residual(c, ops)) {
        chain8_steps512(&k, src, dst, ops, &i, lim, &cnt, 1, CH_MUL | CH_SHIFT, 0, 0);
    } else if (bn_alu_only) {
        chain8_steps512(&k, src, dst, ops, &i, lim, &cnt, 1, CH_ALL, CH_ALL, 0);
    } else {
        chain8_steps512(&k, src, dst, ops, &i, lim, &cnt, 0, CH_ALL, CH_ALL, 0);
    }
    if (i < n) { /* at most 16 left (lim >= n - 1); padding lanes count nothing */
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        __mmask16 s;
        __m128i out = c->wide ? chain8_vec512(&k, _mm_maskz_loadu_epi8(m, src + i), ops, i, &s,
                                              m, 0, 0, CH_ALL, CH_ALL, CVT_WIDE)
                              : chain8_vec512(&k, _mm_maskz_loadu_epi8(m, src + i), ops, i, &s,
                                              m, 0, 0, CH_ALL, CH_ALL, 0);
        _mm_mask_storeu_epi8(dst + i, m, out);
        cnt += (uint32_t)__builtin_popcount((unsigned)(s & m));
    }
    return cnt;
}
#endif

uint32_t dla_sdp_lanes_chain8(enum dla_lanes_isa isa, const struct sdp_lane_chain *c,
                              const uint8_t *src, uint8_t *dst, size_t n,
                              const struct sdp_lane_op8 ops[4])
{
    if (c->wide) {
#if defined(DLA_LANES_X86)
        if (isa == DLA_LANES_AVX512) {
            return chain8_avx512(c, src, dst, n, ops);
        }
#endif
        return chain8_wide_generic(c, src, dst, n, ops);
    }
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return chain8_avx512(c, src, dst, n, ops);
    }
    if (dla_lanes_avx2_up(isa)) {
        return chain8_avx2(c, src, dst, n, ops);
    }
#endif
    (void)isa;
    return chain8_generic(c, src, dst, n, ops);
}

/* ---- memory elements ---------------------------------------------------------- */

/* The restrict-qualified plain loops vectorise (the arrays never overlap:
 * the caller's input bytes, its int32 chunk). */
DLA_LANES_INLINE void widen_any(const uint8_t *restrict src, unsigned bytes,
                                int32_t *restrict dst, size_t n)
{
    if (bytes == 1) {
        for (size_t j = 0; j < n; j++) {
            dst[j] = (int8_t)src[j];
        }
        return;
    }
    for (size_t j = 0; j < n; j++) {
        dst[j] = (int16_t)(uint16_t)(src[2 * j] | (uint16_t)(src[2 * j + 1] << 8));
    }
}

DLA_LANES_INLINE void narrow_any(const int32_t *restrict src, size_t n, unsigned bytes,
                                 uint8_t *restrict dst)
{
    if (bytes == 1) {
        for (size_t j = 0; j < n; j++) {
            dst[j] = (uint8_t)((uint32_t)src[j] & 0xffu);
        }
        return;
    }
    for (size_t j = 0; j < n; j++) {
        dst[2 * j] = (uint8_t)((uint32_t)src[j] & 0xffu);
        dst[2 * j + 1] = (uint8_t)(((uint32_t)src[j] >> 8) & 0xffu);
    }
}

/* The contiguous one-byte case (a stream with one component) is its own
 * loop so that it vectorises as widen_any does. */
DLA_LANES_INLINE void shl_ops_any(const uint8_t *restrict src, size_t stride, unsigned bytes,
                                  unsigned shift, int32_t *restrict dst, size_t n)
{
    if (bytes == 1 && stride == 1) {
        for (size_t j = 0; j < n; j++) {
            dst[j] = (int32_t)((uint32_t)(int32_t)(int8_t)src[j] << shift);
        }
    } else if (bytes == 1) {
        for (size_t j = 0; j < n; j++) {
            dst[j] = (int32_t)((uint32_t)(int32_t)(int8_t)src[j * stride] << shift);
        }
    } else {
        for (size_t j = 0; j < n; j++) {
            const uint8_t *e = src + j * stride;
            int32_t v = (int16_t)(uint16_t)(e[0] | (uint16_t)(e[1] << 8));
            dst[j] = (int32_t)((uint32_t)v << shift);
        }
    }
}

static void widen_generic(const uint8_t *src, unsigned bytes, int32_t *dst, size_t n)
{
    widen_any(src, bytes, dst, n);
}

static void narrow_generic(const int32_t *src, size_t n, unsigned bytes, uint8_t *dst)
{
    narrow_any(src, n, bytes, dst);
}

static void shl_ops_generic(const uint8_t *src, size_t stride, unsigned bytes, unsigned shift,
                            int32_t *dst, size_t n)
{
    shl_ops_any(src, stride, bytes, shift, dst, n);
}

#if defined(DLA_LANES_X86)
DLA_LANES_AVX2_ATTR static void widen_avx2(const uint8_t *src, unsigned bytes, int32_t *dst,
                                           size_t n)
{
    widen_any(src, bytes, dst, n);
}

DLA_LANES_AVX2_ATTR static void narrow_avx2(const int32_t *src, size_t n, unsigned bytes,
                                            uint8_t *dst)
{
    narrow_any(src, n, bytes, dst);
}

DLA_LANES_AVX2_ATTR static void shl_ops_avx2(const uint8_t *src, size_t stride, unsigned bytes,
                                             unsigned shift, int32_t *dst, size_t n)
{
    shl_ops_any(src, stride, bytes, shift, dst, n);
}
#endif

void dla_sdp_lanes_widen(enum dla_lanes_isa isa, const uint8_t *src, unsigned bytes, int32_t *dst,
                         size_t n)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        widen_avx2(src, bytes, dst, n);
        return;
    }
#endif
    (void)isa;
    widen_generic(src, bytes, dst, n);
}

void dla_sdp_lanes_narrow(enum dla_lanes_isa isa, const int32_t *src, size_t n, unsigned bytes,
                          uint8_t *dst)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        narrow_avx2(src, n, bytes, dst);
        return;
    }
#endif
    (void)isa;
    narrow_generic(src, n, bytes, dst);
}

void dla_sdp_lanes_shl_ops(enum dla_lanes_isa isa, const uint8_t *src, size_t stride,
                           unsigned bytes, unsigned shift, int32_t *dst, size_t n)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        shl_ops_avx2(src, stride, bytes, shift, dst, n);
        return;
    }
#endif
    (void)isa;
    shl_ops_generic(src, stride, bytes, shift, dst, n);
}
