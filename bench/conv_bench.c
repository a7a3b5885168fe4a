/*
 * `dlasim bench`: convolution performance table (make bench).
 *
 *   dlasim bench [--config NAME] [--threads N] [--json FILE] [--quick]
 *                [--profile] [--reps N] [--match GLOB] [--suite DIR]
 *
 * Default JSON file: build/bench.json (as `make bench` runs it from the
 * project folder); --json '' writes none.
 *
 * Rows:
 *   - every dc_* case of the conformance suite of the configuration
 *     (DIR/<config>, DIR = ../shared/conformance/nvdla-traces): the trace is
 *     parsed once, then played on a fresh device per run through the public
 *     trace API (timed: memory loads of the trace, CSB programming, the
 *     layer, the CRC check); MACs from the CSC registers the trace programs
 *     (captured from the device's register log in a first, untimed run that
 *     also checks the CRC);
 *   - ResNet-18's convolution layers at 224x224 on random int8 data, planned
 *     and programmed through the CSB by the driver-side planner
 *     (include/dlasim/conv.h): conv1 7x7/2 as a direct convolution of a
 *     3-channel feature cube, the 3x3 layers of layer1..layer4 (stride-2
 *     ones included) and the 1x1/2 downsample layers, each distinct shape
 *     once with its count in the network; timed: dlasim_conv_run
 *     (programming every hardware layer through the CSB + dlasim_run), with
 *     input and weights already in device memory; each output is checked
 *     against the reference + CACC truncation + SDP conversion.
 * The reference is dla_conv_s8_ref (plain C, one thread) on the same
 * geometry, run once per layer (tiny layers: repeated to >= 20 ms).
 * Totals: ResNet-18's 3x3 layers (the acceptance figure) and all its
 * convolution layers, MAC-weighted (total MACs / total time).
 */
#include <errno.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_rk.h"
#include "cli.h"
#include "dlasim/conv.h"
#include "dlasim/trace.h"
#include "kernels/conv_s8.h"
#include "regs/gen/nvdla_regs.h"

#define FIELD(v, F) (((uint32_t)(v) & F##__MASK) >> F##__SHIFT)

/* ---- options and results ------------------------------------------------------- */

struct bench_args {
    struct cli_common common;
    const char *json;      /* --json FILE ("" = none) */
    const char *suite;     /* --suite DIR (folder of the per-config suites) */
    int quick;             /* --quick: one run per row */
    int profile;           /* --profile: fast kernel alone vs the pipeline */
    unsigned reps;         /* --reps N */
    const char *match;     /* --match GLOB: only rows whose name matches */
};

struct row {
    char name[96];
    const char *kind;      /* "trace", "resnet18" or "rk3588" */
    unsigned count;        /* occurrences in the network */
    int is3x3;
    size_t hw_layers;
    char plan[64];         /* CBUF split, weight mode */
    uint64_t macs;         /* one occurrence */
    double ms, ref_ms;     /* one occurrence */
    double kernel_ms;      /* --profile: the fast kernel alone */
    int checked, ok;
    char note[160];
};

struct table {
    struct row *rows;
    size_t n, cap;
};

static struct row *add_row(struct table *t)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        struct row *r = realloc(t->rows, cap * sizeof(*r));
        if (!r) {
            return NULL;
        }
        t->rows = r;
        t->cap = cap;
    }
    struct row *r = &t->rows[t->n++];
    memset(r, 0, sizeof(*r));
    r->count = 1;
    return r;
}

/* ---- helpers ---------------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t rng_state;

static uint64_t splitmix64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill_random(int8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = splitmix64();
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++) {
        p[i] = (int8_t)splitmix64();
    }
}

static double gmacs(uint64_t macs, double ms)
{
    return ms > 0 ? (double)macs / ms * 1e-6 : 0.0;
}

static unsigned online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Time the plain reference on geometry g (random data): once, or repeated
 * to at least 20 ms for tiny layers; returns ms per run, or -1. */
static double time_reference(const struct dla_conv_geom *g, const int8_t *in, const int8_t *wt,
                             int32_t *out)
{
    double total = 0;
    unsigned runs = 0;
    while (total < 20.0 || runs == 0) {
        double t0 = now_ms();
        dla_conv_s8_ref(g, in, wt, out);
        total += now_ms() - t0;
        runs++;
        if (runs >= 10000) {
            break;
        }
    }
    return total / runs;
}

/* Random data for a reference run on g; 0 or -1 (no memory). */
struct ref_bufs {
    int8_t *in, *wt;
    int32_t *out;
};

