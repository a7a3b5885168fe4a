/*
 * The model input's quantization (see quant_io.h).  The rounding is the
 * compiler's: v < 0 ? v - 0.5 : v + 0.5, clamped to [-128, 127] as a float,
 * then truncated; clamping before the conversion keeps every value the
 * integer conversion sees in range, so the SSE2 lanes (cvttps2dq) and the
 * scalar tail give the same codes.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "compiler/quant_io.h"

int64_t dlc_first_nonfinite(const float *x, size_t n)
{
    size_t i = 0;
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

static int quantize_scalar(const float *x, int8_t *q, size_t n, float inv)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        float v = x[i] * inv;
        v += v < 0.0f ? -0.5f : 0.5f;
        v = v > 127.0f ? 127.0f : v;
        v = v < -128.0f ? -128.0f : v;
        q[i] = (int8_t)(int)v;
        bad |= !(fabsf(x[i]) <= FLT_MAX); /* NaN or infinite */
    }
    return bad;
}

#if defined(__SSE2__)
/* quantize_scalar on 4 values as int32 lanes; *bad gets the lanes holding a
 * NaN or an infinity. */
static inline __m128i quantize4(const float *x, __m128 inv, __m128 *bad)
{
    const __m128 half = _mm_set1_ps(0.5f), mhalf = _mm_set1_ps(-0.5f);
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    __m128 xv = _mm_loadu_ps(x);
    *bad = _mm_or_ps(*bad, _mm_cmpnle_ps(_mm_and_ps(xv, abs_mask), _mm_set1_ps(FLT_MAX)));
    __m128 v = _mm_mul_ps(xv, inv);
    __m128 neg = _mm_cmplt_ps(v, _mm_setzero_ps());
    v = _mm_add_ps(v, _mm_or_ps(_mm_and_ps(neg, mhalf), _mm_andnot_ps(neg, half)));
    v = _mm_max_ps(_mm_min_ps(v, _mm_set1_ps(127.0f)), _mm_set1_ps(-128.0f));
    return _mm_cvttps_epi32(v);
}
#endif

int dlc_quantize_s8(const float *x, int8_t *q, size_t n, float inv)
{
    size_t i = 0;
    int bad = 0;
#if defined(__SSE2__)
    __m128 bad4 = _mm_setzero_ps(), inv4 = _mm_set1_ps(inv);
    for (; i + 16 <= n; i += 16) {
        __m128i a = _mm_packs_epi32(quantize4(x + i, inv4, &bad4),
                                    quantize4(x + i + 4, inv4, &bad4));
        __m128i b = _mm_packs_epi32(quantize4(x + i + 8, inv4, &bad4),
                                    quantize4(x + i + 12, inv4, &bad4));
        _mm_storeu_si128((__m128i *)(void *)(q + i), _mm_packs_epi16(a, b));
    }
    if (i < n) { /* the last 1-15 values through the same lanes, zeros after them */
        float tail[16] = { 0 };
        int8_t codes[16];
        memcpy(tail, x + i, (n - i) * sizeof *tail);
        __m128i a = _mm_packs_epi32(quantize4(tail, inv4, &bad4),
                                    quantize4(tail + 4, inv4, &bad4));
        __m128i b = _mm_packs_epi32(quantize4(tail + 8, inv4, &bad4),
                                    quantize4(tail + 12, inv4, &bad4));
        _mm_storeu_si128((__m128i *)(void *)codes, _mm_packs_epi16(a, b));
        memcpy(q + i, codes, n - i);
        i = n;
    }
    bad = _mm_movemask_ps(bad4) != 0;
#endif
    return bad | quantize_scalar(x + i, q + i, n - i, inv);
}
