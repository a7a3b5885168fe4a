/*
 * Depthwise convolution (see conv_dw_s8.h), one output row at a time: on
 * CPUs with AVX2 the taps in pairs through vpmaddwd, the pairs laid out
 * ahead so that each is one plain load (x stride 1: window rows paired;
 * x stride 2 without x dilation: neighbouring taps), in blocks of eight
 * outputs; other x strides 1 and 2 in blocks of sixteen, paired in
 * registers (dw_channel_avx2); with AVX-512BW the paired rows sixteen
 * outputs a zmm vpmaddwd; else a scalar loop per tap.  From CBUF's lines
 * (dla_conv_dw_s8_src_channels) with AVX-512 VNNI + VBMI, whole lines a
 * permute (dwl_range); from the memory's atoms, strips of a line a
 * permute (dwa_range).  The ISA is chosen per call
 * (dla_conv_dw_s8_isa_best).
 */
#include <string.h>

#include "arith/lanes.h"
#include "dlasim/dlasim.h"
#include "kernels/conv_dw_s8.h"

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

int dla_conv_s8_is_depthwise(const struct dla_conv_geom *g, const int8_t *wt)
{
    if (g->out_k != g->in_c) {
        return 0;
    }
    const size_t taps = (size_t)g->k_w * g->k_h;
    for (size_t k = 0; k < g->out_k; k++) {
        const int8_t *row = wt + k * g->in_c * taps;
        /* the taps before kernel k's own channel, then those after it */
        const size_t before = k * taps, after = (k + 1) * taps, end = g->in_c * taps;
        uint8_t any = 0;
        for (size_t i = 0; i < before; i++) {
            any |= (uint8_t)row[i];
        }
        for (size_t i = after; i < end; i++) {
            any |= (uint8_t)row[i];
        }
        if (any) {
            return 0;
        }
    }
    return 1;
}

/* Output row oy of one channel (plane: its padded input, w: its taps),
 * from column ox0 on, a scalar loop per tap over the row. */
static void dw_row_scalar(const struct dla_conv_geom *g, const int8_t *plane, const int8_t *w,
                          uint32_t oy, uint32_t ox0, int32_t *out)
{
    for (uint32_t ox = ox0; ox < g->out_w; ox++) {
        out[ox] = 0;
    }
    for (uint32_t ky = 0; ky < g->k_h; ky++) {
        const int8_t *row = plane + ((size_t)oy * g->stride_y + (size_t)ky * g->dil_y) * g->in_w;
        for (uint32_t kx = 0; kx < g->k_w; kx++) {
            const int32_t wv = w[ky * g->k_w + kx];
            const int8_t *src = row + (size_t)kx * g->dil_x;
            for (uint32_t ox = ox0; wv && ox < g->out_w; ox++) {
                out[ox] += (int32_t)src[(size_t)ox * g->stride_x] * wv;
            }
        }
    }
}

#if defined(DLA_LANES_X86)
/* Taps the AVX2 rows keep in registers (or on the stack): up to 7x7. */
#define DW_MAX_TAPS 49

/* Sixteen int8 inputs of a tap as int16: src[0], src[s], ... src[15 s] for
 * s = 1 or 2 (the load reads 16 s bytes).  Bytes past the row only reach
 * the lanes of outputs beyond it, which are not stored. */
DLA_LANES_AVX2_ATTR static inline __m256i dw_load16(const int8_t *src, uint32_t s)
{
    if (s == 1) {
        return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)src));
    }
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i lo = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)src), even);
    __m128i hi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(src + 16)), even);
    return _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(lo, hi));
}

/* dw_load16 of the bytes before end, zeros after (the input's last lines). */
DLA_LANES_AVX2_ATTR static __m256i dw_load16_near_end(const int8_t *src, uint32_t s,
                                                      const int8_t *end)
{
    int8_t tail[32] = { 0 };
    size_t n = (size_t)(end - src) < 16 * (size_t)s ? (size_t)(end - src) : 16 * (size_t)s;
    memcpy(tail, src, n);
    return dw_load16(tail, s);
}

/* Sixteen outputs from src on: the taps in pairs, one vpmaddwd per pair
 * (int8 products summed in int32: exact in any order, so the same sums as
 * the dense kernel; an odd last tap pairs with a zero weight).  acc_lo
 * gets outputs 0-3 and 8-11, acc_hi 4-7 and 12-15 (vpunpck*wd interleave
 * within 128-bit halves).  Inlined with s and safe constant: no branch in
 * the tap loop. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_block16(const int8_t *src, uint32_t s, uint32_t pairs, const size_t *off, const __m256i *wp,
           const int8_t *end, int safe, __m256i *out0_7, __m256i *out8_15)
{
    __m256i acc_lo = _mm256_setzero_si256(), acc_hi = _mm256_setzero_si256();
    for (uint32_t p = 0; p < pairs; p++) {
        __m256i a, b;
        if (safe) {
            a = dw_load16(src + off[2 * p], s);
            b = dw_load16(src + off[2 * p + 1], s);
        } else {
            a = dw_load16_near_end(src + off[2 * p], s, end);
            b = dw_load16_near_end(src + off[2 * p + 1], s, end);
        }
        acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wp[p]));
        acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wp[p]));
    }
    *out0_7 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x20);
    *out8_15 = _mm256_permute2x128_si256(acc_lo, acc_hi, 0x31);
}

/* n < 8 outputs of v at o (a row's last block), 4, 2 and 1 at a time:
 * vpmaskmovd's store is microcoded on AMD's Zen cores (as conv_s8_x86.c's
 * avx2_store_tail found).  A channel's last row took one: with plain
 * stores a 7x7x8 depthwise block from CBUF's lines 1,127 -> 1,053 ticks
 * and a 14x14x8 one 2,352 -> 2,082 (dla_conv_dw_s8_src_channels, rdtsc,
 * the best of 12 x 20,000 calls on a Zen 3 core). */
DLA_LANES_AVX2_ATTR static inline void dw_store_part(int32_t *o, __m256i v, uint32_t n)
{
    __m128i x = _mm256_castsi256_si128(v);
    if (n & 4) {
        _mm_storeu_si128((__m128i *)(void *)o, x);
        o += 4;
        x = _mm256_extracti128_si256(v, 1);
    }
    if (n & 2) {
        _mm_storel_epi64((__m128i *)(void *)o, x);
        o += 2;
        x = _mm_srli_si128(x, 8);
    }
    if (n & 1) {
        *o = _mm_cvtsi128_si32(x);
    }
}

/* A row's outputs [0, n) from o on, in blocks of sixteen: the last block
 * stores only its real outputs. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_store16(int32_t *o, uint32_t n, __m256i v0, __m256i v1)
{
    if (n >= 16) {
        _mm256_storeu_si256((__m256i *)(void *)o, v0);
        _mm256_storeu_si256((__m256i *)(void *)(o + 8), v1);
    } else if (n > 8) {
        _mm256_storeu_si256((__m256i *)(void *)o, v0);
        dw_store_part(o + 8, v1, n - 8);
    } else if (n == 8) {
        _mm256_storeu_si256((__m256i *)(void *)o, v0);
    } else {
        dw_store_part(o, v0, n);
    }
}

/* Every row of one channel with x stride s (a constant where inlined):
 * blocks whose reads stay before `end` take the plain loads. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_rows16(const struct dla_conv_geom *g, const int8_t *plane, uint32_t s, uint32_t pairs,
          const size_t *off, const __m256i *wp, size_t reach, int32_t *out, const int8_t *end)
{
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        const int8_t *row = plane + (size_t)oy * g->stride_y * g->in_w;
        int32_t *o = out + (size_t)oy * g->out_w;
        for (uint32_t ox0 = 0; ox0 < g->out_w; ox0 += 16) {
            const int8_t *src = row + (size_t)ox0 * s;
            __m256i v0, v1;
            if ((size_t)(end - src) >= reach) {
                dw_block16(src, s, pairs, off, wp, end, 1, &v0, &v1);
            } else {
                dw_block16(src, s, pairs, off, wp, end, 0, &v0, &v1);
            }
            dw_store16(o + ox0, g->out_w - ox0, v0, v1);
        }
    }
}

/* One channel (plane: its padded input, w: its taps) in blocks of sixteen
 * outputs of a row (x stride 1 or 2), the weights of each tap pair in one
 * register (w[t] in the low and w[t + 1] in the high 16 bits of every
 * 32-bit lane) set once per channel. */
DLA_LANES_AVX2_ATTR static void dw_channel_avx2(const struct dla_conv_geom *g,
                                                const int8_t *plane, const int8_t *w,
                                                int32_t *out, const int8_t *end)
{
    const uint32_t s = g->stride_x, taps = g->k_w * g->k_h, pairs = (taps + 1) / 2;
    __m256i wp[(DW_MAX_TAPS + 1) / 2];
    size_t off[DW_MAX_TAPS + 1], max_off = 0;
    for (uint32_t t = 0; t < taps; t++) {
        off[t] = (size_t)(t / g->k_w) * g->dil_y * g->in_w + (size_t)(t % g->k_w) * g->dil_x;
        max_off = off[t] > max_off ? off[t] : max_off;
    }
    off[taps] = off[taps - 1]; /* an odd last tap's partner: read, weighted 0 */
    for (uint32_t t = 0; t < taps; t += 2) {
        uint16_t hi = t + 1 < taps ? (uint16_t)(int16_t)w[t + 1] : 0;
        wp[t / 2] = _mm256_set1_epi32((int)(((uint32_t)hi << 16) | (uint16_t)(int16_t)w[t]));
    }
    const size_t reach = max_off + 16 * (size_t)s; /* bytes a block reads */
    if (s == 1) {
        dw_rows16(g, plane, 1, pairs, off, wp, reach, out, end);
    } else {
        dw_rows16(g, plane, 2, pairs, off, wp, reach, out, end);
    }
}

/* ---- pre-paired rows: one vpmaddwd per tap pair, no shuffles in the tap loop ----
 * vpmaddwd multiplies the two int16 halves of each 32-bit lane by a weight
 * pair and adds them.  With x stride 1 the pair is two rows of the window
 * (ky, ky + 1) at the same column: a row of 32-bit lanes
 * (in[y][x], in[y + dil_y][x]) built once per output row serves every kx
 * as a plain load at x + kx dil_x, eight outputs in order.  With x stride 2
 * (dilation 1) the pair is two neighbouring taps (kx, kx + 1), which are
 * already adjacent bytes: sign-extending sixteen bytes from 2 x + kx gives
 * eight outputs' pairs in order.  An odd last row or tap pairs with a zero
 * weight (the partner's value, whatever it is, adds nothing). */

/* Widest input row the x-stride-1 rows take (their row buffers are on the
 * stack); wider ones take dw_channel_avx2. */
#define DW_PAIR_MAX_W 512
/* Window rows and columns the paired paths take (7x7, as dw_channel_avx2). */
#define DW_PAIR_MAX_K 7
#define DW_PAIR_MAX_PAIRS ((DW_PAIR_MAX_K + 1) / 2)

/* A weight pair (lo, hi) in every 32-bit lane. */
DLA_LANES_AVX2_ATTR static inline __m256i dw_wpair(int8_t lo, int8_t hi)
{
    return _mm256_set1_epi32((int)(((uint32_t)(uint16_t)(int16_t)hi << 16) |
                                   (uint16_t)(int16_t)lo));
}

/* dst[x] = (r0[x], r1[x]) as int16 halves for x < n (r1 NULL: 0). */
DLA_LANES_AVX2_ATTR static void dw_pair_span(int32_t *dst, const int8_t *r0, const int8_t *r1,
                                             size_t n)
{
    size_t x = 0;
    const __m128i zero = _mm_setzero_si128();
    for (; x + 16 <= n; x += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(r0 + x));
        __m128i b = r1 ? _mm_loadu_si128((const __m128i *)(const void *)(r1 + x)) : zero;
        _mm256_storeu_si256((__m256i *)(void *)(dst + x),
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
        _mm256_storeu_si256((__m256i *)(void *)(dst + x + 8),
                            _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, b)));
    }
    if (x + 8 <= n) {
        __m128i a = _mm_loadl_epi64((const __m128i *)(const void *)(r0 + x));
        __m128i b = r1 ? _mm_loadl_epi64((const __m128i *)(const void *)(r1 + x)) : zero;
        _mm256_storeu_si256((__m256i *)(void *)(dst + x),
                            _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
        x += 8;
    }
    for (; x < n; x++) {
        uint32_t hi = r1 ? (uint16_t)(int16_t)r1[x] : 0;
        dst[x] = (int32_t)((hi << 16) | (uint16_t)(int16_t)r0[x]);
    }
}

/* Input planes of at most this many bytes are paired whole, once per
 * channel (on the stack, 4 bytes a pixel); larger ones a row pair per
 * output row. */
#define DW_PAIR_PLANE_MAX 4096

/* Zero lanes after a paired plane: the reads of its last row's last block
 * (eight lanes for the AVX2 rows, fifteen for the AVX-512 ones). */
#define DW_PAIR_TAIL 16

DLA_LANES_AVX2_ATTR static inline void dw_zero_tail(int32_t *p)
{
    _mm256_storeu_si256((__m256i *)(void *)p, _mm256_setzero_si256());
    _mm256_storeu_si256((__m256i *)(void *)(p + 8), _mm256_setzero_si256());
}

/* The whole plane paired with itself dil_y rows down: dst[y][x] =
 * (in[y][x], in[y + dil_y][x]), 0 for the partner of the last dil_y rows,
 * then DW_PAIR_TAIL zero lanes (the reads of the last row's last block). */
DLA_LANES_AVX2_ATTR static void dw_pair_plane(const struct dla_conv_geom *g, const int8_t *plane,
                                              int32_t *dst)
{
    const size_t W = g->in_w, paired = g->in_h > g->dil_y ? g->in_h - g->dil_y : 0;
    dw_pair_span(dst, plane, plane + g->dil_y * W, paired * W);
    dw_pair_span(dst + paired * W, plane + paired * W, NULL, (g->in_h - paired) * W);
    dw_zero_tail(dst + (size_t)g->in_h * W);
}

/* Eight outputs v at o of which n are a row's, `left` outputs of the
 * channel from o on: lanes past the row land on the next rows' first
 * outputs, stored after these, so only a store that would pass the
 * channel's end (the memory after it is another channel's, perhaps
 * another thread's) takes the n alone. */
DLA_LANES_AVX2_ATTR static inline void dw_store8(int32_t *o, __m256i v, uint32_t n, size_t left)
{
    if (n >= 8 || left >= 8) {
        _mm256_storeu_si256((__m256i *)(void *)o, v);
    } else {
        dw_store_part(o, v, n);
    }
}

