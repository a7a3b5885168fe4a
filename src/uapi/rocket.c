/*
 * The rocket UAPI on dlasim's RK3588 (interface: src/uapi/rocket.h).
 *
 * As drivers/accel/rocket does it (Linux 6.18):
 *  - CREATE_BO: a zeroed buffer of the size rounded up to pages, placed at
 *    the lowest free page-aligned NPU address of this file's address space
 *    (rocket_gem.c: drm_mm_insert_node_generic, PAGE_SIZE alignment), a GEM
 *    handle (from 1) and an mmap offset;
 *  - SUBMIT: job_count 0 is a no-op; job_struct_size smaller than the job
 *    struct or reserved != 0 is -EINVAL; an unreadable job array -EFAULT;
 *    then every job on its own, its errors not returned (rocket_job.c
 *    rocket_ioctl_submit ignores rocket_ioctl_submit_job's result): a job
 *    with no tasks, a task struct smaller than {regcmd, regcmd_count}, a task
 *    with regcmd_count 0, an unreadable array or an unknown BO handle is
 *    dropped, which the log says;
 *  - a job's tasks run in order on one core, each kicked alone as
 *    rocket_job_hw_submit does it (dlasim_rk_kick: TASK_NUMBER 1, the DPU
 *    interrupts), until the DPU interrupt (rocket_job_irq_handler); a task
 *    that ends without it is the kernel's 500 ms timeout: the job stops and
 *    the core is reset.  Jobs go to the three cores in turn.  SUBMIT returns
 *    when the jobs are done: the fences are signalled, PREP_BO never waits;
 *  - PREP_BO, FINI_BO: reserved != 0 -EINVAL, unknown handle -ENOENT;
 *  - GEM_CLOSE: unknown handle -EINVAL (drm_gem_handle_delete); the BO's
 *    memory is a memfd (src/uapi/bo.c), so a client mapping keeps its pages;
 *  - VERSION: name "rocket", as drm_copy_field copies it (the length is
 *    always the full one, at most the given length is copied).
 * The NPU reaches BO memory through dlasim's memory callbacks; an address in
 * no BO is a DMA error (the IOMMU fault the silicon would take).
 */
#include "uapi/rocket.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"
#include "regs/gen/rk3588_regs.h"
#include "uapi/preload.h"

#define PAGE 4096u
#define BO_BASE 0x00100000u       /* first NPU address handed out */
#define ADDR_LIMIT 0xfffff000u    /* regcmd addresses are 32-bit */
#define MMAP_BASE 0x100000000ull  /* mmap offsets: MMAP_BASE + NPU address */
#define MAX_ARRAY 65536u          /* jobs, tasks or handles in one SUBMIT array */

struct bo {
    uint32_t handle;
    uint32_t dma, size;  /* size: page-rounded */
    struct uapi_bo ub;   /* memfd-backed: ub.map is the device's view */
};

struct dla_rocket {
    struct dla_rocket_options o;
    struct dlasim_dev *dev;
    struct bo *bos;      /* sorted by dma */
    size_t nbos, cap;
    uint32_t next_handle;
    uint64_t bo_bytes;
    unsigned next_core;
    struct dla_rocket_stats stats;
};

static void logf_(struct dla_rocket *r, unsigned cat, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void logf_(struct dla_rocket *r, unsigned cat, const char *fmt, ...)
{
    if (!(r->o.log_mask & cat) || !r->o.log_cb) {
        return;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    r->o.log_cb(r->o.log_opaque, cat, msg);
}

/* ---- BOs and the NPU address space ---------------------------------------- */

/* Index of the BO holding NPU address a, or nbos. */
static size_t bo_at(const struct dla_rocket *r, uint64_t a)
{
    size_t lo = 0, hi = r->nbos;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a < r->bos[mid].dma) {
            hi = mid;
        } else if (a >= (uint64_t)r->bos[mid].dma + r->bos[mid].size) {
            lo = mid + 1;
        } else {
            return mid;
        }
    }
    return r->nbos;
}

static struct bo *bo_by_handle(struct dla_rocket *r, uint32_t handle)
{
    for (size_t i = 0; handle && i < r->nbos; i++) {
        if (r->bos[i].handle == handle) {
            return &r->bos[i];
        }
    }
    return NULL;
}

/* DMA through the BOs; a range may run across adjacent BOs, as their IOMMU
 * mappings are contiguous. */
