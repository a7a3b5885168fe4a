/*
 * Internals of the ONNX compiler shared by its files (src/compiler/).
 */
#ifndef DLASIM_COMPILER_INT_H
#define DLASIM_COMPILER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/ir.h"
#include "dlasim/compiler.h"
#include "dlasim/conv.h"
#include "dlasim/runtime.h"

/* Error convention of the whole compiler: functions that can fail return 0
 * or a negative dlasim_status and format a message into err; messages about
 * a node name it and its op (dlc_node_errf, graph.c). */
int dlc_node_errf(char *err, size_t errlen, int status, const struct dlc_node *nd,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* fold.c: constant folding (graph.c runs it on each node before shaping) */
int dlc_foldable(const struct dlc_graph *g, const struct dlc_node *nd);
int dlc_fold(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen);
/* Slice (and Split parts): per-axis start, step and element count */
int dlc_slice_params(const struct dlc_graph *g, const struct dlc_node *nd, int64_t *start,
                     int64_t *step, int64_t *count, char *err, size_t errlen);
void dlc_slice_bounds(int64_t len, int64_t step, int64_t *start, int64_t *end);
int64_t dlc_slice_count(int64_t start, int64_t end, int64_t step);
/* qdq.c: pre-quantized models.  A DequantizeLinear of constants becomes a
 * float constant (int8 weights keep their per-channel scales); the
 * QuantizeLinear -> DequantizeLinear pair on an activation becomes a no-op
 * and the activation keeps the model's scale (or a refusal naming the node). */
int dlc_fold_dequantize(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen);
int dlc_fold_quantize(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen);
int dlc_qdq_node(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen);
int dlc_is_qdq_node(const struct dlc_graph *g, const struct dlc_node *nd);
int dlc_qdq_pools_as_conv(struct dlc_graph *g); /* pre-quantized average pools (qdq.c) */
/* lower_conv.c: the model's own per-output-channel weight scales for a
 * Conv / Gemm / MatMul (NULL: the compiler chooses them); *n is 1 (one for
 * every channel) or the channel count */
const float *dlc_given_wscale(const struct dlc_graph *g, const struct dlc_node *nd, int64_t *n);
/* graph.c: the output shape of one node (its inputs shaped) */
int dlc_shape_node(struct dlc_graph *g, struct dlc_node *nd, char *err, size_t errlen);

/* onnx_read.c: 0, DLASIM_ERR_PARSE (the file or something in it refused) or
 * DLASIM_ERR_NOMEM */
int dlc_onnx_read(const void *buf, size_t len, struct dlc_graph *g, char *err, size_t errlen);

/* Where a tensor lives in device memory: a feature cube (int8). */
struct dlc_buf {
    int16_t addr_index; /* in the model's address list, -1 = not materialized */
    uint32_t c, h, w;
    uint32_t line, surf, size;
    uint32_t offset;    /* bytes into the buffer (a Concat input placed in its output) */
};

enum dlc_engine { DLC_ENG_CONV, DLC_ENG_PDP, DLC_ENG_SDP, DLC_ENG_CDP, DLC_ENG_CPU, DLC_ENG_VIEW,
                  DLC_ENG_PLACED };

/* One lowered layer: a node (with the nodes fused into it). */
struct dlc_layer {
    int node;           /* the main node */
    int n_fused;        /* nodes fused after it (bias, activation) */
    int fused[4];
    int in_tensor;      /* its input as stored (after views) */
    int out_tensor;     /* the tensor it writes */
    enum dlc_engine engine;
    char why[400];      /* CPU: why not on the hardware */
    /* CONV: quantization */
    float in_scale, out_scale;
    int in_zero, out_zero; /* CONV: int8 codes of 0 (affine activations, ir.h `zero`) */
    uint32_t mul_shift, alu_shift, cacc_trunc;
    int relu;
    int prelu;          /* a LeakyRelu / PRelu fused (node index in fused[]) */
    float clip_hi;      /* relu6 and the like: upper clip (folded into saturation) */
    uint64_t macs;
    int n_hw_ops;
    int ring_restart;   /* CBUF weight-ring restart convolutions run before it (count) */
    int blocks;         /* CONV: channel blocks (groups of a grouped convolution) */
    int pool;           /* CONV: a pooling fused (PDP on the fly; node index in fused[] + 1) */
    /* CONV: channels whose bias dominates (lower_conv.c record_bias_dominance):
     * how many, and the largest such bias with its channel's input swing */
    int flat_channels;
    float flat_bias, flat_swing;
    int bias_saturates; /* CONV: a bias beyond 32 bits even at CACC truncation 31 */
    /* CONV: weights beyond the CBUF weight banks, streamed by CDMA one kernel
     * group at a time (dlasim_conv_weight_mode): groups, bytes, mode */
    int streamed_groups;
    uint64_t streamed_bytes;
    int weight_mode;
    double req_err;     /* CONV: largest relative error of a requantization multiplier
                           (int16 >> shift against s_in * s_w[k] / s_out) */
    int wcodes;         /* CONV: the model's own int8 weight codes (pre-quantized) */
    int req2;           /* CONV: requantization in two stages, X1 (BS) then X2 (BN) */
    uint32_t mul2_shift, alu2_shift; /* CONV, req2: the X2 stage's shifts */
    /* CONV: a residual Add fused (node index in fused[] + 1; lower_conv.c
     * residual_fusable): X2 (BN) adds the other operand, read per element,
     * shifted left by res_shift, before the ReLU; X1 (BS) requantizes to
     * res_scale (2^-res_shift operand steps), the output converter to the
     * output's scale (res_cvt_scale >> res_cvt_shift) */
    int residual;
    int res_pre;        /* the tensor the Add reads from the convolution */
    int res_tensor;     /* the other operand, as stored */
    uint32_t res_shift;
    double res_scale;
    int16_t res_cvt_scale;
    uint32_t res_cvt_shift;
    /* statistics */
    uint64_t stat_n, stat_sat, stat_runs;
    double stat_sig, stat_noise;
    int stat_c;         /* channels of ch_range */
    float *ch_range;    /* per channel: INT8 min, max, float min, max (dequantized) */
};

struct dlc_step {
    int cpu_layer;               /* >= 0: a host-CPU layer; else a hardware network */
    struct dlasim_rt_op *ops;
    uint16_t n_ops;
    int16_t op_head[DLASIM_RT_OP_NUM];
    struct dlasim_rt_lut *luts; /* LUTs of the network's CDP operations */
    uint16_t n_luts;
    int *op_layer;               /* per operation: the layer that emitted it */
    struct dlasim_rt_prepared *prep; /* its programming, kept by the first run (fw_prep.c) */
};

struct dlc_blob {
    int16_t addr_index;
    uint8_t *data;
    size_t len;
};

struct dlc_calib {
    double *amax;      /* per tensor */
    uint32_t *hist;    /* per tensor, DLC_HIST_BINS bins of |x| over [0, amax] */
};
#define DLC_HIST_BINS 2048
#define DLC_RESERVED_ADDRS 5

struct dlasim_model {
    struct dlc_graph g;
    int calibrated, compiled;
    char config[32];
    struct dlasim_conv_hw hw;
    int sdp_lut;           /* the configuration has the SDP LUT (NVDLA_SDP_LUT_ENABLE) */
    int reset_each_run;    /* reset the device before each inference (lower_conv.c dlc_separate_banks) */
    struct dlc_buf *buf;   /* per tensor */
    int *store;            /* per tensor: the tensor whose buffer holds it (views) */
    struct dlc_layer *layers;
    int n_layers;
    struct dlc_step *steps;
    int n_steps;
    struct dlc_blob *blobs;
    int n_blobs;
    uint64_t *addrs;
    int n_addrs, cap_addrs;
    uint64_t next_addr;
    uint64_t mem_tag;      /* this compilation's tag for a device holding its weights (sim/core/mem_tag.h) */
    int stats;
    unsigned stats_left;
    float **fvals;         /* float values per tensor (stats and CPU layers) */
    uint8_t *stage;        /* a tensor's device bytes, packed before written (model.c write_tensor) */
    size_t stage_cap;
    char *no_place;        /* per node: Concat not placed (its inputs' scales cannot agree) */
    char *ring_restart;    /* per node: restart CBUF's weight ring before it (lower_conv.c) */
    double min_sqnr_db;    /* precision flags: SQNR threshold (precision.c) */
    double in_sig, in_noise; /* statistics: the model input's own quantization */
    uint64_t in_stat_n;
};

/* lower.c (with the rules of lower_conv.c, lower_pool.c, lower_sdp.c,
 * lower_cdp.c): 0, DLASIM_ERR_UNSUPPORTED or DLASIM_ERR_NOMEM */
int dlc_lower(struct dlasim_model *m, char *err, size_t errlen);
void dlc_lower_free(struct dlasim_model *m);

/* model.c: a growing report string (on out of memory it stops growing) */
struct dlc_sbuf {
    char *s;
    size_t n, cap;
};
void dlc_sb_printf(struct dlc_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* precision.c: a layer's SQNR over its statistics (INFINITY without noise) */
double dlc_layer_sqnr(const struct dlc_layer *L);

/* calib.c: the int8 step of a calibrated range */
float dlc_quant_scale(float amax);

#endif
