/*
 * The RK3588 personality (config "rk3588") through the public API:
 *   - register level, from the spec tables (regdb/rk3588.xml, checked
 *     against spec 002/003 by tests/unit/rk_spec_tables.sh): every PPU and
 *     DPU_RDMA field's reset value and access type, ping-pong shadowing of
 *     the dual registers, S_POINTER W1C clears, S_STATUS states;
 *   - the PC: a multi-task regcmd chain kicked as linux rocket does (one
 *     task per kick) and as rknpu does (many tasks per kick, task_pp_en),
 *     interrupt mask/clear/status/raw, DMA error interrupts, three cores;
 *   - compute: int8 -> int32 convolution (direct and depthwise, DPU
 *     bypassed) equal to integer arithmetic over many random shapes, and
 *     conv + bias + requantize + ReLU + pooling against an independent
 *     integer reference written here from the documented semantics;
 *   - the layer observer: one report per task, its kind, and a
 *     convolution's geometry and MACs as the test's shape gives them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "common/rng.h"
#include "common/testdev.h"
#include "dlasim/dlasim.h"
#include "dlasim/layer.h"
#include "dlasim/rk3588.h"
#include "regs/regdb.h"

#define IN_ADDR 0x100000u
#define WT_ADDR 0x400000u
#define BIAS_ADDR 0x700000u
#define OUT_ADDR 0x800000u
#define POOL_ADDR 0xc00000u
#define CMD_ADDR 0x40000u

static struct dlasim_dev *rk_dev(void)
{
    return tdev_new("rk3588", NULL, 0, 1);
}

/* ---- registers ------------------------------------------------------------------ */

static int in_unit(const struct nvdla_reg_desc *r, unsigned unit)
{
    return r->unit == unit;
}

static void check_fields(unsigned unit)
{
    struct dlasim_dev *dev = rk_dev();
    const struct nvdla_unit_desc *u = &rk3588_units[unit];
    for (unsigned i = 0; i < u->n_regs; i++) {
        const struct nvdla_reg_desc *r = &rk3588_regs[u->first_reg + i];
        assert_true(in_unit(r, unit));
        if (r->kind == NVDLA_KIND_OP_ENABLE) {
            continue; /* writing it starts work: tested by the PC tests */
        }
        /* reset */
        uint32_t v = rd(dev, r->addr);
        if (v != (r->reset & r->read_mask)) {
            fail_msg("%s.%s reads 0x%x after reset, spec 0x%x", u->name, r->name, v, r->reset);
        }
        if (r->kind == NVDLA_KIND_POINTER) {
            continue; /* test_s_pointer */
        }
        /* access per field: all ones then all zeros */
        wr(dev, r->addr, 0xffffffffu);
        uint32_t ones = rd(dev, r->addr);
        wr(dev, r->addr, 0);
        uint32_t zeros = rd(dev, r->addr);
        for (unsigned f = 0; f < r->n_fields; f++) {
            const struct nvdla_field_desc *fd = &rk3588_fields[r->first_field + f];
            uint32_t m = (uint32_t)((((uint64_t)1 << (fd->high - fd->low + 1)) - 1) << fd->low);
            uint32_t rst = fd->reset << fd->low;
            if (fd->access == NVDLA_ACC_RW) {
                if ((ones & m) != m || (zeros & m) != 0) {
                    fail_msg("%s.%s.%s (RW) reads 0x%x after 1s, 0x%x after 0s", u->name, r->name,
                             fd->name, ones & m, zeros & m);
                }
            } else if (fd->access == NVDLA_ACC_RO) {
                if ((ones & m) != rst || (zeros & m) != rst) {
                    fail_msg("%s.%s.%s (RO) changed by a write", u->name, r->name, fd->name);
                }
            }
        }
    }
    dlasim_destroy(dev);
}

static void test_ppu_fields(void **state)
{
    (void)state;
    check_fields(RK3588_UNIT_PPU);
}

static void test_dpu_rdma_fields(void **state)
{
    (void)state;
    check_fields(RK3588_UNIT_DPU_RDMA);
}

/* Dual registers: with ping-pong off, S_POINTER.pointer selects the group the
 * CPU writes and reads; each group keeps its own value. */
static void check_shadowing(unsigned unit)
{
    struct dlasim_dev *dev = rk_dev();
    const struct nvdla_unit_desc *u = &rk3588_units[unit];
    uint32_t ptr = u->base + 4;
    for (unsigned i = 0; i < u->n_regs; i++) {
        const struct nvdla_reg_desc *r = &rk3588_regs[u->first_reg + i];
        if (r->group != NVDLA_REG_DUAL || r->kind != NVDLA_KIND_PLAIN) {
            continue;
        }
        uint32_t a = 0x5a5a5a5au & r->write_mask, b = 0xa5a5a5a5u & r->write_mask;
        wr(dev, ptr, 0); /* pointer 0 */
        wr(dev, r->addr, a);
        wr(dev, ptr, 1); /* pointer 1 */
        assert_int_equal(rd(dev, r->addr), r->reset & r->read_mask);
        wr(dev, r->addr, b);
        assert_int_equal(rd(dev, r->addr), b);
        wr(dev, ptr, 0);
        if (rd(dev, r->addr) != a) {
            fail_msg("%s.%s: group 0 lost its value when group 1 was written", u->name, r->name);
        }
    }
    /* single registers are shared: S_POINTER itself reads the same from both */
    dlasim_destroy(dev);
}

static void test_ppu_shadowing(void **state)
{
    (void)state;
    check_shadowing(RK3588_UNIT_PPU);
}

static void test_dpu_rdma_shadowing(void **state)
{
    (void)state;
    check_shadowing(RK3588_UNIT_DPU_RDMA);
}

/* S_POINTER: RW bits 0-3, executer RO, W1C clears of bits 4 and 5; op_en
 * with pointer_pp_en + mode 1 moves the pointer; S_STATUS shows 1 for the
 * executing group and 2 for the waiting one. */
static void test_s_pointer(void **state)
{
    (void)state;
    struct dlasim_dev *dev = rk_dev();
    uint32_t ptr = RK3588_PPU_S_POINTER, st = RK3588_PPU_S_STATUS, op = RK3588_PPU_OPERATION_ENABLE;
    wr(dev, ptr, 0x3000f); /* executer (bit 16) is read-only */
    assert_int_equal(rd(dev, ptr), 0x0eu); /* pp_en set: pointer kept at 0 */
    wr(dev, ptr, 0x1);
    assert_int_equal(rd(dev, ptr), 0x1u);
    wr(dev, ptr, 0x10); /* pointer_pp_clear */
    assert_int_equal(rd(dev, ptr), 0x0u);
    wr(dev, ptr, 0xe);
    wr(dev, op, 1); /* group 0 enabled, pointer -> 1 */
    assert_int_equal(rd(dev, ptr) & 0x10001u, 0x1u);
    assert_int_equal(rd(dev, st), 0x1u); /* group 0 executing */
    wr(dev, op, 1); /* group 1 enabled and waiting, pointer -> 0 */
    assert_int_equal(rd(dev, st), 0x20001u);
    wr(dev, ptr, 0x2e); /* executer_pp_clear (executer already 0) */
    assert_int_equal(rd(dev, ptr) & 0x10000u, 0u);
    dlasim_destroy(dev);
}

