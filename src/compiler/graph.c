/*
 * Graph IR helpers, shape inference and graph passes:
 *   - constant inputs of shape-like operands (Reshape shape, Clip min/max,
 *     Squeeze/Unsqueeze axes at opset 13, Pad pads, Resize scales) are read
 *     into the node's attributes;
 *   - BatchNormalization after a Conv whose output has no other reader is
 *     folded into the Conv's weights and bias (w' = w * g / sqrt(v + eps),
 *     b' = (b - m) * g / sqrt(v + eps) + beta); elsewhere it stays a node;
 *   - every tensor gets its shape (ONNX operator semantics, batch 1).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/compiler_int.h"

void dlc_graph_free(struct dlc_graph *g)
{
    for (int i = 0; i < g->n_t; i++) {
        free(g->t[i].name);
        free(g->t[i].data);
        free(g->t[i].idata);
        free(g->t[i].qw_scale);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i].name);
    }
    free(g->t);
    free(g->nodes);
    free(g->producer_name);
    dlc_float_unprepare(g);
    memset(g, 0, sizeof *g);
    g->input = g->output = -1;
}

int dlc_tensor_add(struct dlc_graph *g, const char *name)
{
    if (g->n_t == g->cap_t) {
        int cap = g->cap_t ? 2 * g->cap_t : 64;
        struct dlc_tensor *t = realloc(g->t, (size_t)cap * sizeof *t);
        if (!t) {
            return DLASIM_ERR_NOMEM;
        }
        g->t = t;
        g->cap_t = cap;
    }
    struct dlc_tensor *t = &g->t[g->n_t];
    memset(t, 0, sizeof *t);
    t->name = strdup(name ? name : "");
    if (!t->name) {
        return DLASIM_ERR_NOMEM;
    }
    t->producer = -1;
    t->scale = 1.0f;
    return g->n_t++;
}

int dlc_tensor_find(const struct dlc_graph *g, const char *name)
{
    for (int i = g->n_t - 1; i >= 0; i--) {
        if (!strcmp(g->t[i].name, name)) {
            return i;
        }
    }
    return -1;
}

int dlc_node_add(struct dlc_graph *g)
{
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
        struct dlc_node *n = realloc(g->nodes, (size_t)cap * sizeof *n);
        if (!n) {
            return DLASIM_ERR_NOMEM;
        }
        g->nodes = n;
        g->cap_nodes = cap;
    }
    struct dlc_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->kernel[0] = n->kernel[1] = 0;
    n->stride[0] = n->stride[1] = 1;
    n->dilation[0] = n->dilation[1] = 1;
    n->group = 1;
    n->out = -1;
    n->clip_min = -3.4e38f;
    n->clip_max = 3.4e38f;
    return g->n_nodes++;
}

void dlc_cube_of(const struct dlc_tensor *t, int64_t *c, int64_t *h, int64_t *w)
{
    *c = *h = *w = 1;
    if (t->rank >= 4) {
        *c = t->dims[1], *h = t->dims[2], *w = t->dims[3];
        for (int i = 4; i < t->rank; i++) {
            *w *= t->dims[i];
        }
    } else if (t->rank == 3) {
        *c = t->dims[1], *h = t->dims[2];
    } else if (t->rank == 2) {
        *c = t->dims[1];
    } else if (t->rank == 1) {
        *c = t->dims[0];
    }
}

int dlc_node_errf(char *err, size_t errlen, int status, const struct dlc_node *nd,
                  const char *fmt, ...)
{
    if (err && errlen) {
        int k = snprintf(err, errlen, "node '%s' (%s): ", nd->name, dlc_op_names[nd->op]);
        if (k >= 0 && (size_t)k < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return status;
}

/* A node the compiler cannot shape or simplify. */
static int nfail(char *err, size_t errlen, const struct dlc_node *nd, const char *why)
{
    return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "%s", why);
}

static void set_shape(struct dlc_tensor *t, int rank, const int64_t *dims)
{
    t->rank = rank;
    t->n = 1;
    for (int i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        t->n *= dims[i];
    }
}

static const struct dlc_tensor *in_t(const struct dlc_graph *g, const struct dlc_node *nd, int i)
{
    return i < nd->n_in && nd->in[i] >= 0 ? &g->t[nd->in[i]] : NULL;
}

/* Output size of a sliding window (ONNX Conv / pooling). */
static int64_t window_out(int64_t in, int k, int s, int d, int pa, int pb, int ceil_mode)
{
    int64_t span = (int64_t)d * (k - 1) + 1;
    int64_t num = in + pa + pb - span;
    if (num < 0) {
        return 0;
    }
    return (ceil_mode ? (num + s - 1) / s : num / s) + 1;
}

