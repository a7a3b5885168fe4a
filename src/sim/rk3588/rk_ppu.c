/*
 * RK3588 PPU (+ PPU_RDMA): pooling, the RK analogue of NVDLA's PDP
 * (TRM 36.3; spec 002 for every register used here).
 *
 * Input: the DPU's output cube (OPERATION_MODE_CFG.FLYING_MODE = 0, fused)
 * or PPU_RDMA (FLYING_MODE = 1): SRC_BASE_ADDR, SRC_LINE_STRIDE and
 * SRC_SURF_STRIDE (bytes, fields [31:4]), int8 NC1HWC2 with 16 lanes.
 * Sizes DATA_CUBE_IN_* / DATA_CUBE_OUT_* (minus one), kernel and stride
 * POOLING_KERNEL_CFG (minus one), padding POOLING_PADDING_CFG, padding value
 * PADDING_VALUE_1_CFG/PADDING_VALUE_2_CFG (35 bits, signed).
 * Methods (POOLING_METHOD): 1 max and 2 min over the real elements of the
 * window (padding ignored, as NVDLA PDP); 0 average: (sum of the real
 * elements + pad value x number of padded positions) x RECIP_KERNEL_WIDTH
 * rounded to an integer, x RECIP_KERNEL_HEIGHT rounded (both 2^16 = 1.0), in
 * NVDLA PDP's cal2d arithmetic, the code pdp.c uses (src/arith/pool_arith.h);
 * RK_PPU_AVG_ROUNDING is the switch.  The TRM documents neither the count of padded positions nor the
 * rounding: both are assumptions (docs/rk3588.md).
 * Output: int8 (DATA_FORMAT.PROC_PRECISION 0) saturated, NC1HWC2 at
 * DST_BASE_ADDR, surfaces DST_SURF_STRIDE apart, lines W_out * 16 bytes.
 * Not modelled (refused): index output (INDEX_EN), other precisions.
 */
#include <stdlib.h>
#include <string.h>

#include "arith/pool_arith.h"
#include "sim/core/budget.h"
#include "sim/rk3588/rk3588.h"

/* Average pooling arithmetic: 0 = NVDLA PDP's cal2d (register widths and
 * rounding, src/arith/pool_arith.h); 1 = round half to even after each
 * reciprocal, no register widths (change here if a board capture disagrees). */
#define RK_PPU_AVG_ROUNDING 0
#define RK_PPU_BITS 8 /* int8 datapath width B of the cal2d arithmetic */

struct ppu_cfg {
    uint32_t iw, ih, ic, ow, oh, oc;
    uint32_t kw, kh, sx, sy, pl, pt, pr, pb;
    unsigned method;
    int64_t pad;
    uint32_t recip_w, recip_h;
    uint64_t dst, dst_surf;
};

