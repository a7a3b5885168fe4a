/*
 * RK3588 CNA + CORE: int8 direct and depthwise convolution into int32
 * accumulators, on the same kernel as NVDLA's CSC/CMAC (dla_conv_s8,
 * src/kernels): the RK decoder only unpacks the RK layouts.
 *
 * Registers (executer group; field encodings as Mesa rkt_regcmd.c programs
 * them): CNA CONV_CON1 (CONV_MODE 0 direct / 3 depthwise, IN/PROC_PRECISION
 * 0 = int8), CONV_CON3 (CONV_X/Y_STRIDE, the stride itself), DATA_SIZE0/1
 * (DATAIN_WIDTH/HEIGHT/CHANNEL, not minus one), DATA_SIZE2.DATAOUT_WIDTH,
 * WEIGHT_SIZE2 (WEIGHT_WIDTH/HEIGHT/KERNELS), PAD_CON0 (PAD_LEFT/TOP),
 * PAD_CON1 (pad value, low 8 bits as int8), FEATURE_DATA_ADDR, DCOMP_ADDR0
 * (weights); CORE MISC_CFG.DW_EN, DATAOUT_SIZE_0/1 (minus one),
 * CLIP_TRUNCATE (right shift of the accumulator, ROUND_TYPE 0 half-even,
 * 1 half-up).  Right and bottom padding are implied by the output size.
 *
 * Layouts (docs: docs/rk3588.md; Mesa rkt_ml.c, rkt_coefs.c; mtx512
 * feature_data()):
 *   feature: NC1HWC2 int8, C2 = 16, packed: (c, y, x) at
 *            base + (c / 16) * H*W*16 + (y * W + x) * 16 + c % 16
 *            (CNA DMA_CON1/2 strides are read by no model: their encoding is
 *            empirical in every public source, so the packed layout is the
 *            assumption);
 *   weights, direct: blocks of up to 32 kernels x 32 channels,
 *            [K/32][C/32][ky][kx][k2][c2], a block being
 *            min(32, K - 32*kg) x min(32, C - 32*cg) bytes, signed;
 *   weights, depthwise: [C/64][ky][kx][c2], c2 < min(64, C - 64*cg).
 *   The CPEND operand (DPU BS_OW_OP, used for the weight zero point,
 *   Mesa: BS_OW_OP = 0x80 - w_zp) adds OW_OP x (sum of the input window)
 *   to each accumulator; it is applied here, after CLIP_TRUNCATE, because
 *   it needs the input window (assumption: exact when CLIP_TRUNCATE = 0).
 *
 * Output channels: CORE DATAOUT_SIZE_1 may exceed CNA WEIGHT_SIZE2.
 *   WEIGHT_KERNELS up to the kernels' 32-kernel atomic group (Mesa: DATAOUT
 *   = ALIGN(K, 32), WEIGHT_KERNELS = ALIGN(K, 2)); the kernels beyond
 *   WEIGHT_KERNELS fetch no weights, so the model gives them zero weights.
 *   Depthwise: output channels beyond DATAIN_CHANNEL (up to its 64-channel
 *   weight group; Mesa doubles and aligns to 64) have no input channel and
 *   accumulate 0.
 * One-channel input (CONV_CON1.ARGB_IN = 8, as Mesa programs a 1-channel
 *   tensor): one byte per pixel, packed lines of DATAIN_WIDTH bytes; the
 *   byte is channel 0, the other DATAIN_CHANNEL - 1 channels read 0 (Mesa
 *   gives them weights that the CPEND operand cancels), and the CNA input
 *   converter (CVT_CON0 with CVT_BYPASS = 0) maps it to int8:
 *     y = sat8(round((x + CVT_OFFSET0) * CVT_SCALE0 / 2^CVT_TRUNCATE_0))
 *   with x unsigned unless DATA_SIGN, OFFSET signed 16-bit, rounding by
 *   CVT_CON0.ROUND_TYPE (0 half to even, 1 half up; TRM field text).  The
 *   sign of the offset is an inference: Mesa's constants (offset 0xff80,
 *   scale 16384, truncate 14) then give x - 128, the signed storage every
 *   other Mesa path uses, and its 1-channel tests pass on silicon; NVDLA's
 *   subtracting CDMA converter would saturate every input >= 0 to 127.
 *
 * Refused (DLASIM_ERR_UNSUPPORTED): precisions other than int8, the input
 * converter outside one-channel input and its CVT_TYPE = 1, deconvolution,
 * ARGB_IN other than 0 and 8, dilation, weight decompression.
 */
