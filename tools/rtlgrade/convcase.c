/*
 * convcase: write one convolution trace case programmed by dlasim's planner.
 *
 *   convcase DIR NAME SEED KEY=VALUE...
 *
 * Keys: the fields of struct dlasim_conv_desc (in_w in_h in_c kernels
 * kernel_w kernel_h stride_x stride_y dilation_x dilation_y pad_left
 * pad_right pad_top pad_bottom pad_value clip_truncate out_offset out_scale
 * out_shift), the memory strides of struct dlasim_conv_mem (in_line_stride
 * in_surf_stride out_line_stride out_surf_stride; 0 = packed), and
 * max_layers (default 2: NVIDIA's Verilator testbench writes every register
 * back to back, so a third layer would land in a register group still in
 * use).
 *
 * The planner plans and programs the convolution on a fresh nv_small dlasim
 * device; the device's CSB log (DLASIM_LOG_REG) becomes the trace, with a
 * poll of CDMA's CBUF flush status where the planner reads it and an
 * intr_notify where each layer completes (the testbench waits for the
 * interrupt itself, so the planner's interrupt acknowledgements are left
 * out).  The expected CRC is dlasim's; tools/rtlgrade/grade.sh replaces it
 * with the RTL's.  Writes DIR/NAME/NAME.cfg, NAME_in.dat, NAME_wt.dat.
 * Exit 0 written, 3 the plan needs more layers than max_layers or does not
 * exist (nothing written), 1 any other error.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "dlasim/conv.h"
#include "dlasim/dlasim.h"
#include "trace_out.h"

#define IN_ADDR 0x80000000ull
#define WT_ADDR 0x90000000ull
#define OUT_ADDR 0xa0000000ull

/* xorshift64*: deterministic data from the case's seed */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

struct keyval {
    const char *key;
    void *field;
    int is_signed;
};

static int parse_args(int argc, char **argv, struct dlasim_conv_desc *d,
                      struct dlasim_conv_mem *m, uint32_t *max_layers)
{
    const struct keyval keys[] = {
        { "in_w", &d->in_w, 0 },           { "in_h", &d->in_h, 0 },
        { "in_c", &d->in_c, 0 },           { "kernels", &d->kernels, 0 },
        { "kernel_w", &d->kernel_w, 0 },   { "kernel_h", &d->kernel_h, 0 },
        { "stride_x", &d->stride_x, 0 },   { "stride_y", &d->stride_y, 0 },
        { "dilation_x", &d->dilation_x, 0 }, { "dilation_y", &d->dilation_y, 0 },
        { "pad_left", &d->pad_left, 0 },   { "pad_right", &d->pad_right, 0 },
        { "pad_top", &d->pad_top, 0 },     { "pad_bottom", &d->pad_bottom, 0 },
        { "pad_value", &d->pad_value, 1 }, { "clip_truncate", &d->clip_truncate, 0 },
        { "out_offset", &d->out_offset, 1 }, { "out_scale", &d->out_scale, 1 },
        { "out_shift", &d->out_shift, 0 }, { "in_line_stride", &m->in_line_stride, 0 },
        { "in_surf_stride", &m->in_surf_stride, 0 },
        { "out_line_stride", &m->out_line_stride, 0 },
        { "out_surf_stride", &m->out_surf_stride, 0 }, { "max_layers", max_layers, 0 },
    };
    for (int i = 4; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        size_t k = 0, n = sizeof keys / sizeof keys[0];
        for (; eq && k < n; k++) {
            if (strlen(keys[k].key) == (size_t)(eq - argv[i]) &&
                !strncmp(keys[k].key, argv[i], (size_t)(eq - argv[i]))) {
                break;
            }
        }
        if (!eq || k == n) {
            fprintf(stderr, "convcase: unknown argument %s\n", argv[i]);
            return -1;
        }
        long long v = strtoll(eq + 1, NULL, 0);
        if (keys[k].is_signed) {
            *(int32_t *)keys[k].field = (int32_t)v;
        } else {
            *(uint32_t *)keys[k].field = (uint32_t)v;
        }
    }
    return 0;
}

static void fill_random(int8_t *p, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (int8_t)(rnd(s) >> 56);
    }
}

/* Read `n` bytes of device memory into a new buffer. */
static uint8_t *read_mem(struct dlasim_dev *dev, uint64_t addr, size_t n)
{
    uint8_t *b = malloc(n ? n : 1);
    if (b && dlasim_mem_read(dev, DLASIM_PORT_DBB, addr, b, n)) {
        free(b);
        return NULL;
    }
    return b;
}