/* Eight outputs (lanes 0-7) from column x of an output row: the sum over
 * the row pairs p and columns kx of rows[p] at x + kx dx times wv[p][kx]. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
dw_s1_block8(const int32_t *const *rows, uint32_t x, uint32_t py, uint32_t k_w, uint32_t dx,
             const __m256i (*wv)[DW_PAIR_MAX_K])
{
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (uint32_t p = 0; p < py; p++) {
#pragma GCC unroll 8
        for (uint32_t kx = 0; kx < k_w; kx++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(rows[p] + x + kx * dx));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(v, wv[p][kx]));
        }
    }
    return acc;
}

/* One output row from the paired rows `rows` (one per row pair), in
 * blocks of sixteen (two of eight) outputs, a last one of eight. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_s1_row(const struct dla_conv_geom *g, const int32_t *const *rows, uint32_t oy, uint32_t py,
          uint32_t k_w, uint32_t dx, const __m256i (*wv)[DW_PAIR_MAX_K], int32_t *out)
{
    /* the sizes as locals: the int32 stores may alias g's fields, which
     * the compiler would otherwise load again after each one */
    const uint32_t ow = g->out_w;
    const size_t left = (size_t)(g->out_h - oy) * ow;
    int32_t *o = out + (size_t)oy * ow;
    uint32_t x = 0;
    /* two blocks while more than eight outputs are left (the second one
     * perhaps partial: 14-wide rows in one pass) */
    for (; x + 8 < ow; x += 16) {
        _mm256_storeu_si256((__m256i *)(void *)(o + x), dw_s1_block8(rows, x, py, k_w, dx, wv));
        __m256i v = dw_s1_block8(rows, x + 8, py, k_w, dx, wv);
        dw_store8(o + x + 8, v, ow - x - 8, left - x - 8);
    }
    for (; x < ow; x += 8) {
        __m256i v = dw_s1_block8(rows, x, py, k_w, dx, wv);
        dw_store8(o + x, v, ow - x, left - x);
    }
}

/* One channel with x stride 1 (in_w <= DW_PAIR_MAX_W, k_w, k_h <= 7): the
 * window's rows paired (ky, ky + 1) into 32-bit lanes, the whole plane
 * once when it is small, else per output row; an odd last row pairs with
 * a zero weight. */
/* The weight pairs of the x-stride-1 rows: wv[p][kx] = (w[2p][kx], w[2p + 1][kx]). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_s1_weights(const struct dla_conv_geom *g, const int8_t *w, uint32_t py, uint32_t k_w,
              __m256i (*wv)[DW_PAIR_MAX_K])
{
    for (uint32_t p = 0; p < py; p++) {
        for (uint32_t kx = 0; kx < k_w; kx++) {
            int8_t hi = 2 * p + 1 < g->k_h ? w[(2 * p + 1) * k_w + kx] : 0;
            wv[p][kx] = dw_wpair(w[2 * p * k_w + kx], hi);
        }
    }
}

/* Every output row of one channel from its whole paired plane (dw_pair_plane). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_s1_paired(const struct dla_conv_geom *g, const int32_t *paired, const int8_t *w, int32_t *out,
             uint32_t py, uint32_t k_w, uint32_t dx)
{
    const size_t W = g->in_w;
    __m256i wv[DW_PAIR_MAX_PAIRS][DW_PAIR_MAX_K];
    dw_s1_weights(g, w, py, k_w, wv);
    const int32_t *rows[DW_PAIR_MAX_PAIRS];
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        for (uint32_t p = 0; p < py; p++) {
            rows[p] = paired + ((size_t)oy * g->stride_y + 2u * p * g->dil_y) * W;
        }
        dw_s1_row(g, rows, oy, py, k_w, dx, wv, out);
    }
}

DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_s1_body(const struct dla_conv_geom *g, const int8_t *plane, const int8_t *w, int32_t *out,
           uint32_t py, uint32_t k_w, uint32_t dx)
{
    const size_t W = g->in_w;
    if (W * g->in_h <= DW_PAIR_PLANE_MAX) {
        _Alignas(64) int32_t paired[DW_PAIR_PLANE_MAX + DW_PAIR_TAIL];
        dw_pair_plane(g, plane, paired);
        dw_s1_paired(g, paired, w, out, py, k_w, dx);
        return;
    }
    __m256i wv[DW_PAIR_MAX_PAIRS][DW_PAIR_MAX_K];
    dw_s1_weights(g, w, py, k_w, wv);
    const int32_t *rows[DW_PAIR_MAX_PAIRS];
    _Alignas(64) int32_t buf[DW_PAIR_MAX_PAIRS][DW_PAIR_MAX_W + 8];
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        for (uint32_t p = 0; p < py; p++) {
            const int8_t *r0 = plane + ((size_t)oy * g->stride_y + 2u * p * g->dil_y) * W;
            dw_pair_span(buf[p], r0, 2 * p + 1 < g->k_h ? r0 + g->dil_y * W : NULL, W);
            _mm256_storeu_si256((__m256i *)(void *)(buf[p] + W), _mm256_setzero_si256());
            rows[p] = buf[p];
        }
        dw_s1_row(g, rows, oy, py, k_w, dx, wv, out);
    }
}

/* dw_s1_body with the 3x3 window of MobileNet's depthwise layers as
 * constants (the tap loops unrolled), else as variables. */
DLA_LANES_AVX2_ATTR static void dw_channel_s1_avx2(const struct dla_conv_geom *g,
                                                   const int8_t *plane, const int8_t *w,
                                                   int32_t *out)
{
    if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3 && g->dil_x == 1) {
        dw_s1_body(g, plane, w, out, 2, 3, 1);
    } else {
        dw_s1_body(g, plane, w, out, (g->k_h + 1) / 2, g->k_w, g->dil_x);
    }
}

/* Sixteen bytes from src sign-extended to int16 (the bytes before end,
 * zeros after: a read near the input's end). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
dw_pairs8(const int8_t *src, const int8_t *end, int safe)
{
    if (safe || end - src >= 16) {
        return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)src));
    }
    int8_t tail[16] = { 0 };
    memcpy(tail, src, (size_t)(end - src));
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)tail));
}

/* Eight outputs from column x of output row oy, x stride 2, dilation 1:
 * the taps (2 px, 2 px + 1) of each window row are bytes 2 x + 2 px on. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) __m256i
dw_s2_block8(const int8_t *src, size_t row_step, uint32_t k_h, uint32_t px,
             const __m256i (*wv)[DW_PAIR_MAX_PAIRS], const int8_t *end, int safe)
{
    __m256i acc = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (uint32_t ky = 0; ky < k_h; ky++) {
#pragma GCC unroll 4
        for (uint32_t p = 0; p < px; p++) {
            __m256i v = dw_pairs8(src + ky * row_step + 2 * p, end, safe);
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(v, wv[ky][p]));
        }
    }
    return acc;
}

/* One channel with x stride 2 and x dilation 1 (k_w, k_h <= 7), in blocks
 * of eight outputs of a row. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_s2_body(const struct dla_conv_geom *g, const int8_t *plane, const int8_t *w, int32_t *out,
           const int8_t *end, uint32_t k_h, uint32_t k_w)
{
    const uint32_t px = (k_w + 1) / 2;
    const size_t row_step = (size_t)g->dil_y * g->in_w;
    __m256i wv[DW_PAIR_MAX_K][DW_PAIR_MAX_PAIRS];
    for (uint32_t ky = 0; ky < k_h; ky++) {
        for (uint32_t p = 0; p < px; p++) {
            int8_t hi = 2 * p + 1 < k_w ? w[ky * k_w + 2 * p + 1] : 0;
            wv[ky][p] = dw_wpair(w[ky * k_w + 2 * p], hi);
        }
    }
    /* a block's last load starts here from its first: it takes plain loads
     * when that one ends before the input does */
    const size_t reach = (size_t)(k_h - 1) * row_step + 2 * (size_t)(px - 1) + 16;
    /* the sizes as locals: the int32 stores may alias g's fields */
    const uint32_t ow = g->out_w, oh = g->out_h;
    const size_t in_row = (size_t)g->stride_y * g->in_w;
    for (uint32_t oy = 0; oy < oh; oy++) {
        int32_t *o = out + (size_t)oy * ow;
        const int8_t *row = plane + (size_t)oy * in_row;
        uint32_t x = 0;
        /* whole blocks of sixteen whose reads end before the input does:
         * plain loads and stores, two independent sums */
        for (; x + 16 <= ow && (size_t)(end - (row + 2 * (size_t)x)) >= reach + 16; x += 16) {
            const int8_t *src = row + 2 * (size_t)x;
            __m256i v0 = dw_s2_block8(src, row_step, k_h, px, wv, end, 1);
            __m256i v1 = dw_s2_block8(src + 16, row_step, k_h, px, wv, end, 1);
            _mm256_storeu_si256((__m256i *)(void *)(o + x), v0);
            _mm256_storeu_si256((__m256i *)(void *)(o + x + 8), v1);
        }
        for (; x < ow; x += 8) {
            const int8_t *src = row + 2 * (size_t)x;
            __m256i v = (size_t)(end - src) >= reach
                            ? dw_s2_block8(src, row_step, k_h, px, wv, end, 1)
                            : dw_s2_block8(src, row_step, k_h, px, wv, end, 0);
            dw_store8(o + x, v, ow - x, (size_t)(oh - oy) * ow - x);
        }
    }
}
/* dw_s2_body with a 3x3 window as constants, else as variables. */
DLA_LANES_AVX2_ATTR static void dw_channel_s2_avx2(const struct dla_conv_geom *g,
                                                   const int8_t *plane, const int8_t *w,
                                                   int32_t *out, const int8_t *end)
{
    if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3) {
        dw_s2_body(g, plane, w, out, end, 3, 3);
    } else {
        dw_s2_body(g, plane, w, out, end, g->k_h, g->k_w);
    }
}

/* The fastest AVX2 path that takes g: the paired rows for x stride 1
 * (rows up to DW_PAIR_MAX_W) and for x stride 2 without x dilation, both
 * up to 7x7; else dw_channel_avx2. */
DLA_LANES_AVX2_ATTR static void dw_channel_pick(const struct dla_conv_geom *g,
                                                const int8_t *plane, const int8_t *w,
                                                int32_t *out, const int8_t *end)
{
    int small = g->k_w <= DW_PAIR_MAX_K && g->k_h <= DW_PAIR_MAX_K;
    if (small && g->stride_x == 1 && g->in_w <= DW_PAIR_MAX_W) {
        dw_channel_s1_avx2(g, plane, w, out);
    } else if (small && g->stride_x == 2 && g->dil_x == 1) {
        dw_channel_s2_avx2(g, plane, w, out, end);
    } else {
        dw_channel_avx2(g, plane, w, out, end);
    }
}

/* ---- AVX-512BW: the same paired rows, sixteen outputs a vpmaddwd ----
 * The x-stride-1 paired rows (dw_pair_plane) and the x-stride-2 byte
 * pairs at twice the width: one zmm vpmaddwd per tap pair gives sixteen
 * outputs' exact int32 sums, as two ymm ones gave eight each.  Row tails
 * take masked stores (and masked loads near the input's end): no byte
 * outside a row's outputs is written, none past the input read. */
#define DW512_ATTR __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))
#define DW512_INLINE static inline __attribute__((always_inline, target("avx2,avx512f,avx512bw,avx512vl")))

/* Whether this CPU runs the AVX-512BW rows (their own check: the
 * library's lanes know AVX2 alone). */
static int dw_has_avx512bw(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

/* A weight pair (lo, hi) in every 32-bit lane. */
DW512_INLINE __m512i dw512_wpair(int8_t lo, int8_t hi)
{
    return _mm512_set1_epi32((int)(((uint32_t)(uint16_t)(int16_t)hi << 16) |
                                   (uint16_t)(int16_t)lo));
}

/* The lanes [0, n) of sixteen (n <= 16). */
DW512_INLINE __mmask16 dw512_first(uint32_t n)
{
    return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

/* wv[p][kx] = (w[2p][kx], w[2p + 1][kx]) (dw_s1_weights at zmm width). */
DW512_INLINE void dw512_s1_weights(const struct dla_conv_geom *g, const int8_t *w, uint32_t py,
                                   uint32_t k_w, __m512i (*wv)[DW_PAIR_MAX_K])
{
    for (uint32_t p = 0; p < py; p++) {
        for (uint32_t kx = 0; kx < k_w; kx++) {
            int8_t hi = 2 * p + 1 < g->k_h ? w[(2 * p + 1) * k_w + kx] : 0;
            wv[p][kx] = dw512_wpair(w[2 * p * k_w + kx], hi);
        }
    }
}

/* Sixteen sums from lane i of the paired rows: over the row pairs p and
 * columns kx, rows + i + p * pstep + kx * dx times wv[p][kx]. */
DW512_INLINE __m512i dw512_s1_block(const int32_t *rows, size_t pstep, uint32_t py,
                                    uint32_t k_w, uint32_t dx,
                                    const __m512i (*wv)[DW_PAIR_MAX_K])
{
    __m512i acc = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (uint32_t p = 0; p < py; p++) {
#pragma GCC unroll 8
        for (uint32_t kx = 0; kx < k_w; kx++) {
            __m512i v = _mm512_loadu_si512((const void *)(rows + p * pstep + kx * dx));
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(v, wv[p][kx]));
        }
    }
    return acc;
}

/* Every output of one channel from its whole paired plane with y stride
 * 1: output (y, x) reads the lanes y W + x + (2 p dil_y W + kx dil_x), so
 * the plane is one row of in_h W lanes and the outputs its first
 * (out_h - 1) W + out_w, sixteen a block, of which those with x < out_w
 * are stored (a 7x7 layer: four blocks, not seven rows).  A block's reads
 * end at most 15 lanes past the plane (out_w + (k_w - 1) dil_x <= W):
 * its zero tail. */
DW512_INLINE void dw512_s1_flat(const struct dla_conv_geom *g, const int32_t *paired,
                                const int8_t *w, int32_t *out, uint32_t py, uint32_t k_w,
                                uint32_t dx)
{
    __m512i wv[DW_PAIR_MAX_PAIRS][DW_PAIR_MAX_K];
    dw512_s1_weights(g, w, py, k_w, wv);
    const uint32_t W = g->in_w, ow = g->out_w, oh = g->out_h;
    const size_t pstep = 2 * (size_t)g->dil_y * W, n = (size_t)(oh - 1) * W + ow;
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    uint32_t y = 0, x = 0; /* lane 0's output row and column */
    for (size_t i = 0; i < n; i += 16) {
        const __m512i acc = dw512_s1_block(paired + i, pstep, py, k_w, dx, wv);
        /* each output row the block reaches: its lanes from l on, moved
         * down to lane 0 and stored at the row's column x */
        uint32_t l = 0, yy = y, xx = x;
        while (l < 16 && yy < oh) {
            if (xx < ow) {
                __m512i v = l ? _mm512_permutexvar_epi32(
                                    _mm512_add_epi32(lane, _mm512_set1_epi32((int)l)), acc)
                              : acc;
                _mm512_mask_storeu_epi32(out + (size_t)yy * ow + xx,
                                         dw512_first(ow - xx < 16 - l ? ow - xx : 16 - l), v);
            }
            l += W - xx;
            xx = 0;
            yy++;
        }
        for (x += 16; x >= W; x -= W) {
            y++;
        }
    }
}

/* One output row from its paired rows rows[p], in blocks of sixteen, the
 * last one's real outputs stored alone. */
DW512_INLINE void dw512_s1_row(const int32_t *const *rows, uint32_t py, uint32_t k_w,
                               uint32_t dx, const __m512i (*wv)[DW_PAIR_MAX_K], int32_t *o,
                               uint32_t ow)
{
    for (uint32_t x = 0; x < ow; x += 16) {
        __m512i acc = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (uint32_t p = 0; p < py; p++) {
#pragma GCC unroll 8
            for (uint32_t kx = 0; kx < k_w; kx++) {
                __m512i v = _mm512_loadu_si512((const void *)(rows[p] + x + kx * dx));
                acc = _mm512_add_epi32(acc, _mm512_madd_epi16(v, wv[p][kx]));
            }
        }
        _mm512_mask_storeu_epi32(o + x, dw512_first(ow - x), acc);
    }
}

/* One x-stride-1 channel (in_w <= DW_PAIR_MAX_W, k_w, k_h <= 7): a small
 * plane paired whole (then flat with y stride 1, else row by row), a
 * larger one a row pair per output row. */
DW512_INLINE void dw512_s1_body(const struct dla_conv_geom *g, const int8_t *plane,
                                const int8_t *w, int32_t *out, uint32_t py, uint32_t k_w,
                                uint32_t dx)
{
    const size_t W = g->in_w;
    __m512i wv[DW_PAIR_MAX_PAIRS][DW_PAIR_MAX_K];
    const int32_t *rows[DW_PAIR_MAX_PAIRS];
    if (W * g->in_h <= DW_PAIR_PLANE_MAX) {
        _Alignas(64) int32_t paired[DW_PAIR_PLANE_MAX + DW_PAIR_TAIL];
        dw_pair_plane(g, plane, paired);
        if (g->stride_y == 1) {
            dw512_s1_flat(g, paired, w, out, py, k_w, dx);
            return;
        }
        dw512_s1_weights(g, w, py, k_w, wv);
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            for (uint32_t p = 0; p < py; p++) {
                rows[p] = paired + ((size_t)oy * g->stride_y + 2u * p * g->dil_y) * W;
            }
            dw512_s1_row(rows, py, k_w, dx, wv, out + (size_t)oy * g->out_w, g->out_w);
        }
        return;
    }
    dw512_s1_weights(g, w, py, k_w, wv);
    _Alignas(64) int32_t buf[DW_PAIR_MAX_PAIRS][DW_PAIR_MAX_W + DW_PAIR_TAIL];
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        for (uint32_t p = 0; p < py; p++) {
            const int8_t *r0 = plane + ((size_t)oy * g->stride_y + 2u * p * g->dil_y) * W;
            dw_pair_span(buf[p], r0, 2 * p + 1 < g->k_h ? r0 + g->dil_y * W : NULL, W);
            dw_zero_tail(buf[p] + W);
            rows[p] = buf[p];
        }
        dw512_s1_row(rows, py, k_w, dx, wv, out + (size_t)oy * g->out_w, g->out_w);
    }
}

