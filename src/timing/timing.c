/*
 * The timing layer's state and public API (include/dlasim/timing.h).
 *
 * Time is the host's CSB master clock `now` (core and CSB clocks are one
 * clock on nv_small, ../shared/reference/README.md).  Each CSB access costs
 * the profile's cycles; a write that sets OP_EN stamps (unit, group) with
 * the cycle it reached the device.  A hardware layer starts when the last of
 * its units was enabled and every engine it needs is free again (engines of
 * different layers run side by side; the two register groups let a layer be
 * programmed while the previous one runs), and lasts what the cost model of
 * its kind says (model.c).  Its done bits in GLB S_INTR_STATUS become
 * visible to the host from its end cycle on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "timing/timing.h"

struct dla_timing {
    struct dlasim_timing_profile prof;
    const struct dla_config *cfg;
    struct dla_timing_mem mem;
    double now;                               /* host (CSB master) cycle */
    int hold;                                 /* accesses outside modelled time */
    uint64_t csb_writes, csb_reads;
    double en[DLA_TIMING_UNIT_IDS][2];        /* cycle OP_EN of (unit id, group) was written */
    double group_end[DLA_TIMING_UNIT_IDS][2]; /* end of the layer (unit id, group) last ran */
    double unit_free[DLASIM_TU_COUNT];        /* cycle each engine is free again */
    double bit_time[32];                      /* cycle each S_INTR_STATUS bit was raised */
    double last_end;                          /* end of the layer being completed */
    double last_dat, last_wt;                 /* its CDMA data / weight fetch done, or 0 */
    struct dla_timing_traffic cur;            /* traffic of the layer in flight */
    struct dlasim_timing_layer *rec;          /* layer records */
    size_t n, cap;
};

static const struct dlasim_timing_profile rtl_tb = {
    /* ../shared/reference/README.md and nvdla/hw verif/verilator/nvdla.cpp:
     * CSB writes back to back (the RTL's CSB accepts four writes per nine
     * cycles once its queue is full, measured on sdp_1x1x1: 88 writes in 192
     * cycles); a register read is a request plus a response; one cycle per
     * memory command before the first write; 32-cycle read latency; one
     * request accepted every other cycle on each AXI channel. */
    "rtl-tb", 2.25, 6.0, 1.0, 32.0, 2.0, 0.0,
};

int dlasim_timing_profile_get(const char *name, struct dlasim_timing_profile *out)
{
    if (!out) {
        return DLASIM_ERR_INVAL;
    }
    if (!name || !strcmp(name, "rtl-tb")) {
        *out = rtl_tb;
        return 0;
    }
    if (!strcmp(name, "dram")) {
        /* LPDDR4-class memory at 1 GHz: 25.6 GB/s, 100 ns. */
        dlasim_timing_profile_dram(out, 25.6, 100.0, 1000.0);
        return 0;
    }
    return DLASIM_ERR_INVAL;
}

void dlasim_timing_profile_dram(struct dlasim_timing_profile *out, double gbytes_per_s,
                                double latency_ns, double clock_mhz)
{
    if (!out) {
        return;
    }
    if (!(clock_mhz > 0)) {
        clock_mhz = 1000.0;
    }
    *out = rtl_tb;
    out->name = "dram";
    out->csb_write_cycles = 2.25; /* the host still programs through the CSB */
    out->host_cmd_cycles = 0;
    out->mem_latency = latency_ns > 0 ? latency_ns * clock_mhz / 1000.0 : 0;
    out->mem_req_interval = 1;
    /* GB/s -> bytes per core cycle */
    out->mem_bytes_per_cycle = gbytes_per_s > 0 ? gbytes_per_s * 1000.0 / clock_mhz : 0;
}

const char *dlasim_timing_bound_name(enum dlasim_timing_bound b)
{
    static const char *const names[] = {"MAC", "memory", "CSB", "SDP", "PDP", "CDP", "latency"};
    return (unsigned)b < sizeof(names) / sizeof(names[0]) ? names[b] : "?";
}

const char *dlasim_timing_unit_name(enum dlasim_timing_unit u)
{
    static const char *const names[] = {"CONV", "SDP", "PDP", "CDP", "BDMA", "RUBIK"};
    return (unsigned)u < DLASIM_TU_COUNT ? names[u] : "?";
}

/* ---- internal hooks ------------------------------------------------------------ */

