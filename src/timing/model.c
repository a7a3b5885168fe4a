/*
 * Per-layer cost models of the timing layer: how many cycles one hardware
 * layer takes from its start to its done interrupt, from the summary its
 * engines gave of it (src/timing/summary.h: no register is read here), the
 * configuration's scalability parameters and the bytes the DMA path moved
 * for it.
 *
 * What the models rest on (nv_small RTL, nvdla/hw branch nv_small, and runs
 * of it measured with ../shared/tools/rtl-run.sh; see docs/timing.md):
 *   - every DMA request is one data beat of the DBB width (the AXI logs show
 *     arlen = awlen = 0 for CDMA, SDP, PDP and CDP), so a memory that accepts
 *     one request every `mem_req_interval` cycles gives width/interval
 *     bytes per cycle and per direction (vmod/nvdla/nocif: one beat per
 *     request at NVDLA_PRIMARY_MEMIF_WIDTH = 64 bits on nv_small);
 *   - CDMA's feature-data and weight fetches share the read channel and the
 *     arbiter alternates between them request by request (S_ARBITER, the
 *     RTL log shows strict alternation while both are active);
 *   - CSC issues one atomic operation (Atomic-C x Atomic-K MACs) per cycle
 *     (vmod/nvdla/csc/NV_NVDLA_CSC_sg.v); each block of a stripe loads the
 *     block's weights into CMAC first, which takes Atomic-C x Atomic-K bytes
 *     / CBUF bank width cycles and is hidden behind a stripe at least as long;
 *     stripes are 2 x Atomic-K, Atomic-K or the remainder (next_stripe);
 *   - a kernel group (Atomic-K kernels) starts when the whole input is in
 *     CBUF and its own kernels' weights are; weights beyond the CBUF weight
 *     banks stream in as earlier groups release theirs;
 *   - CACC delivers to SDP stripe by stripe while CSC works on the next
 *     ones, but CSC holds a stripe's final block until CACC's delivery
 *     buffer (2 x Atomic-K atoms) has room for the whole stripe, so
 *     2 x Atomic-K stripes follow each other with a gap and shorter ones
 *     overlap (struct conv_pipe);
 *   - SDP, PDP and CDP process NVDLA_{SDP_BS,PDP,CDP}_THROUGHPUT elements
 *     per cycle over every lane of a memory atom (padding lanes included),
 *     overlapped with their DMA;
 *   - fixed costs: OP_EN to the first request, the pipeline after the last
 *     data, the done interrupt (measured once on 1x1x1 cases, the same for
 *     every layer of a kind).
 *
 * INT16 layers (configurations with INT16 feature data; not graded: the
 * nv_small RTL has no INT16).  Atomic-C and Atomic-K are the INT8 figures,
 * "INT16 is expected to have lower parallel" (hardware architectural
 * specification, Atomic-C/K parameters): CSC's kernel groups hold Atomic-K
 * / 2 kernels (nv_full cmod KERNEL_PER_GROUP_INT16 = ELEMENT_PER_ATOM_INT16
 * = atom / 2, as src/sim/nvdla/csc.c runs them) of Atomic-C channels of 2
 * bytes, so an atomic operation is Atomic-C x Atomic-K / 2 MACs, half the
 * INT8 rate, and loads the same Atomic-C x Atomic-K bytes of weights; a
 * memory atom holds Atomic-M / 2 elements (ELEMENT_PER_ATOM_INT16), so SDP,
 * PDP and CDP, which process their throughput in elements per cycle, see
 * fewer padding lanes per atom; DMA time follows the bytes moved (twice
 * INT8's for the same cube).
 */
#include <math.h>
#include <string.h>

#include "timing/timing.h"

/* Fixed pipeline costs in cycles (nv_small RTL, 1x1x1 cases: OP_EN write to
 * first read request, then read latency, then the engine's pipeline and the
 * write response and done interrupt).  Measured, not fitted per case. */
#define START_CYCLES 22.0     /* OP_EN write -> first DMA request (sdp_1x1x1 log) */
#define SDP_PIPE_CYCLES 40.0  /* data in -> done interrupt raised */
#define PDP_PIPE_CYCLES 40.0
#define CDP_PIPE_CYCLES 76.0
/* Convolution: the last atom handed to SDP -> its write request (41 cycles,
 * RTL log of dc_1x1x8_1x1x8x1: write 72 cycles after the final block = 22 +
 * 9 + 41) -> done interrupt (23: the RTL's polling host sees it 29 cycles
 * after the last write on average over 12 recorded network layers, of which
 * the model's status read is 6). */