static int ref_alloc(const struct dla_conv_geom *g, struct ref_bufs *b)
{
    size_t n_in = (size_t)g->in_w * g->in_h * g->in_c;
    size_t n_wt = (size_t)g->out_k * g->in_c * g->k_w * g->k_h;
    size_t n_out = (size_t)g->out_w * g->out_h * g->out_k;
    b->in = malloc(n_in ? n_in : 1);
    b->wt = malloc(n_wt ? n_wt : 1);
    b->out = malloc((n_out ? n_out : 1) * sizeof(int32_t));
    if (!b->in || !b->wt || !b->out) {
        return -1;
    }
    fill_random(b->in, n_in);
    fill_random(b->wt, n_wt);
    return 0;
}

static void ref_free(struct ref_bufs *b)
{
    free(b->in);
    free(b->wt);
    free(b->out);
    memset(b, 0, sizeof(*b));
}

/* ---- trace rows ------------------------------------------------------------------- */

/* CSC registers of a layer, per register group, captured from the log. */
enum csc_reg {
    R_DATAIN_EXT_0, R_DATAIN_EXT_1, R_WEIGHT_EXT_0, R_WEIGHT_EXT_1, R_DATAOUT_0, R_STRIDE,
    R_DILATION, R_BANK, R_N
};

static const uint32_t csc_addr[R_N] = {
    NVDLA_CSC_D_DATAIN_SIZE_EXT_0_0, NVDLA_CSC_D_DATAIN_SIZE_EXT_1_0,
    NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0, NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0,
    NVDLA_CSC_D_DATAOUT_SIZE_0_0,    NVDLA_CSC_D_CONV_STRIDE_EXT_0,
    NVDLA_CSC_D_DILATION_EXT_0,      NVDLA_CSC_D_BANK_0,
};

struct probe {
    uint32_t regs[2][R_N];
    unsigned producer;
    unsigned layers;
    uint64_t macs;
    struct dla_conv_geom geom;  /* last layer, for the reference */
    uint32_t data_bank, weight_bank; /* last layer's D_BANK (+1) */
};

static void probe_layer(struct probe *p)
{
    const uint32_t *r = p->regs[p->producer];
    struct dla_conv_geom *g = &p->geom;
    memset(g, 0, sizeof(*g));
    g->out_w = FIELD(r[R_DATAOUT_0], NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_WIDTH) + 1;
    g->out_h = FIELD(r[R_DATAOUT_0], NVDLA_CSC_D_DATAOUT_SIZE_0_0_DATAOUT_HEIGHT) + 1;
    g->out_k = FIELD(r[R_WEIGHT_EXT_1], NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_KERNEL) + 1;
    g->k_w = FIELD(r[R_WEIGHT_EXT_0], NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_WIDTH_EXT) + 1;
    g->k_h = FIELD(r[R_WEIGHT_EXT_0], NVDLA_CSC_D_WEIGHT_SIZE_EXT_0_0_WEIGHT_HEIGHT_EXT) + 1;
    g->in_c = FIELD(r[R_WEIGHT_EXT_1], NVDLA_CSC_D_WEIGHT_SIZE_EXT_1_0_WEIGHT_CHANNEL_EXT) + 1;
    g->stride_x = FIELD(r[R_STRIDE], NVDLA_CSC_D_CONV_STRIDE_EXT_0_CONV_X_STRIDE_EXT) + 1;
    g->stride_y = FIELD(r[R_STRIDE], NVDLA_CSC_D_CONV_STRIDE_EXT_0_CONV_Y_STRIDE_EXT) + 1;
    g->dil_x = FIELD(r[R_DILATION], NVDLA_CSC_D_DILATION_EXT_0_X_DILATION_EXT) + 1;
    g->dil_y = FIELD(r[R_DILATION], NVDLA_CSC_D_DILATION_EXT_0_Y_DILATION_EXT) + 1;
    /* the padded input the windows span */
    g->in_w = (g->out_w - 1) * g->stride_x + (g->k_w - 1) * g->dil_x + 1;
    g->in_h = (g->out_h - 1) * g->stride_y + (g->k_h - 1) * g->dil_y + 1;
    p->data_bank = FIELD(r[R_BANK], NVDLA_CSC_D_BANK_0_DATA_BANK) + 1;
    p->weight_bank = FIELD(r[R_BANK], NVDLA_CSC_D_BANK_0_WEIGHT_BANK) + 1;
    p->macs += (uint64_t)g->out_w * g->out_h * g->out_k * g->k_w * g->k_h * g->in_c;
    p->layers++;
}

