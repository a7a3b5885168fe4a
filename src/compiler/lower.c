/*
 * Lowering of a calibrated graph to NVDLA hardware layers, and their
 * planning (pure: no device).  This file is the driver: it walks the
 * nodes, asks the per-op rules (lower_int.h; lower_conv.c, lower_pool.c,
 * lower_sdp.c, lower_cdp.c) in table order whether one takes the node,
 * and otherwise places it as a view, a placed Concat or a host-CPU layer.
 *
 * Layers (one per node, with the nodes fused into it):
 *   Conv / Gemm / MatMul  -> CONV + SDP on the fly (lower_conv.c);
 *   MaxPool / AveragePool / GlobalAveragePool -> PDP (lower_pool.c);
 *   element-wise, affine and LUT functions -> SDP from memory (lower_sdp.c);
 *   LRN -> CDP (lower_cdp.c);
 *   Flatten / Reshape / Squeeze / Unsqueeze / Identity / Dropout -> views:
 *       the same bytes (NCHW order is kept); a hardware layer reading a view
 *       checks the stored cube is what it needs;
 *   a channel Concat whose producers can write into it -> placed;
 *   everything else -> the host CPU, as NVIDIA's runtime runs EMU tasks:
 *       dequantize the inputs, compute in float, quantize the output.
 * Tensors are int8 feature cubes (surfaces of Atomic-M channels) in device
 * memory, one buffer per stored tensor, never reused within an inference.
 * Hardware layers between two CPU layers form one network for the
 * firmware-equivalent executor (dlasim_rt_execute); its operations run one
 * after the other: each layer's first operation waits for the previous
 * layer's last one to complete (OP_COMPLETED), and a CONV waits for its SDP
 * to be enabled (consumer before producer, as NVIDIA's compiler emits).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/status.h"
#include "compiler/lower_int.h"

/* Rules in the order they are asked: an Add of two tensors is the
 * element-wise rule's before the affine one's. */
static const struct dlc_rule *const rules[] = {
    &dlc_rule_conv, &dlc_rule_sdp_eltwise, &dlc_rule_sdp_affine,
    &dlc_rule_sdp_lut, &dlc_rule_cdp_lrn, &dlc_rule_pool,
};

/* ---- device memory and the address list ---------------------------------------- */

int dlc_add_address(struct dlasim_model *m, uint64_t size)
{
    if (m->n_addrs == m->cap_addrs) {
        int cap = m->cap_addrs ? 2 * m->cap_addrs : 64;
        if (cap > 32767) {
            return DLASIM_ERR_UNSUPPORTED; /* the address list has int16 indices */
        }
        uint64_t *a = realloc(m->addrs, (size_t)cap * sizeof *a);
        if (!a) {
            return DLASIM_ERR_NOMEM;
        }
        m->addrs = a;
        m->cap_addrs = cap;
    }
    uint64_t at = (m->next_addr + 255) & ~255ull;
    if (at + size > DLC_DEV_LIMIT) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    m->next_addr = at + size;
    m->addrs[m->n_addrs] = at;
    return m->n_addrs++;
}

void dlc_buf_layout(const struct dlasim_model *m, uint32_t c, uint32_t h, uint32_t w,
                    struct dlc_buf *b)
{
    memset(b, 0, sizeof *b);
    b->c = c, b->h = h, b->w = w;
    b->line = w * m->hw.atom_m;
    b->surf = b->line * h;
    b->size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, w, h, c, 0, 0);
    b->addr_index = -1;
}

int dlc_materialize(struct dlasim_model *m, int t)
{
    struct dlc_buf *b = &m->buf[t];
    if (b->addr_index >= 0) {
        return 0;
    }
    int64_t c, h, w;
    dlc_cube_of(&m->g.t[t], &c, &h, &w);
    if (c > 65535 || h > 65535 || w > 65535) {
        return DLASIM_ERR_UNSUPPORTED;
    }
    dlc_buf_layout(m, (uint32_t)c, (uint32_t)h, (uint32_t)w, b);
    int a = dlc_add_address(m, b->size);
    if (a < 0) {
        return a;
    }
    b->addr_index = (int16_t)a;
    return 0;
}

