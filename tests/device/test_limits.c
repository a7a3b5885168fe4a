/*
 * Hostile programming never takes the host down: the work budget counts
 * what a layer really moves (strides, repeats, batches) and is checked
 * before the layer runs; DMA extents are checked before the first byte
 * moves; device memory takes host memory only for pages holding non-zero
 * data, within the caller's max_host_mem, and an exceeded budget is an error
 * naming unit, layer and addresses (or the trace file:line).
 *
 * Memory traffic is observed through caller memory callbacks that count
 * bytes and refuse writes past a small quota, so a model that ignored the
 * budget fails quickly here instead of writing gigabytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "dlasim/trace.h"
#include "regs/gen/nvdla_regs.h"

/* ---- counting caller memory ------------------------------------------------ */

struct counting_mem {
    uint64_t read_bytes, write_bytes;
    uint64_t write_quota; /* writes beyond this many bytes are refused */
};

static int cm_read(void *opaque, uint64_t addr, void *dst, size_t len)
{
    struct counting_mem *m = opaque;
    (void)addr;
    m->read_bytes += len;
    memset(dst, 0x5a, len);
    return 0;
}

static int cm_write(void *opaque, uint64_t addr, const void *src, size_t len)
{
    struct counting_mem *m = opaque;
    (void)addr;
    (void)src;
    if (m->write_bytes + len > m->write_quota) {
        return DLASIM_ERR_MEM;
    }
    m->write_bytes += len;
    return 0;
}

static const struct dlasim_mem_ops counting_ops = {cm_read, cm_write};

static struct dlasim_dev *counting_dev(const char *config, struct counting_mem *m,
                                       uint64_t max_work)
{
    struct dlasim_options o = {0};
    o.config = config;
    o.dbb_ops = &counting_ops;
    o.dbb_opaque = m;
    o.max_layer_work = max_work;
    o.threads = 1;
    m->read_bytes = m->write_bytes = 0;
    m->write_quota = 1u << 20;
    return tdev_create(&o);
}

/* ---- RUBIK contract (the case 1) ------------------------------------ */

/* Contract W x H atoms, one surface, deconvolution strides sx x sy, output
 * line stride `out_line`, from DBB 0x1000000 to DBB `dst`. */
static void program_contract(struct dlasim_dev *dev, uint32_t w, uint32_t h, uint32_t sx,
                             uint32_t sy, uint32_t out_line, uint64_t dst)
{
    const uint32_t in_line = w * 32u;
    wr(dev, NVDLA_RBK_D_MISC_CFG_0,
       NVDLA_RBK_D_MISC_CFG_0_RUBIK_MODE(NVDLA_RBK_D_MISC_CFG_0_RUBIK_MODE_CONTRACT));
    wr(dev, NVDLA_RBK_D_DAIN_RAM_TYPE_0, 1);
    wr(dev, NVDLA_RBK_D_DAOUT_RAM_TYPE_0, 1);
    wr(dev, NVDLA_RBK_D_DATAIN_SIZE_0_0,
       NVDLA_RBK_D_DATAIN_SIZE_0_0_DATAIN_WIDTH(w - 1) |
           NVDLA_RBK_D_DATAIN_SIZE_0_0_DATAIN_HEIGHT(h - 1));
    wr(dev, NVDLA_RBK_D_DATAIN_SIZE_1_0, 0);
    wr(dev, NVDLA_RBK_D_DATAOUT_SIZE_1_0, 0); /* 1 channel: one surface */
    wr(dev, NVDLA_RBK_D_DAIN_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_RBK_D_DAIN_ADDR_LOW_0, 0x1000000u);
    wr(dev, NVDLA_RBK_D_DAIN_LINE_STRIDE_0, in_line);
    wr(dev, NVDLA_RBK_D_DAIN_SURF_STRIDE_0, in_line * h);
    wr(dev, NVDLA_RBK_D_CONTRACT_STRIDE_0_0, in_line * h);
    wr(dev, NVDLA_RBK_D_DAOUT_ADDR_HIGH_0, (uint32_t)(dst >> 32));
    wr(dev, NVDLA_RBK_D_DAOUT_ADDR_LOW_0, (uint32_t)dst);
    wr(dev, NVDLA_RBK_D_DAOUT_LINE_STRIDE_0, out_line);
    wr(dev, NVDLA_RBK_D_DAOUT_SURF_STRIDE_0, 0);
    wr(dev, NVDLA_RBK_D_DECONV_STRIDE_0,
       NVDLA_RBK_D_DECONV_STRIDE_0_DECONV_X_STRIDE(sx - 1) |
           NVDLA_RBK_D_DECONV_STRIDE_0_DECONV_Y_STRIDE(sy - 1));
    wr(dev, NVDLA_RBK_D_OP_ENABLE_0, 1);
}

