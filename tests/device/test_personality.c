/*
 * Device personalities (src/sim/core/personality.h): the configuration picks the
 * device once at dlasim_create, and the one register file (src/sim/core/regfile.c)
 * applies each device's pointer semantics.  Expected values come from the
 * specs: NVDLA spec 001 (writes to an enabled group are dropped; S_POINTER
 * PRODUCER), the RK3588 TRM 36.5.1 / spec 002 (pointer, pp_en, pp_mode,
 * pointer_pp_clear; S_STATUS 1 = executing), and TRM 36.1 (three cores).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"
#include "regs/gen/nvdla_regs.h"
#include "regs/gen/rk3588_regs.h"
#include "sim/core/personality.h"

static struct dlasim_dev *create(const char *config)
{
    struct dlasim_options o;
    memset(&o, 0, sizeof(o));
    o.config = config;
    o.threads = 1;
    struct dlasim_dev *dev = NULL;
    char err[256];
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), 0);
    assert_non_null(dev);
    return dev;
}

static uint32_t rd(struct dlasim_dev *dev, uint32_t addr)
{
    uint32_t v = 0xdeadbeefu;
    assert_int_equal(dlasim_csb_read(dev, addr, &v), 0);
    return v;
}

/* Every configuration of the table makes its personality's device. */
static void test_table(void **state)
{
    (void)state;
    assert_int_equal(dla_personality_count, 4);
    for (size_t i = 0; i < dla_personality_count; i++) {
        const struct dla_personality *p = &dla_personalities[i];
        struct dlasim_dev *dev = create(p->config);
        uint64_t cores = 0;
        int rk = !strcmp(p->config, "rk3588");
        assert_ptr_equal(dev->ops, p->ops);
        assert_ptr_equal(p->ops, rk ? &dla_rk3588_ops : &dla_nvdla_ops);
        assert_int_equal(dlasim_rk_cores(dev), rk ? 3u : 0u);
        assert_int_equal(dlasim_param(dev, "RK_CORES", &cores), rk ? 0 : DLASIM_ERR_INVAL);
        if (rk) {
            assert_int_equal(cores, 3);
        }
        struct dlasim_device_info di;
        dlasim_device_info(dev, &di);
        assert_string_equal(di.device, rk ? "RK3588" : "NVDLA");
        assert_string_equal(di.config, p->config);
        assert_string_equal(di.regdb, rk ? "rk3588" : "nvdla");
        assert_int_equal(di.cores, rk ? 3u : 1u);
        assert_int_equal(dlasim_irq_level(dev), 0);
        assert_int_equal(dlasim_step(dev), 0); /* nothing enabled */
        dlasim_destroy(dev);
    }
    assert_ptr_equal(dla_personality_of(NULL), &dla_personalities[0]); /* nv_small */
    assert_null(dla_personality_of("nv_full"));
}

static void test_unknown_config(void **state)
{
    (void)state;
    struct dlasim_options o;
    memset(&o, 0, sizeof(o));
    o.config = "nv_full";
    struct dlasim_dev *dev = (struct dlasim_dev *)&o; /* must be reset to NULL */
    char err[256];
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_null(dev);
    assert_non_null(strstr(err, "unknown configuration 'nv_full'"));
    for (size_t i = 0; i < dla_personality_count; i++) {
        assert_non_null(strstr(err, dla_personalities[i].config));
    }
}

/* NVDLA (spec 001): a write to a dual register of an enabled group is dropped. */
static void test_nvdla_drops_writes_to_enabled_group(void **state)
{
    (void)state;
    struct dlasim_dev *dev = create("nv_small");
    assert_int_equal(dlasim_csb_write(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, 5), 0);
    assert_int_equal(dlasim_csb_write(dev, NVDLA_PDP_D_OP_ENABLE_0, 1), 0);
    assert_int_equal(dlasim_csb_write(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, 9), 0);
    assert_int_equal(rd(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0), 5);
    assert_int_equal(rd(dev, NVDLA_PDP_S_POINTER_0), 0);
    /* PRODUCER = 1: the other group takes writes */
    assert_int_equal(dlasim_csb_write(dev, NVDLA_PDP_S_POINTER_0, 1), 0);
    assert_int_equal(dlasim_csb_write(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, 9), 0);
    assert_int_equal(rd(dev, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0), 9);
    assert_int_equal(rd(dev, NVDLA_PDP_S_POINTER_0), 1);
    assert_int_equal(rd(dev, NVDLA_PDP_S_STATUS_0), 1); /* group 0 running */
    dlasim_destroy(dev);
}

