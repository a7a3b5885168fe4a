/*
 * Pre-quantized models: QDQ graphs as PyTorch's and ONNX Runtime's
 * quantization tools write them (ONNX QuantizeLinear / DequantizeLinear,
 * opset 13 operator definitions).
 *
 * The model's own quantization replaces calibration:
 *  - DequantizeLinear of constants (int8 weights, int32 biases) folds into
 *    a float constant, (q - zero_point) * scale, as ONNX defines it; int8
 *    weights with zero point 0 keep their scales (per tensor or per output
 *    channel) so the lowering stores exactly the model's int8 codes
 *    (lower_conv.c, dlc_given_wscale).
 *  - QuantizeLinear(x) -> [Cast] -> DequantizeLinear on an activation
 *    becomes a no-op and x keeps the model's step and zero point: NVDLA
 *    stores the int8 code q - 128 (uint8) or q (int8), value = (code -
 *    zero) * scale with zero = zp - 128 or zp (ir.h `zero`; the lowering
 *    folds it into biases, pad values and output offsets).  A per-channel
 *    activation scale or zero point, or a pair whose scales or zero points
 *    differ, is refused, naming the node.
 * Rounding of every requantization then follows the hardware (SDP/CACC
 * multiplier and shifts); docs/compiler.md states the error against ONNX
 * Runtime's int8 kernels.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/compiler_int.h"

enum { T_UINT8 = 2, T_INT8 = 3, T_INT32 = 6 };

static const struct dlc_tensor *input_at(const struct dlc_graph *g, const struct dlc_node *nd,
                                         int i)
{
    return i < nd->n_in && nd->in[i] >= 0 ? &g->t[nd->in[i]] : NULL;
}

static int64_t int_of(const struct dlc_tensor *t, int64_t i)
{
    return t->is_int ? t->idata[i] : (int64_t)t->data[i];
}

/* Scale and zero point inputs (1 and 2) of a Q / DQ node: constants, scales
 * finite and positive, one zero point per scale.  0 or a refusal. */
static int check_params(const struct dlc_graph *g, const struct dlc_node *nd, char *err,
                        size_t errlen)
{
    const struct dlc_tensor *s = input_at(g, nd, 1), *z = input_at(g, nd, 2);
    if (!s || !s->is_const || (z && !z->is_const)) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "scale and zero point must be constants");
    }
    for (int64_t i = 0; i < s->n; i++) {
        if (!(s->data[i] > 0) || !isfinite(s->data[i])) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                                 "scale %g is not a positive finite number", (double)s->data[i]);
        }
    }
    if (z && z->n != s->n) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "%lld zero points for %lld scales (ONNX: one per scale; an "
                             "activation has one scale and one zero point)", (long long)z->n,
                             (long long)s->n);
    }
    return 0;
}

/* The element type a Q writes / a DQ reads: its zero point's (uint8 when absent). */
static int zp_type(const struct dlc_graph *g, const struct dlc_node *nd)
{
    const struct dlc_tensor *z = input_at(g, nd, 2);
    return z && z->elem ? z->elem : T_UINT8;
}

/* A per-tensor activation zero point: any value of uint8 or int8.  NVDLA
 * stores the int8 code s = q - 128 (uint8) or q (int8) and the lowering
 * carries the code of 0 (tensor field `zero`): folded into the convolution
 * bias, CSC's pad value and SDP's output offset (lower_conv.c), the Add's
 * operands (lower_sdp.c).  0 or a refusal saying why. */
static int check_act_zp(const struct dlc_graph *g, const struct dlc_node *nd, char *err,
                        size_t errlen)
{
    int type = zp_type(g, nd);
    if (type != T_UINT8 && type != T_INT8) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "activations of ONNX element type %d: only uint8 and int8 are "
                             "supported", type);
    }
    return 0;
}

/* The device's int8 code of the value 0 for a Q / DQ node's zero point. */
static int device_zero(const struct dlc_graph *g, const struct dlc_node *nd)
{
    const struct dlc_tensor *z = input_at(g, nd, 2);
    int64_t zp = z ? int_of(z, 0) : 0;
    return (int)(zp_type(g, nd) == T_UINT8 ? zp - 128 : zp);
}

