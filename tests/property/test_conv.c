/*
 * Property tests of the convolution pipeline (CDMA, CBUF, CSC, CMAC_A/B,
 * CACC) through the public API: random direct and pixel-input convolution
 * layers are programmed with CSB writes, run with SDP in flying mode writing
 * int8 to memory (all stages bypassed, or a BS bias add), and the output is
 * compared byte for byte with a plain-C reference written here (direct
 * convolution loops, no code shared with src/).  Also: CBUF data and weight
 * reuse across layers; every pixel format the ConfigROM lists, with the
 * input converter off, on and with means; batched layers on nv_large (with
 * the SDP bias from a register or from memory per element / per kernel)
 * and their refusals.
 *
 * Facts the reference encodes:
 *   - feature memory: surfaces of Atomic-M channels, element (c, y, x) at
 *     base + (c / M) * SURF_STRIDE + y * LINE_STRIDE + x * M + c % M;
 *   - weights in memory: groups of Atomic-K kernels; in a group, blocks of
 *     Atomic-C channels; in a block, kernel positions row-major; at a
 *     position, every kernel of the group with its block of channels
 *     (cmod/csc SendWeightToMacSequencerDirectConvCommon); pixel kernels are
 *     channel-extended (width 1, channel = x * elements + element) and with
 *     post-extension a position holds 2 or 4 kernel rows of each kernel;
 *   - padding: CSC's PAD_VALUE (low byte) where the window leaves the input
 *     (right/bottom too); for pixels CDMA's PAD_VALUE left/right;
 *   - pixels: components stored R,G,B,A (Y,U,V,A); the format name lists
 *     components from the most significant byte of a little-endian word;
 *     the 10-bit formats of an int8-only build are four bytes in memory
 *     order (vmod NV_NVDLA_CDMA_IMG_ctrl.v decodes them only without
 *     NVDLA_FEATURE_DATA_TYPE_INT8);
 *   - batches: batch b of the input at D_DAIN_ADDR + b * D_BATCH_STRIDE,
 *     shared kernels, batch b of the output at D_DST_BASE_ADDR +
 *     b * D_DST_BATCH_STRIDE, SDP operands shared by all batches;
 *     the input converter computes sat8(round_half_away((x - mean or
 *     offset) * scale / 2^truncate));
 *   - CACC: {sum, 16'b0} >>> CLIP_TRUNCATE, round up on the guide bit for
 *     positive sums and on guide + sticky for negative ones, saturate to
 *     int32 (vmod NV_NVDLA_CACC_CALC_int8.v);
 *   - SDP: int8 = saturate(cacc [+ bias]).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlasim/dlasim.h"
#include "regs/gen/nvdla_regs.h"

/* ---- PRNG ------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
    return splitmix64_next(&rng_state);
}

/* Uniform in [lo, hi]. */
static uint32_t rnd(uint32_t lo, uint32_t hi)
{
    return splitmix64_range(&rng_state, lo, hi);
}

static int32_t rnd_s(int32_t lo, int32_t hi)
{
    return lo + (int32_t)(splitmix64() % (uint64_t)((int64_t)hi - lo + 1));
}

static void fill_random(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)splitmix64();
    }
}

static uint32_t div_up(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}

static uint32_t round_up(uint32_t a, uint32_t b)
{
    return div_up(a, b) * b;
}

/* ---- device -------------------------------------------------------------------- */

struct tdev {
    struct dlasim_dev *dev;
    unsigned group;           /* register group of the next layer */
    uint32_t m, ac, ak, bw, depth, banks;
};

static uint32_t param(struct tdev *t, const char *name)
{
    uint64_t v = 0;
    assert_int_equal(dlasim_param(t->dev, name, &v), 0);
    return (uint32_t)v;
}

static void tdev_open(struct tdev *t, const char *config, const char *const *ovr, size_t novr)
{
    struct dlasim_options o;
    char err[256] = "";
    memset(&o, 0, sizeof(o));
    memset(t, 0, sizeof(*t));
    o.config = config;
    o.overrides = ovr;
    o.n_overrides = novr;
    o.threads = 2;
    int rc = dlasim_create(&o, &t->dev, err, sizeof(err));
    if (rc) {
        fail_msg("dlasim_create(%s): %s", config, err);
    }
    t->m = param(t, "NVDLA_MEMORY_ATOMIC_SIZE");
    t->ac = param(t, "NVDLA_MAC_ATOMIC_C_SIZE");
    t->ak = param(t, "NVDLA_MAC_ATOMIC_K_SIZE");
    t->bw = param(t, "NVDLA_CBUF_BANK_WIDTH");
    t->depth = param(t, "NVDLA_CBUF_BANK_DEPTH");
    t->banks = param(t, "NVDLA_CBUF_BANK_NUMBER");
}

static void wr(struct tdev *t, uint32_t addr, uint32_t v)
{
    assert_int_equal(dlasim_csb_write(t->dev, addr, v), 0);
}

static void mem_wr(struct tdev *t, uint64_t addr, const void *p, size_t n)
{
    assert_int_equal(dlasim_mem_write(t->dev, DLASIM_PORT_DBB, addr, p, n), 0);
}

static void mem_rd(struct tdev *t, uint64_t addr, void *p, size_t n)
{
    assert_int_equal(dlasim_mem_read(t->dev, DLASIM_PORT_DBB, addr, p, n), 0);
}

/* ---- pixel formats, as the test understands their names --------------------------- */

struct tfmt {
    uint32_t id;
    const char *components; /* most significant byte first; "YUV" for semi-planar */
    int semi;               /* Y plane + interleaved UV plane (UV word named by uv) */
    const char *uv;         /* semi-planar: the UV word, most significant byte first */
    unsigned bits;          /* bits of a colour component (the 10-bit ones have A2) */
};

