/*
 * Property tests of INT16 direct convolution (CDMA, CBUF, CSC, CMAC_A/B,
 * CACC, SDP in flying mode writing int16) on nv_large with INT16 feature and
 * weight data switched on.  Random layers are programmed with CSB writes,
 * run, and the output memory and CACC's D_OUT_SATURATION are compared with a
 * plain-C reference written here (direct convolution loops, nothing shared
 * with src/).
 *
 * Facts the reference encodes (NVIDIA nv_full cmod/csc, cmod/cmac,
 * vmod/nvdla/cacc/NV_NVDLA_CACC_CALC_int16.v; the nv_full INT16 CONV_D_L0_0
 * regression golden agrees with them, tests/traces/loadables.sh):
 *   - feature memory: surfaces of M-byte atoms (M = NVDLA_MEMORY_ATOMIC_SIZE)
 *     holding M/2 int16 channels: element (c, y, x) at base + (c / (M/2)) *
 *     SURF_STRIDE + y * LINE_STRIDE + x * M + (c % (M/2)) * 2, little endian;
 *     the CDMA converter (when enabled) gives sat16(round_half_away((x -
 *     offset) * scale / 2^truncate));
 *   - weights in memory: groups of Atomic-K/2 kernels; in a group, blocks of
 *     Atomic-C channels; in a block, kernel positions row-major; at a
 *     position, every kernel of the group with its block of channels, 2 bytes
 *     per weight; BYTE_PER_KERNEL counts bytes;
 *   - CBUF entries per slice: as for int8 with atoms of M bytes
 *     (ceil(C * 2 / M) atoms per pixel);
 *   - padding: CSC's whole 16-bit PAD_VALUE where the window leaves the input;
 *   - products int16 x int16, exact sums; CACC keeps 48 bits (saturating),
 *     then {sum, 16'b0} >>> CLIP_TRUNCATE, rounds up on the guide bit for
 *     positive sums and on guide + any of the 15 sticky bits for negative
 *     ones, saturates to int32 and counts it;
 *   - SDP (all stages bypassed, converter 1x): int16 = sat16(cacc), written
 *     in surfaces of M/2 channels like the input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/convlayer.h"
#include "common/rng.h"
#include "common/testdev.h"

#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

#define IN_ADDR CONV_IN_ADDR /* where conv_program_* (tests/common/convlayer.c) point */
#define WT_ADDR CONV_WT_ADDR
#define OUT_ADDR CONV_OUT_ADDR

static const char *const int16_ovr[] = { "NVDLA_FEATURE_DATA_TYPE=INT8|INT16",
                                         "NVDLA_WEIGHT_DATA_TYPE=INT8|INT16",
                                         "NVDLA_CBUF_BANK_WIDTH=128" };

static uint64_t rng_state;

static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng_state, lo, hi);
}