/* Interrupt block: mask reset, RAW/STATUS/CLEAR. */
static void test_interrupts_and_cores(void **state)
{
    (void)state;
    struct dlasim_dev *dev = rk_dev();
    for (unsigned c = 0; c < DLASIM_RK_CORES; c++) {
        assert_int_equal(rd(dev, c * DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_MASK), 0x3fffu);
        assert_int_equal(dlasim_rk_irq_level(dev, c), 0);
    }
    /* a regcmd fetch from beyond 4 GiB is impossible; fetch from an address
     * whose list runs past the end of the 32-bit space instead */
    wr(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_BASE_ADDRESS, 0xfffffff0u);
    wr(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_REGISTER_AMOUNTS, 3);
    wr(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_TASK_CON, 1);
    wr(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_OPERATION_ENABLE, 1);
    assert_int_equal(rd(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_RAW_STATUS),
                     DLASIM_RK_IRQ_DMA_READ_ERROR);
    assert_int_equal(dlasim_rk_irq_level(dev, 1), 1);
    assert_int_equal(dlasim_rk_irq_level(dev, 0), 0);
    assert_int_equal(dlasim_rk_irq_level(dev, 2), 0);
    wr(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_MASK, 0x300);
    assert_int_equal(rd(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_STATUS), 0u);
    assert_int_equal(dlasim_rk_irq_level(dev, 1), 0);
    wr(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_CLEAR, 0x1ffff);
    assert_int_equal(rd(dev, DLASIM_RK_CORE_STRIDE + RK3588_PC_INTERRUPT_RAW_STATUS), 0u);
    dlasim_destroy(dev);
}

/* ---- compute ------------------------------------------------------------------------ */

struct shape {
    uint32_t w, h, c, k, kw, kh, sx, sy, pl, pt, ow, oh;
    int dw;
    int8_t pad;
};

static void random_shape(uint64_t *s, struct shape *p, int dw)
{
    memset(p, 0, sizeof(*p));
    p->dw = dw;
    p->w = splitmix64_range(s, 1, 14);
    p->h = splitmix64_range(s, 1, 12);
    p->c = splitmix64_range(s, 1, dw ? 70 : 72);
    p->k = dw ? p->c : splitmix64_range(s, 1, 70);
    p->kw = splitmix64_range(s, 1, 4);
    p->kh = splitmix64_range(s, 1, 4);
    p->sx = splitmix64_range(s, 1, 3);
    p->sy = splitmix64_range(s, 1, 3);
    p->pl = splitmix64_below(s, p->kw);
    p->pt = splitmix64_below(s, p->kh);
    uint32_t pr = splitmix64_below(s, p->kw), pb = splitmix64_below(s, p->kh);
    if (p->w + p->pl + pr < p->kw) {
        pr = p->kw - p->w - p->pl;
    }
    if (p->h + p->pt + pb < p->kh) {
        pb = p->kh - p->h - p->pt;
    }
    p->ow = (p->w + p->pl + pr - p->kw) / p->sx + 1;
    p->oh = (p->h + p->pt + pb - p->kh) / p->sy + 1;
    p->pad = (int8_t)splitmix64_next(s);
}

/* The reference: plain loops over planar tensors. */
static int8_t in_at(const struct shape *p, const int8_t *in, uint32_t c, int64_t y, int64_t x)
{
    if (y < 0 || x < 0 || y >= p->h || x >= p->w) {
        return p->pad;
    }
    return in[((size_t)c * p->h + (size_t)y) * p->w + (size_t)x];
}

static int64_t ref_acc(const struct shape *p, const int8_t *in, const int8_t *wt, uint32_t k,
                       uint32_t oy, uint32_t ox, int64_t *window_sum)
{
    int64_t acc = 0, sum = 0;
    uint32_t c0 = p->dw ? k : 0, c1 = p->dw ? k + 1 : p->c;
    for (uint32_t c = c0; c < c1; c++) {
        for (uint32_t ky = 0; ky < p->kh; ky++) {
            for (uint32_t kx = 0; kx < p->kw; kx++) {
                int64_t v = in_at(p, in, c, (int64_t)oy * p->sy + ky - p->pt,
                                  (int64_t)ox * p->sx + kx - p->pl);
                size_t wi = p->dw ? ((size_t)c * p->kh + ky) * p->kw + kx
                                  : (((size_t)k * p->c + c) * p->kh + ky) * p->kw + kx;
                acc += v * wt[wi];
                sum += v;
            }
        }
    }
    if (window_sum) {
        *window_sum = sum;
    }
    return acc;
}

/* Load planar input and weights into device memory in the RK layouts. */
static void load_tensors(struct dlasim_dev *dev, const struct shape *p, const int8_t *in,
                         const int8_t *wt)
{
    size_t fb = dlasim_rk_feature_bytes(p->w, p->h, p->c, 1);
    uint8_t *f = calloc(fb, 1);
    for (uint32_t c = 0; c < p->c; c++) {
        for (uint32_t y = 0; y < p->h; y++) {
            for (uint32_t x = 0; x < p->w; x++) {
                f[dlasim_rk_feature_offset(p->w, p->h, c, y, x, 1)] =
                    (uint8_t)in[((size_t)c * p->h + y) * p->w + x];
            }
        }
    }
    mem_wr(dev, IN_ADDR, f, fb);
    free(f);
    size_t wb = dlasim_rk_weight_bytes(p->k, p->c, p->kh, p->kw, p->dw);
    uint8_t *w = calloc(wb, 1);
    uint32_t nk = p->dw ? 1 : p->k;
    for (uint32_t k = 0; k < nk; k++) {
        for (uint32_t c = 0; c < p->c; c++) {
            for (uint32_t ky = 0; ky < p->kh; ky++) {
                for (uint32_t kx = 0; kx < p->kw; kx++) {
                    size_t src = (((size_t)k * p->c + c) * p->kh + ky) * p->kw + kx;
                    w[dlasim_rk_weight_offset(k, c, ky, kx, p->k, p->c, p->kh, p->kw, p->dw)] =
                        (uint8_t)wt[src];
                }
            }
        }
    }
    mem_wr(dev, WT_ADDR, w, wb);
    free(w);
}

static void conv_desc(const struct shape *p, struct dlasim_rk_conv *cv)
{
    memset(cv, 0, sizeof(*cv));
    cv->in_w = p->w;
    cv->in_h = p->h;
    cv->in_c = p->c;
    cv->kernels = p->k;
    cv->k_w = p->kw;
    cv->k_h = p->kh;
    cv->stride_x = p->sx;
    cv->stride_y = p->sy;
    cv->pad_left = p->pl;
    cv->pad_top = p->pt;
    cv->out_w = p->ow;
    cv->out_h = p->oh;
    cv->depthwise = p->dw;
    cv->pad_value = p->pad;
    cv->input = IN_ADDR;
    cv->weights = WT_ADDR;
    cv->output = OUT_ADDR;
    cv->to_memory = 1;
}

/* A random shape (dw: depthwise) and its random planar input and weights,
 * drawn from *s in that order; the caller frees in and wt. */
static void random_tensors(uint64_t *s, struct shape *p, int dw, int8_t **in, int8_t **wt)
{
    random_shape(s, p, dw);
    size_t nin = (size_t)p->c * p->h * p->w, nwt = (size_t)(dw ? 1 : p->k) * p->c * p->kh * p->kw;
    *in = malloc(nin);
    *wt = malloc(nwt);
    splitmix64_fill(s, *in, nin);
    splitmix64_fill(s, *wt, nwt);
}

