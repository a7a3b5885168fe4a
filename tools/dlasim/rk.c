/*
 * `dlasim rk`: the RK3588 NPU personality from the command line, through the
 * public API only (include/dlasim/rk3588.h).
 *
 *   dlasim rk conv [--in WxHxC] [--kernels K] [--kernel N] [--stride S]
 *                  [--pad P] [--depthwise] [--tasks N] [--seed S]
 *       build N int8->int32 convolution tasks as one regcmd list (Mesa's
 *       layout), kick it as one job, run it, check every output against
 *       integer arithmetic and report the time
 *   dlasim rk run LIST.bin [--addr A] [--tasks N] [--core C]
 *                 [--load ADDR:FILE]... [--dump ADDR:SIZE:FILE]...
 *       load a raw regcmd list (64-bit little-endian entries, e.g. a capture)
 *       and data, kick it as the rocket driver does and run it
 *   dlasim rk decode LIST.bin
 *       print the entries of a regcmd list with register names
 *
 * `dlasim info --config rk3588` prints the device (rk_info below).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dlasim/rk3588.h"

#define CMD_ADDR 0x10000u
/* rk conv's address map: the regcmd list at CMD_ADDR, then input, weights
 * and the tasks' outputs one after another from DATA_ADDR, each 4 KiB
 * aligned (conv_map); a map that leaves the 32-bit space is refused. */
#define DATA_ADDR 0x01000000u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int rk_info(struct dlasim_dev *dev, FILE *out)
{
    static const struct {
        const char *name;
        uint32_t base;
        const char *what;
    } blocks[] = {
        {"PC", 0x0000, "register-command fetch, tasks, interrupts"},
        {"CNA", 0x1000, "feature/weight DMA, 384 KiB CBUF, sequencer (NVDLA CDMA+CBUF+CSC)"},
        {"CORE", 0x3000, "MAC array and accumulator (NVDLA CMAC+CACC)"},
        {"DPU", 0x4000, "BS/BN/EW/OUT_CVT post-processing, WDMA (NVDLA SDP)"},
        {"DPU_RDMA", 0x5000, "MRDMA/BRDMA/NRDMA/ERDMA (NVDLA SDP_RDMA)"},
        {"PPU", 0x6000, "pooling (NVDLA PDP)"},
        {"PPU_RDMA", 0x7000, "pooling input DMA (NVDLA PDP_RDMA)"},
        {"DDMA", 0x8000, "AXI settings (NVDLA MCIF)"},
        {"SDMA", 0x9000, "AXI settings, same layout as DDMA (NVDLA CVIF)"},
        {"GLOBAL", 0xf000, "OPERATION_ENABLE of every block"},
    };
    uint64_t macs = 0, cbuf = 0;
    dlasim_param(dev, "RK_MACS_INT8_PER_CORE", &macs);
    dlasim_param(dev, "RK_CBUF_BYTES_PER_CORE", &cbuf);
    fprintf(out, "Rockchip RK3588 NPU (RKNN), modelled by dlasim\n");
    fprintf(out, "  cores            %u, each with its own register window and IRQ line\n",
            dlasim_rk_cores(dev));
    for (unsigned c = 0; c < dlasim_rk_cores(dev); c++) {
        fprintf(out, "    core %u         CSB 0x%05x-0x%05x (SoC 0x%08x), IRQ line %u (SPI %u)\n", c,
                c * DLASIM_RK_CORE_STRIDE, (c + 1) * DLASIM_RK_CORE_STRIDE - 1,
                0xfdab0000u + c * 0x10000u, c, 110 + c);
    }
    fprintf(out, "  MACs per cycle   %" PRIu64 " int8 per core (TRM 36.1)\n", macs);
    fprintf(out, "  CBUF             %" PRIu64 " KiB per core\n", cbuf / 1024);
    fprintf(out, "  memory           one port, 32-bit addresses\n");
    fprintf(out, "  blocks (offset in a core's window):\n");
    for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
        fprintf(out, "    0x%04x %-9s %s\n", blocks[i].base, blocks[i].name, blocks[i].what);
    }
    fprintf(out, "  modelled compute int8 direct and depthwise convolution (NC1HWC2, 32x32 weight\n"
                 "                   blocks), int32 output with the DPU bypassed, DPU BS/BN\n"
                 "                   (ALU, MUL, PReLU, ReLU/ReLUX) and EW (ALU/MUL, converter) with\n"
                 "                   DPU_RDMA operands, OUT_CVT, DPU->PPU fusion, PPU max/min/average\n"
                 "                   pooling, PPU_RDMA\n");
    fprintf(out, "  not modelled     the LUT, fp16/bf16/int16/int4 MACs, deconvolution, weight\n"
                 "                   decompression, index output (refused with an error)\n");
    fprintf(out, "  registers        regdb/rk3588.xml (docs/registers-rk3588.md), names as\n"
                 "                   RKNN_ppu_s_pointer in traces\n");
    return 0;
}

