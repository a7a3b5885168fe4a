/*
 * RK3588 regcmd task lists (include/dlasim/rk3588.h): building them as
 * Mesa's rocket driver does (rkt_regcmd.c emit(): target = block | 1, the
 * absolute in-core offset; rkt_ml.c: a four-entry tail per task, tasks
 * 64-byte aligned) and kicking them as the mainline kernel driver does
 * (drivers/accel/rocket/rocket_job.c rocket_job_hw_submit).  Only the public
 * API and the generated register constants are used here.
 */
#include <stdlib.h>
#include <string.h>

#include "dlasim/rk3588.h"
#include "regs/regdb.h"

#define TAIL 4u
#define TASK_ALIGN 64u

/* Regcmd target bit of each block (TRM pc_register_amounts): a register
 * database fact (regdb/rk3588.xml, domain `regcmd`); 0 for DDMA, SDMA and
 * GLOBAL, which have none. */
static uint16_t block_target(unsigned unit)
{
    return unit < RK3588_UNIT_COUNT ? rk3588_units[unit].regcmd_target : 0;
}

void dlasim_rk_regcmd_free(struct dlasim_rk_regcmd *l)
{
    if (!l) {
        return;
    }
    free(l->e);
    free(l->task);
    memset(l, 0, sizeof(*l));
}

static int push(struct dlasim_rk_regcmd *l, uint64_t e)
{
    if (l->failed) {
        return DLASIM_ERR_NOMEM;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        uint64_t *p = realloc(l->e, cap * sizeof(*p));
        if (!p) {
            l->failed = 1;
            return DLASIM_ERR_NOMEM;
        }
        l->e = p;
        l->cap = cap;
    }
    l->e[l->n++] = e;
    return 0;
}

int dlasim_rk_emit_raw(struct dlasim_rk_regcmd *l, uint16_t target, uint16_t reg, uint32_t value)
{
    if (!l) {
        return DLASIM_ERR_INVAL;
    }
    return push(l, (uint64_t)target << 48 | (uint64_t)value << 16 | reg);
}

int dlasim_rk_emit(struct dlasim_rk_regcmd *l, uint32_t reg, uint32_t value)
{
    uint32_t window = reg >> 12;
    if (!l || reg > 0xffffu || window >= rk3588_db.n_windows || rk3588_db.window_unit[window] < 0) {
        return DLASIM_ERR_INVAL;
    }
    uint16_t t = block_target((unsigned)rk3588_db.window_unit[window]);
    if (!t) {
        return DLASIM_ERR_INVAL;
    }
    return dlasim_rk_emit_raw(l, (uint16_t)(t | 1u), (uint16_t)reg, value);
}

int dlasim_rk_end_task(struct dlasim_rk_regcmd *l, uint32_t enable_mask)
{
    if (!l) {
        return DLASIM_ERR_INVAL;
    }
    if (l->failed) {
        return DLASIM_ERR_NOMEM;
    }
    if (l->ntasks == l->task_cap) {
        size_t cap = l->task_cap ? l->task_cap * 2 : 16;
        struct dlasim_rk_task_desc *p = realloc(l->task, cap * sizeof(*p));
        if (!p) {
            l->failed = 1;
            return DLASIM_ERR_NOMEM;
        }
        l->task = p;
        l->task_cap = cap;
    }
    l->task[l->ntasks].first = l->open_first;
    l->task[l->ntasks].n = l->n - l->open_first;
    l->task[l->ntasks].enable_mask = enable_mask;
    l->ntasks++;
    l->open_first = l->n;
    return 0;
}

size_t dlasim_rk_task_entries(const struct dlasim_rk_regcmd *l, size_t i)
{
    return l && i < l->ntasks ? l->task[i].n + TAIL : 0;
}

/* Bytes of task i laid out: its entries rounded up to even (the PC fetches
 * pairs), then up to the 64-byte alignment of the next task. */
static size_t task_bytes(const struct dlasim_rk_regcmd *l, size_t i)
{
    size_t n = dlasim_rk_task_entries(l, i);
    size_t bytes = (n + (n & 1u)) * 8;
    return (bytes + TASK_ALIGN - 1) / TASK_ALIGN * TASK_ALIGN;
}

size_t dlasim_rk_layout_size(const struct dlasim_rk_regcmd *l)
{
    size_t total = 0;
    for (size_t i = 0; l && i < l->ntasks; i++) {
        total += task_bytes(l, i);
    }
    return total;
}

