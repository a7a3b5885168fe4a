/*
 * CACC — convolution accumulator: partial sums to the int32 cube for SDP.
 *
 * CSB window 0x7000-0x7fff (NVDLA_CACC_*).  GLB interrupt bit CACC_DONE
 * (raised by the device core).  No memory port modelled: the output always
 * flies into SDP (D_DATAOUT_ADDR / LINE_STRIDE / SURF_STRIDE / DATAOUT_MAP
 * describe a memory layout the int8 pipeline never writes).
 *
 * Modelled (ref: vmod/nvdla/cacc/NV_NVDLA_CACC_CALC_int8.v):
 *   - each atomic result of CMAC (the sum over Atomic-C channels of one
 *     kernel position) is added to a 34-bit partial sum that saturates;
 *   - the final sum is shifted right by CLIP_TRUNCATE with rounding: the
 *     guide bit rounds positive values up, negative values only when a
 *     sticky bit is set (round half away from zero); the sticky bits are the
 *     15 bits below the guide bit, so for CLIP_TRUNCATE > 16 lower bits are
 *     ignored as the RTL does;
 *   - the result saturates to int32; each saturated element counts in
 *     D_OUT_SATURATION.
 * INT16 layers (where the configuration has INT16): the partial sum is 48
 * bits and saturates, rounding and int32 saturation are the same (ref:
 * nv_full vmod/nvdla/cacc/NV_NVDLA_CACC_CALC_int16.v; dla_cacc_deliver_int16).
 * With batches (D_BATCH_NUMBER, checked against CSC) every batch is
 * delivered and counted the same way.
 * Int32 sums (the common case: kernels of fewer than 2^17 products) are
 * rounded by a branch-free loop in 32-bit lanes (lanes.h), where no value
 * can saturate; 34-bit sums take the general per-element path.
 * The C model's 48-bit accumulator (cmod/cacc) and its exact rounding differ
 * from the RTL only for CLIP_TRUNCATE > 16 (sticky window) and sums beyond
 * 34 bits, which no kernel of at most 2^18 bytes (BYTE_PER_KERNEL) reaches;
 * the RTL behaviour is reproduced.
 */
#include <stdint.h>

#include "arith/lanes.h"
#include "sim/nvdla/cbuf.h"

#define CACC_F(d, g, REG, FIELD) DLA_REG_FIELD(d, g, NVDLA_CACC_##REG##_0, FIELD)

void dla_cacc_decode(const struct dla_dev *d, unsigned g, struct dla_cacc_cfg *a)
{
    a->conv_mode = CACC_F(d, g, D_MISC_CFG, CONV_MODE);
    a->proc_precision = CACC_F(d, g, D_MISC_CFG, PROC_PRECISION);
    a->out_w = CACC_F(d, g, D_DATAOUT_SIZE_0, DATAOUT_WIDTH) + 1;
    a->out_h = CACC_F(d, g, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT) + 1;
    a->out_c = CACC_F(d, g, D_DATAOUT_SIZE_1, DATAOUT_CHANNEL) + 1;
    a->batches = CACC_F(d, g, D_BATCH_NUMBER, BATCHES) + 1;
    a->clip_truncate = CACC_F(d, g, D_CLIP_CFG, CLIP_TRUNCATE);
}

static int mismatch(struct dla_dev *d, const char *what, uint32_t mine, const char *theirs,
                    uint32_t other)
{
    return dla_error(d, DLASIM_ERR_PROG, "CACC: %s=%u differs from %s=%u", what, mine, theirs,
                     other);
}

