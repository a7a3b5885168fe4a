/*
 * Caller mistakes at the public API never crash: every entry point of
 * include/dlasim/ (every header) checks its pointer arguments and refuses a NULL where
 * the header says one is not allowed with DLASIM_ERR_INVAL and a message
 * (in `err` or dlasim_last_error), or does nothing for functions without a
 * status.  One test per entry point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/testdev.h"
#include "dlasim/compiler.h"
#include "dlasim/conv.h"
#include "dlasim/dlasim.h"
#include "dlasim/rk3588.h"
#include "dlasim/runtime.h"
#include "dlasim/timing.h"
#include "dlasim/trace.h"
#include "regs/gen/nvdla_regs.h"

/* dlasim_create(opt, out = NULL): refused with a message, nothing leaks. */
static void test_create_out_null(void **state)
{
    (void)state;
    char err[256] = "";
    assert_int_equal(dlasim_create(NULL, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_create: out is NULL"));
    assert_int_equal(dlasim_create(NULL, NULL, NULL, 0), DLASIM_ERR_INVAL);
}

/* overrides == NULL with n_overrides > 0, and a NULL string among them. */
static void test_create_overrides_null(void **state)
{
    (void)state;
    char err[256] = "";
    struct dlasim_dev *dev = (struct dlasim_dev *)&err; /* must be reset to NULL */
    struct dlasim_options o = {0};
    o.n_overrides = 2;
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_null(dev);
    assert_non_null(strstr(err, "options.overrides is NULL but n_overrides is 2"));
    const char *sets[] = {"NVDLA_SDP_EW_ENABLE=1", NULL};
    o.overrides = sets;
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "options.overrides[1] is NULL"));
    o.n_overrides = 1; /* the non-NULL one alone is fine */
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), 0);
    dlasim_destroy(dev);
    o.n_overrides = 0; /* NULL with 0 overrides is allowed */
    o.overrides = NULL;
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), 0);
    dlasim_destroy(dev);
}

static int no_read(void *opaque, uint64_t addr, void *dst, size_t len)
{
    (void)opaque, (void)addr, (void)dst, (void)len;
    return 0;
}

/* Memory ops with a missing callback. */
static void test_create_mem_ops_incomplete(void **state)
{
    (void)state;
    static const struct dlasim_mem_ops half = {no_read, NULL};
    char err[256] = "";
    struct dlasim_dev *dev;
    struct dlasim_options o = {0};
    o.dbb_ops = &half;
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_null(dev);
    assert_non_null(strstr(err, "DBB memory ops without a write callback"));
}

/* Functions without a status accept NULL and do nothing. */
static void test_void_functions_accept_null(void **state)
{
    (void)state;
    dlasim_destroy(NULL);
    dlasim_reset(NULL);
    dlasim_trace_free(NULL);
    dlasim_conv_plan_free(NULL);
    dlasim_conv_desc_init(NULL);
    dlasim_conv_pack_weights(NULL, NULL, NULL);
    dlasim_conv_pack_cube(NULL, 1, 1, 1, 0, 0, NULL, NULL);
    dlasim_conv_unpack_cube(NULL, 1, 1, 1, 0, 0, NULL, NULL);
    assert_int_equal(dlasim_conv_cube_bytes(NULL, 1, 1, 1, 0, 0), 0);
    assert_non_null(dlasim_last_error(NULL));
    assert_int_equal(dlasim_trace_commands(NULL), 0);
    assert_int_equal(dlasim_trace_checks(NULL), 0);
}

