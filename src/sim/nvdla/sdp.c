/*
 * SDP (Single Data Processor: per-element post-processing) with SDP_RDMA.
 *
 * CSB windows: SDP_RDMA 0x8000-0x8fff, SDP 0x9000-0x9fff (both dual-group).
 * GLB interrupt bits: SDP_DONE_STATUS0/1 (raised by the device core when the
 * layer completes).  Memory ports: MRDMA (input cube), BRDMA / NRDMA / ERDMA
 * (BS / BN / EW operands), WDMA (output cube); each on DBB or CVIF from its
 * *_RAM_TYPE field.
 *
 * Data path, per element (ref: vmod/nvdla/sdp/NV_NVDLA_SDP_core.v,
 * cmod/hls_wrapper/sdp_hls_wrapper.cpp, cmod/hls/sdp/):
 *   input  int32 from CACC (flying) or int8/int16 from memory (MRDMA)
 *   BS     X stage: ALU (max/min/sum with a left-shifted 16-bit operand,
 *          33 bits) -> MUL (x 16-bit operand, 49 bits, or PReLU pass of
 *          non-negative values) -> rounding right shift saturated to 32 bits
 *          -> ReLU                       (NV_NVDLA_SDP_HLS_X_int_*.v)
 *   BN     the same with the BN registers
 *   EW     Y stage: MUL (x 32-bit operand, 64 bits, rounding shift by
 *          EW_TRUNCATE) -> ALU (max/min/sum/eql, 33 bits saturated to 32);
 *          memory operands pass their own converters (offset, scale,
 *          truncate); then the LUT (linear/exponent LE table, linear LO
 *          table, under/overflow extrapolation)   (NV_NVDLA_SDP_CORE_y.v)
 *   CVT    (x - offset) * scale, rounding shift saturated to 17 bits, then
 *          saturated to int8/int16          (NV_NVDLA_SDP_HLS_C_int.v)
 *   output memory (WDMA) or PDP on the fly.
 * A stage exists only where the configuration has it (sdp_bs/bn/ew/lut
 * _enable); where it is absent the hardware ties it to bypass, so its
 * registers are ignored (nv_small: NV_NVDLA_sdp.v ties the WDMA's EW view to
 * bypass; NV_NVDLA_SDP_rdma.v has no ERDMA).
 *
 * Memory layout (ref: NV_NVDLA_SDP_MRDMA_ig.v, NV_NVDLA_SDP_RDMA_ig.v,
 * NV_NVDLA_SDP_WDMA_cmd.v): an atom is M = NVDLA_MEMORY_ATOMIC_SIZE bytes
 * and holds E = M / bytes elements (M int8, M/2 int16); surface s holds
 * channels [s*E, s*E+E); element (c, y, x) is at base + (c/E)*surface_stride
 * + y*line_stride + x*M + (c%E)*bytes.  Base addresses and strides drop
 * their low log2(M) bits.  A 1x1 cube (width = height = 0) is "packed": all
 * its surfaces are one contiguous request, strides are not used.  Every atom
 * is processed and written whole: channels of the last surface beyond the
 * cube (padding) go through the pipeline with what the input holds there
 * and are written too.
 * Operands (BRDMA/NRDMA/ERDMA): PER_KERNEL = one value per channel, stored
 * contiguously; PER_ELEMENT = a cube laid out like the input with elements
 * of 1 or 2 bytes, or 2 or 4 bytes for DATA_USE=BOTH (ALU component first,
 * then MUL: NV_NVDLA_SDP_RDMA_eg.v).  One-byte operands are sign-extended.
 *
 * Modelling choices and known deviations:
 *  - SDP_RDMA registers are read from SDP_RDMA's own consumer group.
 *  - Programming the hardware cannot run (it would hang or is not supported
 *    by NVDLA: precision conversion, winograd, FP16, an operand stream the
 *    SDP reads while SDP_RDMA does not provide it, cube sizes that differ
 *    between SDP and SDP_RDMA) returns DLASIM_ERR_PROG / _UNSUPPORTED.
 *  - Operand streams SDP_RDMA would fetch but the data path never consumes
 *    are not read (the hardware would stall).
 *  - INT16 needs a configuration whose feature data types include INT16;
 *    an M-byte atom then holds M/2 int16 elements, as the RTL sizes an
 *    int16 surface (not M as cmod's ELEMENT_PER_ATOM_INT16 says).
 *  - Flying input (CACC): channels the cube does not provide are 0.
 *    The cube sent to PDP has the padded channel count (a multiple of the
 *    channels per atom) so PDP can process whole atoms too.
 *  - Batch (D_FEATURE_MODE_CFG.BATCH_NUMBER, only where the configuration
 *    has NVDLA_BATCH_ENABLE; the driver programs the same value in SDP_RDMA,
 *    checked when SDP_RDMA is used): batch b is written at D_DST_BASE_ADDR
 *    + b * D_DST_BATCH_STRIDE with the usual line/surface strides, a 1x1
 *    cube then not packed (NV_NVDLA_SDP_WDMA_cmd.v base_addr_batch,
 *    cfg_mode_1x1_nbatch).  Flying input: batch b of CACC's cube.  Memory
 *    input is read once and the result written to every batch, as the
 *    MRDMA re-reads the same lines for each batch (NV_NVDLA_SDP_MRDMA_ig.v
 *    has no batch stride).  Operands from BRDMA/NRDMA/ERDMA are the same
 *    for every batch: SDP_RDMA fetches them once and replays each one per
 *    batch (NV_NVDLA_SDP_RDMA_EG_ro.v count_b); its D_*_BATCH_STRIDE
 *    registers feed no logic.  Output to PDP with batches is refused
 *    (DLASIM_ERR_PROG): PDP has no batch dimension.  Perf counters count
 *    each batch for flying input but one pass for memory input.
 *  - LUT: the RTL is followed where it differs from cmod (exponent
 *    underflow bias is 1 << offset also for offset 0; log2 of a difference
 *    >= 2^31; 9-bit index subtraction).
 *  - Hardware status registers (group of the layer) at the end of a layer:
 *    D_STATUS.STATUS_UNEQUAL = some output element written towards memory
 *    is non-zero (NV_NVDLA_SDP_WDMA_DAT_out.v; cmod sets it in EQL mode
 *    only, where nothing is written); D_PERF_OUT_SATURATION and
 *    D_PERF_LUT_* count every lane (padding included) only when
 *    D_PERF_ENABLE.PERF_SAT_EN / PERF_LUT_EN is set, else they are 0;
 *    stall counters and FP16 NaN/Inf counters are 0.
 *  - Host execution (the values are those of one element at a time in any
 *    order: every stage is element-wise).  A layer is processed in runs of
 *    elements, in CACC's planar order for flying input (read in place; one
 *    run per surface, or per channel when a per-kernel operand makes it a
 *    constant of the run) and in memory's atom order otherwise.  Each stage
 *    is a loop over a run: BS, BN and the output converter as the
 *    branch-free, vectorised lane loops of src/arith/sdp_lanes.c (the same
 *    arithmetic for every configuration, checked against the per-element
 *    helpers of sdp_arith.h by tests/unit/test_lanes.c); EW and the LUT per
 *    element.  Where the ranges allow it (decided per run from its values,
 *    or per layer from the input width and the operands), BS/BN and the
 *    converter run fused in one pass of 32-bit lanes.  Flying layers to
 *    memory with register/per-kernel operands split their channels over the
 *    device's worker team; layers from memory to memory whose output
 *    overlaps nothing they read split their surfaces (the calling thread
 *    reads every surface first and writes them in order after); the rest
 *    (output to PDP, flying batches, per-element operands with flying
 *    input, overlapping output) one surface at a time on one thread.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arith/sdp_arith.h"
#include "arith/atoms.h"
#include "arith/sdp_lanes.h"
#include "sim/core/budget.h"
#include "sim/core/mem.h"
#include "common/team.h"
#include "regs/regdb.h"
#include "sim/nvdla/cbuf.h"
#include "sim/nvdla/dla.h"

/* ---- decoded configuration ------------------------------------------------ */

/* Operand sources of the data path. */
enum sdp_src { SRC_BS_ALU, SRC_BS_MUL, SRC_BN_ALU, SRC_BN_MUL, SRC_EW_ALU, SRC_EW_MUL, SRC_N };

/* One SDP_RDMA operand stream (BRDMA, NRDMA or ERDMA) as the DMA reads it. */
struct sdp_stream {
    int port;
    uint64_t base, line_stride, surf_stride;
    unsigned size;       /* bytes per component: 1 or 2 */
    unsigned elem_bytes; /* size, or 2 * size with DATA_USE=BOTH */
    unsigned off[2];     /* byte offset of the ALU [0] / MUL [1] component */
    int per_kernel;
};

/* BS or BN (X stage). */
struct sdp_x_cfg {
    int en;
    int alu_bypass, alu_algo, alu_mem;
    unsigned alu_shift;
    int32_t alu_op;
    int mul_bypass, mul_mem, prelu;
    unsigned mul_shift;
    int32_t mul_op;
    int relu_bypass;
};

/* EW operand converter. */
struct sdp_ew_cvt {
    int bypass;
    int32_t offset;
    int32_t scale;
    unsigned truncate;
};

/* EW (Y stage). */
struct sdp_ew_cfg {
    int en;
    int alu_bypass, alu_algo, alu_mem;
    int32_t alu_op;
    struct sdp_ew_cvt alu_cvt;
    int mul_bypass, mul_mem, prelu;
    int32_t mul_op;
    struct sdp_ew_cvt mul_cvt;
    unsigned truncate;
    int lut;
};

struct sdp_lut_cfg {
    int le_expn;
    int uflow_lo, oflow_lo, hybrid_lo; /* priority: 1 = LO table */
    int le_offset, le_sel, lo_sel;     /* signed 8-bit */
    int32_t le_start, le_end, lo_start, lo_end;
    int16_t le_uscale, le_oscale, lo_uscale, lo_oscale;
    int le_ushift, le_oshift, lo_ushift, lo_oshift; /* signed 5-bit */
    uint32_t expn_bias;
    const struct dla_lut_ram *ram;
};

struct sdp_cfg {
    uint32_t w, h, c;
    unsigned atom;  /* NVDLA_MEMORY_ATOMIC_SIZE (M) */
    unsigned bpe;   /* bytes per element: 1 (int8) or 2 (int16) */
    unsigned epa;   /* elements per atom */
    uint32_t nsurf; /* surfaces (atoms along C) */
    int packed;     /* 1x1 cube: surfaces contiguous */
    unsigned batches;
    uint64_t addr_mask;

    int flying;
    int src_port;
    uint64_t src_base, src_line, src_surf;

    struct sdp_x_cfg x[2];
    struct sdp_ew_cfg ew;
    struct sdp_lut_cfg lut;
    int eql;

    /* operand streams: 0 BRDMA, 1 NRDMA, 2 ERDMA */
    struct sdp_stream stream[3];
    int src_used[SRC_N];

    int32_t cvt_offset;
    int32_t cvt_scale;
    unsigned cvt_shift;
    unsigned out_bits; /* 8 or 16 */

    /* the same, prepared for the lane loops */
    enum dla_lanes_isa isa;
    struct sdp_lane_x_cfg lane_x[2];
    struct sdp_lane_cvt lane_cvt;
    int32_t reg_op[SRC_N]; /* operand of each source when not read from memory */

    int to_pdp;
    int dst_port;
    uint64_t dst_base, dst_line, dst_surf, dst_batch;

    int addend_form; /* a residual addition fused after a convolution: see addend_form_of */

    int perf_sat, perf_lut;

    struct dla_work work; /* what the layer reads, writes and computes */
};

/* Counters accumulated over a layer. */
struct sdp_stats {
    uint64_t sat;
    uint64_t lut_uflow, lut_oflow, lut_hybrid, lut_le_hit, lut_lo_hit;
    int unequal;
};

/* A part's statistics (a team item's, a band seat's) added to the layer's. */
static void stats_add(struct sdp_stats *to, const struct sdp_stats *part)
{
    to->sat += part->sat;
    to->lut_uflow += part->lut_uflow;
    to->lut_oflow += part->lut_oflow;
    to->lut_hybrid += part->lut_hybrid;
    to->lut_le_hit += part->lut_le_hit;
    to->lut_lo_hit += part->lut_lo_hit;
    to->unequal |= part->unequal;
}

/* ---- register access -------------------------------------------------------- */

/* The decode's registers: SDP's in the group executed, SDP_RDMA's in its
 * own consumer group, copied as arrays (dla_unit_values) up to each unit's
 * last register. */
#define SDP_WORDS (DLA_REG_WORD(NVDLA_SDP_D_PERF_LUT_LO_HIT_0) + 1u)
#define SDP_RDMA_WORDS (DLA_REG_WORD(NVDLA_SDP_RDMA_D_PERF_ERDMA_READ_STALL_0) + 1u)
/* Both units' words as one array too (the decode cache's key), padded with
 * zeros to a multiple of 8 words. */
#define SDP_KEY_WORDS ((SDP_WORDS + SDP_RDMA_WORDS + 7u) / 8u * 8u)
struct sdp_regs {
    union {
        struct {
            uint32_t sdp[SDP_WORDS], rdma[SDP_RDMA_WORDS];
        };
        uint32_t word[SDP_KEY_WORDS];
    };
};
_Static_assert(sizeof(struct sdp_regs) == SDP_KEY_WORDS * sizeof(uint32_t),
               "struct sdp_regs: the two units' words then the padding, nothing between");

static void sdp_regs_of(const struct dla_dev *d, unsigned g, struct sdp_regs *r)
{
    dla_unit_values(d, NVDLA_UNIT_SDP, g, r->sdp, SDP_WORDS);
    dla_unit_values(d, NVDLA_UNIT_SDP_RDMA, dla_consumer(d, NVDLA_UNIT_SDP_RDMA), r->rdma,
                    SDP_RDMA_WORDS);
    for (unsigned k = SDP_WORDS + SDP_RDMA_WORDS; k < SDP_KEY_WORDS; k++) {
        r->word[k] = 0;
    }
}

#define SDP_R(r, REG) DLA_REG_AT((r)->sdp, NVDLA_SDP_##REG)
#define RDMA_R(r, REG) DLA_REG_AT((r)->rdma, NVDLA_SDP_RDMA_##REG)
#define SDP_F(r, REG, FIELD) DLA_FIELD(SDP_R(r, REG), NVDLA_SDP_##REG##_##FIELD)
#define SDP_FLD(v, REG, FIELD) DLA_FIELD((v), REG##_##FIELD)

static uint64_t addr_mask_of(const struct dla_config *cfg)
{
    return cfg->memif_address_width >= 64 ? UINT64_MAX
                                          : ((UINT64_C(1) << cfg->memif_address_width) - 1);
}

/* 64-bit address from HIGH/LOW, HIGH only where the address is wider than
 * 32 bits; the low log2(M) bits are dropped (NV_NVDLA_SDP_rdma.v). */
static uint64_t atom_addr(const struct dla_config *cfg, uint32_t high, uint32_t low)
{
    uint64_t a = cfg->memif_address_width > 32 ? dla_addr(high, low) : low;
    return a & ~(uint64_t)(cfg->memory_atomic_size - 1) & addr_mask_of(cfg);
}

static uint64_t atom_stride(const struct dla_config *cfg, uint32_t v)
{
    return v & ~(uint32_t)(cfg->memory_atomic_size - 1);
}

/* The registers that say which operands the data path reads from memory:
 * the three stages' CFG and their ALU/MUL CFG. */
struct sdp_use_regs {
    uint32_t bs, bn, ew, bs_alu, bs_mul, bn_alu, bn_mul, ew_alu, ew_mul;
};

/* The struct's registers in its order, each read by GET(x, REG). */
#define SDP_USE_REGS(GET, x)                                                               \
    (struct sdp_use_regs){GET(x, D_DP_BS_CFG_0),     GET(x, D_DP_BN_CFG_0),                \
                          GET(x, D_DP_EW_CFG_0),     GET(x, D_DP_BS_ALU_CFG_0),            \
                          GET(x, D_DP_BS_MUL_CFG_0), GET(x, D_DP_BN_ALU_CFG_0),            \
                          GET(x, D_DP_BN_MUL_CFG_0), GET(x, D_DP_EW_ALU_CFG_0),            \
                          GET(x, D_DP_EW_MUL_CFG_0)}

static struct sdp_use_regs use_regs_of(const struct sdp_regs *r)
{
    return SDP_USE_REGS(SDP_R, r);
}

/* Which operands the data path reads from memory (only stages the
 * configuration has, not bypassed, with SRC = MEM). */
static void core_mem_use(const struct dla_dev *d, const struct sdp_use_regs *r, int use[SRC_N])
{
    const struct dla_config *cfg = dla_cfg(d);
    int bs_en = cfg->sdp_bs_enable && !SDP_FLD(r->bs, NVDLA_SDP_D_DP_BS_CFG_0, BS_BYPASS);
    int bn_en = cfg->sdp_bn_enable && !SDP_FLD(r->bn, NVDLA_SDP_D_DP_BN_CFG_0, BN_BYPASS);
    int ew_en = cfg->sdp_ew_enable && !SDP_FLD(r->ew, NVDLA_SDP_D_DP_EW_CFG_0, EW_BYPASS);

    use[SRC_BS_ALU] = bs_en && !SDP_FLD(r->bs, NVDLA_SDP_D_DP_BS_CFG_0, BS_ALU_BYPASS) &&
                      SDP_FLD(r->bs_alu, NVDLA_SDP_D_DP_BS_ALU_CFG_0, BS_ALU_SRC);
    use[SRC_BS_MUL] = bs_en && !SDP_FLD(r->bs, NVDLA_SDP_D_DP_BS_CFG_0, BS_MUL_BYPASS) &&
                      SDP_FLD(r->bs_mul, NVDLA_SDP_D_DP_BS_MUL_CFG_0, BS_MUL_SRC);
    use[SRC_BN_ALU] = bn_en && !SDP_FLD(r->bn, NVDLA_SDP_D_DP_BN_CFG_0, BN_ALU_BYPASS) &&
                      SDP_FLD(r->bn_alu, NVDLA_SDP_D_DP_BN_ALU_CFG_0, BN_ALU_SRC);
    use[SRC_BN_MUL] = bn_en && !SDP_FLD(r->bn, NVDLA_SDP_D_DP_BN_CFG_0, BN_MUL_BYPASS) &&
                      SDP_FLD(r->bn_mul, NVDLA_SDP_D_DP_BN_MUL_CFG_0, BN_MUL_SRC);
    use[SRC_EW_ALU] = ew_en && !SDP_FLD(r->ew, NVDLA_SDP_D_DP_EW_CFG_0, EW_ALU_BYPASS) &&
                      SDP_FLD(r->ew_alu, NVDLA_SDP_D_DP_EW_ALU_CFG_0, EW_ALU_SRC);
    use[SRC_EW_MUL] = ew_en && !SDP_FLD(r->ew, NVDLA_SDP_D_DP_EW_CFG_0, EW_MUL_BYPASS) &&
                      SDP_FLD(r->ew_mul, NVDLA_SDP_D_DP_EW_MUL_CFG_0, EW_MUL_SRC);
}

int dla_sdp_flying(const struct dla_dev *d, unsigned group)
{
    return DLA_REG_FIELD(d, group, NVDLA_SDP_D_FEATURE_MODE_CFG_0, FLYING_MODE) ==
           NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON;
}

int dla_sdp_output_to_pdp(const struct dla_dev *d, unsigned group)
{
    return DLA_REG_FIELD(d, group, NVDLA_SDP_D_FEATURE_MODE_CFG_0, OUTPUT_DST) ==
           NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST_PDP;
}

/* Bytes from a cube's first byte past its last: nsurf surfaces of h lines
 * of line_bytes, every batch; a packed cube (1x1, one batch) its surfaces'
 * atoms back to back. */
static uint64_t cube_extent(uint64_t line_bytes, uint64_t h, uint64_t nsurf, int packed,
                            uint64_t line_stride, uint64_t surf_stride, uint64_t batches,
                            uint64_t batch_stride)
{
    if (packed && batches == 1) {
        return nsurf * line_bytes;
    }
    return (nsurf - 1) * surf_stride + (h - 1) * line_stride + (batches - 1) * batch_stride +
           line_bytes;
}

/* Whether the convolution's SDP in `group` writes nothing of [lo, hi) on
 * memory port `port` (a layer's input read in place while the layer runs:
 * cdma.c atoms_view): its output cube's span, from its first byte to its
 * last over every batch (cube_extent, as cube_span), lies apart or on the other
 * port.  0 when its output goes to PDP (PDP's cube), or when the span
 * wraps at the address width. */
