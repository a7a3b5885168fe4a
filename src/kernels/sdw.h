/*
 * Depthwise convolution in float for the float reference executor
 * (src/compiler/float_exec.c): one input and one output channel per group,
 * MobileNet's 3x3 layers.
 *
 *   y[k][oy][ox] = bias[k] + sum over (ky, kx), in that order, of
 *                  w[k][ky][kx] * x[k][oy * sy - pt + ky * dy][ox * sx - pl + kx * dx]
 *
 * where taps outside the input are skipped (not added as zeros).  Every
 * output is rounded in exactly that order (a multiply, then an add: no
 * fused multiply-add), whatever the vector width or thread count, so the
 * result is the same bit for bit as a scalar loop over the taps.
 */
#ifndef DLASIM_KERNELS_SDW_H
#define DLASIM_KERNELS_SDW_H

#include "kernels/sgemm.h"

/* g->C channels (g->x: C x H x W), w: C x kh x kw, bias: C floats or NULL
 * (0), y: C x OH x OW; split over up to `threads` threads when large. */
void dla_sdw(const struct dla_sconv_geom *g, const float *w, const float *bias, float *y,
             unsigned threads);

/* dla_sdw on the threads of a team kept by the caller (src/common/team.h),
 * team NULL: the calling thread only, then act (NULL: none) on every
 * output (sgemm.h).  The same bits as dla_sdw then dla_sact_apply. */
struct dla_team;
void dla_sdw_on(struct dla_team *team, const struct dla_sconv_geom *g, const float *w,
                const float *bias, float *y, const struct dla_sact *act);

/* dla_sdw_on with the row loops of variant v (sgemm.h; one the CPU runs:
 * dla_sgemm_supported), for the unit tests: every variant gives the same
 * bits. */
void dla_sdw_variant_on(enum dla_sgemm_variant v, struct dla_team *team,
                        const struct dla_sconv_geom *g, const float *w, const float *bias,
                        float *y, const struct dla_sact *act);

/* The same sums, one tap at a time over whole rows, one thread, no vectors:
 * the reference the tests compare dla_sdw with. */
void dla_sdw_ref(const struct dla_sconv_geom *g, const float *w, const float *bias, float *y);

#endif