#include <stdlib.h>
#include <string.h>

#include "arith/atoms.h"
#include "dlasim/layer.h"
#include "kernels/conv_s8.h"
#include "sim/core/budget.h"
#include "sim/rk3588/rk3588.h"

#define MAX_HOST_BYTES (1ull << 30) /* host buffers the model allocates per task */

struct conv_cfg {
    uint32_t w, h, c;       /* input cube */
    uint32_t kw, kh, k;     /* kernels */
    uint32_t sx, sy, pl, pt;
    uint32_t ow, oh, ok;    /* output cube */
    int dw;                 /* depthwise */
    int8_t pad;
    unsigned truncate, round_half_up;
    uint64_t feature, weights;
    int32_t ow_op;          /* CPEND operand, 0 = none */
    int one_channel;        /* ARGB_IN = 8: one byte per pixel */
    int cvt;                /* input converter on (one-channel input only) */
    int cvt_signed, cvt_half_up;
    int32_t cvt_offset;
    uint32_t cvt_scale, cvt_truncate;
};

#define RK_ARGB_ONE_CHANNEL 8u /* CONV_CON1.ARGB_IN for a 1-channel tensor (Mesa) */

static uint32_t align32(uint32_t v, uint32_t a)
{
    return (uint32_t)(((uint64_t)v + a - 1) / a * a);
}

static int refuse(struct rk_core *c, const char *what, uint32_t v)
{
    return rk_error(c, DLASIM_ERR_UNSUPPORTED, "CNA/CORE: %s=%u is not modelled", what, v);
}

/* The CNA input converter (CVT_CON0/CON1), modelled for one-channel input. */
static int decode_cvt(struct rk_core *c, struct conv_cfg *k)
{
    uint32_t con0 = rk_reg(c, RK3588_CNA_CVT_CON0);
    if (RK_FIELD(con0, RK3588_CNA_CVT_CON0_CVT_BYPASS)) {
        return 0;
    }
    if (!k->one_channel) {
        return refuse(c, "CNA.CVT_CON0.CVT_BYPASS (input converter outside ARGB_IN=8)", 0);
    }
    if (RK_FIELD(con0, RK3588_CNA_CVT_CON0_CVT_TYPE)) {
        return refuse(c, "CNA.CVT_CON0.CVT_TYPE (input converter)", 1);
    }
    uint32_t con1 = rk_reg(c, RK3588_CNA_CVT_CON1);
    k->cvt = 1;
    k->cvt_signed = (int)RK_FIELD(con0, RK3588_CNA_CVT_CON0_DATA_SIGN);
    k->cvt_half_up = (int)RK_FIELD(con0, RK3588_CNA_CVT_CON0_ROUND_TYPE);
    k->cvt_truncate = RK_FIELD(con0, RK3588_CNA_CVT_CON0_CVT_TRUNCATE_0);
    k->cvt_scale = RK_FIELD(con1, RK3588_CNA_CVT_CON1_CVT_SCALE0);
    k->cvt_offset = (int16_t)RK_FIELD(con1, RK3588_CNA_CVT_CON1_CVT_OFFSET0);
    return 0;
}

