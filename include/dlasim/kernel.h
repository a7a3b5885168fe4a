/*
 * dlasim kernels: the int8 direct convolution the simulated CMAC runs on the
 * host (src/kernels), offered on its own to measure it against a plain
 * reference (bench/conv_bench.c, bench/kernel_peak.c) or to use it.
 *
 * Arrays are planar: input [c][y][x] (already padded: every window lies
 * inside it), weights [k][c][ky][kx], output [k][y][x] of int32 sums.
 */
#ifndef DLASIM_KERNEL_H
#define DLASIM_KERNEL_H

#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

struct dlasim_conv_geom {
    uint32_t in_w, in_h, in_c;   /* padded input */
    uint32_t out_w, out_h, out_k;
    uint32_t k_w, k_h;           /* kernel width/height */
    uint32_t stride_x, stride_y; /* >= 1 */
    uint32_t dil_x, dil_y;       /* >= 1 */
};

/* The fast kernel: cache-blocked, vectorised (instruction set chosen at run
 * time), split over `threads` worker threads (1 = the calling thread only).
 * 0, DLASIM_ERR_NOMEM, or DLASIM_ERR_INVAL (a NULL pointer, a zero size or
 * a window outside the input). */
int dlasim_conv_s8(const struct dlasim_conv_geom *g, const int8_t *in, const int8_t *wt,
                   int32_t *out, unsigned threads);

/* The plain reference (one thread, straightforward loops); same checks. */
int dlasim_conv_s8_ref(const struct dlasim_conv_geom *g, const int8_t *in, const int8_t *wt,
                       int32_t *out);

/* The instruction set the fast kernel selected ("avx512vnni", "avx2", "generic"). */
const char *dlasim_conv_s8_isa(void);

/* The instruction sets the fast kernel is built for, numbered from 0: the
 * name of number i ("generic", "avx2", ...), or NULL past the last. */
const char *dlasim_conv_s8_isa_name(unsigned i);

/* The fast kernel forced onto instruction set number i (best tile shape):
 * as dlasim_conv_s8, plus DLASIM_ERR_UNSUPPORTED when this CPU cannot run
 * it and DLASIM_ERR_INVAL for an i past the last. */
int dlasim_conv_s8_on_isa(unsigned i, const struct dlasim_conv_geom *g, const int8_t *in,
                          const int8_t *wt, int32_t *out, unsigned threads);

/* Weights packed once for the fast kernel (the layout its tiles read), for
 * a layer whose weights stay the same across calls: the simulator keeps
 * these per layer.  Same checks as dlasim_conv_s8; free with
 * dlasim_conv_wpack_free. */
struct dlasim_conv_wpack;
int dlasim_conv_wpack_build(const struct dlasim_conv_geom *g, const int8_t *wt,
                            struct dlasim_conv_wpack **out);
void dlasim_conv_wpack_free(struct dlasim_conv_wpack *w);

/* Threads kept across calls (instead of made and joined per call). */
struct dlasim_conv_pool;
int dlasim_conv_pool_create(unsigned threads, struct dlasim_conv_pool **out);
void dlasim_conv_pool_destroy(struct dlasim_conv_pool *pool);

/* dlasim_conv_s8 with packed weights, on the pool's threads (pool may be
 * NULL: threads per call); the same int32 sums, bit for bit. */
int dlasim_conv_s8_packed(const struct dlasim_conv_geom *g, const int8_t *in,
                          const struct dlasim_conv_wpack *w, int32_t *out, unsigned threads,
                          struct dlasim_conv_pool *pool);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