uint32_t dlasim_rk_task_addr(const struct dlasim_rk_regcmd *l, uint32_t addr, size_t i)
{
    size_t off = 0;
    for (size_t k = 0; l && k < i && k < l->ntasks; k++) {
        off += task_bytes(l, k);
    }
    return addr + (uint32_t)off;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (unsigned b = 0; b < 8; b++) {
        p[b] = (uint8_t)(v >> (8 * b));
    }
}

static uint64_t entry(uint16_t target, uint16_t reg, uint32_t value)
{
    return (uint64_t)target << 48 | (uint64_t)value << 16 | reg;
}

/* The kernel's REGISTER_AMOUNTS for a task of n entries. */
static uint32_t amount_of(size_t n)
{
    return (uint32_t)((n + 1) / 2 - 1);
}

int dlasim_rk_layout(const struct dlasim_rk_regcmd *l, uint32_t addr, void *buf, size_t buflen)
{
    if (!l || !buf || l->failed || addr % TASK_ALIGN || buflen < dlasim_rk_layout_size(l)) {
        return DLASIM_ERR_INVAL;
    }
    uint8_t *out = buf;
    memset(out, 0, dlasim_rk_layout_size(l));
    size_t off = 0;
    for (size_t i = 0; i < l->ntasks; i++) {
        const struct dlasim_rk_task_desc *t = &l->task[i];
        uint8_t *p = out + off;
        for (size_t k = 0; k < t->n; k++) {
            put64(p + 8 * k, l->e[t->first + k]);
        }
        p += 8 * t->n;
        size_t next = off + task_bytes(l, i);
        const uint16_t pc = (uint16_t)(block_target(RK3588_UNIT_PC) | 1u);
        if (i + 1 < l->ntasks) {
            put64(p, entry(pc, RK3588_PC_BASE_ADDRESS, addr + (uint32_t)next));
            put64(p + 8, entry(pc, RK3588_PC_REGISTER_AMOUNTS,
                               amount_of(dlasim_rk_task_entries(l, i + 1))));
        } else {
            put64(p, 0); /* the last task links to nothing (Mesa: a bare 0 entry) */
            put64(p + 8, entry(pc, RK3588_PC_REGISTER_AMOUNTS, 0));
        }
        put64(p + 16, entry(rk3588_db.regcmd_marker, 0, 0));
        put64(p + 24, entry(rk3588_db.regcmd_op_en, RK3588_PC_OPERATION_ENABLE, t->enable_mask));
        off = next;
    }
    return 0;
}

static int pc_write(struct dlasim_dev *dev, unsigned core, uint32_t reg, uint32_t v)
{
    return dlasim_csb_write(dev, core * DLASIM_RK_CORE_STRIDE + reg, v);
}

int dlasim_rk_kick(struct dlasim_dev *dev, unsigned core, uint32_t regcmd, size_t count,
                   unsigned task_number, uint32_t int_mask)
{
    if (!dev || core >= DLASIM_RK_CORES || count == 0 || task_number == 0 || task_number > 0xfff) {
        return DLASIM_ERR_INVAL;
    }
    /* S_POINTER: pointer_pp_en | executer_pp_en | pointer_pp_mode, plus the
     * core index in bits 28-29 (reserved in the TRM; rknpu and rocket write it). */
    uint32_t pp = RK3588_CNA_S_POINTER_POINTER_PP_EN__MASK |
                  RK3588_CNA_S_POINTER_EXECUTER_PP_EN__MASK |
                  RK3588_CNA_S_POINTER_POINTER_PP_MODE__MASK | 0x10000000u * core;
    int rc = pc_write(dev, core, RK3588_PC_BASE_ADDRESS, 1);
    rc = rc ? rc : pc_write(dev, core, RK3588_CNA_S_POINTER, pp);
    rc = rc ? rc : pc_write(dev, core, RK3588_CORE_S_POINTER, pp);
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_BASE_ADDRESS, regcmd);
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_REGISTER_AMOUNTS, amount_of(count));
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_INTERRUPT_MASK, int_mask);
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_INTERRUPT_CLEAR, int_mask);
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_TASK_CON,
                            (1u << 14) | RK3588_PC_TASK_CON_TASK_COUNT_CLEAR__MASK |
                                RK3588_PC_TASK_CON_TASK_PP_EN__MASK | task_number);
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_TASK_DMA_BASE_ADDR, 0);
    rc = rc ? rc : pc_write(dev, core, RK3588_PC_OPERATION_ENABLE, 1);
    return rc;
}