/* ---- rk conv ---------------------------------------------------------------------- */

struct conv_args {
    uint32_t w, h, c, k, kn, stride, pad, tasks;
    int dw;
    uint64_t seed;
};

static int parse_dims(const char *s, uint32_t *w, uint32_t *h, uint32_t *c)
{
    char tail;
    return sscanf(s, "%5u x%5u x%5u%c", w, h, c, &tail) == 3 && s[0] >= '0' && s[0] <= '9' &&
                   !strchr(s, '-') && !strchr(s, '+') && !strchr(s, ' ') && *w && *h && *c &&
                   *w <= 8192 && *h <= 8192 && *c <= 8192
               ? 0
               : -1;
}

static uint32_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* Where rk conv puts its data in device memory (one 32-bit address space). */
struct conv_map {
    uint32_t in, wt, out;   /* input, weights, first task's output */
    size_t in_bytes, wt_bytes, out_bytes; /* out_bytes: one task's */
};

static uint64_t align4k(uint64_t x)
{
    return (x + 4095) & ~(uint64_t)4095;
}

/* Input, weights and every task's output without overlap, below 2^32;
 * -1 (printed) when they do not fit: the shape is refused, never run with
 * outputs written over inputs and then blamed on the model. */
static int conv_map_plan(const struct conv_args *a, uint32_t ow, uint32_t oh, struct conv_map *m)
{
    m->in_bytes = dlasim_rk_feature_bytes(a->w, a->h, a->c, 1);
    m->wt_bytes = dlasim_rk_weight_bytes(a->k, a->c, a->kn, a->kn, a->dw);
    m->out_bytes = dlasim_rk_feature_bytes(ow, oh, a->dw ? a->c : a->k, 4);
    uint64_t wt = align4k((uint64_t)DATA_ADDR + m->in_bytes);
    uint64_t out = align4k(wt + m->wt_bytes);
    uint64_t end = out + (uint64_t)m->out_bytes * a->tasks;
    if (end > ((uint64_t)1 << 32)) {
        fprintf(stderr, "dlasim rk conv: input (%zu bytes), weights (%zu bytes) and %u task "
                        "output(s) of %zu bytes need %" PRIu64 " bytes of device memory from 0x%x; "
                        "the RK3588 NPU addresses 4 GiB: use a smaller shape or fewer --tasks\n",
                m->in_bytes, m->wt_bytes, a->tasks, m->out_bytes, end - DATA_ADDR, DATA_ADDR);
        return -1;
    }
    m->in = DATA_ADDR;
    m->wt = (uint32_t)wt;
    m->out = (uint32_t)out;
    return 0;
}