/* QuantizeLinear of a constant: round half to even, saturate (ONNX). */
int dlc_fold_quantize(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    int rc = check_params(g, nd, err, errlen);
    if (rc) {
        return rc;
    }
    const struct dlc_tensor *x = input_at(g, nd, 0), *s = input_at(g, nd, 1),
                            *z = input_at(g, nd, 2);
    struct dlc_tensor *o = &g->t[nd->out];
    int type = zp_type(g, nd);
    int lo = type == T_INT8 ? -128 : 0, hi = type == T_INT8 ? 127 : 255;
    if (s->n != 1) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "per-axis quantization of a constant is not supported");
    }
    o->data = malloc((size_t)(x->n ? x->n : 1) * sizeof(float));
    o->idata = malloc((size_t)(x->n ? x->n : 1) * sizeof(int64_t));
    if (!o->data || !o->idata) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory folding it");
    }
    for (int64_t i = 0; i < x->n; i++) {
        double q = nearbyint((double)x->data[i] / s->data[0]) + (double)(z ? int_of(z, 0) : 0);
        o->idata[i] = (int64_t)(q < lo ? lo : q > hi ? hi : q);
        o->data[i] = (float)o->idata[i];
    }
    o->rank = x->rank;
    memcpy(o->dims, x->dims, sizeof o->dims);
    o->n = x->n;
    o->is_const = o->is_int = 1;
    o->elem = type;
    o->producer = -1;
    return 0;
}

/* Which axis of the constant the scales run along (per-axis), -1 per tensor. */
static int scale_axis(const struct dlc_tensor *x, const struct dlc_tensor *s,
                      const struct dlc_node *nd)
{
    if (s->n == 1) {
        return -1;
    }
    int axis = nd->axis < 0 ? nd->axis + x->rank : nd->axis;
    return axis >= 0 && axis < x->rank && x->dims[axis] == s->n ? axis : -2;
}

/* Keep the scales of int8 weights whose codes are their int8 values. */
static int keep_wscale(struct dlc_tensor *o, const struct dlc_tensor *x,
                       const struct dlc_tensor *s, const struct dlc_tensor *z, int axis)
{
    int exact = x->elem == T_INT8 || x->elem == T_UINT8;
    for (int64_t i = 0; z && exact && i < z->n; i++) {
        exact = int_of(z, i) == (x->elem == T_UINT8 ? 128 : 0);
    }
    if (!exact) {
        return 0;
    }
    o->qw_scale = malloc((size_t)s->n * sizeof(float));
    if (!o->qw_scale) {
        return DLASIM_ERR_NOMEM;
    }
    memcpy(o->qw_scale, s->data, (size_t)s->n * sizeof(float));
    o->qw_n = s->n;
    o->qw_axis = axis;
    return 0;
}

int dlc_fold_dequantize(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = input_at(g, nd, 0), *s = input_at(g, nd, 1),
                            *z = input_at(g, nd, 2);
    int rc = check_params(g, nd, err, errlen);
    int axis = rc ? 0 : scale_axis(x, s, nd);
    if (!rc && axis == -2) {
        rc = dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                           "%lld scales match no dimension along axis %d", (long long)s->n,
                           nd->axis);
    }
    if (!rc && !x->is_int) {
        rc = dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "input is not an integer tensor");
    }
    if (rc) {
        return rc;
    }
    struct dlc_tensor *o = &g->t[nd->out];
    int64_t inner = 1;
    for (int d = axis + 1; axis >= 0 && d < x->rank; d++) {
        inner *= x->dims[d];
    }
    o->data = malloc((size_t)(x->n ? x->n : 1) * sizeof(float));
    if (!o->data) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory folding it");
    }
    for (int64_t i = 0; i < x->n; i++) {
        int64_t c = axis < 0 ? 0 : (i / inner) % s->n;
        int64_t zp = z ? int_of(z, c) : 0;
        o->data[i] = (float)(x->idata[i] - zp) * s->data[c]; /* ONNX: float (x - zp) * scale */
    }
    o->rank = x->rank;
    memcpy(o->dims, x->dims, sizeof o->dims);
    o->n = x->n;
    o->is_const = 1;
    o->producer = -1;
    if (keep_wscale(o, x, s, z, axis)) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory folding it");
    }
    return 0;
}

