/*
 * conv_bench rows of the RK3588 personality (public API only):
 *   - a ResNet-18 3x3 layer as one int8 -> int32 convolution task (DPU
 *     bypassed) in a regcmd list, kicked through the PC, timed from the
 *     kick to the interrupt and checked against the same integer reference
 *     the NVDLA rows use;
 *   - a regcmd list of many small tasks (1x1 convolutions of 4x4x16) kicked
 *     once, timed from the kick to the last task's interrupt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rk.h"
#include "dlasim/rk3588.h"

#define CMD_ADDR 0x00010000u
#define IN_ADDR 0x01000000u
#define WT_ADDR 0x08000000u
#define OUT_ADDR 0x20000000u

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static struct dlasim_dev *rk_device(unsigned threads)
{
    struct dlasim_options o = {0};
    struct dlasim_dev *dev = NULL;
    o.config = "rk3588";
    o.threads = threads;
    return dlasim_create(&o, &dev, NULL, 0) ? NULL : dev;
}

static int write_list(struct dlasim_dev *dev, const struct dlasim_rk_regcmd *l)
{
    size_t n = dlasim_rk_layout_size(l);
    uint8_t *buf = malloc(n ? n : 1);
    int rc = buf ? dlasim_rk_layout(l, CMD_ADDR, buf, n) : DLASIM_ERR_NOMEM;
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, CMD_ADDR, buf, n);
    free(buf);
    return rc;
}

/* Kick, run to the interrupt, acknowledge; the time of kick..interrupt. */
static int run_timed(struct dlasim_dev *dev, const struct dlasim_rk_regcmd *l, double *ms)
{
    double t0 = now_ms();
    int rc = dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(l, 0), (unsigned)l->ntasks,
                            DLASIM_RK_IRQ_DPU);
    rc = rc ? rc : dlasim_run(dev);
    *ms = now_ms() - t0;
    if (!rc && !dlasim_irq_level(dev)) {
        rc = DLASIM_ERR_TIMEOUT;
    }
    return rc ? rc : dlasim_rk_ack(dev, 0);
}

static int load_layer(struct dlasim_dev *dev, const struct bench_rk_layer *L, const int8_t *in,
                      const int8_t *wt)
{
    size_t fb = dlasim_rk_feature_bytes(L->w, L->h, L->c, 1);
    size_t wb = dlasim_rk_weight_bytes(L->k, L->c, L->r, L->r, 0);
    uint8_t *f = calloc(fb, 1), *w = malloc(wb);
    int rc = f && w ? 0 : DLASIM_ERR_NOMEM;
    for (uint32_t ch = 0; !rc && ch < L->c; ch++) {
        for (uint32_t y = 0; y < L->h; y++) {
            for (uint32_t x = 0; x < L->w; x++) {
                f[dlasim_rk_feature_offset(L->w, L->h, ch, y, x, 1)] =
                    (uint8_t)in[((size_t)ch * L->h + y) * L->w + x];
            }
        }
    }
    for (uint32_t k = 0; !rc && k < L->k; k++) {
        for (uint32_t ch = 0; ch < L->c; ch++) {
            for (uint32_t ky = 0; ky < L->r; ky++) {
                for (uint32_t kx = 0; kx < L->r; kx++) {
                    w[dlasim_rk_weight_offset(k, ch, ky, kx, L->k, L->c, L->r, L->r, 0)] =
                        (uint8_t)wt[(((size_t)k * L->c + ch) * L->r + ky) * L->r + kx];
                }
            }
        }
    }
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, IN_ADDR, f, fb);
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, WT_ADDR, w, wb);
    free(f);
    free(w);
    return rc;
}

/* sum >> t rounded half to even (CLIP_TRUNCATE.ROUND_TYPE 0), saturated to int8. */
static int8_t rk_post(int32_t sum, uint32_t t)
{
    int64_t v = sum;
    if (t) {
        int64_t q = v >> t, r = v - q * ((int64_t)1 << t), half = (int64_t)1 << (t - 1);
        v = q + (r > half || (r == half && (q & 1)));
    }
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}

static int check_layer(struct dlasim_dev *dev, const struct bench_rk_layer *L, uint32_t ow,
                       uint32_t oh, const int32_t *ref, char *note, size_t notelen)
{
    size_t ob = dlasim_rk_feature_bytes(ow, oh, L->k, 1);
    uint8_t *out = malloc(ob);
    int rc = out ? dlasim_mem_read(dev, DLASIM_PORT_DBB, OUT_ADDR, out, ob) : DLASIM_ERR_NOMEM;
    for (uint32_t k = 0; !rc && k < L->k; k++) {
        for (uint32_t y = 0; !rc && y < oh; y++) {
            for (uint32_t x = 0; !rc && x < ow; x++) {
                int8_t v = (int8_t)out[dlasim_rk_feature_offset(ow, oh, k, y, x, 1)];
                int8_t want = rk_post(ref[((size_t)k * oh + y) * ow + x], L->clip_truncate);
                if (v != want) {
                    snprintf(note, notelen, "rk3588 output [%u][%u][%u] = %d, reference %d", k,
                             y, x, v, want);
                    rc = DLASIM_ERR_CHECK;
                }
            }
        }
    }
    free(out);
    return rc;
}

