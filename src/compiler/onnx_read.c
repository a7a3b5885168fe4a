/*
 * ONNX model reading: the protobuf is decoded by protobuf-c with C
 * generated at build time from the onnx.proto Debian's python3-onnx ships
 * (Makefile: $(BUILD)/gen/onnx.pb-c.[ch]); this file only turns the decoded
 * ModelProto into the compiler's IR (ir.h).
 * Accepted: the default ("" / "ai.onnx") domain at opsets 11..17, float32
 * activations, float32 / int64 / int32 initializers and Constant nodes.
 * Refused with the tensor or node named: external data (data_location
 * EXTERNAL), other element types, unknown ops, attributes outside what the
 * IR keeps (auto_pad VALID is mapped to no padding).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/compiler_int.h"
#include "onnx.pb-c.h"

#define TYPE_FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define TYPE_INT64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define TYPE_INT32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define TYPE_INT8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define TYPE_UINT8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8

const char *const dlc_op_names[DLC_OP_COUNT] = {
    [DLC_OP_CONV] = "Conv", [DLC_OP_GEMM] = "Gemm", [DLC_OP_MATMUL] = "MatMul",
    [DLC_OP_BN] = "BatchNormalization", [DLC_OP_RELU] = "Relu",
    [DLC_OP_LEAKYRELU] = "LeakyRelu", [DLC_OP_PRELU] = "PRelu", [DLC_OP_CLIP] = "Clip",
    [DLC_OP_ADD] = "Add", [DLC_OP_SUB] = "Sub", [DLC_OP_MUL] = "Mul",
    [DLC_OP_MAXPOOL] = "MaxPool", [DLC_OP_AVGPOOL] = "AveragePool",
    [DLC_OP_GAP] = "GlobalAveragePool", [DLC_OP_LRN] = "LRN", [DLC_OP_SIGMOID] = "Sigmoid",
    [DLC_OP_TANH] = "Tanh", [DLC_OP_CONCAT] = "Concat", [DLC_OP_FLATTEN] = "Flatten",
    [DLC_OP_RESHAPE] = "Reshape", [DLC_OP_SQUEEZE] = "Squeeze",
    [DLC_OP_UNSQUEEZE] = "Unsqueeze", [DLC_OP_TRANSPOSE] = "Transpose",
    [DLC_OP_SOFTMAX] = "Softmax", [DLC_OP_RESIZE] = "Resize", [DLC_OP_PAD] = "Pad",
    [DLC_OP_IDENTITY] = "Identity", [DLC_OP_DROPOUT] = "Dropout",
    [DLC_OP_CONSTANT] = "Constant", [DLC_OP_SHAPE] = "Shape", [DLC_OP_GATHER] = "Gather",
    [DLC_OP_CAST] = "Cast", [DLC_OP_SLICE] = "Slice", [DLC_OP_DIV] = "Div",
    [DLC_OP_HARDSIGMOID] = "HardSigmoid", [DLC_OP_HARDSWISH] = "HardSwish",
    [DLC_OP_REDUCEMEAN] = "ReduceMean", [DLC_OP_SPLIT] = "Split",
    [DLC_OP_QUANTIZE] = "QuantizeLinear", [DLC_OP_DEQUANTIZE] = "DequantizeLinear",
    [DLC_OP_CONSTOFSHAPE] = "ConstantOfShape",
};

/* What the reader refuses in the file: DLASIM_ERR_PARSE with the message
 * (fmt takes up to three strings). */
static int fail(char *err, size_t errlen, const char *fmt, const char *a, const char *b,
                const char *c)
{
    return dla_errf(err, errlen, DLASIM_ERR_PARSE, fmt, a ? a : "", b ? b : "", c ? c : "");
}

/* Host memory ran out while reading what (a tensor, node or the model). */
static int oom(char *err, size_t errlen, const char *kind, const char *name)
{
    return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "%s '%s': out of memory", kind, name);
}

/* Copy an initializer / Constant tensor's values into t (float, and the
 * integer values too for int64 / int32 tensors). */
