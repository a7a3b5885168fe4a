/*
 * Internal interface of the timing layer (public side: include/dlasim/timing.h).
 *
 * The NVDLA device calls these hooks only when it was created with timing on
 * (struct dla_dev.timing != NULL), so the functional model pays one pointer
 * test per CSB access, DMA burst and layer when timing is off.  The timing
 * layer sees the device only through these calls and the layer summaries
 * (summary.h); it never reads or writes a register:
 *   - dla_timing_csb_write/read: every CSB access the host makes;
 *   - dla_timing_op_enabled: a write set OP_EN of (unit, group), the unit
 *     an id of the device's (summary.h DLA_TIMING_UNIT_IDS);
 *   - dla_timing_traffic: every DMA burst (bytes only, never per element);
 *   - dla_timing_layer_begin/end: around one hardware layer, before the
 *     device completes it (registers of the executed groups still readable);
 *   - dla_timing_raise: the GLB status bits the completed layer raised.
 */
#ifndef DLASIM_TIMING_INTERNAL_H
#define DLASIM_TIMING_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/timing.h"
#include "plan/config.h"
#include "timing/summary.h"

struct dla_timing;

/* The timing layer of a device, NULL when timing is off or the device is not
 * an NVDLA: provided by the device personality (src/sim/nvdla/device.c), so
 * the public calls of include/dlasim/timing.h find their model. */
struct dla_timing *dla_dev_timing(const struct dlasim_dev *dev);

int dla_timing_create(const struct dla_config *cfg, const struct dlasim_timing_profile *p,
                      struct dla_timing **out);
void dla_timing_destroy(struct dla_timing *t);
void dla_timing_clear(struct dla_timing *t);

void dla_timing_csb_write(struct dla_timing *t);
void dla_timing_csb_read(struct dla_timing *t);
void dla_timing_op_enabled(struct dla_timing *t, unsigned unit, unsigned group);
/* What a CSB read of GLB S_INTR_STATUS / a unit's S_STATUS returns at the
 * host's current cycle, given the functional value. */
uint32_t dla_timing_intr_status(const struct dla_timing *t, uint32_t functional);
uint32_t dla_timing_unit_status(const struct dla_timing *t, unsigned unit, uint32_t functional);

void dla_timing_traffic(struct dla_timing *t, int write, size_t bytes);

void dla_timing_layer_begin(struct dla_timing *t);
/* One layer, described by its summary (summary.h), before the device
 * completes it: it is timed and recorded, and `perf` receives the values of
 * the time-counting D_PERF_* counters for the device to write. */
void dla_timing_layer_end(struct dla_timing *t, const struct dla_layer_summary *l,
                          unsigned layer_index, struct dla_perf_counters *perf);
/* The interrupt status bits the completed layer raised; dat_bits / wt_bits:
 * those raised when its data / weight fetch ended rather than at its end. */
void dla_timing_raise(struct dla_timing *t, uint32_t bits, uint32_t dat_bits, uint32_t wt_bits);

/* ---- the per-layer cost models (src/timing/model.c) ---------------------- */

/* Memory seen by the engines: effective bytes/cycle per channel and latency. */
struct dla_timing_mem {
    double rd_bw, wr_bw;  /* bytes per cycle per channel */
    double total_bw;      /* DRAM cap shared by reads and writes, 0 = none */
    double latency;       /* read latency, cycles */
};

/* Traffic of a layer as the DMA path counted it. */
struct dla_timing_traffic {
    uint64_t rd_bytes, wr_bytes;
};

/* Result of a cost model: busy cycles from the layer's start. */
struct dla_timing_cost {
    double cycles;                            /* start to done interrupt */
    double unit[DLASIM_TU_COUNT];             /* busy cycles per unit */
    double stall_rd, stall_wr;                /* engine cycles waiting on memory */
    double dat_stall, wt_stall;               /* convolution: waits for data / weights */
    double dat_done, wt_done;                 /* convolution: cycles from the start until
                                                 CDMA fetched all data / weights (0 = n/a) */
    uint64_t macs;
    enum dlasim_timing_bound bound;
};

void dla_timing_mem_of(const struct dla_config *cfg, const struct dlasim_timing_profile *p,
                       struct dla_timing_mem *m);
void dla_timing_model(const struct dla_config *cfg, const struct dla_layer_summary *l,
                      const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                      struct dla_timing_cost *c);

#endif
