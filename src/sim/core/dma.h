/*
 * Who runs on a device, and the one DMA path every engine of every device
 * uses (NVDLA engines through src/sim/nvdla/dla.h, RK3588 blocks through
 * src/sim/rk3588/rk3588.h).
 *
 * A `struct dla_exec` is what executes: the NVDLA device's layer, one RK3588
 * core's task.  It names itself for messages ("layer 3", "core 1, task 5")
 * and may watch the DMA: `traffic` hears every burst that moved (the NVDLA
 * timing layer counts bytes), `fault` every access or extent refused (the
 * RK3588 raises its DMA read/write error interrupt).
 *
 * DMA policy, the same for both devices:
 *   - an engine describes each cube it will move (struct dla_strided,
 *     budget.h) and has it checked with dla_exec_extent_check before the
 *     first byte moves: a cube that leaves its port's address space is
 *     refused with DLASIM_ERR_MEM and nothing is written;
 *   - each burst is then bounds-checked again by the port (mem.c) and never
 *     wraps; what refused it (address width, caller's callback, host memory
 *     budget) is in the message, which names the unit and the address;
 *   - addresses the hardware truncates (NVDLA SDP's address registers; the
 *     RK3588's 32-bit bus, TASK_DMA_BASE_ADDR + offset) are truncated by the
 *     engine before it calls in (`wrap_mask` below, rk_dma_addr).
 * Alignment is each engine's, per its hardware, one rule per engine:
 *   NVDLA CDMA   feature/weight addresses and strides must be multiples of
 *                the memory atom: DLASIM_ERR_PROG otherwise (cdma.c check_align);
 *   NVDLA CDP    a misaligned cube is logged as a guest error, and runs (cdp.c);
 *   NVDLA SDP, PDP, BDMA, RUBIK and every RK3588 block: any byte address,
 *                as their address registers hold every bit.
 */
#ifndef DLASIM_SIM_CORE_DMA_H
#define DLASIM_SIM_CORE_DMA_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/core/host.h"

struct dla_exec {
    struct dla_host *host;
    void *owner; /* the device's own context, passed to the hooks */
    /* Writes who runs ("layer 3") for messages. */
    void (*where)(const void *owner, char *buf, size_t len);
    void (*traffic)(void *owner, int write, size_t bytes); /* or NULL */
    void (*fault)(void *owner, int write);                 /* or NULL */
};

/* Record a guest error ("<where>: <message>", logged); returns `status`. */
int dla_exec_error(struct dla_exec *x, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int dla_exec_verror(struct dla_exec *x, int status, const char *fmt, va_list ap);

/* One burst of `len` bytes at `addr` on `port` for `unit` ("PDP", "DPU
 * WDMA"): 0, or a negative status with the message "<unit>: DMA read of
 * 0x..+0x.. on DBB failed: <why>". */
int dla_exec_dma_read(struct dla_exec *x, const char *unit, int port, uint64_t addr, void *dst,
                      size_t len);
int dla_exec_dma_write(struct dla_exec *x, const char *unit, int port, uint64_t addr,
                       const void *src, size_t len);

/* `rows` lines of `line_bytes`, `stride` apart from `base`, to or from a
 * packed host buffer: one burst when contiguous, one per line otherwise;
 * each line address is ANDed with `wrap_mask` (UINT64_MAX: no wrap). */
struct dla_lines {
    int port;
    uint64_t wrap_mask, base, stride;
    uint32_t rows;
    size_t line_bytes;
};
int dla_exec_dma_read_lines(struct dla_exec *x, const char *unit, const struct dla_lines *l,
                            void *dst);
int dla_exec_dma_write_lines(struct dla_exec *x, const char *unit, const struct dla_lines *l,
                             const void *src);

#endif
