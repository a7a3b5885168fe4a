/*
 * RK3588 DPU (+ DPU_RDMA): the post-processing datapath, the RK analogue of
 * NVDLA's SDP (TRM 36.3: BS = X1, BN = X2, EW = Y, OUT_CVT = CVT).
 *
 * Input: the CORE accumulators (FEATURE_MODE_CFG.FLYING_MODE = 0) or a cube
 * read by MRDMA (FLYING_MODE = 1; DPU_RDMA SRC_BASE_ADDR, FEATURE_MODE_CFG
 * IN_PRECISION int8/int16/int32, NC1HWC2 packed with 16-byte atoms).
 * Per element, on 32-bit values (CORE's pending CLIP_TRUNCATE first):
 *   BS and BN stages (BS_CFG/BN_CFG), unless *_BYPASS, on NVDLA's SDP X-stage
 *   datapath (src/arith/sdp_lanes.h, the code sdp.c runs):
 *     ALU (unless *_ALU_BYPASS): ALGO 0 max, 1 min, 2 add, 4 x - operand
 *         (TRM EW_ALU_ALGO codes); operand = *_ALU_CFG, or per channel from
 *         BRDMA/NRDMA when *_ALU_SRC = 1;
 *     MUL (unless *_MUL_BYPASS): x * operand (int16, *_MUL_CFG or per channel
 *         when *_MUL_SRC), the product shifted right by *_MUL_SHIFT_VALUE (or
 *         per channel when *_TRUNCATE_SRC) rounding half away from zero and
 *         saturated to 32 bits (NVDLA RTL); with *_MUL_PRELU only negative
 *         values are multiplied, shifted by DATA_FORMAT.*_SHIFT_VALUE_NEG;
 *     ReLU (unless *_RELU_BYPASS): max(x, 0), then min(x, *_RELUX_CMP_VALUE)
 *         with *_RELUX_EN.
 *   (BS's CPEND operand, BS_OW_OP, is added by rk_conv.c.)
 *   EW stage (EW_CFG, unless EW_BYPASS; NVDLA SDP's Y stage, TRM 36.3): the
 *     operand is EW_OP_VALUE_0 or, with EW_OP_SRC, read by ERDMA (ERDMA_CFG
 *     DATA_MODE 0 one int32 per channel, 1 one element per pixel in NC1HWC2
 *     of ERDMA_DATA_SIZE 8/16/32 bits, surfaces EW_SURF_STRIDE apart);
 *     unless EW_OP_CVT_BYPASS it is converted like OUT_CVT (EW_CVT_TYPE,
 *     EW_CVT_ROUND, EW_CVT_OFFSET_VALUE, EW_OP_CVT_SCALE/SHIFT); then
 *     EW_OP_TYPE 0: ALU (EW_ALU_ALGO 0 max, 1 min, 2 add, 4 x - op) or 1: MUL
 *     (x * op, shifted by EW_TRUNCATE, EW_TRUNCATE_NEG for negative x under
 *     EW_MUL_PRELU, rounded half away from zero as NVDLA's Y stage), ReLU,
 *     ReLUX.  The LUT, EW_BINARY_EN, EW_EQUAL_EN and the other ALU codes are
 *     refused.  Mesa's Add (rkt_regcmd.c) programs exactly this subset.
 *   OUT_CVT: CVT_TYPE 0: (x * OUT_CVT_SCALE) >> OUT_CVT_SHIFT, then
 *     + OUT_CVT_OFFSET; CVT_TYPE 1: offset first; the shift rounds half to even
 *     (CVT_ROUND 0, the TRM's "if the integer is odd, carry 1") or half up
 *     (1, "always carry").  RK_OUT_CVT_ROUNDING below is the one switch.
 *   Saturation to DATA_FORMAT.OUT_PRECISION: 0 int8, 1 int16, 4 int32.
 * Per-channel operands (BRDMA_CFG/NRDMA_CFG *_DATA_USE bits ALU, CPEND, MUL,
 * TRT): int32 per channel, one array of DATA_CUBE_CHANNEL entries per used
 * operand in that bit order from BS_BASE_ADDR / BN_BASE_ADDR (assumption:
 * Mesa uses ALU only, an int32 bias per channel).
 * Output: FEATURE_MODE_CFG.OUTPUT_MODE bit 1 writes NC1HWC2 (C2 = 16 / bytes
 * per element) at DST_BASE_ADDR, surface s at + s * DST_SURF_STRIDE, element
 * (y, x) at + (y * W + x) * 16 (mtx512, Mesa); bit 0 hands the cube to the
 * PPU (fused, like NVDLA SDP -> PDP on the fly).
 */
#include <stdlib.h>
#include <string.h>

#include "arith/atoms.h"
#include "arith/sdp_lanes.h"
#include "sim/core/budget.h"
#include "sim/rk3588/rk3588.h"