int dlc_is_qdq_node(const struct dlc_graph *g, const struct dlc_node *nd)
{
    if (nd->op == DLC_OP_QUANTIZE || nd->op == DLC_OP_DEQUANTIZE) {
        return 1;
    }
    const struct dlc_tensor *x = input_at(g, nd, 0);
    return nd->op == DLC_OP_CAST && x && x->qdomain;
}

/* The node passes its input through: shaped as it, removed as a no-op later. */
static void become_identity(struct dlc_graph *g, struct dlc_node *nd)
{
    const struct dlc_tensor *x = &g->t[nd->in[0]];
    struct dlc_tensor *o = &g->t[nd->out];
    o->rank = x->rank;
    memcpy(o->dims, x->dims, sizeof o->dims);
    o->n = x->n;
    for (int i = 1; i < nd->n_in; i++) { /* scale / zero point: no longer read */
        if (nd->in[i] >= 0) {
            g->t[nd->in[i]].consumers--;
        }
    }
    nd->n_in = 1;
    nd->op = DLC_OP_IDENTITY;
}

static int quantize_activation(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *s = input_at(g, nd, 1), *z = input_at(g, nd, 2);
    struct dlc_tensor *x = &g->t[nd->in[0]];
    if (x->qdomain) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "its input is already quantized (a QuantizeLinear of int8 codes)");
    }
    if (s->n != 1) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "per-channel activation scales (%lld values) are not supported: "
                             "NVDLA has one scale per feature tensor", (long long)s->n);
    }
    int rc = check_act_zp(g, nd, err, errlen);
    if (rc) {
        return rc;
    }
    if (x->qscale > 0 && x->qscale != s->data[0]) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "tensor '%s' is quantized at two steps (%g here, %g by node '%s'): "
                             "one int8 tensor has one scale", x->name, (double)s->data[0],
                             (double)x->qscale, g->nodes[x->qnode].name);
    }
    if (x->qscale > 0 && x->zero != device_zero(g, nd)) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "tensor '%s' is quantized with two zero points (node '%s' too): "
                             "one int8 tensor has one zero point", x->name,
                             g->nodes[x->qnode].name);
    }
    x->qscale = s->data[0];
    x->zero = device_zero(g, nd);
    x->qnode = (int)(nd - g->nodes);
    struct dlc_tensor *o = &g->t[nd->out];
    o->qdomain = zp_type(g, nd);
    o->qzp = z ? (int)int_of(z, 0) : 0;
    o->qscale = s->data[0];
    o->qnode = x->qnode;
    become_identity(g, nd);
    return 0;
}

/* The float tensor behind a chain of Q / Cast no-ops. */
static int source_of(const struct dlc_graph *g, int t)
{
    while (g->t[t].producer >= 0 && g->nodes[g->t[t].producer].op == DLC_OP_IDENTITY &&
           g->t[t].qdomain) {
        t = g->nodes[g->t[t].producer].in[0];
    }
    return t;
}

static int dequantize_activation(struct dlc_graph *g, struct dlc_node *nd, char *err,
                                 size_t errlen)
{
    const struct dlc_tensor *s = input_at(g, nd, 1), *z = input_at(g, nd, 2);
    const struct dlc_tensor *x = &g->t[nd->in[0]];
    if (!x->qdomain) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "its input '%s' is not the output of a QuantizeLinear (an integer "
                             "graph input or integer arithmetic is not supported)", x->name);
    }
    int64_t zp = z ? int_of(z, 0) : 0;
    if (s->n != 1 || s->data[0] != x->qscale || zp != x->qzp || zp_type(g, nd) != x->qdomain) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "scale %g / zero point %lld differ from those of the QuantizeLinear "
                             "'%s' before it (%g / %d): a requantization in integers is not "
                             "supported", (double)s->data[0], (long long)zp,
                             g->nodes[x->qnode].name, (double)x->qscale, x->qzp);
    }
    if (nd->out == g->output) { /* the model's output: the tensor the Q quantized */
        g->output = source_of(g, nd->in[0]);
    }
    become_identity(g, nd);
    return 0;
}