static void probe_log(void *opaque, unsigned category, const char *msg)
{
    struct probe *p = opaque;
    char name[128];
    unsigned val = 0;
    uint32_t addr;
    if (category != DLASIM_LOG_REG || sscanf(msg, "reg_write(%127[^,], 0x%x);", name, &val) != 2 ||
        dlasim_reg_lookup(name, &addr)) {
        return;
    }
    if (addr == NVDLA_CSC_S_POINTER_0) {
        p->producer = FIELD(val, NVDLA_CSC_S_POINTER_0_PRODUCER) & 1u;
        return;
    }
    if (addr == NVDLA_CSC_D_OP_ENABLE_0) {
        if (val & 1u) {
            probe_layer(p);
        }
        return;
    }
    for (int i = 0; i < R_N; i++) {
        if (addr == csc_addr[i]) {
            p->regs[p->producer][i] = val;
        }
    }
}

static struct dlasim_dev *bench_device(const struct bench_args *a, struct probe *probe)
{
    struct dlasim_options o;
    char err[1024];
    struct dlasim_dev *dev = NULL;
    memset(&o, 0, sizeof(o));
    o.config = a->common.config;
    o.overrides = a->common.sets;
    o.n_overrides = a->common.nsets;
    o.threads = a->common.threads;
    o.strict_mem = a->common.strict;
    o.max_host_mem = cli_max_mem(&a->common);
    o.max_layer_work = a->common.max_work;
    struct dlasim_timing_profile prof;
    if (a->common.timing && !cli_timing_profile(&a->common, &prof)) {
        o.timing = 1; /* --timing: the same runs with the cycle model on */
        o.timing_profile = &prof;
    }
    if (probe) {
        o.log_mask = DLASIM_LOG_REG;
        o.log_cb = probe_log;
        o.log_opaque = probe;
    }
    if (dlasim_create(&o, &dev, err, sizeof(err))) {
        fprintf(stderr, "dlasim bench: cannot create the device: %s\n", err);
        return NULL;
    }
    return dev;
}

/* Play a parsed trace on a fresh device; returns the status, *ms the time
 * of dlasim_trace_play. */
static int play_once(const struct bench_args *a, const struct dlasim_trace *t, struct probe *probe,
                     double *ms, char *err, size_t errlen)
{
    struct dlasim_trace_result res;
    struct dlasim_dev *dev = bench_device(a, probe);
    if (!dev) {
        snprintf(err, errlen, "cannot create the device");
        return DLASIM_ERR_INVAL;
    }
    double t0 = now_ms();
    int rc = dlasim_trace_play(dev, t, NULL, &res, err, errlen);
    *ms = now_ms() - t0;
    if (!rc && res.checks_passed == 0) {
        rc = DLASIM_ERR_CHECK;
        snprintf(err, errlen, "the trace has no check");
    }
    dlasim_destroy(dev);
    return rc;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void bench_trace(const struct bench_args *a, const char *dir, const char *name,
                        unsigned reps, struct table *tab)
{
    char cfg[4096], err[1024] = "";
    struct dlasim_trace *t = NULL;
    struct probe probe;
    struct row *r = add_row(tab);
    if (!r) {
        return;
    }
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->kind = "trace";
    r->checked = 1;
    snprintf(cfg, sizeof(cfg), "%.2000s/%.900s/%.900s.cfg", dir, name, name);
    if (dlasim_trace_parse_file(cfg, &t, err, sizeof(err))) {
        snprintf(r->note, sizeof(r->note), "parse: %.150s", err);
        return;
    }
    memset(&probe, 0, sizeof(probe));
    double ms = 0;
    int rc = play_once(a, t, &probe, &ms, err, sizeof(err));
    r->ok = rc == 0;
    if (rc) {
        snprintf(r->note, sizeof(r->note), "%.150s", err);
    }
    r->macs = probe.macs;
    r->hw_layers = probe.layers;
    snprintf(r->plan, sizeof(r->plan), "d%u+w%u (trace)", probe.data_bank, probe.weight_bank);
    double *v = calloc(reps, sizeof(double));
    if (v && rc == 0) {
        for (unsigned i = 0; i < reps && rc == 0; i++) {
            rc = play_once(a, t, NULL, &v[i], err, sizeof(err));
        }
        r->ms = median(v, reps);
    }
    free(v);
    dlasim_trace_free(t);
    if (probe.layers) {
        struct ref_bufs b;
        if (!ref_alloc(&probe.geom, &b)) {
            double per = time_reference(&probe.geom, b.in, b.wt, b.out);
            /* MAC-weighted if the trace ran several layers of other shapes */
            uint64_t last = (uint64_t)probe.geom.out_w * probe.geom.out_h * probe.geom.out_k *
                            probe.geom.k_w * probe.geom.k_h * probe.geom.in_c;
            r->ref_ms = last ? per * (double)probe.macs / (double)last : per;
        }
        ref_free(&b);
    }
}

static void bench_traces(const struct bench_args *a, unsigned reps, struct table *tab,
                         char *note, size_t notelen)
{
    char dir[2048];
    const char *config = a->common.config ? a->common.config : "nv_small";
    snprintf(dir, sizeof(dir), "%.1500s/%.200s", a->suite, config);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(note, notelen, "no conformance suite at %.400s: trace rows skipped", dir);
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "dc_", 3) || (a->match && fnmatch(a->match, e->d_name, 0))) {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(names, cap * sizeof(*nn));
            if (!nn) {
                break;
            }
            names = nn;
        }
        names[n] = strdup(e->d_name);
        if (names[n]) {
            n++;
        }
    }
    closedir(d);
    if (n) {
        qsort(names, n, sizeof(*names), cmp_str);
    }
    for (size_t i = 0; i < n; i++) {
        bench_trace(a, dir, names[i], reps, tab);
        free(names[i]);
    }
    free(names);
    if (!n) {
        snprintf(note, notelen, "no dc_* case in %.400s", dir);
    }
}

