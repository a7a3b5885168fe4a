/*
 * The timing layer through the public API (include/dlasim/timing.h): it is
 * off unless asked for; CSB writes cost the profile's cycles; a layer starts
 * when its OP_EN was written and lasts what its cost model says (checked
 * here against the formula of docs/timing.md worked by hand: an 8x8x8
 * PDP copy is 512 lanes at one per cycle, plus the fixed OP_EN-to-request,
 * read latency and pipeline costs); the host sees the done interrupt and
 * S_STATUS only at the modelled cycles; the functional result is the same
 * as without timing; stall counters count the cycles memory held the engine.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "dlasim/timing.h"
#include "regs/gen/nvdla_regs.h"

#define SRC 0x80000000u
#define DST 0x80001000u
#define PDP_DONE0 NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK
#define PDP_DONE1 NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS1__MASK
/* Fixed costs of a PDP layer in the model (src/timing/model.c): OP_EN to the
 * first request, then the read latency of the profile, then the pipeline. */
#define PDP_FIXED (22.0 + 40.0)


static struct dlasim_dev *timed(const struct dlasim_timing_profile *p)
{
    struct dlasim_options o;
    memset(&o, 0, sizeof(o));
    o.timing = 1;
    o.timing_profile = p;
    return tdev_create(&o);
}

static void fill(struct dlasim_dev *dev)
{
    uint8_t in[512];
    for (unsigned i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(i * 29u + 3u);
    }
    mem_wr(dev, SRC, in, sizeof(in));
}

static void test_off_by_default(void **state)
{
    (void)state;
    struct dlasim_dev *dev = tdev_create(NULL);
    assert_false(dlasim_timing_enabled(dev));
    fill(dev);
    tdev_pdp_copy(dev, SRC, DST);
    assert_int_equal(dlasim_run(dev), 0);
    assert_int_equal(dlasim_timing_now(dev), 0);
    assert_int_equal(dlasim_timing_layer_count(dev), 0);
    struct dlasim_timing_profile p;
    assert_int_equal(dlasim_timing_get_profile(dev, &p), DLASIM_ERR_INVAL);
    dlasim_destroy(dev);
}

static void test_csb_cost_and_layer_cycles(void **state)
{
    (void)state;
    struct dlasim_timing_profile p;
    assert_int_equal(dlasim_timing_profile_get("rtl-tb", &p), 0);
    struct dlasim_dev *dev = timed(&p);
    assert_true(dlasim_timing_enabled(dev));
    fill(dev);
    tdev_pdp_copy(dev, SRC, DST);
    uint64_t writes = dlasim_timing_csb_writes(dev);
    assert_int_equal(writes, 31); /* program_pdp_copy's register writes */
    assert_int_equal(dlasim_timing_now(dev), (uint64_t)llround(31 * 2.25));
    assert_int_equal(dlasim_run(dev), 0);
    assert_int_equal(dlasim_timing_layer_count(dev), 1);
    struct dlasim_timing_layer l;
    assert_int_equal(dlasim_timing_layer_get(dev, 0, &l), 0);
    assert_string_equal(l.kind, "pdp");
    assert_int_equal(l.index, 1);
    /* enabled by the last write (PDP OP_EN), starts then: the engine was idle */
    assert_int_equal(l.enabled, (uint64_t)llround(31 * 2.25));
    assert_int_equal(l.start, l.enabled);
    assert_int_equal(l.end - l.start, (uint64_t)llround(PDP_FIXED + p.mem_latency + 8 * 8 * 8));
    assert_int_equal(l.rd_bytes, 512);
    assert_int_equal(l.wr_bytes, 512);
    assert_int_equal(l.unit_cycles[DLASIM_TU_PDP], 512);
    assert_int_equal(l.bound, DLASIM_BOUND_PDP);
    assert_int_equal(dlasim_timing_layer_get(dev, 1, &l), DLASIM_ERR_INVAL);
    dlasim_destroy(dev);
}