/* dw512_s1_body with MobileNet's 3x3 window as constants, else variables. */
DW512_ATTR static void dw512_channel_s1(const struct dla_conv_geom *g, const int8_t *plane,
                                        const int8_t *w, int32_t *out)
{
    if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3 && g->dil_x == 1) {
        dw512_s1_body(g, plane, w, out, 2, 3, 1);
    } else {
        dw512_s1_body(g, plane, w, out, (g->k_h + 1) / 2, g->k_w, g->dil_x);
    }
}

/* dw512_s1_flat on a plane paired from its lines (dw_src_range). */
DW512_ATTR static void dw512_src_paired(const struct dla_conv_geom *g, const int32_t *paired,
                                        const int8_t *w, int32_t *out)
{
    if (g->k_w == 3 && g->k_h == 3 && g->dil_x == 1) {
        dw512_s1_flat(g, paired, w, out, 2, 3, 1);
    } else {
        dw512_s1_flat(g, paired, w, out, (g->k_h + 1) / 2, g->k_w, g->dil_x);
    }
}

/* Thirty-two bytes from src sign-extended to int16 (sixteen byte pairs);
 * near the input's end, the bytes before end alone (masked: zeros after,
 * nothing past end read). */
DW512_INLINE __m512i dw512_pairs16(const int8_t *src, const int8_t *end, int safe)
{
    const ptrdiff_t left = end - src;
    if (safe || left >= 32) {
        return _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)src));
    }
    const __mmask32 m = (__mmask32)(left > 0 ? (1ull << left) - 1u : 0);
    return _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, src));
}

/* Sixteen outputs from column x, x stride 2, dilation 1 (dw_s2_block8 at
 * zmm width). */
DW512_INLINE __m512i dw512_s2_block(const int8_t *src, size_t row_step, uint32_t k_h,
                                    uint32_t px, const __m512i (*wv)[DW_PAIR_MAX_PAIRS],
                                    const int8_t *end, int safe)
{
    __m512i acc = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (uint32_t ky = 0; ky < k_h; ky++) {
#pragma GCC unroll 4
        for (uint32_t p = 0; p < px; p++) {
            __m512i v = dw512_pairs16(src + ky * row_step + 2 * p, end, safe);
            acc = _mm512_add_epi32(acc, _mm512_madd_epi16(v, wv[ky][p]));
        }
    }
    return acc;
}

/* One channel with x stride 2 and x dilation 1 (k_w, k_h <= 7) in blocks
 * of sixteen outputs of a row, the last one's real outputs stored alone. */
DW512_INLINE void dw512_s2_body(const struct dla_conv_geom *g, const int8_t *plane,
                                const int8_t *w, int32_t *out, const int8_t *end, uint32_t k_h,
                                uint32_t k_w)
{
    const uint32_t px = (k_w + 1) / 2;
    const size_t row_step = (size_t)g->dil_y * g->in_w;
    __m512i wv[DW_PAIR_MAX_K][DW_PAIR_MAX_PAIRS];
    for (uint32_t ky = 0; ky < k_h; ky++) {
        for (uint32_t p = 0; p < px; p++) {
            int8_t hi = 2 * p + 1 < k_w ? w[ky * k_w + 2 * p + 1] : 0;
            wv[ky][p] = dw512_wpair(w[ky * k_w + 2 * p], hi);
        }
    }
    /* a block's reads end here from its start: plain loads when the
     * input goes on that far */
    const size_t reach = (size_t)(k_h - 1) * row_step + 2 * (size_t)(px - 1) + 32;
    const uint32_t ow = g->out_w, oh = g->out_h;
    const size_t in_row = (size_t)g->stride_y * g->in_w;
    for (uint32_t oy = 0; oy < oh; oy++) {
        int32_t *o = out + (size_t)oy * ow;
        const int8_t *row = plane + (size_t)oy * in_row;
        for (uint32_t x = 0; x < ow; x += 16) {
            const int8_t *src = row + 2 * (size_t)x;
            __m512i v = (size_t)(end - src) >= reach
                            ? dw512_s2_block(src, row_step, k_h, px, wv, end, 1)
                            : dw512_s2_block(src, row_step, k_h, px, wv, end, 0);
            _mm512_mask_storeu_epi32(o + x, dw512_first(ow - x), v);
        }
    }
}

DW512_ATTR static void dw512_channel_s2(const struct dla_conv_geom *g, const int8_t *plane,
                                        const int8_t *w, int32_t *out, const int8_t *end)
{
    if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3) {
        dw512_s2_body(g, plane, w, out, end, 3, 3);
    } else {
        dw512_s2_body(g, plane, w, out, end, g->k_h, g->k_w);
    }
}

/* The AVX-512 rows where they take g (as dw_channel_pick's paired ones),
 * else the AVX2 ones. */
static void dw512_channel_pick(const struct dla_conv_geom *g, const int8_t *plane,
                               const int8_t *w, int32_t *out, const int8_t *end)
{
    int small = g->k_w <= DW_PAIR_MAX_K && g->k_h <= DW_PAIR_MAX_K;
    if (small && g->stride_x == 1 && g->in_w <= DW_PAIR_MAX_W) {
        dw512_channel_s1(g, plane, w, out);
    } else if (small && g->stride_x == 2 && g->dil_x == 1) {
        dw512_channel_s2(g, plane, w, out, end);
    } else {
        dw_channel_pick(g, plane, w, out, end);
    }
}

/* ---- AVX-512 VNNI + VBMI: four taps a vpdpbusd, no pairing pass ----
 * vpdpbusd adds four products of unsigned by signed bytes to each 32-bit
 * lane.  The input flipped to unsigned (x + 128: xor 0x80) times the
 * weights sums to the exact sum plus 128 x (the sum of the weights), a
 * constant a channel, taken off first (the accumulator starts at its
 * negation): exact int32 as the int16 pairs were.  For sixteen outputs of
 * a row, each window row is one load of the bytes they read (at most 64:
 * 15 x stride + (k_w - 1) x dil_x + 1), and one vpermb per four taps puts
 * output i's bytes x_i + t dil_x (t = 4q .. 4q + 3) in lane i; taps past
 * k_w take weight 0.  Any x stride or dilation whose bytes fit a load. */
#define DWV_TARGET "avx2,avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi"
#define DWV_ATTR __attribute__((target(DWV_TARGET)))
#define DWV_INLINE static inline __attribute__((always_inline, target(DWV_TARGET)))
/* Window columns a row's two vpermb take. */
#define DWV_MAX_KW 8

static int dw_has_vnni_vbmi(void)
{
    return dw_has_avx512bw() && __builtin_cpu_supports("avx512vnni") &&
           __builtin_cpu_supports("avx512vbmi");
}

/* Bytes one window row of a block of sixteen outputs reads. */
static size_t dwv_row_bytes(const struct dla_conv_geom *g)
{
    return 15 * (size_t)g->stride_x + (size_t)(g->k_w - 1) * g->dil_x + 1;
}

/* Whether the VNNI rows take g. */
static int dwv_takes(const struct dla_conv_geom *g)
{
    return g->k_w <= DWV_MAX_KW && g->k_h <= DW_PAIR_MAX_K && dwv_row_bytes(g) <= 64;
}

/* Sixteen sums of a block whose first output reads src on: a load of a
 * window row's bytes (one: of all its rows, row_step apart within the 64
 * bytes), flipped, then nq vpermb + vpdpbusd a window row (idx[ky]: the
 * bytes of row ky's taps in the load). */
DWV_INLINE __m512i dwv_block_at(const int8_t *src, const int8_t *end, size_t row_step,
                                size_t need, uint32_t k_h, uint32_t nq, __m512i bias,
                                const __m512i (*idx)[2], const __m512i (*wq)[2], int safe,
                                int one)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    __m512i acc = bias, v = bias;
#pragma GCC unroll 8
    for (uint32_t ky = 0; ky < k_h; ky++) {
        if (!one || ky == 0) {
            const int8_t *p = src + ky * row_step;
            const ptrdiff_t left = end - p;
            if (safe || left >= 64) {
                v = _mm512_loadu_si512((const void *)p);
            } else {
                /* the input's last bytes: those the real outputs read are
                 * before end (lanes past them are not stored) */
                size_t n = left <= 0 ? 0 : (size_t)left < need ? (size_t)left : need;
                v = _mm512_maskz_loadu_epi8(n >= 64 ? ~0ull : (1ull << n) - 1u, p);
            }
            v = _mm512_xor_si512(v, flip);
        }
#pragma GCC unroll 2
        for (uint32_t q = 0; q < nq; q++) {
            acc = _mm512_dpbusd_epi32(acc, _mm512_permutexvar_epi8(idx[ky][q], v), wq[ky][q]);
        }
    }
    return acc;
}

/* dwv_block_at with the check for the input's end made once a block:
 * the plain loads when its last row's load ends before the input does. */
DWV_INLINE __m512i dwv_block(const int8_t *src, const int8_t *end, size_t row_step,
                             size_t need, uint32_t k_h, uint32_t nq, __m512i bias,
                             const __m512i (*idx)[2], const __m512i (*wq)[2], int one)
{
    if (end - src >= 64 && (size_t)(end - src) - 64 >= (size_t)(k_h - 1) * row_step) {
        return dwv_block_at(src, end, row_step, need, k_h, nq, bias, idx, wq, 1, one);
    }
    return dwv_block_at(src, end, row_step, need, k_h, nq, bias, idx, wq, 0, one);
}

/* The blocks of one channel (dwv_body's set-up in idx, wq, bias; need:
 * the bytes a block's load holds). */
DWV_INLINE void dwv_rows(const struct dla_conv_geom *g, const int8_t *plane, int32_t *out,
                         const int8_t *end, uint32_t k_h, uint32_t s, uint32_t nq,
                         uint32_t per_row, size_t need, __m512i bias,
                         const __m512i (*idx)[2], const __m512i (*wq)[2], int one)
{
    const size_t in_row = (size_t)g->stride_y * g->in_w, row_step = (size_t)g->dil_y * g->in_w;
    const uint32_t ow = g->out_w, oh = g->out_h;
    if (per_row == 8) {
        /* rows of at most eight outputs: two a block (lanes 8-15 the second) */
        for (uint32_t oy = 0; oy < oh; oy += 2) {
            __m512i acc = dwv_block(plane + (size_t)oy * in_row, end, row_step, need, k_h, nq,
                                    bias, idx, wq, one);
            int32_t *o = out + (size_t)oy * ow;
            _mm256_mask_storeu_epi32(o, (__mmask8)dw512_first(ow),
                                     _mm512_castsi512_si256(acc));
            if (oy + 1 < oh) {
                _mm256_mask_storeu_epi32(o + ow, (__mmask8)dw512_first(ow),
                                         _mm512_extracti64x4_epi64(acc, 1));
            }
        }
        return;
    }
    for (uint32_t oy = 0; oy < oh; oy++) {
        const int8_t *row = plane + (size_t)oy * in_row;
        int32_t *o = out + (size_t)oy * ow;
        for (uint32_t x = 0; x < ow; x += 16) {
            __m512i acc = dwv_block(row + (size_t)x * s, end, row_step, need, k_h, nq, bias, idx,
                                    wq, one);
            _mm512_mask_storeu_epi32(o + x, dw512_first(ow - x), acc);
        }
    }
}

/* What the blocks of every channel of one geometry share (dwv_setup):
 * the byte indices of each window row's taps in a block's load, the bytes
 * a load holds, whether one load holds all the window's rows. */
struct dwv_setup {
    __m512i idx[DW_PAIR_MAX_K][2];
    size_t need;
    uint32_t nq;
    int one;
};

/* dwv_setup of a k_h x k_w window, x stride s, x dilation dx; per_row: 16,
 * or 8 for rows of at most eight outputs whose two rows' bytes fit one
 * load (dwv_two_rows).  When the window's rows all fit one load (a 14x14
 * layer's 16-byte rows: 50 bytes), one load a block. */