static int dma(struct dla_rocket *r, uint64_t addr, uint8_t *host, size_t len, int write)
{
    while (len) {
        size_t i = bo_at(r, addr);
        if (i == r->nbos) {
            return DLASIM_ERR_MEM;
        }
        struct bo *b = &r->bos[i];
        size_t off = (size_t)(addr - b->dma), n = b->size - off < len ? b->size - off : len;
        if (write) {
            memcpy(b->ub.map + off, host, n);
        } else {
            memcpy(host, b->ub.map + off, n);
        }
        addr += n;
        host += n;
        len -= n;
    }
    return 0;
}

static int mem_read(void *opaque, uint64_t addr, void *dst, size_t len)
{
    return dma(opaque, addr, dst, len, 0);
}

static int mem_write(void *opaque, uint64_t addr, const void *src, size_t len)
{
    return dma(opaque, addr, (uint8_t *)(uintptr_t)src, len, 1);
}

static const struct dlasim_mem_ops bo_mem_ops = {mem_read, mem_write};

/* Lowest free page-aligned range of `size` bytes: its index in bos and address. */
static int find_space(const struct dla_rocket *r, uint32_t size, size_t *at, uint32_t *addr)
{
    uint64_t a = BO_BASE;
    for (size_t i = 0; i <= r->nbos; i++) {
        uint64_t next = i < r->nbos ? r->bos[i].dma : ADDR_LIMIT;
        if (next >= a && next - a >= size) {
            *at = i;
            *addr = (uint32_t)a;
            return 0;
        }
        if (i < r->nbos) {
            a = (uint64_t)r->bos[i].dma + r->bos[i].size;
        }
    }
    return -ENOMEM;
}

static int create_bo(struct dla_rocket *r, struct dla_rocket_create_bo *a)
{
    uint64_t size = ((uint64_t)a->size + PAGE - 1) / PAGE * PAGE;
    uint64_t limit = r->o.max_bo_bytes ? r->o.max_bo_bytes : (1u << 30);
    if (size == 0) {
        return -EINVAL; /* drm_gem_shmem_create of size 0 */
    }
    if (size > limit || r->bo_bytes + size > limit) {
        logf_(r, DLA_ROCKET_LOG_ERROR, "CREATE_BO of %u bytes: beyond the %llu bytes of BO memory "
              "the emulation allows", a->size, (unsigned long long)limit);
        return -ENOMEM;
    }
    size_t at;
    uint32_t addr;
    if (find_space(r, (uint32_t)size, &at, &addr)) {
        return -ENOMEM;
    }
    if (r->nbos == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct bo *nb = realloc(r->bos, cap * sizeof(*nb));
        if (!nb) {
            return -ENOMEM;
        }
        r->bos = nb;
        r->cap = cap;
    }
    struct uapi_bo ub;
    int rc = uapi_bo_create(&ub, size, "dlasim-rocket-bo");
    if (rc) {
        return rc;
    }
    memmove(&r->bos[at + 1], &r->bos[at], (r->nbos - at) * sizeof(*r->bos));
    r->bos[at] = (struct bo){++r->next_handle, addr, (uint32_t)size, ub};
    r->nbos++;
    r->bo_bytes += size;
    a->handle = r->bos[at].handle;
    a->dma_address = addr;
    a->offset = MMAP_BASE + addr;
    return 0;
}

static void drop_bo(struct dla_rocket *r, size_t i)
{
    r->bo_bytes -= r->bos[i].size;
    uapi_bo_release(&r->bos[i].ub);
    memmove(&r->bos[i], &r->bos[i + 1], (r->nbos - i - 1) * sizeof(*r->bos));
    r->nbos--;
}

static int gem_close(struct dla_rocket *r, const struct dla_drm_gem_close *a)
{
    struct bo *b = bo_by_handle(r, a->handle);
    if (!b) {
        return -EINVAL;
    }
    drop_bo(r, (size_t)(b - r->bos));
    return 0;
}

static int prep_fini(struct dla_rocket *r, uint32_t handle, uint32_t reserved)
{
    if (reserved) {
        return -EINVAL;
    }
    return bo_by_handle(r, handle) ? 0 : -ENOENT;
}

/* ---- jobs ---------------------------------------------------------------------- */

static int copy_from(struct dla_rocket *r, void *dst, uint64_t uaddr, size_t len)
{
    if (!len) {
        return 0;
    }
    if (!r->o.user.copy_from || !uaddr) {
        return -EFAULT;
    }
    return r->o.user.copy_from(r->o.user.opaque, dst, uaddr, len) ? -EFAULT : 0;
}