/* A layer's output in device memory, or the error naming its node. */
static int place_output(struct dlasim_model *m, const struct dlc_node *nd, int t, char *err,
                        size_t errlen)
{
    int rc = dlc_materialize(m, t);
    if (rc == DLASIM_ERR_UNSUPPORTED) { /* say which dimension, not just "does not fit" */
        int64_t c, h, w;
        dlc_cube_of(&m->g.t[t], &c, &h, &w);
        return dlc_node_errf(err, errlen, rc, nd, "output '%s' is %lld x %lld x %lld (C x H x W): "
                             "an NVDLA cube has at most 65535 in each dimension", m->g.t[t].name,
                             (long long)c, (long long)h, (long long)w);
    }
    return rc ? dlc_node_errf(err, errlen, rc, nd, "output '%s' does not fit device memory%s",
                              m->g.t[t].name, rc == DLASIM_ERR_NOMEM ? " (out of host memory)" : "")
              : 0;
}

int dlc_add_blob(struct dlasim_model *m, size_t len)
{
    struct dlc_blob *nb = realloc(m->blobs, (size_t)(m->n_blobs + 1) * sizeof *nb);
    if (!nb) {
        return DLASIM_ERR_NOMEM;
    }
    m->blobs = nb;
    struct dlc_blob *b = &nb[m->n_blobs];
    b->len = len;
    b->data = calloc(len ? len : 1, 1);
    if (!b->data) {
        return DLASIM_ERR_NOMEM;
    }
    int a = dlc_add_address(m, len);
    if (a < 0) {
        free(b->data);
        return a;
    }
    b->addr_index = (int16_t)a;
    return m->n_blobs++;
}

int dlc_new_op(struct opvec *v, uint8_t type)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 32;
        if (cap > 30000) {
            return DLASIM_ERR_UNSUPPORTED; /* a network's op count is 16-bit */
        }
        struct dlasim_rt_op *o = realloc(v->ops, (size_t)cap * sizeof *o);
        if (!o) {
            return DLASIM_ERR_NOMEM;
        }
        v->ops = o;
        int *l = realloc(v->layer, (size_t)cap * sizeof *l);
        if (!l) {
            return DLASIM_ERR_NOMEM;
        }
        v->layer = l;
        v->cap = cap;
    }
    struct dlasim_rt_op *op = &v->ops[v->n];
    memset(op, 0, sizeof *op);
    op->op_type = type;
    for (int i = 0; i < DLASIM_RT_OP_NUM; i++) {
        op->consumers[i].index = -1;
    }
    op->fused_parent.index = -1;
    v->layer[v->n] = -1;
    return v->n++;
}

struct dlasim_rt_cube dlc_cube(const struct dlc_buf *b, uint16_t type)
{
    struct dlasim_rt_cube q;
    memset(&q, 0, sizeof q);
    q.type = type;
    q.address = type == DLASIM_RT_MEM_HW ? -1 : b->addr_index;
    q.size = b->size;
    q.width = (uint16_t)b->w, q.height = (uint16_t)b->h, q.channel = (uint16_t)b->c;
    q.line_stride = b->line;
    q.surf_stride = b->surf;
    q.offset = type == DLASIM_RT_MEM_HW ? 0 : b->offset;
    return q;
}

/* ---- helpers the rules share ------------------------------------------------------- */

int16_t dlc_sat16(double v)
{
    v = v < 0 ? v - 0.5 : v + 0.5;
    return (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : (int)v);
}

int16_t dlc_fit16(double v, uint32_t *shift, int max_shift)
{
    int sh = v > 0 ? (int)floor(log2(32767.0 / v)) : 0;
    sh = sh < 0 ? 0 : sh > max_shift ? max_shift : sh;
    *shift = (uint32_t)sh;
    return dlc_sat16(v * ldexp(1.0, sh));
}

int dlc_is_view(enum dlc_op op)
{
    return op == DLC_OP_FLATTEN || op == DLC_OP_RESHAPE || op == DLC_OP_SQUEEZE ||
           op == DLC_OP_UNSQUEEZE || op == DLC_OP_IDENTITY || op == DLC_OP_DROPOUT;
}

/* The only reader of tensor t (node index), or -1. */
int dlc_only_reader(const struct dlc_graph *g, int t)
{
    if (g->t[t].consumers != 1 || t == g->output) {
        return -1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead) {
            continue;
        }
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            if (g->nodes[i].in[k] == t) {
                return i;
            }
        }
    }
    return -1;
}

/* A constant of one value per channel (or one value) usable as a bias. */
int dlc_per_channel_const(const struct dlc_graph *g, const struct dlc_node *nd, int64_t k,
                          int *act_in, int *const_in)
{
    if (nd->n_in != 2) {
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        const struct dlc_tensor *c = &g->t[nd->in[i]];
        const struct dlc_tensor *a = &g->t[nd->in[1 - i]];
        if (!c->is_const || a->is_const) {
            continue;
        }
        int ok = c->n == 1 || (c->n == k && (c->rank <= 1 || (c->rank >= 3 && c->dims[c->rank - 1] == 1 &&
                                                               c->dims[c->rank - 2] == 1) ||
                                             (c->rank == 2 && a->rank == 2)));
        if (ok && (nd->op != DLC_OP_SUB || i == 1)) {
            *act_in = 1 - i;
            *const_in = i;
            return 1;
        }
    }
    return 0;
}