int bench_rk_layer(const struct bench_rk_layer *L, unsigned threads, unsigned reps,
                   const int8_t *in, const int8_t *wt, const int32_t *ref, double *ms,
                   char *note, size_t notelen)
{
    uint32_t ow = (L->w + 2 * L->pad - L->r) / L->stride + 1;
    uint32_t oh = (L->h + 2 * L->pad - L->r) / L->stride + 1;
    struct dlasim_dev *dev = rk_device(threads);
    struct dlasim_rk_regcmd l = {0};
    struct dlasim_rk_conv cv = {0};
    double *v = calloc(reps, sizeof(double));
    if (!dev || !v) {
        dlasim_destroy(dev);
        free(v);
        return DLASIM_ERR_NOMEM;
    }
    cv.in_w = L->w;
    cv.in_h = L->h;
    cv.in_c = L->c;
    cv.kernels = L->k;
    cv.k_w = cv.k_h = L->r;
    cv.stride_x = cv.stride_y = L->stride;
    cv.pad_left = cv.pad_top = L->pad;
    cv.out_w = ow;
    cv.out_h = oh;
    cv.input = IN_ADDR;
    cv.weights = WT_ADDR;
    cv.output = OUT_ADDR;
    cv.cvt_scale = 1;
    cv.clip_truncate = (uint8_t)L->clip_truncate;
    cv.to_memory = 1;
    int rc = load_layer(dev, L, in, wt);
    rc = rc ? rc : dlasim_rk_emit_conv(&l, &cv, NULL);
    rc = rc ? rc : write_list(dev, &l);
    for (unsigned i = 0; !rc && i < reps; i++) {
        rc = run_timed(dev, &l, &v[i]);
    }
    if (!rc) {
        qsort(v, reps, sizeof(double), cmp_double);
        *ms = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
        rc = check_layer(dev, L, ow, oh, ref, note, notelen);
    } else {
        snprintf(note, notelen, "rk3588: %s: %.120s", dlasim_status_name(rc),
                 dlasim_last_error(dev));
    }
    free(v);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
    return rc;
}

int bench_rk_small_tasks(unsigned ntasks, unsigned threads, unsigned reps, double *ms,
                         uint64_t *macs, char *note, size_t notelen)
{
    struct dlasim_dev *dev = rk_device(threads);
    struct dlasim_rk_regcmd l = {0};
    double *v = calloc(reps, sizeof(double));
    int rc = dev && v ? 0 : DLASIM_ERR_NOMEM;
    uint8_t data[4096];
    for (unsigned i = 0; i < sizeof(data); i++) {
        data[i] = (uint8_t)(i * 37u + 11u);
    }
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, IN_ADDR, data, sizeof(data));
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, WT_ADDR, data, sizeof(data));
    for (unsigned t = 0; !rc && t < ntasks; t++) {
        struct dlasim_rk_conv cv = {0};
        cv.in_w = cv.in_h = cv.out_w = cv.out_h = 4;
        cv.in_c = cv.kernels = 16;
        cv.k_w = cv.k_h = cv.stride_x = cv.stride_y = 1;
        cv.input = IN_ADDR;
        cv.weights = WT_ADDR;
        cv.output = OUT_ADDR + t * 1024u;
        cv.out_int32 = 1;
        cv.to_memory = 1;
        rc = dlasim_rk_emit_conv(&l, &cv, NULL);
    }
    rc = rc ? rc : write_list(dev, &l);
    for (unsigned i = 0; !rc && i < reps; i++) {
        rc = run_timed(dev, &l, &v[i]);
        uint32_t done = 0;
        dlasim_csb_read(dev, 0x3c, &done); /* PC TASK_STATUS */
        if (!rc && done != ntasks) {
            snprintf(note, notelen, "rk3588: %u of %u tasks ran", done, ntasks);
            rc = DLASIM_ERR_CHECK;
        }
    }
    if (!rc) {
        qsort(v, reps, sizeof(double), cmp_double);
        *ms = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
        *macs = (uint64_t)ntasks * 4 * 4 * 16 * 16;
    } else if (dev && !note[0]) {
        snprintf(note, notelen, "rk3588: %s: %.120s", dlasim_status_name(rc), dlasim_last_error(dev));
    }
    free(v);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
    return rc;
}
