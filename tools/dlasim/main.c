/*
 * dlasim — command-line front end of the NVDLA model.
 *
 *   dlasim trace [options] CASE.cfg
 *   dlasim trace [options] --suite DIR [--match GLOB] [--table]
 *   dlasim info  [options]
 *
 * Common options: --config NAME, --set PARAM=VALUE (repeatable),
 * --threads N, --strict, --log reg,exec,guest,unimp, --max-mem SIZE,
 * --max-work N.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dlasim <command> [options]\n"
            "\n"
            "commands:\n"
            "  trace CASE.cfg                 run one NVDLA register trace; exit 0 iff all checks pass\n"
            "  trace --suite DIR [--match GLOB] [--exclude GLOB] [--expect FILE] [--table]\n"
            "        [--shard I/N --shard-out FILE]\n"
            "                                 run every case folder of DIR\n"
            "  info                           read the ConfigROM through the CSB and decode it\n"
            "  compile MODEL.onnx --calib DATA [--calib-count N] [-o MODEL.nvdla]\n"
            "          [--method minmax|percentile|entropy] [--percentile P] [--check N]\n"
            "          [--min-sqnr DB]\n"
            "                                 calibrate an ONNX model for INT8 and lower it to NVDLA layers\n"
            "  run MODEL.onnx --input FILE... [--calib DATA] [--labels IDX1] [--names FILE]\n"
            "      [--json OUT] [--times OUT] [--report] [--record-trace DIR] [--compare-float]\n"
            "      [--draw N] [--out-raw FILE] [--float-raw FILE] [--float-only]\n"
            "      [--count N] [--progress] [--scale S] [--mean M] [--shard I/N --shard-out FILE]\n"
            "      [--min-sqnr DB]\n"
            "                                 run it on the simulated device, print the top classes\n"
            "  merge [--json FILE] SHARD.jsonl...\n"
            "                                 the --shard I/N outputs of one job printed as one\n"
            "                                 process prints them (docs/cluster.md)\n"
            "  each LIST [--shard I/N --shard-out FILE] -- COMMAND ARG...\n"
            "                                 COMMAND once per line of LIST (\"{}\": the line's\n"
            "                                 words, \"{#}\": its index), outputs in list order\n"
            "  rk conv [--in WxHxC] [--kernels K] [--kernel N] [--stride S] [--pad P]\n"
            "          [--depthwise] [--tasks N] [--seed S]\n"
            "                                 RK3588: N int8 conv tasks in one regcmd list, run\n"
            "                                 through the PC, checked against integer math\n"
            "  rk run LIST.bin [--addr A] [--tasks N] [--core C] [--load ADDR:FILE]...\n"
            "         [--dump ADDR:SIZE:FILE]...\n"
            "                                 RK3588: kick a raw regcmd list as linux rocket does\n"
            "  rk decode LIST.bin             RK3588: print a regcmd list with register names\n"
            "  teflon MODEL.tflite [--input FILE] [--json OUT]\n"
            "                                 a TFLite model on TFLite's CPU and through Mesa's\n"
            "                                 Teflon + rocket on the RK3588 (docs/teflon.md)\n"
            "  loadable FILE [--input FILE ...] [--output DIR] [--expect-md5 MD5]\n"
            "               [--record-trace DIR]\n"
            "                                 run an NVDLA loadable, dump outputs as DIR/o_000000.dimg\n"
            "\n"
            "options for every command:\n"
            "  --config NAME                  nv_small (default), nv_small_256, nv_large, rk3588\n"
            "  --set PARAM=VALUE              override a scalability parameter, e.g.\n"
            "                                 --set NVDLA_SDP_EW_ENABLE=1 (repeatable)\n"
            "  --threads N                    worker threads for large layers (default: all cores)\n"
            "  --threads-always               share work with them even while passing data\n"
            "                                 between the cores is slow (by default the device\n"
            "                                 then runs on one thread; docs/library.md)\n"
            "  --strict                       report reads of never-written memory as errors\n"
            "  --log LIST                     print device log: reg,exec,guest,unimp\n"
            "  --max-mem SIZE                 host memory device memory may take (pages of\n"
            "                                 written data), e.g. 512M, 8G (default 8G; 0 = no limit)\n"
            "  --max-work N                   refuse a layer whose bytes read + bytes written +\n"
            "                                 elements computed exceed N (K/M/G suffixes; default:\n"
            "                                 no limit)\n"
            "  --timing                       cycle model on (docs/timing.md)\n"
            "  --overlap, --no-overlap        start the next enabled layer on a worker while the\n"
            "                                 host services an interrupt, as the hardware does\n"
            "                                 (default: on for run, compile --check, loadable;\n"
            "                                 off for trace; off with --timing or --log)\n"
            "  --mem-profile NAME             rtl-tb (NVIDIA's RTL testbench, default) or dram\n"
            "  --mem-bw GBPS, --mem-latency NS  a DRAM profile of that bandwidth and latency\n"
            "  --clock-mhz MHZ                core clock for times and fps (default 1000)\n"
            "\n"
            "trace --timing [--json FILE] [--timeline FILE.json] [--plot FILE.png]\n"
            "                                 modelled cycles_to_last_intr, per-layer table,\n"
            "                                 JSON, Perfetto timeline, plot\n"
            "estimate [--network NAME] [--config NAME] [--clock-mhz MHZ] [--mem-bw GBPS]\n"
            "         [--mem-latency NS] [--json FILE] [--timeline FILE.json]\n"
            "                                 whole-network cycles and fps (resnet18, resnet50)\n");
}

uint64_t cli_max_mem(const struct cli_common *c)
{
    return c->max_mem_given ? c->max_mem : CLI_DEFAULT_MAX_MEM;
}

/* --mem-profile NAME, --mem-bw GBPS, --mem-latency NS, --clock-mhz MHZ. */
static int timing_option(struct cli_common *c, const char *opt, const char *v)
{
    if (!v) {
        fprintf(stderr, "dlasim: %s needs a value\n", opt);
        return -1;
    }
    if (!strcmp(opt, "--mem-profile")) {
        struct dlasim_timing_profile p;
        if (dlasim_timing_profile_get(v, &p)) {
            fprintf(stderr, "dlasim: --mem-profile: unknown profile '%s' (rtl-tb, dram)\n", v);
            return -1;
        }
        c->mem_profile = v;
        return 1;
    }
    /* Ranges that keep every modelled cycle count far from overflow: at
     * worst 1e5 MHz / 0.01 GB/s = 1e4 cycles per byte (docs/timing.md). */
    double lo = !strcmp(opt, "--mem-bw") ? 0.01 : !strcmp(opt, "--mem-latency") ? 0.001 : 1.0;
    double hi = !strcmp(opt, "--mem-latency") ? 1e6 : 1e5;
    double x;
    if (cli_parse_double(opt, v, lo, hi, &x)) {
        return -1;
    }
    if (!strcmp(opt, "--mem-bw")) {
        c->mem_gbps = x;
    } else if (!strcmp(opt, "--mem-latency")) {
        c->mem_latency_ns = x;
    } else {
        c->clock_mhz = x;
    }
    return 1;
}