/* ---- ResNet-18 rows ------------------------------------------------------------------ */

struct resnet_layer {
    const char *name;
    unsigned count;
    uint32_t w, h, c, k, r, stride, pad;
};

/* ResNet-18 at 224x224 (torchvision resnet18): every convolution layer,
 * each distinct shape once with its count. */
static const struct resnet_layer resnet18[] = {
    { "conv1 7x7/2 3->64 @224", 1, 224, 224, 3, 64, 7, 2, 3 },
    { "layer1 3x3 64->64 @56", 4, 56, 56, 64, 64, 3, 1, 1 },
    { "layer2.0 3x3/2 64->128 @56", 1, 56, 56, 64, 128, 3, 2, 1 },
    { "layer2.0 down 1x1/2 64->128", 1, 56, 56, 64, 128, 1, 2, 0 },
    { "layer2 3x3 128->128 @28", 3, 28, 28, 128, 128, 3, 1, 1 },
    { "layer3.0 3x3/2 128->256 @28", 1, 28, 28, 128, 256, 3, 2, 1 },
    { "layer3.0 down 1x1/2 128->256", 1, 28, 28, 128, 256, 1, 2, 0 },
    { "layer3 3x3 256->256 @14", 3, 14, 14, 256, 256, 3, 1, 1 },
    { "layer4.0 3x3/2 256->512 @14", 1, 14, 14, 256, 512, 3, 2, 1 },
    { "layer4.0 down 1x1/2 256->512", 1, 14, 14, 256, 512, 1, 2, 0 },
    { "layer4 3x3 512->512 @7", 3, 7, 7, 512, 512, 3, 1, 1 },
};

static uint32_t truncate_for(uint64_t n);

/* The same layer as one RK3588 task (int8 output: CORE CLIP_TRUNCATE and
 * saturation, the NVDLA rows' CACC truncation and SDP): same kernel, same
 * data, checked against the same integer sums. */
static void bench_rk_row(const struct bench_args *a, const struct resnet_layer *L,
                         const int8_t *in, const int8_t *wt, const int32_t *ref, double ref_ms,
                         unsigned reps, struct table *tab)
{
    struct row *r = add_row(tab);
    if (!r) {
        return;
    }
    struct bench_rk_layer rl = {L->w, L->h, L->c, L->k, L->r, L->stride, L->pad,
                                truncate_for((uint64_t)L->c * L->r * L->r)};
    uint32_t ow = (L->w + 2 * L->pad - L->r) / L->stride + 1;
    uint32_t oh = (L->h + 2 * L->pad - L->r) / L->stride + 1;
    snprintf(r->name, sizeof(r->name), "rk3588 %s", L->name);
    r->kind = "rk3588";
    r->count = L->count;
    r->is3x3 = 1;
    r->checked = 1;
    r->hw_layers = 1;
    snprintf(r->plan, sizeof(r->plan), "1 task, int8 out");
    r->macs = (uint64_t)ow * oh * L->k * L->c * L->r * L->r;
    r->ref_ms = ref_ms;
    r->ok = !bench_rk_layer(&rl, a->common.threads ? a->common.threads : online_cores(), reps, in,
                            wt, ref, &r->ms, r->note, sizeof(r->note));
}

/* CACC truncation that brings random int8 sums of n products near int8. */
static uint32_t truncate_for(uint64_t n)
{
    uint32_t bits = 0;
    while (((uint64_t)1 << bits) < n) {
        bits++;
    }
    return (bits + 1) / 2 + 6;
}

/* CACC (round half away from zero, exact for CLIP_TRUNCATE <= 16) and SDP
 * (offset 0, scale 1, shift 0: saturation to int8), for the check. */