#define CONV_PIPE_CYCLES 64.0
#define DMA_PIPE_CYCLES 20.0  /* BDMA / RUBIK */
/* SDP's X stages (BS/BN) when not bypassed: their ALU/multiplier/ReLU
 * pipeline adds latency (sdp_3x3x33_bs/bn vs sdp_3x3x33_ew, which nv_small
 * bypasses: 712 vs 674 cycles on the RTL). */
#define SDP_X_PIPE_CYCLES 37.0
/* The same stages on the fly behind a convolution add far less: the RTL
 * writes the first atom of a 1x1 4x4x16 -> 16 layer with BS in use 84
 * cycles after its final block, of a 1x1x8 -> 1 layer with BS and BN
 * bypassed (dc_1x1x8_1x1x8x1) 72 cycles.  Standalone, SDP's operand
 * fetch is in the way; on the fly it ran while CDMA fetched and CSC worked. */
#define SDP_FLY_X_PIPE_CYCLES 12.0
/* PDP: the fewest cycles one line of one surface takes (pdp_elems). */
#define PDP_MIN_LINE_CYCLES 11.5
/* CSC -> CACC -> SDP on the fly (vmod/nvdla/csc/NV_NVDLA_CSC_sg.v,
 * vmod/nvdla/cacc/NV_NVDLA_CACC.h): CACC's delivery buffer holds
 * NVDLA_CC_CREDIT_SIZE = 2 x Atomic-K atoms, and CSC issues the final block
 * of a stripe (last kernel position, last channel block) only once CACC has
 * credit for the whole stripe; CACC hands SDP one atom per Atomic-K /
 * SDP_BS_THROUGHPUT + 1 cycles (RTL AXI log: writes 9 cycles apart on
 * nv_small).  CACC_CREDIT_ATOMK is the delivery buffer in Atomic-K units;
 * FINAL_TO_DELIVERY the cycles from the end of a stripe's final block to the
 * start of its delivery (RTL log of a 1x1 4x4x16 -> 16 layer: the second
 * stripe, waiting for credit, writes its first atom 47 cycles after the
 * first stripe's last: 16 for its final block, 9 for the atom, 22 between). */
#define CACC_CREDIT_ATOMK 2u
#define SDP_FLY_ATOM_GAP 1.0
#define FINAL_TO_DELIVERY 22.0

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

static uint64_t roundup(uint64_t v, uint64_t m)
{
    return m ? (v + m - 1) / m * m : v;
}

void dla_timing_mem_of(const struct dla_config *cfg, const struct dlasim_timing_profile *p,
                       struct dla_timing_mem *m)
{
    double width = cfg->primary_memif_width ? cfg->primary_memif_width : 8;
    double interval = p->mem_req_interval >= 1 ? p->mem_req_interval : 1;
    double bw = width / interval; /* one beat of the DBB width per request */
    if (p->mem_bytes_per_cycle > 0 && p->mem_bytes_per_cycle < bw) {
        bw = p->mem_bytes_per_cycle;
    }
    m->rd_bw = bw;
    m->wr_bw = bw;
    m->total_bw = p->mem_bytes_per_cycle > 0 ? p->mem_bytes_per_cycle : 0;
    m->latency = p->mem_latency;
}

/* Elements an engine processes for a W x H x C cube: every lane of each
 * memory atom (Atomic-M bytes: Atomic-M INT8 or Atomic-M / 2 INT16
 * elements), padding lanes included. */
static double lanes(const struct dla_config *cfg, uint64_t w, uint64_t h, uint64_t c, int int16)
{
    uint64_t m = cfg->memory_atomic_size ? cfg->memory_atomic_size : 8;
    if (int16 && m >= 2) {
        m /= 2;
    }
    return (double)(w * h * roundup(c, m));
}

static double tput(uint32_t per_cycle)
{
    return per_cycle ? (double)per_cycle : 1.0;
}

