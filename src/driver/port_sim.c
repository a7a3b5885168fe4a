/*
 * The runtime port onto the simulated device, through the public dlasim.h
 * API only.  wait_irq runs the device until its interrupt line is high: the
 * simulator executes a layer synchronously once all its units are enabled.
 * Memory is handed out linearly from 0x80000000 (the range NVDLA's
 * conformance traces use on the primary memory port), never freed: one run
 * per device.
 */
#include "dlasim/dlasim.h"
#include "dlasim/timing.h"
#include "regs/gen/nvdla_regs.h"
#include "driver/port.h"

#define SIM_MEM_BASE 0x80000000ull
#define SIM_MEM_LIMIT 0xc0000000ull /* 1 GiB window: the traces' whole range */

static int sim_reg_read(void *ctx, uint32_t addr, uint32_t *val)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_csb_read(sp->dev, addr, val);
}

static int sim_reg_write(void *ctx, uint32_t addr, uint32_t val)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_csb_write(sp->dev, addr, val);
}

static int sim_reg_write_n(void *ctx, const struct dlasim_reg_write *w, size_t n, size_t *done)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_csb_write_n(sp->dev, w, n, done);
}

static int sim_wait_irq(void *ctx)
{
    struct nvrt_sim_port *sp = ctx;
    while (!dlasim_irq_level(sp->dev)) {
        int rc = dlasim_step(sp->dev);
        if (rc < 0) {
            return rc;
        }
        if (rc == 0 && !dlasim_irq_level(sp->dev)) {
            return DLASIM_ERR_TIMEOUT;
        }
    }
    if (dlasim_timing_enabled(sp->dev)) {
        /* with the timing model on, the host's clock moves to the cycle a
         * polling read first sees the raised bits (include/dlasim/timing.h) */
        uint32_t st = 0;
        dlasim_timing_hold(sp->dev, 1);
        dlasim_csb_read(sp->dev, NVDLA_GLB_S_INTR_STATUS_0, &st);
        dlasim_timing_hold(sp->dev, 0);
        dlasim_timing_wait_irq(sp->dev, st);
    }
    return 0;
}

static int sim_mem_alloc(void *ctx, enum nvrt_domain domain, uint64_t size, uint64_t align,
                         uint64_t *addr)
{
    struct nvrt_sim_port *sp = ctx;
    if (domain != NVRT_DOMAIN_SYSTEM) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    if (align < 4096) {
        align = 4096; /* page-aligned buffers, as the KMD's allocator gives */
    }
    if (align & (align - 1)) {
        return DLASIM_ERR_INVAL;
    }
    uint64_t a = (sp->next_addr + align - 1) & ~(align - 1);
    if (a < sp->next_addr || size > sp->limit - a) {
        return DLASIM_ERR_NOMEM;
    }
    *addr = a;
    sp->next_addr = a + (size ? size : 1);
    return 0;
}

static int sim_mem_write(void *ctx, uint64_t addr, const void *src, size_t len)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_mem_write(sp->dev, DLASIM_PORT_DBB, addr, src, len);
}

static int sim_mem_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_mem_read(sp->dev, DLASIM_PORT_DBB, addr, dst, len);
}

static const char *sim_last_error(void *ctx)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_last_error(sp->dev);
}

static int sim_param(void *ctx, const char *name, uint64_t *value)
{
    struct nvrt_sim_port *sp = ctx;
    return dlasim_param(sp->dev, name, value);
}

void nvrt_sim_port_init(struct nvrt_sim_port *sp, struct dlasim_dev *dev)
{
    sp->dev = dev;
    sp->next_addr = SIM_MEM_BASE;
    sp->limit = SIM_MEM_LIMIT;
    sp->port = (struct nvrt_port){
        .ctx = sp,
        .reg_read = sim_reg_read,
        .reg_write = sim_reg_write,
        .wait_irq = sim_wait_irq,
        .mem_alloc = sim_mem_alloc,
        .mem_write = sim_mem_write,
        .mem_read = sim_mem_read,
        .last_error = sim_last_error,
        .mark_output = NULL,
        .mark_input = NULL,
        .alloc_zeroed = 1, /* never handed out twice; the sparse memory reads 0 */
        .param = sim_param,
        .reg_write_n = sim_reg_write_n,
    };
}
