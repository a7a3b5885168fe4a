/*
 * The interposition core of dlasim's preload libraries (preload.h).
 *
 * Why memfds: a client of a kernel UAPI expects real file descriptors
 * (it polls, dups, closes, passes them back in ioctls) and real shared
 * memory (what it writes through its mapping the device reads).  A memfd
 * is both, so only open/ioctl/mmap on the device node itself need
 * emulating; exported buffer fds are ordinary fds the C library handles.
 */
#define _GNU_SOURCE
#include "uapi/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEVICES 8

/* ---- the real C library functions ---------------------------------------- */

struct libc_fns {
    int (*open)(const char *, int, ...);
    int (*openat)(int, const char *, int, ...);
    int (*close)(int);
    int (*ioctl)(int, unsigned long, ...);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    int (*fcntl)(int, int, ...);
};

static struct libc_fns real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void *next_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void resolve_real(void)
{
    *(void **)&real.open = next_symbol("open");
    *(void **)&real.openat = next_symbol("openat");
    *(void **)&real.close = next_symbol("close");
    *(void **)&real.ioctl = next_symbol("ioctl");
    *(void **)&real.mmap = next_symbol("mmap");
    *(void **)&real.dup = next_symbol("dup");
    *(void **)&real.dup2 = next_symbol("dup2");
    *(void **)&real.dup3 = next_symbol("dup3");
    *(void **)&real.fcntl = next_symbol("fcntl");
}

static const struct libc_fns *libc(void)
{
    pthread_once(&real_once, resolve_real);
    return &real;
}

/* ---- registered devices and the fd table --------------------------------- */

struct device_slot {
    const struct uapi_device *dev;
    pthread_mutex_t op_lock; /* one op at a time per device */
};

/* One open() of a device path; fds dup'd from it share it. */
struct open_file {
    struct device_slot *slot;
    void *file;
    unsigned refs; /* fds naming it + ops running on it */
};

struct core {
    pthread_mutex_t lock; /* guards everything below */
    struct device_slot devices[MAX_DEVICES];
    unsigned n_devices;
    struct open_file **fds; /* indexed by fd */
    size_t n_fds;
};

static struct core core = { .lock = PTHREAD_MUTEX_INITIALIZER };

int uapi_register(const struct uapi_device *dev)
{
    if (!dev || !dev->paths || !dev->ops || !dev->ops->open) {
        return -EINVAL;
    }
    pthread_mutex_lock(&core.lock);
    int rc = -ENOSPC;
    if (core.n_devices < MAX_DEVICES) {
        struct device_slot *s = &core.devices[core.n_devices++];
        s->dev = dev;
        pthread_mutex_init(&s->op_lock, NULL);
        rc = 0;
    }
    pthread_mutex_unlock(&core.lock);
    return rc;
}

/* noinline: the C library declares open's path nonnull, and a NULL from a
 * client must still reach the kernel (EFAULT), not crash here. */
__attribute__((noinline)) static struct device_slot *device_of_path(const char *path)
{
    if (!path || path[0] != '/') {
        return NULL;
    }
    struct device_slot *found = NULL;
    pthread_mutex_lock(&core.lock);
    for (unsigned i = 0; i < core.n_devices && !found; i++) {
        for (const char *const *p = core.devices[i].dev->paths; *p && !found; p++) {
            if (strcmp(*p, path) == 0) {
                found = &core.devices[i];
            }
        }
    }
    pthread_mutex_unlock(&core.lock);
    return found;
}

/* Called with core.lock held. */
static int table_reserve(int fd)
{
    if (fd < 0) {
        return -EBADF;
    }
    if ((size_t)fd < core.n_fds) {
        return 0;
    }
    size_t n = core.n_fds ? core.n_fds : 64;
    while (n <= (size_t)fd) {
        n *= 2;
    }
    struct open_file **t = realloc(core.fds, n * sizeof *t);
    if (!t) {
        return -ENOMEM;
    }
    memset(t + core.n_fds, 0, (n - core.n_fds) * sizeof *t);
    core.fds = t;
    core.n_fds = n;
    return 0;
}