/* Memory time of a streaming layer and which side bounds it. */
static void stream(const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                   double proc, enum dlasim_timing_bound proc_bound, double pipe,
                   struct dla_timing_cost *c)
{
    double rd = (double)tr->rd_bytes / m->rd_bw;
    double wr = (double)tr->wr_bytes / m->wr_bw;
    double busy = maxd(proc, maxd(rd, wr));
    if (m->total_bw > 0) { /* one DRAM serves both directions */
        busy = maxd(busy, (double)(tr->rd_bytes + tr->wr_bytes) / m->total_bw);
    }
    c->bound = busy == proc ? proc_bound : DLASIM_BOUND_MEMORY;
    if (busy < pipe + START_CYCLES + m->latency) {
        c->bound = busy == proc ? c->bound : DLASIM_BOUND_LATENCY;
    }
    /* cycles the engine waited for memory, charged to the busier direction */
    c->stall_rd = busy > proc && rd >= wr ? busy - proc : 0;
    c->stall_wr = busy > proc && wr > rd ? busy - proc : 0;
    c->cycles = START_CYCLES + m->latency + busy + pipe;
}

/* ---- SDP / PDP / CDP ------------------------------------------------------ */

/*
 * PDP cycles (before dividing by the throughput): its first stage pools
 * along a line and emits one output element per lane and cycle, so a line
 * costs max(input width, output width) atoms of Atomic-M lanes (padding can
 * make the output wider than the input: the RTL log of pdp_24x16x1_8x8
 * shows one input line per 28 x 8 cycles for a 24-wide input).  In split
 * mode each split after the first re-reads the kernel overlap
 * (kernel width - stride) columns of its left neighbour.
 * ref: vmod/nvdla/pdp/NV_NVDLA_PDP_CORE_cal1d.v, NV_NVDLA_PDP_RDMA_ig.v.
 */
static double pdp_elems(const struct dla_config *cfg, const struct dla_pdp_summary *p)
{
    uint64_t w = p->w, h = p->h, c = p->c, ow = p->ow, splits = p->splits;
    uint64_t kw = p->kw, sw = p->sw;
    uint64_t line = w + (splits - 1) * (kw > sw ? kw - sw : 0);
    if (ow > line) {
        line = ow;
    }
    /* After the last input line, output lines whose window reaches into the
     * bottom padding are still emitted, one output line each (the last
     * surface's only: earlier surfaces overlap the next one's reads). */
    uint64_t oh = p->oh, kh = p->kh, sh = p->sh, top = p->pad_top;
    uint64_t flush = 0;
    for (uint64_t r = 0; r < oh && r < 8192; r++) {
        flush += r * sh + kh > top + h ? 1 : 0;
    }
    double body = lanes(cfg, line, h, c, p->int16);
    /* A line takes at least PDP_MIN_LINE_CYCLES: the RTL's pooling of
     * ResNet-18's 1x1x512 cube (64 one-pixel lines, kernel 1x1) spends 11.5
     * cycles per line where its 8 lanes give 8; pdp_1x1x1_3x3 and
     * pdp_1x3x8_8x8 (one-pixel lines too) agree, wider lines never reach it. */
    double lines = lanes(cfg, 1, h, c, p->int16) / (double)(cfg->memory_atomic_size ? cfg->memory_atomic_size : 8) *
                   (p->int16 ? 2.0 : 1.0);
    double min_body = lines * PDP_MIN_LINE_CYCLES * tput(cfg->pdp_throughput);
    return maxd(body, min_body) + lanes(cfg, ow, flush, 1, p->int16);
}

/* Latency the SDP's X stages add when one of them is in use. */
static double sdp_x_pipe(const struct dla_sdp_summary *s)
{
    return s->x_stages ? SDP_X_PIPE_CYCLES : 0.0;
}

static void model_sdp(const struct dla_config *cfg, const struct dla_layer_summary *l,
                      const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                      struct dla_timing_cost *c)
{
    const struct dla_sdp_summary *k = &l->sdp;
    double sdp = lanes(cfg, k->w, k->h, k->c, k->int16) * (double)k->batches /
                 tput(cfg->sdp_bs_throughput);
    double proc = sdp;
    enum dlasim_timing_bound b = DLASIM_BOUND_SDP;
    c->unit[DLASIM_TU_SDP] = sdp;
    if (l->has_pdp) {
        double pdp = pdp_elems(cfg, &l->pdp) / tput(cfg->pdp_throughput);
        c->unit[DLASIM_TU_PDP] = pdp;
        if (pdp > proc) {
            proc = pdp;
            b = DLASIM_BOUND_PDP;
        }
    }
    stream(m, tr, proc, b, SDP_PIPE_CYCLES + sdp_x_pipe(k), c);
}

