/*
 * dlasim's RK3588 NPU personality: building register-command ("regcmd")
 * task lists the way Mesa's rocket driver and the Linux kernel lay them out,
 * and kicking them as the mainline `rocket` driver does.
 *
 * A device created with dlasim_options.config = "rk3588" models the three
 * NPU cores of the RK3588.  Its register space (dlasim_csb_read/write) is
 * core * DLASIM_RK_CORE_STRIDE + offset, the offset being the TRM's in-core
 * offset (PC 0x0000, CNA 0x1000, CORE 0x3000, DPU 0x4000, DPU_RDMA 0x5000,
 * PPU 0x6000, PPU_RDMA 0x7000, DDMA 0x8000, SDMA 0x9000, GLOBAL 0xF000).
 * Memory is the device's one port (DLASIM_PORT_DBB), 32-bit addresses.
 * dlasim_irq_level() is core 0's line; dlasim_rk_irq_level() any core's.
 *
 * Regcmd entries are 64 bits: [63:48] target block, [47:16] value, [15:0]
 * the register's in-core offset.  Each task ends with a four-entry tail
 * (next task's PC_BASE_ADDRESS or a bare 0, PC_REGISTER_AMOUNTS, the 0x0041
 * marker, the 0x0081 op_en entry with a block mask) and starts 64-byte
 * aligned.
 */
#ifndef DLASIM_RK3588_H
#define DLASIM_RK3588_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

#define DLASIM_RK_CORES 3u
#define DLASIM_RK_CORE_STRIDE 0x10000u

/* Block masks of the op_en entry and GLOBAL.OPERATION_ENABLE (TRM). */
#define DLASIM_RK_EN_CNA 0x01u
#define DLASIM_RK_EN_CORE 0x04u
#define DLASIM_RK_EN_DPU 0x08u
#define DLASIM_RK_EN_DPU_RDMA 0x10u
#define DLASIM_RK_EN_PPU 0x20u
#define DLASIM_RK_EN_PPU_RDMA 0x40u
#define DLASIM_RK_EN_CONV 0x1du /* CNA | CORE | DPU | DPU_RDMA, as Mesa */

/* PC interrupt bits (INTERRUPT_MASK/CLEAR/STATUS/RAW_STATUS). */
#define DLASIM_RK_IRQ_DPU 0x300u
#define DLASIM_RK_IRQ_PPU 0xc00u
#define DLASIM_RK_IRQ_DMA_READ_ERROR 0x1000u
#define DLASIM_RK_IRQ_DMA_WRITE_ERROR 0x2000u

struct dlasim_rk_task_desc {
    size_t first;          /* index of the task's first body entry */
    size_t n;              /* body entries (without the tail) */
    uint32_t enable_mask;  /* op_en block mask (DLASIM_RK_EN_*) */
};

/* A list of tasks under construction (zero-initialise, then emit). */
struct dlasim_rk_regcmd {
    uint64_t *e;
    size_t n, cap;
    struct dlasim_rk_task_desc *task;
    size_t ntasks, task_cap;
    size_t open_first;     /* first entry of the task being emitted */
    int failed;            /* an allocation failed: the list is unusable */
};

/* Pointer arguments: every list `l`, descriptor `p`, device `dev`, `buf`,
 * `name` and `offset` is required (NULL: DLASIM_ERR_INVAL, 0 for sizes and
 * counts, NULL for dlasim_rk_reg_name); `pool` of dlasim_rk_emit_conv may be
 * NULL; dlasim_rk_regcmd_free(NULL) does nothing. */

void dlasim_rk_regcmd_free(struct dlasim_rk_regcmd *l);
/* Register write to the in-core offset `reg`, target derived from its block
 * (as Mesa's emit(): block bit | 1).  DLASIM_ERR_INVAL for an offset in no
 * block the PC can write. */
int dlasim_rk_emit(struct dlasim_rk_regcmd *l, uint32_t reg, uint32_t value);
/* Any entry, e.g. Mesa's writes to undocumented offsets. */
int dlasim_rk_emit_raw(struct dlasim_rk_regcmd *l, uint16_t target, uint16_t reg,
                       uint32_t value);
/* Close the current task; its tail enables `enable_mask`. */
int dlasim_rk_end_task(struct dlasim_rk_regcmd *l, uint32_t enable_mask);

/* Entries of task i including its tail (the kernel's regcmd_count). */
size_t dlasim_rk_task_entries(const struct dlasim_rk_regcmd *l, size_t i);
/* Bytes the laid-out list takes. */
size_t dlasim_rk_layout_size(const struct dlasim_rk_regcmd *l);
/* Lay the tasks out for device address `addr` (64-byte aligned) into buf
 * (dlasim_rk_layout_size bytes, little-endian), linking each task to the
 * next through its tail. */
int dlasim_rk_layout(const struct dlasim_rk_regcmd *l, uint32_t addr, void *buf, size_t buflen);
/* Device address of task i when laid out at addr. */
uint32_t dlasim_rk_task_addr(const struct dlasim_rk_regcmd *l, uint32_t addr, size_t i);