/* OUT_CVT rounding: 0 = as the CVT_ROUND field says (TRM); 1 = always half up
 * (change here if a board capture disagrees). */
#define RK_OUT_CVT_ROUNDING 0

#define S48 ((int64_t)1 << 47)

struct dpu_stage {
    int bypass, alu_bypass, mul_bypass, relu_bypass, relux, prelu;
    unsigned algo;
    int alu_src, mul_src, trt_src;
    int32_t alu_op, relux_cmp;
    int16_t mul_op;
    unsigned shift, shift_neg;
    const int32_t *alu_ch, *mul_ch, *trt_ch; /* per channel, or NULL */
};

struct dpu_cfg {
    uint32_t w, h, c;
    unsigned out_prec;
    int to_mem, to_ppu, from_mrdma;
    struct dpu_stage bs, bn;
    struct dpu_ew {
        int bypass, op_bypass, from_erdma, cvt_bypass, cvt_offset_first, cvt_half_up;
        int mul, prelu, relu_bypass, relux;
        unsigned algo, per_pixel, bpe;
        int32_t value, cvt_offset, relux_cmp;
        uint32_t cvt_scale, cvt_shift, truncate, truncate_neg;
        uint64_t base, surf;
    } ew;
    int32_t cvt_offset;
    uint32_t cvt_scale, cvt_shift;
    int cvt_offset_first, cvt_half_up;
    uint64_t dst, dst_surf;
};

static void decode_stage(struct dpu_stage *s, uint32_t cfg, uint32_t alu,
                         uint32_t mul, uint32_t relux, unsigned shift_neg)
{
    /* BS_CFG and BN_CFG, BS_MUL_CFG and BN_MUL_CFG share their layouts. */
    s->bypass = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_BYPASS);
    s->alu_bypass = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_ALU_BYPASS);
    s->mul_bypass = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_MUL_BYPASS);
    s->relu_bypass = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_RELU_BYPASS);
    s->relux = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_RELUX_EN);
    s->prelu = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_MUL_PRELU);
    s->algo = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_ALU_ALGO);
    s->alu_src = RK_FIELD(cfg, RK3588_DPU_BS_CFG_BS_ALU_SRC);
    s->alu_op = (int32_t)alu;
    s->mul_op = (int16_t)RK_FIELD(mul, RK3588_DPU_BS_MUL_CFG_BS_MUL_OPERAND);
    s->shift = RK_FIELD(mul, RK3588_DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE);
    s->mul_src = RK_FIELD(mul, RK3588_DPU_BS_MUL_CFG_BS_MUL_SRC);
    s->trt_src = RK_FIELD(mul, RK3588_DPU_BS_MUL_CFG_BS_TRUNCATE_SRC);
    s->shift_neg = shift_neg;
    s->relux_cmp = (int32_t)relux;
    s->alu_ch = s->mul_ch = s->trt_ch = NULL;
}

static int ew_refuse(struct rk_core *c, const char *field, uint32_t v)
{
    return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU.EW_CFG.%s=%u is not modelled (docs/rk3588.md: "
                    "the EW subset)", field, v);
}