void dlc_fuse_relu(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    const struct dlc_graph *g = &m->g;
    int r = dlc_only_reader(g, L->out_tensor);
    if (r >= 0 && g->nodes[r].op == DLC_OP_RELU) {
        L->relu = 1;
        L->fused[L->n_fused++] = r;
        fused[r] = 1;
        L->out_tensor = g->nodes[r].out;
    }
}

int dlc_layout_differs(const struct dlasim_model *m, int t)
{
    int64_t c, h, w;
    dlc_cube_of(&m->g.t[t], &c, &h, &w);
    const struct dlc_buf *b = dlc_stored_buf(m, t);
    return b->c != c || b->h != h || b->w != w;
}

/* ---- sequencing within one network ------------------------------------------------- */

static void depend(struct dlasim_rt_op *ops, int from, int slot, int to, uint8_t event)
{
    ops[from].consumers[slot] = (struct dlasim_rt_consumer){ (int16_t)to, event };
    ops[to].dependency_count++;
}

/* Operation `child` fed on the fly by `parent` (CONV -> SDP, SDP -> PDP):
 * it is programmed after its parent and enabled before it, as the
 * hardware wants a consumer listening before its producer starts
 * (ref: scheduler.c, fused_parent with OP_ENABLED). */
static void fuse_ops(struct dlasim_rt_op *ops, int parent, int child)
{
    depend(ops, parent, ops[child].op_type, child, DLASIM_RT_EVENT_OP_PROGRAMMED);
    ops[child].fused_parent = (struct dlasim_rt_consumer){ (int16_t)parent, DLASIM_RT_EVENT_OP_ENABLED };
    ops[parent].dependency_count++;
}

/* Bytes [lo, hi) of address-list entry `a` an operation reads or writes. */
struct mem_span {
    int16_t a;
    uint64_t lo, hi;
    int write;
};

/* A feature cube's bytes from its offset: the last surface's last line
 * ends at (surfaces - 1) * surf_stride + (height - 1) * line_stride +
 * width * atom (spec: memory layout of feature data); `size` where the
 * strides are not set. */
static uint64_t feature_extent(const struct dlasim_rt_cube *c, unsigned atom, unsigned precision)
{
    unsigned per_surface = atom / (precision == DLASIM_RT_INT8 ? 1u : 2u);
    if (!c->surf_stride || !c->line_stride || !per_surface) {
        return c->size;
    }
    uint64_t surfaces = ((uint64_t)c->channel + per_surface - 1) / per_surface;
    if (!surfaces || !c->height || !c->width) {
        return 0;
    }
    return (surfaces - 1) * c->surf_stride + (uint64_t)(c->height - 1) * c->line_stride +
           (uint64_t)c->width * atom;
}

static void add_span(struct mem_span *s, int *n, const struct dlasim_rt_cube *c, uint64_t len,
                     int write)
{
    if (c->type == DLASIM_RT_MEM_HW || c->address < 0) {
        return;
    }
    s[*n] = (struct mem_span){ c->address, c->offset, c->offset + len, write };
    (*n)++;
}

/* The memory a CONV + SDP pair touches: at most 8 spans. */
static int pair_spans(const struct dlasim_rt_op *conv, const struct dlasim_rt_op *sdp,
                      unsigned atom, struct mem_span *s)
{
    int n = 0;
    const struct dlasim_rt_conv_surface *cs = &conv->surface.conv;
    const struct dlasim_rt_sdp_surface *ss = &sdp->surface.sdp;
    const struct dlasim_rt_cube *in = &cs->src_data, *out = &ss->dst_data;
    add_span(s, &n, in, feature_extent(in, atom, conv->op.conv.in_precision), 0);
    add_span(s, &n, &cs->weight_data, cs->weight_data.size, 0);
    add_span(s, &n, &cs->wmb_data, cs->wmb_data.size, 0);
    add_span(s, &n, &cs->wgs_data, cs->wgs_data.size, 0);
    add_span(s, &n, &ss->x1_data, ss->x1_data.size, 0);
    add_span(s, &n, &ss->x2_data, ss->x2_data.size, 0);
    add_span(s, &n, &ss->y_data, ss->y_data.size, 0);
    add_span(s, &n, out, feature_extent(out, atom, sdp->op.sdp.dst_precision), 1);
    return n;
}

