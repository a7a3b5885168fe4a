/*
 * Lowering rules on SDP reading from memory:
 *   - element-wise Add / Sub / Mul of two tensors and a standalone Relu;
 *   - per-channel affine layers (a standalone BatchNormalization, an
 *     Add/Sub/Mul of a per-channel or scalar constant) on X1 (BS);
 *   - Sigmoid / Tanh on the LUT (Y stage) when the configuration has one.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"

/* ---- SDP from memory: element-wise Add / Sub of two tensors, standalone Relu ---------- */

static int same_cube(const struct dlc_buf *a, const struct dlc_buf *b)
{
    return a->c == b->c && a->h == b->h && a->w == b->w;
}

/* A Mul of an N C H W activation by an N C 1 1 one (squeeze-and-excitation):
 * which input is the per-channel operand (1 or 0), or -1 when it is not one. */
static int channel_mul_operand(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_graph *g = &m->g;
    if (nd->op != DLC_OP_MUL || nd->n_in != 2 || nd->in[0] == nd->in[1]) {
        return -1;
    }
    const struct dlc_tensor *y = &g->t[nd->out];
    for (int s = 0; s < 2; s++) {
        const struct dlc_tensor *big = &g->t[nd->in[1 - s]], *small = &g->t[nd->in[s]];
        if (y->rank == 4 && big->n == y->n && small->rank == 4 && small->n == y->dims[1] &&
            small->dims[1] == y->dims[1] && !big->is_const && !small->is_const &&
            !dlc_layout_differs(m, nd->in[1 - s]) && dlc_stored_buf(m, nd->in[s])->c == small->n &&
            dlc_stored_buf(m, nd->in[s])->h == 1 && dlc_stored_buf(m, nd->in[s])->w == 1) {
            return s;
        }
    }
    return -1;
}

/* An Add / Sub + Relu of affine int8 codes that SDP cannot do (add_zeros
 * below): the Relu must stay in X2, where one operand's zero point is still
 * in the sum, because the output's zero point is not -128 and both operands
 * (the minuend of a Sub) have one.  NULL when it can. */
static const char *relu_zero_refusal(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_graph *g = &m->g;
    int r = dlc_only_reader(g, nd->out);
    if ((nd->op != DLC_OP_ADD && nd->op != DLC_OP_SUB) || r < 0 ||
        g->nodes[r].op != DLC_OP_RELU || g->t[g->nodes[r].out].zero == -128) {
        return NULL;
    }
    int za = g->t[m->store[nd->in[0]]].zero, zb = g->t[m->store[nd->in[1]]].zero;
    if (nd->op == DLC_OP_SUB ? za != 0 : za != 0 && zb != 0) {
        return "a Relu after it with an output zero point other than the bottom of int8, and "
               "operand zero points SDP would still carry in the sum the Relu sees";
    }
    return NULL;
}

/* Why an Add/Sub of two tensors or a Relu cannot run on SDP from memory (NULL = it can). */
static const char *sdp_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                               char *why, size_t n)
{
    (void)why, (void)n;
    const struct dlc_graph *g = &m->g;
    const struct dlc_tensor *y = &g->t[nd->out];
    if (channel_mul_operand(m, nd) >= 0) {
        return NULL;
    }
    int64_t c, h, w;
    dlc_cube_of(y, &c, &h, &w);
    struct dlc_buf want = { 0, (uint32_t)c, (uint32_t)h, (uint32_t)w, 0, 0, 0, 0 };
    int n_in = nd->op == DLC_OP_RELU ? 1 : 2;
    for (int i = 0; i < n_in; i++) {
        const struct dlc_tensor *x = &g->t[nd->in[i]];
        if (x->is_const) {
            return "element-wise operation with a constant not after a convolution";
        }
        if (x->n != y->n || !same_cube(dlc_stored_buf(m, nd->in[i]), &want)) {
            return "operands of different shapes (broadcasting) or stored in another layout";
        }
    }
    if (nd->n_in == 2 && nd->in[0] == nd->in[1]) {
        return "both operands are the same tensor";
    }
    return relu_zero_refusal(m, nd);
}