/* A device holding the input and weights, and the descriptor of p's
 * convolution over them. */
static struct dlasim_dev *conv_dev(const struct shape *p, const int8_t *in, const int8_t *wt,
                                   struct dlasim_rk_conv *cv)
{
    struct dlasim_dev *dev = rk_dev();
    load_tensors(dev, p, in, wt);
    conv_desc(p, cv);
    return dev;
}

/* Lay out the list, kick it with one kick (task_number = all), run it. */
static void run_list(struct dlasim_dev *dev, const struct dlasim_rk_regcmd *l, uint32_t int_mask)
{
    size_t n = dlasim_rk_layout_size(l);
    uint8_t *buf = malloc(n);
    assert_int_equal(dlasim_rk_layout(l, CMD_ADDR, buf, n), 0);
    mem_wr(dev, CMD_ADDR, buf, n);
    free(buf);
    assert_int_equal(dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(l, 0),
                                    (unsigned)l->ntasks, int_mask), 0);
    int rc = dlasim_run(dev);
    if (rc) {
        fail_msg("run: %s", dlasim_last_error(dev));
    }
}

static void conv_int32_case(uint64_t seed, int dw)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, dw, &in, &wt);
    struct dlasim_rk_conv cv;
    struct dlasim_dev *dev = conv_dev(&p, in, wt, &cv);
    cv.out_int32 = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    run_list(dev, &l, DLASIM_RK_IRQ_DPU);
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_RAW_STATUS) & DLASIM_RK_IRQ_DPU, 0x100u);
    size_t ob = dlasim_rk_feature_bytes(p.ow, p.oh, p.k, 4);
    uint8_t *out = malloc(ob);
    mem_rd(dev, OUT_ADDR, out, ob);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int32_t got;
                memcpy(&got, out + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 4), 4);
                int64_t want = ref_acc(&p, in, wt, k, y, x, NULL);
                if (got != want) {
                    fail_msg("seed %llu %s %ux%ux%u k%u %ux%u s%ux%u p%u,%u: out[%u][%u][%u] = %d, "
                             "integer math %lld", (unsigned long long)seed, dw ? "dw" : "direct",
                             p.w, p.h, p.c, p.k, p.kw, p.kh, p.sx, p.sy, p.pl, p.pt, k, y, x, got,
                             (long long)want);
                }
            }
        }
    }
    free(out);
    free(in);
    free(wt);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_conv_int32_exact(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        conv_int32_case(seed, 0);
    }
}

static void test_depthwise_int32_exact(void **state)
{
    (void)state;
    for (uint64_t seed = 100; seed <= 140; seed++) {
        conv_int32_case(seed, 1);
    }
}

/* x / 2^s, round half to even, written independently of the model. */
static int64_t ref_rshift_even(int64_t x, unsigned s)
{
    if (s == 0) {
        return x;
    }
    long double q = (long double)x / (long double)((int64_t)1 << s);
    int64_t f = (int64_t)q;
    if ((long double)f > q) {
        f--; /* floor */
    }
    long double frac = q - (long double)f;
    if (frac > 0.5L || (frac == 0.5L && (f % 2 != 0))) {
        f++;
    }
    return f;
}

static int8_t sat8(int64_t v)
{
    return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

/* ---- what Mesa's rocket driver programs (issue 21) -------------------------------- */

/* Replace the value of every entry of the list that writes in-core offset `reg`. */
static void patch_reg(struct dlasim_rk_regcmd *l, uint32_t reg, uint32_t value)
{
    int found = 0;
    for (size_t i = 0; i < l->n; i++) {
        if ((l->e[i] & 0xffffu) == reg && (l->e[i] >> 48) != 0) {
            l->e[i] = (l->e[i] & 0xffff00000000ffffull) | ((uint64_t)value << 16);
            found = 1;
        }
    }
    assert_true(found);
}

static uint32_t align_up(uint32_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

/* The output channels padded as Mesa pads them (direct: ALIGN(K, 32) with
 * WEIGHT_KERNELS = K; depthwise: beyond DATAIN_CHANNEL up to its 64-group):
 * real channels equal integer math, the padded ones (zero weights, no input) 0. */
static void padded_case(uint64_t seed, int dw)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, dw, &in, &wt);
    uint32_t oc = dw ? align_up(align_up(p.c, 16), 64) : align_up(p.k, 32);
    struct dlasim_rk_conv cv;
    struct dlasim_dev *dev = conv_dev(&p, in, wt, &cv);
    cv.out_int32 = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    patch_reg(&l, RK3588_CORE_DATAOUT_SIZE_1, oc - 1);
    patch_reg(&l, RK3588_DPU_DATA_CUBE_CHANNEL, RK3588_DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL(p.k - 1) |
                                                  RK3588_DPU_DATA_CUBE_CHANNEL_CHANNEL(oc - 1));
    patch_reg(&l, RK3588_DPU_WDMA_SIZE_0, oc - 1);
    patch_reg(&l, RK3588_DPU_RDMA_DATA_CUBE_CHANNEL, oc - 1);
    run_list(dev, &l, DLASIM_RK_IRQ_DPU);
    size_t ob = dlasim_rk_feature_bytes(p.ow, p.oh, oc, 4);
    uint8_t *out = malloc(ob);
    mem_rd(dev, OUT_ADDR, out, ob);
    for (uint32_t k = 0; k < oc; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int32_t got;
                memcpy(&got, out + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 4), 4);
                int64_t want = k < (dw ? p.c : p.k) ? ref_acc(&p, in, wt, k, y, x, NULL) : 0;
                if (got != want) {
                    fail_msg("seed %llu %s %ux%ux%u k%u -> %u channels: out[%u][%u][%u] = %d, "
                             "expected %lld", (unsigned long long)seed, dw ? "dw" : "direct", p.w,
                             p.h, p.c, p.k, oc, k, y, x, got, (long long)want);
                }
            }
        }
    }
    free(out);
    free(in);
    free(wt);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_conv_padded_output_channels(void **state)
{
    (void)state;
    for (uint64_t seed = 200; seed <= 230; seed++) {
        padded_case(seed, 0);
    }
    for (uint64_t seed = 300; seed <= 315; seed++) {
        padded_case(seed, 1);
    }
}

/* The input converter as the TRM describes its fields, written independently:
 * (x + offset) * scale / 2^truncate, rounded half to even, saturated. */
static int8_t ref_cvt(uint8_t x, int16_t offset, uint16_t scale, unsigned truncate)
{
    return sat8(ref_rshift_even(((int64_t)x + offset) * scale, truncate));
}

/* A one-channel input as Mesa programs it: ARGB_IN = 8, one byte per pixel,
 * DATAIN_CHANNEL 16, the input converter on, the 15 padding channels' weights
 * (w_zp - 0x80) cancelled by the CPEND operand 0x80 - w_zp. */
