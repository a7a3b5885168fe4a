/*
 * Lowering rule for LRN on CDP (local sizes 3, 5, 7, 9), with the LUT
 * built from the node's bias, alpha and beta.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/lower_int.h"

/* ---- LRN on CDP ------------------------------------------------------------------------ */

static const char *lrn_refusal(const struct dlasim_model *m, const struct dlc_node *nd, char *why,
                               size_t n)
{
    (void)why, (void)n;
    const struct dlc_tensor *x = &m->g.t[nd->in[0]];
    const struct dlc_buf *b = dlc_stored_buf(m, nd->in[0]);
    if (nd->size < 3 || nd->size > 9 || nd->size % 2 == 0) {
        return "LRN size other than 3, 5, 7 or 9 (CDP's local sizes)";
    }
    if (b->c != x->dims[1] || b->h != x->dims[2] || b->w != x->dims[3]) {
        return "its input is a view whose layout differs from the stored cube";
    }
    if (nd->bias <= 0 || nd->alpha < 0) {
        return "bias <= 0 or alpha < 0";
    }
    return NULL;
}

/* LRN: y = x / (bias + alpha / size * sum x^2)^beta.  CDP squares the int8
 * input (converter scale 1), sums over the window, looks the sum up in its
 * LUT, multiplies by the input and converts: the LUT holds
 * f(s) = (bias + alpha / size * s * s_in^2)^-beta * 2^F, the linear-only
 * table (257 entries) over the whole range of square sums, the finer
 * linear-exponent table (65 entries, linear mode) over its first part,
 * preferred where both hit; flat extrapolation outside.  The output
 * converter scales by s_in / (s_out * 2^F). */
static int emit_cdp(struct dlasim_model *m, struct dlc_layer *L, struct opvec *v, char *err,
                    size_t errlen)
{
    const struct dlc_graph *g = &m->g;
    const struct dlc_node *nd = &g->nodes[L->node];
    const struct dlc_buf *bx = dlc_stored_buf(m, L->in_tensor);
    const struct dlc_buf *by = &m->buf[L->out_tensor];
    struct dlasim_rt_lut *nl = realloc(v->luts, (size_t)(v->n_luts + 1) * sizeof *nl);
    if (!nl) {
        return dlc_node_errf(err, errlen, DLASIM_ERR_NOMEM, nd, "out of memory for its LUT");
    }
    v->luts = nl;
    struct dlasim_rt_lut *lut = &v->luts[v->n_luts];
    memset(lut, 0, sizeof *lut);
    double s_in = L->in_scale, s_out = L->out_scale;
    uint64_t smax = (uint64_t)nd->size * 128 * 128; /* largest square sum */
    int sel = 0;
    while ((smax >> sel) > 256) {
        sel++;
    }
    int sel_le = sel >= 2 ? sel - 2 : 0;
    double fmax = pow(nd->bias, -nd->beta); /* f is largest at s = 0 (beta >= 0) */
    if (nd->beta < 0) {
        fmax = pow(nd->bias + nd->alpha / nd->size * (double)smax * s_in * s_in, -nd->beta);
    }
    int F = (int)floor(log2(32767.0 / fmax));
    F = F > 30 ? 30 : F;
    for (int i = 0; i < 257; i++) {
        double sq = (double)((uint64_t)i << sel);
        lut->linear_only_table[i] =
            dlc_sat16(pow(nd->bias + nd->alpha / nd->size * sq * s_in * s_in, -nd->beta) * ldexp(1.0, F));
    }
    for (int i = 0; i < 65; i++) {
        double sq = (double)((uint64_t)i << sel_le);
        lut->linear_exp_table[i] =
            dlc_sat16(pow(nd->bias + nd->alpha / nd->size * sq * s_in * s_in, -nd->beta) * ldexp(1.0, F));
    }
    lut->method = 1; /* linear */
    lut->linear_exp_offset = (int8_t)sel_le;
    lut->linear_only_offset = (int8_t)sel;
    lut->linear_exp_start = 0, lut->linear_exp_end = (uint64_t)64 << sel_le;
    lut->linear_only_start = 0, lut->linear_only_end = (uint64_t)256 << sel;
    lut->hybrid_priority = 0;    /* LE where both hit */
    lut->underflow_priority = 0; /* never: square sums start at 0 */
    lut->overflow_priority = 1;  /* LO past the LE table */
    int oi = dlc_new_op(v, DLASIM_RT_OP_CDP);
    if (oi < 0) {
        return dlc_node_errf(err, errlen, oi, nd, "too many hardware operations");
    }
    struct dlasim_rt_op *o = &v->ops[oi];
    struct dlasim_rt_cdp_op *c = &o->op.cdp;
    c->lut_index = (int16_t)v->n_luts++;
    c->in_cvt.scale = 1;
    c->local_size = (uint8_t)nd->size;
    uint32_t t_out = 0;
    int16_t m_out = dlc_fit16(s_in / (s_out * ldexp(1.0, F)), &t_out, 63);
    c->out_cvt.scale = m_out;
    c->out_cvt.truncate = (uint8_t)t_out;
    o->surface.io.src_data = dlc_cube(bx, DLASIM_RT_MEM_MC);
    o->surface.io.dst_data = dlc_cube(by, DLASIM_RT_MEM_MC);
    L->n_hw_ops = 1;
    L->mul_shift = (uint32_t)F;
    L->alu_shift = (uint32_t)sel;
    L->cacc_trunc = t_out;
    return 0;
}

static int lrn_applies(const struct dlasim_model *m, const struct dlc_node *nd)
{
    (void)m;
    return nd->op == DLC_OP_LRN;
}

static void lrn_take(struct dlasim_model *m, struct dlc_layer *L, char *fused)
{
    const struct dlc_graph *g = &m->g;
    (void)fused;
    L->in_scale = g->t[m->store[L->in_tensor]].scale;
    L->out_scale = g->t[L->out_tensor].scale;
}

const struct dlc_rule dlc_rule_cdp_lrn = {
    DLC_ENG_CDP, lrn_applies, lrn_refusal, lrn_take, emit_cdp,
};