static void test_host_sees_status_at_modelled_cycles(void **state)
{
    (void)state;
    struct dlasim_dev *dev = timed(NULL);
    fill(dev);
    tdev_pdp_copy(dev, SRC, DST);
    assert_int_equal(dlasim_run(dev), 0);
    struct dlasim_timing_layer l;
    dlasim_timing_layer_get(dev, 0, &l);
    /* right after programming the layer is still running in modelled time */
    assert_true(dlasim_timing_now(dev) < l.end);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0) & PDP_DONE0, 0);
    assert_int_equal(rd(dev, NVDLA_PDP_S_STATUS_0) & 3u, 1u); /* RUNNING */
    assert_int_equal(dlasim_timing_irq_cycle(dev, PDP_DONE0), (int64_t)l.end);
    assert_int_equal(dlasim_timing_irq_cycle(dev, PDP_DONE1), -1);
    uint64_t seen = dlasim_timing_wait_irq(dev, PDP_DONE0);
    assert_true(seen >= l.end);
    assert_int_equal(rd(dev, NVDLA_GLB_S_INTR_STATUS_0) & PDP_DONE0, PDP_DONE0);
    assert_int_equal(rd(dev, NVDLA_PDP_S_STATUS_0) & 3u, 0u); /* IDLE */
    /* held: the functional state, at no cost */
    uint64_t now = dlasim_timing_now(dev);
    dlasim_timing_hold(dev, 1);
    rd(dev, NVDLA_GLB_S_INTR_STATUS_0);
    wr(dev, NVDLA_GLB_S_INTR_MASK_0, 0);
    assert_int_equal(dlasim_timing_now(dev), now);
    dlasim_timing_hold(dev, 0);
    dlasim_timing_clear(dev);
    assert_int_equal(dlasim_timing_now(dev), 0);
    assert_int_equal(dlasim_timing_layer_count(dev), 0);
    dlasim_destroy(dev);
}

static void test_same_result_as_functional(void **state)
{
    (void)state;
    uint8_t a[512], b[512];
    struct dlasim_dev *plain = tdev_create(NULL), *dev = timed(NULL);
    fill(plain);
    fill(dev);
    tdev_pdp_copy(plain, SRC, DST);
    tdev_pdp_copy(dev, SRC, DST);
    assert_int_equal(dlasim_run(plain), 0);
    assert_int_equal(dlasim_run(dev), 0);
    mem_rd(plain, DST, a, sizeof(a));
    mem_rd(dev, DST, b, sizeof(b));
    assert_memory_equal(a, b, sizeof(a));
    dlasim_timing_hold(dev, 1);
    assert_int_equal(rd(plain, NVDLA_GLB_S_INTR_STATUS_0), rd(dev, NVDLA_GLB_S_INTR_STATUS_0));
    dlasim_destroy(plain);
    dlasim_destroy(dev);
}

/* Half a byte per cycle shared by reads and writes: moving 512 bytes in and
 * 512 out takes 2048 cycles, four times what the PDP needs, so memory stalls
 * the engine for 1536 cycles (charged to the read side, the larger or equal). */
static void test_memory_bound_stalls(void **state)
{
    (void)state;
    struct dlasim_timing_profile p;
    dlasim_timing_profile_dram(&p, 0.5, 100.0, 1000.0);
    assert_true(fabs(p.mem_bytes_per_cycle - 0.5) < 1e-9);
    assert_true(fabs(p.mem_latency - 100.0) < 1e-9);
    struct dlasim_dev *dev = timed(&p);
    fill(dev);
    wr(dev, NVDLA_PDP_RDMA_D_PERF_ENABLE_0, NVDLA_PDP_RDMA_D_PERF_ENABLE_0_DMA_EN__MASK);
    tdev_pdp_copy(dev, SRC, DST);
    assert_int_equal(dlasim_run(dev), 0);
    struct dlasim_timing_layer l;
    dlasim_timing_layer_get(dev, 0, &l);
    assert_int_equal(l.bound, DLASIM_BOUND_MEMORY);
    assert_int_equal(l.end - l.start, (uint64_t)llround(PDP_FIXED + 100.0 + 2048.0));
    assert_int_equal(l.stall_cycles, 1536);
    dlasim_timing_hold(dev, 1);
    /* CSB reads see the producer group: group 0, the one the layer ran in */
    assert_int_equal(rd(dev, NVDLA_PDP_RDMA_D_PERF_READ_STALL_0), 1536);
    assert_int_equal(rd(dev, NVDLA_PDP_D_PERF_WRITE_STALL_0), 0); /* its DMA perf is off */
    dlasim_destroy(dev);
}

/* Two layers in the two register groups: the second is programmed while the
 * first runs and starts when the engine is free again. */
static void test_ping_pong_layers_queue(void **state)
{
    (void)state;
    struct dlasim_dev *dev = timed(NULL);
    fill(dev);
    tdev_pdp_copy(dev, SRC, DST);
    wr(dev, NVDLA_PDP_S_POINTER_0, 1);
    wr(dev, NVDLA_PDP_RDMA_S_POINTER_0, 1);
    tdev_pdp_copy(dev, SRC, DST + 0x1000u);
    assert_int_equal(dlasim_run(dev), 0);
    assert_int_equal(dlasim_timing_layer_count(dev), 2);
    struct dlasim_timing_layer a, b;
    dlasim_timing_layer_get(dev, 0, &a);
    dlasim_timing_layer_get(dev, 1, &b);
    assert_true(b.enabled < a.end); /* programmed while the first ran */
    assert_int_equal(b.start, a.end);
    assert_int_equal(b.end - b.start, a.end - a.start);
    assert_int_equal(dlasim_timing_irq_cycle(dev, PDP_DONE0 | PDP_DONE1), (int64_t)b.end);
    dlasim_destroy(dev);
}

