/*
 * The average-pooling arithmetic of NVDLA's PDP datapath, shared by every
 * pooling engine built from it (src/sim/nvdla/pdp.c; the RK3588 PPU, src/sim/rk3588/rk_ppu.c,
 * which follows NVDLA's RTL where the TRM is silent): two's complement
 * register widths and the reciprocal multiply's rounding.
 * ref: vmod pdp/NV_NVDLA_PDP_CORE_cal2d.v.
 */
#ifndef DLASIM_ARITH_POOL_ARITH_H
#define DLASIM_ARITH_POOL_ARITH_H

#include <stdint.h>

/* Keep the low `bits` bits of v as a two's complement value (no shifts of
 * negative values). */
static inline int64_t dla_pool_wrap(int64_t v, unsigned bits)
{
    uint64_t m = (bits >= 64) ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1u);
    uint64_t u = (uint64_t)v & m;
    uint64_t sign = (uint64_t)1 << (bits - 1);
    return (u & sign) ? (int64_t)(u | ~m) : (int64_t)u;
}

/* Bias that makes every product of the datapath non-negative (|p| < 2^39),
 * so its integer part is a plain shift. */
#define DLA_POOL_BIAS_SHIFT 40

/*
 * Take the 16.16 fixed-point product p (already wrapped to its register
 * width) to an n-bit integer as cal2d does: negative values round half away
 * from zero on the full integer part, positive values add the 0.5 bit to the
 * low n-1 integer bits; the n-bit result wraps.
 * ref: vmod pdp/NV_NVDLA_PDP_CORE_cal2d.v, i8_less_neg_0_5 / i8_more_neg_0_5.
 */
static inline int32_t dla_pool_round16(int64_t p, unsigned n)
{
    uint64_t u = (uint64_t)p + ((uint64_t)1 << DLA_POOL_BIAS_SHIFT);
    int64_t ip = (int64_t)(u >> 16) - ((int64_t)1 << (DLA_POOL_BIAS_SHIFT - 16)); /* floor */
    uint32_t frac = (uint32_t)(u & 0xffffu);
    int64_t r;
    if (p < 0) {
        r = ip + (frac > 0x8000u ? 1 : 0);
    } else {
        r = (ip & (((int64_t)1 << (n - 1)) - 1)) + (frac >= 0x8000u ? 1 : 0);
    }
    return (int32_t)dla_pool_wrap(r, n);
}

#endif
