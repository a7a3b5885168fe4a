/*
 * The runtime's C API on a hand-built multi-layer graph: a 3x3 convolution
 * fused on the fly into SDP and PDP (max pooling 2x2 / 2), then CDP (LRN,
 * local size 5) reading PDP's output from memory, all scheduled by the
 * firmware-equivalent executor from their dependency graph
 * (dlasim_rt_execute), on random data.  The CDP output is compared with a
 * plain-C reference: the convolution, CACC and SDP of common/convlayer.c,
 * max pooling and the LRN written here.  Also: a dependency cycle and an
 * address index outside the list give errors naming the operations, never
 * a hang.
 *
 * Facts the reference encodes:
 *   - conv + CACC + SDP (converter scale 1, shift 0): common/convlayer.h;
 *   - PDP max over each 2x2 window of the int8 SDP output;
 *   - CDP with a LUT whose every entry is LUT_VALUE and whose slopes are 0
 *     gives LUT_VALUE for any square sum; output = shift-right with the
 *     NV_NVDLA_HLS_shiftrightsu rounding (guide bit; for negative values
 *     guide and sticky) of LUT_VALUE * x by DATOUT_SHIFTER, saturated to
 *     int8 (test_cdp.c checks CDP against the full LUT model).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/convlayer.h"
#include "common/rng.h"
#include "common/testdev.h"
#include "common/rtop.h"

#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "dlasim/runtime.h"
#include "dlasim/trace.h"

#include <stdio.h>
#include <unistd.h>

#define PDP_OUT_ADDR 0xa0000000ull
#define CDP_OUT_ADDR 0xb0000000ull
#define LUT_VALUE 3
#define CDP_SHIFT 2

static uint64_t rng;

struct graph {
    struct tdev t;
    struct conv L;
    struct dlasim_rt_op ops[4];
    struct dlasim_rt_lut lut;
    uint64_t addrs[4];
    struct dlasim_rt_network net;
    uint32_t pw, ph, pline, psurf, nsurf;
};

static struct dlasim_rt_cube cube(uint16_t type, int16_t address, uint32_t w, uint32_t h,
                                  uint32_t c, uint32_t line, uint32_t surf, uint32_t nsurf)
{
    struct dlasim_rt_cube q;
    memset(&q, 0, sizeof q);
    q.type = type;
    q.address = address;
    q.width = (uint16_t)w, q.height = (uint16_t)h, q.channel = (uint16_t)c;
    q.line_stride = line;
    q.surf_stride = surf;
    q.size = surf * nsurf;
    return q;
}

static void conv_layer(struct graph *g)
{
    struct conv *L = &g->L;
    memset(L, 0, sizeof *L);
    L->w = L->h = 8;
    L->c = 16;
    L->k = 16;
    L->kw = L->kh = 3;
    L->sx = L->sy = L->dx = L->dy = 1;
    L->pl = L->pr = L->pt = L->pb = 1;
    L->ow = L->oh = 8;
    L->fetch_h = L->rls = L->h;
    L->trunc = 11; /* sums of 144 int8 products: int8-sized outputs, few saturated */
    L->line_stride = L->w * g->t.m;
    L->surf_stride = L->line_stride * L->h;
    L->out_line = L->ow * g->t.m;
    L->out_surf = L->out_line * L->oh;
    assert_true(conv_plan_banks(&g->t, L));
    L->in = malloc((size_t)L->c * L->h * L->w);
    L->wt = malloc((size_t)L->k * L->c * L->kh * L->kw);
    assert_non_null(L->in);
    assert_non_null(L->wt);
    splitmix64_fill(&rng, L->in, (size_t)L->c * L->h * L->w);
    splitmix64_fill(&rng, L->wt, (size_t)L->k * L->c * L->kh * L->kw);
    conv_write_feature(&g->t, L);
    conv_write_weights(&g->t, L);
}

