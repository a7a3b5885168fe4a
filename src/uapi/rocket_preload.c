/*
 * libdlasim-rocket.so: a preload library that gives a process the Linux
 * rocket driver's /dev/accel/accel0 on dlasim's simulated RK3588
 * (src/uapi/rocket.c decodes the UAPI).  Not part of libdlasim.a.
 *
 *   LD_PRELOAD=libdlasim-rocket.so program ...
 *   DLASIM_CONFIG   dlasim configuration (default rk3588)
 *   DLASIM_LOG      comma-separated: ioctl (every ioctl), job (every job and
 *                   task), quiet (not even errors); errors are always printed
 *                   otherwise, as the kernel's would be in dmesg
 *   DLASIM_THREADS  dlasim worker threads (default: all cores)
 *   DLASIM_ACCEL    the device path to emulate (default /dev/accel/accel0)
 *
 * open/openat of the path return a real file descriptor (of /dev/null) that
 * stands for the device; ioctl, mmap, munmap, close, dup, dup2, dup3 and
 * fcntl(F_DUPFD*) on it are served here, everything else goes to the C
 * library (dlsym RTLD_NEXT).  Duplicates share one open file, as in the
 * kernel.  Only 64-bit clients (the drm_version pointers are 64-bit).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uapi/rocket.h"

#define MAX_FDS 4096

struct file {
    struct dla_rocket *r;
    int refs;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct file *fds[MAX_FDS]; /* the process's fd table is global too */

static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static int (*real_dup)(int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);

static void resolve(void)
{
    if (!real_openat) {
        real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
        real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
        real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
        real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
        real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
        real_dup = (int (*)(int))dlsym(RTLD_NEXT, "dup");
        real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
        real_fcntl = (int (*)(int, int, ...))dlsym(RTLD_NEXT, "fcntl");
    }
}

/* ---- the client's memory: copy_from_user / copy_to_user ------------------ */

/* process_vm_readv/writev on ourselves fail with EFAULT on unmapped memory
 * instead of faulting; where they are not available (ENOSYS, EPERM under some
 * emulators and sandboxes) a plain copy. */
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

/* ---- options and log --------------------------------------------------------- */

static int log_has(const char *word)
{
    const char *l = getenv("DLASIM_LOG");
    size_t n = strlen(word);
    for (const char *p = l; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, word, n)) {
            return 1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static void log_line(void *opaque, unsigned category, const char *msg)
{
    (void)opaque;
    fprintf(stderr, "dlasim rocket%s: %s\n", category == DLA_ROCKET_LOG_ERROR ? " error" : "", msg);
}

static const char *accel_path(void)
{
    const char *p = getenv("DLASIM_ACCEL");
    return p && *p ? p : "/dev/accel/accel0";
}

static struct file *file_of(int fd)
{
    return fd >= 0 && fd < MAX_FDS ? fds[fd] : NULL;
}

static int open_device(int flags)
{
    struct dla_rocket_options o;
    memset(&o, 0, sizeof(o));
    o.config = getenv("DLASIM_CONFIG");
    const char *t = getenv("DLASIM_THREADS");
    o.threads = t ? (unsigned)strtoul(t, NULL, 10) : 0;
    o.user = (struct dla_rocket_user){copy_from, copy_to, NULL};
    o.log_mask = log_has("quiet") ? 0 : DLA_ROCKET_LOG_ERROR;
    o.log_mask |= log_has("ioctl") ? DLA_ROCKET_LOG_IOCTL : 0;
    o.log_mask |= log_has("job") ? DLA_ROCKET_LOG_JOB : 0;
    o.log_cb = log_line;
    struct file *f = calloc(1, sizeof(*f));
    char err[256];
    if (!f || dla_rocket_open(&o, &f->r, err, sizeof(err))) {
        if (f) {
            fprintf(stderr, "dlasim rocket error: %s\n", err);
        }
        free(f);
        errno = ENODEV;
        return -1;
    }
    int fd = real_openat(AT_FDCWD, "/dev/null", O_RDWR | (flags & O_CLOEXEC));
    if (fd < 0 || fd >= MAX_FDS) {
        if (fd >= 0) {
            real_close(fd);
        }
        dla_rocket_close(f->r);
        free(f);
        errno = EMFILE;
        return -1;
    }
    f->refs = 1;
    fds[fd] = f;
    if (log_has("ioctl")) {
        fprintf(stderr, "dlasim rocket: open %s -> fd %d (dlasim %s)\n", accel_path(), fd,
                o.config ? o.config : "rk3588");
    }
    return fd;
}

/* ---- the interposed calls ------------------------------------------------------ */

static int do_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    resolve();
    if (path && !strcmp(path, accel_path())) {
        pthread_mutex_lock(&lock);
        int fd = open_device(flags);
        pthread_mutex_unlock(&lock);
        return fd;
    }
    return real_openat(dirfd, path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(AT_FDCWD, path, flags, m);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(AT_FDCWD, path, flags, m);
}

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(dirfd, path, flags, m);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t m = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(dirfd, path, flags, m);
}

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
    return do_openat(AT_FDCWD, path, flags, 0);
}

