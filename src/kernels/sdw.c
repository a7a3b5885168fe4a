/*
 * Depthwise float convolution (see sdw.h).  One output row at a time, so the
 * row stays in registers while every tap is added: the columns whose taps
 * all lie inside the input go in blocks of 16 (AVX-512F), 8 (AVX2) or 8 as
 * two 4-lane halves (generic vectors), summed in registers in tap order; the
 * border columns go in two masked blocks (AVX2: 8 wide, AVX-512F: 16) or one
 * by one, skipping the taps outside.  Each output's sums are the same in
 * every form, so the instruction set does not change a bit.  With x stride 2 each
 * channel's plane is first split into its even and odd columns, so every
 * tap reads contiguous floats.  Channels are split over threads.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "arith/lanes.h"
#include "common/team.h"
#include "kernels/sdw.h"

#if defined(DLA_LANES_X86)
#include <immintrin.h>
#endif

/* Eight float lanes (GCC/Clang vector extensions: one AVX register where
 * the function is compiled for AVX2, two SSE registers elsewhere). */
typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
/* Sixteen lanes: one zmm register where compiled for AVX-512F. */
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

/* The activation of eight finished outputs, as ONNX writes it (Relu:
 * x > 0 ? x : 0; Clip: x < lo ? lo : x > hi ? hi : x), through comparison
 * masks (a macro: a vector argument would change the generic build's ABI):
 * the same bits as the scalar expressions (NaN, -0 and the bounds
 * included, and a Clip with lo > hi), applied before the store so no pass
 * reads the plane back. */
#define SDW_ACTV(x, a, VF, VI)                                                                \
    do {                                                                                      \
        if ((a) && (a)->kind == DLA_SACT_RELU) {                                              \
            (x) = (VF)((VI)(x) & ((x) > (VF){ 0 }));                                          \
        } else if (a) {                                                                       \
            const VF lo_ = (VF){ 0 } + (a)->lo, hi_ = (VF){ 0 } + (a)->hi;                    \
            const VI below_ = (x) < lo_, above_ = (x) > hi_;                                  \
            const VI inner_ = (above_ & (VI)hi_) | (~above_ & (VI)(x));                       \
            (x) = (VF)((below_ & (VI)lo_) | (~below_ & inner_));                              \
        }                                                                                     \
    } while (0)
#define SDW_ACT8(x, a) SDW_ACTV(x, a, v8f, v8i)

/* Every lane of vector v = b (a vector plus b would turn a bias of -0 into +0). */
#define SDW_SPLAT(v, b)                                                                       \
    for (unsigned l_ = 0; l_ < sizeof(v) / sizeof(float); l_++) {                             \
        (v)[l_] = (b);                                                                        \
    }

/* The same for outputs of the scalar border columns. */
static inline __attribute__((always_inline)) void sdw_act_scalar(const struct dla_sact *a,
                                                                 float *p, int64_t n)
{
    for (int64_t i = 0; a && i < n; i++) {
        p[i] = a->kind == DLA_SACT_RELU ? (p[i] > 0 ? p[i] : 0)
                                        : p[i] < a->lo ? a->lo : p[i] > a->hi ? a->hi : p[i];
    }
}

/* The row loops' instruction sets. */
enum sdw_isa { SDW_GENERIC, SDW_AVX2, SDW_AVX512 };

/* The fastest this CPU runs: AVX-512F (16-lane interior blocks), AVX2, or
 * the build's baseline. */
static int sdw_best(void)
{
#if defined(DLA_LANES_X86)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        return SDW_AVX512;
    }
#endif
    return dla_lanes_avx2_up(dla_lanes_best()) ? SDW_AVX2 : SDW_GENERIC;
}

/* Below this many multiply-adds a layer stays on the calling thread
 * (starting a thread costs tens of microseconds on a virtual machine). */
#define SDW_THREAD_MIN_MACS 1000000.0
/* The same with a team (dla_sdw_on): a job handed over, no thread started. */
#ifndef SDW_TEAM_MIN
#define SDW_TEAM_MIN 250000.0
#endif
#define SDW_TEAM_MIN_MACS SDW_TEAM_MIN
#define SDW_MAX_THREADS 64
#define SDW_BLOCKS_PER_THREAD 4
#define SDW_MAX_KW 64
#define SDW_MASK_KW 16 /* widest kernel row of the masked borders */

