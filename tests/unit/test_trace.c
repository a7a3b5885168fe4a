/*
 * Trace parser and player: bad input gets a clear error naming file:line,
 * never a crash; waits that can never complete are reported with the busy
 * units; DMA beyond the reachable memory is reported with unit, address and
 * layer; strict mode reports reads of never-written memory; a programming the
 * RTL hangs on stalls the layer ("// expect: never completes" traces).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dlasim/dlasim.h"
#include "dlasim/trace.h"

static int parse(const char *text, char *err, size_t errlen, struct dlasim_trace **t)
{
    return dlasim_trace_parse_text(text, strlen(text), "t.cfg", "/nonexistent", t, err, errlen);
}

/* Parsing `text` fails with `status` and a message containing `want`. */
static void expect_parse_error(const char *text, int status, const char *want)
{
    char err[512] = "";
    struct dlasim_trace *t = NULL;
    int rc = parse(text, err, sizeof(err), &t);
    if (rc != status || !strstr(err, want)) {
        fail_msg("parsing <<%s>> gave %d '%s', want %d with '%s'", text, rc, err, status, want);
    }
    assert_null(t);
}

static void test_parse_errors_name_file_and_line(void **state)
{
    (void)state;
    expect_parse_error("\n\nreg_write(NVDLA_PDP.NO_SUCH_REG_0, 1);", DLASIM_ERR_PARSE,
                       "t.cfg:3: unknown register 'NVDLA_PDP.NO_SUCH_REG_0'");
    expect_parse_error("reg_write(NVDLA_XYZ.D_OP_ENABLE_0, 1);", DLASIM_ERR_PARSE,
                       "t.cfg:1: unknown register");
    expect_parse_error("frobnicate(1);", DLASIM_ERR_PARSE, "t.cfg:1: unknown command 'frobnicate'");
    expect_parse_error("reg_write(NVDLA_PDP.D_OP_ENABLE_0, 1)", DLASIM_ERR_PARSE,
                       "t.cfg:1: expected 'command(arguments);'");
    expect_parse_error("reg_write(NVDLA_PDP.D_OP_ENABLE_0, 0x1zz);", DLASIM_ERR_PARSE,
                       "value: '0x1zz' is not a number");
    expect_parse_error("reg_write(NVDLA_PDP.D_OP_ENABLE_0, 0x100000000);", DLASIM_ERR_PARSE,
                       "does not fit in 32 bits");
    expect_parse_error("reg_write(NVDLA_PDP.D_OP_ENABLE_0);", DLASIM_ERR_PARSE,
                       "reg_write takes 2 arguments, got 1");
    expect_parse_error("mem_init(pri_mem, 0x0, 0x10, ALL_ONES);", DLASIM_ERR_PARSE,
                       "unknown mem_init pattern 'ALL_ONES'");
    expect_parse_error("mem_init(dram, 0x0, 0x10, ALL_ZERO);", DLASIM_ERR_PARSE,
                       "unknown memory 'dram'");
    expect_parse_error("mem_init(pri_mem, 0x0, 0x80000000, ALL_ZERO);", DLASIM_ERR_PARSE,
                       "exceeds");
    expect_parse_error("intr_notify(FOO_0, s);", DLASIM_ERR_PARSE, "unknown interrupt 'FOO_0'");
    expect_parse_error("intr_notify(PDP, s);", DLASIM_ERR_PARSE, "must be <ENGINE>_<GROUP>");
    expect_parse_error("intr_notify(PDP_0, s);\ncheck_crc(t, 1, 0x0, 0x10, 0x0);", DLASIM_ERR_PARSE,
                       "t.cfg:2: check refers to event 't'");
    expect_parse_error("mem_load(pri_mem, 0x0, \"missing.dat\");", DLASIM_ERR_IO,
                       "t.cfg:1: cannot read surface file '/nonexistent/missing.dat'");
    expect_parse_error("mem_load(pri_mem, 0x0, \"/dev/zero\");", DLASIM_ERR_IO,
                       "cannot read surface file '/dev/zero'");
    expect_parse_error("mem_load(pri_mem, 0x0, \"unterminated);", DLASIM_ERR_PARSE,
                       "unterminated string");
}

