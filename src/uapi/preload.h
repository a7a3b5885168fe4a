/*
 * User-space emulation of kernel device nodes (docs/nvdla-uapi.md): the
 * generic core of dlasim's LD_PRELOAD libraries.
 *
 * A preload library (libdlasim-nvdla.so, ...) links this core, which
 * interposes open/open64/openat/openat64/close/ioctl/mmap/mmap64/dup/dup2/
 * dup3/fcntl(F_DUPFD*) and presents the device paths that registered
 * devices claim.  Opening such a path gives the client a real file
 * descriptor (an anonymous memfd, so poll/fstat/close behave) that the core
 * tracks; ioctl and mmap on it, and on its dups, go to the device's ops.
 * Every other fd and path goes to the C library untouched.
 *
 * Buffer objects (uapi_bo) are memfd-backed: the client maps them with
 * mmap(device fd, fake offset) or mmap(exported fd, 0), the device model
 * reads and writes the same pages through bo->map, and an exported fd
 * (PRIME) is a real fd the client may close, dup or pass back: the device
 * recognises it by inode (uapi_bo_matches_fd), not by number.
 *
 * preload.c holds the interposition, bo.c the buffer objects and the log
 * (a device's decoder links with bo.c alone into tests and fuzz targets).
 *
 * The interposition is process-wide by nature: the fd table and the list of
 * registered devices are the only global state, guarded by one mutex.
 * Device ops are called with that mutex released, one call at a time per
 * device (the core serialises them with a per-device mutex).
 */
#ifndef DLASIM_UAPI_PRELOAD_H
#define DLASIM_UAPI_PRELOAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- buffer objects ------------------------------------------------------ */

struct uapi_bo {
    int memfd;        /* owned by the bo; the pages live while any fd or mapping does */
    uint8_t *map;     /* the device model's view: size bytes, MAP_SHARED */
    uint64_t size;    /* page-rounded */
    dev_t st_dev;     /* identity of the memfd, for exported fds */
    ino_t st_ino;
};

/* Create a zero-filled bo of at least size bytes (rounded up to the page
 * size, as the kernel's GEM does); name shows in /proc/PID/maps.
 * Returns 0 or -errno (-EINVAL for size 0, -ENOMEM when too large). */
int uapi_bo_create(struct uapi_bo *bo, uint64_t size, const char *name);
/* Unmap the device view and close the memfd (client fds and mappings keep
 * the pages alive, as a dma-buf outlives its GEM handle). */
void uapi_bo_release(struct uapi_bo *bo);
/* A new fd on the bo's memory (O_CLOEXEC when cloexec): -errno on failure. */
int uapi_bo_export_fd(const struct uapi_bo *bo, int cloexec);
/* 1 when fd (any fd of this process) refers to the bo's memory, else 0. */
int uapi_bo_matches_fd(const struct uapi_bo *bo, int fd);

/* ---- devices ------------------------------------------------------------- */

/* Ops of one emulated device.  `file` is the per-open state open() made.
 * Every op returns 0 (or a value >= 0 for ioctl) or -errno; the core sets
 * errno and returns -1 to the client. */
struct uapi_device_ops {
    /* a client opened one of the device's paths with these flags */
    int (*open)(void *dev_ctx, const char *path, int flags, void **file);
    /* request and argument exactly as the client passed them */
    int (*ioctl)(void *file, unsigned long request, void *arg);
    /* mmap(len, offset) on the device fd: name the memfd and its offset to
     * map instead (the core maps it with the client's prot/flags) */
    int (*mmap_lookup)(void *file, uint64_t offset, size_t len, int *memfd, off_t *memfd_offset);
    /* the last fd of this open was closed */
    void (*close)(void *file);
};

struct uapi_device {
    const char *name;                 /* for the log: "nvdla", "rocket" */
    const char *const *paths;         /* NULL-terminated: "/dev/dri/renderD128", ... */
    const struct uapi_device_ops *ops;
    void *ctx;                        /* dev_ctx of open() */
};

/* Register a device (from the preload library's constructor).  The struct
 * must outlive the process.  Returns 0 or -errno (-ENOSPC: too many). */
int uapi_register(const struct uapi_device *dev);

/* The log on stderr ("dlasim-<device>: message"), by DLASIM_LOG: unset or
 * "errors": refused calls and failed work only (what a kernel driver would
 * put in dmesg); "0" or "none": nothing; "1", "calls" or anything else:
 * also every call (uapi_trace).  uapi_log_level() says which: 0, 1, 2. */
void uapi_log(const char *device, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void uapi_trace(const char *device, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int uapi_log_level(void);

#endif