int dlasim_rk_ack(struct dlasim_dev *dev, unsigned core)
{
    int rc = pc_write(dev, core, RK3588_PC_OPERATION_ENABLE, 0);
    return rc ? rc : pc_write(dev, core, RK3588_PC_INTERRUPT_CLEAR, 0x1ffff);
}

int dlasim_rk_reg_lookup(const char *name, uint32_t *offset)
{
    const struct nvdla_reg_desc *r = name && offset ? regdb_reg_by_name(&rk3588_db, name) : NULL;
    if (!r) {
        return DLASIM_ERR_INVAL;
    }
    *offset = r->addr;
    return 0;
}

const char *dlasim_rk_reg_name(uint32_t offset, char *buf, size_t buflen)
{
    return buf && buflen ? regdb_reg_name(&rk3588_db, offset, buf, buflen) : NULL;
}

/* ---- layouts ------------------------------------------------------------------------- */

size_t dlasim_rk_feature_bytes(uint32_t w, uint32_t h, uint32_t c, unsigned bpe)
{
    unsigned c2 = 16 / bpe;
    return (size_t)((c + c2 - 1) / c2) * h * w * 16;
}

size_t dlasim_rk_feature_offset(uint32_t w, uint32_t h, uint32_t ch, uint32_t y, uint32_t x,
                                unsigned bpe)
{
    unsigned c2 = 16 / bpe;
    return (size_t)(ch / c2) * h * w * 16 + ((size_t)y * w + x) * 16 + (ch % c2) * bpe;
}

size_t dlasim_rk_weight_bytes(uint32_t k, uint32_t c, uint32_t kh, uint32_t kw, int depthwise)
{
    return (size_t)(depthwise ? 1 : k) * c * kh * kw;
}

size_t dlasim_rk_weight_offset(uint32_t k, uint32_t c, uint32_t ky, uint32_t kx, uint32_t nk,
                               uint32_t nc, uint32_t kh, uint32_t kw, int depthwise)
{
    uint32_t kb = depthwise ? 1 : 32, cb = depthwise ? 64 : 32;
    if (depthwise) {
        k = 0;
        nk = 1;
    }
    uint32_t kg = k / kb * kb, cg = c / cb * cb;
    uint32_t k2n = nk - kg < kb ? nk - kg : kb, c2n = nc - cg < cb ? nc - cg : cb;
    size_t off = (size_t)kg * nc * kh * kw;             /* earlier kernel groups */
    off += (size_t)cg * k2n * kh * kw;                  /* earlier channel groups */
    off += ((size_t)ky * kw + kx) * k2n * c2n;          /* earlier taps */
    return off + (size_t)(k - kg) * c2n + (c - cg);
}

/* ---- task emitters ------------------------------------------------------------------- */

#define E(reg, v)                                  \
    do {                                           \
        int e_rc_ = dlasim_rk_emit(l, (reg), (v)); \
        if (e_rc_) {                               \
            return e_rc_;                          \
        }                                          \
    } while (0)

#define PP_MESA 0xeu /* pointer_pp_en | executer_pp_en | pointer_pp_mode */