static void one_channel_case(uint64_t seed, uint16_t scale, unsigned truncate)
{
    uint64_t s = seed;
    struct shape p;
    random_shape(&s, &p, 0);
    p.c = 16;
    const int16_t offset = -128;
    uint8_t wzp = (uint8_t)splitmix64_next(&s);
    size_t npix = (size_t)p.w * p.h, nwt = (size_t)p.k * 16 * p.kh * p.kw;
    uint8_t *pix = malloc(npix);
    int8_t *wt = malloc(nwt);
    splitmix64_fill(&s, pix, npix);
    splitmix64_fill(&s, wt, nwt);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t c = 1; c < 16; c++) {
            for (uint32_t t = 0; t < p.kh * p.kw; t++) {
                wt[((size_t)k * 16 + c) * p.kh * p.kw + t] = (int8_t)(uint8_t)(wzp - 0x80);
            }
        }
    }
    struct dlasim_dev *dev = rk_dev();
    int8_t *zero = calloc((size_t)16 * npix, 1);
    load_tensors(dev, &p, zero, wt); /* weights in the RK layout */
    mem_wr(dev, IN_ADDR, pix, npix); /* the pixels: one byte each */
    struct dlasim_rk_conv cv;
    conv_desc(&p, &cv);
    cv.out_int32 = 1;
    cv.ow_op = (int16_t)(0x80 - wzp);
    struct dlasim_rk_regcmd l = {0};
    /* CVT_CON1 first: dlasim_rk_emit_conv does not write it */
    assert_int_equal(dlasim_rk_emit(&l, RK3588_CNA_CVT_CON1, RK3588_CNA_CVT_CON1_CVT_SCALE0(scale) |
                                        RK3588_CNA_CVT_CON1_CVT_OFFSET0((uint16_t)offset)), 0);
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    patch_reg(&l, RK3588_CNA_CONV_CON1, RK3588_CNA_CONV_CON1_NONALIGN_DMA(1) |
                                          RK3588_CNA_CONV_CON1_GROUP_LINE_OFF(1) |
                                          RK3588_CNA_CONV_CON1_ARGB_IN(8));
    patch_reg(&l, RK3588_CNA_DATA_SIZE1, RK3588_CNA_DATA_SIZE1_DATAIN_CHANNEL(16));
    patch_reg(&l, RK3588_CNA_CVT_CON0, RK3588_CNA_CVT_CON0_CVT_TRUNCATE_0(truncate));
    run_list(dev, &l, DLASIM_RK_IRQ_DPU);
    size_t ob = dlasim_rk_feature_bytes(p.ow, p.oh, p.k, 4);
    uint8_t *out = malloc(ob);
    mem_rd(dev, OUT_ADDR, out, ob);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int64_t want = 0;
                for (uint32_t ky = 0; ky < p.kh; ky++) {
                    for (uint32_t kx = 0; kx < p.kw; kx++) {
                        int64_t iy = (int64_t)y * p.sy + ky - p.pt, ix = (int64_t)x * p.sx + kx - p.pl;
                        int64_t v = iy < 0 || ix < 0 || iy >= p.h || ix >= p.w
                                        ? p.pad
                                        : ref_cvt(pix[iy * p.w + ix], offset, scale, truncate);
                        want += v * (wt[(size_t)k * 16 * p.kh * p.kw + ky * p.kw + kx] + cv.ow_op);
                    }
                }
                int32_t got;
                memcpy(&got, out + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 4), 4);
                if (got != want) {
                    fail_msg("seed %llu one-channel %ux%u k%u %ux%u scale %u >> %u: out[%u][%u][%u] "
                             "= %d, expected %lld", (unsigned long long)seed, p.w, p.h, p.k, p.kw,
                             p.kh, scale, truncate, k, y, x, got, (long long)want);
                }
            }
        }
    }
    free(out);
    free(zero);
    free(pix);
    free(wt);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_one_channel_input(void **state)
{
    (void)state;
    for (uint64_t seed = 400; seed <= 420; seed++) {
        one_channel_case(seed, 16384, 14); /* Mesa: x - 128 */
        one_channel_case(seed + 1000, 32388, 15); /* Mesa's Add path: rounds */
    }
}

/* conv + bias + CPEND (weight zero point) + ReLU + OUT_CVT + fused pooling. */
static void fused_case(uint64_t seed, unsigned method)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, 0, &in, &wt);
    int32_t *bias = malloc(p.k * sizeof(int32_t));
    for (uint32_t k = 0; k < p.k; k++) {
        bias[k] = (int32_t)splitmix64_range(&s, 0, 200000) - 100000;
    }
    struct dlasim_rk_conv cv;
    struct dlasim_dev *dev = conv_dev(&p, in, wt, &cv);
    mem_wr(dev, BIAS_ADDR, bias, p.k * sizeof(int32_t));
    cv.bias = BIAS_ADDR;
    cv.relu = 1;
    cv.ow_op = (int16_t)((int32_t)splitmix64_range(&s, 0, 40) - 20);
    cv.cvt_scale = (uint16_t)splitmix64_range(&s, 0x4000, 0x7fff);
    cv.cvt_shift = (uint16_t)splitmix64_range(&s, 14, 24);
    cv.cvt_offset = (int32_t)splitmix64_range(&s, 0, 60) - 128;
    struct dlasim_rk_pool_desc pd;
    memset(&pd, 0, sizeof(pd));
    pd.in_w = p.ow;
    pd.in_h = p.oh;
    pd.c = p.k;
    pd.k_w = splitmix64_range(&s, 1, p.ow < 3 ? p.ow : 3);
    pd.k_h = splitmix64_range(&s, 1, p.oh < 3 ? p.oh : 3);
    pd.stride_x = splitmix64_range(&s, 1, 2);
    pd.stride_y = splitmix64_range(&s, 1, 2);
    pd.pad_left = splitmix64_below(&s, pd.k_w);
    pd.pad_top = splitmix64_below(&s, pd.k_h);
    pd.out_w = (pd.in_w + pd.pad_left - pd.k_w) / pd.stride_x + 1;
    pd.out_h = (pd.in_h + pd.pad_top - pd.k_h) / pd.stride_y + 1;
    pd.method = method;
    pd.pad_value = (int32_t)splitmix64_range(&s, 0, 20) - 10;
    pd.recip_w = 65536 / pd.k_w;
    pd.recip_h = 65536 / pd.k_h;
    pd.output = POOL_ADDR;
    cv.to_ppu = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, &pd), 0);
    run_list(dev, &l, DLASIM_RK_IRQ_PPU);
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_STATUS), 0x400u); /* PPU group 0 */
    /* reference: conv result planes, then pooling */
    int8_t *q = malloc((size_t)p.k * p.oh * p.ow);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int64_t wsum;
                int64_t acc = ref_acc(&p, in, wt, k, y, x, &wsum);
                int64_t v = (int64_t)(int32_t)(uint32_t)(acc + cv.ow_op * wsum) + bias[k];
                v = v < 0 ? 0 : v;
                v = ref_rshift_even(v * cv.cvt_scale, cv.cvt_shift) + cv.cvt_offset;
                q[((size_t)k * p.oh + y) * p.ow + x] = sat8(v);
                int8_t got;
                mem_rd(dev, OUT_ADDR + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 1), &got, 1);
                if (got != sat8(v)) {
                    fail_msg("seed %llu: conv out[%u][%u][%u] = %d, reference %d",
                             (unsigned long long)seed, k, y, x, got, sat8(v));
                }
            }
        }
    }
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t oy = 0; oy < pd.out_h; oy++) {
            for (uint32_t ox = 0; ox < pd.out_w; ox++) {
                int64_t best = method == 1 ? -1000 : 1000, sum = 0;
                unsigned real = 0;
                for (uint32_t ky = 0; ky < pd.k_h; ky++) {
                    for (uint32_t kx = 0; kx < pd.k_w; kx++) {
                        int64_t y = (int64_t)oy * pd.stride_y + ky - pd.pad_top;
                        int64_t x = (int64_t)ox * pd.stride_x + kx - pd.pad_left;
                        if (y < 0 || x < 0 || y >= pd.in_h || x >= pd.in_w) {
                            sum += pd.pad_value;
                            continue;
                        }
                        int64_t v = q[((size_t)k * p.oh + (size_t)y) * p.ow + (size_t)x];
                        real++;
                        sum += v;
                        best = method == 1 ? (v > best ? v : best) : (v < best ? v : best);
                    }
                }
                int64_t want;
                if (method == 0) {
                    /* x recip (2^16 = 1), rounded half away from zero, twice */
                    int64_t a = sum * pd.recip_w;
                    int64_t hm = a >= 0 ? (a + 32768) / 65536 : -((-a + 32768) / 65536);
                    int64_t b = hm * pd.recip_h;
                    want = b >= 0 ? (b + 32768) / 65536 : -((-b + 32768) / 65536);
                } else {
                    want = best;
                }
                (void)real;
                int8_t got;
                mem_rd(dev, POOL_ADDR + dlasim_rk_feature_offset(pd.out_w, pd.out_h, k, oy, ox, 1),
                       &got, 1);
                if (got != sat8(want)) {
                    fail_msg("seed %llu method %u: pool[%u][%u][%u] = %d, reference %d",
                             (unsigned long long)seed, method, k, oy, ox, got, sat8(want));
                }
            }
        }
    }
    free(q);
    free(in);
    free(wt);
    free(bias);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_conv_requant_relu_pool(void **state)
{
    (void)state;
    for (uint64_t seed = 200; seed < 230; seed++) {
        fused_case(seed, (unsigned)(seed % 3));
    }
}

