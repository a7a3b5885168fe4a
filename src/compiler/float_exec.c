/*
 * Float reference executor of the IR: the model run in float32 exactly as
 * ONNX defines each operator (batch 1, NCHW).  It is the calibration source
 * (activation ranges) and the float reference of the accuracy figures and
 * the per-layer SQNR; the quantized runner also uses it for nodes that run
 * on the host CPU (dequantized inputs, requantized output).
 * Written here rather than taken from ONNX Runtime so `make test` and
 * `make demo` need nothing beyond Debian's C toolchain (docs/compiler.md, "Float
 * reference").
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/status.h"
#include "common/team.h"
#include "compiler/compiler_int.h"
#include "kernels/sdw.h"
#include "kernels/sgemm.h"

/* Four float lanes and their comparison masks (GCC/Clang vector extensions:
 * SSE on x86-64, whatever the target has elsewhere). */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

/* A node the float reference cannot run: status rc and a message naming it. */
static int efail(char *err, size_t errlen, int rc, const struct dlc_node *nd, const char *why)
{
    return dla_errf(err, errlen, rc, "node '%s' (%s): %s", nd->name, dlc_op_names[nd->op], why);
}

/* Threads of the float reference's matrix products: the online cores. */
static unsigned float_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

/* The float reference's threads, kept with the graph (dlc_float_prepare):
 * one worker team, made at the first float layer, for every layer of every
 * run.  A team has one driving
 * thread at a time; runs of the same graph on several threads at once
 * (calibration of a small model, src/compiler/calib.c) find it busy and do
 * their layers on their own thread (their inputs already use the cores). */
struct dlc_float_prep {
    pthread_mutex_t busy; /* held by the run driving the team */
    struct dla_team *team; /* made by the first float layer (INT8-only users start none) */
    int team_made;
};

int dlc_float_prepare(struct dlc_graph *g)
{
    struct dlc_float_prep *p = calloc(1, sizeof *p);
    if (!p || pthread_mutex_init(&p->busy, NULL)) {
        free(p);
        return DLASIM_ERR_NOMEM;
    }
    g->fprep = p;
    return 0;
}

void dlc_float_unprepare(struct dlc_graph *g)
{
    if (!g->fprep) {
        return;
    }
    dla_team_destroy(g->fprep->team);
    pthread_mutex_destroy(&g->fprep->busy);
    free(g->fprep);
    g->fprep = NULL;
}

/* Below this many multiply-adds a convolution stays on the calling thread
 * whatever the kernel (the smallest of sdw.c's and sgemm.c's thresholds with
 * a team): no lock is taken for them, and a model of such layers only
 * makes no team. */
#define FLOAT_TEAM_MIN_MACS 250000.0

/* How one convolution gets its threads: the graph's team when it is free
 * (*held set: give it back with float_team_give), none when another run
 * drives it, or `fresh` threads started per product (graphs without a team). */
struct float_threads_use {
    struct dla_team *team;
    unsigned fresh;
    int held;
};

static struct float_threads_use float_team_take(const struct dlc_graph *g, double macs)
{
    struct float_threads_use u = { NULL, 1, 0 };
    if (g->fprep && macs < FLOAT_TEAM_MIN_MACS) {
        return u; /* one thread in the kernels anyway: no lock, no team made */
    } else if (!g->fprep) {
        u.fresh = float_threads();
    } else if (pthread_mutex_trylock(&g->fprep->busy) == 0) {
        if (!g->fprep->team_made) { /* NULL: one core, or no thread to be had */
            g->fprep->team = dla_team_create(float_threads());
            g->fprep->team_made = 1;
        }
        u.team = g->fprep->team;
        u.held = 1;
    }
    return u;
}

static void float_team_give(const struct dlc_graph *g, const struct float_threads_use *u)
{
    if (u->held) {
        pthread_mutex_unlock(&g->fprep->busy);
    }
}

/* The geometry of one Conv node, NCHW, batch 1. */
struct conv_geom {
    int64_t C, H, W, K, OH, OW, cg, kg, kh, kw, sy, sx, dy, dx, pt, pl;
};

static struct conv_geom conv_geom_of(const struct dlc_graph *g, const struct dlc_node *nd)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]], *yt = &g->t[nd->out];
    struct conv_geom c = {
        .C = xt->dims[1], .H = xt->dims[2], .W = xt->dims[3],
        .K = yt->dims[1], .OH = yt->dims[2], .OW = yt->dims[3],
        .kh = nd->kernel[0], .kw = nd->kernel[1], .sy = nd->stride[0], .sx = nd->stride[1],
        .dy = nd->dilation[0], .dx = nd->dilation[1], .pt = nd->pads[0], .pl = nd->pads[1],
    };
    c.cg = c.C / nd->group;
    c.kg = c.K / nd->group;
    return c;
}

/* Conv as a matrix product per group: weights [kg][cg kh kw] x the im2col
 * matrix [cg kh kw][OH OW] of the group's channels (gathered into packed
 * panels by dla_sconv, never stored whole). */
