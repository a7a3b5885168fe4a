/*
 * Lowering of a calibrated graph to NVDLA hardware layers, and their
 * planning (pure: no device).
 *
 * Layers (one per node, with the nodes fused into it):
 *   Conv / Gemm / MatMul  -> CONV + SDP on the fly, one pair per band of the
 *       convolution planner (include/dlasim/conv.h, src/plan/conv_plan.c):
 *       int8 weights with one scale per output channel; SDP X1 (BS) adds the
 *       bias (per-kernel ALU operand, int16 << ALU shift) and multiplies by
 *       the per-channel requantization multiplier (per-kernel MUL operand,
 *       int16, >> MUL shift), then ReLU when a Relu / Clip(0, ...) follows.
 *       Grouped and depthwise convolutions become one dense convolution with
 *       zero weights outside each group (block-diagonal), so every output
 *       surface is written whole.  Gemm/MatMul read their input cube (C, H,
 *       W) as one H x W kernel: Flatten in NCHW order needs no data movement.
 *       A following Add/Sub of a per-channel constant is folded into the bias.
 *   MaxPool / AveragePool / GlobalAveragePool -> PDP from memory (kernel and
 *       stride 1..8, padding 0..7, the output line within PDP's line buffer;
 *       average pooling only without padding or with count_include_pad);
 *       the output keeps the input's scale.
 *   Flatten / Reshape / Squeeze / Unsqueeze / Identity / Dropout -> views:
 *       the same bytes (NCHW order is kept); a hardware layer reading a view
 *       checks the stored cube is what it needs.
 *   Everything else -> the host CPU, as NVIDIA's runtime runs EMU tasks:
 *       dequantize the inputs, compute in float, quantize the output.
 * Tensors are int8 feature cubes (surfaces of Atomic-M channels) in device
 * memory, one buffer per stored tensor, never reused within an inference.
 * Hardware layers between two CPU layers form one network for the
 * firmware-equivalent executor (dlasim_rt_execute); its operations run one
 * after the other: each layer's first operation waits for the previous
 * layer's last one to complete (OP_COMPLETED), and a CONV waits for its SDP
 * to be enabled (consumer before producer, as NVIDIA's compiler emits).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler_int.h"

#define DEV_BASE 0x80000000ull
#define DEV_LIMIT 0xfff00000ull
#define FORMAT_FEATURE 36

static int lfail(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    if (err && errlen) {
        snprintf(err, errlen, fmt, a ? a : "", b ? b : "");
    }
    return -1;
}

/* ---- device memory and the address list ---------------------------------------- */

static int16_t add_address(struct dlasim_model *m, uint64_t size)
{
    if (m->n_addrs == m->cap_addrs) {
        int cap = m->cap_addrs ? 2 * m->cap_addrs : 64;
        if (cap > 32767) {
            return -1;
        }
        uint64_t *a = realloc(m->addrs, (size_t)cap * sizeof *a);
        if (!a) {
            return -1;
        }
        m->addrs = a;
        m->cap_addrs = cap;
    }
    uint64_t at = (m->next_addr + 255) & ~255ull;
    if (at + size > DEV_LIMIT) {
        return -1;
    }
    m->next_addr = at + size;
    m->addrs[m->n_addrs] = at;
    return (int16_t)m->n_addrs++;
}

static int materialize(struct dlasim_model *m, int t)
{
    struct dlc_buf *b = &m->buf[t];
    if (b->addr_index >= 0) {
        return 0;
    }
    int64_t c, h, w;
    dlc_cube_of(&m->g.t[t], &c, &h, &w);
    if (c > 65535 || h > 65535 || w > 65535) {
        return -1;
    }
    b->c = (uint32_t)c, b->h = (uint32_t)h, b->w = (uint32_t)w;
    b->line = b->w * m->hw.atom_m;
    b->surf = b->line * b->h;
    b->size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, b->w, b->h, b->c, 0, 0);
    b->addr_index = add_address(m, b->size);
    return b->addr_index < 0 ? -1 : 0;
}

static struct dlc_blob *add_blob(struct dlasim_model *m, size_t len)
{
    struct dlc_blob *nb = realloc(m->blobs, (size_t)(m->n_blobs + 1) * sizeof *nb);
    if (!nb) {
        return NULL;
    }
    m->blobs = nb;
    struct dlc_blob *b = &nb[m->n_blobs];
    b->len = len;
    b->data = calloc(len ? len : 1, 1);
    b->addr_index = add_address(m, len);
    if (!b->data || b->addr_index < 0) {
        free(b->data);
        return NULL;
    }
    m->n_blobs++;
    return b;
}

/* ---- what runs where --------------------------------------------------------------- */

static int is_view(enum dlc_op op)
{
    return op == DLC_OP_FLATTEN || op == DLC_OP_RESHAPE || op == DLC_OP_SQUEEZE ||
           op == DLC_OP_UNSQUEEZE || op == DLC_OP_IDENTITY || op == DLC_OP_DROPOUT;
}

/* The only reader of tensor t (node index), or -1. */
static int only_reader(const struct dlc_graph *g, int t)
{
    if (g->t[t].consumers != 1 || t == g->output) {
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead) {
            continue;
        }
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            if (g->nodes[i].in[k] == t) {
                return i;
            }
        }
    }
    return -1;
}

/* A constant of one value per channel (or one value) usable as a bias. */
static int per_channel_const(const struct dlc_graph *g, const struct dlc_node *nd, int64_t k,
                             int *act_in, int *const_in)
{
    if (nd->n_in != 2) {
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        const struct dlc_tensor *c = &g->t[nd->in[i]];
        const struct dlc_tensor *a = &g->t[nd->in[1 - i]];
        if (!c->is_const || a->is_const) {
            continue;
        }
        int ok = c->n == 1 || (c->n == k && (c->rank <= 1 || (c->rank >= 3 && c->dims[c->rank - 1] == 1 &&
                                                               c->dims[c->rank - 2] == 1) ||
                                             (c->rank == 2 && a->rank == 2)));
        if (ok && (nd->op != DLC_OP_SUB || i == 1)) {
            *act_in = 1 - i;
            *const_in = i;
            return 1;
        }
    }
    return 0;
}

/* Nodes fused after a convolution: bias Add/Sub, then Relu / Clip(0, x). */
static void fuse_after(struct dlasim_model *m, struct dlc_layer *L, int64_t k)
{
    struct dlc_graph *g = &m->g;
    int t = L->out_tensor;
    for (;;) {
        int r = only_reader(g, t);
        if (r < 0 || L->n_fused == 4) {
            return;
        }
        struct dlc_node *nd = &g->nodes[r];
        int ai = 0, ci = 0;
        if (!L->relu && !L->prelu &&
            (nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB || nd->op == DLC_OP_MUL) &&
            per_channel_const(g, nd, k, &ai, &ci) && nd->in[ai] == t) {
            /* bias or per-channel scale: folded into the weights and bias */
        } else if (!L->relu && !L->prelu && nd->op == DLC_OP_LEAKYRELU) {
            L->prelu = L->n_fused + 1;
        } else if (!L->relu && !L->prelu && nd->op == DLC_OP_PRELU &&
                   per_channel_const(g, nd, k, &ai, &ci) && ai == 0 && nd->in[0] == t) {
            L->prelu = L->n_fused + 1;
        } else if (!L->relu && !L->prelu && nd->op == DLC_OP_RELU) {
            L->relu = 1;
        } else if (!L->relu && !L->prelu && nd->op == DLC_OP_CLIP && nd->clip_min == 0.0f) {
            L->relu = 1;
            L->clip_hi = nd->clip_max;
        } else {
            return;
        }
        L->fused[L->n_fused++] = r;
        t = nd->out;
        L->out_tensor = t;
    }
}

static int stored(const struct dlasim_model *m, int t)
{
    return m->store[t];
}

/* PDP output line buffer (ref: src/sim/nvdla/pdp.c pdp_lbuf_max_width). */
static uint32_t pdp_max_width(uint32_t kh, uint32_t sh)
{
    uint32_t lines = sh >= kh ? 1 : sh == 1 ? kh : sh == 2 ? (kh + 1) / 2 : sh == 3 ? (kh <= 6 ? 2 : 3) : 2;
    uint32_t merge = lines == 1 ? 8 : lines == 2 ? 4 : lines <= 4 ? 2 : 1;
    return 16 * merge;
}

static int tile_split(uint32_t n, uint32_t *first);

static const char *pool_refusal(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_tensor *x = &g->t[nd->in[0]], *y = &g->t[nd->out];
    int gap = nd->op == DLC_OP_GAP;
    int kh = gap ? (int)x->dims[2] : nd->kernel[0], kw = gap ? (int)x->dims[3] : nd->kernel[1];
    int sy = gap ? 1 : nd->stride[0], sx = gap ? 1 : nd->stride[1];
    uint32_t t;
    if (gap && (!tile_split((uint32_t)kh, &t) || !tile_split((uint32_t)kw, &t))) {
        return "the global kernel is larger than PDP's 8x8 and has no split into two poolings";
    }
    if (!gap && (kh > 8 || kw > 8)) {
        return "the kernel is larger than PDP's 8x8";
    }
    if (sy > 8 || sx > 8) {
        return "the stride is larger than 8";
    }
    for (int i = 0; i < 4 && !gap; i++) {
        if (nd->pads[i] > 7) {
            return "padding above 7";
        }
    }
    int padded = !gap && (nd->pads[0] || nd->pads[1] || nd->pads[2] || nd->pads[3] || nd->ceil_mode);
    if (nd->op != DLC_OP_MAXPOOL && padded && !nd->count_include_pad) {
        return "average pooling over padding that is not counted (count_include_pad=0)";
    }
    if (!gap && (uint32_t)y->dims[3] > pdp_max_width((uint32_t)kh, (uint32_t)sy)) {
        return "the output line exceeds PDP's line buffer (width split not implemented)";
    }
    const struct dlc_buf *b = &m->buf[stored(m, nd->in[0])];
    if (b->c != x->dims[1] || b->h != x->dims[2] || b->w != x->dims[3]) {
        return "its input is a view whose layout differs from the stored cube";
    }
    return NULL;
}