static void model_pdp(const struct dla_config *cfg, const struct dla_layer_summary *l,
                      const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                      struct dla_timing_cost *c)
{
    double pdp = pdp_elems(cfg, &l->pdp) / tput(cfg->pdp_throughput);
    c->unit[DLASIM_TU_PDP] = pdp;
    stream(m, tr, pdp, DLASIM_BOUND_PDP, PDP_PIPE_CYCLES, c);
}

static void model_cdp(const struct dla_config *cfg, const struct dla_layer_summary *l,
                      const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                      struct dla_timing_cost *c)
{
    uint64_t w = l->cdp.w, h = l->cdp.h, ch = l->cdp.c;
    /* plus one cycle per pixel of a surface after the input ended: the
     * LRN window of the last channels drains (RTL: the shortfall of a plain
     * lanes/throughput model grows with W x H, not with the channels --
     * cdp_8x8x32/64, and own cases 16x8x32, 24x2x16, 4x4x96 in
     * tests/traces/rtl_own.txt) */
    double cdp = (lanes(cfg, w, h, ch, l->cdp.int16) + (double)(w * h)) / tput(cfg->cdp_throughput);
    c->unit[DLASIM_TU_CDP] = cdp;
    stream(m, tr, cdp, DLASIM_BOUND_CDP, CDP_PIPE_CYCLES, c);
}

static void model_dma(const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                      enum dlasim_timing_unit u, struct dla_timing_cost *c)
{
    stream(m, tr, 0, DLASIM_BOUND_MEMORY, DMA_PIPE_CYCLES, c);
    c->unit[u] = c->cycles;
}

/* ---- convolution ----------------------------------------------------------- */

struct conv_shape {
    uint64_t ak;         /* kernels of an atomic operation: Atomic-K, INT16 Atomic-K / 2 */
    uint64_t out_px;     /* output pixels x batches */
    uint64_t k, c, r, s; /* kernels, channels (as CSC sees them), kernel height/width */
    uint64_t kgroups, cblocks;
    double data_bytes, wt_bytes, wt_cap, opd_bytes;
};

static void conv_shape(const struct dla_config *cfg, const struct dla_layer_summary *l,
                       const struct dla_timing_traffic *tr, struct conv_shape *s)
{
    const struct dla_conv_summary *k = &l->conv;
    uint64_t ac = cfg->mac_atomic_c_size ? cfg->mac_atomic_c_size : 8;
    uint64_t ak = cfg->mac_atomic_k_size ? cfg->mac_atomic_k_size : 8;
    if (k->int16 && ak >= 2) {
        ak /= 2;
    }
    s->ak = ak;
    s->out_px = k->out_px;
    s->k = k->k;
    s->c = k->c;
    s->r = k->r;
    s->s = k->s;
    s->kgroups = (s->k + ak - 1) / ak;
    s->cblocks = (s->c + ac - 1) / ac;
    /* Weights the fetch reads (none when CBUF keeps them: WEIGHT_REUSE);
     * SDP's per-element operands (a residual fused after the convolution),
     * read as its output goes (conv_pipe per_atom); the rest of the
     * layer's reads is feature data. */
    double wt = (double)k->weight_bytes;
    if (wt > (double)tr->rd_bytes) {
        wt = (double)tr->rd_bytes;
    }
    double opd = (double)l->sdp.element_operand_bytes;
    if (opd > (double)tr->rd_bytes - wt) {
        opd = (double)tr->rd_bytes - wt;
    }
    s->wt_bytes = wt;
    s->opd_bytes = opd;
    s->data_bytes = (double)tr->rd_bytes - wt - opd;
    s->wt_cap = (double)(k->weight_banks * cfg->cbuf_bank_depth * cfg->cbuf_bank_width);
}

/* Cycle at which weight byte x has arrived, while data and weights share the
 * read channel request by request until the data is in. */
