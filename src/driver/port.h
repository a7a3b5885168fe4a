/*
 * The port between the runtime core and a device (docs/runtime-port.md).
 *
 * The runtime core (firmware executor, loadable runner, engine programming)
 * reaches hardware only through these callbacks; it never includes the
 * simulator's headers.  Ports: port_sim.c (the simulated device, through the
 * public dlasim.h API) and port_record.c (wraps another port and records a
 * replayable NVDLA trace case).  A port onto real silicon (UIO/devmem)
 * implements the same six callbacks.
 *
 * ref: nvdla/sw kmd/include/nvdla_interface.h (which side implements what:
 * dla_reg_write/read, dla_data_read/write, dla_get_dma_address).
 */
#ifndef NVRT_PORT_H
#define NVRT_PORT_H

#include <stddef.h>
#include <stdint.h>

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
};

/* The simulator port (port_sim.c): memory is allocated from the conformance
 * traces' range (0x80000000 upwards on the primary port). */
struct dlasim_dev;
struct nvrt_sim_port {
    struct nvrt_port port;
    struct dlasim_dev *dev;
    uint64_t next_addr;
    uint64_t limit;
};
void nvrt_sim_port_init(struct nvrt_sim_port *sp, struct dlasim_dev *dev);

/* The recording port (port_record.c): forwards to an inner port and writes
 * DIR/NAME.cfg plus its .dat files. */
struct nvrt_record_port;
int nvrt_record_port_open(const struct nvrt_port *inner, const char *dir, const char *name,
                          struct nvrt_record_port **out, char *err, size_t errlen);
struct nvrt_port *nvrt_record_port_of(struct nvrt_record_port *rp);
/* Finish the case: CRC checks of every marked output, write the files. */
int nvrt_record_port_close(struct nvrt_record_port *rp, char *err, size_t errlen);
void nvrt_record_port_free(struct nvrt_record_port *rp);

#endif