static int decode(struct rk_core *c, struct ppu_cfg *p)
{
    uint32_t mode = rk_reg(c, RK3588_PPU_OPERATION_MODE_CFG);
    uint32_t kern = rk_reg(c, RK3588_PPU_POOLING_KERNEL_CFG);
    uint32_t pad = rk_reg(c, RK3588_PPU_POOLING_PADDING_CFG);
    p->iw = RK_REG_FIELD(c, RK3588_PPU_DATA_CUBE_IN_WIDTH, CUBE_IN_WIDTH) + 1;
    p->ih = RK_REG_FIELD(c, RK3588_PPU_DATA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT) + 1;
    p->ic = RK_REG_FIELD(c, RK3588_PPU_DATA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL) + 1;
    p->ow = RK_REG_FIELD(c, RK3588_PPU_DATA_CUBE_OUT_WIDTH, CUBE_OUT_WIDTH) + 1;
    p->oh = RK_REG_FIELD(c, RK3588_PPU_DATA_CUBE_OUT_HEIGHT, CUBE_OUT_HEIGHT) + 1;
    p->oc = RK_REG_FIELD(c, RK3588_PPU_DATA_CUBE_OUT_CHANNEL, CUBE_OUT_CHANNEL) + 1;
    p->kw = RK_FIELD(kern, RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH) + 1;
    p->kh = RK_FIELD(kern, RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT) + 1;
    p->sx = RK_FIELD(kern, RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH) + 1;
    p->sy = RK_FIELD(kern, RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT) + 1;
    p->pl = RK_FIELD(pad, RK3588_PPU_POOLING_PADDING_CFG_PAD_LEFT);
    p->pt = RK_FIELD(pad, RK3588_PPU_POOLING_PADDING_CFG_PAD_TOP);
    p->pr = RK_FIELD(pad, RK3588_PPU_POOLING_PADDING_CFG_PAD_RIGHT);
    p->pb = RK_FIELD(pad, RK3588_PPU_POOLING_PADDING_CFG_PAD_BOTTOM);
    p->method = RK_FIELD(mode, RK3588_PPU_OPERATION_MODE_CFG_POOLING_METHOD);
    uint64_t pv = (uint64_t)rk_reg(c, RK3588_PPU_PADDING_VALUE_1_CFG) |
                  (uint64_t)RK_REG_FIELD(c, RK3588_PPU_PADDING_VALUE_2_CFG, PAD_VALUE_1) << 32;
    p->pad = (int64_t)(pv << 29) >> 29; /* 35-bit signed */
    p->recip_w = RK_REG_FIELD(c, RK3588_PPU_RECIP_KERNEL_WIDTH, RECIP_KERNEL_WIDTH);
    p->recip_h = RK_REG_FIELD(c, RK3588_PPU_RECIP_KERNEL_HEIGHT, RECIP_KERNEL_HEIGHT);
    p->dst = RK_REG_FIELD(c, RK3588_PPU_DST_BASE_ADDR, DST_BASE_ADDR) * 16ull;
    p->dst_surf = RK_REG_FIELD(c, RK3588_PPU_DST_SURF_STRIDE, DST_SURF_STRIDE) * 16ull;
    if (p->method == 3) {
        return rk_error(c, DLASIM_ERR_PROG, "PPU.OPERATION_MODE_CFG.POOLING_METHOD=3 is reserved");
    }
    if (RK_FIELD(mode, RK3588_PPU_OPERATION_MODE_CFG_INDEX_EN)) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "PPU.OPERATION_MODE_CFG.INDEX_EN=1 (index "
                        "output) is not modelled");
    }
    if (RK_REG_FIELD(c, RK3588_PPU_DATA_FORMAT, PROC_PRECISION)) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "PPU.DATA_FORMAT.PROC_PRECISION=%u: only int8 (0) "
                        "is modelled", RK_REG_FIELD(c, RK3588_PPU_DATA_FORMAT, PROC_PRECISION));
    }
    if (p->oc != p->ic) {
        return rk_error(c, DLASIM_ERR_PROG, "PPU.DATA_CUBE_OUT_CHANNEL=%u differs from "
                        "DATA_CUBE_IN_CHANNEL=%u: pooling keeps the channels", p->oc - 1, p->ic - 1);
    }
    if ((uint64_t)(p->ow - 1) * p->sx + p->kw > (uint64_t)p->iw + p->pl + p->pr ||
        (uint64_t)(p->oh - 1) * p->sy + p->kh > (uint64_t)p->ih + p->pt + p->pb ||
        p->pl >= p->kw || p->pr >= p->kw || p->pt >= p->kh || p->pb >= p->kh) {
        return rk_error(c, DLASIM_ERR_PROG, "PPU: output %ux%u, kernel %ux%u, stride %ux%u and "
                        "padding l%u r%u t%u b%u do not fit the %ux%u input", p->ow, p->oh, p->kw,
                        p->kh, p->sx, p->sy, p->pl, p->pr, p->pt, p->pb, p->iw, p->ih);
    }
    return 0;
}

