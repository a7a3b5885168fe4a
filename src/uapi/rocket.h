/*
 * The Linux `rocket` accel driver's UAPI (include/uapi/drm/rocket_accel.h,
 * Linux 6.18; drivers/accel/rocket/) emulated in user space on dlasim's
 * RK3588: what a client such as Mesa's rocket Gallium driver sees through
 * ioctl and mmap on /dev/accel/accel0, decoded here independently of how the
 * calls reach it (src/uapi/rocket_preload.c registers it with the generic
 * interposition core src/uapi/preload.c; tests and the fuzz target call
 * dla_rocket_ioctl directly, linking src/uapi/bo.c for the buffers).
 *
 * One `struct dla_rocket` is one open file of the device (a drm_file: its
 * GEM handles, its NPU address space) on its own dlasim device.  Errors are
 * the kernel's: a negative errno, never a crash, whatever the client passes.
 * The library prints nothing: what happens goes to the log callback.
 */
#ifndef DLASIM_UAPI_ROCKET_H
#define DLASIM_UAPI_ROCKET_H

#include <stddef.h>
#include <stdint.h>

/* ---- the UAPI (field layout of rocket_accel.h and drm.h) ------------------ */

#define DLA_DRM_IOCTL_TYPE 'd'
#define DLA_DRM_NR_VERSION 0x00
#define DLA_DRM_NR_GEM_CLOSE 0x09
#define DLA_DRM_COMMAND_BASE 0x40
#define DLA_ROCKET_NR_CREATE_BO (DLA_DRM_COMMAND_BASE + 0x00)
#define DLA_ROCKET_NR_SUBMIT (DLA_DRM_COMMAND_BASE + 0x01)
#define DLA_ROCKET_NR_PREP_BO (DLA_DRM_COMMAND_BASE + 0x02)
#define DLA_ROCKET_NR_FINI_BO (DLA_DRM_COMMAND_BASE + 0x03)

struct dla_drm_version {
    int32_t version_major, version_minor, version_patchlevel;
    uint64_t name_len, name;   /* size_t and char * on a 64-bit client */
    uint64_t date_len, date;
    uint64_t desc_len, desc;
};
struct dla_drm_gem_close {
    uint32_t handle, pad;
};
struct dla_rocket_create_bo {
    uint32_t size;        /* in */
    uint32_t handle;      /* out */
    uint64_t dma_address; /* out: NPU address */
    uint64_t offset;      /* out: mmap offset */
};
struct dla_rocket_task {
    uint32_t regcmd, regcmd_count;
};
struct dla_rocket_job {
    uint64_t tasks, in_bo_handles, out_bo_handles; /* user pointers */
    uint32_t task_count, task_struct_size, in_bo_handle_count, out_bo_handle_count;
};
struct dla_rocket_submit {
    uint64_t jobs; /* user pointer */
    uint32_t job_count, job_struct_size;
    uint64_t reserved;
};
struct dla_rocket_prep_bo {
    uint32_t handle, reserved;
    int64_t timeout_ns;
};
struct dla_rocket_fini_bo {
    uint32_t handle, reserved;
};

/* _IOC encoding of Linux (asm-generic/ioctl.h): nr 0-7, type 8-15, size 16-29, dir 30-31. */
#define DLA_IOC_NR(req) ((unsigned)(req) & 0xffu)
#define DLA_IOC_TYPE(req) (((unsigned)(req) >> 8) & 0xffu)
#define DLA_IOC_SIZE(req) (((unsigned)(req) >> 16) & 0x3fffu)
#define DLA_IOC_DIR(req) (((unsigned)(req) >> 30) & 3u)
#define DLA_IOC_WRITE 1u /* user -> kernel */
#define DLA_IOC_READ 2u  /* kernel -> user */
#define DLA_IOC(dir, nr, size) \
    ((unsigned long)(((unsigned)(dir) << 30) | ((unsigned)(size) << 16) | (DLA_DRM_IOCTL_TYPE << 8) | (nr)))

/* ---- the emulation ---------------------------------------------------------- */

/* How the emulation reaches the client's memory for the user pointers inside
 * the ioctl arguments: 0 or -EFAULT, as copy_from_user/copy_to_user. */
struct dla_rocket_user {
    int (*copy_from)(void *opaque, void *dst, uint64_t uaddr, size_t len);
    int (*copy_to)(void *opaque, uint64_t uaddr, const void *src, size_t len);
    void *opaque;
};

enum dla_rocket_log {
    DLA_ROCKET_LOG_ERROR = 1u << 0, /* failed jobs, device errors (what dmesg would say) */
    DLA_ROCKET_LOG_IOCTL = 1u << 1, /* every ioctl and its result */
    DLA_ROCKET_LOG_JOB = 1u << 2,   /* every job and task run */
};

struct dla_rocket_options {
    const char *config;         /* dlasim configuration; NULL = "rk3588" */
    unsigned threads;           /* dlasim worker threads, 0 = all cores */
    uint64_t max_layer_work;    /* dlasim_options.max_layer_work (0 = none) */
    uint32_t max_bo_bytes;      /* total BO bytes allowed, 0 = 1 GiB */
    struct dla_rocket_user user;
    unsigned log_mask;          /* enum dla_rocket_log */
    void (*log_cb)(void *opaque, unsigned category, const char *msg);
    void *log_opaque;
};

struct dla_rocket;

/* Open the device: 0, or a negative dlasim status with the reason in err. */
int dla_rocket_open(const struct dla_rocket_options *o, struct dla_rocket **out, char *err,
                    size_t errlen);
void dla_rocket_close(struct dla_rocket *r);
/* One ioctl: 0 or -errno, as the kernel returns it. */
int dla_rocket_ioctl(struct dla_rocket *r, unsigned long request, uint64_t arg);
/* mmap(len, offset) of the device (offsets from CREATE_BO): 0 and the memfd
 * of the BO to map from its start (src/uapi/bo.c), or -EINVAL as mmap would. */
int dla_rocket_mmap(struct dla_rocket *r, uint64_t offset, size_t len, int *memfd);
/* Counters for tests: ioctls served, jobs and tasks run, tasks that failed. */
struct dla_rocket_stats {
    uint64_t ioctls, jobs, tasks, failed_tasks;
};
void dla_rocket_get_stats(const struct dla_rocket *r, struct dla_rocket_stats *s);

#endif
