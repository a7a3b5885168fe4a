/*
 * Constant folding on the IR (graph.c calls it for every node, in order,
 * before shaping it): a node whose inputs are all constants, or a Shape of
 * a tensor whose shape is known (the model's input shape is static), is
 * evaluated here and its output becomes a constant; the node is removed.
 * This turns what exporters write around static shapes (Identity on
 * initializers, Shape -> Gather -> Unsqueeze -> Concat -> Reshape / Resize,
 * Cast, Slice, Div / Mul of shape values) into the constants the operators
 * need.  Integer tensors stay integers (int64 arithmetic, ONNX semantics);
 * float ones are computed in float.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/compiler_int.h"

/* ONNX TensorProto element types (onnx.proto DataType). */
enum { T_FLOAT = 1, T_UINT8 = 2, T_INT8 = 3, T_UINT16 = 4, T_INT16 = 5, T_INT32 = 6, T_INT64 = 7,
       T_BOOL = 9, T_FLOAT16 = 10, T_DOUBLE = 11, T_UINT32 = 12, T_UINT64 = 13 };

static const struct dlc_tensor *in_at(const struct dlc_graph *g, const struct dlc_node *nd, int i)
{
    return i < nd->n_in && nd->in[i] >= 0 ? &g->t[nd->in[i]] : NULL;
}

static int all_inputs_const(const struct dlc_graph *g, const struct dlc_node *nd)
{
    int any = 0;
    for (int i = 0; i < nd->n_in; i++) {
        if (nd->in[i] >= 0) {
            if (!g->t[nd->in[i]].is_const) {
                return 0;
            }
            any = 1;
        }
    }
    return any;
}

int dlc_foldable(const struct dlc_graph *g, const struct dlc_node *nd)
{
    switch (nd->op) {
    case DLC_OP_SHAPE:
        return nd->n_in >= 1 && nd->in[0] >= 0;
    case DLC_OP_IDENTITY: case DLC_OP_DROPOUT: case DLC_OP_CAST: case DLC_OP_GATHER:
    case DLC_OP_UNSQUEEZE: case DLC_OP_SQUEEZE: case DLC_OP_RESHAPE: case DLC_OP_FLATTEN:
    case DLC_OP_CONCAT: case DLC_OP_SLICE: case DLC_OP_ADD: case DLC_OP_SUB: case DLC_OP_MUL:
    case DLC_OP_DIV: case DLC_OP_DEQUANTIZE: case DLC_OP_QUANTIZE: case DLC_OP_CONSTOFSHAPE:
        return all_inputs_const(g, nd);
    default:
        return 0;
    }
}

static int64_t ival(const struct dlc_tensor *t, int64_t i)
{
    if (t->is_int) {
        return t->idata[i];
    }
    float v = t->data[i];
    return v >= -9.2e18f && v <= 9.2e18f ? (int64_t)v : 0;
}

/* Make the node's output a constant of the given shape (values zeroed). */
static int make_const(struct dlc_graph *g, struct dlc_node *nd, int rank, const int64_t *dims,
                      int is_int, char *err, size_t errlen)
{
    struct dlc_tensor *o = &g->t[nd->out];
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && n > ((int64_t)1 << 28) / dims[i])) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                                 "folded constant too large or of negative size");
        }
        n *= dims[i];
        o->dims[i] = dims[i];
    }
    o->rank = rank;
    o->n = n;
    o->data = calloc((size_t)(n ? n : 1), sizeof(float));
    o->idata = is_int ? calloc((size_t)(n ? n : 1), sizeof(int64_t)) : NULL;
    if (!o->data || (is_int && !o->idata)) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory folding it");
    }
    o->is_int = is_int;
    o->is_const = 1;
    o->producer = -1;
    return 0;
}

static void put_i(struct dlc_tensor *o, int64_t i, int64_t v)
{
    o->idata[i] = v;
    o->data[i] = (float)v;
}

/* Element i of o takes element j of t (same kind). */
static void copy_el(struct dlc_tensor *o, int64_t i, const struct dlc_tensor *t, int64_t j)
{
    if (o->is_int) {
        put_i(o, i, ival(t, j));
    } else {
        o->data[i] = t->data[j];
    }
}

static int fold_shape(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_at(g, nd, 0);
    int64_t d = x->rank;
    int rc = make_const(g, nd, 1, &d, 1, err, errlen);
    for (int i = 0; !rc && i < x->rank; i++) {
        put_i(&g->t[nd->out], i, x->dims[i]);
    }
    return rc;
}