/* 256x256x1 with 32x32 strides and line stride 0x40000 writes 2 GiB: refused
 * before a byte moves, under a budget of 16M. */
static void test_rubik_contract_strides_count(void **state)
{
    (void)state;
    struct counting_mem m;
    struct dlasim_dev *dev = counting_dev("nv_large", &m, 1u << 24);
    program_contract(dev, 256, 256, 32, 32, 0x40000u, 0x100000000ull);
    expect_error(dev, dlasim_run(dev), DLASIM_ERR_UNSUPPORTED,
                 "RUBIK: the layer's work of 4294967296 (2147483648 bytes read, 2147483648 "
                 "bytes written, 0 elements computed) exceeds the caller's limit of 16777216");
    assert_true(strstr(dlasim_last_error(dev), "layer 1:") != NULL);
    assert_int_equal(m.read_bytes, 0);
    assert_int_equal(m.write_bytes, 0);
    /* the layer still completed: interrupt raised, nothing left enabled */
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0),
                     NVDLA_GLB_S_INTR_STATUS_0_RUBIK_DONE_STATUS0__MASK);
    assert_false(dlasim_busy(dev, NULL, 0));
    dlasim_destroy(dev);
}

/* The same layer shrunk to 8x8 runs under the same budget and moves exactly
 * what the budget counted. */
static void test_rubik_contract_within_budget_runs(void **state)
{
    (void)state;
    struct counting_mem m;
    struct dlasim_dev *dev = counting_dev("nv_large", &m, 1u << 24);
    m.write_quota = 4u << 20;
    program_contract(dev, 8, 8, 32, 32, 0x40000u, 0x100000000ull);
    assert_int_equal(dlasim_run(dev), 0);
    assert_int_equal(m.read_bytes, 8u * 8u * 32u * 32u * 32u);
    assert_int_equal(m.write_bytes, 8u * 8u * 32u * 32u * 32u);
    dlasim_destroy(dev);
}

/* An output cube whose strides carry it past the end of the 64-bit address
 * space is refused before its first line is written. */
static void test_rubik_extent_checked_before_writing(void **state)
{
    (void)state;
    struct counting_mem m;
    struct dlasim_dev *dev = counting_dev("nv_large", &m, 0);
    program_contract(dev, 8, 8, 2, 2, 0x40000000u, 0xffffffff00000000ull);
    expect_error(dev, dlasim_run(dev), DLASIM_ERR_MEM, "RUBIK: DMA write of the output cube");
    assert_true(strstr(dlasim_last_error(dev), "beyond the 64-bit address space") != NULL);
    assert_int_equal(m.write_bytes, 0);
    dlasim_destroy(dev);
}

/* ---- BDMA: a launched group is one layer -------------------------------------- */

static void queue_copy(struct dlasim_dev *dev, uint64_t src, uint64_t dst, uint32_t lines)
{
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0, (uint32_t)src);
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_HIGH_0, (uint32_t)(src >> 32));
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_LOW_0, (uint32_t)dst);
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_HIGH_0, (uint32_t)(dst >> 32));
    wr(dev, NVDLA_BDMA_CFG_LINE_0, 31); /* 1 KiB lines */
    wr(dev, NVDLA_BDMA_CFG_CMD_0, NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE(1) |
                                      NVDLA_BDMA_CFG_CMD_0_DST_RAM_TYPE(1));
    wr(dev, NVDLA_BDMA_CFG_LINE_REPEAT_0, lines - 1);
    wr(dev, NVDLA_BDMA_CFG_SRC_LINE_0, 1024);
    wr(dev, NVDLA_BDMA_CFG_DST_LINE_0, 1024);
    wr(dev, NVDLA_BDMA_CFG_SURF_REPEAT_0, 0);
    wr(dev, NVDLA_BDMA_CFG_OP_0, NVDLA_BDMA_CFG_OP_0_EN(1));
}