/* drm_gem_objects_lookup: every handle must name a BO of this file. */
static int check_handles(struct dla_rocket *r, uint64_t uptr, uint32_t count, const char *what)
{
    if (count > MAX_ARRAY) {
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t h;
        if (copy_from(r, &h, uptr + 4ull * i, 4)) {
            return -EFAULT;
        }
        if (!bo_by_handle(r, h)) {
            logf_(r, DLA_ROCKET_LOG_ERROR, "SUBMIT: %s BO handle %u (entry %u) is not open", what, h, i);
            return -ENOENT;
        }
    }
    return 0;
}

/* One task, kicked and run as rocket_job_hw_submit and the IRQ handler do:
 * 0 when it ended with the DPU interrupt. */
static int run_task(struct dla_rocket *r, unsigned core, const struct dla_rocket_task *t,
                    uint64_t job, uint32_t i)
{
    r->stats.tasks++;
    int rc = dlasim_rk_kick(r->dev, core, t->regcmd, t->regcmd_count, 1, DLASIM_RK_IRQ_DPU);
    if (!rc) {
        rc = dlasim_run(r->dev);
    }
    uint32_t raw = 0;
    dlasim_csb_read(r->dev, core * DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_RAW_STATUS, &raw);
    if (rc) {
        logf_(r, DLA_ROCKET_LOG_ERROR, "job %llu task %u (regcmd 0x%x, %u entries) on core %u: %s",
              (unsigned long long)job, i, t->regcmd, t->regcmd_count, core, dlasim_last_error(r->dev));
    }
    if (raw & (DLASIM_RK_IRQ_DMA_READ_ERROR | DLASIM_RK_IRQ_DMA_WRITE_ERROR)) {
        logf_(r, DLA_ROCKET_LOG_ERROR, "job %llu task %u on core %u: DMA %s error (an NPU address in "
              "no BO)", (unsigned long long)job, i, core,
              raw & DLASIM_RK_IRQ_DMA_READ_ERROR ? "read" : "write");
    }
    dlasim_rk_ack(r->dev, core);
    if (!(raw & DLASIM_RK_IRQ_DPU)) {
        logf_(r, DLA_ROCKET_LOG_ERROR, "job %llu task %u on core %u: no DPU interrupt (the kernel's "
              "\"NPU job timed out\"): the job stops, the device is reset",
              (unsigned long long)job, i, core);
        dlasim_reset(r->dev);
        r->stats.failed_tasks++;
        return -ETIMEDOUT;
    }
    logf_(r, DLA_ROCKET_LOG_JOB, "job %llu task %u: regcmd 0x%x, %u entries, core %u: done%s",
          (unsigned long long)job, i, t->regcmd, t->regcmd_count, core, rc ? " (with the error above)" : "");
    if (rc) {
        r->stats.failed_tasks++;
    }
    return 0;
}

static int run_job(struct dla_rocket *r, const struct dla_rocket_job *j)
{
    uint64_t id = r->stats.jobs++;
    if (j->task_count == 0 || j->task_struct_size < sizeof(struct dla_rocket_task)) {
        return -EINVAL;
    }
    if (j->task_count > MAX_ARRAY) {
        return -ENOMEM;
    }
    struct dla_rocket_task *t = calloc(j->task_count, sizeof(*t));
    if (!t) {
        return -ENOMEM;
    }
    int rc = 0;
    for (uint32_t i = 0; i < j->task_count && !rc; i++) {
        rc = copy_from(r, &t[i], j->tasks + (uint64_t)i * j->task_struct_size, sizeof(t[i]));
        if (!rc && t[i].regcmd_count == 0) {
            rc = -EINVAL;
        }
    }
    rc = rc ? rc : check_handles(r, j->in_bo_handles, j->in_bo_handle_count, "in");
    rc = rc ? rc : check_handles(r, j->out_bo_handles, j->out_bo_handle_count, "out");
    unsigned core = r->next_core;
    r->next_core = (r->next_core + 1) % DLASIM_RK_CORES;
    if (!rc) {
        logf_(r, DLA_ROCKET_LOG_JOB, "job %llu: %u task(s), %u in and %u out BOs, core %u",
              (unsigned long long)id, j->task_count, j->in_bo_handle_count, j->out_bo_handle_count, core);
    }
    for (uint32_t i = 0; i < j->task_count && !rc; i++) {
        rc = run_task(r, core, &t[i], id, i);
    }
    free(t);
    return rc;
}

