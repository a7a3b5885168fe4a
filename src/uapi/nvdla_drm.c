/*
 * NVIDIA's NVDLA DRM driver (nvdla/sw kmd/port/linux) in user space: the
 * ioctl decoder and buffer objects of libdlasim-nvdla.so
 * (docs/nvdla-uapi.md).  What each call does, as the KMD:
 *
 *   GEM_CREATE   a zeroed buffer of size rounded up to the page, at a device
 *                address (IOVA) in the KMD's 1 GiB window at 0xC0000000;
 *                flags are ignored.
 *   PRIME_HANDLE_TO_FD  a real fd on the buffer's memory (dma-buf).
 *   GEM_MMAP     the offset at which mmap() of the DRM fd maps the buffer.
 *   GEM_DESTROY  the handle goes; mappings and exported fds keep the pages.
 *   SUBMIT       one task: an address list of {dma-buf fd, offset}; the
 *                network descriptor at entry 0 is executed by dlasim's
 *                firmware-equivalent runtime (dlasim_rt_run_task), blocking
 *                until done, as the KMD's nvdla_task_submit waits.
 *
 * Stricter than the KMD where the KMD would read out of bounds or ignore
 * input: num_tasks must be 1 (the KMD reads only task 0), every offset must
 * lie inside its buffer, every address-list fd must be one of this device's
 * buffers.  Every refusal is an errno plus a log line saying why.
 */
#define _GNU_SOURCE
#include "uapi/nvdla_drm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlasim/dlasim.h"
#include "dlasim/runtime.h"
#include "uapi/preload.h"

#define IOVA_BASE 0xC0000000ull /* the KMD's dma_declare_coherent_memory window */
#define IOVA_SIZE 0x40000000ull
#define MMAP_BASE 0x100000000ull /* fake mmap offsets of the DRM fd */
#define LOG_NAME "nvdla"

struct nv_bo {
    const void *owner; /* the nvdla_file holding its handle */
    uint32_t handle;
    int mmap_ready;    /* GEM_MMAP was asked */
    uint64_t iova;
    struct uapi_bo mem;
};

struct nvdla_drm {
    struct dlasim_dev *dev;
    struct nvdla_drm_options opt;
    char *config, *record_dir;
    struct nv_bo **bos; /* sorted by iova */
    size_t n_bos, cap_bos;
    uint64_t bo_bytes;
    unsigned n_submits;
    char err[1024];
};

struct nvdla_file {
    struct nvdla_drm *drm;
    uint32_t next_handle;
};

/* ---- device memory: the buffers at their IOVAs ----------------------------------- */

static struct nv_bo *bo_at(const struct nvdla_drm *d, uint64_t addr)
{
    size_t lo = 0, hi = d->n_bos;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct nv_bo *b = d->bos[mid];
        if (addr < b->iova) {
            hi = mid;
        } else if (addr - b->iova >= b->mem.size) {
            lo = mid + 1;
        } else {
            return d->bos[mid];
        }
    }
    return NULL;
}

/* The bytes [addr, addr+len) of one buffer, or NULL. */
static uint8_t *dma_ptr(const struct nvdla_drm *d, uint64_t addr, size_t len)
{
    struct nv_bo *b = bo_at(d, addr);
    if (!b || len > b->mem.size - (addr - b->iova)) {
        return NULL;
    }
    return b->mem.map + (addr - b->iova);
}

static int dma_read(void *opaque, uint64_t addr, void *dst, size_t len)
{
    const uint8_t *p = dma_ptr(opaque, addr, len);
    if (!p) {
        return DLASIM_ERR_MEM;
    }
    memcpy(dst, p, len);
    return 0;
}

static int dma_write(void *opaque, uint64_t addr, const void *src, size_t len)
{
    uint8_t *p = dma_ptr(opaque, addr, len);
    if (!p) {
        return DLASIM_ERR_MEM;
    }
    memcpy(p, src, len);
    return 0;
}

static const struct dlasim_mem_ops dma_ops = { dma_read, dma_write };