static int8_t post_process(int32_t sum, uint32_t t)
{
    int64_t v = sum;
    if (t) {
        int64_t half = (int64_t)1 << (t - 1);
        int64_t mag = v < 0 ? -v : v;
        mag = (mag + half) >> t;
        v = v < 0 ? -mag : mag;
    }
    return (int8_t)(v > 127 ? 127 : (v < -128 ? -128 : v));
}

struct layer_bufs {
    int8_t *in, *wt, *out, *padded;
    int32_t *ref;
};

static void layer_bufs_free(struct layer_bufs *b)
{
    free(b->in);
    free(b->wt);
    free(b->out);
    free(b->padded);
    free(b->ref);
    memset(b, 0, sizeof(*b));
}

static void pad_input(const struct dlasim_conv_desc *d, const int8_t *in, int8_t *dst,
                      const struct dla_conv_geom *g)
{
    for (uint32_t c = 0; c < d->in_c; c++) {
        for (uint32_t y = 0; y < g->in_h; y++) {
            int8_t *row = dst + ((size_t)c * g->in_h + y) * g->in_w;
            int64_t sy = (int64_t)y - d->pad_top;
            for (uint32_t x = 0; x < g->in_w; x++) {
                int64_t sx = (int64_t)x - d->pad_left;
                int inside = sy >= 0 && sy < d->in_h && sx >= 0 && sx < d->in_w;
                row[x] = inside ? in[((size_t)c * d->in_h + (size_t)sy) * d->in_w + (size_t)sx]
                                : (int8_t)d->pad_value;
            }
        }
    }
}

static void bench_resnet_layer(const struct bench_args *a, struct dlasim_dev *dev,
                               const struct resnet_layer *L, unsigned reps, struct table *tab)
{
    struct dlasim_conv_hw hw;
    struct dlasim_conv_desc d;
    struct dlasim_conv_plan p;
    struct layer_bufs b;
    char err[512] = "";
    struct row *r = add_row(tab);
    if (!r) {
        return;
    }
    memset(&b, 0, sizeof(b));
    memset(&p, 0, sizeof(p));
    snprintf(r->name, sizeof(r->name), "resnet18 %s", L->name);
    r->kind = "resnet18";
    r->count = L->count;
    r->is3x3 = L->r == 3;
    r->checked = 1;
    dlasim_conv_desc_init(&d);
    d.in_w = L->w;
    d.in_h = L->h;
    d.in_c = L->c;
    d.kernels = L->k;
    d.kernel_w = d.kernel_h = L->r;
    d.stride_x = d.stride_y = L->stride;
    d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = L->pad;
    d.clip_truncate = truncate_for((uint64_t)L->c * L->r * L->r);
    int rc = dlasim_conv_hw_of(dev, &hw);
    if (!rc) {
        rc = dlasim_conv_plan(&hw, &d, &p, err, sizeof(err));
    }
    if (rc) {
        snprintf(r->note, sizeof(r->note), "plan: %.150s", err);
        return;
    }
    r->hw_layers = p.n_layers;
    snprintf(r->plan, sizeof(r->plan), "d%u+w%u %s", p.data_bank, p.weight_bank,
             dlasim_conv_weight_mode_name(p.weight_mode));
    r->macs = (uint64_t)p.out_w * p.out_h * d.kernels * d.in_c * d.kernel_w * d.kernel_h;

    size_t n_in = (size_t)d.in_c * d.in_h * d.in_w;
    size_t n_wt = (size_t)d.kernels * d.in_c * d.kernel_h * d.kernel_w;
    size_t n_out = (size_t)d.kernels * p.out_h * p.out_w;
    struct dla_conv_geom g = {
        d.in_w + d.pad_left + d.pad_right, d.in_h + d.pad_top + d.pad_bottom, d.in_c,
        p.out_w, p.out_h, d.kernels, d.kernel_w, d.kernel_h, d.stride_x, d.stride_y,
        d.dilation_x, d.dilation_y,
    };
    b.in = malloc(n_in);
    b.wt = malloc(n_wt);
    b.out = malloc(n_out);
    b.padded = malloc((size_t)g.in_w * g.in_h * g.in_c);
    b.ref = malloc(n_out * sizeof(int32_t));
    if (!b.in || !b.wt || !b.out || !b.padded || !b.ref) {
        snprintf(r->note, sizeof(r->note), "out of memory");
        goto out;
    }
    fill_random(b.in, n_in);
    fill_random(b.wt, n_wt);

    struct dlasim_conv_mem m;
    memset(&m, 0, sizeof(m));
    m.input = 0x10000000u;
    m.weights = 0x20000000u;
    m.output = 0x30000000u;
    rc = dlasim_conv_write_input(dev, &p, &m, b.in);
    if (!rc) {
        rc = dlasim_conv_write_weights(dev, &p, &m, b.wt);
    }
    double *v = calloc(reps, sizeof(double));
    for (unsigned i = 0; v && i < reps && !rc; i++) {
        double t0 = now_ms();
        rc = dlasim_conv_run(dev, &p, &m);
        v[i] = now_ms() - t0;
    }
    if (v && !rc) {
        r->ms = median(v, reps);
    }
    if (!rc) {
        rc = dlasim_conv_read_output(dev, &p, &m, b.out);
    }
    if (rc) {
        snprintf(r->note, sizeof(r->note), "%s: %.140s", dlasim_status_name(rc),
                 dlasim_last_error(dev));
        free(v);
        goto out;
    }

    /* the reference, once, then the check */
    pad_input(&d, b.in, b.padded, &g);
    double t0 = now_ms();
    dla_conv_s8_ref(&g, b.padded, b.wt, b.ref);
    r->ref_ms = now_ms() - t0;
    r->ok = 1;
    for (size_t i = 0; i < n_out && r->ok; i++) {
        if (b.out[i] != post_process(b.ref[i], d.clip_truncate)) {
            r->ok = 0;
            snprintf(r->note, sizeof(r->note), "output element %zu differs from the reference", i);
        }
    }
    if (L->r == 3) {
        size_t idx = (size_t)(r - tab->rows);
        bench_rk_row(a, L, b.in, b.wt, b.ref, r->ref_ms, reps, tab);
        r = &tab->rows[idx]; /* the table may have moved */
    }
    if (a->profile && v) {
        /* the fast kernel alone on the whole layer (what CSC+CMAC call) */
        unsigned threads = a->common.threads ? a->common.threads : online_cores();
        for (unsigned i = 0; i < reps; i++) {
            double k0 = now_ms();
            dla_conv_s8(&g, b.padded, b.wt, b.ref, threads);
            v[i] = now_ms() - k0;
        }
        r->kernel_ms = median(v, reps);
    }
    free(v);
out:
    layer_bufs_free(&b);
    dlasim_conv_plan_free(&p);
}

