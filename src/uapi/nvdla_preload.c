/*
 * libdlasim-nvdla.so: NVIDIA's NVDLA kernel driver in user space, for
 * LD_PRELOAD in front of NVIDIA's runtime (docs/nvdla-uapi.md).  Registers
 * /dev/dri/renderD128 with the interposition core (preload.c); the device
 * (nvdla_drm.c) is created at the first open, from the environment:
 * DLASIM_CONFIG (default nv_small), DLASIM_NVDLA_INTERFACE, DLASIM_LOG,
 * DLASIM_RECORD_TRACE.  One device per process, as one NVDLA per board.
 */
#include <errno.h>

#include "uapi/nvdla_drm.h"
#include "uapi/preload.h"

struct glue {
    struct nvdla_drm *drm; /* created at the first open */
};

static int glue_open(void *ctx, const char *path, int flags, void **file)
{
    struct glue *g = ctx;
    (void)path;
    (void)flags;
    if (!g->drm) {
        struct nvdla_drm_options opt;
        char err[512] = "";
        int rc = nvdla_drm_options_from_env(&opt, err, sizeof err);
        rc = rc ? rc : nvdla_drm_create(&opt, &g->drm, err, sizeof err);
        if (rc) {
            uapi_log("nvdla", "cannot create the device: %s", err[0] ? err : "out of memory");
            return -ENODEV;
        }
    }
    return nvdla_drm_open(g->drm, file);
}

static struct glue glue;
static const struct uapi_device_ops nvdla_ops = {
    glue_open, nvdla_drm_ioctl, nvdla_drm_mmap_lookup, nvdla_drm_close,
};
static const char *const nvdla_paths[] = { NVDLA_UAPI_DEVICE_NODE, NULL };
static const struct uapi_device nvdla_device = { "nvdla", nvdla_paths, &nvdla_ops, &glue };

__attribute__((constructor)) static void nvdla_preload_init(void)
{
    if (uapi_register(&nvdla_device) != 0) {
        uapi_log("nvdla", "cannot register %s", NVDLA_UAPI_DEVICE_NODE);
    }
}
