/*
 * Internals of the lowering (src/compiler/lower*.c): the per-op rule table
 * the driver (lower.c) walks, and the helpers the rules share.
 *
 * Error convention (the whole compiler): a function that can fail returns 0
 * or a negative dlasim_status (DLASIM_ERR_NOMEM when memory ran out,
 * DLASIM_ERR_UNSUPPORTED when the hardware or this compiler cannot do it)
 * and formats a message naming the node, its op and the reason
 * (dlc_node_errf); it releases what it allocated on one unwind path.
 */
#ifndef DLASIM_COMPILER_LOWER_INT_H
#define DLASIM_COMPILER_LOWER_INT_H

#include "compiler/compiler_int.h"

/* The operations of the hardware network being built. */
struct opvec {
    struct dlasim_rt_op *ops;
    int *layer; /* per operation: the layer that emitted it */
    int n, cap;
    struct dlasim_rt_lut *luts;
    int n_luts;
};

/* One lowering rule: which nodes it takes, why it would refuse one (NULL =
 * it takes it; the reason becomes the host-CPU layer's), the fusion and
 * scale choices it makes when it takes it, and the operations it emits. */
struct dlc_rule {
    enum dlc_engine engine;
    int (*applies)(const struct dlasim_model *m, const struct dlc_node *nd);
    const char *(*refusal)(const struct dlasim_model *m, const struct dlc_node *nd, char *why,
                           size_t n);
    void (*take)(struct dlasim_model *m, struct dlc_layer *L, char *fused);
    int (*emit)(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                size_t errlen);
};

extern const struct dlc_rule dlc_rule_conv;        /* lower_conv.c: Conv, Gemm, MatMul */
extern const struct dlc_rule dlc_rule_sdp_eltwise; /* lower_sdp.c: Add/Sub/Mul of tensors, Relu */
extern const struct dlc_rule dlc_rule_sdp_affine;  /* lower_sdp.c: BN, op with a constant */
extern const struct dlc_rule dlc_rule_sdp_lut;     /* lower_sdp.c: Sigmoid, Tanh */
extern const struct dlc_rule dlc_rule_cdp_lrn;     /* lower_cdp.c: LRN */
extern const struct dlc_rule dlc_rule_pool;        /* lower_pool.c: pooling */

/* lower.c: device memory, the address list, weight blobs, operations */
#define DLC_DEV_BASE 0x80000000ull
#define DLC_DEV_LIMIT 0xfff00000ull
int dlc_add_address(struct dlasim_model *m, uint64_t size); /* index, or < 0 status */
int dlc_materialize(struct dlasim_model *m, int t);         /* 0, or < 0 status */
/* The packed feature layout of a c x h x w cube (line, surface, size; no
 * address yet: addr_index -1), as dlc_materialize lays tensors out. */
void dlc_buf_layout(const struct dlasim_model *m, uint32_t c, uint32_t h, uint32_t w,
                    struct dlc_buf *b);
int dlc_add_blob(struct dlasim_model *m, size_t len);       /* index, or < 0 status */
int dlc_new_op(struct opvec *v, uint8_t type);              /* index, or < 0 status */
struct dlasim_rt_cube dlc_cube(const struct dlc_buf *b, uint16_t type);
int dlc_only_reader(const struct dlc_graph *g, int t);
int dlc_is_view(enum dlc_op op);
int dlc_per_channel_const(const struct dlc_graph *g, const struct dlc_node *nd, int64_t k,
                          int *act_in, int *const_in);
/* Fuse a Relu that is the only reader of L's output (Add + Relu, affine + Relu). */
void dlc_fuse_relu(struct dlasim_model *m, struct dlc_layer *L, char *fused);
/* The stored cube of tensor t differs from its C, H, W (a view of another layout). */
int dlc_layout_differs(const struct dlasim_model *m, int t);
int16_t dlc_sat16(double v);
int16_t dlc_fit16(double v, uint32_t *shift, int max_shift);

static inline const struct dlc_buf *dlc_stored_buf(const struct dlasim_model *m, int t)
{
    return &m->buf[m->store[t]];
}

/* lower_pool.c: why PDP cannot do pooling node nd (kernel, stride,
 * padding, line buffer; `zero`: its input's int8 code of 0), or NULL; and
 * its one PDP operation from bx to by (a global pooling up to 8x8), from
 * memory (src_type DLASIM_RT_MEM_MC) or from SDP on the fly
 * (DLASIM_RT_MEM_HW): 0, DLASIM_ERR_UNSUPPORTED (padding the output size
 * needs beyond 7) or DLASIM_ERR_NOMEM. */
const char *dlc_pool_refusal(const struct dlasim_model *m, const struct dlc_node *nd, int zero);
/* Pooling node nd is one PDP operation on an in_h x in_w input (a global
 * pooling above 8x8 is two). */
int dlc_pool_is_one_op(const struct dlc_node *nd, uint32_t in_h, uint32_t in_w);
/* Pooling node nd's output takes the scale, range and zero point of tensor `in`. */
void dlc_pool_keeps_scale(struct dlc_graph *g, const struct dlc_node *nd, int in);
int dlc_pool_op(struct opvec *v, const struct dlc_node *nd, const struct dlc_buf *bx,
                const struct dlc_buf *by, uint16_t src_type);

/* lower_conv.c: CBUF banks between convolutions (after all networks are
 * built): 0, 1 when a layer needs a weight-ring restart before it (marked in
 * m->ring_restart; lower again), or < 0 a status. */
int dlc_separate_banks(struct dlasim_model *m, char *err, size_t errlen);

#endif