static int tensor_values(const Onnx__TensorProto *tp, struct dlc_tensor *t, char *err,
                         size_t errlen)
{
    const char *name = tp->name && *tp->name ? tp->name : t->name;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        return fail(err, errlen,
                    "tensor '%s': its data is stored outside the model file (external data); "
                    "dlasim reads self-contained .onnx files only (save the model with "
                    "save_as_external_data=False)",
                    name, NULL, NULL);
    }
    if (tp->n_dims > DLC_MAX_RANK) {
        return fail(err, errlen, "tensor '%s': rank above 6", name, NULL, NULL);
    }
    int64_t n = 1;
    t->rank = (int)tp->n_dims;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || tp->dims[i] > (1 << 28) || (n *= tp->dims[i]) > (1 << 28)) {
            return fail(err, errlen, "tensor '%s': dimensions negative or too large", name,
                        NULL, NULL);
        }
        t->dims[i] = tp->dims[i];
    }
    t->n = n;
    int type = tp->has_data_type ? tp->data_type : 0;
    size_t elem = type == TYPE_FLOAT ? 4 : type == TYPE_INT64 ? 8 : type == TYPE_INT32 ? 4
                  : type == TYPE_INT8 || type == TYPE_UINT8 ? 1 : 0;
    if (!elem) {
        char tn[16];
        snprintf(tn, sizeof tn, "%d", type);
        return fail(err, errlen,
                    "tensor '%s': element type %s is not supported (float32, int64, int32, int8, uint8)",
                    name, tn, NULL);
    }
    size_t have = tp->has_raw_data ? tp->raw_data.len / elem
                  : type == TYPE_FLOAT ? tp->n_float_data
                  : type == TYPE_INT64 ? tp->n_int64_data : tp->n_int32_data; /* int8/uint8 too */
    if (tp->has_raw_data && tp->raw_data.len % elem) {
        return fail(err, errlen, "tensor '%s': raw_data length is not a multiple of the element size",
                    name, NULL, NULL);
    }
    if ((int64_t)have != n) {
        return fail(err, errlen, "tensor '%s': holds a different number of values than its dims say",
                    name, NULL, NULL);
    }
    t->data = malloc((size_t)(n ? n : 1) * sizeof(float));
    if (type != TYPE_FLOAT) {
        t->idata = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
        t->is_int = 1;
    }
    if (!t->data || (t->is_int && !t->idata)) {
        return oom(err, errlen, "tensor", name);
    }
    const uint8_t *raw = tp->has_raw_data ? tp->raw_data.data : NULL;
    for (int64_t i = 0; i < n; i++) {
        if (type == TYPE_FLOAT) {
            float f;
            if (raw) {
                memcpy(&f, raw + 4 * i, 4); /* ONNX raw data is little-endian, as the host */
            } else {
                f = tp->float_data[i];
            }
            if (!isfinite(f)) {
                return fail(err, errlen, "tensor '%s': holds NaN or infinite values", name, NULL, NULL);
            }
            t->data[i] = f;
        } else {
            int64_t v;
            if (type == TYPE_INT64) {
                if (raw) {
                    memcpy(&v, raw + 8 * i, 8);
                } else {
                    v = tp->int64_data[i];
                }
            } else if (type == TYPE_INT32) {
                int32_t v32;
                if (raw) {
                    memcpy(&v32, raw + 4 * i, 4);
                } else {
                    v32 = tp->int32_data[i];
                }
                v = v32;
            } else { /* int8 / uint8: one byte each in raw data, else int32_data */
                int32_t v32 = raw ? (type == TYPE_INT8 ? (int8_t)raw[i] : raw[i]) : tp->int32_data[i];
                v = type == TYPE_INT8 ? (int8_t)v32 : (uint8_t)v32;
            }
            t->idata[i] = v;
            t->data[i] = (float)v;
        }
    }
    t->is_const = 1;
    t->elem = type;
    return 0;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *np, const char *name)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        if (np->attribute[i]->name && !strcmp(np->attribute[i]->name, name)) {
            return np->attribute[i];
        }
    }
    return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *np, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = attr(np, name);
    return a && a->has_i ? a->i : def;
}

static float attr_f(const Onnx__NodeProto *np, const char *name, float def)
{
    const Onnx__AttributeProto *a = attr(np, name);
    return a && a->has_f ? a->f : def;
}

static int attr_is(const Onnx__NodeProto *np, const char *name, const char *value)
{
    const Onnx__AttributeProto *a = attr(np, name);
    return a && a->has_s && a->s.len == strlen(value) && !memcmp(a->s.data, value, a->s.len);
}

/* ints attribute into out[] (at most max); returns the count, DLASIM_ERR_PARSE if too many */
static int attr_ints(const Onnx__NodeProto *np, const char *name, int64_t *out, int max)
{
    const Onnx__AttributeProto *a = attr(np, name);
    if (!a) {
        return 0;
    }
    if (a->n_ints > (size_t)max) {
        return DLASIM_ERR_PARSE;
    }
    for (size_t i = 0; i < a->n_ints; i++) {
        out[i] = a->ints[i];
    }
    return (int)a->n_ints;
}

static int small(int64_t v, int lo, int hi)
{
    return v >= lo && v <= hi;
}