/* ---- output ------------------------------------------------------------------------- */

struct total {
    const char *name;
    uint64_t macs;
    double ms, ref_ms;
    unsigned layers;
};

static void add_total(struct total *t, const struct row *r)
{
    t->macs += r->macs * r->count;
    t->ms += r->ms * r->count;
    t->ref_ms += r->ref_ms * r->count;
    t->layers += r->count;
}

static void fmt_macs(char *buf, size_t n, uint64_t macs)
{
    if (macs >= 1000000000ull) {
        snprintf(buf, n, "%.2fG", (double)macs * 1e-9);
    } else if (macs >= 1000000ull) {
        snprintf(buf, n, "%.1fM", (double)macs * 1e-6);
    } else if (macs >= 10000ull) {
        snprintf(buf, n, "%.1fK", (double)macs * 1e-3);
    } else {
        snprintf(buf, n, "%llu", (unsigned long long)macs);
    }
}

static void print_line(const char *name, const char *hw, uint64_t macs, double ms, double ref_ms,
                       const char *check)
{
    char mb[32];
    fmt_macs(mb, sizeof(mb), macs);
    printf("%-38s %-22s %9s %10.3f %8.2f %10.3f %8.3f %8.1fx  %s\n", name, hw, mb, ms,
           gmacs(macs, ms), ref_ms, gmacs(macs, ref_ms), ms > 0 ? ref_ms / ms : 0.0, check);
}