/* Whether one pair writes memory the other reads or writes.  Each tensor
 * has an address-list entry of its own (dlc_add_address never reuses
 * memory), so different entries never alias. */
static int pairs_conflict(const struct dlasim_rt_op *a, const struct dlasim_rt_op *b, unsigned atom)
{
    struct mem_span sa[8], sb[8];
    int na = pair_spans(a, a + 1, atom, sa), nb = pair_spans(b, b + 1, atom, sb);
    for (int i = 0; i < na; i++) {
        for (int j = 0; j < nb; j++) {
            if ((sa[i].write || sb[j].write) && sa[i].a == sb[j].a && sa[i].lo < sb[j].hi &&
                sb[j].lo < sa[i].hi) {
                return 1;
            }
        }
    }
    return 0;
}

/*
 * ops[first..n): units of CONV+SDP pairs (CONV+SDP+PDP when SDP sends its
 * output to PDP on the fly) and single PDP operations, run in order: each
 * engine's operations in a chain, each unit waiting for the one before it
 * to complete.  Between two CONV+SDP pairs that share no memory one writes
 * (the channel blocks of a depthwise convolution, a convolution's bands
 * or output-channel blocks) the chains wait only for the earlier pair to be
 * programmed (ref: NVIDIA's loadables link each engine's operations by
 * OP_PROGRAMMED and data by OP_COMPLETED): the firmware enables the next
 * pair in the other register group while one runs, and the hardware starts
 * it as the first ends.  It cannot start before the one before it (an
 * engine runs its groups in order), and the firmware programs a group only
 * once the operation it held completed, so a pair two back has finished
 * its writes: the neighbour is the only one to check.
 */
static void link_network(struct dlasim_rt_op *ops, int n, int16_t *head, unsigned atom)
{
    int last[DLASIM_RT_OP_NUM], prev_tail = -1, prev_pair = -1;
    for (int t = 0; t < DLASIM_RT_OP_NUM; t++) {
        last[t] = -1;
        head[t] = -1;
    }
    for (int i = 0; i < n;) {
        int pair = ops[i].op_type == DLASIM_RT_OP_CONV;
        int pooled = pair && i + 2 < n && ops[i + 2].op_type == DLASIM_RT_OP_PDP &&
                     ops[i + 2].surface.io.src_data.type == DLASIM_RT_MEM_HW;
        int unit_n = pooled ? 3 : pair ? 2 : 1;
        int hd = i + unit_n - 1, tail = hd; /* the last enabled first */
        const int plain_pair = pair && !pooled;
        const int apart = plain_pair && prev_pair >= 0 &&
                          !pairs_conflict(&ops[prev_pair], &ops[i], atom);
        const uint8_t chained = apart ? DLASIM_RT_EVENT_OP_PROGRAMMED : DLASIM_RT_EVENT_OP_COMPLETED;
        if (pair) {
            fuse_ops(ops, i, i + 1);
        }
        if (pooled) {
            fuse_ops(ops, i + 1, i + 2);
        }
        for (int k = i; k < i + unit_n; k++) { /* each engine's chain, in order */
            int t = ops[k].op_type;
            if (last[t] >= 0) {
                depend(ops, last[t], t, k, chained);
            } else {
                head[t] = (int16_t)k;
            }
            last[t] = k;
        }
        if (prev_tail >= 0) { /* the previous layer's output is this one's input */
            int t = ops[hd].op_type;
            if (ops[prev_tail].consumers[t].index == -1) {
                depend(ops, prev_tail, t, hd, DLASIM_RT_EVENT_OP_COMPLETED);
            }
        }
        prev_tail = tail;
        prev_pair = plain_pair ? i : -1;
        i += unit_n;
    }
}

static int close_network(struct dlasim_model *m, struct opvec *v)
{
    if (v->n == 0) {
        free(v->luts);
        v->luts = NULL;
        v->n_luts = 0;
        return 0;
    }
    struct dlc_step *s = realloc(m->steps, (size_t)(m->n_steps + 1) * sizeof *s);
    if (!s) {
        return DLASIM_ERR_NOMEM;
    }
    m->steps = s;
    s = &m->steps[m->n_steps++];
    memset(s, 0, sizeof *s);
    s->cpu_layer = -1;
    s->ops = v->ops;
    s->n_ops = (uint16_t)v->n;
    s->luts = v->luts;
    s->n_luts = (uint16_t)v->n_luts;
    s->op_layer = v->layer;
    link_network(s->ops, v->n, s->op_head, m->hw.atom_m);
    memset(v, 0, sizeof *v);
    return 0;
}