int dla_timing_create(const struct dla_config *cfg, const struct dlasim_timing_profile *p,
                      struct dla_timing **out)
{
    struct dla_timing *t = calloc(1, sizeof(*t));
    *out = NULL;
    if (!t) {
        return DLASIM_ERR_NOMEM;
    }
    t->prof = p ? *p : rtl_tb;
    if (!(t->prof.csb_write_cycles >= 0) || !(t->prof.csb_read_cycles >= 0) ||
        !(t->prof.mem_latency >= 0) || !(t->prof.mem_bytes_per_cycle >= 0) ||
        !(t->prof.host_cmd_cycles >= 0)) {
        free(t);
        return DLASIM_ERR_INVAL;
    }
    t->cfg = cfg;
    dla_timing_mem_of(cfg, &t->prof, &t->mem);
    dla_timing_clear(t);
    *out = t;
    return 0;
}

void dla_timing_destroy(struct dla_timing *t)
{
    if (t) {
        free(t->rec);
        free(t);
    }
}

void dla_timing_clear(struct dla_timing *t)
{
    t->now = 0;
    t->csb_writes = t->csb_reads = 0;
    memset(t->en, 0, sizeof(t->en));
    memset(t->group_end, 0, sizeof(t->group_end));
    memset(t->unit_free, 0, sizeof(t->unit_free));
    for (unsigned i = 0; i < 32; i++) {
        t->bit_time[i] = -1;
    }
    t->last_end = 0;
    t->n = 0;
}

void dla_timing_csb_write(struct dla_timing *t)
{
    if (!t->hold) {
        t->now += t->prof.csb_write_cycles;
        t->csb_writes++;
    }
}

void dla_timing_csb_read(struct dla_timing *t)
{
    if (!t->hold) {
        t->now += t->prof.csb_read_cycles;
        t->csb_reads++;
    }
}

void dla_timing_op_enabled(struct dla_timing *t, unsigned unit, unsigned group)
{
    if (unit < DLA_TIMING_UNIT_IDS) {
        t->en[unit][group & 1] = t->now;
    }
}

uint32_t dla_timing_intr_status(const struct dla_timing *t, uint32_t functional)
{
    if (t->hold) {
        return functional;
    }
    uint32_t v = functional;
    for (unsigned i = 0; i < 32; i++) {
        if ((v >> i & 1u) && t->bit_time[i] > t->now) {
            v &= ~(1u << i);
        }
    }
    return v;
}

uint32_t dla_timing_unit_status(const struct dla_timing *t, unsigned unit, uint32_t functional)
{
    if (t->hold || unit >= DLA_TIMING_UNIT_IDS) {
        return functional;
    }
    uint32_t v = functional;
    for (unsigned g = 0; g < 2; g++) {
        unsigned shift = g ? 16u : 0u; /* S_STATUS: STATUS_0 [1:0], STATUS_1 [17:16] */
        if (((v >> shift) & 3u) == 0 && t->group_end[unit][g] > t->now) {
            v |= 1u << shift; /* RUNNING until its modelled end */
        }
    }
    return v;
}

void dla_timing_traffic(struct dla_timing *t, int write, size_t bytes)
{
    if (write) {
        t->cur.wr_bytes += bytes;
    } else {
        t->cur.rd_bytes += bytes;
    }
}

void dla_timing_layer_begin(struct dla_timing *t)
{
    memset(&t->cur, 0, sizeof(t->cur));
}

const char *dla_layer_kind_name(enum dla_layer_kind k)
{
    static const char *const names[DLA_LAYER_KINDS] = {
        [DLA_LAYER_CONV] = "conv", [DLA_LAYER_SDP] = "sdp",   [DLA_LAYER_PDP] = "pdp",
        [DLA_LAYER_CDP] = "cdp",   [DLA_LAYER_BDMA] = "bdma", [DLA_LAYER_RUBIK] = "rubik",
    };
    return (unsigned)k < DLA_LAYER_KINDS ? names[k] : "?";
}

static uint32_t sat32(double v)
{
    return v <= 0 ? 0u : v >= 4294967295.0 ? 0xffffffffu : (uint32_t)v;
}

/* The D_PERF_* counters that count time (stalls, latency) for the device to
 * write where its units' perf enables are set (as in RTL); the functional
 * model leaves them 0 and the bit-exact counters (saturation, LUT hits) are
 * the engines'. */
