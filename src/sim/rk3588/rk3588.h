/*
 * The RK3588 NPU personality of dlasim (internal interface).
 *
 * One `struct rk_npu` holds the three NPU cores of the RK3588 (TRM Part 1
 * ch. 36), each with its own 64 KiB register window, its own PC (the
 * register-command fetch unit), its own interrupt line, and the shared
 * memory.  The public API (include/dlasim/dlasim.h) reaches it through its
 * device operations dla_rk3588_ops (src/sim/core/personality.h), the personality
 * dlasim_create picks for config "rk3588": CSB addresses are
 * core * DLASIM_RK_CORE_STRIDE + offset, the offset being the one the TRM,
 * the spec files and Mesa's registers.xml give (PPU S_POINTER = 0x6004).
 *
 * Files: rk_npu.c (registers, ping-pong pointers, PC fetch, tasks,
 * interrupts), rk_conv.c (CNA+CORE convolution), rk_dpu.c (DPU datapath and
 * its RDMA), rk_ppu.c (PPU pooling and its RDMA).
 */
#ifndef DLASIM_SIM_RK3588_H
#define DLASIM_SIM_RK3588_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "regs/gen/rk3588_regs.h"

#define RK_CORES 3
#define RK_WINDOW 0x10000u

struct rk_npu; /* the device: its operations are dla_rk3588_ops (sim/personality.h) */

/* ---- for the engines (rk_conv.c, rk_dpu.c, rk_ppu.c) --------------------- */

struct rk_core;

/* Value of register `off` (in-core offset, RK3588_<UNIT>_<REG>) in the group
 * the unit executes (its EXECUTER); single registers ignore the group. */
uint32_t rk_reg(const struct rk_core *c, uint32_t off);
#define RK_FIELD(v, F) (((uint32_t)(v) & F##__MASK) >> F##__SHIFT)
#define RK_REG_FIELD(c, REG, FIELD) RK_FIELD(rk_reg((c), REG), REG##_##FIELD)

/* DMA on behalf of a core: address = TASK_DMA_BASE_ADDR + addr (PC
 * TASK_DMA_BASE_ADDR, TRM) for data; errors set the core's DMA read/write
 * error interrupt and the device's message. */
int rk_dma_read(struct rk_core *c, const char *unit, uint64_t addr, void *dst, size_t len);
int rk_dma_write(struct rk_core *c, const char *unit, uint64_t addr, const void *src,
                 size_t len);
int rk_error(struct rk_core *c, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
unsigned rk_threads(const struct rk_core *c);
/* Scratch buffer `slot` (< RK_SCRATCH) of at least `size` bytes, kept by the
 * core across tasks so large layers do not page-fault fresh memory every
 * time; NULL if it cannot be allocated.  Contents are undefined. */
#define RK_SCRATCH 7 /* 0-4 rk_conv.c, 5 the accumulators, 6 rk_dpu.c output */
void *rk_scratch(struct rk_core *c, unsigned slot, size_t size);
/* What the planar weights in the conv scratch were decoded from (as NVDLA's
 * CSC keeps its decode: src/sim/nvdla/csc.c decode_planar). */
struct rk_wcache {
    int valid;
    uint32_t k, c, kh, kw, dw;
    size_t len;
};
struct rk_wcache *rk_weight_cache(struct rk_core *c);
/* The task's work and a cube's extent, by the device core's rules
 * (src/sim/core/budget.h), as NVDLA's engines check theirs: the work limit
 * (dlasim_options.max_layer_work) refuses with DLASIM_ERR_UNSUPPORTED, a
 * cube leaving the 32-bit address space with DLASIM_ERR_MEM and the DMA
 * error interrupt, before any byte moves.  rk_extent_check takes the cube's
 * base as the engine's address (before TASK_DMA_BASE_ADDR) and sets the port. */
struct dla_work;
struct dla_strided;
int rk_work_check(struct rk_core *c, const struct dla_work *w);
int rk_extent_check(struct rk_core *c, const char *unit, const char *what, int is_write,
                    struct dla_strided *s);
/* The bus address of a data address: TASK_DMA_BASE_ADDR + addr, 32 bits. */
uint64_t rk_dma_addr(const struct rk_core *c, uint64_t addr);

/* x / 2^s rounded: half to even (the TRM's round_type/cvt_round 0, "if the
 * integer is odd, carry 1") or half up (1, "always carry"); s >= 63 gives 0. */
static inline int64_t rk_round_shift(int64_t x, unsigned s, int half_up)
{
    if (s == 0) {
        return x;
    }
    if (s >= 63) {
        return 0;
    }
    int64_t q = x >> s; /* floor (arithmetic shift) */
    int64_t r = x - q * ((int64_t)1 << s);
    int64_t half = (int64_t)1 << (s - 1);
    if (r > half || (r == half && (half_up || (q & 1)))) {
        q++;
    }
    return q;
}

/* The same for an int32 value and s < 32, in 32-bit operations without
 * branches (vectorisable): q = x >> s plus 1 when the remainder is above
 * half, or equal to half and (half up, or q odd for half to even). */
static inline int32_t rk_round_shift32(int32_t x, unsigned s, int half_up)
{
    if (s == 0) {
        return x;
    }
    int32_t q = x >> s;
    uint32_t r = (uint32_t)x & ((1u << s) - 1u), half = 1u << (s - 1);
    uint32_t up = (uint32_t)(r > half) | ((uint32_t)(r == half) & (half_up ? 1u : ((uint32_t)q & 1u)));
    return (int32_t)((uint32_t)q + up);
}

static inline int64_t rk_sat(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* A cube of int32 values, planar [c][y][x], between engines. */
struct rk_cube {
    uint32_t w, h, c;
    int32_t *v;
    int borrowed;  /* v is a core scratch buffer: not freed by its holder */
    /* CORE CLIP_TRUNCATE not yet applied to v (the DPU applies it first, in
     * its own pass over the cube): shift and ROUND_TYPE. */
    unsigned shift;
    int shift_half_up;
};

/* Which blocks one task uses (decided from the enabled blocks). */
struct rk_task {
    int conv;      /* CNA + CORE feed the DPU */
    int dpu;       /* DPU runs (from conv or from MRDMA) */
    int dpu_rdma;  /* DPU_RDMA enabled with the DPU */
    int ppu;       /* PPU runs (fused behind the DPU or from PPU_RDMA) */
    int ppu_rdma;  /* PPU_RDMA enabled */
};

struct dlasim_layer_info;
/* CNA + CORE of one task into *out; when info is not NULL, the convolution's
 * geometry as decoded (include/dlasim/layer.h, kind "conv") into it. */
int rk_conv_run(struct rk_core *c, struct rk_cube *out, struct dlasim_layer_info *info);
int rk_dpu_run(struct rk_core *c, const struct rk_task *t, struct rk_cube *acc,
               struct rk_cube *to_ppu);
int rk_ppu_run(struct rk_core *c, const struct rk_task *t, const struct rk_cube *from_dpu);

#endif
