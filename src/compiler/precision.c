/*
 * Precision flags of the compile and run reports (issue 17 items 5 and 9):
 * every layer whose INT8 output falls below an SQNR threshold against the
 * float reference, whose INT8 output stays constant in channels where the
 * float output varies, or whose bias dominates its input step (a "silent
 * collapse"), each with the likely cause.
 *
 * Sources, all computed elsewhere (no second float executor):
 *  - static: lower_conv.c record_bias_dominance / bias_alu_shift, at compile
 *    time (the calibrated scales, the float weights and bias);
 *  - measured: model.c accumulate_stats, over the runs after
 *    dlasim_model_stats_begin (the float reference of dlc_float_run against
 *    the dequantized INT8 tensors read back from the device), and the model
 *    input's own quantization.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "compiler/compiler_int.h"

double dlc_layer_sqnr(const struct dlc_layer *L)
{
    return L->stat_noise > 0 ? 10 * log10(L->stat_sig / L->stat_noise) : INFINITY;
}

/* Channels whose INT8 output never changed over the runs while the float
 * output varied by at least two output steps (less can round to one value,
 * as it should: a channel of a squeeze-and-excitation gate moves a fraction
 * of a step); *steps: the largest such float variation in output steps. */
static int constant_channels(const struct dlasim_model *m, const struct dlc_layer *L,
                             double *steps)
{
    const float s = m->g.t[L->out_tensor].scale;
    int n = 0;
    *steps = 0;
    for (int k = 0; L->ch_range && k < L->stat_c; k++) {
        const float *r = L->ch_range + 4 * k;
        double v = s > 0 ? ((double)r[3] - r[2]) / s : 0;
        if (r[0] == r[1] && v >= 2.0) {
            *steps = v > *steps ? v : *steps;
            n++;
        }
    }
    return n;
}

/* The last layer before `i` with statistics that writes layer i's first input. */
static const struct dlc_layer *producer(const struct dlasim_model *m, int i)
{
    const struct dlc_node *nd = &m->g.nodes[m->layers[i].node];
    int in = m->store[nd->in[0]];
    for (int j = i - 1; j >= 0; j--) {
        const struct dlc_layer *P = &m->layers[j];
        if (P->stat_n && m->store[P->out_tensor] == in) {
            return P;
        }
    }
    return NULL;
}

/* The likely cause of a low SQNR, when neither the bias nor constant
 * channels explain it. */
static void sqnr_cause(const struct dlasim_model *m, int i, double limit, struct dlc_sbuf *b)
{
    const struct dlc_layer *L = &m->layers[i];
    const struct dlc_layer *P = producer(m, i);
    const struct dlc_node *nd = &m->g.nodes[L->node];
    double sat = L->stat_n ? (double)L->stat_sat / (double)L->stat_n : 0;
    double rms = L->stat_n ? sqrt(L->stat_sig / (double)L->stat_n) : 0;
    if (sat > 1e-3) {
        dlc_sb_printf(b, ": %.2g %% of its float outputs lie beyond the int8 range (step %.3g): "
                      "the calibration range is too narrow for these inputs (calibrate on inputs "
                      "like them, or with --method minmax)", 100 * sat, (double)L->out_scale);
    } else if (P && dlc_layer_sqnr(P) < limit) {
        dlc_sb_printf(b, ": its input, layer %d [%s], already has SQNR %.1f dB",
                      (int)(P - m->layers), m->g.nodes[P->node].name, dlc_layer_sqnr(P));
    } else if (!P && m->in_stat_n && nd->in[0] == m->g.input && m->in_noise > 0 &&
               10 * log10(m->in_sig / m->in_noise) < limit) {
        dlc_sb_printf(b, ": the model input's own quantization has SQNR %.1f dB (input step "
                      "%.3g from the calibration range %.3g): the range is wider than these "
                      "inputs use (calibrate on inputs like them, or try --method percentile "
                      "or entropy)", 10 * log10(m->in_sig / m->in_noise),
                      (double)m->g.t[m->g.input].scale, (double)m->g.t[m->g.input].amax);
    } else {
        dlc_sb_printf(b, ": quantization noise: the output step %.3g is %.2g of the output's RMS "
                      "%.3g (a few large calibration values set the range: try --method "
                      "percentile or entropy)", (double)L->out_scale,
                      rms > 0 ? L->out_scale / rms : INFINITY, rms);
    }
}