int dla_sdp_writes_apart(const struct dla_dev *d, unsigned group, int port, uint64_t lo,
                         uint64_t hi)
{
    if (dla_sdp_output_to_pdp(d, group)) {
        return 0;
    }
    const struct dla_config *cfg = dla_cfg(d);
    const uint64_t mask = addr_mask_of(cfg);
    if (dla_ram_port(DLA_REG_FIELD(d, group, NVDLA_SDP_D_DST_DMA_CFG_0, DST_RAM_TYPE)) != port) {
        return 1;
    }
    const unsigned bpe = DLA_REG_FIELD(d, group, NVDLA_SDP_D_DATA_FORMAT_0, PROC_PRECISION) ==
                                 NVDLA_SDP_D_DATA_FORMAT_0_PROC_PRECISION_INT16
                             ? 2u
                             : 1u;
    const uint64_t w = DLA_REG_FIELD(d, group, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, WIDTH) + 1ull;
    const uint64_t h = DLA_REG_FIELD(d, group, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1ull;
    const uint64_t ch = DLA_REG_FIELD(d, group, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1ull;
    const uint64_t batches =
        cfg->batch_enable
            ? DLA_REG_FIELD(d, group, NVDLA_SDP_D_FEATURE_MODE_CFG_0, BATCH_NUMBER) + 1ull
            : 1;
    const uint64_t epa = cfg->memory_atomic_size / bpe, nsurf = (ch + epa - 1) / epa;
    const uint64_t base = atom_addr(cfg, dla_reg(d, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, group),
                                    dla_reg(d, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, group));
    const uint64_t line = atom_stride(cfg, dla_reg(d, NVDLA_SDP_D_DST_LINE_STRIDE_0, group));
    const uint64_t surf = atom_stride(cfg, dla_reg(d, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, group));
    const uint64_t batch = atom_stride(cfg, dla_reg(d, NVDLA_SDP_D_DST_BATCH_STRIDE_0, group));
    const uint64_t end = cube_extent(w * cfg->memory_atomic_size, h, nsurf, w == 1 && h == 1,
                                     line, surf, batches, batch);
    return base + end >= base && base + end - 1 <= mask && (base + end <= lo || hi <= base);
}

/* ref: cmod/sdp/NV_NVDLA_sdp.cpp SdpDataOperationThread (is_rdma_enabled ||
 * is_bs/bn/ew_has_rdma). */
int dla_sdp_needs_rdma(const struct dla_dev *d, unsigned group)
{
    int use[SRC_N];
    if (!dla_sdp_flying(d, group)) {
        return 1;
    }
    /* nine registers, not the decode's copy of both units (the device asks
     * this once a layer) */
#define GROUP_REG(g, REG) dla_reg(d, NVDLA_SDP_##REG, g)
    const struct sdp_use_regs r = SDP_USE_REGS(GROUP_REG, group);
#undef GROUP_REG
    core_mem_use(d, &r, use);
    for (int i = 0; i < SRC_N; i++) {
        if (use[i]) {
            return 1;
        }
    }
    return 0;
}

/* ---- decode ----------------------------------------------------------------- */

static void decode_x(const struct dla_dev *d, const struct sdp_regs *r, int bn, struct sdp_x_cfg *x)
{
    const struct dla_config *cfg = dla_cfg(d);
    if (!bn) {
        uint32_t v = SDP_R(r, D_DP_BS_CFG_0);
        uint32_t a = SDP_R(r, D_DP_BS_ALU_CFG_0);
        uint32_t m = SDP_R(r, D_DP_BS_MUL_CFG_0);
        x->en = cfg->sdp_bs_enable && !SDP_FLD(v, NVDLA_SDP_D_DP_BS_CFG_0, BS_BYPASS);
        x->alu_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BS_CFG_0, BS_ALU_BYPASS);
        x->alu_algo = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BS_CFG_0, BS_ALU_ALGO);
        x->mul_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BS_CFG_0, BS_MUL_BYPASS);
        x->prelu = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BS_CFG_0, BS_MUL_PRELU);
        x->relu_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BS_CFG_0, BS_RELU_BYPASS);
        x->alu_mem = (int)SDP_FLD(a, NVDLA_SDP_D_DP_BS_ALU_CFG_0, BS_ALU_SRC);
        x->alu_shift = SDP_FLD(a, NVDLA_SDP_D_DP_BS_ALU_CFG_0, BS_ALU_SHIFT_VALUE) & 63u;
        x->mul_mem = (int)SDP_FLD(m, NVDLA_SDP_D_DP_BS_MUL_CFG_0, BS_MUL_SRC);
        /* the 8-bit field feeds a 6-bit shifter (NV_NVDLA_SDP_core.v) */
        x->mul_shift = SDP_FLD(m, NVDLA_SDP_D_DP_BS_MUL_CFG_0, BS_MUL_SHIFT_VALUE) & 63u;
        x->alu_op = dla_sext(SDP_F(r, D_DP_BS_ALU_SRC_VALUE_0, BS_ALU_OPERAND), 16);
        x->mul_op = dla_sext(SDP_F(r, D_DP_BS_MUL_SRC_VALUE_0, BS_MUL_OPERAND), 16);
    } else {
        uint32_t v = SDP_R(r, D_DP_BN_CFG_0);
        uint32_t a = SDP_R(r, D_DP_BN_ALU_CFG_0);
        uint32_t m = SDP_R(r, D_DP_BN_MUL_CFG_0);
        x->en = cfg->sdp_bn_enable && !SDP_FLD(v, NVDLA_SDP_D_DP_BN_CFG_0, BN_BYPASS);
        x->alu_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BN_CFG_0, BN_ALU_BYPASS);
        x->alu_algo = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BN_CFG_0, BN_ALU_ALGO);
        x->mul_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BN_CFG_0, BN_MUL_BYPASS);
        x->prelu = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BN_CFG_0, BN_MUL_PRELU);
        x->relu_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_BN_CFG_0, BN_RELU_BYPASS);
        x->alu_mem = (int)SDP_FLD(a, NVDLA_SDP_D_DP_BN_ALU_CFG_0, BN_ALU_SRC);
        x->alu_shift = SDP_FLD(a, NVDLA_SDP_D_DP_BN_ALU_CFG_0, BN_ALU_SHIFT_VALUE) & 63u;
        x->mul_mem = (int)SDP_FLD(m, NVDLA_SDP_D_DP_BN_MUL_CFG_0, BN_MUL_SRC);
        x->mul_shift = SDP_FLD(m, NVDLA_SDP_D_DP_BN_MUL_CFG_0, BN_MUL_SHIFT_VALUE) & 63u;
        x->alu_op = dla_sext(SDP_F(r, D_DP_BN_ALU_SRC_VALUE_0, BN_ALU_OPERAND), 16);
        x->mul_op = dla_sext(SDP_F(r, D_DP_BN_MUL_SRC_VALUE_0, BN_MUL_OPERAND), 16);
    }
}

static void decode_ew(const struct dla_dev *d, const struct sdp_regs *r, struct sdp_ew_cfg *e)
{
    const struct dla_config *cfg = dla_cfg(d);
    uint32_t v = SDP_R(r, D_DP_EW_CFG_0);
    uint32_t a = SDP_R(r, D_DP_EW_ALU_CFG_0);
    uint32_t m = SDP_R(r, D_DP_EW_MUL_CFG_0);
    e->en = cfg->sdp_ew_enable && !SDP_FLD(v, NVDLA_SDP_D_DP_EW_CFG_0, EW_BYPASS);
    e->alu_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_EW_CFG_0, EW_ALU_BYPASS);
    e->alu_algo = (int)SDP_FLD(v, NVDLA_SDP_D_DP_EW_CFG_0, EW_ALU_ALGO);
    e->mul_bypass = (int)SDP_FLD(v, NVDLA_SDP_D_DP_EW_CFG_0, EW_MUL_BYPASS);
    e->prelu = (int)SDP_FLD(v, NVDLA_SDP_D_DP_EW_CFG_0, EW_MUL_PRELU);
    /* without NVDLA_SDP_LUT_ENABLE the LUT is tied to bypass
     * (NV_NVDLA_SDP_CORE_y.v: cfg_ew_lut_bypass <= 1) */
    e->lut = cfg->sdp_lut_enable && !SDP_FLD(v, NVDLA_SDP_D_DP_EW_CFG_0, EW_LUT_BYPASS);
    e->alu_mem = (int)SDP_FLD(a, NVDLA_SDP_D_DP_EW_ALU_CFG_0, EW_ALU_SRC);
    e->alu_cvt.bypass = (int)SDP_FLD(a, NVDLA_SDP_D_DP_EW_ALU_CFG_0, EW_ALU_CVT_BYPASS);
    e->mul_mem = (int)SDP_FLD(m, NVDLA_SDP_D_DP_EW_MUL_CFG_0, EW_MUL_SRC);
    e->mul_cvt.bypass = (int)SDP_FLD(m, NVDLA_SDP_D_DP_EW_MUL_CFG_0, EW_MUL_CVT_BYPASS);
    e->alu_op = (int32_t)SDP_R(r, D_DP_EW_ALU_SRC_VALUE_0);
    e->mul_op = (int32_t)SDP_R(r, D_DP_EW_MUL_SRC_VALUE_0);
    e->alu_cvt.offset = (int32_t)SDP_R(r, D_DP_EW_ALU_CVT_OFFSET_VALUE_0);
    e->alu_cvt.scale = dla_sext(SDP_F(r, D_DP_EW_ALU_CVT_SCALE_VALUE_0,
                                              EW_ALU_CVT_SCALE), 16);
    e->alu_cvt.truncate = SDP_F(r, D_DP_EW_ALU_CVT_TRUNCATE_VALUE_0,
                                        EW_ALU_CVT_TRUNCATE);
    e->mul_cvt.offset = (int32_t)SDP_R(r, D_DP_EW_MUL_CVT_OFFSET_VALUE_0);
    e->mul_cvt.scale = dla_sext(SDP_F(r, D_DP_EW_MUL_CVT_SCALE_VALUE_0,
                                              EW_MUL_CVT_SCALE), 16);
    e->mul_cvt.truncate = SDP_F(r, D_DP_EW_MUL_CVT_TRUNCATE_VALUE_0,
                                        EW_MUL_CVT_TRUNCATE);
    e->truncate = SDP_F(r, D_DP_EW_TRUNCATE_VALUE_0, EW_TRUNCATE);
}

/* S_LUT_* are single registers (not per group). */
static void decode_lut(const struct dla_dev *d, const struct sdp_regs *r, struct sdp_lut_cfg *l)
{
    uint32_t c = SDP_R(r, S_LUT_CFG_0);
    uint32_t info = SDP_R(r, S_LUT_INFO_0);
    uint32_t les = SDP_R(r, S_LUT_LE_SLOPE_SCALE_0);
    uint32_t lesh = SDP_R(r, S_LUT_LE_SLOPE_SHIFT_0);
    uint32_t los = SDP_R(r, S_LUT_LO_SLOPE_SCALE_0);
    uint32_t losh = SDP_R(r, S_LUT_LO_SLOPE_SHIFT_0);

    l->le_expn = SDP_FLD(c, NVDLA_SDP_S_LUT_CFG_0, LUT_LE_FUNCTION) ==
                 NVDLA_SDP_S_LUT_CFG_0_LUT_LE_FUNCTION_EXPONENT;
    l->uflow_lo = (int)SDP_FLD(c, NVDLA_SDP_S_LUT_CFG_0, LUT_UFLOW_PRIORITY);
    l->oflow_lo = (int)SDP_FLD(c, NVDLA_SDP_S_LUT_CFG_0, LUT_OFLOW_PRIORITY);
    l->hybrid_lo = (int)SDP_FLD(c, NVDLA_SDP_S_LUT_CFG_0, LUT_HYBRID_PRIORITY);
    l->le_offset = dla_sext(SDP_FLD(info, NVDLA_SDP_S_LUT_INFO_0, LUT_LE_INDEX_OFFSET), 8);
    l->le_sel = dla_sext(SDP_FLD(info, NVDLA_SDP_S_LUT_INFO_0, LUT_LE_INDEX_SELECT), 8);
    l->lo_sel = dla_sext(SDP_FLD(info, NVDLA_SDP_S_LUT_INFO_0, LUT_LO_INDEX_SELECT), 8);
    l->le_start = (int32_t)SDP_R(r, S_LUT_LE_START_0);
    l->le_end = (int32_t)SDP_R(r, S_LUT_LE_END_0);
    l->lo_start = (int32_t)SDP_R(r, S_LUT_LO_START_0);
    l->lo_end = (int32_t)SDP_R(r, S_LUT_LO_END_0);
    l->le_uscale = (int16_t)dla_sext(SDP_FLD(les, NVDLA_SDP_S_LUT_LE_SLOPE_SCALE_0, LUT_LE_SLOPE_UFLOW_SCALE), 16);
    l->le_oscale = (int16_t)dla_sext(SDP_FLD(les, NVDLA_SDP_S_LUT_LE_SLOPE_SCALE_0, LUT_LE_SLOPE_OFLOW_SCALE), 16);
    l->lo_uscale = (int16_t)dla_sext(SDP_FLD(los, NVDLA_SDP_S_LUT_LO_SLOPE_SCALE_0, LUT_LO_SLOPE_UFLOW_SCALE), 16);
    l->lo_oscale = (int16_t)dla_sext(SDP_FLD(los, NVDLA_SDP_S_LUT_LO_SLOPE_SCALE_0, LUT_LO_SLOPE_OFLOW_SCALE), 16);
    l->le_ushift = dla_sext(SDP_FLD(lesh, NVDLA_SDP_S_LUT_LE_SLOPE_SHIFT_0, LUT_LE_SLOPE_UFLOW_SHIFT), 5);
    l->le_oshift = dla_sext(SDP_FLD(lesh, NVDLA_SDP_S_LUT_LE_SLOPE_SHIFT_0, LUT_LE_SLOPE_OFLOW_SHIFT), 5);
    l->lo_ushift = dla_sext(SDP_FLD(losh, NVDLA_SDP_S_LUT_LO_SLOPE_SHIFT_0, LUT_LO_SLOPE_UFLOW_SHIFT), 5);
    l->lo_oshift = dla_sext(SDP_FLD(losh, NVDLA_SDP_S_LUT_LO_SLOPE_SHIFT_0, LUT_LO_SLOPE_OFLOW_SHIFT), 5);
    /* ref: NV_NVDLA_SDP_CORE_Y_lut.v out_bias: exponent LE underflow only,
     * offset[7] ? 0 : 1 << offset (32-bit, 0 beyond bit 31) */
    l->expn_bias = (l->le_offset < 0 || l->le_offset >= 32) ? 0u
                                                            : (UINT32_C(1) << l->le_offset);
    l->ram = dla_lut(d, DLA_LUT_SDP);
}

static const char *const src_name[SRC_N] = {"BS ALU", "BS MUL", "BN ALU",
                                            "BN MUL", "EW ALU", "EW MUL"};

/* Decode one of BRDMA (0), NRDMA (1), ERDMA (2) and check it delivers the
 * operands the data path reads. */
static int decode_stream(struct dla_dev *d, const struct sdp_regs *r, int which, struct sdp_cfg *c)
{
    static const char *const dma_name[3] = {"BRDMA", "NRDMA", "ERDMA"};
    static const char *const reg_name[3] = {"D_BRDMA_CFG_0", "D_NRDMA_CFG_0", "D_ERDMA_CFG_0"};
    const struct dla_config *cfg = dla_cfg(d);
    struct sdp_dma_fields {
        uint32_t cfgv, line, surf;
    } f; /* (the base address: decode_addresses) */
    if (which == 0) {
        f.cfgv = RDMA_R(r, D_BRDMA_CFG_0);
        f.line = RDMA_R(r, D_BS_LINE_STRIDE_0);
        f.surf = RDMA_R(r, D_BS_SURFACE_STRIDE_0);
    } else if (which == 1) {
        f.cfgv = RDMA_R(r, D_NRDMA_CFG_0);
        f.line = RDMA_R(r, D_BN_LINE_STRIDE_0);
        f.surf = RDMA_R(r, D_BN_SURFACE_STRIDE_0);
    } else {
        f.cfgv = RDMA_R(r, D_ERDMA_CFG_0);
        f.line = RDMA_R(r, D_EW_LINE_STRIDE_0);
        f.surf = RDMA_R(r, D_EW_SURFACE_STRIDE_0);
    }
    /* the three *RDMA_CFG registers share one field layout */
    unsigned disable = SDP_FLD(f.cfgv, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DISABLE);
    unsigned use = SDP_FLD(f.cfgv, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DATA_USE);
    unsigned size = SDP_FLD(f.cfgv, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DATA_SIZE);
    unsigned mode = SDP_FLD(f.cfgv, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DATA_MODE);
    unsigned ram = SDP_FLD(f.cfgv, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_RAM_TYPE);
    int alu = c->src_used[2 * which];
    int mul = c->src_used[2 * which + 1];
    int both = use == NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_BOTH;
    int gives_alu = both || use == NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_ALU;
    int gives_mul = both || use == NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_MUL;
    struct sdp_stream *s = &c->stream[which];

    if (!alu && !mul) {
        return 0;
    }
    if (disable) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP_RDMA: %s.%s_DISABLE=1 but SDP reads the %s operand from memory",
                         reg_name[which], dma_name[which], src_name[alu ? 2 * which : 2 * which + 1]);
    }
    if ((alu && !gives_alu) || (mul && !gives_mul) || use > 2) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP_RDMA: %s.%s_DATA_USE=%u does not provide the %s operand SDP reads "
                         "from memory",
                         reg_name[which], dma_name[which], use,
                         src_name[(alu && !gives_alu) ? 2 * which : 2 * which + 1]);
    }
    if (c->bpe == 2 && size == NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_SIZE_ONE_BYTE) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "SDP_RDMA: %s.%s_DATA_SIZE=ONE_BYTE with INT16 processing is not "
                         "modelled",
                         reg_name[which], dma_name[which]);
    }
    s->port = dla_ram_port(ram);
    s->line_stride = atom_stride(cfg, f.line);
    s->surf_stride = atom_stride(cfg, f.surf);
    s->size = size ? 2u : 1u;
    s->elem_bytes = both ? 2u * s->size : s->size;
    s->off[0] = 0;
    s->off[1] = both ? s->size : 0;
    s->per_kernel = mode == NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_KERNEL;
    return 0;
}

static int check_precision(struct dla_dev *d, const char *what, uint32_t p)
{
    const struct dla_config *cfg = dla_cfg(d);
    if (p == NVDLA_SDP_D_DATA_FORMAT_0_PROC_PRECISION_INT8) {
        return 0;
    }
    if (p == NVDLA_SDP_D_DATA_FORMAT_0_PROC_PRECISION_INT16) {
        if (cfg->feature_data_type & DLA_TYPE_INT16) {
            return 0;
        }
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP: %s=1 (INT16) but this configuration's feature data types have "
                         "no INT16",
                         what);
    }
    return dla_error(d, DLASIM_ERR_UNSUPPORTED, "SDP: %s=%u (%s) is not modelled", what, p,
                     p == 2 ? "FP16" : "reserved");
}

