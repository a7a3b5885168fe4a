/*
 * The public device API (include/dlasim/dlasim.h, include/dlasim/rk3588.h):
 * one body per entry point.  dlasim_create chooses the device personality
 * from the configuration name (the table below); every other call goes
 * through the operations of the personality the device was created with
 * (src/sim/core/personality.h).  A NULL device is refused here, once for every
 * personality; the other arguments are the personality's to check, as it
 * keeps the message (dlasim_last_error).
 */
#include <stdio.h>
#include <string.h>

#include "dlasim/rk3588.h"
#include "regs/regdb.h"
#include "sim/core/host_team.h"
#include "sim/core/mem_tag.h"
#include "sim/core/personality.h"

const struct dla_personality dla_personalities[] = {
    {"nv_small", &dla_nvdla_ops},
    {"nv_small_256", &dla_nvdla_ops},
    {"nv_large", &dla_nvdla_ops},
    {"rk3588", &dla_rk3588_ops},
};
const size_t dla_personality_count = sizeof(dla_personalities) / sizeof(dla_personalities[0]);

const struct dla_personality *dla_personality_of(const char *config)
{
    if (config == NULL) {
        config = dla_personalities[0].config;
    }
    for (size_t i = 0; i < dla_personality_count; i++) {
        if (!strcmp(dla_personalities[i].config, config)) {
            return &dla_personalities[i];
        }
    }
    return NULL;
}

static int unknown_config(const char *config, char *err, size_t errlen)
{
    size_t used = (size_t)snprintf(err, errlen, "unknown configuration '%s' (known:", config);
    for (size_t i = 0; i < dla_personality_count && used < errlen; i++) {
        used += (size_t)snprintf(err + used, errlen - used, "%s %s", i ? "," : "",
                                 dla_personalities[i].config);
    }
    if (used < errlen) {
        snprintf(err + used, errlen - used, ")");
    }
    return DLASIM_ERR_INVAL;
}

/* The caller's pointers that must not be NULL (dlasim.h, struct dlasim_options). */
static int check_options(const struct dlasim_options *opt, char *err, size_t errlen)
{
    if (opt->n_overrides && !opt->overrides) {
        snprintf(err, errlen, "dlasim_create: options.overrides is NULL but n_overrides is %zu",
                 opt->n_overrides);
        return DLASIM_ERR_INVAL;
    }
    for (size_t i = 0; i < opt->n_overrides; i++) {
        if (!opt->overrides[i]) {
            snprintf(err, errlen, "dlasim_create: options.overrides[%zu] is NULL", i);
            return DLASIM_ERR_INVAL;
        }
    }
    return 0;
}

int dlasim_create(const struct dlasim_options *opt, struct dlasim_dev **out, char *err,
                  size_t errlen)
{
    static const struct dlasim_options defaults = {0};
    char buf[2048] = "";
    if (!out) {
        if (err && errlen) {
            snprintf(err, errlen, "dlasim_create: out is NULL");
        }
        return DLASIM_ERR_INVAL;
    }
    *out = NULL;
    if (!opt) {
        opt = &defaults;
    }
    const struct dla_personality *p = dla_personality_of(opt->config);
    int rc = check_options(opt, buf, sizeof(buf));
    if (!rc) {
        rc = p ? p->ops->create(opt, out, buf, sizeof(buf))
               : unknown_config(opt->config, buf, sizeof(buf));
    }
    if (!rc) {
        (*out)->config = p->config;
        (*out)->layer_fn = NULL;
        (*out)->layer_opaque = NULL;
        (*out)->mem_tag = 0;
    }
    if (rc && err && errlen) {
        snprintf(err, errlen, "%s", buf[0] ? buf : dlasim_status_name(rc));
    }
    return rc;
}

void dlasim_destroy(struct dlasim_dev *dev)
{
    if (dev) {
        dev->ops->destroy(dev);
    }
}

void dlasim_reset(struct dlasim_dev *dev)
{
    if (dev) {
        dev->ops->reset(dev);
    }
}

int dlasim_csb_write(struct dlasim_dev *dev, uint32_t addr, uint32_t val)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->csb_write(dev, addr, val);
}