static int decode_ew(struct rk_core *c, struct dpu_cfg *d, uint32_t fmt)
{
    struct dpu_ew *e = &d->ew;
    uint32_t cfg = rk_reg(c, RK3588_DPU_EW_CFG), sc = rk_reg(c, RK3588_DPU_EW_CVT_SCALE_VALUE);
    uint32_t er = rk_reg(c, RK3588_DPU_RDMA_ERDMA_CFG);
    memset(e, 0, sizeof(*e));
    e->bypass = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_BYPASS);
    e->op_bypass = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_OP_BYPASS);
    if (e->bypass) {
        return 0;
    }
    if (!RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_LUT_BYPASS)) {
        return ew_refuse(c, "EW_LUT_BYPASS", 0);
    }
    if (RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_BINARY_EN) || RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_EQUAL_EN)) {
        return ew_refuse(c, "EW_BINARY_EN/EW_EQUAL_EN", 1);
    }
    e->mul = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_OP_TYPE);
    e->algo = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_ALU_ALGO);
    if (!e->op_bypass && !e->mul && e->algo != 0 && e->algo != 1 && e->algo != 2 && e->algo != 4) {
        return ew_refuse(c, "EW_ALU_ALGO", e->algo);
    }
    e->from_erdma = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_OP_SRC);
    e->cvt_bypass = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_OP_CVT_BYPASS);
    e->cvt_offset_first = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_CVT_TYPE);
    e->cvt_half_up = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_CVT_ROUND);
    e->prelu = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_MUL_PRELU);
    e->relu_bypass = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_RELU_BYPASS);
    e->relux = RK_FIELD(cfg, RK3588_DPU_EW_CFG_EW_RELUX_EN);
    e->value = (int32_t)rk_reg(c, RK3588_DPU_EW_OP_VALUE_0);
    e->cvt_offset = (int32_t)rk_reg(c, RK3588_DPU_EW_CVT_OFFSET_VALUE);
    e->cvt_scale = RK_FIELD(sc, RK3588_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE);
    e->cvt_shift = RK_FIELD(sc, RK3588_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT);
    e->truncate = RK_FIELD(sc, RK3588_DPU_EW_CVT_SCALE_VALUE_EW_TRUNCATE);
    e->truncate_neg = RK_FIELD(fmt, RK3588_DPU_DATA_FORMAT_EW_TRUNCATE_NEG);
    e->relux_cmp = (int32_t)rk_reg(c, RK3588_DPU_EW_RELUX_CMP_VALUE);
    unsigned mode = RK_FIELD(er, RK3588_DPU_RDMA_ERDMA_CFG_ERDMA_DATA_MODE);
    unsigned size = RK_FIELD(er, RK3588_DPU_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE);
    if (e->from_erdma && !e->op_bypass) {
        if (RK_FIELD(er, RK3588_DPU_RDMA_ERDMA_CFG_ERDMA_DISABLE)) {
            return rk_error(c, DLASIM_ERR_PROG, "DPU.EW_CFG.EW_OP_SRC=1 but "
                            "DPU_RDMA.ERDMA_CFG.ERDMA_DISABLE=1: no operand is read");
        }
        if (mode > 1 || size == 0) {
            return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU_RDMA.ERDMA_CFG DATA_MODE=%u "
                            "DATA_SIZE=%u is not modelled (per channel or per pixel, 8/16/32 bits)",
                            mode, size);
        }
        e->per_pixel = mode == 1;
        e->bpe = size == 1 ? 1 : size == 2 ? 2 : 4;
        e->base = rk_reg(c, RK3588_DPU_RDMA_EW_BASE_ADDR);
        e->surf = RK_REG_FIELD(c, RK3588_DPU_RDMA_EW_SURF_STRIDE, EW_SURF_STRIDE) * 16ull;
    }
    return 0;
}

static int decode(struct rk_core *c, const struct rk_task *t, struct dpu_cfg *d)
{
    uint32_t mode = rk_reg(c, RK3588_DPU_FEATURE_MODE_CFG);
    uint32_t fmt = rk_reg(c, RK3588_DPU_DATA_FORMAT);
    d->w = RK_REG_FIELD(c, RK3588_DPU_DATA_CUBE_WIDTH, WIDTH) + 1;
    d->h = RK_REG_FIELD(c, RK3588_DPU_DATA_CUBE_HEIGHT, HEIGHT) + 1;
    d->c = RK_REG_FIELD(c, RK3588_DPU_DATA_CUBE_CHANNEL, CHANNEL) + 1;
    d->out_prec = RK_FIELD(fmt, RK3588_DPU_DATA_FORMAT_OUT_PRECISION);
    d->to_mem = (RK_FIELD(mode, RK3588_DPU_FEATURE_MODE_CFG_OUTPUT_MODE) & 2u) != 0;
    d->to_ppu = t->ppu;
    d->from_mrdma = !t->conv;
    if (d->out_prec != 0 && d->out_prec != 1 && d->out_prec != 4) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU.DATA_FORMAT.OUT_PRECISION=%u: only int8 (0), "
                        "int16 (1) and int32 (4) are modelled", d->out_prec);
    }
    int rc = decode_ew(c, d, fmt);
    if (rc) {
        return rc;
    }
    if (RK_REG_FIELD(c, RK3588_DPU_OUT_CVT_SCALE, FP32TOFP16_EN)) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU.OUT_CVT_SCALE.FP32TOFP16_EN=1 is not "
                        "modelled");
    }
    decode_stage(&d->bs, rk_reg(c, RK3588_DPU_BS_CFG), rk_reg(c, RK3588_DPU_BS_ALU_CFG),
                 rk_reg(c, RK3588_DPU_BS_MUL_CFG), rk_reg(c, RK3588_DPU_BS_RELUX_CMP_VALUE),
                 RK_FIELD(fmt, RK3588_DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG));
    decode_stage(&d->bn, rk_reg(c, RK3588_DPU_BN_CFG), rk_reg(c, RK3588_DPU_BN_ALU_CFG),
                 rk_reg(c, RK3588_DPU_BN_MUL_CFG), rk_reg(c, RK3588_DPU_BN_RELUX_CMP_VALUE),
                 RK_FIELD(fmt, RK3588_DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG));
    const struct dpu_stage *st[2] = {&d->bs, &d->bn};
    for (int i = 0; i < 2; i++) {
        unsigned a = st[i]->algo;
        if (!st[i]->bypass && !st[i]->alu_bypass && a != 0 && a != 1 && a != 2 && a != 4) {
            return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU.%s_CFG.%s_ALU_ALGO=%u is not modelled "
                            "(0 max, 1 min, 2 add, 4 minus are)", i ? "BN" : "BS", i ? "BN" : "BS", a);
        }
    }
    uint32_t shift = rk_reg(c, RK3588_DPU_OUT_CVT_SHIFT);
    d->cvt_offset = (int32_t)rk_reg(c, RK3588_DPU_OUT_CVT_OFFSET);
    d->cvt_scale = RK_REG_FIELD(c, RK3588_DPU_OUT_CVT_SCALE, OUT_CVT_SCALE);
    d->cvt_shift = RK_FIELD(shift, RK3588_DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT);
    d->cvt_offset_first = RK_FIELD(shift, RK3588_DPU_OUT_CVT_SHIFT_CVT_TYPE);
    d->cvt_half_up = RK_OUT_CVT_ROUNDING ? 1 : (int)RK_FIELD(shift, RK3588_DPU_OUT_CVT_SHIFT_CVT_ROUND);
    d->dst = rk_reg(c, RK3588_DPU_DST_BASE_ADDR);
    d->dst_surf = RK_REG_FIELD(c, RK3588_DPU_DST_SURF_STRIDE, DST_SURF_STRIDE) * 16ull;
    return 0;
}