#define TF(ID, COMPONENTS, SEMI, UV, BITS)                                                    \
    { NVDLA_CDMA_D_DATAIN_FORMAT_0_PIXEL_FORMAT_##ID, COMPONENTS, SEMI, UV, BITS }

static const struct tfmt fmts[] = {
    TF(T_R8, "R", 0, NULL, 8),
    TF(T_A8B8G8R8, "ABGR", 0, NULL, 8),
    TF(T_A8R8G8B8, "ARGB", 0, NULL, 8),
    TF(T_B8G8R8A8, "BGRA", 0, NULL, 8),
    TF(T_R8G8B8A8, "RGBA", 0, NULL, 8),
    TF(T_X8B8G8R8, "XBGR", 0, NULL, 8),
    TF(T_X8R8G8B8, "XRGB", 0, NULL, 8),
    TF(T_B8G8R8X8, "BGRX", 0, NULL, 8),
    TF(T_R8G8B8X8, "RGBX", 0, NULL, 8),
    TF(T_A8Y8U8V8, "AYUV", 0, NULL, 8),
    TF(T_V8U8Y8A8, "VUYA", 0, NULL, 8),
    TF(T_A2B10G10R10, "ABGR", 0, NULL, 10),
    TF(T_A2R10G10B10, "ARGB", 0, NULL, 10),
    TF(T_B10G10R10A2, "BGRA", 0, NULL, 10),
    TF(T_R10G10B10A2, "RGBA", 0, NULL, 10),
    TF(T_Y8___U8V8_N444, "YUV", 1, "UV", 8),
    TF(T_Y8___V8U8_N444, "YUV", 1, "VU", 8),
};

#define N_FMTS (sizeof(fmts) / sizeof(fmts[0]))

static const struct tfmt *fmt_by_id(uint32_t id)
{
    for (size_t i = 0; i < N_FMTS; i++) {
        if (fmts[i].id == id) {
            return &fmts[i];
        }
    }
    return NULL;
}

static unsigned fmt_elems(const struct tfmt *f)
{
    return (unsigned)strlen(f->components);
}

static unsigned fmt_bpp0(const struct tfmt *f)
{
    return f->semi ? 1 : fmt_elems(f);
}

/* CBUF order of the components: R,G,B,A(X) or Y,U,V,A. */
static char component_of(const struct tfmt *f, unsigned e)
{
    if (strchr(f->components, 'Y')) {
        return "YUVA"[e];
    }
    if (fmt_elems(f) == 1) {
        return 'R';
    }
    return e == 3 ? (strchr(f->components, 'X') ? 'X' : 'A') : "RGB"[e];
}

/* Byte offset of a component in a little-endian word named MSB first. */
static unsigned byte_of(const char *name, char comp)
{
    const char *p = strchr(name, comp);
    assert_non_null(p);
    return (unsigned)(strlen(name) - 1 - (size_t)(p - name));
}

/*
 * Byte of a packed pixel feeding CBUF element e.  Byte-wide components are
 * reordered to R,G,B,A (Y,U,V,A).  The configurations tested are int8-only
 * builds (hw spec/defs/nv_small*.spec, nv_large.spec: FEATURE_DATA_TYPE_INT8),
 * whose CDMA does not decode the 10-bit formats (vmod
 * NV_NVDLA_CDMA_IMG_ctrl.v: those cases are under #ifndef
 * NVDLA_FEATURE_DATA_TYPE_INT8) and reads their 32-bit word as four bytes in
 * memory order, like A8B8G8R8.
 */
static unsigned packed_byte(const struct tfmt *f, unsigned e)
{
    if (f->bits > 8) {
        return e;
    }
    return byte_of(f->components, component_of(f, e));
}

/* ---- layers ---------------------------------------------------------------------- */

#define IN_ADDR 0x80000000ull
#define IN1_ADDR 0x84000000ull
#define WT_ADDR 0x90000000ull
#define OUT_ADDR 0xa0000000ull
#define OP_ADDR 0xc0000000ull

struct conv {
    int pixel;
    uint32_t w, h, c;                /* input: feature cube, or pixels x elements */
    uint32_t fetch_h;                /* lines CDMA fetches (h unless data is reused) */
    uint32_t k, kw, kh, sx, sy, dx, dy; /* kw in pixels for pixel input */
    uint32_t pl, pr, pt, pb;
    uint32_t pad_value;              /* CSC D_ZERO_PADDING_VALUE */
    uint32_t cdma_pad;               /* CDMA D_ZERO_PADDING_VALUE (pixel left/right) */
    uint32_t ow, oh;
    uint32_t trunc;
    int bias_en;
    int32_t bias;
    int32_t sdp_offset;              /* SDP D_CVT_OFFSET */
    uint32_t sdp_scale, sdp_shift;   /* SDP D_CVT_SCALE (0 means 1), D_CVT_SHIFT */
    int data_reuse, weight_reuse, skip_data_rls, skip_weight_rls;
    uint32_t rls;                    /* slices released at the end */
    /* pixel input */
    const struct tfmt *fmt;
    uint32_t x_off;
    int cvt_en, mean_en, sign;
    int32_t cvt_off, cvt_scale, mean[4];
    uint32_t cvt_trunc;
    uint32_t post_ext;               /* D_POST_Y_EXTENSION field */
    /* memory and CBUF */
    uint32_t line_stride, surf_stride, uv_stride, out_line, out_surf;
    int packed_1x1;                  /* 1x1 cube with SURF_PACKED: D_SURF_STRIDE is not used */
    uint32_t extra_entries;          /* pixel input: ENTRY_PER_SLICE beyond the line */
    uint32_t entries, data_bank, weight_bank, wt_bytes;
    /* batches (nv_large) */
    uint32_t batches;                /* D_BATCH_NUMBER + 1; 0 counts as 1 */
    uint32_t batch_stride;           /* CDMA D_BATCH_STRIDE */
    uint32_t out_batch;              /* SDP D_DST_BATCH_STRIDE */
    /* SDP BS ALU operand: register (bias), or one byte from memory (BRDMA) */
    enum { OP_REG = 0, OP_PER_ELEMENT = 1, OP_PER_KERNEL = 2 } op_mode;
    uint32_t op_line, op_surf;       /* per element: the operand cube's strides */
    int8_t *op;                      /* per element [k][oy][ox], per kernel [k] */
    /* contents */
    int8_t *in;                      /* feature: [b][c][y][x] */
    uint8_t *img0, *img1;            /* pixel planes as in memory, h lines */
    int8_t *wt;                      /* feature: [k][c][ky][kx]; pixel: [k][r][j] */
};

static uint32_t nbatch(const struct conv *L)
{
    return L->batches ? L->batches : 1;
}

static void conv_free(struct conv *L)
{
    free(L->op);
    free(L->in);
    free(L->img0);
    free(L->img1);
    free(L->wt);
    memset(L, 0, sizeof(*L));
}

/* Channels of the kernel as CSC counts them. */
static uint32_t kernel_c(const struct conv *L)
{
    return L->pixel ? L->kw * L->c : L->c;
}

static uint32_t bytes_per_kernel(const struct conv *L)
{
    return L->pixel ? kernel_c(L) * L->kh : L->kw * L->kh * L->c;
}

/* CBUF entries of one slice (cmod/cdma *ResponseSequencerCommon). */
static uint32_t entries_of(const struct tdev *t, const struct conv *L)
{
    if (L->pixel) {
        return div_up(round_up((L->pl + L->w + L->pr) * L->c, t->m), t->bw);
    }
    uint32_t apc = t->bw / t->m;
    uint32_t atoms = div_up(L->c, t->m);
    uint32_t full = atoms / apc, rest = atoms % apc;
    uint32_t e = full * L->w;
    if (rest == 0) {
        return e;
    }
    if (2 * rest > apc) {
        return e + L->w;
    }
    if (4 * rest > apc) {
        return e + div_up(L->w, 2);
    }
    return e + div_up(L->w, 4);
}

/* Banks for data and weights; 0 when the layer does not fit CBUF. */
static int plan_banks(const struct tdev *t, struct conv *L)
{
    uint64_t bank_bytes = (uint64_t)t->bw * t->depth;
    L->entries = entries_of(t, L) + L->extra_entries;
    L->data_bank = div_up(L->h * nbatch(L) * L->entries, t->depth);
    L->wt_bytes = round_up(bytes_per_kernel(L) * L->k, 128);
    uint64_t group = (uint64_t)(L->k < t->ak ? L->k : t->ak) * bytes_per_kernel(L);
    uint64_t kept = L->skip_weight_rls ? L->wt_bytes : group;
    L->weight_bank = (uint32_t)((kept + bank_bytes - 1) / bank_bytes);
    if (L->data_bank == 0) {
        L->data_bank = 1;
    }
    if (L->weight_bank == 0) {
        L->weight_bank = 1;
    }
    if (L->data_bank + L->weight_bank > t->banks) {
        return 0;
    }
    uint32_t spare = t->banks - L->data_bank - L->weight_bank;
    L->weight_bank += rnd(0, spare);
    return 1;
}

/* Weight byte offset of (k, channel j, row r, column x) in memory. */
static size_t wt_offset(const struct tdev *t, const struct conv *L, uint32_t k, uint32_t j,
                        uint32_t r, uint32_t x)
{
    uint32_t kc = kernel_c(L), kw = L->pixel ? 1 : L->kw;
    uint32_t npos = kw * L->kh;
    uint32_t g = k / t->ak, kpg = L->k - g * t->ak < t->ak ? L->k - g * t->ak : t->ak;
    size_t base = (size_t)g * t->ak * npos * kc;
    if (L->pixel && L->post_ext) {
        uint32_t ext = 1u << L->post_ext;
        uint32_t s = r / ext, last = div_up(L->kh, ext) - 1;
        uint32_t rows = (s == last && L->kh % ext) ? L->kh % ext : ext;
        return base + (size_t)s * kc * ext * kpg + (size_t)(k % t->ak) * kc * rows +
               (size_t)(r % ext) * kc + j;
    }
    uint32_t b = j / t->ac, cb = kc - b * t->ac < t->ac ? kc - b * t->ac : t->ac;
    uint32_t pos = r * kw + x;
    return base + (size_t)b * t->ac * npos * kpg + (size_t)pos * cb * kpg +
           (size_t)(k % t->ak) * cb + j % t->ac;
}

static void write_weights(struct tdev *t, const struct conv *L)
{
    uint8_t *buf = calloc(1, L->wt_bytes);
    assert_non_null(buf);
    uint32_t kc = kernel_c(L);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t r = 0; r < L->kh; r++) {
            if (L->pixel) {
                for (uint32_t j = 0; j < kc; j++) {
                    buf[wt_offset(t, L, k, j, r, 0)] =
                        (uint8_t)L->wt[((size_t)k * L->kh + r) * kc + j];
                }
                continue;
            }
            for (uint32_t c = 0; c < L->c; c++) {
                for (uint32_t x = 0; x < L->kw; x++) {
                    buf[wt_offset(t, L, k, c, r, x)] =
                        (uint8_t)L->wt[(((size_t)k * L->c + c) * L->kh + r) * L->kw + x];
                }
            }
        }
    }
    mem_wr(t, WT_ADDR, buf, L->wt_bytes);
    free(buf);
}

/* Batch b at b * D_BATCH_STRIDE, each laid out as one cube. */
static void write_feature(struct tdev *t, const struct conv *L)
{
    uint32_t surfaces = div_up(L->c, t->m);
    size_t n = (size_t)(nbatch(L) - 1) * L->batch_stride + (size_t)surfaces * L->surf_stride;
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    fill_random(buf, n); /* gaps and padding channels hold garbage */
    for (uint32_t b = 0; b < nbatch(L); b++) {
        for (uint32_t c = 0; c < L->c; c++) {
            for (uint32_t y = 0; y < L->fetch_h; y++) {
                for (uint32_t x = 0; x < L->w; x++) {
                    size_t at = (size_t)b * L->batch_stride + (size_t)(c / t->m) * L->surf_stride +
                                (size_t)y * L->line_stride + (size_t)x * t->m + c % t->m;
                    buf[at] = (uint8_t)L->in[(((size_t)b * L->c + c) * L->fetch_h + y) * L->w + x];
                }
            }
        }
    }
    mem_wr(t, IN_ADDR, buf, n);
    free(buf);
}

/* ---- reference -------------------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* CACC: the 50-bit {sum, 16'b0} shifted right, guide + 15 sticky bits. */
static int32_t ref_cacc(int64_t v, unsigned t, unsigned *sat)
{
    int64_t q = floor_div(v * 65536, (int64_t)1 << t);
    int64_t top = floor_div(q, 65536);
    unsigned low = (unsigned)(q - top * 65536);
    int guide = (low >> 15) & 1, sticky = (low & 0x7fff) != 0;
    int64_t r = top + (guide && (v >= 0 || sticky));
    if (v < 0 && top < INT32_MIN) {
        (*sat)++;
        return INT32_MIN;
    }
    if (v >= 0 && r > INT32_MAX) {
        (*sat)++;
        return INT32_MAX;
    }
    return (int32_t)r;
}

