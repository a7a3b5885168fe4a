/*
 * `dlasim estimate`: whole-network cycles and frames per second from the
 * timing model.  Every distinct convolution of the network is planned with
 * the driver-side planner (include/dlasim/conv.h), its hardware layers are
 * programmed through the CSB and run on a timed device (functional results
 * included: the model times what really ran), and the network's time is the
 * sum over its layers, each distinct shape counted as often as it occurs.
 * A runtime that runs a whole network gets the same figures from
 * dlasim_timing_total() (include/dlasim/timing.h).
 *
 * --layers-csv FILE --scenario NAME takes the layer shapes of NVIDIA's
 * performance spreadsheet (../shared/reference/nvdla_perf_xlsx_layers.csv)
 * instead, and prints the model's cycles beside the spreadsheet's.
 *
 * Covered: convolutions (with SDP writing int8 on the fly).  Not covered:
 * pooling, element-wise additions and the fully connected layer's batch
 * tricks; docs/timing.md says what that leaves out.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "dlasim/conv.h"
#include "dlasim/trace.h"
#include <zlib.h>

struct shape {
    char name[64];
    unsigned count;
    uint32_t w, h, c, k, r, stride, pad;
    double sheet_cycles; /* --layers-csv: the spreadsheet's layer_cyc (0 = none) */
};

/* ResNet-18 and ResNet-50 at 224x224 (torchvision; ResNet-50 v1.5 has the
 * stride in the 3x3 convolution): each distinct convolution once, with its
 * count.  The fully connected layer is a 1x1 convolution on a 1x1 cube. */
static const struct shape resnet18[] = {
    {"conv1 7x7/2 3->64 @224", 1, 224, 224, 3, 64, 7, 2, 3, 0},
    {"layer1 3x3 64->64 @56", 4, 56, 56, 64, 64, 3, 1, 1, 0},
    {"layer2.0 3x3/2 64->128 @56", 1, 56, 56, 64, 128, 3, 2, 1, 0},
    {"layer2.0 down 1x1/2 64->128", 1, 56, 56, 64, 128, 1, 2, 0, 0},
    {"layer2 3x3 128->128 @28", 3, 28, 28, 128, 128, 3, 1, 1, 0},
    {"layer3.0 3x3/2 128->256 @28", 1, 28, 28, 128, 256, 3, 2, 1, 0},
    {"layer3.0 down 1x1/2 128->256", 1, 28, 28, 128, 256, 1, 2, 0, 0},
    {"layer3 3x3 256->256 @14", 3, 14, 14, 256, 256, 3, 1, 1, 0},
    {"layer4.0 3x3/2 256->512 @14", 1, 14, 14, 256, 512, 3, 2, 1, 0},
    {"layer4.0 down 1x1/2 256->512", 1, 14, 14, 256, 512, 1, 2, 0, 0},
    {"layer4 3x3 512->512 @7", 3, 7, 7, 512, 512, 3, 1, 1, 0},
    {"fc 512->1000", 1, 1, 1, 512, 1000, 1, 1, 0, 0},
};