static int decode_rdma(struct dla_dev *d, const struct sdp_regs *r, struct sdp_cfg *c, uint32_t proc)
{
    const struct dla_config *cfg = dla_cfg(d);
    uint32_t w = RDMA_R(r, D_DATA_CUBE_WIDTH_0);
    uint32_t h = RDMA_R(r, D_DATA_CUBE_HEIGHT_0);
    uint32_t ch = RDMA_R(r, D_DATA_CUBE_CHANNEL_0);
    uint32_t fm = RDMA_R(r, D_FEATURE_MODE_CFG_0);
    w = SDP_FLD(w, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, WIDTH) + 1;
    h = SDP_FLD(h, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1;
    ch = SDP_FLD(ch, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1;
    if (w != c->w || h != c->h || ch != c->c) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP_RDMA: D_DATA_CUBE_WIDTH/HEIGHT/CHANNEL give %ux%ux%u but SDP's "
                         "give %ux%ux%u",
                         w, h, ch, c->w, c->h, c->c);
    }
    uint32_t rdma_batches =
        cfg->batch_enable ? SDP_FLD(fm, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, BATCH_NUMBER) + 1 : 1;
    if (rdma_batches != c->batches) {
        /* the RDMA replays every line / operand once per batch
         * (NV_NVDLA_SDP_MRDMA_ig.v, NV_NVDLA_SDP_RDMA_EG_ro.v count_b) */
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP_RDMA: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=%u differs from SDP "
                         "D_FEATURE_MODE_CFG_0.BATCH_NUMBER=%u",
                         rdma_batches - 1, c->batches - 1);
    }
    uint32_t in_p = SDP_FLD(fm, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, IN_PRECISION);
    uint32_t proc_p = SDP_FLD(fm, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, PROC_PRECISION);
    if (proc_p != proc) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP_RDMA: D_FEATURE_MODE_CFG_0.PROC_PRECISION=%u differs from "
                         "SDP D_DATA_FORMAT_0.PROC_PRECISION=%u",
                         proc_p, proc);
    }
    if (!c->flying) {
        if (SDP_FLD(fm, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0, FLYING_MODE) !=
            NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_OFF) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "SDP_RDMA: D_FEATURE_MODE_CFG_0.FLYING_MODE=ON but SDP reads its "
                             "input from memory (SDP D_FEATURE_MODE_CFG_0.FLYING_MODE=OFF)");
        }
        if (in_p != proc_p) {
            /* ref: cmod NV_NVDLA_sdp.cpp: "precision conversion is not supported" */
            return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                             "SDP_RDMA: D_FEATURE_MODE_CFG_0.IN_PRECISION=%u differs from "
                             "PROC_PRECISION=%u (precision conversion is not supported by "
                             "NVDLA)",
                             in_p, proc_p);
        }
        c->src_port = dla_ram_port(RDMA_R(r, D_SRC_DMA_CFG_0) &
                                   NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE__MASK);
        c->src_line = atom_stride(cfg, RDMA_R(r, D_SRC_LINE_STRIDE_0));
        c->src_surf = atom_stride(cfg, RDMA_R(r, D_SRC_SURFACE_STRIDE_0));
    }
    for (int i = 0; i < 3; i++) {
        int rc = decode_stream(d, r, i, c);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* BS / BN as constants of sdp_lane_x, and their register operands. */
static void prepare_lane_x(const struct sdp_x_cfg *x, struct sdp_lane_x_cfg *l, int32_t *alu_op,
                           int32_t *mul_op)
{
    enum sdp_lane_alu alu = SDP_LANE_ALU_SUM; /* SUM, and EQL which the X ALU does not have */
    if (x->alu_bypass) {
        alu = SDP_LANE_ALU_BYPASS;
    } else if (x->alu_algo == NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_ALGO_MAX) {
        alu = SDP_LANE_ALU_MAX;
    } else if (x->alu_algo == NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_ALGO_MIN) {
        alu = SDP_LANE_ALU_MIN;
    }
    dla_sdp_lane_x_init(l, alu, x->mul_bypass, x->prelu, x->relu_bypass, x->mul_shift);
    *alu_op = x->alu_bypass ? 0 : (int32_t)sdp_shl_su(x->alu_op, x->alu_shift, 32);
    *mul_op = x->mul_bypass ? 1 : x->mul_op;
}

static void prepare_lanes(struct sdp_cfg *c)
{
    c->isa = dla_lanes_best();
    for (int k = 0; k < 2; k++) {
        prepare_lane_x(&c->x[k], &c->lane_x[k], &c->reg_op[2 * k], &c->reg_op[2 * k + 1]);
    }
    c->reg_op[SRC_EW_ALU] = c->ew.alu_op;
    c->reg_op[SRC_EW_MUL] = c->ew.mul_op;
    dla_sdp_lane_cvt_init(&c->lane_cvt, c->cvt_offset, c->cvt_scale, c->cvt_shift, c->out_bits);
}

static void sdp_work_of(const struct sdp_cfg *c, struct dla_work *w);

/* A flying int8 layer in atoms of 8 (atoms8_eligible's) whose BS takes
 * register or per-kernel operands and whose BN adds an int8 operand read
 * per element by NRDMA, its multiplier bypassed with truncation 0: a
 * residual addition fused after a convolution (the shortcut added to the
 * requantised output before the ReLU, src/compiler/lower_conv.c).
 * surface_atoms8 adds the operand's bytes where they lie in memory
 * (load_addends) in its one pass to the atoms. */
static int addend_form_of(const struct sdp_cfg *c)
{
    const struct sdp_x_cfg *bn = &c->x[1];
    const struct sdp_stream *n = &c->stream[1];
    return c->flying && !c->to_pdp && c->batches == 1 && c->bpe == 1 && c->epa == 8 &&
           !c->eql && !c->ew.en && dla_lanes_avx2_up(c->isa) && c->x[0].en && bn->en &&
           !((c->src_used[SRC_BS_ALU] || c->src_used[SRC_BS_MUL]) && !c->stream[0].per_kernel) &&
           !bn->alu_bypass && bn->alu_algo == NVDLA_SDP_D_DP_BN_CFG_0_BN_ALU_ALGO_SUM &&
           c->src_used[SRC_BN_ALU] && !n->per_kernel && n->elem_bytes == 1 &&
           bn->alu_shift <= 23 && bn->mul_bypass && !c->src_used[SRC_BN_MUL] &&
           bn->mul_shift == 0;
}

/* The layer's configuration from its registers r, all but the base
 * addresses (decode_addresses). */
static int sdp_decode(struct dla_dev *d, const struct sdp_regs *r, struct sdp_cfg *c)
{
    const struct dla_config *cfg = dla_cfg(d);
    /* decode writes every field below but these, which only some layers
     * have (clearing all ~800 bytes was ~9 % of sdp_execute's own time) */
    memset(c->stream, 0, sizeof(c->stream));
    c->src_port = 0;
    c->src_base = c->src_line = c->src_surf = 0;
    c->dst_port = 0;
    c->dst_base = c->dst_line = c->dst_surf = c->dst_batch = 0;
    uint32_t fm = SDP_R(r, D_FEATURE_MODE_CFG_0);
    uint32_t df = SDP_R(r, D_DATA_FORMAT_0);
    uint32_t pe = SDP_R(r, D_PERF_ENABLE_0);
    uint32_t proc = SDP_FLD(df, NVDLA_SDP_D_DATA_FORMAT_0, PROC_PRECISION);
    uint32_t outp = SDP_FLD(df, NVDLA_SDP_D_DATA_FORMAT_0, OUT_PRECISION);
    int rc;

    c->w = SDP_F(r, D_DATA_CUBE_WIDTH_0, WIDTH) + 1;
    c->h = SDP_F(r, D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1;
    c->c = SDP_F(r, D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1;
    c->flying = SDP_FLD(fm, NVDLA_SDP_D_FEATURE_MODE_CFG_0, FLYING_MODE) ==
                NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON;
    c->to_pdp = SDP_FLD(fm, NVDLA_SDP_D_FEATURE_MODE_CFG_0, OUTPUT_DST) ==
                NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST_PDP;
    c->batches = cfg->batch_enable ? SDP_FLD(fm, NVDLA_SDP_D_FEATURE_MODE_CFG_0, BATCH_NUMBER) + 1 : 1;
    c->addr_mask = addr_mask_of(cfg);
    c->perf_sat = (int)SDP_FLD(pe, NVDLA_SDP_D_PERF_ENABLE_0, PERF_SAT_EN);
    c->perf_lut = (int)SDP_FLD(pe, NVDLA_SDP_D_PERF_ENABLE_0, PERF_LUT_EN);

    if (cfg->winograd_enable && SDP_FLD(fm, NVDLA_SDP_D_FEATURE_MODE_CFG_0, WINOGRAD)) {
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "SDP: D_FEATURE_MODE_CFG_0.WINOGRAD=ON is not modelled");
    }
    if ((rc = check_precision(d, "D_DATA_FORMAT_0.PROC_PRECISION", proc)) != 0 ||
        (rc = check_precision(d, "D_DATA_FORMAT_0.OUT_PRECISION", outp)) != 0) {
        return rc;
    }
    if (outp != proc) {
        /* ref: cmod NV_NVDLA_sdp.cpp WdmaSequenceDC: "openDLA doesn't support
         * precision conversion" */
        return dla_error(d, DLASIM_ERR_UNSUPPORTED,
                         "SDP: D_DATA_FORMAT_0.OUT_PRECISION=%u differs from PROC_PRECISION=%u "
                         "(precision conversion is not supported by NVDLA)",
                         outp, proc);
    }
    c->atom = cfg->memory_atomic_size;
    c->bpe = proc == NVDLA_SDP_D_DATA_FORMAT_0_PROC_PRECISION_INT16 ? 2u : 1u;
    /* an atom is M bytes: M int8 or M/2 int16 elements (vmod nv_full
     * NV_NVDLA_SDP_WDMA_cmd.v: "Surf is always in unit of ATOMIC", INT16
     * size_of_surf = channel >> (log2 M - 1); cmod's ELEMENT_PER_ATOM_INT16
     * = M disagrees with it and with NVIDIA's INT16 goldens) */
    c->epa = c->atom / c->bpe;
    c->out_bits = 8u * c->bpe;
    c->nsurf = (c->c + c->epa - 1) / c->epa;
    c->packed = c->w == 1 && c->h == 1;
    if (c->batches > 1 && c->to_pdp) {
        /* PDP has no batch dimension: the batches of each line would reach
         * it interleaved as one cube (NV_NVDLA_SDP_WDMA_cmd.v count_batch,
         * NV_NVDLA_PDP_* have no batch registers) */
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=%u with OUTPUT_DST=PDP: PDP "
                         "has no batches",
                         c->batches - 1);
    }

    decode_x(d, r, 0, &c->x[0]);
    decode_x(d, r, 1, &c->x[1]);
    decode_ew(d, r, &c->ew);
    if (c->ew.lut) {
        decode_lut(d, r, &c->lut);
    } else {
        memset(&c->lut, 0, sizeof(c->lut));
    }
    /* ref: NV_NVDLA_SDP_core.v cfg_mode_eql */
    c->eql = c->ew.en && !c->ew.alu_bypass &&
             c->ew.alu_algo == NVDLA_SDP_D_DP_EW_CFG_0_EW_ALU_ALGO_EQL;
    const struct sdp_use_regs use = use_regs_of(r);
    core_mem_use(d, &use, c->src_used);

    c->cvt_offset = (int32_t)SDP_R(r, D_CVT_OFFSET_0);
    c->cvt_scale = dla_sext(SDP_F(r, D_CVT_SCALE_0, CVT_SCALE), 16);
    c->cvt_shift = SDP_F(r, D_CVT_SHIFT_0, CVT_SHIFT);
    prepare_lanes(c);

    if (!c->to_pdp) {
        c->dst_port = dla_ram_port(SDP_F(r, D_DST_DMA_CFG_0, DST_RAM_TYPE));
        c->dst_line = atom_stride(cfg, SDP_R(r, D_DST_LINE_STRIDE_0));
        c->dst_surf = atom_stride(cfg, SDP_R(r, D_DST_SURFACE_STRIDE_0));
        c->dst_batch = atom_stride(cfg, SDP_R(r, D_DST_BATCH_STRIDE_0));
    }

    int need_rdma = !c->flying;
    for (int i = 0; i < SRC_N; i++) {
        need_rdma |= c->src_used[i];
    }
    if (need_rdma && (rc = decode_rdma(d, r, c, proc)) != 0) {
        return rc;
    }
    c->addend_form = addend_form_of(c);
    sdp_work_of(c, &c->work);
    return 0;
}

/* Does the layer read operand stream i (BRDMA, NRDMA, ERDMA)? */
static int stream_used(const struct sdp_cfg *c, int i)
{
    return c->src_used[2 * i] || c->src_used[2 * i + 1];
}

/* The base addresses of a decoded layer (the only words sdp_decode leaves
 * out): where it writes, and where it reads from memory (the input and the
 * operand streams it uses; the rest stay 0). */
static void decode_addresses(const struct dla_dev *d, const struct sdp_regs *r, struct sdp_cfg *c)
{
    const struct dla_config *cfg = dla_cfg(d);
    if (!c->to_pdp) {
        c->dst_base = atom_addr(cfg, SDP_R(r, D_DST_BASE_ADDR_HIGH_0),
                                SDP_R(r, D_DST_BASE_ADDR_LOW_0));
    }
    if (!c->flying) {
        c->src_base = atom_addr(cfg, RDMA_R(r, D_SRC_BASE_ADDR_HIGH_0),
                                RDMA_R(r, D_SRC_BASE_ADDR_LOW_0));
    }
    if (stream_used(c, 0)) {
        c->stream[0].base = atom_addr(cfg, RDMA_R(r, D_BS_BASE_ADDR_HIGH_0),
                                      RDMA_R(r, D_BS_BASE_ADDR_LOW_0));
    }
    if (stream_used(c, 1)) {
        c->stream[1].base = atom_addr(cfg, RDMA_R(r, D_BN_BASE_ADDR_HIGH_0),
                                      RDMA_R(r, D_BN_BASE_ADDR_LOW_0));
    }
    if (stream_used(c, 2)) {
        c->stream[2].base = atom_addr(cfg, RDMA_R(r, D_EW_BASE_ADDR_HIGH_0),
                                      RDMA_R(r, D_EW_BASE_ADDR_LOW_0));
    }
}

/* ---- decode cache ------------------------------------------------------------ */

/*
 * Decoded layers kept with the device (struct dla_conv_state), keyed on the
 * register words they were decoded from (issue 18: MobileNetV2 runs ~950
 * SDP layers an image, and the firmware programs the operations of one
 * layer with the same words but for base addresses, into alternating
 * groups; the decode was ~a quarter of a small layer's SDP time).
 *
 * Why a hit is exact: sdp_decode is a function of the words of struct
 * sdp_regs and of the device's constant state (its configuration, the
 * instruction set, the LUT RAM's address, not its contents, which the layer
 * reads when it runs).  Of those words it reads only software-written
 * configuration registers (regdb kind PLAIN with a non-zero write mask),
 * and of them the base addresses only in decode_addresses, which runs for
 * every layer, hit or miss.  The key is every such word but the base
 * addresses, whole (32 bits), compared word for word with the words of the
 * layer run now (never an address or a pointer); the words it leaves out
 * (status and counters, which the hardware updates, S_POINTER, OP_ENABLE,
 * the LUT access ports) are not read by the decode.  Only successful
 * decodes are kept: a refused programming is decoded, and refused, every
 * time.  The work check (the caller's budget may change) and the checks of
 * CACC's cube run for every layer.
 * Costs (scratch rdtsc, MobileNetV2): the ways are cold between a network's
 * layers, so a miss that compared all four keys and decoded into a way cost
 * ~2,000 ticks more than a plain decode.  Hence a way's tag (key_tag of its
 * key), which only spares the word compare of ways that cannot match (the
 * words decide), and the decode into the caller's copy, kept (copied into a
 * way) only for a layer's second operation in its group: one-off layers
 * (the 1x1 convolutions, ~80 of ~950 an image) then cost a plain decode and
 * evict nothing.  The firmware's words differ between the two groups, hence
 * the per-group last way and last tag.  A decode is also kept when its tag
 * was one of the last SDP_CACHE_WAYS misses': a network of at most that many
 * SDP layers (Fashion-MNIST's four, decoded at every image before) then
 * hits from its third inference on, while MobileNetV2's one-off layers,
 * ~200 misses apart, still evict nothing.
 */
#define SDP_CACHE_WAYS 4

struct sdp_cache_way {
    int valid;
    uint32_t key[SDP_KEY_WORDS]; /* the words of the layer decoded, masked */
    struct sdp_cfg cfg;          /* its decode; the base addresses the last hit's */
};

struct dla_sdp_cache {
    uint32_t mask[SDP_KEY_WORDS]; /* all ones: a word of the key; 0: not */
    uint32_t tag[SDP_CACHE_WAYS]; /* key_tag of each way's key */
    uint32_t last_tag[2];         /* the tag of each group's last layer decoded */
    uint32_t recent[SDP_CACHE_WAYS]; /* the tags of the last misses (a ring) */
    unsigned recent_next;
    unsigned next;                /* way to replace next */
    unsigned last[2];             /* way of each group's last layer */
    struct sdp_cache_way way[SDP_CACHE_WAYS];
    struct dla_sdp_prep *prep;    /* dla_sdp_prepare's, made on its first use */
};

static void sdp_prep_free(struct dla_sdp_prep *p);

/* Unit u's software-written configuration words among the first n of its
 * window into mask[at..at+n). */
static void key_mask_unit(uint32_t *mask, enum nvdla_unit u, unsigned at, unsigned n)
{
    const struct nvdla_unit_desc *ud = &nvdla_db.units[u];
    for (unsigned i = 0; i < ud->n_regs; i++) {
        const struct nvdla_reg_desc *reg = &nvdla_db.regs[ud->first_reg + i];
        const unsigned word = DLA_REG_WORD(reg->addr);
        if (reg->kind == NVDLA_KIND_PLAIN && reg->write_mask != 0 && word < n) {
            mask[at + word] = UINT32_MAX;
        }
    }
}

static struct dla_sdp_cache *sdp_cache_new(void)
{
    static const uint32_t addr_words[] = {
        DLA_REG_WORD(NVDLA_SDP_D_DST_BASE_ADDR_LOW_0),
        DLA_REG_WORD(NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_LOW_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_HIGH_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_BN_BASE_ADDR_LOW_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_BN_BASE_ADDR_HIGH_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_EW_BASE_ADDR_LOW_0),
        SDP_WORDS + DLA_REG_WORD(NVDLA_SDP_RDMA_D_EW_BASE_ADDR_HIGH_0),
    };
    struct dla_sdp_cache *k = calloc(1, sizeof(*k));
    if (k) {
        key_mask_unit(k->mask, NVDLA_UNIT_SDP, 0, SDP_WORDS);
        key_mask_unit(k->mask, NVDLA_UNIT_SDP_RDMA, SDP_WORDS, SDP_RDMA_WORDS);
        for (size_t i = 0; i < sizeof(addr_words) / sizeof(addr_words[0]); i++) {
            k->mask[addr_words[i]] = 0;
        }
    }
    return k;
}

void dla_sdp_cache_free(struct dla_sdp_cache *c)
{
    if (c) {
        sdp_prep_free(c->prep);
    }
    free(c);
}

/* The device's cache, made on its first SDP layer; NULL without one (no
 * host memory for it: every layer is decoded). */
static struct dla_sdp_cache *sdp_cache_of(struct dla_dev *d)
{
    struct dla_conv_state *s = dla_dev_conv_state(d);
    if (s && !s->sdp_cache) {
        s->sdp_cache = sdp_cache_new();
    }
    return s ? s->sdp_cache : NULL;
}

/* A 32-bit digest of the key of the words r (a filter before the
 * compare, never the decision). */
static uint32_t key_tag(const struct dla_sdp_cache *k, const struct sdp_regs *r)
{
    uint32_t x = 0, sum = 0;
    for (unsigned i = 0; i < SDP_KEY_WORDS; i++) {
        const uint32_t v = r->word[i] & k->mask[i];
        x ^= v;
        sum += v;
    }
    return x ^ (sum * 0x9e3779b1u) ^ (sum >> 15);
}

/* Does way w hold the decode of the words r?  (Every word of the key
 * compared: one OR of differences, no early exit in the loop.) */
static int way_matches(const struct dla_sdp_cache *k, const struct sdp_cache_way *w,
                       const struct sdp_regs *r)
{
    uint32_t diff = 0;
    for (unsigned i = 0; i < SDP_KEY_WORDS; i++) {
        diff |= (r->word[i] & k->mask[i]) ^ w->key[i];
    }
    return w->valid && diff == 0;
}

/* The group's last way first, compared without a tag (the firmware
 * programs a layer's operations into alternating groups, and the words of
 * the two groups differ: 99.8 % of hits are there); then the others whose
 * tag matches.  *tag: the words' key_tag, computed unless the first way
 * matched. */
static struct sdp_cfg *cache_find(struct dla_sdp_cache *k, unsigned g, const struct sdp_regs *r,
                                  uint32_t *tag)
{
    const unsigned last = k->last[g & 1u];
    if (way_matches(k, &k->way[last], r)) {
        return &k->way[last].cfg;
    }
    *tag = key_tag(k, r);
    for (unsigned n = 1; n < SDP_CACHE_WAYS; n++) {
        const unsigned i = (last + n) % SDP_CACHE_WAYS;
        if (k->tag[i] == *tag && way_matches(k, &k->way[i], r)) {
            k->last[g & 1u] = i;
            return &k->way[i].cfg;
        }
    }
    return NULL;
}

/* After a miss of `tag`: was it one of the last SDP_CACHE_WAYS misses'? It
 * is the last one now. */
static int recent_miss(struct dla_sdp_cache *k, uint32_t tag)
{
    int seen = 0;
    for (unsigned i = 0; i < SDP_CACHE_WAYS; i++) {
        seen |= k->recent[i] == tag;
    }
    k->recent[k->recent_next] = tag;
    k->recent_next = (k->recent_next + 1) % SDP_CACHE_WAYS;
    return seen;
}

/* After a miss: keep the decode c of the words r (tag) in the next way. */
static struct sdp_cfg *cache_keep(struct dla_sdp_cache *k, unsigned g, const struct sdp_regs *r,
                                  uint32_t tag, const struct sdp_cfg *c)
{
    struct sdp_cache_way *w = &k->way[k->next];
    for (unsigned i = 0; i < SDP_KEY_WORDS; i++) {
        w->key[i] = r->word[i] & k->mask[i];
    }
    w->cfg = *c;
    w->valid = 1;
    k->tag[k->next] = tag;
    k->last[g & 1u] = k->next;
    k->next = (k->next + 1) % SDP_CACHE_WAYS;
    return &w->cfg;
}

/* The layer's configuration (*out: in the cache, or `local`), with its base
 * addresses: a cached decode of the same words, or decoded now (and kept
 * when the group's last layer decoded had the same tag). */
static int sdp_layer_cfg(struct dla_dev *d, unsigned g, struct sdp_cfg *local,
                         struct sdp_cfg **out)
{
    struct sdp_regs r;
    sdp_regs_of(d, g, &r);
    struct dla_sdp_cache *k = sdp_cache_of(d);
    uint32_t tag = 0;
    struct sdp_cfg *c = k ? cache_find(k, g, &r, &tag) : NULL;
    if (!c) {
        int rc = sdp_decode(d, &r, local);
        if (rc) {
            return rc;
        }
        c = local;
        /* a layer's second operation in the group, or a layer met again soon */
        const int recent = k && recent_miss(k, tag);
        if (k && (k->last_tag[g & 1u] == tag || recent)) {
            c = cache_keep(k, g, &r, tag, local);
        }
        if (k) {
            k->last_tag[g & 1u] = tag;
        }
    }
    decode_addresses(d, &r, c);
    *out = c;
    return 0;
}

/* ---- per-element arithmetic (EW, LUT) ----------------------------------------- */

/* EW memory operand converter.  ref: NV_NVDLA_SDP_HLS_Y_int_cvt.v */
static inline int32_t ew_cvt(const struct sdp_ew_cvt *k, int32_t op16)
{
    if (k->bypass) {
        return op16;
    }
    int64_t v = ((int64_t)op16 - k->offset) * k->scale;
    return (int32_t)sdp_shr_su(v, k->truncate, 49, 32, 0);
}

/* EW core.  ref: NV_NVDLA_SDP_HLS_Y_int_mul.v, NV_NVDLA_SDP_HLS_Y_int_alu.v */
static inline int32_t ew_elem(const struct sdp_ew_cfg *e, int32_t x, int32_t alu_op, int32_t mul_op)
{
    int64_t m = x;
    if (!e->mul_bypass && !(e->prelu && x >= 0)) {
        m = sdp_shr_su((int64_t)x * mul_op, e->truncate, 64, 32, 0);
    }
    if (e->alu_bypass) {
        return (int32_t)m;
    }
    int64_t a;
    switch (e->alu_algo) {
    case NVDLA_SDP_D_DP_EW_CFG_0_EW_ALU_ALGO_MAX:
        a = m > alu_op ? m : alu_op;
        break;
    case NVDLA_SDP_D_DP_EW_CFG_0_EW_ALU_ALGO_MIN:
        a = m < alu_op ? m : alu_op;
        break;
    case NVDLA_SDP_D_DP_EW_CFG_0_EW_ALU_ALGO_EQL:
        a = m == alu_op ? 0 : 1;
        break;
    default:
        a = m + alu_op;
        break;
    }
    return (int32_t)sdp_sat(a, 32);
}

/* LUT.  ref: NV_NVDLA_SDP_HLS_Y_int_idx.v (table choice),
 * NV_NVDLA_SDP_CORE_Y_lut.v (entries, slopes, offsets), Y_int_inp.v */
static inline int32_t lut_elem(const struct sdp_lut_cfg *l, int32_t x, struct sdp_stats *st)
{
    struct sdp_lut_idx le = l->le_expn ? sdp_lut_expn(x, l->le_start, l->le_offset, DLA_LUT_LE_ENTRIES)
                                       : sdp_lut_line(x, l->le_start, l->le_sel, DLA_LUT_LE_ENTRIES);
    struct sdp_lut_idx lo = sdp_lut_line(x, l->lo_start, l->lo_sel, DLA_LUT_LO_ENTRIES);
    int le_hit = !(le.uflow || le.oflow);
    int lo_hit = !(lo.uflow || lo.oflow);
    int use_lo;
    if (le.uflow && lo.uflow) {
        use_lo = l->uflow_lo;
    } else if (le.oflow && lo.oflow) {
        use_lo = l->oflow_lo;
    } else if (le_hit == lo_hit) {
        use_lo = l->hybrid_lo; /* both hit, or both miss differently */
    } else {
        use_lo = lo_hit;
    }
    const struct sdp_lut_idx *r = use_lo ? &lo : &le;
    const uint16_t *tab = use_lo ? l->ram->lo : l->ram->le;
    int16_t y0 = (int16_t)dla_sext(tab[r->index], 16);

    st->lut_uflow += (uint64_t)r->uflow;
    st->lut_oflow += (uint64_t)r->oflow;
    st->lut_hybrid += (uint64_t)!(r->uflow || r->oflow);
    st->lut_le_hit += (uint64_t)le_hit;
    st->lut_lo_hit += (uint64_t)lo_hit;

    if (r->uflow) {
        if (use_lo) {
            return sdp_lut_extrap(x, y0, 0, l->lo_start, l->lo_uscale, l->lo_ushift);
        }
        return sdp_lut_extrap(x, y0, l->le_expn ? l->expn_bias : 0, l->le_start, l->le_uscale,
                              l->le_ushift);
    }
    if (r->oflow) {
        if (use_lo) {
            return sdp_lut_extrap(x, y0, 0, l->lo_end, l->lo_oscale, l->lo_oshift);
        }
        return sdp_lut_extrap(x, y0, 0, l->le_end, l->le_oscale, l->le_oshift);
    }
    int16_t y1 = (int16_t)dla_sext(tab[r->index + 1], 16);
    return sdp_lut_interp(y0, y1, r->frac);
}

/* ---- one run of elements ------------------------------------------------------ */

/* Operands of a run: op[i] one value per element, or NULL for the value
 * val[i] on every element. */
struct sdp_ops {
    const int32_t *op[SRC_N];
    int32_t val[SRC_N];
};

static inline int32_t op_at(const struct sdp_ops *o, int src, size_t i)
{
    return o->op[src] ? o->op[src][i] : o->val[src];
}

/* Runs n elements from src through the enabled stages into dst (src may be
 * dst): dst receives the output value (int8/int16 range, or the low 16 bits
 * of the EW result in EQL mode).  The first stage reads src, the others
 * work in place. */
static void process_chunk(const struct sdp_cfg *c, const int32_t *src, int32_t *dst, size_t n,
                          const struct sdp_ops *o, struct sdp_stats *st)
{
    const int32_t *in = src;
    /* one X stage with register (or per-kernel) operands, then the
     * converter: one pass where the lanes allow it (a convolution's bias,
     * scale and ReLU) */
    const int k1 = c->x[0].en ? 0 : 1;
    if (c->x[k1].en && !c->x[1 - k1].en && !c->ew.en && !c->eql && !o->op[2 * k1] &&
        !o->op[2 * k1 + 1]) {
        uint32_t sat;
        if (dla_sdp_lanes_x_cvt(c->isa, &c->lane_x[k1], &c->lane_cvt, src, dst, n,
                                o->val[2 * k1], o->val[2 * k1 + 1], &sat)) {
            st->sat += sat;
            return;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (c->x[k].en) {
            dla_sdp_lanes_x(c->isa, &c->lane_x[k], in, dst, n, o->op[2 * k], o->val[2 * k],
                            o->op[2 * k + 1], o->val[2 * k + 1]);
            in = dst;
        }
    }
    if (c->ew.en) {
        for (size_t i = 0; i < n; i++) {
            dst[i] = ew_elem(&c->ew, in[i], op_at(o, SRC_EW_ALU, i), op_at(o, SRC_EW_MUL, i));
        }
        if (c->ew.lut) {
            for (size_t i = 0; i < n; i++) {
                dst[i] = lut_elem(&c->lut, dst[i], st);
            }
        }
        in = dst;
    }
    if (c->eql) {
        /* the converter passes the low 16 bits (NV_NVDLA_SDP_HLS_C_int.v) */
        for (size_t i = 0; i < n; i++) {
            dst[i] = dla_sext((uint32_t)in[i], 16);
        }
    } else {
        st->sat += dla_sdp_lanes_cvt(c->isa, &c->lane_cvt, in, dst, n);
    }
}

/* Elements per chunk of a run: the stages of a chunk pass it on while it
 * is in the L1 cache (16 KiB of int32 values); every stage is exact
 * whatever range of elements it is given. */
#define SDP_CHUNK 4096

/* Runs n elements from src through the enabled stages into dst (src may be
 * dst), a chunk at a time. */
static void process_run(const struct sdp_cfg *c, const int32_t *src, int32_t *dst, size_t n,
                        const struct sdp_ops *o, struct sdp_stats *st)
{
    for (size_t i = 0; i < n; i += SDP_CHUNK) {
        struct sdp_ops oc = *o;
        for (int k = 0; k < SRC_N; k++) {
            oc.op[k] = o->op[k] ? o->op[k] + i : NULL;
        }
        process_chunk(c, src + i, dst + i, n - i < SDP_CHUNK ? n - i : SDP_CHUNK, &oc, st);
    }
}

/* ---- memory helpers ---------------------------------------------------------- */

static inline int32_t load_elem(const uint8_t *p, unsigned bytes)
{
    if (bytes == 1) {
        return (int8_t)p[0];
    }
    return (int16_t)(uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

/*
 * Work buffers of a layer.  One surface is processed at a time, in one of
 * two layouts:
 *   planar (flying input): channel l of the surface at data + l * plane,
 *     element (y, x) at y * w + x, as CACC delivers it, so each channel is
 *     one run whose per-kernel operands are constants;
 *   atoms (memory input): lane j = (y * w + x) * epa + l as in memory, the
 *     surface one run with per-lane operands.
 */
/* A small layer's raw bytes and per-kernel operands, on sdp_execute's
 * stack: no allocation an operation where they fit (MobileNetV2 has ~900
 * layers of 8 channels an image). */
/* load_kernel_ops / load_addends asked for lent bytes only (dla_sdp_prepare)
 * found an operand the memory does not lend (a status of no other call) */
#define SDP_NOT_LENT 1
#define SDP_SMALL_RAW 2048u    /* bytes of w->raw */
#define SDP_SMALL_CHANNELS 64u /* channels of per-kernel operands */
struct sdp_small {
    uint8_t raw[SDP_SMALL_RAW];
    int32_t kernel[3][2 * SDP_SMALL_CHANNELS];
};

struct sdp_work {
    int planar;
    size_t plane;      /* elements per channel plane: h * w */
    size_t n_line;     /* lanes per line: w * epa */
    size_t n_surf;     /* lanes per surface: h * n_line */
    int32_t *data;     /* one surface of values */
    uint8_t *raw;      /* raw bytes of one surface (input, operands, output) */
    size_t raw_size;
    int32_t *op[SRC_N];      /* per-element operands of one surface (in the
                              * surface's layout), or in the atom layout
                              * per-kernel operands replicated over it */
    int32_t *kernel[3];      /* per-kernel operands: both components, all channels */
    struct sdp_small *small; /* where raw and kernel[] are when they fit */
    /* addend_form's operand, where the layer takes that path (the cubes
     * apart: addend_apart): surface s's bytes from addend[s] (lent, or in
     * addend_copy); w->op[SRC_BN_ALU] is not used */
    const uint8_t **addend;
    uint8_t *addend_copy;
};

static void work_free(struct sdp_work *w)
{
    free((void *)w->addend);
    free(w->addend_copy);
    free(w->data);
    if (w->raw != w->small->raw) {
        free(w->raw);
    }
    for (int i = 0; i < SRC_N; i++) {
        free(w->op[i]);
    }
    for (int i = 0; i < 3; i++) {
        if (w->kernel[i] != w->small->kernel[i]) {
            free(w->kernel[i]);
        }
    }
}

/* Bytes of one surface of an operand stream (per element). */
static size_t stream_surf_bytes(const struct sdp_cfg *c, const struct sdp_stream *s)
{
    return (size_t)c->h * c->w * c->epa * s->elem_bytes;
}

static int addend_apart(const struct sdp_cfg *c);

static int work_alloc(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                      struct sdp_small *small)
{
    /* every field set here (a memset of the whole was a rep stos, ~4 % of
     * sdp_execute's own time) */
    const int addend = c->addend_form && addend_apart(c);
    w->addend = NULL;
    w->addend_copy = NULL;
    w->data = NULL;
    for (int i = 0; i < SRC_N; i++) {
        w->op[i] = NULL;
    }
    for (int i = 0; i < 3; i++) {
        w->kernel[i] = NULL;
    }
    w->small = small;
    w->planar = c->flying;
    w->plane = (size_t)c->w * c->h;
    w->n_line = (size_t)c->w * c->epa;
    w->n_surf = w->n_line * c->h;
    size_t raw = w->n_surf * c->bpe;
    for (int i = 0; i < 3; i++) {
        if (c->src_used[2 * i] || c->src_used[2 * i + 1]) {
            size_t b = stream_surf_bytes(c, &c->stream[i]);
            if (c->stream[i].per_kernel) {
                b = (size_t)c->nsurf * c->epa * c->stream[i].elem_bytes;
            }
            raw = raw > b ? raw : b;
        }
    }
    w->raw_size = raw;
    /* w->data: work_alloc_data, on the paths that use it */
    w->raw = raw <= sizeof(small->raw) ? small->raw : malloc(raw);
    int ok = w->raw != NULL;
    if (ok && addend) {
        w->addend = calloc(c->nsurf, sizeof(*w->addend));
        ok = w->addend != NULL;
    }
    for (int i = 0; i < SRC_N && ok; i++) {
        /* planar per-kernel operands are constants of a run */
        if (c->src_used[i] && !(w->planar && c->stream[i / 2].per_kernel) &&
            !(addend && i == SRC_BN_ALU)) {
            w->op[i] = malloc(w->n_surf * sizeof(int32_t));
            ok = w->op[i] != NULL;
        }
    }
    if (!ok) {
        work_free(w);
        return dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory for a %ux%ux%u cube",
                         c->w, c->h, c->c);
    }
    return 0;
}

/* One surface of values (w->data): every path but the flying atoms8 one
 * (surface_atoms8 packs CACC's planes straight into w->raw). */
static int work_alloc_data(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w)
{
    w->data = malloc(w->n_surf * sizeof(int32_t));
    if (!w->data) {
        work_free(w);
        return dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory for a %ux%ux%u cube",
                         c->w, c->h, c->c);
    }
    return 0;
}

/* One component of an operand stream, as loaded (sign-extended), as the
 * data path uses it: the X ALU operand shifted as the ALU uses it, EW
 * operands through their converter. */
static int32_t op_decode(const struct sdp_cfg *c, int src, int32_t v)
{
    switch (src) {
    case SRC_BS_ALU:
    case SRC_BN_ALU:
        return (int32_t)sdp_shl_su(v, c->x[src / 2].alu_shift, 32);
    case SRC_EW_ALU:
        return ew_cvt(&c->ew.alu_cvt, v);
    case SRC_EW_MUL:
        return ew_cvt(&c->ew.mul_cvt, v);
    default:
        return v;
    }
}

/* Component `src` of the nch operands at raw (elem_bytes apart) into dst,
 * sign-extended and decoded as the data path uses it (op_decode): the
 * loads, then the decode, each a loop of its own kind (a call per operand
 * took ~3 ns: a depthwise block's 16 took 50-56 ns; a MobileNetV2 image has
 * ~36,000, two for each of its ~18,000 output channels). */
static void decode_kernel_ops(const struct sdp_cfg *c, int src, const uint8_t *raw, size_t nch,
                              int32_t *dst)
{
    const struct sdp_stream *s = &c->stream[src / 2];
    const uint8_t *p = raw + s->off[src & 1];
    const size_t eb = s->elem_bytes;
    const int alu = src == SRC_BS_ALU || src == SRC_BN_ALU;
    const unsigned shift = alu ? c->x[src / 2].alu_shift : 0;
    /* an ALU operand's shift of 16 or less in the load's loop (a 16-bit
     * value << 16 at most: sdp_shl_su never saturates); a loop of its own
     * was ~24 % of sdp_execute's own samples on ResNet-50 */
    const int32_t k = shift <= 16 ? (int32_t)1 << shift : 1;
    /* one loop per component size (a test of the size per operand was
     * ~60 % of sdp_execute's own time on ResNet-50) */
    if (s->size == 2) {
        for (size_t ch = 0; ch < nch; ch++) {
            dst[ch] = (int16_t)(uint16_t)(p[ch * eb] | (unsigned)p[ch * eb + 1] << 8) * k;
        }
    } else {
        for (size_t ch = 0; ch < nch; ch++) {
            dst[ch] = (int8_t)p[ch * eb] * k;
        }
    }
    if (alu) {
        if (shift > 16) {
            for (size_t ch = 0; ch < nch; ch++) {
                dst[ch] = (int32_t)sdp_shl_su(dst[ch], shift, 32);
            }
        }
    } else if (src == SRC_EW_ALU || src == SRC_EW_MUL) {
        for (size_t ch = 0; ch < nch; ch++) {
            dst[ch] = op_decode(c, src, dst[ch]);
        }
    }
}

/* Every line of [p, p + n) asked for at once: a layer's per-kernel operands
 * lie in the network's memory, which does not stay cached from one
 * inference to the next, and decode_kernel_ops's byte loads took them a
 * few lines at a time (ResNet-50: ~12 % of sdp_execute's own samples on
 * one load of that loop). */
static void prefetch_bytes(const uint8_t *p, size_t n)
{
    for (size_t at = 0; at < n; at += 64) {
        __builtin_prefetch(p + at);
    }
}

/* Per-kernel operands: one contiguous request of every surface. */
static int load_kernel_ops(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                           int lent_only)
{
    for (int i = 0; i < 3; i++) {
        const struct sdp_stream *s = &c->stream[i];
        if (!(c->src_used[2 * i] || c->src_used[2 * i + 1]) || !s->per_kernel) {
            continue;
        }
        size_t nch = (size_t)c->nsurf * c->epa;
        /* straight from the memory's page where it can lend them (the same
         * bytes and traffic as the read), else read into w->raw */
        const uint64_t at = s->base & c->addr_mask;
        const uint8_t *raw = dla_dma_view(d, s->port, at, nch * s->elem_bytes);
        if (!raw && lent_only) {
            return SDP_NOT_LENT;
        }
        if (!raw) {
            int rc = dla_dma_read(d, s->port, at, w->raw, nch * s->elem_bytes);
            if (rc) {
                return rc;
            }
            raw = w->raw;
        }
        prefetch_bytes(raw, nch * s->elem_bytes);
        w->kernel[i] = nch <= SDP_SMALL_CHANNELS ? w->small->kernel[i]
                                                 : malloc(2 * nch * sizeof(int32_t));
        if (!w->kernel[i]) {
            return dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory");
        }
        for (int k = 0; k < 2; k++) {
            if (c->src_used[2 * i + k]) {
                decode_kernel_ops(c, 2 * i + k, raw, nch, w->kernel[i] + k * nch);
            }
        }
    }
    return 0;
}

/* Per-kernel operand `src` of channel l of surface `surf`. */
static int32_t kernel_op(const struct sdp_cfg *c, const struct sdp_work *w, int src,
                         uint32_t surf, uint32_t l)
{
    size_t nch = (size_t)c->nsurf * c->epa;
    return w->kernel[src / 2][(size_t)(src & 1) * nch + (size_t)surf * c->epa + l];
}

/* Operand `src` of every lane of the surface in w->raw into w->op[src] (in
 * the surface's layout), decoded once per layer: one-byte components
 * through a 256-entry table of op_decode, two-byte ones through op_decode
 * with the stage chosen once.  Lane j of the atoms is element j / epa of
 * channel j % epa. */
static void decode_element_ops(const struct sdp_cfg *c, struct sdp_work *w, int src)
{
    const struct sdp_stream *s = &c->stream[src / 2];
    const uint8_t *r = w->raw + s->off[src & 1];
    const size_t eb = s->elem_bytes, pixels = w->n_surf / c->epa;
    const size_t lane_step = w->planar ? w->plane : 1, pix_step = w->planar ? 1 : c->epa;
    int32_t *o = w->op[src];
    if (s->size == 1) {
        int32_t table[256];
        for (int b = 0; b < 256; b++) {
            table[b] = op_decode(c, src, (int8_t)b);
        }
        for (size_t p = 0; p < pixels; p++) {
            const uint8_t *e = r + p * c->epa * eb;
            int32_t *out = o + p * pix_step;
            for (size_t l = 0; l < c->epa; l++) {
                out[l * lane_step] = table[e[l * eb]];
            }
        }
        return;
    }
    for (size_t p = 0; p < pixels; p++) {
        const uint8_t *e = r + p * c->epa * eb;
        int32_t *out = o + p * pix_step;
        for (size_t l = 0; l < c->epa; l++) {
            out[l * lane_step] = op_decode(c, src, load_elem(e + l * eb, 2));
        }
    }
}

/* Surface `surf` of a cube in memory (the input, or a per-element operand
 * stream with `elem_bytes` per element) into `dst`, packed. */
static int read_surface(struct dla_dev *d, const struct sdp_cfg *c, int port, uint64_t base,
                        uint64_t line_stride, uint64_t surf_stride, unsigned elem_bytes,
                        uint32_t surf, uint8_t *dst)
{
    size_t line_bytes = (size_t)c->w * c->epa * elem_bytes;
    if (c->packed) {
        /* ref: NV_NVDLA_SDP_MRDMA_ig.v, NV_NVDLA_SDP_RDMA_ig.v cfg_mode_1x1_pack:
         * one straight request */
        return dla_dma_read(d, port, (base + (uint64_t)surf * line_bytes) & c->addr_mask, dst,
                            line_bytes);
    }
    return dla_dma_read_lines(d, port, c->addr_mask, base + (uint64_t)surf * surf_stride,
                              line_stride, c->h, line_bytes, dst);
}

/* Per-element operands of surface `surf` from memory, stored in the
 * surface's layout. */
static int load_element_ops(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                            int which, uint32_t surf)
{
    const struct sdp_stream *s = &c->stream[which];
    int rc = read_surface(d, c, s->port, s->base, s->line_stride, s->surf_stride, s->elem_bytes,
                          surf, w->raw);
    if (rc) {
        return rc;
    }
    for (int k = 0; k < 2; k++) {
        int src = 2 * which + k;
        if (!c->src_used[src]) {
            continue;
        }
        decode_element_ops(c, w, src);
    }
    return 0;
}

/* Operands of surface `surf`: per-kernel ones replicated over the atoms
 * (planar runs take them as constants), per-element ones from memory. */
static int load_surface_ops(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                            uint32_t surf)
{
    for (int i = 0; i < 3; i++) {
        const struct sdp_stream *s = &c->stream[i];
        if (!(c->src_used[2 * i] || c->src_used[2 * i + 1])) {
            continue;
        }
        if (!s->per_kernel && w->addend && i == 1) {
            continue; /* addend_form's operand: load_addends */
        }
        if (!s->per_kernel) {
            int rc = load_element_ops(d, c, w, i, surf);
            if (rc) {
                return rc;
            }
            continue;
        }
        for (int k = 0; k < 2 && !w->planar; k++) {
            int src = 2 * i + k;
            if (!c->src_used[src]) {
                continue;
            }
            /* the surface's epa channel operands, repeated for every pixel */
            const int32_t *ch = &w->kernel[i][(size_t)k * c->nsurf * c->epa + (size_t)surf * c->epa];
            for (size_t j = 0; j < w->n_surf; j += c->epa) {
                memcpy(w->op[src] + j, ch, c->epa * sizeof(int32_t));
            }
        }
    }
    return 0;
}

/* Memory input of surface `surf` into w->data (atoms). */
static int load_surface_input(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                              uint32_t surf)
{
    int rc = read_surface(d, c, c->src_port, c->src_base, c->src_line, c->src_surf, c->bpe, surf,
                          w->raw);
    if (!rc) {
        dla_sdp_lanes_widen(c->isa, w->raw, c->bpe, w->data, w->n_surf);
    }
    return rc;
}

/* Does the layer read a per-kernel operand (a constant per channel)? */
static int uses_kernel_ops(const struct sdp_cfg *c)
{
    for (int i = 0; i < SRC_N; i++) {
        if (c->src_used[i] && c->stream[i / 2].per_kernel) {
            return 1;
        }
    }
    return 0;
}

/* Channels [l0, l1) of a planar surface as one run from src. */
static void process_planes(const struct sdp_cfg *c, struct sdp_work *w, uint32_t surf,
                           uint32_t l0, uint32_t l1, const int32_t *src, struct sdp_stats *st)
{
    struct sdp_ops o;
    for (int i = 0; i < SRC_N; i++) {
        o.op[i] = w->op[i] ? w->op[i] + l0 * w->plane : NULL;
        o.val[i] = c->src_used[i] && c->stream[i / 2].per_kernel ? kernel_op(c, w, i, surf, l0)
                                                                  : c->reg_op[i];
    }
    process_run(c, src, w->data + l0 * w->plane, (l1 - l0) * w->plane, &o, st);
}

/*
 * Runs surface `surf` through the data path.  Flying input is read from the
 * CACC cube in place (channels it does not provide are 0), as one run of
 * its channels or one run per channel when a per-kernel operand is a
 * constant of the run; memory input is one run of atoms.
 */
static void process_surface(const struct sdp_cfg *c, struct sdp_work *w, uint32_t surf,
                            const struct dla_cube *in, uint32_t batch, struct sdp_stats *st)
{
    if (!w->planar) {
        struct sdp_ops o;
        for (int i = 0; i < SRC_N; i++) {
            o.op[i] = w->op[i];
            o.val[i] = c->reg_op[i];
        }
        process_run(c, w->data, w->data, w->n_surf, &o, st);
        return;
    }
    const size_t ch0 = (size_t)surf * c->epa;
    const uint32_t real = in->c - ch0 < c->epa ? (uint32_t)(in->c - ch0) : c->epa;
    const int32_t *cube = in->data + batch * dla_cube_batch_elems(in) + ch0 * w->plane;
    memset(w->data + real * w->plane, 0, (c->epa - real) * w->plane * sizeof(int32_t));
    if (!uses_kernel_ops(c)) {
        process_planes(c, w, surf, 0, real, cube, st);
        if (real < c->epa) {
            process_planes(c, w, surf, real, c->epa, w->data + real * w->plane, st);
        }
        return;
    }
    for (uint32_t l = 0; l < c->epa; l++) {
        const int32_t *src = l < real ? cube + l * w->plane : w->data + l * w->plane;
        process_planes(c, w, surf, l, l + 1, src, st);
    }
}

/*
 * A flying layer whose one X stage takes register or per-kernel operands
 * and whose output is int8 in atoms of 8 (a convolution's bias, scale and
 * ReLU on nv_small-like configurations) goes from CACC's planes straight
 * to the packed atoms (dla_sdp_lanes_x_cvt_atoms8): no int32 copy of the
 * surface, no separate packing; so does one whose BN adds a per-element
 * operand after BS (addend_form_of: a residual addition fused after the
 * convolution, dla_sdp_lanes_x_add_cvt_atoms8).  Decided once per layer.
 */
static int atoms8_eligible(const struct sdp_cfg *c, const struct sdp_work *w)
{
    if (w->addend) { /* BS, then BN's addend (addend_form_of) */
        return !w->op[SRC_BS_ALU] && !w->op[SRC_BS_MUL];
    }
    if (!c->flying || c->bpe != 1 || c->epa != 8 || c->eql || c->ew.en ||
        !dla_lanes_avx2_up(c->isa)) {
        return 0;
    }
    if (c->x[0].en && c->x[1].en) {
        /* BS then BN with constant operands: a pre-quantized model's
         * requantization in two multipliers, in 64-bit lanes
         * (dla_sdp_lanes_x2_cvt_atoms8: AVX-512 only; on AVX2 the
         * copying path's channel-by-channel stages stay) */
        return c->isa == DLA_LANES_AVX512 && !w->op[SRC_BS_ALU] && !w->op[SRC_BS_MUL] &&
               !w->op[SRC_BN_ALU] && !w->op[SRC_BN_MUL];
    }
    if (!c->x[0].en && !c->x[1].en) {
        return 0;
    }
    const int k1 = c->x[0].en ? 0 : 1;
    return !w->op[2 * k1] && !w->op[2 * k1 + 1];
}

/* Operand `src` of channel l of surface `surf` as a constant of the
 * channel: its per-kernel value, or the register's. */
static int32_t op_of_channel(const struct sdp_cfg *c, const struct sdp_work *w, int src,
                             uint32_t surf, uint32_t l)
{
    return c->src_used[src] && c->stream[src / 2].per_kernel ? kernel_op(c, w, src, surf, l)
                                                             : c->reg_op[src];
}

/* Pixels of one fallback step of surface_atoms8 (8 channels of them on
 * the stack). */
#define ATOMS8_STEP 256

/* Pixels [j0, j1) of surface `surf` into its atoms raw (the whole
 * surface's bytes) from CACC's planes of the surface (planes, `real` of
 * them; zeros after), whose pixel 0 is the surface's pixel px: in one
 * pass where every channel is exact in 32-bit lanes, else channel by
 * channel through process_run (the same values).  With w->addend, BN adds
 * the operand's bytes of the same pixels. */
static void surface_atoms8(const struct sdp_cfg *c, const struct sdp_work *w, uint32_t surf,
                           const int32_t *planes, uint32_t real, size_t px, size_t j0, size_t j1,
                           uint8_t *raw, struct sdp_stats *st)
{
    const int k1 = c->x[0].en ? 0 : 1;
    int32_t av[8], mv[8];
    for (uint32_t l = 0; l < 8; l++) {
        av[l] = op_of_channel(c, w, 2 * k1, surf, l);
        mv[l] = op_of_channel(c, w, 2 * k1 + 1, surf, l);
    }
    uint32_t sat = 0;
    const uint8_t *opd = w->addend ? w->addend[surf] + px * 8 : NULL;
    const int pixel = w->plane == 1 && j0 == 0 && j1 == 1; /* a fully connected layer's */
    /* the saturations only where D_PERF_OUT_SATURATION counts them (1,007
     * of MobileNetV2's 40,030 calls ran a second pass to count) */
    int done;
    if (c->x[0].en && c->x[1].en && !opd) {
        int32_t av2[8], mv2[8];
        for (uint32_t l = 0; l < 8; l++) {
            av2[l] = op_of_channel(c, w, SRC_BN_ALU, surf, l);
            mv2[l] = op_of_channel(c, w, SRC_BN_MUL, surf, l);
        }
        done = dla_sdp_lanes_x2_cvt_atoms8(c->isa, &c->lane_x[0], &c->lane_x[1], &c->lane_cvt,
                                           planes, w->plane, real, j0, j1, av, mv, av2, mv2, raw,
                                           c->perf_sat ? &sat : NULL);
    } else if (opd) {
        done = dla_sdp_lanes_x_add_cvt_atoms8(c->isa, &c->lane_x[0], &c->lane_x[1],
                                              &c->lane_cvt, planes, w->plane, real, j0, j1, av,
                                              mv, opd, c->x[1].alu_shift, raw,
                                              c->perf_sat ? &sat : NULL);
    } else if (pixel) {
        done = dla_sdp_lanes_x_cvt_pixel8(c->isa, &c->lane_x[k1], &c->lane_cvt, planes, real, av,
                                          mv, raw, &sat);
    } else {
        done = dla_sdp_lanes_x_cvt_atoms8(c->isa, &c->lane_x[k1], &c->lane_cvt, planes, w->plane,
                                          real, j0, j1, av, mv, raw, c->perf_sat ? &sat : NULL);
    }
    if (done) {
        st->sat += sat;
        return;
    }
    struct sdp_ops o[8];
    for (uint32_t l = 0; l < 8; l++) {
        for (int i = 0; i < SRC_N; i++) {
            o[l].op[i] = NULL;
            o[l].val[i] = op_of_channel(c, w, i, surf, l);
        }
    }
    /* a step's eight channels as planes of n values, then to atoms */
    int32_t buf[8 * ATOMS8_STEP], zeros[ATOMS8_STEP], add[ATOMS8_STEP];
    memset(zeros, 0, sizeof(zeros));
    for (size_t j = j0; j < j1; j += ATOMS8_STEP) {
        const size_t n = j1 - j < ATOMS8_STEP ? j1 - j : ATOMS8_STEP;
        for (uint32_t l = 0; l < 8; l++) {
            for (size_t i = 0; opd && i < n; i++) { /* the addend's channel l, decoded */
                add[i] = op_decode(c, SRC_BN_ALU, (int8_t)opd[(j + i) * 8 + l]);
            }
            o[l].op[SRC_BN_ALU] = opd ? add : NULL;
            process_run(c, l < real ? planes + l * w->plane + j : zeros, buf + l * n, n, &o[l],
                        st);
        }
        dla_atoms_from_planes(c->isa, buf, n, 8, raw + j * 8);
    }
}

/* ---- output ----------------------------------------------------------------- */

/* Output bytes of a surface in the atom layout: the low 8 or 16 bits of each
 * lane, little-endian. */
static void pack_surface(const struct sdp_cfg *c, const struct sdp_work *w)
{
    const size_t plane = w->plane;
    const unsigned epa = c->epa;
    uint8_t *raw = w->raw;
    if (c->bpe == 1 && w->planar) {
        dla_atoms_from_planes(c->isa, w->data, plane, epa, raw);
    } else if (c->bpe == 1) {
        for (size_t j = 0; j < w->n_surf; j++) {
            raw[j] = (uint8_t)((uint32_t)w->data[j] & 0xffu);
        }
    } else {
        for (size_t j = 0; j < w->n_surf; j++) {
            size_t at = w->planar ? (j % epa) * plane + j / epa : j;
            uint32_t v = (uint32_t)w->data[at];
            raw[2 * j] = (uint8_t)(v & 0xffu);
            raw[2 * j + 1] = (uint8_t)((v >> 8) & 0xffu);
        }
    }
}

/* Output of surface `surf` to PDP: the low bits of each lane, sign-extended. */
static void store_to_pdp(const struct sdp_cfg *c, const struct sdp_work *w, uint32_t surf,
                         struct dla_cube *to_pdp)
{
    for (uint32_t l = 0; l < c->epa; l++) {
        int32_t *dst = to_pdp->data + ((size_t)surf * c->epa + l) * w->plane;
        for (size_t j = 0; j < w->plane; j++) {
            size_t at = w->planar ? l * w->plane + j : j * c->epa + l;
            dst[j] = dla_sext((uint32_t)w->data[at], c->out_bits);
        }
    }
}

static int write_surface(struct dla_dev *d, const struct sdp_cfg *c, const uint8_t *raw,
                         size_t n_line, uint32_t surf, uint32_t b0, uint32_t b1);

/* Output of surface `surf`: to PDP, or to memory for batches [b0, b1)
 * (`packed`: its atoms are in w->raw already). */
static int store_surface(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                         uint32_t surf, uint32_t b0, uint32_t b1, struct dla_cube *to_pdp,
                         struct sdp_stats *st, int packed)
{
    if (c->to_pdp && !to_pdp->atoms) {
        store_to_pdp(c, w, surf, to_pdp);
        return 0;
    }
    if (!packed) {
        pack_surface(c, w);
    }
    if (c->to_pdp) { /* the atoms it would write, to PDP */
        memcpy(to_pdp->atoms + (size_t)surf * w->n_surf, w->raw, w->n_surf);
        return 0;
    }
    if (!st->unequal) { /* one non-zero byte of the layer decides */
        st->unequal = dla_sdp_lanes_any_nonzero(w->raw, w->n_surf * c->bpe);
    }
    return write_surface(d, c, w->raw, w->n_line, surf, b0, b1);
}

/* The packed bytes `raw` of surface `surf` to memory for batches [b0, b1). */
static int write_surface(struct dla_dev *d, const struct sdp_cfg *c, const uint8_t *raw,
                         size_t n_line, uint32_t surf, uint32_t b0, uint32_t b1)
{
    size_t line_bytes = n_line * c->bpe;
    if (c->eql) {
        /* ref: NV_NVDLA_SDP_WDMA_cmd.v cfg_mode_quite: EQL writes nothing */
        return 0;
    }
    for (uint32_t b = b0; b < b1; b++) {
        uint64_t base = c->dst_base + (uint64_t)b * c->dst_batch;
        int rc;
        if (c->packed && c->batches == 1) {
            /* ref: NV_NVDLA_SDP_WDMA_cmd.v cfg_mode_1x1_nbatch */
            rc = dla_dma_write(d, c->dst_port, (base + (uint64_t)surf * line_bytes) & c->addr_mask,
                               raw, line_bytes);
        } else {
            rc = dla_dma_write_lines(d, c->dst_port, c->addr_mask,
                                     base + (uint64_t)surf * c->dst_surf, c->dst_line, c->h,
                                     line_bytes, raw);
        }
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* A surface's output in pieces of memory it is written in place to: bytes
 * [off, off+n) of its atoms at `at`. */
struct out_piece {
    uint8_t *at;
    uint64_t addr;
    size_t off, n;
};

/* Pieces of a surface at most (one more goes through write_surface). */
#define OUT_PIECES 64

/* Bytes [off, off+n) of the surface at addr, split at the memory's pages,
 * appended to pc[*np]; 0 when a piece cannot be written in place. */
static int add_pieces(const struct dla_dev *d, int port, uint64_t addr, size_t off, size_t n,
                      struct out_piece *pc, size_t *np)
{
    while (n) {
        const size_t page_left = DLA_MEM_PAGE_BYTES - (size_t)(addr % DLA_MEM_PAGE_BYTES);
        const size_t k = n < page_left ? n : page_left;
        uint8_t *at = *np < OUT_PIECES ? dla_dma_write_view(d, port, addr, k) : NULL;
        if (!at || ((addr | k) & 7u)) { /* pieces of whole atoms */
            return 0;
        }
        pc[(*np)++] = (struct out_piece){at, addr, off, k};
        addr += k;
        off += k;
        n -= k;
    }
    return 1;
}

/* The bursts write_surface makes of surface `surf` of batch b (8-byte
 * atoms), as pieces written in place; 0 pieces when one of them cannot be
 * (then write_surface's way) or they do not cover the surface once. */
static size_t in_place_pieces(const struct dla_dev *d, const struct sdp_cfg *c,
                              const struct sdp_work *w, uint32_t surf, uint32_t b,
                              struct out_piece *pc)
{
    const size_t line_bytes = w->n_line * c->bpe;
    const uint64_t base = c->dst_base + (uint64_t)b * c->dst_batch;
    size_t np = 0;
    int ok;
    if (c->eql || line_bytes * c->h != w->n_surf * c->bpe) {
        return 0;
    }
    if (c->packed && c->batches == 1) { /* as write_surface: one burst of a line */
        ok = c->h == 1 && add_pieces(d, c->dst_port, (base + (uint64_t)surf * line_bytes) &
                                                         c->addr_mask, 0, line_bytes, pc, &np);
    } else if (c->h == 1 || c->dst_line == line_bytes) { /* dla_dma_write_lines' one burst */
        ok = add_pieces(d, c->dst_port, (base + (uint64_t)surf * c->dst_surf) & c->addr_mask, 0,
                        line_bytes * c->h, pc, &np);
    } else {
        ok = 1;
        for (uint32_t y = 0; y < c->h && ok; y++) {
            const uint64_t a = base + (uint64_t)surf * c->dst_surf + (uint64_t)y * c->dst_line;
            ok = add_pieces(d, c->dst_port, a & c->addr_mask, (size_t)y * line_bytes, line_bytes,
                            pc, &np);
        }
    }
    return ok ? np : 0;
}

/* Pixels [j0, j1) of surface `surf` straight into its pieces of memory
 * pc[i0..i1) (each piece's share of the range), from CACC's planes of the
 * surface whose pixel `px0` is at planes[0] (w->plane apart); returns 1
 * when a byte written is non-zero, or `known` (1: an earlier write of the
 * layer was, and the bytes are not looked at). */
static int atoms8_into_pieces(const struct sdp_cfg *c, const struct sdp_work *w,
                              const struct out_piece *pc, size_t i0, size_t i1, uint32_t surf,
                              const int32_t *planes, size_t px0, uint32_t real, size_t j0,
                              size_t j1, struct sdp_stats *st, int known)
{
    int nonzero = known;
    for (size_t i = i0; i < i1; i++) {
        const size_t a = pc[i].off / 8 > j0 ? pc[i].off / 8 : j0;
        const size_t b = (pc[i].off + pc[i].n) / 8 < j1 ? (pc[i].off + pc[i].n) / 8 : j1;
        if (a >= b) {
            continue;
        }
        uint8_t *at = pc[i].at + (a * 8 - pc[i].off);
        surface_atoms8(c, w, surf, planes + (a - px0), real, a, 0, b - a, at, st);
        nonzero = nonzero || dla_sdp_lanes_any_nonzero(at, (b - a) * 8);
    }
    return nonzero;
}

/* The memory's stamps and traffic for pieces pc[0..n) written in place,
 * in their order: a run of pieces one after the other in a page as one
 * write (the same blocks stamped, the same bytes counted), so that a page
 * the run covers whole is stamped once (mem.c `all_gen`).  The stamps are
 * what tells CSC's packed weights that these bytes changed
 * (tests/property/test_sdp_flying.c test_output_over_weights). */
static void wrote_pieces(struct dla_dev *d, int port, const struct out_piece *pc, size_t n)
{
    for (size_t i = 0; i < n;) {
        const uint64_t page = pc[i].addr / DLA_MEM_PAGE_BYTES;
        uint64_t end = pc[i].addr + pc[i].n;
        size_t j = i + 1;
        while (j < n && pc[j].addr == end && (end + pc[j].n - 1) / DLA_MEM_PAGE_BYTES == page) {
            end += pc[j++].n;
        }
        dla_dma_wrote(d, port, pc[i].addr, (size_t)(end - pc[i].addr));
        i = j;
    }
}

/* Surface `surf` of batch b by surface_atoms8 straight into the memory
 * (the same bytes, stamps and traffic as store_surface's write, without
 * the copy): 1 when done, 0 when it must go through w->raw. */
static int atoms8_in_place(struct dla_dev *d, const struct sdp_cfg *c, const struct sdp_work *w,
                           uint32_t surf, uint32_t b, const int32_t *planes, uint32_t real,
                           struct sdp_stats *st)
{
    struct out_piece pc[OUT_PIECES];
    const size_t np = in_place_pieces(d, c, w, surf, b, pc);
    /* in write_surface's order: later lines win */
    st->unequal = atoms8_into_pieces(c, w, pc, 0, np, surf, planes, 0, real, 0, SIZE_MAX, st,
                                     st->unequal);
    wrote_pieces(d, c->dst_port, pc, np);
    return np != 0;
}

/*
 * A flying layer of one pixel (a fully connected layer's: every surface's
 * plane is one value), batch b: every channel of the layer as one run
 * through the stages, its per-kernel operands as per-element ones, then
 * each surface's eight bytes stored.  surface_atoms8 would take a surface
 * at a time, and where the one-pass lanes refuse the values (products past
 * 32 bits) eight runs of one value each: Fashion-MNIST's 7x7x32 -> 64
 * layer took 7.5 us, 5 this way, MobileNetV2's 1,000-class layer 70 us, 52.
 * The same stages on the same values: the same bytes.
 */
static int pixel_layer(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                       const struct dla_cube *in, uint32_t b, struct sdp_stats *st)
{
    const size_t nch = (size_t)c->nsurf * c->epa;
    const size_t real = in->c < nch ? in->c : nch;
    int32_t small[2 * 256], *v = nch <= 256 ? small : malloc(2 * nch * sizeof(int32_t));
    if (!v) {
        return dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory");
    }
    int32_t *out = v + nch;
    memcpy(v, in->data + b * dla_cube_batch_elems(in), real * sizeof(int32_t));
    memset(v + real, 0, (nch - real) * sizeof(int32_t)); /* (surface_atoms8's zero planes) */
    struct sdp_ops o;
    for (int i = 0; i < SRC_N; i++) { /* as op_of_channel, for every channel at once */
        const int per_kernel = c->src_used[i] && c->stream[i / 2].per_kernel;
        o.op[i] = per_kernel ? w->kernel[i / 2] + (size_t)(i & 1) * nch : NULL;
        o.val[i] = per_kernel ? 0 : c->reg_op[i];
    }
    process_run(c, v, out, nch, &o, st);
    int rc = 0;
    for (uint32_t surf = 0; surf < c->nsurf && !rc; surf++) {
        for (uint32_t l = 0; l < c->epa; l++) {
            w->raw[l] = (uint8_t)((uint32_t)out[(size_t)surf * c->epa + l] & 0xffu);
        }
        rc = store_surface(d, c, w, surf, b, b + 1, NULL, st, 1);
    }
    if (v != small) {
        free(v);
    }
    return rc;
}

/* ---- hardware-updated registers ------------------------------------------- */

static uint32_t sat32(uint64_t v)
{
    return v > 0xffffffffu ? 0xffffffffu : (uint32_t)v;
}

/* Value of register REG in a run of registers from FIRST (CSB addresses). */
#define SDP_RUN_AT(run, FIRST, REG) (run)[DLA_REG_WORD(REG) - DLA_REG_WORD(FIRST)]
#define SDP_RUN_N(FIRST, LAST) (DLA_REG_WORD(LAST) - DLA_REG_WORD(FIRST) + 1u)

/* The status, statistics and stall registers of the layer's group, as four
 * runs of consecutive registers (software's D_PERF_ENABLE sits between
 * each unit's two).  Stall and FP16 NaN/Inf counters are 0 (see the
 * header). */
static void set_hw_regs(struct dla_dev *d, unsigned g, const struct sdp_cfg *c,
                        const struct sdp_stats *st)
{
    const int lut = c->perf_lut && c->ew.lut;
    struct dla_regfile *rf = dla_dev_rf_hw(d);
    uint32_t status[SDP_RUN_N(NVDLA_SDP_D_STATUS_0, NVDLA_SDP_D_STATUS_NAN_OUTPUT_NUM_0)] = {0};
    uint32_t perf[SDP_RUN_N(NVDLA_SDP_D_PERF_WDMA_WRITE_STALL_0, NVDLA_SDP_D_PERF_LUT_LO_HIT_0)] = {0};
    const uint32_t zeros[4] = {0};
    SDP_RUN_AT(status, NVDLA_SDP_D_STATUS_0, NVDLA_SDP_D_STATUS_0) = st->unequal ? 1u : 0u;
#define PERF_AT(REG) SDP_RUN_AT(perf, NVDLA_SDP_D_PERF_WDMA_WRITE_STALL_0, NVDLA_SDP_##REG##_0)
    PERF_AT(D_PERF_OUT_SATURATION) = c->perf_sat ? sat32(st->sat) : 0u;
    if (lut) {
        PERF_AT(D_PERF_LUT_UFLOW) = sat32(st->lut_uflow);
        PERF_AT(D_PERF_LUT_OFLOW) = sat32(st->lut_oflow);
        PERF_AT(D_PERF_LUT_HYBRID) = sat32(st->lut_hybrid);
        PERF_AT(D_PERF_LUT_LE_HIT) = sat32(st->lut_le_hit);
        PERF_AT(D_PERF_LUT_LO_HIT) = sat32(st->lut_lo_hit);
    }
#undef PERF_AT
    dla_regfile_unit_store(rf, NVDLA_UNIT_SDP, g, DLA_REG_WORD(NVDLA_SDP_D_STATUS_0), status,
                           SDP_RUN_N(NVDLA_SDP_D_STATUS_0, NVDLA_SDP_D_STATUS_NAN_OUTPUT_NUM_0));
    dla_regfile_unit_store(rf, NVDLA_UNIT_SDP, g, DLA_REG_WORD(NVDLA_SDP_D_PERF_WDMA_WRITE_STALL_0),
                           perf, SDP_RUN_N(NVDLA_SDP_D_PERF_WDMA_WRITE_STALL_0,
                                           NVDLA_SDP_D_PERF_LUT_LO_HIT_0));
    dla_regfile_unit_store(rf, NVDLA_UNIT_SDP_RDMA, g,
                           DLA_REG_WORD(NVDLA_SDP_RDMA_D_STATUS_NAN_INPUT_NUM_0), zeros,
                           SDP_RUN_N(NVDLA_SDP_RDMA_D_STATUS_NAN_INPUT_NUM_0,
                                     NVDLA_SDP_RDMA_D_STATUS_INF_INPUT_NUM_0));
    dla_regfile_unit_store(rf, NVDLA_UNIT_SDP_RDMA, g,
                           DLA_REG_WORD(NVDLA_SDP_RDMA_D_PERF_MRDMA_READ_STALL_0), zeros,
                           SDP_RUN_N(NVDLA_SDP_RDMA_D_PERF_MRDMA_READ_STALL_0,
                                     NVDLA_SDP_RDMA_D_PERF_ERDMA_READ_STALL_0));
}

/* ---- a flying layer on the device's team ------------------------------------- */

/*
 * A flying layer to memory whose operands are registers or per-kernel
 * values (a convolution's bias, scale and ReLU: no operand stream read per
 * surface) splits over the device's worker team (src/common/team.h):
 * every channel plane is its own run (the stages are element-wise and
 * exact on any range of elements, so the values are those of
 * process_surface), then every surface is packed; the memory writes stay
 * in surface order on the calling thread.  Each item writes only its own
 * planes, bytes and statistics.
 */
/* Below: the team's wake-up costs more.  16384 before b1d61c8:
 * MobileNetV2's 7x7x320 projection (15,680 values, products past 32 bits:
 * channel by channel) took 30 us on the calling thread, its 7x7x160 and
 * 14x14x64 ones 4-10 us, its residual additions of 7,840-12,544 values 4-5
 * us each, while the worker waited (rdtsc, 2 threads); its depthwise
 * blocks' surfaces (up to 28x28x8, 6,272) stay alone (csc.c
 * DW_TEAM_MIN_MACS: they lose there).  7168 until round 41: on the Intel
 * host a network of small layers, whose worker joins each job late,
 * waited for it at the close: Fashion-MNIST (its 14x14x64 SDP layer, 12,544
 * values) 0.042-0.048 ms an image on average against 0.032 alone (2,000
 * images, three alternated runs); MobileNetV2 5.48-5.64 -> 5.49-5.73 ms,
 * ResNet-18 unchanged. */
#define SDP_TEAM_MIN_ELEMS 14336
#define SDP_TEAM_ITEM_ELEMS 8192 /* elements per item, about */

struct atoms8_split {
    size_t per_surf;  /* items a surface (1 when several surfaces an item) */
    size_t surfs;     /* surfaces an item */
    size_t items;
};

struct sdp_par {
    const struct sdp_cfg *c;
    const struct sdp_work *w;   /* geometry, per-kernel operands */
    const struct dla_cube *in;  /* CACC's cube (batch 0) */
    int32_t *data;              /* every surface's planes */
    uint8_t *raw;               /* every surface's packed bytes */
    size_t per_item;            /* channels per item */
    struct sdp_stats *st;       /* one per item */
    int *nonzero;               /* one per surface, and per item with par_atoms8 */
    const struct out_piece *pc; /* surface s's in place: pc[pc0[s]] to pc[pc0[s + 1]] */
    const size_t *pc0;          /* NULL: every surface through raw */
    struct atoms8_split split;  /* par_atoms8's items */
};

static int team_eligible(const struct sdp_cfg *c, const struct sdp_work *w,
                         const struct dla_team *team)
{
    /* to PDP: the atoms8 items' bytes are the int8 cube PDP takes
     * (MobileNetV2's 7x7x1280 layer before its average pool: SDP 17 us on
     * the calling thread, 12 on the team) */
    const int to_pdp_ok = c->bpe == 1 && atoms8_eligible(c, w);
    if (!team || !c->flying || (c->to_pdp && !to_pdp_ok) || c->batches != 1 || c->eql ||
        c->ew.en) {
        return 0;
    }
    for (int i = 0; i < SRC_N; i++) {
        if (w->op[i]) {
            return 0; /* per-element operands: read surface by surface */
        }
    }
    return (size_t)c->nsurf * w->n_surf >= SDP_TEAM_MIN_ELEMS;
}

static void par_channels(void *ctx, size_t item)
{
    const struct sdp_par *p = ctx;
    const struct sdp_cfg *c = p->c;
    const size_t nch = (size_t)c->nsurf * c->epa, plane = p->w->plane;
    const size_t ch1 = (item + 1) * p->per_item < nch ? (item + 1) * p->per_item : nch;
    struct sdp_work w = *p->w;
    for (size_t ch = item * p->per_item; ch < ch1; ch++) {
        const uint32_t surf = (uint32_t)(ch / c->epa), l = (uint32_t)(ch % c->epa);
        w.data = p->data + (size_t)surf * w.n_surf;
        const int32_t *src = p->in->data + ch * plane;
        if (ch >= p->in->c) { /* channels CACC does not provide are 0 */
            memset(w.data + (size_t)l * plane, 0, plane * sizeof(int32_t));
            src = w.data + (size_t)l * plane;
        }
        process_planes(c, &w, surf, l, l + 1, src, &p->st[item]);
    }
}

static void par_pack(void *ctx, size_t surf)
{
    const struct sdp_par *p = ctx;
    struct sdp_work w = *p->w;
    w.data = p->data + surf * w.n_surf;
    w.raw = p->raw + surf * w.n_surf * p->c->bpe;
    pack_surface(p->c, &w);
    p->nonzero[surf] = dla_sdp_lanes_any_nonzero(w.raw, w.n_surf * p->c->bpe);
}

/* Pixels per item of a layer split by surface_atoms8. */
#define SDP_TEAM_ITEM_PIXELS (SDP_TEAM_ITEM_ELEMS / 8)

/* How par_atoms8 splits a layer: a surface's pixels in pieces of
 * SDP_TEAM_ITEM_PIXELS, or, for planes under that, whole surfaces a few
 * to an item (a 7x7 layer's surfaces are 392 values: an item a surface
 * made 120 items of ~0.1 us for a 960-channel layer, each a take of the
 * team's shared counter and a set-up of its eight channels' operands). */
static struct atoms8_split atoms8_split_of(const struct dla_team *team, size_t plane,
                                           size_t nsurf)
{
    struct atoms8_split a;
    a.per_surf = (plane + SDP_TEAM_ITEM_PIXELS - 1) / SDP_TEAM_ITEM_PIXELS;
    /* at most SDP_TEAM_ITEM_PIXELS pixels an item, at least four items a
     * thread (the balance at the job's end) */
    a.surfs = dla_team_units_per_item(team, nsurf, plane, SDP_TEAM_ITEM_PIXELS);
    a.items = a.surfs > 1 ? (nsurf + a.surfs - 1) / a.surfs : nsurf * a.per_surf;
    return a;
}

/* Pixels [j0, j1) of surface surf into its atoms, statistics into *st;
 * whether a byte written is nonzero. */
static int atoms8_part(const struct sdp_par *p, uint32_t surf, size_t j0, size_t j1,
                       struct sdp_stats *st)
{
    const struct sdp_cfg *c = p->c;
    const size_t plane = p->w->plane, ch0 = (size_t)surf * c->epa;
    const uint32_t real = p->in->c - ch0 < c->epa ? (uint32_t)(p->in->c - ch0) : c->epa;
    const int32_t *planes = p->in->data + ch0 * plane;
    if (p->pc0) {
        return atoms8_into_pieces(c, p->w, p->pc, p->pc0[surf], p->pc0[surf + 1], surf, planes, 0,
                                  real, j0, j1, st, 0);
    }
    uint8_t *raw = p->raw + surf * p->w->n_surf;
    surface_atoms8(c, p->w, surf, planes, real, 0, j0, j1, raw, st);
    return dla_sdp_lanes_any_nonzero(raw + j0 * 8, (j1 - j0) * 8);
}

/* Item: a range of pixels of one surface, or whole surfaces
 * (atoms8_split_of), straight to their atoms. */
static void par_atoms8(void *ctx, size_t item)
{
    const struct sdp_par *p = ctx;
    const size_t plane = p->w->plane, nsurf = p->c->nsurf;
    const struct atoms8_split a = p->split;
    if (a.surfs > 1) {
        const size_t s1 = (item + 1) * a.surfs < nsurf ? (item + 1) * a.surfs : nsurf;
        int nonzero = 0;
        for (size_t surf = item * a.surfs; surf < s1; surf++) {
            nonzero |= atoms8_part(p, (uint32_t)surf, 0, plane, &p->st[item]);
        }
        p->nonzero[item] = nonzero;
        return;
    }
    const size_t j0 = item % a.per_surf * SDP_TEAM_ITEM_PIXELS;
    const size_t j1 = j0 + SDP_TEAM_ITEM_PIXELS < plane ? j0 + SDP_TEAM_ITEM_PIXELS : plane;
    p->nonzero[item] = atoms8_part(p, (uint32_t)(item / a.per_surf), j0, j1, &p->st[item]);
}

/* 1 when no two bytes of batch 0's output surfaces (the bursts
 * write_surface makes) share an address: then surfaces and their lines can
 * be written in any order, by any thread, with write_surface's result. */
static int surfaces_apart(const struct sdp_cfg *c, const struct sdp_work *w)
{
    const uint64_t line_bytes = (uint64_t)w->n_line * c->bpe;
    uint64_t span, stride;
    if (c->packed && c->batches == 1) {
        stride = span = line_bytes; /* one line a surface (in_place_pieces: h == 1) */
    } else {
        if (c->h > 1 && c->dst_line < line_bytes) {
            return 0; /* lines overlap: the later wins */
        }
        span = (uint64_t)(c->h - 1) * c->dst_line + line_bytes;
        stride = c->dst_surf;
        if (c->nsurf > 1 && stride < span) {
            return 0;
        }
    }
    const uint64_t base = c->dst_base, last = (uint64_t)(c->nsurf - 1) * stride + span - 1;
    /* no wrap at the address mask (two addresses, one byte) */
    return base <= c->addr_mask && last <= c->addr_mask - base;
}

/* Every surface's in-place pieces (in_place_pieces, batch 0), surface s's
 * at (*pc)[(*pc0)[s]] to (*pc)[(*pc0)[s + 1]]: 1 when every surface has
 * them and no two overlap, else 0 and nothing allocated. */
static int team_pieces(const struct dla_dev *d, const struct sdp_cfg *c, const struct sdp_work *w,
                       struct out_piece **pc, size_t **pc0)
{
    size_t n = 0, cap = (size_t)c->nsurf * 2 + OUT_PIECES;
    *pc = NULL;
    *pc0 = NULL;
    if (!surfaces_apart(c, w)) {
        return 0;
    }
    struct out_piece *all = malloc(cap * sizeof(*all));
    size_t *at = malloc(((size_t)c->nsurf + 1) * sizeof(*at));
    for (uint32_t s = 0; all && at && s < c->nsurf; s++) {
        if (n + OUT_PIECES > cap) { /* room for a surface's pieces at most */
            cap = 2 * cap;
            struct out_piece *more = realloc(all, cap * sizeof(*all));
            if (!more) {
                break;
            }
            all = more;
        }
        const size_t np = in_place_pieces(d, c, w, s, 0, all + n);
        at[s] = n;
        if (np == 0) {
            break;
        }
        n += np;
        if (s + 1 == c->nsurf) {
            at[c->nsurf] = n;
            *pc = all;
            *pc0 = at;
            return 1;
        }
    }
    free(all);
    free(at);
    return 0;
}

static int run_on_team(struct dla_dev *d, struct dla_team *team, const struct sdp_cfg *c,
                       const struct sdp_work *w, const struct dla_cube *in, struct sdp_stats *st,
                       struct dla_cube *to_pdp)
{
    const size_t nch = (size_t)c->nsurf * c->epa, nsurf_elems = (size_t)c->nsurf * w->n_surf;
    const int atoms8 = atoms8_eligible(c, w);
    struct sdp_par p = { c, w, in, NULL, NULL, 0, NULL, NULL, NULL, NULL, { 0, 0, 0 } };
    struct out_piece *pc = NULL;
    size_t *pc0 = NULL;
    p.per_item = SDP_TEAM_ITEM_ELEMS / w->plane + 1;
    p.split = atoms8_split_of(team, w->plane, c->nsurf);
    const size_t items = atoms8 ? p.split.items : (nch + p.per_item - 1) / p.per_item;
    /* atoms8 items write their bytes in place where they can: no write-out
     * after the job (the stamps and traffic are had after it, in surface
     * order, as write_surface's) */
    /* to PDP (atoms8, team_eligible): the items write PDP's cube */
    const int pdp = c->to_pdp;
    const int in_place = !pdp && atoms8 && team_pieces(d, c, w, &pc, &pc0);
    p.pc = pc;
    p.pc0 = pc0;
    p.data = atoms8 ? NULL : malloc(nsurf_elems * sizeof(int32_t));
    p.raw = pdp ? (uint8_t *)to_pdp->atoms : in_place ? NULL : malloc(nsurf_elems * c->bpe);
    p.st = calloc(items, sizeof(*p.st));
    /* one a surface (read below) and, with atoms8, one an item (fewer than
     * the surfaces when an item takes several: atoms8_split_of) */
    p.nonzero = calloc(atoms8 && items > c->nsurf ? items : c->nsurf, sizeof(int));
    int rc = 0;
    if ((!atoms8 && !p.data) || (!in_place && !p.raw) || !p.st || !p.nonzero) {
        rc = dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory for a %ux%ux%u cube",
                       c->w, c->h, c->c);
    }
    if (!rc && atoms8) {
        dla_team_run(team, items, par_atoms8, &p);
        for (size_t i = 1; i < items; i++) {
            p.nonzero[0] |= p.nonzero[i];
        }
    } else if (!rc) {
        dla_team_run(team, items, par_channels, &p);
        dla_team_run(team, c->nsurf, par_pack, &p);
    }
    for (size_t i = 0; !rc && i < items; i++) {
        stats_add(st, &p.st[i]);
    }
    for (uint32_t s = 0; !rc && !pdp && s < c->nsurf; s++) {
        /* (to PDP nothing is written: D_STATUS as sdp_execute's surfaces leave it) */
        st->unequal |= p.nonzero[s];
        if (!in_place) {
            rc = write_surface(d, c, p.raw + (size_t)s * w->n_surf * c->bpe, w->n_line, s, 0, 1);
        }
    }
    if (!rc && !pdp && in_place) {
        wrote_pieces(d, c->dst_port, pc, pc0[c->nsurf]); /* every surface's, in order */
    }
    free(pc);
    free(pc0);
    free(p.data);
    if (!pdp) {
        free(p.raw);
    }
    free(p.st);
    free(p.nonzero);
    return rc;
}

/* ---- a convolution's output in bands of rows (dla.h dla_conv_band_*) ----------- */

/*
 * A flying layer that run_on_team's atoms8 items would take, fed by a
 * convolution that left its values to be computed (in->band): the output
 * rows go in bands, each computed by the kernel, delivered by CACC and
 * turned into atoms by surface_atoms8 while in cache, the bands shared over
 * the team (a thread's seat reuses one buffer); the memory writes then go
 * in surface order on the calling thread, as run_on_team's.  Every stage is
 * element-wise, so a band's values are those of the whole cube's, and the
 * statistics are sums (and an OR) over the bands.
 */
struct sdp_band_par {
    const struct sdp_cfg *c;
    const struct sdp_work *w;
    const struct dla_cube *in;
    /* by the thread's team seat (dla_team_seat: the calling thread 0, the
     * workers 1 on): its band at buf + seat * seat_elems, and its entry of
     * each array below */
    const struct dla_team *team;
    int32_t *buf;
    size_t seat_elems;
    uint8_t *raw;            /* every surface's atoms (NULL: written in place) */
    const struct out_piece *pc; /* in place: surface s's at pc[pc0[s]] to pc[pc0[s + 1]] */
    const size_t *pc0;
    uint32_t rows, nbands;
    /* the bands not taken: [low 32 bits, high 32 bits) (take_band) */
    _Atomic uint64_t left;
    struct sdp_stats *st;    /* one per seat */
    int *nonzero;            /* one per seat */
    int *rc;                 /* one per seat */
    uint32_t *bad_row;       /* one per seat: first row of a failed band */
};

static int bands_eligible(const struct sdp_cfg *c, const struct sdp_work *w)
{
    if (c->to_pdp || c->batches != 1 || !atoms8_eligible(c, w)) {
        return 0;
    }
    for (int i = 0; i < SRC_N; i++) {
        if (w->op[i]) {
            return 0;
        }
    }
    return 1;
}

/* Rows [y0, y1) of every surface, from their values at buf, into atoms. */
static void band_atoms8(const struct sdp_band_par *p, uint32_t y0, uint32_t y1,
                        const int32_t *buf, unsigned seat)
{
    const struct sdp_cfg *c = p->c;
    struct sdp_work w = *p->w;
    w.plane = (size_t)(y1 - y0) * c->w;
    for (uint32_t surf = 0; surf < c->nsurf; surf++) {
        const size_t ch0 = (size_t)surf * c->epa;
        const uint32_t real = p->in->c - ch0 < c->epa ? (uint32_t)(p->in->c - ch0) : c->epa;
        if (p->pc0) {
            const size_t j0 = (size_t)y0 * c->w;
            p->nonzero[seat] = atoms8_into_pieces(c, &w, p->pc, p->pc0[surf], p->pc0[surf + 1],
                                                  surf, buf + ch0 * w.plane, j0, real, j0,
                                                  j0 + w.plane, &p->st[seat], p->nonzero[seat]);
            continue;
        }
        uint8_t *raw = p->raw + surf * p->w->n_surf + (size_t)y0 * c->w * 8;
        surface_atoms8(c, &w, surf, buf + ch0 * w.plane, real, (size_t)y0 * c->w, 0, w.plane, raw,
                       &p->st[seat]);
        p->nonzero[seat] = p->nonzero[seat] || dla_sdp_lanes_any_nonzero(raw, w.plane * 8);
    }
}

/* The next band for the thread at `seat`, or -1: seat 0's (the team
 * owner's thread, whichever thread runs the layer) from the layer's top,
 * the workers' from its bottom, so each thread's bands are the rows a team
 * job's first items (seat 0's home share) or last ones gave it, as a
 * depthwise block's fetch by rows did (team.h dla_team_run_local). */
static int64_t take_band(struct sdp_band_par *p, unsigned seat)
{
    uint64_t v = atomic_load_explicit(&p->left, memory_order_relaxed);
    for (;;) {
        const uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
        if (lo >= hi) {
            return -1;
        }
        const uint64_t next = seat == 0 ? v + 1u : v - ((uint64_t)1 << 32);
        if (atomic_compare_exchange_weak_explicit(&p->left, &v, next, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            return seat == 0 ? lo : hi - 1u;
        }
    }
}

static void band_body(void *ctx)
{
    struct sdp_band_par *p = ctx;
    const unsigned seat = dla_team_seat(p->team);
    int32_t *buf = p->buf + seat * p->seat_elems;
    for (;;) {
        const int64_t band = take_band(p, seat);
        if (band < 0) {
            return;
        }
        const uint32_t i = (uint32_t)band;
        const uint32_t y0 = i * p->rows;
        const uint32_t y1 = p->c->h - y0 < p->rows ? p->c->h : y0 + p->rows;
        int rc = dla_conv_band_rows(p->in->band, y0, y1, buf);
        if (rc) {
            p->rc[seat] = rc;
            p->bad_row[seat] = y0;
            return;
        }
        band_atoms8(p, y0, y1, buf, seat);
    }
}

static int run_bands(struct dla_dev *d, struct dla_team *team, const struct sdp_cfg *c,
                     const struct sdp_work *w, const struct dla_cube *in, struct sdp_stats *st)
{
    struct sdp_band_par p;
    unsigned threads;
    memset(&p, 0, sizeof(p));
    p.c = c;
    p.w = w;
    p.in = in;
    p.rows = dla_conv_band_height(in->band);
    threads = dla_team_threads(team);
    p.nbands = (c->h + p.rows - 1) / p.rows;
    const unsigned seats = threads < p.nbands ? threads : p.nbands;
    p.seat_elems = (size_t)p.rows * c->w * in->c;
    int32_t *own = NULL;
    /* Each thread's bands in lines its cache keeps: the calling thread's
     * (team seat 0) just below the middle of CACC's buffer, where it
     * writes every layer's first channels, a worker's above it, where the
     * others go (cbuf.c dla_cacc_cube_place).  From the layer's own cube
     * instead, a 112x112x96 layer's bands went to a part of the buffer no
     * smaller layer touches: its band calls took 16-222 us for the same
     * work, 17-137 from the middle (MobileNetV2, two threads, rdtsc). */
    p.team = team;
    p.buf = dla_cacc_cube_middle(dla_dev_conv_state(d), p.seat_elems,
                                 (uint64_t)(threads - 1) * p.seat_elems);
    if (p.buf == NULL) {
        p.buf = threads * p.seat_elems <= dla_cube_batch_elems(in)
                    ? in->data /* CACC's cube buffer, kept between layers */
                    : (own = malloc(threads * p.seat_elems * sizeof(int32_t)));
    }
    /* the bands write their atoms in place where they can (the input is
     * CBUF's copy, never the memory): no write-out after the job */
    struct out_piece *pc = NULL;
    size_t *pc0 = NULL;
    const int in_place = team_pieces(d, c, w, &pc, &pc0);
    p.pc = pc;
    p.pc0 = pc0;
    p.raw = in_place ? NULL : malloc((size_t)c->nsurf * w->n_surf);
    p.st = calloc(threads, sizeof(*p.st));
    p.nonzero = calloc(threads, sizeof(int));
    p.rc = calloc(threads, sizeof(int));
    p.bad_row = calloc(threads, sizeof(uint32_t));
    atomic_init(&p.left, (uint64_t)p.nbands << 32);
    int rc = 0;
    if (!p.buf || (!in_place && !p.raw) || !p.st || !p.nonzero || !p.rc || !p.bad_row) {
        rc = dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory for a %ux%ux%u cube",
                       c->w, c->h, c->c);
    }
    if (!rc) {
        /* (each thread's bands its own, start to end: shared also when the
         * layer runs chained on the worker, csc.c dw_band_rows) */
        dla_team_join_local(seats > 1 ? team : NULL, seats - 1, band_body, &p);
    }
    for (unsigned i = 0; !rc && i < threads; i++) {
        if (p.rc[i]) {
            const uint32_t last = c->h - p.bad_row[i] < p.rows ? c->h - 1
                                                               : p.bad_row[i] + p.rows - 1;
            rc = dla_error(d, p.rc[i], "CSC: convolution kernel failed (%s) on output rows %u-%u "
                           "of a %ux%ux%u layer", dlasim_status_name(p.rc[i]), p.bad_row[i],
                           last, c->w, c->h, in->c);
        }
        stats_add(st, &p.st[i]);
        st->unequal |= p.nonzero[i];
    }
    if (in_place) { /* every surface's pieces, in order (also after a failed band: stamped) */
        wrote_pieces(d, c->dst_port, pc, pc0[c->nsurf]);
    }
    for (uint32_t s = 0; !rc && !in_place && s < c->nsurf; s++) {
        rc = write_surface(d, c, p.raw + (size_t)s * w->n_surf, w->n_line, s, 0, 1);
    }
    free(pc);
    free(pc0);
    free(own);
    free(p.raw);
    free(p.st);
    free(p.nonzero);
    free(p.rc);
    free(p.bad_row);
    return rc;
}

/* ---- a layer from memory, surfaces on the team ------------------------------ */

/*
 * A layer reading its input from memory (MRDMA) to memory: the calling
 * thread reads every surface of the input and of the per-element operand
 * streams (the memory port is the caller's), the team takes the surfaces
 * (each a run in the atom layout, a chunk at a time: input widened, operands
 * decoded, the stages, the output narrowed back over the chunk's input
 * bytes), then the caller writes them in surface order.  The values are
 * those of process_surface: every stage is element-wise.
 */
struct sdp_mem_par {
    const struct sdp_cfg *c;
    const struct sdp_work *w;   /* geometry, per-kernel operands */
    uint8_t *bytes;             /* every surface's input, then its output */
    const uint8_t *stream[3];   /* every surface of each per-element stream */
    int32_t table[SRC_N][256];  /* op_decode of one-byte components not shl_ops */
    unsigned shl[SRC_N];        /* shift of dla_sdp_lanes_shl_ops, or SHL_NONE */
    int chain;                  /* BS, BN, converter in one pass (ch) */
    int chain_wide;             /* ... its converter in 64-bit products (ch.wide: chain8 only) */
    int chain8;                 /* ... on the int8 bytes (dla_sdp_lanes_chain8) */
    struct sdp_lane_chain ch;
    int32_t vals[4];            /* X operands not read per element */
    struct sdp_stats *st;       /* one per surface */
    int *nonzero;               /* one per surface */
    int *nomem;                 /* one per surface */
};

#define SHL_NONE 64u

/* The left shift op_decode is for this component (the saturation of
 * sdp_shl_su cannot apply to a `size`-byte value shifted by it), else
 * SHL_NONE. */
static unsigned op_shl(const struct sdp_cfg *c, int src, unsigned size)
{
    switch (src) {
    case SRC_BS_ALU:
    case SRC_BN_ALU:
        return c->x[src / 2].alu_shift <= 32 - 8 * size ? c->x[src / 2].alu_shift : SHL_NONE;
    case SRC_BS_MUL:
    case SRC_BN_MUL:
        return 0;
    case SRC_EW_ALU:
        return c->ew.alu_cvt.bypass ? 0 : SHL_NONE;
    default:
        return c->ew.mul_cvt.bypass ? 0 : SHL_NONE;
    }
}

/* Component `src` of lanes [i, i + n) of surface `surf` into out. */
static void mem_chunk_op(const struct sdp_mem_par *p, int src, uint32_t surf, size_t i, size_t n,
                         int32_t *out)
{
    const struct sdp_cfg *c = p->c;
    const struct sdp_stream *s = &c->stream[src / 2];
    if (s->per_kernel) { /* lane j is channel j % epa of the surface */
        const int32_t *ch = &p->w->kernel[src / 2][(size_t)(src & 1) * c->nsurf * c->epa +
                                                   (size_t)surf * c->epa];
        for (size_t j = 0, l = i % c->epa; j < n; j++, l = l + 1 == c->epa ? 0 : l + 1) {
            out[j] = ch[l];
        }
        return;
    }
    const size_t eb = s->elem_bytes;
    const uint8_t *e = p->stream[src / 2] + ((size_t)surf * p->w->n_surf + i) * eb + s->off[src & 1];
    if (p->shl[src] != SHL_NONE) {
        dla_sdp_lanes_shl_ops(c->isa, e, eb, s->size, p->shl[src], out, n);
    } else if (s->size == 1) {
        for (size_t j = 0; j < n; j++) {
            out[j] = p->table[src][e[j * eb]];
        }
    } else {
        for (size_t j = 0; j < n; j++) {
            out[j] = op_decode(c, src, load_elem(e + j * eb, 2));
        }
    }
}

/* The chain of surface `surf` on its bytes in place (p->chain8). */
static void mem_surface8(const struct sdp_mem_par *p, size_t surf)
{
    const struct sdp_cfg *c = p->c;
    const size_t n_surf = p->w->n_surf;
    struct sdp_lane_op8 o[4];
    for (int k = 0; k < 4; k++) {
        const struct sdp_stream *s = &c->stream[k / 2];
        o[k].p = NULL;
        o[k].stride = s->elem_bytes;
        o[k].shl = p->shl[k];
        o[k].val = p->vals[k];
        if (c->src_used[k]) {
            o[k].p = p->stream[k / 2] + surf * n_surf * s->elem_bytes + s->off[k & 1];
        }
    }
    uint8_t *bytes = p->bytes + surf * n_surf;
    p->st[surf].sat += dla_sdp_lanes_chain8(c->isa, &p->ch, bytes, bytes, n_surf, o);
    p->nonzero[surf] = dla_sdp_lanes_any_nonzero(bytes, n_surf);
}

static void mem_surface(void *ctx, size_t surf)
{
    const struct sdp_mem_par *p = ctx;
    const struct sdp_cfg *c = p->c;
    const size_t n_surf = p->w->n_surf;
    if (p->chain8) {
        mem_surface8(p, surf);
        return;
    }
    int32_t *buf = malloc((size_t)(1 + SRC_N) * SDP_CHUNK * sizeof(int32_t));
    if (!buf) {
        p->nomem[surf] = 1;
        return;
    }
    uint8_t *bytes = p->bytes + surf * n_surf * c->bpe;
    for (size_t i = 0; i < n_surf; i += SDP_CHUNK) {
        const size_t n = n_surf - i < SDP_CHUNK ? n_surf - i : SDP_CHUNK;
        struct sdp_ops o;
        dla_sdp_lanes_widen(c->isa, bytes + i * c->bpe, c->bpe, buf, n);
        for (int k = 0; k < SRC_N; k++) {
            o.val[k] = c->reg_op[k];
            o.op[k] = NULL;
            if (c->src_used[k]) {
                o.op[k] = buf + (size_t)(1 + k) * SDP_CHUNK;
                mem_chunk_op(p, k, (uint32_t)surf, i, n, (int32_t *)o.op[k]);
            }
        }
        if (p->chain) {
            p->st[surf].sat += dla_sdp_lanes_chain(c->isa, &p->ch, buf, buf, n, o.op, p->vals);
        } else {
            process_chunk(c, buf, buf, n, &o, &p->st[surf]);
        }
        dla_sdp_lanes_narrow(c->isa, buf, n, c->bpe, bytes + i * c->bpe);
    }
    p->nonzero[surf] = dla_sdp_lanes_any_nonzero(bytes, n_surf * c->bpe);
    free(buf);
}

/* Reads every surface of the input and of the per-element streams; *done
 * = the surfaces read whole before an error. */
static int mem_read_all(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_mem_par *p,
                        uint8_t *streams[3], uint32_t *done)
{
    const size_t n_surf = p->w->n_surf;
    for (uint32_t s = 0; s < c->nsurf; s++) {
        *done = s;
        int rc = read_surface(d, c, c->src_port, c->src_base, c->src_line, c->src_surf, c->bpe, s,
                              p->bytes + (size_t)s * n_surf * c->bpe);
        for (int i = 0; i < 3 && !rc; i++) {
            const struct sdp_stream *st = &c->stream[i];
            if (streams[i]) {
                rc = read_surface(d, c, st->port, st->base, st->line_stride, st->surf_stride,
                                  st->elem_bytes, s, streams[i] + (size_t)s * n_surf * st->elem_bytes);
            }
        }
        if (rc) {
            return rc;
        }
    }
    *done = c->nsurf;
    return 0;
}

static void mem_prepare_ops(const struct sdp_cfg *c, struct sdp_mem_par *p)
{
    for (int k = 0; k < SRC_N; k++) {
        p->shl[k] = c->src_used[k] ? op_shl(c, k, c->stream[k / 2].size) : SHL_NONE;
        if (c->src_used[k] && p->shl[k] == SHL_NONE && c->stream[k / 2].size == 1) {
            for (int b = 0; b < 256; b++) {
                p->table[k][b] = op_decode(c, k, (int8_t)b);
            }
        }
    }
}

/* Range of X operand `src` over the layer into [*lo, *hi]; 0 when it is
 * decoded by op_decode per element (no bound kept). */
static int x_op_range(const struct sdp_cfg *c, const struct sdp_work *w,
                      const struct sdp_mem_par *p, int src, int32_t *lo, int32_t *hi)
{
    const struct sdp_stream *s = &c->stream[src / 2];
    if (!c->src_used[src]) {
        *lo = *hi = c->reg_op[src];
        return 1;
    }
    if (s->per_kernel) {
        const size_t nch = (size_t)c->nsurf * c->epa;
        const int32_t *k = w->kernel[src / 2] + (size_t)(src & 1) * nch;
        *lo = *hi = k[0];
        for (size_t i = 1; i < nch; i++) {
            *lo = k[i] < *lo ? k[i] : *lo;
            *hi = k[i] > *hi ? k[i] : *hi;
        }
        return 1;
    }
    if (p->shl[src] == SHL_NONE) {
        return 0;
    }
    /* the shift keeps the component's range within 32 bits (op_shl) */
    int64_t top = (INT64_C(1) << (8 * s->size - 1)) * (INT64_C(1) << p->shl[src]);
    *lo = (int32_t)-top;
    *hi = (int32_t)(top - (INT64_C(1) << p->shl[src]));
    return 1;
}

/* BS, BN and the converter as one chain of 32-bit lanes where the input's
 * width and the operands' ranges keep every value exact there (the common
 * element-wise layer: an int8 input scaled by BS, an int8 operand added by
 * BN, ReLU). */
static int mem_prepare_chain(const struct sdp_cfg *c, const struct sdp_work *w,
                             struct sdp_mem_par *p)
{
    int32_t lo[4], hi[4];
    if (c->ew.en || c->eql) {
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        if (!x_op_range(c, w, p, k, &lo[k], &hi[k])) {
            return 0;
        }
    }
    int32_t in_hi = (int32_t)sdp_smax(8 * c->bpe), in_lo = (int32_t)sdp_smin(8 * c->bpe);
    const struct sdp_lane_x_cfg *x0 = c->x[0].en ? &c->lane_x[0] : NULL;
    const struct sdp_lane_x_cfg *x1 = c->x[1].en ? &c->lane_x[1] : NULL;
    const int narrow = dla_sdp_lane_chain_init(&p->ch, x0, x1, &c->lane_cvt, in_lo, in_hi, lo, hi);
    /* else the stages in 32-bit lanes, the converter in 64-bit products: on
     * the int8 bytes only (mem_chain8; a pre-quantized model's Add), in
     * AVX-512 lanes (elsewhere its form runs element by element: the stages
     * one by one stay) */
    p->chain_wide = !narrow && c->bpe == 1 && c->isa == DLA_LANES_AVX512 &&
                    dla_sdp_lane_chain_init_wide(&p->ch, x0, x1, &c->lane_cvt, in_lo, in_hi, lo,
                                                 hi);
    for (int k = 0; k < 4; k++) {
        /* an absent stage is the identity: ALU operand 0, MUL operand 1 */
        p->vals[k] = c->x[k / 2].en ? c->reg_op[k] : (k & 1);
    }
    return narrow;
}

/* Can the chain run on the int8 bytes (dla_sdp_lanes_chain8)?  An int8
 * input, and every X operand read per element a one-byte component of a
 * stream with one or two of them, shifted (op_shl) as it is decoded. */
static int mem_chain8(const struct sdp_cfg *c, const struct sdp_mem_par *p)
{
    if (!(p->chain || p->chain_wide) || c->bpe != 1) {
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        const struct sdp_stream *s = &c->stream[k / 2];
        if (c->src_used[k] && (s->per_kernel || s->size != 1 || p->shl[k] == SHL_NONE ||
                               p->shl[k] > 24 || s->elem_bytes < 1 || s->elem_bytes > 2)) {
            return 0;
        }
    }
    return 1;
}

static void mem_stats(const struct sdp_mem_par *p, uint32_t nsurf, struct sdp_stats *st)
{
    for (uint32_t i = 0; i < nsurf; i++) {
        stats_add(st, &p->st[i]);
        st->unequal |= p->nonzero[i];
    }
}

/* Bytes [*lo, *hi) a cube spans from `base` (surfaces, lines, batches);
 * 0 when it wraps at the address width. */
static int cube_span(const struct sdp_cfg *c, uint64_t base, unsigned elem_bytes,
                     uint64_t line_stride, uint64_t surf_stride, uint32_t batches,
                     uint64_t batch_stride, uint64_t *lo, uint64_t *hi)
{
    const uint64_t end = cube_extent((uint64_t)c->w * c->epa * elem_bytes, c->h, c->nsurf,
                                     c->packed, line_stride, surf_stride, batches, batch_stride);
    *lo = base;
    *hi = base + end;
    return *hi >= base && *hi - 1 <= c->addr_mask;
}

static int spans_apart(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi)
{
    return ahi <= blo || bhi <= alo;
}

/*
 * Reading every surface before writing any gives the values of surface by
 * surface (read, write, next) when the output overlaps none of the cubes
 * read (the input, per-element streams; per-kernel operands are read
 * before both) and nothing wraps at the address width.
 */
static int mem_reads_apart(const struct sdp_cfg *c)
{
    uint64_t olo, ohi, ilo, ihi;
    if (c->eql) {
        return 1; /* EQL writes nothing */
    }
    if (!cube_span(c, c->dst_base, c->bpe, c->dst_line, c->dst_surf, c->batches, c->dst_batch,
                   &olo, &ohi) ||
        !cube_span(c, c->src_base, c->bpe, c->src_line, c->src_surf, 1, 0, &ilo, &ihi)) {
        return 0;
    }
    if (c->src_port == c->dst_port && !spans_apart(olo, ohi, ilo, ihi)) {
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        const struct sdp_stream *s = &c->stream[i];
        if (!(c->src_used[2 * i] || c->src_used[2 * i + 1]) || s->per_kernel) {
            continue;
        }
        if (!cube_span(c, s->base, s->elem_bytes, s->line_stride, s->surf_stride, 1, 0, &ilo,
                       &ihi) ||
            (s->port == c->dst_port && !spans_apart(olo, ohi, ilo, ihi))) {
            return 0;
        }
    }
    return 1;
}

/*
 * An int8 element-wise layer from memory (chain8) on the bytes where they
 * lie: the input and the per-element streams read through the memory's
 * lent pages, the output written into its own pages, with no copy of
 * either.  Only where mem_reads_apart holds (the output overlaps nothing
 * read, so any order of the segments gives run_from_memory's bytes), one
 * batch, and every page lent; the traffic and write stamps are those of the
 * copying path's reads and writes.
 */

/* A run of elements that lies within one page of the input, of each
 * stream read and of the output. */
struct sdp_seg {
    const uint8_t *src;
    const uint8_t *stream[3];
    uint8_t *dst;
    uint64_t dst_addr;
    size_t n;
};

struct sdp_inplace {
    const struct sdp_mem_par *p;
    const struct sdp_seg *seg;
    uint32_t *sat;    /* one per segment */
    uint8_t *nonzero; /* one per segment */
    size_t n;         /* segments */
};

/* Stream i is read per element (not per kernel). */
static int stream_read(const struct sdp_cfg *c, int i)
{
    return (c->src_used[2 * i] || c->src_used[2 * i + 1]) && !c->stream[i].per_kernel;
}

static int grow_segs(struct sdp_seg **seg, size_t *cap)
{
    const size_t n = *cap ? 2 * *cap : 256;
    struct sdp_seg *g = realloc(*seg, n * sizeof(*g));
    if (!g) {
        return 0;
    }
    *seg = g;
    *cap = n;
    return 1;
}

/* Address of element `e` (of `eb` bytes) of line y of surface `surf`. */
static uint64_t cube_elem_addr(const struct sdp_cfg *c, uint64_t base, uint64_t line_stride,
                               uint64_t surf_stride, unsigned eb, uint32_t surf, uint32_t y,
                               size_t e)
{
    const uint64_t line_bytes = (uint64_t)c->w * c->epa * eb;
    const uint64_t s0 = c->packed ? (uint64_t)surf * line_bytes : (uint64_t)surf * surf_stride;
    return base + s0 + (uint64_t)y * line_stride + (uint64_t)e * eb;
}

/* Elements from `addr` (of `eb` bytes each) before the end of its page. */
static size_t page_elems(uint64_t addr, unsigned eb)
{
    return (DLA_MEM_PAGE_BYTES - (size_t)(addr % DLA_MEM_PAGE_BYTES)) / eb;
}

/* A cube's lines follow each other in memory: its surface is one line. */
static int lines_joined(const struct sdp_cfg *c, uint64_t line_stride, unsigned eb)
{
    return c->h == 1 || c->packed || line_stride == (uint64_t)c->w * c->epa * eb;
}

/* Every cube the layer reads or writes has its lines joined. */
static int surfaces_joined(const struct sdp_cfg *c)
{
    int j = lines_joined(c, c->src_line, 1) && lines_joined(c, c->dst_line, 1);
    for (int i = 0; i < 3; i++) {
        j = j && (!stream_read(c, i) ||
                  lines_joined(c, c->stream[i].line_stride, c->stream[i].elem_bytes));
    }
    return j;
}

/* The segments of line y of surface `surf` (`elems` elements from its
 * start: a whole surface where lines are joined) appended to seg[*n]
 * (grown); 0 when a page is not lent (then the copying path runs) or out of
 * memory. */
static int line_segments(struct dla_dev *d, const struct sdp_cfg *c, uint32_t surf, uint32_t y,
                         size_t elems, struct sdp_seg **seg, size_t *n, size_t *cap)
{
    for (size_t e = 0; e < elems;) {
        const uint64_t sa = cube_elem_addr(c, c->src_base, c->src_line, c->src_surf, 1, surf, y, e);
        const uint64_t da = cube_elem_addr(c, c->dst_base, c->dst_line, c->dst_surf, 1, surf, y, e);
        size_t k = elems - e;
        k = page_elems(sa, 1) < k ? page_elems(sa, 1) : k;
        k = page_elems(da, 1) < k ? page_elems(da, 1) : k;
        uint64_t ta[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++) {
            const struct sdp_stream *s = &c->stream[i];
            if (stream_read(c, i)) {
                ta[i] = cube_elem_addr(c, s->base, s->line_stride, s->surf_stride, s->elem_bytes,
                                       surf, y, e);
                k = page_elems(ta[i], s->elem_bytes) < k ? page_elems(ta[i], s->elem_bytes) : k;
            }
        }
        if (k == 0 || (*n == *cap && !grow_segs(seg, cap))) {
            return 0; /* an element across a page */
        }
        struct sdp_seg *g = &(*seg)[(*n)++];
        memset(g, 0, sizeof(*g));
        g->src = dla_dma_lend(d, c->src_port, sa, k);
        g->dst = dla_dma_write_view(d, c->dst_port, da, k);
        g->dst_addr = da;
        g->n = k;
        int ok = g->src && g->dst;
        for (int i = 0; i < 3 && ok; i++) {
            const struct sdp_stream *s = &c->stream[i];
            if (stream_read(c, i)) {
                g->stream[i] = dla_dma_lend(d, s->port, ta[i], k * s->elem_bytes);
                ok = g->stream[i] != NULL;
            }
        }
        if (!ok) {
            return 0;
        }
        e += k;
    }
    return 1;
}

/* Segments per team item: a page each at most, so an item is ~16 KB. */
#define INPLACE_ITEM_SEGS 4

/* Segment i through the chain. */
static void inplace_segment(const struct sdp_inplace *x, size_t i)
{
    const struct sdp_mem_par *p = x->p;
    const struct sdp_cfg *c = p->c;
    const struct sdp_seg *g = &x->seg[i];
    struct sdp_lane_op8 o[4];
    for (int k = 0; k < 4; k++) {
        const struct sdp_stream *s = &c->stream[k / 2];
        o[k].p = c->src_used[k] ? g->stream[k / 2] + s->off[k & 1] : NULL;
        o[k].stride = s->elem_bytes;
        o[k].shl = p->shl[k];
        o[k].val = p->vals[k];
    }
    x->sat[i] = dla_sdp_lanes_chain8(c->isa, &p->ch, g->src, g->dst, g->n, o);
    x->nonzero[i] = (uint8_t)dla_sdp_lanes_any_nonzero(g->dst, g->n);
}

/* Team item: segments [item * INPLACE_ITEM_SEGS, ...) (only their bytes). */
static void inplace_item(void *ctx, size_t item)
{
    const struct sdp_inplace *x = ctx;
    const size_t i1 = (item + 1) * INPLACE_ITEM_SEGS < x->n ? (item + 1) * INPLACE_ITEM_SEGS : x->n;
    for (size_t i = item * INPLACE_ITEM_SEGS; i < i1; i++) {
        inplace_segment(x, i);
    }
}

/* The bytes run_from_memory reads of a surface (input and streams). */
static uint64_t surface_read_bytes(const struct sdp_cfg *c, size_t n_surf)
{
    uint64_t b = n_surf * c->bpe;
    for (int i = 0; i < 3; i++) {
        b += stream_read(c, i) ? n_surf * c->stream[i].elem_bytes : 0;
    }
    return b;
}

/* The layer on the memory's bytes: 0 done, 1 not applicable (nothing was
 * read or written: the copying path runs). */
static int run_in_place(struct dla_dev *d, struct dla_team *team, const struct sdp_cfg *c,
                        const struct sdp_work *w, struct sdp_mem_par *p, struct sdp_stats *st)
{
    if (c->batches != 1 || c->eql || (c->packed && c->h != 1) || !p->chain8) {
        return 1;
    }
    struct sdp_seg *seg = NULL;
    size_t n = 0, cap = 0;
    int ok = 1;
    const int joined = surfaces_joined(c);
    const uint32_t lines = joined ? 1 : c->h;
    const size_t elems = joined ? w->n_surf : (size_t)c->w * c->epa;
    for (uint32_t s = 0; s < c->nsurf && ok; s++) {
        for (uint32_t y = 0; y < lines && ok; y++) {
            ok = line_segments(d, c, s, y, elems, &seg, &n, &cap);
        }
    }
    struct sdp_inplace x = {p, seg, ok ? calloc(n ? n : 1, sizeof(uint32_t)) : NULL,
                            ok ? calloc(n ? n : 1, 1) : NULL, n};
    if (!x.sat || !x.nonzero) {
        free(seg);
        free(x.sat);
        free(x.nonzero);
        return 1;
    }
    dla_team_run((size_t)c->nsurf * w->n_surf < SDP_TEAM_MIN_ELEMS ? NULL : team,
                 (n + INPLACE_ITEM_SEGS - 1) / INPLACE_ITEM_SEGS, inplace_item, &x);
    dla_dma_count_read(d, (size_t)(c->nsurf * surface_read_bytes(c, w->n_surf)));
    for (size_t i = 0; i < n; i++) { /* stamps and traffic, in write_surface's order */
        st->sat += x.sat[i];
        st->unequal |= x.nonzero[i];
        dla_dma_wrote(d, c->dst_port, seg[i].dst_addr, seg[i].n);
    }
    free(seg);
    free(x.sat);
    free(x.nonzero);
    return 0;
}

static int run_from_memory(struct dla_dev *d, struct dla_team *team, const struct sdp_cfg *c,
                           const struct sdp_work *w, struct sdp_stats *st)
{
    const size_t n_surf = w->n_surf, nsurf = c->nsurf;
    struct sdp_mem_par *p = calloc(1, sizeof(*p));
    uint8_t *streams[3] = {NULL, NULL, NULL};
    int rc = 0, ok = p != NULL;
    if (ok) {
        p->c = c;
        p->w = w;
        mem_prepare_ops(c, p); /* (the operands' types, not their values) */
        p->chain = mem_prepare_chain(c, w, p);
        p->chain8 = mem_chain8(c, p);
        if (run_in_place(d, team, c, w, p, st) == 0) {
            free(p);
            return 0;
        }
        p->bytes = malloc(nsurf * n_surf * c->bpe);
        p->st = calloc(nsurf, sizeof(*p->st));
        p->nonzero = calloc(nsurf, sizeof(int));
        p->nomem = calloc(nsurf, sizeof(int));
        ok = p->bytes && p->st && p->nonzero && p->nomem;
    }
    for (int i = 0; i < 3 && ok; i++) {
        if ((c->src_used[2 * i] || c->src_used[2 * i + 1]) && !c->stream[i].per_kernel) {
            streams[i] = malloc(nsurf * n_surf * c->stream[i].elem_bytes);
            p->stream[i] = streams[i];
            ok = streams[i] != NULL;
        }
    }
    if (!ok) {
        rc = dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory for a %ux%ux%u cube",
                       c->w, c->h, c->c);
    }
    /* a read error at surface k: surfaces before it are still processed and
     * written, as surface by surface (the device completes the layer) */
    uint32_t done = 0;
    int read_rc = rc ? 0 : mem_read_all(d, c, p, streams, &done);
    if (!rc) {
        if (done * n_surf < SDP_TEAM_MIN_ELEMS) {
            team = NULL; /* the team's wake-up would cost more */
        }
        dla_team_run(team, done, mem_surface, p);
        for (size_t s = 0; s < done && !rc; s++) {
            if (p->nomem[s]) {
                rc = dla_error(d, DLASIM_ERR_NOMEM, "SDP: out of host memory");
            }
        }
    }
    if (!rc) {
        mem_stats(p, done, st);
    }
    for (uint32_t s = 0; s < done && !rc; s++) {
        /* the same input for every batch: one pass, written to each */
        rc = write_surface(d, c, p->bytes + (size_t)s * n_surf * c->bpe, w->n_line, s, 0,
                           c->batches);
    }
    rc = rc ? rc : read_rc;
    for (int i = 0; i < 3; i++) {
        free(streams[i]);
    }
    if (p) {
        free(p->bytes);
        free(p->st);
        free(p->nonzero);
        free(p->nomem);
    }
    free(p);
    return rc;
}

/* ---- layer ------------------------------------------------------------------ */

/* A cube of the layer's geometry with `elem_bytes` per element (input,
 * per-element operands, one batch of output).  SDP wraps its addresses at
 * the address width, so only the bytes count, not the extent. */
static struct dla_strided sdp_cube(const struct sdp_cfg *c, unsigned elem_bytes,
                                   uint64_t line_stride, uint64_t surf_stride)
{
    struct dla_strided s;
    memset(&s, 0, sizeof(s));
    s.line_bytes = (uint64_t)c->w * c->epa * elem_bytes;
    s.lines = c->h;
    s.line_stride = line_stride;
    s.surfaces = c->nsurf;
    s.surf_stride = surf_stride;
    s.batches = 1;
    return s;
}

/* What the layer reads (input, operand streams), writes (every batch) and
 * computes (every lane of every atom; per batch for flying input): sizes
 * and strides, no address. */
static void sdp_work_of(const struct sdp_cfg *c, struct dla_work *w)
{
    dla_work_init(w, "SDP");
    if (!c->flying) {
        struct dla_strided in = sdp_cube(c, c->bpe, c->src_line, c->src_surf);
        dla_work_read(w, &in);
    }
    for (int i = 0; i < 3; i++) {
        const struct sdp_stream *st = &c->stream[i];
        if (!(c->src_used[2 * i] || c->src_used[2 * i + 1])) {
            continue;
        }
        struct dla_strided op = sdp_cube(c, st->elem_bytes, st->line_stride, st->surf_stride);
        if (st->per_kernel) {
            op.line_bytes = (uint64_t)c->nsurf * c->epa * st->elem_bytes;
            op.lines = op.surfaces = 1;
        }
        dla_work_read(w, &op);
    }
    if (!c->to_pdp && !c->eql) {
        struct dla_strided out = sdp_cube(c, c->bpe, c->dst_line, c->dst_surf);
        out.batches = c->batches;
        out.batch_stride = c->dst_batch;
        dla_work_write(w, &out);
    }
    dla_work_ops(w, (uint64_t)c->w * c->h * c->nsurf * c->epa * (c->flying ? c->batches : 1));
}

static int check_io(struct dla_dev *d, const struct sdp_cfg *c, const struct dla_cube *in,
                    const struct dla_cube *to_pdp)
{
    if (c->flying) {
        if (!in || !in->data) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "SDP: D_FEATURE_MODE_CFG_0.FLYING_MODE=ON but no convolution "
                             "feeds SDP in this layer");
        }
        if (in->w != c->w || in->h != c->h || in->c < c->c) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "SDP: D_DATA_CUBE_WIDTH/HEIGHT/CHANNEL give %ux%ux%u but CACC "
                             "delivers %ux%ux%u",
                             c->w, c->h, c->c, in->w, in->h, in->c);
        }
        if (in->n != c->batches) {
            return dla_error(d, DLASIM_ERR_PROG,
                             "SDP: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=%u but CACC delivers %u "
                             "batch(es) (D_BATCH_NUMBER=%u)",
                             c->batches - 1, in->n, in->n - 1);
        }
    }
    if (c->to_pdp && !to_pdp) {
        return dla_error(d, DLASIM_ERR_PROG,
                         "SDP: D_FEATURE_MODE_CFG_0.OUTPUT_DST=PDP but PDP is not enabled for "
                         "on-the-fly input");
    }
    return 0;
}

