/*
 * Trace parser and player: bad input gets a clear error naming file:line,
 * never a crash; waits that can never complete are reported with the busy
 * units; DMA beyond the reachable memory is reported with unit, address and
 * layer; strict mode reports reads of never-written memory.
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