static int decode_mode(struct rk_core *c, struct conv_cfg *k)
{
    uint32_t con1 = rk_reg(c, RK3588_CNA_CONV_CON1);
    uint32_t mode = RK_FIELD(con1, RK3588_CNA_CONV_CON1_CONV_MODE);
    if (RK_FIELD(con1, RK3588_CNA_CONV_CON1_IN_PRECISION)) {
        return refuse(c, "CNA.CONV_CON1.IN_PRECISION", RK_FIELD(con1, RK3588_CNA_CONV_CON1_IN_PRECISION));
    }
    if (RK_FIELD(con1, RK3588_CNA_CONV_CON1_PROC_PRECISION)) {
        return refuse(c, "CNA.CONV_CON1.PROC_PRECISION",
                      RK_FIELD(con1, RK3588_CNA_CONV_CON1_PROC_PRECISION));
    }
    if (RK_REG_FIELD(c, RK3588_CORE_MISC_CFG, PROC_PRECISION)) {
        return refuse(c, "CORE.MISC_CFG.PROC_PRECISION",
                      RK_REG_FIELD(c, RK3588_CORE_MISC_CFG, PROC_PRECISION));
    }
    if (mode != 0 && mode != 3) {
        return refuse(c, "CNA.CONV_CON1.CONV_MODE", mode);
    }
    if (RK_FIELD(con1, RK3588_CNA_CONV_CON1_DECONV)) {
        return refuse(c, "CNA.CONV_CON1.DECONV", 1);
    }
    uint32_t argb = RK_FIELD(con1, RK3588_CNA_CONV_CON1_ARGB_IN);
    if (argb != 0 && argb != RK_ARGB_ONE_CHANNEL) {
        return refuse(c, "CNA.CONV_CON1.ARGB_IN", argb);
    }
    k->one_channel = argb == RK_ARGB_ONE_CHANNEL;
    int rc = decode_cvt(c, k);
    if (rc) {
        return rc;
    }
    if (RK_REG_FIELD(c, RK3588_CNA_CONV_CON3, ATROUS_X_DILATION) ||
        RK_REG_FIELD(c, RK3588_CNA_CONV_CON3, ATROUS_Y_DILATION)) {
        return refuse(c, "CNA.CONV_CON3.ATROUS_*_DILATION", 1);
    }
    if (RK_REG_FIELD(c, RK3588_CNA_DCOMP_CTRL, DECOMP_CONTROL)) {
        return refuse(c, "CNA.DCOMP_CTRL.DECOMP_CONTROL",
                      RK_REG_FIELD(c, RK3588_CNA_DCOMP_CTRL, DECOMP_CONTROL));
    }
    k->dw = mode == 3;
    if (k->dw != (int)RK_REG_FIELD(c, RK3588_CORE_MISC_CFG, DW_EN)) {
        return rk_error(c, DLASIM_ERR_PROG, "CNA.CONV_CON1.CONV_MODE=%u but CORE.MISC_CFG.DW_EN=%u: "
                        "CNA and CORE disagree on depthwise", mode,
                        RK_REG_FIELD(c, RK3588_CORE_MISC_CFG, DW_EN));
    }
    return 0;
}