/* addend_form's operand and the output overlap nothing of each other
 * (every order of the surfaces, on any thread, then reads the operand's
 * bytes as the hardware's surface-by-surface order does) and neither wraps
 * at the address width. */
static int addend_apart(const struct sdp_cfg *c)
{
    const struct sdp_stream *s = &c->stream[1];
    uint64_t olo, ohi, ilo, ihi;
    return cube_span(c, c->dst_base, 1, c->dst_line, c->dst_surf, 1, 0, &olo, &ohi) &&
           cube_span(c, s->base, 1, s->line_stride, s->surf_stride, 1, 0, &ilo, &ihi) &&
           (s->port != c->dst_port || spans_apart(olo, ohi, ilo, ihi));
}

/* addend_form's operand surfaces (NRDMA, one byte an element) where they
 * lie in memory, or copied where a surface is not one lent range, read
 * before the layer runs (the team's items then need no memory access):
 * the bytes and traffic of load_element_ops' reads. */
static int load_addends(struct dla_dev *d, const struct sdp_cfg *c, struct sdp_work *w,
                        int lent_only)
{
    const struct sdp_stream *s = &c->stream[1];
    const size_t bytes = w->n_surf;
    size_t lent = 0;
    for (uint32_t surf = 0; surf < c->nsurf; surf++) {
        const uint8_t *p = NULL;
        if (lines_joined(c, s->line_stride, 1)) {
            const uint64_t a = cube_elem_addr(c, s->base, s->line_stride, s->surf_stride, 1, surf,
                                              0, 0) & c->addr_mask;
            p = dla_dma_lend(d, s->port, a, bytes);
        }
        if (!p && lent_only) {
            return SDP_NOT_LENT;
        }
        if (p) {
            lent += bytes;
        } else {
            if (!w->addend_copy && !(w->addend_copy = malloc((size_t)c->nsurf * bytes))) {
                return dla_error(d, DLASIM_ERR_NOMEM,
                                 "SDP: out of host memory for a %ux%ux%u operand cube", c->w,
                                 c->h, c->c);
            }
            uint8_t *cp = w->addend_copy + (size_t)surf * bytes;
            int rc = read_surface(d, c, s->port, s->base, s->line_stride, s->surf_stride, 1,
                                  surf, cp);
            if (rc) {
                return rc;
            }
            p = cp;
        }
        w->addend[surf] = p;
    }
    dla_dma_count_read(d, lent);
    return 0;
}

