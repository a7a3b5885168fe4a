/* SDP reference arithmetic and stage programming (see sdpref.h). */
#include <stddef.h>

#include "regs/gen/nvdla_regs.h"
#include "sdpref.h"
#include "testdev.h"

int64_t sext(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (m << 1) - 1;
    return (v & m) ? (int64_t)v - (int64_t)(m << 1) : (int64_t)v;
}

int64_t clamp_bits(int64_t v, unsigned bits)
{
    int64_t hi = (int64_t)((1ull << (bits - 1)) - 1);
    int64_t lo = -hi - 1;
    return v > hi ? hi : (v < lo ? lo : v);
}

int64_t ref_rshift(int64_t x, unsigned s, unsigned in_w, unsigned out_w, int *sat)
{
    int64_t hi = (int64_t)((1ull << (out_w - 1)) - 1);
    int flag = 0;
    int64_t r = 0;
    if (s < in_w) {
        uint64_t mag = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
        uint64_t q = s == 0 ? mag : (mag + (1ull << (s - 1))) >> s;
        if (x >= 0) {
            flag = (int64_t)q > hi;
            r = flag ? hi : (int64_t)q;
        } else {
            /* floor for the saturation flag: -ceil(mag / 2^s) */
            uint64_t ceil_mag = s == 0 ? mag : (mag + (1ull << s) - 1) >> s;
            flag = ceil_mag > (uint64_t)hi + 1;
            r = flag ? -hi - 1 : -(int64_t)q;
        }
    }
    if (sat) {
        *sat = flag;
    }
    return r;
}

int64_t ref_shl32(int64_t x, unsigned s)
{
    for (unsigned i = 0; i < s && x != 0; i++) {
        x *= 2;
        if (x > INT32_MAX) {
            return INT32_MAX;
        }
        if (x < INT32_MIN) {
            return INT32_MIN;
        }
    }
    return x;
}

int64_t ref_sdp_x(const struct sdp_x *x, int64_t v, int64_t aop, int64_t mop)
{
    int64_t a = v;
    if (!x->alu_bypass) {
        int64_t op = ref_shl32(aop, x->alu_shift);
        if (x->algo == 0) {
            a = v > op ? v : op;
        } else if (x->algo == 1) {
            a = v < op ? v : op;
        } else {
            a = v + op;
        }
    }
    int64_t t;
    if (!x->mul_bypass && x->prelu && a >= 0) {
        t = sext((uint64_t)a, 32);
    } else {
        t = ref_rshift(x->mul_bypass ? a : a * mop, x->mul_shift & 63u, 49, 32, NULL);
    }
    if (!x->relu_bypass && t < 0) {
        t = 0;
    }
    return t;
}

int64_t ref_sdp_cvt(int64_t v, uint32_t offset, uint32_t scale, uint32_t shift, int *sat)
{
    return ref_rshift((v - sext(offset, 32)) * sext(scale, 16), shift & 63u, 49, 17, sat);
}

void sdp_program_x(struct dlasim_dev *dev, unsigned stage, const struct sdp_x *x)
{
    static const uint32_t regs[2][5] = {
        { NVDLA_SDP_D_DP_BS_CFG_0, NVDLA_SDP_D_DP_BS_ALU_CFG_0, NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE_0,
          NVDLA_SDP_D_DP_BS_MUL_CFG_0, NVDLA_SDP_D_DP_BS_MUL_SRC_VALUE_0 },
        { NVDLA_SDP_D_DP_BN_CFG_0, NVDLA_SDP_D_DP_BN_ALU_CFG_0, NVDLA_SDP_D_DP_BN_ALU_SRC_VALUE_0,
          NVDLA_SDP_D_DP_BN_MUL_CFG_0, NVDLA_SDP_D_DP_BN_MUL_SRC_VALUE_0 },
    };
    /* BS and BN share the field layout */
    wr(dev, regs[stage][0],
       x->bypass | (x->alu_bypass << 1) | (x->algo << 2) | (x->mul_bypass << 4) |
           (x->prelu << 5) | (x->relu_bypass << 6));
    wr(dev, regs[stage][1], x->alu_src | (x->alu_shift << 8));
    wr(dev, regs[stage][2], x->alu_op);
    wr(dev, regs[stage][3], x->mul_src | (x->mul_shift << 8));
    wr(dev, regs[stage][4], x->mul_op);
}

uint32_t sdp_rdma_cfg(unsigned disable, unsigned use, unsigned size, unsigned mode)
{
    return disable | (use << 1) | (size << 3) | (mode << 4) |
           (NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_RAM_TYPE_MC << 5);
}

void sdp_program_src(struct dlasim_dev *dev, uint32_t w, uint32_t h, uint32_t c, uint64_t addr,
                     uint32_t line, uint32_t surf)
{
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, w - 1);
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, h - 1);
    wr(dev, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, c - 1);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_LOW_0, (uint32_t)addr);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, (uint32_t)(addr >> 32));
    wr(dev, NVDLA_SDP_RDMA_D_SRC_LINE_STRIDE_0, line);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_SURFACE_STRIDE_0, surf);
    wr(dev, NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0, NVDLA_SDP_RDMA_D_SRC_DMA_CFG_0_SRC_RAM_TYPE_MC);
}