/* ---- device ------------------------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

int nvdla_drm_create(const struct nvdla_drm_options *opt, struct nvdla_drm **out, char *err,
                     size_t errlen)
{
    *out = NULL;
    struct nvdla_drm *d = calloc(1, sizeof *d);
    if (!d) {
        return -ENOMEM;
    }
    if (opt) {
        d->opt = *opt;
    }
    d->config = dup_or_null(d->opt.config ? d->opt.config : "nv_small");
    d->record_dir = dup_or_null(d->opt.record_trace_dir);
    if (!d->config || (d->opt.record_trace_dir && !d->record_dir)) {
        nvdla_drm_destroy(d);
        return -ENOMEM;
    }
    if (!d->opt.max_bo_bytes || d->opt.max_bo_bytes > IOVA_SIZE) {
        d->opt.max_bo_bytes = IOVA_SIZE;
    }
    struct dlasim_options o;
    memset(&o, 0, sizeof o);
    o.config = d->config;
    o.dbb_ops = &dma_ops;
    o.dbb_opaque = d;
    o.max_layer_work = d->opt.max_layer_work;
    o.threads = d->opt.threads;
    int rc = dlasim_create(&o, &d->dev, err, errlen);
    if (rc) {
        nvdla_drm_destroy(d);
        return rc == DLASIM_ERR_NOMEM ? -ENOMEM : -EINVAL;
    }
    *out = d;
    return 0;
}

static void bo_free(struct nv_bo *b)
{
    uapi_bo_release(&b->mem);
    free(b);
}

void nvdla_drm_destroy(struct nvdla_drm *d)
{
    if (!d) {
        return;
    }
    for (size_t i = 0; i < d->n_bos; i++) {
        bo_free(d->bos[i]);
    }
    free(d->bos);
    dlasim_destroy(d->dev);
    free(d->config);
    free(d->record_dir);
    free(d);
}

int nvdla_drm_options_from_env(struct nvdla_drm_options *opt, char *err, size_t errlen)
{
    memset(opt, 0, sizeof *opt);
    opt->config = getenv("DLASIM_CONFIG");
    opt->record_trace_dir = getenv("DLASIM_RECORD_TRACE");
    const char *v = getenv("DLASIM_NVDLA_INTERFACE");
    if (v && *v) {
        const char *minor = strncmp(v, "0.", 2) == 0 ? v + 2 : v;
        char *end;
        unsigned long m = strtoul(minor, &end, 10);
        if (*end || end == minor || m < 10 || m > 12) {
            snprintf(err, errlen,
                     "DLASIM_NVDLA_INTERFACE=%s: want the firmware interface version 0.10, "
                     "0.11 or 0.12",
                     v);
            return -EINVAL;
        }
        opt->interface_minor = (unsigned)m;
    }
    return 0;
}

/* ---- buffers ------------------------------------------------------------------------ */

/* The lowest free IOVA range of size bytes (first fit), or 0. */
static uint64_t iova_find(const struct nvdla_drm *d, uint64_t size, size_t *pos)
{
    uint64_t at = IOVA_BASE;
    for (size_t i = 0; i <= d->n_bos; i++) {
        uint64_t end = i < d->n_bos ? d->bos[i]->iova : IOVA_BASE + IOVA_SIZE;
        if (end - at >= size) {
            *pos = i;
            return at;
        }
        if (i < d->n_bos) {
            at = d->bos[i]->iova + d->bos[i]->mem.size;
        }
    }
    return 0;
}

static struct nv_bo *bo_of_handle(const struct nvdla_file *f, uint32_t handle)
{
    const struct nvdla_drm *d = f->drm;
    for (size_t i = 0; handle && i < d->n_bos; i++) {
        if (d->bos[i]->owner == f && d->bos[i]->handle == handle) {
            return d->bos[i];
        }
    }
    return NULL;
}

static int bo_insert(struct nvdla_drm *d, struct nv_bo *b, size_t pos)
{
    if (d->n_bos == d->cap_bos) {
        size_t cap = d->cap_bos ? d->cap_bos * 2 : 64;
        struct nv_bo **t = realloc(d->bos, cap * sizeof *t);
        if (!t) {
            return -ENOMEM;
        }
        d->bos = t;
        d->cap_bos = cap;
    }
    memmove(&d->bos[pos + 1], &d->bos[pos], (d->n_bos - pos) * sizeof *d->bos);
    d->bos[pos] = b;
    d->n_bos++;
    d->bo_bytes += b->mem.size;
    return 0;
}