DWV_INLINE void dwv_setup(const struct dla_conv_geom *g, uint32_t k_h, uint32_t k_w, uint32_t s,
                          uint32_t dx, uint32_t per_row, struct dwv_setup *u)
{
    const size_t in_row = (size_t)g->stride_y * g->in_w, row_step = (size_t)g->dil_y * g->in_w;
    u->nq = (k_w + 3) / 4;
    const size_t need = per_row == 16 ? 15 * (size_t)s + (size_t)(k_w - 1) * dx + 1
                                      : in_row + 7 * (size_t)s + (size_t)(k_w - 1) * dx + 1;
    const size_t need_all = (size_t)(k_h - 1) * row_step + need;
    u->one = need_all <= 64;
    u->need = u->one ? need_all : need;
    /* lane i's bytes: i s (row r = i / per_row: r in_row + (i % per_row) s)
     * plus t dx for its taps t (past k_w: 0, weight 0), plus ky row_step
     * for window row ky when one load holds them all */
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i col = per_row == 16 ? lane : _mm512_and_si512(lane, _mm512_set1_epi32(7));
    __m512i start = _mm512_mullo_epi32(col, _mm512_set1_epi32((int)s));
    if (per_row == 8) {
        const __m512i second = _mm512_srli_epi32(lane, 3); /* the block's second row */
        start = _mm512_add_epi32(start, _mm512_mullo_epi32(second,
                                                           _mm512_set1_epi32((int)in_row)));
    }
    start = _mm512_mullo_epi32(start, _mm512_set1_epi32(0x01010101));
    for (uint32_t ky = 0; ky < k_h; ky++) {
        const uint32_t down = u->one ? (uint32_t)(ky * row_step) : 0;
        for (uint32_t q = 0; q < u->nq; q++) {
            uint32_t taps = 0;
            for (uint32_t j = 0; j < 4; j++) {
                uint32_t t = 4 * q + j < k_w ? 4 * q + j : 0;
                taps |= (t * dx + down) << (8 * j);
            }
            u->idx[ky][q] = _mm512_add_epi32(start, _mm512_set1_epi32((int)taps));
        }
    }
}

/* One channel's weights w[ky][kx] as four taps a lane (wq) and the sums'
 * start, -128 times their sum (the loads' bytes are flipped to unsigned). */
DWV_INLINE __m512i dwv_weights(const int8_t *w, uint32_t k_h, uint32_t k_w, uint32_t nq,
                               __m512i (*wq)[2])
{
    int32_t wsum = 0;
    /* (unrolled where k_h, k_w and nq are constants: gcc -O2 would not) */
#pragma GCC unroll 8
    for (uint32_t ky = 0; ky < k_h; ky++) {
#pragma GCC unroll 2
        for (uint32_t q = 0; q < nq; q++) {
            uint32_t four = 0;
#pragma GCC unroll 4
            for (uint32_t j = 0; j < 4; j++) {
                int8_t v = 4 * q + j < k_w ? w[ky * k_w + 4 * q + j] : 0;
                four |= (uint32_t)(uint8_t)v << (8 * j);
                wsum += v;
            }
            wq[ky][q] = _mm512_set1_epi32((int)four);
        }
    }
    return _mm512_set1_epi32(-128 * wsum);
}

/* One channel's outputs with its setup u and weights w. */
DWV_INLINE void dwv_apply(const struct dla_conv_geom *g, const struct dwv_setup *u,
                          const int8_t *plane, const int8_t *w, int32_t *out, const int8_t *end,
                          uint32_t k_h, uint32_t k_w, uint32_t s, uint32_t per_row)
{
    __m512i wq[DW_PAIR_MAX_K][2];
    /* u->nq again from k_w: a constant where k_w is one (MobileNet's 3x3),
     * so dwv_weights' loops unroll with their pragmas (a channel's nine
     * weights in loops took ~19 % of a 7x7 block's kernel) */
    const uint32_t nq = (k_w + 3) / 4;
    const __m512i bias = dwv_weights(w, k_h, k_w, nq, wq);
    if (u->one) {
        dwv_rows(g, plane, out, end, k_h, s, nq, per_row, u->need, bias,
                 (const __m512i(*)[2])u->idx, (const __m512i(*)[2])wq, 1);
    } else {
        dwv_rows(g, plane, out, end, k_h, s, nq, per_row, u->need, bias,
                 (const __m512i(*)[2])u->idx, (const __m512i(*)[2])wq, 0);
    }
}

/* One channel, window k_h x k_w, x stride s, x dilation dx (constants
 * where inlined with them); end: the input's end (loads stop there). */
DWV_INLINE void dwv_body(const struct dla_conv_geom *g, const int8_t *plane, const int8_t *w,
                         int32_t *out, const int8_t *end, uint32_t k_h, uint32_t k_w,
                         uint32_t s, uint32_t dx, uint32_t per_row)
{
    struct dwv_setup u;
    dwv_setup(g, k_h, k_w, s, dx, per_row, &u);
    dwv_apply(g, &u, plane, w, out, end, k_h, k_w, s, per_row);
}

/* Whether two output rows of g (at most eight outputs each) fit a block:
 * the second row's bytes in_row on from the first's, in the same load. */
static int dwv_two_rows(const struct dla_conv_geom *g)
{
    return g->out_w <= 8 && (size_t)g->stride_y * g->in_w + 7 * (size_t)g->stride_x +
                                    (size_t)(g->k_w - 1) * g->dil_x + 1 <= 64;
}

/* dwv_body with MobileNet's 3x3 windows (x stride 1 and 2) as constants. */
DWV_ATTR static void dwv_channel(const struct dla_conv_geom *g, const int8_t *plane,
                                 const int8_t *w, int32_t *out, const int8_t *end)
{
    const uint32_t per_row = dwv_two_rows(g) ? 8 : 16;
    if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3 && g->dil_x == 1 && g->stride_x == 1) {
        dwv_body(g, plane, w, out, end, 3, 3, 1, 1, per_row);
    } else if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3 && g->dil_x == 1 &&
               g->stride_x == 2) {
        dwv_body(g, plane, w, out, end, 3, 3, 2, 1, per_row);
    } else {
        dwv_body(g, plane, w, out, end, g->k_h, g->k_w, g->stride_x, g->dil_x, per_row);
    }
}

/* ---- the input read from CBUF's lines: no padded planar copy ----
 * A small x-stride-1 layer's paired plane (dw_pair_plane) is made straight
 * from the lines CSC reads: each padded row is one 16-byte load of the
 * line blended with PAD_VALUE outside its data columns (as csc.c's
 * padded_rows_avx2), or PAD_VALUE alone outside the data rows.  The plane
 * holds the same values as dw_pair_plane's of the padded copy, so the
 * rows computed from it are the same. */

/* Widest padded row (x stride 1) of the src path: one 16-byte vector.
 * MobileNetV2's 7x7 and 14x14 blocks (rows of 9 and 16 bytes); measured
 * (median ticks a layer, --threads 1): 7x7 4,100 -> 3,300, 14x14 5,500 ->
 * 5,250, but rows of 30 and 58 bytes (two and four vectors) 12,700 ->
 * 13,300 and 34,000 -> 38,500: their copy and whole-plane pairing stay. */
#define DW_SRC_MAX_W 16u

/* A padded row from its 16 bytes at p (column 0): PAD_VALUE outside the
 * data columns (take). */
DLA_LANES_AVX2_ATTR static inline __m128i dw_src_load(const int8_t *p, __m128i padv, __m128i take)
{
    return _mm_blendv_epi8(padv, _mm_loadu_si128((const __m128i *)(const void *)p), take);
}

/* Padded row y of the channel whose line 0 is at line0, as bytes [0, W)
 * of a vector (the rest: PAD_VALUE or line bytes, never read as data). */
DLA_LANES_AVX2_ATTR static inline __m128i dw_src_row(const struct dla_dw_src *in,
                                                     const int8_t *line0, uint32_t y,
                                                     __m128i padv, __m128i take)
{
    const struct dla_conv_src *s = &in->src;
    if (y < s->y0 || y >= s->y1) {
        return padv;
    }
    const int8_t *row = line0 + (size_t)(y - s->y0) * s->line_stride; /* its column x0 */
    if ((size_t)(row - in->lo) >= s->x0 && (size_t)(in->hi - row) + s->x0 >= DW_SRC_MAX_W) {
        return dw_src_load(row - s->x0, padv, take);
    }
    int8_t b[DW_SRC_MAX_W]; /* near the buffer's ends: the row's bytes alone */
    memset(b, s->pad, sizeof(b));
    memcpy(b + s->x0, row, s->x1 - s->x0);
    return _mm_loadu_si128((const __m128i *)(const void *)b);
}

/* Whether every data row's 16-byte load of the channel whose line 0 is at
 * line0 lies in the buffer (the first row's start and the last's end
 * checked once): its rows then need none of dw_src_row's checks. */
static inline int dw_src_inside(const struct dla_dw_src *in, const int8_t *line0)
{
    const struct dla_conv_src *s = &in->src;
    return s->y0 < s->y1 && (size_t)(line0 - in->lo) >= s->x0 &&
           (size_t)(in->hi - (line0 + (size_t)(s->y1 - 1 - s->y0) * s->line_stride)) + s->x0 >=
               DW_SRC_MAX_W;
}

/* dw_src_row's value; `inside` (dw_src_inside): one load, no checks. */
DLA_LANES_AVX2_ATTR static inline __m128i dw_src_row_at(const struct dla_dw_src *in,
                                                        const int8_t *line0, uint32_t y,
                                                        int inside, __m128i padv, __m128i take)
{
    const struct dla_conv_src *s = &in->src;
    if (y < s->y0 || y >= s->y1) {
        return padv;
    }
    if (inside) {
        return dw_src_load(line0 - s->x0 + (size_t)(y - s->y0) * s->line_stride, padv, take);
    }
    return dw_src_row(in, line0, y, padv, take);
}

/* Row y's pairs (a: row y, b: its partner) as W int32 lanes at o: eight
 * pixels a store (the second one only when wide: W > 8), in ascending
 * order, so the lanes past W land on the next row's first, stored after
 * them. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw_store_pair_row(int32_t *o, __m128i a, __m128i b, int wide)
{
    _mm256_storeu_si256((__m256i *)(void *)o, _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, b)));
    if (wide) {
        _mm256_storeu_si256((__m256i *)(void *)(o + 8),
                            _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, b)));
    }
}

/* dw_pair_plane of one channel from its lines (line0: line 0), W <= 16;
 * with dilation 1 and every data row's load inside the buffer, a loop
 * without the per-row checks of dw_src_row (7x7x8 op, warm, rdtsc best:
 * 1,151 -> 1,029 ticks). */
DLA_LANES_AVX2_ATTR static void dw_pair_plane_src(const struct dla_conv_geom *g,
                                                  const struct dla_dw_src *in,
                                                  const int8_t *line0, __m128i padv,
                                                  __m128i take, int32_t *dst)
{
    const size_t W = g->in_w;
    const __m128i zero = _mm_setzero_si128();
    const struct dla_conv_src *s = &in->src;
    if (g->dil_y == 1 && dw_src_inside(in, line0)) {
        /* every data row's 16-byte load lies in the buffer (the first's
         * start, the last's end checked once): no check a row */
        const int8_t *first = line0 - s->x0; /* row y0's column 0 */
        __m128i a = s->y0 > 0 ? padv : dw_src_load(first, padv, take);
        for (uint32_t y = 0; y < g->in_h; y++) {
            const uint32_t n = y + 1; /* a's partner, dilation 1 */
            __m128i b = n >= g->in_h              ? zero
                        : n < s->y0 || n >= s->y1 ? padv
                                                  : dw_src_load(first + (size_t)(n - s->y0) *
                                                                            s->line_stride,
                                                                padv, take);
            dw_store_pair_row(dst + (size_t)y * W, a, b, W > 8);
            a = b;
        }
    } else {
        __m128i next = dw_src_row(in, line0, 0, padv, take);
        for (uint32_t y = 0; y < g->in_h; y++) {
            /* row y is the partner of row y - 1 under dilation 1: made once */
            __m128i a = g->dil_y == 1 ? next : dw_src_row(in, line0, y, padv, take);
            __m128i b = y + g->dil_y < g->in_h ? dw_src_row(in, line0, y + g->dil_y, padv, take)
                                               : zero;
            next = b;
            dw_store_pair_row(dst + (size_t)y * W, a, b, W > 8);
        }
    }
    dw_zero_tail(dst + (size_t)g->in_h * W);
}

/* ---- MobileNet's 3x3 stride-1 windows from the lines, in AVX2 rows ----
 * The same paired plane and the same products as dw_pair_plane_src and
 * dw_s1_paired with a 3x3 window, written for that window alone: the
 * plane's rows in runs (padding above, data, padding below) with the next
 * data row's address carried, not computed a row; an output row six
 * vpmaddwd from one row pointer carried down the plane.  A 7x7x8 block's
 * layer is a long path (callgrind: ~26,000 instructions in the ~3 us it
 * takes, perf; its instruction-cache misses: docs/performance.md, round
 * 35), of which these rows were a part worth cutting: one 7x7x8 plus one
 * 14x14x8 call 21,794 -> 11,878 instructions, rdtsc best 1,078 -> 857 and
 * 2,205 -> 1,911 ticks (Zen 3); MobileNetV2's 7x7x960 kind 26,266 ->
 * 22,980 instructions a block, whole (callgrind of model_bench's timed
 * runs). */

/* dw_pair_plane_src's plane (dilation 1, every data row's load inside the
 * buffer: dw_src_inside), rows of W <= 8 (wide 0) or <= 16 lanes. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw3_pair_plane(const struct dla_conv_geom *g, const struct dla_conv_src *s, const int8_t *line0,
               __m128i padv, __m128i take, int32_t *dst, const int wide)
{
    const size_t W = g->in_w, ls = s->line_stride;
    const uint32_t h = g->in_h, y0 = s->y0, y1 = s->y1; /* y0 < y1 <= h */
    const int8_t *row = line0 - s->x0;                  /* row y0's column 0 */
    /* row y's value for y in [0, h]: PAD_VALUE outside [y0, y1), zero at h */
    __m128i a = y0 > 0 ? padv : dw_src_load(row, padv, take);
    uint32_t y = 0;
    for (; y + 1 < y0; y++, dst += W) { /* a padding row under a padding row */
        dw_store_pair_row(dst, a, a, wide);
    }
    if (y0 > 0) { /* the last padding row above, under the first data row */
        __m128i b = dw_src_load(row, padv, take);
        dw_store_pair_row(dst, a, b, wide);
        a = b;
        y++;
        dst += W;
    }
    for (; y + 1 < y1; y++, dst += W) { /* a data row under a data row */
        row += ls;
        __m128i b = dw_src_load(row, padv, take);
        dw_store_pair_row(dst, a, b, wide);
        a = b;
    }
    for (; y < h; y++, dst += W) { /* the last data row, then padding */
        __m128i b = y + 1 < h ? padv : _mm_setzero_si128();
        dw_store_pair_row(dst, a, b, wide);
        a = b;
    }
    dw_zero_tail(dst);
}