/* The convolution planner on the node's shape (a dry run): NULL, or why
 * not (written into why). */
static const char *plan_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                const struct dlc_buf *b, char *why, size_t n)
{
    const struct dlc_tensor *w = &m->g.t[nd->in[1]];
    struct dlasim_conv_desc d;
    dlasim_conv_desc_init(&d);
    d.in_w = b->w, d.in_h = b->h, d.in_c = b->c;
    d.kernels = (uint32_t)w->dims[0];
    d.kernel_h = (uint32_t)nd->kernel[0], d.kernel_w = (uint32_t)nd->kernel[1];
    d.stride_y = (uint32_t)nd->stride[0], d.stride_x = (uint32_t)nd->stride[1];
    d.dilation_y = (uint32_t)nd->dilation[0], d.dilation_x = (uint32_t)nd->dilation[1];
    d.pad_top = (uint32_t)nd->pads[0], d.pad_left = (uint32_t)nd->pads[1];
    d.pad_bottom = (uint32_t)nd->pads[2], d.pad_right = (uint32_t)nd->pads[3];
    struct dlasim_conv_plan plan;
    char perr[160] = "";
    if (dlasim_conv_plan(&m->hw, &d, &plan, perr, sizeof perr)) {
        snprintf(why, n, "the convolution planner refuses it: %s", perr);
        return why;
    }
    dlasim_conv_plan_free(&plan);
    return NULL;
}

static const char *conv_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                char *why, size_t n)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_buf *b = &m->buf[stored(m, nd->in[0])];
    const struct dlc_tensor *x = &g->t[nd->in[0]];
    if (nd->op == DLC_OP_CONV) {
        if (b->c != x->dims[1] || b->h != x->dims[2] || b->w != x->dims[3]) {
            return "its input is a view whose layout differs from the stored cube";
        }
        if (g->t[nd->out].dims[1] > 8192) {
            return "more than 8192 output channels";
        }
        return plan_refusal(m, nd, b, why, n);
    }
    const struct dlc_tensor *w = &g->t[nd->in[1]];
    int64_t k = nd->op == DLC_OP_GEMM && nd->trans_b ? w->dims[1] : w->dims[0];
    if ((int64_t)b->c * b->h * b->w != k) {
        return "the stored input cube does not hold its operand in NCHW order";
    }
    if (b->h > 32 || b->w > 32) {
        return "its input cube is too large to read as one kernel";
    }
    return NULL;
}

/* ---- quantization of a convolution ----------------------------------------------- */

struct qconv {
    int64_t K, C, kh, kw;
    float *w;      /* [K][C][kh][kw] float */
    float *bias;   /* [K] */
    int8_t *qw;
    int16_t *alu, *mul;
};

static void qconv_free(struct qconv *q)
{
    free(q->w);
    free(q->bias);
    free(q->qw);
    free(q->alu);
    free(q->mul);
}

/* Dense float weights and bias of a Conv (groups expanded) or Gemm/MatMul. */
static int dense_weights(const struct dlasim_model *m, const struct dlc_layer *L, struct qconv *q)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_tensor *wt = &g->t[nd->in[1]];
    const struct dlc_buf *b = &m->buf[stored(m, L->in_tensor)];
    const struct dlc_tensor *bt = nd->n_in > 2 && nd->in[2] >= 0 ? &g->t[nd->in[2]] : NULL;
    if (nd->op == DLC_OP_CONV) {
        q->K = wt->dims[0], q->C = b->c, q->kh = wt->dims[2], q->kw = wt->dims[3];
    } else {
        int tb = nd->op == DLC_OP_GEMM && nd->trans_b;
        q->K = tb ? wt->dims[0] : wt->dims[1];
        q->C = b->c, q->kh = b->h, q->kw = b->w;
    }
    size_t per = (size_t)(q->C * q->kh * q->kw);
    q->w = calloc((size_t)q->K * per, sizeof(float));
    q->bias = calloc((size_t)q->K, sizeof(float));
    q->qw = calloc((size_t)q->K * per, 1);
    q->alu = calloc((size_t)q->K, sizeof(int16_t));
    q->mul = calloc((size_t)q->K, sizeof(int16_t));
    if (!q->w || !q->bias || !q->qw || !q->alu || !q->mul) {
        return -1;
    }
    if (nd->op == DLC_OP_CONV) {
        int64_t cg = wt->dims[1], kg = q->K / nd->group, sp = q->kh * q->kw;
        for (int64_t k = 0; k < q->K; k++) {
            int64_t c0 = (k / kg) * cg;
            for (int64_t c = 0; c < cg; c++) {
                memcpy(q->w + ((size_t)k * per + (size_t)((c0 + c) * sp)),
                       wt->data + (k * cg + c) * sp, (size_t)sp * sizeof(float));
            }
            q->bias[k] = bt ? bt->data[k] : 0.0f;
        }
    } else {
        int tb = nd->op == DLC_OP_GEMM && nd->trans_b;
        float alpha = nd->op == DLC_OP_GEMM ? nd->alpha : 1.0f;
        float beta = nd->op == DLC_OP_GEMM ? nd->beta : 1.0f;
        int64_t KK = (int64_t)per;
        for (int64_t n = 0; n < q->K; n++) {
            for (int64_t i = 0; i < KK; i++) {
                q->w[n * KK + i] = alpha * (tb ? wt->data[n * KK + i] : wt->data[i * q->K + n]);
            }
            q->bias[n] = bt ? beta * bt->data[bt->n == 1 ? 0 : n] : 0.0f;
        }
    }
    for (int f = 0; f < L->n_fused; f++) { /* folded bias Add / Sub, scale Mul, in order */
        const struct dlc_node *fn = &g->nodes[L->fused[f]];
        int ai = 0, ci = 0;
        if ((fn->op == DLC_OP_ADD || fn->op == DLC_OP_SUB || fn->op == DLC_OP_MUL) &&
            per_channel_const(g, fn, q->K, &ai, &ci)) {
            const struct dlc_tensor *c = &g->t[fn->in[ci]];
            for (int64_t k = 0; k < q->K; k++) {
                float v = c->data[c->n == 1 ? 0 : k];
                if (fn->op == DLC_OP_MUL) {
                    q->bias[k] *= v;
                    for (size_t i = 0; i < per; i++) {
                        q->w[(size_t)k * per + i] *= v;
                    }
                } else {
                    q->bias[k] += fn->op == DLC_OP_SUB ? -v : v;
                }
            }
        }
    }
    return 0;
}

static int16_t sat16(double v)
{
    v = v < 0 ? v - 0.5 : v + 0.5;
    return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : (int)v);
}

/* Per-channel weight scales folded into the SDP multipliers:
 * out_q = (acc + bias_q << alu_shift) * mul_k >> mul_shift, with
 * mul_k / 2^mul_shift = s_in * s_w[k] / s_out. */
static void quantize_conv(struct dlc_layer *L, struct qconv *q)
{
    size_t per = (size_t)(q->C * q->kh * q->kw);
    double mmax = 0, bmax = 0;
    double *M = malloc((size_t)q->K * sizeof(double)), *B = malloc((size_t)q->K * sizeof(double));
    if (!M || !B) {
        free(M);
        free(B);
        return;
    }
    for (int64_t k = 0; k < q->K; k++) {
        float amax = 0;
        for (size_t i = 0; i < per; i++) {
            float a = fabsf(q->w[k * per + i]);
            amax = a > amax ? a : amax;
        }
        double sw = amax > 0 ? amax / 127.0 : 1.0;
        for (size_t i = 0; i < per; i++) {
            double v = q->w[k * per + i] / sw;
            q->qw[k * per + i] = (int8_t)(v < 0 ? -floor(-v + 0.5) : floor(v + 0.5));
        }
        M[k] = (double)L->in_scale * sw / L->out_scale;
        B[k] = q->bias[k] / ((double)L->in_scale * sw);
        mmax = M[k] > mmax ? M[k] : mmax;
        bmax = fabs(B[k]) > bmax ? fabs(B[k]) : bmax;
    }
    /* the largest multiplier gets 15 bits; a multiplier above 32767 would
     * need CACC truncation first */
    int shift = mmax > 0 ? (int)floor(log2(32767.0 / mmax)) : 0;
    L->cacc_trunc = 0;
    if (shift < 0) {
        L->cacc_trunc = (uint32_t)-shift;
        shift = 0;
    }
    if (shift > 63) {
        shift = 63;
    }
    L->mul_shift = (uint32_t)shift;
    double pre = ldexp(1.0, -(int)L->cacc_trunc);
    int ash = 0;
    while (bmax * pre / ldexp(1.0, ash) > 32767.0 && ash < 31) {
        ash++;
    }
    L->alu_shift = (uint32_t)ash;
    for (int64_t k = 0; k < q->K; k++) {
        q->mul[k] = sat16(M[k] * ldexp(1.0, shift) / pre);
        q->alu[k] = sat16(B[k] * pre / ldexp(1.0, ash));
    }
    free(M);
    free(B);
}

static int16_t fit16(double v, uint32_t *shift, int max_shift);

/* ---- hardware operations -------------------------------------------------------------- */

struct opvec {
    struct dlasim_rt_op *ops;
    int n, cap;
    struct dlasim_rt_lut *luts;
    int n_luts;
};

static struct dlasim_rt_op *new_op(struct opvec *v, uint8_t type)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 32;
        if (cap > 30000) {
            return NULL;
        }
        struct dlasim_rt_op *o = realloc(v->ops, (size_t)cap * sizeof *o);
        if (!o) {
            return NULL;
        }
        v->ops = o;
        v->cap = cap;
    }
    struct dlasim_rt_op *op = &v->ops[v->n++];
    memset(op, 0, sizeof *op);
    op->op_type = type;
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        op->consumers[i].index = -1;
    }
    op->fused_parent.index = -1;
    return op;
}