/* The kick of linux drivers/accel/rocket rocket_job.c (rocket_job_hw_submit):
 * BASE_ADDRESS = 1; CNA and CORE S_POINTER = 0xE | core << 28; BASE_ADDRESS =
 * regcmd; REGISTER_AMOUNTS = (count + 1) / 2 - 1; INTERRUPT_MASK and
 * INTERRUPT_CLEAR = int_mask; TASK_CON = bit 14 | count clear | pp_en |
 * task_number; TASK_DMA_BASE_ADDR = 0; OPERATION_ENABLE = 1.  rocket kicks
 * one task at a time (task_number 1); rknpu kicks many (task_number n). */
int dlasim_rk_kick(struct dlasim_dev *dev, unsigned core, uint32_t regcmd, size_t count,
                   unsigned task_number, uint32_t int_mask);
/* What the rocket IRQ handler does on completion: OPERATION_ENABLE = 0,
 * INTERRUPT_CLEAR = 0x1ffff. */
int dlasim_rk_ack(struct dlasim_dev *dev, unsigned core);

/* ---- RK tensor layouts (docs/rk3588.md, Mesa rkt_ml.c/rkt_coefs.c) ---- */

/* Feature maps: NC1HWC2 with 16-byte atoms, C2 = 16 / bytes per element,
 * packed (line W*16 bytes, surface H*W*16 bytes). */
size_t dlasim_rk_feature_bytes(uint32_t w, uint32_t h, uint32_t c, unsigned bpe);
size_t dlasim_rk_feature_offset(uint32_t w, uint32_t h, uint32_t ch, uint32_t y, uint32_t x,
                                unsigned bpe);
/* int8 weights: direct [K/32][C/32][ky][kx][32 k][32 c] with partial last
 * blocks; depthwise [C/64][ky][kx][64 c]. */
size_t dlasim_rk_weight_bytes(uint32_t k, uint32_t c, uint32_t kh, uint32_t kw, int depthwise);
size_t dlasim_rk_weight_offset(uint32_t k, uint32_t c, uint32_t ky, uint32_t kx, uint32_t nk,
                               uint32_t nc, uint32_t kh, uint32_t kw, int depthwise);

struct dlasim_rk_pool_desc;

/* One int8 convolution task as Mesa programs it (CNA, CORE, DPU, DPU_RDMA). */
struct dlasim_rk_conv {
    uint32_t in_w, in_h, in_c;       /* input cube (in_c channels in memory) */
    uint32_t kernels, k_w, k_h;      /* direct: kernels = output channels */
    uint32_t stride_x, stride_y, pad_left, pad_top;
    uint32_t out_w, out_h;
    int depthwise;                   /* output channels = in_c */
    int8_t pad_value;
    uint32_t input, weights, output; /* device addresses */
    uint32_t bias;                   /* int32 per output channel, 0 = none */
    int16_t ow_op;                   /* CPEND operand: 0x80 - weight zero point, 0 = none */
    int out_int32;                   /* OUT_PRECISION int32 (no requantization) */
    uint8_t clip_truncate;           /* CORE CLIP_TRUNCATE: accumulator >> n, rounded */
    uint8_t clip_round_half_up;      /* CORE CLIP_TRUNCATE.ROUND_TYPE (0 half to even) */
    uint16_t cvt_scale;              /* OUT_CVT (int8 output) */
    uint16_t cvt_shift;
    int32_t cvt_offset;
    int relu;                        /* BS ReLU */
    int to_ppu;                      /* hand the output to the PPU (fused) too */
    int to_memory;                   /* write the output (OUTPUT_MODE bit 1) */
};
/* Emit one convolution task's registers and close the task. */
int dlasim_rk_emit_conv(struct dlasim_rk_regcmd *l, const struct dlasim_rk_conv *p,
                        const struct dlasim_rk_pool_desc *pool);

/* PPU pooling, standalone (PPU_RDMA reads `input`) or fused behind a conv. */
struct dlasim_rk_pool_desc {
    uint32_t in_w, in_h, c, out_w, out_h;
    uint32_t k_w, k_h, stride_x, stride_y;
    uint32_t pad_left, pad_top, pad_right, pad_bottom;
    unsigned method;                 /* 0 average, 1 max, 2 min */
    int32_t pad_value;
    uint32_t recip_w, recip_h;       /* 2^16 / k for average */
    uint32_t input, output;          /* input unused when fused */
};
int dlasim_rk_emit_pool(struct dlasim_rk_regcmd *l, const struct dlasim_rk_pool_desc *p);

/* DLASIM_RK_CORES for a device created with config "rk3588", else 0. */
unsigned dlasim_rk_cores(const struct dlasim_dev *dev);
/* Interrupt line of one core. */
int dlasim_rk_irq_level(const struct dlasim_dev *dev, unsigned core);

/* Register name <-> in-core offset in the RK3588 database:
 * "RKNN_ppu_s_pointer" <-> 0x6004. */
int dlasim_rk_reg_lookup(const char *name, uint32_t *offset);
const char *dlasim_rk_reg_name(uint32_t offset, char *buf, size_t buflen);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
