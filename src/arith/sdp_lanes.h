/*
 * SDP data path loops over runs of elements (used by src/sim/nvdla/sdp.c): BS/BN
 * (X stage) and the output converter in the branch-free lane form of
 * sdp_arith.h, each for every instruction set of lanes.h.
 *
 * A run is n consecutive int32 values, processed into another array or in
 * place; its operands are either one value per element (an array of n) or
 * one value for the run.
 *
 * Every function takes every variant of lanes.h: DLA_LANES_AVX512 runs
 * its own forms of dla_sdp_lanes_x_cvt_atoms8 and dla_sdp_lanes_chain8
 * (16 lanes a step) and the AVX2 forms of the rest, with the same values
 * and saturation counts in all.
 */
#ifndef DLASIM_ARITH_SDP_LANES_H
#define DLASIM_ARITH_SDP_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "arith/lanes.h"
#include "arith/sdp_arith.h"

/* X stage ALU as the lanes see it. */
enum sdp_lane_alu {
    SDP_LANE_ALU_BYPASS = 0,
    SDP_LANE_ALU_SUM = 1,
    SDP_LANE_ALU_MAX = 2,
    SDP_LANE_ALU_MIN = 3
};

/* Output converter of a layer: the 64-bit lane form, and the 32-bit one
 * with the inputs [narrow_lo, narrow_hi] for which it is exact; no input
 * in [quiet_lo, quiet_hi] raises its 17-bit saturation flag. */
struct sdp_lane_cvt {
    struct sdp_lane_cvt_cfg wide;
    int narrow_ok;
    struct sdp_lane_cvt_narrow narrow;
    int32_t narrow_lo, narrow_hi;
    int32_t quiet_lo, quiet_hi;
};

/* X stage constants; mul_shift is the 6-bit truncation of the product. */
void dla_sdp_lane_x_init(struct sdp_lane_x_cfg *l, enum sdp_lane_alu alu, int mul_bypass,
                         int prelu, int relu_bypass, unsigned mul_shift);
/* Output converter constants (D_CVT_OFFSET, D_CVT_SCALE, D_CVT_SHIFT, 8 or 16
 * output bits). */
void dla_sdp_lane_cvt_init(struct sdp_lane_cvt *c, int32_t offset, int32_t scale, unsigned shift,
                           unsigned out_bits);

/* X stage from src[0..n) to dst[0..n) (src may be dst): ALU operands ao[i]
 * (already shifted, sdp_shl_su) or av, MUL operands mo[i] or mv. */
void dla_sdp_lanes_x(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *p, const int32_t *src,
                     int32_t *dst, size_t n, const int32_t *ao, int32_t av, const int32_t *mo,
                     int32_t mv);
/* Output converter from src[0..n) to dst[0..n) (src may be dst); returns
 * the saturated elements. */
uint32_t dla_sdp_lanes_cvt(enum dla_lanes_isa isa, const struct sdp_lane_cvt *p,
                           const int32_t *src, int32_t *dst, size_t n);
/* The X stage with register operands av, mv then the output converter, in
 * one pass from src[0..n) to dst[0..n) (src may be dst): the values of
 * dla_sdp_lanes_x then dla_sdp_lanes_cvt, *sat their saturations.  Done
 * (1) only where both are exact in 32-bit lanes for this run (its range
 * tells); 0: run them one after the other (src is unchanged; dst, when it
 * is not src, may have been written). */
int dla_sdp_lanes_x_cvt(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x,
                        const struct sdp_lane_cvt *cvt, const int32_t *src, int32_t *dst,
                        size_t n, int32_t av, int32_t mv, uint32_t *sat);
/* dla_sdp_lanes_x_cvt on pixels [j0, j1) of the 8 channel planes of a
 * surface, written as int8 atoms: plane l (l < real) at src + l * plane,
 * zeros for l >= real; channel l with operands av[l], mv[l]; dst[j * 8 + l]
 * = the (8-bit) output of element j of channel l, for j0 <= j < j1.  Done
 * (1) only where every channel is exact in 32-bit lanes for the range of
 * all eight channels' inputs, or else for its own inputs' range, and the
 * converter outputs 8 bits; 0 (AVX2 and AVX-512 only, the same decision
 * in both; dst may have been written): run the channels one by one.
 * *sat: the saturations; sat NULL when they are not wanted (the bytes are
 * the same: a layer with SDP's saturation counter off is not run again to
 * count them). */