struct conv_case {
    const char *dir, *name;
    uint64_t seed;
    int argc;
    char **argv;           /* SEED KEY=VALUE...: recorded in the trace to regenerate it */
    uint32_t dat_crc[2];   /* CRC-32 of the _in.dat and _wt.dat files as written */
    struct dlasim_conv_desc d;
    struct dlasim_conv_mem m;
    struct dlasim_conv_plan plan;
    uint64_t in_bytes, out_bytes;
};

static int write_cfg(const struct conv_case *c, const struct tracebuf *t, uint32_t crc)
{
    const struct dlasim_conv_desc *d = &c->d;
    const struct dlasim_conv_plan *p = &c->plan;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s.cfg", c->dir, c->name, c->name);
    FILE *f = fopen(path, "w");
    if (!f) {
        return -1;
    }
    fprintf(f, "// %s: programmed by dlasim's convolution planner (include/dlasim/conv.h), "
               "random int8 data (seed %llu)\n",
            c->name, (unsigned long long)c->seed);
    fprintf(f, "// conv in %ux%ux%u kernel %ux%ux%u stride %ux%u dilation %ux%u pad l%u r%u t%u "
               "b%u pad_value %d clip_truncate %u cvt offset %d scale %d shift %u\n",
            d->in_w, d->in_h, d->in_c, d->kernel_w, d->kernel_h, d->kernels, d->stride_x,
            d->stride_y, d->dilation_x, d->dilation_y, d->pad_left, d->pad_right, d->pad_top,
            d->pad_bottom, d->pad_value, d->clip_truncate, d->out_offset, d->out_scale,
            d->out_shift);
    fprintf(f, "// strides in line %u surf %u out line %u surf %u (0 = packed)\n",
            c->m.in_line_stride, c->m.in_surf_stride, c->m.out_line_stride,
            c->m.out_surf_stride);
    fprintf(f, "// out %ux%ux%u, %zu hardware layer(s), weight mode %s, %u weight bytes "
               "(%u before 128-byte padding)\n",
            p->out_w, p->out_h, d->kernels, p->n_layers,
            dlasim_conv_weight_mode_name(p->weight_mode), p->weight_bytes,
            p->bytes_per_kernel * d->kernels);
    fprintf(f, "// check_crc: dlasim's CRC until graded on the RTL\n");
    fprintf(f, "// regenerate:");
    for (int i = 0; i < c->argc; i++) {
        fprintf(f, " %s", c->argv[i]);
    }
    fprintf(f, "\n// data crc32: in 0x%08x wt 0x%08x\n", c->dat_crc[0], c->dat_crc[1]);
    fprintf(f, "mem_init(pri_mem, 0x%llx, 0x%llx, ALL_ZERO);\n", IN_ADDR,
            (unsigned long long)c->in_bytes);
    fprintf(f, "mem_load(pri_mem, 0x%llx, \"%s_in.dat\");\n", IN_ADDR, c->name);
    fprintf(f, "mem_init(pri_mem, 0x%llx, 0x%x, ALL_ZERO);\n", WT_ADDR, p->weight_bytes);
    fprintf(f, "mem_load(pri_mem, 0x%llx, \"%s_wt.dat\");\n", WT_ADDR, c->name);
    fprintf(f, "mem_init(pri_mem, 0x%llx, 0x%llx, ALL_ZERO);\n", OUT_ADDR,
            (unsigned long long)c->out_bytes);
    fputs(t->text, f);
    for (unsigned i = 0; i + 1 < t->layers_done; i++) {
        fprintf(f, "check_nothing(sync_id_%u);\n", i);
    }
    fprintf(f, "check_crc(sync_id_%u, 1, 0x%llx, 0x%llx, 0x%08x);\n", t->layers_done - 1,
            OUT_ADDR, (unsigned long long)c->out_bytes, crc);
    return fclose(f);
}