/* int8 goes to PDP as the atoms it would write to memory: PDP pools those
 * bytes as it pools them from memory (pdp.c) */
static int to_pdp_alloc(struct dla_dev *d, const struct sdp_cfg *c, struct dla_cube *to_pdp)
{
    struct dla_conv_state *s = dla_dev_conv_state(d); /* (its buffer: no malloc a layer) */
    int rc = c->bpe == 1 /* (to PDP: one batch, sdp_decode) */
                 ? dla_cube_alloc_atoms(to_pdp, c->w, c->h, c->nsurf * c->epa, c->epa,
                                        s ? &s->to_pdp : NULL, s ? &s->to_pdp_cap : NULL)
                 : dla_cube_alloc(to_pdp, c->w, c->h, c->nsurf * c->epa, 1);
    return rc ? dla_error(d, rc, "SDP: out of host memory for the cube sent to PDP") : 0;
}

/*
 * SDP's set-up of the layer in a group made ahead, while a convolution's
 * job runs on the team (device.c run_conv arms it as the job's prologue,
 * common/team.h dla_team_prologue): the decode, the work check, the work
 * buffers and the operands, which sdp_execute otherwise makes on the
 * calling thread after the convolution while the other threads wait
 * (ResNet-50: ~280 us an image, rdtsc).  They read SDP's registers and
 * the memory's operands only, which the job's items do not touch.  Kept
 * only when every step succeeds with the operands lent (no read that could
 * fault or fail): anything else is left to sdp_execute, which then makes
 * the same steps, errors and messages in their order.
 */