static int16_t rnd16(int32_t lo, int32_t hi)
{
    return (int16_t)(lo + (int32_t)rnd(0, (uint32_t)(hi - lo)));
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

/* One layer and its configuration's parameters. */
struct layer {
    uint32_t m, ac, ak, bw, depth, banks; /* configuration */
    uint32_t w, h, c, k, kw, kh, sx, sy, dx, dy, pl, pt, pr, pb, ow, oh;
    uint32_t trunc;
    int16_t pad;
    int cvt_en;
    int32_t cvt_off, cvt_scale;
    uint32_t cvt_trunc;
    uint32_t line, surf, out_line, out_surf;
    uint32_t entries, data_bank, weight_bank, wt_bytes;
    int16_t *in;  /* [c][y][x] as in memory (before the converter) */
    int16_t *wt;  /* [k][c][ky][kx] */
};

static uint32_t epa(const struct layer *L)
{
    return L->m / 2;
}

static uint32_t kernels_per_group(const struct layer *L)
{
    return L->ak / 2;
}

static uint32_t bytes_per_kernel(const struct layer *L)
{
    return L->kw * L->kh * L->c * 2;
}

static uint32_t entries_per_slice(const struct layer *L)
{
    uint32_t apc = L->bw / L->m, atoms = div_up(L->c * 2, L->m);
    uint32_t e = atoms / apc * L->w, rest = atoms % apc;
    if (rest == 0) {
        return e;
    }
    return e + (2 * rest > apc ? L->w : 4 * rest > apc ? div_up(L->w, 2) : div_up(L->w, 4));
}

/* A random layer that fits CBUF; 0 when the draw does not fit. */
static int random_layer(struct layer *L)
{
    L->w = rnd(1, 9);
    L->h = rnd(1, 9);
    L->c = rnd(0, 3) ? rnd(1, 40) : rnd(41, 150);
    L->k = rnd(0, 2) ? rnd(1, 20) : rnd(21, 40);
    L->kw = rnd(1, 3);
    L->kh = rnd(1, 3);
    L->sx = rnd(1, 2);
    L->sy = rnd(1, 2);
    L->dx = rnd(0, 3) ? 1 : 2;
    L->dy = rnd(0, 3) ? 1 : 2;
    L->pl = rnd(0, L->kw - 1);
    L->pt = rnd(0, L->kh - 1);
    L->pr = rnd(0, L->kw - 1);
    L->pb = rnd(0, L->kh - 1);
    uint32_t ew = (L->kw - 1) * L->dx + 1, eh = (L->kh - 1) * L->dy + 1;
    if (L->pl + L->w + L->pr < ew || L->pt + L->h + L->pb < eh) {
        return 0;
    }
    L->ow = (L->pl + L->w + L->pr - ew) / L->sx + 1;
    L->oh = (L->pt + L->h + L->pb - eh) / L->sy + 1;
    L->pad = rnd(0, 1) ? 0 : rnd16(-32768, 32767);
    L->cvt_en = rnd(0, 3) == 0;
    L->cvt_off = rnd16(-300, 300);
    L->cvt_scale = rnd16(-3, 3);
    L->cvt_trunc = rnd(0, 2);
    L->line = L->w * L->m + rnd(0, 2) * L->m;
    L->surf = L->h * L->line + rnd(0, 2) * L->m;
    L->out_line = L->ow * L->m + rnd(0, 1) * L->m;
    L->out_surf = L->oh * L->out_line + rnd(0, 1) * L->m;
    /* CACC truncation around the magnitude of the sums, sometimes far off
     * (saturation) */
    uint32_t bits = 30 + 32 - (uint32_t)__builtin_clz(L->c * L->kw * L->kh);
    L->trunc = rnd(0, 4) ? (bits > 46 ? 31 : bits - 15 - rnd(0, 2)) : rnd(0, 31);
    if (L->trunc > 31) {
        L->trunc = 31;
    }
    L->entries = entries_per_slice(L);
    L->data_bank = div_up(L->h * L->entries, L->depth);
    L->wt_bytes = (bytes_per_kernel(L) * L->k + 127) / 128 * 128;
    uint64_t group = (uint64_t)(L->k < kernels_per_group(L) ? L->k : kernels_per_group(L)) *
                     bytes_per_kernel(L);
    L->weight_bank = (uint32_t)((group + (uint64_t)L->bw * L->depth - 1) / ((uint64_t)L->bw * L->depth));
    return L->data_bank + L->weight_bank <= L->banks;
}

static void fill_contents(struct layer *L)
{
    size_t n_in = (size_t)L->c * L->h * L->w, n_wt = (size_t)L->k * L->c * L->kh * L->kw;
    int small = rnd(0, 2) == 0; /* small values: many exact zeros and sign changes */
    L->in = malloc(n_in * sizeof(int16_t));
    L->wt = malloc(n_wt * sizeof(int16_t));
    assert_non_null(L->in);
    assert_non_null(L->wt);
    for (size_t i = 0; i < n_in; i++) {
        L->in[i] = small ? rnd16(-4, 4) : rnd16(-32768, 32767);
    }
    for (size_t i = 0; i < n_wt; i++) {
        L->wt[i] = rnd(0, 9) == 0 ? 0 : small ? rnd16(-4, 4) : rnd16(-32768, 32767);
    }
}

static void put16(uint8_t *p, int16_t v)
{
    p[0] = (uint8_t)((uint16_t)v & 0xff);
    p[1] = (uint8_t)((uint16_t)v >> 8);
}

/* The input cube in memory: random bytes in the gaps and padding channels. */
static void write_input(struct dlasim_dev *dev, const struct layer *L)
{
    uint32_t ns = div_up(L->c, epa(L));
    size_t n = (size_t)ns * L->surf;
    uint8_t *img = malloc(n);
    assert_non_null(img);
    splitmix64_fill(&rng_state, img, n);
    for (uint32_t c = 0; c < L->c; c++) {
        for (uint32_t y = 0; y < L->h; y++) {
            for (uint32_t x = 0; x < L->w; x++) {
                size_t at = (size_t)(c / epa(L)) * L->surf + (size_t)y * L->line +
                            (size_t)x * L->m + (c % epa(L)) * 2;
                put16(img + at, L->in[((size_t)c * L->h + y) * L->w + x]);
            }
        }
    }
    mem_wr(dev, IN_ADDR, img, n);
    free(img);
}

/* The weight stream (see the header comment), zero-padded to wt_bytes. */
static void write_weights(struct dlasim_dev *dev, const struct layer *L)
{
    uint8_t *s = calloc(L->wt_bytes, 1);
    assert_non_null(s);
    const uint32_t ak = kernels_per_group(L), npos = L->kw * L->kh;
    for (uint32_t k = 0; k < L->k; k++) {
        uint32_t g = k / ak, kpg = L->k - g * ak < ak ? L->k - g * ak : ak;
        size_t base = (size_t)g * ak * bytes_per_kernel(L);
        for (uint32_t c = 0; c < L->c; c++) {
            uint32_t b = c / L->ac, cb = L->c - b * L->ac < L->ac ? L->c - b * L->ac : L->ac;
            for (uint32_t p = 0; p < npos; p++) {
                size_t at = base + (size_t)b * L->ac * npos * kpg * 2 +
                            ((size_t)p * kpg + k % ak) * cb * 2 + (c % L->ac) * 2;
                put16(s + at, L->wt[((size_t)k * L->c + c) * npos + p]);
            }
        }
    }
    mem_wr(dev, WT_ADDR, s, L->wt_bytes);
    free(s);
}

/* ---- programming ---------------------------------------------------------------- */

/* The layer as tests/common/convlayer.c programs it: CDMA, CSC, CMAC_A/B,
 * CACC and SDP (flying, all stages bypassed, converter 1x) with INT16
 * precision; the device and configuration parameters in *t. */
static void program(struct dlasim_dev *d, const struct layer *L)
{
    struct tdev t;
    struct conv c;
    memset(&t, 0, sizeof(t));
    memset(&c, 0, sizeof(c));
    t.dev = d;
    t.m = L->m;
    t.ac = L->ac;
    t.ak = L->ak;
    t.bw = L->bw;
    t.depth = L->depth;
    t.banks = L->banks;
    c.precision = 1;
    c.w = L->w;
    c.h = c.fetch_h = c.rls = L->h;
    c.c = L->c;
    c.k = L->k;
    c.kw = L->kw;
    c.kh = L->kh;
    c.sx = L->sx;
    c.sy = L->sy;
    c.dx = L->dx;
    c.dy = L->dy;
    c.pl = L->pl;
    c.pr = L->pr;
    c.pt = L->pt;
    c.pb = L->pb;
    c.pad_value = c.cdma_pad = (uint16_t)L->pad;
    c.ow = L->ow;
    c.oh = L->oh;
    c.trunc = L->trunc;
    c.cvt_en = L->cvt_en;
    c.cvt_off = L->cvt_off;
    c.cvt_scale = L->cvt_scale;
    c.cvt_trunc = L->cvt_trunc;
    c.line_stride = L->line;
    c.surf_stride = L->surf;
    c.out_line = L->out_line;
    c.out_surf = L->out_surf;
    c.entries = L->entries;
    c.data_bank = L->data_bank;
    c.weight_bank = L->weight_bank;
    c.wt_bytes = L->wt_bytes;
    assert_int_equal(conv_bytes_per_kernel(&c), bytes_per_kernel(L));
    conv_program_cacc(&t, &c);
    conv_program_sdp(&t, &c);
    conv_program_csc(&t, &c);
    conv_program_cdma(&t, &c);
}

static void run_layer(struct dlasim_dev *d, const struct layer *L)
{
    program(d, L);
    conv_enable(d);
    int rc = dlasim_run(d);
    if (rc) {
        fail_msg("INT16 %ux%ux%u, %u kernels %ux%u: dlasim_run = %s: %s", L->w, L->h, L->c, L->k,
                 L->kw, L->kh, dlasim_status_name(rc), dlasim_last_error(d));
    }
}

/* ---- reference ------------------------------------------------------------------ */

static int16_t ref_input(const struct layer *L, uint32_t c, int64_t y, int64_t x)
{
    if (y < 0 || x < 0 || y >= L->h || x >= L->w) {
        return L->pad;
    }
    int16_t v = L->in[((size_t)c * L->h + (size_t)y) * L->w + (size_t)x];
    if (!L->cvt_en) {
        return v;
    }
    int64_t p = ((int64_t)v - L->cvt_off) * L->cvt_scale;
    if (L->cvt_trunc) {
        int64_t half = (int64_t)1 << (L->cvt_trunc - 1);
        p = p < 0 ? -((-p + half) >> L->cvt_trunc) : (p + half) >> L->cvt_trunc;
    }
    return (int16_t)(p > 32767 ? 32767 : p < -32768 ? -32768 : p);
}

static int64_t ref_sum(const struct layer *L, uint32_t k, uint32_t oy, uint32_t ox)
{
    int64_t s = 0;
    for (uint32_t c = 0; c < L->c; c++) {
        for (uint32_t ky = 0; ky < L->kh; ky++) {
            for (uint32_t kx = 0; kx < L->kw; kx++) {
                int64_t y = (int64_t)oy * L->sy + (int64_t)ky * L->dy - L->pt;
                int64_t x = (int64_t)ox * L->sx + (int64_t)kx * L->dx - L->pl;
                int16_t w = L->wt[(((size_t)k * L->c + c) * L->kh + ky) * L->kw + kx];
                s += (int64_t)ref_input(L, c, y, x) * w;
            }
        }
    }
    return s;
}

/* CACC_CALC_int16: the 48-bit accumulator, then the rounding and int32
 * saturation every precision shares (conv_ref_cacc). */
static int32_t ref_cacc(int64_t v, unsigned t, unsigned *sat)
{
    const int64_t hi = ((int64_t)1 << 47) - 1, lo = -((int64_t)1 << 47);
    return conv_ref_cacc(v > hi ? hi : v < lo ? lo : v, t, sat);
}

static void check_layer(struct dlasim_dev *d, const struct layer *L, unsigned n)
{
    uint32_t ns = div_up(L->k, epa(L));
    size_t bytes = (size_t)ns * L->out_surf;
    uint8_t *out = malloc(bytes);
    assert_non_null(out);
    mem_rd(d, OUT_ADDR, out, bytes);
    unsigned sat = 0;
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t y = 0; y < L->oh; y++) {
            for (uint32_t x = 0; x < L->ow; x++) {
                int32_t acc = ref_cacc(ref_sum(L, k, y, x), L->trunc, &sat);
                int16_t want = (int16_t)(acc > 32767 ? 32767 : acc < -32768 ? -32768 : acc);
                size_t at = (size_t)(k / epa(L)) * L->out_surf + (size_t)y * L->out_line +
                            (size_t)x * L->m + (k % epa(L)) * 2;
                int16_t got = (int16_t)(uint16_t)(out[at] | (out[at + 1] << 8));
                if (got != want) {
                    fail_msg("layer %u (%ux%ux%u, %u kernels %ux%u s%ux%u d%ux%u pad %u,%u "
                             "value %d, trunc %u, cvt %d): out[k=%u][y=%u][x=%u] = %d, "
                             "reference %d (cacc %d)",
                             n, L->w, L->h, L->c, L->k, L->kw, L->kh, L->sx, L->sy, L->dx, L->dy,
                             L->pl, L->pt, L->pad, L->trunc, L->cvt_en, k, y, x, got, want, acc);
                }
            }
        }
    }
    assert_int_equal(rd(d, NVDLA_CACC_D_OUT_SATURATION_0), sat);
    free(out);
}