/* RK3588 (TRM 36.5.1): toggle by pointer, the pointer group's writes are
 * stored even when it is enabled, pointer_pp_clear (W1C bit 4) returns the
 * pointer to group 0. */
static void test_rk_pointer_semantics(void **state)
{
    (void)state;
    const uint32_t pp_en = 1u << 1, pp_mode_pointer = 1u << 3, pp_clear = 1u << 4;
    struct dlasim_dev *dev = create("rk3588");
    assert_int_equal(dlasim_csb_write(dev, RK3588_PPU_S_POINTER, pp_en | pp_mode_pointer), 0);
    assert_int_equal(dlasim_csb_write(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH, 5), 0);
    assert_int_equal(dlasim_csb_write(dev, RK3588_PPU_OPERATION_ENABLE, 1), 0);
    /* the pointer moved to group 1 */
    assert_int_equal(rd(dev, RK3588_PPU_S_POINTER), pp_en | pp_mode_pointer | 1u);
    assert_int_equal(rd(dev, RK3588_PPU_S_STATUS), 1); /* group 0 enabled, executing */
    assert_int_equal(rd(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH), 0);
    assert_int_equal(dlasim_csb_write(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH, 7), 0);
    assert_int_equal(rd(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH), 7);
    /* pointer_pp_clear: back to group 0, whose (enabled) registers take writes */
    assert_int_equal(dlasim_csb_write(dev, RK3588_PPU_S_POINTER, pp_en | pp_mode_pointer | pp_clear), 0);
    assert_int_equal(rd(dev, RK3588_PPU_S_POINTER), pp_en | pp_mode_pointer);
    assert_int_equal(rd(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH), 5);
    assert_int_equal(dlasim_csb_write(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH, 9), 0);
    assert_int_equal(rd(dev, RK3588_PPU_DATA_CUBE_IN_WIDTH), 9);
    /* core 1 has its own registers */
    assert_int_equal(rd(dev, DLASIM_RK_CORE_STRIDE + RK3588_PPU_DATA_CUBE_IN_WIDTH), 0);
    /* INTERRUPT_MASK resets to all enabled (spec), INTERRUPT_STATUS = RAW & MASK = 0 */
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_MASK), 0x3fffu);
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_STATUS), 0);
    dlasim_destroy(dev);
}

/* The API refuses a NULL device for every personality; the RK3588 checks
 * its pointer arguments as NVDLA does. */
static void test_null_arguments_rk(void **state)
{
    (void)state;
    struct dlasim_device_info di;
    uint64_t p;
    assert_int_equal(dlasim_csb_write(NULL, 0, 0), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_cores(NULL), 0);
    dlasim_device_info(NULL, &di);
    assert_null(di.device);
    struct dlasim_dev *dev = create("rk3588");
    assert_int_equal(dlasim_csb_read(dev, RK3588_PPU_S_POINTER, NULL), DLASIM_ERR_INVAL);
    assert_non_null(strstr(dlasim_last_error(dev), "val is NULL"));
    assert_int_equal(dlasim_mem_read(dev, DLASIM_PORT_DBB, 0x1000, NULL, 16), DLASIM_ERR_INVAL);
    assert_non_null(strstr(dlasim_last_error(dev), "dst is NULL"));
    assert_int_equal(dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x1000, NULL, 16), DLASIM_ERR_INVAL);
    assert_non_null(strstr(dlasim_last_error(dev), "src is NULL"));
    assert_int_equal(dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x1000, NULL, 0), 0);
    assert_int_equal(dlasim_param(dev, NULL, &p), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_param(dev, "RK_CORES", NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_busy(dev, NULL, 16), 0);
    dlasim_device_info(dev, NULL);
    dlasim_destroy(dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_unknown_config),
        cmocka_unit_test(test_nvdla_drops_writes_to_enabled_group),
        cmocka_unit_test(test_rk_pointer_semantics),
        cmocka_unit_test(test_null_arguments_rk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
