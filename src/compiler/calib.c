/*
 * Calibration (include/dlasim/compiler.h, dlasim_model_calibrate): the
 * float graph runs on the caller's inputs and every tensor's range is
 * observed; min-max keeps the largest |x|, percentile and entropy choose a
 * threshold from a histogram of |x| (a second pass).  A tensor's int8 step
 * is its range / 127.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "compiler/compiler_int.h"

float dlc_quant_scale(float amax)
{
    return amax > 0 ? amax / 127.0f : 1.0f / 127.0f;
}

struct calib_pass {
    const struct dlc_graph *g;
    double *amax;
    uint32_t *hist;  /* NULL in the first pass */
    int bad_t;       /* first tensor that took a NaN or infinite value, or -1 */
};

static void observe(void *ctx, int t, const float *v, int64_t n)
{
    struct calib_pass *p = ctx;
    if (!p->hist) {
        double a = p->amax[t];
        for (int64_t i = 0; i < n; i++) {
            double x = fabs((double)v[i]);
            if (!isfinite(x)) { /* NaN would pass any `x > a` test unseen */
                p->bad_t = p->bad_t < 0 ? t : p->bad_t;
                a = INFINITY;
                break;
            }
            a = x > a ? x : a;
        }
        p->amax[t] = a;
        return;
    }
    if (p->amax[t] <= 0) {
        return;
    }
    uint32_t *h = p->hist + (size_t)t * DLC_HIST_BINS;
    double k = DLC_HIST_BINS / p->amax[t];
    for (int64_t i = 0; i < n; i++) {
        double x = fabs((double)v[i]) * k;
        if (!(x < DLC_HIST_BINS)) { /* beyond the range, or NaN */
            h[DLC_HIST_BINS - 1] += x == x;
            continue;
        }
        int b = (int)x;
        h[b >= DLC_HIST_BINS ? DLC_HIST_BINS - 1 : b]++;
    }
}

static double percentile_threshold(const uint32_t *h, double amax, double pct)
{
    uint64_t total = 0, acc = 0;
    for (int i = 0; i < DLC_HIST_BINS; i++) {
        total += h[i];
    }
    for (int i = 0; i < DLC_HIST_BINS; i++) {
        acc += h[i];
        if ((double)acc >= pct / 100.0 * (double)total) {
            return amax * (i + 1) / DLC_HIST_BINS;
        }
    }
    return amax;
}

/* KL divergence between the clipped reference distribution and its 128-level
 * quantized version, for thresholds of 128..2048 bins; the threshold with the
 * smallest divergence wins (the entropy calibration of TensorRT's INT8 paper,
 * "8-bit Inference with TensorRT", GTC 2017). */
static double entropy_threshold(const uint32_t *h, double amax)
{
    enum { LEVELS = 128 };
    double best = INFINITY;
    int best_i = DLC_HIST_BINS;
    double p[DLC_HIST_BINS], q[DLC_HIST_BINS];
    for (int i = LEVELS; i <= DLC_HIST_BINS; i += 16) {
        double outliers = 0;
        for (int j = i; j < DLC_HIST_BINS; j++) {
            outliers += h[j];
        }
        for (int j = 0; j < i; j++) {
            p[j] = h[j];
        }
        p[i - 1] += outliers;
        for (int lv = 0; lv < LEVELS; lv++) { /* merge into LEVELS bins, spread back */
            int a = lv * i / LEVELS, b = (lv + 1) * i / LEVELS;
            double sum = 0;
            int nz = 0;
            for (int j = a; j < b; j++) {
                sum += h[j];
                nz += h[j] != 0;
            }
            for (int j = a; j < b; j++) {
                q[j] = h[j] && nz ? sum / nz : 0;
            }
        }
        double sp = 0, sq = 0;
        for (int j = 0; j < i; j++) {
            sp += p[j];
            sq += q[j];
        }
        if (sp <= 0 || sq <= 0) {
            continue;
        }
        double kl = 0;
        for (int j = 0; j < i; j++) {
            if (p[j] > 0) {
                double pj = p[j] / sp, qj = q[j] > 0 ? q[j] / sq : 1e-12;
                kl += pj * log(pj / qj);
            }
        }
        if (kl < best) {
            best = kl;
            best_i = i;
        }
    }
    return amax * (best_i + 0.5) / DLC_HIST_BINS;
}

