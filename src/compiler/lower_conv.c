/*
 * Lowering rule for Conv / Gemm / MatMul: CONV + SDP on the fly, one pair
 * per band of the convolution planner (include/dlasim/conv.h,
 * src/plan/conv_plan.c): int8 weights with one scale per output channel;
 * SDP X1 (BS) adds the bias (per-kernel ALU operand, int16 << ALU shift)
 * and multiplies by the per-channel requantization multiplier (per-kernel
 * MUL operand, int16, >> MUL shift), then ReLU when a Relu / Clip(0, ...)
 * follows.  Grouped and depthwise convolutions become one dense
 * convolution with zero weights outside each group (block-diagonal), so
 * every output surface is written whole.  Gemm/MatMul read their input
 * cube (C, H, W) as one H x W kernel: Flatten in NCHW order needs no data
 * movement.  A following Add/Sub/Mul of a per-channel constant is folded
 * into the weights and bias.
 *
 * Also the CBUF bank plan between convolutions (dlc_separate_banks).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/lower_int.h"

#define FORMAT_FEATURE 36

static int conv_applies(const struct dlasim_model *m, const struct dlc_node *nd)
{
    (void)m;
    return nd->op == DLC_OP_CONV || nd->op == DLC_OP_GEMM || nd->op == DLC_OP_MATMUL;
}

/* A clip at `hi` implemented by the int8 saturation of tensor t: a
 * calibrated tensor takes its scale from the clip (calib.c); a
 * pre-quantized one keeps the model's scale and zero point, so the
 * saturation is the clip only when hi quantizes to 127 or beyond. */
static int clip_by_saturation_ok(const struct dlc_graph *g, int t, float hi)
{
    const struct dlc_tensor *y = &g->t[t];
    return !(y->qscale > 0) || !(hi < 3e38f) ||
           floor((double)hi / y->qscale + 0.5) + y->zero >= 127.0;
}

/* An Add of the convolution's output t and another tensor of its shape
 * computed before the convolution runs (a residual connection: ResNet's
 * shortcut), fused into the convolution's SDP: BN adds the shortcut read
 * per element by NRDMA before the ReLU, as NVIDIA's compiler fuses
 * element-wise sums, so the convolution's output makes no round trip
 * through memory.  Calibrated models only: a pre-quantized model's X2
 * holds its second requantization stage, and its affine zero points would
 * sit in the sum before the ReLU. */
static int residual_fusable(const struct dlasim_model *m, const struct dlc_layer *L,
                            const struct dlc_node *nd, int t)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *conv = &g->nodes[L->node];
    int64_t nw = 0;
    if (nd->op != DLC_OP_ADD || nd->n_in != 2 || nd->in[0] == nd->in[1] ||
        conv->op != DLC_OP_CONV || dlc_given_wscale(g, conv, &nw) != NULL) {
        return 0;
    }
    const int o = nd->in[nd->in[0] == t ? 1 : 0];
    const struct dlc_tensor *ot = &g->t[o], *x = &g->t[t], *y = &g->t[nd->out];
    if (ot->is_const || ot->producer >= L->node || x->rank != 4 || ot->rank != 4 ||
        y->rank != 4 || ot->n != x->n || y->n != x->n || !(ot->scale > 0) || !(y->scale > 0) ||
        y->qscale > 0 || ot->qscale > 0 || ot->zero || y->zero || dlc_layout_differs(m, o)) {
        return 0;
    }
    const struct dlc_buf *b = dlc_stored_buf(m, o);
    return b->c == (uint32_t)x->dims[1] && b->h == (uint32_t)x->dims[2] &&
           b->w == (uint32_t)x->dims[3];
}

/* The fused residual's scales (see struct dlc_layer): BS gives the
 * convolution's values in 2^-k steps of the shortcut, k <= 7 and small
 * enough that ~127 of the convolution's own steps stay within 2^13 of them
 * (the sum then stays within the 32-bit lanes of the device model's fast
 * pass, and far within the hardware's 32 bits); the converter scales the
 * sum to the output. */
static void residual_scales(const struct dlasim_model *m, struct dlc_layer *L)
{
    const struct dlc_graph *g = &m->g;
    const double s_opd = g->t[L->res_tensor].scale, s_pre = g->t[L->res_pre].scale;
    const double r = s_pre > 0 ? s_pre / s_opd : 1.0;
    int k = 7;
    while (k > 0 && 127.0 * r * ldexp(1.0, k) > 8192.0) {
        k--;
    }
    L->res_shift = (uint32_t)k;
    L->res_scale = s_opd / ldexp(1.0, k);
    L->res_cvt_scale = dlc_fit16(L->res_scale / g->t[L->out_tensor].scale, &L->res_cvt_shift, 63);
}

/* Nodes fused after a convolution: bias Add/Sub, a residual Add, then
 * Relu / Clip(0, x). */
static void fuse_after(struct dlasim_model *m, struct dlc_layer *L, int64_t k)
{
    struct dlc_graph *g = &m->g;
    int t = L->out_tensor;
    for (;;) {
        int r = dlc_only_reader(g, t);
        if (r < 0 || L->n_fused == 4) {
            return;
        }
        struct dlc_node *nd = &g->nodes[r];
        int ai = 0, ci = 0;
        int free_act = !L->relu && !L->prelu;
        /* (after a residual nothing folds into the weights and bias) */
        if (free_act && !L->residual &&
            (nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB || nd->op == DLC_OP_MUL) &&
            dlc_per_channel_const(g, nd, k, &ai, &ci) && nd->in[ai] == t) {
            /* bias or per-channel scale: folded into the weights and bias */
        } else if (free_act && !L->residual && residual_fusable(m, L, nd, t)) {
            L->residual = L->n_fused + 1;
            L->res_pre = t;
            L->res_tensor = m->store[nd->in[nd->in[0] == t ? 1 : 0]];
        } else if (free_act && !L->residual && nd->op == DLC_OP_LEAKYRELU) {
            L->prelu = L->n_fused + 1;
        } else if (free_act && !L->residual && nd->op == DLC_OP_PRELU &&
                   dlc_per_channel_const(g, nd, k, &ai, &ci) && ai == 0 && nd->in[0] == t) {
            L->prelu = L->n_fused + 1;
        } else if (free_act && nd->op == DLC_OP_RELU) {
            L->relu = 1;
        } else if (free_act && nd->op == DLC_OP_CLIP && nd->clip_min == 0.0f &&
                   clip_by_saturation_ok(g, nd->out, nd->clip_max)) {
            L->relu = 1;
            L->clip_hi = nd->clip_max;
        } else if (free_act && !L->residual && nd->op == DLC_OP_HARDSIGMOID &&
                   clip_by_saturation_ok(g, nd->out, 1.0f)) {
            L->relu = 1; /* alpha, beta folded into weights and bias; clip at 1 by saturation */
            L->clip_hi = 1.0f;
        } else {
            return;
        }
        L->fused[L->n_fused++] = r;
        t = nd->out;
        L->out_tensor = t;
    }
}

static int64_t groups_per_block(const struct dlasim_model *m, const struct dlc_node *nd,
                                int64_t C, int64_t K);
static int single_op_pair(const struct dlasim_model *m, const struct dlc_node *nd);

/* A pooling that is the only reader of the convolution's output: PDP pools
 * on the fly what SDP sends it (FLYING_MODE ON_FLYING, SDP OUTPUT_DST PDP),
 * so the unpooled cube never goes to memory and PDP does not read it back.
 * PDP sees the same int8 codes it would read from memory, so the result is
 * the same bit for bit.  Only for a convolution that is one CONV + SDP
 * operation (one channel block, one band): PDP takes the whole cube of one
 * SDP operation, on the fly without width splits (pdp.c), so a layer in
 * bands would need each band's pooling windows to stay inside the band. */