/* Two transfers of 64 KiB each (128 KiB of work each) in one group: the
 * group's 256 KiB exceed a 200000 budget, so nothing is copied. */
static void test_bdma_group_counted_before_running(void **state)
{
    (void)state;
    struct counting_mem m;
    struct dlasim_dev *dev = counting_dev("nv_large", &m, 200000);
    queue_copy(dev, 0x1000000, 0x2000000, 64);
    queue_copy(dev, 0x3000000, 0x4000000, 64);
    wr(dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    expect_error(dev, dlasim_run(dev), DLASIM_ERR_UNSUPPORTED,
                 "BDMA: the layer's work of 262144 (131072 bytes read, 131072 bytes written");
    assert_int_equal(m.write_bytes, 0);
    dlasim_destroy(dev);
}

/* ---- host memory for device memory (the case 2) ---------------------- */

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static struct dlasim_dev *budget_dev(uint64_t max_host_mem, int strict)
{
    struct dlasim_options o = {0};
    o.max_host_mem = max_host_mem;
    o.strict_mem = strict;
    return tdev_create(&o);
}

/* mem_init of 16 x 16 MiB of zeros: no page is allocated (a 64 KiB budget
 * is enough) and the process does not grow by the 256 MiB it zeroes. */
static void test_trace_zero_fill_stays_sparse(void **state)
{
    (void)state;
    char text[2048] = "", err[512] = "";
    for (unsigned i = 0; i < 16; i++) {
        size_t n = strlen(text);
        snprintf(text + n, sizeof(text) - n, "mem_init(pri_mem, 0x%x, 0x1000000, ALL_ZERO);\n",
                 0x80000000u + i * 0x1000000u);
    }
    struct dlasim_trace *t = NULL;
    assert_int_equal(dlasim_trace_parse_text(text, strlen(text), "z.cfg", NULL, &t, err,
                                             sizeof(err)), 0);
    struct dlasim_dev *dev = budget_dev(64u << 10, 0);
    long before = max_rss_kb();
    int rc = dlasim_trace_play(dev, t, NULL, NULL, err, sizeof(err));
    if (rc) {
        fail_msg("zero fill refused: %s", err);
    }
    long grown_kb = max_rss_kb() - before;
    if (grown_kb > 64 * 1024) {
        fail_msg("zeroing 256 MiB grew the process by %ld KiB", grown_kb);
    }
    /* zeroed memory reads as zero; non-zero data still fits the budget */
    uint8_t page[4096], back[4096];
    memset(page, 0x33, sizeof(page));
    mem_wr(dev, 0x80123000u, page, sizeof(page));
    mem_rd(dev, 0x80123000u, back, sizeof(back));
    assert_memory_equal(page, back, sizeof(page));
    dlasim_destroy(dev);
    dlasim_trace_free(t);
}

/* Zeros written over data do clear it. */
static void test_zero_over_data_clears(void **state)
{
    (void)state;
    uint8_t data[6000], zero[6000] = {0}, back[6000];
    memset(data, 0xa5, sizeof(data));
    struct dlasim_dev *dev = budget_dev(0, 0);
    mem_wr(dev, 0x1800, data, sizeof(data));
    mem_wr(dev, 0x1900, zero, 100);
    mem_rd(dev, 0x1800, back, sizeof(back));
    memset(data + 0x100, 0, 100);
    assert_memory_equal(data, back, sizeof(back));
    mem_wr(dev, 0x1800, zero, sizeof(zero));
    mem_rd(dev, 0x1800, back, sizeof(back));
    assert_memory_equal(zero, back, sizeof(back));
    dlasim_destroy(dev);
}

/* Strict mode: zero-fill makes bytes initialised (readable) at the cost of
 * the written-bitmaps only (1/8 of the bytes); bytes never written are
 * still reported. */
static void test_strict_zero_fill_initialises(void **state)
{
    (void)state;
    static uint8_t zero[1u << 20];
    uint8_t back[64];
    struct dlasim_dev *dev = budget_dev(3u << 20, 1); /* 16 MiB of bitmaps = 2 MiB */
    for (uint64_t a = 0; a < (16u << 20); a += sizeof(zero)) {
        mem_wr(dev, 0x40000000u + a, zero, sizeof(zero));
    }
    mem_rd(dev, 0x40000000u + (5u << 20), back, sizeof(back));
    assert_memory_equal(back, zero, sizeof(back));
    expect_error(dev, dlasim_mem_read(dev, DLASIM_PORT_DBB, 0x40000000u + (16u << 20), back, 1),
                 DLASIM_ERR_MEM, "never-written byte at 0x41000000");
    /* the next 16 MiB of zeros would need 2 MiB more of bitmaps */
    int rc = 0;
    for (uint64_t a = 0; a < (16u << 20) && !rc; a += sizeof(zero)) {
        rc = dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x50000000u + a, zero, sizeof(zero));
    }
    expect_error(dev, rc, DLASIM_ERR_NOMEM, "max_host_mem=3145728");
    dlasim_destroy(dev);
}

