/*
 * Internals of the int8 convolution kernel (src/kernels/conv_s8.c), shared
 * with the x86 micro-kernels (src/kernels/conv_s8_x86.c) and with the unit
 * test and benchmark, which run every instruction set and tile shape this
 * CPU supports.
 *
 * Packed formats (built per call in conv_s8.c, read by the micro-kernels):
 *
 *   A "cell" is 4 bytes holding a group of input channels of one pixel:
 *     Q8  - 4 channels as unsigned bytes x + 128 (AVX-512 VNNI vpdpbusd is
 *           u8 x s8; the +128 bias is removed by starting every accumulator
 *           at -128 * sum(weights of that output channel), exact mod 2^32);
 *     P16 - 2 channels as int16 (AVX2 vpmaddwd and the generic C path);
 *     U8  - 4 channels as the plain bytes of an input with no negative
 *           code (AVX2 vpmaddubsw, chosen per call after a check of the
 *           whole padded input; any negative code: P16 instead).
 *
 *   Packed input: one plane per (stride phase, channel group).  A plane is
 *   a virtual image `vw` cells wide whose cell (y', x') holds the input at
 *   (y' * stride_y + phase_y, x' * stride_x + phase_x).  Output pixels are
 *   numbered n = oy * vw + ox (ox < vw; ox >= out_w are junk lanes that are
 *   never stored), so for every kernel tap the cells needed by consecutive
 *   n are consecutive in one plane: a vector load, whatever the stride or
 *   dilation.
 *
 *   Reduction step q = group * taps + tap; qoff[q] is the byte offset of
 *   the cell read by pixel n = 0 at step q.
 *
 *   Packed weights: [k][q] cells (same channel grouping as the input;
 *   absent channels are zero).  Q8 and U8 weight cells hold the plain int8
 *   values.  On AVX2 weights packed once are U8 cells (1 byte a weight);
 *   a call whose input has a negative code converts them to P16 cells.
 */
#ifndef DLASIM_KERNELS_CONV_S8_IMPL_H
#define DLASIM_KERNELS_CONV_S8_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/conv_s8.h"

/* The x86-64 micro-kernels and SIMD packing; define DLASIM_CONV_GENERIC_ONLY
 * to build the portable C path alone (as on other CPUs), e.g. to test it. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(DLASIM_CONV_GENERIC_ONLY)
#define DLA_CONV_X86 1
#endif
#if defined(__SSE2__) && !defined(DLASIM_CONV_GENERIC_ONLY)
#define DLA_CONV_SSE2 1
#endif

enum dla_conv_isa {
    DLA_CONV_ISA_GENERIC = 0,
    DLA_CONV_ISA_AVX2 = 1,
    DLA_CONV_ISA_AVX512VNNI = 2,
    DLA_CONV_ISA_COUNT = 3
};

/* Output pixels of a tile that are real: lanes j .. j+len-1 of every row go
 * to out + row * ostride + off .. + len - 1. */
struct dla_conv_run {
    uint32_t j, len;
    size_t off;
};

/* One micro-kernel call: mr output channels x NR consecutive virtual pixels
 * (NR of the tile shape), over all nq reduction steps; stores the real
 * pixels to the output. */
struct dla_conv_tile {
    const unsigned char *in; /* packed input, already offset to pixel n0 */
    const ptrdiff_t *qoff;   /* byte offset of the cell of step q */
    size_t nq;               /* reduction steps */
    const unsigned char *w;  /* packed weights of the first output channel */
    size_t wrow;             /* bytes from one output channel's weights to the next */
    const int32_t *init;     /* accumulator start value of each row */
    unsigned mr;             /* rows to compute, 1 .. MR of the shape */
    const struct dla_conv_run *runs;
    unsigned nruns;
    int32_t *out;            /* output plane of the first channel of the tile */
    size_t ostride;          /* int32s from one output channel plane to the next */
    /* U8 tiles: NULL (every step alone: the avx2u8 tiles) or (the avx2u8p
     * tiles) the schedule of paired steps:
     * entries e0, s0, e1, s1, ... (relative to step 0): steps from the
     * previous s (0 at first) up to e_i go in pairs whose int16 pair sums
     * may be added before widening (even count), steps from e_i up to s_i
     * one at a time; it ends with the first s_i >= nq */
    const uint32_t *sched;
};

typedef void (*dla_conv_tile_fn)(const struct dla_conv_tile *t);