/* Spatial attributes of Conv / pooling (2-D only). */
static int spatial_attrs(const Onnx__NodeProto *np, struct dlc_node *nd, const char *nm,
                         char *err, size_t errlen)
{
    int64_t v[8];
    int k = attr_ints(np, "kernel_shape", v, 8);
    if (k != 0 && k != 2) {
        return fail(err, errlen, "node '%s' (%s): only 2-D kernels are supported (kernel_shape)",
                    nm, np->op_type, NULL);
    }
    if (k == 2) {
        if (!small(v[0], 1, 4096) || !small(v[1], 1, 4096)) {
            return fail(err, errlen, "node '%s' (%s): kernel_shape out of range", nm, np->op_type, NULL);
        }
        nd->kernel[0] = (int)v[0], nd->kernel[1] = (int)v[1];
    }
    k = attr_ints(np, "strides", v, 8);
    if (k == 2) {
        if (!small(v[0], 1, 64) || !small(v[1], 1, 64)) {
            return fail(err, errlen, "node '%s' (%s): strides out of range", nm, np->op_type, NULL);
        }
        nd->stride[0] = (int)v[0], nd->stride[1] = (int)v[1];
    } else if (k != 0) {
        return fail(err, errlen, "node '%s' (%s): strides must have 2 values", nm, np->op_type, NULL);
    }
    k = attr_ints(np, "dilations", v, 8);
    if (k == 2) {
        if (!small(v[0], 1, 64) || !small(v[1], 1, 64)) {
            return fail(err, errlen, "node '%s' (%s): dilations out of range", nm, np->op_type, NULL);
        }
        nd->dilation[0] = (int)v[0], nd->dilation[1] = (int)v[1];
    } else if (k != 0) {
        return fail(err, errlen, "node '%s' (%s): dilations must have 2 values", nm, np->op_type, NULL);
    }
    k = attr_ints(np, "pads", v, 8);
    if (k == 4) {
        for (int i = 0; i < 4; i++) {
            if (!small(v[i], 0, 255)) {
                return fail(err, errlen, "node '%s' (%s): pads out of range", nm, np->op_type, NULL);
            }
        }
        nd->pads[0] = (int)v[0], nd->pads[1] = (int)v[1];
        nd->pads[2] = (int)v[2], nd->pads[3] = (int)v[3];
    } else if (k != 0) {
        return fail(err, errlen, "node '%s' (%s): pads must have 4 values", nm, np->op_type, NULL);
    }
    if (attr_is(np, "auto_pad", "SAME_UPPER")) {
        nd->auto_pad_same = 1;
    } else if (attr_is(np, "auto_pad", "SAME_LOWER")) {
        nd->auto_pad_same = 2;
    }
    int64_t g = attr_i(np, "group", 1);
    if (!small(g, 1, 65536)) {
        return fail(err, errlen, "node '%s' (%s): group out of range", nm, np->op_type, NULL);
    }
    nd->group = (int)g;
    nd->ceil_mode = (int)attr_i(np, "ceil_mode", 0) != 0;
    nd->count_include_pad = (int)attr_i(np, "count_include_pad", 0) != 0;
    return 0;
}

/* Index of the string attribute `name` in names[] (def when absent), -1 when unknown. */
static int attr_choice(const Onnx__NodeProto *np, const char *name, const char *const *names,
                       int n, int def)
{
    if (!attr(np, name)) {
        return def;
    }
    for (int i = 0; i < n; i++) {
        if (attr_is(np, name, names[i])) {
            return i;
        }
    }
    return -1;
}

/* Resize-11/13 (and Upsample: nearest, asymmetric, floor). */
static int resize_attrs(const Onnx__NodeProto *np, struct dlc_node *nd, char *err, size_t errlen)
{
    static const char *const modes[] = { "nearest", "linear", "cubic" };
    static const char *const coords[] = { "half_pixel", "asymmetric", "align_corners",
                                          "pytorch_half_pixel", "tf_half_pixel_for_nn",
                                          "tf_crop_and_resize" };
    static const char *const nearest[] = { "round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil" };
    int upsample = !strcmp(np->op_type, "Upsample");
    int mode = attr_choice(np, "mode", modes, 3, 0);
    int coord = attr_choice(np, "coordinate_transformation_mode", coords, 6,
                            upsample ? DLC_RS_ASYMMETRIC : DLC_RS_HALF_PIXEL);
    int near = attr_choice(np, "nearest_mode", nearest, 4, upsample ? DLC_RS_FLOOR : 0);
    if (mode < 0 || coord < 0 || near < 0) {
        return fail(err, errlen, "node '%s' (%s): unknown mode, coordinate_transformation_mode or "
                    "nearest_mode", nd->name, np->op_type, NULL);
    }
    nd->rs_mode = (enum dlc_resize_mode)mode;
    nd->rs_coord = (enum dlc_resize_coord)coord;
    nd->rs_nearest = (enum dlc_resize_nearest)near;
    nd->mode_nearest = mode == DLC_RS_NEAREST;
    nd->rs_cubic_a = attr_f(np, "cubic_coeff_a", -0.75f);
    nd->rs_exclude_outside = attr_i(np, "exclude_outside", 0) != 0;
    nd->rs_extrapolation = attr_f(np, "extrapolation_value", 0.0f);
    return 0;
}

/* Every float attribute of the node finite (NaN or Inf would flow into
 * every value computed after it). */
static int float_attrs_finite(const Onnx__NodeProto *np, const char *nm, char *err, size_t errlen)
{
    for (size_t i = 0; i < np->n_attribute; i++) {
        const Onnx__AttributeProto *a = np->attribute[i];
        if (a && a->has_f && !isfinite(a->f)) {
            return fail(err, errlen, "node '%s': attribute '%s' is NaN or infinite", nm,
                        a->name ? a->name : "?", NULL);
        }
    }
    return 0;
}

