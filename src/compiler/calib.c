/*
 * Calibration (include/dlasim/compiler.h, dlasim_model_calibrate): the
 * float graph runs on the caller's inputs and every tensor's range is
 * observed; min-max keeps the largest |x|, percentile and entropy choose a
 * threshold from a histogram of |x| (a second pass).  A tensor's int8 step
 * is its range / 127.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Runs inputs first, first + step, ... < count through the float graph
 * (streamed within lim) into p; stops at the first input that fails or
 * shows a NaN/infinite value, records its index in *failed_at (count: none)
 * and its message in err. */
static int calib_inputs(const struct dlc_graph *g, const float *inputs, size_t in_n,
                        size_t first, size_t step, size_t count,
                        const struct dlc_float_limits *lim, struct calib_pass *p, float **vals,
                        size_t *failed_at, char *err, size_t errlen)
{
    /* the tensors' buffers go from one input to the next (no allocation
     * and no page faults per input; the streaming limits still hold) */
    struct dlc_float_pool pool;
    int rc = dlc_float_pool_init(&pool, g);
    *failed_at = rc ? first : count;
    if (rc) {
        return dla_errf(err, errlen, rc, "calibration: out of memory");
    }
    for (size_t i = first; i < count && !rc; i += step) {
        rc = dlc_float_stream_pooled(g, inputs + i * in_n, vals, lim, &pool, observe, p, err,
                                     errlen);
        dlc_float_pool_keep(&pool, g, vals);
        if (rc) {
            char why[400];
            snprintf(why, sizeof why, "%s", err && errlen ? err : "");
            rc = dla_errf(err, errlen, rc, "calibration input %zu: %s", i, why);
        } else if (p->bad_t >= 0) {
            int t = p->bad_t, pr = g->t[t].producer;
            rc = t == g->input
                     ? dla_errf(err, errlen, DLASIM_ERR_INVAL,
                                "calibration input %zu contains NaN or infinite values", i)
                     : dla_errf(err, errlen, DLASIM_ERR_INVAL,
                                "calibration input %zu: tensor '%s' (output of node '%s', %s) "
                                "is NaN or infinite: the model computes no finite value there",
                                i, g->t[t].name, pr >= 0 ? g->nodes[pr].name : "?",
                                pr >= 0 ? dlc_op_names[g->nodes[pr].op] : "?");
        }
        *failed_at = rc ? i : count;
    }
    dlc_float_pool_free(&pool);
    return rc;
}

/* Calibration over many inputs uses every core.  A large model already
 * does inside each layer (the float reference's matrix products are
 * threaded, src/kernels/sgemm.c); a small one, whose layers are too small
 * for that, runs its inputs on several threads at once instead, each with
 * its own buffers and ranges, merged after the pass.  Maxima and histogram
 * counts do not depend on the order, so the scales are the same.  Each
 * worker streams within the same limits (they bound one float run). */
#define CALIB_PARALLEL_MACS 20e6 /* per input: below, inputs in parallel */

static double float_macs(const struct dlc_graph *g)
{
    double macs = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const struct dlc_node *nd = &g->nodes[i];
        int products = nd->op == DLC_OP_CONV || nd->op == DLC_OP_GEMM || nd->op == DLC_OP_MATMUL;
        if (!nd->dead && products) {
            macs += (double)dlc_node_work(g, nd);
        }
    }
    return macs;
}

static unsigned calib_workers(const struct dlc_graph *g, size_t count)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 2 || count < 2 || float_macs(g) >= CALIB_PARALLEL_MACS) {
        return 1;
    }
    size_t n = (size_t)(cores > 64 ? 64 : cores);
    return (unsigned)(n < count ? n : count);
}

struct calib_worker {
    const struct dlc_graph *g;
    const float *inputs;
    const struct dlc_float_limits *lim;
    size_t in_n, count, first, step;
    size_t failed_at; /* count: none */
    int rc;
    struct calib_pass p;
    float **vals;
    char err[512];
};

static void *calib_worker_main(void *arg)
{
    struct calib_worker *w = arg;
    w->rc = calib_inputs(w->g, w->inputs, w->in_n, w->first, w->step, w->count, w->lim, &w->p,
                         w->vals, &w->failed_at, w->err, sizeof w->err);
    return NULL;
}

static void calib_worker_free(struct calib_worker *w, const struct calib_pass *shared)
{
    if (w->vals) {
        dlc_vals_free(w->g, w->vals);
    }
    free(w->vals);
    if (w->p.amax != shared->amax) {
        free(w->p.amax);
    }
    free(w->p.hist);
}