static int add_cpu_step(struct dlasim_model *m, int layer)
{
    struct dlc_step *s = realloc(m->steps, (size_t)(m->n_steps + 1) * sizeof *s);
    if (!s) {
        return DLASIM_ERR_NOMEM;
    }
    m->steps = s;
    s = &m->steps[m->n_steps++];
    memset(s, 0, sizeof *s);
    s->cpu_layer = layer;
    return 0;
}

/* ---- Concat by output placement ------------------------------------------------------- */

/* Producers that choose their output scale (so a Concat input can take the
 * Concat's): not pooling (PDP keeps its input's scale), not a view, not a
 * standalone Relu. */
static int rescaling_producer(const struct dlc_graph *g, int t)
{
    int p = g->t[t].producer;
    if (p < 0) {
        return 0;
    }
    enum dlc_op op = g->nodes[p].op;
    if (op == DLC_OP_RELU || op == DLC_OP_CLIP || op == DLC_OP_LEAKYRELU || op == DLC_OP_PRELU ||
        ((op == DLC_OP_ADD || op == DLC_OP_SUB || op == DLC_OP_MUL) &&
         (g->t[g->nodes[p].in[0]].is_const || g->t[g->nodes[p].in[1]].is_const))) {
        /* fused after a convolution (or a CPU layer) when its input comes from one */
        int in = g->nodes[p].in[0];
        if (g->t[in].is_const && g->nodes[p].n_in > 1) {
            in = g->nodes[p].in[1];
        }
        return g->t[in].consumers == 1 && rescaling_producer(g, in);
    }
    return !dlc_is_view(op) && op != DLC_OP_SLICE && op != DLC_OP_MAXPOOL && op != DLC_OP_AVGPOOL && op != DLC_OP_GAP &&
           op != DLC_OP_CONCAT;
}

/* Tensor t is the output of a Clip(0, max) that a convolution implements by
 * saturating at t's own scale (lower_conv.c fuse_after): its int8 range ends
 * at 127 * scale, which is where the clip is.  Giving t another (larger)
 * scale would move the clip, so such a tensor keeps its scale. */
static int clips_by_saturation(const struct dlc_graph *g, int t)
{
    int p = g->t[t].producer;
    return p >= 0 && g->nodes[p].op == DLC_OP_CLIP && g->nodes[p].clip_max < 3e38f;
}

/* A channel Concat whose inputs can be written straight into its output:
 * every input but the last a whole number of Atomic-M surfaces, none the
 * model's input or output, each produced by a layer that sets its own
 * scale.  The inputs then share the output's buffer (at their surface
 * offset) and scale (the largest range of them all).  1 placed, 0 not,
 * < 0 a status (its output does not fit). */
static int place_concat(struct dlasim_model *m, int node)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[node];
    const struct dlc_tensor *y = &g->t[nd->out];
    if (y->rank != 4 || nd->axis != 1 || m->no_place[node]) {
        return 0;
    }
    uint32_t c0 = 0;
    float amax = y->amax;
    for (int i = 0; i < nd->n_in; i++) {
        int t = nd->in[i];
        const struct dlc_tensor *x = &g->t[t];
        for (int j = 0; j < i; j++) {
            if (nd->in[j] == t) {
                return 0;
            }
        }
        if (x->zero != y->zero) { /* affine codes (pre-quantized): one zero point only */
            return 0;
        }
        if (x->is_const || t == g->input || t == g->output || m->buf[t].addr_index >= 0 ||
            !rescaling_producer(g, t) || (i + 1 < nd->n_in && x->dims[1] % m->hw.atom_m)) {
            return 0;
        }
        amax = x->amax > amax ? x->amax : amax;
        c0 += (uint32_t)x->dims[1];
    }
    /* the shared scale is the largest range: an input whose Clip is its
     * saturation point cannot take it (issue 22: the clip would vanish);
     * the Concat then runs on the CPU, each input at its own scale */
    for (int i = 0; i < nd->n_in; i++) {
        if (clips_by_saturation(g, nd->in[i]) && amax > g->t[nd->in[i]].amax) {
            return 0;
        }
    }
    int rc = dlc_materialize(m, nd->out);
    if (rc) {
        return rc;
    }
    const struct dlc_buf *by = &m->buf[nd->out];
    c0 = 0;
    for (int i = 0; i < nd->n_in; i++) {
        int t = nd->in[i];
        struct dlc_buf *b = &m->buf[t];
        *b = *by;
        b->c = (uint32_t)g->t[t].dims[1];
        b->offset = c0 / m->hw.atom_m * by->surf;
        b->size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, b->w, b->h, b->c, 0, 0);
        g->t[t].amax = amax;
        g->t[t].scale = dlc_quant_scale(amax);
        c0 += b->c;
    }
    g->t[nd->out].amax = amax;
    g->t[nd->out].scale = dlc_quant_scale(amax);
    return 1;
}