static int decode_geometry(struct rk_core *c, struct conv_cfg *k)
{
    k->w = RK_REG_FIELD(c, RK3588_CNA_DATA_SIZE0, DATAIN_WIDTH);
    k->h = RK_REG_FIELD(c, RK3588_CNA_DATA_SIZE0, DATAIN_HEIGHT);
    k->c = RK_REG_FIELD(c, RK3588_CNA_DATA_SIZE1, DATAIN_CHANNEL);
    k->kw = RK_REG_FIELD(c, RK3588_CNA_WEIGHT_SIZE2, WEIGHT_WIDTH);
    k->kh = RK_REG_FIELD(c, RK3588_CNA_WEIGHT_SIZE2, WEIGHT_HEIGHT);
    k->k = RK_REG_FIELD(c, RK3588_CNA_WEIGHT_SIZE2, WEIGHT_KERNELS);
    k->sx = RK_REG_FIELD(c, RK3588_CNA_CONV_CON3, CONV_X_STRIDE);
    k->sy = RK_REG_FIELD(c, RK3588_CNA_CONV_CON3, CONV_Y_STRIDE);
    k->pl = RK_REG_FIELD(c, RK3588_CNA_PAD_CON0, PAD_LEFT);
    k->pt = RK_REG_FIELD(c, RK3588_CNA_PAD_CON0, PAD_TOP);
    k->ow = RK_REG_FIELD(c, RK3588_CORE_DATAOUT_SIZE_0, DATAOUT_WIDTH) + 1;
    k->oh = RK_REG_FIELD(c, RK3588_CORE_DATAOUT_SIZE_0, DATAOUT_HEIGHT) + 1;
    k->ok = RK_REG_FIELD(c, RK3588_CORE_DATAOUT_SIZE_1, DATAOUT_CHANNEL) + 1;
    k->pad = (int8_t)(rk_reg(c, RK3588_CNA_PAD_CON1) & 0xffu);
    k->truncate = RK_REG_FIELD(c, RK3588_CORE_CLIP_TRUNCATE, CLIP_TRUNCATE);
    k->round_half_up = RK_REG_FIELD(c, RK3588_CORE_CLIP_TRUNCATE, ROUND_TYPE);
    k->feature = rk_reg(c, RK3588_CNA_FEATURE_DATA_ADDR);
    k->weights = rk_reg(c, RK3588_CNA_DCOMP_ADDR0);
    const char *zero = !k->w ? "CNA.DATA_SIZE0.DATAIN_WIDTH" : !k->h ? "CNA.DATA_SIZE0.DATAIN_HEIGHT"
                       : !k->c ? "CNA.DATA_SIZE1.DATAIN_CHANNEL" : !k->kw ? "CNA.WEIGHT_SIZE2.WEIGHT_WIDTH"
                       : !k->kh ? "CNA.WEIGHT_SIZE2.WEIGHT_HEIGHT" : !k->sx ? "CNA.CONV_CON3.CONV_X_STRIDE"
                       : !k->sy ? "CNA.CONV_CON3.CONV_Y_STRIDE" : NULL;
    if (zero) {
        return rk_error(c, DLASIM_ERR_PROG, "%s=0: sizes and strides are counts, at least 1", zero);
    }
    if (!k->dw && (k->ok < k->k || k->ok > align32(k->k, 32))) {
        return rk_error(c, DLASIM_ERR_PROG, "CNA.WEIGHT_SIZE2.WEIGHT_KERNELS=%u but "
                        "CORE.DATAOUT_SIZE_1.DATAOUT_CHANNEL=%u (+1): the output channels are the "
                        "kernels padded at most to their 32-kernel group", k->k, k->ok - 1);
    }
    if (k->dw && k->ok > align32(k->c, 64)) {
        return rk_error(c, DLASIM_ERR_PROG, "depthwise: CORE.DATAOUT_SIZE_1.DATAOUT_CHANNEL=%u (+1) "
                        "exceeds CNA.DATA_SIZE1.DATAIN_CHANNEL=%u padded to its 64-channel group",
                        k->ok - 1, k->c);
    }
    uint32_t cna_ow = RK_REG_FIELD(c, RK3588_CNA_DATA_SIZE2, DATAOUT_WIDTH);
    if (cna_ow != k->ow) {
        return rk_error(c, DLASIM_ERR_PROG, "CNA.DATA_SIZE2.DATAOUT_WIDTH=%u but "
                        "CORE.DATAOUT_SIZE_0.DATAOUT_WIDTH=%u (+1)", cna_ow, k->ow - 1);
    }
    if ((uint64_t)(k->ow - 1) * k->sx >= (uint64_t)k->w + k->pl ||
        (uint64_t)(k->oh - 1) * k->sy >= (uint64_t)k->h + k->pt) {
        return rk_error(c, DLASIM_ERR_PROG, "output %ux%u with stride %ux%u starts windows beyond "
                        "the %ux%u input (pad left %u, top %u)", k->ow, k->oh, k->sx, k->sy,
                        k->w, k->h, k->pl, k->pt);
    }
    /* The DPU's CPEND operand, when BS and OD are not bypassed. */
    uint32_t bs = rk_reg(c, RK3588_DPU_BS_CFG), ow_cfg = rk_reg(c, RK3588_DPU_BS_OW_CFG);
    k->ow_op = 0;
    if (!RK_FIELD(bs, RK3588_DPU_BS_CFG_BS_BYPASS) &&
        !RK_FIELD(ow_cfg, RK3588_DPU_BS_OW_CFG_OD_BYPASS)) {
        if (RK_FIELD(ow_cfg, RK3588_DPU_BS_OW_CFG_OW_SRC)) {
            return rk_error(c, DLASIM_ERR_UNSUPPORTED, "DPU.BS_OW_CFG.OW_SRC=1 (per-channel CPEND "
                            "operand) is not modelled");
        }
        k->ow_op = (int16_t)RK_REG_FIELD(c, RK3588_DPU_BS_OW_OP, OW_OP);
    }
    return 0;
}

