/* Shared pieces of the dlasim command-line tool. */
#ifndef DLASIM_TOOLS_CLI_H
#define DLASIM_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dlasim/dlasim.h"
#include "dlasim/timing.h"

#define CLI_MAX_SETS 64

/* Options every subcommand takes. */
struct cli_common {
    const char *config;                 /* --config NAME */
    const char *sets[CLI_MAX_SETS];     /* --set PARAM=VALUE */
    size_t nsets;
    unsigned threads;                   /* --threads N (0 = all cores) */
    int strict;                         /* --strict */
    unsigned log_mask;                  /* --log CATEGORIES */
    int max_mem_given;                  /* --max-mem SIZE seen (else CLI_DEFAULT_MAX_MEM) */
    uint64_t max_mem;
    uint64_t max_work;                  /* --max-work N (default 0: no limit) */
    int timing;                         /* --timing: cycle model on */
    const char *mem_profile;            /* --mem-profile NAME (rtl-tb, dram) */
    double mem_gbps, mem_latency_ns;    /* --mem-bw GB/s, --mem-latency ns (a DRAM profile) */
    double clock_mhz;                   /* --clock-mhz (default 1000) */
};

/* Host memory the CLI lets device memory take unless --max-mem says otherwise. */
#define CLI_DEFAULT_MAX_MEM ((uint64_t)8 << 30)

/* dlasim_options.max_host_mem for these options. */
uint64_t cli_max_mem(const struct cli_common *c);

/* The timing profile the common options name (only meaningful with timing). */
int cli_timing_profile(const struct cli_common *c, struct dlasim_timing_profile *p);

/* Consume a common option at argv[*i]; 1 = consumed, 0 = not common, -1 = error. */
int cli_common_option(struct cli_common *c, int argc, char **argv, int *i);
/* Create a device from the common options; prints the error itself. */
struct dlasim_dev *cli_create_device(const struct cli_common *c);

/* The whole of file `path` (gunzipped when it is gzip) in a malloc'd *buf of
 * *len bytes; -1 after printing "dlasim: PATH: why" (cli_file.c). */
int cli_read_file(const char *path, uint8_t **buf, size_t *len);

int cmd_trace(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_rk(int argc, char **argv);
/* `dlasim info` of an RK3588 device (rk.c). */
int rk_info(struct dlasim_dev *dev, FILE *out);
int cmd_loadable(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
/* `dlasim merge SHARD.jsonl...`: the shards of one --shard I/N job (merge.c). */
int cmd_merge(int argc, char **argv);
/* `dlasim each LIST -- COMMAND {}`: COMMAND per line of LIST (each.c). */
int cmd_each(int argc, char **argv);

/* Timing reports (timing_report.c). */
/* Per-layer table (cycles, units, MAC utilisation, bytes, bound) to f. */
void timing_print_layers(struct dlasim_dev *dev, FILE *f, double clock_mhz);
/* One line for a timed network run of `inferences` inferences. */
void timing_print_network(struct dlasim_dev *dev, FILE *f, double clock_mhz, uint64_t inferences);
/* {"cycles_to_last_intr": N, "layers": [...]}; returns 0 or -1 (message printed). */
int timing_write_json(struct dlasim_dev *dev, const char *path, const char *name,
                      uint64_t cycles_to_last_intr, double clock_mhz);
/* Chrome/Perfetto trace-event JSON: one track per unit, a slice per layer,
 * bandwidth counters; returns 0 or -1 (message printed). */
int timing_write_timeline(struct dlasim_dev *dev, const char *path, const char *name,
                          double clock_mhz);
/* PNG of per-layer cycles and MAC utilisation drawn by python3-matplotlib
 * from the JSON file; returns 0 or -1 (message printed). */
int timing_plot(const char *json_path, const char *png_path);

#endif