static const struct shape resnet50[] = {
    {"conv1 7x7/2 3->64 @224", 1, 224, 224, 3, 64, 7, 2, 3, 0},
    {"layer1.0 1x1 64->64 @56", 1, 56, 56, 64, 64, 1, 1, 0, 0},
    {"layer1 1x1 256->64 @56", 2, 56, 56, 256, 64, 1, 1, 0, 0},
    {"layer1 3x3 64->64 @56", 3, 56, 56, 64, 64, 3, 1, 1, 0},
    {"layer1 1x1 64->256 @56 (+down)", 4, 56, 56, 64, 256, 1, 1, 0, 0},
    {"layer2.0 1x1 256->128 @56", 1, 56, 56, 256, 128, 1, 1, 0, 0},
    {"layer2.0 3x3/2 128->128 @56", 1, 56, 56, 128, 128, 3, 2, 1, 0},
    {"layer2.0 down 1x1/2 256->512 @56", 1, 56, 56, 256, 512, 1, 2, 0, 0},
    {"layer2 1x1 512->128 @28", 3, 28, 28, 512, 128, 1, 1, 0, 0},
    {"layer2 3x3 128->128 @28", 3, 28, 28, 128, 128, 3, 1, 1, 0},
    {"layer2 1x1 128->512 @28", 4, 28, 28, 128, 512, 1, 1, 0, 0},
    {"layer3.0 1x1 512->256 @28", 1, 28, 28, 512, 256, 1, 1, 0, 0},
    {"layer3.0 3x3/2 256->256 @28", 1, 28, 28, 256, 256, 3, 2, 1, 0},
    {"layer3.0 down 1x1/2 512->1024 @28", 1, 28, 28, 512, 1024, 1, 2, 0, 0},
    {"layer3 1x1 1024->256 @14", 5, 14, 14, 1024, 256, 1, 1, 0, 0},
    {"layer3 3x3 256->256 @14", 5, 14, 14, 256, 256, 3, 1, 1, 0},
    {"layer3 1x1 256->1024 @14", 6, 14, 14, 256, 1024, 1, 1, 0, 0},
    {"layer4.0 1x1 1024->512 @14", 1, 14, 14, 1024, 512, 1, 1, 0, 0},
    {"layer4.0 3x3/2 512->512 @14", 1, 14, 14, 512, 512, 3, 2, 1, 0},
    {"layer4.0 down 1x1/2 1024->2048 @14", 1, 14, 14, 1024, 2048, 1, 2, 0, 0},
    {"layer4 1x1 2048->512 @7", 2, 7, 7, 2048, 512, 1, 1, 0, 0},
    {"layer4 3x3 512->512 @7", 2, 7, 7, 512, 512, 3, 1, 1, 0},
    {"layer4 1x1 512->2048 @7", 3, 7, 7, 512, 2048, 1, 1, 0, 0},
    {"fc 2048->1000", 1, 1, 1, 2048, 1000, 1, 1, 0, 0},
};

struct est_args {
    struct cli_common common;
    const char *network;   /* resnet18 (default), resnet50, or a CSV network name */
    const char *csv;       /* --layers-csv FILE */
    const char *scenario;  /* --scenario NAME (CSV) */
    const char *json, *timeline, *plot;
    const char *match;     /* --match GLOB: only these layers */
    const char *record;    /* --record DIR: write what ran as an NVDLA trace case */
    const char *shape;     /* --shape W,H,C,K,R,STRIDE,PAD: one convolution of your own */
};

/*
 * --record: the layers that ran, as a trace case the RTL testbench can replay
 * (docs/trace-format.md): input and weights as surface files, every CSB
 * write the driver made, an intr_notify after each hardware layer, and a
 * check_crc of each output cube with the CRC dlasim computed.
 */
struct recorder {
    FILE *cfg;
    char dir[2048];
    unsigned files, layers;
    unsigned sdp_group;    /* SDP's producer, from the recorded S_POINTER writes */
};

static void record_log(void *opaque, unsigned category, const char *msg)
{
    struct recorder *r = opaque;
    unsigned v;
    if (category != DLASIM_LOG_REG || !r->cfg) {
        return;
    }
    fprintf(r->cfg, "%s\n", msg);
    if (sscanf(msg, "reg_write(NVDLA_SDP.S_POINTER_0, 0x%x);", &v) == 1) {
        r->sdp_group = v & 1u;
    } else if (!strncmp(msg, "reg_write(NVDLA_CDMA.D_OP_ENABLE_0,", 35)) {
        fprintf(r->cfg, "intr_notify(SDP_%u, layer_%u);\n", r->sdp_group, r->layers);
        r->layers++;
    }
}

