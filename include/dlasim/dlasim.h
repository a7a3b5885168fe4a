/*
 * dlasim — a register-level, bit-exact software model of the NVIDIA Deep
 * Learning Accelerator (NVDLA).
 *
 * Public API.  One device is one `struct dlasim_dev`; nothing is global.
 * The library never prints and never exits: every call returns a status
 * (0 = OK, negative = enum dlasim_status) and the last error message of a
 * device is available from dlasim_last_error().
 *
 * Pointer arguments: every `dev` must be a device from dlasim_create();
 * a NULL `dev` is refused with DLASIM_ERR_INVAL (functions without a
 * status return do nothing).  Other pointers are required unless the
 * comment of the function says they may be NULL; a NULL where one is
 * required is DLASIM_ERR_INVAL with a message, never a crash.
 */
#ifndef DLASIM_DLASIM_H
#define DLASIM_DLASIM_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif
DLASIM_API_BEGIN

enum dlasim_status {
    DLASIM_OK = 0,
    DLASIM_ERR_INVAL = -1,       /* bad argument or unknown name */
    DLASIM_ERR_NOMEM = -2,       /* host allocation failed */
    DLASIM_ERR_MEM = -3,         /* DMA outside reachable memory */
    DLASIM_ERR_TIMEOUT = -4,     /* programmed work can never complete */
    DLASIM_ERR_PROG = -5,        /* register programming the hardware cannot run */
    DLASIM_ERR_IO = -6,          /* host file could not be read */
    DLASIM_ERR_PARSE = -7,       /* malformed input file */
    DLASIM_ERR_UNSUPPORTED = -8, /* feature not modelled */
    DLASIM_ERR_CHECK = -9        /* a trace check (CRC, poll) failed */
};

/* Human-readable name of a status code ("DLASIM_ERR_MEM", ...). */
const char *dlasim_status_name(int status);

/* Memory ports of the device (spec: DBB = primary, CVIF = secondary/SRAMIF). */
enum dlasim_port {
    DLASIM_PORT_DBB = 0,
    DLASIM_PORT_CVIF = 1
};

/*
 * Caller-supplied memory: both callbacks return 0 on success or a negative
 * status when the range is not backed.  They are called with whole bursts
 * (typically a line or a surface), never per byte.
 */
struct dlasim_mem_ops {
    int (*read)(void *opaque, uint64_t addr, void *dst, size_t len);
    int (*write)(void *opaque, uint64_t addr, const void *src, size_t len);
};

/* Log categories (bit mask, chosen at run time). */
enum dlasim_log_category {
    DLASIM_LOG_GUEST_ERROR = 1u << 0, /* illegal programming */
    DLASIM_LOG_UNIMP = 1u << 1,       /* feature not modelled */
    DLASIM_LOG_REG = 1u << 2,         /* every CSB access, in trace syntax */
    DLASIM_LOG_EXEC = 1u << 3         /* layer start/end */
};

struct dlasim_timing_profile; /* include/dlasim/timing.h */

/* Options of a device; every pointer may be NULL (then its default is used)
 * except as noted.  Zero-initialise the struct and set what you need. */