/* One channel's outputs from its paired plane: rows (oy, oy + 1) with the
 * window's rows 0 and 1, rows (oy + 2, oy + 3) with row 2 and zero (as
 * dw_s1_paired with py 2).  after: the outputs past the channel's end this
 * call may overwrite (its later channels, made after it), so that only a
 * store that would pass the call's last channel takes its lanes one by
 * one; wide: 8 < out_w <= 16 (two vectors a row), else out_w <= 8. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw3_rows(const struct dla_conv_geom *g, const int32_t *plane, const int8_t *w, int32_t *out,
         size_t after, const int wide)
{
    const size_t W = g->in_w;
    const uint32_t ow = g->out_w, oh = g->out_h;
    const __m256i w00 = dw_wpair(w[0], w[3]), w01 = dw_wpair(w[1], w[4]),
                  w02 = dw_wpair(w[2], w[5]), w10 = dw_wpair(w[6], 0),
                  w11 = dw_wpair(w[7], 0), w12 = dw_wpair(w[8], 0);
    size_t rem = (size_t)oh * ow + after; /* outputs this call may store from o on */
    const int32_t *r = plane;
    int32_t *o = out;
#define DW3_LD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define DW3_SUM(p)                                                                             \
    _mm256_add_epi32(                                                                      \
        _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(DW3_LD(p), w00),                 \
                                          _mm256_madd_epi16(DW3_LD((p) + 1), w01)),          \
                         _mm256_madd_epi16(DW3_LD((p) + 2), w02)),                          \
        _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(DW3_LD((p) + 2 * W), w10),       \
                                          _mm256_madd_epi16(DW3_LD((p) + 2 * W + 1), w11)),  \
                         _mm256_madd_epi16(DW3_LD((p) + 2 * W + 2), w12)))
    for (uint32_t oy = 0; oy < oh; oy++, r += W, o += ow, rem -= ow) {
        __m256i v0 = DW3_SUM(r);
        if (wide) { /* lanes 0-7 are the row's */
            __m256i v1 = DW3_SUM(r + 8);
            _mm256_storeu_si256((__m256i *)(void *)o, v0);
            if (rem >= 16) {
                _mm256_storeu_si256((__m256i *)(void *)(o + 8), v1);
            } else {
                dw_store_part(o + 8, v1, ow - 8);
            }
        } else if (rem >= 8) { /* (rem >= ow: a row of eight always stores whole) */
            _mm256_storeu_si256((__m256i *)(void *)o, v0);
        } else {
            dw_store_part(o, v0, ow);
        }
    }
#undef DW3_SUM
#undef DW3_LD
}

/* Whether dw3_src_body takes g with its input src (in_w <= 16: a plane row
 * and an output row in one or two vectors). */
static int dw3_takes(const struct dla_conv_geom *g, const struct dla_conv_src *s)
{
    return g->k_w == 3 && g->k_h == 3 && g->stride_x == 1 && g->stride_y == 1 &&
           g->dil_x == 1 && g->dil_y == 1 && g->in_w <= 16 && s->y0 < s->y1 && g->out_w >= 1;
}

/* Channel k's plane (dw3_pair_plane when its rows' loads are inside the
 * buffer, else the general dw_pair_plane_src). */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw3_plane(const struct dla_conv_geom *g, const struct dla_dw_src *in, const int8_t *line0,
          __m128i padv, __m128i take, int32_t *dst, const int wide)
{
    if (dw_src_inside(in, line0)) {
        dw3_pair_plane(g, &in->src, line0, padv, take, dst, wide);
    } else {
        dw_pair_plane_src(g, in, line0, padv, take, dst);
    }
}

/* dw_src_range's AVX2 rows for the channels [k0, k1) of a dw3_takes layer;
 * the planes made one channel ahead, as there.  wide_plane: in_w > 8 (two
 * stores a plane row), wide_rows: out_w > 8. */
DLA_LANES_AVX2_ATTR static inline __attribute__((always_inline)) void
dw3_src_body(const struct dla_conv_geom *g, const struct dla_dw_src *in, const int8_t *diag,
             int32_t *out, size_t k0, size_t k1, __m128i padv, __m128i take,
             const int wide_plane, const int wide_rows)
{
    const struct dla_conv_src *s = &in->src;
    const size_t plane_out = (size_t)g->out_h * g->out_w;
    _Alignas(64) int32_t planes[2][DW_PAIR_PLANE_MAX + 2 * 8];
    dw3_plane(g, in, s->data + k0 * s->ch_stride, padv, take, planes[k0 & 1], wide_plane);
    for (size_t k = k0; k < k1; k++) {
        if (k + 1 < k1) {
            dw3_plane(g, in, s->data + (k + 1) * s->ch_stride, padv, take, planes[(k + 1) & 1],
                      wide_plane);
        }
        dw3_rows(g, planes[k & 1], diag + 9 * k, out + k * plane_out, (k1 - 1 - k) * plane_out,
                 wide_rows);
    }
}

/* dw_src_range through the VNNI rows: each channel's padded rows (as
 * dw_src_row makes them) stored sixteen bytes apart, a plane of in_h x 16
 * bytes whose columns past in_w no output reads, then its rows (dwv_apply,
 * in_w 16 in their geometry): one 16-byte store a row instead of the
 * pairing's 64 bytes.  Takes in_h <= DWV_SRC_MAX_H. */
#define DWV_SRC_MAX_H (DW_PAIR_PLANE_MAX / DW_SRC_MAX_W)

static int dwv_src_takes(const struct dla_conv_geom *g)
{
    struct dla_conv_geom g16 = *g;
    g16.in_w = DW_SRC_MAX_W;
    return g->in_h <= DWV_SRC_MAX_H && dwv_takes(&g16);
}

/*
 * One channel of the src path where each output row is one block (up to
 * 16 outputs) and a window row has at most four taps (dilation 1): each
 * input row is made once into its taps rows, tr[y] lane x = bytes x..x+3
 * of row y (flipped to unsigned), one vpermb a row, and each output row is
 * then k_h loads and vpdpbusd with no permute, in two chains of sums
 * added at the end.  A 14x14x8 block warm: 343-354 ns through dwv_rows,
 * 352-358 this way with one chain, 287-320 with two (the chain of k_h
 * vpdpbusd latencies an output row was the bound, not the permutes).
 */
DWV_INLINE void dwv_src_taps(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                             const int8_t *line0, const int8_t *w, int32_t *out, uint32_t k_h,
                             uint32_t k_w, __m128i padv, __m128i take, __m512i idx_t,
                             int8_t *tr)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const int inside = dw_src_inside(in, line0);
    for (uint32_t y = 0; y < g->in_h; y++) {
        const __m128i r = dw_src_row_at(in, line0, y, inside, padv, take);
        const __m512i t = _mm512_permutexvar_epi8(idx_t, _mm512_zextsi128_si512(r));
        _mm512_storeu_si512((void *)(tr + (size_t)y * 64), _mm512_xor_si512(t, flip));
    }
    __m512i wq[DW_PAIR_MAX_K][2];
    const __m512i bias = dwv_weights(w, k_h, k_w, 1, wq);
    const __mmask16 m = dw512_first(g->out_w);
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        const int8_t *t0 = tr + (size_t)oy * g->stride_y * 64;
        /* two chains of sums, added at the end: a row's sums are a chain of
         * k_h vpdpbusd latencies otherwise, and rows did not overlap enough
         * to hide it */
        __m512i acc[2] = {bias, _mm512_setzero_si512()};
#pragma GCC unroll 8
        for (uint32_t ky = 0; ky < k_h; ky++) {
            acc[ky & 1] = _mm512_dpbusd_epi32(
                acc[ky & 1], _mm512_loadu_si512((const void *)(t0 + (size_t)ky * g->dil_y * 64)),
                wq[ky][0]);
        }
        _mm512_mask_storeu_epi32(out + (size_t)oy * g->out_w, m,
                                 _mm512_add_epi32(acc[0], acc[1]));
    }
}

/* dwv_src_range's body: each channel's plane made from its lines, then
 * its rows; with two output rows a block (up to 8 wide), the setup of the
 * geometry made once for every channel (a 7x7x8 block 171-176 -> 144-147
 * ns warm, rdtsc-free loop of 1,000). */
DWV_INLINE void dwv_src_body(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                             const int8_t *diag, int32_t *out, size_t k0, size_t k1,
                             uint32_t k_h, uint32_t k_w, uint32_t dx, int two_rows)
{
    const struct dla_conv_src *s = &in->src;
    const size_t taps = (size_t)k_w * k_h, rows = g->in_h;
    const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m128i take =
        _mm_and_si128(_mm_cmpgt_epi8(lane, _mm_set1_epi8((char)((int)s->x0 - 1))),
                      _mm_cmpgt_epi8(_mm_set1_epi8((char)s->x1), lane));
    const __m128i padv = _mm_set1_epi8(s->pad);
    struct dla_conv_geom g16 = *g;
    g16.in_w = DW_SRC_MAX_W;
    struct dwv_setup u;
    if (two_rows) {
        dwv_setup(&g16, k_h, k_w, 1, dx, 8, &u);
    }
    if (!two_rows && k_w <= 4 && dx == 1 && g->out_w <= 16) {
        /* lane x's bytes: x, x + 1, x + 2, x + 3 (past the row's 16 bytes:
         * the zero-extension's zeros, under zero weights) */
        const __m512i idx_t = _mm512_add_epi32(
            _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                                 14, 15),
                               _mm512_set1_epi32(0x01010101)),
            _mm512_set1_epi32(0x03020100));
        _Alignas(64) int8_t tr[DWV_SRC_MAX_H * 64];
        for (size_t k = k0; k < k1; k++) {
            dwv_src_taps(g, in, s->data + k * s->ch_stride, diag + k * taps,
                         out + k * g->out_h * g->out_w, k_h, k_w, padv, take, idx_t, tr);
        }
        return;
    }
    /* the plane, then the bytes its last blocks' 64-byte loads reach */
    _Alignas(64) int8_t plane[DWV_SRC_MAX_H * DW_SRC_MAX_W + 64];
    memset(plane + rows * DW_SRC_MAX_W, 0, 64);
    const int8_t *end = plane + rows * DW_SRC_MAX_W + 64;
    for (size_t k = k0; k < k1; k++) {
        const int8_t *line0 = s->data + k * s->ch_stride;
        if (k + 1 < k1) {
            /* the next kernel, often cold (as dw_range) */
            __builtin_prefetch(diag + (k + 1) * taps);
            __builtin_prefetch(diag + (k + 2) * taps - 1);
        }
        /* a loop of each kind: one that tests `inside` a row was slower
         * (7x7x8 blocks 138-141 -> 163-169 ns warm) */
        if (dw_src_inside(in, line0)) {
            for (uint32_t y = 0; y < rows; y++) {
                _mm_storeu_si128((__m128i *)(void *)(plane + (size_t)y * DW_SRC_MAX_W),
                                 dw_src_row_at(in, line0, y, 1, padv, take));
            }
        } else {
            for (uint32_t y = 0; y < rows; y++) {
                _mm_storeu_si128((__m128i *)(void *)(plane + (size_t)y * DW_SRC_MAX_W),
                                 dw_src_row_at(in, line0, y, 0, padv, take));
            }
        }
        int32_t *o = out + k * g->out_h * g->out_w;
        if (two_rows) {
            dwv_apply(&g16, &u, plane, diag + k * taps, o, end, k_h, k_w, 1, 8);
        } else { /* (its own setup: 14x14x8 blocks 343-360 -> 357-372 ns with the shared one) */
            dwv_channel(&g16, plane, diag + k * taps, o, end);
        }
    }
}

/* dw_src_range through the VNNI rows (above; x stride 1, the src path's). */
DWV_ATTR static void dwv_src_range(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                                   const int8_t *diag, int32_t *out, size_t k0, size_t k1)
{
    struct dla_conv_geom g16 = *g;
    g16.in_w = DW_SRC_MAX_W;
    const int two_rows = dwv_two_rows(&g16);
    if (DLA_SPECIALIZE && g->k_w == 3 && g->k_h == 3 && g->dil_x == 1) { /* MobileNet's */
        if (two_rows) {
            dwv_src_body(g, in, diag, out, k0, k1, 3, 3, 1, 1);
        } else {
            dwv_src_body(g, in, diag, out, k0, k1, 3, 3, 1, 0);
        }
    } else {
        dwv_src_body(g, in, diag, out, k0, k1, g->k_h, g->k_w, g->dil_x, two_rows);
    }
}

/* Channels [k0, k1) from their lines; avx512: the planes through
 * dw512_src_paired (y stride 1), else the AVX2 rows. */
DLA_LANES_AVX2_ATTR static void dw_src_range(const struct dla_conv_geom *g,
                                             const struct dla_dw_src *in, const int8_t *diag,
                                             int32_t *out, size_t k0, size_t k1, int avx512)
{
    const struct dla_conv_src *s = &in->src;
    const size_t taps = (size_t)g->k_w * g->k_h;
    const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    /* lanes x0 <= i < x1 take the line (x0 <= x1 <= W <= 16) */
    const __m128i take =
        _mm_and_si128(_mm_cmpgt_epi8(lane, _mm_set1_epi8((char)((int)s->x0 - 1))),
                      _mm_cmpgt_epi8(_mm_set1_epi8((char)s->x1), lane));
    const __m128i padv = _mm_set1_epi8(s->pad);
    /* MobileNet's 3x3 stride-1 windows: their own rows (dw3_src_body) */
    if (!avx512 && k0 < k1 && dw3_takes(g, s)) {
        if (g->out_w > 8) { /* in_w = out_w + 2 */
            dw3_src_body(g, in, diag, out, k0, k1, padv, take, 1, 1);
        } else if (g->in_w > 8) {
            dw3_src_body(g, in, diag, out, k0, k1, padv, take, 1, 0);
        } else {
            dw3_src_body(g, in, diag, out, k0, k1, padv, take, 0, 0);
        }
        return;
    }
    /* the plane, then eight zero lanes, and a last row's spill before them;
     * two, so that channel k + 1 is paired before channel k is computed
     * (its rows' loads then do not wait on the stores that just paired
     * them: 7x7x8 op, warm, rdtsc best 1,225 -> 1,151 ticks) */
    _Alignas(64) int32_t planes[2][DW_PAIR_PLANE_MAX + 2 * 8];
    if (k0 < k1) {
        dw_pair_plane_src(g, in, s->data + k0 * s->ch_stride, padv, take, planes[k0 & 1]);
    }
    for (size_t k = k0; k < k1; k++) {
        const int8_t *w = diag + k * taps;
        if (k + 1 < k1) {
            dw_pair_plane_src(g, in, s->data + (k + 1) * s->ch_stride, padv, take,
                              planes[(k + 1) & 1]);
        }
        const int32_t *paired = planes[k & 1];
        if (avx512 && g->stride_y == 1) {
            dw512_src_paired(g, paired, w, out + k * g->out_h * g->out_w);
        } else if (g->k_w == 3 && g->k_h == 3 && g->dil_x == 1) {
            dw_s1_paired(g, paired, w, out + k * g->out_h * g->out_w, 2, 3, 1);
        } else {
            dw_s1_paired(g, paired, w, out + k * g->out_h * g->out_w, (g->k_h + 1) / 2, g->k_w,
                         g->dil_x);
        }
    }
}
#endif