/* Output columns ox whose input column ox * sx + off lies in [0, W): [*lo, *hi). */
static void sdw_cols(const struct dla_sconv_geom *g, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t a = off >= 0 ? 0 : (-off + g->sx - 1) / g->sx;
    int64_t b = g->W - off <= 0 ? 0 : (g->W - off + g->sx - 1) / g->sx;
    *lo = a < g->OW ? a : g->OW;
    *hi = b < g->OW ? b : g->OW;
    *hi = *hi < *lo ? *lo : *hi;
}

void dla_sdw_ref(const struct dla_sconv_geom *g, const float *w, const float *bias, float *y)
{
    for (int64_t k = 0; k < g->C; k++) {
        float *yp = y + k * g->OH * g->OW;
        for (int64_t i = 0; i < g->OH * g->OW; i++) {
            yp[i] = bias ? bias[k] : 0.0f;
        }
        for (int64_t ky = 0; ky < g->kh; ky++) {
            for (int64_t kx = 0; kx < g->kw; kx++) {
                float wv = w[(k * g->kh + ky) * g->kw + kx];
                int64_t off = kx * g->dx - g->pl, lo, hi;
                sdw_cols(g, off, &lo, &hi);
                for (int64_t oy = 0; oy < g->OH; oy++) {
                    int64_t iy = oy * g->sy - g->pt + ky * g->dy;
                    if (iy < 0 || iy >= g->H) {
                        continue;
                    }
                    const float *xr = g->x + (k * g->H + iy) * g->W;
                    for (int64_t ox = lo; ox < hi; ox++) {
                        yp[oy * g->OW + ox] += wv * xr[ox * g->sx + off];
                    }
                }
            }
        }
    }
}

/* One channel's fixed facts: its taps' column offsets and valid ranges, the
 * interior [in_lo, in_hi) where every tap is inside, and where a tap reads
 * in the (possibly split) plane. */
struct sdw_chan {
    const struct dla_sconv_geom *g;
    const float *plane; /* x's channel plane, or its split form (stride 2) */
    float *split;       /* NULL, or where the split form goes (stride 2) */
    int64_t pw;         /* floats per row of `plane` (a split row: both halves) */
    int64_t off[SDW_MAX_KW], lo[SDW_MAX_KW], hi[SDW_MAX_KW];
    int64_t voff[SDW_MAX_KW]; /* the tap's first float for output 0 in a row of `plane` */
    int64_t in_lo, in_hi;
    const struct dla_sact *act; /* applied as the outputs are stored, or NULL */
    int vec; /* the interior goes in vector blocks */
    /* AVX2: the border columns go in the two masked blocks of
     * sdw_borders_avx2 (those cover every column outside the interior's
     * blocks); live[i][kx]: lane j of block i reads tap kx (all ones) */
    int masked;
    int32_t live[2][SDW_MASK_KW][8];
    /* AVX-512F: the same with two blocks of sixteen, from column 0 and
     * from OW - 16 (bit j: lane j reads the tap) */
    uint16_t live16[2][SDW_MASK_KW];
};

/* Outputs [oa, ob) of row oy (border columns, or a row too narrow for
 * blocks): bias, then every tap inside in tap order, the tap outermost so
 * that the columns' sums are independent of each other (no waiting on
 * the previous add of the same sum). */
static inline __attribute__((always_inline)) void
sdw_cols_scalar(const struct sdw_chan *c, const float *xk, const float *w, float b, int64_t oy,
                int64_t ky0, int64_t ky1, int64_t oa, int64_t ob, float *yr, int64_t kw)
{
    const struct dla_sconv_geom *g = c->g;
    for (int64_t ox = oa; ox < ob; ox++) {
        yr[ox] = b;
    }
    for (int64_t ky = ky0; ky < ky1; ky++) {
        const float *xr = xk + (oy * g->sy - g->pt + ky * g->dy) * g->W;
        for (int64_t kx = 0; kx < kw; kx++) {
            const float wv = w[ky * kw + kx];
            const int64_t lo = c->lo[kx] > oa ? c->lo[kx] : oa, hi = c->hi[kx] < ob ? c->hi[kx] : ob;
            for (int64_t ox = lo; ox < hi; ox++) {
                yr[ox] += wv * xr[ox * g->sx + c->off[kx]];
            }
        }
    }
    sdw_act_scalar(c->act, yr + oa, ob - oa);
}

