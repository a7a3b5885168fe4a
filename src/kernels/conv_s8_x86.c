/*
 * x86-64 micro-kernels of the int8 convolution (see conv_s8_impl.h for the
 * packed formats and struct dla_conv_tile).  Each function is compiled for
 * its instruction set with __attribute__((target)) and only called after
 * __builtin_cpu_supports said yes, so the library still runs on any x86-64.
 *
 * AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes and adds groups
 * of 4 products to int32 lanes without saturation (wraps mod 2^32).  The
 * input cells hold x + 128 (unsigned), the accumulators start at
 * -128 * sum(w), so each lane ends at sum(x * w) mod 2^32: exact.
 * Tile: 8 output channels x 48 pixels = 24 zmm accumulators.
 *
 * AVX2: vpmaddubsw would saturate u8 x s8 pair sums to int16, so it is not
 * exact; instead the cells hold int16 channel pairs and vpmaddwd forms
 * x0 * w0 + x1 * w1 in int32 (|sum| <= 2 * 128 * 128: no overflow), then
 * vpaddd accumulates (wraps mod 2^32).
 * Tile: 4 output channels x 16 pixels = 8 ymm accumulators.
 */
#include "kernels/conv_s8_impl.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>
#include <string.h>

static inline int32_t ld32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* ------------------------------------------------------------ AVX-512 VNNI */

#define VNNI_FN static inline __attribute__((always_inline, target("avx512f,avx512vnni")))

/* Accumulator row m (3 zmm = 48 pixels), only if m < MR. */
#define VNNI_DECL(m)                                                               \
    __m512i c##m##0 = _mm512_setzero_si512(), c##m##1 = c##m##0, c##m##2 = c##m##0; \
    if ((m) < MR) {                                                                \
        c##m##0 = _mm512_set1_epi32(init[(m) < MR ? (m) : 0]);                     \
        c##m##1 = c##m##0;                                                         \
        c##m##2 = c##m##0;                                                         \
    }
#define VNNI_STEP(m)                                               \
    if ((m) < MR) {                                                \
        __m512i b = _mm512_set1_epi32(ld32(w + (m) * wr));          \
        c##m##0 = _mm512_dpbusd_epi32(c##m##0, x0, b);             \
        c##m##1 = _mm512_dpbusd_epi32(c##m##1, x1, b);             \
        c##m##2 = _mm512_dpbusd_epi32(c##m##2, x2, b);             \
    }