static int8_t sat8(int64_t v)
{
    return (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
}

static int8_t cvt_ref(const struct conv *L, uint8_t b, unsigned e)
{
    if (!L->cvt_en) {
        return (int8_t)b;
    }
    int64_t x = L->sign ? (int8_t)b : b;
    int64_t v = (x - (L->mean_en ? L->mean[e] : L->cvt_off)) * L->cvt_scale;
    if (L->cvt_trunc) {
        int64_t half = (int64_t)1 << (L->cvt_trunc - 1);
        int64_t mag = v < 0 ? -v : v;
        mag = (mag + half) >> L->cvt_trunc;
        v = v < 0 ? -mag : mag;
    }
    return sat8(v);
}

/* Element e of pixel p (0 = first pixel after the left padding) of line y. */
static int8_t pixel_elem(const struct tdev *t, const struct conv *L, uint32_t y, uint32_t p,
                         unsigned e)
{
    const struct tfmt *f = L->fmt;
    char comp = component_of(f, e);
    uint8_t b;
    if (!f->semi) {
        b = L->img0[(size_t)y * L->line_stride + (size_t)(L->x_off + p) * fmt_bpp0(f) +
                    packed_byte(f, e)];
    } else if (comp == 'Y') {
        b = L->img0[(size_t)y * L->line_stride + L->x_off + p];
    } else {
        size_t first = (L->x_off * 2) % t->m;
        b = L->img1[(size_t)y * L->uv_stride + first + (size_t)p * 2 + byte_of(f->uv, comp)];
    }
    return cvt_ref(L, b, e);
}

/* Input value seen by the MACs at padded coordinates. */
static int8_t ref_input(const struct tdev *t, const struct conv *L, uint32_t b, int64_t y,
                        int64_t x, uint32_t c)
{
    int8_t pad = (int8_t)(L->pad_value & 0xff);
    if (L->pixel) {
        if (y < 0 || y >= L->h) {
            return pad;
        }
        if (x < (int64_t)L->pl || x >= (int64_t)(L->pl + L->w)) {
            return (int8_t)(L->cdma_pad & 0xff); /* CDMA's left/right padding */
        }
        return pixel_elem(t, L, (uint32_t)y, (uint32_t)(x - L->pl), c);
    }
    y -= L->pt;
    x -= L->pl;
    if (y < 0 || y >= L->h || x < 0 || x >= L->w) {
        return pad;
    }
    int8_t v = L->in[(((size_t)b * L->c + c) * L->h + (size_t)y) * L->w + (size_t)x];
    return cvt_ref(L, (uint8_t)v, 0); /* feature data: signed, CVT_OFFSET */
}

/* CACC's partial sum: 34-bit signed, saturating. */
static int64_t acc34(int64_t partial, int64_t step)
{
    const int64_t lim = (int64_t)1 << 33;
    int64_t s = partial + step;
    return s >= lim ? lim - 1 : (s < -lim ? -lim : s);
}

/*
 * The accumulator of one output element, one atomic operation at a time in
 * the order CSC issues them: Atomic-C channel blocks outer, kernel positions
 * (rows for pixel input, 2 or 4 rows with post-extension) inner.
 */
static int64_t ref_sum(const struct tdev *t, const struct conv *L, uint32_t b, uint32_t k,
                       uint32_t oy, uint32_t ox)
{
    int64_t s = 0;
    if (L->pixel) {
        uint32_t kc = kernel_c(L), rows = 1u << L->post_ext;
        for (uint32_t j0 = 0; j0 < kc; j0 += t->ac) {
            for (uint32_t r0 = 0; r0 < L->kh; r0 += rows) {
                int64_t step = 0;
                for (uint32_t r = r0; r < r0 + rows && r < L->kh; r++) {
                    int64_t y = (int64_t)oy * L->sy + r - L->pt;
                    for (uint32_t j = j0; j < j0 + t->ac && j < kc; j++) {
                        int64_t x = (int64_t)ox * L->sx + j / L->c;
                        int8_t w = L->wt[((size_t)k * L->kh + r) * kc + j];
                        step += (int64_t)ref_input(t, L, b, y, x, j % L->c) * w;
                    }
                }
                s = acc34(s, step);
            }
        }
        return s;
    }
    for (uint32_t c0 = 0; c0 < L->c; c0 += t->ac) {
        for (uint32_t r = 0; r < L->kh; r++) {
            for (uint32_t x = 0; x < L->kw; x++) {
                int64_t iy = (int64_t)oy * L->sy + (int64_t)r * L->dy;
                int64_t ix = (int64_t)ox * L->sx + (int64_t)x * L->dx;
                int64_t step = 0;
                for (uint32_t c = c0; c < c0 + t->ac && c < L->c; c++) {
                    int8_t w = L->wt[(((size_t)k * L->c + c) * L->kh + r) * L->kw + x];
                    step += (int64_t)ref_input(t, L, b, iy, ix, c) * w;
                }
                s = acc34(s, step);
            }
        }
    }
    return s;
}

/* The BS ALU operand of output (k, y, x): the same for every batch (vmod
 * NV_NVDLA_SDP_RDMA_EG_ro.v replays each operand for all batches; the
 * D_*_BATCH_STRIDE registers of SDP_RDMA feed nothing). */
static int32_t ref_bias(const struct conv *L, uint32_t k, uint32_t y, uint32_t x)
{
    switch (L->op_mode) {
    case OP_PER_ELEMENT:
        return L->op[((size_t)k * L->oh + y) * L->ow + x];
    case OP_PER_KERNEL:
        return L->op[k];
    default:
        return L->bias_en ? L->bias : 0;
    }
}

/* SDP: optional bias, then (x - offset) * scale, rounded shift, int8. */
static int8_t ref_sdp(const struct conv *L, int32_t cacc, int32_t bias)
{
    int64_t v = (int64_t)cacc + bias - L->sdp_offset;
    v *= L->sdp_scale ? L->sdp_scale : 1;
    if (L->sdp_shift) {
        int64_t mag = v < 0 ? -v : v;
        mag = (mag + ((int64_t)1 << (L->sdp_shift - 1))) >> L->sdp_shift;
        v = v < 0 ? -mag : mag;
    }
    return sat8(v);
}

/* ---- programming ------------------------------------------------------------------ */

#define F(UNIT, REG, FIELD, v) NVDLA_##UNIT##_##REG##_0_##FIELD(v)

static void set_pointers(struct tdev *t)
{
    uint32_t p = t->group;
    wr(t, NVDLA_CDMA_S_POINTER_0, p);
    wr(t, NVDLA_CSC_S_POINTER_0, p);
    wr(t, NVDLA_CMAC_A_S_POINTER_0, p);
    wr(t, NVDLA_CMAC_B_S_POINTER_0, p);
    wr(t, NVDLA_CACC_S_POINTER_0, p);
    wr(t, NVDLA_SDP_S_POINTER_0, p);
}

static uint32_t misc_flags(const struct conv *L)
{
    return F(CDMA, D_MISC_CFG, DATA_REUSE, L->data_reuse) |
           F(CDMA, D_MISC_CFG, WEIGHT_REUSE, L->weight_reuse) |
           F(CDMA, D_MISC_CFG, SKIP_DATA_RLS, L->skip_data_rls) |
           F(CDMA, D_MISC_CFG, SKIP_WEIGHT_RLS, L->skip_weight_rls);
}

static void program_cdma(struct tdev *t, const struct conv *L)
{
    wr(t, NVDLA_CDMA_D_MISC_CFG_0, misc_flags(L));
    wr(t, NVDLA_CDMA_D_DATAIN_FORMAT_0,
       F(CDMA, D_DATAIN_FORMAT, DATAIN_FORMAT, L->pixel) |
           F(CDMA, D_DATAIN_FORMAT, PIXEL_FORMAT, L->pixel ? L->fmt->id : 0) |
           F(CDMA, D_DATAIN_FORMAT, PIXEL_SIGN_OVERRIDE, L->pixel ? L->sign : 0));
    wr(t, NVDLA_CDMA_D_DATAIN_SIZE_0_0,
       F(CDMA, D_DATAIN_SIZE_0, DATAIN_WIDTH, L->w - 1) |
           F(CDMA, D_DATAIN_SIZE_0, DATAIN_HEIGHT, L->fetch_h - 1));
    wr(t, NVDLA_CDMA_D_DATAIN_SIZE_1_0, L->c - 1);
    wr(t, NVDLA_CDMA_D_DATAIN_SIZE_EXT_0_0,
       F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, L->w - 1) |
           F(CDMA, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, L->h - 1));
    wr(t, NVDLA_CDMA_D_PIXEL_OFFSET_0, F(CDMA, D_PIXEL_OFFSET, PIXEL_X_OFFSET, L->x_off));
    wr(t, NVDLA_CDMA_D_DAIN_RAM_TYPE_0, NVDLA_CDMA_D_DAIN_RAM_TYPE_0_DATAIN_RAM_TYPE_MCIF);
    wr(t, NVDLA_CDMA_D_DAIN_ADDR_HIGH_0_0, (uint32_t)(IN_ADDR >> 32));
    wr(t, NVDLA_CDMA_D_DAIN_ADDR_LOW_0_0, (uint32_t)IN_ADDR);
    wr(t, NVDLA_CDMA_D_DAIN_ADDR_HIGH_1_0, (uint32_t)(IN1_ADDR >> 32));
    wr(t, NVDLA_CDMA_D_DAIN_ADDR_LOW_1_0, (uint32_t)IN1_ADDR);
    wr(t, NVDLA_CDMA_D_LINE_STRIDE_0, L->line_stride);
    wr(t, NVDLA_CDMA_D_LINE_UV_STRIDE_0, L->uv_stride);
    wr(t, NVDLA_CDMA_D_SURF_STRIDE_0, L->packed_1x1 ? 0x12340 * t->m : L->surf_stride);
    wr(t, NVDLA_CDMA_D_DAIN_MAP_0,
       F(CDMA, D_DAIN_MAP, LINE_PACKED, L->line_stride == L->w * t->m) |
           F(CDMA, D_DAIN_MAP, SURF_PACKED,
             L->packed_1x1 || L->surf_stride == L->w * L->fetch_h * t->m));
    wr(t, NVDLA_CDMA_D_BATCH_NUMBER_0, nbatch(L) - 1);
    wr(t, NVDLA_CDMA_D_BATCH_STRIDE_0, L->batch_stride);
    wr(t, NVDLA_CDMA_D_ENTRY_PER_SLICE_0, L->entries - 1);
    wr(t, NVDLA_CDMA_D_FETCH_GRAIN_0, 0);
    wr(t, NVDLA_CDMA_D_WEIGHT_FORMAT_0, 0);
    wr(t, NVDLA_CDMA_D_WEIGHT_SIZE_0_0, bytes_per_kernel(L) - 1);
    wr(t, NVDLA_CDMA_D_WEIGHT_SIZE_1_0, L->k - 1);
    wr(t, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0, NVDLA_CDMA_D_WEIGHT_RAM_TYPE_0_WEIGHT_RAM_TYPE_MCIF);
    wr(t, NVDLA_CDMA_D_WEIGHT_ADDR_HIGH_0, (uint32_t)(WT_ADDR >> 32));
    wr(t, NVDLA_CDMA_D_WEIGHT_ADDR_LOW_0, (uint32_t)WT_ADDR);
    wr(t, NVDLA_CDMA_D_WEIGHT_BYTES_0, L->wt_bytes);
    wr(t, NVDLA_CDMA_D_MEAN_FORMAT_0, (uint32_t)L->mean_en);
    wr(t, NVDLA_CDMA_D_MEAN_GLOBAL_0_0,
       F(CDMA, D_MEAN_GLOBAL_0, MEAN_RY, (uint32_t)L->mean[0]) |
           F(CDMA, D_MEAN_GLOBAL_0, MEAN_GU, (uint32_t)L->mean[1]));
    wr(t, NVDLA_CDMA_D_MEAN_GLOBAL_1_0,
       F(CDMA, D_MEAN_GLOBAL_1, MEAN_BV, (uint32_t)L->mean[2]) |
           F(CDMA, D_MEAN_GLOBAL_1, MEAN_AX, (uint32_t)L->mean[3]));
    wr(t, NVDLA_CDMA_D_CVT_CFG_0,
       F(CDMA, D_CVT_CFG, CVT_EN, L->cvt_en) | F(CDMA, D_CVT_CFG, CVT_TRUNCATE, L->cvt_trunc));
    wr(t, NVDLA_CDMA_D_CVT_OFFSET_0, (uint32_t)L->cvt_off & 0xffff);
    wr(t, NVDLA_CDMA_D_CVT_SCALE_0, (uint32_t)L->cvt_scale & 0xffff);
    wr(t, NVDLA_CDMA_D_CONV_STRIDE_0,
       F(CDMA, D_CONV_STRIDE, CONV_X_STRIDE, L->sx - 1) |
           F(CDMA, D_CONV_STRIDE, CONV_Y_STRIDE, L->sy - 1));
    wr(t, NVDLA_CDMA_D_ZERO_PADDING_0,
       F(CDMA, D_ZERO_PADDING, PAD_LEFT, L->pl) | F(CDMA, D_ZERO_PADDING, PAD_RIGHT, L->pr) |
           F(CDMA, D_ZERO_PADDING, PAD_TOP, L->pt) | F(CDMA, D_ZERO_PADDING, PAD_BOTTOM, L->pb));
    wr(t, NVDLA_CDMA_D_ZERO_PADDING_VALUE_0, L->cdma_pad);
    wr(t, NVDLA_CDMA_D_BANK_0,
       F(CDMA, D_BANK, DATA_BANK, L->data_bank - 1) |
           F(CDMA, D_BANK, WEIGHT_BANK, L->weight_bank - 1));
}