static double weight_arrival(double x, double data, double bw)
{
    return x <= data ? 2.0 * x / bw : (x + data) / bw;
}

/* CSC's stripes (NV_NVDLA_CSC_sg.v, feature data, one batch): 2 x Atomic-K
 * atomic operations while at least 4 x Atomic-K remain, all that remains
 * once it is at most 2 x Atomic-K, Atomic-K in between (so 25 output pixels
 * run as 8 + 8 + 9 on nv_small, 49 as 16 + 16 + 8 + 9). */
static uint64_t next_stripe(uint64_t left, uint64_t ak)
{
    uint64_t upper = 2 * ak;
    return left >= 2 * upper ? upper : left <= upper ? left : ak;
}

/* The on-the-fly pipeline of one convolution, stripe by stripe: CSC issues
 * blocks in order, each at least as long as loading its weights into CMAC;
 * a stripe's final block waits for CACC credit; its atoms then go to SDP
 * behind the previous stripe's.  The last deliveries are kept per stripe so
 * that the atom a credit waits for can be found (a stripe has at least one
 * atom, so CACC_CREDIT_ATOMK x Atomic-K + 1 stripes always reach it). */
#define PIPE_RING 64u

struct conv_pipe {
    uint64_t blocks;  /* kernel positions x channel blocks of a stripe */
    double wload;     /* cycles CMAC needs to load one block's weights */
    double per_atom;  /* cycles the output stage takes per atom */
    uint64_t credits; /* CACC delivery buffer, atoms */
    double csc;       /* cycle CSC is free to issue the next block */
    double dlv_end;   /* cycle the last atom so far has been delivered */
    double comp;      /* cycles CSC spent issuing (statistics) */
    uint64_t atoms;   /* atoms handed to the output stage so far */
    uint64_t n;       /* stripes simulated so far (skipped ones not counted) */
    uint64_t first[PIPE_RING]; /* index of each stripe's first atom */
    double start[PIPE_RING];   /* cycle its delivery started */
};

/* Cycle atom `a` (already handed on) has been delivered. */
static double atom_delivered(const struct conv_pipe *p, uint64_t a)
{
    for (uint64_t i = 0; i < p->n && i < PIPE_RING; i++) {
        uint64_t j = (p->n - 1 - i) % PIPE_RING;
        if (p->first[j] <= a) {
            return p->start[j] + (double)(a - p->first[j] + 1) * p->per_atom;
        }
    }
    return 0.0;
}

static void pipe_stripe(struct conv_pipe *p, uint64_t len)
{
    double blk = maxd((double)len, p->wload);
    double fs = p->csc + (double)(p->blocks - 1) * blk;
    if (p->atoms + len > p->credits) { /* credit for the whole stripe */
        fs = maxd(fs, atom_delivered(p, p->atoms + len - p->credits - 1));
    }
    double fe = fs + blk;
    double d0 = maxd(fe + FINAL_TO_DELIVERY, p->dlv_end);
    p->comp += (double)p->blocks * blk;
    p->csc = fe;
    p->first[p->n % PIPE_RING] = p->atoms;
    p->start[p->n % PIPE_RING] = d0;
    p->n++;
    p->atoms += len;
    p->dlv_end = d0 + (double)len * p->per_atom;
}

/* Shift the pipeline `k` stripes of `len` atoms and `period` cycles ahead:
 * in a run of equal stripes the pipeline repeats itself once it is full. */
static void pipe_skip(struct conv_pipe *p, uint64_t k, uint64_t len, double period, double comp)
{
    for (uint64_t i = 0; i < PIPE_RING; i++) {
        p->first[i] += k * len;
        p->start[i] += (double)k * period;
    }
    p->csc += (double)k * period;
    p->dlv_end += (double)k * period;
    p->comp += (double)k * comp;
    p->atoms += k * len; /* p->n stays: it indexes the ring, which kept its order */
}

