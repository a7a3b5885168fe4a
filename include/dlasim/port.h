/*
 * The runtime port (docs/runtime-port.md): the callbacks through which
 * dlasim's firmware-equivalent runtime reaches an NVDLA device.  dlasim
 * implements it for the simulated device; a program implements it for its
 * own device (real silicon through UIO/devmem, another simulator, a
 * logging or fault-injecting wrapper) and runs networks, tasks and
 * loadables on it with dlasim_rt_execute_port, dlasim_rt_run_task_port and
 * dlasim_loadable_run_port (dlasim/runtime.h).  Register addresses:
 * dlasim/regs/nvdla_regs.h (installed by make install).
 *
 * ref: nvdla/sw kmd/include/nvdla_interface.h (which side implements what:
 * dla_reg_write/read, dla_data_read/write, dla_get_dma_address).
 */
#ifndef DLASIM_PORT_H
#define DLASIM_PORT_H

#include <stddef.h>
#include <stdint.h>

struct dlasim_reg_write; /* dlasim/dlasim.h: {addr, val} */

enum nvrt_domain { NVRT_DOMAIN_SYSTEM = 0, NVRT_DOMAIN_SRAM = 1 };

struct nvrt_port {
    void *ctx;
    /* 32-bit CSB register access at a byte address */
    int (*reg_read)(void *ctx, uint32_t addr, uint32_t *val);
    int (*reg_write)(void *ctx, uint32_t addr, uint32_t val);
    /* Block until the interrupt line is high (the core then reads and acks
     * GLB S_INTR_STATUS itself).  Returns 0, or DLASIM_ERR_TIMEOUT when the
     * device can never raise it, or another negative status. */
    int (*wait_irq)(void *ctx);
    /* Device memory: allocate size bytes aligned to align (power of two) in a
     * domain, and move bytes between host and device in bursts. */
    int (*mem_alloc)(void *ctx, enum nvrt_domain domain, uint64_t size, uint64_t align,
                     uint64_t *addr);
    int (*mem_write)(void *ctx, uint64_t addr, const void *src, size_t len);
    int (*mem_read)(void *ctx, uint64_t addr, void *dst, size_t len);
    /* Optional: what the device says about the last failure ("" if nothing). */
    const char *(*last_error)(void *ctx);
    /* Optional: the run marks every surface an operation writes (outputs) or
     * reads (inputs, weights, operands); recording ports load and check them. */
    void (*mark_output)(void *ctx, uint64_t addr, uint64_t size);
    void (*mark_input)(void *ctx, uint64_t addr, uint64_t size);
    /* Nonzero when freshly allocated memory already reads zero (the runner
     * then skips zero-filling it). */
    int alloc_zeroed;
    /* Optional: the hardware configuration's atom size etc. by spec name. */
    int (*param)(void *ctx, const char *name, uint64_t *value);
    /* Optional: n register writes in order, each exactly as reg_write makes
     * it; stops at the first failing write and returns its status with
     * *done = the writes made before it (0 and *done = n when all went
     * through).  NULL: the runtime calls reg_write n times.  Replayed
     * programming (DLASIM_RT_PREPARED) hands it each run of writes. */
    int (*reg_write_n)(void *ctx, const struct dlasim_reg_write *w, size_t n, size_t *done);
};

#endif