static struct dlasim_rt_cube cube_of(const struct dlc_buf *b, uint16_t type)
{
    struct dlasim_rt_cube q;
    memset(&q, 0, sizeof q);
    q.type = type;
    q.address = type == DLASIM_RT_MEM_HW ? -1 : b->addr_index;
    q.size = b->size;
    q.width = (uint16_t)b->w, q.height = (uint16_t)b->h, q.channel = (uint16_t)b->c;
    q.line_stride = b->line;
    q.surf_stride = b->surf;
    q.offset = type == DLASIM_RT_MEM_HW ? 0 : b->offset;
    return q;
}

static int emit_conv(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                     size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_buf *bx = &m->buf[stored(m, L->in_tensor)];
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    struct qconv q;
    memset(&q, 0, sizeof q);
    if (dense_weights(m, L, &q)) {
        qconv_free(&q);
        return lfail(err, errlen, "node '%s': out of memory", nd->name, NULL);
    }
    quantize_conv(L, &q);
    struct dlasim_conv_desc d;
    dlasim_conv_desc_init(&d);
    d.in_w = bx->w, d.in_h = bx->h, d.in_c = bx->c;
    d.kernels = (uint32_t)q.K;
    d.kernel_w = (uint32_t)q.kw, d.kernel_h = (uint32_t)q.kh;
    if (nd->op == DLC_OP_CONV) {
        d.stride_y = (uint32_t)nd->stride[0], d.stride_x = (uint32_t)nd->stride[1];
        d.dilation_y = (uint32_t)nd->dilation[0], d.dilation_x = (uint32_t)nd->dilation[1];
        d.pad_top = (uint32_t)nd->pads[0], d.pad_left = (uint32_t)nd->pads[1];
        d.pad_bottom = (uint32_t)nd->pads[2], d.pad_right = (uint32_t)nd->pads[3];
    }
    d.clip_truncate = L->cacc_trunc;
    struct dlasim_conv_plan plan;
    char perr[256] = "";
    if (dlasim_conv_plan(&m->hw, &d, &plan, perr, sizeof perr)) {
        qconv_free(&q);
        return lfail(err, errlen, "node '%s': the convolution planner refuses it: %s", nd->name, perr);
    }
    if (plan.out_w != by->w || plan.out_h != by->h) {
        dlasim_conv_plan_free(&plan);
        qconv_free(&q);
        return lfail(err, errlen, "node '%s': planned output size differs from the ONNX shape", nd->name,
                     NULL);
    }
    L->macs = (uint64_t)q.K * q.C * q.kh * q.kw * plan.out_w * plan.out_h;
    struct dlc_blob *wb = add_blob(m, plan.weight_bytes);
    struct dlc_blob *sb = wb ? add_blob(m, (size_t)q.K * 4) : NULL;
    wb = sb ? sb - 1 : NULL; /* add_blob may move the array */
    if (!sb) {
        dlasim_conv_plan_free(&plan);
        qconv_free(&q);
        return lfail(err, errlen, "node '%s': out of device or host memory for its weights", nd->name,
                     NULL);
    }
    dlasim_conv_pack_weights(&plan, q.qw, wb->data);
    /* LeakyRelu / PRelu slopes: one per layer, or per channel from memory */
    int16_t slope_q = 0;
    uint32_t slope_shift = 0;
    struct dlc_blob *slope_blob = NULL;
    if (L->prelu) {
        const struct dlc_node *pn = &g->nodes[L->fused[L->prelu - 1]];
        const struct dlc_tensor *st = pn->op == DLC_OP_PRELU ? &g->t[pn->in[1]] : NULL;
        double smax = pn->op == DLC_OP_LEAKYRELU ? fabs(pn->alpha) : 0;
        for (int64_t k = 0; st && k < st->n; k++) {
            smax = fabs(st->data[k]) > smax ? fabs(st->data[k]) : smax;
        }
        slope_q = fit16(smax > 0 ? smax : 1.0, &slope_shift, 31);
        slope_q = sat16((pn->op == DLC_OP_LEAKYRELU ? pn->alpha : st->data[0]) * ldexp(1.0, (int)slope_shift));
        if (st && st->n > 1) {
            slope_blob = add_blob(m, (size_t)q.K * 2);
            if (!slope_blob) {
                dlasim_conv_plan_free(&plan);
                qconv_free(&q);
                return lfail(err, errlen, "node '%s': out of memory", nd->name, NULL);
            }
            wb = slope_blob - 2, sb = slope_blob - 1;
            for (int64_t k = 0; k < q.K; k++) {
                uint16_t sv = (uint16_t)sat16(st->data[k] * ldexp(1.0, (int)slope_shift));
                slope_blob->data[2 * k] = (uint8_t)sv, slope_blob->data[2 * k + 1] = (uint8_t)(sv >> 8);
            }
        }
    }
    for (int64_t k = 0; k < q.K; k++) { /* DATA_USE BOTH: ALU operand, then MUL (little-endian) */
        uint16_t a = (uint16_t)q.alu[k], mu = (uint16_t)q.mul[k];
        sb->data[4 * k] = (uint8_t)a, sb->data[4 * k + 1] = (uint8_t)(a >> 8);
        sb->data[4 * k + 2] = (uint8_t)mu, sb->data[4 * k + 3] = (uint8_t)(mu >> 8);
    }
    for (size_t i = 0; i < plan.n_layers; i++) {
        const struct dlasim_conv_layer *l = &plan.layers[i];
        struct dlasim_rt_op *co = new_op(v, DLASIM_RT_OP_CONV);
        struct dlasim_rt_op *so = co ? new_op(v, DLASIM_RT_OP_SDP) : NULL;
        if (!so) {
            dlasim_conv_plan_free(&plan);
            qconv_free(&q);
            return lfail(err, errlen, "node '%s': too many hardware operations", nd->name, NULL);
        }
        co = so - 1;
        struct dlasim_rt_conv_op *c = &co->op.conv;
        c->weight_reuse = (uint8_t)l->weight_reuse;
        c->skip_weight_rls = (uint8_t)l->skip_weight_rls;
        c->entry_per_slice = (uint16_t)plan.entries;
        c->data_format = FORMAT_FEATURE;
        c->fetch_grain = 1;
        c->batch = 1;
        c->data_bank = (uint8_t)(l->data_bank ? l->data_bank : plan.data_bank);
        c->weight_bank = (uint8_t)plan.weight_bank;
        c->release = (uint16_t)l->in_h;
        c->input_width_csc = (uint16_t)d.in_w, c->input_height_csc = (uint16_t)l->in_h;
        c->input_channel_csc = (uint16_t)d.in_c;
        c->kernel_width_csc = (uint16_t)d.kernel_w, c->kernel_height_csc = (uint16_t)d.kernel_h;
        c->kernel_channel_csc = (uint16_t)d.in_c;
        c->input_width_cmac = (uint16_t)plan.out_w, c->input_height_cmac = (uint16_t)l->out_h;
        c->bytes_per_kernel = plan.bytes_per_kernel;
        c->conv_stride_x = (uint8_t)d.stride_x, c->conv_stride_y = (uint8_t)d.stride_y;
        c->pad_x_left = (uint8_t)d.pad_left, c->pad_x_right = (uint8_t)d.pad_right;
        c->pad_y_top = (uint8_t)l->pad_top, c->pad_y_bottom = (uint8_t)l->pad_bottom;
        c->dilation_x = (uint8_t)d.dilation_x, c->dilation_y = (uint8_t)d.dilation_y;
        c->out_cvt.scale = 1;
        c->out_cvt.truncate = (uint8_t)L->cacc_trunc;
        struct dlasim_rt_conv_surface *cs = &co->surface.conv;
        cs->src_data = cube_of(bx, DLASIM_RT_MEM_MC);
        cs->src_data.height = (uint16_t)l->in_h;
        cs->src_data.offset = bx->offset + l->in_y0 * bx->line;
        cs->weight_data.type = DLASIM_RT_MEM_MC;
        cs->weight_data.address = wb->addr_index;
        cs->weight_data.size = plan.weight_bytes;
        cs->wmb_data.address = cs->wgs_data.address = -1;
        cs->dst_data = cube_of(by, DLASIM_RT_MEM_HW);
        cs->dst_data.height = (uint16_t)l->out_h;
        cs->dst_data.channel = (uint16_t)q.K;

        struct dlasim_rt_sdp_op *s = &so->op.sdp;
        s->lut_index = -1;
        s->out_cvt.scale = 1;
        s->batch_num = 1;
        s->x1_op.enable = 1;
        s->x1_op.alu_type = 2; /* SUM */
        s->x1_op.type = DLASIM_RT_SDP_BOTH;
        s->x1_op.mode = DLASIM_RT_SDP_PER_KERNEL;
        s->x1_op.act = L->relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
        s->x1_op.shift_value = (uint8_t)L->alu_shift;
        s->x1_op.truncate = (uint8_t)L->mul_shift;
        s->x1_op.precision = DLASIM_RT_INT16;
        struct dlasim_rt_sdp_surface *ss = &so->surface.sdp;
        ss->x2_data.address = -1;
        if (L->prelu) { /* X2 (BN) in PReLU mode: negative values times the slope */
            s->x2_op.enable = 1;
            s->x2_op.type = DLASIM_RT_SDP_MUL;
            s->x2_op.act = DLASIM_RT_ACT_PRELU;
            s->x2_op.truncate = (uint8_t)slope_shift;
            s->x2_op.precision = DLASIM_RT_INT16;
            s->x2_op.mode = slope_blob ? DLASIM_RT_SDP_PER_KERNEL : DLASIM_RT_SDP_PER_LAYER;
            s->x2_op.mul_operand = slope_q;
            if (slope_blob) {
                ss->x2_data.type = DLASIM_RT_MEM_MC;
                ss->x2_data.address = slope_blob->addr_index;
                ss->x2_data.size = (uint32_t)slope_blob->len;
                ss->x2_data.width = 1, ss->x2_data.height = 1;
                ss->x2_data.channel = (uint16_t)q.K;
            }
        }
        ss->src_data = cs->dst_data;
        ss->dst_data = cube_of(by, DLASIM_RT_MEM_MC);
        ss->dst_data.height = (uint16_t)l->out_h;
        ss->dst_data.offset = by->offset + l->out_y0 * by->line;
        ss->x1_data.type = DLASIM_RT_MEM_MC;
        ss->x1_data.address = sb->addr_index;
        ss->x1_data.size = (uint32_t)sb->len;
        ss->x1_data.width = 1, ss->x1_data.height = 1;
        ss->x1_data.channel = (uint16_t)q.K;
        ss->y_data.address = -1;
        L->n_hw_ops += 2;
    }
    dlasim_conv_plan_free(&plan);
    qconv_free(&q);
    return 0;
}