static void test_valid_trace_parses(void **state)
{
    (void)state;
    char err[256];
    struct dlasim_trace *t;
    const char *text = "// comment\n"
                       "mem_init(pri_mem, 0x80000000, 0x100, ALL_ZERO);  // trailing\n"
                       "reg_write(NVDLA_PDP.D_OP_ENABLE_0, 0x1);\n"
                       "sync_wait(NVDLA_CSC, x);\n"
                       "intr_notify(cdma_dat_1, ev);\n"
                       "check_nothing(ev);\n"
                       "check_crc(ev, pri_mem, 0x80000000, 0x10, 0x12345678);\n";
    assert_int_equal(parse(text, err, sizeof(err), &t), 0);
    assert_int_equal(dlasim_trace_commands(t), 6);
    assert_int_equal(dlasim_trace_checks(t), 2);
    dlasim_trace_free(t);
}

static int play(const char *config, int strict, const char *text, char *err, size_t errlen,
                struct dlasim_trace_result *res)
{
    struct dlasim_options o = {0};
    struct dlasim_dev *dev;
    struct dlasim_trace *t;
    o.config = config;
    o.strict_mem = strict;
    assert_int_equal(parse(text, err, errlen, &t), 0);
    assert_int_equal(dlasim_create(&o, &dev, err, errlen), 0);
    int rc = dlasim_trace_play(dev, t, NULL, res, err, errlen);
    dlasim_destroy(dev);
    dlasim_trace_free(t);
    return rc;
}

/* A wait the device can never satisfy ends with the units still busy. */
static void test_wait_that_never_completes(void **state)
{
    (void)state;
    char err[512];
    struct dlasim_trace_result res;
    const char *text = "reg_write(NVDLA_CDP.D_OP_ENABLE_0, 0x1);\n" /* CDP_RDMA never enabled */
                       "intr_notify(CDP_0, done);\n"
                       "check_nothing(done);\n";
    assert_int_equal(play("nv_small", 0, text, err, sizeof(err), &res), DLASIM_ERR_TIMEOUT);
    assert_non_null(strstr(err, "t.cfg:2: intr_notify(CDP_0, done) can never complete"));
    assert_non_null(strstr(err, "CDP group 0 enabled"));
    const char *poll = "poll_reg_equal(NVDLA_PDP.S_STATUS_0, 0x1);\n";
    assert_int_equal(play("nv_small", 0, poll, err, sizeof(err), &res), DLASIM_ERR_TIMEOUT);
    assert_non_null(strstr(err, "t.cfg:1: poll_reg_equal(NVDLA_PDP.S_STATUS_0, 0x1)"));
}

/* The CRC of a region is zlib's crc32; a mismatch is a failed check. */
static void test_check_crc(void **state)
{
    (void)state;
    char err[512];
    struct dlasim_trace_result res;
    /* crc32 of 16 zero bytes is 0xecbb4b55 */
    const char *good = "mem_init(pri_mem, 0x1000, 0x10, ALL_ZERO);\n"
                       "reg_write(NVDLA_GLB.S_INTR_SET_0, 0x10);\n"
                       "intr_notify(PDP_0, e);\n"
                       "check_crc(e, pri_mem, 0x1000, 0x10, 0xecbb4b55);\n";
    assert_int_equal(play("nv_small", 0, good, err, sizeof(err), &res), 0);
    assert_int_equal(res.checks_passed, 1);
    const char *bad = "reg_write(NVDLA_GLB.S_INTR_SET_0, 0x10);\n"
                      "intr_notify(PDP_0, e);\n"
                      "check_crc(e, pri_mem, 0x1000, 0x10, 0x1);\n";
    assert_int_equal(play("nv_small", 0, bad, err, sizeof(err), &res), DLASIM_ERR_CHECK);
    assert_int_equal(res.checks_failed, 1);
}

/* PDP 11x3x20, kernel 7x6, stride 3x2, PAD_TOP 2, PAD_BOTTOM 4 where the last
 * window needs 3: cal2d's flush count from PAD_BOTTOM (samllH_flush_num) is
 * 0, one line short per surface; NVIDIA's nv_small RTL never completes it
 * (tests/traces/rtl-graded/rg_pdpoverb_11x3x20_k7x6s3x2_ave_045). */