/* SDP reading `src` from memory:
 *   Relu:     BS ReLU only (the output keeps the input's scale);
 *   Add/Sub:  BS multiplies src by its scale ratio to the other operand's
 *             scale / 2^K (per-layer MUL, negative for the subtrahend), BN
 *             adds the other operand read per element by NRDMA (ALU,
 *             shifted left by K), ReLU when a Relu follows, and the output
 *             converter scales to the output's scale. */
/* A pre-quantized model's Add for one choice of X1's operand (the source):
 * X1 = src x m_src >> t_src in units of 2^-k operand steps (X1's multiplier
 * has no left shift: r x 2^k < 2^15), X2 adds the operand << k, CVT
 * multiplies by m_out >> t_out.  The operand's ratio to the output step is
 * CVT's 16-bit scale alone, the source's m_src x m_out with m_src chosen
 * against the rounded m_out: both are exact to about 2^-16 relative, not
 * better (the ratio between the operands is X1's one int16 multiplier, and
 * no nv_small SDP stage multiplies the per-point operand before the sum).
 * err: the worst output error in output steps, 127 codes of each operand
 * plus half an X1 unit. */
struct add_req {
    int k;
    uint32_t t_src, t_out;
    int16_t m_src, m_out;
    double err;
};
static struct add_req add_requant(double s_src, double s_opd, double s_out)
{
    struct add_req q = { 0 };
    double r = s_src / s_opd;
    q.k = (int)floor(log2(16383.0 / r));
    q.k = q.k < 0 ? 0 : q.k > 20 ? 20 : q.k;
    q.m_src = dlc_fit16(r * ldexp(1.0, q.k), &q.t_src, 31);
    q.m_out = dlc_fit16(s_opd / ldexp(1.0, q.k) / s_out, &q.t_out, 63);
    if (q.m_out > 0) { /* X1 x CVT multiplies the source: make up for CVT's rounding */
        q.m_src = dlc_fit16(s_src / s_out * ldexp(1.0, (int)q.t_out) / q.m_out, &q.t_src, 31);
    }
    double cvt = q.m_out / ldexp(1.0, (int)q.t_out);
    double e_src = fabs(q.m_src / ldexp(1.0, (int)q.t_src) * cvt - s_src / s_out);
    double e_opd = fabs(ldexp(1.0, q.k) * cvt - s_opd / s_out);
    q.err = 127.0 * (e_src + e_opd) + 0.5 * cvt;
    return q;
}

/* The zero points of a pre-quantized Add / Sub (affine int8 codes, ir.h
 * `zero`).  X1 subtracts the source's zero point before its multiplier
 * (exact, set by the caller); the operand's, z_opd << k, is still in X2's
 * sum x, and the output's is added by CVT, which computes
 * (x - offset) x m_out >> t_out: offset = z_opd 2^k - z_out 2^t_out / m_out,
 * rounded to an integer (at most half a unit of x: 2^-(k+1) operand steps,
 * as X1's own rounding).  X2's Relu acts on x, so with an operand zero
 * point it is dropped when the output's zero point is -128: the
 * saturation at the bottom of int8 is then the Relu exactly (round is
 * monotonic); otherwise 1 (refused); 2 when the offset needs more than 32
 * bits.  0 with s->out_cvt.offset set. */
static int add_zeros(const struct dlasim_model *m, const struct dlc_layer *L, int opd_t, int k,
                     uint32_t t_out, int16_t m_out, struct dlasim_rt_sdp_op *s, int *relu)
{
    const struct dlc_graph *g = &m->g;
    int z_opd = g->t[opd_t].zero, z_out = g->t[L->out_tensor].zero;
    if (!z_opd && !z_out) {
        return 0;
    }
    if (*relu && z_opd) {
        if (z_out != -128) {
            return 1;
        }
        *relu = 0;
    }
    double off = ldexp((double)z_opd, k) - (m_out ? ldexp((double)z_out, (int)t_out) / m_out : 0);
    off = floor(off + 0.5);
    if (fabs(off) > 2147483647.0) {
        return 2;
    }
    s->out_cvt.offset = (int32_t)off;
    return 0;
}

