/* Shared pieces of the dlasim command-line tool. */
#ifndef DLASIM_TOOLS_CLI_H
#define DLASIM_TOOLS_CLI_H

#include <stddef.h>

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
};

/* Consume a common option at argv[*i]; 1 = consumed, 0 = not common, -1 = error. */
int cli_common_option(struct cli_common *c, int argc, char **argv, int *i);
/* Create a device from the common options; prints the error itself. */
struct dlasim_dev *cli_create_device(const struct cli_common *c);

int cmd_trace(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_loadable(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);

#endif