static int submit(struct dla_rocket *r, const struct dla_rocket_submit *a)
{
    if (a->job_count == 0) {
        return 0;
    }
    if (a->job_struct_size < sizeof(struct dla_rocket_job) || a->reserved) {
        return -EINVAL;
    }
    if (a->job_count > MAX_ARRAY) {
        return -ENOMEM;
    }
    struct dla_rocket_job *jobs = calloc(a->job_count, sizeof(*jobs));
    if (!jobs) {
        return -ENOMEM;
    }
    int rc = 0;
    for (uint32_t i = 0; i < a->job_count && !rc; i++) {
        rc = copy_from(r, &jobs[i], a->jobs + (uint64_t)i * a->job_struct_size, sizeof(jobs[i]));
    }
    for (uint32_t i = 0; i < a->job_count && !rc; i++) {
        int jrc = run_job(r, &jobs[i]);
        if (jrc) {
            logf_(r, DLA_ROCKET_LOG_ERROR, "SUBMIT: job %u of %u dropped (%s), as the kernel drops it",
                  i, a->job_count, strerror(-jrc));
        }
    }
    free(jobs);
    return rc;
}

/* drm_copy_field: copy at most *len bytes of s, set *len to its length. */
static int copy_field(struct dla_rocket *r, uint64_t *len, uint64_t uptr, const char *s)
{
    size_t n = strlen(s), give = *len < n ? (size_t)*len : n;
    *len = n;
    if (give && (!r->o.user.copy_to || !uptr || r->o.user.copy_to(r->o.user.opaque, uptr, s, give))) {
        return -EFAULT;
    }
    return 0;
}

static int version(struct dla_rocket *r, struct dla_drm_version *v)
{
    v->version_major = 0;
    v->version_minor = 0;
    v->version_patchlevel = 0;
    int rc = copy_field(r, &v->name_len, v->name, "rocket");
    rc = rc ? rc : copy_field(r, &v->date_len, v->date, "");
    return rc ? rc : copy_field(r, &v->desc_len, v->desc, "rocket DRM");
}

/* ---- ioctl dispatch -------------------------------------------------------------- */

union ioctl_arg {
    struct dla_drm_version version;
    struct dla_drm_gem_close gem_close;
    struct dla_rocket_create_bo create;
    struct dla_rocket_submit submit;
    struct dla_rocket_prep_bo prep;
    struct dla_rocket_fini_bo fini;
};

static const char *ioctl_name(unsigned nr)
{
    switch (nr) {
    case DLA_DRM_NR_VERSION: return "VERSION";
    case DLA_DRM_NR_GEM_CLOSE: return "GEM_CLOSE";
    case DLA_ROCKET_NR_CREATE_BO: return "ROCKET_CREATE_BO";
    case DLA_ROCKET_NR_SUBMIT: return "ROCKET_SUBMIT";
    case DLA_ROCKET_NR_PREP_BO: return "ROCKET_PREP_BO";
    case DLA_ROCKET_NR_FINI_BO: return "ROCKET_FINI_BO";
    default: return NULL;
    }
}

static size_t arg_size(unsigned nr)
{
    switch (nr) {
    case DLA_DRM_NR_VERSION: return sizeof(struct dla_drm_version);
    case DLA_DRM_NR_GEM_CLOSE: return sizeof(struct dla_drm_gem_close);
    case DLA_ROCKET_NR_CREATE_BO: return sizeof(struct dla_rocket_create_bo);
    case DLA_ROCKET_NR_SUBMIT: return sizeof(struct dla_rocket_submit);
    case DLA_ROCKET_NR_PREP_BO: return sizeof(struct dla_rocket_prep_bo);
    default: return sizeof(struct dla_rocket_fini_bo);
    }
}

static int dispatch(struct dla_rocket *r, unsigned nr, union ioctl_arg *a)
{
    switch (nr) {
    case DLA_DRM_NR_VERSION: return version(r, &a->version);
    case DLA_DRM_NR_GEM_CLOSE: return gem_close(r, &a->gem_close);
    case DLA_ROCKET_NR_CREATE_BO: return create_bo(r, &a->create);
    case DLA_ROCKET_NR_SUBMIT: return submit(r, &a->submit);
    case DLA_ROCKET_NR_PREP_BO: return prep_fini(r, a->prep.handle, a->prep.reserved);
    default: return prep_fini(r, a->fini.handle, a->fini.reserved);
    }
}

