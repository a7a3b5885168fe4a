/*
 * The ONNX compiler's graph IR: tensors with shapes and quantization
 * parameters, nodes with their decoded attributes.  Built by onnx_read.c,
 * shaped and simplified by graph.c (BatchNormalization folded into the
 * convolution before it, constant shape tensors evaluated), run in float by
 * float_exec.c, calibrated by calib.c, lowered to hardware layers by
 * lower.c and its per-op rules (lower_*.c).  Batch is 1: activations are N=1 tensors, stored NCHW.
 */
#ifndef DLASIM_COMPILER_IR_H
#define DLASIM_COMPILER_IR_H

#include <stddef.h>
#include <stdint.h>

#define DLC_MAX_RANK 6
#define DLC_MAX_IN 128 /* DenseNet concatenates up to 49 tensors */

enum dlc_op {
    DLC_OP_CONV, DLC_OP_GEMM, DLC_OP_MATMUL, DLC_OP_BN, DLC_OP_RELU, DLC_OP_LEAKYRELU,
    DLC_OP_PRELU, DLC_OP_CLIP, DLC_OP_ADD, DLC_OP_SUB, DLC_OP_MUL, DLC_OP_MAXPOOL,
    DLC_OP_AVGPOOL, DLC_OP_GAP, DLC_OP_LRN, DLC_OP_SIGMOID, DLC_OP_TANH, DLC_OP_CONCAT,
    DLC_OP_FLATTEN, DLC_OP_RESHAPE, DLC_OP_SQUEEZE, DLC_OP_UNSQUEEZE, DLC_OP_TRANSPOSE,
    DLC_OP_SOFTMAX, DLC_OP_RESIZE, DLC_OP_PAD, DLC_OP_IDENTITY, DLC_OP_DROPOUT,
    DLC_OP_CONSTANT, DLC_OP_SHAPE, DLC_OP_GATHER, DLC_OP_CAST, DLC_OP_SLICE, DLC_OP_DIV,
    DLC_OP_HARDSIGMOID, DLC_OP_HARDSWISH, DLC_OP_REDUCEMEAN, DLC_OP_SPLIT,
    DLC_OP_QUANTIZE, DLC_OP_DEQUANTIZE, DLC_OP_CONSTOFSHAPE, DLC_OP_COUNT
};

/* Resize attributes (ONNX Resize-13). */
enum dlc_resize_coord {
    DLC_RS_HALF_PIXEL, DLC_RS_ASYMMETRIC, DLC_RS_ALIGN_CORNERS, DLC_RS_PYTORCH_HALF_PIXEL,
    DLC_RS_TF_HALF_PIXEL_FOR_NN, DLC_RS_TF_CROP_AND_RESIZE
};
enum dlc_resize_nearest {
    DLC_RS_ROUND_PREFER_FLOOR, DLC_RS_ROUND_PREFER_CEIL, DLC_RS_FLOOR, DLC_RS_CEIL
};
enum dlc_resize_mode { DLC_RS_NEAREST, DLC_RS_LINEAR, DLC_RS_CUBIC };

/* ONNX op_type of each enum value (and the table the reader looks up). */
extern const char *const dlc_op_names[DLC_OP_COUNT];