static int node_attrs(const Onnx__NodeProto *np, struct dlc_node *nd, char *err, size_t errlen)
{
    const char *nm = nd->name;
    int64_t v[DLC_MAX_RANK];
    switch (nd->op) {
    case DLC_OP_CONV:
    case DLC_OP_MAXPOOL:
    case DLC_OP_AVGPOOL:
        if (attr_i(np, "storage_order", 0) != 0) {
            return fail(err, errlen, "node '%s' (%s): storage_order 1 is not supported", nm,
                        np->op_type, NULL);
        }
        return spatial_attrs(np, nd, nm, err, errlen);
    case DLC_OP_GEMM:
        nd->alpha = attr_f(np, "alpha", 1.0f);
        nd->beta = attr_f(np, "beta", 1.0f);
        nd->trans_a = attr_i(np, "transA", 0) != 0;
        nd->trans_b = attr_i(np, "transB", 0) != 0;
        return 0;
    case DLC_OP_BN:
        nd->epsilon = attr_f(np, "epsilon", 1e-5f);
        return 0;
    case DLC_OP_LEAKYRELU:
        nd->alpha = attr_f(np, "alpha", 0.01f);
        return 0;
    case DLC_OP_CLIP: /* opset >= 11: min / max are inputs; older min/max attributes */
        nd->clip_min = attr_f(np, "min", -3.4e38f);
        nd->clip_max = attr_f(np, "max", 3.4e38f);
        return 0;
    case DLC_OP_LRN:
        nd->alpha = attr_f(np, "alpha", 1e-4f);
        nd->beta = attr_f(np, "beta", 0.75f);
        nd->bias = attr_f(np, "bias", 1.0f);
        nd->size = (int)attr_i(np, "size", 0);
        if (!small(nd->size, 1, 9)) {
            return fail(err, errlen, "node '%s' (LRN): size must be 1..9 (CDP local sizes)", nm,
                        NULL, NULL);
        }
        return 0;
    case DLC_OP_CONCAT:
        nd->axis = (int)attr_i(np, "axis", 1);
        return 0;
    case DLC_OP_SOFTMAX:
        nd->axis = (int)attr_i(np, "axis", -1);
        return 0;
    case DLC_OP_FLATTEN:
        nd->axis = (int)attr_i(np, "axis", 1);
        return 0;
    case DLC_OP_TRANSPOSE: {
        int k = attr_ints(np, "perm", v, DLC_MAX_RANK);
        if (k < 0) {
            return fail(err, errlen, "node '%s' (Transpose): perm too long", nm, NULL, NULL);
        }
        nd->n_perm = k;
        for (int i = 0; i < k; i++) {
            if (!small(v[i], 0, DLC_MAX_RANK - 1)) {
                return fail(err, errlen, "node '%s' (Transpose): perm out of range", nm, NULL, NULL);
            }
            nd->perm[i] = (int)v[i];
        }
        return 0;
    }
    case DLC_OP_SQUEEZE:
    case DLC_OP_UNSQUEEZE: { /* opset < 13: attribute; >= 13: input (graph.c) */
        int k = attr_ints(np, "axes", nd->axes, DLC_MAX_RANK);
        if (k < 0) {
            return fail(err, errlen, "node '%s' (%s): too many axes", nm, np->op_type, NULL);
        }
        nd->n_axes = k;
        return 0;
    }
    case DLC_OP_RESIZE:
        return resize_attrs(np, nd, err, errlen);
    case DLC_OP_HARDSIGMOID:
        nd->alpha = attr_f(np, "alpha", 0.2f);
        nd->beta = attr_f(np, "beta", 0.5f);
        return 0;
    case DLC_OP_REDUCEMEAN: { /* opset < 18: axes is an attribute */
        int k = attr_ints(np, "axes", nd->axes, DLC_MAX_RANK);
        if (k < 0) {
            return fail(err, errlen, "node '%s' (ReduceMean): too many axes", nm, NULL, NULL);
        }
        nd->n_axes = k;
        nd->keepdims = attr_i(np, "keepdims", 1) != 0;
        return 0;
    }
    case DLC_OP_CAST:
        nd->cast_to = (int)attr_i(np, "to", 0);
        return 0;
    case DLC_OP_GATHER:
    case DLC_OP_SPLIT:
        nd->axis = (int)attr_i(np, "axis", 0);
        return 0;
    case DLC_OP_QUANTIZE:
    case DLC_OP_DEQUANTIZE:
        nd->axis = (int)attr_i(np, "axis", 1);
        return 0;
    case DLC_OP_CONSTOFSHAPE: {
        const Onnx__AttributeProto *a = attr(np, "value");
        struct dlc_tensor cv = { 0 };
        if (a && a->t) {
            int rc = tensor_values(a->t, &cv, err, errlen);
            if (!rc && cv.n != 1) {
                rc = fail(err, errlen, "node '%s' (ConstantOfShape): value must hold one element",
                          nm, NULL, NULL);
            }
            nd->cos_value = rc ? 0 : cv.data[0];
            nd->cos_is_int = cv.is_int;
            free(cv.data);
            free(cv.idata);
            return rc;
        }
        return 0;
    }
    case DLC_OP_PAD:
        nd->pad_mode_constant = !attr(np, "mode") || attr_is(np, "mode", "constant");
        if (!nd->pad_mode_constant) {
            return fail(err, errlen, "node '%s' (Pad): only mode 'constant' is supported", nm,
                        NULL, NULL);
        }
        return 0;
    default:
        return 0;
    }
}

