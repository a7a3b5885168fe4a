/*
 * Single-precision GEMM of the float reference (see sgemm.h).
 *
 * Blocking (a packed-panel scheme): for each block of KC reduction steps and
 * NC columns, B is packed into micro-panels of NR columns, [k][NR] (zero
 * padded), which stay in L2 while MR rows of A (KC floats each, read in
 * place: they are the weights, contiguous, and packing them again at every
 * inference cost more than it saved) pass over them.  The micro-kernel
 * keeps an MR x NR tile of C in registers: 6 rows x 2 vectors of 8 floats =
 * 12 ymm accumulators with AVX2+FMA; 8 rows x 2 vectors of 16 = 16 zmm
 * accumulators with AVX-512F (B panels of 32 columns then: twice the FMA
 * width, and fewer, larger B loads per multiply-add).  The generic C kernel
 * (6 x 16, any CPU) fuses with fmaf.  Every variant computes each output
 * the same way, so all give the same bits: zero, then one fused
 * multiply-add per reduction step in k order within the KC block, then one
 * add to the bias (first block) or to what C holds; the instruction set is
 * chosen at run time (the fastest the CPU runs).
 *
 * Threads: the products run as tasks of (NC column block, row chunk) taken
 * from a shared counter.  With one row chunk per column block (wide
 * outputs), each task packs its KC x NC panels itself, so they are hot in L2;
 * with several (narrow outputs, deep layers), B is packed whole first (tasks
 * of one panel) and shared.  A task's outputs are summed in the same order
 * whatever thread runs it, so the result does not depend on `threads`.
 */
#include "kernels/sgemm.h"

#include "common/team.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define SGEMM_X86 1
#include <immintrin.h>
#endif

/* MR x NR: the tile of the generic and AVX2 kernels; MR5 x NR5: AVX-512's.
 * NC is a multiple of both NRs. */
enum { MR = 6, NR = 16, MR5 = 8, NR5 = 32, KC = 256, NC = 256, SGEMM_MAX_THREADS = 64 };
/* about 0.1 ms of work at 50 GFLOP/s: below twice this, one thread */
#define SGEMM_MIN_MACS_PER_THREAD 2.5e6
/* With a team (dla_sgemm_on) a thread is handed a job, not started: a
 * smaller product pays for the hand-off. */
#define SGEMM_TEAM_MIN_MACS_PER_THREAD SGEMM_TEAM_MIN
#ifndef SGEMM_TEAM_MIN
#define SGEMM_TEAM_MIN 0.5e6
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

/* act: NULL, or the activation of the outputs (the tile's last k block). */
typedef void sgemm_kernel_fn(int64_t kc, const float *ap, int64_t lda, const float *bp,
                             float *cp, int64_t ldc, int mr, int nr, int first,
                             const float *bias, const struct dla_sact *act);

static void sact_scalar(const struct dla_sact *a, float *p, int64_t n);

/* One MR x NR tile over kc steps: acc = Ap * Bp, one fused multiply-add per
 * step (fmaf: the single rounding of the vector kernels' FMA instructions,
 * so every variant gives the same bits); then C = (first ? bias : C) + acc
 * for the mr x nr corner that lies inside C, then the activation. */
static void kernel_generic(int64_t kc, const float *ap, int64_t lda, const float *bp, float *cp,
                           int64_t ldc, int mr, int nr, int first, const float *bias,
                           const struct dla_sact *act)
{
    float c[MR][NR] = { { 0 } };
    for (int64_t k = 0; k < kc; k++) {
        for (int m = 0; m < mr; m++) {
            float a = ap[m * lda + k];
            for (int n = 0; n < NR; n++) {
                c[m][n] = fmaf(a, bp[k * NR + n], c[m][n]);
            }
        }
    }
    for (int m = 0; m < mr; m++) {
        for (int n = 0; n < nr; n++) {
            cp[m * ldc + n] = (first ? (bias ? bias[m] : 0.0f) : cp[m * ldc + n]) + c[m][n];
        }
        if (act) {
            sact_scalar(act, cp + m * ldc, nr);
        }
    }
}

#if defined(SGEMM_X86)
#define AVX2_ATTR __attribute__((target("avx2,fma")))

/* Row m of the AVX2 tile: two accumulators, fused multiply-add (the C
 * standard mode of the build does not contract a * b + c by itself). */
