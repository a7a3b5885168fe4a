/*
 * `make bench`, dlasim's side of the peer comparison (bench/peer_bench.sh):
 * one ONNX model through the public API only (dlasim/compiler.h).
 *
 *   model_bench MODEL.onnx INPUTS.f32 [--config NAME] [--calib N] [--runs N]
 *               [--float-runs N] [--threads N] [--overlap 0|1] [--threads-always]
 *
 * INPUTS.f32 holds raw float32 inputs of the model's input size, one after
 * another.  The model is loaded, calibrated on the first N inputs (timed:
 * calibration per image), compiled, its weights written to a device by one
 * untimed run; then --runs INT8 inferences and --float-runs float reference
 * inferences run over the inputs in turn, each path timed on its own.  One
 * JSON object on stdout: milliseconds per image (the best and the mean of the
 * runs), MACs of one inference, peak RSS of the process.  --overlap 0 runs
 * the device stepped (dlasim_options.overlap; on by default, as the CLI);
 * --threads-always shares work whatever the cores' link costs
 * (dlasim_options.threads_always).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dlasim/compiler.h"
#include "dlasim/dlasim.h"

struct bench_args {
    const char *model, *inputs, *config;
    unsigned calib, runs, float_runs, threads, overlap;
    int threads_always;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 20;
            char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got);
    fclose(f);
    *len = n;
    return buf;
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
    *a = (struct bench_args){ .config = "nv_small", .calib = 2, .runs = 4, .float_runs = 4,
                            .overlap = 1 };
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        unsigned *num = !strcmp(argv[i], "--calib")        ? &a->calib
                        : !strcmp(argv[i], "--runs")       ? &a->runs
                        : !strcmp(argv[i], "--float-runs") ? &a->float_runs
                        : !strcmp(argv[i], "--threads")    ? &a->threads
                        : !strcmp(argv[i], "--overlap")    ? &a->overlap
                                                           : NULL;
        if (!strcmp(argv[i], "--threads-always")) {
            a->threads_always = 1;
            continue;
        }
        if ((num || !strcmp(argv[i], "--config")) && i + 1 >= argc) {
            return -1;
        }
        if (num) {
            *num = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--config")) {
            a->config = argv[++i];
        } else if (pos == 0) {
            a->model = argv[i], pos++;
        } else if (pos == 1) {
            a->inputs = argv[i], pos++;
        } else {
            return -1;
        }
    }
    return pos == 2 && a->calib > 0 ? 0 : -1;
}

/* Times `runs` inferences of one path over the inputs in turn: best and mean ms. */
static int time_runs(struct dlasim_model *m, struct dlasim_dev *dev, const float *in, size_t count,
                     size_t in_n, float *out, unsigned runs, double *best, double *mean,
                     char *err, size_t errlen)
{
    double total = 0;
    *best = 0;
    for (unsigned r = 0; r < runs; r++) {
        const float *x = in + (r % count) * in_n;
        double t0 = now_ms();
        int rc = dev ? dlasim_model_run(m, dev, x, out, NULL, err, errlen)
                     : dlasim_model_run_float(m, x, out, err, errlen);
        double t = now_ms() - t0;
        if (rc) {
            return rc;
        }
        total += t;
        *best = r == 0 || t < *best ? t : *best;
    }
    *mean = runs ? total / runs : 0;
    return 0;
}

static int bench(const struct bench_args *a, char *err, size_t errlen)
{
    size_t mlen = 0, ilen = 0;
    void *buf = read_file(a->model, &mlen);
    float *in = read_file(a->inputs, &ilen);
    struct dlasim_model *m = NULL;
    struct dlasim_dev *dev = NULL;
    float *out = NULL;
    int rc = buf && in ? 0 : -1;
    if (rc) {
        snprintf(err, errlen, "cannot read %s", buf ? a->inputs : a->model);
    }
    rc = rc ? rc : dlasim_model_load_onnx(buf, mlen, &m, err, errlen);
    size_t in_n = m ? dlasim_model_input_size(m) : 1, count = ilen / sizeof(float) / in_n;
    if (!rc && count < a->calib) {
        snprintf(err, errlen, "%s: %zu inputs, fewer than --calib %u", a->inputs, count, a->calib);
        rc = -1;
    }
    double t0 = now_ms();
    rc = rc ? rc : dlasim_model_calibrate(m, in, a->calib, NULL, err, errlen);
    double calib_ms = (now_ms() - t0) / a->calib;
    rc = rc ? rc : dlasim_model_compile(m, a->config, err, errlen);
    struct dlasim_options o = { .config = a->config, .threads = a->threads,
                               .overlap = a->overlap != 0,
                               .threads_always = a->threads_always };
    rc = rc ? rc : dlasim_create(&o, &dev, err, errlen);
    out = m ? malloc(dlasim_model_output_size(m) * sizeof(float)) : NULL;
    rc = rc ? rc : out ? 0 : -1;
    double i8_best = 0, i8_mean = 0, f_best = 0, f_mean = 0;
    rc = rc ? rc : dlasim_model_run(m, dev, in, out, NULL, err, errlen); /* weights in */
    rc = rc ? rc : time_runs(m, dev, in, count, in_n, out, a->runs, &i8_best, &i8_mean, err, errlen);
    rc = rc ? rc
            : time_runs(m, NULL, in, count, in_n, out, a->float_runs, &f_best, &f_mean, err, errlen);
    if (!rc) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double gmac = (double)dlasim_model_macs(m) / 1e9;
        printf("{\"model\": \"%s\", \"config\": \"%s\", \"gmac\": %.4f, \"int8_ms_best\": %.3f, "
               "\"int8_ms_mean\": %.3f, \"float_ms_best\": %.3f, \"float_ms_mean\": %.3f, "
               "\"calib_ms_per_image\": %.3f, \"peak_rss_mb\": %.1f, \"model_bytes\": %zu}\n",
               a->model, a->config, gmac, i8_best, i8_mean, f_best, f_mean, calib_ms,
               ru.ru_maxrss / 1024.0, mlen);
    }
    free(out);
    dlasim_destroy(dev);
    dlasim_model_free(m);
    free(buf);
    free(in);
    return rc;
}

int main(int argc, char **argv)
{
    struct bench_args a;
    if (parse_args(argc, argv, &a)) {
        fprintf(stderr, "usage: model_bench MODEL.onnx INPUTS.f32 [--config NAME] [--calib N] "
                        "[--runs N] [--float-runs N] [--threads N] [--overlap 0|1] "
                        "[--threads-always]\n");
        return 2;
    }
    char err[512] = "";
    if (bench(&a, err, sizeof err)) {
        fprintf(stderr, "model_bench: %s\n", err);
        return 1;
    }
    return 0;
}