static const char pdp_short[] =
    "mem_init(pri_mem, 0x80000000, 0x7f8, ALL_ZERO);\n"
    "mem_init(pri_mem, 0xa0000000, 0x90, ALL_ZERO);\n"
    "reg_write(NVDLA_PDP_RDMA.D_DATA_CUBE_IN_WIDTH_0, 0xa);\n"
    "reg_write(NVDLA_PDP_RDMA.D_DATA_CUBE_IN_HEIGHT_0, 0x2);\n"
    "reg_write(NVDLA_PDP_RDMA.D_DATA_CUBE_IN_CHANNEL_0, 0x13);\n"
    "reg_write(NVDLA_PDP_RDMA.D_FLYING_MODE_0, 0x1);\n"
    "reg_write(NVDLA_PDP_RDMA.D_SRC_BASE_ADDR_LOW_0, 0x80000000);\n"
    "reg_write(NVDLA_PDP_RDMA.D_SRC_LINE_STRIDE_0, 0xb8);\n"
    "reg_write(NVDLA_PDP_RDMA.D_SRC_SURFACE_STRIDE_0, 0x2a8);\n"
    "reg_write(NVDLA_PDP_RDMA.D_SRC_RAM_CFG_0, 0x1);\n"
    "reg_write(NVDLA_PDP_RDMA.D_POOLING_KERNEL_CFG_0, 0x26);\n"
    "reg_write(NVDLA_PDP_RDMA.D_POOLING_PADDING_CFG_0, 0x1);\n"
    "reg_write(NVDLA_PDP.D_DATA_CUBE_IN_WIDTH_0, 0xa);\n"
    "reg_write(NVDLA_PDP.D_DATA_CUBE_IN_HEIGHT_0, 0x2);\n"
    "reg_write(NVDLA_PDP.D_DATA_CUBE_IN_CHANNEL_0, 0x13);\n"
    "reg_write(NVDLA_PDP.D_DATA_CUBE_OUT_WIDTH_0, 0x2);\n"
    "reg_write(NVDLA_PDP.D_DATA_CUBE_OUT_HEIGHT_0, 0x1);\n"
    "reg_write(NVDLA_PDP.D_DATA_CUBE_OUT_CHANNEL_0, 0x13);\n"
    "reg_write(NVDLA_PDP.D_OPERATION_MODE_CFG_0, 0x10);\n"
    "reg_write(NVDLA_PDP.D_POOLING_KERNEL_CFG_0, 0x120506);\n"
    "reg_write(NVDLA_PDP.D_RECIP_KERNEL_WIDTH_0, 0x2492);\n"
    "reg_write(NVDLA_PDP.D_RECIP_KERNEL_HEIGHT_0, 0x2aab);\n"
    "reg_write(NVDLA_PDP.D_POOLING_PADDING_CFG_0, 0x4321);\n"
    "reg_write(NVDLA_PDP.D_SRC_BASE_ADDR_LOW_0, 0x80000000);\n"
    "reg_write(NVDLA_PDP.D_SRC_LINE_STRIDE_0, 0xb8);\n"
    "reg_write(NVDLA_PDP.D_SRC_SURFACE_STRIDE_0, 0x2a8);\n"
    "reg_write(NVDLA_PDP.D_DST_BASE_ADDR_LOW_0, 0xa0000000);\n"
    "reg_write(NVDLA_PDP.D_DST_LINE_STRIDE_0, 0x18);\n"
    "reg_write(NVDLA_PDP.D_DST_SURFACE_STRIDE_0, 0x30);\n"
    "reg_write(NVDLA_PDP.D_DST_RAM_CFG_0, 0x1);\n"
    "reg_write(NVDLA_PDP.D_OP_ENABLE_0, 0x1);\n"
    "reg_write(NVDLA_PDP_RDMA.D_OP_ENABLE_0, 0x1);\n";

static uint32_t reg(struct dlasim_dev *dev, const char *name)
{
    uint32_t addr, v = 0xdeadbeef;
    assert_int_equal(dlasim_reg_lookup(name, &addr), 0);
    assert_int_equal(dlasim_csb_read(dev, addr, &v), 0);
    return v;
}

/* The stalled layer: started, never done; PDP stays enabled and running with
 * no done interrupt (PDP_RDMA, which read its whole cube, completes), nothing
 * else of PDP starts, until reset. */