/* ---- the pass ------------------------------------------------------------------------- */

static const char *cpu_reason(const struct dlc_node *nd)
{
    switch (nd->op) {
    case DLC_OP_SOFTMAX: return "Softmax has no NVDLA engine (NVIDIA's runtime runs it as an EMU task)";
    case DLC_OP_LEAKYRELU:
    case DLC_OP_PRELU:
    case DLC_OP_CLIP: return "activation not after a convolution (no standalone SDP lowering yet)";
    case DLC_OP_ADD:
    case DLC_OP_SUB:
    case DLC_OP_MUL: return "element-wise operation with a constant not after a convolution";
    case DLC_OP_CONCAT: return "concatenation not placed by output placement in this version";
    case DLC_OP_TRANSPOSE: return "changes the data layout";
    case DLC_OP_RESIZE: return "Resize has no hardware lowering in this version";
    case DLC_OP_SLICE: return "a slice that is not along channels at a multiple of Atomic-M";
    case DLC_OP_DIV: return "division by a tensor has no NVDLA engine";
    case DLC_OP_PAD: return "explicit padding not folded into a following convolution";
    case DLC_OP_BN: return "BatchNormalization not after a convolution";
    default: return "no hardware lowering";
    }
}

static struct dlc_layer *new_layer(struct dlasim_model *m, int node)
{
    struct dlc_layer *L = &m->layers[m->n_layers++];
    memset(L, 0, sizeof *L);
    L->node = node;
    L->in_tensor = m->g.nodes[node].in[0];
    L->out_tensor = m->g.nodes[node].out;
    return L;
}

/* A tag for this compilation's weights in a device's memory (sim/core/mem_tag.h):
 * the model's address and the time, mixed, so a model compiled again, or a
 * new model at a freed one's address, never finds an older load's tag. */
static uint64_t fresh_tag(const void *m)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)(uintptr_t)m ^ ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u; /* splitmix64's finaliser */
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x ? x : 1; /* 0 is "nobody" */
}

void dlc_lower_free(struct dlasim_model *m)
{
    for (int i = 0; i < m->n_steps; i++) {
        free(m->steps[i].ops);
        free(m->steps[i].luts);
        free(m->steps[i].op_layer);
        dlasim_rt_prepared_free(m->steps[i].prep);
    }
    for (int i = 0; i < m->n_blobs; i++) {
        free(m->blobs[i].data);
    }
    for (int i = 0; i < m->n_layers; i++) {
        free(m->layers[i].ch_range);
    }
    free(m->steps);
    free(m->blobs);
    free(m->layers);
    free(m->buf);
    free(m->store);
    free(m->addrs);
    m->steps = NULL, m->blobs = NULL, m->layers = NULL, m->buf = NULL, m->store = NULL;
    m->addrs = NULL;
    m->n_steps = m->n_blobs = m->n_layers = m->n_addrs = m->cap_addrs = 0;
    m->mem_tag = fresh_tag(m);
}

/* Fresh per-tensor buffers and the address list with its reserved entries
 * (0..DLC_RESERVED_ADDRS-1 hold a loadable's descriptor lists; the network
 * descriptor must be entry 0), the model's input placed. */
static int lower_begin(struct dlasim_model *m, char *err, size_t errlen)
{
    struct dlc_graph *g = &m->g;
    dlc_lower_free(m);
    m->next_addr = DLC_DEV_BASE;
    m->buf = calloc((size_t)g->n_t, sizeof *m->buf);
    m->store = calloc((size_t)g->n_t, sizeof *m->store);
    m->layers = calloc((size_t)g->n_nodes + 1, sizeof *m->layers);
    if (!m->buf || !m->store || !m->layers) {
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "lowering: out of memory");
    }
    for (int i = 0; i < g->n_t; i++) {
        m->buf[i].addr_index = -1;
        m->store[i] = i;
    }
    for (int i = 0; i < DLC_RESERVED_ADDRS; i++) {
        int rc = dlc_add_address(m, 0);
        if (rc < 0) {
            return dla_errf(err, errlen, rc, "lowering: out of memory");
        }
    }
    int rc = dlc_materialize(m, g->input);
    return rc ? dla_errf(err, errlen, rc, "input '%s': does not fit device memory",
                         g->t[g->input].name)
              : 0;
}

/* A placed Concat: its producers wrote it; if they did not keep its scale,
 * the next pass does not place it. */
