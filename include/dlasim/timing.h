/*
 * dlasim timing: a cycle model of the device beside the functional model.
 *
 * Switch it on with dlasim_options.timing = 1 (and optionally a profile of
 * the world around the accelerator in dlasim_options.timing_profile).  The
 * functional results are the same with it on or off.  With it on, every CSB
 * access advances the host's clock, every layer gets a modelled start and end
 * cycle (from its registers, the configuration's scalability parameters and
 * the bytes it moved), GLB S_INTR_STATUS bits and unit S_STATUS registers read
 * as they would at the host's current cycle, and the D_PERF_* stall/latency
 * counters report modelled values.  See docs/timing.md.
 */
#ifndef DLASIM_TIMING_H
#define DLASIM_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

/*
 * The host and memory around the accelerator, in core clock cycles.
 * "rtl-tb" is NVIDIA's Verilator testbench (../shared/reference/README.md):
 * back-to-back CSB writes, 32-cycle read latency, one request accepted every
 * other cycle per AXI channel.  "dram" is a plain memory system whose
 * bandwidth and latency the caller sets (dlasim_timing_profile_dram()).
 */
struct dlasim_timing_profile {
    const char *name;
    double csb_write_cycles;      /* cycles per register write issued back to back */
    double csb_read_cycles;       /* round trip of one register read */
    double host_cmd_cycles;       /* cycles a trace's memory command costs the host */
    double mem_latency;           /* cycles from a read request to its first data */
    double mem_req_interval;      /* cycles between requests one channel accepts (>= 1) */
    double mem_bytes_per_cycle;   /* DRAM bandwidth shared by reads and writes, bytes/cycle
                                     (0 = none beyond the request rate) */
};

/* Pointer arguments: `out` is required (NULL: DLASIM_ERR_INVAL, or nothing
 * for functions without a status); a NULL `dev` behaves as a device with
 * the model off. */

/* Built-in profile by name ("rtl-tb", "dram"; NULL = "rtl-tb");
 * DLASIM_ERR_INVAL if unknown. */
int dlasim_timing_profile_get(const char *name, struct dlasim_timing_profile *out);
/* A DRAM profile: `gbytes_per_s` of bandwidth and `latency_ns` at `clock_mhz`. */
void dlasim_timing_profile_dram(struct dlasim_timing_profile *out, double gbytes_per_s,
                                double latency_ns, double clock_mhz);

/* Units a layer keeps busy (one track each in the timeline). */
enum dlasim_timing_unit {
    DLASIM_TU_CONV = 0, /* CDMA + CSC + CMAC + CACC */
    DLASIM_TU_SDP,
    DLASIM_TU_PDP,
    DLASIM_TU_CDP,
    DLASIM_TU_BDMA,
    DLASIM_TU_RUBIK,
    DLASIM_TU_COUNT
};

/* What bounds a layer's duration. */
enum dlasim_timing_bound {
    DLASIM_BOUND_MAC = 0,   /* convolution MAC array */
    DLASIM_BOUND_MEMORY,    /* DMA bandwidth */
    DLASIM_BOUND_CSB,       /* waiting for the host's register programming */
    DLASIM_BOUND_SDP,       /* SDP elements per cycle */
    DLASIM_BOUND_PDP,
    DLASIM_BOUND_CDP,
    DLASIM_BOUND_LATENCY    /* fixed pipeline and memory latency */
};

/* One hardware layer as the model timed it. */
struct dlasim_timing_layer {
    unsigned index;                       /* device layer number (1 = first) */
    const char *kind;                     /* "conv", "sdp", "pdp", "cdp", "bdma", "rubik" */
    uint64_t enabled;                     /* cycle its last OP_EN write reached the device */
    uint64_t start, end;                  /* modelled cycles; end = done interrupt raised */
    uint64_t unit_cycles[DLASIM_TU_COUNT];/* busy cycles of each unit */
    uint64_t macs;                        /* multiply-accumulates (convolution) */
    double mac_util;                      /* macs / (MACs per cycle x (end - start)) */
    uint64_t rd_bytes, wr_bytes;          /* memory traffic */
    uint64_t stall_cycles;                /* engine cycles spent waiting for memory */
    enum dlasim_timing_bound bound;
};

const char *dlasim_timing_bound_name(enum dlasim_timing_bound b);
const char *dlasim_timing_unit_name(enum dlasim_timing_unit u);

/* The profile the device was created with; DLASIM_ERR_INVAL when timing is off. */
int dlasim_timing_get_profile(const struct dlasim_dev *dev, struct dlasim_timing_profile *out);
/* Is the model on for this device? */
int dlasim_timing_enabled(const struct dlasim_dev *dev);
/* The host's current cycle (CSB master clock). */
uint64_t dlasim_timing_now(const struct dlasim_dev *dev);
/* The host spends `cycles` doing something else. */
void dlasim_timing_advance(struct dlasim_dev *dev, uint64_t cycles);
/* While held (hold != 0), CSB accesses cost no modelled time and read the
 * functional state: for a harness that inspects the device outside the
 * program it models. */
void dlasim_timing_hold(struct dlasim_dev *dev, int hold);
/* Cycle at which all of `bits` (GLB S_INTR_STATUS) were last raised, or -1
 * if one of them never was. */
int64_t dlasim_timing_irq_cycle(const struct dlasim_dev *dev, uint32_t bits);
/* The host polls S_INTR_STATUS until all of `bits` are set: advances the
 * host's clock to the cycle a polling read sees them and returns it. */
uint64_t dlasim_timing_wait_irq(struct dlasim_dev *dev, uint32_t bits);

/* Layers timed since creation or dlasim_timing_clear(). */
size_t dlasim_timing_layer_count(const struct dlasim_dev *dev);
int dlasim_timing_layer_get(const struct dlasim_dev *dev, size_t i, struct dlasim_timing_layer *out);
/* Totals over the layers timed so far: what a runtime reports for a whole
 * network (cycles = last end - first start; fps = clock / cycles). */
struct dlasim_timing_total {
    uint64_t layers;
    uint64_t first_start, last_end, cycles;
    uint64_t macs, rd_bytes, wr_bytes;
    double mac_util;                      /* macs / (MACs per cycle x cycles) */
};
int dlasim_timing_total(const struct dlasim_dev *dev, struct dlasim_timing_total *out);

/* Forget the layer records and restart the clock at 0 (engines idle). */
void dlasim_timing_clear(struct dlasim_dev *dev);
/* CSB register writes and reads the host issued (charged ones). */
uint64_t dlasim_timing_csb_writes(const struct dlasim_dev *dev);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