struct dla_sdp_prep {
    int ready;
    unsigned group;
    struct sdp_cfg local;
    struct sdp_cfg *c;         /* &local, or the decode cache's */
    struct sdp_work w;         /* its buffers in small where they fit */
    struct sdp_small small;
};

static void sdp_prep_free(struct dla_sdp_prep *p)
{
    if (p && p->ready) {
        work_free(&p->w);
    }
    free(p);
}

void dla_sdp_prepare(struct dla_dev *d, unsigned group)
{
    struct dla_sdp_cache *k = sdp_cache_of(d);
    if (k && !k->prep) {
        k->prep = malloc(sizeof(*k->prep));
        if (k->prep) {
            k->prep->ready = 0;
        }
    }
    struct dla_sdp_prep *p = k ? k->prep : NULL;
    if (!p || p->ready) {
        return;
    }
    struct sdp_cfg *c = NULL;
    if (sdp_layer_cfg(d, group, &p->local, &c) || dla_work_check(d, &c->work) ||
        work_alloc(d, c, &p->w, &p->small)) {
        return;
    }
    int rc = load_kernel_ops(d, c, &p->w, 1);
    if (!rc && p->w.addend) {
        rc = load_addends(d, c, &p->w, 1);
    }
    if (rc) {
        work_free(&p->w);
        return;
    }
    p->c = c;
    p->group = group;
    p->ready = 1;
}