static void same_pads(struct dlc_node *nd, int64_t h, int64_t w)
{
    int64_t in[2] = { h, w };
    for (int a = 0; a < 2; a++) {
        int64_t out = (in[a] + nd->stride[a] - 1) / nd->stride[a];
        int64_t need = (out - 1) * nd->stride[a] + (int64_t)nd->dilation[a] * (nd->kernel[a] - 1) + 1 - in[a];
        if (need < 0) {
            need = 0;
        }
        int small = (int)(need / 2), big = (int)(need - need / 2);
        nd->pads[a] = nd->auto_pad_same == 1 ? small : big;
        nd->pads[a + 2] = nd->auto_pad_same == 1 ? big : small;
    }
    nd->auto_pad_same = 0;
}

static int shape_window(struct dlc_graph *g, struct dlc_node *nd, int64_t out_c, char *err,
                        size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0);
    if (x->rank != 4) {
        return nfail(err, errlen, nd, "input must be a 4-D NCHW tensor");
    }
    if (nd->auto_pad_same) {
        same_pads(nd, x->dims[2], x->dims[3]);
    }
    int64_t oh = window_out(x->dims[2], nd->kernel[0], nd->stride[0], nd->dilation[0], nd->pads[0],
                            nd->pads[2], nd->ceil_mode);
    int64_t ow = window_out(x->dims[3], nd->kernel[1], nd->stride[1], nd->dilation[1], nd->pads[1],
                            nd->pads[3], nd->ceil_mode);
    if (oh < 1 || ow < 1) {
        return nfail(err, errlen, nd, "the kernel is larger than the padded input");
    }
    int64_t d[4] = { 1, out_c, oh, ow };
    set_shape(&g->t[nd->out], 4, d);
    return 0;
}

static int shape_conv(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0), *w = in_t(g, nd, 1), *b = in_t(g, nd, 2);
    if (!x || !w || !w->is_const || w->rank != 4) {
        return nfail(err, errlen, nd, "weights must be a constant 4-D tensor (initializer)");
    }
    if (b && (!b->is_const || b->n != w->dims[0])) {
        return nfail(err, errlen, nd, "bias must be a constant with one value per output channel");
    }
    if (x->rank != 4 || x->dims[1] != w->dims[1] * nd->group || w->dims[0] % nd->group) {
        return nfail(err, errlen, nd, "input channels do not match weights x group");
    }
    if (nd->kernel[0] == 0) {
        nd->kernel[0] = (int)w->dims[2], nd->kernel[1] = (int)w->dims[3];
    }
    if (nd->kernel[0] != w->dims[2] || nd->kernel[1] != w->dims[3]) {
        return nfail(err, errlen, nd, "kernel_shape differs from the weights' shape");
    }
    return shape_window(g, nd, w->dims[0], err, errlen);
}

/* Gemm / MatMul: A [1, K] (or a tensor whose flattened size is K) times a
 * constant B. */
static int shape_gemm(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *a = in_t(g, nd, 0), *b = in_t(g, nd, 1), *c = in_t(g, nd, 2);
    if (!a || !b || !b->is_const || b->rank != 2) {
        return nfail(err, errlen, nd, "the second operand must be a constant 2-D tensor (weights)");
    }
    if (a->is_const) {
        return nfail(err, errlen, nd, "the first operand must be an activation, not a constant");
    }
    if (nd->trans_a) {
        return nfail(err, errlen, nd, "transA=1 is not supported");
    }
    int64_t k = nd->trans_b ? b->dims[1] : b->dims[0];
    int64_t n = nd->trans_b ? b->dims[0] : b->dims[1];
    int64_t rows = a->rank >= 2 ? a->n / a->dims[a->rank - 1] : 1;
    if (rows != 1 || a->dims[a->rank - 1] != k) {
        return nfail(err, errlen, nd, "operand shapes do not match (batch 1, [1, K] x [K, N])");
    }
    if (c && (!c->is_const || (c->n != n && c->n != 1))) {
        return nfail(err, errlen, nd, "C must be a constant of N values or a scalar");
    }
    int64_t d[2] = { 1, n };
    set_shape(&g->t[nd->out], 2, d);
    return 0;
}

/* An integer held by a constant.  Float constants (models store shapes and
 * pads either way) that are NaN or beyond the int64 range give INT64_MIN,
 * which no caller accepts; converting them would be undefined behaviour. */