int cli_timing_profile(const struct cli_common *c, struct dlasim_timing_profile *p)
{
    double mhz = c->clock_mhz > 0 ? c->clock_mhz : 1000.0;
    if (c->mem_gbps > 0 || c->mem_latency_ns > 0 || (c->mem_profile && !strcmp(c->mem_profile, "dram"))) {
        dlasim_timing_profile_dram(p, c->mem_gbps > 0 ? c->mem_gbps : 25.6,
                                   c->mem_latency_ns > 0 ? c->mem_latency_ns : 100.0, mhz);
        return 0;
    }
    return dlasim_timing_profile_get(c->mem_profile ? c->mem_profile : "rtl-tb", p);
}

int cli_common_option(struct cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    int has_value = *i + 1 < argc;
    if (!strcmp(a, "--strict")) {
        c->strict = 1;
        return 1;
    }
    if (!strcmp(a, "--timing")) {
        c->timing = 1;
        return 1;
    }
    if (!strcmp(a, "--threads-always")) {
        c->threads_always = 1;
        return 1;
    }
    if (!strcmp(a, "--overlap") || !strcmp(a, "--no-overlap")) {
        c->overlap = a[2] == 'o';
        return 1;
    }
    if (!strcmp(a, "--mem-profile") || !strcmp(a, "--mem-bw") || !strcmp(a, "--mem-latency") ||
        !strcmp(a, "--clock-mhz")) {
        return timing_option(c, a, has_value ? argv[++*i] : NULL);
    }
    if (strcmp(a, "--config") && strcmp(a, "--set") && strcmp(a, "--threads") &&
        strcmp(a, "--log") && strcmp(a, "--max-mem") && strcmp(a, "--max-work")) {
        return 0;
    }
    if (!has_value) {
        fprintf(stderr, "dlasim: %s needs a value\n", a);
        return -1;
    }
    const char *v = argv[++*i];
    if (!strcmp(a, "--config")) {
        c->config = v;
    } else if (!strcmp(a, "--set")) {
        if (c->nsets == CLI_MAX_SETS) {
            fprintf(stderr, "dlasim: at most %d --set options\n", CLI_MAX_SETS);
            return -1;
        }
        c->sets[c->nsets++] = v;
    } else if (!strcmp(a, "--threads")) {
        uint32_t n;
        if (cli_parse_u32(a, v, 0, 256, &n)) {
            return -1;
        }
        c->threads = n;
    } else if (!strcmp(a, "--max-mem") || !strcmp(a, "--max-work")) {
        uint64_t n;
        if (cli_parse_size(a, v, &n)) {
            return -1;
        }
        if (!strcmp(a, "--max-mem")) {
            c->max_mem = n;
            c->max_mem_given = 1;
        } else {
            c->max_work = n;
        }
    } else if (cli_parse_log(a, v, &c->log_mask)) {
        return -1;
    }
    return 1;
}

