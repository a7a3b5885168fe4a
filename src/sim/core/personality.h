/*
 * Device personalities: one simulator, several devices (issue 10, design
 * note R15).
 *
 * A personality is the set of operations behind the public API of
 * include/dlasim/dlasim.h for one family of devices built from NVDLA's parts:
 * NVDLA itself (src/sim/nvdla/device.c, configurations nv_small, nv_small_256,
 * nv_large) and the RK3588 NPU (src/sim/rk3588/rk_npu.c, configuration rk3588).
 * dlasim_create (src/sim/core/api.c) picks the personality once from
 * dlasim_options.config in the table dla_personalities[]; every other entry
 * point has one body that calls through dev->ops.  Both personalities keep
 * their registers in the same table-driven register file (src/sim/core/regfile.c)
 * over their own register database, with their own pointer semantics.
 *
 * Adding a third NVDLA-derived NPU: a register database (regdb/<name>.xml),
 * an ops table like the two below, its pointer semantics (struct
 * dla_pointer_ops, regfile.h), its register decoders, and one line in
 * dla_personalities[].
 */
#ifndef DLASIM_SIM_PERSONALITY_H
#define DLASIM_SIM_PERSONALITY_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"
#include "dlasim/layer.h"

struct regdb;
struct dla_team;

struct dla_device_ops {
    const char *name;   /* "NVDLA", "RK3588" (messages, dlasim_device_info) */
    const struct regdb *db; /* the register database of its CSB addresses */
    unsigned cores;     /* register windows, each with its own interrupt line */
    /* Allocates the device (whose first member is struct dlasim_dev with
     * ops set); err is never NULL.  On failure *out stays NULL. */
    int (*create)(const struct dlasim_options *opt, struct dlasim_dev **out, char *err,
                  size_t errlen);
    void (*destroy)(struct dlasim_dev *dev);
    void (*reset)(struct dlasim_dev *dev);
    int (*csb_read)(struct dlasim_dev *dev, uint32_t addr, uint32_t *val);
    int (*csb_write)(struct dlasim_dev *dev, uint32_t addr, uint32_t val);
    /* Optional: n writes as n csb_write calls (dlasim_csb_write_n); NULL:
     * api.c makes them one by one. */
    int (*csb_write_n)(struct dlasim_dev *dev, const struct dlasim_reg_write *w, size_t n,
                       size_t *done);
    int (*mem_read)(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr, void *dst,
                    size_t len);
    int (*mem_write)(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr,
                     const void *src, size_t len);
    int (*step)(struct dlasim_dev *dev);
    int (*busy)(struct dlasim_dev *dev, char *desc, size_t desclen);
    int (*irq_level)(const struct dlasim_dev *dev, unsigned core); /* core < cores */
    int (*param)(const struct dlasim_dev *dev, const char *name, uint64_t *value);
    const char *(*last_error)(const struct dlasim_dev *dev);
    /* Optional (dlasim_set_overlap): the previous setting; NULL: never overlaps. */
    int (*set_overlap)(struct dlasim_dev *dev, int on);
    /* Optional (host_team.h dla_dev_idle_team): the device's worker team with
     * nothing of the device running on it; NULL: the device has none. */
    struct dla_team *(*idle_team)(struct dlasim_dev *dev);
    int describes_layers; /* its step calls dla_layer_notify (include/dlasim/layer.h) */
};

/* The public handle: the first member of every personality's device
 * (struct dla_dev in device.c, struct rk_npu in rk_npu.c), so a personality
 * turns the handle into its own device with a cast. */
struct dlasim_dev {
    const struct dla_device_ops *ops;
    const char *config;  /* the configuration name (from dla_personalities[]) */
    dlasim_layer_fn layer_fn; /* dlasim_set_layer_observer (NULL: none) */
    void *layer_opaque;
    uint64_t mem_tag; /* dla_mem_tag (mem_tag.h): who last declared memory's content; 0 = nobody */
};

/* One configuration name and the personality that models it. */
struct dla_personality {
    const char *config;              /* dlasim_options.config */
    const struct dla_device_ops *ops;
};

extern const struct dla_personality dla_personalities[];
extern const size_t dla_personality_count;

extern const struct dla_device_ops dla_nvdla_ops;   /* src/sim/nvdla/device.c */
extern const struct dla_device_ops dla_rk3588_ops;  /* src/sim/rk3588/rk_npu.c */

/* The personality of a configuration name (NULL = the default, nv_small), or NULL. */
const struct dla_personality *dla_personality_of(const char *config);

/* Hand a layer's description to the observer set with
 * dlasim_set_layer_observer, if any. */
void dla_layer_notify(struct dlasim_dev *dev, const struct dlasim_layer_info *layer);

#endif