/* A host write of non-zero data beyond the budget: DLASIM_ERR_NOMEM naming
 * the range; what fit is kept.  The budget counts whole pages of 64 KiB
 * (dlasim.h, max_host_mem). */
static void test_host_write_over_budget(void **state)
{
    (void)state;
    enum { PAGE = 65536 };
    uint8_t *data = malloc(3 * PAGE), back[4096];
    assert_non_null(data);
    memset(data, 0x11, 3 * PAGE);
    struct dlasim_dev *dev = budget_dev(2 * PAGE, 0);
    expect_error(dev, dlasim_mem_write(dev, DLASIM_PORT_DBB, 0x80000000u, data, 3 * PAGE),
                 DLASIM_ERR_NOMEM, "DBB write 0x80000000+0x30000: the host memory budget for "
                                   "device memory is spent at 0x80020000");
    assert_non_null(strstr(dlasim_last_error(dev), "max_host_mem=131072"));
    mem_rd(dev, 0x8001f000u, back, sizeof(back));
    assert_memory_equal(back, data, sizeof(back));
    free(data);
    dlasim_destroy(dev);
}

/* A trace's mem_load beyond the budget is reported at its file:line. */
static void test_trace_load_over_budget_names_line(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlasim-limits-XXXXXX", path[256], err[1024] = "";
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/big.dat", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (unsigned rec = 0; rec < 4; rec++) { /* 4 records of 4 KiB of 0x7f */
        fprintf(f, "{offset:0x%x, size:4096, payload:", rec * 4096u);
        for (unsigned i = 0; i < 4096; i++) {
            fprintf(f, "0x7f%s", i + 1 < 4096 ? " " : "");
        }
        fprintf(f, "},\n");
    }
    fclose(f);
    const char *text = "mem_init(pri_mem, 0x80000000, 0x4000, ALL_ZERO);\n"
                       "mem_load(pri_mem, 0x80000000, \"big.dat\");\n";
    struct dlasim_trace *t = NULL;
    assert_int_equal(dlasim_trace_parse_text(text, strlen(text), "load.cfg", dir, &t, err,
                                             sizeof(err)), 0);
    struct dlasim_dev *dev = budget_dev(8192, 0);
    assert_int_equal(dlasim_trace_play(dev, t, NULL, NULL, err, sizeof(err)), DLASIM_ERR_NOMEM);
    if (!strstr(err, "load.cfg:2: mem_load of big.dat failed") || !strstr(err, "max_host_mem")) {
        fail_msg("unexpected message: %s", err);
    }
    dlasim_destroy(dev);
    dlasim_trace_free(t);
    remove(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rubik_contract_strides_count),
        cmocka_unit_test(test_rubik_contract_within_budget_runs),
        cmocka_unit_test(test_rubik_extent_checked_before_writing),
        cmocka_unit_test(test_bdma_group_counted_before_running),
        cmocka_unit_test(test_trace_zero_fill_stays_sparse),
        cmocka_unit_test(test_zero_over_data_clears),
        cmocka_unit_test(test_strict_zero_fill_initialises),
        cmocka_unit_test(test_host_write_over_budget),
        cmocka_unit_test(test_trace_load_over_budget_names_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
