/*
 * The model input's quantization (see quant_io.h).  The rounding is the
 * compiler's: v < 0 ? v - 0.5 : v + 0.5, clamped as a float to
 * [-128 - zero, 127 - zero], truncated, then zero added; clamping before the
 * conversion keeps every value the integer conversion sees in range, so the
 * SSE2 lanes (cvttps2dq) and the scalar tail give the same codes.  Clamping
 * to those bounds (integers, -255..0 and 0..255) before truncating toward
 * zero gives the same code as saturating trunc(v) + zero afterwards.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "arith/lanes.h"
#include "compiler/quant_io.h"

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

#if defined(DLA_LANES_X86)
/* Where the first block of 32 values holding a NaN or an infinity starts
 * (n rounded down to 32 when none): |x| <= FLT_MAX fails for those, four
 * vectors' verdicts or-ed into one test. */
DLA_LANES_AVX2_ATTR static size_t nonfinite_block_avx2(const float *x, size_t n)
{
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 max = _mm256_set1_ps(FLT_MAX);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 b = _mm256_setzero_ps();
        for (unsigned k = 0; k < 4; k++) {
            __m256 v = _mm256_and_ps(_mm256_loadu_ps(x + i + 8 * k), abs_mask);
            b = _mm256_or_ps(b, _mm256_cmp_ps(v, max, _CMP_NLE_UQ));
        }
        if (_mm256_movemask_ps(b)) {
            break;
        }
    }
    return i;
}
#endif

int64_t dlc_first_nonfinite(const float *x, size_t n)
{
    size_t i = 0;
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(dla_lanes_best())) {
        i = nonfinite_block_avx2(x, n); /* the lane itself is found below */
    }
#endif
#if defined(__SSE2__)
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    const __m128 max = _mm_set1_ps(FLT_MAX);
    for (; i + 4 <= n; i += 4) { /* NaN or infinite: not |x| <= FLT_MAX */
        if (_mm_movemask_ps(_mm_cmpnle_ps(_mm_and_ps(_mm_loadu_ps(x + i), abs_mask), max))) {
            break; /* the lane is found below */
        }
    }
#endif
    for (; i < n; i++) {
        if (!isfinite(x[i])) {
            return (int64_t)i;
        }
    }
    return -1;
}

static int quantize_scalar(const float *x, int8_t *q, size_t n, float inv, int zero)
{
    const float hi = (float)(127 - zero), lo = (float)(-128 - zero);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        float v = x[i] * inv;
        v += v < 0.0f ? -0.5f : 0.5f;
        v = v > hi ? hi : v;
        v = v < lo ? lo : v;
        q[i] = (int8_t)((int)v + zero);
        bad |= !(fabsf(x[i]) <= FLT_MAX); /* NaN or infinite */
    }
    return bad;
}

#if defined(__SSE2__)
/* quantize_scalar on 4 values as int32 lanes; *bad gets the lanes holding a
 * NaN or an infinity. */
static inline __m128i quantize4(const float *x, __m128 inv, __m128 lo, __m128 hi, __m128i zero,
                                __m128 *bad)
{
    const __m128 half = _mm_set1_ps(0.5f), mhalf = _mm_set1_ps(-0.5f);
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    __m128 xv = _mm_loadu_ps(x);
    *bad = _mm_or_ps(*bad, _mm_cmpnle_ps(_mm_and_ps(xv, abs_mask), _mm_set1_ps(FLT_MAX)));
    __m128 v = _mm_mul_ps(xv, inv);
    __m128 neg = _mm_cmplt_ps(v, _mm_setzero_ps());
    v = _mm_add_ps(v, _mm_or_ps(_mm_and_ps(neg, mhalf), _mm_andnot_ps(neg, half)));
    v = _mm_max_ps(_mm_min_ps(v, hi), lo);
    return _mm_add_epi32(_mm_cvttps_epi32(v), zero);
}
#endif

#if defined(DLA_LANES_X86)
/* quantize_scalar on sixteen values at a time; the last 1-15 under a mask
 * (nothing read or written past n).  The same operations as quantize4 in
 * sixteen lanes (min then max with the bound second: a NaN lane, flagged
 * anyway, takes the bound), narrowed by vpmovsdb (in range already). */