/* The set-up dla_sdp_prepare made for `group`, taken (its buffers the
 * caller's to free), or NULL. */
static struct dla_sdp_prep *prep_take(struct dla_dev *d, unsigned group)
{
    struct dla_conv_state *s = dla_dev_conv_state(d);
    struct dla_sdp_prep *p = s && s->sdp_cache ? s->sdp_cache->prep : NULL;
    if (!p || !p->ready) {
        return NULL;
    }
    p->ready = 0;
    if (p->group != group) {
        work_free(&p->w);
        return NULL;
    }
    return p;
}

void dla_sdp_prepared_drop(struct dla_dev *d)
{
    struct dla_conv_state *s = dla_dev_conv_state(d);
    struct dla_sdp_prep *p = s && s->sdp_cache ? s->sdp_cache->prep : NULL;
    if (p && p->ready) {
        p->ready = 0;
        work_free(&p->w);
    }
}

static int sdp_execute(struct dla_dev *d, unsigned group, const struct dla_cube *in,
                       struct dla_cube *to_pdp)
{
    struct sdp_cfg local, *c = NULL;
    struct sdp_work w;
    struct sdp_small small;
    struct sdp_stats st;
    struct dla_sdp_prep *pp = prep_take(d, group);
    int rc = pp ? 0 : sdp_layer_cfg(d, group, &local, &c);
    if (pp) {
        c = pp->c;
        w = pp->w; /* (its buffers stay pp's until work_free) */
    } else if (!rc) {
        rc = dla_work_check(d, &c->work);
    }
    if (!rc) {
        rc = check_io(d, c, in, to_pdp);
    }
    if (!rc && c->to_pdp) {
        rc = to_pdp_alloc(d, c, to_pdp);
    }
    if (rc) {
        if (pp) {
            work_free(&w);
        }
        return rc;
    }
    if (!pp) {
        rc = work_alloc(d, c, &w, &small);
        if (rc) {
            return rc;
        }
    }
    memset(&st, 0, sizeof(st));
    if (!pp) {
        rc = load_kernel_ops(d, c, &w, 0);
        if (!rc && w.addend) {
            rc = load_addends(d, c, &w, 0);
        }
    }
    struct dla_team *team = rc ? NULL : dla_dev_team(d);
    if (!rc && c->flying && in->band) { /* a convolution's values, not computed yet */
        if (bands_eligible(c, &w)) {
            rc = run_bands(d, team, c, &w, in, &st);
            work_free(&w);
            if (!rc) {
                set_hw_regs(d, group, c, &st);
            }
            return rc;
        }
        rc = dla_conv_band_whole(d, in);
    }
    if (!rc && (team_eligible(c, &w, team) || (!c->flying && !c->to_pdp && mem_reads_apart(c)))) {
        rc = work_alloc_data(d, c, &w);
        if (rc) {
            return rc; /* (work_alloc_data freed w) */
        }
        rc = c->flying ? run_on_team(d, team, c, &w, in, &st, to_pdp)
                       : run_from_memory(d, team, c, &w, &st);
        work_free(&w);
        if (!rc) {
            set_hw_regs(d, group, c, &st);
        }
        return rc;
    }
    const int atoms8 = atoms8_eligible(c, &w);
    if (!rc && !atoms8) {
        rc = work_alloc_data(d, c, &w);
        if (rc) {
            return rc; /* (work_alloc_data freed w) */
        }
    }
    if (!rc && atoms8 && c->flying && !c->to_pdp && w.plane == 1 && !w.addend) {
        for (uint32_t b = 0; b < c->batches && !rc; b++) {
            rc = pixel_layer(d, c, &w, in, b, &st);
        }
        work_free(&w);
        if (!rc) {
            set_hw_regs(d, group, c, &st);
        }
        return rc;
    }
    for (uint32_t s = 0; s < c->nsurf && !rc; s++) {
        rc = c->flying ? 0 : load_surface_input(d, c, &w, s);
        if (!rc) {
            rc = load_surface_ops(d, c, &w, s);
        }
        if (!rc && !c->flying) {
            /* the same input for every batch: one pass, written to each */
            process_surface(c, &w, s, in, 0, &st);
            rc = store_surface(d, c, &w, s, 0, c->batches, to_pdp, &st, 0);
        }
        /* flying: each batch of CACC's cube with the same operands */
        for (uint32_t b = 0; c->flying && b < c->batches && !rc; b++) {
            if (atoms8) {
                const size_t ch0 = (size_t)s * c->epa;
                const uint32_t real = in->c - ch0 < c->epa ? (uint32_t)(in->c - ch0) : c->epa;
                const int32_t *planes = in->data + b * dla_cube_batch_elems(in) + ch0 * w.plane;
                if (c->to_pdp) {
                    surface_atoms8(c, &w, s, planes, real, 0, 0, w.plane,
                                   (uint8_t *)to_pdp->atoms + (size_t)s * w.n_surf, &st);
                    continue;
                }
                if (atoms8_in_place(d, c, &w, s, b, planes, real, &st)) {
                    continue;
                }
                surface_atoms8(c, &w, s, planes, real, 0, 0, w.plane, w.raw, &st);
            } else {
                process_surface(c, &w, s, in, b, &st);
            }
            rc = store_surface(d, c, &w, s, b, b + 1, to_pdp, &st, atoms8);
        }
    }
    work_free(&w);
    if (!rc) {
        set_hw_regs(d, group, c, &st);
    }
    return rc;
}