static void fuse_pool(struct dlasim_model *m, struct dlc_layer *L)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    int r = dlc_only_reader(g, L->out_tensor);
    if (nd->op != DLC_OP_CONV || r < 0 || L->n_fused == 4 || L->residual) {
        return;
    }
    const struct dlc_node *p = &g->nodes[r];
    const struct dlc_tensor *x = &g->t[L->out_tensor];
    if ((p->op != DLC_OP_MAXPOOL && p->op != DLC_OP_AVGPOOL && p->op != DLC_OP_GAP) ||
        p->in[0] != L->out_tensor || x->rank != 4 ||
        !dlc_pool_is_one_op(p, (uint32_t)x->dims[2], (uint32_t)x->dims[3]) ||
        dlc_pool_refusal(m, p, x->zero) != NULL || !single_op_pair(m, nd)) {
        return;
    }
    dlc_pool_keeps_scale(g, p, L->out_tensor);
    L->fused[L->n_fused++] = r;
    L->pool = L->n_fused;
    L->out_tensor = p->out;
}

static void conv_take(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_tensor *y = &g->t[g->nodes[L->node].out];
    fuse_after(m, L, y->rank >= 2 ? y->dims[1] : y->n);
    fuse_pool(m, L);
    for (int f = 0; f < L->n_fused; f++) {
        fused[L->fused[f]] = 1;
    }
    L->in_scale = g->t[m->store[L->in_tensor]].scale;
    L->out_scale = g->t[L->out_tensor].scale;
    L->in_zero = g->t[m->store[L->in_tensor]].zero;
    L->out_zero = g->t[L->out_tensor].zero;
    if (L->residual) {
        residual_scales(m, L);
    }
}

/* The convolution planner on the node's shape (a dry run): NULL, or why
 * not (written into why). */
static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* Groups per block of a grouped convolution (C input, K output channels):
 * the fewest whole groups whose input and output channel counts are
 * multiples of Atomic-M (one Atomic-M of a depthwise convolution), or all
 * of them; 1 without groups. */
static int64_t block_groups(const struct dlasim_model *m, int group, int64_t C, int64_t K)
{
    if (group <= 1) {
        return 1;
    }
    int64_t a = m->hw.atom_m, cg = C / group, kg = K / group;
    int64_t gc = a / gcd64(cg, a), gk = a / gcd64(kg, a);
    int64_t g0 = gc / gcd64(gc, gk) * gk;
    return g0 < group ? g0 : group;
}

/* The planner's description of the largest block the convolution runs as. */
static void block_desc(const struct dlasim_model *m, const struct dlc_node *nd,
                       const struct dlc_buf *b, struct dlasim_conv_desc *out)
{
    const struct dlc_tensor *w = &m->g.t[nd->in[1]];
    int64_t g0 = block_groups(m, nd->group, b->c, w->dims[0]);
    struct dlasim_conv_desc d;
    dlasim_conv_desc_init(&d);
    d.in_w = b->w, d.in_h = b->h, d.in_c = (uint32_t)(g0 * (b->c / nd->group));
    d.kernels = (uint32_t)(g0 * (w->dims[0] / nd->group));
    d.kernel_h = (uint32_t)nd->kernel[0], d.kernel_w = (uint32_t)nd->kernel[1];
    d.stride_y = (uint32_t)nd->stride[0], d.stride_x = (uint32_t)nd->stride[1];
    d.dilation_y = (uint32_t)nd->dilation[0], d.dilation_x = (uint32_t)nd->dilation[1];
    d.pad_top = (uint32_t)nd->pads[0], d.pad_left = (uint32_t)nd->pads[1];
    d.pad_bottom = (uint32_t)nd->pads[2], d.pad_right = (uint32_t)nd->pads[3];
    *out = d;
}

/* The planner's dry run on the largest block the convolution runs as: its
 * bands (hardware layers), or -1 with the planner's reason in perr. */
static long plan_bands(const struct dlasim_model *m, const struct dlc_node *nd,
                       const struct dlc_buf *b, char *perr, size_t n)
{
    struct dlasim_conv_desc d;
    block_desc(m, nd, b, &d);
    struct dlasim_conv_plan plan;
    if (dlasim_conv_plan(&m->hw, &d, &plan, perr, n)) {
        return -1;
    }
    long bands = (long)plan.n_layers;
    dlasim_conv_plan_free(&plan);
    return bands;
}

static const char *plan_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                const struct dlc_buf *b, char *why, size_t n)
{
    char perr[160] = "";
    if (plan_bands(m, nd, b, perr, sizeof perr) < 0) {
        snprintf(why, n, "the convolution planner refuses it: %s%s", perr,
                 strstr(perr, "one group of") ? " (a split along the input channels would need "
                 "its INT32 partial sums added before the SDP's requantization, which the SDP "
                 "cannot read back exactly)" : "");
        return why;
    }
    return NULL;
}

/* The convolution runs as one CONV + SDP operation: one channel block, and
 * the planner keeps it in one band. */
static int single_op_pair(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_buf *b = dlc_stored_buf(m, nd->in[0]);
    const struct dlc_tensor *w = &m->g.t[nd->in[1]];
    if (groups_per_block(m, nd, b->c, w->dims[0]) < (nd->group > 1 ? nd->group : 1)) {
        return 0;
    }
    char perr[160] = "";
    return plan_bands(m, nd, b, perr, sizeof perr) == 1;
}

/* A Gemm / MatMul as one convolution whose kernel is the whole input cube:
 * the planner's dry run.  Weights beyond CBUF are split along the output
 * channels: CDMA streams them one kernel group (Atomic-K kernels) at a time
 * through the weight banks (the planner's ping-pong / one-group modes), all
 * in one hardware layer.  A weight matrix larger than CBUF holds for one
 * kernel group (VGG's 25088 x 4096 on nv_small) runs on the host CPU: a
 * split along the input dimension needs its partial sums added in INT32
 * before the SDP's requantization, and no path adds them exactly: CACC
 * does not accumulate across layers, the SDP writes at most int16 and reads
 * int8/int16 cubes and 16-bit operands (SDP's MRDMA / BRDMA / NRDMA). */
static const char *gemm_plan_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                     const struct dlc_buf *b, char *why, size_t n)
{
    const struct dlc_tensor *w = &m->g.t[nd->in[1]];
    struct dlasim_conv_desc d;
    dlasim_conv_desc_init(&d);
    d.in_w = b->w, d.in_h = b->h, d.in_c = b->c;
    d.kernels = (uint32_t)(nd->op == DLC_OP_GEMM && nd->trans_b ? w->dims[0] : w->dims[1]);
    d.kernel_h = b->h, d.kernel_w = b->w;
    struct dlasim_conv_plan plan;
    char perr[160] = "";
    if (dlasim_conv_plan(&m->hw, &d, &plan, perr, sizeof perr)) {
        snprintf(why, n, "the weights do not fit the convolution planner: %s (a split along the "
                 "input dimension would need its INT32 partial sums added before the SDP's "
                 "requantization, which the SDP cannot read back exactly)", perr);
        return why;
    }
    dlasim_conv_plan_free(&plan);
    return NULL;
}