int dla_sdp_lanes_x_cvt_atoms8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x,
                               const struct sdp_lane_cvt *cvt, const int32_t *src, size_t plane,
                               unsigned real, size_t j0, size_t j1, const int32_t av[8],
                               const int32_t mv[8], uint8_t *dst, uint32_t *sat);
/* dla_sdp_lanes_x_cvt_atoms8 with BN between BS and the converter adding a
 * per-element int8 addend: channel l of pixel j through BS (x1, av[l],
 * mv[l]), plus opd[j * 8 + l] (sign-extended) << shl, BN's ReLU (x2's
 * floor), the converter; opd in the atom layout of the planes' pixels.  BN
 * must be a sum with its multiplier bypassed (x2: SUM, no MAX/MIN, no
 * PReLU, truncation 0), BS without MAX/MIN or PReLU, shl <= 23.  Done (1)
 * only where every channel's values stay exact in 32-bit lanes on its own
 * inputs' range and the converter outputs 8 bits, on AVX2 and up; 0 (dst
 * may have been written): run the stages.  opd must not overlap dst.  *sat as
 * dla_sdp_lanes_x_cvt_atoms8's (sat NULL: not counted).  A residual
 * addition fused after a convolution. */
int dla_sdp_lanes_x_add_cvt_atoms8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x1,
                                   const struct sdp_lane_x_cfg *x2, const struct sdp_lane_cvt *cvt,
                                   const int32_t *src, size_t plane, unsigned real, size_t j0,
                                   size_t j1, const int32_t av[8], const int32_t mv[8],
                                   const uint8_t *opd, unsigned shl, uint8_t *dst, uint32_t *sat);
/* dla_sdp_lanes_x_cvt_atoms8 with both X stages in series: channel l of
 * pixel j through BS (x1, av1[l], mv1[l]), BN (x2, av2[l], mv2[l]) and the
 * converter, the stages' values for every input (64-bit products).  Done
 * (1) on AVX-512 when neither stage has MAX/MIN or PReLU and the converter
 * outputs 8 bits; 0 (nothing written): run the stages.  *sat as
 * dla_sdp_lanes_x_cvt_atoms8's (NULL: not counted).  A pre-quantized
 * model's requantization in two multipliers (src/compiler/lower_conv.c). */
int dla_sdp_lanes_x2_cvt_atoms8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x1,
                                const struct sdp_lane_x_cfg *x2, const struct sdp_lane_cvt *cvt,
                                const int32_t *src, size_t plane, unsigned real, size_t j0,
                                size_t j1, const int32_t av1[8], const int32_t mv1[8],
                                const int32_t av2[8], const int32_t mv2[8], uint8_t *dst,
                                uint32_t *sat);
/* dla_sdp_lanes_x_cvt_atoms8 on a surface of one pixel (plane 1, j0 0, j1
 * 1: a fully connected layer's outputs): the eight channels src[l] (l <
 * real, zeros after) in the lanes of one vector with their own operands,
 * dst[l] their outputs.  Done (1) exactly where that function is (every
 * channel exact on its own input, 8-bit converter); *sat the same count. */
int dla_sdp_lanes_x_cvt_pixel8(enum dla_lanes_isa isa, const struct sdp_lane_x_cfg *x,
                               const struct sdp_lane_cvt *cvt, const int32_t *src, unsigned real,
                               const int32_t av[8], const int32_t mv[8], uint8_t *dst,
                               uint32_t *sat);
/* BS, BN (either may be absent) and the output converter in one pass of
 * 32-bit lanes, for a layer whose ranges make all three exact there. */
struct sdp_lane_chain {
    struct sdp_lane_x_cfg x[2];
    struct sdp_lane_cvt_narrow cvt;
    int wide;                      /* the converter in 64-bit products (wcvt) */
    struct sdp_lane_cvt_cfg wcvt;
};
/* The chain of x0, x1 (NULL: the stage is absent) and cvt for inputs in
 * [in_lo, in_hi] and operands (BS ALU, BS MUL, BN ALU, BN MUL) in
 * [op_lo[i], op_hi[i]]; 0 when some value could leave the 32-bit lanes
 * (then run the stages one by one). */