struct dlasim_options {
    const char *config;            /* "nv_small" (default when NULL), "nv_small_256", "nv_large" */
    /* "NVDLA_SDP_EW_ENABLE=1", ...: n_overrides non-NULL strings (overrides
     * may be NULL only when n_overrides is 0) */
    const char *const *overrides;
    size_t n_overrides;
    /* primary memory: NULL ops = built-in sparse memory; ops given must have
     * both callbacks */
    const struct dlasim_mem_ops *dbb_ops;
    void *dbb_opaque;
    /* secondary memory (only where the configuration has one) */
    const struct dlasim_mem_ops *cvif_ops;
    void *cvif_opaque;
    /* IRQ line level changes */
    void (*irq_cb)(void *opaque, int level);
    void *irq_opaque;
    /* logging: categories in log_mask go to log_cb (nothing is printed otherwise) */
    unsigned log_mask;
    void (*log_cb)(void *opaque, unsigned category, const char *msg);
    void *log_opaque;
    /* worker threads for large layers: 0 = all online cores */
    unsigned threads;
    /* 1 = keep sharing work with the worker threads whatever it costs to
     * pass data between the cores.  By default (0) the device measures a
     * cache line's round trip to a worker every few milliseconds and, while
     * it is above 250 ns (a virtual machine whose vCPUs sit on cores that
     * share no cache: 380-490 ns against 70-130 on the project's CI host,
     * where two threads then ran MobileNetV2 1.6x slower than one), runs
     * its layers on the calling thread alone, overlap included (a
     * convolution of 150 us or more on one thread still shares its tiles),
     * until a measurement is below 200 ns again.  Results are the same bytes
     * either way.  For scaling measurements and tests of the threads. */
    int threads_always;
    /* report reads of never-written bytes of the built-in memory as errors */
    int strict_mem;
    /* refuse (DLASIM_ERR_UNSUPPORTED) a layer whose work is larger than this,
     * before it runs (it still completes with its interrupt).  Work = bytes
     * the layer's DMA reads + bytes it writes (every line its strides,
     * repeats, surfaces and batches address) + elements or MACs its datapath
     * computes, counted from the programmed registers for every engine.
     * 0 = no limit beyond the model's host limits.  For fuzzing, sandboxes
     * and guests that must not take the host down. */
    uint64_t max_layer_work;
    /* bytes of host memory the built-in sparse memory (both ports together)
     * may allocate for device memory: 64 KiB pages on the first write of a
     * non-zero byte, plus their 8 KiB "written" bitmaps with strict_mem
     * (the pages are carved from 2 MiB mappings the host may back with
     * huge pages: up to one such mapping's unused part more may be
     * resident).
     * A write that would need more fails with DLASIM_ERR_NOMEM naming the
     * unit, layer and address range (DMA) or the address range (host writes).
     * Writing zeros to memory never written allocates no page (it reads as
     * zero already).  0 = unlimited.  Not used with caller memory ops. */
    uint64_t max_host_mem;
    /* cycle model (include/dlasim/timing.h): 1 = on; NULL profile = "rtl-tb" */
    int timing;
    const struct dlasim_timing_profile *timing_profile;
    /* 1 = overlap, as the hardware does: when a layer completes inside
     * dlasim_step and another is enabled, that one starts at once on a
     * worker thread (with the registers it has then) while the host
     * services the interrupt and programs the freed register group.  A host
     * access that could meet it (memory, its units' single registers and
     * the registers of the groups it runs, LUT ports, dlasim_busy,
     * dlasim_reset) first waits for its engines to end; its completion
     * (OP_EN, pointers, done bits, the interrupt) is the next dlasim_step's,
     * which returns its status, so registers and interrupts read as on a
     * stepped device (memory holds its output once an access waited for
     * it).  Only CONV, SDP, PDP and CDP layers start early.  Taken with
     * threads > 1, the built-in memory, no timing and no log_mask (else
     * stepped: a layer runs only inside dlasim_step).  dlasim_set_overlap
     * changes it later. */
    int overlap;
};

struct dlasim_dev;

/* dlasim_options.overlap from now on (1 = on where the device can, 0 =
 * stepped: a layer runs only inside dlasim_step, as a trace recorder that
 * snapshots memory before each layer needs); the previous setting, or
 * DLASIM_ERR_INVAL for a NULL device.  Turning it off first finishes a
 * layer that has started. */
int dlasim_set_overlap(struct dlasim_dev *dev, int on);

/* Create a device.  `opt` may be NULL (all defaults); `out` is required;
 * `err` may be NULL (else errlen bytes receive the reason on failure).  On
 * failure *out is NULL. */
int dlasim_create(const struct dlasim_options *opt, struct dlasim_dev **out,
                  char *err, size_t errlen);
/* Free a device (NULL: nothing happens). */
void dlasim_destroy(struct dlasim_dev *dev);
/* Hardware reset: registers to reset values, engines idle, IRQ low.
 * The contents of memory are kept.  NULL: nothing happens. */