static void bo_remove(struct nvdla_drm *d, struct nv_bo *b)
{
    for (size_t i = 0; i < d->n_bos; i++) {
        if (d->bos[i] == b) {
            memmove(&d->bos[i], &d->bos[i + 1], (d->n_bos - i - 1) * sizeof *d->bos);
            d->n_bos--;
            d->bo_bytes -= b->mem.size;
            bo_free(b);
            return;
        }
    }
}

static int gem_create(struct nvdla_file *f, struct nvdla_uapi_gem_create_args *a)
{
    struct nvdla_drm *d = f->drm;
    if (a->size == 0) {
        uapi_log(LOG_NAME, "GEM_CREATE: size 0");
        return -EINVAL;
    }
    size_t pos = 0;
    uint64_t iova = 0;
    if (a->size <= d->opt.max_bo_bytes - d->bo_bytes) {
        iova = iova_find(d, (a->size + 4095) & ~4095ull, &pos);
    }
    if (!iova || f->next_handle == UINT32_MAX) {
        uapi_log(LOG_NAME, "GEM_CREATE: %llu bytes do not fit in the device memory (%llu of "
                 "%llu bytes in use)", (unsigned long long)a->size,
                 (unsigned long long)d->bo_bytes, (unsigned long long)d->opt.max_bo_bytes);
        return -ENOMEM;
    }
    struct nv_bo *b = calloc(1, sizeof *b);
    if (!b) {
        return -ENOMEM;
    }
    int rc = uapi_bo_create(&b->mem, a->size, "dlasim-nvdla-bo");
    if (!rc && b->mem.size > d->opt.max_bo_bytes - d->bo_bytes) {
        rc = -ENOMEM; /* the page is larger than 4 KiB */
    }
    if (rc) {
        uapi_log(LOG_NAME, "GEM_CREATE: %llu bytes: %s", (unsigned long long)a->size,
                 strerror(-rc));
        bo_free(b);
        return rc;
    }
    b->owner = f;
    b->iova = iova;
    b->handle = ++f->next_handle;
    rc = bo_insert(d, b, pos);
    if (rc) {
        bo_free(b);
        return rc;
    }
    a->handle = b->handle;
    uapi_trace(LOG_NAME, "GEM_CREATE: %llu bytes -> handle %u at 0x%llx",
               (unsigned long long)a->size, b->handle, (unsigned long long)b->iova);
    return 0;
}

static int gem_mmap(struct nvdla_file *f, struct nvdla_uapi_gem_map_offset_args *a)
{
    struct nv_bo *b = bo_of_handle(f, a->handle);
    if (!b) {
        uapi_log(LOG_NAME, "GEM_MMAP: no buffer has handle %u", a->handle);
        return -EINVAL;
    }
    b->mmap_ready = 1;
    a->offset = MMAP_BASE + (b->iova - IOVA_BASE);
    uapi_trace(LOG_NAME, "GEM_MMAP: handle %u -> offset 0x%llx", a->handle,
               (unsigned long long)a->offset);
    return 0;
}

static int gem_destroy(struct nvdla_file *f, const struct nvdla_uapi_gem_destroy_args *a)
{
    struct nv_bo *b = bo_of_handle(f, a->handle);
    if (!b) {
        uapi_log(LOG_NAME, "GEM_DESTROY: no buffer has handle %u", a->handle);
        return -EINVAL;
    }
    uapi_trace(LOG_NAME, "GEM_DESTROY: handle %u", a->handle);
    bo_remove(f->drm, b);
    return 0;
}