/* Device memory [addr, addr + n) as a surface file of the case; 0 or -1. */
static int record_surface(struct dlasim_dev *dev, struct recorder *r, uint64_t addr, size_t n)
{
    char path[2300];
    uint8_t *buf = malloc(n ? n : 1);
    snprintf(path, sizeof(path), "%s/surface_%u.dat", r->dir, r->files);
    FILE *f = buf ? fopen(path, "w") : NULL;
    if (!f || dlasim_mem_read(dev, DLASIM_PORT_DBB, addr, buf, n)) {
        free(buf);
        if (f) {
            fclose(f);
        }
        return -1;
    }
    fprintf(f, "{\n");
    for (size_t i = 0; i < n; i += 16) {
        size_t k = n - i < 16 ? n - i : 16;
        fprintf(f, "{offset:0x%zx, size:%zu, payload:", i, k);
        for (size_t j = 0; j < k; j++) {
            fprintf(f, "%s0x%02x", j ? " " : "", buf[i + j]);
        }
        fprintf(f, "} ,\n");
    }
    fprintf(f, "}\n");
    free(buf);
    if (cli_close_output(f, path)) {
        return -1;
    }
    fprintf(r->cfg, "mem_load(pri_mem, 0x%llx, \"surface_%u.dat\");\n", (unsigned long long)addr,
            r->files);
    r->files++;
    return 0;
}

struct result {
    uint64_t cycles;       /* one occurrence, first start to last end */
    uint64_t macs, rd, wr;
    size_t hw_layers;
    const char *bound;
    char note[160];
};

/* ---- the spreadsheet's layer shapes -------------------------------------- */

/* Split one CSV line into at most n fields (no quoting in that file). */
static size_t split_csv(char *line, char **f, size_t n)
{
    size_t k = 0;
    char *p = line;
    while (k < n) {
        f[k++] = p;
        char *c = strchr(p, ',');
        if (!c) {
            break;
        }
        *c = '\0';
        p = c + 1;
    }
    char *nl = strpbrk(f[k - 1], "\r\n");
    if (nl) {
        *nl = '\0';
    }
    return k;
}

/* Rows of `network` in `scenario` that describe one convolution with a
 * spreadsheet time: columns scenario,network,row,layer,type,C,H,W,K,R,S,
 * pad,stride,MACs,dram_KB_noSRAM,dram_cyc,mac_cyc,layer_cyc,long_pole. */
static struct shape *load_csv(const struct est_args *a, size_t *n)
{
    FILE *f = fopen(a->csv, "r");
    char line[1024];
    struct shape *v = NULL;
    size_t cap = 0;
    *n = 0;
    if (!f) {
        fprintf(stderr, "dlasim estimate: cannot read '%s'\n", a->csv);
        return NULL;
    }
    while (fgets(line, sizeof(line), f)) {
        char *c[20];
        if (split_csv(line, c, 20) < 18 || strcmp(c[0], a->scenario) ||
            (a->network && strcasecmp(c[1], a->network)) || strncmp(c[4], "conv", 4) ||
            !c[17][0] || !c[5][0]) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            struct shape *nv = realloc(v, cap * sizeof(*nv));
            if (!nv) {
                break;
            }
            v = nv;
        }
        struct shape *s = &v[(*n)++];
        memset(s, 0, sizeof(*s));
        snprintf(s->name, sizeof(s->name), "%.63s", c[3]);
        s->count = 1;
        s->c = (uint32_t)atoi(c[5]);
        s->h = (uint32_t)atoi(c[6]);
        s->w = (uint32_t)atoi(c[7]);
        s->k = (uint32_t)atoi(c[8]);
        s->r = (uint32_t)atoi(c[9]);
        s->stride = (uint32_t)atoi(c[12]);
        s->pad = !strcmp(c[11], "True") ? s->r / 2 : 0;
        s->sheet_cycles = atof(c[17]);
    }
    fclose(f);
    if (!*n) {
        fprintf(stderr, "dlasim estimate: no convolution of %s in scenario '%s' of %s\n",
                a->network ? a->network : "any network", a->scenario, a->csv);
    }
    return v;
}

/* ---- one convolution on the timed device ------------------------------------ */

static void fill(int8_t *p, size_t n, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (int8_t)(*seed >> 56);
    }
}