/* Per-channel operands of one stage: `use` bits ALU, CPEND, MUL, TRT. */
static int load_operands(struct rk_core *c, struct dpu_stage *s, uint32_t use, uint64_t base,
                         uint32_t chans, int32_t **buf, const char *unit)
{
    unsigned n = 0;
    for (unsigned b = 0; b < 4; b++) {
        n += (use >> b) & 1u;
    }
    if (s->bypass || n == 0) {
        return 0;
    }
    size_t bytes = (size_t)n * chans * sizeof(int32_t);
    *buf = malloc(bytes);
    if (!*buf) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = rk_dma_read(c, unit, base, *buf, bytes);
    if (rc) {
        return rc;
    }
    const int32_t *p = *buf;
    if (use & 1u) {
        s->alu_ch = p;
        p += chans;
    }
    if (use & 2u) {
        p += chans; /* CPEND: per-channel operand not modelled (OW_SRC refused) */
    }
    if (use & 4u) {
        s->mul_ch = p;
        p += chans;
    }
    if (use & 8u) {
        s->trt_ch = p;
    }
    return 0;
}

/* A stage selects a per-channel operand that DPU_RDMA does not provide. */
static int stage_missing(const struct dpu_stage *s)
{
    if (s->bypass) {
        return 0;
    }
    return (!s->alu_bypass && s->alu_src && !s->alu_ch) ||
           (!s->mul_bypass && s->mul_src && !s->mul_ch) ||
           (!s->mul_bypass && !s->prelu && s->trt_src && !s->trt_ch);
}

/*
 * One BS or BN stage over one channel's plane, in place, on NVDLA's SDP X
 * stage (src/arith/sdp_lanes.h: ALU, MUL with the 49-bit product truncated
 * and rounded as NVDLA's RTL does, PReLU, ReLU): the RK stage is the same
 * hardware (TRM 36.3: BS = X1, BN = X2).  RK additions around it: ALU
 * algorithm 4 (x - operand) as a sum with the negated operand, the PReLU
 * shift *_SHIFT_VALUE_NEG, per-channel truncation (TRT), ReLUX's upper clip.
 */
static void stage_run(const struct dpu_stage *s, int32_t *v, size_t n, uint32_t ch,
                      enum dla_lanes_isa isa)
{
    if (s->bypass) {
        return;
    }
    enum sdp_lane_alu alu = SDP_LANE_ALU_BYPASS;
    int32_t op = 0;
    if (!s->alu_bypass) {
        op = s->alu_src ? s->alu_ch[ch] : s->alu_op;
        alu = s->algo == 0 ? SDP_LANE_ALU_MAX : s->algo == 1 ? SDP_LANE_ALU_MIN : SDP_LANE_ALU_SUM;
        if (s->algo == 4) {
            op = op == INT32_MIN ? INT32_MAX : -op;
        }
    }
    int32_t mop = 1;
    unsigned sh = 0;
    if (!s->mul_bypass) {
        mop = s->mul_src ? (int16_t)s->mul_ch[ch] : s->mul_op;
        sh = s->prelu ? s->shift_neg : (s->trt_src ? (unsigned)s->trt_ch[ch] & 63u : s->shift);
    }
    struct sdp_lane_x_cfg x;
    dla_sdp_lane_x_init(&x, alu, s->mul_bypass, s->prelu && !s->mul_bypass, s->relu_bypass, sh);
    dla_sdp_lanes_x(isa, &x, v, v, n, NULL, op, NULL, mop);
    if (!s->relu_bypass && s->relux) {
        for (size_t i = 0; i < n; i++) {
            v[i] = v[i] > s->relux_cmp ? s->relux_cmp : v[i];
        }
    }
}