static int conv2d(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y,
                  const struct dla_sact *act)
{
    const struct conv_geom c = conv_geom_of(g, nd);
    const float *x = v[nd->in[0]], *w = g->t[nd->in[1]].data;
    const float *b = nd->n_in > 2 && nd->in[2] >= 0 ? g->t[nd->in[2]].data : NULL;
    if (c.cg == 1 && c.kg == 1) { /* depthwise: no matrix product, one channel per group */
        struct dla_sconv_geom dg = {
            .x = x, .C = c.C, .H = c.H, .W = c.W, .OH = c.OH, .OW = c.OW, .kh = c.kh,
            .kw = c.kw, .sy = c.sy, .sx = c.sx, .dy = c.dy, .dx = c.dx, .pt = c.pt, .pl = c.pl,
        };
        struct float_threads_use u =
            float_team_take(g, (double)c.C * c.OH * c.OW * c.kh * c.kw);
        if (u.fresh > 1) {
            dla_sdw(&dg, w, b, y, u.fresh);
            dla_sact_apply(act, y, c.K * c.OH * c.OW);
        } else {
            dla_sdw_on(u.team, &dg, w, b, y, act);
        }
        float_team_give(g, &u);
        return 0;
    }
    int64_t rows = c.cg * c.kh * c.kw, npix = c.OH * c.OW;
    int rc = 0;
    struct float_threads_use u = float_team_take(g, (double)c.kg * npix * rows);
    for (int64_t grp = 0; grp < nd->group && !rc; grp++) {
        struct dla_sconv_geom sg = {
            .x = x + grp * c.cg * c.H * c.W, .C = c.cg, .H = c.H, .W = c.W, .OH = c.OH,
            .OW = c.OW, .kh = c.kh, .kw = c.kw, .sy = c.sy, .sx = c.sx, .dy = c.dy, .dx = c.dx,
            .pt = c.pt, .pl = c.pl,
        };
        int direct = c.kh == 1 && c.kw == 1 && c.sy == 1 && c.sx == 1 && c.pt == 0 &&
                     c.pl == 0 && c.OH == c.H && c.OW == c.W;
        const float *wg = w + grp * c.kg * rows, *bg = b ? b + grp * c.kg : NULL;
        float *yg = y + grp * c.kg * npix;
        if (u.fresh > 1) {
            rc = direct ? dla_sgemm(c.kg, npix, rows, wg, rows, sg.x, npix, bg, yg, npix, u.fresh)
                        : dla_sconv(&sg, c.kg, wg, bg, yg, u.fresh);
            dla_sact_apply(rc ? NULL : act, yg, c.kg * npix);
        } else {
            rc = direct ? dla_sgemm_on(u.team, c.kg, npix, rows, wg, rows, sg.x, npix, bg, yg, npix,
                                       act)
                        : dla_sconv_on(u.team, &sg, c.kg, wg, bg, yg, act);
        }
    }
    float_team_give(g, &u);
    return rc;
}

/* Gemm / MatMul with A [1, K]: y[n] = alpha * sum_k a[k] B[k, n] + beta * c */
static void gemm(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *bt = &g->t[nd->in[1]];
    const float *a = v[nd->in[0]], *B = bt->data;
    const struct dlc_tensor *ct = nd->n_in > 2 && nd->in[2] >= 0 ? &g->t[nd->in[2]] : NULL;
    int tb = nd->op == DLC_OP_GEMM && nd->trans_b;
    int64_t K = tb ? bt->dims[1] : bt->dims[0], N = tb ? bt->dims[0] : bt->dims[1];
    float alpha = nd->op == DLC_OP_GEMM ? nd->alpha : 1.0f;
    float beta = nd->op == DLC_OP_GEMM ? nd->beta : 1.0f;
    dla_sgemv(N, K, a, B, tb, y);
    for (int64_t n = 0; n < N; n++) {
        y[n] = alpha * y[n] + (ct ? beta * ct->data[ct->n == 1 ? 0 : n] : 0.0f);
    }
}

/* Kernel taps k (stride st, padding before pb) of output o whose input
 * index lies in [0, n): [*lo, *hi); and how many lie before n + pa (the
 * positions count_include_pad counts: padding yes, ceil_mode overhang no). */
static int64_t pool_taps(int64_t o, int64_t st, int64_t pb, int64_t pa, int64_t n, int64_t k,
                         int64_t *lo, int64_t *hi)
{
    int64_t i0 = o * st - pb;
    *lo = i0 < 0 ? -i0 : 0;
    *hi = n - i0 < k ? n - i0 : k;
    *lo = *lo > k ? k : *lo;
    *hi = *hi < *lo ? *lo : *hi;
    int64_t padded = n + pa - i0;
    return padded < 0 ? 0 : padded < k ? padded : k;
}

/* Four outputs ox .. ox + 3 of a max pool's row (x stride sx 1 or 2), their
 * window rows [y0, y1) of the plane xp, columns o + kx for kx < kw where o
 * = row0 + ox x sx - pl, every tap inside the row: m = x > m ? x : m over
 * the taps in (ky, kx) order from -inf, as the scalar loop below, four
 * outputs a step through comparison masks (the same bits: NaN, -0).
 * ResNet-18's 3x3/2 pool one output at a time was ~3 % of its float run's
 * samples, on one thread while the other waited (21.6 -> 20.0 ms an image
 * this way).  The 2x2/2 pools keep maxpool2x2_row: through this function
 * Fashion-MNIST's float run took 0.062 ms an image instead of 0.056. */
static void maxpool_four(const float *xp, int64_t W, int64_t o, int64_t y0, int64_t y1,
                         int64_t kw, int64_t sx, float *y)
{
    v4f m = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
    for (int64_t ky = y0; ky < y1; ky++) {
        const float *r = xp + (o + ky * W); /* (an index inside xp) */
        for (int64_t kx = 0; kx < kw; kx++) {
            v4f t;
            if (sx == 1) {
                memcpy(&t, r + kx, sizeof t);
            } else {
                v4f lo, hi;
                memcpy(&lo, r + kx, sizeof lo);
                memcpy(&hi, r + kx + 4, sizeof hi);
                t = __builtin_shufflevector(lo, hi, 0, 2, 4, 6);
            }
            v4i gt = t > m;
            m = (v4f)((gt & (v4i)t) | (~gt & (v4i)m));
        }
    }
    memcpy(y, &m, sizeof m);
}

/* n outputs of a 2x2 stride-2 max pool from input rows r0, r1 (2n floats
 * each): m = x > m ? x : m over the taps in (ky, kx) order from -inf, four
 * outputs at a time through comparison masks (the same bits: NaN, -0). */
static void maxpool2x2_row(const float *r0, const float *r1, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f m = { -INFINITY, -INFINITY, -INFINITY, -INFINITY };
        const float *rows[2] = { r0 + 2 * i, r1 + 2 * i };
        for (int r = 0; r < 2; r++) {
            v4f lo, hi;
            memcpy(&lo, rows[r], sizeof lo);
            memcpy(&hi, rows[r] + 4, sizeof hi);
            const v4f taps[2] = { __builtin_shufflevector(lo, hi, 0, 2, 4, 6),
                                  __builtin_shufflevector(lo, hi, 1, 3, 5, 7) };
            for (int t = 0; t < 2; t++) {
                v4i gt = taps[t] > m;
                m = (v4f)((gt & (v4i)taps[t]) | (~gt & (v4i)m));
            }
        }
        memcpy(y + i, &m, sizeof m);
    }
    for (; i < n; i++) {
        float m = -INFINITY;
        const float t[4] = { r0[2 * i], r0[2 * i + 1], r1[2 * i], r1[2 * i + 1] };
        for (int k = 0; k < 4; k++) {
            m = t[k] > m ? t[k] : m;
        }
        y[i] = m;
    }
}