/* One layer's flags (nothing when it has none). */
static void layer_flags(const struct dlasim_model *m, int i, double limit, struct dlc_sbuf *b)
{
    const struct dlc_layer *L = &m->layers[i];
    const struct dlc_node *nd = &m->g.nodes[L->node];
    const char *op = dlc_op_names[nd->op];
    const int out_c = m->g.t[L->out_tensor].rank >= 2 ? (int)m->g.t[L->out_tensor].dims[1] : 1;
    if (L->bias_saturates) {
        dlc_sb_printf(b, "  layer %d [%s] %s: a bias beyond the SDP's 32-bit bias operand (at "
                      "the largest ALU shift and CACC truncation) is saturated: the input step "
                      "%.3g is too small for it\n", i, nd->name, op, (double)L->in_scale);
    }
    if (L->flat_channels) {
        dlc_sb_printf(b, "  layer %d [%s] %s: bias %.2g vs input step %.2g: the inputs move %d "
                      "of %d channels by at most %.2g output steps (step %.3g), so their INT8 "
                      "output is constant, set by the bias (the output step, set by the bias, is too "
                      "coarse for what the inputs add)\n", i, nd->name, op,
                      (double)L->flat_bias, (double)L->in_scale, L->flat_channels, out_c,
                      (double)L->flat_swing, (double)L->out_scale);
    }
    if (!L->stat_n) {
        return;
    }
    double steps;
    int nc = constant_channels(m, L, &steps);
    if (nc) {
        dlc_sb_printf(b, "  layer %d [%s] %s: INT8 output constant in %d of %d channels over "
                      "%llu inputs while the float output varies by %.3g output steps or more "
                      "(up to %.3g, step %.3g)%s\n", i, nd->name, op, nc, L->stat_c,
                      (unsigned long long)L->stat_runs, 2.0, steps, (double)L->out_scale,
                      L->flat_channels ? ": the bias dominates (above)" : "");
    }
    double db = dlc_layer_sqnr(L);
    if (db < limit) {
        dlc_sb_printf(b, "  layer %d [%s] %s: SQNR %.1f dB, below %.1f dB", i, nd->name, op, db,
                      limit);
        if (L->flat_channels || nc) {
            dlc_sb_printf(b, ": constant channels (above)");
        } else {
            sqnr_cause(m, i, limit, b);
        }
        dlc_sb_printf(b, "\n");
    }
}

char *dlasim_model_precision_flags(const struct dlasim_model *m)
{
    if (!m || !m->compiled) {
        return NULL;
    }
    struct dlc_sbuf b = { NULL, 0, 0 };
    for (int i = 0; i < m->n_layers; i++) {
        layer_flags(m, i, m->min_sqnr_db, &b);
    }
    if (!b.n) {
        free(b.s);
        return NULL;
    }
    struct dlc_sbuf h = { NULL, 0, 0 };
    dlc_sb_printf(&h, "precision flags (SQNR of a layer's INT8 output against float below "
                  "%.1f dB, constant INT8 channels, a bias that dominates its input step):\n%s",
                  m->min_sqnr_db, b.s);
    free(b.s);
    return h.s;
}

int dlasim_model_set_min_sqnr(struct dlasim_model *m, double db)
{
    if (!m || !(db >= 0 && db <= 200)) {
        return DLASIM_ERR_INVAL;
    }
    m->min_sqnr_db = db;
    return 0;
}