/* Called with core.lock held: the open file of fd, or NULL. */
static struct open_file *table_get(int fd)
{
    return fd >= 0 && (size_t)fd < core.n_fds ? core.fds[fd] : NULL;
}

static void file_put(struct open_file *of)
{
    pthread_mutex_lock(&core.lock);
    int last = --of->refs == 0;
    pthread_mutex_unlock(&core.lock);
    if (last) {
        if (of->slot->dev->ops->close) {
            pthread_mutex_lock(&of->slot->op_lock);
            of->slot->dev->ops->close(of->file);
            pthread_mutex_unlock(&of->slot->op_lock);
        }
        free(of);
    }
}

/* Take a reference on fd's open file for an op (NULL: not ours). */
static struct open_file *file_get(int fd)
{
    pthread_mutex_lock(&core.lock);
    struct open_file *of = table_get(fd);
    if (of) {
        of->refs++;
    }
    pthread_mutex_unlock(&core.lock);
    return of;
}

/* fd no longer names its open file (closed or replaced by dup2); the
 * device's name when it named one, else NULL. */
static const char *table_forget(int fd)
{
    pthread_mutex_lock(&core.lock);
    struct open_file *of = table_get(fd);
    if (of) {
        core.fds[fd] = NULL;
    }
    pthread_mutex_unlock(&core.lock);
    const char *name = of ? of->slot->dev->name : NULL;
    if (of) {
        file_put(of);
    }
    return name;
}

/* newfd (a fresh dup of oldfd) names oldfd's open file too. */
static void table_dup(int oldfd, int newfd)
{
    if (newfd < 0 || oldfd == newfd) {
        return;
    }
    table_forget(newfd);
    pthread_mutex_lock(&core.lock);
    struct open_file *of = table_get(oldfd);
    if (of && table_reserve(newfd) == 0) {
        of->refs++;
        core.fds[newfd] = of;
    }
    pthread_mutex_unlock(&core.lock);
}

static int fail(int neg_errno)
{
    errno = -neg_errno;
    return -1;
}

/* open() of a device path: a memfd stands for the node. */
static int open_device(struct device_slot *slot, const char *path, int flags)
{
    struct open_file *of = calloc(1, sizeof *of);
    if (!of) {
        return fail(-ENOMEM);
    }
    of->slot = slot;
    of->refs = 1;
    pthread_mutex_lock(&slot->op_lock);
    int rc = slot->dev->ops->open(slot->dev->ctx, path, flags, &of->file);
    pthread_mutex_unlock(&slot->op_lock);
    if (rc < 0) {
        uapi_log(slot->dev->name, "open(%s) refused: %s", path, strerror(-rc));
        free(of);
        return fail(rc);
    }
    int fd = memfd_create(slot->dev->name, (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd >= 0) {
        table_forget(fd); /* a stale entry of an fd closed behind our back */
    }
    pthread_mutex_lock(&core.lock);
    rc = fd < 0 ? -errno : table_reserve(fd);
    if (rc == 0) {
        core.fds[fd] = of;
    }
    pthread_mutex_unlock(&core.lock);
    if (rc < 0) {
        if (fd >= 0) {
            libc()->close(fd);
        }
        file_put(of);
        return fail(rc);
    }
    uapi_trace(slot->dev->name, "open(%s) = fd %d", path, fd);
    return fd;
}

/* ---- interposed functions -------------------------------------------------- */

#define DLASIM_EXPORT __attribute__((visibility("default")))

static int mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

DLASIM_EXPORT int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_arg(flags, ap);
    va_end(ap);
    struct device_slot *slot = device_of_path(path);
    return slot ? open_device(slot, path, flags) : libc()->open(path, flags, mode);
}