static int prime_handle_to_fd(struct nvdla_file *f, struct nvdla_uapi_prime_handle *a)
{
    const uint32_t allowed = O_CLOEXEC | O_RDWR; /* DRM_CLOEXEC | DRM_RDWR */
    if (a->flags & ~allowed) {
        uapi_log(LOG_NAME, "PRIME_HANDLE_TO_FD: flags 0x%x (only DRM_CLOEXEC, DRM_RDWR)",
                 a->flags);
        return -EINVAL;
    }
    struct nv_bo *b = bo_of_handle(f, a->handle);
    if (!b) {
        uapi_log(LOG_NAME, "PRIME_HANDLE_TO_FD: no buffer has handle %u", a->handle);
        return -ENOENT;
    }
    int fd = uapi_bo_export_fd(&b->mem, (a->flags & O_CLOEXEC) != 0);
    if (fd < 0) {
        uapi_log(LOG_NAME, "PRIME_HANDLE_TO_FD: handle %u: %s", a->handle, strerror(-fd));
        return fd;
    }
    a->fd = fd;
    uapi_trace(LOG_NAME, "PRIME_HANDLE_TO_FD: handle %u -> fd %d", a->handle, fd);
    return 0;
}

/* ---- submit ------------------------------------------------------------------------- */

/* The buffer an address-list fd refers to (any file's: PRIME imports). */
static int bo_of_fd(const struct nvdla_drm *d, uint32_t fd, struct nv_bo **out)
{
    if (fd > INT32_MAX || fcntl((int)fd, F_GETFD) < 0) {
        return -EBADF;
    }
    for (size_t i = 0; i < d->n_bos; i++) {
        if (uapi_bo_matches_fd(&d->bos[i]->mem, (int)fd)) {
            *out = d->bos[i];
            return 0;
        }
    }
    return -EINVAL;
}

/* Address list -> device addresses and the bytes after each. */
static int resolve_addresses(const struct nvdla_drm *d, const struct nvdla_uapi_mem_handle *h,
                             uint32_t n, uint64_t *addrs, uint64_t *sizes)
{
    uint32_t last_fd = UINT32_MAX;
    struct nv_bo *b = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!b || h[i].handle != last_fd) {
            int rc = bo_of_fd(d, h[i].handle, &b);
            if (rc) {
                uapi_log(LOG_NAME, "SUBMIT: address_list[%u]: fd %u %s", i, h[i].handle,
                         rc == -EBADF ? "is not open" : "is not a buffer of this device");
                return rc;
            }
            last_fd = h[i].handle;
        }
        if (h[i].offset >= b->mem.size) {
            uapi_log(LOG_NAME, "SUBMIT: address_list[%u]: offset %llu is outside fd %u's "
                     "%llu-byte buffer", i, (unsigned long long)h[i].offset, h[i].handle,
                     (unsigned long long)b->mem.size);
            return -EINVAL;
        }
        addrs[i] = b->iova + h[i].offset;
        sizes[i] = b->mem.size - h[i].offset;
    }
    return 0;
}

static int errno_of_status(int status)
{
    switch (status) {
    case DLASIM_ERR_NOMEM:
        return -ENOMEM;
    case DLASIM_ERR_MEM:
        return -EFAULT;
    case DLASIM_ERR_TIMEOUT:
        return -ETIMEDOUT;
    case DLASIM_ERR_INVAL:
    case DLASIM_ERR_PARSE:
    case DLASIM_ERR_UNSUPPORTED:
        return -EINVAL;
    default:
        return -EIO;
    }
}

static int run_task(struct nvdla_drm *d, const uint64_t *addrs, const uint64_t *sizes,
                    uint32_t n)
{
    struct dlasim_rt_task task = { addrs, sizes, (uint16_t)n, (uint8_t)d->opt.interface_minor };
    struct dlasim_rt_options ro;
    char name[32];
    memset(&ro, 0, sizeof ro);
    if (d->record_dir) {
        snprintf(name, sizeof name, "submit_%u", d->n_submits);
        ro.record_trace_dir = d->record_dir;
        ro.record_trace_name = name;
    }
    d->n_submits++;
    int rc = dlasim_rt_run_task(d->dev, &task, &ro, d->err, sizeof d->err);
    if (rc) {
        uapi_log(LOG_NAME, "SUBMIT: task failed (%s): %s", dlasim_status_name(rc), d->err);
        dlasim_reset(d->dev); /* the next submit starts from an idle device */
        return errno_of_status(rc);
    }
    uapi_trace(LOG_NAME, "SUBMIT: task of %u addresses done", n);
    return 0;
}

