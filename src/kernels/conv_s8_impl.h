/*
 * Internals of the int8 convolution kernel (src/kernels/conv_s8.c), shared
 * with the per-ISA micro-kernels (src/kernels/conv_s8_x86.c) and with the
 * unit test, which runs every instruction set this CPU supports.
 *
 * Packed formats (built per call in conv_s8.c, read by the micro-kernels):
 *
 *   A "cell" is 4 bytes holding a group of input channels of one pixel:
 *     Q8  - 4 channels as unsigned bytes x + 128 (AVX-512 VNNI vpdpbusd:
 *           u8 x s8; the +128 bias is removed by starting every accumulator
 *           at -128 * sum(weights of that output channel), exact mod 2^32);
 *     P16 - 2 channels as int16 (AVX2 vpmaddwd and the generic C path).
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
 *   Packed weights: [k][q] cells, the same channel grouping as the input;
 *   absent channels are zero.
 */
#ifndef DLASIM_KERNELS_CONV_S8_IMPL_H
#define DLASIM_KERNELS_CONV_S8_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/conv_s8.h"

enum dla_conv_isa {
    DLA_CONV_ISA_GENERIC = 0,
    DLA_CONV_ISA_AVX2 = 1,
    DLA_CONV_ISA_AVX512VNNI = 2,
    DLA_CONV_ISA_COUNT = 3
};

/* One micro-kernel call: mr (<= the ISA's MR) output channels x NR
 * consecutive virtual pixels, over all nq reduction steps. */
struct dla_conv_tile {
    const unsigned char *in; /* packed input, already offset to pixel n0 */
    const ptrdiff_t *qoff;   /* byte offset of the cell of step q */
    size_t nq;               /* reduction steps */
    const unsigned char *w;  /* packed weights of the first output channel */
    size_t wrow;             /* bytes from one output channel's weights to the next */
    const int32_t *init;     /* accumulator start value of each row */
    unsigned mr;             /* rows to compute, 1..MR */
    int32_t *acc;            /* result: acc[m * NR + j], m < mr, j < NR */
};

typedef void (*dla_conv_tile_fn)(const struct dla_conv_tile *t);

/* Micro-kernels of conv_s8_x86.c (only on x86-64 with GCC/Clang). */
#define DLA_CONV_AVX2_MR 4
#define DLA_CONV_AVX2_NR 16
#define DLA_CONV_VNNI_MR 8
#define DLA_CONV_VNNI_NR 48
#if defined(__x86_64__) && defined(__GNUC__)
void dla_conv_tile_avx2(const struct dla_conv_tile *t);
void dla_conv_tile_vnni(const struct dla_conv_tile *t);
#endif

/* Name of an instruction set ("generic", "avx2", "avx512vnni"). */
const char *dla_conv_isa_name(enum dla_conv_isa isa);

/* 1 if this CPU (and OS) can run `isa`, else 0. */
int dla_conv_isa_supported(enum dla_conv_isa isa);

/* The fast kernel with a given instruction set (for tests and benchmarks);
 * DLASIM_ERR_UNSUPPORTED if the CPU cannot run it.  Unlike dla_conv_s8(),
 * which starts fewer threads for small layers, this one uses
 * min(threads, tiles) threads whatever the size, so that tests reach the
 * split on small shapes. */
int dla_conv_s8_with_isa(enum dla_conv_isa isa, const struct dla_conv_geom *g,
                         const int8_t *in, const int8_t *wt, int32_t *out,
                         unsigned threads);

#endif