static int fold_copy(struct dlc_graph *g, struct dlc_node *nd, int is_int, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_at(g, nd, 0);
    int64_t dims[DLC_MAX_RANK];
    int rank = x->rank;
    memcpy(dims, x->dims, sizeof dims);
    int rc = make_const(g, nd, rank, dims, is_int, err, errlen);
    x = in_at(g, nd, 0);
    struct dlc_tensor *o = &g->t[nd->out];
    for (int64_t i = 0; !rc && i < o->n; i++) {
        if (is_int) {
            put_i(o, i, ival(x, i)); /* float: truncated; NaN or beyond int64: 0 */
        } else {
            o->data[i] = x->data[i];
        }
    }
    return rc;
}

static int fold_cast(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    int to = nd->cast_to;
    if (to == T_FLOAT || to == T_DOUBLE || to == T_FLOAT16) {
        return fold_copy(g, nd, 0, err, errlen);
    }
    if (to == T_INT64 || to == T_INT32 || to == T_INT16 || to == T_INT8 || to == T_UINT8 ||
        to == T_UINT16 || to == T_UINT32 || to == T_UINT64 || to == T_BOOL) {
        return fold_copy(g, nd, 1, err, errlen);
    }
    return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "Cast to element type %d", to);
}

/* Gather along nd->axis: out = data[..., indices, ...]. */
static int fold_gather(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_at(g, nd, 0), *ix = in_at(g, nd, 1);
    int axis = nd->axis < 0 ? nd->axis + x->rank : nd->axis;
    if (!ix || axis < 0 || axis >= x->rank || x->rank - 1 + ix->rank > DLC_MAX_RANK) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "axis or rank out of range");
    }
    int64_t dims[DLC_MAX_RANK], outer = 1, inner = 1;
    int r = 0;
    for (int i = 0; i < axis; i++) {
        dims[r++] = x->dims[i];
        outer *= x->dims[i];
    }
    for (int i = 0; i < ix->rank; i++) {
        dims[r++] = ix->dims[i];
    }
    for (int i = axis + 1; i < x->rank; i++) {
        dims[r++] = x->dims[i];
        inner *= x->dims[i];
    }
    int64_t len = x->dims[axis], n_idx = ix->n;
    for (int64_t k = 0; k < n_idx; k++) {
        int64_t q = ival(ix, k);
        if (q < -len || q >= len) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "index out of range");
        }
    }
    int rc = make_const(g, nd, r, dims, x->is_int, err, errlen);
    x = in_at(g, nd, 0), ix = in_at(g, nd, 1);
    struct dlc_tensor *o = &g->t[nd->out];
    for (int64_t a = 0; !rc && a < outer; a++) {
        for (int64_t k = 0; k < n_idx; k++) {
            int64_t q = ival(ix, k);
            q = q < 0 ? q + len : q;
            for (int64_t b = 0; b < inner; b++) {
                copy_el(o, (a * n_idx + k) * inner + b, x, (a * len + q) * inner + b);
            }
        }
    }
    return rc;
}

/* Reshape-like ops on a constant: shape as for an activation, same values. */
static int fold_reshaped(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    int rc = dlc_shape_node(g, nd, err, errlen);
    if (rc) {
        return rc;
    }
    struct dlc_tensor *o = &g->t[nd->out];
    int64_t dims[DLC_MAX_RANK];
    memcpy(dims, o->dims, sizeof dims);
    rc = make_const(g, nd, o->rank, dims, in_at(g, nd, 0)->is_int, err, errlen);
    const struct dlc_tensor *x = in_at(g, nd, 0);
    for (int64_t i = 0; !rc && i < o->n; i++) {
        copy_el(o, i, x, i);
    }
    return rc;
}

static int fold_concat(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    int rc = dlc_shape_node(g, nd, err, errlen);
    if (rc) {
        return rc;
    }
    int is_int = 1;
    for (int i = 0; i < nd->n_in; i++) {
        is_int &= in_at(g, nd, i)->is_int;
    }
    struct dlc_tensor *o = &g->t[nd->out];
    int64_t dims[DLC_MAX_RANK];
    memcpy(dims, o->dims, sizeof dims);
    rc = make_const(g, nd, o->rank, dims, is_int, err, errlen);
    int64_t outer = 1, inner = 1, off = 0;
    for (int i = 0; i < o->rank; i++) {
        outer *= i < nd->axis ? o->dims[i] : 1;
        inner *= i > nd->axis ? o->dims[i] : 1;
    }
    for (int k = 0; !rc && k < nd->n_in; k++) {
        const struct dlc_tensor *t = in_at(g, nd, k);
        int64_t chunk = t->dims[nd->axis] * inner;
        for (int64_t a = 0; a < outer; a++) {
            for (int64_t e = 0; e < chunk; e++) {
                copy_el(o, a * o->dims[nd->axis] * inner + off + e, t, a * chunk + e);
            }
        }
        off += chunk;
    }
    return rc;
}