static void conv_op_of(struct graph *g, struct dlasim_rt_op *op)
{
    const struct conv *L = &g->L;
    struct dlasim_rt_conv_op *c = &op->op.conv;
    struct dlasim_rt_conv_surface *s = &op->surface.conv;
    op->op_type = DLASIM_RT_OP_CONV;
    op->dependency_count = 1; /* SDP enabled (its fused parent event) */
    op->consumers[DLASIM_RT_OP_SDP] = (struct dlasim_rt_consumer){ 1, DLASIM_RT_EVENT_OP_PROGRAMMED };
    c->entry_per_slice = (uint16_t)L->entries;
    c->data_format = 36; /* FEATURE */
    c->fetch_grain = 1;
    c->batch = 1;
    c->data_bank = (uint8_t)L->data_bank;
    c->weight_bank = (uint8_t)L->weight_bank;
    c->release = (uint16_t)L->rls;
    c->input_width_csc = (uint16_t)L->w, c->input_height_csc = (uint16_t)L->h;
    c->input_channel_csc = (uint16_t)L->c;
    c->kernel_width_csc = (uint16_t)L->kw, c->kernel_height_csc = (uint16_t)L->kh;
    c->kernel_channel_csc = (uint16_t)L->c;
    c->input_width_cmac = (uint16_t)L->ow, c->input_height_cmac = (uint16_t)L->oh;
    c->bytes_per_kernel = conv_bytes_per_kernel(L);
    c->conv_stride_x = c->conv_stride_y = 1;
    c->pad_x_left = c->pad_x_right = c->pad_y_top = c->pad_y_bottom = 1;
    c->dilation_x = c->dilation_y = 1;
    c->out_cvt.scale = 1;
    c->out_cvt.truncate = (uint8_t)L->trunc;
    uint32_t in_surfs = conv_div_up(L->c, g->t.m), out_surfs = conv_div_up(L->k, g->t.m);
    s->src_data = cube(DLASIM_RT_MEM_MC, 0, L->w, L->h, L->c, L->line_stride, L->surf_stride,
                       in_surfs);
    s->weight_data = cube(DLASIM_RT_MEM_MC, 1, 0, 0, 0, 0, 0, 0);
    s->weight_data.size = L->wt_bytes;
    s->wmb_data.address = s->wgs_data.address = -1;
    s->dst_data = cube(DLASIM_RT_MEM_HW, -1, L->ow, L->oh, L->k, L->out_line, L->out_surf,
                       out_surfs);
}

static void sdp_op_of(struct graph *g, struct dlasim_rt_op *op)
{
    const struct conv *L = &g->L;
    op->op_type = DLASIM_RT_OP_SDP;
    op->dependency_count = 2; /* CONV programmed, PDP enabled */
    op->consumers[DLASIM_RT_OP_PDP] = (struct dlasim_rt_consumer){ 2, DLASIM_RT_EVENT_OP_PROGRAMMED };
    op->fused_parent = (struct dlasim_rt_consumer){ 0, DLASIM_RT_EVENT_OP_ENABLED };
    op->op.sdp.lut_index = -1;
    op->op.sdp.out_cvt.scale = 1;
    op->op.sdp.batch_num = 1;
    op->surface.sdp.src_data = cube(DLASIM_RT_MEM_HW, -1, L->ow, L->oh, L->k, 0, 0, 0);
    op->surface.sdp.dst_data = cube(DLASIM_RT_MEM_HW, -1, L->ow, L->oh, L->k, 0, 0, 0);
    op->surface.sdp.x1_data.address = op->surface.sdp.x2_data.address = -1;
    op->surface.sdp.y_data.address = -1;
}

static void pdp_op_of(struct graph *g, struct dlasim_rt_op *op)
{
    const struct conv *L = &g->L;
    struct dlasim_rt_pdp_op *p = &op->op.pdp;
    op->op_type = DLASIM_RT_OP_PDP;
    op->dependency_count = 1; /* SDP programmed */
    op->consumers[DLASIM_RT_OP_CDP] = (struct dlasim_rt_consumer){ 3, DLASIM_RT_EVENT_OP_COMPLETED };
    op->fused_parent = (struct dlasim_rt_consumer){ 1, DLASIM_RT_EVENT_OP_ENABLED };
    p->partial_in_width_first = (uint16_t)L->ow;
    p->partial_width_first = (uint16_t)g->pw;
    p->split_num = 1;
    p->pool_mode = 1;                   /* max */
    p->pool_width = p->pool_height = 1; /* 2 */
    p->stride_x = p->stride_y = 2;
    op->surface.io.src_data = cube(DLASIM_RT_MEM_HW, -1, L->ow, L->oh, L->k, 0, 0, 0);
    op->surface.io.dst_data = cube(DLASIM_RT_MEM_MC, 2, g->pw, g->ph, L->k, g->pline, g->psurf,
                                   g->nsurf);
}