#define ROW_DECL(m) __m256 c##m##0 = _mm256_setzero_ps(), c##m##1 = _mm256_setzero_ps();
#define ROW_FMA(m)                                          \
    {                                                       \
        __m256 a = _mm256_broadcast_ss(a##m + k);           \
        c##m##0 = _mm256_fmadd_ps(a, b0, c##m##0);          \
        c##m##1 = _mm256_fmadd_ps(a, b1, c##m##1);          \
    }
/* C row m (bias, or what C holds) + the tile's row m: the same single
 * rounding as adding the stored sums; then the activation in registers
 * (sact_v) when there is one. */
#define ROW_ADD(m)                                                                      \
    {                                                                                   \
        float *row = cp + m * ldc;                                                      \
        __m256 o0 = first ? _mm256_set1_ps(bias ? bias[m] : 0.0f) : _mm256_loadu_ps(row); \
        __m256 o1 = first ? o0 : _mm256_loadu_ps(row + 8);                              \
        o0 = _mm256_add_ps(o0, c##m##0);                                                \
        o1 = _mm256_add_ps(o1, c##m##1);                                                \
        if (act) {                                                                      \
            o0 = sact_v(o0, relu, lo, hi);                                              \
            o1 = sact_v(o1, relu, lo, hi);                                              \
        }                                                                               \
        _mm256_storeu_ps(row, o0);                                                      \
        _mm256_storeu_ps(row + 8, o1);                                                  \
    }
/* ROW_ADD for a corner tile: rows m < mr, lanes of masks k0 and k1 only
 * (columns n < nr; masked lanes are neither read nor written). */
#define ROW_ADD_MASKED(m)                                                                   \
    if (m < mr) {                                                                           \
        float *row = cp + m * ldc;                                                          \
        __m256 o0 = first ? _mm256_set1_ps(bias ? bias[m] : 0.0f) : _mm256_maskload_ps(row, k0); \
        __m256 o1 = first ? o0 : _mm256_maskload_ps(row + 8, k1);                           \
        o0 = _mm256_add_ps(o0, c##m##0);                                                    \
        o1 = _mm256_add_ps(o1, c##m##1);                                                    \
        if (act) {                                                                          \
            o0 = sact_v(o0, relu, lo, hi);                                                  \
            o1 = sact_v(o1, relu, lo, hi);                                                  \
        }                                                                                   \
        _mm256_maskstore_ps(row, k0, o0);                                                   \
        _mm256_maskstore_ps(row + 8, k1, o1);                                               \
    }
#define ROW_STORE(m)                                        \
    _mm256_storeu_ps(t[m], c##m##0);                        \
    _mm256_storeu_ps(t[m] + 8, c##m##1);

/* maxps/minps return their second operand when either is NaN or both are
 * equal (zeros of either sign): max(x, 0) is Relu's x > 0 ? x : 0 (NaN, -0:
 * +0), and min(hi, max(lo, x)) Clip's x < lo ? lo : x > hi ? hi : x (NaN
 * kept; x equal to a bound: x itself) when lo <= hi. */
AVX2_ATTR static inline __m256 sact_v(__m256 x, int relu, __m256 lo, __m256 hi)
{
    return relu ? _mm256_max_ps(x, _mm256_setzero_ps()) : _mm256_min_ps(hi, _mm256_max_ps(lo, x));
}

/* The activation can go in vector registers (Clip with lo > hi cannot). */
static int sact_vectorizable(const struct dla_sact *a)
{
    return a->kind == DLA_SACT_RELU || a->lo <= a->hi;
}

AVX2_ATTR static void kernel_avx2(int64_t kc, const float *ap, int64_t lda, const float *bp,
                                  float *cp, int64_t ldc, int mr, int nr, int first,
                                  const float *bias, const struct dla_sact *act)
{
    /* rows beyond mr repeat the last row; their sums are not stored */
    const float *a0 = ap, *a1 = ap + (mr > 1) * lda, *a2 = ap + (mr > 2 ? 2 : mr - 1) * lda;
    const float *a3 = ap + (mr > 3 ? 3 : mr - 1) * lda, *a4 = ap + (mr > 4 ? 4 : mr - 1) * lda;
    const float *a5 = ap + (mr > 5 ? 5 : mr - 1) * lda;
    ROW_DECL(0) ROW_DECL(1) ROW_DECL(2) ROW_DECL(3) ROW_DECL(4) ROW_DECL(5)
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_load_ps(bp + k * NR), b1 = _mm256_load_ps(bp + k * NR + 8);
        ROW_FMA(0) ROW_FMA(1) ROW_FMA(2) ROW_FMA(3) ROW_FMA(4) ROW_FMA(5)
    }
    if (mr == MR && nr == NR && (!act || sact_vectorizable(act))) {
        /* the whole tile: added to C from the registers */
        const int relu = act && act->kind == DLA_SACT_RELU;
        const __m256 lo = _mm256_set1_ps(act ? act->lo : 0.0f);
        const __m256 hi = _mm256_set1_ps(act ? act->hi : 0.0f);
        ROW_ADD(0) ROW_ADD(1) ROW_ADD(2) ROW_ADD(3) ROW_ADD(4) ROW_ADD(5)
        return;
    }
    if (!act || sact_vectorizable(act)) {
        /* a corner tile: the rows inside C, their first nr columns, through
         * masked loads and stores (the same adds and activation as above) */
        const int relu = act && act->kind == DLA_SACT_RELU;
        const __m256 lo = _mm256_set1_ps(act ? act->lo : 0.0f);
        const __m256 hi = _mm256_set1_ps(act ? act->hi : 0.0f);
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i k0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane);
        const __m256i k1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), lane);
        ROW_ADD_MASKED(0) ROW_ADD_MASKED(1) ROW_ADD_MASKED(2) ROW_ADD_MASKED(3)
        ROW_ADD_MASKED(4) ROW_ADD_MASKED(5)
        return;
    }
    float t[MR][NR] __attribute__((aligned(32)));
    ROW_STORE(0) ROW_STORE(1) ROW_STORE(2) ROW_STORE(3) ROW_STORE(4) ROW_STORE(5)
    for (int m = 0; m < mr; m++) {
        for (int n = 0; n < nr; n++) {
            cp[m * ldc + n] = (first ? (bias ? bias[m] : 0.0f) : cp[m * ldc + n]) + t[m][n];
        }
        if (act) {
            sact_scalar(act, cp + m * ldc, nr);
        }
    }
}

/* Row m of the 8-column tile (the right edge of C, nr <= 8): one
 * accumulator; its sums are those of kernel_avx2's first vector. */
#define ROW8_DECL(m) __m256 c##m##0 = _mm256_setzero_ps();
#define ROW8_FMA(m) c##m##0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a##m + k), b0, c##m##0);
#define ROW8_ADD_MASKED(m)                                                                  \
    if (m < mr) {                                                                           \
        float *row = cp + m * ldc;                                                          \
        __m256 o0 = first ? _mm256_set1_ps(bias ? bias[m] : 0.0f) : _mm256_maskload_ps(row, k0); \
        o0 = _mm256_add_ps(o0, c##m##0);                                                    \
        if (act) {                                                                          \
            o0 = sact_v(o0, relu, lo, hi);                                                  \
        }                                                                                   \
        _mm256_maskstore_ps(row, k0, o0);                                                   \
    }

AVX2_ATTR static void kernel_avx2_n8(int64_t kc, const float *ap, int64_t lda, const float *bp,
                                     float *cp, int64_t ldc, int mr, int nr, int first,
                                     const float *bias, const struct dla_sact *act)
{
    if (act && !sact_vectorizable(act)) {
        kernel_avx2(kc, ap, lda, bp, cp, ldc, mr, nr, first, bias, act);
        return;
    }
    const float *a0 = ap, *a1 = ap + (mr > 1) * lda, *a2 = ap + (mr > 2 ? 2 : mr - 1) * lda;
    const float *a3 = ap + (mr > 3 ? 3 : mr - 1) * lda, *a4 = ap + (mr > 4 ? 4 : mr - 1) * lda;
    const float *a5 = ap + (mr > 5 ? 5 : mr - 1) * lda;
    ROW8_DECL(0) ROW8_DECL(1) ROW8_DECL(2) ROW8_DECL(3) ROW8_DECL(4) ROW8_DECL(5)
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_load_ps(bp + k * NR);
        ROW8_FMA(0) ROW8_FMA(1) ROW8_FMA(2) ROW8_FMA(3) ROW8_FMA(4) ROW8_FMA(5)
    }
    const int relu = act && act->kind == DLA_SACT_RELU;
    const __m256 lo = _mm256_set1_ps(act ? act->lo : 0.0f);
    const __m256 hi = _mm256_set1_ps(act ? act->hi : 0.0f);
    const __m256i k0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    ROW8_ADD_MASKED(0) ROW8_ADD_MASKED(1) ROW8_ADD_MASKED(2) ROW8_ADD_MASKED(3)
    ROW8_ADD_MASKED(4) ROW8_ADD_MASKED(5)
}

/* The tile kernel: the 8-column one for a right edge of at most 8 columns. */
static void kernel_avx2_any(int64_t kc, const float *ap, int64_t lda, const float *bp, float *cp,
                            int64_t ldc, int mr, int nr, int first, const float *bias,
                            const struct dla_sact *act)
{
    if (nr <= 8) {
        kernel_avx2_n8(kc, ap, lda, bp, cp, ldc, mr, nr, first, bias, act);
        return;
    }
    kernel_avx2(kc, ap, lda, bp, cp, ldc, mr, nr, first, bias, act);
}

/* ---- AVX-512F: a tile of MR5 rows x NR5 columns, MR5 x 2 zmm accumulators ----
 * Each element's sums are those of the kernels above (zero, then one FMA per
 * k in order, then one add to the bias or C): only the tile shape differs. */
#define AVX512_ATTR __attribute__((target("avx512f")))
#define Z_DECL(m) __m512 z##m##0 = _mm512_setzero_ps(), z##m##1 = _mm512_setzero_ps();
#define Z_FMA(m)                                            \
    {                                                       \
        __m512 a = _mm512_set1_ps(a##m[k]);                 \
        z##m##0 = _mm512_fmadd_ps(a, b0, z##m##0);          \
        z##m##1 = _mm512_fmadd_ps(a, b1, z##m##1);          \
    }
#define Z1_DECL(m) __m512 z##m##0 = _mm512_setzero_ps();
#define Z1_FMA(m) z##m##0 = _mm512_fmadd_ps(_mm512_set1_ps(a##m[k]), b0, z##m##0);
/* C row m (bias, or what C holds: lanes of masks k0, k1, columns n < nr)
 * + the tile's row m, then the activation in registers. */
#define Z_OUT(m, o, z, kmask, off)                                                   \
    {                                                                                \
        __m512 o = first ? _mm512_set1_ps(bias ? bias[m] : 0.0f)                     \
                         : _mm512_maskz_loadu_ps(kmask, cp + m * ldc + off);          \
        o = _mm512_add_ps(o, z);                                                     \
        if (act) {                                                                   \
            o = relu ? _mm512_max_ps(o, _mm512_setzero_ps())                         \
                     : _mm512_min_ps(hi, _mm512_max_ps(lo, o));                      \
        }                                                                            \
        _mm512_mask_storeu_ps(cp + m * ldc + off, kmask, o);                         \
    }
#define Z_ADD(m)                                                                     \
    if (m < mr) {                                                                    \
        Z_OUT(m, o0, z##m##0, k0, 0)                                                 \
        Z_OUT(m, o1, z##m##1, k1, 16)                                                \
    }
#define Z1_ADD(m)                                                                    \
    if (m < mr) {                                                                    \
        Z_OUT(m, o0, z##m##0, k0, 0)                                                 \
    }
#define Z_STORE(m)                                                                   \
    _mm512_storeu_ps(t[m], z##m##0);                                                 \
    _mm512_storeu_ps(t[m] + 16, z##m##1);
/* Row pointers: rows beyond mr repeat the last row; their sums are not stored. */
#define Z_ROWS                                                                       \
    const float *a0 = ap, *a1 = ap + (mr > 1) * lda, *a2 = ap + (mr > 2 ? 2 : mr - 1) * lda; \
    const float *a3 = ap + (mr > 3 ? 3 : mr - 1) * lda, *a4 = ap + (mr > 4 ? 4 : mr - 1) * lda; \
    const float *a5 = ap + (mr > 5 ? 5 : mr - 1) * lda, *a6 = ap + (mr > 6 ? 6 : mr - 1) * lda; \
    const float *a7 = ap + (mr > 7 ? 7 : mr - 1) * lda;
#define Z_ACT                                                                        \
    const int relu = act && act->kind == DLA_SACT_RELU;                              \
    const __m512 lo = _mm512_set1_ps(act ? act->lo : 0.0f);                          \
    const __m512 hi = _mm512_set1_ps(act ? act->hi : 0.0f);                          \
    (void)relu, (void)lo, (void)hi;

/* The 16-column tile (a right edge of at most 16 columns, vectorizable
 * activation): one accumulator per row, the sums of kernel_avx512's first. */
AVX512_ATTR static void kernel_avx512_n16(int64_t kc, const float *ap, int64_t lda,
                                          const float *bp, float *cp, int64_t ldc, int mr,
                                          int nr, int first, const float *bias,
                                          const struct dla_sact *act)
{
    Z_ROWS
    Z1_DECL(0) Z1_DECL(1) Z1_DECL(2) Z1_DECL(3) Z1_DECL(4) Z1_DECL(5) Z1_DECL(6) Z1_DECL(7)
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_load_ps(bp + k * NR5);
        Z1_FMA(0) Z1_FMA(1) Z1_FMA(2) Z1_FMA(3) Z1_FMA(4) Z1_FMA(5) Z1_FMA(6) Z1_FMA(7)
    }
    Z_ACT
    const __mmask16 k0 = (__mmask16)((1u << nr) - 1u);
    Z1_ADD(0) Z1_ADD(1) Z1_ADD(2) Z1_ADD(3) Z1_ADD(4) Z1_ADD(5) Z1_ADD(6) Z1_ADD(7)
}

AVX512_ATTR static void kernel_avx512(int64_t kc, const float *ap, int64_t lda, const float *bp,
                                      float *cp, int64_t ldc, int mr, int nr, int first,
                                      const float *bias, const struct dla_sact *act)
{
    Z_ROWS
    Z_DECL(0) Z_DECL(1) Z_DECL(2) Z_DECL(3) Z_DECL(4) Z_DECL(5) Z_DECL(6) Z_DECL(7)
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_load_ps(bp + k * NR5), b1 = _mm512_load_ps(bp + k * NR5 + 16);
        Z_FMA(0) Z_FMA(1) Z_FMA(2) Z_FMA(3) Z_FMA(4) Z_FMA(5) Z_FMA(6) Z_FMA(7)
    }
    if (!act || sact_vectorizable(act)) {
        /* masked lanes (columns from nr on) are neither read nor written */
        Z_ACT
        const __mmask16 k0 = nr >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << nr) - 1u);
        const __mmask16 k1 = nr >= 32 ? (__mmask16)0xFFFF
                           : nr <= 16 ? (__mmask16)0 : (__mmask16)((1u << (nr - 16)) - 1u);
        Z_ADD(0) Z_ADD(1) Z_ADD(2) Z_ADD(3) Z_ADD(4) Z_ADD(5) Z_ADD(6) Z_ADD(7)
        return;
    }
    float t[MR5][NR5] __attribute__((aligned(64)));
    Z_STORE(0) Z_STORE(1) Z_STORE(2) Z_STORE(3) Z_STORE(4) Z_STORE(5) Z_STORE(6) Z_STORE(7)
    for (int m = 0; m < mr; m++) {
        for (int n = 0; n < nr; n++) {
            cp[m * ldc + n] = (first ? (bias ? bias[m] : 0.0f) : cp[m * ldc + n]) + t[m][n];
        }
        if (act) {
            sact_scalar(act, cp + m * ldc, nr);
        }
    }
}

static void kernel_avx512_any(int64_t kc, const float *ap, int64_t lda, const float *bp,
                              float *cp, int64_t ldc, int mr, int nr, int first,
                              const float *bias, const struct dla_sact *act)
{
    if (nr <= 16 && (!act || sact_vectorizable(act))) {
        kernel_avx512_n16(kc, ap, lda, bp, cp, ldc, mr, nr, first, bias, act);
        return;
    }
    kernel_avx512(kc, ap, lda, bp, cp, ldc, mr, nr, first, bias, act);
}
#endif

static int use_avx2(void)
{
#if defined(SGEMM_X86)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

int dla_sgemm_supported(enum dla_sgemm_variant v)
{
    switch (v) {
    case DLA_SGEMM_GENERIC:
        return 1;
    case DLA_SGEMM_AVX2:
        return use_avx2();
    case DLA_SGEMM_AVX512:
#if defined(SGEMM_X86)
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f");
#else
        return 0;
#endif
    default:
        return 0;
    }
}

/* The fastest variant this CPU runs. */
static enum dla_sgemm_variant sgemm_best(void)
{
    return dla_sgemm_supported(DLA_SGEMM_AVX512) ? DLA_SGEMM_AVX512
           : use_avx2()                          ? DLA_SGEMM_AVX2
                                                 : DLA_SGEMM_GENERIC;
}

const char *dla_sgemm_isa(void)
{
    static const char *const names[] = { "generic", "avx2", "avx512" };
    return names[sgemm_best()];
}

/* ---- activations on finished outputs ---- */

/* The ONNX expressions one element at a time (the reference of the vector
 * forms, and the tails). */
static void sact_scalar(const struct dla_sact *a, float *p, int64_t n)
{
    if (a->kind == DLA_SACT_RELU) {
        for (int64_t i = 0; i < n; i++) {
            p[i] = p[i] > 0 ? p[i] : 0;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        p[i] = p[i] < a->lo ? a->lo : p[i] > a->hi ? a->hi : p[i];
    }
}

#if defined(SGEMM_X86)
AVX2_ATTR static void sact_avx2(const struct dla_sact *a, float *p, int64_t n)
{
    const __m256 lo = _mm256_set1_ps(a->lo), hi = _mm256_set1_ps(a->hi);
    const int relu = a->kind == DLA_SACT_RELU;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(p + i, sact_v(_mm256_loadu_ps(p + i), relu, lo, hi));
    }
    sact_scalar(a, p + i, n - i);
}
#endif

void dla_sact_apply(const struct dla_sact *act, float *p, int64_t n)
{
    if (!act || act->kind == DLA_SACT_NONE || n <= 0) {
        return;
    }
#if defined(SGEMM_X86)
    if (use_avx2() && sact_vectorizable(act)) {
        sact_avx2(act, p, n);
        return;
    }
#endif
    sact_scalar(act, p, n);
}

struct sgemm_job {
    int64_t M, N, K, ldb, ldc;
    const struct dla_sconv_geom *conv; /* B is the im2col of an image, or NULL */
    const float *A; /* read in place: rows of MR at a time, lda apart */
    int64_t lda;
    const float *B, *bias;
    float *C;
    const struct dla_sact *act; /* on each row block once its last k block is added, or NULL */
    sgemm_kernel_fn *kernel;
    int64_t mr, nr; /* the kernel's tile: mr rows x nr columns (packed B panels of nr) */
    int64_t row_blocks, rows_per_task, col_blocks, tasks;
    float *Bp; /* all of B packed: column block jb at jb * K * NC, then panel_of() */
    int64_t pack_tasks;
    atomic_llong next_pack, packs_done, next;
    atomic_int failed;
};

/* The im2col row of tap (c, ky, kx): row c x kh x kw + ky x kw + kx. */
struct conv_tap {
    int64_t c, ky, kx;
};

#define SGEMM_INLINE static inline __attribute__((always_inline))

/* The tap of im2col row k (divisions: once a panel, then conv_tap_next). */
SGEMM_INLINE struct conv_tap conv_tap_of(const struct dla_sconv_geom *g, int64_t k)
{
    const int64_t taps = g->kh * g->kw;
    struct conv_tap t = {k / taps, k % taps / g->kw, k % g->kw};
    return t;
}

/* The tap of the row after t's. */
SGEMM_INLINE void conv_tap_next(const struct dla_sconv_geom *g, struct conv_tap *t)
{
    if (++t->kx == g->kw) {
        t->kx = 0;
        if (++t->ky == g->kh) {
            t->ky = 0;
            t->c++;
        }
    }
}

/* The im2col matrix of conv->x's row of tap t, columns j0..j0+nc, into
 * row[]: column (oy, ox), zero where the tap falls in the padding. */
SGEMM_INLINE void conv_row(const struct dla_sconv_geom *g, struct conv_tap t, int64_t j0,
                           int64_t nc, float *row)
{
    const int64_t c = t.c, ky = t.ky, kx = t.kx;
    int64_t off = kx * g->dx - g->pl;
    /* output columns whose input column ox * sx + off lies in [0, W) */
    int64_t lo = off >= 0 ? 0 : (-off + g->sx - 1) / g->sx;
    int64_t hi = g->W - off <= 0 ? 0 : (g->W - off + g->sx - 1) / g->sx;
    hi = hi < g->OW ? hi : g->OW;
    lo = lo < hi ? lo : hi;
    int64_t oy = j0 / g->OW, ox = j0 % g->OW, j = 0;
    while (j < nc) {
        int64_t run = g->OW - ox < nc - j ? g->OW - ox : nc - j; /* to the end of output row oy */
        int64_t iy = oy * g->sy - g->pt + ky * g->dy;
        int64_t base = j - ox; /* row[base + a] is column (oy, a) */
        if (iy < 0 || iy >= g->H) {
            memset(row + j, 0, (size_t)run * sizeof(float));
        } else {
            const float *xr = g->x + (c * g->H + iy) * g->W;
            int64_t e = ox + run, a = ox;
            for (; a < e && a < lo; a++) {
                row[base + a] = 0.0f;
            }
            if (g->sx == 1) {
                int64_t b = e < hi ? e : hi;
                if (b > a) {
                    memcpy(row + base + a, xr + a + off, (size_t)(b - a) * sizeof(float));
                    a = b;
                }
            }
            if (g->sx == 2) { /* four at a time: the even floats of eight (one shufps) */
                const float *s = xr + off;
                int64_t b = e < hi ? e : hi;
                for (; a + 4 <= b && 2 * a + 8 + off <= g->W; a += 4) {
                    v4f lo4, hi4;
                    memcpy(&lo4, s + 2 * a, sizeof lo4);
                    memcpy(&hi4, s + 2 * a + 4, sizeof hi4);
                    v4f even = __builtin_shufflevector(lo4, hi4, 0, 2, 4, 6);
                    memcpy(row + base + a, &even, sizeof even);
                }
            }
            for (; a < e && a < hi; a++) {
                row[base + a] = xr[a * g->sx + off];
            }
            for (; a < e; a++) {
                row[base + a] = 0.0f;
            }
        }
        j += run;
        ox = 0;
        oy++;
    }
}

/* Whole panel rows: fixed-size copies the compiler turns into vector moves. */
SGEMM_INLINE void copy16(float *dst, const float *src)
{
    memcpy(dst, src, 16 * sizeof(float));
}

SGEMM_INLINE void copy32(float *dst, const float *src)
{
    memcpy(dst, src, 32 * sizeof(float));
}

/* B rows k0..k0+kc, columns j0..j0+nc into [nc / nr][kc][nr], zero padded
 * (nr = job->nr). */
SGEMM_INLINE void pack_b_body(const struct sgemm_job *job, int64_t k0, int64_t kc, int64_t j0,
                             int64_t nc, float *Bp)
{
    const int64_t tile_n = job->nr;
    float row[NC];
    struct conv_tap tap = job->conv ? conv_tap_of(job->conv, k0) : (struct conv_tap){0, 0, 0};
    for (int64_t k = 0; k < kc; k++) {
        const float *src = row;
        if (job->conv) {
            conv_row(job->conv, tap, j0, nc, row);
            conv_tap_next(job->conv, &tap);
        } else {
            src = job->B + (k0 + k) * job->ldb + j0;
        }
        /* (the panel's slot by a step, not j / tile_n: a division a slot
         * of two moves) */
        float *dst = Bp + k * tile_n;
        for (int64_t j = 0; j < nc; j += tile_n, dst += kc * tile_n) {
            int64_t nr = nc - j < tile_n ? nc - j : tile_n;
            if (nr == tile_n) {
                if (tile_n == 32) {
                    copy32(dst, src + j);
                } else {
                    copy16(dst, src + j);
                }
                continue;
            }
            memcpy(dst, src + j, (size_t)nr * sizeof(float));
            memset(dst + nr, 0, (size_t)(tile_n - nr) * sizeof(float));
        }
    }
}

static void pack_b_generic(const struct sgemm_job *job, int64_t k0, int64_t kc, int64_t j0,
                           int64_t nc, float *Bp)
{
    pack_b_body(job, k0, kc, j0, nc, Bp);
}

#if defined(SGEMM_X86)
/* The same copies in zmm moves (the AVX-512 kernel's panels of 32 columns:
 * two moves a row instead of eight). */
__attribute__((target("avx512f"))) static void pack_b_avx512(const struct sgemm_job *job,
                                                             int64_t k0, int64_t kc, int64_t j0,
                                                             int64_t nc, float *Bp)
{
    pack_b_body(job, k0, kc, j0, nc, Bp);
}
#endif

static void pack_b(const struct sgemm_job *job, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                   float *Bp)
{
#if defined(SGEMM_X86)
    if (job->nr == NR5) {
        pack_b_avx512(job, k0, kc, j0, nc, Bp);
        return;
    }
#endif
    pack_b_generic(job, k0, kc, j0, nc, Bp);
}

/* Packed B of column block jb, from reduction step k0 (k0 a multiple of KC). */
static float *panel_of(const struct sgemm_job *j, int64_t jb, int64_t k0)
{
    int64_t nc = j->N - jb * NC < NC ? j->N - jb * NC : NC;
    int64_t ncpad = (nc + j->nr - 1) / j->nr * j->nr;
    return j->Bp + jb * j->K * NC + k0 * ncpad;
}

static void pack_task(struct sgemm_job *j, int64_t task)
{
    int64_t jb = task % j->col_blocks, k0 = task / j->col_blocks * KC;
    int64_t j0 = jb * NC, nc = j->N - j0 < NC ? j->N - j0 : NC;
    int64_t kc = j->K - k0 < KC ? j->K - k0 : KC;
    pack_b(j, k0, kc, j0, nc, panel_of(j, jb, k0));
}

/* local: NULL, or a KC x NC buffer of the calling thread when B is packed
 * by each task itself (one row chunk per column block: no panel is shared). */
static void compute_task(struct sgemm_job *j, int64_t task, float *local)
{
    int64_t jb = task % j->col_blocks, rb = task / j->col_blocks;
    int64_t j0 = jb * NC, nc = j->N - j0 < NC ? j->N - j0 : NC;
    int64_t i_first = rb * j->rows_per_task;
    int64_t i_end = i_first + j->rows_per_task;
    i_end = i_end < j->row_blocks ? i_end : j->row_blocks;
    const int64_t tile_m = j->mr, tile_n = j->nr;
    for (int64_t k0 = 0; k0 < j->K; k0 += KC) {
        int64_t kc = j->K - k0 < KC ? j->K - k0 : KC;
        const float *Bp = local ? local : panel_of(j, jb, k0);
        if (local) {
            pack_b(j, k0, kc, j0, nc, local);
        }
        for (int64_t i = i_first; i < i_end; i++) {
            int64_t row = i * tile_m;
            int mr = j->M - row < tile_m ? (int)(j->M - row) : tile_m;
            const float *ap = j->A + row * j->lda + k0;
            for (int64_t jj = 0; jj < nc; jj += tile_n) {
                int nr = nc - jj < tile_n ? (int)(nc - jj) : tile_n;
                j->kernel(kc, ap, j->lda, Bp + (jj / tile_n) * kc * tile_n,
                          j->C + row * j->ldc + j0 + jj, j->ldc, mr, nr, k0 == 0,
                          j->bias ? j->bias + row : NULL, k0 + kc == j->K ? j->act : NULL);
            }
        }
    }
}

/* Every thread packs B panels until none is left, waits until all are
 * packed (by whichever thread), then computes tiles until none is left. */
static void *sgemm_worker(void *arg)
{
    struct sgemm_job *j = arg;
    float *local = NULL;
    if (!j->Bp) {
        local = aligned_alloc(64, (size_t)KC * NC * sizeof(float));
        if (!local) {
            atomic_store(&j->failed, 1);
            return NULL;
        }
    }
    for (;;) {
        long long t = atomic_fetch_add_explicit(&j->next_pack, 1, memory_order_relaxed);
        if (t >= j->pack_tasks) {
            break;
        }
        pack_task(j, t);
        atomic_fetch_add_explicit(&j->packs_done, 1, memory_order_release);
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&j->packs_done, memory_order_acquire) < j->pack_tasks) {
        dla_spin_wait(&spins);
    }
    for (;;) {
        long long t = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (t >= j->tasks) {
            break;
        }
        compute_task(j, t, local);
    }
    free(local);
    return NULL;
}

/* sgemm_worker as a team job body. */
static void sgemm_team_body(void *arg)
{
    (void)sgemm_worker(arg);
}

/* The job on n threads: the team's workers when there is a team (no thread
 * created per call), else n - 1 new threads; the caller is one of them. */
static void sgemm_launch(struct sgemm_job *j, struct dla_team *team, unsigned n)
{
    if (team) {
        dla_team_join(team, n - 1, sgemm_team_body, j);
        return;
    }
    pthread_t tid[SGEMM_MAX_THREADS];
    int started[SGEMM_MAX_THREADS] = { 0 };
    for (unsigned i = 1; i < n; i++) {
        started[i] = pthread_create(&tid[i], NULL, sgemm_worker, j) == 0;
    }
    sgemm_worker(j);
    for (unsigned i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        }
    }
}

/* The micro-kernel of variant v and its tile shape. */
static void sgemm_pick(struct sgemm_job *j, enum dla_sgemm_variant v)
{
    j->kernel = kernel_generic;
    j->mr = MR;
    j->nr = NR;
#if defined(SGEMM_X86)
    if (v == DLA_SGEMM_AVX2) {
        j->kernel = kernel_avx2_any;
    } else if (v == DLA_SGEMM_AVX512) {
        j->kernel = kernel_avx512_any;
        j->mr = MR5;
        j->nr = NR5;
    }
#else
    (void)v;
#endif
}

static int sgemm_run(enum dla_sgemm_variant variant, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t lda, const float *B, int64_t ldb,
                     const struct dla_sconv_geom *conv, const float *bias, float *C,
                     int64_t ldc, struct dla_team *team, unsigned threads,
                     const struct dla_sact *act)
{
    if (team) {
        threads = dla_team_threads(team);
    }
    if (M <= 0 || N <= 0) {
        return 0;
    }
    if (K <= 0) {
        for (int64_t m = 0; m < M; m++) {
            for (int64_t n = 0; n < N; n++) {
                C[m * ldc + n] = bias ? bias[m] : 0.0f;
            }
            dla_sact_apply(act, C + m * ldc, N);
        }
        return 0;
    }
    struct sgemm_job j = { .M = M, .N = N, .K = K, .ldb = ldb, .ldc = ldc, .conv = conv,
                           .A = A, .lda = lda, .B = B, .bias = bias, .C = C,
                           .act = act && act->kind != DLA_SACT_NONE ? act : NULL };
    sgemm_pick(&j, variant);
    j.row_blocks = (M + j.mr - 1) / j.mr;
    threads = threads < 1 ? 1 : threads > SGEMM_MAX_THREADS ? SGEMM_MAX_THREADS : threads;
    double min_macs = team ? SGEMM_TEAM_MIN_MACS_PER_THREAD : SGEMM_MIN_MACS_PER_THREAD;
    if ((double)M * (double)N * (double)K < min_macs * 2.0) {
        threads = 1; /* starting a thread costs more than it would save */
    }
    j.col_blocks = (N + NC - 1) / NC;
    /* few column blocks: also cut the rows so every thread has about 4 tasks */
    int64_t row_tasks = (4 * (int64_t)threads + j.col_blocks - 1) / j.col_blocks;
    row_tasks = row_tasks > j.row_blocks ? j.row_blocks : row_tasks < 1 ? 1 : row_tasks;
    j.rows_per_task = (j.row_blocks + row_tasks - 1) / row_tasks;
    j.tasks = j.col_blocks * ((j.row_blocks + j.rows_per_task - 1) / j.rows_per_task);
    if (row_tasks > 1) { /* column blocks shared by row chunks: pack B once, first */
        int64_t last_nc = N - (j.col_blocks - 1) * NC;
        size_t bsz = (size_t)K *
                     (size_t)((j.col_blocks - 1) * NC + (last_nc + j.nr - 1) / j.nr * j.nr);
        j.Bp = aligned_alloc(64, (bsz * sizeof(float) + 63) / 64 * 64);
        if (!j.Bp) {
            return -1;
        }
        j.pack_tasks = j.col_blocks * ((K + KC - 1) / KC);
    }
    atomic_init(&j.failed, 0);
    atomic_init(&j.next_pack, 0);
    atomic_init(&j.packs_done, 0);
    atomic_init(&j.next, 0);
    int64_t most = j.tasks > j.pack_tasks ? j.tasks : j.pack_tasks;
    unsigned n = (int64_t)threads > most ? (unsigned)most : threads;
    sgemm_launch(&j, n > 1 ? team : NULL, n);
    free(j.Bp);
    return atomic_load(&j.failed) ? -1 : 0;
}

int dla_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
              int64_t ldb, const float *bias, float *C, int64_t ldc, unsigned threads)
{
    return sgemm_run(sgemm_best(), M, N, K, A, lda, B, ldb, NULL, bias, C, ldc, NULL, threads,
                     NULL);
}

int dla_sgemm_on(struct dla_team *team, int64_t M, int64_t N, int64_t K, const float *A,
                 int64_t lda, const float *B, int64_t ldb, const float *bias, float *C,
                 int64_t ldc, const struct dla_sact *act)
{
    return sgemm_run(sgemm_best(), M, N, K, A, lda, B, ldb, NULL, bias, C, ldc, team, 1, act);
}

int dla_sconv(const struct dla_sconv_geom *g, int64_t K, const float *w, const float *bias,
              float *y, unsigned threads)
{
    int64_t rows = g->C * g->kh * g->kw;
    return sgemm_run(sgemm_best(), K, g->OH * g->OW, rows, w, rows, NULL, 0, g, bias, y,
                     g->OH * g->OW, NULL, threads, NULL);
}

int dla_sconv_on(struct dla_team *team, const struct dla_sconv_geom *g, int64_t K,
                 const float *w, const float *bias, float *y, const struct dla_sact *act)
{
    int64_t rows = g->C * g->kh * g->kw;
    return sgemm_run(sgemm_best(), K, g->OH * g->OW, rows, w, rows, NULL, 0, g, bias, y,
                     g->OH * g->OW, team, 1, act);
}

int dla_sgemm_variant_on(enum dla_sgemm_variant v, struct dla_team *team, int64_t M, int64_t N,
                         int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                         const float *bias, float *C, int64_t ldc, const struct dla_sact *act)
{
    return sgemm_run(v, M, N, K, A, lda, B, ldb, NULL, bias, C, ldc, team, 1, act);
}

int dla_sconv_variant_on(enum dla_sgemm_variant v, struct dla_team *team,
                         const struct dla_sconv_geom *g, int64_t K, const float *w,
                         const float *bias, float *y, const struct dla_sact *act)
{
    int64_t rows = g->C * g->kh * g->kw;
    return sgemm_run(v, K, g->OH * g->OW, rows, w, rows, NULL, 0, g, bias, y, g->OH * g->OW, team,
                     1, act);
}

/* ---- matrix x vector (Gemm with one row, the classifier layers) ---- */

/* y[n] = sum over k of x[k] * B[k * N + n]: rows of B scaled and added, so
 * the vector lanes run along n and every y[n] sums in k order. */
#define SGEMV_BODY                                                        \
    int64_t n0 = 0;                                                       \
    for (; n0 + 8 <= N; n0 += 8) {                                        \
        v8f acc = { 0 };                                                  \
        for (int64_t k = 0; k < K; k++) {                                 \
            v8f b;                                                        \
            memcpy(&b, B + k * N + n0, sizeof b);                         \
            acc += b * x[k];                                              \
        }                                                                 \
        memcpy(y + n0, &acc, sizeof acc);                                 \
    }                                                                     \
    for (; n0 < N; n0++) {                                                \
        float s = 0;                                                      \
        for (int64_t k = 0; k < K; k++) {                                 \
            s += x[k] * B[k * N + n0];                                    \
        }                                                                 \
        y[n0] = s;                                                        \
    }

static void sgemv_generic(int64_t N, int64_t K, const float *x, const float *B, float *y)
{
    SGEMV_BODY
}

#if defined(SGEMM_X86)
__attribute__((target("avx2,fma"))) static void sgemv_avx2(int64_t N, int64_t K, const float *x,
                                                           const float *B, float *y)
{
    SGEMV_BODY
}
#endif

/* y[n] = sum over k of A[n * K + k] * x[k] (B transposed): 8 partial sums per
 * row in lanes, added in a fixed order at the end.  Four rows at a time in
 * four registers (independent add chains; each row's sums as alone). */
#define SDOT_FINISH(acc, a, n)                                            \
    {                                                                     \
        float s = 0;                                                      \
        for (int l = 0; l < 8; l++) {                                     \
            s += (acc)[l];                                                \
        }                                                                 \
        for (int64_t k = K8; k < K; k++) {                                \
            s += (a)[k] * x[k];                                           \
        }                                                                 \
        y[n] = s;                                                         \
    }
#define SDOT_BODY                                                         \
    const int64_t K8 = K / 8 * 8;                                         \
    int64_t n = 0;                                                        \
    for (; n + 4 <= N; n += 4) {                                          \
        const float *a0 = A + n * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K; \
        v8f c0 = { 0 }, c1 = { 0 }, c2 = { 0 }, c3 = { 0 };               \
        for (int64_t k = 0; k < K8; k += 8) {                             \
            v8f u0, u1, u2, u3, v;                                        \
            memcpy(&v, x + k, sizeof v);                                  \
            memcpy(&u0, a0 + k, sizeof u0);                               \
            memcpy(&u1, a1 + k, sizeof u1);                               \
            memcpy(&u2, a2 + k, sizeof u2);                               \
            memcpy(&u3, a3 + k, sizeof u3);                               \
            c0 += u0 * v;                                                 \
            c1 += u1 * v;                                                 \
            c2 += u2 * v;                                                 \
            c3 += u3 * v;                                                 \
        }                                                                 \
        SDOT_FINISH(c0, a0, n)                                            \
        SDOT_FINISH(c1, a1, n + 1)                                        \
        SDOT_FINISH(c2, a2, n + 2)                                        \
        SDOT_FINISH(c3, a3, n + 3)                                        \
    }                                                                     \
    for (; n < N; n++) {                                                  \
        const float *a = A + n * K;                                       \
        v8f acc = { 0 };                                                  \
        for (int64_t k = 0; k < K8; k += 8) {                             \
            v8f u, v;                                                     \
            memcpy(&u, a + k, sizeof u);                                  \
            memcpy(&v, x + k, sizeof v);                                  \
            acc += u * v;                                                 \
        }                                                                 \
        SDOT_FINISH(acc, a, n)                                            \
    }

static void sdot_generic(int64_t N, int64_t K, const float *A, const float *x, float *y)
{
    SDOT_BODY
}

#if defined(SGEMM_X86)
__attribute__((target("avx2,fma"))) static void sdot_avx2(int64_t N, int64_t K, const float *A,
                                                          const float *x, float *y)
{
    SDOT_BODY
}
#endif

void dla_sgemv(int64_t N, int64_t K, const float *x, const float *B, int trans_b, float *y)
{
#if defined(SGEMM_X86)
    if (use_avx2()) {
        trans_b ? sdot_avx2(N, K, B, x, y) : sgemv_avx2(N, K, x, B, y);
        return;
    }
#endif
    trans_b ? sdot_generic(N, K, B, x, y) : sgemv_generic(N, K, x, B, y);
}