static void program_csc(struct tdev *t, const struct conv *L)
{
    wr(t, NVDLA_CSC_D_MISC_CFG_0, misc_flags(L));
    wr(t, NVDLA_CSC_D_DATAIN_FORMAT_0, (uint32_t)L->pixel);
    wr(t, NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0,
       F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_WIDTH_EXT, L->w - 1) |
           F(CSC, D_DATAIN_SIZE_EXT_0, DATAIN_HEIGHT_EXT, L->h - 1));
    wr(t, NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0, L->c - 1);
    wr(t, NVDLA_CSC_D_BATCH_NUMBER_0, nbatch(L) - 1);
    wr(t, NVDLA_CSC_D_POST_Y_EXTENSION_0, L->post_ext);
    wr(t, NVDLA_CSC_D_ENTRY_PER_SLICE_0, L->entries - 1);
    wr(t, NVDLA_CSC_D_WEIGHT_FORMAT_0, 0);
    wr(t, NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0,
       F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_WIDTH_EXT, L->pixel ? 0 : L->kw - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_0, WEIGHT_HEIGHT_EXT, L->kh - 1));
    wr(t, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
       F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_CHANNEL_EXT, kernel_c(L) - 1) |
           F(CSC, D_WEIGHT_SIZE_EXT_1, WEIGHT_KERNEL, L->k - 1));
    wr(t, NVDLA_CSC_D_WEIGHT_BYTES_0, L->wt_bytes);
    wr(t, NVDLA_CSC_D_WMB_BYTES_0, 0);
    wr(t, NVDLA_CSC_D_DATAOUT_SIZE_0_0,
       F(CSC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, L->ow - 1) |
           F(CSC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, L->oh - 1));
    wr(t, NVDLA_CSC_D_DATAOUT_SIZE_1_0, L->k - 1);
    wr(t, NVDLA_CSC_D_ATOMICS_0, L->ow * L->oh - 1);
    wr(t, NVDLA_CSC_D_RELEASE_0, L->rls - 1);
    wr(t, NVDLA_CSC_D_CONV_STRIDE_EXT_0,
       F(CSC, D_CONV_STRIDE_EXT, CONV_X_STRIDE_EXT, L->sx - 1) |
           F(CSC, D_CONV_STRIDE_EXT, CONV_Y_STRIDE_EXT, L->sy - 1));
    wr(t, NVDLA_CSC_D_DILATION_EXT_0,
       F(CSC, D_DILATION_EXT, X_DILATION_EXT, L->dx - 1) |
           F(CSC, D_DILATION_EXT, Y_DILATION_EXT, L->dy - 1));
    wr(t, NVDLA_CSC_D_ZERO_PADDING_0,
       F(CSC, D_ZERO_PADDING, PAD_LEFT, L->pixel ? 0 : L->pl) |
           F(CSC, D_ZERO_PADDING, PAD_TOP, L->pt));
    wr(t, NVDLA_CSC_D_ZERO_PADDING_VALUE_0, L->pad_value);
    wr(t, NVDLA_CSC_D_BANK_0,
       F(CSC, D_BANK, DATA_BANK, L->data_bank - 1) |
           F(CSC, D_BANK, WEIGHT_BANK, L->weight_bank - 1));
    wr(t, NVDLA_CSC_D_PRA_CFG_0, 0);
}

static void program_rest(struct tdev *t, const struct conv *L)
{
    wr(t, NVDLA_CMAC_A_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CMAC_B_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CACC_D_MISC_CFG_0, 0);
    wr(t, NVDLA_CACC_D_DATAOUT_SIZE_0_0,
       F(CACC, D_DATAOUT_SIZE_0, DATAOUT_WIDTH, L->ow - 1) |
           F(CACC, D_DATAOUT_SIZE_0, DATAOUT_HEIGHT, L->oh - 1));
    wr(t, NVDLA_CACC_D_DATAOUT_SIZE_1_0, L->k - 1);
    wr(t, NVDLA_CACC_D_BATCH_NUMBER_0, nbatch(L) - 1);
    wr(t, NVDLA_CACC_D_CLIP_CFG_0, L->trunc);

    wr(t, NVDLA_SDP_D_DATA_CUBE_WIDTH_0, L->ow - 1);
    wr(t, NVDLA_SDP_D_DATA_CUBE_HEIGHT_0, L->oh - 1);
    wr(t, NVDLA_SDP_D_DATA_CUBE_CHANNEL_0, L->k - 1);
    wr(t, NVDLA_SDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(OUT_ADDR >> 32));
    wr(t, NVDLA_SDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)OUT_ADDR);
    wr(t, NVDLA_SDP_D_DST_LINE_STRIDE_0, L->out_line);
    wr(t, NVDLA_SDP_D_DST_SURFACE_STRIDE_0, L->out_surf);
    if (L->bias_en || L->op_mode != OP_REG) {
        wr(t, NVDLA_SDP_D_DP_BS_CFG_0,
           F(SDP, D_DP_BS_CFG, BS_ALU_ALGO, NVDLA_SDP_D_DP_BS_CFG_0_BS_ALU_ALGO_SUM) |
               F(SDP, D_DP_BS_CFG, BS_MUL_BYPASS, 1) | F(SDP, D_DP_BS_CFG, BS_RELU_BYPASS, 1));
        wr(t, NVDLA_SDP_D_DP_BS_ALU_CFG_0,
           F(SDP, D_DP_BS_ALU_CFG, BS_ALU_SRC, L->op_mode != OP_REG));
        wr(t, NVDLA_SDP_D_DP_BS_ALU_SRC_VALUE_0, (uint32_t)L->bias & 0xffff);
    } else {
        wr(t, NVDLA_SDP_D_DP_BS_CFG_0, 0x53);
    }
    wr(t, NVDLA_SDP_D_DP_BN_CFG_0, 0x53);
    wr(t, NVDLA_SDP_D_DP_EW_CFG_0, 0x53);
    wr(t, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
           F(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, nbatch(L) - 1));
    wr(t, NVDLA_SDP_D_DST_BATCH_STRIDE_0, L->out_batch);
    wr(t, NVDLA_SDP_D_DST_DMA_CFG_0, NVDLA_SDP_D_DST_DMA_CFG_0_DST_RAM_TYPE_MC);
    wr(t, NVDLA_SDP_D_DATA_FORMAT_0, 0);
    wr(t, NVDLA_SDP_D_CVT_OFFSET_0, (uint32_t)L->sdp_offset);
    wr(t, NVDLA_SDP_D_CVT_SCALE_0, L->sdp_scale ? L->sdp_scale : 1);
    wr(t, NVDLA_SDP_D_CVT_SHIFT_0, L->sdp_shift);
}

/* SDP_RDMA fetches the BS operand from memory (BRDMA, one byte, ALU); its
 * registers go to its own next group: it only moves on in layers using it. */
static void program_sdp_rdma(struct tdev *t, const struct conv *L)
{
    const uint32_t mode = L->op_mode == OP_PER_ELEMENT
                              ? NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_ELEMENT
                              : NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_MODE_PER_KERNEL;
    uint32_t ptr = 0;
    assert_int_equal(dlasim_csb_read(t->dev, NVDLA_SDP_RDMA_S_POINTER_0, &ptr), 0);
    wr(t, NVDLA_SDP_RDMA_S_POINTER_0, (ptr >> 16) & 1u); /* its CONSUMER */
    wr(t, NVDLA_SDP_RDMA_D_DATA_CUBE_WIDTH_0, L->ow - 1);
    wr(t, NVDLA_SDP_RDMA_D_DATA_CUBE_HEIGHT_0, L->oh - 1);
    wr(t, NVDLA_SDP_RDMA_D_DATA_CUBE_CHANNEL_0, L->k - 1);
    wr(t, NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
       F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE,
         NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
           F(SDP_RDMA, D_FEATURE_MODE_CFG, BATCH_NUMBER, nbatch(L) - 1));
    wr(t, NVDLA_SDP_RDMA_D_BRDMA_CFG_0,
       F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_USE, NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_USE_ALU) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_SIZE,
             NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_DATA_SIZE_ONE_BYTE) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_DATA_MODE, mode) |
           F(SDP_RDMA, D_BRDMA_CFG, BRDMA_RAM_TYPE,
             NVDLA_SDP_RDMA_D_BRDMA_CFG_0_BRDMA_RAM_TYPE_MC));
    wr(t, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_HIGH_0, (uint32_t)(OP_ADDR >> 32));
    wr(t, NVDLA_SDP_RDMA_D_BS_BASE_ADDR_LOW_0, (uint32_t)OP_ADDR);
    wr(t, NVDLA_SDP_RDMA_D_BS_LINE_STRIDE_0, L->op_line);
    wr(t, NVDLA_SDP_RDMA_D_BS_SURFACE_STRIDE_0, L->op_surf);
    /* per-batch operand strides exist as registers but feed nothing */
    wr(t, NVDLA_SDP_RDMA_D_BS_BATCH_STRIDE_0, 0x12345 * t->m);
    wr(t, NVDLA_SDP_RDMA_D_NRDMA_CFG_0, F(SDP_RDMA, D_NRDMA_CFG, NRDMA_DISABLE, 1));
    wr(t, NVDLA_SDP_RDMA_D_ERDMA_CFG_0, F(SDP_RDMA, D_ERDMA_CFG, ERDMA_DISABLE, 1));
}

/* The BS operand in memory: per kernel one byte per channel; per element a
 * cube of bytes laid out like the output. */
static void write_operand(struct tdev *t, const struct conv *L)
{
    if (L->op_mode == OP_PER_KERNEL) {
        mem_wr(t, OP_ADDR, L->op, L->k);
        return;
    }
    size_t n = (size_t)div_up(L->k, t->m) * L->op_surf;
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    fill_random(buf, n);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t y = 0; y < L->oh; y++) {
            for (uint32_t x = 0; x < L->ow; x++) {
                buf[(size_t)(k / t->m) * L->op_surf + (size_t)y * L->op_line + (size_t)x * t->m +
                    k % t->m] = (uint8_t)L->op[((size_t)k * L->oh + y) * L->ow + x];
            }
        }
    }
    mem_wr(t, OP_ADDR, buf, n);
    free(buf);
}