static int64_t int_at(const struct dlc_tensor *t, int64_t i)
{
    if (t->is_int) {
        return t->idata[i];
    }
    float v = t->data[i];
    return v >= -9.2e18f && v <= 9.2e18f ? (int64_t)v : INT64_MIN;
}

/* floor(dim * scale), the size Resize/Upsample give an axis; 0 (refused by
 * the caller) when it is NaN or not in 1..65536. */
static int64_t scaled_size(int64_t dim, float scale)
{
    float v = floorf((float)dim * scale);
    return v >= 1.0f && v <= 65536.0f ? (int64_t)v : 0;
}

static int shape_reshape(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0), *s = in_t(g, nd, 1);
    if (!s || !s->is_const || s->n < 1 || s->n > DLC_MAX_RANK) {
        return nfail(err, errlen, nd, "the shape must be a constant of 1..6 values");
    }
    int64_t d[DLC_MAX_RANK], known = 1;
    int infer = -1;
    for (int i = 0; i < s->n; i++) {
        d[i] = int_at(s, i);
        if (d[i] == 0) {
            d[i] = i < x->rank ? x->dims[i] : 1;
        }
        if (d[i] == -1) {
            if (infer >= 0) {
                return nfail(err, errlen, nd, "more than one -1 in the shape");
            }
            infer = i;
            continue;
        }
        if (d[i] < 1) {
            return nfail(err, errlen, nd, "bad dimension in the shape");
        }
        if (d[i] > x->n / known) { /* also keeps the product from overflowing */
            return nfail(err, errlen, nd, "the shape does not keep the number of elements");
        }
        known *= d[i];
    }
    if (infer >= 0) {
        if (known == 0 || x->n % known) {
            return nfail(err, errlen, nd, "the shape does not divide the input size");
        }
        d[infer] = x->n / known;
        known = x->n;
    }
    if (known != x->n) {
        return nfail(err, errlen, nd, "the shape does not keep the number of elements");
    }
    set_shape(&g->t[nd->out], (int)s->n, d);
    return 0;
}

static int shape_squeeze(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0), *ax = in_t(g, nd, 1);
    if (ax) {
        if (!ax->is_const || ax->n > DLC_MAX_RANK) {
            return nfail(err, errlen, nd, "axes must be a constant");
        }
        nd->n_axes = (int)ax->n;
        for (int i = 0; i < ax->n; i++) {
            nd->axes[i] = int_at(ax, i);
        }
    }
    int64_t d[DLC_MAX_RANK];
    int r = 0;
    if (nd->op == DLC_OP_SQUEEZE) {
        for (int i = 0; i < x->rank; i++) {
            int drop = nd->n_axes == 0 && x->dims[i] == 1;
            for (int a = 0; a < nd->n_axes; a++) {
                int64_t ai = nd->axes[a] < 0 ? nd->axes[a] + x->rank : nd->axes[a];
                drop |= ai == i;
            }
            if (drop && x->dims[i] != 1) {
                return nfail(err, errlen, nd, "squeezed axis is not 1");
            }
            if (!drop) {
                d[r++] = x->dims[i];
            }
        }
    } else {
        int outr = x->rank + nd->n_axes, src = 0;
        if (outr > DLC_MAX_RANK) {
            return nfail(err, errlen, nd, "result rank above 6");
        }
        for (int i = 0; i < outr; i++) {
            int ins = 0;
            for (int a = 0; a < nd->n_axes; a++) {
                int64_t ai = nd->axes[a] < 0 ? nd->axes[a] + outr : nd->axes[a];
                ins |= ai == i;
            }
            d[r++] = ins ? 1 : x->dims[src++];
        }
        if (src != x->rank) {
            return nfail(err, errlen, nd, "bad axes");
        }
    }
    set_shape(&g->t[nd->out], r, d);
    return 0;
}

static int shape_transpose(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0);
    if (nd->n_perm == 0) {
        nd->n_perm = x->rank;
        for (int i = 0; i < x->rank; i++) {
            nd->perm[i] = x->rank - 1 - i;
        }
    }
    if (nd->n_perm != x->rank) {
        return nfail(err, errlen, nd, "perm length differs from the input rank");
    }
    int64_t d[DLC_MAX_RANK];
    int seen = 0;
    for (int i = 0; i < x->rank; i++) {
        if (nd->perm[i] >= x->rank || (seen & (1 << nd->perm[i]))) {
            return nfail(err, errlen, nd, "perm is not a permutation");
        }
        seen |= 1 << nd->perm[i];
        d[i] = x->dims[nd->perm[i]];
    }
    set_shape(&g->t[nd->out], x->rank, d);
    return 0;
}