struct dlc_tensor {
    char *name;
    int rank;
    int64_t dims[DLC_MAX_RANK];
    int64_t n;        /* elements */
    float *data;      /* constant value (initializer / Constant / folded), else NULL */
    int is_const;
    int is_int;       /* constant came from an integer tensor (shapes, axes, pads) */
    int64_t *idata;   /* integer constant values when is_int */
    int producer;     /* node index, -1 for inputs and constants */
    int consumers;    /* number of node inputs reading it */
    /* quantization: int8 value q stands for q * scale */
    float amax;       /* calibrated range (|x| <= amax) */
    float scale;      /* amax / 127 */
    int scale_tied;   /* scale forced equal to another tensor's (pool, concat, views) */
    /* pre-quantized models (qdq.c): the model's own quantization */
    int elem;         /* constant: ONNX element type it was read as (0: float or folded) */
    float qscale;     /* > 0: an activation the model quantizes at this step (QuantizeLinear);
                         calibration keeps it instead of measuring */
    int qnode;        /* the QuantizeLinear that set qscale (node index, for messages) */
    int qdomain;      /* output of a QuantizeLinear (or a Cast of one): its ONNX element type */
    int qzp;          /* ... and its zero point */
    int zero;         /* the int8 code stored on the device for the value 0 (a pre-quantized
                         model's affine activations: value = (code - zero) * scale; the
                         code is q - 128 for uint8, q for int8, so zero = zp - 128 or zp);
                         0 for every other tensor */
    float *qw_scale;  /* constant dequantized per channel (DequantizeLinear of int8 weights):
                         one scale per index of axis qw_axis, zero points 0 */
    int qw_axis;
    int64_t qw_n;
};

struct dlc_node {
    char *name;
    enum dlc_op op;
    int in[DLC_MAX_IN];
    int n_in;
    int out;
    int dead; /* removed by a graph pass (folded / fused) */
    /* attributes (ONNX names in comments; defaults applied by the reader) */
    int kernel[2];        /* kernel_shape h, w */
    int stride[2];        /* strides */
    int dilation[2];      /* dilations */
    int pads[4];          /* top, left, bottom, right (ONNX: begins then ends) */
    int group;            /* group */
    int ceil_mode;        /* ceil_mode */
    int count_include_pad;
    int auto_pad_same;    /* 1 SAME_UPPER, 2 SAME_LOWER */
    float alpha, beta;    /* Gemm / LeakyRelu / LRN */
    float epsilon;        /* BatchNormalization */
    float bias;           /* LRN */
    int size;             /* LRN */
    int trans_a, trans_b; /* Gemm */
    int axis;             /* Concat, Softmax, Flatten */
    int perm[DLC_MAX_RANK];
    int n_perm;
    int64_t axes[DLC_MAX_RANK];
    int n_axes;
    float clip_min, clip_max;
    int mode_nearest;     /* Resize / Upsample: mode nearest */
    enum dlc_resize_mode rs_mode;        /* mode */
    enum dlc_resize_coord rs_coord;      /* coordinate_transformation_mode */
    enum dlc_resize_nearest rs_nearest;  /* nearest_mode */
    float rs_cubic_a;                    /* cubic_coeff_a */
    int rs_exclude_outside;              /* exclude_outside */
    float rs_extrapolation;              /* extrapolation_value */
    float rs_scale[2];                   /* H, W scales the coordinates use */
    float rs_roi[8];                     /* roi (tf_crop_and_resize) */
    int keepdims;                        /* ReduceMean */
    int cast_to;                         /* Cast: ONNX element type */
    /* Slice of one axis (activations; Split becomes one Slice per output) */
    int sl_axis;
    int64_t sl_start, sl_end, sl_step;
    int split_i, split_n;                /* part i of an equal Split in n (n = 0: sizes given) */
    float pad_value;      /* Pad constant */
    int pad_mode_constant;
    float cos_value;      /* ConstantOfShape value */
    int cos_is_int;
};

struct dlc_graph {
    struct dlc_tensor *t;
    int n_t, cap_t;
    struct dlc_node *nodes;
    int n_nodes, cap_nodes;
    int input, output; /* graph input / output tensor */
    int64_t opset;
    char *producer_name;
    struct dlc_float_prep *fprep; /* the float reference's threads (float_exec.c), or NULL */
};

void dlc_graph_free(struct dlc_graph *g);
int dlc_tensor_add(struct dlc_graph *g, const char *name); /* index, DLASIM_ERR_NOMEM */
int dlc_tensor_find(const struct dlc_graph *g, const char *name); /* index, -1: none */
int dlc_node_add(struct dlc_graph *g); /* zeroed node with defaults: index, DLASIM_ERR_NOMEM */