/* CORE CLIP_TRUNCATE with both rounding selectors, into int8, with and
 * without the DPU's ReLU (the fused and the staged DPU paths). */
static void truncate_case(uint64_t seed)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, (int)(seed & 1), &in, &wt);
    struct dlasim_rk_conv cv;
    struct dlasim_dev *dev = conv_dev(&p, in, wt, &cv);
    cv.clip_truncate = (uint8_t)splitmix64_range(&s, 0, 12);
    cv.clip_round_half_up = (uint8_t)splitmix64_below(&s, 2);
    cv.relu = (int)splitmix64_below(&s, 2);
    cv.cvt_scale = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    run_list(dev, &l, DLASIM_RK_IRQ_DPU);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int64_t acc = ref_acc(&p, in, wt, k, y, x, NULL), v;
                if (cv.clip_round_half_up) {
                    v = (int64_t)floorl(((long double)acc + (long double)((1ll << cv.clip_truncate) >> 1)) /
                                        (long double)(1ll << cv.clip_truncate));
                } else {
                    v = ref_rshift_even(acc, cv.clip_truncate);
                }
                if (cv.relu && v < 0) {
                    v = 0;
                }
                int8_t got;
                mem_rd(dev, OUT_ADDR + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 1), &got, 1);
                if (got != sat8(v)) {
                    fail_msg("seed %llu: truncate %u (%s)%s: out[%u][%u][%u] = %d, reference %d",
                             (unsigned long long)seed, cv.clip_truncate,
                             cv.clip_round_half_up ? "half up" : "half even", cv.relu ? " relu" : "",
                             k, y, x, got, sat8(v));
                }
            }
        }
    }
    free(in);
    free(wt);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_clip_truncate_rounding(void **state)
{
    (void)state;
    for (uint64_t seed = 300; seed < 340; seed++) {
        truncate_case(seed);
    }
}

/* x / 2^s rounded half away from zero (NVDLA SDP X truncation). */
static int64_t ref_rshift_away(int64_t x, unsigned s)
{
    if (s == 0) {
        return x;
    }
    int64_t mag = x < 0 ? -x : x;
    mag = (mag + ((int64_t)1 << (s - 1))) >> s;
    return x < 0 ? -mag : mag;
}

static int64_t clamp32(int64_t v)
{
    return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v;
}

/* DPU BS (per-channel bias, MUL with PReLU) and BN (per-channel x - op,
 * ReLU, ReLUX) stages and OUT_CVT, programmed over MMIO (slave mode, GLOBAL
 * OPERATION_ENABLE), against the documented semantics written out here. */
static void dpu_stages_case(uint64_t seed)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, 0, &in, &wt);
    int32_t *bs_op = malloc(p.k * sizeof(int32_t)), *bn_op = malloc(p.k * sizeof(int32_t));
    for (uint32_t k = 0; k < p.k; k++) {
        bs_op[k] = (int32_t)splitmix64_range(&s, 0, 40000) - 20000;
        bn_op[k] = (int32_t)splitmix64_range(&s, 0, 400) - 200;
    }
    struct dlasim_rk_conv cv;
    struct dlasim_dev *dev = conv_dev(&p, in, wt, &cv);
    mem_wr(dev, BIAS_ADDR, bs_op, p.k * sizeof(int32_t));
    mem_wr(dev, BIAS_ADDR + 0x10000, bn_op, p.k * sizeof(int32_t));
    cv.cvt_scale = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    for (size_t i = 0; i < l.task[0].n; i++) { /* the task's writes, by the CPU */
        uint64_t e = l.e[l.task[0].first + i];
        wr(dev, (uint32_t)(e & 0xffff), (uint32_t)(e >> 16));
    }
    int16_t mul = (int16_t)((int32_t)splitmix64_range(&s, 0, 8000) - 4000);
    unsigned sh = splitmix64_range(&s, 0, 14), sh_neg = splitmix64_range(&s, 0, 14);
    int prelu = (int)splitmix64_below(&s, 2);
    int32_t relux = (int32_t)splitmix64_range(&s, 1, 300000);
    uint16_t scale = (uint16_t)splitmix64_range(&s, 1, 0x7fff);
    unsigned cvt_shift = splitmix64_range(&s, 8, 24);
    int32_t cvt_offset = (int32_t)splitmix64_range(&s, 0, 100) - 50;
    wr(dev, RK3588_DPU_BS_CFG, RK3588_DPU_BS_CFG_BS_ALU_ALGO(2) | RK3588_DPU_BS_CFG_BS_ALU_SRC(1) |
                                   RK3588_DPU_BS_CFG_BS_RELU_BYPASS(1) |
                                   RK3588_DPU_BS_CFG_BS_MUL_PRELU((uint32_t)prelu));
    wr(dev, RK3588_DPU_BS_MUL_CFG, RK3588_DPU_BS_MUL_CFG_BS_MUL_OPERAND((uint16_t)mul) |
                                       RK3588_DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE(sh));
    wr(dev, RK3588_DPU_BS_OW_CFG, RK3588_DPU_BS_OW_CFG_OD_BYPASS(1));
    wr(dev, RK3588_DPU_DATA_FORMAT, RK3588_DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG(sh_neg));
    wr(dev, RK3588_DPU_BN_CFG, RK3588_DPU_BN_CFG_BN_ALU_ALGO(4) | RK3588_DPU_BN_CFG_BN_ALU_SRC(1) |
                                   RK3588_DPU_BN_CFG_BN_RELUX_EN(1) |
                                   RK3588_DPU_BN_CFG_BN_MUL_BYPASS(1));
    wr(dev, RK3588_DPU_BN_RELUX_CMP_VALUE, (uint32_t)relux);
    wr(dev, RK3588_DPU_RDMA_BRDMA_CFG, RK3588_DPU_RDMA_BRDMA_CFG_BRDMA_DATA_USE(1));
    wr(dev, RK3588_DPU_RDMA_BS_BASE_ADDR, BIAS_ADDR);
    wr(dev, RK3588_DPU_RDMA_NRDMA_CFG, RK3588_DPU_RDMA_NRDMA_CFG_NRDMA_DATA_USE(1));
    wr(dev, RK3588_DPU_RDMA_BN_BASE_ADDR, BIAS_ADDR + 0x10000);
    wr(dev, RK3588_DPU_OUT_CVT_SCALE, scale);
    wr(dev, RK3588_DPU_OUT_CVT_SHIFT, cvt_shift);
    wr(dev, RK3588_DPU_OUT_CVT_OFFSET, (uint32_t)cvt_offset);
    wr(dev, RK3588_GLOBAL_OPERATION_ENABLE, DLASIM_RK_EN_CONV);
    if (dlasim_run(dev)) {
        fail_msg("seed %llu: %s", (unsigned long long)seed, dlasim_last_error(dev));
    }
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_RAW_STATUS) & DLASIM_RK_IRQ_DPU, 0x100u);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int64_t v = (int32_t)(uint32_t)ref_acc(&p, in, wt, k, y, x, NULL);
                int64_t a = v + bs_op[k];                         /* BS ALU add */
                if (prelu && a >= 0) {
                    v = (int32_t)(uint32_t)a;                     /* PReLU passes it */
                } else {
                    v = clamp32(ref_rshift_away(a * mul, prelu ? sh_neg : sh));
                }
                v = clamp32(v - bn_op[k]);                        /* BN ALU minus */
                v = v < 0 ? 0 : v > relux ? relux : v;            /* ReLU, ReLUX */
                v = ref_rshift_even(v * scale, cvt_shift) + cvt_offset;
                int8_t got;
                mem_rd(dev, OUT_ADDR + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 1), &got, 1);
                if (got != sat8(v)) {
                    fail_msg("seed %llu (mul %d sh %u/%u prelu %d): out[%u][%u][%u] = %d, "
                             "reference %d", (unsigned long long)seed, mul, sh, sh_neg, prelu, k,
                             y, x, got, sat8(v));
                }
            }
        }
    }
    free(in);
    free(wt);
    free(bs_op);
    free(bn_op);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_dpu_stages(void **state)
{
    (void)state;
    for (uint64_t seed = 400; seed < 430; seed++) {
        dpu_stages_case(seed);
    }
}