static void log_to_stderr(void *opaque, unsigned category, const char *msg)
{
    (void)opaque;
    (void)category;
    fprintf(stderr, "%s\n", msg);
}

struct dlasim_dev *cli_create_device(const struct cli_common *c)
{
    struct dlasim_options o = {0};
    char err[2048];
    struct dlasim_dev *dev;
    o.config = c->config;
    o.overrides = c->sets;
    o.n_overrides = c->nsets;
    o.threads = c->threads;
    o.threads_always = c->threads_always;
    o.strict_mem = c->strict;
    o.log_mask = c->log_mask;
    o.log_cb = log_to_stderr;
    o.max_host_mem = cli_max_mem(c);
    o.max_layer_work = c->max_work;
    o.overlap = c->overlap;
    struct dlasim_timing_profile prof;
    if (c->timing && !cli_timing_profile(c, &prof)) {
        o.timing = 1;
        o.timing_profile = &prof;
    }
    if (dlasim_create(&o, &dev, err, sizeof(err))) {
        fprintf(stderr, "dlasim: cannot create the device: %s\n", err);
        return NULL;
    }
    return dev;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* `dlasim COMMAND --help`: the usage text covers every command */
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
    }
    if (!strcmp(argv[1], "trace")) {
        return cmd_trace(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "info")) {
        return cmd_info(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "compile")) {
        return cmd_compile(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "run")) {
        return cmd_run(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "loadable")) {
        return cmd_loadable(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "rk")) {
        return cmd_rk(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "estimate")) {
        return cmd_estimate(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "teflon")) {
        return cmd_teflon(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "merge")) {
        return cmd_merge(argc - 1, argv + 1);
    }
    if (!strcmp(argv[1], "each")) {
        return cmd_each(argc - 1, argv + 1);
    }
    fprintf(stderr, "dlasim: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