#if defined(DLA_LANES_X86)
/* ---- the input read from CBUF's lines a whole line at a time (VNNI + VBMI) ----
 * A line of CBUF holds the channels' rows one after another (ch_stride
 * bytes apart).  A pass takes as many channels as fit one 128-byte table
 * of two registers (the line's bytes, then PAD_VALUE from byte 127 on):
 * one vpermi2b puts the four taps' bytes of sixteen outputs (c, x) in
 * their lanes, PAD_VALUE where a tap falls outside the data columns (a
 * line's tap rows, made once and kept in a ring while the window needs
 * them), and one vpdpbusd a window row adds their products; so a line
 * costs two loads and a permute per sixteen outputs and an output row k_h
 * vpdpbusd per sixteen, with no plane made.  Outputs
 * sit in `slot` lanes a channel (8 up to eight columns, else a power of
 * two): a channel's row is one masked store.  The bytes are flipped to
 * unsigned and the sums start at -128 x (the sum of the weights), as the
 * VNNI rows do: the same exact int32 sums.  Any x stride and dilation;
 * windows up to 4 wide. */
#define DWL_MAX_VEC 8u   /* sixteen-lane vectors a pass */
#define DWL_MAX_KH 8u
#define DWL_PAD_AT 127u  /* the table byte that holds PAD_VALUE */
/* Tap rows kept: a ring of DWL_RING lines (a power of two at least the
 * window's height in lines, (k_h - 1) x dil_y + 1). */
#define DWL_RING 16u
#define DWL_CHUNK 4u /* vectors whose sums and kernels stay in registers */

/* A call's geometry: what every pass of channels shares. */
struct dwl_plan {
    uint32_t sh;      /* log2 of the lanes a channel (slot) */
    uint32_t cp;      /* channels a pass */
    uint32_t nvec;    /* vectors a pass */
    uint32_t data_w;  /* data bytes of a channel's row: x1 - x0 */
};

/* Lanes a channel for out_w columns (log2), or 0 past 128 columns. */
static uint32_t dwl_slot_shift(uint32_t out_w)
{
    uint32_t sh = 3;
    while ((1u << sh) < out_w && sh < 7) {
        sh++;
    }
    return (1u << sh) >= out_w ? sh : 0;
}

static int dwl_plan_of(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                       struct dwl_plan *p)
{
    const uint32_t taps = g->k_w * g->k_h;
    if (g->k_w == 0 || g->k_w > 4 || g->k_h == 0 || g->k_h > DWL_MAX_KH || g->out_w == 0 ||
        src->x1 < src->x0 || src->ch_stride == 0 || src->ch_stride > DWL_PAD_AT ||
        src->x1 - src->x0 > src->ch_stride) {
        return 0;
    }
    p->sh = dwl_slot_shift(g->out_w);
    if (p->sh == 0 || (uint64_t)(g->k_h - 1) * g->dil_y + 1 > DWL_RING) {
        return 0;
    }
    uint32_t cp = (DWL_MAX_VEC * 16u) >> p->sh;
    cp = cp < DWL_PAD_AT / src->ch_stride ? cp : DWL_PAD_AT / (uint32_t)src->ch_stride;
    cp = cp < DWL_PAD_AT / taps ? cp : DWL_PAD_AT / taps; /* a zero byte at DWL_PAD_AT */
    cp = cp < 32u / g->k_h ? cp : 32u / g->k_h; /* the (channel, row) dwords of the weights */
    p->cp = cp;
    p->nvec = ((cp << p->sh) + 15u) / 16u;
    p->data_w = src->x1 - src->x0;
    return cp > 0;
}

/* Lane indices of vector v's lanes: L = 16 v + lane. */
DWV_INLINE __m512i dwl_lanes(uint32_t v)
{
    return _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32((int)(16u * v)));
}

/* Vector v's table bytes: lane (c, x) = L >> sh, L & (slot - 1) takes in
 * byte j the input byte of tap j, c * ch_stride + x * s + j * dx - x0, or
 * DWL_PAD_AT outside the data columns (and past the window). */
DWV_INLINE __m512i dwl_input_index(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                                   const struct dwl_plan *p, uint32_t v)
{
    const __m512i L = dwl_lanes(v);
    const __m512i c = _mm512_srli_epi32(L, p->sh);
    const __m512i x = _mm512_and_si512(L, _mm512_set1_epi32((int)((1u << p->sh) - 1u)));
    const __m512i xs = _mm512_mullo_epi32(x, _mm512_set1_epi32((int)g->stride_x));
    const __m512i base = _mm512_sub_epi32(
        _mm512_add_epi32(_mm512_mullo_epi32(c, _mm512_set1_epi32((int)src->ch_stride)), xs),
        _mm512_set1_epi32((int)src->x0));
    const __m512i pad = _mm512_set1_epi32((int)DWL_PAD_AT);
    const __mmask16 col = _mm512_cmplt_epu32_mask(x, _mm512_set1_epi32((int)g->out_w));
    __m512i idx = _mm512_setzero_si512();
    for (uint32_t j = 0; j < 4; j++) {
        const __m512i xin = _mm512_add_epi32(xs, _mm512_set1_epi32((int)(j * g->dil_x)));
        __mmask16 in = j < g->k_w ? col : 0;
        in &= _mm512_cmpge_epu32_mask(xin, _mm512_set1_epi32((int)src->x0));
        in &= _mm512_cmplt_epu32_mask(xin, _mm512_set1_epi32((int)src->x1));
        const __m512i b = _mm512_mask_add_epi32(pad, in, base,
                                                _mm512_set1_epi32((int)(j * g->dil_x)));
        idx = _mm512_or_si512(idx, _mm512_slli_epi32(b, 8 * j));
    }
    return idx;
}

/* The byte indices into a pass's diagonal kernels (cp * taps bytes, then
 * zeros from DWL_PAD_AT) of dwords d = c * k_h + ky, d0 .. d0 + 15: the
 * taps of window row ky of channel c, zero past k_w. */
DWV_INLINE __m512i dwl_weight_index(const struct dla_conv_geom *g, uint32_t d0)
{
    const __m512i d = _mm512_add_epi32(dwl_lanes(0), _mm512_set1_epi32((int)d0));
    /* c = d / k_h for d < 32: (d * ceil(2^16 / k_h)) >> 16 */
    const uint32_t inv = (65536u + g->k_h - 1u) / g->k_h;
    const __m512i c = _mm512_srli_epi32(_mm512_mullo_epi32(d, _mm512_set1_epi32((int)inv)), 16);
    const __m512i ky = _mm512_sub_epi32(d, _mm512_mullo_epi32(c, _mm512_set1_epi32((int)g->k_h)));
    const __m512i base = _mm512_add_epi32(
        _mm512_mullo_epi32(c, _mm512_set1_epi32((int)(g->k_w * g->k_h))),
        _mm512_mullo_epi32(ky, _mm512_set1_epi32((int)g->k_w)));
    uint32_t past = 0, step = 0;
    for (uint32_t j = 0; j < 4; j++) {
        past |= (j < g->k_w ? 0u : (uint32_t)DWL_PAD_AT) << (8 * j);
        step |= (j < g->k_w ? j : 0u) << (8 * j);
    }
    const __m512i keep = _mm512_set1_epi32((int)((g->k_w >= 4 ? 0xffffffffu
                                                             : (1u << (8 * g->k_w)) - 1u)));
    __m512i idx = _mm512_add_epi32(_mm512_mullo_epi32(base, _mm512_set1_epi32(0x01010101)),
                                   _mm512_set1_epi32((int)step));
    return _mm512_or_si512(_mm512_and_si512(idx, keep), _mm512_set1_epi32((int)past));
}

/* Line y's tap rows (a pass's table of it, permuted by idx) into tr. */
DWV_INLINE void dwl_line(const struct dla_conv_src *src, const __m512i *idx, uint32_t nvec,
                         size_t c0, __mmask64 mlo, __mmask64 mhi, uint32_t y, __m512i *tr)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const __m512i padv = _mm512_set1_epi8(src->pad);
    if (y < src->y0 || y >= src->y1) {
        const __m512i padf = _mm512_xor_si512(padv, flip); /* every byte PAD_VALUE */
#pragma GCC unroll 8
        for (uint32_t v = 0; v < nvec; v++) {
            tr[v] = padf;
        }
        return;
    }
    const int8_t *line = src->data + (size_t)(y - src->y0) * src->line_stride + c0 * src->ch_stride;
    const __m512i lo = _mm512_xor_si512(_mm512_mask_loadu_epi8(padv, mlo, line), flip);
    const __m512i hi = _mm512_xor_si512(_mm512_mask_loadu_epi8(padv, mhi, line + 64), flip);
#pragma GCC unroll 8
    for (uint32_t v = 0; v < nvec; v++) {
        tr[v] = _mm512_permutex2var_epi8(lo, idx[v], hi);
    }
}

/* Vectors [v0, v0 + nv) of a pass (dwl_pass): each line's tap rows made
 * once, kept in a ring while the window needs them, and each output row
 * k_h vpdpbusd a vector with the kernels in registers (one load each: the
 * tap row; all eight vectors at once loaded the kernels too, and a 56x56x8
 * block was bound by its loads). */
DWV_INLINE void dwl_chunk(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                          const struct dwl_plan *p, const __m512i *idx,
                          const __m512i (*wq)[DWL_MAX_VEC], const __m512i *start,
                          const size_t *at, const __mmask16 *keep, int32_t *out, size_t c0,
                          uint32_t n, uint32_t v0, const uint32_t nv, const uint32_t k_h,
                          __mmask64 mlo, __mmask64 mhi, __mmask16 first)
{
    __m512i w[DWL_MAX_KH][DWL_CHUNK];
    for (uint32_t ky = 0; ky < k_h; ky++) {
        for (uint32_t v = 0; v < nv; v++) {
            w[ky][v] = wq[ky][v0 + v];
        }
    }
    const size_t plane = (size_t)g->out_h * g->out_w;
    _Alignas(64) __m512i tr[DWL_RING][DWL_CHUNK];
    uint32_t made = 0; /* lines [0, made) made */
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        const uint32_t last = oy * g->stride_y + (k_h - 1) * g->dil_y;
        for (; made <= last; made++) {
            dwl_line(src, idx + v0, nv, c0, mlo, mhi, made, tr[made & (DWL_RING - 1)]);
        }
        __m512i acc[DWL_CHUNK];
#pragma GCC unroll 4
        for (uint32_t v = 0; v < DWL_CHUNK; v++) {
            acc[v] = v < nv ? start[v0 + v] : _mm512_setzero_si512();
        }
#pragma GCC unroll 8
        for (uint32_t ky = 0; ky < k_h; ky++) {
            const __m512i *t = tr[(oy * g->stride_y + ky * g->dil_y) & (DWL_RING - 1)];
#pragma GCC unroll 4
            for (uint32_t v = 0; v < nv; v++) {
                acc[v] = _mm512_dpbusd_epi32(acc[v], t[v], w[ky][v]);
            }
        }
        int32_t *o = out + c0 * plane + (size_t)oy * g->out_w;
        if (p->sh == 3) { /* two channels a vector */
#pragma GCC unroll 4
            for (uint32_t v = 0; v < nv; v++) {
                const uint32_t c = 2 * (v0 + v);
                _mm256_mask_storeu_epi32(o + c * plane, (__mmask8)first,
                                         _mm512_castsi512_si256(acc[v]));
                if (c + 1 < n) {
                    _mm256_mask_storeu_epi32(o + (c + 1) * plane, (__mmask8)first,
                                             _mm512_extracti64x4_epi64(acc[v], 1));
                }
            }
        } else {
#pragma GCC unroll 4
            for (uint32_t v = 0; v < nv; v++) {
                _mm512_mask_storeu_epi32(o + at[v0 + v], keep[v0 + v], acc[v]);
            }
        }
    }
}

/* Channels [c0, c0 + n) (one pass) of the call planned in p: each line's
 * tap rows made once (kept in a ring while the window needs them), then
 * each output row k_h vpdpbusd a vector. */
DWV_INLINE void dwl_pass(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                         const struct dwl_plan *p, const __m512i *idx, const __m512i widx[2],
                         const int8_t *diag, int32_t *out, size_t c0, uint32_t n,
                         const uint32_t k_h, const uint32_t nvec)
{
    const uint32_t taps = g->k_w * k_h;
    /* the pass's kernels as a table: (channel, window row) dwords of four taps */
    const size_t wb = (size_t)n * taps;
    const int8_t *w = diag + c0 * taps;
    const __m512i wlo = _mm512_maskz_loadu_epi8(wb >= 64 ? ~0ull : (1ull << wb) - 1u, w);
    const __m512i whi = _mm512_maskz_loadu_epi8(wb > 64 ? (1ull << (wb - 64)) - 1u : 0, w + 64);
    const __m512i W0 = _mm512_permutex2var_epi8(wlo, widx[0], whi);
    const __m512i W1 = _mm512_permutex2var_epi8(wlo, widx[1], whi);
    _Alignas(64) __m512i wq[DWL_MAX_KH][DWL_MAX_VEC];
    __m512i start[DWL_MAX_VEC];
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    for (uint32_t v = 0; v < nvec; v++) {
        const __m512i ck = _mm512_mullo_epi32(_mm512_srli_epi32(dwl_lanes(v), p->sh),
                                              _mm512_set1_epi32((int)k_h));
        __m512i sum = _mm512_setzero_si512();
        for (uint32_t ky = 0; ky < k_h; ky++) {
            wq[ky][v] = _mm512_permutex2var_epi32(
                W0, _mm512_add_epi32(ck, _mm512_set1_epi32((int)ky)), W1);
            sum = _mm512_dpbusd_epi32(sum, flip, wq[ky][v]);
        }
        start[v] = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
    }
    /* the line's data bytes of the pass's channels */
    const size_t lb = (size_t)(n - 1) * src->ch_stride + p->data_w;
    const __mmask64 mlo = lb >= 64 ? ~0ull : (1ull << lb) - 1u;
    const __mmask64 mhi = lb >= 128 ? ~0ull : lb > 64 ? (1ull << (lb - 64)) - 1u : 0;
    const size_t plane = (size_t)g->out_h * g->out_w;
    const __mmask16 first = (__mmask16)((1u << (g->out_w < 16 ? g->out_w : 16)) - 1u);
    /* where vector v's lanes go in an output row (slots of 16 or more
     * lanes: one channel's columns x .. x + 15) and which are columns */
    size_t at[DWL_MAX_VEC];
    __mmask16 keep[DWL_MAX_VEC];
    for (uint32_t v = 0; v < nvec; v++) {
        const uint32_t L = 16 * v, c = L >> p->sh, x = L & ((1u << p->sh) - 1u);
        at[v] = c * plane + (x < g->out_w ? x : 0);
        keep[v] = x < g->out_w ? dw512_first(g->out_w - x) : 0;
    }
    /* DWL_CHUNK vectors at a time: their kernels stay in registers */
    for (uint32_t v0 = 0; v0 < nvec; v0 += DWL_CHUNK) {
        const uint32_t m = nvec - v0 < DWL_CHUNK ? nvec - v0 : DWL_CHUNK;
        if (DLA_SPECIALIZE && m == DWL_CHUNK) {
            dwl_chunk(g, src, p, idx, wq, start, at, keep, out, c0, n, v0, DWL_CHUNK, k_h, mlo,
                      mhi, first);
        } else {
            dwl_chunk(g, src, p, idx, wq, start, at, keep, out, c0, n, v0, m, k_h, mlo, mhi,
                      first);
        }
    }
}