/* BDMA (nv_large) has no OP_EN: the launch write enables its group; a 4 KiB
 * copy moves 4 KiB each way at one DBB beat per request every other cycle. */
static void test_bdma_launch_and_copy(void **state)
{
    (void)state;
    struct dlasim_options o;
    memset(&o, 0, sizeof(o));
    o.config = "nv_large";
    o.timing = 1;
    struct dlasim_dev *dev = tdev_create(&o);
    uint8_t buf[4096];
    for (unsigned i = 0; i < sizeof(buf); i++) {
        buf[i] = (uint8_t)(i * 7u);
    }
    mem_wr(dev, SRC, buf, sizeof(buf));
    uint32_t atom = param(dev, "NVDLA_MEMORY_ATOMIC_SIZE");
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_LOW_0, SRC);
    wr(dev, NVDLA_BDMA_CFG_SRC_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_LOW_0, DST + 0x10000u);
    wr(dev, NVDLA_BDMA_CFG_DST_ADDR_HIGH_0, 0);
    wr(dev, NVDLA_BDMA_CFG_LINE_0, (uint32_t)sizeof(buf) / atom - 1);
    wr(dev, NVDLA_BDMA_CFG_CMD_0,
       NVDLA_BDMA_CFG_CMD_0_SRC_RAM_TYPE(1) | NVDLA_BDMA_CFG_CMD_0_DST_RAM_TYPE(1));
    wr(dev, NVDLA_BDMA_CFG_LINE_REPEAT_0, 0);
    wr(dev, NVDLA_BDMA_CFG_SURF_REPEAT_0, 0);
    wr(dev, NVDLA_BDMA_CFG_OP_0, NVDLA_BDMA_CFG_OP_0_EN(1));
    wr(dev, NVDLA_BDMA_CFG_LAUNCH0_0, 1);
    uint64_t launched = dlasim_timing_now(dev);
    assert_int_equal(dlasim_run(dev), 0);
    uint8_t out[4096];
    mem_rd(dev, DST + 0x10000u, out, sizeof(out));
    assert_memory_equal(buf, out, sizeof(buf));
    struct dlasim_timing_layer l;
    assert_int_equal(dlasim_timing_layer_get(dev, 0, &l), 0);
    assert_string_equal(l.kind, "bdma");
    assert_int_equal(l.enabled, launched);
    assert_int_equal(l.start, launched);
    assert_int_equal(l.rd_bytes, sizeof(buf));
    assert_int_equal(l.wr_bytes, sizeof(buf));
    double bw = param(dev, "NVDLA_PRIMARY_MEMIF_WIDTH") / 2.0; /* bytes per cycle */
    /* OP_EN-to-request 22, read latency 32, the copy, 20 of pipeline */
    assert_int_equal(l.end - l.start, (uint64_t)llround(22.0 + 32.0 + sizeof(buf) / bw + 20.0));
    assert_true(l.unit_cycles[DLASIM_TU_BDMA] > 0);
    dlasim_destroy(dev);
}

static void test_bad_profile_refused(void **state)
{
    (void)state;
    struct dlasim_timing_profile p;
    assert_int_equal(dlasim_timing_profile_get("no-such", &p), DLASIM_ERR_INVAL);
    dlasim_timing_profile_get("rtl-tb", &p);
    p.mem_latency = -1;
    struct dlasim_options o;
    memset(&o, 0, sizeof(o));
    o.timing = 1;
    o.timing_profile = &p;
    struct dlasim_dev *dev = NULL;
    char err[256] = "";
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), DLASIM_ERR_INVAL);
    assert_null(dev);
    assert_non_null(strstr(err, "timing profile"));
    p.mem_latency = NAN;
    assert_int_equal(dlasim_create(&o, &dev, err, sizeof(err)), DLASIM_ERR_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_by_default),
        cmocka_unit_test(test_csb_cost_and_layer_cycles),
        cmocka_unit_test(test_host_sees_status_at_modelled_cycles),
        cmocka_unit_test(test_same_result_as_functional),
        cmocka_unit_test(test_memory_bound_stalls),
        cmocka_unit_test(test_ping_pong_layers_queue),
        cmocka_unit_test(test_bdma_launch_and_copy),
        cmocka_unit_test(test_bad_profile_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