int dla_cacc_validate(struct dla_dev *d, const struct dla_cacc_cfg *a,
                      const struct dla_csc_cfg *csc)
{
    if (a->conv_mode != csc->conv_mode) {
        return mismatch(d, "D_MISC_CFG_0.CONV_MODE", a->conv_mode, "CSC D_MISC_CFG_0.CONV_MODE",
                        csc->conv_mode);
    }
    if (a->proc_precision != csc->proc_precision) {
        return mismatch(d, "D_MISC_CFG_0.PROC_PRECISION", a->proc_precision,
                        "CSC D_MISC_CFG_0.PROC_PRECISION", csc->proc_precision);
    }
    if (a->out_w != csc->out_w) {
        return mismatch(d, "D_DATAOUT_SIZE_0_0.DATAOUT_WIDTH", a->out_w - 1,
                        "CSC D_DATAOUT_SIZE_0_0.DATAOUT_WIDTH", csc->out_w - 1);
    }
    if (a->out_h != csc->out_h) {
        return mismatch(d, "D_DATAOUT_SIZE_0_0.DATAOUT_HEIGHT", a->out_h - 1,
                        "CSC D_DATAOUT_SIZE_0_0.DATAOUT_HEIGHT", csc->out_h - 1);
    }
    if (a->out_c != csc->out_c) {
        return mismatch(d, "D_DATAOUT_SIZE_1_0.DATAOUT_CHANNEL", a->out_c - 1,
                        "CSC D_DATAOUT_SIZE_1_0.DATAOUT_CHANNEL", csc->out_c - 1);
    }
    if (a->batches != csc->batches) {
        return mismatch(d, "D_BATCH_NUMBER_0.BATCHES", a->batches - 1,
                        "CSC D_BATCH_NUMBER_0.BATCHES", csc->batches - 1);
    }
    /* the cube flies into SDP, which must expect the same size (in SDP's
     * own consumer group: SDP layers run alone flip only SDP's pointer) */
    unsigned sg = dla_consumer(d, NVDLA_UNIT_SDP);
    uint32_t sw = DLA_REG_FIELD(d, sg, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, WIDTH) + 1;
    uint32_t sh = DLA_REG_FIELD(d, sg, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, HEIGHT) + 1;
    uint32_t sc = DLA_REG_FIELD(d, sg, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, CHANNEL) + 1;
    if (sw != a->out_w) {
        return mismatch(d, "D_DATAOUT_SIZE_0_0.DATAOUT_WIDTH", a->out_w - 1,
                        "SDP D_DATA_CUBE_WIDTH_0.WIDTH", sw - 1);
    }
    if (sh != a->out_h) {
        return mismatch(d, "D_DATAOUT_SIZE_0_0.DATAOUT_HEIGHT", a->out_h - 1,
                        "SDP D_DATA_CUBE_HEIGHT_0.HEIGHT", sh - 1);
    }
    if (sc != a->out_c) {
        return mismatch(d, "D_DATAOUT_SIZE_1_0.DATAOUT_CHANNEL", a->out_c - 1,
                        "SDP D_DATA_CUBE_CHANNEL_0.CHANNEL", sc - 1);
    }
    return 0;
}

/* floor(v / 2^t) without shifting a negative value */
static inline int64_t floor_shift(int64_t v, unsigned t)
{
    if (v >= 0) {
        return v >> t;
    }
    return -(int64_t)((((uint64_t)(-(v + 1))) >> t)) - 1;
}

/*
 * ref: vmod/nvdla/cacc/NV_NVDLA_CACC_CALC_int8.v: {sum, 16'b0} >>> truncate,
 * guide bit, 15 sticky bits, i_point5 = guide & (positive | sticky),
 * saturation to int32.  v is a 34-bit value.
 */
static inline int32_t cacc_round(int64_t v, unsigned t, uint32_t *sat)
{
    int64_t fl = floor_shift(v, t);
    uint64_t u = (uint64_t)v;
    int point5 = 0;
    if (t >= 1 && ((u >> (t - 1)) & 1u)) {
        int sticky = 0;
        if (t >= 2) {
            unsigned lo = t > 16 ? t - 16 : 0;
            uint64_t mask = (((uint64_t)1 << (t - 1)) - 1) & ~(((uint64_t)1 << lo) - 1);
            sticky = (u & mask) != 0;
        }
        point5 = v >= 0 || sticky;
    }
    if (v < 0) {
        if (fl < INT32_MIN) {
            (*sat)++;
            return INT32_MIN;
        }
    } else if (fl > INT32_MAX || (fl == INT32_MAX && point5)) {
        (*sat)++;
        return INT32_MAX;
    }
    return (int32_t)(fl + point5);
}

/*
 * cacc_round() for an int32 sum and 1 <= t <= 31, in unsigned 32-bit lane
 * arithmetic without branches so the loop below vectorises:
 *   floor(v / 2^t) = ~(~v >> t) for negative v (m = all ones), v >> t else;
 *   point5 = guide & (non-negative | sticky), sticky over `sticky_mask`.
 * |floor(v / 2^t)| <= 2^30 here, so adding point5 cannot overflow and an
 * int32 sum never saturates.
 */
