/*
 * Float values to int8 codes the way the model's input enters the device
 * (dlasim_model_run): x / scale rounded to nearest with halves away from
 * zero, plus the tensor's code of 0 (`zero`: a pre-quantized model's affine
 * activations, compiler/ir.h; 0 otherwise), saturated to [-128, 127].  Vectorized where the CPU allows; the same
 * bits as the per-element expression (tests/unit/test_quant_io.c).
 */
#ifndef DLASIM_COMPILER_QUANT_IO_H
#define DLASIM_COMPILER_QUANT_IO_H

#include <stddef.h>
#include <stdint.h>

#include "arith/lanes.h"

/* q[i] = saturate(round_half_away(x[i] * inv) + zero) for i < n, zero in
 * [-128, 127]; returns nonzero when some x[i] is NaN or infinite (q is then
 * not meaningful). */
int dlc_quantize_s8(const float *x, int8_t *q, size_t n, float inv, int zero);
/* dlc_quantize_s8 on lane variant isa (AVX-512, AVX2, else SSE2/scalar;
 * the caller checks dla_lanes_supported): the same codes on each. */
int dlc_quantize_s8_isa(enum dla_lanes_isa isa, const float *x, int8_t *q, size_t n, float inv,
                        int zero);

/* Channel rows into atoms: dst[x * atom + i] = rows[i * row_stride + x]
 * for channels i < n (n <= 8) and pixels x < w, 0 for n <= i < 8; an
 * atom's bytes past its first 8 are left as they are.  The input's feature layout (an atom holds a pixel's
 * channels) from per-channel rows, eight channels of sixteen pixels a
 * transpose where the CPU has SSE2. */
void dlc_rows_to_atoms(const int8_t *rows, size_t row_stride, unsigned n, size_t w, size_t atom,
                       uint8_t *dst);

/* The index of the first NaN or infinite value of x[0, n); -1 if none. */
int64_t dlc_first_nonfinite(const float *x, size_t n);

#endif