DLA_LANES_AVX512_ATTR static int quantize_avx512(const float *x, int8_t *q, size_t n, float inv,
                                                 int zero)
{
    const __m512 vinv = _mm512_set1_ps(inv), half = _mm512_set1_ps(0.5f);
    const __m512 mhalf = _mm512_set1_ps(-0.5f), fmax = _mm512_set1_ps(FLT_MAX);
    const __m512 lo = _mm512_set1_ps((float)(-128 - zero));
    const __m512 hi = _mm512_set1_ps((float)(127 - zero));
    const __m512i z = _mm512_set1_epi32(zero);
    __mmask16 bad = 0;
    for (size_t i = 0; i < n; i += 16) {
        const __mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1u);
        __m512 xv = _mm512_maskz_loadu_ps(k, x + i);
        bad |= _mm512_mask_cmp_ps_mask(k, _mm512_abs_ps(xv), fmax, _CMP_NLE_UQ);
        __m512 v = _mm512_mul_ps(xv, vinv);
        __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        v = _mm512_add_ps(v, _mm512_mask_blend_ps(neg, half, mhalf));
        v = _mm512_max_ps(_mm512_min_ps(v, hi), lo);
        __m512i c = _mm512_add_epi32(_mm512_cvttps_epi32(v), z);
        _mm_mask_storeu_epi8(q + i, k, _mm512_cvtsepi32_epi8(c));
    }
    return bad != 0;
}

/* quantize_scalar on 32 values at a time as quantize4 does on 4 (the same
 * operations in eight lanes, so the same codes); the last 0-31 are left to
 * the caller (returns how many were done, *bad set for NaN or infinity). */
DLA_LANES_AVX2_ATTR static size_t quantize_avx2(const float *x, int8_t *q, size_t n, float inv,
                                               int zero, int *bad)
{
    const __m256 vinv = _mm256_set1_ps(inv), half = _mm256_set1_ps(0.5f);
    const __m256 mhalf = _mm256_set1_ps(-0.5f), fmax = _mm256_set1_ps(FLT_MAX);
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 lo = _mm256_set1_ps((float)(-128 - zero));
    const __m256 hi = _mm256_set1_ps((float)(127 - zero));
    const __m256i z = _mm256_set1_epi32(zero);
    /* packs interleave the four vectors' 128-bit halves: this puts the
     * codes back in order */
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256 flag = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i c[4];
        for (unsigned k = 0; k < 4; k++) {
            __m256 xv = _mm256_loadu_ps(x + i + 8 * k);
            flag = _mm256_or_ps(flag, _mm256_cmp_ps(_mm256_and_ps(xv, abs_mask), fmax, _CMP_NLE_UQ));
            __m256 v = _mm256_mul_ps(xv, vinv);
            __m256 neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
            v = _mm256_add_ps(v, _mm256_blendv_ps(half, mhalf, neg));
            v = _mm256_max_ps(_mm256_min_ps(v, hi), lo);
            c[k] = _mm256_add_epi32(_mm256_cvttps_epi32(v), z);
        }
        __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
        _mm256_storeu_si256((__m256i *)(void *)(q + i), _mm256_permutevar8x32_epi32(b, order));
    }
    *bad = _mm256_movemask_ps(flag) != 0;
    return i;
}
#endif

int dlc_quantize_s8(const float *x, int8_t *q, size_t n, float inv, int zero)
{
    return dlc_quantize_s8_isa(dla_lanes_best(), x, q, n, inv, zero);
}

int dlc_quantize_s8_isa(enum dla_lanes_isa isa, const float *x, int8_t *q, size_t n, float inv,
                        int zero)
{
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX512) {
        return quantize_avx512(x, q, n, inv, zero);
    }
#else
    (void)isa;
#endif
    size_t i = 0;
    int bad = 0;
#if defined(DLA_LANES_X86)
    if (isa == DLA_LANES_AVX2) { /* the last 0-31 through the lanes below */
        i = quantize_avx2(x, q, n, inv, zero, &bad);
    }
#endif
#if defined(__SSE2__)
    __m128 bad4 = _mm_setzero_ps(), inv4 = _mm_set1_ps(inv);
    const __m128 lo = _mm_set1_ps((float)(-128 - zero)), hi = _mm_set1_ps((float)(127 - zero));
    const __m128i z4 = _mm_set1_epi32(zero);