#define VNNI_STORE(m)                                                         \
    if ((m) < MR) {                                                           \
        _mm512_storeu_si512((void *)(acc + (m) * DLA_CONV_VNNI_NR), c##m##0); \
        _mm512_storeu_si512((void *)(acc + (m) * DLA_CONV_VNNI_NR + 16), c##m##1); \
        _mm512_storeu_si512((void *)(acc + (m) * DLA_CONV_VNNI_NR + 32), c##m##2); \
    }

/* MR (a constant after inlining) rows of a tile over all reduction steps. */
VNNI_FN void vnni_rows(const struct dla_conv_tile *t, const unsigned char *w,
                       const int32_t *init, int32_t *acc, const unsigned MR)
{
    const unsigned char *in = t->in;
    const ptrdiff_t *qoff = t->qoff;
    size_t nq = t->nq, wr = t->wrow;

    VNNI_DECL(0) VNNI_DECL(1) VNNI_DECL(2) VNNI_DECL(3)
    VNNI_DECL(4) VNNI_DECL(5) VNNI_DECL(6) VNNI_DECL(7)
    for (size_t q = 0; q < nq; q++, w += 4) {
        const unsigned char *a = in + qoff[q];
        __m512i x0 = _mm512_loadu_si512((const void *)a);
        __m512i x1 = _mm512_loadu_si512((const void *)(a + 64));
        __m512i x2 = _mm512_loadu_si512((const void *)(a + 128));
        VNNI_STEP(0) VNNI_STEP(1) VNNI_STEP(2) VNNI_STEP(3)
        VNNI_STEP(4) VNNI_STEP(5) VNNI_STEP(6) VNNI_STEP(7)
    }
    VNNI_STORE(0) VNNI_STORE(1) VNNI_STORE(2) VNNI_STORE(3)
    VNNI_STORE(4) VNNI_STORE(5) VNNI_STORE(6) VNNI_STORE(7)
}

__attribute__((target("avx512f,avx512vnni")))
void dla_conv_tile_vnni(const struct dla_conv_tile *t)
{
    unsigned m = 0, mr = t->mr;

    if (mr == DLA_CONV_VNNI_MR) {
        vnni_rows(t, t->w, t->init, t->acc, 8);
        return;
    }
    /* k tail: 4 + 2 + 1 rows, same packed block (row offset m) */
    if (mr - m >= 4) {
        vnni_rows(t, t->w + m * t->wrow, t->init + m, t->acc + m * DLA_CONV_VNNI_NR, 4);
        m += 4;
    }
    if (mr - m >= 2) {
        vnni_rows(t, t->w + m * t->wrow, t->init + m, t->acc + m * DLA_CONV_VNNI_NR, 2);
        m += 2;
    }
    if (mr - m >= 1) {
        vnni_rows(t, t->w + m * t->wrow, t->init + m, t->acc + m * DLA_CONV_VNNI_NR, 1);
    }
}

/* -------------------------------------------------------------------- AVX2 */

#define AVX2_FN static inline __attribute__((always_inline, target("avx2")))

#define AVX2_DECL(m)                                                \
    __m256i d##m##0 = _mm256_setzero_si256(), d##m##1 = d##m##0;    \
    if ((m) < MR) {                                                 \
        d##m##0 = _mm256_set1_epi32(init[(m) < MR ? (m) : 0]);      \
        d##m##1 = d##m##0;                                          \
    }
#define AVX2_STEP(m)                                                        \
    if ((m) < MR) {                                                         \
        __m256i b = _mm256_set1_epi32(ld32(w + (m) * wr));                   \
        d##m##0 = _mm256_add_epi32(d##m##0, _mm256_madd_epi16(x0, b));      \
        d##m##1 = _mm256_add_epi32(d##m##1, _mm256_madd_epi16(x1, b));      \
    }
#define AVX2_STORE(m)                                                                  \
    if ((m) < MR) {                                                                    \
        _mm256_storeu_si256((__m256i *)(void *)(acc + (m) * DLA_CONV_AVX2_NR), d##m##0); \
        _mm256_storeu_si256((__m256i *)(void *)(acc + (m) * DLA_CONV_AVX2_NR + 8), d##m##1); \
    }

AVX2_FN void avx2_rows(const struct dla_conv_tile *t, const unsigned char *w,
                       const int32_t *init, int32_t *acc, const unsigned MR)
{
    const unsigned char *in = t->in;
    const ptrdiff_t *qoff = t->qoff;
    size_t nq = t->nq, wr = t->wrow;

    AVX2_DECL(0) AVX2_DECL(1) AVX2_DECL(2) AVX2_DECL(3)
    for (size_t q = 0; q < nq; q++, w += 4) {
        const unsigned char *a = in + qoff[q];
        __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)a);
        __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(a + 32));
        AVX2_STEP(0) AVX2_STEP(1) AVX2_STEP(2) AVX2_STEP(3)
    }
    AVX2_STORE(0) AVX2_STORE(1) AVX2_STORE(2) AVX2_STORE(3)
}

__attribute__((target("avx2")))
void dla_conv_tile_avx2(const struct dla_conv_tile *t)
{
    unsigned m = 0, mr = t->mr;

    if (mr == DLA_CONV_AVX2_MR) {
        avx2_rows(t, t->w, t->init, t->acc, 4);
        return;
    }
    if (mr - m >= 2) {
        avx2_rows(t, t->w + m * t->wrow, t->init + m, t->acc + m * DLA_CONV_AVX2_NR, 2);
        m += 2;
    }
    if (mr - m >= 1) {
        avx2_rows(t, t->w + m * t->wrow, t->init + m, t->acc + m * DLA_CONV_AVX2_NR, 1);
    }
}

#else

/* Not x86-64 GCC/Clang: only the generic path of conv_s8.c exists. */
typedef int dla_conv_s8_x86_unused;

#endif