/* CORE's rounding shift then saturation to [lo, hi], in place.  Blocks of
 * DLA_LANES_BLOCK with a constant trip count so gcc vectorises them at -O2,
 * compiled for the build's baseline and for AVX2 (src/arith/lanes.h). */
#define RK_SHIFT_SAT_BODY(x)                                                               \
    do {                                                                                   \
        int32_t q_ = (x) >> sh;                                                            \
        uint32_t r_ = (uint32_t)(x) & mask, up_ = (uint32_t)(r_ > half) |                  \
                      ((uint32_t)(r_ == half) & (((uint32_t)q_ & 1u) | hu));               \
        int32_t y_ = (int32_t)((uint32_t)q_ + up_);                                        \
        y_ = y_ < lo ? lo : y_;                                                            \
        (x) = y_ > hi ? hi : y_;                                                           \
    } while (0)

#define RK_SHIFT_SAT_FN(NAME, ATTR)                                                        \
    ATTR static void NAME(int32_t *v, size_t n, unsigned sh, int half_up, int32_t lo,      \
                          int32_t hi)                                                      \
    {                                                                                      \
        /* sh = 0: mask 0 and half 0 make up_ 0 (r == half holds, hu and q&1 are 0 */      \
        /* only when forced): handled by zeroing hu and the parity below */                \
        const uint32_t mask = sh ? (1u << sh) - 1u : 0u, half = sh ? 1u << (sh - 1) : 1u;  \
        const uint32_t hu = half_up ? 1u : 0u;                                             \
        size_t i = 0;                                                                      \
        for (; i + DLA_LANES_BLOCK <= n; i += DLA_LANES_BLOCK) {                           \
            int32_t *b = v + i;                                                            \
            for (unsigned j = 0; j < DLA_LANES_BLOCK; j++) {                               \
                RK_SHIFT_SAT_BODY(b[j]);                                                   \
            }                                                                              \
        }                                                                                  \
        for (; i < n; i++) {                                                               \
            RK_SHIFT_SAT_BODY(v[i]);                                                       \
        }                                                                                  \
    }

RK_SHIFT_SAT_FN(shift_sat_generic, )
#if defined(DLA_LANES_X86)
RK_SHIFT_SAT_FN(shift_sat_avx2, DLA_LANES_AVX2_ATTR)
#endif

static void shift_sat(int32_t *v, size_t n, unsigned sh, int half_up, int32_t lo, int32_t hi)
{
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(dla_lanes_best())) {
        shift_sat_avx2(v, n, sh, half_up, lo, hi);
        return;
    }
#endif
    shift_sat_generic(v, n, sh, half_up, lo, hi);
}

/* Every stage bypassed and OUT_CVT x * 1 >> 0 + 0: the values pass
 * unchanged but for the saturation to the output precision (none for int32,
 * the int8 -> int32 path of mtx512's matmul). */
static int identity(const struct dpu_cfg *d)
{
    int ew_inert = d->ew.bypass || (d->ew.op_bypass && d->ew.relu_bypass);
    return d->bs.bypass && d->bn.bypass && ew_inert && d->cvt_scale == 1 && d->cvt_shift == 0 &&
           d->cvt_offset == 0;
}

/* The EW operand of every element: planar int32 [c][h*w] (per pixel) or one
 * per channel, read by ERDMA; converted unless EW_OP_CVT_BYPASS. */
static int load_ew(struct rk_core *c, const struct dpu_cfg *d, int32_t **out)
{
    const struct dpu_ew *e = &d->ew;
    size_t plane = (size_t)d->w * d->h, n = e->per_pixel ? plane * d->c : d->c;
    int32_t *op = malloc(n * sizeof(int32_t));
    if (!op) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = 0;
    if (!e->per_pixel) {
        rc = rk_dma_read(c, "DPU_RDMA ERDMA", e->base, op, n * sizeof(int32_t));
    } else {
        unsigned c2 = 16 / e->bpe;
        size_t surf = e->surf ? (size_t)e->surf : plane * 16;
        uint8_t *buf = malloc(plane * 16);
        rc = buf ? 0 : DLASIM_ERR_NOMEM;
        for (uint32_t s = 0; !rc && s * c2 < d->c; s++) {
            rc = rk_dma_read(c, "DPU_RDMA ERDMA", e->base + (uint64_t)s * surf, buf, plane * 16);
            for (uint32_t l = 0; !rc && l < c2 && s * c2 + l < d->c; l++) {
                int32_t *o = op + (size_t)(s * c2 + l) * plane;
                for (size_t i = 0; i < plane; i++) {
                    const uint8_t *b = buf + i * 16 + l * e->bpe;
                    o[i] = e->bpe == 1 ? (int8_t)b[0] : e->bpe == 2 ? (int16_t)(b[0] | b[1] << 8)
                                                                   : (int32_t)((uint32_t)b[0] |
                                                                               (uint32_t)b[1] << 8 |
                                                                               (uint32_t)b[2] << 16 |
                                                                               (uint32_t)b[3] << 24);
                }
            }
        }
        free(buf);
    }
    if (rc) {
        free(op);
        return rc;
    }
    *out = op;
    return 0;
}