/* Four blocks of eight outputs of row oy, from columns p0..p3 on (every
 * tap inside), each summed in tap order in its own register: four
 * independent add chains hide the add latency (one alone would wait for
 * every add).  Positions may repeat: the same block gives the same sums. */
#define SDW_BLOCKSV4(VF, VI, p0, p1, p2, p3)                                                  \
    do {                                                                                      \
        VF a0, a1, a2, a3;                                                                    \
        SDW_SPLAT(a0, b);                                                                     \
        a1 = a2 = a3 = a0;                                                                    \
        for (int64_t ky = ky0; ky < ky1; ky++) {                                              \
            const float *pr = c->plane + (oy * g->sy - g->pt + ky * g->dy) * c->pw;           \
            for (int64_t kx = 0; kx < kw; kx++) {                                             \
                const float *tap = pr + c->voff[kx];                                          \
                float wv = w[ky * kw + kx];                                                   \
                VF e0, e1, e2, e3;                                                            \
                memcpy(&e0, tap + (p0), sizeof e0);                                           \
                memcpy(&e1, tap + (p1), sizeof e1);                                           \
                memcpy(&e2, tap + (p2), sizeof e2);                                           \
                memcpy(&e3, tap + (p3), sizeof e3);                                           \
                a0 += e0 * wv;                                                                \
                a1 += e1 * wv;                                                                \
                a2 += e2 * wv;                                                                \
                a3 += e3 * wv;                                                                \
            }                                                                                 \
        }                                                                                     \
        SDW_ACTV(a0, c->act, VF, VI);                                                         \
        SDW_ACTV(a1, c->act, VF, VI);                                                         \
        SDW_ACTV(a2, c->act, VF, VI);                                                         \
        SDW_ACTV(a3, c->act, VF, VI);                                                         \
        memcpy(yr + (p0), &a0, sizeof a0);                                                    \
        memcpy(yr + (p1), &a1, sizeof a1);                                                    \
        memcpy(yr + (p2), &a2, sizeof a2);                                                    \
        memcpy(yr + (p3), &a3, sizeof a3);                                                    \
    } while (0)

#define SDW_BLOCKS4(p0, p1, p2, p3) SDW_BLOCKSV4(v8f, v8i, p0, p1, p2, p3)

/* SDW_BLOCKS4 for two blocks (the end of a row). */
#define SDW_BLOCKSV2(VF, VI, p0, p1)                                                          \
    do {                                                                                      \
        VF a0, a1;                                                                            \
        SDW_SPLAT(a0, b);                                                                     \
        a1 = a0;                                                                              \
        for (int64_t ky = ky0; ky < ky1; ky++) {                                              \
            const float *pr = c->plane + (oy * g->sy - g->pt + ky * g->dy) * c->pw;           \
            for (int64_t kx = 0; kx < kw; kx++) {                                             \
                const float *tap = pr + c->voff[kx];                                          \
                float wv = w[ky * kw + kx];                                                   \
                VF e0, e1;                                                                    \
                memcpy(&e0, tap + (p0), sizeof e0);                                           \
                memcpy(&e1, tap + (p1), sizeof e1);                                           \
                a0 += e0 * wv;                                                                \
                a1 += e1 * wv;                                                                \
            }                                                                                 \
        }                                                                                     \
        SDW_ACTV(a0, c->act, VF, VI);                                                         \
        SDW_ACTV(a1, c->act, VF, VI);                                                         \
        memcpy(yr + (p0), &a0, sizeof a0);                                                    \
        memcpy(yr + (p1), &a1, sizeof a1);                                                    \
    } while (0)

#define SDW_BLOCKS2(p0, p1) SDW_BLOCKSV2(v8f, v8i, p0, p1)

/* Stride 2: the even columns of every row of plane xk, then its odd ones
 * (a row of `split`: ceil(W/2) even floats, then the odd ones), so that
 * every tap of a block reads eight contiguous floats. */
