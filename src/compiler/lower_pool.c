/*
 * Lowering rule for MaxPool / AveragePool / GlobalAveragePool: PDP from
 * memory (kernel and stride 1..8, padding 0..7, the output line within
 * PDP's line buffer; average pooling only without padding or with
 * count_include_pad); the output keeps the input's scale.  A global
 * pooling wider than 8x8 runs as two poolings over tiles.  A pooling that
 * is the only reader of a convolution's output runs on the fly instead,
 * in the convolution's hardware layer (lower_conv.c fuse_pool, with
 * dlc_pool_refusal and dlc_pool_op below).
 */
#include <stdio.h>
#include <string.h>

#include "compiler/lower_int.h"

static int pool_applies(const struct dlasim_model *m, const struct dlc_node *nd)
{
    (void)m;
    return nd->op == DLC_OP_MAXPOOL || nd->op == DLC_OP_AVGPOOL || nd->op == DLC_OP_GAP;
}

/* PDP output line buffer (ref: src/sim/nvdla/pdp.c pdp_lbuf_max_width). */
static uint32_t pdp_max_width(uint32_t kh, uint32_t sh)
{
    uint32_t lines = sh >= kh ? 1 : sh == 1 ? kh : sh == 2 ? (kh + 1) / 2 : sh == 3 ? (kh <= 6 ? 2 : 3) : 2;
    uint32_t merge = lines == 1 ? 8 : lines == 2 ? 4 : lines <= 4 ? 2 : 1;
    return 16 * merge;
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

const char *dlc_pool_refusal(const struct dlasim_model *m, const struct dlc_node *nd, int zero)
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
    if (nd->op != DLC_OP_MAXPOOL && zero) {
        return "average pooling of affine int8 codes (zero point not the middle of its type) "
               "on PDP: its padding and rounding would see the offset (a pre-quantized "
               "average pool runs as a depthwise convolution up to 8x8)";
    }
    return NULL;
}

static const char *pool_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                char *why, size_t n)
{
    (void)why, (void)n;
    if (dlc_layout_differs(m, nd->in[0])) {
        return "its input is a view whose layout differs from the stored cube";
    }
    return dlc_pool_refusal(m, nd, m->g.t[m->store[nd->in[0]]].zero);
}

void dlc_pool_keeps_scale(struct dlc_graph *g, const struct dlc_node *nd, int in)
{
    g->t[nd->out].scale = g->t[in].scale;
    g->t[nd->out].amax = g->t[in].amax;
    g->t[nd->out].zero = g->t[in].zero; /* max commutes with the offset */
}

/* Pooling keeps the scale of its input. */
static void pool_take(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    (void)fused;
    dlc_pool_keeps_scale(g, nd, m->store[nd->in[0]]);
    L->in_scale = L->out_scale = g->t[L->out_tensor].scale;
}

/* One PDP operation to memory, from memory (src_type DLASIM_RT_MEM_MC) or
 * from SDP on the fly (DLASIM_RT_MEM_HW): 0, or DLASIM_ERR_UNSUPPORTED
 * (padding out of range) / DLASIM_ERR_NOMEM. */
static int pdp_op(struct opvec *v, const struct dlc_buf *bx, const struct dlc_buf *by, int mode,
                  int kh, int kw, int sy, int sx, int pt, int pl, uint16_t src_type)
{
    /* right / bottom padding the output size needs (ceil_mode included) */
    int pr = (int)((by->w - 1) * (uint32_t)sx + (uint32_t)kw) - (int)bx->w - pl;
    int pb = (int)((by->h - 1) * (uint32_t)sy + (uint32_t)kh) - (int)bx->h - pt;
    pr = pr < 0 ? 0 : pr;
    pb = pb < 0 ? 0 : pb;
    if (pr > 7 || pb > 7) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    int i = dlc_new_op(v, DLASIM_RT_OP_PDP);
    if (i < 0) {
        return i;
    }
    struct dlasim_rt_op *o = &v->ops[i];
    struct dlasim_rt_pdp_op *p = &o->op.pdp;
    p->partial_in_width_first = (uint16_t)bx->w;
    p->partial_width_first = (uint16_t)by->w;
    p->split_num = 1;
    p->pool_mode = (uint8_t)mode;
    p->pool_width = (uint8_t)(kw - 1), p->pool_height = (uint8_t)(kh - 1);
    p->stride_x = (uint8_t)sx, p->stride_y = (uint8_t)sy;
    p->pad_left = (uint8_t)pl, p->pad_right = (uint8_t)pr;
    p->pad_top = (uint8_t)pt, p->pad_bottom = (uint8_t)pb;
    o->surface.io.src_data = dlc_cube(bx, src_type);
    o->surface.io.dst_data = dlc_cube(by, DLASIM_RT_MEM_MC);
    return 0;
}

/* A global (average) pooling over more than 8x8: tiles into an intermediate
 * cube, then the rest. */
static int global_pool_split(struct dlasim_model *m, struct opvec *v, const struct dlc_buf *bx,
                             const struct dlc_buf *by)
{
    uint32_t th = 1, tw = 1;
    tile_split(bx->h, &th);
    tile_split(bx->w, &tw);
    struct dlc_buf mid;
    dlc_buf_layout(m, bx->c, bx->h / th, bx->w / tw, &mid);
    int a = dlc_add_address(m, mid.size);
    if (a < 0) {
        return a;
    }
    mid.addr_index = (int16_t)a;
    int rc = pdp_op(v, bx, &mid, 0, (int)th, (int)tw, (int)th, (int)tw, 0, 0, DLASIM_RT_MEM_MC);
    return rc ? rc : pdp_op(v, &mid, by, 0, (int)mid.h, (int)mid.w, 1, 1, 0, 0, DLASIM_RT_MEM_MC);
}

int dlc_pool_is_one_op(const struct dlc_node *nd, uint32_t in_h, uint32_t in_w)
{
    return nd->op != DLC_OP_GAP || (in_h <= 8 && in_w <= 8);
}

int dlc_pool_op(struct opvec *v, const struct dlc_node *nd, const struct dlc_buf *bx,
                const struct dlc_buf *by, uint16_t src_type)
{
    int mode = nd->op == DLC_OP_MAXPOOL ? 1 : 0;
    if (nd->op == DLC_OP_GAP) {
        return pdp_op(v, bx, by, mode, (int)bx->h, (int)bx->w, 1, 1, 0, 0, src_type);
    }
    return pdp_op(v, bx, by, mode, nd->kernel[0], nd->kernel[1], nd->stride[0], nd->stride[1],
                  nd->pads[0], nd->pads[1], src_type);
}

static int emit_pdp(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                    size_t errlen)
{
    const struct dlc_node *nd = &m->g.nodes[L->node];
    const struct dlc_buf *bx = dlc_stored_buf(m, L->in_tensor);
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    int rc;
    if (!dlc_pool_is_one_op(nd, bx->h, bx->w)) {
        rc = global_pool_split(m, v, bx, by);
        L->n_hw_ops = 2;
    } else {
        rc = dlc_pool_op(v, nd, bx, by, DLASIM_RT_MEM_MC);
        L->n_hw_ops = 1;
    }
    if (rc == DLASIM_ERR_UNSUPPORTED) {
        return dlc_node_errf(err, errlen, rc, nd,
                             "PDP programming out of range (padding above 7 after ceil_mode)");
    }
    return rc ? dlc_node_errf(err, errlen, rc, nd, "out of memory or operations") : 0;
}

const struct dlc_rule dlc_rule_pool = {
    DLC_ENG_PDP, pool_applies, pool_refusal, pool_take, emit_pdp,
};