static void pool(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]], *yt = &g->t[nd->out];
    const float *x = v[nd->in[0]];
    int gap = nd->op == DLC_OP_GAP; /* its output may be [1, C] (ReduceMean, keepdims 0) */
    int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    int64_t OH = gap ? 1 : yt->dims[2], OW = gap ? 1 : yt->dims[3];
    int64_t kh = gap ? H : nd->kernel[0], kw = gap ? W : nd->kernel[1];
    int64_t sy = gap ? 1 : nd->stride[0], sx = gap ? 1 : nd->stride[1];
    int64_t pt = gap ? 0 : nd->pads[0], pl = gap ? 0 : nd->pads[1];
    int64_t pb = gap ? 0 : nd->pads[2], pr = gap ? 0 : nd->pads[3];
    int mx = nd->op == DLC_OP_MAXPOOL;
    /* channel outermost: each plane read in order while in cache; a max
     * pool keeps no sum (each output's expression as before) */
    for (int64_t c = 0; c < C; c++) {
        const float *xp = x + c * H * W;
        float *yp = y + c * OH * OW;
        for (int64_t oy = 0; oy < OH; oy++) {
            int64_t y0, y1, ny_pad = pool_taps(oy, sy, pt, pb, H, kh, &y0, &y1);
            const int64_t row0 = (oy * sy - pt) * W; /* index arithmetic: padding lies outside xp */
            int64_t ox = 0;
            if (mx && kh == 2 && kw == 2 && sy == 2 && sx == 2 && pt == 0 && pl == 0 &&
                y0 == 0 && y1 == 2) { /* the common max pool: outputs whose taps are inside */
                ox = OW < W / 2 ? OW : W / 2;
                maxpool2x2_row(xp + row0, xp + row0 + W, yp + oy * OW, ox);
            }
            for (; ox < OW; ox++) {
                /* four outputs whose taps (and the stride-2 loads' last
                 * float) lie inside the row */
                const int64_t c0 = ox * sx - pl;
                if (mx && (sx == 1 || sx == 2) && ox + 4 <= OW && c0 >= 0 &&
                    c0 + kw - 1 + 4 * sx - 1 < W) {
                    maxpool_four(xp, W, row0 + c0, y0, y1, kw, sx, yp + oy * OW + ox);
                    ox += 3;
                    continue;
                }
                int64_t x0, x1, nx_pad = pool_taps(ox, sx, pl, pr, W, kw, &x0, &x1);
                const int64_t o = row0 + ox * sx - pl; /* + ky W + kx: an input inside */
                if (mx) {
                    float m = -INFINITY;
                    for (int64_t ky = y0; ky < y1; ky++) {
                        for (int64_t kx = x0; kx < x1; kx++) {
                            m = xp[o + ky * W + kx] > m ? xp[o + ky * W + kx] : m;
                        }
                    }
                    yp[oy * OW + ox] = m;
                    continue;
                }
                int64_t cnt = (y1 - y0) * (x1 - x0);
                int64_t div = nd->count_include_pad ? ny_pad * nx_pad : cnt;
                double s = 0.0;
                for (int64_t ky = y0; ky < y1; ky++) {
                    for (int64_t kx = x0; kx < x1; kx++) {
                        s += xp[o + ky * W + kx];
                    }
                }
                yp[oy * OW + ox] = (float)(s / (double)(div ? div : 1));
            }
        }
    }
}

static float bcast_at(const struct dlc_tensor *t, const float *v, const struct dlc_tensor *o,
                      int64_t i)
{
    if (t->n == o->n) {
        return v[i];
    }
    if (t->n == 1) {
        return v[0];
    }
    /* general numpy broadcast: walk the output index */
    int64_t idx = 0, stride = 1, rem = i;
    int64_t coords[DLC_MAX_RANK];
    for (int d = o->rank - 1; d >= 0; d--) {
        coords[d] = rem % o->dims[d];
        rem /= o->dims[d];
    }
    for (int d = t->rank - 1; d >= 0; d--) {
        int od = d + (o->rank - t->rank);
        int64_t c = t->dims[d] == 1 ? 0 : coords[od];
        idx += c * stride;
        stride *= t->dims[d];
    }
    return v[idx];
}

/* Both operands of the output's size (residual Adds): one loop per operator. */
/* Four lanes of x op z at a time (the same single rounding per element as
 * the scalar tail; y may be x or z itself: each block is read before it is
 * written). */
#define BINARY_V4(expr)                                                   \
    do {                                                                  \
        int64_t i = 0;                                                    \
        for (; i + 4 <= n; i += 4) {                                      \
            v4f a, b;                                                     \
            memcpy(&a, x + i, sizeof a);                                  \
            memcpy(&b, z + i, sizeof b);                                  \
            a = expr;                                                     \
            memcpy(y + i, &a, sizeof a);                                  \
        }                                                                 \
        for (; i < n; i++) {                                              \
            float a = x[i], b = z[i];                                     \
            y[i] = expr;                                                  \
        }                                                                 \
    } while (0)

static void binary_same(enum dlc_op op, const float *x, const float *z, float *y, int64_t n)
{
    switch (op) {
    case DLC_OP_ADD:
        BINARY_V4(a + b);
        break;
    case DLC_OP_SUB:
        BINARY_V4(a - b);
        break;
    case DLC_OP_MUL:
        BINARY_V4(a * b);
        break;
    default: /* PRelu */
        for (int64_t i = 0; i < n; i++) {
            y[i] = x[i] >= 0 ? x[i] : x[i] * z[i];
        }
        break;
    }
}