/* One-channel input (ARGB_IN = 8): DATAIN_HEIGHT lines of DATAIN_WIDTH
 * bytes, channel 0 through the input converter, the other channels 0. */
static int load_one_channel(struct rk_core *c, const struct conv_cfg *k, uint32_t wp,
                            uint32_t hp, int8_t *in)
{
    uint64_t bytes = (uint64_t)k->w * k->h;
    uint8_t *raw = rk_scratch(c, 0, (size_t)bytes);
    if (!raw) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = rk_dma_read(c, "CNA feature", k->feature, raw, (size_t)bytes);
    if (rc) {
        return rc;
    }
    int8_t lut[256];
    for (unsigned x = 0; x < 256; x++) {
        int64_t v = k->cvt_signed ? (int8_t)x : (int64_t)x;
        if (k->cvt) {
            v = rk_round_shift((v + k->cvt_offset) * (int64_t)k->cvt_scale, k->cvt_truncate,
                               k->cvt_half_up);
        }
        lut[x] = (int8_t)rk_sat(v, -128, 127);
    }
    size_t plane = (size_t)wp * hp;
    for (uint32_t ch = 1; ch < k->c; ch++) {
        for (uint32_t y = 0; y < k->h; y++) {
            memset(in + ch * plane + (size_t)(k->pt + y) * wp + k->pl, 0, k->w);
        }
    }
    for (uint32_t y = 0; y < k->h; y++) {
        int8_t *dst = in + (size_t)(k->pt + y) * wp + k->pl;
        const uint8_t *src = raw + (size_t)y * k->w;
        for (uint32_t x = 0; x < k->w; x++) {
            dst[x] = lut[src[x]];
        }
    }
    return 0;
}