static const char *conv_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                char *why, size_t n)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_buf *b = dlc_stored_buf(m, nd->in[0]);
    if (nd->op == DLC_OP_CONV) {
        if (dlc_layout_differs(m, nd->in[0])) {
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
    return gemm_plan_refusal(m, nd, b, why, n);
}

/* ---- quantization of a convolution ----------------------------------------------- */

struct qconv {
    int64_t K, C, kh, kw;
    float *w;      /* [K][cg][kh][kw] float: each kernel's own input channels */
    float *bias;   /* [K] */
    int8_t *qw;
    int16_t *alu, *mul;
    const float *wscale; /* the model's weight scales (pre-quantized), else NULL */
    int64_t wscale_n;    /* 1 or K */
    int16_t *alu2, *mul2; /* two-stage requantization (L->req2): the X2 operands */
    int64_t cg;           /* input channels a kernel reads: C / group (C without groups) */
};

/* Weights of one kernel in q->w and q->qw: a grouped convolution keeps
 * only its group's channels (the dense form's other weights are zeros, which
 * change no scale, sum or code: MobileNetV2's depthwise layers would be
 * 40 M dense weights for 0.1 M real ones); the blocks expand their own rows
 * (emit_block). */
static size_t kernel_len(const struct qconv *q)
{
    return (size_t)(q->cg * q->kh * q->kw);
}

static void qconv_free(struct qconv *q)
{
    free(q->w);
    free(q->bias);
    free(q->qw);
    free(q->alu);
    free(q->mul);
    free(q->alu2);
    free(q->mul2);
}

/* Fold the bias Add / Sub and scale Mul nodes fused after the layer, in order. */
static void fold_fused_affine(const struct dlc_graph *g, const struct dlc_layer *L, struct qconv *q)
{
    size_t per = kernel_len(q);
    for (int f = 0; f < L->n_fused; f++) {
        const struct dlc_node *fn = &g->nodes[L->fused[f]];
        int ai = 0, ci = 0;
        if (fn->op == DLC_OP_HARDSIGMOID) {
            for (int64_t k = 0; k < q->K; k++) {
                q->bias[k] = q->bias[k] * fn->alpha + fn->beta;
                for (size_t i = 0; i < per; i++) {
                    q->w[(size_t)k * per + i] *= fn->alpha;
                }
            }
            continue;
        }
        if ((fn->op != DLC_OP_ADD && fn->op != DLC_OP_SUB && fn->op != DLC_OP_MUL) ||
            !dlc_per_channel_const(g, fn, q->K, &ai, &ci)) {
            continue;
        }
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

const float *dlc_given_wscale(const struct dlc_graph *g, const struct dlc_node *nd, int64_t *n)
{
    const struct dlc_tensor *wt = &g->t[nd->in[1]];
    int axis = nd->op == DLC_OP_CONV || (nd->op == DLC_OP_GEMM && nd->trans_b) ? 0 : 1;
    int gemm_scaled = nd->op == DLC_OP_GEMM && nd->alpha != 1.0f;
    if (!wt->qw_scale || gemm_scaled || (wt->qw_n > 1 && wt->qw_axis != axis)) {
        return NULL;
    }
    *n = wt->qw_n;
    return wt->qw_scale;
}

/* The model's weight scales, unless a node fused after the layer rescales
 * the weights (the compiler then chooses their scales). */
static const float *given_wscale_kept(const struct dlc_graph *g, const struct dlc_layer *L,
                                      int64_t *n)
{
    for (int f = 0; f < L->n_fused; f++) {
        enum dlc_op op = g->nodes[L->fused[f]].op;
        if (op == DLC_OP_MUL || op == DLC_OP_HARDSIGMOID) {
            return NULL;
        }
    }
    return dlc_given_wscale(g, &g->nodes[L->node], n);
}

/* Float weights (each kernel's own channels, kernel_len) and bias of a Conv
 * or Gemm/MatMul: 0 or DLASIM_ERR_NOMEM. */
static int dense_weights(const struct dlasim_model *m, const struct dlc_layer *L, struct qconv *q)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_tensor *wt = &g->t[nd->in[1]];
    const struct dlc_buf *b = dlc_stored_buf(m, L->in_tensor);
    const struct dlc_tensor *bt = nd->n_in > 2 && nd->in[2] >= 0 ? &g->t[nd->in[2]] : NULL;
    if (nd->op == DLC_OP_CONV) {
        q->K = wt->dims[0], q->C = b->c, q->kh = wt->dims[2], q->kw = wt->dims[3];
        q->cg = wt->dims[1];
    } else {
        int tb = nd->op == DLC_OP_GEMM && nd->trans_b;
        q->K = tb ? wt->dims[0] : wt->dims[1];
        q->C = b->c, q->kh = b->h, q->kw = b->w;
        q->cg = q->C;
    }
    size_t per = kernel_len(q);
    q->w = calloc((size_t)q->K * per, sizeof(float));
    q->bias = calloc((size_t)q->K, sizeof(float));
    q->qw = calloc((size_t)q->K * per, 1);
    q->alu = calloc((size_t)q->K, sizeof(int16_t));
    q->mul = calloc((size_t)q->K, sizeof(int16_t));
    if (!q->w || !q->bias || !q->qw || !q->alu || !q->mul) {
        return DLASIM_ERR_NOMEM;
    }
    if (nd->op == DLC_OP_CONV) { /* ONNX's [K][C/group][kh][kw] is kernel_len's layout */
        memcpy(q->w, wt->data, (size_t)q->K * per * sizeof(float));
        for (int64_t k = 0; k < q->K; k++) {
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
    fold_fused_affine(g, L, q);
    q->wscale = given_wscale_kept(g, L, &q->wscale_n);
    return 0;
}

/* How far the inputs can move each channel's output, in output steps: at most
 * 127 input steps times the channel's summed |weights|.  A channel whose bias
 * is at least one output step while its inputs move it by less than one
 * step has a constant INT8 output set by the bias (issue 17 item 9, the
 * "silent collapse": a tiny input step next to a large bias).  Recorded in
 * the layer for the precision flags of the reports (model.c). */
static void record_bias_dominance(struct dlc_layer *L, const struct qconv *q)
{
    size_t per = kernel_len(q);
    L->flat_channels = 0;
    L->flat_swing = 0;
    L->flat_bias = 0;
    for (int64_t k = 0; k < q->K; k++) {
        double sum = 0;
        for (size_t i = 0; i < per; i++) {
            sum += fabs((double)q->w[(size_t)k * per + i]);
        }
        double swing = 127.0 * L->in_scale * sum / L->out_scale;
        double bias = fabs((double)q->bias[k]);
        if (sum > 0 && swing < 1.0 && bias >= L->out_scale) {
            if (!L->flat_channels || bias > L->flat_bias) {
                L->flat_bias = (float)bias;
                L->flat_swing = (float)swing;
            }
            L->flat_channels++;
        }
    }
}

/* Right shifts so that the bias, in accumulator units, fits the 32 bits the
 * shifted X1 ALU operand saturates to (NV_NVDLA_SDP_HLS_X_int_alu.v; the
 * device model's sdp_shl_su): a bias of 3e2 over an input step of 1e-5
 * is ~3e9 accumulator units.  CACC truncation divides the accumulator and
 * the bias alike; each bit of it doubles the multiplier. */
static int bias_alu_shift(double bmax, double pre, int *ash)
{
    *ash = 0;
    while (bmax * pre / ldexp(1.0, *ash) > 32767.0 && *ash < 31) {
        (*ash)++;
    }
    /* the operand rounds to 16 bits, so the shifted value can exceed bmax by half a step */
    return bmax * pre + ldexp(1.0, *ash) <= 2147483647.0;
}

/* Pre-quantized models: the requantization as two int16 multipliers in
 * series (SDP X1 = BS, then X2 = BN; both per kernel from memory, each with
 * its own rounding right shift, spec sdp.rst "X1/X2 sub-units"):
 *   t   = (acc + alu1[k] << ash1) * m1[k] >> t1      (32 bits)
 *   out = (t + alu2[k] << ash2) * m2[k] >> t2       (t2 = 37, less for large M)
 * m1[k] x m2[k] / 2^(t1 + t2) approximates M[k] to about 2^-29 (the pair
 * is searched: m2 over [2^14, 2^15), m1 the nearest integer), against 2^-15
 * for one int16 multiplier.  The intermediate t keeps 2^22..2^23 of its
 * units per output step (2^t2 / m2), so its own rounding moves an output by
 * < 2^-23 step, and its 32 bits saturate only beyond 256 output steps,
 * where the int8 output saturates anyway.  X2's ALU adds what X1's int16
 * bias (<< ash1) could not hold, in t's units.  The rounding of each shift is
 * half away from zero (NV_NVDLA_HLS_shiftrightsu); ONNX Runtime rounds half
 * to even: only exact ties can differ.  Returns 1 when used, 0 when the
 * layer's multipliers do not fit (then one stage), DLASIM_ERR_NOMEM. */
#define REQ2_T2 37
static int quantize_two_stage(struct dlc_layer *L, struct qconv *q, const double *M, const double *B)
{
    double mmax = 0, bmax = 0, rmax = 0;
    for (int64_t k = 0; k < q->K; k++) {
        mmax = M[k] > mmax ? M[k] : mmax;
        bmax = fabs(B[k]) > bmax ? fabs(B[k]) : bmax;
    }
    if (!(mmax > 0)) {
        return 0;
    }
    /* m1 <= 32767 for the largest multiplier when m2 >= 2^14; a large
     * multiplier (an average of few values) takes X2's shift down instead
     * (X1 then multiplies without rounding) */
    int t1 = (int)floor(log2(32767.0 * 16384.0 / (mmax * ldexp(1.0, REQ2_T2))));
    int t2 = REQ2_T2 + (t1 < 0 ? t1 : 0);
    t1 = t1 < 0 ? 0 : t1;
    if (t1 > 63 || t2 < 20) {
        return 0;
    }
    q->alu2 = calloc((size_t)q->K, sizeof(int16_t));
    q->mul2 = calloc((size_t)q->K, sizeof(int16_t));
    double *R = malloc((size_t)q->K * sizeof(double));
    if (!q->alu2 || !q->mul2 || !R) {
        free(R);
        return DLASIM_ERR_NOMEM;
    }
    int ash = 0;
    while (bmax / ldexp(1.0, ash) > 32767.0 && ash < 31) {
        ash++;
    }
    double err = 0;
    for (int64_t k = 0; k < q->K; k++) {
        double T = M[k] * ldexp(1.0, t1 + t2), best = -1;
        int64_t b1 = 0, b2 = 0;
        /* (T / m2 + 0.5 > 0: the conversion truncates as floor would, with
         * no call per candidate; an exact pair ends the search, as no later
         * one replaces it) */
        for (int64_t m2 = 16384; m2 <= 32767 && T > 0 && best != 0; m2++) {
            int64_t m1 = (int64_t)(T / (double)m2 + 0.5);
            double e = fabs((double)(m1 * m2) - T);
            if (m1 >= 1 && m1 <= 32767 && (best < 0 || e < best)) {
                best = e, b1 = m1, b2 = m2;
            }
        }
        q->mul[k] = (int16_t)b1, q->mul2[k] = (int16_t)b2;
        q->alu[k] = dlc_sat16(floor(B[k] / ldexp(1.0, ash) + 0.5));
        /* what X1's bias misses, in t's units */
        R[k] = (B[k] - q->alu[k] * ldexp(1.0, ash)) * (double)b1 / ldexp(1.0, t1);
        rmax = fabs(R[k]) > rmax ? fabs(R[k]) : rmax;
        double e = M[k] > 0 ? fabs((double)(b1 * b2) - T) / T : 0;
        err = e > err ? e : err;
    }
    int ash2 = 0;
    while (rmax / ldexp(1.0, ash2) > 32767.0 && ash2 < 31) {
        ash2++;
    }
    for (int64_t k = 0; k < q->K; k++) {
        q->alu2[k] = dlc_sat16(floor(R[k] / ldexp(1.0, ash2) + 0.5));
    }
    free(R);
    L->req2 = 1;
    L->cacc_trunc = 0;
    L->mul_shift = (uint32_t)t1, L->alu_shift = (uint32_t)ash;
    L->mul2_shift = (uint32_t)t2, L->alu2_shift = (uint32_t)ash2;
    L->req_err = err;
    return 1;
}

/* Per-channel weight scales folded into the SDP multipliers:
 * out_q = (acc + bias_q << alu_shift) * mul_k >> mul_shift, with
 * mul_k / 2^mul_shift = s_in * s_w[k] / s_out.  0 or DLASIM_ERR_NOMEM. */
/* w / sw rounded half away from zero, saturated to int8.  As
 * trunc(v +- 0.5): IEEE addition is symmetric in sign, so v - 0.5 is
 * -(-v + 0.5) exactly, and clamping before the truncation gives what
 * clamping the rounded value does; no floor() call per weight. */
static void quantize_kernel(const float *w, int8_t *qw, size_t n, double sw)
{
    for (size_t i = 0; i < n; i++) {
        double t = w[i] / sw;
        t += t < 0 ? -0.5 : 0.5;
        t = t < -128.0 ? -128.0 : t > 127.0 ? 127.0 : t;
        qw[i] = (int8_t)(int)t;
    }
}

static int quantize_conv(struct dlc_layer *L, struct qconv *q)
{
    size_t per = kernel_len(q);
    double mmax = 0, bmax = 0;
    double *M = malloc((size_t)q->K * sizeof(double)), *B = malloc((size_t)q->K * sizeof(double));
    if (!M || !B) {
        free(M);
        free(B);
        return DLASIM_ERR_NOMEM;
    }
    for (int64_t k = 0; k < q->K; k++) {
        float amax = 0;
        for (size_t i = 0; i < per; i++) {
            float a = fabsf(q->w[k * per + i]);
            amax = a > amax ? a : amax;
        }
        double sw = q->wscale ? q->wscale[q->wscale_n == 1 ? 0 : k] /* the model's codes */
                    : amax > 0 ? amax / 127.0 : 1.0;
        quantize_kernel(q->w + k * per, q->qw + k * per, per, sw);
        const double s_x1 = L->residual ? L->res_scale : L->out_scale; /* BS's output step */
        M[k] = (double)L->in_scale * sw / s_x1;
        double wsum = 0; /* the input's code of 0: sum w * (s - z) = sum w * s - z * sum w */
        for (size_t i = 0; i < per && L->in_zero; i++) {
            wsum += q->qw[k * per + i];
        }
        if (q->wscale) { /* ONNX Runtime's multiplier: float32 (s_in x s_w) / s_out */
            float sxw = L->in_scale * (float)sw;
            M[k] = (double)(sxw / (float)s_x1);
        }
        B[k] = q->bias[k] / ((double)L->in_scale * sw) - (double)L->in_zero * wsum;
        mmax = M[k] > mmax ? M[k] : mmax;
        bmax = fabs(B[k]) > bmax ? fabs(B[k]) : bmax;
    }
    record_bias_dominance(L, q);
    L->req2 = 0;
    L->wcodes = q->wscale != NULL;
    if (L->wcodes && !L->prelu) {
        int rc = quantize_two_stage(L, q, M, B);
        if (rc) {
            free(M);
            free(B);
            return rc < 0 ? rc : 0;
        }
    }
    /* a bias beyond 32 bits needs CACC truncation first (which scales the
     * multipliers up); then the largest multiplier gets 15 bits */
    int trunc = 0, ash = 0, shift;
    while (!bias_alu_shift(bmax, ldexp(1.0, -trunc), &ash) && trunc < 31) {
        trunc++;
    }
    L->bias_saturates = !bias_alu_shift(bmax, ldexp(1.0, -trunc), &ash);
    shift = mmax > 0 ? (int)floor(log2(32767.0 / (mmax * ldexp(1.0, trunc)))) : 0;
    shift = shift < 0 ? 0 : shift > 63 ? 63 : shift;
    L->cacc_trunc = (uint32_t)trunc;
    L->mul_shift = (uint32_t)shift;
    L->alu_shift = (uint32_t)ash;
    double pre = ldexp(1.0, -trunc);
    L->req_err = 0;
    for (int64_t k = 0; k < q->K; k++) {
        q->mul[k] = dlc_sat16(M[k] * ldexp(1.0, shift) / pre);
        q->alu[k] = dlc_sat16(B[k] * pre / ldexp(1.0, ash));
        double e = M[k] > 0 ? fabs(q->mul[k] * pre / ldexp(1.0, shift) - M[k]) / M[k] : 0;
        L->req_err = e > L->req_err ? e : L->req_err;
    }
    free(M);
    free(B);
    return 0;
}

/* ---- hardware operations -------------------------------------------------------------- */

/* The planner's description of the layer's convolution. */
static void conv_desc(const struct dlc_node *nd, const struct dlc_buf *bx, const struct qconv *q,
                      const struct dlc_layer *L, struct dlasim_conv_desc *d)
{
    dlasim_conv_desc_init(d);
    d->in_w = bx->w, d->in_h = bx->h, d->in_c = bx->c;
    d->kernels = (uint32_t)q->K;
    d->kernel_w = (uint32_t)q->kw, d->kernel_h = (uint32_t)q->kh;
    if (nd->op == DLC_OP_CONV) {
        d->stride_y = (uint32_t)nd->stride[0], d->stride_x = (uint32_t)nd->stride[1];
        d->dilation_y = (uint32_t)nd->dilation[0], d->dilation_x = (uint32_t)nd->dilation[1];
        d->pad_top = (uint32_t)nd->pads[0], d->pad_left = (uint32_t)nd->pads[1];
        d->pad_bottom = (uint32_t)nd->pads[2], d->pad_right = (uint32_t)nd->pads[3];
    }
    d->clip_truncate = L->cacc_trunc;
}

/* LeakyRelu / PRelu slopes: one per layer (*q), or per channel from memory
 * (*blob set to a new blob's index).  0 or a negative status. */
struct slopes {
    int16_t q;
    uint32_t shift;
    int blob; /* -1: per layer */
};

static int prelu_slopes(struct dlasim_model *m, const struct dlc_layer *L, int64_t k0, int64_t K,
                        struct slopes *s)
{
    const struct dlc_graph *g = &m->g;
    s->q = 0, s->shift = 0, s->blob = -1;
    if (!L->prelu) {
        return 0;
    }
    const struct dlc_node *pn = &g->nodes[L->fused[L->prelu - 1]];
    const struct dlc_tensor *st = pn->op == DLC_OP_PRELU ? &g->t[pn->in[1]] : NULL;
    double smax = pn->op == DLC_OP_LEAKYRELU ? fabs(pn->alpha) : 0;
    for (int64_t k = 0; st && k < st->n; k++) {
        smax = fabs(st->data[k]) > smax ? fabs(st->data[k]) : smax;
    }
    dlc_fit16(smax > 0 ? smax : 1.0, &s->shift, 31);
    s->q = dlc_sat16((pn->op == DLC_OP_LEAKYRELU ? pn->alpha : st->data[st->n > 1 ? k0 : 0]) *
                     ldexp(1.0, (int)s->shift));
    if (!st || st->n <= 1) {
        return 0;
    }
    s->blob = dlc_add_blob(m, (size_t)K * 2);
    if (s->blob < 0) {
        return s->blob;
    }
    uint8_t *p = m->blobs[s->blob].data;
    for (int64_t k = 0; k < K; k++) {
        uint16_t sv = (uint16_t)dlc_sat16(st->data[k0 + k] * ldexp(1.0, (int)s->shift));
        p[2 * k] = (uint8_t)sv, p[2 * k + 1] = (uint8_t)(sv >> 8);
    }
    return 0;
}

/* The CONV operation of one band. */
static void fill_conv_op(const struct dlasim_model *m, struct dlasim_rt_op *co,
                         const struct dlasim_conv_plan *plan, const struct dlasim_conv_layer *l,
                         const struct dlasim_conv_desc *d, const struct dlc_buf *bx,
                         const struct dlc_buf *by, uint32_t cacc_trunc, int pad, int wblob)
{
    struct dlasim_rt_conv_op *c = &co->op.conv;
    c->weight_reuse = (uint8_t)l->weight_reuse;
    c->skip_weight_rls = (uint8_t)l->skip_weight_rls;
    c->entry_per_slice = (uint16_t)plan->entries;
    c->data_format = FORMAT_FEATURE;
    c->fetch_grain = 1;
    c->batch = 1;
    c->data_bank = (uint8_t)(l->data_bank ? l->data_bank : plan->data_bank);
    c->weight_bank = (uint8_t)plan->weight_bank;
    c->release = (uint16_t)l->in_h;
    c->input_width_csc = (uint16_t)d->in_w, c->input_height_csc = (uint16_t)l->in_h;
    c->input_channel_csc = (uint16_t)d->in_c;
    c->kernel_width_csc = (uint16_t)d->kernel_w, c->kernel_height_csc = (uint16_t)d->kernel_h;
    c->kernel_channel_csc = (uint16_t)d->in_c;
    c->input_width_cmac = (uint16_t)plan->out_w, c->input_height_cmac = (uint16_t)l->out_h;
    c->bytes_per_kernel = plan->bytes_per_kernel;
    c->conv_stride_x = (uint8_t)d->stride_x, c->conv_stride_y = (uint8_t)d->stride_y;
    c->pad_x_left = (uint8_t)d->pad_left, c->pad_x_right = (uint8_t)d->pad_right;
    c->pad_y_top = (uint8_t)l->pad_top, c->pad_y_bottom = (uint8_t)l->pad_bottom;
    c->dilation_x = (uint8_t)d->dilation_x, c->dilation_y = (uint8_t)d->dilation_y;
    c->out_cvt.scale = 1;
    c->out_cvt.truncate = (uint8_t)cacc_trunc;
    c->pad_val = (int16_t)pad; /* the input's code of 0: padding adds 0 in value space */
    struct dlasim_rt_conv_surface *cs = &co->surface.conv;
    cs->src_data = dlc_cube(bx, DLASIM_RT_MEM_MC);
    cs->src_data.height = (uint16_t)l->in_h;
    cs->src_data.offset = bx->offset + l->in_y0 * bx->line;
    cs->weight_data.type = DLASIM_RT_MEM_MC;
    cs->weight_data.address = m->blobs[wblob].addr_index;
    cs->weight_data.size = plan->weight_bytes;
    cs->wmb_data.address = cs->wgs_data.address = -1;
    cs->dst_data = dlc_cube(by, DLASIM_RT_MEM_HW);
    cs->dst_data.height = (uint16_t)l->out_h;
    cs->dst_data.channel = (uint16_t)d->kernels;
}

/* An SDP X stage adding a per-kernel int16 bias (<< alu_shift) and
 * multiplying by a per-kernel int16 multiplier (>> truncate, rounded), both
 * from memory, then ReLU if asked. */
static void bias_scale_stage(struct dlasim_rt_sdp_stage *x, int relu, uint32_t alu_shift,
                             uint32_t truncate)
{
    x->enable = 1;
    x->alu_type = 2; /* SUM */
    x->type = DLASIM_RT_SDP_BOTH;
    x->mode = DLASIM_RT_SDP_PER_KERNEL;
    x->act = relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
    x->shift_value = (uint8_t)alu_shift;
    x->truncate = (uint8_t)truncate;
    x->precision = DLASIM_RT_INT16;
}

/* X2 (BN) adding the fused residual's operand (its block's view `res`),
 * read per element for the band's rows, before the ReLU; the converter
 * to the output's scale. */
static void residual_stage(struct dlasim_rt_sdp_op *s, struct dlasim_rt_sdp_surface *ss,
                           const struct dlasim_conv_layer *l, const struct dlc_layer *L,
                           const struct dlc_buf *res)
{
    s->x1_op.act = DLASIM_RT_ACT_NONE;
    s->x2_op.enable = 1;
    s->x2_op.alu_type = 2; /* SUM */
    s->x2_op.type = DLASIM_RT_SDP_ADD;
    s->x2_op.mode = DLASIM_RT_SDP_PER_POINT;
    s->x2_op.shift_value = (uint8_t)L->res_shift;
    s->x2_op.act = L->relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
    s->x2_op.precision = DLASIM_RT_INT8;
    ss->x2_data = dlc_cube(res, DLASIM_RT_MEM_MC);
    ss->x2_data.height = (uint16_t)l->out_h;
    ss->x2_data.offset = res->offset + l->out_y0 * res->line;
    s->out_cvt.scale = L->res_cvt_scale;
    s->out_cvt.truncate = (uint8_t)L->res_cvt_shift;
    s->out_cvt.offset = 0; /* (residual_fusable: output zero point 0) */
}

/* The SDP operation of one band: X1 bias and requantization; X2 the fused
 * residual, the second stage of a two-stage requantization or PReLU. */
static void fill_sdp_op(const struct dlasim_model *m, struct dlasim_rt_op *so,
                        const struct dlasim_rt_op *co, const struct dlasim_conv_layer *l,
                        const struct dlc_layer *L, const struct dlc_buf *by, int sblob,
                        int sblob2, const struct slopes *sl, int64_t K, const struct dlc_buf *res)
{
    struct dlasim_rt_sdp_op *s = &so->op.sdp;
    s->lut_index = -1;
    s->out_cvt.scale = 1;
    /* the output's code of 0, added after the activation (CVT: (x - offset) * 1) */
    s->out_cvt.offset = -L->out_zero;
    s->batch_num = 1;
    bias_scale_stage(&s->x1_op, L->relu, L->alu_shift, L->mul_shift);
    struct dlasim_rt_sdp_surface *ss = &so->surface.sdp;
    ss->x2_data.address = -1;
    if (res) {
        residual_stage(s, ss, l, L, res);
    } else if (L->req2) { /* X2 (BN): the residual bias and the second multiplier, then ReLU */
        s->x1_op.act = DLASIM_RT_ACT_NONE;
        bias_scale_stage(&s->x2_op, L->relu, L->alu2_shift, L->mul2_shift);
        ss->x2_data.type = DLASIM_RT_MEM_MC;
        ss->x2_data.address = m->blobs[sblob2].addr_index;
        ss->x2_data.size = (uint32_t)m->blobs[sblob2].len;
        ss->x2_data.width = 1, ss->x2_data.height = 1;
        ss->x2_data.channel = (uint16_t)K;
    } else if (L->prelu) { /* X2 (BN) in PReLU mode: negative values times the slope */
        s->x2_op.enable = 1;
        s->x2_op.type = DLASIM_RT_SDP_MUL;
        s->x2_op.act = DLASIM_RT_ACT_PRELU;
        s->x2_op.truncate = (uint8_t)sl->shift;
        s->x2_op.precision = DLASIM_RT_INT16;
        s->x2_op.mode = sl->blob >= 0 ? DLASIM_RT_SDP_PER_KERNEL : DLASIM_RT_SDP_PER_LAYER;
        s->x2_op.mul_operand = sl->q;
        if (sl->blob >= 0) {
            ss->x2_data.type = DLASIM_RT_MEM_MC;
            ss->x2_data.address = m->blobs[sl->blob].addr_index;
            ss->x2_data.size = (uint32_t)m->blobs[sl->blob].len;
            ss->x2_data.width = 1, ss->x2_data.height = 1;
            ss->x2_data.channel = (uint16_t)K;
        }
    }
    ss->src_data = co->surface.conv.dst_data;
    ss->dst_data = dlc_cube(by, DLASIM_RT_MEM_MC);
    ss->dst_data.height = (uint16_t)l->out_h;
    ss->dst_data.offset = by->offset + l->out_y0 * by->line;
    ss->x1_data.type = DLASIM_RT_MEM_MC;
    ss->x1_data.address = m->blobs[sblob].addr_index;
    ss->x1_data.size = (uint32_t)m->blobs[sblob].len;
    ss->x1_data.width = 1, ss->x1_data.height = 1;
    ss->x1_data.channel = (uint16_t)K;
    ss->y_data.address = -1;
}

/* Weight and bias/multiplier blobs: the packed int8 kernels, and per
 * kernel the ALU operand then the MUL operand (DATA_USE BOTH, little-endian). */
static int weight_blobs(struct dlasim_model *m, const struct dlasim_conv_plan *plan,
                        const struct qconv *q, int *wblob, int *sblob, int *sblob2)
{
    *wblob = dlc_add_blob(m, plan->weight_bytes);
    if (*wblob < 0) {
        return *wblob;
    }
    *sblob = dlc_add_blob(m, (size_t)q->K * 4);
    if (*sblob < 0) {
        return *sblob;
    }
    dlasim_conv_pack_weights(plan, q->qw, m->blobs[*wblob].data);
    uint8_t *sb = m->blobs[*sblob].data;
    for (int64_t k = 0; k < q->K; k++) {
        uint16_t a = (uint16_t)q->alu[k], mu = (uint16_t)q->mul[k];
        sb[4 * k] = (uint8_t)a, sb[4 * k + 1] = (uint8_t)(a >> 8);
        sb[4 * k + 2] = (uint8_t)mu, sb[4 * k + 3] = (uint8_t)(mu >> 8);
    }
    *sblob2 = -1;
    if (q->mul2) { /* the X2 operands of a two-stage requantization, same layout */
        *sblob2 = dlc_add_blob(m, (size_t)q->K * 4);
        if (*sblob2 < 0) {
            return *sblob2;
        }
        sb = m->blobs[*sblob2].data;
        for (int64_t k = 0; k < q->K; k++) {
            uint16_t a = (uint16_t)q->alu2[k], mu = (uint16_t)q->mul2[k];
            sb[4 * k] = (uint8_t)a, sb[4 * k + 1] = (uint8_t)(a >> 8);
            sb[4 * k + 2] = (uint8_t)mu, sb[4 * k + 3] = (uint8_t)(mu >> 8);
        }
    }
    return 0;
}

/* A scratch feature cube of c x 1 x 1 in device memory (contents unused). */
static int scratch_cube(struct dlasim_model *m, uint32_t c, struct dlc_buf *b)
{
    memset(b, 0, sizeof *b);
    b->c = c, b->h = 1, b->w = 1;
    b->line = m->hw.atom_m;
    b->surf = b->line;
    b->size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, 1, 1, c, 0, 0);
    int a = dlc_add_address(m, b->size);
    b->addr_index = (int16_t)(a < 0 ? -1 : a);
    return a < 0 ? a : 0;
}

/* CSC keeps its weight ring from one convolution to the next unless
 * D_BANK changes (vmod NV_NVDLA_CSC_sg.v need_pending): between two
 * convolutions that fill CBUF with the same banks and no bank to spare,
 * a 1x1 convolution of one Atomic-C over a scratch 1x1 cube, in one data
 * and one weight bank, makes both changes; its weights are a multiple of
 * 128 bytes so it leaves no entries behind.  Output discarded (scratch). */
static int emit_ring_restart(struct dlasim_model *m, struct opvec *v, struct dlc_layer *L,
                             char *err, size_t errlen)
{
    const struct dlc_node *nd = &m->g.nodes[L->node];
    uint32_t c = m->hw.atomic_c, k = 128 / (c < 128 ? c : 128);
    k = k < m->hw.atomic_k ? m->hw.atomic_k : k;
    struct dlasim_conv_desc d;
    struct dlasim_conv_plan plan;
    struct dlc_buf bx, by;
    struct dlc_layer z;
    struct slopes sl = { 0, 0, -1 };
    char perr[256] = "";
    memset(&z, 0, sizeof z);
    dlasim_conv_desc_init(&d);
    d.in_w = d.in_h = 1, d.in_c = c, d.kernels = k, d.kernel_w = d.kernel_h = 1;
    if (dlasim_conv_plan(&m->hw, &d, &plan, perr, sizeof perr)) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "CBUF weight-ring restart convolution: %s", perr);
    }
    int wb = -1, sb = -1, ci = -1, si = -1;
    int rc = scratch_cube(m, c, &bx);
    rc = rc ? rc : scratch_cube(m, k, &by);
    rc = rc ? rc : (wb = dlc_add_blob(m, plan.weight_bytes)) < 0 ? wb : 0;
    rc = rc ? rc : (sb = dlc_add_blob(m, (size_t)k * 4)) < 0 ? sb : 0;
    rc = rc ? rc : (ci = dlc_new_op(v, DLASIM_RT_OP_CONV)) < 0 ? ci : 0;
    rc = rc ? rc : (si = dlc_new_op(v, DLASIM_RT_OP_SDP)) < 0 ? si : 0;
    if (!rc) {
        fill_conv_op(m, &v->ops[ci], &plan, &plan.layers[0], &d, &bx, &by, 0, 0, wb);
        fill_sdp_op(m, &v->ops[si], &v->ops[ci], &plan.layers[0], &z, &by, sb, -1, &sl, k, NULL);
        L->n_hw_ops += 2;
        L->ring_restart++;
    }
    dlasim_conv_plan_free(&plan);
    return rc ? dlc_node_errf(err, errlen, rc, nd, "out of memory for a weight-ring restart") : 0;
}

/* Input and output channels of one block of a convolution: a grouped or
 * depthwise convolution runs as blocks of whole groups, each a dense
 * convolution over its own channels (zero weights only between the groups
 * inside the block), reading its input channels and writing its output
 * channels in place: both start on an Atomic-M surface.  A convolution
 * without groups is one block. */
struct cblock {
    int64_t k0, nk, c0, nc;
};

/* Groups per block of a convolution with C input and K output channels
 * (see block_groups). */
static int64_t groups_per_block(const struct dlasim_model *m, const struct dlc_node *nd,
                                int64_t C, int64_t K)
{
    return nd->op == DLC_OP_CONV ? block_groups(m, nd->group, C, K) : 1;
}

/* The block's view of a feature buffer: n channels from channel c0 (a
 * multiple of Atomic-M). */
static struct dlc_buf channel_view(const struct dlasim_model *m, const struct dlc_buf *b,
                                   int64_t c0, int64_t n)
{
    struct dlc_buf v = *b;
    v.c = (uint32_t)n;
    v.offset += (uint32_t)(c0 / m->hw.atom_m) * b->surf;
    v.size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, v.w, v.h, v.c, 0, 0);
    return v;
}