static void perf_counters(const struct dla_timing *t, const struct dla_timing_cost *c,
                          struct dla_perf_counters *perf)
{
    /* summed latency of the read requests (one per DBB beat) */
    double beat = t->cfg->primary_memif_width ? t->cfg->primary_memif_width : 8;
    double reqs = (double)t->cur.rd_bytes / beat;
    perf->v[DLA_PERF_DAT_READ_STALL] = sat32(c->dat_stall);
    perf->v[DLA_PERF_WT_READ_STALL] = sat32(c->wt_stall);
    perf->v[DLA_PERF_DAT_READ_LATENCY] = sat32(reqs * t->mem.latency);
    perf->v[DLA_PERF_WT_READ_LATENCY] = 0;
    perf->v[DLA_PERF_READ_STALL] = sat32(c->stall_rd);
    perf->v[DLA_PERF_WRITE_STALL] = sat32(c->stall_wr);
}

static int record(struct dla_timing *t, const struct dlasim_timing_layer *r)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        struct dlasim_timing_layer *p = realloc(t->rec, cap * sizeof(*p));
        if (!p) {
            return DLASIM_ERR_NOMEM; /* the layer is timed, only its record is lost */
        }
        t->rec = p;
        t->cap = cap;
    }
    t->rec[t->n++] = *r;
    return 0;
}

void dla_timing_layer_end(struct dla_timing *t, const struct dla_layer_summary *l,
                          unsigned layer_index, struct dla_perf_counters *perf)
{
    struct dla_timing_cost c;
    double enabled = 0, free_at = 0;
    unsigned engines = l->engines;
    for (unsigned i = 0; i < l->n; i++) {
        if (l->unit[i] < DLA_TIMING_UNIT_IDS) {
            enabled = fmax(enabled, t->en[l->unit[i]][l->group[i] & 1]);
        }
    }
    for (unsigned u = 0; u < DLASIM_TU_COUNT; u++) {
        if (engines >> u & 1u) {
            free_at = fmax(free_at, t->unit_free[u]);
        }
    }
    dla_timing_model(t->cfg, l, &t->mem, &t->cur, &c);
    double start = fmax(enabled, free_at);
    double end = start + c.cycles;
    for (unsigned u = 0; u < DLASIM_TU_COUNT; u++) {
        if (engines >> u & 1u) {
            t->unit_free[u] = end;
        }
    }
    for (unsigned i = 0; i < l->n; i++) {
        if (l->unit[i] < DLA_TIMING_UNIT_IDS) {
            t->group_end[l->unit[i]][l->group[i] & 1] = end;
        }
    }
    t->last_end = end;
    t->last_dat = c.dat_done > 0 ? start + c.dat_done : 0;
    t->last_wt = c.wt_done > 0 ? start + c.wt_done : 0;
    perf_counters(t, &c, perf);

    struct dlasim_timing_layer r;
    memset(&r, 0, sizeof(r));
    r.index = layer_index;
    r.kind = dla_layer_kind_name(l->kind);
    r.enabled = (uint64_t)llround(enabled);
    r.start = (uint64_t)llround(start);
    r.end = (uint64_t)llround(end);
    for (unsigned u = 0; u < DLASIM_TU_COUNT; u++) {
        r.unit_cycles[u] = (uint64_t)llround(c.unit[u]);
    }
    r.macs = c.macs;
    double peak = (double)t->cfg->mac_atomic_c_size * (double)t->cfg->mac_atomic_k_size;
    if (l->kind == DLA_LAYER_CONV && l->conv.int16) {
        peak /= 2; /* INT16: Atomic-K / 2 kernels per atomic operation (model.c) */
    }
    r.mac_util = peak > 0 && end > start ? (double)c.macs / (peak * (end - start)) : 0;
    r.rd_bytes = t->cur.rd_bytes;
    r.wr_bytes = t->cur.wr_bytes;
    r.stall_cycles = (uint64_t)llround(c.stall_rd + c.stall_wr + c.dat_stall + c.wt_stall);
    r.bound = c.bound;
    /* Programming, not the engine, set the pace when the layer waited
     * longer for its OP_EN than it then ran. */
    double prev = t->n ? (double)t->rec[t->n - 1].end : 0.0;
    if (enabled > free_at && enabled - fmax(free_at, prev) > c.cycles) {
        r.bound = DLASIM_BOUND_CSB;
    }
    record(t, &r);
}

/* The bits in dat_bits (NVDLA: CDMA's data done) are raised when the
 * layer's data fetch ended, those in wt_bits (its weights done) when the
 * weight fetch ended, the others at the layer's end. */