/* Padded planar input [c][hp][wp] from the NC1HWC2 feature cube. */
static int load_feature(struct rk_core *c, const struct conv_cfg *k, uint32_t wp, uint32_t hp,
                        int8_t **out)
{
    uint64_t surfs = (k->c + 15) / 16;
    uint64_t bytes = surfs * k->h * k->w * 16;
    uint64_t plane = (uint64_t)wp * hp;
    if (bytes > MAX_HOST_BYTES || plane * k->c > MAX_HOST_BYTES) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "CNA: a %ux%ux%u input is beyond the model's "
                        "host limit", k->w, k->h, k->c);
    }
    int8_t *in = rk_scratch(c, 1, (size_t)(plane * k->c));
    if (!in) {
        return DLASIM_ERR_NOMEM;
    }
    memset(in, k->pad, (size_t)(plane * k->c));
    if (k->one_channel) {
        *out = in;
        return load_one_channel(c, k, wp, hp, in);
    }
    uint8_t *raw = rk_scratch(c, 0, (size_t)bytes);
    if (!raw) {
        return DLASIM_ERR_NOMEM;
    }
    int rc = rk_dma_read(c, "CNA feature", k->feature, raw, (size_t)bytes);
    if (rc) {
        return rc;
    }
    /* Each input line of atoms becomes one row per channel: the byte
     * transpose NVDLA's CDMA uses (src/arith/atoms.h). */
    enum dla_lanes_isa isa = dla_lanes_best();
    for (uint32_t sf = 0; sf * 16 < k->c; sf++) {
        uint32_t lanes = k->c - sf * 16 < 16 ? k->c - sf * 16 : 16;
        const uint8_t *src = raw + (size_t)sf * k->h * k->w * 16;
        uint8_t *dst0 = (uint8_t *)in + (size_t)sf * 16 * plane + (size_t)k->pt * wp + k->pl;
        for (uint32_t y = 0; y < k->h; y++) {
            dla_transpose_bytes(isa, src + (size_t)y * k->w * 16, 16, k->w, lanes,
                                dst0 + (size_t)y * wp, (size_t)plane);
        }
    }
    *out = in;
    return 0;
}

/* Planar weights [ok][c][ky][kx] (direct; kernels beyond WEIGHT_KERNELS
 * zero) or [c][ky][kx] (depthwise). */
static int load_weights(struct rk_core *c, const struct conv_cfg *k, int8_t **out)
{
    uint64_t kn = k->dw ? 1 : k->k, taps = (uint64_t)k->kw * k->kh;
    uint64_t bytes = kn * k->c * taps;
    if (bytes > MAX_HOST_BYTES) {
        return rk_error(c, DLASIM_ERR_UNSUPPORTED, "CNA: %llu weight bytes are beyond the model's "
                        "host limit", (unsigned long long)bytes);
    }
    const uint32_t kb = k->dw ? 1 : 32, cb = k->dw ? 64 : 32;
    const size_t taps32 = (size_t)taps;
    /* room for the kernels' whole 32-kernel groups, so the buffer (and the
     * cached decode in it) does not move when only DATAOUT_CHANNEL changes */
    uint64_t room = k->dw ? bytes : (uint64_t)align32(k->k, 32) * k->c * taps;
    uint8_t *raw = rk_scratch(c, 2, (size_t)bytes);
    int8_t *wt = rk_scratch(c, 3, (size_t)room);
    uint8_t *prev = rk_scratch(c, 4, (size_t)bytes);
    if (!raw || !wt || !prev) {
        rk_weight_cache(c)->valid = 0;
        return DLASIM_ERR_NOMEM;
    }
    int rc = rk_dma_read(c, "CNA weight", k->weights, raw, (size_t)bytes);
    if (rc) {
        return rc;
    }
    /* The same bytes read the same way as last time: the decode holds. */
    struct rk_wcache *wc = rk_weight_cache(c);
    struct rk_wcache key = {1, k->k, k->c, k->kh, k->kw, (uint32_t)k->dw, (size_t)bytes};
    if (!k->dw && k->ok > k->k) {
        memset(wt + bytes, 0, (size_t)((k->ok - k->k) * k->c * taps));
    }
    if (wc->valid && !memcmp(wc, &key, sizeof(key)) && !memcmp(prev, raw, (size_t)bytes)) {
        *out = wt;
        return 0;
    }
    /* Block group by block group (at most 32 x 32 x taps bytes), written
     * destination-major: each kernel's channels and taps in order. */
    const uint8_t *grp = raw;
    for (uint32_t kg = 0; kg < kn; kg += kb) {
        uint32_t k2n = (uint32_t)(kn - kg < kb ? kn - kg : kb);
        for (uint32_t cg = 0; cg < k->c; cg += cb) {
            uint32_t c2n = k->c - cg < cb ? k->c - cg : cb;
            size_t tap_stride = (size_t)k2n * c2n;
            for (uint32_t k2 = 0; k2 < k2n; k2++) {
                for (uint32_t c2 = 0; c2 < c2n; c2++) {
                    int8_t *dst = wt + ((size_t)(kg + k2) * k->c + cg + c2) * taps32;
                    const uint8_t *src = grp + (size_t)k2 * c2n + c2;
                    for (size_t t = 0; t < taps32; t++) {
                        dst[t] = (int8_t)src[t * tap_stride];
                    }
                }
            }
            grp += tap_stride * taps32;
        }
    }
    memcpy(prev, raw, (size_t)bytes);
    *wc = key;
    *out = wt;
    return 0;
}