static int run_shape(struct dlasim_dev *dev, const struct shape *s, struct result *r,
                     struct recorder *rec)
{
    struct dlasim_conv_hw hw;
    struct dlasim_conv_desc d;
    struct dlasim_conv_plan p;
    char err[256] = "";
    memset(r, 0, sizeof(*r));
    memset(&p, 0, sizeof(p));
    dlasim_conv_desc_init(&d);
    d.in_w = s->w;
    d.in_h = s->h;
    d.in_c = s->c;
    d.kernels = s->k;
    d.kernel_w = d.kernel_h = s->r;
    d.stride_x = d.stride_y = s->stride ? s->stride : 1;
    d.pad_left = d.pad_right = d.pad_top = d.pad_bottom = s->pad;
    d.clip_truncate = 8;
    int rc = dlasim_conv_hw_of(dev, &hw);
    if (!rc) {
        rc = dlasim_conv_plan(&hw, &d, &p, err, sizeof(err));
    }
    if (rc) {
        snprintf(r->note, sizeof(r->note), "plan: %.140s", err);
        return rc;
    }
    size_t n_in = (size_t)d.in_c * d.in_h * d.in_w;
    size_t n_wt = (size_t)d.kernels * d.in_c * d.kernel_h * d.kernel_w;
    int8_t *in = malloc(n_in ? n_in : 1), *wt = malloc(n_wt ? n_wt : 1);
    uint64_t seed = 0x5eed0000u + s->k;
    struct dlasim_conv_mem m;
    memset(&m, 0, sizeof(m));
    /* in the upper half of a 32-bit space: NVIDIA's testbench maps DBB there */
    m.input = 0x80000000u;
    m.weights = 0x90000000u;
    m.output = 0xb0000000u;
    rc = in && wt ? 0 : DLASIM_ERR_NOMEM;
    if (!rc) {
        fill(in, n_in, &seed);
        fill(wt, n_wt, &seed);
        rc = dlasim_conv_write_input(dev, &p, &m, in);
    }
    if (!rc) {
        rc = dlasim_conv_write_weights(dev, &p, &m, wt);
    }
    uint64_t out_bytes = dlasim_conv_cube_bytes(&hw, p.out_w, p.out_h, d.kernels, 0, 0);
    if (!rc && rec && rec->cfg) {
        FILE *cfg = rec->cfg;
        rec->cfg = NULL; /* the surfaces' own accesses are not the driver's */
        fprintf(cfg, "mem_init(pri_mem, 0x%llx, 0x%llx, ALL_ZERO);\n",
                (unsigned long long)m.output, (unsigned long long)out_bytes);
        rec->cfg = cfg;
        if (record_surface(dev, rec, m.input, dlasim_conv_cube_bytes(&hw, d.in_w, d.in_h, d.in_c, 0, 0)) ||
            record_surface(dev, rec, m.weights, p.weight_bytes)) {
            rc = DLASIM_ERR_IO;
        }
        fprintf(rec->cfg, "poll_reg_equal(NVDLA_CDMA.S_CBUF_FLUSH_STATUS_0, 0x1);\n");
    }
    size_t first = dlasim_timing_layer_count(dev);
    unsigned rec_first = rec ? rec->layers : 0;
    if (!rc) {
        rc = dlasim_conv_run(dev, &p, &m);
    }
    if (!rc && rec && rec->cfg) {
        /* every syncpoint needs an action in NVIDIA's testbench: nothing to
         * check for the bands before the last (its output is checked whole) */
        for (unsigned k = rec_first; k + 1 < rec->layers; k++) {
            fprintf(rec->cfg, "check_nothing(layer_%u);\n", k);
        }
        uint8_t *ob = malloc(out_bytes ? out_bytes : 1);
        if (ob && !dlasim_mem_read(dev, DLASIM_PORT_DBB, m.output, ob, out_bytes)) {
            uLong crc = crc32(crc32(0L, Z_NULL, 0), ob, (uInt)out_bytes);
            fprintf(rec->cfg, "check_crc(layer_%u, 1, 0x%llx, 0x%llx, 0x%08lx);\n", rec->layers - 1,
                    (unsigned long long)m.output, (unsigned long long)out_bytes, (unsigned long)crc);
        }
        free(ob);
    }
    if (rc) {
        snprintf(r->note, sizeof(r->note), "%s: %.130s", dlasim_status_name(rc),
                 dlasim_last_error(dev));
    }
    size_t last = dlasim_timing_layer_count(dev);
    uint64_t t0 = UINT64_MAX, t1 = 0, cyc_bound = 0;
    for (size_t i = first; i < last; i++) {
        struct dlasim_timing_layer l;
        dlasim_timing_layer_get(dev, i, &l);
        t0 = l.start < t0 ? l.start : t0;
        t1 = l.end > t1 ? l.end : t1;
        r->macs += l.macs;
        r->rd += l.rd_bytes;
        r->wr += l.wr_bytes;
        if (l.end - l.start >= cyc_bound) { /* the bound of its longest hardware layer */
            cyc_bound = l.end - l.start;
            r->bound = dlasim_timing_bound_name(l.bound);
        }
    }
    r->hw_layers = last - first;
    r->cycles = t1 > t0 ? t1 - t0 : 0;
    free(in);
    free(wt);
    dlasim_conv_plan_free(&p);
    return rc;
}