static enum dlc_op op_of(const char *type, int *ok)
{
    for (int i = 0; i < DLC_OP_COUNT; i++) {
        if (!strcmp(type, dlc_op_names[i])) {
            *ok = 1;
            return (enum dlc_op)i;
        }
    }
    if (!strcmp(type, "Upsample")) {
        *ok = 1;
        return DLC_OP_RESIZE;
    }
    *ok = 0;
    return DLC_OP_IDENTITY;
}

static const char *const unsupported_why[][2] = {
    { "ConvTranspose", "transposed convolution (deconvolution) is not lowered by dlasim" },
    { "LSTM", "recurrent layers have no NVDLA engine" },
    { "GRU", "recurrent layers have no NVDLA engine" },
    { "RNN", "recurrent layers have no NVDLA engine" },
    { "Loop", "control flow cannot be compiled to hardware layers" },
    { "If", "control flow cannot be compiled to hardware layers" },
};

/* The output tensor `name` of node ni. */
static int add_output(struct dlc_graph *g, int ni, const char *name, const char *type, char *err,
                      size_t errlen)
{
    const char *nm = g->nodes[ni].name;
    if (dlc_tensor_find(g, name) >= 0) {
        return fail(err, errlen, "node '%s' (%s): output '%s' is defined twice", nm, type, name);
    }
    int t = dlc_tensor_add(g, name);
    if (t < 0) {
        return oom(err, errlen, "node", nm);
    }
    g->nodes[ni].out = t;
    g->t[t].producer = ni;
    return 0;
}

/* The split sizes of a Split (attribute before opset 13, constant input
 * after): their count, 0 for an equal split, or < 0 a status. */
static int split_sizes(const struct dlc_graph *g, const Onnx__NodeProto *np, const char *nm,
                       int64_t *sizes, char *err, size_t errlen)
{
    int k = attr_ints(np, "split", sizes, DLC_MAX_IN);
    if (np->n_input > 1 && np->input[1] && *np->input[1]) {
        int t = dlc_tensor_find(g, np->input[1]);
        const struct dlc_tensor *st = t >= 0 ? &g->t[t] : NULL;
        if (!st || !st->is_const || !st->is_int || st->n > DLC_MAX_IN) {
            return fail(err, errlen, "node '%s' (Split): the split sizes must be an integer "
                        "constant", nm, NULL, NULL);
        }
        for (int64_t i = 0; i < st->n; i++) {
            sizes[i] = st->idata[i];
        }
        k = (int)st->n;
    }
    if (k < 0 || (k > 0 && (size_t)k != np->n_output)) {
        return fail(err, errlen, "node '%s' (Split): split sizes do not match the outputs", nm,
                    NULL, NULL);
    }
    for (int i = 0; i < k; i++) {
        if (sizes[i] < 0) {
            return fail(err, errlen, "node '%s' (Split): negative split size", nm, NULL, NULL);
        }
    }
    return k;
}