static int emit_pool_regs(struct dlasim_rk_regcmd *l, const struct dlasim_rk_pool_desc *p,
                          int fused)
{
    E(RK3588_PPU_S_POINTER, PP_MESA);
    if (!fused) {
        E(RK3588_PPU_RDMA_S_POINTER, PP_MESA);
    }
    E(RK3588_PPU_DATA_CUBE_IN_WIDTH, p->in_w - 1);
    E(RK3588_PPU_DATA_CUBE_IN_HEIGHT, p->in_h - 1);
    E(RK3588_PPU_DATA_CUBE_IN_CHANNEL, p->c - 1);
    E(RK3588_PPU_DATA_CUBE_OUT_WIDTH, p->out_w - 1);
    E(RK3588_PPU_DATA_CUBE_OUT_HEIGHT, p->out_h - 1);
    E(RK3588_PPU_DATA_CUBE_OUT_CHANNEL, p->c - 1);
    E(RK3588_PPU_OPERATION_MODE_CFG, RK3588_PPU_OPERATION_MODE_CFG_FLYING_MODE(fused ? 0 : 1) |
                                         RK3588_PPU_OPERATION_MODE_CFG_POOLING_METHOD(p->method));
    E(RK3588_PPU_POOLING_KERNEL_CFG,
      RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH(p->k_w - 1) |
          RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT(p->k_h - 1) |
          RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH(p->stride_x - 1) |
          RK3588_PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT(p->stride_y - 1));
    E(RK3588_PPU_RECIP_KERNEL_WIDTH, p->recip_w);
    E(RK3588_PPU_RECIP_KERNEL_HEIGHT, p->recip_h);
    E(RK3588_PPU_POOLING_PADDING_CFG, RK3588_PPU_POOLING_PADDING_CFG_PAD_LEFT(p->pad_left) |
                                          RK3588_PPU_POOLING_PADDING_CFG_PAD_TOP(p->pad_top) |
                                          RK3588_PPU_POOLING_PADDING_CFG_PAD_RIGHT(p->pad_right) |
                                          RK3588_PPU_POOLING_PADDING_CFG_PAD_BOTTOM(p->pad_bottom));
    E(RK3588_PPU_PADDING_VALUE_1_CFG, (uint32_t)p->pad_value);
    E(RK3588_PPU_PADDING_VALUE_2_CFG, p->pad_value < 0 ? 7u : 0u);
    E(RK3588_PPU_DST_BASE_ADDR, p->output);
    E(RK3588_PPU_DST_SURF_STRIDE, p->out_w * p->out_h * 16);
    E(RK3588_PPU_DATA_FORMAT, RK3588_PPU_DATA_FORMAT_INDEX_ADD(p->out_w * p->out_h));
    E(RK3588_PPU_MISC_CTRL, RK3588_PPU_MISC_CTRL_BURST_LEN(15));
    if (!fused) {
        E(RK3588_PPU_RDMA_CUBE_IN_WIDTH, p->in_w - 1);
        E(RK3588_PPU_RDMA_CUBE_IN_HEIGHT, p->in_h - 1);
        E(RK3588_PPU_RDMA_CUBE_IN_CHANNEL, p->c - 1);
        E(RK3588_PPU_RDMA_SRC_BASE_ADDR, p->input);
        E(RK3588_PPU_RDMA_SRC_LINE_STRIDE, p->in_w * 16);
        E(RK3588_PPU_RDMA_SRC_SURF_STRIDE, p->in_w * p->in_h * 16);
        E(RK3588_PPU_RDMA_DATA_FORMAT, 0);
    }
    return 0;
}

int dlasim_rk_emit_pool(struct dlasim_rk_regcmd *l, const struct dlasim_rk_pool_desc *p)
{
    if (!l || !p) {
        return DLASIM_ERR_INVAL;
    }
    int rc = emit_pool_regs(l, p, 0);
    return rc ? rc : dlasim_rk_end_task(l, DLASIM_RK_EN_PPU | DLASIM_RK_EN_PPU_RDMA);
}