/* An EW operand through its converter (as OUT_CVT: CVT_TYPE, CVT_ROUND). */
static int64_t ew_cvt(const struct dpu_ew *e, int64_t op)
{
    if (e->cvt_bypass) {
        return op;
    }
    if (e->cvt_offset_first) {
        return rk_round_shift((op + e->cvt_offset) * (int64_t)e->cvt_scale, e->cvt_shift,
                              e->cvt_half_up);
    }
    return rk_round_shift(op * (int64_t)e->cvt_scale, e->cvt_shift, e->cvt_half_up) + e->cvt_offset;
}

/* x / 2^s rounded half away from zero (NVDLA SDP Y stage truncation). */
static int64_t shift_away(int64_t x, unsigned s)
{
    if (s == 0) {
        return x;
    }
    if (s >= 62) {
        return 0;
    }
    int64_t mag = x < 0 ? -x : x;
    mag = (mag + ((int64_t)1 << (s - 1))) >> s;
    return x < 0 ? -mag : mag;
}

/* The EW stage on one channel's plane (ops: this channel's operands, one
 * per element or one for all). */
static void ew_run(const struct dpu_ew *e, int32_t *v, size_t n, const int32_t *ops, int per_elem)
{
    if (e->bypass) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t x = v[i];
        if (!e->op_bypass) {
            int64_t op = ew_cvt(e, per_elem ? ops[i] : ops[0]);
            op = rk_sat(op, INT32_MIN, INT32_MAX);
            if (e->mul) {
                if (!e->prelu || x < 0) {
                    x = shift_away(x * op, e->prelu ? e->truncate_neg : e->truncate);
                }
            } else {
                x = e->algo == 0 ? (x > op ? x : op) : e->algo == 1 ? (x < op ? x : op)
                  : e->algo == 2 ? x + op : x - op;
            }
            x = rk_sat(x, INT32_MIN, INT32_MAX);
        }
        if (!e->relu_bypass) {
            x = x > 0 ? x : 0;
            x = e->relux && x > e->relux_cmp ? e->relux_cmp : x;
        }
        v[i] = (int32_t)x;
    }
}

static int64_t out_cvt(const struct dpu_cfg *d, int64_t x)
{
    if (d->cvt_offset_first) {
        int64_t t = rk_sat(x + d->cvt_offset, -S48 + 1, S48 - 1);
        return rk_round_shift(t * (int64_t)d->cvt_scale, d->cvt_shift, d->cvt_half_up);
    }
    return rk_round_shift(x * (int64_t)d->cvt_scale, d->cvt_shift, d->cvt_half_up) + d->cvt_offset;
}

/* MRDMA: the main input from memory (FLYING_MODE = 1). */
static int load_mrdma(struct rk_core *c, const struct dpu_cfg *d, struct rk_cube *in)
{
    unsigned prec = RK_REG_FIELD(c, RK3588_DPU_RDMA_FEATURE_MODE_CFG, IN_PRECISION);
    unsigned bpe = prec == 0 ? 1 : prec == 1 ? 2 : prec == 4 ? 4 : 0;
    if (!bpe) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU_RDMA.FEATURE_MODE_CFG.IN_PRECISION=%u is not "
                        "modelled (int8, int16, int32 are)", prec);
    }
    unsigned c2 = 16 / bpe;
    size_t surf = (size_t)d->w * d->h * 16, nsurf = (d->c + c2 - 1) / c2;
    uint8_t *raw = malloc(surf * nsurf);
    in->v = malloc((size_t)d->w * d->h * d->c * sizeof(int32_t));
    if (!raw || !in->v) {
        free(raw);
        return DLASIM_ERR_NOMEM;
    }
    in->w = d->w;
    in->h = d->h;
    in->c = d->c;
    int rc = rk_dma_read(c, "DPU_RDMA MRDMA", rk_reg(c, RK3588_DPU_RDMA_SRC_BASE_ADDR), raw,
                         surf * nsurf);
    for (uint32_t ch = 0; !rc && ch < d->c; ch++) {
        const uint8_t *s = raw + (ch / c2) * surf + (ch % c2) * bpe;
        int32_t *o = in->v + (size_t)ch * d->w * d->h;
        for (size_t i = 0; i < (size_t)d->w * d->h; i++) {
            const uint8_t *e = s + i * 16;
            o[i] = bpe == 1 ? (int8_t)e[0] : bpe == 2 ? (int16_t)(e[0] | e[1] << 8)
                                                      : (int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 |
                                                                  (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24);
        }
    }
    free(raw);
    return rc;
}

