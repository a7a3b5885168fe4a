/*
 * The convolution datapath kernel: exact integer convolution of a padded
 * int8 cube with int8 kernels into int32 accumulators.  This is what
 * CSC+CMAC compute for one layer (NVDLA splits it into atomic operations of
 * Atomic-C x Atomic-K MACs; integer sums are exact, so the order does not
 * change the result and the kernel is free to block and vectorise).
 *
 * out[k][oy][ox] = sum over c < in_c, ky < k_h, kx < k_w of
 *     in[c][oy * stride_y + ky * dil_y][ox * stride_x + kx * dil_x] * wt[k][c][ky][kx]
 *
 * Sums wrap modulo 2^32 (two's complement), as a 32-bit accumulator does.
 */
#ifndef DLASIM_KERNELS_CONV_S8_H
#define DLASIM_KERNELS_CONV_S8_H

#include <stddef.h>
#include <stdint.h>

struct dla_conv_geom {
    uint32_t in_w, in_h, in_c;   /* padded input, planar: in[c][y][x] */
    uint32_t out_w, out_h, out_k;
    uint32_t k_w, k_h;           /* kernel width/height */
    uint32_t stride_x, stride_y; /* >= 1 */
    uint32_t dil_x, dil_y;       /* >= 1 */
};

/* Fast kernel: cache-blocked, vectorised (ISA chosen at run time), split over
 * `threads` worker threads (1 = calling thread only).  Returns 0, or
 * DLASIM_ERR_NOMEM / DLASIM_ERR_INVAL. */
int dla_conv_s8(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                int32_t *out, unsigned threads);

/* Weights packed once for the fast kernel (the per-call packing of
 * dla_conv_s8 done ahead): for a layer whose weights stay the same over
 * many calls.  Valid for every geometry with g's in_c, k_w, k_h and
 * out_k (the other sizes of g only steer a speed choice: whether kernels
 * whose weights are in fewer than 4 channels are packed with taps folded
 * into channels) on this CPU's instruction set.  Returns 0,
 * DLASIM_ERR_NOMEM or DLASIM_ERR_INVAL. */
struct dla_conv_wpack;
int dla_conv_wpack_build(const struct dla_conv_geom *g, const int8_t *wt,
                         struct dla_conv_wpack **out);
void dla_conv_wpack_free(struct dla_conv_wpack *w);
/* Bytes the pack holds (for cache budgets). */
size_t dla_conv_wpack_bytes(const struct dla_conv_wpack *w);
/* An upper bound of dla_conv_wpack_bytes for a pack of g's kernels, known
 * before packing (whatever cell format this CPU's pack uses). */
size_t dla_conv_wpack_bytes_bound(const struct dla_conv_geom *g);

/* Worker threads kept between calls: a team (common/team.h), owned by the
 * caller; one call at a time per team. */
struct dla_team;

/* dla_conv_s8 with weights packed by dla_conv_wpack_build (same results,
 * bit for bit), on up to `threads` threads: the team's if pool is not NULL,
 * else threads created for the call.  DLASIM_ERR_INVAL if w was packed for
 * another kernel shape (in_c, k_w, k_h, out_k). */
int dla_conv_s8_packed(const struct dla_conv_geom *g, const int8_t *in,
                       const struct dla_conv_wpack *w, int32_t *out, unsigned threads,
                       struct dla_team *pool);

/* The padded input of g described in place instead of as a planar cube:
 * the elements (c, y, x) with y0 <= y < y1 and x0 <= x < x1 are at
 * data + (y - y0) * line_stride + c * ch_stride + (x - x0); every other
 * element of the in_w x in_h x in_c input is `pad`.  (CSC's view of the
 * lines CDMA put in CBUF: the kernel pads while it packs, so no padded
 * copy is made.)  With `atoms` = 8 the elements are the memory's 8-byte
 * atoms instead: (c, y, x) at data + (c / 8) * ch_stride + (y - y0) *
 * line_stride + (x - x0) * 8 + c % 8, which only the layers
 * dla_conv_src_atoms_takes accepts may be given. */
struct dla_conv_src {
    const int8_t *data;
    size_t ch_stride, line_stride;
    uint32_t x0, x1, y0, y1;
    int8_t pad;
    uint32_t atoms;            /* 0: channel rows; 8: atoms of 8 channels */
};