static void check_placed(struct dlasim_model *m, struct dlc_layer *L, int node, int *retry)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[node];
    L->engine = DLC_ENG_PLACED;
    for (int k = 0; k < nd->n_in; k++) {
        if (g->t[nd->in[k]].scale != g->t[nd->out].scale ||
            g->t[nd->in[k]].zero != g->t[nd->out].zero) {
            m->no_place[node] = 1;
            *retry = 1;
        }
    }
}

/* A view: the same bytes as its input, with its scale. */
static void take_view(struct dlasim_model *m, struct dlc_layer *L)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    L->engine = DLC_ENG_VIEW;
    m->store[nd->out] = m->store[nd->in[0]];
    g->t[nd->out].scale = g->t[nd->in[0]].scale;
    g->t[nd->out].amax = g->t[nd->in[0]].amax;
    g->t[nd->out].zero = g->t[nd->in[0]].zero;
}

/* A reshape whose 4-D output is another cube than its input's stored one
 * (ShuffleNet's channel shuffle): hardware layers read cubes, so it is
 * copied into its own rather than left a view. */
static int view_relayout(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_tensor *y = &m->g.t[nd->out];
    int64_t c, h, w;
    dlc_cube_of(y, &c, &h, &w);
    const struct dlc_buf *b = dlc_stored_buf(m, nd->in[0]);
    return y->rank == 4 && (b->c != c || b->h != h || b->w != w);
}

/* A Slice along channels starting on an Atomic-M surface boundary is a
 * view: the input's buffer at that surface, fewer channels. */
static int slice_is_view(const struct dlasim_model *m, const struct dlc_node *nd)
{
    const struct dlc_tensor *x = &m->g.t[nd->in[0]];
    return nd->op == DLC_OP_SLICE && x->rank == 4 && nd->sl_axis == 1 &&
           nd->sl_start % m->hw.atom_m == 0 && dlc_stored_buf(m, nd->in[0])->addr_index >= 0 &&
           !dlc_layout_differs(m, nd->in[0]) && nd->out != m->g.output;
}

static void take_slice_view(struct dlasim_model *m, struct dlc_layer *L)
{
    struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    struct dlc_buf b = *dlc_stored_buf(m, nd->in[0]);
    b.c = (uint32_t)(nd->sl_end - nd->sl_start);
    b.offset += (uint32_t)(nd->sl_start / m->hw.atom_m) * b.surf;
    b.size = (uint32_t)dlasim_conv_cube_bytes(&m->hw, b.w, b.h, b.c, 0, 0);
    m->buf[nd->out] = b;
    L->engine = DLC_ENG_VIEW;
    g->t[nd->out].scale = g->t[m->store[nd->in[0]]].scale;
    g->t[nd->out].amax = g->t[m->store[nd->in[0]]].amax;
    g->t[nd->out].zero = g->t[m->store[nd->in[0]]].zero;
}

/* Affine int8 codes (a pre-quantized model's zero point that is not the
 * middle of its type, ir.h `zero`) reach only the rules that carry the
 * offset: convolutions (bias, pad value, output offset), Add / Sub (operand
 * and output offsets) and pooling (max commutes with it).  Elsewhere the
 * node runs on the host CPU, which dequantizes with the zero point: the
 * reason, or NULL. */
static const char *zero_refusal(const struct dlasim_model *m, const struct dlc_node *nd,
                                const struct dlc_rule *r)
{
    const struct dlc_graph *g = &m->g;
    if (r == &dlc_rule_conv || r == &dlc_rule_pool ||
        (r == &dlc_rule_sdp_eltwise && (nd->op == DLC_OP_ADD || nd->op == DLC_OP_SUB))) {
        return NULL;
    }
    int zero = g->t[nd->out].zero;
    for (int i = 0; i < nd->n_in && !zero; i++) {
        zero = nd->in[i] >= 0 && !g->t[nd->in[i]].is_const ? g->t[m->store[nd->in[i]]].zero : 0;
    }
    return zero ? "a zero point other than the middle of its type (affine int8 codes): this "
                  "lowering has no offset (only Conv, Gemm, MatMul, Add, Sub and pooling carry "
                  "it)" : NULL;
}

/* The first rule that takes the node, or NULL with *why the last refusal. */
static const struct dlc_rule *rule_for(const struct dlasim_model *m, const struct dlc_node *nd,
                                       struct dlc_layer *L, const char **why)
{
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        if (!rules[r]->applies(m, nd)) {
            continue;
        }
        *why = rules[r]->refusal(m, nd, L->why, sizeof L->why);
        *why = *why ? *why : zero_refusal(m, nd, rules[r]);
        if (!*why) {
            return rules[r];
        }
    }
    return NULL;
}