static void print_table(const struct table *t, const struct total *tot, size_t ntot,
                        int profile)
{
    printf("%-38s %-22s %9s %10s %8s %10s %8s %9s  %s\n", "layer", "hw layers (CBUF)", "MACs",
           "dlasim ms", "GMAC/s", "ref ms", "GMAC/s", "speed-up", "check");
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        char name[128], hw[96], times[16] = "";
        if (r->count > 1) {
            snprintf(times, sizeof(times), " (x%u)", r->count);
        }
        snprintf(name, sizeof(name), "%s%s", r->name, times);
        snprintf(hw, sizeof(hw), "%zu %s", r->hw_layers, r->plan);
        print_line(name, hw, r->macs, r->ms, r->ref_ms,
                   !r->checked ? "" : (r->ok ? (strcmp(r->kind, "trace") ? "ok" : "crc ok") : "FAIL"));
        if (r->note[0]) {
            printf("    %s\n", r->note);
        }
        if (profile && r->kernel_ms > 0) {
            printf("    profile: fast kernel alone %.3f ms (%.1f GMAC/s), pipeline around it "
                   "%.3f ms (%.0f%%)\n",
                   r->kernel_ms, gmacs(r->macs, r->kernel_ms), r->ms - r->kernel_ms,
                   r->ms > 0 ? 100.0 * (r->ms - r->kernel_ms) / r->ms : 0.0);
        }
    }
    for (size_t i = 0; i < ntot; i++) {
        char name[96], hw[32];
        snprintf(name, sizeof(name), "TOTAL %s", tot[i].name);
        snprintf(hw, sizeof(hw), "%u layers", tot[i].layers);
        print_line(name, hw, tot[i].macs, tot[i].ms, tot[i].ref_ms, "");
    }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
            fputc(*s, f);
        } else if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", (unsigned char)*s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static void json_metrics(FILE *f, uint64_t macs, double ms, double ref_ms)
{
    fprintf(f,
            "\"macs\": %llu, \"dlasim_ms\": %.4f, \"dlasim_gmacs\": %.3f, \"ref_ms\": %.4f, "
            "\"ref_gmacs\": %.4f, \"speedup\": %.2f",
            (unsigned long long)macs, ms, gmacs(macs, ms), ref_ms, gmacs(macs, ref_ms),
            ms > 0 ? ref_ms / ms : 0.0);
}

static int write_json(const char *path, const struct bench_args *a, unsigned threads,
                      unsigned reps, const struct table *t, const struct total *tot, size_t ntot)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dlasim bench: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"config\": ");
    json_str(f, a->common.config ? a->common.config : "nv_small");
    fprintf(f, ",\n  \"isa\": ");
    json_str(f, dla_conv_s8_isa());
    fprintf(f, ",\n  \"threads\": %u,\n  \"runs\": %u,\n  \"time\": %lld,\n  \"rows\": [\n",
            threads, reps, (long long)time(NULL));
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        fprintf(f, "    {\"layer\": ");
        json_str(f, r->name);
        fprintf(f, ", \"kind\": ");
        json_str(f, r->kind);
        fprintf(f, ", \"count\": %u, \"conv3x3\": %s, \"hw_layers\": %zu, \"cbuf\": ", r->count,
                r->is3x3 ? "true" : "false", r->hw_layers);
        json_str(f, r->plan);
        fprintf(f, ", ");
        json_metrics(f, r->macs, r->ms, r->ref_ms);
        if (r->kernel_ms > 0) {
            fprintf(f, ", \"kernel_ms\": %.4f", r->kernel_ms);
        }
        fprintf(f, ", \"ok\": %s", r->ok ? "true" : "false");
        if (r->note[0]) {
            fprintf(f, ", \"note\": ");
            json_str(f, r->note);
        }
        fprintf(f, "}%s\n", i + 1 < t->n ? "," : "");
    }
    fprintf(f, "  ],\n  \"totals\": {\n");
    for (size_t i = 0; i < ntot; i++) {
        fprintf(f, "    ");
        json_str(f, tot[i].name);
        fprintf(f, ": {\"layers\": %u, ", tot[i].layers);
        json_metrics(f, tot[i].macs, tot[i].ms, tot[i].ref_ms);
        fprintf(f, "}%s\n", i + 1 < ntot ? "," : "");
    }
    fprintf(f, "  }\n}\n");
    return cli_close_output(f, path);
}

