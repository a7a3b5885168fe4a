/*
 * Single-precision matrix product for the float reference executor
 * (src/compiler/float_exec.c): convolutions as im2col x weights, Gemm.
 *
 *   C[m * ldc + n] = bias[m] + sum over k < K of A[m * lda + k] * B[k * ldb + n]
 *
 * (bias may be NULL: 0).  Packed panels, a register-blocked micro-kernel with
 * the instruction set chosen at run time (AVX-512F, AVX2+FMA or generic C),
 * split over `threads` threads (1 = the calling thread only).  Float sums are
 * rounded in a fixed order that does not depend on the thread count or the
 * instruction set, so results are reproducible run to run, between 1 and N
 * threads and between machines.
 */
#ifndef DLASIM_KERNELS_SGEMM_H
#define DLASIM_KERNELS_SGEMM_H

#include <stdint.h>

/* Returns 0, or -1 when the packing buffers cannot be allocated. */
int dla_sgemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
              int64_t ldb, const float *bias, float *C, int64_t ldc, unsigned threads);

/* A convolution as a matrix product without an im2col copy: the B panels
 * are gathered from the image.  x: C x H x W (one group's channels);
 * output OH x OW; kernel kh x kw, strides, dilations, top/left padding (the
 * bottom/right padding follows from OH, OW). */
struct dla_sconv_geom {
    const float *x;
    int64_t C, H, W, OH, OW, kh, kw, sy, sx, dy, dx, pt, pl;
};

/* y[k][oy][ox] = bias[k] + sum over (c, ky, kx) of w[k][c][ky][kx] *
 * x[c][oy * sy - pt + ky * dy][ox * sx - pl + kx * dx] (0 outside), k < K. */
int dla_sconv(const struct dla_sconv_geom *g, int64_t K, const float *w, const float *bias,
              float *y, unsigned threads);

/* An activation applied to a product's outputs as they are finished (the
 * float reference's Conv followed by Relu or Clip, one pass fewer over
 * memory), with exactly the ONNX operators' results: Relu y = x > 0 ? x : 0
 * (NaN and -0 give +0); Clip y = x < lo ? lo : x > hi ? hi : x (NaN stays
 * NaN; lo <= hi). */
enum dla_sact_kind { DLA_SACT_NONE = 0, DLA_SACT_RELU, DLA_SACT_CLIP };
struct dla_sact {
    enum dla_sact_kind kind;
    float lo, hi; /* DLA_SACT_CLIP */
};

/* The activation on p[0..n) in place (a NULL act or DLA_SACT_NONE: nothing). */
void dla_sact_apply(const struct dla_sact *act, float *p, int64_t n);

/* dla_sgemm and dla_sconv on the threads of a team kept by the caller
 * (src/common/team.h: no thread created per call; one call at a time per
 * team), then act (NULL: none) on every output; team NULL: the calling
 * thread only.  The same bits as dla_sgemm / dla_sconv then dla_sact_apply. */
struct dla_team;
int dla_sgemm_on(struct dla_team *team, int64_t M, int64_t N, int64_t K, const float *A,
                 int64_t lda, const float *B, int64_t ldb, const float *bias, float *C,
                 int64_t ldc, const struct dla_sact *act);
int dla_sconv_on(struct dla_team *team, const struct dla_sconv_geom *g, int64_t K,
                 const float *w, const float *bias, float *y, const struct dla_sact *act);

/* One row times a matrix: y[n] = sum over k < K of x[k] * B[k * N + n], or with
 * trans_b, of x[k] * B[n * K + k]. */
void dla_sgemv(int64_t N, int64_t K, const float *x, const float *B, int trans_b, float *y);

/* Name of the micro-kernel dla_sgemm selects on this machine: "avx512",
 * "avx2" or "generic". */
const char *dla_sgemm_isa(void);

/* The micro-kernel variants.  All give the same bits (each output: zero,
 * one fused multiply-add per reduction step in order within each block of
 * 256 steps, then one add to the bias or C); the fastest the CPU runs is
 * used. */
enum dla_sgemm_variant { DLA_SGEMM_GENERIC, DLA_SGEMM_AVX2, DLA_SGEMM_AVX512, DLA_SGEMM_VARIANTS };

/* Can this CPU run variant v? */
int dla_sgemm_supported(enum dla_sgemm_variant v);

/* dla_sgemm_on and dla_sconv_on with variant v's micro-kernel (v supported:
 * the unit tests compare the variants). */
int dla_sgemm_variant_on(enum dla_sgemm_variant v, struct dla_team *team, int64_t M, int64_t N,
                         int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                         const float *bias, float *C, int64_t ldc, const struct dla_sact *act);
int dla_sconv_variant_on(enum dla_sgemm_variant v, struct dla_team *team,
                         const struct dla_sconv_geom *g, int64_t K, const float *w,
                         const float *bias, float *y, const struct dla_sact *act);

#endif
