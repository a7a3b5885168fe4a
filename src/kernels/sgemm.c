/*
 * Single-precision GEMM of the float reference (see sgemm.h).
 *
 * Blocking (a packed-panel scheme): for each block of KC reduction steps and
 * NC columns, B is packed into micro-panels of NR columns, [k][NR] (zero
 * padded), which stay in L2 while MR rows of A (KC floats each, read in
 * place: they are the weights, contiguous, and packing them again at every
 * inference cost more than it saved) pass over them.  The micro-kernel keeps an MR x NR tile of C in registers:
 * 6 rows x 2 vectors of 8 floats = 12 ymm accumulators with AVX2+FMA.
 * The generic build of the same kernel uses GCC vector extensions without a
 * target, so it runs on any CPU.
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

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define SGEMM_X86 1
#include <immintrin.h>
#endif

enum { MR = 6, NR = 16, KC = 256, NC = 256, SGEMM_MAX_THREADS = 64 };
/* about 0.1 ms of work at 50 GFLOP/s: below twice this, one thread */
#define SGEMM_MIN_MACS_PER_THREAD 2.5e6
/* With a team (dla_sgemm_on) a thread is handed a job, not started: a
 * smaller product pays for the hand-off. */
#define SGEMM_TEAM_MIN_MACS_PER_THREAD SGEMM_TEAM_MIN
#ifndef SGEMM_TEAM_MIN
#define SGEMM_TEAM_MIN 0.5e6
#endif

typedef float v8f __attribute__((vector_size(32)));

/* One MR x NR tile over kc steps: acc = Ap * Bp; then C = (first ? bias : C) + acc,
 * for the mr x nr corner that lies inside C. */
#define SGEMM_KERNEL_BODY                                                                   \
    v8f c[MR][2];                                                                           \
    for (int m = 0; m < MR; m++) {                                                          \
        c[m][0] = (v8f){ 0 };                                                               \
        c[m][1] = (v8f){ 0 };                                                               \
    }                                                                                       \
    for (int64_t k = 0; k < kc; k++) {                                                      \
        v8f b0, b1;                                                                         \
        memcpy(&b0, bp + k * NR, sizeof b0);                                                \
        memcpy(&b1, bp + k * NR + 8, sizeof b1);                                            \
        for (int m = 0; m < mr; m++) {                                                      \
            float a = ap[m * lda + k];                                                      \
            c[m][0] += b0 * a;                                                              \
            c[m][1] += b1 * a;                                                              \
        }                                                                                   \
    }                                                                                       \
    if (mr == MR && nr == NR) {                                                             \
        for (int m = 0; m < MR; m++) {                                                      \
            v8f o0, o1;                                                                     \
            if (first) {                                                                    \
                o0 = (v8f){ 0 } + (bias ? bias[m] : 0.0f);                                  \
                o1 = o0;                                                                    \
            } else {                                                                        \
                memcpy(&o0, cp + m * ldc, sizeof o0);                                       \
                memcpy(&o1, cp + m * ldc + 8, sizeof o1);                                   \
            }                                                                               \
            o0 += c[m][0];                                                                  \
            o1 += c[m][1];                                                                  \
            memcpy(cp + m * ldc, &o0, sizeof o0);                                           \
            memcpy(cp + m * ldc + 8, &o1, sizeof o1);                                       \
        }                                                                                   \
        return;                                                                             \
    }                                                                                       \
    float t[MR][NR];                                                                        \
    memcpy(t, c, sizeof t);                                                                 \
    for (int m = 0; m < mr; m++) {                                                          \
        for (int n = 0; n < nr; n++) {                                                      \
            cp[m * ldc + n] = (first ? (bias ? bias[m] : 0.0f) : cp[m * ldc + n]) + t[m][n]; \
        }                                                                                   \
    }

/* act: NULL, or the activation of the outputs (the tile's last k block). */
typedef void sgemm_kernel_fn(int64_t kc, const float *ap, int64_t lda, const float *bp,
                             float *cp, int64_t ldc, int mr, int nr, int first,
                             const float *bias, const struct dla_sact *act);

static void sact_scalar(const struct dla_sact *a, float *p, int64_t n);

static void kernel_generic_sums(int64_t kc, const float *ap, int64_t lda, const float *bp,
                                float *cp, int64_t ldc, int mr, int nr, int first,
                                const float *bias)
{
    SGEMM_KERNEL_BODY
}