#define QUANTIZE4(p) quantize4((p), inv4, lo, hi, z4, &bad4)
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_packs_epi32(QUANTIZE4(x + i),
                                    QUANTIZE4(x + i + 4));
        __m128i b = _mm_packs_epi32(QUANTIZE4(x + i + 8),
                                    QUANTIZE4(x + i + 12));
        _mm_storeu_si128((__m128i *)(void *)(q + i), _mm_packs_epi16(a, b));
    }
    if (i < n) { /* the last 1-15 values through the same lanes, zeros after them */
        float tail[16] = { 0 };
        int8_t codes[16];
        memcpy(tail, x + i, (n - i) * sizeof *tail);
        __m128i a = _mm_packs_epi32(QUANTIZE4(tail),
                                    QUANTIZE4(tail + 4));
        __m128i b = _mm_packs_epi32(QUANTIZE4(tail + 8),
                                    QUANTIZE4(tail + 12));
        _mm_storeu_si128((__m128i *)(void *)codes, _mm_packs_epi16(a, b));
        memcpy(q + i, codes, n - i);
        i = n;
    }
#undef QUANTIZE4
    bad |= _mm_movemask_ps(bad4) != 0;
#endif
    return bad | quantize_scalar(x + i, q + i, n - i, inv, zero);
}

#if defined(__SSE2__)
/* Sixteen pixels of eight channel rows (r[i], rows n.. read as zeros) into
 * sixteen 8-byte atom parts at dst, `atom` bytes apart: three rounds of
 * interleaves turn rows into per-pixel channel octets. */
static void octets16(const int8_t *const r[8], unsigned n, size_t atom, uint8_t *dst)
{
    __m128i v[8];
    for (unsigned i = 0; i < 8; i++) {
        v[i] = i < n ? _mm_loadu_si128((const __m128i *)(const void *)r[i]) : _mm_setzero_si128();
    }
    __m128i a[8], b[8];
    for (unsigned i = 0; i < 4; i++) { /* byte pairs (channels 2i, 2i+1) */
        a[2 * i] = _mm_unpacklo_epi8(v[2 * i], v[2 * i + 1]);     /* pixels 0-7 */
        a[2 * i + 1] = _mm_unpackhi_epi8(v[2 * i], v[2 * i + 1]); /* pixels 8-15 */
    }
    for (unsigned h = 0; h < 2; h++) { /* channel quads, pixel halves h */
        b[4 * h] = _mm_unpacklo_epi16(a[h], a[2 + h]);         /* ch 0-3, px 0-3 (+8h) */
        b[4 * h + 1] = _mm_unpackhi_epi16(a[h], a[2 + h]);     /* ch 0-3, px 4-7 */
        b[4 * h + 2] = _mm_unpacklo_epi16(a[4 + h], a[6 + h]); /* ch 4-7, px 0-3 */
        b[4 * h + 3] = _mm_unpackhi_epi16(a[4 + h], a[6 + h]); /* ch 4-7, px 4-7 */
    }
    for (unsigned q = 0; q < 4; q++) { /* four pixels a group: px 4q .. 4q + 3 */
        const unsigned h = q / 2, half = q % 2;
        __m128i lo = b[4 * h + half], hi = b[4 * h + 2 + half];
        __m128i p01 = _mm_unpacklo_epi32(lo, hi), p23 = _mm_unpackhi_epi32(lo, hi);
        uint8_t *d = dst + (size_t)(4 * q) * atom;
        _mm_storel_epi64((__m128i *)(void *)d, p01);
        _mm_storel_epi64((__m128i *)(void *)(d + atom), _mm_unpackhi_epi64(p01, p01));
        _mm_storel_epi64((__m128i *)(void *)(d + 2 * atom), p23);
        _mm_storel_epi64((__m128i *)(void *)(d + 3 * atom), _mm_unpackhi_epi64(p23, p23));
    }
}

/* octets16 for at most four channel rows (an RGB image's three): two
 * rounds of interleaves give each pixel's four bytes, then each is widened
 * to its octet with four zero bytes (a 16-byte store covers two atoms of
 * 8 bytes; wider atoms take their first 8 bytes only). */