/* One kernel group's stripes, from cycle `ready` (its data and weights in). */
static void pipe_group(struct conv_pipe *p, uint64_t px, uint64_t ak, double ready)
{
    p->csc = maxd(p->csc, ready);
    uint64_t left = px, run = 0;
    double last_period = -1;
    while (left) {
        uint64_t len = next_stripe(left, ak);
        double d0_before = p->n ? p->start[(p->n - 1) % PIPE_RING] : 0;
        pipe_stripe(p, len);
        left -= len;
        double d0 = p->start[(p->n - 1) % PIPE_RING];
        double period = d0 - d0_before;
        run = len == 2 * ak && period == last_period ? run + 1 : 0;
        last_period = period;
        /* three equal periods in a row: the rest of the run repeats them */
        uint64_t full_left = left >= 4 * ak ? (left - 4 * ak) / (2 * ak) + 1 : 0;
        if (run >= 3 && full_left > 1) {
            double comp = (double)p->blocks * maxd((double)len, p->wload);
            pipe_skip(p, full_left - 1, len, period, comp);
            left -= (full_left - 1) * len;
            run = 0;
        }
    }
}

static void model_conv(const struct dla_config *cfg, const struct dla_layer_summary *l,
                       const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                       struct dla_timing_cost *c)
{
    struct conv_shape s;
    conv_shape(cfg, l, tr, &s);
    uint64_t ak = s.ak;
    double bw = m->rd_bw;
    /* Weights share the channel with the data only up to what the weight
     * banks hold; beyond that they wait for released banks (the RTL of a
     * 1x1/2 128->256 layer with 2 weight banks: compute starts once the data
     * and 8 KiB of weights are in). */
    double wt_early = s.wt_bytes < s.wt_cap ? s.wt_bytes : s.wt_cap;
    double data_done = wt_early >= s.data_bytes ? 2.0 * s.data_bytes / bw
                                                : (s.data_bytes + wt_early) / bw;
    /* Output stage per atom: SDP (and PDP on the fly) and the writes. */
    double sdp_atom = (double)ak / tput(cfg->sdp_bs_throughput) + SDP_FLY_ATOM_GAP;
    double atoms = (double)s.out_px * (double)s.kgroups;
    double pdp = l->has_pdp ? pdp_elems(cfg, &l->pdp) / tput(cfg->pdp_throughput) : 0.0;
    double wr = (double)tr->wr_bytes / m->wr_bw;
    double opd_rd = s.opd_bytes / bw;
    struct conv_pipe p;
    memset(&p, 0, sizeof(p));
    p.blocks = s.r * s.s * s.cblocks;
    p.wload = (double)(cfg->mac_atomic_c_size * cfg->mac_atomic_k_size) /
              (double)(cfg->cbuf_bank_width ? cfg->cbuf_bank_width : 8);
    p.per_atom = maxd(sdp_atom, atoms > 0 ? maxd(pdp, maxd(wr, opd_rd)) / atoms : 0.0);
    /* CSC's stripe limits and CACC's credit are the RTL's Atomic-K constants
     * (CSC_ATOMK, NVDLA_CC_CREDIT_SIZE), the same for INT16 (not graded) */
    uint64_t csc_k = cfg->mac_atomic_k_size ? cfg->mac_atomic_k_size : 8;
    p.credits = CACC_CREDIT_ATOMK * csc_k;
    /* A kernel group's weights are its kernels' (the last group may hold
     * fewer than Atomic-K). */
    double wt_kernel = s.k ? s.wt_bytes / (double)s.k : 0.0;
    double wt_group_max = wt_kernel * (double)(s.k < ak ? s.k : ak);
    uint64_t fit = wt_group_max > 0 ? (uint64_t)(s.wt_cap / wt_group_max) : s.kgroups;
    if (fit < 1) {
        fit = 1;
    }
    double wt_wait = 0;
    /* Weights beyond the CBUF weight banks can only be fetched once earlier
     * groups released their banks (CSC is done with them): the end cycles
     * of the last 64 groups are kept in a ring (more than 64 groups back
     * never holds a fetch up). */
    double ends[64] = {0};
    double fetch_at = 0; /* cycle the weight stream has reached */
    for (uint64_t gi = 0; gi < s.kgroups; gi++) {
        uint64_t kn = s.k - gi * ak < ak ? s.k - gi * ak : ak;
        double wt_group = wt_kernel * (double)kn;
        double last = wt_kernel * (double)(gi * ak + kn); /* weight bytes up to this group's */
        double arrive;
        if (gi < fit || last <= s.wt_cap) {
            arrive = weight_arrival(last, s.data_bytes, bw);
        } else {
            /* The bytes of this group beyond what the banks hold once groups
             * 0..k-1 released theirs are fetched after group k-1 ends. */
            uint64_t k = (uint64_t)ceil((last - s.wt_cap) / wt_group_max);
            if (k < 1 || k > gi) { /* a group larger than the banks waits for the one before */
                k = gi;
            }
            double before = maxd(s.wt_cap + wt_group_max * (double)(k - 1), last - wt_group);
            double freed = gi - (k - 1) <= 64 ? ends[(k - 1) % 64] : 0.0;
            arrive = maxd(fetch_at + wt_group / bw, freed + (last - before) / bw);
        }
        fetch_at = arrive;
        double ready = maxd(data_done, p.csc);
        wt_wait += maxd(ready, arrive) - ready;
        pipe_group(&p, s.out_px, csc_k, maxd(ready, arrive));
        ends[gi % 64] = p.csc;
    }
    double busy = p.dlv_end;
    double comp = p.comp / (double)(s.kgroups ? s.kgroups : 1); /* per group */
    double sdp = (double)s.out_px * sdp_atom;
    double pdp_g = pdp / (double)(s.kgroups ? s.kgroups : 1);
    double wr_g = wr / (double)(s.kgroups ? s.kgroups : 1);
    c->macs = l->conv.macs;
    c->unit[DLASIM_TU_CONV] = p.comp;
    c->unit[DLASIM_TU_SDP] = sdp * (double)s.kgroups;
    c->unit[DLASIM_TU_PDP] = pdp;
    c->dat_stall = data_done;
    c->wt_stall = wt_wait;
    c->dat_done = START_CYCLES + m->latency + data_done;
    c->wt_done = START_CYCLES + m->latency + maxd(fetch_at, weight_arrival(wt_early, s.data_bytes, bw));
    c->stall_wr = wr_g > comp && wr_g > sdp ? (wr_g - maxd(comp, sdp)) * (double)s.kgroups : 0;
    if (p.comp >= busy * 0.5 && comp >= sdp && comp >= wr_g && comp >= pdp_g) {
        c->bound = DLASIM_BOUND_MAC;
    } else if (sdp >= comp && sdp >= wr_g && sdp >= pdp_g && sdp * (double)s.kgroups >= busy * 0.5) {
        c->bound = DLASIM_BOUND_SDP;
    } else if (pdp_g >= comp && pdp_g >= wr_g && pdp >= busy * 0.5) {
        c->bound = DLASIM_BOUND_PDP;
    } else {
        c->bound = DLASIM_BOUND_MEMORY;
    }
    if (m->total_bw > 0) { /* one DRAM serves both directions */
        double all = (double)(tr->rd_bytes + tr->wr_bytes) / m->total_bw;
        if (all > busy) {
            busy = all;
            c->bound = DLASIM_BOUND_MEMORY;
        }
    }
    c->cycles = START_CYCLES + m->latency + busy + CONV_PIPE_CYCLES +
                (l->sdp.x_stages ? SDP_FLY_X_PIPE_CYCLES : 0.0);
}

void dla_timing_model(const struct dla_config *cfg, const struct dla_layer_summary *l,
                      const struct dla_timing_mem *m, const struct dla_timing_traffic *tr,
                      struct dla_timing_cost *c)
{
    memset(c, 0, sizeof(*c));
    switch (l->kind) {
    case DLA_LAYER_CONV:
        model_conv(cfg, l, m, tr, c);
        break;
    case DLA_LAYER_SDP:
        model_sdp(cfg, l, m, tr, c);
        break;
    case DLA_LAYER_PDP:
        model_pdp(cfg, l, m, tr, c);
        break;
    case DLA_LAYER_CDP:
        model_cdp(cfg, l, m, tr, c);
        break;
    case DLA_LAYER_BDMA:
        model_dma(m, tr, DLASIM_TU_BDMA, c);
        break;
    case DLA_LAYER_RUBIK:
        model_dma(m, tr, DLASIM_TU_RUBIK, c);
        break;
    case DLA_LAYER_KINDS:
        break;
    }
    if (!(c->cycles >= 1.0)) { /* also catches NaN */
        c->cycles = 1.0;
    }
}
