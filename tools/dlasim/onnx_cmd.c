/*
 * `dlasim compile` and `dlasim run`: ONNX models on the simulated NVDLA.
 *
 *   dlasim compile MODEL.onnx --calib DATA [--calib-count N] [-o MODEL.nvdla]
 *                  [--config NAME] [--method minmax|percentile|entropy]
 *                  [--percentile P] [--scale S] [--mean M] [--check N]
 *                  [--min-sqnr DB]
 *   dlasim run MODEL.onnx --input FILE... [--calib DATA] [--calib-count N]
 *              [--labels FILE] [--names FILE] [--json OUT] [--times OUT] [--report]
 *              [--record-trace DIR] [--count N] [--compare-float] [--draw N]
 *              [--out-raw FILE] [--float-raw FILE] [--float-only]
 * --float-only runs only the float reference (no calibration, no device):
 * the outputs go to --float-raw.
 *              [--top K] [--progress] [--config NAME] [...]
 *
 * DATA and --input: PGM/PNG images, folders of them, IDX files
 * (*-idx3-ubyte[.gz], one input per record), raw float32 tensors or raw
 * bytes.  Without --calib, `run` calibrates on (up to --calib-count of) its
 * inputs.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dataset.h"
#include "dlasim/compiler.h"
#include "run_results.h"
#include "run_shard.h"
#include "shard.h"

#define MAX_FILES 256

struct onnx_opts {
    struct cli_common common;
    const char *model, *out, *labels, *names, *json, *record;
    const char *times;        /* --times FILE: the INT8 pass's wall time as JSON */
    const char *out_raw, *float_raw; /* outputs as raw float32 (INT8 dequantized; float reference) */
    const char *calib[MAX_FILES], *input[MAX_FILES];
    int n_calib, n_input;
    size_t calib_count, count;
    struct dlasim_calib_options copt;
    float scale, mean;
    int scale_set, mean_set;
    int report, compare_float, draw, top, progress, float_only;
    struct shard shard;       /* --shard I/N (count 0: the whole set) */
    const char *shard_out;    /* --shard-out FILE: the shard's JSON lines */
    size_t check;             /* compile: calibration inputs run on the device for the flags */
    double min_sqnr;          /* --min-sqnr DB: precision flags threshold */
};

/* A count option (--calib-count, --count, --draw, --top). */
static int parse_size(const char *opt, const char *v, size_t *out)
{
    return cli_parse_count(opt, v, (size_t)1 << 40, out);
}

/* --shard needs --shard-out (and the reverse), `run` of an ONNX model, and
 * no per-run timing (cycles of one shard are not the whole set's). */