static void binary(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *a = &g->t[nd->in[0]], *b = &g->t[nd->in[1]], *o = &g->t[nd->out];
    if (a->n == o->n && b->n == o->n) {
        binary_same(nd->op, v[nd->in[0]], v[nd->in[1]], y, o->n);
        return;
    }
    for (int64_t i = 0; i < o->n; i++) {
        float x = bcast_at(a, v[nd->in[0]], o, i), z = bcast_at(b, v[nd->in[1]], o, i);
        switch (nd->op) {
        case DLC_OP_ADD: y[i] = x + z; break;
        case DLC_OP_SUB: y[i] = x - z; break;
        case DLC_OP_MUL: y[i] = x * z; break;
        case DLC_OP_DIV: y[i] = x / z; break;
        default: y[i] = x >= 0 ? x : x * z; break; /* PRelu */
        }
    }
}

static void lrn(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]];
    const float *x = v[nd->in[0]];
    int64_t C = xt->dims[1], HW = xt->dims[2] * xt->dims[3];
    int lo = (nd->size - 1) / 2, hi = nd->size / 2; /* ONNX: floor((size-1)/2), ceil((size-1)/2) */
    hi = nd->size - 1 - lo;
    for (int64_t c = 0; c < C; c++) {
        for (int64_t p = 0; p < HW; p++) {
            double sq = 0;
            for (int64_t j = c - lo; j <= c + hi; j++) {
                if (j >= 0 && j < C) {
                    double e = x[j * HW + p];
                    sq += e * e;
                }
            }
            double d = pow(nd->bias + nd->alpha / nd->size * sq, nd->beta);
            y[c * HW + p] = (float)(x[c * HW + p] / d);
        }
    }
}

static void softmax(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]];
    const float *x = v[nd->in[0]];
    int64_t outer = 1, len = 1, inner = 1;
    for (int i = 0; i < xt->rank; i++) {
        if (i < nd->axis) {
            outer *= xt->dims[i];
        } else if (i == nd->axis) {
            len = xt->dims[i];
        } else {
            inner *= xt->dims[i];
        }
    }
    if (g->opset < 13) { /* opset < 13: the axis and everything after it form one row */
        len *= inner;
        inner = 1;
    }
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t in = 0; in < inner; in++) {
            const float *r = x + o * len * inner + in;
            float *q = y + o * len * inner + in;
            float m = -INFINITY;
            for (int64_t i = 0; i < len; i++) {
                m = r[i * inner] > m ? r[i * inner] : m;
            }
            double s = 0;
            for (int64_t i = 0; i < len; i++) {
                q[i * inner] = expf(r[i * inner] - m);
                s += q[i * inner];
            }
            for (int64_t i = 0; i < len; i++) {
                q[i * inner] = (float)(q[i * inner] / s);
            }
        }
    }
}

static void concat(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *o = &g->t[nd->out];
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < o->rank; i++) {
        if (i < nd->axis) {
            outer *= o->dims[i];
        } else if (i > nd->axis) {
            inner *= o->dims[i];
        }
    }
    int64_t off = 0;
    for (int k = 0; k < nd->n_in; k++) {
        const struct dlc_tensor *t = &g->t[nd->in[k]];
        int64_t chunk = t->dims[nd->axis] * inner;
        for (int64_t a = 0; a < outer; a++) {
            memcpy(y + a * o->dims[nd->axis] * inner + off, v[nd->in[k]] + a * chunk,
                   (size_t)chunk * sizeof(float));
        }
        off += chunk;
    }
}

static void transpose(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]], *o = &g->t[nd->out];
    int64_t xs[DLC_MAX_RANK], c[DLC_MAX_RANK] = { 0 };
    xs[xt->rank - 1] = 1;
    for (int d = xt->rank - 2; d >= 0; d--) {
        xs[d] = xs[d + 1] * xt->dims[d + 1];
    }
    for (int64_t i = 0; i < o->n; i++) {
        int64_t src = 0;
        for (int d = 0; d < o->rank; d++) {
            src += c[d] * xs[nd->perm[d]];
        }
        y[i] = v[nd->in[0]][src];
        for (int d = o->rank - 1; d >= 0; d--) {
            if (++c[d] < o->dims[d]) {
                break;
            }
            c[d] = 0;
        }
    }
}

/* ONNX Resize-13 on H and W: the output coordinate mapped to the input
 * by coordinate_transformation_mode, then nearest (nearest_mode), linear
 * or cubic (cubic_coeff_a, exclude_outside) interpolation, one axis at a
 * time with the input's edges repeated; tf_crop_and_resize gives
 * extrapolation_value outside the crop.  Taps per output coordinate. */
struct rs_taps {
    int64_t idx[4];
    double w[4];
    int n, outside;
};

/* The input coordinate of output coordinate xr on one axis.  The resized
 * length is scale * in (as ONNX's reference computes it; = out when sizes
 * were given). */
static double rs_source(const struct dlc_node *nd, int axis, int64_t xr, int64_t in)
{
    double scale = nd->rs_scale[axis], x = (double)xr, len = scale * (double)in;
    switch (nd->rs_coord) {
    case DLC_RS_ASYMMETRIC: return x / scale;
    case DLC_RS_ALIGN_CORNERS: return len == 1 ? 0.0 : x * (double)(in - 1) / (len - 1);
    case DLC_RS_PYTORCH_HALF_PIXEL: return len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case DLC_RS_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
    case DLC_RS_TF_CROP_AND_RESIZE: {
        double s0 = nd->rs_roi[2 + axis], s1 = nd->rs_roi[6 + axis];
        return len > 1 ? s0 * (double)(in - 1) + x * (s1 - s0) * (double)(in - 1) / (len - 1)
                       : 0.5 * (s0 + s1) * (double)(in - 1);
    }
    default: return (x + 0.5) / scale - 0.5; /* half_pixel */
    }
}

static int64_t rs_nearest(const struct dlc_node *nd, double x)
{
    double f = floor(x);
    switch (nd->rs_nearest) {
    case DLC_RS_FLOOR: return (int64_t)f;
    case DLC_RS_CEIL: return (int64_t)ceil(x);
    case DLC_RS_ROUND_PREFER_CEIL: return (int64_t)(x - f >= 0.5 ? f + 1 : f);
    default: return (int64_t)(x - f > 0.5 ? f + 1 : f); /* round_prefer_floor */
    }
}