static void quads16(const int8_t *const r[4], unsigned n, size_t atom, uint8_t *dst)
{
    const __m128i z = _mm_setzero_si128();
    __m128i v[4];
    for (unsigned i = 0; i < 4; i++) {
        v[i] = i < n ? _mm_loadu_si128((const __m128i *)(const void *)r[i]) : z;
    }
    const __m128i a0 = _mm_unpacklo_epi8(v[0], v[1]), a1 = _mm_unpackhi_epi8(v[0], v[1]);
    const __m128i b0 = _mm_unpacklo_epi8(v[2], v[3]), b1 = _mm_unpackhi_epi8(v[2], v[3]);
    const __m128i quad[4] = {_mm_unpacklo_epi16(a0, b0), _mm_unpackhi_epi16(a0, b0),
                             _mm_unpacklo_epi16(a1, b1), _mm_unpackhi_epi16(a1, b1)};
    for (unsigned k = 0; k < 4; k++) { /* pixels 4k .. 4k + 3 */
        const __m128i p01 = _mm_unpacklo_epi32(quad[k], z), p23 = _mm_unpackhi_epi32(quad[k], z);
        uint8_t *d = dst + (size_t)(4 * k) * atom;
        if (atom == 8) {
            _mm_storeu_si128((__m128i *)(void *)d, p01);
            _mm_storeu_si128((__m128i *)(void *)(d + 16), p23);
        } else {
            _mm_storel_epi64((__m128i *)(void *)d, p01);
            _mm_storel_epi64((__m128i *)(void *)(d + atom), _mm_unpackhi_epi64(p01, p01));
            _mm_storel_epi64((__m128i *)(void *)(d + 2 * atom), p23);
            _mm_storel_epi64((__m128i *)(void *)(d + 3 * atom), _mm_unpackhi_epi64(p23, p23));
        }
    }
}
#endif

void dlc_rows_to_atoms(const int8_t *rows, size_t row_stride, unsigned n, size_t w, size_t atom,
                       uint8_t *dst)
{
    size_t x = 0;
#if defined(__SSE2__)
    if (n == 1 && atom == 8) {
        /* one channel (a grayscale image): each byte zero-extended to its
         * 8-byte atom, sixteen pixels in three rounds of unpacks */
        const __m128i z = _mm_setzero_si128();
        for (; x + 16 <= w; x += 16) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(rows + x));
            const __m128i h[2] = {_mm_unpacklo_epi8(v, z), _mm_unpackhi_epi8(v, z)};
            for (unsigned k = 0; k < 4; k++) {
                const __m128i q = k & 1 ? _mm_unpackhi_epi16(h[k / 2], z)
                                        : _mm_unpacklo_epi16(h[k / 2], z);
                uint8_t *d = dst + (x + 4 * k) * 8;
                _mm_storeu_si128((__m128i *)(void *)d, _mm_unpacklo_epi32(q, z));
                _mm_storeu_si128((__m128i *)(void *)(d + 16), _mm_unpackhi_epi32(q, z));
            }
        }
    }
    if (atom >= 8 && n > 1 && n <= 4) {
        const int8_t *r[4];
        for (unsigned i = 0; i < 4; i++) {
            r[i] = rows + (i < n ? i : 0) * row_stride;
        }
        for (; x + 16 <= w; x += 16) {
            quads16(r, n, atom, dst + x * atom);
            for (unsigned i = 0; i < 4; i++) {
                r[i] += 16;
            }
        }
    }
    if (atom >= 8) {
        const int8_t *r[8];
        for (; x + 16 <= w; x += 16) {
            for (unsigned i = 0; i < n; i++) {
                r[i] = rows + i * row_stride + x;
            }
            octets16(r, n, atom, dst + x * atom);
        }
        if (x < w && atom <= 64) {
            /* the last pixels through a zero-padded copy: a 28-pixel row's
             * 12 took 96 byte stores (Fashion-MNIST's input, 5 % of an
             * image) */
            int8_t tail[8][16] = {{0}};
            uint8_t out[16 * 64];
            for (unsigned i = 0; i < n; i++) {
                memcpy(tail[i], rows + i * row_stride + x, w - x);
                r[i] = tail[i];
            }
            octets16(r, n, atom, out);
            for (size_t p = 0; p < w - x; p++) { /* the atoms' first 8 bytes, as below */
                memcpy(dst + (x + p) * atom, out + p * atom, 8);
            }
            x = w;
        }
    }
#endif
    const unsigned part = atom < 8 ? (unsigned)atom : 8u;
    for (; x < w; x++) {
        for (unsigned i = 0; i < part; i++) {
            dst[x * atom + i] = i < n ? (uint8_t)rows[i * row_stride + x] : 0;
        }
    }
}