/* Program the layer in the next register group, apply `n` register
 * overrides and run it. */
static int run_layer_with(struct tdev *t, const struct conv *L, const uint32_t *addr,
                          const uint32_t *val, unsigned n)
{
    set_pointers(t);
    program_rest(t, L);
    program_csc(t, L);
    program_cdma(t, L);
    if (L->op_mode != OP_REG) {
        program_sdp_rdma(t, L);
    }
    for (unsigned i = 0; i < n; i++) {
        wr(t, addr[i], val[i]);
    }
    if (L->op_mode != OP_REG) {
        wr(t, NVDLA_SDP_RDMA_D_OP_ENABLE_0, 1); /* SDP waits for its operands */
    }
    wr(t, NVDLA_SDP_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CACC_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CMAC_A_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CMAC_B_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CSC_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CDMA_D_OP_ENABLE_0, 1);
    int rc = dlasim_run(t->dev);
    t->group ^= 1;
    return rc;
}

static int run_layer(struct tdev *t, const struct conv *L)
{
    return run_layer_with(t, L, NULL, NULL, 0);
}

/* Run the layer and compare the int8 output with the reference. */
static void check_layer(struct tdev *t, const struct conv *L, const char *what)
{
    int rc = run_layer(t, L);
    if (rc) {
        fail_msg("%s: dlasim_run = %s: %s", what, dlasim_status_name(rc),
                 dlasim_last_error(t->dev));
    }
    size_t n = (size_t)(nbatch(L) - 1) * L->out_batch + (size_t)div_up(L->k, t->m) * L->out_surf;
    uint8_t *out = malloc(n);
    assert_non_null(out);
    mem_rd(t, OUT_ADDR, out, n);
    unsigned sat = 0;
    for (uint32_t b = 0; b < nbatch(L); b++) {
        for (uint32_t k = 0; k < L->k; k++) {
            for (uint32_t y = 0; y < L->oh; y++) {
                for (uint32_t x = 0; x < L->ow; x++) {
                    int64_t v = ref_cacc(ref_sum(t, L, b, k, y, x), L->trunc, &sat);
                    int8_t want = ref_sdp(L, v, ref_bias(L, k, y, x));
                    size_t at = (size_t)b * L->out_batch + (size_t)(k / t->m) * L->out_surf +
                                (size_t)y * L->out_line + (size_t)x * t->m + k % t->m;
                    if ((int8_t)out[at] != want) {
                        fail_msg("%s: out[b=%u][k=%u][y=%u][x=%u] = %d, reference %d (cacc "
                                 "%lld); stride %u,%u dilation %u,%u pad %u,%u,%u,%u out %ux%u "
                                 "truncate %u",
                                 what, b, k, y, x, (int8_t)out[at], want, (long long)v, L->sx,
                                 L->sy, L->dx, L->dy, L->pl, L->pr, L->pt, L->pb, L->ow, L->oh,
                                 L->trunc);
                    }
                }
            }
        }
    }
    /* the layer ran in the group before the current producer */
    uint32_t hw_sat = 0;
    wr(t, NVDLA_CACC_S_POINTER_0, t->group ^ 1);
    assert_int_equal(dlasim_csb_read(t->dev, NVDLA_CACC_D_OUT_SATURATION_0, &hw_sat), 0);
    assert_int_equal(hw_sat, sat);
    free(out);
}

/* ---- random layers --------------------------------------------------------------------- */

static void finish_layer(struct tdev *t, struct conv *L)
{
    L->out_line = L->ow * t->m + rnd(0, 2) * t->m;
    L->out_surf = L->out_line * L->oh + rnd(0, 2) * t->m;
    if (L->ow == 1 && L->oh == 1) {
        /* SDP writes a 1x1 cube as consecutive atoms (the driver programs
         * it packed: kmd firmware conv.c) */
        L->out_line = L->out_surf = t->m;
    }
    L->rls = rnd(1, L->h);
    /* keep the CACC output mostly in int8 range: truncate by about the sum's size */
    uint32_t terms = bytes_per_kernel(L);
    uint32_t bits = 0;
    while ((1u << bits) < terms) {
        bits++;
    }
    L->trunc = rnd(4 + bits / 2, 9 + bits / 2);
    if (rnd(0, 4) == 0) {
        L->trunc = rnd(0, 31);
    }
    L->bias_en = (int)rnd(0, 1);
    L->bias = rnd_s(-200, 200);
    L->wt = malloc((size_t)L->k * bytes_per_kernel(L));
    assert_non_null(L->wt);
    fill_random(L->wt, (size_t)L->k * bytes_per_kernel(L));
}

/* A random direct-convolution layer that fits CBUF. */
static void random_feature_layer(struct tdev *t, struct conv *L, uint32_t max_c,
                                 uint32_t batches)
{
    for (;;) {
        memset(L, 0, sizeof(*L));
        L->batches = batches;
        L->w = rnd(0, 5) ? rnd(1, 12) : 1;
        L->h = L->w == 1 && rnd(0, 1) ? 1 : rnd(1, 10);
        L->c = rnd(1, max_c);
        L->k = rnd(1, 20);
        L->kw = rnd(1, 5);
        L->kh = rnd(1, 5);
        L->sx = rnd(1, 3);
        L->sy = rnd(1, 3);
        L->dx = rnd(1, 3);
        L->dy = rnd(1, 3);
        L->pl = rnd(0, 3);
        L->pr = rnd(0, 3);
        L->pt = rnd(0, 3);
        L->pb = rnd(0, 3);
        L->skip_weight_rls = (int)rnd(0, 1);
        L->skip_data_rls = (int)rnd(0, 1);
        int64_t ew = (int64_t)(L->kw - 1) * L->dx + 1, eh = (int64_t)(L->kh - 1) * L->dy + 1;
        int64_t span_w = (int64_t)L->pl + L->w + L->pr - ew;
        int64_t span_h = (int64_t)L->pt + L->h + L->pb - eh;
        if (span_w < 0 || span_h < 0) {
            continue;
        }
        L->ow = (uint32_t)(span_w / L->sx + 1);
        L->oh = (uint32_t)(span_h / L->sy + 1);
        if (!plan_banks(t, L)) {
            continue;
        }
        break;
    }
    L->fetch_h = L->h;
    L->pad_value = rnd(0, 0xffff);
    L->cdma_pad = rnd(0, 0xffff);
    L->line_stride = L->w * t->m + rnd(0, 3) * t->m;
    L->surf_stride = L->line_stride * L->h + rnd(0, 3) * t->m;
    if (rnd(0, 3) == 0) {
        L->line_stride = L->w * t->m;
        L->surf_stride = L->line_stride * L->h;
    }
    if (L->w == 1 && L->h == 1 && rnd(0, 1)) {
        /* a packed 1x1 cube is read as consecutive atoms (vmod
         * NV_NVDLA_CDMA_dc.v is_packed_1x1), whatever D_SURF_STRIDE says */
        L->packed_1x1 = 1;
        L->surf_stride = t->m;
    }
    L->in = malloc((size_t)nbatch(L) * L->c * L->h * L->w);
    assert_non_null(L->in);
    fill_random(L->in, (size_t)nbatch(L) * L->c * L->h * L->w);
    if (rnd(0, 3) == 0) {
        /* the input converter on feature data: signed input, D_CVT_OFFSET */
        L->cvt_en = 1;
        L->sign = 1;
        L->cvt_off = rnd_s(-300, 300);
        L->cvt_scale = rnd_s(-600, 600);
        L->cvt_trunc = rnd(0, 10);
    }
    finish_layer(t, L);
}

/* The input converter of a pixel layer: random, off, on with D_CVT_OFFSET,
 * or on with the per-channel means. */
enum cvt_mode { CVT_RANDOM, CVT_OFF, CVT_OFFSET, CVT_MEAN };