static void kernel_generic(int64_t kc, const float *ap, int64_t lda, const float *bp, float *cp,
                           int64_t ldc, int mr, int nr, int first, const float *bias,
                           const struct dla_sact *act)
{
    kernel_generic_sums(kc, ap, lda, bp, cp, ldc, mr, nr, first, bias);
    for (int m = 0; act && m < mr; m++) {
        sact_scalar(act, cp + m * ldc, nr);
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

const char *dla_sgemm_isa(void)
{
    return use_avx2() ? "avx2" : "generic";
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
    int64_t row_blocks, rows_per_task, col_blocks, tasks;
    float *Bp; /* all of B packed: column block jb at jb * K * NC, then panel_of() */
    int64_t pack_tasks;
    atomic_llong next_pack, packs_done, next;
    atomic_int failed;
};

/* Row k of the im2col matrix of conv->x, columns j0..j0+nc, into row[]:
 * row (c, ky, kx), column (oy, ox), zero where the tap falls in the padding. */
static void conv_row(const struct dla_sconv_geom *g, int64_t k, int64_t j0, int64_t nc, float *row)
{
    int64_t taps = g->kh * g->kw, c = k / taps, ky = k % taps / g->kw, kx = k % g->kw;
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

/* B rows k0..k0+kc, columns j0..j0+nc into [nc / NR][kc][NR], zero padded. */
static void pack_b(const struct sgemm_job *job, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                   float *Bp)
{
    float row[NC];
    for (int64_t k = 0; k < kc; k++) {
        const float *src = row;
        if (job->conv) {
            conv_row(job->conv, k0 + k, j0, nc, row);
        } else {
            src = job->B + (k0 + k) * job->ldb + j0;
        }
        for (int64_t j = 0; j < nc; j += NR) {
            float *dst = Bp + (j / NR) * kc * NR + k * NR;
            int64_t nr = nc - j < NR ? nc - j : NR;
            if (nr == NR) { /* a fixed-size copy the compiler turns into vector moves */
                memcpy(dst, src + j, NR * sizeof(float));
                continue;
            }
            memcpy(dst, src + j, (size_t)nr * sizeof(float));
            memset(dst + nr, 0, (size_t)(NR - nr) * sizeof(float));
        }
    }
}

/* Packed B of column block jb, from reduction step k0 (k0 a multiple of KC). */
static float *panel_of(const struct sgemm_job *j, int64_t jb, int64_t k0)
{
    int64_t nc = j->N - jb * NC < NC ? j->N - jb * NC : NC;
    int64_t ncpad = (nc + NR - 1) / NR * NR;
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
    for (int64_t k0 = 0; k0 < j->K; k0 += KC) {
        int64_t kc = j->K - k0 < KC ? j->K - k0 : KC;
        const float *Bp = local ? local : panel_of(j, jb, k0);
        if (local) {
            pack_b(j, k0, kc, j0, nc, local);
        }
        for (int64_t i = i_first; i < i_end; i++) {
            int64_t row = i * MR;
            int mr = j->M - row < MR ? (int)(j->M - row) : MR;
            const float *ap = j->A + row * j->lda + k0;
            for (int64_t jj = 0; jj < nc; jj += NR) {
                int nr = nc - jj < NR ? (int)(nc - jj) : NR;
                j->kernel(kc, ap, j->lda, Bp + (jj / NR) * kc * NR, j->C + row * j->ldc + j0 + jj,
                          j->ldc, mr, nr, k0 == 0, j->bias ? j->bias + row : NULL,
                          k0 + kc == j->K ? j->act : NULL);
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

static int sgemm_run(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                     int64_t ldb, const struct dla_sconv_geom *conv, const float *bias, float *C,
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
    j.row_blocks = (M + MR - 1) / MR;
    j.kernel = use_avx2() ?
#if defined(SGEMM_X86)
                          kernel_avx2_any
#else
                          kernel_generic
#endif
                          : kernel_generic;
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
        size_t bsz = (size_t)K * (size_t)((j.col_blocks - 1) * NC + (last_nc + NR - 1) / NR * NR);
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
    return sgemm_run(M, N, K, A, lda, B, ldb, NULL, bias, C, ldc, NULL, threads, NULL);
}

int dla_sgemm_on(struct dla_team *team, int64_t M, int64_t N, int64_t K, const float *A,
                 int64_t lda, const float *B, int64_t ldb, const float *bias, float *C,
                 int64_t ldc, const struct dla_sact *act)
{
    return sgemm_run(M, N, K, A, lda, B, ldb, NULL, bias, C, ldc, team, 1, act);
}

int dla_sconv(const struct dla_sconv_geom *g, int64_t K, const float *w, const float *bias,
              float *y, unsigned threads)
{
    int64_t rows = g->C * g->kh * g->kw;
    return sgemm_run(K, g->OH * g->OW, rows, w, rows, NULL, 0, g, bias, y, g->OH * g->OW, NULL,
                     threads, NULL);
}

int dla_sconv_on(struct dla_team *team, const struct dla_sconv_geom *g, int64_t K,
                 const float *w, const float *bias, float *y, const struct dla_sact *act)
{
    int64_t rows = g->C * g->kh * g->kw;
    return sgemm_run(K, g->OH * g->OW, rows, w, rows, NULL, 0, g, bias, y, g->OH * g->OW, team,
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