static int write_out(struct rk_core *c, const struct dpu_cfg *d, const int32_t *v)
{
    unsigned bpe = d->out_prec == 0 ? 1 : d->out_prec == 1 ? 2 : 4, c2 = 16 / bpe;
    size_t plane = (size_t)d->w * d->h, surf = plane * 16;
    uint8_t *buf = rk_scratch(c, 6, surf);
    if (!buf) {
        return DLASIM_ERR_NOMEM;
    }
    const uint16_t one = 1;
    const int little = *(const uint8_t *)&one == 1;
    const enum dla_lanes_isa isa = dla_lanes_best();
    int rc = 0;
    for (uint32_t s = 0; !rc && s * c2 < d->c; s++) {
        uint32_t lanes = d->c - s * c2 < c2 ? d->c - s * c2 : c2;
        const int32_t *src = v + (size_t)s * c2 * plane;
        if (bpe == 1 && lanes == 16) {
            /* the planes-to-atoms transpose of NVDLA's SDP (src/arith/atoms.h) */
            dla_atoms_from_planes(isa, src, plane, 16, buf);
            rc = rk_dma_write(c, "DPU WDMA", d->dst + s * d->dst_surf, buf, surf);
            continue;
        }
        if (lanes < c2) {
            memset(buf, 0, surf);
        }
        /* pixel-major: one 16-byte atom at a time */
        for (size_t i = 0; i < plane; i++) {
            uint8_t *atom = buf + i * 16;
            for (uint32_t l = 0; l < lanes; l++) {
                uint32_t u = (uint32_t)src[(size_t)l * plane + i];
                if (bpe == 4 && little) {
                    memcpy(atom + l * 4, &u, 4); /* the memory is little-endian, as the SoC */
                    continue;
                }
                for (unsigned b = 0; b < bpe; b++) {
                    atom[l * bpe + b] = (uint8_t)(u >> (8 * b));
                }
            }
        }
        rc = rk_dma_write(c, "DPU WDMA", d->dst + s * d->dst_surf, buf, surf);
    }
    return rc;
}

/* `n` surfaces of `bytes`, `stride` apart from engine address `base`. */
static struct dla_strided surfaces(uint64_t base, uint64_t bytes, uint64_t n, uint64_t stride)
{
    struct dla_strided s = {0};
    s.base = base;
    s.line_bytes = bytes;
    s.lines = s.batches = 1;
    s.surfaces = n;
    s.surf_stride = stride;
    return s;
}

/* What the DPU moves and computes, by the device core's rules
 * (src/sim/core/budget.h): MRDMA's input cube, ERDMA's per-pixel operand
 * cube, WDMA's output cube (each in the 32-bit space) and the elements. */
static int check_budget(struct rk_core *c, const struct dpu_cfg *d, int from_mrdma)
{
    uint64_t plane16 = (uint64_t)d->w * d->h * 16;
    unsigned in_prec = RK_REG_FIELD(c, RK3588_DPU_RDMA_FEATURE_MODE_CFG, IN_PRECISION);
    unsigned in_c2 = in_prec == 0 ? 16 : in_prec == 1 ? 8 : 4; /* elements per atom */
    unsigned out_c2 = d->out_prec == 0 ? 16 : d->out_prec == 1 ? 8 : 4;
    int ew_read = !d->ew.bypass && !d->ew.op_bypass && d->ew.from_erdma && d->ew.per_pixel &&
                  d->ew.bpe;
    unsigned ew_c2 = ew_read ? 16 / d->ew.bpe : 1;
    struct dla_strided in = surfaces(rk_reg(c, RK3588_DPU_RDMA_SRC_BASE_ADDR),
                                     plane16 * ((d->c + in_c2 - 1) / in_c2), 1, 0);
    struct dla_strided ew = surfaces(d->ew.base, plane16, (d->c + ew_c2 - 1) / ew_c2,
                                     d->ew.surf ? d->ew.surf : plane16);
    struct dla_strided out = surfaces(d->dst, plane16, (d->c + out_c2 - 1) / out_c2, d->dst_surf);
    struct dla_work w;
    dla_work_init(&w, "DPU");
    if (from_mrdma) {
        dla_work_read(&w, &in);
    }
    if (ew_read) {
        dla_work_read(&w, &ew);
    }
    if (d->to_mem) {
        dla_work_write(&w, &out);
    }
    dla_work_ops(&w, (uint64_t)d->w * d->h * d->c);
    int rc = rk_work_check(c, &w);
    if (!rc && from_mrdma) {
        rc = rk_extent_check(c, "DPU_RDMA MRDMA", "input cube", 0, &in);
    }
    if (!rc && ew_read) {
        rc = rk_extent_check(c, "DPU_RDMA ERDMA", "EW operand cube", 0, &ew);
    }
    if (!rc && d->to_mem) {
        rc = rk_extent_check(c, "DPU WDMA", "output cube", 1, &out);
    }
    return rc;
}

