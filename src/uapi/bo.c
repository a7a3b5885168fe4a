/*
 * Buffer objects and the log of dlasim's user-space device emulations
 * (preload.h).  Apart from the interposition in preload.c, so a device's
 * ioctl decoder links into a test or fuzz program without interposing
 * anything there.
 */
#define _GNU_SOURCE
#include "uapi/preload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BO_BYTES ((uint64_t)1 << 40)

/* ---- buffer objects --------------------------------------------------------- */

int uapi_bo_create(struct uapi_bo *bo, uint64_t size, const char *name)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t pg = page > 0 ? (uint64_t)page : 4096;
    memset(bo, 0, sizeof *bo);
    bo->memfd = -1;
    if (size == 0) {
        return -EINVAL;
    }
    if (size > MAX_BO_BYTES) {
        return -ENOMEM;
    }
    bo->size = (size + pg - 1) / pg * pg;
    bo->memfd = memfd_create(name ? name : "dlasim-bo", MFD_CLOEXEC);
    struct stat st;
    int rc = bo->memfd < 0 ? -errno : 0;
    if (!rc && ftruncate(bo->memfd, (off_t)bo->size) != 0) {
        rc = errno == EFBIG || errno == EINVAL ? -ENOMEM : -errno;
    }
    if (!rc && fstat(bo->memfd, &st) != 0) {
        rc = -errno;
    }
    if (!rc) {
        bo->st_dev = st.st_dev;
        bo->st_ino = st.st_ino;
        void *p = mmap(NULL, (size_t)bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
                               bo->memfd, 0);
        rc = p == MAP_FAILED ? -ENOMEM : 0;
        bo->map = rc ? NULL : p;
    }
    if (rc) {
        uapi_bo_release(bo);
    }
    return rc;
}

void uapi_bo_release(struct uapi_bo *bo)
{
    if (bo->map) {
        munmap(bo->map, (size_t)bo->size);
    }
    if (bo->memfd >= 0) {
        close(bo->memfd);
    }
    memset(bo, 0, sizeof *bo);
    bo->memfd = -1;
}

int uapi_bo_export_fd(const struct uapi_bo *bo, int cloexec)
{
    int fd = fcntl(bo->memfd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
    return fd < 0 ? -errno : fd;
}

int uapi_bo_matches_fd(const struct uapi_bo *bo, int fd)
{
    struct stat st;
    return bo->memfd >= 0 && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == bo->st_dev &&
           st.st_ino == bo->st_ino;
}

/* ---- log -------------------------------------------------------------------- */

int uapi_log_level(void)
{
    const char *v = getenv("DLASIM_LOG");
    if (!v || !*v || strcmp(v, "errors") == 0) {
        return 1;
    }
    return strcmp(v, "0") == 0 || strcmp(v, "none") == 0 ? 0 : 2;
}

static void log_line(const char *device, const char *fmt, va_list ap)
{
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "dlasim-%s: ", device ? device : "uapi");
    if (n >= 0 && (size_t)n < sizeof msg) {
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    }
    size_t len = strnlen(msg, sizeof msg - 2);
    msg[len++] = '\n';
    ssize_t w = write(2, msg, len);
    (void)w;
}

void uapi_log(const char *device, const char *fmt, ...)
{
    if (uapi_log_level() >= 1) {
        va_list ap;
        va_start(ap, fmt);
        log_line(device, fmt, ap);
        va_end(ap);
    }
}

void uapi_trace(const char *device, const char *fmt, ...)
{
    if (uapi_log_level() >= 2) {
        va_list ap;
        va_start(ap, fmt);
        log_line(device, fmt, ap);
        va_end(ap);
    }
}