int dla_sdp_lane_chain_init(struct sdp_lane_chain *ch, const struct sdp_lane_x_cfg *x0,
                            const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *cvt,
                            int32_t in_lo, int32_t in_hi, const int32_t op_lo[4],
                            const int32_t op_hi[4]);
/* dla_sdp_lane_chain_init where the stages stay in 32-bit lanes but the
 * converter's products do not (a pre-quantized model's Add: its output
 * multiplier and a truncation of ~30 on sums of ~2^22): the converter in
 * 64-bit products, for dla_sdp_lanes_chain8 only, 8-bit output; 0 when a
 * stage could leave the 32-bit lanes. */
int dla_sdp_lane_chain_init_wide(struct sdp_lane_chain *ch, const struct sdp_lane_x_cfg *x0,
                                 const struct sdp_lane_x_cfg *x1, const struct sdp_lane_cvt *cvt,
                                 int32_t in_lo, int32_t in_hi, const int32_t op_lo[4],
                                 const int32_t op_hi[4]);
/* The chain (not a wide one) from src[0..n) to dst[0..n) (src may be dst) with operand k
 * (BS ALU, BS MUL, BN ALU, BN MUL) one value per element in ops[k], or
 * vals[k] for every element when ops[k] is NULL (an absent stage's: ALU 0,
 * MUL 1); returns the saturated elements.  The values of dla_sdp_lanes_x
 * for each stage then dla_sdp_lanes_cvt. */
uint32_t dla_sdp_lanes_chain(enum dla_lanes_isa isa, const struct sdp_lane_chain *c,
                             const int32_t *src, int32_t *dst, size_t n,
                             const int32_t *const ops[4], const int32_t vals[4]);
/* An operand of dla_sdp_lanes_chain8: one-byte components p[j * stride]
 * (stride 1 or 2), sign-extended and shifted left by shl (<= 24, so never
 * saturated: sdp_shl_su), or, when p is NULL, val for every element. */
struct sdp_lane_op8 {
    const uint8_t *p;
    size_t stride;
    unsigned shl;
    int32_t val;
};
/* dla_sdp_lanes_chain on n int8 elements in memory: src[j] sign-extended
 * through the chain with operand k from ops[k], the low byte of each
 * result to dst[j] (dst may be src; an operand may not overlap dst unless
 * it is src).  One pass, no int32 copies; returns the saturated elements. */
uint32_t dla_sdp_lanes_chain8(enum dla_lanes_isa isa, const struct sdp_lane_chain *c,
                              const uint8_t *src, uint8_t *dst, size_t n,
                              const struct sdp_lane_op8 ops[4]);
/* Memory elements of `bytes` (1: int8, 2: int16 little-endian) to int32:
 * dst[j] = element j of src, sign-extended (MRDMA's input). */
void dla_sdp_lanes_widen(enum dla_lanes_isa isa, const uint8_t *src, unsigned bytes, int32_t *dst,
                         size_t n);
/* The low `bytes` (1 or 2) bytes of each of n values, little-endian (WDMA's
 * output). */
void dla_sdp_lanes_narrow(enum dla_lanes_isa isa, const int32_t *src, size_t n, unsigned bytes,
                          uint8_t *dst);
/* One component of n operand elements `stride` bytes apart, sign-extended
 * from `bytes` (1 or 2) and shifted left: dst[j] = load(src + j * stride) *
 * 2^shift, for shifts that cannot overflow 32 bits (shift <= 32 - 8 * bytes:
 * then sdp_shl_su's saturation never applies). */
void dla_sdp_lanes_shl_ops(enum dla_lanes_isa isa, const uint8_t *src, size_t stride,
                           unsigned bytes, unsigned shift, int32_t *dst, size_t n);
/* Is any of the n bytes non-zero? */
int dla_sdp_lanes_any_nonzero(const uint8_t *p, size_t n);

#endif
