/*
 * The INT16 convolution datapath kernel: exact integer convolution of a
 * padded int16 cube with int16 kernels into 64-bit sums.  What CSC+CMAC
 * compute for one INT16 layer (ref: nv_full cmod/cmac calculation_int16:
 * int16 data x int16 weight summed over the Atomic-C channels of a MAC
 * cell; CACC adds the cells' results in 48 bits).  Products are below
 * 2^30 in magnitude and a kernel holds at most 2^17 int16 elements
 * (BYTE_PER_KERNEL is 18 bits), so every sum is exact in 64 bits.
 *
 * out[k][oy][ox] = sum over c < in_c, ky < k_h, kx < k_w of
 *     in[c][oy * stride_y + ky * dil_y][ox * stride_x + kx * dil_x] * wt[k][c][ky][kx]
 */
#ifndef DLASIM_KERNELS_CONV_S16_H
#define DLASIM_KERNELS_CONV_S16_H

#include <stdint.h>

#include "kernels/conv_s8.h" /* struct dla_conv_geom */

void dla_conv_s16(const struct dla_conv_geom *g, const int16_t *in, const int16_t *wt,
                  int64_t *out);

#endif