static int submit(struct nvdla_file *f, const struct nvdla_uapi_submit_args *a)
{
    if (!a->tasks) {
        uapi_log(LOG_NAME, "SUBMIT: tasks is NULL");
        return -EINVAL;
    }
    if (a->num_tasks != 1) {
        uapi_log(LOG_NAME, "SUBMIT: num_tasks=%u; the KMD runs one task per submit",
                 a->num_tasks);
        return -EINVAL;
    }
    const struct nvdla_uapi_submit_task *t = (const void *)(uintptr_t)a->tasks;
    if (t->num_addresses == 0 || t->num_addresses > NVDLA_UAPI_MAX_BUFFERS_PER_TASK) {
        uapi_log(LOG_NAME, "SUBMIT: num_addresses=%u (want 1..%u)", t->num_addresses,
                 NVDLA_UAPI_MAX_BUFFERS_PER_TASK);
        return -EINVAL;
    }
    if (!t->address_list) {
        uapi_log(LOG_NAME, "SUBMIT: address_list is NULL");
        return -EFAULT;
    }
    uint64_t *addrs = calloc(t->num_addresses, sizeof *addrs);
    uint64_t *sizes = calloc(t->num_addresses, sizeof *sizes);
    int rc = addrs && sizes ? 0 : -ENOMEM;
    if (!rc) {
        rc = resolve_addresses(f->drm, (const void *)(uintptr_t)t->address_list,
                               t->num_addresses, addrs, sizes);
    }
    if (!rc) {
        rc = run_task(f->drm, addrs, sizes, t->num_addresses);
    }
    free(addrs);
    free(sizes);
    return rc;
}

/* ---- the file operations ------------------------------------------------------------ */

int nvdla_drm_open(struct nvdla_drm *d, void **file)
{
    struct nvdla_file *f = calloc(1, sizeof *f);
    if (!f) {
        return -ENOMEM;
    }
    f->drm = d;
    *file = f;
    return 0;
}

void nvdla_drm_close(void *file)
{
    struct nvdla_file *f = file;
    struct nvdla_drm *d = f->drm;
    for (size_t i = d->n_bos; i-- > 0;) { /* drm_release: the file's handles go */
        if (d->bos[i]->owner == f) {
            bo_remove(d, d->bos[i]);
        }
    }
    free(f);
}

int nvdla_drm_ioctl(void *file, unsigned long request, void *arg)
{
    if (!arg) {
        uapi_log(LOG_NAME, "ioctl 0x%lx: NULL argument", request);
        return -EFAULT;
    }
    switch (request) {
    case NVDLA_UAPI_IOCTL_GEM_CREATE:
        return gem_create(file, arg);
    case NVDLA_UAPI_IOCTL_GEM_MMAP:
        return gem_mmap(file, arg);
    case NVDLA_UAPI_IOCTL_GEM_DESTROY:
        return gem_destroy(file, arg);
    case NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD:
        return prime_handle_to_fd(file, arg);
    case NVDLA_UAPI_IOCTL_SUBMIT:
        return submit(file, arg);
    default:
        uapi_log(LOG_NAME, "ioctl 0x%lx: not an NVDLA or supported DRM ioctl", request);
        return -ENOTTY;
    }
}

int nvdla_drm_mmap_lookup(void *file, uint64_t offset, size_t len, int *memfd,
                          off_t *memfd_offset)
{
    struct nvdla_file *f = file;
    const struct nvdla_drm *d = f->drm;
    uint64_t iova = offset - MMAP_BASE + IOVA_BASE;
    struct nv_bo *b = offset >= MMAP_BASE ? bo_at(d, iova) : NULL;
    if (!b || b->owner != f || !b->mmap_ready || b->iova != iova || len == 0 ||
        len > b->mem.size) {
        uapi_log(LOG_NAME, "mmap: offset 0x%llx, %zu bytes: no buffer of this file was "
                 "GEM_MMAP'd there with at least that size", (unsigned long long)offset, len);
        return -EINVAL;
    }
    *memfd = b->mem.memfd;
    *memfd_offset = 0;
    return 0;
}
