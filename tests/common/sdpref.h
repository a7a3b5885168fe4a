/*
 * SDP arithmetic for the references of the SDP tests (memory input in
 * test_sdp.c, on the fly from CACC in test_sdp_flying.c, the lane loops in
 * test_lanes.c), written from NVDLA's RTL (vmod/vlibs
 * NV_NVDLA_HLS_shiftrightsu.v, vmod/nvdla/sdp NV_NVDLA_SDP_HLS_X_int_*.v,
 * NV_NVDLA_SDP_HLS_C_int.v), no code shared with src/:
 *   - a rounding right shift rounds the magnitude half up (half away from
 *     zero) and saturates; a shift by at least the input width gives 0; a
 *     saturation is flagged when the rounded value is too large or the value
 *     truncated towards minus infinity is below the minimum;
 *   - BS/BN (X stage): operand << ALU shift (saturated to 32 bits); ALU
 *     max/min/sum in 33 bits; MUL 33x16 bits, or PReLU passing the low 32
 *     bits of a non-negative value; the MUL shift applies even when MUL is
 *     bypassed; ReLU;
 *   - output converter: (x - offset) * scale >> shift to 17 bits (counted as
 *     saturation).
 */
#ifndef DLASIM_TESTS_SDPREF_H
#define DLASIM_TESTS_SDPREF_H

#include <stdint.h>

#include "dlasim/dlasim.h"

/* The low `bits` bits of v as a signed value. */
int64_t sext(uint64_t v, unsigned bits);
/* v saturated to a signed `bits`-bit value. */
int64_t clamp_bits(int64_t v, unsigned bits);
/* x / 2^s rounded, saturated to out_w bits; *sat (when given) as above. */
int64_t ref_rshift(int64_t x, unsigned s, unsigned in_w, unsigned out_w, int *sat);
/* x << s saturated to 32 bits, one doubling at a time. */
int64_t ref_shl32(int64_t x, unsigned s);

/* A BS or BN stage: D_DP_Bx_CFG flags, ALU and MUL operand source (1 =
 * memory), shifts and 16-bit register operands. */
struct sdp_x {
    unsigned bypass, alu_bypass, algo, mul_bypass, prelu, relu_bypass;
    unsigned alu_src, alu_shift, mul_src, mul_shift;
    uint32_t alu_op, mul_op;
};

/* Stage x on value v with ALU operand aop and MUL operand mop. */
int64_t ref_sdp_x(const struct sdp_x *x, int64_t v, int64_t aop, int64_t mop);
/* The output converter before the int8/int16 saturation. */
int64_t ref_sdp_cvt(int64_t v, uint32_t offset, uint32_t scale, uint32_t shift, int *sat);

/* The five registers of stage 0 (BS) or 1 (BN). */
void sdp_program_x(struct dlasim_dev *dev, unsigned stage, const struct sdp_x *x);
/* SDP_RDMA's input cube (w x h x c at addr, strides, memory on MC). */
void sdp_program_src(struct dlasim_dev *dev, uint32_t w, uint32_t h, uint32_t c, uint64_t addr,
                     uint32_t line, uint32_t surf);
/* D_BRDMA_CFG / D_NRDMA_CFG / D_ERDMA_CFG (same layout), memory on MC. */
uint32_t sdp_rdma_cfg(unsigned disable, unsigned use, unsigned size, unsigned mode);

#endif
