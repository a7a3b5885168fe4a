/*
 * Byte transposes of the convolution pipeline.  An atom holds M elements of
 * consecutive channels of one pixel (NVDLA_MEMORY_ATOMIC_SIZE): CDMA turns
 * a line of atoms into one row per channel (CBUF slices, cbuf.h), CSC turns
 * the weight stream's [position][channel] blocks into planar kernels, SDP
 * turns the planar output of CACC back into atoms.  Each has a plain C form
 * and on x86-64 one with SSE2 unpacks of 8 x 8 (or 8 x 16) byte tiles,
 * compiled in the AVX2 variant of lanes.h (which DLA_LANES_AVX512 runs too).
 */
#ifndef DLASIM_ARITH_ATOMS_H
#define DLASIM_ARITH_ATOMS_H

#include <stddef.h>
#include <stdint.h>

#include "arith/lanes.h"

/* dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols
 * (src and dst must not overlap).  A line of atoms to CBUF rows is src = the
 * atoms (stride M), rows = pixels, cols = channels. */
void dla_transpose_bytes(enum dla_lanes_isa isa, const uint8_t *src, size_t src_stride,
                         size_t rows, size_t cols, uint8_t *dst, size_t dst_stride);

/* dla_transpose_bytes of `lines` lines: line l from src + l *
 * src_line_stride to dst + l * dst_line_stride (a surface of atoms to CBUF
 * rows in one call; lines back to back on both sides let short lines share
 * their tiles' work). */
void dla_transpose_lines(enum dla_lanes_isa isa, const uint8_t *src, size_t src_stride,
                         size_t rows, size_t cols, uint8_t *dst, size_t dst_stride, size_t lines,
                         size_t src_line_stride, size_t dst_line_stride);

/* out[j * m + l] = low byte of planes[l * plane + j] for j < plane, l < m. */
void dla_atoms_from_planes(enum dla_lanes_isa isa, const int32_t *planes, size_t plane,
                           unsigned m, uint8_t *out);

#endif