static int conv_check(struct dlasim_dev *dev, const struct conv_args *a, const struct conv_map *m,
                      const int8_t *in, const int8_t *wt, uint32_t ow, uint32_t oh, unsigned t)
{
    uint32_t oc = a->dw ? a->c : a->k;
    size_t bytes = m->out_bytes;
    uint8_t *out = malloc(bytes);
    if (!out) {
        fprintf(stderr, "dlasim rk conv: out of host memory for task %u's output (%zu bytes)\n", t,
                bytes);
        return -1;
    }
    int rc = dlasim_mem_read(dev, DLASIM_PORT_DBB, m->out + t * (uint32_t)bytes, out, bytes);
    if (rc) {
        fprintf(stderr, "dlasim rk conv: reading task %u's output: %s: %s\n", t,
                dlasim_status_name(rc), dlasim_last_error(dev));
        free(out);
        return -1;
    }
    int bad = 0;
    for (uint32_t k = 0; k < oc && !bad; k++) {
        for (uint32_t oy = 0; oy < oh && !bad; oy++) {
            for (uint32_t ox = 0; ox < ow && !bad; ox++) {
                int64_t acc = 0;
                for (uint32_t ch = a->dw ? k : 0; ch < (a->dw ? k + 1 : a->c); ch++) {
                    for (uint32_t ky = 0; ky < a->kn; ky++) {
                        for (uint32_t kx = 0; kx < a->kn; kx++) {
                            int64_t y = (int64_t)oy * a->stride + ky - a->pad;
                            int64_t x = (int64_t)ox * a->stride + kx - a->pad;
                            if (y < 0 || x < 0 || y >= a->h || x >= a->w) {
                                continue; /* pad value 0 */
                            }
                            size_t wi = a->dw ? ((size_t)ch * a->kn + ky) * a->kn + kx
                                              : (((size_t)k * a->c + ch) * a->kn + ky) * a->kn + kx;
                            acc += (int64_t)in[((size_t)ch * a->h + (size_t)y) * a->w + (size_t)x] *
                                   wt[wi];
                        }
                    }
                }
                int32_t got;
                memcpy(&got, out + dlasim_rk_feature_offset(ow, oh, k, oy, ox, 4), 4);
                if (got != acc) {
                    fprintf(stderr, "dlasim rk conv: task %u out[%u][%u][%u] = %d, integer math "
                            "%lld\n", t, k, oy, ox, got, (long long)acc);
                    bad = 1;
                }
            }
        }
    }
    free(out);
    return bad;
}

static int load_conv_data(struct dlasim_dev *dev, const struct conv_args *a,
                          const struct conv_map *m, int8_t *in, int8_t *wt)
{
    size_t fb = m->in_bytes;
    uint32_t nk = a->dw ? 1 : a->k;
    size_t wb = m->wt_bytes;
    uint8_t *f = calloc(fb, 1), *w = calloc(wb, 1);
    int rc = f && w ? 0 : DLASIM_ERR_NOMEM;
    for (uint32_t ch = 0; !rc && ch < a->c; ch++) {
        for (uint32_t y = 0; y < a->h; y++) {
            for (uint32_t x = 0; x < a->w; x++) {
                f[dlasim_rk_feature_offset(a->w, a->h, ch, y, x, 1)] =
                    (uint8_t)in[((size_t)ch * a->h + y) * a->w + x];
            }
        }
    }
    for (uint32_t k = 0; !rc && k < nk; k++) {
        for (uint32_t ch = 0; ch < a->c; ch++) {
            for (uint32_t ky = 0; ky < a->kn; ky++) {
                for (uint32_t kx = 0; kx < a->kn; kx++) {
                    w[dlasim_rk_weight_offset(k, ch, ky, kx, a->k, a->c, a->kn, a->kn, a->dw)] =
                        (uint8_t)wt[(((size_t)k * a->c + ch) * a->kn + ky) * a->kn + kx];
                }
            }
        }
    }
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, m->in, f, fb);
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, m->wt, w, wb);
    free(f);
    free(w);
    return rc;
}

static int conv_parse(int argc, char **argv, struct cli_common *c, struct conv_args *a)
{
    *a = (struct conv_args){16, 16, 32, 32, 3, 1, 1, 1, 0, 1};
    for (int i = 2; i < argc; i++) {
        int r = cli_common_option(c, argc, argv, &i);
        if (r < 0) {
            return -1;
        }
        if (r) {
            continue;
        }
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--depthwise")) {
            a->dw = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "dlasim rk conv: unexpected argument '%s'\n", o);
            return -1;
        }
        i++;
        int bad = 0;
        if (!strcmp(o, "--in")) {
            if (parse_dims(v, &a->w, &a->h, &a->c)) {
                fprintf(stderr, "dlasim rk conv: --in takes WxHxC (each 1 to 8192), got '%s'\n", v);
                return -1;
            }
        } else if (!strcmp(o, "--kernels")) {
            bad = cli_parse_u32(o, v, 1, 8192, &a->k);
        } else if (!strcmp(o, "--kernel")) {
            bad = cli_parse_u32(o, v, 1, 31, &a->kn);
        } else if (!strcmp(o, "--stride")) {
            bad = cli_parse_u32(o, v, 1, 7, &a->stride);
        } else if (!strcmp(o, "--pad")) {
            bad = cli_parse_u32(o, v, 0, 30, &a->pad);
        } else if (!strcmp(o, "--tasks")) {
            bad = cli_parse_u32(o, v, 1, 4095, &a->tasks);
        } else if (!strcmp(o, "--seed")) {
            bad = cli_parse_u64(o, v, 0, UINT64_MAX, &a->seed);
        } else {
            fprintf(stderr, "dlasim rk conv: unknown option '%s'\n", o);
            return -1;
        }
        if (bad) {
            return -1;
        }
    }
    if (!a->k || !a->kn || a->kn > 31 || !a->stride || a->stride > 7 || a->pad >= a->kn ||
        !a->tasks || a->tasks > 4095 || a->w + 2 * a->pad < a->kn || a->h + 2 * a->pad < a->kn) {
        fprintf(stderr, "dlasim rk conv: need kernels >= 1, 1 <= kernel <= 31, 1 <= stride <= 7, "
                        "pad < kernel, 1 <= tasks <= 4095 and the kernel to fit the padded input\n");
        return -1;
    }
    if (a->dw) {
        a->k = a->c;
    }
    return 0;
}