/* The block's dense int8 weights [nk][nc][kh][kw]: each kernel's own
 * channels (kernel_len) at their place among the block's, zeros between the
 * groups; NULL when out of memory. */
static int8_t *block_weights(const struct qconv *q, int64_t group, const struct cblock *cb)
{
    size_t sp = (size_t)(q->kh * q->kw), row = (size_t)cb->nc * sp;
    int8_t *w = calloc((size_t)cb->nk * row, 1);
    int64_t kg = q->K / group;
    for (int64_t k = 0; w != NULL && k < cb->nk; k++) {
        int64_t c_first = (cb->k0 + k) / kg * q->cg; /* the kernel's first input channel */
        memcpy(w + (size_t)k * row + (size_t)(c_first - cb->c0) * sp,
               q->qw + (size_t)(cb->k0 + k) * kernel_len(q), kernel_len(q));
    }
    return w;
}

/* The fused pooling (fuse_pool): SDP operation si sends its cube `by` to
 * PDP instead of memory, and PDP pools it into the layer's output. */
static int pool_on_the_fly(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, int si,
                           const struct dlc_buf *by, size_t bands, char *err, size_t errlen)
{
    const struct dlc_node *pn = &m->g.nodes[L->fused[L->pool - 1]];
    if (bands != 1 || L->blocks != 0) { /* fuse_pool asked the planner the same */
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, &m->g.nodes[L->node],
                             "internal: a pooling fused on the fly after a convolution that "
                             "runs as %zu bands, block %d", bands, L->blocks);
    }
    v->ops[si].surface.sdp.dst_data = dlc_cube(by, DLASIM_RT_MEM_HW);
    int rc = dlc_pool_op(v, pn, by, &m->buf[L->out_tensor], DLASIM_RT_MEM_HW);
    if (rc) {
        return dlc_node_errf(err, errlen, rc, pn, rc == DLASIM_ERR_UNSUPPORTED
                             ? "PDP programming out of range (padding above 7 after ceil_mode)"
                             : "too many hardware operations");
    }
    L->n_hw_ops++;
    return 0;
}