/* ---- command ------------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: dlasim bench [--config NAME] [--threads N] [--json FILE] [--quick] "
            "[--profile] [--reps N] [--match GLOB] [--suite DIR]\n"
            "  --json FILE   write the table as JSON (default build/bench.json; '' = none)\n"
            "  --quick       one run per row (smoke test)\n"
            "  --profile     also time the fast convolution kernel alone per ResNet layer\n"
            "  --reps N      runs per row, median reported (default 7)\n"
            "  --match GLOB  only the rows whose name matches (e.g. 'resnet18 layer4*')\n"
            "  --suite DIR   folder of the conformance suites "
            "(default ../shared/conformance/nvdla-traces)\n");
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
    memset(a, 0, sizeof(*a));
    a->json = "build/bench.json";
    a->suite = "../shared/conformance/nvdla-traces";
    a->reps = 7;
    for (int i = 1; i < argc; i++) {
        int c = cli_common_option(&a->common, argc, argv, &i);
        if (c < 0) {
            return -1;
        }
        if (c) {
            continue;
        }
        const char *o = argv[i];
        if (!strcmp(o, "--quick")) {
            a->quick = 1;
        } else if (!strcmp(o, "--profile")) {
            a->profile = 1;
        } else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage();
            exit(0);
        } else if ((!strcmp(o, "--json") || !strcmp(o, "--suite") || !strcmp(o, "--reps") ||
                    !strcmp(o, "--match")) &&
                   i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(o, "--json")) {
                a->json = v;
            } else if (!strcmp(o, "--match")) {
                a->match = v;
            } else if (!strcmp(o, "--suite")) {
                a->suite = v;
            } else {
                uint32_t n;
                if (cli_parse_u32(o, v, 1, 1000, &n)) {
                    return -1;
                }
                a->reps = n;
            }
        } else {
            fprintf(stderr, "dlasim bench: unknown option '%s'\n", o);
            usage();
            return -1;
        }
    }
    if (a->quick) {
        a->reps = 1;
    }
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_args a;
    struct table tab = { NULL, 0, 0 };
    char note[512] = "";
    if (parse_args(argc, argv, &a)) {
        return 2;
    }
    unsigned threads = a.common.threads ? a.common.threads : online_cores();
    double t_start = now_ms();
    printf("dlasim bench: config %s, convolution kernel ISA %s, %u thread%s, median of %u run%s; "
           "reference: dla_conv_s8_ref (plain C, 1 thread)\n\n",
           a.common.config ? a.common.config : "nv_small", dla_conv_s8_isa(), threads,
           threads == 1 ? "" : "s", a.reps, a.reps == 1 ? "" : "s");
    fflush(stdout);

    rng_state = 0xbe7c400000000001ull;
    bench_traces(&a, a.reps, &tab, note, sizeof(note));
    struct dlasim_dev *dev = bench_device(&a, NULL);
    if (!dev) {
        free(tab.rows);
        return 1;
    }
    for (size_t i = 0; i < sizeof(resnet18) / sizeof(resnet18[0]); i++) {
        char name[128];
        snprintf(name, sizeof(name), "resnet18 %s", resnet18[i].name);
        if (!a.match || !fnmatch(a.match, name, 0)) {
            bench_resnet_layer(&a, dev, &resnet18[i], a.reps, &tab);
        }
    }
    dlasim_destroy(dev);
    if (!a.match || !fnmatch(a.match, "rk3588 1000 small tasks", 0)) {
        struct row *r = add_row(&tab);
        if (r) {
            snprintf(r->name, sizeof(r->name), "rk3588 1000 small tasks");
            r->kind = "rk3588 tasks";
            r->checked = 1;
            r->hw_layers = 1000;
            snprintf(r->plan, sizeof(r->plan), "one regcmd list");
            r->ok = !bench_rk_small_tasks(1000, threads, a.reps, &r->ms, &r->macs, r->note,
                                          sizeof(r->note));
        }
    }

    struct total tot[3] = { { "ResNet-18 3x3 layers", 0, 0, 0, 0 },
                            { "ResNet-18 all conv layers", 0, 0, 0, 0 },
                            { "RK3588 ResNet-18 3x3 layers", 0, 0, 0, 0 } };
    int failed = 0;
    for (size_t i = 0; i < tab.n; i++) {
        const struct row *r = &tab.rows[i];
        failed |= r->checked && !r->ok;
        if (!strcmp(r->kind, "rk3588")) {
            add_total(&tot[2], r);
        }
        if (strcmp(r->kind, "resnet18")) {
            continue;
        }
        if (r->is3x3) {
            add_total(&tot[0], r);
        }
        add_total(&tot[1], r);
    }
    print_table(&tab, tot, 3, a.profile);
    if (tot[0].ms > 0 && tot[2].ms > 0) {
        double nv = (double)tot[0].macs / tot[0].ms, rk = (double)tot[2].macs / tot[2].ms;
        printf("\nRK3588 vs NVDLA, ResNet-18 3x3 layers, same kernel: %.1f vs %.1f GMAC/s "
               "(RK/NVDLA %.2f)\n", rk * 1e-6, nv * 1e-6, rk / nv);
    }
    if (note[0]) {
        printf("\nnote: %s\n", note);
    }
    printf("\nResNet-18 rows: conv1 is a direct convolution of a 3-channel feature cube; (xN) = "
           "occurrences of the shape, counted N times in the totals; hw layers = hardware "
           "layers programmed (partial-H bands), CBUF = data + weight banks and weight mode.\n");
    if (a.json && a.json[0]) {
        if (write_json(a.json, &a, threads, a.reps, &tab, tot, 3)) {
            failed = 1; /* the table asked for was not written: the run fails */
        } else {
            printf("JSON: %s\n", a.json);
        }
    }
    printf("bench time %.1f s\n", (now_ms() - t_start) * 1e-3);
    free(tab.rows);
    return failed ? 1 : 0;
}
