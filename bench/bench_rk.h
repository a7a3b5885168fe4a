/* RK3588 rows of conv_bench (bench_rk.c). */
#ifndef DLASIM_TOOLS_BENCH_RK_H
#define DLASIM_TOOLS_BENCH_RK_H

#include <stddef.h>
#include <stdint.h>

struct bench_rk_layer {
    uint32_t w, h, c, k, r, stride, pad;
    uint32_t clip_truncate; /* int8 output: accumulator >> t (half to even), saturated */
};

/* One convolution layer as one RK3588 task with int8 output (CORE
 * CLIP_TRUNCATE then saturation, as the NVDLA rows' CACC truncation and SDP);
 * median ms over reps; 0 when the output equals ref (planar int32 sums
 * [k][y][x]) truncated and saturated the same way. */
int bench_rk_layer(const struct bench_rk_layer *L, unsigned threads, unsigned reps,
                   const int8_t *in, const int8_t *wt, const int32_t *ref, double *ms,
                   char *note, size_t notelen);
/* ntasks small tasks in one regcmd list, one kick; median ms over reps. */
int bench_rk_small_tasks(unsigned ntasks, unsigned threads, unsigned reps, double *ms,
                         uint64_t *macs, char *note, size_t notelen);

#endif