/*
 * A 1x1 layer straight on the memory's atoms (8 channels of a pixel, 8
 * bytes; the input of a layer whose window is its whole input, lines back
 * to back), AVX-512 VNNI, no packing of the input: a 64-byte load is 8
 * pixels' atoms of one surface, the signed operand of vpdpbusd, and each
 * output channel's 8 weights of that surface, + 128 (unsigned), are one
 * 64-bit broadcast.  Lane 2i then sums channels 0-3 of pixel i, lane 2i + 1
 * channels 4-7, each (w + 128) x = w x + 128 x: the pair's sum less
 * 128 x (the pixel's channel sum, `corr`, found once a call) is the
 * convolution, exact mod 2^32 as the reference.  Tiles: up to 8 output
 * channels x 24 pixels (24 accumulators).
 */
struct dla_conv_atoms_tile {
    const int8_t *in;       /* the tile's first pixel's atom in surface 0 */
    size_t surf;            /* bytes from a surface to the next */
    size_t groups;          /* surfaces (8 channels each) */
    const unsigned char *w; /* the k block's weights, [group][row][8] (w + 128) */
    const int32_t *corr;    /* the tile's first pixel's lane pair (-128 x a lane's sum) */
    int32_t *out;           /* output channel plane of row 0, at the tile's first pixel */
    size_t ostride;         /* int32s from an output channel plane to the next */
    unsigned mr;            /* rows to store, 1 .. 8 */
    unsigned n;             /* pixels, 1 .. DLA_CONV_ATOMS_NR */
};
#define DLA_CONV_ATOMS_NR 24 /* pixels of an atoms tile */
#define DLA_CONV_ATOMS_MR 8  /* output channels of an atoms tile */

/*
 * Output channels in the lanes (the "k-lanes" tiles, AVX-512 VNNI, Q8
 * cells): 2 vectors of 16 output channels x up to 12 output pixels, each
 * pixel's input cell of a step broadcast from the packed planes.  The
 * pixel tiles leave lanes empty where a layer's pixels are few (7x7: 49
 * pixels in 64 lanes of the 8x32 tiles, 14x14: 196 in 224); a row of
 * accumulators here is a pixel, so only the last tile's missing rows are
 * not computed at all.  Weights [k / 16][q][k % 16] (64 bytes a step and
 * block), the output stored through a scatter of 16 channel planes.
 */
struct dla_conv_klanes_tile {
    const unsigned char *in; /* packed input (struct dla_conv_tile in, at pixel 0) */
    const ptrdiff_t *qoff;   /* byte offset of the cell of step q */
    size_t nq;
    const unsigned char *w;  /* the tile's first block of 16 channels' weights */
    size_t wblock;           /* bytes from a block's weights to the next (nq * 64) */
    const int32_t *init;     /* the 32 channels' start values (-128 x their weight sums) */
    const uint32_t *cell;    /* each pixel's cell offset in a plane (virtual pixel x 4) */
    const uint32_t *opix;    /* each pixel's offset in an output plane */
    unsigned n;              /* pixels, 1 .. DLA_CONV_KLANES_MR */
    unsigned nk;             /* channels to store, 1 .. 32 */
    int32_t *out;            /* the first channel's output plane */
    size_t ostride;          /* int32s from an output channel plane to the next */
};
#define DLA_CONV_KLANES_MR 12 /* pixels of a k-lanes tile */
#define DLA_CONV_KLANES_K 32  /* output channels of a k-lanes tile */

/* Tile shapes of the x86 micro-kernels: rows (output channels) x pixels.
 * Wider tiles run faster per pixel but waste more lanes in the last pixel
 * tile of small images, so each ISA has three and each call picks one. */
#define DLA_CONV_SHAPES 3
#define DLA_CONV_NR_MAX 48
#define DLA_CONV_VNNI_MR 8   /* x 48, 32 or 16 pixels */
#define DLA_CONV_AVX2_MR0 4  /* x 16 pixels */
#define DLA_CONV_AVX2_MR1 8  /* x 8 pixels */
#define DLA_CONV_AVX2_MR2 6  /* x 16 pixels */