static int emit_cna_core(struct dlasim_rk_regcmd *l, const struct dlasim_rk_conv *p, uint32_t oc)
{
    uint32_t dw = p->depthwise ? 1u : 0u;
    E(RK3588_CNA_CONV_CON1, RK3588_CNA_CONV_CON1_CONV_MODE(dw ? 3 : 0));
    E(RK3588_CNA_CONV_CON2, RK3588_CNA_CONV_CON2_FEATURE_GRAINS(p->k_h + p->stride_y + 1));
    E(RK3588_CNA_CONV_CON3, RK3588_CNA_CONV_CON3_CONV_X_STRIDE(p->stride_x) |
                                RK3588_CNA_CONV_CON3_CONV_Y_STRIDE(p->stride_y));
    E(RK3588_CNA_DATA_SIZE0, RK3588_CNA_DATA_SIZE0_DATAIN_WIDTH(p->in_w) |
                                 RK3588_CNA_DATA_SIZE0_DATAIN_HEIGHT(p->in_h));
    E(RK3588_CNA_DATA_SIZE1, RK3588_CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL(p->in_c - 1) |
                                 RK3588_CNA_DATA_SIZE1_DATAIN_CHANNEL(p->in_c));
    E(RK3588_CNA_DATA_SIZE2, RK3588_CNA_DATA_SIZE2_DATAOUT_WIDTH(p->out_w));
    E(RK3588_CNA_DATA_SIZE3, RK3588_CNA_DATA_SIZE3_DATAOUT_ATOMICS(p->out_w * p->out_h));
    E(RK3588_CNA_WEIGHT_SIZE0, (uint32_t)dlasim_rk_weight_bytes(p->kernels, p->in_c, p->k_h,
                                                                 p->k_w, p->depthwise));
    E(RK3588_CNA_WEIGHT_SIZE1, p->k_w * p->k_h * p->in_c);
    E(RK3588_CNA_WEIGHT_SIZE2, RK3588_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH(p->k_w) |
                                   RK3588_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT(p->k_h) |
                                   RK3588_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS(dw ? 1 : p->kernels));
    E(RK3588_CNA_CVT_CON0, RK3588_CNA_CVT_CON0_DATA_SIGN(1) | RK3588_CNA_CVT_CON0_CVT_TYPE(1) |
                               RK3588_CNA_CVT_CON0_CVT_BYPASS(1));
    E(RK3588_CNA_PAD_CON0, RK3588_CNA_PAD_CON0_PAD_LEFT(p->pad_left) |
                               RK3588_CNA_PAD_CON0_PAD_TOP(p->pad_top));
    E(RK3588_CNA_FEATURE_DATA_ADDR, p->input);
    E(RK3588_CNA_DMA_CON0, RK3588_CNA_DMA_CON0_WEIGHT_BURST_LEN(15) |
                               RK3588_CNA_DMA_CON0_DATA_BURST_LEN(15));
    E(RK3588_CNA_DMA_CON1, p->in_w * 4);
    E(RK3588_CNA_DCOMP_ADDR0, p->weights);
    E(RK3588_CNA_PAD_CON1, (uint32_t)(int32_t)p->pad_value);
    E(RK3588_CORE_MISC_CFG, RK3588_CORE_MISC_CFG_QD_EN(1) | RK3588_CORE_MISC_CFG_DW_EN(dw));
    E(RK3588_CORE_DATAOUT_SIZE_0, RK3588_CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT(p->out_h - 1) |
                                      RK3588_CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH(p->out_w - 1));
    E(RK3588_CORE_DATAOUT_SIZE_1, RK3588_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL(oc - 1));
    E(RK3588_CORE_CLIP_TRUNCATE, RK3588_CORE_CLIP_TRUNCATE_CLIP_TRUNCATE(p->clip_truncate) |
                                     RK3588_CORE_CLIP_TRUNCATE_ROUND_TYPE(p->clip_round_half_up));
    return 0;
}