/* One PDP operation from memory to memory. */
static int pdp_op(struct opvec *v, const struct dlc_buf *bx, const struct dlc_buf *by, int mode,
                  int kh, int kw, int sy, int sx, int pt, int pl)
{
    struct dlasim_rt_op *o = new_op(v, DLASIM_RT_OP_PDP);
    if (!o) {
        return -1;
    }
    /* right / bottom padding the output size needs (ceil_mode included) */
    int pr = (int)((by->w - 1) * (uint32_t)sx + (uint32_t)kw) - (int)bx->w - pl;
    int pb = (int)((by->h - 1) * (uint32_t)sy + (uint32_t)kh) - (int)bx->h - pt;
    pr = pr < 0 ? 0 : pr;
    pb = pb < 0 ? 0 : pb;
    if (pr > 7 || pb > 7) {
        return -1;
    }
    struct dlasim_rt_pdp_op *p = &o->op.pdp;
    p->partial_in_width_first = (uint16_t)bx->w;
    p->partial_width_first = (uint16_t)by->w;
    p->split_num = 1;
    p->pool_mode = (uint8_t)mode;
    p->pool_width = (uint8_t)(kw - 1), p->pool_height = (uint8_t)(kh - 1);
    p->stride_x = (uint8_t)sx, p->stride_y = (uint8_t)sy;
    p->pad_left = (uint8_t)pl, p->pad_right = (uint8_t)pr;
    p->pad_top = (uint8_t)pt, p->pad_bottom = (uint8_t)pb;
    o->surface.io.src_data = cube_of(bx, DLASIM_RT_MEM_MC);
    o->surface.io.dst_data = cube_of(by, DLASIM_RT_MEM_MC);
    return 0;
}

/* A global pooling wider than PDP's 8x8 kernel as two poolings over
 * non-overlapping tiles (exact for max; for average, an average of equal
 * tiles' averages, rounded twice). 0 = no split possible. */
static int tile_split(uint32_t n, uint32_t *first)
{
    for (uint32_t a = 2; a <= 8; a++) {
        if (n % a == 0 && n / a <= 8) {
            *first = a;
            return 1;
        }
    }
    return n <= 8 ? (*first = 1, 1) : 0;
}

static int emit_pdp(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                    size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_buf *bx = &m->buf[stored(m, L->in_tensor)];
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    int mode = nd->op == DLC_OP_MAXPOOL ? 1 : 0;
    int rc;
    L->in_scale = L->out_scale = g->t[L->out_tensor].scale;
    if (nd->op == DLC_OP_GAP && (bx->h > 8 || bx->w > 8)) {
        uint32_t th = 1, tw = 1;
        tile_split(bx->h, &th);
        tile_split(bx->w, &tw);
        struct dlc_buf mid = *bx;
        mid.h = bx->h / th, mid.w = bx->w / tw;
        mid.line = mid.w * m->hw.atom_m;
        mid.surf = mid.line * mid.h;
        mid.size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, mid.w, mid.h, mid.c, 0, 0);
        mid.addr_index = add_address(m, mid.size);
        rc = mid.addr_index < 0 ? -1
                                : pdp_op(v, bx, &mid, mode, (int)th, (int)tw, (int)th, (int)tw, 0, 0);
        rc = rc ? rc : pdp_op(v, &mid, by, mode, (int)mid.h, (int)mid.w, 1, 1, 0, 0);
        L->n_hw_ops = 2;
    } else if (nd->op == DLC_OP_GAP) {
        rc = pdp_op(v, bx, by, mode, (int)bx->h, (int)bx->w, 1, 1, 0, 0);
        L->n_hw_ops = 1;
    } else {
        rc = pdp_op(v, bx, by, mode, nd->kernel[0], nd->kernel[1], nd->stride[0], nd->stride[1],
                    nd->pads[0], nd->pads[1]);
        L->n_hw_ops = 1;
    }
    return rc ? lfail(err, errlen, "node '%s': PDP programming out of range (padding above 7 "
                      "after ceil_mode) or out of memory", nd->name, NULL) : 0;
}

/* ---- SDP from memory: element-wise Add / Sub of two tensors, standalone Relu ---------- */

static int same_cube(const struct dlc_buf *a, const struct dlc_buf *b)
{
    return a->c == b->c && a->h == b->h && a->w == b->w;
}

/* Why an Add/Sub of two tensors or a Relu cannot run on SDP from memory (NULL = it can). */
static const char *sdp_refusal(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_tensor *y = &g->t[nd->out];
    int64_t c, h, w;
    dlc_cube_of(y, &c, &h, &w);
    struct dlc_buf want = { 0, (uint32_t)c, (uint32_t)h, (uint32_t)w, 0, 0, 0, 0 };
    int n = nd->op == DLC_OP_RELU ? 1 : 2;
    for (int i = 0; i < n; i++) {
        const struct dlc_tensor *x = &g->t[nd->in[i]];
        if (x->is_const) {
            return "element-wise operation with a constant not after a convolution";
        }
        if (x->n != y->n || !same_cube(&m->buf[stored(m, nd->in[i])], &want)) {
            return "operands of different shapes (broadcasting) or stored in another layout";
        }
    }
    if (nd->n_in == 2 && nd->in[0] == nd->in[1]) {
        return "both operands are the same tensor";
    }
    return NULL;
}

static int16_t fit16(double v, uint32_t *shift, int max_shift)
{
    int sh = v > 0 ? (int)floor(log2(32767.0 / v)) : 0;
    sh = sh < 0 ? 0 : sh > max_shift ? max_shift : sh;
    *shift = (uint32_t)sh;
    return sat16(v * ldexp(1.0, sh));
}

/* SDP reading `src` from memory:
 *   Relu:     BS ReLU only (the output keeps the input's scale);
 *   Add/Sub:  BS multiplies src by its scale ratio to the other operand's
 *             scale / 2^K (per-layer MUL, negative for the subtrahend), BN
 *             adds the other operand read per element by NRDMA (ALU,
 *             shifted left by K), ReLU when a Relu follows, and the output
 *             converter scales to the output's scale. */
static int emit_sdp(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                    size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    struct dlasim_rt_op *o = new_op(v, DLASIM_RT_OP_SDP);
    if (!o) {
        return lfail(err, errlen, "node '%s': too many hardware operations", nd->name, NULL);
    }
    struct dlasim_rt_sdp_op *s = &o->op.sdp;
    struct dlasim_rt_sdp_surface *ss = &o->surface.sdp;
    s->lut_index = -1;
    s->out_cvt.scale = 1;
    s->batch_num = 1;
    ss->x1_data.address = ss->x2_data.address = ss->y_data.address = -1;
    ss->dst_data = cube_of(by, DLASIM_RT_MEM_MC);
    L->n_hw_ops = 1;
    if (nd->op == DLC_OP_RELU) {
        ss->src_data = cube_of(&m->buf[stored(m, nd->in[0])], DLASIM_RT_MEM_MC);
        s->x1_op.enable = 1;
        s->x1_op.type = DLASIM_RT_SDP_NONE;
        s->x1_op.act = DLASIM_RT_ACT_RELU;
        return 0;
    }
    if (nd->op == DLC_OP_MUL) { /* X2 multiplies by the other operand read per element */
        int a = stored(m, nd->in[0]), b = stored(m, nd->in[1]);
        ss->src_data = cube_of(&m->buf[a], DLASIM_RT_MEM_MC);
        s->x2_op.enable = 1;
        s->x2_op.type = DLASIM_RT_SDP_MUL;
        s->x2_op.mode = DLASIM_RT_SDP_PER_POINT;
        s->x2_op.act = L->relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
        s->x2_op.precision = DLASIM_RT_INT8;
        ss->x2_data = cube_of(&m->buf[b], DLASIM_RT_MEM_MC);
        uint32_t t_out = 0;
        s->out_cvt.scale = fit16((double)g->t[a].scale * g->t[b].scale / g->t[L->out_tensor].scale,
                                 &t_out, 63);
        s->out_cvt.truncate = (uint8_t)t_out;
        L->cacc_trunc = t_out;
        return 0;
    }
    int sub = nd->op == DLC_OP_SUB;
    /* Sub: the subtrahend is the source (negated), the minuend the operand */
    int src_t = stored(m, nd->in[sub ? 1 : 0]), opd_t = stored(m, nd->in[sub ? 0 : 1]);
    double s_src = g->t[src_t].scale, s_opd = g->t[opd_t].scale, s_out = g->t[L->out_tensor].scale;
    double r = s_src / s_opd;
    int k = 7;
    while (k > 0 && r * ldexp(1.0, k) > 8192.0) {
        k--;
    }
    uint32_t t_src = 0, t_out = 0;
    int16_t m_src = fit16(r * ldexp(1.0, k), &t_src, 31);
    int16_t m_out = fit16(s_opd / ldexp(1.0, k) / s_out, &t_out, 63);
    ss->src_data = cube_of(&m->buf[src_t], DLASIM_RT_MEM_MC);
    s->x1_op.enable = 1;
    s->x1_op.type = DLASIM_RT_SDP_MUL;
    s->x1_op.mode = DLASIM_RT_SDP_PER_LAYER;
    s->x1_op.mul_operand = sub ? -m_src : m_src;
    s->x1_op.truncate = (uint8_t)t_src;
    s->x1_op.precision = DLASIM_RT_INT16;
    s->x2_op.enable = 1;
    s->x2_op.alu_type = 2; /* SUM */
    s->x2_op.type = DLASIM_RT_SDP_ADD;
    s->x2_op.mode = DLASIM_RT_SDP_PER_POINT;
    s->x2_op.shift_value = (uint8_t)k;
    s->x2_op.act = L->relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
    s->x2_op.precision = DLASIM_RT_INT8;
    ss->x2_data = cube_of(&m->buf[opd_t], DLASIM_RT_MEM_MC);
    s->out_cvt.scale = m_out;
    s->out_cvt.truncate = (uint8_t)t_out;
    L->mul_shift = t_src;
    L->alu_shift = (uint32_t)k;
    L->cacc_trunc = t_out;
    return 0;
}