static void cdp_op_of(struct graph *g, struct dlasim_rt_op *op)
{
    op->op_type = DLASIM_RT_OP_CDP;
    op->dependency_count = 1; /* PDP completed */
    struct dlasim_rt_cdp_op *c = &op->op.cdp;
    c->lut_index = 0;
    c->in_cvt.scale = 1;
    c->out_cvt.scale = 1;
    c->out_cvt.truncate = CDP_SHIFT;
    c->local_size = 5;
    op->surface.io.src_data = cube(DLASIM_RT_MEM_MC, 2, g->pw, g->ph, g->L.k, g->pline, g->psurf,
                                   g->nsurf);
    op->surface.io.dst_data = cube(DLASIM_RT_MEM_MC, 3, g->pw, g->ph, g->L.k, g->pline, g->psurf,
                                   g->nsurf);
    struct dlasim_rt_lut *l = &g->lut;
    memset(l, 0, sizeof *l);
    for (int i = 0; i < 65; i++) {
        l->linear_exp_table[i] = LUT_VALUE;
    }
    for (int i = 0; i < 257; i++) {
        l->linear_only_table[i] = LUT_VALUE;
    }
    l->method = 1; /* linear */
    l->linear_exp_end = 1u << 12;
    l->linear_only_end = 1u << 14;
}

static void build(struct graph *g)
{
    memset(g, 0, sizeof *g);
    tdev_open(&g->t, "nv_small", &rng);
    conv_layer(g);
    g->pw = g->L.ow / 2, g->ph = g->L.oh / 2;
    g->pline = g->pw * g->t.m;
    g->psurf = g->pline * g->ph;
    g->nsurf = conv_div_up(g->L.k, g->t.m);
    for (int i = 0; i < 4; i++) {
        rtop_init(&g->ops[i], 0); /* the *_op_of below set the type */
    }
    conv_op_of(g, &g->ops[0]);
    sdp_op_of(g, &g->ops[1]);
    pdp_op_of(g, &g->ops[2]);
    cdp_op_of(g, &g->ops[3]);
    g->addrs[0] = CONV_IN_ADDR;
    g->addrs[1] = CONV_WT_ADDR;
    g->addrs[2] = PDP_OUT_ADDR;
    g->addrs[3] = CDP_OUT_ADDR;
    g->net.ops = g->ops;
    g->net.num_ops = 4;
    const int16_t heads[DLASIM_RT_OP_NUM] = { -1, 0, 1, 2, 3, -1 };
    memcpy(g->net.op_head, heads, sizeof heads);
    g->net.luts = &g->lut;
    g->net.num_luts = 1;
    g->net.addresses = g->addrs;
    g->net.num_addresses = 4;
}

static void unbuild(struct graph *g)
{
    conv_free(&g->L);
    dlasim_destroy(g->t.dev);
}

/* NV_NVDLA_HLS_shiftrightsu on a small value, saturated to int8. */
static int8_t ref_shift_round(int64_t v, unsigned s)
{
    int64_t q = v >> s; /* floor */
    int64_t rem = v - q * ((int64_t)1 << s);
    int guide = s > 0 && ((rem >> (s - 1)) & 1);
    int sticky = s > 1 && (rem & (((int64_t)1 << (s - 1)) - 1)) != 0;
    q += guide && (v >= 0 || sticky);
    return sat8(q);
}

static int8_t ref_sdp_out(struct graph *g, uint32_t k, uint32_t y, uint32_t x)
{
    unsigned sat = 0;
    int32_t cacc = conv_ref_cacc(conv_ref_sum(&g->t, &g->L, 0, k, y, x), g->L.trunc, &sat);
    return conv_ref_sdp(&g->L, cacc, 0);
}

static void test_conv_sdp_pdp_then_cdp(void **state)
{
    (void)state;
    for (int iter = 0; iter < 3; iter++) {
        struct graph g;
        build(&g);
        char err[512] = "";
        int rc = dlasim_rt_execute(g.t.dev, &g.net, NULL, err, sizeof err);
        if (rc) {
            fail_msg("dlasim_rt_execute: %d %s", rc, err);
        }
        size_t n = (size_t)g.psurf * g.nsurf;
        uint8_t *pdp = malloc(n), *cdp = malloc(n);
        assert_non_null(pdp);
        assert_non_null(cdp);
        mem_rd(g.t.dev, PDP_OUT_ADDR, pdp, n);
        mem_rd(g.t.dev, CDP_OUT_ADDR, cdp, n);
        unsigned checked = 0, seen[256] = { 0 }, distinct = 0;
        for (uint32_t k = 0; k < g.L.k; k++) {
            for (uint32_t y = 0; y < g.ph; y++) {
                for (uint32_t x = 0; x < g.pw; x++) {
                    int8_t m = -128;
                    for (uint32_t dy = 0; dy < 2; dy++) {
                        for (uint32_t dx = 0; dx < 2; dx++) {
                            int8_t v = ref_sdp_out(&g, k, 2 * y + dy, 2 * x + dx);
                            m = v > m ? v : m;
                        }
                    }
                    size_t a = (size_t)(k / g.t.m) * g.psurf + (size_t)y * g.pline +
                               (size_t)x * g.t.m + k % g.t.m;
                    if ((int8_t)pdp[a] != m) {
                        fail_msg("PDP output k=%u y=%u x=%u: %d, reference %d", k, y, x,
                                 (int8_t)pdp[a], m);
                    }
                    int8_t want = ref_shift_round((int64_t)LUT_VALUE * m, CDP_SHIFT);
                    if ((int8_t)cdp[a] != want) {
                        fail_msg("CDP output k=%u y=%u x=%u: %d, reference %d (input %d)", k, y,
                                 x, (int8_t)cdp[a], want, m);
                    }
                    checked++;
                    distinct += !seen[(uint8_t)m]++;
                }
            }
        }
        assert_int_equal(checked, g.L.k * g.pw * g.ph);
        assert_true(distinct > 40); /* values across the int8 range, not saturated */
        free(pdp);
        free(cdp);
        unbuild(&g);
    }
}