/* A tensor's NCHW-free "cube": C, H, W of a rank-4 (N=1) tensor; a rank-2
 * [1, K] or rank-1 [K] tensor is K x 1 x 1. */
void dlc_cube_of(const struct dlc_tensor *t, int64_t *c, int64_t *h, int64_t *w);

/* Shape inference and graph passes (graph.c): 0, DLASIM_ERR_UNSUPPORTED or
 * DLASIM_ERR_NOMEM, with err set. */
int dlc_graph_prepare(struct dlc_graph *g, char *err, size_t errlen);

/* Float execution (float_exec.c): run the graph on one input (NCHW float,
 * g->t[g->input].n values).  vals[i] receives a malloc'ed array for every
 * tensor i that is computed (constants point at their data); free with
 * dlc_vals_free.  Buffers already in vals (from a run of the same graph)
 * are reused.  observe (optional) is called for every node output. */
typedef void (*dlc_observe_fn)(void *ctx, int tensor, const float *v, int64_t n);
int dlc_float_run(const struct dlc_graph *g, const float *input, float **vals,
                  dlc_observe_fn observe, void *ctx, char *err, size_t errlen);
void dlc_vals_free(const struct dlc_graph *g, float **vals);
/* The float reference's worker team, kept with the graph (its model) so that
 * no layer creates threads (the team itself is made by the first float
 * layer that runs): 0, or DLASIM_ERR_NOMEM.  Without it (graphs
 * never prepared for it) each matrix product starts its own threads.
 * Freed by dlc_float_unprepare (dlc_graph_free calls it). */
int dlc_float_prepare(struct dlc_graph *g);
void dlc_float_unprepare(struct dlc_graph *g);

/* Bounds on one float run (0: none). */
struct dlc_float_limits {
    uint64_t max_bytes; /* float tensors alive at once */
    uint64_t max_work;  /* one node's dlc_node_work */
};
/* dlc_float_run that keeps only what is still to be read (and the output):
 * a tensor is freed once its last reader ran, so calibration holds the
 * live set, not every intermediate; a node beyond a limit is a negative
 * status with a message naming it.  vals as for dlc_float_run. */
int dlc_float_stream(const struct dlc_graph *g, const float *input, float **vals,
                     const struct dlc_float_limits *lim, dlc_observe_fn observe, void *ctx,
                     char *err, size_t errlen);
/* Buffers a stream released, kept for the next tensors and the next input
 * of the same graph (calibration over many inputs then allocates and
 * faults in its pages once, as dlc_float_run does).  At most max buffers;
 * with a max_bytes limit a stream that finds none large enough frees them
 * all before allocating, so the spares never add to a limited live set. */
struct dlc_float_pool {
    float **buf;
    int64_t *cap; /* floats each buffer holds */
    int n, max;
};
int dlc_float_pool_init(struct dlc_float_pool *p, const struct dlc_graph *g);
/* The computed tensors of vals (a finished stream) into the pool; vals
 * cleared as dlc_vals_free does. */
void dlc_float_pool_keep(struct dlc_float_pool *p, const struct dlc_graph *g, float **vals);
void dlc_float_pool_free(struct dlc_float_pool *p);
/* dlc_float_stream with its buffers taken from and released to pool. */
int dlc_float_stream_pooled(const struct dlc_graph *g, const float *input, float **vals,
                            const struct dlc_float_limits *lim, struct dlc_float_pool *pool,
                            dlc_observe_fn observe, void *ctx, char *err, size_t errlen);
/* Float multiply-adds (or element operations) of one node for one input. */
uint64_t dlc_node_work(const struct dlc_graph *g, const struct dlc_node *nd);
/* One node in float (used by the quantized runner for host-CPU nodes). */
int dlc_float_node(const struct dlc_graph *g, const struct dlc_node *nd, float **vals,
                   char *err, size_t errlen);

#endif