static int cmd_rk_conv(int argc, char **argv)
{
    struct cli_common c = {0};
    struct conv_args a;
    if (conv_parse(argc, argv, &c, &a)) {
        return 2;
    }
    c.config = "rk3588";
    struct dlasim_dev *dev = cli_create_device(&c);
    if (!dev) {
        return 1;
    }
    uint32_t ow = (a.w + 2 * a.pad - a.kn) / a.stride + 1, oh = (a.h + 2 * a.pad - a.kn) / a.stride + 1;
    struct conv_map map;
    if (conv_map_plan(&a, ow, oh, &map)) {
        dlasim_destroy(dev);
        return 2;
    }
    size_t nin = (size_t)a.c * a.h * a.w, nwt = (size_t)(a.dw ? 1 : a.k) * a.c * a.kn * a.kn;
    int8_t *in = malloc(nin), *wt = malloc(nwt);
    struct dlasim_rk_regcmd l = {0};
    uint8_t *list = NULL;
    const char *stage = "host memory for the input and weights";
    int rc = in && wt ? 0 : DLASIM_ERR_NOMEM;
    uint64_t s = a.seed;
    for (size_t i = 0; !rc && i < nin; i++) {
        in[i] = (int8_t)rng(&s);
    }
    for (size_t i = 0; !rc && i < nwt; i++) {
        wt[i] = (int8_t)rng(&s);
    }
    if (!rc) {
        stage = "writing the input and weights into device memory";
        rc = load_conv_data(dev, &a, &map, in, wt);
    }
    for (uint32_t t = 0; !rc && t < a.tasks; t++) {
        struct dlasim_rk_conv cv = {0};
        cv.in_w = a.w;
        cv.in_h = a.h;
        cv.in_c = a.c;
        cv.kernels = a.k;
        cv.k_w = cv.k_h = a.kn;
        cv.stride_x = cv.stride_y = a.stride;
        cv.pad_left = cv.pad_top = a.pad;
        cv.out_w = ow;
        cv.out_h = oh;
        cv.depthwise = a.dw;
        cv.input = map.in;
        cv.weights = map.wt;
        cv.output = map.out + t * (uint32_t)map.out_bytes;
        cv.out_int32 = 1;
        cv.to_memory = 1;
        stage = "building the regcmd list";
        rc = dlasim_rk_emit_conv(&l, &cv, NULL);
    }
    size_t bytes = dlasim_rk_layout_size(&l);
    if (!rc && bytes > DATA_ADDR - CMD_ADDR) {
        fprintf(stderr, "dlasim rk conv: the regcmd list (%zu bytes) does not fit below the data at "
                        "0x%x: fewer --tasks\n", bytes, DATA_ADDR);
        rc = DLASIM_ERR_INVAL;
        stage = NULL;
    }
    if (!rc) {
        stage = "host memory for the regcmd list";
        list = malloc(bytes ? bytes : 1);
        rc = list ? dlasim_rk_layout(&l, CMD_ADDR, list, bytes) : DLASIM_ERR_NOMEM;
    }
    if (!rc) {
        stage = "writing the regcmd list into device memory";
        rc = dlasim_mem_write(dev, DLASIM_PORT_DBB, CMD_ADDR, list, bytes);
    }
    double t0 = now_s();
    if (!rc) {
        stage = "running the job";
        rc = dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(&l, 0), a.tasks,
                            DLASIM_RK_IRQ_DPU);
        rc = rc ? rc : dlasim_run(dev);
    }
    double t1 = now_s();
    int bad = 0;
    for (uint32_t t = 0; !rc && t < a.tasks && !bad; t++) {
        bad = conv_check(dev, &a, &map, in, wt, ow, oh, t);
    }
    if (rc && stage) {
        const char *why = dlasim_last_error(dev);
        fprintf(stderr, "dlasim rk conv: %s: %s%s%s\n", stage, dlasim_status_name(rc),
                why && *why ? ": " : "", why ? why : "");
    } else if (!rc && bad >= 0) {
        uint64_t macs = (uint64_t)ow * oh * (a.dw ? a.c : a.k) * a.kn * a.kn * (a.dw ? 1 : a.c);
        printf("rk3588 conv %ux%ux%u -> %ux%ux%u, %ux%u kernel, stride %u, pad %u%s: %u task(s) "
               "in one regcmd list (%zu bytes), %.3f ms, %.2f GMAC/s, irq %d, outputs %s\n",
               a.w, a.h, a.c, ow, oh, a.dw ? a.c : a.k, a.kn, a.kn, a.stride, a.pad,
               a.dw ? " depthwise" : "", a.tasks, bytes, (t1 - t0) * 1e3,
               (double)macs * a.tasks / ((t1 - t0) * 1e9), dlasim_irq_level(dev),
               bad ? "DIFFER from integer math" : "equal to integer math");
    }
    free(in);
    free(wt);
    free(list);
    dlasim_rk_regcmd_free(&l);
    dlasim_destroy(dev);
    return rc || bad ? 1 : 0;
}

