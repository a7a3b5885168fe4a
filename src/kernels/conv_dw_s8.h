/*
 * Depthwise convolutions as the convolution pipeline sees them.  The
 * compiler lowers a depthwise (grouped) convolution densely, a block of
 * Atomic-M channels at a time, with zero weights outside the diagonal
 * (src/compiler/lower_conv.c), and the hardware multiplies those zeros
 * like any other weight.  Their sums are the sums of the diagonal products
 * alone, so a layer whose kernels are diagonal is computed here with one
 * channel per kernel: the same int32 results as dla_conv_s8, a k_w x k_h
 * window of one input plane per output instead of in_c of them.
 */
#ifndef DLASIM_KERNELS_CONV_DW_S8_H
#define DLASIM_KERNELS_CONV_DW_S8_H

#include "kernels/conv_s8.h"

/* Does kernel k of the dense planar weights wt[k][c][ky][kx] read input
 * channel k only (out_k == in_c, every other channel's weights zero)?
 * Stops at the first weight off the diagonal. */
int dla_conv_s8_is_depthwise(const struct dla_conv_geom *g, const int8_t *wt);

/* dla_conv_s8 for weights dla_conv_s8_is_depthwise accepts:
 * out[k][oy][ox] = sum over (ky, kx) of in[k][oy * stride_y + ky * dil_y]
 * [ox * stride_x + kx * dil_x] * wt[k][k][ky][kx], exact (at most 2^17
 * products of 2^14 per sum, as the callers guarantee for dla_conv_s8). */
void dla_conv_dw_s8(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                    int32_t *out);
/* The output channels [k0, k1) of dla_conv_dw_s8 alone (one thread's share;
 * they read and write nothing the other channels do). */
void dla_conv_dw_s8_channels(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                             int32_t *out, size_t k0, size_t k1);

/* The diagonal of the dense planar weights wt that dla_conv_s8_is_depthwise
 * accepts: diag[k][ky][kx] = wt[k][k][ky][kx] (out_k x k_h x k_w bytes). */
void dla_conv_dw_s8_diagonal(const struct dla_conv_geom *g, const int8_t *wt, int8_t *diag);
/* dla_conv_dw_s8_channels from the diagonal alone (dla_conv_dw_s8_diagonal):
 * the same values; a 3x3x8 block's kernels are 72 bytes instead of 576, two
 * cache lines to bring in where a small layer's weights are cold. */
void dla_conv_dw_s8_diag_channels(const struct dla_conv_geom *g, const int8_t *in,
                                  const int8_t *diag, int32_t *out, size_t k0, size_t k1);

/* A depthwise layer's input as the lines it is read from (conv_s8.h
 * dla_conv_src: padded by PAD_VALUE outside its data rows and columns)
 * in a buffer [lo, hi) that whole-vector loads may read anywhere in. */
struct dla_dw_src {
    struct dla_conv_src src;
    const int8_t *lo, *hi;
};
/* Whether dla_conv_dw_s8_src_channels takes g with its input from src
 * (channel rows, src.atoms 0 -- AVX2: x stride 1, up to 7x7, padded rows
 * of at most 16 bytes; AVX-512 VNNI + VBMI also any x stride, windows up
 * to 4 wide and 8 high, channel rows of up to 127 bytes, up to 128 output
 * columns; the memory's atoms, src.atoms 8 -- AVX-512 VNNI + VBMI: any
 * width, windows up to 4 wide and 8 high that reach at most 15 pixels
 * across and 8 lines down); else the caller makes the padded planar copy.  dla_conv_dw_s8_src_channels_isa computes
 * every geometry this takes with every ISA the CPU has (the ISAs whose
 * rows do not take it one product at a time). */
int dla_conv_dw_s8_src_takes(const struct dla_conv_geom *g, const struct dla_conv_src *src);
/* dla_conv_dw_s8_diag_channels on the padded planar cube `in` describes,
 * read from its lines: the same values, without the copy. */
void dla_conv_dw_s8_src_channels(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                                 const int8_t *diag, int32_t *out, size_t k0, size_t k1);
/* Output rows [y0, y1) of every channel of dla_conv_dw_s8_src_channels into
 * out as a planar cube of their own, out[k][y - y0][x] (the same values),
 * on the calling thread: a band of a depthwise layer, computed while its
 * consumer takes the band (src/sim/nvdla/csc.c dla_conv_band_rows).
 * DLASIM_ERR_INVAL for an empty or out-of-range band, or one whose rows
 * dla_conv_dw_s8_src_takes does not take. */
int dla_conv_dw_s8_src_rows(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                            const int8_t *diag, uint32_t y0, uint32_t y1, int32_t *out);

/* The instruction sets of the depthwise rows: the public calls above take
 * dla_conv_dw_s8_isa_best(); the _isa forms one the CPU supports (tests
 * run each against the reference).  Geometries a vector ISA's rows do not
 * take (x strides past 2, windows past 7x7) take the scalar loop. */
enum dla_dw_isa {
    DLA_DW_SCALAR = 0,
    DLA_DW_AVX2 = 1,
    DLA_DW_AVX512 = 2, /* AVX-512BW: the paired rows at zmm width */
    DLA_DW_VNNI = 3,   /* AVX-512 VNNI + VBMI: four taps a vpdpbusd */
    DLA_DW_ISA_COUNT = 4
};
int dla_conv_dw_s8_isa_supported(enum dla_dw_isa isa);
enum dla_dw_isa dla_conv_dw_s8_isa_best(void);
void dla_conv_dw_s8_diag_channels_isa(const struct dla_conv_geom *g, const int8_t *in,
                                      const int8_t *diag, int32_t *out, size_t k0, size_t k1,
                                      enum dla_dw_isa isa);
/* isa: a vector one (dla_conv_dw_s8_src_takes needs AVX2). */
void dla_conv_dw_s8_src_channels_isa(const struct dla_conv_geom *g, const struct dla_dw_src *in,
                                     const int8_t *diag, int32_t *out, size_t k0, size_t k1,
                                     enum dla_dw_isa isa);

#endif