static void test_random_int16_layers(void **state)
{
    (void)state;
    rng_state = 0x16c0417ull;
    unsigned done = 0;
    while (done < 60) {
        struct dlasim_dev *d = tdev_new("nv_large", int16_ovr, 3, 2);
        struct layer L;
        memset(&L, 0, sizeof(L));
        L.m = param(d, "NVDLA_MEMORY_ATOMIC_SIZE");
        L.ac = param(d, "NVDLA_MAC_ATOMIC_C_SIZE");
        L.ak = param(d, "NVDLA_MAC_ATOMIC_K_SIZE");
        L.bw = param(d, "NVDLA_CBUF_BANK_WIDTH");
        L.depth = param(d, "NVDLA_CBUF_BANK_DEPTH");
        L.banks = param(d, "NVDLA_CBUF_BANK_NUMBER");
        if (random_layer(&L)) {
            fill_contents(&L);
            write_input(d, &L);
            write_weights(d, &L);
            run_layer(d, &L);
            check_layer(d, &L, done);
            free(L.in);
            free(L.wt);
            done++;
        }
        dlasim_destroy(d);
    }
}

/* INT16 programmed on a configuration without INT16 is a programming error
 * naming the field. */
static void test_int16_refused_without_int16(void **state)
{
    (void)state;
    rng_state = 7;
    struct dlasim_dev *d = tdev_new("nv_large", NULL, 0, 1);
    struct layer L;
    memset(&L, 0, sizeof(L));
    L.m = 32;
    L.ac = 64;
    L.ak = 32;
    L.bw = 128;
    L.depth = 512;
    L.banks = 16;
    while (!random_layer(&L)) {
    }
    program(d, &L);
    wr(d, NVDLA_CDMA_D_OP_ENABLE_0, 1);
    wr(d, NVDLA_CSC_D_OP_ENABLE_0, 1);
    wr(d, NVDLA_CMAC_A_D_OP_ENABLE_0, 1);
    wr(d, NVDLA_CMAC_B_D_OP_ENABLE_0, 1);
    wr(d, NVDLA_CACC_D_OP_ENABLE_0, 1);
    wr(d, NVDLA_SDP_D_OP_ENABLE_0, 1);
    expect_error(d, dlasim_run(d), DLASIM_ERR_PROG, "PRECISION=1 is not a data type");
    dlasim_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_int16_layers),
        cmocka_unit_test(test_int16_refused_without_int16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