static int convolve(struct rk_core *c, const struct conv_cfg *k, const int8_t *in, uint32_t wp,
                    uint32_t hp, const int8_t *wt, int32_t *acc)
{
    struct dla_conv_geom g = {wp, hp, k->c, k->ow, k->oh, k->ok, k->kw, k->kh, k->sx, k->sy, 1, 1};
    if (!k->dw) {
        return dla_conv_s8(&g, in, wt, acc, rk_threads(c));
    }
    /* Depthwise: one single-channel convolution per channel. */
    g.in_c = 1;
    g.out_k = 1;
    size_t plane = (size_t)wp * hp, taps = (size_t)k->kw * k->kh, out = (size_t)k->ow * k->oh;
    uint32_t real = k->ok < k->c ? k->ok : k->c;
    for (uint32_t ch = 0; ch < real; ch++) {
        int rc = dla_conv_s8(&g, in + ch * plane, wt + ch * taps, acc + ch * out, rk_threads(c));
        if (rc) {
            return rc;
        }
    }
    memset(acc + (size_t)real * out, 0, (size_t)(k->ok - real) * out * sizeof(int32_t));
    return 0;
}

/* acc += OW_OP x (sum of each input window): a convolution with all-ones kernels. */
static int add_cpend(struct rk_core *c, const struct conv_cfg *k, const int8_t *in, uint32_t wp,
                     uint32_t hp, int32_t *acc)
{
    size_t taps = (size_t)k->kw * k->kh, out = (size_t)k->ow * k->oh;
    uint32_t chans = k->dw ? (k->ok < k->c ? k->ok : k->c) : 1;
    int8_t *ones = malloc(taps * (k->dw ? 1 : k->c));
    int32_t *sum = malloc(out * chans * sizeof(int32_t));
    if (!ones || !sum) {
        free(ones);
        free(sum);
        return DLASIM_ERR_NOMEM;
    }
    memset(ones, 1, taps * (k->dw ? 1 : k->c));
    int rc = 0;
    if (k->dw) {
        struct dla_conv_geom g = {wp, hp, 1, k->ow, k->oh, 1, k->kw, k->kh, k->sx, k->sy, 1, 1};
        for (uint32_t ch = 0; ch < chans && !rc; ch++) {
            rc = dla_conv_s8(&g, in + ch * (size_t)wp * hp, ones, sum + ch * out, rk_threads(c));
        }
    } else {
        struct dla_conv_geom g = {wp, hp, k->c, k->ow, k->oh, 1, k->kw, k->kh, k->sx, k->sy, 1, 1};
        rc = dla_conv_s8(&g, in, ones, sum, rk_threads(c));
    }
    for (uint32_t ko = 0; ko < (k->dw ? chans : k->ok) && !rc; ko++) {
        const int32_t *s = sum + (k->dw ? ko * out : 0);
        int32_t *a = acc + ko * out;
        for (size_t i = 0; i < out; i++) {
            a[i] = (int32_t)((uint32_t)a[i] + (uint32_t)(k->ow_op * s[i]));
        }
    }
    free(ones);
    free(sum);
    return rc;
}

/* What the task's CNA and CORE move and compute, by the device core's rules
 * (src/sim/core/budget.h): the feature cube and the weights (each one
 * contiguous run) and the MACs; both runs must stay in the 32-bit space. */