static void rs_cubic(double r, double a, double *c)
{
    double s = 1.0 - r;
    c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    c[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

static void rs_axis_taps(const struct dlc_node *nd, int axis, int64_t xr, int64_t in,
                         struct rs_taps *t)
{
    double x = rs_source(nd, axis, xr, in);
    x = x > -1e9 ? (x < 1e9 ? x : 1e9) : -1e9; /* far outside (or NaN): the edge */
    t->outside = nd->rs_coord == DLC_RS_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(in - 1));
    if (nd->rs_mode == DLC_RS_NEAREST) {
        int64_t k = rs_nearest(nd, x);
        t->n = 1, t->idx[0] = k < 0 ? 0 : k >= in ? in - 1 : k, t->w[0] = 1.0;
        return;
    }
    double f = floor(x), r = x - f, sum = 0;
    int64_t base = (int64_t)f;
    if (nd->rs_mode == DLC_RS_LINEAR) {
        t->n = 2, t->w[0] = 1.0 - r, t->w[1] = r;
        t->idx[0] = base, t->idx[1] = base + 1;
    } else {
        t->n = 4;
        rs_cubic(r, nd->rs_cubic_a, t->w);
        for (int k = 0; k < 4; k++) {
            t->idx[k] = base - 1 + k;
        }
    }
    for (int k = 0; k < t->n; k++) {
        if (nd->rs_exclude_outside && (t->idx[k] < 0 || t->idx[k] >= in)) {
            t->w[k] = 0;
        }
        sum += t->w[k];
        t->idx[k] = t->idx[k] < 0 ? 0 : t->idx[k] >= in ? in - 1 : t->idx[k];
    }
    for (int k = 0; k < t->n && nd->rs_exclude_outside && sum != 0; k++) {
        t->w[k] /= sum;
    }
}

static void resize(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]], *o = &g->t[nd->out];
    int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], OH = o->dims[2], OW = o->dims[3];
    struct rs_taps *tx = malloc((size_t)OW * sizeof *tx);
    if (!tx) { /* dlc_float_node checked the output buffer; taps are small */
        memset(y, 0, (size_t)o->n * sizeof(float));
        return;
    }
    for (int64_t ox = 0; ox < OW; ox++) {
        rs_axis_taps(nd, 1, ox, W, &tx[ox]);
    }
    for (int64_t oy = 0; oy < OH; oy++) {
        struct rs_taps ty;
        rs_axis_taps(nd, 0, oy, H, &ty);
        for (int64_t c = 0; c < C; c++) {
            const float *xc = v[nd->in[0]] + c * H * W;
            for (int64_t ox = 0; ox < OW; ox++) {
                double s = 0;
                for (int a = 0; a < ty.n; a++) {
                    for (int b = 0; b < tx[ox].n; b++) {
                        s += ty.w[a] * tx[ox].w[b] * xc[ty.idx[a] * W + tx[ox].idx[b]];
                    }
                }
                y[(c * OH + oy) * OW + ox] = ty.outside || tx[ox].outside ? nd->rs_extrapolation
                                                                          : (float)s;
            }
        }
    }
    free(tx);
}

/* Gather along nd->axis with constant indices (graph.c shape_gather). */
static void gather(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]], *ix = &g->t[nd->in[1]];
    int64_t outer = 1, inner = 1, len = xt->dims[nd->axis];
    for (int i = 0; i < xt->rank; i++) {
        outer *= i < nd->axis ? xt->dims[i] : 1;
        inner *= i > nd->axis ? xt->dims[i] : 1;
    }
    for (int64_t a = 0; a < outer; a++) {
        for (int64_t k = 0; k < ix->n; k++) {
            int64_t q = ix->is_int ? ix->idata[k] : (int64_t)ix->data[k];
            q = q < 0 ? q + len : q;
            memcpy(y + (a * ix->n + k) * inner, v[nd->in[0]] + (a * len + q) * inner,
                   (size_t)inner * sizeof(float));
        }
    }
}

/* Slice of one axis, step 1 (graph.c shape_slice). */
static void slice1(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]];
    int64_t outer = 1, inner = 1, len = xt->dims[nd->sl_axis], cnt = nd->sl_end - nd->sl_start;
    for (int i = 0; i < xt->rank; i++) {
        outer *= i < nd->sl_axis ? xt->dims[i] : 1;
        inner *= i > nd->sl_axis ? xt->dims[i] : 1;
    }
    for (int64_t a = 0; a < outer; a++) {
        memcpy(y + a * cnt * inner, v[nd->in[0]] + (a * len + nd->sl_start) * inner,
               (size_t)(cnt * inner) * sizeof(float));
    }
}

static void pad(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const struct dlc_tensor *xt = &g->t[nd->in[0]], *o = &g->t[nd->out];
    int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], OH = o->dims[2], OW = o->dims[3];
    for (int64_t c = 0; c < C; c++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t iy = oy - nd->pads[0], ix = ox - nd->pads[1];
                y[(c * OH + oy) * OW + ox] = iy >= 0 && iy < H && ix >= 0 && ix < W
                                                 ? v[nd->in[0]][(c * H + iy) * W + ix]
                                                 : nd->pad_value;
            }
        }
    }
}

/* y = x > 0 ? x : 0 without a branch per element (the signs are random:
 * mispredicted branches cost more than the work). */
static void relu(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f e;
        memcpy(&e, x + i, sizeof e);
        v4i r = (v4i)e & (e > (v4f){ 0 });
        memcpy(y + i, &r, sizeof r);
    }
    for (; i < n; i++) {
        y[i] = x[i] > 0 ? x[i] : 0;
    }
}

/* y = x < lo ? lo : x > hi ? hi : x (NaN stays NaN), four lanes at a time. */
static void clip(const float *x, float *y, int64_t n, float lo, float hi)
{
    const v4f vlo = { lo, lo, lo, lo }, vhi = { hi, hi, hi, hi };
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        v4f e;
        memcpy(&e, x + i, sizeof e);
        v4i below = e < vlo, above = e > vhi;
        v4i r = (below & (v4i)vlo) | (above & (v4i)vhi) | (~(below | above) & (v4i)e);
        memcpy(y + i, &r, sizeof r);
    }
    for (; i < n; i++) {
        y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
    }
}