static int shape_concat(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0);
    int axis = nd->axis < 0 ? nd->axis + x->rank : nd->axis;
    if (axis < 0 || axis >= x->rank) {
        return nfail(err, errlen, nd, "axis out of range");
    }
    nd->axis = axis;
    int64_t d[DLC_MAX_RANK];
    memcpy(d, x->dims, sizeof d);
    d[axis] = 0;
    for (int i = 0; i < nd->n_in; i++) {
        const struct dlc_tensor *y = in_t(g, nd, i);
        if (!y || y->rank != x->rank) {
            return nfail(err, errlen, nd, "inputs of different ranks");
        }
        for (int k = 0; k < x->rank; k++) {
            if (k != axis && y->dims[k] != x->dims[k]) {
                return nfail(err, errlen, nd, "inputs differ outside the concatenation axis");
            }
        }
        d[axis] += y->dims[axis];
    }
    set_shape(&g->t[nd->out], x->rank, d);
    return 0;
}

/* Numpy broadcasting of two shapes. */
static int shape_broadcast(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *a = in_t(g, nd, 0), *b = in_t(g, nd, 1);
    if (!a || !b) {
        return nfail(err, errlen, nd, "needs two inputs");
    }
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t d[DLC_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            return nfail(err, errlen, nd, "operand shapes cannot be broadcast");
        }
        d[i] = da > db ? da : db;
    }
    set_shape(&g->t[nd->out], r, d);
    if (g->t[nd->out].n != (a->n > b->n ? a->n : b->n) || (a->is_const && b->is_const)) {
        return nfail(err, errlen, nd, "the result must have the shape of its activation operand");
    }
    return 0;
}

static int shape_resize(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0);
    /* Upsample(X, scales); Resize(X, roi, scales[, sizes]) */
    const struct dlc_tensor *sc = nd->n_in == 2 ? in_t(g, nd, 1) : in_t(g, nd, 2);
    const struct dlc_tensor *sz = in_t(g, nd, 3);
    if (x->rank != 4) {
        return nfail(err, errlen, nd, "input must be 4-D");
    }
    int64_t d[4] = { 1, x->dims[1], 0, 0 };
    if (sz && sz->is_const && sz->n == 4) {
        d[2] = int_at(sz, 2), d[3] = int_at(sz, 3);
    } else if (sc && sc->is_const && sc->n == 4) {
        d[2] = scaled_size(x->dims[2], sc->data[2]);
        d[3] = scaled_size(x->dims[3], sc->data[3]);
    } else {
        return nfail(err, errlen, nd, "scales or sizes must be constant 4-value tensors");
    }
    if (d[2] < 1 || d[3] < 1 || d[2] > 65536 || d[3] > 65536) {
        return nfail(err, errlen, nd, "output size out of range");
    }
    /* the scales the coordinate transformation uses: given, or out / in with sizes */
    int by_size = sz && sz->is_const && sz->n == 4;
    nd->rs_scale[0] = by_size ? (float)d[2] / (float)x->dims[2] : sc->data[2];
    nd->rs_scale[1] = by_size ? (float)d[3] / (float)x->dims[3] : sc->data[3];
    if (nd->rs_coord == DLC_RS_TF_CROP_AND_RESIZE) {
        const struct dlc_tensor *roi = nd->n_in > 2 ? in_t(g, nd, 1) : NULL;
        if (!roi || !roi->is_const || roi->n != 8) {
            return nfail(err, errlen, nd, "tf_crop_and_resize needs a constant roi of 8 values");
        }
        for (int i = 0; i < 8; i++) {
            nd->rs_roi[i] = roi->data[i];
        }
    }
    if (x->dims[1] != d[1] || (sc && sc->is_const && sc->n == 4 && (sc->data[0] != 1.0f ||
                                                                    sc->data[1] != 1.0f))) {
        return nfail(err, errlen, nd, "resizes N or C (only H and W are supported)");
    }
    set_shape(&g->t[nd->out], 4, d);
    return 0;
}