DLASIM_EXPORT int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_arg(flags, ap);
    va_end(ap);
    return open(path, flags | O_LARGEFILE, mode);
}

/* _FORTIFY_SOURCE builds call these */
DLASIM_EXPORT int __open_2(const char *path, int flags);
DLASIM_EXPORT int __open_2(const char *path, int flags)
{
    return open(path, flags);
}
DLASIM_EXPORT int __open64_2(const char *path, int flags);
DLASIM_EXPORT int __open64_2(const char *path, int flags)
{
    return open(path, flags | O_LARGEFILE);
}

DLASIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_arg(flags, ap);
    va_end(ap);
    /* device paths are absolute: dirfd does not matter for them */
    struct device_slot *slot = device_of_path(path);
    return slot ? open_device(slot, path, flags) : libc()->openat(dirfd, path, flags, mode);
}

DLASIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    int mode = mode_arg(flags, ap);
    va_end(ap);
    return openat(dirfd, path, flags | O_LARGEFILE, mode);
}

DLASIM_EXPORT int close(int fd)
{
    const char *device = table_forget(fd);
    if (device) {
        uapi_trace(device, "close(fd %d)", fd);
    }
    return libc()->close(fd);
}

DLASIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    struct open_file *of = file_get(fd);
    if (!of) {
        return libc()->ioctl(fd, request, arg);
    }
    pthread_mutex_lock(&of->slot->op_lock);
    int rc = of->slot->dev->ops->ioctl ? of->slot->dev->ops->ioctl(of->file, request, arg)
                                       : -ENOTTY;
    pthread_mutex_unlock(&of->slot->op_lock);
    file_put(of);
    return rc < 0 ? fail(rc) : rc;
}

DLASIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    struct open_file *of = file_get(fd);
    if (!of) {
        return libc()->mmap(addr, len, prot, flags, fd, off);
    }
    int memfd = -1;
    off_t memfd_off = 0;
    pthread_mutex_lock(&of->slot->op_lock);
    int rc = of->slot->dev->ops->mmap_lookup
                 ? of->slot->dev->ops->mmap_lookup(of->file, (uint64_t)off, len, &memfd, &memfd_off)
                 : -ENODEV;
    void *p = rc < 0 ? MAP_FAILED : libc()->mmap(addr, len, prot, flags, memfd, memfd_off);
    if (p == MAP_FAILED && rc == 0) {
        rc = -errno;
    }
    pthread_mutex_unlock(&of->slot->op_lock);
    if (rc < 0) {
        uapi_log(of->slot->dev->name, "mmap(fd %d, %zu bytes, offset 0x%llx) refused: %s", fd,
                 len, (unsigned long long)off, strerror(-rc));
    } else {
        uapi_trace(of->slot->dev->name, "mmap(fd %d, %zu bytes, offset 0x%llx)", fd, len,
                   (unsigned long long)off);
    }
    file_put(of);
    if (rc < 0) {
        errno = -rc;
    }
    return p;
}

DLASIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

DLASIM_EXPORT int dup(int fd)
{
    int n = libc()->dup(fd);
    table_dup(fd, n);
    return n;
}

DLASIM_EXPORT int dup2(int fd, int newfd)
{
    int n = libc()->dup2(fd, newfd);
    table_dup(fd, n);
    return n;
}

DLASIM_EXPORT int dup3(int fd, int newfd, int flags)
{
    int n = libc()->dup3(fd, newfd, flags);
    table_dup(fd, n);
    return n;
}

static int fcntl_common(int fd, int cmd, void *arg)
{
    int n = libc()->fcntl(fd, cmd, arg);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
        table_dup(fd, n);
    }
    return n;
}

DLASIM_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(fd, cmd, arg);
}

DLASIM_EXPORT int fcntl64(int fd, int cmd, ...);
DLASIM_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(fd, cmd, arg);
}