static int run_case(struct conv_case *c, uint32_t max_layers)
{
    struct tracebuf t = { 0 };
    struct dlasim_options o = { 0 };
    struct dlasim_dev *dev = NULL;
    char err[256];
    o.log_mask = DLASIM_LOG_REG | DLASIM_LOG_EXEC;
    o.log_cb = trace_on_log;
    o.log_opaque = &t;
    o.threads = 1;
    if (dlasim_create(&o, &dev, err, sizeof err)) {
        fprintf(stderr, "convcase: %s\n", err);
        return 1;
    }
    struct dlasim_conv_hw hw;
    dlasim_conv_hw_of(dev, &hw);
    if (dlasim_conv_plan(&hw, &c->d, &c->plan, err, sizeof err)) {
        fprintf(stderr, "convcase: %s: %s\n", c->name, err);
        dlasim_destroy(dev);
        return 3;
    }
    const struct dlasim_conv_plan *p = &c->plan;
    if (p->n_layers > max_layers) {
        fprintf(stderr, "convcase: %s: %zu layers\n", c->name, p->n_layers);
        dlasim_destroy(dev);
        return 3;
    }
    const struct dlasim_conv_desc *d = &c->d;
    c->in_bytes = dlasim_conv_cube_bytes(&hw, d->in_w, d->in_h, d->in_c, c->m.in_line_stride,
                                         c->m.in_surf_stride);
    c->out_bytes = dlasim_conv_cube_bytes(&hw, p->out_w, p->out_h, d->kernels,
                                          c->m.out_line_stride, c->m.out_surf_stride);
    size_t nin = (size_t)d->in_w * d->in_h * d->in_c;
    size_t nwt = (size_t)d->kernels * d->in_c * d->kernel_h * d->kernel_w;
    int8_t *in = malloc(nin), *wt = malloc(nwt);
    uint64_t s = c->seed * 0x9e3779b97f4a7c15ull + 1;
    int rc = 1;
    if (!in || !wt) {
        goto out;
    }
    fill_random(in, nin, &s);
    fill_random(wt, nwt, &s);
    /* the testbench's memory starts zeroed: so does the output region here */
    uint8_t *zero = calloc(c->out_bytes ? c->out_bytes : 1, 1);
    int wrc = zero ? dlasim_mem_write(dev, DLASIM_PORT_DBB, OUT_ADDR, zero, c->out_bytes) : -1;
    free(zero);
    dlasim_csb_write(dev, 0x1004 /* NVDLA_GLB.S_INTR_MASK_0 */, 0x3f03fc);
    dlasim_csb_write(dev, 0x100c /* NVDLA_GLB.S_INTR_STATUS_0 */, 0);
    if (wrc || dlasim_conv_write_input(dev, p, &c->m, in) ||
        dlasim_conv_write_weights(dev, p, &c->m, wt) || dlasim_conv_run(dev, p, &c->m) ||
        t.oom) {
        fprintf(stderr, "convcase: %s: %s\n", c->name, dlasim_last_error(dev));
        goto out;
    }
    uint8_t *ib = read_mem(dev, IN_ADDR, c->in_bytes);
    uint8_t *wb = read_mem(dev, WT_ADDR, p->weight_bytes);
    uint8_t *ob = read_mem(dev, OUT_ADDR, c->out_bytes);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->dir, c->name);
    if (ib && wb && ob && (mkdir(path, 0777) == 0 || errno == EEXIST)) {
        uint32_t crc = (uint32_t)crc32(0, ob, (uInt)c->out_bytes);
        snprintf(path, sizeof path, "%s/%s/%s_in.dat", c->dir, c->name, c->name);
        int bad = trace_write_dat(path, ib, c->in_bytes, &c->dat_crc[0]);
        snprintf(path, sizeof path, "%s/%s/%s_wt.dat", c->dir, c->name, c->name);
        bad |= trace_write_dat(path, wb, p->weight_bytes, &c->dat_crc[1]);
        bad |= write_cfg(c, &t, crc);
        rc = bad ? 1 : 0;
        if (!rc) {
            printf("%s layers=%zu mode=%s\n", c->name, p->n_layers,
                   dlasim_conv_weight_mode_name(p->weight_mode));
        }
    }
    free(ib);
    free(wb);
    free(ob);
out:
    free(in);
    free(wt);
    free(t.text);
    dlasim_conv_plan_free(&c->plan);
    dlasim_destroy(dev);
    return rc;
}

int main(int argc, char **argv)
{
    struct conv_case c;
    uint32_t max_layers = 2;
    memset(&c, 0, sizeof c);
    if (argc < 4) {
        fprintf(stderr, "usage: convcase DIR NAME SEED KEY=VALUE...\n");
        return 1;
    }
    c.dir = argv[1];
    c.name = argv[2];
    c.seed = strtoull(argv[3], NULL, 0);
    c.argc = argc - 3;
    c.argv = argv + 3;
    dlasim_conv_desc_init(&c.d);
    c.m.input = IN_ADDR;
    c.m.weights = WT_ADDR;
    c.m.output = OUT_ADDR;
    if (parse_args(argc, argv, &c.d, &c.m, &max_layers)) {
        return 1;
    }
    return run_case(&c, max_layers);
}