/* ONNX Slice-13 bounds of one axis of length len: start, end clamped, step != 0. */
void dlc_slice_bounds(int64_t len, int64_t step, int64_t *start, int64_t *end)
{
    int64_t s = *start < 0 ? *start + len : *start, e = *end < 0 ? *end + len : *end;
    if (step > 0) {
        s = s < 0 ? 0 : s > len ? len : s;
        e = e < 0 ? 0 : e > len ? len : e;
    } else {
        s = s < 0 ? 0 : s > len - 1 ? len - 1 : s;
        e = e < -1 ? -1 : e > len - 1 ? len - 1 : e;
    }
    *start = s, *end = e;
}

int64_t dlc_slice_count(int64_t start, int64_t end, int64_t step)
{
    if (step > 0) {
        return end > start ? (end - start - 1) / step + 1 : 0;
    }
    int64_t back = step < -INT64_MAX ? INT64_MAX : -step; /* start, end are within the axis */
    return start > end ? (start - end - 1) / back + 1 : 0;
}

/* Per-axis start and step of a Slice (inputs starts, ends, axes, steps). */
int dlc_slice_params(const struct dlc_graph *g, const struct dlc_node *nd, int64_t *start,
                     int64_t *step, int64_t *count, char *err, size_t errlen)
{
    const struct dlc_tensor *x = in_at(g, nd, 0), *st = in_at(g, nd, 1), *en = in_at(g, nd, 2);
    const struct dlc_tensor *ax = in_at(g, nd, 3), *sp = in_at(g, nd, 4);
    for (int i = 0; i < x->rank; i++) {
        start[i] = 0, step[i] = 1, count[i] = x->dims[i];
    }
    if (nd->n_in == 1) { /* one output of a Split */
        int a = nd->sl_axis < 0 ? nd->sl_axis + x->rank : nd->sl_axis;
        int64_t len = a >= 0 && a < x->rank ? x->dims[a] : 0;
        if (a < 0 || a >= x->rank || (nd->split_n && len % nd->split_n) ||
            (!nd->split_n && nd->sl_end > len)) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                                 "split axis out of range or split sizes do not fit the axis");
        }
        start[a] = nd->split_n ? nd->split_i * (len / nd->split_n) : nd->sl_start;
        count[a] = nd->split_n ? len / nd->split_n : nd->sl_end - nd->sl_start;
        return 0;
    }
    if (!st || !en || !st->is_const || !en->is_const || st->n != en->n || st->n > x->rank ||
        (ax && (!ax->is_const || ax->n != st->n)) || (sp && (!sp->is_const || sp->n != st->n))) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "starts, ends, axes and steps must be constants of one length");
    }
    for (int64_t k = 0; k < st->n; k++) {
        int64_t a = ax ? ival(ax, k) : k;
        a = a < 0 ? a + x->rank : a;
        int64_t s = ival(st, k), e = ival(en, k), p = sp ? ival(sp, k) : 1;
        if (a < 0 || a >= x->rank || p == 0) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "bad axis or zero step");
        }
        dlc_slice_bounds(x->dims[a], p, &s, &e);
        start[a] = s, step[a] = p, count[a] = dlc_slice_count(s, e, p);
    }
    return 0;
}

static int fold_slice(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    int64_t start[DLC_MAX_RANK], step[DLC_MAX_RANK], count[DLC_MAX_RANK];
    int rc = dlc_slice_params(g, nd, start, step, count, err, errlen);
    int rank = in_at(g, nd, 0)->rank;
    rc = rc ? rc : make_const(g, nd, rank, count, in_at(g, nd, 0)->is_int, err, errlen);
    const struct dlc_tensor *x = in_at(g, nd, 0);
    struct dlc_tensor *o = &g->t[nd->out];
    int64_t c[DLC_MAX_RANK] = { 0 }, xs[DLC_MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = d == rank - 1 ? 1 : xs[d + 1] * x->dims[d + 1];
    }
    for (int64_t i = 0; !rc && i < o->n; i++) {
        int64_t src = 0;
        for (int d = 0; d < rank; d++) {
            src += (start[d] + c[d] * step[d]) * xs[d];
        }
        copy_el(o, i, x, src);
        for (int d = rank - 1; d >= 0; d--) {
            if (++c[d] < count[d]) {
                break;
            }
            c[d] = 0;
        }
    }
    return rc;
}