/* ---- command ------------------------------------------------------------------ */

static const char *base_name(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') {
        n--;
    }
    static char buf[512];
    snprintf(buf, sizeof(buf), "%.*s", (int)n, path);
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

/* A timed device whose CSB writes go to the recorder. */
static struct dlasim_dev *record_device(const struct cli_common *c,
                                        const struct dlasim_timing_profile *prof,
                                        struct recorder *rec)
{
    struct dlasim_options o;
    char err[1024];
    struct dlasim_dev *dev = NULL;
    memset(&o, 0, sizeof(o));
    o.config = c->config;
    o.overrides = c->sets;
    o.n_overrides = c->nsets;
    o.threads = c->threads;
    o.threads_always = c->threads_always;
    o.timing = 1;
    o.timing_profile = prof;
    o.log_mask = DLASIM_LOG_REG;
    o.log_cb = record_log;
    o.log_opaque = rec;
    if (dlasim_create(&o, &dev, err, sizeof(err))) {
        fprintf(stderr, "dlasim estimate: cannot create the device: %s\n", err);
        return NULL;
    }
    return dev;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: dlasim estimate [--network resnet18|resnet50] [--config NAME] [--clock-mhz MHZ]\n"
            "                       [--mem-profile rtl-tb|dram] [--mem-bw GBPS] [--mem-latency NS]\n"
            "                       [--json FILE] [--timeline FILE.json] [--plot FILE.png]\n"
            "       dlasim estimate --layers-csv FILE --scenario NAME [--network NAME] [options]\n"
            "       [--shape W,H,C,K,R,STRIDE,PAD] one convolution instead of a network\n"
            "       [--match GLOB] only the layers named so; [--record DIR] also write what ran\n"
            "       as a trace case DIR/<DIR>.cfg (replayable on the RTL)\n"
            "Whole-network cycles and fps from the timing model (docs/timing.md); the default\n"
            "memory is a DRAM of 25.6 GB/s and 100 ns at the clock.\n");
}

static int parse(int argc, char **argv, struct est_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        int c = cli_common_option(&a->common, argc, argv, &i);
        if (c < 0) {
            return -1;
        }
        if (c) {
            continue;
        }
        const char *o = argv[i];
        const char **dst = !strcmp(o, "--shape")        ? &a->shape
                           : !strcmp(o, "--match")        ? &a->match
                           : !strcmp(o, "--record")     ? &a->record
                           : !strcmp(o, "--network")      ? &a->network
                           : !strcmp(o, "--layers-csv") ? &a->csv
                           : !strcmp(o, "--scenario")   ? &a->scenario
                           : !strcmp(o, "--json")       ? &a->json
                           : !strcmp(o, "--timeline")   ? &a->timeline
                           : !strcmp(o, "--plot")       ? &a->plot
                                                        : NULL;
        if (!dst || i + 1 >= argc) {
            usage();
            return -1;
        }
        *dst = argv[++i];
    }
    if (a->csv && !a->scenario) {
        fprintf(stderr, "dlasim estimate: --layers-csv needs --scenario\n");
        return -1;
    }
    a->common.timing = 1;
    if (!a->common.mem_profile) {
        a->common.mem_profile = "dram";
    }
    return 0;
}