/* ---- LRN on CDP ------------------------------------------------------------------------ */

static const char *lrn_refusal(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_tensor *x = &m->g.t[nd->in[0]];
    const struct dlc_buf *b = &m->buf[stored(m, nd->in[0])];
    if (nd->size < 3 || nd->size > 9 || nd->size % 2 == 0) {
        return "LRN size other than 3, 5, 7 or 9 (CDP's local sizes)";
    }
    if (b->c != x->dims[1] || b->h != x->dims[2] || b->w != x->dims[3]) {
        return "its input is a view whose layout differs from the stored cube";
    }
    if (nd->bias <= 0 || nd->alpha < 0) {
        return "bias <= 0 or alpha < 0";
    }
    return NULL;
}

/* LRN: y = x / (bias + alpha / size * sum x^2)^beta.  CDP squares the int8
 * input (converter scale 1), sums over the window, looks the sum up in its
 * LUT, multiplies by the input and converts: the LUT holds
 * f(s) = (bias + alpha / size * s * s_in^2)^-beta * 2^F, the linear-only
 * table (257 entries) over the whole range of square sums, the finer
 * linear-exponent table (65 entries, linear mode) over its first part,
 * preferred where both hit; flat extrapolation outside.  The output
 * converter scales by s_in / (s_out * 2^F). */
static int emit_cdp(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                    size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_buf *bx = &m->buf[stored(m, L->in_tensor)];
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    struct dlasim_rt_lut *nl = realloc(v->luts, (size_t)(v->n_luts + 1) * sizeof *nl);
    if (!nl) {
        return lfail(err, errlen, "node '%s': out of memory", nd->name, NULL);
    }
    v->luts = nl;
    struct dlasim_rt_lut *lut = &v->luts[v->n_luts];
    memset(lut, 0, sizeof *lut);
    double s_in = L->in_scale, s_out = L->out_scale;
    uint64_t smax = (uint64_t)nd->size * 128 * 128; /* largest square sum */
    int sel = 0;
    while ((smax >> sel) > 256) {
        sel++;
    }
    int sel_le = sel >= 2 ? sel - 2 : 0;
    double fmax = pow(nd->bias, -nd->beta); /* f is largest at s = 0 (beta >= 0) */
    if (nd->beta < 0) {
        fmax = pow(nd->bias + nd->alpha / nd->size * (double)smax * s_in * s_in, -nd->beta);
    }
    int F = (int)floor(log2(32767.0 / fmax));
    F = F > 30 ? 30 : F;
    for (int i = 0; i < 257; i++) {
        double sq = (double)((uint64_t)i << sel);
        lut->linear_only_table[i] =
            sat16(pow(nd->bias + nd->alpha / nd->size * sq * s_in * s_in, -nd->beta) * ldexp(1.0, F));
    }
    for (int i = 0; i < 65; i++) {
        double sq = (double)((uint64_t)i << sel_le);
        lut->linear_exp_table[i] =
            sat16(pow(nd->bias + nd->alpha / nd->size * sq * s_in * s_in, -nd->beta) * ldexp(1.0, F));
    }
    lut->method = 1; /* linear */
    lut->linear_exp_offset = (int8_t)sel_le;
    lut->linear_only_offset = (int8_t)sel;
    lut->linear_exp_start = 0, lut->linear_exp_end = (uint64_t)64 << sel_le;
    lut->linear_only_start = 0, lut->linear_only_end = (uint64_t)256 << sel;
    lut->hybrid_priority = 0;    /* LE where both hit */
    lut->underflow_priority = 0; /* never: square sums start at 0 */
    lut->overflow_priority = 1;  /* LO past the LE table */
    struct dlasim_rt_op *o = new_op(v, DLASIM_RT_OP_CDP);
    if (!o) {
        return lfail(err, errlen, "node '%s': too many hardware operations", nd->name, NULL);
    }
    struct dlasim_rt_cdp_op *c = &o->op.cdp;
    c->lut_index = (int16_t)v->n_luts++;
    c->in_cvt.scale = 1;
    c->local_size = (uint8_t)nd->size;
    uint32_t t_out = 0;
    int16_t m_out = fit16(s_in / (s_out * ldexp(1.0, F)), &t_out, 63);
    c->out_cvt.scale = m_out;
    c->out_cvt.truncate = (uint8_t)t_out;
    o->surface.io.src_data = cube_of(bx, DLASIM_RT_MEM_MC);
    o->surface.io.dst_data = cube_of(by, DLASIM_RT_MEM_MC);
    L->n_hw_ops = 1;
    L->mul_shift = (uint32_t)F;
    L->alu_shift = (uint32_t)sel;
    L->cacc_trunc = t_out;
    return 0;
}

/* ---- element-wise functions on the SDP LUT --------------------------------------------- */

static const char *lut_refusal(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_tensor *x = &m->g.t[nd->in[0]];
    int64_t c, h, w;
    dlc_cube_of(x, &c, &h, &w);
    const struct dlc_buf *b = &m->buf[stored(m, nd->in[0])];
    if (!m->sdp_lut) {
        return "the configuration has no SDP LUT (NVDLA_SDP_LUT_ENABLE)";
    }
    if (b->c != c || b->h != h || b->w != w) {
        return "its input is a view whose layout differs from the stored cube";
    }
    return NULL;
}

static double lut_function(enum dlc_op op, double x)
{
    return op == DLC_OP_SIGMOID ? 1.0 / (1.0 + exp(-x)) : tanh(x);
}

/* Sigmoid / Tanh: SDP reads the int8 input, the Y (EW) stage looks each
 * value up in the linear-only table (257 entries starting at -129, index
 * select 0: entry i holds f((i - 129) * s_in) * 2^F, so every int8 input
 * has its own entry and no interpolation happens; the linear-exponent table
 * is placed where it never hits, the LO table wins every tie, the flat
 * overflow extrapolation serves 127), and the output converter scales by
 * 1 / (s_out * 2^F). */
static int emit_sdp_lut(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                        size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    struct dlasim_rt_lut *nl = realloc(v->luts, (size_t)(v->n_luts + 1) * sizeof *nl);
    if (!nl) {
        return lfail(err, errlen, "node '%s': out of memory", nd->name, NULL);
    }
    v->luts = nl;
    struct dlasim_rt_lut *lut = &v->luts[v->n_luts];
    memset(lut, 0, sizeof *lut);
    double s_in = L->in_scale, fmax = 0;
    for (int i = 0; i < 257; i++) {
        double f = fabs(lut_function(nd->op, (i - 129) * s_in));
        fmax = f > fmax ? f : fmax;
    }
    int F = fmax > 0 ? (int)floor(log2(32767.0 / fmax)) : 0;
    F = F > 30 ? 30 : F < 0 ? 0 : F;
    for (int i = 0; i < 257; i++) {
        lut->linear_only_table[i] = sat16(lut_function(nd->op, (i - 129) * s_in) * ldexp(1.0, F));
    }
    lut->method = 1;
    lut->linear_only_start = (uint64_t)(int64_t)-129;
    lut->linear_only_end = 127;
    lut->linear_exp_start = (uint64_t)1 << 30; /* never hit */
    lut->linear_exp_end = ((uint64_t)1 << 30) + 64;
    lut->hybrid_priority = lut->underflow_priority = lut->overflow_priority = 1; /* LO */
    struct dlasim_rt_op *o = new_op(v, DLASIM_RT_OP_SDP);
    if (!o) {
        return lfail(err, errlen, "node '%s': too many hardware operations", nd->name, NULL);
    }
    struct dlasim_rt_sdp_op *s = &o->op.sdp;
    struct dlasim_rt_sdp_surface *ss = &o->surface.sdp;
    s->lut_index = (int16_t)v->n_luts++;
    s->batch_num = 1;
    s->y_op.enable = 1;
    s->y_op.type = DLASIM_RT_SDP_NONE;
    s->y_op.act = DLASIM_RT_ACT_LUT;
    uint32_t t_out = 0;
    s->out_cvt.scale = fit16(1.0 / (L->out_scale * ldexp(1.0, F)), &t_out, 63);
    s->out_cvt.truncate = (uint8_t)t_out;
    ss->src_data = cube_of(&m->buf[stored(m, nd->in[0])], DLASIM_RT_MEM_MC);
    ss->dst_data = cube_of(&m->buf[L->out_tensor], DLASIM_RT_MEM_MC);
    ss->x1_data.address = ss->x2_data.address = ss->y_data.address = -1;
    L->n_hw_ops = 1;
    L->mul_shift = (uint32_t)F;
    L->cacc_trunc = t_out;
    return 0;
}

/* ---- per-channel affine layers on SDP ---------------------------------------------------- */

/* y = a_k * x + b_k per channel for a standalone BatchNormalization or an
 * Add/Sub/Mul of a per-channel (or scalar) constant; 0 when it is not one
 * (or a_k = 0 with b_k != 0, which the ALU-then-MUL order cannot give). */