static void test_layer_the_hardware_never_completes(void **state)
{
    (void)state;
    char err[1024];
    struct dlasim_options o = {0};
    struct dlasim_dev *dev;
    struct dlasim_trace *t;
    o.config = "nv_small";
    assert_int_equal(parse(pdp_short, err, sizeof(err), &t), 0);
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), 0);
    assert_int_equal(dlasim_trace_play(dev, t, NULL, NULL, err, sizeof(err)), 0);
    assert_int_equal(dlasim_step(dev), 1);
    assert_int_equal(dlasim_step(dev), 0);
    assert_int_equal(reg(dev, "NVDLA_PDP.D_OP_ENABLE_0"), 1);
    assert_int_equal(reg(dev, "NVDLA_PDP_RDMA.D_OP_ENABLE_0"), 0); /* it read everything */
    assert_int_equal(reg(dev, "NVDLA_PDP.S_STATUS_0") & 3u, 1); /* group 0 RUNNING */
    assert_int_equal(reg(dev, "NVDLA_GLB.S_INTR_STATUS_0"), 0);
    assert_true(dlasim_busy(dev, err, sizeof(err)));
    assert_non_null(strstr(err, "layer 1 never completes"));
    assert_non_null(strstr(err, "PAD_BOTTOM=4"));
    dlasim_reset(dev);
    assert_false(dlasim_busy(dev, err, sizeof(err)));
    dlasim_destroy(dev);
    dlasim_trace_free(t);
}

/* A waiting trace reports it; "// expect: never completes" makes it the
 * expected outcome, and a trace that completes then fails. */
static void test_expect_never_completes(void **state)
{
    (void)state;
    char err[1024], text[4096];
    struct dlasim_trace_result res;
    snprintf(text, sizeof(text), "%sintr_notify(PDP_0, e);\ncheck_nothing(e);\n", pdp_short);
    assert_int_equal(play("nv_small", 0, text, err, sizeof(err), &res), DLASIM_ERR_TIMEOUT);
    assert_non_null(strstr(err, "intr_notify(PDP_0, e) can never complete: layer 1 never "
                                "completes (the hardware hangs on it): PDP: cal2d flushes 0"));
    snprintf(text, sizeof(text), "// expect: never completes\n%sintr_notify(PDP_0, e);\n"
             "check_nothing(e);\n", pdp_short);
    assert_int_equal(play("nv_small", 0, text, err, sizeof(err), &res), 0);
    assert_int_equal(res.checks_passed, 1);
    const char *done = "// expect: never completes\n"
                       "reg_write(NVDLA_GLB.S_INTR_SET_0, 0x10);\n"
                       "intr_notify(PDP_0, e);\n"
                       "check_nothing(e);\n";
    assert_int_equal(play("nv_small", 0, done, err, sizeof(err), &res), DLASIM_ERR_CHECK);
    assert_non_null(strstr(err, "t.cfg:1: expected the device never to complete"));
}

/* Host accesses outside the configured address width are refused. */
static void test_memory_bounds_and_strict_reads(void **state)
{
    (void)state;
    char err[512];
    struct dlasim_trace_result res;
    const char *beyond = "mem_init(pri_mem, 0xfffffff0, 0x20, ALL_ZERO);\n";
    assert_int_equal(play("nv_small", 0, beyond, err, sizeof(err), &res), DLASIM_ERR_MEM);
    assert_non_null(strstr(err, "t.cfg:1: mem_init failed"));
    assert_non_null(strstr(err, "beyond the 32-bit address space"));
    const char *unwritten = "reg_write(NVDLA_GLB.S_INTR_SET_0, 0x10);\n"
                            "intr_notify(PDP_0, e);\n"
                            "check_crc(e, pri_mem, 0x2000, 0x10, 0xecbb4b55);\n";
    assert_int_equal(play("nv_small", 0, unwritten, err, sizeof(err), &res), 0);
    assert_int_equal(play("nv_small", 1, unwritten, err, sizeof(err), &res), DLASIM_ERR_MEM);
    assert_non_null(strstr(err, "never-written byte at 0x2000"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_errors_name_file_and_line),
        cmocka_unit_test(test_valid_trace_parses),
        cmocka_unit_test(test_wait_that_never_completes),
        cmocka_unit_test(test_check_crc),
        cmocka_unit_test(test_memory_bounds_and_strict_reads),
        cmocka_unit_test(test_layer_the_hardware_never_completes),
        cmocka_unit_test(test_expect_never_completes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