static int shape_pad(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0), *p = in_t(g, nd, 1), *v = in_t(g, nd, 2);
    if (x->rank != 4 || !p || !p->is_const || p->n != 8) {
        return nfail(err, errlen, nd, "needs a 4-D input and 8 constant pads");
    }
    for (int i = 0; i < 8; i++) {
        int64_t q = int_at(p, i);
        if (q < 0 || q > 255 || ((i % 4) < 2 && q != 0)) {
            return nfail(err, errlen, nd, "pads must be 0..255 and only on H and W");
        }
    }
    nd->pads[0] = (int)int_at(p, 2), nd->pads[1] = (int)int_at(p, 3);
    nd->pads[2] = (int)int_at(p, 6), nd->pads[3] = (int)int_at(p, 7);
    nd->pad_value = v && v->is_const && v->n >= 1 ? v->data[0] : 0.0f;
    int64_t d[4] = { 1, x->dims[1], x->dims[2] + nd->pads[0] + nd->pads[2],
                     x->dims[3] + nd->pads[1] + nd->pads[3] };
    set_shape(&g->t[nd->out], 4, d);
    return 0;
}

/* Slice of an activation: one axis, step 1 (channel slices run as views
 * in the lowering where the layout allows). */
static int shape_slice(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0);
    int64_t start[DLC_MAX_RANK], step[DLC_MAX_RANK], count[DLC_MAX_RANK];
    int rc = dlc_slice_params(g, nd, start, step, count, err, errlen);
    if (rc) {
        return rc;
    }
    int axis = -1;
    for (int i = 0; i < x->rank; i++) {
        if (count[i] != x->dims[i] || step[i] != 1) {
            if (axis >= 0 || step[i] != 1) {
                return nfail(err, errlen, nd, "slices more than one axis or with a step other "
                             "than 1 (supported on activations: one axis, step 1)");
            }
            axis = i;
        }
    }
    if (axis < 0) {
        axis = 0;
    }
    if (count[axis] < 1) {
        return nfail(err, errlen, nd, "empty slice");
    }
    nd->sl_axis = axis;
    nd->sl_start = start[axis];
    nd->sl_end = start[axis] + count[axis];
    nd->sl_step = 1;
    set_shape(&g->t[nd->out], x->rank, count);
    return 0;
}

/* Gather from an activation with constant indices (runs on the host CPU). */
static int shape_gather(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0), *ix = in_t(g, nd, 1);
    int axis = nd->axis < 0 ? nd->axis + x->rank : nd->axis;
    if (!ix || !ix->is_const || axis < 0 || axis >= x->rank || x->rank - 1 + ix->rank > DLC_MAX_RANK) {
        return nfail(err, errlen, nd, "needs constant indices and an axis within the rank");
    }
    for (int64_t k = 0; k < ix->n; k++) {
        int64_t q = int_at(ix, k);
        if (q < -x->dims[axis] || q >= x->dims[axis]) {
            return nfail(err, errlen, nd, "index out of range");
        }
    }
    int64_t d[DLC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i == axis) {
            for (int k = 0; k < ix->rank; k++) {
                d[r++] = ix->dims[k];
            }
        } else {
            d[r++] = x->dims[i];
        }
    }
    nd->axis = axis;
    set_shape(&g->t[nd->out], r, d);
    return 0;
}

/* ReduceMean over H and W of an NCHW tensor is a global average pooling. */
static int shape_reducemean(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0), *ax = in_t(g, nd, 1);
    if (ax) { /* opset 18 form */
        if (!ax->is_const || ax->n > DLC_MAX_RANK) {
            return nfail(err, errlen, nd, "axes must be a constant");
        }
        nd->n_axes = (int)ax->n;
        for (int i = 0; i < ax->n; i++) {
            nd->axes[i] = int_at(ax, i);
        }
    }
    int hw = 0;
    for (int i = 0; i < nd->n_axes; i++) {
        int64_t a = nd->axes[i] < 0 ? nd->axes[i] + x->rank : nd->axes[i];
        hw |= a == 2 ? 1 : a == 3 ? 2 : 4;
    }
    if (x->rank != 4 || nd->n_axes != 2 || hw != 3) {
        return nfail(err, errlen, nd, "only a mean over H and W of a 4-D tensor is supported "
                     "(it runs as global average pooling)");
    }
    nd->op = DLC_OP_GAP;
    int64_t d[4] = { 1, x->dims[1], 1, 1 };
    set_shape(&g->t[nd->out], nd->keepdims ? 4 : 2, d);
    return 0;
}