/* A Split becomes one Slice node per output (the IR's nodes have one output). */
static int read_split(struct dlc_graph *g, const Onnx__NodeProto *np, const char *nm, char *err,
                      size_t errlen)
{
    int64_t sizes[DLC_MAX_IN];
    if (np->n_output < 1 || np->n_output > DLC_MAX_IN || np->n_input < 1 || !np->input[0]) {
        return fail(err, errlen, "node '%s' (Split): needs an input and 1..%s outputs", nm, "128",
                    NULL);
    }
    int k = split_sizes(g, np, nm, sizes, err, errlen);
    int x = dlc_tensor_find(g, np->input[0]);
    if (k < 0) {
        return k;
    }
    if (x < 0) {
        return fail(err, errlen, "node '%s' (Split): input '%s' is produced by no earlier node",
                    nm, np->input[0], NULL);
    }
    int64_t start = 0;
    for (size_t j = 0; j < np->n_output; j++) {
        int ni = dlc_node_add(g);
        char name[300];
        snprintf(name, sizeof name, "%s:%zu", nm, j);
        if (ni < 0 || !(g->nodes[ni].name = strdup(name))) {
            return oom(err, errlen, "node", nm);
        }
        struct dlc_node *nd = &g->nodes[ni];
        nd->op = DLC_OP_SLICE;
        nd->sl_axis = (int)attr_i(np, "axis", 0);
        nd->sl_step = 1;
        nd->in[nd->n_in++] = x;
        g->t[x].consumers++;
        if (k > 0) {
            nd->sl_start = start;
            nd->sl_end = start += sizes[j];
        } else {
            nd->split_n = (int)np->n_output;
            nd->split_i = (int)j;
        }
        int rc = np->output[j] && *np->output[j] ? add_output(g, ni, np->output[j], "Split", err, errlen)
                                                 : fail(err, errlen, "node '%s' (Split): unnamed output",
                                                        nm, NULL, NULL);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* ---- QLinear operators: expanded into DequantizeLinear -> op -> QuantizeLinear ---- */

/* Input i of np by name (-1: left out); *rc set when it names nothing. */
static int qin(struct dlc_graph *g, const Onnx__NodeProto *np, size_t i, const char *nm, int *rc,
               char *err, size_t errlen)
{
    if (i >= np->n_input || !np->input[i] || !*np->input[i]) {
        return -1;
    }
    int t = dlc_tensor_find(g, np->input[i]);
    if (t < 0 && !*rc) {
        *rc = fail(err, errlen, "node '%s' (%s): input '%s' is produced by no earlier node, "
                   "initializer or graph input", nm, np->op_type, np->input[i]);
    }
    return t;
}

/* A node of the expansion: op over in[] (-1 = left out) into tensor `out`
 * (named out_name, or "<node>:<suffix>"); its index or a negative status. */
static int synth_node(struct dlc_graph *g, enum dlc_op op, const char *nm, const char *suffix,
                      const int *in, int n_in, const char *out_name, char *err, size_t errlen)
{
    char name[320];
    snprintf(name, sizeof name, "%s:%s", nm, suffix);
    int ni = dlc_node_add(g);
    if (ni < 0 || !(g->nodes[ni].name = strdup(name))) {
        return oom(err, errlen, "node", nm);
    }
    struct dlc_node *nd = &g->nodes[ni];
    nd->op = op;
    for (int i = 0; i < n_in; i++) {
        nd->in[nd->n_in++] = in[i];
        if (in[i] >= 0) {
            g->t[in[i]].consumers++;
        }
    }
    int rc = add_output(g, ni, out_name ? out_name : name, dlc_op_names[op], err, errlen);
    return rc ? rc : ni;
}

/* The bias scale of a QLinearConv / QGemm: input scale x weight scale(s). */
static int bias_scale(struct dlc_graph *g, int xs, int ws, const char *nm, char *err, size_t errlen)
{
    char name[320];
    snprintf(name, sizeof name, "%s:bias_scale", nm);
    const struct dlc_tensor *a = &g->t[xs], *b = &g->t[ws];
    if (!a->is_const || !b->is_const || a->n != 1) {
        return fail(err, errlen, "node '%s': the input scale and weight scales must be constants "
                    "(one input scale)", nm, NULL, NULL);
    }
    int t = dlc_tensor_add(g, name);
    if (t < 0 || !(g->t[t].data = malloc((size_t)b->n * sizeof(float)))) {
        return oom(err, errlen, "node", nm);
    }
    struct dlc_tensor *o = &g->t[t];
    o->rank = 1, o->dims[0] = o->n = b->n, o->is_const = 1, o->producer = -1;
    for (int64_t i = 0; i < b->n; i++) {
        o->data[i] = g->t[xs].data[0] * g->t[ws].data[i];
    }
    return t;
}

/* QLinearConv, QLinearMatMul (ONNX), QGemm, QLinearAdd (com.microsoft): the
 * same graph in QDQ form, which qdq.c imports.  Input positions: x, x scale,
 * x zero point, w, w scale, w zero point, [C,] y scale, y zero point[, B]. */
static int read_qlinear(struct dlc_graph *g, const Onnx__NodeProto *np, const char *nm, char *err,
                        size_t errlen)
{
    const char *type = np->op_type;
    int conv = !strcmp(type, "QLinearConv"), gemm = !strcmp(type, "QGemm");
    int add = !strcmp(type, "QLinearAdd");
    enum dlc_op op = conv ? DLC_OP_CONV : gemm ? DLC_OP_GEMM : add ? DLC_OP_ADD : DLC_OP_MATMUL;
    int rc = 0;
    int t[9];
    for (size_t i = 0; i < 9; i++) {
        t[i] = qin(g, np, i, nm, &rc, err, errlen);
    }
    if (rc || np->n_output < 1 || !np->output[0] || !*np->output[0] || t[0] < 0 || t[1] < 0 ||
        t[3] < 0 || t[4] < 0) {
        return rc ? rc : fail(err, errlen, "node '%s' (%s): missing input or output", nm, type, NULL);
    }
    int ys = gemm ? 7 : 6, yz = ys + 1, bias = conv ? 8 : gemm ? 6 : -1;
    int a_in[3] = { t[0], t[1], t[2] }, b_in[3] = { t[3], t[4], t[5] };
    int da = synth_node(g, DLC_OP_DEQUANTIZE, nm, "dq_a", a_in, 3, NULL, err, errlen);
    int db = da < 0 ? da : synth_node(g, DLC_OP_DEQUANTIZE, nm, "dq_b", b_in, 3, NULL, err, errlen);
    if (db < 0) {
        return db;
    }
    g->nodes[db].axis = conv || (gemm && attr_i(np, "transB", 0)) ? 0 : 1;
    int opin[3] = { g->nodes[da].out, g->nodes[db].out, -1 };
    if (bias >= 0 && t[bias] >= 0) {
        int bs = bias_scale(g, t[1], t[4], nm, err, errlen);
        int bin[2] = { t[bias], bs };
        int dc = bs < 0 ? bs : synth_node(g, DLC_OP_DEQUANTIZE, nm, "dq_bias", bin, 2, NULL, err, errlen);
        if (dc < 0) {
            return dc;
        }
        g->nodes[dc].axis = 0;
        opin[2] = g->nodes[dc].out;
    }
    int quantized = ys < (int)np->n_input && t[ys] >= 0; /* QGemm without y_scale: float output */
    int on = synth_node(g, op, nm, dlc_op_names[op], opin, bias >= 0 && opin[2] >= 0 ? 3 : 2,
                        quantized ? NULL : np->output[0], err, errlen);
    if (on < 0) {
        return on;
    }
    rc = node_attrs(np, &g->nodes[on], err, errlen);
    if (rc || !quantized) {
        return rc;
    }
    int qin_[3] = { g->nodes[on].out, t[ys], yz < 9 ? t[yz] : -1 };
    rc = synth_node(g, DLC_OP_QUANTIZE, nm, "q", qin_, 3, np->output[0], err, errlen);
    return rc < 0 ? rc : 0;
}

static int is_qlinear(const char *type, const char *domain)
{
    int ms = domain && !strcmp(domain, "com.microsoft");
    int dflt = !domain || !*domain || !strcmp(domain, "ai.onnx");
    return (dflt && (!strcmp(type, "QLinearConv") || !strcmp(type, "QLinearMatMul"))) ||
           (ms && (!strcmp(type, "QGemm") || !strcmp(type, "QLinearAdd")));
}

static int read_node(struct dlc_graph *g, const Onnx__NodeProto *np, size_t index, char *err,
                     size_t errlen)
{
    char autoname[32];
    snprintf(autoname, sizeof autoname, "node%zu", index);
    const char *nm = np->name && *np->name ? np->name : autoname;
    const char *type = np->op_type ? np->op_type : "";
    if (is_qlinear(type, np->domain)) {
        return read_qlinear(g, np, nm, err, errlen);
    }
    if (np->domain && *np->domain && strcmp(np->domain, "ai.onnx")) {
        return fail(err, errlen, "node '%s' (%s): domain '%s' is not supported (only the default ONNX domain)",
                    nm, type, np->domain);
    }
    int ok;
    enum dlc_op op = op_of(type, &ok);
    if (ok && op == DLC_OP_SPLIT) {
        return read_split(g, np, nm, err, errlen);
    }
    if (!ok) {
        const char *why = "no lowering to NVDLA hardware layers and no host-CPU implementation in dlasim";
        for (size_t i = 0; i < sizeof unsupported_why / sizeof unsupported_why[0]; i++) {
            if (!strcmp(type, unsupported_why[i][0])) {
                why = unsupported_why[i][1];
            }
        }
        return fail(err, errlen, "node '%s': op %s is not supported: %s", nm, type, why);
    }
    if (np->n_output < 1 || !np->output[0] || !*np->output[0]) {
        return fail(err, errlen, "node '%s' (%s): no output", nm, type, NULL);
    }
    if (np->n_input > DLC_MAX_IN) {
        return fail(err, errlen, "node '%s' (%s): too many inputs", nm, type, NULL);
    }
    int ni = dlc_node_add(g);
    if (ni < 0) {
        return oom(err, errlen, "node", nm);
    }
    struct dlc_node *nd = &g->nodes[ni];
    nd->name = strdup(nm);
    nd->op = op;
    if (!nd->name) {
        return oom(err, errlen, "node", nm);
    }
    int rc = float_attrs_finite(np, nd->name, err, errlen);
    rc = rc ? rc : node_attrs(np, nd, err, errlen);
    if (rc) {
        return rc;
    }
    for (size_t i = 0; i < np->n_input; i++) {
        const char *in = np->input[i];
        if (!in || !*in) { /* optional input left out */
            nd->in[nd->n_in++] = -1;
            continue;
        }
        int t = dlc_tensor_find(g, in);
        if (t < 0) {
            return fail(err, errlen,
                        "node '%s' (%s): input '%s' is produced by no earlier node, initializer or "
                        "graph input (nodes must be in topological order)",
                        nm, type, in);
        }
        nd->in[nd->n_in++] = t;
        g->t[t].consumers++;
    }
    rc = add_output(g, ni, np->output[0], type, err, errlen);
    if (rc) {
        return rc;
    }
    int t = g->nodes[ni].out;
    if (op == DLC_OP_CONSTANT) {
        const Onnx__AttributeProto *a = attr(np, "value");
        if (!a || !a->t) {
            return fail(err, errlen, "node '%s' (Constant): only the 'value' tensor attribute is supported",
                        nm, NULL, NULL);
        }
        rc = tensor_values(a->t, &g->t[t], err, errlen);
        if (rc) {
            return rc;
        }
        g->t[t].producer = -1;
        nd->dead = 1;
    }
    return 0;
}

static int read_opset(struct dlc_graph *g, const Onnx__ModelProto *m, char *err, size_t errlen)
{
    g->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
            g->opset = o->has_version ? o->version : 0;
        }
    }
    if (g->opset < 11 || g->opset > 17) {
        char v[24];
        snprintf(v, sizeof v, "%lld", (long long)g->opset);
        return fail(err, errlen,
                    "model: ONNX opset %s is not supported (dlasim reads opsets 11 to 17; "
                    "convert with onnx.version_converter)",
                    g->opset < 0 ? "(none imported)" : v, NULL, NULL);
    }
    return 0;
}

