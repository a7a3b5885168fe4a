/* Device helpers shared by the tests (see testdev.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "testdev.h"

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