/* Channels [k0, k1) from their lines, a pass of up to p.cp channels at a time. */
DWV_ATTR static void dwl_range(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                               const int8_t *diag, int32_t *out, size_t k0, size_t k1,
                               const struct dwl_plan *p)
{
    __m512i idx[DWL_MAX_VEC];
    for (uint32_t v = 0; v < p->nvec; v++) {
        idx[v] = dwl_input_index(g, &in->src, p, v);
    }
    const __m512i widx[2] = {dwl_weight_index(g, 0), dwl_weight_index(g, 16)};
    for (size_t c0 = k0; c0 < k1; c0 += p->cp) {
        const uint32_t n = k1 - c0 < p->cp ? (uint32_t)(k1 - c0) : p->cp;
        const uint32_t nvec = ((n << p->sh) + 15u) / 16u;
        /* MobileNet's 3x3 windows with the vectors a constant: the sums
         * stay in registers */
        if (DLA_SPECIALIZE && g->k_h == 3 && nvec == 4) {
            dwl_pass(g, &in->src, p, idx, widx, diag, out, c0, n, 3, 4);
        } else if (DLA_SPECIALIZE && g->k_h == 3 && nvec == 8) {
            dwl_pass(g, &in->src, p, idx, widx, diag, out, c0, n, 3, 8);
        } else {
            dwl_pass(g, &in->src, p, idx, widx, diag, out, c0, n, g->k_h, nvec);
        }
    }
}

/*
 * From the memory's atoms (dla_conv_src.atoms 8: a pixel's 8 channels side
 * by side, as CDMA fetches a surface), without the transposition to
 * channel rows that the passes above need: a strip of G output columns
 * (up to 8: the window of its first column's taps to its last column's is
 * at most 15 pixels, 120 bytes) loads the atoms of those pixels, PAD_VALUE
 * past them from byte 120 on, and one vpermi2b a pair of channels puts the
 * four taps' bytes of the pair's G outputs (lanes 0-7: the pair's first
 * channel, 8-15: its second) in their lanes, PAD_VALUE where a tap falls
 * outside the data columns: a line's tap rows, kept in a ring while the
 * window needs them; an output row is k_h vpdpbusd a pair and two masked
 * stores of G sums.  The same flip to unsigned and start at -128 x the
 * sum of the weights as the passes above: the same exact int32 sums.  So a
 * 3x3 block of 8 channels costs two loads and four permutes a line and
 * strip, as the passes do, and CDMA's fetch of the block is no copy at all
 * where the memory keeps its atoms in one range (cdma.c atoms_view).
 */
#define DWA_MAX_KH 8u
#define DWA_RING 8u     /* lines of tap rows kept (>= (k_h - 1) x dil_y + 1) */
#define DWA_SPAN 15u    /* pixels a strip's window loads */
#define DWA_PAD_AT 127u /* a table byte past the window's 120: PAD_VALUE */
#define DWA_STRIPS 8u   /* strips a call's rows run across (tap rows: 16 KiB) */

/* Output columns a strip: the most (up to 8) whose taps reach at most
 * DWA_SPAN pixels; 0 when one column's window is wider. */
static uint32_t dwa_cols(const struct dla_conv_geom *g)
{
    const uint64_t reach = (uint64_t)(g->k_w - 1) * g->dil_x + 1;
    if (g->k_w == 0 || reach > DWA_SPAN || g->stride_x == 0) {
        return 0;
    }
    const uint64_t cols = (DWA_SPAN - reach) / g->stride_x + 1;
    return cols < 8 ? (uint32_t)cols : 8u;
}

static int dwa_takes(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
    return src->atoms == 8 && dla_conv_dw_s8_isa_supported(DLA_DW_VNNI) && g->k_w <= 4 &&
           g->k_h >= 1 && g->k_h <= DWA_MAX_KH && g->out_w >= 1 && g->out_h >= 1 &&
           (uint64_t)(g->k_h - 1) * g->dil_y + 1 <= DWA_RING && dwa_cols(g) > 0;
}

/* A strip's window: the data columns [lb, lb + n) of a line loaded (n <=
 * DWA_SPAN), and the tables of its pairs q of channels cb + 2q, cb + 2q + 1
 * of an atom: lane (c, l) = (L >> 3, L & 7), output column xa + l, takes in
 * byte j the byte of tap j, (d - lb) x 8 + cb + 2q + c for its data column
 * d (at most 14 x 8 + 7 = 119: in the window), DWA_PAD_AT outside the data
 * columns, past k_w and past the strip's `cols` columns. */
struct dwa_strip {
    uint32_t xa, cols; /* first output column, columns stored */
    uint32_t lb;       /* first data column loaded */
    __mmask64 mlo, mhi;
    __m512i idx[4];
};

DWV_INLINE void dwa_strip_of(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                             uint32_t xa, uint32_t cols, uint32_t cb, uint32_t np,
                             struct dwa_strip *st)
{
    const int64_t w = (int64_t)src->x1 - src->x0; /* data columns */
    const int64_t wb = (int64_t)xa * g->stride_x - src->x0; /* column xa's tap 0 */
    const int64_t lb = wb < 0 ? 0 : wb < w ? wb : w;
    const int64_t n = w - lb < (int64_t)DWA_SPAN ? w - lb : (int64_t)DWA_SPAN;
    const uint64_t bytes = (uint64_t)n * 8u;
    st->xa = xa;
    st->cols = cols;
    st->lb = (uint32_t)lb;
    st->mlo = bytes >= 64 ? ~0ull : (1ull << bytes) - 1u;
    st->mhi = bytes > 64 ? (1ull << (bytes - 64)) - 1u : 0;
    const __m512i L = dwl_lanes(0);
    const __m512i c = _mm512_srli_epi32(L, 3);
    const __m512i l = _mm512_and_si512(L, _mm512_set1_epi32(7));
    const __m512i d0 = _mm512_add_epi32(_mm512_mullo_epi32(l, _mm512_set1_epi32((int)g->stride_x)),
                                        _mm512_set1_epi32((int)(wb - lb)));
    const __mmask16 col = _mm512_cmplt_epu32_mask(l, _mm512_set1_epi32((int)cols));
    __m512i idx = _mm512_setzero_si512();
    for (uint32_t j = 0; j < 4; j++) {
        /* the tap's data column less lb: in [-lb, w - lb) where it is data */
        const __m512i d = _mm512_add_epi32(d0, _mm512_set1_epi32((int)(j * g->dil_x)));
        __mmask16 in = j < g->k_w ? col : 0;
        in &= _mm512_cmpge_epi32_mask(d, _mm512_set1_epi32((int)-lb));
        in &= _mm512_cmplt_epi32_mask(d, _mm512_set1_epi32((int)(w - lb)));
        const __m512i b = _mm512_mask_add_epi32(
            _mm512_set1_epi32((int)DWA_PAD_AT), in, _mm512_slli_epi32(d, 3), c);
        idx = _mm512_or_si512(idx, _mm512_slli_epi32(b, 8 * j));
    }
    const __mmask64 data = _mm512_cmpneq_epi8_mask(idx, _mm512_set1_epi8((char)DWA_PAD_AT));
    for (uint32_t q = 0; q < np; q++) {
        st->idx[q] = _mm512_mask_add_epi8(idx, data, idx, _mm512_set1_epi8((char)(cb + 2 * q)));
    }
}

/* Line y's tap rows of a strip for its pairs [0, np) of the surface whose
 * lines start at `surf` (the flipped bytes: PAD_VALUE outside the rows). */
DWV_INLINE void dwa_line(const struct dla_conv_src *src, const struct dwa_strip *st,
                         const int8_t *surf, uint32_t y, const uint32_t np, __m512i *tr)
{
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const __m512i padv = _mm512_set1_epi8(src->pad);
    if (y < src->y0 || y >= src->y1) {
        const __m512i padf = _mm512_xor_si512(padv, flip);
        for (uint32_t q = 0; q < np; q++) {
            tr[q] = padf;
        }
        return;
    }
    const int8_t *at = surf + (size_t)(y - src->y0) * src->line_stride + (size_t)st->lb * 8u;
    const __m512i lo = _mm512_xor_si512(_mm512_mask_loadu_epi8(padv, st->mlo, at), flip);
    const __m512i hi = _mm512_xor_si512(_mm512_mask_loadu_epi8(padv, st->mhi, at + 64), flip);
#pragma GCC unroll 4
    for (uint32_t q = 0; q < np; q++) {
        tr[q] = _mm512_permutex2var_epi8(lo, st->idx[q], hi);
    }
}

/* Strips [0, ns) of the pairs [0, np) of one surface (channels ch0 + 2q,
 * + 1) row by row: an output row's tap rows of every strip (the ring, 16
 * KiB) and its int32 sums are made together, so each row of the output is
 * written once, whole, instead of a strip's columns at a time; their
 * kernels wq[ky][q] and starts in registers; `keep` the channels of the
 * call (bit c: channel ch0 + c). */
DWV_INLINE void dwa_run(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                        const struct dwa_strip *st, const uint32_t ns, const int8_t *surf,
                        const __m512i (*wq)[4], const __m512i *start, const uint32_t np,
                        const uint32_t k_h, uint32_t ch0, unsigned keep, int32_t *out)
{
    __m512i w[DWA_MAX_KH][4];
    for (uint32_t ky = 0; ky < k_h; ky++) {
        for (uint32_t q = 0; q < np; q++) {
            w[ky][q] = wq[ky][q];
        }
    }
    _Alignas(64) __m512i tr[DWA_RING][DWA_STRIPS][4];
    const size_t plane = (size_t)g->out_h * g->out_w;
    uint32_t made = 0;
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        const uint32_t last = oy * g->stride_y + (k_h - 1) * g->dil_y;
        for (; made <= last; made++) {
            for (uint32_t i = 0; i < ns; i++) {
                dwa_line(src, &st[i], surf, made, np, tr[made & (DWA_RING - 1)][i]);
            }
        }
        int32_t *row = out + (size_t)oy * g->out_w;
        for (uint32_t i = 0; i < ns; i++) {
            __m512i acc[4];
#pragma GCC unroll 4
            for (uint32_t q = 0; q < 4; q++) {
                acc[q] = q < np ? start[q] : _mm512_setzero_si512();
            }
#pragma GCC unroll 8
            for (uint32_t ky = 0; ky < k_h; ky++) {
                const __m512i *t = tr[(oy * g->stride_y + ky * g->dil_y) & (DWA_RING - 1)][i];
#pragma GCC unroll 4
                for (uint32_t q = 0; q < np; q++) {
                    acc[q] = _mm512_dpbusd_epi32(acc[q], t[q], w[ky][q]);
                }
            }
            int32_t *o = row + st[i].xa;
            const __mmask8 m = (__mmask8)((1u << st[i].cols) - 1u);
#pragma GCC unroll 4
            for (uint32_t q = 0; q < np; q++) {
                const uint32_t c = 2 * q;
                if (keep >> c & 1u) {
                    _mm256_mask_storeu_epi32(o + (ch0 + c) * plane, m,
                                             _mm512_castsi512_si256(acc[q]));
                }
                if (keep >> (c + 1) & 1u) {
                    _mm256_mask_storeu_epi32(o + (ch0 + c + 1) * plane, m,
                                             _mm512_extracti64x4_epi64(acc[q], 1));
                }
            }
        }
    }
}

/* The kernels of the surface's pairs [0, np): wq[ky][q] lanes 0-7 the taps
 * of window row ky of channel ch0 + 2q (four bytes, zero past k_w), lanes
 * 8-15 of ch0 + 2q + 1 (zero for channels past k1); and their starts. */
DWV_INLINE void dwa_kernels(const struct dla_conv_geom *g, const int8_t *diag, size_t ch0,
                            size_t k1, uint32_t np, __m512i (*wq)[4], __m512i *start)
{
    const uint32_t taps = g->k_w * g->k_h;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const size_t bytes = (k1 - ch0) * taps; /* the pairs' channels' kernels */
    if (bytes <= 128) {
        /* byte b of a kernel vector: lane b / 4, of channel 2q + (b >> 5),
         * tap b % 4 of its row: one permute of the kernels' bytes each
         * (a 3x3 block's 72 bytes; byte by byte, ~20 % of a 14x14 call) */
        const int8_t *d = diag + ch0 * taps;
        const __m512i lo = _mm512_maskz_loadu_epi8(bytes >= 64 ? ~0ull : (1ull << bytes) - 1u, d);
        const __m512i hi = _mm512_maskz_loadu_epi8(
            bytes > 64 ? (bytes >= 128 ? ~0ull : (1ull << (bytes - 64)) - 1u) : 0, d + 64);
        const __m512i iota = _mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51,
                                             50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38,
                                             37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25,
                                             24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12,
                                             11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        const __m512i j = _mm512_and_si512(iota, _mm512_set1_epi8(3));
        const __m512i c = _mm512_and_si512(_mm512_srli_epi16(iota, 5), _mm512_set1_epi8(1));
        const __mmask64 tap = _mm512_cmplt_epu8_mask(j, _mm512_set1_epi8((char)g->k_w));
        const __m512i ctaps = _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(c, c),
                                                    _mm512_set1_epi8((char)taps));
        for (uint32_t q = 0; q < np; q++) {
            const __m512i ch = _mm512_add_epi8(c, _mm512_set1_epi8((char)(2 * q)));
            const __mmask64 live =
                tap & _mm512_cmplt_epu8_mask(ch, _mm512_set1_epi8((char)(k1 - ch0)));
            __m512i sum = _mm512_setzero_si512();
            for (uint32_t ky = 0; ky < g->k_h; ky++) {
                const __m512i idx = _mm512_add_epi8(
                    _mm512_add_epi8(ctaps, j),
                    _mm512_set1_epi8((char)(2 * q * taps + ky * g->k_w)));
                wq[ky][q] = _mm512_maskz_permutex2var_epi8(live, lo, idx, hi);
                sum = _mm512_dpbusd_epi32(sum, flip, wq[ky][q]);
            }
            start[q] = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
        }
        return;
    }
    for (uint32_t q = 0; q < np; q++) {
        __m512i sum = _mm512_setzero_si512();
        for (uint32_t ky = 0; ky < g->k_h; ky++) {
            uint32_t dw[2] = {0, 0};
            for (uint32_t c = 0; c < 2; c++) {
                const size_t ch = ch0 + 2 * q + c;
                for (uint32_t kx = 0; ch < k1 && kx < g->k_w; kx++) {
                    dw[c] |= (uint32_t)(uint8_t)diag[ch * taps + ky * g->k_w + kx] << (8 * kx);
                }
            }
            wq[ky][q] = _mm512_inserti64x4(_mm512_set1_epi32((int)dw[0]),
                                           _mm256_set1_epi32((int)dw[1]), 1);
            sum = _mm512_dpbusd_epi32(sum, flip, wq[ky][q]);
        }
        start[q] = _mm512_sub_epi32(_mm512_setzero_si512(), sum);
    }
}