#define DLA_CONV_GEMV_K 8  /* output channels a vector of the one-pixel kernel */
#define DLA_CONV_GEMV_KB 4 /* vectors a call */
/* Real pixels up to which a tile runs as its shape's dot tile.  Each pixel
 * is gathered again at every k block, so the dot tile's cost grows with
 * its pixels and the half tile's does not: on one pixel (a 7x7 output's
 * last) the dot tiles took 1.86 M instructions an image where the half
 * tiles took 3.07 M (callgrind, 7x7 160 -> 960 -> 160 six times); four
 * (a 14x14 output's last) are left to the half tile, by those counts
 * (not measured). */
#define DLA_CONV_DOT_PIXELS 2

#if defined(DLA_CONV_X86)
void dla_conv_tile_vnni_8x48(const struct dla_conv_tile *t);
void dla_conv_tile_vnni_8x32(const struct dla_conv_tile *t);
void dla_conv_tile_vnni_8x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2_6x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2_4x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2_8x8(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8_6x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8_4x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8_8x8(const struct dla_conv_tile *t);
/* The U8 tiles after t->sched (paired steps; t->sched not NULL). */
void dla_conv_tile_avx2u8p_6x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8p_4x16(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8p_8x8(const struct dla_conv_tile *t);
/* The 6x16 and 4x16 tiles over their first 8 pixels (struct conv_shape
 * half in conv_s8.c): P16, U8 and U8 after t->sched. */
void dla_conv_tile_avx2_6x8(const struct dla_conv_tile *t);
void dla_conv_tile_avx2_4x8(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8_6x8(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8_4x8(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8p_6x8(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8p_4x8(const struct dla_conv_tile *t);
/* A tile with at most DLA_CONV_DOT_PIXELS real pixels (struct conv_shape
 * dot): each pixel's rows as dot products over the steps, any t->mr up to
 * 8; P16 and U8 cells (U8 with or without t->sched: the sum is the same). */
void dla_conv_tile_avx2_dot(const struct dla_conv_tile *t);
void dla_conv_tile_avx2u8_dot(const struct dla_conv_tile *t);
/* One output pixel (fully connected layers), output channels in the lanes:
 * out[k] = sum over q of U8 input cell x[q] . weight cell q of channel k,
 * for nk <= DLA_CONV_GEMV_K * DLA_CONV_GEMV_KB channels whose cells wk
 * holds as [k / 8][q][k % 8] (conv_s8.c wpack_fill_wk). */
void dla_conv_gemv_avx2u8(const unsigned char *x, const unsigned char *wk, size_t nq,
                          const int32_t *init, int32_t *out, unsigned nk);
/* How many leading bytes of s[0, n) were seen to hold no negative code,
 * 128 at a time: n rounded down to 128 when none does, else where the first
 * 128-byte block holding one starts (the U8 path's input check). */
size_t dla_conv_nonneg_prefix_avx2(const int8_t *s, size_t n);
/* The same on Q8 cells (biased input, AVX-512 VNNI with VL: vpdpbusd on
 * ymm).  Both: each channel's sum from its start value init[k] (NULL: 0). */
void dla_conv_gemv_vnni(const unsigned char *x, const unsigned char *wk, size_t nq,
                        const int32_t *init, int32_t *out, unsigned nk);
/* Q8 weight cells of `groups` full channel groups (taps <= 16) with
 * AVX-512 VBMI byte permutes; returns the sum of the weights packed. */
int64_t dla_conv_pack_q8_vbmi(unsigned char *d, const int8_t *s, size_t groups, size_t taps);
/* Byte cells of `rows` rows of w (4..32) cells, each row's four channel
 * rows back to back at s + y * step, into d (4 * w bytes a row); flip:
 * ^ 0x80 (Q8).  AVX-512 VBMI. */
void dla_conv_cells_rows_vbmi(unsigned char *d, const int8_t *s, size_t step, size_t w,
                              size_t rows, int flip);
/* The cells of n consecutive 8-byte atoms (8 channels of a pixel each) for
 * every channel group an atom holds, group i's into dst[i], in chunks of 8
 * atoms (AVX2); returns the atoms done (n rounded down to 8).  p16: 4
 * groups of P16 cells (2 channels as int16), else 2 groups of byte cells
 * (4 channels; flip: ^ 0x80, Q8). */
size_t dla_conv_atoms_cells_avx2(unsigned char *const *dst, const int8_t *atoms, size_t n,
                                 int p16, int flip);
/* The byte cells x < n of one channel group from atoms, cell x from the
 * atom x * sx atoms on (sx 1 or 2; 0 cells for others), the group's four
 * bytes at s in the first, into d in chunks of 8 cells (AVX2; flip: ^ 0x80,
 * Q8); returns the cells done. */
size_t dla_conv_atom_group_cells_avx2(unsigned char *d, const int8_t *s, size_t n, size_t sx,
                                      int flip);
/* The lane pairs' corrections of n pixels' atoms over `groups` surfaces
 * `surf` bytes apart (struct dla_conv_atoms_tile corr): corr[2i + h] = -128
 * x the sum of channels 4h..4h+3 of pixel i over every surface; corr holds
 * n rounded up to 8 pixels (AVX-512 VNNI). */
void dla_conv_atoms_corr_vnni(const int8_t *in, size_t surf, size_t groups, size_t n,
                              int32_t *corr);
/* One atoms tile (struct dla_conv_atoms_tile; AVX-512 VNNI). */
void dla_conv_atoms_tile_vnni(const struct dla_conv_atoms_tile *t);
/* One k-lanes tile (struct dla_conv_klanes_tile; AVX-512 VNNI). */
void dla_conv_klanes_tile_vnni(const struct dla_conv_klanes_tile *t);
#endif

/* Name of an instruction set ("generic", "avx2", "avx512vnni"). */
const char *dla_conv_isa_name(enum dla_conv_isa isa);

/* 1 if this CPU (and OS) can run `isa`, else 0. */
int dla_conv_isa_supported(enum dla_conv_isa isa);


#define DLA_CONV_NO_VBMI 1u /* flags: pack Q8 weights without VBMI */
#define DLA_CONV_NO_U8 2u   /* flags: no U8 cells (AVX2: always vpmaddwd on P16) */
#define DLA_CONV_NO_FOLD 4u /* flags: never fold taps into channels (wpack) */
#define DLA_CONV_FOLD_STEPS 8u /* flags: fold for the fewest steps, whatever the copy costs */
#define DLA_CONV_NO_ATOMS 16u /* flags: no weights for the atoms tiles (wpack) */
#define DLA_CONV_NO_KLANES 32u /* flags: no weights for the k-lanes tiles (wpack) */

struct dla_conv_opts {
    enum dla_conv_isa isa;
    int shape;        /* tile shape 0 .. DLA_CONV_SHAPES-1 of the ISA, -1 = best */
    unsigned flags;
    unsigned threads; /* used as given (0 = 1), capped by the tile count */
};

/* The fast kernel with explicit choices (for tests and benchmarks).  Unlike
 * dla_conv_s8(), which starts fewer threads for small layers, this uses
 * min(threads, tiles) threads whatever the size.  DLASIM_ERR_UNSUPPORTED if
 * the CPU cannot run o->isa. */
int dla_conv_s8_opts(const struct dla_conv_opts *o, const struct dla_conv_geom *g,
                     const int8_t *in, const int8_t *wt, int32_t *out);

/* Packed weights for an explicit instruction set (flags: DLA_CONV_NO_VBMI;
 * DLA_CONV_NO_U8: P16 cells instead of U8 on AVX2, so the packed kernel
 * always runs vpmaddwd; DLA_CONV_NO_FOLD, DLA_CONV_FOLD_STEPS: kernels
 * whose weights are in fewer channels than a cell packed as they are, or
 * folded for the fewest reduction steps, see conv_s8.c choose_fold),
 * and the packed kernel with an explicit tile shape (-1 = best) and thread
 * count used as given: for tests and benchmarks. */
int dla_conv_wpack_build_isa(const struct dla_conv_geom *g, const int8_t *wt,
                             enum dla_conv_isa isa, unsigned flags, struct dla_conv_wpack **out);
int dla_conv_s8_packed_opts(const struct dla_conv_geom *g, const int8_t *in,
                            const struct dla_conv_wpack *w, int32_t *out, int shape,
                            unsigned threads, struct dla_team *pool);

/* Pairs of reduction steps of w (summed over its output channels) that
 * AVX2's U8 tiles may add in int16 (conv_s8_x86.c, paired steps); 0 for
 * packs of other cell formats: for tests. */
size_t dla_conv_wpack_pairs(const struct dla_conv_wpack *w);

/* 1 if dla_conv_s8_opts with this ISA and flags would run g on U8 cells
 * (AVX2 vpmaddubsw: no negative code in the input), else 0: for tests. */
int dla_conv_takes_u8(enum dla_conv_isa isa, unsigned flags, const struct dla_conv_geom *g,
                      const int8_t *in);

#endif