static int load_rdma(struct rk_core *c, const struct ppu_cfg *p, struct rk_cube *in)
{
    if (RK_REG_FIELD(c, RK3588_PPU_RDMA_DATA_FORMAT, IN_PRECISION)) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "PPU_RDMA.DATA_FORMAT.IN_PRECISION=%u: only int8 "
                        "(0) is modelled", RK_REG_FIELD(c, RK3588_PPU_RDMA_DATA_FORMAT, IN_PRECISION));
    }
    uint32_t w = RK_REG_FIELD(c, RK3588_PPU_RDMA_CUBE_IN_WIDTH, CUBE_IN_WIDTH) + 1;
    uint32_t h = RK_REG_FIELD(c, RK3588_PPU_RDMA_CUBE_IN_HEIGHT, CUBE_IN_HEIGHT) + 1;
    uint32_t ch = RK_REG_FIELD(c, RK3588_PPU_RDMA_CUBE_IN_CHANNEL, CUBE_IN_CHANNEL) + 1;
    if (w != p->iw || h != p->ih || ch != p->ic) {
        return rk_error(c, DLASIM_ERR_PROG, "PPU_RDMA.CUBE_IN_* %ux%ux%u differ from PPU.DATA_CUBE_IN_* "
                        "%ux%ux%u (all minus one)", w - 1, h - 1, ch - 1, p->iw - 1, p->ih - 1,
                        p->ic - 1);
    }
    uint64_t base = rk_reg(c, RK3588_PPU_RDMA_SRC_BASE_ADDR);
    uint64_t line = RK_REG_FIELD(c, RK3588_PPU_RDMA_SRC_LINE_STRIDE, SRC_LINE_STRIDE) * 16ull;
    uint64_t surf = RK_REG_FIELD(c, RK3588_PPU_RDMA_SRC_SURF_STRIDE, SRC_SURF_STRIDE) * 16ull;
    size_t plane = (size_t)w * h;
    uint8_t *buf = malloc((size_t)w * 16);
    in->v = malloc(plane * ch * sizeof(int32_t));
    if (!buf || !in->v) {
        free(buf);
        return DLASIM_ERR_NOMEM;
    }
    in->w = w;
    in->h = h;
    in->c = ch;
    int rc = 0;
    for (uint32_t s = 0; !rc && s * 16 < ch; s++) {
        for (uint32_t y = 0; !rc && y < h; y++) {
            rc = rk_dma_read(c, "PPU_RDMA", base + s * surf + y * line, buf, (size_t)w * 16);
            for (uint32_t l = 0; !rc && l < 16 && s * 16 + l < ch; l++) {
                int32_t *o = in->v + (size_t)(s * 16 + l) * plane + (size_t)y * w;
                for (uint32_t x = 0; x < w; x++) {
                    o[x] = (int8_t)buf[x * 16 + l];
                }
            }
        }
    }
    free(buf);
    return rc;
}

/* sum x RECIP_W x RECIP_H as NVDLA's PDP computes it for B-bit data: the
 * window sum kept to B+6 bits, x RECIP_KERNEL_WIDTH kept to B+23 bits and
 * rounded to B+3, x RECIP_KERNEL_HEIGHT kept to B+20 bits and rounded to B
 * (pdp.c, cal2d), or the half-to-even alternative. */
static int64_t average(const struct ppu_cfg *p, int64_t sum)
{
    if (RK_PPU_AVG_ROUNDING) {
        int64_t hm = rk_round_shift(rk_sat(sum, -((int64_t)1 << 40), (int64_t)1 << 40) * p->recip_w,
                                    16, 0);
        return rk_round_shift(hm * p->recip_h, 16, 0);
    }
    const unsigned b = RK_PPU_BITS;
    int64_t s = dla_pool_wrap(sum, b + 6);
    int32_t hm = dla_pool_round16(dla_pool_wrap(s * (int64_t)p->recip_w, b + 23), b + 3);
    return dla_pool_round16(dla_pool_wrap((int64_t)hm * (int64_t)p->recip_h, b + 20), b);
}

static int32_t pool_one(const struct ppu_cfg *p, const int32_t *plane, uint32_t ox, uint32_t oy)
{
    int64_t x0 = (int64_t)ox * p->sx - p->pl, y0 = (int64_t)oy * p->sy - p->pt;
    int64_t acc = p->method == 1 ? INT64_MIN : p->method == 2 ? INT64_MAX : 0;
    uint32_t real = 0;
    for (int64_t y = y0; y < y0 + p->kh; y++) {
        if (y < 0 || y >= p->ih) {
            continue;
        }
        for (int64_t x = x0; x < x0 + p->kw; x++) {
            if (x < 0 || x >= p->iw) {
                continue;
            }
            int32_t v = plane[(size_t)y * p->iw + (size_t)x];
            real++;
            if (p->method == 1) {
                acc = v > acc ? v : acc;
            } else if (p->method == 2) {
                acc = v < acc ? v : acc;
            } else {
                acc += v;
            }
        }
    }
    if (p->method != 0) {
        return real ? (int32_t)acc : (int32_t)rk_sat(p->pad, INT32_MIN, INT32_MAX);
    }
    acc += p->pad * (int64_t)(p->kw * p->kh - real);
    return (int32_t)rk_sat(average(p, acc), INT32_MIN, INT32_MAX);
}