/* ---- rk run / decode ----------------------------------------------------------------- */

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned b = 0; b < 8; b++) {
        v |= (uint64_t)p[b] << (8 * b);
    }
    return v;
}

static int cmd_rk_decode(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dlasim rk decode LIST.bin\n");
        return 2;
    }
    size_t n;
    uint8_t *buf = NULL;
    cli_read_file(argv[2], &buf, &n); /* buf stays NULL on an error (printed) */
    if (!buf) {
        return 1;
    }
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t e = get64(buf + i);
        uint32_t target = (uint32_t)(e >> 48), value = (uint32_t)(e >> 16), off = (uint32_t)e & 0xffff;
        char name[96];
        if (target == 0) {
            printf("%6zu: 0x%016" PRIx64 "  (padding / end of chain)\n", i / 8, e);
        } else if (target == 0x41) {
            printf("%6zu: 0x%016" PRIx64 "  marker before op_en\n", i / 8, e);
        } else if (target == 0x81) {
            printf("%6zu: 0x%016" PRIx64 "  op_en, blocks 0x%x\n", i / 8, e, value);
        } else {
            printf("%6zu: 0x%016" PRIx64 "  [0x%04x] %s = 0x%x\n", i / 8, e, target,
                   dlasim_rk_reg_name(off, name, sizeof(name)), value);
        }
    }
    free(buf);
    return 0;
}

/* --load ADDR:FILE: FILE's bytes into device memory at ADDR (hex, < 2^32). */
static int load_spec(struct dlasim_dev *dev, const char *spec)
{
    uint32_t addr;
    const char *path;
    if (cli_parse_addr_prefix("--load", spec, &addr, &path)) {
        return -1;
    }
    size_t n;
    uint8_t *buf = NULL;
    if (cli_read_file(path, &buf, &n)) {
        return -1;
    }
    int rc = (uint64_t)addr + n > ((uint64_t)1 << 32) ? DLASIM_ERR_INVAL
                                                       : dlasim_mem_write(dev, DLASIM_PORT_DBB, addr, buf, n);
    if (rc) {
        fprintf(stderr, "dlasim rk run: --load %s: %zu bytes at 0x%x: %s\n", spec, n, addr,
                rc == DLASIM_ERR_INVAL ? "beyond the 32-bit address space" : dlasim_last_error(dev));
    }
    free(buf);
    return rc ? -1 : 0;
}