static int emit_sdp(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                    size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    int oi = dlc_new_op(v, DLASIM_RT_OP_SDP);
    if (oi < 0) {
        return dlc_node_errf(err, errlen, oi, nd, "too many hardware operations");
    }
    struct dlasim_rt_op *o = &v->ops[oi];
    struct dlasim_rt_sdp_op *s = &o->op.sdp;
    struct dlasim_rt_sdp_surface *ss = &o->surface.sdp;
    s->lut_index = -1;
    s->out_cvt.scale = 1;
    s->batch_num = 1;
    ss->x1_data.address = ss->x2_data.address = ss->y_data.address = -1;
    ss->dst_data = dlc_cube(by, DLASIM_RT_MEM_MC);
    L->n_hw_ops = 1;
    if (nd->op == DLC_OP_RELU) {
        ss->src_data = dlc_cube(dlc_stored_buf(m, nd->in[0]), DLASIM_RT_MEM_MC);
        s->x1_op.enable = 1;
        s->x1_op.type = DLASIM_RT_SDP_NONE;
        s->x1_op.act = DLASIM_RT_ACT_RELU;
        return 0;
    }
    if (nd->op == DLC_OP_MUL) { /* X2 multiplies by the other operand read per element, or
                                   * per channel (one int8 per channel, contiguous: the
                                   * operand's 1 x 1 cube) */
        int per_channel = channel_mul_operand(m, nd);
        int a = m->store[nd->in[per_channel == 0 ? 1 : 0]];
        int b = m->store[nd->in[per_channel == 0 ? 0 : 1]];
        ss->src_data = dlc_cube(&m->buf[a], DLASIM_RT_MEM_MC);
        s->x2_op.enable = 1;
        s->x2_op.type = DLASIM_RT_SDP_MUL;
        s->x2_op.mode = per_channel >= 0 ? DLASIM_RT_SDP_PER_KERNEL : DLASIM_RT_SDP_PER_POINT;
        s->x2_op.act = L->relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
        s->x2_op.precision = DLASIM_RT_INT8;
        ss->x2_data = dlc_cube(&m->buf[b], DLASIM_RT_MEM_MC);
        uint32_t t_out = 0;
        s->out_cvt.scale = dlc_fit16((double)g->t[a].scale * g->t[b].scale / g->t[L->out_tensor].scale,
                                 &t_out, 63);
        s->out_cvt.truncate = (uint8_t)t_out;
        L->cacc_trunc = t_out;
        return 0;
    }
    int sub = nd->op == DLC_OP_SUB;
    /* Sub: the subtrahend is the source (negated), the minuend the operand */
    int src_t = m->store[nd->in[sub ? 1 : 0]], opd_t = m->store[nd->in[sub ? 0 : 1]];
    int preq = g->t[L->out_tensor].qscale > 0; /* a pre-quantized model's Add */
    double s_out = g->t[L->out_tensor].scale;
    int k = 7;
    uint32_t t_src = 0, t_out = 0;
    int16_t m_src, m_out;
    if (preq) { /* each order of the operands, the one with the smaller worst error */
        struct add_req q = add_requant(g->t[src_t].scale, g->t[opd_t].scale, s_out);
        if (!sub) {
            struct add_req w = add_requant(g->t[opd_t].scale, g->t[src_t].scale, s_out);
            /* a Relu that must stay in X2 wants the operand without a zero point */
            int swap_for_relu = L->relu && g->t[L->out_tensor].zero != -128 &&
                       g->t[opd_t].zero && !g->t[src_t].zero;
            int stay_for_relu = L->relu && g->t[L->out_tensor].zero != -128 &&
                        !g->t[opd_t].zero && g->t[src_t].zero;
            if (swap_for_relu || (!stay_for_relu && w.err < q.err)) {
                int t = src_t;
                src_t = opd_t, opd_t = t, q = w;
            }
        }
        k = q.k, t_src = q.t_src, t_out = q.t_out, m_src = q.m_src, m_out = q.m_out;
    } else {
        double r = g->t[src_t].scale / g->t[opd_t].scale;
        while (k > 0 && r * ldexp(1.0, k) > 8192.0) {
            k--;
        }
        m_src = dlc_fit16(r * ldexp(1.0, k), &t_src, 31);
        m_out = dlc_fit16(g->t[opd_t].scale / ldexp(1.0, k) / s_out, &t_out, 63);
    }
    ss->src_data = dlc_cube(&m->buf[src_t], DLASIM_RT_MEM_MC);
    int relu = L->relu;
    int zrc = add_zeros(m, L, opd_t, k, t_out, m_out, s, &relu);
    if (zrc == 1) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "%s + Relu of affine int8 codes: the Relu sits before SDP's output "
                             "offset, where the operand's zero point (%d) is still in the sum, "
                             "and the output's zero point (%d) is not the bottom of int8 (where "
                             "the saturation would be the Relu)", dlc_op_names[nd->op],
                             g->t[opd_t].zero, g->t[L->out_tensor].zero);
    }
    if (zrc) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "the zero points (operand %d, output %d) need an output converter "
                             "offset beyond 32 bits at these scales", g->t[opd_t].zero,
                             g->t[L->out_tensor].zero);
    }
    s->x1_op.enable = 1;
    s->x1_op.type = DLASIM_RT_SDP_MUL;
    s->x1_op.mode = DLASIM_RT_SDP_PER_LAYER;
    s->x1_op.mul_operand = sub ? -m_src : m_src;
    if (g->t[src_t].zero) { /* (src - its zero) x m: X1's ALU first, per layer, exact */
        s->x1_op.type = DLASIM_RT_SDP_BOTH;
        s->x1_op.alu_type = 2; /* SUM */
        s->x1_op.alu_operand = -g->t[src_t].zero;
    }
    s->x1_op.truncate = (uint8_t)t_src;
    s->x1_op.precision = DLASIM_RT_INT16;
    s->x2_op.enable = 1;
    s->x2_op.alu_type = 2; /* SUM */
    s->x2_op.type = DLASIM_RT_SDP_ADD;
    s->x2_op.mode = DLASIM_RT_SDP_PER_POINT;
    s->x2_op.shift_value = (uint8_t)k;
    s->x2_op.act = relu ? DLASIM_RT_ACT_RELU : DLASIM_RT_ACT_NONE;
    s->x2_op.precision = DLASIM_RT_INT8;
    ss->x2_data = dlc_cube(&m->buf[opd_t], DLASIM_RT_MEM_MC);
    s->out_cvt.scale = m_out;
    s->out_cvt.truncate = (uint8_t)t_out;
    L->mul_shift = t_src;
    L->alu_shift = (uint32_t)k;
    L->cacc_trunc = t_out;
    return 0;
}
/* ---- element-wise functions on the SDP LUT --------------------------------------------- */

