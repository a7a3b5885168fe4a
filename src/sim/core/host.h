/*
 * Host services every device personality uses (NVDLA: src/sim/nvdla/device.c,
 * RK3588: src/sim/rk3588/rk_npu.c): what the caller gave dlasim_create
 * (log and interrupt callbacks, worker threads, work and host-memory
 * limits), the memory ports, the last error message, interrupt lines and
 * scratch buffers.  One copy of each, so both devices report, log, count and
 * reach memory the same way.
 *
 * A device embeds one `struct dla_host`; what runs on it (a layer of an
 * NVDLA device, a task of one RK3588 core) reaches these services through a
 * `struct dla_exec` (src/sim/core/dma.h), which adds who is running for the
 * messages.
 */
#ifndef DLASIM_SIM_CORE_HOST_H
#define DLASIM_SIM_CORE_HOST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "sim/core/mem.h"

#define DLA_HOST_ERR_LEN 1024

struct dla_host {
    void (*irq_cb)(void *, int);      /* the interrupt line's change callback */
    void *irq_opaque;
    unsigned log_mask;                /* enum dlasim_log_category bits */
    void (*log_cb)(void *, unsigned, const char *);
    void *log_opaque;
    unsigned threads;                 /* worker threads for large layers (>= 1) */
    int threads_always;               /* dlasim_options.threads_always */
    uint64_t max_layer_work;          /* caller's work limit per layer/task, 0 = none */
    int strict_mem;                   /* dlasim_options.strict_mem */
    struct dla_mem_budget mem_budget; /* pages of the built-in memories (max_host_mem) */
    struct dla_mem_port port[2];      /* by enum dlasim_port */
    char err[DLA_HOST_ERR_LEN];       /* last error message (dlasim_last_error) */
};

/* Take the caller's callbacks and limits from the options (threads 0 = the
 * host's online cores).  Ports start absent: dla_host_port_init each one. */
void dla_host_init(struct dla_host *h, const struct dlasim_options *opt);
/* Set up port `port` with addresses below `limit`: the caller's callbacks
 * when `ops` is given (both must be set), else the built-in sparse memory if
 * the port is present.  Returns 0 or a negative status with `err` filled. */
int dla_host_port_init(struct dla_host *h, enum dlasim_port port, int present, uint64_t limit,
                       const struct dlasim_mem_ops *ops, void *opaque, char *err,
                       size_t errlen);
/* Frees the built-in memories. */
void dla_host_free(struct dla_host *h);

/* First unreachable address of a port; 0 when the device lacks it. */
uint64_t dla_host_port_limit(const struct dla_host *h, int port);
const char *dla_port_name(int port);

/* Log a message if its category is enabled. */
void dla_host_log(const struct dla_host *h, unsigned category, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void dla_host_vlog(const struct dla_host *h, unsigned category, const char *fmt, va_list ap);
/* An error of an API call (bad argument): the message is stored, nothing logged. */
int dla_host_api_error(struct dla_host *h, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* An error of the guest's programming while the device works: stored as
 * "<where>: <message>" and logged as DLASIM_LOG_GUEST_ERROR. */
int dla_host_guest_error(struct dla_host *h, int status, const char *where, const char *fmt,
                         va_list ap);

/* dlasim_mem_read/write for every device: port and pointer checks, then the
 * port; the message names the port and the address. */
int dla_host_mem_read(struct dla_host *h, enum dlasim_port port, uint64_t addr, void *dst,
                      size_t len);
int dla_host_mem_write(struct dla_host *h, enum dlasim_port port, uint64_t addr,
                       const void *src, size_t len);

/* An interrupt line: `level` follows what the device computes; the host's
 * callback hears the lines with `reports` set (the one line
 * dlasim_irq_level shows). */
struct dla_irq_line {
    int level;
    int reports;
};
void dla_irq_line_set(struct dla_host *h, struct dla_irq_line *line, int level);

/* Buffers an engine keeps across layers so that large layers do not fault
 * fresh pages in every time.  Contents are undefined after growth. */
#define DLA_SCRATCH_SLOTS 8
struct dla_scratch {
    void *buf[DLA_SCRATCH_SLOTS];
    size_t size[DLA_SCRATCH_SLOTS];
};
/* Slot `slot` with at least `size` bytes, or NULL (bad slot, no memory). */
void *dla_scratch_get(struct dla_scratch *s, unsigned slot, size_t size);
/* *buf grown to at least `bytes` (its capacity in *cap); 0 or DLASIM_ERR_NOMEM. */
int dla_scratch_grow(void **buf, size_t *cap, size_t bytes);
void dla_scratch_free(struct dla_scratch *s);

#endif
