/*
 * libdlasim-rocket.so: the Linux rocket accel driver (RK3588 NPU) in user
 * space, for LD_PRELOAD in front of Mesa's rocket Gallium driver and its
 * Teflon TFLite delegate (docs/teflon.md).  Registers /dev/accel/accel0 with
 * the interposition core (preload.c); every open is its own drm file
 * (src/uapi/rocket.c) on its own simulated RK3588.  Environment:
 *   DLASIM_CONFIG   dlasim configuration (default rk3588)
 *   DLASIM_LOG      unset: errors only; 0/none: nothing; 1/calls: every
 *                   ioctl, job and task too (src/uapi/preload.h)
 *   DLASIM_THREADS  dlasim worker threads (default: all cores)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uapi/preload.h"
#include "uapi/rocket.h"

/* copy_from_user/copy_to_user on our own process: process_vm_readv/writev
 * fail with EFAULT on unmapped memory instead of faulting; where they are
 * refused (ENOSYS, EPERM: some emulators and sandboxes) a plain copy. */
static int self_copy(void *dst, const void *src, size_t len, int to_user)
{
    struct iovec local = {to_user ? (void *)(uintptr_t)src : dst, len};
    struct iovec remote = {to_user ? dst : (void *)(uintptr_t)src, len};
    ssize_t n = to_user ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0)
                        : process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (n == (ssize_t)len) {
        return 0;
    }
    if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
        memcpy(dst, src, len);
        return 0;
    }
    return -EFAULT;
}

static int copy_from(void *opaque, void *dst, uint64_t uaddr, size_t len)
{
    (void)opaque;
    return self_copy(dst, (const void *)(uintptr_t)uaddr, len, 0);
}

static int copy_to(void *opaque, uint64_t uaddr, const void *src, size_t len)
{
    (void)opaque;
    return self_copy((void *)(uintptr_t)uaddr, src, len, 1);
}

static void log_line(void *opaque, unsigned category, const char *msg)
{
    (void)opaque;
    if (category == DLA_ROCKET_LOG_ERROR) {
        uapi_log("rocket", "%s", msg);
    } else {
        uapi_trace("rocket", "%s", msg);
    }
}

static int glue_open(void *ctx, const char *path, int flags, void **file)
{
    (void)ctx;
    (void)flags;
    struct dla_rocket_options o;
    memset(&o, 0, sizeof(o));
    o.config = getenv("DLASIM_CONFIG");
    const char *t = getenv("DLASIM_THREADS");
    o.threads = t ? (unsigned)strtoul(t, NULL, 10) : 0;
    o.user = (struct dla_rocket_user){copy_from, copy_to, NULL};
    int level = uapi_log_level();
    o.log_mask = level >= 1 ? DLA_ROCKET_LOG_ERROR : 0;
    o.log_mask |= level >= 2 ? DLA_ROCKET_LOG_IOCTL | DLA_ROCKET_LOG_JOB : 0;
    o.log_cb = log_line;
    char err[256] = "";
    if (dla_rocket_open(&o, (struct dla_rocket **)file, err, sizeof(err))) {
        uapi_log("rocket", "cannot create the device for %s: %s", path, err);
        return -ENODEV;
    }
    uapi_trace("rocket", "open %s (dlasim %s)", path, o.config ? o.config : "rk3588");
    return 0;
}

static int glue_ioctl(void *file, unsigned long request, void *arg)
{
    return dla_rocket_ioctl(file, request, (uint64_t)(uintptr_t)arg);
}

static int glue_mmap(void *file, uint64_t offset, size_t len, int *memfd, off_t *memfd_offset)
{
    *memfd_offset = 0;
    return dla_rocket_mmap(file, offset, len, memfd);
}

static void glue_close(void *file)
{
    dla_rocket_close(file);
}

static const struct uapi_device_ops rocket_ops = {glue_open, glue_ioctl, glue_mmap, glue_close};
static const char *const rocket_paths[] = {"/dev/accel/accel0", NULL};
static const struct uapi_device rocket_device = {"rocket", rocket_paths, &rocket_ops, NULL};

__attribute__((constructor)) static void rocket_preload_init(void)
{
    if (uapi_register(&rocket_device) != 0) {
        uapi_log("rocket", "cannot register /dev/accel/accel0");
    }
}