static int affine_of(const struct dlasim_model *m, const struct dlc_node *nd, int64_t k,
                     double *a, double *b)
{
    const struct dlc_graph *g = &m->g;
    int ai = 0, ci = 0;
    if (nd->op == DLC_OP_BN) {
        const float *sc = g->t[nd->in[1]].data, *bb = g->t[nd->in[2]].data;
        const float *mean = g->t[nd->in[3]].data, *var = g->t[nd->in[4]].data;
        for (int64_t i = 0; i < k; i++) {
            a[i] = sc[i] / sqrt((double)var[i] + nd->epsilon);
            b[i] = bb[i] - mean[i] * a[i];
        }
    } else if ((nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB || nd->op == DLC_OP_MUL) &&
               per_channel_const(g, nd, k, &ai, &ci) && (nd->op != DLC_OP_SUB || ai == 0)) {
        const struct dlc_tensor *c = &g->t[nd->in[ci]];
        for (int64_t i = 0; i < k; i++) {
            double v = c->data[c->n == 1 ? 0 : i];
            a[i] = nd->op == DLC_OP_MUL ? v : 1.0;
            b[i] = nd->op == DLC_OP_MUL ? 0.0 : nd->op == DLC_OP_SUB ? -v : v;
        }
    } else {
        return 0;
    }
    for (int64_t i = 0; i < k; i++) {
        if (a[i] == 0 && b[i] != 0) {
            return 0;
        }
    }
    return 1;
}

static const char *affine_refusal(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_tensor *y = &g->t[nd->out];
    if (y->rank != 4 && y->rank != 2) {
        return "per-channel operation on a tensor that is not NCHW or [1, C]";
    }
    int64_t c, h, w;
    dlc_cube_of(y, &c, &h, &w);
    int act = nd->op == DLC_OP_BN ? 0 : g->t[nd->in[0]].is_const ? 1 : 0;
    const struct dlc_buf *bx = &m->buf[stored(m, nd->in[act])];
    if (g->t[nd->in[act]].n != y->n || bx->c != c || bx->h != h || bx->w != w) {
        return "operand broadcast over more than channels, or stored in another layout";
    }
    double *a = malloc((size_t)c * sizeof(double)), *b = malloc((size_t)c * sizeof(double));
    int ok = a && b && affine_of(m, nd, c, a, b);
    free(a);
    free(b);
    return ok ? NULL : "not a per-channel affine function SDP can apply (scale 0 with an offset)";
}

/* X1 (BS) with per-kernel operands from memory, as after a convolution:
 * (q + bias_k << ALU shift) * mul_k >> MUL shift, mul_k / 2^shift =
 * a_k * s_in / s_out, bias_k = b_k / (a_k * s_in); ReLU when one follows. */
static int emit_sdp_affine(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v,
                           char *err, size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    int act = nd->op == DLC_OP_BN ? 0 : g->t[nd->in[0]].is_const ? 1 : 0;
    const struct dlc_buf *bx = &m->buf[stored(m, nd->in[act])];
    int64_t k = bx->c;
    double *a = malloc((size_t)k * sizeof(double)), *b = malloc((size_t)k * sizeof(double));
    struct dlc_blob *blob = a && b && affine_of(m, nd, k, a, b) ? add_blob(m, (size_t)k * 4) : NULL;
    struct dlasim_rt_op *o = blob ? new_op(v, DLASIM_RT_OP_SDP) : NULL;
    if (!o) {
        free(a);
        free(b);
        return lfail(err, errlen, "node '%s': out of memory", nd->name, NULL);
    }
    double mmax = 0, bmax = 0;
    for (int64_t i = 0; i < k; i++) {
        double mk = fabs(a[i]) * L->in_scale / L->out_scale;
        double bk = a[i] != 0 ? fabs(b[i] / (a[i] * L->in_scale)) : 0;
        mmax = mk > mmax ? mk : mmax;
        bmax = bk > bmax ? bk : bmax;
    }
    uint32_t sh = 0;
    fit16(mmax > 0 ? mmax : 1.0, &sh, 31);
    int ash = 0;
    while (bmax / ldexp(1.0, ash) > 32767.0 && ash < 31) {
        ash++;
    }
    for (int64_t i = 0; i < k; i++) {
        uint16_t al = (uint16_t)sat16(a[i] != 0 ? b[i] / (a[i] * L->in_scale) / ldexp(1.0, ash) : 0);
        uint16_t mu = (uint16_t)sat16(a[i] * L->in_scale / L->out_scale * ldexp(1.0, (int)sh));
        blob->data[4 * i] = (uint8_t)al, blob->data[4 * i + 1] = (uint8_t)(al >> 8);
        blob->data[4 * i + 2] = (uint8_t)mu, blob->data[4 * i + 3] = (uint8_t)(mu >> 8);
    }
    free(a);
    free(b);
    struct dlasim_rt_sdp_op *s = &o->op.sdp;
    struct dlasim_rt_sdp_surface *ss = &o->surface.sdp;
    s->lut_index = -1;
    s->out_cvt.scale = 1;
    s->batch_num = 1;
    s->x1_op.enable = 1;
    s->x1_op.alu_type = 2; /* SUM */
    s->x1_op.type = DLASIM_RT_SDP_BOTH;
    s->x1_op.mode = DLASIM_RT_SDP_PER_KERNEL;
    s->x1_op.act = L->relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
    s->x1_op.shift_value = (uint8_t)ash;
    s->x1_op.truncate = (uint8_t)sh;
    s->x1_op.precision = DLASIM_RT_INT16;
    ss->src_data = cube_of(bx, DLASIM_RT_MEM_MC);
    ss->dst_data = cube_of(&m->buf[L->out_tensor], DLASIM_RT_MEM_MC);
    ss->x1_data.type = DLASIM_RT_MEM_MC;
    ss->x1_data.address = blob->addr_index;
    ss->x1_data.size = (uint32_t)blob->len;
    ss->x1_data.width = 1, ss->x1_data.height = 1;
    ss->x1_data.channel = (uint16_t)k;
    ss->x2_data.address = ss->y_data.address = -1;
    L->n_hw_ops = 1;
    L->mul_shift = sh;
    L->alu_shift = (uint32_t)ash;
    return 0;
}

/* ---- sequencing within one network ------------------------------------------------- */

static void depend(struct dlasim_rt_op *ops, int from, int slot, int to, uint8_t event)
{
    ops[from].consumers[slot] = (struct dlasim_rt_consumer){ (int16_t)to, event };
    ops[to].dependency_count++;
}

/* ops[first..n): units of CONV+SDP pairs and single PDP operations, run in order. */
static void link_network(struct dlasim_rt_op *ops, int n, int16_t *head)
{
    int last[DLASIM_RT_OP_NUM], prev_tail = -1;
    for (int t = 0; t < DLASIM_RT_OP_NUM; t++) {
        last[t] = -1;
        head[t] = -1;
    }
    for (int i = 0; i < n;) {
        int pair = ops[i].op_type == DLASIM_RT_OP_CONV;
        int unit_n = pair ? 2 : 1;
        int hd = pair ? i + 1 : i, tail = hd;
        if (pair) {
            depend(ops, i, DLASIM_RT_OP_SDP, i + 1, DLASIM_RT_EVENT_OP_PROGRAMMED);
            ops[i + 1].fused_parent = (struct dlasim_rt_consumer){ (int16_t)i, DLASIM_RT_EVENT_OP_ENABLED };
            ops[i].dependency_count++;
        }
        for (int k = i; k < i + unit_n; k++) { /* each engine's chain, in order */
            int t = ops[k].op_type;
            if (last[t] >= 0) {
                depend(ops, last[t], t, k, DLASIM_RT_EVENT_OP_COMPLETED);
            } else {
                head[t] = (int16_t)k;
            }
            last[t] = k;
        }
        if (prev_tail >= 0) { /* the previous layer's output is this one's input */
            int t = ops[hd].op_type;
            if (ops[prev_tail].consumers[t].index == -1) {
                depend(ops, prev_tail, t, hd, DLASIM_RT_EVENT_OP_COMPLETED);
            }
        }
        prev_tail = tail;
        i += unit_n;
    }
}

static int close_network(struct dlasim_model *m, struct opvec *v)
{
    if (v->n == 0) {
        free(v->luts);
        v->luts = NULL;
        v->n_luts = 0;
        return 0;
    }
    struct dlc_step *s = realloc(m->steps, (size_t)(m->n_steps + 1) * sizeof *s);
    if (!s) {
        return -1;
    }
    m->steps = s;
    s = &m->steps[m->n_steps++];
    memset(s, 0, sizeof *s);
    s->cpu_layer = -1;
    s->ops = v->ops;
    s->n_ops = (uint16_t)v->n;
    s->luts = v->luts;
    s->n_luts = (uint16_t)v->n_luts;
    link_network(s->ops, v->n, s->op_head);
    memset(v, 0, sizeof *v);
    return 0;
}

static int add_cpu_step(struct dlasim_model *m, int layer)
{
    struct dlc_step *s = realloc(m->steps, (size_t)(m->n_steps + 1) * sizeof *s);
    if (!s) {
        return -1;
    }
    m->steps = s;
    s = &m->steps[m->n_steps++];
    memset(s, 0, sizeof *s);
    s->cpu_layer = layer;
    return 0;
}

/* ---- Concat by output placement ------------------------------------------------------- */

/* Producers that choose their output scale (so a Concat input can take the
 * Concat's): not pooling (PDP keeps its input's scale), not a view, not a
 * standalone Relu. */
static int rescaling_producer(const struct dlc_graph *g, int t)
{
    int p = g->t[t].producer;
    if (p < 0) {
        return 0;
    }
    enum dlc_op op = g->nodes[p].op;
    if (op == DLC_OP_RELU || op == DLC_OP_CLIP || op == DLC_OP_LEAKYRELU || op == DLC_OP_PRELU ||
        ((op == DLC_OP_ADD || op == DLC_OP_SUB || op == DLC_OP_MUL) &&
         (g->t[g->nodes[p].in[0]].is_const || g->t[g->nodes[p].in[1]].is_const))) {
        /* fused after a convolution (or a CPU layer) when its input comes from one */
        int in = g->nodes[p].in[0];
        if (g->t[in].is_const && g->nodes[p].n_in > 1) {
            in = g->nodes[p].in[1];
        }
        return g->t[in].consumers == 1 && rescaling_producer(g, in);
    }
    return !is_view(op) && op != DLC_OP_MAXPOOL && op != DLC_OP_AVGPOOL && op != DLC_OP_GAP &&
           op != DLC_OP_CONCAT;
}