int dla_sdp_execute(struct dla_dev *d, unsigned group, const struct dla_cube *in,
                    struct dla_cube *to_pdp)
{
    int rc = sdp_execute(d, group, in, to_pdp);
    /* a convolution's values left to SDP: the layer ends (whether taken or not) */
    return in != NULL && in->band != NULL ? dla_conv_band_end(in, rc) : rc;
}

/* ---- summary (src/timing/summary.h) ------------------------------------------ */

/* Bytes the operand streams read per element (BRDMA, NRDMA, ERDMA not
 * disabled, in PER_ELEMENT mode: the three *RDMA_CFG registers share one
 * field layout) for a cube of `elems` elements (atoms whole). */
static uint64_t element_operand_bytes(const struct dla_dev *d, unsigned g, uint64_t elems)
{
    static const uint32_t cfg_reg[3] = {NVDLA_SDP_RDMA_D_BRDMA_CFG_0, NVDLA_SDP_RDMA_D_NRDMA_CFG_0,
                                        NVDLA_SDP_RDMA_D_ERDMA_CFG_0};
    uint64_t bytes = 0;
    for (int i = 0; i < 3; i++) {
        const uint32_t v = dla_reg(d, cfg_reg[i], g);
        if (SDP_FLD(v, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DISABLE) ||
            SDP_FLD(v, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DATA_MODE) !=
                NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_ELEMENT) {
            continue;
        }
        const uint64_t size = SDP_FLD(v, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DATA_SIZE) ? 2 : 1;
        const uint64_t use = SDP_FLD(v, NVDLA_SDP_RDMA_D_BRDMA_CFG_0, BRDMA_DATA_USE) ==
                                     NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_BOTH
                                 ? 2
                                 : 1;
        bytes += elems * size * use;
    }
    return bytes;
}

/* The data cube, its batches, whether an X stage (BS/BN) is in use and
 * what its operands read per element. */
void dla_sdp_summarize(const struct dla_dev *d, unsigned g, struct dla_layer_summary *s)
{
    s->sdp.w = DLA_REG_FIELD(d, g, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, WIDTH) + 1ull;
    s->sdp.h = DLA_REG_FIELD(d, g, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1ull;
    s->sdp.c = DLA_REG_FIELD(d, g, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1ull;
    s->sdp.batches = DLA_REG_FIELD(d, g, NVDLA_SDP_D_FEATURE_MODE_CFG_0, BATCH_NUMBER) + 1ull;
    s->sdp.x_stages = !DLA_REG_FIELD(d, g, NVDLA_SDP_D_DP_BS_CFG_0, BS_BYPASS) ||
                      !DLA_REG_FIELD(d, g, NVDLA_SDP_D_DP_BN_CFG_0, BN_BYPASS);
    s->sdp.int16 = DLA_REG_FIELD(d, g, NVDLA_SDP_D_DATA_FORMAT_0, PROC_PRECISION) ==
                   NVDLA_SDP_D_DATA_FORMAT_0_PROC_PRECISION_INT16;
    const uint64_t epa = dla_cfg(d)->memory_atomic_size / (s->sdp.int16 ? 2u : 1u);
    const uint64_t elems = epa ? s->sdp.w * s->sdp.h * ((s->sdp.c + epa - 1) / epa) * epa *
                                     s->sdp.batches
                               : 0;
    s->sdp.element_operand_bytes = element_operand_bytes(d, g, elems);
}