/* --dump ADDR:SIZE:FILE: SIZE bytes (hex, at most 1 GiB) from ADDR into FILE. */
static int dump_spec(struct dlasim_dev *dev, const char *spec)
{
    uint32_t addr, size;
    const char *rest, *path;
    if (cli_parse_addr_prefix("--dump", spec, &addr, &rest) ||
        cli_parse_addr_prefix("--dump (SIZE)", rest, &size, &path)) {
        return -1;
    }
    if (size > (1u << 30) || (uint64_t)addr + size > ((uint64_t)1 << 32)) {
        fprintf(stderr, "dlasim rk run: --dump %s: at most 1 GiB, inside the 32-bit address space\n",
                spec);
        return -1;
    }
    uint8_t *buf = malloc(size ? size : 1);
    int rc = buf ? dlasim_mem_read(dev, DLASIM_PORT_DBB, addr, buf, size) : DLASIM_ERR_NOMEM;
    if (rc) {
        fprintf(stderr, "dlasim rk run: --dump %s: %s\n", spec,
                buf ? dlasim_last_error(dev) : "out of host memory");
        free(buf);
        return -1;
    }
    rc = cli_write_file(path, buf, size);
    free(buf);
    return rc;
}

/* The options of `rk run`. */
struct run_args {
    const char *list, *loads[32], *dumps[32];
    size_t nload, ndump;
    uint32_t addr, tasks, core;
};

static int run_parse(int argc, char **argv, struct cli_common *c, struct run_args *r)
{
    memset(r, 0, sizeof *r);
    r->addr = CMD_ADDR;
    r->tasks = 1;
    for (int i = 2; i < argc; i++) {
        int k = cli_common_option(c, argc, argv, &i);
        if (k < 0) {
            return -1;
        }
        if (k) {
            continue;
        }
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (o[0] != '-' && !r->list) {
            r->list = o;
            continue;
        }
        if (o[0] != '-') {
            fprintf(stderr, "dlasim rk run: unexpected argument '%s' (one LIST.bin)\n", o);
            return -1;
        }
        if (!v) {
            fprintf(stderr, "dlasim rk run: %s needs a value\n", o);
            return -1;
        }
        i++;
        int bad = 0;
        if (!strcmp(o, "--addr")) {
            bad = cli_parse_u32(o, v, 0, UINT32_MAX, &r->addr);
        } else if (!strcmp(o, "--tasks")) {
            bad = cli_parse_u32(o, v, 1, 4095, &r->tasks); /* TASK_CON.task_number, 12 bits */
        } else if (!strcmp(o, "--core")) {
            bad = cli_parse_u32(o, v, 0, DLASIM_RK_CORES - 1, &r->core);
        } else if (!strcmp(o, "--load") || !strcmp(o, "--dump")) {
            int ld = !strcmp(o, "--load");
            size_t *n = ld ? &r->nload : &r->ndump;
            if (*n == 32) {
                fprintf(stderr, "dlasim rk run: at most 32 %s options\n", o);
                return -1;
            }
            uint32_t at, size;
            const char *rest, *path;
            /* checked here, so a malformed spec is a usage error before any run */
            if (cli_parse_addr_prefix(o, v, &at, &rest) ||
                (!ld && cli_parse_addr_prefix("--dump (SIZE)", rest, &size, &path))) {
                return -1;
            }
            (ld ? r->loads : r->dumps)[(*n)++] = v;
        } else {
            fprintf(stderr, "dlasim rk run: unknown option '%s'\n", o);
            return -1;
        }
        if (bad) {
            return -1;
        }
    }
    if (!r->list) {
        fprintf(stderr, "usage: dlasim rk run LIST.bin [--addr A] [--tasks N] [--core C] "
                        "[--load ADDR:FILE]... [--dump ADDR:SIZE:FILE]...\n");
        return -1;
    }
    /* The PC fetches from BASE_ADDRESS[31:4]; bit 0 (pc_sel) is slave mode,
     * in which nothing is fetched at all (rk_npu.c). */
    if (r->addr & 0xfu) {
        fprintf(stderr, "dlasim rk run: --addr 0x%x: the PC takes a 16-byte aligned list address "
                        "(BASE_ADDRESS[31:4]; bit 0 would select slave mode and run nothing)\n",
                r->addr);
        return -1;
    }
    return 0;
}