/* A host-CPU layer: ends the hardware network before it. */
static int take_cpu(struct dlasim_model *m, struct dlc_layer *L, const char *why, struct opvec *v,
                    char *err, size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    L->engine = DLC_ENG_CPU;
    if (why != L->why) {
        snprintf(L->why, sizeof L->why, "%s", why);
    }
    L->in_scale = g->t[m->store[L->in_tensor]].scale;
    L->out_scale = g->t[nd->out].scale;
    int rc = place_output(m, nd, nd->out, err, errlen);
    if (!rc && ((rc = close_network(m, v)) || (rc = add_cpu_step(m, m->n_layers - 1)))) {
        rc = dlc_node_errf(err, errlen, rc, nd, "out of memory");
    }
    return rc;
}

/* One node: placed Concat, view, a rule's hardware layer, or the host CPU. */
static int lower_node(struct dlasim_model *m, int i, const char *placed, char *fused,
                      struct opvec *v, int *retry, char *err, size_t errlen)
{
    const struct dlc_node *nd = &m->g.nodes[i];
    struct dlc_layer *L = new_layer(m, i);
    if (placed[i]) {
        check_placed(m, L, i, retry);
        return 0;
    }
    if (dlc_is_view(nd->op) && view_relayout(m, nd)) {
        return take_cpu(m, L, "a reshape into another 4-D cube: the host CPU copies it into the "
                        "layout the hardware reads", v, err, errlen);
    }
    if (dlc_is_view(nd->op)) {
        take_view(m, L);
        return 0;
    }
    if (slice_is_view(m, nd)) {
        take_slice_view(m, L);
        return 0;
    }
    const char *why = NULL;
    const struct dlc_rule *rule = rule_for(m, nd, L, &why);
    if (!rule) {
        return take_cpu(m, L, why ? why : cpu_reason(nd), v, err, errlen);
    }
    rule->take(m, L, fused);
    L->engine = rule->engine;
    int first = v->n;
    int rc = place_output(m, nd, L->out_tensor, err, errlen);
    rc = rc ? rc : rule->emit(m, L, v, err, errlen);
    for (int k = first; k < v->n; k++) {
        v->layer[k] = m->n_layers - 1;
    }
    return rc;
}

static int lower_once(struct dlasim_model *m, int *retry, char *err, size_t errlen)
{
    struct dlc_graph *g = &m->g;
    int rc = lower_begin(m, err, errlen);
    if (rc) {
        return rc;
    }
    char *fused = calloc((size_t)g->n_nodes + 1, 1);
    char *placed = calloc((size_t)g->n_nodes + 1, 1);
    struct opvec v = { NULL, NULL, 0, 0, NULL, 0 };
    if (!fused || !placed) {
        rc = dla_errf(err, errlen, DLASIM_ERR_NOMEM, "lowering: out of memory");
        goto out;
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        if (!g->nodes[i].dead && g->nodes[i].op == DLC_OP_CONCAT) {
            int r = place_concat(m, i);
            rc = r < 0 ? dlc_node_errf(err, errlen, r, &g->nodes[i],
                                       "output does not fit device memory") : 0;
            placed[i] = r > 0;
        }
    }
    for (int i = 0; i < g->n_nodes && !rc; i++) {
        if (!g->nodes[i].dead && !fused[i]) {
            rc = lower_node(m, i, placed, fused, &v, retry, err, errlen);
        }
    }
    if (!rc && (rc = close_network(m, &v))) {
        rc = dla_errf(err, errlen, rc, "lowering: out of memory");
    }
    if (!rc) {
        rc = dlc_separate_banks(m, err, errlen);
        if (rc > 0) { /* a layer gets a weight-ring restart: lower again */
            *retry = 1;
            rc = 0;
        }
    }
out:
    free(v.layer);
    free(v.ops);
    free(v.luts);
    free(fused);
    free(placed);
    return rc;
}

int dlc_lower(struct dlasim_model *m, char *err, size_t errlen)
{
    if (!m->no_place) {
        m->no_place = calloc((size_t)m->g.n_nodes + 1, 1);
        m->ring_restart = calloc((size_t)m->g.n_nodes + 1, 1);
        if (!m->no_place || !m->ring_restart) {
            return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "lowering: out of memory");
        }
    }
    for (int pass = 0; pass <= m->g.n_nodes; pass++) {
        int retry = 0;
        int rc = lower_once(m, &retry, err, errlen);
        if (rc || !retry) {
            return rc;
        }
    }
    return dla_errf(err, errlen, DLASIM_ERR_UNSUPPORTED,
                    "internal: Concat placement does not settle");
}
