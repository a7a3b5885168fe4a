/*
 * conv_bench: convolution performance table (make bench), built on the
 * public API only (include/dlasim/; tests/unit/bench_public.sh checks).
 *
 *   conv_bench [--config NAME] [--threads N] [--timing] [--mem-profile NAME]
 *              [--json FILE] [--quick] [--profile] [--reps N] [--match GLOB]
 *              [--suite DIR]
 *
 * Default JSON file: build/bench.json (as `make bench` runs it from the
 * project folder); --json '' writes none.
 *
 * Rows:
 *   - every dc_* case of the conformance suite of the configuration
 *     (DIR/<config>, DIR = ../shared/conformance/nvdla-traces): the trace is
 *     parsed once, then played on a fresh device per run through the public
 *     trace API (timed: memory loads of the trace, CSB programming, the
 *     layer, the CRC check); MACs and geometry of each convolution layer as
 *     the device describes it (dlasim_set_layer_observer,
 *     include/dlasim/layer.h) in a first, untimed run that also checks the
 *     CRC;
 *   - ResNet-18's convolution layers at 224x224 on random int8 data, planned
 *     and programmed through the CSB by the driver-side planner
 *     (include/dlasim/conv.h): conv1 7x7/2 as a direct convolution of a
 *     3-channel feature cube, the 3x3 layers of layer1..layer4 (stride-2
 *     ones included) and the 1x1/2 downsample layers, each distinct shape
 *     once with its count in the network; timed: dlasim_conv_run
 *     (programming every hardware layer through the CSB + dlasim_run), with
 *     input and weights already in device memory; each output is checked
 *     against the reference + CACC truncation + SDP conversion.
 * The reference is dlasim_conv_s8_ref (include/dlasim/kernel.h: plain C, one thread) on the same
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
#include "dlasim/conv.h"
#include "dlasim/dlasim.h"
#include "dlasim/kernel.h"
#include "dlasim/layer.h"
#include "dlasim/timing.h"
#include "dlasim/trace.h"

/* ---- options and results ------------------------------------------------------- */