/* Every device function refuses a NULL device. */
static void test_null_device(void **state)
{
    (void)state;
    uint32_t v;
    uint8_t b[4];
    uint64_t p;
    assert_int_equal(dlasim_csb_read(NULL, 0, &v), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_csb_write(NULL, 0, 0), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_mem_read(NULL, DLASIM_PORT_DBB, 0, b, 4), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_mem_write(NULL, DLASIM_PORT_DBB, 0, b, 4), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_step(NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_run(NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_busy(NULL, NULL, 0), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_irq_level(NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_param(NULL, "NVDLA_MAC_ATOMIC_C_SIZE", &p), DLASIM_ERR_INVAL);
}

/* Pointer arguments of device functions. */
static void test_null_arguments(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_create(NULL);
    uint64_t p;
    uint32_t a;
    char name[64];
    expect_error(dev, dlasim_csb_read(dev, NVDLA_GLB_S_INTR_STATUS_0, NULL), DLASIM_ERR_INVAL,
                 "val is NULL");
    expect_error(dev, dlasim_mem_read(dev, DLASIM_PORT_DBB, 0x1000, NULL, 16), DLASIM_ERR_INVAL,
                 "dlasim_mem_read: dst is NULL");
    expect_error(dev, dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x1000, NULL, 16), DLASIM_ERR_INVAL,
                 "dlasim_mem_write: src is NULL");
    /* no bytes: NULL is fine */
    assert_int_equal(dlasim_mem_read(dev, DLASIM_PORT_DBB, 0x1000, NULL, 0), 0);
    assert_int_equal(dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x1000, NULL, 0), 0);
    assert_int_equal(dlasim_param(dev, NULL, &p), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_param(dev, "NVDLA_MAC_ATOMIC_C_SIZE", NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_busy(dev, NULL, 16), 0);
    assert_int_equal(dlasim_reg_lookup(NULL, &a), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_reg_lookup("NVDLA_PDP.D_OP_ENABLE_0", NULL), DLASIM_ERR_INVAL);
    assert_null(dlasim_reg_name(NVDLA_PDP_D_OP_ENABLE_0, NULL, 64));
    assert_null(dlasim_reg_name(NVDLA_PDP_D_OP_ENABLE_0, name, 0));
    dlasim_destroy(dev);
}

/* Trace parser and player. */
static void test_trace_null_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    struct dlasim_trace *t = NULL;
    assert_int_equal(dlasim_trace_parse_file(NULL, &t, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_trace_parse_file: path is NULL"));
    assert_int_equal(dlasim_trace_parse_file("x.cfg", NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "out is NULL"));
    assert_int_equal(dlasim_trace_parse_text(NULL, 5, "t", NULL, &t, err, sizeof(err)),
                     DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "text is NULL"));
    assert_int_equal(dlasim_trace_parse_text("", 0, "t", NULL, NULL, err, sizeof(err)),
                     DLASIM_ERR_INVAL);
    /* NULL text of length 0 and a NULL name are allowed */
    assert_int_equal(dlasim_trace_parse_text(NULL, 0, NULL, NULL, &t, err, sizeof(err)), 0);
    struct dlasim_dev *dev = tdev_create(NULL);
    assert_int_equal(dlasim_trace_play(NULL, t, NULL, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_trace_play: dev is NULL"));
    assert_int_equal(dlasim_trace_play(dev, NULL, NULL, NULL, err, sizeof(err)),
                     DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "the trace is NULL"));
    assert_int_equal(dlasim_trace_play(dev, t, NULL, NULL, NULL, 0), 0);
    dlasim_destroy(dev);
    dlasim_trace_free(t);
}

/* Convolution planner. */
static void test_conv_null_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    struct dlasim_conv_hw hw;
    struct dlasim_conv_desc desc;
    struct dlasim_conv_plan plan;
    struct dlasim_conv_mem mem = {0x80000000u, 0x90000000u, 0xa0000000u, 0, 0, 0, 0};
    int8_t data[64] = {0};
    struct dlasim_dev *dev = tdev_create(NULL);
    assert_int_equal(dlasim_conv_hw_of(NULL, &hw), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_hw_of(dev, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_hw_of(dev, &hw), 0);
    dlasim_conv_desc_init(&desc);
    desc.in_w = desc.in_h = 2;
    desc.in_c = desc.kernels = 8;
    desc.kernel_w = desc.kernel_h = 1;
    assert_int_equal(dlasim_conv_plan(NULL, &desc, &plan, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "is NULL"));
    assert_int_equal(dlasim_conv_plan(&hw, NULL, &plan, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_plan(&hw, &desc, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_plan(&hw, &desc, &plan, err, sizeof(err)), 0);
    assert_int_equal(dlasim_conv_write_input(NULL, &plan, &mem, data), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_write_input(dev, NULL, &mem, data), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_write_input(dev, &plan, NULL, data), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_write_input(dev, &plan, &mem, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_write_weights(dev, &plan, &mem, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_write_weights(dev, NULL, &mem, data), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_read_output(dev, &plan, &mem, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_read_output(dev, &plan, NULL, data), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_run(NULL, &plan, &mem), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_run(dev, NULL, &mem), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_conv_run(dev, &plan, NULL), DLASIM_ERR_INVAL);
    dlasim_conv_plan_free(&plan);
    dlasim_destroy(dev);
}

/* Cycle model: out pointers required, a NULL device is a device with the
 * model off. */
static void test_timing_null_arguments(void **state)
{
    (void)state;
    struct dlasim_timing_profile prof;
    struct dlasim_timing_layer layer;
    struct dlasim_timing_total total;
    assert_int_equal(dlasim_timing_profile_get("rtl-tb", NULL), DLASIM_ERR_INVAL);
    dlasim_timing_profile_dram(NULL, 25.6, 100, 1000);
    assert_int_equal(dlasim_timing_get_profile(NULL, &prof), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_timing_enabled(NULL), 0);
    assert_int_equal(dlasim_timing_now(NULL), 0);
    dlasim_timing_advance(NULL, 5);
    dlasim_timing_hold(NULL, 1);
    assert_int_equal(dlasim_timing_irq_cycle(NULL, 1), -1);
    assert_int_equal(dlasim_timing_wait_irq(NULL, 1), 0);
    assert_int_equal(dlasim_timing_layer_count(NULL), 0);
    assert_int_equal(dlasim_timing_layer_get(NULL, 0, &layer), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_timing_total(NULL, &total), DLASIM_ERR_INVAL);
    dlasim_timing_clear(NULL);
    assert_int_equal(dlasim_timing_csb_writes(NULL), 0);
    struct dlasim_options o = {0};
    o.timing = 1;
    struct dlasim_dev *dev = tdev_create(&o);
    assert_int_equal(dlasim_timing_get_profile(dev, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_timing_total(dev, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_timing_layer_get(dev, 0, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_timing_get_profile(dev, &prof), 0);
    dlasim_destroy(dev);
}

/* Runtime and loadables. */
static void test_runtime_null_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    uint8_t bytes[16] = {0};
    const uint8_t *data;
    size_t len;
    struct dlasim_loadable *ld;
    struct dlasim_rt_network net;
    struct dlasim_rt_encoded enc;
    const int16_t idx[4] = {1, 2, 3, 4};
    memset(&net, 0, sizeof(net));
    assert_int_equal(dlasim_loadable_open(bytes, sizeof(bytes), NULL, err, sizeof(err)),
                     DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "out is NULL"));
    assert_int_not_equal(dlasim_loadable_open(NULL, 16, &ld, err, sizeof(err)), 0);
    assert_null(ld);
    dlasim_loadable_close(NULL);
    assert_int_equal(dlasim_loadable_num_inputs(NULL), 0);
    assert_int_equal(dlasim_loadable_num_outputs(NULL), 0);
    assert_int_equal(dlasim_loadable_output_dimg(NULL, 0, &data, &len), DLASIM_ERR_INVAL);
    struct dlasim_dev *dev = tdev_create(NULL);
    assert_int_equal(dlasim_loadable_run(dev, NULL, NULL, 0, NULL, err, sizeof(err)),
                     DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_loadable_run"));
    assert_int_equal(dlasim_rt_execute(dev, NULL, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rt_execute(NULL, &net, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_loadable_write(NULL, NULL, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_loadable_write"));
    assert_int_equal(dlasim_rt_encode(NULL, 12, idx, &enc, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rt_encode(&net, 12, NULL, &enc, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rt_encode(&net, 12, idx, NULL, err, sizeof(err)), DLASIM_ERR_INVAL);
    dlasim_rt_encoded_free(NULL);
    dlasim_destroy(dev);
}

/* RK3588 device and regcmd lists. */
static void test_rk_null_arguments(void **state)
{
    (void)state;
    uint32_t v;
    uint8_t buf[64];
    struct dlasim_options o = {0};
    o.config = "rk3588";
    struct dlasim_dev *dev = tdev_create(&o);
    assert_int_equal(dlasim_csb_read(dev, 0, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_mem_read(dev, DLASIM_PORT_DBB, 0x1000, NULL, 8), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x1000, NULL, 8), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_param(dev, NULL, NULL), DLASIM_ERR_INVAL);
    dlasim_rk_regcmd_free(NULL);
    assert_int_equal(dlasim_rk_emit(NULL, 0x1000, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_emit_raw(NULL, 1, 2, 3), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_end_task(NULL, 1), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_task_entries(NULL, 0), 0);
    assert_int_equal(dlasim_rk_layout_size(NULL), 0);
    assert_int_equal(dlasim_rk_layout(NULL, 0, buf, sizeof(buf)), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_emit_conv(NULL, NULL, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_emit_pool(NULL, NULL), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_kick(NULL, 0, 0x1000, 1, 1, 0), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_ack(NULL, 0), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_cores(NULL), 0);
    assert_int_equal(dlasim_rk_irq_level(NULL, 0), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_rk_reg_lookup(NULL, &v), DLASIM_ERR_INVAL);
    assert_null(dlasim_rk_reg_name(0, NULL, 16));
    dlasim_destroy(dev);
}

/* The ONNX compiler's entry points (compiler.h): NULL model, output and
 * data pointers are refused by name; status-less functions give 0/NULL. */
static void test_compiler_null_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    float f[4] = {0};
    int64_t dims[6];
    uint8_t *blob = (uint8_t *)f;
    size_t len = 1;
    struct dlasim_model *m = (struct dlasim_model *)&err; /* must be reset to NULL */
    assert_int_equal(dlasim_model_load_onnx(f, sizeof f, NULL, err, sizeof err), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_model_load_onnx: out is NULL"));
    assert_int_equal(dlasim_model_load_onnx(NULL, 16, &m, err, sizeof err), DLASIM_ERR_INVAL);
    assert_null(m);
    assert_non_null(strstr(err, "buf is NULL"));
    assert_int_equal(dlasim_model_input_size(NULL), 0);
    assert_int_equal(dlasim_model_output_size(NULL), 0);
    assert_int_equal(dlasim_model_input_shape(NULL, dims), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_model_run_float(NULL, f, f, err, sizeof err), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_model_run_float: m is NULL"));
    assert_int_equal(dlasim_model_calibrate(NULL, f, 1, NULL, err, sizeof err), DLASIM_ERR_INVAL);
    assert_int_equal(dlasim_model_compile(NULL, "nv_small", NULL, 0), DLASIM_ERR_INVAL);
    assert_null(dlasim_model_compile_report(NULL));
    assert_null(dlasim_model_layer_report(NULL));
    dlasim_model_stats_begin(NULL, 1);
    assert_null(dlasim_model_precision_flags(NULL));
    assert_int_equal(dlasim_model_set_min_sqnr(NULL, 20), DLASIM_ERR_INVAL);
    dlasim_model_free(NULL);
    assert_int_equal(dlasim_model_run(NULL, NULL, f, f, NULL, err, sizeof err), DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_model_run: m is NULL"));
    assert_int_equal(dlasim_model_write_loadable(NULL, &blob, &len, err, sizeof err),
                     DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "dlasim_model_write_loadable: m is NULL"));
    assert_true(dlasim_model_output_scale(NULL) == 0.0f);
    assert_int_equal(dlasim_model_macs(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_out_null),
        cmocka_unit_test(test_create_overrides_null),
        cmocka_unit_test(test_create_mem_ops_incomplete),
        cmocka_unit_test(test_void_functions_accept_null),
        cmocka_unit_test(test_null_device),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_trace_null_arguments),
        cmocka_unit_test(test_conv_null_arguments),
        cmocka_unit_test(test_timing_null_arguments),
        cmocka_unit_test(test_runtime_null_arguments),
        cmocka_unit_test(test_rk_null_arguments),
        cmocka_unit_test(test_compiler_null_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
