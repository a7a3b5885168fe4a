/*
 * Bit-exact integer arithmetic of the NVDLA SDP data path, as small static
 * inline helpers (used by src/sim/nvdla/sdp.c).
 *
 * Each helper reproduces one hardware building block of the SDP RTL:
 *   sdp_shr_su      NV_NVDLA_HLS_shiftrightsu / shiftrightsatsu (vmod/vlibs):
 *                   arithmetic right shift, round half away from zero,
 *                   saturation to the output width, 0 when shift >= in width
 *   sdp_shl_su      NV_NVDLA_HLS_shiftleftsu: left shift with saturation
 *   sdp_shr_ss      NV_NVDLA_HLS_shiftrightss: signed shift amount (negative =
 *                   saturating left shift, positive = rounding right shift)
 *   sdp_sat         NV_NVDLA_HLS_saturate: clamp to a signed width
 *   sdp_lut_line    NV_NVDLA_SDP_HLS_lut_line (+ NV_NVDLA_HLS_shiftrightusz):
 *                   linear LUT index and 35-bit fraction
 *   sdp_lut_expn    NV_NVDLA_SDP_HLS_lut_expn (+ NV_DW_lsd): exponent LUT
 *                   index and fraction
 *   sdp_lut_interp  NV_NVDLA_SDP_HLS_Y_int_inp, hit path
 *   sdp_lut_extrap  NV_NVDLA_SDP_HLS_Y_int_inp, under/overflow path
 * and the same arithmetic in branch-free "lane" form for loops the compiler
 * vectorises (one formula for every configuration of a stage, decided by
 * per-layer constants instead of branches):
 *   sdp_lane_x      BS / BN (X stage): ALU, MUL or PReLU, truncation, ReLU
 *   sdp_lane_cvt    output converter, with its saturation flag
 *
 * All values handled here fit in int64_t (the widest product is 50 bits),
 * and no negative value is ever shifted: right shifts of negative values go
 * through sdp_floor_shr().
 */
#ifndef DLASIM_ARITH_SDP_ARITH_H
#define DLASIM_ARITH_SDP_ARITH_H

#include <stdint.h>