/* The list's bytes at r->addr; *first = entries of its first task (up to
 * and including its op_en entry, target 0x0081). */
static int run_load_list(struct dlasim_dev *dev, const struct run_args *r, size_t *first)
{
    size_t n, k = 0;
    uint8_t *buf = NULL;
    if (cli_read_file(r->list, &buf, &n)) {
        return -1;
    }
    int rc = 0;
    if (n < 8 || n % 8) {
        fprintf(stderr, "dlasim rk run: %s: %zu bytes is not a list of 64-bit regcmd entries\n",
                r->list, n);
        rc = -1;
    } else if ((uint64_t)r->addr + n > ((uint64_t)1 << 32)) {
        fprintf(stderr, "dlasim rk run: %s: %zu bytes at --addr 0x%x pass the 32-bit address "
                        "space\n", r->list, n, r->addr);
        rc = -1;
    } else if (dlasim_mem_write(dev, DLASIM_PORT_DBB, r->addr, buf, n)) {
        fprintf(stderr, "dlasim rk run: %s: %s\n", r->list, dlasim_last_error(dev));
        rc = -1;
    }
    while (!rc && (k + 1) * 8 <= n && (get64(buf + k * 8) >> 48) != 0x81) {
        k++;
    }
    *first = (k + 1) * 8 <= n ? k + 1 : n / 8;
    free(buf);
    return rc;
}

static int cmd_rk_run(int argc, char **argv)
{
    struct cli_common c = {0};
    struct run_args r;
    if (run_parse(argc, argv, &c, &r)) {
        return 2;
    }
    c.config = "rk3588";
    struct dlasim_dev *dev = cli_create_device(&c);
    if (!dev) {
        return 1;
    }
    size_t first = 0;
    int rc = run_load_list(dev, &r, &first) ? DLASIM_ERR_IO : 0;
    for (size_t i = 0; !rc && i < r.nload; i++) {
        rc = load_spec(dev, r.loads[i]) ? DLASIM_ERR_IO : 0;
    }
    if (rc) {
        dlasim_destroy(dev);
        return 1;
    }
    rc = dlasim_rk_kick(dev, r.core, r.addr, first, r.tasks, 0x1ffff);
    rc = rc ? rc : dlasim_run(dev);
    char busy[512] = "";
    int still = dlasim_busy(dev, busy, sizeof(busy));
    uint32_t raw = 0, status = 0;
    dlasim_csb_read(dev, r.core * DLASIM_RK_CORE_STRIDE + 0x2cu /* PC INTERRUPT_RAW_STATUS */, &raw);
    dlasim_csb_read(dev, r.core * DLASIM_RK_CORE_STRIDE + 0x3cu /* PC TASK_STATUS */, &status);
    char why[600];
    const char *err = dlasim_last_error(dev);
    if (rc) {
        snprintf(why, sizeof why, "%s%s%s", dlasim_status_name(rc), err && *err ? ": " : "",
                 err ? err : "");
    } else if (status < r.tasks) {
        /* a run that completed fewer tasks than kicked is a failure, not "ran" */
        snprintf(why, sizeof why, "only %u of %u task(s) completed", status, r.tasks);
    } else {
        snprintf(why, sizeof why, "ran");
    }
    printf("core %u: %s; TASK_STATUS %u, INTERRUPT_RAW_STATUS 0x%x, IRQ %d%s%s\n", r.core, why,
           status, raw, dlasim_rk_irq_level(dev, r.core), still ? "; still busy: " : "", busy);
    int failed = rc || still || status < r.tasks;
    for (size_t i = 0; !failed && i < r.ndump; i++) {
        failed = dump_spec(dev, r.dumps[i]) != 0;
    }
    dlasim_destroy(dev);
    return failed ? 1 : 0;
}

int cmd_rk(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "conv")) {
        return cmd_rk_conv(argc, argv);
    }
    if (argc >= 2 && !strcmp(argv[1], "run")) {
        return cmd_rk_run(argc, argv);
    }
    if (argc >= 2 && !strcmp(argv[1], "decode")) {
        return cmd_rk_decode(argc, argv);
    }
    fprintf(stderr, "usage: dlasim rk conv|run|decode ... (see dlasim --help)\n");
    return 2;
}