/* --shape W,H,C,K,R,STRIDE,PAD: seven whole numbers, each parsed strictly. */
static int parse_shape(const char *spec, struct shape *s)
{
    uint32_t *f[7] = {&s->w, &s->h, &s->c, &s->k, &s->r, &s->stride, &s->pad};
    static const char *const names[7] = {"--shape W", "--shape H", "--shape C", "--shape K",
                                         "--shape R", "--shape STRIDE", "--shape PAD"};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *p = buf;
    for (int i = 0; i < 7; i++) {
        char *comma = strchr(p, ',');
        if ((i < 6) != (comma != NULL)) {
            return -1;
        }
        if (comma) {
            *comma = 0;
        }
        if (cli_parse_u32(names[i], p, i == 6 ? 0 : 1, 65535, f[i])) {
            return -1;
        }
        p = comma ? comma + 1 : p;
    }
    return 0;
}

int cmd_estimate(int argc, char **argv)
{
    struct est_args a;
    if (parse(argc, argv, &a)) {
        return 2;
    }
    const struct shape *net = resnet18;
    size_t n = sizeof(resnet18) / sizeof(resnet18[0]);
    struct shape *owned = NULL;
    const char *net_name = a.network ? a.network : "resnet18";
    if (a.shape) {
        owned = calloc(1, sizeof(*owned));
        if (!owned || parse_shape(a.shape, owned)) {
            fprintf(stderr, "dlasim estimate: --shape takes W,H,C,K,R,STRIDE,PAD (positive, PAD >= 0)\n");
            free(owned);
            return 2;
        }
        owned->count = 1;
        snprintf(owned->name, sizeof(owned->name), "%.60s", a.shape);
        net = owned;
        n = 1;
        net_name = "shape";
    } else if (a.csv) {
        owned = load_csv(&a, &n);
        if (!owned || !n) {
            free(owned);
            return 1;
        }
        net = owned;
    } else if (!strcmp(net_name, "resnet50")) {
        net = resnet50;
        n = sizeof(resnet50) / sizeof(resnet50[0]);
    } else if (strcmp(net_name, "resnet18")) {
        fprintf(stderr, "dlasim estimate: unknown network '%s' (resnet18, resnet50)\n", net_name);
        return 2;
    }
    double mhz = a.common.clock_mhz > 0 ? a.common.clock_mhz : 1000.0;
    struct dlasim_timing_profile prof;
    cli_timing_profile(&a.common, &prof);
    struct recorder rec;
    memset(&rec, 0, sizeof(rec));
    struct dlasim_dev *dev = NULL;
    if (a.record) {
        char path[2300];
        snprintf(rec.dir, sizeof(rec.dir), "%s", a.record);
        snprintf(path, sizeof(path), "%s/%s.cfg", a.record, base_name(a.record));
        rec.cfg = fopen(path, "w");
        if (!rec.cfg) {
            fprintf(stderr, "dlasim estimate: cannot write %s (does the folder exist?)\n", path);
            free(owned);
            return 1;
        }
        dev = record_device(&a.common, &prof, &rec);
    } else {
        dev = cli_create_device(&a.common);
    }
    if (!dev) {
        if (rec.cfg) {
            fclose(rec.cfg);
        }
        free(owned);
        return 1;
    }
    uint64_t pmacs = 1;
    dlasim_param(dev, "NVDLA_MAC_ATOMIC_C_SIZE", &pmacs);
    uint64_t ak = 1;
    dlasim_param(dev, "NVDLA_MAC_ATOMIC_K_SIZE", &ak);
    pmacs *= ak;
    printf("dlasim estimate: %s%s%s on %s (%llu MACs/cycle) at %.0f MHz, memory profile %s "
           "(%.2f bytes/cycle cap, %.0f cycles latency)\n\n",
           net_name, a.csv ? ", spreadsheet scenario " : "", a.csv ? a.scenario : "",
           a.common.config ? a.common.config : "nv_small", (unsigned long long)pmacs, mhz,
           prof.name, prof.mem_bytes_per_cycle, prof.mem_latency);
    printf("| %-36s | %5s | %3s | %12s | %12s | %6s | %-7s |%s\n", "layer", "count", "hw",
           "cycles", "x count", "MAC %", "bound", a.csv ? "  spreadsheet | model/sheet |" : "");
    printf("|%.38s|------:|----:|-------------:|-------------:|-------:|:--------|%s\n",
           "--------------------------------------", a.csv ? "-------------:|------------:|" : "");
    uint64_t total = 0, macs = 0, sheet = 0;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        struct result r;
        if (a.match && fnmatch(a.match, net[i].name, 0)) {
            continue;
        }
        if (run_shape(dev, &net[i], &r, a.record ? &rec : NULL)) {
            failed = 1;
            printf("| %-36.36s | %5u | %3s | %12s | %12s | %6s | %-7s | %s\n", net[i].name,
                   net[i].count, "-", "-", "-", "-", "-", r.note);
            continue;
        }
        uint64_t all = r.cycles * net[i].count;
        double util = r.cycles ? 100.0 * (double)r.macs / ((double)pmacs * (double)r.cycles) : 0;
        total += all;
        macs += r.macs * net[i].count;
        printf("| %-36.36s | %5u | %3zu | %12llu | %12llu | %6.1f | %-7s |", net[i].name,
               net[i].count, r.hw_layers, (unsigned long long)r.cycles, (unsigned long long)all,
               util, r.bound ? r.bound : "-");
        if (a.csv) {
            sheet += (uint64_t)net[i].sheet_cycles;
            printf(" %12.0f | %11.2f |", net[i].sheet_cycles,
                   net[i].sheet_cycles > 0 ? (double)r.cycles / net[i].sheet_cycles : 0);
        }
        printf("\n");
    }
    double ms = (double)total / (mhz * 1e3);
    printf("\n%s: %llu cycles (%.3f ms at %.0f MHz) = %.1f fps, %.2f GMAC, MAC utilisation %.1f %%\n",
           net_name, (unsigned long long)total, ms, mhz, ms > 0 ? 1000.0 / ms : 0,
           (double)macs * 1e-9, total ? 100.0 * (double)macs / ((double)pmacs * (double)total) : 0);
    if (a.csv && sheet) {
        printf("spreadsheet (%s): %llu cycles; model / spreadsheet = %.2f\n", a.scenario,
               (unsigned long long)sheet, (double)total / (double)sheet);
    }
    printf("(convolutions with SDP on the fly; pooling and element-wise layers not included)\n");
    /* every output asked for is written, or the command fails */
    if (a.json && timing_write_json(dev, a.json, net_name, total, mhz)) {
        failed = 1;
    }
    if (a.timeline && timing_write_timeline(dev, a.timeline, net_name, mhz)) {
        failed = 1;
    }
    if (a.plot) {
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.json", a.plot);
        if (timing_write_json(dev, tmp, net_name, total, mhz) || timing_plot(tmp, a.plot)) {
            failed = 1;
        }
    }
    dlasim_destroy(dev);
    if (rec.cfg) {
        char path[2300];
        snprintf(path, sizeof(path), "%s/%s.cfg", a.record, base_name(a.record));
        if (cli_close_output(rec.cfg, path)) {
            failed = 1;
        } else {
            printf("trace case recorded in %s (%u hardware layers)\n", a.record, rec.layers);
        }
    }
    free(owned);
    return failed;
}
