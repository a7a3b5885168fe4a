/*
 * NVIDIA's NVDLA kernel driver UAPI, emulated in user space
 * (docs/nvdla-uapi.md).
 *
 * The facts of the UAPI (ioctl numbers, argument layouts, what each call
 * does) are those of nvdla/sw kmd/port/linux (nvdla_gem.c, include/
 * nvdla_ioctl.h) as NVIDIA's user-mode driver uses them (umd/port/linux/
 * nvdla.c); the declarations are dlasim's own.  All structures are the
 * kernel's: fixed-width fields, no implicit padding.
 */
#ifndef DLASIM_UAPI_NVDLA_DRM_H
#define DLASIM_UAPI_NVDLA_DRM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

/* ---- the UAPI ---------------------------------------------------------------- */

/* One address-list entry: a dma-buf fd (the UMD's PRIME fd) and a byte offset. */
struct nvdla_uapi_mem_handle {
    uint32_t handle;
    uint32_t reserved;
    uint64_t offset;
};

struct nvdla_uapi_submit_task {
    uint32_t num_addresses;
    uint32_t timeout;      /* 0xffffffff: none; not used by the KMD */
    uint64_t address_list; /* user pointer to num_addresses mem handles */
};

struct nvdla_uapi_submit_args {
    uint64_t tasks;     /* user pointer to num_tasks tasks */
    uint16_t num_tasks;
    uint16_t flags;
    uint32_t version;
};

struct nvdla_uapi_gem_create_args {
    uint32_t handle; /* out */
    uint32_t flags;
    uint64_t size;
};

struct nvdla_uapi_gem_map_offset_args {
    uint32_t handle;
    uint32_t reserved;
    uint64_t offset; /* out: the offset to mmap the DRM fd at */
};

struct nvdla_uapi_gem_destroy_args {
    uint32_t handle;
};

/* struct drm_prime_handle of the DRM core */
struct nvdla_uapi_prime_handle {
    uint32_t handle;
    uint32_t flags; /* DRM_CLOEXEC (= O_CLOEXEC), DRM_RDWR (= O_RDWR) */
    int32_t fd;     /* out */
};

#define NVDLA_UAPI_MAX_BUFFERS_PER_TASK 6144u
#define NVDLA_UAPI_MAX_TASKS_PER_SUBMIT 24u

/* DRM ioctl numbers: type 'd', driver commands from 0x40 (DRM_COMMAND_BASE) */
#define NVDLA_UAPI_IOCTL_SUBMIT _IOWR('d', 0x40, struct nvdla_uapi_submit_args)
#define NVDLA_UAPI_IOCTL_GEM_CREATE _IOWR('d', 0x41, struct nvdla_uapi_gem_create_args)
#define NVDLA_UAPI_IOCTL_GEM_MMAP _IOWR('d', 0x42, struct nvdla_uapi_gem_map_offset_args)
#define NVDLA_UAPI_IOCTL_GEM_DESTROY _IOWR('d', 0x43, struct nvdla_uapi_gem_destroy_args)
#define NVDLA_UAPI_IOCTL_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct nvdla_uapi_prime_handle)

/* The node NVIDIA's UMD opens */
#define NVDLA_UAPI_DEVICE_NODE "/dev/dri/renderD128"

/* ---- the emulated device ------------------------------------------------------- */

struct nvdla_drm_options {
    const char *config;         /* dlasim configuration, NULL = "nv_small" */
    unsigned interface_minor;   /* firmware descriptor layout 0.10-0.12, 0 = auto
                                 * (dlasim_rt_task.interface_minor) */
    uint64_t max_bo_bytes;      /* total buffer bytes, 0 = the KMD's 1 GiB */
    uint64_t max_layer_work;    /* dlasim_options.max_layer_work (0 = none) */
    unsigned threads;           /* dlasim_options.threads (0 = all cores) */
    const char *record_trace_dir; /* record every submit as a trace case (NULL = no) */
};

struct nvdla_drm;
/* One device (the KMD's nvdla_device); opens of it are drm_files. */
int nvdla_drm_create(const struct nvdla_drm_options *opt, struct nvdla_drm **out, char *err,
                     size_t errlen);
void nvdla_drm_destroy(struct nvdla_drm *d);
/* The options from the environment: DLASIM_CONFIG, DLASIM_NVDLA_INTERFACE
 * ("0.11" or "11"), DLASIM_RECORD_TRACE.  Returns 0 or -EINVAL (err says). */
int nvdla_drm_options_from_env(struct nvdla_drm_options *opt, char *err, size_t errlen);

/* The uapi_device_ops of preload.h: open, ioctl, mmap_lookup, close.
 * Each returns 0 (>= 0) or -errno and logs why it refused. */
int nvdla_drm_open(struct nvdla_drm *d, void **file);
int nvdla_drm_ioctl(void *file, unsigned long request, void *arg);
int nvdla_drm_mmap_lookup(void *file, uint64_t offset, size_t len, int *memfd,
                          off_t *memfd_offset);
void nvdla_drm_close(void *file);

#endif