/* Whether dla_conv_s8_packed_src takes src's atoms for g: whole atoms
 * (in_c a multiple of 8), a data window inside the padded input, and
 * lines and surfaces that do not overlap (line_stride >= (x1 - x0) * 8,
 * ch_stride >= (y1 - y0) * line_stride); any kernel, stride, dilation and
 * padding.  The packed cells are the atoms' halves or quarters, with no
 * transposition (a 1x1 layer whose window is the whole input packs a
 * whole plane at a time). */
int dla_conv_src_atoms_takes(const struct dla_conv_geom *g, const struct dla_conv_src *src);

/* dla_conv_s8_packed on an input given by src (same results, bit for bit,
 * as on the padded planar cube src describes). */
int dla_conv_s8_packed_src(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                           const struct dla_conv_wpack *w, int32_t *out, unsigned threads,
                           struct dla_team *pool);

/* src seen from padded input row ys on, for n_rows rows (the rows of a
 * band of output rows): the data rows among them, from the band's row 0. */
struct dla_conv_src dla_conv_src_rows(const struct dla_conv_src *src, uint32_t ys,
                                      uint32_t n_rows);

/* Output rows [y0, y1) of dla_conv_s8_packed_src(g, src, w) into out as a
 * planar cube of their own, out[k][y - y0][x] (same values, bit for bit),
 * on the calling thread: a band of a layer computed while its consumer
 * takes the band.  DLASIM_ERR_INVAL for an empty or out-of-range band. */
int dla_conv_s8_packed_src_rows(const struct dla_conv_geom *g, const struct dla_conv_src *src,
                                const struct dla_conv_wpack *w, uint32_t y0, uint32_t y1,
                                int32_t *out);

/* A pack of w's kernels for inputs with negative codes, where w keeps U8
 * cells (AVX2: the U8 tiles need non-negative inputs, and a call on such
 * an input converts w's cells to P16 ones for the call): the P16 cells made
 * once (same results, bit for bit).  *out is NULL where w is not U8.
 * g as for dla_conv_wpack_build, wt the same planar weights w came from.
 * Returns 0, DLASIM_ERR_NOMEM or DLASIM_ERR_INVAL. */
int dla_conv_wpack_build_signed(const struct dla_conv_geom *g, const int8_t *wt,
                                const struct dla_conv_wpack *w, struct dla_conv_wpack **out);
/* 1 if w's cells take inputs with negative codes as they are (Q8, P16: no
 * signed pack is ever needed, so no input needs dla_conv_src_nonneg), 0 for
 * U8 cells. */
int dla_conv_wpack_takes_signed(const struct dla_conv_wpack *w);
/* 1 if w holds weights for the atoms tiles (dense 1x1 kernels on AVX-512
 * VNNI: dla_conv_s8_packed_src runs them on an input of atoms whose window
 * is the whole input, lines back to back), else 0. */
int dla_conv_wpack_has_atoms(const struct dla_conv_wpack *w);
/* 1 if w holds weights for the k-lanes tiles (deep dense layers of few
 * output pixels, out_k a multiple of 32, AVX-512 VNNI), else 0. */
int dla_conv_wpack_has_klanes(const struct dla_conv_wpack *w);
/* 1 if the input src describes (data and pad) has no negative code, 0 if
 * it may have one (the scan also reads the bytes between a line's
 * channels): a call with a U8 pack on such an input converts its cells. */
int dla_conv_src_nonneg(const struct dla_conv_geom *g, const struct dla_conv_src *src);

/* Threads worth giving a convolution of `macs` multiply-adds at
 * `macs_per_s` per thread (at most `threads`, at least 1): each must get a
 * share of CONV_MIN_SHARE_S of work when its thread is created for the
 * call, CONV_KEPT_SHARE_S when it is a kept team's worker (kept != 0;
 * 150 and 3 us today, conv_s8.c).  Fewer than 2 shares: 1. */
unsigned dla_conv_split_threads(double macs, double macs_per_s, unsigned threads, int kept);

/* Plain straightforward reference (for tests and `make bench`). */
void dla_conv_s8_ref(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                     int32_t *out);

/* 0 if the kernels can run g (windows inside the input, sizes that fit
 * memory), or the DLASIM_ERR_* the fast kernel would return. */
int dla_conv_geom_check(const struct dla_conv_geom *g);

/* Name of the instruction set the fast kernel selected ("avx512vnni", "avx2", "generic"). */
const char *dla_conv_s8_isa(void);

#endif