/* A random pixel-input layer that fits CBUF, in format f (NULL: random). */
static void random_pixel_layer(struct tdev *t, struct conv *L, const struct tfmt *f,
                               enum cvt_mode cvt)
{
    for (;;) {
        memset(L, 0, sizeof(*L));
        L->pixel = 1;
        L->fmt = f ? f : &fmts[rnd(0, N_FMTS - 1)];
        L->c = fmt_elems(L->fmt);
        L->w = rnd(1, 24);
        L->h = rnd(1, 10);
        L->k = rnd(1, 12);
        L->kw = rnd(1, 4);
        L->kh = rnd(1, 5);
        L->sx = rnd(1, 3);
        L->sy = rnd(1, 3);
        L->dx = L->dy = 1;
        L->pl = rnd(0, 3);
        L->pr = rnd(0, 3);
        L->pt = rnd(0, 2);
        L->pb = rnd(0, 2);
        L->x_off = rnd(0, t->m / fmt_bpp0(L->fmt) - 1);
        L->extra_entries = rnd(0, 3) ? 0 : rnd(1, 2);
        L->skip_weight_rls = (int)rnd(0, 1);
        if (L->pl + L->w + L->pr < L->kw || L->pt + L->h + L->pb < L->kh) {
            continue;
        }
        L->ow = (L->pl + L->w + L->pr - L->kw) / L->sx + 1;
        L->oh = (L->pt + L->h + L->pb - L->kh) / L->sy + 1;
        uint32_t kc = L->kw * L->c;
        L->post_ext = 0;
        if (kc <= t->ac / 4 && rnd(0, 2) == 0) {
            L->post_ext = 2;
        } else if (kc <= t->ac / 2 && rnd(0, 1)) {
            L->post_ext = 1;
        }
        if (!plan_banks(t, L)) {
            continue;
        }
        break;
    }
    L->fetch_h = L->h;
    L->pad_value = rnd(0, 0xffff);
    L->cdma_pad = rnd(0, 0xffff);
    L->cvt_en = cvt == CVT_RANDOM ? (int)rnd(0, 1) : cvt != CVT_OFF;
    L->mean_en = cvt == CVT_RANDOM ? (int)rnd(0, 1) : cvt == CVT_MEAN;
    L->sign = (int)rnd(0, 1);
    L->cvt_off = rnd_s(-300, 300);
    L->cvt_scale = rnd_s(-600, 600);
    L->cvt_trunc = rnd(0, 10);
    for (int i = 0; i < 4; i++) {
        L->mean[i] = rnd_s(-300, 300);
    }
    unsigned bpp0 = fmt_bpp0(L->fmt);
    L->line_stride = round_up((L->x_off + L->w) * bpp0, t->m) + rnd(0, 2) * t->m;
    L->img0 = malloc((size_t)L->line_stride * L->h);
    assert_non_null(L->img0);
    fill_random(L->img0, (size_t)L->line_stride * L->h);
    mem_wr(t, IN_ADDR, L->img0, (size_t)L->line_stride * L->h);
    if (L->fmt->semi) {
        L->uv_stride = round_up((L->x_off * 2) % t->m + L->w * 2, t->m) + rnd(0, 2) * t->m;
        L->img1 = malloc((size_t)L->uv_stride * L->h);
        assert_non_null(L->img1);
        fill_random(L->img1, (size_t)L->uv_stride * L->h);
        mem_wr(t, IN1_ADDR, L->img1, (size_t)L->uv_stride * L->h);
    }
    finish_layer(t, L);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void feature_layers(const char *config, uint64_t seed, unsigned n, uint32_t max_c)
{
    struct tdev t;
    char what[96];
    rng_state = seed;
    tdev_open(&t, config, NULL, 0);
    for (unsigned i = 0; i < n; i++) {
        struct conv L;
        random_feature_layer(&t, &L, max_c, 1);
        write_feature(&t, &L);
        write_weights(&t, &L);
        snprintf(what, sizeof(what), "%s feature layer %u (%ux%ux%u k%ux%ux%u)", config, i, L.w,
                 L.h, L.c, L.kw, L.kh, L.k);
        check_layer(&t, &L, what);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

static void pixel_layers(const char *config, uint64_t seed, unsigned n)
{
    struct tdev t;
    char what[128];
    rng_state = seed;
    tdev_open(&t, config, NULL, 0);
    for (unsigned i = 0; i < n; i++) {
        struct conv L;
        random_pixel_layer(&t, &L, NULL, CVT_RANDOM);
        write_weights(&t, &L);
        snprintf(what, sizeof(what), "%s pixel layer %u (fmt %u %ux%u x_off %u k%ux%ux%u ext %u)",
                 config, i, L.fmt->id, L.w, L.h, L.x_off, L.kw, L.kh, L.k, L.post_ext);
        check_layer(&t, &L, what);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

/* ---- fused: CACC -> SDP -> PDP on the fly ------------------------------------------- */

#define POOL_ADDR 0xb0000000ull

struct pool {
    uint32_t k, s;     /* square max-pooling window and stride */
    uint32_t ow, oh;   /* pooled size */
};

/* PDP reads SDP's output on the fly and writes the pooled cube packed. */
static void program_pdp_on_the_fly(struct tdev *t, const struct conv *L, const struct pool *P)
{
    uint32_t line = P->ow * t->m;
    wr(t, NVDLA_PDP_S_POINTER_0, t->group);
    wr(t, NVDLA_PDP_D_DATA_CUBE_IN_WIDTH_0, L->ow - 1);
    wr(t, NVDLA_PDP_D_DATA_CUBE_IN_HEIGHT_0, L->oh - 1);
    wr(t, NVDLA_PDP_D_DATA_CUBE_IN_CHANNEL_0, L->k - 1);
    wr(t, NVDLA_PDP_D_DATA_CUBE_OUT_WIDTH_0, P->ow - 1);
    wr(t, NVDLA_PDP_D_DATA_CUBE_OUT_HEIGHT_0, P->oh - 1);
    wr(t, NVDLA_PDP_D_DATA_CUBE_OUT_CHANNEL_0, L->k - 1);
    wr(t, NVDLA_PDP_D_OPERATION_MODE_CFG_0,
       F(PDP, D_OPERATION_MODE_CFG, POOLING_METHOD,
         NVDLA_PDP_D_OPERATION_MODE_CFG_0_POOLING_METHOD_POOLING_METHOD_MAX) |
           F(PDP, D_OPERATION_MODE_CFG, FLYING_MODE,
             NVDLA_PDP_D_OPERATION_MODE_CFG_0_FLYING_MODE_ON_FLYING));
    wr(t, NVDLA_PDP_D_PARTIAL_WIDTH_IN_0,
       F(PDP, D_PARTIAL_WIDTH_IN, PARTIAL_WIDTH_IN_FIRST, L->ow - 1));
    wr(t, NVDLA_PDP_D_PARTIAL_WIDTH_OUT_0,
       F(PDP, D_PARTIAL_WIDTH_OUT, PARTIAL_WIDTH_OUT_FIRST, P->ow - 1));
    wr(t, NVDLA_PDP_D_POOLING_KERNEL_CFG_0,
       F(PDP, D_POOLING_KERNEL_CFG, KERNEL_WIDTH, P->k - 1) |
           F(PDP, D_POOLING_KERNEL_CFG, KERNEL_HEIGHT, P->k - 1) |
           F(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_WIDTH, P->s - 1) |
           F(PDP, D_POOLING_KERNEL_CFG, KERNEL_STRIDE_HEIGHT, P->s - 1));
    wr(t, NVDLA_PDP_D_POOLING_PADDING_CFG_0, 0);
    wr(t, NVDLA_PDP_D_DST_BASE_ADDR_HIGH_0, (uint32_t)(POOL_ADDR >> 32));
    wr(t, NVDLA_PDP_D_DST_BASE_ADDR_LOW_0, (uint32_t)POOL_ADDR);
    wr(t, NVDLA_PDP_D_DST_LINE_STRIDE_0, line);
    wr(t, NVDLA_PDP_D_DST_SURFACE_STRIDE_0, line * P->oh);
    wr(t, NVDLA_PDP_D_DST_RAM_CFG_0, 1);
    wr(t, NVDLA_PDP_D_DATA_FORMAT_0, 0);
}

/* Convolution, CACC, SDP and max pooling as one hardware layer: the pooled
 * cube must equal max pooling of the reference SDP output. */
static void check_fused_layer(struct tdev *t, const struct conv *L, const struct pool *P,
                              const char *what)
{
    set_pointers(t);
    program_rest(t, L);
    wr(t, NVDLA_SDP_D_FEATURE_MODE_CFG_0,
       F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, NVDLA_SDP_D_FEATURE_MODE_CFG_0_FLYING_MODE_ON) |
           F(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, NVDLA_SDP_D_FEATURE_MODE_CFG_0_OUTPUT_DST_PDP));
    program_pdp_on_the_fly(t, L, P);
    program_csc(t, L);
    program_cdma(t, L);
    wr(t, NVDLA_PDP_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_SDP_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CACC_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CMAC_A_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CMAC_B_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CSC_D_OP_ENABLE_0, 1);
    wr(t, NVDLA_CDMA_D_OP_ENABLE_0, 1);
    int rc = dlasim_run(t->dev);
    t->group ^= 1;
    if (rc) {
        fail_msg("%s: dlasim_run = %s: %s", what, dlasim_status_name(rc),
                 dlasim_last_error(t->dev));
    }
    uint32_t status = 0;
    assert_int_equal(dlasim_csb_read(t->dev, NVDLA_GLB_S_INTR_STATUS_0, &status), 0);
    assert_true(status & (NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS0__MASK |
                          NVDLA_GLB_S_INTR_STATUS_0_PDP_DONE_STATUS1__MASK));
    assert_int_equal(dlasim_csb_write(t->dev, NVDLA_GLB_S_INTR_STATUS_0, status), 0);

    size_t n = (size_t)div_up(L->k, t->m) * P->ow * P->oh * t->m;
    uint8_t *out = malloc(n);
    int8_t *sdp = malloc((size_t)L->k * L->oh * L->ow);
    assert_non_null(out);
    assert_non_null(sdp);
    unsigned sat = 0;
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t y = 0; y < L->oh; y++) {
            for (uint32_t x = 0; x < L->ow; x++) {
                sdp[((size_t)k * L->oh + y) * L->ow + x] =
                    ref_sdp(L, ref_cacc(ref_sum(t, L, 0, k, y, x), L->trunc, &sat),
                            ref_bias(L, k, y, x));
            }
        }
    }
    mem_rd(t, POOL_ADDR, out, n);
    for (uint32_t k = 0; k < L->k; k++) {
        for (uint32_t py = 0; py < P->oh; py++) {
            for (uint32_t px = 0; px < P->ow; px++) {
                int want = -128;
                for (uint32_t dy = 0; dy < P->k; dy++) {
                    for (uint32_t dx = 0; dx < P->k; dx++) {
                        int v = sdp[((size_t)k * L->oh + py * P->s + dy) * L->ow + px * P->s + dx];
                        want = v > want ? v : want;
                    }
                }
                size_t at = (size_t)(k / t->m) * P->ow * P->oh * t->m +
                            ((size_t)py * P->ow + px) * t->m + k % t->m;
                if ((int8_t)out[at] != want) {
                    fail_msg("%s: pooled[k=%u][y=%u][x=%u] = %d, reference %d", what, k, py, px,
                             (int8_t)out[at], want);
                }
            }
        }
    }
    free(sdp);
    free(out);
}

static void fused_layers(const char *config, uint64_t seed, unsigned count)
{
    struct tdev t;
    struct conv L;
    char what[160];
    tdev_open(&t, config, NULL, 0);
    rng_state = seed;
    for (unsigned i = 0; i < count;) {
        random_feature_layer(&t, &L, 40, 1);
        struct pool P;
        P.k = rnd(1, 3);
        P.s = rnd(1, P.k);
        if (L.ow < P.k || L.oh < P.k || L.ow * L.oh == 1) {
            conv_free(&L);
            continue;
        }
        P.ow = (L.ow - P.k) / P.s + 1;
        P.oh = (L.oh - P.k) / P.s + 1;
        write_feature(&t, &L);
        write_weights(&t, &L);
        snprintf(what, sizeof(what), "%s fused layer %u (%ux%ux%u k%ux%u -> %ux%ux%u, pool %u/%u)",
                 config, i, L.w, L.h, L.c, L.kw, L.kh, L.ow, L.oh, L.k, P.k, P.s);
        check_fused_layer(&t, &L, &P, what);
        conv_free(&L);
        i++;
    }
    dlasim_destroy(t.dev);
}

/* ---- batches (nv_large) ---------------------------------------------------------------- */

/*
 * A random batched direct convolution: batch b of the input at D_DAIN_ADDR
 * + b * D_BATCH_STRIDE, the same kernels for every batch, batch b of the
 * output written by SDP at D_DST_BASE_ADDR + b * D_DST_BATCH_STRIDE (kmd
 * firmware conv.c / sdp.c program D_BATCH_NUMBER in CDMA, CSC, CACC, SDP and
 * SDP_RDMA, D_BATCH_STRIDE in CDMA, D_DST_BATCH_STRIDE in SDP); the BS
 * operand, from a register or from memory per element or per kernel, is
 * the same for every batch.
 */
static void random_batch_layer(struct tdev *t, struct conv *L, uint32_t max_batches)
{
    random_feature_layer(t, L, 70, rnd(2, max_batches));
    uint32_t surfaces = div_up(L->c, t->m);
    L->batch_stride = surfaces * L->surf_stride + rnd(0, 3) * t->m;
    L->out_batch = div_up(L->k, t->m) * L->out_surf + rnd(0, 2) * t->m;
    L->op_mode = rnd(0, 2);
    if (L->op_mode == OP_PER_ELEMENT) {
        L->op_line = L->ow * t->m + rnd(0, 1) * t->m;
        L->op_surf = L->op_line * L->oh + rnd(0, 1) * t->m;
        if (L->ow == 1 && L->oh == 1) {
            L->op_line = L->op_surf = t->m; /* a 1x1 cube is read packed */
        }
        L->op = malloc((size_t)L->k * L->oh * L->ow);
        assert_non_null(L->op);
        fill_random(L->op, (size_t)L->k * L->oh * L->ow);
    } else if (L->op_mode == OP_PER_KERNEL) {
        L->op = malloc(L->k);
        assert_non_null(L->op);
        fill_random(L->op, L->k);
    }
}

static void batch_layers(const char *config, uint64_t seed, unsigned n, uint32_t max_batches)
{
    struct tdev t;
    char what[160];
    rng_state = seed;
    tdev_open(&t, config, NULL, 0);
    for (unsigned i = 0; i < n; i++) {
        struct conv L;
        random_batch_layer(&t, &L, max_batches);
        write_feature(&t, &L);
        write_weights(&t, &L);
        if (L.op_mode != OP_REG) {
            write_operand(&t, &L);
        }
        snprintf(what, sizeof(what), "%s batch layer %u (%u x %ux%ux%u k%ux%ux%u, operand %d)",
                 config, i, L.batches, L.w, L.h, L.c, L.kw, L.kh, L.k, (int)L.op_mode);
        check_layer(&t, &L, what);
        conv_free(&L);
    }
    dlasim_destroy(t.dev);
}

static void test_batches_nv_large(void **state)
{
    (void)state;
    batch_layers("nv_large", 0x5eed000du, 40, 6);
    batch_layers("nv_large", 0x5eed000eu, 4, 32); /* up to the maximum batch size */
}

/* A batched layer (with its BS operand from memory when `mem_op`) with one
 * register changed is refused naming `reg`; with `pdp` PDP is enabled for
 * on-the-fly input as well. */
static void expect_batch_refusal(uint32_t addr, uint32_t val, int pdp, int mem_op,
                                 const char *reg)
{
    struct tdev t;
    struct conv L;
    tdev_open(&t, "nv_large", NULL, 0);
    for (;;) {
        random_batch_layer(&t, &L, 4);
        if ((L.op_mode != OP_REG) == mem_op) {
            break;
        }
        conv_free(&L);
    }
    write_feature(&t, &L);
    write_weights(&t, &L);
    if (L.op_mode != OP_REG) {
        write_operand(&t, &L);
    }
    if (pdp) {
        struct pool P = { 1, 1, L.ow, L.oh };
        program_pdp_on_the_fly(&t, &L, &P);
        wr(&t, NVDLA_PDP_D_OP_ENABLE_0, 1);
    }
    int rc = run_layer_with(&t, &L, &addr, &val, 1);
    const char *msg = dlasim_last_error(t.dev);
    if (rc != DLASIM_ERR_PROG || !strstr(msg, reg)) {
        fail_msg("expected DLASIM_ERR_PROG naming %s, got %s: %s", reg, dlasim_status_name(rc),
                 msg);
    }
    conv_free(&L);
    dlasim_destroy(t.dev);
}

static void test_batch_refusals_nv_large(void **state)
{
    (void)state;
    rng_state = 0x5eed000fu;
    /* CSC, CACC or SDP disagreeing with CDMA about the batches */
    expect_batch_refusal(NVDLA_CSC_D_BATCH_NUMBER_0, 0, 0, 0, "CSC: D_BATCH_NUMBER_0.BATCHES");
    expect_batch_refusal(NVDLA_CACC_D_BATCH_NUMBER_0, 0, 0, 0, "CACC: D_BATCH_NUMBER_0.BATCHES");
    expect_batch_refusal(NVDLA_SDP_D_FEATURE_MODE_CFG_0,
                         F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, 1), 0, 0,
                         "SDP: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=0");
    /* SDP_RDMA replays its operands per batch: it must count SDP's batches */
    expect_batch_refusal(NVDLA_SDP_RDMA_D_FEATURE_MODE_CFG_0,
                         F(SDP_RDMA, D_FEATURE_MODE_CFG, FLYING_MODE, 1), 0, 1,
                         "SDP_RDMA: D_FEATURE_MODE_CFG_0.BATCH_NUMBER=0");
    /* PDP on the fly has no batches */
    expect_batch_refusal(NVDLA_SDP_D_FEATURE_MODE_CFG_0,
                         F(SDP, D_FEATURE_MODE_CFG, FLYING_MODE, 1) |
                             F(SDP, D_FEATURE_MODE_CFG, OUTPUT_DST, 1) |
                             F(SDP, D_FEATURE_MODE_CFG, BATCH_NUMBER, 1),
                         1, 0, "OUTPUT_DST=PDP");
    /* pixel input has no batches */
    expect_batch_refusal(NVDLA_CDMA_D_DATAIN_FORMAT_0, F(CDMA, D_DATAIN_FORMAT, DATAIN_FORMAT, 1),
                         0, 0, "pixel input has no batches");
}

static void test_fused_conv_sdp_pdp(void **state)
{
    (void)state;
    fused_layers("nv_small", 0x5eed00f1u, 25);
    fused_layers("nv_small_256", 0x5eed00f2u, 15);
}

static void test_feature_nv_small(void **state)
{
    (void)state;
    feature_layers("nv_small", 0x5eed0001u, 60, 40);
}

static void test_feature_nv_small_256(void **state)
{
    (void)state;
    feature_layers("nv_small_256", 0x5eed0002u, 60, 100);
}

static void test_pixel_nv_small(void **state)
{
    (void)state;
    pixel_layers("nv_small", 0x5eed0003u, 60);
}

static void test_pixel_nv_small_256(void **state)
{
    (void)state;
    pixel_layers("nv_small_256", 0x5eed0004u, 60);
}

/* nv_large: 32-byte atoms, and a ConfigROM with two CIF descriptors before
 * CDMA's (the formats it lists are found by unit, not by address). */
static void test_pixel_nv_large(void **state)
{
    (void)state;
    pixel_layers("nv_large", 0x5eed0010u, 40);
}

/*
 * Every pixel format the configuration's ConfigROM lists (CDMA
 * IMAGE_IN_FORMATS_PACKED: bit i = PIXEL_FORMAT i; _SEMI: bit i =
 * PIXEL_FORMAT 28 + i; spec 004) with the converter off, on with
 * D_CVT_OFFSET and on with the means, each with random geometry.  The ROM
 * words are read at their nv_small register addresses (NVDLA_CFGROM.rdl),
 * which nv_small_256 shares.
 */
static void listed_formats(const char *config, uint64_t seed, unsigned per_mode)
{
    static const enum cvt_mode modes[] = { CVT_OFF, CVT_OFFSET, CVT_MEAN };
    struct tdev t;
    char what[160];
    uint32_t packed = 0, semi = 0;
    unsigned covered = 0;
    rng_state = seed;
    tdev_open(&t, config, NULL, 0);
    assert_int_equal(dlasim_csb_read(t.dev, NVDLA_CFGROM_CFGROM_CDMA_IMAGE_IN_FORMATS_PACKED_0,
                                     &packed), 0);
    assert_int_equal(dlasim_csb_read(t.dev, NVDLA_CFGROM_CFGROM_CDMA_IMAGE_IN_FORMATS_SEMI_0,
                                     &semi), 0);
    for (uint32_t id = 0; id < 64; id++) {
        int listed = id < 28 ? (int)((packed >> id) & 1u) : (id < 60 && ((semi >> (id - 28)) & 1u));
        if (!listed) {
            continue;
        }
        const struct tfmt *f = fmt_by_id(id);
        if (!f) {
            fail_msg("%s: the ConfigROM lists PIXEL_FORMAT %u, which this test does not know",
                     config, id);
        }
        for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
            for (unsigned i = 0; i < per_mode; i++) {
                struct conv L;
                random_pixel_layer(&t, &L, f, modes[m]);
                write_weights(&t, &L);
                snprintf(what, sizeof(what),
                         "%s format %u (%s%s) cvt mode %zu layer %u (%ux%u x_off %u sign %d)",
                         config, id, f->components, f->bits > 8 ? ", 10-bit" : "", m, i, L.w,
                         L.h, L.x_off, L.sign);
                check_layer(&t, &L, what);
                conv_free(&L);
            }
        }
        covered++;
    }
    /* R8, 8 A8B8G8R8-family, 4 10-bit, A8Y8U8V8, V8U8Y8A8, 2 semi-planar */
    assert_int_equal(covered, 17);
    dlasim_destroy(t.dev);
}