/* HardSigmoid: max(0, min(1, alpha * x + beta)). */
static float hard_sigmoid(float x, float alpha, float beta)
{
    float v = alpha * x + beta;
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

static void unary(const struct dlc_graph *g, const struct dlc_node *nd, float **v, float *y)
{
    const float *x = v[nd->in[0]];
    int64_t n = g->t[nd->out].n;
    const struct dlc_tensor *xt = &g->t[nd->in[0]];
    if (nd->op == DLC_OP_RELU) {
        relu(x, y, n);
        return;
    }
    if (nd->op == DLC_OP_CLIP) {
        clip(x, y, n, nd->clip_min, nd->clip_max);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        float e = x[i];
        switch (nd->op) {
        case DLC_OP_RELU: y[i] = e > 0 ? e : 0; break;
        case DLC_OP_LEAKYRELU: y[i] = e >= 0 ? e : e * nd->alpha; break;
        case DLC_OP_CLIP: y[i] = e < nd->clip_min ? nd->clip_min : e > nd->clip_max ? nd->clip_max : e; break;
        case DLC_OP_SIGMOID: y[i] = 1.0f / (1.0f + expf(-e)); break;
        case DLC_OP_TANH: y[i] = tanhf(e); break;
        case DLC_OP_HARDSIGMOID: y[i] = hard_sigmoid(e, nd->alpha, nd->beta); break;
        case DLC_OP_HARDSWISH: y[i] = e * hard_sigmoid(e, 1.0f / 6, 0.5f); break;
        case DLC_OP_BN: {
            int64_t hw = xt->n / xt->dims[1], c = (i / hw) % xt->dims[1];
            const float *sc = g->t[nd->in[1]].data, *b = g->t[nd->in[2]].data;
            const float *m = g->t[nd->in[3]].data, *var = g->t[nd->in[4]].data;
            y[i] = (e - m[c]) / sqrtf(var[c] + nd->epsilon) * sc[c] + b[c];
            break;
        }
        default: y[i] = e; break; /* views: same values in the same NCHW order */
        }
    }
}

/*
 * A pre-quantized model's activation (qscale set by its QuantizeLinear,
 * qdq.c) as the QuantizeLinear -> DequantizeLinear pair defines it: each
 * value divided by the step, rounded half to even, saturated to the codes
 * of its type, times the step (ONNX QuantizeLinear / DequantizeLinear,
 * opset 13).  Without it a ReLU or ReLU6 that the model's quantization
 * folded into its ranges (a uint8 step from 0) is missing from the float
 * values, and the tensors calibrated from them (a float output after the
 * last DequantizeLinear) get steps far too wide.  t->zero is the device
 * code of 0 (zero point - 128 for uint8): the codes' range in steps is
 * [-128 - zero, 127 - zero].
 */
static void fake_quantize(const struct dlc_tensor *t, float *y)
{
    const float lo = (float)(-128 - t->zero), hi = (float)(127 - t->zero), s = t->qscale;
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds |v| < 2^22 half to even */
    const v4f vs = { s, s, s, s }, vm = { magic, magic, magic, magic };
    const v4f vlo = { lo, lo, lo, lo }, vhi = { hi, hi, hi, hi };
    int64_t i = 0;
    for (; i + 4 <= t->n; i += 4) { /* four lanes as clip (NaN stays NaN) */
        v4f e;
        memcpy(&e, y + i, sizeof e);
        e /= vs;
        v4i below = e < vlo, above = e > vhi;
        e = (v4f)((below & (v4i)vlo) | (above & (v4i)vhi) | (~(below | above) & (v4i)e));
        e = ((e + vm) - vm) * vs;
        memcpy(y + i, &e, sizeof e);
    }
    for (; i < t->n; i++) {
        float v = y[i] / s;
        v = v < lo ? lo : v > hi ? hi : v;
        y[i] = ((v + magic) - magic) * s;
    }
}

int dlc_float_node(const struct dlc_graph *g, const struct dlc_node *nd, float **vals, char *err,
                   size_t errlen)
{
    for (int i = 0; i < nd->n_in; i++) {
        if (nd->in[i] >= 0 && !vals[nd->in[i]]) {
            return efail(err, errlen, DLASIM_ERR_INVAL, nd, "input not computed");
        }
    }
    const struct dlc_tensor *o = &g->t[nd->out];
    float *y = vals[nd->out];
    if (!y) {
        y = malloc((size_t)(o->n ? o->n : 1) * sizeof(float));
        if (!y) {
            return efail(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory");
        }
        vals[nd->out] = y;
    }
    switch (nd->op) {
    case DLC_OP_CONV:
        if (conv2d(g, nd, vals, y, NULL)) {
            return efail(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory");
        }
        break;
    case DLC_OP_GEMM:
    case DLC_OP_MATMUL: gemm(g, nd, vals, y); break;
    case DLC_OP_MAXPOOL:
    case DLC_OP_AVGPOOL:
    case DLC_OP_GAP: pool(g, nd, vals, y); break;
    case DLC_OP_ADD:
    case DLC_OP_SUB:
    case DLC_OP_MUL:
    case DLC_OP_DIV:
    case DLC_OP_PRELU: binary(g, nd, vals, y); break;
    case DLC_OP_SLICE: slice1(g, nd, vals, y); break;
    case DLC_OP_GATHER: gather(g, nd, vals, y); break;
    case DLC_OP_LRN: lrn(g, nd, vals, y); break;
    case DLC_OP_SOFTMAX: softmax(g, nd, vals, y); break;
    case DLC_OP_CONCAT: concat(g, nd, vals, y); break;
    case DLC_OP_TRANSPOSE: transpose(g, nd, vals, y); break;
    case DLC_OP_RESIZE: resize(g, nd, vals, y); break;
    case DLC_OP_PAD: pad(g, nd, vals, y); break;
    default: unary(g, nd, vals, y); break;
    }
    if (o->qscale > 0 && !o->qdomain) {
        fake_quantize(o, y);
    }
    return 0;
}

void dlc_vals_free(const struct dlc_graph *g, float **vals)
{
    if (!vals) {
        return;
    }
    for (int i = 0; i < g->n_t; i++) {
        if (vals[i] && vals[i] != g->t[i].data) {
            free(vals[i]);
        }
        vals[i] = NULL;
    }
}

/* Constants point at their data; computed tensors keep a buffer a previous
 * run left in vals (same graph, same sizes: a calibration over many images
 * allocates and faults its pages in once), else get one when computed. */
static int float_run_begin(const struct dlc_graph *g, const float *input, float **vals, char *err,
                           size_t errlen)
{
    for (int i = 0; i < g->n_t; i++) {
        if (g->t[i].is_const) {
            vals[i] = g->t[i].data;
        }
    }
    const struct dlc_tensor *x = &g->t[g->input];
    if (!vals[g->input]) {
        vals[g->input] = malloc((size_t)x->n * sizeof(float));
    }
    if (!vals[g->input]) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "input '%s': out of memory for %lld floats",
                        x->name, (long long)x->n);
    }
    memcpy(vals[g->input], input, (size_t)x->n * sizeof(float));
    return 0;
}

int dlc_float_run(const struct dlc_graph *g, const float *input, float **vals,
                  dlc_observe_fn observe, void *ctx, char *err, size_t errlen)
{
    int rc = float_run_begin(g, input, vals, err, errlen);
    if (rc) {
        return rc;
    }
    if (observe) {
        observe(ctx, g->input, vals[g->input], g->t[g->input].n);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const struct dlc_node *nd = &g->nodes[i];
        if (nd->dead) {
            continue;
        }
        rc = dlc_float_node(g, nd, vals, err, errlen);
        if (rc) {
            return rc;
        }
        if (observe) {
            observe(ctx, nd->out, vals[nd->out], g->t[nd->out].n);
        }
    }
    return 0;
}

/* Float work of one node: multiply-adds for Conv/Gemm/MatMul, window reads
 * for pooling and LRN, one per output element otherwise (saturating). */
uint64_t dlc_node_work(const struct dlc_graph *g, const struct dlc_node *nd)
{
    const struct dlc_tensor *o = &g->t[nd->out];
    uint64_t n = (uint64_t)(o->n > 0 ? o->n : 1), per = 1;
    const struct dlc_tensor *x = nd->n_in > 0 && nd->in[0] >= 0 ? &g->t[nd->in[0]] : NULL;
    switch (nd->op) {
    case DLC_OP_CONV:
        per = x && x->rank == 4 && nd->group > 0
                  ? (uint64_t)(x->dims[1] / nd->group) * (uint64_t)nd->kernel[0] * (uint64_t)nd->kernel[1]
                  : 1;
        break;
    case DLC_OP_GEMM:
    case DLC_OP_MATMUL: {
        const struct dlc_tensor *b = &g->t[nd->in[1]];
        per = (uint64_t)(b->dims[0] > b->dims[1] ? b->dims[0] : b->dims[1]);
        break;
    }
    case DLC_OP_MAXPOOL:
    case DLC_OP_AVGPOOL: per = (uint64_t)nd->kernel[0] * (uint64_t)nd->kernel[1]; break;
    case DLC_OP_GAP: per = x && x->rank == 4 ? (uint64_t)(x->dims[2] * x->dims[3]) : 1; break;
    case DLC_OP_LRN: per = (uint64_t)(nd->size > 0 ? nd->size : 1); break;
    default: break;
    }
    return per && n > UINT64_MAX / per ? UINT64_MAX : n * per;
}

/* ---- buffer pool (calibration over many inputs) ---- */

int dlc_float_pool_init(struct dlc_float_pool *p, const struct dlc_graph *g)
{
    p->n = 0;
    p->max = g->n_t + 1;
    p->buf = calloc((size_t)p->max, sizeof *p->buf);
    p->cap = calloc((size_t)p->max, sizeof *p->cap);
    if (!p->buf || !p->cap) {
        dlc_float_pool_free(p);
        return DLASIM_ERR_NOMEM;
    }
    return 0;
}

void dlc_float_pool_free(struct dlc_float_pool *p)
{
    for (int i = 0; p->buf && i < p->n; i++) {
        free(p->buf[i]);
    }
    free(p->buf);
    free(p->cap);
    p->buf = NULL;
    p->cap = NULL;
    p->n = p->max = 0;
}

static void pool_put(struct dlc_float_pool *p, float *b, int64_t cap)
{
    if (!p || p->n >= p->max) {
        free(b);
        return;
    }
    p->buf[p->n] = b;
    p->cap[p->n++] = cap;
}

/* A pooled buffer of exactly n floats (the same sizes recur from one input
 * to the next; a larger one would leave the next large tensor without),
 * else a new one, the pool emptied first under a memory limit. */
static float *pool_take(struct dlc_float_pool *p, int64_t n, int limited)
{
    int best = -1;
    for (int i = 0; p && i < p->n && best < 0; i++) {
        best = p->cap[i] == n ? i : -1;
    }
    if (best >= 0) {
        float *b = p->buf[best];
        p->buf[best] = p->buf[--p->n];
        p->cap[best] = p->cap[p->n];
        return b;
    }
    while (p && limited && p->n) {
        free(p->buf[--p->n]);
    }
    return malloc((size_t)(n ? n : 1) * sizeof(float));
}

void dlc_float_pool_keep(struct dlc_float_pool *p, const struct dlc_graph *g, float **vals)
{
    for (int i = 0; i < g->n_t; i++) {
        if (vals[i] && vals[i] != g->t[i].data) {
            pool_put(p, vals[i], g->t[i].n ? g->t[i].n : 1);
        }
        vals[i] = NULL;
    }
}

/* The Relu or Clip that can be applied as Conv node i's outputs are
 * finished (dla_sact): the next live node, reading only the Conv's output,
 * which nothing else reads, that is not the graph's output and that no
 * observer wants to see.  Returns that node (its activation in *act), or NULL. */
static const struct dlc_node *fusable_act(const struct dlc_graph *g, int i, const int *readers,
                                          dlc_observe_fn observe, struct dla_sact *act)
{
    const struct dlc_node *nd = &g->nodes[i];
    if (observe || nd->op != DLC_OP_CONV || readers[nd->out] != 1 || nd->out == g->output) {
        return NULL;
    }
    int j = i + 1;
    while (j < g->n_nodes && g->nodes[j].dead) {
        j++;
    }
    if (j == g->n_nodes) {
        return NULL;
    }
    const struct dlc_node *a = &g->nodes[j];
    if (a->n_in < 1 || a->in[0] != nd->out || g->t[a->out].n != g->t[nd->out].n) {
        return NULL;
    }
    if (a->op == DLC_OP_RELU) {
        *act = (struct dla_sact){ .kind = DLA_SACT_RELU };
        return a;
    }
    if (a->op == DLC_OP_CLIP && a->clip_min <= a->clip_max) {
        *act = (struct dla_sact){ .kind = DLA_SACT_CLIP, .lo = a->clip_min, .hi = a->clip_max };
        return a;
    }
    return NULL;
}

/* Conv node nd with activation node fused (fusable_act) into fused's output. */
static int conv_act_node(const struct dlc_graph *g, const struct dlc_node *nd,
                         const struct dlc_node *fused, const struct dla_sact *act, float **vals,
                         char *err, size_t errlen)
{
    const struct dlc_tensor *o = &g->t[fused->out];
    float *y = vals[fused->out];
    if (!y) {
        y = malloc((size_t)(o->n ? o->n : 1) * sizeof(float));
        if (!y) {
            return efail(err, errlen, DLASIM_ERR_NOMEM, fused, "out of memory");
        }
        vals[fused->out] = y;
    }
    if (conv2d(g, nd, vals, y, act)) {
        return efail(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory");
    }
    return 0;
}

/* The inputs of nd read for the last time are released to the pool (a
 * tensor every reader has consumed is not kept; the output is). */
static void release_inputs(const struct dlc_graph *g, const struct dlc_node *nd, int *readers,
                           float **vals, struct dlc_float_pool *pool, uint64_t *live)
{
    for (int k = 0; k < nd->n_in; k++) {
        int t = nd->in[k];
        if (t >= 0 && --readers[t] == 0 && t != g->output && vals[t] && vals[t] != g->t[t].data) {
            pool_put(pool, vals[t], g->t[t].n ? g->t[t].n : 1);
            vals[t] = NULL;
            *live -= (uint64_t)g->t[t].n * sizeof(float);
        }
    }
}

int dlc_float_stream_pooled(const struct dlc_graph *g, const float *input, float **vals,
                            const struct dlc_float_limits *lim, struct dlc_float_pool *pool,
                            dlc_observe_fn observe, void *ctx, char *err, size_t errlen)
{
    int *readers = calloc((size_t)g->n_t, sizeof *readers);
    if (!readers) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "float run: out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        for (int k = 0; !g->nodes[i].dead && k < g->nodes[i].n_in; k++) {
            if (g->nodes[i].in[k] >= 0) { /* -1: an optional input left out */
                readers[g->nodes[i].in[k]]++;
            }
        }
    }
    for (int i = 0; i < g->n_t; i++) {
        vals[i] = g->t[i].is_const ? g->t[i].data : NULL;
    }
    const struct dlc_tensor *x = &g->t[g->input];
    uint64_t live = (uint64_t)x->n * sizeof(float);
    int rc = 0;
    const int limited = lim && lim->max_bytes;
    vals[g->input] = pool_take(pool, x->n, limited);
    if (!vals[g->input]) {
        rc = dla_errf(err, errlen, DLASIM_ERR_NOMEM, "float run: out of memory for the input");
    } else {
        memcpy(vals[g->input], input, (size_t)x->n * sizeof(float));
        if (observe) {
            observe(ctx, g->input, vals[g->input], x->n);
        }
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        const struct dlc_node *nd = &g->nodes[i];
        if (nd->dead) {
            continue;
        }
        struct dla_sact act;
        const struct dlc_node *fused = fusable_act(g, i, readers, observe, &act);
        const int out = fused ? fused->out : nd->out;
        uint64_t out_bytes = (uint64_t)g->t[out].n * sizeof(float);
        uint64_t work = dlc_node_work(g, nd);
        if (lim && lim->max_work && work > lim->max_work) {
            rc = dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                          "node '%s' (%s): its float work of %llu multiply-adds per input exceeds "
                          "the limit of %llu (max_work, --max-work)", nd->name,
                          dlc_op_names[nd->op], (unsigned long long)work,
                          (unsigned long long)lim->max_work);
            break;
        }
        if (lim && lim->max_bytes && live + out_bytes > lim->max_bytes) {
            rc = dla_errf(err, errlen, DLASIM_ERR_NOMEM,
                          "node '%s' (%s): its %llu-byte float output with %llu bytes of live "
                          "tensors passes the host memory limit of %llu (max_host_mem, --max-mem)",
                          nd->name, dlc_op_names[nd->op], (unsigned long long)out_bytes,
                          (unsigned long long)live, (unsigned long long)lim->max_bytes);
            break;
        }
        if (pool && !vals[out]) {
            vals[out] = pool_take(pool, g->t[out].n, limited); /* NULL: node allocates */
        }
        rc = fused ? conv_act_node(g, nd, fused, &act, vals, err, errlen)
                   : dlc_float_node(g, nd, vals, err, errlen);
        if (rc) {
            break;
        }
        live += out_bytes;
        if (observe) {
            observe(ctx, nd->out, vals[nd->out], g->t[nd->out].n);
        }
        release_inputs(g, nd, readers, vals, pool, &live);
        if (fused) { /* the Conv's own output was never made: nothing more to release */
            release_inputs(g, fused, readers, vals, pool, &live);
            i = (int)(fused - g->nodes);
        }
    }
    free(readers);
    return rc;
}

int dlc_float_stream(const struct dlc_graph *g, const float *input, float **vals,
                     const struct dlc_float_limits *lim, dlc_observe_fn observe, void *ctx,
                     char *err, size_t errlen)
{
    return dlc_float_stream_pooled(g, input, vals, lim, NULL, observe, ctx, err, errlen);
}