int dlc_shape_node(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_t(g, nd, 0);
    struct dlc_tensor *o = &g->t[nd->out];
    if (!x) {
        return nfail(err, errlen, nd, "missing input");
    }
    if (x->n < 1) {
        return nfail(err, errlen, nd, "empty input tensor");
    }
    switch (nd->op) {
    case DLC_OP_CONV:
        return shape_conv(g, nd, err, errlen);
    case DLC_OP_GEMM:
    case DLC_OP_MATMUL:
        return shape_gemm(g, nd, err, errlen);
    case DLC_OP_MAXPOOL:
    case DLC_OP_AVGPOOL:
        if (nd->kernel[0] < 1 || nd->dilation[0] != 1 || nd->dilation[1] != 1) {
            return nfail(err, errlen, nd, "kernel_shape is required; dilations are not supported");
        }
        return shape_window(g, nd, x->rank == 4 ? x->dims[1] : 0, err, errlen);
    case DLC_OP_GAP: {
        if (x->rank != 4) {
            return nfail(err, errlen, nd, "input must be 4-D");
        }
        int64_t d[4] = { 1, x->dims[1], 1, 1 };
        set_shape(o, 4, d);
        return 0;
    }
    case DLC_OP_FLATTEN: {
        int axis = nd->axis < 0 ? nd->axis + x->rank : nd->axis;
        if (axis < 0 || axis > x->rank) {
            return nfail(err, errlen, nd, "axis out of range");
        }
        int64_t d[2] = { 1, 1 };
        for (int i = 0; i < x->rank; i++) {
            d[i < axis ? 0 : 1] *= x->dims[i];
        }
        set_shape(o, 2, d);
        return 0;
    }
    case DLC_OP_RESHAPE:
        return shape_reshape(g, nd, err, errlen);
    case DLC_OP_SQUEEZE:
    case DLC_OP_UNSQUEEZE:
        return shape_squeeze(g, nd, err, errlen);
    case DLC_OP_TRANSPOSE:
        return shape_transpose(g, nd, err, errlen);
    case DLC_OP_CONCAT:
        return shape_concat(g, nd, err, errlen);
    case DLC_OP_ADD:
    case DLC_OP_SUB:
    case DLC_OP_MUL:
    case DLC_OP_DIV:
    case DLC_OP_PRELU:
        return shape_broadcast(g, nd, err, errlen);
    case DLC_OP_SLICE:
        return shape_slice(g, nd, err, errlen);
    case DLC_OP_REDUCEMEAN:
        return shape_reducemean(g, nd, err, errlen);
    case DLC_OP_CAST:
        if (nd->cast_to != 1) { /* FLOAT */
            return nfail(err, errlen, nd, "Cast of an activation to a type other than float");
        }
        nd->op = DLC_OP_IDENTITY; /* float to float: a no-op */
        set_shape(o, x->rank, x->dims);
        return 0;
    case DLC_OP_GATHER:
        return shape_gather(g, nd, err, errlen);
    case DLC_OP_SHAPE:
    case DLC_OP_SPLIT:
        return nfail(err, errlen, nd, "only supported on constants and static shapes (folded)");
    case DLC_OP_RESIZE:
        return shape_resize(g, nd, err, errlen);
    case DLC_OP_PAD:
        return shape_pad(g, nd, err, errlen);
    case DLC_OP_SOFTMAX: {
        int axis = nd->axis < 0 ? nd->axis + x->rank : nd->axis;
        if (axis < 0 || axis >= x->rank) {
            return nfail(err, errlen, nd, "axis out of range");
        }
        nd->axis = axis;
        set_shape(o, x->rank, x->dims);
        return 0;
    }
    case DLC_OP_BN: {
        for (int i = 1; i < 5; i++) {
            const struct dlc_tensor *p = in_t(g, nd, i);
            if (!p || !p->is_const || x->rank < 2 || p->n != x->dims[1]) {
                return nfail(err, errlen, nd, "scale, B, mean and var must be constants of C values");
            }
        }
        /* 1 / sqrt(var + epsilon): a channel whose var + epsilon is not > 0
         * would make every value NaN or infinite (refused, not calibrated) */
        const struct dlc_tensor *var = in_t(g, nd, 4);
        for (int64_t c = 0; c < var->n; c++) {
            double v = (double)var->data[c] + nd->epsilon;
            if (!(v > 0) || !isfinite(1.0 / sqrt(v))) {
                return dlc_node_errf(err, errlen, DLASIM_ERR_INVAL, nd,
                                     "variance %g + epsilon %g of channel %lld is not > 0: the "
                                     "normalization is NaN or infinite", (double)var->data[c],
                                     (double)nd->epsilon, (long long)c);
            }
        }
        set_shape(o, x->rank, x->dims);
        return 0;
    }
    case DLC_OP_LRN:
        if (x->rank != 4) {
            return nfail(err, errlen, nd, "input must be 4-D");
        }
        set_shape(o, x->rank, x->dims);
        return 0;
    case DLC_OP_CLIP: {
        const struct dlc_tensor *lo = in_t(g, nd, 1), *hi = in_t(g, nd, 2);
        if ((lo && (!lo->is_const || lo->n != 1)) || (hi && (!hi->is_const || hi->n != 1))) {
            return nfail(err, errlen, nd, "min and max must be constant scalars");
        }
        if (lo) {
            nd->clip_min = lo->data[0];
        }
        if (hi) {
            nd->clip_max = hi->data[0];
        }
        set_shape(o, x->rank, x->dims);
        return 0;
    }
    case DLC_OP_CONSTOFSHAPE:
        return nfail(err, errlen, nd, "the shape input must be a constant (or fold to one from the "
                     "input's static shape)");
    default: /* element-wise: Relu, LeakyRelu, Sigmoid, Tanh, Identity, Dropout */
        set_shape(o, x->rank, x->dims);
        return 0;
    }
}