static void test_listed_formats_nv_small(void **state)
{
    (void)state;
    listed_formats("nv_small", 0x5eed000bu, 3);
}

static void test_listed_formats_nv_small_256(void **state)
{
    (void)state;
    listed_formats("nv_small_256", 0x5eed000cu, 3);
}

/*
 * Weight and full data reuse: layer A keeps its data and weights
 * (SKIP_*_RLS); memory is then overwritten; layer B with DATA_REUSE and
 * WEIGHT_REUSE must compute on what CBUF holds, not on memory.
 */
static void reuse_all(const char *config, uint64_t seed)
{
    struct tdev t;
    rng_state = seed;
    tdev_open(&t, config, NULL, 0);
    for (unsigned i = 0; i < 6; i++) {
        struct conv A;
        random_feature_layer(&t, &A, 24, 1);
        A.skip_data_rls = 1;
        A.skip_weight_rls = 1;
        if (!plan_banks(&t, &A)) {
            conv_free(&A);
            continue;
        }
        write_feature(&t, &A);
        write_weights(&t, &A);
        check_layer(&t, &A, "reuse: layer A");

        /* clobber memory: B must not read it */
        struct conv junk = A;
        junk.in = malloc((size_t)A.c * A.h * A.w);
        junk.wt = malloc((size_t)A.k * bytes_per_kernel(&A));
        assert_non_null(junk.in);
        assert_non_null(junk.wt);
        fill_random(junk.in, (size_t)A.c * A.h * A.w);
        fill_random(junk.wt, (size_t)A.k * bytes_per_kernel(&A));
        write_feature(&t, &junk);
        write_weights(&t, &junk);
        free(junk.in);
        free(junk.wt);

        struct conv B = A;
        B.data_reuse = 1;
        B.weight_reuse = 1;
        B.skip_data_rls = 0;
        B.skip_weight_rls = 0;
        B.bias_en = 1;
        B.bias = rnd_s(-100, 100);
        B.trunc = A.trunc > 0 ? A.trunc - 1 : 0;
        check_layer(&t, &B, "reuse: layer B (DATA_REUSE + WEIGHT_REUSE)");
        conv_free(&A);
    }
    dlasim_destroy(t.dev);
}