static const char *lut_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                               char *why, size_t n)
{
    (void)why, (void)n;
    const struct dlc_tensor *x = &m->g.t[nd->in[0]];
    int64_t c, h, w;
    dlc_cube_of(x, &c, &h, &w);
    const struct dlc_buf *b = dlc_stored_buf(m, nd->in[0]);
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
    if (op == DLC_OP_HARDSWISH) {
        double h = x / 6.0 + 0.5;
        return x * (h < 0 ? 0 : h > 1 ? 1 : h);
    }
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
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory for its LUT");
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
        lut->linear_only_table[i] = dlc_sat16(lut_function(nd->op, (i - 129) * s_in) * ldexp(1.0, F));
    }
    lut->method = 1;
    lut->linear_only_start = (uint64_t)(int64_t)-129;
    lut->linear_only_end = 127;
    lut->linear_exp_start = (uint64_t)1 << 30; /* never hit */
    lut->linear_exp_end = ((uint64_t)1 << 30) + 64;
    lut->hybrid_priority = lut->underflow_priority = lut->overflow_priority = 1; /* LO */
    int oi = dlc_new_op(v, DLASIM_RT_OP_SDP);
    if (oi < 0) {
        return dlc_node_errf(err, errlen, oi, nd, "too many hardware operations");
    }
    struct dlasim_rt_op *o = &v->ops[oi];
    struct dlasim_rt_sdp_op *s = &o->op.sdp;
    struct dlasim_rt_sdp_surface *ss = &o->surface.sdp;
    s->lut_index = (int16_t)v->n_luts++;
    s->batch_num = 1;
    s->y_op.enable = 1;
    s->y_op.type = DLASIM_RT_SDP_NONE;
    s->y_op.act = DLASIM_RT_ACT_LUT;
    uint32_t t_out = 0;
    s->out_cvt.scale = dlc_fit16(1.0 / (L->out_scale * ldexp(1.0, F)), &t_out, 63);
    s->out_cvt.truncate = (uint8_t)t_out;
    ss->src_data = dlc_cube(dlc_stored_buf(m, nd->in[0]), DLASIM_RT_MEM_MC);
    ss->dst_data = dlc_cube(&m->buf[L->out_tensor], DLASIM_RT_MEM_MC);
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
    } else if (nd->op == DLC_OP_HARDSIGMOID) { /* alpha * x + beta, clipped by ReLU and int8 */
        for (int64_t i = 0; i < k; i++) {
            a[i] = nd->alpha;
            b[i] = nd->beta;
        }
    } else if ((nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB || nd->op == DLC_OP_MUL) &&
               dlc_per_channel_const(g, nd, k, &ai, &ci) && (nd->op != DLC_OP_SUB || ai == 0)) {
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

static const char *affine_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                  char *why, size_t n)
{
    (void)why, (void)n;
    const struct dlc_graph *g = &m->g;
    const struct dlc_tensor *y = &g->t[nd->out];
    if (y->rank != 4 && y->rank != 2) {
        return "per-channel operation on a tensor that is not NCHW or [1, C]";
    }
    int64_t c, h, w;
    dlc_cube_of(y, &c, &h, &w);
    int act = nd->op == DLC_OP_BN || nd->op == DLC_OP_HARDSIGMOID ? 0 : g->t[nd->in[0]].is_const;
    const struct dlc_buf *bx = dlc_stored_buf(m, nd->in[act]);
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
    int act = nd->op == DLC_OP_BN || nd->op == DLC_OP_HARDSIGMOID ? 0 : g->t[nd->in[0]].is_const;
    const struct dlc_buf *bx = dlc_stored_buf(m, nd->in[act]);
    int64_t k = bx->c;
    double *a = malloc((size_t)k * sizeof(double)), *b = malloc((size_t)k * sizeof(double));
    int rc = a && b ? 0 : DLASIM_ERR_NOMEM;
    if (!rc && !affine_of(m, nd, k, a, b)) { /* affine_refusal checked it */
        rc = DLASIM_ERR_UNSUPPORTED;
    }
    int bi = rc ? rc : dlc_add_blob(m, (size_t)k * 4);
    int oi = bi < 0 ? bi : dlc_new_op(v, DLASIM_RT_OP_SDP);
    if (oi < 0) {
        free(a);
        free(b);
        return dlc_node_errf(err, errlen, oi, nd, "%s", oi == DLASIM_ERR_NOMEM ? "out of memory"
                             : "not a per-channel affine function, or too many operations");
    }
    struct dlasim_rt_op *o = &v->ops[oi];
    struct dlc_blob *blob = &m->blobs[bi];
    double mmax = 0, bmax = 0;
    for (int64_t i = 0; i < k; i++) {
        double mk = fabs(a[i]) * L->in_scale / L->out_scale;
        double bk = a[i] != 0 ? fabs(b[i] / (a[i] * L->in_scale)) : 0;
        mmax = mk > mmax ? mk : mmax;
        bmax = bk > bmax ? bk : bmax;
        /* the precision flags (precision.c): a channel the input moves by
         * less than one output step while its bias is a step or more */
        if (a[i] != 0 && 127 * mk < 1.0 && fabs(b[i]) >= L->out_scale) {
            if (!L->flat_channels || fabs(b[i]) > L->flat_bias) {
                L->flat_bias = (float)fabs(b[i]);
                L->flat_swing = (float)(127 * mk);
            }
            L->flat_channels++;
        }
    }
    /* the X1 ALU operand saturates to 32 bits once shifted (no CACC
     * truncation for an input read from memory): flagged, see precision.c */
    L->bias_saturates = bmax > 32767.0 * ldexp(1.0, 31);
    uint32_t sh = 0;
    dlc_fit16(mmax > 0 ? mmax : 1.0, &sh, 31);
    int ash = 0;
    while (bmax / ldexp(1.0, ash) > 32767.0 && ash < 31) {
        ash++;
    }
    for (int64_t i = 0; i < k; i++) {
        uint16_t al = (uint16_t)dlc_sat16(a[i] != 0 ? b[i] / (a[i] * L->in_scale) / ldexp(1.0, ash) : 0);
        uint16_t mu = (uint16_t)dlc_sat16(a[i] * L->in_scale / L->out_scale * ldexp(1.0, (int)sh));
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
    ss->src_data = dlc_cube(bx, DLASIM_RT_MEM_MC);
    ss->dst_data = dlc_cube(&m->buf[L->out_tensor], DLASIM_RT_MEM_MC);
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

/* ---- the rules ------------------------------------------------------------------------ */

static int is_eltwise(enum dlc_op op)
{
    return op == DLC_OP_ADD || op == DLC_OP_SUB || op == DLC_OP_MUL;
}

static int eltwise_applies(const struct dlasim_model *m, const struct dlc_node *nd)
{
    (void)m;
    return is_eltwise(nd->op) || nd->op == DLC_OP_RELU;
}

/* Add + Relu fused; a standalone ReLU keeps the scale of its input. */
static void eltwise_take(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    if (nd->op != DLC_OP_RELU) {
        dlc_fuse_relu(m, L, fused);
    } else {
        g->t[nd->out].scale = g->t[m->store[nd->in[0]]].scale;
        g->t[nd->out].amax = g->t[m->store[nd->in[0]]].amax;
    }
    L->in_scale = g->t[m->store[nd->in[0]]].scale;
    L->out_scale = g->t[L->out_tensor].scale;
}

static int affine_applies(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_graph *g = &m->g;
    return nd->op == DLC_OP_BN || nd->op == DLC_OP_HARDSIGMOID ||
           (is_eltwise(nd->op) && (g->t[nd->in[0]].is_const || g->t[nd->in[1]].is_const));
}

static void affine_take(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    if (nd->op == DLC_OP_HARDSIGMOID) { /* clip at 0: ReLU; at 1: the output's int8 range */
        L->relu = 1;
    } else {
        dlc_fuse_relu(m, L, fused);
    }
    int act = nd->op != DLC_OP_BN && nd->op != DLC_OP_HARDSIGMOID && g->t[nd->in[0]].is_const;
    L->in_scale = g->t[m->store[nd->in[act]]].scale;
    L->out_scale = g->t[L->out_tensor].scale;
}

static int lut_applies(const struct dlasim_model *m, const struct dlc_node *nd)
{
    (void)m;
    return nd->op == DLC_OP_SIGMOID || nd->op == DLC_OP_TANH || nd->op == DLC_OP_HARDSWISH;
}

static void lut_take(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    const struct dlc_graph *g = &m->g;
    (void)fused;
    L->in_scale = g->t[m->store[L->in_tensor]].scale;
    L->out_scale = g->t[L->out_tensor].scale;
}

const struct dlc_rule dlc_rule_sdp_eltwise = {
    DLC_ENG_SDP, eltwise_applies, sdp_refusal, eltwise_take, emit_sdp,
};
const struct dlc_rule dlc_rule_sdp_affine = {
    DLC_ENG_SDP, affine_applies, affine_refusal, affine_take, emit_sdp_affine,
};
const struct dlc_rule dlc_rule_sdp_lut = {
    DLC_ENG_SDP, lut_applies, lut_refusal, lut_take, emit_sdp_lut,
};