void dla_timing_raise(struct dla_timing *t, uint32_t bits, uint32_t dat_bits, uint32_t wt_bits)
{
    for (unsigned i = 0; i < 32; i++) {
        uint32_t b = 1u << i;
        if (!(bits & b)) {
            continue;
        }
        t->bit_time[i] = (b & dat_bits) && t->last_dat > 0 ? t->last_dat
                         : (b & wt_bits) && t->last_wt > 0 ? t->last_wt
                                                           : t->last_end;
    }
}

/* ---- public API ------------------------------------------------------------------ */

int dlasim_timing_get_profile(const struct dlasim_dev *dev, struct dlasim_timing_profile *out)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    if (!t || !out) {
        return DLASIM_ERR_INVAL;
    }
    *out = t->prof;
    return 0;
}

int dlasim_timing_enabled(const struct dlasim_dev *dev)
{
    return dla_dev_timing(dev) != NULL;
}

uint64_t dlasim_timing_now(const struct dlasim_dev *dev)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    return t ? (uint64_t)llround(t->now) : 0;
}

void dlasim_timing_advance(struct dlasim_dev *dev, uint64_t cycles)
{
    struct dla_timing *t = dla_dev_timing(dev);
    if (t) {
        t->now += (double)cycles;
    }
}

void dlasim_timing_hold(struct dlasim_dev *dev, int hold)
{
    struct dla_timing *t = dla_dev_timing(dev);
    if (t) {
        t->hold = hold != 0;
    }
}

int64_t dlasim_timing_irq_cycle(const struct dlasim_dev *dev, uint32_t bits)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    double latest = 0;
    if (!t || !bits) {
        return -1;
    }
    for (unsigned i = 0; i < 32; i++) {
        if (bits >> i & 1u) {
            if (t->bit_time[i] < 0) {
                return -1;
            }
            latest = fmax(latest, t->bit_time[i]);
        }
    }
    return (int64_t)llround(latest);
}

uint64_t dlasim_timing_wait_irq(struct dlasim_dev *dev, uint32_t bits)
{
    struct dla_timing *t = dla_dev_timing(dev);
    if (!t) {
        return 0;
    }
    int64_t at = dlasim_timing_irq_cycle(dev, bits);
    /* The host polls S_INTR_STATUS: the read that sees the bits is the
     * first one issued after they were raised. */
    if (at >= 0 && (double)at > t->now) {
        t->now = (double)at;
    }
    t->now += t->prof.csb_read_cycles;
    t->csb_reads++;
    return (uint64_t)llround(t->now);
}

size_t dlasim_timing_layer_count(const struct dlasim_dev *dev)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    return t ? t->n : 0;
}

int dlasim_timing_layer_get(const struct dlasim_dev *dev, size_t i, struct dlasim_timing_layer *out)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    if (!t || i >= t->n || !out) {
        return DLASIM_ERR_INVAL;
    }
    *out = t->rec[i];
    return 0;
}

int dlasim_timing_total(const struct dlasim_dev *dev, struct dlasim_timing_total *out)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    if (!out) {
        return DLASIM_ERR_INVAL;
    }
    memset(out, 0, sizeof(*out));
    if (!t) {
        return DLASIM_ERR_INVAL;
    }
    for (size_t i = 0; i < t->n; i++) {
        const struct dlasim_timing_layer *l = &t->rec[i];
        if (!i || l->start < out->first_start) {
            out->first_start = l->start;
        }
        if (l->end > out->last_end) {
            out->last_end = l->end;
        }
        out->macs += l->macs;
        out->rd_bytes += l->rd_bytes;
        out->wr_bytes += l->wr_bytes;
    }
    out->layers = t->n;
    out->cycles = out->last_end - out->first_start;
    double peak = (double)t->cfg->mac_atomic_c_size * (double)t->cfg->mac_atomic_k_size;
    out->mac_util = out->cycles && peak > 0 ? (double)out->macs / (peak * (double)out->cycles) : 0;
    return 0;
}

void dlasim_timing_clear(struct dlasim_dev *dev)
{
    struct dla_timing *t = dla_dev_timing(dev);
    if (t) {
        dla_timing_clear(t);
    }
}

uint64_t dlasim_timing_csb_writes(const struct dlasim_dev *dev)
{
    const struct dla_timing *t = dla_dev_timing(dev);
    return t ? t->csb_writes : 0;
}