/* One block: its weights (the block's rows and columns of the quantized
 * dense weights), its plan and its CONV + SDP operations per band. */
static int emit_block(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v,
                      const struct qconv *q, const struct cblock *cb, const struct dlc_buf *out,
                      char *err, size_t errlen)
{
    const struct dlc_node *nd = &m->g.nodes[L->node];
    struct dlc_buf bx = channel_view(m, dlc_stored_buf(m, L->in_tensor), cb->c0, cb->nc);
    struct dlc_buf by = channel_view(m, out, cb->k0, cb->nk);
    struct dlc_buf br; /* the fused residual's operand, the block's channels */
    if (L->residual) {
        br = channel_view(m, &m->buf[L->res_tensor], cb->k0, cb->nk);
    }
    struct qconv qb = { cb->nk, cb->nc, q->kh, q->kw, NULL, NULL, q->qw, q->alu + cb->k0,
                        q->mul + cb->k0, NULL, 0, q->alu2 ? q->alu2 + cb->k0 : NULL,
                        q->mul2 ? q->mul2 + cb->k0 : NULL, cb->nc };
    struct dlasim_conv_plan plan;
    struct dlasim_conv_desc d;
    struct slopes sl;
    char perr[256] = "";
    int have_plan = 0, wblob = -1, sblob = -1, sblob2 = -1, rc = 0;
    size_t per = (size_t)(q->kh * q->kw);
    int whole = cb->nc == q->C && cb->nk == q->K && q->cg == q->C;
    if (!whole && (qb.qw = block_weights(q, nd->op == DLC_OP_CONV ? nd->group : 1, cb)) == NULL) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory for its weights");
    }
    conv_desc(nd, &bx, &qb, L, &d);
    if (dlasim_conv_plan(&m->hw, &d, &plan, perr, sizeof perr)) {
        rc = dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                           "the convolution planner refuses it: %s", perr);
        goto out;
    }
    have_plan = 1;
    if (plan.out_w != by.w || plan.out_h != by.h) {
        rc = dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                           "planned output size differs from the ONNX shape");
        goto out;
    }
    L->macs += (uint64_t)(cb->nk * cb->nc) * per * plan.out_w * plan.out_h;
    if (plan.weight_mode != DLASIM_CONV_WEIGHTS_FULL) { /* the split along output channels */
        L->streamed_groups += (int)((cb->nk + m->hw.atomic_k - 1) / m->hw.atomic_k);
        L->streamed_bytes += plan.weight_bytes;
        L->weight_mode = (int)plan.weight_mode;
    }
    if ((rc = weight_blobs(m, &plan, &qb, &wblob, &sblob, &sblob2)) ||
        (rc = prelu_slopes(m, L, cb->k0, cb->nk, &sl))) {
        rc = dlc_node_errf(err, errlen, rc, nd, "out of device or host memory for its weights");
        goto out;
    }
    for (size_t i = 0; i < plan.n_layers; i++) {
        int ci = dlc_new_op(v, DLASIM_RT_OP_CONV);
        int si = ci < 0 ? ci : dlc_new_op(v, DLASIM_RT_OP_SDP);
        if (si < 0) {
            rc = dlc_node_errf(err, errlen, si, nd, "too many hardware operations");
            goto out;
        }
        fill_conv_op(m, &v->ops[ci], &plan, &plan.layers[i], &d, &bx, &by, L->cacc_trunc,
                     L->in_zero, wblob);
        fill_sdp_op(m, &v->ops[si], &v->ops[ci], &plan.layers[i], L, &by, sblob, sblob2, &sl,
                    cb->nk, L->residual ? &br : NULL);
        L->n_hw_ops += 2;
        if (L->pool && (rc = pool_on_the_fly(m, L, v, si, &by, plan.n_layers, err, errlen))) {
            goto out;
        }
    }