/* DPU EW: a per-pixel int8 operand read by ERDMA (the residual Add Mesa
 * programs: EW_CVT_TYPE 1, ALU add) or MUL with PReLU, through the operand
 * converter, then OUT_CVT; programmed over MMIO. */
static void dpu_ew_case(uint64_t seed)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, 0, &in, &wt);
    size_t nop = (size_t)p.k * p.oh * p.ow;
    int8_t *op = malloc(nop);
    splitmix64_fill(&s, op, nop);
    struct dlasim_dev *dev = rk_dev();
    load_tensors(dev, &p, in, wt);
    size_t eb = dlasim_rk_feature_bytes(p.ow, p.oh, p.k, 1);
    uint8_t *e = calloc(eb, 1);
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                e[dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 1)] =
                    (uint8_t)op[((size_t)k * p.oh + y) * p.ow + x];
            }
        }
    }
    mem_wr(dev, BIAS_ADDR, e, eb);
    free(e);
    struct dlasim_rk_conv cv;
    conv_desc(&p, &cv);
    cv.cvt_scale = 1;
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    for (size_t i = 0; i < l.task[0].n; i++) {
        uint64_t en = l.e[l.task[0].first + i];
        wr(dev, (uint32_t)(en & 0xffff), (uint32_t)(en >> 16));
    }
    int mul = (int)(seed & 1), prelu = (int)splitmix64_below(&s, 2);
    uint16_t escale = (uint16_t)splitmix64_range(&s, 1, 0x7fff);
    unsigned eshift = splitmix64_range(&s, 0, 14), trunc = splitmix64_range(&s, 0, 10);
    unsigned trunc_neg = splitmix64_range(&s, 0, 10);
    int32_t eoff = (int32_t)splitmix64_range(&s, 0, 60) - 30;
    uint16_t scale = (uint16_t)splitmix64_range(&s, 1, 0x7fff);
    unsigned cvt_shift = splitmix64_range(&s, 10, 24);
    wr(dev, RK3588_DPU_EW_CFG, RK3588_DPU_EW_CFG_EW_CVT_TYPE(1) | RK3588_DPU_EW_CFG_EW_DATA_MODE(1) |
                                   RK3588_DPU_EW_CFG_EDATA_SIZE(1) |
                                   RK3588_DPU_EW_CFG_EW_ALU_ALGO(2) |
                                   RK3588_DPU_EW_CFG_EW_RELU_BYPASS(1) |
                                   RK3588_DPU_EW_CFG_EW_LUT_BYPASS(1) | RK3588_DPU_EW_CFG_EW_OP_SRC(1) |
                                   RK3588_DPU_EW_CFG_EW_OP_TYPE((uint32_t)mul) |
                                   RK3588_DPU_EW_CFG_EW_MUL_PRELU((uint32_t)(mul && prelu)));
    wr(dev, RK3588_DPU_EW_CVT_OFFSET_VALUE, (uint32_t)eoff);
    wr(dev, RK3588_DPU_EW_CVT_SCALE_VALUE, RK3588_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE(escale) |
                                               RK3588_DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT(eshift) |
                                               RK3588_DPU_EW_CVT_SCALE_VALUE_EW_TRUNCATE(trunc));
    wr(dev, RK3588_DPU_DATA_FORMAT, RK3588_DPU_DATA_FORMAT_EW_TRUNCATE_NEG(trunc_neg));
    wr(dev, RK3588_DPU_RDMA_ERDMA_CFG, RK3588_DPU_RDMA_ERDMA_CFG_ERDMA_DATA_MODE(1) |
                                           RK3588_DPU_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE(1));
    wr(dev, RK3588_DPU_RDMA_EW_BASE_ADDR, BIAS_ADDR);
    wr(dev, RK3588_DPU_RDMA_EW_SURF_STRIDE, p.ow * p.oh * 16);
    wr(dev, RK3588_DPU_OUT_CVT_SCALE, scale);
    wr(dev, RK3588_DPU_OUT_CVT_SHIFT, cvt_shift);
    wr(dev, RK3588_GLOBAL_OPERATION_ENABLE, DLASIM_RK_EN_CONV);
    if (dlasim_run(dev)) {
        fail_msg("seed %llu: %s", (unsigned long long)seed, dlasim_last_error(dev));
    }
    for (uint32_t k = 0; k < p.k; k++) {
        for (uint32_t y = 0; y < p.oh; y++) {
            for (uint32_t x = 0; x < p.ow; x++) {
                int64_t v = (int32_t)(uint32_t)ref_acc(&p, in, wt, k, y, x, NULL);
                int64_t o = op[((size_t)k * p.oh + y) * p.ow + x];
                o = ref_rshift_even((o + eoff) * escale, eshift); /* CVT_TYPE 1: offset first */
                if (!mul) {
                    v = clamp32(v + o);
                } else if (!prelu || v < 0) {
                    v = clamp32(ref_rshift_away(v * o, prelu ? trunc_neg : trunc));
                }
                v = ref_rshift_even(v * scale, cvt_shift);
                int8_t got;
                mem_rd(dev, OUT_ADDR + dlasim_rk_feature_offset(p.ow, p.oh, k, y, x, 1), &got, 1);
                if (got != sat8(v)) {
                    fail_msg("seed %llu (%s%s): out[%u][%u][%u] = %d, reference %d",
                             (unsigned long long)seed, mul ? "mul" : "add", prelu ? " prelu" : "",
                             k, y, x, got, sat8(v));
                }
            }
        }
    }
    free(in);
    free(wt);
    free(op);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_dpu_ew(void **state)
{
    (void)state;
    for (uint64_t seed = 500; seed < 530; seed++) {
        dpu_ew_case(seed);
    }
}