int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
    return do_openat(AT_FDCWD, path, flags, 0);
}

int __openat_2(int dirfd, const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags)
{
    return do_openat(dirfd, path, flags, 0);
}

int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    resolve();
    pthread_mutex_lock(&lock);
    struct file *f = file_of(fd);
    int rc = f ? dla_rocket_ioctl(f->r, request, (uint64_t)(uintptr_t)arg) : 0;
    pthread_mutex_unlock(&lock);
    if (!f) {
        return real_ioctl(fd, request, arg);
    }
    if (rc) {
        errno = -rc;
        return -1;
    }
    return 0;
}

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    resolve();
    pthread_mutex_lock(&lock);
    struct file *f = file_of(fd);
    void *p = NULL;
    int rc = f ? dla_rocket_mmap(f->r, (uint64_t)off, len, &p) : 0;
    pthread_mutex_unlock(&lock);
    if (!f) {
        return real_mmap(addr, len, prot, flags, fd, off);
    }
    if (rc) {
        errno = -rc;
        return MAP_FAILED;
    }
    return p; /* the BO's memory itself: the device model reads and writes it */
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off);
}

int munmap(void *addr, size_t len)
{
    resolve();
    int ours = 0;
    pthread_mutex_lock(&lock);
    for (int fd = 0; fd < MAX_FDS && !ours; fd++) {
        ours = fds[fd] && dla_rocket_owns(fds[fd]->r, addr, len);
    }
    pthread_mutex_unlock(&lock);
    return ours ? 0 : real_munmap(addr, len); /* BO memory lives until the file closes */
}

static void release(int fd)
{
    struct file *f = fds[fd];
    fds[fd] = NULL;
    if (f && --f->refs == 0) {
        dla_rocket_close(f->r);
        free(f);
    }
}

int close(int fd)
{
    resolve();
    pthread_mutex_lock(&lock);
    if (file_of(fd)) {
        release(fd);
    }
    pthread_mutex_unlock(&lock);
    return real_close(fd);
}

/* newfd now stands for the same open file as oldfd (when it is ours). */
static int share(int oldfd, int newfd)
{
    if (newfd < 0) {
        return newfd;
    }
    pthread_mutex_lock(&lock);
    struct file *f = file_of(oldfd);
    if (f && newfd != oldfd) {
        if (newfd >= MAX_FDS) {
            pthread_mutex_unlock(&lock);
            real_close(newfd);
            errno = EMFILE;
            return -1;
        }
        release(newfd);
        f->refs++;
        fds[newfd] = f;
    } else if (!f && newfd != oldfd && file_of(newfd)) {
        release(newfd); /* dup2 over one of ours closes it */
    }
    pthread_mutex_unlock(&lock);
    return newfd;
}

int dup(int fd)
{
    resolve();
    return share(fd, real_dup(fd));
}

int dup2(int fd, int newfd)
{
    resolve();
    if (fd == newfd) {
        return real_fcntl(fd, F_GETFD) < 0 ? -1 : newfd;
    }
    return share(fd, real_dup3(fd, newfd, 0));
}

int dup3(int fd, int newfd, int flags)
{
    resolve();
    return share(fd, real_dup3(fd, newfd, flags));
}

int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    resolve();
    int rc = real_fcntl(fd, cmd, arg);
    return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? share(fd, rc) : rc;
}

int fcntl64(int fd, int cmd, ...);
int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return fcntl(fd, cmd, arg);
}