int dlasim_csb_write_n(struct dlasim_dev *dev, const struct dlasim_reg_write *w, size_t n,
                       size_t *done)
{
    size_t made = 0;
    int rc = 0;
    if (!dev || (n && !w)) {
        rc = DLASIM_ERR_INVAL;
    } else if (dev->ops->csb_write_n) {
        rc = dev->ops->csb_write_n(dev, w, n, &made);
    } else {
        for (; made < n && !(rc = dev->ops->csb_write(dev, w[made].addr, w[made].val)); made++) {
        }
    }
    if (done) {
        *done = made;
    }
    return rc;
}

int dlasim_csb_read(struct dlasim_dev *dev, uint32_t addr, uint32_t *val)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->csb_read(dev, addr, val);
}

int dlasim_mem_read(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr, void *dst,
                    size_t len)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->mem_read(dev, port, addr, dst, len);
}

int dlasim_mem_write(struct dlasim_dev *dev, enum dlasim_port port, uint64_t addr,
                     const void *src, size_t len)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    dev->mem_tag = 0; /* memory changed: no one's content is known to be intact (mem_tag.h) */
    return dev->ops->mem_write(dev, port, addr, src, len);
}

uint64_t dla_mem_tag(const struct dlasim_dev *dev)
{
    return dev->mem_tag;
}

void dla_set_mem_tag(struct dlasim_dev *dev, uint64_t tag)
{
    dev->mem_tag = tag;
}

struct dla_team *dla_dev_idle_team(struct dlasim_dev *dev)
{
    return dev && dev->ops->idle_team ? dev->ops->idle_team(dev) : NULL;
}

int dlasim_step(struct dlasim_dev *dev)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->step(dev);
}

int dlasim_run(struct dlasim_dev *dev)
{
    int rc;
    while ((rc = dlasim_step(dev)) > 0) {
    }
    return rc;
}

int dlasim_busy(struct dlasim_dev *dev, char *desc, size_t desclen)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->busy(dev, desc, desclen);
}

int dlasim_irq_level(const struct dlasim_dev *dev)
{
    return dev ? dev->ops->irq_level(dev, 0) : DLASIM_ERR_INVAL;
}

int dlasim_param(const struct dlasim_dev *dev, const char *name, uint64_t *value)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->param(dev, name, value);
}

int dlasim_set_overlap(struct dlasim_dev *dev, int on)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return dev->ops->set_overlap ? dev->ops->set_overlap(dev, on != 0) : 0;
}

int dlasim_set_layer_observer(struct dlasim_dev *dev, dlasim_layer_fn fn, void *opaque)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    if (!dev->ops->describes_layers) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    dev->layer_fn = fn;
    dev->layer_opaque = opaque;
    return 0;
}

void dla_layer_notify(struct dlasim_dev *dev, const struct dlasim_layer_info *layer)
{
    if (dev->layer_fn) {
        dev->layer_fn(dev->layer_opaque, layer);
    }
}

const char *dlasim_last_error(const struct dlasim_dev *dev)
{
    return dev ? dev->ops->last_error(dev) : "dlasim: the device handle is NULL";
}

void dlasim_device_info(const struct dlasim_dev *dev, struct dlasim_device_info *info)
{
    if (!info) {
        return;
    }
    if (!dev) {
        memset(info, 0, sizeof(*info));
        return;
    }
    info->device = dev->ops->name;
    info->config = dev->config;
    info->regdb = dev->ops->db->name;
    info->cores = dev->ops->cores;
}

/* ---- RK3588 (include/dlasim/rk3588.h) ------------------------------------------ */

static int is_rk3588(const struct dlasim_dev *dev)
{
    return dev && dev->ops == &dla_rk3588_ops;
}

unsigned dlasim_rk_cores(const struct dlasim_dev *dev)
{
    return is_rk3588(dev) ? dev->ops->cores : 0u;
}

int dlasim_rk_irq_level(const struct dlasim_dev *dev, unsigned core)
{
    if (!dev) {
        return DLASIM_ERR_INVAL;
    }
    return is_rk3588(dev) && core < dev->ops->cores ? dev->ops->irq_level(dev, core) : 0;
}