static void calib_workers_free(struct calib_worker *w, unsigned n, const struct calib_pass *p,
                               pthread_t *tid, int *started)
{
    for (unsigned i = 0; w && i < n; i++) {
        calib_worker_free(&w[i], p);
    }
    free(w);
    free(tid);
    free(started);
}

/* Merges the workers into p: maxima in the first pass, histograms (against
 * p's maxima) in the second; an error is the first failing input's, as one
 * thread would report it. */
static int calib_merge(const struct dlc_graph *g, struct calib_worker *w, unsigned n, size_t count,
                       struct calib_pass *p, char *err, size_t errlen)
{
    const struct calib_worker *first_fail = NULL;
    size_t nbins = (size_t)g->n_t * DLC_HIST_BINS;
    for (unsigned i = 0; i < n; i++) {
        if (w[i].failed_at < count && (!first_fail || w[i].failed_at < first_fail->failed_at)) {
            first_fail = &w[i];
        }
        for (int t = 0; t < g->n_t && !p->hist; t++) {
            p->amax[t] = w[i].p.amax[t] > p->amax[t] ? w[i].p.amax[t] : p->amax[t];
        }
        for (size_t b = 0; p->hist && b < nbins; b++) {
            p->hist[b] += w[i].p.hist[b];
        }
    }
    return first_fail ? dla_errf(err, errlen, first_fail->rc, "%s", first_fail->err) : 0;
}

/* One pass over the inputs on n threads (input i on worker i mod n). */
static int calib_parallel_pass(const struct dlc_graph *g, const float *inputs, size_t in_n,
                               size_t count, const struct dlc_float_limits *lim,
                               struct calib_pass *p, unsigned n, char *err, size_t errlen)
{
    struct calib_worker *w = calloc(n, sizeof *w);
    pthread_t *tid = calloc(n, sizeof *tid);
    int *started = calloc(n, sizeof *started);
    int rc = w && tid && started ? 0 : -1;
    size_t nbins = (size_t)g->n_t * DLC_HIST_BINS;
    for (unsigned i = 0; i < n && !rc; i++) {
        w[i] = (struct calib_worker){ .g = g, .inputs = inputs, .lim = lim, .in_n = in_n,
                                      .count = count, .first = i, .step = n, .failed_at = count };
        w[i].p = (struct calib_pass){ g, NULL, NULL, -1 };
        w[i].vals = calloc((size_t)g->n_t, sizeof *w[i].vals);
        w[i].p.amax = p->hist ? p->amax : calloc((size_t)g->n_t, sizeof(double));
        w[i].p.hist = p->hist ? calloc(nbins, sizeof(uint32_t)) : NULL;
        rc = w[i].vals && w[i].p.amax && (!p->hist || w[i].p.hist) ? 0 : -1;
    }
    if (rc) {
        calib_workers_free(w, n, p, tid, started);
        return dla_errf(err, errlen, DLASIM_ERR_NOMEM, "calibration: out of memory");
    }
    for (unsigned i = 1; i < n; i++) {
        started[i] = pthread_create(&tid[i], NULL, calib_worker_main, &w[i]) == 0;
    }
    calib_worker_main(&w[0]);
    for (unsigned i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        } else {
            calib_worker_main(&w[i]); /* no thread: its inputs here */
        }
    }
    rc = calib_merge(g, w, n, count, p, err, errlen);
    calib_workers_free(w, n, p, tid, started);
    return rc;
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
    unsigned workers = calib_workers(g, count);
    for (int pass = 0; pass < passes && !rc; pass++) {
        if (pass == 1) {
            p.hist = calloc((size_t)g->n_t * DLC_HIST_BINS, sizeof(uint32_t));
            if (!p.hist) {
                rc = dla_errf(err, errlen, DLASIM_ERR_NOMEM, "out of memory");
                break;
            }
        }
        size_t failed_at;
        rc = workers > 1
                 ? calib_parallel_pass(g, inputs, in_n, count, &lim, &p, workers, err, errlen)
                 : calib_inputs(g, inputs, in_n, 0, 1, count, &lim, &p, vals, &failed_at, err,
                                errlen);
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
        if (g->t[t].qscale > 0) { /* pre-quantized model (qdq.c): the model's own step */
            g->t[t].scale = g->t[t].qscale;
            g->t[t].amax = 127.0f * g->t[t].qscale;
        }
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