static int write_out(struct rk_core *c, const struct ppu_cfg *p, const int8_t *out)
{
    size_t plane = (size_t)p->ow * p->oh, surf = plane * 16;
    uint8_t *buf = malloc(surf);
    if (!buf) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = 0;
    for (uint32_t s = 0; !rc && s * 16 < p->oc; s++) {
        memset(buf, 0, surf);
        for (uint32_t l = 0; l < 16 && s * 16 + l < p->oc; l++) {
            const int8_t *src = out + (size_t)(s * 16 + l) * plane;
            for (size_t i = 0; i < plane; i++) {
                buf[i * 16 + l] = (uint8_t)src[i];
            }
        }
        rc = rk_dma_write(c, "PPU", p->dst + s * p->dst_surf, buf, surf);
    }
    free(buf);
    return rc;
}

/* What the PPU moves and computes, by the device core's rules
 * (src/sim/core/budget.h): PPU_RDMA's input cube (lines and surfaces with
 * their strides), the output cube (each in the 32-bit space) and the
 * kernel taps. */
static int check_budget(struct rk_core *c, const struct ppu_cfg *p, int from_rdma)
{
    struct dla_strided in = {0}, out = {0};
    in.base = rk_reg(c, RK3588_PPU_RDMA_SRC_BASE_ADDR);
    in.line_bytes = (uint64_t)p->iw * 16;
    in.lines = p->ih;
    in.line_stride = RK_REG_FIELD(c, RK3588_PPU_RDMA_SRC_LINE_STRIDE, SRC_LINE_STRIDE) * 16ull;
    in.surfaces = (p->ic + 15) / 16;
    in.surf_stride = RK_REG_FIELD(c, RK3588_PPU_RDMA_SRC_SURF_STRIDE, SRC_SURF_STRIDE) * 16ull;
    out.base = p->dst;
    out.line_bytes = (uint64_t)p->ow * p->oh * 16;
    out.lines = 1;
    out.surfaces = (p->oc + 15) / 16;
    out.surf_stride = p->dst_surf;
    in.batches = out.batches = 1;
    struct dla_work w;
    dla_work_init(&w, "PPU");
    if (from_rdma) {
        dla_work_read(&w, &in);
    }
    dla_work_write(&w, &out);
    dla_work_ops(&w, (uint64_t)p->ow * p->oh * p->oc * p->kw * p->kh);
    int rc = rk_work_check(c, &w);
    if (!rc && from_rdma) {
        rc = rk_extent_check(c, "PPU_RDMA", "input cube", 0, &in);
    }
    if (!rc) {
        rc = rk_extent_check(c, "PPU", "output cube", 1, &out);
    }
    return rc;
}

int rk_ppu_run(struct rk_core *c, const struct rk_task *t, const struct rk_cube *from_dpu)
{
    struct ppu_cfg p;
    struct rk_cube own = {0, 0, 0, NULL, 0, 0, 0};
    const struct rk_cube *in = from_dpu;
    int rc = decode(c, &p);
    if (!rc) {
        rc = check_budget(c, &p, from_dpu == NULL && t->ppu_rdma);
    }
    if (!rc && !in) {
        rc = t->ppu_rdma ? load_rdma(c, &p, &own) : rk_error(c, DLASIM_ERR_PROG, "PPU: no input");
        in = &own;
    }
    if (!rc && (in->w != p.iw || in->h != p.ih || in->c != p.ic)) {
        rc = rk_error(c, DLASIM_ERR_PROG, "PPU.DATA_CUBE_IN_* %ux%ux%u differ from the DPU output "
                      "%ux%ux%u", p.iw, p.ih, p.ic, in->w, in->h, in->c);
    }
    int8_t *out = rc ? NULL : malloc((size_t)p.ow * p.oh * p.oc);
    if (!rc && !out) {
        rc = DLASIM_ERR_NOMEM;
    }
    for (uint32_t ch = 0; !rc && ch < p.oc; ch++) {
        const int32_t *plane = in->v + (size_t)ch * p.iw * p.ih;
        int8_t *o = out + (size_t)ch * p.ow * p.oh;
        for (uint32_t oy = 0; oy < p.oh; oy++) {
            for (uint32_t ox = 0; ox < p.ow; ox++) {
                o[(size_t)oy * p.ow + ox] = (int8_t)rk_sat(pool_one(&p, plane, ox, oy), -128, 127);
            }
        }
    }
    if (!rc) {
        rc = write_out(c, &p, out);
    }
    free(out);
    free(own.v);
    return rc;
}
