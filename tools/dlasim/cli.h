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
    int overlap;                        /* --overlap / --no-overlap (dlasim_options.overlap;
                                           on by default where the runtime drives it) */
    int threads_always;                 /* --threads-always (dlasim_options.threads_always) */
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
/* The same with at most max bytes of data (0: the 4 GiB default): a regular
 * file's size and a gzip file's stated size (ISIZE) are checked before
 * anything is read or inflated, and inflation stops at max; FIFOs, devices
 * and directories are refused without blocking. */
int cli_read_file_max(const char *path, uint64_t max, uint8_t **buf, size_t *len);

/* Strict option parsing (cli_parse.c): the whole value, in range, or a
 * printed "dlasim: OPT takes ..., got 'VALUE'" and -1.  Integers are decimal
 * or 0x hex, never signed. */
int cli_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out);
int cli_parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max, uint32_t *out);
int cli_parse_count(const char *opt, const char *s, size_t max, size_t *out);
/* A finite number in [min, max] (NaN, Inf, junk, over/underflow refused). */
int cli_parse_double(const char *opt, const char *s, double min, double max, double *out);
int cli_parse_float(const char *opt, const char *s, double min, double max, float *out);
/* A byte count with an optional K/M/G/T (binary) suffix. */
int cli_parse_size(const char *opt, const char *s, uint64_t *out);
/* "ADDR:REST" with a hex address below 2^32; *rest points after the ':'. */
int cli_parse_addr_prefix(const char *opt, const char *s, uint32_t *addr, const char **rest);
/* --log LIST: comma-separated reg, exec, guest, unimp; anything else refused. */
int cli_parse_log(const char *opt, const char *s, unsigned *mask);

/* Checked output (cli_file.c): the whole buffer written and the file closed
 * without error, else "dlasim: PATH: cannot write: why" and -1. */
int cli_write_file(const char *path, const void *buf, size_t len);
/* fclose that reports a failed write (ferror or fclose) as above; -1 then. */
int cli_close_output(FILE *f, const char *path);

/* An output folder option (--record-trace, --output): refused up front when
 * the path exists and is not a folder (created later when missing). */
int cli_check_output_dir(const char *opt, const char *path);

int cmd_trace(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_rk(int argc, char **argv);
/* `dlasim info` of an RK3588 device (rk.c). */
int rk_info(struct dlasim_dev *dev, FILE *out);
int cmd_loadable(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
/* dlasim teflon (teflon.c): a TFLite model through Mesa's Teflon on the RK3588. */
int cmd_teflon(int argc, char **argv);
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
