/* Device helpers shared by the tests (see testdev.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "testdev.h"

#include "regs/gen/nvdla_regs.h"

struct dlasim_dev *tdev_create(const struct dlasim_options *o)
{
    struct dlasim_dev *dev = NULL;
    char err[256] = "";
    if (dlasim_create(o, &dev, err, sizeof(err))) {
        fail_msg("dlasim_create(%s): %s", o && o->config ? o->config : "default", err);
    }
    return dev;
}

struct dlasim_dev *tdev_new(const char *config, const char *const *ovr, size_t novr,
                            unsigned threads)
{
    struct dlasim_options o;
    memset(&o, 0, sizeof(o));
    o.config = config;
    o.overrides = ovr;
    o.n_overrides = novr;
    o.threads = threads;
    o.threads_always = 1; /* the workers used whatever the host's cores cost */
    return tdev_create(&o);
}

void wr(struct dlasim_dev *dev, uint32_t addr, uint32_t v)
{
    assert_int_equal(dlasim_csb_write(dev, addr, v), 0);
}

uint32_t rd(struct dlasim_dev *dev, uint32_t addr)
{
    uint32_t v = 0;
    assert_int_equal(dlasim_csb_read(dev, addr, &v), 0);
    return v;
}

void mem_wr(struct dlasim_dev *dev, uint64_t addr, const void *p, size_t n)
{
    assert_int_equal(dlasim_mem_write(dev, DLASIM_PORT_DBB, addr, p, n), 0);
}

void mem_rd(struct dlasim_dev *dev, uint64_t addr, void *p, size_t n)
{
    assert_int_equal(dlasim_mem_read(dev, DLASIM_PORT_DBB, addr, p, n), 0);
}

uint32_t param(struct dlasim_dev *dev, const char *name)
{
    uint64_t v = 0;
    assert_int_equal(dlasim_param(dev, name, &v), 0);
    return (uint32_t)v;
}

void expect_error(struct dlasim_dev *dev, int rc, int status, const char *needle)
{
    const char *msg = dlasim_last_error(dev);
    if (rc != status) {
        fail_msg("expected %s naming '%s', got %s: %s", dlasim_status_name(status), needle,
                 dlasim_status_name(rc), msg);
    }
    if (!strstr(msg, needle)) {
        fail_msg("error message does not name '%s': %s", needle, msg);
    }
}

/* A 1x1 max-pooling layer over an 8x8x8 int8 cube (one surface). */
void tdev_pdp_copy(struct dlasim_dev *dev, uint64_t src, uint64_t dst)
{
    const uint32_t partial = 7u | (7u << 10) | (7u << 20);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_CUBE_IN_WIDTH_0, 7);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_CUBE_IN_HEIGHT_0, 7);
    wr(dev, NVDLA_PDP_RDMA_D_DATA_CUBE_IN_CHANNEL_0, 7);
    wr(dev, NVDLA_PDP_RDMA_D_FLYING_MODE_0, NVDLA_PDP_RDMA_D_FLYING_MODE_0_FLYING_MODE_OFF_FLYING);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_LOW_0, (uint32_t)src);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_BASE_ADDR_HIGH_0, (uint32_t)(src >> 32));
    wr(dev, NVDLA_PDP_RDMA_D_SRC_LINE_STRIDE_0, 0x40);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_SURFACE_STRIDE_0, 0x200);
    wr(dev, NVDLA_PDP_RDMA_D_SRC_RAM_CFG_0, 1);
    wr(dev, NVDLA_PDP_RDMA_D_PARTIAL_WIDTH_IN_0, partial);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, 7);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, 7);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, 7);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH_0, 7);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT_0, 7);
    wr(dev, NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL_0, 7);
    wr(dev, NVDLA_PDP_D_OPERATION_MODE_CFG_0,
       NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD(
           NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD_POOLING_METHOD_MAX) |
           NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE(
               NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_OFF_FLYING));
    wr(dev, NVDLA_PDP_D_PARTIAL_WIDTH_IN_0, partial);
    wr(dev, NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0, partial);
    wr(dev, NVDLA_PDP_D_POOLING_KERNEL_CFG_0, 0);
    wr(dev, NVDLA_PDP_D_SRC_BASE_ADDR_LOW_0, (uint32_t)src);
    wr(dev, NVDLA_PDP_D_SRC_BASE_ADDR_HIGH_0, (uint32_t)(src >> 32));
    wr(dev, NVDLA_PDP_D_SRC_LINE_STRIDE_0, 0x40);
    wr(dev, NVDLA_PDP_D_SRC_SURFACE_STRIDE_0, 0x200);
    wr(dev, NVDLA_PDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)dst);
    wr(dev, NVDLA_PDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(dst >> 32));
    wr(dev, NVDLA_PDP_D_DST_LINE_STRIDE_0, 0x40);
    wr(dev, NVDLA_PDP_D_DST_SURFACE_STRIDE_0, 0x200);
    wr(dev, NVDLA_PDP_D_DST_RAM_CFG_0, 1);
    wr(dev, NVDLA_PDP_RDMA_D_OP_ENABLE_0, 1);
    wr(dev, NVDLA_PDP_D_OP_ENABLE_0, 1);
}