static inline __attribute__((always_inline)) void sdw_split(const struct dla_sconv_geom *g,
                                                            const float *xk, float *split)
{
    const int64_t half = (g->W + 1) / 2;
    for (int64_t r = 0; r < g->H; r++) {
        const float *src = xk + r * g->W;
        float *even = split + r * 2 * half, *odd = even + half;
        int64_t i = 0;
        for (; 2 * i + 16 <= g->W; i += 8) { /* eight pairs at a time */
            v8f lo, hi;
            memcpy(&lo, src + 2 * i, sizeof lo);
            memcpy(&hi, src + 2 * i + 8, sizeof hi);
            v8f e = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
            v8f o = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15);
            memcpy(even + i, &e, sizeof e);
            memcpy(odd + i, &o, sizeof o);
        }
        for (int64_t j = i; 2 * j < g->W; j++) {
            even[j] = src[2 * j];
        }
        for (; 2 * i + 1 < g->W; i++) {
            odd[i] = src[2 * i + 1];
        }
    }
}

/* The kernel rows of output row oy that lie inside the input:
 * iy = oy sy - pt + ky dy in [0, H) for ky in [*ky0, *ky1). */
static inline __attribute__((always_inline)) void sdw_krows(const struct dla_sconv_geom *g,
                                                            int64_t oy, int64_t *ky0,
                                                            int64_t *ky1)
{
    *ky0 = 0;
    *ky1 = g->kh;
    while (*ky0 < *ky1 && oy * g->sy - g->pt + *ky0 * g->dy < 0) {
        ++*ky0;
    }
    while (*ky1 > *ky0 && oy * g->sy - g->pt + (*ky1 - 1) * g->dy >= g->H) {
        --*ky1;
    }
}

#if defined(DLA_LANES_X86)
/* The border columns of every row (c->masked): two blocks of eight, from
 * column 0 and from OW - 8 (the same block when OW <= 8), side by side in
 * two registers.  A tap's lanes outside the input neither load (masked
 * load) nor add (blend), so every output sums exactly the taps inside, in
 * tap order; lanes whose taps are all inside get the interior's sums. */