int rk_dpu_run(struct rk_core *c, const struct rk_task *t, struct rk_cube *acc,
               struct rk_cube *to_ppu)
{
    struct dpu_cfg d;
    struct rk_cube own = {0, 0, 0, NULL, 0, 0, 0};
    int32_t *bs_ops = NULL, *bn_ops = NULL;
    int rc = decode(c, t, &d);
    if (!rc && acc && (acc->w != d.w || acc->h != d.h || acc->c != d.c)) {
        rc = rk_error(c, DLASIM_ERR_PROG, "DPU.DATA_CUBE_* %ux%ux%u (+1 each) differ from the CORE "
                      "output %ux%ux%u", d.w - 1, d.h - 1, d.c - 1, acc->w, acc->h, acc->c);
    }
    if (!rc) {
        rc = check_budget(c, &d, acc == NULL);
    }
    if (!rc && !acc) {
        rc = load_mrdma(c, &d, &own);
        acc = &own;
    }
    if (!rc && t->dpu_rdma) {
        rc = load_operands(c, &d.bs, RK_REG_FIELD(c, RK3588_DPU_RDMA_BRDMA_CFG, BRDMA_DATA_USE),
                           rk_reg(c, RK3588_DPU_RDMA_BS_BASE_ADDR), d.c, &bs_ops, "DPU_RDMA BRDMA");
    }
    if (!rc && t->dpu_rdma) {
        rc = load_operands(c, &d.bn, RK_REG_FIELD(c, RK3588_DPU_RDMA_NRDMA_CFG, NRDMA_DATA_USE),
                           rk_reg(c, RK3588_DPU_RDMA_BN_BASE_ADDR), d.c, &bn_ops, "DPU_RDMA NRDMA");
    }
    int32_t *ew_ops = NULL, ew_reg = d.ew.value;
    if (!rc && !d.ew.bypass && !d.ew.op_bypass && d.ew.from_erdma) {
        rc = t->dpu_rdma ? load_ew(c, &d, &ew_ops)
                         : rk_error(c, DLASIM_ERR_PROG, "DPU.EW_CFG.EW_OP_SRC=1 but DPU_RDMA "
                                    "is not enabled");
    }
    if (!rc && (stage_missing(&d.bs) || stage_missing(&d.bn))) {
        rc = rk_error(c, DLASIM_ERR_PROG, "DPU: a per-channel operand (*_SRC=1) is selected but "
                      "DPU_RDMA is not enabled or does not read it");
    }
    int64_t lo = d.out_prec == 0 ? -128 : d.out_prec == 1 ? -32768 : INT32_MIN;
    int64_t hi = d.out_prec == 0 ? 127 : d.out_prec == 1 ? 32767 : INT32_MAX;
    if (!rc && identity(&d) && (d.out_prec != 4 || acc->shift)) {
        /* CORE's pending truncation and the saturation to the output
         * precision are all that is left: one pass */
        shift_sat(acc->v, (size_t)d.w * d.h * d.c, acc->shift, acc->shift_half_up, (int32_t)lo,
                  (int32_t)hi);
    } else if (!rc && !identity(&d)) {
        size_t plane = (size_t)d.w * d.h;
        const enum dla_lanes_isa isa = dla_lanes_best();
        if (acc->shift) {
            shift_sat(acc->v, plane * d.c, acc->shift, acc->shift_half_up, INT32_MIN, INT32_MAX);
        }
        for (uint32_t ch = 0; ch < d.c; ch++) {
            int32_t *v = acc->v + (size_t)ch * plane;
            stage_run(&d.bs, v, plane, ch, isa);
            stage_run(&d.bn, v, plane, ch, isa);
            if (ew_ops && d.ew.per_pixel) {
                ew_run(&d.ew, v, plane, ew_ops + (size_t)ch * plane, 1);
            } else {
                ew_run(&d.ew, v, plane, ew_ops ? ew_ops + ch : &ew_reg, 0);
            }
            for (size_t i = 0; i < plane; i++) {
                v[i] = (int32_t)rk_sat(out_cvt(&d, v[i]), lo, hi);
            }
        }
    }
    if (!rc && d.to_mem) {
        rc = write_out(c, &d, acc->v);
    }
    if (acc) {
        acc->shift = 0; /* applied above (own cubes from MRDMA have none) */
    }
    if (!rc && to_ppu) {
        /* hand the cube over (the PPU frees it) */
        *to_ppu = *acc;
        if (acc == &own) {
            own.v = NULL;
        } else {
            acc->v = NULL;
        }
    }
    free(own.v);
    free(bs_ops);
    free(bn_ops);
    free(ew_ops);
    return rc;
}