static int check_shard_opts(const struct onnx_opts *o, int is_run)
{
    if (!o->shard.count != !o->shard_out) {
        fprintf(stderr, "dlasim: --shard I/N and --shard-out FILE go together\n");
        return -1;
    }
    size_t ml = o->model ? strlen(o->model) : 0;
    if (o->shard.count && (!is_run || (ml > 6 && !strcmp(o->model + ml - 6, ".nvdla")))) {
        fprintf(stderr, "dlasim: --shard splits `dlasim run MODEL.onnx` over its inputs only\n");
        return -1;
    }
    if (o->shard.count && (o->out_raw || o->float_raw || o->float_only)) {
        fprintf(stderr, "dlasim run: --shard does not split --out-raw, --float-raw or --float-only\n");
        return -1;
    }
    if (o->shard.count && o->json) {
        fprintf(stderr, "dlasim run: with --shard, give --json FILE to `dlasim merge`\n");
        return -1;
    }
    if (o->shard.count && o->common.timing) {
        fprintf(stderr, "dlasim run: --shard with --timing is not supported: the cycle model's "
                        "per-run totals are not split into shards\n");
        return -1;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, struct onnx_opts *o, int is_run)
{
    memset(o, 0, sizeof *o);
    o->common.overlap = 1; /* the runtime drives the device: layers overlap its servicing */
    o->calib_count = 500;
    o->top = 3;
    o->copt.method = DLASIM_CALIB_MINMAX;
    o->copt.percentile = 99.99;
    o->check = 4;
    o->min_sqnr = 20.0;
    const char **list = NULL;
    int *nlist = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = cli_common_option(&o->common, argc, argv, &i);
        if (rc < 0) {
            return -1;
        }
        if (rc) {
            list = NULL;
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--calib")) {
            list = o->calib, nlist = &o->n_calib;
            takes = 0;
        } else if (!strcmp(a, "--input")) {
            list = o->input, nlist = &o->n_input;
            takes = 0;
        } else if (!strcmp(a, "--report")) {
            o->report = 1, takes = 0, list = NULL;
        } else if (!strcmp(a, "--compare-float")) {
            o->compare_float = 1, takes = 0, list = NULL;
        } else if (!strcmp(a, "--float-only")) {
            o->float_only = 1, takes = 0, list = NULL;
        } else if (!strcmp(a, "--progress")) {
            o->progress = 1, takes = 0, list = NULL;
        } else if (a[0] == '-' && a[1] && !v) {
            fprintf(stderr, "dlasim: %s needs a value (or is unknown)\n", a);
            return -1;
        } else if (!strcmp(a, "-o")) {
            o->out = v;
        } else if (!strcmp(a, "--labels")) {
            o->labels = v;
        } else if (!strcmp(a, "--names")) {
            o->names = v;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else if (!strcmp(a, "--times")) {
            o->times = v;
        } else if (!strcmp(a, "--out-raw")) {
            o->out_raw = v;
        } else if (!strcmp(a, "--float-raw")) {
            o->float_raw = v, o->compare_float = 1;
        } else if (!strcmp(a, "--record-trace")) {
            o->record = v;
        } else if (!strcmp(a, "--shard")) {
            if (shard_parse(a, v, &o->shard)) {
                return -1;
            }
        } else if (!strcmp(a, "--shard-out")) {
            o->shard_out = v;
        } else if (!strcmp(a, "--calib-count")) {
            if (parse_size(a, v, &o->calib_count)) {
                return -1;
            }
        } else if (!strcmp(a, "--count")) {
            if (parse_size(a, v, &o->count)) {
                return -1;
            }
        } else if (!strcmp(a, "--check") && !is_run) {
            if (parse_size(a, v, &o->check)) {
                return -1;
            }
        } else if (!strcmp(a, "--min-sqnr")) {
            if (cli_parse_double(a, v, 0, 200, &o->min_sqnr)) {
                return -1;
            }
        } else if (!strcmp(a, "--draw")) {
            size_t n;
            if (parse_size(a, v, &n)) {
                return -1;
            }
            o->draw = (int)(n > 100 ? 100 : n);
        } else if (!strcmp(a, "--top")) {
            size_t n;
            if (parse_size(a, v, &n)) {
                return -1;
            }
            o->top = (int)(n > 100 ? 100 : n);
        } else if (!strcmp(a, "--scale")) {
            /* pixel byte * scale - mean: a finite, non-zero factor */
            if (cli_parse_float(a, v, -1e6, 1e6, &o->scale)) {
                return -1;
            }
            if (o->scale == 0) {
                fprintf(stderr, "dlasim: --scale 0 would make every input 0\n");
                return -1;
            }
            o->scale_set = 1;
        } else if (!strcmp(a, "--mean")) {
            if (cli_parse_float(a, v, -1e6, 1e6, &o->mean)) {
                return -1;
            }
            o->mean_set = 1;
        } else if (!strcmp(a, "--percentile")) {
            if (cli_parse_double(a, v, 1e-6, 100, &o->copt.percentile)) {
                return -1;
            }
        } else if (!strcmp(a, "--method")) {
            if (!strcmp(v, "minmax")) {
                o->copt.method = DLASIM_CALIB_MINMAX;
            } else if (!strcmp(v, "percentile")) {
                o->copt.method = DLASIM_CALIB_PERCENTILE;
            } else if (!strcmp(v, "entropy") || !strcmp(v, "kl")) {
                o->copt.method = DLASIM_CALIB_ENTROPY;
            } else {
                fprintf(stderr, "dlasim: --method is minmax, percentile or entropy, got '%s'\n", v);
                return -1;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "dlasim: unknown option %s (see dlasim --help)\n", a);
            return -1;
        } else if (list) {
            if (*nlist == MAX_FILES) {
                fprintf(stderr, "dlasim: at most %d files per option\n", MAX_FILES);
                return -1;
            }
            list[(*nlist)++] = a;
            takes = 0;
        } else if (!o->model) {
            o->model = a;
            takes = 0;
        } else {
            fprintf(stderr, "dlasim: unexpected argument '%s'\n", a);
            return -1;
        }
        if (takes) {
            i++;
            list = NULL;
        }
    }
    if (!o->model) {
        fprintf(stderr, "dlasim: no model given\n");
        return -1;
    }
    if (o->record && cli_check_output_dir("--record-trace", o->record)) {
        return -1;
    }
    /* the ONNX compiler emits NVDLA layers (src/compiler): say so here rather
     * than fail later on a parameter the RK3588 does not have */
    if (o->common.config && !strncmp(o->common.config, "rk", 2)) {
        fprintf(stderr, "dlasim: --config %s: the ONNX compiler targets the NVDLA configurations "
                        "(nv_small, nv_small_256, nv_large); the RK3588 runs regcmd lists "
                        "(dlasim rk)\n", o->common.config);
        return -1;
    }
    if (!is_run && o->n_calib == 0) {
        fprintf(stderr, "dlasim compile: --calib DATA is required (images, IDX or raw tensors)\n");
        return -1;
    }
    if (is_run && o->n_input == 0) {
        fprintf(stderr, "dlasim run: --input FILE... is required\n");
        return -1;
    }
    return check_shard_opts(o, is_run);
}

static int load_data(const struct onnx_opts *o, const struct dlasim_model *m, const char *const *files,
                     int n, size_t limit, struct dataset *d)
{
    int64_t dims[6];
    int rank = dlasim_model_input_shape(m, dims);
    dataset_init(d, dims, rank, dlasim_model_input_size(m));
    d->max_bytes = cli_max_mem(&o->common);
    if (o->scale_set) {
        d->scale = o->scale;
    }
    if (o->mean_set) {
        d->mean = o->mean;
    }
    for (int i = 0; i < n; i++) {
        if (limit && d->count >= limit) {
            break;
        }
        if (dataset_add(d, files[i], limit ? limit - d->count : 0)) {
            return -1;
        }
    }
    if (d->count == 0) {
        fprintf(stderr, "dlasim: no inputs found in the given files\n");
        return -1;
    }
    return 0;
}

static struct dlasim_model *load_model(const char *path, uint64_t max_bytes)
{
    uint8_t *buf;
    size_t len;
    if (cli_read_file_max(path, max_bytes, &buf, &len)) {
        return NULL;
    }
    struct dlasim_model *m = NULL;
    char err[1024];
    int rc = dlasim_model_load_onnx(buf, len, &m, err, sizeof err);
    free(buf);
    if (rc) {
        fprintf(stderr, "dlasim: %s: %s\n", path, err);
        return NULL;
    }
    return m;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *method_name(enum dlasim_calib_method m)
{
    return m == DLASIM_CALIB_MINMAX ? "min/max" : m == DLASIM_CALIB_PERCENTILE ? "percentile" : "entropy (KL)";
}

/* dlasim compile: the first `check` calibration inputs run on a simulated
 * device with per-layer statistics, so that the compile report's precision
 * flags include the measured SQNR and constant channels.  A failure is
 * reported and skips the check (0). */
static int precision_check(const struct onnx_opts *o, struct dlasim_model *m,
                           const struct dataset *cal)
{
    size_t n = cal->count < o->check ? cal->count : o->check;
    if (!n) {
        return 0;
    }
    struct dlasim_dev *dev = cli_create_device(&o->common);
    float *y = malloc(dlasim_model_output_size(m) * sizeof(float) + 1);
    char err[1024];
    int rc = dev && y ? 0 : -1;
    dlasim_model_stats_begin(m, (unsigned)n); /* statistics for these n runs only */
    for (size_t i = 0; i < n && !rc; i++) {
        if (dlasim_model_run(m, dev, cal->data + i * cal->in_n, y, NULL, err, sizeof err)) {
            /* the compile itself stands: `run` reports the same failure */
            fprintf(stderr, "dlasim compile: precision check skipped: calibration input %zu: %s\n",
                    i, err);
            rc = -1;
        }
    }
    if (!rc) {
        printf("precision check: %zu calibration inputs run on the simulated %s\n", n,
               o->common.config ? o->common.config : "nv_small");
    } else {
        dlasim_model_stats_begin(m, 1); /* no partial statistics in the flags (nothing runs after) */
    }
    free(y);
    if (dev) {
        dlasim_destroy(dev);
    }
    return 0;
}

/* Load, calibrate and compile; prints what it does. */
static struct dlasim_model *prepare(const struct onnx_opts *o, const char *const *calib_files,
                                    int n_calib, int is_compile)
{
    struct dlasim_model *m = load_model(o->model, cli_max_mem(&o->common));
    if (!m) {
        return NULL;
    }
    dlasim_model_set_min_sqnr(m, o->min_sqnr);
    struct dataset cal;
    if (load_data(o, m, calib_files, n_calib, o->calib_count, &cal)) {
        dataset_free(&cal);
        dlasim_model_free(m);
        return NULL;
    }
    char err[1024];
    double t0 = now();
    struct dlasim_calib_options copt = o->copt;
    copt.max_host_mem = cli_max_mem(&o->common); /* live float tensors of one run */
    copt.max_work = o->common.max_work;          /* one node's float work */
    int rc = dlasim_model_calibrate(m, cal.data, cal.count, &copt, err, sizeof err);
    if (!rc) {
        printf("calibrated on %zu inputs (%s) in %.2f s\n", cal.count, method_name(o->copt.method),
               now() - t0);
        rc = dlasim_model_compile_set(m, o->common.config, o->common.sets, o->common.nsets, err,
                                      sizeof err);
    }
    if (rc) {
        fprintf(stderr, "dlasim: %s: %s\n", o->model, err);
    } else if (is_compile) {
        rc = precision_check(o, m, &cal);
    }
    dataset_free(&cal);
    if (rc) {
        dlasim_model_free(m);
        return NULL;
    }
    char *rep = dlasim_model_compile_report(m);
    if (rep) {
        fputs(rep, stdout);
        free(rep);
    }
    return m;
}

int cmd_compile(int argc, char **argv)
{
    struct onnx_opts o;
    if (parse_opts(argc, argv, &o, 0)) {
        return 2;
    }
    struct dlasim_model *m = prepare(&o, o.calib, o.n_calib, 1);
    if (!m) {
        return 1;
    }
    int rc = 0;
    if (o.out && ((o.scale_set && o.scale != 1.0f / 255.0f) || (o.mean_set && o.mean != 0))) {
        /* the runtime converts a loadable's image input itself (p / 255 at
         * 1/127 per step): other pixel conversions cannot travel with it */
        fprintf(stderr, "dlasim compile: -o %s: --scale/--mean change how pixels become inputs, "
                        "but a loadable's input is converted by the runtime as p / 255; they apply "
                        "to `dlasim run MODEL.onnx` only\n", o.out);
        dlasim_model_free(m);
        return 2;
    }
    if (o.out) {
        uint8_t *file = NULL;
        size_t len = 0;
        char err[1024];
        if (dlasim_model_write_loadable(m, &file, &len, err, sizeof err)) {
            fprintf(stderr, "dlasim compile: %s: %s\n", o.out, err);
            rc = 1;
        } else {
            if (cli_write_file(o.out, file, len)) {
                rc = 1;
            } else {
                printf("wrote %s (%zu bytes)\n", o.out, len);
            }
        }
        free(file);
    }
    dlasim_model_free(m);
    return rc;
}

/* ---- run ------------------------------------------------------------------------------- */

/* Class names, one a line; *n = -1 (printed) when the file cannot be read
 * (a missing file or a folder is an error, not "no names"). */
static char **load_names(const char *path, int *n)
{
    *n = 0;
    if (!path) {
        return NULL;
    }
    uint8_t *b;
    size_t len;
    if (cli_read_file_max(path, (uint64_t)64 << 20, &b, &len)) {
        *n = -1;
        return NULL;
    }
    char **names = NULL;
    size_t p = 0;
    while (p < len && *n < 100000) {
        size_t e = p;
        while (e < len && b[e] != '\n') {
            e++;
        }
        size_t l = e > p && b[e - 1] == '\r' ? e - p - 1 : e - p;
        char **nn = realloc(names, (size_t)(*n + 1) * sizeof *nn);
        char *name = nn ? malloc(l + 1) : NULL;
        if (!name) {
            names = nn ? nn : names;
            break;
        }
        memcpy(name, b + p, l);
        name[l] = 0;
        names = nn;
        names[(*n)++] = name;
        p = e + 1;
    }
    free(b);
    return names;
}

/* `dlasim run MODEL.nvdla`: each input image through the loadable runner
 * (dlasim_loadable_run on a fresh device, as nvdla_runtime runs one
 * submit), its pixels converted as nvdla_runtime converts a PGM
 * (floor(p * 127 / 255 + 0.5): the quantization the compiler gives an input
 * calibrated on [0, 1] images).  Outputs are the int8 values of the output
 * tensor (a loadable does not carry their scale). */
static int run_loadable(const struct onnx_opts *o)
{
    if (o->scale_set || o->mean_set) {
        fprintf(stderr, "dlasim run: a loadable takes images as nvdla_runtime converts them; "
                        "--scale/--mean apply to .onnx models only\n");
        return 2;
    }
    uint8_t *file;
    size_t flen;
    if (cli_read_file(o->model, &file, &flen)) {
        return 1;
    }
    struct dlasim_loadable *ld = NULL;
    char err[1024];
    if (dlasim_loadable_open(file, flen, &ld, err, sizeof err)) {
        fprintf(stderr, "dlasim run: %s: %s\n", o->model, err);
        free(file);
        return 1;
    }
    free(file);
    /* the images (geometry from the first file: IDX records or PGM/PNG) */
    int64_t dims[4] = { 1, 1, 0, 0 };
    struct dataset in;
    memset(&in, 0, sizeof in);
    int rc = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        dataset_free(&in);
        dataset_init(&in, dims, 4, (size_t)(dims[2] * dims[3]));
        in.max_bytes = cli_max_mem(&o->common);
        in.w = (uint32_t)dims[3], in.h = (uint32_t)dims[2];
        for (int i = 0; i < o->n_input && !rc; i++) {
            rc = dataset_probe(&in, o->input[i], dims);
        }
        if (!rc && pass == 1) {
            for (int i = 0; i < o->n_input && !rc; i++) {
                if (o->count && in.count >= o->count) {
                    break;
                }
                rc = dataset_add(&in, o->input[i], o->count ? o->count - in.count : 0);
            }
        }
    }
    uint8_t *labels = NULL;
    size_t n_labels = 0;
    if (!rc && o->labels && labels_load(o->labels, &labels, &n_labels)) {
        rc = -1;
    }
    if (!rc && labels && n_labels < in.count) {
        fprintf(stderr, "dlasim run: %s has %zu labels for %zu inputs\n", o->labels, n_labels, in.count);
        rc = -1;
    }
    int n_names = 0;
    char **names = rc ? NULL : load_names(o->names, &n_names);
    if (n_names < 0) {
        rc = -1;
        n_names = 0;
    }
    size_t npx = (size_t)in.w * in.h, on = 0, correct = 0;
    char hdr[64];
    int hl = snprintf(hdr, sizeof hdr, "P5\n%u %u\n255\n", in.w, in.h);
    uint8_t *pgm = malloc((size_t)hl + npx);
    float *out = NULL;
    rc = rc || !pgm ? -1 : 0;
    if (!rc) {
        memcpy(pgm, hdr, (size_t)hl);
    }
    double t0 = now();
    for (size_t i = 0; i < in.count && !rc; i++) {
        for (size_t k = 0; k < npx; k++) {
            float v = in.data[i * in.in_n + k] * 255.0f + 0.5f;
            pgm[hl + k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
        struct dlasim_dev *dev = cli_create_device(&o->common);
        struct dlasim_loadable_input li = { pgm, (size_t)hl + npx };
        struct dlasim_rt_options ropt;
        memset(&ropt, 0, sizeof ropt);
        ropt.record_trace_dir = o->record;
        if (!dev || dlasim_loadable_run(dev, ld, &li, 1, o->record ? &ropt : NULL, err, sizeof err)) {
            fprintf(stderr, "dlasim run: input %zu: %s\n", i, dev ? err : "no device");
            rc = -1;
        }
        dlasim_destroy(dev);
        const uint8_t *d;
        size_t dn;
        if (!rc && dlasim_loadable_output_dimg(ld, 0, &d, &dn) == 0 && dn > 36) {
            if (!out) {
                on = dn - 36;
                out = malloc(in.count * on * sizeof(float));
                rc = out ? 0 : -1;
            }
            for (size_t k = 0; !rc && k < on && 36 + k < dn; k++) {
                out[i * on + k] = (float)(int8_t)d[36 + k];
            }
            if (!rc && labels) {
                correct += run_argmax(out + i * on, on) == labels[i];
            }
            if (!rc && i < 10) {
                printf("input %zu (int8 output):", i);
                run_print_top(stdout, out + i * on, on, o->top, names, n_names);
            }
        }
    }
    double t = now() - t0;
    if (!rc) {
        printf("loadable on simulated %s: %zu inputs in %.2f s (%.3f ms per input, a fresh device "
               "each)\n", o->common.config ? o->common.config : "nv_small", in.count, t,
               1e3 * t / (double)(in.count ? in.count : 1));
    }
    double acc = labels && in.count ? (double)correct / (double)in.count : 0;
    if (!rc && labels) {
        printf("top-1 accuracy: %.2f %% (%zu / %zu)\n", 100 * acc, correct, in.count);
    }
    if (!rc && o->json && run_write_json(o->json, labels != NULL, acc, in.count, out, on)) {
        rc = -1;
    }
    for (int i = 0; i < n_names; i++) {
        free(names[i]);
    }
    free(names);
    free(out);
    free(pgm);
    free(labels);
    dataset_free(&in);
    dlasim_loadable_close(ld);
    return rc ? 1 : 0;
}

/* The per-layer quantization report over (up to) the first 300 inputs of the
 * whole set, outside the timing (tmp: out_n floats of scratch); NULL and
 * *rc = -1 after printing on failure. */
static char *layer_report(struct dlasim_model *m, struct dlasim_dev *dev, const struct dataset *in,
                          float *tmp, int *rc)
{
    size_t n = in->count < 300 ? in->count : 300;
    char err[1024];
    dlasim_model_stats_begin(m, 0);
    for (size_t i = 0; i < n; i++) {
        if (dlasim_model_run(m, dev, in->data + i * in->in_n, tmp, NULL, err, sizeof err)) {
            fprintf(stderr, "dlasim run: input %zu: %s\n", i, err);
            *rc = -1;
            return NULL;
        }
    }
    static const char head[] =
        "per-layer quantization over %zu inputs: scales (float per int8 step), SDP shifts,\n"
        "saturated outputs and the SQNR of the layer's INT8 output against float:\n";
    char *rep = dlasim_model_layer_report(m);
    size_t len = sizeof head + 32 + (rep ? strlen(rep) : 0);
    char *s = malloc(len);
    if (s) {
        int k = snprintf(s, len, head, n);
        snprintf(s + k, len - (size_t)k, "%s", rep ? rep : "");
    }
    free(rep);
    *rc = s ? *rc : -1;
    return s;
}

/* Pictures of the inputs --draw picks that lie in [first, end) (the others NULL). */
static char **make_drawings(const struct dataset *in, int draw, size_t first, size_t end)
{
    char **d = calloc((size_t)(draw > 0 ? draw : 1), sizeof *d);
    for (int i = 0; d && i < draw && (size_t)i < in->count; i++) {
        size_t k = run_draw_index((size_t)i, in->count, draw);
        if (k >= first && k < end) {
            d[i] = run_draw(in->data + k * in->in_n, in->h, in->w);
        }
    }
    return d;
}

/* The INT8 runs of inputs [first, end) into out (after a first run that
 * loads the weights, outside the clock), with their timing line. */
static int run_int8(const struct onnx_opts *o, struct dlasim_model *m, struct dlasim_dev *dev,
                    const struct dataset *in, size_t first, size_t end, float *out, size_t on,
                    double *seconds)
{
    struct dlasim_rt_options ropt;
    memset(&ropt, 0, sizeof ropt);
    ropt.record_trace_dir = o->record;
    char err[1024];
    int tty = isatty(1);
    const char *config = o->common.config ? o->common.config : "nv_small";
    /* the first run writes the weights into device memory: done before the clock starts */
    if (dlasim_model_run(m, dev, in->data + first * in->in_n, out + first * on, NULL, err, sizeof err)) {
        fprintf(stderr, "dlasim run: input %zu: %s\n", first, err);
        return -1;
    }
    if (o->common.timing) { /* time the measured inferences only, not the weight load */
        dlasim_timing_clear(dev);
    }
    size_t n = end - first;
    double t0 = now();
    for (size_t i = first; i < end; i++) {
        if (dlasim_model_run(m, dev, in->data + i * in->in_n, out + i * on, o->record ? &ropt : NULL,
                             err, sizeof err)) {
            fprintf(stderr, "dlasim run: input %zu: %s\n", i, err);
            return -1;
        }
        if (o->progress && (i + 1 - first) % 500 == 0) {
            fprintf(tty ? stdout : stderr, "%s  %zu / %zu inputs on the simulated %s (%.1f s)%s",
                    tty ? "\r" : "", i + 1 - first, n, config, now() - t0, tty ? "" : "\n");
            fflush(tty ? stdout : stderr);
        }
    }
    double t_int8 = now() - t0;
    *seconds = t_int8;
    if (o->progress && tty) {
        printf("\n");
    }
    uint64_t macs = dlasim_model_macs(m);
    double nd = (double)(n ? n : 1);
    printf("INT8 on simulated %s: %zu inputs in %.2f s (%.3f ms per input, %.2f GMAC/s; "
           "weights loaded before)\n",
           config, n, t_int8, 1e3 * t_int8 / nd, (double)macs * (double)n / t_int8 / 1e9);
    if (o->common.timing) {
        timing_print_network(dev, stdout, o->common.clock_mhz > 0 ? o->common.clock_mhz : 1000.0, n);
    }
    return 0;
}

/* --times FILE: {"images": N, "int8_seconds": T}, the wall time of the INT8
 * pass (weights loaded before), for `make demo`'s comparison with ONNX
 * Runtime (bench/demo_peer.sh); kept out of --json, which a merge of shards
 * reproduces byte for byte. */
static int write_times(const char *path, size_t n, double seconds)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlasim run: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"images\": %zu, \"int8_seconds\": %.6f}\n", n, seconds);
    return cli_close_output(f, path);
}

/* The float reference of inputs [first, end) into fout, with its timing line. */
static int run_float(const struct onnx_opts *o, struct dlasim_model *m, const struct dataset *in,
                     size_t first, size_t end, float *fout, size_t on)
{
    char err[1024];
    int tty = isatty(1);
    double t1 = now();
    for (size_t i = first; i < end; i++) {
        if (dlasim_model_run_float(m, in->data + i * in->in_n, fout + i * on, err, sizeof err)) {
            fprintf(stderr, "dlasim run: float input %zu: %s\n", i, err);
            return -1;
        }
        if (o->progress && (i + 1 - first) % 1000 == 0) {
            fprintf(tty ? stdout : stderr, "%s  %zu / %zu inputs in float (reference) (%.1f s)%s",
                    tty ? "\r" : "", i + 1 - first, end - first, now() - t1, tty ? "" : "\n");
            fflush(tty ? stdout : stderr);
        }
    }
    printf("%sfloat reference: %zu inputs in %.2f s\n", o->progress && tty ? "\n" : "",
           end - first, now() - t1);
    return 0;
}

/* Opens this shard's JSON-lines file and writes its header before any input
 * runs, so a shard that cannot write fails at once (run_shard.c). */
static FILE *open_shard(const struct onnx_opts *o, int argc, char **argv, struct dlasim_model *m,
                        struct run_shard *job)
{
    static const struct shard_drop drop[] = {
        { "--shard", 1 }, { "--shard-out", 1 }, { "--progress", 0 }, { "--threads", 1 },
    };
    char *args = shard_args(argc, argv, drop, sizeof drop / sizeof drop[0]);
    char *compile_report = dlasim_model_compile_report(m);
    job->path = o->shard_out, job->shard = &o->shard, job->args = args;
    job->model_path = o->model, job->compile_report = compile_report;
    job->report_wanted = o->report;
    FILE *f = args ? run_shard_open(job) : NULL;
    free(compile_report);
    free(args);
    job->args = job->compile_report = NULL;
    return f;
}

static int write_raw(const char *path, const float *v, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(v, sizeof *v, n, f) == n;
    if (f && fclose(f)) {
        ok = 0;
    }
    if (!ok) {
        fprintf(stderr, "dlasim run: cannot write %s\n", path);
    }
    return ok ? 0 : -1;
}

/* dlasim run --float-only: the float reference on the inputs, outputs to --float-raw. */
static int run_float_only(const struct onnx_opts *o)
{
    struct dlasim_model *m = load_model(o->model, cli_max_mem(&o->common));
    if (!m) {
        return 1;
    }
    struct dataset in;
    int rc = load_data(o, m, o->input, o->n_input, o->count, &in);
    size_t on = dlasim_model_output_size(m);
    float *y = rc ? NULL : malloc((in.count ? in.count : 1) * on * sizeof(float));
    char err[1024];
    rc = y ? 0 : -1;
    for (size_t i = 0; !rc && i < in.count; i++) {
        if (dlasim_model_run_float(m, in.data + i * in.in_n, y + i * on, err, sizeof err)) {
            fprintf(stderr, "dlasim run: float input %zu: %s\n", i, err);
            rc = -1;
        }
    }
    if (!rc) {
        printf("float reference: %zu inputs, %zu outputs each\n", in.count, on);
    }
    if (!rc && o->float_raw && write_raw(o->float_raw, y, in.count * on)) {
        rc = -1;
    }
    free(y);
    dataset_free(&in);
    dlasim_model_free(m);
    return rc ? 1 : 0;
}

int cmd_run(int argc, char **argv)
{
    struct onnx_opts o;
    if (parse_opts(argc, argv, &o, 1)) {
        return 2;
    }
    if (o.float_only) {
        return run_float_only(&o);
    }
    size_t ml = strlen(o.model);
    if (ml > 6 && !strcmp(o.model + ml - 6, ".nvdla")) {
        return run_loadable(&o);
    }
    struct dlasim_model *m = prepare(&o, o.n_calib ? o.calib : o.input,
                                     o.n_calib ? o.n_calib : o.n_input, 0);
    if (!m) {
        return 1;
    }
    struct dataset in;
    int rc = load_data(&o, m, o.input, o.n_input, o.count, &in);
    uint8_t *labels = NULL;
    size_t n_labels = 0;
    if (!rc && o.labels && labels_load(o.labels, &labels, &n_labels)) {
        rc = -1;
    }
    if (!rc && labels && n_labels < in.count) {
        fprintf(stderr, "dlasim run: %s has %zu labels for %zu inputs\n", o.labels, n_labels, in.count);
        rc = -1;
    }
    struct dlasim_dev *dev = rc ? NULL : cli_create_device(&o.common);
    if (!dev) {
        dataset_free(&in);
        free(labels);
        dlasim_model_free(m);
        return 1;
    }
    int n_names = 0;
    char **names = load_names(o.names, &n_names);
    if (n_names < 0) {
        rc = -1;
        n_names = 0;
    }
    size_t on = dlasim_model_output_size(m), first, end;
    shard_range(&o.shard, in.count, &first, &end);
    float *out = calloc(in.count * on, sizeof(float));
    float *fout = o.compare_float ? calloc(in.count * on, sizeof(float)) : NULL;
    int *fpred = o.compare_float ? calloc(in.count, sizeof(int)) : NULL;
    float *tmp = malloc(on * sizeof(float));
    rc = rc || !out || !tmp || (o.compare_float && (!fout || !fpred)) ? -1 : 0;
    struct run_results r = {
        .config = o.common.config ? o.common.config : "nv_small", .count = in.count, .out_n = on,
        .out = out, .labels = labels, .fpred = fpred, .fout = fout, .top = o.top, .names = names,
        .n_names = n_names, .draw = o.draw,
    };
    struct run_shard job = { .in = &in, .results = &r, .first = first, .end = end };
    FILE *shard_file = !rc && o.shard.count ? open_shard(&o, argc, argv, m, &job) : NULL;
    rc = o.shard.count && !shard_file ? -1 : rc;
    double int8_s = 0;
    rc = rc ? rc : run_int8(&o, m, dev, &in, first, end, out, on, &int8_s);
    rc = rc || !o.times ? rc : write_times(o.times, end - first, int8_s);
    rc = rc || !fout ? rc : run_float(&o, m, &in, first, end, fout, on);
    for (size_t i = first; fpred && i < end; i++) {
        fpred[i] = run_argmax(fout + i * on, on);
    }
    char *report = NULL;
    if (!rc && o.report && (!o.shard.count || o.shard.index == 0)) {
        report = layer_report(m, dev, &in, tmp, &rc);
    }
    char **drawings = make_drawings(&in, o.draw, first, end);
    rc = !drawings ? -1 : rc;
    r.drawings = drawings, r.report = report;
    if (shard_file) {
        rc = run_shard_finish(shard_file, &job, rc);
        if (!rc) {
            printf("shard %u/%u: %zu inputs (from input %zu) of %zu written to %s\n",
                   o.shard.index, o.shard.count, end - first, first, in.count, o.shard_out);
        }
    } else if (!rc) {
        run_results_print(&r, stdout);
        rc = o.json ? run_results_write_json(&r, o.json) : 0;
        if (!rc && ((o.out_raw && write_raw(o.out_raw, out, in.count * on)) ||
                    (o.float_raw && write_raw(o.float_raw, fout, in.count * on)))) {
            rc = -1;
        }
    }
    for (int i = 0; drawings && i < o.draw; i++) {
        free(drawings[i]);
    }
    for (int i = 0; i < n_names; i++) {
        free(names[i]);
    }
    free(drawings);
    free(names);
    free(report);
    free(fpred);
    free(tmp);
    free(out);
    free(fout);
    free(labels);
    dataset_free(&in);
    dlasim_destroy(dev);
    dlasim_model_free(m);
    return rc ? 1 : 0;
}