static inline int32_t cacc_round_i32(int32_t v, unsigned t, uint32_t guide_bit,
                                     uint32_t sticky_mask)
{
    uint32_t u = (uint32_t)v;
    uint32_t neg = u >> 31;
    uint32_t m = 0u - neg;
    uint32_t fl = ((u ^ m) >> t) ^ m;
    uint32_t guide = (u & guide_bit) != 0;
    uint32_t sticky = (u & sticky_mask) != 0;
    return (int32_t)(fl + (guide & ((neg ^ 1u) | sticky)));
}

DLA_LANES_INLINE void round_i32_loop(int32_t *data, size_t n, unsigned t)
{
    /* the RTL's 15 sticky bits below the guide bit (see cacc_round) */
    const unsigned lo = t > 16 ? t - 16 : 0;
    const uint32_t guide_bit = UINT32_C(1) << (t - 1);
    const uint32_t sticky_mask = (guide_bit - 1u) & ~((UINT32_C(1) << lo) - 1u);
    const size_t B = DLA_LANES_BLOCK;
    size_t i = 0;
    for (; i + B <= n; i += B) {
        int32_t *b = data + i;
        for (size_t j = 0; j < B; j++) {
            b[j] = cacc_round_i32(b[j], t, guide_bit, sticky_mask);
        }
    }
    for (; i < n; i++) {
        data[i] = cacc_round_i32(data[i], t, guide_bit, sticky_mask);
    }
}

static void round_i32_generic(int32_t *data, size_t n, unsigned t)
{
    round_i32_loop(data, n, t);
}

#if defined(DLA_LANES_X86)
DLA_LANES_AVX2_ATTR static void round_i32_avx2(int32_t *data, size_t n, unsigned t)
{
    round_i32_loop(data, n, t);
}
#endif

uint32_t dla_cacc_deliver_i32_isa(const struct dla_cacc_cfg *a, int32_t *data, size_t n,
                                  enum dla_lanes_isa isa)
{
    const unsigned t = a->clip_truncate;
    if (t == 0) {
        return 0; /* an exact int32 sum passes unchanged */
    }
#if defined(DLA_LANES_X86)
    if (dla_lanes_avx2_up(isa)) {
        round_i32_avx2(data, n, t);
        return 0;
    }
#endif
    (void)isa;
    round_i32_generic(data, n, t);
    return 0; /* see cacc_round_i32: no int32 sum saturates */
}

uint32_t dla_cacc_deliver_i32(const struct dla_cacc_cfg *a, int32_t *data, size_t n)
{
    return dla_cacc_deliver_i32_isa(a, data, n, dla_lanes_best());
}

uint32_t dla_cacc_deliver_i64(const struct dla_cacc_cfg *a, const int64_t *acc, int32_t *out,
                              size_t n)
{
    uint32_t sat = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = cacc_round(acc[i], a->clip_truncate, &sat);
    }
    return sat;
}

/*
 * ref: nv_full vmod/nvdla/cacc/NV_NVDLA_CACC_CALC_int16.v: the partial sum
 * is 48 bits and saturates (i_sat_pd3); the final value is rounded and
 * saturated to int32 exactly as in CALC_int8 (guide bit, 15 sticky bits).
 * The exact sum reaches the 48-bit bounds only monotonically (at most 2^17
 * products of magnitude at most 2^30, see kernels/conv_s16.h), so clamping
 * the exact sum equals saturating every partial sum.
 */
uint32_t dla_cacc_deliver_int16(const struct dla_cacc_cfg *a, const int64_t *acc, int32_t *out,
                                size_t n)
{
    const int64_t hi = ((int64_t)1 << 47) - 1;
    const int64_t lo = -((int64_t)1 << 47);
    uint32_t sat = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t v = acc[i] > hi ? hi : (acc[i] < lo ? lo : acc[i]);
        out[i] = cacc_round(v, a->clip_truncate, &sat);
    }
    return sat;
}

void dla_cacc_finish(struct dla_dev *d, unsigned group, uint32_t saturations)
{
    dla_reg_hw_set(d, NVDLA_CACC_D_OUT_SATURATION_0, group, saturations);
}
