/*
 * INT16 convolution kernel (see conv_s16.h).  Weight-stationary loops: for
 * each kernel tap the whole output plane of one kernel accumulates the
 * shifted input plane times that weight, so the innermost loop runs over
 * output columns with unit stride in the output (and in the input when
 * stride_x is 1).  Zero weights are skipped: they add nothing.
 */
#include "kernels/conv_s16.h"

#include <string.h>

/* Output row `orow` of one kernel += weight * input row samples. */
static void tap_row(int64_t *orow, const int16_t *irow, uint32_t out_w, uint32_t stride_x,
                    int32_t w)
{
    if (stride_x == 1) {
        for (uint32_t ox = 0; ox < out_w; ox++) {
            orow[ox] += (int32_t)irow[ox] * w;
        }
        return;
    }
    for (uint32_t ox = 0; ox < out_w; ox++) {
        orow[ox] += (int32_t)irow[(size_t)ox * stride_x] * w;
    }
}

void dla_conv_s16(const struct dla_conv_geom *g, const int16_t *in, const int16_t *wt,
                  int64_t *out)
{
    const size_t in_plane = (size_t)g->in_w * g->in_h;
    const size_t out_plane = (size_t)g->out_w * g->out_h;
    const size_t taps = (size_t)g->k_w * g->k_h;
    memset(out, 0, out_plane * g->out_k * sizeof(*out));
    for (uint32_t k = 0; k < g->out_k; k++) {
        int64_t *o = out + k * out_plane;
        for (uint32_t c = 0; c < g->in_c; c++) {
            const int16_t *plane = in + c * in_plane;
            const int16_t *kw = wt + ((size_t)k * g->in_c + c) * taps;
            for (uint32_t ky = 0; ky < g->k_h; ky++) {
                for (uint32_t kx = 0; kx < g->k_w; kx++) {
                    int32_t w = kw[(size_t)ky * g->k_w + kx];
                    if (w == 0) {
                        continue;
                    }
                    for (uint32_t oy = 0; oy < g->out_h; oy++) {
                        size_t y = (size_t)oy * g->stride_y + (size_t)ky * g->dil_y;
                        const int16_t *irow = plane + y * g->in_w + (size_t)kx * g->dil_x;
                        tap_row(o + (size_t)oy * g->out_w, irow, g->out_w, g->stride_x, w);
                    }
                }
            }
        }
    }
}