/* ---- the PC: multi-task chains --------------------------------------------------- */

/* n 1x1 int32 conv tasks, task i multiplying the input by weight i+1, each
 * writing its own output; returns the list. */
static void chain_list(struct dlasim_rk_regcmd *l, unsigned n)
{
    struct shape p = {4, 3, 16, 16, 1, 1, 1, 1, 0, 0, 4, 3, 0, 0};
    for (unsigned i = 0; i < n; i++) {
        struct dlasim_rk_conv cv;
        conv_desc(&p, &cv);
        cv.out_int32 = 1;
        cv.weights = WT_ADDR + i * 256;
        cv.output = OUT_ADDR + i * 1024;
        assert_int_equal(dlasim_rk_emit_conv(l, &cv, NULL), 0);
    }
}

static void load_chain_data(struct dlasim_dev *dev, unsigned n)
{
    uint8_t in[16 * 12];
    for (unsigned i = 0; i < sizeof(in); i++) {
        in[i] = (uint8_t)(i % 7);
    }
    mem_wr(dev, IN_ADDR, in, sizeof(in));
    for (unsigned t = 0; t < n; t++) {
        uint8_t w[256] = {0};
        for (unsigned k = 0; k < 16; k++) {
            w[k * 16 + k] = (uint8_t)(t + 1); /* identity x (t + 1) */
        }
        mem_wr(dev, WT_ADDR + t * 256, w, sizeof(w));
    }
}

static void check_chain_outputs(struct dlasim_dev *dev, unsigned n)
{
    for (unsigned t = 0; t < n; t++) {
        for (unsigned c = 0; c < 16; c++) {
            for (unsigned pix = 0; pix < 12; pix++) {
                int32_t got;
                mem_rd(dev, OUT_ADDR + t * 1024 + dlasim_rk_feature_offset(4, 3, c, pix / 4, pix % 4, 4),
                       &got, 4);
                int32_t want = (int32_t)(((pix * 16 + c) % 7) * (t + 1));
                if (got != want) {
                    fail_msg("task %u channel %u pixel %u: %d, want %d", t, c, pix, got, want);
                }
            }
        }
    }
}

/* As linux rocket: one task per kick, ack on the DPU interrupt, kick the next. */
static void test_chain_rocket_kicks(void **state)
{
    (void)state;
    const unsigned n = 5;
    struct dlasim_dev *dev = rk_dev();
    struct dlasim_rk_regcmd l = {0};
    chain_list(&l, n);
    load_chain_data(dev, n);
    size_t bytes = dlasim_rk_layout_size(&l);
    uint8_t *buf = malloc(bytes);
    assert_int_equal(dlasim_rk_layout(&l, CMD_ADDR, buf, bytes), 0);
    mem_wr(dev, CMD_ADDR, buf, bytes);
    free(buf);
    for (unsigned t = 0; t < n; t++) {
        assert_int_equal(dlasim_rk_kick(dev, 0, dlasim_rk_task_addr(&l, CMD_ADDR, t),
                                        dlasim_rk_task_entries(&l, t), 1, DLASIM_RK_IRQ_DPU), 0);
        assert_int_equal(dlasim_irq_level(dev), 0);
        assert_int_equal(dlasim_run(dev), 0);
        assert_int_equal(dlasim_irq_level(dev), 1);
        /* group alternates: DPU_0, DPU_1, DPU_0, ... */
        assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_RAW_STATUS) & DLASIM_RK_IRQ_DPU,
                         t % 2 ? 0x200u : 0x100u);
        assert_int_equal(rd(dev, RK3588_PC_TASK_STATUS), 1u);
        assert_int_equal(dlasim_rk_ack(dev, 0), 0);
        assert_int_equal(dlasim_irq_level(dev), 0);
    }
    assert_int_equal(dlasim_busy(dev, NULL, 0), 0);
    check_chain_outputs(dev, n);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

/* As rknpu: the whole chain in one kick, the PC following the tails; with
 * task_pp_en the next task is fetched while one runs (S_STATUS 2). */
static void test_chain_one_kick(void **state)
{
    (void)state;
    const unsigned n = 7;
    struct dlasim_dev *dev = rk_dev();
    struct dlasim_rk_regcmd l = {0};
    chain_list(&l, n);
    load_chain_data(dev, n);
    size_t bytes = dlasim_rk_layout_size(&l);
    uint8_t *buf = malloc(bytes);
    assert_int_equal(dlasim_rk_layout(&l, CMD_ADDR, buf, bytes), 0);
    mem_wr(dev, CMD_ADDR, buf, bytes);
    free(buf);
    assert_int_equal(dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(&l, 0), n,
                                    DLASIM_RK_IRQ_DPU), 0);
    /* two tasks fetched: group 0 running, group 1 waiting */
    assert_int_equal(rd(dev, RK3588_DPU_S_STATUS), 0x20001u);
    for (unsigned t = 0; t < n; t++) {
        assert_int_equal(dlasim_step(dev), 1);
        assert_int_equal(rd(dev, RK3588_PC_TASK_STATUS), t + 1);
    }
    assert_int_equal(dlasim_step(dev), 0);
    assert_int_equal(dlasim_busy(dev, NULL, 0), 0);
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_STATUS), 0x300u);
    check_chain_outputs(dev, n);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

/* Two cores at once, each with its own window, list and interrupt line;
 * core 2's data DMA offset by TASK_DMA_BASE_ADDR (its list is not). */