out:
    if (have_plan) {
        dlasim_conv_plan_free(&plan);
    }
    if (!whole) {
        free(qb.qw);
    }
    return rc;
}

static int emit_conv(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                     size_t errlen)
{
    const struct dlc_node *nd = &m->g.nodes[L->node];
    struct qconv q;
    memset(&q, 0, sizeof q);
    int rc = dense_weights(m, L, &q);
    rc = rc ? rc : quantize_conv(L, &q);
    if (rc) {
        qconv_free(&q);
        return dlc_node_errf(err, errlen, rc, nd, "out of memory for its weights");
    }
    int64_t per = groups_per_block(m, nd, q.C, q.K), groups = nd->op == DLC_OP_CONV ? nd->group : 1;
    int64_t cg = q.C / groups, kg = q.K / groups;
    /* the cube the convolution writes: its output tensor's buffer, or with a
     * pooling on the fly the unpooled cube SDP sends to PDP (no memory) */
    struct dlc_buf pre;
    const struct dlc_buf *out = &m->buf[L->out_tensor];
    if (L->pool) {
        const struct dlc_tensor *y = &m->g.t[nd->out];
        dlc_buf_layout(m, (uint32_t)y->dims[1], (uint32_t)y->dims[2], (uint32_t)y->dims[3], &pre);
        out = &pre;
    }
    L->macs = 0;
    L->blocks = 0;
    for (int64_t g0 = 0; g0 < groups && !rc; g0 += per) {
        int64_t n = groups - g0 < per ? groups - g0 : per;
        struct cblock cb = { g0 * kg, n * kg, g0 * cg, n * cg };
        /* a marked layer restarts the ring before each block (the conflict may be
         * between two blocks of its own) */
        rc = m->ring_restart[L->node] ? emit_ring_restart(m, v, L, err, errlen) : 0;
        rc = rc ? rc : emit_block(m, L, v, &q, &cb, out, err, errlen);
        L->blocks++;
    }
    qconv_free(&q);
    return rc;
}