static int read_input(struct dlc_graph *g, const Onnx__GraphProto *gp, char *err, size_t errlen)
{
    const Onnx__ValueInfoProto *vi = NULL;
    for (size_t i = 0; i < gp->n_input; i++) {
        if (gp->input[i]->name && dlc_tensor_find(g, gp->input[i]->name) < 0) {
            if (vi) {
                return fail(err, errlen, "model: more than one graph input ('%s', '%s'); dlasim "
                            "compiles single-input models",
                            vi->name, gp->input[i]->name, NULL);
            }
            vi = gp->input[i];
        }
    }
    if (!vi) {
        return fail(err, errlen, "model: no graph input", NULL, NULL, NULL);
    }
    int t = dlc_tensor_add(g, vi->name);
    if (t < 0) {
        return oom(err, errlen, "input", vi->name);
    }
    g->input = t;
    struct dlc_tensor *x = &g->t[t];
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
        !tp->tensor_type->shape || (tp->tensor_type->has_elem_type && tp->tensor_type->elem_type != TYPE_FLOAT)) {
        return fail(err, errlen, "input '%s': must be a float32 tensor with a known shape", vi->name,
                    NULL, NULL);
    }
    const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
    if (sh->n_dim < 1 || sh->n_dim > DLC_MAX_RANK) {
        return fail(err, errlen, "input '%s': rank must be 1..6", vi->name, NULL, NULL);
    }
    x->rank = (int)sh->n_dim;
    x->n = 1;
    for (size_t i = 0; i < sh->n_dim; i++) {
        int64_t d = sh->dim[i]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                        ? sh->dim[i]->dim_value : (i == 0 ? 1 : -1);
        if (d < 1 || d > 65536) {
            return fail(err, errlen, "input '%s': dimensions must be fixed and 1..65536 (the batch "
                        "dimension may be symbolic; it is taken as 1)",
                        vi->name, NULL, NULL);
        }
        x->dims[i] = d;
        x->n *= d;
    }
    if (x->dims[0] != 1 && x->rank >= 2) {
        return fail(err, errlen, "input '%s': batch size must be 1", vi->name, NULL, NULL);
    }
    if (x->n > (1 << 26)) {
        return fail(err, errlen, "input '%s': too large", vi->name, NULL, NULL);
    }
    return 0;
}