/* CDP waits for PDP's completion and PDP for CDP's: nothing can start. */
static void test_dependency_cycle_is_an_error(void **state)
{
    (void)state;
    struct graph g;
    build(&g);
    g.ops[3].consumers[DLASIM_RT_OP_PDP] = (struct dlasim_rt_consumer){ 2, DLASIM_RT_EVENT_OP_COMPLETED };
    g.ops[2].dependency_count = 2;
    char err[512] = "";
    int rc = dlasim_rt_execute(g.t.dev, &g.net, NULL, err, sizeof err);
    assert_int_equal(rc, DLASIM_ERR_TIMEOUT);
    assert_non_null(strstr(err, "still waiting"));
    assert_non_null(strstr(err, "3 (CDP"));
    unbuild(&g);
}

static void test_address_index_out_of_list(void **state)
{
    (void)state;
    struct graph g;
    build(&g);
    g.ops[3].surface.io.dst_data.address = 7;
    char err[512] = "";
    int rc = dlasim_rt_execute(g.t.dev, &g.net, NULL, err, sizeof err);
    assert_int_equal(rc, DLASIM_ERR_INVAL);
    assert_non_null(strstr(err, "operation 3 (CDP): cdp_surface.dst_data address index 7"));
    unbuild(&g);
}

/* Replay DIR/NAME_nnn/NAME_nnn.cfg on a fresh device; the number of checks
 * passed, -1 when the case is absent, fails the test on any failed check. */
static int replay_case(const char *dir, const char *name, unsigned k)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s_%03u/%s_%03u.cfg", dir, name, k, name, k);
    if (access(path, R_OK)) {
        return -1;
    }
    struct dlasim_trace *t;
    char err[512];
    if (dlasim_trace_parse_file(path, &t, err, sizeof err)) {
        fail_msg("%s: %s", path, err);
    }
    struct dlasim_dev *dev = tdev_new("nv_small", NULL, 0, 1);
    struct dlasim_trace_result res;
    memset(&res, 0, sizeof res);
    int rc = dlasim_trace_play(dev, t, NULL, &res, err, sizeof err);
    if (rc || res.checks_failed || !res.checks_passed) {
        fail_msg("%s: replay rc %d, %u checks passed, %u failed: %s", path, rc,
                 res.checks_passed, res.checks_failed, err);
    }
    dlasim_trace_free(t);
    dlasim_destroy(dev);
    return (int)res.checks_passed;
}

/* The same graph recorded (dlasim_rt_options.record_trace_dir): one case
 * per interrupt (the fused layer, then CDP), each replaying on a fresh
 * device with every check_crc passing; the run's own result is unchanged. */
static void test_record_and_replay(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlasim-rec-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct graph g;
    build(&g);
    struct dlasim_rt_options opt = { .record_trace_dir = dir, .record_trace_name = "graph" };
    char err[512] = "";
    int rc = dlasim_rt_execute(g.t.dev, &g.net, &opt, err, sizeof err);
    if (rc) {
        fail_msg("recorded run: %d %s", rc, err);
    }
    int c0 = replay_case(dir, "graph", 0), c1 = replay_case(dir, "graph", 1);
    assert_int_equal(replay_case(dir, "graph", 2), -1);
    assert_true(c0 >= 2 && c1 >= 2); /* PDP and CDP outputs checked in each */
    unbuild(&g);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    rng = 0x5eed0008u;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_sdp_pdp_then_cdp),
        cmocka_unit_test(test_dependency_cycle_is_an_error),
        cmocka_unit_test(test_address_index_out_of_list),
        cmocka_unit_test(test_record_and_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