const struct dlc_rule dlc_rule_conv = {
    DLC_ENG_CONV, conv_applies, conv_refusal, conv_take, emit_conv,
};

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

int dlc_separate_banks(struct dlasim_model *m, char *err, size_t errlen)
{
    struct dlasim_rt_op **convs = NULL;
    int *clayer = NULL; /* the layer of each of convs */
    struct wgroup *grp = NULL;
    size_t n = 0, ng = 0;
    int rc = 0;
    for (int s = 0; s < m->n_steps && !rc; s++) {
        for (int i = 0; i < m->steps[s].n_ops && !rc; i++) {
            if (m->steps[s].ops[i].op_type != DLASIM_RT_OP_CONV) {
                continue;
            }
            struct dlasim_rt_op **nc = realloc(convs, (n + 1) * sizeof *nc);
            int *nl = nc ? realloc(clayer, (n + 1) * sizeof *nl) : NULL;
            convs = nc ? nc : convs;
            clayer = nl ? nl : clayer;
            if (!nl) {
                rc = DLASIM_ERR_NOMEM;
                break;
            }
            clayer[n] = m->steps[s].op_layer[i];
            convs[n++] = &m->steps[s].ops[i];
        }
    }
    for (size_t i = 0; i < n && !rc; i++) { /* groups (pointers into convs, set below) */
        if (i == 0 || !convs[i]->op.conv.weight_reuse) {
            struct wgroup *g2 = realloc(grp, (ng + 1) * sizeof *g2);
            if (!g2) {
                rc = DLASIM_ERR_NOMEM;
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
        free(clayer);
        free(grp);
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "CBUF bank plan: out of memory");
    }
    m->reset_each_run = 0;
    int restart = 0;
    for (int i = 0; i < m->g.n_nodes; i++) { /* marks of the pass before are now old */
        m->ring_restart[i] = m->ring_restart[i] ? 1 : 0;
    }
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
        if (!ok) { /* no bank to spare: a restart convolution before it (next pass) */
            const struct dlc_layer *L = &m->layers[clayer[g->ops - convs]];
            if (m->ring_restart[L->node] == 1) { /* marked by an earlier pass */
                rc = dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, &m->g.nodes[L->node],
                                   "CBUF weight ring: the same banks as the convolution before "
                                   "it even after a restart convolution");
            }
            m->ring_restart[L->node] = 2; /* this pass (another block may fail too) */
            restart = 1;
        }
    }
    /* one weight group leaving entries behind follows itself at the next inference */
    if (ng == 1 && ring_lag(m, grp[0].ops[grp[0].n - 1]) > 0) {
        m->reset_each_run = 1;
    }
    free(convs);
    free(clayer);
    free(grp);
    return rc ? rc : restart;
}