/* drm_ioctl: the argument is copied in over the size the request encodes
 * (zero-filled up to the driver's), the handler runs, and the result is
 * copied back for requests that read. */
int dla_rocket_ioctl(struct dla_rocket *r, unsigned long request, uint64_t arg)
{
    if (!r) {
        return -EBADF;
    }
    r->stats.ioctls++;
    unsigned nr = DLA_IOC_NR(request), dir = DLA_IOC_DIR(request);
    const char *name = DLA_IOC_TYPE(request) == DLA_DRM_IOCTL_TYPE ? ioctl_name(nr) : NULL;
    if (!name) {
        logf_(r, DLA_ROCKET_LOG_IOCTL, "ioctl 0x%lx: not a rocket ioctl -> EINVAL", request);
        return -EINVAL;
    }
    union ioctl_arg a;
    memset(&a, 0, sizeof(a));
    size_t usize = DLA_IOC_SIZE(request), ksize = arg_size(nr);
    size_t in = usize < ksize ? usize : ksize;
    int rc = (dir & DLA_IOC_WRITE) ? copy_from(r, &a, arg, in) : 0;
    if (!rc) {
        rc = dispatch(r, nr, &a);
    }
    if (!rc && (dir & DLA_IOC_READ) && in &&
        (!r->o.user.copy_to || r->o.user.copy_to(r->o.user.opaque, arg, &a, in))) {
        rc = -EFAULT;
    }
    if (nr == DLA_ROCKET_NR_CREATE_BO && !rc) {
        logf_(r, DLA_ROCKET_LOG_IOCTL, "%s size %u -> handle %u, NPU 0x%llx, offset 0x%llx", name,
              a.create.size, a.create.handle, (unsigned long long)a.create.dma_address,
              (unsigned long long)a.create.offset);
    } else {
        logf_(r, DLA_ROCKET_LOG_IOCTL, "%s -> %s", name, rc ? strerror(-rc) : "0");
    }
    return rc;
}

int dla_rocket_mmap(struct dla_rocket *r, uint64_t offset, size_t len, int *memfd)
{
    if (!r || !memfd || offset < MMAP_BASE || len == 0) {
        return -EINVAL;
    }
    uint64_t a = offset - MMAP_BASE;
    size_t i = bo_at(r, a);
    if (i == r->nbos || r->bos[i].dma != a) {
        return -EINVAL; /* drm_gem_mmap: no object at that offset */
    }
    if (len > r->bos[i].size) {
        return -EINVAL; /* drm_gem_mmap_obj: beyond the object */
    }
    *memfd = r->bos[i].ub.memfd;
    return 0;
}

void dla_rocket_get_stats(const struct dla_rocket *r, struct dla_rocket_stats *s)
{
    if (r && s) {
        *s = r->stats;
    }
}

int dla_rocket_open(const struct dla_rocket_options *o, struct dla_rocket **out, char *err,
                    size_t errlen)
{
    if (!o || !out) {
        snprintf(err, err ? errlen : 0, "dla_rocket_open: NULL options or result");
        return DLASIM_ERR_INVAL;
    }
    struct dla_rocket *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, err ? errlen : 0, "dla_rocket_open: out of memory");
        return DLASIM_ERR_NOMEM;
    }
    r->o = *o;
    struct dlasim_options d = {0};
    d.config = o->config ? o->config : "rk3588";
    d.dbb_ops = &bo_mem_ops;
    d.dbb_opaque = r;
    d.threads = o->threads;
    d.max_layer_work = o->max_layer_work;
    int rc = dlasim_create(&d, &r->dev, err, errlen);
    if (!rc && !dlasim_rk_cores(r->dev)) {
        snprintf(err, err ? errlen : 0, "dla_rocket_open: configuration \"%s\" is not an RK3588 "
                 "(the rocket driver drives only that NPU)", d.config);
        rc = DLASIM_ERR_INVAL;
    }
    if (rc) {
        dlasim_destroy(r->dev);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void dla_rocket_close(struct dla_rocket *r)
{
    if (!r) {
        return;
    }
    dlasim_destroy(r->dev);
    for (size_t i = 0; i < r->nbos; i++) {
        uapi_bo_release(&r->bos[i].ub);
    }
    free(r->bos);
    free(r);
}