/* Channels [k0, k1) from the atoms, surface by surface, strip by strip. */
DWV_ATTR static void dwa_range(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                               const int8_t *diag, int32_t *out, size_t k0, size_t k1)
{
    const struct dla_conv_src *src = &in->src;
    const uint32_t cols = dwa_cols(g);
    for (size_t s0 = k0 / 8 * 8; s0 < k1; s0 += 8) {
        const size_t lo = k0 > s0 ? k0 : s0, hi = k1 < s0 + 8 ? k1 : s0 + 8;
        /* the pairs from the one holding channel lo, as channels ch0 + 2q */
        const size_t ch0 = lo & ~(size_t)1;
        const uint32_t np = (uint32_t)((hi - ch0 + 1) / 2);
        unsigned keep = 0;
        for (size_t c = lo; c < hi; c++) {
            keep |= 1u << (c - ch0);
        }
        __m512i wq[DWA_MAX_KH][4], start[4];
        dwa_kernels(g, diag, ch0, hi, np, wq, start);
        const int8_t *surf = src->data + (s0 / 8) * src->ch_stride;
        for (uint32_t x0 = 0; x0 < g->out_w; x0 += cols * DWA_STRIPS) {
            struct dwa_strip st[DWA_STRIPS];
            uint32_t ns = 0;
            for (uint32_t xa = x0; xa < g->out_w && ns < DWA_STRIPS; xa += cols, ns++) {
                dwa_strip_of(g, src, xa, g->out_w - xa < cols ? g->out_w - xa : cols,
                             (uint32_t)(ch0 - s0), np, &st[ns]);
            }
            /* MobileNet's 3x3 blocks, whole or halved (a team's items) */
            if (DLA_SPECIALIZE && g->k_h == 3 && np == 4 && keep == 0xffu) {
                dwa_run(g, src, st, ns, surf, (const __m512i(*)[4])wq, start, 4, 3,
                        (uint32_t)ch0, 0xffu, out);
            } else if (DLA_SPECIALIZE && g->k_h == 3 && np == 4) {
                dwa_run(g, src, st, ns, surf, (const __m512i(*)[4])wq, start, 4, 3,
                        (uint32_t)ch0, keep, out);
            } else if (DLA_SPECIALIZE && g->k_h == 3 && np == 2) {
                dwa_run(g, src, st, ns, surf, (const __m512i(*)[4])wq, start, 2, 3,
                        (uint32_t)ch0, keep, out);
            } else {
                dwa_run(g, src, st, ns, surf, (const __m512i(*)[4])wq, start, np, g->k_h,
                        (uint32_t)ch0, keep, out);
            }
        }
    }
}
#endif

int dla_conv_dw_s8_isa_supported(enum dla_dw_isa isa)
{
    switch (isa) {
    case DLA_DW_SCALAR:
        return 1;
#if defined(DLA_LANES_X86)
    case DLA_DW_AVX2:
        /* the lanes' own check: a wider best ISA still has AVX2 */
        return dla_lanes_supported(DLA_LANES_AVX2);
    case DLA_DW_AVX512:
        return dw_has_avx512bw();
    case DLA_DW_VNNI:
        return dw_has_vnni_vbmi();
#endif
    default:
        return 0;
    }
}

enum dla_dw_isa dla_conv_dw_s8_isa_best(void)
{
    return dla_conv_dw_s8_isa_supported(DLA_DW_VNNI)     ? DLA_DW_VNNI
           : dla_conv_dw_s8_isa_supported(DLA_DW_AVX512) ? DLA_DW_AVX512
           : dla_conv_dw_s8_isa_supported(DLA_DW_AVX2) ? DLA_DW_AVX2
                                                        : DLA_DW_SCALAR;
}

#if defined(DLA_LANES_X86)
/* The AVX2 rows' part of dla_conv_dw_s8_src_takes (x stride 1, rows of
 * up to 16 bytes). */
static int dw_src_rows_take(const struct dla_conv_geom *g)
{
    return g->stride_x == 1 && g->k_w <= DW_PAIR_MAX_K && g->k_h <= DW_PAIR_MAX_K &&
           g->in_w <= DW_SRC_MAX_W && (size_t)g->in_w * g->in_h <= DW_PAIR_PLANE_MAX &&
           dla_conv_dw_s8_isa_supported(DLA_DW_AVX2);
}

/* Whether dwv_src_range makes g's taps rows once an input row
 * (dwv_src_taps: rows of up to 16 outputs, not two a block, windows up to
 * 4 wide, x dilation 1): a 14x14x8 block in 280 ns warm against the
 * whole-line passes' 295; the other geometries the passes take run
 * faster through them (7x7x8: 150 -> 108 ns). */
static int dwv_src_by_taps(const struct dla_conv_geom *g)
{
    struct dla_conv_geom g16 = *g;
    g16.in_w = DW_SRC_MAX_W;
    return dwv_src_takes(g) && !dwv_two_rows(&g16) && g->k_w <= 4 && g->dil_x == 1 &&
           g->out_w <= 16;
}

/* Whether the whole-line passes (dwl_range) take g's input from src. */
static int dwl_takes(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
    struct dwl_plan p;
    return dla_conv_dw_s8_isa_supported(DLA_DW_VNNI) && dwl_plan_of(g, src, &p);
}

/* Element (c, y, x) of the padded input src describes. */
static int8_t dw_src_elem(const struct dla_conv_src *s, size_t c, uint32_t y, uint32_t x)
{
    if (y < s->y0 || y >= s->y1 || x < s->x0 || x >= s->x1) {
        return s->pad;
    }
    return s->data[(size_t)(y - s->y0) * s->line_stride + c * s->ch_stride + (x - s->x0)];
}

/* Channels [k0, k1) from src one product at a time: the ISAs whose rows
 * do not take a geometry that another ISA's passes take. */
static void dw_src_scalar(const struct dla_conv_geom *g, const struct dla_conv_src *s,
                          const int8_t *diag, int32_t *out, size_t k0, size_t k1)
{
    const size_t taps = (size_t)g->k_w * g->k_h;
    for (size_t k = k0; k < k1; k++) {
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            for (uint32_t ox = 0; ox < g->out_w; ox++) {
                int32_t sum = 0;
                for (uint32_t ky = 0; ky < g->k_h; ky++) {
                    for (uint32_t kx = 0; kx < g->k_w; kx++) {
                        sum += (int32_t)diag[k * taps + ky * g->k_w + kx] *
                               dw_src_elem(s, k, oy * g->stride_y + ky * g->dil_y,
                                           ox * g->stride_x + kx * g->dil_x);
                    }
                }
                out[(k * g->out_h + oy) * g->out_w + ox] = sum;
            }
        }
    }
}
#endif

int dla_conv_dw_s8_src_takes(const struct dla_conv_geom *g, const struct dla_conv_src *src)
{
#if defined(DLA_LANES_X86)
    if (!(src->x0 <= src->x1 && src->x1 <= g->in_w && src->y0 <= src->y1 && src->y1 <= g->in_h)) {
        return 0;
    }
    return src->atoms == 8 ? dwa_takes(g, src)
                           : src->atoms == 0 && (dw_src_rows_take(g) || dwl_takes(g, src));
#else
    (void)g;
    (void)src;
    return 0;
#endif
}

void dla_conv_dw_s8_src_channels_isa(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                                     const int8_t *diag, int32_t *out, size_t k0, size_t k1,
                                     enum dla_dw_isa isa)
{
#if defined(DLA_LANES_X86)
    k1 = k1 < g->out_k ? k1 : g->out_k;
    if (in->src.atoms == 8) { /* (dla_conv_dw_s8_src_takes: VNNI's alone) */
        (void)isa;
        dwa_range(g, in, diag, out, k0, k1);
        return;
    }
    struct dwl_plan p;
    if (isa == DLA_DW_VNNI && !(dw_src_rows_take(g) && dwv_src_by_taps(g)) &&
        dwl_plan_of(g, &in->src, &p)) {
        dwl_range(g, in, diag, out, k0, k1, &p);
        return;
    }
    if (!dw_src_rows_take(g)) {
        dw_src_scalar(g, &in->src, diag, out, k0, k1);
        return;
    }
    if (isa == DLA_DW_VNNI && dwv_src_takes(g)) {
        dwv_src_range(g, in, diag, out, k0, k1);
        return;
    }
    dw_src_range(g, in, diag, out, k0, k1, isa == DLA_DW_AVX512 || isa == DLA_DW_VNNI);
#else
    (void)g;
    (void)in;
    (void)diag;
    (void)out;
    (void)k0;
    (void)k1;
    (void)isa;
#endif
}

void dla_conv_dw_s8_src_channels(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                                 const int8_t *diag, int32_t *out, size_t k0, size_t k1)
{
    dla_conv_dw_s8_src_channels_isa(g, in, diag, out, k0, k1, dla_conv_dw_s8_isa_best());
}

/* The band's rows as a layer of their own: its padded input starts at row
 * y0 x stride_y of the layer's (padding rows included), the same lines
 * and buffer; each output is the same window's sum. */
int dla_conv_dw_s8_src_rows(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                            const int8_t *diag, uint32_t y0, uint32_t y1, int32_t *out)
{
    if (g == NULL || in == NULL || diag == NULL || out == NULL || y0 >= y1 || y1 > g->out_h ||
        g->k_h == 0 || in->src.y0 > in->src.y1 || in->src.y1 > g->in_h) {
        return DLASIM_ERR_INVAL;
    }
    struct dla_conv_geom sub = *g;
    sub.out_h = y1 - y0;
    sub.in_h = (sub.out_h - 1) * g->stride_y + (g->k_h - 1) * g->dil_y + 1;
    struct dla_dw_src band = *in;
    band.src = dla_conv_src_rows(&in->src, y0 * g->stride_y, sub.in_h);
    if (!dla_conv_dw_s8_src_takes(&sub, &band.src)) {
        return DLASIM_ERR_INVAL;
    }
    dla_conv_dw_s8_src_channels(&sub, &band, diag, out, 0, sub.out_k);
    return 0;
}

/* Channels [k0, k1): through the vector rows of isa where they take g
 * (dw_isa), else row by row through dw_row_scalar.  Kernel k's taps are
 * at wt + k * kstride (the dense planar weights' diagonal: kstride
 * (in_c + 1) x taps; the diagonal alone: taps). */
static void dw_range(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                     size_t kstride, int32_t *out, enum dla_dw_isa isa, size_t k0, size_t k1)
{
    const size_t plane = (size_t)g->in_w * g->in_h, taps = (size_t)g->k_w * g->k_h;
    for (size_t k = k0; k < k1; k++) {
        const int8_t *w = wt + k * kstride;
        if (k + 1 < g->out_k) {
            /* the next kernel, a cache line or two away, is often cold (the
             * callers run one channel per call): fetch it while this one runs */
            __builtin_prefetch(w + kstride);
            __builtin_prefetch(w + kstride + taps - 1);
        }
        int32_t *o = out + k * g->out_h * g->out_w;
#if defined(DLA_LANES_X86)
        if (isa == DLA_DW_VNNI && dwv_takes(g)) {
            dwv_channel(g, in + k * plane, w, o, in + g->in_c * plane);
            continue;
        }
        if (isa == DLA_DW_AVX512 || isa == DLA_DW_VNNI) {
            dw512_channel_pick(g, in + k * plane, w, o, in + g->in_c * plane);
            continue;
        }
        if (isa == DLA_DW_AVX2) {
            dw_channel_pick(g, in + k * plane, w, o, in + g->in_c * plane);
            continue;
        }
#endif
        (void)isa; /* (no vector rows off x86) */
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            dw_row_scalar(g, in + k * plane, w, oy, 0, o + (size_t)oy * g->out_w);
        }
    }
}

/* isa where its rows take g (strides 1 and 2, MobileNet's, up to 7x7
 * taps), else the scalar loop. */
static enum dla_dw_isa dw_isa(const struct dla_conv_geom *g, enum dla_dw_isa isa)
{
    int vector = (g->stride_x == 1 || g->stride_x == 2) && (size_t)g->k_w * g->k_h <= 49;
    return vector ? isa : DLA_DW_SCALAR;
}

void dla_conv_dw_s8_channels(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                             int32_t *out, size_t k0, size_t k1)
{
    const size_t taps = (size_t)g->k_w * g->k_h;
    dw_range(g, in, wt, (g->in_c + (size_t)1) * taps, out,
             dw_isa(g, dla_conv_dw_s8_isa_best()), k0, k1 < g->out_k ? k1 : g->out_k);
}

void dla_conv_dw_s8_diagonal(const struct dla_conv_geom *g, const int8_t *wt, int8_t *diag)
{
    const size_t taps = (size_t)g->k_w * g->k_h;
    for (size_t k = 0; k < g->out_k; k++) {
        memcpy(diag + k * taps, wt + (k * g->in_c + k) * taps, taps);
    }
}

void dla_conv_dw_s8_diag_channels_isa(const struct dla_conv_geom *g, const int8_t *in,
                                      const int8_t *diag, int32_t *out, size_t k0, size_t k1,
                                      enum dla_dw_isa isa)
{
    dw_range(g, in, diag, (size_t)g->k_w * g->k_h, out, dw_isa(g, isa), k0,
             k1 < g->out_k ? k1 : g->out_k);
}

void dla_conv_dw_s8_diag_channels(const struct dla_conv_geom *g, const int8_t *in,
                                  const int8_t *diag, int32_t *out, size_t k0, size_t k1)
{
    dla_conv_dw_s8_diag_channels_isa(g, in, diag, out, k0, k1, dla_conv_dw_s8_isa_best());
}

void dla_conv_dw_s8(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                    int32_t *out)
{
    dla_conv_dw_s8_channels(g, in, wt, out, 0, g->out_k);
}