/* Fold BatchNormalization into the Conv that feeds it (only reader):
 * 0 or DLASIM_ERR_NOMEM. */
static int fold_bn(struct dlc_graph *g, struct dlc_node *bn)
{
    const struct dlc_tensor *x = &g->t[bn->in[0]];
    if (x->producer < 0 || x->consumers != 1 || bn->in[0] == g->output) {
        return 0;
    }
    struct dlc_node *cv = &g->nodes[x->producer];
    if (cv->op != DLC_OP_CONV || cv->dead) {
        return 0;
    }
    struct dlc_tensor *w = &g->t[cv->in[1]];
    if (w->consumers != 1 || (cv->n_in > 2 && cv->in[2] >= 0 && g->t[cv->in[2]].consumers != 1)) {
        return 0; /* shared weights: keep the BN node */
    }
    int64_t k = w->dims[0], per = w->n / k;
    const float *gam = g->t[bn->in[1]].data, *beta = g->t[bn->in[2]].data;
    const float *mean = g->t[bn->in[3]].data, *var = g->t[bn->in[4]].data;
    if (cv->n_in < 3 || cv->in[2] < 0) { /* give the conv a bias tensor */
        char name[300];
        snprintf(name, sizeof name, "%s.folded_bias", cv->name);
        int b = dlc_tensor_add(g, name);
        if (b < 0) {
            return b;
        }
        struct dlc_tensor *bt = &g->t[b];
        bt->data = calloc((size_t)k, sizeof(float));
        if (!bt->data) {
            return DLASIM_ERR_NOMEM;
        }
        bt->is_const = 1;
        bt->rank = 1;
        bt->dims[0] = k;
        bt->n = k;
        bt->consumers = 1;
        cv = &g->nodes[x->producer];
        cv->in[2] = b;
        cv->n_in = 3;
        w = &g->t[cv->in[1]];
    }
    float *bias = g->t[cv->in[2]].data;
    free(w->qw_scale); /* rescaled weights are no longer a model's int8 codes (qdq.c) */
    w->qw_scale = NULL;
    for (int64_t o = 0; o < k; o++) {
        float f = gam[o] / sqrtf(var[o] + bn->epsilon);
        for (int64_t i = 0; i < per; i++) {
            w->data[o * per + i] *= f;
        }
        bias[o] = (bias[o] - mean[o]) * f + beta[o];
    }
    /* the conv now writes the BN's output tensor */
    cv->out = bn->out;
    g->t[bn->out].producer = x->producer;
    bn->dead = 1;
    return 0;
}

/* Fold a zero Pad into the Conv that is its only reader (the convolution
 * pads with zeros itself). */
static void fold_pad(struct dlc_graph *g, struct dlc_node *pad)
{
    int t = pad->out;
    if (pad->pad_value != 0.0f || g->t[t].consumers != 1 || t == g->output) {
        return;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        struct dlc_node *cv = &g->nodes[i];
        if (cv->dead || cv->op != DLC_OP_CONV || cv->in[0] != t) {
            continue;
        }
        for (int k = 0; k < 4; k++) {
            if (cv->pads[k] + pad->pads[k] > 31) {
                return; /* beyond the padding registers: keep the Pad */
            }
        }
        for (int k = 0; k < 4; k++) {
            cv->pads[k] += pad->pads[k];
        }
        cv->in[0] = pad->in[0];
        pad->dead = 1;
        return;
    }
}