void dlasim_reset(struct dlasim_dev *dev);

/* 32-bit CSB access by byte address (must be 4-byte aligned); `val` is
 * required. */
int dlasim_csb_read(struct dlasim_dev *dev, uint32_t addr, uint32_t *val);
int dlasim_csb_write(struct dlasim_dev *dev, uint32_t addr, uint32_t val);
/* One register write of a batch. */
struct dlasim_reg_write {
    uint32_t addr, val;
};
/* n writes in order, each exactly as dlasim_csb_write makes it (OP_EN,
 * W1C, pointer and interrupt side effects included, each before the next
 * write).  Stops at the first failing write and returns its status with
 * *done = the writes made before it; 0 with *done = n when all succeeded
 * (done may be NULL).  The device takes a run of plain writes to one unit
 * without looking at the unit's state again for each. */
int dlasim_csb_write_n(struct dlasim_dev *dev, const struct dlasim_reg_write *w, size_t n,
                       size_t *done);

/* Host access to device memory (through the same memory interface as DMA);
 * dst/src may be NULL only when len is 0.  Writes count against
 * max_host_mem. */
int dlasim_mem_read(struct dlasim_dev *dev, enum dlasim_port port,
                    uint64_t addr, void *dst, size_t len);
int dlasim_mem_write(struct dlasim_dev *dev, enum dlasim_port port,
                     uint64_t addr, const void *src, size_t len);

/* Execute one layer whose units are all enabled: 1 = ran one, 0 = nothing
 * runnable, negative = error (the layer still completes as the hardware
 * would, so a driver sees the interrupt). */
int dlasim_step(struct dlasim_dev *dev);
/* Execute until nothing more is runnable.  Returns 0 or the first error. */
int dlasim_run(struct dlasim_dev *dev);
/* Nonzero when some unit has an enabled group that cannot run; desc (may
 * be NULL) receives in desclen bytes the units still busy and what they
 * wait for.  DLASIM_ERR_INVAL (negative) when dev is NULL. */
int dlasim_busy(struct dlasim_dev *dev, char *desc, size_t desclen);

/* Level of the interrupt line: (GLB S_INTR_STATUS & ~S_INTR_MASK) != 0;
 * DLASIM_ERR_INVAL when dev is NULL. */
int dlasim_irq_level(const struct dlasim_dev *dev);

/* Message of the last error on this device ("" if none; a fixed message
 * when dev is NULL).  Never NULL. */
const char *dlasim_last_error(const struct dlasim_dev *dev);

/* Scalability parameter of the device's configuration by spec name
 * (e.g. "NVDLA_MAC_ATOMIC_C_SIZE"); returns DLASIM_ERR_INVAL if unknown or
 * if name or value is NULL. */
int dlasim_param(const struct dlasim_dev *dev, const char *name, uint64_t *value);

/* What a device is: the personality dlasim_create chose for its configuration
 * (all fields NULL/0 for a NULL device; a NULL info is ignored). */
struct dlasim_device_info {
    const char *device;   /* "NVDLA", "RK3588" */
    const char *config;   /* the configuration name it was created with ("nv_small", ...) */
    const char *regdb;    /* register database of its CSB addresses ("nvdla", "rk3588") */
    unsigned cores;       /* register windows with their own interrupt line */
};
void dlasim_device_info(const struct dlasim_dev *dev, struct dlasim_device_info *info);

/* Register name lookup (through the one register database).  name and addr
 * are required (DLASIM_ERR_INVAL otherwise, as for an unknown name). */
int dlasim_reg_lookup(const char *name, uint32_t *addr); /* "NVDLA_PDP.D_OP_ENABLE_0" */
/* Name of the register at addr ("0x..." when none) written to buf; returns
 * buf, or NULL when buf is NULL or buflen is 0. */
const char *dlasim_reg_name(uint32_t addr, char *buf, size_t buflen);

DLASIM_API_END
#ifdef __cplusplus
}
#endif
#endif