int dlc_onnx_read(const void *buf, size_t len, struct dlc_graph *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->input = g->output = -1;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    if (!m) { /* protobuf-c does not tell a malformed buffer from no memory */
        return fail(err, errlen, "model: not a valid ONNX protobuf (ModelProto failed to decode)",
                    NULL, NULL, NULL);
    }
    int rc = read_opset(g, m, err, errlen);
    const Onnx__GraphProto *gp = m->graph;
    if (!rc && !gp) {
        rc = fail(err, errlen, "model: no graph", NULL, NULL, NULL);
    }
    if (!rc && m->producer_name && !(g->producer_name = strdup(m->producer_name))) {
        rc = oom(err, errlen, "model", "producer_name");
    }
    for (size_t i = 0; !rc && i < gp->n_sparse_initializer; i++) {
        rc = fail(err, errlen, "model: sparse initializers are not supported", NULL, NULL, NULL);
    }
    for (size_t i = 0; !rc && i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name) {
            rc = fail(err, errlen, "model: an initializer has no name", NULL, NULL, NULL);
            break;
        }
        if (dlc_tensor_find(g, tp->name) >= 0) {
            rc = fail(err, errlen, "initializer '%s' is defined twice", tp->name, NULL, NULL);
            break;
        }
        int t = dlc_tensor_add(g, tp->name);
        rc = t < 0 ? oom(err, errlen, "initializer", tp->name)
                   : tensor_values(tp, &g->t[t], err, errlen);
    }
    if (!rc) {
        rc = read_input(g, gp, err, errlen);
    }
    for (size_t i = 0; !rc && i < gp->n_node; i++) {
        rc = read_node(g, gp->node[i], i, err, errlen);
    }
    if (!rc) {
        if (gp->n_output != 1 || !gp->output[0]->name) {
            rc = fail(err, errlen, "model: dlasim compiles models with exactly one output", NULL,
                      NULL, NULL);
        } else if ((g->output = dlc_tensor_find(g, gp->output[0]->name)) < 0 ||
                   g->t[g->output].producer < 0) {
            rc = fail(err, errlen, "model: output '%s' is not produced by any node",
                      gp->output[0]->name, NULL, NULL);
        }
    }
    onnx__model_proto__free_unpacked(m, NULL);
    if (rc) {
        dlc_graph_free(g);
    }
    return rc;
}