/* Index into broadcast operand t of output element i (numpy rules). */
static int64_t bcast_index(const struct dlc_tensor *t, const int64_t *odims, int orank, int64_t i)
{
    int64_t idx = 0, stride = 1;
    for (int d = orank - 1; d >= 0; d--) {
        int64_t coord = i % odims[d];
        i /= odims[d];
        int td = d - (orank - t->rank);
        if (td >= 0) {
            idx += (t->dims[td] == 1 ? 0 : coord) * stride;
            stride *= t->dims[td];
        }
    }
    return idx;
}

static int fold_arith(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *a = in_at(g, nd, 0), *b = in_at(g, nd, 1);
    if (!a || !b) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd, "needs two inputs");
    }
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t dims[DLC_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                                 "operand shapes cannot be broadcast");
        }
        dims[i] = da == 1 ? db : da;
    }
    int is_int = a->is_int && b->is_int;
    int rc = make_const(g, nd, r, dims, is_int, err, errlen);
    a = in_at(g, nd, 0), b = in_at(g, nd, 1);
    struct dlc_tensor *o = &g->t[nd->out];
    for (int64_t i = 0; !rc && i < o->n; i++) {
        int64_t ja = bcast_index(a, dims, r, i), jb = bcast_index(b, dims, r, i);
        if (is_int) {
            int64_t x = a->idata[ja], y = b->idata[jb], v = 0;
            int bad = nd->op == DLC_OP_ADD ? __builtin_add_overflow(x, y, &v)
                      : nd->op == DLC_OP_SUB ? __builtin_sub_overflow(x, y, &v)
                      : nd->op == DLC_OP_MUL ? __builtin_mul_overflow(x, y, &v)
                      : y == 0 || (x == INT64_MIN && y == -1);
            if (bad) {
                return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                                     "integer overflow or division by zero");
            }
            put_i(o, i, nd->op == DLC_OP_DIV ? x / y : v);
        } else {
            float x = a->data[ja], y = b->data[jb];
            o->data[i] = nd->op == DLC_OP_ADD ? x + y : nd->op == DLC_OP_SUB ? x - y
                         : nd->op == DLC_OP_MUL ? x * y : x / y;
        }
    }
    return rc;
}

/* ConstantOfShape: a tensor of the input's shape filled with the value. */
static int fold_const_of_shape(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    const struct dlc_tensor *sh = in_at(g, nd, 0);
    int64_t dims[DLC_MAX_RANK];
    if (!sh || sh->n > DLC_MAX_RANK) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_UNSUPPORTED, nd,
                             "the shape input must hold at most %d dimensions", DLC_MAX_RANK);
    }
    for (int64_t i = 0; i < sh->n; i++) {
        dims[i] = ival(sh, i);
    }
    int rc = make_const(g, nd, (int)sh->n, dims, nd->cos_is_int, err, errlen);
    struct dlc_tensor *o = &g->t[nd->out];
    for (int64_t i = 0; !rc && i < o->n; i++) {
        if (o->is_int) {
            put_i(o, i, (int64_t)nd->cos_value);
        } else {
            o->data[i] = nd->cos_value;
        }
    }
    return rc;
}

int dlc_fold(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen)
{
    int rc;
    switch (nd->op) {
    case DLC_OP_SHAPE: rc = fold_shape(g, nd, err, errlen); break;
    case DLC_OP_IDENTITY:
    case DLC_OP_DROPOUT: rc = fold_copy(g, nd, in_at(g, nd, 0)->is_int, err, errlen); break;
    case DLC_OP_CAST: rc = fold_cast(g, nd, err, errlen); break;
    case DLC_OP_GATHER: rc = fold_gather(g, nd, err, errlen); break;
    case DLC_OP_CONCAT: rc = fold_concat(g, nd, err, errlen); break;
    case DLC_OP_SLICE: rc = fold_slice(g, nd, err, errlen); break;
    case DLC_OP_ADD:
    case DLC_OP_SUB:
    case DLC_OP_MUL:
    case DLC_OP_DIV: rc = fold_arith(g, nd, err, errlen); break;
    case DLC_OP_DEQUANTIZE: rc = dlc_fold_dequantize(g, nd, err, errlen); break;
    case DLC_OP_QUANTIZE: rc = dlc_fold_quantize(g, nd, err, errlen); break;
    case DLC_OP_CONSTOFSHAPE: rc = fold_const_of_shape(g, nd, err, errlen); break;
    default: rc = fold_reshaped(g, nd, err, errlen); break;
    }
    if (rc) {
        return rc;
    }
    for (int i = 0; i < nd->n_in; i++) { /* its inputs lose a reader */
        if (nd->in[i] >= 0) {
            g->t[nd->in[i]].consumers--;
        }
    }
    nd->dead = 1;
    return 0;
}
