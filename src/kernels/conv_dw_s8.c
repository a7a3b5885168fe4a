/*
 * Depthwise convolution (see conv_dw_s8.h), one output row at a time: on
 * CPUs with AVX2 in blocks of eight outputs summed over the taps in one
 * register (x strides 1 and 2, MobileNet's), else a scalar loop per tap.  The ISA is chosen per call (arith/lanes.h).
 */
#include <string.h>

#include "arith/lanes.h"
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

/* Eight int8 inputs of a tap, sign-extended: src[0], src[s], ... src[7 s]
 * for s = 1 or 2 (the load reads 8 s bytes).  Bytes past the row only
 * reach the lanes of outputs beyond it, which are not stored. */
DLA_LANES_AVX2_ATTR static inline __m256i dw_load8(const int8_t *src, uint32_t s)
{
    if (s == 1) {
        return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)src));
    }
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)src);
    return _mm256_cvtepi8_epi32(_mm_shuffle_epi8(v, even));
}

/* dw_load8 of the bytes before end, zeros after (the input's last lines). */
DLA_LANES_AVX2_ATTR static __m256i dw_load8_near_end(const int8_t *src, uint32_t s,
                                                     const int8_t *end)
{
    int8_t tail[16] = { 0 };
    size_t n = (size_t)(end - src) < 8 * (size_t)s ? (size_t)(end - src) : 8 * (size_t)s;
    memcpy(tail, src, n);
    return dw_load8(tail, s);
}

/* One channel (plane: its padded input, w: its taps) in blocks of eight
 * outputs of a row (x stride 1 or 2), each summed over the taps in a
 * register with the taps' weights broadcast once per channel; a row's last
 * block stores its n < 8 real outputs under a mask. */
DLA_LANES_AVX2_ATTR static void dw_channel_avx2(const struct dla_conv_geom *g,
                                                const int8_t *plane, const int8_t *w,
                                                int32_t *out, const int8_t *end)
{
    const uint32_t s = g->stride_x, taps = g->k_w * g->k_h;
    __m256i wv[DW_MAX_TAPS];
    size_t off[DW_MAX_TAPS];
    for (uint32_t t = 0; t < taps; t++) {
        wv[t] = _mm256_set1_epi32(w[t]);
        off[t] = (size_t)(t / g->k_w) * g->dil_y * g->in_w + (size_t)(t % g->k_w) * g->dil_x;
    }
    const size_t reach = off[taps - 1] + 8 * (size_t)s; /* bytes a block reads */
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (uint32_t oy = 0; oy < g->out_h; oy++) {
        const int8_t *row = plane + (size_t)oy * g->stride_y * g->in_w;
        int32_t *o = out + (size_t)oy * g->out_w;
        for (uint32_t ox0 = 0; ox0 < g->out_w; ox0 += 8) {
            const int8_t *src = row + (size_t)ox0 * s;
            __m256i acc = _mm256_setzero_si256();
            if ((size_t)(end - src) >= reach) {
                for (uint32_t t = 0; t < taps; t++) {
                    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(dw_load8(src + off[t], s), wv[t]));
                }
            } else {
                for (uint32_t t = 0; t < taps; t++) {
                    __m256i x = dw_load8_near_end(src + off[t], s, end);
                    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(x, wv[t]));
                }
            }
            uint32_t n = g->out_w - ox0;
            if (n >= 8) {
                _mm256_storeu_si256((__m256i *)(void *)(o + ox0), acc);
            } else {
                __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lane);
                _mm256_maskstore_epi32((int *)(o + ox0), mask, acc);
            }
        }
    }
}
#endif

/* Channels [k0, k1): through dw_channel_avx2, or row by row through
 * dw_row_scalar. */
static void dw_range(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                     int32_t *out, int avx2, size_t k0, size_t k1)
{
    const size_t plane = (size_t)g->in_w * g->in_h, taps = (size_t)g->k_w * g->k_h;
    for (size_t k = k0; k < k1; k++) {
        const int8_t *w = wt + (k * g->in_c + k) * taps; /* the diagonal kernel */
        int32_t *o = out + k * g->out_h * g->out_w;
#if defined(DLA_LANES_X86)
        if (avx2) {
            dw_channel_avx2(g, in + k * plane, w, o, in + g->in_c * plane);
            continue;
        }
#endif
        (void)avx2;
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            dw_row_scalar(g, in + k * plane, w, oy, 0, o + (size_t)oy * g->out_w);
        }
    }
}

void dla_conv_dw_s8_channels(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                             int32_t *out, size_t k0, size_t k1)
{
    /* the AVX2 rows take strides 1 and 2 (MobileNet's) and up to 7x7 taps */
    int avx2 = (g->stride_x == 1 || g->stride_x == 2) && (size_t)g->k_w * g->k_h <= 49 &&
               dla_lanes_best() == DLA_LANES_AVX2;
    dw_range(g, in, wt, out, avx2, k0, k1 < g->out_k ? k1 : g->out_k);
}

void dla_conv_dw_s8(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                    int32_t *out)
{
    dla_conv_dw_s8_channels(g, in, wt, out, 0, g->out_k);
}