static int emit_dpu(struct dlasim_rk_regcmd *l, const struct dlasim_rk_conv *p, uint32_t oc)
{
    uint32_t plane = p->out_w * p->out_h;
    E(RK3588_DPU_S_POINTER, PP_MESA);
    E(RK3588_DPU_RDMA_S_POINTER, PP_MESA);
    E(RK3588_DPU_FEATURE_MODE_CFG,
      RK3588_DPU_FEATURE_MODE_CFG_BURST_LEN(15) |
          RK3588_DPU_FEATURE_MODE_CFG_OUTPUT_MODE((p->to_memory ? 2u : 0u) | (p->to_ppu ? 1u : 0u)) |
          RK3588_DPU_FEATURE_MODE_CFG_CONV_MODE(p->depthwise ? 3 : 0));
    E(RK3588_DPU_DATA_FORMAT, RK3588_DPU_DATA_FORMAT_OUT_PRECISION(p->out_int32 ? 4 : 0));
    E(RK3588_DPU_DST_BASE_ADDR, p->output);
    E(RK3588_DPU_DST_SURF_STRIDE, RK3588_DPU_DST_SURF_STRIDE_DST_SURF_STRIDE(plane));
    E(RK3588_DPU_DATA_CUBE_WIDTH, p->out_w - 1);
    E(RK3588_DPU_DATA_CUBE_HEIGHT, p->out_h - 1);
    E(RK3588_DPU_DATA_CUBE_CHANNEL, RK3588_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL(oc - 1) |
                                        RK3588_DPU_DATA_CUBE_CHANNEL_CHANNEL(oc - 1));
    int bs = p->bias || p->relu || p->ow_op;
    E(RK3588_DPU_BS_CFG, bs ? RK3588_DPU_BS_CFG_BS_ALU_ALGO(2) |
                              RK3588_DPU_BS_CFG_BS_ALU_SRC(1) |
                              RK3588_DPU_BS_CFG_BS_ALU_BYPASS(p->bias ? 0 : 1) |
                              RK3588_DPU_BS_CFG_BS_RELU_BYPASS(p->relu ? 0 : 1) |
                              RK3588_DPU_BS_CFG_BS_MUL_BYPASS(1)
                            : RK3588_DPU_BS_CFG_BS_BYPASS(1));
    E(RK3588_DPU_BS_OW_CFG, RK3588_DPU_BS_OW_CFG_SIZE_E_2(p->depthwise ? 3 : 1) |
                                RK3588_DPU_BS_OW_CFG_SIZE_E_1(p->depthwise ? 3 : 1) |
                                RK3588_DPU_BS_OW_CFG_SIZE_E_0(p->depthwise ? 3 : 1) |
                                RK3588_DPU_BS_OW_CFG_OD_BYPASS(p->ow_op ? 0 : 1));
    E(RK3588_DPU_BS_OW_OP, (uint16_t)p->ow_op);
    E(RK3588_DPU_WDMA_SIZE_0, RK3588_DPU_WDMA_SIZE_0_CHANNEL_WDMA(oc - 1));
    E(RK3588_DPU_WDMA_SIZE_1, RK3588_DPU_WDMA_SIZE_1_HEIGHT_WDMA(p->out_h - 1) |
                                  RK3588_DPU_WDMA_SIZE_1_WIDTH_WDMA(p->out_w - 1));
    E(RK3588_DPU_BN_CFG, RK3588_DPU_BN_CFG_BN_BYPASS(1) | RK3588_DPU_BN_CFG_BN_ALU_BYPASS(1) |
                             RK3588_DPU_BN_CFG_BN_MUL_BYPASS(1) |
                             RK3588_DPU_BN_CFG_BN_RELU_BYPASS(1));
    E(RK3588_DPU_EW_CFG, RK3588_DPU_EW_CFG_EW_BYPASS(1) | RK3588_DPU_EW_CFG_EW_OP_BYPASS(1) |
                             RK3588_DPU_EW_CFG_EW_LUT_BYPASS(1) |
                             RK3588_DPU_EW_CFG_EW_RELU_BYPASS(1));
    E(RK3588_DPU_OUT_CVT_OFFSET, p->out_int32 ? 0u : (uint32_t)p->cvt_offset);
    E(RK3588_DPU_OUT_CVT_SCALE, p->out_int32 ? 1u : p->cvt_scale);
    E(RK3588_DPU_OUT_CVT_SHIFT, p->out_int32 ? 0u : p->cvt_shift);
    E(RK3588_DPU_SURFACE_ADD, plane * (p->out_int32 ? 4u : 1u) * 16);
    E(RK3588_DPU_RDMA_DATA_CUBE_WIDTH, p->out_w - 1);
    E(RK3588_DPU_RDMA_DATA_CUBE_HEIGHT, p->out_h - 1);
    E(RK3588_DPU_RDMA_DATA_CUBE_CHANNEL, oc - 1);
    E(RK3588_DPU_RDMA_BRDMA_CFG, RK3588_DPU_RDMA_BRDMA_CFG_BRDMA_DATA_USE(p->bias ? 1 : 0));
    E(RK3588_DPU_RDMA_BS_BASE_ADDR, p->bias);
    E(RK3588_DPU_RDMA_ERDMA_CFG, RK3588_DPU_RDMA_ERDMA_CFG_ERDMA_DISABLE(1));
    E(RK3588_DPU_RDMA_FEATURE_MODE_CFG,
      RK3588_DPU_RDMA_FEATURE_MODE_CFG_BURST_LEN(15) |
          RK3588_DPU_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE(1) |
          RK3588_DPU_RDMA_FEATURE_MODE_CFG_CONV_MODE(p->depthwise ? 3 : 0));
    return 0;
}

int dlasim_rk_emit_conv(struct dlasim_rk_regcmd *l, const struct dlasim_rk_conv *p,
                        const struct dlasim_rk_pool_desc *pool)
{
    if (!l || !p) {
        return DLASIM_ERR_INVAL;
    }
    uint32_t oc = p->depthwise ? p->in_c : p->kernels;
    if (!p->in_w || !p->in_h || !p->in_c || !oc || !p->k_w || !p->k_h || !p->stride_x ||
        !p->stride_y || !p->out_w || !p->out_h || (p->to_ppu && !pool)) {
        return DLASIM_ERR_INVAL;
    }
    int rc = emit_cna_core(l, p, oc);
    rc = rc ? rc : emit_dpu(l, p, oc);
    rc = rc ? rc : (p->to_ppu ? emit_pool_regs(l, pool, 1) : 0);
    uint32_t mask = DLASIM_RK_EN_CONV | (p->to_ppu ? DLASIM_RK_EN_PPU : 0);
    return rc ? rc : dlasim_rk_end_task(l, mask);
}