int dlasim_model_calibrate(struct dlasim_model *m, const float *inputs, size_t count,
                           const struct dlasim_calib_options *opt, char *err, size_t errlen)
{
    if (!m || (!inputs && count)) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "dlasim_model_calibrate: %s is NULL",
                        !m ? "m" : "inputs");
    }
    struct dlc_graph *g = &m->g;
    if (count == 0) {
        return dla_errf(err, errlen, DLASIM_ERR_INVAL, "calibration: no input given");
    }
    enum dlasim_calib_method method = opt ? opt->method : DLASIM_CALIB_MINMAX;
    double pct = opt && opt->percentile > 0 ? opt->percentile : 99.99;
    struct calib_pass p = { g, calloc((size_t)g->n_t, sizeof(double)), NULL, -1 };
    struct dlc_float_limits lim = { opt ? opt->max_host_mem : 0, opt ? opt->max_work : 0 };
    float **vals = calloc((size_t)g->n_t, sizeof *vals);
    int rc = p.amax && vals ? 0 : dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
    size_t in_n = dlasim_model_input_size(m);
    int passes = method == DLASIM_CALIB_MINMAX ? 1 : 2;
    for (int pass = 0; pass < passes && !rc; pass++) {
        if (pass == 1) {
            p.hist = calloc((size_t)g->n_t * DLC_HIST_BINS, sizeof(uint32_t));
            if (!p.hist) {
                rc = dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
                break;
            }
        }
        for (size_t i = 0; i < count && !rc; i++) {
            rc = dlc_float_stream(g, inputs + i * in_n, vals, &lim, observe, &p, err, errlen);
            dlc_vals_free(g, vals);
            if (rc) {
                char why[400];
                snprintf(why, sizeof why, "%s", err && errlen ? err : "");
                rc = dla_errf(err, errlen, rc, "calibration input %zu: %s", i, why);
            } else if (p.bad_t >= 0) {
                int t = p.bad_t, pr = g->t[t].producer;
                rc = t == g->input
                         ? dla_errf(err, errlen, DLASIM_ERR_INVAL,
                                    "calibration input %zu contains NaN or infinite values", i)
                         : dla_errf(err, errlen, DLASIM_ERR_INVAL,
                                    "calibration input %zu: tensor '%s' (output of node '%s', %s) "
                                    "is NaN or infinite: the model computes no finite value there",
                                    i, g->t[t].name, pr >= 0 ? g->nodes[pr].name : "?",
                                    pr >= 0 ? dlc_op_names[g->nodes[pr].op] : "?");
            }
        }
    }
    for (int t = 0; t < g->n_t && !rc; t++) {
        double a = p.amax[t];
        if (!isfinite(a) || a > 1e30) {
            rc = dla_errf(err, errlen, DLASIM_ERR_INVAL,
                       "calibration: tensor '%s' takes NaN, infinite or huge values (|x| up to %g)",
                       g->t[t].name, a);
            break;
        }
        if (p.hist && a > 0 && t != g->input) {
            const uint32_t *h = p.hist + (size_t)t * DLC_HIST_BINS;
            a = method == DLASIM_CALIB_PERCENTILE ? percentile_threshold(h, a, pct)
                                                  : entropy_threshold(h, a);
        }
        g->t[t].amax = (float)a;
        g->t[t].scale = dlc_quant_scale((float)a);
    }
    free(p.amax);
    free(p.hist);
    free(vals);
    if (!rc) {
        m->calibrated = 1;
        m->compiled = 0;
    }
    return rc;
}