/* A channel Concat whose inputs can be written straight into its output:
 * every input but the last a whole number of Atomic-M surfaces, none the
 * model's input or output, each produced by a layer that sets its own
 * scale.  The inputs then share the output's buffer (at their surface
 * offset) and scale (the largest range of them all). */
static int place_concat(struct dlasim_model *m, int node)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[node];
    const struct dlc_tensor *y = &g->t[nd->out];
    if (y->rank != 4 || nd->axis != 1 || m->no_place[node]) {
        return 0;
    }
    uint32_t c0 = 0;
    float amax = y->amax;
    for (int i = 0; i < nd->n_in; i++) {
        int t = nd->in[i];
        const struct dlc_tensor *x = &g->t[t];
        for (int j = 0; j < i; j++) {
            if (nd->in[j] == t) {
                return 0;
            }
        }
        if (x->is_const || t == g->input || t == g->output || m->buf[t].addr_index >= 0 ||
            !rescaling_producer(g, t) || (i + 1 < nd->n_in && x->dims[1] % m->hw.atom_m)) {
            return 0;
        }
        amax = x->amax > amax ? x->amax : amax;
        c0 += (uint32_t)x->dims[1];
    }
    if (materialize(m, nd->out)) {
        return -1;
    }
    const struct dlc_buf *by = &m->buf[nd->out];
    c0 = 0;
    for (int i = 0; i < nd->n_in; i++) {
        int t = nd->in[i];
        struct dlc_buf *b = &m->buf[t];
        *b = *by;
        b->c = (uint32_t)g->t[t].dims[1];
        b->offset = c0 / m->hw.atom_m * by->surf;
        b->size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, b->w, b->h, b->c, 0, 0);
        g->t[t].amax = amax;
        g->t[t].scale = dlc_quant_scale(amax);
        c0 += b->c;
    }
    g->t[nd->out].amax = amax;
    g->t[nd->out].scale = dlc_quant_scale(amax);
    return 1;
}

/* ---- CBUF weight ring between convolutions ---------------------------------------------- */

/* CSC keeps its weight ring pointers from one convolution to the next
 * unless D_BANK changes (vmod NV_NVDLA_CSC_sg.v need_pending; see the
 * planner's restart_weight_ring in src/plan/conv_plan.c): a layer whose
 * groups release fewer entries than CDMA wrote (D_WEIGHT_BYTES is padded to
 * 128 bytes) would make the next one read its kernels late.  So no CONV
 * operation of the model has the D_BANK of the one before it, cyclically
 * (the last of one inference precedes the first of the next; a model with
 * one convolution resets the device before each inference): a repeated
 * one takes one weight bank more when CBUF has a free bank, else one data
 * bank less when its input lines still fit. */
/* CBUF entries CDMA writes but CSC does not release for this operation
 * (as the planner's weight_ring_lag). */
static uint64_t ring_lag(const struct dlasim_model *m, const struct dlasim_rt_op *op)
{
    const struct dlasim_rt_conv_op *c = &op->op.conv;
    uint64_t e = m->hw.bank_width, released = 0;
    uint32_t k = op->surface.conv.dst_data.channel;
    for (uint32_t k0 = 0; k0 < k; k0 += m->hw.atomic_k) {
        uint32_t kg = k - k0 < m->hw.atomic_k ? k - k0 : m->hw.atomic_k;
        released += ((uint64_t)kg * c->bytes_per_kernel + e - 1) / e;
    }
    uint64_t written = ((uint64_t)op->surface.conv.weight_data.size + e - 1) / e;
    return written > released ? written - released : 0;
}

/* Variant `which` of the D_BANK of the group of operations ops[0..n) (a
 * layer that fetches its weights and the bands that reuse them, which must
 * keep its banks): 0 as planned, 1/3 one/two weight banks more when CBUF
 * has them free, 2 one data bank less when every band's input lines still
 * fit, 4 one weight bank less when every kernel still fits. */
static int bank_variant(const struct dlasim_model *m, struct dlasim_rt_op *const *ops, size_t n,
                        int which, uint8_t *db, uint8_t *wb)
{
    const struct dlasim_rt_conv_op *c = &ops[0]->op.conv;
    uint32_t need = 1;
    for (size_t i = 0; i < n; i++) {
        const struct dlasim_rt_conv_op *o = &ops[i]->op.conv;
        uint32_t r = (uint32_t)(((uint64_t)o->entry_per_slice * o->input_height_csc +
                                 m->hw.bank_depth - 1) / m->hw.bank_depth);
        need = r > need ? r : need;
    }
    uint64_t bank = (uint64_t)m->hw.bank_width * m->hw.bank_depth;
    *db = c->data_bank, *wb = c->weight_bank;
    switch (which) {
    case 0:
        return 1;
    case 1:
    case 3:
        if ((uint32_t)c->data_bank + c->weight_bank + (uint32_t)(which == 1 ? 1 : 2) <= m->hw.banks) {
            *wb = (uint8_t)(*wb + (which == 1 ? 1 : 2));
            return 1;
        }
        return 0;
    case 2:
        if (c->data_bank > 1 && (uint32_t)c->data_bank - 1 >= need) {
            (*db)--;
            return 1;
        }
        return 0;
    default:
        if (c->weight_bank > 1 &&
            (uint64_t)(c->weight_bank - 1) * bank >= ops[0]->surface.conv.weight_data.size) {
            (*wb)--;
            return 1;
        }
        return 0;
    }
}

/* Operations of the model that fetch weights (weight_reuse 0), each with
 * the bands after it that reuse them. */
struct wgroup {
    struct dlasim_rt_op **ops;
    size_t n;
};

static int same_banks(const struct dlasim_rt_op *a, uint8_t db, uint8_t wb)
{
    return a->op.conv.data_bank == db && a->op.conv.weight_bank == wb;
}

static int separate_banks(struct dlasim_model *m, char *err, size_t errlen)
{
    struct dlasim_rt_op **convs = NULL;
    struct wgroup *grp = NULL;
    size_t n = 0, ng = 0;
    int rc = 0;
    for (int s = 0; s < m->n_steps && !rc; s++) {
        for (int i = 0; i < m->steps[s].n_ops && !rc; i++) {
            if (m->steps[s].ops[i].op_type != DLASIM_RT_OP_CONV) {
                continue;
            }
            struct dlasim_rt_op **nc = realloc(convs, (n + 1) * sizeof *nc);
            if (!nc) {
                rc = -1;
                break;
            }
            convs = nc;
            convs[n++] = &m->steps[s].ops[i];
        }
    }
    for (size_t i = 0; i < n && !rc; i++) { /* groups (pointers into convs, set below) */
        if (i == 0 || !convs[i]->op.conv.weight_reuse) {
            struct wgroup *g2 = realloc(grp, (ng + 1) * sizeof *g2);
            if (!g2) {
                rc = -1;
                break;
            }
            grp = g2;
            grp[ng].ops = convs + i;
            grp[ng++].n = 0;
        }
        grp[ng - 1].n++;
    }
    if (rc) {
        free(convs);
        free(grp);
        return lfail(err, errlen, "out of memory", NULL, NULL);
    }
    m->reset_each_run = 0;
    for (size_t k = 0; k < ng && !rc; k++) {
        struct wgroup *g = &grp[k];
        const struct wgroup *pg = &grp[(k + ng - 1) % ng], *ngp = &grp[(k + 1) % ng];
        const struct dlasim_rt_op *prev = pg->ops[pg->n - 1];
        const struct dlasim_rt_op *next = ngp->ops[0];
        /* the previous group left entries behind: this one must change banks;
         * the last one must also differ from the first (next inference) */
        int must_prev = ng > 1 && ring_lag(m, prev) > 0;
        int must_next = ng > 1 && k + 1 == ng && ring_lag(m, g->ops[g->n - 1]) > 0;
        int ok = 0;
        for (int which = 0; which < 5 && !ok; which++) {
            uint8_t db, wb;
            if (!bank_variant(m, g->ops, g->n, which, &db, &wb)) {
                continue;
            }
            ok = !(must_prev && same_banks(prev, db, wb)) && !(must_next && same_banks(next, db, wb));
            for (size_t i = 0; ok && i < g->n; i++) {
                g->ops[i]->op.conv.data_bank = db;
                g->ops[i]->op.conv.weight_bank = wb;
            }
        }
        if (!ok && (k == 0 || k + 1 == ng)) {
            m->reset_each_run = 1; /* the wrap between inferences: a reset instead */
            ok = 1;
        }
        if (!ok) {
            rc = lfail(err, errlen, "convolution layers with the same CBUF banks one after the "
                       "other and no bank to spare: the weight ring cannot restart", NULL, NULL);
        }
    }
    /* one weight group leaving entries behind follows itself at the next inference */
    if (ng == 1 && ring_lag(m, grp[0].ops[grp[0].n - 1]) > 0) {
        m->reset_each_run = 1;
    }
    free(convs);
    free(grp);
    return rc;
}

/* ---- the pass ------------------------------------------------------------------------- */

static const char *cpu_reason(const struct dlasim_model *m, const struct dlc_node *nd)
{
    switch (nd->op) {
    case DLC_OP_SOFTMAX: return "Softmax has no NVDLA engine (NVIDIA's runtime runs it as an EMU task)";
    case DLC_OP_LEAKYRELU:
    case DLC_OP_PRELU:
    case DLC_OP_CLIP: return "activation not after a convolution (no standalone SDP lowering yet)";
    case DLC_OP_ADD:
    case DLC_OP_SUB:
    case DLC_OP_MUL: return "element-wise operation with a constant not after a convolution";
    case DLC_OP_CONCAT: return "concatenation not placed by output placement in this version";
    case DLC_OP_TRANSPOSE: return "changes the data layout";
    case DLC_OP_RESIZE: return "nearest upsampling has no lowering in this version";
    case DLC_OP_PAD: return "explicit padding not folded into a following convolution";
    case DLC_OP_BN: return "BatchNormalization not after a convolution";
    default: (void)m; return "no hardware lowering";
    }
}

