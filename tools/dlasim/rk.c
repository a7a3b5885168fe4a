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
#define IN_ADDR 0x01000000u
#define WT_ADDR 0x04000000u
#define OUT_ADDR 0x08000000u

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
    return sscanf(s, "%ux%ux%u", w, h, c) == 3 && *w && *h && *c ? 0 : -1;
}

static uint32_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static int conv_check(struct dlasim_dev *dev, const struct conv_args *a, const int8_t *in,
                      const int8_t *wt, uint32_t ow, uint32_t oh, unsigned t)
{
    uint32_t oc = a->dw ? a->c : a->k;
    size_t bytes = dlasim_rk_feature_bytes(ow, oh, oc, 4);
    uint8_t *out = malloc(bytes);
    if (!out || dlasim_mem_read(dev, DLASIM_PORT_DBB, OUT_ADDR + t * (uint32_t)bytes, out, bytes)) {
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

static int load_conv_data(struct dlasim_dev *dev, const struct conv_args *a, int8_t *in,
                          int8_t *wt)
{
    size_t fb = dlasim_rk_feature_bytes(a->w, a->h, a->c, 1);
    uint32_t nk = a->dw ? 1 : a->k;
    size_t wb = dlasim_rk_weight_bytes(a->k, a->c, a->kn, a->kn, a->dw);
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
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, IN_ADDR, f, fb);
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, WT_ADDR, w, wb);
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
        if (!strcmp(o, "--in")) {
            if (parse_dims(v, &a->w, &a->h, &a->c)) {
                fprintf(stderr, "dlasim rk conv: --in takes WxHxC\n");
                return -1;
            }
        } else if (!strcmp(o, "--kernels")) {
            a->k = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--kernel")) {
            a->kn = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--stride")) {
            a->stride = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--pad")) {
            a->pad = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--tasks")) {
            a->tasks = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--seed")) {
            a->seed = strtoull(v, NULL, 0);
        } else {
            fprintf(stderr, "dlasim rk conv: unknown option '%s'\n", o);
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
    size_t nin = (size_t)a.c * a.h * a.w, nwt = (size_t)(a.dw ? 1 : a.k) * a.c * a.kn * a.kn;
    size_t out_bytes = dlasim_rk_feature_bytes(ow, oh, a.dw ? a.c : a.k, 4);
    int8_t *in = malloc(nin), *wt = malloc(nwt);
    struct dlasim_rk_regcmd l = {0};
    uint8_t *list = NULL;
    int rc = in && wt ? 0 : DLASIM_ERR_NOMEM;
    uint64_t s = a.seed;
    for (size_t i = 0; !rc && i < nin; i++) {
        in[i] = (int8_t)rng(&s);
    }
    for (size_t i = 0; !rc && i < nwt; i++) {
        wt[i] = (int8_t)rng(&s);
    }
    rc = rc ? rc : load_conv_data(dev, &a, in, wt);
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
        cv.input = IN_ADDR;
        cv.weights = WT_ADDR;
        cv.output = OUT_ADDR + t * (uint32_t)out_bytes;
        cv.out_int32 = 1;
        cv.to_memory = 1;
        rc = dlasim_rk_emit_conv(&l, &cv, NULL);
    }
    size_t bytes = dlasim_rk_layout_size(&l);
    list = rc ? NULL : malloc(bytes ? bytes : 1);
    rc = rc ? rc : (list ? dlasim_rk_layout(&l, CMD_ADDR, list, bytes) : DLASIM_ERR_NOMEM);
    rc = rc ? rc : dlasim_mem_write(dev, DLASIM_PORT_DBB, CMD_ADDR, list, bytes);
    double t0 = now_s();
    rc = rc ? rc : dlasim_rk_kick(dev, 0, CMD_ADDR, dlasim_rk_task_entries(&l, 0), a.tasks,
                                  DLASIM_RK_IRQ_DPU);
    rc = rc ? rc : dlasim_run(dev);
    double t1 = now_s();
    int bad = 0;
    for (uint32_t t = 0; !rc && t < a.tasks && !bad; t++) {
        bad = conv_check(dev, &a, in, wt, ow, oh, t);
    }
    if (rc) {
        fprintf(stderr, "dlasim rk conv: %s: %s\n", dlasim_status_name(rc), dlasim_last_error(dev));
    } else {
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

static int load_spec(struct dlasim_dev *dev, const char *spec)
{
    char path[1024];
    unsigned long addr;
    if (sscanf(spec, "%lx:%1023s", &addr, path) != 2) {
        fprintf(stderr, "dlasim rk run: --load takes ADDR:FILE (hex address)\n");
        return 1;
    }
    size_t n;
    uint8_t *buf = NULL;
    cli_read_file(path, &buf, &n); /* buf stays NULL on an error (printed) */
    int rc = buf ? dlasim_mem_write(dev, DLASIM_PORT_DBB, addr, buf, n) : 1;
    free(buf);
    return rc;
}

static int dump_spec(struct dlasim_dev *dev, const char *spec)
{
    char path[1024];
    unsigned long addr, size;
    if (sscanf(spec, "%lx:%lx:%1023s", &addr, &size, path) != 3 || size > (1ul << 30)) {
        fprintf(stderr, "dlasim rk run: --dump takes ADDR:SIZE:FILE (hex)\n");
        return 1;
    }
    uint8_t *buf = malloc(size ? size : 1);
    FILE *f = buf ? fopen(path, "wb") : NULL;
    int rc = f && !dlasim_mem_read(dev, DLASIM_PORT_DBB, addr, buf, size) &&
                     fwrite(buf, 1, size, f) == size ? 0 : 1;
    if (f) {
        fclose(f);
    }
    free(buf);
    return rc;
}

static int cmd_rk_run(int argc, char **argv)
{
    struct cli_common c = {0};
    const char *list = NULL, *loads[32], *dumps[32];
    size_t nload = 0, ndump = 0;
    uint32_t addr = CMD_ADDR, tasks = 1, core = 0;
    for (int i = 2; i < argc; i++) {
        int r = cli_common_option(&c, argc, argv, &i);
        if (r < 0) {
            return 2;
        }
        if (r) {
            continue;
        }
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (o[0] != '-' && !list) {
            list = o;
            continue;
        }
        if (!v) {
            fprintf(stderr, "dlasim rk run: %s needs a value\n", o);
            return 2;
        }
        i++;
        if (!strcmp(o, "--addr")) {
            addr = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--tasks")) {
            tasks = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--core")) {
            core = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(o, "--load") && nload < 32) {
            loads[nload++] = v;
        } else if (!strcmp(o, "--dump") && ndump < 32) {
            dumps[ndump++] = v;
        } else {
            fprintf(stderr, "dlasim rk run: unknown option '%s'\n", o);
            return 2;
        }
    }
    if (!list) {
        fprintf(stderr, "usage: dlasim rk run LIST.bin [--addr A] [--tasks N] [--core C] "
                        "[--load ADDR:FILE]... [--dump ADDR:SIZE:FILE]...\n");
        return 2;
    }
    c.config = "rk3588";
    struct dlasim_dev *dev = cli_create_device(&c);
    if (!dev) {
        return 1;
    }
    size_t n, first = 0;
    uint8_t *buf = NULL;
    cli_read_file(list, &buf, &n); /* buf stays NULL on an error (printed) */
    int rc = buf && n >= 8 ? dlasim_mem_write(dev, DLASIM_PORT_DBB, addr, buf, n) : DLASIM_ERR_IO;
    /* the first task ends with its op_en entry (target 0x0081) */
    while (buf && (first + 1) * 8 <= n && (get64(buf + first * 8) >> 48) != 0x81) {
        first++;
    }
    first = (first + 1) * 8 <= n ? first + 1 : n / 8;
    free(buf);
    for (size_t i = 0; !rc && i < nload; i++) {
        rc = load_spec(dev, loads[i]) ? DLASIM_ERR_IO : 0;
    }
    rc = rc ? rc : dlasim_rk_kick(dev, core, addr, first, tasks, 0x1ffff);
    rc = rc ? rc : dlasim_run(dev);
    char busy[512] = "";
    int still = dlasim_busy(dev, busy, sizeof(busy));
    uint32_t raw = 0, status = 0;
    dlasim_csb_read(dev, core * DLASIM_RK_CORE_STRIDE + 0x2c, &raw);
    dlasim_csb_read(dev, core * DLASIM_RK_CORE_STRIDE + 0x3c, &status);
    printf("core %u: %s; TASK_STATUS %u, INTERRUPT_RAW_STATUS 0x%x, IRQ %d%s%s\n", core,
           rc ? dlasim_last_error(dev) : "ran", status, raw, dlasim_rk_irq_level(dev, core),
           still ? "; still busy: " : "", busy);
    for (size_t i = 0; !rc && i < ndump; i++) {
        rc = dump_spec(dev, dumps[i]) ? DLASIM_ERR_IO : 0;
    }
    dlasim_destroy(dev);
    return rc || still ? 1 : 0;
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