static void test_reuse_nv_small(void **state)
{
    (void)state;
    reuse_all("nv_small", 0x5eed0005u);
}

static void test_reuse_nv_small_256(void **state)
{
    (void)state;
    reuse_all("nv_small_256", 0x5eed0006u);
}

/*
 * Partial data reuse (split of a layer by height): layer A releases only
 * RLS_SLICES+1 of its lines; layer B with DATA_REUSE fetches new lines and
 * reads the lines A left followed by them.
 */
static void test_partial_reuse(void **state)
{
    (void)state;
    struct tdev t;
    rng_state = 0x5eed0007u;
    tdev_open(&t, "nv_small", NULL, 0);
    for (unsigned i = 0; i < 8; i++) {
        struct conv A;
        random_feature_layer(&t, &A, 16, 1);
        if (A.h < 2) {
            conv_free(&A);
            continue;
        }
        A.skip_data_rls = 0;
        A.rls = rnd(1, A.h - 1);
        write_feature(&t, &A);
        write_weights(&t, &A);
        check_layer(&t, &A, "partial reuse: layer A");

        uint32_t left = A.h - A.rls, more = rnd(1, 4);
        /* B's input: the lines A left, then `more` new lines */
        struct conv B = A;
        B.h = left + more;
        B.fetch_h = more;
        B.data_reuse = 1;
        B.pt = rnd(0, 2);
        B.pb = rnd(0, 2);
        int64_t eh = (int64_t)(B.kh - 1) * B.dy + 1;
        if ((int64_t)B.pt + B.h + B.pb < eh) {
            B.pb = (uint32_t)(eh - B.h - B.pt);
        }
        B.oh = (uint32_t)(((int64_t)B.pt + B.h + B.pb - eh) / B.sy + 1);
        B.rls = B.h;
        if ((B.h) * B.entries > B.data_bank * t.depth) {
            conv_free(&A);
            continue;
        }
        B.out_surf = B.out_line * B.oh;
        B.in = malloc((size_t)B.c * B.h * B.w);
        assert_non_null(B.in);
        for (uint32_t c = 0; c < B.c; c++) {
            for (uint32_t y = 0; y < B.h; y++) {
                for (uint32_t x = 0; x < B.w; x++) {
                    int8_t v = y < left ? A.in[((size_t)c * A.h + A.rls + y) * A.w + x]
                                        : (int8_t)splitmix64();
                    B.in[((size_t)c * B.h + y) * B.w + x] = v;
                }
            }
        }
        /* memory holds only the new lines */
        struct conv fresh = B;
        fresh.in = malloc((size_t)B.c * more * B.w);
        assert_non_null(fresh.in);
        for (uint32_t c = 0; c < B.c; c++) {
            memcpy(fresh.in + (size_t)c * more * B.w, B.in + ((size_t)c * B.h + left) * B.w,
                   (size_t)more * B.w);
        }
        fresh.surf_stride = B.line_stride * more + t.m;
        B.surf_stride = fresh.surf_stride;
        write_feature(&t, &fresh);
        free(fresh.in);
        check_layer(&t, &B, "partial reuse: layer B");
        free(B.in);
        conv_free(&A);
    }
    dlasim_destroy(t.dev);
}

/* CACC rounding past 16 truncation bits, where the RTL's sticky window
 * ignores the low bits (-65535 >> 17 is -1 there, 0 with exact rounding). */
static void test_cacc_sticky_window(void **state)
{
    (void)state;
    struct tdev t;
    rng_state = 0x5eed0008u;
    tdev_open(&t, "nv_small", NULL, 0);
    struct conv L;
    memset(&L, 0, sizeof(L));
    L.w = L.h = 1;
    L.c = 8;
    L.k = 1;
    L.kw = L.kh = L.sx = L.sy = L.dx = L.dy = 1;
    L.ow = L.oh = 1;
    L.fetch_h = 1;
    L.rls = 1;
    L.line_stride = t.m;
    L.surf_stride = t.m;
    assert_true(plan_banks(&t, &L));
    L.in = malloc(8);
    L.wt = malloc(8);
    assert_non_null(L.in);
    assert_non_null(L.wt);
    /* 4 * (-128 * 127) - 128 * 3 - 127 * 1 = -65535 */
    static const int8_t in[8] = { -128, -128, -128, -128, -128, -127, 0, 0 };
    static const int8_t wt[8] = { 127, 127, 127, 127, 3, 1, 0, 0 };
    memcpy(L.in, in, 8);
    memcpy(L.wt, wt, 8);
    L.trunc = 17;
    L.bias_en = 1;
    L.bias = 5; /* -1 + 5 = 4 in the RTL, 0 + 5 = 5 with exact rounding */
    L.out_line = t.m;
    L.out_surf = t.m;
    L.pad_value = 0;
    write_feature(&t, &L);
    write_weights(&t, &L);
    check_layer(&t, &L, "CACC sticky window");
    uint8_t out = 0;
    mem_rd(&t, OUT_ADDR, &out, 1);
    assert_int_equal((int8_t)out, 4);
    conv_free(&L);
    dlasim_destroy(t.dev);
}

/* A direct layer with stride and dilation 1 and equal padding on every side. */
static void deep_layer(struct tdev *t, struct conv *L, uint32_t w, uint32_t h, uint32_t c,
                       uint32_t kw, uint32_t kh, uint32_t pad, uint32_t k)
{
    memset(L, 0, sizeof(*L));
    L->w = w;
    L->h = L->fetch_h = h;
    L->c = c;
    L->k = k;
    L->kw = kw;
    L->kh = kh;
    L->sx = L->sy = L->dx = L->dy = 1;
    L->pl = L->pr = L->pt = L->pb = pad;
    L->ow = w + 2 * pad - kw + 1;
    L->oh = h + 2 * pad - kh + 1;
    L->rls = h;
    assert_true(plan_banks(t, L));
    L->line_stride = w * t->m;
    L->surf_stride = w * h * t->m;
    L->out_line = L->ow * t->m;
    L->out_surf = L->out_line * L->oh;
    L->pad_value = 0x80; /* -128 */
    L->in = malloc((size_t)c * h * w);
    L->wt = malloc((size_t)k * bytes_per_kernel(L));
    assert_non_null(L->in);
    assert_non_null(L->wt);
}

/*
 * Sums beyond int32 (more than 2^17 products, nv_large's larger CBUF): the
 * accumulator must be exact before CACC truncates / saturates.
 */
static void test_deep_kernel_nv_large(void **state)
{
    (void)state;
    struct tdev t;
    struct conv L;
    rng_state = 0x5eed0009u;
    tdev_open(&t, "nv_large", NULL, 0);
    deep_layer(&t, &L, 2, 2, 4096, 6, 6, 4, 2); /* 147456 products per output */
    memset(L.in, 0x80, (size_t)L.c * L.h * L.w);
    size_t n = (size_t)L.k * bytes_per_kernel(&L);
    for (size_t i = 0; i < n; i++) {
        L.wt[i] = rnd(0, 63) ? -128 : 127; /* sums around 2.3e9 */
    }
    write_feature(&t, &L);
    write_weights(&t, &L);
    L.sdp_shift = 25;
    L.trunc = 0; /* saturates where the sum exceeds int32 */
    check_layer(&t, &L, "nv_large deep kernel, CLIP_TRUNCATE 0");
    L.trunc = 2;
    L.sdp_shift = 23;
    check_layer(&t, &L, "nv_large deep kernel, CLIP_TRUNCATE 2");
    conv_free(&L);
    dlasim_destroy(t.dev);
}

/*
 * A pixel kernel whose rows are too wide to split by channel (R8, 4096 x 32
 * products): the sum 2^31 saturates in CACC with CLIP_TRUNCATE 0.
 */
static void test_wide_pixel_kernel_nv_large(void **state)
{
    (void)state;
    struct tdev t;
    struct conv L;
    rng_state = 0x5eed000au;
    tdev_open(&t, "nv_large", NULL, 0);
    memset(&L, 0, sizeof(L));
    L.pixel = 1;
    L.fmt = &fmts[0]; /* T_R8 */
    L.c = 1;
    L.w = L.kw = 4096;
    L.h = L.fetch_h = L.kh = 32;
    L.k = 1;
    L.sx = L.sy = L.dx = L.dy = 1;
    L.ow = L.oh = 1;
    L.rls = L.h;
    L.pad_value = L.cdma_pad = 0x80;
    assert_true(plan_banks(&t, &L));
    L.line_stride = L.w;
    L.out_line = L.out_surf = t.m;
    L.img0 = malloc((size_t)L.line_stride * L.h);
    L.wt = malloc(bytes_per_kernel(&L));
    assert_non_null(L.img0);
    assert_non_null(L.wt);
    memset(L.img0, 0x80, (size_t)L.line_stride * L.h);
    memset(L.wt, 0x80, bytes_per_kernel(&L));
    mem_wr(&t, IN_ADDR, L.img0, (size_t)L.line_stride * L.h);
    write_weights(&t, &L);
    L.trunc = 0;
    check_layer(&t, &L, "wide pixel kernel, CLIP_TRUNCATE 0");
    L.trunc = 1;
    L.sdp_shift = 24;
    check_layer(&t, &L, "wide pixel kernel, CLIP_TRUNCATE 1");
    uint8_t out = 0;
    mem_rd(&t, OUT_ADDR, &out, 1);
    assert_int_equal((int8_t)out, 64); /* 2^31 / 2 / 2^24 */
    conv_free(&L);
    dlasim_destroy(t.dev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_feature_nv_small),
        cmocka_unit_test(test_feature_nv_small_256),
        cmocka_unit_test(test_pixel_nv_small),
        cmocka_unit_test(test_pixel_nv_small_256),
        cmocka_unit_test(test_pixel_nv_large),
        cmocka_unit_test(test_listed_formats_nv_small),
        cmocka_unit_test(test_listed_formats_nv_small_256),
        cmocka_unit_test(test_reuse_nv_small),
        cmocka_unit_test(test_reuse_nv_small_256),
        cmocka_unit_test(test_partial_reuse),
        cmocka_unit_test(test_cacc_sticky_window),
        cmocka_unit_test(test_deep_kernel_nv_large),
        cmocka_unit_test(test_wide_pixel_kernel_nv_large),
        cmocka_unit_test(test_fused_conv_sdp_pdp),
        cmocka_unit_test(test_batches_nv_large),
        cmocka_unit_test(test_batch_refusals_nv_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
