/* Shared pieces of the dlasim command-line tool. */
#ifndef DLASIM_TOOLS_CLI_H
#define DLASIM_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "dlasim/dlasim.h"

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
};

/* Host memory the CLI lets device memory take unless --max-mem says otherwise. */
#define CLI_DEFAULT_MAX_MEM ((uint64_t)8 << 30)

/* dlasim_options.max_host_mem for these options. */
uint64_t cli_max_mem(const struct cli_common *c);

/* Consume a common option at argv[*i]; 1 = consumed, 0 = not common, -1 = error. */
int cli_common_option(struct cli_common *c, int argc, char **argv, int *i);
/* Create a device from the common options; prints the error itself. */
struct dlasim_dev *cli_create_device(const struct cli_common *c);

int cmd_trace(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