/* Largest / smallest value of a signed `bits`-wide integer (2..63). */
static inline int64_t sdp_smax(unsigned bits)
{
    return (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
}

static inline int64_t sdp_smin(unsigned bits)
{
    return -sdp_smax(bits) - 1;
}

/* Clamp to a signed `bits`-wide integer (NV_NVDLA_HLS_saturate). */
static inline int64_t sdp_sat(int64_t x, unsigned bits)
{
    int64_t hi = sdp_smax(bits);
    int64_t lo = sdp_smin(bits);
    return x > hi ? hi : (x < lo ? lo : x);
}

/* floor(x / 2^s) for 0 <= s <= 63 and |x| < 2^63, without shifting a
 * negative value. */
static inline int64_t sdp_floor_shr(int64_t x, unsigned s)
{
    if (x >= 0) {
        return x >> s;
    }
    return -(int64_t)((uint64_t)(-(x + 1)) >> s) - 1;
}

/*
 * Signed right shift by an unsigned amount with rounding and saturation.
 * ref: vmod/vlibs/NV_NVDLA_HLS_shiftrightsu.v, NV_NVDLA_HLS_shiftrightsatsu.v
 *  - the guard bit rounds up a non-negative value; a negative value rounds
 *    up only when the sticky bits are also set: round half away from zero;
 *  - the result saturates to `out_w` signed bits (*sat reports it);
 *  - a shift >= in_w gives 0 (and no saturation).
 * `x` is a signed `in_w`-bit value with |x| <= 2^62 (in_w <= 64).
 */
static inline int64_t sdp_shr_su(int64_t x, unsigned s, unsigned in_w, unsigned out_w, int *sat)
{
    int64_t hi = sdp_smax(out_w);
    int64_t lo = sdp_smin(out_w);
    int64_t r;
    if (s >= in_w) {
        if (sat) {
            *sat = 0;
        }
        return 0;
    }
    if (s == 0) {
        r = x;
    } else {
        /* round the magnitude half up (|x| <= 2^62: the sum fits in 64
         * unsigned bits and the shifted result in 63) */
        uint64_t half = UINT64_C(1) << (s - 1);
        uint64_t mag = x >= 0 ? (uint64_t)x : (uint64_t)(-x);
        int64_t rm = (int64_t)((mag + half) >> s);
        r = x >= 0 ? rm : -rm;
    }
    if (sat) {
        /* the RTL flags a negative value whose truncation (towards minus
         * infinity) is below the minimum, even if rounding brings it back */
        int64_t q = sdp_floor_shr(x, s);
        *sat = q < lo || r > hi;
    }
    return r > hi ? hi : (r < lo ? lo : r);
}

/*
 * Left shift of a signed value with saturation to `out_w` bits.
 * ref: vmod/vlibs/NV_NVDLA_HLS_shiftleftsu.v (ALU operand shift 16 -> 32).
 */
static inline int64_t sdp_shl_su(int64_t x, unsigned s, unsigned out_w)
{
    if (x == 0) {
        return 0;
    }
    int64_t hi = sdp_smax(out_w);
    int64_t lo = sdp_smin(out_w);
    if (s >= out_w) {
        return x > 0 ? hi : lo;
    }
    /* |x| < 2^16 and s < 32 here: the product fits in int64_t. */
    int64_t v = x * (int64_t)(UINT64_C(1) << s);
    return v > hi ? hi : (v < lo ? lo : v);
}

/*
 * Shift by a signed 5-bit amount: negative = left shift with saturation,
 * positive = rounding right shift with saturation (out width 32).
 * ref: vmod/vlibs/NV_NVDLA_HLS_shiftrightss.v (LUT under/overflow slope).
 */
static inline int64_t sdp_shr_ss(int64_t x, int s, unsigned in_w, unsigned out_w)
{
    if (s >= 0) {
        return sdp_shr_su(x, (unsigned)s, in_w, out_w, 0);
    }
    unsigned k = (unsigned)(-s);
    int64_t hi = sdp_smax(out_w);
    int64_t lo = sdp_smin(out_w);
    if (k >= out_w) {
        return x > 0 ? hi : (x < 0 ? lo : 0);
    }
    int64_t max_in = hi >> k;
    int64_t min_in = -(int64_t)(UINT64_C(1) << (out_w - 1 - k));
    if (x > max_in) {
        return hi;
    }
    if (x < min_in) {
        return lo;
    }
    return x * (int64_t)(UINT64_C(1) << k);
}

/* ---- LUT ----------------------------------------------------------------- */

#define SDP_LUT_FRAC_BITS 35u

/* Result of one table's index calculation. */
struct sdp_lut_idx {
    uint32_t index; /* entry (0 .. depth-1) */
    uint64_t frac;  /* 35-bit fraction between entry index and index+1 */
    int uflow;
    int oflow;
};

/*
 * Linear table: index = (x - start) >> sel (sel signed 8-bit: negative
 * shifts left), fraction = the 35 bits shifted out.
 * ref: vmod/nvdla/sdp/NV_NVDLA_SDP_HLS_lut_line.v,
 *      vmod/vlibs/NV_NVDLA_HLS_shiftrightusz.v (IN 32, OUT 9, FRAC 35,
 *      SHIFT 8): a left shift saturates the 9-bit index at 511 as soon as
 *      the result reaches 256, a right shift saturates at 512; the fraction
 *      is 0 for a left shift.
 */
static inline struct sdp_lut_idx sdp_lut_line(int32_t x, int32_t start, int sel, uint32_t depth)
{
    struct sdp_lut_idx r = {0, 0, 0, 0};
    if (x <= start) {
        r.uflow = 1;
        return r;
    }
    uint32_t sub = (uint32_t)((int64_t)x - (int64_t)start);
    uint32_t idx;
    if (sel < 0) {
        unsigned k = (unsigned)(-sel);
        uint64_t v = k >= 9 ? UINT64_C(512) : ((uint64_t)sub << k);
        idx = v >= 256 ? 511u : (uint32_t)v;
    } else {
        unsigned s = (unsigned)sel;
        uint64_t ip = s >= 32 ? 0 : (uint64_t)(sub >> s);
        idx = ip >= 512 ? 511u : (uint32_t)ip;
        if (s <= SDP_LUT_FRAC_BITS) {
            uint64_t low = s == 0 ? 0 : ((uint64_t)sub & ((UINT64_C(1) << s) - 1));
            r.frac = low << (SDP_LUT_FRAC_BITS - s);
        } else if (s - SDP_LUT_FRAC_BITS < 32) {
            r.frac = ((uint64_t)sub >> (s - SDP_LUT_FRAC_BITS)) &
                     ((UINT64_C(1) << SDP_LUT_FRAC_BITS) - 1);
        }
    }
    if (idx >= depth - 1) {
        r.oflow = 1;
        idx = depth - 1;
    }
    r.index = idx;
    return r;
}

/* NV_DW_lsd encoding of a 32-bit value: how many bits below the MSB equal
 * the MSB before the first one that differs (31 when all bits are equal).
 * ref: vmod/vlibs/NV_DW_lsd.v (DWF_lsd_enc). */
static inline unsigned sdp_lsd32(uint32_t a)
{
    /* bit i of t (i >= 1) is set where bits i and i-1 of a differ; bit 0
     * stops the count at 31 */
    uint32_t t = (a ^ (a << 1)) | 1u;
    unsigned n = 0;
    if (!(t & 0xffff0000u)) {
        n += 16;
        t <<= 16;
    }
    if (!(t & 0xff000000u)) {
        n += 8;
        t <<= 8;
    }
    if (!(t & 0xf0000000u)) {
        n += 4;
        t <<= 4;
    }
    if (!(t & 0xc0000000u)) {
        n += 2;
        t <<= 2;
    }
    if (!(t & 0x80000000u)) {
        n += 1;
    }
    return n;
}

/*
 * Exponent table: index = log2(x - start) - offset (offset signed 8-bit),
 * fraction = the bits below the leading one, left-aligned in 35 bits.
 * ref: vmod/nvdla/sdp/NV_NVDLA_SDP_HLS_lut_expn.v.  The log2 is computed as
 * 30 - lsd(x - start) on the 32-bit difference, which is one less than the
 * true log2 when the difference is >= 2^31 (the RTL treats it as signed;
 * cmod hls/sdp/sdp_y_idx.cpp counts leading zeros instead), and the
 * subtraction of the offset is 9 bits wide.
 */
static inline struct sdp_lut_idx sdp_lut_expn(int32_t x, int32_t start, int offset, uint32_t depth)
{
    struct sdp_lut_idx r = {0, 0, 0, 0};
    int uflow_in = x <= start;
    uint32_t sub = uflow_in ? 0 : (uint32_t)((int64_t)x - (int64_t)start);
    /* 32-bit log2 index; -1 (all ones) when sub is 0xffffffff */
    int64_t log2 = (uflow_in || sub == 0) ? 0 : (int64_t)30 - (int64_t)sdp_lsd32(sub);
    uint32_t log2_u32 = (uint32_t)log2;
    uint32_t filter = log2_u32 >= 32 ? 0xffffffffu : ((UINT32_C(1) << log2_u32) - 1u);
    uint32_t frac = sub & filter;
    uint32_t log2_9 = log2_u32 & 0x1ffu;
    int uflow_mid = (int)log2_9 < offset;
    uint32_t mid = (uint32_t)((int64_t)log2_9 - (int64_t)offset) & 0x1ffu;
    if (uflow_in || uflow_mid) {
        mid = 0;
    }
    r.uflow = uflow_in || uflow_mid;
    r.oflow = mid >= depth - 1;
    r.index = r.oflow ? depth - 1 : mid;
    /* shift amount 35 - log2 is 32-bit unsigned in the RTL: huge when
     * log2 > 35, which clears the fraction */
    if (log2_9 <= SDP_LUT_FRAC_BITS) {
        r.frac = ((uint64_t)frac << (SDP_LUT_FRAC_BITS - log2_9)) &
                 ((UINT64_C(1) << SDP_LUT_FRAC_BITS) - 1);
    }
    return r;
}

/*
 * Hit: y = (y0 * (2^35 - frac) + y1 * frac) / 2^35, rounded half away
 * from zero, saturated to 32 bits.
 * ref: NV_NVDLA_SDP_HLS_Y_int_inp.v (mul0/mul1, shiftrightsu 53 -> 32, 35).
 */
static inline int32_t sdp_lut_interp(int16_t y0, int16_t y1, uint64_t frac)
{
    int64_t a0 = (int64_t)((UINT64_C(1) << SDP_LUT_FRAC_BITS) - frac);
    int64_t sum = (int64_t)y0 * a0 + (int64_t)y1 * (int64_t)frac;
    return (int32_t)sdp_shr_su(sum, SDP_LUT_FRAC_BITS, 53, 32, 0);
}

/*
 * Under/overflow: y = sat32(y0 + shift_ss((x - (bias + offset)) * scale)).
 * ref: NV_NVDLA_SDP_HLS_Y_int_inp.v (34-bit x - ob, 50-bit product,
 * shiftrightss 50 -> 32 with a signed 5-bit shift, 33-bit sum saturated).
 */
static inline int32_t sdp_lut_extrap(int32_t x, int16_t y0, uint32_t bias, int32_t offset,
                                     int16_t scale, int shift)
{
    int64_t xsub = (int64_t)x - ((int64_t)bias + (int64_t)offset);
    int64_t prod = xsub * (int64_t)scale;
    int64_t tru = sdp_shr_ss(prod, shift, 50, 32);
    return (int32_t)sdp_sat((int64_t)y0 + tru, 32);
}

/* ---- lane form (vectorisable) --------------------------------------------- */

/* Rounding shift of a lane: shift and half = 1 << (shift - 1) (0 for shift
 * 0); a shift >= the input width is given as shift 63, half 0 (result 0,
 * as sdp_shr_su, for |v| < 2^62). */
struct sdp_lane_shift {
    unsigned shift;
    uint64_t half;
};

static inline struct sdp_lane_shift sdp_lane_shift_of(unsigned s, unsigned in_w)
{
    struct sdp_lane_shift r;
    r.shift = s >= in_w ? 63u : s;
    r.half = (s == 0 || s >= in_w) ? 0 : UINT64_C(1) << (s - 1);
    return r;
}

/* All ones when v < 0, else 0 (no shift of a negative value). */
static inline uint64_t sdp_lane_sign(int64_t v)
{
    return UINT64_C(0) - ((uint64_t)v >> 63);
}

/* sdp_shr_su without saturation: magnitude rounded half up, sign restored. */
static inline int64_t sdp_lane_round(int64_t v, struct sdp_lane_shift s)
{
    uint64_t m = sdp_lane_sign(v);
    uint64_t mag = ((uint64_t)v ^ m) - m;
    uint64_t r = (mag + s.half) >> s.shift;
    return (int64_t)((r ^ m) - m);
}

/* floor(v / 2^shift): ~(~v >> shift) for negative v. */
static inline int64_t sdp_lane_floor(int64_t v, struct sdp_lane_shift s)
{
    uint64_t m = sdp_lane_sign(v);
    return (int64_t)((((uint64_t)v ^ m) >> s.shift) ^ m);
}

static inline int64_t sdp_lane_clamp(int64_t v, int64_t lo, int64_t hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/*
 * X stage (BS or BN) of one layer for sdp_lane_x.  The ALU bypass is a sum
 * with 0 (max/min masks 0 make the max/min pass x), the MUL bypass a
 * multiplication by 1 (the truncation still applies, as in the RTL).
 */
struct sdp_lane_x_cfg {
    uint32_t sum_mask, max_mask, min_mask; /* ALU algorithm, all 0 when bypassed */
    struct sdp_lane_shift mul_shift;       /* truncation of the 49-bit product */
    uint32_t prelu;                        /* 1: non-negative ALU results pass */
    int32_t relu_floor;                    /* 0 with ReLU, INT32_MIN without */
};

/*
 * One element: x is the input, op the ALU operand already shifted and
 * saturated to 32 bits (sdp_shl_su), mop the 16-bit MUL operand (1 when
 * bypassed).  ref: NV_NVDLA_SDP_HLS_X_int_alu/mul/trt/relu.v; the products
 * are formed from 32-bit factors ((x + op) * mop = x * mop + op * mop) so
 * they vectorise as widening multiplications.
 */
static inline int32_t sdp_lane_x(const struct sdp_lane_x_cfg *p, int32_t x, int32_t op,
                                 int32_t mop)
{
    uint32_t u = (uint32_t)op;
    int32_t op_max = (int32_t)((u & p->max_mask) | (UINT32_C(0x80000000) & ~p->max_mask));
    int32_t op_min = (int32_t)((u & p->min_mask) | (UINT32_C(0x7fffffff) & ~p->min_mask));
    int32_t op_sum = (int32_t)(u & p->sum_mask);
    int32_t a = x > op_max ? x : op_max;
    a = a < op_min ? a : op_min;
    int64_t alu = (int64_t)a + op_sum; /* 33 bits */
    int64_t prod = (int64_t)a * mop + (int64_t)op_sum * mop;
    int64_t t = sdp_lane_clamp(sdp_lane_round(prod, p->mul_shift), INT32_MIN, INT32_MAX);
    /* PReLU passes the low 32 bits of a non-negative ALU result */
    int64_t low32 = (int32_t)(uint32_t)(uint64_t)alu;
    t = (p->prelu & (alu >= 0)) ? low32 : t;
    return (int32_t)(t > p->relu_floor ? t : p->relu_floor);
}

/*
 * The X stage in 32-bit lanes, exact when the ALU result and the product
 * stay within 32 bits (|x| <= 2^31 - 1) and the truncation is below 32
 * (src/arith/sdp_lanes.c checks the ranges of a run): then the rounding
 * cannot saturate and PReLU's low 32 bits are the ALU result.  `shifted` is
 * a constant after inlining (0: the truncation is 0).
 */
static inline int32_t sdp_lane_x32(const struct sdp_lane_x_cfg *p, int32_t x, int32_t op,
                                   int32_t mop, const int shifted)
{
    uint32_t u = (uint32_t)op;
    int32_t op_max = (int32_t)((u & p->max_mask) | (UINT32_C(0x80000000) & ~p->max_mask));
    int32_t op_min = (int32_t)((u & p->min_mask) | (UINT32_C(0x7fffffff) & ~p->min_mask));
    int32_t a = x > op_max ? x : op_max;
    a = a < op_min ? a : op_min;
    int32_t alu = (int32_t)((uint32_t)a + (u & p->sum_mask));
    uint32_t prod = (uint32_t)alu * (uint32_t)mop;
    int32_t t = (int32_t)prod;
    if (shifted) {
        uint32_t m = UINT32_C(0) - (prod >> 31);
        uint32_t mag = (prod ^ m) - m;
        t = (int32_t)((((mag + (uint32_t)p->mul_shift.half) >> p->mul_shift.shift) ^ m) - m);
    }
    t = (p->prelu & (alu >= 0)) ? alu : t;
    return t > p->relu_floor ? t : p->relu_floor;
}

/* Output converter of one layer for sdp_lane_cvt. */
struct sdp_lane_cvt_cfg {
    int32_t scale;                 /* D_CVT_SCALE */
    int64_t offset_scaled;         /* D_CVT_OFFSET * D_CVT_SCALE */
    struct sdp_lane_shift shift;   /* D_CVT_SHIFT of the 49-bit product */
    int32_t lo, hi;                /* int8 or int16 range */
};

/*
 * One element: sat(round((x - offset) * scale / 2^shift)) and the 17-bit
 * saturation flag added to *sat.  ref: NV_NVDLA_SDP_HLS_C_int.v, as
 * sdp_shr_su(.., 49, 17, &sat) then sdp_sat(.., 8 or 16).
 */
static inline int32_t sdp_lane_cvt(const struct sdp_lane_cvt_cfg *p, int32_t x, uint32_t *sat)
{
    int64_t v = (int64_t)x * p->scale - p->offset_scaled;
    int64_t r = sdp_lane_round(v, p->shift);
    int64_t q = sdp_lane_floor(v, p->shift);
    *sat += (uint32_t)((q < -65536) | (r > 65535));
    return (int32_t)sdp_lane_clamp(r, p->lo, p->hi);
}

/*
 * The output converter in 32-bit lanes, exact when every |(x - offset) *
 * scale| < 2^31 and shift <= 31 (src/arith/sdp_lanes.c finds the inputs for
 * which it is): the product wraps modulo 2^32 to its true value, magnitude
 * + half stays below 2^32.
 */
struct sdp_lane_cvt_narrow {
    uint32_t scale, offset_scaled; /* as unsigned: the arithmetic wraps */
    unsigned shift;
    uint32_t half;
    int32_t lo, hi;
};

/* `shifted` is a constant after inlining: 0 when p->shift is 0, where the
 * rounding is the identity. */
static inline int32_t sdp_lane_cvt32(const struct sdp_lane_cvt_narrow *p, int32_t x,
                                     uint32_t *sat, const int shifted)
{
    uint32_t v = (uint32_t)x * p->scale - p->offset_scaled;
    int32_t r = (int32_t)v, q = (int32_t)v;
    if (shifted) {
        uint32_t m = UINT32_C(0) - (v >> 31);
        uint32_t mag = (v ^ m) - m;
        r = (int32_t)((((mag + p->half) >> p->shift) ^ m) - m);
        q = (int32_t)(((v ^ m) >> p->shift) ^ m);
    }
    *sat += (uint32_t)((q < -65536) | (r > 65535));
    r = r < p->lo ? p->lo : r;
    return r > p->hi ? p->hi : r;
}

#endif