static int check_budget(struct rk_core *c, const struct conv_cfg *k)
{
    struct dla_strided in = {0}, wt = {0};
    in.base = k->feature;
    in.line_bytes = (uint64_t)(k->c + 15) / 16 * k->h * k->w * 16;
    wt.base = k->weights;
    wt.line_bytes = (uint64_t)(k->dw ? 1 : k->k) * k->c * k->kw * k->kh;
    in.lines = in.surfaces = in.batches = wt.lines = wt.surfaces = wt.batches = 1;
    struct dla_work w;
    dla_work_init(&w, "CNA/CORE");
    dla_work_read(&w, &in);
    dla_work_read(&w, &wt);
    dla_work_ops(&w, (uint64_t)k->ow * k->oh * k->ok * k->kw * k->kh * (k->dw ? 1 : k->c));
    int rc = rk_work_check(c, &w);
    if (!rc) {
        rc = rk_extent_check(c, "CNA", "feature cube", 0, &in);
    }
    if (!rc) {
        rc = rk_extent_check(c, "CNA", "weights", 0, &wt);
    }
    return rc;
}

/* The layer observer's view of the decoded convolution (a depthwise
 * kernel has one channel; RK3588 has no dilation; the CBUF split is not
 * modelled, so no banks are reported). */
static void describe(const struct conv_cfg *k, struct dlasim_layer_info *l)
{
    l->out_w = k->ow;
    l->out_h = k->oh;
    l->out_k = k->ok;
    l->in_c = k->dw ? 1 : k->c;
    l->k_w = k->kw;
    l->k_h = k->kh;
    l->stride_x = k->sx;
    l->stride_y = k->sy;
    l->dil_x = l->dil_y = 1;
    l->batches = 1;
    l->data_banks = l->weight_banks = 0;
    l->macs = (uint64_t)k->ow * k->oh * k->ok * k->kw * k->kh * (k->dw ? 1 : k->c);
}

int rk_conv_run(struct rk_core *c, struct rk_cube *out, struct dlasim_layer_info *info)
{
    struct conv_cfg k;
    memset(&k, 0, sizeof(k));
    int rc = decode_mode(c, &k);
    if (!rc) {
        rc = decode_geometry(c, &k);
    }
    if (!rc && info) {
        describe(&k, info);
    }
    if (!rc) {
        rc = check_budget(c, &k);
    }
    if (rc) {
        return rc;
    }
    uint32_t wp = (k.ow - 1) * k.sx + k.kw, hp = (k.oh - 1) * k.sy + k.kh;
    wp = wp > k.w + k.pl ? wp : k.w + k.pl;
    hp = hp > k.h + k.pt ? hp : k.h + k.pt;
    int8_t *in = NULL, *wt = NULL;
    rc = load_feature(c, &k, wp, hp, &in);
    if (!rc) {
        rc = load_weights(c, &k, &wt);
    }
    size_t n = (size_t)k.ow * k.oh * k.ok;
    out->v = rc ? NULL : rk_scratch(c, 5, (n ? n : 1) * sizeof(int32_t));
    out->borrowed = 1;
    if (!rc && !out->v) {
        rc = DLASIM_ERR_NOMEM;
    }
    if (!rc) {
        out->w = k.ow;
        out->h = k.oh;
        out->c = k.ok;
        rc = convolve(c, &k, in, wp, hp, wt, out->v);
    }
    if (!rc && k.truncate && !k.ow_op) {
        out->shift = k.truncate; /* applied by the DPU in its pass over the cube */
        out->shift_half_up = (int)k.round_half_up;
    } else if (!rc && k.truncate) {
        int32_t *v = out->v;
        for (size_t i = 0; i < n; i++) {
            v[i] = rk_round_shift32(v[i], k.truncate, (int)k.round_half_up);
        }
    }
    if (!rc && k.ow_op) {
        rc = add_cpend(c, &k, in, wp, hp, out->v);
    }
    return rc; /* in and wt are the core's scratch buffers */
}