int dlc_qdq_node(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    if (nd->n_in < 1 || nd->in[0] < 0) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "missing input");
    }
    if (nd->op == DLC_OP_CAST) { /* uint8 <-> int8 codes: only a no-op Cast keeps them exact */
        struct dlc_tensor *x = &g->t[nd->in[0]], *o = &g->t[nd->out];
        if (nd->cast_to != x->qdomain) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                                 "Cast of quantized codes to ONNX element type %d (they are %d)",
                                 nd->cast_to, x->qdomain);
        }
        o->qdomain = x->qdomain, o->qzp = x->qzp, o->qscale = x->qscale, o->qnode = x->qnode;
        become_identity(g, nd);
        return 0;
    }
    int rc = check_params(g, nd, err, errlen);
    if (rc) {
        return rc;
    }
    return nd->op == DLC_OP_QUANTIZE ? quantize_activation(g, nd, err, errlen)
                                     : dequantize_activation(g, nd, err, errlen);
}

/* A pre-quantized model's average pooling (AveragePool, GlobalAveragePool
 * whose output the model quantizes) as a depthwise convolution with int8
 * weights 1 at weight scale 1/n: CMAC sums the window exactly and SDP's
 * requantization (lower_conv.c, two multipliers in series) divides by n
 * with one rounding.  PDP would multiply by a 16-bit 1/kernel width, round,
 * then by 1/kernel height and round again (src/sim/nvdla/pdp.c), which
 * differs from ONNX Runtime's rounding of the exact average (its QLinear
 * pooling and float AveragePool -> QuantizeLinear both round once).
 * 0 or DLASIM_ERR_NOMEM. */
static int pool_as_conv(struct dlc_graph *g, int node)
{
    struct dlc_node *nd = &g->nodes[node];
    const struct dlc_tensor *x = &g->t[nd->in[0]];
    int gap = nd->op == DLC_OP_GAP;
    int kh = gap ? (int)x->dims[2] : nd->kernel[0], kw = gap ? (int)x->dims[3] : nd->kernel[1];
    int padded = !gap && (nd->pads[0] || nd->pads[1] || nd->pads[2] || nd->pads[3]);
    if (x->rank != 4 || kh < 1 || kw < 1 || kh > 8 || kw > 8 || (!gap && nd->ceil_mode) ||
        (padded && !nd->count_include_pad) || nd->auto_pad_same) {
        return 0;
    }
    char name[256];
    snprintf(name, sizeof name, "%s.average_weights", nd->name ? nd->name : "pool");
    int w = dlc_tensor_add(g, name);
    if (w < 0) {
        return w;
    }
    nd = &g->nodes[node];
    x = &g->t[nd->in[0]];
    struct dlc_tensor *wt = &g->t[w];
    int64_t c = x->dims[1], n = c * kh * kw;
    wt->data = malloc((size_t)n * sizeof(float));
    wt->qw_scale = malloc(sizeof(float));
    if (!wt->data || !wt->qw_scale) {
        return DLASIM_ERR_NOMEM;
    }
    float inv = 1.0f / (float)(kh * kw);
    for (int64_t i = 0; i < n; i++) {
        wt->data[i] = inv;
    }
    wt->qw_scale[0] = inv, wt->qw_n = 1, wt->qw_axis = 0;
    wt->rank = 4, wt->dims[0] = c, wt->dims[1] = 1, wt->dims[2] = kh, wt->dims[3] = kw;
    wt->n = n, wt->is_const = 1, wt->producer = -1, wt->consumers = 1;
    if (gap) {
        nd->stride[0] = nd->stride[1] = 1;
        memset(nd->pads, 0, sizeof nd->pads);
    }
    nd->kernel[0] = kh, nd->kernel[1] = kw;
    nd->dilation[0] = nd->dilation[1] = 1;
    nd->group = (int)c;
    nd->in[1] = w, nd->n_in = 2;
    nd->op = DLC_OP_CONV;
    return 0;
}

int dlc_qdq_pools_as_conv(struct dlc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const struct dlc_node *nd = &g->nodes[i];
        if (!nd->dead && (nd->op == DLC_OP_AVGPOOL || nd->op == DLC_OP_GAP) &&
            g->t[nd->out].qscale > 0) {
            int rc = pool_as_conv(g, i);
            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}