DLA_LANES_AVX2_ATTR static void sdw_borders_avx2(const struct sdw_chan *c, const float *w,
                                                 float b, float *yp)
{
    const struct dla_sconv_geom *g = c->g;
    const int64_t kw = g->kw, x0 = 0, x1 = g->OW > 8 ? g->OW - 8 : 0;
    const int two = g->OW > 8;
    for (int64_t oy = 0; oy < g->OH; oy++) {
        int64_t ky0, ky1;
        sdw_krows(g, oy, &ky0, &ky1);
        __m256 a0 = _mm256_set1_ps(b), a1 = a0;
        for (int64_t ky = ky0; ky < ky1; ky++) {
            const float *pr = c->plane + (oy * g->sy - g->pt + ky * g->dy) * c->pw;
            for (int64_t kx = 0; kx < kw; kx++) {
                const __m256i l0 = _mm256_loadu_si256((const __m256i *)(const void *)c->live[0][kx]);
                const __m256i l1 = _mm256_loadu_si256((const __m256i *)(const void *)c->live[1][kx]);
                const __m256 wv = _mm256_set1_ps(w[ky * kw + kx]);
                __m256 e0 = _mm256_maskload_ps(pr + c->voff[kx] + x0, l0);
                __m256 t0 = _mm256_add_ps(a0, _mm256_mul_ps(e0, wv));
                a0 = _mm256_blendv_ps(a0, t0, _mm256_castsi256_ps(l0));
                if (two) { /* else block 1 is block 0 */
                    __m256 e1 = _mm256_maskload_ps(pr + c->voff[kx] + x1, l1);
                    __m256 t1 = _mm256_add_ps(a1, _mm256_mul_ps(e1, wv));
                    a1 = _mm256_blendv_ps(a1, t1, _mm256_castsi256_ps(l1));
                }
            }
        }
        a1 = two ? a1 : a0;
        v8f r0 = (v8f)a0, r1 = (v8f)a1;
        SDW_ACT8(r0, c->act);
        SDW_ACT8(r1, c->act);
        a0 = (__m256)r0;
        a1 = (__m256)r1;
        float *yr = yp + oy * g->OW;
        if (g->OW >= 8) {
            _mm256_storeu_ps(yr + x0, a0);
            _mm256_storeu_ps(yr + x1, a1);
        } else {
            __m256i n = _mm256_set1_epi32((int)g->OW);
            __m256i st = _mm256_cmpgt_epi32(n, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            _mm256_maskstore_ps(yr, st, a0);
        }
    }
}
#endif

/* Every row of one channel; masked: the border columns are left to
 * sdw_borders_avx2 (c->masked), else they go one by one here; wide: the
 * interior in blocks of sixteen (AVX-512F) when it has one. */
static inline __attribute__((always_inline)) void sdw_rows(const struct sdw_chan *c,
                                                           const float *xk, const float *w,
                                                           float b, float *yp, int64_t kw,
                                                           int masked, int wide)
{
    const struct dla_sconv_geom *g = c->g;
    for (int64_t oy = 0; oy < g->OH; oy++) {
        int64_t ky0, ky1;
        sdw_krows(g, oy, &ky0, &ky1);
        float *yr = yp + oy * g->OW;
        if (!c->vec || c->in_hi - c->in_lo < 8) { /* no block inside */
            if (!masked) {
                sdw_cols_scalar(c, xk, w, b, oy, ky0, ky1, 0, g->OW, yr, kw);
            }
            continue;
        }
        if (!masked) {
            sdw_cols_scalar(c, xk, w, b, oy, ky0, ky1, 0, c->in_lo, yr, kw);
        }
        /* the interior in blocks of eight, none starting past `last` (every
         * tap inside); with the masked blocks [0, 8) and [OW - 8, OW)
         * stored after, only the columns between them */
        const int64_t bw = wide ? 16 : 8; /* the border blocks' width */
        const int64_t a = masked && c->in_lo < bw ? bw : c->in_lo;
        const int64_t e = masked && c->in_hi > g->OW - bw ? g->OW - bw : c->in_hi;
        const int64_t top = c->in_hi - 8, need = e - 8 > a ? e - 8 : a;
        const int64_t last = need < top ? need : top;
        int64_t ox = a;
        if (wide && e - a >= 16) {
            /* sixteen columns a block, the last one ending at e (every
             * column's sums as in blocks of eight); nothing left after */
            const int64_t last16 = e - 16;
            for (; ox + 48 < e; ox += 64) {
                const int64_t q0 = ox < last16 ? ox : last16;
                const int64_t q1 = ox + 16 < last16 ? ox + 16 : last16;
                const int64_t q2 = ox + 32 < last16 ? ox + 32 : last16;
                const int64_t q3 = ox + 48 < last16 ? ox + 48 : last16;
                SDW_BLOCKSV4(v16f, v16i, q0, q1, q2, q3);
            }
            for (; ox < e; ox += 32) {
                const int64_t q0 = ox < last16 ? ox : last16;
                const int64_t q1 = ox + 16 < last16 ? ox + 16 : last16;
                SDW_BLOCKSV2(v16f, v16i, q0, q1);
            }
        }
        for (; ox + 24 < e; ox += 32) { /* four blocks or more left */
            const int64_t q0 = ox < last ? ox : last, q1 = ox + 8 < last ? ox + 8 : last;
            const int64_t q2 = ox + 16 < last ? ox + 16 : last, q3 = ox + 24 < last ? ox + 24 : last;
            SDW_BLOCKS4(q0, q1, q2, q3);
        }
        for (; ox < e; ox += 16) { /* one to three */
            const int64_t q0 = ox < last ? ox : last, q1 = ox + 8 < last ? ox + 8 : last;
            SDW_BLOCKS2(q0, q1);
        }
        if (!masked) {
            sdw_cols_scalar(c, xk, w, b, oy, ky0, ky1, c->in_hi, g->OW, yr, kw);
        }
    }
}

static void sdw_rows_generic(const struct sdw_chan *c, const float *xk, const float *w, float b,
                             float *yp)
{
    if (c->split) {
        sdw_split(c->g, xk, c->split);
    }
    /* MobileNet's 3 taps a row as a constant: the tap loops unrolled */
    if (c->g->kw == 3) {
        sdw_rows(c, xk, w, b, yp, 3, 0, 0);
    } else {
        sdw_rows(c, xk, w, b, yp, c->g->kw, 0, 0);
    }
}

#if defined(DLA_LANES_X86)
DLA_LANES_AVX2_ATTR static void sdw_rows_avx2(const struct sdw_chan *c, const float *xk,
                                              const float *w, float b, float *yp)
{
    if (c->split) {
        sdw_split(c->g, xk, c->split);
    }
    if (c->masked && c->g->OW <= 16) {
        /* the two masked blocks are the whole row (the 14- and 7-wide
         * planes): no interior block to compute and then overwrite */
    } else if (c->g->kw == 3) { /* MobileNet's 3 taps a row as a constant: loops unrolled */
        sdw_rows(c, xk, w, b, yp, 3, c->masked, 0);
    } else {
        sdw_rows(c, xk, w, b, yp, c->g->kw, c->masked, 0);
    }
    if (c->masked) {
        sdw_borders_avx2(c, w, b, yp);
    }
}

/* The border columns of every row (c->masked, AVX-512F): sdw_borders_avx2
 * with two blocks of sixteen, from column 0 and from OW - 16 (one block
 * when OW <= 16); lanes outside a tap's columns neither load nor add. */
__attribute__((target("avx512f"))) static void sdw_borders_avx512(const struct sdw_chan *c,
                                                                  const float *w, float b,
                                                                  float *yp)
{
    const struct dla_sconv_geom *g = c->g;
    const int64_t kw = g->kw, x0 = 0, x1 = g->OW > 16 ? g->OW - 16 : 0;
    const int two = g->OW > 16;
    for (int64_t oy = 0; oy < g->OH; oy++) {
        int64_t ky0, ky1;
        sdw_krows(g, oy, &ky0, &ky1);
        __m512 a0 = _mm512_set1_ps(b), a1 = a0;
        for (int64_t ky = ky0; ky < ky1; ky++) {
            const float *pr = c->plane + (oy * g->sy - g->pt + ky * g->dy) * c->pw;
            for (int64_t kx = 0; kx < kw; kx++) {
                const __mmask16 l0 = c->live16[0][kx], l1 = c->live16[1][kx];
                const __m512 wv = _mm512_set1_ps(w[ky * kw + kx]);
                __m512 e0 = _mm512_maskz_loadu_ps(l0, pr + c->voff[kx] + x0);
                a0 = _mm512_mask_add_ps(a0, l0, a0, _mm512_mul_ps(e0, wv));
                if (two) { /* else block 1 is block 0 */
                    __m512 e1 = _mm512_maskz_loadu_ps(l1, pr + c->voff[kx] + x1);
                    a1 = _mm512_mask_add_ps(a1, l1, a1, _mm512_mul_ps(e1, wv));
                }
            }
        }
        v16f r0 = (v16f)a0, r1 = (v16f)a1;
        SDW_ACTV(r0, c->act, v16f, v16i);
        SDW_ACTV(r1, c->act, v16f, v16i);
        float *yr = yp + oy * g->OW;
        if (g->OW >= 16) {
            _mm512_storeu_ps(yr + x0, (__m512)r0);
            _mm512_storeu_ps(yr + x1, (__m512)(two ? r1 : r0));
        } else {
            _mm512_mask_storeu_ps(yr, (__mmask16)((1u << g->OW) - 1u), (__m512)r0);
        }
    }
}

/* sdw_rows_avx2 with the interior in blocks of sixteen and sixteen-column
 * border blocks. */
__attribute__((target("avx512f"))) static void sdw_rows_avx512(const struct sdw_chan *c,
                                                               const float *xk, const float *w,
                                                               float b, float *yp)
{
    if (c->split) {
        sdw_split(c->g, xk, c->split);
    }
    if (c->masked && c->g->OW <= 32) {
        /* the two masked blocks are the whole row */
    } else if (c->g->kw == 3) {
        sdw_rows(c, xk, w, b, yp, 3, c->masked, 1);
    } else {
        sdw_rows(c, xk, w, b, yp, c->g->kw, c->masked, 1);
    }
    if (c->masked) {
        sdw_borders_avx512(c, w, b, yp);
    }
}
#endif

/* c->masked and the lanes of the two eight-column border blocks (AVX2):
 * they and the interior's blocks cover the row when the interior has a
 * block or OW <= 16. */
static void sdw_masks8(const struct dla_sconv_geom *g, struct sdw_chan *c, int avx2)
{
    c->masked = avx2 && c->vec && g->kw <= SDW_MASK_KW && c->in_lo <= 8 && g->OW - c->in_hi <= 8 &&
                (c->in_hi - c->in_lo >= 8 || g->OW <= 16);
    for (int i = 0; c->masked && i < 2; i++) {
        int64_t x0 = i == 0 || g->OW <= 8 ? 0 : g->OW - 8;
        for (int64_t kx = 0; kx < g->kw; kx++) {
            for (int64_t j = 0; j < 8; j++) {
                c->live[i][kx][j] = x0 + j >= c->lo[kx] && x0 + j < c->hi[kx] ? -1 : 0;
            }
        }
    }
}

/* The same for sixteen-column blocks (AVX-512F): the interior has a block
 * of sixteen, or the two blocks are the whole row (OW <= 32). */
static void sdw_masks16(const struct dla_sconv_geom *g, struct sdw_chan *c)
{
    c->masked = c->vec && g->kw <= SDW_MASK_KW && c->in_lo <= 16 && g->OW - c->in_hi <= 16 &&
                (c->in_hi - c->in_lo >= 16 || g->OW <= 32);
    for (int i = 0; c->masked && i < 2; i++) {
        int64_t x0 = i == 0 || g->OW <= 16 ? 0 : g->OW - 16;
        for (int64_t kx = 0; kx < g->kw; kx++) {
            unsigned bits = 0;
            for (int64_t j = 0; j < 16; j++) {
                bits |= (x0 + j >= c->lo[kx] && x0 + j < c->hi[kx] ? 1u : 0u) << j;
            }
            c->live16[i][kx] = (uint16_t)bits;
        }
    }
}

/* A thread's channels [k0, k1); split: a buffer of H x 2 ceil(W/2) floats
 * for stride-2 planes, or NULL (then stride 2 goes one output at a time). */
static void sdw_channels(const struct dla_sconv_geom *g, const float *w, const float *bias,
                         float *y, int64_t k0, int64_t k1, float *split, int isa,
                         const struct dla_sact *act)
{
    struct sdw_chan c = { .g = g, .in_lo = 0, .in_hi = g->OW,
                          .act = act && act->kind != DLA_SACT_NONE ? act : NULL };
    for (int64_t kx = 0; kx < g->kw; kx++) {
        c.off[kx] = kx * g->dx - g->pl;
        sdw_cols(g, c.off[kx], &c.lo[kx], &c.hi[kx]);
        c.in_lo = c.lo[kx] > c.in_lo ? c.lo[kx] : c.in_lo;
        c.in_hi = c.hi[kx] < c.in_hi ? c.hi[kx] : c.in_hi;
    }
    c.in_hi = c.in_hi < c.in_lo ? c.in_lo : c.in_hi;
    const int64_t half = (g->W + 1) / 2;
    c.vec = g->sx == 1 || (g->sx == 2 && split != NULL);
    c.pw = g->sx == 1 ? g->W : 2 * half;
    for (int64_t kx = 0; kx < g->kw; kx++) {
        /* stride 2: column 2 i + p of the input is float i of half p of a split row */
        int64_t p = ((c.off[kx] % 2) + 2) % 2, fl = (c.off[kx] - p) / 2;
        c.voff[kx] = g->sx == 1 ? c.off[kx] : p * half + fl;
    }
    /* the two border blocks [0, 8) and [OW - 8, OW) and the interior's
     * blocks cover the row when the interior has a block or OW <= 16 */
    if (isa == SDW_AVX512) {
        sdw_masks16(g, &c);
    } else {
        sdw_masks8(g, &c, isa == SDW_AVX2);
    }
    for (int64_t k = k0; k < k1; k++) {
        const float *xk = g->x + k * g->H * g->W;
        c.split = g->sx == 2 ? split : NULL;
        c.plane = c.split ? c.split : xk;
        const float *wk = w + k * g->kh * g->kw;
        float b = bias ? bias[k] : 0.0f;
        float *yp = y + k * g->OH * g->OW;
#if defined(DLA_LANES_X86)
        if (isa == SDW_AVX512) {
            sdw_rows_avx512(&c, xk, wk, b, yp);
        } else if (isa == SDW_AVX2) {
            sdw_rows_avx2(&c, xk, wk, b, yp);
        } else
#endif
        {
            sdw_rows_generic(&c, xk, wk, b, yp);
        }
    }
}

struct sdw_job {
    const struct dla_sconv_geom *g;
    const float *w, *bias;
    float *y;
    int64_t k0, k1;
    int isa; /* enum sdw_isa */
    const struct dla_sact *act; /* or NULL */
};

static void *sdw_worker(void *arg)
{
    const struct sdw_job *j = arg;
    const struct dla_sconv_geom *g = j->g;
    float *split = NULL;
    if (g->sx == 2) {
        split = malloc((size_t)g->H * 2 * (size_t)((g->W + 1) / 2) * sizeof(float));
    }
    sdw_channels(g, j->w, j->bias, j->y, j->k0, j->k1, split, j->isa, j->act);
    free(split);
    return NULL;
}

/* Team job of dla_sdw_on: blocks of channels taken from a counter. */
struct sdw_team_job {
    struct sdw_job base;
    int64_t blocks;
    atomic_llong next;
};

static void sdw_team_body(void *arg)
{
    struct sdw_team_job *t = arg;
    for (;;) {
        long long b = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
        if (b >= t->blocks) {
            return;
        }
        struct sdw_job j = t->base;
        j.k0 = t->base.g->C * b / t->blocks;
        j.k1 = t->base.g->C * (b + 1) / t->blocks;
        (void)sdw_worker(&j);
    }
}

static void sdw_on(int isa, struct dla_team *team, const struct dla_sconv_geom *g,
                   const float *w, const float *bias, float *y, const struct dla_sact *act)
{
    if (g->kw > SDW_MAX_KW || g->C <= 0) {
        dla_sdw_ref(g, w, bias, y);
        dla_sact_apply(act, y, g->C * g->OH * g->OW);
        return;
    }
    double macs = (double)g->C * g->OH * g->OW * g->kh * g->kw;
    unsigned n = macs < SDW_TEAM_MIN_MACS ? 1 : dla_team_threads(team);
    n = (int64_t)n > g->C ? (unsigned)g->C : n;
    struct sdw_team_job t = { .base = { g, w, bias, y, 0, g->C, isa, act }, .blocks = n };
    /* several blocks a thread: a worker that wakes late still takes an even
     * share (the channels are independent: the same bits in any split) */
    t.blocks = n > 1 && (int64_t)n * SDW_BLOCKS_PER_THREAD <= g->C ? n * SDW_BLOCKS_PER_THREAD
                                                                    : n;
    atomic_init(&t.next, 0);
    dla_team_join(n > 1 ? team : NULL, n - 1, sdw_team_body, &t);
}

void dla_sdw_on(struct dla_team *team, const struct dla_sconv_geom *g, const float *w,
                const float *bias, float *y, const struct dla_sact *act)
{
    sdw_on(sdw_best(), team, g, w, bias, y, act);
}

void dla_sdw_variant_on(enum dla_sgemm_variant v, struct dla_team *team,
                        const struct dla_sconv_geom *g, const float *w, const float *bias,
                        float *y, const struct dla_sact *act)
{
    sdw_on(v == DLA_SGEMM_AVX512 ? SDW_AVX512 : v == DLA_SGEMM_AVX2 ? SDW_AVX2 : SDW_GENERIC,
           team, g, w, bias, y, act);
}

void dla_sdw(const struct dla_sconv_geom *g, const float *w, const float *bias, float *y,
             unsigned threads)
{
    if (g->kw > SDW_MAX_KW || g->C <= 0) {
        dla_sdw_ref(g, w, bias, y);
        return;
    }
    int isa = sdw_best();
    double macs = (double)g->C * g->OH * g->OW * g->kh * g->kw;
    unsigned n = macs < SDW_THREAD_MIN_MACS ? 1 : threads;
    n = n < 1 ? 1 : n > SDW_MAX_THREADS ? SDW_MAX_THREADS : n;
    n = (int64_t)n > g->C ? (unsigned)g->C : n;
    struct sdw_job jobs[SDW_MAX_THREADS];
    pthread_t tid[SDW_MAX_THREADS];
    int started[SDW_MAX_THREADS] = { 0 };
    for (unsigned i = 0; i < n; i++) {
        jobs[i] = (struct sdw_job){ g, w, bias, y, g->C * i / n, g->C * (i + 1) / n, isa, NULL };
    }
    for (unsigned i = 1; i < n; i++) {
        started[i] = pthread_create(&tid[i], NULL, sdw_worker, &jobs[i]) == 0;
    }
    sdw_worker(&jobs[0]);
    for (unsigned i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        } else {
            sdw_worker(&jobs[i]); /* no thread: the caller does its part */
        }
    }
}