static void test_two_cores_dma_base(void **state)
{
    (void)state;
    const uint32_t base2 = 0x02000000u;
    struct dlasim_dev *dev = rk_dev();
    struct dlasim_rk_regcmd l = {0};
    chain_list(&l, 2);
    load_chain_data(dev, 2);
    /* the same data again under core 2's DMA base */
    uint8_t buf[4096];
    mem_rd(dev, IN_ADDR, buf, 16 * 12);
    mem_wr(dev, base2 + IN_ADDR, buf, 16 * 12);
    mem_rd(dev, WT_ADDR, buf, 512);
    mem_wr(dev, base2 + WT_ADDR, buf, 512);
    size_t bytes = dlasim_rk_layout_size(&l);
    uint8_t *list = malloc(bytes);
    assert_int_equal(dlasim_rk_layout(&l, CMD_ADDR, list, bytes), 0);
    mem_wr(dev, CMD_ADDR, list, bytes);
    free(list);
    const uint32_t c2 = 2 * DLASIM_RK_CORE_STRIDE;
    wr(dev, c2 + RK3588_PC_BASE_ADDRESS, CMD_ADDR);
    wr(dev, c2 + RK3588_PC_REGISTER_AMOUNTS, (uint32_t)((dlasim_rk_task_entries(&l, 0) + 1) / 2 - 1));
    wr(dev, c2 + RK3588_PC_INTERRUPT_MASK, DLASIM_RK_IRQ_DPU);
    wr(dev, c2 + RK3588_PC_TASK_CON, RK3588_PC_TASK_CON_TASK_COUNT_CLEAR__MASK | 2);
    wr(dev, c2 + RK3588_PC_TASK_DMA_BASE_ADDR, base2);
    wr(dev, c2 + RK3588_PC_OPERATION_ENABLE, 1);
    assert_int_equal(dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(&l, 0), 2,
                                    DLASIM_RK_IRQ_DPU), 0);
    assert_int_equal(dlasim_run(dev), 0);
    assert_int_equal(rd(dev, RK3588_PC_TASK_STATUS), 2u);
    assert_int_equal(rd(dev, c2 + RK3588_PC_TASK_STATUS), 2u);
    assert_int_equal(dlasim_rk_irq_level(dev, 0), 1);
    assert_int_equal(dlasim_rk_irq_level(dev, 1), 0);
    assert_int_equal(dlasim_rk_irq_level(dev, 2), 1);
    check_chain_outputs(dev, 2);
    for (unsigned t = 0; t < 2; t++) { /* core 2 wrote under its base, the same values */
        uint8_t a[1024], b[1024];
        mem_rd(dev, OUT_ADDR + t * 1024, a, sizeof(a));
        mem_rd(dev, base2 + OUT_ADDR + t * 1024, b, sizeof(b));
        assert_memory_equal(a, b, 4 * 3 * 16 * 4);
    }
    wr(dev, c2 + RK3588_PC_INTERRUPT_CLEAR, 0x1ffff);
    assert_int_equal(dlasim_rk_irq_level(dev, 2), 0);
    assert_int_equal(dlasim_rk_irq_level(dev, 0), 1);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

/* A DPU write past the end of the 32-bit space raises DMA_WRITE_ERROR, the
 * task still completes and the error names the unit. */
static void test_dma_write_error(void **state)
{
    (void)state;
    struct dlasim_dev *dev = rk_dev();
    struct dlasim_rk_regcmd l = {0};
    struct shape p = {4, 3, 16, 16, 1, 1, 1, 1, 0, 0, 4, 3, 0, 0};
    struct dlasim_rk_conv cv;
    conv_desc(&p, &cv);
    cv.out_int32 = 1;
    cv.output = 0xffffff00u;
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    size_t bytes = dlasim_rk_layout_size(&l);
    uint8_t *buf = malloc(bytes);
    assert_int_equal(dlasim_rk_layout(&l, CMD_ADDR, buf, bytes), 0);
    mem_wr(dev, CMD_ADDR, buf, bytes);
    free(buf);
    assert_int_equal(dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(&l, 0), 1,
                                    DLASIM_RK_IRQ_DPU | DLASIM_RK_IRQ_DMA_WRITE_ERROR), 0);
    expect_error(dev, dlasim_run(dev), DLASIM_ERR_MEM, "DPU WDMA");
    assert_int_equal(rd(dev, RK3588_PC_INTERRUPT_STATUS), 0x2100u);
    assert_int_equal(dlasim_busy(dev, NULL, 0), 0);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

/* ---- the layer observer ----------------------------------------------------------- */

struct seen_tasks {
    unsigned n;
    struct dlasim_layer_info l[4];
};

static void record_task(void *opaque, const struct dlasim_layer_info *li)
{
    struct seen_tasks *s = opaque;
    if (s->n < 4) {
        s->l[s->n] = *li;
    }
    s->n++;
}

/* Random convolutions (direct and depthwise) to memory, then a 1x1 max pool
 * of their output as a second task (every drawn shape has one): two
 * reports, "conv" with the shape the test drew (MACs counted from it), then
 * "pdp". */
static void observer_case(uint64_t seed, int dw)
{
    uint64_t s = seed;
    struct shape p;
    int8_t *in, *wt;
    random_tensors(&s, &p, dw, &in, &wt);
    struct dlasim_rk_conv cv;
    struct dlasim_dev *dev = conv_dev(&p, in, wt, &cv);
    struct seen_tasks seen;
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(dlasim_set_layer_observer(dev, record_task, &seen), 0);
    struct dlasim_rk_regcmd l = {0};
    assert_int_equal(dlasim_rk_emit_conv(&l, &cv, NULL), 0);
    struct dlasim_rk_pool_desc pd;
    memset(&pd, 0, sizeof(pd));
    pd.in_w = p.ow, pd.in_h = p.oh, pd.c = p.k;
    pd.out_w = p.ow, pd.out_h = p.oh; /* 1x1 window: every shape has one */
    pd.k_w = pd.k_h = pd.stride_x = pd.stride_y = 1;
    pd.method = 1;
    pd.input = OUT_ADDR;
    pd.output = POOL_ADDR;
    assert_int_equal(dlasim_rk_emit_pool(&l, &pd), 0);
    run_list(dev, &l, DLASIM_RK_IRQ_PPU);
    assert_int_equal(seen.n, 2);
    const struct dlasim_layer_info *c = &seen.l[0];
    assert_string_equal(c->kind, "conv");
    assert_int_equal(c->index, 1);
    assert_int_equal(c->status, 0);
    assert_int_equal(c->out_w, p.ow);
    assert_int_equal(c->out_h, p.oh);
    assert_int_equal(c->out_k, p.k);
    assert_int_equal(c->in_c, dw ? 1 : p.c);
    assert_int_equal(c->k_w, p.kw);
    assert_int_equal(c->k_h, p.kh);
    assert_int_equal(c->stride_x, p.sx);
    assert_int_equal(c->stride_y, p.sy);
    assert_int_equal(c->macs, (uint64_t)p.ow * p.oh * p.k * p.kw * p.kh * (dw ? 1 : p.c));
    assert_string_equal(seen.l[1].kind, "pdp");
    assert_int_equal(seen.l[1].index, 2);
    assert_int_equal(seen.l[1].status, 0);
    free(in);
    free(wt);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
}

static void test_layer_observer(void **state)
{
    (void)state;
    for (uint64_t seed = 300; seed < 310; seed++) {
        observer_case(seed, (int)(seed & 1));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ppu_fields),
        cmocka_unit_test(test_dpu_rdma_fields),
        cmocka_unit_test(test_ppu_shadowing),
        cmocka_unit_test(test_dpu_rdma_shadowing),
        cmocka_unit_test(test_s_pointer),
        cmocka_unit_test(test_interrupts_and_cores),
        cmocka_unit_test(test_conv_int32_exact),
        cmocka_unit_test(test_depthwise_int32_exact),
        cmocka_unit_test(test_conv_padded_output_channels),
        cmocka_unit_test(test_one_channel_input),
        cmocka_unit_test(test_conv_requant_relu_pool),
        cmocka_unit_test(test_clip_truncate_rounding),
        cmocka_unit_test(test_dpu_stages),
        cmocka_unit_test(test_dpu_ew),
        cmocka_unit_test(test_chain_rocket_kicks),
        cmocka_unit_test(test_chain_one_kick),
        cmocka_unit_test(test_two_cores_dma_base),
        cmocka_unit_test(test_dma_write_error),
        cmocka_unit_test(test_layer_observer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