/* Replace every read of tensor `from` by `to` (the node producing `from` is removed). */
static void reroute(struct dlc_graph *g, int from, int to)
{
    for (int i = 0; i < g->n_nodes; i++) {
        struct dlc_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_in && !nd->dead; k++) {
            if (nd->in[k] == from) {
                nd->in[k] = to;
                g->t[from].consumers--;
                g->t[to].consumers++;
            }
        }
    }
}

/* A node that passes its input through unchanged: Identity, Dropout
 * (inference), a Pad of zero size, a Slice that keeps everything. */
static int is_noop(const struct dlc_graph *g, const struct dlc_node *nd)
{
    if (nd->op == DLC_OP_IDENTITY || nd->op == DLC_OP_DROPOUT) {
        return 1;
    }
    if (nd->op == DLC_OP_PAD) {
        return !nd->pads[0] && !nd->pads[1] && !nd->pads[2] && !nd->pads[3];
    }
    return nd->op == DLC_OP_SLICE && g->t[nd->out].n == g->t[nd->in[0]].n;
}

/* No-op removal: readers of the no-op's output read its input (unless the
 * output is the model's output, which keeps its name). */
static void remove_noops(struct dlc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        struct dlc_node *nd = &g->nodes[i];
        if (nd->dead || nd->out == g->output || nd->in[0] < 0 || !is_noop(g, nd)) {
            continue;
        }
        reroute(g, nd->out, nd->in[0]);
        g->t[nd->in[0]].consumers--;
        nd->dead = 1;
    }
}

/* Div by a float constant becomes Mul by its reciprocal (so the lowering's
 * per-channel rules take it): 0 or DLASIM_ERR_NOMEM. */
static int div_to_mul(struct dlc_graph *g, int node)
{
    int c = g->nodes[node].in[1];
    if (g->nodes[node].op != DLC_OP_DIV || !g->t[c].is_const || g->t[g->nodes[node].in[0]].is_const) {
        return 0;
    }
    char name[300];
    snprintf(name, sizeof name, "%s.reciprocal", g->t[c].name);
    int r = dlc_tensor_add(g, name);
    if (r < 0) {
        return r;
    }
    struct dlc_tensor *rt = &g->t[r], *ct = &g->t[c];
    rt->data = malloc((size_t)(ct->n ? ct->n : 1) * sizeof(float));
    if (!rt->data) {
        return DLASIM_ERR_NOMEM;
    }
    rt->rank = ct->rank;
    memcpy(rt->dims, ct->dims, sizeof rt->dims);
    rt->n = ct->n;
    rt->is_const = 1;
    for (int64_t i = 0; i < ct->n; i++) {
        rt->data[i] = 1.0f / ct->data[i];
    }
    ct->consumers--;
    rt->consumers = 1;
    g->nodes[node].in[1] = r;
    g->nodes[node].op = DLC_OP_MUL;
    return 0;
}

int dlc_graph_prepare(struct dlc_graph *g, char *err, size_t errlen)
{
    for (int i = 0; i < g->n_nodes; i++) {
        struct dlc_node *nd = &g->nodes[i];
        if (nd->dead) {
            continue;
        }
        if (dlc_foldable(g, nd)) {
            int rc = dlc_fold(g, nd, err, errlen);
            if (rc) {
                return rc;
            }
            continue;
        }
        if (dlc_is_qdq_node(g, nd)) { /* pre-quantized models (qdq.c) */
            int rc = dlc_qdq_node(g, nd, err, errlen);
            if (rc) {
                return rc;
            }
            continue;
        }
        int rc = dlc_shape_node(g, nd, err, errlen);
        if (!rc && (rc = div_to_mul(g, i))) {
            return dlc_node_errf(err, errlen, rc, nd, "out of memory");
        }
        if (rc) {
            return rc;
        }
        if (g->t[nd->out].n > (1 << 26)) {
            return nfail(err, errlen, nd, "output tensor too large");
        }
    }
    if (g->output < 0 || g->t[g->output].is_const) {
        return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                        "model: the output is a constant (does not depend on the input)");
    }
    remove_noops(g);
    for (int i = 0; i < g->n_nodes; i++) {
        if (!g->nodes[i].dead && g->nodes[i].op == DLC_OP_PAD) {
            fold_pad(g, &g->nodes[i]);
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (!g->nodes[i].dead && g->nodes[i].op == DLC_OP_BN && fold_bn(g, &g->nodes[i])) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, &g->nodes[i], "out of memory");
        }
    }
    if (dlc_qdq_pools_as_conv(g)) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "model: out of memory for pooling weights");
    }
    return 0;
}