static struct dlc_layer *new_layer(struct dlasim_model *m, int node)
{
    struct dlc_layer *L = &m->layers[m->n_layers++];
    memset(L, 0, sizeof *L);
    L->node = node;
    L->in_tensor = m->g.nodes[node].in[0];
    L->out_tensor = m->g.nodes[node].out;
    return L;
}

void dlc_lower_free(struct dlasim_model *m)
{
    for (int i = 0; i < m->n_steps; i++) {
        free(m->steps[i].ops);
        free(m->steps[i].luts);
    }
    for (int i = 0; i < m->n_blobs; i++) {
        free(m->blobs[i].data);
    }
    free(m->steps);
    free(m->blobs);
    free(m->layers);
    free(m->buf);
    free(m->store);
    free(m->addrs);
    m->steps = NULL, m->blobs = NULL, m->layers = NULL, m->buf = NULL, m->store = NULL;
    m->addrs = NULL;
    m->n_steps = m->n_blobs = m->n_layers = m->n_addrs = m->cap_addrs = 0;
    m->loaded_dev = NULL;
}

static int lower_once(struct dlasim_model *m, int *retry, char *err, size_t errlen)
{
    struct dlc_graph *g = &m->g;
    dlc_lower_free(m);
    m->next_addr = DEV_BASE;
    m->buf = calloc((size_t)g->n_t, sizeof *m->buf);
    m->store = calloc((size_t)g->n_t, sizeof *m->store);
    m->layers = calloc((size_t)g->n_nodes + 1, sizeof *m->layers);
    if (!m->buf || !m->store || !m->layers) {
        return lfail(err, errlen, "out of memory", NULL, NULL);
    }
    for (int i = 0; i < g->n_t; i++) {
        m->buf[i].addr_index = -1;
        m->store[i] = i;
    }
    /* address-list entries 0..3 are kept for the descriptor lists of a
     * loadable (the network descriptor must be entry 0) */
    for (int i = 0; i < DLC_RESERVED_ADDRS; i++) {
        if (add_address(m, 0) < 0) {
            return lfail(err, errlen, "out of memory", NULL, NULL);
        }
    }
    if (materialize(m, g->input)) {
        return lfail(err, errlen, "input '%s': does not fit device memory", g->t[g->input].name, NULL);
    }
    char *fused = calloc((size_t)g->n_nodes, 1);
    char *placed = calloc((size_t)g->n_nodes, 1);
    struct opvec v = { NULL, 0, 0, NULL, 0 };
    int rc = 0;
    if (!fused || !placed) {
        free(fused);
        free(placed);
        return lfail(err, errlen, "out of memory", NULL, NULL);
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        if (!g->nodes[i].dead && g->nodes[i].op == DLC_OP_CONCAT) {
            int r = place_concat(m, i);
            rc = r < 0 ? lfail(err, errlen, "node '%s': output does not fit device memory",
                               g->nodes[i].name, NULL) : 0;
            placed[i] = r > 0;
        }
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        struct dlc_node *nd = &g->nodes[i];
        if (nd->dead || fused[i]) {
            continue;
        }
        struct dlc_layer *L = new_layer(m, i);
        const char *why = NULL;
        if (placed[i]) { /* its producers wrote it; check they kept its scale */
            L->engine = DLC_ENG_PLACED;
            for (int k = 0; k < nd->n_in; k++) {
                if (g->t[nd->in[k]].scale != g->t[nd->out].scale) {
                    m->no_place[i] = 1;
                    *retry = 1;
                }
            }
            continue;
        }
        if (is_view(nd->op)) {
            L->engine = DLC_ENG_VIEW;
            m->store[nd->out] = m->store[nd->in[0]];
            g->t[nd->out].scale = g->t[nd->in[0]].scale;
            g->t[nd->out].amax = g->t[nd->in[0]].amax;
            continue;
        }
        if (nd->op == DLC_OP_CONV || nd->op == DLC_OP_GEMM || nd->op == DLC_OP_MATMUL) {
            why = conv_refusal(m, nd, L->why, sizeof L->why);
            if (!why) {
                int64_t k = g->t[nd->out].rank >= 2 ? g->t[nd->out].dims[1] : g->t[nd->out].n;
                fuse_after(m, L, k);
                for (int f = 0; f < L->n_fused; f++) {
                    fused[L->fused[f]] = 1;
                }
                L->engine = DLC_ENG_CONV;
                L->in_scale = g->t[m->store[L->in_tensor]].scale;
                L->out_scale = g->t[L->out_tensor].scale;
                if (materialize(m, L->out_tensor)) {
                    rc = lfail(err, errlen, "node '%s': output does not fit device memory", nd->name, NULL);
                    break;
                }
                rc = emit_conv(m, L, &v, err, errlen);
                continue;
            }
        } else if ((nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB || nd->op == DLC_OP_MUL ||
                    nd->op == DLC_OP_RELU) &&
                   !(why = sdp_refusal(m, nd))) {
            if (nd->op != DLC_OP_RELU) {
                int r = only_reader(g, nd->out);
                if (r >= 0 && g->nodes[r].op == DLC_OP_RELU) { /* Add + Relu */
                    L->relu = 1;
                    L->fused[L->n_fused++] = r;
                    fused[r] = 1;
                    L->out_tensor = g->nodes[r].out;
                }
            } else { /* ReLU keeps the scale of its input */
                g->t[nd->out].scale = g->t[m->store[nd->in[0]]].scale;
                g->t[nd->out].amax = g->t[m->store[nd->in[0]]].amax;
            }
            L->engine = DLC_ENG_SDP;
            L->in_scale = g->t[m->store[nd->in[0]]].scale;
            L->out_scale = g->t[L->out_tensor].scale;
            if (materialize(m, L->out_tensor)) {
                rc = lfail(err, errlen, "node '%s': output does not fit device memory", nd->name, NULL);
                break;
            }
            rc = emit_sdp(m, L, &v, err, errlen);
            continue;
        } else if ((nd->op == DLC_OP_BN ||
                    ((nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB || nd->op == DLC_OP_MUL) &&
                     (g->t[nd->in[0]].is_const || g->t[nd->in[1]].is_const))) &&
                   !(why = affine_refusal(m, nd))) {
            int r = only_reader(g, nd->out);
            if (r >= 0 && g->nodes[r].op == DLC_OP_RELU) { /* affine + Relu */
                L->relu = 1;
                L->fused[L->n_fused++] = r;
                fused[r] = 1;
                L->out_tensor = g->nodes[r].out;
            }
            L->engine = DLC_ENG_SDP;
            L->in_scale = g->t[m->store[nd->in[nd->op != DLC_OP_BN && g->t[nd->in[0]].is_const]]].scale;
            L->out_scale = g->t[L->out_tensor].scale;
            if (materialize(m, L->out_tensor)) {
                rc = lfail(err, errlen, "node '%s': output does not fit device memory", nd->name, NULL);
                break;
            }
            rc = emit_sdp_affine(m, L, &v, err, errlen);
            continue;
        } else if ((nd->op == DLC_OP_SIGMOID || nd->op == DLC_OP_TANH) &&
                   !(why = lut_refusal(m, nd))) {
            L->engine = DLC_ENG_SDP;
            L->in_scale = g->t[m->store[nd->in[0]]].scale;
            L->out_scale = g->t[nd->out].scale;
            if (materialize(m, nd->out)) {
                rc = lfail(err, errlen, "node '%s': output does not fit device memory", nd->name, NULL);
                break;
            }
            rc = emit_sdp_lut(m, L, &v, err, errlen);
            continue;
        } else if (nd->op == DLC_OP_LRN && !(why = lrn_refusal(m, nd))) {
            L->engine = DLC_ENG_CDP;
            L->in_scale = g->t[m->store[nd->in[0]]].scale;
            L->out_scale = g->t[nd->out].scale;
            if (materialize(m, nd->out)) {
                rc = lfail(err, errlen, "node '%s': output does not fit device memory", nd->name, NULL);
                break;
            }
            rc = emit_cdp(m, L, &v, err, errlen);
            continue;
        } else if (nd->op == DLC_OP_MAXPOOL || nd->op == DLC_OP_AVGPOOL || nd->op == DLC_OP_GAP) {
            why = pool_refusal(m, nd);
            if (!why) {
                L->engine = DLC_ENG_PDP;
                /* pooling keeps the scale of its input */
                g->t[nd->out].scale = g->t[m->store[nd->in[0]]].scale;
                g->t[nd->out].amax = g->t[m->store[nd->in[0]]].amax;
                if (materialize(m, nd->out)) {
                    rc = lfail(err, errlen, "node '%s': output does not fit device memory", nd->name, NULL);
                    break;
                }
                rc = emit_pdp(m, L, &v, err, errlen);
                continue;
            }
        } else {
            why = why ? why : cpu_reason(m, nd);
        }
        L->engine = DLC_ENG_CPU;
        if (why != L->why) {
            snprintf(L->why, sizeof L->why, "%s", why);
        }
        L->in_scale = g->t[m->store[L->in_tensor]].scale;
        L->out_scale = g->t[nd->out].scale;
        if (materialize(m, nd->out) || close_network(m, &v) || add_cpu_step(m, m->n_layers - 1)) {
            rc = lfail(err, errlen, "node '%s': out of memory", nd->name, NULL);
        }
    }
    if (!rc && close_network(m, &v)) {
        rc = lfail(err, errlen, "out of memory", NULL, NULL);
    }
    if (!rc) {
        rc = separate_banks(m, err, errlen);
    }
    free(v.ops);
    free(v.luts);
    free(fused);
    free(placed);
    return rc;
}

int dlc_lower(struct dlasim_model *m, char *err, size_t errlen)
{
    if (!m->no_place) {
        m->no_place = calloc((size_t)m->g.n_nodes + 1, 1);
        if (!m->no_place) {
            return lfail(err, errlen, "out of memory", NULL, NULL);
        }
    }
    for (int pass = 0; pass <= m->g.n_nodes; pass++) {
        int retry = 0;
        int rc = lower_once(m, &retry, err, errlen);
        if (rc || !retry) {
            return rc;
        }
    }
    return lfail(err, errlen, "internal: Concat placement does not settle", NULL, NULL);
}