struct bench_args {
    const char *config;    /* --config NAME (NULL = nv_small) */
    unsigned threads;      /* --threads N (0 = every online core) */
    int timing;            /* --timing: the same runs with the cycle model on */
    const char *mem_profile; /* --mem-profile NAME (timing profile, default rtl-tb) */
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
static double time_reference(const struct dlasim_conv_geom *g, const int8_t *in, const int8_t *wt,
                             int32_t *out)
{
    double total = 0;
    unsigned runs = 0;
    while (total < 20.0 || runs == 0) {
        double t0 = now_ms();
        dlasim_conv_s8_ref(g, in, wt, out);
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

static int ref_alloc(const struct dlasim_conv_geom *g, struct ref_bufs *b)
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

/* The convolution layers a trace runs, as the device describes them. */
struct probe {
    unsigned layers;
    uint64_t macs;
    struct dlasim_conv_geom geom;  /* last layer, for the reference */
    uint32_t data_bank, weight_bank; /* last layer's CBUF banks */
};

static void probe_layer(void *opaque, const struct dlasim_layer_info *li)
{
    struct probe *p = opaque;
    if (strcmp(li->kind, "conv")) {
        return;
    }
    struct dlasim_conv_geom *g = &p->geom;
    memset(g, 0, sizeof(*g));
    g->out_w = li->out_w;
    g->out_h = li->out_h;
    g->out_k = li->out_k;
    g->k_w = li->k_w;
    g->k_h = li->k_h;
    g->in_c = li->in_c;
    g->stride_x = li->stride_x;
    g->stride_y = li->stride_y;
    g->dil_x = li->dil_x;
    g->dil_y = li->dil_y;
    /* the padded input the windows span */
    g->in_w = (g->out_w - 1) * g->stride_x + (g->k_w - 1) * g->dil_x + 1;
    g->in_h = (g->out_h - 1) * g->stride_y + (g->k_h - 1) * g->dil_y + 1;
    p->data_bank = li->data_banks;
    p->weight_bank = li->weight_banks;
    p->macs += li->macs;
    p->layers++;
}

static struct dlasim_dev *bench_device(const struct bench_args *a, struct probe *probe)
{
    struct dlasim_options o;
    char err[1024];
    struct dlasim_dev *dev = NULL;
    memset(&o, 0, sizeof(o));
    o.config = a->config;
    o.threads = a->threads;
    struct dlasim_timing_profile prof;
    if (a->timing && !dlasim_timing_profile_get(a->mem_profile, &prof)) {
        o.timing = 1; /* --timing: the same runs with the cycle model on */
        o.timing_profile = &prof;
    }
    if (dlasim_create(&o, &dev, err, sizeof(err))) {
        fprintf(stderr, "conv_bench: cannot create the device: %s\n", err);
        return NULL;
    }
    if (probe && dlasim_set_layer_observer(dev, probe_layer, probe)) {
        fprintf(stderr, "conv_bench: %s: the device does not describe its layers\n",
                a->config ? a->config : "nv_small");
        dlasim_destroy(dev);
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
    const char *config = a->config ? a->config : "nv_small";
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
    r->ok = !bench_rk_layer(&rl, a->threads ? a->threads : online_cores(), reps, in,
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
                      const struct dlasim_conv_geom *g)
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
    struct dlasim_conv_geom g = {
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
    dlasim_conv_s8_ref(&g, b.padded, b.wt, b.ref);
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
        unsigned threads = a->threads ? a->threads : online_cores();
        for (unsigned i = 0; i < reps; i++) {
            double k0 = now_ms();
            dlasim_conv_s8(&g, b.padded, b.wt, b.ref, threads);
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

static int close_output(FILE *f, const char *path)
{
    int err = ferror(f);
    int saved = errno;
    if (fclose(f) || err) {
        fprintf(stderr, "conv_bench: %s: cannot write: %s\n", path,
                strerror(err ? (saved ? saved : EIO) : errno));
        return -1;
    }
    return 0;
}

static int write_json(const char *path, const struct bench_args *a, unsigned threads,
                      unsigned reps, const struct table *t, const struct total *tot, size_t ntot)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "conv_bench: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"config\": ");
    json_str(f, a->config ? a->config : "nv_small");
    fprintf(f, ",\n  \"isa\": ");
    json_str(f, dlasim_conv_s8_isa());
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
    return close_output(f, path);
}

/* ---- command ------------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: conv_bench [--config NAME] [--threads N] [--timing] [--mem-profile NAME] "
            "[--json FILE] [--quick] [--profile] [--reps N] [--match GLOB] [--suite DIR]\n"
            "  --config NAME       NVDLA configuration (default nv_small)\n"
            "  --threads N         worker threads (default: every online core)\n"
            "  --timing            the same runs with the cycle model on\n"
            "  --mem-profile NAME  its timing profile (rtl-tb, dram; default rtl-tb)\n"
            "  --json FILE   write the table as JSON (default build/bench.json; '' = none)\n"
            "  --quick       one run per row (smoke test)\n"
            "  --profile     also time the fast convolution kernel alone per ResNet layer\n"
            "  --reps N      runs per row, median reported (default 7)\n"
            "  --match GLOB  only the rows whose name matches (e.g. 'resnet18 layer4*')\n"
            "  --suite DIR   folder of the conformance suites "
            "(default ../shared/conformance/nvdla-traces)\n");
}

/* A whole number in [lo, hi] for option o; 0, or -1 with a message. */
static int parse_uint(const char *o, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n < lo || n > hi) {
        fprintf(stderr, "conv_bench: %s: '%s' is not a number in %u..%u\n", o, v, lo, hi);
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

/* Options taking a value; 0, or -1 with a message. */
static int value_option(struct bench_args *a, const char *o, const char *v)
{
    if (!strcmp(o, "--json")) {
        a->json = v;
    } else if (!strcmp(o, "--match")) {
        a->match = v;
    } else if (!strcmp(o, "--suite")) {
        a->suite = v;
    } else if (!strcmp(o, "--config")) {
        a->config = v;
    } else if (!strcmp(o, "--mem-profile")) {
        a->mem_profile = v;
    } else if (!strcmp(o, "--threads")) {
        return parse_uint(o, v, 1, 256, &a->threads);
    } else {
        return parse_uint(o, v, 1, 1000, &a->reps);
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
    static const char *const with_value[] = {"--json", "--suite", "--reps", "--match",
                                             "--config", "--threads", "--mem-profile"};
    memset(a, 0, sizeof(*a));
    a->json = "build/bench.json";
    a->suite = "../shared/conformance/nvdla-traces";
    a->reps = 7;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int takes_value = 0;
        for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++) {
            takes_value |= !strcmp(o, with_value[k]);
        }
        if (takes_value && i + 1 < argc) {
            if (value_option(a, o, argv[++i])) {
                return -1;
            }
        } else if (!strcmp(o, "--quick")) {
            a->quick = 1;
        } else if (!strcmp(o, "--profile")) {
            a->profile = 1;
        } else if (!strcmp(o, "--timing")) {
            a->timing = 1;
        } else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage();
            exit(0);
        } else {
            fprintf(stderr, "conv_bench: unknown option or missing value '%s'\n", o);
            usage();
            return -1;
        }
    }
    if (a->quick) {
        a->reps = 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_args a;
    struct table tab = { NULL, 0, 0 };
    char note[512] = "";
    if (parse_args(argc, argv, &a)) {
        return 2;
    }
    unsigned threads = a.threads ? a.threads : online_cores();
    double t_start = now_ms();
    printf("conv_bench: config %s, convolution kernel ISA %s, %u thread%s, median of %u run%s; "
           "reference: dlasim_conv_s8_ref (plain C, 1 thread)\n\n",
           a.config ? a.config : "nv_small", dlasim_conv_s8_isa(), threads,
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
